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

/* The name of the @i-th variable the child of @pid makes with NAMED_CREATE. */
static void memcg_name(char *buf, size_t size, pid_t pid, int i)
{
	snprintf(buf, size, "/memcg-%d-%d", (int)pid, i);
}

/*
 * In a child moved into @cg: exit 0 once the @nr variables it made (by
 * NAMED_CREATE if @named) show in its slab.  The parent removes the names.
 */
static void memcg_child(const char *cg, bool named, int nr)
{
	long long before, after = -1, end;
	char path[256], pid[32], name[WAITVAR_NAME_MAX];
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
	for (i = 0; i < nr; i++) {
		memcg_name(name, sizeof(name), getpid(), i);
		if (named ? waitvar_named_create(fd, name, i, 0, 0600, &id) :
			    waitvar_create(fd, i, 0, &id))
			_exit(13);
	}
	/* memory.stat is flushed lazily: give it a few seconds. */
	end = now_ns() + 5000 * NSEC_PER_MSEC;
	while (now_ns() < end) {
		after = memcg_slab(cg);
		/* Each variable is far larger than 64 bytes. */
		if (after - before >= nr * 64LL)
			_exit(0);
		usleep(50 * 1000);
	}
	fprintf(stderr, "slab grew by %lld bytes for %d variables\n", after - before, nr);
	_exit(14);
}

static void check_memcg_charge(struct __test_metadata *_metadata, bool named)
{
	struct waitvar_features f = driver_features();
	char cg[128], name[WAITVAR_NAME_MAX];
	int status = 0, nr = MEMCG_VARS, fd, i;
	pid_t child;

	if (named) {
		/* Within the name limits, with room for other tests' names. */
		nr = f.max_user_names < f.max_named_vars ? f.max_user_names : f.max_named_vars;
		nr = nr / 2 < MEMCG_VARS ? nr / 2 : MEMCG_VARS;
		ASSERT_LT(0, nr);
	}
	ASSERT_EQ(0, cgroup2_mount()) TH_LOG("mount cgroup2: %s", strerror(errno));
	ASSERT_EQ(0, write_file(CGROUP_ROOT "/cgroup.subtree_control", "+memory"))
		TH_LOG("no memory controller (CONFIG_MEMCG): %s", strerror(errno));
	snprintf(cg, sizeof(cg), CGROUP_ROOT "/waitvar-test-%d", getpid());
	ASSERT_EQ(0, mkdir(cg, 0755));
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0)
		memcg_child(cg, named, nr);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("%d %s variables", nr, named ? "named" : "");
	if (named) {
		fd = waitvar_open();
		ASSERT_LE(0, fd);
		for (i = 0; i < nr; i++) {
			memcg_name(name, sizeof(name), child, i);
			waitvar_named_remove(fd, name);
		}
		close(fd);
	}
	/* The named variables' memory went with them, so the cgroup can go. */
	EXPECT_EQ(0, rmdir(cg));
}

TEST_F(memcg, variables_are_charged_to_the_creators_memory_cgroup)
{
	check_memcg_charge(_metadata, false);
}

TEST_F(memcg, named_variables_are_charged_to_the_creators_memory_cgroup)
{
	check_memcg_charge(_metadata, true);
}

TEST_HARNESS_MAIN
