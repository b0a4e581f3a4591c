// SPDX-License-Identifier: GPL-2.0
/*
 * WAIT's timeouts: a relative timeout, CLOCK_MONOTONIC and CLOCK_REALTIME
 * deadlines, and what each does after a signal whose handler has SA_RESTART;
 * the hrtimer's precision next to the jiffies variants' (WAITVAR_WAIT_JIFFIES),
 * REALTIME deadlines that follow clock_settime(), and MONOTONIC ones read in
 * the caller's time namespace, for WAIT and WAITV.
 */
#include <limits.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "waitvar_test.h"

/* The kernel's harness is written for -Wall; it has unused parameters. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

FIXTURE(wait_timeout) {
	int fd;
	char instance[96];	/* a tracefs instance to remove, or "" */
};

FIXTURE_SETUP(wait_timeout)
{
	self->fd = open("/dev/waitvar", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open /dev/waitvar: %s", strerror(errno));
	self->instance[0] = '\0';
}

FIXTURE_TEARDOWN(wait_timeout)
{
	char path[160];

	if (self->instance[0]) {
		snprintf(path, sizeof(path), "%s/events/timer/timer_start/enable", self->instance);
		write_file(path, "0");
		snprintf(path, sizeof(path), "%s/events/timer/hrtimer_start/enable",
			 self->instance);
		write_file(path, "0");
		rmdir(self->instance);
	}
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
	 * Not early is checked on the deadline's own clock: a REALTIME one
	 * follows the clock, which the guest has been seen to step while a
	 * test ran.  Not endless is checked on CLOCK_MONOTONIC.
	 */
	start = now_ns();
	deadline = clock_ns(clock) + span;
	ASSERT_EQ(-ETIMEDOUT, waitvar_wait(fd, id, WAITVAR_OP_EQ, 1, 0, flag, deadline, NULL));
	EXPECT_GE(clock_ns(clock), deadline);
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

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

#define TIMENS_OFFSET_S (10 * 24 * 3600LL)	/* the namespace's clock: 10 days on */

/*
 * In the time namespace: WAIT (or WAITV) until a CLOCK_MONOTONIC deadline
 * @span on, then already past, as the namespace shows the clock.  The exit
 * status says what went wrong: taken on the host's clock, the first waits
 * ten days and the parent ends it.
 */
static int timens_child(int fd, uint32_t id, bool waitv, long long host_before)
{
	const long long span = 200 * NSEC_PER_MSEC;
	struct waitvar_waitv_entry e = { .id = id, .op = WAITVAR_OP_EQ, .operand = 1 };
	long long deadline = clock_ns(CLOCK_MONOTONIC);
	int pass, ret;

	if (deadline - host_before < TIMENS_OFFSET_S * 1000 * NSEC_PER_MSEC)
		return 10;
	for (pass = 0; pass < 2; pass++) {
		deadline = pass ? clock_ns(CLOCK_MONOTONIC) - span : clock_ns(CLOCK_MONOTONIC) + span;
		ret = waitv ? waitvar_waitv(fd, &e, 1, 0, WAITVAR_WAIT_ABS_MONOTONIC, deadline, NULL) :
			      waitvar_wait(fd, id, WAITVAR_OP_EQ, 1, 0, WAITVAR_WAIT_ABS_MONOTONIC,
					   deadline, NULL);
		if (ret != -ETIMEDOUT)
			return 11 + pass;
		if (clock_ns(CLOCK_MONOTONIC) < deadline)
			return 13;
	}
	return 0;
}

/*
 * clock_nanosleep() and futex read a CLOCK_MONOTONIC deadline on the
 * caller's time namespace's clock; so must WAIT and WAITV.
 */
TEST_F(wait_timeout, monotonic_deadline_is_read_on_the_callers_time_namespace_clock)
{
	static const char *const why[] = {
		[10] = "the child's CLOCK_MONOTONIC is not 10 days on: no time namespace",
		[11] = "the deadline 200 ms on did not return ETIMEDOUT",
		[12] = "the deadline already past did not return ETIMEDOUT",
		[13] = "the wait returned before its deadline",
	};
	char offsets[64];
	long long host, until;
	uint32_t id = 0;
	int waitv, status;
	pid_t pid, done;

	if (unshare(CLONE_NEWTIME)) {
		ASSERT_EQ(EINVAL, errno) TH_LOG("unshare(CLONE_NEWTIME): %s", strerror(errno));
		SKIP(return, "no time namespaces in this kernel (CONFIG_TIME_NS)");
	}
	snprintf(offsets, sizeof(offsets), "monotonic %lld 0", TIMENS_OFFSET_S);
	ASSERT_EQ(0, write_file("/proc/self/timens_offsets", offsets))
		TH_LOG("cannot set the time namespace's offset: %s", strerror(errno));
	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &id));
	for (waitv = 0; waitv < 2; waitv++) {
		host = clock_ns(CLOCK_MONOTONIC);
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid)
			_exit(timens_child(self->fd, id, waitv, host));
		/* Both waits take 200 ms; ten seconds means one is on the host's clock. */
		until = now_ns() + 10000 * NSEC_PER_MSEC;
		while (!(done = waitpid(pid, &status, WNOHANG)) && now_ns() < until)
			usleep(10 * 1000);
		if (!done) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
		}
		ASSERT_EQ(pid, done) TH_LOG("%s still waits after 10 s: its deadline was read on the host's clock, 10 days behind",
					    waitv ? "WAITV" : "WAIT");
		ASSERT_TRUE(WIFEXITED(status));
		EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("%s: %s", waitv ? "WAITV" : "WAIT",
						 WEXITSTATUS(status) < 14 && why[WEXITSTATUS(status)] ?
						 why[WEXITSTATUS(status)] : "?");
	}
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
					 uint32_t flags, long long timeout_ns, bool waitv)
{
	struct waiter w = { .fd = fd, .op = WAITVAR_OP_EQ, .operand = 1,
			    .flags = flags, .timeout_ns = timeout_ns, .waitv = waitv };
	long long deadline = now_ns() + 10000 * NSEC_PER_MSEC;
	struct waitvar_stats st;
	pid_t tid;

	ASSERT_EQ(0, handle_sigusr1(SA_RESTART));
	if (waitvar_create(fd, 0, 0, &w.id) || waiter_start(&w))
		return -1000;
	if (!waiter_sleeps(&w))
		return -1001;
	tid = atomic_load(&w.tid);
	pthread_kill(w.thread, SIGUSR1);
	/* A restarted wait sleeps once more; the others return. */
	while (!atomic_load(&w.done) &&
	       !(thread_sleeps_count(tid) > w.sleeps && task_state(getpid(), tid) == 'S') &&
	       now_ns() < deadline)
		usleep(1000);
	if (!atomic_load(&w.done))
		waitvar_set(fd, w.id, 1);
	pthread_join(w.thread, NULL);
	if (waitvar_stats(fd, w.id, &st) || st.signals != 1)
		return -1002;
	return w.ret;
}

