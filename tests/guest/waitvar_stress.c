// SPDX-License-Identifier: GPL-2.0
/*
 * waitvar_stress: every /dev/waitvar command at once, from hundreds of
 * threads on several open files, on plain, spinlock and mutex variables,
 * with invariants checked along the way and at the end.  Not a kselftest
 * harness program: it prints KTAP itself, one line per invariant.
 *
 *   waitvar_stress [--seconds S] [--threads T] [--vars V] [--files F]
 *
 * The variables are partitioned so that each final value is predictable:
 *   ADD       ADD and DEC_AND_WAKE only: final = initial + sum of the deltas
 *   CMPXCHG   CMPXCHG(v, v + 1) only: final = initial + successful exchanges
 *   SET       one writer thread each: final = its last SET (and every GET
 *             by that writer reads back what it set)
 *   SEQ       one writer thread each stores 1, 2, 3, ... (SET, ADD with
 *             WAKE, CMPXCHG, or ADD without WAKE and then WAKE, WAKE_NR or
 *             a filtered WAKE_NR), and 2^62 at the end; waiters wait for a
 *             value ahead of the current one with WAIT (every mode and
 *             timeout kind), WAITV or a WATCH descriptor (poll or read)
 *   XSEQ      as SEQ, in rounds waited for by exclusive WAITs only, each of
 *             which passes the wake on (WAKE, WAKE_NR 1) when it returns
 *   LATCH     scratch variables set to K and counted down to 0 with
 *             DEC_AND_WAKE, waited for "== 0" (and its equivalents), then
 *             destroyed
 *   QUIET     never changed nor woken: the other entries of a WAITV on a
 *             SEQ, XSEQ or LATCH variable, so that no other wake hides a
 *             lost one; final = initial
 * Scratch variables are created and destroyed (some under a waiter, which
 * DESTROY must end with EIDRM), named ones created, opened from another
 * file, listed and removed; STATS, FEATURES and short waits run throughout.
 *
 * No lost wakeup: a waiter registers (variable, target, time) in a slot
 * before it waits; the writer stores no further value on that variable
 * until every waiter whose target the last store reached has returned, so
 * no later wake can hide a lost one.  A waiter still waiting BOUND_NS
 * after the store that made its condition true (or after it started
 * waiting, if later) lost its wakeup, whether the writer sees it or the
 * waiter does (returning late, or timing out with its condition true).
 * Those waits carry a timeout of WAIT_NS (> BOUND_NS) or none; at the stop
 * the writers first let the waiters of their last stores return, then
 * store a final value that every waiter's condition accepts.
 *
 * BOUND_NS counts only time the waiter could have run, so that a loaded
 * guest (hundreds of threads on two slow CPUs) is not taken for a lost
 * wakeup: the writer reports a waiter only if /proc shows it asleep (not
 * runnable: a woken waiter waiting for a CPU is state R); a waiter that
 * timed out counts up to its timer's expiry, not to when it got a CPU; one
 * that returned late subtracts the longest wake-to-run delay a probe thread
 * (sleeping PROBE_NS at a time) saw meanwhile; an exclusive waiter, woken
 * only when the one before it passes the wake on, counts from the
 * variable's last wake.  The observed latencies are printed at the end, to
 * tune BOUND_NS by.
 *
 * The module parameters the run needs are raised, and restored at the end
 * (max_uninterruptible_ms too: IO and UNINTERRUPTIBLE waits take WAIT_NS,
 * still far below the hung-task detector's 60 s).  Setup (variables,
 * threads, created held at a start gate so that none runs while the others
 * are being made) has its own limit, SETUP_BASE_NS + SETUP_PER_THREAD_NS per
 * thread; the run, timed from when the gate opens, ends within S + 30 s.
 * Past either limit the program stops its threads' reports, restores the
 * parameters and gives up.  It exits 0 iff every KTAP line is ok (4 if
 * /dev/waitvar is missing).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>

#include "libwaitvar.h"
#include "waitvar_errnos.h"

/* A waiter whose condition held this long and has not returned lost its wakeup. */
#define BOUND_NS	(10 * NSEC_PER_SEC)
/* The timeout of every wait the no-lost-wakeup check watches: longer than BOUND. */
#define WAIT_NS		(20 * NSEC_PER_SEC)
/* Waits on the other variables are short: they may time out. */
#define SHORT_NS	(50 * NSEC_PER_MSEC)
/* The sequence variables end at this value; their stores stay far below it. */
#define FINAL_SEQ	(1ULL << 62)
/* Time after S the run has to end in, counted from the end of setup. */
#define END_GRACE_NS	(30 * NSEC_PER_SEC)
/* Setup's own limit: this, and this much per thread. */
#define SETUP_BASE_NS	(120 * NSEC_PER_SEC)
#define SETUP_PER_THREAD_NS (100 * NSEC_PER_MSEC)
/* Setup progress is printed this often while threads are made. */
#define PROGRESS_NS	(5 * NSEC_PER_SEC)
/* The scheduling-delay probe's sleep, and the seconds of history it keeps. */
#define PROBE_NS	(10 * NSEC_PER_MSEC)
#define PROBE_RING	256
/* A waiter past BOUND_NS that is runnable is looked at again after this. */
#define STATE_CHECK_NS	(200 * NSEC_PER_MSEC)
#define THREAD_STACK	(64 * 1024)
#define NSLOT		32
#define RING		256
#define MAX_FILES	64
#define MAX_REPORTS	20

#define DEBUGFS_DIR	"/sys/kernel/debug/waitvar"

static const char *const op_names[WAITVAR_OP_COUNT] = {
	"eq", "ne", "lt", "le", "gt", "ge", "lt_s", "le_s", "gt_s", "ge_s", "any", "all", "none",
};
static const char *const mode_names[WAITVAR_MODE_COUNT] = {
	"interruptible", "killable", "io", "uninterruptible",
};

static const char *op_str(uint32_t op)
{
	return op < WAITVAR_OP_COUNT ? op_names[op] : "?";
}

static const char *lock_str(uint32_t lock)
{
	return lock == WAITVAR_CREATE_SPINLOCK ? "spinlock" :
	       lock == WAITVAR_CREATE_MUTEX ? "mutex" : "plain";
}

/* The comparison of struct waitvar_wait, as the header defines it. */
static bool op_holds(uint32_t op, uint64_t v, uint64_t x)
{
	switch (op) {
	case WAITVAR_OP_EQ: return v == x;
	case WAITVAR_OP_NE: return v != x;
	case WAITVAR_OP_LT: return v < x;
	case WAITVAR_OP_LE: return v <= x;
	case WAITVAR_OP_GT: return v > x;
	case WAITVAR_OP_GE: return v >= x;
	case WAITVAR_OP_LT_S: return (int64_t)v < (int64_t)x;
	case WAITVAR_OP_LE_S: return (int64_t)v <= (int64_t)x;
	case WAITVAR_OP_GT_S: return (int64_t)v > (int64_t)x;
	case WAITVAR_OP_GE_S: return (int64_t)v >= (int64_t)x;
	case WAITVAR_OP_ANY: return (v & x) != 0;
	case WAITVAR_OP_ALL: return (v & x) == x;
	case WAITVAR_OP_NONE: return (v & x) == 0;
	}
	return false;
}

static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

static void __attribute__((format(printf, 1, 2))) diag(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&out_lock);
	fputs("# ", stdout);
	va_start(ap, fmt);
	vfprintf(stdout, fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	pthread_mutex_unlock(&out_lock);
}

/* ---------------------------------------------------------------------- */
/* The invariants, and failures counted against each. */

enum check {
	K_SETUP, K_ADD, K_CAS, K_SET, K_SEQ, K_NAMED, K_LOST, K_ERRNO, K_RAN, K_LEFT,
	K_RESTORED, K_TIME, NCHECK
};

static const char *const check_name[NCHECK] = {
	"setup", "final_values_add", "final_values_cmpxchg", "final_values_set",
	"sequence_values", "named_variables", "no_lost_wakeup", "no_unexpected_errno",
	"every_command_ran", "nothing_left_behind", "parameters_restored", "ended_in_time",
};

static atomic_ulong fails[NCHECK];

/*
 * The watchdog gave up: nothing more is counted or printed (the threads may
 * still run while it restores the parameters, which their waits may then
 * see as EINVAL).
 */
static atomic_int gave_up;
/* The threads' results are no longer checked: the parameters are being restored. */
static atomic_int errs_closed;

static void __attribute__((format(printf, 2, 3))) fail(enum check k, const char *fmt, ...)
{
	unsigned long n;
	va_list ap;

	if (atomic_load(&gave_up))
		return;
	n = atomic_fetch_add(&fails[k], 1) + 1;
	if (n > MAX_REPORTS)
		return;
	pthread_mutex_lock(&out_lock);
	printf("# %s: ", check_name[k]);
	va_start(ap, fmt);
	vfprintf(stdout, fmt, ap);
	va_end(ap);
	if (n == MAX_REPORTS)
		printf(" (further %s failures are counted, not printed)", check_name[k]);
	fputc('\n', stdout);
	pthread_mutex_unlock(&out_lock);
}

/* ---------------------------------------------------------------------- */
/* Module parameters: raised for the run, restored at its end. */

struct param {
	const char *name;
	unsigned int need;
	unsigned int old;
	bool have_old, changed;
};

static struct param params[] = {
	{ .name = "max_user_vars" }, { .name = "max_user_waiters" },
	{ .name = "max_user_names" }, { .name = "max_vars_per_file" },
	{ .name = "max_named_vars" }, { .name = "max_uninterruptible_ms" },
};
#define NPARAM (sizeof(params) / sizeof(params[0]))
enum { P_USER_VARS, P_USER_WAITERS, P_USER_NAMES, P_PER_FILE, P_NAMED, P_UNINT_MS };

/* Raises each parameter to what the run needs, never lowers one. */
static bool params_raise(void)
{
	bool ok = true;
	unsigned int i, now;

	for (i = 0; i < NPARAM; i++) {
		struct param *p = &params[i];

		if (param_read(p->name, &p->old)) {
			diag("cannot read " PARAM_DIR "%s", p->name);
			ok = false;
			continue;
		}
		p->have_old = true;
		if (p->old >= p->need) {
			diag("%s is %u, the run needs %u: unchanged", p->name, p->old, p->need);
			continue;
		}
		if (param_write(p->name, p->need) || param_read(p->name, &now) || now != p->need) {
			diag("cannot raise %s from %u to %u: %s", p->name, p->old, p->need,
			     strerror(errno));
			ok = false;
			continue;
		}
		p->changed = true;
		diag("raised %s from %u to %u", p->name, p->old, p->need);
	}
	return ok;
}

static bool params_restore(bool quiet)
{
	bool ok = true;
	unsigned int i, now;

	for (i = NPARAM; i-- > 0;) {
		struct param *p = &params[i];

		if (!p->changed)
			continue;
		if (param_write(p->name, p->old) || param_read(p->name, &now) || now != p->old) {
			ok = false;
			if (!quiet)
				diag("cannot restore %s to %u", p->name, p->old);
			continue;
		}
		p->changed = false;
		if (!quiet)
			diag("restored %s to %u", p->name, p->old);
	}
	return ok;
}

