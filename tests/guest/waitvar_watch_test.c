// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/waitvar tests of WATCH descriptors (poll, select, epoll, read),
 * lock-protected variables and the debugfs files.
 */
#include <dirent.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/stat.h>

#include "waitvar_test.h"

/* The kernel's harness is written for -Wall; it has unused parameters. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

FIXTURE(watch) {
	int fd;
};

FIXTURE_SETUP(watch)
{
	self->fd = open("/dev/waitvar", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open /dev/waitvar: %s", strerror(errno));
}

FIXTURE_TEARDOWN(watch)
{
	close(self->fd);
}

/* Returns the new descriptor or -errno. */
static int wv_watch(int fd, uint32_t id, uint32_t op, uint64_t operand, uint32_t flags)
{
	struct waitvar_watch arg = { .id = id, .op = op, .operand = operand, .flags = flags };

	if (ioctl(fd, WAITVAR_IOC_WATCH, &arg))
		return -errno;
	return arg.fd;
}

static short poll_now(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1 ? p.revents : 0;
}

TEST_F(watch, watch_fd_is_readable_only_while_the_condition_holds)
{
	uint64_t got = 0;
	uint32_t id = 0;
	int w, flags;

	ASSERT_EQ(0, wv_create(self->fd, 0, &id));
	w = wv_watch(self->fd, id, WAITVAR_OP_EQ, 5, 0);
	ASSERT_LE(0, w);
	EXPECT_TRUE(fcntl(w, F_GETFD) & FD_CLOEXEC);
	EXPECT_EQ(0, poll_now(w));
	flags = fcntl(w, F_GETFL);
	ASSERT_EQ(0, fcntl(w, F_SETFL, flags | O_NONBLOCK));
	EXPECT_EQ(-1, read(w, &got, sizeof(got)));
	EXPECT_EQ(EAGAIN, errno);

	ASSERT_EQ(0, wv_set(self->fd, id, 5));
	EXPECT_EQ(POLLIN, poll_now(w));
	EXPECT_EQ((ssize_t)sizeof(got), read(w, &got, sizeof(got)));
	EXPECT_EQ(5U, got);
	/* Too small a buffer for the value. */
	EXPECT_EQ(-1, read(w, &got, 4));
	EXPECT_EQ(EINVAL, errno);

	ASSERT_EQ(0, wv_set(self->fd, id, 6));
	EXPECT_EQ(0, poll_now(w));
	close(w);
}

struct poller {
	int fd, epfd;
	int kind;	/* 0 poll, 1 select, 2 epoll, 3 blocking read */
	pthread_t thread;
	atomic_int tid, done;
	int ret;
	uint64_t value;
};

static void *poller_main(void *data)
{
	struct poller *p = data;
	struct pollfd pfd = { .fd = p->fd, .events = POLLIN };
	struct epoll_event ev;
	fd_set set;

	atomic_store(&p->tid, gettid());
	switch (p->kind) {
	case 0:
		p->ret = poll(&pfd, 1, 60000) == 1 && pfd.revents == POLLIN ? 0 : -1;
		break;
	case 1:
		FD_ZERO(&set);
		FD_SET(p->fd, &set);
		p->ret = select(p->fd + 1, &set, NULL, NULL, NULL) == 1 &&
			 FD_ISSET(p->fd, &set) ? 0 : -1;
		break;
	case 2:
		p->ret = epoll_wait(p->epfd, &ev, 1, 60000) == 1 && ev.events == EPOLLIN ? 0 : -1;
		break;
	default:
		p->ret = read(p->fd, &p->value, sizeof(p->value)) == sizeof(p->value) ? 0 : -errno;
		break;
	}
	atomic_store(&p->done, 1);
	return NULL;
}

static bool poller_sleeps(struct poller *p)
{
	return thread_sleeps_in(&p->tid, &p->done, 'S');
}

/* A thread blocked on the watch descriptor wakes when SET makes it hold. */
static void check_blocking_watch(struct __test_metadata *_metadata, int fd, int kind)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct poller p = { .kind = kind, .epfd = -1 };
	uint64_t value = 0;
	uint32_t id = 0;

	ASSERT_EQ(0, wv_create(fd, 0, &id));
	p.fd = wv_watch(fd, id, WAITVAR_OP_GE, 10, 0);
	ASSERT_LE(0, p.fd);
	if (kind == 2) {
		p.epfd = epoll_create1(EPOLL_CLOEXEC);
		ASSERT_LE(0, p.epfd);
		ASSERT_EQ(0, epoll_ctl(p.epfd, EPOLL_CTL_ADD, p.fd, &ev));
	}
	ASSERT_EQ(0, pthread_create(&p.thread, NULL, poller_main, &p));
	ASSERT_TRUE(poller_sleeps(&p));
	/* Short of the condition: nothing to report. */
	ASSERT_EQ(0, wv_add(fd, id, 9, WAITVAR_ADD_WAKE, &value));
	usleep(100 * 1000);
	ASSERT_TRUE(poller_sleeps(&p));
	ASSERT_EQ(0, wv_add(fd, id, 3, WAITVAR_ADD_WAKE, &value));
	ASSERT_EQ(0, pthread_join(p.thread, NULL));
	EXPECT_EQ(0, p.ret);
	if (kind == 3)
		EXPECT_EQ(12U, p.value);
	if (p.epfd >= 0)
		close(p.epfd);
	close(p.fd);
}

