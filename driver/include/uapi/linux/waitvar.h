/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * /dev/waitvar: kernel-side variables that userspace threads change and wait
 * on through the kernel's wait_var_event() / wake_up_var() API.
 *
 * Every argument is a fixed-size structure with the same layout for 32- and
 * 64-bit userspace.  Reserved fields, unknown flag bits, fields a command
 * only writes (marked "out") and fields its flags leave unused must be zero
 * on input, or the command fails with EINVAL and changes nothing.
 * Variables belong to the open file description: threads, dup(), fork() and
 * fd passing share them.  WAITVAR_IOC_FEATURES says which commands, flags,
 * limits and semantics the running driver has.
 *
 * Errors common to every command:
 *   EFAULT  the argument pointer is not readable or writable; a command
 *	     that made something (CREATE, NAMED_*, WATCH) and cannot write
 *	     its result back undoes exactly what it made; one that changes,
 *	     wakes or waits (ADD, DEC_AND_WAKE, CMPXCHG, WAKE_NR, WAIT,
 *	     WAITV) writes its argument back unchanged first and fails
 *	     before acting if it cannot, so an EFAULT from it means nothing
 *	     happened, unless the argument's page was made unwritable while
 *	     the command ran
 *   EINVAL  a reserved, unused or out field or an unknown flag bit is not 0
 *   ENOTTY  unknown command
 *   ENOENT  no variable with this id in this file (all but CREATE)
 *   EIDRM   the id is still attached to a removed named variable: every
 *	     command on an id but DESTROY (which detaches it) fails so and
 *	     changes nothing
 *
 * Per-user limits (module parameters, read by WAITVAR_IOC_FEATURES), in the
 * manner of epoll's max_user_watches: an open file is charged to the real
 * uid that opened it, and the counts cover all of that uid's files; a
 * command that would pass one fails with ENOSPC:
 *   max_user_vars     variables the user's files created and that still
 *		       exist, named ones included (a removed name's variable
 *		       counts until the last id and WATCH on it are gone)
 *   max_user_waiters  waiters the user's files hold: one per WAIT, one per
 *		       WAITV entry, one per WATCH descriptor until it is
 *		       released (on the kernel's shared hashed wait queues a
 *		       WAITV queues once per distinct variable, and a WATCH
 *		       descriptor not at all)
 *   max_user_names    named variables the user's files created
 * and, device-wide, max_vars_per_file per open file and max_named_vars
 * names per user namespace.
 *
 * Commands, by number:
 *   0x00 CREATE        0x01 DESTROY     0x02 GET        0x03 SET
 *   0x04 WAIT          0x05 WAKE        0x06 WAKE_NR    0x07 ADD
 *   0x08 DEC_AND_WAKE  0x09 CMPXCHG     0x0a WAITV      0x0b WATCH
 *   0x0c STATS         0x0d NAMED_CREATE 0x0e NAMED_OPEN 0x0f NAMED_REMOVE
 *   0x10 LIST          0x11 FEATURES
 *
 * Named variables ("/name") belong to no file: they live until removed and
 * any file may attach them under an id of its own, if the variable's owner,
 * group and mode allow.  Names are scoped by user namespace: a name made in
 * one is neither seen nor found from another.  Commands on such an id check
 * the caller's access each time: GET, WAIT, WAITV, WATCH and STATS need read
 * permission, the updates and wakes write permission (EACCES otherwise);
 * CAP_DAC_OVERRIDE in the caller's user namespace grants both, as it does
 * for a file, only if that namespace maps the name's owner and group.
 * DESTROY only detaches the id.
 */
#ifndef _UAPI_LINUX_WAITVAR_H
#define _UAPI_LINUX_WAITVAR_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* Registered in Documentation/userspace-api/ioctl/ioctl-number.rst. */
#define WAITVAR_IOC_MAGIC	0xBD

/* struct waitvar_create.flags: at most one of the two */
#define WAITVAR_CREATE_SPINLOCK	0x1U	/* updates and waits under a spinlock */
#define WAITVAR_CREATE_MUTEX	0x2U	/* updates and waits under a mutex */

