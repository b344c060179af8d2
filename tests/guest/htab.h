/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What tests/guest/htab.bpf.c and its driver share. */
#ifndef ARENAKIT_TESTS_GUEST_HTAB_H
#define ARENAKIT_TESTS_GUEST_HTAB_H

#define HTAB_MAX_OPS 65536

enum { HTAB_OP_LOOKUP, HTAB_OP_INSERT, HTAB_OP_UPDATE, HTAB_OP_DELETE };

struct htab_op {
	unsigned int kind;
	unsigned int key;
	unsigned long long value;
};

/* The context of one cpu_churn run (BPF_PROG_TEST_RUN ctx_in/ctx_out). */
struct htab_churn_args {
	unsigned int first, count;
	unsigned int errors;	/* other than -EBUSY */
	int last_error;
	unsigned int busy;	/* -EBUSY answers, each tried again */
};

#endif