TEST_F(watch, poll_wakes_when_the_condition_becomes_true)
{
	check_blocking_watch(_metadata, self->fd, 0);
}

TEST_F(watch, select_wakes_when_the_condition_becomes_true)
{
	check_blocking_watch(_metadata, self->fd, 1);
}

TEST_F(watch, epoll_wakes_when_the_condition_becomes_true)
{
	check_blocking_watch(_metadata, self->fd, 2);
}

TEST_F(watch, blocking_read_returns_the_value_once_the_condition_holds)
{
	check_blocking_watch(_metadata, self->fd, 3);
}

TEST_F(watch, filtered_wake_reaches_watches_too)
{
	struct poller p = { .kind = 0 };
	uint64_t value = 0;
	uint32_t id = 0;

	ASSERT_EQ(0, wv_create(self->fd, 0, &id));
	p.fd = wv_watch(self->fd, id, WAITVAR_OP_EQ, 1, 0);
	ASSERT_LE(0, p.fd);
	ASSERT_EQ(0, pthread_create(&p.thread, NULL, poller_main, &p));
	ASSERT_TRUE(poller_sleeps(&p));
	ASSERT_EQ(0, wv_add(self->fd, id, 1, 0, &value));
	/* No task waits in WAIT: none counted, but the watch is told. */
	EXPECT_EQ(0, wv_wake_nr_flags(self->fd, id, 0, WAITVAR_WAKE_FILTER));
	ASSERT_EQ(0, pthread_join(p.thread, NULL));
	EXPECT_EQ(0, p.ret);
	close(p.fd);
}

TEST_F(watch, destroy_reports_hangup_and_read_returns_eidrm)
{
	struct poller p = { .kind = 3 };
	uint64_t got = 0;
	uint32_t id = 0;
	int w;

	ASSERT_EQ(0, wv_create(self->fd, 0, &id));
	w = wv_watch(self->fd, id, WAITVAR_OP_EQ, 1, 0);
	ASSERT_LE(0, w);
	p.fd = w;
	ASSERT_EQ(0, pthread_create(&p.thread, NULL, poller_main, &p));
	ASSERT_TRUE(poller_sleeps(&p));
	ASSERT_EQ(0, wv_id_cmd(self->fd, WAITVAR_IOC_DESTROY, id));
	ASSERT_EQ(0, pthread_join(p.thread, NULL));
	EXPECT_EQ(-EIDRM, p.ret);
	EXPECT_EQ(POLLERR | POLLHUP, poll_now(w));
	EXPECT_EQ(-1, read(w, &got, sizeof(got)));
	EXPECT_EQ(EIDRM, errno);
	close(w);
}

TEST_F(watch, watch_outlives_its_device_file_and_sees_the_variables_die)
{
	uint32_t id = 0;
	int dev, w;

	dev = open("/dev/waitvar", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, dev);
	ASSERT_EQ(0, wv_create(dev, 0, &id));
	w = wv_watch(dev, id, WAITVAR_OP_EQ, 1, 0);
	ASSERT_LE(0, w);
	close(dev);
	EXPECT_EQ(POLLERR | POLLHUP, poll_now(w));
	close(w);
}

TEST_F(watch, closing_the_watch_removes_its_waiter)
{
	struct waitvar_stats st;
	uint32_t id = 0;
	int w[3], i;

	ASSERT_EQ(0, wv_create(self->fd, 0, &id));
	for (i = 0; i < 3; i++) {
		w[i] = wv_watch(self->fd, id, WAITVAR_OP_NE, 0, 0);
		ASSERT_LE(0, w[i]);
	}
	ASSERT_EQ(0, wv_stats(self->fd, id, &st));
	EXPECT_EQ(3U, st.waiters);
	for (i = 0; i < 3; i++)
		close(w[i]);
	ASSERT_EQ(0, wv_stats(self->fd, id, &st));
	EXPECT_EQ(0U, st.waiters);
	/* A wake with no watch left walks nothing that was freed. */
	ASSERT_EQ(0, wv_set(self->fd, id, 1));
}

