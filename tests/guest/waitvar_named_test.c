// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/waitvar named variables: sharing between files and processes,
 * lifetime, owner/group/mode checks against an unprivileged user, LIST (and
 * its unaudited capability check) and the device-wide limit.
 */
#include <grp.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "waitvar_test.h"

/* The kernel's harness is written for -Wall; it has unused parameters. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

/* The unprivileged user rootfs/build-image.sh creates. */
#define USER_NAME "wvuser"

/* @name's uid and gid from /etc/passwd (no NSS: the 32-bit build is static). */
static bool lookup_user(const char *name, uid_t *uid, gid_t *gid)
{
	char line[512], *user, *rest;
	unsigned int u, g;
	bool found = false;
	FILE *f = fopen("/etc/passwd", "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		user = strtok_r(line, ":", &rest);
		if (user && !strcmp(user, name) &&
		    sscanf(rest, "%*[^:]:%u:%u", &u, &g) == 2) {
			*uid = u;
			*gid = g;
			found = true;
		}
	}
	fclose(f);
	return found;
}

/*
 * A raw NAMED_CREATE, _OPEN or _REMOVE with every field the caller's, for
 * the errno checks the library's calls cannot make; @id may be NULL.
 */
static int named_raw(int fd, unsigned long cmd, const char *name, uint64_t value,
		     uint32_t flags, uint32_t mode, uint32_t *id)
{
	struct waitvar_named arg = { .value = value, .flags = flags, .mode = mode };

	memcpy(arg.name, name, strnlen(name, sizeof(arg.name) - 1));
	if (ioctl(fd, cmd, &arg))
		return -errno;
	if (id)
		*id = arg.id;
	return 0;
}

FIXTURE(named) {
	int fd;
	char name[WAITVAR_NAME_MAX];	/* unique to this test */
	uid_t uid;			/* of USER_NAME */
	gid_t gid;
	struct saved_params params;
	char tracefs[64];		/* a kprobe event to remove there, or "" */
	char event[48];
	char instance[160];		/* a tracefs instance to remove, or "" */
};

