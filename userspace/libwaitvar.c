// SPDX-License-Identifier: GPL-2.0
/* libwaitvar: see libwaitvar.h. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "libwaitvar.h"

static int call(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

#define TIMEOUT_FLAGS \
	(WAITVAR_WAIT_TIMEOUT | WAITVAR_WAIT_ABS_MONOTONIC | WAITVAR_WAIT_ABS_REALTIME)

/* A timeout goes to the driver only with a flag that uses it: 0 otherwise. */
static uint64_t used_timeout(uint32_t flags, uint64_t timeout_ns)
{
	return flags & TIMEOUT_FLAGS ? timeout_ns : 0;
}

int waitvar_open(void)
{
	int fd = open("/dev/waitvar", O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int waitvar_create(int fd, uint64_t value, uint32_t flags, uint32_t *id)
{
	struct waitvar_create arg = { .value = value, .flags = flags };
	int ret = call(fd, WAITVAR_IOC_CREATE, &arg);

	if (!ret)
		*id = arg.id;
	return ret;
}

int waitvar_destroy(int fd, uint32_t id)
{
	struct waitvar_id arg = { .id = id };

	return call(fd, WAITVAR_IOC_DESTROY, &arg);
}

static int named(int fd, unsigned long cmd, const char *name, uint64_t value, uint32_t flags,
		 uint32_t mode, uint32_t *id)
{
	struct waitvar_named arg = { .value = value, .flags = flags, .mode = mode };
	size_t len = strlen(name);
	int ret;

	if (len >= sizeof(arg.name))
		return -ENAMETOOLONG;
	memcpy(arg.name, name, len);
	ret = call(fd, cmd, &arg);
	if (!ret && id)
		*id = arg.id;
	return ret;
}

int waitvar_named_create(int fd, const char *name, uint64_t value, uint32_t flags,
			 uint32_t mode, uint32_t *id)
{
	return named(fd, WAITVAR_IOC_NAMED_CREATE, name, value, flags, mode, id);
}

int waitvar_named_open(int fd, const char *name, uint32_t *id)
{
	return named(fd, WAITVAR_IOC_NAMED_OPEN, name, 0, 0, 0, id);
}

int waitvar_named_remove(int fd, const char *name)
{
	return named(fd, WAITVAR_IOC_NAMED_REMOVE, name, 0, 0, 0, NULL);
}

int waitvar_list(int fd, char *buf, uint32_t size, uint32_t *count, uint32_t *needed)
{
	struct waitvar_list arg = { .names = (uintptr_t)buf, .size = size };
	int ret = call(fd, WAITVAR_IOC_LIST, &arg);

	if (!ret) {
		*count = arg.count;
		*needed = arg.needed;
	}
	return ret;
}

int waitvar_get(int fd, uint32_t id, uint64_t *value)
{
	struct waitvar_value arg = { .id = id };
	int ret = call(fd, WAITVAR_IOC_GET, &arg);

	if (!ret)
		*value = arg.value;
	return ret;
}

int waitvar_set(int fd, uint32_t id, uint64_t value)
{
	struct waitvar_value arg = { .id = id, .value = value };

	return call(fd, WAITVAR_IOC_SET, &arg);
}

int waitvar_add(int fd, uint32_t id, int64_t delta, uint32_t flags, uint64_t *value)
{
	struct waitvar_add arg = { .id = id, .flags = flags, .delta = delta };
	int ret = call(fd, WAITVAR_IOC_ADD, &arg);

	if (!ret && value)
		*value = arg.value;
	return ret;
}

int waitvar_dec_and_wake(int fd, uint32_t id, uint64_t *value)
{
	struct waitvar_value arg = { .id = id };
	int ret = call(fd, WAITVAR_IOC_DEC_AND_WAKE, &arg);

	if (!ret && value)
		*value = arg.value;
	return ret;
}

int waitvar_cmpxchg(int fd, uint32_t id, uint64_t expected, uint64_t desired, uint64_t *prev)
{
	struct waitvar_cmpxchg arg = { .id = id, .expected = expected, .desired = desired };
	int ret = call(fd, WAITVAR_IOC_CMPXCHG, &arg);

	if (!ret)
		*prev = arg.prev;
	return ret;
}

int waitvar_wake(int fd, uint32_t id)
{
	struct waitvar_id arg = { .id = id };

	return call(fd, WAITVAR_IOC_WAKE, &arg);
}

int waitvar_wake_nr(int fd, uint32_t id, uint32_t nr, uint32_t flags)
{
	struct waitvar_wake_nr arg = { .id = id, .flags = flags, .nr = nr };
	int ret = call(fd, WAITVAR_IOC_WAKE_NR, &arg);

	return ret ? ret : (int)arg.woken;
}

int waitvar_wait(int fd, uint32_t id, uint32_t op, uint64_t operand, uint32_t mode,
		 uint32_t flags, uint64_t timeout_ns, uint64_t *value)
{
	struct waitvar_wait arg = { .id = id, .op = op, .operand = operand, .mode = mode,
				    .flags = flags, .timeout_ns = used_timeout(flags, timeout_ns) };
	int ret = call(fd, WAITVAR_IOC_WAIT, &arg);

	if (!ret && value)
		*value = arg.value;
	return ret;
}

int waitvar_waitv(int fd, const struct waitvar_waitv_entry *entries, uint32_t count,
		  uint32_t mode, uint32_t flags, uint64_t timeout_ns, uint64_t *value)
{
	struct waitvar_waitv arg = { .entries = (uintptr_t)entries, .count = count,
				     .mode = mode, .flags = flags,
				     .timeout_ns = used_timeout(flags, timeout_ns) };
	int ret = call(fd, WAITVAR_IOC_WAITV, &arg);

	if (ret)
		return ret;
	if (value)
		*value = arg.value;
	return (int)arg.index;
}

int waitvar_watch(int fd, uint32_t id, uint32_t op, uint64_t operand)
{
	struct waitvar_watch arg = { .id = id, .op = op, .operand = operand };
	int ret = call(fd, WAITVAR_IOC_WATCH, &arg);

	return ret ? ret : (int)arg.fd;
}

int waitvar_stats(int fd, uint32_t id, struct waitvar_stats *stats)
{
	/* Every field but the id is out only: 0 on input. */
	*stats = (struct waitvar_stats){ .id = id };
	return call(fd, WAITVAR_IOC_STATS, stats);
}

int waitvar_features(int fd, struct waitvar_features *features)
{
	/* Every field is out only: 0 on input. */
	*features = (struct waitvar_features){};
	return call(fd, WAITVAR_IOC_FEATURES, features);
}

static const struct {
	const char *name, *symbol;
} ops[WAITVAR_OP_COUNT] = {
	[WAITVAR_OP_EQ] = { "eq", "==" },	[WAITVAR_OP_NE] = { "ne", "!=" },
	[WAITVAR_OP_LT] = { "lt", "<" },	[WAITVAR_OP_LE] = { "le", "<=" },
	[WAITVAR_OP_GT] = { "gt", ">" },	[WAITVAR_OP_GE] = { "ge", ">=" },
	[WAITVAR_OP_LT_S] = { "lt_s", NULL },	[WAITVAR_OP_LE_S] = { "le_s", NULL },
	[WAITVAR_OP_GT_S] = { "gt_s", NULL },	[WAITVAR_OP_GE_S] = { "ge_s", NULL },
	[WAITVAR_OP_ANY] = { "any", NULL },	[WAITVAR_OP_ALL] = { "all", NULL },
	[WAITVAR_OP_NONE] = { "none", NULL },
};

const char *waitvar_op_name(uint32_t op)
{
	return op < WAITVAR_OP_COUNT ? ops[op].name : NULL;
}

int waitvar_op_parse(const char *name, uint32_t *op)
{
	uint32_t i;

	for (i = 0; i < WAITVAR_OP_COUNT; i++) {
		if (!strcmp(name, ops[i].name) || (ops[i].symbol && !strcmp(name, ops[i].symbol))) {
			*op = i;
			return 0;
		}
	}
	return -EINVAL;
}
