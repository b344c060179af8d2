/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * arenakit/arena.h - the bpf_arena basics every other header builds on.
 *
 *   __arena                          qualifier of pointers into the arena
 *   __arena_global                   places a global variable in the arena
 *   AK_ARENA_MAP(name, pages, addr)  declares a program's arena map: @pages
 *                                    pages, mapped at user address @addr
 *                                    (0: let the kernel choose)
 *   ak_container_of(p, T, m)         the T whose member m is at p
 *   ARRAY_SIZE(a)                    the number of elements of the array a
 *
 * Every arenakit header includes this one, and this one includes what it
 * needs: in BPF, vmlinux.h (unless the UAPI <linux/bpf.h> came first) and
 * libbpf's <bpf/bpf_helpers.h>, so an arenakit header may be a program's
 * first include. __arena, __arena_global and __arg_arena are defined only if
 * nothing defined them first, and as the 6.12 selftests' bpf_arena_common.h
 * and libbpf define them, so those headers combine with ours in any order.
 * ARRAY_SIZE likewise, as the kernel's tools/include and the selftests'
 * bpf_util.h guard theirs.
 *
 * In user space __arena is empty: the same structures are read through the
 * arena's mmap, where the pointers BPF stored are user addresses already. A
 * loader that opens a skeleton of a program with arena globals of arenakit
 * types includes the arenakit headers naming those types first.
 */
#ifndef __ARENAKIT_ARENA_H
#define __ARENAKIT_ARENA_H

#include <arenakit/loop.h>
#include <arenakit/atomic.h>

#define AK_PAGE_SIZE 4096

#ifdef __BPF__

/*
 * The toolchain, checked before anything else can fail: clang 19 is the
 * oldest tested (18 has the address-space casts too; Debian 12 has no 18),
 * and -mcpu=v3 for the atomics of lock.h and alloc.h, which clang lowers
 * below v3 to "Cannot select: AtomicCmpSwap" (clang's default is v1).
 */
#ifndef __BPF_FEATURE_ADDR_SPACE_CAST
#error "arenakit needs clang 19 or newer for BPF (arena address-space casts)"
#endif
#if !defined(__BPF_CPU_VERSION__) || __BPF_CPU_VERSION__ < 3
#error "arenakit needs -mcpu=v3 or newer (BPF atomics; clang's default is v1)"
#endif

#if !defined(__VMLINUX_H__) && !defined(_UAPI__LINUX_BPF_H__) && !defined(__LINUX_BPF_H__)
#include <vmlinux.h>
#endif
#include <bpf/bpf_helpers.h>

#ifndef __arena
#define __arena __attribute__((address_space(1)))
#endif
#ifndef __arena_global
#define __arena_global __attribute__((address_space(1)))
#endif
/* Tags a global function's argument as an arena pointer (Linux 6.9+). */
#ifndef __arg_arena
#define __arg_arena __attribute((btf_decl_tag("arg:arena")))
#endif

/*
 * libbpf 1.5's __ulong() names its enumerator with an unexpanded
 * __COUNTER__, so two maps using it in one file clash; this one expands it.
 */
#define __ak_concat(a, b) a##b
#define __ak_concat_expanded(a, b) __ak_concat(a, b)
#define __ak_ulong(name, val)						\
	enum { __ak_concat_expanded(__ak_unique_value, __COUNTER__) = val } name

#define AK_ARENA_MAP(name, pages, user_addr)				\
	struct {							\
		__uint(type, BPF_MAP_TYPE_ARENA);			\
		__uint(map_flags, BPF_F_MMAPABLE);			\
		__uint(max_entries, pages);				\
		__ak_ulong(map_extra, user_addr);			\
	} name SEC(".maps")

/*
 * The arena's page kfuncs: sleepable programs only on 6.12 (SEC("syscall"),
 * SEC("*.s")). pahole 1.24 emits no kfunc declarations into vmlinux.h.
 */
void __arena *bpf_arena_alloc_pages(void *map, void __arena *addr, __u32 page_cnt,
				    int node_id, __u64 flags) __ksym __weak;
