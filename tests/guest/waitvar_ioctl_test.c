// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/waitvar ioctl tests: each case drives one behaviour of the device
 * from userspace threads and checks what the kernel returned.
 */
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "waitvar_test.h"

/* The kernel's harness is written for -Wall; it has unused parameters. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

FIXTURE(waitvar) {
	int fd;
};

FIXTURE_SETUP(waitvar)
{
	self->fd = open("/dev/waitvar", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open /dev/waitvar: %s", strerror(errno));
}

FIXTURE_TEARDOWN(waitvar)
{
	close(self->fd);
}

TEST_F(waitvar, create_then_get_returns_initial_value)
{
	uint64_t value = 0;
	uint32_t id = 0;

	ASSERT_EQ(0, wv_create(self->fd, 0x123456789abcdef0ULL, &id));
	ASSERT_NE(0U, id);
	ASSERT_EQ(0, wv_get(self->fd, id, &value));
	ASSERT_EQ(0x123456789abcdef0ULL, value);
}

TEST_F(waitvar, set_is_seen_by_get)
{
	uint64_t value = 0;
	uint32_t id = 0;

	ASSERT_EQ(0, wv_create(self->fd, 1, &id));
	ASSERT_EQ(0, wv_set(self->fd, id, UINT64_MAX));
	ASSERT_EQ(0, wv_get(self->fd, id, &value));
	ASSERT_EQ(UINT64_MAX, value);
}

TEST_F(waitvar, wait_returns_at_once_when_condition_holds)
{
	uint64_t seen = 0;
	uint32_t id = 0;

	ASSERT_EQ(0, wv_create(self->fd, 5, &id));
	ASSERT_EQ(0, wv_wait(self->fd, id, WAITVAR_OP_EQ, 5, NO_TIMEOUT, &seen));
	ASSERT_EQ(5U, seen);
}

TEST_F(waitvar, every_op_compares_as_documented)
{
	static const struct {
		uint32_t op;
		uint64_t value, operand;
		bool holds;
	} cases[] = {
		{ WAITVAR_OP_EQ, 7, 7, true },  { WAITVAR_OP_EQ, 7, 8, false },
		{ WAITVAR_OP_NE, 7, 8, true },  { WAITVAR_OP_NE, 7, 7, false },
		{ WAITVAR_OP_LT, 7, 8, true },  { WAITVAR_OP_LT, 8, 8, false },
		{ WAITVAR_OP_LE, 8, 8, true },  { WAITVAR_OP_LE, 9, 8, false },
		{ WAITVAR_OP_GT, 9, 8, true },  { WAITVAR_OP_GT, 8, 8, false },
		{ WAITVAR_OP_GE, 8, 8, true },  { WAITVAR_OP_GE, 7, 8, false },
		/* unsigned: all ones is the largest value */
		{ WAITVAR_OP_GT, UINT64_MAX, 1, true },
		{ WAITVAR_OP_LT, UINT64_MAX, 1, false },
		/* signed: all ones is -1 */
		{ WAITVAR_OP_LT_S, UINT64_MAX, 1, true },
		{ WAITVAR_OP_LT_S, 1, UINT64_MAX, false },
		{ WAITVAR_OP_LE_S, UINT64_MAX, UINT64_MAX, true },
		{ WAITVAR_OP_LE_S, 0, UINT64_MAX, false },
		{ WAITVAR_OP_GT_S, 0, UINT64_MAX, true },
		{ WAITVAR_OP_GT_S, UINT64_MAX, 0, false },
		{ WAITVAR_OP_GE_S, 5, 5, true },
		{ WAITVAR_OP_GE_S, UINT64_MAX, 0, false },
		/* bit masks */
		{ WAITVAR_OP_ANY, 0x5, 0x6, true },
		{ WAITVAR_OP_ANY, 0x5, 0xa, false },
		{ WAITVAR_OP_ALL, 0x7, 0x6, true },
		{ WAITVAR_OP_ALL, 0x5, 0x6, false },
		{ WAITVAR_OP_NONE, 0x5, 0xa, true },
		{ WAITVAR_OP_NONE, 0x5, 0x4, false },
	};
	uint32_t id = 0;
	size_t i;

	ASSERT_EQ(0, wv_create(self->fd, 0, &id));
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ASSERT_EQ(0, wv_set(self->fd, id, cases[i].value));
		/* timeout 0: a poll of the condition */
		EXPECT_EQ(cases[i].holds ? 0 : -ETIMEDOUT,
			  wv_wait(self->fd, id, cases[i].op, cases[i].operand, 0, NULL))
			TH_LOG("case %zu: op %u value %llu operand %llu", i, cases[i].op,
			       (unsigned long long)cases[i].value,
			       (unsigned long long)cases[i].operand);
	}
}

