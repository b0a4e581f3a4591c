// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/waitvar: kernel-side variables that userspace threads change and wait
 * on, so that wait_var_event() and wake_up_var() can be driven from tests.
 *
 * Each open file holds its own table of variables.  A waiter sleeps on the
 * hashed wait queue keyed by &var->value, in the wait_var_event() variant
 * its mode, flags and the variable's lock select; every update stores the
 * value, orders it and calls wake_up_var().  Each waiter is also listed on
 * its variable, so that a filtered wake can test the waiters' conditions
 * itself and the counters can tell real wakeups from spurious ones.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/anon_inodes.h>
#include <linux/atomic.h>
#include <linux/build_bug.h>
#include <linux/ctype.h>
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/debugfs.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/jiffies.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/nospec.h>
#include <linux/poll.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <linux/wait_bit.h>
#include <linux/xarray.h>

#include <linux/waitvar.h>

static unsigned int max_vars_per_file = 1024;
module_param(max_vars_per_file, uint, 0644);
MODULE_PARM_DESC(max_vars_per_file, "Most variables one open file may hold");

static unsigned int max_named_vars = 256;
module_param(max_named_vars, uint, 0644);
MODULE_PARM_DESC(max_named_vars, "Most named variables the device may hold");

/* The layout must not depend on the ABI: no implicit padding anywhere. */
static_assert(sizeof(struct waitvar_create) == 32);
static_assert(sizeof(struct waitvar_id) == 8);
static_assert(sizeof(struct waitvar_value) == 16);
static_assert(sizeof(struct waitvar_wait) == 40);
static_assert(sizeof(struct waitvar_wake_nr) == 16);
static_assert(sizeof(struct waitvar_add) == 24);
static_assert(sizeof(struct waitvar_cmpxchg) == 32);
static_assert(sizeof(struct waitvar_waitv_entry) == 24);
static_assert(sizeof(struct waitvar_waitv) == 40);
static_assert(sizeof(struct waitvar_watch) == 24);
static_assert(sizeof(struct waitvar_stats) == 64);
static_assert(sizeof(struct waitvar_named) == 88);
static_assert(sizeof(struct waitvar_list) == 24);

#define WAITVAR_CREATE_LOCKS	(WAITVAR_CREATE_SPINLOCK | WAITVAR_CREATE_MUTEX)
#define WAITVAR_WAIT_TIMEOUTS	(WAITVAR_WAIT_TIMEOUT | WAITVAR_WAIT_ABS_MONOTONIC | \
				 WAITVAR_WAIT_ABS_REALTIME)
#define WAITVAR_WAIT_FLAGS	(WAITVAR_WAIT_TIMEOUTS | WAITVAR_WAIT_EXCLUSIVE)

enum waitvar_lock_kind {
	WAITVAR_LOCK_NONE,
	WAITVAR_LOCK_SPIN,
	WAITVAR_LOCK_MUTEX,
};

struct waitvar_counters {
	atomic64_t waits;
	atomic64_t wakes;
	atomic64_t woken;
	atomic64_t spurious;
	atomic64_t timeouts;
	atomic64_t signals;
};

struct waitvar_var {
	atomic64_t value;	/* &value keys the hashed wait queue */
	enum waitvar_lock_kind lock_kind;
	bool dead;		/* destroyed: waiters return -EIDRM */
	spinlock_t spin;	/* WAITVAR_LOCK_SPIN: protects value */
	struct mutex mutex;	/* WAITVAR_LOCK_MUTEX: protects value */
	spinlock_t waiters_lock;	/* protects waiters and nr_waiters */
	struct list_head waiters;	/* struct waitvar_waiter.node */
	unsigned int nr_waiters;
	struct waitvar_counters stats;
	struct kref ref;	/* each file's table, each waiter and watch, the names */
	struct rcu_head rcu;
	/* Named variables only, set before they are published: */
	bool named;
	kuid_t uid;
	kgid_t gid;
	umode_t mode;
	struct list_head name_node;	/* on waitvar_names, under waitvar_names_lock */
	char name[WAITVAR_NAME_MAX];
};

struct waitvar_file {
	struct xarray vars;	/* id -> struct waitvar_var */
	unsigned int serial;	/* names the debugfs file */
	pid_t owner;		/* tgid of the opener */
	struct dentry *dentry;
	struct list_head node;	/* on waitvar_files */
};

struct waitvar_watch_file;

/* One condition on one variable, listed on it while a task waits for it. */
struct waitvar_waiter {
	struct list_head node;
	struct waitvar_var *var;
	struct task_struct *task;	/* NULL for a watch */
	struct waitvar_watch_file *watch;
	u32 op;
	u64 operand;
	bool exclusive;
	bool kicked;		/* woken by a filtered wake */
	unsigned int evals;	/* times the condition was tested */
	u64 value;		/* the value it held for */
	bool dead;
};

/* A WATCH descriptor: its entry on the hashed queue wakes @pollq. */
struct waitvar_watch_file {
	struct waitvar_waiter w;
	struct wait_bit_queue_entry wbq;
	wait_queue_head_t pollq;
};

static DEFINE_MUTEX(waitvar_names_lock);	/* protects the two below */
static LIST_HEAD(waitvar_names);
static unsigned int waitvar_nr_named;

static DEFINE_MUTEX(waitvar_files_lock);	/* protects the two below */
static LIST_HEAD(waitvar_files);
static unsigned int waitvar_next_serial;
static struct dentry *waitvar_debugfs;

static void waitvar_var_free(struct kref *ref)
{
	struct waitvar_var *var = container_of(ref, struct waitvar_var, ref);

	mutex_destroy(&var->mutex);
	kfree_rcu(var, rcu);
}

static void waitvar_put(struct waitvar_var *var)
{
	kref_put(&var->ref, waitvar_var_free);
}

static struct waitvar_var *waitvar_get(struct waitvar_file *wf, u32 id)
{
	struct waitvar_var *var;

	rcu_read_lock();
	var = xa_load(&wf->vars, id);
	if (var && !kref_get_unless_zero(&var->ref))
		var = NULL;
	rcu_read_unlock();
	return var;
}

/* Named variables: mode bits for owner, group and others; DAC override wins. */
static bool waitvar_permitted(struct waitvar_var *var, int may)
{
	umode_t mode = var->mode;

	if (uid_eq(current_fsuid(), var->uid))
		mode >>= 6;
	else if (in_group_p(var->gid))
		mode >>= 3;
	if ((mode & may & 7) == may)
		return true;
	return capable(CAP_DAC_OVERRIDE);
}

/* The variable @id of @wf, if the caller may access it as @may asks. */
static struct waitvar_var *waitvar_lookup(struct waitvar_file *wf, u32 id, int may)
{
	struct waitvar_var *var = waitvar_get(wf, id);

	if (!var)
		return ERR_PTR(-ENOENT);
	if (var->named && !waitvar_permitted(var, may)) {
		waitvar_put(var);
		return ERR_PTR(-EACCES);
	}
	return var;
}