FIXTURE_SETUP(named)
{
	self->fd = open("/dev/waitvar", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open /dev/waitvar: %s", strerror(errno));
	snprintf(self->name, sizeof(self->name), "/test-%d", getpid());
	ASSERT_TRUE(lookup_user(USER_NAME, &self->uid, &self->gid))
		TH_LOG("no user %s in /etc/passwd", USER_NAME);
}

FIXTURE_TEARDOWN(named)
{
	char path[256], undef[80];

	/* Named variables outlive the test: take them away. */
	waitvar_named_remove(self->fd, self->name);
	close(self->fd);
	EXPECT_EQ(0, params_restore(&self->params));
	/* A kprobe event stays until removed, and cannot be while enabled. */
	if (self->instance[0]) {
		snprintf(path, sizeof(path), "%s/events/kprobes/%s/enable", self->instance,
			 self->event);
		write_file(path, "0");
		rmdir(self->instance);
	}
	if (self->event[0]) {
		snprintf(path, sizeof(path), "%s/kprobe_events", self->tracefs);
		/* Without O_APPEND, a write to kprobe_events first clears every event. */
		snprintf(undef, sizeof(undef), "-:kprobes/%s", self->event);
		EXPECT_EQ(0, write_file_flags(path, undef, O_APPEND));
	}
}

TEST_F(named, two_files_share_a_named_variable)
{
	struct waiter w = { .op = WAITVAR_OP_EQ, .operand = 9 };
	uint64_t value = 0;
	uint32_t id2 = 0;
	int fd2;

	ASSERT_EQ(0, waitvar_named_create(self->fd, self->name, 5, 0, 0600, &w.id));
	fd2 = open("/dev/waitvar", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, waitvar_named_open(fd2, self->name, &id2));
	ASSERT_EQ(0, waitvar_get(fd2, id2, &value));
	EXPECT_EQ(5U, value);
	w.fd = self->fd;
	ASSERT_EQ(0, waiter_start(&w));
	ASSERT_TRUE(waiter_sleeps(&w));
	/* A change through the other file wakes this file's waiter. */
	ASSERT_EQ(0, waitvar_set(fd2, id2, 9));
	ASSERT_EQ(0, pthread_join(w.thread, NULL));
	EXPECT_EQ(0, w.ret);
	EXPECT_EQ(9U, w.seen);
	close(fd2);
}

TEST_F(named, a_named_variable_outlives_its_creator_until_removed)
{
	uint64_t value = 0;
	uint32_t id = 0;
	int fd2;

	fd2 = open("/dev/waitvar", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, waitvar_named_create(fd2, self->name, 77, 0, 0644, &id));
	/* DESTROY of the id only detaches it. */
	ASSERT_EQ(0, waitvar_destroy(fd2, id));
	close(fd2);
	ASSERT_EQ(0, waitvar_named_open(self->fd, self->name, &id));
	ASSERT_EQ(0, waitvar_get(self->fd, id, &value));
	EXPECT_EQ(77U, value);
	ASSERT_EQ(0, waitvar_named_remove(self->fd, self->name));
	EXPECT_EQ(-ENOENT, waitvar_named_open(self->fd, self->name, &id));
	EXPECT_EQ(-ENOENT, waitvar_named_remove(self->fd, self->name));
	/* The attached id reports the death. */
	EXPECT_EQ(-EIDRM, waitvar_wait(self->fd, id, WAITVAR_OP_EQ, 0, 0, 0, 0, NULL));
}

/*
 * After NAMED_REMOVE, an id still attached to the variable only reports
 * EIDRM: every command on it but DESTROY, read and update alike, and from
 * a second file as from the remover's; DESTROY detaches it.
 */
TEST_F(named, an_id_of_a_removed_name_only_reports_eidrm)
{
	struct waitvar_waitv_entry e = { .op = WAITVAR_OP_EQ, .operand = 5 };
	struct waitvar_stats st;
	uint64_t value = 0;
	uint32_t id = 0, id2 = 0;
	int fd2, fds[2];

	fd2 = open("/dev/waitvar", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, waitvar_named_create(self->fd, self->name, 5, 0, 0600, &id));
	ASSERT_EQ(0, waitvar_named_open(fd2, self->name, &id2));
	ASSERT_EQ(0, waitvar_named_remove(self->fd, self->name));
	fds[0] = self->fd;
	fds[1] = fd2;
	for (int f = 0; f < 2; f++) {
		int fd = fds[f];
		uint32_t i = f ? id2 : id;

		e.id = i;
		TH_LOG("the %s file", f ? "second" : "remover's");
		EXPECT_EQ(-EIDRM, waitvar_get(fd, i, &value));
		EXPECT_EQ(-EIDRM, waitvar_set(fd, i, 6));
		EXPECT_EQ(-EIDRM, waitvar_add(fd, i, 1, WAITVAR_ADD_WAKE, &value));
		EXPECT_EQ(-EIDRM, waitvar_dec_and_wake(fd, i, &value));
		EXPECT_EQ(-EIDRM, waitvar_cmpxchg(fd, i, 5, 6, &value));
		EXPECT_EQ(-EIDRM, waitvar_wake(fd, i));
		EXPECT_EQ(-EIDRM, waitvar_wake_nr(fd, i, 1, 0));
		EXPECT_EQ(-EIDRM, waitvar_wake_nr(fd, i, 0, WAITVAR_WAKE_FILTER));
		EXPECT_EQ(-EIDRM, waitvar_wait(fd, i, WAITVAR_OP_EQ, 5, 0, 0, 0, NULL));
		EXPECT_EQ(-EIDRM, waitvar_waitv(fd, &e, 1, 0, 0, 0, NULL));
		EXPECT_EQ(-EIDRM, waitvar_watch(fd, i, WAITVAR_OP_EQ, 5));
		EXPECT_EQ(-EIDRM, waitvar_stats(fd, i, &st));
		EXPECT_EQ(0, waitvar_destroy(fd, i));
		EXPECT_EQ(-ENOENT, waitvar_get(fd, i, &value));
	}
	close(fd2);
}

TEST_F(named, remove_wakes_waiters_with_eidrm)
{
	struct waiter w[2];
	int i;

	for (i = 0; i < 2; i++) {
		w[i] = (struct waiter){ .fd = self->fd, .op = WAITVAR_OP_EQ, .operand = 1,
					.flags = i ? WAITVAR_WAIT_EXCLUSIVE : 0 };
	}
	ASSERT_EQ(0, waitvar_named_create(self->fd, self->name, 0, 0, 0600, &w[0].id));
	w[1].id = w[0].id;
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, waiter_start(&w[i]));
		ASSERT_TRUE(waiter_sleeps(&w[i]));
	}
	ASSERT_EQ(0, waitvar_named_remove(self->fd, self->name));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, pthread_join(w[i].thread, NULL));
		EXPECT_EQ(-EIDRM, w[i].ret);
	}
}