static void on_term(int sig)
{
	unsigned int i;

	for (i = 0; i < NPARAM; i++)
		if (params[i].changed)
			param_write(params[i].name, params[i].old);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* ---------------------------------------------------------------------- */
/* Variables, tracked variables and threads. */

enum var_class { V_SEQ, V_XSEQ, V_ADD, V_CAS, V_SET, V_QUIET, NCLASS };

static const char *const class_name[NCLASS] = {
	"SEQ", "XSEQ", "ADD", "CMPXCHG", "SET", "QUIET",
};

struct var {
	int fdi;
	uint32_t id;
	uint32_t lock;
	int cls;
	int owner;		/* V_SET: index of its writer among the SET threads */
	int trk;		/* V_SEQ, V_XSEQ: its tracked state */
	uint64_t init;
	atomic_ullong add_sum;	/* V_ADD: sum of the deltas that were added */
	atomic_ullong cas_ok;	/* V_CAS: successful exchanges */
	atomic_ullong last;	/* V_SET: the owner's last SET */
};

/* A waiter registered on a tracked variable: see the top of the file. */
struct slot {
	atomic_int busy;
	atomic_ullong target;	/* 0: no target published yet */
	atomic_llong t_enter;
	atomic_uint gen;	/* registrations so far */
	atomic_uint reported;	/* gen of the registration reported lost */
	atomic_int tid;
	atomic_uint how;	/* kind | mode << 4 | flags << 8 | op << 16 */
	atomic_llong t_runnable;	/* past BOUND, last seen runnable (0: not yet) */
	atomic_uint gone_gen;	/* gen of a registration its latch was destroyed under */
};

enum trk_kind { T_SEQ, T_XSEQ, T_LATCH };
static const char *const trk_name[] = { "SEQ", "XSEQ", "LATCH" };

/* How a waiter waited, for the reports. */
enum wait_kind { W_WAIT, W_WAITV, W_POLL, W_READ };
static const char *const wait_kind_name[] = { "WAIT", "WAITV", "WATCH+poll", "WATCH+read" };

struct tracked {
	int kind;
	atomic_int fdi;		/* a latch's change with each generation */
	atomic_uint id;
	atomic_uint lock;
	/* T_SEQ, T_XSEQ */
	atomic_ullong cur;		/* the last value stored, published after the store */
	atomic_ullong ring_k[RING];	/* value k's store time is at k % RING */
	atomic_llong ring_t[RING];
	atomic_ullong final_from;	/* targets from here on were reached by the final store */
	atomic_llong final_t;
	/* T_XSEQ: the round's target, open for exclusive waiters to join */
	atomic_int round_open;
	atomic_ullong round_target;
	int phase;
	long long t_phase, d_phase;
	/* T_LATCH: one variable per generation, counted down to 0 once */
	atomic_uint gen;
	atomic_int fired, closed;
	atomic_llong fire_t;
	/*
	 * The last wake of the variable: store, wake, or an exclusive waiter
	 * passing its wake on.  An exclusive waiter is woken by one of these in
	 * turn, so it could run only from the last one on.
	 */
	atomic_llong t_wake;
	struct slot slots[NSLOT];
};

enum role {
	R_WRITER, R_LATCH, R_CHURN, R_VICTIM, R_NAMED, R_ADD, R_CAS, R_SET, R_MISC, R_WAITER,
	NROLE
};
static const char *const role_name[NROLE] = {
	"sequence writers", "latch owners", "scratch churners", "destroy victims",
	"named churners", "ADD workers", "CMPXCHG workers", "SET writers", "mixed",
	"waiters",
};

/* What a churner hands its victim to wait on while it destroys it. */
enum { VIC_IDLE, VIC_ARMED, VIC_WAITING, VIC_DONE };
struct victim {
	atomic_int state;
	int fd;		/* the churner's own file */
	uint32_t id, lock;
	uint64_t value;
	atomic_int ret;
	atomic_int how;
	atomic_int tid;
	atomic_llong t_ret;
	atomic_llong t_due;	/* when its timeout was due at the earliest */
};

struct tstat {
	uint64_t calls[NCMD];
	uint64_t errs[NCMD];
	uint64_t mode_waits[WAITVAR_MODE_COUNT];
	uint64_t tkind_waits[4];	/* none, relative, monotonic deadline, realtime deadline */
	uint64_t lock_waits[3];
	uint64_t excl_waits, filter_wakes;
	uint64_t tracked_waits, tracked_ok, tracked_timeouts;
	uint64_t short_waits, short_ok, short_timeouts;
	uint64_t eidrm, wakes, woken;
	uint64_t lat_n, late_excused;
	long long lat_max, lat_sum, net_max, asleep_max;
};

struct thr {
	int idx, role, ridx;
	pthread_t th;
	pid_t tid;
	atomic_int done;
	bool started;
	struct rng rng;
	struct tstat st;
	struct victim *vic;	/* R_CHURN, R_VICTIM: the pair's */
	int own_fd;		/* R_CHURN: a file no other thread makes ids in */
	int latch;		/* R_LATCH: index of its tracked latch */
	char *buf;		/* LIST buffer */
};

#define LIST_BUF 4096

static struct {
	int seconds, threads, nvars, nfiles;
	int fds[MAX_FILES];
	struct var *vars;
	int nv;
	struct tracked *trk;
	int ntrk, nseq;		/* trk[0 .. nseq) are SEQ and XSEQ, then the latches */
	int *plain_by_fd[MAX_FILES];	/* ADD, CMPXCHG and SET variables of each file */
	int nplain_by_fd[MAX_FILES];
	int *by_class[NCLASS];
	int nby_class[NCLASS];
	int quiet[MAX_FILES][3];	/* each file's QUIET variables */
	int nrole[NROLE];
	struct thr *thr;
	struct victim *vics;
	bool unint_tracked;	/* IO and UNINTERRUPTIBLE waits can take WAIT_NS */
	long long t_start, t_run, t_stop;
	uint32_t max_unint_ms;
	uint64_t seed;
} g;

static atomic_int stop;		/* the run is over: no new waits */

/* The watchdog's deadline, and its phase: 0 setup, 1 the run. */
static pthread_mutex_t wd_lock = PTHREAD_MUTEX_INITIALIZER;
static long long wd_deadline;
static int wd_phase;

static void watchdog_arm(int phase, long long deadline)
{
	pthread_mutex_lock(&wd_lock);
	wd_phase = phase;
	wd_deadline = deadline;
	pthread_mutex_unlock(&wd_lock);
}

/* What setup is doing, for the watchdog's report. */
enum { S_PARAMS, S_FILES, S_VARS, S_OWN_FILES, S_THREADS, S_GATE };
static const char *const setup_step_name[] = {
	"raising the module parameters", "opening /dev/waitvar", "creating the variables",
	"opening the churners' files", "creating the threads", "opening the start gate",
};
static atomic_int setup_step;
static atomic_int threads_made, threads_at_gate;

/*
 * The start gate: threads are made held here, so that none competes for
 * the CPUs with the making of the others (which made setup quadratic in T);
 * all go at once when it opens.
 */
static int gate_word;

static void gate_wait(void)
{
	atomic_fetch_add(&threads_at_gate, 1);
	while (!__atomic_load_n(&gate_word, __ATOMIC_ACQUIRE))
		if (syscall(SYS_futex, &gate_word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0) &&
		    errno != EAGAIN && errno != EINTR)
			sleep_ns(NSEC_PER_MSEC);
}

static void gate_open(void)
{
	__atomic_store_n(&gate_word, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &gate_word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}
static atomic_int destroying;	/* the end destroys variables under stuck waiters */

static void count_call(struct thr *t, enum cmd c, int ret)
{
	t->st.calls[c]++;
	if (ret < 0)
		t->st.errs[c]++;
}

/*
 * Checks a command's result against the errnos this call may see (a subset
 * of those the header documents): anything else fails no_unexpected_errno.
 */
static int __attribute__((format(printf, 5, 6)))
expect(struct thr *t, enum cmd c, int ret, unsigned int allowed, const char *fmt, ...)
{
	int err = ret < 0 ? -ret : 0;
	char what[200];
	va_list ap;

	count_call(t, c, ret);
	if ((errbit(err) & allowed) || atomic_load(&errs_closed))
		return ret;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	fail(K_ERRNO, "thread %d (%s): %s returned %s on %s; %s", t->tid, role_name[t->role],
	     cmd_name[c], errname(err), what,
	     errbit(err) & doc_errs[c] ? "the header documents it for this command, "
					 "but not in this situation" :
					 "the header does not document it for this command");
	return ret;
}

static bool stopping(void)
{
	return atomic_load(&stop);
}

/*
 * The timeout of a watched wait; *@due is when it expires on CLOCK_MONOTONIC
 * at the earliest (a relative timeout starts later, in the kernel).
 */
static long long tracked_timeout(struct thr *t, uint32_t *flags, long long *due)
{
	*due = mono() + WAIT_NS;
	switch (below(&t->rng, 3)) {
	case 0:
		*flags |= WAITVAR_WAIT_TIMEOUT;
		t->st.tkind_waits[1]++;
		return WAIT_NS;
	case 1:
		*flags |= WAITVAR_WAIT_ABS_MONOTONIC;
		t->st.tkind_waits[2]++;
		return *due;
	default:
		*flags |= WAITVAR_WAIT_ABS_REALTIME;
		t->st.tkind_waits[3]++;
		return clock_now(CLOCK_REALTIME) + WAIT_NS;
	}
}

/* A short timeout of any kind: relative, or a deadline up to 50 ms ahead (or past). */
static long long short_timeout(struct thr *t, uint32_t *flags)
{
	long long ns = below(&t->rng, 5) == 0 ? 0 : (long long)below(&t->rng, SHORT_NS);

	switch (below(&t->rng, 3)) {
	case 0:
		*flags |= WAITVAR_WAIT_TIMEOUT;
		t->st.tkind_waits[1]++;
		return ns;
	case 1:
		*flags |= WAITVAR_WAIT_ABS_MONOTONIC;
		t->st.tkind_waits[2]++;
		return clock_now(CLOCK_MONOTONIC) + ns - (chance(&t->rng, 10) ? SHORT_NS : 0);
	default:
		*flags |= WAITVAR_WAIT_ABS_REALTIME;
		t->st.tkind_waits[3]++;
		return clock_now(CLOCK_REALTIME) + ns - (chance(&t->rng, 10) ? SHORT_NS : 0);
	}
}

static void note_wait(struct thr *t, uint32_t mode, uint32_t flags, uint32_t lock)
{
	t->st.mode_waits[mode]++;
	if (flags & WAITVAR_WAIT_EXCLUSIVE)
		t->st.excl_waits++;
	t->st.lock_waits[lock == WAITVAR_CREATE_SPINLOCK ? 1 : lock == WAITVAR_CREATE_MUTEX ? 2 : 0]++;
}

/* ---------------------------------------------------------------------- */
/* Tracked variables: registration, store times, and the lost-wakeup checks. */

static struct slot *slot_claim(struct thr *t, struct tracked *tv, uint64_t target, unsigned int how)
{
	uint32_t start = below(&t->rng, NSLOT), i;

	for (i = 0; i < NSLOT; i++) {
		struct slot *s = &tv->slots[(start + i) % NSLOT];
		int zero = 0;

		if (atomic_compare_exchange_strong(&s->busy, &zero, 1)) {
			atomic_fetch_add(&s->gen, 1);
			atomic_store(&s->t_runnable, 0);
			atomic_store(&s->tid, t->tid);
			atomic_store(&s->how, how);
			atomic_store(&s->t_enter, mono());
			atomic_store(&s->target, target);
			return s;
		}
	}
	return NULL;
}

static void slot_release(struct slot *s)
{
	atomic_store(&s->target, 0);
	atomic_store(&s->busy, 0);
}

/*
 * The state letter /proc gives thread @tid of this process ('R' runnable or
 * running, 'S' and 'D' asleep, ...), or '?' if it cannot be read.  A woken
 * waiter is 'R' until it runs: it did not lose its wakeup, it waits for a CPU.
 */
static char thread_state(pid_t tid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return '?';
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return '?';
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] ? p[2] : '?';
}

/* Checks that found a waiter past BOUND still runnable, so not (yet) lost. */
static atomic_ulong late_runnable;

/*
 * The scheduling-delay probe: a thread that sleeps PROBE_NS at a time and
 * records how late it got the CPU back, the longest per second of the run.
 * A woken waiter waits for a CPU as long, roughly: that time is not the
 * waiter's to account for.
 */
static atomic_llong probe_tag[PROBE_RING];	/* the second the entry is for, + 1 */
static atomic_llong probe_max[PROBE_RING];
static atomic_llong probe_max_all;
static atomic_int probe_stop;

static void *probe_main(void *arg)
{
	(void)arg;
	while (!atomic_load(&probe_stop)) {
		long long t0 = mono(), d, sec;
		int i;

		sleep_ns(PROBE_NS);
		d = mono() - t0 - PROBE_NS;
		if (d < 0)
			d = 0;
		sec = (t0 - g.t_start) / NSEC_PER_SEC;
		i = (int)(sec % PROBE_RING);
		if (atomic_load(&probe_tag[i]) != sec + 1) {
			atomic_store(&probe_max[i], d);
			atomic_store(&probe_tag[i], sec + 1);
		} else if (d > atomic_load(&probe_max[i])) {
			atomic_store(&probe_max[i], d);
		}
		if (d > atomic_load(&probe_max_all))
			atomic_store(&probe_max_all, d);
	}
	return NULL;
}

/* The longest delay the probe saw from a second before @from to @to. */
static long long probe_delay(long long from, long long to)
{
	long long s0 = (from - g.t_start) / NSEC_PER_SEC - 1;
	long long s1 = (to - g.t_start) / NSEC_PER_SEC, sec, max = 0;

	if (s0 < 0)
		s0 = 0;
	if (s1 - s0 >= PROBE_RING)
		s0 = s1 - PROBE_RING + 1;
	for (sec = s0; sec <= s1; sec++) {
		int i = (int)(sec % PROBE_RING);
		long long d = atomic_load(&probe_max[i]);

		if (atomic_load(&probe_tag[i]) == sec + 1 && d > max)
			max = d;
	}
	return max;
}

/*
 * True if the waiter of slot @s (registration @gen), still waiting past
 * BOUND, is runnable: woken, waiting for a CPU.  /proc is read at most every
 * STATE_CHECK_NS per registration; meanwhile it counts as runnable still.
 */
static bool waiter_runnable(struct slot *s, unsigned int gen, long long now, char *state)
{
	long long seen = atomic_load(&s->t_runnable);

	*state = '?';
	if (seen && now - seen < STATE_CHECK_NS) {
		*state = 'R';
		return true;
	}
	*state = thread_state(atomic_load(&s->tid));
	if (atomic_load(&s->gen) != gen || !atomic_load(&s->busy))
		return true;	/* it returned meanwhile: not lost */
	if (*state != 'R')
		return false;
	atomic_store(&s->t_runnable, now);
	atomic_fetch_add(&late_runnable, 1);
	return true;
}

/*
 * The time by which the variable's condition for @target had become true,
 * or -1 if it is not known to have.  Every time given is at or after the
 * store (it is taken once the store returned), so a duration measured from
 * it never overstates how long the condition held.
 */
static long long store_time(struct tracked *tv, uint64_t target)
{
	uint64_t from, k;

	if (tv->kind == T_LATCH) {
		if (target == atomic_load(&tv->gen) && atomic_load(&tv->fired))
			return atomic_load(&tv->fire_t);
		return -1;
	}
	from = atomic_load(&tv->final_from);
	if (from && target >= from)
		return atomic_load(&tv->final_t);
	k = atomic_load(&tv->ring_k[target % RING]);
	if (k < target)
		return -1;
	return atomic_load(&tv->ring_t[target % RING]);
}

static void describe_how(unsigned int how, char *buf, size_t size)
{
	unsigned int kind = how & 0xf, mode = (how >> 4) & 0xf, flags = (how >> 8) & 0xff;
	unsigned int op = how >> 16;

	snprintf(buf, size, "%s mode %s flags %#x op %s", wait_kind_name[kind & 3],
		 mode < WAITVAR_MODE_COUNT ? mode_names[mode] : "?", flags, op_str(op));
}

/*
 * From when the waiter of @s could run: the store that made its condition
 * true (@ts) or the start of its wait (@te), whichever is later, and for an
 * exclusive waiter the last wake of the variable (see struct tracked).
 */
static long long wait_base(struct tracked *tv, struct slot *s, long long ts, long long te)
{
	long long base = ts > te ? ts : te, tw;

	if ((atomic_load(&s->how) >> 8) & WAITVAR_WAIT_EXCLUSIVE) {
		tw = atomic_load(&tv->t_wake);
		if (tw > base)
			base = tw;
	}
	return base;
}

/* Prints one diagnostic line: the first lines of a file, joined. */
static void diag_file(const char *what, const char *path, int lines)
{
	char buf[1024], out[1024] = "";
	FILE *f = fopen(path, "r");
	size_t len = 0;

	if (!f)
		return;
	while (lines-- > 0 && fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = '\0';
		len += snprintf(out + len, sizeof(out) - len, "%s%s", len ? " | " : "", buf);
		if (len >= sizeof(out))
			break;
	}
	fclose(f);
	pthread_mutex_lock(&out_lock);
	printf("#   %s: %s\n", what, out);
	pthread_mutex_unlock(&out_lock);
}

/*
 * What a lost wakeup leaves to see: the value now, the variable's STATS,
 * its bucket's line in the shared table's debugfs file, and where the
 * waiter sleeps (these need root; each is left out when it cannot be read).
 */
static void diag_lost(struct tracked *tv, pid_t tid)
{
	int fd = g.fds[atomic_load(&tv->fdi)];
	uint32_t id = atomic_load(&tv->id);
	struct waitvar_stats st;
	char path[96], line[128];
	uint64_t value = 0;
	FILE *f;

	if (waitvar_get(fd, id, &value) == 0 && waitvar_stats(fd, id, &st) == 0) {
		pthread_mutex_lock(&out_lock);
		printf("#   value %llu; STATS waiters %u bucket %u waits %llu wakes %llu woken %llu "
		       "spurious %llu\n", (unsigned long long)value, st.waiters, st.bucket,
		       (unsigned long long)st.waits, (unsigned long long)st.wakes,
		       (unsigned long long)st.woken, (unsigned long long)st.spurious);
		pthread_mutex_unlock(&out_lock);
		f = fopen("/sys/kernel/debug/sched/bit_wait_table", "r");
		while (f && fgets(line, sizeof(line), f)) {
			unsigned int b;

			if (sscanf(line, "%u", &b) == 1 && b == st.bucket) {
				line[strcspn(line, "\n")] = '\0';
				pthread_mutex_lock(&out_lock);
				printf("#   bit_wait_table (bucket entries var_waiters): %s\n", line);
				pthread_mutex_unlock(&out_lock);
			}
		}
		if (f)
			fclose(f);
	}
	snprintf(path, sizeof(path), "/proc/self/task/%d/wchan", (int)tid);
	diag_file("wchan", path, 1);
	snprintf(path, sizeof(path), "/proc/self/task/%d/stack", (int)tid);
	diag_file("stack", path, 12);
}

/*
 * The writer's side: true while a waiter the stores so far satisfied (its
 * target at most @upto) has not returned; one still waiting BOUND after its
 * condition became true is reported lost, once, and no longer waited for.
 */
static bool trk_pending(struct tracked *tv, uint64_t upto)
{
	long long now = mono();
	bool pending = false;
	int i;

	for (i = 0; i < NSLOT; i++) {
		struct slot *s = &tv->slots[i];
		uint64_t target;
		long long ts, te, base;
		unsigned int gen;
		char how[96], state;

		if (!atomic_load(&s->busy))
			continue;
		target = atomic_load(&s->target);
		if (!target || target > upto)
			continue;
		if (tv->kind == T_LATCH && target != upto)
			continue;
		gen = atomic_load(&s->gen);
		if (atomic_load(&s->reported) == gen)
			continue;
		ts = store_time(tv, target);
		te = atomic_load(&s->t_enter);
		if (ts < 0) {
			pending = true;
			continue;
		}
		base = wait_base(tv, s, ts, te);
		if (now - base <= BOUND_NS || waiter_runnable(s, gen, now, &state)) {
			pending = true;
			continue;
		}
		atomic_store(&s->reported, gen);
		describe_how(atomic_load(&s->how), how, sizeof(how));
		fail(K_LOST, "%s variable (file %d, id %u, %s): waiter thread %d (%s) waiting "
		     "for %s %llu still waits, in state %c (not runnable), %.3f s after its "
		     "condition became true (bound %.0f s)",
		     trk_name[tv->kind], atomic_load(&tv->fdi), atomic_load(&tv->id),
		     lock_str(atomic_load(&tv->lock)), atomic_load(&s->tid), how,
		     tv->kind == T_LATCH ? "generation" : "value",
		     (unsigned long long)target, state, (now - base) / 1e9, BOUND_NS / 1e9);
		diag_lost(tv, atomic_load(&s->tid));
	}
	return pending;
}

/*
 * The waiter's side, once its wait ended at @t_ret; @t_due is when its
 * timeout was due on CLOCK_MONOTONIC at the earliest (LLONG_MAX: none).  A
 * lost wakeup is a timeout that found the condition true for more than
 * BOUND when the timer fired (the time the waiter then waited for a CPU is
 * not counted), or a return more than BOUND after the condition became
 * true, less the longest wake-to-run delay the probe saw meanwhile.
 */
static void trk_check_return(struct thr *t, struct tracked *tv, struct slot *s, uint64_t target,
			     int ret, long long t_ret, long long t_due)
{
	long long ts = store_time(tv, target), te = atomic_load(&s->t_enter), base, lat, net;
	char how[96];

	if (ts < 0)
		return;
	base = wait_base(tv, s, ts, te);
	lat = t_ret - base;
	if (ret == 0) {
		if (lat < 0)
			return;
		net = lat;
		if (lat > BOUND_NS / 2)
			net -= probe_delay(base, t_ret);
		if (net < 0)
			net = 0;
		t->st.lat_n++;
		t->st.lat_sum += lat;
		if (lat > t->st.lat_max)
			t->st.lat_max = lat;
		if (net > t->st.net_max)
			t->st.net_max = net;
		if (lat > BOUND_NS && net <= BOUND_NS)
			t->st.late_excused++;
		if (net <= BOUND_NS)
			return;
	} else if (ret == -ETIMEDOUT) {
		/* asleep with the condition true, until the timer fired */
		net = (t_due < t_ret ? t_due : t_ret) - base;
		if (net > t->st.asleep_max)
			t->st.asleep_max = net;
		if (net <= BOUND_NS)
			return;
	} else {
		return;
	}
	describe_how(atomic_load(&s->how), how, sizeof(how));
	fail(K_LOST, "%s variable (file %d, id %u, %s): thread %d's %s for %s %llu %s %.3f s "
	     "after its condition became true (%.3f s of it not waiting for a CPU; bound "
	     "%.0f s)", trk_name[tv->kind],
	     atomic_load(&tv->fdi), atomic_load(&tv->id), lock_str(atomic_load(&tv->lock)),
	     t->tid, how,
	     tv->kind == T_LATCH ? "generation" : "value", (unsigned long long)target,
	     ret ? "timed out" : "returned", lat / 1e9, net / 1e9, BOUND_NS / 1e9);
}

/* A condition on a SEQ or XSEQ value that holds exactly once it reaches @target. */
static void seq_condition(struct thr *t, uint64_t cur, uint64_t *target, uint32_t *op,
			  uint64_t *operand)
{
	uint64_t k = *target, p;

	switch (below(&t->rng, 6)) {
	case 0:
		*op = WAITVAR_OP_GT;
		*operand = k - 1;
		return;
	case 1:
		*op = WAITVAR_OP_GE_S;
		*operand = k;
		return;
	case 2:
		*op = WAITVAR_OP_GT_S;
		*operand = k - 1;
		return;
	case 3:
		/* value >= 2^m is: any bit from m up set */
		for (p = 1; p < k; p <<= 1)
			;
		if (p - cur <= 4) {
			*op = WAITVAR_OP_ANY;
			*operand = ~(p - 1);
			*target = p;
			return;
		}
		break;
	case 4:
		/* the value is at least cur: != cur is >= cur + 1 */
		if (k == cur + 1) {
			*op = WAITVAR_OP_NE;
			*operand = cur;
			return;
		}
		break;
	}
	*op = WAITVAR_OP_GE;
	*operand = k;
}

/* A condition on a latch (counted down to 0) that holds exactly at 0. */
static void latch_condition(struct thr *t, uint32_t *op, uint64_t *operand)
{
	static const struct {
		uint32_t op;
		uint64_t operand;
	} c[] = {
		{ WAITVAR_OP_EQ, 0 }, { WAITVAR_OP_LE, 0 }, { WAITVAR_OP_LT, 1 },
		{ WAITVAR_OP_NONE, ~0ULL }, { WAITVAR_OP_LE_S, 0 }, { WAITVAR_OP_LT_S, 1 },
	};
	uint32_t i = below(&t->rng, sizeof(c) / sizeof(c[0]));

	*op = c[i].op;
	*operand = c[i].operand;
}

/* A plain (ADD, CMPXCHG or SET) variable of file @fdi, or -1. */
static int pick_plain(struct thr *t, int fdi)
{
	if (!g.nplain_by_fd[fdi])
		return -1;
	return g.plain_by_fd[fdi][below(&t->rng, g.nplain_by_fd[fdi])];
}

static bool mode_ok(uint32_t mode, uint32_t lock)
{
	return mode != WAITVAR_MODE_IO || !lock;
}

/*
 * A variable may be gone under a waiter (EIDRM, ENOENT) only if the end
 * destroys it, or if its latch was destroyed after the waiter was reported
 * lost.
 */
static unsigned int gone_ok(struct slot *s)
{
	unsigned int gen = atomic_load(&s->gen);

	if (atomic_load(&destroying) || atomic_load(&s->reported) == gen ||
	    atomic_load(&s->gone_gen) == gen)
		return M(EIDRM) | M(ENOENT);
	return 0;
}

/*
 * One wait on a tracked variable (file @fdi, id @id, lock @lock), for a
 * condition that some store will make true: WAIT, WAITV or a WATCH
 * descriptor.  @excl: an exclusive WAIT (XSEQ, plain latches), which passes
 * the wake on when it returns.  A latch's wait goes ahead only if
 * generation @gen is still open once the waiter is registered.
 */
static void tracked_wait(struct thr *t, struct tracked *tv, int fdi, uint32_t id, uint32_t lock,
			 uint64_t target, uint32_t op, uint64_t operand, bool excl, uint32_t gen)
{
	int fd = g.fds[fdi], ret = 0, kind, wfd;
	uint32_t mode, flags = excl ? WAITVAR_WAIT_EXCLUSIVE : 0;
	uint64_t value = 0;
	long long timeout = 0, t_ret, due = LLONG_MAX;
	struct slot *s;
	bool timed;

	/* The kind of wait, its mode and its timeout. */
	if (excl)
		kind = W_WAIT;
	else
		kind = below(&t->rng, 10) < 6 ? W_WAIT : chance(&t->rng, 60) ? W_WAITV :
		       chance(&t->rng, 70) ? W_POLL : W_READ;
	do {
		mode = below(&t->rng, WAITVAR_MODE_COUNT);
	} while (!mode_ok(mode, lock) ||
		 ((mode == WAITVAR_MODE_IO || mode == WAITVAR_MODE_UNINTERRUPTIBLE) &&
		  !g.unint_tracked));
	timed = mode == WAITVAR_MODE_IO || mode == WAITVAR_MODE_UNINTERRUPTIBLE ||
		chance(&t->rng, 75);

	s = slot_claim(t, tv, target, kind | mode << 4 | (flags & 0xff) << 8 | op << 16);
	if (!s)
		return;
	if (tv->kind == T_LATCH &&
	    (atomic_load(&tv->gen) != gen || atomic_load(&tv->closed))) {
		/* Too late for this generation: its owner may be destroying it. */
		slot_release(s);
		return;
	}

	t->st.tracked_waits++;
	if (kind == W_WAIT) {
		if (timed)
			timeout = tracked_timeout(t, &flags, &due);
		else
			t->st.tkind_waits[0]++;
		note_wait(t, mode, flags, lock);
		/* the slot's time is when the wait starts */
		atomic_store(&s->t_enter, mono());
		ret = waitvar_wait(fd, id, op, operand, mode, flags, timeout, &value);
		t_ret = mono();
		expect(t, C_WAIT, ret, M(OK) | M(ETIMEDOUT) | gone_ok(s),
		       "%s variable (file %d, id %u, %s), %s %s %llu, mode %s, flags %#x",
		       trk_name[tv->kind], fdi, id, lock_str(lock),
		       excl ? "exclusive" : "shared", op_str(op), (unsigned long long)operand,
		       mode_names[mode], flags);
		if (!ret && !op_holds(op, value, operand))
			fail(K_SEQ, "WAIT on %s variable (file %d, id %u) for %s %llu returned "
			     "value %llu, for which the condition does not hold",
			     trk_name[tv->kind], fdi, id, op_str(op),
			     (unsigned long long)operand, (unsigned long long)value);
	} else if (kind == W_WAITV) {
		struct waitvar_waitv_entry e[5];
		uint32_t n = 1 + below(&t->rng, 4), at = below(&t->rng, n), i;
		bool all_plain = !lock;

		for (i = 0; i < n; i++) {
			int vi;

			e[i] = (struct waitvar_waitv_entry){ .id = id, .op = op, .operand = operand };
			if (i == at)
				continue;
			vi = g.quiet[fdi][below(&t->rng, 3)];
			if (chance(&t->rng, 25)) {
				/* the same variable twice, under another equivalent condition */
				if (tv->kind == T_LATCH) {
					e[i].op = WAITVAR_OP_EQ;
					e[i].operand = 0;
				} else {
					e[i].op = WAITVAR_OP_GE;
					e[i].operand = target;
				}
				continue;
			}
			/* a variable nobody changes or wakes, and a condition it never meets */
			e[i].id = g.vars[vi].id;
			e[i].op = WAITVAR_OP_EQ;
			e[i].operand = g.vars[vi].init + 1;
			if (g.vars[vi].lock)
				all_plain = false;
		}
		if (mode == WAITVAR_MODE_IO && !all_plain)
			mode = WAITVAR_MODE_UNINTERRUPTIBLE;
		if (timed)
			timeout = tracked_timeout(t, &flags, &due);
		else
			t->st.tkind_waits[0]++;
		note_wait(t, mode, flags, lock);
		atomic_store(&s->t_enter, mono());
		ret = waitvar_waitv(fd, e, n, mode, flags, timeout, &value);
		t_ret = mono();
		expect(t, C_WAITV, ret < 0 ? ret : 0, M(OK) | M(ETIMEDOUT) | gone_ok(s),
		       "%u entries on file %d, tracked %s variable id %u at %u, mode %s, flags %#x",
		       n, fdi, trk_name[tv->kind], id, at, mode_names[mode], flags);
		if (ret >= 0 && (uint32_t)ret >= n)
			fail(K_SEQ, "WAITV of %u entries returned index %d", n, ret);
		else if (ret >= 0 && e[ret].id == id && !op_holds(e[ret].op, value, e[ret].operand))
			fail(K_SEQ, "WAITV entry %d (%s %llu on id %u) returned value %llu, for "
			     "which it does not hold", ret, op_str(e[ret].op),
			     (unsigned long long)e[ret].operand, id, (unsigned long long)value);
		if (ret > 0)
			ret = 0;
	} else {
		struct pollfd pfd;

		wfd = waitvar_watch(fd, id, op, operand);
		t_ret = mono();
		expect(t, C_WATCH, wfd < 0 ? wfd : 0, M(OK) | gone_ok(s),
		       "%s variable (file %d, id %u), %s %llu", trk_name[tv->kind], fdi, id,
		       op_str(op), (unsigned long long)operand);
		if (wfd < 0) {
			t->st.tracked_waits--;
			slot_release(s);
			return;
		}
		ret = 0;
		atomic_store(&s->t_enter, mono());
		if (kind == W_POLL) {
			due = atomic_load(&s->t_enter) + WAIT_NS;
			pfd = (struct pollfd){ .fd = wfd, .events = POLLIN };
			ret = poll(&pfd, 1, WAIT_NS / NSEC_PER_MSEC);
			t_ret = mono();
			ret = ret < 0 ? -errno : ret == 0 ? -ETIMEDOUT : 0;
			expect(t, C_WATCH_POLL, ret == -ETIMEDOUT ? 0 : ret, M(OK),
			       "WATCH descriptor of %s variable id %u", trk_name[tv->kind], id);
			if (!ret && (pfd.revents & (POLLERR | POLLHUP)) && !gone_ok(s))
				fail(K_SEQ, "WATCH descriptor of live %s variable (file %d, id %u) "
				     "polled %#x", trk_name[tv->kind], fdi, id, pfd.revents);
		}
		if (ret == 0) {
			ssize_t n = read(wfd, &value, sizeof(value));
			int err = n == (ssize_t)sizeof(value) ? 0 : n < 0 ? -errno : -EINVAL;

			if (kind == W_READ)
				t_ret = mono();
			expect(t, C_WATCH_READ, err, M(OK) | gone_ok(s),
			       "WATCH descriptor of %s variable id %u (%s %llu)", trk_name[tv->kind],
			       id, op_str(op), (unsigned long long)operand);
			if (!err && !op_holds(op, value, operand))
				fail(K_SEQ, "read() of the WATCH descriptor for %s %llu on %s "
				     "variable id %u gave %llu", op_str(op),
				     (unsigned long long)operand, trk_name[tv->kind], id,
				     (unsigned long long)value);
			ret = err;
		}
		close(wfd);
	}

	if (ret == 0)
		t->st.tracked_ok++;
	else if (ret == -ETIMEDOUT)
		t->st.tracked_timeouts++;
	else if (ret == -EIDRM)
		t->st.eidrm++;
	trk_check_return(t, tv, s, target, ret, t_ret, due);

	/*
	 * An exclusive waiter passes the wake on, as the next one may need it;
	 * registered still, so that a latch is not destroyed under the wake.
	 */
	if (excl && ret == 0) {
		if (chance(&t->rng, 80)) {
			ret = waitvar_wake(fd, id);
			expect(t, C_WAKE, ret, M(OK), "passing an exclusive wake on (id %u)", id);
		} else {
			ret = waitvar_wake_nr(fd, id, 1, 0);
			expect(t, C_WAKE_NR, ret < 0 ? ret : 0, M(OK),
			       "passing an exclusive wake on (id %u)", id);
			if (ret > 0)
				t->st.woken += ret;
		}
		atomic_store(&tv->t_wake, mono());
		t->st.wakes++;
	}
	slot_release(s);
}

static void waiter_seq(struct thr *t, bool excl_kind)
{
	int i, first = g.nseq ? (int)below(&t->rng, g.nseq) : 0;
	struct tracked *tv = NULL;
	uint64_t cur, target, operand;
	uint32_t op;

	for (i = 0; i < g.nseq; i++) {
		struct tracked *c = &g.trk[(first + i) % g.nseq];

		if ((c->kind == T_XSEQ) == excl_kind) {
			tv = c;
			break;
		}
	}
	if (!tv)
		return;
	cur = atomic_load(&tv->cur);
	if (cur >= FINAL_SEQ)
		return;
	if (excl_kind) {
		if (!atomic_load(&tv->round_open)) {
			sleep_ns((1 + below(&t->rng, 5)) * NSEC_PER_MSEC);
			return;
		}
		target = atomic_load(&tv->round_target);
		op = WAITVAR_OP_GE;
		operand = target;
		if (chance(&t->rng, 50)) {
			op = WAITVAR_OP_GT;
			operand = target - 1;
		}
	} else {
		/* mostly ahead of the value, sometimes already reached */
		target = chance(&t->rng, 10) && cur ? cur : cur + 1 + below(&t->rng, 3);
		seq_condition(t, cur, &target, &op, &operand);
	}
	tracked_wait(t, tv, atomic_load(&tv->fdi), atomic_load(&tv->id), atomic_load(&tv->lock),
		     target, op, operand, excl_kind, 0);
}

static void waiter_latch(struct thr *t)
{
	int nl = g.ntrk - g.nseq, fdi;
	struct tracked *tv;
	uint32_t gen, id, op, lock;
	uint64_t operand;

	if (nl <= 0)
		return;
	tv = &g.trk[g.nseq + below(&t->rng, nl)];
	/*
	 * Open, then the fields, then the same generation: what was read is
	 * that generation's (latch_main() numbers it before it writes them,
	 * and opens it after).  Reading the fields first could pair an old
	 * number with the next generation's id, which its owner does not
	 * wait for before it destroys it.
	 */
	gen = atomic_load(&tv->gen);
	if (!gen || atomic_load(&tv->closed)) {
		sleep_ns((1 + below(&t->rng, 5)) * NSEC_PER_MSEC);
		return;
	}
	id = atomic_load(&tv->id);
	fdi = atomic_load(&tv->fdi);
	lock = atomic_load(&tv->lock);
	if (atomic_load(&tv->gen) != gen) {
		sleep_ns((1 + below(&t->rng, 5)) * NSEC_PER_MSEC);
		return;
	}
	latch_condition(t, &op, &operand);
	tracked_wait(t, tv, fdi, id, lock, gen, op, operand, !lock && chance(&t->rng, 30), gen);
}

static void *waiter_main(struct thr *t)
{
	while (!stopping()) {
		uint32_t r = below(&t->rng, 100);

		if (r < 50)
			waiter_seq(t, false);
		else if (r < 75)
			waiter_seq(t, true);
		else
			waiter_latch(t);
	}
	return NULL;
}

/* ---------------------------------------------------------------------- */
/* Sequence writers. */

static void seq_wake(struct thr *t, struct tracked *tv, bool must);

/* Stores @k on a SEQ or XSEQ variable (its only writer), and publishes when. */
static void seq_store(struct thr *t, struct tracked *tv, uint64_t k)
{
	int fd = g.fds[atomic_load(&tv->fdi)], ret;
	uint32_t id = atomic_load(&tv->id);
	uint64_t prev = atomic_load(&tv->cur), got = 0;
	bool nowake = false;
	long long t1;

	switch (below(&t->rng, 4)) {
	case 0:
		ret = waitvar_set(fd, id, k);
		expect(t, C_SET, ret, M(OK), "sequence store of %llu on id %u",
		       (unsigned long long)k, id);
		break;
	case 3:
		/* no wake with the store: the wake that follows is the only one */
		ret = waitvar_add(fd, id, (int64_t)(k - prev), 0, &got);
		expect(t, C_ADD, ret, M(OK), "sequence ADD (no wake) to %llu on id %u",
		       (unsigned long long)k, id);
		if (!ret && got != k)
			fail(K_SEQ, "ADD of %lld to %s variable id %u (its only writer) returned "
			     "%llu, not %llu", (long long)(k - prev), trk_name[tv->kind], id,
			     (unsigned long long)got, (unsigned long long)k);
		nowake = true;
		break;
	case 1:
		ret = waitvar_add(fd, id, (int64_t)(k - prev), WAITVAR_ADD_WAKE, &got);
		expect(t, C_ADD, ret, M(OK), "sequence ADD to %llu on id %u",
		       (unsigned long long)k, id);
		if (!ret && got != k)
			fail(K_SEQ, "ADD of %lld to %s variable id %u (its only writer) returned "
			     "%llu, not %llu", (long long)(k - prev), trk_name[tv->kind], id,
			     (unsigned long long)got, (unsigned long long)k);
		break;
	default:
		ret = waitvar_cmpxchg(fd, id, prev, k, &got);
		expect(t, C_CMPXCHG, ret, M(OK), "sequence CMPXCHG %llu -> %llu on id %u",
		       (unsigned long long)prev, (unsigned long long)k, id);
		if (!ret && got != prev)
			fail(K_SEQ, "CMPXCHG on %s variable id %u (its only writer) found %llu, "
			     "not %llu", trk_name[tv->kind], id, (unsigned long long)got,
			     (unsigned long long)prev);
		break;
	}
	t1 = mono();
	if (k >= FINAL_SEQ) {
		atomic_store(&tv->final_t, t1);
		atomic_store(&tv->final_from, prev + 1);
	} else {
		atomic_store(&tv->ring_t[k % RING], t1);
		atomic_store(&tv->ring_k[k % RING], k);
	}
	atomic_store(&tv->cur, k);
	if (nowake) {
		seq_wake(t, tv, true);
	} else {
		atomic_store(&tv->t_wake, t1);
		t->st.wakes++;
	}
}

/*
 * The wake after a store: WAKE, WAKE_NR, or a filtered WAKE_NR; each wakes
 * every waiter of a SEQ variable (none is exclusive).  On an XSEQ one, WAKE
 * wakes one exclusive waiter, which passes the wake on; WAKE_NR here wakes
 * them all.  Unless @must, sometimes none: the store woke them.
 */
static void seq_wake(struct thr *t, struct tracked *tv, bool must)
{
	uint32_t id = atomic_load(&tv->id), flags = 0, nr = 0;
	int fd = g.fds[atomic_load(&tv->fdi)], ret;

	switch (below(&t->rng, must ? 4 : 5)) {
	case 0:
		ret = waitvar_wake(fd, id);
		expect(t, C_WAKE, ret, M(OK), "%s id %u after a store", trk_name[tv->kind], id);
		atomic_store(&tv->t_wake, mono());
		t->st.wakes++;
		return;
	case 1:
		/* all of them */
		if (tv->kind == T_SEQ)
			nr = below(&t->rng, 3);
		break;
	case 2:
		flags = WAITVAR_WAKE_FILTER;
		break;
	case 3:
		flags = WAITVAR_WAKE_FILTER;
		nr = tv->kind == T_SEQ ? below(&t->rng, 3) : NSLOT;
		break;
	default:
		return;
	}
	ret = waitvar_wake_nr(fd, id, nr, flags);
	expect(t, C_WAKE_NR, ret < 0 ? ret : 0, M(OK), "%s id %u nr %u flags %#x after a store",
	       trk_name[tv->kind], id, nr, flags);
	atomic_store(&tv->t_wake, mono());
	t->st.wakes++;
	if (flags)
		t->st.filter_wakes++;
	if (ret > 0)
		t->st.woken += ret;
}

/* One step on each variable of the writer; a variable waits for its waiters. */
static void writer_step(struct thr *t, struct tracked *tv)
{
	uint64_t cur = atomic_load(&tv->cur);
	long long now = mono();

	if (tv->kind == T_SEQ) {
		if (!trk_pending(tv, cur))
			seq_store(t, tv, cur + 1);
		return;
	}
	switch (tv->phase) {
	case 0:		/* open a round */
		atomic_store(&tv->round_target, cur + 1);
		atomic_store(&tv->round_open, 1);
		tv->t_phase = now;
		tv->d_phase = (5 + below(&t->rng, 60)) * NSEC_PER_MSEC;
		tv->phase = 1;
		break;
	case 1:		/* close it, and store its value */
		if (now - tv->t_phase < tv->d_phase)
			break;
		atomic_store(&tv->round_open, 0);
		seq_store(t, tv, cur + 1);
		seq_wake(t, tv, false);
		tv->phase = 2;
		break;
	default:	/* every waiter of the round returned */
		if (!trk_pending(tv, cur))
			tv->phase = 0;
		break;
	}
}

static void *writer_main(struct thr *t)
{
	int i, n = g.nrole[R_WRITER];
	bool pending = true;
	long long end;

	while (!stopping()) {
		for (i = t->ridx; i < g.nseq; i += n)
			writer_step(t, &g.trk[i]);
		sleep_ns((1 + below(&t->rng, 8)) * NSEC_PER_MSEC);
	}
	/*
	 * The waiters the last stores satisfied return first (or are reported
	 * after BOUND): the final store would wake a lost one too.
	 */
	end = mono() + BOUND_NS + 2 * NSEC_PER_SEC;
	while (pending && mono() < end) {
		pending = false;
		for (i = t->ridx; i < g.nseq; i += n) {
			atomic_store(&g.trk[i].round_open, 0);
			if (trk_pending(&g.trk[i], atomic_load(&g.trk[i].cur)))
				pending = true;
		}
		if (pending)
			sleep_ns(10 * NSEC_PER_MSEC);
	}
	/* The last store makes every condition true; each waiter must return. */
	pending = true;
	for (i = t->ridx; i < g.nseq; i += n) {
		atomic_store(&g.trk[i].round_open, 0);
		seq_store(t, &g.trk[i], FINAL_SEQ);
		if (g.trk[i].kind == T_XSEQ)
			seq_wake(t, &g.trk[i], false);
	}
	end = mono() + BOUND_NS + 2 * NSEC_PER_SEC;
	while (pending && mono() < end) {
		pending = false;
		for (i = t->ridx; i < g.nseq; i += n)
			if (trk_pending(&g.trk[i], FINAL_SEQ))
				pending = true;
		if (pending)
			sleep_ns(10 * NSEC_PER_MSEC);
	}
	return NULL;
}

/* ---------------------------------------------------------------------- */
/* Latches: CREATE, count down with DEC_AND_WAKE, wait for the waiters, DESTROY. */

static void latch_handshake(struct tracked *tv, uint32_t gen)
{
	long long end = mono() + BOUND_NS + 2 * NSEC_PER_SEC;

	while (trk_pending(tv, gen) && mono() < end)
		sleep_ns(5 * NSEC_PER_MSEC);
}

static void *latch_main(struct thr *t)
{
	struct tracked *tv = &g.trk[t->latch];
	static const uint32_t locks[] = { 0, WAITVAR_CREATE_SPINLOCK, WAITVAR_CREATE_MUTEX };

	while (!stopping()) {
		uint32_t k = 1 + below(&t->rng, 4), id = 0, gen, i;
		int fdi = below(&t->rng, g.nfiles), fd = g.fds[fdi], ret;
		long long open_until;

		uint32_t lock = locks[below(&t->rng, 3)];

		ret = waitvar_create(fd, k, lock, &id);
		expect(t, C_CREATE, ret, M(OK), "latch K %u flags %#x on file %d", k, lock, fdi);
		if (ret) {
			sleep_ns(10 * NSEC_PER_MSEC);
			continue;
		}
		/*
		 * Closed since the last generation: no waiter uses these now.  The
		 * new generation number comes first and the opening last, so that
		 * a waiter that saw it open, and the same number before and after
		 * reading the rest, read this generation's (waiter_latch()).
		 */
		atomic_store(&tv->fired, 0);
		gen = atomic_fetch_add(&tv->gen, 1) + 1;
		atomic_store(&tv->lock, lock);
		atomic_store(&tv->fdi, fdi);
		atomic_store(&tv->id, id);
		atomic_store(&tv->closed, 0);

		/* let waiters come, counting down now and then */
		open_until = mono() + (10 + below(&t->rng, 150)) * NSEC_PER_MSEC;
		for (i = 0; i < k; i++) {
			uint64_t left = 1;

			while (!stopping() && mono() < open_until && i + 1 == k)
				sleep_ns(2 * NSEC_PER_MSEC);
			if (i + 1 < k)
				sleep_ns(below(&t->rng, 10) * NSEC_PER_MSEC);
			ret = waitvar_dec_and_wake(fd, id, &left);
			expect(t, C_DEC_AND_WAKE, ret, M(OK), "latch id %u", id);
			if (!ret && left != k - i - 1)
				fail(K_SEQ, "DEC_AND_WAKE on latch id %u (its only writer) returned "
				     "%llu, not %u", id, (unsigned long long)left, k - i - 1);
		}
		t->st.wakes++;
		atomic_store(&tv->fire_t, mono());
		atomic_store(&tv->t_wake, atomic_load(&tv->fire_t));
		atomic_store(&tv->fired, 1);
		latch_handshake(tv, gen);
		/* no new waiter from here on; then wait for those that came in time */
		atomic_store(&tv->closed, 1);
		latch_handshake(tv, gen);
		/*
		 * A waiter still registered now is runnable, woken but not yet run
		 * (one asleep past BOUND was reported): the DESTROY may end its wait.
		 */
		for (i = 0; i < NSLOT; i++) {
			struct slot *s = &tv->slots[i];

			if (atomic_load(&s->busy) && atomic_load(&s->target) == gen)
				atomic_store(&s->gone_gen, atomic_load(&s->gen));
		}
		ret = waitvar_destroy(fd, id);
		expect(t, C_DESTROY, ret, M(OK), "latch id %u", id);
	}
	return NULL;
}

/* ---------------------------------------------------------------------- */
/* Short waits on the untracked variables, and the other commands. */

static void short_wait(struct thr *t, int vi)
{
	struct var *v = &g.vars[vi];
	uint32_t op = below(&t->rng, WAITVAR_OP_COUNT), mode, flags = 0;
	uint64_t operand, value = 0, cur = 0;
	long long timeout;
	int ret;

	if (v->cls == V_SET)
		cur = atomic_load(&v->last);
	switch (below(&t->rng, 4)) {
	case 0: operand = cur; break;
	case 1: operand = 0; break;
	case 2: operand = ~0ULL; break;
	default: operand = rnd(&t->rng) >> below(&t->rng, 64); break;
	}
	do {
		mode = below(&t->rng, WAITVAR_MODE_COUNT);
	} while (!mode_ok(mode, v->lock));
	if (!v->lock && chance(&t->rng, 30))
		flags |= WAITVAR_WAIT_EXCLUSIVE;
	timeout = short_timeout(t, &flags);
	note_wait(t, mode, flags, v->lock);
	t->st.short_waits++;
	ret = waitvar_wait(g.fds[v->fdi], v->id, op, operand, mode, flags, timeout, &value);
	expect(t, C_WAIT, ret, M(OK) | M(ETIMEDOUT), "%s variable (file %d, id %u, %s) %s %llu, "
	       "mode %s, flags %#x, timeout %lld", class_name[v->cls], v->fdi, v->id,
	       lock_str(v->lock), op_str(op), (unsigned long long)operand, mode_names[mode], flags,
	       timeout);
	if (!ret) {
		t->st.short_ok++;
		if (!op_holds(op, value, operand))
			fail(K_SEQ, "WAIT %s %llu on id %u returned value %llu, for which it does "
			     "not hold", op_str(op), (unsigned long long)operand, v->id,
			     (unsigned long long)value);
	} else if (ret == -ETIMEDOUT) {
		t->st.short_timeouts++;
	}
}

static void short_waitv(struct thr *t, int fdi)
{
	struct waitvar_waitv_entry e[4];
	uint32_t n = 1 + below(&t->rng, 4), i, mode, flags = 0;
	bool plain = true;
	uint64_t value;
	long long timeout;
	int ret;

	for (i = 0; i < n; i++) {
		int vi = pick_plain(t, fdi);

		if (vi < 0)
			return;
		e[i] = (struct waitvar_waitv_entry){
			.id = g.vars[vi].id,
			.op = below(&t->rng, WAITVAR_OP_COUNT),
			.operand = chance(&t->rng, 50) ? rnd(&t->rng) : below(&t->rng, 3),
		};
		if (g.vars[vi].lock)
			plain = false;
	}
	do {
		mode = below(&t->rng, WAITVAR_MODE_COUNT);
	} while (mode == WAITVAR_MODE_IO && !plain);
	timeout = short_timeout(t, &flags);
	note_wait(t, mode, flags, 0);
	t->st.short_waits++;
	ret = waitvar_waitv(g.fds[fdi], e, n, mode, flags, timeout, &value);
	expect(t, C_WAITV, ret < 0 ? ret : 0, M(OK) | M(ETIMEDOUT),
	       "%u untracked entries on file %d, mode %s, flags %#x", n, fdi, mode_names[mode],
	       flags);
	if (ret >= 0) {
		t->st.short_ok++;
		if ((uint32_t)ret >= n)
			fail(K_SEQ, "WAITV of %u entries returned index %d", n, ret);
	} else if (ret == -ETIMEDOUT) {
		t->st.short_timeouts++;
	}
}

static void do_wake(struct thr *t, int vi)
{
	struct var *v = &g.vars[vi];
	int ret;

	if (chance(&t->rng, 40)) {
		ret = waitvar_wake(g.fds[v->fdi], v->id);
		expect(t, C_WAKE, ret, M(OK), "%s variable id %u", class_name[v->cls], v->id);
	} else {
		uint32_t flags = chance(&t->rng, 50) ? WAITVAR_WAKE_FILTER : 0;
		uint32_t nr = below(&t->rng, 4);

		ret = waitvar_wake_nr(g.fds[v->fdi], v->id, nr, flags);
		expect(t, C_WAKE_NR, ret < 0 ? ret : 0, M(OK), "%s variable id %u nr %u flags %#x",
		       class_name[v->cls], v->id, nr, flags);
		if (ret > 0)
			t->st.woken += ret;
		if (flags)
			t->st.filter_wakes++;
	}
	t->st.wakes++;
}

static void do_stats(struct thr *t, int fd, uint32_t id, const char *what)
{
	struct waitvar_stats st;
	int ret = waitvar_stats(fd, id, &st);

	/* the counters move one by one: only the end, with no wait left, compares them */
	expect(t, C_STATS, ret, M(OK), "%s id %u", what, id);
}

/* A WATCH descriptor on an untracked variable: poll it briefly, read it without blocking. */
static void short_watch(struct thr *t, int vi)
{
	struct var *v = &g.vars[vi];
	uint32_t op = below(&t->rng, WAITVAR_OP_COUNT);
	uint64_t operand = chance(&t->rng, 50) ? rnd(&t->rng) : below(&t->rng, 4), value;
	struct pollfd pfd;
	int wfd, ret;
	ssize_t n;

	wfd = waitvar_watch(g.fds[v->fdi], v->id, op, operand);
	expect(t, C_WATCH, wfd < 0 ? wfd : 0, M(OK), "%s variable id %u %s %llu",
	       class_name[v->cls], v->id, op_str(op), (unsigned long long)operand);
	if (wfd < 0)
		return;
	pfd = (struct pollfd){ .fd = wfd, .events = POLLIN };
	ret = poll(&pfd, 1, below(&t->rng, 20));
	expect(t, C_WATCH_POLL, ret < 0 ? -errno : 0, M(OK), "WATCH of id %u", v->id);
	if (fcntl(wfd, F_SETFL, O_NONBLOCK) == 0) {
		n = read(wfd, &value, sizeof(value));
		ret = n == (ssize_t)sizeof(value) ? 0 : n < 0 ? -errno : -EINVAL;
		expect(t, C_WATCH_READ, ret, M(OK) | M(EAGAIN), "non-blocking WATCH of id %u",
		       v->id);
		if (!ret && !op_holds(op, value, operand))
			fail(K_SEQ, "read() of the WATCH descriptor for %s %llu on id %u gave %llu",
			     op_str(op), (unsigned long long)operand, v->id,
			     (unsigned long long)value);
	}
	close(wfd);
}

static void do_get_tracked(struct thr *t)
{
	struct tracked *tv;
	uint64_t before, after, value;
	uint32_t id;
	int ret, fdi;

	if (!g.nseq)
		return;
	tv = &g.trk[below(&t->rng, g.nseq)];
	fdi = atomic_load(&tv->fdi);
	id = atomic_load(&tv->id);
	before = atomic_load(&tv->cur);
	ret = waitvar_get(g.fds[fdi], id, &value);
	after = atomic_load(&tv->cur);
	expect(t, C_GET, ret, M(OK), "%s variable id %u", trk_name[tv->kind], id);
	/* its writer publishes each value once stored: it is at most one ahead */
	if (!ret && (value < before || (value > after + 1 && value != FINAL_SEQ)))
		fail(K_SEQ, "GET of %s variable (file %d, id %u) gave %llu, but its writer had "
		     "stored %llu before and %llu after", trk_name[tv->kind], fdi, id,
		     (unsigned long long)value, (unsigned long long)before,
		     (unsigned long long)after);
}

static void do_features(struct thr *t, int fd)
{
	struct waitvar_features f;
	int ret = waitvar_features(fd, &f);

	expect(t, C_FEATURES, ret, M(OK), "FEATURES");
	if (!ret && (f.commands & 0x3ffff) != 0x3ffff)
		fail(K_RAN, "FEATURES lists commands %#llx: not all of 0x00-0x11",
		     (unsigned long long)f.commands);
}

static void do_list(struct thr *t, int fd)
{
	uint32_t count = 0, needed = 0, size = chance(&t->rng, 20) ? 0 : LIST_BUF;
	int ret = waitvar_list(fd, t->buf, size, &count, &needed);

	expect(t, C_LIST, ret, M(OK), "LIST of %u bytes", size);
}

static void *add_main(struct thr *t)
{
	int n = g.nby_class[V_ADD];

	while (!stopping() && n) {
		int vi = g.by_class[V_ADD][below(&t->rng, n)], ret, fd;
		struct var *v = &g.vars[vi];
		uint32_t r = below(&t->rng, 100);
		uint64_t value;

		fd = g.fds[v->fdi];
		if (r < 70) {
			int64_t delta = (int64_t)below(&t->rng, 2001) - 1000;
			uint32_t flags = chance(&t->rng, 50) ? WAITVAR_ADD_WAKE : 0;

			ret = waitvar_add(fd, v->id, delta, flags, &value);
			expect(t, C_ADD, ret, M(OK), "ADD %lld flags %#x on id %u", (long long)delta,
			       flags, v->id);
			if (!ret)
				atomic_fetch_add(&v->add_sum, (uint64_t)delta);
			if (flags)
				t->st.wakes++;
		} else if (r < 85) {
			ret = waitvar_dec_and_wake(fd, v->id, &value);
			expect(t, C_DEC_AND_WAKE, ret, M(OK), "ADD variable id %u", v->id);
			if (!ret)
				atomic_fetch_add(&v->add_sum, (uint64_t)-1);
		} else if (r < 92) {
			ret = waitvar_get(fd, v->id, &value);
			expect(t, C_GET, ret, M(OK), "ADD variable id %u", v->id);
		} else {
			short_wait(t, vi);
		}
	}
	return NULL;
}

static void *cas_main(struct thr *t)
{
	int n = g.nby_class[V_CAS];

	while (!stopping() && n) {
		int vi = g.by_class[V_CAS][below(&t->rng, n)], ret, fd;
		struct var *v = &g.vars[vi];
		uint64_t cur = 0, expected, prev = 0;

		fd = g.fds[v->fdi];
		if (chance(&t->rng, 5)) {
			short_wait(t, vi);
			continue;
		}
		ret = waitvar_get(fd, v->id, &cur);
		expect(t, C_GET, ret, M(OK), "CMPXCHG variable id %u", v->id);
		/* mostly the value just read; sometimes one that is likely stale */
		expected = chance(&t->rng, 85) ? cur : cur + below(&t->rng, 3) - 1;
		ret = waitvar_cmpxchg(fd, v->id, expected, expected + 1, &prev);
		expect(t, C_CMPXCHG, ret, M(OK), "%llu -> %llu on id %u",
		       (unsigned long long)expected, (unsigned long long)expected + 1, v->id);
		if (!ret && prev == expected) {
			atomic_fetch_add(&v->cas_ok, 1);
			t->st.wakes++;
		}
	}
	return NULL;
}

static void *set_main(struct thr *t)
{
	int n = g.nby_class[V_SET], own = 0, i, *mine = calloc(n ? n : 1, sizeof(int));

	for (i = 0; mine && i < n; i++)
		if (g.vars[g.by_class[V_SET][i]].owner == t->ridx)
			mine[own++] = g.by_class[V_SET][i];
	while (!stopping() && own) {
		int vi = mine[below(&t->rng, own)], ret, fd;
		struct var *v = &g.vars[vi];
		uint64_t value = 0, got = 0;

		fd = g.fds[v->fdi];
		switch (below(&t->rng, 10)) {
		case 0:
			short_wait(t, vi);
			break;
		case 1:
			do_wake(t, vi);
			break;
		case 2:
			do_stats(t, fd, v->id, "SET variable");
			break;
		default:
			value = rnd(&t->rng) >> below(&t->rng, 64);
			ret = waitvar_set(fd, v->id, value);
			expect(t, C_SET, ret, M(OK), "SET %llu on id %u", (unsigned long long)value,
			       v->id);
			if (!ret)
				atomic_store(&v->last, value);
			t->st.wakes++;
			ret = waitvar_get(fd, v->id, &got);
			expect(t, C_GET, ret, M(OK), "SET variable id %u", v->id);
			if (!ret && got != atomic_load(&v->last))
				fail(K_SET, "GET of id %u (file %d, %s) by its only writer gave %llu "
				     "after it set %llu", v->id, v->fdi, lock_str(v->lock),
				     (unsigned long long)got,
				     (unsigned long long)atomic_load(&v->last));
			break;
		}
	}
	free(mine);
	return NULL;
}

static void *misc_main(struct thr *t)
{
	while (!stopping()) {
		int fdi = below(&t->rng, g.nfiles), vi = pick_plain(t, fdi);
		uint32_t r = below(&t->rng, 100);

		if (vi < 0) {
			/* a file with no ADD, CMPXCHG or SET variable: another one */
			sleep_ns(NSEC_PER_MSEC);
			continue;
		}
		if (r < 20)
			short_wait(t, vi);
		else if (r < 35)
			short_waitv(t, fdi);
		else if (r < 45)
			short_watch(t, vi);
		else if (r < 60)
			do_wake(t, vi);
		else if (r < 70)
			do_stats(t, g.fds[fdi], g.vars[vi].id, class_name[g.vars[vi].cls]);
		else if (r < 80)
			do_get_tracked(t);
		else if (r < 85 && g.nseq)
			do_stats(t, g.fds[atomic_load(&g.trk[0].fdi)], atomic_load(&g.trk[0].id),
				 "SEQ variable");
		else if (r < 92)
			do_features(t, g.fds[fdi]);
		else
			do_list(t, g.fds[fdi]);
	}
	return NULL;
}

/* ---------------------------------------------------------------------- */
/* Churners (CREATE and DESTROY of scratch variables) and their victims. */

static const uint32_t lock_flags[] = { 0, WAITVAR_CREATE_SPINLOCK, WAITVAR_CREATE_MUTEX };

/*
 * A scratch variable: every command on it, then DESTROY, then it is gone;
 * on the churner's own file, where no other thread can reuse its id, also
 * checked to be gone.
 */
static void churn_scratch(struct thr *t)
{
	bool own = t->own_fd >= 0 && chance(&t->rng, 50);
	int fdi = own ? -1 : (int)below(&t->rng, g.nfiles), fd = own ? t->own_fd : g.fds[fdi];
	int ret, wfd;
	uint32_t lock = lock_flags[below(&t->rng, 3)], id = 0;
	uint64_t value = rnd(&t->rng), got = 0, prev = 0;

	ret = waitvar_create(fd, value, lock, &id);
	expect(t, C_CREATE, ret, M(OK), "scratch on file %d flags %#x", fdi, lock);
	if (ret)
		return;
	ret = waitvar_get(fd, id, &got);
	expect(t, C_GET, ret, M(OK), "scratch id %u", id);
	if (!ret && got != value)
		fail(K_SET, "scratch id %u (file %d, %s) created with %llu reads %llu", id, fdi,
		     lock_str(lock), (unsigned long long)value, (unsigned long long)got);
	ret = waitvar_add(fd, id, 5, 0, &got);
	expect(t, C_ADD, ret, M(OK), "scratch id %u", id);
	if (!ret && got != value + 5)
		fail(K_ADD, "ADD 5 to scratch id %u holding %llu returned %llu", id,
		     (unsigned long long)value, (unsigned long long)got);
	ret = waitvar_cmpxchg(fd, id, value + 5, 7, &prev);
	expect(t, C_CMPXCHG, ret, M(OK), "scratch id %u", id);
	if (!ret && prev != value + 5)
		fail(K_CAS, "CMPXCHG on scratch id %u found %llu, not %llu", id,
		     (unsigned long long)prev, (unsigned long long)value + 5);
	ret = waitvar_set(fd, id, 1);
	expect(t, C_SET, ret, M(OK), "scratch id %u", id);
	ret = waitvar_dec_and_wake(fd, id, &got);
	expect(t, C_DEC_AND_WAKE, ret, M(OK), "scratch id %u", id);
	if (!ret && got != 0)
		fail(K_ADD, "DEC_AND_WAKE of scratch id %u from 1 returned %llu", id,
		     (unsigned long long)got);
	/* the value is 0: a wait for it returns at once */
	ret = waitvar_wait(fd, id, WAITVAR_OP_EQ, 0, WAITVAR_MODE_INTERRUPTIBLE, 0, 0, &got);
	expect(t, C_WAIT, ret, M(OK), "scratch id %u == 0, untimed", id);
	t->st.tkind_waits[0]++;
	t->st.mode_waits[WAITVAR_MODE_INTERRUPTIBLE]++;
	wfd = waitvar_watch(fd, id, WAITVAR_OP_EQ, 0);
	expect(t, C_WATCH, wfd < 0 ? wfd : 0, M(OK), "scratch id %u", id);
	do_stats(t, fd, id, "scratch");
	ret = waitvar_destroy(fd, id);
	expect(t, C_DESTROY, ret, M(OK), "scratch id %u", id);
	if (wfd >= 0) {
		/* a WATCH descriptor outlives its variable, and tells it died */
		struct pollfd pfd = { .fd = wfd, .events = POLLIN };

		ret = poll(&pfd, 1, 5000);
		expect(t, C_WATCH_POLL, ret < 0 ? -errno : 0, M(OK), "WATCH of destroyed id %u", id);
		if (ret >= 0 && !(pfd.revents & (POLLERR | POLLHUP)))
			fail(K_SEQ, "WATCH of destroyed scratch id %u polls %#x, not POLLERR|POLLHUP",
			     id, ret ? pfd.revents : 0);
		if (read(wfd, &got, sizeof(got)) < 0)
			ret = -errno;
		else
			ret = 0;
		expect(t, C_WATCH_READ, ret, M(EIDRM), "WATCH of destroyed id %u", id);
		close(wfd);
	}
	if (!own)
		return;
	ret = waitvar_destroy(fd, id);
	expect(t, C_DESTROY, ret, M(ENOENT), "scratch id %u, destroyed already", id);
	ret = waitvar_get(fd, id, &got);
	expect(t, C_GET, ret, M(ENOENT), "destroyed scratch id %u", id);
}

/*
 * A victim thread waits on a scratch variable for a value it never takes;
 * DESTROY must end that wait with EIDRM within BOUND.
 */
static void churn_victim(struct thr *t)
{
	struct victim *vic = t->vic;
	int fd = t->own_fd, ret, st;
	uint32_t lock = lock_flags[below(&t->rng, 3)], id = 0;
	uint64_t value = rnd(&t->rng) & ~1ULL;
	long long t_destroy, until;
	struct waitvar_stats sts;
	char how[96], vstate;

	if (fd < 0 || stopping())
		return;
	ret = waitvar_create(fd, value, lock, &id);
	expect(t, C_CREATE, ret, M(OK), "victim variable flags %#x", lock);
	if (ret)
		return;
	vic->fd = fd;
	vic->id = id;
	vic->lock = lock;
	vic->value = value;
	atomic_store(&vic->state, VIC_ARMED);
	until = mono() + 2 * NSEC_PER_SEC;
	while (atomic_load(&vic->state) == VIC_ARMED && mono() < until)
		sleep_ns(2 * NSEC_PER_MSEC);
	st = VIC_ARMED;
	if (atomic_compare_exchange_strong(&vic->state, &st, VIC_IDLE)) {
		/* the victim did not come: nobody waits */
		ret = waitvar_destroy(fd, id);
		expect(t, C_DESTROY, ret, M(OK), "unused victim variable id %u", id);
		return;
	}
	/* until the victim sleeps (or a while), then pull the variable from under it */
	until = mono() + 2 * NSEC_PER_SEC;
	while (atomic_load(&vic->state) == VIC_WAITING && mono() < until) {
		ret = waitvar_stats(fd, id, &sts);
		expect(t, C_STATS, ret, M(OK), "victim variable id %u", id);
		if (ret || sts.waiters)
			break;
		sleep_ns(2 * NSEC_PER_MSEC);
	}
	ret = waitvar_destroy(fd, id);
	t_destroy = mono();
	expect(t, C_DESTROY, ret, M(OK), "victim variable id %u", id);
	/*
	 * Past BOUND, the victim has lost the wake only if it is still asleep:
	 * runnable, it was woken and waits for a CPU (up to its own timeout).
	 */
	until = t_destroy + BOUND_NS;
	vstate = '?';
	for (;;) {
		long long now = mono();

		st = atomic_load(&vic->state);
		if (st == VIC_DONE)
			break;
		if (now >= until) {
			vstate = thread_state(atomic_load(&vic->tid));
			if (vstate != 'R' || now >= t_destroy + WAIT_NS + 2 * NSEC_PER_SEC)
				break;
			atomic_fetch_add(&late_runnable, 1);
			until = now + STATE_CHECK_NS;
		}
		sleep_ns(2 * NSEC_PER_MSEC);
	}
	describe_how(atomic_load(&vic->how), how, sizeof(how));
	if (st != VIC_DONE) {
		fail(K_LOST, "DESTROY of id %u (churner file, %s): thread %d's %s has not returned "
		     "%.3f s after it, in state %c (bound %.0f s)", id, lock_str(lock),
		     atomic_load(&vic->tid), how, (mono() - t_destroy) / 1e9, vstate,
		     BOUND_NS / 1e9);
		/* its own timeout ends it */
		until = t_destroy + WAIT_NS + 2 * NSEC_PER_SEC;
		while (atomic_load(&vic->state) != VIC_DONE && mono() < until)
			sleep_ns(10 * NSEC_PER_MSEC);
	} else {
		long long t_ret = atomic_load(&vic->t_ret), lat = t_ret - t_destroy, net = lat;
		int vret = atomic_load(&vic->ret);

		/* as trk_check_return() counts a watched waiter's */
		if (vret == -ETIMEDOUT && atomic_load(&vic->t_due) < t_ret)
			net = atomic_load(&vic->t_due) - t_destroy;
		else if (lat > BOUND_NS / 2)
			net -= probe_delay(t_destroy, t_ret);
		if (net > BOUND_NS)
			fail(K_LOST, "DESTROY of id %u (churner file, %s): thread %d's %s ended %s "
			     "%.3f s after it (%.3f s of it not waiting for a CPU; bound %.0f s)", id,
			     lock_str(lock), atomic_load(&vic->tid), how, errname(-vret), lat / 1e9,
			     net / 1e9, BOUND_NS / 1e9);
	}
	atomic_store(&vic->state, VIC_IDLE);
}

static void *churn_main(struct thr *t)
{
	while (!stopping()) {
		if (chance(&t->rng, 40))
			churn_victim(t);
		else
			churn_scratch(t);
	}
	if (t->own_fd >= 0)
		close(t->own_fd);
	return NULL;
}

static void *victim_main(struct thr *t)
{
	struct victim *vic = t->vic;

	atomic_store(&vic->tid, t->tid);
	for (;;) {
		int fd, ret = 0, kind, st = VIC_ARMED;
		uint32_t mode, flags = 0;
		uint64_t value;
		long long timeout, due;

		while (atomic_load(&vic->state) != VIC_ARMED) {
			if (stopping() && atomic_load(&vic->state) == VIC_IDLE)
				return NULL;
			sleep_ns(2 * NSEC_PER_MSEC);
		}
		fd = vic->fd;
		do {
			mode = below(&t->rng, WAITVAR_MODE_COUNT);
		} while (!mode_ok(mode, vic->lock) ||
			 ((mode == WAITVAR_MODE_IO || mode == WAITVAR_MODE_UNINTERRUPTIBLE) &&
			  !g.unint_tracked));
		if (!vic->lock && chance(&t->rng, 30))
			flags |= WAITVAR_WAIT_EXCLUSIVE;
		kind = flags ? W_WAIT : (int)below(&t->rng, 3);
		atomic_store(&vic->how, kind | mode << 4 | flags << 8 | WAITVAR_OP_EQ << 16);
		if (!atomic_compare_exchange_strong(&vic->state, &st, VIC_WAITING))
			continue;	/* its churner gave up on it */
		timeout = tracked_timeout(t, &flags, &due);
		atomic_store(&vic->t_due, due);
		note_wait(t, mode, flags, vic->lock);
		/* the value never becomes value + 1: only DESTROY ends these */
		if (kind == W_WAIT) {
			ret = waitvar_wait(fd, vic->id, WAITVAR_OP_EQ, vic->value + 1, mode, flags,
					   timeout, &value);
			expect(t, C_WAIT, ret, M(EIDRM) | M(ENOENT) | M(ETIMEDOUT),
			       "victim id %u, mode %s, flags %#x", vic->id, mode_names[mode], flags);
		} else if (kind == W_WAITV) {
			struct waitvar_waitv_entry e[2] = {
				{ .id = vic->id, .op = WAITVAR_OP_EQ, .operand = vic->value + 1 },
				{ .id = vic->id, .op = WAITVAR_OP_ALL, .operand = 1 },
			};

			if (mode == WAITVAR_MODE_IO && vic->lock)
				mode = WAITVAR_MODE_UNINTERRUPTIBLE;
			ret = waitvar_waitv(fd, e, 2, mode, flags, timeout, &value);
			expect(t, C_WAITV, ret < 0 ? ret : 0, M(EIDRM) | M(ENOENT) | M(ETIMEDOUT),
			       "victim id %u, mode %s, flags %#x", vic->id, mode_names[mode], flags);
			if (ret >= 0)
				ret = 0;
		} else {
			int wfd = waitvar_watch(fd, vic->id, WAITVAR_OP_EQ, vic->value + 1);

			expect(t, C_WATCH, wfd < 0 ? wfd : 0, M(OK) | M(ENOENT), "victim id %u",
			       vic->id);
			ret = wfd < 0 ? wfd : 0;
			if (wfd >= 0) {
				struct pollfd pfd = { .fd = wfd, .events = POLLIN };
				int n = poll(&pfd, 1, WAIT_NS / NSEC_PER_MSEC);

				expect(t, C_WATCH_POLL, n < 0 ? -errno : 0, M(OK), "victim id %u",
				       vic->id);
				if (n == 0) {
					ret = -ETIMEDOUT;
				} else if (n > 0) {
					ret = read(wfd, &value, sizeof(value)) < 0 ? -errno : 0;
					expect(t, C_WATCH_READ, ret, M(EIDRM),
					       "WATCH of destroyed victim id %u", vic->id);
					if (!(pfd.revents & (POLLERR | POLLHUP)))
						fail(K_SEQ, "WATCH of destroyed victim id %u polls %#x",
						     vic->id, pfd.revents);
				}
				close(wfd);
			}
		}
		if (ret == -EIDRM)
			t->st.eidrm++;
		atomic_store(&vic->ret, ret);
		atomic_store(&vic->t_ret, mono());
		atomic_store(&vic->state, VIC_DONE);
		while (atomic_load(&vic->state) == VIC_DONE)
			sleep_ns(2 * NSEC_PER_MSEC);
	}
}

/* ---------------------------------------------------------------------- */
/* Named variables: a life from NAMED_CREATE to NAMED_REMOVE, seen from two files. */

static void *named_main(struct thr *t)
{
	unsigned int n = 0;

	while (!stopping()) {
		int a = below(&t->rng, g.nfiles), b = below(&t->rng, g.nfiles), ret;
		int fa = g.fds[a], fb = g.fds[b];
		uint32_t lock = lock_flags[below(&t->rng, 3)], id = 0, id2 = 0, id3 = 0;
		uint32_t count, needed;
		uint32_t mode = chance(&t->rng, 50) ? 0600 : 0644;
		uint64_t value = rnd(&t->rng), got = 0;
		char name[WAITVAR_NAME_MAX];
		bool listed = false;
		char *p;

		snprintf(name, sizeof(name), "/wvstress-%d-%d-%u", (int)getpid(), t->ridx, n++);
		ret = waitvar_named_create(fa, name, value, lock, mode, &id);
		expect(t, C_NAMED_CREATE, ret, M(OK), "%s flags %#x mode %#o", name, lock, mode);
		if (ret) {
			sleep_ns(10 * NSEC_PER_MSEC);
			continue;
		}
		ret = waitvar_named_create(fb, name, 1, 0, 0600, &id3);
		expect(t, C_NAMED_CREATE, ret, M(EEXIST), "%s a second time", name);
		if (!ret)
			waitvar_destroy(fb, id3);
		ret = waitvar_named_open(fb, name, &id2);
		expect(t, C_NAMED_OPEN, ret, M(OK), "%s", name);
		if (!ret) {
			ret = waitvar_get(fb, id2, &got);
			expect(t, C_GET, ret, M(OK), "named %s through NAMED_OPEN", name);
			if (!ret && got != value)
				fail(K_NAMED, "%s created with %llu reads %llu from another file", name,
				     (unsigned long long)value, (unsigned long long)got);
			value = rnd(&t->rng);
			ret = waitvar_set(fa, id, value);
			expect(t, C_SET, ret, M(OK), "named %s", name);
			ret = waitvar_wait(fb, id2, WAITVAR_OP_EQ, value,
					   WAITVAR_MODE_UNINTERRUPTIBLE, WAITVAR_WAIT_TIMEOUT,
					   SHORT_NS, &got);
			expect(t, C_WAIT, ret, M(OK), "named %s for the value just set, from the "
			       "other file", name);
			t->st.mode_waits[WAITVAR_MODE_UNINTERRUPTIBLE]++;
			ret = waitvar_add(fb, id2, 3, WAITVAR_ADD_WAKE, &got);
			expect(t, C_ADD, ret, M(OK), "named %s", name);
			if (!ret && got != value + 3)
				fail(K_NAMED, "ADD 3 to %s holding %llu returned %llu", name,
				     (unsigned long long)value, (unsigned long long)got);
			do_stats(t, fb, id2, "named");
		}
		ret = waitvar_list(fa, t->buf, LIST_BUF, &count, &needed);
		expect(t, C_LIST, ret, M(OK), "with %s", name);
		for (p = t->buf; !ret && count && p < t->buf + LIST_BUF; count--) {
			if (!strcmp(p, name))
				listed = true;
			p += strlen(p) + 1;
		}
		if (!ret && needed <= LIST_BUF && !listed)
			fail(K_NAMED, "LIST (%u bytes needed) does not show %s", needed, name);
		ret = waitvar_named_remove(fa, name);
		expect(t, C_NAMED_REMOVE, ret, M(OK), "%s", name);
		/* the ids still attached only report that it is gone */
		ret = waitvar_wait(fa, id, WAITVAR_OP_GE, 0, WAITVAR_MODE_INTERRUPTIBLE, 0, 0, &got);
		expect(t, C_WAIT, ret, M(EIDRM), "removed %s (its creator's id %u)", name, id);
		if (id2) {
			ret = waitvar_get(fb, id2, &got);
			expect(t, C_GET, ret, M(OK) | M(EIDRM), "removed %s (opened id %u)", name, id2);
		}
		ret = waitvar_named_open(fb, name, &id3);
		expect(t, C_NAMED_OPEN, ret, M(ENOENT), "removed %s", name);
		if (!ret)
			waitvar_destroy(fb, id3);
		ret = waitvar_named_remove(fb, name);
		expect(t, C_NAMED_REMOVE, ret, M(ENOENT), "removed %s", name);
		ret = waitvar_destroy(fa, id);
		expect(t, C_DESTROY, ret, M(OK), "removed %s (creator's id %u)", name, id);
		if (id2) {
			ret = waitvar_destroy(fb, id2);
			expect(t, C_DESTROY, ret, M(OK), "removed %s (opened id %u)", name, id2);
		}
	}
	return NULL;
}

/* ---------------------------------------------------------------------- */
/* Setup, the end, and the report. */

static void *thread_main(void *arg)
{
	struct thr *t = arg;

	t->tid = (pid_t)syscall(SYS_gettid);
	gate_wait();
	switch (t->role) {
	case R_WRITER: writer_main(t); break;
	case R_LATCH: latch_main(t); break;
	case R_CHURN: churn_main(t); break;
	case R_VICTIM: victim_main(t); break;
	case R_NAMED: named_main(t); break;
	case R_ADD: add_main(t); break;
	case R_CAS: cas_main(t); break;
	case R_SET: set_main(t); break;
	case R_MISC: misc_main(t); break;
	default: waiter_main(t); break;
	}
	atomic_store(&t->done, 1);
	return NULL;
}

struct file_job {
	int fdi;
	bool final;
	int ret;
	uint64_t waits, wakes, woken, spurious, timeouts, signals;
	pthread_t th;
};

/* Creates file @fdi's variables (setup), or checks and destroys them (the end). */
static void *file_job_main(void *arg)
{
	struct file_job *j = arg;
	struct thr self = { .role = R_MISC };
	int i, fd = g.fds[j->fdi];

	self.tid = (pid_t)syscall(SYS_gettid);
	for (i = 0; i < g.nv; i++) {
		struct var *v = &g.vars[i];
		struct waitvar_stats st;
		uint64_t value = 0, want;
		int ret;

		if (v->fdi != j->fdi)
			continue;
		/* destroyed already, to end waits that never did */
		if (j->final && atomic_load(&destroying) && (v->cls == V_SEQ || v->cls == V_XSEQ))
			continue;
		if (!j->final) {
			ret = waitvar_create(fd, v->init, v->lock, &v->id);
			expect(&self, C_CREATE, ret, M(OK), "setup of %s variable %d", class_name[v->cls], i);
			if (ret && !j->ret)
				j->ret = ret;
			continue;
		}
		ret = waitvar_get(fd, v->id, &value);
		expect(&self, C_GET, ret, M(OK), "final value of %s variable id %u",
		       class_name[v->cls], v->id);
		switch (v->cls) {
		case V_ADD:
			want = v->init + atomic_load(&v->add_sum);
			if (!ret && value != want)
				fail(K_ADD, "id %u (file %d, %s): %llu, not %llu + the deltas %lld = %llu",
				     v->id, v->fdi, lock_str(v->lock), (unsigned long long)value,
				     (unsigned long long)v->init,
				     (long long)atomic_load(&v->add_sum), (unsigned long long)want);
			break;
		case V_CAS:
			want = v->init + atomic_load(&v->cas_ok);
			if (!ret && value != want)
				fail(K_CAS, "id %u (file %d, %s): %llu, not %llu + %llu exchanges",
				     v->id, v->fdi, lock_str(v->lock), (unsigned long long)value,
				     (unsigned long long)v->init,
				     (unsigned long long)atomic_load(&v->cas_ok));
			break;
		case V_QUIET:
			if (!ret && value != v->init)
				fail(K_SET, "QUIET id %u (file %d, %s), never changed: %llu, not %llu",
				     v->id, v->fdi, lock_str(v->lock), (unsigned long long)value,
				     (unsigned long long)v->init);
			break;
		case V_SET:
			want = atomic_load(&v->last);
			if (!ret && value != want)
				fail(K_SET, "id %u (file %d, %s): %llu, not its writer's last %llu",
				     v->id, v->fdi, lock_str(v->lock), (unsigned long long)value,
				     (unsigned long long)want);
			break;
		default:
			if (!ret && value != FINAL_SEQ)
				fail(K_SEQ, "%s id %u (file %d, %s): %llu, not the final %llu",
				     class_name[v->cls], v->id, v->fdi, lock_str(v->lock),
				     (unsigned long long)value, (unsigned long long)FINAL_SEQ);
			break;
		}
		ret = waitvar_stats(fd, v->id, &st);
		expect(&self, C_STATS, ret, M(OK), "final STATS of id %u", v->id);
		if (!ret) {
			if (st.waiters)
				fail(K_LEFT, "id %u (file %d) still has %u waiters after every thread "
				     "ended", v->id, v->fdi, st.waiters);
			if (st.spurious > st.woken)
				fail(K_LEFT, "STATS of id %u (file %d): %llu spurious wakeups of %llu",
				     v->id, v->fdi, (unsigned long long)st.spurious,
				     (unsigned long long)st.woken);
			j->waits += st.waits;
			j->wakes += st.wakes;
			j->woken += st.woken;
			j->spurious += st.spurious;
			j->timeouts += st.timeouts;
			j->signals += st.signals;
		}
		ret = waitvar_destroy(fd, v->id);
		expect(&self, C_DESTROY, ret, M(OK), "final DESTROY of id %u", v->id);
	}
	return NULL;
}

static bool run_file_jobs(bool final, struct file_job *jobs)
{
	bool ok = true;
	int i;

	for (i = 0; i < g.nfiles; i++) {
		jobs[i] = (struct file_job){ .fdi = i, .final = final };
		if (pthread_create(&jobs[i].th, NULL, file_job_main, &jobs[i])) {
			jobs[i].th = 0;
			file_job_main(&jobs[i]);
		}
	}
	for (i = 0; i < g.nfiles; i++) {
		if (jobs[i].th)
			pthread_join(jobs[i].th, NULL);
		if (jobs[i].ret)
			ok = false;
	}
	return ok;
}

/* debugfs file<N> entries still owned by this process. */
static int own_debugfs_files(void)
{
	char path[300], buf[64], want[32];
	DIR *dir = opendir(DEBUGFS_DIR);
	struct dirent *d;
	int n = 0;

	if (!dir)
		return 0;
	snprintf(want, sizeof(want), "owner %d\n", (int)getpid());
	while ((d = readdir(dir))) {
		ssize_t len;
		int fd;

		if (strncmp(d->d_name, "file", 4))
			continue;
		snprintf(path, sizeof(path), DEBUGFS_DIR "/%s", d->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len > 0) {
			buf[len] = '\0';
			if (!strncmp(buf, want, strlen(want)))
				n++;
		}
	}
	closedir(dir);
	return n;
}

static void usage(const char *prog)
{
	fprintf(stderr, "usage: %s [--seconds S] [--threads T (>= 16)] [--vars V (>= 16)] "
		"[--files F (1-%d)]\n", prog, MAX_FILES);
	exit(2);
}

static int parse_int(const char *s, int min, int max, const char *prog)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (!*s || *end || v < min || v > max)
		usage(prog);
	return (int)v;
}

