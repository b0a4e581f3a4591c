// SPDX-License-Identifier: GPL-2.0
/*
 * The debugfs files: waitvar/summary and one waitvar/file<N> per open file,
 * showing each variable's value, lock and counters, gone with the file, and
 * its owner's pid as the reader's pid namespace numbers it.
 */
#include <dirent.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/stat.h>

#include "waitvar_test.h"

/* The kernel's harness is written for -Wall; it has unused parameters. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

FIXTURE(debugfs) {
	int fd;
};

FIXTURE_SETUP(debugfs)
{
	self->fd = open("/dev/waitvar", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open /dev/waitvar: %s", strerror(errno));
}

FIXTURE_TEARDOWN(debugfs)
{
	close(self->fd);
}

/*
 * Finds the debugfs file that contains @line, of this process's files
 * only if @own; its text goes to @buf, its path to @path.
 */
static bool find_debugfs_line(char *buf, size_t size, bool own, const char *line, char *path,
			      size_t path_size)
{
	char owner[32];
	struct dirent *d;
	DIR *dir;

	snprintf(owner, sizeof(owner), "owner %d\n", getpid());
	dir = opendir("/sys/kernel/debug/waitvar");
	if (!dir)
		return false;
	while ((d = readdir(dir))) {
		if (strncmp(d->d_name, "file", 4))
			continue;
		snprintf(path, path_size, "/sys/kernel/debug/waitvar/%s", d->d_name);
		if (read_file(path, buf, size) > 0 &&
		    (!own || !strncmp(buf, owner, strlen(owner))) && strstr(buf, line)) {
			closedir(dir);
			return true;
		}
	}
	closedir(dir);
	return false;
}

TEST_F(debugfs, debugfs_lists_each_open_file_and_a_summary)
{
	struct waiter w = { .fd = self->fd, .op = WAITVAR_OP_EQ, .operand = 1 };
	char buf[8192], line[128], path[300];
	struct waitvar_stats st;
	struct summary sum;
	struct stat sb;

	ASSERT_EQ(0, access("/sys/kernel/debug/waitvar/summary", R_OK))
		TH_LOG("debugfs not mounted, or no waitvar directory");
	ASSERT_EQ(0, waitvar_create(self->fd, 424242, WAITVAR_CREATE_MUTEX, &w.id));
	ASSERT_EQ(0, waiter_start(&w));
	ASSERT_TRUE(waiter_sleeps(&w));
	ASSERT_EQ(0, waitvar_stats(self->fd, w.id, &st));
	/* id value lock waiters bucket waits ... read while the wait is in flight */
	snprintf(line, sizeof(line), "\n%u 424242 mutex 1 %u 1 0 0 0 0 0\n", w.id, st.bucket);
	ASSERT_TRUE(find_debugfs_line(buf, sizeof(buf), true, line, path, sizeof(path)))
		TH_LOG("no debugfs file shows '%s'", line + 1);
	/* The summary counts this file, its variable and its waiter. */
	ASSERT_TRUE(read_summary(&sum));
	EXPECT_LE(1, sum.files);
	EXPECT_LE(1, sum.vars);
	EXPECT_LE(1, sum.waiters);
	ASSERT_EQ(0, stat(path, &sb));
	EXPECT_EQ(0444U, sb.st_mode & 07777U);
	ASSERT_EQ(0, waitvar_set(self->fd, w.id, 1));
	ASSERT_EQ(0, pthread_join(w.thread, NULL));
	ASSERT_TRUE(read_summary(&sum));
	EXPECT_EQ(0, sum.waiters);
	snprintf(line, sizeof(line), "\n%u 1 mutex 0 %u 1 1 1 0 0 0\n", w.id, st.bucket);
	ASSERT_LT(0, read_file(path, buf, sizeof(buf)));
	EXPECT_TRUE(strstr(buf, line) != NULL) TH_LOG("%s", buf);
}

TEST_F(debugfs, debugfs_file_goes_with_its_open_file)
{
	char buf[8192], line[64], path[300];
	uint32_t id = 0;
	int dev;

	dev = open("/dev/waitvar", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, dev);
	ASSERT_EQ(0, waitvar_create(dev, 777777, 0, &id));
	snprintf(line, sizeof(line), "\n%u 777777 none ", id);
	ASSERT_TRUE(find_debugfs_line(buf, sizeof(buf), true, line, path, sizeof(path)));
	close(dev);
	EXPECT_EQ(-1, access(path, F_OK));
}

#define NS_VALUE 777001

/* What pid 1 of the new pid namespace reports: or minus an errno in @pid. */
struct pidns_report {
	int pid;	/* its pid in the test's namespace, from NSpid */
	int seen;	/* the owner its own debugfs file shows it, read there */
};

/* This process's pid in the namespace of the procfs mounted on /proc. */
static int outer_pid(void)
{
	char buf[4096], *p;
	int pid;

	if (read_file("/proc/self/status", buf, sizeof(buf)) <= 0)
		return -1;
	p = strstr(buf, "\nNSpid:");
	return p && sscanf(p, "\nNSpid: %d", &pid) == 1 ? pid : -1;
}

/*
 * In a child: enter a new pid namespace and fork its pid 1, which opens
 * the device, makes a variable, reads its own file's owner in debugfs, and
 * sends @up one report; it holds the file open until @down closes.
 */
