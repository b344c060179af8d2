// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Every public header compiles alone, as the first include of a file, both
 * as BPF (clang-19 -mcpu=v3, given only the include paths of libbpf and
 * vmlinux.h) and in user space, with -Wall -Wextra -Werror. Nothing is
 * loaded: the compilers run on the host.
 *
 * An internal header (htab_impl.h) is part of the header that includes it
 * and says so in its guard: #error "<arenakit/X> is internal: include
 * <arenakit/Y>". Alone it must stop at that line, with that one message;
 * after Y it must add nothing that breaks the build. Y itself is compiled
 * alone like every public header, the internal one inside it.
 *
 * A user-space header (user.h, for a loader on libbpf) says so in its
 * guard: #error "<arenakit/X> is for user space; ...". As BPF it must stop
 * at that line with that one message; in user space it compiles alone,
 * given libbpf's include path.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <criterion/criterion.h>

/*
 * Build a file holding @source (@mode "-c": compile only; "": link a
 * program); 0 if it built, its messages in @out.
 */
static int build(const char *source, const char *compiler_cmd, const char *mode, char *out,
		 size_t len)
{
	char dir[] = "build/tests/headers-XXXXXX", cmd[2048];
	FILE *src, *pipe;
	size_t got;
	int status;

	cr_assert(mkdtemp(dir), "mkdtemp");
	snprintf(cmd, sizeof(cmd), "%s/alone.c", dir);
	src = fopen(cmd, "w");
	cr_assert(src);
	fputs(source, src);
	fclose(src);
	snprintf(cmd, sizeof(cmd), "%s %s %s/alone.c -o %s/alone.o 2>&1; rc=$?; rm -rf %s; exit $rc",
		 compiler_cmd, mode, dir, dir, dir);
	pipe = popen(cmd, "r");
	cr_assert(pipe);
	got = fread(out, 1, len - 1, pipe);
	out[got] = 0;
	status = pclose(pipe);
	return status;
}

static int compile(const char *source, const char *compiler_cmd, char *out, size_t len)
{
	return build(source, compiler_cmd, "-c", out, len);
}

/*
 * The header an internal header @path belongs to, into @parent, from its
 * guard line; 0 if @path is a public header.
 */
static int internal_to(const char *path, char *parent, size_t len)
{
	static const char mark[] = " is internal: include <arenakit/";
	char line[512], *at, *end;
	FILE *f = fopen(path, "r");
	int found = 0;

	cr_assert(f, "%s", path);
	while (!found && fgets(line, sizeof(line), f)) {
		at = strstr(line, mark);
		if (strncmp(line, "#error", 6) || !at)
			continue;
		at += sizeof(mark) - 1;
		end = strchr(at, '>');
		cr_assert(end, "%s: a guard line without the header to include", path);
		snprintf(parent, len, "%.*s", (int)(end - at), at);
		found = 1;
	}
	fclose(f);
	return found;
}

static int count(const char *text, const char *word)
{
	int n = 0;

	for (text = strstr(text, word); text; text = strstr(text + 1, word))
		n++;
	return n;
}

/* Does the header at @path say, in an #error, that it is for user space? */
static int user_space_only(const char *path)
{
	char line[512];
	FILE *f = fopen(path, "r");
	int found = 0;

	cr_assert(f, "cannot read %s", path);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "#error", 6) && strstr(line, " is for user space"))
			found = 1;
	fclose(f);
	return found;
}

/*
 * @source, compiled by @compiler_cmd, must stop at one #error that says
 * @expect, and say nothing else; @what names the case in the messages.
 */
static void expect_one_error(const char *source, const char *compiler_cmd, const char *expect,
			     const char *what)
{
	char output[8192];

	cr_expect_neq(compile(source, compiler_cmd, output, sizeof(output)), 0, "%s compiles",
		      what);
	cr_expect(strstr(output, expect), "%s does not say \"%s\":\n%s", what, expect, output);
	cr_expect_eq(count(output, "error:"), 1, "%s says more than its #error:\n%s", what,
		     output);
}

/* The user-space compiler, given libbpf's headers from the kernel cache entry. */
static void user_space_cmd(char *cmd, size_t len)
{
	const char *kdir = getenv("ARENAKIT_KDIR");

	cr_assert(kdir, "ARENAKIT_KDIR (the kernel cache entry) is not set: run via make test");
	snprintf(cmd, len, "cc -std=gnu11 -O2 -Wall -Wextra -Werror -Iinclude "
		 "-I%s/libbpf/include", kdir);
}

