// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel side of the shared wait table as a user sees it: its size
 * (FEATURES, the debugfs view, the boot rule and wait_table_bits=), and the
 * sched_var_* trace events in tracefs for a wait and the wake that ends it,
 * and for a filtered wake, which walks no queue; a read of the debugfs view
 * walks the table once.
 */
#include <ctype.h>
#include <sys/klog.h>

#include "waitvar_test.h"

/* The kernel's harness is written for -Wall; it has unused parameters. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#define TABLE_FILE	"/sys/kernel/debug/sched/bit_wait_table"
/*
 * The table file is read whole up to this many lines, and only this far
 * past it: 2^20 queues take minutes to walk under KASAN and TCG.  The
 * tests that read it have this long (the harness's default is 30 s).
 */
#define TABLE_READ_MAX	(1L << 14)
#define TABLE_READ_TIMEOUT	120
#define TRACE_BUF	(1 << 20)

static const char *const var_events[] = {
	"sched_var_wait_start", "sched_var_wait_done", "sched_var_wake",
};

FIXTURE(trace) {
	int fd;
	char tracefs[64];
	char clock[32];		/* the trace clock to restore, or "" */
	char kprobe[48];	/* a kprobe event to remove, or "" */
};

FIXTURE_SETUP(trace)
{
	self->fd = open("/dev/waitvar", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open /dev/waitvar: %s", strerror(errno));
	self->tracefs[0] = '\0';
	self->clock[0] = '\0';
	self->kprobe[0] = '\0';
}

/* Turns the events off and restores the trace clock, whatever the test left behind. */
FIXTURE_TEARDOWN(trace)
{
	char path[128];
	size_t i;

	for (i = 0; self->tracefs[0] && i < ARRAY_LEN(var_events); i++) {
		snprintf(path, sizeof(path), "%s/events/sched/%s/enable", self->tracefs,
			 var_events[i]);
		write_file(path, "0");
	}
	if (self->clock[0]) {
		snprintf(path, sizeof(path), "%s/trace_clock", self->tracefs);
		write_file(path, self->clock);
	}
	if (self->kprobe[0]) {
		char undef[64], kpath[160];

		snprintf(kpath, sizeof(kpath), "%s/events/kprobes/%s/enable", self->tracefs,
			 self->kprobe);
		write_file(kpath, "0");
		/* Without O_APPEND, a write to kprobe_events clears every event. */
		snprintf(kpath, sizeof(kpath), "%s/kprobe_events", self->tracefs);
		snprintf(undef, sizeof(undef), "-:kprobes/%s", self->kprobe);
		EXPECT_EQ(0, write_file_flags(kpath, undef, O_APPEND));
	}
	close(self->fd);
}

/* The trace clock in use: the name trace_clock shows in brackets. */
static bool current_trace_clock(const char *tracefs, char *name, size_t size)
{
	char path[128], buf[512], *open_b, *close_b;

	snprintf(path, sizeof(path), "%s/trace_clock", tracefs);
	if (read_file(path, buf, sizeof(buf)) <= 0)
		return false;
	open_b = strchr(buf, '[');
	close_b = open_b ? strchr(open_b, ']') : NULL;
	if (!close_b || (size_t)(close_b - open_b) > size)
		return false;
	snprintf(name, size, "%.*s", (int)(close_b - open_b - 1), open_b + 1);
	return true;
}

/*
 * Lines of the table file that are not comments, one per queue, counted
 * up to @max; -1 if a line does not show the queue it counts.
 */
static long table_lines(long max)
{
	char line[128];
	long n = 0, index;
	FILE *f = fopen(TABLE_FILE, "r");

	if (!f)
		return -1;
	while (n < max && fgets(line, sizeof(line), f)) {
		if (line[0] == '#')
			continue;
		if (sscanf(line, "%ld", &index) != 1 || index != n) {
			n = -1;
			break;
		}
		n++;
	}
	fclose(f);
	return n;
}

/* The number of possible CPUs, from "0-1,4" style lists. */
static int possible_cpus(void)
{
	char buf[256], *p;
	int n = 0;

	if (read_file("/sys/devices/system/cpu/possible", buf, sizeof(buf)) <= 0)
		return -1;
	for (p = strtok(buf, ",\n"); p; p = strtok(NULL, ",\n")) {
		int a, b;

		if (sscanf(p, "%d-%d", &a, &b) == 2)
			n += b - a + 1;
		else if (sscanf(p, "%d", &a) == 1)
			n++;
	}
	return n;
}

/*
 * wait_table_bits=N from the kernel command line, parsed as the kernel
 * does (kstrtouint(): any base, an optional '+', no '-'; 4 to 20), or -1
 * where the kernel sizes by CPUs.  If @refused, whether it refuses one,
 * the last such value in @bad.
 */
static int cmdline_table_bits(bool *refused, char *bad, size_t size)
{
	static const char key[] = " wait_table_bits=";
	char buf[4096], *p, *end;
	unsigned long bits;
	int last = -1;

	if (refused)
		*refused = false;
	if (read_file("/proc/cmdline", buf, sizeof(buf)) <= 0)
		return -1;
	/* Each valid one replaces the one before, as early_param() handles them. */
	for (p = strstr(buf, key); p; p = strstr(p, key)) {
		p += strlen(key);
		errno = 0;
		bits = strtoul(p, &end, 0);
		if (*p != '-' && !isspace((unsigned char)*p) && !errno && end != p &&
		    (!*end || *end == ' ' || *end == '\n') && bits >= 4 && bits <= 20) {
			last = (int)bits;
		} else if (refused) {
			*refused = true;
			snprintf(bad, size, "%.*s", (int)strcspn(p, " \n"), p);
		}
	}
	return last;
}

/* The kernel's log buffer, NUL-terminated, or NULL; the caller frees it. */
static char *kernel_log(void)
{
	int size = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0), len;
	char *log;

	if (size <= 0)
		return NULL;
	log = malloc((size_t)size + 1);
	if (!log)
		return NULL;
	len = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, log, size);
	if (len < 0) {
		free(log);
		return NULL;
	}
	log[len] = '\0';
	return log;
}

