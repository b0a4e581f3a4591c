// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/waitvar: kernel-side variables that userspace threads change and wait
 * on, so that wait_var_event() and wake_up_var() can be driven from tests.
 *
 * Each open file holds its own table of variables.  A waiter sleeps on the
 * hashed wait queue keyed by &var->value; every update stores the value,
 * issues a full barrier and calls wake_up_var().
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/build_bug.h>
#include <linux/fs.h>
#include <linux/jiffies.h>
#include <linux/kref.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/nospec.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/wait_bit.h>
#include <linux/xarray.h>

#include <linux/waitvar.h>

static unsigned int max_vars_per_file = 1024;
module_param(max_vars_per_file, uint, 0644);
MODULE_PARM_DESC(max_vars_per_file, "Most variables one open file may hold");

/* The layout must not depend on the ABI: no implicit padding anywhere. */
static_assert(sizeof(struct waitvar_create) == 32);
static_assert(sizeof(struct waitvar_id) == 8);
static_assert(sizeof(struct waitvar_value) == 16);
static_assert(sizeof(struct waitvar_wait) == 40);
static_assert(sizeof(struct waitvar_wake_nr) == 16);
static_assert(sizeof(struct waitvar_add) == 24);
static_assert(sizeof(struct waitvar_cmpxchg) == 32);

#define WAITVAR_WAIT_FLAGS	(WAITVAR_WAIT_TIMEOUT | WAITVAR_WAIT_EXCLUSIVE)

struct waitvar_var {
	atomic64_t value;	/* &value keys the hashed wait queue */
	bool dead;		/* destroyed: waiters return -EIDRM */
	struct kref ref;	/* the file's table and each waiter */
	struct rcu_head rcu;
};

struct waitvar_file {
	struct xarray vars;	/* id -> struct waitvar_var */
};

