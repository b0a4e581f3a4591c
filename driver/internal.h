/* SPDX-License-Identifier: GPL-2.0 */
/*
 * /dev/waitvar: the interface between the driver's files.
 *
 * main.c   the ioctl table and dispatch, file operations, module init/exit
 * var.c    variables: lookups, permissions, updates and wakes
 * wait.c   WAIT and WAITV
 * watch.c  WATCH descriptors
 * named.c  named variables and LIST
 * stats.c  STATS and debugfs
 * user.c   per-user limits
 *
 * Read this first: the rules every file keeps.
 *
 * References.  A struct waitvar_var is counted by its kref.  References are
 * held by each file's xarray entry (one per id naming the variable), by each
 * task in WAIT or WAITV while it waits, by each WATCH descriptor until it is
 * released, and, for a named variable, by the names.  The last put
 * frees the variable after an RCU grace period: readers under
 * rcu_read_lock() may still see it, and waitvar_var_get() takes a reference
 * only if the count is not zero.
 *
 * Ids.  CREATE, NAMED_CREATE and NAMED_OPEN reserve an id (an xarray slot
 * that loads as NULL) and store the variable in it only once the id has
 * reached userspace; their undo releases the reservation and puts exactly
 * the variable they made.  DESTROY never erases a reserved slot, so no
 * other thread can name, free or reuse an id in that window.
 *
 * Charges.  Each open file holds the counters of the real uid that opened
 * it (struct waitvar_user); a variable is charged to them until it is
 * freed, a name until it is removed, a WAIT for its duration, a WAITV once
 * per entry (the shared table holds one per distinct variable), a WATCH
 * descriptor until it is released.
 *
 * Death.  A file's own variable dies when its id is detached (DESTROY, the
 * file's release); a named one when its name is taken away (NAMED_REMOVE,
 * module exit).  waitvar_var_end() marks it dead and wakes every waiter,
 * which returns -EIDRM; references may outlive that.
 *
 * Locks, outer to inner:
 *   waitvar_names_lock -> the xarray's lock, the hashed wait-queue lock,
 *	a variable's waiters_lock, waitvar_users_lock
 *   a variable's spinlock or mutex -> the hashed wait-queue lock, its
 *	waiters_lock
 *   a variable's waiters_lock -> a WATCH descriptor's poll queue lock
 * No other lock of the driver is taken under waiters_lock, and
 * waitvar_files_lock (debugfs) is never held with waitvar_names_lock.
 *
 * WATCH descriptors are listed on their variable only, never on the
 * shared hashed queues (whose every wake walks every entry with
 * interrupts off): each wake of a variable, whatever command made it,
 * also walks its watches (waitvar_notify_watches()).
 *
 * Ordering.  Every update stores the value before it wakes.  With a lock,
 * the store and wake_up_var_locked() both happen under it; without, a full
 * barrier sits between the store and wake_up_var()'s lockless check of the
 * queue, pairing with the one a waiter has between queueing itself and
 * testing its condition.  Marking a variable dead takes no lock, even on a
 * lock-protected variable: the store, a full barrier, then the wake.  An
 * update of a lock-protected variable has the barrier too: WAITV and WATCH
 * test its value without the lock.  A
 * filtered wake puts a full barrier between the update and reading the
 * listed waiters' conditions; a waiter is listed before its first test.
 */
#ifndef _WAITVAR_INTERNAL_H
#define _WAITVAR_INTERNAL_H

#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/refcount.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/uidgid.h>
#include <linux/xarray.h>

#include <linux/waitvar.h>

/* The flag bits each command takes; FEATURES reports these. */
#define WAITVAR_CREATE_LOCKS	(WAITVAR_CREATE_SPINLOCK | WAITVAR_CREATE_MUTEX)
#define WAITVAR_WAIT_TIMEOUTS	(WAITVAR_WAIT_TIMEOUT | WAITVAR_WAIT_ABS_MONOTONIC | \
				 WAITVAR_WAIT_ABS_REALTIME)
#define WAITVAR_WAIT_FLAGS	(WAITVAR_WAIT_TIMEOUTS | WAITVAR_WAIT_EXCLUSIVE | \
				 WAITVAR_WAIT_JIFFIES)