TEST_F(wait_timeout, untimed_and_deadline_waits_restart_after_sa_restart_handler)
{
	for (int waitv = 0; waitv < 2; waitv++) {
		EXPECT_EQ(0, wait_after_restartable_signal(_metadata, self->fd, 0, 0, waitv))
			TH_LOG("%s, untimed", waitv ? "WAITV" : "WAIT");
		EXPECT_EQ(0, wait_after_restartable_signal(_metadata, self->fd,
							   WAITVAR_WAIT_ABS_MONOTONIC,
							   now_ns() + 60000 * NSEC_PER_MSEC, waitv))
			TH_LOG("%s, deadline", waitv ? "WAITV" : "WAIT");
	}
}

TEST_F(wait_timeout, relative_timeout_wait_returns_eintr_even_with_sa_restart)
{
	static const uint32_t kinds[] = { 0, WAITVAR_WAIT_JIFFIES };

	for (int waitv = 0; waitv < 2; waitv++) {
		for (size_t k = 0; k < 2; k++) {
			EXPECT_EQ(-EINTR, wait_after_restartable_signal(_metadata, self->fd,
									WAITVAR_WAIT_TIMEOUT | kinds[k],
									60000 * NSEC_PER_MSEC, waitv))
				TH_LOG("%s, %s", waitv ? "WAITV" : "WAIT", k ? "jiffies" : "hrtimer");
		}
	}
}

/*
 * A child process's WAIT (or one-entry WAITV) with a relative timeout of
 * @timeout_ns; its exit status is the call's errno (0: success), 100 if it
 * timed out before its timeout.
 */
static pid_t timed_wait_child(int fd, uint32_t id, long long timeout_ns, bool waitv)
{
	pid_t pid = fork();

	if (pid == 0) {
		struct waitvar_waitv_entry e = { .id = id, .op = WAITVAR_OP_EQ, .operand = 1 };
		long long start = now_ns();
		int ret;

		if (waitv)
			ret = waitvar_waitv(fd, &e, 1, 0, WAITVAR_WAIT_TIMEOUT, timeout_ns, NULL);
		else
			ret = waitvar_wait(fd, id, WAITVAR_OP_EQ, 1, 0, WAITVAR_WAIT_TIMEOUT,
					   timeout_ns, NULL);
		if (ret == -ETIMEDOUT && now_ns() - start < timeout_ns)
			_exit(100);
		_exit(ret < 0 ? -ret : 0);
	}
	return pid;
}

/* SIGSTOP, then SIGCONT, to @pid, each seen by waitpid(); false if it exited. */
static bool stop_and_continue(pid_t pid)
{
	int status;

	if (kill(pid, SIGSTOP) || waitpid(pid, &status, WUNTRACED) != pid || !WIFSTOPPED(status))
		return false;
	if (kill(pid, SIGCONT) || waitpid(pid, &status, WCONTINUED) != pid ||
	    !WIFCONTINUED(status))
		return false;
	return true;
}

/*
 * Job control does not end a wait with a relative timeout: stopped and
 * continued (SIGSTOP, SIGCONT, no handler), a child's WAIT or WAITV is
 * restarted, as STATS shows (a second wait, one signal, asleep again),
 * and then ends as it would have: with 0 when the condition comes to hold,
 * with ETIMEDOUT, no sooner than its timeout, when it does not.
 */