TEST_F(named, bad_names_and_fields_return_the_documented_errno)
{
	/* "/caf\xe9": a Latin-1 letter, which the kernel's isalnum() takes. */
	static const char *const bad[] = { "", "/", "name", "/a/b", "/sp ace", "/tab\t",
					   "/caf\xe9", "/\xff" };
	struct waitvar_named arg = {};
	char longname[WAITVAR_NAME_MAX + 1];
	uint32_t id = 0;
	size_t i;

	for (i = 0; i < ARRAY_LEN(bad); i++)
		EXPECT_EQ(-EINVAL, waitvar_named_create(self->fd, bad[i], 0, 0, 0600, &id))
			TH_LOG("bad name %zu", i);
	/* 63 characters leave no room for the NUL. */
	memset(longname, 'x', sizeof(longname));
	longname[0] = '/';
	memcpy(arg.name, longname, sizeof(arg.name));
	arg.mode = 0600;
	EXPECT_EQ(-1, ioctl(self->fd, WAITVAR_IOC_NAMED_CREATE, &arg));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-EINVAL, waitvar_named_create(self->fd, self->name, 0, 0, 01600, &id));
	EXPECT_EQ(-EINVAL, waitvar_named_create(self->fd, self->name, 0, 1U << 31, 0600, &id));
	EXPECT_EQ(-ENOENT, waitvar_named_open(self->fd, self->name, &id));
	ASSERT_EQ(0, waitvar_named_create(self->fd, self->name, 0, 0, 0600, &id));
	EXPECT_EQ(-EEXIST, waitvar_named_create(self->fd, self->name, 0, 0, 0600, &id));
	/* OPEN and REMOVE take no value, flags or mode. */
	EXPECT_EQ(-EINVAL, named_raw(self->fd, WAITVAR_IOC_NAMED_OPEN, self->name, 1, 0, 0, &id));
	EXPECT_EQ(-EINVAL, named_raw(self->fd, WAITVAR_IOC_NAMED_REMOVE, self->name, 0, 0, 0600,
				     NULL));
	/* The bytes after the name's NUL must be 0, for every command. */
	memset(&arg, 0, sizeof(arg));
	memcpy(arg.name, self->name, strlen(self->name));
	arg.name[sizeof(arg.name) - 1] = 'x';
	EXPECT_EQ(-1, ioctl(self->fd, WAITVAR_IOC_NAMED_OPEN, &arg));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(self->fd, WAITVAR_IOC_NAMED_REMOVE, &arg));
	EXPECT_EQ(EINVAL, errno);
	arg.mode = 0600;
	arg.name[1] = 'Z';
	EXPECT_EQ(-1, ioctl(self->fd, WAITVAR_IOC_NAMED_CREATE, &arg));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, waitvar_named_remove(self->fd, self->name));
}