/*
 * FEATURES, the debugfs view and the boot rule agree on the size: 2^N with
 * wait_table_bits=N, or else 256 queues per possible CPU, rounded up to a
 * power of two.
 */
TEST_F_TIMEOUT(trace, wait_table_is_sized_by_cpus_or_the_boot_parameter, TABLE_READ_TIMEOUT)
{
	unsigned int size = driver_features().wait_table_size;
	int bits = cmdline_table_bits(NULL, NULL, 0), cpus = possible_cpus();
	unsigned int want = 256;

	ASSERT_LT(0, cpus);
	if (bits >= 0) {
		want = 1U << bits;
	} else {
		while (want < 256U * (unsigned int)cpus)
			want <<= 1;
	}
	ksft_print_msg("wait table: %u queues, %d possible CPUs, wait_table_bits=%d\n",
		       size, cpus, bits);
	EXPECT_EQ(want, size);
	if (size <= TABLE_READ_MAX) {
		EXPECT_EQ((long)size, table_lines(size + 1L));
	} else {
		EXPECT_EQ(TABLE_READ_MAX, table_lines(TABLE_READ_MAX));
	}
}

/*
 * The kernel reports a wait_table_bits= it refuses, and no other: its log
 * has the warning exactly when the command line has such a value.  Only
 * while the log still holds the boot's first lines, where the warning is.
 */
