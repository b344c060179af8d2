// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * htab.h in the guest, driven from user space: a million entries and a
 * model, four CPUs at once, a tc program with repeat, a full arena. User
 * space reads the same table through the arena's mmap with the same header.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "guest/guest.h"
#include "clock.h"
#include <arenakit/htab.h>
#include <arenakit/htab_user.h>
#include "guest/htab_shared.h"
#include "htab.skel.h"

#define MAX_RUNS 1000

static struct htab *load(unsigned int arena_pages)
{
	struct htab *skel = htab__open();
	int retval;

	cr_assert(skel);
	if (arena_pages)
		cr_assert_eq(bpf_map__set_max_entries(skel->maps.arena, arena_pages), 0);
	cr_assert_eq(arenakit_load_skeleton(skel->skeleton), 0);
	cr_assert_eq(ak_run(skel->progs.init_table, NULL, 0, &retval), 0);
	cr_assert_eq(retval, 0, "init_table: %d", retval);
	return skel;
}

/* Run the ops in skel's arena; the results land beside them. */
static void run_ops(struct htab *skel, unsigned int n)
{
	unsigned int runs;
	int retval, err;

	skel->bss->nops = n;
	skel->bss->next_op = 0;
	err = ak_run_until_done(skel->progs.run_ops, NULL, 0, MAX_RUNS, &retval, &runs);
	cr_assert_eq(err, 0, "run_ops: %s", strerror(-err));
	cr_assert_eq(retval, 0);
}

static unsigned int key_of(unsigned int i)
{
	return i * 2654435761u;	/* distinct for distinct i: an odd multiplier */
}

/* 1M inserts (the table grows from 16 buckets), then random operations. */
Test(htab, million_entries_agree_with_a_model, .timeout = 600)
{
	enum { N = 1000000, KEYS = 2 * N, RANDOM_OPS = 4 * HTAB_MAX_OPS };
	static unsigned long long model[KEYS];
	static char present[KEYS];
	struct htab *skel = load(0);
	struct htab_op *ops = skel->arena->ops;
	long long *results = skel->arena->results;
	struct ak_htab *table = &skel->arena->table;
	unsigned int seed = 20261203, i, batch, n, k;
	unsigned long long *v, count;
	int err, want;

	printf("htab: model seed %u\n", seed);
	srand(seed);
	for (batch = 0; batch < N; batch += HTAB_MAX_OPS) {
		n = N - batch < HTAB_MAX_OPS ? N - batch : HTAB_MAX_OPS;
		for (i = 0; i < n; i++)
			ops[i] = (struct htab_op){ HTAB_OP_INSERT, key_of(batch + i), batch + i };
		run_ops(skel, n);
		for (i = 0; i < n; i++) {
			cr_assert_eq(results[i], 0, "insert %u: %lld", batch + i, results[i]);
			model[batch + i] = batch + i;
			present[batch + i] = 1;
			/* The same table, read by user space through the mmap. */
			k = key_of(batch + i);
			v = ak_htab_lookup(table, &k, &err);
			cr_assert(v, "user space misses key %u: %d", batch + i, err);
			cr_assert_eq(*v, batch + i);
		}
	}
	cr_expect_eq(ak_htab_count(table), N);
	printf("htab: %u entries, %llu buckets%s\n", N, table->cur->nbuckets,
	       table->old ? " (still growing)" : "");
	for (batch = 0; batch < RANDOM_OPS; batch += HTAB_MAX_OPS) {
		for (i = 0; i < HTAB_MAX_OPS; i++) {
			unsigned int idx = (unsigned int)rand() % KEYS;

			ops[i] = (struct htab_op){ rand() % 4, key_of(idx),
						   ((unsigned long long)rand() << 31) | rand() };
		}
		run_ops(skel, HTAB_MAX_OPS);
		/* Replay the batch on the model, in order, comparing every answer. */
		for (i = 0; i < HTAB_MAX_OPS; i++) {
			unsigned int idx = ops[i].key * 244002641u;	/* the inverse multiplier */

			cr_assert_lt(idx, KEYS);
			switch (ops[i].kind) {
			case HTAB_OP_LOOKUP:
				want = present[idx] ? 0 : -ENOENT;
				if (present[idx])
					cr_assert_eq((unsigned long long)results[i], model[idx],
						     "op %u: lookup %u", batch + i, idx);
				else
					cr_assert_eq(results[i], -ENOENT, "op %u", batch + i);
				continue;
			case HTAB_OP_INSERT:
				want = present[idx] ? -EEXIST : 0;
				break;
			case HTAB_OP_UPDATE:
				want = present[idx] ? 0 : -ENOENT;
				break;
			default:
				want = present[idx] ? 0 : -ENOENT;
				cr_assert_eq(results[i], want, "op %u: delete %u", batch + i, idx);
				present[idx] = 0;
				continue;
			}
			cr_assert_eq(results[i], want, "op %u: kind %u key %u", batch + i,
				     ops[i].kind, idx);
			if (!want) {
				present[idx] = 1;
				model[idx] = ops[i].value;
			}
		}
		for (i = 0, count = 0; i < KEYS; i++)
			count += present[i];
		cr_assert_eq(ak_htab_count(table), count, "after %u random ops", batch + HTAB_MAX_OPS);
	}
	/* Every key, present or not, as user space sees it. */
	for (i = 0; i < KEYS; i++) {
		k = key_of(i);
		v = ak_htab_lookup(table, &k, &err);
		cr_assert_eq(v != NULL, present[i], "key %u", i);
		if (v)
			cr_assert_eq(*v, model[i]);
	}
	printf("htab: %u random operations agree with the model; %llu entries\n", RANDOM_OPS,
	       ak_htab_count(table));
	cr_assert_eq(ak_run_until_done(skel->progs.destroy_table, NULL, 0, MAX_RUNS, &want, NULL),
		     0);
	cr_expect_eq(want, 0);
	cr_expect_eq(guest_live_objects(skel), 0);
	cr_expect_eq(skel->arena->ak_allocator.stats.pages, 0);
	htab__destroy(skel);
}