/**
 * struct waitvar_create - argument of WAITVAR_IOC_CREATE
 * @value: in: initial value
 * @id: out: id of the new variable, from 1 to max_vars_per_file (as the
 *	parameter was then); in: must be 0
 * @flags: WAITVAR_CREATE_* bits
 * @reserved: must be 0
 *
 * Creates a variable owned by the open file; its memory is charged to the
 * caller's memory cgroup.  A lock-protected variable is changed under its
 * lock, woken with wake_up_var_locked(), and its waiters test their
 * condition under the lock (wait_var_event_any_lock() and its timed
 * form); WAIT on it takes no WAITVAR_WAIT_EXCLUSIVE, and neither WAIT nor
 * WAITV takes WAITVAR_MODE_IO.
 * The id becomes usable, and visible to the file's other threads, only
 * once it has been written back, as the call returns.  Ids (CREATE's and
 * NAMED_CREATE's and NAMED_OPEN's alike) are handed out cyclically, as
 * pids are: a freed id is handed out again only after every other id up
 * to max_vars_per_file has been.
 * Errors: EINVAL for both lock flags, ENOSPC when the file already holds
 * max_vars_per_file variables or the user max_user_vars, ENOMEM.
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
 * DESTROY removes the variable; tasks waiting on it return EIDRM, and its
 * WATCH descriptors report EPOLLERR | EPOLLHUP.
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
 *	DEC_AND_WAKE: out: the value after the decrement (GET and
 *	DEC_AND_WAKE: in: must be 0)
 *
 * DEC_AND_WAKE decrements atomically and wakes the waiters only when the
 * value reaches 0, as atomic_dec_and_wake_up() does.
 *
 * SET stores the value with a full barrier, then wakes the variable's
 * waiters with wake_up_var(): all non-exclusive ones and one exclusive.
 * On a lock-protected variable the store and the wake happen under its
 * lock, and the barrier still separates them: WAITV tests such a variable
 * without its lock.
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

/* struct waitvar_wait.flags; at most one of the three timeout kinds */
#define WAITVAR_WAIT_TIMEOUT	0x1U	/* @timeout_ns: relative, in ns */
#define WAITVAR_WAIT_EXCLUSIVE	0x2U	/* queue as an exclusive waiter */
#define WAITVAR_WAIT_ABS_MONOTONIC 0x4U	/* @timeout_ns: CLOCK_MONOTONIC deadline */
#define WAITVAR_WAIT_ABS_REALTIME 0x8U	/* @timeout_ns: CLOCK_REALTIME deadline */
#define WAITVAR_WAIT_JIFFIES	0x10U	/* time it in jiffies, not by an hrtimer */

/* How a wait sleeps: each mode is one wait_var_event() variant. */
enum waitvar_mode {
	WAITVAR_MODE_INTERRUPTIBLE = 0,	/* any signal ends the wait */
	WAITVAR_MODE_KILLABLE = 1,	/* only a fatal signal ends it */
	WAITVAR_MODE_IO = 2,		/* uninterruptible, counted as iowait */
	WAITVAR_MODE_UNINTERRUPTIBLE = 3, /* no signal ends it */
	WAITVAR_MODE_COUNT
};

