// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * arenakit glob: grep(1) with glob patterns matched in BPF. This file has
 * the options, the patterns (-e, -f, the operand), the walk over the files
 * and the exit status, and it drives the other parts: lines from the input
 * into the matcher, the matcher's answers and lines into the report (the
 * parts are listed in glob_cli_tool.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "glob_cli_tool.h"

/* Exit statuses, grep's. */
#define GLOB_SELECTED 0
#define GLOB_NONE 1
#define GLOB_TROUBLE 2

struct glob_run {
	struct glob_opts opt;
	struct glob_matcher *m;
	struct glob_report r;
	bool trouble;	/* exit 2 */
	bool stop;	/* read nothing more: -q answered, or a fatal error */
};

/* One of each: a reader holds a 64 KiB buffer, the matcher a batch's lines. */
static struct glob_input input;
static struct glob_matcher matcher;

static void usage(FILE *out)
{
	fprintf(out,
		"usage: arenakit glob [OPTION]... PATTERN [FILE]...\n"
		"       arenakit glob [OPTION]... -e PATTERN | -f PATTERN_FILE ... [FILE]...\n"
		"\n"
		"Print the lines of each FILE that match a glob PATTERN, like grep(1): the\n"
		"whole line must match, with the kernel's lib/glob.c semantics (?, *,\n"
		"[...], [!...], \\ escapes; '/' and a leading '.' are not special; a '['\n"
		"that opens no class is a literal '[', with a note), and the matching runs\n"
		"in BPF over a bpf_arena. A NUL in a line is an ordinary byte to the\n"
		"matcher (-a 'b?x.c' matches b, NUL, x.c). A FILE of -, or no FILE, is\n"
		"standard input. Loads BPF: runs on the arenakit kernel only; in the VM,\n"
		"e.g. make run ARGS='glob -c \"*/Kconfig\" build/kernel-files.txt' (the\n"
		"guest sees the host's files; its /tmp is its own).\n"
		"\n"
		"Patterns:\n"
		"  -e PATTERN    a pattern; repeatable; a newline in it separates patterns\n"
		"  -f FILE       patterns from FILE, one per line (- is standard input);\n"
		"                repeatable; an empty FILE gives none, which match nothing\n"
		"  With -e or -f, every operand is a FILE.\n"
		"\n"
		"Output:\n"
		"  -c            print only a count of the selected lines of each FILE\n"
		"  -v            select the lines that match no pattern\n"
		"  -q            print nothing; exit 0 at the first selected line\n"
		"  -n            put the line number before each line\n"
		"  -H, -h        put / do not put the file name before each line or count\n"
		"                (the default puts it when there is more than one FILE)\n"
		"  -s            no messages about nonexistent or unreadable files\n"
		"  -a            print the lines of a file with NUL bytes, NULs included;\n"
		"                without -a such a file says \"arenakit glob: FILE: binary\n"
		"                file matches\" on standard error instead, and stops at\n"
		"                its first selected line (as grep 3.5+)\n"
		"  --check       also run fnmatch(3) on every line and pattern, report\n"
		"                disagreements (lines with a NUL are not checked)\n"
		"  --stats       instead of lines: per-pattern counts, lines x patterns =\n"
		"                pairs, the speed of BPF against the same matcher built\n"
		"                natively and against fnmatch(3), and peak memory\n"
		"  --help        this text\n"
		"Long forms, as grep's: --regexp, --file, --count, --invert-match,\n"
		"--quiet (--silent), --line-number, --with-filename, --no-filename,\n"
		"--no-messages, --text.\n"
		"\n"
		"Limits: a line may have %d bytes (a longer one is an error naming file\n"
		"and line, and the rest of its file is not read: /dev/zero exits 2 at\n"
		"once), a pattern %d. Any number of patterns: they are matched %d per\n"
		"BPF run, %d at a time in the arena. Lines go through one %d KiB buffer\n"
		"into the %d KiB arena, in batches of up to %d lines or %d KiB, so\n"
		"memory stays bounded whatever the input. A run the loop budget cuts is\n"
		"resumed by the next; a single match the budget cuts has no answer: it\n"
		"is reported, and the exit status is 2.\n"
		"\n"
		"Exit status: 0 if a line was selected, 1 if none, 2 on trouble (a file\n"
		"that cannot be read, a line over the limit, a read or write error such\n"
		"as > /dev/full, a bad option, a match the loop budget cut, a --check\n"
		"disagreement), selected lines or not; but -q exits 0 once a line is\n"
		"selected.\n",
		GLOB_CLI_LINE_MAX, GLOB_CLI_PATTERN_MAX, AK_GLOB_MAX_PATTERNS, GLOB_CLI_PATTERNS,
		GLOB_INPUT_BUF / 1024, GLOB_CLI_ARENA_PAGES * AK_PAGE_SIZE / 1024, GLOB_CLI_LINES,
		GLOB_CLI_TEXT / 1024);
}

