// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Kernel patch 13: the x86-64 JIT encodes an arena load or store at offset
 * 0 without a displacement byte. Read off the JIT image of a list walk:
 * every access indexed by r12 (the arena's base) at offset 0 is
 * "[base + r12]" or "[r12 + r13]", never "[base + r12 + 0x0]". On stock
 * 6.12, which always emits the byte, the same count says so. Other
 * architectures' JITs are not changed by it: the test skips there.
 */
#include <string.h>
#include <sys/utsname.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "guest/guest.h"
#include <arenakit/alloc.h>
#include <arenakit/list.h>
#include "guest/list_long_shared.h"
#include "list_long.skel.h"

struct sib_counts {
	unsigned int zero_disp8;	/* mod 01, an 8-bit displacement of 0 */
	unsigned int no_disp;		/* mod 00 */
};

/* Loads and stores (mov 0x8b/0x89) whose SIB names r12 (REX.X or REX.B). */
static struct sib_counts count_r12_accesses(const unsigned char *code, unsigned int len)
{
	struct sib_counts c = { 0 };
	unsigned int i;

	for (i = 0; i + 4 < len; i++) {
		unsigned char rex = code[i], op = code[i + 1], modrm = code[i + 2];
		unsigned char sib = code[i + 3];
		int index_r12 = (rex & 0x02) && ((sib >> 3) & 7) == 4;
		int base_r12 = (rex & 0x01) && (sib & 7) == 4;

		if ((rex & 0xf0) != 0x40 || (op != 0x8b && op != 0x89) || (modrm & 7) != 4 ||
		    (sib & 0xc0) || !(index_r12 || base_r12))
			continue;
		if ((modrm & 0xc0) == 0x40 && code[i + 4] == 0)
			c.zero_disp8++;
		else if ((modrm & 0xc0) == 0)
			c.no_disp++;
	}
	return c;
}

Test(jit_arena, loads_at_offset_0_carry_no_displacement, .timeout = GUEST_TEST_TIMEOUT)
{
	static unsigned char image[1 << 20];
	struct list_long *skel = list_long__open_and_load();
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	struct sib_counts c;
	struct utsname u;
	int stock;

#ifndef __x86_64__
	cr_skip_test("patch 13 changes x86-64's JIT only; this JIT image is not x86-64 code");
#endif
	cr_assert(skel, "cannot load list_long");
	cr_assert_eq(uname(&u), 0);
	stock = strstr(u.release, "-arenakit-stock") != NULL;
	info.jited_prog_insns = (__u64)(unsigned long)image;
	info.jited_prog_len = sizeof(image);
	cr_assert_eq(bpf_prog_get_info_by_fd(bpf_program__fd(skel->progs.count_bare), &info, &len),
		     0);
	cr_assert_gt(info.jited_prog_len, 0, "no JIT image to read");
	cr_assert_leq(info.jited_prog_len, sizeof(image));
	c = count_r12_accesses(image, info.jited_prog_len);
	printf("jit_arena: count_bare, %u bytes JITed: %u r12-indexed accesses with a zero "
	       "displacement byte, %u without one (%s)\n", info.jited_prog_len, c.zero_disp8,
	       c.no_disp, stock ? "stock" : "patched");
	if (stock) {
		cr_expect_gt(c.zero_disp8, 0, "stock's JIT no longer emits the zero byte");
	} else {
		cr_expect_eq(c.zero_disp8, 0, "accesses at offset 0 still carry a zero byte");
		cr_expect_gt(c.no_disp, 0, "no access at offset 0 found");
	}
	list_long__destroy(skel);
}
