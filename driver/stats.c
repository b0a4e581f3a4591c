// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/waitvar counters: STATS, and debugfs's waitvar/ directory, with a
 * summary of every open file and one file<N> per open file.  Rules:
 * internal.h.
 */
#include <linux/capability.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/pid.h>
#include <linux/seq_file.h>
#include <linux/stddef.h>
#include <linux/string.h>
#include <linux/user_namespace.h>
#include <linux/wait_bit.h>

#include "internal.h"

static DEFINE_MUTEX(waitvar_files_lock);	/* protects the two below */
static LIST_HEAD(waitvar_files);
static unsigned int waitvar_next_serial;
static struct dentry *waitvar_debugfs;

long waitvar_ioctl_stats(struct waitvar_file *wf, struct waitvar_stats *arg)
{
	struct waitvar_counters *c;
	struct waitvar_var *var;

	/* Every field after flags is out only. */
	if (arg->flags || memchr_inv(&arg->waiters, 0, sizeof(*arg) -
				     offsetof(struct waitvar_stats, waiters)))
		return -EINVAL;
	var = waitvar_var_lookup(wf, arg->id, MAY_READ);
	if (IS_ERR(var))
		return PTR_ERR(var);
	c = &var->stats;
	arg->waiters = READ_ONCE(var->nr_waiters);
	/* Bits of a hash of a kernel address: as %pK shows them. */
	if (ns_capable_noaudit(&init_user_ns, CAP_SYSLOG))
		arg->bucket = var_waitqueue_index(&var->value);
	else
		arg->bucket = WAITVAR_BUCKET_HIDDEN;
	arg->waits = atomic64_read(&c->waits);
	arg->wakes = atomic64_read(&c->wakes);
	arg->woken = atomic64_read(&c->woken);
	arg->spurious = atomic64_read(&c->spurious);
	arg->timeouts = atomic64_read(&c->timeouts);
	arg->signals = atomic64_read(&c->signals);
	waitvar_var_put(var);
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
	pid_t owner = 0;
	unsigned long id;

	/*
	 * As /proc shows pids: in the reader's namespace, 0 if not there or
	 * gone (an exited opener's number may already name another process).
	 */
	rcu_read_lock();
	if (pid_has_task(wf->owner, PIDTYPE_TGID))
		owner = pid_vnr(wf->owner);
	rcu_read_unlock();
	seq_printf(m, "owner %d\n", owner);
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
	u64 reserved = 0;
	struct waitvar_file *wf;
	struct waitvar_var *var;
	unsigned int files = 0;

	mutex_lock(&waitvar_files_lock);
	list_for_each_entry(wf, &waitvar_files, node) {
		XA_STATE(xas, &wf->vars, 0);

		files++;
		rcu_read_lock();
		/* An id a command in flight holds loads as a zero entry. */
		xas_for_each(&xas, var, ULONG_MAX) {
			if (xa_is_zero(var)) {
				reserved++;
				continue;
			}
			if (xas_retry(&xas, var))
				continue;
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
	seq_printf(m, "files %u\nvariables %llu\nreserved %llu\nwaiters %llu\n", files, vars,
		   reserved, waiters);
	seq_printf(m, "waits %llu\nwakes %llu\nwoken %llu\nspurious %llu\n",
		   waits, wakes, woken, spurious);
	seq_printf(m, "filtered_walk_breaks %llu\n", waitvar_filtered_walk_breaks());
	waitvar_named_show(m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(waitvar_summary);

void waitvar_debugfs_init(void)
{
	waitvar_debugfs = debugfs_create_dir("waitvar", NULL);
	debugfs_create_file("summary", 0444, waitvar_debugfs, NULL, &waitvar_summary_fops);
}

void waitvar_debugfs_exit(void)
{
	debugfs_remove(waitvar_debugfs);
}

/* Lists a new open file and gives it a debugfs file. */
void waitvar_debugfs_add(struct waitvar_file *wf)
{
	char name[16];

	mutex_lock(&waitvar_files_lock);
	wf->serial = waitvar_next_serial++;
	list_add_tail(&wf->node, &waitvar_files);
	mutex_unlock(&waitvar_files_lock);
	snprintf(name, sizeof(name), "file%u", wf->serial);
	wf->dentry = debugfs_create_file(name, 0444, waitvar_debugfs, wf, &waitvar_file_fops);
}

/* Removes an open file's debugfs file, draining its readers, and unlists it. */
void waitvar_debugfs_del(struct waitvar_file *wf)
{
	debugfs_remove(wf->dentry);
	mutex_lock(&waitvar_files_lock);
	list_del(&wf->node);
	mutex_unlock(&waitvar_files_lock);
}
