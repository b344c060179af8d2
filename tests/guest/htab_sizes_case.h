/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * One test of tests/guest/htab_sizes.bpf.c, for the KEY_SIZE and VALUE_SIZE
 * defined before each #include of this file (no include guard on purpose):
 * the program test_htab_key<K>_value<V> and the types, globals and helpers
 * it uses, all named after the two sizes.
 */
#ifndef HTAB_SIZES_CASE_ONCE
#define HTAB_SIZES_CASE_ONCE
#define __CASE_CAT(a, b, c, d) a##b##c##d
#define CASE_CAT(a, b, c, d) __CASE_CAT(a, b, c, d)
/* name, suffixed with this case's sizes: key4_1 for KEY_SIZE 4, VALUE_SIZE 1 */
#define C(name) CASE_CAT(name, KEY_SIZE, _, VALUE_SIZE)

#define SALT_KEY 0x5a
#define SALT_VALUE 0x11
#define SALT_REWRITE 0x33
/* Every byte of a value made with salt + POISON differs from salt's. */
#define POISON 0x80

/* Fail, saying which case and entry. */
#define CASE_WHAT "key " __test_str(KEY_SIZE) " value " __test_str(VALUE_SIZE) ": "
#define CASE_FAIL(what, n, err)						\
	test_fail(CASE_WHAT "%s of entry %u: %d", what, n, err)
/* @diff: 0, or 1 + the first byte that differs. */
#define CASE_CHECK(what, n, diff)					\
	do {								\
		int ___d = (diff);					\
									\
		if (___d)						\
			return test_fail(CASE_WHAT "%s of entry %u: byte %d differs", \
					 what, n, ___d - 1);		\
	} while (0)
#endif

/* A long key is whole words, 8-byte aligned (htab.h); a short one any bytes. */
struct C(key) {
	__u8 b[KEY_SIZE];
} __attribute__((aligned(KEY_SIZE > 64 ? 8 : 1)));

struct C(value) {
	__u8 b[VALUE_SIZE];
};

_Static_assert(sizeof(struct C(key)) == KEY_SIZE, "a key of exactly KEY_SIZE bytes");
_Static_assert(sizeof(struct C(value)) == VALUE_SIZE, "a value of exactly VALUE_SIZE bytes");

/* static: a skeleton has no members for them, so their types stay here. */
struct ak_htab __arena_global C(table);
static struct C(key) C(global_key);			/* .bss */
static struct C(value) C(global_value) = { { 1 } };	/* .data */
static struct C(value) C(global_copy);			/* .bss */

/*
 * The key "from the stack" where the value is from the stack too. The
 * verifier gives a whole chain of calls 512 bytes of stack: the frame of
 * the function calling a table macro (its key and value, the macro's
 * 64-byte key copy and 24 bytes of state, spills) plus the table's global
 * functions below it (128 bytes at most, and 8 for each of them that
 * loops, on a kernel that counts may_goto's count: kernel/patches/0004).
 * A 64-byte key and a 256-byte value do not both fit (README, "Start
 * here"): there the key comes from a global, and the "stack" value is a
 * function's static, as the chain has no room left for it either. A
 * 256-byte key comes from a global always, as htab.h advises.
 */
#if KEY_SIZE + VALUE_SIZE <= STACK_ROOM && KEY_SIZE < 256
#define STACK_KEY (&k)
#define STACK_VALUE
#else
#define STACK_KEY (&C(global_key))
#define STACK_VALUE static
#endif

/*
 * The helpers below are global functions: each verified once, on its own,
 * and each with a frame of its own, so that one test's code stays within
 * what one BPF function may be (jumps of 32k instructions) and its stack.
 */
__noinline int C(fill_key)(__ak_nonnull struct C(key) *k, __u32 n)
{
	unsigned int i;

#pragma clang loop unroll(full)
	for (i = 0; i < KEY_SIZE; i++)
		k->b[i] = pattern(n, i, SALT_KEY);
	return 0;
}

