// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/waitvar commands that create, read and change a variable (CREATE,
 * DESTROY, GET, SET, ADD, DEC_AND_WAKE, CMPXCHG), the per-file limit, and
 * the errnos every command shares: unknown commands, bad pointers, unknown
 * ids, reserved fields and flags.
 */
#include <sys/mman.h>

#include "waitvar_test.h"

/* The kernel's harness is written for -Wall; it has unused parameters. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

FIXTURE(update) {
	int fd;
	struct saved_params params;
};

FIXTURE_SETUP(update)
{
	self->fd = open("/dev/waitvar", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open /dev/waitvar: %s", strerror(errno));
}

FIXTURE_TEARDOWN(update)
{
	close(self->fd);
	params_restore(&self->params);
}

TEST_F(update, create_then_get_returns_initial_value)
{
	uint64_t value = 0;
	uint32_t id = 0;

	ASSERT_EQ(0, waitvar_create(self->fd, 0x123456789abcdef0ULL, 0, &id));
	ASSERT_NE(0U, id);
	ASSERT_EQ(0, waitvar_get(self->fd, id, &value));
	ASSERT_EQ(0x123456789abcdef0ULL, value);
}

TEST_F(update, set_is_seen_by_get)
{
	uint64_t value = 0;
	uint32_t id = 0;

	ASSERT_EQ(0, waitvar_create(self->fd, 1, 0, &id));
	ASSERT_EQ(0, waitvar_set(self->fd, id, UINT64_MAX));
	ASSERT_EQ(0, waitvar_get(self->fd, id, &value));
	ASSERT_EQ(UINT64_MAX, value);
}

/* STATS' wakes: counted by the updating call itself, so exact on its return. */
static uint64_t wakes_of(int fd, uint32_t id)
{
	struct waitvar_stats st = {};

	return waitvar_stats(fd, id, &st) ? UINT64_MAX : st.wakes;
}

TEST_F(update, add_returns_the_new_value_and_wakes_only_when_asked)
{
	struct waiter w = { .fd = self->fd, .op = WAITVAR_OP_EQ, .operand = 5 };
	uint64_t value = 0;

	ASSERT_EQ(0, waitvar_create(self->fd, 2, 0, &w.id));
	ASSERT_EQ(0, waiter_start(&w));
	ASSERT_TRUE(waiter_sleeps(&w));
	/* The condition now holds, but nobody woke the waiter. */
	ASSERT_EQ(0, waitvar_add(self->fd, w.id, 3, 0, &value));
	EXPECT_EQ(5U, value);
	EXPECT_EQ(0U, wakes_of(self->fd, w.id));
	ASSERT_TRUE(waiter_sleeps(&w));
	ASSERT_EQ(0, waitvar_add(self->fd, w.id, -1, 0, &value));
	EXPECT_EQ(4U, value);
	EXPECT_EQ(0U, wakes_of(self->fd, w.id));
	ASSERT_EQ(0, waitvar_add(self->fd, w.id, 1, WAITVAR_ADD_WAKE, &value));
	EXPECT_EQ(5U, value);
	EXPECT_EQ(1U, wakes_of(self->fd, w.id));
	ASSERT_EQ(0, pthread_join(w.thread, NULL));
	EXPECT_EQ(0, w.ret);
	EXPECT_EQ(5U, w.seen);
}

TEST_F(update, dec_and_wake_wakes_only_at_zero)
{
	struct waiter w = { .fd = self->fd, .op = WAITVAR_OP_LE, .operand = 1 };
	uint64_t value = 0;

	ASSERT_EQ(0, waitvar_create(self->fd, 3, 0, &w.id));
	ASSERT_EQ(0, waiter_start(&w));
	ASSERT_TRUE(waiter_sleeps(&w));
	ASSERT_EQ(0, waitvar_dec_and_wake(self->fd, w.id, &value));
	EXPECT_EQ(2U, value);
	/* 1 satisfies the waiter, but only reaching 0 wakes. */
	ASSERT_EQ(0, waitvar_dec_and_wake(self->fd, w.id, &value));
	EXPECT_EQ(1U, value);
	EXPECT_EQ(0U, wakes_of(self->fd, w.id));
	ASSERT_TRUE(waiter_sleeps(&w));
	ASSERT_EQ(0, waitvar_dec_and_wake(self->fd, w.id, &value));
	EXPECT_EQ(0U, value);
	EXPECT_EQ(1U, wakes_of(self->fd, w.id));
	ASSERT_EQ(0, pthread_join(w.thread, NULL));
	EXPECT_EQ(0, w.ret);
	EXPECT_EQ(0U, w.seen);
}