/* Drops to uid @uid, gid @gid, no supplementary groups; _exit()s on failure. */
static void become(uid_t uid, gid_t gid)
{
	if (setgroups(0, NULL) || setresgid(gid, gid, gid) || setresuid(uid, uid, uid))
		_exit(100);
}

/*
 * Every command on an id, with the access the header says it needs.  Run in
 * this order by a permitted caller, they leave the value at 1 (SET 1, ADD 1,
 * DEC_AND_WAKE, a CMPXCHG of 1 for 1) and the name removed.
 */
enum access_cmd {
	A_GET, A_SET, A_ADD, A_DEC, A_CMPXCHG, A_WAKE, A_WAKE_NR, A_WAIT, A_WAITV,
	A_WATCH, A_STATS, A_OPEN, A_REMOVE, A_COUNT
};

static const struct {
	const char *name;
	bool write;	/* needs write permission, or read */
} access_cmds[A_COUNT] = {
	[A_GET] = { "GET", false },		[A_SET] = { "SET", true },
	[A_ADD] = { "ADD", true },		[A_DEC] = { "DEC_AND_WAKE", true },
	[A_CMPXCHG] = { "CMPXCHG", true },	[A_WAKE] = { "WAKE", true },
	[A_WAKE_NR] = { "WAKE_NR", true },	[A_WAIT] = { "WAIT", false },
	[A_WAITV] = { "WAITV", false },		[A_WATCH] = { "WATCH", false },
	[A_STATS] = { "STATS", false },		[A_OPEN] = { "NAMED_OPEN", false },
	[A_REMOVE] = { "NAMED_REMOVE", true },
};

/* What a caller may not do, as bits 1 << enum access_cmd. */
#define DENY_ALL	((1U << A_COUNT) - 1)
static unsigned int deny_write(void)
{
	unsigned int mask = 0;

	for (int i = 0; i < A_COUNT; i++)
		mask |= access_cmds[i].write ? 1U << i : 0;
	return mask;
}

/* Runs command @cmd on @id (or @name) as a child does: 0 or -errno. */
static int access_run(int fd, uint32_t id, const char *name, enum access_cmd cmd)
{
	struct waitvar_waitv_entry entry = { .id = id, .op = WAITVAR_OP_NE, .operand = 12345 };
	struct waitvar_stats stats;
	uint32_t other = 0;
	uint64_t value;
	int ret;

	switch (cmd) {
	case A_GET: return waitvar_get(fd, id, &value);
	case A_SET: return waitvar_set(fd, id, 1);
	case A_ADD: return waitvar_add(fd, id, 1, 0, &value);
	case A_DEC: return waitvar_dec_and_wake(fd, id, &value);
	case A_CMPXCHG: return waitvar_cmpxchg(fd, id, 1, 1, &value);
	case A_WAKE: return waitvar_wake(fd, id);
	case A_WAKE_NR:
		ret = waitvar_wake_nr(fd, id, 1, 0);
		return ret < 0 ? ret : 0;
	case A_WAIT:
		return waitvar_wait(fd, id, WAITVAR_OP_NE, 12345, 0, WAITVAR_WAIT_TIMEOUT, 0, NULL);
	case A_WAITV:
		ret = waitvar_waitv(fd, &entry, 1, 0, WAITVAR_WAIT_TIMEOUT, 0, NULL);
		return ret < 0 ? ret : 0;
	case A_WATCH:
		ret = waitvar_watch(fd, id, WAITVAR_OP_EQ, 0);
		if (ret < 0)
			return ret;
		close(ret);
		return 0;
	case A_STATS: return waitvar_stats(fd, id, &stats);
	case A_OPEN: return waitvar_named_open(fd, name, &other);
	case A_REMOVE: return waitvar_named_remove(fd, name);
	case A_COUNT: break;
	}
	return -EINVAL;
}

/*
 * In a child that inherited @fd (with @id attached by root) and became
 * @uid/@gid, every command of access_cmds in turn.  Each must succeed or
 * fail with EACCES; returns the mask of those refused, or -1 when one did
 * something else (said on stderr) or the child did not finish.
 */