__noinline int C(fill_value)(__ak_nonnull struct C(value) *v, __u32 n, __u32 salt)
{
	unsigned int i;

#pragma clang loop unroll(full)
	for (i = 0; i < VALUE_SIZE; i++)
		v->b[i] = pattern(n, i, salt);
	return 0;
}

/* 0 if *@v is entry @n's value made with @salt, or 1 + the first byte that is not. */
__noinline int C(value_diff)(__ak_nonnull const struct C(value) *v, __u32 n, __u32 salt)
{
	unsigned int i;

#pragma clang loop unroll(full)
	for (i = 0; i < VALUE_SIZE; i++)
		if (v->b[i] != pattern(n, i, salt))
			return i + 1;
	return 0;
}

__noinline int C(arena_value_diff)(__arg_arena const struct C(value) __arena *v, __u32 n,
				   __u32 salt)
{
	unsigned int i;

	if (!v)
		return -1;
#pragma clang loop unroll(full)
	for (i = 0; i < VALUE_SIZE; i++)
		if (v->b[i] != pattern(n, i, salt))
			return i + 1;
	return 0;
}

/*
 * Store entry @n's value made with @salt: from the stack or from globals;
 * a new entry (ak_htab_update, NOEXIST), or a @rewrite in place
 * (ak_htab_update_nosleep with EXIST from the stack, ak_htab_update with
 * ANY from globals). 0, or the failing line.
 */
__noinline int C(put)(__u32 n, __u32 salt, int on_stack, int rewrite)
{
	struct C(key) k;
	STACK_VALUE struct C(value) v;
	int err;

	if (on_stack) {
		C(fill_key)(STACK_KEY, n);
		C(fill_value)(&v, n, salt);
		if (rewrite)
			err = ak_htab_update_nosleep(&C(table), STACK_KEY, &v, AK_HTAB_EXIST);
		else
			err = ak_htab_update(&C(table), STACK_KEY, &v, AK_HTAB_NOEXIST);
	} else {
		C(fill_key)(&C(global_key), n);
		C(fill_value)(&C(global_value), n, salt);
		err = ak_htab_update(&C(table), &C(global_key), &C(global_value),
				     rewrite ? AK_HTAB_ANY : AK_HTAB_NOEXIST);
	}
	if (err)
		return CASE_FAIL(on_stack ? "update from the stack" : "update from globals", n, err);
	(void)k;
	return 0;
}

/*
 * Entry @n's value, which must be made with @salt, read by each lookup:
 * in place, copied to the stack, copied to a global.
 */
__noinline int C(check)(__u32 n, __u32 salt)
{
	struct C(key) k;
	STACK_VALUE struct C(value) v;
	struct C(value) __arena *p;
	int err = 0;

	C(fill_key)(STACK_KEY, n);
	p = ak_htab_lookup(&C(table), STACK_KEY, &err);
	if (!p)
		return CASE_FAIL("lookup", n, err);
	CASE_CHECK("lookup", n, C(arena_value_diff)(p, n, salt));

	/* Filled again: clang would keep the loaded words in spill slots. */
	C(fill_key)(STACK_KEY, n);
	C(fill_value)(&v, n, salt + POISON);
	err = ak_htab_lookup_copy(&C(table), STACK_KEY, &v);
	if (err)
		return CASE_FAIL("lookup_copy to the stack", n, err);
	CASE_CHECK("lookup_copy to the stack", n, C(value_diff)(&v, n, salt));

	C(fill_key)(&C(global_key), n);
	C(fill_value)(&C(global_copy), n, salt + POISON);
	err = ak_htab_lookup_copy(&C(table), &C(global_key), &C(global_copy));
	if (err)
		return CASE_FAIL("lookup_copy to a global", n, err);
	CASE_CHECK("lookup_copy to a global", n, C(value_diff)(&C(global_copy), n, salt));
	(void)k;
	return 0;
}

/*
 * Take entry @n out (its value made with @salt): into the stack, into a
 * global (ak_htab_lookup_and_delete), or ak_htab_delete, as @n % 3; then
 * every call must find it gone.
 */
