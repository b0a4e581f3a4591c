// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's own waits converted to var waits, driven by ordinary
 * workloads: each test proves that the converted wait ran, from the
 * sched_var_wait_start events a task emitted between the entry to and
 * the return from the function that waits (a kprobe and a kretprobe).
 *
 * inode_dio_wait(): direct-I/O AIO overwrites of a file on the ext4 root,
 * then an fallocate() on it, which waits for them (a var wait on i_dio_count
 * since 1c48d441468c, v6.12; backported to 6.1 by the series).
 *
 * bd_prepare_to_claim(): exclusive opens of two partitions of one loop
 * disk from two threads, one waiting while the other's claim on the
 * whole disk is in progress (a lock-protected var wait in the series).
 *
 * inode_wait_for_writeback(): unlinks of files that syncfs() is writing
 * back, whose eviction waits for I_SYNC to clear (a var wait since
 * 532980cb1bff, v6.12, backported to 6.1 by the series).  That wait is
 * mainline's own loop, which emits no sched_var_wait_start: the test
 * counts sleeps (sched_switch in state D) that follow a call of
 * inode_bit_waitqueue(), the var wait's set-up, inside the function.
 */
#include <linux/aio_abi.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/utsname.h>

#include "waitvar_test.h"

/* The kernel's harness is written for -Wall; it has unused parameters. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#define EXT4_MAGIC	0xEF53
#define DIO_DIR		"/var/tmp"
#define DIO_CHUNK	(256 * 1024)
#define DIO_CHUNKS	16
#define DIO_ROUNDS	100
/*
 * Each test starts no round after CONVERSION_TRY_S, so that one that
 * fails still ends in TEST_TIMEOUT; passing ones take a round or two.
 */
#define CONVERSION_TRY_S	45
#define TEST_TIMEOUT	150
#define TRACE_BUF	(1 << 20)

/*
 * Files written and then unlinked while syncfs() writes them.  Each has
 * SYNC_PAGES pages of data with a hole after each, so that writeback
 * allocates and submits them one extent at a time: the file stays under
 * I_SYNC long after its first extent shows allocated.
 */
#define SYNC_FILES	2
#define SYNC_PAGE	4096
#define SYNC_PAGES	2048
#define SYNC_ROUNDS	20

/* A loop disk of 8 MiB with two partitions, in an MBR made here. */
#define DISK_SECTORS	16384
#define PART1_START	2048
#define PART1_SECTORS	4096
#define PART2_START	(PART1_START + PART1_SECTORS)
#define PART2_SECTORS	(DISK_SECTORS - PART2_START)
#define CLAIM_OPENS	200
#define CLAIM_ROUNDS	10

FIXTURE(conversion) {
	char tracefs[64];
	char inst[96];			/* the test's tracefs instance, or "" */
	char entry[48], exit_[48];	/* kprobe events to remove, or "" */
	char marker[48];		/* a third kprobe event to remove, or "" */
	char file[64];			/* the test file to remove, or "" */
	aio_context_t aio;
	int loop;			/* the loop disk, or -1 */
};

/*
 * The kprobe and kretprobe these tests put on inode_dio_wait()'s entry, a
 * 16-bit Thumb push, oopsed the 6.1 armhf kernel (Thumb-2) as it stepped
 * the push (t16_emulate_push(), then a jump to 0; matrix run
 * 20261207-231156): on 32-bit arm kernels the tests place none.
 */
static bool kretprobes_break_here(void)
{
	struct utsname u;

	return !uname(&u) && !strncmp(u.machine, "armv7", 5);
}

FIXTURE_SETUP(conversion)
{
	self->tracefs[0] = self->inst[0] = self->entry[0] = self->exit_[0] = '\0';
	self->marker[0] = '\0';
	self->file[0] = '\0';
	self->aio = 0;
	self->loop = -1;
	if (!find_tracefs(self->tracefs, sizeof(self->tracefs)))
		return;
	/* A buffer, options and event switches of the test's own. */
	snprintf(self->inst, sizeof(self->inst), "%s/instances/waitvar-conv-%d",
		 self->tracefs, getpid());
	if (mkdir(self->inst, 0700))
		self->inst[0] = '\0';
}

