// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/waitvar variables: their lifetime, lookups and permissions, the
 * commands that update and wake them, and the list of waiters a filtered
 * wake walks.  Rules: internal.h.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/user_namespace.h>
#include <linux/wait_bit.h>

#include "internal.h"

static unsigned int max_vars_per_file = 1024;
module_param(max_vars_per_file, uint, 0644);
MODULE_PARM_DESC(max_vars_per_file, "Most variables one open file may hold");

unsigned int waitvar_max_vars_per_file(void)
{
	return READ_ONCE(max_vars_per_file);
}

bool waitvar_create_flags_bad(u32 flags)
{
	return (flags & ~WAITVAR_CREATE_LOCKS) ||
	       (flags & WAITVAR_CREATE_LOCKS) == WAITVAR_CREATE_LOCKS;
}

/*
 * A new variable, charged to the caller's memory cgroup and to @owner's
 * max_user_vars: -ENOSPC, -ENOMEM.
 */
struct waitvar_var *waitvar_var_new(struct waitvar_user *owner, u64 value, u32 flags)
{
	struct waitvar_var *var;
	int ret;

	ret = waitvar_charge(owner, WAITVAR_CHARGE_VARS, 1);
	if (ret)
		return ERR_PTR(ret);
	var = kzalloc(sizeof(*var), GFP_KERNEL_ACCOUNT);
	if (!var) {
		waitvar_uncharge(owner, WAITVAR_CHARGE_VARS, 1);
		return ERR_PTR(-ENOMEM);
	}
	var->owner = waitvar_user_hold(owner);
	atomic64_set(&var->value, value);
	if (flags & WAITVAR_CREATE_SPINLOCK)
		var->lock_kind = WAITVAR_LOCK_SPIN;
	else if (flags & WAITVAR_CREATE_MUTEX)
		var->lock_kind = WAITVAR_LOCK_MUTEX;
	spin_lock_init(&var->spin);
	mutex_init(&var->mutex);
	spin_lock_init(&var->waiters_lock);
	INIT_LIST_HEAD(&var->waiters);
	INIT_LIST_HEAD(&var->watches);
	INIT_LIST_HEAD(&var->name_node);
	kref_init(&var->ref);
	return var;
}

static void waitvar_var_free(struct kref *ref)
{
	struct waitvar_var *var = container_of(ref, struct waitvar_var, ref);

	if (var->user_ns)
		put_user_ns(var->user_ns);
	waitvar_uncharge(var->owner, WAITVAR_CHARGE_VARS, 1);
	waitvar_user_put(var->owner);
	mutex_destroy(&var->mutex);
	kfree_rcu(var, rcu);
}

void waitvar_var_put(struct waitvar_var *var)
{
	kref_put(&var->ref, waitvar_var_free);
}

static struct waitvar_var *waitvar_var_get(struct waitvar_file *wf, u32 id)
{
	struct waitvar_var *var;

	rcu_read_lock();
	var = xa_load(&wf->vars, id);
	if (var && !kref_get_unless_zero(&var->ref))
		var = NULL;
	rcu_read_unlock();
	return var;
}

/*
 * Named variables: mode bits for owner, group and others; then, as for an
 * inode (capable_wrt_inode_uidgid()), CAP_DAC_OVERRIDE in the caller's
 * user namespace, and only if that namespace maps the owner and the group:
 * a namespace's root must not reach what a user it cannot name made.
 */
static bool waitvar_may(struct waitvar_var *var, int may, bool audit)
{
	struct user_namespace *ns = current_user_ns();
	umode_t mode = var->mode;

	if (uid_eq(current_fsuid(), var->uid))
		mode >>= 6;
	else if (in_group_p(var->gid))
		mode >>= 3;
	if ((mode & may & 7) == may)
		return true;
	if (!kuid_has_mapping(ns, var->uid) || !kgid_has_mapping(ns, var->gid))
		return false;
	return audit ? ns_capable(ns, CAP_DAC_OVERRIDE) :
		       ns_capable_noaudit(ns, CAP_DAC_OVERRIDE);
}

bool waitvar_permitted(struct waitvar_var *var, int may)
{
	return waitvar_may(var, may, true);
}

/*
 * LIST's filter: a name left out of a listing is no access refused, so an
 * LSM must not log a capability denial for each name hidden.
 */
bool waitvar_listable(struct waitvar_var *var)
{
	return waitvar_may(var, MAY_READ, false);
}

