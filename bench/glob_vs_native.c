// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Section "glob": pairs (line x pattern) per second of lib/glob.c's port
 * over a file list (the kernel tree's, by make bench): in BPF (the
 * matcher of `arenakit glob`, timed inside BPF), the same header compiled
 * natively, and fnmatch(3), which also checks every BPF answer. Each pass
 * reads the whole file through the glob tool's own matcher and report.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "glob_cli_tool.h"

/* The patterns of `make run`'s demo. */
static char *patterns[] = { "*.c", "*.[ch]", "Documentation/*", "*[!a-z]*", "*/*/*/Makefile" };
#define N_PATTERNS ARRAY_SIZE(patterns)

static struct glob_matcher matcher;

/* One pass over @path: seconds per pair in BPF, native and fnmatch. */
static int glob_pass(struct bench *b, const char *path, double *bpf_ns, double *native_ns,
		     double *fnmatch_ns)
{
	struct glob_opts opt = { .quiet = true, .stats = true, .check = true,
				 .patterns = patterns, .npatterns = N_PATTERNS };
	struct glob_answers ans;
	struct glob_input in;
	struct glob_report r;
	size_t len;
	int rc, err;

	err = glob_report_init(&r, &opt);
	if (err)
		return err;
	err = glob_matcher_open(&matcher, patterns, N_PATTERNS, true);
	if (err)
		goto out_report;
	err = glob_input_open(&in, path);
	if (err) {
		fprintf(stderr, "arenakit bench: glob input %s: %s (make bench writes it)\n", path,
			strerror(-err));
		goto out_matcher;
	}
	for (;;) {
		rc = glob_input_line(&in, glob_matcher_slot(&matcher), GLOB_CLI_LINE_MAX, &len);
		if (rc > 0)
			glob_matcher_add(&matcher, len, in.line_no, in.binary);
		if (rc > 0 && !glob_matcher_full(&matcher))
			continue;
		if (matcher.nlines) {
			while ((err = glob_matcher_next(&matcher, &ans)) > 0)
				glob_report_answers(&r, &ans);
			err = err ?: glob_report_batch(&r, matcher.line, matcher.nlines);
			glob_matcher_clear(&matcher);
		}
		if (err || rc <= 0)
			break;
	}
	if (!err && rc < 0)
		err = rc;
	if (!err && (r.disagreements || r.cut_pairs))
		bench_wrong(b, "glob: %llu answers differ from fnmatch(3), %llu pairs cut",
			    r.disagreements, r.cut_pairs);
	if (!err && !r.pairs)
		err = -ENODATA;
	if (!err) {
		*bpf_ns = (double)glob_matcher_elapsed_ns(&matcher) / r.pairs;
		*native_ns = r.native_s * 1e9 / r.pairs;
		*fnmatch_ns = r.fnmatch_s * 1e9 / r.pairs;
	}
	glob_input_close(&in);
out_matcher:
	glob_matcher_close(&matcher);
out_report:
	glob_report_free(&r);
	return err;
}

int bench_glob(struct bench *b)
{
	static const char *const names[] = { "BPF", "glob.h native", "fnmatch(3)" };
	const char *path = b->glob_input ? b->glob_input : "build/kernel-files.txt";
	struct bench_row *rows[3];
	double ns[3];
	int i, r, err;

	for (i = 0; i < 3; i++)
		rows[i] = bench_row(b, "glob", names[i], 0, "5 patterns", "ns/pair",
				    i ? BENCH_CLOCK_USER : BENCH_CLOCK_BPF);
	for (r = BENCH_WARMUP; r < b->runs; r++) {
		err = glob_pass(b, path, &ns[0], &ns[1], &ns[2]);
		if (err)
			return err;
		for (i = 0; i < 3 && r >= 0; i++)
			bench_sample(rows[i], ns[i]);
	}
	bench_ratio(b, "glob: BPF / the same header native", rows[0], rows[1], BENCH_AT_MOST, 1.15);
	bench_ratio(b, "glob: BPF / fnmatch(3)", rows[0], rows[2], BENCH_NO_GOAL, 0);
	return 0;
}