TEST_F(update, add_and_dec_wrap_modulo_2_64_and_a_wrap_is_not_zero)
{
	uint64_t value = 0;
	uint32_t id = 0;

	ASSERT_EQ(0, waitvar_create(self->fd, UINT64_MAX - 1, 0, &id));
	ASSERT_EQ(0, waitvar_add(self->fd, id, 3, 0, &value));
	EXPECT_EQ(1U, value);
	ASSERT_EQ(0, waitvar_add(self->fd, id, -2, 0, &value));
	EXPECT_EQ(UINT64_MAX, value);
	ASSERT_EQ(0, waitvar_add(self->fd, id, INT64_MIN, 0, &value));
	EXPECT_EQ((uint64_t)INT64_MAX, value);
	/* DEC_AND_WAKE of 0 wraps to 2^64 - 1, which is not 0: no wake. */
	ASSERT_EQ(0, waitvar_set(self->fd, id, 0));
	ASSERT_EQ(1U, wakes_of(self->fd, id));
	ASSERT_EQ(0, waitvar_dec_and_wake(self->fd, id, &value));
	EXPECT_EQ(UINT64_MAX, value);
	EXPECT_EQ(1U, wakes_of(self->fd, id));
	/* Nor is 2^63, the most negative value seen as signed. */
	ASSERT_EQ(0, waitvar_set(self->fd, id, (uint64_t)INT64_MIN + 1));
	ASSERT_EQ(0, waitvar_dec_and_wake(self->fd, id, &value));
	EXPECT_EQ((uint64_t)INT64_MIN, value);
	EXPECT_EQ(2U, wakes_of(self->fd, id));
}

TEST_F(update, cmpxchg_returns_the_previous_value_and_wakes_on_success)
{
	struct waiter w = { .fd = self->fd, .op = WAITVAR_OP_EQ, .operand = 4 };
	uint64_t prev = 0, value = 0;

	ASSERT_EQ(0, waitvar_create(self->fd, 1, 0, &w.id));
	ASSERT_EQ(0, waiter_start(&w));
	ASSERT_TRUE(waiter_sleeps(&w));
	ASSERT_EQ(0, waitvar_cmpxchg(self->fd, w.id, 2, 4, &prev));
	EXPECT_EQ(1U, prev);
	ASSERT_EQ(0, waitvar_get(self->fd, w.id, &value));
	EXPECT_EQ(1U, value);
	/* It did not exchange: no wake was issued. */
	EXPECT_EQ(0U, wakes_of(self->fd, w.id));
	ASSERT_TRUE(waiter_sleeps(&w));
	ASSERT_EQ(0, waitvar_cmpxchg(self->fd, w.id, 1, 4, &prev));
	EXPECT_EQ(1U, prev);
	EXPECT_EQ(1U, wakes_of(self->fd, w.id));
	ASSERT_EQ(0, pthread_join(w.thread, NULL));
	EXPECT_EQ(0, w.ret);
	EXPECT_EQ(4U, w.seen);
}

TEST_F(update, updates_with_bad_flags_return_einval_and_change_nothing)
{
	struct waitvar_add add = { .flags = 1U << 31, .delta = 1 };
	struct waitvar_value dec = { .flags = 1 };
	struct waitvar_cmpxchg cx = { .flags = 1, .expected = 7, .desired = 8 };
	uint64_t value = 0;
	uint32_t id = 0, gone = 0;

	ASSERT_EQ(0, waitvar_create(self->fd, 7, 0, &id));
	/* An id the kernel gave and took back: no variable has it. */
	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &gone));
	ASSERT_EQ(0, waitvar_destroy(self->fd, gone));
	add.id = dec.id = cx.id = id;
	EXPECT_EQ(-1, ioctl(self->fd, WAITVAR_IOC_ADD, &add));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(self->fd, WAITVAR_IOC_DEC_AND_WAKE, &dec));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(self->fd, WAITVAR_IOC_CMPXCHG, &cx));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, waitvar_get(self->fd, id, &value));
	EXPECT_EQ(7U, value);
	EXPECT_EQ(-ENOENT, waitvar_add(self->fd, gone, 1, 0, &value));
	EXPECT_EQ(-ENOENT, waitvar_dec_and_wake(self->fd, gone, &value));
	EXPECT_EQ(-ENOENT, waitvar_cmpxchg(self->fd, gone, 0, 1, &value));
}

