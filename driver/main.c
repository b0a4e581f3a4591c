// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/waitvar: kernel-side variables that userspace threads change and wait
 * on, so that wait_var_event() and wake_up_var() can be driven from tests.
 *
 * This file holds the ioctl table and its dispatch, the device's file
 * operations and the module's init and exit.  Each open file holds its own
 * table of variables.  Read internal.h first.
 */
#include <linux/bits.h>
#include <linux/build_bug.h>
#include <linux/cred.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/nospec.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/wait_bit.h>

#include "internal.h"

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
static_assert(sizeof(struct waitvar_features) == 96);

/* The kernel copy of any command's argument. */
union waitvar_ioctl_arg {
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
	struct waitvar_features features;
};

/**
 * struct waitvar_ioctl_desc - one command
 * @cmd: its full number, as userspace passes it
 * @func: runs it on the kernel copy of its argument
 * @commit: if set, runs once the result reached userspace
 * @undo: if set, runs if the result could not be copied out
 * @probe: writes the argument back before running, so that a result that
 *	cannot be copied out fails the command before it changes or wakes
 *	anything (for the commands with nothing to undo)
 *
 * Each function is a thunk that WAITVAR_IOCTL_FN() and its siblings make
 * from a function on the command's own argument type.
 */
struct waitvar_ioctl_desc {
	unsigned int cmd;
	long (*func)(struct waitvar_file *wf, void *arg, struct waitvar_call *call);
	void (*commit)(struct waitvar_file *wf, void *arg, struct waitvar_call *call);
	void (*undo)(struct waitvar_file *wf, void *arg, struct waitvar_call *call);
	bool probe;
};

/*
 * WAITVAR_IOCTL_FN(NAME, name, type) makes waitvar_fn_<name>(), the thunk
 * the table holds, from the handler waitvar_ioctl_<name>(wf, type *arg),
 * and checks that WAITVAR_IOC_<NAME> carries exactly a @type.  The
 * compiler checks that the handler takes a @type.
 */
#define WAITVAR_IOCTL_FN(NAME, name, type)					\
static long waitvar_fn_##name(struct waitvar_file *wf, void *arg,		\
			      struct waitvar_call *call)			\
{										\
	type *typed = arg;							\
										\
	return waitvar_ioctl_##name(wf, typed);					\
}										\
static_assert(_IOC_SIZE(WAITVAR_IOC_##NAME) == sizeof(type) &&			\
	      sizeof(type) <= sizeof(union waitvar_ioctl_arg))

/* The same for a handler that leaves work for its commit or undo in @call. */
#define WAITVAR_IOCTL_FN_CALL(NAME, name, type)				\
static long waitvar_fn_##name(struct waitvar_file *wf, void *arg,		\
			      struct waitvar_call *call)			\
{										\
	type *typed = arg;							\
										\
	return waitvar_ioctl_##name(wf, typed, call);				\
}										\
static_assert(_IOC_SIZE(WAITVAR_IOC_##NAME) == sizeof(type) &&			\
	      sizeof(type) <= sizeof(union waitvar_ioctl_arg))

/* waitvar_fn_<name>() from a commit or undo waitvar_ioctl_<name>(). */
#define WAITVAR_IOCTL_STEP(name, type)						\
static void waitvar_fn_##name(struct waitvar_file *wf, void *arg,		\
			      struct waitvar_call *call)			\
{										\
	type *typed = arg;							\
										\
	waitvar_ioctl_##name(wf, typed, call);					\
}										\
static_assert(sizeof(type) <= sizeof(union waitvar_ioctl_arg))

