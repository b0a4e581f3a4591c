// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's own waits converted to var waits, driven by ordinary
 * workloads: each test proves that the converted wait ran, from the
 * sched_var_wait_start events a task emitted between the entry to and
 * the return from the function that waits (a kprobe and a kretprobe).
 *
 * inode_dio_wait(): direct-I/O AIO overwrites of a file on the ext4 root,
 * then a truncate of it, which waits for them (a var wait on i_dio_count
 * since 1c48d441468c, v6.12; backported to 6.1 by the series).
 */
#include <linux/aio_abi.h>
#include <sys/statfs.h>
#include <sys/syscall.h>

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
#define DIO_ROUNDS	10
/* A round writes 4 MiB twice, which takes seconds under KASAN and TCG. */
#define DIO_TIMEOUT	300
#define TRACE_BUF	(1 << 20)

FIXTURE(conversion) {
	char tracefs[64];
	char entry[48], exit_[48];	/* kprobe events to remove, or "" */
	char file[64];			/* the test file to remove, or "" */
	aio_context_t aio;
};

FIXTURE_SETUP(conversion)
{
	self->tracefs[0] = self->entry[0] = self->exit_[0] = self->file[0] = '\0';
	self->aio = 0;
	if (!find_tracefs(self->tracefs, sizeof(self->tracefs)))
		SKIP(return, "no tracefs");
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
	if (self->tracefs[0]) {
		event_set(self->tracefs, "sched", "sched_var_wait_start", "0", "0");
		if (self->entry[0])
			kprobe_remove(self->tracefs, self->entry);
		if (self->exit_[0])
			kprobe_remove(self->tracefs, self->exit_);
	}
	if (self->aio)
		syscall(__NR_io_destroy, self->aio);
	if (self->file[0])
		unlink(self->file);
}

/*
 * Defines kprobe and kretprobe events on @func named @entry and @exit_,
 * enabled for task @tid only.  -1 with errno if the kernel has none.
 */
static int probe_function(const char *tracefs, const char *func, pid_t tid,
			  const char *entry, const char *exit_)
{
	char path[128], def[128], filter[32];

	snprintf(path, sizeof(path), "%s/kprobe_events", tracefs);
	snprintf(def, sizeof(def), "p:kprobes/%s %s", entry, func);
	if (write_file_flags(path, def, O_APPEND))
		return -1;
	snprintf(def, sizeof(def), "r:kprobes/%s %s", exit_, func);
	if (write_file_flags(path, def, O_APPEND))
		return -1;
	snprintf(filter, sizeof(filter), "common_pid == %d", tid);
	if (event_set(tracefs, "kprobes", entry, "1", filter) ||
	    event_set(tracefs, "kprobes", exit_, "1", filter))
		return -1;
	return 0;
}

/*
 * In the trace, the sched_var_wait_start events that fall between an
 * @entry event and the next @exit_ one: var waits the function began.
 * The number of @entry events goes to @calls.
 */
static long var_waits_inside(const char *tracefs, const char *entry, const char *exit_,
			     long *calls)
{
	char path[96], *buf, *line, *save = NULL, e[64], x[64];
	long waits = 0;
	bool inside = false;

	buf = malloc(TRACE_BUF);
	if (!buf)
		return -1;
	snprintf(path, sizeof(path), "%s/trace", tracefs);
	if (read_file(path, buf, TRACE_BUF) < 0) {
		free(buf);
		return -1;
	}
	snprintf(e, sizeof(e), " %s:", entry);
	snprintf(x, sizeof(x), " %s:", exit_);
	*calls = 0;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strstr(line, e))
			inside = true, ++*calls;
		else if (strstr(line, x))
			inside = false;
		else if (inside && strstr(line, " sched_var_wait_start:"))
			waits++;
	}
	free(buf);
	return waits;
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
 * A truncate waits in inode_dio_wait() for the direct I/O in flight on
 * the file, and that wait is a var wait: rounds of DIO_CHUNKS AIO
 * overwrites, each round truncating the file at once, until a round's
 * truncate sleeps in inode_dio_wait() (the writes still in flight) or
 * DIO_ROUNDS have passed.  A kernel whose inode_dio_wait() sleeps in a bit
 * wait (6.1 without the backport) shows no var wait in any round.
 */