TEST_F(wait_timeout, stop_and_continue_resume_a_relative_timeout_wait)
{
	struct waitvar_stats st;
	int status;

	for (int waitv = 0; waitv < 2; waitv++) {
		for (int times_out = 0; times_out < 2; times_out++) {
			long long timeout = (times_out ? 5000 : 60000) * NSEC_PER_MSEC;
			uint32_t id = 0;
			pid_t pid;

			ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &id));
			pid = timed_wait_child(self->fd, id, timeout, waitv);
			ASSERT_LT(0, pid);
			ASSERT_TRUE(stats_show_asleep(self->fd, id, pid, pid, 1, 'S'));
			ASSERT_TRUE(stop_and_continue(pid));
			EXPECT_TRUE(stats_show_asleep(self->fd, id, pid, pid, 2, 'S'))
				TH_LOG("%s: the wait did not go on after SIGCONT",
				       waitv ? "WAITV" : "WAIT");
			if (!times_out)
				ASSERT_EQ(0, waitvar_set(self->fd, id, 1));
			ASSERT_EQ(pid, waitpid(pid, &status, 0));
			ASSERT_TRUE(WIFEXITED(status));
			EXPECT_EQ(times_out ? ETIMEDOUT : 0, WEXITSTATUS(status))
				TH_LOG("%s%s: the child's wait ended with status %d",
				       waitv ? "WAITV" : "WAIT",
				       times_out ? ", timing out" : "", WEXITSTATUS(status));
			ASSERT_EQ(0, waitvar_stats(self->fd, id, &st));
			EXPECT_EQ(1U, st.signals);
		}
	}
}

struct raw_timed_wait {
	int fd;
	uint32_t id;
	bool waitv;
	struct waitvar_waitv_entry e;
	struct waitvar_wait wait;
	struct waitvar_waitv wv;
	atomic_int tid;
	long long start, returned;
	int ret;
};

static void *raw_timed_wait_main(void *data)
{
	struct raw_timed_wait *r = data;

	atomic_store(&r->tid, gettid());
	r->start = now_ns();
	if (r->waitv)
		r->ret = ioctl(r->fd, WAITVAR_IOC_WAITV, &r->wv) ? -errno : 0;
	else
		r->ret = ioctl(r->fd, WAITVAR_IOC_WAIT, &r->wait) ? -errno : 0;
	r->returned = now_ns();
	return NULL;
}

/*
 * A handler (no SA_RESTART) ends a relative timeout wait with EINTR, and
 * the argument's timeout_ns then holds the time it had left: no more than
 * the timeout less the time it was seen asleep before the signal, no less
 * than the timeout less the whole call.
 */
TEST_F(wait_timeout, eintr_leaves_the_time_left_in_timeout_ns)
{
	const long long timeout = 60000 * NSEC_PER_MSEC;

	ASSERT_EQ(0, handle_sigusr1(0));
	for (int waitv = 0; waitv < 2; waitv++) {
		struct raw_timed_wait r = { .fd = self->fd, .waitv = waitv };
		long long asleep, signalled, left;
		pthread_t thread;

		ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &r.id));
		r.e = (struct waitvar_waitv_entry){ .id = r.id, .op = WAITVAR_OP_EQ, .operand = 1 };
		r.wait = (struct waitvar_wait){ .id = r.id, .op = WAITVAR_OP_EQ, .operand = 1,
						.flags = WAITVAR_WAIT_TIMEOUT,
						.timeout_ns = timeout };
		r.wv = (struct waitvar_waitv){ .entries = (uintptr_t)&r.e, .count = 1,
					       .flags = WAITVAR_WAIT_TIMEOUT,
					       .timeout_ns = timeout };
		ASSERT_EQ(0, pthread_create(&thread, NULL, raw_timed_wait_main, &r));
		while (!atomic_load(&r.tid))
			;
		ASSERT_TRUE(task_sleeps_in(getpid(), atomic_load(&r.tid), 'S'));
		asleep = now_ns();
		usleep(200 * 1000);	/* time to take off the timeout; no verdict on it */
		signalled = now_ns();
		pthread_kill(thread, SIGUSR1);
		ASSERT_EQ(0, pthread_join(thread, NULL));
		ASSERT_EQ(-EINTR, r.ret);
		left = waitv ? (long long)r.wv.timeout_ns : (long long)r.wait.timeout_ns;
		EXPECT_GE(timeout - (signalled - asleep), left)
			TH_LOG("%s: %lld ns left of %lld, %lld ns after it was seen asleep",
			       waitv ? "WAITV" : "WAIT", left, timeout, signalled - asleep);
		EXPECT_LE(timeout - (r.returned - r.start), left)
			TH_LOG("%s: %lld ns left of %lld after a call of %lld ns",
			       waitv ? "WAITV" : "WAIT", left, timeout, r.returned - r.start);
	}
}

#define JIFFY_SAMPLES 11

/* CLOCK_MONOTONIC_COARSE: the time of the last tick, in ns. */
static long long coarse_ns(void)
{
	struct timespec c;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &c);
	return c.tv_sec * 1000 * NSEC_PER_MSEC + c.tv_nsec;
}

/* Spins until a tick moves CLOCK_MONOTONIC_COARSE, then @ns more. */
static void after_a_tick(long long ns)
{
	long long c0 = coarse_ns(), end;

	while (coarse_ns() == c0)
		;
	end = now_ns() + ns;
	while (now_ns() < end)
		;
}

/*
 * Wherever in a tick it starts, a jiffies wait of two and a half ticks does
 * not return -ETIMEDOUT before its timeout has passed: eleven waits each for
 * WAIT and WAITV, started at points across a tick.
 */
