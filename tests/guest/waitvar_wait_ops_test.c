// SPDX-License-Identifier: GPL-2.0
/*
 * WAIT's condition: every comparison op, a return at once when it already
 * holds, and a sleep that only a change making it hold ends.
 */
#include "waitvar_test.h"

/* The kernel's harness is written for -Wall; it has unused parameters. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

FIXTURE(wait_ops) {
	int fd;
};

FIXTURE_SETUP(wait_ops)
{
	self->fd = open("/dev/waitvar", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open /dev/waitvar: %s", strerror(errno));
}

FIXTURE_TEARDOWN(wait_ops)
{
	close(self->fd);
}

TEST_F(wait_ops, wait_returns_at_once_when_condition_holds)
{
	uint64_t seen = 0;
	uint32_t id = 0;

	ASSERT_EQ(0, waitvar_create(self->fd, 5, 0, &id));
	ASSERT_EQ(0, waitvar_wait(self->fd, id, WAITVAR_OP_EQ, 5, 0, 0, 0, &seen));
	ASSERT_EQ(5U, seen);
}

TEST_F(wait_ops, every_op_compares_as_documented)
{
	static const struct {
		uint32_t op;
		uint64_t value, operand;
		bool holds;
	} cases[] = {
		{ WAITVAR_OP_EQ, 7, 7, true },  { WAITVAR_OP_EQ, 7, 8, false },
		{ WAITVAR_OP_NE, 7, 8, true },  { WAITVAR_OP_NE, 7, 7, false },
		{ WAITVAR_OP_LT, 7, 8, true },  { WAITVAR_OP_LT, 8, 8, false },
		{ WAITVAR_OP_LE, 8, 8, true },  { WAITVAR_OP_LE, 9, 8, false },
		{ WAITVAR_OP_GT, 9, 8, true },  { WAITVAR_OP_GT, 8, 8, false },
		{ WAITVAR_OP_GE, 8, 8, true },  { WAITVAR_OP_GE, 7, 8, false },
		/* unsigned: all ones is the largest value */
		{ WAITVAR_OP_GT, UINT64_MAX, 1, true },
		{ WAITVAR_OP_LT, UINT64_MAX, 1, false },
		/* signed: all ones is -1 */
		{ WAITVAR_OP_LT_S, UINT64_MAX, 1, true },
		{ WAITVAR_OP_LT_S, 1, UINT64_MAX, false },
		{ WAITVAR_OP_LE_S, UINT64_MAX, UINT64_MAX, true },
		{ WAITVAR_OP_LE_S, 0, UINT64_MAX, false },
		{ WAITVAR_OP_GT_S, 0, UINT64_MAX, true },
		{ WAITVAR_OP_GT_S, UINT64_MAX, 0, false },
		{ WAITVAR_OP_GE_S, 5, 5, true },
		{ WAITVAR_OP_GE_S, UINT64_MAX, 0, false },
		/* bit masks */
		{ WAITVAR_OP_ANY, 0x5, 0x6, true },
		{ WAITVAR_OP_ANY, 0x5, 0xa, false },
		{ WAITVAR_OP_ALL, 0x7, 0x6, true },
		{ WAITVAR_OP_ALL, 0x5, 0x6, false },
		{ WAITVAR_OP_NONE, 0x5, 0xa, true },
		{ WAITVAR_OP_NONE, 0x5, 0x4, false },
	};
	uint32_t id = 0;
	size_t i;

	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &id));
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ASSERT_EQ(0, waitvar_set(self->fd, id, cases[i].value));
		/* timeout 0: a poll of the condition */
		EXPECT_EQ(cases[i].holds ? 0 : -ETIMEDOUT,
			  waitvar_wait(self->fd, id, cases[i].op, cases[i].operand, 0,
				       WAITVAR_WAIT_TIMEOUT, 0, NULL))
			TH_LOG("case %zu: op %u value %llu operand %llu", i, cases[i].op,
			       (unsigned long long)cases[i].value,
			       (unsigned long long)cases[i].operand);
	}
}

TEST_F(wait_ops, waiter_sleeps_until_set_makes_condition_true)
{
	struct waiter w = { .fd = self->fd, .op = WAITVAR_OP_EQ, .operand = 1 };

	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &w.id));
	ASSERT_EQ(0, waiter_start(&w));
	ASSERT_TRUE(waiter_sleeps(&w));

	/* A change that leaves the condition false must not end the wait. */
	ASSERT_EQ(0, waitvar_set(self->fd, w.id, 2));
	/* Woken, it found 2 and slept again. */
	ASSERT_EQ(1U, wait_stat(self->fd, w.id, spurious, 1));
	ASSERT_TRUE(waiter_sleeps(&w));
	ASSERT_EQ(0, atomic_load(&w.done));

	ASSERT_EQ(0, waitvar_set(self->fd, w.id, 1));
	ASSERT_EQ(0, pthread_join(w.thread, NULL));
	ASSERT_EQ(0, w.ret);
	ASSERT_EQ(1U, w.seen);
}

TEST_HARNESS_MAIN
