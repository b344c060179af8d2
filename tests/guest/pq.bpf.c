// SPDX-License-Identifier: GPL-2.0
/*
 * pq.h under the real verifier: a deadline queue filled by a syscall
 * program, a third of its jobs moved to new deadlines by another, and
 * drained by a tracing program, one job a getppid(2) of the test's
 * process (tests/guest/pq.c checks the order).
 */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <arenakit/pq.h>
#include "guest/pq_shared.h"

struct ak_pq __arena_global queue;
struct pq_job __arena_global jobs_in[PQ_MAX_JOBS];
struct pq_job __arena_global jobs_out[PQ_MAX_JOBS];
struct ak_pq_handle __arena_global handles[PQ_MAX_JOBS];
unsigned int njobs, next_push, next_move, nout, empty_pops, pop_errors;
int target_tgid, last_error;

SEC("syscall")
int init_queue(void *ctx)
{
	/* Half the jobs' entries kept ahead: the pushes take them, then chunks. */
	return ak_pq_init(&queue, sizeof(struct pq_job)) ?:
	       ak_omap_reserve(&queue.map, PQ_MAX_JOBS / 2, 16);
}

/* Push jobs_in[next_push..njobs), resumable: -AK_EBUDGET, run again. */
SEC("syscall")
int push_jobs(void *ctx)
{
	unsigned int i = next_push + (unsigned int)ak_opaque_zero();
	struct ak_pq_handle handle = {};
	struct pq_job job;
	int err;

	while (i < njobs && i < PQ_MAX_JOBS) {
		ak_cond_break_label(cut);
		job = jobs_in[i];
		err = ak_pq_push(&queue, job.deadline, &job, &handle);
		__ak_arena_store(&handles[i], &handle, sizeof(handle));
		if (err) {
			next_push = i;
			return err;
		}
		i++;
	}
	next_push = i;
	return 0;
cut:
	next_push = i;
	return -AK_EBUDGET;
}

/*
 * Every third job to the deadline jobs_in[] now says (the driver changed
 * it), through its handle: the sleepable call, and the nosleep one for
 * every sixth. Resumable as push_jobs.
 */
SEC("syscall")
int move_jobs(void *ctx)
{
	unsigned int i = next_move + (unsigned int)ak_opaque_zero();
	struct ak_pq_handle handle;
	__u64 deadline;
	int err;

	while (i < njobs && i < PQ_MAX_JOBS) {
		ak_cond_break_label(cut);
		if (i % 3 == 0) {
			/* Word by word: a struct copy from the arena loses its cast (arena.h). */
			__ak_arena_fetch(&handle, &handles[i], sizeof(handle));
			deadline = jobs_in[i].deadline;
			err = i % 6 ? ak_pq_set_prio(&queue, &handle, deadline) :
				      ak_pq_set_prio_nosleep(&queue, &handle, deadline);
			if (err) {
				next_move = i;
				return err;
			}
			__ak_arena_store(&handles[i], &handle, sizeof(handle));
		}
		i++;
	}
	next_move = i;
	return 0;
cut:
	next_move = i;
	return -AK_EBUDGET;
}

#if defined(__TARGET_ARCH_arm64)
#define NR_GETPPID	173
#else
#define NR_GETPPID	110
#endif

/* Each getppid of the test's process takes the job of the earliest deadline. */
SEC("tp_btf/sys_enter")
int BPF_PROG(drain_one, struct pt_regs *regs, long id)
{
	struct pq_job job = {};	/* written by the pop; the verifier cannot tell */
	struct ak_pq_handle h = {};
	unsigned int n;
	int err;

	if (id != NR_GETPPID || bpf_get_current_pid_tgid() >> 32 != target_tgid)
		return 0;
	err = ak_pq_pop(&queue, &h, &job);
	if (err == -ENOENT) {
		__sync_fetch_and_add(&empty_pops, 1);
		return 0;
	}
	if (err) {
		__sync_fetch_and_add(&pop_errors, 1);
		last_error = err;
		return 0;
	}
	job.deadline = h.prio;	/* the priority it left at: a moved job's new one */
	n = __sync_fetch_and_add(&nout, 1);
	if (n < PQ_MAX_JOBS)
		jobs_out[n] = job;
	return 0;
}

char _license[] SEC("license") = "GPL";