TEST_F(waitvar, waiter_sleeps_until_set_makes_condition_true)
{
	struct waiter w = { .fd = self->fd, .op = WAITVAR_OP_EQ, .operand = 1,
			    .timeout_ns = NO_TIMEOUT };

	ASSERT_EQ(0, wv_create(self->fd, 0, &w.id));
	ASSERT_EQ(0, waiter_start(&w));
	ASSERT_TRUE(waiter_sleeps(&w));

	/* A change that leaves the condition false must not end the wait. */
	ASSERT_EQ(0, wv_set(self->fd, w.id, 2));
	ASSERT_TRUE(waiter_sleeps(&w));
	ASSERT_EQ(0, atomic_load(&w.done));

	ASSERT_EQ(0, wv_set(self->fd, w.id, 1));
	ASSERT_EQ(0, pthread_join(w.thread, NULL));
	ASSERT_EQ(0, w.ret);
	ASSERT_EQ(1U, w.seen);
}

TEST_F(waitvar, wake_without_change_leaves_waiter_asleep)
{
	struct waiter w = { .fd = self->fd, .op = WAITVAR_OP_NE, .operand = 0,
			    .timeout_ns = NO_TIMEOUT };

	ASSERT_EQ(0, wv_create(self->fd, 0, &w.id));
	ASSERT_EQ(0, waiter_start(&w));
	ASSERT_TRUE(waiter_sleeps(&w));
	ASSERT_EQ(0, wv_id_cmd(self->fd, WAITVAR_IOC_WAKE, w.id));
	ASSERT_TRUE(waiter_sleeps(&w));
	ASSERT_EQ(0, atomic_load(&w.done));

	ASSERT_EQ(0, wv_set(self->fd, w.id, 3));
	ASSERT_EQ(0, pthread_join(w.thread, NULL));
	ASSERT_EQ(0, w.ret);
	ASSERT_EQ(3U, w.seen);
}

TEST_F(waitvar, timeout_returns_etimedout_not_before_it_passes)
{
	const long long timeout = 200 * NSEC_PER_MSEC;
	long long start, elapsed;
	uint32_t id = 0;

	ASSERT_EQ(0, wv_create(self->fd, 0, &id));
	start = now_ns();
	ASSERT_EQ(-ETIMEDOUT, wv_wait(self->fd, id, WAITVAR_OP_EQ, 1, timeout, NULL));
	elapsed = now_ns() - start;
	EXPECT_GE(elapsed, timeout);
	/* Generous: emulated guests can be slow, but not by seconds. */
	EXPECT_LT(elapsed, timeout + 5000 * NSEC_PER_MSEC);
}

TEST_F(waitvar, timed_wait_ends_early_when_condition_becomes_true)
{
	struct waiter w = { .fd = self->fd, .op = WAITVAR_OP_GE, .operand = 10,
			    .timeout_ns = 60000 * NSEC_PER_MSEC };

	ASSERT_EQ(0, wv_create(self->fd, 0, &w.id));
	ASSERT_EQ(0, waiter_start(&w));
	ASSERT_TRUE(waiter_sleeps(&w));
	ASSERT_EQ(0, wv_set(self->fd, w.id, 11));
	ASSERT_EQ(0, pthread_join(w.thread, NULL));
	ASSERT_EQ(0, w.ret);
	ASSERT_EQ(11U, w.seen);
}

static void check_signal_interrupts(struct __test_metadata *_metadata, int fd,
				    long long timeout_ns)
{
	struct waiter w = { .fd = fd, .op = WAITVAR_OP_EQ, .operand = 1,
			    .timeout_ns = timeout_ns };
	struct sigaction sa = { .sa_handler = on_signal };	/* no SA_RESTART */
	uint64_t value = 1;

	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	ASSERT_EQ(0, wv_create(fd, 0, &w.id));
	ASSERT_EQ(0, waiter_start(&w));
	ASSERT_TRUE(waiter_sleeps(&w));
	ASSERT_EQ(0, pthread_kill(w.thread, SIGUSR1));
	ASSERT_EQ(0, pthread_join(w.thread, NULL));
	ASSERT_EQ(-EINTR, w.ret);
	ASSERT_EQ(0, wv_get(fd, w.id, &value));
	ASSERT_EQ(0U, value);
}

