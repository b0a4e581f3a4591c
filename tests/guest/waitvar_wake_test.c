// SPDX-License-Identifier: GPL-2.0
/*
 * What ends a wait and what does not: WAKE without a change, DESTROY,
 * exclusive waiters woken one by SET and n by WAKE_NR, filtered wakes, the
 * wake counters of STATS, 64 waiters at once, and a waiter in a forked child
 * whose parent closes one of two descriptors of the open file, or that
 * got its descriptor by SCM_RIGHTS.
 */
#include <sched.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "waitvar_test.h"

/* The kernel's harness is written for -Wall; it has unused parameters. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

FIXTURE(wake) {
	int fd;
	struct saved_params params;
};

FIXTURE_SETUP(wake)
{
	self->fd = open("/dev/waitvar", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open /dev/waitvar: %s", strerror(errno));
}

FIXTURE_TEARDOWN(wake)
{
	close(self->fd);
	params_restore(&self->params);
}

TEST_F(wake, wake_without_change_leaves_waiter_asleep)
{
	struct waiter w = { .fd = self->fd, .op = WAITVAR_OP_NE, .operand = 0 };

	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &w.id));
	ASSERT_EQ(0, waiter_start(&w));
	ASSERT_TRUE(waiter_sleeps(&w));
	ASSERT_EQ(0, waitvar_wake(self->fd, w.id));
	/* Woken, it found 0 and slept again: counted, not guessed from a sleep. */
	ASSERT_EQ(1U, wait_stat(self->fd, w.id, spurious, 1));
	ASSERT_TRUE(waiter_sleeps(&w));
	ASSERT_EQ(0, atomic_load(&w.done));

	ASSERT_EQ(0, waitvar_set(self->fd, w.id, 3));
	ASSERT_EQ(0, pthread_join(w.thread, NULL));
	ASSERT_EQ(0, w.ret);
	ASSERT_EQ(3U, w.seen);
}

TEST_F(wake, destroy_wakes_waiter_with_eidrm)
{
	struct waiter w = { .fd = self->fd, .op = WAITVAR_OP_EQ, .operand = 1 };
	uint64_t value = 0;

	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &w.id));
	ASSERT_EQ(0, waiter_start(&w));
	ASSERT_TRUE(waiter_sleeps(&w));
	ASSERT_EQ(0, waitvar_destroy(self->fd, w.id));
	ASSERT_EQ(0, pthread_join(w.thread, NULL));
	ASSERT_EQ(-EIDRM, w.ret);
	ASSERT_EQ(-ENOENT, waitvar_get(self->fd, w.id, &value));
}

#define NR_EXCLUSIVE 5

/* @flags: timeout bits added to WAITVAR_WAIT_EXCLUSIVE, for a 60 s timeout. */
static void start_exclusive_waiters(struct __test_metadata *_metadata, int fd,
				    struct waiter *w, int nr, uint32_t id, uint32_t flags)
{
	int i;

	for (i = 0; i < nr; i++) {
		w[i] = (struct waiter){ .fd = fd, .id = id, .op = WAITVAR_OP_EQ,
					.operand = 1, .flags = WAITVAR_WAIT_EXCLUSIVE | flags,
					.timeout_ns = flags ? 60000 * NSEC_PER_MSEC : 0 };
		ASSERT_EQ(0, waiter_start(&w[i]));
		ASSERT_TRUE(waiter_sleeps(&w[i]));
	}
}