static int ktap_n;

static void ktap(enum check k, bool skip, const char *skip_why)
{
	unsigned long n = atomic_load(&fails[k]);

	pthread_mutex_lock(&out_lock);
	if (skip)
		printf("ok %d %s # SKIP %s\n", ++ktap_n, check_name[k], skip_why);
	else if (n)
		printf("not ok %d %s # %lu failure%s\n", ++ktap_n, check_name[k], n, n == 1 ? "" : "s");
	else
		printf("ok %d %s\n", ++ktap_n, check_name[k]);
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
}

static int exit_code(void)
{
	int k;

	for (k = 0; k < NCHECK; k++)
		if (atomic_load(&fails[k]))
			return 1;
	return 0;
}

/* Worker threads started and not ended. */
static int threads_left(void)
{
	int i, left = 0;

	for (i = 0; g.thr && i < g.threads; i++)
		if (g.thr[i].started && !atomic_load(&g.thr[i].done))
			left++;
	return left;
}

/*
 * Setup has its own limit, the run S + 30 s from the end of setup: past the
 * one in force, report what is known and leave.  Nothing the threads do is
 * counted from then on; they are told to stop, given a moment, and only then
 * are the parameters restored (a wait that starts after that may see EINVAL:
 * it is not counted), with the output lock held to the end.
 */
