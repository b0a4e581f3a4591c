// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/waitvar named variables: they belong to no file but to the names
 * list, which holds a reference on each; any file may attach one under an
 * id of its own, as the owner, group and mode allow.  A name lives in the
 * user namespace it was made in: the variable holds a reference on that
 * namespace (get_user_ns()), and lookups and LIST see only the caller's.
 * The names are hashed by (namespace, name), and each namespace keeps its
 * own list and count: a lookup compares the names of one hash chain, LIST
 * and the per-namespace limit read only the caller's namespace.
 * Rules: internal.h.
 */
#include <linux/cred.h>
#include <linux/ctype.h>
#include <linux/fs.h>
#include <linux/hashtable.h>
#include <linux/lockdep.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/stringhash.h>
#include <linux/uaccess.h>
#include <linux/user_namespace.h>

#include "internal.h"

static unsigned int max_named_vars = 1024;
module_param(max_named_vars, uint, 0644);
MODULE_PARM_DESC(max_named_vars, "Most named variables one user namespace may hold");

unsigned int waitvar_max_named_vars(void)
{
	return READ_ONCE(max_named_vars);
}

/*
 * The names of one user namespace, in the order they were made; it holds
 * no reference on the namespace (each name does) and goes with its last
 * name.
 */
struct waitvar_name_space {
	struct user_namespace *ns;
	struct hlist_node node;		/* on waitvar_spaces */
	struct list_head names;		/* struct waitvar_var.name_node */
	unsigned int nr;
};

#define WAITVAR_NAME_HASH_BITS	10
#define WAITVAR_SPACE_HASH_BITS	6

static DEFINE_MUTEX(waitvar_names_lock);	/* protects the three below */
static DEFINE_HASHTABLE(waitvar_name_hash, WAITVAR_NAME_HASH_BITS);
static DEFINE_HASHTABLE(waitvar_spaces, WAITVAR_SPACE_HASH_BITS);
static unsigned int waitvar_nr_named;

/*
 * A name is "/" and 1 to WAITVAR_NAME_MAX - 2 of [A-Za-z0-9._-], then
 * zeros to the end of the field.  The kernel's isalnum() also takes
 * Latin-1 letters (0xc0 to 0xff): ASCII only.
 */
static bool waitvar_name_ok(const char *name)
{
	size_t len = strnlen(name, WAITVAR_NAME_MAX), i;

	if (len < 2 || len == WAITVAR_NAME_MAX || name[0] != '/' ||
	    memchr_inv(name + len, 0, WAITVAR_NAME_MAX - len))
		return false;
	for (i = 1; i < len; i++)
		if (!isascii(name[i]) || (!isalnum(name[i]) && !strchr("._-", name[i])))
			return false;
	return true;
}

static u32 waitvar_name_key(struct user_namespace *ns, const char *name)
{
	return full_name_hash(ns, name, strlen(name));
}

/* The names of @ns, or NULL if it has none. */
static struct waitvar_name_space *waitvar_space(struct user_namespace *ns)
{
	struct waitvar_name_space *sp;

	lockdep_assert_held(&waitvar_names_lock);
	hash_for_each_possible(waitvar_spaces, sp, node, (unsigned long)ns)
		if (sp->ns == ns)
			return sp;
	return NULL;
}

/*
 * The variable named @name in the caller's user namespace, or NULL; @in_ns
 * gets how many names that namespace has.
 */
static struct waitvar_var *waitvar_find_name(const char *name, unsigned int *in_ns)
{
	struct user_namespace *ns = current_user_ns();
	struct waitvar_name_space *sp = waitvar_space(ns);
	struct waitvar_var *var;

	*in_ns = sp ? sp->nr : 0;
	hash_for_each_possible(waitvar_name_hash, var, name_hash, waitvar_name_key(ns, name))
		if (var->user_ns == ns && !strcmp(var->name, name))
			return var;
	return NULL;
}

/*
 * Lists @var, whose name is free, in the caller's namespace, in the names
 * of that namespace (@spare if it has none yet; @spare is then taken).
 */
static void waitvar_link(struct waitvar_var *var, struct waitvar_name_space **spare)
{
	struct waitvar_name_space *sp = waitvar_space(var->user_ns);

	if (!sp) {
		sp = *spare;
		*spare = NULL;
		sp->ns = var->user_ns;
		INIT_LIST_HEAD(&sp->names);
		hash_add(waitvar_spaces, &sp->node, (unsigned long)sp->ns);
	}
	/* The names hold one reference, the call the other. */
	kref_get(&var->ref);
	list_add_tail(&var->name_node, &sp->names);
	hash_add(waitvar_name_hash, &var->name_hash, waitvar_name_key(var->user_ns, var->name));
	sp->nr++;
	waitvar_nr_named++;
}