/* Sets an event's enable and filter files under events/@group/@event. */
static int event_set(const char *tracefs, const char *group, const char *event,
		     const char *enable, const char *filter)
{
	char path[192];

	snprintf(path, sizeof(path), "%s/events/%s/%s/filter", tracefs, group, event);
	if (filter && write_file(path, filter))
		return -1;
	snprintf(path, sizeof(path), "%s/events/%s/%s/enable", tracefs, group, event);
	return write_file(path, enable);
}

/* Removes a kprobe event this test defined. */
static void kprobe_remove(const char *tracefs, const char *name)
{
	char path[128], undef[80];

	event_set(tracefs, "kprobes", name, "0", NULL);
	snprintf(path, sizeof(path), "%s/kprobe_events", tracefs);
	snprintf(undef, sizeof(undef), "-:kprobes/%s", name);
	/* Without O_APPEND, a write to kprobe_events clears every event. */
	write_file_flags(path, undef, O_APPEND);
}

FIXTURE_TEARDOWN(conversion)
{
	if (self->inst[0]) {
		event_set(self->inst, "sched", "sched_var_wait_start", "0", "0");
		event_set(self->inst, "sched", "sched_switch", "0", "0");
		if (self->entry[0])
			event_set(self->inst, "kprobes", self->entry, "0", NULL);
		if (self->exit_[0])
			event_set(self->inst, "kprobes", self->exit_, "0", NULL);
		if (self->marker[0])
			event_set(self->inst, "kprobes", self->marker, "0", NULL);
		rmdir(self->inst);
		if (self->entry[0])
			kprobe_remove(self->tracefs, self->entry);
		if (self->exit_[0])
			kprobe_remove(self->tracefs, self->exit_);
		if (self->marker[0])
			kprobe_remove(self->tracefs, self->marker);
	}
	if (self->aio)
		syscall(__NR_io_destroy, self->aio);
	if (self->loop >= 0) {
		ioctl(self->loop, LOOP_CLR_FD, 0);
		close(self->loop);
	}
	if (self->file[0])
		unlink(self->file);
}

/*
 * Defines kprobe and kretprobe events on @func named @entry and @exit_,
 * enabled in tracefs instance @inst for the tasks @filter selects.  -1
 * with errno if the kernel has none.
 */
static int probe_function(const char *tracefs, const char *inst, const char *func,
			  const char *filter, const char *entry, const char *exit_)
{
	char path[128], def[128];

	snprintf(path, sizeof(path), "%s/kprobe_events", tracefs);
	snprintf(def, sizeof(def), "p:kprobes/%s %s", entry, func);
	if (write_file_flags(path, def, O_APPEND))
		return -1;
	snprintf(def, sizeof(def), "r:kprobes/%s %s", exit_, func);
	if (write_file_flags(path, def, O_APPEND))
		return -1;
	if (event_set(inst, "kprobes", entry, "1", filter) ||
	    event_set(inst, "kprobes", exit_, "1", filter))
		return -1;
	return 0;
}

/* The pid of the task a trace line is from ("comm-pid [cpu] ..."), or -1. */
static long line_pid(const char *line)
{
	const char *p = strstr(line, " [");

	if (!p)
		return -1;
	while (p > line && p[-1] == ' ')
		p--;
	while (p > line && p[-1] >= '0' && p[-1] <= '9')
		p--;
	return p > line && p[-1] == '-' ? strtol(p, NULL, 10) : -1;
}

/*
 * In the trace, for each task, the waits that fall between an @entry event
 * and the next @exit_ one.  Without @marker, a wait is a
 * sched_var_wait_start event: a var wait the function began.  With it, a
 * wait is a sleep (sched_switch with prev_state D) that follows a @marker
 * event in the same call: a wait the function set up with @marker's
 * function and slept in.  The number of @entry events goes to @calls.
 * Up to TRACE_TASKS tasks are followed; a line of any other task is
 * ignored.  -1 with errno if the trace cannot be read, lost events or
 * filled the buffer.
 */
