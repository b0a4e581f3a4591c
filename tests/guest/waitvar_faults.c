// SPDX-License-Identifier: GPL-2.0
/*
 * Faults, kills and teardown under way: every command that allocates fails
 * with ENOMEM and leaves no trace when failslab or fail_page_alloc fails its
 * 1st, 2nd, 3rd ... allocation; SIGKILL ends the waits it may end and no
 * other; waits outlive a close() of their descriptor and leave nothing
 * behind when their process exits; every command keeps to its documented
 * errors while the variables it names are destroyed and made again; and
 * the module refuses to unload while in use, then unloads and loads 100
 * times (it is left loaded).
 *
 * Needs root, debugfs, and for the fault tests CONFIG_FAILSLAB,
 * CONFIG_FAIL_PAGE_ALLOC and CONFIG_FAULT_INJECTION_DEBUG_FS (they SKIP
 * without); the module test needs WAITVAR_MODULE, the path of waitvar.ko,
 * which the guest runner sets (it SKIPs when the device is built in).
 */
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "waitvar_test.h"

/* The kernel's harness is written for -Wall; it has unused parameters. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#define KMEMLEAK_PATH "/sys/kernel/debug/kmemleak"
#define SEC_NS (1000 * NSEC_PER_MSEC)

/* Shared helpers */

#define SUMMARY_FMT "files %ld, variables %ld, waiters %ld, named %ld, reserved ids %ld"
#define SUMMARY_ARGS(s) (s).files, (s).vars, (s).waiters, (s).named, (s).reserved

static bool summary_same(const struct summary *a, const struct summary *b)
{
	return a->files == b->files && a->vars == b->vars && a->waiters == b->waiters &&
	       a->named == b->named && a->reserved == b->reserved;
}

/* Reads the summary until it is @want, 5 s at most; the last one read goes to @got. */
static bool summary_settles(const struct summary *want, struct summary *got)
{
	long long deadline = now_ns() + 5 * SEC_NS;

	do {
		if (read_summary(got) && summary_same(want, got))
			return true;
		usleep(10 * 1000);
	} while (now_ns() < deadline);
	return false;
}

/* Removes every name of this user namespace that starts with @prefix. */
static void remove_prefixed_names(int fd, const char *prefix)
{
	static char buf[65536];
	char name[WAITVAR_NAME_MAX];
	size_t plen = strlen(prefix), len;
	uint32_t count, needed, i;
	int round, removed;
	const char *p;

	for (round = 0; round < 16; round++) {
		count = needed = 0;
		removed = 0;
		if (waitvar_list(fd, buf, sizeof(buf), &count, &needed))
			return;
		for (i = 0, p = buf; i < count; i++, p += strlen(p) + 1) {
			len = strlen(p);
			if (strncmp(p, prefix, plen) || len >= sizeof(name))
				continue;
			memcpy(name, p, len + 1);
			removed += !waitvar_named_remove(fd, name);
		}
		if (!removed)
			return;
	}
}

/* A thread blocked in WAITVAR_IOC_WAITV. */
struct vwaiter {
	int fd;
	struct waitvar_waitv_entry e[4];
	uint32_t count, mode, flags;
	long long timeout_ns;
	pthread_t thread;
	atomic_int tid, done;
	int ret;
};

static void *vwaiter_main(void *data)
{
	struct vwaiter *v = data;

	atomic_store(&v->tid, gettid());
	v->ret = waitvar_waitv(v->fd, v->e, v->count, v->mode, v->flags, v->timeout_ns, NULL);
	atomic_store(&v->done, 1);
	return NULL;
}

/* A thread blocked in read() of a WATCH descriptor. */
struct reader {
	int wfd;
	pthread_t thread;
	atomic_int tid, done;
	ssize_t ret;
	int err;
};

static void *reader_main(void *data)
{
	struct reader *r = data;
	uint64_t value;

	atomic_store(&r->tid, gettid());
	r->ret = read(r->wfd, &value, sizeof(value));
	r->err = errno;
	atomic_store(&r->done, 1);
	return NULL;
}

/* kmemleak's report as it stands (1 MiB at most), or NULL; free() it. */
static char *kmemleak_read(void)
{
	size_t size = 1 << 20;
	char *buf = malloc(size);

	if (buf && read_file(KMEMLEAK_PATH, buf, size) < 0) {
		free(buf);
		buf = NULL;
	}
	return buf;
}

/*
 * True if one report (NUL-terminated, changed here) names waitvar in its
 * backtrace: the comm line is skipped, since this program's name has it.
 */
static bool report_names_waitvar(char *block)
{
	char *line, *save = NULL;

	for (line = strtok_r(block, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strstr(line, "comm \""))
			continue;
		if (strstr(line, "waitvar"))
			return true;
	}
	return false;
}

/*
 * Makes kmemleak scan twice (an object is reported once it is 5 s old and
 * was unreferenced and unchanged across two scans) and fails on each
 * report whose backtrace names waitvar and that @before (the report read
 * when the test started) did not have already.
 */
static void check_kmemleak(struct __test_metadata *_metadata, const char *before)
{
	char block[4096], scratch[4096], addr[40];
	char *report, *p, *next;
	int i, leaks = 0;
	size_t len;

	if (access(KMEMLEAK_PATH, R_OK | W_OK)) {
		TH_LOG("no %s: no leak check", KMEMLEAK_PATH);
		return;
	}
	sleep(6);
	for (i = 0; i < 2; i++) {
		if (write_file(KMEMLEAK_PATH, "scan")) {
			TH_LOG("echo scan > %s: %s: no leak check", KMEMLEAK_PATH, strerror(errno));
			return;
		}
	}
	report = kmemleak_read();
	if (!report) {
		TH_LOG("cannot read %s: %s: no leak check", KMEMLEAK_PATH, strerror(errno));
		return;
	}
	for (p = strstr(report, "unreferenced object "); p; p = next) {
		next = strstr(p + 1, "unreferenced object ");
		len = next ? (size_t)(next - p) : strlen(p);
		if (len >= sizeof(block))
			len = sizeof(block) - 1;
		memcpy(block, p, len);
		block[len] = '\0';
		memcpy(scratch, block, len + 1);
		if (!report_names_waitvar(scratch))
			continue;
		if (before && sscanf(block, "unreferenced object %39s", addr) == 1 &&
		    strstr(before, addr)) {
			TH_LOG("kmemleak had reported this before the test started:\n%s", block);
			continue;
		}
		leaks++;
		TH_LOG("kmemleak:\n%s", block);
	}
	free(report);
	EXPECT_EQ(0, leaks) TH_LOG("kmemleak reports %d unreferenced objects allocated through waitvar",
				   leaks);
}

/* 1. Every allocating command fails cleanly under failslab and fail_page_alloc */

/*
 * How a call is made to fail (Documentation/fault-injection/
 * fault-injection.rst): the capability under test is set to fail with
 * probability 100, interval 1 and times K, only for tasks whose
 * make-it-fail is 1 (task-filter), which this thread sets around the one
 * system call under test and nothing else.  /proc/self/task/<tid>/fail-nth
 * = N lets the first N - 1 allocations of that call through and fails the
 * N-th (its failure takes one of the K); the K - 1 after it fail through
 * the probability.  N = 1, 2, 3 ... sweeps every allocation of the call,
 * until a call makes fewer than N (fail-nth then reads back non-zero).
 * fail-nth counts every capability's allocations that its per-capability
 * filters let through, so the other capability is filtered out entirely:
 * failslab by cache-filter (no cache is marked), fail_page_alloc by a
 * min-order no allocation reaches.
 */
#define FAILSLAB "/sys/kernel/debug/failslab/"
#define FAILPAGE "/sys/kernel/debug/fail_page_alloc/"

enum fault_kind {
	FAULT_SLAB,
	FAULT_PAGE,
};

/* Every knob the tests change, saved first and put back in the teardown. */
static const char *const fault_knobs[] = {
	FAILSLAB "probability", FAILSLAB "interval", FAILSLAB "times", FAILSLAB "space",
	FAILSLAB "verbose", FAILSLAB "task-filter", FAILSLAB "ignore-gfp-wait",
	FAILSLAB "cache-filter",
	FAILPAGE "probability", FAILPAGE "interval", FAILPAGE "times", FAILPAGE "space",
	FAILPAGE "verbose", FAILPAGE "task-filter", FAILPAGE "ignore-gfp-wait",
	FAILPAGE "ignore-gfp-highmem", FAILPAGE "min-order",
};

#define NR_KNOBS ARRAY_LEN(fault_knobs)

struct saved_knobs {
	bool have[NR_KNOBS];
	char value[NR_KNOBS][32];
};

static void knobs_save(struct saved_knobs *k)
{
	size_t i;

	for (i = 0; i < NR_KNOBS; i++) {
		k->have[i] = read_file(fault_knobs[i], k->value[i], sizeof(k->value[i])) > 0;
		if (k->have[i])
			k->value[i][strcspn(k->value[i], "\n")] = '\0';
	}
}

static bool is_probability(const char *knob)
{
	return strstr(knob, "/probability") != NULL;
}

/* Probability 0 first, then every other knob as it was; 0 or -1. */
static int knobs_restore(const struct saved_knobs *k)
{
	int ret = 0;
	size_t i;

	for (i = 0; i < NR_KNOBS; i++)
		if (k->have[i] && is_probability(fault_knobs[i]) && write_file(fault_knobs[i], "0"))
			ret = -1;
	for (i = 0; i < NR_KNOBS; i++)
		if (k->have[i] && !is_probability(fault_knobs[i]) &&
		    write_file(fault_knobs[i], k->value[i]))
			ret = -1;
	return ret;
}

struct knob_value {
	const char *knob, *value;
};

/* Probability last: it is 100 only once the task filter is on. */
static const struct knob_value slab_config[] = {
	{ FAILPAGE "probability", "0" },
	{ FAILPAGE "task-filter", "Y" },
	{ FAILPAGE "ignore-gfp-wait", "Y" },
	{ FAILPAGE "ignore-gfp-highmem", "Y" },
	{ FAILPAGE "min-order", "64" },
	{ FAILSLAB "task-filter", "Y" },
	{ FAILSLAB "verbose", "0" },
	{ FAILSLAB "interval", "1" },
	{ FAILSLAB "space", "0" },
	{ FAILSLAB "times", "1" },
	{ FAILSLAB "ignore-gfp-wait", "N" },
	{ FAILSLAB "cache-filter", "N" },
	{ FAILSLAB "probability", "100" },
};

