// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * `arenakit glob` as a user runs it, in the VM: output, messages and exit
 * statuses against grep's, limits, NUL bytes, and many patterns checked
 * against fnmatch(3) here on the host.
 *
 * A VM boot costs seconds, so each test writes its input files under
 * build/, boots once, and runs a shell script of many cases in the guest.
 * The script prints each case as
 *
 *   === NAME
 *   [rc=STATUS]
 *   STDOUT (NUL bytes shown as '@')
 *   --- stderr
 *   STDERR
 *
 * and the test picks the cases apart and checks them one by one.
 *
 * A system test (tests/system/ checks the machinery around the library by
 * running what make and users run): it boots the VM and runs the built
 * tool there; BPF loads only in the guest.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <criterion/criterion.h>

#include "glob_pairs.h"

#define CASE_MARK "=== "
#define ERR_MARK_LINE "--- stderr"
#define ERR_MARK ERR_MARK_LINE "\n"

struct glob_case {
	int rc;
	char *out;
	char *err;
};

/* Create @name in @dir for writing (the test fails if it cannot). */
static FILE *create_in(const char *dir, const char *name)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	cr_assert(f, "cannot write %s", path);
	return f;
}

static void write_file(const char *dir, const char *name, const void *data, size_t len)
{
	FILE *f = create_in(dir, name);

	cr_assert_eq(fwrite(data, 1, len, f), len);
	cr_assert_eq(fclose(f), 0);
}

static void write_text(const char *dir, const char *name, const char *text)
{
	write_file(dir, name, text, strlen(text));
}

static void make_dir(const char *dir)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf %s && mkdir -p %s", dir, dir);
	cr_assert_eq(system(cmd), 0);
}

/*
 * The guest side: c NAME 'COMMAND' runs COMMAND in a subshell (no exec of
 * a shell: each exec over 9p costs time under TCG) from @dir, with $G the
 * tool's glob command.
 */
static void write_script(const char *dir, const char *cases)
{
	char text[16384];

	snprintf(text, sizeof(text),
		 "cd %s || exit 1\n"
		 "G='../../arenakit glob'\n"
		 "c() {\n"
		 "	echo '" CASE_MARK "'\"$1\"\n"
		 "	( eval \"$2\" ) > /tmp/out 2> /tmp/err\n"
		 "	echo \"[rc=$?]\"\n"
		 "	/bin/busybox tr '\\000' @ < /tmp/out\n"
		 "	echo '" ERR_MARK_LINE "'\n"
		 "	/bin/busybox cat /tmp/err\n"
		 "}\n"
		 "%s",
		 dir, cases);
	write_text(dir, "cases.sh", text);
}

/* Boot the VM once for the script; returns everything it printed. */
static char *run_script(const char *dir)
{
	char cmd[512], *all = NULL;
	size_t len = 0;
	FILE *p;
	int status;

	snprintf(cmd, sizeof(cmd), "kernel/vm 'sh %s/cases.sh' 2>&1", dir);
	p = popen(cmd, "r");
	cr_assert(p);
	{
		FILE *mem = open_memstream(&all, &len);
		char buf[65536];
		size_t n;

		cr_assert(mem);
		while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
			fwrite(buf, 1, n, mem);
		fclose(mem);
	}
	status = pclose(p);
	cr_assert_eq(status, 0, "kernel/vm failed (%d); output:\n%s", status, all);
	return all;
}

/* Find case @name in @all; its strings are allocated (free with free_case). */
static struct glob_case get_case(const char *all, const char *name)
{
	char mark[128];
	const char *start, *end, *out, *err;
	struct glob_case c = { .rc = -1 };

