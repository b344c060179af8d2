// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * `arenakit bench --quick` in the normal test run: every benchmark case
 * loads, runs at small sizes and answers right (a wrong count, a lookup
 * that misses, a glob answer fnmatch(3) disagrees with: exit status 1),
 * so the benchmarks cannot rot between `make bench` runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest/guest.h"

/*
 * arenakit bench --quick over @sections: every case runs and answers right.
 * The sections are split over three tests, which Criterion's workers run
 * side by side (all in one was among the guest suite's longest).
 */
static void quick_run(const char *sections)
{
	const char *lines = "/tmp/bench-quick-files.txt";
	static const char *const names[] = {
		"init/main.c", "Documentation/index.rst", "fs/ext4/Makefile",
		"include/linux/list.h", "arch/x86/kernel/cpu/Makefile", "README",
	};
	char command[512], out[256];
	FILE *f, *p;
	int i, status, saw_ratios = 0;

	if (strstr(sections, "glob")) {
		f = fopen(lines, "w");
		cr_assert(f, "cannot write %s", lines);
		for (i = 0; i < 600; i++)
			fprintf(f, "%s\n", names[i % 6]);
		cr_assert_eq(fclose(f), 0);
	}
	snprintf(command, sizeof(command),
		 AK_BUILD_DIR "/arenakit bench --quick --runs 1 --glob-input %s %s 2>&1", lines,
		 sections);
	p = popen(command, "r");
	cr_assert(p, "cannot run %s", command);
	while (fgets(out, sizeof(out), p)) {
		fputs(out, stdout);
		saw_ratios |= !strncmp(out, "== ratios", 9);
	}
	status = pclose(p);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "arenakit bench --quick %s failed (status %#x); its output is above", sections,
		  status);
	cr_expect(saw_ratios, "no ratios in the output of %s", sections);
}

Test(bench, quick_run_of_walk_and_frames_answers_right, .timeout = 600)
{
	quick_run("walk frames");
}

Test(bench, quick_run_of_htab_and_omap_answers_right, .timeout = 600)
{
	quick_run("htab omap");
}

Test(bench, quick_run_of_alloc_glob_and_verifier_answers_right, .timeout = 600)
{
	quick_run("alloc glob verifier");
}