/*
 * The variable @id of @wf, if the caller may access it as @may asks: an id
 * still attached to a removed named variable only reports -EIDRM; one that
 * a racing DESTROY took away reports -ENOENT, as it would a moment later.
 */
struct waitvar_var *waitvar_var_lookup(struct waitvar_file *wf, u32 id, int may)
{
	struct waitvar_var *var = waitvar_var_get(wf, id);

	if (!var)
		return ERR_PTR(-ENOENT);
	if (READ_ONCE(var->dead)) {
		int err = var->named ? -EIDRM : -ENOENT;

		waitvar_var_put(var);
		return ERR_PTR(err);
	}
	if (var->named && !waitvar_permitted(var, may)) {
		waitvar_var_put(var);
		return ERR_PTR(-EACCES);
	}
	return var;
}

/*
 * Reserves an id of @wf: nobody can see or take it until waitvar_publish()
 * stores the call's variable in it or waitvar_unreserve() gives it back.
 * Ids are handed out cyclically, as pids are: a freed id comes back only
 * after every other one up to max_vars_per_file, so a stale id does not
 * at once name the next variable made.
 */
int waitvar_reserve(struct waitvar_file *wf, u32 *id)
{
	int ret;

	ret = xa_alloc_cyclic(&wf->vars, id, NULL, XA_LIMIT(1, READ_ONCE(max_vars_per_file)),
			      &wf->next_id, GFP_KERNEL_ACCOUNT);
	if (ret == -EBUSY)
		return -ENOSPC;
	/* 1: the search wrapped, which is not an error. */
	return ret < 0 ? ret : 0;
}

/* The id reached userspace: the call's reference becomes the file's. */
void waitvar_publish(struct waitvar_file *wf, u32 id, struct waitvar_call *call)
{
	/* Fills a reserved slot: no allocation, so no failure. */
	WARN_ON_ONCE(xa_is_err(xa_store(&wf->vars, id, call->var, GFP_KERNEL)));
}

/* The id did not reach userspace, or the call failed: only its own slot goes. */
void waitvar_unreserve(struct waitvar_file *wf, u32 id, struct waitvar_call *call)
{
	xa_release(&wf->vars, id);
	if (call->var)
		waitvar_var_put(call->var);
}

static void waitvar_notify_watches(struct waitvar_var *var);

/* Ends a variable: every waiter sees -EIDRM, exclusive ones included. */
void waitvar_var_end(struct waitvar_var *var)
{
	WRITE_ONCE(var->dead, true);
	/* Orders the store before wake_up_var_all()'s waiter check. */
	smp_mb();
	wake_up_var_all(&var->value);
	waitvar_notify_watches(var);
}

/*
 * Drops @id from @wf: a variable of the file dies, a named one lives on.
 * A reserved id loads as NULL and stays reserved.
 */
int waitvar_detach(struct waitvar_file *wf, u32 id)
{
	struct waitvar_var *var;

	xa_lock(&wf->vars);
	var = xa_load(&wf->vars, id);
	if (var)
		__xa_erase(&wf->vars, id);
	xa_unlock(&wf->vars);
	if (!var)
		return -ENOENT;
	if (!var->named)
		waitvar_var_end(var);
	waitvar_var_put(var);
	return 0;
}

bool waitvar_op_holds(u32 op, u64 value, u64 operand)
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

bool waitvar_holds(struct waitvar_waiter *w)
{
	return waitvar_op_holds(w->op, atomic64_read(&w->var->value), w->operand);
}

void waitvar_list_waiter(struct waitvar_waiter *w)
{
	struct waitvar_var *var = w->var;

	spin_lock(&var->waiters_lock);
	if (w->watch) {
		list_add_tail(&w->node, &var->watches);
		WRITE_ONCE(var->nr_watches, var->nr_watches + 1);
	} else {
		list_add_tail(&w->node, &var->waiters);
	}
	var->nr_waiters++;
	spin_unlock(&var->waiters_lock);
}

void waitvar_unlist_waiter(struct waitvar_waiter *w)
{
	struct waitvar_var *var = w->var;

	spin_lock(&var->waiters_lock);
	list_del(&w->node);
	var->nr_waiters--;
	if (w->watch)
		WRITE_ONCE(var->nr_watches, var->nr_watches - 1);
	spin_unlock(&var->waiters_lock);
}