/* Writers on every CPU, one table that grows under them. */
Test(htab, cpus_insert_and_delete_at_once, .timeout = 300)
{
	enum { PER_CPU = 20000 };
	struct htab *skel = load(0);
	struct ak_htab *table = &skel->arena->table;
	int cpus = sysconf(_SC_NPROCESSORS_ONLN), i, retval, err, errs[8];
	struct htab_churn_args c[8];
	unsigned int k;

	cr_assert_geq(cpus, 2);
	if (cpus > 8)
		cpus = 8;
	for (i = 0; i < cpus; i++)
		c[i] = (struct htab_churn_args){ .first = i * PER_CPU, .count = PER_CPU };
	guest_run_on_cpus(skel->progs.cpu_churn, cpus, c, sizeof(c[0]), errs);
	for (i = 0; i < cpus; i++)
		cr_expect(!errs[i] && !c[i].errors, "CPU %d: %d, %u errors (last %d)", i,
			  errs[i], c[i].errors, c[i].last_error);
	cr_assert_eq(ak_run_until_done(skel->progs.maintain, NULL, 0, MAX_RUNS, &retval, NULL), 0);
	cr_expect_eq(retval, 0);
	cr_expect_eq(ak_htab_count(table), (unsigned long long)cpus * PER_CPU / 2);
	for (k = 0; k < (unsigned int)cpus * PER_CPU; k++)
		cr_assert_eq(ak_htab_lookup(table, &k, &err) != NULL, !(k & 1), "key %u", k);
	/* Nothing leaked: the entries and the one bucket array. */
	cr_expect_eq(guest_live_objects(skel), ak_htab_count(table) + 1);
	for (i = 0, k = 0; i < cpus; i++)
		k += c[i].busy;
	printf("htab: %d CPUs x %d inserts and %d deletes, %llu buckets at the end, %u -EBUSY "
	       "answers tried again (%llu of them the allocator's)\n", cpus, PER_CPU, PER_CPU / 2,
	       table->cur->nbuckets, k, skel->arena->ak_allocator.stats.fail_busy);
	htab__destroy(skel);
}

/*
 * Every CPU counts into the same 64 keys at once, each key new at the
 * start: ak_htab_lookup_or_init makes one entry per key whichever CPU gets
 * there first, and no count is lost (the old way, lookup, then insert with
 * AK_HTAB_NOEXIST, drops the count of each CPU that loses the insert).
 */
