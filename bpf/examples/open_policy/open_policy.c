// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * open_policy - count the opens made while a command runs, by glob rules
 * matched in BPF on every CPU.
 *
 *   open_policy [-f FILE] [PATTERN...] -- COMMAND [ARG...]
 *
 * Puts the rules in an arenakit rule set, attaches open_policy.bpf.c to
 * the system-call entry tracepoint, runs COMMAND, and meanwhile applies
 * rule edits read from standard input ("+PATTERN" adds a rule, "-PATTERN"
 * deletes one: ruleset_user.h's edit lines). Then it walks the rules and
 * the (rule, command) counts through the arena's mmap, each entry copied
 * under its writers' lock, and prints them with what was seen and what was
 * lost.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
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
#include "open_policy.h"
#include "open_policy.skel.h"

#define PROG "open_policy"

static void usage(FILE *f)
{
	fprintf(f, "usage: " PROG " [-f FILE] [PATTERN...] -- COMMAND [ARG...]\n"
		"Count the open(2) and openat(2) calls made on this machine while COMMAND\n"
		"runs (at system call entry, so failed opens too; x86-64 system call numbers),\n"
		"per glob rule and per command name, matched in a BPF tracing program against\n"
		"every rule on every call; rules are glob patterns (lib/glob.c: ? * [...] [!...] \\)\n"
		"of 1 to %d bytes, from FILE (one a line; blank lines and lines starting with\n"
		"'#' skipped) and the arguments. While COMMAND runs (its standard input is\n"
		"/dev/null), lines on standard input edit the rules: +PATTERN adds one,\n"
		"-PATTERN deletes it.\n"
		"Exits with COMMAND's status, 1 if " PROG " itself failed, 2 on bad arguments\n"
		"or a bad rule.\n", AK_RULE_PATTERN_MAX - 1);
}

/* This tree's rule: load BPF only into the project's test kernel (see exec_glob.c). */
static int kernel_is_ours(void)
{
	struct utsname u;

	return !uname(&u) && strstr(u.release, "-arenakit");
}

/* Append the @size bytes at @e to the array *@all of *@n (room for *@cap). */
static int append(void **all, size_t *n, size_t *cap, const void *e, size_t size)
{
	void *more;

	if (*n == *cap) {
		more = realloc(*all, (*cap ? 2 * *cap : 256) * size);
		if (!more)
			return -ENOMEM;
		*all = more;
		*cap = *cap ? 2 * *cap : 256;
	}
	memcpy((char *)*all + (*n)++ * size, e, size);
	return 0;
}

struct rules {
	char **pattern;
	size_t n, max;
};

/* Check @pattern and keep it; 0, or 2 (refused, with a message). */
static int keep_rule(struct rules *rules, const char *pattern, const char *where)
{
	char *copy;
	unsigned long long at;
	int bad = ak_glob_valid(pattern, AK_RULE_PATTERN_MAX - 1, &at);

	if (bad) {
		fprintf(stderr, PROG ": %s: rule '%s': %s (byte %llu; rules are 1 to %d bytes)\n",
			where, pattern, ak_glob_invalid_reason(bad), at,
			AK_RULE_PATTERN_MAX - 1);
		return 2;
	}
	copy = strdup(pattern);
	if (!copy || append((void **)&rules->pattern, &rules->n, &rules->max, &copy,
			    sizeof(copy))) {
		free(copy);
		fprintf(stderr, PROG ": out of memory\n");
		return 1;
	}
	return 0;
}

static int read_rules_file(struct rules *rules, const char *file)
{
	char line[1024], where[1100];
	unsigned int lineno = 0;
	size_t len;
	int err = 0;
	FILE *f = fopen(file, "r");

	if (!f) {
		fprintf(stderr, PROG ": %s: %s\n", file, strerror(errno));
		return 2;
	}
	while (!err && fgets(line, sizeof(line), f)) {
		lineno++;
		len = strcspn(line, "\n");
		line[len] = 0;
		if (!len || line[0] == '#')
			continue;
		snprintf(where, sizeof(where), "%s:%u", file, lineno);
		err = keep_rule(rules, line, where);
	}
	fclose(f);
	return err;
}

struct edits {
	unsigned long long added, deleted, refused, failed, held;
	int overlong;	/* skipping the rest of a line too long to be an edit */
};

/* One line of standard input: +PATTERN or -PATTERN. */
static void edit(const struct ak_ruleset_progs *progs, char *line, struct edits *e)
{
	struct ak_rule_edit done;
	const char *why = NULL;
	int err = ak_ruleset_edit(progs, line, &done, &why);

	if (err == 1)
		return;	/* blank, or a comment, as in a rules file */
	if (err) {
		fprintf(stderr, PROG ": edit '%s': %s\n", line, why ? why :
			err == -ENOENT ? "no such rule" : strerror(-err));
		*(why ? &e->refused : &e->failed) += 1;
		return;
	}
	if (line[0] == '+') {
		e->added++;
	} else {
		e->deleted++;
		if (done.reclaimed == -EBUSY)
			e->held++;	/* readers were inside: a later reclaim frees it */
	}
}

/*
 * The complete lines in @buf (@*len bytes) as edits; a partial one is kept,
 * or, if it fills @buf, refused with what follows it up to its newline.
 */
static void edit_lines(const struct ak_ruleset_progs *progs, char *buf, size_t *len,
		       size_t size, int last, struct edits *e)
{
	char *line = buf, *end;

	while ((end = memchr(line, '\n', buf + *len - line)) || (last && line < buf + *len)) {
		if (end)
			*end = 0;
		else
			buf[*len] = 0;
		if (!e->overlong)
			edit(progs, line, e);
		e->overlong = 0;
		line = end ? end + 1 : buf + *len;
	}
	*len -= line - buf;
	memmove(buf, line, *len);
	if (*len == size - 1) {
		if (!e->overlong) {
			fprintf(stderr, PROG ": an edit longer than %zu bytes: refused\n", *len);
			e->refused++;
		}
		e->overlong = 1;
		*len = 0;
	}
}

/*
 * Run COMMAND, its standard input /dev/null (the edits are ours); apply the
 * edits on standard input until it exits.
 */
static int run_command(const struct ak_ruleset_progs *progs, char **argv, struct edits *e)
{
	struct pollfd in = { .fd = STDIN_FILENO, .events = POLLIN };
	char buf[2 * AK_RULE_PATTERN_MAX + 1];
	int status, null, open_in = 1;
	size_t len = 0;
	ssize_t n;
	pid_t pid = fork(), done;

	if (pid < 0)
		return -errno;
	if (!pid) {
		null = open("/dev/null", O_RDONLY);
		if (null < 0 || dup2(null, STDIN_FILENO) < 0) {
			fprintf(stderr, PROG ": /dev/null: %s\n", strerror(errno));
			_exit(127);
		}
		execvp(argv[0], argv);
		fprintf(stderr, PROG ": %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	while (!(done = waitpid(pid, &status, open_in ? WNOHANG : 0))) {
		if (poll(&in, 1, 20) <= 0)
			continue;
		n = read(STDIN_FILENO, buf + len, sizeof(buf) - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			fprintf(stderr, PROG ": reading the edits: %s; no more edits\n",
				strerror(errno));
		if (n <= 0) {
			open_in = 0;	/* the end of the edits */
			n = 0;
		}
		len += n;
		edit_lines(progs, buf, &len, sizeof(buf), !open_in, e);
	}
	if (done < 0)
		return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

struct count {
	struct open_key key;
	unsigned long long n;
};

/* The entries a walk through the mmap copied, kept as they come. */
struct copies {
	void *all;
	size_t n, cap;
	int tries;
};

/*
 * Keep what one step of a copying walk answered: 1 to take the next step,
 * 0 at the end, or an error. A busy lock means later, and a stale walk
 * begins again, dropping what it kept; each for a while, a pause between.
 */
static int keep_copy(struct copies *c, int err, const void *e, size_t size)
{
	if (err == -ENOENT)
		return 0;
	if ((err == -EBUSY || err == -AK_ESTALE) && ++c->tries <= 1000) {
		if (err == -AK_ESTALE)
			c->n = 0;
		usleep(1000);
		return 1;
	}
	return err ?: append(&c->all, &c->n, &c->cap, e, size) ?: 1;
}

/*
 * The counts per (rule, command), then each rule that matched with its
 * total: the table and the rules are each read whole before printing.
 */
static int print_counts_and_rules(struct open_policy_bpf *skel)
{
	struct ak_ruleset *set = &skel->arena->rules;
	unsigned int ids = set->next_id;
	unsigned long long *by_rule = calloc(ids + 1, sizeof(*by_rule)), silent = 0;
	struct copies counts = {}, rules = {};
	struct ak_htab_cursor table_cursor = {};
	struct ak_list_cursor list_cursor = {};
	struct count e, *cs;
	struct ak_rule r, *rs;
	size_t i;
	int err = by_rule ? 1 : -ENOMEM;

	while (err == 1)
		err = keep_copy(&counts, ak_htab_next_copy(&skel->arena->counts, &table_cursor,
							   &e.key, &e.n), &e, sizeof(e));
	err = err ?: 1;	/* the table read whole: now the rules */
	while (err == 1)
		err = keep_copy(&rules, ak_ruleset_next_copy(set, &list_cursor, &r), &r,
				sizeof(r));
	cs = counts.all;
	rs = rules.all;
	for (i = 0; !err && i < counts.n; i++) {
		printf("count rule %u %-16s %llu\n", cs[i].key.rule, cs[i].key.comm, cs[i].n);
		if (cs[i].key.rule < ids)
			by_rule[cs[i].key.rule] += cs[i].n;
	}
	for (i = 0; !err && i < rules.n; i++) {
		if (rs[i].id < ids && by_rule[rs[i].id])
			printf("rule %u %-32s %llu\n", rs[i].id, rs[i].pattern, by_rule[rs[i].id]);
		else
			silent++;
	}
	if (!err)
		printf("rules: %zu, %llu of them matched nothing\n", rules.n, silent);
	free(rules.all);
	free(counts.all);
	free(by_rule);
	return err;
}

static int report(struct open_policy_bpf *skel, const struct edits *e, unsigned long long freed,
		  unsigned long long waiting)
{
	struct open_stats *p = &skel->arena->stats;

	printf("opens seen: %llu, matched against every rule: %llu (%llu while the rules were "
	       "edited), lost: %llu (%llu walks cut by the loop budget, %llu broken links)\n",
	       p->opens, p->matched, p->matched_in_edit, p->lost_budget + p->lost_fault,
	       p->lost_budget, p->lost_fault);
	printf("not matched: %llu paths over %d bytes, %llu not in memory; "
	       "%llu matches the table could not count (%s)\n", p->too_long,
	       AK_GLOB_SUBJECT_MAX - 1, p->unreadable, p->dropped,
	       p->dropped ? strerror(-p->dropped_err) : "none");
	printf("edits while the command ran: %llu rules added, %llu deleted, %llu refused, "
	       "%llu failed; %llu reclaims found readers inside; %llu deleted rules freed, %llu "
	       "waiting for readers\n", e->added, e->deleted, e->refused, e->failed, e->held,
	       freed, waiting);
	return print_counts_and_rules(skel);
}

static int add_rules(const struct ak_ruleset_progs *progs, const struct rules *rules)
{
	size_t i;
	int err;

	for (i = 0; i < rules->n; i++) {
		err = ak_ruleset_add_rule(progs, rules->pattern[i], NULL);
		if (err) {
			fprintf(stderr, PROG ": adding rule '%s': %s\n", rules->pattern[i],
				strerror(-err));
			return err;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct rules rules = {};
	struct edits e = {};
	struct open_policy_bpf *skel;
	struct ak_ruleset_progs progs;
	unsigned long long waiting;
	int i, err = 0, status = 0, retval;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(argv[i], "-f")) {
			if (++i == argc) {
				usage(stderr);
				status = 2;
				goto free_rules;
			}
			status = read_rules_file(&rules, argv[i]);
		} else {
			status = keep_rule(&rules, argv[i], "argument");
		}
		if (status)
			goto free_rules;
	}
	if (i >= argc - 1 || !rules.n) {
		fprintf(stderr, PROG ": %s\n", !rules.n ? "no rule given" : "no command given");
		usage(stderr);
		status = 2;
		goto free_rules;
	}
	if (!kernel_is_ours()) {
		fprintf(stderr, PROG ": refusing to load BPF: this is not the arenakit test "
			"kernel (run it in the VM: make vm CMD=...)\n");
		status = 1;
		goto free_rules;
	}

	skel = open_policy_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, PROG ": loading the BPF program: %s\n", strerror(errno));
		status = 1;
		goto free_rules;
	}
	err = ak_run_until_done(skel->progs.setup, NULL, 0, 64, &retval, NULL) ?: retval;
	if (err) {
		fprintf(stderr, PROG ": setting up the table: %s\n", strerror(-err));
		goto out;
	}
	progs = AK_RULESET_PROGS(skel, rules);
	err = add_rules(&progs, &rules);
	if (err)
		goto out;
	err = open_policy_bpf__attach(skel);
	if (err) {
		fprintf(stderr, PROG ": attaching to sys_enter: %s\n", strerror(-err));
		goto out;
	}
	status = run_command(&progs, argv + i + 1, &e);
	open_policy_bpf__detach(skel);
	if (status < 0) {
		err = status;
		fprintf(stderr, PROG ": running %s: %s\n", argv[i + 1], strerror(-err));
		goto out;
	}
	if (status)
		fprintf(stderr, PROG ": %s exited with status %d\n", argv[i + 1], status);
	/*
	 * Free every deleted rule. After the detach no new reader comes, but
	 * one already inside may still be: a reclaim waits until it leaves.
	 * What was deleted and is not waiting any more was freed.
	 */
	waiting = ak_ruleset_reclaim_all(&progs, &skel->arena->rules, 1000);
	err = report(skel, &e, e.deleted - waiting, waiting);
	if (err)
		fprintf(stderr, PROG ": reading the counts: %s\n", strerror(-err));
out:
	open_policy_bpf__destroy(skel);
	if (err)
		status = 1;
free_rules:
	while (rules.n)
		free(rules.pattern[--rules.n]);
	free(rules.pattern);
	return status;
}