	snprintf(mark, sizeof(mark), CASE_MARK "%s\n", name);
	start = strstr(all, mark);
	cr_assert(start, "case %s did not run; output:\n%s", name, all);
	start += strlen(mark);
	end = strstr(start, "\n" CASE_MARK);
	if (!end)
		end = strstr(start, "\nkernel/vm:");
	end = end ? end + 1 : start + strlen(start);
	cr_assert_eq(sscanf(start, "[rc=%d]", &c.rc), 1, "case %s: no status", name);
	out = strchr(start, '\n') + 1;
	err = strstr(out, ERR_MARK);
	cr_assert(err && err < end, "case %s: no stderr mark", name);
	c.out = strndup(out, err - out);
	err += strlen(ERR_MARK);
	c.err = strndup(err, end - err);
	return c;
}

static void free_case(struct glob_case *c)
{
	free(c->out);
	free(c->err);
}

/* The case's status and standard output are exactly these; stderr is empty. */
static void expect_clean(const char *all, const char *name, int rc, const char *out)
{
	struct glob_case c = get_case(all, name);

	cr_expect_eq(c.rc, rc, "%s: status %d, not %d; stderr:\n%s", name, c.rc, rc, c.err);
	cr_expect_str_eq(c.out, out, "%s: stdout:\n%s", name, c.out);
	cr_expect_str_empty(c.err, "%s: stderr:\n%s", name, c.err);
	free_case(&c);
}

/* Status and stdout as given, and stderr holding @message (NULL: empty). */
static void expect_message(const char *all, const char *name, int rc, const char *out,
			   const char *message)
{
	struct glob_case c = get_case(all, name);

	cr_expect_eq(c.rc, rc, "%s: status %d, not %d; stderr:\n%s", name, c.rc, rc, c.err);
	cr_expect_str_eq(c.out, out, "%s: stdout:\n%s", name, c.out);
	if (message)
		cr_expect(strstr(c.err, message), "%s: stderr lacks \"%s\":\n%s", name, message,
			  c.err);
	else
		cr_expect_str_empty(c.err, "%s: stderr:\n%s", name, c.err);
	free_case(&c);
}

#define SEMANTICS_DIR "build/glob_cli/semantics"

static const char semantics_cases[] =
	"c positional \"$G '*.c' in.txt\"\n"
	"c e_twice \"$G -e '*.c' -e '*/*/*/Makefile' in.txt\"\n"
	"c f_file \"$G -f pats.txt in.txt\"\n"
	"c f_twice_and_e \"$G -f pats.txt -e 'b.?' -f readme.pat in.txt\"\n"
	"c e_then_files \"$G -e '*.c' in.txt other.txt\"\n"
	"c newline_separates \"$G \\\"\\$(printf '*.c\\\\n*.h')\\\" in.txt\"\n"
	"c dash_is_stdin \"$G '*.h' - < in.txt\"\n"
	"c no_file_is_stdin \"$G '*.h' < in.txt\"\n"
	"c stdin_named \"$G -H '*.h' < in.txt\"\n"
	"c file_and_dash \"$G -c '*' in.txt - < other.txt\"\n"
	"c f_dash \"$G -f - in.txt < pats.txt\"\n"
	"c count_invert \"$G -c -v '*.[ch]' in.txt\"\n"
	"c count_files \"$G -c '*.c' in.txt other.txt\"\n"
	"c count_h \"$G -c -h '*.c' in.txt other.txt\"\n"
	"c count_none \"$G -c nomatch in.txt\"\n"
	"c numbers_H \"$G -n -H '*Makefile' in.txt\"\n"
	"c numbers_h \"$G -n -h '*.c' in.txt other.txt\"\n"
	"c H_then_h \"$G -H -h '*.c' in.txt other.txt\"\n"
	"c invert \"$G -v '*.?' in.txt\"\n"
	"c none \"$G nomatch in.txt\"\n"
	"c quiet \"$G -q '*.c' in.txt\"\n"
	"c quiet_none \"$G -q nomatch in.txt\"\n"
	"c quiet_after_error \"$G -q '*.c' missing in.txt\"\n"
	"c missing \"$G x missing\"\n"
	"c missing_s \"$G -s x missing\"\n"
	"c selected_and_missing \"$G '*.c' in.txt missing\"\n"
	"c directory \"$G x dir\"\n"
	"c directory_s_count \"$G -s -c '*.c' dir in.txt\"\n"
	"c empty_pattern_file \"$G -f empty.txt in.txt\"\n"
	"c empty_pattern_file_v \"$G -v -f empty.txt in.txt\"\n"
	"c missing_pattern_file \"$G -s -f missing in.txt\"\n"
	"c no_pattern \"$G\"\n"
	"c bad_option \"$G -x a in.txt\"\n"
	"c help \"$G --help\"\n"
	"c check \"$G --check -c '[!a-z]*' in.txt\"\n";

