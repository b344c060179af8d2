// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * top_opens - the files opened most, per command, live, on every CPU.
 *
 *   top_opens [-n N] [-i SECONDS] [-x PATTERN]... -- COMMAND [ARG...]
 *
 * Attaches top_opens.bpf.c to the system-call entry tracepoint, runs
 * COMMAND, and every SECONDS prints the N (command, path) pairs opened
 * most, read through the arena's mmap while the tracing program counts.
 * Paths an exclude rule matches are not counted; lines on standard input
 * edit the rules while COMMAND runs ("+PATTERN", "-PATTERN"). At the end,
 * the last top N and what was seen, counted, excluded and lost.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>

/* The types of the program's arena globals, before the skeleton that names them. */
#include <arenakit/alloc.h>
#include <arenakit/htab_user.h>
#include <arenakit/ruleset_user.h>
#include <arenakit/user.h>
#include "top_opens.h"
#include "top_opens.skel.h"

#define PROG "top_opens"
#define TOP_MAX 100

static void usage(FILE *f)
{
	fprintf(f, "usage: " PROG " [-n N] [-i SECONDS] [-x PATTERN]... -- COMMAND [ARG...]\n"
		"Count the files opened on this machine (open(2) and openat(2) at system call\n"
		"entry, on every CPU) per command and path while COMMAND runs, and every SECONDS\n"
		"(default 1) print the N (default 10, at most %d) opened most. Paths matching an\n"
		"exclude rule (-x PATTERN: a glob, lib/glob.c's ? * [...] [!...] \\, of 1 to %d\n"
		"bytes) are not counted; while COMMAND runs (its standard input is /dev/null),\n"
		"lines on standard input edit the rules: +PATTERN adds one, -PATTERN deletes it.\n"
		"The table holds %d pairs; past that, the least used go. Paths over %d bytes are\n"
		"not counted.\n"
		"Exits with COMMAND's status, 1 if " PROG " itself failed, 2 on bad arguments.\n",
		TOP_MAX, AK_RULE_PATTERN_MAX - 1, TOP_OPENS_MAX_KEYS, TOP_OPENS_PATH - 1);
}

/* This tree's rule: load BPF only into the project's test kernel (see exec_glob.c). */
static int kernel_is_ours(void)
{
	struct utsname u;

	return !uname(&u) && strstr(u.release, "-arenakit");
}

struct entry {
	struct top_key key;
	unsigned long long n;
};

/*
 * The @want entries counted most, in @top, most first: one walk of the
 * table through the mmap, each entry copied under its bucket's lock, by
 * the walk that never goes stale (every pair counted throughout seen
 * once, however many the tracing program adds meanwhile). A busy lock is
 * waited out a while; a reseed (the table's defence against colliding
 * keys) begins the walk again. Returns how many, or a negative errno.
 */
static int read_top(struct ak_htab *counts, struct entry *top, int want)
{
	struct ak_htab_live_cursor c = {};
	struct entry e;
	int n = 0, i, err, tries = 0;

	while ((err = ak_htab_next_copy_live(counts, &c, &e.key, &e.n)) != -ENOENT) {
		if ((err == -AK_ESTALE || err == -EBUSY) && ++tries < 1000) {
			if (err == -AK_ESTALE)
				n = 0;	/* the cursor is reset: all again */
			else
				usleep(100);
			continue;
		}
		if (err)
			return err;
		for (i = n < want ? n++ : want; i > 0 && top[i - 1].n < e.n; i--)
			if (i < want)
				top[i] = top[i - 1];
		if (i < want)
			top[i] = e;
	}
	return n;
}

static int print_top(struct top_opens_bpf *skel, int want, const char *prefix)
{
	struct entry top[TOP_MAX];
	int n = read_top(&skel->arena->counts, top, want), i;

	if (n < 0)
		return n;
	for (i = 0; i < n; i++)
		printf("%s%8llu %-16s %s\n", prefix, top[i].n, top[i].key.comm, top[i].key.path);
	return 0;
}

struct edits {
	unsigned long long added, deleted, refused, failed;
};

/* Apply the whole lines of standard input read so far in @buf (*@len bytes). */
static void edit_lines(const struct ak_ruleset_progs *progs, char *buf, size_t *len, int last,
		       struct edits *e)
{
	char *line = buf, *end;
	const char *why;
	int err;

