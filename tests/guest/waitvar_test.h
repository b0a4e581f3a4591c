/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the /dev/waitvar test programs, which call libwaitvar
 * (one call per ioctl, 0 or -errno) directly: waiter threads whose sleep
 * can be observed, clocks, file and module-parameter access, tracefs,
 * child processes running as another user, read-only arguments, and the
 * layout of the UAPI structures.
 */
#ifndef WAITVAR_TEST_H
#define WAITVAR_TEST_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "libwaitvar.h"

/* The same layout for 32- and 64-bit userspace as for the kernel. */
_Static_assert(sizeof(struct waitvar_create) == 32, "waitvar_create layout");
_Static_assert(sizeof(struct waitvar_id) == 8, "waitvar_id layout");
_Static_assert(sizeof(struct waitvar_value) == 16, "waitvar_value layout");
_Static_assert(sizeof(struct waitvar_wait) == 40, "waitvar_wait layout");
_Static_assert(sizeof(struct waitvar_wake_nr) == 16, "waitvar_wake_nr layout");
_Static_assert(sizeof(struct waitvar_add) == 24, "waitvar_add layout");
_Static_assert(sizeof(struct waitvar_cmpxchg) == 32, "waitvar_cmpxchg layout");
_Static_assert(sizeof(struct waitvar_waitv_entry) == 24, "waitvar_waitv_entry layout");
_Static_assert(sizeof(struct waitvar_waitv) == 40, "waitvar_waitv layout");
_Static_assert(sizeof(struct waitvar_watch) == 24, "waitvar_watch layout");
_Static_assert(sizeof(struct waitvar_stats) == 64, "waitvar_stats layout");
_Static_assert(sizeof(struct waitvar_named) == 88, "waitvar_named layout");
_Static_assert(sizeof(struct waitvar_list) == 24, "waitvar_list layout");
_Static_assert(sizeof(struct waitvar_features) == 96, "waitvar_features layout");

#define NSEC_PER_MSEC 1000000LL
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static inline long long clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline long long now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/*
 * A thread blocked in WAITVAR_IOC_WAIT; the fields are those of struct
 * waitvar_wait: no timeout bit in @flags means @timeout_ns is not used.
 */
struct waiter {
	int fd;
	uint32_t id;
	uint32_t op;
	uint64_t operand;
	uint32_t mode;
	uint32_t flags;
	long long timeout_ns;
	pthread_t thread;
	atomic_int tid;
	atomic_int done;
	int ret;
	uint64_t seen;
	long sleeps;	/* its sleeps count when waiter_sleeps() saw it asleep */
	bool waitv;	/* wait with a one-entry WAITV, not WAIT */
};

static inline void *waiter_main(void *data)
{
	struct waiter *w = data;

	atomic_store(&w->tid, gettid());
	if (w->waitv) {
		struct waitvar_waitv_entry e = { .id = w->id, .op = w->op, .operand = w->operand };

		w->ret = waitvar_waitv(w->fd, &e, 1, w->mode, w->flags, w->timeout_ns, &w->seen);
		w->ret = w->ret > 0 ? -EPROTO : w->ret;	/* the index of the one entry is 0 */
	} else {
		w->ret = waitvar_wait(w->fd, w->id, w->op, w->operand, w->mode, w->flags,
				      w->timeout_ns, &w->seen);
	}
	atomic_store(&w->done, 1);
	return NULL;
}

static inline int waiter_start(struct waiter *w)
{
	return pthread_create(&w->thread, NULL, waiter_main, w);
}

/* Reads a whole file into @buf (NUL-terminated); returns its length or -1. */
static inline ssize_t read_file(const char *path, char *buf, size_t size)
{
	ssize_t n, len = 0;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -1;
	while ((n = read(fd, buf + len, size - 1 - len)) > 0)
		len += n;
	close(fd);
	buf[len] = '\0';
	return n < 0 ? -1 : len;
}

#define SUMMARY_PATH "/sys/kernel/debug/waitvar/summary"

/*
 * The device-wide counts of debugfs's waitvar/summary; -1 where unread.
 * @reserved: ids that commands in flight hold but have not filled.
 */
struct summary {
	long files, vars, waiters, named, reserved;
};

