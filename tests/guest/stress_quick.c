// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * `arenakit stress --quick all` in the normal test run: every scenario at
 * small sizes must end with every invariant held (exit status 0), so the
 * tool cannot rot between `make stress` runs.
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "guest/guest.h"

Test(stress, quick_run_holds_every_invariant, .timeout = 300)
{
	char out[512];
	int status, rows = 0;
	FILE *p = popen(AK_BUILD_DIR "/arenakit stress --quick all 2>&1", "r");

	cr_assert(p, "cannot run arenakit stress");
	while (fgets(out, sizeof(out), p)) {
		fputs(out, stdout);
		rows += !strncmp(out, "long ", 5) || !strncmp(out, "cycle ", 6) ||
			!strncmp(out, "corrupt ", 8) || !strncmp(out, "glob-worst ", 11) ||
			!strncmp(out, "misuse ", 7);
	}
	status = pclose(p);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "arenakit stress --quick failed (status %#x); its output is above", status);
	cr_expect_geq(rows, 10, "%d rows in the summary", rows);
}