TEST_F(watch, watch_bad_input_returns_the_documented_errno)
{
	uint32_t id = 0;

	ASSERT_EQ(0, wv_create(self->fd, 0, &id));
	EXPECT_EQ(-EINVAL, wv_watch(self->fd, id, WAITVAR_OP_EQ, 0, 1));
	EXPECT_EQ(-EINVAL, wv_watch(self->fd, id, WAITVAR_OP_COUNT, 0, 0));
	EXPECT_EQ(-ENOENT, wv_watch(self->fd, id + 100, WAITVAR_OP_EQ, 0, 0));
}

static void check_locked_var_wait(struct __test_metadata *_metadata, int fd, uint32_t lock)
{
	struct waiter w = { .fd = fd, .op = WAITVAR_OP_EQ, .operand = 2,
			    .timeout_ns = NO_TIMEOUT };
	uint64_t value = 0;

	ASSERT_EQ(0, wv_create_flags(fd, 0, lock, &w.id));
	/* No exclusive or io waits on a lock-protected variable. */
	EXPECT_EQ(-EINVAL, wv_wait_full(fd, w.id, WAITVAR_OP_EQ, 0, NO_TIMEOUT,
					WAITVAR_WAIT_EXCLUSIVE, 0, NULL));
	EXPECT_EQ(-EINVAL, wv_wait_full(fd, w.id, WAITVAR_OP_EQ, 0, 1000, 0,
					WAITVAR_MODE_IO, NULL));
	EXPECT_EQ(-ETIMEDOUT, wv_wait_full(fd, w.id, WAITVAR_OP_EQ, 1, 20 * NSEC_PER_MSEC, 0,
					   WAITVAR_MODE_UNINTERRUPTIBLE, NULL));
	EXPECT_EQ(-ETIMEDOUT, wv_wait_full(fd, w.id, WAITVAR_OP_EQ, 1, 20 * NSEC_PER_MSEC, 0,
					   WAITVAR_MODE_KILLABLE, NULL));
	ASSERT_EQ(0, waiter_start(&w));
	ASSERT_TRUE(waiter_sleeps(&w));
	ASSERT_EQ(0, wv_add(fd, w.id, 1, WAITVAR_ADD_WAKE, &value));
	ASSERT_EQ(0, wv_cmpxchg(fd, w.id, 1, 2, &value));
	ASSERT_EQ(0, pthread_join(w.thread, NULL));
	EXPECT_EQ(0, w.ret);
	EXPECT_EQ(2U, w.seen);
}

TEST_F(watch, spinlock_variable_waits_and_wakes_under_its_lock)
{
	check_locked_var_wait(_metadata, self->fd, WAITVAR_CREATE_SPINLOCK);
}

TEST_F(watch, mutex_variable_waits_and_wakes_under_its_lock)
{
	check_locked_var_wait(_metadata, self->fd, WAITVAR_CREATE_MUTEX);
}

#define HAMMER_THREADS 8
#define HAMMER_ROUNDS 2000

struct hammer {
	int fd;
	uint32_t id;
	pthread_t thread;
	int errors;
};

/* Increments by ADD and by a CMPXCHG loop, and waits for its own updates. */
static void *hammer_main(void *data)
{
	struct hammer *h = data;
	uint64_t value = 0, prev = 0;
	int i;

	for (i = 0; i < HAMMER_ROUNDS; i++) {
		if (i % 2) {
			if (wv_add(h->fd, h->id, 1, WAITVAR_ADD_WAKE, &value))
				h->errors++;
		} else {
			if (wv_get(h->fd, h->id, &value))
				h->errors++;
			do {
				if (wv_cmpxchg(h->fd, h->id, value, value + 1, &prev))
					h->errors++;
			} while (prev != value && (value = prev, true));
			value++;
		}
		/* The value only grows: what this thread stored already holds. */
		if (wv_wait(h->fd, h->id, WAITVAR_OP_GE, value, 0, NULL))
			h->errors++;
	}
	return NULL;
}

