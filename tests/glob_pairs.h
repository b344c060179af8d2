/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Random pattern/string pairs for the fnmatch(3) differential tests, host and guest. */
#ifndef ARENAKIT_TESTS_GLOB_PAIRS_H
#define ARENAKIT_TESTS_GLOB_PAIRS_H

#include <stdlib.h>
#include <string.h>

#define GLOB_PAIRS_SEED 20261203u
#define GLOB_PAIRS_ALPHABET "ab*?[]!-\\"
#define GLOB_PAIRS_MAX_LEN 8

/* Where lib/glob.c and glibc's fnmatch(3) are documented to differ. */
static inline int glob_known_difference(const char *pat)
{
	const char *p;
	int in_class = 0;

	for (p = pat; *p; p++) {
		if (in_class) {
			/* glibc: '\' escapes, '^' negates, [: [= [. are classes */
			if (*p == '\\' || *p == '^' || (*p == '[' && strchr(":=.", p[1])))
				return 1;
			if (*p == ']')
				in_class = 0;
			continue;
		}
		if (*p == '\\' && !p[1])
			return 1;	/* glibc: a trailing '\' is an error */
		if (*p == '\\')
			p++;
		else if (*p == '[')
			in_class = 1, p += (p[1] == '!') + (p[1 + (p[1] == '!')] == ']');
	}
	/* An unclosed '[': literal in both, but glibc then rejects the rest. */
	return in_class;
}

static inline void glob_random_string(char *buf, int max, const char *alphabet, unsigned int *seed)
{
	int len = rand_r(seed) % (max + 1), i;
	int n = strlen(alphabet);

	for (i = 0; i < len; i++)
		buf[i] = alphabet[rand_r(seed) % n];
	buf[len] = '\0';
}

/* One pattern and one string of up to GLOB_PAIRS_MAX_LEN characters. */
static inline void glob_random_pair(char *pat, char *str, unsigned int *seed)
{
	glob_random_string(pat, GLOB_PAIRS_MAX_LEN, GLOB_PAIRS_ALPHABET, seed);
	glob_random_string(str, GLOB_PAIRS_MAX_LEN, GLOB_PAIRS_ALPHABET, seed);
}

#endif
