// SPDX-License-Identifier: GPL-2.0
/*
 * WATCH descriptors: readable while the condition holds, woken through
 * poll, select, epoll and a blocking read, by every command that wakes the
 * variable, hangup when the variable dies, no entry on the kernel's shared
 * wait table, and their bad input.
 */
#include <poll.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/select.h>

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

/*
 * A raw WATCH with the @flags waitvar_watch() leaves 0, for the errno
 * checks; returns the new descriptor or -errno.
 */
static int watch_raw(int fd, uint32_t id, uint32_t op, uint64_t operand, uint32_t flags)
{
	struct waitvar_watch arg = { .id = id, .op = op, .operand = operand, .flags = flags };

	if (ioctl(fd, WAITVAR_IOC_WATCH, &arg))
		return -errno;
	return arg.fd;
}

/* What poll() reports of @fd now, asked for every event it has. */
static short poll_now(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN | POLLRDNORM | POLLRDBAND | POLLPRI |
						POLLOUT | POLLWRNORM | POLLWRBAND };

	return poll(&p, 1, 0) == 1 ? p.revents : 0;
}

TEST_F(watch, watch_fd_is_readable_only_while_the_condition_holds)
{
	uint64_t got = 0;
	uint32_t id = 0;
	int w, flags;

	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &id));
	w = waitvar_watch(self->fd, id, WAITVAR_OP_EQ, 5);
	ASSERT_LE(0, w);
	EXPECT_TRUE(fcntl(w, F_GETFD) & FD_CLOEXEC);
	EXPECT_EQ(0, poll_now(w));
	flags = fcntl(w, F_GETFL);
	ASSERT_EQ(0, fcntl(w, F_SETFL, flags | O_NONBLOCK));
	EXPECT_EQ(-1, read(w, &got, sizeof(got)));
	EXPECT_EQ(EAGAIN, errno);

	ASSERT_EQ(0, waitvar_set(self->fd, id, 5));
	EXPECT_EQ(POLLIN | POLLRDNORM, poll_now(w));
	EXPECT_EQ((ssize_t)sizeof(got), read(w, &got, sizeof(got)));
	EXPECT_EQ(5U, got);
	/* Too small a buffer for the value. */
	EXPECT_EQ(-1, read(w, &got, 4));
	EXPECT_EQ(EINVAL, errno);

	ASSERT_EQ(0, waitvar_set(self->fd, id, 6));
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
	long sleeps;

	ASSERT_EQ(0, waitvar_create(fd, 0, 0, &id));
	p.fd = waitvar_watch(fd, id, WAITVAR_OP_GE, 10);
	ASSERT_LE(0, p.fd);
	if (kind == 2) {
		p.epfd = epoll_create1(EPOLL_CLOEXEC);
		ASSERT_LE(0, p.epfd);
		ASSERT_EQ(0, epoll_ctl(p.epfd, EPOLL_CTL_ADD, p.fd, &ev));
	}
	ASSERT_EQ(0, pthread_create(&p.thread, NULL, poller_main, &p));
	ASSERT_TRUE(poller_sleeps(&p));
	sleeps = task_asleep_count(getpid(), atomic_load(&p.tid), 'S');
	ASSERT_LE(0, sleeps);
	/* Short of the condition: nothing to report, and the poller not woken. */
	ASSERT_EQ(0, waitvar_add(fd, id, 9, WAITVAR_ADD_WAKE, &value));
	EXPECT_EQ(0, poll_now(p.fd));
	EXPECT_TRUE(thread_not_woken(&p.tid, &p.done, sleeps));
	ASSERT_EQ(0, waitvar_add(fd, id, 3, WAITVAR_ADD_WAKE, &value));
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

	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &id));
	p.fd = waitvar_watch(self->fd, id, WAITVAR_OP_EQ, 1);
	ASSERT_LE(0, p.fd);
	ASSERT_EQ(0, pthread_create(&p.thread, NULL, poller_main, &p));
	ASSERT_TRUE(poller_sleeps(&p));
	ASSERT_EQ(0, waitvar_add(self->fd, id, 1, 0, &value));
	/* No task waits in WAIT: none counted, but the watch is told. */
	EXPECT_EQ(0, waitvar_wake_nr(self->fd, id, 0, WAITVAR_WAKE_FILTER));
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

	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &id));
	w = waitvar_watch(self->fd, id, WAITVAR_OP_EQ, 1);
	ASSERT_LE(0, w);
	p.fd = w;
	ASSERT_EQ(0, pthread_create(&p.thread, NULL, poller_main, &p));
	ASSERT_TRUE(poller_sleeps(&p));
	ASSERT_EQ(0, waitvar_destroy(self->fd, id));
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
	ASSERT_EQ(0, waitvar_create(dev, 0, 0, &id));
	w = waitvar_watch(dev, id, WAITVAR_OP_EQ, 1);
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

	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &id));
	for (i = 0; i < 3; i++) {
		w[i] = waitvar_watch(self->fd, id, WAITVAR_OP_NE, 0);
		ASSERT_LE(0, w[i]);
	}
	ASSERT_EQ(0, waitvar_stats(self->fd, id, &st));
	EXPECT_EQ(3U, st.waiters);
	for (i = 0; i < 3; i++)
		close(w[i]);
	ASSERT_EQ(0, waitvar_stats(self->fd, id, &st));
	EXPECT_EQ(0U, st.waiters);
	/* A wake with no watch left walks nothing that was freed. */
	ASSERT_EQ(0, waitvar_set(self->fd, id, 1));
}