/* SET and WAKE wake one exclusive waiter, WAKE_NR as many as it asks. */
static void exclusive_wakes(struct __test_metadata *_metadata, int fd, uint32_t flags)
{
	struct waiter w[NR_EXCLUSIVE];
	uint32_t id = 0;
	int i;

	ASSERT_EQ(0, waitvar_create(fd, 0, 0, &id));
	start_exclusive_waiters(_metadata, fd, w, NR_EXCLUSIVE, id, flags);

	/* SET calls wake_up_var(): one exclusive waiter. */
	ASSERT_EQ(0, waitvar_set(fd, id, 1));
	EXPECT_EQ(1, woken_exactly(w, NR_EXCLUSIVE, 1));
	/* So does WAKE, without a change. */
	ASSERT_EQ(0, waitvar_wake(fd, id));
	EXPECT_EQ(2, woken_exactly(w, NR_EXCLUSIVE, 2));
	EXPECT_EQ(2, waitvar_wake_nr(fd, id, 2, 0));
	EXPECT_EQ(4, woken_exactly(w, NR_EXCLUSIVE, 4));
	/* nr 0: all that are left. */
	EXPECT_EQ(1, waitvar_wake_nr(fd, id, 0, 0));
	EXPECT_EQ(NR_EXCLUSIVE, woken_exactly(w, NR_EXCLUSIVE, NR_EXCLUSIVE));
	EXPECT_EQ(0, waitvar_wake_nr(fd, id, 0, 0));
	for (i = 0; i < NR_EXCLUSIVE; i++) {
		ASSERT_EQ(0, pthread_join(w[i].thread, NULL));
		EXPECT_EQ(0, w[i].ret);
		EXPECT_EQ(1U, w[i].seen);
	}
}

TEST_F(wake, exclusive_waiters_are_woken_one_by_set_and_n_by_wake_nr)
{
	exclusive_wakes(_metadata, self->fd, 0);
}

TEST_F(wake, hrtimer_timed_exclusive_waiters_are_woken_one_by_set_and_n_by_wake_nr)
{
	exclusive_wakes(_metadata, self->fd, WAITVAR_WAIT_TIMEOUT);
}

TEST_F(wake, jiffies_timed_exclusive_waiters_are_woken_one_by_set_and_n_by_wake_nr)
{
	exclusive_wakes(_metadata, self->fd, WAITVAR_WAIT_TIMEOUT | WAITVAR_WAIT_JIFFIES);
}

TEST_F(wake, destroy_wakes_every_exclusive_waiter_with_eidrm)
{
	struct waiter w[NR_EXCLUSIVE];
	uint32_t id = 0;
	int i;

	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &id));
	start_exclusive_waiters(_metadata, self->fd, w, NR_EXCLUSIVE, id, 0);
	ASSERT_EQ(0, waitvar_destroy(self->fd, id));
	for (i = 0; i < NR_EXCLUSIVE; i++) {
		ASSERT_EQ(0, pthread_join(w[i].thread, NULL));
		EXPECT_EQ(-EIDRM, w[i].ret);
	}
}

TEST_F(wake, wake_nr_with_nonzero_flags_returns_einval)
{
	struct waitvar_wake_nr arg = { .flags = 1U << 31, .nr = 1 };

	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &arg.id));
	EXPECT_EQ(-1, ioctl(self->fd, WAITVAR_IOC_WAKE_NR, &arg));
	EXPECT_EQ(EINVAL, errno);
	arg.flags = 0;
	arg.nr = 0x80000000U;
	EXPECT_EQ(-1, ioctl(self->fd, WAITVAR_IOC_WAKE_NR, &arg));
	EXPECT_EQ(EINVAL, errno);
}

/* Two waiters on one variable for different values; returns the spurious count. */
static int spurious_after_wake(int fd, uint32_t wake_flags)
{
	struct waiter a = { .fd = fd, .op = WAITVAR_OP_EQ, .operand = 1 };
	struct waiter b = { .fd = fd, .op = WAITVAR_OP_EQ, .operand = 2 };
	struct waitvar_stats st;
	uint64_t value = 0;
	int woken;

	if (waitvar_create(fd, 0, 0, &a.id))
		return -1;
	b.id = a.id;
	if (waiter_start(&a) || waiter_start(&b) || !waiter_sleeps(&a) || !waiter_sleeps(&b))
		return -1;
	/* Make a's condition true without a wake, then wake as asked. */
	if (waitvar_add(fd, a.id, 1, 0, &value))
		return -1;
	woken = waitvar_wake_nr(fd, a.id, 0, wake_flags);
	pthread_join(a.thread, NULL);
	if (a.ret || a.seen != 1)
		return -1;
	if (wake_flags & WAITVAR_WAKE_FILTER) {
		/* Only a was woken, and the count says so; b was not. */
		if (woken != 1 || !waiter_not_woken(&b, 'S') || waitvar_stats(fd, a.id, &st) ||
		    st.spurious || st.woken != 1 || st.wakes != 1)
			return -1;
	} else {
		/* b was woken too: let it find its condition false and sleep again. */
		(void)wait_stat(fd, a.id, spurious, 1U);
		if (!waiter_sleeps(&b))
			return -1;
	}
	waitvar_set(fd, b.id, 2);
	pthread_join(b.thread, NULL);
	if (b.ret || waitvar_stats(fd, a.id, &st))
		return -1;
	return st.spurious;
}