static int pidns_opener(int up, int down)
{
	struct pidns_report r = { 0 };
	char buf[8192], line[32], path[300], c;
	int fd, status;
	uint32_t id = 0;
	pid_t pid;

	if (unshare(CLONE_NEWPID)) {
		r.pid = -errno;
		return write(up, &r, sizeof(r)) == sizeof(r) ? 0 : 1;
	}
	pid = fork();
	if (pid == 0) {
		fd = open("/dev/waitvar", O_RDWR | O_CLOEXEC);
		snprintf(line, sizeof(line), " %d ", NS_VALUE);
		if (getpid() != 1 || fd < 0 || waitvar_create(fd, NS_VALUE, 0, &id) ||
		    !find_debugfs_line(buf, sizeof(buf), false, line, path, sizeof(path)) ||
		    sscanf(buf, "owner %d", &r.seen) != 1)
			_exit(2);
		r.pid = outer_pid();
		if (write(up, &r, sizeof(r)) != sizeof(r))
			_exit(3);
		_exit(read(down, &c, 1) < 0 ? 4 : 0);
	}
	close(up);
	return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) ?
	       WEXITSTATUS(status) : 5;
}

/*
 * The opener's pid, as the reader sees it: a process that is pid 1 of a
 * pid namespace of its own opens the device; debugfs, read there, shows
 * its owner as 1, and read here in the namespace above, as the pid this
 * one knows it by.
 */
TEST_F(debugfs, owner_is_the_pid_in_the_readers_namespace)
{
	char buf[8192], path[300], line[64], want[32];
	struct pidns_report r = { 0 };
	int up[2], down[2], status;
	pid_t middle;
	bool found;

	ASSERT_EQ(0, pipe(up));
	ASSERT_EQ(0, pipe(down));
	middle = fork();
	ASSERT_LE(0, middle);
	if (middle == 0) {
		close(up[0]);
		close(down[1]);
		_exit(pidns_opener(up[1], down[0]));
	}
	/* Only the children hold these ends: a child that dies ends the reads. */
	close(up[1]);
	close(down[0]);
	ASSERT_EQ((ssize_t)sizeof(r), read(up[0], &r, sizeof(r)))
		TH_LOG("the children died before they reported");
	if (r.pid == -EINVAL) {
		close(down[1]);
		waitpid(middle, &status, 0);
		SKIP(return, "no pid namespaces in this kernel (CONFIG_PID_NS)");
	}
	ASSERT_LT(0, r.pid) TH_LOG("unshare(CLONE_NEWPID) or NSpid: %s", strerror(-r.pid));
	snprintf(line, sizeof(line), " %d ", NS_VALUE);
	snprintf(want, sizeof(want), "owner %d\n", r.pid);
	found = find_debugfs_line(buf, sizeof(buf), false, line, path, sizeof(path));
	close(down[1]);
	ASSERT_EQ(middle, waitpid(middle, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("the children's exit status: %d", status);
	EXPECT_EQ(1, r.seen) TH_LOG("read in its own namespace, the opener's file shows owner %d",
				    r.seen);
	ASSERT_TRUE(found) TH_LOG("no debugfs file holds the value %d", NS_VALUE);
	EXPECT_EQ(0, strncmp(buf, want, strlen(want)))
		TH_LOG("pid %d of this namespace opened %s, which begins: %.20s", r.pid, path, buf);
}

#define GONE_VALUE 777002

/*
 * A file outlives its opener when another process holds it: the opener's
 * pid is then free for the kernel to give to anyone, and debugfs shows 0.
 * The child opens the device and forks a grandchild that keeps the file,
 * then exits; the test reaps it and reads the file's owner.
 */
TEST_F(debugfs, owner_is_0_once_the_opener_has_exited)
{
	char buf[8192], line[64], path[300], c;
	int up[2], down[2], status;
	pid_t opener, keeper = 0;
	bool found;

	/* The keeper, orphaned when the opener exits, is reaped here. */
	ASSERT_EQ(0, prctl(PR_SET_CHILD_SUBREAPER, 1));
	ASSERT_EQ(0, pipe(up));
	ASSERT_EQ(0, pipe(down));
	opener = fork();
	ASSERT_LE(0, opener);
	if (opener == 0) {
		uint32_t id = 0;
		int fd = open("/dev/waitvar", O_RDWR | O_CLOEXEC);
		pid_t pid;

		close(up[0]);
		close(down[1]);
		if (fd < 0 || waitvar_create(fd, GONE_VALUE, 0, &id))
			_exit(1);
		pid = fork();
		if (pid == 0) {
			/* Holds the file until the test has read it. */
			_exit(read(down[0], &c, 1) < 0 ? 2 : 0);
		}
		_exit(pid < 0 || write(up[1], &pid, sizeof(pid)) != sizeof(pid) ? 3 : 0);
	}
	close(up[1]);
	close(down[0]);
	ASSERT_EQ(opener, waitpid(opener, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status)) TH_LOG("opener status %d", status);
	ASSERT_EQ((ssize_t)sizeof(keeper), read(up[0], &keeper, sizeof(keeper)));
	snprintf(line, sizeof(line), " %d ", GONE_VALUE);
	found = find_debugfs_line(buf, sizeof(buf), false, line, path, sizeof(path));
	close(down[1]);
	EXPECT_EQ(keeper, waitpid(keeper, &status, 0));
	ASSERT_TRUE(found) TH_LOG("no debugfs file holds the value %d", GONE_VALUE);
	EXPECT_EQ(0, strncmp(buf, "owner 0\n", 8))
		TH_LOG("opener %d has exited, yet %s begins: %.20s", opener, path, buf);
}

TEST_HARNESS_MAIN
