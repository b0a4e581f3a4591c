// SPDX-License-Identifier: GPL-2.0
/*
 * WAIT's sleep modes and signals: an interruptible wait ends with EINTR;
 * killable, uninterruptible and io waits sleep in D through a handled signal,
 * need a timeout where documented, and a killable one ends only by SIGKILL
 * but lets a stop or the cgroup v2 freezer take its task.
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
	struct saved_params params;
	char cgroup[128];	/* made by the test, removed at teardown */
	pid_t child;		/* a child to kill at teardown, or 0 */
};

FIXTURE_SETUP(wait_modes)
{
	self->fd = open("/dev/waitvar", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open /dev/waitvar: %s", strerror(errno));
}

FIXTURE_TEARDOWN(wait_modes)
{
	char path[160];

	if (self->child > 0) {
		kill(self->child, SIGKILL);	/* ends a stopped or frozen one too */
		waitpid(self->child, NULL, 0);
	}
	if (self->cgroup[0]) {
		snprintf(path, sizeof(path), "%s/cgroup.freeze", self->cgroup);
		write_file(path, "0");
		EXPECT_EQ(0, rmdir(self->cgroup)) TH_LOG("%s: %s", self->cgroup, strerror(errno));
	}
	EXPECT_EQ(0, params_restore(&self->params));
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

/* The KILLABLE waits a stop or freeze must reach: each path of the driver. */
static const struct killable_kind {
	const char *name;
	uint32_t create_flags;
	uint32_t wait_flags;
	bool waitv;
} killable_kinds[] = {
	{ "WAIT", 0, 0, false },
	{ "WAIT, exclusive", 0, WAITVAR_WAIT_EXCLUSIVE, false },
	{ "WAIT, relative timeout", 0, WAITVAR_WAIT_TIMEOUT, false },
	{ "WAIT, jiffies timeout", 0, WAITVAR_WAIT_TIMEOUT | WAITVAR_WAIT_JIFFIES, false },
	{ "WAIT, spinlock variable", WAITVAR_CREATE_SPINLOCK, 0, false },
	{ "WAIT, mutex variable, deadline", WAITVAR_CREATE_MUTEX, WAITVAR_WAIT_ABS_MONOTONIC,
	  false },
	{ "WAITV", 0, 0, true },
	{ "WAITV, relative timeout", 0, WAITVAR_WAIT_TIMEOUT, true },
};

struct killable_wait {
	int fd;
	uint32_t id;
	const struct killable_kind *kind;
	int ret;
};

/* A KILLABLE wait of its kind, for a minute at most. */
static void *killable_wait_main(void *data)
{
	struct killable_wait *kw = data;
	const struct killable_kind *k = kw->kind;
	struct waitvar_waitv_entry e = { .id = kw->id, .op = WAITVAR_OP_EQ, .operand = 1 };
	uint32_t timed = WAITVAR_WAIT_TIMEOUT | WAITVAR_WAIT_ABS_MONOTONIC;
	uint64_t timeout = k->wait_flags & timed ? 60000 * NSEC_PER_MSEC : 0;

	if (k->wait_flags & WAITVAR_WAIT_ABS_MONOTONIC)
		timeout += clock_ns(CLOCK_MONOTONIC);
	if (k->waitv)
		kw->ret = waitvar_waitv(kw->fd, &e, 1, WAITVAR_MODE_KILLABLE, k->wait_flags,
					timeout, NULL);
	else
		kw->ret = waitvar_wait(kw->fd, kw->id, WAITVAR_OP_EQ, 1, WAITVAR_MODE_KILLABLE,
				       k->wait_flags, timeout, NULL);
	return NULL;
}

/*
 * A child whose second thread waits on @id as @k says, while its first one
 * joins it, asleep interruptibly: that one takes a SIGSTOP sent to the
 * child and starts the group stop, which the waiting thread must then join
 * (the kernel does not wake a TASK_KILLABLE sleeper for either).  SIGCONT
 * runs a handler installed without SA_RESTART in the waiting thread, the
 * only one that does not block it: that must not end the wait.  Exits 0
 * once the wait held.
 */
static pid_t killable_child(int fd, uint32_t id, const struct killable_kind *k)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct killable_wait kw = { .fd = fd, .id = id, .kind = k };
	pthread_t thread;
	sigset_t cont;
	pid_t pid = fork();

	if (pid)
		return pid;
	sigemptyset(&cont);
	sigaddset(&cont, SIGCONT);
	if (sigaction(SIGCONT, &sa, NULL) ||
	    pthread_create(&thread, NULL, killable_wait_main, &kw) ||
	    pthread_sigmask(SIG_BLOCK, &cont, NULL) ||
	    pthread_join(thread, NULL))
		_exit(99);
	_exit(kw.ret < 0 ? -kw.ret : 0);
}

/* The tid of @pid's thread other than its first, or -1. */
static pid_t second_thread(pid_t pid)
{
	long long deadline = now_ns() + 10000 * NSEC_PER_MSEC;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	while (now_ns() < deadline) {
		DIR *d = opendir(path);
		struct dirent *de;
		pid_t tid = -1;

		if (!d)
			return -1;
		while ((de = readdir(d)))
			if (atoi(de->d_name) > 0 && atoi(de->d_name) != pid)
				tid = atoi(de->d_name);
		closedir(d);
		if (tid > 0)
			return tid;
		usleep(1000);
	}
	return -1;
}

/* Polls waitpid(@pid, @options | WNOHANG) for 10 s; its status, or -1. */
static int waitpid_within(pid_t pid, int options)
{
	long long deadline = now_ns() + 10000 * NSEC_PER_MSEC;
	int status;

	while (now_ns() < deadline) {
		pid_t got = waitpid(pid, &status, options | WNOHANG);

		if (got == pid)
			return status;
		if (got < 0)
			return -1;
		usleep(1000);
	}
	return -1;
}

/* True once @cg's cgroup.events says "frozen @frozen", within 10 s. */
static bool cgroup_frozen_within(const char *cg, int frozen)
{
	long long deadline = now_ns() + 10000 * NSEC_PER_MSEC;
	char path[160], buf[256], want[16];

	snprintf(path, sizeof(path), "%s/cgroup.events", cg);
	snprintf(want, sizeof(want), "frozen %d\n", frozen);
	while (now_ns() < deadline) {
		if (read_file(path, buf, sizeof(buf)) > 0 && strstr(buf, want))
			return true;
		usleep(1000);
	}
	return false;
}

/* Stops (@cg NULL) or freezes the child @pid; true once done. */
static bool take_child(pid_t pid, const char *cg)
{
	char path[160];
	int status;

	if (cg) {
		snprintf(path, sizeof(path), "%s/cgroup.freeze", cg);
		return !write_file(path, "1") && cgroup_frozen_within(cg, 1);
	}
	if (kill(pid, SIGSTOP))
		return false;
	status = waitpid_within(pid, WUNTRACED);
	return status != -1 && WIFSTOPPED(status);
}

/* Continues or thaws what take_child() took; true once done. */
static bool release_child(pid_t pid, const char *cg)
{
	char path[160];
	int status;

	if (cg) {
		snprintf(path, sizeof(path), "%s/cgroup.freeze", cg);
		return !write_file(path, "0") && cgroup_frozen_within(cg, 0);
	}
	if (kill(pid, SIGCONT))
		return false;
	status = waitpid_within(pid, WCONTINUED);
	return status != -1 && WIFCONTINUED(status);
}

/*
 * A stop (@cg NULL) or a freeze of cgroup @cg takes a child in a KILLABLE
 * wait of each kind: the wait left for it (STATS counts one signal and no
 * waiter), and once continued or thawed it restarts (a second wait) and
 * ends by SET.  Without the driver's watch the stop or freeze would not
 * complete while the wait sleeps.  The child sleeps a few of the watch's
 * periods first, so that a watch that looked only once would miss it.
 */
static void check_killable_yields(struct __test_metadata *_metadata,
				  FIXTURE_DATA(wait_modes) *self, const char *cg)
{
	const unsigned int period_ms = 50;
	char procs[160], pidbuf[16];
	struct waitvar_stats st;
	int status;
	size_t i;

	ASSERT_EQ(0, param_override(&self->params, "max_uninterruptible_ms", period_ms));
	for (i = 0; i < ARRAY_LEN(killable_kinds); i++) {
		const struct killable_kind *k = &killable_kinds[i];
		uint32_t id = 0;
		pid_t tid;

		TH_LOG("%s", k->name);
		ASSERT_EQ(0, waitvar_create(self->fd, 0, k->create_flags, &id));
		self->child = killable_child(self->fd, id, k);
		ASSERT_LT(0, self->child);
		if (cg) {
			snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
			snprintf(pidbuf, sizeof(pidbuf), "%d", self->child);
			ASSERT_EQ(0, write_file(procs, pidbuf));
		}
		tid = second_thread(self->child);
		ASSERT_LT(0, tid);
		ASSERT_TRUE(stats_show_asleep(self->fd, id, self->child, tid, 1, 'D'));
		usleep(4 * period_ms * 1000);
		ASSERT_TRUE(take_child(self->child, cg))
			TH_LOG("%s: not %s", k->name, cg ? "frozen" : "stopped");
		ASSERT_EQ(0, waitvar_stats(self->fd, id, &st));
		EXPECT_EQ(1U, st.signals);
		EXPECT_EQ(0U, st.waiters);
		EXPECT_EQ(0U, st.wakes);
		ASSERT_TRUE(release_child(self->child, cg));
		EXPECT_TRUE(stats_show_asleep(self->fd, id, self->child, tid, 2, 'D'))
			TH_LOG("%s: the wait did not restart", k->name);
		ASSERT_EQ(0, waitvar_set(self->fd, id, 1));
		status = waitpid_within(self->child, 0);
		ASSERT_NE(-1, status) TH_LOG("%s: the child did not exit", k->name);
		self->child = 0;
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
			TH_LOG("%s: status %#x", k->name, status);
		ASSERT_EQ(0, waitvar_destroy(self->fd, id));
	}
}

TEST_F(wait_modes, killable_wait_lets_a_stop_take_its_task)
{
	check_killable_yields(_metadata, self, NULL);
}

TEST_F(wait_modes, killable_wait_lets_the_cgroup_v2_freezer_take_its_task)
{
	char cg[sizeof(self->cgroup)];

	ASSERT_EQ(0, cgroup2_mount()) TH_LOG("mount cgroup2: %s", strerror(errno));
	snprintf(cg, sizeof(cg), CGROUP_ROOT "/waitvar-freeze-%d", getpid());
	ASSERT_EQ(0, mkdir(cg, 0755)) TH_LOG("%s: %s", cg, strerror(errno));
	memcpy(self->cgroup, cg, sizeof(cg));
	check_killable_yields(_metadata, self, cg);
}

TEST_HARNESS_MAIN
