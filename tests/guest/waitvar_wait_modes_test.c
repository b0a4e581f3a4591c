// SPDX-License-Identifier: GPL-2.0
/*
 * WAIT's sleep modes and signals: an interruptible wait ends with EINTR;
 * killable, uninterruptible and io waits sleep in D through a handled signal,
 * need a timeout where documented, and a killable one ends only by SIGKILL.
 */
#include <sys/wait.h>

#include "waitvar_test.h"

/* The kernel's harness is written for -Wall; it has unused parameters. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

FIXTURE(wait_modes) {
	int fd;
};

FIXTURE_SETUP(wait_modes)
{
	self->fd = open("/dev/waitvar", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open /dev/waitvar: %s", strerror(errno));
}

FIXTURE_TEARDOWN(wait_modes)
{
	close(self->fd);
}

static void check_signal_interrupts(struct __test_metadata *_metadata, int fd,
				    uint32_t flags, long long timeout_ns)
{
	struct waiter w = { .fd = fd, .op = WAITVAR_OP_EQ, .operand = 1,
			    .flags = flags, .timeout_ns = timeout_ns };
	struct waitvar_stats st = {};

	ASSERT_EQ(0, handle_sigusr1(0));	/* no SA_RESTART */
	ASSERT_EQ(0, waitvar_create(fd, 0, 0, &w.id));
	ASSERT_EQ(0, waiter_start(&w));
	ASSERT_TRUE(waiter_sleeps(&w));
	ASSERT_EQ(0, pthread_kill(w.thread, SIGUSR1));
	ASSERT_EQ(0, pthread_join(w.thread, NULL));
	ASSERT_EQ(-EINTR, w.ret);
	/* The signal ended the one wait, not a wake or the timeout. */
	ASSERT_EQ(0, waitvar_stats(fd, w.id, &st));
	EXPECT_EQ(1U, st.waits);
	EXPECT_EQ(1U, st.signals);
	EXPECT_EQ(0U, st.timeouts);
	EXPECT_EQ(0U, st.wakes);
	EXPECT_EQ(0U, st.waiters);
}

TEST_F(wait_modes, signal_interrupts_untimed_wait_with_eintr)
{
	check_signal_interrupts(_metadata, self->fd, 0, 0);
}

TEST_F(wait_modes, signal_interrupts_timed_wait_with_eintr)
{
	check_signal_interrupts(_metadata, self->fd, WAITVAR_WAIT_TIMEOUT,
				60000 * NSEC_PER_MSEC);
}

TEST_F(wait_modes, uninterruptible_and_io_modes_need_a_timeout)
{
	uint32_t id = 0;

	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &id));
	EXPECT_EQ(-EINVAL, waitvar_wait(self->fd, id, WAITVAR_OP_EQ, 1,
					WAITVAR_MODE_UNINTERRUPTIBLE, 0, 0, NULL));
	EXPECT_EQ(-EINVAL, waitvar_wait(self->fd, id, WAITVAR_OP_EQ, 1,
					WAITVAR_MODE_IO, 0, 0, NULL));
	EXPECT_EQ(-EINVAL, waitvar_wait(self->fd, id, WAITVAR_OP_EQ, 1,
					WAITVAR_MODE_COUNT, 0, 0, NULL));
	/* A condition that holds does not make a bad request good. */
	EXPECT_EQ(-EINVAL, waitvar_wait(self->fd, id, WAITVAR_OP_EQ, 0,
					WAITVAR_MODE_IO, 0, 0, NULL));
	/* With a timeout they are fine, and every mode polls with 0. */
	EXPECT_EQ(-ETIMEDOUT, waitvar_wait(self->fd, id, WAITVAR_OP_EQ, 1,
					   WAITVAR_MODE_UNINTERRUPTIBLE, WAITVAR_WAIT_TIMEOUT, 0,
					   NULL));
	EXPECT_EQ(-ETIMEDOUT, waitvar_wait(self->fd, id, WAITVAR_OP_EQ, 1,
					   WAITVAR_MODE_IO, WAITVAR_WAIT_TIMEOUT, 0, NULL));
	EXPECT_EQ(-ETIMEDOUT, waitvar_wait(self->fd, id, WAITVAR_OP_EQ, 1,
					   WAITVAR_MODE_KILLABLE, WAITVAR_WAIT_TIMEOUT, 0, NULL));
}

/*
 * A waiter in @mode sleeps in @state, ignores a handled signal, and ends on
 * SET.  Its timeout is long, but IO and UNINTERRUPTIBLE waits may not ask
 * for more than max_uninterruptible_ms.
 */
static void check_mode_sleeps_through_signal(struct __test_metadata *_metadata, int fd,
					     uint32_t mode, uint32_t flags, char state)
{
	struct waiter w = { .fd = fd, .op = WAITVAR_OP_EQ, .operand = 1, .mode = mode,
			    .flags = flags | WAITVAR_WAIT_TIMEOUT,
			    .timeout_ns = uninterruptible_timeout_ns(60000 * NSEC_PER_MSEC) };
	struct waitvar_stats st;

	ASSERT_EQ(0, handle_sigusr1(0));
	ASSERT_EQ(0, waitvar_create(fd, 0, 0, &w.id));
	ASSERT_EQ(0, waiter_start(&w));
	ASSERT_TRUE(waiter_sleeps_in(&w, state));
	ASSERT_EQ(0, pthread_kill(w.thread, SIGUSR1));
	/* The signal waits, pending: it did not wake the waiter. */
	EXPECT_TRUE(task_signal_pending(getpid(), atomic_load(&w.tid), SIGUSR1));
	EXPECT_TRUE(waiter_not_woken(&w, state));
	ASSERT_EQ(0, waitvar_set(fd, w.id, 1));
	ASSERT_EQ(0, pthread_join(w.thread, NULL));
	EXPECT_EQ(0, w.ret);
	EXPECT_EQ(1U, w.seen);
	ASSERT_EQ(0, waitvar_stats(fd, w.id, &st));
	EXPECT_EQ(0U, st.signals);
	EXPECT_EQ(1U, st.woken);
}