TEST_F(update, variables_are_private_to_the_open_file)
{
	uint64_t value = 0;
	uint32_t id = 0;
	int other;

	ASSERT_EQ(0, waitvar_create(self->fd, 4, 0, &id));
	other = open("/dev/waitvar", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, other);
	EXPECT_EQ(-ENOENT, waitvar_get(other, id, &value));
	EXPECT_EQ(-ENOENT, waitvar_set(other, id, 5));
	close(other);
	ASSERT_EQ(0, waitvar_get(self->fd, id, &value));
	EXPECT_EQ(4U, value);
}

TEST_F(update, per_file_limit_returns_enospc)
{
	unsigned int limit = 0, i;
	uint32_t id = 0, last = 0;

	ASSERT_EQ(0, get_param("max_vars_per_file", &limit));
	if (limit > 100000)
		SKIP(return, "max_vars_per_file=%u is too large to fill", limit);

	for (i = 0; i < limit; i++)
		ASSERT_EQ(0, waitvar_create(self->fd, i, 0, &last)) TH_LOG("variable %u", i);
	ASSERT_EQ(-ENOSPC, waitvar_create(self->fd, 0, 0, &id));
	/* Destroying one makes room for one. */
	ASSERT_EQ(0, waitvar_destroy(self->fd, last));
	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &id));
	ASSERT_EQ(-ENOSPC, waitvar_create(self->fd, 0, 0, &id));
}

/*
 * Ids are handed out cyclically: a destroyed variable's id names nothing
 * (ENOENT) when the next variable is made, and comes back only after
 * every other id up to max_vars_per_file has been handed out.
 */
TEST_F(update, a_destroyed_id_comes_back_only_after_every_other)
{
	uint32_t first = 0, id = 0, seen[4];
	uint64_t value = 0;
	int fd;

	ASSERT_EQ(0, waitvar_create(self->fd, 1, 0, &first));
	ASSERT_EQ(0, waitvar_destroy(self->fd, first));
	ASSERT_EQ(0, waitvar_create(self->fd, 2, 0, &id));
	EXPECT_NE(first, id) TH_LOG("id %u was handed out again at once", first);
	EXPECT_EQ(-ENOENT, waitvar_get(self->fd, first, &value));

	/* A file of its own, so that no other id is held: 4 ids, then the first again. */
	ASSERT_EQ(0, param_override(&self->params, "max_vars_per_file", 4));
	fd = open("/dev/waitvar", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	for (int i = 0; i < 4; i++) {
		ASSERT_EQ(0, waitvar_create(fd, i, 0, &seen[i]));
		ASSERT_EQ(0, waitvar_destroy(fd, seen[i]));
		for (int j = 0; j < i; j++)
			EXPECT_NE(seen[j], seen[i]) TH_LOG("create %d reused id %u", i, seen[i]);
	}
	ASSERT_EQ(0, waitvar_create(fd, 9, 0, &id));
	EXPECT_EQ(seen[0], id) TH_LOG("with 4 ids, the fifth create took %u, not %u", id,
				      seen[0]);
	close(fd);
}

TEST_F(update, unknown_command_returns_enotty)
{
	struct waitvar_create arg = {};
	char small[4] = {};

	EXPECT_EQ(-1, ioctl(self->fd, _IO(WAITVAR_IOC_MAGIC, 0x7f)));
	EXPECT_EQ(ENOTTY, errno);
	/* A known number with the wrong size is another command. */
	EXPECT_EQ(-1, ioctl(self->fd, _IOWR(WAITVAR_IOC_MAGIC, 0x00, char[4]), small));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(self->fd, _IOWR('x', 0x00, struct waitvar_create), &arg));
	EXPECT_EQ(ENOTTY, errno);
}