TEST_F(waitvar, signal_interrupts_untimed_wait_with_eintr)
{
	check_signal_interrupts(_metadata, self->fd, NO_TIMEOUT);
}

TEST_F(waitvar, signal_interrupts_timed_wait_with_eintr)
{
	check_signal_interrupts(_metadata, self->fd, 60000 * NSEC_PER_MSEC);
}

TEST_F(waitvar, destroy_wakes_waiter_with_eidrm)
{
	struct waiter w = { .fd = self->fd, .op = WAITVAR_OP_EQ, .operand = 1,
			    .timeout_ns = NO_TIMEOUT };
	uint64_t value = 0;

	ASSERT_EQ(0, wv_create(self->fd, 0, &w.id));
	ASSERT_EQ(0, waiter_start(&w));
	ASSERT_TRUE(waiter_sleeps(&w));
	ASSERT_EQ(0, wv_id_cmd(self->fd, WAITVAR_IOC_DESTROY, w.id));
	ASSERT_EQ(0, pthread_join(w.thread, NULL));
	ASSERT_EQ(-EIDRM, w.ret);
	ASSERT_EQ(-ENOENT, wv_get(self->fd, w.id, &value));
}

TEST_F(waitvar, unknown_command_returns_enotty)
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

TEST_F(waitvar, bad_pointer_returns_efault)
{
	static const unsigned long cmds[] = {
		WAITVAR_IOC_CREATE, WAITVAR_IOC_DESTROY, WAITVAR_IOC_GET,
		WAITVAR_IOC_SET, WAITVAR_IOC_WAIT, WAITVAR_IOC_WAKE,
		WAITVAR_IOC_WAKE_NR, WAITVAR_IOC_ADD, WAITVAR_IOC_DEC_AND_WAKE,
		WAITVAR_IOC_CMPXCHG, WAITVAR_IOC_WAITV, WAITVAR_IOC_WATCH,
		WAITVAR_IOC_STATS,
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
	ASSERT_EQ(0, wv_create(self->fd, 9, &id));
	ro = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(ro != MAP_FAILED);
	ro->id = id;
	ASSERT_EQ(0, mprotect(ro, page, PROT_READ));
	EXPECT_EQ(-1, ioctl(self->fd, WAITVAR_IOC_GET, ro));
	EXPECT_EQ(EFAULT, errno);
	munmap(ro, page);
}

TEST_F(waitvar, unknown_id_returns_enoent)
{
	static const uint32_t ids[] = { 0, 12345, UINT32_MAX };
	struct waitvar_watch watch = {};
	struct waitvar_stats st;
	uint64_t value = 0;
	size_t i;

	for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		watch.id = ids[i];
		EXPECT_EQ(-1, ioctl(self->fd, WAITVAR_IOC_WATCH, &watch));
		EXPECT_EQ(ENOENT, errno);
		EXPECT_EQ(-ENOENT, wv_stats(self->fd, ids[i], &st));
		EXPECT_EQ(-ENOENT, wv_get(self->fd, ids[i], &value));
		EXPECT_EQ(-ENOENT, wv_set(self->fd, ids[i], 1));
		EXPECT_EQ(-ENOENT, wv_wait(self->fd, ids[i], WAITVAR_OP_EQ, 0, 0, NULL));
		EXPECT_EQ(-ENOENT, wv_id_cmd(self->fd, WAITVAR_IOC_WAKE, ids[i]));
		EXPECT_EQ(-ENOENT, wv_wake_nr(self->fd, ids[i], 1));
		EXPECT_EQ(-ENOENT, wv_id_cmd(self->fd, WAITVAR_IOC_DESTROY, ids[i]));
	}
}

