// SPDX-License-Identifier: GPL-2.0
/*
 * waitvarctl: named /dev/waitvar variables from the shell.  Each command
 * opens the device, attaches the variable by name, does one thing and
 * exits: 0 on success, 1 on a timeout, 2 on bad usage, 3 on other errors.
 * "features" attaches nothing: it prints what the running driver has.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libwaitvar.h"

#define EXIT_TIMEOUT 1
#define EXIT_USAGE 2
#define EXIT_ERROR 3

struct cmd {
	const char *name, *args, *help;
	int (*run)(int argc, char **argv);
};

static const struct cmd *current;
static bool json;
static int dev = -1;

static const struct cmd cmds[];

static void usage(FILE *f, const struct cmd *c)
{
	const struct cmd *p;

	if (c) {
		fprintf(f, "usage: waitvarctl [--json] %s %s\n  %s\n", c->name, c->args, c->help);
		return;
	}
	fprintf(f, "usage: waitvarctl [--json] COMMAND ARGS...   (waitvarctl COMMAND --help)\n");
	for (p = cmds; p->name; p++)
		fprintf(f, "  %-8s %s\n", p->name, p->args);
	fprintf(f, "OP: eq ne lt le gt ge (unsigned), lt_s le_s gt_s ge_s (signed), any all none\n"
		   "    (bit masks), or == != < <= > >=.  DURATION: 5s, 100ms, 2m, 250us, 10ns.\n"
		   "--timeout is timed by an hrtimer; with --jiffies, in jiffies (the _timeout variants).\n"
		   "Exit: 0 ok, 1 timeout, 2 bad usage, 3 other error.\n");
}

static int bad_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "waitvarctl: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n");
	usage(stderr, current);
	return EXIT_USAGE;
}

static int fail(int err, const char *what)
{
	if (err == -ETIMEDOUT) {
		fprintf(stderr, "waitvarctl: %s %s: timed out\n", current->name, what);
		return EXIT_TIMEOUT;
	}
	fprintf(stderr, "waitvarctl: %s %s: %s\n", current->name, what, strerror(-err));
	return EXIT_ERROR;
}

static bool parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!*s || *s == '-')
		return false;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return !errno && !*end;
}

static bool parse_s64(const char *s, int64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoll(s, &end, 0);
	return *s && !errno && !*end;
}

static bool parse_duration(const char *s, uint64_t *ns)
{
	static const struct { const char *unit; uint64_t mult; } units[] = {
		{ "", 1000000000ULL }, { "s", 1000000000ULL }, { "ms", 1000000ULL },
		{ "us", 1000ULL }, { "ns", 1 }, { "m", 60000000000ULL },
	};
	char *end;
	size_t i;
	uint64_t n;

	if (!*s || *s == '-')
		return false;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno || end == s)
		return false;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(end, units[i].unit)) {
			if (n > UINT64_MAX / units[i].mult)
				return false;
			*ns = n * units[i].mult;
			return true;
		}
	}
	return false;
}

/* Attaches @name to the device file; returns 0 or an exit status. */
static int attach(const char *name, uint32_t *id)
{
	int ret = waitvar_named_open(dev, name, id);

	return ret ? fail(ret, name) : 0;
}

/* Options shared by the waiting commands. */
struct wait_opts {
	uint32_t mode, flags;
	uint64_t timeout_ns;
	uint64_t count;
};

/*
 * Takes the options out of argv (they may come anywhere); returns the
 * number of arguments left, or -1 after a usage error was printed.
 */