Test(htab, cpus_count_into_the_same_keys_and_lose_nothing, .timeout = 300)
{
	enum { STEPS = COUNT_KEYS * 312 };	/* each key as often */
	struct htab *skel = load(0);
	struct ak_htab *table = &skel->arena->count_table;
	int cpus = sysconf(_SC_NPROCESSORS_ONLN), i, retval, err, errs[8];
	unsigned long long total = 0, busy = 0, *count;
	struct htab_count_args c[8];
	unsigned int k;

	cr_assert_geq(cpus, 2);
	if (cpus > 8)
		cpus = 8;
	cr_assert_eq(ak_run(skel->progs.count_init, NULL, 0, &retval), 0);
	cr_assert_eq(retval, 0);
	for (i = 0; i < cpus; i++)
		c[i] = (struct htab_count_args){ .steps = STEPS };
	guest_run_on_cpus(skel->progs.count_keys, cpus, c, sizeof(c[0]), errs);
	for (i = 0; i < cpus; i++) {
		cr_expect(!errs[i] && !c[i].errors, "CPU %d: %d, %u errors (last %d)", i,
			  errs[i], c[i].errors, c[i].last_error);
		busy += c[i].busy;
	}
	cr_expect_eq(ak_htab_count(table), COUNT_KEYS, "one entry per key");
	for (k = 0; k < COUNT_KEYS; k++) {
		count = ak_htab_lookup(table, &k, &err);
		cr_assert(count, "key %u: %d", k, err);
		cr_expect_eq(*count, (unsigned long long)cpus * STEPS / COUNT_KEYS, "key %u", k);
		total += *count;
	}
	cr_expect_eq(total, (unsigned long long)cpus * STEPS);
	printf("htab: %d CPUs counted %llu into %d keys with lookup_or_init, "
	       "%llu -EBUSY tried again\n", cpus, total, COUNT_KEYS, busy);
	htab__destroy(skel);
}

/*
 * Every CPU inserts keys of its own into tables at their limit, at once:
 * the one that refuses holds exactly its limit, and every insert is
 * accounted for, in, or refused and counted (an insert counts itself in
 * before it checks: racing CPUs cannot pass the limit together); the LRU
 * one takes every insert, evicting one entry for each past the limit, and
 * holds exactly its limit too. Both tables stay sound, nothing leaks.
 */
Test(htab, cpus_insert_at_the_limit_refused_or_evicted_exactly, .timeout = 300)
{
	enum { PER_CPU = 1000 };
	struct htab *skel = load(0);
	int cpus = sysconf(_SC_NPROCESSORS_ONLN), i, lru, retval, errs[8];
	struct htab_limit_args c[8];
	unsigned long long inserted, refused, busy, cut, total, objects = guest_live_objects(skel);
	struct ak_htab *t;

	cr_assert_geq(cpus, 2);
	if (cpus > 8)
		cpus = 8;
	total = (unsigned long long)cpus * PER_CPU;
	cr_assert_gt(total, LIMIT_ENTRIES, "past the limit");
	cr_assert_eq(ak_run(skel->progs.limit_init, NULL, 0, &retval), 0);
	cr_assert_eq(retval, 0);
	for (lru = 0; lru < 2; lru++) {
		t = lru ? &skel->arena->lru_table : &skel->arena->limit_table;
		for (i = 0; i < cpus; i++)
			c[i] = (struct htab_limit_args){ .first = i * PER_CPU, .count = PER_CPU,
							 .lru = lru };
		guest_run_on_cpus(skel->progs.limit_insert, cpus, c, sizeof(c[0]), errs);
		inserted = refused = busy = cut = 0;
		for (i = 0; i < cpus; i++) {
			cr_expect(!errs[i] && !c[i].errors, "CPU %d: %d, %u errors (last %d)", i,
				  errs[i], c[i].errors, c[i].last_error);
			inserted += c[i].inserted;
			refused += c[i].refused;
			busy += c[i].busy;
			cut += c[i].cut;
		}
		printf("htab: %d CPUs x %d inserts into a table of %d at most (%s): %llu in, "
		       "%llu refused, %llu evicted, %llu held; %llu -EBUSY and %llu -AK_EBUDGET "
		       "tried again\n", cpus, PER_CPU, LIMIT_ENTRIES, lru ? "LRU" : "refusing",
		       inserted, refused, t->evicted, ak_htab_count(t), busy, cut);
		cr_expect_eq(ak_htab_count(t), LIMIT_ENTRIES, "exactly at the limit");
		cr_expect_eq(inserted + refused, total, "every insert accounted for");
		cr_expect_eq(t->refused, refused, "the table's count of refusals");
		if (lru) {
			cr_expect_eq(refused, 0, "an LRU table takes every insert");
			cr_expect_eq(t->evicted, total - LIMIT_ENTRIES);
		} else {
			cr_expect_eq(inserted, LIMIT_ENTRIES);
			cr_expect_eq(t->evicted, 0);
		}
	}
	cr_assert_eq(ak_run(skel->progs.limit_check, NULL, 0, &retval), 0);
	cr_expect_eq(retval, 0, "a table is not sound: %d", retval);
	/* The entries and the two bucket arrays; an eviction's node was reused. */
	cr_expect_eq(guest_live_objects(skel), objects + 2ULL * LIMIT_ENTRIES + 2);
	htab__destroy(skel);
}