TEST_F(update, bad_pointer_returns_efault)
{
	static const unsigned long cmds[] = {
		WAITVAR_IOC_CREATE, WAITVAR_IOC_DESTROY, WAITVAR_IOC_GET,
		WAITVAR_IOC_SET, WAITVAR_IOC_WAIT, WAITVAR_IOC_WAKE,
		WAITVAR_IOC_WAKE_NR, WAITVAR_IOC_ADD, WAITVAR_IOC_DEC_AND_WAKE,
		WAITVAR_IOC_CMPXCHG, WAITVAR_IOC_WAITV, WAITVAR_IOC_WATCH,
		WAITVAR_IOC_STATS, WAITVAR_IOC_NAMED_CREATE, WAITVAR_IOC_NAMED_OPEN,
		WAITVAR_IOC_NAMED_REMOVE, WAITVAR_IOC_LIST, WAITVAR_IOC_FEATURES,
	};
	long page = sysconf(_SC_PAGESIZE);
	struct waitvar_value *ro;
	uint32_t id = 0;
	size_t i;

	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		EXPECT_EQ(-1, ioctl(self->fd, cmds[i], NULL));
		EXPECT_EQ(EFAULT, errno) TH_LOG("command %#lx", cmds[i]);
	}

	/* Readable but not writable: GET cannot return its result. */
	ASSERT_EQ(0, waitvar_create(self->fd, 9, 0, &id));
	ro = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(ro != MAP_FAILED);
	ro->id = id;
	ASSERT_EQ(0, mprotect(ro, page, PROT_READ));
	EXPECT_EQ(-1, ioctl(self->fd, WAITVAR_IOC_GET, ro));
	EXPECT_EQ(EFAULT, errno);
	munmap(ro, page);
}

/*
 * A command that changes, wakes or waits and cannot write its result back
 * (its argument in a read-only page) fails with EFAULT before it acts: the
 * value is unchanged, a sleeping waiter was not woken, STATS counted no
 * wake and no wait.  Retried from a writable page, each then acts once.
 */
TEST_F(update, efault_from_an_update_wake_or_wait_means_nothing_happened)
{
	struct waiter w = { .fd = self->fd, .op = WAITVAR_OP_GE, .operand = 100 };
	struct waitvar_waitv_entry e = { .op = WAITVAR_OP_EQ, .operand = 5 };
	struct waitvar_add add = { .flags = WAITVAR_ADD_WAKE, .delta = 3 };
	struct waitvar_value dec = {};
	struct waitvar_cmpxchg cx = { .expected = 5, .desired = 9 };
	struct waitvar_wake_nr wnr = { .nr = 0, .flags = WAITVAR_WAKE_FILTER };
	struct waitvar_wait wait = { .op = WAITVAR_OP_EQ, .operand = 5 };
	struct waitvar_waitv wv = { .count = 1, .entries = (uintptr_t)&e };
	struct waitvar_stats st;
	uint64_t value = 0;

	ASSERT_EQ(0, waitvar_create(self->fd, 5, 0, &w.id));
	add.id = dec.id = cx.id = wnr.id = wait.id = e.id = w.id;
	ASSERT_EQ(0, waiter_start(&w));
	ASSERT_TRUE(waiter_sleeps(&w));

	EXPECT_EQ(-EFAULT, ioctl_ro(self->fd, WAITVAR_IOC_ADD, &add, sizeof(add)));
	EXPECT_EQ(-EFAULT, ioctl_ro(self->fd, WAITVAR_IOC_DEC_AND_WAKE, &dec, sizeof(dec)));
	EXPECT_EQ(-EFAULT, ioctl_ro(self->fd, WAITVAR_IOC_CMPXCHG, &cx, sizeof(cx)));
	ASSERT_EQ(0, waitvar_get(self->fd, w.id, &value));
	EXPECT_EQ(5U, value) TH_LOG("an update that returned EFAULT was applied");
	/* The waiter's condition holds for none of these; make it hold. */
	ASSERT_EQ(0, waitvar_add(self->fd, w.id, 100, 0, &value));
	EXPECT_EQ(-EFAULT, ioctl_ro(self->fd, WAITVAR_IOC_WAKE_NR, &wnr, sizeof(wnr)));
	wait.operand = wait.operand + 100;
	e.operand = e.operand + 100;
	EXPECT_EQ(-EFAULT, ioctl_ro(self->fd, WAITVAR_IOC_WAIT, &wait, sizeof(wait)));
	EXPECT_EQ(-EFAULT, ioctl_ro(self->fd, WAITVAR_IOC_WAITV, &wv, sizeof(wv)));
	ASSERT_EQ(0, waitvar_stats(self->fd, w.id, &st));
	/* No wake: the ADD of 100 asked for none. */
	EXPECT_EQ(0U, st.wakes) TH_LOG("a wake that returned EFAULT woke");
	EXPECT_EQ(1U, st.waits) TH_LOG("a wait that returned EFAULT ran");
	EXPECT_EQ(0, atomic_load(&w.done));

	/* From a writable page each acts once. */
	ASSERT_EQ(0, ioctl(self->fd, WAITVAR_IOC_WAKE_NR, &wnr));
	EXPECT_EQ(1U, wnr.woken);
	ASSERT_EQ(0, pthread_join(w.thread, NULL));
	EXPECT_EQ(0, w.ret);
	ASSERT_EQ(0, ioctl(self->fd, WAITVAR_IOC_ADD, &add));
	EXPECT_EQ(108U, add.value);
}

