// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Every public header compiles alone, as the first include of a file, both
 * as BPF (clang-19 -mcpu=v3, given only the include paths of libbpf and
 * vmlinux.h) and in user space, with -Wall -Wextra -Werror. Nothing is
 * loaded: the compilers run on the host.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <criterion/criterion.h>

/* Compile a file holding only `#include <arenakit/NAME>`; 0 if it built. */
static int compile_alone(const char *header, const char *compiler_cmd, char *out, size_t len)
{
	char dir[] = "build/tests/headers-XXXXXX", cmd[2048], *name;
	char copy[512];
	FILE *src, *pipe;
	size_t got;
	int status;

	snprintf(copy, sizeof(copy), "%s", header);
	name = basename(copy);
	cr_assert(mkdtemp(dir), "mkdtemp");
	snprintf(cmd, sizeof(cmd), "%s/alone.c", dir);
	src = fopen(cmd, "w");
	cr_assert(src);
	fprintf(src, "#include <arenakit/%s>\n", name);
	fclose(src);
	snprintf(cmd, sizeof(cmd), "%s -c %s/alone.c -o %s/alone.o 2>&1; rc=$?; rm -rf %s; exit $rc",
		 compiler_cmd, dir, dir, dir);
	pipe = popen(cmd, "r");
	cr_assert(pipe);
	got = fread(out, 1, len - 1, pipe);
	out[got] = 0;
	status = pclose(pipe);
	return status;
}

static void each_header(const char *compiler_cmd, const char *what)
{
	char output[8192], path[512];
	struct dirent *entry;
	DIR *dir = opendir("include/arenakit");
	int headers = 0;

	cr_assert(dir, "run from the checkout: no include/arenakit");
	while ((entry = readdir(dir))) {
		size_t len = strlen(entry->d_name);

		if (len < 3 || strcmp(entry->d_name + len - 2, ".h"))
			continue;
		snprintf(path, sizeof(path), "include/arenakit/%s", entry->d_name);
		headers++;
		cr_expect_eq(compile_alone(path, compiler_cmd, output, sizeof(output)), 0,
			     "%s does not compile alone (%s):\n%s", path, what, output);
	}
	closedir(dir);
	cr_expect_geq(headers, 6, "only %d headers found", headers);
}

Test(headers, each_compiles_alone_as_bpf)
{
	const char *kdir = getenv("ARENAKIT_KDIR");
	char cmd[1024];

	cr_assert(kdir, "ARENAKIT_KDIR (the kernel cache entry) is not set: run via make test");
	snprintf(cmd, sizeof(cmd),
		 "clang-19 --target=bpf -mcpu=v3 -O2 -g -Wall -Wextra -Werror -Iinclude "
		 "-I%s -I%s/libbpf/include", kdir, kdir);
	each_header(cmd, "BPF");
}

Test(headers, each_compiles_alone_in_user_space)
{
	each_header("cc -std=gnu11 -O2 -Wall -Wextra -Werror -Iinclude", "user space");
}