static bool waitvar_op_holds(u32 op, u64 value, u64 operand)
{
	switch (op) {
	case WAITVAR_OP_EQ:
		return value == operand;
	case WAITVAR_OP_NE:
		return value != operand;
	case WAITVAR_OP_LT:
		return value < operand;
	case WAITVAR_OP_LE:
		return value <= operand;
	case WAITVAR_OP_GT:
		return value > operand;
	case WAITVAR_OP_GE:
		return value >= operand;
	case WAITVAR_OP_LT_S:
		return (s64)value < (s64)operand;
	case WAITVAR_OP_LE_S:
		return (s64)value <= (s64)operand;
	case WAITVAR_OP_GT_S:
		return (s64)value > (s64)operand;
	case WAITVAR_OP_GE_S:
		return (s64)value >= (s64)operand;
	case WAITVAR_OP_ANY:
		return value & operand;
	case WAITVAR_OP_ALL:
		return (value & operand) == operand;
	case WAITVAR_OP_NONE:
		return !(value & operand);
	}
	return false;
}

static bool waitvar_holds(struct waitvar_waiter *w)
{
	return waitvar_op_holds(w->op, atomic64_read(&w->var->value), w->operand);
}

/* The end of every wait: destroyed, or op holds for the value. */
static bool waitvar_test(struct waitvar_waiter *w)
{
	w->dead = READ_ONCE(w->var->dead);
	if (w->dead)
		return true;
	w->value = atomic64_read(&w->var->value);
	return waitvar_op_holds(w->op, w->value, w->operand);
}

/*
 * The condition of the wait_var_event() variants.  Each tests it once
 * before queueing, once after, then once after each return from its sleep:
 * from the third test on, each is counted as a wakeup, and as a spurious
 * one if the condition is still false.  waitvar_account_end() takes the
 * last one back if the timeout or a signal, not a wake, ended the sleep.
 */
static bool waitvar_done(struct waitvar_waiter *w)
{
	bool done = waitvar_test(w);

	if (++w->evals > 2) {
		atomic64_inc(&w->var->stats.woken);
		if (!done)
			atomic64_inc(&w->var->stats.spurious);
	}
	return done;
}

static void waitvar_list_waiter(struct waitvar_waiter *w)
{
	struct waitvar_var *var = w->var;

	spin_lock(&var->waiters_lock);
	list_add_tail(&w->node, &var->waiters);
	var->nr_waiters++;
	spin_unlock(&var->waiters_lock);
}

static void waitvar_unlist_waiter(struct waitvar_waiter *w)
{
	struct waitvar_var *var = w->var;

	spin_lock(&var->waiters_lock);
	list_del(&w->node);
	var->nr_waiters--;
	spin_unlock(&var->waiters_lock);
}

static void waitvar_lock(struct waitvar_var *var)
{
	if (var->lock_kind == WAITVAR_LOCK_SPIN)
		spin_lock(&var->spin);
	else if (var->lock_kind == WAITVAR_LOCK_MUTEX)
		mutex_lock(&var->mutex);
}

static void waitvar_unlock(struct waitvar_var *var)
{
	if (var->lock_kind == WAITVAR_LOCK_SPIN)
		spin_unlock(&var->spin);
	else if (var->lock_kind == WAITVAR_LOCK_MUTEX)
		mutex_unlock(&var->mutex);
}

/*
 * Wakes the waiters after an update, called with the variable's lock held
 * if it has one: the lock then orders the update before the wake.  An
 * unlocked variable's update was a plain store or a value-returning atomic;
 * the full barrier orders either before wake_up_var()'s lockless check.
 */
static void waitvar_wake(struct waitvar_var *var)
{
	atomic64_inc(&var->stats.wakes);
	switch (var->lock_kind) {
	case WAITVAR_LOCK_SPIN:
		wake_up_var_locked(&var->value, &var->spin);
		break;
	case WAITVAR_LOCK_MUTEX:
		wake_up_var_locked(&var->value, &var->mutex);
		break;
	default:
		/* Orders the update before wake_up_var()'s waiter check. */
		smp_mb();
		wake_up_var(&var->value);
		break;
	}
}

/*
 * Wakes the listed waiters whose condition holds now, up to @nr exclusive
 * ones (0: all), and the watches whose condition holds.  Returns how many
 * waiting tasks were woken.
 */
static int waitvar_wake_filtered(struct waitvar_var *var, u32 nr)
{
	struct waitvar_waiter *w;
	u32 exclusive = 0;
	int woken = 0;

	/* Orders the caller's update before reading the conditions. */
	smp_mb();
	atomic64_inc(&var->stats.wakes);
	spin_lock(&var->waiters_lock);
	list_for_each_entry(w, &var->waiters, node) {
		if (!waitvar_holds(w))
			continue;
		if (w->watch) {
			wake_up_interruptible_poll(&w->watch->pollq, EPOLLIN | EPOLLRDNORM);
			continue;
		}
		if (w->exclusive) {
			if (nr && exclusive == nr)
				continue;
			exclusive++;
		}
		WRITE_ONCE(w->kicked, true);
		/* A listed task runs nothing but its wait: this ends that sleep. */
		woken += wake_up_process(w->task);
	}
	spin_unlock(&var->waiters_lock);
	return woken;
}

/* Ends a variable: every waiter sees -EIDRM, exclusive ones included. */
static void waitvar_kill(struct waitvar_var *var)
{
	WRITE_ONCE(var->dead, true);
	/* Orders the store before wake_up_var_all()'s waiter check. */
	smp_mb();
	wake_up_var_all(&var->value);
}

/* Drops @id from @wf: a variable of the file dies, a named one lives on. */
static int waitvar_remove(struct waitvar_file *wf, u32 id)
{
	struct waitvar_var *var = xa_erase(&wf->vars, id);

	if (!var)
		return -ENOENT;
	if (!var->named)
		waitvar_kill(var);
	waitvar_put(var);
	return 0;
}

static bool waitvar_create_flags_bad(u32 flags)
{
	return (flags & ~WAITVAR_CREATE_LOCKS) ||
	       (flags & WAITVAR_CREATE_LOCKS) == WAITVAR_CREATE_LOCKS;
}

/* A new variable, charged to the caller's memory cgroup. */
static struct waitvar_var *waitvar_new(u64 value, u32 flags)
{
	struct waitvar_var *var = kzalloc(sizeof(*var), GFP_KERNEL_ACCOUNT);

	if (!var)
		return NULL;
	atomic64_set(&var->value, value);
	if (flags & WAITVAR_CREATE_SPINLOCK)
		var->lock_kind = WAITVAR_LOCK_SPIN;
	else if (flags & WAITVAR_CREATE_MUTEX)
		var->lock_kind = WAITVAR_LOCK_MUTEX;
	spin_lock_init(&var->spin);
	mutex_init(&var->mutex);
	spin_lock_init(&var->waiters_lock);
	INIT_LIST_HEAD(&var->waiters);
	INIT_LIST_HEAD(&var->name_node);
	kref_init(&var->ref);
	return var;
}