static void *watchdog_main(void *arg)
{
	long long end, t_fire;
	int k, phase, left = 0;
	bool restored;

	(void)arg;
	for (;;) {
		pthread_mutex_lock(&wd_lock);
		end = wd_deadline;
		phase = wd_phase;
		pthread_mutex_unlock(&wd_lock);
		if (mono() >= end)
			break;
		sleep_ns(100 * NSEC_PER_MSEC);
	}
	t_fire = mono();
	atomic_store(&gave_up, 1);
	atomic_store(&errs_closed, 1);
	atomic_store(&stop, 1);
	/* (in setup, the threads made are held at the gate: they start no wait) */
	while (phase && (left = threads_left()) && mono() < t_fire + NSEC_PER_SEC)
		sleep_ns(20 * NSEC_PER_MSEC);
	left = threads_left();

	pthread_mutex_lock(&out_lock);
	if (phase == 0)
		printf("# setup did not finish within %.1f s (at: %s; %d of %d threads made): "
		       "giving up\n", (end - g.t_start) / 1e9, setup_step_name[atomic_load(&setup_step)],
		       atomic_load(&threads_made), g.threads);
	else
		printf("# the run did not end within %d s + %lld s after setup: giving up; "
		       "%d threads still running; what they do from now on is not counted\n",
		       g.seconds, END_GRACE_NS / NSEC_PER_SEC, left);
	restored = params_restore(true);
	printf("# module parameters %s\n", restored ? "restored" : "NOT all restored");
	for (k = ktap_n; k < NCHECK; k++)
		printf("not ok %d %s # %s\n", k + 1, check_name[k],
		       phase == 0 ? "setup did not finish in time" : "the run did not end in time");
	fflush(stdout);
	_exit(1);
	return NULL;
}