TEST_F(trace, a_refused_wait_table_bits_is_reported)
{
	char bad[256], want[320], *log;
	bool refused;

	ASSERT_EQ(0U, getuid()) TH_LOG("needs root: the kernel log");
	cmdline_table_bits(&refused, bad, sizeof(bad));
	log = kernel_log();
	ASSERT_TRUE(log != NULL) TH_LOG("klogctl: %s", strerror(errno));
	if (!strstr(log, "Linux version ")) {
		free(log);
		/* Nothing to tell from a log that lost its start; a refusal must be seen. */
		ASSERT_FALSE(refused) TH_LOG("the log lost its first lines: cannot see the warning");
		ksft_print_msg("the log lost its first lines: no warning to look for\n");
		return;
	}
	if (refused) {
		ksft_print_msg("wait_table_bits refused on the command line: '%s'\n", bad);
		snprintf(want, sizeof(want), "wait_table_bits=%s: not 4 to 20", bad);
		EXPECT_TRUE(strstr(log, want) != NULL) TH_LOG("no '%s' in the log", want);
	} else {
		EXPECT_TRUE(strstr(log, ": not 4 to 20") == NULL);
	}
	free(log);
}

/* STATS' bucket indexes the whole table: variables land past the old 256. */
TEST_F(trace, stats_buckets_cover_the_table)
{
	unsigned int size = driver_features().wait_table_size, max = 0;
	struct waitvar_stats st;
	uint32_t id;
	int i;

	ASSERT_EQ(0U, getuid()) TH_LOG("needs root: STATS hides the bucket otherwise");
	for (i = 0; i < 200; i++) {
		ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &id));
		ASSERT_EQ(0, waitvar_stats(self->fd, id, &st));
		ASSERT_LT(st.bucket, size);
		if (st.bucket > max)
			max = st.bucket;
	}
	/* 200 hashed addresses: the largest falls in the table's top half. */
	EXPECT_GE(2 * max, size) TH_LOG("largest bucket %u of %u", max, size);
}

/* Whether @line has the field @field ("name=value") whole, not a prefix of one. */
static bool has_field(const char *line, const char *field)
{
	size_t len = strlen(field);
	const char *p;

	for (p = strstr(line, field); p; p = strstr(p + 1, field))
		if (p > line && p[-1] == ' ' && (p[len] == ' ' || p[len] == '\0'))
			return true;
	return false;
}

/* The first line of @buf from @from on with @event, task @tid and @bucket; or NULL. */
static const char *find_event(const char *buf, const char *from, const char *event, int tid,
			      unsigned int bucket, const char *also)
{
	char who[32], where[64];
	const char *p;

	snprintf(who, sizeof(who), "-%d ", tid);
	snprintf(where, sizeof(where), "%s: var=", event);
	for (p = from; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		const char *end = strchr(p, '\n'), *b;
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char line[512];

		if (len >= sizeof(line))
			continue;
		memcpy(line, p, len);
		line[len] = '\0';
		b = strstr(line, " bucket=");
		if (strstr(line, who) && strstr(line, where) && b &&
		    strtoul(b + 8, NULL, 10) == bucket && (!also || has_field(line, also)))
			return p;
	}
	(void)buf;
	return NULL;
}

/* Empties the trace buffer, then turns the sched_var_* events on or off. */
static int trace_events(const char *tracefs, bool on)
{
	char path[128];
	size_t i;
	int fd;

	if (on) {
		snprintf(path, sizeof(path), "%s/trace", tracefs);
		/* Opening the trace with O_TRUNC empties the buffer. */
		fd = open(path, O_WRONLY | O_TRUNC);
		if (fd < 0)
			return -1;
		close(fd);
	}
	for (i = 0; i < ARRAY_LEN(var_events); i++) {
		snprintf(path, sizeof(path), "%s/events/sched/%s/enable", tracefs, var_events[i]);
		if (write_file(path, on ? "1" : "0"))
			return -1;
	}
	return 0;
}

/*
 * With the sched_var_* events on, a WAIT and the SET that ends it show as
 * three events after the waiter's start, on the bucket STATS reports: its
 * done and the setter's wake of one waiter.  The wake event counts the
 * waiters woken, so it is recorded after the wakeup: the woken waiter may
 * record its done first.
 */
