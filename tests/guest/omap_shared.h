/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What tests/guest/omap.bpf.c and its driver share. */
#ifndef ARENAKIT_TESTS_GUEST_OMAP_SHARED_H
#define ARENAKIT_TESTS_GUEST_OMAP_SHARED_H

#define OMAP_MAX_OPS 65536

enum { OMAP_OP_INSERT, OMAP_OP_DELETE, OMAP_OP_LOOKUP, OMAP_OP_BOUND, OMAP_OP_POP_FIRST };

/* One call: its kind, key and value (or flags) in; its error, key and value out. */
struct omap_op {
	unsigned int kind;
	unsigned int flags;
	unsigned long long key;
	unsigned long long value;
	long long err;
	unsigned long long out_key;
	unsigned long long out_value;
};

#endif