/* Puts @var in @wf's table with a reference of its own; returns the id. */
static int waitvar_attach(struct waitvar_file *wf, struct waitvar_var *var, u32 *id)
{
	int ret;

	kref_get(&var->ref);
	ret = xa_alloc(&wf->vars, id, var, XA_LIMIT(1, READ_ONCE(max_vars_per_file)),
		       GFP_KERNEL_ACCOUNT);
	if (ret) {
		waitvar_put(var);
		return ret == -EBUSY ? -ENOSPC : ret;
	}
	return 0;
}

static long waitvar_create(struct waitvar_file *wf, void *data)
{
	struct waitvar_create *arg = data;
	struct waitvar_var *var;
	int ret;

	if (waitvar_create_flags_bad(arg->flags) || arg->reserved[0] || arg->reserved[1])
		return -EINVAL;
	var = waitvar_new(arg->value, arg->flags);
	if (!var)
		return -ENOMEM;
	ret = waitvar_attach(wf, var, &arg->id);
	waitvar_put(var);
	return ret;
}

static void waitvar_create_undo(struct waitvar_file *wf, void *data)
{
	struct waitvar_create *arg = data;

	waitvar_remove(wf, arg->id);
}

static long waitvar_destroy(struct waitvar_file *wf, void *data)
{
	struct waitvar_id *arg = data;

	if (arg->flags)
		return -EINVAL;
	return waitvar_remove(wf, arg->id);
}

static long waitvar_get_value(struct waitvar_file *wf, void *data)
{
	struct waitvar_value *arg = data;
	struct waitvar_var *var;

	if (arg->flags)
		return -EINVAL;
	var = waitvar_lookup(wf, arg->id, MAY_READ);
	if (IS_ERR(var))
		return PTR_ERR(var);
	arg->value = atomic64_read(&var->value);
	waitvar_put(var);
	return 0;
}

/*
 * Runs @update on variable @id under its lock, if it has one, when the
 * caller may write it; @update stores and wakes as it needs.
 */
static long waitvar_update(struct waitvar_file *wf, u32 id,
			   void (*update)(struct waitvar_var *var, void *arg), void *arg)
{
	struct waitvar_var *var = waitvar_lookup(wf, id, MAY_WRITE);

	if (IS_ERR(var))
		return PTR_ERR(var);
	waitvar_lock(var);
	update(var, arg);
	waitvar_unlock(var);
	waitvar_put(var);
	return 0;
}

static void waitvar_do_set(struct waitvar_var *var, void *data)
{
	struct waitvar_value *arg = data;

	atomic64_set(&var->value, arg->value);
	waitvar_wake(var);
}

static long waitvar_set_value(struct waitvar_file *wf, void *data)
{
	struct waitvar_value *arg = data;

	if (arg->flags)
		return -EINVAL;
	return waitvar_update(wf, arg->id, waitvar_do_set, arg);
}

static void waitvar_do_add(struct waitvar_var *var, void *data)
{
	struct waitvar_add *arg = data;

	arg->value = atomic64_add_return(arg->delta, &var->value);
	if (arg->flags & WAITVAR_ADD_WAKE)
		waitvar_wake(var);
}

static long waitvar_add(struct waitvar_file *wf, void *data)
{
	struct waitvar_add *arg = data;

	if (arg->flags & ~WAITVAR_ADD_WAKE)
		return -EINVAL;
	return waitvar_update(wf, arg->id, waitvar_do_add, arg);
}

static void waitvar_do_dec_and_wake(struct waitvar_var *var, void *data)
{
	struct waitvar_value *arg = data;

	arg->value = atomic64_dec_return(&var->value);
	if (!arg->value)
		waitvar_wake(var);
}

static long waitvar_dec_and_wake(struct waitvar_file *wf, void *data)
{
	struct waitvar_value *arg = data;

	if (arg->flags)
		return -EINVAL;
	return waitvar_update(wf, arg->id, waitvar_do_dec_and_wake, arg);
}

static void waitvar_do_cmpxchg(struct waitvar_var *var, void *data)
{
	struct waitvar_cmpxchg *arg = data;

	arg->prev = atomic64_cmpxchg(&var->value, arg->expected, arg->desired);
	if (arg->prev == arg->expected)
		waitvar_wake(var);
}

static long waitvar_cmpxchg(struct waitvar_file *wf, void *data)
{
	struct waitvar_cmpxchg *arg = data;

	if (arg->flags)
		return -EINVAL;
	return waitvar_update(wf, arg->id, waitvar_do_cmpxchg, arg);
}

static void waitvar_do_wake(struct waitvar_var *var, void *unused)
{
	waitvar_wake(var);
}

static long waitvar_wake_var(struct waitvar_file *wf, void *data)
{
	struct waitvar_id *arg = data;

	if (arg->flags)
		return -EINVAL;
	return waitvar_update(wf, arg->id, waitvar_do_wake, NULL);
}

static long waitvar_wake_nr(struct waitvar_file *wf, void *data)
{
	struct waitvar_wake_nr *arg = data;
	struct waitvar_var *var;
	int woken;

	if ((arg->flags & ~WAITVAR_WAKE_FILTER) || arg->nr > INT_MAX)
		return -EINVAL;
	var = waitvar_lookup(wf, arg->id, MAY_WRITE);
	if (IS_ERR(var))
		return PTR_ERR(var);
	if (arg->flags & WAITVAR_WAKE_FILTER) {
		woken = waitvar_wake_filtered(var, arg->nr);
	} else {
		atomic64_inc(&var->stats.wakes);
		/* No update to order here: the waiters recheck what is there. */
		woken = wake_up_var_nr(&var->value, arg->nr);
	}
	waitvar_put(var);
	arg->woken = woken;
	return 0;
}

/* The time a WAIT or WAITV may sleep, from its flags and timeout_ns. */
struct waitvar_timeout {
	bool timed;		/* false: no timeout */
	bool restart;		/* a signal may restart the call */
	long jiffies;
};

/*
 * Round up, and add the partial tick we start in, so that -ETIMEDOUT never
 * comes before the time has passed; no time at all is a single check.
 */
static long waitvar_ns_to_jiffies(u64 ns)
{
	u64 ticks;

	if (!ns)
		return 0;
	ticks = div64_u64(ns, TICK_NSEC);
	if (ticks >= MAX_SCHEDULE_TIMEOUT - 2)
		return MAX_SCHEDULE_TIMEOUT - 1;
	return ticks + 2;
}