static int parse_wait_opts(int argc, char **argv, struct wait_opts *o, bool exclusive_ok)
{
	int i, left = 0;

	*o = (struct wait_opts){ .mode = WAITVAR_MODE_INTERRUPTIBLE };
	for (i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--timeout") && i + 1 < argc) {
			if (!parse_duration(argv[++i], &o->timeout_ns))
				return bad_usage("bad duration '%s'", argv[i]), -1;
			o->flags |= WAITVAR_WAIT_TIMEOUT;
		} else if (!strcmp(a, "--count") && i + 1 < argc) {
			if (!parse_u64(argv[++i], &o->count) || !o->count)
				return bad_usage("bad count '%s'", argv[i]), -1;
		} else if (!strcmp(a, "--jiffies")) {
			o->flags |= WAITVAR_WAIT_JIFFIES;
		} else if (!strcmp(a, "--killable")) {
			o->mode = WAITVAR_MODE_KILLABLE;
		} else if (!strcmp(a, "--io")) {
			o->mode = WAITVAR_MODE_IO;
		} else if (!strcmp(a, "--uninterruptible")) {
			o->mode = WAITVAR_MODE_UNINTERRUPTIBLE;
		} else if (!strcmp(a, "--exclusive") && exclusive_ok) {
			o->flags |= WAITVAR_WAIT_EXCLUSIVE;
		} else if (a[0] == '-' && a[1] == '-') {
			return bad_usage("unknown option '%s'", a), -1;
		} else {
			argv[left++] = argv[i];
		}
	}
	if ((o->flags & WAITVAR_WAIT_JIFFIES) && !(o->flags & WAITVAR_WAIT_TIMEOUT))
		return bad_usage("%s times a --timeout: give one", "--jiffies"), -1;
	if ((o->mode == WAITVAR_MODE_IO || o->mode == WAITVAR_MODE_UNINTERRUPTIBLE) &&
	    !(o->flags & WAITVAR_WAIT_TIMEOUT))
		return bad_usage("%s needs --timeout: no signal could end it",
				 o->mode == WAITVAR_MODE_IO ? "--io" : "--uninterruptible"), -1;
	return left;
}

static void print_value(const char *name, const char *key, uint64_t value)
{
	if (json)
		printf("{\"name\":\"%s\",\"%s\":%" PRIu64 "}\n", name, key, value);
	else
		printf("%" PRIu64 "\n", value);
	fflush(stdout);
}

static int cmd_create(int argc, char **argv)
{
	uint64_t value = 0, mode = 0600;
	uint32_t flags = 0, id;
	int i, ret;

	if (argc < 1)
		return bad_usage("%s", "missing NAME");
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--value") && i + 1 < argc) {
			if (!parse_u64(argv[++i], &value))
				return bad_usage("bad value '%s'", argv[i]);
		} else if (!strcmp(argv[i], "--mode") && i + 1 < argc) {
			char *end;

			mode = strtoull(argv[++i], &end, 8);
			if (*end || mode > 0777)
				return bad_usage("bad mode '%s'", argv[i]);
		} else if (!strcmp(argv[i], "--lock") && i + 1 < argc) {
			i++;
			if (!strcmp(argv[i], "spin"))
				flags = WAITVAR_CREATE_SPINLOCK;
			else if (!strcmp(argv[i], "mutex"))
				flags = WAITVAR_CREATE_MUTEX;
			else
				return bad_usage("bad lock '%s' (spin or mutex)", argv[i]);
		} else {
			return bad_usage("unexpected '%s'", argv[i]);
		}
	}
	ret = waitvar_named_create(dev, argv[0], value, flags, mode, &id);
	if (ret)
		return fail(ret, argv[0]);
	print_value(argv[0], "value", value);
	return 0;
}

static int cmd_get(int argc, char **argv)
{
	uint64_t value;
	uint32_t id;
	int ret;

	if (argc != 1)
		return bad_usage("%s", "expected NAME");
	ret = attach(argv[0], &id);
	if (ret)
		return ret;
	ret = waitvar_get(dev, id, &value);
	if (ret)
		return fail(ret, argv[0]);
	print_value(argv[0], "value", value);
	return 0;
}

static int cmd_set(int argc, char **argv)
{
	uint64_t value;
	uint32_t id;
	int ret;

	if (argc != 2 || !parse_u64(argv[1], &value))
		return bad_usage("%s", "expected NAME VALUE");
	ret = attach(argv[0], &id);
	if (ret)
		return ret;
	ret = waitvar_set(dev, id, value);
	if (ret)
		return fail(ret, argv[0]);
	print_value(argv[0], "value", value);
	return 0;
}

static int cmd_add(int argc, char **argv)
{
	uint32_t flags = WAITVAR_ADD_WAKE, id;
	uint64_t value;
	int64_t delta;
	int ret;

	if (argc == 3 && !strcmp(argv[2], "--no-wake")) {
		flags = 0;
		argc--;
	}
	if (argc != 2 || !parse_s64(argv[1], &delta))
		return bad_usage("%s", "expected NAME DELTA [--no-wake]");
	ret = attach(argv[0], &id);
	if (ret)
		return ret;
	ret = waitvar_add(dev, id, delta, flags, &value);
	if (ret)
		return fail(ret, argv[0]);
	print_value(argv[0], "value", value);
	return 0;
}

