// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * tests/summary.sh, which closes make test: it adds up Criterion's logs,
 * fails on a failure, and repeats each failure at the end, where a log cut
 * to its last lines (CI keeps only those) still names it.
 *
 * A system test (tests/system/ checks the machinery around the library by
 * running what make and users run): it runs the script make test ends with.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <criterion/criterion.h>

#include "command.h"

static void write_log(char *path, const char *text)
{
	int fd = mkstemp(path);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "w");

	cr_assert(f, "cannot write %s", path);
	fputs(text, f);
	cr_assert_eq(fclose(f), 0);
}

static const char passing[] =
	"[PASS] a::one: (0.01s)\n"
	"[PASS] a::two: (0.01s)\n"
	"[====] Synthesis: Tested: 2 | Passing: 2 | Failing: 0 | Crashing: 0 \n";

/* As Criterion prints them, colours included, with a run after the failure. */
static const char failing[] =
	"[\033[0;34m----\033[0m] tests/guest/x.c:44: Assertion Failed\n"
	"[\033[0;34m----\033[0m]   \n"
	"[\033[0;34m----\033[0m]   ended after 1 ms\n"
	"[\033[0;34m----\033[0m]   \n"
	"[\033[0;31mFAIL\033[0m] b::slow: (0.50s)\n"
	"[\033[0;32mPASS\033[0m] b::fast: (0.01s)\n"
	"[\033[0;34m----\033[0m] a long line the test printed\n"
	"[====] Synthesis: Tested: 2 | Passing: 1 | Failing: 1 | Crashing: 0 \n";

/*
 * Run tests/summary.sh on logs holding @texts (NULL-ended), and with
 * --phases on a file holding @phases unless it is NULL; its exit status.
 */
static int summarize_phases(const char *phases, const char *const *texts, char *out, size_t size)
{
	char paths[2][32], phases_path[32] = "/tmp/summary_phases.XXXXXX", command[192];
	int i, n, status;

	n = snprintf(command, sizeof(command), "tests/summary.sh");
	if (phases) {
		write_log(phases_path, phases);
		n += snprintf(command + n, sizeof(command) - n, " --phases %s", phases_path);
	}
	for (i = 0; texts[i]; i++) {
		cr_assert_lt(i, 2);
		snprintf(paths[i], sizeof(paths[i]), "/tmp/summary_log.XXXXXX");
		write_log(paths[i], texts[i]);
		n += snprintf(command + n, sizeof(command) - n, " %s", paths[i]);
	}
	snprintf(command + n, sizeof(command) - n, " 2>&1");
	status = run_command(command, out, size);
	while (i--)
		unlink(paths[i]);
	if (phases)
		unlink(phases_path);
	cr_assert(WIFEXITED(status), "tests/summary.sh did not exit: %s", out);
	return WEXITSTATUS(status);
}

static int summarize(const char *const *texts, char *out, size_t size)
{
	return summarize_phases(NULL, texts, out, size);
}

Test(summary, adds_up_passing_logs)
{
	const char *const logs[] = { passing, passing, NULL };
	char out[1024];
	int status = summarize(logs, out, sizeof(out));

	cr_expect_eq(status, 0, "status %d: %s", status, out);
	cr_expect_str_eq(out, "tests: 4 passed, 0 failed\n");
}

Test(summary, names_each_failure_in_its_last_lines)
{
	const char *const logs[] = { passing, failing, NULL };
	char out[1024];
	int status = summarize(logs, out, sizeof(out));

	cr_expect_eq(status, 1, "status %d: %s", status, out);
	cr_expect_str_eq(out,
			 "failures:\n"
			 "  [----] tests/guest/x.c:44: Assertion Failed\n"
			 "  [----]   ended after 1 ms\n"
			 "  [FAIL] b::slow: (0.50s)\n"
			 "tests: 3 passed, 1 failed\n");
}

Test(summary, fails_a_log_that_never_finished)
{
	const char *const logs[] = { "[RUN ] a::one\n", NULL };
	char out[1024];
	int status = summarize(logs, out, sizeof(out));

	cr_expect_eq(status, 1, "status %d: %s", status, out);
	cr_expect(strstr(out, "has no Criterion Synthesis line"), "%s", out);
}

/* make test's phases, in the order they ran, as minutes and seconds. */
Test(summary, prints_the_phases_before_the_counts)
{
	const char *const logs[] = { passing, NULL };
	char out[1024];
	int status = summarize_phases("kernel 0\nbuild 215\nguest-stock 1261\n", logs, out, sizeof(out));

	cr_expect_eq(status, 0, "status %d: %s", status, out);
	cr_expect_str_eq(out,
			 "phases: kernel 0:00, build 3:35, guest-stock 21:01 (total 24:36)\n"
			 "tests: 2 passed, 0 failed\n");
}
