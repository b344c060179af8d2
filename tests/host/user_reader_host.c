// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A user-space reader of a hash table (tests/data/htab_reader.c: a loader
 * that calls ak_htab_lookup_copy and ak_htab_lookup through the mmap) or of
 * a list (tests/data/list_reader.c: ak_list_next_copy) defines nothing of
 * the allocator: ak_allocator and the page source belong to whoever
 * allocates. It must compile and link at every
 * optimisation level, -O0 and -Og included, where the compiler keeps the
 * branches it could prove dead at -O2: a reference to the allocator from
 * the reader's path, dead or not, is an undefined symbol there.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>
#include <criterion/criterion.h>

#include "command.h"

#define HTAB_READER "tests/data/htab_reader.c"
#define LIST_READER "tests/data/list_reader.c"

static void expect_links(const char *reader, const char *level)
{
	static char out[1 << 16];
	char exe[] = "/tmp/user_reader.XXXXXX", command[1024];
	int fd = mkstemp(exe), status;

	cr_assert_geq(fd, 0);
	close(fd);
	snprintf(command, sizeof(command),
		 "${CC:-cc} -std=gnu11 -g %s -Wall -Wextra -Werror -Iinclude %s -o %s 2>&1",
		 level, reader, exe);
	status = run_command(command, out, sizeof(out));
	unlink(exe);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		cr_expect_fail("%s at %s does not build (a reader through the mmap has no "
			       "allocator):\n%s", reader, level, out);
	else
		cr_expect_str_empty(out, "%s at %s:\n%s", reader, level, out);
}

Test(user_reader, an_htab_reader_links_at_O0)
{
	expect_links(HTAB_READER, "-O0");
}

Test(user_reader, an_htab_reader_links_at_Og)
{
	expect_links(HTAB_READER, "-Og");
}

Test(user_reader, an_htab_reader_links_at_O2)
{
	expect_links(HTAB_READER, "-O2");
}

Test(user_reader, a_list_reader_links_at_O0)
{
	expect_links(LIST_READER, "-O0");
}

Test(user_reader, a_list_reader_links_at_Og)
{
	expect_links(LIST_READER, "-Og");
}

Test(user_reader, a_list_reader_links_at_O2)
{
	expect_links(LIST_READER, "-O2");
}