/* Takes @var off the names: it dies, its waiters see -EIDRM. */
static void waitvar_unlink(struct waitvar_var *var)
{
	struct waitvar_name_space *sp = waitvar_space(var->user_ns);

	lockdep_assert_held(&waitvar_names_lock);
	list_del_init(&var->name_node);
	hash_del(&var->name_hash);
	if (!--sp->nr) {
		hash_del(&sp->node);
		kfree(sp);
	}
	waitvar_nr_named--;
	waitvar_uncharge(var->owner, WAITVAR_CHARGE_NAMES, 1);
	waitvar_var_end(var);
	waitvar_var_put(var);
}

/* A new named variable, not yet published nor charged its name. */
static struct waitvar_var *waitvar_named_new(struct waitvar_file *wf, struct waitvar_named *arg)
{
	struct waitvar_var *var;

	var = waitvar_var_new(wf->user, arg->value, arg->flags);
	if (IS_ERR(var))
		return var;
	var->named = true;
	var->uid = current_fsuid();
	var->gid = current_fsgid();
	var->mode = arg->mode;
	var->user_ns = get_user_ns(current_user_ns());
	strscpy(var->name, arg->name, sizeof(var->name));
	return var;
}

long waitvar_ioctl_named_create(struct waitvar_file *wf, struct waitvar_named *arg,
				struct waitvar_call *call)
{
	struct waitvar_name_space *spare;
	struct waitvar_var *var;
	unsigned int in_ns;
	int ret;

	if (waitvar_create_flags_bad(arg->flags) || (arg->mode & ~0777U) || arg->id ||
	    arg->reserved || !waitvar_name_ok(arg->name))
		return -EINVAL;
	var = waitvar_named_new(wf, arg);
	if (IS_ERR(var))
		return PTR_ERR(var);
	/*
	 * Allocations happen before the names lock: none may stall it.  The
	 * namespace's first name needs a list; the others free it unused.
	 */
	spare = kzalloc(sizeof(*spare), GFP_KERNEL_ACCOUNT);
	if (!spare) {
		waitvar_var_put(var);
		return -ENOMEM;
	}
	ret = waitvar_reserve(wf, &arg->id);
	if (ret) {
		kfree(spare);
		waitvar_var_put(var);
		return ret;
	}

	mutex_lock(&waitvar_names_lock);
	if (waitvar_find_name(arg->name, &in_ns))
		ret = -EEXIST;
	else if (in_ns >= READ_ONCE(max_named_vars))
		ret = -ENOSPC;
	else
		ret = waitvar_charge(wf->user, WAITVAR_CHARGE_NAMES, 1);
	if (!ret) {
		waitvar_link(var, &spare);
		call->var = var;
	}
	mutex_unlock(&waitvar_names_lock);
	kfree(spare);
	if (ret) {
		waitvar_unreserve(wf, arg->id, call);
		waitvar_var_put(var);
	}
	return ret;
}

/* NAMED_CREATE and NAMED_OPEN: the id reached userspace. */
void waitvar_ioctl_named_commit(struct waitvar_file *wf, struct waitvar_named *arg,
				struct waitvar_call *call)
{
	waitvar_publish(wf, arg->id, call);
}

/*
 * The id did not reach userspace: take away the name this call made, if
 * nobody removed it meanwhile, and only that variable, never by its id.
 */
void waitvar_ioctl_named_create_undo(struct waitvar_file *wf, struct waitvar_named *arg,
				     struct waitvar_call *call)
{
	/* The names' reference keeps it while it is listed. */
	mutex_lock(&waitvar_names_lock);
	if (!list_empty(&call->var->name_node))
		waitvar_unlink(call->var);
	mutex_unlock(&waitvar_names_lock);
	waitvar_unreserve(wf, arg->id, call);
}

long waitvar_ioctl_named_open(struct waitvar_file *wf, struct waitvar_named *arg,
			      struct waitvar_call *call)
{
	struct waitvar_var *var;
	unsigned int in_ns;
	int ret;

	if (arg->flags || arg->mode || arg->value || arg->id || arg->reserved ||
	    !waitvar_name_ok(arg->name))
		return -EINVAL;
	ret = waitvar_reserve(wf, &arg->id);
	if (ret)
		return ret;
	mutex_lock(&waitvar_names_lock);
	var = waitvar_find_name(arg->name, &in_ns);
	if (!var) {
		ret = -ENOENT;
	} else if (!waitvar_permitted(var, MAY_READ)) {
		ret = -EACCES;
	} else {
		kref_get(&var->ref);
		call->var = var;
	}
	mutex_unlock(&waitvar_names_lock);
	if (ret)
		waitvar_unreserve(wf, arg->id, call);
	return ret;
}