static const struct knob_value page_config[] = {
	{ FAILSLAB "probability", "0" },
	{ FAILSLAB "task-filter", "Y" },
	{ FAILSLAB "ignore-gfp-wait", "Y" },
	{ FAILSLAB "cache-filter", "Y" },
	{ FAILPAGE "task-filter", "Y" },
	{ FAILPAGE "verbose", "0" },
	{ FAILPAGE "interval", "1" },
	{ FAILPAGE "space", "0" },
	{ FAILPAGE "times", "1" },
	{ FAILPAGE "ignore-gfp-wait", "N" },
	{ FAILPAGE "ignore-gfp-highmem", "N" },
	{ FAILPAGE "min-order", "0" },
	{ FAILPAGE "probability", "100" },
};

/* The commands that allocate, in the order they are run. */
enum cmd {
	CMD_LIST,
	CMD_WAITV,
	CMD_CREATE,
	CMD_NAMED_CREATE,
	CMD_NAMED_OPEN,
	CMD_WATCH,
	CMD_OPEN,
	NR_CMDS
};

static const char *const cmd_names[NR_CMDS] = {
	[CMD_LIST] = "LIST",
	[CMD_WAITV] = "WAITV",
	[CMD_CREATE] = "CREATE",
	[CMD_NAMED_CREATE] = "NAMED_CREATE",
	[CMD_NAMED_OPEN] = "NAMED_OPEN",
	[CMD_WATCH] = "WATCH",
	[CMD_OPEN] = "open(/dev/waitvar)",
};

/* One prepared call: everything it needs is in place before it is armed. */
struct call {
	enum cmd cmd;
	int fd;			/* the file it goes to; open() goes to none */
	int ret;		/* 0 (open(): the descriptor) or -errno */
	union {
		struct waitvar_create create;
		struct waitvar_named named;
		struct waitvar_watch watch;
		struct waitvar_waitv waitv;
		struct waitvar_list list;
	} arg;
};

/* The one system call under test: nothing else runs while it is armed. */
static int issue(struct call *c)
{
	unsigned long cmd = 0;
	void *arg = NULL;
	int ret;

	switch (c->cmd) {
	case CMD_LIST:
		cmd = WAITVAR_IOC_LIST;
		arg = &c->arg.list;
		break;
	case CMD_WAITV:
		cmd = WAITVAR_IOC_WAITV;
		arg = &c->arg.waitv;
		break;
	case CMD_CREATE:
		cmd = WAITVAR_IOC_CREATE;
		arg = &c->arg.create;
		break;
	case CMD_NAMED_CREATE:
		cmd = WAITVAR_IOC_NAMED_CREATE;
		arg = &c->arg.named;
		break;
	case CMD_NAMED_OPEN:
		cmd = WAITVAR_IOC_NAMED_OPEN;
		arg = &c->arg.named;
		break;
	case CMD_WATCH:
		cmd = WAITVAR_IOC_WATCH;
		arg = &c->arg.watch;
		break;
	case CMD_OPEN:
		ret = open("/dev/waitvar", O_RDWR | O_CLOEXEC);
		return ret < 0 ? -errno : ret;
	case NR_CMDS:
		return -EINVAL;
	}
	return ioctl(c->fd, cmd, arg) ? -errno : 0;
}

/* This thread's fail-nth and make-it-fail, and the active capability's times. */
struct injector {
	int nth_fd, mif_fd, times_fd;
};

/*
 * proc's fail-nth cannot seek, so it is written and read at offset 0 with
 * pwrite()/pread(); debugfs attributes are opened nonseekable (ESPIPE for
 * those) and parse each write() whole.
 */
static bool put(int fd, const char *s)
{
	ssize_t n = pwrite(fd, s, strlen(s), 0);

	if (n < 0 && errno == ESPIPE)
		n = write(fd, s, strlen(s));
	return n == (ssize_t)strlen(s);
}

/*
 * Issues @c with its @nth allocation failing and the @times - 1 after it.
 * Returns 1 if the call reached its @nth allocation, 0 if it made fewer,
 * -1 if the knobs could not be set.
 */
static int inject_call(struct injector *in, struct call *c, unsigned int nth, int times)
{
	char nth_s[16], times_s[16], left[24];
	ssize_t len;
	bool off;

	snprintf(nth_s, sizeof(nth_s), "%u", nth);
	snprintf(times_s, sizeof(times_s), "%d", times);
	if (!put(in->times_fd, times_s) || !put(in->mif_fd, "1") || !put(in->nth_fd, nth_s)) {
		put(in->mif_fd, "0");
		put(in->nth_fd, "0");
		return -1;
	}
	c->ret = issue(c);
	/* None of these three allocates. */
	len = pread(in->nth_fd, left, sizeof(left) - 1, 0);
	off = put(in->mif_fd, "0");
	off &= put(in->nth_fd, "0");
	if (len <= 0 || !off)
		return -1;
	left[len] = '\0';
	return strtoul(left, NULL, 10) == 0;
}

#define NR_WITNESSES 8
#define MAX_KEPT 200		/* descriptors or names a page-mode phase keeps */
#define MAX_NTH 256		/* no call here makes this many allocations */
#define SLAB_REPEATS 2		/* failslab: sweeps per command, times and file */
#define PAGE_ROUNDS 200		/* fail_page_alloc: calls per command at most ... */
#define PAGE_ENOUGH 3		/* ... until this many failed ... */
#define PAGE_PHASE_MS 20000	/* ... or this long */
#define WAITV_SMALL 16		/* its vector fits a page: no vmalloc fallback */
#define LIST_BUF 65536

struct cmd_count {
	unsigned int calls, injected, enomem, ok, other;
};

/* What one fault test keeps; big, so it is allocated. */
struct fault_run {
	enum fault_kind kind;
	bool keep;		/* fail_page_alloc: successes stay until the phase ends */
	int bulk_fd;		/* CREATE and NAMED_CREATE's file while they keep */
	int kept_fds[MAX_KEPT];
	int nr_kept_fds;
	char kept_names[MAX_KEPT][WAITVAR_NAME_MAX];
	int nr_kept_names;
	unsigned int serial;	/* makes each NAMED_CREATE's name new */
	uint32_t waitv_max, waitv_count;
	long page;
	struct cmd_count count[NR_CMDS];
	unsigned int logged;	/* mismatches and odd results logged so far */
	struct waitvar_waitv_entry entries[WAITVAR_WAITV_MAX];
	char list_buf[LIST_BUF];
	char snap_list[2][LIST_BUF];
};

FIXTURE(faults) {
	int fd;				/* the witnesses live here */
	uint32_t wit[NR_WITNESSES];
	uint64_t wit_value[NR_WITNESSES];
	char prefix[24];		/* every name the test makes starts with it */
	char named[WAITVAR_NAME_MAX];	/* a named witness, attached to @fd */
	uint32_t named_id;
	uint64_t named_value;
	int watch_fd;			/* a standing WATCH on wit[1] */
	struct injector inj;
	bool knobs_saved;
	struct saved_knobs knobs;
	struct saved_params params;
	char *leaks_before;
	struct fault_run *run;
};