static int access_as(int fd, uint32_t id, const char *name, uid_t uid, gid_t gid)
{
	int *rc = mmap(NULL, sizeof(int) * A_COUNT, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int status = 0, mask = 0;
	pid_t child;

	if (rc == MAP_FAILED)
		return -1;
	for (int i = 0; i < A_COUNT; i++)
		rc[i] = 1;	/* not run */
	child = fork();
	if (child < 0)
		return -1;
	if (child == 0) {
		become(uid, gid);
		for (int i = 0; i < A_COUNT; i++)
			rc[i] = access_run(fd, id, name, i);
		_exit(0);
	}
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status))
		mask = -1;
	for (int i = 0; i < A_COUNT && mask >= 0; i++) {
		if (rc[i] == -EACCES) {
			mask |= 1 << i;
		} else if (rc[i]) {
			fprintf(stderr, "# uid %u gid %u: %s: %s\n", (unsigned int)uid,
				(unsigned int)gid, access_cmds[i].name,
				rc[i] > 0 ? "not run" : strerror(-rc[i]));
			mask = -1;
		}
	}
	munmap(rc, sizeof(int) * A_COUNT);
	return mask;
}

TEST_F(named, unprivileged_user_cannot_touch_roots_0600_variable)
{
	uint32_t id = 0;

	ASSERT_EQ(0U, getuid()) TH_LOG("needs root to create the variable and drop privileges");
	ASSERT_EQ(0, waitvar_named_create(self->fd, self->name, 3, 0, 0600, &id));
	EXPECT_EQ((int)DENY_ALL, access_as(self->fd, id, self->name, self->uid, self->gid));
}

TEST_F(named, mode_bits_are_honoured_for_group_and_others)
{
	uint64_t value = 0;
	uint32_t id = 0;

	ASSERT_EQ(0U, getuid());
	/* Group (gid 0) may read and write, others may only read. */
	ASSERT_EQ(0, waitvar_named_create(self->fd, self->name, 3, 0, 0064, &id));
	EXPECT_EQ((int)deny_write(), access_as(self->fd, id, self->name, self->uid, self->gid));
	ASSERT_EQ(0, waitvar_get(self->fd, id, &value));
	EXPECT_EQ(3U, value);
	/* The group member may do it all, REMOVE included: the id then only reports that. */
	EXPECT_EQ(0, access_as(self->fd, id, self->name, self->uid, 0));
	EXPECT_EQ(-EIDRM, waitvar_get(self->fd, id, &value));
	EXPECT_EQ(-ENOENT, waitvar_named_remove(self->fd, self->name));
	/* Others' bits, when they grant more, apply to others. */
	ASSERT_EQ(0, waitvar_named_create(self->fd, self->name, 3, 0, 0006, &id));
	EXPECT_EQ(0, access_as(self->fd, id, self->name, self->uid, self->gid));
}

/* The names LIST returns, as one string "a b c". */
static int list_names(int fd, char *out, size_t size, uint32_t *needed)
{
	uint32_t count, i;
	char buf[4096], *p;
	int ret;

	ret = waitvar_list(fd, buf, sizeof(buf), &count, needed);
	if (ret)
		return ret;
	out[0] = '\0';
	for (i = 0, p = buf; i < count; i++, p += strlen(p) + 1)
		snprintf(out + strlen(out), size - strlen(out), "%s ", p);
	return count;
}