TEST_F(wake, unfiltered_wake_makes_a_spurious_wakeup)
{
	EXPECT_EQ(1, spurious_after_wake(self->fd, 0));
}

TEST_F(wake, filtered_wake_wakes_only_waiters_whose_condition_holds)
{
	EXPECT_EQ(0, spurious_after_wake(self->fd, WAITVAR_WAKE_FILTER));
}

TEST_F(wake, stats_count_waits_wakes_timeouts_and_signals)
{
	struct waiter w = { .fd = self->fd, .op = WAITVAR_OP_EQ, .operand = 4 };
	struct waitvar_stats st = { .flags = 1 };
	uint64_t value = 0;
	uint32_t id = 0;

	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &w.id));
	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &id));
	st.id = w.id;
	EXPECT_EQ(-1, ioctl(self->fd, WAITVAR_IOC_STATS, &st));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, waitvar_stats(self->fd, w.id, &st));
	EXPECT_EQ(0U, st.waits + st.wakes + st.woken + st.spurious + st.timeouts + st.signals);
	EXPECT_LT(st.bucket, driver_features().wait_table_size);

	EXPECT_EQ(-ETIMEDOUT, waitvar_wait(self->fd, w.id, WAITVAR_OP_EQ, 4, 0,
					   WAITVAR_WAIT_TIMEOUT, 10 * NSEC_PER_MSEC, NULL));
	ASSERT_EQ(0, waiter_start(&w));
	ASSERT_TRUE(waiter_sleeps(&w));
	ASSERT_EQ(1U, wait_stat(self->fd, w.id, waiters, 1U));
	ASSERT_EQ(0, waitvar_set(self->fd, w.id, 3));		/* a wake, spurious */
	ASSERT_EQ(1U, wait_stat(self->fd, w.id, spurious, 1U));
	ASSERT_EQ(0, waitvar_add(self->fd, w.id, 1, 0, &value));	/* no wake */
	ASSERT_EQ(0, waitvar_wake(self->fd, w.id));
	ASSERT_EQ(0, pthread_join(w.thread, NULL));
	ASSERT_EQ(0, w.ret);
	ASSERT_EQ(0, waitvar_stats(self->fd, w.id, &st));
	EXPECT_EQ(2U, st.waits);
	EXPECT_EQ(2U, st.wakes);
	EXPECT_EQ(2U, st.woken);
	EXPECT_EQ(1U, st.spurious);
	EXPECT_EQ(1U, st.timeouts);
	EXPECT_EQ(0U, st.signals);
	EXPECT_EQ(0U, st.waiters);
	/* Another variable's counters are its own. */
	ASSERT_EQ(0, waitvar_stats(self->fd, id, &st));
	EXPECT_EQ(0U, st.waits + st.wakes + st.woken);
}

#define NR_MANY 64

TEST_F(wake, wake_one_n_all_of_64_exclusive_waiters_counts_exactly)
{
	static struct waiter w[NR_MANY];
	uint64_t value = 0;
	uint32_t id = 0;
	int i;

	ASSERT_EQ(0, waitvar_create(self->fd, 1, 0, &id));
	for (i = 0; i < NR_MANY; i++) {
		w[i] = (struct waiter){ .fd = self->fd, .id = id, .op = WAITVAR_OP_EQ,
					.operand = 0,
					.flags = WAITVAR_WAIT_EXCLUSIVE };
		ASSERT_EQ(0, waiter_start(&w[i]));
	}
	for (i = 0; i < NR_MANY; i++)
		ASSERT_TRUE(waiter_sleeps(&w[i]));
	ASSERT_EQ((uint32_t)NR_MANY, wait_stat(self->fd, id, waiters, (uint32_t)NR_MANY));
	/* The condition now holds, but only the wakes below end waits. */
	ASSERT_EQ(0, waitvar_add(self->fd, id, -1, 0, &value));
	EXPECT_EQ(1, waitvar_wake_nr(self->fd, id, 1, 0));
	EXPECT_EQ(1, woken_exactly(w, NR_MANY, 1));
	EXPECT_EQ(10, waitvar_wake_nr(self->fd, id, 10, 0));
	EXPECT_EQ(11, woken_exactly(w, NR_MANY, 11));
	EXPECT_EQ(NR_MANY - 11, waitvar_wake_nr(self->fd, id, 0, 0));
	EXPECT_EQ(NR_MANY, woken_exactly(w, NR_MANY, NR_MANY));
	EXPECT_EQ(0, waitvar_wake_nr(self->fd, id, 0, 0));
	for (i = 0; i < NR_MANY; i++) {
		ASSERT_EQ(0, pthread_join(w[i].thread, NULL));
		EXPECT_EQ(0, w[i].ret);
	}
}

