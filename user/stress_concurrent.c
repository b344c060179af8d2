// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * concurrent: STRESS_CONC_THREADS writer threads, pinned across the CPUs,
 * run conc_run all at once on one list (under an ak_lock) and one table;
 * each thread works on keys of its own, so a replay of its log alone says
 * what it must have left and what each of its calls must have returned.
 * Meanwhile a thread here reads the same structures through the mmap as
 * documented: the list under the same lock, the table with
 * ak_htab_lookup_copy.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arenakit/user.h>
#include "loader.h"
#include "stress_tool.h"
#include "stress_concurrent.skel.h"

struct conc_writer {
	struct stress_concurrent *skel;
	pthread_t thread;
	unsigned int tid;
	int err;
	unsigned int runs;
};

struct conc_reader {
	struct stress_concurrent *skel;
	unsigned int seed;
	volatile int stop;
	unsigned long long list_reads, list_busy, list_bad;
	unsigned long long lookups, hits, busy, foreign, odd;
	char first_bad[160];
};

static void *conc_write(void *arg)
{
	struct conc_writer *w = arg;
	struct { __u32 tid; } ctx = { w->tid };
	int retval;

	w->err = arenakit_pin_to_cpu(w->tid % sysconf(_SC_NPROCESSORS_ONLN));
	if (!w->err)
		w->err = ak_run_until_done(w->skel->progs.conc_run, &ctx, sizeof(ctx), 1000000,
					   &retval, &w->runs);
	if (!w->err)
		w->err = retval;
	return 0;
}

/* One walk of the list under its lock: each thread's items in the order it added them. */
static void conc_read_list(struct conc_reader *rd, struct ak_list *list, struct ak_lock *lock)
{
	unsigned long long last[STRESS_CONC_THREADS], n = 0, key;
	struct ak_list_node *pos;
	unsigned int tid;

	if (ak_lock_acquire(lock)) {
		rd->list_busy++;
		return;
	}
	memset(last, 0xff, sizeof(last));
	for (pos = list->head.next; pos && pos != &list->head && n <= ak_list_len(list);
	     pos = pos->next, n++) {
		key = ak_list_entry(pos, struct stress_item, node)->key;
		tid = key >> 32;
		if (tid >= STRESS_CONC_THREADS ||
		    (last[tid] != ~0ULL && (unsigned int)key <= (unsigned int)last[tid]))
			break;
		last[tid] = key;
	}
	if ((!pos || pos != &list->head || n != ak_list_len(list)) && !rd->list_bad++)
		snprintf(rd->first_bad, sizeof(rd->first_bad),
			 "list under the lock: stopped at item %llu of %llu", n, ak_list_len(list));
	ak_lock_release(lock);
	rd->list_reads++;
}

static void *conc_read(void *arg)
{
	struct conc_reader *rd = arg;
	struct ak_htab *h = &rd->skel->arena->conc_htab;
	unsigned int seed = rd->seed, key, i;
	unsigned long long v;
	int err;

	while (!rd->stop) {
		conc_read_list(rd, &rd->skel->arena->conc_list, &rd->skel->arena->conc_lock);
		for (i = 0; i < 256; i++) {
			key = STRESS_CONC_KEY(rand_r(&seed) % STRESS_CONC_THREADS,
					      rand_r(&seed) % STRESS_CONC_KEYS);
			err = ak_htab_lookup_copy(h, &key, &v);
			rd->lookups++;
			if (!err) {
				rd->hits++;
				if (v >> 24 != key && !rd->foreign++)
					snprintf(rd->first_bad, sizeof(rd->first_bad),
						 "key %#x read value %#llx, another key's", key, v);
			} else if (err == -EBUSY || err == -AK_EBUDGET) {
				rd->busy++;
			} else if (err != -ENOENT && !rd->odd++) {
				snprintf(rd->first_bad, sizeof(rd->first_bad),
					 "key %#x: ak_htab_lookup_copy returned %d", key, err);
			}
		}
	}
	return 0;
}

/* A thread's replay: its items in order, its table, and each result it logged. */
struct conc_replay {
	unsigned long long *items, nitems, first, pushed;
	unsigned char present[STRESS_CONC_KEYS];
	unsigned long long value[STRESS_CONC_KEYS];
	unsigned long long entries, skipped;
};

static unsigned long long conc_rng0(unsigned int seed, unsigned int tid)
{
	return stress_seed_state(seed) ^ (tid + 1ULL) * 0xbf58476d1ce4e5b9ULL;
}

/* Replay thread @tid's @ops results; the first that differs, or -1. */
static long long conc_replay(struct stress_concurrent *skel, unsigned int seed, unsigned int tid,
			     struct conc_replay *m, long long *got, long long *want)
{
	unsigned long long rng = conc_rng0(seed, tid), r, op, ops;
	const long long *log = skel->arena->conc_log[tid];
	unsigned int k;

