// SPDX-License-Identifier: GPL-2.0
/*
 * What the hardened driver promises at its edges: FEATURES, out-only fields
 * that must be 0 going in, the hashed-queue bucket hidden from callers
 * without CAP_SYSLOG, the per-user limits (max_user_vars,
 * max_user_waiters, max_user_names) next to max_vars_per_file, the cap on
 * IO and UNINTERRUPTIBLE waits, a name's owner removing it whatever its
 * mode, and names scoped by user namespace.
 *
 * Limits are lowered for a test and put back by the fixture's teardown;
 * the users that fill them are children that drop to uid 1000 or 1001.
 */
#include <linux/capability.h>
#include <sched.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "waitvar_test.h"

/* The kernel's harness is written for -Wall; it has unused parameters. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

/* Two unprivileged users: wvuser (rootfs/build-image.sh), and one with no entry. */
#define UID_A 1000
#define UID_B 1001

FIXTURE(limits) {
	int fd;
	char name[WAITVAR_NAME_MAX];	/* every name a test makes starts with this */
	struct saved_params params;
};

FIXTURE_SETUP(limits)
{
	self->fd = open("/dev/waitvar", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open /dev/waitvar: %s", strerror(errno));
	snprintf(self->name, sizeof(self->name), "/lim-%d", getpid());
}

FIXTURE_TEARDOWN(limits)
{
	EXPECT_EQ(0, params_restore(&self->params))
		TH_LOG("could not put the module parameters back");
	remove_names_with_prefix(self->fd, self->name);
	close(self->fd);
}

/* 1. FEATURES */

static const char *const limit_params[] = {
	"max_vars_per_file", "max_user_vars", "max_user_waiters", "max_user_names",
	"max_named_vars", "max_uninterruptible_ms",
};

/* The FEATURES field that reports limit_params[@i]. */
static uint32_t feature_limit(const struct waitvar_features *f, size_t i)
{
	const uint32_t v[] = {
		f->max_vars_per_file, f->max_user_vars, f->max_user_waiters, f->max_user_names,
		f->max_named_vars, f->max_uninterruptible_ms,
	};

	return v[i];
}

TEST_F(limits, features_report_the_commands_flags_ops_modes_and_semantics)
{
	const uint32_t must = WAITVAR_SEM_NAMES_USERNS | WAITVAR_SEM_FREEZABLE |
			      WAITVAR_SEM_OWNER_REMOVES | WAITVAR_SEM_BUCKET_PRIVILEGED |
			      WAITVAR_SEM_HRTIMER | WAITVAR_SEM_RESTART_LEFT |
			      WAITVAR_SEM_TIMENS | WAITVAR_SEM_KILLABLE_JOBCTL;
	struct waitvar_features f;
	size_t i;

	ASSERT_EQ(0, waitvar_features(self->fd, &f));
	/* Commands 0x00 (CREATE) to 0x11 (FEATURES), no more. */
	EXPECT_EQ((1ULL << 0x12) - 1, f.commands);
	EXPECT_EQ(WAITVAR_CREATE_SPINLOCK | WAITVAR_CREATE_MUTEX, f.create_flags);
	EXPECT_EQ(WAITVAR_WAIT_TIMEOUT | WAITVAR_WAIT_EXCLUSIVE | WAITVAR_WAIT_ABS_MONOTONIC |
		  WAITVAR_WAIT_ABS_REALTIME | WAITVAR_WAIT_JIFFIES, f.wait_flags);
	EXPECT_EQ(WAITVAR_WAKE_FILTER, f.wake_flags);
	EXPECT_EQ(WAITVAR_ADD_WAKE, f.add_flags);
	EXPECT_EQ((1U << WAITVAR_OP_COUNT) - 1, f.ops);
	EXPECT_EQ((1U << WAITVAR_MODE_COUNT) - 1, f.modes);
	EXPECT_EQ((uint32_t)WAITVAR_WAITV_MAX, f.waitv_max);
	EXPECT_EQ(must, f.semantics & must) TH_LOG("semantics %#x", f.semantics);
	EXPECT_EQ(0U, f.semantics & ~(must | WAITVAR_SEM_TEST_HOOKS))
		TH_LOG("semantics %#x has bits this header does not know", f.semantics);
	/* The test hooks are there exactly when their parameters are. */
	EXPECT_EQ(has_param("test_copyout_delay_ms"), !!(f.semantics & WAITVAR_SEM_TEST_HOOKS))
		TH_LOG("semantics %#x", f.semantics);
	EXPECT_EQ(has_param("test_waitv_queue_hold_ms"),
		  !!(f.semantics & WAITVAR_SEM_TEST_HOOKS))
		TH_LOG("semantics %#x", f.semantics);
	for (i = 0; i < ARRAY_LEN(f.reserved); i++)
		EXPECT_EQ(0U, f.reserved[i]) TH_LOG("reserved[%zu]", i);
}

TEST_F(limits, features_report_the_limits_the_module_parameters_hold_now)
{
	struct waitvar_features f;
	unsigned int value;
	size_t i;

	ASSERT_EQ(0, waitvar_features(self->fd, &f));
	for (i = 0; i < ARRAY_LEN(limit_params); i++) {
		ASSERT_EQ(0, get_param(limit_params[i], &value)) TH_LOG("%s", limit_params[i]);
		EXPECT_EQ(value, feature_limit(&f, i)) TH_LOG("%s", limit_params[i]);
	}
	/* A change shows at once. */
	for (i = 0; i < ARRAY_LEN(limit_params); i++) {
		ASSERT_EQ(0, get_param(limit_params[i], &value));
		ASSERT_EQ(0, param_override(&self->params, limit_params[i], value + 1))
			TH_LOG("%s", limit_params[i]);
		ASSERT_EQ(0, waitvar_features(self->fd, &f));
		EXPECT_EQ(value + 1, feature_limit(&f, i)) TH_LOG("%s", limit_params[i]);
	}
}

TEST_F(limits, features_with_any_field_set_on_input_return_einval)
{
	union {
		struct waitvar_features f;
		uint32_t word[sizeof(struct waitvar_features) / 4];
	} arg;
	size_t i;

	/* Every field is out only, the reserved ones too: one word at a time. */
	for (i = 0; i < ARRAY_LEN(arg.word); i++) {
		memset(&arg, 0, sizeof(arg));
		arg.word[i] = 1;
		EXPECT_EQ(-1, ioctl(self->fd, WAITVAR_IOC_FEATURES, &arg))
			TH_LOG("byte %zu", i * 4);
		EXPECT_EQ(EINVAL, errno) TH_LOG("byte %zu", i * 4);
	}
	memset(&arg, 0, sizeof(arg));
	EXPECT_EQ(0, ioctl(self->fd, WAITVAR_IOC_FEATURES, &arg));
}

/* 2. Out-only fields must be 0 on input */

/* One out-only field, set to 1 on an argument that is otherwise good. */
struct out_field {
	const char *what;
	unsigned long cmd;
	size_t offset, size;
};

#define OUT_FIELD(what, cmd, type, field) \
	{ what, cmd, offsetof(type, field), sizeof(((type *)0)->field) }

static const struct out_field out_fields[] = {
	OUT_FIELD("create.id", WAITVAR_IOC_CREATE, struct waitvar_create, id),
	OUT_FIELD("get.value", WAITVAR_IOC_GET, struct waitvar_value, value),
	OUT_FIELD("dec_and_wake.value", WAITVAR_IOC_DEC_AND_WAKE, struct waitvar_value, value),
	OUT_FIELD("wait.value", WAITVAR_IOC_WAIT, struct waitvar_wait, value),
	OUT_FIELD("wait.timeout_ns, no timeout flag", WAITVAR_IOC_WAIT, struct waitvar_wait,
		  timeout_ns),
	OUT_FIELD("waitv.index", WAITVAR_IOC_WAITV, struct waitvar_waitv, index),
	OUT_FIELD("waitv.value", WAITVAR_IOC_WAITV, struct waitvar_waitv, value),
	OUT_FIELD("waitv.timeout_ns, no timeout flag", WAITVAR_IOC_WAITV, struct waitvar_waitv,
		  timeout_ns),
	OUT_FIELD("watch.fd", WAITVAR_IOC_WATCH, struct waitvar_watch, fd),
	OUT_FIELD("stats.waiters", WAITVAR_IOC_STATS, struct waitvar_stats, waiters),
	OUT_FIELD("stats.bucket", WAITVAR_IOC_STATS, struct waitvar_stats, bucket),
	OUT_FIELD("stats.waits", WAITVAR_IOC_STATS, struct waitvar_stats, waits),
	OUT_FIELD("stats.wakes", WAITVAR_IOC_STATS, struct waitvar_stats, wakes),
	OUT_FIELD("stats.woken", WAITVAR_IOC_STATS, struct waitvar_stats, woken),
	OUT_FIELD("stats.spurious", WAITVAR_IOC_STATS, struct waitvar_stats, spurious),
	OUT_FIELD("stats.timeouts", WAITVAR_IOC_STATS, struct waitvar_stats, timeouts),
	OUT_FIELD("stats.signals", WAITVAR_IOC_STATS, struct waitvar_stats, signals),
	OUT_FIELD("wake_nr.woken", WAITVAR_IOC_WAKE_NR, struct waitvar_wake_nr, woken),
	OUT_FIELD("add.value", WAITVAR_IOC_ADD, struct waitvar_add, value),
	OUT_FIELD("cmpxchg.prev", WAITVAR_IOC_CMPXCHG, struct waitvar_cmpxchg, prev),
	OUT_FIELD("named_create.id", WAITVAR_IOC_NAMED_CREATE, struct waitvar_named, id),
	OUT_FIELD("named_open.id", WAITVAR_IOC_NAMED_OPEN, struct waitvar_named, id),
	OUT_FIELD("list.count", WAITVAR_IOC_LIST, struct waitvar_list, count),
	OUT_FIELD("list.needed", WAITVAR_IOC_LIST, struct waitvar_list, needed),
	OUT_FIELD("features.commands", WAITVAR_IOC_FEATURES, struct waitvar_features, commands),
	OUT_FIELD("features.max_user_waiters", WAITVAR_IOC_FEATURES, struct waitvar_features,
		  max_user_waiters),
};

union any_arg {
	struct waitvar_create create;
	struct waitvar_value value;
	struct waitvar_wait wait;
	struct waitvar_waitv waitv;
	struct waitvar_watch watch;
	struct waitvar_stats stats;
	struct waitvar_wake_nr wake_nr;
	struct waitvar_add add;
	struct waitvar_cmpxchg cmpxchg;
	struct waitvar_named named;
	struct waitvar_list list;
	struct waitvar_features features;
};

/* The value of the variable the table's commands use. */
#define OUT_VALUE 5

/* What the table's arguments name. */
struct out_ctx {
	int fd;
	uint32_t id;			/* holds OUT_VALUE */
	const char *old_name;		/* exists */
	const char *new_name;		/* does not */
	struct waitvar_waitv_entry entry;	/* [id EQ OUT_VALUE] */
	char list[4096];
};

/*
 * A good argument for @cmd, that changes something if it is carried out:
 * waits whose condition holds (so they return at once) and no timeout
 * flag, updates that would change the value, creates that would make a
 * variable, a name or a descriptor.
 */
static void fill_good_arg(union any_arg *a, unsigned long cmd, struct out_ctx *c)
{
	memset(a, 0, sizeof(*a));
	switch (cmd) {
	case WAITVAR_IOC_CREATE:
		a->create.value = 9;
		break;
	case WAITVAR_IOC_GET:
	case WAITVAR_IOC_DEC_AND_WAKE:
		a->value.id = c->id;
		break;
	case WAITVAR_IOC_WAIT:
		a->wait.id = c->id;
		a->wait.op = WAITVAR_OP_EQ;
		a->wait.operand = OUT_VALUE;
		break;
	case WAITVAR_IOC_WAITV:
		a->waitv.entries = (uintptr_t)&c->entry;
		a->waitv.count = 1;
		break;
	case WAITVAR_IOC_WATCH:
		a->watch.id = c->id;
		a->watch.op = WAITVAR_OP_EQ;
		a->watch.operand = OUT_VALUE;
		break;
	case WAITVAR_IOC_STATS:
		a->stats.id = c->id;
		break;
	case WAITVAR_IOC_WAKE_NR:
		a->wake_nr.id = c->id;
		a->wake_nr.nr = 1;
		break;
	case WAITVAR_IOC_ADD:
		a->add.id = c->id;
		a->add.delta = 1;
		a->add.flags = WAITVAR_ADD_WAKE;
		break;
	case WAITVAR_IOC_CMPXCHG:
		a->cmpxchg.id = c->id;
		a->cmpxchg.expected = OUT_VALUE;
		a->cmpxchg.desired = OUT_VALUE + 1;
		break;
	case WAITVAR_IOC_NAMED_CREATE:
		snprintf(a->named.name, sizeof(a->named.name), "%s", c->new_name);
		a->named.value = 9;
		a->named.mode = 0600;
		break;
	case WAITVAR_IOC_NAMED_OPEN:
		snprintf(a->named.name, sizeof(a->named.name), "%s", c->old_name);
		break;
	case WAITVAR_IOC_LIST:
		a->list.names = (uintptr_t)c->list;
		a->list.size = sizeof(c->list);
		break;
	}
}

/* Takes back what a good call of @cmd made or changed. */
static void undo_good_call(union any_arg *a, unsigned long cmd, struct out_ctx *c)
{
	switch (cmd) {
	case WAITVAR_IOC_CREATE:
		waitvar_destroy(c->fd, a->create.id);
		break;
	case WAITVAR_IOC_NAMED_CREATE:
		waitvar_destroy(c->fd, a->named.id);
		waitvar_named_remove(c->fd, c->new_name);
		break;
	case WAITVAR_IOC_NAMED_OPEN:
		waitvar_destroy(c->fd, a->named.id);
		break;
	case WAITVAR_IOC_WATCH:
		close(a->watch.fd);
		break;
	case WAITVAR_IOC_DEC_AND_WAKE:
	case WAITVAR_IOC_ADD:
	case WAITVAR_IOC_CMPXCHG:
		waitvar_set(c->fd, c->id, OUT_VALUE);
		break;
	}
}

/* What a refused call must leave as it was. */
struct out_state {
	int get_ret;
	uint64_t value;
	struct waitvar_stats st;
	long vars;		/* variables on the device (debugfs summary) */
	int new_name_ret;	/* NAMED_OPEN of the name CREATE would make: -ENOENT */
	int fds;
};

static void out_state(struct out_ctx *c, struct out_state *s)
{
	uint32_t id = 0;

	memset(s, 0, sizeof(*s));
	s->get_ret = waitvar_get(c->fd, c->id, &s->value);
	waitvar_stats(c->fd, c->id, &s->st);
	s->vars = device_vars();
	s->new_name_ret = waitvar_named_open(c->fd, c->new_name, &id);
	if (!s->new_name_ret)
		waitvar_destroy(c->fd, id);
	s->fds = count_open_fds();
}

TEST_F(limits, out_only_fields_set_on_input_return_einval_and_change_nothing)
{
	char old_name[WAITVAR_NAME_MAX], new_name[WAITVAR_NAME_MAX];
	struct out_state before, after;
	static struct out_ctx c;
	union any_arg arg;
	uint32_t id = 0;
	size_t i;

	c = (struct out_ctx){ .fd = self->fd,
			      .old_name = test_name(old_name, self->name, "old"),
			      .new_name = test_name(new_name, self->name, "new") };
	ASSERT_EQ(0, waitvar_create(self->fd, OUT_VALUE, 0, &c.id));
	c.entry = (struct waitvar_waitv_entry){ .id = c.id, .op = WAITVAR_OP_EQ,
						.operand = OUT_VALUE };
	ASSERT_EQ(0, waitvar_named_create(self->fd, c.old_name, 1, 0, 0600, &id));
	ASSERT_EQ(0, waitvar_destroy(self->fd, id));

	for (i = 0; i < ARRAY_LEN(out_fields); i++) {
		const struct out_field *o = &out_fields[i];
		const uint64_t one = 1;
		const uint32_t one32 = 1;

		out_state(&c, &before);
		ASSERT_EQ(0, before.get_ret);
		ASSERT_EQ((uint64_t)OUT_VALUE, before.value);
		ASSERT_LE(0, before.vars) TH_LOG("cannot read %s", SUMMARY_PATH);
		ASSERT_EQ(-ENOENT, before.new_name_ret);

		fill_good_arg(&arg, o->cmd, &c);
		memcpy((char *)&arg + o->offset, o->size == 8 ? (const void *)&one :
			(const void *)&one32, o->size);
		EXPECT_EQ(-1, ioctl(self->fd, o->cmd, &arg)) TH_LOG("%s set on input", o->what);
		EXPECT_EQ(EINVAL, errno) TH_LOG("%s set on input: %s", o->what, strerror(errno));

		out_state(&c, &after);
		EXPECT_EQ((uint64_t)OUT_VALUE, after.value) TH_LOG("%s: value changed", o->what);
		EXPECT_EQ(before.st.waits, after.st.waits) TH_LOG("%s: a wait started", o->what);
		EXPECT_EQ(before.st.wakes, after.st.wakes) TH_LOG("%s: a wake was issued", o->what);
		EXPECT_EQ(0U, after.st.waiters) TH_LOG("%s: a waiter stayed", o->what);
		EXPECT_EQ(before.vars, after.vars) TH_LOG("%s: a variable was made", o->what);
		EXPECT_EQ(-ENOENT, after.new_name_ret) TH_LOG("%s: a name was made", o->what);
		EXPECT_EQ(before.fds, after.fds) TH_LOG("%s: a descriptor was made", o->what);

		/* The same argument with the field 0 is good: only the field was wrong. */
		fill_good_arg(&arg, o->cmd, &c);
		EXPECT_EQ(0, ioctl(self->fd, o->cmd, &arg))
			TH_LOG("%s: the good argument fails: %s", o->what, strerror(errno));
		undo_good_call(&arg, o->cmd, &c);
	}
}

/* 3. STATS.bucket needs CAP_SYSLOG */

/* Drops CAP_SYSLOG from this (root) process's effective and permitted sets. */
static int drop_cap_syslog(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	if (syscall(SYS_capget, &hdr, data))
		return -1;
	data[CAP_TO_INDEX(CAP_SYSLOG)].effective &= ~CAP_TO_MASK(CAP_SYSLOG);
	data[CAP_TO_INDEX(CAP_SYSLOG)].permitted &= ~CAP_TO_MASK(CAP_SYSLOG);
	return syscall(SYS_capset, &hdr, data) ? -1 : 0;
}

struct bucket_ctx {
	int fd;
	uint32_t id;
	bool drop_syslog;	/* stay root, without CAP_SYSLOG */
};

static int hidden_bucket_child(struct peer *parent, void *arg)
{
	struct bucket_ctx *c = arg;
	struct waitvar_stats st;
	int ret;

	(void)parent;
	if (c->drop_syslog)
		CHILD_CHECK(!drop_cap_syslog(), "capset without CAP_SYSLOG: %s", strerror(errno));
	ret = waitvar_stats(c->fd, c->id, &st);
	CHILD_CHECK(!ret, "STATS: %s", strerror(-ret));
	CHILD_CHECK(st.bucket == WAITVAR_BUCKET_HIDDEN,
		    "STATS.bucket is %u without CAP_SYSLOG, not WAITVAR_BUCKET_HIDDEN", st.bucket);
	/* The counters are anyone's. */
	CHILD_CHECK(st.waits == 1 && st.timeouts == 1, "waits %llu timeouts %llu",
		    (unsigned long long)st.waits, (unsigned long long)st.timeouts);
	return 0;
}

TEST_F(limits, stats_bucket_is_hidden_from_callers_without_cap_syslog)
{
	struct bucket_ctx c = { .fd = self->fd };
	struct waitvar_stats st;

	ASSERT_EQ(0U, getuid()) TH_LOG("needs root");
	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &c.id));
	ASSERT_EQ(-ETIMEDOUT, waitvar_wait(self->fd, c.id, WAITVAR_OP_EQ, 1, 0,
					   WAITVAR_WAIT_TIMEOUT, 0, NULL));
	ASSERT_EQ(0, waitvar_stats(self->fd, c.id, &st));
	EXPECT_NE(WAITVAR_BUCKET_HIDDEN, st.bucket) TH_LOG("root has CAP_SYSLOG");
	EXPECT_LT(st.bucket, driver_features().wait_table_size);
	/* The file was inherited: a variable of a file takes no permission. */
	EXPECT_EQ(0, run_as(UID_A, hidden_bucket_child, &c)) TH_LOG("as uid %d", UID_A);
	c.drop_syslog = true;
	EXPECT_EQ(0, run_as(AS_ROOT, hidden_bucket_child, &c))
		TH_LOG("as root without CAP_SYSLOG");
}

