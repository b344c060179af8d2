// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Read-mostly data read on every CPU: 10,000 glob rules in an arena list,
 * matched on every openat(2) of the test's threads on 2 and then 4 CPUs,
 * while a writer on another thread adds and deletes rules and reclaims what
 * it deleted. Read under the writers' lock, as a list had to be read before
 * rculist.h, events are lost (a CPU whose wait for the lock runs out gives
 * up); read in a read section, none may be.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "guest/guest.h"
#include <arenakit/list_user.h>
#include <arenakit/rculist.h>
#include "guest/rculist_shared.h"
#include "rculist.skel.h"

#define FILLER_RULES 10000
#define OPENS_PER_CPU 100

struct opener {
	int cpu, err;
	unsigned int opens;
};

struct writer {
	struct rculist *skel;
	int cpu, err, stop;
	unsigned int pairs;		/* rules added and deleted */
	unsigned int reclaims_held;	/* reclaims that found readers inside */
	unsigned int busy;		/* -EBUSY from the lock, tried again */
	unsigned long long freed;
};

static int run_rule_prog(const struct bpf_program *prog, struct rcu_rule_args *a)
{
	int retval, err = ak_run(prog, a, sizeof(*a), &retval);

	return err ? err : retval;
}

static void add_rule(struct rculist *skel, const char *pattern, int head)
{
	struct rcu_rule_args a = { .head = head };

	snprintf(a.pattern, sizeof(a.pattern), "%s", pattern);
	cr_assert_eq(run_rule_prog(skel->progs.add_rule, &a), 0, "add_rule %s", pattern);
}

static void *open_paths(void *arg)
{
	struct opener *o = arg;
	char path[64];
	unsigned int i;
	int fd;

	o->err = arenakit_pin_to_cpu(o->cpu);
	for (i = 0; !o->err && i < OPENS_PER_CPU; i++) {
		snprintf(path, sizeof(path), RCU_PREFIX "cpu%d-%u", o->cpu, i);
		fd = open(path, O_RDONLY);	/* absent: the event is the call */
		if (fd >= 0)
			close(fd);
		o->opens++;
	}
	return NULL;
}

/* Locked readers hold the lock through a whole walk: the writer waits them out. */
static int run_until_not_busy(struct writer *w, const struct bpf_program *prog,
			      struct rcu_rule_args *a)
{
	int err;

	while ((err = run_rule_prog(prog, a)) == -EBUSY)
		w->busy++;
	return err;
}

/* Add a rule first in the list and delete it again, until told to stop. */
static void *churn_rules(void *arg)
{
	struct writer *w = arg;
	struct rcu_rule_args a;

	w->err = arenakit_pin_to_cpu(w->cpu);
	while (!w->err && !__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE)) {
		memset(&a, 0, sizeof(a));
		snprintf(a.pattern, sizeof(a.pattern), "/tmp/akrcu-churn-%d-%u/*", w->cpu,
			 w->pairs);
		a.head = w->pairs & 1;
		w->err = run_until_not_busy(w, w->skel->progs.add_rule, &a);
		if (!w->err)
			w->err = run_until_not_busy(w, w->skel->progs.del_rule, &a);
		if (w->err)
			break;
		if (a.reclaimed == -EBUSY)
			w->reclaims_held++;
		else if (a.reclaimed > 0)
			w->freed += a.reclaimed;
		else if (a.reclaimed < 0)
			w->err = a.reclaimed;
		w->pairs++;
	}
	return NULL;
}

struct round {
	struct rcu_counts counts;
	struct writer writer;
	unsigned int opens;
	double seconds;
};

/* One round: @cpus CPUs open paths while the writer churns on the last CPU. */
static struct round run_round(struct rculist *skel, int cpus, int locked)
{
	struct opener o[4] = {};
	pthread_t tid[4], wtid;
	struct round r = { .writer = { .skel = skel, .cpu = 3 } };
	struct timespec t0, t1;
	int i;