static int waitvar_parse_timeout(u32 flags, u64 timeout_ns, struct waitvar_timeout *t)
{
	u32 kind = flags & WAITVAR_WAIT_TIMEOUTS;
	u64 now;

	*t = (struct waitvar_timeout){ .restart = true };
	if (!kind)
		return 0;
	if (hweight32(kind) > 1)
		return -EINVAL;
	t->timed = true;
	if (kind == WAITVAR_WAIT_TIMEOUT) {
		t->restart = false;
		t->jiffies = waitvar_ns_to_jiffies(timeout_ns);
		return 0;
	}
	now = kind == WAITVAR_WAIT_ABS_MONOTONIC ? ktime_get_ns() : ktime_get_real_ns();
	t->jiffies = waitvar_ns_to_jiffies(timeout_ns > now ? timeout_ns - now : 0);
	return 0;
}

static int waitvar_check_mode(u32 mode, const struct waitvar_timeout *t)
{
	if (mode >= WAITVAR_MODE_COUNT)
		return -EINVAL;
	if ((mode == WAITVAR_MODE_IO || mode == WAITVAR_MODE_UNINTERRUPTIBLE) && !t->timed)
		return -EINVAL;
	return 0;
}

static unsigned int waitvar_mode_state(u32 mode)
{
	switch (mode) {
	case WAITVAR_MODE_INTERRUPTIBLE:
		return TASK_INTERRUPTIBLE;
	case WAITVAR_MODE_KILLABLE:
		return TASK_KILLABLE;
	default:
		return TASK_UNINTERRUPTIBLE;
	}
}

/*
 * Turns what a wait_var_event() variant returned into 0 or an errno:
 * timed variants return 0 on timeout and the jiffies left otherwise.
 */
static long waitvar_wait_result(long ret, const struct waitvar_timeout *t)
{
	if (t->timed) {
		if (!ret)
			return -ETIMEDOUT;
		if (ret > 0)
			return 0;
	}
	if (ret == -ERESTARTSYS && !t->restart)
		return -EINTR;
	return ret;
}

/* Counts how one wait ended: ret is 0, -ETIMEDOUT, or a signal's errno. */
static void waitvar_account_end(struct waitvar_var *var, long ret)
{
	if (ret == -ETIMEDOUT)
		atomic64_inc(&var->stats.timeouts);
	else if (ret)
		atomic64_inc(&var->stats.signals);
}

/* A lock-protected variable: its condition is tested under its lock. */
static long waitvar_sleep_locked(struct waitvar_waiter *w, u32 mode,
				 const struct waitvar_timeout *t)
{
	unsigned int state = waitvar_mode_state(mode);
	struct waitvar_var *var = w->var;
	atomic64_t *v = &var->value;
	long j = t->jiffies;
	long ret;

	if (var->lock_kind == WAITVAR_LOCK_SPIN) {
		spin_lock(&var->spin);
		if (t->timed)
			ret = wait_var_event_any_lock_timeout(v, waitvar_done(w), &var->spin,
							      spin, state, j);
		else
			ret = wait_var_event_any_lock(v, waitvar_done(w), &var->spin,
						      spin, state);
		spin_unlock(&var->spin);
	} else {
		mutex_lock(&var->mutex);
		if (t->timed)
			ret = wait_var_event_any_lock_timeout(v, waitvar_done(w), &var->mutex,
							      mutex, state, j);
		else
			ret = wait_var_event_any_lock(v, waitvar_done(w), &var->mutex,
						      mutex, state);
		mutex_unlock(&var->mutex);
	}
	return ret;
}

/* One wait_var_event() variant per mode, exclusivity and timeout. */
static long waitvar_sleep(struct waitvar_waiter *w, u32 mode, const struct waitvar_timeout *t)
{
	atomic64_t *v = &w->var->value;
	long j = t->jiffies;

	if (w->var->lock_kind != WAITVAR_LOCK_NONE)
		return waitvar_sleep_locked(w, mode, t);

	switch (mode) {
	case WAITVAR_MODE_INTERRUPTIBLE:
		if (!t->timed)
			return w->exclusive ?
			       wait_var_event_exclusive_interruptible(v, waitvar_done(w)) :
			       wait_var_event_interruptible(v, waitvar_done(w));
		return w->exclusive ?
		       wait_var_event_exclusive_interruptible_timeout(v, waitvar_done(w), j) :
		       wait_var_event_interruptible_timeout(v, waitvar_done(w), j);
	case WAITVAR_MODE_KILLABLE:
		if (!t->timed)
			return w->exclusive ?
			       wait_var_event_exclusive_killable(v, waitvar_done(w)) :
			       wait_var_event_killable(v, waitvar_done(w));
		return w->exclusive ?
		       wait_var_event_exclusive_killable_timeout(v, waitvar_done(w), j) :
		       wait_var_event_killable_timeout(v, waitvar_done(w), j);
	case WAITVAR_MODE_IO:
		return w->exclusive ?
		       wait_var_event_exclusive_io_timeout(v, waitvar_done(w), j) :
		       wait_var_event_io_timeout(v, waitvar_done(w), j);
	default:
		return w->exclusive ?
		       wait_var_event_exclusive_timeout(v, waitvar_done(w), j) :
		       wait_var_event_timeout(v, waitvar_done(w), j);
	}
}

static long waitvar_wait(struct waitvar_file *wf, void *data)
{
	struct waitvar_wait *arg = data;
	struct waitvar_waiter w = {};
	struct waitvar_timeout t;
	long ret;

	if ((arg->flags & ~WAITVAR_WAIT_FLAGS) || arg->op >= WAITVAR_OP_COUNT)
		return -EINVAL;
	ret = waitvar_parse_timeout(arg->flags, arg->timeout_ns, &t);
	if (!ret)
		ret = waitvar_check_mode(arg->mode, &t);
	if (ret)
		return ret;
	w.exclusive = arg->flags & WAITVAR_WAIT_EXCLUSIVE;
	w.var = waitvar_lookup(wf, arg->id, MAY_READ);
	if (IS_ERR(w.var))
		return PTR_ERR(w.var);
	if (w.var->lock_kind != WAITVAR_LOCK_NONE &&
	    (w.exclusive || arg->mode == WAITVAR_MODE_IO)) {
		waitvar_put(w.var);
		return -EINVAL;
	}
	w.op = arg->op;
	w.operand = arg->operand;
	w.task = current;

	atomic64_inc(&w.var->stats.waits);
	waitvar_list_waiter(&w);
	ret = waitvar_wait_result(waitvar_sleep(&w, arg->mode, &t), &t);
	waitvar_unlist_waiter(&w);
	waitvar_account_end(w.var, ret);
	if (ret && w.evals > 2) {
		/* The last test followed the timeout or a signal, not a wake. */
		atomic64_dec(&w.var->stats.woken);
		atomic64_dec(&w.var->stats.spurious);
	}
	waitvar_put(w.var);

	if (ret)
		return ret;
	if (w.dead)
		return -EIDRM;
	arg->value = w.value;
	return 0;
}

/* One entry of a WAITV: its waiter and its entry on the variable's queue. */
struct waitvar_vwait {
	struct waitvar_waiter w;
	struct wait_bit_queue_entry wbq;
	struct wait_queue_head *wq_head;
	bool woken;
};

