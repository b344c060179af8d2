// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The safety interlock: on the host, the loader refuses before any bpf()
 * call. libbpf reaches the kernel through syscall(__NR_bpf, ...); this
 * binary defines syscall() itself, so every such call is counted (and
 * failed) here instead of reaching the host's kernel.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <criterion/criterion.h>

#include "loader.h"
#include "info.skel.h"

static int bpf_calls;

long syscall(long number, ...)
{
	static long (*real_syscall)(long, ...);
	long arg[6];
	va_list ap;
	int i;

	if (number == __NR_bpf) {
		bpf_calls++;
		errno = ENOSYS;
		return -1;
	}
	va_start(ap, number);
	for (i = 0; i < 6; i++)
		arg[i] = va_arg(ap, long);
	va_end(ap);
	if (!real_syscall)
		real_syscall = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	return real_syscall(number, arg[0], arg[1], arg[2], arg[3], arg[4], arg[5]);
}

static void skip_on_our_kernel(void)
{
	struct utsname uts;

	uname(&uts);
	if (strstr(uts.release, ARENAKIT_RELEASE_MARK))
		cr_skip_test("this is the arenakit kernel: the refusal is for other kernels");
}

Test(interlock, kernel_check_names_the_reason)
{
	char why[512] = "";

	skip_on_our_kernel();
	cr_expect_eq(arenakit_kernel_check(why, sizeof(why)), -EPERM);
	cr_expect(strstr(why, "refusing to load BPF"), "reason: %s", why);
	cr_expect(strstr(why, ARENAKIT_RELEASE_MARK), "reason: %s", why);
}

Test(interlock, skeleton_load_refused_without_bpf_calls)
{
	struct info *skel;

	skip_on_our_kernel();
	skel = info__open();
	cr_assert(skel, "info__open: %s", strerror(errno));
	cr_expect_eq(arenakit_load_skeleton(skel->skeleton), -EPERM);
	cr_expect_lt(bpf_program__fd(skel->progs.measure_budget), 0, "a program was loaded");
	info__destroy(skel);
	cr_expect_eq(bpf_calls, 0, "the loader made %d bpf() calls on the host", bpf_calls);
}

Test(interlock, object_load_refused_without_bpf_calls)
{
	struct bpf_object *obj;
	size_t size;
	const void *elf = info__elf_bytes(&size);

	skip_on_our_kernel();
	obj = bpf_object__open_mem(elf, size, NULL);
	cr_assert(obj, "bpf_object__open_mem: %s", strerror(errno));
	cr_expect_eq(arenakit_load_object(obj), -EPERM);
	bpf_object__close(obj);
	cr_expect_eq(bpf_calls, 0, "the loader made %d bpf() calls on the host", bpf_calls);
}

/*
 * The counter above must see libbpf's calls, or the tests prove nothing.
 * Without calling bpf() (never on the host): the process-wide binding of
 * syscall() must be ours, which covers libbpf linked statically or not.
 */
Test(interlock, bpf_calls_are_intercepted)
{
	cr_expect_eq(dlsym(RTLD_DEFAULT, "syscall"), (void *)syscall,
		     "syscall() does not bind to the test's interposer");
	cr_expect_eq(syscall(__NR_bpf, 0, NULL, 0), -1);
	cr_expect_eq(bpf_calls, 1);
}
