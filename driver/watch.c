// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/waitvar WATCH descriptors: each is listed on its variable, not on
 * the kernel's shared hashed wait queues, and every wake of the variable
 * tests its condition and wakes the descriptor's poll queue
 * (waitvar_notify_watches()).  Rules: internal.h.
 */
#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "internal.h"

/**
 * struct waitvar_watch_file - a WATCH descriptor's private data
 * @w: its condition, listed on the variable
 * @pollq: where poll() and read() wait
 * @user: charged one waiter until release, a reference held
 */
struct waitvar_watch_file {
	struct waitvar_waiter w;
	wait_queue_head_t pollq;
	struct waitvar_user *user;
};

/*
 * A wake of @watch's variable: hangup if it died, readable if the
 * condition holds.  Called under the variable's waiters_lock.
 */
void waitvar_watch_notify(struct waitvar_watch_file *watch)
{
	if (READ_ONCE(watch->w.var->dead))
		wake_up_interruptible_poll(&watch->pollq, EPOLLERR | EPOLLHUP);
	else if (waitvar_holds(&watch->w))
		wake_up_interruptible_poll(&watch->pollq, EPOLLIN | EPOLLRDNORM);
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

	waitvar_unlist_waiter(&watch->w);
	waitvar_var_put(var);
	waitvar_uncharge(watch->user, WAITVAR_CHARGE_WAITERS, 1);
	waitvar_user_put(watch->user);
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

long waitvar_ioctl_watch(struct waitvar_file *wf, struct waitvar_watch *arg,
			 struct waitvar_call *call)
{
	struct waitvar_watch_file *watch;
	struct file *file;
	int fd;

	if (arg->flags || arg->op >= WAITVAR_OP_COUNT || arg->fd)
		return -EINVAL;
	fd = waitvar_charge(wf->user, WAITVAR_CHARGE_WAITERS, 1);
	if (fd)
		return fd;
	watch = kzalloc(sizeof(*watch), GFP_KERNEL_ACCOUNT);
	if (!watch) {
		fd = -ENOMEM;
		goto uncharge;
	}
	watch->w.var = waitvar_var_lookup(wf, arg->id, MAY_READ);
	if (IS_ERR(watch->w.var)) {
		fd = PTR_ERR(watch->w.var);
		kfree(watch);
		goto uncharge;
	}
	watch->user = waitvar_user_hold(wf->user);
	watch->w.op = arg->op;
	watch->w.operand = arg->operand;
	watch->w.watch = watch;
	init_waitqueue_head(&watch->pollq);

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
	/*
	 * Orders the listing before the first poll()'s test, pairing with
	 * the barrier an update has before waitvar_notify_watches() reads
	 * nr_watches: either the update sees the watch, or the test sees
	 * the update.
	 */
	smp_mb();
	call->file = file;
	arg->fd = fd;
	return 0;
fail:
	waitvar_var_put(watch->w.var);
	waitvar_user_put(watch->user);
	kfree(watch);
uncharge:
	waitvar_uncharge(wf->user, WAITVAR_CHARGE_WAITERS, 1);
	return fd;
}

/* The fd reached userspace: from now on it is the caller's. */
void waitvar_ioctl_watch_commit(struct waitvar_file *wf, struct waitvar_watch *arg,
				struct waitvar_call *call)
{
	fd_install(arg->fd, call->file);
}

/* The fd did not reach userspace: nothing may stay behind. */
void waitvar_ioctl_watch_undo(struct waitvar_file *wf, struct waitvar_watch *arg,
			      struct waitvar_call *call)
{
	put_unused_fd(arg->fd);
	fput(call->file);
}