/* 4. Per-user limits */

struct user_ctx {
	char prefix[WAITVAR_NAME_MAX];
	unsigned int limit;
};

/*
 * As UID_A, with max_user_vars 4: variables of two files and a named one
 * count together, and what DESTROY, close and NAMED_REMOVE give back can
 * be made again.  Stops half way for the parent to run UID_B.
 */
static int user_vars_child(struct peer *parent, void *arg)
{
	struct user_ctx *c = arg;
	char name[WAITVAR_NAME_MAX], other[WAITVAR_NAME_MAX];
	uint32_t a = 0, id = 0;
	int fd1, fd2, ret;

	test_name(name, c->prefix, "a");
	test_name(other, c->prefix, "b");
	fd1 = waitvar_open();
	fd2 = waitvar_open();
	CHILD_CHECK(fd1 >= 0 && fd2 >= 0, "open /dev/waitvar");
	CHILD_CHECK(!waitvar_create(fd1, 0, 0, &a), "first variable");
	CHILD_CHECK(!waitvar_create(fd1, 0, 0, &id), "second variable");
	CHILD_CHECK(!waitvar_named_create(fd2, name, 0, 0, 0600, &id), "named variable");
	CHILD_CHECK(!waitvar_create(fd2, 0, 0, &id), "fourth variable, in the other file");
	ret = waitvar_create(fd1, 0, 0, &id);
	CHILD_CHECK(ret == -ENOSPC, "fifth variable of max_user_vars 4: %d, not ENOSPC", ret);
	ret = waitvar_named_create(fd1, other, 0, 0, 0600, &id);
	CHILD_CHECK(ret == -ENOSPC, "fifth, named: %d, not ENOSPC", ret);

	/* The other user fills its own count now. */
	CHILD_CHECK(peer_send(parent) && peer_recv(parent), "parent");

	CHILD_CHECK(!waitvar_destroy(fd1, a), "DESTROY");
	CHILD_CHECK(!waitvar_create(fd1, 0, 0, &id), "DESTROY gave nothing back");
	ret = waitvar_create(fd1, 0, 0, &id);
	CHILD_CHECK(ret == -ENOSPC, "after DESTROY and CREATE: %d, not ENOSPC", ret);
	/* Closing a file gives back its variables, not the named one. */
	close(fd2);
	CHILD_CHECK(!waitvar_create(fd1, 0, 0, &id), "close gave nothing back");
	ret = waitvar_create(fd1, 0, 0, &id);
	CHILD_CHECK(ret == -ENOSPC, "after close: %d, not ENOSPC (the named one still counts)",
		    ret);
	CHILD_CHECK(!waitvar_named_remove(fd1, name), "NAMED_REMOVE");
	CHILD_CHECK(!waitvar_create(fd1, 0, 0, &id), "NAMED_REMOVE gave nothing back");
	ret = waitvar_create(fd1, 0, 0, &id);
	CHILD_CHECK(ret == -ENOSPC, "after NAMED_REMOVE: %d, not ENOSPC", ret);
	close(fd1);
	return 0;
}

