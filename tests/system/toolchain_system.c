// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The compilers and flags the headers support, and the compile-time help
 * they give: the worked example compiles (never loads) with every clang
 * Debian 12 offers from the oldest supported (19) up; a wrong -mcpu or an
 * older clang gets the headers' own message first; misuse the compiler can
 * see (tests/mistakes/) is reported by it.
 *
 * A system test (tests/system/ checks the machinery around the library by
 * running what make and users run): it runs every installed clang and
 * bpftool on the host; nothing is loaded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <criterion/criterion.h>

#include <arenakit/arena.h>
#include "command.h"

#define EXAMPLE "bpf/examples/exec_glob/exec_glob.bpf.c"

static const char *kdir(void)
{
	const char *dir = getenv("ARENAKIT_KDIR");

	cr_assert(dir && *dir, "ARENAKIT_KDIR is not set (make test sets it)");
	return dir;
}

/*
 * Compile @file for BPF with @clang and @flags into @object (NULL: none):
 * the exit status, the compiler's output in @out.
 */
static int compile_to(const char *clang, const char *file, const char *flags,
		      const char *object, char *out, size_t size)
{
	char command[2048];

	snprintf(command, sizeof(command),
		 "%s --target=bpf -O2 -g -Wall %s -Iinclude -I%s -I%s/libbpf/include "
		 "-c %s -o %s 2>&1", clang, flags, kdir(), kdir(), file,
		 object ? object : "/dev/null");
	return run_command(command, out, size);
}

static int compile(const char *clang, const char *file, const char *flags, char *out,
		   size_t size)
{
	return compile_to(clang, file, flags, NULL, out, size);
}

static int installed(const char *clang)
{
	char path[64];

	snprintf(path, sizeof(path), "/usr/bin/%s", clang);
	return !access(path, X_OK);
}

/* Debian 12's clang 19 and 22: make deps installs both. */
static void expect_clean_build(const char *clang)
{
	static char out[1 << 16];
	int status;

	cr_assert(installed(clang), "%s is not installed (make deps installs it)", clang);
	status = compile(clang, EXAMPLE, "-mcpu=v3 -Werror", out, sizeof(out));
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "%s cannot compile the example:\n%s", clang, out);
	cr_expect_str_empty(out, "%s said:\n%s", clang, out);
}

Test(toolchain, clang_19_compiles_the_example)
{
	expect_clean_build("clang-19");
}

Test(toolchain, clang_22_compiles_the_example)
{
	expect_clean_build("clang-22");
}

/* What a mistake must print: the headers' or the compiler's words, and whether it stops. */
static void expect_message(const char *clang, const char *file, const char *flags,
			   const char *message, int fails)
{
	static char out[1 << 16];
	int status = compile(clang, file, flags, out, sizeof(out));

	cr_expect_eq(WIFEXITED(status) && WEXITSTATUS(status) != 0, fails,
		     "%s %s: status %#x:\n%s", file, flags, status, out);
	cr_expect(strstr(out, message), "%s %s: no \"%s\" in:\n%s", file, flags, message, out);
}

Test(toolchain, mcpu_below_v3_is_refused_before_clang_fails)
{
	expect_message("clang-19", EXAMPLE, "-mcpu=v2", "arenakit needs -mcpu=v3", 1);
	expect_message("clang-19", EXAMPLE, "", "arenakit needs -mcpu=v3", 1);
}

Test(toolchain, clang_older_than_19_is_refused)
{
	static const char *const old[] = { "clang-16", "clang-15", "clang-14", "clang-13" };
	size_t i;
	int tried = 0;

	for (i = 0; i < ARRAY_SIZE(old); i++) {
		if (!installed(old[i]))
			continue;
		expect_message(old[i], EXAMPLE, "-mcpu=v3", "arenakit needs clang 19 or newer", 1);
		tried++;
	}
	if (!tried)
		cr_skip_test("no clang older than 19 installed (apt-get install clang-14 to run this)");
}

Test(toolchain, a_pointer_outside_the_arena_is_a_compile_error)
{
	expect_message("clang-19", "tests/mistakes/plain_pointer.bpf.c", "-mcpu=v3",
		       "changes address space of pointer", 1);
}

Test(toolchain, a_cursor_of_the_wrong_kind_is_a_warning)
{
	expect_message("clang-19", "tests/mistakes/wrong_cursor.bpf.c", "-mcpu=v3",
		       "incompatible pointer types passing 'struct ak_htab_cursor *' to "
		       "parameter of type 'struct ak_list_cursor *'", 0);
	expect_message("clang-19", "tests/mistakes/wrong_cursor.bpf.c", "-mcpu=v3 -Werror",
		       "incompatible pointer types", 1);
}