	memset(&skel->bss->counts, 0, sizeof(skel->bss->counts));
	skel->bss->locked_readers = locked;
	cr_assert_eq(pthread_create(&wtid, NULL, churn_rules, &r.writer), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < cpus; i++) {
		o[i].cpu = i;
		cr_assert_eq(pthread_create(&tid[i], NULL, open_paths, &o[i]), 0);
	}
	for (i = 0; i < cpus; i++) {
		pthread_join(tid[i], NULL);
		cr_assert_eq(o[i].err, 0, "opener on CPU %d: %d", i, o[i].err);
		r.opens += o[i].opens;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	__atomic_store_n(&r.writer.stop, 1, __ATOMIC_RELEASE);
	pthread_join(wtid, NULL);
	cr_assert_eq(r.writer.err, 0, "writer: %d", r.writer.err);
	r.counts = skel->bss->counts;
	r.seconds = t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("rculist: %s readers, %d CPUs, %u rules: %u opens, %llu events, %llu matched "
	       "whole, lost %llu (%llu lock busy, %llu budget, %llu other); writer: %u rules "
	       "added and deleted, %u lock waits ran out, %u reclaims waited for readers, "
	       "%llu freed; %.1f s\n",
	       locked ? "locked" : "read-section", cpus, FILLER_RULES + 1, r.opens,
	       r.counts.events, r.counts.walked,
	       r.counts.lost_busy + r.counts.lost_budget + r.counts.lost_other,
	       r.counts.lost_busy, r.counts.lost_budget, r.counts.lost_other, r.writer.pairs,
	       r.writer.busy, r.writer.reclaims_held, r.writer.freed, r.seconds);
	return r;
}

/*
 * Read sections never wait, so no event is lost to a lock. A walk may be
 * cut by the loop budget, and says so: with the series the budget is 250
 * ms of wall time a frame, which a walk of a few milliseconds spends only
 * when the host holds its vCPU off for about that long (a loaded host
 * running 4 vCPUs on 2 cores). Such cuts are counted, and must stay rare.
 */
static void expect_every_event_matched(const struct round *r, int cpus)
{
	/* If not, which step lost them: the program's run, or the path's read. */
	cr_expect_eq(r->counts.events, r->opens, "%d CPUs: %llu events for %u opens (the "
		     "program saw %llu openat calls of the test's; %llu paths unreadable, the "
		     "last with %d)", cpus, r->counts.events, r->opens, r->counts.calls,
		     r->counts.lost_other, r->counts.read_err);
	cr_expect_eq(r->counts.lost_busy + r->counts.lost_other, 0,
		     "%d CPUs: %llu events lost to a lock, %llu otherwise", cpus,
		     r->counts.lost_busy, r->counts.lost_other);
	cr_expect_eq(r->counts.walked + r->counts.lost_budget, r->counts.events,
		     "%d CPUs: %llu of %llu events unaccounted", cpus,
		     r->counts.events - r->counts.walked - r->counts.lost_budget, r->counts.events);
	cr_expect_leq(r->counts.lost_budget * 100, r->counts.events,
		      "%d CPUs: %llu of %llu walks cut by the budget, more than 1%%", cpus,
		      r->counts.lost_budget, r->counts.events);
	/* Only the RCU_PREFIX rule matches an event: one match each. */
	cr_expect_eq(r->counts.matches, r->counts.walked, "%d CPUs: %llu matches in %llu walks",
		     cpus, r->counts.matches, r->counts.walked);
	cr_expect_geq(r->counts.rules_max, FILLER_RULES + 1, "a walk passed %llu rules",
		      r->counts.rules_max);
	cr_expect_gt(r->writer.pairs, 0, "the writer wrote nothing during the reads");
}

Test(rculist, ten_thousand_rules_read_on_every_cpu_lose_no_event_to_a_lock, .timeout = 900)
{
	struct rculist *skel = rculist__open_and_load();
	struct rcu_rule_args a = {};
	struct round before[2], two, four;
	unsigned long long objects;
	char pattern[RCU_PATTERN_MAX];
	int i, retval;

	cr_assert_not_null(skel, "load: %s", strerror(errno));
	cr_assert_geq(sysconf(_SC_NPROCESSORS_ONLN), 4, "this test wants 4 CPUs (GUEST_SMP)");
	cr_assert_eq(ak_run(skel->progs.init, NULL, 0, &retval), 0);
	for (i = 0; i < FILLER_RULES; i++) {
		snprintf(pattern, sizeof(pattern), "/tmp/akrcu-%05d/*.conf", i);
		add_rule(skel, pattern, 0);
	}
	add_rule(skel, RCU_PREFIX "*", 0);	/* last: every walk passes every rule */
	objects = guest_live_objects(skel);
	skel->bss->target_tgid = getpid();
	cr_assert_eq(rculist__attach(skel), 0);

	before[0] = run_round(skel, 2, 1);
	before[1] = run_round(skel, 4, 1);
	two = run_round(skel, 2, 0);
	four = run_round(skel, 4, 0);
	rculist__detach(skel);

	/* Locked readers lose events (printed above); each is still counted, once. */
	for (i = 0; i < 2; i++) {
		struct rcu_counts *c = &before[i].counts;

		cr_expect_eq(c->events, before[i].opens, "locked: %llu events for %u opens",
			     c->events, before[i].opens);
		cr_expect_eq(c->walked + c->lost_busy + c->lost_budget + c->lost_other, c->events,
			     "locked: events unaccounted");
	}
	expect_every_event_matched(&two, 2);
	expect_every_event_matched(&four, 4);
	cr_expect_gt(two.writer.reclaims_held + four.writer.reclaims_held, 0,
		     "no reclaim ever found a reader inside: the writer did not overlap them");

	/* With the readers gone, two reclaims free what is left: nothing leaks. */
	for (i = 0; i < 2; i++)
		cr_assert_eq(run_rule_prog(skel->progs.reclaim, &a), 0);
	cr_expect_eq(skel->arena->policy.rcu.pending, 0, "%llu entries still retired",
		     skel->arena->policy.rcu.pending);
	cr_expect_eq(guest_live_objects(skel), objects, "%llu objects live, %llu before the churn",
		     guest_live_objects(skel), objects);
	cr_expect_eq(skel->arena->policy.rules.len, FILLER_RULES + 1);
	rculist__destroy(skel);
}

struct walker {
	struct rculist *skel;
	int cpu, err, stop, live;
	unsigned int complete, stale, busy, wrong, overlapped;
};

/* A walk's next entry: with the live walk, or the complete-or-stale one. */
static int walk_next(struct walker *w, struct ak_list_cursor *c,
		     struct ak_list_live_cursor *live, struct rule *r)
{
	struct policy *p = &w->skel->arena->policy;

