// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The third worked example, bpf/examples/top_opens, as make built it: from
 * a scratch install of the headers through pkg-config only. Two shells on
 * CPUs 0 and 1 open known files a known number of times, while the
 * example's exclude rules are edited from its standard input all along (a
 * rule added and deleted, over and over): every (command, path) count of
 * those files must be exact, the excluded ones never counted, and nothing
 * lost. The files are this test's own, so other processes' opens (the
 * example is system-wide) change nothing it checks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "guest/guest.h"

#define EXAMPLE AK_BUILD_DIR "/example/top_opens"
#define FILES 20	/* f0..f19: f$i opened i + 1 times by each shell */

struct report {
	unsigned long long opens, counted, excluded, lost, added, deleted, refused, failed;
	unsigned long long count[FILES];	/* the last top's counts of (sh, f$i) */
	unsigned int refreshes;			/* tops printed while the command ran */
	int status;
};

static struct report run(const char *command)
{
	struct report r = {};
	char line[600], comm[32], path[300];
	unsigned long long n;
	unsigned int i;
	FILE *p = popen(command, "r");

	cr_assert(p, "cannot run %s", command);
	while (fgets(line, sizeof(line), p)) {
		fputs(line, stdout);
		if (!strncmp(line, "top at ", 7))
			r.refreshes++;
		sscanf(line, "final: %llu opens, %llu counted, %llu excluded, %*u paths too long, "
		       "%*u not in memory, %llu lost", &r.opens, &r.counted, &r.excluded, &r.lost);
		sscanf(line, "edits: %llu added, %llu deleted, %llu refused, %llu failed", &r.added,
		       &r.deleted, &r.refused, &r.failed);
		if (sscanf(line, "top %llu %31s %299s", &n, comm, path) == 3 && !strcmp(comm, "sh") &&
		    sscanf(path, "/tmp/aktop/f%u", &i) == 1 && i < FILES)
			r.count[i] = n;
	}
	r.status = pclose(p);
	return r;
}

Test(top_opens, example_counts_every_open_per_command_and_path, .timeout = 600)
{
	struct report r;
	unsigned int i;

	/* In what busybox has too (the arm64 guest's tools). */
	cr_assert_eq(system("rm -rf /tmp/aktop && mkdir -p /tmp/aktop && cd /tmp/aktop && "
			    "for i in $(seq 0 19); do : > f$i; done && "
			    "echo 'i=0; while [ $i -lt 20 ]; do r=0; while [ $r -le $i ]; do "
			    ": < /tmp/aktop/f$i; r=$((r+1)); done; i=$((i+1)); done' > opener"), 0);
	r = run("i=0; while :; do i=$((i+1)); echo \"+/srv/churn-$i/*\"; "
		"echo \"-/srv/churn-$i/*\"; done | "
		EXAMPLE " -n 100 -x '*/aktop/f1?' -- sh -c "
		"'taskset -c 0 sh /tmp/aktop/opener & taskset -c 1 sh /tmp/aktop/opener; wait; "
		"sleep 1.5' 2>&1");

	cr_assert(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "status %#x", r.status);
	for (i = 0; i < 10; i++)
		cr_expect_eq(r.count[i], 2 * (i + 1), "sh, /tmp/aktop/f%u: %llu", i, r.count[i]);
	for (i = 10; i < FILES; i++)
		cr_expect_eq(r.count[i], 0, "f%u is excluded, counted %llu", i, r.count[i]);
	/* f10..f19: 11 + 12 + ... + 20 opens each shell; no other path matches. */
	cr_expect_eq(r.excluded, 2 * 155, "%llu excluded", r.excluded);
	cr_expect_eq(r.lost, 0, "%llu opens lost", r.lost);
	cr_expect_gt(r.counted, 2 * 55);
	cr_expect_gt(r.refreshes, 0, "no top printed while the command ran");
	cr_expect_gt(r.added, 0, "no edit applied while the command ran");
	cr_expect_eq(r.refused + r.failed, 0, "%llu refused, %llu failed", r.refused, r.failed);
	system("rm -rf /tmp/aktop");
}

static int exit_status(const char *args)
{
	char command[512];

	snprintf(command, sizeof(command), EXAMPLE " %s > /dev/null 2>&1 < /dev/null", args);
	return WEXITSTATUS(system(command));
}

Test(top_opens, example_refuses_bad_arguments, .timeout = 120)
{
	cr_expect_eq(exit_status("-- true"), 0, "no rule is fine");
	cr_expect_eq(exit_status("-x '[ab' -- true"), 2, "an unclosed [");
	cr_expect_eq(exit_status("-x '' -- true"), 2, "an empty rule");
	cr_expect_eq(exit_status("-n 0 -- true"), 2);
	cr_expect_eq(exit_status("-n 101 -- true"), 2);
	cr_expect_eq(exit_status("-i x -- true"), 2);
	cr_expect_eq(exit_status("-q -- true"), 2, "an unknown option");
	cr_expect_eq(exit_status("--"), 2, "no command");
	cr_expect_eq(exit_status("--help"), 0);
	cr_expect_eq(exit_status("-- sh -c 'exit 3'"), 3, "the command's status");
}