__noinline int C(take)(__u32 n, __u32 salt)
{
	struct C(key) k;
	STACK_VALUE struct C(value) v;
	int err = 0;

	C(fill_key)(STACK_KEY, n);
	switch (n % 3) {
	case 0:
		C(fill_value)(&v, n, salt + POISON);
		err = ak_htab_lookup_and_delete(&C(table), STACK_KEY, &v);
		if (err)
			return CASE_FAIL("lookup_and_delete to the stack", n, err);
		CASE_CHECK("lookup_and_delete to the stack", n, C(value_diff)(&v, n, salt));
		break;
	case 1:
		C(fill_value)(&C(global_copy), n, salt + POISON);
		err = ak_htab_lookup_and_delete(&C(table), STACK_KEY, &C(global_copy));
		if (err)
			return CASE_FAIL("lookup_and_delete to a global", n, err);
		CASE_CHECK("lookup_and_delete to a global", n,
			   C(value_diff)(&C(global_copy), n, salt));
		break;
	default:
		err = ak_htab_delete(&C(table), STACK_KEY);
		if (err)
			return CASE_FAIL("delete", n, err);
	}
	err = 0;
	if (ak_htab_lookup(&C(table), STACK_KEY, &err) || err != -ENOENT)
		return CASE_FAIL("lookup after removal", n, err);
	err = ak_htab_lookup_copy(&C(table), STACK_KEY, &v);
	if (err != -ENOENT)
		return CASE_FAIL("lookup_copy after removal", n, err);
	err = ak_htab_lookup_and_delete(&C(table), STACK_KEY, &v);
	if (err != -ENOENT)
		return CASE_FAIL("lookup_and_delete after removal", n, err);
	err = ak_htab_delete_nosleep(&C(table), STACK_KEY);
	if (err != -ENOENT)
		return CASE_FAIL("delete after removal", n, err);
	(void)k;
	return 0;
}

/* An empty table, for the program below. 0 or the failing line. */
__noinline int C(start)(void)
{
	test_expect_eq(ak_htab_init(&C(table), sizeof(struct C(key)), sizeof(struct C(value)), 16),
		       0);
	return 0;
}

/* The table holds @count entries; with none, destroy it: nothing may be left. */
__noinline int C(expect_count)(__u32 count)
{
	test_expect_eq(ak_htab_count(&C(table)), count);
	if (count)
		return 0;
	test_expect_eq(ak_htab_destroy(&C(table)), 0);
	test_expect_eq(test_live_objects(), 0);
	return 0;
}

/*
 * The program itself keeps nothing on the stack (its checks are in the
 * functions above): the chain of frames under it is the one to count.
 */
SEC("syscall")
int CASE_CAT(test_htab_key, KEY_SIZE, _value, VALUE_SIZE)(void *ctx)
{
	__u32 n;
	int err = C(start)();

	/* Even entries from the stack, odd ones from globals. */
	for (n = ak_opaque_zero(); n < ENTRIES && !err && can_loop; n++)
		err = C(put)(n, SALT_VALUE, !(n & 1), 0);
	for (n = ak_opaque_zero(); n < ENTRIES && !err && can_loop; n++)
		err = C(check)(n, SALT_VALUE);
	err = err ?: C(expect_count)(ENTRIES);
	/* Rewritten in place, the other way round. */
	for (n = ak_opaque_zero(); n < ENTRIES && !err && can_loop; n++)
		err = C(put)(n, SALT_REWRITE, n & 1, 1);
	for (n = ak_opaque_zero(); n < ENTRIES && !err && can_loop; n++)
		err = C(check)(n, SALT_REWRITE);
	err = err ?: C(expect_count)(ENTRIES);
	for (n = ak_opaque_zero(); n < ENTRIES && !err && can_loop; n++)
		err = C(take)(n, SALT_REWRITE);
	return err ?: C(expect_count)(0);
}

#undef STACK_KEY
#undef STACK_VALUE
#undef KEY_SIZE
#undef VALUE_SIZE
