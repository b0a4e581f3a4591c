// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/waitvar WATCH descriptors: each keeps an entry of its own on the
 * variable's hashed wait queue, whose wake function tests the condition in
 * the waker and wakes the descriptor's poll queue.  Rules: internal.h.
 */
#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/wait_bit.h>

#include "internal.h"

/**
 * struct waitvar_watch_file - a WATCH descriptor's private data
 * @w: its condition, listed on the variable
 * @wbq: its entry on the variable's hashed wait queue; wakes @pollq
 * @pollq: where poll() and read() wait
 * @user: charged one waiter until release, a reference held
 */
struct waitvar_watch_file {
	struct waitvar_waiter w;
	struct wait_bit_queue_entry wbq;
	wait_queue_head_t pollq;
	struct waitvar_user *user;
};

/* @watch's condition holds: wake its poll() and read() waiters. */
void waitvar_watch_notify(struct waitvar_watch_file *watch)
{
	wake_up_interruptible_poll(&watch->pollq, EPOLLIN | EPOLLRDNORM);
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
		waitvar_watch_notify(watch);
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