Test(toolchain, a_key_over_the_programs_max_key_is_a_compile_error)
{
	expect_message("clang-19", "tests/mistakes/key_over_prog_max.bpf.c", "-mcpu=v3",
		       "a key over AK_HTAB_PROG_MAX_KEY bytes: define it larger", 1);
}

/*
 * The hash table's global functions an object holds per key width (lookup,
 * begin and delete twice, unlink, lookup_lock): with AK_HTAB_PROG_MAX_KEY at
 * 16, widths 1 and 2 only; without it, all 32.
 */
static void expect_widths(const char *flags, int widths)
{
	static char out[1 << 16];
	char object[] = "/tmp/prog_max_key.XXXXXX", command[1024], *line;
	int fd = mkstemp(object), status, width, count, functions[33] = {};

	cr_assert_geq(fd, 0);
	close(fd);
	status = compile_to("clang-19", "tests/mistakes/key_over_prog_max.bpf.c", flags, object,
			    out, sizeof(out));
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: it fails:\n%s", flags, out);
	/* "COUNT WIDTH" for each width whose functions the object holds */
	snprintf(command, sizeof(command),
		 "llvm-objdump-19 -t %s | sed -n 's/.* F .*__ak_htab_[a-z_]*[a-z]\\([0-9][0-9]*\\)$/\\1/p' | "
		 "sort -n | uniq -c", object);
	run_command(command, out, sizeof(out));
	unlink(object);
	for (line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		cr_assert_eq(sscanf(line, "%d %d", &count, &width), 2, "%s: \"%s\"", flags, line);
		cr_assert(width >= 1 && width <= 32, "%s: width %d", flags, width);
		functions[width] = count;
	}
	for (width = 1; width <= 32; width++)
		cr_expect_eq(functions[width], width <= widths ? 7 : 0, "%s: width %d: %d functions",
			     flags, width, functions[width]);
}

Test(toolchain, an_object_holds_the_table_functions_of_its_key_widths_only)
{
	expect_widths("-mcpu=v3 -DAK_HTAB_PROG_MAX_KEY=16", 2);
	expect_widths("-mcpu=v3 -DAK_HTAB_PROG_MAX_KEY=256", 32);
}

/*
 * Two arenas in one object (alloc.h's own beside the program's): libbpf
 * refuses it when it opens the object, so already bpftool gen skeleton
 * does, which opens it without loading anything.
 */
Test(toolchain, an_allocator_beside_an_arena_of_another_name_is_refused)
{
	static char out[1 << 16];
	char object[] = "/tmp/arena_name.XXXXXX", command[1024];
	int fd = mkstemp(object), status;

	cr_assert_geq(fd, 0);
	close(fd);
	status = compile_to("clang-19", "tests/mistakes/arena_name.bpf.c", "-mcpu=v3", object,
			    out, sizeof(out));
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "it compiles:\n%s", out);
	snprintf(command, sizeof(command), "%s/bpftool gen skeleton %s 2>&1 > /dev/null",
		 kdir(), object);
	status = run_command(command, out, sizeof(out));
	unlink(object);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) != 0, "bpftool took it:\n%s", out);
	cr_expect(strstr(out, "only single ARENA map is supported"), "bpftool said:\n%s", out);
}

/* README's example (the first C block after "## Start here") compiles as it stands. */
Test(toolchain, the_readme_example_compiles)
{
	static char out[1 << 16];
	char source[] = "/tmp/readme_example.XXXXXX.bpf.c", line[512];
	FILE *readme = fopen("README.md", "r"), *f;
	int fd, state = 0, lines = 0, status;

	cr_assert(readme, "cannot open README.md");
	fd = mkstemps(source, 6);
	cr_assert_geq(fd, 0);
	f = fdopen(fd, "w");
	cr_assert(f);
	while (state < 3 && fgets(line, sizeof(line), readme)) {
		if (state == 0 && !strncmp(line, "## Start here", 13))
			state = 1;
		else if (state == 1 && !strncmp(line, "```c", 4))
			state = 2;
		else if (state == 2 && !strncmp(line, "```", 3))
			state = 3;
		else if (state == 2)
			lines += fputs(line, f) >= 0;
	}
	fputs("char _license[] SEC(\"license\") = \"GPL\";\n", f);
	fclose(f);
	fclose(readme);
	cr_assert_eq(state, 3, "no C block after \"## Start here\" in README.md");
	status = compile("clang-19", source, "-mcpu=v3 -Werror", out, sizeof(out));
	unlink(source);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "README's example:\n%s", out);
	cr_expect_leq(lines, 30, "README's example has %d lines", lines);
}