#define TRACE_TASKS	4
static long waits_inside(const char *tracefs, const char *entry, const char *exit_,
			 const char *marker, long *calls)
{
	char path[128], *buf, *line, *save = NULL, e[64], x[64], m[64];
	bool inside[TRACE_TASKS] = { false }, armed[TRACE_TASKS] = { false };
	long pids[TRACE_TASKS], pid, waits = 0;
	ssize_t len;
	int n = 0, t;

	buf = malloc(TRACE_BUF);
	if (!buf)
		return -1;
	snprintf(path, sizeof(path), "%s/trace", tracefs);
	len = read_file(path, buf, TRACE_BUF);
	if (len < 0 || len == TRACE_BUF - 1) {
		free(buf);
		errno = len < 0 ? errno : EFBIG;	/* a full buffer may have cut the trace */
		return -1;
	}
	snprintf(e, sizeof(e), " %s:", entry);
	snprintf(x, sizeof(x), " %s:", exit_);
	snprintf(m, sizeof(m), " %s:", marker ? marker : "");
	*calls = 0;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		/* "CPU:N [LOST M EVENTS]": a count from this trace means nothing. */
		if (strstr(line, "[LOST ")) {
			free(buf);
			errno = ENOBUFS;
			return -1;
		}
		pid = line_pid(line);
		if (pid < 0)
			continue;
		for (t = 0; t < n && pids[t] != pid; t++)
			;
		if (t == n) {
			if (n == TRACE_TASKS)
				continue;
			pids[n++] = pid;
		}
		if (strstr(line, e)) {
			inside[t] = true, armed[t] = false, ++*calls;
		} else if (strstr(line, x)) {
			inside[t] = armed[t] = false;
		} else if (!inside[t]) {
			continue;
		} else if (!marker) {
			waits += !!strstr(line, " sched_var_wait_start:");
		} else if (strstr(line, m)) {
			armed[t] = true;
		} else if (armed[t] && strstr(line, " sched_switch:") &&
			   strstr(line, " prev_state=D ")) {
			waits++;
			armed[t] = false;
		}
	}
	free(buf);
	return waits;
}

/*
 * Why a conversions test cannot probe this kernel, or NULL: the tracefs
 * instance, kprobes on function entries and kprobe events it needs.
 */
static const char *probes_missing(const char *tracefs, const char *inst)
{
	char path[128];

	if (!inst[0])
		return "no tracefs, or no instances in it";
	if (kretprobes_break_here())
		return "kprobes on a function entry oopsed the 32-bit arm kernel";
	snprintf(path, sizeof(path), "%s/kprobe_events", tracefs);
	if (access(path, W_OK))
		return "no kprobe events in this kernel (CONFIG_KPROBE_EVENTS)";
	return NULL;
}

/* Fills @fd with @size bytes of @byte, allocated and on disk. */
static int fill_file(int fd, size_t size, char byte)
{
	static char chunk[DIO_CHUNK];
	size_t done;

	memset(chunk, byte, sizeof(chunk));
	for (done = 0; done < size; done += sizeof(chunk))
		if (pwrite(fd, chunk, sizeof(chunk), (off_t)done) != (ssize_t)sizeof(chunk))
			return -1;
	return fsync(fd);
}

/*
 * An fallocate() waits in inode_dio_wait() for the direct I/O in flight
 * on the file, and that wait is a var wait: rounds of DIO_CHUNKS AIO
 * overwrites, each followed at once by an fallocate() past the end of
 * the file (ext4 waits for direct I/O before it allocates), until a
 * round's fallocate() sleeps in inode_dio_wait() (the writes still in
 * flight) or DIO_ROUNDS have passed.  A kernel whose inode_dio_wait()
 * sleeps in a bit wait (6.1 without the backport) shows no var wait.
 */