	while ((end = memchr(line, '\n', buf + *len - line)) || (last && line < buf + *len)) {
		if (end)
			*end = 0;
		else
			buf[*len] = 0;
		why = NULL;
		err = ak_ruleset_edit(progs, line, NULL, &why);
		if (err < 0) {
			fprintf(stderr, PROG ": edit '%s': %s\n", line, why ? why :
				err == -ENOENT ? "no such rule" : strerror(-err));
			*(why ? &e->refused : &e->failed) += 1;
		} else if (!err) {
			*(line[0] == '+' ? &e->added : &e->deleted) += 1;
		}
		line = end ? end + 1 : buf + *len;
	}
	*len -= line - buf;
	memmove(buf, line, *len);
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/*
 * Run COMMAND (its standard input /dev/null: the edits are ours); until it
 * exits, apply the edits on standard input and print the top every @every
 * seconds. Its exit status, or a negative errno.
 */
static int run(struct top_opens_bpf *skel, const struct ak_ruleset_progs *progs, char **argv,
	       double every, int want, struct edits *e)
{
	struct pollfd in = { .fd = STDIN_FILENO, .events = POLLIN };
	char buf[2 * AK_RULE_PATTERN_MAX + 1];
	double start = now(), next = start + every;
	int status, null, open_in = 1;
	size_t len = 0;
	ssize_t got;
	pid_t pid = fork(), done;

	if (pid < 0)
		return -errno;
	if (!pid) {
		null = open("/dev/null", O_RDONLY);
		if (null < 0 || dup2(null, STDIN_FILENO) < 0)
			_exit(127);
		execvp(argv[0], argv);
		fprintf(stderr, PROG ": %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	while (!(done = waitpid(pid, &status, WNOHANG))) {
		if (now() >= next) {
			printf("top at %.1f s: %llu opens, %llu counted, %llu excluded\n",
			       now() - start, skel->arena->stats.opens, skel->arena->stats.counted,
			       skel->arena->stats.excluded);
			print_top(skel, want, "  ");
			fflush(stdout);
			next += every;
		}
		if (poll(&in, open_in, 20) <= 0)
			continue;
		got = read(STDIN_FILENO, buf + len, sizeof(buf) - 1 - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			open_in = 0;	/* no more edits */
		else
			len += got;
		edit_lines(progs, buf, &len, !open_in, e);
		if (len == sizeof(buf) - 1) {
			fprintf(stderr, PROG ": an edit longer than %zu bytes: refused\n", len);
			e->refused++;
			len = 0;
		}
	}
	if (done < 0)
		return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Whether @pattern can be an exclude; if not, say why. */
static int valid_exclude(const char *pattern)
{
	unsigned long long at;
	int bad = ak_glob_valid(pattern, AK_RULE_PATTERN_MAX - 1, &at);

	if (bad)
		fprintf(stderr, PROG ": exclude '%s': %s (byte %llu; patterns are 1 to %d bytes)\n",
			pattern, ak_glob_invalid_reason(bad), at, AK_RULE_PATTERN_MAX - 1);
	return !bad;
}

int main(int argc, char **argv)
{
	struct top_opens_bpf *skel;
	struct ak_ruleset_progs progs;
	struct edits e = {};
	struct top_stats *st;
	double every = 1;
	int i, want = 10, err = 0, status, retval;
	char *end;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		}
		if (i + 1 >= argc || strlen(argv[i]) != 2 || !strchr("nix", argv[i][1]))
			goto bad;
		if (argv[i][1] == 'n') {
			want = strtol(argv[++i], &end, 10);
			if (*end || want < 1 || want > TOP_MAX)
				goto bad;
		} else if (argv[i][1] == 'i') {
			every = strtod(argv[++i], &end);
			if (*end || !(every >= 0.1 && every <= 3600))
				goto bad;
		} else if (!valid_exclude(argv[++i])) {
			return 2;	/* before a load of seconds, not after */
		}
	}
	if (i >= argc - 1)
		goto bad;
	if (!kernel_is_ours()) {
		fprintf(stderr, PROG ": refusing to load BPF: this is not the arenakit test "
			"kernel (run it in the VM: make vm CMD=...)\n");
		return 1;
	}
	skel = top_opens_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, PROG ": loading the BPF program: %s\n", strerror(errno));
		return 1;
	}
	progs = AK_RULESET_PROGS(skel, excludes);
	err = ak_run_until_done(skel->progs.setup, NULL, 0, 64, &retval, NULL) ?: retval;
	if (err) {
		fprintf(stderr, PROG ": setting up the table: %s\n", strerror(-err));
		goto out;
	}
	for (i = 1; i < argc && strcmp(argv[i], "--"); i += 2) {
		if (argv[i][1] != 'x')
			continue;
		err = ak_ruleset_add_rule(&progs, argv[i + 1], NULL);
		if (err) {
			fprintf(stderr, PROG ": exclude '%s': %s\n", argv[i + 1],
				err == -EINVAL ? "not a pattern of 1 to 127 bytes" : strerror(-err));
			top_opens_bpf__destroy(skel);
			return err == -EINVAL ? 2 : 1;
		}
	}
	err = top_opens_bpf__attach(skel);
	if (err) {
		fprintf(stderr, PROG ": attaching to sys_enter: %s\n", strerror(-err));
		goto out;
	}
	status = run(skel, &progs, argv + i + 1, every, want, &e);
	top_opens_bpf__detach(skel);
	if (status < 0) {
		err = status;
		fprintf(stderr, PROG ": running %s: %s\n", argv[i + 1], strerror(-err));
		goto out;
	}
	st = &skel->arena->stats;
	printf("final: %llu opens, %llu counted, %llu excluded, %llu paths too long, %llu not in "
	       "memory, %llu lost (%s); %llu pairs held, %llu evicted\n", st->opens, st->counted,
	       st->excluded, st->too_long, st->unreadable, st->lost,
	       st->lost ? strerror(-st->lost_err) : "none", skel->arena->counts.count,
	       skel->arena->counts.evicted);
	printf("edits: %llu added, %llu deleted, %llu refused, %llu failed\n", e.added, e.deleted,
	       e.refused, e.failed);
	err = print_top(skel, want, "top ");
	if (err)
		fprintf(stderr, PROG ": reading the table: %s\n", strerror(-err));
	ak_ruleset_reclaim_all(&progs, &skel->arena->excludes, 1000);
out:
	top_opens_bpf__destroy(skel);
	return err ? 1 : status;
bad:
	usage(stderr);
	return 2;
}
