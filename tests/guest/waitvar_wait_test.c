// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/waitvar wait tests: modes, timeout kinds, signals and restarts,
 * WAITV, filtered wakes and the counters of STATS.
 */
#include <stdlib.h>
#include <sys/wait.h>

#include "waitvar_test.h"

/* The kernel's harness is written for -Wall; it has unused parameters. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

FIXTURE(wait) {
	int fd;
};

FIXTURE_SETUP(wait)
{
	self->fd = open("/dev/waitvar", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open /dev/waitvar: %s", strerror(errno));
}

FIXTURE_TEARDOWN(wait)
{
	close(self->fd);
}

static void install_handler(struct __test_metadata *_metadata, int flags)
{
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = flags };

	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
}

TEST_F(wait, uninterruptible_and_io_modes_need_a_timeout)
{
	uint32_t id = 0;

	ASSERT_EQ(0, wv_create(self->fd, 0, &id));
	EXPECT_EQ(-EINVAL, wv_wait_full(self->fd, id, WAITVAR_OP_EQ, 1, NO_TIMEOUT, 0,
					WAITVAR_MODE_UNINTERRUPTIBLE, NULL));
	EXPECT_EQ(-EINVAL, wv_wait_full(self->fd, id, WAITVAR_OP_EQ, 1, NO_TIMEOUT, 0,
					WAITVAR_MODE_IO, NULL));
	EXPECT_EQ(-EINVAL, wv_wait_full(self->fd, id, WAITVAR_OP_EQ, 1, NO_TIMEOUT, 0,
					WAITVAR_MODE_COUNT, NULL));
	/* A condition that holds does not make a bad request good. */
	EXPECT_EQ(-EINVAL, wv_wait_full(self->fd, id, WAITVAR_OP_EQ, 0, NO_TIMEOUT, 0,
					WAITVAR_MODE_IO, NULL));
	/* With a timeout they are fine, and every mode polls with 0. */
	EXPECT_EQ(-ETIMEDOUT, wv_wait_full(self->fd, id, WAITVAR_OP_EQ, 1, 0, 0,
					   WAITVAR_MODE_UNINTERRUPTIBLE, NULL));
	EXPECT_EQ(-ETIMEDOUT, wv_wait_full(self->fd, id, WAITVAR_OP_EQ, 1, 0, 0,
					   WAITVAR_MODE_IO, NULL));
	EXPECT_EQ(-ETIMEDOUT, wv_wait_full(self->fd, id, WAITVAR_OP_EQ, 1, 0, 0,
					   WAITVAR_MODE_KILLABLE, NULL));
}

/* A waiter in @mode sleeps in @state, ignores a handled signal, and ends on SET. */
static void check_mode_sleeps_through_signal(struct __test_metadata *_metadata, int fd,
					     uint32_t mode, uint32_t flags, char state)
{
	struct waiter w = { .fd = fd, .op = WAITVAR_OP_EQ, .operand = 1,
			    .timeout_ns = 60000 * NSEC_PER_MSEC, .mode = mode,
			    .flags = flags };
	struct waitvar_stats st;

	install_handler(_metadata, 0);
	ASSERT_EQ(0, wv_create(fd, 0, &w.id));
	ASSERT_EQ(0, waiter_start(&w));
	ASSERT_TRUE(waiter_sleeps_in(&w, state));
	ASSERT_EQ(0, pthread_kill(w.thread, SIGUSR1));
	usleep(100 * 1000);
	ASSERT_TRUE(waiter_sleeps_in(&w, state));
	ASSERT_EQ(0, wv_set(fd, w.id, 1));
	ASSERT_EQ(0, pthread_join(w.thread, NULL));
	EXPECT_EQ(0, w.ret);
	EXPECT_EQ(1U, w.seen);
	ASSERT_EQ(0, wv_stats(fd, w.id, &st));
	EXPECT_EQ(0U, st.signals);
	EXPECT_EQ(1U, st.woken);
}