TEST_F_TIMEOUT(conversion, fallocate_waits_for_direct_io_in_a_var_wait, TEST_TIMEOUT)
{
	char path[128], trace[128];
	const char *why;
	struct iocb cbs[DIO_CHUNKS], *cbp[DIO_CHUNKS];
	struct io_event events[DIO_CHUNKS];
	struct statfs sfs;
	pid_t tid = (pid_t)syscall(SYS_gettid);
	long waits = 0, calls = 0;
	long long begun;
	void *buf;
	int fd, dfd, round, i, done;

	why = probes_missing(self->tracefs, self->inst);
	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, statfs(DIO_DIR, &sfs));
	if (sfs.f_type != EXT4_MAGIC)
		SKIP(return, DIO_DIR " is not on ext4");
	snprintf(self->entry, sizeof(self->entry), "wvc_diow_%d", getpid());
	snprintf(self->exit_, sizeof(self->exit_), "wvc_diow_ret_%d", getpid());
	snprintf(path, sizeof(path), "common_pid == %d", tid);
	ASSERT_EQ(0, probe_function(self->tracefs, self->inst, "inode_dio_wait", path,
				    self->entry, self->exit_))
		TH_LOG("kprobes on inode_dio_wait: %s", strerror(errno));
	ASSERT_EQ(0, event_set(self->inst, "sched", "sched_var_wait_start", "1", path))
		TH_LOG("sched_var_wait_start: %s", strerror(errno));

	snprintf(self->file, sizeof(self->file), "%s/waitvar-dio-%d", DIO_DIR, getpid());
	fd = open(self->file, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ASSERT_LE(0, fd) TH_LOG("%s: %s", self->file, strerror(errno));
	dfd = open(self->file, O_RDWR | O_DIRECT | O_CLOEXEC);
	ASSERT_LE(0, dfd) TH_LOG("O_DIRECT %s: %s", self->file, strerror(errno));
	/* Open twice, the file needs no name: a killed test leaves none behind. */
	unlink(self->file);
	self->file[0] = '\0';
	ASSERT_EQ(0, posix_memalign(&buf, 4096, DIO_CHUNK));
	memset(buf, 0x5a, DIO_CHUNK);
	ASSERT_EQ(0, syscall(__NR_io_setup, DIO_CHUNKS, &self->aio))
		TH_LOG("io_setup: %s", strerror(errno));
	snprintf(trace, sizeof(trace), "%s/trace", self->inst);

	/* Overwrites of allocated blocks inside i_size: ext4 runs them async. */
	ASSERT_EQ(0, fill_file(fd, (size_t)DIO_CHUNK * DIO_CHUNKS, 0));
	begun = clock_ns(CLOCK_MONOTONIC);
	for (round = 1; round <= DIO_ROUNDS && !waits &&
	     clock_ns(CLOCK_MONOTONIC) - begun < CONVERSION_TRY_S * 1000 * NSEC_PER_MSEC; round++) {
		for (i = 0; i < DIO_CHUNKS; i++) {
			memset(&cbs[i], 0, sizeof(cbs[i]));
			cbs[i].aio_lio_opcode = IOCB_CMD_PWRITE;
			cbs[i].aio_fildes = (uint32_t)dfd;
			cbs[i].aio_buf = (uint64_t)(uintptr_t)buf;
			cbs[i].aio_nbytes = DIO_CHUNK;
			cbs[i].aio_offset = (int64_t)i * DIO_CHUNK;
			cbp[i] = &cbs[i];
		}
		ASSERT_EQ(0, write_file_flags(trace, "", O_TRUNC));
		ASSERT_EQ(DIO_CHUNKS, syscall(__NR_io_submit, self->aio, DIO_CHUNKS, cbp))
			TH_LOG("io_submit: %s", strerror(errno));
		ASSERT_EQ(0, fallocate(fd, FALLOC_FL_KEEP_SIZE,
				       (off_t)DIO_CHUNK * DIO_CHUNKS, 4096))
			TH_LOG("fallocate: %s", strerror(errno));
		for (done = 0; done < DIO_CHUNKS; done += i) {
			/* No timeout: its struct differs with the libc's time_t. */
			i = (int)syscall(__NR_io_getevents, self->aio, 1, DIO_CHUNKS - done,
					 events, NULL);
			ASSERT_LT(0, i) TH_LOG("io_getevents: %s", strerror(errno));
		}
		waits = waits_inside(self->inst, self->entry, self->exit_, NULL, &calls);
		ASSERT_LE(0, waits) TH_LOG("the trace: %s", strerror(errno));
		/* The fallocate() reached the probed function, or nothing was tested. */
		ASSERT_LT(0, calls) TH_LOG("round %d: fallocate() did not call inode_dio_wait()",
					   round);
		ksft_print_msg("round %d: inode_dio_wait() called %ld times, %ld var waits inside\n",
			       round, calls, waits);
	}
	EXPECT_LT(0, waits) TH_LOG("no fallocate() slept in a var wait in inode_dio_wait()");
	free(buf);
	close(dfd);
	close(fd);
}

