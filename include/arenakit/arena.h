/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/arena.h - the bpf_arena basics every other header builds on.
 *
 *   __arena                       qualifier of pointers into the arena
 *   __arena_global                places a global variable in the arena
 *   ARENA_MAP(name, pages, addr)  declares a program's arena map: @pages
 *                                 pages, mapped at user address @addr
 *                                 (0: let the kernel choose)
 *   arena_container_of(p, T, m)   the T whose member m is at p
 *
 * In user space __arena is empty: the same structures are read through the
 * arena's mmap, where the pointers BPF stored are user addresses already.
 */
#ifndef __ARENAKIT_ARENA_H
#define __ARENAKIT_ARENA_H

#include <arenakit/loop.h>

#if defined(__BPF__)

#include <linux/errno.h>	/* the uapi one: glibc's does not build for BPF */

#ifndef __BPF_FEATURE_ADDR_SPACE_CAST
#error "arenakit needs clang with address-space casts for BPF (clang-19 -mcpu=v3)"
#endif

#define __arena __attribute__((address_space(1)))
#define __arena_global __attribute__((address_space(1)))
/* Tags a global function's argument as an arena pointer (Linux 6.9+). */
#ifndef __arg_arena
#define __arg_arena __attribute__((btf_decl_tag("arg:arena")))
#endif

#define ARENA_MAP(name, pages, user_addr)				\
	struct {							\
		__uint(type, BPF_MAP_TYPE_ARENA);			\
		__uint(map_flags, BPF_F_MMAPABLE);			\
		__uint(max_entries, pages);				\
		__ulong(map_extra, user_addr);				\
	} name SEC(".maps")

/* Sleepable programs only on 6.12 (SEC("syscall"), SEC("*.s")). */
void __arena *bpf_arena_alloc_pages(void *map, void __arena *addr, __u32 page_cnt,
				    int node_id, __u64 flags) __ksym __weak;
void bpf_arena_free_pages(void *map, void __arena *ptr, __u32 page_cnt) __ksym __weak;

#else /* user space */

#include <errno.h>
#include <stddef.h>

#define __arena
#define __arena_global
#define __arg_arena

#endif /* __BPF__ */

#define arena_container_of(ptr, type, member)				\
	((type __arena *)((char __arena *)(ptr) - __builtin_offsetof(type, member)))

#endif /* __ARENAKIT_ARENA_H */
