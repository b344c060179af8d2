// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * <arenakit/user.h>'s pure parts, on the host: where a log's tail begins.
 * (Its calls that load and run programs are tested in the VM:
 * tests/guest/user_header.c and mistakes.c.)
 */
#include <criterion/criterion.h>
#include <string.h>
#include <arenakit/user.h>

static const char *tail(const char *log, unsigned int lines)
{
	return ak_verifier_log_tail(log, strlen(log), lines);
}

Test(user_host, log_tail_counts_lines_from_the_end)
{
	const char *log = "func#0 @0\n0: R1=ctx()\nR2 invalid mem access 'scalar'\n";

	cr_expect_str_eq(tail(log, 1), "R2 invalid mem access 'scalar'\n");
	cr_expect_str_eq(tail(log, 2), "0: R1=ctx()\nR2 invalid mem access 'scalar'\n");
	cr_expect_eq(tail(log, 3), log, "as many lines as the log has: the whole log");
	cr_expect_eq(tail(log, 50), log);
}

Test(user_host, log_tail_of_a_last_line_without_newline)
{
	cr_expect_str_eq(tail("a\nb\nlast", 1), "last");
	cr_expect_str_eq(tail("a\nb\nlast", 2), "b\nlast");
	cr_expect_str_eq(tail("only", 1), "only");
	cr_expect_str_eq(tail("", 1), "");
	cr_expect_str_eq(tail("\n\n", 1), "\n", "an empty last line is a line");
}

Test(user_host, log_tail_stays_within_the_part_given)
{
	const char *log = "before\n-- BEGIN --\nx\ny\n-- END --\nafter\n";
	const char *begin = strstr(log, "x"), *end = strstr(log, "-- END");

	cr_expect_eq(ak_verifier_log_tail(begin, end - begin, 1), begin + 2);
	cr_expect_eq(ak_verifier_log_tail(begin, end - begin, 9), begin);
}