/* The index of the first entry that holds (or whose variable died), or -1. */
static int waitvar_waitv_first(struct waitvar_vwait *vw, u32 count)
{
	u32 i;

	for (i = 0; i < count; i++)
		if (waitvar_test(&vw[i].w))
			return i;
	return -1;
}

/*
 * The loop of ___wait_var_event() over several queues: queue on every
 * variable's hashed wait queue, test every condition, sleep, repeat.  A
 * wake of one variable removes only that entry (autoremove), so the loop
 * can tell which variables woke it.
 */
static long waitvar_waitv_sleep(struct waitvar_vwait *vw, u32 count, u32 mode,
				const struct waitvar_timeout *t, int *index)
{
	unsigned int state = waitvar_mode_state(mode);
	long left = t->timed ? t->jiffies : MAX_SCHEDULE_TIMEOUT;
	bool slept = false;
	long ret = 0;
	u32 i;

	for (i = 0; i < count; i++) {
		init_wait_var_entry(&vw[i].wbq, &vw[i].w.var->value, 0);
		vw[i].wq_head = __var_waitqueue(&vw[i].w.var->value);
	}

	*index = waitvar_waitv_first(vw, count);
	while (*index < 0) {
		long intr = 0;

		for (i = 0; i < count && !intr; i++)
			intr = prepare_to_wait_event(vw[i].wq_head, &vw[i].wbq.wq_entry, state);
		*index = waitvar_waitv_first(vw, count);
		for (i = 0; slept && i < count; i++) {
			if (!vw[i].woken)
				continue;
			atomic64_inc(&vw[i].w.var->stats.woken);
			if (*index < 0)
				atomic64_inc(&vw[i].w.var->stats.spurious);
		}
		if (*index >= 0)
			break;
		if (intr) {
			ret = intr;
			break;
		}
		if (!left) {
			ret = -ETIMEDOUT;
			break;
		}
		if (mode == WAITVAR_MODE_IO)
			left = io_schedule_timeout(left);
		else
			left = schedule_timeout(left);
		slept = true;
		for (i = 0; i < count; i++)
			vw[i].woken = list_empty_careful(&vw[i].wbq.wq_entry.entry) ||
				      xchg(&vw[i].w.kicked, false);
	}
	__set_current_state(TASK_RUNNING);
	for (i = 0; i < count; i++)
		finish_wait(vw[i].wq_head, &vw[i].wbq.wq_entry);
	return ret;
}

static long waitvar_waitv_run(struct waitvar_file *wf, struct waitvar_waitv *arg,
			      struct waitvar_waitv_entry *e, struct waitvar_vwait *vw,
			      const struct waitvar_timeout *t)
{
	int index = -1;
	u32 i, got;
	long ret = 0;

	for (got = 0; got < arg->count; got++) {
		if (e[got].op >= WAITVAR_OP_COUNT || e[got].flags || e[got].reserved) {
			ret = -EINVAL;
			goto put;
		}
		vw[got].w.var = waitvar_lookup(wf, e[got].id, MAY_READ);
		if (IS_ERR(vw[got].w.var)) {
			ret = PTR_ERR(vw[got].w.var);
			goto put;
		}
		vw[got].w.op = e[got].op;
		vw[got].w.operand = e[got].operand;
		vw[got].w.task = current;
	}

	for (i = 0; i < got; i++) {
		atomic64_inc(&vw[i].w.var->stats.waits);
		waitvar_list_waiter(&vw[i].w);
	}
	ret = waitvar_waitv_sleep(vw, got, arg->mode, t, &index);
	if (ret == -ERESTARTSYS && !t->restart)
		ret = -EINTR;
	for (i = 0; i < got; i++) {
		waitvar_unlist_waiter(&vw[i].w);
		waitvar_account_end(vw[i].w.var, ret);
	}
	if (!ret && vw[index].w.dead)
		ret = -EIDRM;
	if (!ret) {
		arg->index = index;
		arg->value = vw[index].w.value;
	}
put:
	for (i = 0; i < got; i++)
		waitvar_put(vw[i].w.var);
	return ret;
}

static long waitvar_waitv(struct waitvar_file *wf, void *data)
{
	struct waitvar_waitv *arg = data;
	struct waitvar_waitv_entry *e;
	struct waitvar_vwait *vw;
	struct waitvar_timeout t;
	long ret;

	if ((arg->flags & ~WAITVAR_WAIT_TIMEOUTS) || !arg->count ||
	    arg->count > WAITVAR_WAITV_MAX)
		return -EINVAL;
	ret = waitvar_parse_timeout(arg->flags, arg->timeout_ns, &t);
	if (!ret)
		ret = waitvar_check_mode(arg->mode, &t);
	if (ret)
		return ret;

	e = memdup_user(u64_to_user_ptr(arg->entries), array_size(arg->count, sizeof(*e)));
	if (IS_ERR(e))
		return PTR_ERR(e);
	vw = kvcalloc(arg->count, sizeof(*vw), GFP_KERNEL_ACCOUNT);
	if (vw)
		ret = waitvar_waitv_run(wf, arg, e, vw, &t);
	else
		ret = -ENOMEM;
	kvfree(vw);
	kfree(e);
	return ret;
}

/* Runs in the waker, under the hashed queue's lock: no sleeping here. */
static int waitvar_watch_wake(struct wait_queue_entry *wq_entry, unsigned int mode,
			      int sync, void *arg)
{
	struct waitvar_watch_file *watch = container_of(wq_entry, struct waitvar_watch_file,
							wbq.wq_entry);
	struct wait_bit_key *key = arg;

	if (key && (watch->wbq.key.flags != key->flags ||
		    watch->wbq.key.bit_nr != key->bit_nr))
		return 0;
	if (READ_ONCE(watch->w.var->dead))
		wake_up_interruptible_poll(&watch->pollq, EPOLLERR | EPOLLHUP);
	else if (waitvar_holds(&watch->w))
		wake_up_interruptible_poll(&watch->pollq, EPOLLIN | EPOLLRDNORM);
	return 0;
}

static __poll_t waitvar_watch_poll(struct file *file, poll_table *pt)
{
	struct waitvar_watch_file *watch = file->private_data;

	poll_wait(file, &watch->pollq, pt);
	if (READ_ONCE(watch->w.var->dead))
		return EPOLLERR | EPOLLHUP;
	return waitvar_holds(&watch->w) ? EPOLLIN | EPOLLRDNORM : 0;
}

/* 0 with the value if the condition holds, -EAGAIN if not, -EIDRM. */
static int waitvar_watch_state(struct waitvar_watch_file *watch, u64 *value)
{
	if (READ_ONCE(watch->w.var->dead))
		return -EIDRM;
	*value = atomic64_read(&watch->w.var->value);
	return waitvar_op_holds(watch->w.op, *value, watch->w.operand) ? 0 : -EAGAIN;
}

