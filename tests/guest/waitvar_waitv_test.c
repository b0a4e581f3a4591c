// SPDX-License-Identifier: GPL-2.0
/*
 * WAITV: the first of up to 128 conditions, in every mode and timeout kind,
 * ended by a change, DESTROY or a signal, and its bad input.
 */
#include "waitvar_test.h"

/* The kernel's harness is written for -Wall; it has unused parameters. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

FIXTURE(waitv) {
	int fd;
};

FIXTURE_SETUP(waitv)
{
	self->fd = open("/dev/waitvar", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open /dev/waitvar: %s", strerror(errno));
}

FIXTURE_TEARDOWN(waitv)
{
	close(self->fd);
}

/* A thread blocked in WAITVAR_IOC_WAITV. */
struct vwaiter {
	int fd;
	struct waitvar_waitv_entry *e;
	uint32_t count, mode, flags;
	long long timeout_ns;
	pthread_t thread;
	atomic_int tid, done;
	int ret;
	uint32_t index;
	uint64_t value;
};

static void *vwaiter_main(void *data)
{
	struct vwaiter *v = data;

	atomic_store(&v->tid, gettid());
	v->ret = waitvar_waitv(v->fd, v->e, v->count, v->mode, v->flags, v->timeout_ns,
			       &v->value);
	/* WAITV returns the index of the entry that held. */
	if (v->ret >= 0) {
		v->index = v->ret;
		v->ret = 0;
	}
	atomic_store(&v->done, 1);
	return NULL;
}

static bool vwaiter_sleeps_in(struct vwaiter *v, char state)
{
	return thread_sleeps_in(&v->tid, &v->done, state);
}

/* The entries queued on hashed bucket @bucket now, from the series' debugfs table. */
static int bucket_entries(uint32_t bucket)
{
	FILE *f = fopen("/sys/kernel/debug/sched/bit_wait_table", "r");
	unsigned int b, entries, vars;
	char line[128];
	int found = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%u %u %u", &b, &entries, &vars) == 3 && b == bucket)
			found = entries;
	fclose(f);
	return found;
}

TEST_F(waitv, waitv_repeating_one_variable_queues_it_once)
{
	static struct waitvar_waitv_entry e[WAITVAR_WAITV_MAX];
	struct waitvar_stats st;
	struct vwaiter v;
	uint32_t id = 0, i;
	int before, during;

	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &id));
	ASSERT_EQ(0, waitvar_stats(self->fd, id, &st));
	ASSERT_NE(WAITVAR_BUCKET_HIDDEN, st.bucket);
	before = bucket_entries(st.bucket);
	ASSERT_LE(0, before) TH_LOG("no bucket %u in /sys/kernel/debug/sched/bit_wait_table", st.bucket);
	for (i = 0; i < WAITVAR_WAITV_MAX; i++)
		e[i] = (struct waitvar_waitv_entry){ .id = id, .op = WAITVAR_OP_EQ,
						     .operand = 1 + i };
	v = (struct vwaiter){ .fd = self->fd, .e = e, .count = WAITVAR_WAITV_MAX };
	ASSERT_EQ(0, pthread_create(&v.thread, NULL, vwaiter_main, &v));
	ASSERT_TRUE(vwaiter_sleeps_in(&v, 'S'));
	during = bucket_entries(st.bucket);
	/* One entry on the shared table, not 128 (other sleepers may come and go). */
	EXPECT_LE(1, during - before);
	EXPECT_GT(8, during - before) TH_LOG("128 entries on one variable queued %d times",
					     during - before);
	EXPECT_EQ((uint32_t)WAITVAR_WAITV_MAX, wait_stat(self->fd, id, waiters,
							 (uint32_t)WAITVAR_WAITV_MAX));
	ASSERT_EQ(0, waitvar_set(self->fd, id, 5));
	ASSERT_EQ(0, pthread_join(v.thread, NULL));
	EXPECT_EQ(0, v.ret);
	EXPECT_EQ(4U, v.index);
	EXPECT_EQ(5U, v.value);
}