TEST_F(wait, killable_wait_sleeps_in_d_and_ignores_a_handled_signal)
{
	check_mode_sleeps_through_signal(_metadata, self->fd, WAITVAR_MODE_KILLABLE, 0, 'D');
}

TEST_F(wait, uninterruptible_wait_sleeps_in_d_and_ignores_signals)
{
	check_mode_sleeps_through_signal(_metadata, self->fd, WAITVAR_MODE_UNINTERRUPTIBLE, 0,
					 'D');
}

TEST_F(wait, io_wait_sleeps_in_d_and_ignores_signals)
{
	check_mode_sleeps_through_signal(_metadata, self->fd, WAITVAR_MODE_IO, 0, 'D');
}

TEST_F(wait, exclusive_killable_and_io_waits_end_on_set)
{
	check_mode_sleeps_through_signal(_metadata, self->fd, WAITVAR_MODE_KILLABLE,
					 WAITVAR_WAIT_EXCLUSIVE, 'D');
	check_mode_sleeps_through_signal(_metadata, self->fd, WAITVAR_MODE_IO,
					 WAITVAR_WAIT_EXCLUSIVE, 'D');
	check_mode_sleeps_through_signal(_metadata, self->fd, WAITVAR_MODE_UNINTERRUPTIBLE,
					 WAITVAR_WAIT_EXCLUSIVE, 'D');
}

