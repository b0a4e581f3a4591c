// SPDX-License-Identifier: GPL-2.0
/*
 * WAIT's timeouts: a relative timeout, CLOCK_MONOTONIC and CLOCK_REALTIME
 * deadlines, and what each does after a signal whose handler has SA_RESTART.
 */
#include "waitvar_test.h"

/* The kernel's harness is written for -Wall; it has unused parameters. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

FIXTURE(wait_timeout) {
	int fd;
};

FIXTURE_SETUP(wait_timeout)
{
	self->fd = open("/dev/waitvar", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open /dev/waitvar: %s", strerror(errno));
}

FIXTURE_TEARDOWN(wait_timeout)
{
	close(self->fd);
}

TEST_F(wait_timeout, timeout_returns_etimedout_not_before_it_passes)
{
	const long long timeout = 200 * NSEC_PER_MSEC;
	long long start, elapsed;
	uint32_t id = 0;

	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &id));
	start = now_ns();
	ASSERT_EQ(-ETIMEDOUT, waitvar_wait(self->fd, id, WAITVAR_OP_EQ, 1, 0, WAITVAR_WAIT_TIMEOUT,
					   timeout, NULL));
	elapsed = now_ns() - start;
	EXPECT_GE(elapsed, timeout);
	/* Generous: emulated guests can be slow, but not by seconds. */
	EXPECT_LT(elapsed, timeout + 5000 * NSEC_PER_MSEC);
}

TEST_F(wait_timeout, timed_wait_ends_early_when_condition_becomes_true)
{
	struct waiter w = { .fd = self->fd, .op = WAITVAR_OP_GE, .operand = 10,
			    .flags = WAITVAR_WAIT_TIMEOUT, .timeout_ns = 60000 * NSEC_PER_MSEC };

	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &w.id));
	ASSERT_EQ(0, waiter_start(&w));
	ASSERT_TRUE(waiter_sleeps(&w));
	ASSERT_EQ(0, waitvar_set(self->fd, w.id, 11));
	ASSERT_EQ(0, pthread_join(w.thread, NULL));
	ASSERT_EQ(0, w.ret);
	ASSERT_EQ(11U, w.seen);
}

TEST_F(wait_timeout, two_timeout_kinds_return_einval)
{
	struct waitvar_wait arg = { .op = WAITVAR_OP_EQ, .operand = 1,
				    .flags = WAITVAR_WAIT_TIMEOUT | WAITVAR_WAIT_ABS_MONOTONIC };

	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &arg.id));
	EXPECT_EQ(-1, ioctl(self->fd, WAITVAR_IOC_WAIT, &arg));
	EXPECT_EQ(EINVAL, errno);
	arg.flags = WAITVAR_WAIT_ABS_MONOTONIC | WAITVAR_WAIT_ABS_REALTIME;
	EXPECT_EQ(-1, ioctl(self->fd, WAITVAR_IOC_WAIT, &arg));
	EXPECT_EQ(EINVAL, errno);
}

static void check_deadline(struct __test_metadata *_metadata, int fd, clockid_t clock,
			   uint32_t flag)
{
	const long long span = 200 * NSEC_PER_MSEC;
	long long deadline, start;
	struct waitvar_stats st;
	uint32_t id = 0;

	ASSERT_EQ(0, waitvar_create(fd, 0, 0, &id));
	/*
	 * The deadline becomes a timeout when the wait starts, so the time
	 * spent is measured on CLOCK_MONOTONIC: the guest's CLOCK_REALTIME has
	 * been seen to step while a test ran.
	 */
	start = now_ns();
	deadline = clock_ns(clock) + span;
	ASSERT_EQ(-ETIMEDOUT, waitvar_wait(fd, id, WAITVAR_OP_EQ, 1, 0, flag, deadline, NULL));
	EXPECT_GE(now_ns() - start, span);
	EXPECT_LT(now_ns() - start, span + 5000 * NSEC_PER_MSEC);
	/* A deadline already past (1 ns after the epoch): one check, whatever the mode. */
	start = now_ns();
	EXPECT_EQ(-ETIMEDOUT, waitvar_wait(fd, id, WAITVAR_OP_EQ, 1,
					   WAITVAR_MODE_UNINTERRUPTIBLE, flag, 1, NULL));
	EXPECT_LT(now_ns() - start, 1000 * NSEC_PER_MSEC);
	EXPECT_EQ(0, waitvar_wait(fd, id, WAITVAR_OP_EQ, 0, 0, flag, 1, NULL));
	ASSERT_EQ(0, waitvar_stats(fd, id, &st));
	EXPECT_EQ(2U, st.timeouts);
	EXPECT_EQ(3U, st.waits);
}