FIXTURE_SETUP(faults)
{
	int i;

	self->fd = self->watch_fd = -1;
	self->inj = (struct injector){ -1, -1, -1 };
	self->fd = open("/dev/waitvar", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open /dev/waitvar: %s", strerror(errno));
	snprintf(self->prefix, sizeof(self->prefix), "/wvf%d-", getpid());
	for (i = 0; i < NR_WITNESSES; i++) {
		self->wit_value[i] = 1000 + 7 * i;
		ASSERT_EQ(0, waitvar_create(self->fd, self->wit_value[i], 0, &self->wit[i]));
	}
	self->watch_fd = waitvar_watch(self->fd, self->wit[1], WAITVAR_OP_EQ, 0);
	ASSERT_LE(0, self->watch_fd);
	snprintf(self->named, sizeof(self->named), "%snamed", self->prefix);
	self->named_value = 4242;
	ASSERT_EQ(0, waitvar_named_create(self->fd, self->named, self->named_value, 0, 0600,
					  &self->named_id));
}

static void phase_cleanup(struct fault_run *r, int fd)
{
	while (r->nr_kept_fds > 0)
		close(r->kept_fds[--r->nr_kept_fds]);
	while (r->nr_kept_names > 0)
		waitvar_named_remove(fd, r->kept_names[--r->nr_kept_names]);
	if (r->bulk_fd >= 0)
		close(r->bulk_fd);
	r->bulk_fd = -1;
}

/* Nothing of this thread's may stay armed; every knob goes back. */
static int faults_disarm(FIXTURE_DATA(faults) *self)
{
	int ret = 0;

	if (self->inj.mif_fd >= 0 && !put(self->inj.mif_fd, "0"))
		ret = -1;
	if (self->inj.nth_fd >= 0 && !put(self->inj.nth_fd, "0"))
		ret = -1;
	if (self->knobs_saved && knobs_restore(&self->knobs))
		ret = -1;
	return ret;
}

FIXTURE_TEARDOWN(faults)
{
	EXPECT_EQ(0, faults_disarm(self)) TH_LOG("could not put the fault-injection knobs back");
	if (self->inj.mif_fd >= 0)
		close(self->inj.mif_fd);
	if (self->inj.nth_fd >= 0)
		close(self->inj.nth_fd);
	if (self->inj.times_fd >= 0)
		close(self->inj.times_fd);
	EXPECT_EQ(0, params_restore(&self->params)) TH_LOG("could not put the module parameters back");
	if (self->run) {
		phase_cleanup(self->run, self->fd);
		free(self->run);
	}
	free(self->leaks_before);
	remove_prefixed_names(self->fd, self->prefix);
	if (self->watch_fd >= 0)
		close(self->watch_fd);
	close(self->fd);
}

/* The state a failed call must leave as it found it. */
struct snap {
	int errors;			/* what could not be read */
	int fds;
	uint64_t value[NR_WITNESSES + 1];	/* the witnesses, then the named one */
	uint32_t waiters[NR_WITNESSES + 1];
	uint32_t list_count, list_needed;
	char *list;
	struct summary sum;
};

static void take_snap(FIXTURE_DATA(faults) *self, struct snap *s, char *list)
{
	struct waitvar_stats st;
	int i;

	memset(s, 0, sizeof(*s));
	s->list = list;
	s->fds = count_open_fds();
	for (i = 0; i <= NR_WITNESSES; i++) {
		uint32_t w = i < NR_WITNESSES ? self->wit[i] : self->named_id;

		if (waitvar_get(self->fd, w, &s->value[i]) || waitvar_stats(self->fd, w, &st))
			s->errors++;
		else
			s->waiters[i] = st.waiters;
	}
	if (waitvar_list(self->fd, list, LIST_BUF, &s->list_count, &s->list_needed) ||
	    s->list_needed > LIST_BUF)
		s->errors++;
	if (!read_summary(&s->sum))
		s->errors++;
}

/* Logs each difference (the first few of the test); true if there is none. */
static bool snaps_equal(struct __test_metadata *_metadata, struct fault_run *r, const char *what,
			const struct snap *a, const struct snap *b)
{
	bool eq = true;
	int i;

#define DIFF(cond, fmt, ...)								\
	do {										\
		if (cond) {								\
			eq = false;							\
			if (r->logged++ < 20)						\
				TH_LOG("%s: " fmt, what, ##__VA_ARGS__);		\
		}									\
	} while (0)

	DIFF(a->errors || b->errors, "%d and %d parts of the state could not be read",
	     a->errors, b->errors);
	DIFF(a->fds != b->fds, "open descriptors %d before, %d after", a->fds, b->fds);
	for (i = 0; i <= NR_WITNESSES; i++) {
		DIFF(a->value[i] != b->value[i], "witness %d: GET %llu before, %llu after", i,
		     (unsigned long long)a->value[i], (unsigned long long)b->value[i]);
		DIFF(a->waiters[i] != b->waiters[i], "witness %d: STATS.waiters %u before, %u after",
		     i, a->waiters[i], b->waiters[i]);
	}
	DIFF(a->list_count != b->list_count || a->list_needed != b->list_needed ||
	     memcmp(a->list, b->list, a->list_needed < LIST_BUF ? a->list_needed : LIST_BUF),
	     "LIST: %u names (%u bytes) before, %u (%u bytes) after, or other names",
	     a->list_count, a->list_needed, b->list_count, b->list_needed);
	DIFF(!summary_same(&a->sum, &b->sum), "summary " SUMMARY_FMT " before, " SUMMARY_FMT " after",
	     SUMMARY_ARGS(a->sum), SUMMARY_ARGS(b->sum));
#undef DIFF
	return eq;
}

static void prepare(FIXTURE_DATA(faults) *self, struct fault_run *r, struct call *c, enum cmd cmd,
		    int target, const struct snap *before)
{
	memset(c, 0, sizeof(*c));
	c->cmd = cmd;
	c->fd = target;
	switch (cmd) {
	case CMD_LIST:
		c->arg.list.names = (uintptr_t)r->list_buf;
		/*
		 * The driver allocates min(size, 64 bytes per name in the
		 * system): keep that within a page, where kvmalloc() has no
		 * vmalloc fallback whose own failure would warn with a trace.
		 */
		c->arg.list.size = before->sum.named >= 0 &&
				   before->sum.named * WAITVAR_NAME_MAX <= r->page ?
				   LIST_BUF : (uint32_t)r->page;
		break;
	case CMD_WAITV:
		c->arg.waitv.entries = (uintptr_t)r->entries;
		c->arg.waitv.count = r->waitv_count;
		c->arg.waitv.mode = WAITVAR_MODE_INTERRUPTIBLE;
		/* Entry 0 holds: it returns at once; the timeout only bounds a bug. */
		c->arg.waitv.flags = WAITVAR_WAIT_TIMEOUT;
		c->arg.waitv.timeout_ns = 10 * NSEC_PER_MSEC;
		break;
	case CMD_CREATE:
		c->arg.create.value = 0xc0de0000ULL + r->serial;
		c->arg.create.flags = r->serial % 3 == 2 ? WAITVAR_CREATE_MUTEX : 0;
		r->serial++;
		break;
	case CMD_NAMED_CREATE:
		snprintf(c->arg.named.name, sizeof(c->arg.named.name), "%sc%u", self->prefix,
			 r->serial++);
		c->arg.named.value = 77;
		c->arg.named.mode = 0600;
		break;
	case CMD_NAMED_OPEN:
		memcpy(c->arg.named.name, self->named, strlen(self->named));
		break;
	case CMD_WATCH:
		c->arg.watch.id = self->wit[0];
		c->arg.watch.op = WAITVAR_OP_EQ;
		c->arg.watch.operand = self->wit_value[0] + 1;
		break;
	case CMD_OPEN:
	case NR_CMDS:
		break;
	}
}

static bool keep_fd(struct fault_run *r, int fd)
{
	if (!r->keep || r->nr_kept_fds == MAX_KEPT)
		return false;
	r->kept_fds[r->nr_kept_fds++] = fd;
	return true;
}

/* A call succeeded: check what it returned, then undo it or keep it. */
static void settle(struct __test_metadata *_metadata, FIXTURE_DATA(faults) *self,
		   struct fault_run *r, struct call *c)
{
	uint64_t value = 0;
	uint32_t id;

	switch (c->cmd) {
	case CMD_LIST:
		EXPECT_LE(1U, c->arg.list.count) TH_LOG("LIST did not show the named witness");
		break;
	case CMD_WAITV:
		EXPECT_EQ(0U, c->arg.waitv.index);
		EXPECT_EQ(self->wit_value[0], c->arg.waitv.value);
		break;
	case CMD_CREATE:
		id = c->arg.create.id;
		ASSERT_EQ(0, waitvar_get(c->fd, id, &value));
		EXPECT_EQ(c->arg.create.value, value);
		if (!r->keep) {
			EXPECT_EQ(0, waitvar_destroy(c->fd, id));
		}
		break;
	case CMD_NAMED_CREATE:
		id = c->arg.named.id;
		ASSERT_EQ(0, waitvar_get(c->fd, id, &value));
		EXPECT_EQ(77U, value);
		if (r->keep && r->nr_kept_names < MAX_KEPT) {
			memcpy(r->kept_names[r->nr_kept_names++], c->arg.named.name,
			       sizeof(c->arg.named.name));
			break;
		}
		EXPECT_EQ(0, waitvar_named_remove(c->fd, c->arg.named.name));
		EXPECT_EQ(0, waitvar_destroy(c->fd, id));
		break;
	case CMD_NAMED_OPEN:
		id = c->arg.named.id;
		ASSERT_EQ(0, waitvar_get(c->fd, id, &value));
		EXPECT_EQ(self->named_value, value);
		if (!r->keep) {
			EXPECT_EQ(0, waitvar_destroy(c->fd, id));
		}
		break;
	case CMD_WATCH:
		EXPECT_LE(0, fcntl((int)c->arg.watch.fd, F_GETFD));
		if (!keep_fd(r, c->arg.watch.fd))
			close(c->arg.watch.fd);
		break;
	case CMD_OPEN:
		if (!keep_fd(r, c->ret))
			close(c->ret);
		break;
	case NR_CMDS:
		break;
	}
}

/*
 * One call, made again with its 1st, 2nd, 3rd ... allocation failing (and
 * the @times - 1 after it), until it makes fewer allocations than the one
 * asked to fail.  Each must return 0 or ENOMEM, and an ENOMEM must leave
 * everything as it was.
 */
static void sweep(struct __test_metadata *_metadata, FIXTURE_DATA(faults) *self,
		  struct fault_run *r, enum cmd cmd, int target, int times)
{
	struct cmd_count *n = &r->count[cmd];
	struct snap before, after;
	unsigned int nth;
	struct call c;
	char what[96];
	int injected;

	for (nth = 1; nth <= MAX_NTH; nth++) {
		take_snap(self, &before, r->snap_list[0]);
		prepare(self, r, &c, cmd, target, &before);
		injected = inject_call(&self->inj, &c, nth, times);
		ASSERT_LE(0, injected) TH_LOG("cannot arm or disarm fault injection: %s",
					      strerror(errno));
		snprintf(what, sizeof(what), "%s with allocation %u failing (times %d)",
			 cmd_names[cmd], nth, times);
		n->calls++;
		n->injected += injected;
		if (c.ret == -ENOMEM) {
			n->enomem++;
			if (!injected && r->logged++ < 20)
				TH_LOG("%s: ENOMEM though no fault was injected", what);
			take_snap(self, &after, r->snap_list[1]);
			EXPECT_TRUE(snaps_equal(_metadata, r, what, &before, &after))
				TH_LOG("%s returned ENOMEM but changed the state", what);
		} else if (c.ret >= 0) {
			n->ok++;
			settle(_metadata, self, r, &c);
		} else {
			n->other++;
			if (r->logged++ < 20)
				TH_LOG("%s: %s, not 0 or ENOMEM", what, strerror(-c.ret));
		}
		if (!injected)
			return;
	}
	EXPECT_LT(nth, (unsigned int)MAX_NTH)
		TH_LOG("%s still reached its %u-th allocation", cmd_names[cmd], MAX_NTH);
}

static bool has_fresh_variant(enum cmd cmd)
{
	return cmd == CMD_CREATE || cmd == CMD_NAMED_CREATE || cmd == CMD_NAMED_OPEN;
}

/*
 * failslab: each command swept with times 1, 2 and 4, on the witnesses'
 * file and, for those that reserve an id, on a new empty file too (where
 * the id needs a new xarray node: xa_alloc_cyclic() tries under its lock,
 * then outside it, and once past the first id again from the lowest, so
 * four failures in a row are what make it give up).  fail_page_alloc: a command reaches the
 * page allocator only when a slab needs a new page, so its calls go on
 * (keeping what they made, so that slabs fill) until a few failed; times 2
 * also fails SLUB's retry at the lower order.
 */
static void run_phase(struct __test_metadata *_metadata, FIXTURE_DATA(faults) *self,
		      struct fault_run *r, enum cmd cmd)
{
	long long deadline = now_ns() + PAGE_PHASE_MS * NSEC_PER_MSEC;
	struct cmd_count *n = &r->count[cmd];
	struct summary start, end;
	int rep, times, fresh, target, round;

	ASSERT_TRUE(read_summary(&start)) TH_LOG("cannot read %s", SUMMARY_PATH);
	if (!r->keep) {
		r->waitv_count = r->waitv_max;
		for (rep = 0; rep < SLAB_REPEATS; rep++) {
			for (times = 1; times <= 4; times *= 2) {
				for (fresh = 0; fresh <= has_fresh_variant(cmd); fresh++) {
					target = cmd == CMD_OPEN ? -1 : self->fd;
					if (fresh) {
						target = waitvar_open();
						ASSERT_LE(0, target);
					}
					sweep(_metadata, self, r, cmd, target, times);
					if (fresh)
						close(target);
				}
			}
		}
	} else {
		if (cmd == CMD_CREATE || cmd == CMD_NAMED_CREATE) {
			r->bulk_fd = waitvar_open();
			ASSERT_LE(0, r->bulk_fd);
		}
		for (round = 0; round < PAGE_ROUNDS && n->enomem < PAGE_ENOUGH &&
				now_ns() < deadline; round++) {
			times = round % 4 == 3 ? 1 : 2;
			target = cmd == CMD_OPEN ? -1 : self->fd;
			if (r->bulk_fd >= 0)
				target = r->bulk_fd;
			if (cmd == CMD_NAMED_OPEN) {
				/* Its id needs a new node: keep the files, so that nodes pile up. */
				target = waitvar_open();
				ASSERT_LE(0, target);
			}
			if (cmd == CMD_WAITV) {
				/*
				 * The large vector is allocated by kvcalloc() past a page:
				 * one failure only (its vmalloc fallback must not fail too,
				 * or it warns with a trace); the small one fits a page.
				 */
				r->waitv_count = round % 2 ? WAITV_SMALL : r->waitv_max;
				times = round % 2 ? 2 : 1;
			}
			sweep(_metadata, self, r, cmd, target, times);
			if (cmd == CMD_NAMED_OPEN && !keep_fd(r, target))
				close(target);
		}
	}
	phase_cleanup(r, self->fd);
	EXPECT_TRUE(summary_settles(&start, &end))
		TH_LOG("after the %s calls: summary " SUMMARY_FMT ", not " SUMMARY_FMT " as before them",
		       cmd_names[cmd], SUMMARY_ARGS(end), SUMMARY_ARGS(start));
}

/* Saves and sets the knobs, opens this thread's files; false if the test cannot run. */
static bool faults_arm_setup(struct __test_metadata *_metadata, FIXTURE_DATA(faults) *self,
			     enum fault_kind kind)
{
	const char *dir = kind == FAULT_SLAB ? FAILSLAB : FAILPAGE;
	const struct knob_value *kv = kind == FAULT_SLAB ? slab_config : page_config;
	size_t i, nr = kind == FAULT_SLAB ? ARRAY_LEN(slab_config) : ARRAY_LEN(page_config);
	char path[128];

	snprintf(path, sizeof(path), "%sprobability", dir);
	if (access(path, W_OK)) {
		SKIP(return false, "no %s: a kernel without %s or CONFIG_FAULT_INJECTION_DEBUG_FS",
		     path, kind == FAULT_SLAB ? "CONFIG_FAILSLAB" : "CONFIG_FAIL_PAGE_ALLOC");
	}
	if (access(SUMMARY_PATH, R_OK))
		SKIP(return false, "no %s", SUMMARY_PATH);
	snprintf(path, sizeof(path), "/proc/self/task/%d/fail-nth", gettid());
	self->inj.nth_fd = open(path, O_RDWR | O_CLOEXEC);
	if (self->inj.nth_fd < 0)
		SKIP(return false, "%s: %s", path, strerror(errno));
	snprintf(path, sizeof(path), "/proc/self/task/%d/make-it-fail", gettid());
	self->inj.mif_fd = open(path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->inj.mif_fd) TH_LOG("%s: %s", path, strerror(errno));
	snprintf(path, sizeof(path), "%stimes", dir);
	self->inj.times_fd = open(path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->inj.times_fd) TH_LOG("%s: %s", path, strerror(errno));
	/* The same writes and reads the sweeps make, once, before anything is armed. */
	ASSERT_TRUE(put(self->inj.mif_fd, "0") && put(self->inj.nth_fd, "0"));

	knobs_save(&self->knobs);
	self->knobs_saved = true;
	for (i = 0; i < nr; i++) {
		if (!write_file(kv[i].knob, kv[i].value))
			continue;
		/* The other capability may be missing: then it counts for nothing. */
		ASSERT_NE(0, strncmp(kv[i].knob, dir, strlen(dir)))
			TH_LOG("cannot set %s to %s: %s", kv[i].knob, kv[i].value, strerror(errno));
		if (access(kind == FAULT_SLAB ? FAILPAGE : FAILSLAB, F_OK) == 0)
			TH_LOG("cannot set %s to %s (%s): fail-nth may count its allocations too",
			       kv[i].knob, kv[i].value, strerror(errno));
	}
	/* These have no filter of their own: fail-nth would count (and fail) them too. */
	if (access("/sys/kernel/debug/fail_usercopy", F_OK) == 0 ||
	    access("/sys/kernel/debug/fail_futex", F_OK) == 0)
		TH_LOG("fail_usercopy or fail_futex is built in: a swept call may fail in them too "
		       "(EFAULT), which this test counts as a wrong result");
	TH_LOG("%s: probability 100, interval 1, task-filter with make-it-fail around each call, "
	       "fail-nth sweeping the allocation that fails", dir);
	return true;
}

static void run_faults(struct __test_metadata *_metadata, FIXTURE_DATA(faults) *self,
		       enum fault_kind kind)
{
	static const enum cmd order[] = { CMD_LIST, CMD_WAITV, CMD_CREATE, CMD_NAMED_CREATE,
					  CMD_NAMED_OPEN, CMD_WATCH, CMD_OPEN };
	struct waitvar_features f = {};
	struct fault_run *r;
	unsigned int names;
	struct snap warm;
	struct call c;
	size_t i;
	uint32_t k;

	ASSERT_EQ(0, waitvar_features(self->fd, &f));
	self->leaks_before = kmemleak_read();
	if (!faults_arm_setup(_metadata, self, kind))
		return;

	/* Everything the armed calls touch is written here, before: no page fault then. */
	r = malloc(sizeof(*r));
	ASSERT_TRUE(r != NULL);
	memset(r, 0, sizeof(*r));
	self->run = r;
	r->kind = kind;
	r->keep = kind == FAULT_PAGE;
	r->bulk_fd = -1;
	r->page = sysconf(_SC_PAGESIZE);
	r->waitv_max = f.waitv_max ? f.waitv_max : WAITVAR_WAITV_MAX;
	if (r->waitv_max > WAITVAR_WAITV_MAX)
		r->waitv_max = WAITVAR_WAITV_MAX;
	for (k = 0; k < WAITVAR_WAITV_MAX; k++) {
		r->entries[k].id = self->wit[k % NR_WITNESSES];
		r->entries[k].op = WAITVAR_OP_EQ;
		r->entries[k].operand = self->wit_value[k % NR_WITNESSES] + (k ? 1 : 0);
	}
	if (r->keep && !get_param("max_user_names", &names)) {
		ASSERT_EQ(0, param_override(&self->params, "max_user_names", names + MAX_KEPT));
	}

	for (i = 0; i < ARRAY_LEN(order); i++) {
		enum cmd cmd = order[i];
		bool keep = r->keep;
		int target = cmd == CMD_OPEN ? -1 : self->fd;

		/* Once plainly, so that its code and caches are in before any fault. */
		r->waitv_count = r->waitv_max;
		take_snap(self, &warm, r->snap_list[0]);
		prepare(self, r, &c, cmd, target, &warm);
		c.ret = issue(&c);
		ASSERT_LE(0, c.ret) TH_LOG("%s without faults: %s", cmd_names[cmd],
					   strerror(-c.ret));
		r->keep = false;
		settle(_metadata, self, r, &c);
		r->keep = keep;

		run_phase(_metadata, self, r, cmd);
	}
	ASSERT_EQ(0, faults_disarm(self)) TH_LOG("could not put the fault-injection knobs back");

	for (i = 0; i < NR_CMDS; i++) {
		struct cmd_count *n = &r->count[i];

		TH_LOG("%s: %u calls, %u reached the allocation made to fail, %u ENOMEM, %u succeeded, %u other",
		       cmd_names[i], n->calls, n->injected, n->enomem, n->ok, n->other);
		EXPECT_EQ(0U, n->other) TH_LOG("%s returned something other than 0 or ENOMEM",
					       cmd_names[i]);
		if (n->enomem)
			continue;
		/*
		 * Slab allocations always reach failslab; a page allocation
		 * happens only when a slab needs a new page, which a command
		 * whose one allocation is an xarray node may never cause.
		 */
		if (i == CMD_LIST || i == CMD_WAITV || kind == FAULT_PAGE) {
			TH_LOG("%s never failed: the kernel met its allocations without the %s (allowed)",
			       cmd_names[i], kind == FAULT_SLAB ? "slab allocator" : "page allocator");
		} else {
			EXPECT_LT(0U, n->enomem)
				TH_LOG("no injected fault ever made %s fail: the injection did not reach it",
				       cmd_names[i]);
		}
	}
	check_kmemleak(_metadata, self->leaks_before);
}

TEST_F_TIMEOUT(faults, every_allocating_command_fails_cleanly_under_failslab, 300)
{
	run_faults(_metadata, self, FAULT_SLAB);
}

TEST_F_TIMEOUT(faults, every_allocating_command_fails_cleanly_under_fail_page_alloc, 300)
{
	run_faults(_metadata, self, FAULT_PAGE);
}

/* 2. SIGKILL mid-wait, in every mode */

enum kid_kind {
	KID_WAIT,
	KID_WAITV,
	KID_WATCH,
};

enum kid_timeout {
	TO_NONE,
	TO_LONG,	/* a minute: SIGKILL ends it long before */
	TO_CAPPED,	/* under max_uninterruptible_ms: no signal ends it, the timeout does */
};

struct kid_plan {
	const char *what;
	enum kid_kind kind;
	uint32_t mode;
	enum kid_timeout timeout;
	char state;		/* how it sleeps in /proc */
};

/* Those that SIGKILL cannot end come last: they have the most time left when it comes. */
static const struct kid_plan kid_plans[] = {
	{ "WAIT interruptible", KID_WAIT, WAITVAR_MODE_INTERRUPTIBLE, TO_NONE, 'S' },
	{ "WAIT killable", KID_WAIT, WAITVAR_MODE_KILLABLE, TO_NONE, 'D' },
	{ "WAIT killable with a timeout", KID_WAIT, WAITVAR_MODE_KILLABLE, TO_LONG, 'D' },
	{ "WAITV interruptible", KID_WAITV, WAITVAR_MODE_INTERRUPTIBLE, TO_NONE, 'S' },
	{ "WAITV killable", KID_WAITV, WAITVAR_MODE_KILLABLE, TO_NONE, 'D' },
	{ "WATCH read()", KID_WATCH, 0, TO_NONE, 'S' },
	{ "WAIT io", KID_WAIT, WAITVAR_MODE_IO, TO_CAPPED, 'D' },
	{ "WAIT uninterruptible", KID_WAIT, WAITVAR_MODE_UNINTERRUPTIBLE, TO_CAPPED, 'D' },
	{ "WAITV io", KID_WAITV, WAITVAR_MODE_IO, TO_CAPPED, 'D' },
	{ "WAITV uninterruptible", KID_WAITV, WAITVAR_MODE_UNINTERRUPTIBLE, TO_CAPPED, 'D' },
};

#define NR_KIDS ARRAY_LEN(kid_plans)

FIXTURE(sigkill) {
	int fd;
	pid_t pid[NR_KIDS];
	volatile long long *started;	/* shared: when each child began its wait */
};

FIXTURE_SETUP(sigkill)
{
	void *p;

	self->fd = open("/dev/waitvar", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open /dev/waitvar: %s", strerror(errno));
	p = mmap(NULL, sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		 -1, 0);
	ASSERT_TRUE(p != MAP_FAILED);
	self->started = p;
}

FIXTURE_TEARDOWN(sigkill)
{
	size_t k;

	/* An uninterruptible child ends by its timeout, a few seconds at most. */
	for (k = 0; k < NR_KIDS; k++) {
		if (self->pid[k] > 0) {
			kill(self->pid[k], SIGKILL);
			waitpid(self->pid[k], NULL, 0);
		}
	}
	munmap((void *)self->started, sysconf(_SC_PAGESIZE));
	close(self->fd);
}

/* In the child: wait as @p says on ids[0] (WAITV: all three) for a 1 that never comes. */
static void kid_main(int fd, const struct kid_plan *p, const uint32_t *ids, long long capped_ns,
		     volatile long long *started)
{
	struct waitvar_waitv_entry e[3];
	uint32_t flags = p->timeout == TO_NONE ? 0 : WAITVAR_WAIT_TIMEOUT;
	long long timeout = p->timeout == TO_CAPPED ? capped_ns :
			    p->timeout == TO_LONG ? 60 * SEC_NS : 0;
	uint64_t value;
	int i, ret = 0, w;

	switch (p->kind) {
	case KID_WATCH:
		w = waitvar_watch(fd, ids[0], WAITVAR_OP_EQ, 1);
		if (w < 0)
			_exit(10);
		*started = now_ns();
		ret = read(w, &value, sizeof(value));
		break;
	case KID_WAIT:
		*started = now_ns();
		ret = waitvar_wait(fd, ids[0], WAITVAR_OP_EQ, 1, p->mode, flags, timeout, NULL);
		break;
	case KID_WAITV:
		for (i = 0; i < 3; i++)
			e[i] = (struct waitvar_waitv_entry){ .id = ids[i], .op = WAITVAR_OP_EQ,
							     .operand = 1 };
		*started = now_ns();
		ret = waitvar_waitv(fd, e, 3, p->mode, flags, timeout, NULL);
		break;
	}
	/* Only a wait that ended by its timeout before SIGKILL came gets here. */
	_exit(ret == -ETIMEDOUT ? 12 : 13);
}

TEST_F_TIMEOUT(sigkill, sigkill_mid_wait_in_every_mode, 120)
{
	long long capped = uninterruptible_timeout_ns(3 * SEC_NS);
	long long ended[NR_KIDS] = {}, t_kill, deadline;
	int status[NR_KIDS] = {}, left = NR_KIDS;
	struct waiter w = { .fd = self->fd, .op = WAITVAR_OP_EQ, .operand = 2,
			    .mode = WAITVAR_MODE_INTERRUPTIBLE };
	struct waitvar_stats st;
	uint32_t ids[3];
	uint64_t value = 0;
	size_t k;
	pid_t got;

	for (k = 0; k < 3; k++) {
		ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &ids[k]));
	}
	for (k = 0; k < NR_KIDS; k++) {
		fflush(stdout);
		fflush(stderr);
		self->pid[k] = fork();
		ASSERT_LE(0, self->pid[k]);
		if (self->pid[k] == 0)
			kid_main(self->fd, &kid_plans[k], ids, capped, &self->started[k]);
		ASSERT_TRUE(task_sleeps_in(self->pid[k], self->pid[k], kid_plans[k].state))
			TH_LOG("%s: the child does not sleep in %c", kid_plans[k].what,
			       kid_plans[k].state);
	}
	/* Every child waits on ids[0]; the WAITVs on all three. */
	ASSERT_EQ((uint32_t)NR_KIDS, wait_stat(self->fd, ids[0], waiters, (uint32_t)NR_KIDS));
	ASSERT_EQ(4U, wait_stat(self->fd, ids[1], waiters, 4U));
	ASSERT_EQ(4U, wait_stat(self->fd, ids[2], waiters, 4U));

	t_kill = now_ns();
	for (k = 0; k < NR_KIDS; k++) {
		ASSERT_EQ(0, kill(self->pid[k], SIGKILL));
	}
	deadline = t_kill + capped + 15 * SEC_NS;
	while (left && now_ns() < deadline) {
		for (k = 0; k < NR_KIDS; k++) {
			if (self->pid[k] <= 0)
				continue;
			got = waitpid(self->pid[k], &status[k], WNOHANG);
			if (got != self->pid[k])
				continue;
			ended[k] = now_ns();
			self->pid[k] = 0;
			left--;
		}
		usleep(2000);
	}
	ASSERT_EQ(0, left) TH_LOG("%d children still alive %lld ms after SIGKILL", left,
				  (now_ns() - t_kill) / NSEC_PER_MSEC);

	for (k = 0; k < NR_KIDS; k++) {
		const struct kid_plan *p = &kid_plans[k];
		long long start = self->started[k];
		bool killed = WIFSIGNALED(status[k]) && WTERMSIG(status[k]) == SIGKILL;

		if (p->timeout == TO_CAPPED) {
			/* No signal ends it: it ends when its timeout passes, never sooner. */
			EXPECT_LE(start + capped, ended[k])
				TH_LOG("%s ended %lld ms after it started: before its %lld ms timeout",
				       p->what, (ended[k] - start) / NSEC_PER_MSEC,
				       capped / NSEC_PER_MSEC);
			/* Unless its timeout had passed already when SIGKILL came. */
			EXPECT_TRUE(killed || (t_kill >= start + capped && WIFEXITED(status[k]) &&
					       WEXITSTATUS(status[k]) == 12))
				TH_LOG("%s: status %#x, not killed by SIGKILL", p->what, status[k]);
		} else {
			EXPECT_TRUE(killed) TH_LOG("%s: status %#x, not killed by SIGKILL", p->what,
						   status[k]);
			EXPECT_GT(5 * SEC_NS, ended[k] - t_kill)
				TH_LOG("%s took %lld ms to die", p->what,
				       (ended[k] - t_kill) / NSEC_PER_MSEC);
		}
	}

	for (k = 0; k < 3; k++) {
		EXPECT_EQ(0U, wait_stat(self->fd, ids[k], waiters, 0U))
			TH_LOG("variable %zu keeps waiters of dead children", k);
	}
	/* WAIT x3 and WAITV x2 were ended by the signal, the four capped ones by their timeouts. */
	ASSERT_EQ(0, waitvar_stats(self->fd, ids[0], &st));
	EXPECT_EQ(5U, st.signals);
	EXPECT_EQ(4U, st.timeouts);
	ASSERT_EQ(0, waitvar_stats(self->fd, ids[1], &st));
	EXPECT_EQ(2U, st.signals);
	EXPECT_EQ(2U, st.timeouts);

	/* The variable is as usable as before. */
	ASSERT_EQ(0, waitvar_set(self->fd, ids[0], 1));
	ASSERT_EQ(0, waitvar_get(self->fd, ids[0], &value));
	EXPECT_EQ(1U, value);
	w.id = ids[0];
	ASSERT_EQ(0, waiter_start(&w));
	ASSERT_TRUE(waiter_sleeps(&w));
	ASSERT_EQ(0, waitvar_set(self->fd, ids[0], 2));
	ASSERT_EQ(0, pthread_join(w.thread, NULL));
	EXPECT_EQ(0, w.ret);
	EXPECT_EQ(2U, w.seen);
	EXPECT_EQ(0U, wait_stat(self->fd, ids[0], waiters, 0U));
}

/* 3. Closing the descriptor under waiters, and a process exiting under them */

FIXTURE(closing) {
	int fd[3];
	struct summary base;
};

FIXTURE_SETUP(closing)
{
	self->fd[0] = self->fd[1] = self->fd[2] = -1;
	ASSERT_TRUE(read_summary(&self->base)) TH_LOG("cannot read %s", SUMMARY_PATH);
}

FIXTURE_TEARDOWN(closing)
{
	int i;

	for (i = 0; i < 3; i++)
		if (self->fd[i] >= 0)
			close(self->fd[i]);
}

#define CLOSE_WAIT_NS (30 * SEC_NS)
#define CLOSE_SHORT_NS (1500 * NSEC_PER_MSEC)

/*
 * A child: its threads wait in every way on a file of its own, it says it
 * is ready, and on the go its main thread returns (exit_group) under them.
 */
static int exiting_child(struct peer *parent, void *arg)
{
	long long capped = *(long long *)arg;
	struct waiter w[4];
	struct vwaiter v = {};
	struct reader rd = {};
	uint32_t id = 0;
	int fd = waitvar_open(), i;

	CHILD_CHECK(fd >= 0, "open /dev/waitvar");
	CHILD_CHECK(!waitvar_create(fd, 0, 0, &id), "CREATE");
	w[0] = (struct waiter){ .mode = WAITVAR_MODE_INTERRUPTIBLE };
	w[1] = (struct waiter){ .mode = WAITVAR_MODE_KILLABLE };
	w[2] = (struct waiter){ .mode = WAITVAR_MODE_IO, .flags = WAITVAR_WAIT_TIMEOUT,
				.timeout_ns = capped };
	w[3] = (struct waiter){ .mode = WAITVAR_MODE_UNINTERRUPTIBLE,
				.flags = WAITVAR_WAIT_TIMEOUT, .timeout_ns = capped };
	for (i = 0; i < 4; i++) {
		w[i].fd = fd;
		w[i].id = id;
		w[i].op = WAITVAR_OP_EQ;
		w[i].operand = 1;
		CHILD_CHECK(!waiter_start(&w[i]), "thread");
		CHILD_CHECK(waiter_sleeps_in(&w[i], i ? 'D' : 'S'), "waiter %d does not sleep", i);
	}
	v.fd = fd;
	v.e[0] = (struct waitvar_waitv_entry){ .id = id, .op = WAITVAR_OP_EQ, .operand = 1 };
	v.count = 1;
	CHILD_CHECK(!pthread_create(&v.thread, NULL, vwaiter_main, &v), "thread");
	CHILD_CHECK(thread_sleeps_in(&v.tid, &v.done, 'S'), "WAITV does not sleep");
	rd.wfd = waitvar_watch(fd, id, WAITVAR_OP_EQ, 1);
	CHILD_CHECK(rd.wfd >= 0, "WATCH: %s", strerror(-rd.wfd));
	CHILD_CHECK(!pthread_create(&rd.thread, NULL, reader_main, &rd), "thread");
	CHILD_CHECK(thread_sleeps_in(&rd.tid, &rd.done, 'S'), "read() does not sleep");
	CHILD_CHECK(wait_stat(fd, id, waiters, 6U) == 6U, "STATS.waiters is not 6");
	CHILD_CHECK(peer_send(parent), "cannot tell the parent");
	CHILD_CHECK(peer_recv(parent), "no go from the parent");
	/* Returning exits the process with its six threads still waiting. */
	return 0;
}

TEST_F_TIMEOUT(closing, close_under_waiters, 120)
{
	long long capped = uninterruptible_timeout_ns(1 * SEC_NS), t0;
	struct waiter w[4], s;
	struct vwaiter v = {}, sv = {};
	long v_sleeps, sv_sleeps;
	bool asleep;
	struct summary now, with_c;
	struct waitvar_stats st;
	struct peer child;
	uint32_t id[3], cid = 0;
	int i, ret;

	/* Part 1: threads wait through fd[0]; another thread closes it; DESTROY via a dup ends them. */
	self->fd[0] = waitvar_open();
	ASSERT_LE(0, self->fd[0]);
	self->fd[1] = dup(self->fd[0]);
	ASSERT_LE(0, self->fd[1]);
	ASSERT_EQ(0, waitvar_create(self->fd[0], 0, 0, &id[0]));
	ASSERT_EQ(0, waitvar_create(self->fd[0], 0, WAITVAR_CREATE_MUTEX, &id[1]));
	ASSERT_EQ(0, waitvar_create(self->fd[0], 0, WAITVAR_CREATE_SPINLOCK, &id[2]));
	w[0] = (struct waiter){ .id = id[0], .mode = WAITVAR_MODE_INTERRUPTIBLE };
	w[1] = (struct waiter){ .id = id[0], .mode = WAITVAR_MODE_KILLABLE,
				.flags = WAITVAR_WAIT_EXCLUSIVE };
	w[2] = (struct waiter){ .id = id[1], .mode = WAITVAR_MODE_KILLABLE };
	w[3] = (struct waiter){ .id = id[2], .mode = WAITVAR_MODE_INTERRUPTIBLE };
	for (i = 0; i < 4; i++) {
		w[i].fd = self->fd[0];
		w[i].op = WAITVAR_OP_EQ;
		w[i].operand = 1;
		/* Bounded, in case DESTROY does not end them. */
		w[i].flags |= WAITVAR_WAIT_TIMEOUT;
		w[i].timeout_ns = CLOSE_WAIT_NS;
		ASSERT_EQ(0, waiter_start(&w[i]));
		ASSERT_TRUE(waiter_sleeps_in(&w[i], w[i].mode == WAITVAR_MODE_KILLABLE ? 'D' : 'S'));
	}
	v.fd = self->fd[0];
	for (i = 0; i < 3; i++)
		v.e[i] = (struct waitvar_waitv_entry){ .id = id[i], .op = WAITVAR_OP_EQ,
						       .operand = 1 };
	v.count = 3;
	v.mode = WAITVAR_MODE_INTERRUPTIBLE;
	v.flags = WAITVAR_WAIT_TIMEOUT;
	v.timeout_ns = CLOSE_WAIT_NS;
	ASSERT_EQ(0, pthread_create(&v.thread, NULL, vwaiter_main, &v));
	ASSERT_TRUE(thread_sleeps_in(&v.tid, &v.done, 'S'));
	v_sleeps = task_asleep_count(getpid(), atomic_load(&v.tid), 'S');
	ASSERT_LE(0, v_sleeps);
	ASSERT_EQ(3U, wait_stat(self->fd[1], id[0], waiters, 3U));

	/*
	 * close() runs the file's flush synchronously: a wake from it would
	 * leave its waiter runnable, or asleep once more, when close() returns.
	 */
	ASSERT_EQ(0, close(self->fd[0]));
	self->fd[0] = -1;
	for (i = 0; i < 4; i++) {
		/* Braced: an EXPECT is two statements, its log the second. */
		EXPECT_TRUE(waiter_not_woken(&w[i], w[i].mode == WAITVAR_MODE_KILLABLE ? 'D' : 'S'))
			TH_LOG("close() woke waiter %d on its file", i);
	}
	EXPECT_TRUE(thread_not_woken(&v.tid, &v.done, v_sleeps))
		TH_LOG("close() woke a WAITV on its file");
	ASSERT_EQ(0, waitvar_stats(self->fd[1], id[0], &st));
	EXPECT_EQ(3U, st.waiters);
	ASSERT_EQ(0, waitvar_stats(self->fd[1], id[1], &st));
	EXPECT_EQ(2U, st.waiters);

	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, waitvar_destroy(self->fd[1], id[i]));
	}
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, pthread_join(w[i].thread, NULL));
		EXPECT_EQ(-EIDRM, w[i].ret) TH_LOG("waiter %d: %s", i, strerror(-w[i].ret));
	}
	ASSERT_EQ(0, pthread_join(v.thread, NULL));
	EXPECT_EQ(-EIDRM, v.ret) TH_LOG("WAITV: %s", strerror(-v.ret));
	ASSERT_EQ(0, close(self->fd[1]));
	self->fd[1] = -1;
	EXPECT_TRUE(summary_settles(&self->base, &now))
		TH_LOG("summary " SUMMARY_FMT ", not " SUMMARY_FMT, SUMMARY_ARGS(now),
		       SUMMARY_ARGS(self->base));

	/*
	 * Part 2: the only descriptor is closed under two waits: the ioctls
	 * in flight keep the file, the waits go on to their timeouts, and the
	 * file goes when the last of them returns.
	 */
	self->fd[2] = waitvar_open();
	ASSERT_LE(0, self->fd[2]);
	ASSERT_EQ(0, waitvar_create(self->fd[2], 0, 0, &cid));
	s = (struct waiter){ .fd = self->fd[2], .id = cid, .op = WAITVAR_OP_EQ, .operand = 1,
			     .mode = WAITVAR_MODE_INTERRUPTIBLE, .flags = WAITVAR_WAIT_TIMEOUT,
			     .timeout_ns = CLOSE_SHORT_NS };
	sv.fd = self->fd[2];
	sv.e[0] = (struct waitvar_waitv_entry){ .id = cid, .op = WAITVAR_OP_EQ, .operand = 1 };
	sv.count = 1;
	sv.flags = WAITVAR_WAIT_TIMEOUT;
	sv.timeout_ns = CLOSE_SHORT_NS;
	t0 = now_ns();
	ASSERT_EQ(0, waiter_start(&s));
	ASSERT_EQ(0, pthread_create(&sv.thread, NULL, vwaiter_main, &sv));
	ASSERT_TRUE(waiter_sleeps(&s));
	ASSERT_TRUE(thread_sleeps_in(&sv.tid, &sv.done, 'S'));
	sv_sleeps = task_asleep_count(getpid(), atomic_load(&sv.tid), 'S');
	ASSERT_LE(0, sv_sleeps);
	ASSERT_TRUE(read_summary(&with_c));
	ASSERT_EQ(0, close(self->fd[2]));
	self->fd[2] = -1;
	asleep = waiter_not_woken(&s, 'S') && thread_not_woken(&sv.tid, &sv.done, sv_sleeps);
	/* Decided only while the waits' own timeouts cannot have woken them. */
	if (now_ns() < t0 + CLOSE_SHORT_NS) {
		EXPECT_TRUE(asleep) TH_LOG("closing the only descriptor woke a wait in flight");
		ASSERT_TRUE(read_summary(&now));
		EXPECT_EQ(with_c.files, now.files) TH_LOG("the file went while ioctls were in flight");
		EXPECT_EQ(with_c.waiters, now.waiters);
	}
	ASSERT_EQ(0, pthread_join(s.thread, NULL));
	ASSERT_EQ(0, pthread_join(sv.thread, NULL));
	EXPECT_EQ(-ETIMEDOUT, s.ret) TH_LOG("WAIT: %s", strerror(-s.ret));
	EXPECT_EQ(-ETIMEDOUT, sv.ret) TH_LOG("WAITV: %s", strerror(-sv.ret));
	EXPECT_LE(t0 + CLOSE_SHORT_NS, now_ns());
	EXPECT_TRUE(summary_settles(&self->base, &now))
		TH_LOG("after the last wait returned: summary " SUMMARY_FMT ", not " SUMMARY_FMT,
		       SUMMARY_ARGS(now), SUMMARY_ARGS(self->base));

	/* Part 3: a process exits (exit_group) while six of its threads wait. */
	ASSERT_EQ(0, peer_start(&child, AS_ROOT, exiting_child, &capped));
	ASSERT_TRUE(peer_recv(&child)) TH_LOG("the child's threads did not all start waiting");
	ASSERT_TRUE(read_summary(&now));
	EXPECT_EQ(self->base.waiters + 6, now.waiters);
	EXPECT_EQ(self->base.files + 1, now.files);
	ASSERT_TRUE(peer_send(&child));
	ret = peer_wait(&child, 15000);
	EXPECT_EQ(0, ret) TH_LOG("the child: status %d", ret);
	EXPECT_TRUE(summary_settles(&self->base, &now))
		TH_LOG("after the process exited under its waiters: summary " SUMMARY_FMT
		       ", not " SUMMARY_FMT, SUMMARY_ARGS(now), SUMMARY_ARGS(self->base));
}