	ops = skel->arena->conc_threads[tid].done;
	for (op = 0; op < ops; op++) {
		r = rng = stress_xorshift(rng);
		k = (r >> 8) % STRESS_CONC_KEYS;
		*got = log[op];
		/* A busy lock or a cut walk changed nothing: the op is left out. */
		if (*got == -EBUSY || *got == -AK_EBUDGET) {
			m->skipped++;
			continue;
		}
		switch (r % 8) {
		case 0: case 1:
			*want = 0;
			if (*got == 0)
				m->items[m->nitems++] = STRESS_CONC_ITEM(tid, m->pushed++);
			break;
		case 2:
			*want = m->first < m->nitems ? 0 : -ENOENT;
			if (*got == 0 && !*want)
				m->first++;
			break;
		case 3: case 4: case 5:
			*want = 0;
			if (*got == 0) {
				m->entries += !m->present[k];
				m->present[k] = 1;
				m->value[k] = STRESS_CONC_VALUE(STRESS_CONC_KEY(tid, k), op);
			}
			break;
		case 6:
			*want = m->present[k] ? 0 : -ENOENT;
			if (*got == 0 && m->present[k]) {
				m->present[k] = 0;
				m->entries--;
			}
			break;
		default:
			*want = m->present[k] ? (long long)m->value[k] : -ENOENT;
		}
		if (*got != *want)
			return op;
	}
	return -1;
}

