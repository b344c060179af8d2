// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Every BPF program loads whatever supported clang built it. The other
 * tests load the objects of clang-19 (make's CLANG); make builds every
 * object again with clang-22 into build/clang-22/ (the tool's, the tests',
 * the benchmarks' and the worked example's), and this test loads each of
 * their programs, alone, without running it: what a newer clang emits that
 * the 6.12 verifier or JIT refuses (an atomic the JIT does not take on
 * arena memory, a copy merged into a memcpy without the arena cast) fails
 * here, named by object and program.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <string.h>

#include <arenakit/arena.h>
#include "clock.h"
#include "guest/guest.h"
#include "kernel_features.h"

#define NEW_OBJECTS AK_BUILD_DIR "/clang-22/{user,tests/guest,bench,example}/*.bpf.o"
#define MAX_PROGRAMS 64
#define NAME_SIZE 128

/*
 * Programs that exist to be refused (the tests named load the clang-19 build
 * and check the verifier's words). @always: refused whatever the compiler;
 * otherwise the refusal is clang-19's doing, and a newer clang may well
 * emit what loads (zero_neighbours: clang-22 does not merge the stores
 * into a memset without the arena cast), so either is right.
 */
static const struct {
	const char *name;
	int always;
} refused[] = {
	{ "mistakes/alloc_in_tc", 1 },				/* tests/guest/mistakes.c */
	{ "mistakes/zero_neighbours", 0 },			/* tests/guest/mistakes.c */
	{ "mistakes/copy_arena_struct", 0 },			/* tests/guest/mistakes.c */
	{ "mistakes/count_from_constant_zero", 1 },		/* tests/guest/mistakes.c */
	{ "verifier/reject_infinite_loop", 1 },			/* tests/guest/verifier.c */
	{ "can_loop_kfunc/reject_unchecked_index", 1 },		/* tests/guest/can_loop_kfunc.c */
	{ "can_loop_kfunc/reject_after_callee_drained", 1 },	/* tests/guest/can_loop_kfunc.c */
};

/*
 * Objects, or object/program, that need a change of kernel/patches/ to load
 * (skipped, as their tests and the bench skip them).
 */
static const struct {
	const char *name;
	enum arenakit_feature feature;
} needs[] = {
	{ "may_goto_zero", ARENAKIT_MAY_GOTO_ZERO },	/* may_goto +0, by design */
	/* a kernel without patch 3 WARNs at it: the series stands for the patch */
	{ "may_goto_prologue", ARENAKIT_MAY_GOTO_ZERO },
	{ "can_loop_kfunc", ARENAKIT_CAN_LOOP_KFUNC },	/* calls the kfunc */
	{ "walk/loop_can_loop_kfunc", ARENAKIT_CAN_LOOP_KFUNC },	/* bench/walk.c */
	{ "walk/walk_can_loop_kfunc", ARENAKIT_CAN_LOOP_KFUNC },
};

/* -1 if @object/@program is not one of refused[], else its entry's index. */
static int refused_index(const char *object, const char *program)
{
	size_t i, len = strlen(object);

	for (i = 0; i < ARRAY_SIZE(refused); i++)
		if (!strncmp(refused[i].name, object, len) && refused[i].name[len] == '/' &&
		    !strcmp(refused[i].name + len + 1, program))
			return i;
	return -1;
}

/*
 * 1 if this kernel lacks what @name (an object, or object/program) needs:
 * it is not loaded.
 */
static int lacks_feature(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(needs); i++)
		if (!strcmp(needs[i].name, name))
			return arenakit_feature_probe(needs[i].feature) != 1;
	return 0;
}

static int program_lacks_feature(const char *object, const char *program)
{
	char name[2 * NAME_SIZE];

	snprintf(name, sizeof(name), "%.100s/%.120s", object, program);
	return lacks_feature(name);
}

/* The object's name: "htab" for build/clang-22/tests/guest/htab.bpf.o. */
static void object_name(const char *path, char *name, size_t size)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;

	snprintf(name, size, "%.*s", (int)(strlen(base) - strlen(".bpf.o")), base);
}


/* The names of the object's programs, in its order: how many. */
static int program_names(const char *path, char names[][NAME_SIZE])
{
	struct bpf_object *obj = bpf_object__open_file(path, NULL);
	struct bpf_program *prog;
	int n = 0;

	cr_assert(obj, "cannot open %s: %s", path, strerror(errno));
	bpf_object__for_each_program(prog, obj) {
		cr_assert_lt(n, MAX_PROGRAMS, "%s: over %d programs", path, MAX_PROGRAMS);
		snprintf(names[n++], NAME_SIZE, "%s", bpf_program__name(prog));
	}
	bpf_object__close(obj);
	return n;
}