/* One MBR partition entry at @e: Linux type, LBA start and length. */
static void mbr_entry(unsigned char *e, uint32_t start, uint32_t sectors)
{
	e[4] = 0x83;
	for (int i = 0; i < 4; i++) {
		e[8 + i] = (unsigned char)(start >> (8 * i));
		e[12 + i] = (unsigned char)(sectors >> (8 * i));
	}
}

/* Attaches @back to a free loop device; its fd (number in @nr) or -1. */
static int loop_attach(int back, uint32_t flags, int *nr)
{
	struct loop_config cfg = { 0 };
	char dev[32];
	int ctl, loop;

	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0)
		return -1;
	*nr = ioctl(ctl, LOOP_CTL_GET_FREE);
	close(ctl);
	if (*nr < 0)
		return -1;
	snprintf(dev, sizeof(dev), "/dev/loop%d", *nr);
	loop = open(dev, O_RDWR | O_CLOEXEC);
	if (loop < 0)
		return -1;
	cfg.fd = (uint32_t)back;
	cfg.info.lo_flags = flags;
	if (ioctl(loop, LOOP_CONFIGURE, &cfg)) {
		close(loop);
		return -1;
	}
	return loop;
}

/*
 * Makes @file a disk of DISK_SECTORS with two partitions and attaches it
 * to a free loop device, partitions scanned; returns the loop fd (its
 * number in @nr) or -1 with errno.
 */
