// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * arenakit: the command-line tool. Each subcommand lives in its own file
 * and is listed in the table below.
 */
#include <stdio.h>
#include <string.h>

#include <arenakit/arena.h>
#include "commands.h"

static const struct command commands[] = {
	{ "info", cmd_info, "describe the kernel: release, BTF, arena, may_goto, loop budget" },
	{ "glob", cmd_glob, "print lines matching glob patterns (lib/glob.c, in BPF)" },
	{ "bench", cmd_bench, "measure loops, walks, hash table, allocator, glob, verifier cost" },
	{ "stress", cmd_stress, "drive the structures to their edges: nothing may be silent" },
};

#define N_COMMANDS ARRAY_SIZE(commands)

static void usage(FILE *out)
{
	size_t i;

	fprintf(out,
		"usage: arenakit COMMAND [ARGS...]\n"
		"       arenakit COMMAND --help\n\n"
		"BPF data structures over bpf_arena. Commands that load BPF run only on\n"
		"the arenakit kernel (inside the VM: make run ARGS='COMMAND ...').\n\n"
		"commands:\n");
	for (i = 0; i < N_COMMANDS; i++)
		fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	for (i = 0; i < N_COMMANDS; i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "arenakit: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return 2;
}