Test(glob_cli, grep_semantics, .timeout = 300)
{
	struct glob_case c;
	char *all;

	make_dir(SEMANTICS_DIR);
	make_dir(SEMANTICS_DIR "/dir");
	write_text(SEMANTICS_DIR, "in.txt", "a.c\nb.h\nMakefile\nx/y/z/Makefile\nREADME\n");
	write_text(SEMANTICS_DIR, "other.txt", "c.c\nd.txt\n");
	write_text(SEMANTICS_DIR, "pats.txt", "*.c\n*/*/*/Makefile\n");
	write_text(SEMANTICS_DIR, "readme.pat", "README\n");
	write_text(SEMANTICS_DIR, "empty.txt", "");
	write_script(SEMANTICS_DIR, semantics_cases);
	all = run_script(SEMANTICS_DIR);

	/* Patterns: the operand, -e, -f, combined; then every operand is a file. */
	expect_clean(all, "positional", 0, "a.c\n");
	expect_clean(all, "e_twice", 0, "a.c\nx/y/z/Makefile\n");
	expect_clean(all, "f_file", 0, "a.c\nx/y/z/Makefile\n");
	expect_clean(all, "f_twice_and_e", 0, "a.c\nb.h\nx/y/z/Makefile\nREADME\n");
	expect_clean(all, "e_then_files", 0, "in.txt:a.c\nother.txt:c.c\n");
	expect_clean(all, "newline_separates", 0, "a.c\nb.h\n");
	/* Standard input: -, no file, and its name. */
	expect_clean(all, "dash_is_stdin", 0, "b.h\n");
	expect_clean(all, "no_file_is_stdin", 0, "b.h\n");
	expect_clean(all, "stdin_named", 0, "(standard input):b.h\n");
	expect_clean(all, "file_and_dash", 0, "in.txt:5\n(standard input):2\n");
	expect_clean(all, "f_dash", 0, "a.c\nx/y/z/Makefile\n");
	/* -c -v -n -H -h, as grep prints them. */
	expect_clean(all, "count_invert", 0, "3\n");
	expect_clean(all, "count_files", 0, "in.txt:1\nother.txt:1\n");
	expect_clean(all, "count_h", 0, "1\n1\n");
	expect_clean(all, "count_none", 1, "0\n");
	expect_clean(all, "numbers_H", 0, "in.txt:3:Makefile\nin.txt:4:x/y/z/Makefile\n");
	expect_clean(all, "numbers_h", 0, "1:a.c\n1:c.c\n");
	expect_clean(all, "H_then_h", 0, "a.c\nc.c\n");
	expect_clean(all, "invert", 0, "Makefile\nx/y/z/Makefile\nREADME\n");
	expect_clean(all, "none", 1, "");
	/* -q: silent, 0 at a selected line even after an error, else 1. */
	expect_clean(all, "quiet", 0, "");
	expect_clean(all, "quiet_none", 1, "");
	expect_message(all, "quiet_after_error", 0, "", "missing: No such file or directory");
	/* Errors are status 2, selected lines or not; -s silences file messages only. */
	expect_message(all, "missing", 2, "",
		       "arenakit glob: missing: No such file or directory\n");
	expect_message(all, "missing_s", 2, "", NULL);
	expect_message(all, "selected_and_missing", 2, "in.txt:a.c\n",
		       "missing: No such file or directory");
	expect_message(all, "directory", 2, "", "arenakit glob: dir: Is a directory\n");
	expect_message(all, "directory_s_count", 2, "dir:0\nin.txt:1\n", NULL);
	expect_clean(all, "empty_pattern_file", 1, "");
	expect_clean(all, "empty_pattern_file_v", 0,
		     "a.c\nb.h\nMakefile\nx/y/z/Makefile\nREADME\n");
	expect_message(all, "missing_pattern_file", 2, "", "missing: No such file or directory");
	expect_message(all, "no_pattern", 2, "", "no PATTERN given");
	expect_message(all, "bad_option", 2, "", "invalid option -- 'x'");

	c = get_case(all, "help");
	cr_expect_eq(c.rc, 0);
	cr_expect(strstr(c.out, "usage: arenakit glob [OPTION]... PATTERN [FILE]...\n"),
		  "--help:\n%s", c.out);
	cr_expect(strstr(c.out, "65536 bytes"), "--help states the line limit:\n%s", c.out);
	cr_expect(strstr(c.out, "Long forms, as grep's: --regexp, --file,"),
		  "--help names the long options:\n%s", c.out);
	cr_expect(strstr(c.out, "A NUL in a line is an ordinary byte"),
		  "--help says what a NUL is to the matcher:\n%s", c.out);
	cr_expect(strstr(c.out, "Exit status: 0 if a line was selected, 1 if none, 2 on trouble"),
		  "--help states the exit statuses:\n%s", c.out);
	free_case(&c);

	expect_message(all, "check", 0, "2\n", "fnmatch(3): agrees on all 5 pairs checked\n");

	free(all);
	cr_assert_eq(system("rm -rf " SEMANTICS_DIR), 0);
}