/* Tells each of @var's WATCH descriptors of a wake; waiters_lock held. */
static void __waitvar_notify_watches(struct waitvar_var *var)
{
	struct waitvar_waiter *w;

	list_for_each_entry(w, &var->watches, node)
		waitvar_watch_notify(w->watch);
}

/*
 * Tells @var's WATCH descriptors of a wake: they are not on the shared
 * hashed queues, so every wake of the variable also comes here.  The
 * caller's update and a full barrier come first (waitvar_ioctl_watch()
 * has the pairing one).
 */
static void waitvar_notify_watches(struct waitvar_var *var)
{
	if (!READ_ONCE(var->nr_watches))
		return;
	spin_lock(&var->waiters_lock);
	__waitvar_notify_watches(var);
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
 * if it has one.  The update was a plain store or a value-returning atomic.
 */
static void waitvar_wake(struct waitvar_var *var)
{
	atomic64_inc(&var->stats.wakes);
	/*
	 * Orders the update before the lockless waiter check in the wake,
	 * pairing with the barrier a waiter has between queueing and its
	 * test.  Under a lock it is needed too: WAITV and WATCH test a
	 * lock-protected value without the lock, so the lock orders nothing
	 * for them.
	 */
	smp_mb();
	switch (var->lock_kind) {
	case WAITVAR_LOCK_SPIN:
		wake_up_var_locked(&var->value, &var->spin);
		break;
	case WAITVAR_LOCK_MUTEX:
		wake_up_var_locked(&var->value, &var->mutex);
		break;
	default:
		wake_up_var(&var->value);
		break;
	}
	waitvar_notify_watches(var);
}

/* Waiters a filtered wake walks between two breaks of waiters_lock. */
#define WAITVAR_WALK_BATCH	64

static atomic64_t waitvar_walk_breaks = ATOMIC64_INIT(0);

/* How often filtered wakes have let go of a waiter list mid-walk. */
u64 waitvar_filtered_walk_breaks(void)
{
	return atomic64_read(&waitvar_walk_breaks);
}

/*
 * Wakes the listed waiters whose condition holds now, up to @nr exclusive
 * ones (0: all), and the watches whose condition holds.  Returns how many
 * waiting tasks were woken.
 *
 * As on a wait queue, an exclusive waiter counts against @nr only if this
 * wake woke it: one an earlier wake woke stays listed until it runs, and
 * counting it again would leave the next one asleep with its condition true.
 *
 * A user's waiters may all wait on one variable: the walk lets go of the
 * lock (and the CPU) after each WAITVAR_WALK_BATCH of them, as the kernel's
 * wake walk does, keeping its place with a bookmark, an entry without a
 * task that other walks step over.
 */
static int waitvar_wake_filtered(struct waitvar_var *var, u32 nr)
{
	struct waitvar_waiter bookmark = { };
	struct waitvar_waiter *w;
	struct list_head *pos;
	unsigned int walked = 0;
	u32 exclusive = 0;
	int woken = 0, ret;

	/* Orders the caller's update before reading the conditions. */
	smp_mb();
	atomic64_inc(&var->stats.wakes);
	spin_lock(&var->waiters_lock);
	__waitvar_notify_watches(var);
	for (pos = var->waiters.next; pos != &var->waiters; ) {
		w = list_entry(pos, struct waitvar_waiter, node);
		pos = pos->next;
		if (!w->task)
			continue;
		if (waitvar_holds(w) && !(w->exclusive && nr && exclusive == nr)) {
			WRITE_ONCE(w->kicked, 1);
			/* A listed task runs nothing but its wait: this ends that sleep. */
			ret = wake_up_process(w->task);
			woken += ret;
			if (w->exclusive)
				exclusive += ret;
		}
		if (++walked % WAITVAR_WALK_BATCH || pos == &var->waiters)
			continue;
		list_add(&bookmark.node, &w->node);
		spin_unlock(&var->waiters_lock);
		atomic64_inc(&waitvar_walk_breaks);
		cond_resched();
		spin_lock(&var->waiters_lock);
		pos = bookmark.node.next;
		list_del(&bookmark.node);
	}
	spin_unlock(&var->waiters_lock);
	return woken;
}

long waitvar_ioctl_create(struct waitvar_file *wf, struct waitvar_create *arg,
			  struct waitvar_call *call)
{
	struct waitvar_var *var;
	int ret;

	if (waitvar_create_flags_bad(arg->flags) || arg->id || arg->reserved[0] ||
	    arg->reserved[1])
		return -EINVAL;
	var = waitvar_var_new(wf->user, arg->value, arg->flags);
	if (IS_ERR(var))
		return PTR_ERR(var);
	ret = waitvar_reserve(wf, &arg->id);
	if (ret) {
		waitvar_var_put(var);
		return ret;
	}
	/* The call keeps the reference waitvar_var_new() returned. */
	call->var = var;
	return 0;
}

void waitvar_ioctl_create_commit(struct waitvar_file *wf, struct waitvar_create *arg,
				 struct waitvar_call *call)
{
	waitvar_publish(wf, arg->id, call);
}

/* The variable was never seen: putting the reservation's reference frees it. */
void waitvar_ioctl_create_undo(struct waitvar_file *wf, struct waitvar_create *arg,
			       struct waitvar_call *call)
{
	waitvar_unreserve(wf, arg->id, call);
}

long waitvar_ioctl_destroy(struct waitvar_file *wf, struct waitvar_id *arg)
{
	if (arg->flags)
		return -EINVAL;
	return waitvar_detach(wf, arg->id);
}

long waitvar_ioctl_get(struct waitvar_file *wf, struct waitvar_value *arg)
{
	struct waitvar_var *var;

	if (arg->flags || arg->value)
		return -EINVAL;
	var = waitvar_var_lookup(wf, arg->id, MAY_READ);
	if (IS_ERR(var))
		return PTR_ERR(var);
	arg->value = atomic64_read(&var->value);
	waitvar_var_put(var);
	return 0;
}

/*
 * Runs @update on variable @id under its lock, if it has one, when the
 * caller may write it; @update stores and wakes as it needs.
 */
static long waitvar_update(struct waitvar_file *wf, u32 id,
			   void (*update)(struct waitvar_var *var, void *arg), void *arg)
{
	struct waitvar_var *var = waitvar_var_lookup(wf, id, MAY_WRITE);

	if (IS_ERR(var))
		return PTR_ERR(var);
	waitvar_lock(var);
	update(var, arg);
	waitvar_unlock(var);
	waitvar_var_put(var);
	return 0;
}

static void waitvar_do_set(struct waitvar_var *var, void *data)
{
	struct waitvar_value *arg = data;

	atomic64_set(&var->value, arg->value);
	waitvar_wake(var);
}

long waitvar_ioctl_set(struct waitvar_file *wf, struct waitvar_value *arg)
{
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

long waitvar_ioctl_add(struct waitvar_file *wf, struct waitvar_add *arg)
{
	if ((arg->flags & ~WAITVAR_ADD_FLAGS) || arg->value)
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

long waitvar_ioctl_dec_and_wake(struct waitvar_file *wf, struct waitvar_value *arg)
{
	if (arg->flags || arg->value)
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

long waitvar_ioctl_cmpxchg(struct waitvar_file *wf, struct waitvar_cmpxchg *arg)
{
	if (arg->flags || arg->prev)
		return -EINVAL;
	return waitvar_update(wf, arg->id, waitvar_do_cmpxchg, arg);
}

static void waitvar_do_wake(struct waitvar_var *var, void *unused)
{
	waitvar_wake(var);
}

long waitvar_ioctl_wake(struct waitvar_file *wf, struct waitvar_id *arg)
{
	if (arg->flags)
		return -EINVAL;
	return waitvar_update(wf, arg->id, waitvar_do_wake, NULL);
}

long waitvar_ioctl_wake_nr(struct waitvar_file *wf, struct waitvar_wake_nr *arg)
{
	struct waitvar_var *var;
	int woken;

	if ((arg->flags & ~WAITVAR_WAKE_FLAGS) || arg->nr > INT_MAX || arg->woken)
		return -EINVAL;
	var = waitvar_var_lookup(wf, arg->id, MAY_WRITE);
	if (IS_ERR(var))
		return PTR_ERR(var);
	if (arg->flags & WAITVAR_WAKE_FILTER) {
		woken = waitvar_wake_filtered(var, arg->nr);
	} else {
		atomic64_inc(&var->stats.wakes);
		/* No update to order here: the waiters recheck what is there. */
		woken = arg->nr ? wake_up_var_nr(&var->value, arg->nr) :
				  wake_up_var_all(&var->value);
		waitvar_notify_watches(var);
	}
	waitvar_var_put(var);
	arg->woken = woken;
	return 0;
}
