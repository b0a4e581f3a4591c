// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/waitvar named variables: they belong to no file but to the names
 * list, which holds a reference on each; any file may attach one under an
 * id of its own, as the owner, group and mode allow.  Rules: internal.h.
 */
#include <linux/cred.h>
#include <linux/ctype.h>
#include <linux/fs.h>
#include <linux/lockdep.h>
#include <linux/module.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "internal.h"

static unsigned int max_named_vars = 256;
module_param(max_named_vars, uint, 0644);
MODULE_PARM_DESC(max_named_vars, "Most named variables the device may hold");

static DEFINE_MUTEX(waitvar_names_lock);	/* protects the two below */
static LIST_HEAD(waitvar_names);
static unsigned int waitvar_nr_named;

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
	waitvar_var_end(var);
	waitvar_var_put(var);
}

long waitvar_ioctl_named_create(struct waitvar_file *wf, struct waitvar_named *arg)
{
	struct waitvar_var *var;
	int ret;

	if (waitvar_create_flags_bad(arg->flags) || (arg->mode & ~0777U) || arg->id ||
	    arg->reserved || !waitvar_name_ok(arg->name))
		return -EINVAL;
	var = waitvar_var_new(arg->value, arg->flags);
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
		/* The names' reference is the one waitvar_var_new() returned. */
		list_add_tail(&var->name_node, &waitvar_names);
		waitvar_nr_named++;
	}
	mutex_unlock(&waitvar_names_lock);
	if (ret)
		waitvar_var_put(var);
	return ret;
}

void waitvar_ioctl_named_create_undo(struct waitvar_file *wf, struct waitvar_named *arg,
				     struct waitvar_call *call)
{
	struct waitvar_var *var = xa_load(&wf->vars, arg->id);

	mutex_lock(&waitvar_names_lock);
	if (var && !list_empty(&var->name_node))
		waitvar_unlink(var);
	mutex_unlock(&waitvar_names_lock);
	waitvar_detach(wf, arg->id);
}

long waitvar_ioctl_named_open(struct waitvar_file *wf, struct waitvar_named *arg)
{
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

void waitvar_ioctl_named_open_undo(struct waitvar_file *wf, struct waitvar_named *arg,
				   struct waitvar_call *call)
{
	waitvar_detach(wf, arg->id);
}

long waitvar_ioctl_named_remove(struct waitvar_file *wf, struct waitvar_named *arg)
{
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

long waitvar_ioctl_list(struct waitvar_file *wf, struct waitvar_list *arg)
{
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

/* The names, for debugfs's summary. */
void waitvar_named_show(struct seq_file *m)
{
	struct waitvar_var *var;

	mutex_lock(&waitvar_names_lock);
	seq_printf(m, "named %u\n", waitvar_nr_named);
	list_for_each_entry(var, &waitvar_names, name_node)
		seq_printf(m, "  %s uid %u gid %u mode %04o value %llu waiters %u\n", var->name,
			   from_kuid(&init_user_ns, var->uid), from_kgid(&init_user_ns, var->gid),
			   var->mode, (u64)atomic64_read(&var->value), READ_ONCE(var->nr_waiters));
	mutex_unlock(&waitvar_names_lock);
}

/* Module exit: no file is open, so the names hold the last references. */
void waitvar_named_exit(void)
{
	struct waitvar_var *var, *next;

	mutex_lock(&waitvar_names_lock);
	list_for_each_entry_safe(var, next, &waitvar_names, name_node)
		waitvar_unlink(var);
	mutex_unlock(&waitvar_names_lock);
}
