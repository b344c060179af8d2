/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * `arenakit bench`'s report (bench_report.c), for the command (bench.c).
 */
#ifndef ARENAKIT_BENCH_REPORT_H
#define ARENAKIT_BENCH_REPORT_H

#include "bench.h"

/* The BPF compiler the objects were built with (the Makefile says). */
#ifndef BENCH_BPF_CC
#define BENCH_BPF_CC "unknown"
#endif

/*
 * What this run ran on, read in the run (the guest's /proc and uname, the
 * online CPUs), and what bench/run.sh passes in from outside it: the
 * accelerator, ICOUNT, the host's CPU model.
 */
struct bench_env {
	char kernel[65];
	char arch[65];		/* uname's machine: x86_64, aarch64 */
	char cpu[128];
	const char *host_cpu;
	const char *accel;
	long vcpus;
	int icount;		/* 1: ICOUNT=1, 0: not, -1: not said */
	double ns_per_insn;	/* the guest clock over a spin loop; 0: not measured */
};

/* The ICOUNT=1 run's results at @path, for icount_find: 0 or -errno. */
int icount_load(const char *path);
/* A figure's instructions by its key, or 0 if the run had none. */
double icount_find(const char *key);
void print_table(struct bench *b);
int write_json(struct bench *b, const char *started, const struct bench_env *e);
int write_plot_data(struct bench *b);
void bench_report_free(void);

#endif