/**
 * struct waitvar_wait - argument of WAITVAR_IOC_WAIT
 * @id: the variable
 * @op: one of enum waitvar_op
 * @operand: right-hand side of the comparison
 * @timeout_ns: with WAITVAR_WAIT_TIMEOUT a relative timeout; with
 *	WAITVAR_WAIT_ABS_MONOTONIC or _ABS_REALTIME a deadline in ns since
 *	that clock's epoch (CLOCK_MONOTONIC as the caller's time namespace
 *	shows it, as for clock_nanosleep(): WAITVAR_SEM_TIMENS); must be 0
 *	without a timeout flag
 * @flags: WAITVAR_WAIT_* bits
 * @mode: one of enum waitvar_mode
 * @value: out: the value for which the condition held; in: must be 0
 *
 * Sleeps in @mode until the condition holds; returns at once if it already
 * does, even past a deadline.  An hrtimer times the wait: it fires within
 * the caller's timer slack (PR_SET_TIMERSLACK) after the timeout, never
 * before, and the wait returns as soon as the task runs again.  A
 * CLOCK_REALTIME deadline follows the clock, as an absolute
 * clock_nanosleep() does: setting the clock forward past it ends the wait,
 * setting it back makes the wait longer (except in IO and UNINTERRUPTIBLE
 * modes, where it is fixed as a CLOCK_MONOTONIC deadline when the wait
 * starts, so that no clock change can stretch a sleep no signal ends).
 * With WAITVAR_WAIT_JIFFIES, the jiffies-based wait_var_event_*_timeout()
 * variants time it instead: the timeout is rounded down to whole jiffies
 * plus two (the partial one and the one the wait starts in), and a
 * deadline is turned into a timeout once, when the wait starts.  An
 * exclusive waiter (WAITVAR_WAIT_EXCLUSIVE) is woken one at a time by SET
 * and WAKE, and as many at a time as WAKE_NR asks; DESTROY wakes every
 * waiter.  WAITVAR_MODE_IO and WAITVAR_MODE_UNINTERRUPTIBLE need a timeout
 * of at most max_uninterruptible_ms, counting the timer slack the caller
 * set above its default with PR_SET_TIMERSLACK (a deadline counts from the
 * start of the wait, on CLOCK_MONOTONIC, whichever clock it names; the
 * jiffies variants have no slack, but the timer wheel may end a long one
 * up to an eighth of it late): no task that
 * no signal can end is created without a bound, and the bound stays well
 * below the hung-task detector's (keep max_uninterruptible_ms below that
 * timeout, which the driver cannot read).  Every mode sleeps freezable: a
 * task asleep here does not keep suspend or the cgroup v1 freezer from freezing
 * it, and the wait goes on once it is thawed (a wait the freezer catches
 * running, and an INTERRUPTIBLE one the cgroup v2 freezer stops, is
 * restarted as after a signal that runs no handler).  A KILLABLE wait lets
 * the cgroup v2 freezer, a group stop another thread of its process began
 * (it took the SIGSTOP) or a ptrace trap take its task within
 * max_uninterruptible_ms, 10 ms at least (WAITVAR_SEM_KILLABLE_JOBCTL): it
 * is restarted as after a signal that runs no handler, whatever handlers
 * run meanwhile, with the time left written to @timeout_ns if relative; it
 * never fails with EINTR.  A stop signal the kernel hands to the waiting
 * thread itself (the main thread, or the only one, is asked first) waits
 * for the wait's end, as for every killable sleep.  IO and UNINTERRUPTIBLE
 * waits hold a stop or freeze off until they end, at most
 * max_uninterruptible_ms.
 * Signals: a wait with no timeout or with a deadline is restarted after a
 * handler installed with SA_RESTART, and fails with EINTR otherwise.  A
 * wait with a relative timeout (WAITVAR_SEM_RESTART_LEFT) writes the time
 * it has left into @timeout_ns, as select() does with its timeout, and
 * goes on for that time after a stop and continue (SIGSTOP, or SIGTSTP
 * with no handler, then SIGCONT) or anything else that interrupts it
 * without running a handler; after a handler, SA_RESTART or not, it fails
 * with EINTR and @timeout_ns holds the time that was left, so a caller
 * that retries with the same argument waits no longer than it asked.
 * STATS counts each restart as one more wait, and its interruption as a
 * signal.
 * Errors: EINVAL for an unknown @op or @mode, two timeout kinds,
 * WAITVAR_WAIT_JIFFIES without a timeout kind, IO or
 * UNINTERRUPTIBLE without a timeout or with one (plus the raised timer
 * slack) over max_uninterruptible_ms, EXCLUSIVE or IO on a lock-protected
 * variable;
 * ENOSPC when the user's tasks and descriptors already hold
 * max_user_waiters entries; ETIMEDOUT when the timeout passes; EINTR as
 * above; EIDRM when the variable is destroyed while waiting.
 */
struct waitvar_wait {
	__u32 id;
	__u32 op;
	__u64 operand;
	__u64 timeout_ns;
	__u32 flags;
	__u32 mode;
	__u64 value;
};

/* Most entries one WAITVAR_IOC_WAITV takes, as for futex_waitv(). */
#define WAITVAR_WAITV_MAX	128

/**
 * struct waitvar_waitv_entry - one condition of WAITVAR_IOC_WAITV
 * @id: the variable
 * @op: one of enum waitvar_op
 * @operand: right-hand side of the comparison
 * @flags: must be 0
 * @reserved: must be 0
 */
struct waitvar_waitv_entry {
	__u32 id;
	__u32 op;
	__u64 operand;
	__u32 flags;
	__u32 reserved;
};

