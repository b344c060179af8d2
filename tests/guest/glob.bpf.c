// SPDX-License-Identifier: GPL-2.0
/*
 * Match pattern/string pairs that user space wrote into the arena, writing
 * each result (1 match, 0 no match) next to them. A run that the loop
 * budget cuts returns -AK_EBUDGET with next_pair at the pair it could not
 * finish, and the next run goes on from there; a single pair too costly for
 * a whole budget is reported as -AK_EBUDGET in its result, never as a
 * wrong answer.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <arenakit/glob.h>
#include "glob_shared.h"

#define GLOB_MAX_PAIRS 16384
#define GLOB_TEXT_BYTES (512 * 1024)

AK_ARENA_MAP(arena, 1024, 0);

char __arena_global glob_text[GLOB_TEXT_BYTES];
unsigned int __arena_global glob_pattern_at[GLOB_MAX_PAIRS];
unsigned int __arena_global glob_string_at[GLOB_MAX_PAIRS];
int __arena_global glob_result[GLOB_MAX_PAIRS];

unsigned int pair_count;
unsigned int next_pair;

SEC("syscall")
int match_pairs(void *ctx)
{
	unsigned int i = next_pair + ak_opaque_zero(), slot;
	int result;

	/*
	 * No constant bound on i (the verifier would walk every value of it):
	 * the pair count comes from user space, the slots wrap at the array
	 * size, and can_loop bounds the loop.
	 */
	while (i < pair_count) {
		if (!can_loop)
			goto cut;
		slot = i % GLOB_MAX_PAIRS;
		result = ak_glob_match_len(glob_text + glob_pattern_at[slot] % GLOB_TEXT_BYTES,
					 glob_text + glob_string_at[slot] % GLOB_TEXT_BYTES,
					 AK_GLOB_NUL_TERMINATED);
		glob_result[slot] = result;
		i++;
	}
	next_pair = i;
	return 0;
cut:
	next_pair = i;	/* the next run goes on from here, with a fresh budget */
	return -AK_EBUDGET;
}

/*
 * A user-space string read into a subject (ak_glob_subject_read_user) and
 * matched against the pattern at glob_text[0] (glob_shared.h).
 */

SEC("syscall")
int match_user_string(struct subject_args *args)
{
	struct ak_glob_subject subj;

	args->read_err = ak_glob_subject_read_user(&subj, (const void *)args->str);
	args->len = subj.len;
	args->match = ak_glob_match_subject(glob_text, &subj);
	return 0;
}

char _license[] SEC("license") = "GPL";