TEST_F(wait, killable_untimed_wait_ends_only_by_sigkill)
{
	struct waitvar_stats st;
	uint32_t id = 0;
	int status = 0;
	pid_t child;

	ASSERT_EQ(0, wv_create(self->fd, 0, &id));
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		install_handler(_metadata, 0);
		/* Shares the open file, so the variable, with the parent. */
		_exit(wv_wait_full(self->fd, id, WAITVAR_OP_EQ, 1, NO_TIMEOUT, 0,
				   WAITVAR_MODE_KILLABLE, NULL) ? 2 : 0);
	}
	ASSERT_TRUE(task_sleeps_in(child, child, 'D'));
	ASSERT_EQ(0, kill(child, SIGUSR1));
	usleep(100 * 1000);
	ASSERT_TRUE(task_sleeps_in(child, child, 'D'));
	ASSERT_EQ(1U, wait_stat(self->fd, id, waiters, 1U));
	ASSERT_EQ(0, kill(child, SIGKILL));
	ASSERT_EQ(child, waitpid(child, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(SIGKILL, WTERMSIG(status));
	ASSERT_EQ(0, wv_stats(self->fd, id, &st));
	EXPECT_EQ(0U, st.waiters);
	EXPECT_EQ(1U, st.signals);
}

TEST_F(wait, two_timeout_kinds_return_einval)
{
	struct waitvar_wait arg = { .op = WAITVAR_OP_EQ, .operand = 1,
				    .flags = WAITVAR_WAIT_TIMEOUT | WAITVAR_WAIT_ABS_MONOTONIC };

	ASSERT_EQ(0, wv_create(self->fd, 0, &arg.id));
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

	ASSERT_EQ(0, wv_create(fd, 0, &id));
	/*
	 * The deadline becomes a timeout when the wait starts, so the time
	 * spent is measured on CLOCK_MONOTONIC: the guest's CLOCK_REALTIME has
	 * been seen to step while a test ran.
	 */
	start = now_ns();
	deadline = clock_ns(clock) + span;
	ASSERT_EQ(-ETIMEDOUT, wv_wait_full(fd, id, WAITVAR_OP_EQ, 1, deadline, flag, 0, NULL));
	EXPECT_GE(now_ns() - start, span);
	EXPECT_LT(now_ns() - start, span + 5000 * NSEC_PER_MSEC);
	/* A deadline already past (1 ns after the epoch): one check, whatever the mode. */
	start = now_ns();
	EXPECT_EQ(-ETIMEDOUT, wv_wait_full(fd, id, WAITVAR_OP_EQ, 1, 1, flag,
					   WAITVAR_MODE_UNINTERRUPTIBLE, NULL));
	EXPECT_LT(now_ns() - start, 1000 * NSEC_PER_MSEC);
	EXPECT_EQ(0, wv_wait_full(fd, id, WAITVAR_OP_EQ, 0, 1, flag, 0, NULL));
	ASSERT_EQ(0, wv_stats(fd, id, &st));
	EXPECT_EQ(2U, st.timeouts);
	EXPECT_EQ(3U, st.waits);
}

TEST_F(wait, monotonic_deadline_returns_etimedout_not_before_it)
{
	check_deadline(_metadata, self->fd, CLOCK_MONOTONIC, WAITVAR_WAIT_ABS_MONOTONIC);
}

TEST_F(wait, realtime_deadline_returns_etimedout_not_before_it)
{
	check_deadline(_metadata, self->fd, CLOCK_REALTIME, WAITVAR_WAIT_ABS_REALTIME);
}

TEST_F(wait, deadline_wait_ends_early_when_condition_becomes_true)
{
	struct waiter w = { .fd = self->fd, .op = WAITVAR_OP_EQ, .operand = 3,
			    .flags = WAITVAR_WAIT_ABS_REALTIME };

	w.timeout_ns = clock_ns(CLOCK_REALTIME) + 60000 * NSEC_PER_MSEC;
	ASSERT_EQ(0, wv_create(self->fd, 0, &w.id));
	ASSERT_EQ(0, waiter_start(&w));
	ASSERT_TRUE(waiter_sleeps(&w));
	ASSERT_EQ(0, wv_set(self->fd, w.id, 3));
	ASSERT_EQ(0, pthread_join(w.thread, NULL));
	EXPECT_EQ(0, w.ret);
	EXPECT_EQ(3U, w.seen);
}

/*
 * With SA_RESTART, an untimed or deadline wait goes on after the handler;
 * a relative timeout fails with EINTR rather than start again.
 */
static int wait_after_restartable_signal(struct __test_metadata *_metadata, int fd,
					 long long timeout_ns, uint32_t flags)
{
	struct waiter w = { .fd = fd, .op = WAITVAR_OP_EQ, .operand = 1,
			    .timeout_ns = timeout_ns, .flags = flags };
	struct waitvar_stats st;

	install_handler(_metadata, SA_RESTART);
	if (wv_create(fd, 0, &w.id) || waiter_start(&w))
		return -1000;
	if (!waiter_sleeps(&w))
		return -1001;
	pthread_kill(w.thread, SIGUSR1);
	/* Restarted waits are back asleep; the others have returned. */
	usleep(200 * 1000);
	if (!atomic_load(&w.done) && waiter_sleeps(&w))
		wv_set(fd, w.id, 1);
	pthread_join(w.thread, NULL);
	if (wv_stats(fd, w.id, &st) || st.signals != 1)
		return -1002;
	return w.ret;
}

TEST_F(wait, untimed_and_deadline_waits_restart_after_sa_restart_handler)
{
	EXPECT_EQ(0, wait_after_restartable_signal(_metadata, self->fd, NO_TIMEOUT, 0));
	EXPECT_EQ(0, wait_after_restartable_signal(_metadata, self->fd,
						   now_ns() + 60000 * NSEC_PER_MSEC,
						   WAITVAR_WAIT_ABS_MONOTONIC));
}

TEST_F(wait, relative_timeout_wait_returns_eintr_even_with_sa_restart)
{
	EXPECT_EQ(-EINTR, wait_after_restartable_signal(_metadata, self->fd,
							60000 * NSEC_PER_MSEC, 0));
}

static int wv_waitv(int fd, struct waitvar_waitv_entry *e, uint32_t count, uint32_t mode,
		    long long timeout_ns, uint32_t flags, uint32_t *index, uint64_t *value)
{
	int ret;

	if (timeout_ns >= 0 && !(flags & (WAITVAR_WAIT_ABS_MONOTONIC | WAITVAR_WAIT_ABS_REALTIME)))
		flags |= WAITVAR_WAIT_TIMEOUT;
	ret = waitvar_waitv(fd, e, count, mode, flags, timeout_ns < 0 ? 0 : timeout_ns, value);
	if (ret < 0)
		return ret;
	if (index)
		*index = ret;
	return 0;
}

/* A thread blocked in WAITVAR_IOC_WAITV. */
struct vwaiter {
	int fd;
	struct waitvar_waitv_entry *e;
	uint32_t count, mode;
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
	v->ret = wv_waitv(v->fd, v->e, v->count, v->mode, v->timeout_ns, 0, &v->index,
			  &v->value);
	atomic_store(&v->done, 1);
	return NULL;
}

static bool vwaiter_sleeps_in(struct vwaiter *v, char state)
{
	return thread_sleeps_in(&v->tid, &v->done, state);
}

TEST_F(wait, waitv_returns_the_index_of_the_first_entry_that_holds)
{
	struct waitvar_waitv_entry e[4];
	uint64_t value = 0;
	uint32_t index = 99, i;

	for (i = 0; i < 4; i++) {
		e[i] = (struct waitvar_waitv_entry){ .op = WAITVAR_OP_GE, .operand = 10 };
		ASSERT_EQ(0, wv_create(self->fd, i == 2 || i == 3 ? 10 + i : 0, &e[i].id));
	}
	ASSERT_EQ(0, wv_waitv(self->fd, e, 4, 0, NO_TIMEOUT, 0, &index, &value));
	EXPECT_EQ(2U, index);
	EXPECT_EQ(12U, value);
	/* No entry holds: a zero timeout is a poll of them all. */
	EXPECT_EQ(-ETIMEDOUT, wv_waitv(self->fd, e, 2, 0, 0, 0, &index, &value));
}

TEST_F(wait, waitv_of_128_variables_ends_when_any_one_holds)
{
	static struct waitvar_waitv_entry e[WAITVAR_WAITV_MAX];
	struct vwaiter v = { .fd = self->fd, .e = e, .count = WAITVAR_WAITV_MAX,
			     .timeout_ns = NO_TIMEOUT };
	struct waitvar_stats st;
	uint32_t i;

	ASSERT_EQ(128, WAITVAR_WAITV_MAX);
	for (i = 0; i < WAITVAR_WAITV_MAX; i++) {
		e[i] = (struct waitvar_waitv_entry){ .op = WAITVAR_OP_EQ, .operand = 1000 + i };
		ASSERT_EQ(0, wv_create(self->fd, 0, &e[i].id));
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
		ASSERT_EQ(0, wv_set(self->fd, e[5].id, i));
		usleep(10 * 1000);
		ASSERT_EQ(0, wv_stats(self->fd, e[5].id, &st));
		if (st.spurious)
			break;
	}
	ASSERT_LE(1U, st.spurious);
	EXPECT_EQ(st.spurious, st.woken);
	ASSERT_TRUE(vwaiter_sleeps_in(&v, 'S'));
	ASSERT_EQ(0, wv_set(self->fd, e[77].id, 1077));
	ASSERT_EQ(0, pthread_join(v.thread, NULL));
	EXPECT_EQ(0, v.ret);
	EXPECT_EQ(77U, v.index);
	EXPECT_EQ(1077U, v.value);
	ASSERT_EQ(0, wv_stats(self->fd, e[77].id, &st));
	/* 0 if the wake came while the waiter was still queueing, not asleep. */
	EXPECT_GE(1U, st.woken);
	EXPECT_EQ(0U, st.spurious);
	EXPECT_EQ(0U, st.waiters);
	EXPECT_EQ(1U, st.waits);
}

TEST_F(wait, waitv_modes_timeouts_and_destroy)
{
	struct waitvar_waitv_entry e[2] = {
		{ .op = WAITVAR_OP_EQ, .operand = 1 }, { .op = WAITVAR_OP_EQ, .operand = 1 },
	};
	struct vwaiter v = { .fd = self->fd, .e = e, .count = 2,
			     .mode = WAITVAR_MODE_UNINTERRUPTIBLE,
			     .timeout_ns = 60000 * NSEC_PER_MSEC };
	long long start;

	ASSERT_EQ(0, wv_create(self->fd, 0, &e[0].id));
	ASSERT_EQ(0, wv_create(self->fd, 0, &e[1].id));
	start = now_ns();
	EXPECT_EQ(-ETIMEDOUT, wv_waitv(self->fd, e, 2, WAITVAR_MODE_IO, 100 * NSEC_PER_MSEC,
				       0, NULL, NULL));
	EXPECT_GE(now_ns() - start, 100 * NSEC_PER_MSEC);
	EXPECT_EQ(-ETIMEDOUT, wv_waitv(self->fd, e, 2, WAITVAR_MODE_KILLABLE,
				       now_ns() + 50 * NSEC_PER_MSEC,
				       WAITVAR_WAIT_ABS_MONOTONIC, NULL, NULL));
	ASSERT_EQ(0, pthread_create(&v.thread, NULL, vwaiter_main, &v));
	ASSERT_TRUE(vwaiter_sleeps_in(&v, 'D'));
	ASSERT_EQ(0, wv_id_cmd(self->fd, WAITVAR_IOC_DESTROY, e[1].id));
	ASSERT_EQ(0, pthread_join(v.thread, NULL));
	EXPECT_EQ(-EIDRM, v.ret);
}

TEST_F(wait, waitv_signal_returns_eintr)
{
	struct waitvar_waitv_entry e = { .op = WAITVAR_OP_EQ, .operand = 1 };
	struct vwaiter v = { .fd = self->fd, .e = &e, .count = 1, .timeout_ns = NO_TIMEOUT };
	struct waitvar_stats st;

	install_handler(_metadata, 0);
	ASSERT_EQ(0, wv_create(self->fd, 0, &e.id));
	ASSERT_EQ(0, pthread_create(&v.thread, NULL, vwaiter_main, &v));
	ASSERT_TRUE(vwaiter_sleeps_in(&v, 'S'));
	ASSERT_EQ(0, pthread_kill(v.thread, SIGUSR1));
	ASSERT_EQ(0, pthread_join(v.thread, NULL));
	EXPECT_EQ(-EINTR, v.ret);
	ASSERT_EQ(0, wv_stats(self->fd, e.id, &st));
	EXPECT_EQ(1U, st.signals);
	EXPECT_EQ(0U, st.waiters);
}

TEST_F(wait, waitv_bad_input_returns_the_documented_errno)
{
	static struct waitvar_waitv_entry e[WAITVAR_WAITV_MAX + 1];
	uint32_t i;

	for (i = 0; i <= WAITVAR_WAITV_MAX; i++) {
		e[i] = (struct waitvar_waitv_entry){ .op = WAITVAR_OP_EQ, .operand = 5 };
		ASSERT_EQ(0, wv_create(self->fd, 5, &e[i].id));
	}
	EXPECT_EQ(-EINVAL, wv_waitv(self->fd, e, 0, 0, 0, 0, NULL, NULL));
	EXPECT_EQ(-EINVAL, wv_waitv(self->fd, e, WAITVAR_WAITV_MAX + 1, 0, 0, 0, NULL, NULL));
	EXPECT_EQ(-EINVAL, wv_waitv(self->fd, e, 1, 0, 0, WAITVAR_WAIT_EXCLUSIVE, NULL, NULL));
	EXPECT_EQ(-EINVAL, wv_waitv(self->fd, e, 1, 0, 0, 1U << 31, NULL, NULL));
	EXPECT_EQ(-EINVAL, wv_waitv(self->fd, e, 1, WAITVAR_MODE_IO, NO_TIMEOUT, 0, NULL,
				    NULL));
	EXPECT_EQ(-EINVAL, wv_waitv(self->fd, e, 1, WAITVAR_MODE_COUNT, 0, 0, NULL, NULL));
	EXPECT_EQ(-EFAULT, wv_waitv(self->fd, NULL, 1, 0, 0, 0, NULL, NULL));
	e[3].op = WAITVAR_OP_COUNT;
	EXPECT_EQ(-EINVAL, wv_waitv(self->fd, e, 4, 0, 0, 0, NULL, NULL));
	e[3].op = WAITVAR_OP_EQ;
	e[3].flags = 1;
	EXPECT_EQ(-EINVAL, wv_waitv(self->fd, e, 4, 0, 0, 0, NULL, NULL));
	e[3].flags = 0;
	e[3].reserved = 1;
	EXPECT_EQ(-EINVAL, wv_waitv(self->fd, e, 4, 0, 0, 0, NULL, NULL));
	e[3].reserved = 0;
	e[3].id = 99999;
	EXPECT_EQ(-ENOENT, wv_waitv(self->fd, e, 4, 0, 0, 0, NULL, NULL));
	/* The full 128 is accepted. */
	e[3].id = e[4].id;
	EXPECT_EQ(0, wv_waitv(self->fd, e, WAITVAR_WAITV_MAX, 0, 0, 0, NULL, NULL));
}

/* Two waiters on one variable for different values; returns the spurious count. */
static int spurious_after_wake(int fd, uint32_t wake_flags)
{
	struct waiter a = { .fd = fd, .op = WAITVAR_OP_EQ, .operand = 1,
			    .timeout_ns = NO_TIMEOUT };
	struct waiter b = { .fd = fd, .op = WAITVAR_OP_EQ, .operand = 2,
			    .timeout_ns = NO_TIMEOUT };
	struct waitvar_stats st;
	uint64_t value = 0;
	int woken;

	if (wv_create(fd, 0, &a.id))
		return -1;
	b.id = a.id;
	if (waiter_start(&a) || waiter_start(&b) || !waiter_sleeps(&a) || !waiter_sleeps(&b))
		return -1;
	/* Make a's condition true without a wake, then wake as asked. */
	if (wv_add(fd, a.id, 1, 0, &value))
		return -1;
	woken = wv_wake_nr_flags(fd, a.id, 0, wake_flags);
	pthread_join(a.thread, NULL);
	if (a.ret || a.seen != 1)
		return -1;
	if (wake_flags & WAITVAR_WAKE_FILTER) {
		/* Only a was woken, and the count says so; b stays asleep. */
		usleep(100 * 1000);
		if (woken != 1 || !waiter_sleeps(&b) || wv_stats(fd, a.id, &st) || st.spurious)
			return -1;
	} else {
		/* b was woken too: let it find its condition false and sleep again. */
		(void)wait_stat(fd, a.id, spurious, 1U);
		if (!waiter_sleeps(&b))
			return -1;
	}
	wv_set(fd, b.id, 2);
	pthread_join(b.thread, NULL);
	if (b.ret || wv_stats(fd, a.id, &st))
		return -1;
	return st.spurious;
}

TEST_F(wait, unfiltered_wake_makes_a_spurious_wakeup)
{
	EXPECT_EQ(1, spurious_after_wake(self->fd, 0));
}

TEST_F(wait, filtered_wake_wakes_only_waiters_whose_condition_holds)
{
	EXPECT_EQ(0, spurious_after_wake(self->fd, WAITVAR_WAKE_FILTER));
}

TEST_F(wait, stats_count_waits_wakes_timeouts_and_signals)
{
	struct waiter w = { .fd = self->fd, .op = WAITVAR_OP_EQ, .operand = 4,
			    .timeout_ns = NO_TIMEOUT };
	struct waitvar_stats st = { .flags = 1 };
	uint64_t value = 0;
	uint32_t id = 0;

	ASSERT_EQ(0, wv_create(self->fd, 0, &w.id));
	ASSERT_EQ(0, wv_create(self->fd, 0, &id));
	st.id = w.id;
	EXPECT_EQ(-1, ioctl(self->fd, WAITVAR_IOC_STATS, &st));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, wv_stats(self->fd, w.id, &st));
	EXPECT_EQ(0U, st.waits + st.wakes + st.woken + st.spurious + st.timeouts + st.signals);
	EXPECT_LT(st.bucket, 256U);

	EXPECT_EQ(-ETIMEDOUT, wv_wait(self->fd, w.id, WAITVAR_OP_EQ, 4, 10 * NSEC_PER_MSEC,
				      NULL));
	ASSERT_EQ(0, waiter_start(&w));
	ASSERT_TRUE(waiter_sleeps(&w));
	ASSERT_EQ(1U, wait_stat(self->fd, w.id, waiters, 1U));
	ASSERT_EQ(0, wv_set(self->fd, w.id, 3));		/* a wake, spurious */
	ASSERT_EQ(1U, wait_stat(self->fd, w.id, spurious, 1U));
	ASSERT_EQ(0, wv_add(self->fd, w.id, 1, 0, &value));	/* no wake */
	ASSERT_EQ(0, wv_id_cmd(self->fd, WAITVAR_IOC_WAKE, w.id));
	ASSERT_EQ(0, pthread_join(w.thread, NULL));
	ASSERT_EQ(0, w.ret);
	ASSERT_EQ(0, wv_stats(self->fd, w.id, &st));
	EXPECT_EQ(2U, st.waits);
	EXPECT_EQ(2U, st.wakes);
	EXPECT_EQ(2U, st.woken);
	EXPECT_EQ(1U, st.spurious);
	EXPECT_EQ(1U, st.timeouts);
	EXPECT_EQ(0U, st.signals);
	EXPECT_EQ(0U, st.waiters);
	/* Another variable's counters are its own. */
	ASSERT_EQ(0, wv_stats(self->fd, id, &st));
	EXPECT_EQ(0U, st.waits + st.wakes + st.woken);
}