TEST_F(wait_timeout, jiffies_timeout_does_not_end_early_wherever_it_starts)
{
	long long tick, timeout, start, elapsed;
	struct timespec res;
	uint32_t id = 0;

	ASSERT_EQ(0, clock_getres(CLOCK_MONOTONIC_COARSE, &res));
	tick = res.tv_sec * 1000 * NSEC_PER_MSEC + res.tv_nsec;
	timeout = 5 * tick / 2;
	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &id));
	for (int waitv = 0; waitv < 2; waitv++) {
		struct waitvar_waitv_entry e = { .id = id, .op = WAITVAR_OP_EQ, .operand = 1 };
		uint32_t flags = WAITVAR_WAIT_TIMEOUT | WAITVAR_WAIT_JIFFIES;
		int ret;

		for (int k = 0; k < JIFFY_SAMPLES; k++) {
			after_a_tick(k * tick / JIFFY_SAMPLES);
			start = now_ns();
			if (waitv)
				ret = waitvar_waitv(self->fd, &e, 1, 0, flags, timeout, NULL);
			else
				ret = waitvar_wait(self->fd, id, WAITVAR_OP_EQ, 1, 0, flags,
						   timeout, NULL);
			elapsed = now_ns() - start;
			EXPECT_EQ(-ETIMEDOUT, ret);
			EXPECT_GE(elapsed, timeout)
				TH_LOG("%s started %d/%d into a tick: %lld us of %lld (tick %lld us)",
				       waitv ? "WAITV" : "WAIT", k, JIFFY_SAMPLES, elapsed / 1000,
				       timeout / 1000, tick / 1000);
		}
	}
}

/*
 * Makes tracefs instance @name_PID (its path into @instance) with the
 * event timer:@event on, filtered to the calling thread; the path of its
 * trace goes into @trace.  0, or -1 with errno.
 */
static int trace_timer_event(char *instance, size_t isize, const char *tracefs,
			     const char *name, const char *event, char *trace, size_t tsize)
{
	char path[192], filter[48];

	snprintf(instance, isize, "%s/instances/%s_%d", tracefs, name, (int)getpid());
	if (mkdir(instance, 0700))
		return -1;
	snprintf(path, sizeof(path), "%s/events/timer/%s/filter", instance, event);
	snprintf(filter, sizeof(filter), "common_pid == %d", (int)syscall(SYS_gettid));
	if (write_file(path, filter))
		return -1;
	snprintf(path, sizeof(path), "%s/events/timer/%s/enable", instance, event);
	if (write_file(path, "1"))
		return -1;
	snprintf(trace, tsize, "%s/trace", instance);
	return 0;
}

/*
 * Copies the line of a trace that starts at @p into @line ("" if it does
 * not fit): the loops over a trace's lines.  Returns where the next line
 * starts, or NULL at the end.
 */
static const char *next_line(const char *p, char *line, size_t size)
{
	const char *eol;
	size_t len;

	if (!p || !*p)
		return NULL;
	eol = strchr(p, '\n');
	len = eol ? (size_t)(eol - p) : strlen(p);
	line[0] = '\0';
	if (len < size) {
		memcpy(line, p, len);
		line[len] = '\0';
	}
	return eol ? eol + 1 : p + len;
}

/*
 * The [timeout=N] of each timer:timer_start line of schedule_timeout()'s
 * timer (process_timeout) in @trace, into @out; returns how many there are.
 */
static int armed_timeouts(const char *trace, long *out, int max)
{
	char line[512];
	int n = 0;

	for (const char *p = trace; (p = next_line(p, line, sizeof(line)));) {
		const char *t = strstr(line, " [timeout=");

		if (!strstr(line, " timer_start: ") || !strstr(line, " function=process_timeout ") ||
		    !t)
			continue;
		if (n < max)
			out[n] = strtol(t + 10, NULL, 10);
		n++;
	}
	return n;
}

#define ARMED_REPEATS 3

/*
 * A jiffies wait sleeps in schedule_timeout() for whole ticks plus two (the
 * UAPI's rule), whatever the timer wheel then adds.  timer:timer_start,
 * filtered to this thread in a tracefs instance of its own, shows each
 * timer's expiry less the jiffies when it was armed: one timer per wait,
 * which shows that the jiffies path ran.  A tick between schedule_timeout()'s
 * read of jiffies and the event's shows one less, never more, so of a few
 * waits of each length the most is exactly the rule.
 */
