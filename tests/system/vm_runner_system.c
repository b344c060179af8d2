// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * kernel/vm's contract, checked by booting the guest (no BPF involved): the
 * command's exit status comes back, stdout and stderr stay apart, a kernel
 * warning in the guest log fails the run, and a hung guest is killed.
 *
 * A system test (tests/system/ checks the machinery around the library by
 * running what make and users run): it boots the VM, and runs the built
 * tool there for arenakit info; BPF loads only in the guest.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <criterion/criterion.h>

#include <arenakit/arena.h>

struct vm_result {
	int status;
	char out[4096];
	char err[8192];
};

static void read_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, len - 1, f) : 0;

	buf[n] = '\0';
	if (f)
		fclose(f);
}

/* Run kernel/vm with @env prepended, capturing both streams. */
static void run_vm(const char *env, const char *command, struct vm_result *r)
{
	char out[] = "/tmp/vm_runner_out.XXXXXX", err[] = "/tmp/vm_runner_err.XXXXXX";
	char line[1024];
	int status;

	cr_assert_neq(mkstemp(out), -1);
	cr_assert_neq(mkstemp(err), -1);
	snprintf(line, sizeof(line), "%s kernel/vm '%s' > %s 2> %s", env, command, out, err);
	status = system(line);
	cr_assert(WIFEXITED(status), "kernel/vm did not exit");
	r->status = WEXITSTATUS(status);
	read_file(out, r->out, sizeof(r->out));
	read_file(err, r->err, sizeof(r->err));
	unlink(out);
	unlink(err);
}

Test(vm_runner, returns_status_and_separates_streams, .timeout = 120)
{
	struct vm_result r;

	run_vm("", "echo to-out; echo to-err >&2; uname -r; exit 7", &r);
	cr_expect_eq(r.status, 7, "status %d; stderr:\n%s", r.status, r.err);
	cr_expect(strstr(r.out, "to-out\n"), "stdout: %s", r.out);
	cr_expect(strstr(r.out, "-arenakit"), "the guest kernel is not ours: %s", r.out);
	cr_expect_null(strstr(r.out, "to-err"), "stderr leaked into stdout: %s", r.out);
	cr_expect(strstr(r.err, "to-err\n"), "stderr: %s", r.err);
}

Test(vm_runner, kernel_warning_fails_the_run, .timeout = 120)
{
	struct vm_result r;

	/* Lines in the kernel log, as a real WARN_ON would leave them. */
	run_vm("", "echo \"WARNING: CPU: 0 PID: 1 at vm_runner_test\" > /dev/kmsg; "
	       "echo \"RIP: 0010:bpf_prog_0123456789abcdef_vm_runner_prog\" > /dev/kmsg", &r);
	cr_expect_neq(r.status, 0, "a guest kernel warning did not fail the run");
	cr_expect(strstr(r.err, "vm_runner_test"), "the warning is not shown: %s", r.err);
	/* The report's lines after it, which name the culprit, are shown too. */
	cr_expect(strstr(r.err, "vm_runner_prog"), "the report is not shown whole: %s", r.err);
}

Test(vm_runner, hung_guest_is_killed, .timeout = 120)
{
	struct vm_result r;

	run_vm("VM_TIMEOUT=8", "sleep 600", &r);
	cr_expect_eq(r.status, 124, "status %d", r.status);
	cr_expect(strstr(r.err, "did not finish within 8 s"), "stderr: %s", r.err);
}

/* Is a patch whose file name starts with @prefix in kernel/patches/series? */
static int in_series(const char *prefix)
{
	char line[256];
	FILE *series = fopen("kernel/patches/series", "r");
	int found = 0;

	cr_assert(series, "kernel/patches/series is missing");
	while (fgets(line, sizeof(line), series))
		found |= !strncmp(line, prefix, strlen(prefix));
	fclose(series);
	return found;
}

/*
 * arenakit info probes each kernel change by loading a program: the
 * default kernel has every patch of the series, KERNEL=stock none.
 */
Test(vm_runner, info_names_the_kernel_changes, .timeout = 120)
{
	static const struct {
		const char *label, *patch;
	} changes[] = {
		{ "may_goto +0:", "0001-" },
		{ "timed may_goto:", "0004-" },	/* 0003, and x86-64's half */
		{ "bpf_can_loop():", "0005-" },
	};
	const char *kernel = getenv("KERNEL");
	int stock = kernel && !strcmp(kernel, "stock");
	struct vm_result r;
	char want[64];
	size_t i;

	run_vm("", "build/arenakit info", &r);
	cr_assert_eq(r.status, 0, "arenakit info failed: %s", r.err);
	for (i = 0; i < ARRAY_SIZE(changes); i++) {
		const char *line = strstr(r.out, changes[i].label);
		int has = !stock && in_series(changes[i].patch);

		cr_assert(line, "no \"%s\" line:\n%s", changes[i].label, r.out);
		snprintf(want, sizeof(want), "%-18s%s", changes[i].label, has ? "yes" : "no");
		cr_expect(!strncmp(line, want, strlen(want)), "want \"%s\", got:\n%s", want, r.out);
	}	/*
	 * The attach points a tracing tool asks about: kernel/config has
	 * tracepoints but not FTRACE_SYSCALLS, so tp_btf/sys_enter is there and
	 * tp/syscalls/ is not.
	 */
	cr_expect(strstr(r.out, "sys_enter yes"), "tp_btf/sys_enter:\n%s", r.out);
	cr_expect(strstr(r.out, "sched_process_exec yes"), "sched_process_exec:\n%s", r.out);
	cr_expect(strstr(r.out, "tp/syscalls/*:    no"), "tp/syscalls:\n%s", r.out);
}
