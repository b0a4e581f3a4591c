// SPDX-License-Identifier: GPL-2.0
/*
 * Commands caught half way: a result that cannot be written back undoes
 * exactly what was made (and, with the driver's test hooks, an id is not
 * usable before it is written back), LIST copies out without the names
 * lock (its buffer held by userfaultfd), waits let the cgroup freezer
 * freeze their tasks and go on after the thaw, SET never loses a wakeup
 * against WAITV on a lock-protected variable, and a wake that comes while
 * WAITV queues on its variables is not undone (test hooks again).
 */
#include <linux/userfaultfd.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "waitvar_test.h"

/* The kernel's harness is written for -Wall; it has unused parameters. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

/* An unprivileged user (wvuser, rootfs/build-image.sh). */
#define UID_A 1000

/* 8. A failed copy-out undoes exactly what was made */

FIXTURE(copyout) {
	int fd;
	char name[WAITVAR_NAME_MAX];	/* every name a test makes starts with this */
	struct saved_params params;
};

FIXTURE_SETUP(copyout)
{
	self->fd = open("/dev/waitvar", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open /dev/waitvar: %s", strerror(errno));
	snprintf(self->name, sizeof(self->name), "/cpo-%d", getpid());
}

FIXTURE_TEARDOWN(copyout)
{
	EXPECT_EQ(0, params_restore(&self->params))
		TH_LOG("could not put the module parameters back");
	remove_names_with_prefix(self->fd, self->name);
	close(self->fd);
}

/* A NAMED_CREATE or _OPEN argument for @name. */
static struct waitvar_named named_arg(const char *name, uint64_t value, uint32_t mode)
{
	struct waitvar_named arg = { .value = value, .mode = mode };

	memcpy(arg.name, name, strnlen(name, sizeof(arg.name) - 1));
	return arg;
}

/* As UID_A, with max_user_vars 1: the failed CREATE gave its charge back. */
static int create_copyout_child(struct peer *parent, void *arg)
{
	struct waitvar_create c = { .value = 3 };
	uint32_t id = 0;
	int fd = waitvar_open(), ret;

	(void)parent;
	(void)arg;
	CHILD_CHECK(fd >= 0, "open /dev/waitvar");
	ret = ioctl_ro(fd, WAITVAR_IOC_CREATE, &c, sizeof(c));
	CHILD_CHECK(ret == -EFAULT, "CREATE into a read-only argument: %d, not EFAULT", ret);
	ret = waitvar_create(fd, 0, 0, &id);
	CHILD_CHECK(!ret, "CREATE after a failed one, max_user_vars 1: %s (the failed one counts)",
		    strerror(-ret));
	ret = waitvar_create(fd, 0, 0, &id);
	CHILD_CHECK(ret == -ENOSPC, "second CREATE, max_user_vars 1: %d, not ENOSPC", ret);
	return 0;
}

/*
 * Lets @fd hold one variable only (max_vars_per_file 1), so that a call
 * that failed and kept its id leaves no room for the next; returns the
 * device's variable count (debugfs), or -1.  room_back() undoes the limit.
 */
static long room_for_one(struct saved_params *params, unsigned int *old)
{
	if (get_param("max_vars_per_file", old) ||
	    param_override(params, "max_vars_per_file", 1))
		return -1;
	return device_vars();
}

static int room_back(struct saved_params *params, unsigned int old)
{
	return param_override(params, "max_vars_per_file", old);
}

TEST_F(copyout, create_that_cannot_return_its_id_leaves_no_variable)
{
	struct waitvar_create arg = { .value = 3 };
	uint64_t value = 0;
	unsigned int old;
	uint32_t id = 0;
	long vars;

	vars = room_for_one(&self->params, &old);
	ASSERT_LE(0, vars);
	EXPECT_EQ(-EFAULT, ioctl_ro(self->fd, WAITVAR_IOC_CREATE, &arg, sizeof(arg)));
	EXPECT_EQ(vars, device_vars()) TH_LOG("the failed CREATE left a variable");
	/* Room for one: the failed CREATE kept no id. */
	ASSERT_EQ(0, waitvar_create(self->fd, 4, 0, &id)) TH_LOG("the failed CREATE kept its id");
	ASSERT_EQ(0, waitvar_get(self->fd, id, &value));
	EXPECT_EQ(4U, value);
	ASSERT_EQ(0, room_back(&self->params, old));

	ASSERT_EQ(0, param_override(&self->params, "max_user_vars", 1));
	EXPECT_EQ(0, run_as(UID_A, create_copyout_child, NULL));
}

/* As UID_A, with max_user_names and max_user_vars 1: the failed NAMED_CREATE gave both back. */
static int named_create_copyout_child(struct peer *parent, void *arg)
{
	const char *prefix = arg;
	char name[WAITVAR_NAME_MAX], other[WAITVAR_NAME_MAX];
	struct waitvar_named c;
	uint32_t id = 0;
	int fd = waitvar_open(), ret;

	(void)parent;
	CHILD_CHECK(fd >= 0, "open /dev/waitvar");
	test_name(name, prefix, "a");
	test_name(other, prefix, "b");
	c = named_arg(name, 3, 0600);
	ret = ioctl_ro(fd, WAITVAR_IOC_NAMED_CREATE, &c, sizeof(c));
	CHILD_CHECK(ret == -EFAULT, "NAMED_CREATE into a read-only argument: %d, not EFAULT", ret);
	ret = waitvar_named_create(fd, name, 0, 0, 0600, &id);
	CHILD_CHECK(!ret, "NAMED_CREATE after a failed one, limits 1: %s (the failed one counts)",
		    strerror(-ret));
	ret = waitvar_named_create(fd, other, 0, 0, 0600, &id);
	CHILD_CHECK(ret == -ENOSPC, "second NAMED_CREATE, limits 1: %d, not ENOSPC", ret);
	waitvar_named_remove(fd, name);
	return 0;
}

TEST_F(copyout, named_create_that_cannot_return_its_id_leaves_no_name)
{
	struct waitvar_named arg = named_arg(self->name, 3, 0600);
	unsigned int old;
	uint32_t id = 0;
	long vars;
	int fd2;

	vars = room_for_one(&self->params, &old);
	ASSERT_LE(0, vars);
	EXPECT_EQ(-EFAULT, ioctl_ro(self->fd, WAITVAR_IOC_NAMED_CREATE, &arg, sizeof(arg)));
	fd2 = waitvar_open();
	ASSERT_LE(0, fd2);
	EXPECT_EQ(-ENOENT, waitvar_named_open(fd2, self->name, &id)) TH_LOG("the name stayed");
	close(fd2);
	EXPECT_EQ(0, times_listed(self->fd, self->name));
	EXPECT_EQ(vars, device_vars()) TH_LOG("the failed call left a variable");
	/* The name is free, and there is room for one id. */
	ASSERT_EQ(0, waitvar_named_create(self->fd, self->name, 4, 0, 0600, &id));
	ASSERT_EQ(0, waitvar_named_remove(self->fd, self->name));
	ASSERT_EQ(0, room_back(&self->params, old));

	ASSERT_EQ(0, param_override(&self->params, "max_user_names", 1));
	ASSERT_EQ(0, param_override(&self->params, "max_user_vars", 1));
	EXPECT_EQ(0, run_as(UID_A, named_create_copyout_child, self->name));
}

TEST_F(copyout, named_open_that_cannot_return_its_id_leaves_no_id)
{
	struct waitvar_named arg = named_arg(self->name, 0, 0);
	uint64_t value = 0;
	uint32_t id = 0, other_id = 0;
	unsigned int old;
	long vars;
	int other;

	other = waitvar_open();
	ASSERT_LE(0, other);
	ASSERT_EQ(0, waitvar_named_create(other, self->name, 11, 0, 0600, &other_id));
	vars = room_for_one(&self->params, &old);
	ASSERT_LE(0, vars);
	EXPECT_EQ(-EFAULT, ioctl_ro(self->fd, WAITVAR_IOC_NAMED_OPEN, &arg, sizeof(arg)));
	EXPECT_EQ(vars, device_vars()) TH_LOG("the failed NAMED_OPEN left an id");
	/* The undo detached; it removed nothing. */
	EXPECT_EQ(0, waitvar_get(other, other_id, &value));
	EXPECT_EQ(11U, value);
	EXPECT_EQ(1, times_listed(self->fd, self->name));
	/* Room for one id: the failed NAMED_OPEN kept none. */
	ASSERT_EQ(0, waitvar_named_open(self->fd, self->name, &id));
	ASSERT_EQ(0, waitvar_get(self->fd, id, &value));
	EXPECT_EQ(11U, value);
	ASSERT_EQ(0, room_back(&self->params, old));
	close(other);
}

/* As UID_A, with max_user_waiters 1: the failed WATCH gave its entry back. */
static int watch_copyout_child(struct peer *parent, void *arg)
{
	struct waitvar_watch c = { .op = WAITVAR_OP_EQ, .operand = 1 };
	int fd = waitvar_open(), ret, w;

	(void)parent;
	(void)arg;
	CHILD_CHECK(fd >= 0, "open /dev/waitvar");
	CHILD_CHECK(!waitvar_create(fd, 0, 0, &c.id), "CREATE");
	ret = ioctl_ro(fd, WAITVAR_IOC_WATCH, &c, sizeof(c));
	CHILD_CHECK(ret == -EFAULT, "WATCH into a read-only argument: %d, not EFAULT", ret);
	w = waitvar_watch(fd, c.id, WAITVAR_OP_EQ, 1);
	CHILD_CHECK(w >= 0,
		    "WATCH after a failed one, max_user_waiters 1: %s (the failed one counts)",
		    strerror(-w));
	ret = waitvar_watch(fd, c.id, WAITVAR_OP_EQ, 1);
	CHILD_CHECK(ret == -ENOSPC, "second WATCH, max_user_waiters 1: %d, not ENOSPC", ret);
	close(w);
	return 0;
}

TEST_F(copyout, watch_that_cannot_return_its_fd_leaks_no_fd_and_no_waiter)
{
	struct waitvar_watch arg = { .op = WAITVAR_OP_EQ, .operand = 1 };
	struct waitvar_stats st;
	int fds, w;

	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &arg.id));
	fds = count_open_fds();
	ASSERT_LT(0, fds);
	EXPECT_EQ(-EFAULT, ioctl_ro(self->fd, WAITVAR_IOC_WATCH, &arg, sizeof(arg)));
	EXPECT_EQ(fds, count_open_fds()) TH_LOG("the failed WATCH left a descriptor");
	ASSERT_EQ(0, waitvar_stats(self->fd, arg.id, &st));
	EXPECT_EQ(0U, st.waiters) TH_LOG("the failed WATCH left its waiter");
	/* A WATCH that works still does. */
	w = waitvar_watch(self->fd, arg.id, WAITVAR_OP_EQ, 1);
	ASSERT_LE(0, w);
	ASSERT_EQ(0, waitvar_stats(self->fd, arg.id, &st));
	EXPECT_EQ(1U, st.waiters);
	close(w);

	ASSERT_EQ(0, param_override(&self->params, "max_user_waiters", 1));
	EXPECT_EQ(0, run_as(UID_A, watch_copyout_child, NULL));
}

