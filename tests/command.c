// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <stdio.h>
#include <criterion/criterion.h>

#include "command.h"

int run_command(const char *command, char *out, size_t size)
{
	size_t n = 0, got;
	FILE *p = popen(command, "r");

	cr_assert(p, "cannot run %s", command);
	while (n + 1 < size && (got = fread(out + n, 1, size - 1 - n, p)) > 0)
		n += got;
	out[n] = '\0';
	return pclose(p);
}
