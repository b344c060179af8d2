// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The worked example, bpf/examples/exec_glob, as make built it: from a scratch
 * install of the headers through pkg-config only. It runs a command
 * whose execs are known and must count them, per rule and per executable.
 * Other tests may exec concurrently (popen), so the rules here match only
 * what this command runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "guest/guest.h"

#define EXAMPLE AK_BUILD_DIR "/example/exec_glob"

struct counts {
	unsigned long long rule[8];
	unsigned long long true_bin_t, true_true, env_env;
	int status;
	int said_why;	/* a line said what ak_glob_valid found */
};

static struct counts run(const char *args)
{
	struct counts c = {};
	char command[512], line[256], exe[64];
	unsigned long long n;
	unsigned int rule;
	FILE *p;

	snprintf(command, sizeof(command), EXAMPLE " %s 2>&1", args);
	p = popen(command, "r");
	cr_assert(p, "cannot run %s", command);
	while (fgets(line, sizeof(line), p)) {
		fputs(line, stdout);
		if (strstr(line, "opens no class") || strstr(line, "empty pattern") ||
		    strstr(line, "longer than its limit"))
			c.said_why = 1;
		if (sscanf(line, "rule %u %*s %llu", &rule, &n) == 2 && rule < 8)
			c.rule[rule] = n;
		if (sscanf(line, "exe %63s rule %u %llu", exe, &rule, &n) == 3) {
			if (!strcmp(exe, "true") && rule == 0)
				c.true_bin_t = n;
			if (!strcmp(exe, "true") && rule == 1)
				c.true_true = n;
			if (!strcmp(exe, "env") && rule == 2)
				c.env_env = n;
		}
	}
	c.status = pclose(p);
	return c;
}

Test(exec_glob, example_counts_the_execs_of_a_command, .timeout = 120)
{
	/* Execs: /bin/sh, /bin/true twice, /usr/bin/env, and /bin/true from env. */
	struct counts c = run("'/bin/t*' '*/tru[de]' '*/env' 'caf\\*' -- "
			      "/bin/sh -c '/bin/true; /bin/true; /usr/bin/env /bin/true'");

	cr_assert(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0, "status %#x", c.status);
	cr_expect_eq(c.rule[0], 3, "/bin/t*: %llu", c.rule[0]);
	cr_expect_eq(c.rule[1], 3, "*/tru[de]: %llu", c.rule[1]);
	cr_expect_eq(c.rule[2], 1, "*/env: %llu", c.rule[2]);
	cr_expect_eq(c.rule[3], 0, "caf\\*: %llu", c.rule[3]);
	cr_expect_eq(c.true_bin_t, 3, "true under /bin/t*: %llu", c.true_bin_t);
	cr_expect_eq(c.true_true, 3, "true under */tru[de]: %llu", c.true_true);
	cr_expect_eq(c.env_env, 1, "env under */env: %llu", c.env_env);
}

Test(exec_glob, example_refuses_bad_arguments, .timeout = 60)
{
	struct counts c;

	c = run("'*'");
	cr_expect(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 2, "no command: %#x", c.status);
	c = run("-- /bin/true");
	cr_expect(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 2, "no pattern: %#x", c.status);
	c = run("a b c d e f g h i j k l m n o p q -- /bin/true");
	cr_expect(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 2, "17 patterns: %#x",
		  c.status);
	c = run("'/tmp/[ab' -- /bin/true");
	cr_expect(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 2 && c.said_why,
		  "an unclosed '[': %#x", c.status);
	c = run("'' -- /bin/true");
	cr_expect(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 2 && c.said_why,
		  "an empty pattern: %#x", c.status);
	c = run("--help");
	cr_expect(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0, "--help: %#x", c.status);
}

Test(exec_glob, example_exits_with_the_commands_status, .timeout = 60)
{
	struct counts c = run("'*/sh' -- /bin/sh -c 'exit 3'");

	cr_expect(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 3, "status %#x", c.status);
	/* At least: other tests running at the same time may start shells too. */
	cr_expect_geq(c.rule[0], 1, "*/sh: %llu (counted all the same)", c.rule[0]);
}
