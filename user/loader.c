// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#define _GNU_SOURCE	/* sched_setaffinity */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <bpf/bpf.h>
#include <arenakit/user.h>

#include "loader.h"

#define LOG_TAIL_LINES 25

/* libbpf's messages since the last load began. */
static struct {
	char *text;
	size_t len, cap;
} captured;

/* NULL until set: stderr is not a constant initialiser. */
static FILE *report_stream;
static int report_muted;

static void capture(const char *fmt, va_list ap)
{
	va_list again;
	int need;

	va_copy(again, ap);
	need = vsnprintf(NULL, 0, fmt, again);
	va_end(again);
	if (need <= 0)
		return;
	if (captured.len + need + 1 > captured.cap) {
		size_t cap = (captured.len + need + 1) * 2;
		char *text = realloc(captured.text, cap);

		if (!text)
			return;	/* keep what we have; the log is a diagnostic */
		captured.text = text;
		captured.cap = cap;
	}
	vsnprintf(captured.text + captured.len, need + 1, fmt, ap);
	captured.len += need;
}

static int libbpf_printer(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	va_list copy;

	if (getenv("ARENAKIT_DEBUG")) {
		va_copy(copy, ap);
		vfprintf(stderr, fmt, copy);
		va_end(copy);
	}
	if (level != LIBBPF_DEBUG)
		capture(fmt, ap);
	return 0;
}

static void capture_start(void)
{
	libbpf_set_print(libbpf_printer);
	captured.len = 0;
	if (captured.text)
		captured.text[0] = '\0';
}

const char *arenakit_load_log(void)
{
	return captured.text ? captured.text : "";
}

void arenakit_set_report_stream(FILE *stream)
{
	report_stream = stream;
	report_muted = !stream;
}

int arenakit_kernel_check(char *why, size_t why_len)
{
	struct utsname uts;

	if (uname(&uts)) {
		if (why)
			snprintf(why, why_len, "uname: %s", strerror(errno));
		return -errno;
	}
	if (strstr(uts.release, ARENAKIT_RELEASE_MARK))
		return ak_cpu_check(why, why_len);
	if (why)
		snprintf(why, why_len,
			 "refusing to load BPF: the running kernel (%s) is not the arenakit "
			 "kernel (its release lacks \"%s\"); run this inside the VM, e.g. "
			 "'make vm CMD=...'",
			 uts.release, ARENAKIT_RELEASE_MARK);
	return -EPERM;
}

static int refuse_unless_ours(void)
{
	char why[512];
	int err = arenakit_kernel_check(why, sizeof(why));

	if (err)
		fprintf(stderr, "arenakit: %s\n", why);
	return err;
}

/* Print what libbpf said, the verifier log cut to its last lines. */
static void report_failure(const char *what, int err)
{
	FILE *out = report_stream ? report_stream : stderr;
	const char *begin_mark = "-- BEGIN PROG LOAD LOG --\n";
	const char *log = arenakit_load_log();
	const char *begin = strstr(log, begin_mark);
	const char *end, *tail;

	if (report_muted)
		return;
	fprintf(out, "arenakit: loading %s failed: %s\n", what, strerror(-err));
	if (!begin) {
		fputs(log, out);
		return;
	}
	fwrite(log, 1, begin - log, out);
	begin += strlen(begin_mark);
	end = strstr(begin, "-- END PROG LOAD LOG --");
	if (!end)
		end = log + strlen(log);
	tail = ak_verifier_log_tail(begin, end - begin, LOG_TAIL_LINES);
	fprintf(out, "arenakit: the verifier said (last %d lines):\n", LOG_TAIL_LINES);
	fwrite(tail, 1, end - tail, out);
	fputs(end + strcspn(end, "\n") + (*end ? 1 : 0), out);
}

/* Begin a load: the kernel check, then capture libbpf's messages. */
static int load_start(void)
{
	int err = refuse_unless_ours();

	if (!err)
		capture_start();
	return err;
}

/* End a load: report a failure with the verifier's log. */
static int load_end(const char *what, int err)
{
	if (err)
		report_failure(what, err);
	return err;
}

int arenakit_load_skeleton(struct bpf_object_skeleton *skeleton)
{
	int err = load_start();

	return err ? err : load_end(skeleton->name, bpf_object__load_skeleton(skeleton));
}

int arenakit_load_object(struct bpf_object *obj)
{
	int err = load_start();

	return err ? err : load_end(bpf_object__name(obj), bpf_object__load(obj));
}

int arenakit_load_insns(const char *name, const struct bpf_insn *insns, size_t count,
			char *log, size_t log_size)
{
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .log_buf = log, .log_size = log_size,
		    .log_level = log ? 1 : 0, .prog_flags = BPF_F_SLEEPABLE);
	int err = refuse_unless_ours();
	int fd;

	if (err)
		return err;
	if (log && log_size)
		log[0] = 0;
	fd = bpf_prog_load(BPF_PROG_TYPE_SYSCALL, name, "GPL", insns, count, &opts);
	return fd < 0 ? -errno : fd;
}

int arenakit_pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}