static ssize_t waitvar_watch_read(struct file *file, char __user *buf, size_t len,
				  loff_t *ppos)
{
	struct waitvar_watch_file *watch = file->private_data;
	u64 value;
	int ret;

	if (len < sizeof(u64))
		return -EINVAL;
	ret = waitvar_watch_state(watch, &value);
	if (ret == -EAGAIN && !(file->f_flags & O_NONBLOCK)) {
		int intr;

		intr = wait_event_interruptible(watch->pollq,
						(ret = waitvar_watch_state(watch, &value)) !=
						-EAGAIN);
		if (intr)
			return intr;
	}
	if (ret)
		return ret;
	if (put_user(value, (u64 __user *)buf))
		return -EFAULT;
	return sizeof(u64);
}

static int waitvar_watch_release(struct inode *inode, struct file *file)
{
	struct waitvar_watch_file *watch = file->private_data;
	struct waitvar_var *var = watch->w.var;

	remove_wait_queue(__var_waitqueue(&var->value), &watch->wbq.wq_entry);
	waitvar_unlist_waiter(&watch->w);
	waitvar_put(var);
	kfree(watch);
	return 0;
}

static const struct file_operations waitvar_watch_fops = {
	.owner		= THIS_MODULE,
	.poll		= waitvar_watch_poll,
	.read		= waitvar_watch_read,
	.release	= waitvar_watch_release,
	.llseek		= noop_llseek,
};

/* The argument of any command, and what a handler leaves for its commit. */
struct waitvar_args {
	union {
		struct waitvar_create create;
		struct waitvar_id id;
		struct waitvar_value value;
		struct waitvar_wait wait;
		struct waitvar_wake_nr wake_nr;
		struct waitvar_add add;
		struct waitvar_cmpxchg cmpxchg;
		struct waitvar_waitv waitv;
		struct waitvar_watch watch;
		struct waitvar_stats stats;
		struct waitvar_named named;
		struct waitvar_list list;
	};
	struct file *file;	/* WATCH: installed once the fd reached userspace */
};

static long waitvar_watch(struct waitvar_file *wf, void *data)
{
	struct waitvar_args *args = data;
	struct waitvar_watch *arg = &args->watch;
	struct waitvar_watch_file *watch;
	struct file *file;
	int fd;

	if (arg->flags || arg->op >= WAITVAR_OP_COUNT)
		return -EINVAL;
	watch = kzalloc(sizeof(*watch), GFP_KERNEL_ACCOUNT);
	if (!watch)
		return -ENOMEM;
	watch->w.var = waitvar_lookup(wf, arg->id, MAY_READ);
	if (IS_ERR(watch->w.var)) {
		fd = PTR_ERR(watch->w.var);
		kfree(watch);
		return fd;
	}
	watch->w.op = arg->op;
	watch->w.operand = arg->operand;
	watch->w.watch = watch;
	init_waitqueue_head(&watch->pollq);
	init_wait_var_entry(&watch->wbq, &watch->w.var->value, 0);
	watch->wbq.wq_entry.func = waitvar_watch_wake;

	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0)
		goto fail;
	file = anon_inode_getfile("[waitvar-watch]", &waitvar_watch_fops, watch,
				  O_RDONLY | O_CLOEXEC);
	if (IS_ERR(file)) {
		put_unused_fd(fd);
		fd = PTR_ERR(file);
		goto fail;
	}
	waitvar_list_waiter(&watch->w);
	add_wait_queue(__var_waitqueue(&watch->w.var->value), &watch->wbq.wq_entry);
	args->file = file;
	arg->fd = fd;
	return 0;
fail:
	waitvar_put(watch->w.var);
	kfree(watch);
	return fd;
}

static void waitvar_watch_commit(struct waitvar_file *wf, void *data)
{
	struct waitvar_args *args = data;

	fd_install(args->watch.fd, args->file);
}

static void waitvar_watch_undo(struct waitvar_file *wf, void *data)
{
	struct waitvar_args *args = data;

	put_unused_fd(args->watch.fd);
	fput(args->file);
}

static long waitvar_stats(struct waitvar_file *wf, void *data)
{
	struct waitvar_stats *arg = data;
	struct waitvar_counters *c;
	struct waitvar_var *var;

	if (arg->flags)
		return -EINVAL;
	var = waitvar_lookup(wf, arg->id, MAY_READ);
	if (IS_ERR(var))
		return PTR_ERR(var);
	c = &var->stats;
	arg->waiters = READ_ONCE(var->nr_waiters);
	arg->bucket = var_waitqueue_index(&var->value);
	arg->waits = atomic64_read(&c->waits);
	arg->wakes = atomic64_read(&c->wakes);
	arg->woken = atomic64_read(&c->woken);
	arg->spurious = atomic64_read(&c->spurious);
	arg->timeouts = atomic64_read(&c->timeouts);
	arg->signals = atomic64_read(&c->signals);
	waitvar_put(var);
	return 0;
}

/* A name is "/" and 1 to WAITVAR_NAME_MAX - 2 of [A-Za-z0-9._-]. */
static bool waitvar_name_ok(const char *name)
{
	size_t len = strnlen(name, WAITVAR_NAME_MAX), i;

	if (len < 2 || len == WAITVAR_NAME_MAX || name[0] != '/')
		return false;
	for (i = 1; i < len; i++)
		if (!isalnum(name[i]) && !strchr("._-", name[i]))
			return false;
	return true;
}

static struct waitvar_var *waitvar_find_name(const char *name)
{
	struct waitvar_var *var;

	lockdep_assert_held(&waitvar_names_lock);
	list_for_each_entry(var, &waitvar_names, name_node)
		if (!strcmp(var->name, name))
			return var;
	return NULL;
}

/* Takes @var off the names: it dies, its waiters see -EIDRM. */
static void waitvar_unlink(struct waitvar_var *var)
{
	lockdep_assert_held(&waitvar_names_lock);
	list_del_init(&var->name_node);
	waitvar_nr_named--;
	waitvar_kill(var);
	waitvar_put(var);
}

static long waitvar_named_create(struct waitvar_file *wf, void *data)
{
	struct waitvar_named *arg = data;
	struct waitvar_var *var;
	int ret;

	if (waitvar_create_flags_bad(arg->flags) || (arg->mode & ~0777U) || arg->id ||
	    arg->reserved || !waitvar_name_ok(arg->name))
		return -EINVAL;
	var = waitvar_new(arg->value, arg->flags);
	if (!var)
		return -ENOMEM;
	var->named = true;
	var->uid = current_fsuid();
	var->gid = current_fsgid();
	var->mode = arg->mode;
	strscpy(var->name, arg->name, sizeof(var->name));

	mutex_lock(&waitvar_names_lock);
	if (waitvar_find_name(arg->name))
		ret = -EEXIST;
	else if (waitvar_nr_named >= READ_ONCE(max_named_vars))
		ret = -ENOSPC;
	else
		ret = waitvar_attach(wf, var, &arg->id);
	if (!ret) {
		/* The names' reference is the one waitvar_new() returned. */
		list_add_tail(&var->name_node, &waitvar_names);
		waitvar_nr_named++;
	}
	mutex_unlock(&waitvar_names_lock);
	if (ret)
		waitvar_put(var);
	return ret;
}