static inline bool read_summary(struct summary *s)
{
	/* The counts come first; a long list of names after them may be cut. */
	static char buf[16384];
	char *line, *save = NULL;

	*s = (struct summary){ -1, -1, -1, -1, -1 };
	if (read_file(SUMMARY_PATH, buf, sizeof(buf)) <= 0)
		return false;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		/* Per-name lines start with blanks: they match none of these. */
		sscanf(line, "files %ld", &s->files);
		sscanf(line, "variables %ld", &s->vars);
		sscanf(line, "waiters %ld", &s->waiters);
		sscanf(line, "named %ld", &s->named);
		sscanf(line, "reserved %ld", &s->reserved);
	}
	return s->files >= 0 && s->vars >= 0 && s->waiters >= 0 && s->named >= 0 &&
	       s->reserved >= 0;
}

/* The number on the summary's line "@key N" (one of its counts), or -1. */
static inline long long summary_field(const char *key)
{
	static char buf[1 << 17];
	char want[64];
	long long n;
	char *p;

	if (read_file(SUMMARY_PATH, buf, sizeof(buf)) <= 0)
		return -1;
	snprintf(want, sizeof(want), "\n%s ", key);
	p = strstr(buf, want);
	return p && sscanf(p + strlen(want), "%lld", &n) == 1 ? n : -1;
}

/* The variables of every open file, from the summary; -1 if unread. */
static inline long device_vars(void)
{
	struct summary s;

	return read_summary(&s) ? s.vars : -1;
}

/*
 * Writes all of @s to @path (sysfs, cgroupfs, tracefs, ...) opened with
 * O_WRONLY | @flags; returns 0 or -1.
 */
static inline int write_file_flags(const char *path, const char *s, int flags)
{
	int fd = open(path, O_WRONLY | flags);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

static inline int write_file(const char *path, const char *s)
{
	return write_file_flags(path, s, 0);
}

#define WAITVAR_PARAMS "/sys/module/waitvar/parameters/"

/* The waitvar module parameter @name; returns 0 or -1. */
static inline int get_param(const char *name, unsigned int *value)
{
	char path[128], buf[32];

	snprintf(path, sizeof(path), WAITVAR_PARAMS "%s", name);
	if (read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	return sscanf(buf, "%u", value) == 1 ? 0 : -1;
}

static inline int set_param(const char *name, unsigned int value)
{
	char path[128], buf[32];

	snprintf(path, sizeof(path), WAITVAR_PARAMS "%s", name);
	snprintf(buf, sizeof(buf), "%u", value);
	return write_file(path, buf);
}

/* Module parameters a test changes, and their values before it did. */
#define MAX_SAVED_PARAMS 8

struct saved_params {
	int nr;
	struct {
		char name[48];
		unsigned int value;
	} p[MAX_SAVED_PARAMS];
};

/*
 * Sets parameter @name to @value, remembering the value it had the first
 * time; returns 0 or -1.  params_restore() (in a fixture's teardown, so
 * that it runs after a failed ASSERT too) puts the old values back.
 */
static inline int param_override(struct saved_params *s, const char *name, unsigned int value)
{
	unsigned int old;
	int i;

	for (i = 0; i < s->nr; i++)
		if (!strcmp(s->p[i].name, name))
			return set_param(name, value);
	if (s->nr == MAX_SAVED_PARAMS || get_param(name, &old))
		return -1;
	snprintf(s->p[s->nr].name, sizeof(s->p[s->nr].name), "%s", name);
	s->p[s->nr].value = old;
	s->nr++;
	return set_param(name, value);
}

/* Puts back what param_override() changed, last change first; 0 or -1. */
static inline int params_restore(struct saved_params *s)
{
	int ret = 0;

	while (s->nr > 0) {
		s->nr--;
		if (set_param(s->p[s->nr].name, s->p[s->nr].value))
			ret = -1;
	}
	return ret;
}

/* True if the module has parameter @name (test-hook builds add some). */
static inline bool has_param(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), WAITVAR_PARAMS "%s", name);
	return access(path, F_OK) == 0;
}