void bpf_arena_free_pages(void *map, void __arena *ptr, __u32 page_cnt) __ksym __weak;

#else /* user space */

#include <stddef.h>

#ifndef __arena
#define __arena
#endif
#ifndef __arena_global
#define __arena_global
#endif
#ifndef __arg_arena
#define __arg_arena
#endif

#endif /* __BPF__ */

/*
 * __ak_arena_clamp(p): the arena pointer @p, which a reader with no lock
 * loaded and follows before it knows that what it read was consistent (a
 * sequence count's reader, omap_impl_read.h), kept inside the arena. In BPF
 * that is nothing: the JIT adds the arena's base to a pointer's low 32
 * bits, the kernel's mapping has a guard past both ends, and a load from
 * a page not mapped (one the allocator gave back) reads 0.
 *
 * In user space a build whose readers race with writers defines
 * AK_ARENA_CLAMP(p), an address in its arena, to do the same, and so
 * promises what the kernel's mapping gives: from any address it returns,
 * 3056 bytes can be read (an ordered map's reach, __AK_OMAP_READ_REACH),
 * and memory its allocator gives back stays readable while a reader may
 * stand on it. The explorer's emulated arena keeps both. An arena's mmap
 * keeps neither: it ends where the arena does, and a read of a page the
 * allocator gave back (a sleepable free, a trim: ak_omap_trim's nodes)
 * maps a new page there that the arena then holds for no one (SIGSEGV
 * with BPF_F_SEGV_ON_FAULT).
 * So a loader does not define it (user.h and omap_user.h refuse it), and
 * without it __AK_ARENA_CLAMPED is 0 and such a reader takes the lock.
 */
#if defined(__BPF__)
#define __ak_arena_clamp(p) (p)
#define __AK_ARENA_CLAMPED 1
#elif defined(AK_ARENA_CLAMP)
#define __ak_arena_clamp(p) ((typeof(p))AK_ARENA_CLAMP(p))
#define __AK_ARENA_CLAMPED 1
#else
#define __ak_arena_clamp(p) (p)
#define __AK_ARENA_CLAMPED 0
#endif

/*
 * What user space asks of AK_ALLOC_PROGRAM (alloc.h) through
 * ak_arena_alloc() (user.h): @size bytes; the program answers with the
 * object's address as user space sees it in the arena's mmap, or @err.
 */
struct ak_alloc_request {
	unsigned long long size;
	unsigned long long addr;
	int err;
	int unused;
};

/*
 * Between stores of zero to neighbouring arena fields: clang-19 merges such
 * stores into a memset that it lowers without the arena address cast, and
 * the verifier refuses the program ("invalid mem access 'scalar'").
 */
#define ak_arena_store_barrier() asm volatile("" ::: "memory")

/*
 * __ak_global marks the library's out-of-line operations: global functions
 * in BPF, so the verifier checks each once, on its own, instead of once per
 * call site with every state of the caller (inlined, a program with a few
 * calls passes the 1M-instruction limit), and each call starts with a fresh
 * loop budget (loop.h). __weak, as several objects of one program may
 * include the header. In user space they are plain inline functions.
 * __ak_nonnull tags a global function's pointer argument the caller
 * guarantees (Linux 6.8+).
 */
#ifdef __BPF__
#define __ak_global __weak __noinline
#define __ak_nonnull __attribute((btf_decl_tag("arg:nonnull")))
#else
#define __ak_global static inline
#define __ak_nonnull
#endif

/*
 * For the helpers of one operation: a static function clang leaves out of
 * line is a call frame of its own (a program has at most 8, and 512 bytes
 * of stack across them) and verified again at each call site anyway.
 */
#define __ak_always_inline inline __attribute__((always_inline))

/*
 * The other way: a static helper kept out of line in BPF, for a frame of
 * its own whose slots are not the caller's (a caller whose frame stays on
 * the stack under the allocator's chain); in user space a plain static
 * inline, so that a program that never calls it does not link what it
 * calls (a reader through the mmap has no allocator).
 */
