// SPDX-License-Identifier: GPL-2.0
/*
 * Variables are charged to the memory cgroup of the task that creates them.
 */
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "waitvar_test.h"

/* The kernel's harness is written for -Wall; it has unused parameters. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

FIXTURE(memcg) {
	int fd;
};

FIXTURE_SETUP(memcg)
{
	self->fd = open("/dev/waitvar", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open /dev/waitvar: %s", strerror(errno));
}

FIXTURE_TEARDOWN(memcg)
{
	close(self->fd);
}

#define CGROUP_ROOT "/sys/fs/cgroup"

#define MEMCG_VARS 1000

/* The "slab" bytes of a cgroup's memory.stat, or -1. */
static long long memcg_slab(const char *cg)
{
	char path[256], key[64];
	long long value, found = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/memory.stat", cg);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fscanf(f, "%63s %lld", key, &value) == 2)
		if (!strcmp(key, "slab"))
			found = value;
	fclose(f);
	return found;
}

/* In a child moved into @cg: exit 0 once the variables show in its slab. */
static void memcg_child(const char *cg)
{
	long long before, after = -1, end;
	char path[256], pid[32];
	uint32_t id;
	int fd, i;

	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	snprintf(pid, sizeof(pid), "%d", getpid());
	if (write_file(path, pid))
		_exit(10);
	fd = open("/dev/waitvar", O_RDWR);
	if (fd < 0)
		_exit(11);
	before = memcg_slab(cg);
	if (before < 0)
		_exit(12);
	for (i = 0; i < MEMCG_VARS; i++)
		if (waitvar_create(fd, i, 0, &id))
			_exit(13);
	/* memory.stat is flushed lazily: give it a few seconds. */
	end = now_ns() + 5000 * NSEC_PER_MSEC;
	while (now_ns() < end) {
		after = memcg_slab(cg);
		/* Each variable is far larger than 64 bytes. */
		if (after - before >= MEMCG_VARS * 64LL)
			_exit(0);
		usleep(50 * 1000);
	}
	fprintf(stderr, "slab grew by %lld bytes for %d variables\n", after - before,
		MEMCG_VARS);
	_exit(14);
}

TEST_F(memcg, variables_are_charged_to_the_creators_memory_cgroup)
{
	char cg[128];
	int status = 0;
	pid_t child;

	if (access(CGROUP_ROOT "/cgroup.controllers", F_OK))
		ASSERT_EQ(0, mount("none", CGROUP_ROOT, "cgroup2", 0, NULL))
			TH_LOG("mount cgroup2: %s", strerror(errno));
	ASSERT_EQ(0, write_file(CGROUP_ROOT "/cgroup.subtree_control", "+memory"))
		TH_LOG("no memory controller (CONFIG_MEMCG): %s", strerror(errno));
	snprintf(cg, sizeof(cg), CGROUP_ROOT "/waitvar-test-%d", getpid());
	ASSERT_EQ(0, mkdir(cg, 0755));
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0)
		memcg_child(cg);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0, rmdir(cg));
}

TEST_HARNESS_MAIN
