// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* A failing guest test says where and what, not only a number. */
#include <string.h>

#include "guest/guest.h"
#include "report.skel.h"

static void expect_report(const char *program, const char *want)
{
	size_t size;
	const void *elf = report__elf_bytes(&size);
	struct bpf_object *obj;
	struct bpf_program *prog = guest_load_one(elf, size, "report", program, &obj);
	const char *got;
	int retval = 0;

	cr_assert_eq(ak_run(prog, NULL, 0, &retval), 0);
	cr_expect_neq(retval, 0, "%s passed", program);
	got = guest_failure_report(obj, retval);
	cr_expect(strstr(got, want), "%s reported \"%s\", not \"%s\"", program, got, want);
	bpf_object__close(obj);
}

Test(report, expect_eq_names_file_line_and_values)
{
	expect_report("fails_an_expect_eq",
		      "tests/guest/report.bpf.c:13: two + 1 == 4: 3, not 4");
}

Test(report, expect_names_the_condition)
{
	expect_report("fails_an_expect", "tests/guest/report.bpf.c:20: ak_opaque_zero() == 1");
}
