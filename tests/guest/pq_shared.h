/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What tests/guest/pq.bpf.c and its driver share. */
#ifndef ARENAKIT_TESTS_GUEST_PQ_SHARED_H
#define ARENAKIT_TESTS_GUEST_PQ_SHARED_H

#define PQ_MAX_JOBS 4096

/* A job with a deadline; pushed in id order. */
struct pq_job {
	unsigned long long id;
	unsigned long long deadline;
};

#endif
