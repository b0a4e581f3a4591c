// SPDX-License-Identifier: GPL-2.0
/*
 * waitvarctl, the CLI on the guest's PATH: every command, its output
 * (human and --json), its exit status, and waits that other invocations
 * end, as a person would use it from the shell.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "waitvar_test.h"

/* The kernel's harness is written for -Wall; it has unused parameters. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

FIXTURE(ctl) {
	int fd;
	char name[WAITVAR_NAME_MAX];
};

FIXTURE_SETUP(ctl)
{
	self->fd = waitvar_open();
	ASSERT_LE(0, self->fd);
	snprintf(self->name, sizeof(self->name), "/ctl-%d", getpid());
}

FIXTURE_TEARDOWN(ctl)
{
	waitvar_named_remove(self->fd, self->name);
	close(self->fd);
}

/*
 * Reads what the popen()ed @f writes to its end (what fits into @out, the
 * rest dropped), then pclose()s it: a command still writing when its pipe
 * closed would die of SIGPIPE, however slow the guest.  Its exit status, or
 * 128 + the signal that ended it.
 */
static int drain_close(FILE *f, char *out, size_t size)
{
	char rest[256];
	size_t len = 0;
	int status;

	out[0] = '\0';
	while (len + 1 < size && fgets(out + len, size - len, f))
		len = strlen(out);
	while (fgets(rest, sizeof(rest), f))
		;
	status = pclose(f);
	if (status < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Runs a shell command line; its stdout (and stderr) go to @out. */
static int sh(char *out, size_t size, const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	FILE *f;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	return drain_close(f, out, size);
}

/* Waits until the named variable has @want waiters (10 s at most). */
static bool named_waiters(int fd, const char *name, uint32_t want)
{
	uint32_t id;
	bool ok;

	if (waitvar_named_open(fd, name, &id))
		return false;
	ok = wait_stat(fd, id, waiters, want) == want;
	waitvar_destroy(fd, id);
	return ok;
}

/* STATS of the named variable @name, through an id of @fd's; 0 or -errno. */
static int named_stats(int fd, const char *name, struct waitvar_stats *st)
{
	uint32_t id;
	int ret;

	ret = waitvar_named_open(fd, name, &id);
	if (ret)
		return ret;
	*st = (struct waitvar_stats){ 0 };
	ret = waitvar_stats(fd, id, st);
	waitvar_destroy(fd, id);
	return ret;
}

TEST_F(ctl, create_get_set_add_dec_cmpxchg_rm)
{
	char out[512];

	ASSERT_EQ(0, sh(out, sizeof(out), "waitvarctl create %s --value 3 --mode 0640",
			self->name));
	EXPECT_STREQ("3\n", out);
	EXPECT_EQ(3, sh(out, sizeof(out), "waitvarctl create %s 2>&1", self->name));
	EXPECT_TRUE(strstr(out, "File exists") != NULL) TH_LOG("%s", out);
	EXPECT_EQ(0, sh(out, sizeof(out), "waitvarctl get %s", self->name));
	EXPECT_STREQ("3\n", out);
	EXPECT_EQ(0, sh(out, sizeof(out), "waitvarctl --json get %s", self->name));
	EXPECT_TRUE(strstr(out, "\"value\":3}") != NULL) TH_LOG("%s", out);
	EXPECT_EQ(0, sh(out, sizeof(out), "waitvarctl set %s 10", self->name));
	EXPECT_EQ(0, sh(out, sizeof(out), "waitvarctl add %s -4", self->name));
	EXPECT_STREQ("6\n", out);
	EXPECT_EQ(0, sh(out, sizeof(out), "waitvarctl dec %s", self->name));
	EXPECT_STREQ("5\n", out);
	EXPECT_EQ(0, sh(out, sizeof(out), "waitvarctl cmpxchg %s 4 9", self->name));
	EXPECT_STREQ("5 unchanged\n", out);
	EXPECT_EQ(0, sh(out, sizeof(out), "waitvarctl --json cmpxchg %s 5 9", self->name));
	EXPECT_TRUE(strstr(out, "\"prev\":5,\"exchanged\":true") != NULL) TH_LOG("%s", out);
	EXPECT_EQ(0, sh(out, sizeof(out), "waitvarctl ls"));
	EXPECT_TRUE(strstr(out, self->name) != NULL) TH_LOG("%s", out);
	EXPECT_EQ(0, sh(out, sizeof(out), "waitvarctl rm %s", self->name));
	EXPECT_EQ(3, sh(out, sizeof(out), "waitvarctl get %s 2>&1", self->name));
	EXPECT_TRUE(strstr(out, "No such file or directory") != NULL) TH_LOG("%s", out);
}

TEST_F(ctl, bad_usage_prints_usage_and_exits_2)
{
	static const char *const bad[] = {
		"", "frobnicate", "get", "set /x", "set /x notanumber", "wait /x eq",
		"wait /x frob 1", "wait /x eq 1 --timeout 5parsecs",
		"wait /x eq 1 --io", "wait /x eq 1 --jiffies", "waitv /x eq 1 --jiffies",
		"wake /x -n 0", "create /x --lock rwsem", "ls extra",
		"features extra",
	};
	char out[4096];
	size_t i;

	for (i = 0; i < ARRAY_LEN(bad); i++) {
		EXPECT_EQ(2, sh(out, sizeof(out), "waitvarctl %s 2>&1", bad[i]))
			TH_LOG("case %zu", i);
		EXPECT_TRUE(strstr(out, "usage: waitvarctl") != NULL) TH_LOG("case %zu", i);
	}
	EXPECT_EQ(0, sh(out, sizeof(out), "waitvarctl wait --help"));
	EXPECT_TRUE(strstr(out, "--timeout") != NULL);
	EXPECT_EQ(0, sh(out, sizeof(out), "waitvarctl --help"));
	EXPECT_TRUE(strstr(out, "watch") != NULL);
	EXPECT_TRUE(strstr(out, "features") != NULL);
}

TEST_F(ctl, wait_times_out_with_exit_1)
{
	char out[512];

	ASSERT_EQ(0, sh(out, sizeof(out), "waitvarctl create %s", self->name));
	EXPECT_EQ(1, sh(out, sizeof(out), "waitvarctl wait %s eq 1 --timeout 100ms 2>&1",
			self->name));
	EXPECT_TRUE(strstr(out, "timed out") != NULL) TH_LOG("%s", out);
	EXPECT_EQ(1, sh(out, sizeof(out), "waitvarctl wait %s eq 1 --io --timeout 50ms",
			self->name));
	EXPECT_EQ(1, sh(out, sizeof(out), "waitvarctl wait %s eq 1 --timeout 20ms --jiffies",
			self->name));
	EXPECT_EQ(1, sh(out, sizeof(out), "waitvarctl waitv %s eq 1 --jiffies --timeout 20ms",
			self->name));
}

TEST_F(ctl, a_wait_in_one_command_ends_by_a_set_in_another)
{
	struct waitvar_stats st;
	char out[512], cmd[256];
	FILE *w;

	ASSERT_EQ(0, sh(out, sizeof(out), "waitvarctl create %s --value 2", self->name));
	snprintf(cmd, sizeof(cmd), "waitvarctl wait %s eq 0 --killable", self->name);
	w = popen(cmd, "r");
	ASSERT_TRUE(w != NULL);
	ASSERT_TRUE(named_waiters(self->fd, self->name, 1));
	EXPECT_EQ(0, sh(out, sizeof(out), "waitvarctl dec %s", self->name));
	/* 2 to 1 is no wake: the waiter is still in its one wait. */
	ASSERT_EQ(0, named_stats(self->fd, self->name, &st));
	EXPECT_EQ(0U, st.wakes);
	EXPECT_EQ(1U, st.waits);
	EXPECT_EQ(1U, st.waiters);
	EXPECT_EQ(0, sh(out, sizeof(out), "waitvarctl dec %s", self->name));
	EXPECT_EQ(0, drain_close(w, out, sizeof(out)));
	EXPECT_STREQ("0\n", out);
}

TEST_F(ctl, wake_counts_exclusive_waiters_and_filtered_wakes)
{
	char out[512], cmd[256];
	FILE *w[3];
	int i;

	ASSERT_EQ(0, sh(out, sizeof(out), "waitvarctl create %s", self->name));
	snprintf(cmd, sizeof(cmd), "waitvarctl wait %s ge 1 --exclusive", self->name);
	for (i = 0; i < 3; i++) {
		w[i] = popen(cmd, "r");
		ASSERT_TRUE(w[i] != NULL);
	}
	ASSERT_TRUE(named_waiters(self->fd, self->name, 3));
	/* Nothing holds yet: a filtered wake wakes nobody. */
	EXPECT_EQ(0, sh(out, sizeof(out), "waitvarctl wake %s --filtered", self->name));
	EXPECT_STREQ("0\n", out);
	EXPECT_EQ(0, sh(out, sizeof(out), "waitvarctl add %s 1 --no-wake", self->name));
	EXPECT_EQ(0, sh(out, sizeof(out), "waitvarctl wake %s", self->name));
	EXPECT_STREQ("1\n", out);
	EXPECT_TRUE(named_waiters(self->fd, self->name, 2));
	EXPECT_EQ(0, sh(out, sizeof(out), "waitvarctl --json wake %s --all", self->name));
	EXPECT_TRUE(strstr(out, "\"woken\":2}") != NULL) TH_LOG("%s", out);
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(0, drain_close(w[i], out, sizeof(out))) TH_LOG("waiter %d", i);
		EXPECT_STREQ("1\n", out);
	}
}

TEST_F(ctl, waitv_reports_which_condition_held)
{
	char out[512], other[WAITVAR_NAME_MAX + 8], cmd[512];
	FILE *w;

	snprintf(other, sizeof(other), "%s-b", self->name);
	ASSERT_EQ(0, sh(out, sizeof(out), "waitvarctl create %s", self->name));
	ASSERT_EQ(0, sh(out, sizeof(out), "waitvarctl create %s", other));
	snprintf(cmd, sizeof(cmd), "waitvarctl waitv %s eq 1 %s any 6 --timeout 60s",
		 self->name, other);
	w = popen(cmd, "r");
	ASSERT_TRUE(w != NULL);
	ASSERT_TRUE(named_waiters(self->fd, other, 1));
	EXPECT_EQ(0, sh(out, sizeof(out), "waitvarctl set %s 4", other));
	EXPECT_EQ(0, drain_close(w, out, sizeof(out)));
	snprintf(cmd, sizeof(cmd), "1 %s 4\n", other);
	EXPECT_STREQ(cmd, out);
	waitvar_named_remove(self->fd, other);
}

TEST_F(ctl, watch_prints_each_time_the_condition_holds)
{
	char out[512], cmd[256];
	FILE *w;

	ASSERT_EQ(0, sh(out, sizeof(out), "waitvarctl create %s", self->name));
	snprintf(cmd, sizeof(cmd), "waitvarctl watch %s ge 10 --count 2", self->name);
	w = popen(cmd, "r");
	ASSERT_TRUE(w != NULL);
	ASSERT_TRUE(named_waiters(self->fd, self->name, 1));
	EXPECT_EQ(0, sh(out, sizeof(out), "waitvarctl set %s 5", self->name));
	EXPECT_EQ(0, sh(out, sizeof(out), "waitvarctl set %s 12", self->name));
	ASSERT_TRUE(fgets(out, sizeof(out), w) != NULL);
	EXPECT_STREQ("12\n", out);
	EXPECT_EQ(0, sh(out, sizeof(out), "waitvarctl set %s 15", self->name));
	EXPECT_EQ(0, drain_close(w, out, sizeof(out)));
	EXPECT_STREQ("15\n", out);
}

TEST_F(ctl, stats_show_the_counters)
{
	char out[512];

	ASSERT_EQ(0, sh(out, sizeof(out), "waitvarctl create %s", self->name));
	EXPECT_EQ(1, sh(out, sizeof(out), "waitvarctl wait %s eq 1 --timeout 10ms", self->name));
	EXPECT_EQ(0, sh(out, sizeof(out), "waitvarctl set %s 2", self->name));
	EXPECT_EQ(0, sh(out, sizeof(out), "waitvarctl --json stats %s", self->name));
	EXPECT_TRUE(strstr(out, "\"waits\":1,\"wakes\":1,") != NULL) TH_LOG("%s", out);
	EXPECT_TRUE(strstr(out, "\"timeouts\":1,") != NULL) TH_LOG("%s", out);
	EXPECT_EQ(0, sh(out, sizeof(out), "waitvarctl stats %s", self->name));
	EXPECT_TRUE(strstr(out, "waiters 0 bucket ") != NULL) TH_LOG("%s", out);
}

TEST_F(ctl, features_prints_each_field_as_name_and_value)
{
	char out[4096], want[64];
	unsigned int waiters = 0;

	ASSERT_EQ(0, get_param("max_user_waiters", &waiters));
	ASSERT_EQ(0, sh(out, sizeof(out), "waitvarctl features"));
	/* Commands 0x00 to 0x11, a bit each. */
	EXPECT_TRUE(strstr(out, "commands 0x3ffff\n") != NULL) TH_LOG("%s", out);
	snprintf(want, sizeof(want), "\nmax_user_waiters %u\n", waiters);
	EXPECT_TRUE(strstr(out, want) != NULL) TH_LOG("want '%s' in:\n%s", want + 1, out);
	EXPECT_TRUE(strstr(out, "\nwaitv_max 128\n") != NULL) TH_LOG("%s", out);
	EXPECT_TRUE(strstr(out, "\nmax_uninterruptible_ms ") != NULL) TH_LOG("%s", out);
	EXPECT_TRUE(strstr(out, "\nwait_table_size ") != NULL) TH_LOG("%s", out);
	EXPECT_EQ(0, sh(out, sizeof(out), "waitvarctl --json features"));
	snprintf(want, sizeof(want), "\"max_user_waiters\":%u", waiters);
	EXPECT_TRUE(strstr(out, "{\"commands\":262143,") != NULL) TH_LOG("%s", out);
	EXPECT_TRUE(strstr(out, want) != NULL) TH_LOG("%s", out);
}

TEST_HARNESS_MAIN