static int cmd_dec(int argc, char **argv)
{
	uint64_t value;
	uint32_t id;
	int ret;

	if (argc != 1)
		return bad_usage("%s", "expected NAME");
	ret = attach(argv[0], &id);
	if (ret)
		return ret;
	ret = waitvar_dec_and_wake(dev, id, &value);
	if (ret)
		return fail(ret, argv[0]);
	print_value(argv[0], "value", value);
	return 0;
}

static int cmd_cmpxchg(int argc, char **argv)
{
	uint64_t expected, desired, prev;
	uint32_t id;
	int ret;

	if (argc != 3 || !parse_u64(argv[1], &expected) || !parse_u64(argv[2], &desired))
		return bad_usage("%s", "expected NAME EXPECTED DESIRED");
	ret = attach(argv[0], &id);
	if (ret)
		return ret;
	ret = waitvar_cmpxchg(dev, id, expected, desired, &prev);
	if (ret)
		return fail(ret, argv[0]);
	if (json)
		printf("{\"name\":\"%s\",\"prev\":%" PRIu64 ",\"exchanged\":%s}\n", argv[0], prev,
		       prev == expected ? "true" : "false");
	else
		printf("%" PRIu64 " %s\n", prev, prev == expected ? "exchanged" : "unchanged");
	return 0;
}

/* NAME OP VALUE at argv[0..2] into an entry; returns 0 or an exit status. */
static int parse_condition(char **argv, struct waitvar_waitv_entry *e)
{
	uint64_t operand;

	*e = (struct waitvar_waitv_entry){};
	if (waitvar_op_parse(argv[1], &e->op))
		return bad_usage("unknown OP '%s'", argv[1]);
	if (!parse_u64(argv[2], &operand))
		return bad_usage("bad VALUE '%s'", argv[2]);
	e->operand = operand;
	return attach(argv[0], &e->id);
}

static int cmd_wait(int argc, char **argv)
{
	struct waitvar_waitv_entry e;
	struct wait_opts o;
	uint64_t value;
	int ret;

	argc = parse_wait_opts(argc, argv, &o, true);
	if (argc < 0)
		return EXIT_USAGE;
	if (argc != 3)
		return bad_usage("%s", "expected NAME OP VALUE");
	ret = parse_condition(argv, &e);
	if (ret)
		return ret;
	ret = waitvar_wait(dev, e.id, e.op, e.operand, o.mode, o.flags, o.timeout_ns, &value);
	if (ret)
		return fail(ret, argv[0]);
	print_value(argv[0], "value", value);
	return 0;
}

static int cmd_waitv(int argc, char **argv)
{
	struct waitvar_waitv_entry e[WAITVAR_WAITV_MAX];
	struct wait_opts o;
	uint64_t value;
	int i, n, ret;

	argc = parse_wait_opts(argc, argv, &o, false);
	if (argc < 0)
		return EXIT_USAGE;
	if (argc < 3 || argc % 3 || argc / 3 > WAITVAR_WAITV_MAX)
		return bad_usage("%s", "expected NAME OP VALUE [NAME OP VALUE]... (128 at most)");
	n = argc / 3;
	for (i = 0; i < n; i++) {
		ret = parse_condition(argv + 3 * i, &e[i]);
		if (ret)
			return ret;
	}
	ret = waitvar_waitv(dev, e, n, o.mode, o.flags, o.timeout_ns, &value);
	if (ret < 0)
		return fail(ret, "");
	if (json)
		printf("{\"index\":%d,\"name\":\"%s\",\"value\":%" PRIu64 "}\n", ret,
		       argv[3 * ret], value);
	else
		printf("%d %s %" PRIu64 "\n", ret, argv[3 * ret], value);
	return 0;
}

static int cmd_wake(int argc, char **argv)
{
	uint32_t nr = 1, flags = 0, id;
	uint64_t n;
	int i, ret;

	if (argc < 1)
		return bad_usage("%s", "missing NAME");
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--all")) {
			nr = 0;
		} else if (!strcmp(argv[i], "-n") && i + 1 < argc) {
			if (!parse_u64(argv[++i], &n) || !n || n > INT32_MAX)
				return bad_usage("bad count '%s'", argv[i]);
			nr = n;
		} else if (!strcmp(argv[i], "--filtered")) {
			flags |= WAITVAR_WAKE_FILTER;
		} else {
			return bad_usage("unexpected '%s'", argv[i]);
		}
	}
	ret = attach(argv[0], &id);
	if (ret)
		return ret;
	ret = waitvar_wake_nr(dev, id, nr, flags);
	if (ret < 0)
		return fail(ret, argv[0]);
	print_value(argv[0], "woken", ret);
	return 0;
}