/* As UID_B, while UID_A holds its whole count: @limit variables of its own. */
static int fill_vars_child(struct peer *parent, void *arg)
{
	struct user_ctx *c = arg;
	uint32_t id = 0, i;
	int fd = waitvar_open(), ret;

	(void)parent;
	CHILD_CHECK(fd >= 0, "open /dev/waitvar");
	for (i = 0; i < c->limit; i++) {
		ret = waitvar_create(fd, 0, 0, &id);
		CHILD_CHECK(!ret, "variable %u of %u: %s (another user's count?)", i + 1, c->limit,
			    strerror(-ret));
	}
	ret = waitvar_create(fd, 0, 0, &id);
	CHILD_CHECK(ret == -ENOSPC, "variable %u of %u: %d, not ENOSPC", i + 1, c->limit, ret);
	return 0;
}

TEST_F(limits, max_user_vars_counts_a_users_variables_across_files)
{
	struct user_ctx c = { .limit = 4 };
	struct peer child;
	bool ready;

	snprintf(c.prefix, sizeof(c.prefix), "%s", self->name);
	ASSERT_EQ(0, param_override(&self->params, "max_user_vars", c.limit));
	ASSERT_EQ(0, peer_start(&child, UID_A, user_vars_child, &c));
	ready = peer_recv(&child);
	if (ready) {
		EXPECT_EQ(0, run_as(UID_B, fill_vars_child, &c))
			TH_LOG("uid %d has a count of its own", UID_B);
		peer_send(&child);
	}
	EXPECT_TRUE(ready) TH_LOG("uid %d did not fill its count", UID_A);
	EXPECT_EQ(0, peer_wait(&child, 30000));
}

