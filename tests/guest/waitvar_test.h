/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the /dev/waitvar test programs: one call per ioctl,
 * returning 0 or -errno, and waiter threads whose sleep can be observed.
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
#define NO_TIMEOUT (-1LL)
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Thin shapes over libwaitvar that the tests read best in. */
static inline int wv_create_flags(int fd, uint64_t value, uint32_t flags, uint32_t *id)
{
	return waitvar_create(fd, value, flags, id);
}

static inline int wv_create(int fd, uint64_t value, uint32_t *id)
{
	return waitvar_create(fd, value, 0, id);
}

/* A raw command on an id: DESTROY, WAKE or any other the test picks. */
static inline int wv_id_cmd(int fd, unsigned long cmd, uint32_t id)
{
	struct waitvar_id arg = { .id = id };

	return ioctl(fd, cmd, &arg) ? -errno : 0;
}

#define wv_get waitvar_get
#define wv_set waitvar_set
#define wv_add waitvar_add
#define wv_dec_and_wake waitvar_dec_and_wake
#define wv_cmpxchg waitvar_cmpxchg
#define wv_stats waitvar_stats

static inline int wv_wake_nr_flags(int fd, uint32_t id, uint32_t nr, uint32_t flags)
{
	return waitvar_wake_nr(fd, id, nr, flags);
}

static inline int wv_wake_nr(int fd, uint32_t id, uint32_t nr)
{
	return waitvar_wake_nr(fd, id, nr, 0);
}

/* Raw NAMED_CREATE, _OPEN or _REMOVE, every field the caller's; @id may be NULL. */
static inline int wv_named(int fd, unsigned long cmd, const char *name, uint64_t value,
			   uint32_t flags, uint32_t mode, uint32_t *id)
{
	struct waitvar_named arg = { .value = value, .flags = flags, .mode = mode };

	/* Too long a name is cut short: the device then sees another name. */
	memcpy(arg.name, name, strnlen(name, sizeof(arg.name) - 1));
	if (ioctl(fd, cmd, &arg))
		return -errno;
	if (id)
		*id = arg.id;
	return 0;
}

/* A full WAIT: timeout_ns < 0 and no timeout flag means no timeout. */
static inline int wv_wait_full(int fd, uint32_t id, uint32_t op, uint64_t operand,
			       long long timeout_ns, uint32_t flags, uint32_t mode,
			       uint64_t *seen)
{
	if (timeout_ns < 0)
		return waitvar_wait(fd, id, op, operand, mode, flags, 0, seen);
	if (!(flags & (WAITVAR_WAIT_ABS_MONOTONIC | WAITVAR_WAIT_ABS_REALTIME)))
		flags |= WAITVAR_WAIT_TIMEOUT;
	return waitvar_wait(fd, id, op, operand, mode, flags, timeout_ns, seen);
}

static inline int wv_wait(int fd, uint32_t id, uint32_t op, uint64_t operand,
			  long long timeout_ns, uint64_t *seen)
{
	return wv_wait_full(fd, id, op, operand, timeout_ns, 0, 0, seen);
}

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

/* A thread blocked in WAITVAR_IOC_WAIT. */
struct waiter {
	int fd;
	uint32_t id;
	uint32_t op;
	uint64_t operand;
	long long timeout_ns;
	uint32_t flags;
	uint32_t mode;
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
	w->ret = wv_wait_full(w->fd, w->id, w->op, w->operand, w->timeout_ns,
			      w->flags, w->mode, &w->seen);
	atomic_store(&w->done, 1);
	return NULL;
}

static inline int waiter_start(struct waiter *w)
{
	return pthread_create(&w->thread, NULL, waiter_main, w);
}

/* The state letter of a task in /proc/<pid>/task/<tid>/stat, or 0. */
static inline char task_state(pid_t pid, pid_t tid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
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
	while (!wv_stats(fd, id, &__st) && __st.field != (want) &&	\
	       now_ns() < __end)					\
		usleep(1000);						\
	__st.field;							\
})

static inline void on_signal(int sig)
{
	(void)sig;
}

#endif /* WAITVAR_TEST_H */