static int cmd_watch(int argc, char **argv)
{
	struct waitvar_waitv_entry e;
	struct wait_opts o;
	uint64_t value, seen = 0;
	int w, ret;

	argc = parse_wait_opts(argc, argv, &o, false);
	if (argc < 0)
		return EXIT_USAGE;
	if (argc != 3 || o.flags || o.mode)
		return bad_usage("%s", "expected NAME OP VALUE [--count N]");
	ret = parse_condition(argv, &e);
	if (ret)
		return ret;
	w = waitvar_watch(dev, e.id, e.op, e.operand);
	if (w < 0)
		return fail(w, argv[0]);
	for (;;) {
		struct pollfd p = { .fd = w, .events = POLLIN };

		if (poll(&p, 1, -1) < 0)
			return fail(-errno, argv[0]);
		if (p.revents & (POLLERR | POLLHUP))
			return fail(-EIDRM, argv[0]);
		if (read(w, &value, sizeof(value)) != sizeof(value))
			continue;	/* it stopped holding meanwhile */
		print_value(argv[0], "value", value);
		if (o.count && ++seen == o.count)
			return 0;
		/* Next time the condition holds with another value. */
		ret = waitvar_wait(dev, e.id, WAITVAR_OP_NE, value, 0, 0, 0, NULL);
		if (ret)
			return fail(ret, argv[0]);
	}
}

static int cmd_stats(int argc, char **argv)
{
	struct waitvar_stats st;
	uint32_t id;
	int ret;

	if (argc != 1)
		return bad_usage("%s", "expected NAME");
	ret = attach(argv[0], &id);
	if (ret)
		return ret;
	ret = waitvar_stats(dev, id, &st);
	if (ret)
		return fail(ret, argv[0]);
	/* This command's own attachment is no waiter: the counts are the others'. */
	printf(json ? "{\"name\":\"%s\",\"waiters\":%u,\"bucket\":%u,\"waits\":%" PRIu64
		      ",\"wakes\":%" PRIu64 ",\"woken\":%" PRIu64 ",\"spurious\":%" PRIu64
		      ",\"timeouts\":%" PRIu64 ",\"signals\":%" PRIu64 "}\n" :
		      "%s: waiters %u bucket %u waits %" PRIu64 " wakes %" PRIu64 " woken %" PRIu64
		      " spurious %" PRIu64 " timeouts %" PRIu64 " signals %" PRIu64 "\n",
	       argv[0], st.waiters, st.bucket, (uint64_t)st.waits, (uint64_t)st.wakes,
	       (uint64_t)st.woken, (uint64_t)st.spurious, (uint64_t)st.timeouts,
	       (uint64_t)st.signals);
	return 0;
}

static int cmd_ls(int argc, char **argv)
{
	static char buf[WAITVAR_NAME_MAX * 1024];
	uint32_t count, needed, i;
	const char *p;
	int ret;

	(void)argv;
	if (argc)
		return bad_usage("%s", "ls takes no arguments");
	ret = waitvar_list(dev, buf, sizeof(buf), &count, &needed);
	if (ret)
		return fail(ret, "");
	if (json)
		printf("{\"names\":[");
	for (i = 0, p = buf; i < count; i++, p += strlen(p) + 1)
		printf(json ? "%s\"%s\"" : "%.0s%s\n", i ? "," : "", p);
	if (json)
		printf("]}\n");
	return 0;
}

