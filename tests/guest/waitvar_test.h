/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the /dev/waitvar test programs, which call libwaitvar
 * (one call per ioctl, 0 or -errno) directly: waiter threads whose sleep
 * can be observed, clocks, file and module-parameter access, and the
 * layout of the UAPI structures.
 */
#ifndef WAITVAR_TEST_H
#define WAITVAR_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
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
};

static inline void *waiter_main(void *data)
{
	struct waiter *w = data;

	atomic_store(&w->tid, gettid());
	w->ret = waitvar_wait(w->fd, w->id, w->op, w->operand, w->mode, w->flags,
			      w->timeout_ns, &w->seen);
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

/* Writes all of @s to @path (sysfs, cgroupfs, ...); returns 0 or -1. */
static inline int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
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

static inline bool waiter_sleeps_in(struct waiter *w, char state)
{
	return thread_sleeps_in(&w->tid, &w->done, state);
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

/* How many of @w have returned, once @want have and a moment has passed. */
static inline int settled_done(struct waiter *w, int nr, int want)
{
	long long deadline = now_ns() + 10000 * NSEC_PER_MSEC;

	while (count_done(w, nr) < want && now_ns() < deadline)
		usleep(1000);
	usleep(100 * 1000);
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