static int usage_error(const char *fmt, const char *what)
{
	fprintf(stderr, GLOB_NAME ": ");
	fprintf(stderr, fmt, what);
	fprintf(stderr, "\nTry 'arenakit glob --help' for more information.\n");
	return -EINVAL;
}

/* Keep one pattern of @len bytes; @where names it in messages. */
static int add_pattern(struct glob_opts *o, const char *s, size_t len, const char *where)
{
	unsigned long long at;
	char **v;

	if (len > GLOB_CLI_PATTERN_MAX) {
		glob_error("%s: pattern %zu is %zu bytes, over the limit of %d", where,
			   o->npatterns + 1, len, GLOB_CLI_PATTERN_MAX);
		return -E2BIG;
	}
	if (memchr(s, '\0', len)) {
		glob_error("%s: pattern %zu has a NUL byte", where, o->npatterns + 1);
		return -EINVAL;
	}
	v = realloc(o->patterns, (o->npatterns + 1) * sizeof(*v));
	if (v) {
		o->patterns = v;
		v[o->npatterns] = strndup(s, len);
	}
	if (!v || !v[o->npatterns]) {
		glob_error("out of memory for patterns");
		return -ENOMEM;
	}
	/* lib/glob.c gives such a '[' a meaning, so this is a note, not a refusal. */
	if (ak_glob_valid(v[o->npatterns], GLOB_CLI_PATTERN_MAX, &at) == AK_GLOB_UNCLOSED_CLASS)
		glob_error("note: pattern '%s' has a '[' that opens no class at byte %llu; it "
			   "matches a literal '[' (as lib/glob.c does)", v[o->npatterns], at);
	o->npatterns++;
	return 0;
}

/* -e or the PATTERN operand: as in grep, a newline separates patterns. */
static int add_pattern_text(struct glob_opts *o, const char *text, const char *where)
{
	const char *nl;
	int err;

	for (;;) {
		nl = strchr(text, '\n');
		err = add_pattern(o, text, nl ? (size_t)(nl - text) : strlen(text), where);
		if (err || !nl)
			return err;
		text = nl + 1;
	}
}

/* -f FILE: one pattern per line, read with the same bounded reader. */
static int add_pattern_file(struct glob_opts *o, const char *path)
{
	static char pat[GLOB_CLI_PATTERN_MAX];
	size_t len;
	int rc, err = 0;

	rc = glob_input_open(&input, path);
	if (rc) {
		glob_error("%s: %s", path, strerror(-rc));
		return rc;
	}
	while (!err && (rc = glob_input_line(&input, pat, sizeof(pat), &len)) > 0)
		err = add_pattern(o, pat, len, input.name);
	if (!err && rc == -EOVERFLOW)
		glob_error("%s:%llu: pattern over the limit of %d bytes", input.name,
			   input.line_no, GLOB_CLI_PATTERN_MAX);
	else if (!err && rc < 0)
		glob_error("%s: %s", input.name, strerror(-rc));
	glob_input_close(&input);
	return err ? err : rc < 0 ? rc : 0;
}