TEST_F(wait_timeout, jiffies_timeout_is_whole_ticks_plus_two)
{
	static char trace[1 << 16];
	char tracefs[64], path[160];
	long long tick;
	struct timespec res;
	uint32_t id = 0;
	int fd;

	ASSERT_EQ(0U, getuid()) TH_LOG("needs root for tracefs");
	if (!find_tracefs(tracefs, sizeof(tracefs)))
		SKIP(return, "no tracefs: this kernel has no event tracing");
	ASSERT_EQ(0, clock_getres(CLOCK_MONOTONIC_COARSE, &res));
	tick = res.tv_sec * 1000 * NSEC_PER_MSEC + res.tv_nsec;
	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &id));

	ASSERT_EQ(0, trace_timer_event(self->instance, sizeof(self->instance), tracefs,
				       "waitvar_jiffies", "timer_start", path, sizeof(path)))
		TH_LOG("timer:timer_start in %s: %s", self->instance, strerror(errno));

	for (int halves = 1; halves <= 5; halves += 2) {
		long long timeout = halves * tick / 2;
		long want = halves / 2 + 2;

		for (int waitv = 0; waitv < 2; waitv++) {
			struct waitvar_waitv_entry e = { .id = id, .op = WAITVAR_OP_EQ,
							 .operand = 1 };
			uint32_t flags = WAITVAR_WAIT_TIMEOUT | WAITVAR_WAIT_JIFFIES;
			long armed, most = LONG_MIN, least = LONG_MAX;
			int ret;

			for (int r = 0; r < ARMED_REPEATS; r++) {
				/* Opening the trace with O_TRUNC empties the instance's buffer. */
				fd = open(path, O_WRONLY | O_TRUNC);
				ASSERT_LE(0, fd) TH_LOG("%s: %s", path, strerror(errno));
				close(fd);
				if (waitv)
					ret = waitvar_waitv(self->fd, &e, 1, 0, flags, timeout, NULL);
				else
					ret = waitvar_wait(self->fd, id, WAITVAR_OP_EQ, 1, 0, flags,
							   timeout, NULL);
				EXPECT_EQ(-ETIMEDOUT, ret);
				armed = 0;
				ASSERT_LE(0, read_file(path, trace, sizeof(trace)));
				EXPECT_EQ(1, armed_timeouts(trace, &armed, 1))
					TH_LOG("%s of %lld us: schedule_timeout() timers armed:\n%s",
					       waitv ? "WAITV" : "WAIT", timeout / 1000, trace);
				if (armed > most)
					most = armed;
				if (armed < least)
					least = armed;
			}
			EXPECT_EQ(want, most)
				TH_LOG("%s of %lld us (tick %lld us): armed for %ld jiffies, not %ld",
				       waitv ? "WAITV" : "WAIT", timeout / 1000, tick / 1000, most,
				       want);
			EXPECT_LE(want - 1, least)
				TH_LOG("%s of %lld us: once armed for %ld jiffies",
				       waitv ? "WAITV" : "WAIT", timeout / 1000, least);
		}
	}
}

/*
 * The modes (mode=REL, ABS|HARD, ...) of the hrtimer_start lines of the
 * sleepers' timers (hrtimer_wakeup) in @trace, as one string, each mode
 * followed by a space; returns how many there are.
 */
static int sleeper_modes(const char *trace, char *modes, size_t size)
{
	char line[512];
	int n = 0;

	modes[0] = '\0';
	for (const char *p = trace; (p = next_line(p, line, sizeof(line)));) {
		const char *m = strstr(line, " mode=");
		size_t used = strlen(modes);

		if (!strstr(line, " hrtimer_start: ") || !strstr(line, " function=hrtimer_wakeup ") ||
		    !m)
			continue;
		snprintf(modes + used, size - used, "%.*s ", (int)strcspn(m + 6, " "), m + 6);
		n++;
	}
	return n;
}

/*
 * An hrtimer wait's timer expires where hrtimer_init_sleeper() puts it: on
 * PREEMPT_RT in hard interrupt context for a real-time task only, in soft
 * interrupt context for any other (elsewhere the HARD bit is never asked
 * for).  The lock-protected forms (spinlock and mutex variables) cancel
 * their timer with the lock held and once forced HARD for every task; a
 * plain variable shows what every form should do.  hrtimer_start, in a
 * tracefs instance of the test's own, filtered to this thread, shows the
 * mode each wait's timer was started in: a relative timeout (REL) and a
 * CLOCK_MONOTONIC deadline (ABS), as SCHED_OTHER and as SCHED_FIFO.
 */
#define HRTIMER_MODE_TRIES	5