#define NR_MANY 64

TEST_F(wait, wake_one_n_all_of_64_exclusive_waiters_counts_exactly)
{
	static struct waiter w[NR_MANY];
	uint64_t value = 0;
	uint32_t id = 0;
	int i;

	ASSERT_EQ(0, wv_create(self->fd, 1, &id));
	for (i = 0; i < NR_MANY; i++) {
		w[i] = (struct waiter){ .fd = self->fd, .id = id, .op = WAITVAR_OP_EQ,
					.operand = 0, .timeout_ns = NO_TIMEOUT,
					.flags = WAITVAR_WAIT_EXCLUSIVE };
		ASSERT_EQ(0, waiter_start(&w[i]));
	}
	for (i = 0; i < NR_MANY; i++)
		ASSERT_TRUE(waiter_sleeps(&w[i]));
	ASSERT_EQ((uint32_t)NR_MANY, wait_stat(self->fd, id, waiters, (uint32_t)NR_MANY));
	/* The condition now holds, but only the wakes below end waits. */
	ASSERT_EQ(0, wv_add(self->fd, id, -1, 0, &value));
	EXPECT_EQ(1, wv_wake_nr(self->fd, id, 1));
	EXPECT_EQ(1, settled_done(w, NR_MANY, 1));
	EXPECT_EQ(10, wv_wake_nr(self->fd, id, 10));
	EXPECT_EQ(11, settled_done(w, NR_MANY, 11));
	EXPECT_EQ(NR_MANY - 11, wv_wake_nr(self->fd, id, 0));
	EXPECT_EQ(NR_MANY, settled_done(w, NR_MANY, NR_MANY));
	EXPECT_EQ(0, wv_wake_nr(self->fd, id, 0));
	for (i = 0; i < NR_MANY; i++) {
		ASSERT_EQ(0, pthread_join(w[i].thread, NULL));
		EXPECT_EQ(0, w[i].ret);
	}
}

