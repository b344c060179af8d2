// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * `arenakit bench`: runs the benchmark sections in this process, prints a
 * table of medians and spreads and the ratios the project has targets for,
 * and writes every figure with the environment as JSON (and the series the
 * plots draw as gnuplot data) to an output directory.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <sys/utsname.h>
#include <bpf/bpf.h>

#include <arenakit/arena.h>
#include "bench.h"
#include "bench_report.h"
#include "clock.h"
#include "commands.h"
#include "kernel_features.h"
#include "loader.h"


static void cpu_model(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256], *colon;

	snprintf(buf, len, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "model name", 10) && (colon = strchr(line, ':'))) {
			snprintf(buf, len, "%s", colon + 2);
			buf[strcspn(buf, "\n")] = 0;
			break;
		}
	fclose(f);
}

/*
 * Nanoseconds the clock advances per instruction of a loop of two
 * instructions an iteration: 1.00 when the guest's clock counts
 * instructions (ICOUNT=1), whatever the host. A check on what run.sh says.
 */
static double spin_ns_per_insn(void)
{
	unsigned long n = 1UL << 24;
	unsigned long long start = monotonic_ns();

#if defined(__x86_64__)
	asm volatile("1: dec %0\n\tjnz 1b" : "+r"(n) : : "cc");
#elif defined(__aarch64__)
	asm volatile("1: subs %0, %0, #1\n\tb.ne 1b" : "+r"(n) : : "cc");
#else
	return 0;
#endif
	return (double)(monotonic_ns() - start) / (2.0 * (1UL << 24));
}

static void bench_env_read(struct bench_env *e)
{
	const char *icount = getenv("ARENAKIT_ICOUNT");
	struct utsname u;

	uname(&u);
	snprintf(e->kernel, sizeof(e->kernel), "%s", u.release);
	snprintf(e->arch, sizeof(e->arch), "%s", u.machine);
	cpu_model(e->cpu, sizeof(e->cpu));
	e->host_cpu = getenv("ARENAKIT_HOST_CPU");
	e->accel = getenv("ARENAKIT_ACCEL") ?: "none";
	e->vcpus = sysconf(_SC_NPROCESSORS_ONLN);
	e->icount = icount && *icount ? !strcmp(icount, "1") : -1;
	e->ns_per_insn = spin_ns_per_insn();
}

static void print_env(const struct bench_env *e)
{
	printf("kernel %s on %s, %ld CPUs online (the guest's), accelerator %s, ICOUNT=%s (the clock: "
	       "%.2f ns an instruction of a spin loop)\n", e->kernel, e->arch, e->vcpus, e->accel,
	       e->icount < 0 ? "? (not said)" : e->icount ? "1: times are guest instructions" : "0",
	       e->ns_per_insn);
	printf("guest CPU %s; host CPU %s\n", e->cpu, e->host_cpu ?: "not said");
	printf("compilers: %s; gcc %s\n", BENCH_BPF_CC, __VERSION__);
	if (e->icount == 1 && (e->ns_per_insn < 0.95 || e->ns_per_insn > 1.05))
		printf("WARNING: ICOUNT=1 said, yet the clock does not count instructions\n");
}

static const struct {
	const char *name;
	int (*run)(struct bench *b);
	const char *what;
} sections[] = {
	{ "walk", bench_loops_and_walks,
	  "empty loops and list walks per mechanism; BPF against native" },
	{ "frames", bench_frames,
	  "a call of a frame of 256 to 65,535 steps under the kernel's loop bound" },
	{ "htab", bench_htab, "arena hash table against BPF_MAP_TYPE_HASH" },
	{ "omap", bench_omap, "arena ordered map against bpf_rbtree_* and the arena htab" },
	{ "alloc", bench_alloc, "arenakit allocator against the selftests' page_frag one" },
	{ "glob", bench_glob, "glob matching: BPF, the same header native, fnmatch(3)" },
	{ "verifier", bench_verifier, "instructions the verifier processes per program" },
};

#define N_SECTIONS ARRAY_SIZE(sections)

