/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What tests/guest/glob.bpf.c and its driver share. */
#ifndef ARENAKIT_TESTS_GUEST_GLOB_SHARED_H
#define ARENAKIT_TESTS_GUEST_GLOB_SHARED_H

/*
 * match_user_string's context: user space passes a string's address, and
 * the run writes back what ak_glob_subject_read_user and the match said.
 */
struct subject_args {
	unsigned long long str;	/* a user-space address */
	int read_err;
	int match;
	unsigned int len;
};

#endif