TEST_F(wait_modes, killable_wait_sleeps_in_d_and_ignores_a_handled_signal)
{
	check_mode_sleeps_through_signal(_metadata, self->fd, WAITVAR_MODE_KILLABLE, 0, 'D');
}

TEST_F(wait_modes, uninterruptible_wait_sleeps_in_d_and_ignores_signals)
{
	check_mode_sleeps_through_signal(_metadata, self->fd, WAITVAR_MODE_UNINTERRUPTIBLE, 0,
					 'D');
}

TEST_F(wait_modes, io_wait_sleeps_in_d_and_ignores_signals)
{
	check_mode_sleeps_through_signal(_metadata, self->fd, WAITVAR_MODE_IO, 0, 'D');
}

TEST_F(wait_modes, exclusive_killable_and_io_waits_end_on_set)
{
	check_mode_sleeps_through_signal(_metadata, self->fd, WAITVAR_MODE_KILLABLE,
					 WAITVAR_WAIT_EXCLUSIVE, 'D');
	check_mode_sleeps_through_signal(_metadata, self->fd, WAITVAR_MODE_IO,
					 WAITVAR_WAIT_EXCLUSIVE, 'D');
	check_mode_sleeps_through_signal(_metadata, self->fd, WAITVAR_MODE_UNINTERRUPTIBLE,
					 WAITVAR_WAIT_EXCLUSIVE, 'D');
}

/* /proc/stat's procs_blocked: the tasks asleep in iowait now, or -1. */
static long procs_blocked(void)
{
	char buf[16384], *p;

	if (read_file("/proc/stat", buf, sizeof(buf)) <= 0)
		return -1;
	p = strstr(buf, "\nprocs_blocked ");
	return p ? strtol(p + strlen("\nprocs_blocked "), NULL, 10) : -1;
}

/*
 * Until @want holds of procs_blocked (10 s at most): "at least 1" while an
 * IO wait sleeps, "0" at some point while an UNINTERRUPTIBLE one does
 * (other tasks' disk IO may come and go).
 */
static bool procs_blocked_reaches(bool io)
{
	long long deadline = now_ns() + 10000 * NSEC_PER_MSEC;
	long n;

	while (now_ns() < deadline) {
		n = procs_blocked();
		if (n >= 0 && (io ? n >= 1 : n == 0))
			return true;
		usleep(1000);
	}
	return false;
}

TEST_F(wait_modes, io_waits_count_as_iowait_and_uninterruptible_ones_do_not)
{
	static const uint32_t timeouts[] = { 0, WAITVAR_WAIT_JIFFIES };

	for (int waitv = 0; waitv < 2; waitv++) {
		for (size_t t = 0; t < 2; t++) {
			for (int io = 0; io < 2; io++) {
				struct waiter w = {
					.fd = self->fd, .op = WAITVAR_OP_EQ, .operand = 1,
					.mode = io ? WAITVAR_MODE_IO : WAITVAR_MODE_UNINTERRUPTIBLE,
					.flags = WAITVAR_WAIT_TIMEOUT | timeouts[t],
					.timeout_ns = uninterruptible_timeout_ns(60000 * NSEC_PER_MSEC),
					.waitv = waitv };

				ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &w.id));
				ASSERT_EQ(0, waiter_start(&w));
				ASSERT_TRUE(waiter_sleeps_in(&w, 'D'));
				EXPECT_TRUE(procs_blocked_reaches(io))
					TH_LOG("%s %s %s: procs_blocked %ld", waitv ? "WAITV" : "WAIT",
					       t ? "jiffies" : "hrtimer", io ? "IO" : "UNINTERRUPTIBLE",
					       procs_blocked());
				ASSERT_EQ(0, waitvar_set(self->fd, w.id, 1));
				ASSERT_EQ(0, pthread_join(w.thread, NULL));
				EXPECT_EQ(0, w.ret);
				ASSERT_EQ(0, waitvar_destroy(self->fd, w.id));
			}
		}
	}
}

TEST_F(wait_modes, killable_untimed_wait_ends_only_by_sigkill)
{
	struct waitvar_stats st;
	uint32_t id = 0;
	int status = 0;
	long sleeps;
	pid_t child;

	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &id));
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		ASSERT_EQ(0, handle_sigusr1(0));
		/* Shares the open file, so the variable, with the parent. */
		_exit(waitvar_wait(self->fd, id, WAITVAR_OP_EQ, 1,
				   WAITVAR_MODE_KILLABLE, 0, 0, NULL) ? 2 : 0);
	}
	sleeps = task_asleep_count(child, child, 'D');
	ASSERT_LE(0, sleeps);
	ASSERT_EQ(0, kill(child, SIGUSR1));
	EXPECT_TRUE(task_signal_pending(child, child, SIGUSR1));
	EXPECT_TRUE(task_not_woken(child, child, 'D', sleeps));
	ASSERT_EQ(1U, wait_stat(self->fd, id, waiters, 1U));
	ASSERT_EQ(0, kill(child, SIGKILL));
	ASSERT_EQ(child, waitpid(child, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(SIGKILL, WTERMSIG(status));
	ASSERT_EQ(0, waitvar_stats(self->fd, id, &st));
	EXPECT_EQ(0U, st.waiters);
	EXPECT_EQ(1U, st.signals);
}

TEST_HARNESS_MAIN
