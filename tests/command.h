/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What the host and system tests that run commands share (tests/command.c). */
#ifndef ARENAKIT_TESTS_COMMAND_H
#define ARENAKIT_TESTS_COMMAND_H

#include <stddef.h>

/*
 * Run @command through sh: its output (up to @size - 1 bytes, NUL-ended)
 * in @out; returns its wait status (pclose). Fails the test if it cannot run.
 */
int run_command(const char *command, char *out, size_t size);

#endif