static void waitvar_var_free(struct kref *ref)
{
	kfree_rcu(container_of(ref, struct waitvar_var, ref), rcu);
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

static void waitvar_wake(struct waitvar_var *var)
{
	/* Order the update before wake_up_var()'s lockless waiter check. */
	smp_mb();
	wake_up_var(&var->value);
}

static int waitvar_remove(struct waitvar_file *wf, u32 id)
{
	struct waitvar_var *var = xa_erase(&wf->vars, id);

	if (!var)
		return -ENOENT;
	WRITE_ONCE(var->dead, true);
	/* Every waiter must see -EIDRM, exclusive ones included. */
	smp_mb();
	wake_up_var_all(&var->value);
	waitvar_put(var);
	return 0;
}

static long waitvar_create(struct waitvar_file *wf, void *data)
{
	struct waitvar_create *arg = data;
	struct waitvar_var *var;
	u32 id;
	int ret;

	if (arg->flags || arg->reserved[0] || arg->reserved[1])
		return -EINVAL;

	var = kzalloc(sizeof(*var), GFP_KERNEL_ACCOUNT);
	if (!var)
		return -ENOMEM;
	atomic64_set(&var->value, arg->value);
	kref_init(&var->ref);

	ret = xa_alloc(&wf->vars, &id, var,
		       XA_LIMIT(1, READ_ONCE(max_vars_per_file)),
		       GFP_KERNEL_ACCOUNT);
	if (ret) {
		kfree(var);
		return ret == -EBUSY ? -ENOSPC : ret;
	}

	arg->id = id;
	return 0;
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
	var = waitvar_get(wf, arg->id);
	if (!var)
		return -ENOENT;
	arg->value = atomic64_read(&var->value);
	waitvar_put(var);
	return 0;
}

static long waitvar_set_value(struct waitvar_file *wf, void *data)
{
	struct waitvar_value *arg = data;
	struct waitvar_var *var;

	if (arg->flags)
		return -EINVAL;
	var = waitvar_get(wf, arg->id);
	if (!var)
		return -ENOENT;
	atomic64_set(&var->value, arg->value);
	waitvar_wake(var);
	waitvar_put(var);
	return 0;
}

static long waitvar_add(struct waitvar_file *wf, void *data)
{
	struct waitvar_add *arg = data;
	struct waitvar_var *var;

	if (arg->flags & ~WAITVAR_ADD_WAKE)
		return -EINVAL;
	var = waitvar_get(wf, arg->id);
	if (!var)
		return -ENOENT;
	/* Value-returning atomics are fully ordered: no barrier before the wake. */
	arg->value = atomic64_add_return(arg->delta, &var->value);
	if (arg->flags & WAITVAR_ADD_WAKE)
		wake_up_var(&var->value);
	waitvar_put(var);
	return 0;
}

static long waitvar_dec_and_wake(struct waitvar_file *wf, void *data)
{
	struct waitvar_value *arg = data;
	struct waitvar_var *var;

	if (arg->flags)
		return -EINVAL;
	var = waitvar_get(wf, arg->id);
	if (!var)
		return -ENOENT;
	arg->value = atomic64_dec_return(&var->value);
	if (!arg->value)
		wake_up_var(&var->value);
	waitvar_put(var);
	return 0;
}

static long waitvar_cmpxchg(struct waitvar_file *wf, void *data)
{
	struct waitvar_cmpxchg *arg = data;
	struct waitvar_var *var;

	if (arg->flags)
		return -EINVAL;
	var = waitvar_get(wf, arg->id);
	if (!var)
		return -ENOENT;
	/* A successful cmpxchg is fully ordered; a failed one changed nothing. */
	arg->prev = atomic64_cmpxchg(&var->value, arg->expected, arg->desired);
	if (arg->prev == arg->expected)
		wake_up_var(&var->value);
	waitvar_put(var);
	return 0;
}

static long waitvar_wake_var(struct waitvar_file *wf, void *data)
{
	struct waitvar_id *arg = data;
	struct waitvar_var *var;

	if (arg->flags)
		return -EINVAL;
	var = waitvar_get(wf, arg->id);
	if (!var)
		return -ENOENT;
	waitvar_wake(var);
	waitvar_put(var);
	return 0;
}

static long waitvar_wake_nr(struct waitvar_file *wf, void *data)
{
	struct waitvar_wake_nr *arg = data;
	struct waitvar_var *var;
	int woken;

	if (arg->flags || arg->nr > INT_MAX)
		return -EINVAL;
	var = waitvar_get(wf, arg->id);
	if (!var)
		return -ENOENT;
	/* No update to order here: the waiters recheck what is there. */
	woken = wake_up_var_nr(&var->value, arg->nr);
	waitvar_put(var);
	arg->woken = woken;
	return 0;
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

/* What a waiter waits for, and what it saw when its wait ended. */
struct waitvar_waiter {
	struct waitvar_var *var;
	u32 op;
	u64 operand;
	u64 value;
	bool dead;
};

static bool waitvar_done(struct waitvar_waiter *w)
{
	w->dead = READ_ONCE(w->var->dead);
	if (w->dead)
		return true;
	w->value = atomic64_read(&w->var->value);
	return waitvar_op_holds(w->op, w->value, w->operand);
}

/*
 * Round up, and add the partial tick we start in, so that -ETIMEDOUT never
 * comes before timeout_ns has passed.
 */
static long waitvar_timeout_jiffies(u64 timeout_ns)
{
	u64 ticks = div64_u64(timeout_ns, TICK_NSEC);

	if (ticks >= MAX_SCHEDULE_TIMEOUT - 2)
		return MAX_SCHEDULE_TIMEOUT - 1;
	return ticks + 2;
}

/* One wait_var_event() variant per combination of WAIT flags. */
static long waitvar_sleep(struct waitvar_waiter *w, u32 flags, long t)
{
	atomic64_t *v = &w->var->value;
	bool excl = flags & WAITVAR_WAIT_EXCLUSIVE;

	if (!(flags & WAITVAR_WAIT_TIMEOUT)) {
		if (excl)
			return wait_var_event_exclusive_interruptible(v, waitvar_done(w));
		return wait_var_event_interruptible(v, waitvar_done(w));
	}
	if (excl)
		return wait_var_event_exclusive_interruptible_timeout(v, waitvar_done(w), t);
	return wait_var_event_interruptible_timeout(v, waitvar_done(w), t);
}

static long waitvar_wait(struct waitvar_file *wf, void *data)
{
	struct waitvar_wait *arg = data;
	struct waitvar_waiter w = {};
	long ret, timeout = 0;

	if ((arg->flags & ~WAITVAR_WAIT_FLAGS) || arg->reserved)
		return -EINVAL;
	if (arg->op >= WAITVAR_OP_COUNT)
		return -EINVAL;
	w.var = waitvar_get(wf, arg->id);
	if (!w.var)
		return -ENOENT;
	w.op = arg->op;
	w.operand = arg->operand;

	if (arg->flags & WAITVAR_WAIT_TIMEOUT)
		timeout = waitvar_timeout_jiffies(arg->timeout_ns);
	ret = waitvar_sleep(&w, arg->flags, timeout);
	waitvar_put(w.var);

	if (arg->flags & WAITVAR_WAIT_TIMEOUT) {
		if (!ret)
			return -ETIMEDOUT;
		if (ret > 0)
			ret = 0;
	}
	if (ret == -ERESTARTSYS)
		return -EINTR;
	if (ret)
		return ret;
	if (w.dead)
		return -EIDRM;
	arg->value = w.value;
	return 0;
}

/* Every command, by _IOC_NR(): its handler works on a kernel copy of the argument. */
static const struct {
	unsigned int cmd;
	long (*handler)(struct waitvar_file *wf, void *arg);
} waitvar_ioctls[] = {
	[_IOC_NR(WAITVAR_IOC_CREATE)] = { WAITVAR_IOC_CREATE, waitvar_create },
	[_IOC_NR(WAITVAR_IOC_DESTROY)] = { WAITVAR_IOC_DESTROY, waitvar_destroy },
	[_IOC_NR(WAITVAR_IOC_GET)] = { WAITVAR_IOC_GET, waitvar_get_value },
	[_IOC_NR(WAITVAR_IOC_SET)] = { WAITVAR_IOC_SET, waitvar_set_value },
	[_IOC_NR(WAITVAR_IOC_WAIT)] = { WAITVAR_IOC_WAIT, waitvar_wait },
	[_IOC_NR(WAITVAR_IOC_WAKE)] = { WAITVAR_IOC_WAKE, waitvar_wake_var },
	[_IOC_NR(WAITVAR_IOC_WAKE_NR)] = { WAITVAR_IOC_WAKE_NR, waitvar_wake_nr },
	[_IOC_NR(WAITVAR_IOC_ADD)] = { WAITVAR_IOC_ADD, waitvar_add },
	[_IOC_NR(WAITVAR_IOC_DEC_AND_WAKE)] = { WAITVAR_IOC_DEC_AND_WAKE, waitvar_dec_and_wake },
	[_IOC_NR(WAITVAR_IOC_CMPXCHG)] = { WAITVAR_IOC_CMPXCHG, waitvar_cmpxchg },
};

/* Large enough for the argument of any command. */
union waitvar_arg {
	struct waitvar_create create;
	struct waitvar_id id;
	struct waitvar_value value;
	struct waitvar_wait wait;
	struct waitvar_wake_nr wake_nr;
	struct waitvar_add add;
	struct waitvar_cmpxchg cmpxchg;
};

static long waitvar_ioctl(struct file *file, unsigned int cmd,
			  unsigned long uarg)
{
	struct waitvar_file *wf = file->private_data;
	void __user *up = (void __user *)uarg;
	unsigned int nr = _IOC_NR(cmd);
	union waitvar_arg arg;
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
		/* An id that never reached userspace names nothing it can use. */
		if (cmd == WAITVAR_IOC_CREATE)
			waitvar_remove(wf, arg.create.id);
		return -EFAULT;
	}
	return 0;
}

static int waitvar_open(struct inode *inode, struct file *file)
{
	struct waitvar_file *wf;

	wf = kzalloc(sizeof(*wf), GFP_KERNEL_ACCOUNT);
	if (!wf)
		return -ENOMEM;
	xa_init_flags(&wf->vars, XA_FLAGS_ALLOC1);
	file->private_data = wf;
	return 0;
}

/* No ioctl is in flight on a released file, so no variable has a waiter. */
static int waitvar_release(struct inode *inode, struct file *file)
{
	struct waitvar_file *wf = file->private_data;
	struct waitvar_var *var;
	unsigned long id;

	xa_for_each(&wf->vars, id, var) {
		xa_erase(&wf->vars, id);
		waitvar_put(var);
	}
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

module_misc_device(waitvar_misc);

MODULE_DESCRIPTION("Kernel-side variables driven by wait_var_event() from userspace");
MODULE_AUTHOR("waitvar <waitvar@example.org>");
MODULE_LICENSE("GPL");