TEST_F(trace, a_wait_and_its_wake_appear_in_the_trace)
{
	struct waiter w = { .fd = self->fd, .op = WAITVAR_OP_EQ, .operand = 1 };
	const char *start, *wake, *done;
	struct waitvar_stats st;
	char path[128], *buf;

	ASSERT_EQ(0U, getuid()) TH_LOG("needs root for tracefs");
	if (!find_tracefs(self->tracefs, sizeof(self->tracefs)))
		SKIP(return, "no tracefs: this kernel has no event tracing");
	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &w.id));
	ASSERT_EQ(0, waitvar_stats(self->fd, w.id, &st));
	/*
	 * One clock for every CPU's buffer, so that merging them keeps the
	 * order in which the waiter and the setter, on two CPUs, did things.
	 */
	ASSERT_TRUE(current_trace_clock(self->tracefs, self->clock, sizeof(self->clock)));
	snprintf(path, sizeof(path), "%s/trace_clock", self->tracefs);
	ASSERT_EQ(0, write_file(path, "global")) TH_LOG("%s: %s", path, strerror(errno));
	ASSERT_EQ(0, trace_events(self->tracefs, true)) TH_LOG("%s: %s", self->tracefs,
								strerror(errno));
	ASSERT_EQ(0, waiter_start(&w));
	ASSERT_TRUE(waiter_sleeps(&w));
	ASSERT_EQ(0, waitvar_set(self->fd, w.id, 1));
	ASSERT_EQ(0, pthread_join(w.thread, NULL));
	ASSERT_EQ(0, w.ret);
	EXPECT_EQ(0, trace_events(self->tracefs, false));

	buf = malloc(TRACE_BUF);
	ASSERT_TRUE(buf != NULL);
	snprintf(path, sizeof(path), "%s/trace", self->tracefs);
	ASSERT_LT(0, read_file(path, buf, TRACE_BUF));
	start = find_event(buf, buf, "sched_var_wait_start", atomic_load(&w.tid), st.bucket,
			   "exclusive=0");
	wake = start ? find_event(buf, start, "sched_var_wake", gettid(), st.bucket,
				  "woken=1") : NULL;
	done = start ? find_event(buf, start, "sched_var_wait_done", atomic_load(&w.tid),
				  st.bucket, "result=condition") : NULL;
	EXPECT_TRUE(start != NULL) TH_LOG("no wait start by tid %d on bucket %u in:\n%.2000s",
				       atomic_load(&w.tid), st.bucket, buf);
	EXPECT_TRUE(wake != NULL) TH_LOG("no wake of one by tid %d on bucket %u after the start",
				      gettid(), st.bucket);
	EXPECT_TRUE(done != NULL) TH_LOG("no done (condition) by tid %d after the start",
				      atomic_load(&w.tid));
	free(buf);
}

/*
 * A filtered WAKE_NR walks the variable's own list of waiters, not the
 * hashed queue: with nobody waiting it wakes the queue not at all, so it
 * records no sched_var_wake, where an unfiltered one records its walk.
 */
TEST_F(trace, a_filtered_wake_walks_no_queue)
{
	struct waitvar_stats st;
	const char *first, *second;
	char path[128], *buf;
	uint32_t id = 0;

	ASSERT_EQ(0U, getuid()) TH_LOG("needs root for tracefs");
	if (!find_tracefs(self->tracefs, sizeof(self->tracefs)))
		SKIP(return, "no tracefs: this kernel has no event tracing");
	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &id));
	ASSERT_EQ(0, waitvar_stats(self->fd, id, &st));
	ASSERT_EQ(0, trace_events(self->tracefs, true));
	EXPECT_EQ(0, waitvar_wake_nr(self->fd, id, 0, WAITVAR_WAKE_FILTER));
	EXPECT_EQ(0, waitvar_wake_nr(self->fd, id, 0, 0));
	EXPECT_EQ(0, trace_events(self->tracefs, false));

	buf = malloc(TRACE_BUF);
	ASSERT_TRUE(buf != NULL);
	snprintf(path, sizeof(path), "%s/trace", self->tracefs);
	ASSERT_LT(0, read_file(path, buf, TRACE_BUF));
	first = find_event(buf, buf, "sched_var_wake", gettid(), st.bucket, "woken=0");
	second = first ? find_event(buf, strchr(first, '\n'), "sched_var_wake", gettid(),
				    st.bucket, NULL) : NULL;
	EXPECT_TRUE(first != NULL) TH_LOG("the unfiltered wake is not in the trace:\n%.2000s",
				       buf);
	EXPECT_TRUE(second == NULL) TH_LOG("two wakes of bucket %u: the filtered one walked it",
					st.bucket);
	free(buf);
}

