// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The reference documentation is the headers' kernel-doc comments: the
 * tree's scripts/kernel-doc must parse every header without a warning,
 * and find each header's main calls documented.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <criterion/criterion.h>

#include <arenakit/arena.h>
#include "command.h"

#define HEADERS "include/arenakit/*.h"

/* Run kernel-doc with @mode on the headers; its output into @out. */
static int kernel_doc(const char *mode, char *out, size_t size)
{
	const char *kdir = getenv("ARENAKIT_KDIR");
	char command[1024];

	cr_assert(kdir && *kdir, "ARENAKIT_KDIR is not set (make test sets it)");
	snprintf(command, sizeof(command), "%s/src/scripts/kernel-doc %s -Wall " HEADERS " 2>&1",
		 kdir, mode);
	return run_command(command, out, size);
}

Test(docs, kernel_doc_parses_every_header_without_a_warning)
{
	static char out[1 << 16];
	int status = kernel_doc("-none", out, sizeof(out));

	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
	cr_expect_str_empty(out, "kernel-doc said:\n%s", out);
}

Test(docs, the_main_calls_are_documented)
{
	static char out[1 << 20];
	static const char *const calls[] = {
		"ak_alloc", "ak_free", "ak_alloc_reserve", "ak_list_add_tail", "ak_list_count",
		"ak_list_find", "ak_htab_init", "ak_htab_update", "ak_htab_lookup",
		"ak_htab_delete", "ak_htab_next", "ak_glob_match", "ak_glob_match_subject",
		"ak_glob_match_batch", "ak_lock_acquire",
	};
	char heading[96];
	size_t i;

	kernel_doc("-rst", out, sizeof(out));
	for (i = 0; i < ARRAY_SIZE(calls); i++) {
		/* ".. c:function:: int ak_free (...)" or ".. c:macro:: ak_htab_update" */
		snprintf(heading, sizeof(heading), " %s (", calls[i]);
		if (strstr(out, heading))
			continue;
		snprintf(heading, sizeof(heading), ".. c:macro:: %s\n", calls[i]);
		cr_expect(strstr(out, heading), "no kernel-doc heading for %s", calls[i]);
	}
}