/* 4. DESTROY and CREATE race every command */

#define RACE_MS 3000
#define RACE_IDS 9		/* slots of hammered ids; slot 0 holds 0, never valid */
#define RACE_HAMMERS 4
#define RACE_NAMES 4
#define RACE_NAMED 0x80000000u	/* in a slot: the id came from NAMED_* */
#define RACE_LOCKED 0x40000000u	/* in a slot: the variable has, or may have, a lock */
#define RACE_TAGS (RACE_NAMED | RACE_LOCKED)
#define RACE_ID_SPACE (1U << 24)	/* max_vars_per_file for the race: no id comes back */

enum race_op {
	R_GET, R_SET, R_ADD, R_DEC_AND_WAKE, R_CMPXCHG, R_WAKE, R_WAKE_NR, R_WAIT, R_WAITV,
	R_WATCH, R_STATS, R_DESTROY, R_CREATE, NR_RACE_OPS
};

static const char *const race_op_names[NR_RACE_OPS] = {
	"GET", "SET", "ADD", "DEC_AND_WAKE", "CMPXCHG", "WAKE", "WAKE_NR", "WAIT", "WAITV",
	"WATCH", "STATS", "DESTROY", "CREATE",
};

struct race;

struct race_thread {
	struct race *race;
	pthread_t thread;
	bool started;
	atomic_int finished;
	unsigned int seed;
	unsigned long ops, unexpected;
	char first[192];
};