TEST_F(named, list_shows_the_names_the_caller_may_read)
{
	char names[4096], secret[WAITVAR_NAME_MAX + 8], open_[WAITVAR_NAME_MAX + 8];
	struct waitvar_list bad = { .flags = 1 };
	int status = 0, n;
	uint32_t id = 0, needed = 0;
	pid_t child;

	snprintf(secret, sizeof(secret), "%s-s", self->name);
	snprintf(open_, sizeof(open_), "%s-o", self->name);
	ASSERT_EQ(0, waitvar_named_create(self->fd, secret, 0, 0, 0600, &id));
	ASSERT_EQ(0, waitvar_named_create(self->fd, open_, 0, 0, 0644, &id));
	n = list_names(self->fd, names, sizeof(names), &needed);
	ASSERT_LE(2, n);
	EXPECT_TRUE(strstr(names, secret) != NULL);
	EXPECT_TRUE(strstr(names, open_) != NULL);
	EXPECT_LE(strlen(secret) + strlen(open_) + 2, needed);
	EXPECT_EQ(-1, ioctl(self->fd, WAITVAR_IOC_LIST, &bad));
	EXPECT_EQ(EINVAL, errno);

	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		become(self->uid, self->gid);
		if (list_names(self->fd, names, sizeof(names), &needed) < 1)
			_exit(1);
		_exit(strstr(names, secret) ? 2 : strstr(names, open_) ? 0 : 3);
	}
	ASSERT_EQ(child, waitpid(child, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	waitvar_named_remove(self->fd, secret);
	waitvar_named_remove(self->fd, open_);
}

#define CAP_DAC_OVERRIDE_NR	1
#define CAP_OPT_NOAUDIT_BIT	0x2	/* cap_capable()'s opts */

/*
 * As wvuser, in a child the kprobe's filter names: LIST (@list) or a
 * NAMED_OPEN of @name, each refused CAP_DAC_OVERRIDE; returns how many
 * CAP_DAC_OVERRIDE checks it made, and how many of those asked for no audit.
 */
static int count_cap_checks(struct __test_metadata *_metadata, FIXTURE_DATA(named) *self,
			    const char *inst, const char *event, bool list, const char *name,
			    int *noaudit)
{
	char path[256], filter[64], buf[65536], *line, *save = NULL, *p;
	int go[2], status, n = 0, cap;
	unsigned int opts;
	uint32_t id = 0;
	pid_t child;
	char c;

	*noaudit = 0;
	if (pipe(go))
		return -1;
	child = fork();
	if (child < 0)
		return -1;
	if (child == 0) {
		close(go[1]);
		become(self->uid, self->gid);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		if (list)
			_exit(list_names(self->fd, buf, sizeof(buf), &id) < 0 ? 2 : 0);
		_exit(waitvar_named_open(self->fd, name, &id) == -EACCES ? 0 : 3);
	}
	close(go[0]);
	snprintf(path, sizeof(path), "%s/events/kprobes/%s/filter", inst, event);
	snprintf(filter, sizeof(filter), "common_pid == %d", child);
	EXPECT_EQ(0, write_file(path, filter));
	/* Empties the buffer of the last call's records: only O_TRUNC does. */
	snprintf(path, sizeof(path), "%s/trace", inst);
	EXPECT_EQ(0, write_file_flags(path, "", O_TRUNC)) TH_LOG("%s: %s", path, strerror(errno));
	snprintf(path, sizeof(path), "%s/events/kprobes/%s/enable", inst, event);
	EXPECT_EQ(0, write_file(path, "1"));
	EXPECT_EQ(1, write(go[1], "g", 1));
	close(go[1]);
	EXPECT_EQ(child, waitpid(child, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status)) TH_LOG("child status %d", status);
	EXPECT_EQ(0, write_file(path, "0"));
	snprintf(path, sizeof(path), "%s/trace", inst);
	if (read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		p = strstr(line, " cap=");
		if (line[0] == '#' || !p || sscanf(p, " cap=%d opts=%x", &cap, &opts) != 2)
			continue;
		if (cap != CAP_DAC_OVERRIDE_NR)
			continue;
		n++;
		*noaudit += !!(opts & CAP_OPT_NOAUDIT_BIT);
	}
	return n;
}

/*
 * A name LIST leaves out is no access refused: its CAP_DAC_OVERRIDE check
 * asks for no audit record, which an LSM would otherwise log for every
 * hidden name; a NAMED_OPEN refused is an access refused, and audited.
 * A kprobe on cap_capable() reads each check's options.
 */
TEST_F(named, list_hides_names_without_an_audited_capability_check)
{
	char def[160], secret[WAITVAR_NAME_MAX + 8];
	int checks, noaudit;
	uint32_t id = 0;

	ASSERT_EQ(0U, getuid());
	if (!find_tracefs(self->tracefs, sizeof(self->tracefs)))
		SKIP(return, "no tracefs");
	snprintf(def, sizeof(def), "%s/kprobe_events", self->tracefs);
	if (access(def, W_OK))
		SKIP(return, "no kprobe events in this kernel (CONFIG_KPROBE_EVENTS)");
	snprintf(self->event, sizeof(self->event), "waitvar_cap_%d", getpid());
	snprintf(def, sizeof(def), "p:kprobes/%s cap_capable cap=$arg3:s32 opts=$arg4:x32",
		 self->event);
	snprintf(self->instance, sizeof(self->instance), "%s/kprobe_events", self->tracefs);
	if (write_file_flags(self->instance, def, O_APPEND)) {
		self->event[0] = self->instance[0] = '\0';
		SKIP(return, "kprobe events cannot fetch function arguments here ($argN): %s",
		     strerror(errno));
	}
	snprintf(self->instance, sizeof(self->instance), "%s/instances/waitvar-cap-%d",
		 self->tracefs, getpid());
	ASSERT_EQ(0, mkdir(self->instance, 0700)) TH_LOG("%s: %s", self->instance, strerror(errno));

	snprintf(secret, sizeof(secret), "%s-s", self->name);
	ASSERT_EQ(0, waitvar_named_create(self->fd, secret, 0, 0, 0600, &id));
	checks = count_cap_checks(_metadata, self, self->instance, self->event, true, NULL,
				  &noaudit);
	EXPECT_LE(1, checks) TH_LOG("LIST made no CAP_DAC_OVERRIDE check for the hidden name");
	EXPECT_EQ(checks, noaudit) TH_LOG("LIST: %d of its %d checks are audited",
					   checks - noaudit, checks);
	checks = count_cap_checks(_metadata, self, self->instance, self->event, false, secret,
				  &noaudit);
	EXPECT_LE(1, checks) TH_LOG("NAMED_OPEN made no CAP_DAC_OVERRIDE check");
	EXPECT_EQ(0, noaudit) TH_LOG("NAMED_OPEN refused without an audited check");
	waitvar_named_remove(self->fd, secret);
}

TEST_F(named, the_device_wide_limit_returns_enospc)
{
	char name[WAITVAR_NAME_MAX + 8], names[4096];
	uint32_t id = 0, needed = 0;
	unsigned int old = 0;
	int before, i;

	before = list_names(self->fd, names, sizeof(names), &needed);
	ASSERT_LE(0, before);
	ASSERT_EQ(0, get_param("max_named_vars", &old));
	ASSERT_EQ(0, set_param("max_named_vars", before + 2));
	for (i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "%s-%d", self->name, i);
		EXPECT_EQ(i < 2 ? 0 : -ENOSPC,
			  waitvar_named_create(self->fd, name, 0, 0, 0600, &id));
	}
	/* What it was, not a number of our own: the default may change. */
	ASSERT_EQ(0, set_param("max_named_vars", old));
	for (i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "%s-%d", self->name, i);
		waitvar_named_remove(self->fd, name);
	}
}