TEST_F(wait, filtered_wake_of_64_waiters_counts_those_whose_condition_holds)
{
	static struct waiter w[NR_MANY];
	uint64_t value = 0;
	uint32_t id = 0;
	int i;

	ASSERT_EQ(0, wv_create(self->fd, 0, &id));
	for (i = 0; i < NR_MANY; i++) {
		/* Even waiters want bit 0, odd ones bit 1. */
		w[i] = (struct waiter){ .fd = self->fd, .id = id, .op = WAITVAR_OP_ANY,
					.operand = i % 2 ? 2 : 1, .timeout_ns = NO_TIMEOUT,
					.flags = i % 4 < 2 ? 0 : WAITVAR_WAIT_EXCLUSIVE };
		ASSERT_EQ(0, waiter_start(&w[i]));
	}
	for (i = 0; i < NR_MANY; i++)
		ASSERT_TRUE(waiter_sleeps(&w[i]));
	ASSERT_EQ(0, wv_add(self->fd, id, 1, 0, &value));
	/* 32 hold: 16 plain, 16 exclusive of which nr = 4 may go. */
	EXPECT_EQ(20, wv_wake_nr_flags(self->fd, id, 4, WAITVAR_WAKE_FILTER));
	EXPECT_EQ(20, settled_done(w, NR_MANY, 20));
	EXPECT_EQ(12, wv_wake_nr_flags(self->fd, id, 0, WAITVAR_WAKE_FILTER));
	EXPECT_EQ(32, settled_done(w, NR_MANY, 32));
	ASSERT_EQ(0, wv_add(self->fd, id, 2, 0, &value));
	EXPECT_EQ(32, wv_wake_nr_flags(self->fd, id, 0, WAITVAR_WAKE_FILTER));
	for (i = 0; i < NR_MANY; i++) {
		ASSERT_EQ(0, pthread_join(w[i].thread, NULL));
		EXPECT_EQ(0, w[i].ret);
	}
	EXPECT_EQ(0U, wait_stat(self->fd, id, spurious, 0U));
}