#ifdef __BPF__
#define __ak_apart static __attribute__((noinline))
#else
#define __ak_apart static inline
#endif

/*
 * Unroll the loop that follows, whose count is a constant (list.h: a group
 * of nodes between two budget checks): clang or gcc.
 */
#ifdef __clang__
#define __ak_unroll _Pragma("clang loop unroll(full)")
#else
#define __ak_unroll _Pragma("GCC unroll 16")
#endif

/*
 * Before a loop over the words of a key or value on the stack: unrolled,
 * every stack access has a constant offset, and the verifier refuses a
 * variable-offset read of the stack.
 */
#ifdef __clang__
#define __AK_UNROLL _Pragma("clang loop unroll(full)")
#else
#define __AK_UNROLL
#endif

/*
 * Copy a value of constant @size from the caller's @src (stack or global,
 * any alignment) into arena @dst (whole words: the last one's bytes past
 * @size are stored as zero), a word at a time through one 8-byte local.
 *
 * Every arena access of the value copies (this and __ak_arena_fetch)
 * is volatile (the hash table's and the ordered map's values). clang turns a plain copy loop into a memcpy, which clang-19
 * lowers without the arena address cast, and the verifier refuses the
 * program ("R0 invalid mem access 'scalar'"; values over 8 bytes).
 * Volatile forbids only merging or dropping that one access; a compiler
 * barrier per word would also make clang reload from memory everything
 * else it holds. So the copy stays a load and a store per word (from an
 * aligned source; bytes are gathered from an unaligned one), unrolled, and
 * no copy of the value is made on the caller's stack.
 */
#define __ak_arena_store(dst, src, size)				\
	do {								\
		volatile unsigned long long __arena *___ak_d =		\
			(volatile unsigned long long __arena *)(dst);	\
		const void *___ak_s = (src);				\
		unsigned long long ___ak_x;				\
		unsigned int ___ak_i;					\
									\
		__AK_UNROLL						\
		for (___ak_i = 0; ___ak_i * 8 + 8 <= (size); ___ak_i++) {	\
			__builtin_memcpy(&___ak_x, (const char *)___ak_s + ___ak_i * 8, 8); \
			___ak_d[___ak_i] = ___ak_x;			\
		}							\
		if ((size) % 8) {					\
			___ak_x = 0;					\
			__builtin_memcpy(&___ak_x, (const char *)___ak_s + (size) / 8 * 8, \
					 (size) % 8);			\
			___ak_d[(size) / 8] = ___ak_x;			\
		}							\
	} while (0)

/*
 * Copy a value of constant @size from arena @src (whole words) to the
 * caller's @dst, a word at a time: volatile loads, as __ak_arena_store
 * explains. User space has no address cast to lose, and one memcpy there
 * lets gcc see that all of @dst was written (it warns of "maybe
 * uninitialized" bytes after a loop of them).
 */
#ifndef __BPF__
#define __ak_arena_fetch(dst, src, size)				\
	__builtin_memcpy((dst), (const void *)(src), (size))
#else
#define __ak_arena_fetch(dst, src, size)				\
	do {								\
		const volatile unsigned long long __arena *___ak_s =	\
			(const volatile unsigned long long __arena *)(src); \
		void *___ak_d = (dst);					\
		unsigned long long ___ak_x;				\
		unsigned int ___ak_i;					\
									\
		__AK_UNROLL						\
		for (___ak_i = 0; ___ak_i * 8 + 8 <= (size); ___ak_i++) {	\
			___ak_x = ___ak_s[___ak_i];			\
			__builtin_memcpy((char *)___ak_d + ___ak_i * 8, &___ak_x, 8); \
		}							\
		if ((size) % 8) {					\
			___ak_x = ___ak_s[(size) / 8];			\
			__builtin_memcpy((char *)___ak_d + (size) / 8 * 8, &___ak_x, \
					 (size) % 8);			\
		}							\
	} while (0)
#endif

#define ak_container_of(ptr, type, member)				\
	((type __arena *)((char __arena *)(ptr) - __builtin_offsetof(type, member)))

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

#endif /* __ARENAKIT_ARENA_H */
