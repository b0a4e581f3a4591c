// SPDX-License-Identifier: GPL-2.0
/*
 * Lock-protected variables (WAITVAR_CREATE_SPINLOCK, _MUTEX): the waits
 * they refuse, waits and wakes under the lock, and 8 threads hammering one
 * with ADD and CMPXCHG, meeting in a sleeping WAIT each round, until it
 * counts exactly.
 */
#include "waitvar_test.h"

/* The kernel's harness is written for -Wall; it has unused parameters. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

FIXTURE(locked) {
	int fd;
};

FIXTURE_SETUP(locked)
{
	self->fd = open("/dev/waitvar", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open /dev/waitvar: %s", strerror(errno));
}

FIXTURE_TEARDOWN(locked)
{
	close(self->fd);
}

static void check_locked_var_wait(struct __test_metadata *_metadata, int fd, uint32_t lock)
{
	struct waiter w = { .fd = fd, .op = WAITVAR_OP_EQ, .operand = 2 };
	struct waitvar_waitv_entry e[2] = { { .op = WAITVAR_OP_EQ, .operand = 1 },
					    { .op = WAITVAR_OP_EQ, .operand = 1 } };
	uint64_t value = 0;

	ASSERT_EQ(0, waitvar_create(fd, 0, lock, &w.id));
	/* No exclusive or io waits on a lock-protected variable. */
	EXPECT_EQ(-EINVAL, waitvar_wait(fd, w.id, WAITVAR_OP_EQ, 0, 0,
					WAITVAR_WAIT_EXCLUSIVE, 0, NULL));
	EXPECT_EQ(-EINVAL, waitvar_wait(fd, w.id, WAITVAR_OP_EQ, 0,
					WAITVAR_MODE_IO, WAITVAR_WAIT_TIMEOUT, 1000, NULL));
	/* WAITV refuses io as WAIT does, for a locked variable among plain ones. */
	ASSERT_EQ(0, waitvar_create(fd, 0, 0, &e[0].id));
	e[1].id = w.id;
	EXPECT_EQ(-EINVAL, waitvar_waitv(fd, e, 2, WAITVAR_MODE_IO, WAITVAR_WAIT_TIMEOUT, 1000,
					 NULL));
	EXPECT_EQ(-ETIMEDOUT, waitvar_waitv(fd, e, 1, WAITVAR_MODE_IO, WAITVAR_WAIT_TIMEOUT, 1000,
					    NULL));
	EXPECT_EQ(-ETIMEDOUT, waitvar_wait(fd, w.id, WAITVAR_OP_EQ, 1, WAITVAR_MODE_UNINTERRUPTIBLE,
					   WAITVAR_WAIT_TIMEOUT, 20 * NSEC_PER_MSEC, NULL));
	EXPECT_EQ(-ETIMEDOUT, waitvar_wait(fd, w.id, WAITVAR_OP_EQ, 1, WAITVAR_MODE_KILLABLE,
					   WAITVAR_WAIT_TIMEOUT, 20 * NSEC_PER_MSEC, NULL));
	ASSERT_EQ(0, waiter_start(&w));
	ASSERT_TRUE(waiter_sleeps(&w));
	ASSERT_EQ(0, waitvar_add(fd, w.id, 1, WAITVAR_ADD_WAKE, &value));
	ASSERT_EQ(0, waitvar_cmpxchg(fd, w.id, 1, 2, &value));
	ASSERT_EQ(0, pthread_join(w.thread, NULL));
	EXPECT_EQ(0, w.ret);
	EXPECT_EQ(2U, w.seen);
}

TEST_F(locked, spinlock_variable_waits_and_wakes_under_its_lock)
{
	check_locked_var_wait(_metadata, self->fd, WAITVAR_CREATE_SPINLOCK);
}

TEST_F(locked, mutex_variable_waits_and_wakes_under_its_lock)
{
	check_locked_var_wait(_metadata, self->fd, WAITVAR_CREATE_MUTEX);
}

#define HAMMER_THREADS 8

#define HAMMER_ROUNDS 500

struct hammer {
	int fd;
	uint32_t id;
	pthread_t thread;
	int errors;
};

/*
 * Each round, one increment by ADD or by a CMPXCHG loop, racing the other
 * threads; then a wait, under the variable's lock, for every thread's
 * increment of the round: all but the last to arrive sleep in it.
 */
static void *hammer_main(void *data)
{
	struct hammer *h = data;
	uint64_t value = 0, prev = 0, target;
	int i;

	for (i = 0; i < HAMMER_ROUNDS; i++) {
		if (i % 2) {
			if (waitvar_add(h->fd, h->id, 1, WAITVAR_ADD_WAKE, &value))
				h->errors++;
		} else {
			if (waitvar_get(h->fd, h->id, &value))
				h->errors++;
			do {
				if (waitvar_cmpxchg(h->fd, h->id, value, value + 1, &prev))
					h->errors++;
			} while (prev != value && (value = prev, true));
		}
		target = (uint64_t)(i + 1) * HAMMER_THREADS;
		if (waitvar_wait(h->fd, h->id, WAITVAR_OP_GE, target, 0, WAITVAR_WAIT_TIMEOUT,
				 60000 * NSEC_PER_MSEC, NULL))
			h->errors++;
	}
	return NULL;
}

static void check_hammer(struct __test_metadata *_metadata, int fd, uint32_t lock)
{
	struct waiter w = { .fd = fd, .op = WAITVAR_OP_EQ,
			    .operand = HAMMER_THREADS * HAMMER_ROUNDS,
			    .flags = WAITVAR_WAIT_TIMEOUT, .timeout_ns = 120000 * NSEC_PER_MSEC };
	struct hammer h[HAMMER_THREADS];
	struct waitvar_stats st;
	uint64_t value = 0;
	int i;

	ASSERT_EQ(0, waitvar_create(fd, 0, lock, &w.id));
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
	ASSERT_EQ(0, waitvar_get(fd, w.id, &value));
	EXPECT_EQ((uint64_t)HAMMER_THREADS * HAMMER_ROUNDS, value);
	ASSERT_EQ(0, waitvar_stats(fd, w.id, &st));
	EXPECT_EQ(0U, st.waiters);
	EXPECT_EQ((uint64_t)HAMMER_THREADS * HAMMER_ROUNDS + 1, st.waits);
	/*
	 * A wait that slept ends with one wakeup that finds its condition
	 * true: the watcher's one, and one per round wait that slept.
	 */
	ASSERT_LE(st.spurious + 1, st.woken) TH_LOG("woken %llu, spurious %llu",
						   (unsigned long long)st.woken,
						   (unsigned long long)st.spurious);
	EXPECT_LE((uint64_t)HAMMER_ROUNDS, st.woken - st.spurious - 1)
		TH_LOG("%llu round waits slept in %d rounds",
		       (unsigned long long)(st.woken - st.spurious - 1), HAMMER_ROUNDS);
	EXPECT_EQ(0U, st.timeouts);
}

TEST_F(locked, spinlock_variable_hammered_by_8_threads_stays_exact)
{
	check_hammer(_metadata, self->fd, WAITVAR_CREATE_SPINLOCK);
}

TEST_F(locked, mutex_variable_hammered_by_8_threads_stays_exact)
{
	check_hammer(_metadata, self->fd, WAITVAR_CREATE_MUTEX);
}

TEST_HARNESS_MAIN