/*
 * Load, without running, the object's program @only alone, or with @only
 * -1 all of them but refused[]'s: 0, or -errno (the loader printed the
 * verifier's log tail).
 */
static int load(const char *path, const char *object, int only)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = object);
	struct bpf_object *obj = bpf_object__open_file(path, &opts);
	struct bpf_program *prog;
	int i = 0, err, any = 0, pick;

	cr_assert(obj, "cannot open %s: %s", path, strerror(errno));
	bpf_object__for_each_program(prog, obj) {
		pick = only >= 0 ? i == only : refused_index(object, bpf_program__name(prog)) < 0 &&
		       !program_lacks_feature(object, bpf_program__name(prog));
		bpf_program__set_autoload(prog, pick);
		any |= pick;
		i++;
	}
	err = any ? arenakit_load_object(obj) : 0;
	bpf_object__close(obj);
	return err;
}

struct tally {
	int loaded, skipped, bad;
	char failed[4096];
	size_t used;
};

static void wrong(struct tally *t, const char *object, const char *program, const char *why)
{
	t->bad++;
	if (t->used < sizeof(t->failed))
		t->used += snprintf(t->failed + t->used, sizeof(t->failed) - t->used,
				    "\n  %s/%s: %s", object, program, why);
}

/*
 * One load per object, of every program but refused[]'s; if it fails, each
 * program is loaded alone, to name every one that fails. Each of refused[]
 * is loaded alone.
 */
static void check_object(const char *path, struct tally *t)
{
	char object[64], names[MAX_PROGRAMS][NAME_SIZE];
	int i, n = program_names(path, names), err, r, ok;
	double start = monotonic_seconds();

	object_name(path, object, sizeof(object));
	if (lacks_feature(object)) {
		printf("compilers: %s: not loaded: this kernel lacks what it needs\n", path);
		t->skipped += n;
		return;
	}
	err = load(path, object, -1);
	printf("compilers: %s: %d programs, %s (%.2f s)\n", path, n,
	       err ? strerror(-err) : "loaded", monotonic_seconds() - start);
	for (i = 0; i < n; i++) {
		if (program_lacks_feature(object, names[i])) {
			t->skipped++;
			continue;
		}
		r = refused_index(object, names[i]);
		if (r < 0 && !err) {
			t->loaded++;
			continue;
		}
		ok = !load(path, object, i);
		if (r >= 0 && ok && refused[r].always)
			wrong(t, object, names[i], "loaded, but must be refused");
		else if (r < 0 && !ok)
			wrong(t, object, names[i], "refused (its verifier log is above)");
		else
			t->loaded += ok;
	}
}

/*
 * The objects are dealt to SHARES tests, every SHARES-th to each, so that
 * Criterion's workers load them side by side: in one test they were the
 * guest suite's longest.
 */
#define SHARES 4

static void check_share(unsigned int share)
{
	struct tally t = {};
	glob_t objects;
	size_t o;
	double start = monotonic_seconds();

	cr_assert_eq(glob(NEW_OBJECTS, GLOB_BRACE, NULL, &objects), 0,
		     "no objects match %s: make builds them", NEW_OBJECTS);
	cr_assert_geq(objects.gl_pathc, SHARES, "fewer objects than shares");
	for (o = share; o < objects.gl_pathc; o += SHARES)
		check_object(objects.gl_pathv[o], &t);
	globfree(&objects);
	printf("compilers: share %u of %u: %d programs built with clang-22 loaded, %d not tried "
	       "(this kernel lacks what they need), %d wrong, in %.1f s\n", share + 1, SHARES,
	       t.loaded, t.skipped, t.bad, monotonic_seconds() - start);
	cr_expect_eq(t.bad, 0, "built with clang-22, these do not load as with clang-19:%s",
		     t.failed);
	cr_expect_gt(t.loaded, 0);
}

Test(compilers, every_program_built_with_clang_22_loads_share_1, .timeout = 600)
{
	check_share(0);
}

Test(compilers, every_program_built_with_clang_22_loads_share_2, .timeout = 600)
{
	check_share(1);
}

Test(compilers, every_program_built_with_clang_22_loads_share_3, .timeout = 600)
{
	check_share(2);
}

Test(compilers, every_program_built_with_clang_22_loads_share_4, .timeout = 600)
{
	check_share(3);
}