static void assign_roles(void)
{
	int T = g.threads, used = 0, r;

	g.nrole[R_WRITER] = T / 40 > 1 ? T / 40 : 1;
	g.nrole[R_LATCH] = T / 50 > 1 ? T / 50 : 1;
	g.nrole[R_CHURN] = T / 40 > 1 ? T / 40 : 1;
	g.nrole[R_VICTIM] = g.nrole[R_CHURN];
	g.nrole[R_NAMED] = T / 100 > 1 ? T / 100 : 1;
	g.nrole[R_ADD] = T / 12 > 1 ? T / 12 : 1;
	g.nrole[R_CAS] = T / 12 > 1 ? T / 12 : 1;
	g.nrole[R_SET] = T / 16 > 1 ? T / 16 : 1;
	g.nrole[R_MISC] = T / 16 > 1 ? T / 16 : 1;
	for (r = 0; r < R_WAITER; r++)
		used += g.nrole[r];
	g.nrole[R_WAITER] = T - used;
}

static void assign_vars(void)
{
	static const uint32_t locks[] = { 0, WAITVAR_CREATE_SPINLOCK, WAITVAR_CREATE_MUTEX };
	int nlatch = g.nrole[R_LATCH], i, ntrack, c, f;
	struct rng r = { .s = g.seed ^ 0x5eed };

	ntrack = g.nrole[R_WAITER] / 6;
	if (ntrack < 4)
		ntrack = 4;
	if (ntrack > g.nvars / 4)
		ntrack = g.nvars / 4;
	g.nseq = ntrack;
	g.ntrk = ntrack + nlatch;
	g.nv = g.nvars + 3 * g.nfiles;
	g.vars = calloc(g.nv, sizeof(*g.vars));
	g.trk = calloc(g.ntrk, sizeof(*g.trk));
	for (c = 0; c < NCLASS; c++)
		g.by_class[c] = calloc(g.nv, sizeof(int));
	for (f = 0; f < g.nfiles; f++)
		g.plain_by_fd[f] = calloc(g.nv, sizeof(int));
	for (i = 0; i < g.nv; i++) {
		struct var *v = &g.vars[i];

		v->fdi = i % g.nfiles;
		v->lock = locks[(i / g.nfiles) % 3];
		v->trk = -1;
		if (i >= g.nvars) {
			/* three per file, one of each lock */
			v->cls = V_QUIET;
			v->fdi = (i - g.nvars) / 3;
			v->lock = locks[(i - g.nvars) % 3];
			v->init = rnd(&r) >> 2;
			g.quiet[v->fdi][(i - g.nvars) % 3] = i;
		} else if (i < ntrack) {
			/* a quarter of them XSEQ, plain: exclusive waits need that */
			v->cls = i % 4 == 3 ? V_XSEQ : V_SEQ;
			if (v->cls == V_XSEQ)
				v->lock = 0;
			v->trk = i;
			g.trk[i].kind = v->cls == V_XSEQ ? T_XSEQ : T_SEQ;
			g.trk[i].fdi = v->fdi;
			g.trk[i].lock = v->lock;
		} else {
			v->cls = V_ADD + (i - ntrack) % 3;
			v->init = rnd(&r) >> below(&r, 64);
			g.plain_by_fd[v->fdi][g.nplain_by_fd[v->fdi]++] = i;
		}
		if (v->cls == V_SET) {
			v->owner = g.nby_class[V_SET] % g.nrole[R_SET];
			atomic_store(&v->last, v->init);
		}
		g.by_class[v->cls][g.nby_class[v->cls]++] = i;
	}
	for (i = ntrack; i < g.ntrk; i++) {
		g.trk[i].kind = T_LATCH;
		g.trk[i].closed = 1;
	}
	for (i = 0; i < g.ntrk; i++) {
		int s;

		for (s = 0; s < NSLOT; s++)
			atomic_store(&g.trk[i].slots[s].reported, UINT_MAX);
	}
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seconds", required_argument, NULL, 's' },
		{ "threads", required_argument, NULL, 't' },
		{ "vars", required_argument, NULL, 'v' },
		{ "files", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct tstat sum = {};
	struct file_job *jobs;
	struct waitvar_features feat;
	unsigned long long files, vars, waiters;
	pthread_attr_t attr;
	pthread_t wd, probe;
	struct rlimit rl;
	int opt, i, c, started = 0, stuck = 0;
	bool setup_ok = true, summary_ok, have_probe = false;
	char *sumbuf;
	long long t_end, t_step, setup_limit;

	g.seconds = 20;
	g.threads = 200;
	g.nvars = 2000;
	g.nfiles = 4;
	while ((opt = getopt_long(argc, argv, "s:t:v:f:h", opts, NULL)) != -1) {
		switch (opt) {
		case 's': g.seconds = parse_int(optarg, 1, 86400, argv[0]); break;
		case 't': g.threads = parse_int(optarg, 16, 100000, argv[0]); break;
		case 'v': g.nvars = parse_int(optarg, 16, 10000000, argv[0]); break;
		case 'f': g.nfiles = parse_int(optarg, 1, MAX_FILES, argv[0]); break;
		default: usage(argv[0]);
		}
	}
	if (optind != argc)
		usage(argv[0]);

	g.t_start = mono();
	g.seed = (uint64_t)clock_now(CLOCK_REALTIME) ^ (uint64_t)getpid() << 32;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("KTAP version 1\n1..%d\n", NCHECK);
	diag("waitvar_stress: %d s, %d threads, %d variables, %d files", g.seconds, g.threads,
	     g.nvars, g.nfiles);
	diag("lost-wakeup bound B = %.0f s of time the waiter could run; watched waits time out "
	     "after %.0f s (or never); other waits after at most %lld ms", BOUND_NS / 1e9,
	     WAIT_NS / 1e9, SHORT_NS / NSEC_PER_MSEC);
	setup_limit = SETUP_BASE_NS + g.threads * SETUP_PER_THREAD_NS;
	diag("setup may take up to %.0f s (%.0f s + %.1f s per thread); the run's %d s + %lld s "
	     "count from its end", setup_limit / 1e9, SETUP_BASE_NS / 1e9,
	     SETUP_PER_THREAD_NS / 1e9, g.seconds, END_GRACE_NS / NSEC_PER_SEC);

	if (access("/dev/waitvar", F_OK)) {
		diag("no /dev/waitvar: is the module loaded?");
		for (c = 0; c < NCHECK; c++)
			ktap(c, true, "no /dev/waitvar");
		return 4;
	}

	assign_roles();
	assign_vars();
	for (i = 0; i < NROLE; i++)
		diag("%4d %s", g.nrole[i], role_name[i]);
	diag("%d tracked variables (SEQ and XSEQ) and %d latches; %d ADD, %d CMPXCHG, %d SET",
	     g.nseq, g.ntrk - g.nseq, g.nby_class[V_ADD], g.nby_class[V_CAS], g.nby_class[V_SET]);

	/* What the run holds at most, with room to spare. */
	params[P_USER_VARS].need = g.nvars + 2 * g.threads + 64;
	params[P_PER_FILE].need = (g.nvars + g.nfiles - 1) / g.nfiles + g.threads + 64;
	params[P_USER_WAITERS].need = 6 * g.threads + 64;
	params[P_USER_NAMES].need = 2 * g.nrole[R_NAMED] + 16;
	params[P_NAMED].need = 2 * g.nrole[R_NAMED] + 16;
	params[P_UNINT_MS].need = WAIT_NS / NSEC_PER_MSEC + 2000;
	signal(SIGINT, on_term);
	signal(SIGTERM, on_term);
	signal(SIGHUP, on_term);
	signal(SIGSEGV, on_term);
	signal(SIGBUS, on_term);
	signal(SIGABRT, on_term);
	signal(SIGFPE, on_term);
	signal(SIGILL, on_term);
	watchdog_arm(0, g.t_start + setup_limit);
	if (pthread_create(&wd, NULL, watchdog_main, NULL) == 0)
		pthread_detach(wd);
	atomic_store(&setup_step, S_PARAMS);
	if (!params_raise()) {
		fail(K_SETUP, "could not raise the module parameters the run needs");
		setup_ok = false;
	}

	/* One descriptor per thread at most, and the files. */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < (rlim_t)(2 * g.threads + 256)) {
		rlim_t old = rl.rlim_cur;

		rl.rlim_cur = 2 * g.threads + 256;
		if (rl.rlim_max < rl.rlim_cur)
			rl.rlim_max = rl.rlim_cur;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			diag("cannot raise RLIMIT_NOFILE from %llu: %s", (unsigned long long)old,
			     strerror(errno));
		else
			diag("raised RLIMIT_NOFILE from %llu to %llu", (unsigned long long)old,
			     (unsigned long long)rl.rlim_cur);
	}

	atomic_store(&setup_step, S_FILES);
	for (i = 0; i < g.nfiles; i++) {
		g.fds[i] = waitvar_open();
		if (g.fds[i] < 0) {
			fail(K_SETUP, "open /dev/waitvar: %s", strerror(-g.fds[i]));
			setup_ok = false;
			g.nfiles = i;
			break;
		}
	}
	if (g.nfiles && !waitvar_features(g.fds[0], &feat)) {
		diag("FEATURES: commands %#llx ops %#x modes %#x semantics %#x waitv_max %u",
		     (unsigned long long)feat.commands, feat.ops, feat.modes, feat.semantics,
		     feat.waitv_max);
		diag("FEATURES limits: max_vars_per_file %u max_user_vars %u max_user_waiters %u "
		     "max_user_names %u max_named_vars %u max_uninterruptible_ms %u",
		     feat.max_vars_per_file, feat.max_user_vars, feat.max_user_waiters,
		     feat.max_user_names, feat.max_named_vars, feat.max_uninterruptible_ms);
		g.max_unint_ms = feat.max_uninterruptible_ms;
		if (feat.max_user_vars < params[P_USER_VARS].need ||
		    feat.max_vars_per_file < params[P_PER_FILE].need ||
		    feat.max_user_waiters < params[P_USER_WAITERS].need) {
			fail(K_SETUP, "FEATURES reports limits below what was just set");
			setup_ok = false;
		}
		if ((feat.commands & 0x3ffff) != 0x3ffff) {
			fail(K_SETUP, "the driver lacks some of commands 0x00-0x11");
			setup_ok = false;
		}
	} else {
		fail(K_SETUP, "FEATURES failed");
		setup_ok = false;
	}
	g.unint_tracked = g.max_unint_ms >= WAIT_NS / NSEC_PER_MSEC + 1000;
	if (!g.unint_tracked)
		diag("max_uninterruptible_ms %u is below the %.0f s watched waits take: watched "
		     "waits are interruptible and killable only", g.max_unint_ms, WAIT_NS / 1e9);

	jobs = calloc(MAX_FILES, sizeof(*jobs));
	atomic_store(&setup_step, S_VARS);
	t_step = mono();
	if (setup_ok) {
		if (!run_file_jobs(false, jobs)) {
			fail(K_SETUP, "could not create the %d variables", g.nv);
			setup_ok = false;
		}
		diag("setup: created %d variables on %d files in %.1f s", g.nv, g.nfiles,
		     (mono() - t_step) / 1e9);
	}
	for (i = 0; i < g.nseq; i++)
		atomic_store(&g.trk[i].id, g.vars[i].id);

	/* The threads, on small stacks. */
	g.thr = calloc(g.threads, sizeof(*g.thr));
	g.vics = calloc(g.nrole[R_CHURN], sizeof(*g.vics));
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, THREAD_STACK);
	if (setup_ok) {
		int r, k, idx = 0;
		long long t_progress;

		atomic_store(&setup_step, S_OWN_FILES);
		for (r = 0; r < NROLE; r++) {
			for (k = 0; k < g.nrole[r]; k++, idx++) {
				struct thr *t = &g.thr[idx];

				t->idx = idx;
				t->role = r;
				t->ridx = k;
				t->rng.s = g.seed + 0x9e3779b97f4a7c15ULL * (idx + 1);
				if (!t->rng.s)
					t->rng.s = 1;
				if (r == R_CHURN || r == R_VICTIM)
					t->vic = &g.vics[k];
				t->own_fd = -1;
				if (r == R_CHURN && (t->own_fd = waitvar_open()) < 0) {
					fail(K_SETUP, "churner %d: open /dev/waitvar: %s", k,
					     strerror(-t->own_fd));
					setup_ok = false;
				}
				if (r == R_LATCH)
					t->latch = g.nseq + k;
				if (r == R_NAMED || r == R_MISC)
					t->buf = calloc(1, LIST_BUF);
			}
		}
		/* Made held at the start gate: none runs while the others are made. */
		atomic_store(&setup_step, S_THREADS);
		t_step = t_progress = mono();
		for (i = 0; setup_ok && i < g.threads; i++) {
			int err = pthread_create(&g.thr[i].th, &attr, thread_main, &g.thr[i]);

			if (err) {
				fail(K_SETUP, "thread %d of %d (%s): %s", i, g.threads,
				     role_name[g.thr[i].role], strerror(err));
				setup_ok = false;
				atomic_store(&stop, 1);
				break;
			}
			g.thr[i].started = true;
			started++;
			atomic_store(&threads_made, started);
			if (mono() - t_progress >= PROGRESS_NS) {
				t_progress = mono();
				diag("setup: %d of %d threads started in %.1f s", started, g.threads,
				     (t_progress - t_step) / 1e9);
			}
		}
		diag("setup: started %d threads in %.1f s (%d of them at the start gate so far)",
		     started, (mono() - t_step) / 1e9, atomic_load(&threads_at_gate));
	}
	if (started && pthread_create(&probe, NULL, probe_main, NULL) == 0)
		have_probe = true;
	else if (started)
		diag("no scheduling-delay probe: late returns are judged by their raw latency");

	/* The run's time starts when the gate opens (or setup ends without threads). */
	atomic_store(&setup_step, S_GATE);
	g.t_run = mono();
	watchdog_arm(1, g.t_run + g.seconds * NSEC_PER_SEC + END_GRACE_NS - 2 * NSEC_PER_SEC);
	gate_open();
	diag("setup took %.1f s (limit %.0f s, not counted in the run's %d s + %lld s); "
	     "%d threads running", (g.t_run - g.t_start) / 1e9, setup_limit / 1e9, g.seconds,
	     END_GRACE_NS / NSEC_PER_SEC, started);
	ktap(K_SETUP, false, NULL);

	/* The run. */
	t_end = g.t_run + g.seconds * NSEC_PER_SEC;
	while (setup_ok && mono() < t_end)
		sleep_ns(100 * NSEC_PER_MSEC);
	atomic_store(&stop, 1);
	g.t_stop = mono();
	diag("stopping after %.1f s of the run", (g.t_stop - g.t_run) / 1e9);

	/*
	 * Every thread ends: the writers' final stores end the watched waits.  A
	 * writer waits up to BOUND + 2 s for its waiters twice.
	 */
	t_end = g.t_stop + 2 * (BOUND_NS + 2 * NSEC_PER_SEC) + NSEC_PER_SEC / 2;
	for (;;) {
		int left = threads_left();

		if (!left || mono() >= t_end) {
			stuck = left;
			break;
		}
		sleep_ns(20 * NSEC_PER_MSEC);
	}
	if (stuck) {
		fail(K_TIME, "%d threads still running %.0f s after the stop; destroying the "
		     "variables under them", stuck, (mono() - g.t_stop) / 1e9);
		for (i = 0; i < g.threads; i++)
			if (g.thr[i].started && !atomic_load(&g.thr[i].done))
				diag("still running: thread %d (%s #%d)", g.thr[i].tid,
				     role_name[g.thr[i].role], g.thr[i].ridx);
		atomic_store(&destroying, 1);
		for (i = 0; i < g.nseq; i++)
			waitvar_destroy(g.fds[g.trk[i].fdi], atomic_load(&g.trk[i].id));
		t_end = mono() + 3 * NSEC_PER_SEC;
		while (mono() < t_end) {
			int left = 0;

			for (i = 0; i < g.threads; i++)
				if (g.thr[i].started && !atomic_load(&g.thr[i].done))
					left++;
			if (!left)
				break;
			sleep_ns(20 * NSEC_PER_MSEC);
		}
	}
	for (i = 0; i < g.threads; i++) {
		struct thr *t = &g.thr[i];

		if (!t->started || !atomic_load(&t->done))
			continue;
		pthread_join(t->th, NULL);
		for (c = 0; c < NCMD; c++) {
			sum.calls[c] += t->st.calls[c];
			sum.errs[c] += t->st.errs[c];
		}
		for (c = 0; c < WAITVAR_MODE_COUNT; c++)
			sum.mode_waits[c] += t->st.mode_waits[c];
		for (c = 0; c < 4; c++)
			sum.tkind_waits[c] += t->st.tkind_waits[c];
		for (c = 0; c < 3; c++)
			sum.lock_waits[c] += t->st.lock_waits[c];
		sum.excl_waits += t->st.excl_waits;
		sum.filter_wakes += t->st.filter_wakes;
		sum.tracked_waits += t->st.tracked_waits;
		sum.tracked_ok += t->st.tracked_ok;
		sum.tracked_timeouts += t->st.tracked_timeouts;
		sum.short_waits += t->st.short_waits;
		sum.short_ok += t->st.short_ok;
		sum.short_timeouts += t->st.short_timeouts;
		sum.eidrm += t->st.eidrm;
		sum.wakes += t->st.wakes;
		sum.woken += t->st.woken;
		sum.lat_n += t->st.lat_n;
		sum.lat_sum += t->st.lat_sum;
		sum.late_excused += t->st.late_excused;
		if (t->st.lat_max > sum.lat_max)
			sum.lat_max = t->st.lat_max;
		if (t->st.net_max > sum.net_max)
			sum.net_max = t->st.net_max;
		if (t->st.asleep_max > sum.asleep_max)
			sum.asleep_max = t->st.asleep_max;
	}
	if (have_probe) {
		atomic_store(&probe_stop, 1);
		pthread_join(probe, NULL);
	}

	/* Final values, STATS, DESTROY: one thread per file. */
	if (setup_ok)
		run_file_jobs(true, jobs);
	{
		unsigned long long w = 0, k = 0, n = 0, sp = 0, to = 0, sg = 0;

		for (i = 0; i < g.nfiles; i++) {
			w += jobs[i].waits;
			k += jobs[i].wakes;
			n += jobs[i].woken;
			sp += jobs[i].spurious;
			to += jobs[i].timeouts;
			sg += jobs[i].signals;
		}
		diag("STATS of the long-lived variables: waits %llu wakes %llu woken %llu "
		     "spurious %llu timeouts %llu signals %llu", w, k, n, sp, to, sg);
	}
	ktap(K_ADD, !setup_ok, "setup failed");
	ktap(K_CAS, !setup_ok, "setup failed");
	ktap(K_SET, !setup_ok, "setup failed");
	ktap(K_SEQ, !setup_ok, "setup failed");
	ktap(K_NAMED, !setup_ok, "setup failed");

	diag("watched waits %llu: returned %llu, timed out %llu; longest return after the "
	     "condition became true %.3f s, mean %.3f s over %llu (bound %.0f s)",
	     (unsigned long long)sum.tracked_waits, (unsigned long long)sum.tracked_ok,
	     (unsigned long long)sum.tracked_timeouts, sum.lat_max / 1e9,
	     sum.lat_n ? (double)sum.lat_sum / sum.lat_n / 1e9 : 0.0,
	     (unsigned long long)sum.lat_n, BOUND_NS / 1e9);
	diag("latency, to tune B: longest return net of the probe's wake-to-run delay %.3f s; "
	     "longest wake-to-run delay the probe saw %.3f s; %llu returns past B excused by it; "
	     "longest sleep with the condition true before a timeout %.3f s; %lu checks found a "
	     "waiter past B runnable (woken, waiting for a CPU)", sum.net_max / 1e9,
	     atomic_load(&probe_max_all) / 1e9, (unsigned long long)sum.late_excused,
	     sum.asleep_max / 1e9, atomic_load(&late_runnable));
	ktap(K_LOST, !setup_ok, "setup failed");
	ktap(K_ERRNO, !setup_ok, "setup failed");

	diag("short waits %llu: returned %llu, timed out %llu; EIDRM %llu; wakes issued %llu, "
	     "waiters WAKE_NR reported woken %llu", (unsigned long long)sum.short_waits,
	     (unsigned long long)sum.short_ok, (unsigned long long)sum.short_timeouts,
	     (unsigned long long)sum.eidrm, (unsigned long long)sum.wakes,
	     (unsigned long long)sum.woken);
	diag("waits by mode: interruptible %llu killable %llu io %llu uninterruptible %llu; "
	     "exclusive %llu", (unsigned long long)sum.mode_waits[0],
	     (unsigned long long)sum.mode_waits[1], (unsigned long long)sum.mode_waits[2],
	     (unsigned long long)sum.mode_waits[3], (unsigned long long)sum.excl_waits);
	diag("waits by timeout: none %llu relative %llu monotonic deadline %llu realtime "
	     "deadline %llu; by lock: plain %llu spinlock %llu mutex %llu; filtered wakes %llu",
	     (unsigned long long)sum.tkind_waits[0], (unsigned long long)sum.tkind_waits[1],
	     (unsigned long long)sum.tkind_waits[2], (unsigned long long)sum.tkind_waits[3],
	     (unsigned long long)sum.lock_waits[0], (unsigned long long)sum.lock_waits[1],
	     (unsigned long long)sum.lock_waits[2], (unsigned long long)sum.filter_wakes);
	for (c = 0; c < NCMD; c++) {
		diag("%-13s %10llu calls, %llu failed", cmd_name[c],
		     (unsigned long long)sum.calls[c], (unsigned long long)sum.errs[c]);
		if (setup_ok && !sum.calls[c])
			fail(K_RAN, "%s never ran", cmd_name[c]);
	}
	for (c = 0; c < WAITVAR_MODE_COUNT; c++)
		if (setup_ok && !sum.mode_waits[c])
			fail(K_RAN, "no wait in mode %s", mode_names[c]);
	for (c = 0; c < 4; c++)
		if (setup_ok && !sum.tkind_waits[c])
			fail(K_RAN, "no wait with timeout kind %d", c);
	if (setup_ok && (!sum.excl_waits || !sum.filter_wakes || !sum.lock_waits[1] ||
			 !sum.lock_waits[2]))
		fail(K_RAN, "missing exclusive waits, filtered wakes or waits on locked variables");
	ktap(K_RAN, !setup_ok, "setup failed");

	/* Nothing left: every variable destroyed, then every file closed. */
	sumbuf = malloc(1 << 16);
	summary_ok = read_summary(&files, &vars, &waiters, sumbuf, 1 << 16);
	if (summary_ok) {
		diag("debugfs summary with every variable destroyed: files %llu variables %llu "
		     "waiters %llu", files, vars, waiters);
		if (vars || waiters)
			fail(K_LEFT, "debugfs summary shows variables %llu waiters %llu after every "
			     "variable was destroyed", vars, waiters);
	}
	for (i = 0; i < g.nfiles; i++)
		close(g.fds[i]);
	if (summary_ok && read_summary(&files, &vars, &waiters, sumbuf, 1 << 16)) {
		char prefix[48];

		diag("debugfs summary with the files closed: files %llu variables %llu waiters %llu",
		     files, vars, waiters);
		if (vars || waiters)
			fail(K_LEFT, "debugfs summary shows variables %llu waiters %llu after the "
			     "files were closed", vars, waiters);
		snprintf(prefix, sizeof(prefix), "/wvstress-%d-", (int)getpid());
		if (strstr(sumbuf, prefix))
			fail(K_LEFT, "a name %s... is still listed in the summary", prefix);
		if (own_debugfs_files())
			fail(K_LEFT, "%d debugfs file<N> entries of this process remain",
			     own_debugfs_files());
	}
	ktap(K_LEFT, !summary_ok, "no " SUMMARY " (debugfs not mounted?)");

	/* A thread still running may see the restored limits: not counted. */
	if (threads_left()) {
		diag("%d threads still running: their results are no longer checked",
		     threads_left());
		atomic_store(&errs_closed, 1);
	}
	if (!params_restore(false))
		fail(K_RESTORED, "a module parameter could not be restored");
	ktap(K_RESTORED, false, NULL);

	diag("the run ended %.1f s after setup (limit %d s); setup %.1f s, %.1f s in all",
	     (mono() - g.t_run) / 1e9, g.seconds + (int)(END_GRACE_NS / NSEC_PER_SEC),
	     (g.t_run - g.t_start) / 1e9, (mono() - g.t_start) / 1e9);
	if (mono() - g.t_run > g.seconds * NSEC_PER_SEC + END_GRACE_NS)
		fail(K_TIME, "the run took longer than S + 30 s after setup");
	ktap(K_TIME, false, NULL);
	return exit_code();
}