/* A networking program counts packets by length, with nodes from the pool. */
Test(htab, tc_program_with_repeat, .timeout = 120)
{
	struct htab *skel = load(0);
	unsigned char packet[64] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = packet, .data_size_in = sizeof(packet),
		    .repeat = 1000);
	struct ak_htab *table = &skel->arena->table;
	unsigned long long pages, *count;
	unsigned int len = sizeof(packet);
	int retval, err;

	cr_assert_eq(ak_run(skel->progs.reserve_pool, NULL, 0, &retval), 0);
	cr_assert_eq(retval, 0);
	pages = skel->arena->ak_allocator.stats.pages;
	err = bpf_prog_test_run_opts(bpf_program__fd(skel->progs.tc_count), &opts);
	cr_assert_eq(err, 0, "tc test run: %s", strerror(errno));
	cr_expect_eq(opts.retval, 0);
	count = ak_htab_lookup(table, &len, &err);
	cr_assert(count, "no entry for length %u: %d", len, err);
	cr_expect_eq(*count, 1000, "1000 runs counted %llu", *count);
	cr_expect_eq(skel->arena->ak_allocator.stats.pages, pages, "a tc program took pages");
	htab__destroy(skel);
}

/* The arena runs out: -ENOMEM, and the table still works. */
Test(htab, full_arena_is_enomem_and_the_table_stays_usable, .timeout = 120)
{
	struct htab *skel = load(640);	/* 1.5 MiB of globals, 1 MiB for the table */
	struct htab_op *ops = skel->arena->ops;
	long long *results = skel->arena->results;
	unsigned int i, inserted = 0, n = 40000;
	unsigned int k;
	int err;

	for (i = 0; i < n; i++)
		ops[i] = (struct htab_op){ HTAB_OP_INSERT, i, i };
	run_ops(skel, n);
	for (i = 0; i < n && !results[i]; i++)
		inserted++;
	cr_assert_lt(inserted, n, "the arena never filled");
	cr_expect_eq(results[inserted], -ENOMEM, "insert %u: %lld", inserted, results[inserted]);
	cr_expect_eq(ak_htab_count(&skel->arena->table), inserted);
	for (k = 0; k < inserted; k++)
		cr_assert(ak_htab_lookup(&skel->arena->table, &k, &err), "key %u lost", k);
	ops[0] = (struct htab_op){ HTAB_OP_DELETE, 0, 0 };
	ops[1] = (struct htab_op){ HTAB_OP_INSERT, n + 1, 1 };
	ops[2] = (struct htab_op){ HTAB_OP_LOOKUP, n + 1, 0 };
	run_ops(skel, 3);
	cr_expect_eq(results[0], 0);
	cr_expect_eq(results[1], 0, "no room after a delete: %lld", results[1]);
	cr_expect_eq(results[2], 1);
	printf("htab: a 640-page arena held %u entries, then -ENOMEM\n", inserted);
	htab__destroy(skel);
}