struct race {
	int fd;
	char prefix[24];
	long long cap_ns;	/* longest IO or UNINTERRUPTIBLE timeout */
	atomic_int stop;
	/*
	 * The ids the hammers pick from, each one CREATE or NAMED_* returned,
	 * tagged RACE_NAMED and RACE_LOCKED as that call was.  Ids are cyclic,
	 * and the race makes fewer than RACE_ID_SPACE: a number names one
	 * variable for the whole race.
	 */
	_Atomic uint32_t ids[RACE_IDS];
	struct race_thread th[RACE_HAMMERS + 2];
};

static void race_bad(struct race_thread *t, const char *what, uint32_t id, int ret)
{
	if (!t->unexpected++)
		snprintf(t->first, sizeof(t->first), "%s on id %u returned %d (%s)", what, id, ret,
			 ret < 0 ? strerror(-ret) : "?");
}

static uint32_t race_rand(struct race_thread *t, uint32_t n)
{
	return (uint32_t)rand_r(&t->seed) % n;
}

static uint32_t race_lock(struct race_thread *t)
{
	static const uint32_t locks[] = { 0, 0, WAITVAR_CREATE_SPINLOCK, WAITVAR_CREATE_MUTEX };

	return locks[race_rand(t, ARRAY_LEN(locks))];
}