TEST_F(wait, destroy_under_64_waiters_of_every_mode_returns_eidrm)
{
	static const uint32_t modes[] = { WAITVAR_MODE_INTERRUPTIBLE, WAITVAR_MODE_KILLABLE,
					  WAITVAR_MODE_IO, WAITVAR_MODE_UNINTERRUPTIBLE };
	static struct waiter w[NR_MANY];
	uint32_t id = 0;
	int i;

	ASSERT_EQ(0, wv_create(self->fd, 0, &id));
	for (i = 0; i < NR_MANY; i++) {
		w[i] = (struct waiter){ .fd = self->fd, .id = id, .op = WAITVAR_OP_EQ,
					.operand = 1, .timeout_ns = 60000 * NSEC_PER_MSEC,
					.mode = modes[i % 4],
					.flags = i % 8 < 4 ? 0 : WAITVAR_WAIT_EXCLUSIVE };
		ASSERT_EQ(0, waiter_start(&w[i]));
	}
	ASSERT_EQ((uint32_t)NR_MANY, wait_stat(self->fd, id, waiters, (uint32_t)NR_MANY));
	for (i = 0; i < NR_MANY; i++)
		ASSERT_TRUE(waiter_sleeps_in(&w[i], w[i].mode ? 'D' : 'S'));
	ASSERT_EQ(0, wv_id_cmd(self->fd, WAITVAR_IOC_DESTROY, id));
	for (i = 0; i < NR_MANY; i++) {
		ASSERT_EQ(0, pthread_join(w[i].thread, NULL));
		EXPECT_EQ(-EIDRM, w[i].ret) TH_LOG("waiter %d", i);
	}
}

TEST_F(wait, closing_one_fd_of_a_forked_pair_leaves_the_other_waiting)
{
	uint64_t value = 0;
	int status = 0, keep;
	uint32_t id = 0;
	pid_t child;

	ASSERT_EQ(0, wv_create(self->fd, 0, &id));
	keep = dup(self->fd);
	ASSERT_LE(0, keep);
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		close(keep);
		_exit(wv_wait(self->fd, id, WAITVAR_OP_EQ, 9, 60000 * NSEC_PER_MSEC, &value) ||
		      value != 9 ? 3 : 0);
	}
	ASSERT_TRUE(task_sleeps_in(child, child, 'S'));
	/* The parent's first descriptor goes; the open file stays. */
	ASSERT_EQ(0, close(self->fd));
	self->fd = keep;
	usleep(100 * 1000);
	ASSERT_TRUE(task_sleeps_in(child, child, 'S'));
	ASSERT_EQ(0, wv_set(keep, id, 9));
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_HARNESS_MAIN