TEST_F(waitv, waitv_returns_the_index_of_the_first_entry_that_holds)
{
	struct waitvar_waitv_entry e[4];
	uint64_t value = 0;
	uint32_t i;
	int index;

	for (i = 0; i < 4; i++) {
		e[i] = (struct waitvar_waitv_entry){ .op = WAITVAR_OP_GE, .operand = 10 };
		ASSERT_EQ(0, waitvar_create(self->fd, i == 2 || i == 3 ? 10 + i : 0, 0, &e[i].id));
	}
	index = waitvar_waitv(self->fd, e, 4, 0, 0, 0, &value);
	ASSERT_LE(0, index);
	EXPECT_EQ(2, index);
	EXPECT_EQ(12U, value);
	/* No entry holds: a zero timeout is a poll of them all. */
	EXPECT_EQ(-ETIMEDOUT, waitvar_waitv(self->fd, e, 2, 0, WAITVAR_WAIT_TIMEOUT, 0, &value));
}

TEST_F(waitv, waitv_of_128_variables_ends_when_any_one_holds)
{
	static struct waitvar_waitv_entry e[WAITVAR_WAITV_MAX];
	struct vwaiter v = { .fd = self->fd, .e = e, .count = WAITVAR_WAITV_MAX };
	struct waitvar_stats st;
	uint32_t i;

	/* The driver takes as many as the header says, and no more. */
	ASSERT_EQ((uint32_t)WAITVAR_WAITV_MAX, driver_features().waitv_max);
	for (i = 0; i < WAITVAR_WAITV_MAX; i++) {
		e[i] = (struct waitvar_waitv_entry){ .op = WAITVAR_OP_EQ, .operand = 1000 + i };
		ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &e[i].id));
	}
	ASSERT_EQ(0, pthread_create(&v.thread, NULL, vwaiter_main, &v));
	ASSERT_TRUE(vwaiter_sleeps_in(&v, 'S'));
	for (i = 0; i < WAITVAR_WAITV_MAX; i++)
		ASSERT_EQ(1U, wait_stat(self->fd, e[i].id, waiters, 1U));
	/*
	 * A change that satisfies no entry wakes the waiter for nothing.  State
	 * S comes with the first entry queued, so the first changes may come
	 * before the waiter is on e[5]'s queue: change until one finds it.
	 */
	for (i = 1; i < 1000; i++) {
		ASSERT_EQ(0, waitvar_set(self->fd, e[5].id, i));
		usleep(10 * 1000);
		ASSERT_EQ(0, waitvar_stats(self->fd, e[5].id, &st));
		if (st.spurious)
			break;
	}
	ASSERT_LE(1U, st.spurious);
	EXPECT_EQ(st.spurious, st.woken);
	ASSERT_TRUE(vwaiter_sleeps_in(&v, 'S'));
	ASSERT_EQ(0, waitvar_set(self->fd, e[77].id, 1077));
	ASSERT_EQ(0, pthread_join(v.thread, NULL));
	EXPECT_EQ(0, v.ret);
	EXPECT_EQ(77U, v.index);
	EXPECT_EQ(1077U, v.value);
	ASSERT_EQ(0, waitvar_stats(self->fd, e[77].id, &st));
	/* 0 if the wake came while the waiter was still queueing, not asleep. */
	EXPECT_GE(1U, st.woken);
	EXPECT_EQ(0U, st.spurious);
	EXPECT_EQ(0U, st.waiters);
	EXPECT_EQ(1U, st.waits);
}

TEST_F(waitv, waitv_modes_timeouts_and_destroy)
{
	struct waitvar_waitv_entry e[2] = {
		{ .op = WAITVAR_OP_EQ, .operand = 1 }, { .op = WAITVAR_OP_EQ, .operand = 1 },
	};
	/* Long, within the cap on uninterruptible waits: DESTROY ends it. */
	struct vwaiter v = { .fd = self->fd, .e = e, .count = 2,
			     .mode = WAITVAR_MODE_UNINTERRUPTIBLE, .flags = WAITVAR_WAIT_TIMEOUT,
			     .timeout_ns = uninterruptible_timeout_ns(60000 * NSEC_PER_MSEC) };
	long long start;

	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &e[0].id));
	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &e[1].id));
	start = now_ns();
	EXPECT_EQ(-ETIMEDOUT, waitvar_waitv(self->fd, e, 2, WAITVAR_MODE_IO, WAITVAR_WAIT_TIMEOUT,
					    100 * NSEC_PER_MSEC, NULL));
	EXPECT_GE(now_ns() - start, 100 * NSEC_PER_MSEC);
	EXPECT_EQ(-ETIMEDOUT, waitvar_waitv(self->fd, e, 2, WAITVAR_MODE_KILLABLE,
					    WAITVAR_WAIT_ABS_MONOTONIC,
					    now_ns() + 50 * NSEC_PER_MSEC, NULL));
	ASSERT_EQ(0, pthread_create(&v.thread, NULL, vwaiter_main, &v));
	ASSERT_TRUE(vwaiter_sleeps_in(&v, 'D'));
	ASSERT_EQ(0, waitvar_destroy(self->fd, e[1].id));
	ASSERT_EQ(0, pthread_join(v.thread, NULL));
	EXPECT_EQ(-EIDRM, v.ret);
}