TEST_F(wake, filtered_wake_of_64_waiters_counts_those_whose_condition_holds)
{
	static struct waiter w[NR_MANY];
	uint64_t value = 0;
	uint32_t id = 0;
	int i;

	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &id));
	for (i = 0; i < NR_MANY; i++) {
		/* Even waiters want bit 0, odd ones bit 1. */
		w[i] = (struct waiter){ .fd = self->fd, .id = id, .op = WAITVAR_OP_ANY,
					.operand = i % 2 ? 2 : 1,
					.flags = i % 4 < 2 ? 0 : WAITVAR_WAIT_EXCLUSIVE };
		ASSERT_EQ(0, waiter_start(&w[i]));
	}
	for (i = 0; i < NR_MANY; i++)
		ASSERT_TRUE(waiter_sleeps(&w[i]));
	ASSERT_EQ(0, waitvar_add(self->fd, id, 1, 0, &value));
	/* 32 hold: 16 plain, 16 exclusive of which nr = 4 may go. */
	EXPECT_EQ(20, waitvar_wake_nr(self->fd, id, 4, WAITVAR_WAKE_FILTER));
	EXPECT_EQ(20, woken_exactly(w, NR_MANY, 20));
	EXPECT_EQ(12, waitvar_wake_nr(self->fd, id, 0, WAITVAR_WAKE_FILTER));
	EXPECT_EQ(32, woken_exactly(w, NR_MANY, 32));
	ASSERT_EQ(0, waitvar_add(self->fd, id, 2, 0, &value));
	EXPECT_EQ(32, waitvar_wake_nr(self->fd, id, 0, WAITVAR_WAKE_FILTER));
	for (i = 0; i < NR_MANY; i++) {
		ASSERT_EQ(0, pthread_join(w[i].thread, NULL));
		EXPECT_EQ(0, w[i].ret);
	}
	EXPECT_EQ(0U, wait_stat(self->fd, id, spurious, 0U));
}

#define NR_LONG 130	/* two batches of 64 waiters and two more */

/*
 * A filtered wake walks one variable's waiters under its lock, and a user
 * may put thousands there: it lets go of the lock after every 64, and
 * finds its place again.  130 waiters whose condition does not hold (none
 * leaves the list meanwhile): two breaks, none woken; then 65 of them hold
 * and exactly those wake.
 */
TEST_F_TIMEOUT(wake, filtered_wake_walks_a_long_list_in_batches_of_64, 120)
{
	static struct waiter w[NR_LONG];
	long long before, after;
	uint64_t value = 0;
	uint32_t id = 0;
	int i, woken;

	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &id));
	for (i = 0; i < NR_LONG; i++) {
		/* Every other one wants bit 0, the others bit 1. */
		w[i] = (struct waiter){ .fd = self->fd, .id = id, .op = WAITVAR_OP_ANY,
					.operand = i % 2 ? 2 : 1 };
		ASSERT_EQ(0, waiter_start(&w[i]));
	}
	for (i = 0; i < NR_LONG; i++)
		ASSERT_TRUE(waiter_sleeps(&w[i]));
	before = summary_field("filtered_walk_breaks");
	ASSERT_LE(0, before) TH_LOG("no filtered_walk_breaks in %s", SUMMARY_PATH);
	EXPECT_EQ(0, waitvar_wake_nr(self->fd, id, 0, WAITVAR_WAKE_FILTER));
	after = summary_field("filtered_walk_breaks");
	EXPECT_EQ(2, after - before) TH_LOG("%d waiters walked with %lld breaks", NR_LONG,
					   after - before);
	/* Nobody missed or woken twice across the breaks. */
	ASSERT_EQ(0, waitvar_add(self->fd, id, 1, 0, &value));
	woken = waitvar_wake_nr(self->fd, id, 0, WAITVAR_WAKE_FILTER);
	EXPECT_EQ(NR_LONG / 2, woken);
	EXPECT_EQ(NR_LONG / 2, woken_exactly(w, NR_LONG, NR_LONG / 2));
	ASSERT_EQ(0, waitvar_add(self->fd, id, 2, 0, &value));
	EXPECT_EQ(NR_LONG / 2, waitvar_wake_nr(self->fd, id, 0, WAITVAR_WAKE_FILTER));
	/* One the batches skipped would sleep on: count them before joining. */
	ASSERT_EQ(NR_LONG, woken_exactly(w, NR_LONG, NR_LONG));
	for (i = 0; i < NR_LONG; i++) {
		ASSERT_EQ(0, pthread_join(w[i].thread, NULL));
		EXPECT_EQ(0, w[i].ret);
	}
}

