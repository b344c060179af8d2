// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Section "verifier": what each library program costs the verifier, as
 * veristat reports it: instructions processed (bpf_prog_info's
 * verified_insns), verification time (the verifier's own statistics line,
 * log level 4) and the JITed size. Every program of the tool and of the
 * benchmarks is loaded on its own, and with --objects every program of
 * the *.bpf.o files in a directory (the guest tests').
 */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include <arenakit/alloc.h>
#include <arenakit/htab.h>
#include <arenakit/user.h>
#include "alloc_vs_frag.h"
#include "bench.h"
#include "glob_cli_tool.h"
#include "htab_vs_map.h"
#include "loader.h"
#include "walk.h"

#include "alloc_vs_frag.skel.h"
#include "glob_cli.skel.h"
#include "htab_vs_map.skel.h"
#include "info.skel.h"
#include "walk.skel.h"

#define INSNS_LIMIT 50000
#define LOG_SIZE (1 << 20)

struct verifier_tally {
	unsigned long long most;
	char most_name[80];
	int loaded, failed;
};

/* Load program @index of the object alone; record its figures. */
static int measure_program(struct bench *b, struct verifier_tally *t, const char *object,
			   const void *elf, size_t size, const char *path, int index)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = object);
	struct ak_verifier_stats stats;
	struct bpf_object *obj;
	struct bpf_program *prog, *wanted = NULL;
	char *log, name[80];
	int i = 0, err;

	obj = path ? bpf_object__open_file(path, &opts) : bpf_object__open_mem(elf, size, &opts);
	if (!obj)
		return -errno;
	bpf_object__for_each_program(prog, obj) {
		bpf_program__set_autoload(prog, i == index);
		if (i++ == index)
			wanted = prog;
	}
	if (!wanted) {
		bpf_object__close(obj);
		return -ENOENT;
	}
	log = calloc(1, LOG_SIZE);
	if (!log) {
		bpf_object__close(obj);
		return -ENOMEM;
	}
	err = ak_verifier_log_keep(wanted, log, LOG_SIZE, AK_VERIFIER_LOG_STATS);
	if (err)
		goto out;
	snprintf(name, sizeof(name), "%s/%s", object, bpf_program__name(wanted));
	arenakit_set_report_stream(NULL);
	err = arenakit_load_object(obj);
	arenakit_set_report_stream(stderr);
	if (err) {
		/* Some test programs exist to be refused, or need what this kernel lacks. */
		fprintf(stderr, "arenakit bench: %s does not load here (%s); not counted\n", name,
			strerror(-err));
		t->failed++;
		goto out;
	}
	/* A log without statistics leaves the time 0; the rest is the program's. */
	err = ak_verifier_stats(wanted, &stats);
	if (err && err != -ENODATA)
		goto out;
	err = 0;
	bench_sample(bench_row(b, "verifier", name, 0, "", "insns processed",
			       BENCH_CLOCK_VERIFIER), stats.insns_processed);
	bench_sample(bench_row(b, "verifier-time", name, 0, "", "us to verify",
			       "the verifier's statistics (log level 4)"), stats.verify_usec);
	bench_sample(bench_row(b, "prog-size", name, 0, "", "bytes JITed",
			       "bpf_prog_info"), stats.jited_bytes);
	if (stats.insns_processed > t->most) {
		t->most = stats.insns_processed;
		snprintf(t->most_name, sizeof(t->most_name), "%s", name);
	}
	t->loaded++;
out:
	free(log);
	bpf_object__close(obj);
	return 0;
}

static int measure_object(struct bench *b, struct verifier_tally *t, const char *object,
			  const void *elf, size_t size, const char *path)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = object);
	struct bpf_object *obj;
	struct bpf_program *prog;
	int n = 0, i, err = 0;

	obj = path ? bpf_object__open_file(path, &opts) : bpf_object__open_mem(elf, size, &opts);
	if (!obj)
		return -errno;
	bpf_object__for_each_program(prog, obj)
		n++;
	bpf_object__close(obj);
	for (i = 0; i < n && !err; i++)
		err = measure_program(b, t, object, elf, size, path, i);
	return err;
}

#define EMBEDDED(name) { #name, name##__elf_bytes }

int bench_verifier(struct bench *b)
{
	static const struct {
		const char *name;
		const void *(*elf)(size_t *size);
	} embedded[] = {
		EMBEDDED(glob_cli), EMBEDDED(info), EMBEDDED(walk), EMBEDDED(htab_vs_map),
		EMBEDDED(alloc_vs_frag),
	};
	struct verifier_tally lib = {}, tests = {};
	struct dirent **files = NULL;
	char path[4096], object[64];
	size_t i, size;
	int n = 0, err = 0;
	const void *elf;

	for (i = 0; i < ARRAY_SIZE(embedded) && !err; i++) {
		elf = embedded[i].elf(&size);
		err = measure_object(b, &lib, embedded[i].name, elf, size, NULL);
	}
	if (!err && b->objects_dir) {
		n = scandir(b->objects_dir, &files, NULL, alphasort);
		if (n < 0) {
			fprintf(stderr, "arenakit bench: --objects %s: %s\n", b->objects_dir,
				strerror(errno));
			return -errno;
		}
	}
	for (i = 0; i < (size_t)n; i++) {
		if (!err && !fnmatch("*.bpf.o", files[i]->d_name, 0)) {
			snprintf(path, sizeof(path), "%s/%s", b->objects_dir, files[i]->d_name);
			snprintf(object, sizeof(object), "%.*s",
				 (int)(strlen(files[i]->d_name) - strlen(".bpf.o")),
				 files[i]->d_name);
			err = measure_object(b, &tests, object, NULL, 0, path);
		}
		free(files[i]);
	}
	free(files);
	if (err)
		return err;
	fprintf(stderr, "arenakit bench: verifier: %d programs loaded, %d not loaded; "
		"most insns processed: %llu (%s) by the tool's and the benchmarks', "
		"%llu (%s) by the tests'\n", lib.loaded + tests.loaded,
		lib.failed + tests.failed, lib.most, lib.most_name, tests.most, tests.most_name);
	bench_count(b, "verifier: most insns processed, a tool or bench program", lib.most,
		    "insns", BENCH_AT_MOST, INSNS_LIMIT);
	if (tests.loaded)
		bench_count(b, "verifier: most insns processed, a test program", tests.most,
			    "insns", BENCH_NO_GOAL, 0);
	return 0;
}