/* A thread blocked in WAITVAR_IOC_WAITV. */
struct vthread {
	int fd;
	const struct waitvar_waitv_entry *e;
	uint32_t count;
	pthread_t thread;
	atomic_int tid, done;
	int ret;
};

static void *vthread_main(void *data)
{
	struct vthread *v = data;

	atomic_store(&v->tid, gettid());
	v->ret = waitvar_waitv(v->fd, v->e, v->count, WAITVAR_MODE_INTERRUPTIBLE, 0, 0, NULL);
	atomic_store(&v->done, 1);
	return NULL;
}

/* @n entries, each [@id EQ @operand]. */
static void same_entries(struct waitvar_waitv_entry *e, uint32_t n, uint32_t id,
			 uint64_t operand)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		e[i] = (struct waitvar_waitv_entry){ .id = id, .op = WAITVAR_OP_EQ,
						     .operand = operand };
}

#define SHORT_NS (100 * NSEC_PER_MSEC)

/*
 * As UID_A, with max_user_waiters 4: a WAITV of 2 entries naming one
 * variable, a WAIT and a WATCH hold the four; closing the WATCH gives one
 * back; WAITV charges each entry, repeated variables too.
 */
static int user_waiters_child(struct peer *parent, void *arg)
{
	static struct waitvar_waitv_entry many[WAITVAR_WAITV_MAX];
	struct waitvar_waitv_entry two[2];
	struct vthread v = {};
	struct waiter w = {};
	uint32_t x = 0, y = 0;
	int fd, watch, ret, i, watches[4];

	(void)arg;
	fd = waitvar_open();
	CHILD_CHECK(fd >= 0, "open /dev/waitvar");
	CHILD_CHECK(!waitvar_create(fd, 0, 0, &x) && !waitvar_create(fd, 0, 0, &y), "CREATE");

	/* Each WAITV entry is a waiter, even on one variable: two here. */
	same_entries(many, 2, x, 1);
	v = (struct vthread){ .fd = fd, .e = many, .count = 2 };
	CHILD_CHECK(!pthread_create(&v.thread, NULL, vthread_main, &v), "thread");
	CHILD_CHECK(thread_sleeps_in(&v.tid, &v.done, 'S'),
		    "WAITV of 2 entries on one variable does not sleep: %d", v.ret);
	w = (struct waiter){ .fd = fd, .id = x, .op = WAITVAR_OP_EQ, .operand = 1 };
	CHILD_CHECK(!waiter_start(&w), "thread");
	CHILD_CHECK(waiter_sleeps(&w), "WAIT, the third waiter, does not sleep: %d", w.ret);
	watch = waitvar_watch(fd, x, WAITVAR_OP_EQ, 1);
	CHILD_CHECK(watch >= 0, "WATCH, the fourth waiter: %d", watch);

	/* All four are held. */
	ret = waitvar_wait(fd, y, WAITVAR_OP_EQ, 1, 0, WAITVAR_WAIT_TIMEOUT, SHORT_NS, NULL);
	CHILD_CHECK(ret == -ENOSPC, "fifth waiter, a WAIT: %d, not ENOSPC", ret);
	ret = waitvar_watch(fd, y, WAITVAR_OP_EQ, 1);
	CHILD_CHECK(ret == -ENOSPC, "fifth waiter, a WATCH: %d, not ENOSPC", ret);
	ret = waitvar_waitv(fd, many, 1, 0, WAITVAR_WAIT_TIMEOUT, SHORT_NS, NULL);
	CHILD_CHECK(ret == -ENOSPC, "fifth waiter, a WAITV: %d, not ENOSPC", ret);

	/* The other user's waiters are its own. */
	CHILD_CHECK(peer_send(parent) && peer_recv(parent), "parent");

	/* A WATCH holds its entry until it is closed. */
	close(watch);
	two[0] = (struct waitvar_waitv_entry){ .id = x, .op = WAITVAR_OP_EQ, .operand = 1 };
	two[1] = (struct waitvar_waitv_entry){ .id = y, .op = WAITVAR_OP_EQ, .operand = 1 };
	ret = waitvar_waitv(fd, two, 2, 0, WAITVAR_WAIT_TIMEOUT, SHORT_NS, NULL);
	CHILD_CHECK(ret == -ENOSPC, "WAITV of two variables with one entry free: %d, not ENOSPC",
		    ret);
	same_entries(many, 2, y, 1);
	ret = waitvar_waitv(fd, many, 2, 0, WAITVAR_WAIT_TIMEOUT, SHORT_NS, NULL);
	CHILD_CHECK(ret == -ENOSPC,
		    "WAITV of 2 entries on one variable with one entry free: %d, not ENOSPC", ret);
	ret = waitvar_waitv(fd, many, 1, 0, WAITVAR_WAIT_TIMEOUT, SHORT_NS, NULL);
	CHILD_CHECK(ret == -ETIMEDOUT, "WAITV of 1 entry with one entry free: %d, not ETIMEDOUT",
		    ret);
	ret = waitvar_wait(fd, y, WAITVAR_OP_EQ, 1, 0, WAITVAR_WAIT_TIMEOUT, SHORT_NS, NULL);
	CHILD_CHECK(ret == -ETIMEDOUT, "WAIT with one entry free: %d, not ETIMEDOUT", ret);

	/* The waits end and give theirs back. */
	CHILD_CHECK(!waitvar_set(fd, x, 1), "SET");
	pthread_join(v.thread, NULL);
	pthread_join(w.thread, NULL);
	CHILD_CHECK(v.ret == 0 && w.ret == 0, "the waits returned %d and %d", v.ret, w.ret);
	for (i = 0; i < 4; i++) {
		watches[i] = waitvar_watch(fd, y, WAITVAR_OP_EQ, 1);
		CHILD_CHECK(watches[i] >= 0, "WATCH %d of 4 after the waits ended: %d", i + 1,
			    watches[i]);
	}
	/* A WATCH of a destroyed variable is still a descriptor that counts. */
	CHILD_CHECK(!waitvar_destroy(fd, y), "DESTROY");
	ret = waitvar_watch(fd, x, WAITVAR_OP_EQ, 1);
	CHILD_CHECK(ret == -ENOSPC, "WATCH while 4 WATCHes of a destroyed variable are open: %d",
		    ret);
	for (i = 0; i < 4; i++)
		close(watches[i]);
	watch = waitvar_watch(fd, x, WAITVAR_OP_EQ, 1);
	CHILD_CHECK(watch >= 0, "WATCH after closing them: %d", watch);
	close(watch);
	close(fd);
	return 0;
}