TEST_F(waitvar, nonzero_reserved_or_flags_return_einval_and_change_nothing)
{
	struct waitvar_create create = { .value = 1, .flags = 1U << 31 };
	struct waitvar_value set = { .value = 2, .flags = 1 };
	struct waitvar_wait wait = { .op = WAITVAR_OP_EQ, .operand = 1 };
	struct waitvar_id id_arg = { .flags = 1 };
	uint64_t value = 0;
	uint32_t id = 0;

	EXPECT_EQ(-1, ioctl(self->fd, WAITVAR_IOC_CREATE, &create));
	EXPECT_EQ(EINVAL, errno);
	/* One lock, not two. */
	create.flags = WAITVAR_CREATE_SPINLOCK | WAITVAR_CREATE_MUTEX;
	EXPECT_EQ(-1, ioctl(self->fd, WAITVAR_IOC_CREATE, &create));
	EXPECT_EQ(EINVAL, errno);
	create.flags = 0;
	create.reserved[1] = 1;
	EXPECT_EQ(-1, ioctl(self->fd, WAITVAR_IOC_CREATE, &create));
	EXPECT_EQ(EINVAL, errno);

	/* Nothing was created: the first variable still gets the first id. */
	ASSERT_EQ(0, wv_create(self->fd, 1, &id));
	ASSERT_EQ(1U, id);

	set.id = id;
	EXPECT_EQ(-1, ioctl(self->fd, WAITVAR_IOC_SET, &set));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, wv_get(self->fd, id, &value));
	EXPECT_EQ(1U, value);

	id_arg.id = id;
	EXPECT_EQ(-1, ioctl(self->fd, WAITVAR_IOC_DESTROY, &id_arg));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(self->fd, WAITVAR_IOC_WAKE, &id_arg));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, wv_get(self->fd, id, &value));

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

#define NR_EXCLUSIVE 4

static void start_exclusive_waiters(struct __test_metadata *_metadata, int fd,
				    struct waiter *w, int nr, uint32_t id)
{
	int i;

	for (i = 0; i < nr; i++) {
		w[i] = (struct waiter){ .fd = fd, .id = id, .op = WAITVAR_OP_EQ,
					.operand = 1, .timeout_ns = NO_TIMEOUT,
					.flags = WAITVAR_WAIT_EXCLUSIVE };
		ASSERT_EQ(0, waiter_start(&w[i]));
		ASSERT_TRUE(waiter_sleeps(&w[i]));
	}
}

TEST_F(waitvar, exclusive_waiters_are_woken_one_by_set_and_n_by_wake_nr)
{
	struct waiter w[NR_EXCLUSIVE];
	uint32_t id = 0;
	int i;

	ASSERT_EQ(0, wv_create(self->fd, 0, &id));
	start_exclusive_waiters(_metadata, self->fd, w, NR_EXCLUSIVE, id);

	/* SET calls wake_up_var(): one exclusive waiter. */
	ASSERT_EQ(0, wv_set(self->fd, id, 1));
	EXPECT_EQ(1, settled_done(w, NR_EXCLUSIVE, 1));
	EXPECT_EQ(2, wv_wake_nr(self->fd, id, 2));
	EXPECT_EQ(3, settled_done(w, NR_EXCLUSIVE, 3));
	/* nr 0: all that are left. */
	EXPECT_EQ(1, wv_wake_nr(self->fd, id, 0));
	EXPECT_EQ(NR_EXCLUSIVE, settled_done(w, NR_EXCLUSIVE, NR_EXCLUSIVE));
	EXPECT_EQ(0, wv_wake_nr(self->fd, id, 0));
	for (i = 0; i < NR_EXCLUSIVE; i++) {
		ASSERT_EQ(0, pthread_join(w[i].thread, NULL));
		EXPECT_EQ(0, w[i].ret);
		EXPECT_EQ(1U, w[i].seen);
	}
}

TEST_F(waitvar, destroy_wakes_every_exclusive_waiter_with_eidrm)
{
	struct waiter w[NR_EXCLUSIVE];
	uint32_t id = 0;
	int i;

	ASSERT_EQ(0, wv_create(self->fd, 0, &id));
	start_exclusive_waiters(_metadata, self->fd, w, NR_EXCLUSIVE, id);
	ASSERT_EQ(0, wv_id_cmd(self->fd, WAITVAR_IOC_DESTROY, id));
	for (i = 0; i < NR_EXCLUSIVE; i++) {
		ASSERT_EQ(0, pthread_join(w[i].thread, NULL));
		EXPECT_EQ(-EIDRM, w[i].ret);
	}
}