/* The id did not reach userspace: the variable lives on, unattached. */
void waitvar_ioctl_named_open_undo(struct waitvar_file *wf, struct waitvar_named *arg,
				   struct waitvar_call *call)
{
	waitvar_unreserve(wf, arg->id, call);
}

long waitvar_ioctl_named_remove(struct waitvar_file *wf, struct waitvar_named *arg)
{
	struct waitvar_var *var;
	unsigned int in_ns;
	int ret = 0;

	if (arg->flags || arg->mode || arg->value || arg->id || arg->reserved ||
	    !waitvar_name_ok(arg->name))
		return -EINVAL;
	mutex_lock(&waitvar_names_lock);
	var = waitvar_find_name(arg->name, &in_ns);
	if (!var)
		ret = -ENOENT;
	/* Its owner may always remove it, whatever mode it gave it. */
	else if (!uid_eq(current_fsuid(), var->uid) && !waitvar_permitted(var, MAY_WRITE))
		ret = -EACCES;
	else
		waitvar_unlink(var);
	mutex_unlock(&waitvar_names_lock);
	return ret;
}

/*
 * The names are gathered under the lock into a kernel buffer and copied out
 * after it: a buffer that faults slowly (FUSE, userfaultfd) must not hold up
 * every other named-variable command.
 */
long waitvar_ioctl_list(struct waitvar_file *wf, struct waitvar_list *arg)
{
	struct user_namespace *ns = current_user_ns();
	u32 used = 0, needed = 0, count = 0;
	struct waitvar_name_space *sp;
	struct waitvar_var *var;
	unsigned int nr;
	size_t room;
	char *buf;
	int ret = 0;

	if (arg->flags || arg->count || arg->needed)
		return -EINVAL;
	/*
	 * Room for the namespace's names as they are now, allocated (and
	 * charged to the caller) outside the lock; names made meanwhile may
	 * not fit, as if made after.
	 */
	mutex_lock(&waitvar_names_lock);
	sp = waitvar_space(ns);
	nr = sp ? sp->nr : 0;
	mutex_unlock(&waitvar_names_lock);
	room = min_t(size_t, arg->size, (size_t)nr * WAITVAR_NAME_MAX);
	buf = kvmalloc(max_t(size_t, room, 1), GFP_KERNEL_ACCOUNT);
	if (!buf)
		return -ENOMEM;
	mutex_lock(&waitvar_names_lock);
	sp = waitvar_space(ns);
	if (!sp)
		goto unlock;
	list_for_each_entry(var, &sp->names, name_node) {
		u32 len = strlen(var->name) + 1;

		if (!waitvar_listable(var))
			continue;
		needed += len;
		if (used + len > room)
			continue;
		memcpy(buf + used, var->name, len);
		used += len;
		count++;
	}
unlock:
	mutex_unlock(&waitvar_names_lock);
	if (copy_to_user(u64_to_user_ptr(arg->names), buf, used))
		ret = -EFAULT;
	kvfree(buf);
	arg->count = count;
	arg->needed = needed;
	return ret;
}

/*
 * The names, for debugfs's summary, namespace by namespace, after the
 * longest chain of the names' hash table, the most names a lookup compares.
 */
void waitvar_named_show(struct seq_file *m)
{
	unsigned int bkt, chain, longest = 0;
	struct waitvar_name_space *sp;
	struct waitvar_var *var;

	mutex_lock(&waitvar_names_lock);
	for (bkt = 0; bkt < HASH_SIZE(waitvar_name_hash); bkt++) {
		chain = 0;
		hlist_for_each_entry(var, &waitvar_name_hash[bkt], name_hash)
			chain++;
		longest = max(longest, chain);
	}
	seq_printf(m, "named %u\nname_chain_max %u\n", waitvar_nr_named, longest);
	hash_for_each(waitvar_spaces, bkt, sp, node)
		list_for_each_entry(var, &sp->names, name_node)
			seq_printf(m, "  %s uid %u gid %u mode %04o value %llu waiters %u userns %u\n",
				   var->name, from_kuid(&init_user_ns, var->uid),
				   from_kgid(&init_user_ns, var->gid), var->mode,
				   (u64)atomic64_read(&var->value), READ_ONCE(var->nr_waiters),
				   var->user_ns->ns.inum);
	mutex_unlock(&waitvar_names_lock);
}

/* Module exit: no file is open, so the names hold the last references. */
void waitvar_named_exit(void)
{
	struct waitvar_name_space *sp;
	struct hlist_node *next;
	unsigned int bkt, n;

	mutex_lock(&waitvar_names_lock);
	/* A namespace's last name frees its list: count, do not walk it. */
	hash_for_each_safe(waitvar_spaces, bkt, next, sp, node)
		for (n = sp->nr; n; n--)
			waitvar_unlink(list_first_entry(&sp->names, struct waitvar_var,
							name_node));
	mutex_unlock(&waitvar_names_lock);
}