TEST_F(watch, watch_bad_input_returns_the_documented_errno)
{
	uint32_t id = 0;

	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &id));
	EXPECT_EQ(-EINVAL, watch_raw(self->fd, id, WAITVAR_OP_EQ, 0, 1));
	EXPECT_EQ(-EINVAL, waitvar_watch(self->fd, id, WAITVAR_OP_COUNT, 0));
	/* An id that is gone: the kernel gave it, then took it back. */
	ASSERT_EQ(0, waitvar_destroy(self->fd, id));
	EXPECT_EQ(-ENOENT, waitvar_watch(self->fd, id, WAITVAR_OP_EQ, 0));
}

TEST_F(watch, watch_at_the_descriptor_limit_returns_emfile_and_makes_nothing)
{
	struct rlimit old, lim;
	struct waitvar_stats st;
	struct summary before, after;
	uint32_t id = 0;
	int next, w;

	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &id));
	ASSERT_TRUE(read_summary(&before));
	/* The lowest free descriptor becomes the limit: none is left. */
	next = dup(self->fd);
	ASSERT_LE(0, next);
	close(next);
	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &old));
	lim = (struct rlimit){ .rlim_cur = next, .rlim_max = old.rlim_max };
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &lim));
	w = waitvar_watch(self->fd, id, WAITVAR_OP_EQ, 0);
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &old));
	EXPECT_EQ(-EMFILE, w);
	if (w >= 0)
		close(w);
	/* No waiter stayed on the variable, none on the device. */
	ASSERT_EQ(0, waitvar_stats(self->fd, id, &st));
	EXPECT_EQ(0U, st.waiters);
	ASSERT_TRUE(read_summary(&after));
	EXPECT_EQ(before.waiters, after.waiters);
	w = waitvar_watch(self->fd, id, WAITVAR_OP_EQ, 0);
	ASSERT_LE(0, w);
	ASSERT_EQ(0, waitvar_stats(self->fd, id, &st));
	EXPECT_EQ(1U, st.waiters);
	close(w);
}

/*
 * A blocking read() of a WATCH descriptor ends with EINTR on a handled
 * signal, and goes on after one installed with SA_RESTART.
 */
