// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/waitvar WAIT and WAITV: a task sleeps on the hashed wait queue keyed
 * by &var->value, in the wait_var_event() variant its mode, flags and the
 * variable's lock select; WAITV runs that loop over several queues.  Each
 * waiter is also listed on its variable, so that the counters can tell real
 * wakeups from spurious ones.  Rules: internal.h.
 */
#include <linux/bitops.h>
#include <linux/fs.h>
#include <linux/hrtimer.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/sched/jobctl.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <linux/time_namespace.h>
#include <linux/timekeeping.h>
#include <linux/wait_bit.h>

#include "internal.h"

static unsigned int max_uninterruptible_ms = 10000;
module_param(max_uninterruptible_ms, uint, 0644);
MODULE_PARM_DESC(max_uninterruptible_ms,
		 "Longest IO or UNINTERRUPTIBLE wait, in ms; keep it well below the hung-task timeout");

unsigned int waitvar_max_uninterruptible_ms(void)
{
	return READ_ONCE(max_uninterruptible_ms);
}

#ifdef CONFIG_WAITVAR_TEST_HOOKS
static unsigned int test_waitv_queue_hold_ms;
module_param(test_waitv_queue_hold_ms, uint, 0644);
MODULE_PARM_DESC(test_waitv_queue_hold_ms,
		 "Test builds: after WAITV queues its first variable, spin until this is 0 again, at most this many ms");

static atomic_t test_waitv_queue_holds = ATOMIC_INIT(0);

static int waitvar_test_holds_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&test_waitv_queue_holds));
}

static const struct kernel_param_ops waitvar_test_holds_ops = {
	.get = waitvar_test_holds_get,
};
module_param_cb(test_waitv_queue_holds, &waitvar_test_holds_ops, NULL, 0444);
MODULE_PARM_DESC(test_waitv_queue_holds, "Test builds: how many WAITVs entered that hold");

/*
 * Holds a WAITV between queueing its first variable and the rest, until
 * the test releases it: the test knows it is there by the count.
 */
static void waitvar_test_waitv_hold(void)
{
	unsigned int ms = min(READ_ONCE(test_waitv_queue_hold_ms), 5000U);
	unsigned long end = jiffies + msecs_to_jiffies(ms);

	if (!ms)
		return;
	atomic_inc(&test_waitv_queue_holds);
	while (READ_ONCE(test_waitv_queue_hold_ms) && time_before(jiffies, end))
		cpu_relax();
}
#else
static inline void waitvar_test_waitv_hold(void) { }
#endif

/*
 * Neither the cgroup v2 freezer nor a group stop (SIGSTOP taken by another
 * thread, a ptrace trap) wakes a TASK_KILLABLE sleeper: they set a jobctl
 * bit and wake interruptible ones only, so a long KILLABLE wait would hold
 * up a cgroup freeze or a group stop until it ended.  While a KILLABLE
 * wait sleeps, an hrtimer looks for such a request every
 * max_uninterruptible_ms (at least 10 ms), the bound on a sleep nothing
 * else ends, and wakes the task when it finds one.  Its condition then
 * reports it (waitvar_done()), and the wait returns -ERESTARTNOINTR: the
 * task stops or freezes on its way out, and the call restarts, with the
 * time left if its timeout is relative.  It never fails with EINTR.
 */
struct waitvar_jobctl_watch {
	struct hrtimer timer;
	struct task_struct *task;
	ktime_t period;
	bool requested;
};

#define WAITVAR_JOBCTL_REQUESTS (JOBCTL_STOP_PENDING | JOBCTL_TRAP_MASK | JOBCTL_TRAP_FREEZE)

static enum hrtimer_restart waitvar_jobctl_check(struct hrtimer *timer)
{
	struct waitvar_jobctl_watch *jw = container_of(timer, struct waitvar_jobctl_watch, timer);

