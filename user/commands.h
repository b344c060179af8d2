/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
#ifndef ARENAKIT_COMMANDS_H
#define ARENAKIT_COMMANDS_H

/* A subcommand: gets argv from its own name on; returns the exit status. */
struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

int cmd_info(int argc, char **argv);
int cmd_glob(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_stress(int argc, char **argv);

/* True if argv asks for help (-h or --help anywhere). */
int wants_help(int argc, char **argv);

#endif