	if (w->live)
		return ak_list_next_copy_live(&p->rules, &p->lock, live, r, node);
	return ak_list_next_copy(&p->rules, &p->lock, c, r, node);
}

/*
 * The loader's walks through the mmap, again and again: a complete walk
 * must hold the stable rules (ids 0 to STABLE_RULES - 1, added first, at
 * the tail) once each and in order, and churn rules whole, each (by its
 * pattern: ids repeat) at most once (a writer's are added and deleted one at a time, so at most one of
 * each writer is there throughout). ak_list_next_copy may say a walk is
 * stale; ak_list_next_copy_live never may.
 */
#define STABLE_RULES 100
#define CHURN_SEEN_MAX 4096
static void *walk_rules(void *arg)
{
	static char churn_seen[CHURN_SEEN_MAX][RCU_PATTERN_MAX];
	struct walker *w = arg;
	struct ak_list_live_cursor live;
	struct ak_list_cursor c;
	unsigned long long next_id, gen;
	unsigned int churn, i;
	struct rule r;
	int err;

	w->err = arenakit_pin_to_cpu(w->cpu);
	while (!w->err && !__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE)) {
		memset(&c, 0, sizeof(c));
		memset(&live, 0, sizeof(live));
		next_id = 0;
		churn = 0;
		gen = __atomic_load_n(&w->skel->arena->policy.rules.gen, __ATOMIC_RELAXED);
		while ((err = walk_next(w, &c, &live, &r)) == 0 || err == -EBUSY) {
			if (err) {
				w->busy++;
				continue;
			}
			if (r.id == next_id && !strcmp(r.pattern, "/tmp/akrcu-stable/*")) {
				next_id++;
				continue;
			}
			if (r.id < STABLE_RULES || strncmp(r.pattern, "/tmp/akrcu-churn-", 17)) {
				fprintf(stderr, "entry %llu '%.*s' after %llu\n", r.id,
					RCU_PATTERN_MAX, r.pattern, next_id);
				w->wrong++;
				continue;
			}
			/* A churn rule's pattern is its own: the writer's CPU and count. */
			for (i = 0; i < churn && i < CHURN_SEEN_MAX; i++)
				if (!strncmp(churn_seen[i], r.pattern, RCU_PATTERN_MAX)) {
					fprintf(stderr, "churn rule '%.*s' copied twice\n",
						RCU_PATTERN_MAX, r.pattern);
					w->wrong++;
				}
			if (churn < CHURN_SEEN_MAX)
				memcpy(churn_seen[churn], r.pattern, RCU_PATTERN_MAX);
			churn++;
		}
		if (err == -AK_ESTALE && !w->live) {
			w->stale++;
		} else if (err != -ENOENT) {
			w->err = err;
			ak_list_live_cursor_release(&live);
		} else {
			w->complete++;
			/* A complete walk the writers changed the list under. */
			if (gen != __atomic_load_n(&w->skel->arena->policy.rules.gen,
						   __ATOMIC_RELAXED))
				w->overlapped++;
			if (next_id != STABLE_RULES || (!w->live && churn > 2)) {
				fprintf(stderr, "a complete walk: %llu stable rules in order, %u churn "
					"rules\n", next_id, churn);
				w->wrong++;
			}
		}
	}
	return NULL;
}