/**
 * struct waitvar_waitv - argument of WAITVAR_IOC_WAITV
 * @entries: user pointer to an array of @count struct waitvar_waitv_entry
 * @count: 1 to WAITVAR_WAITV_MAX; one variable may appear more than once
 * @mode: one of enum waitvar_mode
 * @timeout_ns: as for struct waitvar_wait
 * @flags: the timeout bits of WAITVAR_WAIT_* and WAITVAR_WAIT_JIFFIES;
 *	WAITVAR_WAIT_EXCLUSIVE is refused
 * @index: out: index of the first entry whose condition held; in: must
 *	be 0
 * @value: out: the value of that entry's variable when it held; in: must
 *	be 0
 *
 * Sleeps until the condition of any entry holds, queued once on the hashed
 * wait queue of each distinct variable named.  Values of lock-protected
 * variables are read without their locks.  Modes, timeouts, limits and
 * signals work as for WAITVAR_IOC_WAIT.
 * Errors: EINVAL for a bad @count, @op or @mode, an entry's nonzero
 * flags or reserved field, a flag or timeout WAIT would refuse, or
 * WAITVAR_MODE_IO with a lock-protected variable (as WAIT); ENOENT
 * if an entry names no variable; EFAULT for @entries; ENOSPC as for WAIT;
 * ETIMEDOUT, EINTR; EIDRM if a variable is destroyed while waiting.
 */
struct waitvar_waitv {
	__u64 entries;
	__u32 count;
	__u32 mode;
	__u64 timeout_ns;
	__u32 flags;
	__u32 index;
	__u64 value;
};

/**
 * struct waitvar_watch - argument of WAITVAR_IOC_WATCH
 * @id: the variable
 * @op: one of enum waitvar_op
 * @operand: right-hand side of the comparison
 * @flags: must be 0
 * @fd: out: the new file descriptor (close-on-exec); in: must be 0
 *
 * Returns a descriptor that poll(), select() and epoll report readable
 * (EPOLLIN) while the condition holds; it holds a waiter on the variable's
 * hashed wait queue until it is closed.  read() of 8 bytes returns the
 * current value once the condition holds, blocking (interruptibly) until
 * it does unless the descriptor is O_NONBLOCK (EAGAIN).  After DESTROY,
 * poll() reports EPOLLERR | EPOLLHUP and read() fails with EIDRM.
 * The descriptor counts against max_user_waiters until it is released.
 * Errors: EINVAL for an unknown @op, ENOSPC (max_user_waiters), EMFILE,
 * ENOMEM.
 */
struct waitvar_watch {
	__u32 id;
	__u32 op;
	__u64 operand;
	__u32 flags;
	__u32 fd;
};

/**
 * struct waitvar_stats - argument of WAITVAR_IOC_STATS
 * @id: the variable
 * @flags: must be 0
 * @waiters: out: waiters on the variable now: one per WAIT, per WAITV
 *	entry naming it and per WATCH descriptor
 * @bucket: out: index of the hashed wait queue the variable uses, as
 *	var_waitqueue_index() and /sys/kernel/debug/sched/bit_wait_table give it,
 *	to a caller with CAP_SYSLOG (as for %pK pointers); to anyone else
 *	WAITVAR_BUCKET_HIDDEN, since it tells bits of a kernel address
 * @waits: out: waits started (WAITV counts once per entry)
 * @wakes: out: wakes issued by SET, ADD, DEC_AND_WAKE, CMPXCHG, WAKE and
 *	WAKE_NR
 * @woken: out: times a sleeping waiter was woken
 * @spurious: out: of those, the times it found its condition still false
 *	and slept again
 * @timeouts: out: waits that ended with ETIMEDOUT
 * @signals: out: waits that a signal ended, or that a KILLABLE wait left
 *	for a stop or freeze (its restart counts as one more wait)
 *
 * Every out field must be 0 on input.  Counters start at 0 when the
 * variable is created.
 */
struct waitvar_stats {
	__u32 id;
	__u32 flags;
	__u32 waiters;
	__u32 bucket;
	__u64 waits;
	__u64 wakes;
	__u64 woken;
	__u64 spurious;
	__u64 timeouts;
	__u64 signals;
};

/* struct waitvar_stats.bucket for a caller without CAP_SYSLOG */
#define WAITVAR_BUCKET_HIDDEN	0xffffffffU