/*
 * An id of a random slot: 0, a live id, or one since destroyed; its tags
 * go to @tags, if not NULL.
 */
static uint32_t race_id(struct race_thread *t, uint32_t *tags)
{
	uint32_t slot = atomic_load(&t->race->ids[race_rand(t, RACE_IDS)]);

	if (tags)
		*tags = slot & RACE_TAGS;
	return slot & ~RACE_TAGS;
}

/*
 * A command on a gone id: ENOENT, or EIDRM if the id was attached to a
 * name since removed.  A DESTROY racing the command must not make it
 * EIDRM.
 */
static bool race_gone(int ret, uint32_t tags)
{
	return ret == -ENOENT || ((tags & RACE_NAMED) && ret == -EIDRM);
}

/*
 * @id, just made, takes a random slot but 0; the id it replaces is
 * destroyed (it may be gone already): every live id is in a slot.
 */
static void race_adopt(struct race_thread *t, uint32_t id, uint32_t tags)
{
	uint32_t old = atomic_exchange(&t->race->ids[1 + race_rand(t, RACE_IDS - 1)], id | tags);
	int ret = waitvar_destroy(t->race->fd, old & ~RACE_TAGS);

	if (ret && ret != -ENOENT)
		race_bad(t, "DESTROY of a replaced id", old & ~RACE_TAGS, ret);
}