/*
 * The loader's walk of the list through the mmap while BPF writers on
 * two other CPUs add and delete rules under the lock (and reclaim them,
 * so the memory of a deleted rule comes back as a new one): each walk is
 * whole, or (ak_list_next_copy only) says it is stale, never short,
 * doubled or torn.
 */
static void walk_under_writers(int live)
{
	struct rculist *skel = rculist__open_and_load();
	struct writer wr[2] = { { .cpu = 2 }, { .cpu = 3 } };
	struct walker w = { .cpu = 1, .live = live };
	pthread_t wtid[2], tid;
	int i, retval;

	cr_assert_not_null(skel, "load: %s", strerror(errno));
	cr_assert_geq(sysconf(_SC_NPROCESSORS_ONLN), 4, "this test wants 4 CPUs (GUEST_SMP)");
	cr_assert_eq(ak_run(skel->progs.init, NULL, 0, &retval), 0);
	for (i = 0; i < STABLE_RULES; i++)
		add_rule(skel, "/tmp/akrcu-stable/*", 0);
	w.skel = skel;
	cr_assert_eq(pthread_create(&tid, NULL, walk_rules, &w), 0);
	for (i = 0; i < 2; i++) {
		wr[i].skel = skel;
		cr_assert_eq(pthread_create(&wtid[i], NULL, churn_rules, &wr[i]), 0);
	}
	/* Until enough walks of each kind (live: that overlapped the writers), or 20 s. */
	for (i = 0; i < 2000 && (__atomic_load_n(&w.complete, __ATOMIC_RELAXED) < 50 ||
				 __atomic_load_n(live ? &w.overlapped : &w.stale,
						 __ATOMIC_RELAXED) < 50); i++)
		usleep(10000);
	for (i = 0; i < 2; i++)
		__atomic_store_n(&wr[i].stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < 2; i++)
		pthread_join(wtid[i], NULL);
	__atomic_store_n(&w.stop, 1, __ATOMIC_RELEASE);
	pthread_join(tid, NULL);

	printf("rculist: %s user walks of %d rules under 2 writers (%u and %u rules added and "
	       "deleted): %u complete (%u with the list changing), %u stale, %u -EBUSY tried "
	       "again, %u wrong\n", live ? "live" : "copying", STABLE_RULES, wr[0].pairs,
	       wr[1].pairs, w.complete, w.overlapped, w.stale, w.busy, w.wrong);
	cr_expect_eq(w.err, 0, "walker: %d", w.err);
	cr_expect_eq(wr[0].err + wr[1].err, 0, "writers: %d, %d", wr[0].err, wr[1].err);
	cr_expect_eq(w.wrong, 0, "%u walks or entries wrong", w.wrong);
	cr_expect_gt(w.complete, 0, "no walk completed");
	if (live)
		cr_expect_gt(w.overlapped, 0, "no walk overlapped the writers");
	else
		cr_expect_gt(w.stale, 0, "no walk was stale: the writers did not overlap it");
	rculist__destroy(skel);
}

Test(rculist, a_user_walk_is_complete_or_stale_under_writers, .timeout = 300)
{
	walk_under_writers(0);
}

Test(rculist, a_live_user_walk_is_always_complete_under_writers, .timeout = 300)
{
	walk_under_writers(1);
}