TEST_F(wait_timeout, monotonic_deadline_returns_etimedout_not_before_it)
{
	check_deadline(_metadata, self->fd, CLOCK_MONOTONIC, WAITVAR_WAIT_ABS_MONOTONIC);
}

TEST_F(wait_timeout, realtime_deadline_returns_etimedout_not_before_it)
{
	check_deadline(_metadata, self->fd, CLOCK_REALTIME, WAITVAR_WAIT_ABS_REALTIME);
}

TEST_F(wait_timeout, deadline_wait_ends_early_when_condition_becomes_true)
{
	struct waiter w = { .fd = self->fd, .op = WAITVAR_OP_EQ, .operand = 3,
			    .flags = WAITVAR_WAIT_ABS_REALTIME };

	w.timeout_ns = clock_ns(CLOCK_REALTIME) + 60000 * NSEC_PER_MSEC;
	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &w.id));
	ASSERT_EQ(0, waiter_start(&w));
	ASSERT_TRUE(waiter_sleeps(&w));
	ASSERT_EQ(0, waitvar_set(self->fd, w.id, 3));
	ASSERT_EQ(0, pthread_join(w.thread, NULL));
	EXPECT_EQ(0, w.ret);
	EXPECT_EQ(3U, w.seen);
}

/*
 * With SA_RESTART, an untimed or deadline wait goes on after the handler;
 * a relative timeout fails with EINTR rather than start again.
 */
static int wait_after_restartable_signal(struct __test_metadata *_metadata, int fd,
					 uint32_t flags, long long timeout_ns)
{
	struct waiter w = { .fd = fd, .op = WAITVAR_OP_EQ, .operand = 1,
			    .flags = flags, .timeout_ns = timeout_ns };
	struct waitvar_stats st;

	ASSERT_EQ(0, handle_sigusr1(SA_RESTART));
	if (waitvar_create(fd, 0, 0, &w.id) || waiter_start(&w))
		return -1000;
	if (!waiter_sleeps(&w))
		return -1001;
	pthread_kill(w.thread, SIGUSR1);
	/* Restarted waits are back asleep; the others have returned. */
	usleep(200 * 1000);
	if (!atomic_load(&w.done) && waiter_sleeps(&w))
		waitvar_set(fd, w.id, 1);
	pthread_join(w.thread, NULL);
	if (waitvar_stats(fd, w.id, &st) || st.signals != 1)
		return -1002;
	return w.ret;
}

TEST_F(wait_timeout, untimed_and_deadline_waits_restart_after_sa_restart_handler)
{
	EXPECT_EQ(0, wait_after_restartable_signal(_metadata, self->fd, 0, 0));
	EXPECT_EQ(0, wait_after_restartable_signal(_metadata, self->fd,
						   WAITVAR_WAIT_ABS_MONOTONIC,
						   now_ns() + 60000 * NSEC_PER_MSEC));
}

TEST_F(wait_timeout, relative_timeout_wait_returns_eintr_even_with_sa_restart)
{
	EXPECT_EQ(-EINTR, wait_after_restartable_signal(_metadata, self->fd, WAITVAR_WAIT_TIMEOUT,
							60000 * NSEC_PER_MSEC));
}

TEST_HARNESS_MAIN