#define NS_NAMES 1000

/*
 * Names are hashed by namespace and name: 1,000 names in another user
 * namespace (as a container's subuids would make) lengthen no chain a
 * lookup walks beyond a few names, where one list made each lookup and
 * LIST walk all of them.  The child makes them, the parent looks its own
 * name up beside them, then the child removes them.
 */
TEST_F(named, names_spread_over_their_hash_table_whatever_their_namespace)
{
	int up[2], down[2], status, i, made = 0;
	char name[WAITVAR_NAME_MAX + 16], c;
	unsigned int old_names = 0;
	long long longest;
	uint32_t id = 0;
	pid_t child;

	/* Root's names, made here and in the child, are charged to it. */
	ASSERT_EQ(0, get_param("max_user_names", &old_names));
	ASSERT_EQ(0, param_override(&self->params, "max_user_names", old_names + NS_NAMES + 8));
	ASSERT_EQ(0, pipe(up));
	ASSERT_EQ(0, pipe(down));
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		close(up[0]);
		close(down[1]);
		if (unshare(CLONE_NEWUSER)) {
			made = -errno;
			_exit(write(up[1], &made, sizeof(made)) == sizeof(made) ? 0 : 1);
		}
		for (i = 0; i < NS_NAMES; i++) {
			snprintf(name, sizeof(name), "%s-n%d", self->name, i);
			made += !waitvar_named_create(self->fd, name, i, 0, 0600, &id);
		}
		if (write(up[1], &made, sizeof(made)) != sizeof(made) || read(down[0], &c, 1) < 0)
			_exit(2);
		for (i = 0; i < NS_NAMES; i++) {
			snprintf(name, sizeof(name), "%s-n%d", self->name, i);
			waitvar_named_remove(self->fd, name);
		}
		_exit(0);
	}
	close(up[1]);
	close(down[0]);
	ASSERT_EQ((ssize_t)sizeof(made), read(up[0], &made, sizeof(made)))
		TH_LOG("the child died before it reported");
	ASSERT_LE(0, made) TH_LOG("unshare(CLONE_NEWUSER): %s", strerror(-made));
	EXPECT_EQ(NS_NAMES, made);
	/* The same names here are other names: each one's own chain. */
	snprintf(name, sizeof(name), "%s-n%d", self->name, 7);
	EXPECT_EQ(-ENOENT, waitvar_named_open(self->fd, name, &id));
	ASSERT_EQ(0, waitvar_named_create(self->fd, self->name, 5, 0, 0600, &id));
	longest = summary_field("name_chain_max");
	close(down[1]);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status)) TH_LOG("child status %d", status);
	ASSERT_LE(0, longest) TH_LOG("no name_chain_max in %s", SUMMARY_PATH);
	TH_LOG("%d names in another namespace: the longest chain holds %lld", made, longest);
	/* 1,000-odd names over 1,024 chains: a dozen in one is already 1 in 10^9. */
	EXPECT_GE(12, longest);
}