enum { OPT_CHECK = 256, OPT_STATS, OPT_HELP };

static const struct option longopts[] = {
	{ "regexp", required_argument, NULL, 'e' },
	{ "file", required_argument, NULL, 'f' },
	{ "count", no_argument, NULL, 'c' },
	{ "invert-match", no_argument, NULL, 'v' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "silent", no_argument, NULL, 'q' },
	{ "line-number", no_argument, NULL, 'n' },
	{ "with-filename", no_argument, NULL, 'H' },
	{ "no-filename", no_argument, NULL, 'h' },
	{ "no-messages", no_argument, NULL, 's' },
	{ "text", no_argument, NULL, 'a' },
	{ "check", no_argument, NULL, OPT_CHECK },
	{ "stats", no_argument, NULL, OPT_STATS },
	{ "help", no_argument, NULL, OPT_HELP },
	{ 0 }
};

/* A message about the option getopt_long() stopped at. */
static int bad_option(char **argv, bool missing_argument)
{
	char name[2] = { optopt };

	if (!optopt || optopt >= OPT_CHECK)
		return usage_error("unrecognized option '%s'", argv[optind - 1]);
	if (missing_argument)
		return usage_error("option requires an argument -- '%s'", name);
	return usage_error("invalid option -- '%s'", name);
}

/* Parse the options; -e and -f take patterns in order. Returns 0, 1 (--help) or -errno. */
static int parse(int argc, char **argv, struct glob_opts *o)
{
	bool patterns_given = false;
	int c, err = 0;

	o->with_filename = -1;
	opterr = 0;	/* our messages, with our name */
	while (!err && (c = getopt_long(argc, argv, ":e:f:cvqnHhsa", longopts, NULL)) != -1) {
		switch (c) {
		case 'e':
			err = add_pattern_text(o, optarg, "-e");
			patterns_given = true;
			break;
		case 'f':
			err = add_pattern_file(o, optarg);
			patterns_given = true;
			break;
		case 'c':
			o->count = true;
			break;
		case 'v':
			o->invert = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'n':
			o->line_numbers = true;
			break;
		case 'H':
			o->with_filename = 1;
			break;
		case 'h':
			o->with_filename = 0;
			break;
		case 's':
			o->no_messages = true;
			break;
		case 'a':
			o->text = true;
			break;
		case OPT_CHECK:
			o->check = true;
			break;
		case OPT_STATS:
			o->stats = true;
			break;
		case OPT_HELP:
			usage(stdout);
			return 1;
		case ':':
			return bad_option(argv, true);
		default:
			return bad_option(argv, false);
		}
	}
	if (err)
		return err;
	if (!patterns_given) {
		if (optind == argc)
			return usage_error("%s", "no PATTERN given");
		err = add_pattern_text(o, argv[optind++], "PATTERN");
	}
	return err;
}

static void file_error(struct glob_run *g, const char *name, int err)
{
	g->trouble = true;
	if (err == -EOVERFLOW)	/* our limit, not the file's fault: always said */
		glob_error("%s:%llu: line over the limit of %d bytes; the rest of %s is not read",
			   name, input.line_no, GLOB_CLI_LINE_MAX, name);
	else if (!g->opt.no_messages)
		glob_error("%s: %s", name, strerror(-err));
}

/* A write error ends the run, as in grep. */
static void write_error(struct glob_run *g, int err)
{
	glob_error("write error: %s", strerror(-err));
	g->trouble = g->stop = true;
}

/* Match and report the lines read so far. */
static void flush_batch(struct glob_run *g)
{
	struct glob_answers ans;
	int err;

	if (!g->m->nlines || g->stop)
		return;
	while ((err = glob_matcher_next(g->m, &ans)) > 0)
		glob_report_answers(&g->r, &ans);
	if (err) {
		g->trouble = g->stop = true;
		return;
	}
	err = glob_report_batch(&g->r, g->m->line, g->m->nlines);
	glob_matcher_clear(g->m);
	if (err)
		write_error(g, err);
	if (g->opt.quiet && g->r.selected)
		g->stop = true;
}

