// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * exec_glob - count the programs a command runs, by glob rules, in BPF.
 *
 *   exec_glob PATTERN... -- COMMAND [ARG...]
 *
 * Adds the patterns to a rule set in the arena, attaches exec_glob.bpf.c to the exec
 * tracepoint, runs COMMAND, detaches, and prints what the tracing program
 * counted, read through the arena's mmap: hits per rule, then per
 * executable (base name) and rule, walking the arena hash table.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>

/* The types of the program's arena globals, before the skeleton that names them. */
#include <arenakit/alloc.h>
#include <arenakit/glob.h>
#include <arenakit/htab_user.h>
#include <arenakit/ruleset_user.h>
#include <arenakit/user.h>
#include "exec_glob.h"
#include "exec_glob.skel.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: exec_glob PATTERN... -- COMMAND [ARG...]\n"
		"Count the programs COMMAND executes (and their children) whose file name\n"
		"matches each glob PATTERN (lib/glob.c rules: ? * [...] [!...] \\), in a BPF\n"
		"tracing program; up to %d patterns of up to %d bytes. Exits with COMMAND's\n"
		"status, 1 if exec_glob itself failed, 2 on bad arguments.\n",
		EXEC_GLOB_RULES, AK_RULE_PATTERN_MAX - 1);
}

/*
 * This example's own rule, as for everything in the arenakit tree: load BPF
 * only into the project's test kernel (a program you copy from here would
 * drop this check).
 */
static int kernel_is_ours(void)
{
	struct utsname u;

	/* 6.12.118-arenakit, or -arenakit-stock for the unpatched one */
	return !uname(&u) && strstr(u.release, "-arenakit");
}

/* The setup program, run again while its budget cuts it (user.h). */
static int run_setup(struct exec_glob_bpf *skel)
{
	int retval, err = ak_run_until_done(skel->progs.setup, NULL, 0, 64, &retval, NULL);

	return err ? err : retval;
}

static int run_command(char **argv)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (!pid) {
		execvp(argv[0], argv);
		fprintf(stderr, "exec_glob: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Walk the table through the mmap: each entry copied under its bucket's lock. */
static int report_table(struct exec_glob_bpf *skel)
{
	struct ak_htab_cursor c = {};
	struct exec_key key;
	unsigned long long n;
	int err, tries = 0;

	/* Nothing writes the table now: a retry would be a growth's end (-EBUSY). */
	while ((err = ak_htab_next_copy(&skel->arena->counts, &c, &key, &n)) != -ENOENT) {
		if ((err == -EBUSY || err == -AK_ESTALE) && ++tries < 1000)
			continue;
		if (err)
			return err;
		printf("exe %-24s rule %u %llu\n", key.exe, key.rule, n);
	}
	return 0;
}

static int report(struct exec_glob_bpf *skel)
{
	struct exec_glob *eg = &skel->arena->eg;
	struct ak_list_cursor c = {};
	struct ak_rule r;
	int err;

	/* Nothing edits the rules now: each is read once, in order. */
	printf("execs seen: %llu\n", eg->execs);
	while (!(err = ak_ruleset_next_copy(&skel->arena->rules, &c, &r)))
		printf("rule %u %-24s %llu\n", r.id, r.pattern, eg->hits[r.id % EXEC_GLOB_RULES]);
	if (err != -ENOENT)
		return err;
	if (eg->dropped || eg->cut || eg->too_long)
		printf("not counted: %llu hits the table refused (%d keys at most), "
		       "%llu matches the budget cut, %llu file names over %d bytes\n",
		       eg->dropped, EXEC_GLOB_KEYS, eg->cut, eg->too_long, AK_GLOB_SUBJECT_MAX - 1);
	return report_table(skel);
}

int main(int argc, char **argv)
{
	struct exec_glob_bpf *skel;
	struct ak_ruleset_progs progs;
	int npatterns, i, err, status = 0;

	for (npatterns = 1; npatterns < argc && strcmp(argv[npatterns], "--"); npatterns++)
		if (!strcmp(argv[npatterns], "-h") || !strcmp(argv[npatterns], "--help")) {
			usage(stdout);
			return 0;
		}
	if (npatterns == 1 || npatterns >= argc - 1) {
		usage(stderr);
		return 2;
	}
	npatterns--;
	if (npatterns > EXEC_GLOB_RULES) {
		fprintf(stderr, "exec_glob: %d patterns; at most %d\n", npatterns, EXEC_GLOB_RULES);
		return 2;
	}
	for (i = 1; i <= npatterns; i++) {
		unsigned long long at;
		int bad = ak_glob_valid(argv[i], AK_RULE_PATTERN_MAX - 1, &at);

		if (bad) {
			fprintf(stderr, "exec_glob: pattern '%s': %s (byte %llu; patterns are 1 "
				"to %d bytes)\n", argv[i], ak_glob_invalid_reason(bad), at,
				AK_RULE_PATTERN_MAX - 1);
			return 2;
		}
	}
	if (!kernel_is_ours()) {
		fprintf(stderr, "exec_glob: refusing to load BPF: this is not the arenakit "
			"test kernel (run it in the VM: make vm CMD=...)\n");
		return 1;
	}

	skel = exec_glob_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "exec_glob: loading the BPF program: %s\n", strerror(errno));
		return 1;
	}
	err = run_setup(skel);
	if (err) {
		fprintf(stderr, "exec_glob: setting up the table: %s\n", strerror(-err));
		goto out;
	}
	progs = AK_RULESET_PROGS(skel, rules);
	for (i = 0; i < npatterns && !err; i++)
		err = ak_ruleset_add_rule(&progs, argv[1 + i], NULL);	/* ids 0, 1, ... */
	if (err) {
		fprintf(stderr, "exec_glob: adding pattern '%s': %s\n", argv[i], strerror(-err));
		goto out;
	}

	err = exec_glob_bpf__attach(skel);
	if (err) {
		fprintf(stderr, "exec_glob: attaching to the exec tracepoint: %s\n",
			strerror(-err));
		goto out;
	}
	status = run_command(argv + npatterns + 2);
	exec_glob_bpf__detach(skel);
	if (status < 0) {
		err = status;
		fprintf(stderr, "exec_glob: running %s: %s\n", argv[npatterns + 2],
			strerror(-err));
		goto out;
	}
	if (status)
		fprintf(stderr, "exec_glob: %s exited with status %d\n", argv[npatterns + 2],
			status);
	err = report(skel);
	if (err)
		fprintf(stderr, "exec_glob: reading the table: %s\n", strerror(-err));
out:
	exec_glob_bpf__destroy(skel);
	/* As strace and time do: the command's own status once it ran. */
	return err ? 1 : status;
}