/* As UID_B, while UID_A holds all its waiters: @limit WATCHes of its own. */
static int fill_watches_child(struct peer *parent, void *arg)
{
	struct user_ctx *c = arg;
	uint32_t id = 0, i;
	int fd = waitvar_open(), ret;

	(void)parent;
	CHILD_CHECK(fd >= 0, "open /dev/waitvar");
	CHILD_CHECK(!waitvar_create(fd, 0, 0, &id), "CREATE");
	for (i = 0; i < c->limit; i++) {
		ret = waitvar_watch(fd, id, WAITVAR_OP_EQ, 1);
		CHILD_CHECK(ret >= 0, "WATCH %u of %u: %s (another user's count?)", i + 1, c->limit,
			    strerror(-ret));
	}
	ret = waitvar_watch(fd, id, WAITVAR_OP_EQ, 1);
	CHILD_CHECK(ret == -ENOSPC, "WATCH %u of %u: %d, not ENOSPC", i + 1, c->limit, ret);
	return 0;
}

TEST_F(limits, max_user_waiters_counts_waits_waitv_entries_and_watches)
{
	struct user_ctx c = { .limit = 4 };
	struct peer child;
	bool ready;

	ASSERT_EQ(0, param_override(&self->params, "max_user_waiters", c.limit));
	ASSERT_EQ(0, peer_start(&child, UID_A, user_waiters_child, &c));
	ready = peer_recv(&child);
	if (ready) {
		EXPECT_EQ(0, run_as(UID_B, fill_watches_child, &c))
			TH_LOG("uid %d has a count of its own", UID_B);
		peer_send(&child);
	}
	EXPECT_TRUE(ready) TH_LOG("uid %d did not fill its count", UID_A);
	EXPECT_EQ(0, peer_wait(&child, 30000));
}

/* As UID_A, with max_user_names 2: names outlive files and still count. */
static int user_names_child(struct peer *parent, void *arg)
{
	struct user_ctx *c = arg;
	char a[WAITVAR_NAME_MAX], b[WAITVAR_NAME_MAX], d[WAITVAR_NAME_MAX];
	uint32_t id = 0;
	int fd1, fd2, ret;

	test_name(a, c->prefix, "a");
	test_name(b, c->prefix, "b");
	test_name(d, c->prefix, "c");
	fd1 = waitvar_open();
	fd2 = waitvar_open();
	CHILD_CHECK(fd1 >= 0 && fd2 >= 0, "open /dev/waitvar");
	CHILD_CHECK(!waitvar_named_create(fd1, a, 0, 0, 0600, &id), "first name");
	CHILD_CHECK(!waitvar_named_create(fd2, b, 0, 0, 0600, &id), "second name, other file");
	ret = waitvar_named_create(fd1, d, 0, 0, 0600, &id);
	CHILD_CHECK(ret == -ENOSPC, "third name of max_user_names 2: %d, not ENOSPC", ret);
	close(fd2);
	ret = waitvar_named_create(fd1, d, 0, 0, 0600, &id);
	CHILD_CHECK(ret == -ENOSPC, "third name after closing a file: %d, not ENOSPC", ret);
	/* Variables without a name are not names. */
	CHILD_CHECK(!waitvar_create(fd1, 0, 0, &id), "CREATE at the names limit");

	CHILD_CHECK(peer_send(parent) && peer_recv(parent), "parent");

	CHILD_CHECK(!waitvar_named_remove(fd1, a), "NAMED_REMOVE");
	ret = waitvar_named_create(fd1, d, 0, 0, 0600, &id);
	CHILD_CHECK(!ret, "NAMED_REMOVE gave nothing back: %d", ret);
	ret = waitvar_named_create(fd1, a, 0, 0, 0600, &id);
	CHILD_CHECK(ret == -ENOSPC, "third name again: %d, not ENOSPC", ret);
	waitvar_named_remove(fd1, b);
	waitvar_named_remove(fd1, d);
	close(fd1);
	return 0;
}

/* As UID_B, while UID_A holds all its names: @limit names of its own. */
static int fill_names_child(struct peer *parent, void *arg)
{
	struct user_ctx *c = arg;
	char name[WAITVAR_NAME_MAX], suffix[16];
	uint32_t id = 0, i;
	int fd = waitvar_open(), ret;

	(void)parent;
	CHILD_CHECK(fd >= 0, "open /dev/waitvar");
	for (i = 0; i <= c->limit; i++) {
		snprintf(suffix, sizeof(suffix), "u%u", i);
		ret = waitvar_named_create(fd, test_name(name, c->prefix, suffix), 0, 0, 0600, &id);
		if (i < c->limit)
			CHILD_CHECK(!ret, "name %u of %u: %s", i + 1, c->limit, strerror(-ret));
		else
			CHILD_CHECK(ret == -ENOSPC, "name %u of %u: %d, not ENOSPC", i + 1,
				    c->limit, ret);
	}
	for (i = 0; i < c->limit; i++) {
		snprintf(suffix, sizeof(suffix), "u%u", i);
		waitvar_named_remove(fd, test_name(name, c->prefix, suffix));
	}
	return 0;
}