/* struct waitvar_wake_nr.flags */
#define WAITVAR_WAKE_FILTER	0x1U	/* wake only waiters whose condition holds */

/**
 * struct waitvar_wake_nr - argument of WAITVAR_IOC_WAKE_NR
 * @id: the variable
 * @flags: WAITVAR_WAKE_* bits
 * @nr: in: how many exclusive waiters to wake at most, up to INT_MAX; 0
 *	wakes them all
 * @woken: out: how many exclusive waiters were woken; with
 *	WAITVAR_WAKE_FILTER, how many waiters of either kind; in: must be 0
 *
 * Wakes every non-exclusive waiter of the variable and up to @nr of its
 * exclusive ones (wake_up_var_nr(), or wake_up_var_all() for 0), without
 * changing it.  With WAITVAR_WAKE_FILTER the waker evaluates each WAIT and
 * WAITV waiter's condition itself and wakes only those for which it holds,
 * so none wakes spuriously; the hashed queue is not walked.  WATCH
 * descriptors whose condition holds are woken too, but not counted in
 * @woken.
 * Errors: EINVAL for an unknown flag or @nr over INT_MAX.
 */
struct waitvar_wake_nr {
	__u32 id;
	__u32 flags;
	__u32 nr;
	__u32 woken;
};

/* struct waitvar_add.flags */
#define WAITVAR_ADD_WAKE	0x1U	/* wake the waiters after adding */

/**
 * struct waitvar_add - argument of WAITVAR_IOC_ADD
 * @id: the variable
 * @flags: WAITVAR_ADD_* bits
 * @delta: in: signed amount added, modulo 2^64
 * @value: out: the value after the addition; in: must be 0
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
 *	@prev == @expected; in: must be 0
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

/* Size of a name, its NUL included. */
#define WAITVAR_NAME_MAX	64

/**
 * struct waitvar_named - argument of WAITVAR_IOC_NAMED_CREATE, _OPEN, _REMOVE
 * @name: "/" and 1 to 62 characters of [A-Za-z0-9._-], then NUL bytes
 *	to the end of the field
 * @value: CREATE: in: initial value; otherwise must be 0
 * @flags: CREATE: WAITVAR_CREATE_* bits; otherwise must be 0
 * @mode: CREATE: in: permission bits (0 to 0777) for the caller's fsuid
 *	and fsgid; otherwise must be 0
 * @id: CREATE, OPEN: out: the variable's id in this file; in: must be 0
 * @reserved: must be 0
 *
 * NAMED_CREATE makes a named variable in the caller's user namespace and
 * attaches it to this file; its memory is charged to the caller's memory
 * cgroup.  NAMED_OPEN attaches an existing one (read permission).
 * NAMED_REMOVE takes the name away (write permission, or being its owner:
 * the creator's fsuid may always remove it, whatever its mode): the
 * variable dies, its waiters return EIDRM, and the ids still attached only
 * report that.  If NAMED_CREATE cannot write its result back, the name it
 * made is removed again (if it is still there) and EFAULT returned.
 * Errors: EINVAL for a bad name or field, EEXIST (CREATE), ENOENT (OPEN,
 * REMOVE), EACCES, ENOSPC when the namespace holds max_named_vars names,
 * the user max_user_names names or max_user_vars variables, or the file
 * max_vars_per_file variables, ENOMEM.
 */
struct waitvar_named {
	char name[WAITVAR_NAME_MAX];
	__u64 value;
	__u32 flags;
	__u32 mode;
	__u32 id;
	__u32 reserved;
};

/**
 * struct waitvar_list - argument of WAITVAR_IOC_LIST
 * @names: user pointer to a buffer of @size bytes
 * @size: in: size of the buffer
 * @flags: must be 0
 * @count: out: names written, each NUL-terminated, one after the other;
 *	in: must be 0
 * @needed: out: bytes all the names the caller may see would take;
 *	in: must be 0
 *
 * Lists the named variables of the caller's user namespace that it has
 * read permission on, in the order they were created (a name left out is
 * not a refused access: its CAP_DAC_OVERRIDE check leaves no audit
 * record); names that do not fit are left out.  The names are gathered
 * first and copied out after, so a buffer that faults slowly holds up no
 * other named-variable command.
 * Errors: EFAULT for @names, ENOMEM.
 */