/* The table entry of WAITVAR_IOC_<NAME>; the rest sets .commit or .undo. */
#define WAITVAR_IOCTL_DEF(NAME, name, ...)					\
	[_IOC_NR(WAITVAR_IOC_##NAME)] = {					\
		.cmd = WAITVAR_IOC_##NAME +					\
		       BUILD_BUG_ON_ZERO(_IOC_SIZE(WAITVAR_IOC_##NAME) >	\
					 sizeof(union waitvar_ioctl_arg)),	\
		.func = waitvar_fn_##name,					\
		__VA_ARGS__							\
	}

static long waitvar_ioctl_features(struct waitvar_file *wf, struct waitvar_features *arg);

WAITVAR_IOCTL_FN_CALL(CREATE, create, struct waitvar_create);
WAITVAR_IOCTL_STEP(create_commit, struct waitvar_create);
WAITVAR_IOCTL_STEP(create_undo, struct waitvar_create);
WAITVAR_IOCTL_FN(DESTROY, destroy, struct waitvar_id);
WAITVAR_IOCTL_FN(GET, get, struct waitvar_value);
WAITVAR_IOCTL_FN(SET, set, struct waitvar_value);
WAITVAR_IOCTL_FN(WAIT, wait, struct waitvar_wait);
WAITVAR_IOCTL_FN(WAKE, wake, struct waitvar_id);
WAITVAR_IOCTL_FN(WAKE_NR, wake_nr, struct waitvar_wake_nr);
WAITVAR_IOCTL_FN(ADD, add, struct waitvar_add);
WAITVAR_IOCTL_FN(DEC_AND_WAKE, dec_and_wake, struct waitvar_value);
WAITVAR_IOCTL_FN(CMPXCHG, cmpxchg, struct waitvar_cmpxchg);
WAITVAR_IOCTL_FN(WAITV, waitv, struct waitvar_waitv);
WAITVAR_IOCTL_FN_CALL(WATCH, watch, struct waitvar_watch);
WAITVAR_IOCTL_STEP(watch_commit, struct waitvar_watch);
WAITVAR_IOCTL_STEP(watch_undo, struct waitvar_watch);
WAITVAR_IOCTL_FN(STATS, stats, struct waitvar_stats);
WAITVAR_IOCTL_FN_CALL(NAMED_CREATE, named_create, struct waitvar_named);
WAITVAR_IOCTL_STEP(named_commit, struct waitvar_named);
WAITVAR_IOCTL_STEP(named_create_undo, struct waitvar_named);
WAITVAR_IOCTL_FN_CALL(NAMED_OPEN, named_open, struct waitvar_named);
WAITVAR_IOCTL_STEP(named_open_undo, struct waitvar_named);
WAITVAR_IOCTL_FN(NAMED_REMOVE, named_remove, struct waitvar_named);
WAITVAR_IOCTL_FN(LIST, list, struct waitvar_list);
WAITVAR_IOCTL_FN(FEATURES, features, struct waitvar_features);

/* Every command, by _IOC_NR(). */
static const struct waitvar_ioctl_desc waitvar_ioctls[] = {
	WAITVAR_IOCTL_DEF(CREATE, create, .commit = waitvar_fn_create_commit,
			  .undo = waitvar_fn_create_undo),
	WAITVAR_IOCTL_DEF(DESTROY, destroy),
	WAITVAR_IOCTL_DEF(GET, get),
	WAITVAR_IOCTL_DEF(SET, set),
	WAITVAR_IOCTL_DEF(WAIT, wait, .probe = true),
	WAITVAR_IOCTL_DEF(WAKE, wake),
	WAITVAR_IOCTL_DEF(WAKE_NR, wake_nr, .probe = true),
	WAITVAR_IOCTL_DEF(ADD, add, .probe = true),
	WAITVAR_IOCTL_DEF(DEC_AND_WAKE, dec_and_wake, .probe = true),
	WAITVAR_IOCTL_DEF(CMPXCHG, cmpxchg, .probe = true),
	WAITVAR_IOCTL_DEF(WAITV, waitv, .probe = true),
	WAITVAR_IOCTL_DEF(WATCH, watch, .commit = waitvar_fn_watch_commit,
			  .undo = waitvar_fn_watch_undo),
	WAITVAR_IOCTL_DEF(STATS, stats),
	WAITVAR_IOCTL_DEF(NAMED_CREATE, named_create, .commit = waitvar_fn_named_commit,
			  .undo = waitvar_fn_named_create_undo),
	WAITVAR_IOCTL_DEF(NAMED_OPEN, named_open, .commit = waitvar_fn_named_commit,
			  .undo = waitvar_fn_named_open_undo),
	WAITVAR_IOCTL_DEF(NAMED_REMOVE, named_remove),
	WAITVAR_IOCTL_DEF(LIST, list),
	WAITVAR_IOCTL_DEF(FEATURES, features),
};

#define WAITVAR_BIT_MASK(n)	((u32)(BIT_ULL(n) - 1))

/* What this build takes: every bit is one the code checks for. */
static long waitvar_ioctl_features(struct waitvar_file *wf, struct waitvar_features *arg)
{
	unsigned int i;

	if (memchr_inv(arg, 0, sizeof(*arg)))
		return -EINVAL;
	for (i = 0; i < ARRAY_SIZE(waitvar_ioctls); i++)
		if (waitvar_ioctls[i].func)
			arg->commands |= BIT_ULL(i);
	arg->create_flags = WAITVAR_CREATE_LOCKS;
	arg->wait_flags = WAITVAR_WAIT_FLAGS;
	arg->wake_flags = WAITVAR_WAKE_FLAGS;
	arg->add_flags = WAITVAR_ADD_FLAGS;
	arg->ops = WAITVAR_BIT_MASK(WAITVAR_OP_COUNT);
	arg->modes = WAITVAR_BIT_MASK(WAITVAR_MODE_COUNT);
	arg->semantics = WAITVAR_SEM_NAMES_USERNS | WAITVAR_SEM_FREEZABLE |
			 WAITVAR_SEM_OWNER_REMOVES | WAITVAR_SEM_BUCKET_PRIVILEGED |
			 WAITVAR_SEM_HRTIMER | WAITVAR_SEM_RESTART_LEFT | WAITVAR_SEM_TIMENS |
			 WAITVAR_SEM_KILLABLE_JOBCTL;
	if (IS_ENABLED(CONFIG_WAITVAR_TEST_HOOKS))
		arg->semantics |= WAITVAR_SEM_TEST_HOOKS;
	arg->waitv_max = WAITVAR_WAITV_MAX;
	arg->max_vars_per_file = waitvar_max_vars_per_file();
	arg->max_user_vars = waitvar_user_limit(WAITVAR_CHARGE_VARS);
	arg->max_user_waiters = waitvar_user_limit(WAITVAR_CHARGE_WAITERS);
	arg->max_user_names = waitvar_user_limit(WAITVAR_CHARGE_NAMES);
	arg->max_named_vars = waitvar_max_named_vars();
	arg->max_uninterruptible_ms = waitvar_max_uninterruptible_ms();
	arg->wait_table_size = var_waitqueue_table_size();
	return 0;
}

#ifdef CONFIG_WAITVAR_TEST_HOOKS
static unsigned int test_copyout_delay_ms;
module_param(test_copyout_delay_ms, uint, 0644);
MODULE_PARM_DESC(test_copyout_delay_ms,
		 "Test builds: sleep this long before a made id or fd is copied out");

/* Widens the window between making something and handing it out. */
static void waitvar_test_copyout_delay(void)
{
	unsigned int ms = min(READ_ONCE(test_copyout_delay_ms), 10000U);

	if (ms)
		msleep(ms);
}
#else
static inline void waitvar_test_copyout_delay(void) { }
#endif

static long waitvar_ioctl(struct file *file, unsigned int cmd,
			  unsigned long uarg)
{
	struct waitvar_file *wf = file->private_data;
	void __user *up = (void __user *)uarg;
	unsigned int nr = _IOC_NR(cmd);
	const struct waitvar_ioctl_desc *desc;
	struct waitvar_call call = {};
	union waitvar_ioctl_arg arg;
	long ret;

	if (_IOC_TYPE(cmd) != WAITVAR_IOC_MAGIC || nr >= ARRAY_SIZE(waitvar_ioctls))
		return -ENOTTY;
	desc = &waitvar_ioctls[array_index_nospec(nr, ARRAY_SIZE(waitvar_ioctls))];
	if (!desc->func || desc->cmd != cmd)
		return -ENOTTY;

	if (copy_from_user(&arg, up, _IOC_SIZE(cmd)))
		return -EFAULT;
	/* The same bytes back: only a page userspace cannot write fails. */
	if (desc->probe && copy_to_user(up, &arg, _IOC_SIZE(cmd)))
		return -EFAULT;
	ret = desc->func(wf, &arg, &call);
	/* A wait cut short hands back the time it has left for its restart. */
	if (ret == -ERESTARTNOHAND && copy_to_user(up, &arg, _IOC_SIZE(cmd)))
		return -EINTR;
	if (ret == -ERESTARTNOINTR && copy_to_user(up, &arg, _IOC_SIZE(cmd)))
		return -EFAULT;
	if (ret || !(_IOC_DIR(cmd) & _IOC_READ))
		return ret;
	if (desc->undo)
		waitvar_test_copyout_delay();
	if (copy_to_user(up, &arg, _IOC_SIZE(cmd))) {
		/* Nothing userspace cannot name may stay behind. */
		if (desc->undo)
			desc->undo(wf, &arg, &call);
		return -EFAULT;
	}
	if (desc->commit)
		desc->commit(wf, &arg, &call);
	return 0;
}

static int waitvar_open(struct inode *inode, struct file *file)
{
	struct waitvar_file *wf;

	wf = kzalloc(sizeof(*wf), GFP_KERNEL_ACCOUNT);
	if (!wf)
		return -ENOMEM;
	wf->user = waitvar_user_get(current_uid());
	if (!wf->user) {
		kfree(wf);
		return -ENOMEM;
	}
	xa_init_flags(&wf->vars, XA_FLAGS_ALLOC1);
	wf->owner = get_pid(task_tgid(current));
	waitvar_debugfs_add(wf);

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

	waitvar_debugfs_del(wf);
	xa_for_each(&wf->vars, id, var)
		waitvar_detach(wf, id);
	xa_destroy(&wf->vars);
	waitvar_user_put(wf->user);
	put_pid(wf->owner);
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

	waitvar_debugfs_init();
	ret = misc_register(&waitvar_misc);
	if (ret)
		waitvar_debugfs_exit();
	return ret;
}

static void __exit waitvar_exit(void)
{
	misc_deregister(&waitvar_misc);
	waitvar_debugfs_exit();
	waitvar_named_exit();
}

module_init(waitvar_init);
module_exit(waitvar_exit);

MODULE_DESCRIPTION("Kernel-side variables driven by wait_var_event() from userspace");
MODULE_AUTHOR("waitvar <waitvar@example.org>");
MODULE_LICENSE("GPL");