TEST_F(limits, max_user_names_counts_a_users_names_until_removed)
{
	struct user_ctx c = { .limit = 2 };
	struct peer child;
	bool ready;

	snprintf(c.prefix, sizeof(c.prefix), "%s", self->name);
	ASSERT_EQ(0, param_override(&self->params, "max_user_names", c.limit));
	ASSERT_EQ(0, peer_start(&child, UID_A, user_names_child, &c));
	ready = peer_recv(&child);
	if (ready) {
		EXPECT_EQ(0, run_as(UID_B, fill_names_child, &c))
			TH_LOG("uid %d has a count of its own", UID_B);
		peer_send(&child);
	}
	EXPECT_TRUE(ready) TH_LOG("uid %d did not fill its count", UID_A);
	EXPECT_EQ(0, peer_wait(&child, 30000));
}

TEST_F(limits, max_vars_per_file_still_bounds_each_file)
{
	char name[WAITVAR_NAME_MAX];
	uint32_t id = 0;
	int fd2, i;

	ASSERT_EQ(0, param_override(&self->params, "max_vars_per_file", 3));
	fd2 = waitvar_open();
	ASSERT_LE(0, fd2);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &id)) TH_LOG("variable %d", i + 1);
	EXPECT_EQ(-ENOSPC, waitvar_create(self->fd, 0, 0, &id));
	test_name(name, self->name, "full");
	EXPECT_EQ(-ENOSPC, waitvar_named_create(self->fd, name, 0, 0, 0600, &id));
	EXPECT_EQ(-ENOENT, waitvar_named_open(fd2, name, &id)) TH_LOG("the refused name exists");
	/* Another file has room of its own. */
	for (i = 0; i < 3; i++)
		EXPECT_EQ(0, waitvar_create(fd2, 0, 0, &id)) TH_LOG("variable %d", i + 1);
	EXPECT_EQ(-ENOSPC, waitvar_create(fd2, 0, 0, &id));
	close(fd2);
}

/* A thread whose WAITVs of two entries never fit a limit of one waiter. */
struct over_limit {
	int fd;
	struct waitvar_waitv_entry e[2];
	atomic_int stop;
	atomic_long tries;
	atomic_long other;	/* results other than ENOSPC */
};

static void *over_limit_main(void *data)
{
	struct over_limit *o = data;

	while (!atomic_load(&o->stop)) {
		if (waitvar_waitv(o->fd, o->e, 2, 0, WAITVAR_WAIT_TIMEOUT, 0, NULL) != -ENOSPC)
			atomic_fetch_add(&o->other, 1);
		atomic_fetch_add(&o->tries, 1);
	}
	return NULL;
}

#define FIT_TRIES 40000

/*
 * A charge that cannot fit fails without touching the count: with
 * max_user_waiters 1, a thread's WAITVs of two entries fail with ENOSPC
 * over and over, and the WAITs of one that the caller makes meanwhile all
 * fit.  A charge that added, checked and took itself back would, for that
 * moment, fail the WAITs that fit.
 */
TEST_F(limits, a_charge_over_the_limit_never_fails_one_that_fits)
{
	struct over_limit o = { .fd = self->fd,
				.e = { { .op = WAITVAR_OP_EQ, .operand = 1 },
				       { .op = WAITVAR_OP_EQ, .operand = 1 } } };
	long spurious = 0, tries_before;
	pthread_t thread;
	uint32_t id = 0;

	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &id));
	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &o.e[0].id));
	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &o.e[1].id));
	ASSERT_EQ(0, param_override(&self->params, "max_user_waiters", 1));
	/* Alone, the one-waiter WAIT fits: no other waiter of this user is held. */
	ASSERT_EQ(-ETIMEDOUT, waitvar_wait(self->fd, id, WAITVAR_OP_EQ, 1, 0,
					   WAITVAR_WAIT_TIMEOUT, 0, NULL));
	ASSERT_EQ(0, pthread_create(&thread, NULL, over_limit_main, &o));
	while (atomic_load(&o.tries) < 100)
		;
	tries_before = atomic_load(&o.tries);
	for (int i = 0; i < FIT_TRIES; i++) {
		int ret = waitvar_wait(self->fd, id, WAITVAR_OP_EQ, 1, 0, WAITVAR_WAIT_TIMEOUT, 0,
				       NULL);

		if (ret == -ENOSPC)
			spurious++;
		else
			ASSERT_EQ(-ETIMEDOUT, ret);
	}
	/* The other thread ran all along. */
	EXPECT_LT(tries_before + 1000, atomic_load(&o.tries));
	atomic_store(&o.stop, 1);
	ASSERT_EQ(0, pthread_join(thread, NULL));
	EXPECT_EQ(0, atomic_load(&o.other));
	EXPECT_EQ(0, spurious) TH_LOG("%ld of %d WAITs that fit failed with ENOSPC beside %ld WAITVs that did not",
				      spurious, FIT_TRIES, atomic_load(&o.tries));
}

/* 5. The cap on IO and UNINTERRUPTIBLE waits */

#define CAP_MS 500
#define RAISED_NS (400 * NSEC_PER_MSEC)	/* timer slack added to the default */

/* WAIT on @id for a value it never takes, in @mode, with @flags and @timeout_ns. */
static int wait_for_nothing(int fd, uint32_t id, uint32_t mode, uint32_t flags,
			    long long timeout_ns)
{
	return waitvar_wait(fd, id, WAITVAR_OP_EQ, 1, mode, flags, timeout_ns, NULL);
}