TEST_F(wait_timeout, hrtimer_waits_expire_where_the_sleeper_chooses)
{
	static const uint32_t locks[] = { 0, WAITVAR_CREATE_SPINLOCK, WAITVAR_CREATE_MUTEX };
	static const char *const lock_names[] = { "plain", "spinlock", "mutex" };
	static char trace[1 << 16];
	char tracefs[64], path[160], modes[256], want[32];
	struct sched_param fifo = { .sched_priority = 1 }, other = { 0 };
	bool rt = kernel_is_rt();
	uint32_t ids[3];
	int fd;

	ASSERT_EQ(0U, getuid()) TH_LOG("needs root for tracefs and SCHED_FIFO");
	if (!find_tracefs(tracefs, sizeof(tracefs)))
		SKIP(return, "no tracefs: this kernel has no event tracing");
	for (size_t l = 0; l < ARRAY_LEN(locks); l++)
		ASSERT_EQ(0, waitvar_create(self->fd, 0, locks[l], &ids[l]));

	ASSERT_EQ(0, trace_timer_event(self->instance, sizeof(self->instance), tracefs,
				       "waitvar_hrtimer", "hrtimer_start", path, sizeof(path)))
		TH_LOG("timer:hrtimer_start in %s: %s", self->instance, strerror(errno));

	for (int realtime = 0; realtime < 2; realtime++) {
		ASSERT_EQ(0, sched_setscheduler(0, realtime ? SCHED_FIFO : SCHED_OTHER,
						realtime ? &fifo : &other))
			TH_LOG("sched_setscheduler: %s", strerror(errno));
		for (size_t l = 0; l < ARRAY_LEN(locks); l++) {
			for (int deadline = 0; deadline < 2; deadline++) {
				uint32_t flags = deadline ? WAITVAR_WAIT_ABS_MONOTONIC :
							    WAITVAR_WAIT_TIMEOUT;
				int n = 0;

				/*
				 * A deadline that passed before the wait began
				 * arms no timer: a stalled guest gets a few tries.
				 */
				for (int try = 0; try < HRTIMER_MODE_TRIES && !n; try++) {
					long long t = 20 * NSEC_PER_MSEC;

					/* Opening the trace with O_TRUNC empties the instance's buffer. */
					fd = open(path, O_WRONLY | O_TRUNC);
					ASSERT_LE(0, fd) TH_LOG("%s: %s", path, strerror(errno));
					close(fd);
					if (deadline)
						t += clock_ns(CLOCK_MONOTONIC);
					EXPECT_EQ(-ETIMEDOUT, waitvar_wait(self->fd, ids[l],
									   WAITVAR_OP_EQ, 1, 0,
									   flags, t, NULL));
					ASSERT_LE(0, read_file(path, trace, sizeof(trace)));
					n = sleeper_modes(trace, modes, sizeof(modes));
				}
				snprintf(want, sizeof(want), "%s%s ", deadline ? "ABS" : "REL",
					 rt && realtime ? "|HARD" : "");
				EXPECT_EQ(1, n) TH_LOG("%s %s wait: %d sleeper timers started:\n%s",
						       lock_names[l], deadline ? "deadline" :
						       "timeout", n, trace);
				EXPECT_STREQ(want, modes)
					TH_LOG("%s %s wait as %s (%s kernel): timer modes %s",
					       lock_names[l], deadline ? "deadline" : "timeout",
					       realtime ? "SCHED_FIFO" : "SCHED_OTHER",
					       rt ? "a PREEMPT_RT" : "a non-RT", modes);
			}
		}
	}
	EXPECT_EQ(0, sched_setscheduler(0, SCHED_OTHER, &other));
}

/*
 * Spurious wakes do not stretch a jiffies wait: it sleeps what is left of
 * its timeout, not all of it again.  Woken over and over, it still times
 * out; restarted each time, it would not end while the wakes go on.
 */
TEST_F(wait_timeout, jiffies_wait_keeps_its_timeout_across_spurious_wakes)
{
	const long long timeout = 300 * NSEC_PER_MSEC;
	struct waiter w = { .fd = self->fd, .op = WAITVAR_OP_EQ, .operand = 1,
			    .flags = WAITVAR_WAIT_TIMEOUT | WAITVAR_WAIT_JIFFIES,
			    .timeout_ns = timeout };
	long long end;
	uint64_t wakes = 0;

	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &w.id));
	ASSERT_EQ(0, waiter_start(&w));
	ASSERT_TRUE(waiter_sleeps(&w));
	/* Ten times the timeout: far more than a loaded guest adds to it. */
	end = now_ns() + 10 * timeout;
	while (!atomic_load(&w.done) && now_ns() < end) {
		ASSERT_EQ(0, waitvar_wake(self->fd, w.id));
		wakes++;
		/* Each wake is seen, found false, and slept on. */
		wait_stat(self->fd, w.id, spurious, wakes);
	}
	if (!atomic_load(&w.done))
		ASSERT_EQ(0, waitvar_set(self->fd, w.id, 1));
	ASSERT_EQ(0, pthread_join(w.thread, NULL));
	EXPECT_EQ(-ETIMEDOUT, w.ret) TH_LOG("%llu wakes in %lld ms did not let it time out",
					     (unsigned long long)wakes, 10 * timeout / NSEC_PER_MSEC);
	EXPECT_LT(0U, wakes);
}

#define PRECISION_ROUNDS	21
#define PRECISION_TIMEOUT_NS	(200 * 1000LL)

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

static long long median(long long *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_ll);
	return v[n / 2];
}

/* One timed-out wait of PRECISION_TIMEOUT_NS, by WAIT or a one-entry WAITV: its length. */
static long long timed_out_wait_ns(int fd, uint32_t id, bool waitv, uint32_t flags)
{
	struct waitvar_waitv_entry e = { .id = id, .op = WAITVAR_OP_EQ, .operand = 1 };
	long long start = now_ns();
	int ret;

	flags |= WAITVAR_WAIT_TIMEOUT;
	if (waitv)
		ret = waitvar_waitv(fd, &e, 1, 0, flags, PRECISION_TIMEOUT_NS, NULL);
	else
		ret = waitvar_wait(fd, id, WAITVAR_OP_EQ, 1, 0, flags, PRECISION_TIMEOUT_NS, NULL);
	return ret == -ETIMEDOUT ? now_ns() - start : -1;
}

/*
 * Waits of 200 us, as many timed by the hrtimer as by jiffies, taken in
 * turns so both see the same guest: no wait ends early, and the hrtimer's
 * median overshoot is under half the jiffies one's (which rounds up to
 * whole ticks) and at least half a tick shorter: a loaded emulated guest
 * adds the same wake-up latency to both, which would eat a tighter ratio,
 * but not the tick between them.  No absolute bound: under emulation the
 * figures say little.  The timer slack is 1 ns for the run.
 */
