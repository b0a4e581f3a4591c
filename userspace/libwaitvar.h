/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libwaitvar: one call per /dev/waitvar ioctl.  Every function returns 0
 * (or a count or descriptor, where it says so) on success and -errno on
 * failure, sets nothing global and allocates nothing.
 */
#ifndef LIBWAITVAR_H
#define LIBWAITVAR_H

#include <stdint.h>

#include <linux/waitvar.h>

/* Opens /dev/waitvar close-on-exec; returns the descriptor. */
int waitvar_open(void);

int waitvar_create(int fd, uint64_t value, uint32_t flags, uint32_t *id);
int waitvar_destroy(int fd, uint32_t id);

int waitvar_named_create(int fd, const char *name, uint64_t value, uint32_t flags,
			 uint32_t mode, uint32_t *id);
int waitvar_named_open(int fd, const char *name, uint32_t *id);
int waitvar_named_remove(int fd, const char *name);
/* Fills @buf with NUL-separated names; *@needed is the size all would take. */
int waitvar_list(int fd, char *buf, uint32_t size, uint32_t *count, uint32_t *needed);

int waitvar_get(int fd, uint32_t id, uint64_t *value);
int waitvar_set(int fd, uint32_t id, uint64_t value);
int waitvar_add(int fd, uint32_t id, int64_t delta, uint32_t flags, uint64_t *value);
int waitvar_dec_and_wake(int fd, uint32_t id, uint64_t *value);
int waitvar_cmpxchg(int fd, uint32_t id, uint64_t expected, uint64_t desired,
		    uint64_t *prev);

int waitvar_wake(int fd, uint32_t id);
/* Returns how many waiters were woken (see struct waitvar_wake_nr). */
int waitvar_wake_nr(int fd, uint32_t id, uint32_t nr, uint32_t flags);

/*
 * @flags: WAITVAR_WAIT_* bits; @timeout_ns is used with one of the timeout
 * bits and not passed on without one (the driver wants 0 there then).
 * @value (may be NULL) gets the value for which the condition held.
 */
int waitvar_wait(int fd, uint32_t id, uint32_t op, uint64_t operand, uint32_t mode,
		 uint32_t flags, uint64_t timeout_ns, uint64_t *value);
/* Returns the index of the first entry that held; @value may be NULL. */
int waitvar_waitv(int fd, const struct waitvar_waitv_entry *entries, uint32_t count,
		  uint32_t mode, uint32_t flags, uint64_t timeout_ns, uint64_t *value);
/* Returns a descriptor that polls readable while the condition holds. */
int waitvar_watch(int fd, uint32_t id, uint32_t op, uint64_t operand);
int waitvar_stats(int fd, uint32_t id, struct waitvar_stats *stats);
/* What the running driver has: commands, flags, limits, semantics. */
int waitvar_features(int fd, struct waitvar_features *features);

/* "eq", "ne", "lt", ... "lt_s", ... "any", "all", "none"; NULL if unknown. */
const char *waitvar_op_name(uint32_t op);
/* The op named @name (as above, or == != < <= > >=); -EINVAL if none. */
int waitvar_op_parse(const char *name, uint32_t *op);

#endif /* LIBWAITVAR_H */
