// SPDX-License-Identifier: GPL-2.0
/*
 * Programs that fail on purpose (not named test_*, so not in the suite):
 * tests/guest/report.c checks what a failing test tells its reader.
 */
#include "guest/bpf_test.h"

SEC("syscall")
int fails_an_expect_eq(void *ctx)
{
	int two = ak_opaque_zero() + 2;

	test_expect_eq(two + 1, 4);
	return 0;
}

SEC("syscall")
int fails_an_expect(void *ctx)
{
	test_expect(ak_opaque_zero() == 1);
	return 0;
}

char _license[] SEC("license") = "GPL";