static long count_char(const char *buf, size_t len, char c)
{
	long n = 0;

	while (len--)
		n += *buf++ == c;
	return n;
}

/* The hits kprobe_profile counts for kprobe event @event, or -1. */
static long kprobe_hits(const char *tracefs, const char *event)
{
	char path[128], line[256], name[64];
	long hits, found = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/kprobe_profile", tracefs);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %ld", name, &hits) == 2 && !strcmp(name, event))
			found = hits;
	fclose(f);
	return found;
}

/*
 * A read of the table file shows each queue once: a kprobe on the file's
 * show function is hit once per line, plus at most once per read() for
 * the line that did not fit the last buffer.  A show that printed the
 * whole table (single_open()) would be hit a few times in all, the seq_file
 * core running it again from the start each time its buffer overflowed.
 * A table larger than TABLE_READ_MAX is read that far only.
 */
TEST_F_TIMEOUT(trace, a_read_of_the_table_walks_it_once, TABLE_READ_TIMEOUT)
{
	char def[160], path[160], buf[4096];
	long lines = 0, reads = 0, hits;
	struct waitvar_features f;
	ssize_t n;
	int fd;

	if (!find_tracefs(self->tracefs, sizeof(self->tracefs)))
		SKIP(return, "no tracefs");
	snprintf(path, sizeof(path), "%s/kprobe_events", self->tracefs);
	if (access(path, W_OK))
		SKIP(return, "no kprobe events in this kernel (CONFIG_KPROBE_EVENTS)");
	ASSERT_EQ(0, waitvar_features(self->fd, &f));
	snprintf(self->kprobe, sizeof(self->kprobe), "waitvar_table_%d", getpid());
	snprintf(def, sizeof(def), "p:kprobes/%s bit_wait_table_show", self->kprobe);
	if (write_file_flags(path, def, O_APPEND)) {
		self->kprobe[0] = '\0';
		ASSERT_TRUE(false) TH_LOG("kprobe on bit_wait_table_show: %s", strerror(errno));
	}
	snprintf(path, sizeof(path), "%s/events/kprobes/%s/enable", self->tracefs,
		 self->kprobe);
	ASSERT_EQ(0, write_file(path, "1"));
	fd = open(TABLE_FILE, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd) TH_LOG("%s: %s", TABLE_FILE, strerror(errno));
	while (lines < TABLE_READ_MAX && (n = read(fd, buf, sizeof(buf))) > 0) {
		reads++;
		lines += count_char(buf, n, '\n');
	}
	close(fd);
	ASSERT_EQ(0, write_file(path, "0"));
	hits = kprobe_hits(self->tracefs, self->kprobe);
	if (f.wait_table_size < TABLE_READ_MAX) {
		EXPECT_EQ((long)f.wait_table_size + 1, lines);
	} else {
		EXPECT_LE(TABLE_READ_MAX, lines);
	}
	EXPECT_LE(lines, hits) TH_LOG("%ld lines, shown %ld times in %ld reads", lines, hits,
				      reads);
	EXPECT_GE(lines + reads + 1, hits) TH_LOG("%ld lines, shown %ld times in %ld reads",
						  lines, hits, reads);
}

TEST_HARNESS_MAIN