static void check_read_and_signal(struct __test_metadata *_metadata, int fd, bool restart)
{
	struct poller p = { .kind = 3 };
	uint64_t value = 0;
	uint32_t id = 0;
	long sleeps;

	ASSERT_EQ(0, handle_sigusr1(restart ? SA_RESTART : 0));
	ASSERT_EQ(0, waitvar_create(fd, 0, 0, &id));
	p.fd = waitvar_watch(fd, id, WAITVAR_OP_EQ, 7);
	ASSERT_LE(0, p.fd);
	ASSERT_EQ(0, pthread_create(&p.thread, NULL, poller_main, &p));
	ASSERT_TRUE(poller_sleeps(&p));
	sleeps = task_asleep_count(getpid(), atomic_load(&p.tid), 'S');
	ASSERT_LE(0, sleeps);
	ASSERT_EQ(0, pthread_kill(p.thread, SIGUSR1));
	if (restart) {
		/* Restarted, the read sleeps once more, then SET ends it. */
		long long deadline = now_ns() + 10000 * NSEC_PER_MSEC;

		while (!atomic_load(&p.done) && now_ns() < deadline &&
		       !(thread_sleeps_count(atomic_load(&p.tid)) > sleeps &&
			 task_state(getpid(), atomic_load(&p.tid)) == 'S'))
			usleep(1000);
		EXPECT_EQ(0, atomic_load(&p.done)) TH_LOG("read returned %d", p.ret);
		ASSERT_EQ(0, waitvar_add(fd, id, 7, WAITVAR_ADD_WAKE, &value));
	}
	ASSERT_EQ(0, pthread_join(p.thread, NULL));
	if (restart) {
		EXPECT_EQ(0, p.ret);
		EXPECT_EQ(7U, p.value);
	} else {
		EXPECT_EQ(-EINTR, p.ret);
	}
	close(p.fd);
}

TEST_F(watch, blocking_read_ends_with_eintr_on_a_signal)
{
	check_read_and_signal(_metadata, self->fd, false);
}

TEST_F(watch, blocking_read_restarts_after_an_sa_restart_handler)
{
	check_read_and_signal(_metadata, self->fd, true);
}

/* How many epoll events @ep has for its one descriptor, without waiting. */
static int events_now(int ep)
{
	struct epoll_event ev;

	return epoll_wait(ep, &ev, 1, 0);
}

/*
 * Every command that wakes the variable tells its watches, and none that
 * does not: an edge-triggered epoll on a watch whose condition always
 * holds gets one event per wake (SET, ADD with WAKE, DEC_AND_WAKE to 0, a
 * CMPXCHG that succeeds, WAKE, WAKE_NR by count and filtered) and none
 * for ADD without WAKE, a CMPXCHG that fails, GET.
 */
TEST_F(watch, every_wake_of_the_variable_and_nothing_else_reaches_a_watch)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET };
	uint64_t value = 0;
	uint32_t id = 0;
	int wfd, ep;

	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &id));
	wfd = waitvar_watch(self->fd, id, WAITVAR_OP_GE, 0);
	ASSERT_LE(0, wfd);
	ep = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, ep);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, wfd, &ev));
	/* Adding it reports the level once; from here on, only edges. */
	EXPECT_EQ(1, events_now(ep));
	EXPECT_EQ(0, events_now(ep));

	ASSERT_EQ(0, waitvar_set(self->fd, id, 2));
	EXPECT_EQ(1, events_now(ep)) TH_LOG("SET");
	ASSERT_EQ(0, waitvar_add(self->fd, id, 1, 0, &value));
	EXPECT_EQ(0, events_now(ep)) TH_LOG("ADD without WAKE");
	ASSERT_EQ(0, waitvar_add(self->fd, id, -2, WAITVAR_ADD_WAKE, &value));
	EXPECT_EQ(1, events_now(ep)) TH_LOG("ADD with WAKE");
	ASSERT_EQ(0, waitvar_dec_and_wake(self->fd, id, &value));
	EXPECT_EQ(0U, value);
	EXPECT_EQ(1, events_now(ep)) TH_LOG("DEC_AND_WAKE to 0");
	ASSERT_EQ(0, waitvar_cmpxchg(self->fd, id, 5, 6, &value));
	EXPECT_EQ(0, events_now(ep)) TH_LOG("a CMPXCHG that failed");
	ASSERT_EQ(0, waitvar_cmpxchg(self->fd, id, 0, 6, &value));
	EXPECT_EQ(1, events_now(ep)) TH_LOG("a CMPXCHG that succeeded");
	ASSERT_EQ(0, waitvar_get(self->fd, id, &value));
	EXPECT_EQ(0, events_now(ep)) TH_LOG("GET");
	ASSERT_EQ(0, waitvar_wake(self->fd, id));
	EXPECT_EQ(1, events_now(ep)) TH_LOG("WAKE");
	EXPECT_EQ(0, waitvar_wake_nr(self->fd, id, 1, 0));
	EXPECT_EQ(1, events_now(ep)) TH_LOG("WAKE_NR of 1");
	EXPECT_EQ(0, waitvar_wake_nr(self->fd, id, 0, 0));
	EXPECT_EQ(1, events_now(ep)) TH_LOG("WAKE_NR of all");
	EXPECT_EQ(0, waitvar_wake_nr(self->fd, id, 0, WAITVAR_WAKE_FILTER));
	EXPECT_EQ(1, events_now(ep)) TH_LOG("filtered WAKE_NR");
	close(ep);
	close(wfd);
}