static int scenario_concurrent(struct stress_run *s)
{
	unsigned long long ops = s->quick ? 2000 : STRESS_CONC_OPS, total = 0, n;
	unsigned long long at[STRESS_CONC_THREADS];
	struct ak_alloc_stats st, before;
	struct stress_concurrent *skel = stress_concurrent__open();
	struct stress_concurrent__arena *a;
	struct conc_writer w[STRESS_CONC_THREADS];
	struct conc_replay *m[STRESS_CONC_THREADS] = { 0 };
	struct conc_reader rd = { .skel = skel, .seed = s->seed };
	struct ak_list_node *pos;
	pthread_t reader;
	long long bad, got = 0, want = 0;
	unsigned int t, k, key;
	unsigned long long *v;
	struct stress_row *r, *rr;
	int retval, err, ret;

	ret = stress_load("concurrent", skel ? skel->skeleton : NULL);
	if (ret)
		goto out;
	a = skel->arena;
	ak_alloc_stats_read(&skel->arena->ak_allocator, &before);
	ret = ak_run(skel->progs.conc_setup, NULL, 0, &retval) ?: retval;
	if (ret)
		goto out;
	for (t = 0; t < STRESS_CONC_THREADS; t++) {
		memset(&a->conc_threads[t], 0, sizeof(a->conc_threads[t]));
		a->conc_threads[t].rng = conc_rng0(s->seed, t);
		a->conc_threads[t].ops = ops;
		w[t] = (struct conc_writer){ .skel = skel, .tid = t };
	}
	r = stress_row(s, "concurrent", "4 writers: list under ak_lock, htab",
		       ops * STRESS_CONC_THREADS);
	rr = stress_row(s, "concurrent", "a reader through the mmap meanwhile", 0);
	stress_progress(s, "concurrent: %u writers x %llu operations, a reader",
			STRESS_CONC_THREADS, ops);
	ret = -pthread_create(&reader, NULL, conc_read, &rd);
	if (ret)
		goto out;
	for (t = 0; t < STRESS_CONC_THREADS; t++) {
		err = pthread_create(&w[t].thread, NULL, conc_write, &w[t]);
		if (err)
			w[t].err = -err;
	}
	for (t = 0; t < STRESS_CONC_THREADS; t++)
		if (w[t].thread)
			pthread_join(w[t].thread, NULL);
	rd.stop = 1;
	pthread_join(reader, NULL);
	for (t = 0; t < STRESS_CONC_THREADS; t++)
		if (w[t].err) {
			fprintf(stderr, "arenakit stress: concurrent: writer %u: %s\n", t,
				strerror(-w[t].err));
			ret = w[t].err;
			goto out;
		}

	/* Each thread's log, replayed alone. */
	for (t = 0; t < STRESS_CONC_THREADS; t++) {
		m[t] = calloc(1, sizeof(*m[t]));
		if (!m[t] || !(m[t]->items = calloc(ops, sizeof(*m[t]->items)))) {
			ret = -ENOMEM;
			goto out;
		}
		bad = conc_replay(skel, s->seed, t, m[t], &got, &want);
		stress_verdict(r, bad < 0 && a->conc_threads[t].done == ops, 0,
			"thread %u, operation %lld of %llu: returned %lld, its replay says %lld", t,
			bad, (unsigned long long)a->conc_threads[t].done, got, want);
		total += m[t]->entries;
	}
	/* The list: each thread's items, in its order, nothing else. */
	memset(at, 0, sizeof(at));
	for (pos = a->conc_list.head.next, n = 0; pos && pos != &a->conc_list.head;
	     pos = pos->next, n++) {
		unsigned long long key64 = ak_list_entry(pos, struct stress_item, node)->key;

		t = key64 >> 32;
		if (t >= STRESS_CONC_THREADS || m[t]->first + at[t] >= m[t]->nitems ||
		    m[t]->items[m[t]->first + at[t]] != key64)
			break;
		at[t]++;
	}
	for (t = 0; t < STRESS_CONC_THREADS && pos == &a->conc_list.head; t++)
		if (m[t]->first + at[t] != m[t]->nitems)
			pos = NULL;
	stress_verdict(r, pos == &a->conc_list.head && n == ak_list_len(&a->conc_list), 0,
		"the list differs from the replays at item %llu", n);
	/* The table: every key of every thread as its replay left it. */
	for (t = 0, bad = 0; t < STRESS_CONC_THREADS; t++)
		for (k = 0; k < STRESS_CONC_KEYS; k++) {
			key = STRESS_CONC_KEY(t, k);
			v = ak_htab_lookup(&a->conc_htab, &key, &err);
			bad += m[t]->present[k] ? !v || *v != m[t]->value[k] : !!v;
		}
	stress_verdict(r, !bad && ak_htab_count(&a->conc_htab) == total, 0,
		"the table: %lld keys differ from the replays, count %llu, replays %llu", bad,
		ak_htab_count(&a->conc_htab), total);
	ret = ak_run(skel->progs.conc_check, NULL, 0, &retval) ?: retval;
	if (ret)
		goto out;
	stress_verdict(r, !skel->bss->conc_list_check && !skel->bss->conc_htab_check, 0,
		"ak_list_check_all %lld, ak_htab_check_all %lld", skel->bss->conc_list_check,
		skel->bss->conc_htab_check);
	err = ak_run(skel->progs.conc_teardown, NULL, 0, &retval) ?: retval;
	ak_alloc_stats_read(&skel->arena->ak_allocator, &st);
	stress_verdict(r, !err && st.objects == before.objects && st.bytes == before.bytes, 0,
		"after teardown (%d): %llu objects, %llu bytes (before: %llu, %llu)", err,
		st.objects, st.bytes, before.objects, before.bytes);

	stress_verdict(rr, rd.list_reads > 0 && !rd.list_bad, 0, "%llu of %llu list reads: %s",
		rd.list_bad, rd.list_reads, rd.first_bad);
	stress_verdict(rr, rd.hits > 0 && !rd.foreign && !rd.odd, 0,
		       "%llu foreign values, %llu odd errors in %llu lookups: %s", rd.foreign,
		       rd.odd, rd.lookups, rd.first_bad);
	stress_progress_clear(s);
	printf("concurrent: %u writers on %ld CPUs, %llu operations each (left out as busy or "
	       "cut: %llu, %llu, %llu, %llu); the reader walked the list %llu times (%llu busy) "
	       "and made %llu lookups (%llu hits, %llu busy)\n", STRESS_CONC_THREADS,
	       sysconf(_SC_NPROCESSORS_ONLN), ops, m[0]->skipped, m[1]->skipped, m[2]->skipped,
	       m[3]->skipped, rd.list_reads, rd.list_busy, rd.lookups, rd.hits, rd.busy);
	stress_row_done(r);
	stress_row_done(rr);
	rr->size = rd.list_reads + rd.lookups;
	ret = 0;
out:
	for (t = 0; t < STRESS_CONC_THREADS; t++)
		if (m[t]) {
			free(m[t]->items);
			free(m[t]);
		}
	stress_concurrent__destroy(skel);
	return ret;
}

const struct stress_scenario stress_scenario_concurrent = {
	.name = "concurrent",
	.help = "4 writer threads, pinned across the CPUs, run random operations\n"
		"(65536 each, --quick: 2000) on one list under an ak_lock and one\n"
		"hash table, each on keys of its own, and log every result; each\n"
		"log replayed alone must give every result the thread got and\n"
		"what it left in the list (its items, in its order) and in the\n"
		"table; both whole checks must pass and teardown bring the\n"
		"allocator back. Calls that found the lock busy or were cut are\n"
		"left out of the replay. Meanwhile a user-space thread reads both\n"
		"through the mmap: the list under the same lock, the values with\n"
		"ak_htab_lookup_copy (never another key's)",
	.run = scenario_concurrent,
};