/* FEATURES of a file of its own; all zero if the driver has no FEATURES. */
static inline struct waitvar_features driver_features(void)
{
	struct waitvar_features f = {};
	int fd = waitvar_open();

	if (fd >= 0) {
		if (waitvar_features(fd, &f))
			f = (struct waitvar_features){};
		close(fd);
	}
	return f;
}

/*
 * @want_ns, or less if IO and UNINTERRUPTIBLE waits are capped below it
 * (max_uninterruptible_ms): a long timeout for a wait the test ends itself.
 */
static inline long long uninterruptible_timeout_ns(long long want_ns)
{
	struct waitvar_features f = driver_features();
	long long cap = f.max_uninterruptible_ms * NSEC_PER_MSEC;

	return f.max_uninterruptible_ms && cap < want_ns ? cap : want_ns;
}

/* How many descriptors this process has open, or -1. */
static inline int count_open_fds(void)
{
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *d;
	int n = 0;

	if (!dir)
		return -1;
	while ((d = readdir(dir)))
		if (d->d_name[0] != '.')
			n++;
	closedir(dir);
	/* The directory's own descriptor was open while it was read. */
	return n - 1;
}

/*
 * A copy of @len bytes of @arg in a page of its own that is then made
 * read-only: the driver can read an argument there but not write its
 * result back.  Returns NULL on failure; free it with ro_arg_free().
 */
static inline void *ro_arg(const void *arg, size_t len)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p;

	if (len > (size_t)page)
		return NULL;
	p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	memcpy(p, arg, len);
	if (mprotect(p, page, PROT_READ)) {
		munmap(p, page);
		return NULL;
	}
	return p;
}

static inline void ro_arg_free(void *p)
{
	if (p)
		munmap(p, sysconf(_SC_PAGESIZE));
}

/*
 * A raw ioctl on a copy of @arg placed in a read-only page; returns 0 or
 * -errno, and -ENOMEM if the page could not be made.
 */
static inline int ioctl_ro(int fd, unsigned long cmd, const void *arg, size_t len)
{
	void *p = ro_arg(arg, len);
	int ret;

	if (!p)
		return -ENOMEM;
	ret = ioctl(fd, cmd, p) ? -errno : 0;
	ro_arg_free(p);
	return ret;
}

/* @prefix-@suffix into @buf, a name of this test ("" if it is too long). */
static inline const char *test_name(char *buf, const char *prefix, const char *suffix)
{
	if (snprintf(buf, WAITVAR_NAME_MAX, "%s-%s", prefix, suffix) >= WAITVAR_NAME_MAX)
		buf[0] = '\0';
	return buf;
}

/* How many times LIST shows @name, or -errno. */
static inline int times_listed(int fd, const char *name)
{
	static char buf[65536];
	uint32_t count = 0, needed = 0, i;
	const char *p;
	int ret, n = 0;

	ret = waitvar_list(fd, buf, sizeof(buf), &count, &needed);
	if (ret)
		return ret;
	for (i = 0, p = buf; i < count; i++, p += strlen(p) + 1)
		n += !strcmp(p, name);
	return n;
}

/* Removes every name of this user namespace that starts with @prefix. */
static inline void remove_names_with_prefix(int fd, const char *prefix)
{
	static char buf[65536];
	char names[64][WAITVAR_NAME_MAX];
	uint32_t count = 0, needed = 0, i, n = 0;
	const char *p;

	if (waitvar_list(fd, buf, sizeof(buf), &count, &needed))
		return;
	for (i = 0, p = buf; i < count; i++, p += strlen(p) + 1)
		if (!strncmp(p, prefix, strlen(prefix)) && strlen(p) < WAITVAR_NAME_MAX &&
		    n < ARRAY_LEN(names))
			memcpy(names[n++], p, strlen(p) + 1);
	/* Root may remove any of them (CAP_DAC_OVERRIDE). */
	for (i = 0; i < n; i++)
		waitvar_named_remove(fd, names[i]);
}

/*
 * Test code in a child process, which must not use the harness's ASSERTs
 * (they would jump back into the parent's copy of the test): it reports
 * what went wrong on stderr and returns 1, its exit status.
 */