TEST_F(limits, io_and_uninterruptible_timeouts_over_the_cap_return_einval)
{
	static const uint32_t modes[] = { WAITVAR_MODE_IO, WAITVAR_MODE_UNINTERRUPTIBLE };
	const long long cap = CAP_MS * NSEC_PER_MSEC, over = cap + NSEC_PER_MSEC;
	struct waitvar_waitv_entry e;
	long slack;
	struct waitvar_features f;
	uint32_t id = 0;
	size_t i;

	ASSERT_EQ(0, param_override(&self->params, "max_uninterruptible_ms", CAP_MS));
	ASSERT_EQ(0, waitvar_features(self->fd, &f));
	ASSERT_EQ((uint32_t)CAP_MS, f.max_uninterruptible_ms);
	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &id));
	e = (struct waitvar_waitv_entry){ .id = id, .op = WAITVAR_OP_EQ, .operand = 1 };
	for (i = 0; i < ARRAY_LEN(modes); i++) {
		uint32_t m = modes[i];

		EXPECT_EQ(-EINVAL, wait_for_nothing(self->fd, id, m, WAITVAR_WAIT_TIMEOUT, over))
			TH_LOG("mode %u, relative", m);
		/* A deadline counts from the start of the wait. */
		EXPECT_EQ(-EINVAL, wait_for_nothing(self->fd, id, m, WAITVAR_WAIT_ABS_MONOTONIC,
						    now_ns() + 3 * cap))
			TH_LOG("mode %u, CLOCK_MONOTONIC deadline", m);
		EXPECT_EQ(-EINVAL, wait_for_nothing(self->fd, id, m, WAITVAR_WAIT_ABS_REALTIME,
						    clock_ns(CLOCK_REALTIME) + 3 * cap))
			TH_LOG("mode %u, CLOCK_REALTIME deadline", m);
		EXPECT_EQ(-EINVAL, waitvar_waitv(self->fd, &e, 1, m, WAITVAR_WAIT_TIMEOUT, over,
						 NULL))
			TH_LOG("mode %u, WAITV", m);
		/* A condition that holds does not make the request good. */
		EXPECT_EQ(-EINVAL, waitvar_wait(self->fd, id, WAITVAR_OP_EQ, 0, m,
						WAITVAR_WAIT_TIMEOUT, over, NULL))
			TH_LOG("mode %u, condition holds", m);

		EXPECT_EQ(-ETIMEDOUT, wait_for_nothing(self->fd, id, m, WAITVAR_WAIT_TIMEOUT,
						       SHORT_NS))
			TH_LOG("mode %u, relative", m);
		EXPECT_EQ(-ETIMEDOUT, wait_for_nothing(self->fd, id, m, WAITVAR_WAIT_ABS_MONOTONIC,
						       now_ns() + SHORT_NS))
			TH_LOG("mode %u, CLOCK_MONOTONIC deadline", m);
		EXPECT_EQ(-ETIMEDOUT, wait_for_nothing(self->fd, id, m, WAITVAR_WAIT_ABS_REALTIME,
						       clock_ns(CLOCK_REALTIME) + SHORT_NS))
			TH_LOG("mode %u, CLOCK_REALTIME deadline", m);
		EXPECT_EQ(-ETIMEDOUT, waitvar_waitv(self->fd, &e, 1, m, WAITVAR_WAIT_TIMEOUT,
						    SHORT_NS, NULL))
			TH_LOG("mode %u, WAITV", m);
	}
	/* At most the cap: the cap itself is allowed, with the default slack. */
	EXPECT_EQ(-ETIMEDOUT, wait_for_nothing(self->fd, id, WAITVAR_MODE_UNINTERRUPTIBLE,
					       WAITVAR_WAIT_TIMEOUT, cap));
	/*
	 * Timer slack raised above the default (an hrtimer fires up to the
	 * slack late) counts against the cap; the jiffies variants have none.
	 */
	slack = prctl(PR_GET_TIMERSLACK);
	ASSERT_LT(0, slack);
	ASSERT_EQ(0, prctl(PR_SET_TIMERSLACK, (unsigned long)(slack + RAISED_NS)));
	EXPECT_EQ(-ETIMEDOUT, wait_for_nothing(self->fd, id, WAITVAR_MODE_UNINTERRUPTIBLE,
					       WAITVAR_WAIT_TIMEOUT, cap - RAISED_NS));
	EXPECT_EQ(-EINVAL, wait_for_nothing(self->fd, id, WAITVAR_MODE_UNINTERRUPTIBLE,
					    WAITVAR_WAIT_TIMEOUT, cap - RAISED_NS + 1));
	EXPECT_EQ(-ETIMEDOUT, wait_for_nothing(self->fd, id, WAITVAR_MODE_UNINTERRUPTIBLE,
					       WAITVAR_WAIT_TIMEOUT | WAITVAR_WAIT_JIFFIES,
					       SHORT_NS));
	/*
	 * A slack longer than the cap leaves no room for any hrtimer wait, but
	 * a deadline already past arms no timer: one check, as ever.
	 */
	ASSERT_EQ(0, prctl(PR_SET_TIMERSLACK, (unsigned long)(cap + NSEC_PER_MSEC)));
	for (i = 0; i < ARRAY_LEN(modes); i++) {
		EXPECT_EQ(-ETIMEDOUT, wait_for_nothing(self->fd, id, modes[i],
						       WAITVAR_WAIT_ABS_MONOTONIC, 1))
			TH_LOG("mode %u, deadline past, slack over the cap", modes[i]);
		EXPECT_EQ(-EINVAL, wait_for_nothing(self->fd, id, modes[i], WAITVAR_WAIT_TIMEOUT,
						    SHORT_NS))
			TH_LOG("mode %u, slack of the cap", modes[i]);
		EXPECT_EQ(-EINVAL, waitvar_waitv(self->fd, &e, 1, modes[i], WAITVAR_WAIT_TIMEOUT,
						 SHORT_NS, NULL))
			TH_LOG("mode %u, WAITV, slack of the cap", modes[i]);
		EXPECT_EQ(-ETIMEDOUT, wait_for_nothing(self->fd, id, modes[i],
						       WAITVAR_WAIT_TIMEOUT | WAITVAR_WAIT_JIFFIES,
						       SHORT_NS))
			TH_LOG("mode %u, jiffies, slack of the cap", modes[i]);
	}
	ASSERT_EQ(0, prctl(PR_SET_TIMERSLACK, 0UL));
}

TEST_F(limits, interruptible_and_killable_waits_are_not_capped)
{
	static const uint32_t modes[] = { WAITVAR_MODE_INTERRUPTIBLE, WAITVAR_MODE_KILLABLE };
	const long long long_ns = 60000 * NSEC_PER_MSEC;
	long long start;
	uint32_t id = 0;
	size_t i;

	ASSERT_EQ(0, param_override(&self->params, "max_uninterruptible_ms", CAP_MS));
	ASSERT_EQ(0, waitvar_create(self->fd, 0, 0, &id));
	for (i = 0; i < ARRAY_LEN(modes); i++) {
		uint32_t m = modes[i];

		/* Conditions that hold: accepted, and over at once. */
		EXPECT_EQ(0, waitvar_wait(self->fd, id, WAITVAR_OP_EQ, 0, m, WAITVAR_WAIT_TIMEOUT,
					  long_ns, NULL))
			TH_LOG("mode %u, relative", m);
		EXPECT_EQ(0, waitvar_wait(self->fd, id, WAITVAR_OP_EQ, 0, m,
					  WAITVAR_WAIT_ABS_MONOTONIC, now_ns() + long_ns, NULL))
			TH_LOG("mode %u, deadline", m);
		/* And a real sleep past the cap. */
		start = now_ns();
		EXPECT_EQ(-ETIMEDOUT, wait_for_nothing(self->fd, id, m, WAITVAR_WAIT_TIMEOUT,
						       (CAP_MS + 200) * NSEC_PER_MSEC))
			TH_LOG("mode %u", m);
		EXPECT_GE(now_ns() - start, (CAP_MS + 200) * NSEC_PER_MSEC);
	}
}

/* 6. A name's owner may remove it whatever its mode */

struct owner_ctx {
	char gone[2][WAITVAR_NAME_MAX];	/* made and removed by the owner */
	char kept[WAITVAR_NAME_MAX];	/* made by the owner, mode 0, left */
};

static int owner_removes_child(struct peer *parent, void *arg)
{
	static const uint32_t modes[2] = { 0, 0444 };
	struct owner_ctx *c = arg;
	uint32_t id = 0;
	int fd, ret, i;

	(void)parent;
	fd = waitvar_open();
	CHILD_CHECK(fd >= 0, "open /dev/waitvar");
	for (i = 0; i < 2; i++) {
		ret = waitvar_named_create(fd, c->gone[i], 0, 0, modes[i], &id);
		CHILD_CHECK(!ret, "NAMED_CREATE mode %04o: %s", modes[i], strerror(-ret));
		ret = waitvar_named_remove(fd, c->gone[i]);
		CHILD_CHECK(!ret, "the owner's NAMED_REMOVE of its mode %04o name: %s", modes[i],
			    strerror(-ret));
		ret = waitvar_named_open(fd, c->gone[i], &id);
		CHILD_CHECK(ret == -ENOENT, "NAMED_OPEN after NAMED_REMOVE: %d, not ENOENT", ret);
	}
	ret = waitvar_named_create(fd, c->kept, 0, 0, 0, &id);
	CHILD_CHECK(!ret, "NAMED_CREATE mode 0: %s", strerror(-ret));
	close(fd);
	return 0;
}

static int other_cannot_remove_child(struct peer *parent, void *arg)
{
	struct owner_ctx *c = arg;
	int fd = waitvar_open(), ret;

	(void)parent;
	CHILD_CHECK(fd >= 0, "open /dev/waitvar");
	ret = waitvar_named_remove(fd, c->kept);
	CHILD_CHECK(ret == -EACCES, "NAMED_REMOVE of another user's mode 0 name: %d, not EACCES",
		    ret);
	return 0;
}