/* FEATURES, one "name value" a line (bit masks in hex), or one JSON object. */
static void print_features(const struct waitvar_features *f)
{
	const struct {
		const char *name;
		uint64_t value;
		bool mask;
	} rows[] = {
		{ "commands", f->commands, true },
		{ "create_flags", f->create_flags, true },
		{ "wait_flags", f->wait_flags, true },
		{ "wake_flags", f->wake_flags, true },
		{ "add_flags", f->add_flags, true },
		{ "ops", f->ops, true },
		{ "modes", f->modes, true },
		{ "semantics", f->semantics, true },
		{ "waitv_max", f->waitv_max, false },
		{ "max_vars_per_file", f->max_vars_per_file, false },
		{ "max_user_vars", f->max_user_vars, false },
		{ "max_user_waiters", f->max_user_waiters, false },
		{ "max_user_names", f->max_user_names, false },
		{ "max_named_vars", f->max_named_vars, false },
		{ "max_uninterruptible_ms", f->max_uninterruptible_ms, false },
		{ "wait_table_size", f->wait_table_size, false },
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		/* JSON has no hex: plain numbers there. */
		if (json)
			printf("%s\"%s\":%" PRIu64, i ? "," : "{", rows[i].name, rows[i].value);
		else if (rows[i].mask)
			printf("%s %#" PRIx64 "\n", rows[i].name, rows[i].value);
		else
			printf("%s %" PRIu64 "\n", rows[i].name, rows[i].value);
	}
	if (json)
		printf("}\n");
}

static int cmd_features(int argc, char **argv)
{
	struct waitvar_features f;
	int ret;

	(void)argv;
	if (argc)
		return bad_usage("%s", "features takes no arguments");
	ret = waitvar_features(dev, &f);
	if (ret)
		return fail(ret, "");
	print_features(&f);
	return 0;
}

static int cmd_rm(int argc, char **argv)
{
	int ret;

	if (argc != 1)
		return bad_usage("%s", "expected NAME");
	ret = waitvar_named_remove(dev, argv[0]);
	return ret ? fail(ret, argv[0]) : 0;
}

static const struct cmd cmds[] = {
	{ "create", "NAME [--value N] [--mode OCTAL] [--lock spin|mutex]",
	  "create a named variable (mode 0600, value 0 unless given); prints its value",
	  cmd_create },
	{ "get", "NAME", "print the value", cmd_get },
	{ "set", "NAME VALUE", "store VALUE and wake the waiters", cmd_set },
	{ "add", "NAME DELTA [--no-wake]", "add a signed DELTA, wake; prints the new value",
	  cmd_add },
	{ "dec", "NAME", "decrement; wakes the waiters only at 0; prints the new value", cmd_dec },
	{ "cmpxchg", "NAME EXPECTED DESIRED", "store DESIRED if the value is EXPECTED; prints the old value",
	  cmd_cmpxchg },
	{ "wait", "NAME OP VALUE [--timeout DURATION [--jiffies]] [--killable|--io|--uninterruptible] [--exclusive]",
	  "sleep until NAME OP VALUE holds; prints the value it held for", cmd_wait },
	{ "waitv", "NAME OP VALUE [NAME OP VALUE]... [--timeout DURATION [--jiffies]] [mode]",
	  "sleep until any condition holds; prints its index, name and value", cmd_waitv },
	{ "wake", "NAME [--all | -n N] [--filtered]",
	  "wake the waiters (one exclusive, N, or all; only those whose condition holds); prints how many",
	  cmd_wake },
	{ "watch", "NAME OP VALUE [--count N]",
	  "print the value each time the condition holds with a new value", cmd_watch },
	{ "stats", "NAME", "print the variable's counters and hashed-queue bucket", cmd_stats },
	{ "ls", "", "list the names you may read", cmd_ls },
	{ "rm", "NAME", "remove the variable; its waiters fail with EIDRM", cmd_rm },
	{ "features", "", "print the driver's commands, flags, limits and semantics, one per line",
	  cmd_features },
	{}
};

int main(int argc, char **argv)
{
	int i, n = 0;

	/* --json and --help may come anywhere; the rest keeps its order. */
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = true;
		else
			argv[n++] = argv[i];
	}
	argc = n;
	if (!argc || !strcmp(argv[0], "--help") || !strcmp(argv[0], "-h")) {
		usage(argc ? stdout : stderr, NULL);
		return argc ? 0 : EXIT_USAGE;
	}
	for (current = cmds; current->name; current++)
		if (!strcmp(current->name, argv[0]))
			break;
	if (!current->name) {
		current = NULL;
		return bad_usage("unknown command '%s'", argv[0]);
	}
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout, current);
			return 0;
		}
	}
	dev = waitvar_open();
	if (dev < 0) {
		fprintf(stderr, "waitvarctl: /dev/waitvar: %s\n", strerror(-dev));
		return EXIT_ERROR;
	}
	return current->run(argc - 1, argv + 1);
}
