// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The second worked example, bpf/examples/open_policy, as make built it:
 * from a scratch install of the headers through pkg-config only. 10,002
 * rules are matched on every open of every CPU while two shells open
 * known files on CPUs 0 and 1 and the example applies rule edits from its
 * standard input (a rule added and deleted, over and over, all along): the
 * counts must be exact and no event lost. The rules that count match only
 * this test's files, so other processes' opens (the example is
 * system-wide) change nothing it checks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest/guest.h"
#include <arenakit/ruleset_types.h>

#define EXAMPLE AK_BUILD_DIR "/example/open_policy"
#define OPENS 100	/* per shell */
#define FILLER 10000

struct report {
	unsigned long long opens, matched, in_edit, lost, added, deleted, refused, failed, held, freed,
		waiting, rules, silent, rule_a, rule_1, count_a;
	int status;
	int said_why;	/* a line said what ak_glob_valid found */
};

static struct report run(const char *command)
{
	struct report r = {};
	char line[512], comm[32], pattern[80];
	unsigned long long n;
	unsigned int rule;
	FILE *p = popen(command, "r");

	cr_assert(p, "cannot run %s", command);
	while (fgets(line, sizeof(line), p)) {
		fputs(line, stdout);
		if (strstr(line, "opens no class") || strstr(line, "empty pattern") ||
		    strstr(line, "longer than its limit"))
			r.said_why = 1;
		sscanf(line, "opens seen: %llu, matched against every rule: %llu (%llu while the "
		       "rules were edited), lost: %llu", &r.opens, &r.matched, &r.in_edit, &r.lost);
		sscanf(line, "edits while the command ran: %llu rules added, %llu deleted, %llu "
		       "refused, %llu failed; %llu reclaims found readers inside; %llu deleted "
		       "rules freed, %llu waiting", &r.added, &r.deleted, &r.refused, &r.failed,
		       &r.held, &r.freed, &r.waiting);
		sscanf(line, "rules: %llu, %llu of them matched nothing", &r.rules, &r.silent);
		if (sscanf(line, "rule %u %79s %llu", &rule, pattern, &n) == 3) {
			if (!strcmp(pattern, "/tmp/akpolicy/a*"))
				r.rule_a = n;
			if (!strcmp(pattern, "*/akpolicy/*1"))
				r.rule_1 = n;
		}
		if (sscanf(line, "count rule %u %31s %llu", &rule, comm, &n) == 3 &&
		    !strcmp(comm, "sh") && rule == FILLER)
			r.count_a += n;
	}
	r.status = pclose(p);
	return r;
}

Test(open_policy, example_counts_every_open_under_live_edits, .timeout = 600)
{
	struct report r;
	char command[2048];

	/*
	 * The files, the rules (the two that count last), the edits, a shell's
	 * opens; in what busybox has too (the arm64 guest's tools).
	 */
	cr_assert_eq(system("rm -rf /tmp/akpolicy && mkdir -p /tmp/akpolicy && cd /tmp/akpolicy && "
			    "for i in $(seq 0 99); do : > a$i; done && "
			    "awk 'BEGIN { for (i = 1; i <= " "10000" "; i++) "
			    "printf \"/srv/none-%05d/*.conf\\n\", i }' > rules && "
			    "echo '/tmp/akpolicy/a*' >> rules && echo '*/akpolicy/*1' >> rules && "
			    "echo '# a comment, then a blank line' >> rules && echo >> rules && "
			    "echo 'i=0; while [ $i -lt 100 ]; do : < /tmp/akpolicy/a$i; "
			    "i=$((i+1)); done' > opener"), 0);
	/* The writer: a rule added and deleted again, over and over, as long as it runs. */
	snprintf(command, sizeof(command), "i=0; while :; do i=$((i+1)); "
		 "echo \"+/srv/churn-$i/*\"; echo \"-/srv/churn-$i/*\"; done | "
		 EXAMPLE " -f /tmp/akpolicy/rules -- sh -c "
		 "'taskset -c 0 sh /tmp/akpolicy/opener & taskset -c 1 sh /tmp/akpolicy/opener; "
		 "wait' 2>&1");
	r = run(command);

	cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "status %#x", r.status);
	cr_expect_eq(r.lost, 0, "%llu events lost", r.lost);
	cr_expect_gt(r.opens, 2 * OPENS);
	cr_expect_eq(r.rule_a, 2 * OPENS, "/tmp/akpolicy/a*: %llu", r.rule_a);
	cr_expect_eq(r.rule_1, 2 * 10, "*/akpolicy/*1: %llu", r.rule_1);
	cr_expect_eq(r.count_a, 2 * OPENS, "sh under /tmp/akpolicy/a*: %llu", r.count_a);
	/* The writer: every edit read while the command ran applied, its rules freed. */
	cr_expect_gt(r.added, 0, "no edit applied while the command ran");
	cr_expect_gt(r.in_edit, 0, "no walk overlapped an edit");
	/* The command may end between an add and its delete. */
	cr_expect(r.added - r.deleted <= 1, "%llu added, %llu deleted", r.added, r.deleted);
	cr_expect_eq(r.rules, FILLER + 2 + r.added - r.deleted, "rules listed: %llu", r.rules);
	cr_expect_eq(r.silent, r.rules - 2, "rules that matched nothing: %llu", r.silent);
	cr_expect_eq(r.refused + r.failed, 0, "%llu refused, %llu failed", r.refused, r.failed);
	cr_expect_eq(r.freed, r.deleted, "%llu freed of %llu deleted", r.freed, r.deleted);
	cr_expect_eq(r.waiting, 0);
	system("rm -rf /tmp/akpolicy");
}

