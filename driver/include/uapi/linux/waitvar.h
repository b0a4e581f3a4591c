/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * /dev/waitvar: kernel-side variables that userspace threads change and wait
 * on through the kernel's wait_var_event() / wake_up_var() API.
 *
 * Every argument is a fixed-size structure with the same layout for 32- and
 * 64-bit userspace.  Reserved fields and unknown flag bits must be zero, or
 * the command fails with EINVAL and changes nothing.  Variables belong to the
 * open file description: threads, dup(), fork() and fd passing share them.
 *
 * Errors common to every command:
 *   EFAULT  the argument pointer is not readable or writable
 *   EINVAL  a reserved field or an unknown flag bit is not zero
 *   ENOTTY  unknown command
 *   ENOENT  no variable with this id in this file (all but CREATE)
 */
#ifndef _UAPI_LINUX_WAITVAR_H
#define _UAPI_LINUX_WAITVAR_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define WAITVAR_IOC_MAGIC	0xB8

/**
 * struct waitvar_create - argument of WAITVAR_IOC_CREATE
 * @value: in: initial value
 * @id: out: id of the new variable, never 0
 * @flags: must be 0
 * @reserved: must be 0
 *
 * Creates a variable owned by the open file.
 * Errors: ENOSPC when the file already holds max_vars_per_file variables,
 * ENOMEM.
 */
struct waitvar_create {
	__u64 value;
	__u32 id;
	__u32 flags;
	__u64 reserved[2];
};

/**
 * struct waitvar_id - argument of WAITVAR_IOC_DESTROY and WAITVAR_IOC_WAKE
 * @id: the variable
 * @flags: must be 0
 *
 * DESTROY removes the variable; tasks waiting on it return EIDRM.
 * WAKE calls wake_up_var() on the variable without changing it; the woken
 * tasks recheck their conditions and sleep again if they still fail.
 */
struct waitvar_id {
	__u32 id;
	__u32 flags;
};

/**
 * struct waitvar_value - argument of WAITVAR_IOC_GET, _SET and _DEC_AND_WAKE
 * @id: the variable
 * @flags: must be 0
 * @value: GET: out: current value; SET: in: the new value;
 *	DEC_AND_WAKE: out: the value after the decrement
 *
 * DEC_AND_WAKE decrements atomically and wakes the waiters only when the
 * value reaches 0, as atomic_dec_and_wake_up() does.
 *
 * SET stores the value with a full barrier, then wakes the variable's
 * waiters with wake_up_var(): all non-exclusive ones and one exclusive.
 */
struct waitvar_value {
	__u32 id;
	__u32 flags;
	__u64 value;
};

/* Comparison of struct waitvar_wait: the wait ends when (value OP operand). */
enum waitvar_op {
	WAITVAR_OP_EQ = 0,	/* value == operand */
	WAITVAR_OP_NE = 1,	/* value != operand */
	WAITVAR_OP_LT = 2,	/* value <  operand, unsigned */
	WAITVAR_OP_LE = 3,	/* value <= operand, unsigned */
	WAITVAR_OP_GT = 4,	/* value >  operand, unsigned */
	WAITVAR_OP_GE = 5,	/* value >= operand, unsigned */
	WAITVAR_OP_LT_S = 6,	/* value <  operand, signed */
	WAITVAR_OP_LE_S = 7,	/* value <= operand, signed */
	WAITVAR_OP_GT_S = 8,	/* value >  operand, signed */
	WAITVAR_OP_GE_S = 9,	/* value >= operand, signed */
	WAITVAR_OP_ANY = 10,	/* (value & operand) != 0: any bit of the mask */
	WAITVAR_OP_ALL = 11,	/* (value & operand) == operand: every bit */
	WAITVAR_OP_NONE = 12,	/* (value & operand) == 0: no bit of the mask */
	WAITVAR_OP_COUNT
};

/* struct waitvar_wait.flags */
#define WAITVAR_WAIT_TIMEOUT	(1U << 0)	/* @timeout_ns is a relative timeout */
#define WAITVAR_WAIT_EXCLUSIVE	(1U << 1)	/* queue as an exclusive waiter */