static void waitvar_named_create_undo(struct waitvar_file *wf, void *data)
{
	struct waitvar_named *arg = data;
	struct waitvar_var *var = xa_load(&wf->vars, arg->id);

	mutex_lock(&waitvar_names_lock);
	if (var && !list_empty(&var->name_node))
		waitvar_unlink(var);
	mutex_unlock(&waitvar_names_lock);
	waitvar_remove(wf, arg->id);
}

static long waitvar_named_open(struct waitvar_file *wf, void *data)
{
	struct waitvar_named *arg = data;
	struct waitvar_var *var;
	int ret;

	if (arg->flags || arg->mode || arg->value || arg->id || arg->reserved ||
	    !waitvar_name_ok(arg->name))
		return -EINVAL;
	mutex_lock(&waitvar_names_lock);
	var = waitvar_find_name(arg->name);
	if (!var)
		ret = -ENOENT;
	else if (!waitvar_permitted(var, MAY_READ))
		ret = -EACCES;
	else
		ret = waitvar_attach(wf, var, &arg->id);
	mutex_unlock(&waitvar_names_lock);
	return ret;
}

static void waitvar_named_open_undo(struct waitvar_file *wf, void *data)
{
	struct waitvar_named *arg = data;

	waitvar_remove(wf, arg->id);
}

static long waitvar_named_remove(struct waitvar_file *wf, void *data)
{
	struct waitvar_named *arg = data;
	struct waitvar_var *var;
	int ret = 0;

	if (arg->flags || arg->mode || arg->value || arg->id || arg->reserved ||
	    !waitvar_name_ok(arg->name))
		return -EINVAL;
	mutex_lock(&waitvar_names_lock);
	var = waitvar_find_name(arg->name);
	if (!var)
		ret = -ENOENT;
	else if (!waitvar_permitted(var, MAY_WRITE))
		ret = -EACCES;
	else
		waitvar_unlink(var);
	mutex_unlock(&waitvar_names_lock);
	return ret;
}

static long waitvar_list(struct waitvar_file *wf, void *data)
{
	struct waitvar_list *arg = data;
	char __user *buf = u64_to_user_ptr(arg->names);
	struct waitvar_var *var;
	u32 used = 0, needed = 0, count = 0;
	int ret = 0;

	if (arg->flags || arg->count || arg->needed)
		return -EINVAL;
	mutex_lock(&waitvar_names_lock);
	list_for_each_entry(var, &waitvar_names, name_node) {
		u32 len = strlen(var->name) + 1;

		if (!waitvar_permitted(var, MAY_READ))
			continue;
		needed += len;
		if (used + len > arg->size)
			continue;
		if (copy_to_user(buf + used, var->name, len)) {
			ret = -EFAULT;
			break;
		}
		used += len;
		count++;
	}
	mutex_unlock(&waitvar_names_lock);
	arg->count = count;
	arg->needed = needed;
	return ret;
}

/*
 * Every command, by _IOC_NR(): its handler works on a kernel copy of the
 * argument; commit runs once the result reached userspace, undo if it
 * could not be copied out.
 */
static const struct {
	unsigned int cmd;
	long (*handler)(struct waitvar_file *wf, void *arg);
	void (*commit)(struct waitvar_file *wf, void *arg);
	void (*undo)(struct waitvar_file *wf, void *arg);
} waitvar_ioctls[] = {
	[_IOC_NR(WAITVAR_IOC_CREATE)] = { WAITVAR_IOC_CREATE, waitvar_create,
					  NULL, waitvar_create_undo },
	[_IOC_NR(WAITVAR_IOC_DESTROY)] = { WAITVAR_IOC_DESTROY, waitvar_destroy },
	[_IOC_NR(WAITVAR_IOC_GET)] = { WAITVAR_IOC_GET, waitvar_get_value },
	[_IOC_NR(WAITVAR_IOC_SET)] = { WAITVAR_IOC_SET, waitvar_set_value },
	[_IOC_NR(WAITVAR_IOC_WAIT)] = { WAITVAR_IOC_WAIT, waitvar_wait },
	[_IOC_NR(WAITVAR_IOC_WAKE)] = { WAITVAR_IOC_WAKE, waitvar_wake_var },
	[_IOC_NR(WAITVAR_IOC_WAKE_NR)] = { WAITVAR_IOC_WAKE_NR, waitvar_wake_nr },
	[_IOC_NR(WAITVAR_IOC_ADD)] = { WAITVAR_IOC_ADD, waitvar_add },
	[_IOC_NR(WAITVAR_IOC_DEC_AND_WAKE)] = { WAITVAR_IOC_DEC_AND_WAKE, waitvar_dec_and_wake },
	[_IOC_NR(WAITVAR_IOC_CMPXCHG)] = { WAITVAR_IOC_CMPXCHG, waitvar_cmpxchg },
	[_IOC_NR(WAITVAR_IOC_WAITV)] = { WAITVAR_IOC_WAITV, waitvar_waitv },
	[_IOC_NR(WAITVAR_IOC_WATCH)] = { WAITVAR_IOC_WATCH, waitvar_watch,
					 waitvar_watch_commit, waitvar_watch_undo },
	[_IOC_NR(WAITVAR_IOC_STATS)] = { WAITVAR_IOC_STATS, waitvar_stats },
	[_IOC_NR(WAITVAR_IOC_NAMED_CREATE)] = { WAITVAR_IOC_NAMED_CREATE, waitvar_named_create,
						NULL, waitvar_named_create_undo },
	[_IOC_NR(WAITVAR_IOC_NAMED_OPEN)] = { WAITVAR_IOC_NAMED_OPEN, waitvar_named_open,
					      NULL, waitvar_named_open_undo },
	[_IOC_NR(WAITVAR_IOC_NAMED_REMOVE)] = { WAITVAR_IOC_NAMED_REMOVE, waitvar_named_remove },
	[_IOC_NR(WAITVAR_IOC_LIST)] = { WAITVAR_IOC_LIST, waitvar_list },
};

static long waitvar_ioctl(struct file *file, unsigned int cmd,
			  unsigned long uarg)
{
	struct waitvar_file *wf = file->private_data;
	void __user *up = (void __user *)uarg;
	unsigned int nr = _IOC_NR(cmd);
	struct waitvar_args arg;
	long ret;

	if (_IOC_TYPE(cmd) != WAITVAR_IOC_MAGIC || nr >= ARRAY_SIZE(waitvar_ioctls))
		return -ENOTTY;
	nr = array_index_nospec(nr, ARRAY_SIZE(waitvar_ioctls));
	if (!waitvar_ioctls[nr].handler || waitvar_ioctls[nr].cmd != cmd)
		return -ENOTTY;
	if (WARN_ON_ONCE(_IOC_SIZE(cmd) > sizeof(arg)))
		return -ENOTTY;

	if (copy_from_user(&arg, up, _IOC_SIZE(cmd)))
		return -EFAULT;
	ret = waitvar_ioctls[nr].handler(wf, &arg);
	if (ret || !(_IOC_DIR(cmd) & _IOC_READ))
		return ret;
	if (copy_to_user(up, &arg, _IOC_SIZE(cmd))) {
		/* Nothing userspace cannot name may stay behind. */
		if (waitvar_ioctls[nr].undo)
			waitvar_ioctls[nr].undo(wf, &arg);
		return -EFAULT;
	}
	if (waitvar_ioctls[nr].commit)
		waitvar_ioctls[nr].commit(wf, &arg);
	return 0;
}

