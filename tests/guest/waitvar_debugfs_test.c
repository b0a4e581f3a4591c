// SPDX-License-Identifier: GPL-2.0
/*
 * The debugfs files: waitvar/summary and one waitvar/file<N> per open file,
 * showing each variable's value, lock and counters, gone with the file.
 */
#include <dirent.h>
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

/* Finds this process's debugfs file that contains @line; its path goes to @path. */
static bool find_debugfs_line(char *buf, size_t size, const char *line, char *path,
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
		if (read_file(path, buf, size) > 0 && !strncmp(buf, owner, strlen(owner)) &&
		    strstr(buf, line)) {
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
	ASSERT_TRUE(find_debugfs_line(buf, sizeof(buf), line, path, sizeof(path)))
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
	ASSERT_TRUE(find_debugfs_line(buf, sizeof(buf), line, path, sizeof(path)));
	close(dev);
	EXPECT_EQ(-1, access(path, F_OK));
}

TEST_HARNESS_MAIN