struct waitvar_list {
	__u64 names;
	__u32 size;
	__u32 flags;
	__u32 count;
	__u32 needed;
};

/* struct waitvar_features.semantics */
#define WAITVAR_SEM_NAMES_USERNS	0x1U	/* names are per user namespace */
#define WAITVAR_SEM_FREEZABLE		0x2U	/* waits sleep freezable */
#define WAITVAR_SEM_OWNER_REMOVES	0x4U	/* a name's owner may remove it */
#define WAITVAR_SEM_BUCKET_PRIVILEGED	0x8U	/* STATS hides @bucket */
#define WAITVAR_SEM_TEST_HOOKS		0x10U	/* test delay points built in */
#define WAITVAR_SEM_HRTIMER		0x20U	/* hrtimer timeouts, REALTIME follows */
#define WAITVAR_SEM_RESTART_LEFT	0x40U	/* relative waits restart, time left */
#define WAITVAR_SEM_TIMENS		0x80U	/* MONOTONIC deadlines: caller's timens */
#define WAITVAR_SEM_KILLABLE_JOBCTL	0x100U	/* KILLABLE waits let a stop or freeze in */

/**
 * struct waitvar_features - argument of WAITVAR_IOC_FEATURES
 * @commands: out: bit N set for each command number N the driver has
 * @create_flags: out: the WAITVAR_CREATE_* bits it takes
 * @wait_flags: out: the WAITVAR_WAIT_* bits it takes
 * @wake_flags: out: the WAITVAR_WAKE_* bits it takes
 * @add_flags: out: the WAITVAR_ADD_* bits it takes
 * @ops: out: bit N set for each enum waitvar_op N it takes
 * @modes: out: bit N set for each enum waitvar_mode N it takes
 * @semantics: out: WAITVAR_SEM_* bits
 * @waitv_max: out: WAITVAR_WAITV_MAX
 * @max_vars_per_file: out: the limit now (module parameter)
 * @max_user_vars: out: the limit now (module parameter)
 * @max_user_waiters: out: the limit now (module parameter)
 * @max_user_names: out: the limit now (module parameter)
 * @max_named_vars: out: the limit now (module parameter)
 * @max_uninterruptible_ms: out: longest IO or UNINTERRUPTIBLE wait
 * @wait_table_size: out: the number of queues in the kernel's shared wait
 *	table, which STATS' @bucket indexes (fixed at boot)
 * @reserved32: must be 0
 * @reserved: must be 0
 *
 * Every field is out only, so must be 0 on input; a field this header has
 * and an older driver does not reads 0.
 */
struct waitvar_features {
	__u64 commands;
	__u32 create_flags;
	__u32 wait_flags;
	__u32 wake_flags;
	__u32 add_flags;
	__u32 ops;
	__u32 modes;
	__u32 semantics;
	__u32 waitv_max;
	__u32 max_vars_per_file;
	__u32 max_user_vars;
	__u32 max_user_waiters;
	__u32 max_user_names;
	__u32 max_named_vars;
	__u32 max_uninterruptible_ms;
	__u32 wait_table_size;
	__u32 reserved32;
	__u64 reserved[3];
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
#define WAITVAR_IOC_WAITV	_IOWR(WAITVAR_IOC_MAGIC, 0x0a, struct waitvar_waitv)
#define WAITVAR_IOC_WATCH	_IOWR(WAITVAR_IOC_MAGIC, 0x0b, struct waitvar_watch)
#define WAITVAR_IOC_STATS	_IOWR(WAITVAR_IOC_MAGIC, 0x0c, struct waitvar_stats)
#define WAITVAR_IOC_NAMED_CREATE _IOWR(WAITVAR_IOC_MAGIC, 0x0d, struct waitvar_named)
#define WAITVAR_IOC_NAMED_OPEN	_IOWR(WAITVAR_IOC_MAGIC, 0x0e, struct waitvar_named)
#define WAITVAR_IOC_NAMED_REMOVE _IOW(WAITVAR_IOC_MAGIC, 0x0f, struct waitvar_named)
#define WAITVAR_IOC_LIST	_IOWR(WAITVAR_IOC_MAGIC, 0x10, struct waitvar_list)
#define WAITVAR_IOC_FEATURES	_IOWR(WAITVAR_IOC_MAGIC, 0x11, struct waitvar_features)

#endif /* _UAPI_LINUX_WAITVAR_H */