#define WAITVAR_WAKE_FLAGS	WAITVAR_WAKE_FILTER
#define WAITVAR_ADD_FLAGS	WAITVAR_ADD_WAKE

struct dentry;
struct file;
struct pid;
struct seq_file;
struct task_struct;
struct user_namespace;

/**
 * enum waitvar_charge - what a user's limits count
 * @WAITVAR_CHARGE_VARS: variables that exist (max_user_vars)
 * @WAITVAR_CHARGE_WAITERS: waiters listed on variables: a WAIT, each WAITV
 *	entry, a WATCH descriptor (max_user_waiters)
 * @WAITVAR_CHARGE_NAMES: names (max_user_names)
 * @WAITVAR_NR_CHARGES: how many
 */
enum waitvar_charge {
	WAITVAR_CHARGE_VARS,
	WAITVAR_CHARGE_WAITERS,
	WAITVAR_CHARGE_NAMES,
	WAITVAR_NR_CHARGES,
};

/**
 * struct waitvar_user - what one real uid holds, across every open file
 * @node: in user.c's table, under waitvar_users_lock
 * @uid: the user
 * @ref: held by each open file, variable and WATCH descriptor charged
 * @count: what is charged, by enum waitvar_charge
 */
struct waitvar_user {
	struct hlist_node node;
	kuid_t uid;
	refcount_t ref;
	atomic_t count[WAITVAR_NR_CHARGES];
};

/**
 * enum waitvar_lock_kind - what protects a variable's updates and waits
 * @WAITVAR_LOCK_NONE: nothing: updates are atomic, waits test unlocked
 * @WAITVAR_LOCK_SPIN: the variable's spinlock
 * @WAITVAR_LOCK_MUTEX: the variable's mutex
 */
enum waitvar_lock_kind {
	WAITVAR_LOCK_NONE,
	WAITVAR_LOCK_SPIN,
	WAITVAR_LOCK_MUTEX,
};

/**
 * struct waitvar_counters - a variable's counters, as STATS returns them
 * @waits: waits started
 * @wakes: wakes issued
 * @woken: times a sleeping waiter was woken
 * @spurious: of those, the times its condition was still false
 * @timeouts: waits that timed out
 * @signals: waits a signal ended
 */
struct waitvar_counters {
	atomic64_t waits;
	atomic64_t wakes;
	atomic64_t woken;
	atomic64_t spurious;
	atomic64_t timeouts;
	atomic64_t signals;
};

/**
 * struct waitvar_var - one variable
 * @value: the value; its address keys the hashed wait queue
 * @lock_kind: which lock, if any, protects @value
 * @dead: ended: its waiters return -EIDRM
 * @spin: WAITVAR_LOCK_SPIN: protects @value
 * @mutex: WAITVAR_LOCK_MUTEX: protects @value
 * @waiters_lock: protects @waiters, @watches and the two counts
 * @waiters: struct waitvar_waiter.node of each task in WAIT or WAITV
 * @watches: struct waitvar_waiter.node of each WATCH descriptor
 * @nr_waiters: length of @waiters and @watches together
 * @nr_watches: length of @watches; read without the lock by
 *	waitvar_notify_watches()
 * @stats: counters
 * @ref: see "References" above
 * @rcu: frees it
 * @owner: the user it is charged to, a reference held
 * @named: a named variable; this and the fields below are set before it
 *	is published
 * @user_ns: named: the namespace its name lives in, a reference held
 * @uid: named: owner
 * @gid: named: group
 * @mode: named: permission bits
 * @name_node: named: on its namespace's list of names, under
 *	waitvar_names_lock
 * @name_hash: named: on the names' hash table, keyed by namespace and
 *	name, under waitvar_names_lock
 * @name: named: its name
 */