#define LIMITS_DIR "build/glob_cli/limits"
#define RANDOM_LINES 2000
#define RANDOM_PATTERNS 100
#define LITERAL_PATTERNS 1100	/* more than the arena holds at once (1024) */

static char random_lines[RANDOM_LINES][GLOB_PAIRS_MAX_LEN + 1];
static char random_patterns[RANDOM_PATTERNS][GLOB_PAIRS_MAX_LEN + 1];

/* 100 patterns and 2000 lines from the differential tests' alphabet. */
static void write_random(const char *dir)
{
	unsigned int seed = GLOB_PAIRS_SEED + 2;
	FILE *lines = create_in(dir, "rand.txt"), *pats = create_in(dir, "rand.pat");
	int i;

	for (i = 0; i < RANDOM_LINES; i++) {
		glob_random_string(random_lines[i], GLOB_PAIRS_MAX_LEN, "ab.-/", &seed);
		fprintf(lines, "%s\n", random_lines[i]);
	}
	for (i = 0; i < RANDOM_PATTERNS;) {
		glob_random_string(random_patterns[i], GLOB_PAIRS_MAX_LEN, "ab.*?[]!-", &seed);
		if (glob_known_difference(random_patterns[i]))
			continue;
		fprintf(pats, "%s\n", random_patterns[i++]);
	}
	fclose(lines);
	fclose(pats);
}

/* Pattern k is the literal "lineK": lines 0..1099 of 1200 match, each one pattern. */
static void write_literals(const char *dir)
{
	FILE *lines = create_in(dir, "literal.txt"), *pats = create_in(dir, "literal.pat");
	int i;

	for (i = LITERAL_PATTERNS - 1; i >= 0; i--)
		fprintf(pats, "line%04d\n", i);
	for (i = 0; i < LITERAL_PATTERNS + 100; i++)
		fprintf(lines, "line%04d\n", i);
	fclose(lines);
	fclose(pats);
}

/* A 10 MB line between two short ones. */
static void write_long(const char *dir)
{
	size_t len = 10 * 1024 * 1024;
	char *text = malloc(len + 32);

	cr_assert(text);
	strcpy(text, "short.c\n");
	memset(text + 8, 'y', len);
	strcpy(text + 8 + len, "\nafter.c\n");
	write_file(dir, "long.txt", text, strlen(text));
	free(text);
}