static int exit_status(const char *args, int *said_why)
{
	char command[512];
	struct report r;

	snprintf(command, sizeof(command), EXAMPLE " %s 2>&1 < /dev/null", args);
	r = run(command);
	*said_why = r.said_why;
	return WIFEXITED(r.status) ? WEXITSTATUS(r.status) : -1;
}

Test(open_policy, example_refuses_bad_rules_with_a_message, .timeout = 120)
{
	char too_long[AK_RULE_PATTERN_MAX + 1], args[AK_RULE_PATTERN_MAX + 16];
	int why;

	cr_expect_eq(exit_status("'[ab' -- true", &why), 2);
	cr_expect(why, "an unclosed [ without a reason");
	cr_expect_eq(exit_status("'' -- true", &why), 2);
	cr_expect(why, "an empty rule without a reason");
	memset(too_long, 'x', AK_RULE_PATTERN_MAX);	/* one byte past the limit */
	too_long[AK_RULE_PATTERN_MAX] = 0;
	snprintf(args, sizeof(args), "%s -- true", too_long);
	cr_expect_eq(exit_status(args, &why), 2);
	cr_expect(why, "a %d-byte rule without a reason", AK_RULE_PATTERN_MAX);
	cr_assert_eq(system("printf '/ok/*\\n[x\\n' > /tmp/akpolicy-bad"), 0);
	cr_expect_eq(exit_status("-f /tmp/akpolicy-bad -- true", &why), 2);
	cr_expect(why, "a bad line in a file without a reason");
	unlink("/tmp/akpolicy-bad");
	cr_expect_eq(exit_status("-f /nonexistent -- true", &why), 2);
	cr_expect_eq(exit_status("'*' --", &why), 2, "no command");
	cr_expect_eq(exit_status("-- true", &why), 2, "no rule");
	cr_expect_eq(exit_status("--help", &why), 0);
	/* An edit that is not one is refused, and the run goes on. */
	cr_expect_eq(system(EXAMPLE " '/x/*' -- sleep 1 2>&1 <<'E' | grep -q 'not +PATTERN'\n"
			    "[bad\nE"), 0, "a bad edit without a message");
}

Test(open_policy, example_edits_are_its_own_input_whole_lines_only, .timeout = 120)
{
	struct report r;

	/* The command reads /dev/null, not the edits: it sees none, the edit applies. */
	r = run("printf '+/y/*\\n' | " EXAMPLE " '/x/*' -- sh -c 'sleep 1; read x; "
		"echo \"command read [$x]\"' 2>&1");
	cr_expect(WIFEXITED(r.status), "status %#x", r.status);
	cr_expect_eq(r.added, 1, "%llu rules added", r.added);
	cr_expect_eq(r.rules, 2, "rules: %llu", r.rules);
	cr_expect_eq(system("printf '+/y/*\\n' | " EXAMPLE " '/x/*' -- sh -c 'sleep 1; read x; "
			    "echo \"command read [$x]\"' 2>&1 | grep -qF 'command read []'"), 0,
		     "the command read the edits");
	/* A line too long to be an edit is refused whole: its tail is not an edit either. */
	r = run("printf '+%0300d-/x/*\\n' 0 | " EXAMPLE " '/x/*' -- sleep 1 2>&1");
	cr_expect_eq(r.refused, 1, "%llu edits refused", r.refused);
	cr_expect_eq(r.deleted, 0, "the tail of a long line deleted a rule");
	cr_expect_eq(r.rules, 1, "rules: %llu", r.rules);
}
