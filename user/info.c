// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* arenakit info: what this kernel offers arenakit. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <arenakit/arena.h>
#include "clock.h"
#include "commands.h"
#include "kernel_features.h"
#include <arenakit/user.h>
#include "loader.h"
#include "info.skel.h"

int wants_help(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return 1;
	return 0;
}

/*
 * Load and run the budget probe; 0 on success. @timed: the kernel bounds
 * a frame's loops by time, so the steps measured are what fit in it here.
 */
static int probe_budget(int timed)
{
	struct info *skel = info__open();
	double start, seconds;
	int err, retval;

	if (!skel) {
		fprintf(stderr, "arenakit info: cannot open the probe: %s\n", strerror(errno));
		return -errno;
	}
	err = arenakit_load_skeleton(skel->skeleton);
	if (err) {
		printf("may_goto:         no (the probe does not load: %s)\n", strerror(-err));
		goto out;
	}
	start = monotonic_seconds();
	err = ak_run(skel->progs.measure_budget, NULL, 0, &retval);
	seconds = monotonic_seconds() - start;
	if (err || retval) {
		fprintf(stderr, "arenakit info: the budget probe failed: %s, returned %d\n",
			strerror(-err), retval);
		err = err ? err : -EIO;
		goto out;
	}
	printf("may_goto:         yes\n");
	printf("loop budget:      %s%llu steps in a program's frame, %llu in a called function's\n",
	       timed ? "250 ms per frame, here " : "",
	       (unsigned long long)skel->bss->main_steps,
	       (unsigned long long)skel->bss->subprog_steps);
	printf("budget spent in:  %.1f ms for both (%.2f ns per step)\n", seconds * 1e3,
	       seconds * 1e9 / (skel->bss->main_steps + skel->bss->subprog_steps));
out:
	info__destroy(skel);
	return err;
}

/* The kernel changes of kernel/patches/, each probed by loading a program. */
static int print_features(void)
{
	static const char *const labels[ARENAKIT_FEATURES] = {
		[ARENAKIT_MAY_GOTO_ZERO] = "may_goto +0:",
		[ARENAKIT_TIMED_MAY_GOTO] = "timed may_goto:",
		[ARENAKIT_CAN_LOOP_KFUNC] = "bpf_can_loop():",
	};
	int f, has, err = 0;

	for (f = 0; f < ARENAKIT_FEATURES; f++) {
		has = arenakit_feature_probe(f);
		if (has < 0) {
			fprintf(stderr, "arenakit info: probing for %s failed: %s\n",
				arenakit_feature_name(f), strerror(-has));
			err = has;
			continue;
		}
		printf("%-18s%s (%s)\n", labels[f], has ? "yes" : "no", arenakit_feature_name(f));
	}
	return err;
}

/* Where tracefs is mounted: its events/ directory, or NULL. */
static const char *tracefs_events(void)
{
	static const char *const dirs[] = {
		"/sys/kernel/tracing/events", "/sys/kernel/debug/tracing/events",
	};
	struct stat st;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(dirs); i++)
		if (!stat(dirs[i], &st) && S_ISDIR(st.st_mode))
			return dirs[i];
	return NULL;
}

/*
 * The tracepoints a tracing program is most often attached to: a tp_btf
 * (or raw_tp) one exists if vmlinux's BTF has its btf_trace_ typedef; the
 * tp/syscalls/ ones need the kernel's syscall events (FTRACE_SYSCALLS),
 * which tracefs lists.
 */
static void print_attach_points(void)
{
	static const char *const raw[] = {
		"sys_enter", "sys_exit", "sched_process_exec", "sched_process_exit",
		"sched_switch",
	};
	const char *events = tracefs_events();
	struct btf *btf = btf__load_vmlinux_btf();
	char name[64], path[256];
	struct stat st;
	size_t i;

	printf("%-18s", "tp_btf/raw_tp:");
	for (i = 0; i < ARRAY_SIZE(raw); i++) {
		snprintf(name, sizeof(name), "btf_trace_%s", raw[i]);
		printf("%s%s %s", i ? ", " : "", raw[i], !btf ? "unknown (no vmlinux BTF)" :
		       btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF) > 0 ? "yes" : "no");
	}
	printf("\n");
	btf__free(btf);
	if (!events) {
		printf("tp/syscalls/*:    unknown (tracefs is not mounted: "
		       "mount -t tracefs tracefs /sys/kernel/tracing)\n");
		return;
	}
	snprintf(path, sizeof(path), "%s/syscalls", events);
	printf("tp/syscalls/*:    %s\n", !stat(path, &st) ? "yes" :
	       "no (no syscall events in tracefs: the kernel lacks FTRACE_SYSCALLS; "
	       "tp_btf/sys_enter sees every system call)");
}

int cmd_info(int argc, char **argv)
{
	const char *accel = getenv("ARENAKIT_ACCEL");
	struct utsname uts;
	struct stat btf;
	char why[512];
	int arena;

	if (wants_help(argc, argv)) {
		printf("usage: arenakit info\n\n"
		       "Print the kernel release, whether BTF, arena maps and may_goto are\n"
		       "available, which of the arenakit kernel changes it has (may_goto +0,\n"
		       "may_goto bounded by time, the bpf_can_loop() kfunc; each probed by\n"
		       "loading a program), the may_goto loop budget in force (measured), the\n"
		       "CPUs and the QEMU accelerator, and which common tracepoints a tracing\n"
		       "program can attach to (tp_btf/raw_tp from vmlinux's BTF, tp/syscalls\n"
		       "from tracefs). Loads BPF: runs only on the arenakit kernel.\n");
		return 0;
	}
	if (argc > 1) {
		fprintf(stderr, "arenakit info: takes no arguments\n");
		return 2;
	}
	uname(&uts);
	printf("kernel release:   %s\n", uts.release);
	printf("architecture:     %s\n", uts.machine);
	printf("BTF:              %s\n", stat("/sys/kernel/btf/vmlinux", &btf) ? "no" : "yes");
	printf("CPUs:             %ld online\n", sysconf(_SC_NPROCESSORS_ONLN));
	printf("accelerator:      %s\n", accel ? accel : "none (not in the arenakit VM)");
	if (arenakit_kernel_check(why, sizeof(why))) {
		fprintf(stderr, "arenakit info: %s\n", why);
		return 1;
	}
	print_attach_points();
	arena = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_ARENA, NULL);
	printf("arena maps:       %s\n", arena == 1 ? "yes" : arena == 0 ? "no" : strerror(-arena));
	if (print_features())
		return 1;
	return probe_budget(arenakit_feature_probe(ARENAKIT_TIMED_MAY_GOTO) == 1) ? 1 : 0;
}