	/*
	 * The bit is set before TIF_SIGPENDING, which only the task clears,
	 * in its signal path: seen with it, -ERESTARTNOINTR cannot reach
	 * userspace.  Wakes as a waker does: the barrier in try_to_wake_up()
	 * pairs with set_current_state() before the condition.
	 */
	if ((READ_ONCE(jw->task->jobctl) & WAITVAR_JOBCTL_REQUESTS) &&
	    task_sigpending(jw->task)) {
		WRITE_ONCE(jw->requested, true);
		wake_up_process(jw->task);
		return HRTIMER_NORESTART;
	}
	hrtimer_forward_now(timer, jw->period);
	return HRTIMER_RESTART;
}

/* Starts @jw for a wait in @mode; it watches only a KILLABLE one. */
static void waitvar_jobctl_start(struct waitvar_jobctl_watch *jw, u32 mode)
{
	jw->task = current;
	jw->requested = false;
	jw->period = ms_to_ktime(max(READ_ONCE(max_uninterruptible_ms), 10U));
	hrtimer_init_on_stack(&jw->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	jw->timer.function = waitvar_jobctl_check;
	if (mode == WAITVAR_MODE_KILLABLE)
		hrtimer_start(&jw->timer, jw->period, HRTIMER_MODE_REL);
}

static void waitvar_jobctl_stop(struct waitvar_jobctl_watch *jw)
{
	hrtimer_cancel(&jw->timer);
	destroy_hrtimer_on_stack(&jw->timer);
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
 * one if the condition is still false.  waitvar_ioctl_wait() takes the
 * last one back if the timeout or a signal, not a wake, ended the sleep.
 * A KILLABLE wait's stop or freeze request also ends it (w->yielded).
 */
static bool waitvar_done(struct waitvar_waiter *w)
{
	bool done = waitvar_test(w);

	/* A stop or freeze to go to, not a wakeup: not counted. */
	if (!done && w->jobctl && READ_ONCE(w->jobctl->requested)) {
		w->yielded = true;
		return true;
	}
	if (++w->evals > 2) {
		atomic64_inc(&w->var->stats.woken);
		if (!done)
			atomic64_inc(&w->var->stats.spurious);
	}
	return done;
}

/*
 * The time a WAIT or WAITV may sleep, from its flags and timeout_ns.  An
 * hrtimer times it (the _hrtimeout and _deadline variants), or with
 * WAITVAR_WAIT_JIFFIES the jiffies of the _timeout variants.
 */
struct waitvar_timeout {
	bool timed;		/* false: no timeout */
	bool restart;		/* a signal may restart the call */
	bool coarse;		/* WAITVAR_WAIT_JIFFIES */
	u64 ns;			/* from now, on CLOCK_MONOTONIC */
	u64 end_ns;		/* a relative timeout's end, ktime_get_ns() */
	long jiffies;
	clockid_t clock;	/* of expires */
	enum hrtimer_mode hmode; /* relative or absolute expires */
	ktime_t expires;	/* KTIME_MAX: never */
};

/*
 * Whole ticks plus two, the partial one and the one the wait starts in, so
 * that -ETIMEDOUT never comes before the time has passed; no time at all is
 * a single check.
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

/*
 * A CLOCK_MONOTONIC deadline of the caller's time namespace on the host's
 * clock, as clock_nanosleep() and futex take it (timens_ktime_to_host(),
 * whose helper modules cannot reach): one already past there is 0.
 */
static ktime_t waitvar_monotonic_to_host(ktime_t when)
{
#ifdef CONFIG_TIME_NS
	ktime_t off = timespec64_to_ktime(current->nsproxy->time_ns->offsets.monotonic);

	/* KTIME_MAX is "never" on every clock. */
	if (when == KTIME_MAX)
		return when;
	if (off >= 0)
		return when < off ? 0 : when - off;
	return when > KTIME_MAX + off ? KTIME_MAX : when - off;
#else
	return when;
#endif
}

static int waitvar_parse_timeout(u32 flags, u32 mode, u64 timeout_ns,
				 struct waitvar_timeout *t)
{
	u32 kind = flags & WAITVAR_WAIT_TIMEOUTS;
	ktime_t when = min_t(u64, timeout_ns, KTIME_MAX);
	u64 now;

	*t = (struct waitvar_timeout){ .restart = true, .clock = CLOCK_MONOTONIC,
				       .hmode = HRTIMER_MODE_ABS, .expires = KTIME_MAX };
	if (!kind)
		return timeout_ns || (flags & WAITVAR_WAIT_JIFFIES) ? -EINVAL : 0;
	if (hweight32(kind) > 1)
		return -EINVAL;
	t->timed = true;
	t->coarse = flags & WAITVAR_WAIT_JIFFIES;
	if (kind == WAITVAR_WAIT_TIMEOUT) {
		t->restart = false;
		t->ns = timeout_ns;
		t->end_ns = ktime_get_ns();
		t->end_ns += min(timeout_ns, U64_MAX - t->end_ns);
		t->hmode = HRTIMER_MODE_REL;
		t->expires = when;
	} else {
		if (kind == WAITVAR_WAIT_ABS_MONOTONIC) {
			when = waitvar_monotonic_to_host(when);
			now = ktime_get_ns();
		} else {
			now = ktime_get_real_ns();
			t->clock = CLOCK_REALTIME;
		}
		t->ns = (u64)when > now ? (u64)when - now : 0;
		t->expires = when;
	}
	/*
	 * A REALTIME deadline follows the clock, so setting the clock back
	 * could stretch a sleep no signal ends past max_uninterruptible_ms:
	 * there it becomes a MONOTONIC one, fixed when the wait starts.
	 */
	if (t->clock == CLOCK_REALTIME &&
	    (mode == WAITVAR_MODE_IO || mode == WAITVAR_MODE_UNINTERRUPTIBLE)) {
		t->clock = CLOCK_MONOTONIC;
		t->expires = ktime_add_safe(ktime_get(), min_t(u64, t->ns, KTIME_MAX));
	}
	/* No time left: a single check, with no timer to wait for. */
	if (!t->ns) {
		t->clock = CLOCK_MONOTONIC;
		t->hmode = HRTIMER_MODE_REL;
		t->expires = 0;
	}
	t->jiffies = waitvar_ns_to_jiffies(t->ns);
	return 0;
}

/*
 * No signal ends an IO or UNINTERRUPTIBLE wait, so it needs a timeout, and
 * one well below the hung-task detector's: the time left, whatever clock a
 * deadline named, is what the task will sleep, and an hrtimer may fire as
 * late as the task's timer slack after it: what PR_SET_TIMERSLACK added
 * to the default counts against the cap.  No time left arms no timer.
 */
static int waitvar_check_mode(u32 mode, const struct waitvar_timeout *t)
{
	u64 cap = (u64)READ_ONCE(max_uninterruptible_ms) * NSEC_PER_MSEC;
	u64 slack = t->coarse ? 0 : current->timer_slack_ns;

	slack -= min_t(u64, slack, current->default_timer_slack_ns);

	if (mode >= WAITVAR_MODE_COUNT)
		return -EINVAL;
	if (mode == WAITVAR_MODE_IO || mode == WAITVAR_MODE_UNINTERRUPTIBLE) {
		if (!t->timed)
			return -EINVAL;
		if (t->ns > cap || (t->ns && slack > cap - t->ns))
			return -EINVAL;
	}
	return 0;
}

/*
 * Every wait sleeps freezable: the cgroup freezer and suspend freeze the
 * task where it sleeps, and the wait goes on when it is thawed.  Without
 * it, a KILLABLE sleep could never be frozen.
 */
static unsigned int waitvar_mode_state(u32 mode)
{
	switch (mode) {
	case WAITVAR_MODE_INTERRUPTIBLE:
		return TASK_INTERRUPTIBLE | TASK_FREEZABLE;
	case WAITVAR_MODE_KILLABLE:
		return TASK_KILLABLE | TASK_FREEZABLE;
	default:
		return TASK_UNINTERRUPTIBLE | TASK_FREEZABLE;
	}
}

/*
 * A relative timeout cut short by a signal: what is left of it, to be
 * written back to the caller's timeout_ns, and -ERESTARTNOHAND, so that a
 * stop and continue, or a signal without a handler, restarts the call for
 * the time left, and one with a handler gets -EINTR (as select() does).
 * No restart block: its function would point into the module, which may
 * be gone by the time the task runs again.
 */
static long waitvar_restart_relative(const struct waitvar_timeout *t, u64 *timeout_ns)
{
	u64 now = ktime_get_ns();

	*timeout_ns = t->end_ns > now ? t->end_ns - now : 0;
	return -ERESTARTNOHAND;
}

/*
 * A KILLABLE wait left for a stop or freeze (struct waitvar_jobctl_watch):
 * it restarts whatever the signal path does, a relative one for the time
 * it has left.
 */
static long waitvar_restart_jobctl(const struct waitvar_timeout *t, u64 *timeout_ns)
{
	if (!t->restart)
		waitvar_restart_relative(t, timeout_ns);
	return -ERESTARTNOINTR;
}

/*
 * Turns what a wait_var_event() variant returned into 0 or an errno: the
 * jiffies variants return 0 on timeout and the jiffies left otherwise, the
 * hrtimer ones 0 or -ETIME.  A signal ends a wait with a relative timeout
 * as waitvar_restart_relative() says, updating @timeout_ns.
 */
static long waitvar_wait_result(long ret, const struct waitvar_timeout *t, u64 *timeout_ns)
{
	if (t->timed && t->coarse) {
		if (!ret)
			return -ETIMEDOUT;
		if (ret > 0)
			return 0;
	}
	if (ret == -ETIME)
		return -ETIMEDOUT;
	if (ret == -ERESTARTSYS && !t->restart)
		return waitvar_restart_relative(t, timeout_ns);
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
		if (!t->timed)
			ret = wait_var_event_any_lock(v, waitvar_done(w), &var->spin,
						      spin, state);
		else if (t->coarse)
			ret = wait_var_event_any_lock_timeout(v, waitvar_done(w), &var->spin,
							      spin, state, j);
		else if (t->hmode == HRTIMER_MODE_REL)
			ret = wait_var_event_any_lock_hrtimeout(v, waitvar_done(w), &var->spin,
								spin, state, t->expires);
		else
			ret = wait_var_event_any_lock_deadline(v, waitvar_done(w), &var->spin,
							       spin, state, t->clock, t->expires);
		spin_unlock(&var->spin);
	} else {
		mutex_lock(&var->mutex);
		if (!t->timed)
			ret = wait_var_event_any_lock(v, waitvar_done(w), &var->mutex,
						      mutex, state);
		else if (t->coarse)
			ret = wait_var_event_any_lock_timeout(v, waitvar_done(w), &var->mutex,
							      mutex, state, j);
		else if (t->hmode == HRTIMER_MODE_REL)
			ret = wait_var_event_any_lock_hrtimeout(v, waitvar_done(w), &var->mutex,
								mutex, state, t->expires);
		else
			ret = wait_var_event_any_lock_deadline(v, waitvar_done(w), &var->mutex,
							       mutex, state, t->clock, t->expires);
		mutex_unlock(&var->mutex);
	}
	return ret;
}

/*
 * What the wait_var_event() variants expand to (the wait.h idiom: test the
 * condition, and only if it is false enter ___wait_var_event()), with the
 * state, the exclusivity and the sleep of the variant the mode and flags
 * select, and TASK_FREEZABLE added: no variant takes a state to add it to.
 * The timed forms return as the _hrtimeout and _deadline variants do
 * (___wait_var_event_hrtimer()), or with WAITVAR_WAIT_JIFFIES as the
 * _timeout variants do.
 */
static long waitvar_sleep(struct waitvar_waiter *w, u32 mode, const struct waitvar_timeout *t)
{
	unsigned int state = waitvar_mode_state(mode);
	atomic64_t *v = &w->var->value;
	long j = t->jiffies;
	long __ret = j;		/* ___wait_cond_timeout() updates it */

	if (w->var->lock_kind != WAITVAR_LOCK_NONE)
		return waitvar_sleep_locked(w, mode, t);

	if (!t->timed) {
		if (waitvar_done(w))
			return 0;
		return ___wait_var_event(v, waitvar_done(w), state, w->exclusive, 0,
					 schedule());
	}
	if (!t->coarse) {
		if (waitvar_done(w))
			return 0;
		if (mode == WAITVAR_MODE_IO)
			return ___wait_var_event_hrtimer(v, waitvar_done(w), state, w->exclusive,
							 t->clock, t->expires, t->hmode,
							 io_schedule());
		return ___wait_var_event_hrtimer(v, waitvar_done(w), state, w->exclusive,
						 t->clock, t->expires, t->hmode, schedule());
	}
	if (___wait_cond_timeout(waitvar_done(w)))
		return __ret;
	/* Not __ret: the loop's own __ret would be initialised from itself. */
	if (mode == WAITVAR_MODE_IO)
		return ___wait_var_event(v, ___wait_cond_timeout(waitvar_done(w)), state,
					 w->exclusive, j, __ret = io_schedule_timeout(__ret));
	return ___wait_var_event(v, ___wait_cond_timeout(waitvar_done(w)), state,
				 w->exclusive, j, __ret = schedule_timeout(__ret));
}

long waitvar_ioctl_wait(struct waitvar_file *wf, struct waitvar_wait *arg)
{
	struct waitvar_jobctl_watch jw;
	struct waitvar_waiter w = {};
	struct waitvar_timeout t;
	long ret;

	if ((arg->flags & ~WAITVAR_WAIT_FLAGS) || arg->op >= WAITVAR_OP_COUNT || arg->value)
		return -EINVAL;
	ret = waitvar_parse_timeout(arg->flags, arg->mode, arg->timeout_ns, &t);
	if (!ret)
		ret = waitvar_check_mode(arg->mode, &t);
	if (ret)
		return ret;
	w.exclusive = arg->flags & WAITVAR_WAIT_EXCLUSIVE;
	w.var = waitvar_var_lookup(wf, arg->id, MAY_READ);
	if (IS_ERR(w.var))
		return PTR_ERR(w.var);
	if (w.var->lock_kind != WAITVAR_LOCK_NONE &&
	    (w.exclusive || arg->mode == WAITVAR_MODE_IO)) {
		waitvar_var_put(w.var);
		return -EINVAL;
	}
	ret = waitvar_charge(wf->user, WAITVAR_CHARGE_WAITERS, 1);
	if (ret) {
		waitvar_var_put(w.var);
		return ret;
	}
	w.op = arg->op;
	w.operand = arg->operand;
	w.task = current;

	atomic64_inc(&w.var->stats.waits);
	waitvar_list_waiter(&w);
	w.jobctl = &jw;
	waitvar_jobctl_start(&jw, arg->mode);
	ret = waitvar_wait_result(waitvar_sleep(&w, arg->mode, &t), &t, &arg->timeout_ns);
	waitvar_jobctl_stop(&jw);
	/*
	 * Off the queue now: a wake that came while it left (an exclusive one
	 * may have picked it) made the condition true first, so a last test
	 * finds it, and the wait ends as woken rather than leave it unused.
	 */
	if (!ret && w.yielded && !waitvar_test(&w))
		ret = waitvar_restart_jobctl(&t, &arg->timeout_ns);
	waitvar_unlist_waiter(&w);
	waitvar_account_end(w.var, ret);
	if (ret && w.evals > 2 && !w.yielded) {
		/* The last test followed the timeout or a signal, not a wake. */
		atomic64_dec(&w.var->stats.woken);
		atomic64_dec(&w.var->stats.spurious);
	}
	waitvar_uncharge(wf->user, WAITVAR_CHARGE_WAITERS, 1);
	waitvar_var_put(w.var);

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
	u32 queue;		/* the entry whose wbq is queued for this variable */
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

/* Queues @wq_entry on @wq_head unless it is there still; the task's state is untouched. */
static void waitvar_waitv_queue(struct wait_queue_head *wq_head,
				struct wait_queue_entry *wq_entry)
{
	unsigned long flags;

	spin_lock_irqsave(&wq_head->lock, flags);
	if (list_empty(&wq_entry->entry))
		__add_wait_queue(wq_head, wq_entry);
	spin_unlock_irqrestore(&wq_head->lock, flags);
}

/*
 * The loop of ___wait_var_event() over several queues: queue once on each
 * distinct variable's hashed wait queue, set the task's state, test every
 * condition, sleep, repeat.  A wake of one variable removes only its entry
 * (autoremove), so the loop can tell which variables woke it.
 *
 * The state is set once, after the last queue, not per queue as
 * prepare_to_wait_event() would: a wake that came between two queues took
 * its entry off and made the task runnable, and setting the state again
 * would undo that, so the task would sleep off that variable's queue and
 * miss its next wake.  A wake before set_current_state() finds the task
 * running and leaves its entry queued; set_current_state()'s barrier
 * orders the queueing before the tests, pairing with the waker's barrier
 * between its update and its waitqueue_active() check.
 *
 * The time is an hrtimer sleeper armed once, as ___wait_var_event_hrtimer()
 * arms one: it wakes the task and clears its task pointer when the time is
 * up.  With WAITVAR_WAIT_JIFFIES, each sleep is a schedule_timeout().
 */
static long waitvar_waitv_sleep(struct waitvar_vwait *vw, u32 count, u32 mode,
				const struct waitvar_timeout *t, int *index)
{
	unsigned int state = waitvar_mode_state(mode);
	long left = t->coarse ? t->jiffies : MAX_SCHEDULE_TIMEOUT;
	bool hr = t->timed && !t->coarse;
	struct waitvar_jobctl_watch jw;
	struct hrtimer_sleeper sl;
	bool slept = false;
	long ret = 0;
	u32 i;

	if (hr) {
		hrtimer_init_sleeper_on_stack(&sl, t->clock, t->hmode);
		if (t->hmode == HRTIMER_MODE_REL && !t->expires) {
			sl.task = NULL;		/* no time: one check */
		} else if (t->expires != KTIME_MAX) {
			hrtimer_set_expires_range_ns(&sl.timer, t->expires,
						     current->timer_slack_ns);
			hrtimer_sleeper_start_expires(&sl, t->hmode);
		}
	}

	for (i = 0; i < count; i++) {
		init_wait_var_entry(&vw[i].wbq, &vw[i].w.var->value, 0);
		vw[i].wq_head = __var_waitqueue(&vw[i].w.var->value);
	}

	waitvar_jobctl_start(&jw, mode);
	*index = waitvar_waitv_first(vw, count);
	while (*index < 0) {
		long intr = 0;

		for (i = 0; i < count; i++) {
			if (vw[i].queue != i)
				continue;
			waitvar_waitv_queue(vw[i].wq_head, &vw[i].wbq.wq_entry);
			if (!i)
				waitvar_test_waitv_hold();
		}
		set_current_state(state);
		if (signal_pending_state(state, current))
			intr = -ERESTARTSYS;
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
		if (READ_ONCE(jw.requested)) {
			ret = -ERESTARTNOINTR;
			break;
		}
		if (!left || (hr && !READ_ONCE(sl.task))) {
			ret = -ETIMEDOUT;
			break;
		}
		if (t->coarse && mode == WAITVAR_MODE_IO)
			left = io_schedule_timeout(left);
		else if (t->coarse)
			left = schedule_timeout(left);
		else if (mode == WAITVAR_MODE_IO)
			io_schedule();
		else
			schedule();
		slept = true;
		for (i = 0; i < count; i++) {
			/* Always take the kick, so none is left for a later round. */
			bool kicked = xchg(&vw[i].w.kicked, 0);

			vw[i].woken = kicked ||
				      list_empty_careful(&vw[vw[i].queue].wbq.wq_entry.entry);
		}
	}
	__set_current_state(TASK_RUNNING);
	for (i = 0; i < count; i++)
		if (vw[i].queue == i)
			finish_wait(vw[i].wq_head, &vw[i].wbq.wq_entry);
	waitvar_jobctl_stop(&jw);
	if (hr) {
		hrtimer_cancel(&sl.timer);
		destroy_hrtimer_on_stack(&sl.timer);
	}
	return ret;
}

/* Points each entry at the first entry on the same variable: they share its queue entry. */
static void waitvar_waitv_share(struct waitvar_vwait *vw, u32 count)
{
	u32 i, j;

	for (i = 0; i < count; i++) {
		for (j = 0; j < i && vw[j].w.var != vw[i].w.var; j++)
			;
		vw[i].queue = j;
	}
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
		vw[got].w.var = waitvar_var_lookup(wf, e[got].id, MAY_READ);
		if (IS_ERR(vw[got].w.var)) {
			ret = PTR_ERR(vw[got].w.var);
			goto put;
		}
		/* As WAIT: a lock-protected variable has no IO variant. */
		if (vw[got].w.var->lock_kind != WAITVAR_LOCK_NONE &&
		    arg->mode == WAITVAR_MODE_IO) {
			waitvar_var_put(vw[got].w.var);
			ret = -EINVAL;
			goto put;
		}
		vw[got].w.op = e[got].op;
		vw[got].w.operand = e[got].operand;
		vw[got].w.task = current;
	}

	/*
	 * The shared table gets one entry per distinct variable; the charge
	 * is per entry, since each is listed on its variable, where a
	 * filtered wake walks them.
	 */
	waitvar_waitv_share(vw, got);
	ret = waitvar_charge(wf->user, WAITVAR_CHARGE_WAITERS, got);
	if (ret)
		goto put;
	for (i = 0; i < got; i++) {
		atomic64_inc(&vw[i].w.var->stats.waits);
		waitvar_list_waiter(&vw[i].w);
	}
	ret = waitvar_waitv_sleep(vw, got, arg->mode, t, &index);
	if (ret == -ERESTARTSYS && !t->restart)
		ret = waitvar_restart_relative(t, &arg->timeout_ns);
	else if (ret == -ERESTARTNOINTR)
		ret = waitvar_restart_jobctl(t, &arg->timeout_ns);
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
	waitvar_uncharge(wf->user, WAITVAR_CHARGE_WAITERS, got);
put:
	for (i = 0; i < got; i++)
		waitvar_var_put(vw[i].w.var);
	return ret;
}

long waitvar_ioctl_waitv(struct waitvar_file *wf, struct waitvar_waitv *arg)
{
	struct waitvar_waitv_entry *e;
	struct waitvar_vwait *vw;
	struct waitvar_timeout t;
	long ret;

	if ((arg->flags & ~(WAITVAR_WAIT_FLAGS & ~WAITVAR_WAIT_EXCLUSIVE)) || !arg->count ||
	    arg->count > WAITVAR_WAITV_MAX || arg->index || arg->value)
		return -EINVAL;
	ret = waitvar_parse_timeout(arg->flags, arg->mode, arg->timeout_ns, &t);
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
