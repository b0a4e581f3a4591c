// SPDX-License-Identifier: GPL-2.0
/*
 * Runs the README's walkthrough (run.sh stages it next to bin/ as
 * walkthrough.sh) and compares what it prints, line by line, with the
 * README's expected output (walkthrough.out; '*' matches anything).
 */
#include <fnmatch.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "waitvar_test.h"

/* The kernel's harness is written for -Wall; TEST() has unused parameters. */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"

#define MAX_LINES 256

/* Reads @f into @lines (newlines dropped); returns the count. */
static int read_lines(FILE *f, char lines[][256])
{
	int n = 0;

	while (n < MAX_LINES && fgets(lines[n], 256, f)) {
		lines[n][strcspn(lines[n], "\n")] = '\0';
		n++;
	}
	return n;
}

/* The staged file @name, next to the directory this program is in. */
static void staged(char *path, size_t size, const char *name)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	exe[n > 0 ? n : 0] = '\0';
	snprintf(path, size, "%s/../%s", dirname(exe), name);
}

TEST(readme_walkthrough_prints_what_the_readme_says)
{
	static char want[MAX_LINES][256], got[MAX_LINES][256];
	char script[PATH_MAX + 32], expected[PATH_MAX + 32], cmd[PATH_MAX + 64];
	int nwant, ngot, i, status;
	FILE *f;

	staged(script, sizeof(script), "walkthrough.sh");
	staged(expected, sizeof(expected), "walkthrough.out");
	f = fopen(expected, "r");
	ASSERT_TRUE(f != NULL) TH_LOG("%s: %s", expected, strerror(errno));
	nwant = read_lines(f, want);
	fclose(f);

	snprintf(cmd, sizeof(cmd), "bash %s 2>&1", script);
	f = popen(cmd, "r");
	ASSERT_TRUE(f != NULL);
	ngot = read_lines(f, got);
	status = pclose(f);
	for (i = 0; i < ngot; i++)
		TH_LOG("| %s", got[i]);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ASSERT_EQ(nwant, ngot);
	for (i = 0; i < nwant; i++)
		EXPECT_EQ(0, fnmatch(want[i], got[i], 0))
			TH_LOG("line %d: expected '%s', got '%s'", i + 1, want[i], got[i]);
}

TEST_HARNESS_MAIN