static void check_precision(struct __test_metadata *_metadata, int fd, bool waitv)
{
	long long hr[PRECISION_ROUNDS], jf[PRECISION_ROUNDS], hr_med, jf_med, tick;
	int slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	struct timespec res;
	uint32_t id = 0;
	int i;

	/* Without high-resolution timers an hrtimer fires on the tick too. */
	ASSERT_EQ(0, clock_getres(CLOCK_MONOTONIC, &res));
	if (res.tv_sec || res.tv_nsec > 1)
		SKIP(return, "CLOCK_MONOTONIC resolution %ld ns: high-resolution timers are off",
		     res.tv_nsec);
	/* The coarse clock advances once a tick. */
	ASSERT_EQ(0, clock_getres(CLOCK_MONOTONIC_COARSE, &res));
	tick = res.tv_sec * 1000 * NSEC_PER_MSEC + res.tv_nsec;
	ASSERT_EQ(0, waitvar_create(fd, 0, 0, &id));
	ASSERT_LE(0, slack);
	ASSERT_EQ(0, prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0));
	for (i = 0; i < PRECISION_ROUNDS; i++) {
		hr[i] = timed_out_wait_ns(fd, id, waitv, 0);
		jf[i] = timed_out_wait_ns(fd, id, waitv, WAITVAR_WAIT_JIFFIES);
		if (hr[i] < 0 || jf[i] < 0)
			break;
	}
	prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0, 0, 0);
	ASSERT_EQ(PRECISION_ROUNDS, i) TH_LOG("round %d: a wait did not time out", i);
	for (i = 0; i < PRECISION_ROUNDS; i++) {
		EXPECT_GE(hr[i], PRECISION_TIMEOUT_NS) TH_LOG("hrtimer wait %d ended early", i);
		EXPECT_GE(jf[i], PRECISION_TIMEOUT_NS) TH_LOG("jiffies wait %d ended early", i);
		hr[i] -= PRECISION_TIMEOUT_NS;
		jf[i] -= PRECISION_TIMEOUT_NS;
	}
	hr_med = median(hr, PRECISION_ROUNDS);
	jf_med = median(jf, PRECISION_ROUNDS);
	ksft_print_msg("%s, %d waits of %lld us each: median overshoot hrtimer %lld us, jiffies %lld us (tick %lld us)\n",
		       waitv ? "WAITV" : "WAIT", PRECISION_ROUNDS, PRECISION_TIMEOUT_NS / 1000,
		       hr_med / 1000, jf_med / 1000, tick / 1000);
	EXPECT_LT(2 * hr_med, jf_med);
	EXPECT_GE(jf_med - hr_med, tick / 2);
}

TEST_F(wait_timeout, hrtimer_overshoot_is_a_fraction_of_the_jiffies_one)
{
	check_precision(_metadata, self->fd, false);
}

TEST_F(wait_timeout, waitv_hrtimer_overshoot_is_a_fraction_of_the_jiffies_one)
{
	check_precision(_metadata, self->fd, true);
}

TEST_F(wait_timeout, jiffies_flag_without_a_timeout_returns_einval)
{
	struct waitvar_waitv_entry e = { .op = WAITVAR_OP_EQ, .operand = 1 };
	uint32_t id = 0;

	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &id));
	e.id = id;
	EXPECT_EQ(-EINVAL, waitvar_wait(self->fd, id, WAITVAR_OP_EQ, 1, 0,
					WAITVAR_WAIT_JIFFIES, 0, NULL));
	EXPECT_EQ(-EINVAL, waitvar_waitv(self->fd, &e, 1, 0, WAITVAR_WAIT_JIFFIES, 0, NULL));
	EXPECT_NE(0U, driver_features().semantics & WAITVAR_SEM_HRTIMER);
	EXPECT_NE(0U, driver_features().wait_flags & WAITVAR_WAIT_JIFFIES);
}

/* Whether this task may set the clock: settimeofday() with nothing to set only asks. */
static bool may_set_clock(void)
{
	return syscall(SYS_settimeofday, NULL, NULL) == 0 || errno != EPERM;
}

/* Moves CLOCK_REALTIME by @delta_ns (root: CAP_SYS_TIME). */
static int step_realtime(long long delta_ns)
{
	long long t = clock_ns(CLOCK_REALTIME) + delta_ns;
	struct timespec ts = { .tv_sec = t / 1000000000LL, .tv_nsec = t % 1000000000LL };

	return clock_settime(CLOCK_REALTIME, &ts) ? -errno : 0;
}

/* A WAIT or one-entry WAITV with a CLOCK_REALTIME deadline, on a thread. */
struct rt_waiter {
	int fd;
	uint32_t id, mode, flags;
	bool waitv;
	long long deadline;
	pthread_t thread;
	atomic_int tid, done;
	int ret;
};

static void *rt_waiter_main(void *data)
{
	struct rt_waiter *w = data;
	struct waitvar_waitv_entry e = { .id = w->id, .op = WAITVAR_OP_EQ, .operand = 1 };
	uint32_t flags = WAITVAR_WAIT_ABS_REALTIME | w->flags;

	atomic_store(&w->tid, gettid());
	if (w->waitv)
		w->ret = waitvar_waitv(w->fd, &e, 1, w->mode, flags, w->deadline, NULL);
	else
		w->ret = waitvar_wait(w->fd, w->id, WAITVAR_OP_EQ, 1, w->mode, flags,
				      w->deadline, NULL);
	atomic_store(&w->done, 1);
	return NULL;
}