#define TABLE_FILE	"/sys/kernel/debug/sched/bit_wait_table"
#define MANY_WATCHES	64

/* The entries of queue @bucket of the shared wait table, or -1. */
static long bucket_entries(uint32_t bucket)
{
	char line[128];
	unsigned int b;
	long entries, found = -1;
	FILE *f = fopen(TABLE_FILE, "r");

	if (!f)
		return -1;
	while (found < 0 && fgets(line, sizeof(line), f))
		if (line[0] != '#' && sscanf(line, "%u %ld", &b, &entries) == 2 && b == bucket)
			found = entries;
	fclose(f);
	return found;
}

/*
 * A WATCH descriptor takes no entry on the kernel's shared hashed wait
 * queues, where every wake of every wait_on_bit() user hashing there
 * would walk it: 64 watches on a variable leave its queue's entries as
 * they were, and still see the variable change.
 */
TEST_F(watch, watches_take_no_entry_on_the_shared_wait_table)
{
	struct waitvar_stats st;
	long before, after;
	int w[MANY_WATCHES];
	uint32_t id = 0;

	if (access(TABLE_FILE, R_OK))
		SKIP(return, "no %s: this kernel has no CONFIG_SCHED_DEBUG", TABLE_FILE);
	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &id));
	ASSERT_EQ(0, waitvar_stats(self->fd, id, &st));
	ASSERT_NE(WAITVAR_BUCKET_HIDDEN, st.bucket) TH_LOG("needs CAP_SYSLOG to see the bucket");
	before = bucket_entries(st.bucket);
	ASSERT_LE(0, before);
	for (int i = 0; i < MANY_WATCHES; i++) {
		w[i] = waitvar_watch(self->fd, id, WAITVAR_OP_EQ, 1);
		ASSERT_LE(0, w[i]);
	}
	after = bucket_entries(st.bucket);
	/* The rest of the kernel may queue a waiter or two meanwhile. */
	EXPECT_GT(before + MANY_WATCHES / 2, after)
		TH_LOG("bucket %u: %ld entries before %d watches, %ld after", st.bucket, before,
		       MANY_WATCHES, after);
	ASSERT_EQ(0, waitvar_stats(self->fd, id, &st));
	EXPECT_EQ((uint32_t)MANY_WATCHES, st.waiters);
	ASSERT_EQ(0, waitvar_set(self->fd, id, 1));
	for (int i = 0; i < MANY_WATCHES; i++) {
		EXPECT_EQ(POLLIN | POLLRDNORM, poll_now(w[i]));
		close(w[i]);
	}
}

TEST_HARNESS_MAIN
