/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What tests/guest/bpf_test.h (in the test programs) and the guest driver
 * (tests/guest/guest.c, which prints a failed test's report) share.
 */
#ifndef ARENAKIT_TESTS_GUEST_BPF_TEST_SHARED_H
#define ARENAKIT_TESTS_GUEST_BPF_TEST_SHARED_H

/* The section of the report, so the driver finds it as a map of that name. */
#define TEST_REPORT_SECTION ".data.test"
/* Its size: the longest "file:line: what" a failed test leaves. */
#define TEST_REPORT_SIZE 256

#endif