TEST_F_TIMEOUT(conversion, truncate_waits_for_direct_io_in_a_var_wait, DIO_TIMEOUT)
{
	char path[128], trace[128];
	struct iocb cbs[DIO_CHUNKS], *cbp[DIO_CHUNKS];
	struct io_event events[DIO_CHUNKS];
	struct timespec limit = { .tv_sec = 60 };
	struct statfs sfs;
	pid_t tid = (pid_t)syscall(SYS_gettid);
	long waits = 0, calls = 0;
	void *buf;
	int fd, dfd, round, i, done;

	ASSERT_EQ(0, statfs(DIO_DIR, &sfs));
	if (sfs.f_type != EXT4_MAGIC)
		SKIP(return, DIO_DIR " is not on ext4");
	snprintf(path, sizeof(path), "%s/kprobe_events", self->tracefs);
	if (access(path, W_OK))
		SKIP(return, "no kprobe events in this kernel (CONFIG_KPROBE_EVENTS)");
	snprintf(self->entry, sizeof(self->entry), "wvc_diow_%d", getpid());
	snprintf(self->exit_, sizeof(self->exit_), "wvc_diow_ret_%d", getpid());
	ASSERT_EQ(0, probe_function(self->tracefs, "inode_dio_wait", tid, self->entry,
				    self->exit_))
		TH_LOG("kprobes on inode_dio_wait: %s", strerror(errno));
	snprintf(path, sizeof(path), "common_pid == %d", tid);
	ASSERT_EQ(0, event_set(self->tracefs, "sched", "sched_var_wait_start", "1", path))
		TH_LOG("sched_var_wait_start: %s", strerror(errno));

	snprintf(self->file, sizeof(self->file), "%s/waitvar-dio-%d", DIO_DIR, getpid());
	fd = open(self->file, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ASSERT_LE(0, fd) TH_LOG("%s: %s", self->file, strerror(errno));
	dfd = open(self->file, O_RDWR | O_DIRECT | O_CLOEXEC);
	ASSERT_LE(0, dfd) TH_LOG("O_DIRECT %s: %s", self->file, strerror(errno));
	ASSERT_EQ(0, posix_memalign(&buf, 4096, DIO_CHUNK));
	memset(buf, 0x5a, DIO_CHUNK);
	ASSERT_EQ(0, syscall(__NR_io_setup, DIO_CHUNKS, &self->aio))
		TH_LOG("io_setup: %s", strerror(errno));
	snprintf(trace, sizeof(trace), "%s/trace", self->tracefs);

	for (round = 1; round <= DIO_ROUNDS && !waits; round++) {
		/* Overwrites of allocated blocks inside i_size: ext4 runs them async. */
		ASSERT_EQ(0, fill_file(fd, (size_t)DIO_CHUNK * DIO_CHUNKS, 0));
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
		ASSERT_EQ(0, ftruncate(fd, 0));
		for (done = 0; done < DIO_CHUNKS; done += i) {
			i = (int)syscall(__NR_io_getevents, self->aio, 1, DIO_CHUNKS - done,
					 events, &limit);
			ASSERT_LT(0, i) TH_LOG("io_getevents: %s", strerror(errno));
		}
		waits = var_waits_inside(self->tracefs, self->entry, self->exit_, &calls);
		ASSERT_LE(0, waits);
		ksft_print_msg("round %d: inode_dio_wait() called %ld times, %ld var waits inside\n",
			       round, calls, waits);
	}
	EXPECT_LT(0, waits) TH_LOG("no truncate slept in a var wait in inode_dio_wait()");
	free(buf);
	close(dfd);
	close(fd);
}

TEST_HARNESS_MAIN
