// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Checks on the compiled BPF objects, without loading them: stock 6.12
 * rejects `may_goto +0`, which clang-19 emits when it fully unrolls a small
 * constant loop around can_loop/cond_break. No object of ours may contain
 * one, so everything loads on the stock kernel as well as on ours, but the
 * test of kernel patch 1 (tests/guest/may_goto_zero.bpf.c), which must.
 *
 * A system test (tests/system/ checks the machinery around the library by
 * running what make and users run): it reads what the build made, with
 * llvm-objdump; make system-test builds the objects first.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <criterion/criterion.h>

static const char *objects_pattern(void)
{
	const char *dir = getenv("ARENAKIT_BPF_OBJECTS");

	return dir ? dir : "build/{user,tests/guest}/*.bpf.o";
}

/* Count lines of `llvm-objdump -d obj` containing @needle; -1 on error. */
static int count_in_disassembly(const char *obj, const char *needle)
{
	char cmd[4096], line[1024];
	int count = 0;
	FILE *out;

	snprintf(cmd, sizeof(cmd), "%s -d --no-show-raw-insn '%s'",
		 getenv("LLVM_OBJDUMP") ? getenv("LLVM_OBJDUMP") : "llvm-objdump-19", obj);
	out = popen(cmd, "r");
	if (!out)
		return -1;
	while (fgets(line, sizeof(line), out)) {
		const char *at = strstr(line, needle);

		/* "may_goto +0x0" must not count "may_goto +0x0a". */
		if (at && !isxdigit((unsigned char)at[strlen(needle)]))
			count++;
	}
	return pclose(out) == 0 ? count : -1;
}

Test(bpf_objects, have_may_goto_and_no_may_goto_zero)
{
	glob_t objects;
	size_t i;
	int with_may_goto = 0;

	cr_assert_eq(glob(objects_pattern(), GLOB_BRACE, NULL, &objects), 0,
		     "no BPF objects match %s (build first)", objects_pattern());
	for (i = 0; i < objects.gl_pathc; i++) {
		const char *obj = objects.gl_pathv[i];
		int zero = count_in_disassembly(obj, "may_goto +0x0");
		int any = count_in_disassembly(obj, "may_goto");

		cr_expect_geq(zero, 0, "cannot disassemble %s", obj);
		if (strstr(obj, "/may_goto_zero.bpf.o"))
			cr_expect_gt(zero, 0, "%s tests may_goto +0 but has none: clang "
				     "unrolled its loop differently", obj);
		else
			cr_expect_eq(zero, 0, "%s has %d 'may_goto +0' (stock 6.12 rejects them)",
				     obj, zero);
		with_may_goto += any > 0;
	}
	/* The check above means something only if may_goto shows in the listing. */
	cr_expect_gt(with_may_goto, 0, "no object disassembles to a may_goto");
	globfree(&objects);
}