struct waitvar_var {
	atomic64_t value;
	enum waitvar_lock_kind lock_kind;
	bool dead;
	spinlock_t spin;		/* protects value (WAITVAR_LOCK_SPIN) */
	struct mutex mutex;		/* protects value (WAITVAR_LOCK_MUTEX) */
	spinlock_t waiters_lock;	/* protects waiters, watches, the counts */
	struct list_head waiters;
	struct list_head watches;
	unsigned int nr_waiters;
	unsigned int nr_watches;
	struct waitvar_counters stats;
	struct kref ref;
	struct rcu_head rcu;
	struct waitvar_user *owner;
	bool named;
	struct user_namespace *user_ns;
	kuid_t uid;
	kgid_t gid;
	umode_t mode;
	struct list_head name_node;
	struct hlist_node name_hash;
	char name[WAITVAR_NAME_MAX];
};

/**
 * struct waitvar_file - one open file of /dev/waitvar
 * @vars: id -> struct waitvar_var; reserved (loads NULL) while a new id
 *	is on its way to userspace
 * @next_id: where the cyclic search for the next free id starts, under
 *	@vars' lock
 * @user: the opener's counters, a reference held
 * @serial: names its debugfs file
 * @owner: the opener's thread group, a reference held; debugfs shows its
 *	number in the reader's pid namespace
 * @dentry: its debugfs file
 * @node: on the list of open files, under waitvar_files_lock
 */
struct waitvar_file {
	struct xarray vars;
	u32 next_id;
	struct waitvar_user *user;
	unsigned int serial;
	struct pid *owner;
	struct dentry *dentry;
	struct list_head node;
};

struct waitvar_jobctl_watch;
struct waitvar_watch_file;

/**
 * struct waitvar_waiter - one condition on one variable, listed on it
 * @node: on @var's waiters (a task) or watches, under its waiters_lock
 * @var: the variable, a reference held
 * @task: the waiting task; NULL for a WATCH descriptor and for the
 *	bookmark a filtered wake leaves in the list while it lets go of it
 * @watch: the WATCH descriptor; NULL for a task
 * @op: enum waitvar_op
 * @operand: right-hand side of @op
 * @exclusive: queued as an exclusive waiter
 * @kicked: woken by a filtered wake (an int: xchg() takes no bool everywhere)
 * @evals: times the condition was tested
 * @value: the value it held for
 * @dead: the variable was found dead
 * @jobctl: a KILLABLE wait's watch for a stop or freeze; NULL otherwise
 * @yielded: the wait ended for that watch, its condition false
 */
struct waitvar_waiter {
	struct list_head node;
	struct waitvar_var *var;
	struct task_struct *task;
	struct waitvar_watch_file *watch;
	u32 op;
	u64 operand;
	bool exclusive;
	int kicked;
	unsigned int evals;
	u64 value;
	bool dead;
	struct waitvar_jobctl_watch *jobctl;
	bool yielded;
};

/**
 * struct waitvar_call - what one ioctl call keeps until its copy-out
 * @file: WATCH: the new descriptor's file; its commit installs it once the
 *	fd reached userspace, its undo puts it if the fd could not
 * @var: CREATE, NAMED_*: the variable for the reserved id, a reference
 *	held; the commit stores it there, the undo puts it
 */
struct waitvar_call {
	struct file *file;
	struct waitvar_var *var;
};

/* var.c */
struct waitvar_var *waitvar_var_new(struct waitvar_user *owner, u64 value, u32 flags);
bool waitvar_create_flags_bad(u32 flags);
void waitvar_var_put(struct waitvar_var *var);
struct waitvar_var *waitvar_var_lookup(struct waitvar_file *wf, u32 id, int may);
bool waitvar_permitted(struct waitvar_var *var, int may);
bool waitvar_listable(struct waitvar_var *var);
u64 waitvar_filtered_walk_breaks(void);
int waitvar_reserve(struct waitvar_file *wf, u32 *id);
void waitvar_publish(struct waitvar_file *wf, u32 id, struct waitvar_call *call);
void waitvar_unreserve(struct waitvar_file *wf, u32 id, struct waitvar_call *call);
int waitvar_detach(struct waitvar_file *wf, u32 id);
void waitvar_var_end(struct waitvar_var *var);
bool waitvar_op_holds(u32 op, u64 value, u64 operand);
bool waitvar_holds(struct waitvar_waiter *w);
void waitvar_list_waiter(struct waitvar_waiter *w);
void waitvar_unlist_waiter(struct waitvar_waiter *w);

