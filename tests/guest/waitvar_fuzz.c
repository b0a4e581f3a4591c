// SPDX-License-Identifier: GPL-2.0
/*
 * waitvar_fuzz: a structured fuzzer of the /dev/waitvar ioctls.  Not a
 * kselftest harness program: it prints KTAP itself.
 *
 *   waitvar_fuzz [--seconds S] [--threads T] [--seed N]
 *
 * Each of T threads issues commands 0x00-0x11 with their own numbers, and
 * wrong ones (other sizes, directions, numbers past the end, other magics),
 * on a file of its own or on files it shares with the others.  Fields are a
 * mix of valid values (ids from a pool of live variables, valid ops, modes
 * and flags) and boundary and random ones; the argument sits in ordinary
 * memory, at NULL, in an unmapped page, in a read-only page, or across the
 * end of a page into an unmapped one; so do WAITV's entries and LIST's
 * buffer.  Alongside: a thread that closes and reopens the shared files, one
 * that forks children (which run a few commands on the inherited files,
 * some as another user), and one that wakes, changes and signals.
 *
 * Every result is checked against what the UAPI header documents, written
 * down by hand in waitvar_errnos.h (not learnt from the driver):
 *   - the errno is one the header lists for that command;
 *   - an argument whose every field the header allows is not refused with
 *     EINVAL, and one with a field it forbids is not accepted; an
 *     unreadable argument gives EFAULT, an unknown command ENOTTY, and a
 *     command that writes its result back does not succeed on read-only
 *     memory;
 *   - what a command made is undone when its result cannot be written
 *     back (no name, id or WATCH descriptor is left behind);
 *   - no wait outlives its bound: every wait issued carries a timeout of at
 *     most 50 ms, or waits for a condition that holds for every value.
 * The seed is printed: a run can be repeated (thread timing aside).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "libwaitvar.h"
#include "waitvar_errnos.h"

#define SHORT_NS	(50 * NSEC_PER_MSEC)	/* the longest a wait may sleep */
#define SLACK_NS	(10 * NSEC_PER_SEC)	/* what a slow guest may add to it */
#define END_GRACE_NS	(20 * NSEC_PER_SEC)
#define NSHARED		2
#define POOL		48
#define NAMES		64
#define NWATCH		8
#define MAX_THREADS	256
#define MAX_CHILDREN	4
#define MAX_REPORTS	25
#define LIST_BYTES	(128 * 1024)


/* ---------------------------------------------------------------------- */
/* The ioctl command of each row (the rows are in waitvar_errnos.h). */

static const unsigned long cmd_of[NIOC] = {
	WAITVAR_IOC_CREATE, WAITVAR_IOC_DESTROY, WAITVAR_IOC_GET, WAITVAR_IOC_SET,
	WAITVAR_IOC_WAIT, WAITVAR_IOC_WAKE, WAITVAR_IOC_WAKE_NR, WAITVAR_IOC_ADD,
	WAITVAR_IOC_DEC_AND_WAKE, WAITVAR_IOC_CMPXCHG, WAITVAR_IOC_WAITV, WAITVAR_IOC_WATCH,
	WAITVAR_IOC_STATS, WAITVAR_IOC_NAMED_CREATE, WAITVAR_IOC_NAMED_OPEN,
	WAITVAR_IOC_NAMED_REMOVE, WAITVAR_IOC_LIST, WAITVAR_IOC_FEATURES,
};

/* 0, 1, the edges, or random bits. */
static uint64_t edge64(struct rng *r)
{
	static const uint64_t e[] = {
		0, 1, 2, 0x7f, 0xff, 0xffffffffULL, 0x100000000ULL, INT64_MAX,
		(uint64_t)INT64_MIN, ~0ULL, ~0ULL - 1,
	};

	if (chance(r, 50))
		return e[below(r, sizeof(e) / sizeof(e[0]))];
	return rnd(r) >> below(r, 64);
}

static uint32_t edge32(struct rng *r)
{
	static const uint32_t e[] = { 0, 1, 2, 0x80, 0xffff, INT32_MAX, 0x80000000U, ~0U };

	if (chance(r, 60))
		return e[below(r, sizeof(e) / sizeof(e[0]))];
	return (uint32_t)rnd(r) >> below(r, 32);
}

/* ---------------------------------------------------------------------- */
/* Reports: KTAP lines, failures counted against each, children's too. */

enum check {
	K_SETUP, K_DOCUMENTED, K_MODEL, K_BOUNDED, K_UNDO, K_FEATURES, K_SIGNALS, K_CLEANUP,
	K_TIME, NCHECK
};

static const char *const check_name[NCHECK] = {
	"setup", "every_errno_documented", "results_match_the_header",
	"waits_end_within_their_bound", "nothing_made_on_efault",
	"features_match_module_parameters", "no_unexpected_signals_or_crash", "cleanup",
	"ended_in_time",
};

static atomic_ulong fails[NCHECK];
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static bool in_child;		/* a forked child: no stdio, no locks */
static int child_status;
static atomic_int ktap_n;

/* Writes a whole line with one write(): safe in a child and in a signal handler. */
static void raw_line(const char *s)
{
	size_t len = strlen(s);

	while (len) {
		ssize_t n = write(STDOUT_FILENO, s, len);

		if (n <= 0)
			return;
		s += n;
		len -= n;
	}
}