TEST_F(update, unknown_id_returns_enoent)
{
	static const uint32_t ids[] = { 0, 12345, UINT32_MAX };
	struct waitvar_watch watch;
	struct waitvar_stats st;
	uint64_t value = 0;
	size_t i;

	for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		/* Afresh each time: @fd is out only and must be 0 going in. */
		watch = (struct waitvar_watch){ .id = ids[i] };
		EXPECT_EQ(-1, ioctl(self->fd, WAITVAR_IOC_WATCH, &watch));
		EXPECT_EQ(ENOENT, errno);
		EXPECT_EQ(-ENOENT, waitvar_stats(self->fd, ids[i], &st));
		EXPECT_EQ(-ENOENT, waitvar_get(self->fd, ids[i], &value));
		EXPECT_EQ(-ENOENT, waitvar_set(self->fd, ids[i], 1));
		EXPECT_EQ(-ENOENT, waitvar_wait(self->fd, ids[i], WAITVAR_OP_EQ, 0, 0,
						WAITVAR_WAIT_TIMEOUT, 0, NULL));
		EXPECT_EQ(-ENOENT, waitvar_wake(self->fd, ids[i]));
		EXPECT_EQ(-ENOENT, waitvar_wake_nr(self->fd, ids[i], 1, 0));
		EXPECT_EQ(-ENOENT, waitvar_destroy(self->fd, ids[i]));
	}
}

TEST_F(update, nonzero_reserved_or_flags_return_einval_and_change_nothing)
{
	struct waitvar_create create = { .value = 1, .flags = 1U << 31 };
	struct waitvar_value set = { .value = 2, .flags = 1 };
	struct waitvar_wait wait = { .op = WAITVAR_OP_EQ, .operand = 1 };
	struct waitvar_id id_arg = { .flags = 1 };
	long vars = device_vars();
	uint64_t value = 0;
	uint32_t id = 0;

	ASSERT_LE(0, vars) TH_LOG("cannot read %s", SUMMARY_PATH);
	EXPECT_EQ(-1, ioctl(self->fd, WAITVAR_IOC_CREATE, &create));
	EXPECT_EQ(EINVAL, errno);
	/* One lock, not two. */
	create.flags = WAITVAR_CREATE_SPINLOCK | WAITVAR_CREATE_MUTEX;
	EXPECT_EQ(-1, ioctl(self->fd, WAITVAR_IOC_CREATE, &create));
	EXPECT_EQ(EINVAL, errno);
	create.flags = 0;
	/* Each reserved word on its own. */
	for (size_t i = 0; i < 2; i++) {
		create.reserved[i] = 1;
		EXPECT_EQ(-1, ioctl(self->fd, WAITVAR_IOC_CREATE, &create));
		EXPECT_EQ(EINVAL, errno);
		create.reserved[i] = 0;
	}

	/* Nothing was created: the device holds as many variables as before. */
	EXPECT_EQ(vars, device_vars());
	ASSERT_EQ(0, waitvar_create(self->fd, 1, 0, &id));
	EXPECT_EQ(vars + 1, device_vars());

	set.id = id;
	EXPECT_EQ(-1, ioctl(self->fd, WAITVAR_IOC_SET, &set));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, waitvar_get(self->fd, id, &value));
	EXPECT_EQ(1U, value);

	id_arg.id = id;
	EXPECT_EQ(-1, ioctl(self->fd, WAITVAR_IOC_DESTROY, &id_arg));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(self->fd, WAITVAR_IOC_WAKE, &id_arg));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, waitvar_get(self->fd, id, &value));

	wait.id = id;
	wait.mode = WAITVAR_MODE_COUNT;
	EXPECT_EQ(-1, ioctl(self->fd, WAITVAR_IOC_WAIT, &wait));
	EXPECT_EQ(EINVAL, errno);
	wait.mode = 0;
	wait.flags = 1U << 31;
	EXPECT_EQ(-1, ioctl(self->fd, WAITVAR_IOC_WAIT, &wait));
	EXPECT_EQ(EINVAL, errno);
	wait.flags = 0;
	wait.op = WAITVAR_OP_COUNT;
	EXPECT_EQ(-1, ioctl(self->fd, WAITVAR_IOC_WAIT, &wait));
	EXPECT_EQ(EINVAL, errno);
}

TEST_HARNESS_MAIN