static const char *const waitvar_lock_names[] = {
	[WAITVAR_LOCK_NONE] = "none",
	[WAITVAR_LOCK_SPIN] = "spinlock",
	[WAITVAR_LOCK_MUTEX] = "mutex",
};

static void waitvar_show_var(struct seq_file *m, unsigned long id, struct waitvar_var *var)
{
	struct waitvar_counters *c = &var->stats;

	seq_printf(m, "%lu %llu %s %u %u %lld %lld %lld %lld %lld %lld",
		   id, (u64)atomic64_read(&var->value),
		   waitvar_lock_names[var->lock_kind], READ_ONCE(var->nr_waiters),
		   var_waitqueue_index(&var->value), atomic64_read(&c->waits),
		   atomic64_read(&c->wakes), atomic64_read(&c->woken),
		   atomic64_read(&c->spurious), atomic64_read(&c->timeouts),
		   atomic64_read(&c->signals));
	if (var->named)
		seq_printf(m, " %s", var->name);
	seq_putc(m, '\n');
}

/* One open file: its variables, one per line.  Freed only after RCU. */
static int waitvar_file_show(struct seq_file *m, void *unused)
{
	struct waitvar_file *wf = m->private;
	struct waitvar_var *var;
	unsigned long id;

	seq_printf(m, "owner %d\n", wf->owner);
	seq_puts(m, "id value lock waiters bucket waits wakes woken spurious timeouts signals [name]\n");
	rcu_read_lock();
	xa_for_each(&wf->vars, id, var)
		waitvar_show_var(m, id, var);
	rcu_read_unlock();
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(waitvar_file);

static int waitvar_summary_show(struct seq_file *m, void *unused)
{
	u64 vars = 0, waiters = 0, waits = 0, wakes = 0, woken = 0, spurious = 0;
	struct waitvar_file *wf;
	struct waitvar_var *var;
	unsigned int files = 0;
	unsigned long id;

	mutex_lock(&waitvar_files_lock);
	list_for_each_entry(wf, &waitvar_files, node) {
		files++;
		rcu_read_lock();
		xa_for_each(&wf->vars, id, var) {
			vars++;
			waiters += READ_ONCE(var->nr_waiters);
			waits += atomic64_read(&var->stats.waits);
			wakes += atomic64_read(&var->stats.wakes);
			woken += atomic64_read(&var->stats.woken);
			spurious += atomic64_read(&var->stats.spurious);
		}
		rcu_read_unlock();
	}
	mutex_unlock(&waitvar_files_lock);
	seq_printf(m, "files %u\nvariables %llu\nwaiters %llu\n", files, vars, waiters);
	seq_printf(m, "waits %llu\nwakes %llu\nwoken %llu\nspurious %llu\n",
		   waits, wakes, woken, spurious);

	mutex_lock(&waitvar_names_lock);
	seq_printf(m, "named %u\n", waitvar_nr_named);
	list_for_each_entry(var, &waitvar_names, name_node)
		seq_printf(m, "  %s uid %u gid %u mode %04o value %llu waiters %u\n", var->name,
			   from_kuid(&init_user_ns, var->uid), from_kgid(&init_user_ns, var->gid),
			   var->mode, (u64)atomic64_read(&var->value), READ_ONCE(var->nr_waiters));
	mutex_unlock(&waitvar_names_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(waitvar_summary);

static int waitvar_open(struct inode *inode, struct file *file)
{
	struct waitvar_file *wf;
	char name[16];

	wf = kzalloc(sizeof(*wf), GFP_KERNEL_ACCOUNT);
	if (!wf)
		return -ENOMEM;
	xa_init_flags(&wf->vars, XA_FLAGS_ALLOC1);
	wf->owner = task_tgid_vnr(current);

	mutex_lock(&waitvar_files_lock);
	wf->serial = waitvar_next_serial++;
	list_add_tail(&wf->node, &waitvar_files);
	mutex_unlock(&waitvar_files_lock);
	snprintf(name, sizeof(name), "file%u", wf->serial);
	wf->dentry = debugfs_create_file(name, 0444, waitvar_debugfs, wf, &waitvar_file_fops);

	file->private_data = wf;
	return 0;
}

/*
 * No ioctl is in flight on a released file, so no task waits on its
 * variables; WATCH descriptors may still hold some, and see them die.
 */
static int waitvar_release(struct inode *inode, struct file *file)
{
	struct waitvar_file *wf = file->private_data;
	struct waitvar_var *var;
	unsigned long id;

	/* Drains the readers of the debugfs file. */
	debugfs_remove(wf->dentry);
	mutex_lock(&waitvar_files_lock);
	list_del(&wf->node);
	mutex_unlock(&waitvar_files_lock);

	xa_for_each(&wf->vars, id, var)
		waitvar_remove(wf, id);
	xa_destroy(&wf->vars);
	kfree(wf);
	return 0;
}

static const struct file_operations waitvar_fops = {
	.owner		= THIS_MODULE,
	.open		= waitvar_open,
	.release	= waitvar_release,
	.unlocked_ioctl	= waitvar_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
};

static struct miscdevice waitvar_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "waitvar",
	.fops	= &waitvar_fops,
	.mode	= 0666,
};

static int __init waitvar_init(void)
{
	int ret;

	waitvar_debugfs = debugfs_create_dir("waitvar", NULL);
	debugfs_create_file("summary", 0444, waitvar_debugfs, NULL, &waitvar_summary_fops);
	ret = misc_register(&waitvar_misc);
	if (ret)
		debugfs_remove(waitvar_debugfs);
	return ret;
}

static void __exit waitvar_exit(void)
{
	struct waitvar_var *var, *next;

	misc_deregister(&waitvar_misc);
	debugfs_remove(waitvar_debugfs);
	/* No file is open: the names hold the last references. */
	mutex_lock(&waitvar_names_lock);
	list_for_each_entry_safe(var, next, &waitvar_names, name_node)
		waitvar_unlink(var);
	mutex_unlock(&waitvar_names_lock);
}

module_init(waitvar_init);
module_exit(waitvar_exit);

MODULE_DESCRIPTION("Kernel-side variables driven by wait_var_event() from userspace");
MODULE_AUTHOR("waitvar <waitvar@example.org>");
MODULE_LICENSE("GPL");
