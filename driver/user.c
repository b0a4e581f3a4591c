// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/waitvar per-user limits: what each real uid holds across every open
 * file, as epoll's max_user_watches counts per user.  ucounts are not
 * exported to modules, so the driver keeps its own table.  Rules:
 * internal.h.
 */
#include <linux/hashtable.h>
#include <linux/module.h>
#include <linux/refcount.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "internal.h"

static unsigned int max_user_vars = 16384;
module_param(max_user_vars, uint, 0644);
MODULE_PARM_DESC(max_user_vars, "Most variables one user's files may hold");

static unsigned int max_user_waiters = 4096;
module_param(max_user_waiters, uint, 0644);
MODULE_PARM_DESC(max_user_waiters,
		 "Most waiters (WAITs, WAITV entries, WATCH descriptors) one user's files may hold");

static unsigned int max_user_names = 128;
module_param(max_user_names, uint, 0644);
MODULE_PARM_DESC(max_user_names, "Most named variables one user may create");

#define WAITVAR_USER_BITS	6
static DEFINE_HASHTABLE(waitvar_users, WAITVAR_USER_BITS);
static DEFINE_SPINLOCK(waitvar_users_lock);	/* protects waitvar_users */

unsigned int waitvar_user_limit(enum waitvar_charge what)
{
	switch (what) {
	case WAITVAR_CHARGE_VARS:
		return READ_ONCE(max_user_vars);
	case WAITVAR_CHARGE_WAITERS:
		return READ_ONCE(max_user_waiters);
	case WAITVAR_CHARGE_NAMES:
		return READ_ONCE(max_user_names);
	default:
		return 0;
	}
}

/* The counters of @uid, made on first use; NULL without memory. */
struct waitvar_user *waitvar_user_get(kuid_t uid)
{
	u32 key = from_kuid(&init_user_ns, uid);
	struct waitvar_user *user, *fresh;

	fresh = kzalloc(sizeof(*fresh), GFP_KERNEL);
	spin_lock(&waitvar_users_lock);
	hash_for_each_possible(waitvar_users, user, node, key) {
		if (uid_eq(user->uid, uid)) {
			refcount_inc(&user->ref);
			spin_unlock(&waitvar_users_lock);
			kfree(fresh);
			return user;
		}
	}
	if (fresh) {
		fresh->uid = uid;
		refcount_set(&fresh->ref, 1);
		hash_add(waitvar_users, &fresh->node, key);
	}
	spin_unlock(&waitvar_users_lock);
	return fresh;
}

struct waitvar_user *waitvar_user_hold(struct waitvar_user *user)
{
	refcount_inc(&user->ref);
	return user;
}

void waitvar_user_put(struct waitvar_user *user)
{
	if (!refcount_dec_and_lock(&user->ref, &waitvar_users_lock))
		return;
	hash_del(&user->node);
	spin_unlock(&waitvar_users_lock);
	kfree(user);
}

/*
 * Takes @n of @what from @user's allowance: 0, or -ENOSPC and nothing.
 * The count moves only when the charge fits, so a charge that fails never
 * shows, even for a moment, to another of the same user.
 */
int waitvar_charge(struct waitvar_user *user, enum waitvar_charge what, unsigned int n)
{
	unsigned int limit = waitvar_user_limit(what);
	int old = atomic_read(&user->count[what]);

	do {
		if (n > limit || (unsigned int)old > limit - n)
			return -ENOSPC;
	} while (!atomic_try_cmpxchg(&user->count[what], &old, old + n));
	return 0;
}

void waitvar_uncharge(struct waitvar_user *user, enum waitvar_charge what, unsigned int n)
{
	atomic_sub(n, &user->count[what]);
}
