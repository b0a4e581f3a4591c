// SPDX-License-Identifier: GPL-2.0
/*
 * waitvar-bench: the cost of the kernel's hashed var waits, as /dev/waitvar
 * exposes them, next to private futexes measured in the same run.
 *
 * Figures (--figures picks some; all by default):
 *   roundtrip  two threads hand a value back and forth: WAIT/SET,
 *              FUTEX_WAIT/FUTEX_WAKE, a pthread condvar; on one CPU, on two,
 *              and unpinned
 *   wakeall    N waiters on one variable, time from the wake until the last
 *              has returned; and exclusive wake-one throughput
 *   collide    wake latency of one waiter while K others sleep on variables
 *              in the same hashed bucket (futex: on other futex words)
 *   filter     M waiters on different conditions of one variable: a plain
 *              wake against WAKE_NR with WAITVAR_WAKE_FILTER
 *   scaling    P ping-pong pairs, each on its own variable and CPU (pair j
 *              on the j-th allowed CPU, modulo their number), while K idle
 *              waiters sleep on K other variables: round trips per second
 *
 * Every measurement is repeated (--reps, default 7) and reported as the
 * median with its samples: one line each on stdout, and a JSON document
 * (--json) that harness/bench-report.py turns into tables and plots.
 * Limits the figures need (module parameters, threads-max) are raised for
 * the run, said so on stdout, and restored at exit.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "libwaitvar.h"

#define MAX_SAMPLES	64
#define MAX_PAIRS	8

static int wv_fd = -1;
static int reps = 7;
static FILE *json;
static bool json_first = true;
static unsigned int table_size;

static void restore_limits(void);

/* Puts the raised limits back and ends the process, from any thread. */
static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("waitvar-bench: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	restore_limits();
	fflush(stdout);
	_exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* ------------------------------------------------------------ limits */

/* A limit raised for this run, put back at exit. */
struct raised {
	char path[128];
	char old[32];
};

static struct raised raised[8];
static atomic_int nr_raised;

/* With open() and write() only: it also runs from a signal handler. */
static void restore_limits(void)
{
	int n;

	while ((n = atomic_fetch_sub(&nr_raised, 1)) > 0) {
		struct raised *r = &raised[n - 1];
		int fd = open(r->path, O_WRONLY);
		ssize_t len = (ssize_t)strlen(r->old);

		if (fd < 0 || write(fd, r->old, len) != len) {
			static const char msg[] = "waitvar-bench: could not restore a raised limit\n";

			if (write(2, msg, sizeof(msg) - 1) < 0)
				break;
		}
		if (fd >= 0)
			close(fd);
	}
	atomic_store(&nr_raised, 0);
}

static void restore_and_reraise(int sig)
{
	restore_limits();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void at_exit_restore(void)
{
	restore_limits();
}

/* Raises the number in @path to at least @want; fails the run if it cannot. */
static void raise_limit(const char *path, unsigned long want)
{
	struct raised *r;
	unsigned long cur;
	FILE *f = fopen(path, "r");

	if (!f || fscanf(f, "%lu", &cur) != 1)
		die("cannot read %s: %s", path, strerror(errno));
	fclose(f);
	if (cur >= want)
		return;
	if (atomic_load(&nr_raised) == (int)(sizeof(raised) / sizeof(raised[0])))
		die("too many limits raised");
	r = &raised[atomic_load(&nr_raised)];
	snprintf(r->path, sizeof(r->path), "%s", path);
	snprintf(r->old, sizeof(r->old), "%lu", cur);
	f = fopen(path, "w");
	if (!f || fprintf(f, "%lu", want) < 0 || fclose(f))
		die("cannot raise %s from %lu to %lu (root needed): %s", path, cur, want,
		    strerror(errno));
	atomic_fetch_add(&nr_raised, 1);
	printf("# raised %s from %lu to %lu for this run\n", path, cur, want);
}

#define PARAM(name) "/sys/module/waitvar/parameters/" name

/* Room for @vars variables and @waiters waiters of this file and user. */
static void need(unsigned long vars, unsigned long waiters, unsigned long threads)
{
	raise_limit(PARAM("max_vars_per_file"), vars + 64);
	raise_limit(PARAM("max_user_vars"), vars + 64);
	raise_limit(PARAM("max_user_waiters"), waiters + 64);
	raise_limit("/proc/sys/kernel/threads-max", threads + 1024);
	raise_limit("/proc/sys/kernel/pid_max", threads + 1024);
	/* A thread's stack is a mapping and its guard page another. */
	raise_limit("/proc/sys/vm/max_map_count", 3 * threads + 65536);
}

/* ------------------------------------------------------------ statistics */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t median(const uint64_t *v, int n)
{
	uint64_t s[MAX_SAMPLES];

	memcpy(s, v, sizeof(*v) * n);
	qsort(s, n, sizeof(*s), cmp_u64);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/*
 * One record: a figure, the implementation, its parameters as a JSON
 * fragment, a unit, the samples.  Printed as one line, kept in the JSON.
 */
static uint64_t record(const char *figure, const char *impl, const char *unit,
		       const uint64_t *samples, int n, const char *params_fmt, ...)
{
	char params[256];
	uint64_t med = median(samples, n);
	va_list ap;
	int i;

	va_start(ap, params_fmt);
	vsnprintf(params, sizeof(params), params_fmt, ap);
	va_end(ap);
	printf("%-10s %-8s %-40s median %10llu %s\n", figure, impl, params,
	       (unsigned long long)med, unit);
	fflush(stdout);
	if (!json)
		return med;
	fprintf(json, "%s\n    {\"figure\": \"%s\", \"impl\": \"%s\", \"params\": {%s}, "
		"\"unit\": \"%s\", \"median\": %llu, \"samples\": [",
		json_first ? "" : ",", figure, impl, params, unit, (unsigned long long)med);
	for (i = 0; i < n; i++)
		fprintf(json, "%s%llu", i ? ", " : "", (unsigned long long)samples[i]);
	fputs("]}", json);
	json_first = false;
	return med;
}

/* ------------------------------------------------------------ primitives */

/*
 * A cell is one waitable word: a /dev/waitvar variable or a private futex.
 * Waiters wait for it to reach a value (>= for the ping-pong counters, ==
 * elsewhere); wakers store and wake.
 */
enum impl { WAITVAR, FUTEX, CONDVAR };

static const char *const impl_names[] = { "waitvar", "futex", "condvar" };

/* --impl: the implementations measured (all by default). */
static bool impl_on[] = { true, true, true };

/* Runs the statement after it for each of the @n @impls that is on. */
#define for_each_on(i, impls, n) \
	for ((i) = 0; (i) < (n); (i)++) \
		if (impl_on[(impls)[i]])

/*
 * The same, starting from implementation @r mod @n: sample by sample the
 * one measured first changes, so that what the previous sample left (a
 * CPU still busy, a cache) does not always fall on the same one.
 */
#define for_each_on_turn(j, i, impls, n, r) \
	for ((j) = 0; (j) < (n); (j)++) \
		if (((i) = ((j) + (unsigned int)(r)) % (n)), impl_on[(impls)[i]])

struct cell {
	enum impl impl;
	uint32_t id;
	_Atomic uint32_t word;
	pthread_mutex_t lock;
	pthread_cond_t cond;
};

static long futex(_Atomic uint32_t *uaddr, int op, uint32_t val)
{
	return syscall(SYS_futex, uaddr, op | FUTEX_PRIVATE_FLAG, val, NULL, NULL, 0);
}

static void cell_init(struct cell *c, enum impl impl)
{
	int ret;

	memset(c, 0, sizeof(*c));
	c->impl = impl;
	atomic_init(&c->word, 0);
	if (impl == WAITVAR) {
		ret = waitvar_create(wv_fd, 0, 0, &c->id);
		if (ret)
			die("CREATE: %s", strerror(-ret));
	} else if (impl == CONDVAR) {
		pthread_mutex_init(&c->lock, NULL);
		pthread_cond_init(&c->cond, NULL);
	}
}

static void cell_fini(struct cell *c)
{
	if (c->impl == WAITVAR)
		waitvar_destroy(wv_fd, c->id);
	else if (c->impl == CONDVAR) {
		pthread_mutex_destroy(&c->lock);
		pthread_cond_destroy(&c->cond);
	}
}

/* FUTEX_WAIT that dies on anything but a wake, a changed word or a signal. */
static void futex_wait(_Atomic uint32_t *word, uint32_t cur)
{
	if (futex(word, FUTEX_WAIT, cur) && errno != EAGAIN && errno != EINTR)
		die("FUTEX_WAIT: %s", strerror(errno));
}

/*
 * Sleeps until the cell's value @op @val; -EIDRM once the variable is gone.
 * @seen (may be NULL) gets the value for which the condition held.
 */
static int cell_wait(struct cell *c, uint32_t op, uint32_t val, uint32_t *seen)
{
	uint64_t value = 0;
	uint32_t cur;
	int ret;

	switch (c->impl) {
	case WAITVAR:
		do
			ret = waitvar_wait(wv_fd, c->id, op, val, WAITVAR_MODE_INTERRUPTIBLE,
					   0, 0, &value);
		while (ret == -EINTR);
		if (ret && ret != -EIDRM)
			die("WAIT: %s", strerror(-ret));
		if (seen)
			*seen = (uint32_t)value;
		return ret;
	case FUTEX:
		for (;;) {
			cur = atomic_load(&c->word);
			if (op == WAITVAR_OP_GE ? cur >= val : cur == val)
				break;
			futex_wait(&c->word, cur);
		}
		break;
	case CONDVAR:
		pthread_mutex_lock(&c->lock);
		for (;;) {
			cur = atomic_load_explicit(&c->word, memory_order_relaxed);
			if (op == WAITVAR_OP_GE ? cur >= val : cur == val)
				break;
			pthread_cond_wait(&c->cond, &c->lock);
		}
		pthread_mutex_unlock(&c->lock);
		break;
	default:
		return 0;
	}
	if (seen)
		*seen = cur;
	return 0;
}

/* Stores @val and wakes: SET; a store and FUTEX_WAKE(@nr); a broadcast. */
static void cell_set(struct cell *c, uint32_t val, int nr)
{
	int ret;

	switch (c->impl) {
	case WAITVAR:
		ret = waitvar_set(wv_fd, c->id, val);
		if (ret)
			die("SET: %s", strerror(-ret));
		break;
	case FUTEX:
		atomic_store(&c->word, val);
		futex(&c->word, FUTEX_WAKE, nr);
		break;
	case CONDVAR:
		pthread_mutex_lock(&c->lock);
		atomic_store_explicit(&c->word, val, memory_order_relaxed);
		if (nr == 1)
			pthread_cond_signal(&c->cond);
		else
			pthread_cond_broadcast(&c->cond);
		pthread_mutex_unlock(&c->lock);
		break;
	}
}

/* Stores @val and wakes nobody. */
static void cell_store_quiet(struct cell *c, uint32_t val)
{
	uint64_t old;
	int ret;

	if (c->impl != WAITVAR) {
		atomic_store(&c->word, val);
		return;
	}
	ret = waitvar_get(wv_fd, c->id, &old);
	if (!ret)
		ret = waitvar_add(wv_fd, c->id, (int64_t)(val - old), 0, NULL);
	if (ret)
		die("GET/ADD: %s", strerror(-ret));
}

/* One wake of one exclusive waiter (WAKE; FUTEX_WAKE(1)). */
static void cell_wake_one(struct cell *c)
{
	int ret;

	if (c->impl == FUTEX) {
		futex(&c->word, FUTEX_WAKE, 1);
		return;
	}
	ret = waitvar_wake(wv_fd, c->id);
	if (ret)
		die("WAKE: %s", strerror(-ret));
}

/* ------------------------------------------------------------ threads */

static void spawn(pthread_t *th, void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	size_t stack = 64 * 1024;
	long min = sysconf(_SC_THREAD_STACK_MIN);
	int ret;

	if (min > 0 && (size_t)min > stack)
		stack = (size_t)min;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, stack);
	ret = pthread_create(th, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	if (ret)
		die("pthread_create: %s (raise the guest's memory?)", strerror(ret));
}

/* The CPUs this process may run on, in order (sched_getaffinity()). */
static int cpu_list[CPU_SETSIZE];
static int nr_cpus;

static void read_cpus(void)
{
	cpu_set_t set;
	int c;

	if (sched_getaffinity(0, sizeof(set), &set))
		die("sched_getaffinity: %s", strerror(errno));
	for (c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			cpu_list[nr_cpus++] = c;
}

static void pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity: %s", strerror(errno));
}

/* Whether task @tid of this process sleeps interruptibly now. */
static bool asleep(pid_t tid)
{
	char path[64], buf[256], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	f = fopen(path, "r");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] == 'S';
}

/* Waits until every task of @tids[@n] sleeps (they were told to wait). */
static void wait_asleep(_Atomic pid_t *tids, int n)
{
	uint64_t deadline = now_ns() + 60ULL * 1000000000ULL;
	int i = 0;

	while (i < n) {
		pid_t tid = atomic_load(&tids[i]);

		if (tid && asleep(tid)) {
			i++;
			continue;
		}
		if (now_ns() > deadline)
			die("task %d did not go to sleep within 60 s", tid);
		usleep(200);
	}
}

/*
 * Parked waiters: one thread per cell, asleep until the cell reaches 1.
 * They are the "other" entries a wake has to pass over.
 */
struct park {
	struct cell *cells;
	int nr_cells;
	pthread_t *threads;
	_Atomic pid_t *tids;
	int n;
};

struct parked_arg {
	struct park *park;
	int i;
};

static void *parked_fn(void *p)
{
	struct parked_arg *a = p;
	struct park *pk = a->park;
	int i = a->i;

	free(a);
	atomic_store(&pk->tids[i], gettid_());
	cell_wait(&pk->cells[i % pk->nr_cells], WAITVAR_OP_EQ, 1, NULL);
	return NULL;
}

/* Adds waiters until @n sleep on the park's cells, round-robin. */
static void park_to(struct park *pk, int n)
{
	int i;

	pk->threads = realloc(pk->threads, sizeof(*pk->threads) * n);
	pk->tids = realloc(pk->tids, sizeof(*pk->tids) * n);
	if (!pk->threads || !pk->tids)
		die("out of memory");
	for (i = pk->n; i < n; i++) {
		struct parked_arg *a = malloc(sizeof(*a));

		if (!a)
			die("out of memory");
		*a = (struct parked_arg){ pk, i };
		atomic_init(&pk->tids[i], 0);
		spawn(&pk->threads[i], parked_fn, a);
	}
	wait_asleep(pk->tids, n);
	pk->n = n;
}

static void unpark(struct park *pk)
{
	int i;

	for (i = 0; i < pk->nr_cells; i++)
		cell_set(&pk->cells[i], 1, INT_MAX);
	for (i = 0; i < pk->n; i++)
		pthread_join(pk->threads[i], NULL);
	free(pk->threads);
	free(pk->tids);
	pk->threads = NULL;
	pk->tids = NULL;
	pk->n = 0;
}

/* ------------------------------------------------------------ ping-pong */

/*
 * A pair hands a counter back and forth: the pinger makes it odd and waits
 * for even, the ponger the other way round.  Each lap is one round trip:
 * two wakes and two sleeps.
 */
struct pair {
	struct cell cell;
	int cpu_ping, cpu_pong;		/* -1: not pinned */
	long laps;			/* 0: until *stop */
	_Atomic int *stop;
	_Atomic int *go;
	_Atomic long done;
	uint64_t t0, t1;
	pthread_t pinger, ponger;
};

#define STOP_VALUE	0xffffffffU

static void wait_go(_Atomic int *go)
{
	while (!atomic_load(go))
		sched_yield();
}

static void *ponger_fn(void *p)
{
	struct pair *pr = p;
	uint32_t v;

	if (pr->cpu_pong >= 0)
		pin_to(pr->cpu_pong);
	for (v = 1;; v += 2) {
		uint32_t seen;

		cell_wait(&pr->cell, WAITVAR_OP_GE, v, &seen);
		if (seen == STOP_VALUE)
			break;
		cell_set(&pr->cell, v + 1, 1);
	}
	return NULL;
}

static void *pinger_fn(void *p)
{
	struct pair *pr = p;
	uint32_t v = 1;
	long n = 0;

	if (pr->cpu_ping >= 0)
		pin_to(pr->cpu_ping);
	wait_go(pr->go);
	pr->t0 = now_ns();
	while (pr->laps ? n < pr->laps : !atomic_load_explicit(pr->stop, memory_order_relaxed)) {
		cell_set(&pr->cell, v, 1);
		cell_wait(&pr->cell, WAITVAR_OP_GE, v + 1, NULL);
		v += 2;
		n++;
	}
	pr->t1 = now_ns();
	atomic_store(&pr->done, n);
	/* The ponger waits for v, odd: this value satisfies it and ends it. */
	cell_set(&pr->cell, STOP_VALUE, 1);
	return NULL;
}

static void pair_start(struct pair *pr, enum impl impl, int cpu_ping, int cpu_pong, long laps,
		       _Atomic int *go,
		       _Atomic int *stop)
{
	cell_init(&pr->cell, impl);
	pr->cpu_ping = cpu_ping;
	pr->cpu_pong = cpu_pong;
	pr->laps = laps;
	pr->go = go;
	pr->stop = stop;
	atomic_init(&pr->done, 0);
	spawn(&pr->ponger, ponger_fn, pr);
	spawn(&pr->pinger, pinger_fn, pr);
}

static long pair_join(struct pair *pr)
{
	pthread_join(pr->pinger, NULL);
	pthread_join(pr->ponger, NULL);
	cell_fini(&pr->cell);
	return atomic_load(&pr->done);
}

/* ------------------------------------------------------------ figure 1 */

static long laps_roundtrip = 2000;

static void fig_roundtrip(void)
{
	static const enum impl impls[] = { FUTEX, WAITVAR, CONDVAR };
	/*
	 * Both threads on one CPU; on two (every hand-off crosses, and an idle
	 * CPU must notice the wake); and where the scheduler puts them, which
	 * is one or the other from sample to sample.
	 */
	static const char *const pins[] = { "one", "two", "unpinned" };
	uint64_t ns[3][MAX_SAMPLES];
	int p, i, j, r;

	printf("# roundtrip: %ld laps per sample\n", laps_roundtrip);
	for (p = 0; p < 3; p++) {
		int ping = p == 2 ? -1 : cpu_list[0];
		int pong = p == 2 ? -1 : cpu_list[p == 1 ? 1 % nr_cpus : 0];

		if (p == 1 && nr_cpus < 2)
			continue;
		/* One sample more than kept: the first warms up. */
		for (r = -1; r < reps; r++) {
			for_each_on_turn(j, i, impls, 3, r + 1) {
				_Atomic int go = 0, stop = 0;
				struct pair pr;

				memset(&pr, 0, sizeof(pr));
				pair_start(&pr, impls[i], ping, pong, laps_roundtrip, &go, &stop);
				atomic_store(&go, 1);
				pair_join(&pr);
				if (r >= 0)
					ns[i][r] = (pr.t1 - pr.t0) / laps_roundtrip;
			}
		}
		for_each_on(i, impls, 3)
			record("roundtrip", impl_names[impls[i]], "ns", ns[i], reps,
			       "\"cpus\": \"%s\"", pins[p]);
	}
}

/* ------------------------------------------------------------ figure 2 */

/*
 * Waiters that each wait, once per round, for the cell to reach the round's
 * value and note when they returned.
 */
struct crowd {
	struct cell *cell;
	int n;
	int rounds;
	bool exclusive;
	pthread_t *threads;
	_Atomic pid_t *tids;
	uint64_t *returned;
	_Atomic int ready;
	_Atomic int done;
	_Atomic uint32_t gate;		/* the last round let through */
};

struct crowd_arg {
	struct crowd *cr;
	int i;
};

static void *crowd_fn(void *p)
{
	struct crowd_arg *a = p;
	struct crowd *cr = a->cr;
	int i = a->i, r, ret;

	free(a);
	atomic_store(&cr->tids[i], gettid_());
	for (r = 1; r <= cr->rounds; r++) {
		atomic_fetch_add(&cr->ready, 1);
		if (cr->exclusive && cr->cell->impl == WAITVAR) {
			do
				ret = waitvar_wait(wv_fd, cr->cell->id, WAITVAR_OP_GE, r,
						   WAITVAR_MODE_INTERRUPTIBLE,
						   WAITVAR_WAIT_EXCLUSIVE, 0, NULL);
			while (ret == -EINTR);
			if (ret)
				die("WAIT exclusive: %s", strerror(-ret));
		} else {
			cell_wait(cr->cell, WAITVAR_OP_GE, r, NULL);
		}
		cr->returned[i] = now_ns();
		atomic_fetch_add(&cr->done, 1);
		/*
		 * Sleep on the gate, a futex for either implementation, until
		 * the round's timing is over: the next wait is not timed.
		 */
		for (uint32_t g; (g = atomic_load(&cr->gate)) < (uint32_t)r;)
			futex_wait(&cr->gate, g);
	}
	return NULL;
}

/* Lets the crowd's waiters on from round @r, once it is timed. */
static void crowd_open(struct crowd *cr, int r)
{
	atomic_store(&cr->gate, (uint32_t)r);
	futex(&cr->gate, FUTEX_WAKE, INT_MAX);
}

static void crowd_start(struct crowd *cr, struct cell *cell, int n, int rounds, bool exclusive)
{
	int i;

	memset(cr, 0, sizeof(*cr));
	cr->cell = cell;
	cr->n = n;
	cr->rounds = rounds;
	cr->exclusive = exclusive;
	cr->threads = calloc(n, sizeof(*cr->threads));
	cr->tids = calloc(n, sizeof(*cr->tids));
	cr->returned = calloc(n, sizeof(*cr->returned));
	if (!cr->threads || !cr->tids || !cr->returned)
		die("out of memory");
	for (i = 0; i < n; i++) {
		struct crowd_arg *a = malloc(sizeof(*a));

		if (!a)
			die("out of memory");
		*a = (struct crowd_arg){ cr, i };
		spawn(&cr->threads[i], crowd_fn, a);
	}
}

/* Waits until all are asleep in round @r. */
static void crowd_settle(struct crowd *cr, int r)
{
	while (atomic_load(&cr->ready) < cr->n * r)
		usleep(100);
	wait_asleep(cr->tids, cr->n);
}

static void crowd_wait_done(struct crowd *cr, int r)
{
	while (atomic_load(&cr->done) < cr->n * r)
		sched_yield();
}

static uint64_t crowd_last(struct crowd *cr)
{
	uint64_t last = 0;
	int i;

	for (i = 0; i < cr->n; i++)
		if (cr->returned[i] > last)
			last = cr->returned[i];
	return last;
}

static void crowd_join(struct crowd *cr)
{
	int i;

	for (i = 0; i < cr->n; i++)
		pthread_join(cr->threads[i], NULL);
	free(cr->threads);
	free((void *)cr->tids);
	free(cr->returned);
}

/* Both implementations' cells and crowds, sampled in turn. */
static const enum impl vs_futex[] = { FUTEX, WAITVAR };

static void fig_wakeall(void)
{
	static const int sizes[] = { 1, 10, 100, 1000 };
	uint64_t ns[2][MAX_SAMPLES], call[2][MAX_SAMPLES];
	struct cell cell[2];
	struct crowd cr[2];
	int s, i, j, r, k;

	need(16, 1000, 2 * 1000 + 100);
	for (s = 0; s < 4; s++) {
		for_each_on(i, vs_futex, 2) {
			cell_init(&cell[i], vs_futex[i]);
			crowd_start(&cr[i], &cell[i], sizes[s], reps + 1, false);
		}
		for (r = 1; r <= reps + 1; r++) {
			/* Both crowds asleep before either is woken. */
			for_each_on(i, vs_futex, 2)
				crowd_settle(&cr[i], r);
			for_each_on_turn(j, i, vs_futex, 2, r) {
				uint64_t t0;

				t0 = now_ns();
				cell_set(&cell[i], r, INT_MAX);
				if (r > 1)
					call[i][r - 2] = now_ns() - t0;
				crowd_wait_done(&cr[i], r);
				if (r > 1)
					ns[i][r - 2] = crowd_last(&cr[i]) - t0;
			}
			for_each_on(i, vs_futex, 2)
				crowd_open(&cr[i], r);
		}
		for_each_on(i, vs_futex, 2) {
			crowd_join(&cr[i]);
			cell_fini(&cell[i]);
			record("wakeall", impl_names[vs_futex[i]], "ns", ns[i], reps, "\"n\": %d",
			       sizes[s]);
			record("wakeall_call", impl_names[vs_futex[i]], "ns", call[i], reps,
			       "\"n\": %d", sizes[s]);
		}
	}

	/* Exclusive waiters, woken one per call until all have returned. */
	const int n = 100;

	for_each_on(i, vs_futex, 2) {
		cell_init(&cell[i], vs_futex[i]);
		crowd_start(&cr[i], &cell[i], n, reps + 1, true);
	}
	for (r = 1; r <= reps + 1; r++) {
		for_each_on(i, vs_futex, 2) {
			crowd_settle(&cr[i], r);
			cell_store_quiet(&cell[i], r);
		}
		for_each_on_turn(j, i, vs_futex, 2, r) {
			uint64_t t0;

			t0 = now_ns();
			for (k = 0; k < n; k++)
				cell_wake_one(&cell[i]);
			crowd_wait_done(&cr[i], r);
			if (r > 1)
				ns[i][r - 2] = (crowd_last(&cr[i]) - t0) / n;
		}
		for_each_on(i, vs_futex, 2)
			crowd_open(&cr[i], r);
	}
	for_each_on(i, vs_futex, 2) {
		crowd_join(&cr[i]);
		cell_fini(&cell[i]);
		record("wakeone", impl_names[vs_futex[i]], "ns", ns[i], reps, "\"n\": %d", n);
	}
}

/* ------------------------------------------------------------ figure 3 */

#define COLLIDERS	4

/* Fills @out with @n variables sharing @target's bucket; false if hidden. */
static bool find_colliders(struct cell *target, struct cell *out, int n)
{
	struct waitvar_stats st;
	uint32_t *ids, want;
	int found = 0, made = 0, max = 64 * (int)table_size, i, ret;

	ret = waitvar_stats(wv_fd, target->id, &st);
	if (ret)
		die("STATS: %s", strerror(-ret));
	if (st.bucket == WAITVAR_BUCKET_HIDDEN)
		return false;
	want = st.bucket;
	need((unsigned long)max + 64, 2 * 1000 + 100, 2 * 1000 + 100);
	ids = calloc(max, sizeof(*ids));
	if (!ids)
		die("out of memory");
	while (found < n && made < max) {
		ret = waitvar_create(wv_fd, 0, 0, &ids[made]);
		if (ret)
			die("CREATE (search %d): %s", made, strerror(-ret));
		ret = waitvar_stats(wv_fd, ids[made], &st);
		if (ret)
			die("STATS: %s", strerror(-ret));
		if (st.bucket == want) {
			out[found] = (struct cell){ .impl = WAITVAR, .id = ids[made] };
			found++;
			ids[made] = 0;
		}
		made++;
	}
	for (i = 0; i < made; i++)
		if (ids[i])
			waitvar_destroy(wv_fd, ids[i]);
	free(ids);
	if (found < n)
		die("found %d of %d variables in bucket %u among %d", found, n, want, made);
	printf("# collide: %d variables share bucket %u of %u (searched %d)\n", n, want,
	       table_size, made);
	return true;
}

static void fig_collide(void)
{
	static const int ks[] = { 0, 10, 100, 1000 };
	uint64_t ns[2][MAX_SAMPLES], call[2][MAX_SAMPLES];
	struct cell target[2], *others[2];
	struct park pk[2] = { { 0 }, { 0 } };
	struct crowd cr[2];
	int nr_others[2] = { ks[3], COLLIDERS };
	int i, j, s, r, o, round = 0, rounds = (reps + 1) * 4;

	need(16, 2 * 1000 + 100, 2 * 1000 + 100);
	for (i = 0; i < 2; i++) {
		cell_init(&target[i], vs_futex[i]);
		others[i] = calloc(nr_others[i], sizeof(*others[i]));
		if (!others[i])
			die("out of memory");
	}
	/* futex: K waiters on K other words; waitvar: on 4 colliding variables. */
	for (o = 0; o < nr_others[0]; o++)
		cell_init(&others[0][o], FUTEX);
	if (!impl_on[WAITVAR])
		nr_others[1] = 0;
	else if (!find_colliders(&target[1], others[1], nr_others[1])) {
		printf("# collide: SKIP: STATS hides the bucket (needs CAP_SYSLOG)\n");
		nr_others[1] = 0;
		goto out;
	}
	for_each_on(i, vs_futex, 2) {
		pk[i].cells = others[i];
		pk[i].nr_cells = nr_others[i];
		/*
		 * Exclusive: the target's entry goes to the tail of its queue, so
		 * the wake passes every colliding entry before it finds it (a
		 * plain waiter is queued at the head, and woken first).
		 */
		crowd_start(&cr[i], &target[i], 1, rounds, true);
	}
	for (s = 0; s < 4; s++) {
		for_each_on(i, vs_futex, 2)
			park_to(&pk[i], ks[s]);
		for (r = -1; r < reps; r++) {
			round++;
			for_each_on(i, vs_futex, 2)
				crowd_settle(&cr[i], round);
			for_each_on_turn(j, i, vs_futex, 2, round) {
				uint64_t t0;

				t0 = now_ns();
				cell_set(&target[i], round, 1);
				if (r >= 0)
					call[i][r] = now_ns() - t0;
				crowd_wait_done(&cr[i], round);
				if (r >= 0)
					ns[i][r] = cr[i].returned[0] - t0;
			}
			for_each_on(i, vs_futex, 2)
				crowd_open(&cr[i], round);
		}
		for_each_on(i, vs_futex, 2) {
			record("collide", impl_names[vs_futex[i]], "ns", ns[i], reps, "\"k\": %d",
			       ks[s]);
			record("collide_call", impl_names[vs_futex[i]], "ns", call[i], reps,
			       "\"k\": %d", ks[s]);
		}
	}
	for_each_on(i, vs_futex, 2) {
		crowd_join(&cr[i]);
		unpark(&pk[i]);
	}
out:
	for (i = 0; i < 2; i++) {
		for (o = 0; o < nr_others[i]; o++)
			cell_fini(&others[i][o]);
		free(others[i]);
		cell_fini(&target[i]);
	}
}

/* ------------------------------------------------------------ figure 4 */

/* Waiter i waits for i + 1 + M * (times it was the target before). */
struct filtered {
	struct cell *cell;
	int m;
	pthread_t *threads;
	_Atomic pid_t *tids;
	_Atomic int *hits;
	uint64_t *returned;
};

struct filtered_arg {
	struct filtered *f;
	int i;
};

static void *filtered_fn(void *p)
{
	struct filtered_arg *a = p;
	struct filtered *f = a->f;
	int i = a->i, hits = 0;

	free(a);
	atomic_store(&f->tids[i], gettid_());
	for (;;) {
		uint32_t code = (uint32_t)(i + 1 + f->m * hits);

		if (cell_wait(f->cell, WAITVAR_OP_EQ, code, NULL))
			break;
		f->returned[i] = now_ns();
		atomic_store(&f->hits[i], ++hits);
	}
	return NULL;
}

static void fig_filter(void)
{
	static const int ms[] = { 10, 100 };
	uint64_t ns[MAX_SAMPLES], call[MAX_SAMPLES], spur[MAX_SAMPLES];
	int s, mode, r, i, ret;

	if (!impl_on[WAITVAR])
		return;
	need(16, 200, 300);
	for (s = 0; s < 2; s++) {
		for (mode = 0; mode < 2; mode++) {
			const char *name = mode ? "filter" : "plain";
			int m = ms[s];
			struct waitvar_stats st0, st1;
			struct filtered f = { 0 };
			struct cell cell;
			uint64_t t0, woken, deadline;

			cell_init(&cell, WAITVAR);
			f.cell = &cell;
			f.m = m;
			f.threads = calloc(m, sizeof(*f.threads));
			f.tids = calloc(m, sizeof(*f.tids));
			f.hits = calloc(m, sizeof(*f.hits));
			f.returned = calloc(m, sizeof(*f.returned));
			if (!f.threads || !f.tids || !f.hits || !f.returned)
				die("out of memory");
			for (i = 0; i < m; i++) {
				struct filtered_arg *a = malloc(sizeof(*a));

				if (!a)
					die("out of memory");
				*a = (struct filtered_arg){ &f, i };
				spawn(&f.threads[i], filtered_fn, a);
			}
			for (r = -1; r < reps; r++) {
				int t = (int)(((unsigned int)(r + 1) * 7919U) % (unsigned int)m);
				int hits = atomic_load(&f.hits[t]);
				uint32_t code = (uint32_t)(t + 1 + m * hits);

				wait_asleep(f.tids, m);
				ret = waitvar_stats(wv_fd, cell.id, &st0);
				if (ret)
					die("STATS: %s", strerror(-ret));
				if (mode) {
					cell_store_quiet(&cell, code);
					t0 = now_ns();
					ret = waitvar_wake_nr(wv_fd, cell.id, 0, WAITVAR_WAKE_FILTER);
					if (ret < 0)
						die("WAKE_NR FILTER: %s", strerror(-ret));
					woken = (uint64_t)ret;
				} else {
					t0 = now_ns();
					cell_set(&cell, code, INT_MAX);
					woken = (uint64_t)m;
				}
				if (r >= 0)
					call[r] = now_ns() - t0;
				while (atomic_load(&f.hits[t]) == hits)
					sched_yield();
				if (r >= 0)
					ns[r] = f.returned[t] - t0;
				/*
				 * Every waiter woken has tested its condition again (a
				 * task shows as asleep before that test), then slept.
				 */
				deadline = now_ns() + 60ULL * 1000000000ULL;
				for (;;) {
					ret = waitvar_stats(wv_fd, cell.id, &st1);
					if (ret)
						die("STATS: %s", strerror(-ret));
					if (st1.woken - st0.woken >= woken)
						break;
					if (now_ns() > deadline)
						die("filter: %llu of %llu wakeups counted after 60 s",
						    (unsigned long long)(st1.woken - st0.woken),
						    (unsigned long long)woken);
					sched_yield();
				}
				wait_asleep(f.tids, m);
				if (r >= 0)
					spur[r] = st1.spurious - st0.spurious;
			}
			cell_fini(&cell);	/* EIDRM ends the waiters */
			for (i = 0; i < m; i++)
				pthread_join(f.threads[i], NULL);
			free(f.threads);
			free((void *)f.tids);
			free((void *)f.hits);
			free(f.returned);
			record("filter", name, "ns", ns, reps, "\"m\": %d", m);
			record("filter_call", name, "ns", call, reps, "\"m\": %d", m);
			record("filter_spurious", name, "wakeups", spur, reps, "\"m\": %d", m);
		}
	}
}

/* ------------------------------------------------------------ figure 5 */

static int scaling_ms = 500;

static void fig_scaling(void)
{
	static const int ps[] = { 1, 2, 4, 8 };
	static const int ks[] = { 0, 1000, 10000 };
	uint64_t rate[2][MAX_SAMPLES];
	struct cell *idle[2];
	struct park pk[2] = { { 0 }, { 0 } };
	int i, s, p, r, j, q;

	/*
	 * Pair j runs on allowed CPU j mod their number: each hand-off stays
	 * on one CPU, so a sample measures the work of a round trip, not how
	 * soon an idle CPU notices a wake (under emulation that varies by
	 * multiples).  Both sets of idle waiters stay parked: 2 x 10,000
	 * threads.
	 */
	need(ks[2] + 64, ks[2] + 64, 2 * ks[2] + 64);
	printf("# scaling: %d ms per sample, wait table of %u queues\n", scaling_ms, table_size);
	for_each_on(i, vs_futex, 2) {
		idle[i] = calloc(ks[2], sizeof(*idle[i]));
		if (!idle[i])
			die("out of memory");
		for (j = 0; j < ks[2]; j++)
			cell_init(&idle[i][j], vs_futex[i]);
		pk[i].cells = idle[i];
		pk[i].nr_cells = ks[2];
	}
	for (s = 0; s < 3; s++) {
		for_each_on(i, vs_futex, 2)
			park_to(&pk[i], ks[s]);
		for (p = 0; p < 4; p++) {
			for (r = -1; r < reps; r++) {
				for_each_on_turn(q, i, vs_futex, 2, r + 1) {
					struct pair pr[MAX_PAIRS];
					_Atomic int go = 0, stop = 0;
					uint64_t t0, t1 = 0, laps = 0;

					memset(pr, 0, sizeof(pr));
					for (j = 0; j < ps[p]; j++)
						pair_start(&pr[j], vs_futex[i], cpu_list[j % nr_cpus],
							   cpu_list[j % nr_cpus], 0, &go, &stop);
					atomic_store(&go, 1);
					t0 = now_ns();
					nanosleep(&(struct timespec){ scaling_ms / 1000,
								      scaling_ms % 1000 * 1000000L },
						  NULL);
					atomic_store(&stop, 1);
					for (j = 0; j < ps[p]; j++) {
						laps += pair_join(&pr[j]);
						if (pr[j].t1 - t0 > t1)
							t1 = pr[j].t1 - t0;
					}
					if (r >= 0)
						rate[i][r] = laps * 1000000000ULL / (t1 ? t1 : 1);
				}
			}
			for_each_on(i, vs_futex, 2)
				record("scaling", impl_names[vs_futex[i]], "round trips/s", rate[i],
				       reps, "\"p\": %d, \"k\": %d, \"table\": %u", ps[p], ks[s],
				       table_size);
		}
	}
	for_each_on(i, vs_futex, 2) {
		unpark(&pk[i]);
		for (j = 0; j < ks[2]; j++)
			cell_fini(&idle[i][j]);
		free(idle[i]);
	}
}

/* ------------------------------------------------------------ main */

static const struct {
	const char *name;
	void (*fn)(void);
} figures[] = {
	{ "roundtrip", fig_roundtrip },
	{ "wakeall", fig_wakeall },
	{ "collide", fig_collide },
	{ "filter", fig_filter },
	{ "scaling", fig_scaling },
};

#define NR_FIGURES ((int)(sizeof(figures) / sizeof(figures[0])))

static void usage(FILE *out)
{
	int i;

	fprintf(out,
		"usage: waitvar-bench [--figures NAME[,NAME...]] [--reps N] [--json FILE]\n"
		"                     [--label TEXT] [--laps N] [--scaling-ms MS]\n"
		"                     [--impl NAME[,NAME...]]\n"
		"  --figures   which figures (default all):");
	for (i = 0; i < NR_FIGURES; i++)
		fprintf(out, " %s", figures[i].name);
	fprintf(out,
		"\n"
		"  --reps      samples per measurement, 5 to %d (default 7), medians reported\n"
		"  --json      also write every measurement to FILE as JSON\n"
		"  --label     a word naming this run in the JSON (default: none)\n"
		"  --laps      round trips per roundtrip sample (default 2000)\n"
		"  --scaling-ms  length of a scaling sample (default 500)\n"
		"  --impl      measure only these of waitvar, futex, condvar (to profile one;\n"
		"              the report of ./run.sh bench needs waitvar and futex)\n"
		"Needs root: it raises /dev/waitvar's module limits and threads-max for\n"
		"the run and reads bucket indexes from STATS.\n", MAX_SAMPLES);
}

static long parse_num(const char *opt, const char *s, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi) {
		fprintf(stderr, "waitvar-bench: %s needs a number from %ld to %ld, not '%s'\n",
			opt, lo, hi, s);
		usage(stderr);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "figures", required_argument, NULL, 'f' },
		{ "reps", required_argument, NULL, 'r' },
		{ "json", required_argument, NULL, 'j' },
		{ "label", required_argument, NULL, 'l' },
		{ "laps", required_argument, NULL, 'L' },
		{ "scaling-ms", required_argument, NULL, 'S' },
		{ "impl", required_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool want[NR_FIGURES];
	const char *json_path = NULL, *label = "";
	struct waitvar_features feat;
	struct utsname uts;
	char *list = NULL, *impls = NULL, *tok, *save;
	int c, i, ret;

	for (i = 0; i < NR_FIGURES; i++)
		want[i] = true;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			list = optarg;
			break;
		case 'r':
			reps = (int)parse_num("--reps", optarg, 5, MAX_SAMPLES);
			break;
		case 'j':
			json_path = optarg;
			break;
		case 'l':
			label = optarg;
			if (!*label || strlen(label) > 64 ||
			    strspn(label, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
				   "0123456789._-") != strlen(label)) {
				fprintf(stderr, "waitvar-bench: --label: 1 to 64 of [A-Za-z0-9._-], not '%s'\n",
					label);
				usage(stderr);
				return 2;
			}
			break;
		case 'L':
			laps_roundtrip = parse_num("--laps", optarg, 1, 10000000);
			break;
		case 'S':
			scaling_ms = (int)parse_num("--scaling-ms", optarg, 10, 60000);
			break;
		case 'i':
			impls = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "waitvar-bench: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (list) {
		for (i = 0; i < NR_FIGURES; i++)
			want[i] = false;
		for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			for (i = 0; i < NR_FIGURES; i++)
				if (!strcmp(tok, figures[i].name))
					break;
			if (i == NR_FIGURES) {
				fprintf(stderr, "waitvar-bench: --figures: no figure '%s'\n", tok);
				usage(stderr);
				return 2;
			}
			want[i] = true;
		}
		for (i = 0; i < NR_FIGURES && !want[i]; i++)
			;
		if (i == NR_FIGURES) {
			fprintf(stderr, "waitvar-bench: --figures: no figure named\n");
			usage(stderr);
			return 2;
		}
	}

	if (impls) {
		for (i = 0; i < 3; i++)
			impl_on[i] = false;
		for (tok = strtok_r(impls, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			for (i = 0; i < 3; i++)
				if (!strcmp(tok, impl_names[i]))
					break;
			if (i == 3) {
				fprintf(stderr, "waitvar-bench: --impl: no implementation '%s'\n", tok);
				usage(stderr);
				return 2;
			}
			impl_on[i] = true;
		}
		if (!impl_on[WAITVAR] && !impl_on[FUTEX] && !impl_on[CONDVAR]) {
			fprintf(stderr, "waitvar-bench: --impl: no implementation named\n");
			usage(stderr);
			return 2;
		}
	}

	read_cpus();
	wv_fd = waitvar_open();
	if (wv_fd < 0)
		die("/dev/waitvar: %s", strerror(-wv_fd));
	ret = waitvar_features(wv_fd, &feat);
	if (ret)
		die("FEATURES: %s", strerror(-ret));
	table_size = feat.wait_table_size;
	atexit(at_exit_restore);
	signal(SIGINT, restore_and_reraise);
	signal(SIGTERM, restore_and_reraise);
	signal(SIGHUP, restore_and_reraise);
	uname(&uts);
	if (json_path) {
		json = fopen(json_path, "w");
		if (!json)
			die("%s: %s", json_path, strerror(errno));
		fprintf(json, "{\n  \"schema\": \"waitvar-bench 1\",\n  \"label\": \"%s\",\n"
			"  \"kernel\": \"%s\",\n  \"machine\": \"%s\",\n  \"cpus\": %ld,\n"
			"  \"wait_table_size\": %u,\n  \"reps\": %d,\n  \"records\": [",
			label, uts.release, uts.machine, sysconf(_SC_NPROCESSORS_ONLN),
			table_size, reps);
	}
	printf("# waitvar-bench: kernel %s %s, %ld CPUs, wait table %u queues, %d samples each\n",
	       uts.release, uts.machine, sysconf(_SC_NPROCESSORS_ONLN), table_size, reps);
	for (i = 0; i < NR_FIGURES; i++)
		if (want[i])
			figures[i].fn();
	if (json) {
		fputs("\n  ]\n}\n", json);
		if (fclose(json))
			die("%s: %s", json_path, strerror(errno));
	}
	return 0;
}
