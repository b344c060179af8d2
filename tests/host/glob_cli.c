// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* `arenakit glob` as a user runs it, in the VM: output and exit statuses. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <criterion/criterion.h>

#define INPUT "build/glob_cli_input.txt"

Test(glob_cli, grep_like_behaviour, .timeout = 180)
{
	char out[8192] = "";
	size_t n;
	FILE *f = fopen(INPUT, "w"), *p;
	int status;

	cr_assert(f, "cannot write %s", INPUT);
	fputs("a.c\nb.h\nMakefile\nx/y/z/Makefile\nREADME\n", f);
	fclose(f);
	p = popen("kernel/vm '"
		  "build/arenakit glob -f " INPUT " \"*.c\" \"*/*/*/Makefile\"; echo \"[rc=$?]\"; "
		  "build/arenakit glob -c -v -f " INPUT " \"*.[ch]\"; echo \"[rc=$?]\"; "
		  "build/arenakit glob -f " INPUT " nomatch; echo \"[rc=$?]\"; "
		  "build/arenakit glob -f /nonexistent x; echo \"[rc=$?]\"; "
		  "build/arenakit glob -f " INPUT "; echo \"[rc=$?]\"; "
		  "build/arenakit glob --check -c -f " INPUT " \"[!a-z]*\"; echo \"[rc=$?]\"' 2>/dev/null",
		  "r");
	cr_assert(p);
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	status = pclose(p);
	cr_expect_eq(status, 0, "kernel/vm failed; output:\n%s", out);
	cr_expect(strstr(out, "a.c\nx/y/z/Makefile\n[rc=0]\n"), "matching lines, status 0:\n%s", out);
	cr_expect(strstr(out, "\n3\n[rc=0]\n"), "-c -v counts the 3 others:\n%s", out);
	cr_expect(strstr(out, "[rc=0]\n[rc=1]\n"), "no match is status 1:\n%s", out);
	cr_expect(strstr(out, "[rc=1]\n[rc=2]\n[rc=2]\n"), "errors are status 2:\n%s", out);
	cr_expect(strstr(out, "[rc=2]\n2\n[rc=0]\n"), "--check -c of [!a-z]*:\n%s", out);
	remove(INPUT);
}