/*
 * "*a{4000}b" against "a{65000}c": about 244M steps, over one frame's loop
 * budget whether it is a count (stock 6.12) or time (the arenakit kernel).
 */
static void write_worst(const char *dir)
{
	static char pat[4004], line[65003];

	pat[0] = '*';
	memset(pat + 1, 'a', 4000);
	strcpy(pat + 4001, "b\n");
	memset(line, 'a', 65000);
	strcpy(line + 65000, "c\n");
	write_text(dir, "worst.pat", pat);
	write_text(dir, "worst.txt", line);
}

static const char limits_cases[] =
	"c binary \"$G '*.c' in.txt bin.txt\"\n"
	"c binary_count \"$G -c '*.c' bin.txt\"\n"
	"c binary_none \"$G nomatch bin.txt\"\n"
	"c binary_text \"$G -a '*.c' bin.txt\"\n"
	"c nul_is_a_byte \"$G -a -n 'b?x.c' bin.txt\"\n"
	"c nul_ends_nothing \"$G -a b bin.txt\"\n"
	"c check_skips_nul \"$G --check -c -a '*' bin.txt\"\n"
	"c long_line \"$G -n '*.c' long.txt\"\n"
	"c long_line_stats \"$G --stats '*.c' long.txt\"\n"
	"c short_stats \"$G --stats '*.c' in.txt\"\n"
	"c dev_zero \"$G x /dev/zero\"\n"
	"c dev_full \"$G '*.c' in.txt > /dev/full\"\n"
	"c dev_full_count \"$G -c '*.c' in.txt > /dev/full\"\n"
	"c pattern_too_long \"$G -f long.pat in.txt\"\n"
	"c budget_cut \"$G -f worst.pat worst.txt\"\n"
	"c literal \"$G -c -f literal.pat literal.txt\"\n"
	"c literal_invert \"$G -v -f literal.pat literal.txt\"\n"
	"c random_lines \"$G -f rand.pat rand.txt\"\n"
	"c random_stats \"$G --stats --check -f rand.pat rand.txt\"\n";

/* The "memory: N KiB peak resident" figure of a --stats output. */
static long peak_kib(const char *out)
{
	const char *m = strstr(out, "memory:");
	long kib = -1;

	cr_assert(m, "no memory line in:\n%s", out);
	cr_assert_eq(sscanf(m, "memory: %ld KiB", &kib), 1);
	return kib;
}

static void expect_random(const char *all)
{
	char expect[RANDOM_LINES * (GLOB_PAIRS_MAX_LEN + 1) + 1] = "", want[128];
	unsigned long long count, pairs = 0;
	struct glob_case c;
	const char *at;
	int i, j, any;

	for (i = 0; i < RANDOM_LINES; i++) {
		for (any = 0, j = 0; j < RANDOM_PATTERNS && !any; j++)
			any = !fnmatch(random_patterns[j], random_lines[i], 0);
		if (any)
			strcat(strcat(expect, random_lines[i]), "\n");
	}
	expect_clean(all, "random_lines", 0, expect);

	/* --stats: each pattern's count is fnmatch's, over all 200,000 pairs. */
	c = get_case(all, "random_stats");
	cr_expect_eq(c.rc, 0, "status %d; stderr:\n%s", c.rc, c.err);
	at = c.out;
	for (j = 0; j < RANDOM_PATTERNS; j++) {
		unsigned long long want_count = 0;

		for (i = 0; i < RANDOM_LINES; i++)
			want_count += !fnmatch(random_patterns[j], random_lines[i], 0);
		cr_assert_eq(sscanf(at, "%llu", &count), 1, "no count for pattern %d:\n%s", j,
			     c.out);
		cr_expect_eq(count, want_count, "pattern %d '%s': %llu lines, fnmatch says %llu",
			     j, random_patterns[j], count, want_count);
		pairs += want_count;
		at = strchr(at, '\n') + 1;
	}
	snprintf(want, sizeof(want), "%d lines x %d patterns = %d pairs\n", RANDOM_LINES,
		 RANDOM_PATTERNS, RANDOM_LINES * RANDOM_PATTERNS);
	cr_expect(strstr(c.out, want), "no \"%s\" in:\n%s", want, c.out);
	snprintf(want, sizeof(want), "fnmatch(3): agrees on all %d pairs checked\n",
		 RANDOM_LINES * RANDOM_PATTERNS);
	cr_expect(strstr(c.out, want), "no \"%s\" in:\n%s", want, c.out);
	cr_expect_gt(pairs, 1000, "only %llu matching pairs: a weak test", pairs);
	free_case(&c);
}