#define CHILD_CHECK(cond, fmt, ...)						\
do {										\
	if (!(cond)) {								\
		fprintf(stderr, "# %s:%d: child %d (uid %d): " fmt "\n",	\
			__FILE__, __LINE__, getpid(), getuid(), ##__VA_ARGS__);\
		return 1;							\
	}									\
} while (0)

/* The uid of a child that keeps root's credentials. */
#define AS_ROOT ((uid_t)-1)

/*
 * A child process, and a pipe each way to step it: each side writes one
 * byte to say "go on" (peer_send()) and reads one to wait for it
 * (peer_recv()).
 */
struct peer {
	pid_t pid;	/* in the parent: the child; in the child: the parent */
	int tx, rx;
};

static inline bool peer_send(struct peer *p)
{
	char c = 1;

	return write(p->tx, &c, 1) == 1;
}

/* Waits up to 10 s for the other side's byte; false on timeout or EOF. */
static inline bool peer_recv(struct peer *p)
{
	struct pollfd pfd = { .fd = p->rx, .events = POLLIN };
	char c;

	if (poll(&pfd, 1, 10000) != 1)
		return false;
	return read(p->rx, &c, 1) == 1;
}

/*
 * Drops to @uid (and gid @uid, no supplementary groups) for good: real,
 * effective and saved ids, so the capabilities go too.  Returns 0 or -1.
 */
static inline int drop_to_uid(uid_t uid)
{
	if (setgroups(0, NULL) || setresgid(uid, uid, uid) || setresuid(uid, uid, uid))
		return -1;
	return 0;
}

/*
 * Forks a child that becomes @uid (AS_ROOT: stays as it is) and exits with
 * @fn's return value; @fn gets the parent as its peer.  Returns 0 or -1.
 */
static inline int peer_start(struct peer *child, uid_t uid,
			     int (*fn)(struct peer *parent, void *arg), void *arg)
{
	int up[2], down[2];

	if (pipe2(up, O_CLOEXEC))
		return -1;
	if (pipe2(down, O_CLOEXEC)) {
		close(up[0]);
		close(up[1]);
		return -1;
	}
	/* A byte for a peer that has gone must fail, not kill the writer. */
	signal(SIGPIPE, SIG_IGN);
	fflush(stdout);
	fflush(stderr);
	child->pid = fork();
	if (child->pid < 0) {
		close(up[0]);
		close(up[1]);
		close(down[0]);
		close(down[1]);
		return -1;
	}
	if (child->pid == 0) {
		struct peer parent = { .pid = getppid(), .tx = up[1], .rx = down[0] };

		close(up[0]);
		close(down[1]);
		if (uid != AS_ROOT && drop_to_uid(uid)) {
			fprintf(stderr, "# child: cannot become uid %d: %s\n", uid,
				strerror(errno));
			_exit(100);
		}
		_exit(fn(&parent, arg));
	}
	close(up[1]);
	close(down[0]);
	child->tx = down[1];
	child->rx = up[0];
	return 0;
}

/*
 * Reaps the child within @timeout_ms (then kills it); returns its exit
 * status, 128 + the signal that ended it, or -1 if it had to be killed.
 */
static inline int peer_wait(struct peer *child, int timeout_ms)
{
	long long deadline = now_ns() + timeout_ms * NSEC_PER_MSEC;
	int status = 0, ret = -1;
	pid_t got;

	close(child->tx);
	close(child->rx);
	child->tx = child->rx = -1;
	while ((got = waitpid(child->pid, &status, WNOHANG)) == 0 && now_ns() < deadline)
		usleep(10 * 1000);
	if (got == 0) {
		kill(child->pid, SIGKILL);
		waitpid(child->pid, &status, 0);
		fprintf(stderr, "# child %d killed after %d ms\n", child->pid, timeout_ms);
	} else if (got == child->pid) {
		ret = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	}
	child->pid = 0;
	return ret;
}

/* Runs @fn in a child as @uid, to its end (60 s at most); its exit status. */
static inline int run_as(uid_t uid, int (*fn)(struct peer *parent, void *arg), void *arg)
{
	struct peer child;

	if (peer_start(&child, uid, fn, arg))
		return -1;
	return peer_wait(&child, 60000);
}

#define CGROUP_ROOT "/sys/fs/cgroup"

/* Mounts cgroup v2 at CGROUP_ROOT if nothing is there; 0 or -1. */
static inline int cgroup2_mount(void)
{
	if (!access(CGROUP_ROOT "/cgroup.controllers", F_OK))
		return 0;
	return mount("none", CGROUP_ROOT, "cgroup2", 0, NULL);
}

/* Whether this kernel is PREEMPT_RT: its version string says so. */
static inline bool kernel_is_rt(void)
{
	struct utsname u;

	return !uname(&u) && strstr(u.version, " PREEMPT_RT ");
}

/* Mounts tracefs where it belongs if it is not there; its path goes to @path. */
static inline bool find_tracefs(char *path, size_t size)
{
	static const char *const dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char events[96];
	struct stat sb;
	size_t i;

	for (i = 0; i < ARRAY_LEN(dirs); i++) {
		snprintf(events, sizeof(events), "%s/events", dirs[i]);
		if (!stat(events, &sb))
			break;
		if (i == 0 && !mount("nodev", dirs[0], "tracefs", 0, NULL) && !stat(events, &sb))
			break;
	}
	if (i == ARRAY_LEN(dirs))
		return false;
	snprintf(path, size, "%s", dirs[i]);
	return true;
}

/* The state letter of a task in /proc/<pid>/task/<tid>/stat, or 0. */
static inline char task_state(pid_t pid, pid_t tid)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	if (read_file(path, buf, sizeof(buf)) <= 0)
		return 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

/* Waits up to 10 s for task @tid of @pid to sleep in @state ('S' or 'D'). */
static inline bool task_sleeps_in(pid_t pid, pid_t tid, char state)
{
	long long deadline = now_ns() + 10000 * NSEC_PER_MSEC;

	while (now_ns() < deadline) {
		if (task_state(pid, tid) == state)
			return true;
		usleep(1000);
	}
	return false;
}

/*
 * Waits up to 10 s for STATS of @id to count @waits waits and one waiter,
 * and task @tid of @pid to sleep in @state: a child's wait, started or
 * restarted @waits times, asleep.
 */
static inline bool stats_show_asleep(int fd, uint32_t id, pid_t pid, pid_t tid,
				     uint64_t waits, char state)
{
	long long deadline = now_ns() + 10000 * NSEC_PER_MSEC;
	struct waitvar_stats st;

	while (now_ns() < deadline) {
		if (!waitvar_stats(fd, id, &st) && st.waits == waits && st.waiters == 1 &&
		    task_state(pid, tid) == state)
			return true;
		usleep(1000);
	}
	return false;
}

/*
 * True once the thread whose tid is published in @tid sleeps in @state,
 * before it sets @done: after it stored its tid it does nothing but the
 * call under test, so that state means it sleeps in the kernel's wait.
 */
static inline bool thread_sleeps_in(atomic_int *tid, atomic_int *done, char state)
{
	long long deadline = now_ns() + 10000 * NSEC_PER_MSEC;

	while (now_ns() < deadline) {
		int t = atomic_load(tid);

		if (atomic_load(done))
			return false;
		if (t && task_state(getpid(), t) == state)
			return true;
		usleep(1000);
	}
	return false;
}

/* How often task @tid of @pid went to sleep (voluntary context switches), or -1. */
static inline long task_sleeps_count(pid_t pid, pid_t tid)
{
	char path[64], buf[2048], *p;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	if (read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	p = strstr(buf, "\nvoluntary_ctxt_switches:");
	return p ? strtol(p + strlen("\nvoluntary_ctxt_switches:"), NULL, 10) : -1;
}

static inline long thread_sleeps_count(pid_t tid)
{
	return task_sleeps_count(getpid(), tid);
}

/*
 * The sleeps count of task @tid of @pid, asleep in @state, or -1 if it is
 * not within 10 s.  A task shows the state it set a moment before its
 * switch is counted, so the count is taken when two reads 5 ms apart
 * agree with the task in that state all along: the count task_not_woken()
 * compares with.
 */
static inline long task_asleep_count(pid_t pid, pid_t tid, char state)
{
	long long deadline = now_ns() + 10000 * NSEC_PER_MSEC;
	long prev = -1, count;

	while (now_ns() < deadline) {
		count = task_state(pid, tid) == state ? task_sleeps_count(pid, tid) : -1;
		if (count >= 0 && count == prev && task_state(pid, tid) == state)
			return count;
		prev = count;
		usleep(5000);
	}
	return -1;
}

/*
 * True if task @tid of @pid, asleep in @state with @sleeps sleeps, was not
 * woken since: a wake makes it runnable before the waking call returns, so
 * a woken task is runnable, has gone on, or has slept once more.
 */
static inline bool task_not_woken(pid_t pid, pid_t tid, char state, long sleeps)
{
	return sleeps >= 0 && task_state(pid, tid) == state &&
	       task_sleeps_count(pid, tid) == sleeps && task_state(pid, tid) == state;
}

/* task_not_woken() for a thread of ours that sets @done when its call returns. */
static inline bool thread_not_woken(atomic_int *tid, atomic_int *done, long sleeps)
{
	return !atomic_load(done) && task_not_woken(getpid(), atomic_load(tid), 'S', sleeps) &&
	       !atomic_load(done);
}

/* True if the signal @sig is pending for task @tid of @pid (on it or its process). */
static inline bool task_signal_pending(pid_t pid, pid_t tid, int sig)
{
	static const char *const fields[] = { "\nSigPnd:", "\nShdPnd:" };
	char path[64], buf[2048], *p;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	if (read_file(path, buf, sizeof(buf)) <= 0)
		return false;
	for (size_t i = 0; i < 2; i++) {
		p = strstr(buf, fields[i]);
		if (p && (strtoull(p + strlen(fields[i]), NULL, 16) >> (sig - 1)) & 1)
			return true;
	}
	return false;
}

/* True once @w sleeps in @state; records its sleeps count for waiter_not_woken(). */
static inline bool waiter_sleeps_in(struct waiter *w, char state)
{
	if (!thread_sleeps_in(&w->tid, &w->done, state))
		return false;
	w->sleeps = task_asleep_count(getpid(), atomic_load(&w->tid), state);
	return w->sleeps >= 0 && !atomic_load(&w->done);
}

/* Not woken since waiter_sleeps_in(@w, @state) last saw it asleep. */
static inline bool waiter_not_woken(struct waiter *w, char state)
{
	return !atomic_load(&w->done) &&
	       task_not_woken(getpid(), atomic_load(&w->tid), state, w->sleeps) &&
	       !atomic_load(&w->done);
}

static inline bool waiter_sleeps(struct waiter *w)
{
	return waiter_sleeps_in(w, 'S');
}

static inline int count_done(struct waiter *w, int nr)
{
	int i, done = 0;

	for (i = 0; i < nr; i++)
		done += atomic_load(&w[i].done);
	return done;
}

/*
 * After a wake that must end exactly @want of the @nr waiters @w, all seen
 * asleep by waiter_sleeps() before it: how many have returned once @want
 * have (10 s at most), or -1 if one of the others was woken all the same.
 */
static inline int woken_exactly(struct waiter *w, int nr, int want)
{
	long long deadline = now_ns() + 10000 * NSEC_PER_MSEC;

	while (count_done(w, nr) < want && now_ns() < deadline)
		usleep(1000);
	for (int i = 0; i < nr; i++) {
		if (!atomic_load(&w[i].done) && !waiter_not_woken(&w[i], 'S')) {
			/* Woken, it may have returned since: count it now. */
			if (!atomic_load(&w[i].done))
				fprintf(stderr, "# waiter %d was woken, or is not asleep\n", i);
			return -1;
		}
	}
	return count_done(w, nr);
}

/* Polls STATS until @field reaches @want (10 s at most); returns the last value. */
#define wait_stat(fd, id, field, want)					\
({									\
	struct waitvar_stats __st = {};					\
	long long __end = now_ns() + 10000 * NSEC_PER_MSEC;		\
									\
	while (!waitvar_stats(fd, id, &__st) && __st.field != (want) &&	\
	       now_ns() < __end)					\
		usleep(1000);						\
	__st.field;							\
})

static inline void on_signal(int sig)
{
	(void)sig;
}

/* SIGUSR1 runs on_signal(), which does nothing: a signal a wait must notice. */
static inline int handle_sigusr1(int sa_flags)
{
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = sa_flags };

	return sigaction(SIGUSR1, &sa, NULL);
}

#endif /* WAITVAR_TEST_H */