/* A relative timeout of 1 to 5 ms, within the uninterruptible cap. */
static long long race_timeout(struct race_thread *t)
{
	long long ns = (1 + race_rand(t, 5)) * NSEC_PER_MSEC;

	return ns < t->race->cap_ns ? ns : t->race->cap_ns;
}

/* One command on the id of a random slot; its result must be one its documentation allows. */
static void race_op(struct race_thread *t, enum race_op op)
{
	struct race *r = t->race;
	struct waitvar_waitv_entry e[4];
	uint32_t tags, id = race_id(t, &tags), nid = 0, mode, flags, n, i, any;
	const char *what = race_op_names[op];
	struct waitvar_stats st;
	struct pollfd pfd;
	uint64_t v = 0;
	ssize_t len;
	int ret, w;

	switch (op) {
	case R_GET:
		ret = waitvar_get(r->fd, id, &v);
		break;
	case R_SET:
		ret = waitvar_set(r->fd, id, race_rand(t, 3));
		break;
	case R_ADD:
		ret = waitvar_add(r->fd, id, 1, WAITVAR_ADD_WAKE, &v);
		break;
	case R_DEC_AND_WAKE:
		ret = waitvar_dec_and_wake(r->fd, id, &v);
		break;
	case R_CMPXCHG:
		ret = waitvar_cmpxchg(r->fd, id, race_rand(t, 3), race_rand(t, 3), &v);
		break;
	case R_WAKE:
		ret = waitvar_wake(r->fd, id);
		break;
	case R_STATS:
		ret = waitvar_stats(r->fd, id, &st);
		break;
	case R_DESTROY:
		ret = waitvar_destroy(r->fd, id);
		break;
	case R_WAKE_NR:
		ret = waitvar_wake_nr(r->fd, id, race_rand(t, 3),
				      race_rand(t, 2) ? WAITVAR_WAKE_FILTER : 0);
		if (ret < 0 && !race_gone(ret, tags))
			race_bad(t, what, id, ret);
		return;
	case R_WAIT:
		mode = race_rand(t, WAITVAR_MODE_COUNT);
		flags = WAITVAR_WAIT_TIMEOUT | (race_rand(t, 4) ? 0 : WAITVAR_WAIT_EXCLUSIVE);
		ret = waitvar_wait(r->fd, id, race_rand(t, WAITVAR_OP_COUNT), race_rand(t, 3), mode,
				   flags, race_timeout(t), &v);
		/*
		 * EIDRM: destroyed while waiting.  EINVAL: EXCLUSIVE or IO on
		 * a lock-protected variable.
		 */
		if (ret && ret != -ENOENT && ret != -ETIMEDOUT && ret != -EIDRM &&
		    !(ret == -EINVAL && (tags & RACE_LOCKED) &&
		      (mode == WAITVAR_MODE_IO || (flags & WAITVAR_WAIT_EXCLUSIVE))))
			race_bad(t, what, id, ret);
		return;
	case R_WAITV:
		n = 1 + race_rand(t, 4);
		any = tags;
		for (i = 0; i < n; i++) {
			uint32_t more = 0;

			e[i] = (struct waitvar_waitv_entry){ .id = i ? race_id(t, &more) : id,
							     .op = race_rand(t, WAITVAR_OP_COUNT),
							     .operand = race_rand(t, 3) };
			any |= more;
		}
		mode = race_rand(t, WAITVAR_MODE_COUNT);
		ret = waitvar_waitv(r->fd, e, n, mode, WAITVAR_WAIT_TIMEOUT, race_timeout(t), &v);
		/* EIDRM: a variable destroyed while waiting; EINVAL: IO on a locked one. */
		if (ret < 0 && ret != -ENOENT && ret != -ETIMEDOUT && ret != -EIDRM &&
		    !(ret == -EINVAL && mode == WAITVAR_MODE_IO && (any & RACE_LOCKED)))
			race_bad(t, what, id, ret);
		if (ret >= (int)n)
			race_bad(t, "WAITV index", id, ret);
		return;
	case R_WATCH:
		w = waitvar_watch(r->fd, id, WAITVAR_OP_EQ, race_rand(t, 3));
		if (race_gone(w, tags))
			return;
		if (w < 0) {
			race_bad(t, what, id, w);
			return;
		}
		pfd = (struct pollfd){ .fd = w, .events = POLLIN };
		if (poll(&pfd, 1, 0) < 0)
			race_bad(t, "poll of a WATCH", id, -errno);
		if (fcntl(w, F_SETFL, O_NONBLOCK))
			race_bad(t, "fcntl of a WATCH", id, -errno);
		len = read(w, &v, sizeof(v));
		if (len != sizeof(v) && !(len < 0 && (errno == EAGAIN || errno == EIDRM)))
			race_bad(t, "read of a WATCH", id, len < 0 ? -errno : (int)len);
		close(w);
		return;
	case R_CREATE:
		flags = race_lock(t);
		ret = waitvar_create(r->fd, 0, flags, &nid);
		if (ret)
			race_bad(t, what, nid, ret);
		else
			race_adopt(t, nid, flags ? RACE_LOCKED : 0);
		return;
	case NR_RACE_OPS:
		return;
	}
	if (ret && !race_gone(ret, tags))
		race_bad(t, what, id, ret);
}

static void *hammer_main(void *data)
{
	struct race_thread *t = data;

	while (!atomic_load(&t->race->stop)) {
		race_op(t, race_rand(t, NR_RACE_OPS));
		t->ops++;
	}
	atomic_store(&t->finished, 1);
	return NULL;
}

/* DESTROYs the slots' ids and CREATEs new ones, with and without a lock. */
static void *destroyer_main(void *data)
{
	struct race_thread *t = data;
	struct race *r = t->race;
	uint32_t id, nid, lock;
	int ret;

	while (!atomic_load(&r->stop)) {
		id = race_id(t, NULL);
		ret = waitvar_destroy(r->fd, id);
		if (ret && ret != -ENOENT)
			race_bad(t, "DESTROY", id, ret);
		nid = 0;
		lock = race_lock(t);
		ret = waitvar_create(r->fd, race_rand(t, 3), lock, &nid);
		if (ret)
			race_bad(t, "CREATE", id, ret);
		else
			race_adopt(t, nid, lock ? RACE_LOCKED : 0);
		t->ops++;
		if (t->ops % 8 == 0)
			usleep(200);
	}
	atomic_store(&t->finished, 1);
	return NULL;
}

/* Makes, attaches, removes and lists a few names, whose ids join the hammered ones. */
static void *namer_main(void *data)
{
	struct race_thread *t = data;
	struct race *r = t->race;
	char name[WAITVAR_NAME_MAX], list[4096];
	uint32_t id, count, needed, lock;
	int ret;

	while (!atomic_load(&r->stop)) {
		snprintf(name, sizeof(name), "%sr%u", r->prefix, race_rand(t, RACE_NAMES));
		id = 0;
		/* NAMED_OPEN may attach a lock-protected variable: assume it does. */
		lock = WAITVAR_CREATE_MUTEX;
		switch (race_rand(t, 4)) {
		case 0:
			lock = race_lock(t);
			ret = waitvar_named_create(r->fd, name, 0, lock, 0600, &id);
			if (ret && ret != -EEXIST)
				race_bad(t, "NAMED_CREATE", 0, ret);
			break;
		case 1:
			ret = waitvar_named_open(r->fd, name, &id);
			if (ret && ret != -ENOENT)
				race_bad(t, "NAMED_OPEN", 0, ret);
			break;
		case 2:
			ret = waitvar_named_remove(r->fd, name);
			if (ret && ret != -ENOENT)
				race_bad(t, "NAMED_REMOVE", 0, ret);
			break;
		default:
			ret = waitvar_list(r->fd, list, sizeof(list), &count, &needed);
			if (ret)
				race_bad(t, "LIST", 0, ret);
			break;
		}
		if (id)
			race_adopt(t, id, RACE_NAMED | (lock ? RACE_LOCKED : 0));
		t->ops++;
	}
	atomic_store(&t->finished, 1);
	return NULL;
}

