// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * make's variables reach the kernel cache entry it computes: `make test
 * KERNEL=stock` (the README's form) builds and uses the stock kernel's
 * entry, and KASAN=1 its own. Debian 12's make 4.3 gives $(shell) only the
 * environment it started with, so a command-line variable once reached
 * the cache entry's name only when given in the environment.
 *
 * A system test (tests/system/ checks the machinery around the library by
 * running what make and users run): it runs make, which runs
 * kernel/deps.sh and kernel/build.sh --dir (nothing is built).
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <criterion/criterion.h>

#include "command.h"

/* The entry `make kernel-dir VARS` names, run as a user would, not as a sub-make. */
static void kernel_dir(const char *vars, char *out, size_t size)
{
	char command[512];
	int status;

	snprintf(command, sizeof(command),
		 "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u KERNEL -u KASAN "
		 "make -s --no-print-directory kernel-dir %s 2>&1", vars);
	status = run_command(command, out, size);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "make kernel-dir %s:\n%s",
		  vars, out);
	cr_assert(strchr(out, '/'), "make kernel-dir %s named no directory: %s", vars, out);
}

Test(kernel_dir, command_line_variables_name_their_own_cache_entries)
{
	char patched[512], stock[512], kasan[512], by_default[512];

	kernel_dir("KERNEL=patched", patched, sizeof(patched));
	kernel_dir("KERNEL=stock", stock, sizeof(stock));
	kernel_dir("KASAN=1", kasan, sizeof(kasan));
	kernel_dir("", by_default, sizeof(by_default));
	cr_expect(strstr(patched, "-patched-") && !strstr(patched, "kasan"), "%s", patched);
	cr_expect(strstr(stock, "-stock-"), "KERNEL=stock names %s", stock);
	cr_expect(strstr(kasan, "-kasan-"), "KASAN=1 names %s", kasan);
	cr_expect_str_eq(by_default, patched, "the default is the patched kernel");
}