struct rw_thread {
	struct htab *skel;
	struct bpf_program *prog;	/* NULL: read from user space */
	int cpu;
	struct htab_rw_args args;
	int err;
};

/* What rw_reader checks, through the mmap, with the lookup user space may use. */
static void user_read(struct ak_htab *table, struct htab_rw_args *args, unsigned int k,
		      int stable)
{
	struct rw_value v;
	int err = ak_htab_lookup_copy(table, &k, &v);

	if (!err && v.check != rw_check(k, v.version)) {
		if (stable)
			args->torn_copy++;
		else
			args->wrong++;
	}
	if (err == -ENOENT && stable)
		args->absent++;
	if (err == -EBUSY)
		args->busy++;
	else if (err && err != -ENOENT) {
		args->errors++;
		args->last_error = err;
	}
	args->lookups++;
}

/*
 * One walk of the table with ak_htab_next_copy, as a loader makes it while
 * the writers run: complete (every stable key once, each copy whole) or
 * stale; -EBUSY (a lock, a growth) is called again. The writers grow and
 * shrink the table back to back, each growth -EBUSY from start to end, and
 * on a loaded host their vCPUs may crawl: a walk is given 60 s, not a
 * number of calls.
 */
static void user_walk(struct ak_htab *table, struct htab_rw_args *args)
{
	static unsigned char seen[RW_STABLE];
	unsigned long long deadline = monotonic_ns() + 60000000000ull;
	struct ak_htab_cursor c = { 0 };
	struct rw_value v;
	unsigned int k;
	int err = -EBUSY;

	memset(seen, 0, sizeof(seen));
	while (monotonic_ns() < deadline) {
		err = ak_htab_next_copy(table, &c, &k, &v);
		if (err == -EBUSY) {
			args->busy++;
			continue;
		}
		if (err)
			break;
		if (v.check != rw_check(k, v.version))
			args->torn_copy++;
		if (k < RW_STABLE && seen[k]++)
			args->walk_missed++;	/* twice is as wrong as never */
	}
	if (err == -AK_ESTALE) {
		args->walks_stale++;
		return;
	}
	if (err != -ENOENT) {
		args->errors++;
		args->last_error = err;
		return;
	}
	args->walks_complete++;
	for (k = 0; k < RW_STABLE; k++)
		args->walk_missed += !seen[k];
}

static void *rw_run(void *arg)
{
	struct rw_thread *t = arg;
	unsigned int round, j, k;

	if (t->prog) {
		t->err = guest_run_on_cpu_until_done(t->prog, t->cpu, &t->args, sizeof(t->args));
		return NULL;
	}
	t->err = arenakit_pin_to_cpu(t->cpu);
	if (t->err)
		return NULL;
	for (round = 0; !__atomic_load_n(&t->skel->bss->rw_stop, __ATOMIC_ACQUIRE); round++) {
		for (j = 0; j < 64; j++) {
			k = (round * 64 + j) * 2654435761u;
			user_read(&t->skel->arena->rw_table, &t->args, k % RW_STABLE, 1);
			user_read(&t->skel->arena->rw_table, &t->args,
				  t->args.first + k % t->args.count, 0);
		}
		if (round % 8 == 0)
			user_walk(&t->skel->arena->rw_table, &t->args);
	}
	return NULL;
}

/*
 * Two CPUs write (the table grows from 2048 to 65536 entries and back under
 * them) while a BPF program on a third and a user-space thread on a fourth
 * read: a key present throughout is always found, a copy is never half of
 * two updates, and a lock-free pointer may read a value mid-update (counted,
 * as documented).
 */