static int loop_disk(const char *file, int *nr)
{
	unsigned char mbr[512] = { 0 };
	int back, loop = -1;

	back = open(file, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (back < 0)
		return -1;
	mbr_entry(mbr + 446, PART1_START, PART1_SECTORS);
	mbr_entry(mbr + 462, PART2_START, PART2_SECTORS);
	mbr[510] = 0x55;
	mbr[511] = 0xaa;
	if (!ftruncate(back, (off_t)DISK_SECTORS * 512) &&
	    pwrite(back, mbr, sizeof(mbr), 0) == (ssize_t)sizeof(mbr))
		loop = loop_attach(back, LO_FLAGS_PARTSCAN | LO_FLAGS_AUTOCLEAR, nr);
	close(back);
	return loop;
}

struct claimer {
	pthread_barrier_t *start;
	char dev[32];
	pid_t tid;
	int opens, err;		/* exclusive opens done; errno of a failed one */
};

/* Opens its partition exclusively CLAIM_OPENS times, after the barrier. */
static void *claim_loop(void *arg)
{
	struct claimer *c = arg;
	int fd;

	c->tid = (pid_t)syscall(SYS_gettid);
	pthread_barrier_wait(c->start);	/* tids known: main sets the filters */
	pthread_barrier_wait(c->start);	/* tracing on */
	for (c->opens = 0; c->opens < CLAIM_OPENS; c->opens++) {
		fd = open(c->dev, O_RDONLY | O_EXCL | O_CLOEXEC);
		if (fd < 0) {
			c->err = errno;
			break;
		}
		close(fd);
	}
	return NULL;
}

/*
 * An exclusive open of a partition claims the whole disk while it opens,
 * and a second exclusive open, of the other partition, waits for that
 * claim in bd_prepare_to_claim(): rounds of CLAIM_OPENS opens in each of
 * two threads until one thread's open waited in a var wait there, or
 * CLAIM_ROUNDS have passed.  A kernel that waits there on a bit queue or
 * an open-coded wait (6.1, 6.12 before the series) shows none.
 */
TEST_F_TIMEOUT(conversion, exclusive_opens_of_two_partitions_wait_in_a_var_wait, TEST_TIMEOUT)
{
	char filter[96], trace[128];
	const char *why;
	struct claimer c[2] = { 0 };
	pthread_barrier_t start;
	pthread_t th[2];
	struct stat st;
	long waits = 0, calls = 0;
	long long begun;
	int nr, round, i;

	why = probes_missing(self->tracefs, self->inst);
	if (why)
		SKIP(return, "%s", why);
	if (access("/dev/loop-control", F_OK))
		SKIP(return, "no loop devices in this kernel (CONFIG_BLK_DEV_LOOP)");
	snprintf(self->file, sizeof(self->file), "%s/waitvar-disk-%d", DIO_DIR, getpid());
	self->loop = loop_disk(self->file, &nr);
	ASSERT_LE(0, self->loop) TH_LOG("a partitioned loop disk: %s", strerror(errno));
	/*
	 * The loop device holds the file, and detaches when its last opener
	 * closes it: a killed test leaves neither behind.
	 */
	unlink(self->file);
	self->file[0] = '\0';
	for (i = 0; i < 2; i++) {
		snprintf(c[i].dev, sizeof(c[i].dev), "/dev/loop%dp%d", nr, i + 1);
		/* devtmpfs makes the node before the partition scan returns. */
		ASSERT_EQ(0, stat(c[i].dev, &st)) TH_LOG("%s: %s", c[i].dev, strerror(errno));
		ASSERT_TRUE(S_ISBLK(st.st_mode));
	}
	snprintf(self->entry, sizeof(self->entry), "wvc_claim_%d", getpid());
	snprintf(self->exit_, sizeof(self->exit_), "wvc_claim_ret_%d", getpid());
	snprintf(trace, sizeof(trace), "%s/trace", self->inst);

	begun = clock_ns(CLOCK_MONOTONIC);
	for (round = 1; round <= CLAIM_ROUNDS && !waits &&
	     clock_ns(CLOCK_MONOTONIC) - begun < CONVERSION_TRY_S * 1000 * NSEC_PER_MSEC; round++) {
		ASSERT_EQ(0, pthread_barrier_init(&start, NULL, 3));
		for (i = 0; i < 2; i++) {
			c[i].start = &start;
			c[i].err = 0;
			ASSERT_EQ(0, pthread_create(&th[i], NULL, claim_loop, &c[i]));
		}
		pthread_barrier_wait(&start);
		snprintf(filter, sizeof(filter), "common_pid == %d || common_pid == %d",
			 c[0].tid, c[1].tid);
		if (round == 1)
			ASSERT_EQ(0, probe_function(self->tracefs, self->inst,
						    "bd_prepare_to_claim", filter,
						    self->entry, self->exit_))
				TH_LOG("kprobes on bd_prepare_to_claim: %s", strerror(errno));
		ASSERT_EQ(0, event_set(self->inst, "kprobes", self->entry, "1", filter));
		ASSERT_EQ(0, event_set(self->inst, "kprobes", self->exit_, "1", filter));
		ASSERT_EQ(0, event_set(self->inst, "sched", "sched_var_wait_start", "1",
				       filter))
			TH_LOG("sched_var_wait_start: %s", strerror(errno));
		ASSERT_EQ(0, write_file_flags(trace, "", O_TRUNC));
		pthread_barrier_wait(&start);
		for (i = 0; i < 2; i++)
			ASSERT_EQ(0, pthread_join(th[i], NULL));
		pthread_barrier_destroy(&start);
		for (i = 0; i < 2; i++) {
			const struct claimer *ci = &c[i];

			ASSERT_EQ(CLAIM_OPENS, ci->opens)
				TH_LOG("%s: exclusive open %d: %s", ci->dev, ci->opens + 1,
				       strerror(ci->err));
		}
		waits = waits_inside(self->inst, self->entry, self->exit_, NULL, &calls);
		ASSERT_LE(0, waits) TH_LOG("the trace: %s", strerror(errno));
		/* Every open was traced, or the count means nothing. */
		ASSERT_EQ(2 * CLAIM_OPENS, calls);
		ksft_print_msg("round %d: bd_prepare_to_claim() called %ld times, %ld var waits inside\n",
			       round, calls, waits);
	}
	EXPECT_LT(0, waits) TH_LOG("no exclusive open slept in a var wait in bd_prepare_to_claim()");
}

/* Whether writeback has allocated the first extent of the file at @path. */
static bool blocks_allocated(const char *path)
{
	struct {
		struct fiemap map;
		struct fiemap_extent extent;
	} fm;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool done;

	if (fd < 0)
		return true;
	memset(&fm, 0, sizeof(fm));
	fm.map.fm_length = FIEMAP_MAX_OFFSET;
	fm.map.fm_extent_count = 1;	/* no FIEMAP_FLAG_SYNC: that would write it back */
	done = ioctl(fd, FS_IOC_FIEMAP, &fm.map) || (fm.map.fm_mapped_extents &&
		!(fm.extent.fe_flags & FIEMAP_EXTENT_DELALLOC));
	close(fd);
	return done;
}

struct syncer {
	int dir;
	atomic_int done;
	int ret;
};

static void *syncfs_main(void *data)
{
	struct syncer *sy = data;

	sy->ret = syncfs(sy->dir) ? errno : 0;
	atomic_store(&sy->done, 1);
	return NULL;
}

/*
 * An unlink that evicts a file the flusher is writing back waits in
 * inode_wait_for_writeback() for I_SYNC to clear, and that wait is a var
 * wait: rounds of SYNC_FILES files written (delayed allocation, no
 * fsync, a hole after every page), a syncfs() in a second thread, and
 * each file unlinked as soon as writeback has allocated its first extent
 * (FIEMAP shows no delalloc there), while the rest of the file keeps it
 * under I_SYNC; until an
 * unlink slept after setting up its var wait with inode_bit_waitqueue(),
 * or SYNC_ROUNDS have passed.
 * A kernel whose wait is a bit wait (6.1 without the backport) has no
 * inode_bit_waitqueue() to probe.
 */
TEST_F_TIMEOUT(conversion, unlink_during_writeback_waits_in_a_var_wait, TEST_TIMEOUT)
{
	static char chunk[DIO_CHUNK];
	char filter[48], trace[128], def[128], files[SYNC_FILES][96];
	const char *why;
	struct syncer sy = { 0 };
	struct statfs sfs;
	long sleeps = 0, calls = 0;
	long long begun;
	pthread_t th;
	int round, i, page;

	why = probes_missing(self->tracefs, self->inst);
	if (why)
		SKIP(return, "%s", why);
	/* A wait for a contended spinlock_t sleeps in state D there too. */
	if (kernel_is_rt())
		SKIP(return, "on PREEMPT_RT a D-state sleep may be a wait for a spinlock_t");
	ASSERT_EQ(0, statfs(DIO_DIR, &sfs));
	if (sfs.f_type != EXT4_MAGIC)
		SKIP(return, DIO_DIR " is not on ext4");
	snprintf(trace, sizeof(trace), "%s/kprobe_events", self->tracefs);
	sy.dir = open(DIO_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ASSERT_LE(0, sy.dir) TH_LOG("%s: %s", DIO_DIR, strerror(errno));
	for (i = 0; i < SYNC_FILES; i++)
		snprintf(files[i], sizeof(files[i]), "%s/waitvar-sync-%d-%d", DIO_DIR, getpid(), i);
	memset(chunk, 0x5a, sizeof(chunk));

	snprintf(self->entry, sizeof(self->entry), "wvc_wb_%d", getpid());
	snprintf(self->exit_, sizeof(self->exit_), "wvc_wb_ret_%d", getpid());
	snprintf(filter, sizeof(filter), "common_pid == %d", gettid());
	ASSERT_EQ(0, probe_function(self->tracefs, self->inst, "inode_wait_for_writeback", filter,
				    self->entry, self->exit_))
		TH_LOG("kprobes on inode_wait_for_writeback: %s", strerror(errno));
	snprintf(self->marker, sizeof(self->marker), "wvc_wbq_%d", getpid());
	snprintf(def, sizeof(def), "p:kprobes/%s inode_bit_waitqueue", self->marker);
	ASSERT_EQ(0, write_file_flags(trace, def, O_APPEND))
		TH_LOG("no inode_bit_waitqueue() to probe: I_SYNC is no var wait here (%s)",
		       strerror(errno));
	ASSERT_EQ(0, event_set(self->inst, "kprobes", self->marker, "1", filter));
	/* Only the sleeps in state D (2): the polling below yields often. */
	snprintf(def, sizeof(def), "%s && prev_state == 2", filter);
	ASSERT_EQ(0, event_set(self->inst, "sched", "sched_switch", "1", def))
		TH_LOG("sched_switch: %s", strerror(errno));
	snprintf(trace, sizeof(trace), "%s/trace", self->inst);

	begun = clock_ns(CLOCK_MONOTONIC);
	for (round = 1; round <= SYNC_ROUNDS && !sleeps &&
	     clock_ns(CLOCK_MONOTONIC) - begun < CONVERSION_TRY_S * 1000 * NSEC_PER_MSEC; round++) {
		for (i = 0; i < SYNC_FILES; i++) {
			int fd = open(files[i], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

			ASSERT_LE(0, fd) TH_LOG("%s: %s", files[i], strerror(errno));
			for (page = 0; page < SYNC_PAGES; page++)
				ASSERT_EQ(SYNC_PAGE, pwrite(fd, chunk, SYNC_PAGE,
							    (off_t)page * 2 * SYNC_PAGE));
			close(fd);
		}
		ASSERT_EQ(0, write_file_flags(trace, "", O_TRUNC));
		atomic_store(&sy.done, 0);
		ASSERT_EQ(0, pthread_create(&th, NULL, syncfs_main, &sy));
		for (i = 0; i < SYNC_FILES; i++) {
			while (!atomic_load(&sy.done) && !blocks_allocated(files[i]))
				sched_yield();
			EXPECT_EQ(0, unlink(files[i])) TH_LOG("%s: %s", files[i], strerror(errno));
		}
		ASSERT_EQ(0, pthread_join(th, NULL));
		ASSERT_EQ(0, sy.ret) TH_LOG("syncfs: %s", strerror(sy.ret));
		sleeps = waits_inside(self->inst, self->entry, self->exit_, self->marker, &calls);
		ASSERT_LE(0, sleeps) TH_LOG("the trace: %s", strerror(errno));
		/*
		 * Not every eviction need be this thread's: syncfs() holds a
		 * reference to a file it waits on, and the last iput() may be
		 * its own.  A round with none of ours shows 0 calls.
		 */
		ksft_print_msg("round %d: inode_wait_for_writeback() called %ld times, %ld var-wait sleeps inside\n",
			       round, calls, sleeps);
	}
	close(sy.dir);
	EXPECT_LT(0, sleeps) TH_LOG("no unlink slept in a var wait in inode_wait_for_writeback()");
}

TEST_HARNESS_MAIN