/*
 * Two filtered WAKE_NRs of one, back to back, before the waiter the first
 * woke has run: the second must wake the other waiter, not count the first
 * again and leave the other asleep with its condition true.  The waiters
 * share the waker's one CPU and the waker is SCHED_FIFO, so no woken
 * waiter runs until the waker has made both calls.
 */
TEST_F(wake, back_to_back_filtered_wakes_of_one_wake_two_exclusive_waiters)
{
	struct sched_param fifo = { .sched_priority = 1 }, other = { .sched_priority = 0 };
	cpu_set_t one, saved;
	struct waiter w[2];
	uint64_t value = 0;
	uint32_t id = 0;
	int woken[2];

	ASSERT_EQ(0, sched_getaffinity(0, sizeof(saved), &saved));
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(one), &one));
	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &id));
	for (int i = 0; i < 2; i++) {
		/* Each inherits the one CPU. */
		w[i] = (struct waiter){ .fd = self->fd, .id = id, .op = WAITVAR_OP_EQ,
					.operand = 1, .flags = WAITVAR_WAIT_EXCLUSIVE };
		ASSERT_EQ(0, waiter_start(&w[i]));
		ASSERT_TRUE(waiter_sleeps(&w[i]));
	}
	/* The condition holds; no wake yet. */
	ASSERT_EQ(0, waitvar_add(self->fd, id, 1, 0, &value));
	ASSERT_EQ(0, pthread_setschedparam(pthread_self(), SCHED_FIFO, &fifo));
	woken[0] = waitvar_wake_nr(self->fd, id, 1, WAITVAR_WAKE_FILTER);
	woken[1] = waitvar_wake_nr(self->fd, id, 1, WAITVAR_WAKE_FILTER);
	ASSERT_EQ(0, pthread_setschedparam(pthread_self(), SCHED_OTHER, &other));
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(saved), &saved));
	EXPECT_EQ(1, woken[0]);
	EXPECT_EQ(1, woken[1]) TH_LOG("the second wake counted the waiter the first woke");
	if (woken[1] != 1)
		waitvar_wake_nr(self->fd, id, 0, 0);	/* frees the one left asleep */
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(0, pthread_join(w[i].thread, NULL));
		EXPECT_EQ(0, w[i].ret);
	}
}

TEST_F(wake, destroy_under_64_waiters_of_every_mode_returns_eidrm)
{
	static const uint32_t modes[] = { WAITVAR_MODE_INTERRUPTIBLE, WAITVAR_MODE_KILLABLE,
					  WAITVAR_MODE_IO, WAITVAR_MODE_UNINTERRUPTIBLE };
	static struct waiter w[NR_MANY];
	uint32_t id = 0;
	int i;

	/* 64 sleepers under emulation may take longer than the default cap. */
	ASSERT_EQ(0, param_override(&self->params, "max_uninterruptible_ms", 60000));
	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &id));
	for (i = 0; i < NR_MANY; i++) {
		w[i] = (struct waiter){ .fd = self->fd, .id = id, .op = WAITVAR_OP_EQ,
					.operand = 1, .mode = modes[i % 4],
					.flags = (i % 8 < 4 ? 0 : WAITVAR_WAIT_EXCLUSIVE) |
						 WAITVAR_WAIT_TIMEOUT,
					.timeout_ns = 60000 * NSEC_PER_MSEC };
		ASSERT_EQ(0, waiter_start(&w[i]));
	}
	ASSERT_EQ((uint32_t)NR_MANY, wait_stat(self->fd, id, waiters, (uint32_t)NR_MANY));
	for (i = 0; i < NR_MANY; i++)
		ASSERT_TRUE(waiter_sleeps_in(&w[i], w[i].mode ? 'D' : 'S'));
	ASSERT_EQ(0, waitvar_destroy(self->fd, id));
	for (i = 0; i < NR_MANY; i++) {
		ASSERT_EQ(0, pthread_join(w[i].thread, NULL));
		EXPECT_EQ(-EIDRM, w[i].ret) TH_LOG("waiter %d", i);
	}
}

