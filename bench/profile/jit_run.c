// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Run in the VM, under bench/profile/profile.sh's trace: load a BPF
 * object, set unsigned int globals of its .bss, run syscall programs in
 * turn (each again while it says -AK_EBUDGET), then print where the JIT
 * put each function of every program it ran, as "KSYM program address
 * length function" lines, for profile.py to count the traced
 * instructions by function. It loads through the
 * arenakit loader, which refuses a kernel that is not ours.
 *
 *   jit_run OBJECT [NAME=VALUE | PROGRAM]...
 *
 * A NAME=VALUE sets the 4-byte global NAME (a phase's op, a size) before
 * the programs after it run; a .bss global that is a struct takes
 * NAME.WORD=VALUE (its WORD-th 4-byte word).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <arenakit/arena.h>
#include <arenakit/loop.h>
#include "loader.h"

/* Runs of one program at most while it says -AK_EBUDGET. */
#define JIT_RUN_MAX_RUNS 10000

static struct bpf_object *obj;
static unsigned char *bss;
static size_t bss_size;

/* The 4-byte word @word of .bss global @name, or NULL. */
static unsigned int *global_word(const char *name, unsigned int word)
{
	struct btf *btf = bpf_object__btf(obj);
	const struct btf_var_secinfo *v;
	const struct btf_type *sec;
	int id, i;

	id = btf ? btf__find_by_name_kind(btf, ".bss", BTF_KIND_DATASEC) : -1;
	if (id < 0 || !bss)
		return NULL;
	sec = btf__type_by_id(btf, id);
	v = btf_var_secinfos(sec);
	for (i = 0; i < btf_vlen(sec); i++, v++) {
		const struct btf_type *var = btf__type_by_id(btf, v->type);

		if (strcmp(btf__name_by_offset(btf, var->name_off), name))
			continue;
		if ((word + 1) * 4 > v->size || v->offset + v->size > bss_size)
			return NULL;
		return (unsigned int *)(bss + v->offset) + word;
	}
	return NULL;
}

static int set_global(const char *arg)
{
	char name[128], *dot, *eq;
	unsigned int *at, word = 0;

	snprintf(name, sizeof(name), "%s", arg);
	eq = strchr(name, '=');
	if (!eq) {	/* the name filled the buffer before its '=' */
		fprintf(stderr, "jit_run: %s: a name of at most %zu bytes\n", arg, sizeof(name) - 2);
		return 1;
	}
	*eq = 0;
	dot = strchr(name, '.');
	if (dot) {
		*dot = 0;
		word = strtoul(dot + 1, NULL, 0);
	}
	at = global_word(name, word);
	if (!at) {
		fprintf(stderr, "jit_run: no 4-byte word %u in a .bss global %s\n", word, name);
		return 1;
	}
	*at = strtoul(eq + 1, NULL, 0);
	return 0;
}

static int run(struct bpf_program *prog)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	int runs;

	for (runs = 0; runs < JIT_RUN_MAX_RUNS; runs++) {
		if (bpf_prog_test_run_opts(bpf_program__fd(prog), &opts)) {
			fprintf(stderr, "jit_run: running %s: %s\n", bpf_program__name(prog),
				strerror(errno));
			return 1;
		}
		if ((int)opts.retval != -AK_EBUDGET)
			break;
	}
	if (opts.retval) {
		fprintf(stderr, "jit_run: %s returned %d\n", bpf_program__name(prog),
			(int)opts.retval);
		return 1;
	}
	return 0;
}

/* Where the JIT put each function of @prog. */
static int print_ksyms(struct bpf_program *prog)
{
	__u32 lens[256], len = sizeof(struct bpf_prog_info), i;
	__u64 ksyms[256];
	struct bpf_func_info funcs[256];
	struct bpf_prog_info info = {};
	struct btf *btf;

	info.jited_func_lens = (__u64)(unsigned long)lens;
	info.nr_jited_func_lens = ARRAY_SIZE(lens);
	info.jited_ksyms = (__u64)(unsigned long)ksyms;
	info.nr_jited_ksyms = ARRAY_SIZE(ksyms);
	info.func_info = (__u64)(unsigned long)funcs;
	info.nr_func_info = ARRAY_SIZE(funcs);
	info.func_info_rec_size = sizeof(struct bpf_func_info);
	if (bpf_prog_get_info_by_fd(bpf_program__fd(prog), &info, &len) ||
	    info.nr_jited_func_lens > ARRAY_SIZE(lens) || info.nr_jited_ksyms > ARRAY_SIZE(ksyms)) {
		fprintf(stderr, "jit_run: no function list for %s\n", bpf_program__name(prog));
		return 1;
	}
	btf = btf__load_from_kernel_by_id(info.btf_id);
	for (i = 0; i < info.nr_jited_func_lens && i < info.nr_jited_ksyms; i++) {
		const struct btf_type *t = btf && i < info.nr_func_info ?
					   btf__type_by_id(btf, funcs[i].type_id) : NULL;

		printf("KSYM %s %llx %u %s\n", bpf_program__name(prog),
		       (unsigned long long)ksyms[i], lens[i],
		       t ? btf__name_by_offset(btf, t->name_off) : bpf_program__name(prog));
	}
	btf__free(btf);
	return 0;
}

int main(int argc, char **argv)
{
	struct bpf_program *prog, *ran[64];
	unsigned int nran = 0, i;
	struct bpf_map *map;
	int a;

	if (argc < 3) {
		fprintf(stderr, "usage: jit_run OBJECT [NAME=VALUE | PROGRAM]...\n");
		return 2;
	}
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj || arenakit_load_object(obj)) {
		fprintf(stderr, "jit_run: cannot load %s\n", argv[1]);
		return 1;
	}
	bpf_object__for_each_map(map, obj)
		if (strstr(bpf_map__name(map), ".bss"))
			bss = bpf_map__initial_value(map, &bss_size);
	for (a = 2; a < argc; a++) {
		if (strchr(argv[a], '=')) {
			if (set_global(argv[a]))
				return 1;
			continue;
		}
		prog = bpf_object__find_program_by_name(obj, argv[a]);
		if (!prog) {
			fprintf(stderr, "jit_run: no program %s in %s\n", argv[a], argv[1]);
			return 1;
		}
		if (run(prog))
			return 1;
		for (i = 0; i < nran && ran[i] != prog; i++)
			;
		if (i == nran && nran < ARRAY_SIZE(ran))
			ran[nran++] = prog;
	}
	for (i = 0; i < nran; i++)
		if (print_ksyms(ran[i]))
			return 1;
	bpf_object__close(obj);
	return 0;
}