/* Has the file said all it will: grep stops at "binary file matches". */
static bool file_answered(const struct glob_run *g)
{
	return g->r.binary_said && !g->opt.count && !g->opt.stats && !g->opt.check;
}

/* Before reading a line: match the batch if it is full, or if the read may wait. */
static void before_line(struct glob_run *g)
{
	if (glob_matcher_full(g->m) ||
	    (input.slow && g->m->nlines && !glob_input_has_line(&input)))
		flush_batch(g);
}

static void grep_file(struct glob_run *g, const char *path)
{
	size_t len;
	int rc = 0, err;

	err = glob_input_open(&input, path);
	if (err) {
		file_error(g, path, err);
		return;
	}
	g->r.file = input.name;
	for (;;) {
		before_line(g);
		if (g->stop || file_answered(g))
			break;
		rc = glob_input_line(&input, glob_matcher_slot(g->m), GLOB_CLI_LINE_MAX, &len);
		if (rc <= 0)
			break;
		glob_matcher_add(g->m, len, input.line_no, input.binary);
	}
	flush_batch(g);
	if (!g->stop) {
		if (rc < 0)
			file_error(g, input.name, rc);
		err = glob_report_file_done(&g->r);
		if (err)
			write_error(g, err);
	}
	glob_input_close(&input);
}

/* Standard output's last bytes go out at fclose(), which can fail (> /dev/full). */
static int close_stdout(void)
{
	errno = 0;
	if (fclose(stdout) == 0)
		return 0;
	return errno ? -errno : -EIO;
}

static int exit_status(const struct glob_run *g)
{
	if (g->opt.quiet && g->r.selected)
		return GLOB_SELECTED;	/* as grep -q: even after an error */
	if (g->trouble || g->r.cut_pairs || g->r.disagreements)
		return GLOB_TROUBLE;
	return g->r.selected ? GLOB_SELECTED : GLOB_NONE;
}

static void free_patterns(struct glob_opts *o)
{
	size_t j;

	for (j = 0; j < o->npatterns; j++)
		free(o->patterns[j]);
	free(o->patterns);
}

int cmd_glob(int argc, char **argv)
{
	struct glob_run g = { .m = &matcher };
	char *stdin_only[] = { "-" };
	char **files;
	int nfiles, i, rc;

	rc = parse(argc, argv, &g.opt);
	if (rc) {
		free_patterns(&g.opt);
		if (rc < 0)
			return GLOB_TROUBLE;	/* the message is out */
		rc = close_stdout();	/* after --help */
		if (rc)
			write_error(&g, rc);
		return rc ? GLOB_TROUBLE : 0;
	}
	files = optind < argc ? argv + optind : stdin_only;
	nfiles = optind < argc ? argc - optind : 1;
	if (glob_report_init(&g.r, &g.opt)) {
		glob_error("out of memory for --stats");
		g.trouble = true;
		goto out;
	}
	if (glob_matcher_open(g.m, g.opt.patterns, g.opt.npatterns,
			      g.opt.stats || g.opt.check)) {
		g.trouble = true;
		goto out;
	}
	g.r.prefix = g.opt.with_filename == 1 || (g.opt.with_filename < 0 && nfiles > 1);
	for (i = 0; i < nfiles && !g.stop; i++)
		grep_file(&g, files[i]);
	if (!g.stop && !g.opt.quiet)
		glob_report_summary(&g.r, glob_matcher_elapsed_ns(g.m), g.m->runs);
out:
	rc = close_stdout();
	if (rc && !g.stop)
		write_error(&g, rc);
	glob_matcher_close(g.m);
	glob_report_free(&g.r);
	free_patterns(&g.opt);
	return exit_status(&g);
}