static void __attribute__((format(printf, 1, 2))) diag(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	strcpy(buf, "# ");
	va_start(ap, fmt);
	n = vsnprintf(buf + 2, sizeof(buf) - 3, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	strcat(buf, "\n");
	if (in_child) {
		raw_line(buf);
		return;
	}
	pthread_mutex_lock(&out_lock);
	fputs(buf, stdout);
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
}

static void __attribute__((format(printf, 2, 3))) fail(enum check k, const char *fmt, ...)
{
	char buf[1400];
	unsigned long n;
	va_list ap;
	int len;

	if (in_child) {
		/* the parent counts it from the exit status */
		child_status = k == K_DOCUMENTED ? 1 : child_status ? child_status : 2;
		n = 1;
	} else {
		n = atomic_fetch_add(&fails[k], 1) + 1;
	}
	if (n > MAX_REPORTS)
		return;
	len = snprintf(buf, sizeof(buf), "# %s%s: ", in_child ? "child: " : "", check_name[k]);
	va_start(ap, fmt);
	vsnprintf(buf + len, sizeof(buf) - len - 80, fmt, ap);
	va_end(ap);
	if (n == MAX_REPORTS)
		strcat(buf, " (further failures of this kind are counted, not printed)");
	strcat(buf, "\n");
	if (in_child) {
		raw_line(buf);
		return;
	}
	pthread_mutex_lock(&out_lock);
	fputs(buf, stdout);
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
}

static void ktap(enum check k, const char *skip)
{
	unsigned long n = atomic_load(&fails[k]);

	pthread_mutex_lock(&out_lock);
	atomic_fetch_add(&ktap_n, 1);
	if (skip)
		printf("ok %d %s # SKIP %s\n", (int)k + 1, check_name[k], skip);
	else if (n)
		printf("not ok %d %s # %lu failure%s\n", (int)k + 1, check_name[k], n,
		       n == 1 ? "" : "s");
	else
		printf("ok %d %s\n", (int)k + 1, check_name[k]);
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
}

/* ---------------------------------------------------------------------- */
/* Module parameters, raised when the run needs it and restored at its end. */

enum { P_USER_VARS, P_USER_WAITERS, P_USER_NAMES, P_PER_FILE, P_NAMED, P_UNINT_MS, NPARAM };
static const char *const param_name[NPARAM] = {
	"max_user_vars", "max_user_waiters", "max_user_names", "max_vars_per_file",
	"max_named_vars", "max_uninterruptible_ms",
};
static unsigned int param_old[NPARAM];
static bool param_changed[NPARAM];

/* Raises parameter @i to at least @need (remembering the first value); 0 or -1. */
static int param_raise(int i, unsigned int need)
{
	unsigned int now;

	if (param_read(param_name[i], &now))
		return -1;
	if (now >= need)
		return 0;
	if (!param_changed[i])
		param_old[i] = now;
	if (param_write(param_name[i], need))
		return -1;
	param_changed[i] = true;
	diag("raised %s from %u to %u", param_name[i], now, need);
	return 0;
}

static bool params_restore(bool quiet)
{
	unsigned int now;
	bool ok = true;
	int i;

	for (i = 0; i < NPARAM; i++) {
		if (!param_changed[i])
			continue;
		if (param_write(param_name[i], param_old[i]) ||
		    param_read(param_name[i], &now) || now != param_old[i]) {
			ok = false;
			if (!quiet)
				diag("cannot restore %s to %u", param_name[i], param_old[i]);
			continue;
		}
		param_changed[i] = false;
		if (!quiet)
			diag("restored %s to %u", param_name[i], param_old[i]);
	}
	return ok;
}

/* ---------------------------------------------------------------------- */
/* Pools of ids, the names, the shared files, the threads. */

struct pool {
	pthread_mutex_t mu;
	atomic_uint id[POOL];
	atomic_int kind[POOL];	/* the CREATE lock flags, or -1: not known */
	atomic_int n;
};

struct shared {
	atomic_int fd;
	pthread_rwlock_t rw;	/* held to use fd; the closer takes it to close it */
	struct pool pool;
};

struct name {
	char s[WAITVAR_NAME_MAX];
	int kind;		/* its CREATE lock flags */
	bool live;
};

/* A WATCH descriptor the fuzzer holds. */
struct wfd {
	int fd;
	bool any_value;		/* its condition holds for every value */
};

enum row_count_kind { NERR = 136 };	/* errno 0..134, then "other" */

struct fstat {
	uint64_t iters[NROW], reached[NROW];
	uint64_t err[NROW][NERR];
};

struct fz {
	int idx;
	pid_t tid;
	pthread_t th;
	bool started;
	atomic_int done;
	struct rng rng;
	int fd;			/* its own file */
	struct pool pool;
	unsigned char *mem;	/* the argument pages, see map_pages() */
	char *list;		/* LIST's buffer: LIST_BYTES, then an unmapped page */
	struct wfd w[NWATCH];
	int nw;
	unsigned int seq;	/* for its names */
	struct fstat *st;
	bool helper;		/* the waker: no arguments in odd places */
};

static struct {
	int seconds, threads;
	uint64_t seed;
	long page;
	struct shared sh[NSHARED];
	struct fz *fz;
	struct fz waker;
	struct waitvar_features feat;
	long long t_start;
	pid_t pid;
	pthread_mutex_t names_mu;
	struct name names[NAMES];
	unsigned int max_per_file;	/* the most max_vars_per_file was during the run */
	atomic_int children_killed, children_crashed, children_bad;
	atomic_ulong children_run;
	atomic_ulong closes, signals_sent;
} g;

static atomic_int stop;
static atomic_int unexpected_signals;

static void pool_init(struct pool *p)
{
	pthread_mutex_init(&p->mu, NULL);
}

static bool pool_add(struct pool *p, uint32_t id, int kind)
{
	bool ok = false;
	int n;

	if (in_child)
		return false;
	pthread_mutex_lock(&p->mu);
	n = atomic_load(&p->n);
	if (n < POOL) {
		atomic_store(&p->kind[n], kind);
		atomic_store(&p->id[n], id);
		atomic_store(&p->n, n + 1);
		ok = true;
	}
	pthread_mutex_unlock(&p->mu);
	return ok;
}

/* Forgets @id; true if it was there. */
static bool pool_del(struct pool *p, uint32_t id)
{
	bool found = false;
	int i, n;

	if (in_child)
		return false;
	pthread_mutex_lock(&p->mu);
	n = atomic_load(&p->n);
	for (i = 0; i < n; i++) {
		if (atomic_load(&p->id[i]) != id)
			continue;
		atomic_store(&p->id[i], atomic_load(&p->id[n - 1]));
		atomic_store(&p->kind[i], atomic_load(&p->kind[n - 1]));
		atomic_store(&p->n, n - 1);
		found = true;
		break;
	}
	pthread_mutex_unlock(&p->mu);
	return found;
}

/* Any id of the pool (no lock: a child may pick from its copy too). */
static bool pool_pick(struct pool *p, struct rng *r, uint32_t *id, int *kind)
{
	int n = atomic_load(&p->n), i;

	if (n <= 0 || n > POOL)
		return false;
	i = below(r, n);
	*id = atomic_load(&p->id[i]);
	*kind = atomic_load(&p->kind[i]);
	return true;
}

/* ---------------------------------------------------------------------- */
/* One call: its argument, what the header says about it, where it sits. */

enum verdict { VALID, INVALID, UNKNOWN };
static const char *const verdict_name[] = { "valid", "invalid", "unknown" };

enum place { PL_NORMAL, PL_NULL, PL_UNMAPPED, PL_READONLY, PL_STRADDLE, NPLACE };
static const char *const place_name[NPLACE] = {
	"in ordinary memory", "at NULL", "in an unmapped page", "in a read-only page",
	"across a page's end into an unmapped page",
};

/*
 * The argument pages of each thread: 0 ordinary, 1 ordinary (an argument at
 * its end runs into 2), 2 unmapped, 3 read-only, 4 unmapped; then the same
 * for WAITV's entries at 5-9.
 */
enum { PG_ARG = 0, PG_ARG_EDGE = 1, PG_ARG_NONE = 2, PG_ARG_RO = 3, PG_ENT = 5, NPAGES = 10 };

struct call {
	int row;
	unsigned long cmd;
	union {
		unsigned char raw[128];
		struct waitvar_create create;
		struct waitvar_id id;
		struct waitvar_value value;
		struct waitvar_wait wait;
		struct waitvar_wake_nr wake_nr;
		struct waitvar_add add;
		struct waitvar_cmpxchg cmpxchg;
		struct waitvar_waitv waitv;
		struct waitvar_watch watch;
		struct waitvar_stats stats;
		struct waitvar_named named;
		struct waitvar_list list;
		struct waitvar_features features;
	} a, out;
	size_t len;		/* bytes of the argument */
	int verdict;
	char why[120];		/* what makes it invalid, or its verdict unknown */
	int place;
	size_t readable;	/* PL_STRADDLE: the bytes before the unmapped page */
	/* WAITV entries */
	struct waitvar_waitv_entry ent[WAITVAR_WAITV_MAX + 2];
	uint32_t nent;		/* entries built (may be fewer than count) */
	int ent_place;
	bool ent_readable;	/* count entries can be read */
	/* waits */
	bool is_wait;
	long long bound_ns;	/* the longest it may sleep */
	/* what post() needs */
	int kind;		/* the variable's lock, -1 not known */
	bool fresh_name;	/* NAMED_CREATE of a name never made before */
	bool any_value;		/* WATCH: a condition every value meets */
};

static void bad(struct call *c, const char *why)
{
	if (c->verdict != INVALID) {
		c->verdict = INVALID;
		snprintf(c->why, sizeof(c->why), "%s", why);
	}
}

static void unknown(struct call *c, const char *why)
{
	if (c->verdict == VALID) {
		c->verdict = UNKNOWN;
		snprintf(c->why, sizeof(c->why), "%s", why);
	}
}

/* The file a call goes to, and the pool of ids it knows there. */
struct target {
	int fd;
	struct pool *pool;
	bool kinds_known;	/* only its own file's pool knows the variables' locks */
	const char *what;
};

/* An id: mostly a live one (its lock known or not), else 0, random, stale. */
static uint32_t pick_id(struct fz *z, struct target *t, int *kind)
{
	uint32_t id;

	*kind = -1;
	if (chance(&z->rng, 75) && pool_pick(t->pool, &z->rng, &id, kind)) {
		if (!t->kinds_known)
			*kind = -1;
		return id;
	}
	switch (below(&z->rng, 4)) {
	case 0: return 0;
	case 1: return 1 + below(&z->rng, 1100);
	case 2: return ~0U;
	default: return edge32(&z->rng);
	}
}

/* A comparison that holds for every value, so a wait on it cannot sleep. */
static void any_value_condition(struct rng *r, __u32 *op, __u64 *operand)
{
	static const struct {
		uint32_t op;
		uint64_t operand;
	} c[] = {
		{ WAITVAR_OP_GE, 0 }, { WAITVAR_OP_LE, ~0ULL }, { WAITVAR_OP_GE_S, (uint64_t)INT64_MIN },
		{ WAITVAR_OP_LE_S, INT64_MAX }, { WAITVAR_OP_NONE, 0 }, { WAITVAR_OP_ALL, 0 },
	};
	uint32_t i = below(r, sizeof(c) / sizeof(c[0]));

	*op = c[i].op;
	*operand = c[i].operand;
}

/* An op: mostly one of enum waitvar_op, sometimes past it (refused). */
static uint32_t any_op(struct fz *z)
{
	if (chance(&z->rng, 92))
		return below(&z->rng, WAITVAR_OP_COUNT);
	return chance(&z->rng, 50) ? WAITVAR_OP_COUNT + below(&z->rng, 4) : edge32(&z->rng) | 16;
}

static uint32_t pick_op(struct fz *z, struct call *c)
{
	uint32_t op = any_op(z);

	if (op >= WAITVAR_OP_COUNT)
		bad(c, "op past enum waitvar_op");
	return op;
}

/* A lock flag set for CREATE and NAMED_CREATE: "at most one of the two". */
static uint32_t pick_create_flags(struct fz *z, struct call *c)
{
	uint32_t f;

	switch (below(&z->rng, 12)) {
	case 0:
		bad(c, "both lock flags");
		return WAITVAR_CREATE_SPINLOCK | WAITVAR_CREATE_MUTEX;
	case 1:
		f = (uint32_t)rnd(&z->rng) | 4U << below(&z->rng, 28);
		bad(c, "unknown CREATE flag bits");
		return f;
	case 2: case 3: case 4:
		return WAITVAR_CREATE_SPINLOCK;
	case 5: case 6: case 7:
		return WAITVAR_CREATE_MUTEX;
	default:
		return 0;
	}
}

/* Sometimes a nonzero value in a field the header wants 0 in. */
static uint64_t maybe_junk(struct fz *z, struct call *c, const char *field, unsigned int percent)
{
	char why[80];

	if (!chance(&z->rng, percent))
		return 0;
	snprintf(why, sizeof(why), "%s not 0", field);
	bad(c, why);
	return edge64(&z->rng) | 1ULL << below(&z->rng, 64);
}

static uint32_t maybe_junk32(struct fz *z, struct call *c, const char *field, unsigned int percent)
{
	char why[80];

	if (!chance(&z->rng, percent))
		return 0;
	snprintf(why, sizeof(why), "%s not 0", field);
	bad(c, why);
	return edge32(&z->rng) | 1U << below(&z->rng, 32);
}

#define TIMEOUT_KINDS (WAITVAR_WAIT_TIMEOUT | WAITVAR_WAIT_ABS_MONOTONIC | WAITVAR_WAIT_ABS_REALTIME)

/*
 * Mode, flags and timeout of a WAIT or WAITV.  @any_value: its condition
 * holds for every value, so any timeout is safe; otherwise every reading of
 * the timeout ends the sleep within 50 ms.  Sets the call's verdict from
 * the header's rules on modes and timeouts.
 */
static void pick_timing(struct fz *z, struct call *c, bool any_value, __u32 *mode,
			__u32 *flags, __u64 *timeout_ns)
{
	long long cap = (long long)g.feat.max_uninterruptible_ms * NSEC_PER_MSEC, left = 0;
	uint32_t kinds, k;
	bool unint;

	*mode = below(&z->rng, WAITVAR_MODE_COUNT);
	if (chance(&z->rng, 5)) {
		*mode = chance(&z->rng, 50) ? WAITVAR_MODE_COUNT + below(&z->rng, 3) : edge32(&z->rng) | 8;
		bad(c, "mode past enum waitvar_mode");
	}
	unint = *mode == WAITVAR_MODE_IO || *mode == WAITVAR_MODE_UNINTERRUPTIBLE;

	/* the timeout kind: none, one, or (refused) two */
	k = below(&z->rng, 10);
	kinds = k < 2 && any_value ? 0 :
		k < 4 ? WAITVAR_WAIT_TIMEOUT :
		k < 6 ? WAITVAR_WAIT_ABS_MONOTONIC :
		k < 8 ? WAITVAR_WAIT_ABS_REALTIME : 0;
	if (!kinds && (!any_value || k >= 8)) {
		/* two kinds at once: refused; both readings short */
		kinds = WAITVAR_WAIT_TIMEOUT |
			(chance(&z->rng, 50) ? WAITVAR_WAIT_ABS_MONOTONIC : WAITVAR_WAIT_ABS_REALTIME);
		if (chance(&z->rng, 20))
			kinds = TIMEOUT_KINDS;
		bad(c, "two timeout kinds");
	}
	*flags |= kinds;
	/* the jiffies variants instead of the hrtimer ones: only with a timeout */
	if (chance(&z->rng, 15)) {
		*flags |= WAITVAR_WAIT_JIFFIES;
		if (!kinds)
			bad(c, "JIFFIES without a timeout kind");
	}

	if (!kinds) {
		*timeout_ns = 0;
		if (chance(&z->rng, 10)) {
			*timeout_ns = edge64(&z->rng) | 1;
			bad(c, "timeout_ns without a timeout flag");
		}
		if (unint)
			bad(c, "IO or UNINTERRUPTIBLE without a timeout");
		c->bound_ns = any_value ? 0 : LLONG_MAX;
		return;
	}
	if (kinds & (kinds - 1)) {
		*timeout_ns = below(&z->rng, SHORT_NS + 1);
		c->bound_ns = any_value ? 0 : SHORT_NS;
		return;
	}
	if (kinds == WAITVAR_WAIT_TIMEOUT) {
		if (any_value && chance(&z->rng, 50))
			*timeout_ns = chance(&z->rng, 50) ? edge64(&z->rng) :
				      (uint64_t)below(&z->rng, 20000) * NSEC_PER_MSEC;
		else
			*timeout_ns = chance(&z->rng, 20) ? below(&z->rng, 3) :
				      below(&z->rng, SHORT_NS + 1);
		left = *timeout_ns > (uint64_t)LLONG_MAX ? LLONG_MAX : (long long)*timeout_ns;
	} else {
		clockid_t clk = kinds == WAITVAR_WAIT_ABS_MONOTONIC ? CLOCK_MONOTONIC : CLOCK_REALTIME;
		long long now = clock_now(clk);

		if (any_value && chance(&z->rng, 50))
			*timeout_ns = chance(&z->rng, 30) ? edge64(&z->rng) :
				      (uint64_t)(now + (long long)below(&z->rng, 20000) * NSEC_PER_MSEC);
		else if (chance(&z->rng, 30))
			*timeout_ns = chance(&z->rng, 50) ? (uint64_t)(now - below(&z->rng, 1000) * NSEC_PER_MSEC) :
				      below(&z->rng, 3);
		else
			*timeout_ns = now + below(&z->rng, SHORT_NS + 1);
		left = (long long)(*timeout_ns - (uint64_t)now);
		if (*timeout_ns > (uint64_t)LLONG_MAX)
			left = LLONG_MAX;
		else if ((long long)*timeout_ns <= now)
			left = 0;
	}
	/* a condition every value meets never sleeps, whatever its timeout */
	c->bound_ns = any_value ? 0 : left < SHORT_NS ? SHORT_NS : left;
	if (!unint || !cap)
		return;
	/* "a timeout of at most max_uninterruptible_ms (a deadline counts from the start)" */
	if (kinds == WAITVAR_WAIT_TIMEOUT) {
		if (*timeout_ns > (uint64_t)cap)
			bad(c, "IO or UNINTERRUPTIBLE timeout over max_uninterruptible_ms");
	} else if (left > cap + 5 * NSEC_PER_SEC) {
		bad(c, "IO or UNINTERRUPTIBLE deadline over max_uninterruptible_ms away");
	} else if (left > cap) {
		unknown(c, "deadline about max_uninterruptible_ms away");
	}
}

static void gen_wait(struct fz *z, struct target *t, struct call *c)
{
	struct waitvar_wait *w = &c->a.wait;
	bool any_value = chance(&z->rng, 35);
	int kind;

	c->is_wait = true;
	w->id = pick_id(z, t, &kind);
	if (any_value) {
		any_value_condition(&z->rng, &w->op, &w->operand);
	} else {
		w->op = pick_op(z, c);
		w->operand = edge64(&z->rng);
	}
	if (chance(&z->rng, 25))
		w->flags |= WAITVAR_WAIT_EXCLUSIVE;
	pick_timing(z, c, any_value, &w->mode, &w->flags, &w->timeout_ns);
	if (chance(&z->rng, 4)) {
		w->flags |= 32U << below(&z->rng, 27);
		bad(c, "unknown WAIT flag bits");
	}
	w->value = maybe_junk(z, c, "value (out)", 4);
	/* "EXCLUSIVE or IO on a lock-protected variable" */
	if ((w->flags & WAITVAR_WAIT_EXCLUSIVE) || w->mode == WAITVAR_MODE_IO) {
		if (kind > 0)
			bad(c, "EXCLUSIVE or IO on a lock-protected variable");
		else if (kind < 0)
			unknown(c, "EXCLUSIVE or IO on a variable whose lock is not known");
	}
}

static void gen_waitv(struct fz *z, struct target *t, struct call *c)
{
	struct waitvar_waitv *v = &c->a.waitv;
	bool any_value = chance(&z->rng, 35), locked = false;
	uint32_t count, i;

	c->is_wait = true;
	switch (below(&z->rng, 20)) {
	case 0:
		count = 0;
		bad(c, "count 0");
		break;
	case 1:
		count = WAITVAR_WAITV_MAX + 1 + (chance(&z->rng, 50) ? 0 : edge32(&z->rng) % 100000);
		bad(c, "count over WAITVAR_WAITV_MAX");
		break;
	case 2:
		count = WAITVAR_WAITV_MAX;
		break;
	case 3:
		count = ~0U;
		bad(c, "count over WAITVAR_WAITV_MAX");
		break;
	default:
		count = 1 + below(&z->rng, 6);
		break;
	}
	v->count = count;
	c->nent = count <= WAITVAR_WAITV_MAX ? count : 1 + below(&z->rng, 4);
	for (i = 0; i < c->nent; i++) {
		struct waitvar_waitv_entry *e = &c->ent[i];
		int kind;

		e->id = pick_id(z, t, &kind);
		if (kind != 0)
			locked = true;
		if (i == 0 && any_value) {
			any_value_condition(&z->rng, &e->op, &e->operand);
			continue;
		}
		e->op = any_op(z);
		e->operand = edge64(&z->rng);
		if (chance(&z->rng, 2))
			e->flags = edge32(&z->rng) | 1;
		if (chance(&z->rng, 2))
			e->reserved = edge32(&z->rng) | 1;
	}
	/* the entry that holds for every value need not be the first */
	if (any_value && chance(&z->rng, 20) && c->nent > 1) {
		struct waitvar_waitv_entry tmp = c->ent[c->nent - 1];

		c->ent[c->nent - 1] = c->ent[0];
		c->ent[0] = tmp;
	}
	/* "an entry's nonzero flags or reserved field", an unknown op: of the entries passed */
	for (i = 0; count <= WAITVAR_WAITV_MAX && i < c->nent; i++) {
		if (c->ent[i].op >= WAITVAR_OP_COUNT)
			bad(c, "an entry's op past enum waitvar_op");
		if (c->ent[i].flags)
			bad(c, "an entry's flags not 0");
		if (c->ent[i].reserved)
			bad(c, "an entry's reserved not 0");
	}
	if (chance(&z->rng, 5)) {
		v->flags |= WAITVAR_WAIT_EXCLUSIVE;
		bad(c, "EXCLUSIVE in WAITV");
	}
	pick_timing(z, c, any_value, &v->mode, &v->flags, &v->timeout_ns);
	if (chance(&z->rng, 3)) {
		v->flags |= 32U << below(&z->rng, 27);
		bad(c, "unknown WAITV flag bits");
	}
	v->index = maybe_junk32(z, c, "index (out)", 3);
	v->value = maybe_junk(z, c, "value (out)", 3);
	if (v->mode == WAITVAR_MODE_IO && locked)
		unknown(c, "IO WAITV naming a lock-protected (or unknown) variable");

	/* where the entries sit */
	c->ent_place = chance(&z->rng, 85) ? PL_NORMAL : (int)below(&z->rng, NPLACE);
}

static void gen_named_name(struct fz *z, struct call *c, char *name, bool creating)
{
	/* the last: a Latin-1 letter, outside [A-Za-z0-9._-] as the header has it */
	static const char *const invalid[] = {
		"", "/", "noslash", "/a/b", "/sp ace", "//", "/tab\t", "/x?", "a/", "/caf\xe9",
	};
	uint32_t r = below(&z->rng, 100), i;

	memset(name, 0, WAITVAR_NAME_MAX);
	if (r < 15) {
		snprintf(name, WAITVAR_NAME_MAX, "%s", invalid[below(&z->rng, 10)]);
		bad(c, "bad name");
		return;
	}
	if (r < 20) {
		/* 63 characters after the slash: no NUL in the field */
		name[0] = '/';
		for (i = 1; i < WAITVAR_NAME_MAX; i++)
			name[i] = 'a' + i % 26;
		bad(c, "name not NUL-terminated in 64 bytes");
		return;
	}
	if (r < 55 && !in_child) {
		int k;

		pthread_mutex_lock(&g.names_mu);
		k = below(&z->rng, NAMES);
		if (g.names[k].s[0]) {
			memcpy(name, g.names[k].s, WAITVAR_NAME_MAX);
			c->kind = g.names[k].kind;
		}
		pthread_mutex_unlock(&g.names_mu);
		if (name[0])
			return;
	} else if (r < 55) {
		/* a child reads its copy of the table, without the lock */
		int k = below(&z->rng, NAMES);

		memcpy(name, g.names[k].s, WAITVAR_NAME_MAX);
		name[WAITVAR_NAME_MAX - 1] = '\0';
		c->kind = g.names[k].kind;
		if (name[0])
			return;
	}
	/* a name never used before: this program's prefix, the thread, a count */
	snprintf(name, WAITVAR_NAME_MAX, "/wvfz-%d-%d-%u", (int)g.pid,
		 in_child ? 1000 + (int)(getpid() % 100000) : z->idx, z->seq++);
	if (chance(&z->rng, 15)) {
		/* as long as a name may be: 62 characters after the slash */
		size_t len = strlen(name);

		memset(name + len, '_', WAITVAR_NAME_MAX - 2 - len);
		name[WAITVAR_NAME_MAX - 2] = 'z';
		name[WAITVAR_NAME_MAX - 1] = '\0';
	}
	c->fresh_name = creating;
}

/* Is @name what the header allows: "/" and 1 to 62 of [A-Za-z0-9._-], NUL-terminated? */
static bool name_valid(const char *name)
{
	size_t len = strnlen(name, WAITVAR_NAME_MAX), i;

	if (len < 2 || len >= WAITVAR_NAME_MAX || name[0] != '/')
		return false;
	for (i = 1; i < len; i++) {
		char ch = name[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-'))
			return false;
	}
	return true;
}

static void gen_named(struct fz *z, struct target *t, struct call *c)
{
	struct waitvar_named *n = &c->a.named;
	bool create = c->row == C_NAMED_CREATE;
	size_t len;

	(void)t;
	c->kind = -1;
	gen_named_name(z, c, n->name, create);
	if (c->verdict == VALID && !name_valid(n->name))
		bad(c, "bad name");
	len = strnlen(n->name, WAITVAR_NAME_MAX);
	if (len < WAITVAR_NAME_MAX - 1 && chance(&z->rng, 4)) {
		/* bytes after the NUL: the header does not say */
		n->name[len + 1 + below(&z->rng, WAITVAR_NAME_MAX - len - 1)] = 'x';
		unknown(c, "bytes after the name's NUL");
	}
	if (create && c->kind >= 0) {
		/* a name of the table keeps its lock, made again or not: ids of it stay known */
		n->value = edge64(&z->rng);
		n->flags = c->kind;
		if (chance(&z->rng, 8)) {
			n->flags |= 4U << below(&z->rng, 28);
			bad(c, "unknown CREATE flag bits");
		}
		n->mode = below(&z->rng, 01000);
	} else if (create) {
		n->value = edge64(&z->rng);
		n->flags = pick_create_flags(z, c);
		c->kind = (int)(n->flags & (WAITVAR_CREATE_SPINLOCK | WAITVAR_CREATE_MUTEX));
		n->mode = chance(&z->rng, 85) ? below(&z->rng, 01000) : 01000 + edge32(&z->rng) % 0100000;
		if (n->mode > 0777)
			bad(c, "mode over 0777");
	} else {
		n->value = maybe_junk(z, c, "value", 3);
		n->flags = maybe_junk32(z, c, "flags", 3);
		n->mode = maybe_junk32(z, c, "mode", 3);
	}
	n->id = maybe_junk32(z, c, "id (out)", 3);
	n->reserved = maybe_junk32(z, c, "reserved", 3);
}

/* Fills in command @row's argument and says what the header makes of it. */
static void gen(struct fz *z, struct target *t, struct call *c)
{
	int kind;

	c->cmd = cmd_of[c->row];
	c->len = _IOC_SIZE(c->cmd);
	c->kind = -1;
	switch (c->row) {
	case C_CREATE:
		c->a.create.value = edge64(&z->rng);
		c->a.create.flags = pick_create_flags(z, c);
		c->kind = (int)(c->a.create.flags & (WAITVAR_CREATE_SPINLOCK | WAITVAR_CREATE_MUTEX));
		c->a.create.id = maybe_junk32(z, c, "id (out)", 4);
		c->a.create.reserved[0] = maybe_junk(z, c, "reserved[0]", 3);
		c->a.create.reserved[1] = maybe_junk(z, c, "reserved[1]", 3);
		break;
	case C_DESTROY:
	case C_WAKE:
		c->a.id.id = pick_id(z, t, &kind);
		c->a.id.flags = maybe_junk32(z, c, "flags", 5);
		break;
	case C_GET:
	case C_DEC_AND_WAKE:
		c->a.value.id = pick_id(z, t, &kind);
		c->a.value.flags = maybe_junk32(z, c, "flags", 4);
		c->a.value.value = maybe_junk(z, c, "value (out)", 4);
		break;
	case C_SET:
		c->a.value.id = pick_id(z, t, &kind);
		c->a.value.flags = maybe_junk32(z, c, "flags", 4);
		c->a.value.value = edge64(&z->rng);
		break;
	case C_WAIT:
		gen_wait(z, t, c);
		break;
	case C_WAKE_NR:
		c->a.wake_nr.id = pick_id(z, t, &kind);
		c->a.wake_nr.flags = chance(&z->rng, 50) ? WAITVAR_WAKE_FILTER : 0;
		if (chance(&z->rng, 4)) {
			c->a.wake_nr.flags |= 2U << below(&z->rng, 31);
			bad(c, "unknown WAKE_NR flag bits");
		}
		/*
		 * "how many exclusive waiters to wake at most, up to INT_MAX; 0 wakes
		 * them all", and "EINVAL for ... @nr over INT_MAX"
		 */
		c->a.wake_nr.nr = chance(&z->rng, 50) ? below(&z->rng, 4) : edge32(&z->rng);
		if (c->a.wake_nr.nr > (uint32_t)INT_MAX)
			bad(c, "WAKE_NR nr over INT_MAX");
		c->a.wake_nr.woken = maybe_junk32(z, c, "woken (out)", 4);
		break;
	case C_ADD:
		c->a.add.id = pick_id(z, t, &kind);
		c->a.add.flags = chance(&z->rng, 50) ? WAITVAR_ADD_WAKE : 0;
		if (chance(&z->rng, 4)) {
			c->a.add.flags |= 2U << below(&z->rng, 31);
			bad(c, "unknown ADD flag bits");
		}
		c->a.add.delta = (int64_t)edge64(&z->rng);
		c->a.add.value = maybe_junk(z, c, "value (out)", 4);
		break;
	case C_CMPXCHG:
		c->a.cmpxchg.id = pick_id(z, t, &kind);
		c->a.cmpxchg.flags = maybe_junk32(z, c, "flags", 4);
		c->a.cmpxchg.expected = edge64(&z->rng);
		c->a.cmpxchg.desired = edge64(&z->rng);
		c->a.cmpxchg.prev = maybe_junk(z, c, "prev (out)", 4);
		break;
	case C_WAITV:
		gen_waitv(z, t, c);
		break;
	case C_WATCH:
		c->a.watch.id = pick_id(z, t, &kind);
		if (chance(&z->rng, 40)) {
			any_value_condition(&z->rng, &c->a.watch.op, &c->a.watch.operand);
			c->any_value = true;
		} else {
			c->a.watch.op = pick_op(z, c);
			c->a.watch.operand = edge64(&z->rng);
		}
		c->a.watch.flags = maybe_junk32(z, c, "flags", 4);
		c->a.watch.fd = maybe_junk32(z, c, "fd (out)", 4);
		break;
	case C_STATS:
		c->a.stats.id = pick_id(z, t, &kind);
		c->a.stats.flags = maybe_junk32(z, c, "flags", 3);
		if (chance(&z->rng, 8)) {
			/* any out field */
			size_t off = offsetof(struct waitvar_stats, waiters);

			c->a.raw[off + below(&z->rng, sizeof(c->a.stats) - off)] = 1 + below(&z->rng, 255);
			bad(c, "an out field not 0");
		}
		break;
	case C_NAMED_CREATE:
	case C_NAMED_OPEN:
	case C_NAMED_REMOVE:
		gen_named(z, t, c);
		break;
	case C_LIST:
		switch (below(&z->rng, 8)) {
		case 0: c->a.list.size = 0; break;
		case 1: c->a.list.size = 1 + below(&z->rng, 64); break;
		case 2: c->a.list.size = LIST_BYTES; break;
		default: c->a.list.size = below(&z->rng, 4096); break;
		}
		c->a.list.flags = maybe_junk32(z, c, "flags", 4);
		c->a.list.count = maybe_junk32(z, c, "count (out)", 4);
		c->a.list.needed = maybe_junk32(z, c, "needed (out)", 4);
		break;
	case C_FEATURES:
		if (chance(&z->rng, 15)) {
			c->a.raw[below(&z->rng, sizeof(c->a.features))] = 1 + below(&z->rng, 255);
			bad(c, "a field of FEATURES not 0");
		}
		break;
	}
}

/* A command number the driver does not have: expect ENOTTY, and the argument untouched. */
static void gen_bad_cmd(struct fz *z, struct call *c)
{
	/* magics the VFS itself answers for (FIOCLEX, FICLONE, FIFREEZE, ...) are left out */
	static const unsigned int magics[] = {
		0x01, 0x33, 0x41, 0x7a, 0xa5, 0xbc, 0xbe, 0xbf, 0xdd, 0xfe, 0xff,
	};
	static const unsigned int dirs[] = { _IOC_NONE, _IOC_READ, _IOC_WRITE, _IOC_READ | _IOC_WRITE };
	unsigned int nr, size, dir, magic = WAITVAR_IOC_MAGIC, n;
	unsigned long cmd;
	int i;

	c->row = C_BAD;
	do {
		n = below(&z->rng, NIOC);
		nr = n;
		dir = _IOC_DIR(cmd_of[n]);
		size = _IOC_SIZE(cmd_of[n]);
		switch (below(&z->rng, 5)) {
		case 0:		/* past the last command */
			nr = NIOC + below(&z->rng, 256 - NIOC);
			dir = dirs[below(&z->rng, 4)];
			break;
		case 1:		/* another size */
			size = below(&z->rng, 6) ? below(&z->rng, 200) : below(&z->rng, 1U << _IOC_SIZEBITS);
			break;
		case 2:		/* another direction */
			dir = dirs[below(&z->rng, 4)];
			break;
		case 3:		/* another magic */
			magic = magics[below(&z->rng, sizeof(magics) / sizeof(magics[0]))];
			nr = below(&z->rng, 256);
			break;
		default:	/* one bit flipped in the number, direction, size or magic */
			cmd = cmd_of[n] ^ (1UL << below(&z->rng, 32));
			magic = _IOC_TYPE(cmd);
			nr = _IOC_NR(cmd);
			dir = _IOC_DIR(cmd);
			size = _IOC_SIZE(cmd);
			if (magic != WAITVAR_IOC_MAGIC && magic != 0xbc && magic != 0xbf &&
			    magic != 0xb9 && magic != 0xb5 && magic != 0xad && magic != 0x9d &&
			    magic != 0xfd && magic != 0x3d)
				magic = 0xbe;
			break;
		}
		cmd = _IOC(dir, magic, nr, size);
		for (i = 0; i < NIOC; i++)
			if (cmd == cmd_of[i])
				break;
	} while (i < NIOC);
	c->cmd = cmd;
	c->len = 64;
	memset(c->a.raw, 0xa5, sizeof(c->a.raw));
}

/* ---------------------------------------------------------------------- */
/* Where the argument goes. */

static unsigned char *page_at(struct fz *z, int pg)
{
	return z->mem + (size_t)pg * g.page;
}

/* Copies @len bytes of @src to @place in pages from @base on; returns the pointer. */
static void *put(struct fz *z, int base, int place, const void *src, size_t len, size_t *readable)
{
	unsigned char *p;
	size_t k;

	*readable = len;
	switch (place) {
	case PL_NULL:
		*readable = 0;
		return chance(&z->rng, 80) ? NULL : (void *)(uintptr_t)(8 * (1 + below(&z->rng, 64)));
	case PL_UNMAPPED:
		*readable = 0;
		return page_at(z, base + 2) + 8 * below(&z->rng, 16);
	case PL_READONLY:
		p = page_at(z, base + 3);
		mprotect(p, g.page, PROT_READ | PROT_WRITE);
		memcpy(p, src, len);
		mprotect(p, g.page, PROT_READ);
		return p;
	case PL_STRADDLE:
		/* 1 to len - 1 bytes readable, the rest in the unmapped page */
		k = len > 1 ? 1 + below(&z->rng, len - 1) : 0;
		p = page_at(z, base + 2) - k;
		memcpy(p, src, k);
		*readable = k;
		return p;
	default:
		p = page_at(z, base) + 8 * below(&z->rng, 8) + (chance(&z->rng, 10) ? 4 : 0);
		memcpy(p, src, len);
		return p;
	}
}

/* ---------------------------------------------------------------------- */
/* Checks. */

static void dump(const struct call *c, const void *arg, char *buf, size_t size)
{
	size_t i, n = c->len > 96 ? 96 : c->len;
	int len;

	len = snprintf(buf, size, "cmd %#lx (%s), argument %s, verdict %s%s%s, bytes ",
		       c->cmd, cmd_name[c->row], place_name[c->place], verdict_name[c->verdict],
		       c->why[0] ? ": " : "", c->why);
	for (i = 0; i < n && len + 3 < (int)size; i++)
		len += snprintf(buf + len, size - len, "%02x", ((const unsigned char *)arg)[i]);
	if (c->row == C_WAITV && c->nent && len + 40 < (int)size) {
		len += snprintf(buf + len, size - len, "; entries %s:", place_name[c->ent_place]);
		for (i = 0; i < c->nent && i < 4 && len + 60 < (int)size; i++)
			len += snprintf(buf + len, size - len, " {id %u op %u operand %#llx f %u r %u}",
					c->ent[i].id, c->ent[i].op,
					(unsigned long long)c->ent[i].operand, c->ent[i].flags,
					c->ent[i].reserved);
	}
}

static void record(struct fstat *st, int row, int err)
{
	st->iters[row]++;
	if (err != ENOTTY)
		st->reached[row]++;
	st->err[row][err >= 0 && err < NERR - 1 ? err : NERR - 1]++;
}

static bool have_cmd(int row)
{
	return row < NIOC && (g.feat.commands & (1ULL << row));
}

/* Every check of one call's result @err (0 or an errno). */
static void check(struct fz *z, struct call *c, int err)
{
	bool readable = c->place == PL_NORMAL || c->place == PL_READONLY;
	bool writes = _IOC_DIR(c->cmd) & _IOC_READ;
	char eb[24], d[900];

	record(z->st, c->row, err);
	if (!(errbit(err) & doc_errs[c->row])) {
		dump(c, c->a.raw, d, sizeof(d));
		fail(K_DOCUMENTED, "%s returned %s, which the header does not document for it; %s",
		     cmd_name[c->row], errname_r(err, eb, sizeof(eb)), d);
		return;
	}
	if (c->row == C_BAD) {
		if (err != ENOTTY) {
			dump(c, c->a.raw, d, sizeof(d));
			fail(K_MODEL, "unknown command returned %s, not ENOTTY; %s",
			     errname_r(err, eb, sizeof(eb)), d);
		}
		return;
	}
	if (!have_cmd(c->row)) {
		if (err != ENOTTY) {
			dump(c, c->a.raw, d, sizeof(d));
			fail(K_MODEL, "%s, which FEATURES says the driver lacks, returned %s; %s",
			     cmd_name[c->row], errname_r(err, eb, sizeof(eb)), d);
		}
		return;
	}
	if (err == ENOTTY) {
		dump(c, c->a.raw, d, sizeof(d));
		fail(K_MODEL, "%s, a command FEATURES lists, returned ENOTTY; %s", cmd_name[c->row], d);
		return;
	}
	if (!readable) {
		/* "EFAULT the argument pointer is not readable or writable" */
		if (err != EFAULT) {
			dump(c, c->a.raw, d, sizeof(d));
			fail(K_MODEL, "%s with its argument %s (%zu of %zu bytes readable) returned "
			     "%s, not EFAULT; %s", cmd_name[c->row], place_name[c->place], c->readable,
			     c->len, errname_r(err, eb, sizeof(eb)), d);
		}
		return;
	}
	if (c->place == PL_READONLY && writes && !err) {
		dump(c, c->a.raw, d, sizeof(d));
		fail(K_MODEL, "%s succeeded with its argument in a read-only page, where its result "
		     "cannot be written; %s", cmd_name[c->row], d);
	}
	if (c->place == PL_READONLY && !writes && err == EFAULT) {
		dump(c, c->a.raw, d, sizeof(d));
		fail(K_MODEL, "%s only reads its argument, yet gave EFAULT for one in a read-only "
		     "page; %s", cmd_name[c->row], d);
	}
	if (c->verdict == VALID && err == EINVAL) {
		dump(c, c->a.raw, d, sizeof(d));
		fail(K_MODEL, "%s refused with EINVAL an argument whose every field the header "
		     "allows; %s", cmd_name[c->row], d);
	}
	if (c->verdict == INVALID && !err) {
		dump(c, c->a.raw, d, sizeof(d));
		fail(K_MODEL, "%s accepted an argument the header says it refuses (%s); %s",
		     cmd_name[c->row], c->why, d);
	}
	if (c->row == C_WAITV && !c->ent_readable && c->verdict == VALID && err != EFAULT) {
		dump(c, c->a.raw, d, sizeof(d));
		fail(K_MODEL, "WAITV with its entries %s returned %s, not EFAULT; %s",
		     place_name[c->ent_place], errname_r(err, eb, sizeof(eb)), d);
	}
}

/* ---------------------------------------------------------------------- */
/* Issuing a call, and what follows from its result. */

static void watch_keep(struct fz *z, int fd, bool any_value)
{
	if (z->nw == NWATCH) {
		close(z->w[0].fd);
		memmove(&z->w[0], &z->w[1], sizeof(z->w[0]) * (NWATCH - 1));
		z->nw--;
	}
	z->w[z->nw].fd = fd;
	z->w[z->nw].any_value = any_value;
	z->nw++;
}

/* NAMED_REMOVE of @name, with every other field 0; 0 or an errno. */
static int remove_name(int fd, const char *name)
{
	struct waitvar_named n;

	memset(&n, 0, sizeof(n));
	memcpy(n.name, name, WAITVAR_NAME_MAX);
	n.name[WAITVAR_NAME_MAX - 1] = '\0';
	return ioctl(fd, WAITVAR_IOC_NAMED_REMOVE, &n) ? errno : 0;
}

/* After the call: keep what it made, forget what it destroyed, check undo. */
static void post(struct fz *z, struct target *t, struct call *c, int err)
{
	bool got = c->place == PL_NORMAL && !err;
	struct waitvar_named n;
	uint32_t id;
	int i, ret;

	switch (c->row) {
	case C_CREATE:
		if (!got)
			break;
		id = c->out.create.id;
		if (in_child || !pool_add(t->pool, id, t->kinds_known ? c->kind : -1))
			ioctl(t->fd, WAITVAR_IOC_DESTROY, &(struct waitvar_id){ .id = id });
		break;
	case C_DESTROY:
		if (!err)
			pool_del(t->pool, c->a.id.id);
		break;
	case C_NAMED_CREATE:
	case C_NAMED_OPEN:
		if (got) {
			bool keep = !in_child;

			id = c->out.named.id;
			if (c->row == C_NAMED_CREATE && keep) {
				/* a name the table cannot hold is removed at once */
				pthread_mutex_lock(&g.names_mu);
				for (i = 0; i < NAMES; i++)
					if (!strncmp(g.names[i].s, c->a.named.name, WAITVAR_NAME_MAX))
						break;
				if (i == NAMES)
					for (i = 0; i < NAMES && g.names[i].live; i++)
						;
				if (i < NAMES) {
					memcpy(g.names[i].s, c->a.named.name, WAITVAR_NAME_MAX);
					g.names[i].s[WAITVAR_NAME_MAX - 1] = '\0';
					g.names[i].kind = c->kind;
					g.names[i].live = true;
				} else {
					keep = false;
				}
				pthread_mutex_unlock(&g.names_mu);
			}
			if (!keep || !pool_add(t->pool, id, t->kinds_known ? c->kind : -1))
				ioctl(t->fd, WAITVAR_IOC_DESTROY, &(struct waitvar_id){ .id = id });
			if (!keep && c->row == C_NAMED_CREATE)
				remove_name(t->fd, c->a.named.name);
		}
		/*
		 * "If NAMED_CREATE cannot write its result back, the name it made is
		 * removed again": a fresh name must not exist after EFAULT.
		 */
		if (c->row == C_NAMED_CREATE && err == EFAULT && c->place == PL_READONLY &&
		    c->fresh_name && c->verdict != INVALID) {
			memset(&n, 0, sizeof(n));
			memcpy(n.name, c->a.named.name, WAITVAR_NAME_MAX);
			ret = ioctl(t->fd, WAITVAR_IOC_NAMED_OPEN, &n) ? errno : 0;
			if (ret != ENOENT) {
				fail(K_UNDO, "NAMED_CREATE of %.64s failed with EFAULT (result not "
				     "writable), yet NAMED_OPEN of it then gave %s", c->a.named.name,
				     ret ? "an error other than ENOENT" : "success");
				if (!ret)
					ioctl(t->fd, WAITVAR_IOC_DESTROY, &(struct waitvar_id){ .id = n.id });
				remove_name(t->fd, c->a.named.name);
			}
		}
		break;
	case C_NAMED_REMOVE:
		if (err || in_child)
			break;
		pthread_mutex_lock(&g.names_mu);
		for (i = 0; i < NAMES; i++)
			if (g.names[i].live && !strncmp(g.names[i].s, c->a.named.name, WAITVAR_NAME_MAX))
				g.names[i].live = false;
		pthread_mutex_unlock(&g.names_mu);
		break;
	case C_WATCH:
		if (!got)
			break;
		if (in_child)
			close((int)c->out.watch.fd);
		else
			watch_keep(z, (int)c->out.watch.fd, c->any_value);
		break;
	default:
		break;
	}
}

/* Builds call @c's argument in its place, issues it, and checks the result. */
static void issue(struct fz *z, struct target *t, struct call *c)
{
	void *p, *ents = NULL;
	char d[900], eb[24];
	long long t0, dt;
	int err;

	c->place = z->helper || chance(&z->rng, 80) ? PL_NORMAL : (int)(1 + below(&z->rng, NPLACE - 1));
	if (c->row == C_WAITV) {
		size_t need = (size_t)c->a.waitv.count * sizeof(struct waitvar_waitv_entry);
		size_t have = (size_t)c->nent * sizeof(struct waitvar_waitv_entry), r;

		if (c->a.waitv.count > WAITVAR_WAITV_MAX)
			need = have;
		ents = put(z, PG_ENT, c->ent_place, c->ent, have, &r);
		c->ent_readable = r >= need && c->ent_place != PL_NULL && c->ent_place != PL_UNMAPPED;
		if (c->ent_place == PL_NORMAL || c->ent_place == PL_READONLY)
			c->ent_readable = true;
		c->a.waitv.entries = (uintptr_t)ents;
	}
	if (c->row == C_LIST) {
		switch (below(&z->rng, 6)) {
		case 0: c->a.list.names = 0; break;
		case 1: c->a.list.names = (uintptr_t)(z->list + LIST_BYTES); break;
		case 2:
			c->a.list.names = (uintptr_t)(z->list + LIST_BYTES - below(&z->rng, 64));
			break;
		default: c->a.list.names = (uintptr_t)z->list; break;
		}
	}
	p = put(z, PG_ARG, c->place, c->a.raw, c->len, &c->readable);
	t0 = mono();
	err = ioctl(t->fd, c->cmd, p) ? errno : 0;
	dt = mono() - t0;
	if (c->place == PL_NORMAL)
		memcpy(c->out.raw, p, c->len);
	check(z, c, err);
	if (c->is_wait && dt > c->bound_ns && dt - c->bound_ns > SLACK_NS &&
	    (c->bound_ns != LLONG_MAX || err == 0)) {
		dump(c, c->a.raw, d, sizeof(d));
		fail(K_BOUNDED, "%s took %.3f s (returned %s) though it could sleep %.3f s at most; %s",
		     cmd_name[c->row], dt / 1e9, errname_r(err, eb, sizeof(eb)), c->bound_ns / 1e9, d);
	}
	post(z, t, c, err);
}

/* poll() and read() of a WATCH descriptor the thread holds, or its close(). */
static void watch_play(struct fz *z)
{
	struct wfd *w;
	struct pollfd pfd;
	uint64_t value;
	int i, err, fl;
	ssize_t n;

	if (!z->nw)
		return;
	i = below(&z->rng, z->nw);
	w = &z->w[i];
	switch (below(&z->rng, 5)) {
	case 0:
		pfd = (struct pollfd){ .fd = w->fd, .events = POLLIN };
		err = poll(&pfd, 1, below(&z->rng, 20)) < 0 ? errno : 0;
		record(z->st, C_WATCH_POLL, err);
		if (!(errbit(err) & doc_errs[C_WATCH_POLL]))
			fail(K_DOCUMENTED, "poll() of a WATCH descriptor failed with errno %d", err);
		break;
	case 1:
	case 2:
		fl = fcntl(w->fd, F_GETFL);
		/* blocking only where the condition holds for every value */
		if (!w->any_value || chance(&z->rng, 50))
			fcntl(w->fd, F_SETFL, fl | O_NONBLOCK);
		else
			fcntl(w->fd, F_SETFL, fl & ~O_NONBLOCK);
		n = read(w->fd, chance(&z->rng, 10) ? NULL : &value, sizeof(value));
		err = n == (ssize_t)sizeof(value) ? 0 : n < 0 ? errno : EINVAL;
		record(z->st, C_WATCH_READ, err);
		if (!(errbit(err) & doc_errs[C_WATCH_READ])) {
			char eb[24];

			fail(K_DOCUMENTED, "read() of a WATCH descriptor gave %s (returned %zd)",
			     errname_r(err, eb, sizeof(eb)), n);
		}
		break;
	default:
		close(w->fd);
		*w = z->w[--z->nw];
		break;
	}
}

/* One command (or unknown number) on the thread's own file or a shared one. */
static void fuzz_one(struct fz *z)
{
	struct call *c = calloc(1, sizeof(*c));
	struct target t;
	int sh = -1;

	if (!c)
		return;
	if (!in_child && chance(&z->rng, 30)) {
		sh = below(&z->rng, NSHARED);
		pthread_rwlock_rdlock(&g.sh[sh].rw);
		t = (struct target){ .fd = atomic_load(&g.sh[sh].fd), .pool = &g.sh[sh].pool,
				     .what = "a shared file" };
	} else {
		t = (struct target){ .fd = z->fd, .pool = &z->pool, .kinds_known = !in_child,
				     .what = "its own file" };
	}
	if (chance(&z->rng, 8)) {
		gen_bad_cmd(z, c);
	} else {
		c->row = below(&z->rng, NIOC);
		gen(z, &t, c);
	}
	issue(z, &t, c);
	if (sh >= 0)
		pthread_rwlock_unlock(&g.sh[sh].rw);
	free(c);
}

static void *fuzz_main(void *arg)
{
	struct fz *z = arg;

	z->tid = (pid_t)syscall(SYS_gettid);
	while (!atomic_load(&stop)) {
		fuzz_one(z);
		if (chance(&z->rng, 5))
			watch_play(z);
		/* keep the pool from filling up: destroy one now and then */
		if (atomic_load(&z->pool.n) > POOL - 4) {
			uint32_t id;
			int kind;

			if (pool_pick(&z->pool, &z->rng, &id, &kind) &&
			    !ioctl(z->fd, WAITVAR_IOC_DESTROY, &(struct waitvar_id){ .id = id }))
				pool_del(&z->pool, id);
		}
	}
	atomic_store(&z->done, 1);
	return NULL;
}

/* ---------------------------------------------------------------------- */
/* Companions: the closer, the forker and its children, the waker. */

static void *closer_main(void *arg)
{
	struct rng r = { .s = g.seed ^ 0xc105e };

	(void)arg;
	while (!atomic_load(&stop)) {
		int j = below(&r, NSHARED), fd;

		sleep_ns((100 + below(&r, 200)) * NSEC_PER_MSEC);
		pthread_rwlock_wrlock(&g.sh[j].rw);
		close(atomic_load(&g.sh[j].fd));
		fd = waitvar_open();
		if (fd < 0) {
			fail(K_CLEANUP, "reopening a shared file: %s", strerror(-fd));
			fd = -1;
		}
		atomic_store(&g.sh[j].fd, fd);
		/* the ids died with the file */
		pthread_mutex_lock(&g.sh[j].pool.mu);
		atomic_store(&g.sh[j].pool.n, 0);
		pthread_mutex_unlock(&g.sh[j].pool.mu);
		pthread_rwlock_unlock(&g.sh[j].rw);
		atomic_fetch_add(&g.closes, 1);
	}
	return NULL;
}

/*
 * A child: a few commands on the files it inherited, maybe as nobody.  It
 * takes no lock (another thread may have held one at fork()) and uses no
 * stdio; a failure is a line on stdout and its exit status.
 */
static void child_main(struct fz *z, struct rng r)
{
	int n = 3 + below(&r, 15), i;

	in_child = true;
	z->rng = r;
	z->helper = false;
	z->nw = 0;
	if (chance(&z->rng, 30)) {
		/* as another user: commands on named ids may say EACCES */
		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(3);
	}
	for (i = 0; i < n; i++) {
		struct call *c = calloc(1, sizeof(*c));
		struct target t = { .fd = z->fd, .pool = &z->pool, .what = "an inherited file" };

		if (!c)
			break;
		if (chance(&z->rng, 40)) {
			int j = below(&z->rng, NSHARED);

			t.fd = atomic_load(&g.sh[j].fd);
			t.pool = &g.sh[j].pool;
		}
		if (chance(&z->rng, 10)) {
			gen_bad_cmd(z, c);
		} else {
			do {
				c->row = below(&z->rng, NIOC);
			} while (c->row == C_DESTROY);	/* only what it made itself */
			gen(z, &t, c);
		}
		issue(z, &t, c);
		free(c);
	}
	for (i = 0; i < z->nw; i++)
		close(z->w[i].fd);
	_exit(child_status);
}

static void *forker_main(void *arg)
{
	struct {
		pid_t pid;
		long long start;
	} kids[MAX_CHILDREN] = {};
	struct rng r = { .s = g.seed ^ 0xf0f0 };
	bool stopping = false;

	(void)arg;
	for (;;) {
		int i, status, live = 0;

		stopping = atomic_load(&stop);
		for (i = 0; i < MAX_CHILDREN; i++) {
			pid_t got;

			if (!kids[i].pid)
				continue;
			got = waitpid(kids[i].pid, &status, WNOHANG);
			if (got == kids[i].pid) {
				if (WIFSIGNALED(status)) {
					atomic_fetch_add(&g.children_crashed, 1);
					fail(K_SIGNALS, "child %d ended by signal %d", kids[i].pid,
					     WTERMSIG(status));
				} else if (WEXITSTATUS(status) == 1) {
					atomic_fetch_add(&g.children_bad, 1);
					fail(K_DOCUMENTED, "child %d saw an undocumented errno (above)",
					     kids[i].pid);
				} else if (WEXITSTATUS(status) == 2) {
					atomic_fetch_add(&g.children_bad, 1);
					fail(K_MODEL, "child %d saw a result the header rules out (above)",
					     kids[i].pid);
				} else if (WEXITSTATUS(status)) {
					fail(K_SIGNALS, "child %d exited with %d (3: could not become "
					     "nobody)", kids[i].pid, WEXITSTATUS(status));
				}
				kids[i].pid = 0;
				continue;
			}
			if (mono() - kids[i].start > SLACK_NS) {
				kill(kids[i].pid, SIGKILL);
				waitpid(kids[i].pid, &status, 0);
				atomic_fetch_add(&g.children_killed, 1);
				fail(K_BOUNDED, "child %d still running after %.0f s: killed",
				     kids[i].pid, SLACK_NS / 1e9);
				kids[i].pid = 0;
				continue;
			}
			live++;
		}
		if (stopping && !live)
			break;
		if (!stopping && live < MAX_CHILDREN) {
			struct fz *src = &g.fz[below(&r, g.threads)];
			struct rng cr = { .s = rnd(&r) | 1 };
			pid_t pid;

			for (i = 0; kids[i].pid; i++)
				;
			fflush(stdout);
			/*
			 * No shared file may be mid-reopen at fork(): the child
			 * would inherit a closed number (EBADF before any driver
			 * code).  The child itself takes no lock.
			 */
			for (i = 0; i < NSHARED; i++)
				pthread_rwlock_rdlock(&g.sh[i].rw);
			pid = fork();
			if (pid == 0)
				child_main(src, cr);
			for (i = 0; i < NSHARED; i++)
				pthread_rwlock_unlock(&g.sh[i].rw);
			for (i = 0; kids[i].pid; i++)
				;
			if (pid > 0) {
				kids[i].pid = pid;
				kids[i].start = mono();
				atomic_fetch_add(&g.children_run, 1);
			}
		}
		sleep_ns((50 + below(&r, 200)) * NSEC_PER_MSEC);
	}
	return NULL;
}

/* Wakes, changes and signals: what a companion thread does to the waits. */
static void *waker_main(void *arg)
{
	struct fz *z = &g.waker;

	(void)arg;
	z->tid = (pid_t)syscall(SYS_gettid);
	while (!atomic_load(&stop)) {
		struct call *c;
		struct target t;
		int sh = below(&z->rng, NSHARED + 1);

		sleep_ns((1 + below(&z->rng, 5)) * NSEC_PER_MSEC);
		if (chance(&z->rng, 3)) {
			/* a signal: a wait ends with EINTR, a restart, or goes on */
			struct fz *v = &g.fz[below(&z->rng, g.threads)];

			if (v->started && !atomic_load(&v->done)) {
				pthread_kill(v->th, SIGUSR1);
				atomic_fetch_add(&g.signals_sent, 1);
			}
			continue;
		}
		c = calloc(1, sizeof(*c));
		if (!c)
			continue;
		if (sh < NSHARED) {
			pthread_rwlock_rdlock(&g.sh[sh].rw);
			t = (struct target){ .fd = atomic_load(&g.sh[sh].fd), .pool = &g.sh[sh].pool,
					     .what = "a shared file" };
		} else {
			/* another thread's own file: it closes it only at the end */
			struct fz *o = &g.fz[below(&z->rng, g.threads)];

			t = (struct target){ .fd = o->fd, .pool = &o->pool, .what = "a thread's file" };
		}
		{
			static const int rows[] = { C_WAKE, C_WAKE_NR, C_SET, C_ADD, C_CMPXCHG,
						    C_DEC_AND_WAKE };

			c->row = rows[below(&z->rng, sizeof(rows) / sizeof(rows[0]))];
		}
		gen(z, &t, c);
		issue(z, &t, c);
		if (sh < NSHARED)
			pthread_rwlock_unlock(&g.sh[sh].rw);
		free(c);
	}
	atomic_store(&z->done, 1);
	return NULL;
}

/* ---------------------------------------------------------------------- */
/* Signals. */

static void on_usr1(int sig)
{
	(void)sig;
}

static void on_unexpected(int sig)
{
	(void)sig;
	atomic_fetch_add(&unexpected_signals, 1);
}

static void on_fatal(int sig)
{
	char buf[160];
	int k, i;

	if (in_child)
		_exit(128 + sig);
	for (i = 0; i < NPARAM; i++)
		if (param_changed[i])
			param_write(param_name[i], param_old[i]);
	snprintf(buf, sizeof(buf), "# fatal signal %d in thread %ld\n", sig, (long)syscall(SYS_gettid));
	raw_line(buf);
	for (k = atomic_load(&ktap_n); k < NCHECK; k++) {
		snprintf(buf, sizeof(buf), "not ok %d %s # fatal signal %d\n", k + 1, check_name[k], sig);
		raw_line(buf);
	}
	_exit(1);
}

static void setup_signals(void)
{
	static const int unexpected[] = { SIGPIPE, SIGUSR2, SIGALRM, SIGXFSZ, SIGTTOU, SIGTTIN,
					  SIGVTALRM, SIGPROF };
	static const int fatal[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGSYS, SIGTRAP };
	struct sigaction sa = { .sa_handler = on_usr1 };
	size_t i;

	/* no SA_RESTART: a wait a signal interrupts may fail with EINTR */
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_unexpected;
	for (i = 0; i < sizeof(unexpected) / sizeof(unexpected[0]); i++)
		sigaction(unexpected[i], &sa, NULL);
	sa.sa_handler = on_fatal;
	sa.sa_flags = SA_RESETHAND;
	for (i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		sigaction(fatal[i], &sa, NULL);
	sa.sa_handler = on_fatal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
}

/* ---------------------------------------------------------------------- */
/* Setup, monitoring, the end. */

static int map_pages(struct fz *z)
{
	size_t len = (size_t)NPAGES * g.page;
	int pg;

	z->mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (z->mem == MAP_FAILED)
		return -1;
	for (pg = 0; pg < NPAGES; pg++) {
		int base = pg < PG_ENT ? 0 : PG_ENT, off = pg - base;

		if (off == 2 || off == 4)
			mprotect(page_at(z, pg), g.page, PROT_NONE);
		else if (off == 3)
			mprotect(page_at(z, pg), g.page, PROT_READ);
	}
	z->list = mmap(NULL, LIST_BYTES + g.page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (z->list == MAP_FAILED)
		return -1;
	mprotect(z->list + LIST_BYTES, g.page, PROT_NONE);
	return 0;
}

static int init_fz(struct fz *z, int idx)
{
	z->idx = idx;
	z->rng.s = g.seed + 0x9e3779b97f4a7c15ULL * (uint64_t)(idx + 1);
	if (!z->rng.s)
		z->rng.s = 1;
	pool_init(&z->pool);
	z->st = calloc(1, sizeof(*z->st));
	z->fd = waitvar_open();
	if (!z->st || z->fd < 0 || map_pages(z))
		return -1;
	return 0;
}

/* FEATURES of the running driver against the module parameters; raises limits if near. */
static void monitor(int fd)
{
	struct waitvar_features f = {};
	unsigned int p[NPARAM];
	const unsigned int *fv[NPARAM] = {
		&f.max_user_vars, &f.max_user_waiters, &f.max_user_names, &f.max_vars_per_file,
		&f.max_named_vars, &f.max_uninterruptible_ms,
	};
	unsigned int held_vars = 0, live_names = 0;
	int i, ret;

	ret = waitvar_features(fd, &f);
	if (ret) {
		fail(K_FEATURES, "FEATURES failed: %s", strerror(-ret));
		return;
	}
	for (i = 0; i < NPARAM; i++) {
		if (param_read(param_name[i], &p[i]))
			continue;
		if (*fv[i] != p[i])
			fail(K_FEATURES, "FEATURES reports %s %u, the module parameter is %u",
			     param_name[i], *fv[i], p[i]);
	}
	if (f.max_vars_per_file > g.max_per_file)
		g.max_per_file = f.max_vars_per_file;
	/* what the run holds now, against the limits: raise one a bit if it is near */
	for (i = 0; i < g.threads; i++)
		held_vars += atomic_load(&g.fz[i].pool.n);
	for (i = 0; i < NSHARED; i++)
		held_vars += atomic_load(&g.sh[i].pool.n);
	pthread_mutex_lock(&g.names_mu);
	for (i = 0; i < NAMES; i++)
		live_names += g.names[i].live;
	pthread_mutex_unlock(&g.names_mu);
	if ((held_vars + live_names) * 4 > f.max_user_vars * 3)
		param_raise(P_USER_VARS, f.max_user_vars + f.max_user_vars / 4);
	if (live_names * 4 > f.max_user_names * 3)
		param_raise(P_USER_NAMES, f.max_user_names + f.max_user_names / 4);
}

static void print_summary(struct fstat *sum)
{
	int row, e;

	for (row = 0; row < NROW; row++) {
		char line[900], eb[24];
		int len;

		len = snprintf(line, sizeof(line), "%-15s %8llu iterations, %8llu reached the driver;",
			       cmd_name[row], (unsigned long long)sum->iters[row],
			       (unsigned long long)sum->reached[row]);
		for (e = 0; e < NERR && len < (int)sizeof(line) - 40; e++)
			if (sum->err[row][e])
				len += snprintf(line + len, sizeof(line) - len, " %s x%llu",
						e == NERR - 1 ? "other" : errname_r(e, eb, sizeof(eb)),
						(unsigned long long)sum->err[row][e]);
		diag("%s", line);
	}
}

static void add_stats(struct fstat *sum, const struct fstat *s)
{
	int row, e;

	for (row = 0; row < NROW; row++) {
		sum->iters[row] += s->iters[row];
		sum->reached[row] += s->reached[row];
		for (e = 0; e < NERR; e++)
			sum->err[row][e] += s->err[row][e];
	}
}

/* How many WATCH descriptors this process still holds. */
static int count_watch_fds(void)
{
	char path[300], link[64];
	struct dirent *d;
	DIR *dir = opendir("/proc/self/fd");
	int n = 0;

	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", d->d_name);
		len = readlink(path, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = '\0';
		if (strstr(link, "waitvar-watch"))
			n++;
	}
	closedir(dir);
	return n;
}

/* Removes every name this run (or its children) made. */
static int remove_our_names(int fd)
{
	char prefix[32], *buf = malloc(1 << 20);
	uint32_t count = 0, needed = 0, i;
	int removed = 0, ret;
	char *p;

	if (!buf)
		return -1;
	snprintf(prefix, sizeof(prefix), "/wvfz-%d-", (int)g.pid);
	ret = waitvar_list(fd, buf, 1 << 20, &count, &needed);
	if (ret) {
		diag("LIST at the end failed: %s", strerror(-ret));
		free(buf);
		return -1;
	}
	for (p = buf, i = 0; i < count; i++, p += strlen(p) + 1) {
		if (strncmp(p, prefix, strlen(prefix)))
			continue;
		ret = waitvar_named_remove(fd, p);
		if (ret && ret != -ENOENT)
			fail(K_CLEANUP, "NAMED_REMOVE of %s at the end: %s", p, strerror(-ret));
		else if (!ret)
			removed++;
	}
	free(buf);
	return removed;
}

static void *watchdog_main(void *arg)
{
	long long end = g.t_start + g.seconds * NSEC_PER_SEC + END_GRACE_NS - NSEC_PER_SEC;
	char buf[160];
	int k, i;

	(void)arg;
	while (mono() < end)
		sleep_ns(100 * NSEC_PER_MSEC);
	for (i = 0; i < NPARAM; i++)
		if (param_changed[i])
			param_write(param_name[i], param_old[i]);
	pthread_mutex_lock(&out_lock);
	snprintf(buf, sizeof(buf), "# the run did not end within %d s + %lld s: giving up\n",
		 g.seconds, END_GRACE_NS / NSEC_PER_SEC);
	raw_line(buf);
	for (k = atomic_load(&ktap_n); k < NCHECK; k++) {
		snprintf(buf, sizeof(buf), "not ok %d %s # the run did not end in time\n", k + 1,
			 check_name[k]);
		raw_line(buf);
	}
	_exit(1);
	return NULL;
}

static void usage(const char *prog)
{
	fprintf(stderr, "usage: %s [--seconds S] [--threads T (1-%d)] [--seed N]\n", prog,
		MAX_THREADS);
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seconds", required_argument, NULL, 's' },
		{ "threads", required_argument, NULL, 't' },
		{ "seed", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	pthread_t closer, forker, waker, wd;
	bool setup_ok = true, have_seed = false, helpers = false;
	struct fstat *sum;
	int opt, i, mfd, stuck = 0, leaked = 0, watches;
	unsigned long long vars, waiters;
	long long t_end;
	char *end, *sumbuf;

	g.seconds = 20;
	g.threads = 8;
	while ((opt = getopt_long(argc, argv, "s:t:S:h", opts, NULL)) != -1) {
		switch (opt) {
		case 's':
			g.seconds = (int)strtol(optarg, &end, 10);
			if (*end || g.seconds < 1 || g.seconds > 86400)
				usage(argv[0]);
			break;
		case 't':
			g.threads = (int)strtol(optarg, &end, 10);
			if (*end || g.threads < 1 || g.threads > MAX_THREADS)
				usage(argv[0]);
			break;
		case 'S':
			g.seed = strtoull(optarg, &end, 0);
			if (*end || !*optarg)
				usage(argv[0]);
			have_seed = true;
			break;
		default:
			usage(argv[0]);
		}
	}
	if (optind != argc)
		usage(argv[0]);

	g.t_start = mono();
	g.pid = getpid();
	g.page = sysconf(_SC_PAGESIZE);
	if (!have_seed)
		g.seed = (uint64_t)clock_now(CLOCK_REALTIME) ^ (uint64_t)g.pid << 40;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("KTAP version 1\n1..%d\n", NCHECK);
	diag("waitvar_fuzz --seconds %d --threads %d --seed %llu", g.seconds, g.threads,
	     (unsigned long long)g.seed);
	diag("repeat with: waitvar_fuzz --seconds %d --threads %d --seed %llu", g.seconds,
	     g.threads, (unsigned long long)g.seed);
	if (access("/dev/waitvar", F_OK)) {
		diag("no /dev/waitvar: is the module loaded?");
		for (i = 0; i < NCHECK; i++)
			ktap(i, "no /dev/waitvar");
		return 4;
	}
	setup_signals();
	pthread_mutex_init(&g.names_mu, NULL);

	mfd = waitvar_open();
	if (mfd < 0 || waitvar_features(mfd, &g.feat)) {
		fail(K_SETUP, "open /dev/waitvar or FEATURES failed");
		setup_ok = false;
	} else {
		diag("FEATURES: commands %#llx create_flags %#x wait_flags %#x wake_flags %#x "
		     "add_flags %#x ops %#x modes %#x semantics %#x waitv_max %u",
		     (unsigned long long)g.feat.commands, g.feat.create_flags, g.feat.wait_flags,
		     g.feat.wake_flags, g.feat.add_flags, g.feat.ops, g.feat.modes,
		     g.feat.semantics, g.feat.waitv_max);
		diag("FEATURES limits: max_vars_per_file %u max_user_vars %u max_user_waiters %u "
		     "max_user_names %u max_named_vars %u max_uninterruptible_ms %u",
		     g.feat.max_vars_per_file, g.feat.max_user_vars, g.feat.max_user_waiters,
		     g.feat.max_user_names, g.feat.max_named_vars, g.feat.max_uninterruptible_ms);
		g.max_per_file = g.feat.max_vars_per_file;
		if (g.feat.waitv_max != WAITVAR_WAITV_MAX)
			fail(K_FEATURES, "FEATURES waitv_max %u, the header's WAITVAR_WAITV_MAX %d",
			     g.feat.waitv_max, WAITVAR_WAITV_MAX);
	}
	/* What the run may hold at once, with room: raise the limits that are below it. */
	if (setup_ok &&
	    (param_raise(P_USER_VARS, (g.threads + NSHARED + 2) * POOL + NAMES + 64) ||
	     param_raise(P_USER_WAITERS, (g.threads + MAX_CHILDREN + 2) * (WAITVAR_WAITV_MAX + NWATCH) + 64) ||
	     param_raise(P_USER_NAMES, NAMES + MAX_CHILDREN * 4 + 16) ||
	     param_raise(P_NAMED, NAMES + MAX_CHILDREN * 4 + 16) ||
	     param_raise(P_PER_FILE, 4 * POOL + 64))) {
		fail(K_SETUP, "cannot read or raise the module parameters");
		setup_ok = false;
	}
	if (setup_ok && waitvar_features(mfd, &g.feat)) {
		fail(K_SETUP, "FEATURES failed");
		setup_ok = false;
	}
	if (g.feat.max_vars_per_file > g.max_per_file)
		g.max_per_file = g.feat.max_vars_per_file;

	if (pthread_create(&wd, NULL, watchdog_main, NULL) == 0)
		pthread_detach(wd);
	for (i = 0; setup_ok && i < NSHARED; i++) {
		pthread_rwlockattr_t ra;

		pthread_rwlockattr_init(&ra);
		/* the closer must get its turn between the readers */
		pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
		pthread_rwlock_init(&g.sh[i].rw, &ra);
		pool_init(&g.sh[i].pool);
		atomic_store(&g.sh[i].fd, waitvar_open());
		if (atomic_load(&g.sh[i].fd) < 0) {
			fail(K_SETUP, "open /dev/waitvar: %s", strerror(-atomic_load(&g.sh[i].fd)));
			setup_ok = false;
		}
	}
	g.fz = calloc(g.threads, sizeof(*g.fz));
	for (i = 0; setup_ok && i < g.threads; i++) {
		if (init_fz(&g.fz[i], i)) {
			fail(K_SETUP, "thread %d: open, mmap or calloc failed: %s", i, strerror(errno));
			setup_ok = false;
		}
	}
	if (setup_ok && init_fz(&g.waker, MAX_THREADS)) {
		fail(K_SETUP, "the waker's open or mmap failed");
		setup_ok = false;
	}
	g.waker.helper = true;
	for (i = 0; setup_ok && i < g.threads; i++) {
		if (pthread_create(&g.fz[i].th, NULL, fuzz_main, &g.fz[i])) {
			fail(K_SETUP, "pthread_create: %s", strerror(errno));
			setup_ok = false;
			break;
		}
		g.fz[i].started = true;
	}
	if (setup_ok) {
		helpers = !pthread_create(&closer, NULL, closer_main, NULL) &&
			  !pthread_create(&forker, NULL, forker_main, NULL) &&
			  !pthread_create(&waker, NULL, waker_main, NULL);
		if (!helpers) {
			fail(K_SETUP, "cannot start the closer, forker and waker");
			setup_ok = false;
		}
	}
	if (!setup_ok)
		atomic_store(&stop, 1);
	ktap(K_SETUP, NULL);

	/* The run: every 500 ms, FEATURES against the parameters. */
	t_end = g.t_start + g.seconds * NSEC_PER_SEC;
	while (setup_ok && mono() < t_end) {
		sleep_ns(500 * NSEC_PER_MSEC);
		monitor(mfd);
	}
	atomic_store(&stop, 1);

	/* Every thread ends within its current call; signals end what sleeps. */
	t_end = mono() + 5 * NSEC_PER_SEC;
	for (;;) {
		int left = 0;

		for (i = 0; i < g.threads; i++)
			if (g.fz[i].started && !atomic_load(&g.fz[i].done))
				left++;
		if (!left || mono() > t_end) {
			stuck = left;
			break;
		}
		if (mono() > t_end - 3 * NSEC_PER_SEC)
			for (i = 0; i < g.threads; i++)
				if (g.fz[i].started && !atomic_load(&g.fz[i].done))
					pthread_kill(g.fz[i].th, SIGUSR1);
		sleep_ns(20 * NSEC_PER_MSEC);
	}
	if (stuck)
		fail(K_BOUNDED, "%d fuzzing threads still in a call 5 s after the end", stuck);
	if (helpers) {
		pthread_join(closer, NULL);
		pthread_join(forker, NULL);
		pthread_join(waker, NULL);
	}
	sum = calloc(1, sizeof(*sum));
	for (i = 0; i < g.threads; i++) {
		if (!g.fz[i].started || !atomic_load(&g.fz[i].done))
			continue;
		pthread_join(g.fz[i].th, NULL);
		add_stats(sum, g.fz[i].st);
	}
	if (g.waker.st)
		add_stats(sum, g.waker.st);
	diag("seed %llu; %lu children forked (%d killed, %d crashed, %d reported a failure); "
	     "%lu closes of shared files; %lu signals sent", (unsigned long long)g.seed,
	     atomic_load(&g.children_run), atomic_load(&g.children_killed),
	     atomic_load(&g.children_crashed), atomic_load(&g.children_bad),
	     atomic_load(&g.closes), atomic_load(&g.signals_sent));
	print_summary(sum);
	ktap(K_DOCUMENTED, setup_ok ? NULL : "setup failed");
	ktap(K_MODEL, setup_ok ? NULL : "setup failed");
	ktap(K_BOUNDED, setup_ok ? NULL : "setup failed");

	/*
	 * Nothing made on EFAULT stayed behind: each thread's own file holds
	 * exactly the ids it knows of, and no WATCH descriptor but its own.
	 */
	for (i = 0; setup_ok && i < g.threads; i++) {
		struct fz *z = &g.fz[i];
		uint32_t id, n;
		uint64_t v;
		int j, ret;

		if (!atomic_load(&z->done))
			continue;
		for (j = 0; j < z->nw; j++)
			close(z->w[j].fd);
		z->nw = 0;
		while ((n = atomic_load(&z->pool.n)) > 0) {
			id = atomic_load(&z->pool.id[n - 1]);
			waitvar_destroy(z->fd, id);
			atomic_store(&z->pool.n, n - 1);
		}
		for (id = 1; id <= g.max_per_file; id++) {
			ret = waitvar_get(z->fd, id, &v);
			if (ret == -ENOENT)
				continue;
			leaked++;
			if (!atomic_load(&g.children_killed))
				fail(K_UNDO, "thread %d's file still has id %u (GET: %s), which no "
				     "call handed out", i, id, ret ? strerror(-ret) : "0");
			waitvar_destroy(z->fd, id);
		}
	}
	if (leaked)
		diag("%d ids left in the threads' files", leaked);
	watches = count_watch_fds();
	if (watches > 0 && !stuck)
		fail(K_UNDO, "%d WATCH descriptors are open that no call handed out", watches);
	ktap(K_UNDO, setup_ok ? NULL : "setup failed");
	ktap(K_FEATURES, setup_ok ? NULL : "setup failed");

	if (atomic_load(&unexpected_signals))
		fail(K_SIGNALS, "%d unexpected signals", atomic_load(&unexpected_signals));
	ktap(K_SIGNALS, NULL);

	/* Cleanup: our names, our files, the parameters. */
	if (setup_ok) {
		int removed = remove_our_names(mfd);

		if (removed >= 0)
			diag("removed %d names of this run at the end", removed);
	}
	for (i = 0; i < g.threads; i++)
		if (g.fz && g.fz[i].fd > 0 && (!g.fz[i].started || atomic_load(&g.fz[i].done)))
			close(g.fz[i].fd);
	if (g.waker.fd > 0)
		close(g.waker.fd);
	for (i = 0; i < NSHARED; i++)
		if (atomic_load(&g.sh[i].fd) > 0)
			close(atomic_load(&g.sh[i].fd));
	if (mfd >= 0)
		close(mfd);
	sumbuf = malloc(1 << 16);
	if (!stuck && sumbuf && read_summary(NULL, &vars, &waiters, sumbuf, 1 << 16)) {
		char prefix[32];

		diag("debugfs summary after the end: variables %llu waiters %llu", vars, waiters);
		if (vars || waiters)
			fail(K_CLEANUP, "debugfs summary shows variables %llu waiters %llu after every "
			     "file was closed", vars, waiters);
		snprintf(prefix, sizeof(prefix), "/wvfz-%d-", (int)g.pid);
		if (strstr(sumbuf, prefix))
			fail(K_CLEANUP, "a name %s... is still listed", prefix);
	}
	if (!params_restore(false))
		fail(K_CLEANUP, "a module parameter could not be restored");
	ktap(K_CLEANUP, NULL);

	diag("ended after %.1f s (limit %d s)", (mono() - g.t_start) / 1e9,
	     g.seconds + (int)(END_GRACE_NS / NSEC_PER_SEC));
	if (mono() - g.t_start > g.seconds * NSEC_PER_SEC + END_GRACE_NS)
		fail(K_TIME, "the run took longer than S + 20 s");
	ktap(K_TIME, NULL);
	for (i = 0; i < NCHECK; i++)
		if (atomic_load(&fails[i]))
			return 1;
	return 0;
}
