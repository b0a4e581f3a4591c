/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What waitvar_stress and waitvar_fuzz share: the rows they count results
 * in (the ioctl commands, then poll() and read() of a WATCH descriptor,
 * then waitvar_fuzz's unknown commands), the errnos the UAPI header
 * documents for each, and small helpers (clocks, an xorshift generator,
 * errno names, module parameters, debugfs's summary).
 *
 * The errno table is written down by hand from the text of the UAPI header
 * (driver/include/uapi/linux/waitvar.h), not learnt from the driver: a
 * result outside it is a disagreement between the two.
 */
#ifndef WAITVAR_ERRNOS_H
#define WAITVAR_ERRNOS_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NSEC_PER_MSEC	1000000LL
#define NSEC_PER_SEC	1000000000LL

#define PARAM_DIR	"/sys/module/waitvar/parameters/"
#define SUMMARY		"/sys/kernel/debug/waitvar/summary"

/* ---------------------------------------------------------------------- */
/* Commands, errnos, and what the UAPI header documents for each command. */

enum cmd {
	C_CREATE, C_DESTROY, C_GET, C_SET, C_WAIT, C_WAKE, C_WAKE_NR, C_ADD,
	C_DEC_AND_WAKE, C_CMPXCHG, C_WAITV, C_WATCH, C_STATS, C_NAMED_CREATE,
	C_NAMED_OPEN, C_NAMED_REMOVE, C_LIST, C_FEATURES,
	C_WATCH_POLL,	/* poll() of a WATCH descriptor */
	C_WATCH_READ,	/* read() of a WATCH descriptor */
	C_BAD,		/* a number the driver does not have */
	NROW
};
/* The ioctl commands, 0x00-0x11, in the order of their numbers. */
#define NIOC	(C_FEATURES + 1)
/* The commands a program issues on purpose: the ioctls and WATCH's poll() and read(). */
#define NCMD	C_BAD

static const char *const cmd_name[NROW] = {
	"CREATE", "DESTROY", "GET", "SET", "WAIT", "WAKE", "WAKE_NR", "ADD",
	"DEC_AND_WAKE", "CMPXCHG", "WAITV", "WATCH", "STATS", "NAMED_CREATE",
	"NAMED_OPEN", "NAMED_REMOVE", "LIST", "FEATURES", "WATCH-poll", "WATCH-read",
	"unknown-command",
};

/* One bit per errno a command may return; B_OK is success. */
enum {
	B_OK, B_EFAULT, B_EINVAL, B_ENOTTY, B_ENOENT, B_ENOSPC, B_ENOMEM, B_EACCES,
	B_EIDRM, B_ETIMEDOUT, B_EINTR, B_EEXIST, B_EMFILE, B_EAGAIN, B_OTHER
};
#define M(e)	(1U << B_##e)

static inline unsigned int errbit(int err)
{
	switch (err) {
	case 0: return M(OK);
	case EFAULT: return M(EFAULT);
	case EINVAL: return M(EINVAL);
	case ENOTTY: return M(ENOTTY);
	case ENOENT: return M(ENOENT);
	case ENOSPC: return M(ENOSPC);
	case ENOMEM: return M(ENOMEM);
	case EACCES: return M(EACCES);
	case EIDRM: return M(EIDRM);
	case ETIMEDOUT: return M(ETIMEDOUT);
	case EINTR: return M(EINTR);
	case EEXIST: return M(EEXIST);
	case EMFILE: return M(EMFILE);
	case EAGAIN: return M(EAGAIN);
	default: return M(OTHER);
	}
}

/*
 * Errors the UAPI header (driver/include/uapi/linux/waitvar.h) documents,
 * written down by hand from its text, command by command:
 *  "Errors common to every command: EFAULT ... EINVAL ... ENOTTY ...
 *   ENOENT no variable with this id in this file (all but CREATE)";
 *  named ids: "GET, WAIT, WAITV, WATCH and STATS need read permission, the
 *   updates and wakes write permission (EACCES otherwise); DESTROY only
 *   detaches the id", and after NAMED_REMOVE "its waiters return EIDRM, and
 *   the ids still attached only report that";
 *  per-user limits: "a command that would pass one fails with ENOSPC";
 *  then each structure's "Errors:" paragraph, quoted below.
 * ENOENT is left out where no id is taken (NAMED_CREATE, LIST, FEATURES).
 */
#define DOC_COMMON	(M(OK) | M(EFAULT) | M(EINVAL) | M(ENOTTY))
#define DOC_ON_ID	(DOC_COMMON | M(ENOENT) | M(EACCES) | M(EIDRM))
static const unsigned int doc_errs[NROW] = {
	/* "ENOSPC when the file already holds max_vars_per_file ... ENOMEM" */
	[C_CREATE] = DOC_COMMON | M(ENOSPC) | M(ENOMEM),
	/* "DESTROY only detaches the id": no permission check */
	[C_DESTROY] = DOC_COMMON | M(ENOENT),
	[C_GET] = DOC_ON_ID,
	[C_SET] = DOC_ON_ID,
	/* "EINVAL ...; ENOSPC ... max_user_waiters; ETIMEDOUT ...; EINTR ...; EIDRM" */
	[C_WAIT] = DOC_ON_ID | M(ENOSPC) | M(ETIMEDOUT) | M(EINTR),
	[C_WAKE] = DOC_ON_ID,
	[C_WAKE_NR] = DOC_ON_ID,
	[C_ADD] = DOC_ON_ID,
	[C_DEC_AND_WAKE] = DOC_ON_ID,
	[C_CMPXCHG] = DOC_ON_ID,
	/* "EINVAL ...; ENOENT ...; EFAULT for @entries; ENOSPC as for WAIT; ETIMEDOUT, EINTR; EIDRM" */
	[C_WAITV] = DOC_ON_ID | M(ENOSPC) | M(ETIMEDOUT) | M(EINTR),
	/* "EINVAL for an unknown @op, ENOSPC (max_user_waiters), EMFILE, ENOMEM" */
	[C_WATCH] = DOC_ON_ID | M(ENOSPC) | M(EMFILE) | M(ENOMEM),
	[C_STATS] = DOC_ON_ID,
	/* "EINVAL ..., EEXIST (CREATE), ENOENT (OPEN, REMOVE), EACCES, ENOSPC ..., ENOMEM" */
	[C_NAMED_CREATE] = DOC_COMMON | M(EEXIST) | M(EACCES) | M(ENOSPC) | M(ENOMEM),
	[C_NAMED_OPEN] = DOC_COMMON | M(ENOENT) | M(EACCES) | M(ENOSPC) | M(ENOMEM),
	[C_NAMED_REMOVE] = DOC_COMMON | M(ENOENT) | M(EACCES) | M(ENOMEM),
	/* "EFAULT for @names, ENOMEM" */
	[C_LIST] = DOC_COMMON | M(ENOMEM),
	[C_FEATURES] = DOC_COMMON,
	/*
	 * "poll() ... report readable (EPOLLIN) while the condition holds ...
	 * After DESTROY, poll() reports EPOLLERR | EPOLLHUP": through revents,
	 * no errno but EINTR on a signal
	 */
	[C_WATCH_POLL] = M(OK) | M(EINTR),
	/* "read() ... (interruptibly) ... O_NONBLOCK (EAGAIN) ... read() fails with EIDRM" */
	[C_WATCH_READ] = M(OK) | M(EAGAIN) | M(EIDRM) | M(EINTR) | M(EFAULT),
	/* "ENOTTY  unknown command" */
	[C_BAD] = M(ENOTTY),
};

/* ---------------------------------------------------------------------- */
/* Small helpers. */

static inline long long clock_now(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static inline long long mono(void)
{
	return clock_now(CLOCK_MONOTONIC);
}

static inline void sleep_ns(long long ns)
{
	struct timespec ts = { .tv_sec = ns / NSEC_PER_SEC, .tv_nsec = ns % NSEC_PER_SEC };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

struct rng {
	uint64_t s;
};

static inline uint64_t rnd(struct rng *r)
{
	/* xorshift64* */
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 2685821657736338717ULL;
}

static inline uint32_t below(struct rng *r, uint32_t n)
{
	return n ? (uint32_t)((rnd(r) >> 32) % n) : 0;
}

static inline bool chance(struct rng *r, unsigned int percent)
{
	return below(r, 100) < percent;
}

/* The name of @err ("0" for none), or "errno N" written into @buf. */
static inline const char *errname_r(int err, char *buf, size_t size)
{
	static const struct {
		int e;
		const char *n;
	} t[] = {
		{ 0, "0" }, { EPERM, "EPERM" }, { ENOENT, "ENOENT" }, { EINTR, "EINTR" },
		{ EBADF, "EBADF" }, { EAGAIN, "EAGAIN" }, { ENOMEM, "ENOMEM" }, { EACCES, "EACCES" },
		{ EFAULT, "EFAULT" }, { EBUSY, "EBUSY" }, { EEXIST, "EEXIST" }, { EINVAL, "EINVAL" },
		{ EMFILE, "EMFILE" }, { ENFILE, "ENFILE" }, { ENOTTY, "ENOTTY" }, { ENOSPC, "ENOSPC" },
		{ E2BIG, "E2BIG" }, { ERANGE, "ERANGE" }, { ENAMETOOLONG, "ENAMETOOLONG" },
		{ EOVERFLOW, "EOVERFLOW" }, { EIDRM, "EIDRM" }, { EOPNOTSUPP, "EOPNOTSUPP" },
		{ ETIMEDOUT, "ETIMEDOUT" }, { ENOSYS, "ENOSYS" }, { ESRCH, "ESRCH" }, { EIO, "EIO" },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i].e == err)
			return t[i].n;
	snprintf(buf, size, "errno %d", err);
	return buf;
}

/* As errname_r(), into a buffer of the calling thread's own. */
static inline const char *errname(int err)
{
	static __thread char buf[24];

	return errname_r(err, buf, sizeof(buf));
}

/* ---------------------------------------------------------------------- */
/* Module parameters and debugfs's summary. */

/* Reads module parameter @name into @value; 0 or -1. */
static inline int param_read(const char *name, unsigned int *value)
{
	char path[128], buf[32];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), PARAM_DIR "%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return sscanf(buf, "%u", value) == 1 ? 0 : -1;
}

/* Async-signal-safe: the fatal-signal handlers restore with it too. */
static inline int param_write(const char *name, unsigned int value)
{
	char path[128], buf[16], tmp[16];
	int fd, len = 0, i = 0;
	ssize_t n;

	snprintf(path, sizeof(path), PARAM_DIR "%s", name);
	do {
		tmp[i++] = (char)('0' + value % 10);
		value /= 10;
	} while (value);
	while (i)
		buf[len++] = tmp[--i];
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = write(fd, buf, len);
	close(fd);
	return n == len ? 0 : -1;
}

/*
 * "files N" (unless @files is NULL), "variables N" and "waiters N" of
 * debugfs's summary, read into @buf; false if unreadable.
 */
static inline bool read_summary(unsigned long long *files, unsigned long long *vars,
				unsigned long long *waiters, char *buf, size_t size)
{
	int fd = open(SUMMARY, O_RDONLY | O_CLOEXEC);
	ssize_t n, len = 0;
	char *p;

	if (fd < 0)
		return false;
	while ((n = read(fd, buf + len, size - 1 - len)) > 0)
		len += n;
	close(fd);
	buf[len] = '\0';
	if (files) {
		p = strstr(buf, "files ");
		if (!p || sscanf(p, "files %llu", files) != 1)
			return false;
	}
	p = strstr(buf, "variables ");
	if (!p || sscanf(p, "variables %llu", vars) != 1)
		return false;
	p = strstr(buf, "waiters ");
	return p && sscanf(p, "waiters %llu", waiters) == 1;
}

#endif /* WAITVAR_ERRNOS_H */