TEST_F(waitvar, wake_nr_with_nonzero_flags_returns_einval)
{
	struct waitvar_wake_nr arg = { .flags = 1U << 31, .nr = 1 };

	ASSERT_EQ(0, wv_create(self->fd, 0, &arg.id));
	EXPECT_EQ(-1, ioctl(self->fd, WAITVAR_IOC_WAKE_NR, &arg));
	EXPECT_EQ(EINVAL, errno);
	arg.flags = 0;
	arg.nr = 0x80000000U;
	EXPECT_EQ(-1, ioctl(self->fd, WAITVAR_IOC_WAKE_NR, &arg));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(waitvar, add_returns_the_new_value_and_wakes_only_when_asked)
{
	struct waiter w = { .fd = self->fd, .op = WAITVAR_OP_EQ, .operand = 5,
			    .timeout_ns = NO_TIMEOUT };
	uint64_t value = 0;

	ASSERT_EQ(0, wv_create(self->fd, 2, &w.id));
	ASSERT_EQ(0, waiter_start(&w));
	ASSERT_TRUE(waiter_sleeps(&w));
	/* The condition now holds, but nobody woke the waiter. */
	ASSERT_EQ(0, wv_add(self->fd, w.id, 3, 0, &value));
	EXPECT_EQ(5U, value);
	usleep(100 * 1000);
	ASSERT_TRUE(waiter_sleeps(&w));
	ASSERT_EQ(0, wv_add(self->fd, w.id, -1, 0, &value));
	EXPECT_EQ(4U, value);
	ASSERT_EQ(0, wv_add(self->fd, w.id, 1, WAITVAR_ADD_WAKE, &value));
	EXPECT_EQ(5U, value);
	ASSERT_EQ(0, pthread_join(w.thread, NULL));
	EXPECT_EQ(0, w.ret);
	EXPECT_EQ(5U, w.seen);
}

TEST_F(waitvar, dec_and_wake_wakes_only_at_zero)
{
	struct waiter w = { .fd = self->fd, .op = WAITVAR_OP_LE, .operand = 1,
			    .timeout_ns = NO_TIMEOUT };
	uint64_t value = 0;

	ASSERT_EQ(0, wv_create(self->fd, 3, &w.id));
	ASSERT_EQ(0, waiter_start(&w));
	ASSERT_TRUE(waiter_sleeps(&w));
	ASSERT_EQ(0, wv_dec_and_wake(self->fd, w.id, &value));
	EXPECT_EQ(2U, value);
	/* 1 satisfies the waiter, but only reaching 0 wakes. */
	ASSERT_EQ(0, wv_dec_and_wake(self->fd, w.id, &value));
	EXPECT_EQ(1U, value);
	usleep(100 * 1000);
	ASSERT_TRUE(waiter_sleeps(&w));
	ASSERT_EQ(0, wv_dec_and_wake(self->fd, w.id, &value));
	EXPECT_EQ(0U, value);
	ASSERT_EQ(0, pthread_join(w.thread, NULL));
	EXPECT_EQ(0, w.ret);
	EXPECT_EQ(0U, w.seen);
}

TEST_F(waitvar, cmpxchg_returns_the_previous_value_and_wakes_on_success)
{
	struct waiter w = { .fd = self->fd, .op = WAITVAR_OP_EQ, .operand = 4,
			    .timeout_ns = NO_TIMEOUT };
	uint64_t prev = 0, value = 0;

	ASSERT_EQ(0, wv_create(self->fd, 1, &w.id));
	ASSERT_EQ(0, waiter_start(&w));
	ASSERT_TRUE(waiter_sleeps(&w));
	ASSERT_EQ(0, wv_cmpxchg(self->fd, w.id, 2, 4, &prev));
	EXPECT_EQ(1U, prev);
	ASSERT_EQ(0, wv_get(self->fd, w.id, &value));
	EXPECT_EQ(1U, value);
	ASSERT_TRUE(waiter_sleeps(&w));
	ASSERT_EQ(0, wv_cmpxchg(self->fd, w.id, 1, 4, &prev));
	EXPECT_EQ(1U, prev);
	ASSERT_EQ(0, pthread_join(w.thread, NULL));
	EXPECT_EQ(0, w.ret);
	EXPECT_EQ(4U, w.seen);
}

TEST_F(waitvar, updates_with_bad_flags_return_einval_and_change_nothing)
{
	struct waitvar_add add = { .flags = 1U << 31, .delta = 1 };
	struct waitvar_value dec = { .flags = 1 };
	struct waitvar_cmpxchg cx = { .flags = 1, .expected = 7, .desired = 8 };
	uint64_t value = 0;
	uint32_t id = 0;

	ASSERT_EQ(0, wv_create(self->fd, 7, &id));
	add.id = dec.id = cx.id = id;
	EXPECT_EQ(-1, ioctl(self->fd, WAITVAR_IOC_ADD, &add));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(self->fd, WAITVAR_IOC_DEC_AND_WAKE, &dec));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(self->fd, WAITVAR_IOC_CMPXCHG, &cx));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, wv_get(self->fd, id, &value));
	EXPECT_EQ(7U, value);
	EXPECT_EQ(-ENOENT, wv_add(self->fd, 999, 1, 0, &value));
	EXPECT_EQ(-ENOENT, wv_dec_and_wake(self->fd, 999, &value));
	EXPECT_EQ(-ENOENT, wv_cmpxchg(self->fd, 999, 0, 1, &value));
}