#define RT_DEADLINE_NS	(2000 * NSEC_PER_MSEC)

/*
 * Starts a wait whose REALTIME deadline is RT_DEADLINE_NS ahead, steps the
 * clock by @step_ns once it sleeps, and returns how long the wait took
 * from the step, on CLOCK_MONOTONIC; the clock is stepped back before
 * returning.  In *@before, the time from the start to the step.
 */
static long long wait_across_clock_step(struct __test_metadata *_metadata, int fd,
					bool waitv, uint32_t mode, uint32_t flags,
					long long step_ns, long long *before)
{
	struct rt_waiter w = { .fd = fd, .mode = mode, .flags = flags, .waitv = waitv };
	long long start, stepped_at, took;
	char state = mode == WAITVAR_MODE_INTERRUPTIBLE ? 'S' : 'D';
	int stepped;

	if (waitvar_create(fd, 0, 0, &w.id))
		return -1;
	start = now_ns();
	w.deadline = clock_ns(CLOCK_REALTIME) + RT_DEADLINE_NS;
	if (pthread_create(&w.thread, NULL, rt_waiter_main, &w))
		return -1;
	if (!thread_sleeps_in(&w.tid, &w.done, state)) {
		pthread_join(w.thread, NULL);
		TH_LOG("the waiter did not sleep (it returned %d)", w.ret);
		return -1;
	}
	stepped_at = now_ns();
	stepped = step_realtime(step_ns);
	pthread_join(w.thread, NULL);
	took = now_ns() - stepped_at;
	*before = stepped_at - start;
	if (!stepped)
		step_realtime(-step_ns);
	if (stepped || w.ret != -ETIMEDOUT) {
		TH_LOG("clock step: %s; the wait returned %d", strerror(-stepped), w.ret);
		return -1;
	}
	return took;
}

/*
 * A REALTIME deadline D ahead: the clock set 3D forward ends the wait at
 * once (in under half of D from the step); set D back, the wait lasts
 * another D and more, so from the step over D plus what was left of it.
 */
static void check_realtime_follows(struct __test_metadata *_metadata, int fd, bool waitv)
{
	long long fwd_before = 0, back_before = 0, forward;

	if (!may_set_clock())
		SKIP(return, "setting the clock needs CAP_SYS_TIME");
	forward = wait_across_clock_step(_metadata, fd, waitv, 0, 0, 3 * RT_DEADLINE_NS,
					 &fwd_before);
	long long back;

	ASSERT_LE(0, forward);
	/* A step past half the deadline could not tell "ended early" from "ended". */
	ASSERT_LT(2 * fwd_before, RT_DEADLINE_NS) TH_LOG("the step came too late");
	back = wait_across_clock_step(_metadata, fd, waitv, 0, 0, -RT_DEADLINE_NS, &back_before);
	ASSERT_LE(0, back);
	ASSERT_LT(back_before, RT_DEADLINE_NS) TH_LOG("the step came after the deadline");
	ksft_print_msg("%s, REALTIME deadline %lld ms ahead: %lld ms after setting the clock %lld ms forward, %lld ms after setting it %lld ms back\n",
		       waitv ? "WAITV" : "WAIT", RT_DEADLINE_NS / NSEC_PER_MSEC,
		       forward / NSEC_PER_MSEC, 3 * RT_DEADLINE_NS / NSEC_PER_MSEC,
		       back / NSEC_PER_MSEC, RT_DEADLINE_NS / NSEC_PER_MSEC);
	EXPECT_LT(2 * forward, RT_DEADLINE_NS);
	EXPECT_GE(back, RT_DEADLINE_NS + (RT_DEADLINE_NS - back_before));
}

TEST_F(wait_timeout, realtime_deadline_follows_the_clock)
{
	check_realtime_follows(_metadata, self->fd, false);
}

TEST_F(wait_timeout, waitv_realtime_deadline_follows_the_clock)
{
	check_realtime_follows(_metadata, self->fd, true);
}

/*
 * What does not follow the clock: a deadline timed in jiffies (turned
 * into a timeout when the wait starts), and one in a mode no signal ends
 * (fixed on CLOCK_MONOTONIC, so no clock step can stretch it).
 */
TEST_F(wait_timeout, jiffies_and_uninterruptible_realtime_deadlines_stay_fixed)
{
	long long j_before = 0, u_before = 0, jiffies, unint;

	if (!may_set_clock())
		SKIP(return, "setting the clock needs CAP_SYS_TIME");
	jiffies = wait_across_clock_step(_metadata, self->fd, false, 0, WAITVAR_WAIT_JIFFIES,
					 3 * RT_DEADLINE_NS, &j_before);
	unint = wait_across_clock_step(_metadata, self->fd, false, WAITVAR_MODE_UNINTERRUPTIBLE,
				       0, 3 * RT_DEADLINE_NS, &u_before);
	ASSERT_LE(0, jiffies);
	ASSERT_LE(0, unint);
	/* A step after the deadline would prove nothing. */
	ASSERT_LT(j_before, RT_DEADLINE_NS);
	ASSERT_LT(u_before, RT_DEADLINE_NS);
	/* What was left of the deadline at the step, all of it still waited. */
	EXPECT_GE(jiffies, RT_DEADLINE_NS - j_before);
	EXPECT_GE(unint, RT_DEADLINE_NS - u_before);
}

TEST_HARNESS_MAIN