TEST_F(wake, closing_one_fd_of_a_forked_pair_leaves_the_other_waiting)
{
	uint64_t value = 0;
	int status = 0, keep;
	uint32_t id = 0;
	long sleeps;
	pid_t child;

	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &id));
	keep = dup(self->fd);
	ASSERT_LE(0, keep);
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		close(keep);
		_exit(waitvar_wait(self->fd, id, WAITVAR_OP_EQ, 9, 0, WAITVAR_WAIT_TIMEOUT,
				   60000 * NSEC_PER_MSEC, &value) || value != 9 ? 3 : 0);
	}
	sleeps = task_asleep_count(child, child, 'S');
	ASSERT_LE(0, sleeps);
	/* The parent's first descriptor goes; the open file stays, unwoken. */
	ASSERT_EQ(0, close(self->fd));
	self->fd = keep;
	ASSERT_TRUE(task_not_woken(child, child, 'S', sleeps));
	ASSERT_EQ(1U, wait_stat(keep, id, waiters, 1U));
	ASSERT_EQ(0, waitvar_set(keep, id, 9));
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/* Sends @fd and @id over the unix socket @sock; 0 or -1. */
static int send_fd(int sock, int fd, uint32_t id)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {};
	struct iovec iov = { .iov_base = &id, .iov_len = sizeof(id) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == sizeof(id) ? 0 : -1;
}

/* The descriptor and id send_fd() sent; the descriptor or -1. */
static int recv_fd(int sock, uint32_t *id)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {};
	struct iovec iov = { .iov_base = id, .iov_len = sizeof(*id) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	int fd;

	if (recvmsg(sock, &msg, 0) != sizeof(*id))
		return -1;
	c = CMSG_FIRSTHDR(&msg);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/*
 * A device descriptor passed by SCM_RIGHTS to a process that did not
 * inherit it shares the open file, so its variables: the receiver reads
 * one, waits on it and is woken by the sender.
 */
TEST_F(wake, a_descriptor_passed_by_scm_rights_shares_the_variables)
{
	struct waitvar_stats st;
	int sv[2], status = 0, fd;
	uint32_t id = 0;
	pid_t child;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		uint64_t value = 0;
		uint32_t got = 0;
		int rfd;

		close(sv[0]);
		rfd = recv_fd(sv[1], &got);
		if (rfd < 0)
			_exit(2);
		if (waitvar_get(rfd, got, &value) || value != 5)
			_exit(3);
		_exit(waitvar_wait(rfd, got, WAITVAR_OP_EQ, 9, 0, WAITVAR_WAIT_TIMEOUT,
				   60000 * NSEC_PER_MSEC, &value) || value != 9 ? 4 : 0);
	}
	close(sv[1]);
	/* Opened after the fork: the child can only have it from the socket. */
	fd = waitvar_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, waitvar_create(fd, 5, 0, &id));
	ASSERT_EQ(0, send_fd(sv[0], fd, id));
	close(sv[0]);
	ASSERT_EQ(1U, wait_stat(fd, id, waiters, 1U));
	/* Listed is not yet asleep: a SET before the sleep is no wakeup. */
	ASSERT_TRUE(task_sleeps_in(child, child, 'S'));
	ASSERT_EQ(0, waitvar_set(fd, id, 9));
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ(0, waitvar_stats(fd, id, &st));
	EXPECT_EQ(1U, st.waits);
	EXPECT_EQ(1U, st.woken);
	close(fd);
}

TEST_HARNESS_MAIN