/**
 * struct waitvar_wait - argument of WAITVAR_IOC_WAIT
 * @id: the variable
 * @op: one of enum waitvar_op
 * @operand: right-hand side of the comparison
 * @timeout_ns: relative timeout in ns, used when WAITVAR_WAIT_TIMEOUT is set
 * @flags: WAITVAR_WAIT_* bits
 * @reserved: must be 0
 * @value: out: the value for which the condition held
 *
 * Sleeps, interruptibly, until the condition holds; returns at once if it
 * already does.  The timeout is rounded up to the next jiffy.  An exclusive
 * waiter (WAITVAR_WAIT_EXCLUSIVE) is woken one at a time by SET and WAKE,
 * and as many at a time as WAKE_NR asks; DESTROY wakes every waiter.
 * Errors: EINVAL for an unknown @op, ETIMEDOUT when the timeout passes,
 * EINTR when a signal arrives (the wait is not restarted), EIDRM when the
 * variable is destroyed while waiting.
 */
struct waitvar_wait {
	__u32 id;
	__u32 op;
	__u64 operand;
	__u64 timeout_ns;
	__u32 flags;
	__u32 reserved;
	__u64 value;
};

/**
 * struct waitvar_wake_nr - argument of WAITVAR_IOC_WAKE_NR
 * @id: the variable
 * @flags: must be 0
 * @nr: in: how many exclusive waiters to wake at most; 0 wakes them all
 * @woken: out: how many exclusive waiters were woken
 *
 * Wakes every non-exclusive waiter of the variable and up to @nr of its
 * exclusive ones (wake_up_var_nr()), without changing it.
 */
struct waitvar_wake_nr {
	__u32 id;
	__u32 flags;
	__u32 nr;
	__u32 woken;
};

/* struct waitvar_add.flags */
#define WAITVAR_ADD_WAKE	(1U << 0)	/* wake the waiters after adding */

/**
 * struct waitvar_add - argument of WAITVAR_IOC_ADD
 * @id: the variable
 * @flags: WAITVAR_ADD_* bits
 * @delta: in: signed amount added, modulo 2^64
 * @value: out: the value after the addition
 *
 * Adds atomically (fully ordered) and, with WAITVAR_ADD_WAKE, wakes the
 * variable's waiters as SET does.
 */
struct waitvar_add {
	__u32 id;
	__u32 flags;
	__s64 delta;
	__u64 value;
};

/**
 * struct waitvar_cmpxchg - argument of WAITVAR_IOC_CMPXCHG
 * @id: the variable
 * @flags: must be 0
 * @expected: in: the value the variable must hold
 * @desired: in: the value stored if it held @expected
 * @prev: out: the value the variable held; the exchange happened iff
 *	@prev == @expected
 *
 * Compares and exchanges atomically; wakes the waiters only when the
 * value was exchanged.
 */
struct waitvar_cmpxchg {
	__u32 id;
	__u32 flags;
	__u64 expected;
	__u64 desired;
	__u64 prev;
};

#define WAITVAR_IOC_CREATE	_IOWR(WAITVAR_IOC_MAGIC, 0x00, struct waitvar_create)
#define WAITVAR_IOC_DESTROY	_IOW(WAITVAR_IOC_MAGIC, 0x01, struct waitvar_id)
#define WAITVAR_IOC_GET		_IOWR(WAITVAR_IOC_MAGIC, 0x02, struct waitvar_value)
#define WAITVAR_IOC_SET		_IOW(WAITVAR_IOC_MAGIC, 0x03, struct waitvar_value)
#define WAITVAR_IOC_WAIT	_IOWR(WAITVAR_IOC_MAGIC, 0x04, struct waitvar_wait)
#define WAITVAR_IOC_WAKE	_IOW(WAITVAR_IOC_MAGIC, 0x05, struct waitvar_id)
#define WAITVAR_IOC_WAKE_NR	_IOWR(WAITVAR_IOC_MAGIC, 0x06, struct waitvar_wake_nr)
#define WAITVAR_IOC_ADD		_IOWR(WAITVAR_IOC_MAGIC, 0x07, struct waitvar_add)
#define WAITVAR_IOC_DEC_AND_WAKE _IOWR(WAITVAR_IOC_MAGIC, 0x08, struct waitvar_value)
#define WAITVAR_IOC_CMPXCHG	_IOWR(WAITVAR_IOC_MAGIC, 0x09, struct waitvar_cmpxchg)

#endif /* _UAPI_LINUX_WAITVAR_H */