static void expect_literals(const char *all)
{
	static char expect[100 * 9 + 1];
	int i;

	expect_clean(all, "literal", 0, "1100\n");
	for (i = LITERAL_PATTERNS; i < LITERAL_PATTERNS + 100; i++)
		sprintf(expect + strlen(expect), "line%04d\n", i);
	expect_clean(all, "literal_invert", 0, expect);
}

Test(glob_cli, limits_nul_and_many_patterns, .timeout = 300)
{
	static const char bin[] = "a.c\nb\0x.c\nz\n";
	struct glob_case c, base;
	char *all, longpat[4099];

	make_dir(LIMITS_DIR);
	write_text(LIMITS_DIR, "in.txt", "a.c\nb.h\nMakefile\nx/y/z/Makefile\nREADME\n");
	write_file(LIMITS_DIR, "bin.txt", bin, sizeof(bin) - 1);
	memset(longpat, '*', 4097);
	strcpy(longpat + 4097, "\n");
	write_text(LIMITS_DIR, "long.pat", longpat);
	write_long(LIMITS_DIR);
	write_worst(LIMITS_DIR);
	write_literals(LIMITS_DIR);
	write_random(LIMITS_DIR);
	write_script(LIMITS_DIR, limits_cases);
	all = run_script(LIMITS_DIR);

	/* A NUL: "binary file matches" once, unless -a; and it is a byte to match. */
	expect_message(all, "binary", 0, "in.txt:a.c\n",
		       "arenakit glob: bin.txt: binary file matches\n");
	expect_clean(all, "binary_count", 0, "2\n");
	expect_clean(all, "binary_none", 1, "");
	expect_clean(all, "binary_text", 0, "a.c\nb@x.c\n");
	expect_clean(all, "nul_is_a_byte", 0, "2:b@x.c\n");
	expect_clean(all, "nul_ends_nothing", 1, "");
	expect_message(all, "check_skips_nul", 0, "3\n",
		       "fnmatch(3): agrees on all 2 pairs checked (1 unchecked: lines with a NUL)");

	/* A line over the limit: named, status 2, the lines before it still printed. */
	expect_message(all, "long_line", 2, "1:short.c\n",
		       "long.txt:2: line over the limit of 65536 bytes");
	c = get_case(all, "long_line_stats");
	base = get_case(all, "short_stats");
	cr_expect_eq(c.rc, 2);
	cr_expect_lt(peak_kib(c.out) - peak_kib(base.out), 4096,
		     "a 10 MB line raised the peak from %ld to %ld KiB", peak_kib(base.out),
		     peak_kib(c.out));
	free_case(&c);
	free_case(&base);
	expect_message(all, "dev_zero", 2, "", "/dev/zero:1: line over the limit");

	/* Write errors are errors. */
	expect_message(all, "dev_full", 2, "", "write error: No space left on device");
	expect_message(all, "dev_full_count", 2, "", "write error: No space left on device");

	expect_message(all, "pattern_too_long", 2, "", "long.pat:1: pattern over the limit");
	/* A match the budget cut is no answer, and not "no match". */
	expect_message(all, "budget_cut", 2, "", "ran out of the loop budget: no answer");

	/* Past 32 patterns (a group per run) and past 1024 (the arena's window). */
	expect_literals(all);
	expect_random(all);

	free(all);
	cr_assert_eq(system("rm -rf " LIMITS_DIR), 0);
}