FIXTURE(race) {
	struct race *r;
	struct summary base;
	struct saved_params params;
};

FIXTURE_SETUP(race)
{
	ASSERT_TRUE(read_summary(&self->base)) TH_LOG("cannot read %s", SUMMARY_PATH);
	self->r = calloc(1, sizeof(*self->r));
	ASSERT_TRUE(self->r != NULL);
	self->r->fd = -1;
	ASSERT_EQ(0, param_override(&self->params, "max_vars_per_file", RACE_ID_SPACE));
}

FIXTURE_TEARDOWN(race)
{
	struct race *r = self->r;
	size_t i;
	int fd;

	/* Threads still running (a failed ASSERT) are stopped; their waits are all short. */
	atomic_store(&r->stop, 1);
	for (i = 0; i < ARRAY_LEN(r->th); i++)
		if (r->th[i].started)
			pthread_join(r->th[i].thread, NULL);
	if (r->fd >= 0)
		close(r->fd);
	fd = waitvar_open();
	if (fd >= 0) {
		remove_prefixed_names(fd, r->prefix);
		close(fd);
	}
	free(r);
	EXPECT_EQ(0, params_restore(&self->params));
}

TEST_F_TIMEOUT(race, destroy_races_every_command, 120)
{
	struct race *r = self->r;
	struct timespec until;
	struct summary now;
	unsigned long bad = 0;
	uint32_t id;
	size_t i;
	int fd;

	r->fd = waitvar_open();
	ASSERT_LE(0, r->fd);
	snprintf(r->prefix, sizeof(r->prefix), "/wvr%d-", getpid());
	r->cap_ns = uninterruptible_timeout_ns(5 * NSEC_PER_MSEC);
	for (i = 1; i < RACE_IDS; i++) {
		ASSERT_EQ(0, waitvar_create(r->fd, 0, 0, &id));
		atomic_store(&r->ids[i], id);
	}
	for (i = 0; i < ARRAY_LEN(r->th); i++) {
		void *(*fn)(void *) = i < RACE_HAMMERS ? hammer_main :
				      i == RACE_HAMMERS ? destroyer_main : namer_main;

		r->th[i].race = r;
		r->th[i].seed = getpid() * 31 + i;
		ASSERT_EQ(0, pthread_create(&r->th[i].thread, NULL, fn, &r->th[i]));
		r->th[i].started = true;
	}
	usleep(RACE_MS * 1000);
	atomic_store(&r->stop, 1);

	/* Every wait has a timeout of a few ms: each thread stops at once, or hangs. */
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 30;
	for (i = 0; i < ARRAY_LEN(r->th); i++) {
		ASSERT_EQ(0, pthread_timedjoin_np(r->th[i].thread, NULL, &until))
			TH_LOG("thread %zu did not stop within 30 s: a command hangs", i);
		r->th[i].started = false;
		TH_LOG("thread %zu: %lu commands, %lu unexpected results%s%s", i, r->th[i].ops,
		       r->th[i].unexpected, r->th[i].unexpected ? ", first: " : "",
		       r->th[i].first);
		bad += r->th[i].unexpected;
		EXPECT_LT(0UL, r->th[i].ops);
	}
	EXPECT_EQ(0UL, bad) TH_LOG("commands returned errors their documentation does not allow");

	ASSERT_EQ(0, close(r->fd));
	r->fd = -1;
	fd = waitvar_open();
	ASSERT_LE(0, fd);
	remove_prefixed_names(fd, r->prefix);
	close(fd);
	EXPECT_TRUE(summary_settles(&self->base, &now))
		TH_LOG("once all is closed: summary " SUMMARY_FMT ", not " SUMMARY_FMT,
		       SUMMARY_ARGS(now), SUMMARY_ARGS(self->base));
}

/* 5. The module: unload refused while in use, then 100 loads and unloads */

#define MODULE_DIR "/sys/module/waitvar"
#define LOAD_CYCLES 100

static bool module_live(void)
{
	char state[32];

	return read_file(MODULE_DIR "/initstate", state, sizeof(state)) > 0 &&
	       !strncmp(state, "live", 4);
}

/* 0 or -errno, as rmmod would: never waiting for the users to go. */
static int unload_module(void)
{
	return syscall(SYS_delete_module, "waitvar", O_NONBLOCK) ? -errno : 0;
}

static int load_module(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, "", 0) ? -errno : 0;
	close(fd);
	return ret;
}

/* Waits up to 5 s for /dev/waitvar (devtmpfs) to be there, or to be gone. */
static bool dev_node(bool present)
{
	long long deadline = now_ns() + 5 * SEC_NS;

	do {
		if ((access("/dev/waitvar", F_OK) == 0) == present)
			return true;
		usleep(1000);
	} while (now_ns() < deadline);
	return false;
}

FIXTURE(module) {
	const char *path;
	int fd, wfd;
};

FIXTURE_SETUP(module)
{
	self->path = getenv("WAITVAR_MODULE");
	self->fd = self->wfd = -1;
}

FIXTURE_TEARDOWN(module)
{
	int ret;

	if (self->wfd >= 0)
		close(self->wfd);
	if (self->fd >= 0)
		close(self->fd);
	/* The runner expects the module loaded after this program. */
	if (self->path && *self->path && access(MODULE_DIR, F_OK)) {
		ret = load_module(self->path);
		EXPECT_EQ(0, ret) TH_LOG("could not load %s again: %s", self->path, strerror(-ret));
		EXPECT_TRUE(dev_node(true));
	}
}

TEST_F_TIMEOUT(module, module_unload_refused_while_in_use_and_load_unload_100_times, 300)
{
	char name[WAITVAR_NAME_MAX];
	long long total = 0, t0;
	uint64_t value = 0;
	uint32_t id = 0;
	int i, ret;

	if (!self->path || !*self->path)
		SKIP(return, "WAITVAR_MODULE is not set: no module to load");
	if (access(self->path, R_OK))
		SKIP(return, "WAITVAR_MODULE=%s: %s", self->path, strerror(errno));
	if (access(MODULE_DIR, F_OK) == 0 && access(MODULE_DIR "/initstate", F_OK))
		SKIP(return, "/dev/waitvar is built into the kernel");
	if (!module_live()) {
		ret = load_module(self->path);
		ASSERT_EQ(0, ret) TH_LOG("load %s: %s", self->path, strerror(-ret));
	}
	ASSERT_TRUE(dev_node(true));
	snprintf(name, sizeof(name), "/wvm%d", getpid());

	/* An open file pins the module. */
	self->fd = waitvar_open();
	ASSERT_LE(0, self->fd);
	ret = unload_module();
	EXPECT_TRUE(ret == -EBUSY || ret == -EAGAIN)
		TH_LOG("unload with /dev/waitvar open: %d (%s), not EBUSY or EAGAIN", ret,
		       strerror(-ret));
	ASSERT_TRUE(module_live()) TH_LOG("the module went while a file was open");
	ASSERT_EQ(0, waitvar_create(self->fd, 5, 0, &id));

	/* So does a WATCH descriptor alone, which sees its variable die with the file. */
	self->wfd = waitvar_watch(self->fd, id, WAITVAR_OP_EQ, 6);
	ASSERT_LE(0, self->wfd);
	close(self->fd);
	self->fd = -1;
	ret = unload_module();
	EXPECT_TRUE(ret == -EBUSY || ret == -EAGAIN)
		TH_LOG("unload with only a WATCH descriptor open: %d (%s), not EBUSY or EAGAIN",
		       ret, strerror(-ret));
	ASSERT_TRUE(module_live()) TH_LOG("the module went while a WATCH descriptor was open");
	EXPECT_EQ(-1, read(self->wfd, &value, sizeof(value)));
	EXPECT_EQ(EIDRM, errno);
	close(self->wfd);
	self->wfd = -1;

	/* A named variable, with no file open, does not: the unload removes it. */
	self->fd = waitvar_open();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, waitvar_named_create(self->fd, name, 9, 0, 0600, &id));
	close(self->fd);
	self->fd = -1;
	ret = unload_module();
	ASSERT_EQ(0, ret) TH_LOG("unload with only a named variable left: %s", strerror(-ret));
	EXPECT_NE(0, access(MODULE_DIR, F_OK));
	EXPECT_TRUE(dev_node(false)) TH_LOG("/dev/waitvar is still there after the unload");
	ret = load_module(self->path);
	ASSERT_EQ(0, ret) TH_LOG("load %s: %s", self->path, strerror(-ret));
	ASSERT_TRUE(dev_node(true));
	self->fd = waitvar_open();
	ASSERT_LE(0, self->fd);
	EXPECT_EQ(-ENOENT, waitvar_named_open(self->fd, name, &id))
		TH_LOG("the named variable outlived the module");
	close(self->fd);
	self->fd = -1;

	for (i = 0; i < LOAD_CYCLES; i++) {
		t0 = now_ns();
		ret = unload_module();
		ASSERT_EQ(0, ret) TH_LOG("unload %d: %s", i, strerror(-ret));
		ret = load_module(self->path);
		ASSERT_EQ(0, ret) TH_LOG("load %d: %s", i, strerror(-ret));
		total += now_ns() - t0;
		ASSERT_TRUE(dev_node(true)) TH_LOG("no /dev/waitvar after load %d", i);
		self->fd = waitvar_open();
		ASSERT_LE(0, self->fd) TH_LOG("open after load %d: %s", i, strerror(-self->fd));
		ASSERT_EQ(0, waitvar_create(self->fd, 1000 + i, 0, &id));
		ASSERT_EQ(0, waitvar_get(self->fd, id, &value));
		ASSERT_EQ((uint64_t)(1000 + i), value);
		close(self->fd);
		self->fd = -1;
	}
	TH_LOG("%d unloads and loads: %lld.%03lld ms each on average", LOAD_CYCLES,
	       total / LOAD_CYCLES / NSEC_PER_MSEC, total / LOAD_CYCLES / 1000 % 1000);
	EXPECT_TRUE(module_live());
}

TEST_HARNESS_MAIN