/* 9. Undo by id: another thread's id is never taken back */

FIXTURE(undo_race) {
	int fd;
	char victim[WAITVAR_NAME_MAX];	/* root's, mode 0444: UID_A may only read it */
	char mine[WAITVAR_NAME_MAX];	/* what UID_A tries to make */
	struct saved_params params;
};

FIXTURE_SETUP(undo_race)
{
	self->fd = open("/dev/waitvar", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open /dev/waitvar: %s", strerror(errno));
	snprintf(self->victim, sizeof(self->victim), "/victim-%d", getpid());
	snprintf(self->mine, sizeof(self->mine), "/mine-%d", getpid());
}

FIXTURE_TEARDOWN(undo_race)
{
	EXPECT_EQ(0, params_restore(&self->params))
		TH_LOG("could not put test_copyout_delay_ms back");
	waitvar_named_remove(self->fd, self->victim);
	waitvar_named_remove(self->fd, self->mine);
	close(self->fd);
}

/* How long the driver holds a made id before it writes it back, and when B acts. */
#define RACE_DELAY_MS 1500
/* max_vars_per_file meanwhile: A's variable, B's victim, A's name reopened. */
#define RACE_IDS 4

struct undo_race_ctx {
	bool named;		/* A's command: NAMED_CREATE of @mine, else CREATE */
	const char *victim, *mine;
	int fd;
	atomic_int a_tid, a_done;
	int a_ret;
};

/* Thread A: a create whose result cannot be written back, late. */
static void *race_a_main(void *data)
{
	struct undo_race_ctx *r = data;

	atomic_store(&r->a_tid, gettid());
	if (r->named) {
		struct waitvar_named arg = named_arg(r->mine, 1, 0600);

		r->a_ret = ioctl_ro(r->fd, WAITVAR_IOC_NAMED_CREATE, &arg, sizeof(arg));
	} else {
		struct waitvar_create arg = { .value = 1 };

		r->a_ret = ioctl_ro(r->fd, WAITVAR_IOC_CREATE, &arg, sizeof(arg));
	}
	atomic_store(&r->a_done, 1);
	return NULL;
}

/*
 * As UID_A, two threads on one file.  A creates (the driver holds the
 * result RACE_DELAY_MS, then cannot write it back); meanwhile B tries to
 * destroy the id A's variable got, and attaches the victim, which reuses
 * that id if the first step freed it.  A's undo must then take back what
 * A made, not what its id names by then.
 */
static int undo_race_child(struct peer *parent, void *arg)
{
	struct undo_race_ctx *r = arg;
	int destroy_ret = -ENOENT, open_ret, get_ret, mine_ret;
	uint32_t b_id = 0, id = 0, max, tried;
	uint64_t value = 0;
	pthread_t a;

	(void)parent;
	r->fd = waitvar_open();
	CHILD_CHECK(r->fd >= 0, "open /dev/waitvar");
	CHILD_CHECK(!pthread_create(&a, NULL, race_a_main, r), "thread");
	/* A holds its result in msleep(): asleep in D, its sleep count still. */
	CHILD_CHECK(thread_sleeps_in(&r->a_tid, &r->a_done, 'D') &&
		    task_asleep_count(getpid(), atomic_load(&r->a_tid), 'D') >= 0 &&
		    !atomic_load(&r->a_done),
		    "A returned (%d) or never slept: test_copyout_delay_ms did not hold its result",
		    r->a_ret);
	/*
	 * Thread B, this one: A's id is not known, so B tries every id the
	 * file may hold (FEATURES' max_vars_per_file); none may be usable yet.
	 */
	max = driver_features().max_vars_per_file;
	CHILD_CHECK(max > 0, "FEATURES gives no max_vars_per_file");
	for (tried = 1; tried <= max; tried++) {
		destroy_ret = waitvar_destroy(r->fd, tried);
		if (destroy_ret != -ENOENT)
			break;
	}
	/*
	 * B's open takes its id at once, then is held in the same copy-out
	 * delay: it must start while A is still held, or nothing raced.
	 */
	CHILD_CHECK(!atomic_load(&r->a_done),
		    "A returned before B's destroys were done: the race was not run");
	open_ret = waitvar_named_open(r->fd, r->victim, &b_id);
	pthread_join(a, NULL);
	get_ret = open_ret ? open_ret : waitvar_get(r->fd, b_id, &value);
	mine_ret = waitvar_named_open(r->fd, r->mine, &id);

	CHILD_CHECK(r->a_ret == -EFAULT, "A's %s into a read-only argument: %d, not EFAULT",
		    r->named ? "NAMED_CREATE" : "CREATE", r->a_ret);
	CHILD_CHECK(!open_ret, "B's NAMED_OPEN of the victim: %s", strerror(-open_ret));
	CHILD_CHECK(!get_ret && value == 7,
		    "B's id %u for the victim: GET %d, value %llu, not 7: A's undo took B's id",
		    b_id, get_ret, (unsigned long long)value);
	CHILD_CHECK(mine_ret == -ENOENT, "A's name exists after its EFAULT (NAMED_OPEN: %d)",
		    mine_ret);
	CHILD_CHECK(destroy_ret == -ENOENT,
		    "B's DESTROY of id %u while A's create was in flight: %d, not ENOENT: the id was usable before it was written back",
		    tried, destroy_ret);
	return 0;
}

static void check_undo_race(struct __test_metadata *_metadata, FIXTURE_DATA(undo_race) *self,
			    bool named)
{
	struct undo_race_ctx r = { .named = named, .victim = self->victim, .mine = self->mine };
	struct waitvar_features f = driver_features();
	uint32_t root_id = 0, id = 0;
	uint64_t value = 0;
	int fd2;

	if (!(f.semantics & WAITVAR_SEM_TEST_HOOKS) || !has_param("test_copyout_delay_ms"))
		SKIP(return, "driver built without test hooks: no test_copyout_delay_ms");
	ASSERT_EQ(0U, getuid());
	ASSERT_EQ(0, waitvar_named_create(self->fd, self->victim, 7, 0, 0444, &root_id));
	ASSERT_EQ(0, param_override(&self->params, "test_copyout_delay_ms", RACE_DELAY_MS));
	/* Few ids, so that B's sweep of them ends well inside A's hold. */
	ASSERT_EQ(0, param_override(&self->params, "max_vars_per_file", RACE_IDS));
	EXPECT_EQ(0, run_as(UID_A, undo_race_child, &r));
	ASSERT_EQ(0, params_restore(&self->params));

	/* The victim, which UID_A may only read, is still there, and unchanged. */
	fd2 = waitvar_open();
	ASSERT_LE(0, fd2);
	EXPECT_EQ(0, waitvar_named_open(fd2, self->victim, &id))
		TH_LOG("the victim is gone: an undo removed a name it did not make");
	EXPECT_EQ(0, waitvar_get(self->fd, root_id, &value));
	EXPECT_EQ(7U, value);
	EXPECT_EQ(-ENOENT, waitvar_named_open(fd2, self->mine, &id));
	close(fd2);
}

TEST_F_TIMEOUT(undo_race, named_create_undo_removes_only_the_name_it_made, 60)
{
	check_undo_race(_metadata, self, true);
}

TEST_F_TIMEOUT(undo_race, create_undo_detaches_only_the_id_it_made, 60)
{
	check_undo_race(_metadata, self, false);
}

/* 10. LIST copies out without the names lock */

/* A thread in WAITVAR_IOC_LIST. */
struct lister {
	int fd;
	char *buf;
	uint32_t size;
	pthread_t thread;
	bool started;
	atomic_int done;
	int ret;
	uint32_t count, needed;
};

static void *lister_main(void *data)
{
	struct lister *l = data;

	l->ret = waitvar_list(l->fd, l->buf, l->size, &l->count, &l->needed);
	atomic_store(&l->done, 1);
	return NULL;
}

/* A thread in WAITVAR_IOC_NAMED_CREATE, on a file of its own. */
struct creator {
	int fd;
	const char *name;
	pthread_t thread;
	bool started;
	atomic_int done;
	int ret;
};

static void *creator_main(void *data)
{
	struct creator *c = data;
	uint32_t id = 0;

	c->ret = waitvar_named_create(c->fd, c->name, 0, 0, 0600, &id);
	atomic_store(&c->done, 1);
	return NULL;
}

FIXTURE(list) {
	int fd;
	char name[WAITVAR_NAME_MAX];	/* every name a test makes starts with this */
	int uffd;
	char *buf;			/* registered with @uffd, never touched */
	long page;
	bool resolved;			/* @buf's fault was served */
	struct lister lister;
	struct creator creator;
	char other[WAITVAR_NAME_MAX];
};

FIXTURE_SETUP(list)
{
	self->fd = open("/dev/waitvar", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open /dev/waitvar: %s", strerror(errno));
	snprintf(self->name, sizeof(self->name), "/lst-%d", getpid());
	self->uffd = -1;
	self->creator.fd = -1;
	self->page = sysconf(_SC_PAGESIZE);
}

/* Serves the missing-page fault at @addr with a page of zeros. */
static int uffd_serve(int uffd, void *addr, long page)
{
	struct uffdio_copy copy;
	void *zeros;
	int ret;

	zeros = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (zeros == MAP_FAILED)
		return -errno;
	memset(zeros, 0, page);
	copy = (struct uffdio_copy){ .dst = (uintptr_t)addr, .src = (uintptr_t)zeros,
				     .len = page };
	ret = ioctl(uffd, UFFDIO_COPY, &copy) ? -errno : 0;
	munmap(zeros, page);
	return ret;
}

FIXTURE_TEARDOWN(list)
{
	/* Nothing may stay blocked on the registered buffer. */
	if (self->lister.started) {
		if (!self->resolved && self->uffd >= 0)
			uffd_serve(self->uffd, self->buf, self->page);
		if (!atomic_load(&self->lister.done) && self->uffd >= 0) {
			/* Releasing the userfaultfd fails the fault instead. */
			close(self->uffd);
			self->uffd = -1;
		}
		pthread_join(self->lister.thread, NULL);
	}
	if (self->creator.started)
		pthread_join(self->creator.thread, NULL);
	if (self->creator.fd >= 0)
		close(self->creator.fd);
	if (self->uffd >= 0)
		close(self->uffd);
	if (self->buf)
		munmap(self->buf, self->page);
	remove_names_with_prefix(self->fd, self->name);
	close(self->fd);
}

/* True if the @count names at @buf include @name. */
static bool names_include(const char *buf, uint32_t count, const char *name)
{
	uint32_t i;

	for (i = 0; i < count; i++, buf += strlen(buf) + 1)
		if (!strcmp(buf, name))
			return true;
	return false;
}

TEST_F(list, list_faulting_in_its_copy_out_holds_up_no_named_command)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;
	struct uffd_msg msg;
	struct pollfd pfd;
	long long deadline;
	uint32_t id = 0;
	void *buf;

	ASSERT_EQ(0, waitvar_named_create(self->fd, self->name, 1, 0, 0644, &id));
	test_name(self->other, self->name, "other");

	self->uffd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	ASSERT_LE(0, self->uffd) TH_LOG("userfaultfd: %s", strerror(errno));
	ASSERT_EQ(0, ioctl(self->uffd, UFFDIO_API, &api)) TH_LOG("UFFDIO_API: %s", strerror(errno));
	buf = mmap(NULL, self->page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(buf != MAP_FAILED);
	self->buf = buf;
	reg = (struct uffdio_register){ .range = { .start = (uintptr_t)self->buf,
						   .len = self->page },
					.mode = UFFDIO_REGISTER_MODE_MISSING };
	ASSERT_EQ(0, ioctl(self->uffd, UFFDIO_REGISTER, &reg))
		TH_LOG("UFFDIO_REGISTER: %s", strerror(errno));

	/* LIST writes the names to a page that is not there: its copy-out waits for us. */
	self->lister = (struct lister){ .fd = self->fd, .buf = self->buf, .size = self->page };
	ASSERT_EQ(0, pthread_create(&self->lister.thread, NULL, lister_main, &self->lister));
	self->lister.started = true;
	pfd = (struct pollfd){ .fd = self->uffd, .events = POLLIN };
	ASSERT_EQ(1, poll(&pfd, 1, 10000))
		TH_LOG("LIST did not fault on its buffer (done %d, ret %d)",
		       atomic_load(&self->lister.done), self->lister.ret);
	ASSERT_EQ((ssize_t)sizeof(msg), read(self->uffd, &msg, sizeof(msg)));
	ASSERT_EQ(UFFD_EVENT_PAGEFAULT, msg.event);
	EXPECT_EQ((uintptr_t)self->buf, msg.arg.pagefault.address & ~(uint64_t)(self->page - 1));
	EXPECT_FALSE(atomic_load(&self->lister.done));

	/* Meanwhile a name is made, from another file. */
	self->creator = (struct creator){ .fd = waitvar_open(), .name = self->other };
	ASSERT_LE(0, self->creator.fd);
	ASSERT_EQ(0, pthread_create(&self->creator.thread, NULL, creator_main, &self->creator));
	self->creator.started = true;
	deadline = now_ns() + 5000 * NSEC_PER_MSEC;
	while (!atomic_load(&self->creator.done) && now_ns() < deadline)
		usleep(1000);
	EXPECT_TRUE(atomic_load(&self->creator.done))
		TH_LOG("NAMED_CREATE waited 5 s for a LIST stalled in its copy-out: the names lock is held across copy_to_user()");
	EXPECT_FALSE(atomic_load(&self->lister.done));

	/* The page comes: LIST finishes, with what it gathered. */
	ASSERT_EQ(0, uffd_serve(self->uffd, self->buf, self->page))
		TH_LOG("UFFDIO_COPY: %s", strerror(errno));
	self->resolved = true;
	ASSERT_EQ(0, pthread_join(self->lister.thread, NULL));
	self->lister.started = false;
	EXPECT_EQ(0, self->lister.ret);
	EXPECT_LE(1U, self->lister.count);
	EXPECT_TRUE(names_include(self->buf, self->lister.count, self->name));
	EXPECT_LE(strlen(self->name) + 1, self->lister.needed);
	ASSERT_EQ(0, pthread_join(self->creator.thread, NULL));
	self->creator.started = false;
	EXPECT_EQ(0, self->creator.ret);
	EXPECT_EQ(1, times_listed(self->fd, self->other));
}

/* Sum of the sizes of the @count names at @buf, NULs included. */
static uint32_t names_size(const char *buf, uint32_t count)
{
	uint32_t i, size = 0;

	for (i = 0; i < count; i++) {
		size += strlen(buf) + 1;
		buf += strlen(buf) + 1;
	}
	return size;
}

/* As UID_A: LIST leaves out what it may not read, and counts the rest exactly. */
static int list_as_user_child(struct peer *parent, void *arg)
{
	static char buf[65536];
	const char *const *names = arg;	/* readable, readable, root's 0600 */
	uint32_t count = 0, needed = 0;
	int fd = waitvar_open(), ret;

	(void)parent;
	CHILD_CHECK(fd >= 0, "open /dev/waitvar");
	ret = waitvar_list(fd, buf, sizeof(buf), &count, &needed);
	CHILD_CHECK(!ret, "LIST: %s", strerror(-ret));
	CHILD_CHECK(names_include(buf, count, names[0]) && names_include(buf, count, names[1]),
		    "LIST leaves out a name the user may read");
	CHILD_CHECK(!names_include(buf, count, names[2]), "LIST shows root's 0600 name");
	CHILD_CHECK(needed == names_size(buf, count), "needed %u, but the %u names take %u",
		    needed, count, names_size(buf, count));
	return 0;
}

TEST_F(list, list_counts_and_needed_are_exact)
{
	static char buf[65536], part[65536];
	char a[WAITVAR_NAME_MAX], b[WAITVAR_NAME_MAX], c[WAITVAR_NAME_MAX];
	const char *names[3] = { a, c, b };
	uint32_t count = 0, needed = 0, pcount = 0, pneeded = 0, id = 0, last;

	test_name(a, self->name, "a");
	test_name(b, self->name, "b");
	test_name(c, self->name, "c");
	ASSERT_EQ(0, waitvar_named_create(self->fd, a, 0, 0, 0644, &id));
	ASSERT_EQ(0, waitvar_named_create(self->fd, b, 0, 0, 0600, &id));
	ASSERT_EQ(0, waitvar_named_create(self->fd, c, 0, 0, 0644, &id));

	ASSERT_EQ(0, waitvar_list(self->fd, buf, sizeof(buf), &count, &needed));
	ASSERT_LE(3U, count);
	EXPECT_EQ(needed, names_size(buf, count)) TH_LOG("all fit: needed is what they take");
	EXPECT_EQ(1, times_listed(self->fd, a));
	EXPECT_EQ(1, times_listed(self->fd, b));
	EXPECT_EQ(1, times_listed(self->fd, c));

	/* One byte short: the last name is left out, needed stays. */
	ASSERT_EQ(0, waitvar_list(self->fd, part, needed - 1, &pcount, &pneeded));
	EXPECT_EQ(count - 1, pcount);
	EXPECT_EQ(needed, pneeded);
	last = names_size(buf, count - 1);
	EXPECT_EQ(last, names_size(part, pcount));
	EXPECT_EQ(0, memcmp(buf, part, last));
	/* No room at all. */
	ASSERT_EQ(0, waitvar_list(self->fd, part, 0, &pcount, &pneeded));
	EXPECT_EQ(0U, pcount);
	EXPECT_EQ(needed, pneeded);

	EXPECT_EQ(0, run_as(UID_A, list_as_user_child, names));
}

/* 11. Waits are freezable */

#define FREEZER_ROOT "/tmp/wvfreezer"

FIXTURE(freezer) {
	int fd;
	bool mounted;
	int mount_errno;
	char cg[128];		/* this test's freezer cgroup */
	pid_t child;		/* the waiting task, until reaped */
};

FIXTURE_SETUP(freezer)
{
	self->fd = open("/dev/waitvar", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open /dev/waitvar: %s", strerror(errno));
	if (mkdir(FREEZER_ROOT, 0755) && errno != EEXIST)
		self->mount_errno = errno;
	else if (mount("none", FREEZER_ROOT, "cgroup", 0, "freezer"))
		self->mount_errno = errno;
	else
		self->mounted = true;
	if (self->mounted) {
		snprintf(self->cg, sizeof(self->cg), FREEZER_ROOT "/wv-%d", getpid());
		ASSERT_EQ(0, mkdir(self->cg, 0755))
			TH_LOG("mkdir %s: %s", self->cg, strerror(errno));
	}
}

/* Writes @state to the cgroup's freezer.state; false if it cannot. */
static bool freezer_write(const char *cg, const char *state)
{
	char path[192];

	snprintf(path, sizeof(path), "%s/freezer.state", cg);
	return write_file(path, state) == 0;
}

/*
 * Writes @state and waits up to 10 s for freezer.state to read it back;
 * the last state read (or why none was) goes to @seen.
 */
static bool freezer_reaches(const char *cg, const char *state, char *seen, size_t size)
{
	long long deadline = now_ns() + 10000 * NSEC_PER_MSEC;
	char path[192];

	snprintf(path, sizeof(path), "%s/freezer.state", cg);
	if (!freezer_write(cg, state)) {
		snprintf(seen, size, "(write: %s)", strerror(errno));
		return false;
	}
	do {
		if (read_file(path, seen, size) < 0) {
			snprintf(seen, size, "(read: %s)", strerror(errno));
			return false;
		}
		seen[strcspn(seen, "\n")] = '\0';
		if (!strcmp(seen, state))
			return true;
		usleep(10 * 1000);
	} while (now_ns() < deadline);
	return false;
}

FIXTURE_TEARDOWN(freezer)
{
	if (self->child > 0) {
		freezer_write(self->cg, "THAWED");
		kill(self->child, SIGKILL);
		waitpid(self->child, NULL, 0);
	}
	if (self->mounted) {
		if (rmdir(self->cg))
			TH_LOG("rmdir %s: %s", self->cg, strerror(errno));
		if (umount(FREEZER_ROOT)) {
			TH_LOG("umount %s: %s", FREEZER_ROOT, strerror(errno));
			umount2(FREEZER_ROOT, MNT_DETACH);
		}
	}
	rmdir(FREEZER_ROOT);
	close(self->fd);
}

/* The child's exit status once it ended, within @timeout_ms; -1 if it did not. */
static int reap_within(pid_t *child, int timeout_ms)
{
	long long deadline = now_ns() + timeout_ms * NSEC_PER_MSEC;
	int status = 0;
	pid_t got;

	do {
		got = waitpid(*child, &status, WNOHANG);
		if (got == *child) {
			*child = 0;
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		}
		if (timeout_ms)
			usleep(10 * 1000);
	} while (now_ns() < deadline);
	return -1;
}

/*
 * A child waits in @mode for a SET; its task goes into the freezer
 * cgroup, which must reach FROZEN; thawed, the wait goes on, unchanged,
 * and ends with the SET.  @state is how the wait shows in /proc.
 */
static void check_frozen_wait(struct __test_metadata *_metadata, FIXTURE_DATA(freezer) *self,
			      uint32_t mode, uint32_t flags, long long timeout_ns, char state)
{
	char path[192], pid[32], seen[64];
	uint32_t id = 0;
	bool frozen;
	int ret;

	if (!self->mounted && (self->mount_errno == ENOENT || self->mount_errno == ENODEV ||
			       self->mount_errno == EBUSY))
		SKIP(return, "no cgroup v1 freezer: mount -t cgroup -o freezer: %s",
		     strerror(self->mount_errno));
	ASSERT_TRUE(self->mounted) TH_LOG("mount -t cgroup -o freezer none " FREEZER_ROOT ": %s",
					  strerror(self->mount_errno));
	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &id));
	fflush(stdout);
	fflush(stderr);
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (self->child == 0) {
		/* The file is the parent's, inherited. */
		uint64_t value = 0;

		ret = waitvar_wait(self->fd, id, WAITVAR_OP_EQ, 1, mode, flags, timeout_ns, &value);
		if (ret || value != 1) {
			fprintf(stderr, "# child: WAIT returned %d (%s), value %llu\n", ret,
				strerror(-ret), (unsigned long long)value);
			_exit(1);
		}
		_exit(0);
	}
	ASSERT_TRUE(task_sleeps_in(self->child, self->child, state));
	ASSERT_EQ(1U, wait_stat(self->fd, id, waiters, 1U));

	snprintf(path, sizeof(path), "%s/cgroup.procs", self->cg);
	snprintf(pid, sizeof(pid), "%d", self->child);
	ASSERT_EQ(0, write_file(path, pid)) TH_LOG("%s: %s", path, strerror(errno));
	frozen = freezer_reaches(self->cg, "FROZEN", seen, sizeof(seen));
	EXPECT_TRUE(frozen)
		TH_LOG("freezer.state is %s after 10 s, not FROZEN: the waiting task does not "
		       "freeze", seen);
	ret = reap_within(&self->child, 0);
	EXPECT_EQ(-1, ret) TH_LOG("the wait ended in the freezer (exit status %d)", ret);
	ASSERT_TRUE(freezer_reaches(self->cg, "THAWED", seen, sizeof(seen)))
		TH_LOG("freezer.state is %s, not THAWED", seen);
	ASSERT_EQ(-1, ret);

	/* Thawed, the task waits on as before: asleep again, not gone. */
	EXPECT_LE(0, task_asleep_count(self->child, self->child, state));
	ret = reap_within(&self->child, 0);
	ASSERT_EQ(-1, ret) TH_LOG("the wait ended at the thaw (exit status %d): it was interrupted",
				  ret);
	ASSERT_EQ(1U, wait_stat(self->fd, id, waiters, 1U));
	ASSERT_EQ(0, waitvar_set(self->fd, id, 1));
	EXPECT_EQ(0, reap_within(&self->child, 10000)) TH_LOG("the wait did not end with the SET");
}

TEST_F_TIMEOUT(freezer, killable_untimed_wait_lets_its_task_freeze_and_waits_on_after_thaw, 60)
{
	check_frozen_wait(_metadata, self, WAITVAR_MODE_KILLABLE, 0, 0, 'D');
}

TEST_F_TIMEOUT(freezer, interruptible_timed_wait_is_frozen_in_place_not_interrupted, 60)
{
	check_frozen_wait(_metadata, self, WAITVAR_MODE_INTERRUPTIBLE, WAITVAR_WAIT_TIMEOUT,
			  30000 * NSEC_PER_MSEC, 'S');
}

TEST_F_TIMEOUT(freezer, uninterruptible_and_io_waits_let_their_task_freeze, 60)
{
	check_frozen_wait(_metadata, self, WAITVAR_MODE_UNINTERRUPTIBLE, WAITVAR_WAIT_TIMEOUT,
			  uninterruptible_timeout_ns(60000 * NSEC_PER_MSEC), 'D');
	check_frozen_wait(_metadata, self, WAITVAR_MODE_IO, WAITVAR_WAIT_TIMEOUT,
			  uninterruptible_timeout_ns(60000 * NSEC_PER_MSEC), 'D');
}

/* 12. No lost wakeup between SET and WAITV on a lock-protected variable */

#define LW_ROUNDS 2000
#define LW_TIMEOUT_NS (2000 * NSEC_PER_MSEC)

FIXTURE(wakeup) {
	int fd;
};

FIXTURE_SETUP(wakeup)
{
	self->fd = open("/dev/waitvar", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open /dev/waitvar: %s", strerror(errno));
}

FIXTURE_TEARDOWN(wakeup)
{
	close(self->fd);
}

/*
 * Waits for 1, 2, ... LW_ROUNDS in turn, each with a WAITV that times out:
 * three entries, the variable SET moves through every place among two
 * that never hold (a plain variable and one more of the same lock), so the
 * wake can come while WAITV is queueing on any of its three queues.
 */
#define LW_ENTRIES 3

struct lw_waiter {
	int fd;
	uint32_t id, decoys[LW_ENTRIES - 1];
	pthread_t thread;
	atomic_int round;	/* the value it waits for now */
	atomic_int done;
	int failed_round, ret;
	uint64_t value;
};

static void *lw_main(void *data)
{
	struct lw_waiter *w = data;
	int i, j, d, at, ret;

	for (i = 1; i <= LW_ROUNDS; i++) {
		struct waitvar_waitv_entry e[LW_ENTRIES];
		uint64_t value = 0;

		at = i % LW_ENTRIES;
		for (j = 0, d = 0; j < LW_ENTRIES; j++)
			e[j] = (struct waitvar_waitv_entry){
				.id = j == at ? w->id : w->decoys[d++],
				.op = WAITVAR_OP_EQ,
				.operand = j == at ? (uint64_t)i : UINT64_MAX,
			};
		atomic_store(&w->round, i);
		ret = waitvar_waitv(w->fd, e, LW_ENTRIES, WAITVAR_MODE_INTERRUPTIBLE,
				    WAITVAR_WAIT_TIMEOUT, LW_TIMEOUT_NS, &value);
		if (ret != at || value != (uint64_t)i) {
			w->failed_round = i;
			w->ret = ret;
			w->value = value;
			break;
		}
	}
	atomic_store(&w->done, 1);
	return NULL;
}

/*
 * SET i as soon as the waiter started round i (racing it into its sleep),
 * or, every other round, once STATS shows it queued.  Its WAITV times out
 * only if a SET's wake missed it.
 */
static void check_no_lost_wakeup(struct __test_metadata *_metadata, int fd, uint32_t lock)
{
	struct lw_waiter w = { .fd = fd };
	struct waitvar_stats st;
	long long deadline;
	int i, spins, ret = 0;

	ASSERT_EQ(0, waitvar_create(fd, 0, lock, &w.id));
	ASSERT_EQ(0, waitvar_create(fd, 0, 0, &w.decoys[0]));
	ASSERT_EQ(0, waitvar_create(fd, 0, lock, &w.decoys[1]));
	ASSERT_EQ(0, pthread_create(&w.thread, NULL, lw_main, &w));
	for (i = 1; i <= LW_ROUNDS && !ret; i++) {
		deadline = now_ns() + 10000 * NSEC_PER_MSEC;
		while (atomic_load(&w.round) < i && !atomic_load(&w.done) && now_ns() < deadline)
			sched_yield();
		if (atomic_load(&w.round) < i || atomic_load(&w.done))
			break;
		if (i % 2 == 0)
			for (spins = 0; spins < 1000; spins++)
				if (waitvar_stats(fd, w.id, &st) || st.waiters)
					break;
		ret = waitvar_set(fd, w.id, i);
	}
	pthread_join(w.thread, NULL);
	EXPECT_EQ(0, ret) TH_LOG("SET %d: %s", i - 1, strerror(-ret));
	EXPECT_EQ(0, w.failed_round)
		TH_LOG("round %d: WAITV returned %d (want index %d), value %llu: the SET's wake "
		       "was lost, or another entry held", w.failed_round, w.ret,
		       w.failed_round % LW_ENTRIES, (unsigned long long)w.value);
	EXPECT_EQ(LW_ROUNDS, atomic_load(&w.round));
	ASSERT_EQ(0, waitvar_stats(fd, w.id, &st));
	EXPECT_EQ(0U, st.timeouts);
	/* Each round's WAITV counted once, on the target and on both decoys. */
	EXPECT_EQ((uint64_t)LW_ROUNDS, st.waits);
	for (i = 0; i < LW_ENTRIES - 1; i++) {
		ASSERT_EQ(0, waitvar_stats(fd, w.decoys[i], &st));
		EXPECT_EQ((uint64_t)LW_ROUNDS, st.waits) TH_LOG("decoy %d", i);
		EXPECT_EQ(0U, st.timeouts) TH_LOG("decoy %d", i);
	}
}

TEST_F_TIMEOUT(wakeup, set_never_loses_a_waitv_wakeup_on_a_spinlock_variable, 150)
{
	check_no_lost_wakeup(_metadata, self->fd, WAITVAR_CREATE_SPINLOCK);
}

TEST_F_TIMEOUT(wakeup, set_never_loses_a_waitv_wakeup_on_a_mutex_variable, 150)
{
	check_no_lost_wakeup(_metadata, self->fd, WAITVAR_CREATE_MUTEX);
}

/* 13. A wake that comes while WAITV queues is not undone */

/* The longest the driver holds a WAITV between its first queue and the rest. */
#define QW_HOLD_MS 5000
/* How long the woken waiter may take to return (it needs a CPU). */
#define QW_RETURN_MS 5000

FIXTURE(waitv_queue) {
	int fd;
	struct saved_params params;
};

FIXTURE_SETUP(waitv_queue)
{
	self->fd = open("/dev/waitvar", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open /dev/waitvar: %s", strerror(errno));
}

FIXTURE_TEARDOWN(waitv_queue)
{
	EXPECT_EQ(0, params_restore(&self->params))
		TH_LOG("could not put test_waitv_queue_hold_ms back");
	close(self->fd);
}

struct qw_waiter {
	int fd;
	struct waitvar_waitv_entry e[2];
	atomic_int tid, done;
	int ret;
	uint64_t value;
};

static void *qw_main(void *data)
{
	struct qw_waiter *w = data;

	atomic_store(&w->tid, gettid());
	w->ret = waitvar_waitv(w->fd, w->e, 2, WAITVAR_MODE_INTERRUPTIBLE, 0, 0, &w->value);
	atomic_store(&w->done, 1);
	return NULL;
}

/*
 * A WAITV for "A == 2" or a never-true condition on B.  While the driver
 * holds it between queueing A and queueing B (test_waitv_queue_holds says
 * when it is there), SET A = 1: its wake finds the waiter's entry on A's
 * queue, but the waiter's condition is still false.  Released, the waiter
 * sleeps; SET A = 2 must wake it: if the first wake took its entry off A's
 * queue and the waiter then slept without it, the second finds nobody,
 * and only a wake of B ends the WAITV.
 */
static void check_wake_while_queueing(struct __test_metadata *_metadata,
				      FIXTURE_DATA(waitv_queue) *self, uint32_t lock)
{
	struct qw_waiter w = { .fd = self->fd };
	struct waitvar_features f = driver_features();
	unsigned int holds0 = 0, holds = 0;
	long long deadline;
	long sleeps = -1;
	uint32_t a, b;
	pthread_t thread;
	bool slept, lost;

	if (!(f.semantics & WAITVAR_SEM_TEST_HOOKS) || !has_param("test_waitv_queue_hold_ms"))
		SKIP(return, "driver built without test hooks: no test_waitv_queue_hold_ms");
	ASSERT_EQ(0, waitvar_create(self->fd, 0, lock, &a));
	ASSERT_EQ(0, waitvar_create(self->fd, 0, lock, &b));
	w.e[0] = (struct waitvar_waitv_entry){ .id = a, .op = WAITVAR_OP_EQ, .operand = 2 };
	w.e[1] = (struct waitvar_waitv_entry){ .id = b, .op = WAITVAR_OP_EQ, .operand = 1 };
	ASSERT_EQ(0, get_param("test_waitv_queue_holds", &holds0));
	ASSERT_EQ(0, param_override(&self->params, "test_waitv_queue_hold_ms", QW_HOLD_MS));
	ASSERT_EQ(0, pthread_create(&thread, NULL, qw_main, &w));
	deadline = now_ns() + QW_HOLD_MS * NSEC_PER_MSEC;
	while (!get_param("test_waitv_queue_holds", &holds) && holds == holds0 &&
	       !atomic_load(&w.done) && now_ns() < deadline)
		usleep(1000);
	EXPECT_NE(holds0, holds) TH_LOG("the WAITV never reached the driver's hold");
	if (holds != holds0)
		sleeps = thread_sleeps_count(atomic_load(&w.tid));
	EXPECT_EQ(0, waitvar_set(self->fd, a, 1));
	/* Released, it queues on B, finds both conditions false and sleeps. */
	EXPECT_EQ(0, param_override(&self->params, "test_waitv_queue_hold_ms", 0));
	deadline = now_ns() + 10000 * NSEC_PER_MSEC;
	while (!(slept = sleeps >= 0 && thread_sleeps_count(atomic_load(&w.tid)) > sleeps) &&
	       !atomic_load(&w.done) && now_ns() < deadline)
		usleep(1000);
	EXPECT_TRUE(slept) TH_LOG("the waiter did not sleep after the hold");
	EXPECT_EQ(0, waitvar_set(self->fd, a, 2));
	deadline = now_ns() + QW_RETURN_MS * NSEC_PER_MSEC;
	while (!atomic_load(&w.done) && now_ns() < deadline)
		usleep(1000);
	lost = !atomic_load(&w.done);
	EXPECT_FALSE(lost)
		TH_LOG("the waiter still sleeps %d ms after A was set to 2: that wake found no entry",
		       QW_RETURN_MS);
	if (lost)	/* B's entry is still queued: B's wake ends the WAITV */
		EXPECT_EQ(0, waitvar_set(self->fd, b, 1));
	pthread_join(thread, NULL);
	EXPECT_EQ(0, w.ret) TH_LOG("WAITV: %s", strerror(-w.ret));
	EXPECT_EQ(2U, w.value);
}

TEST_F_TIMEOUT(waitv_queue, wake_while_waitv_queues_is_not_undone, 30)
{
	check_wake_while_queueing(_metadata, self, 0);
}

TEST_F_TIMEOUT(waitv_queue, wake_while_waitv_queues_is_not_undone_on_a_mutex_variable, 30)
{
	check_wake_while_queueing(_metadata, self, WAITVAR_CREATE_MUTEX);
}

TEST_HARNESS_MAIN
