/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The clock user space times with (the tool, bench/ and the guest tests):
 * CLOCK_MONOTONIC, which setting the date does not move, as seconds for
 * what is printed and as nanoseconds for what is summed.
 */
#ifndef ARENAKIT_USER_CLOCK_H
#define ARENAKIT_USER_CLOCK_H

#include <time.h>

static inline double monotonic_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline unsigned long long monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

#endif /* ARENAKIT_USER_CLOCK_H */