static void check_hammer(struct __test_metadata *_metadata, int fd, uint32_t lock)
{
	struct waiter w = { .fd = fd, .op = WAITVAR_OP_EQ,
			    .operand = HAMMER_THREADS * HAMMER_ROUNDS,
			    .timeout_ns = 120000 * NSEC_PER_MSEC };
	struct hammer h[HAMMER_THREADS];
	struct waitvar_stats st;
	uint64_t value = 0;
	int i;

	ASSERT_EQ(0, wv_create_flags(fd, 0, lock, &w.id));
	ASSERT_EQ(0, waiter_start(&w));
	ASSERT_TRUE(waiter_sleeps(&w));
	for (i = 0; i < HAMMER_THREADS; i++) {
		h[i] = (struct hammer){ .fd = fd, .id = w.id };
		ASSERT_EQ(0, pthread_create(&h[i].thread, NULL, hammer_main, &h[i]));
	}
	for (i = 0; i < HAMMER_THREADS; i++) {
		ASSERT_EQ(0, pthread_join(h[i].thread, NULL));
		EXPECT_EQ(0, h[i].errors) TH_LOG("thread %d", i);
	}
	ASSERT_EQ(0, pthread_join(w.thread, NULL));
	EXPECT_EQ(0, w.ret);
	EXPECT_EQ((uint64_t)HAMMER_THREADS * HAMMER_ROUNDS, w.seen);
	ASSERT_EQ(0, wv_get(fd, w.id, &value));
	EXPECT_EQ((uint64_t)HAMMER_THREADS * HAMMER_ROUNDS, value);
	ASSERT_EQ(0, wv_stats(fd, w.id, &st));
	EXPECT_EQ(0U, st.waiters);
	EXPECT_EQ((uint64_t)HAMMER_THREADS * HAMMER_ROUNDS + 1, st.waits);
}

TEST_F(watch, spinlock_variable_hammered_by_8_threads_stays_exact)
{
	check_hammer(_metadata, self->fd, WAITVAR_CREATE_SPINLOCK);
}

TEST_F(watch, mutex_variable_hammered_by_8_threads_stays_exact)
{
	check_hammer(_metadata, self->fd, WAITVAR_CREATE_MUTEX);
}

/* Reads a whole file into @buf; returns its length or -1. */
static ssize_t read_file(const char *path, char *buf, size_t size)
{
	ssize_t n, len = 0;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -1;
	while ((n = read(fd, buf + len, size - 1 - len)) > 0)
		len += n;
	close(fd);
	buf[len] = '\0';
	return n < 0 ? -1 : len;
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

TEST_F(watch, debugfs_lists_each_open_file_and_a_summary)
{
	struct waiter w = { .fd = self->fd, .op = WAITVAR_OP_EQ, .operand = 1,
			    .timeout_ns = NO_TIMEOUT };
	char buf[8192], line[128], path[300];
	struct waitvar_stats st;
	struct stat sb;

	ASSERT_EQ(0, access("/sys/kernel/debug/waitvar/summary", R_OK))
		TH_LOG("debugfs not mounted, or no waitvar directory");
	ASSERT_EQ(0, wv_create_flags(self->fd, 424242, WAITVAR_CREATE_MUTEX, &w.id));
	ASSERT_EQ(0, waiter_start(&w));
	ASSERT_TRUE(waiter_sleeps(&w));
	ASSERT_EQ(0, wv_stats(self->fd, w.id, &st));
	/* id value lock waiters bucket waits ... read while the wait is in flight */
	snprintf(line, sizeof(line), "\n%u 424242 mutex 1 %u 1 0 0 0 0 0\n", w.id, st.bucket);
	ASSERT_TRUE(find_debugfs_line(buf, sizeof(buf), line, path, sizeof(path)))
		TH_LOG("no debugfs file shows '%s'", line + 1);
	ASSERT_LT(0, read_file("/sys/kernel/debug/waitvar/summary", buf, sizeof(buf)));
	EXPECT_TRUE(strstr(buf, "files ") != NULL);
	EXPECT_TRUE(strstr(buf, "waiters ") != NULL);
	ASSERT_EQ(0, stat(path, &sb));
	EXPECT_EQ(0444U, sb.st_mode & 07777U);
	ASSERT_EQ(0, wv_set(self->fd, w.id, 1));
	ASSERT_EQ(0, pthread_join(w.thread, NULL));
	snprintf(line, sizeof(line), "\n%u 1 mutex 0 %u 1 1 1 0 0 0\n", w.id, st.bucket);
	ASSERT_LT(0, read_file(path, buf, sizeof(buf)));
	EXPECT_TRUE(strstr(buf, line) != NULL) TH_LOG("%s", buf);
}

TEST_F(watch, debugfs_file_goes_with_its_open_file)
{
	char buf[8192], line[64], path[300];
	uint32_t id = 0;
	int dev;

	dev = open("/dev/waitvar", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, dev);
	ASSERT_EQ(0, wv_create(dev, 777777, &id));
	snprintf(line, sizeof(line), "\n%u 777777 none ", id);
	ASSERT_TRUE(find_debugfs_line(buf, sizeof(buf), line, path, sizeof(path)));
	close(dev);
	EXPECT_EQ(-1, access(path, F_OK));
}

TEST_HARNESS_MAIN