TEST_F(named, named_open_into_a_full_file_returns_enospc)
{
	uint32_t id = 0, own = 0, other = 0;
	unsigned int old = 0;
	int fd2;

	ASSERT_EQ(0, waitvar_named_create(self->fd, self->name, 6, 0, 0600, &id));
	fd2 = waitvar_open();
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, get_param("max_vars_per_file", &old));
	ASSERT_EQ(0, set_param("max_vars_per_file", 1));
	EXPECT_EQ(0, waitvar_create(fd2, 0, 0, &own));
	EXPECT_EQ(-ENOSPC, waitvar_named_open(fd2, self->name, &other));
	/* A slot freed, the same call attaches it. */
	EXPECT_EQ(0, waitvar_destroy(fd2, own));
	EXPECT_EQ(0, waitvar_named_open(fd2, self->name, &other));
	ASSERT_EQ(0, set_param("max_vars_per_file", old));
	close(fd2);
}

TEST_F(named, list_into_a_bad_buffer_returns_efault)
{
	long page = sysconf(_SC_PAGESIZE);
	struct waitvar_list arg = { .size = 4096 };
	uint32_t id = 0;
	void *bad;

	ASSERT_EQ(0, waitvar_named_create(self->fd, self->name, 0, 0, 0600, &id));
	bad = mmap(NULL, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(bad != MAP_FAILED);
	arg.names = (uintptr_t)bad;
	EXPECT_EQ(-1, ioctl(self->fd, WAITVAR_IOC_LIST, &arg));
	EXPECT_EQ(EFAULT, errno);
	munmap(bad, page);
}

TEST_HARNESS_MAIN