Test(htab, readers_see_what_is_documented, .timeout = 300)
{
	enum { WRITERS = 2, PER_WRITER = 30000 };
	struct htab *skel = load(0);
	struct ak_htab *table = &skel->arena->rw_table;
	int cpus = sysconf(_SC_NPROCESSORS_ONLN), i, n, retval;
	struct rw_thread t[WRITERS + 2];
	pthread_t tid[WRITERS + 2];
	unsigned long long objects = guest_live_objects(skel);
	struct rw_value v;
	unsigned int k;

	cr_assert_geq(cpus, 4, "this test wants 4 CPUs (GUEST_SMP)");
	cr_assert_eq(ak_run(skel->progs.rw_init, NULL, 0, &retval), 0);
	cr_assert_eq(retval, 0, "rw_init: %d", retval);
	cr_assert_eq(ak_run_until_done(skel->progs.rw_fill, NULL, 0, MAX_RUNS, &retval, NULL), 0);
	cr_assert_eq(retval, 0, "rw_fill: %d", retval);
	/* Readers first, over the stable keys and every writer's churn keys. */
	for (i = 0; i < 2; i++)
		t[i] = (struct rw_thread){ .skel = skel, .cpu = WRITERS + i,
					   .prog = i ? NULL : skel->progs.rw_reader,
					   .args = { .first = RW_CHURN_BASE,
						     .count = WRITERS * PER_WRITER } };
	for (i = 0; i < WRITERS; i++)
		t[2 + i] = (struct rw_thread){ .skel = skel, .cpu = i,
					       .prog = skel->progs.rw_writer,
					       .args = { .first = RW_CHURN_BASE + i * PER_WRITER,
							 .count = PER_WRITER } };
	cr_assert_eq(pthread_create(&tid[0], NULL, rw_run, &t[0]), 0);
	cr_assert_eq(pthread_create(&tid[1], NULL, rw_run, &t[1]), 0);
	while (!__atomic_load_n(&skel->bss->rw_reader_rounds, __ATOMIC_ACQUIRE))
		usleep(1000);
	for (i = 2, n = 2 + WRITERS; i < n; i++)
		cr_assert_eq(pthread_create(&tid[i], NULL, rw_run, &t[i]), 0);
	for (i = 2; i < n; i++)
		pthread_join(tid[i], NULL);
	__atomic_store_n(&skel->bss->rw_stop, 1, __ATOMIC_RELEASE);
	pthread_join(tid[0], NULL);
	pthread_join(tid[1], NULL);

	for (i = 0; i < n; i++) {
		struct htab_rw_args *a = &t[i].args;
		const char *who = i == 0 ? "BPF reader" : i == 1 ? "user reader" : "writer";

		cr_expect(!t[i].err && !a->errors, "%s: %d, %u errors (last %d)", who, t[i].err,
			  a->errors, a->last_error);
		cr_expect(!a->absent, "%s: a stable key looked absent %u times (%d)", who,
			  a->absent, a->last_error);
		cr_expect(!a->torn_copy && !a->wrong, "%s: %u torn and %u wrong copies", who,
			  a->torn_copy, a->wrong);
		cr_expect(!a->walk_missed, "%s: complete walks missed or doubled a stable key %u "
			  "times", who, a->walk_missed);
		if (i < 2)
			printf("htab: %s: %llu lookups, %u values read mid-update through a "
			       "pointer, %u -EBUSY tried again\n", who, a->lookups, a->torn, a->busy);
		else
			printf("htab: writer %d: %u -EBUSY tried again\n", i - 2, a->busy);
	}
	cr_expect_gt(t[0].args.lookups, 0);
	cr_expect_gt(t[1].args.lookups, 0);
	cr_expect_gt(t[1].args.walks_complete + t[1].args.walks_stale, 0);
	printf("htab: user reader: %u walks with ak_htab_next_copy complete, %u stale, under "
	       "the writers\n", t[1].args.walks_complete, t[1].args.walks_stale);
	cr_assert_eq(ak_run_until_done(skel->progs.rw_maintain, NULL, 0, MAX_RUNS, &retval, NULL),
		     0);
	cr_expect_eq(retval, 0);
	cr_expect_eq(ak_htab_count(table), RW_STABLE);
	for (k = 0; k < RW_STABLE; k++) {
		cr_assert_eq(ak_htab_lookup_copy(table, &k, &v), 0, "stable key %u", k);
		cr_assert_eq(v.check, rw_check(k, v.version));
	}
	/* Nothing leaked: the stable entries and one bucket array (beside load()'s table). */
	cr_expect_eq(guest_live_objects(skel), objects + RW_STABLE + 1,
		     "%llu objects live for %d entries", guest_live_objects(skel),
		     RW_STABLE);
	printf("htab: %d writers x %d inserts and deletes, %llu buckets at the end\n", WRITERS,
	       PER_WRITER, table->cur->nbuckets);
	htab__destroy(skel);
}
