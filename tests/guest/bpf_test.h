/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * For guest test programs (SEC("syscall") programs named test_*): checks
 * that, when they fail, leave "file:line: what" for the driver to print,
 * and make the program return the failing line (non-zero).
 *
 *	ak_expect(ak_list_empty(&list));
 *	ak_expect_eq(ak_list_count(&list, NULL), 200);
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
char ak_test_report[AK_TEST_REPORT_SIZE] SEC(AK_TEST_REPORT_SECTION) __weak = {};

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

#define __ak_test_str2(x) #x
#define __ak_test_str(x) __ak_test_str2(x)
#define __AK_TEST_WHERE __FILE__ ":" __ak_test_str(__LINE__) ": "

/* Record a failure (a printf-like message) and evaluate to the line. */
#define ak_test_fail(fmt, args...)					\
	({								\
		BPF_SNPRINTF(ak_test_report, sizeof(ak_test_report),	\
			     __AK_TEST_WHERE fmt, ##args);		\
		__LINE__;						\
	})

#define ak_expect(cond)							\
	do {								\
		if (!(cond))						\
			return ak_test_fail("%s", #cond);		\
	} while (0)

#define ak_expect_eq(a, b)						\
	do {								\
		long long ___ak_a = (long long)(a), ___ak_b = (long long)(b); \
									\
		if (___ak_a != ___ak_b)					\
			return ak_test_fail("%s == %s: %lld, not %lld",	\
					    #a, #b, ___ak_a, ___ak_b);	\
	} while (0)

#endif
