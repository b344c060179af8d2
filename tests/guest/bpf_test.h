/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * For guest test programs (SEC("syscall") programs named test_*): checks
 * that, when they fail, leave "file:line: what" for the driver to print,
 * and make the program return the failing line (non-zero).
 *
 *	test_expect(ak_list_empty(&list));
 *	test_expect_eq(ak_list_count(&list, NULL), 200);
 *
 * They return from the function they are in: use them in the test program
 * itself, or in a helper whose non-zero result the program returns.
 */
#ifndef ARENAKIT_TESTS_BPF_TEST_H
#define ARENAKIT_TESTS_BPF_TEST_H

#include <arenakit/arena.h>
#include "bpf_test_shared.h"

/*
 * Its own section, so the driver finds it as a map of its own. Weak, so
 * that objects linked into one program (tests/guest/linked/) share one.
 */
char test_report[TEST_REPORT_SIZE] SEC(TEST_REPORT_SECTION) __weak = {};

/*
 * The allocator's live objects and bytes, every CPU's part summed
 * (ak_alloc_live); for programs that include alloc.h.
 */
#define test_live_objects()						\
	({								\
		unsigned long long ___n = 0;				\
		ak_alloc_live(&ak_allocator, &___n, 0);			\
		___n;							\
	})
#define test_live_bytes()						\
	({								\
		unsigned long long ___n = 0;				\
		ak_alloc_live(&ak_allocator, 0, &___n);			\
		___n;							\
	})

#define __test_str2(x) #x
#define __test_str(x) __test_str2(x)
#define __TEST_WHERE __FILE__ ":" __test_str(__LINE__) ": "

/* Record a failure (a printf-like message) and evaluate to the line. */
#define test_fail(fmt, args...)						\
	({								\
		BPF_SNPRINTF(test_report, sizeof(test_report),		\
			     __TEST_WHERE fmt, ##args);			\
		__LINE__;						\
	})

#define test_expect(cond)						\
	do {								\
		if (!(cond))						\
			return test_fail("%s", #cond);			\
	} while (0)

#define test_expect_eq(a, b)						\
	do {								\
		long long ___test_a = (long long)(a), ___test_b = (long long)(b); \
									\
		if (___test_a != ___test_b)				\
			return test_fail("%s == %s: %lld, not %lld",	\
					 #a, #b, ___test_a, ___test_b);	\
	} while (0)

#endif