static void check_header(const char *name, const char *compiler_cmd, const char *what)
{
	char output[8192], source[512], path[512], parent[256], expect[512], case_name[600];

	snprintf(path, sizeof(path), "include/arenakit/%s", name);
	snprintf(source, sizeof(source), "#include <arenakit/%s>\n", name);
	if (user_space_only(path) && !strcmp(what, "BPF")) {
		snprintf(expect, sizeof(expect), "<arenakit/%s> is for user space", name);
		snprintf(case_name, sizeof(case_name), "%s, for user space, as BPF", path);
		expect_one_error(source, compiler_cmd, expect, case_name);
		return;
	}
	if (!internal_to(path, parent, sizeof(parent))) {
		cr_expect_eq(compile(source, compiler_cmd, output, sizeof(output)), 0,
			     "%s does not compile alone (%s):\n%s", path, what, output);
		return;
	}
	snprintf(expect, sizeof(expect), "<arenakit/%s> is internal: include <arenakit/%s>",
		 name, parent);
	snprintf(case_name, sizeof(case_name), "%s, internal, alone (%s)", path, what);
	expect_one_error(source, compiler_cmd, expect, case_name);
	snprintf(source, sizeof(source), "#include <arenakit/%s>\n#include <arenakit/%s>\n",
		 parent, name);
	cr_expect_eq(compile(source, compiler_cmd, output, sizeof(output)), 0,
		     "%s after <arenakit/%s> does not compile (%s):\n%s", path, parent, what,
		     output);
}

/*
 * Check each header, or of @shards (> 1) the ones whose place in the
 * directory is @shard modulo @shards: a slow compiler's checks split into
 * tests that Criterion runs on as many CPUs.
 */
static void each_header_of(const char *compiler_cmd, const char *what, int shard, int shards)
{
	struct dirent *entry;
	DIR *dir = opendir("include/arenakit");
	int headers = 0;

	cr_assert(dir, "run from the checkout: no include/arenakit");
	while ((entry = readdir(dir))) {
		size_t len = strlen(entry->d_name);

		if (len < 3 || strcmp(entry->d_name + len - 2, ".h"))
			continue;
		if (headers++ % shards == shard)
			check_header(entry->d_name, compiler_cmd, what);
	}
	closedir(dir);
	cr_expect_geq(headers, 6, "only %d headers found", headers);
}

static void each_header(const char *compiler_cmd, const char *what)
{
	each_header_of(compiler_cmd, what, 0, 1);
}

/* As BPF: the slowest of these checks, in two halves (two tests). */
static void half_as_bpf(int half)
{
	const char *kdir = getenv("ARENAKIT_KDIR");
	char cmd[1024];

	cr_assert(kdir, "ARENAKIT_KDIR (the kernel cache entry) is not set: run via make test");
	snprintf(cmd, sizeof(cmd),
		 "clang-19 --target=bpf -mcpu=v3 -O2 -g -Wall -Wextra -Werror -Iinclude "
		 "-I%s -I%s/libbpf/include", kdir, kdir);
	each_header_of(cmd, "BPF", half, 2);
}

Test(headers, each_of_one_half_compiles_alone_as_bpf)
{
	half_as_bpf(0);
}

Test(headers, each_of_the_other_half_compiles_alone_as_bpf)
{
	half_as_bpf(1);
}

Test(headers, each_compiles_alone_in_user_space)
{
	char cmd[1024];

	/* libbpf's headers: user.h is for a loader built on it. */
	user_space_cmd(cmd, sizeof(cmd));
	each_header(cmd, "user space");
}

/*
 * A loader that reads a table through the mmap links with no allocator:
 * the user-space reads (ak_htab_lookup_copy, ak_htab_next_copy) reach no
 * allocator symbol, at -O0 as at -O2 (ak_htab_next, which may finish a
 * growth, does: "undefined reference to ak_allocator").
 */
Test(headers, a_user_space_reader_links_without_the_allocator)
{
	static const char source[] =
		"#include <arenakit/htab.h>\n"
		"#include <arenakit/htab_user.h>\n"
		"int main(void)\n"
		"{\n"
		"\tstatic struct ak_htab table;\n"
		"\tstruct ak_htab_cursor c = { 0 };\n"
		"\tunsigned int key = 1;\n"
		"\tunsigned long long value;\n"
		"\n"
		"\treturn ak_htab_lookup_copy(&table, &key, &value) +\n"
		"\t       ak_htab_next_copy(&table, &c, &key, &value);\n"
		"}\n";
	const char *levels[] = { "-O0", "-O2" };
	char cmd[256], output[8192];
	size_t i;

	for (i = 0; i < 2; i++) {
		snprintf(cmd, sizeof(cmd), "cc -std=gnu11 %s -Wall -Wextra -Werror -Iinclude",
			 levels[i]);
		cr_expect_eq(build(source, cmd, "", output, sizeof(output)), 0,
			     "a reader does not link alone (%s):\n%s", levels[i], output);
	}
}

/*
 * A loader's headers read an arena's mmap, which keeps none of what
 * AK_ARENA_CLAMP promises (arena.h): with it defined, each stops at its
 * guard with that one message.
 */
Test(headers, a_loaders_headers_refuse_a_clamp)
{
	static const char *const loaders[] = { "user.h", "omap_user.h" };
	char cmd[1024], source[256], expect[256], case_name[256];
	size_t i;

	user_space_cmd(cmd, sizeof(cmd));
	for (i = 0; i < sizeof(loaders) / sizeof(loaders[0]); i++) {
		snprintf(source, sizeof(source),
			 "#define AK_ARENA_CLAMP(p) (p)\n#include <arenakit/%s>\n", loaders[i]);
		snprintf(expect, sizeof(expect), "<arenakit/%s> reads an arena's mmap", loaders[i]);
		snprintf(case_name, sizeof(case_name), "%s with AK_ARENA_CLAMP defined",
			 loaders[i]);
		expect_one_error(source, cmd, expect, case_name);
	}
}