static void usage(FILE *out)
{
	size_t i;

	fprintf(out,
		"usage: arenakit bench [--runs N] [--quick] [--out DIR] [--glob-input FILE]\n"
		"                      [--objects DIR] [--icount-results FILE] [SECTION...]\n\n"
		"Measure arenakit in this kernel, side by side, in one process: every case\n"
		"runs once to warm up, then N times (default 5), interleaved with the other\n"
		"cases of its section (the walk section's target cases also alone, each in a\n"
		"process of its own); the table gives median, min and max, then the ratios\n"
		"and figures the project has targets for, each with its verdict: met or\n"
		"missed only if the whole range of its runs is, else undecided. Under TCG\n"
		"absolute times are inflated; with ICOUNT=1 (bench/run.sh says so in\n"
		"ARENAKIT_ICOUNT) a ns is a guest instruction.\n"
		"Loads BPF: runs only on the arenakit kernel (make bench runs it in the VM).\n\n"
		"  --runs N     samples per case (1..%d)\n"
		"  --quick      small sizes only: checks that every case runs and answers right\n"
		"  --out DIR    write DIR/results.json (every sample, the environment) and\n"
		"               DIR/*.dat (the plotted series)\n"
		"  --glob-input FILE  the glob section's lines (default build/kernel-files.txt,\n"
		"               the kernel tree's file list that make bench writes)\n"
		"  --objects DIR  the verifier section also loads every DIR/*.bpf.o, program\n"
		"               by program (make bench: the guest tests' programs)\n"
		"  --icount-results FILE  results.json of a run with ICOUNT=1: each row's and\n"
		"               ratio's instruction figure printed beside its time (make bench)\n\n"
		"sections (default: all):\n", BENCH_MAX_RUNS);
	for (i = 0; i < N_SECTIONS; i++)
		fprintf(out, "  %-10s %s\n", sections[i].name, sections[i].what);
	fprintf(out, "\nExit status: 0; 1 if a case answered wrongly or a section could not\n"
		"run; 2 on bad usage. A missed target is reported, not an error.\n");
}

int cmd_bench(int argc, char **argv)
{
	struct bench b = { .runs = 5 };
	struct bench_env env;
	int want[N_SECTIONS] = {}, any = 0, failed = 0, err, i;
	size_t s;
	char started[32], why[256];
	time_t now = time(NULL);

	if (wants_help(argc, argv)) {
		usage(stdout);
		return 0;
	}
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--runs") && i + 1 < argc) {
			char *end;

			b.runs = strtol(argv[++i], &end, 10);
			if (*end || b.runs < 1 || b.runs > BENCH_MAX_RUNS) {
				fprintf(stderr, "arenakit bench: --runs takes 1..%d, not '%s'\n",
					BENCH_MAX_RUNS, argv[i]);
				return 2;
			}
		} else if (!strcmp(argv[i], "--quick")) {
			b.quick = 1;
		} else if (!strcmp(argv[i], "--out") && i + 1 < argc) {
			b.out_dir = argv[++i];
		} else if (!strcmp(argv[i], "--glob-input") && i + 1 < argc) {
			b.glob_input = argv[++i];
		} else if (!strcmp(argv[i], "--objects") && i + 1 < argc) {
			b.objects_dir = argv[++i];
		} else if (!strcmp(argv[i], "--icount-results") && i + 1 < argc) {
			b.icount_results = argv[++i];
		} else {
			for (s = 0; s < N_SECTIONS; s++)
				if (!strcmp(argv[i], sections[s].name))
					break;
			if (s == N_SECTIONS) {
				fprintf(stderr, "arenakit bench: unknown %s '%s'\n\n",
					argv[i][0] == '-' ? "option (or missing value)" : "section",
					argv[i]);
				usage(stderr);
				return 2;
			}
			want[s] = any = 1;
		}
	}
	if (arenakit_kernel_check(why, sizeof(why))) {
		fprintf(stderr, "arenakit bench: %s\n", why);
		return 1;
	}
	if (b.icount_results) {
		err = icount_load(b.icount_results);
		if (err) {
			fprintf(stderr, "arenakit bench: --icount-results %s: %s\n",
				b.icount_results, strerror(-err));
			return 1;
		}
	}
	bench_env_read(&env);
	b.icount = env.icount == 1;
	strftime(started, sizeof(started), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	for (s = 0; s < N_SECTIONS; s++) {
		if (any && !want[s])
			continue;
		fprintf(stderr, "arenakit bench: %s...\n", sections[s].name);
		err = sections[s].run(&b);
		if (err) {
			fprintf(stderr, "arenakit bench: section %s failed: %s\n",
				sections[s].name, strerror(-err));
			failed = 1;
		}
	}
	/* Times have an instruction count beside them; counts are the same in both runs. */
	for (i = 0; i < b.n_ratios; i++)
		if (b.ratios[i].timed || (b.ratios[i].unit && !strncmp(b.ratios[i].unit, "ns", 2)))
			b.ratios[i].insns = icount_find(b.ratios[i].what);
	printf("arenakit bench, %s, %d run%s per case\n", started, b.runs, b.runs > 1 ? "s" : "");
	print_env(&env);
	print_table(&b);
	if (b.out_dir) {
		err = write_json(&b, started, &env);
		if (!err)
			err = write_plot_data(&b);
		if (err) {
			fprintf(stderr, "arenakit bench: writing to %s: %s\n", b.out_dir,
				strerror(-err));
			failed = 1;
		}
	}
	if (b.wrong)
		fprintf(stderr, "arenakit bench: %d case(s) answered wrongly\n", b.wrong);
	for (i = 0; i < b.n_rows; i++)
		free(b.rows[i]);
	free(b.rows);
	free(b.ratios);
	bench_report_free();
	return failed || b.wrong ? 1 : 0;
}