/* user.c */
unsigned int waitvar_user_limit(enum waitvar_charge what);
struct waitvar_user *waitvar_user_get(kuid_t uid);
struct waitvar_user *waitvar_user_hold(struct waitvar_user *user);
void waitvar_user_put(struct waitvar_user *user);
int waitvar_charge(struct waitvar_user *user, enum waitvar_charge what, unsigned int n);
void waitvar_uncharge(struct waitvar_user *user, enum waitvar_charge what, unsigned int n);

/* watch.c */
void waitvar_watch_notify(struct waitvar_watch_file *watch);

/* named.c */
unsigned int waitvar_max_named_vars(void);
void waitvar_named_show(struct seq_file *m);
void waitvar_named_exit(void);

/* stats.c */
void waitvar_debugfs_init(void);
void waitvar_debugfs_exit(void);
void waitvar_debugfs_add(struct waitvar_file *wf);
void waitvar_debugfs_del(struct waitvar_file *wf);

/*
 * The commands, each on the kernel copy of its own argument type; main.c's
 * table calls them.  A handler that leaves work for after the copy-out
 * keeps it in @call, and its _commit or _undo finishes it: _commit once
 * the result reached userspace, _undo if it could not.
 */
long waitvar_ioctl_create(struct waitvar_file *wf, struct waitvar_create *arg,
			  struct waitvar_call *call);
void waitvar_ioctl_create_commit(struct waitvar_file *wf, struct waitvar_create *arg,
				 struct waitvar_call *call);
void waitvar_ioctl_create_undo(struct waitvar_file *wf, struct waitvar_create *arg,
			       struct waitvar_call *call);
long waitvar_ioctl_destroy(struct waitvar_file *wf, struct waitvar_id *arg);
long waitvar_ioctl_get(struct waitvar_file *wf, struct waitvar_value *arg);
long waitvar_ioctl_set(struct waitvar_file *wf, struct waitvar_value *arg);
long waitvar_ioctl_wait(struct waitvar_file *wf, struct waitvar_wait *arg);
long waitvar_ioctl_wake(struct waitvar_file *wf, struct waitvar_id *arg);
long waitvar_ioctl_wake_nr(struct waitvar_file *wf, struct waitvar_wake_nr *arg);
long waitvar_ioctl_add(struct waitvar_file *wf, struct waitvar_add *arg);
long waitvar_ioctl_dec_and_wake(struct waitvar_file *wf, struct waitvar_value *arg);
long waitvar_ioctl_cmpxchg(struct waitvar_file *wf, struct waitvar_cmpxchg *arg);
long waitvar_ioctl_waitv(struct waitvar_file *wf, struct waitvar_waitv *arg);
long waitvar_ioctl_watch(struct waitvar_file *wf, struct waitvar_watch *arg,
			 struct waitvar_call *call);
void waitvar_ioctl_watch_commit(struct waitvar_file *wf, struct waitvar_watch *arg,
				struct waitvar_call *call);
void waitvar_ioctl_watch_undo(struct waitvar_file *wf, struct waitvar_watch *arg,
			      struct waitvar_call *call);
long waitvar_ioctl_stats(struct waitvar_file *wf, struct waitvar_stats *arg);
long waitvar_ioctl_named_create(struct waitvar_file *wf, struct waitvar_named *arg,
				struct waitvar_call *call);
void waitvar_ioctl_named_commit(struct waitvar_file *wf, struct waitvar_named *arg,
				struct waitvar_call *call);
void waitvar_ioctl_named_create_undo(struct waitvar_file *wf, struct waitvar_named *arg,
				     struct waitvar_call *call);
long waitvar_ioctl_named_open(struct waitvar_file *wf, struct waitvar_named *arg,
			      struct waitvar_call *call);
void waitvar_ioctl_named_open_undo(struct waitvar_file *wf, struct waitvar_named *arg,
				   struct waitvar_call *call);
long waitvar_ioctl_named_remove(struct waitvar_file *wf, struct waitvar_named *arg);
long waitvar_ioctl_list(struct waitvar_file *wf, struct waitvar_list *arg);
unsigned int waitvar_max_vars_per_file(void);
unsigned int waitvar_max_uninterruptible_ms(void);

#endif /* _WAITVAR_INTERNAL_H */
