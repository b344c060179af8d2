// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Run in the VM: load a BPF object and print the JIT image of each
 * function of one program, as "name<TAB>hex bytes" lines, for
 * bench/replay/replay.sh to replay natively on the host. It loads through
 * the arenakit loader, which refuses a kernel that is not ours.
 *
 *   jit_dump OBJECT PROGRAM
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <arenakit/arena.h>
#include "loader.h"

int main(int argc, char **argv)
{
	static unsigned char image[1 << 20];
	__u32 lens[256], func_info_len = sizeof(struct bpf_func_info);
	struct bpf_func_info funcs[256];
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), i, j, at = 0;
	struct bpf_object *obj;
	struct bpf_program *prog, *other;
	struct btf *btf;

	if (argc != 3) {
		fprintf(stderr, "usage: jit_dump OBJECT PROGRAM\n");
		return 2;
	}
	obj = bpf_object__open_file(argv[1], NULL);
	prog = obj ? bpf_object__find_program_by_name(obj, argv[2]) : NULL;
	if (!prog) {
		fprintf(stderr, "jit_dump: no program %s in %s\n", argv[2], argv[1]);
		return 1;
	}
	bpf_object__for_each_program(other, obj)	/* only the one asked for */
		bpf_program__set_autoload(other, other == prog);
	if (arenakit_load_object(obj)) {
		fprintf(stderr, "jit_dump: cannot load %s from %s\n", argv[2], argv[1]);
		return 1;
	}
	info.jited_prog_insns = (__u64)(unsigned long)image;
	info.jited_prog_len = sizeof(image);
	info.jited_func_lens = (__u64)(unsigned long)lens;
	info.nr_jited_func_lens = ARRAY_SIZE(lens);
	info.func_info = (__u64)(unsigned long)funcs;
	info.nr_func_info = ARRAY_SIZE(funcs);
	info.func_info_rec_size = func_info_len;
	if (bpf_prog_get_info_by_fd(bpf_program__fd(prog), &info, &len) ||
	    info.jited_prog_len > sizeof(image) || info.nr_jited_func_lens > 256) {
		fprintf(stderr, "jit_dump: no JIT image or function list for %s\n", argv[2]);
		return 1;
	}
	btf = btf__load_from_kernel_by_id(info.btf_id);
	for (i = 0; i < info.nr_jited_func_lens; i++) {
		const struct btf_type *t = btf && i < info.nr_func_info ?
					   btf__type_by_id(btf, funcs[i].type_id) : NULL;

		printf("%s\t", t ? btf__name_by_offset(btf, t->name_off) : "?");
		for (j = 0; j < lens[i]; j++)
			printf("%02x", image[at + j]);
		printf("\n");
		at += lens[i];
	}
	btf__free(btf);
	bpf_object__close(obj);
	return 0;
}