TEST_F(limits, a_names_owner_may_remove_it_whatever_its_mode)
{
	struct owner_ctx c;
	uint32_t id = 0;

	ASSERT_EQ(0U, getuid());
	test_name(c.gone[0], self->name, "mode0");
	test_name(c.gone[1], self->name, "mode0444");
	test_name(c.kept, self->name, "kept");
	EXPECT_EQ(0, run_as(UID_A, owner_removes_child, &c));
	EXPECT_EQ(0, run_as(UID_B, other_cannot_remove_child, &c));
	/* Root overrides the mode (CAP_DAC_OVERRIDE). */
	EXPECT_EQ(0, waitvar_named_remove(self->fd, c.kept));
	EXPECT_EQ(-ENOENT, waitvar_named_open(self->fd, c.kept, &id));
}

/* 7. Names are scoped by user namespace */

struct userns_ctx {
	const char *name;
};

/*
 * In a new user namespace, with a file opened before entering it: the
 * parent's name is neither listed nor found, and the same name can be made
 * afresh.  Stops while it holds its own for the parent to look.
 */
static int userns_child(struct peer *parent, void *arg)
{
	struct userns_ctx *c = arg;
	struct waitvar_stats st = {};
	uint64_t value = 0;
	uint32_t id = 0;
	int fd, ret;

	fd = waitvar_open();
	CHILD_CHECK(fd >= 0, "open /dev/waitvar");
	CHILD_CHECK(!unshare(CLONE_NEWUSER), "unshare(CLONE_NEWUSER): %s", strerror(errno));
	ret = times_listed(fd, c->name);
	CHILD_CHECK(ret == 0, "LIST in the new namespace shows the parent's name (%d)", ret);
	ret = waitvar_named_open(fd, c->name, &id);
	CHILD_CHECK(ret == -ENOENT, "NAMED_OPEN of the parent's name: %d, not ENOENT", ret);
	ret = waitvar_named_create(fd, c->name, 5, 0, 0644, &id);
	CHILD_CHECK(!ret, "NAMED_CREATE of the parent's name: %s", strerror(-ret));
	CHILD_CHECK(!waitvar_get(fd, id, &value) && value == 5, "GET: %llu",
		    (unsigned long long)value);
	/* Its root has CAP_SYSLOG here, not in the initial namespace. */
	ret = waitvar_stats(fd, id, &st);
	CHILD_CHECK(!ret && st.bucket == WAITVAR_BUCKET_HIDDEN,
		    "STATS of its own name: %d, bucket %u, not hidden", ret, st.bucket);
	ret = times_listed(fd, c->name);
	CHILD_CHECK(ret == 1, "LIST shows the namespace's own name %d times", ret);

	CHILD_CHECK(peer_send(parent) && peer_recv(parent), "parent");

	ret = waitvar_named_remove(fd, c->name);
	CHILD_CHECK(!ret, "NAMED_REMOVE of its own name: %s", strerror(-ret));
	close(fd);
	return 0;
}

/* Host uid that root of the test's user namespace maps to. */
#define MAPPED_ROOT UID_A

/*
 * As host root in a user namespace that maps no uid of its own yet: after
 * the parent maps the namespace's root to MAPPED_ROOT, make a 0600 name
 * (owner: host root, unmapped there), then, as that namespace's root
 * (mapped, every capability in it), try to open it.
 */
static int unmapped_owner_child(struct peer *parent, void *arg)
{
	const char *name = arg;
	uint32_t id = 0;
	int fd, ret, status;
	pid_t pid;

	CHILD_CHECK(!unshare(CLONE_NEWUSER), "unshare(CLONE_NEWUSER): %s", strerror(errno));
	CHILD_CHECK(peer_send(parent) && peer_recv(parent), "parent");
	fd = waitvar_open();
	CHILD_CHECK(fd >= 0, "open /dev/waitvar");
	ret = waitvar_named_create(fd, name, 0, 0, 0600, &id);
	CHILD_CHECK(!ret, "NAMED_CREATE as unmapped host root: %s", strerror(-ret));
	pid = fork();
	if (pid == 0) {
		uint32_t id2 = 0;

		if (setresuid(0, 0, 0) || getuid() != 0)
			_exit(10);
		ret = waitvar_named_open(fd, name, &id2);
		_exit(ret == -EACCES ? 0 : ret ? 11 : 12);
	}
	CHILD_CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status),
		    "the namespace's root");
	CHILD_CHECK(WEXITSTATUS(status) != 12,
		    "the namespace's root opened a 0600 name whose owner it cannot map");
	CHILD_CHECK(WEXITSTATUS(status) == 0, "the namespace's root: status %d",
		    WEXITSTATUS(status));
	ret = waitvar_named_remove(fd, name);
	CHILD_CHECK(!ret, "NAMED_REMOVE by its owner: %s", strerror(-ret));
	return 0;
}

/*
 * CAP_DAC_OVERRIDE in a name's user namespace does not reach a name whose
 * owner that namespace does not map (as for files): a name host root made
 * in a container's namespace stays closed to the container's root.
 */
TEST_F(limits, dac_override_needs_the_owner_mapped_in_the_names_namespace)
{
	char name[WAITVAR_NAME_MAX], path[64], map[32];
	struct peer child;
	bool ready;

	test_name(name, self->name, "unmapped");
	ASSERT_EQ(0, peer_start(&child, AS_ROOT, unmapped_owner_child, name));
	ready = peer_recv(&child);
	if (ready) {
		snprintf(path, sizeof(path), "/proc/%d/uid_map", child.pid);
		snprintf(map, sizeof(map), "0 %d 1\n", MAPPED_ROOT);
		EXPECT_EQ(0, write_file(path, map)) TH_LOG("%s: %s", path, strerror(errno));
		peer_send(&child);
	}
	EXPECT_TRUE(ready) TH_LOG("the child did not enter its user namespace");
	EXPECT_EQ(0, peer_wait(&child, 30000));
}

TEST_F(limits, names_are_scoped_by_user_namespace)
{
	struct userns_ctx c = { .name = self->name };
	struct peer child;
	uint64_t value = 0;
	uint32_t id = 0, id2 = 0;
	bool ready;
	int fd2;

	ASSERT_EQ(0, waitvar_named_create(self->fd, self->name, 42, 0, 0644, &id));
	ASSERT_EQ(0, peer_start(&child, AS_ROOT, userns_child, &c));
	ready = peer_recv(&child);
	if (ready) {
		/* Both exist now, each in its namespace. */
		EXPECT_EQ(1, times_listed(self->fd, self->name));
		ASSERT_EQ(0, waitvar_get(self->fd, id, &value));
		EXPECT_EQ(42U, value);
		peer_send(&child);
	}
	EXPECT_TRUE(ready) TH_LOG("the child in its user namespace stopped early");
	EXPECT_EQ(0, peer_wait(&child, 30000));
	/* The parent's variable is untouched by what the child made and removed. */
	ASSERT_EQ(0, waitvar_get(self->fd, id, &value));
	EXPECT_EQ(42U, value);
	EXPECT_EQ(1, times_listed(self->fd, self->name));
	fd2 = waitvar_open();
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, waitvar_named_open(fd2, self->name, &id2));
	ASSERT_EQ(0, waitvar_get(fd2, id2, &value));
	EXPECT_EQ(42U, value);
	close(fd2);
}

TEST_HARNESS_MAIN