TEST_F(waitvar, variables_are_private_to_the_open_file)
{
	uint64_t value = 0;
	uint32_t id = 0;
	int other;

	ASSERT_EQ(0, wv_create(self->fd, 4, &id));
	other = open("/dev/waitvar", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, other);
	EXPECT_EQ(-ENOENT, wv_get(other, id, &value));
	EXPECT_EQ(-ENOENT, wv_set(other, id, 5));
	close(other);
	ASSERT_EQ(0, wv_get(self->fd, id, &value));
	EXPECT_EQ(4U, value);
}

TEST_F(waitvar, per_file_limit_returns_enospc)
{
	unsigned int limit = 0, i;
	uint32_t id = 0, last = 0;
	FILE *f;

	f = fopen("/sys/module/waitvar/parameters/max_vars_per_file", "r");
	ASSERT_TRUE(f != NULL);
	ASSERT_EQ(1, fscanf(f, "%u", &limit));
	fclose(f);
	if (limit > 100000)
		SKIP(return, "max_vars_per_file=%u is too large to fill", limit);

	for (i = 0; i < limit; i++)
		ASSERT_EQ(0, wv_create(self->fd, i, &last)) TH_LOG("variable %u", i);
	ASSERT_EQ(-ENOSPC, wv_create(self->fd, 0, &id));
	/* Destroying one makes room for one. */
	ASSERT_EQ(0, wv_id_cmd(self->fd, WAITVAR_IOC_DESTROY, last));
	ASSERT_EQ(0, wv_create(self->fd, 0, &id));
	ASSERT_EQ(-ENOSPC, wv_create(self->fd, 0, &id));
}

#define CGROUP_ROOT "/sys/fs/cgroup"
#define MEMCG_VARS 1000

/* The "slab" bytes of a cgroup's memory.stat, or -1. */
static long long memcg_slab(const char *cg)
{
	char path[256], key[64];
	long long value, found = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/memory.stat", cg);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fscanf(f, "%63s %lld", key, &value) == 2)
		if (!strcmp(key, "slab"))
			found = value;
	fclose(f);
	return found;
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

/* In a child moved into @cg: exit 0 once the variables show in its slab. */
static void memcg_child(const char *cg)
{
	long long before, after = -1, end;
	char path[256], pid[32];
	uint32_t id;
	int fd, i;

	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	snprintf(pid, sizeof(pid), "%d", getpid());
	if (write_str(path, pid))
		_exit(10);
	fd = open("/dev/waitvar", O_RDWR);
	if (fd < 0)
		_exit(11);
	before = memcg_slab(cg);
	if (before < 0)
		_exit(12);
	for (i = 0; i < MEMCG_VARS; i++)
		if (wv_create(fd, i, &id))
			_exit(13);
	/* memory.stat is flushed lazily: give it a few seconds. */
	end = now_ns() + 5000 * NSEC_PER_MSEC;
	while (now_ns() < end) {
		after = memcg_slab(cg);
		/* Each variable is far larger than 64 bytes. */
		if (after - before >= MEMCG_VARS * 64LL)
			_exit(0);
		usleep(50 * 1000);
	}
	fprintf(stderr, "slab grew by %lld bytes for %d variables\n", after - before,
		MEMCG_VARS);
	_exit(14);
}

TEST_F(waitvar, variables_are_charged_to_the_creators_memory_cgroup)
{
	char cg[128];
	int status = 0;
	pid_t child;

	if (access(CGROUP_ROOT "/cgroup.controllers", F_OK))
		ASSERT_EQ(0, mount("none", CGROUP_ROOT, "cgroup2", 0, NULL))
			TH_LOG("mount cgroup2: %s", strerror(errno));
	ASSERT_EQ(0, write_str(CGROUP_ROOT "/cgroup.subtree_control", "+memory"))
		TH_LOG("no memory controller (CONFIG_MEMCG): %s", strerror(errno));
	snprintf(cg, sizeof(cg), CGROUP_ROOT "/waitvar-test-%d", getpid());
	ASSERT_EQ(0, mkdir(cg, 0755));
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0)
		memcg_child(cg);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0, rmdir(cg));
}

TEST_HARNESS_MAIN