TEST_F(waitv, waitv_signal_returns_eintr)
{
	struct waitvar_waitv_entry e = { .op = WAITVAR_OP_EQ, .operand = 1 };
	struct vwaiter v = { .fd = self->fd, .e = &e, .count = 1 };
	struct waitvar_stats st;

	ASSERT_EQ(0, handle_sigusr1(0));
	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &e.id));
	ASSERT_EQ(0, pthread_create(&v.thread, NULL, vwaiter_main, &v));
	ASSERT_TRUE(vwaiter_sleeps_in(&v, 'S'));
	ASSERT_EQ(0, pthread_kill(v.thread, SIGUSR1));
	ASSERT_EQ(0, pthread_join(v.thread, NULL));
	EXPECT_EQ(-EINTR, v.ret);
	ASSERT_EQ(0, waitvar_stats(self->fd, e.id, &st));
	EXPECT_EQ(1U, st.signals);
	EXPECT_EQ(0U, st.waiters);
}

TEST_F(waitv, waitv_bad_input_returns_the_documented_errno)
{
	static struct waitvar_waitv_entry e[WAITVAR_WAITV_MAX + 1];
	uint32_t i;

	for (i = 0; i <= WAITVAR_WAITV_MAX; i++) {
		e[i] = (struct waitvar_waitv_entry){ .op = WAITVAR_OP_EQ, .operand = 5 };
		ASSERT_EQ(0, waitvar_create(self->fd, 5, 0, &e[i].id));
	}
	EXPECT_EQ(-EINVAL, waitvar_waitv(self->fd, e, 0, 0, WAITVAR_WAIT_TIMEOUT, 0, NULL));
	EXPECT_EQ(-EINVAL, waitvar_waitv(self->fd, e, WAITVAR_WAITV_MAX + 1, 0,
					 WAITVAR_WAIT_TIMEOUT, 0, NULL));
	EXPECT_EQ(-EINVAL, waitvar_waitv(self->fd, e, 1, 0,
					 WAITVAR_WAIT_EXCLUSIVE | WAITVAR_WAIT_TIMEOUT, 0, NULL));
	EXPECT_EQ(-EINVAL, waitvar_waitv(self->fd, e, 1, 0, (1U << 31) | WAITVAR_WAIT_TIMEOUT, 0,
					 NULL));
	/* io needs a timeout */
	EXPECT_EQ(-EINVAL, waitvar_waitv(self->fd, e, 1, WAITVAR_MODE_IO, 0, 0, NULL));
	EXPECT_EQ(-EINVAL, waitvar_waitv(self->fd, e, 1, WAITVAR_MODE_COUNT, WAITVAR_WAIT_TIMEOUT,
					 0, NULL));
	EXPECT_EQ(-EFAULT, waitvar_waitv(self->fd, NULL, 1, 0, WAITVAR_WAIT_TIMEOUT, 0, NULL));
	e[3].op = WAITVAR_OP_COUNT;
	EXPECT_EQ(-EINVAL, waitvar_waitv(self->fd, e, 4, 0, WAITVAR_WAIT_TIMEOUT, 0, NULL));
	e[3].op = WAITVAR_OP_EQ;
	e[3].flags = 1;
	EXPECT_EQ(-EINVAL, waitvar_waitv(self->fd, e, 4, 0, WAITVAR_WAIT_TIMEOUT, 0, NULL));
	e[3].flags = 0;
	e[3].reserved = 1;
	EXPECT_EQ(-EINVAL, waitvar_waitv(self->fd, e, 4, 0, WAITVAR_WAIT_TIMEOUT, 0, NULL));
	e[3].reserved = 0;
	e[3].id = 99999;
	EXPECT_EQ(-ENOENT, waitvar_waitv(self->fd, e, 4, 0, WAITVAR_WAIT_TIMEOUT, 0, NULL));
	/* The full 128 is accepted. */
	e[3].id = e[4].id;
	EXPECT_EQ(0, waitvar_waitv(self->fd, e, WAITVAR_WAITV_MAX, 0, WAITVAR_WAIT_TIMEOUT, 0,
				   NULL));
}

TEST_HARNESS_MAIN
