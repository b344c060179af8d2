// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * tests/header_order.py on the library's headers, and on scratch headers
 * that break each of its two rules: an include circle, and an internal
 * header whose body calls a function defined in a header after it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <criterion/criterion.h>

#include "command.h"

static char out[8192];

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	cr_assert(f, "cannot write %s", path);
	fputs(text, f);
	cr_assert_eq(fclose(f), 0);
}

static int check(const char *dir)
{
	char command[600];

	snprintf(command, sizeof(command), "python3 tests/header_order.py %s 2>&1", dir);
	return run_command(command, out, sizeof(out));
}

Test(header_order, the_library_has_no_circle_and_no_body_before_its_callee)
{
	cr_assert_eq(check("include/arenakit"), 0, "%s", out);
	cr_assert(strstr(out, "no circle"), "%s", out);
}

Test(header_order, an_include_circle_is_named)
{
	char dir[] = "/tmp/ak-order-XXXXXX";

	cr_assert(mkdtemp(dir));
	write_file(dir, "a.h", "#include <arenakit/b.h>\n");
	write_file(dir, "b.h", "#include <arenakit/a.h>\n");
	cr_assert_neq(check(dir), 0, "%s", out);
	cr_assert(strstr(out, "circle: a.h -> b.h -> a.h"), "%s", out);
	snprintf(out, sizeof(out), "rm -rf %s", dir);
	cr_assert_eq(system(out), 0);
}

/* The allocator's old circle in small: an earlier file's body calls a later file's function. */
Test(header_order, a_body_calling_a_later_files_function_is_named)
{
	char dir[] = "/tmp/ak-order-XXXXXX";

	cr_assert(mkdtemp(dir));
	write_file(dir, "x.h", "int put(int v);\n#include <arenakit/x_impl_pages.h>\n"
			       "#include <arenakit/x_impl.h>\n");
	write_file(dir, "x_impl_pages.h", "static int init(int v)\n{\n\treturn put(v);\n}\n");
	write_file(dir, "x_impl.h", "int put(int v)\n{\n\treturn v;\n}\n");
	cr_assert_neq(check(dir), 0, "%s", out);
	cr_assert(strstr(out, "x_impl_pages.h:3: init() uses put(), whose body is later, in x_impl.h:1"),
		  "%s", out);
	/* The same call from the file that defines put() is in order. */
	write_file(dir, "x_impl_pages.h", "\n");
	write_file(dir, "x_impl.h", "int put(int v)\n{\n\treturn v;\n}\n"
				    "static int init(int v)\n{\n\treturn put(v);\n}\n");
	cr_assert_eq(check(dir), 0, "%s", out);
	snprintf(out, sizeof(out), "rm -rf %s", dir);
	cr_assert_eq(system(out), 0);
}
