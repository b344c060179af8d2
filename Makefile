# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# arenakit: every entry point. `make help` lists them.
#
# The kernel, libbpf and bpftool are built outside the checkout, in
# $(ARENAKIT_CACHE), by kernel/build.sh; everything else goes to build/.

SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c
.DEFAULT_GOAL := all
# A recipe that fails leaves no half-written target behind.
.DELETE_ON_ERROR:

KERNEL ?= patched
ARENAKIT_CACHE ?= $(HOME)/.cache/arenakit
# The guest's architecture: x86_64 (the host's) or arm64, cross-built and
# run under qemu-system-aarch64 (make test ARCH=arm64: the guest tests).
ARCH ?= x86_64
ifeq ($(filter x86_64 arm64,$(ARCH)),)
$(error ARCH must be x86_64 or arm64, not '$(ARCH)')
endif
export KERNEL ARENAKIT_CACHE KASAN ARCH
# In the recipes' environment, so quotes in them reach the guest's shell intact.
export CMD ARGS

# make's one-letter options (-s, -n...), as make 4 puts them first in MAKEFLAGS.
MAKE_FLAG_LETTERS := $(firstword -$(MAKEFLAGS))

# A job per CPU unless -j was given: a cold build is objects by the hundred
# (every BPF program under two compilers), and CI runs plain make test.
# Only at the top: a sub-make shares its parent's jobs.
ifeq ($(MAKELEVEL)$(filter -j% --jobserver%,$(MAKEFLAGS)),0)
MAKEFLAGS += -j$(shell nproc)
endif

# Quiet output, one line per step ("  CC  build/user/loader.o"); V=1 prints
# the commands instead, and make -s neither.
ifeq ($(V),1)
Q :=
msg =
else
Q := @
ifneq ($(findstring s,$(MAKE_FLAG_LETTERS)),)
msg =
else
msg = @printf '  %-7s %s\n' '$(1)' '$(2)';
endif
endif

# arm64's objects and binaries go to build/arm64/, beside the host's.
ifeq ($(ARCH),arm64)
BUILD := build/arm64
else
BUILD := build
endif
CLANG := clang-19
# Every BPF object is built again with the newest supported clang, in
# build/clang-22/ (the example's too, from the scratch install):
# tests/guest/compilers.c loads each program of them in the VM. The
# skeletons and the other tests use the objects of $(CLANG).
CLANG_NEW := clang-22
NEW_BUILD := $(BUILD)/$(CLANG_NEW)
LLVM_OBJDUMP := llvm-objdump-19

# Debian packages. What follows (the kernel cache entry, named after the
# linux-source package's version, and the compilers' include directories)
# needs the base set, so the base set is a prerequisite of this Makefile
# itself: build/deps.mk, made by kernel/deps.sh and remade when deps.sh or
# dpkg's database changes; make restarts once it is made. As root deps.sh
# installs what is missing; otherwise it names the missing packages and the
# command that installs them. bench, replay and kernel-selftests have their
# own sets as prerequisites (deps-bench, deps-selftests). make -n and -q only
# check. help, clean, install, uninstall and kernel-clean need none.
NO_DEPS_GOALS := help clean install uninstall kernel-clean
DEPS_CHECK := $(if $(findstring n,$(MAKE_FLAG_LETTERS))$(findstring q,$(MAKE_FLAG_LETTERS)),--check)
ifneq ($(filter-out $(NO_DEPS_GOALS),$(or $(MAKECMDGOALS),$(.DEFAULT_GOAL))),)
include $(BUILD)/deps.mk
# The compilers' own system include directories, searched after ours, as
# libbpf-bootstrap does: BPF programs that include libc headers (<errno.h>)
# find them and the multiarch directory, with no path named here.
bpf_sys_includes = $(shell $(1) -v -E - < /dev/null 2>&1 | \
	sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')
CLANG_BPF_SYS_INCLUDES := $(call bpf_sys_includes,$(CLANG))
CLANG_NEW_BPF_SYS_INCLUDES := $(call bpf_sys_includes,$(CLANG_NEW))
endif

# Two kernel cache entries (empty without linux-source). KDIR: the kernel
# everything is built against (vmlinux.h, libbpf, bpftool), this
# architecture's BUILD_KERNEL, patched unless set. BOOT_KDIR: the kernel the
# VM boots, the one KERNEL and KASAN name. Objects are built once and run on
# either kernel, as a CO-RE program built on one kernel runs on another: a
# second kernel's suite (KERNEL=stock, KASAN=1) rebuilds nothing. The
# variables are passed by hand: make 4.3 (Debian 12's) gives $(shell) the
# environment make started with, without its command line's variables.
BUILD_KERNEL ?= patched
kernel_dir = $(shell KERNEL='$(1)' KASAN='$(2)' ARENAKIT_CACHE='$(ARENAKIT_CACHE)' \
	ARCH='$(ARCH)' kernel/build.sh --dir 2>/dev/null)
KDIR := $(call kernel_dir,$(BUILD_KERNEL),)
BOOT_KDIR := $(call kernel_dir,$(KERNEL),$(KASAN))
KSTAMP := $(KDIR)/.done
BOOT_KSTAMP := $(BOOT_KDIR)/.done
LIBBPF_INC := $(KDIR)/libbpf/include
LIBBPF_A := $(KDIR)/libbpf/lib/libbpf.a
# The bpftool the build runs on the host (for x86_64, the guest's own).
BPFTOOL := $(KDIR)/host-bpftool

# The tool's BPF programs (user/), the guest tests' (tests/guest/) and the
# benchmarks' (bench/), each beside the C file that shares its stem and
# drives it through a skeleton.
TOOL_BPF_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(wildcard user/*.bpf.c))
# One guest test program is made of two objects that both include arenakit,
# compiled apart and linked (bpftool gen object), as sched_ext builds its
# schedulers: tests/guest/linked/*.bpf.c make build/tests/guest/linked.bpf.o,
# a test object like the others; the parts have no skeleton or tests alone.
LINKED_BPF_OBJ := $(BUILD)/tests/guest/linked.bpf.o
LINKED_PARTS := $(patsubst %.c,$(BUILD)/%.o,$(wildcard tests/guest/linked/*.bpf.c))
TEST_BPF_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(wildcard tests/guest/*.bpf.c)) $(LINKED_BPF_OBJ)
BENCH_BPF_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(wildcard bench/*.bpf.c))
BPF_OBJS := $(TOOL_BPF_OBJS) $(TEST_BPF_OBJS) $(BENCH_BPF_OBJS)
# What the compilers make: every object but the linked one, and its parts.
COMPILED_BPF_OBJS := $(filter-out $(LINKED_BPF_OBJ),$(BPF_OBJS)) $(LINKED_PARTS)
SKELS := $(BPF_OBJS:.bpf.o=.skel.h)
# The same objects built by $(CLANG_NEW).
new = $(patsubst $(BUILD)/%,$(NEW_BUILD)/%,$(1))
# The examples: each folder of bpf/examples with its NAME/NAME.bpf.c.
EXAMPLES := $(patsubst bpf/examples/%/,%,$(sort $(dir $(wildcard bpf/examples/*/*.bpf.c))))
NEW_EXAMPLE_BPF_OBJS := $(patsubst %,$(NEW_BUILD)/example/%.bpf.o,$(EXAMPLES))
NEW_BPF_OBJS := $(call new,$(BPF_OBJS)) $(NEW_EXAMPLE_BPF_OBJS)

# libbpf's name of the architecture (__TARGET_ARCH_x86, _arm64).
BPF_ARCH := $(if $(filter arm64,$(ARCH)),arm64,x86)
BPF_CFLAGS := --target=bpf -D__TARGET_ARCH_$(BPF_ARCH) -mcpu=v3 -O2 -g -Wall -Werror -Iinclude -I$(KDIR) -I$(LIBBPF_INC)
# Include paths by class of program, besides the library's and the kernel's:
# the tool's (user/) and the benchmarks' include only their neighbours; the
# guest tests' include "guest/..." from tests/, and these two the 6.12
# selftests' arena headers beside ours.
$(TEST_BPF_OBJS) $(LINKED_PARTS) $(call new,$(TEST_BPF_OBJS) $(LINKED_PARTS)): \
	BPF_INCLUDES := -Itests
SELFTESTS_ARENA_USERS := $(BUILD)/tests/guest/combined.bpf.o $(BUILD)/bench/alloc_vs_frag.bpf.o
$(SELFTESTS_ARENA_USERS) $(call new,$(SELFTESTS_ARENA_USERS)): \
	BPF_INCLUDES += -I$(KDIR)/src/tools/testing/selftests/bpf

CFLAGS ?= -O2 -g
CFLAGS += -std=gnu11 -Wall -Wextra -Werror
LDLIBS := $(LIBBPF_A) -lelf -lz
# arm64: gcc-aarch64-linux-gnu, with the headers and libraries (Criterion,
# libelf, zlib) of the guest's root in the kernel cache entry.
ifeq ($(ARCH),arm64)
CC := aarch64-linux-gnu-gcc
ARCH_ROOT := $(KDIR)/root
ARCH_LIBDIRS := $(ARCH_ROOT)/usr/lib/aarch64-linux-gnu:$(ARCH_ROOT)/lib/aarch64-linux-gnu
CFLAGS += -idirafter $(ARCH_ROOT)/usr/include
LDFLAGS += $(addprefix -L,$(subst :, ,$(ARCH_LIBDIRS))) -Wl,-rpath-link,$(ARCH_LIBDIRS)
endif
# What talks to the kernel gets libbpf and the tree's UAPI headers, as libbpf
# itself builds with (Debian's predate arenas).
LIBBPF_INCLUDES := -I$(LIBBPF_INC) -I$(KDIR)/src/tools/include/uapi
# Each folder's include paths: the library, its neighbours, and the
# skeletons it uses.
$(BUILD)/user/%.o: INCLUDES := -Iinclude -I$(BUILD)/user $(LIBBPF_INCLUDES)
$(BUILD)/bench/%.o: INCLUDES := -Iinclude -Iuser -I$(BUILD)/user -I$(BUILD)/bench \
	$(LIBBPF_INCLUDES)
$(BUILD)/tests/host/%.o: INCLUDES := -Itests -Iinclude -Iuser -I$(BUILD)/user $(LIBBPF_INCLUDES)
$(BUILD)/tests/system/%.o: INCLUDES := -Itests -Iinclude
$(BUILD)/tests/guest/%.o: INCLUDES := -Itests -Iinclude -Iuser -I$(BUILD)/tests/guest \
	$(LIBBPF_INCLUDES)
$(BUILD)/tests/explore/%.o: INCLUDES := -Itests -Iinclude

LOADER_OBJS := $(BUILD)/user/loader.o $(BUILD)/user/kernel_features.o
TOOL_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(filter-out %.bpf.c,$(wildcard user/*.c)) \
	$(filter-out %.bpf.c,$(wildcard bench/*.c)))
HOST_TEST_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(wildcard tests/host/*.c))
SYSTEM_TEST_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(wildcard tests/system/*.c))
# run_command(), which both of them use.
TEST_COMMAND_OBJ := $(BUILD)/tests/command.o
EXPLORE_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(wildcard tests/explore/*.c))
GUEST_TEST_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(filter-out %.bpf.c,$(wildcard tests/guest/*.c)))
REGISTRY_OBJ := $(BUILD)/tests/guest/registry.o
C_OBJS := $(TOOL_OBJS) $(HOST_TEST_OBJS) $(SYSTEM_TEST_OBJS) $(TEST_COMMAND_OBJ) $(EXPLORE_OBJS) \
	$(GUEST_TEST_OBJS)

TOOL := $(BUILD)/arenakit
HOST_TESTS := $(BUILD)/tests/host_tests
SYSTEM_TESTS := $(BUILD)/tests/system_tests
EXPLORE_TESTS := $(BUILD)/tests/explore_tests
GUEST_TESTS := $(BUILD)/tests/guest_tests

# The guest tests run on four CPUs: the lock, allocator and hash table are
# tested with writers on all of them.
GUEST_SMP ?= 4
# ... and 4 GiB: the million-entry hash table and the long lists of
# tests/guest/ at once.
GUEST_MEM ?= 4G

# Criterion options: FILTER='suite/test' selects tests, CRITERION_ARGS adds more.
TEST_ARGS := --color=never $(if $(FILTER),--filter='$(FILTER)') $(CRITERION_ARGS)

.PHONY: all test test-kernel run vm deps deps-bench deps-selftests help clean kernel-clean kernel-selftests bench bench-kernels replay profile stress
.PHONY: same-code kernel bpf tool tests host-test system-test guest-test example explore install uninstall flags kernel-dir

help:
	@echo 'make            build everything (the kernel, libbpf and bpftool once, in the cache)'
	@echo 'make tool       only the kernel and build/arenakit, no test or benchmark (make run'
	@echo '                  and make stress build only these); make install needs nothing built'
	@echo 'make test       ... and run the host and system tests and, in the VM, the guest tests'
	@echo '                  FILTER=suite/test  run only matching Criterion tests'
	@echo '                  KERNEL=stock       use the unpatched 6.12 kernel'
	@echo '                  ARCH=arm64         an arm64 guest (cross-built, qemu-system-aarch64):'
	@echo '                                     the guest tests and the LSE check only; into'
	@echo '                                     build/arm64/ (run, vm, bench take it too)'
	@echo '                  KASAN=1            use the kernel with KASAN (its own cache entry)'
	@echo "                  GUEST_ENV='VAR=value'  the guest tests' environment"
	@echo '                  each phase is timed: "phases: kernel 0:00, build 2:10, ..." closes it'
	@echo 'make test-kernel  only what depends on the kernel: the guest tests and the system'
	@echo '                  tests that boot it (KERNEL=stock after make test: what CI runs;'
	@echo '                  ARCH=arm64 is make test ARCH=arm64)'
	@echo 'make host-test  the host tests alone; make guest-test the guest tests alone (FILTER too)'
	@echo 'make system-test  the system tests alone: the toolchains, make install, the VM runner'
	@echo '                  and the tool in the VM (FILTER too)'
	@echo 'make explore    the schedule explorer alone (every schedule up to EXPLORE_BOUND=2'
	@echo '                  preemptions; make test runs it too), then its mutants'
	@echo "make run        boot the VM: arenakit info, then glob over the kernel's file list"
	@echo "                  ARGS='glob PATTERN FILE'  run any arenakit command instead"
	@echo "make vm CMD='...'  boot the VM and run a shell command in it (builds the kernel, the"
	@echo '                  tool and the examples first; the tests: make tests)'
	@echo '                  SMP=2 MEM=2G ACCEL=auto|tcg|kvm VM_TIMEOUT=900 ICOUNT=0|1'
	@echo 'make bench      measure everything in the VM, side by side: a table, then'
	@echo '                  build/bench/results.json and plots; BENCH_RUNS=5 BENCH_ARGS=walk,'
	@echo '                  BENCH_ARGS=--quick BENCH_RUNS=1: small sizes only, a check that'
	@echo '                  every case runs and answers right; a first boot with ICOUNT=1 (one'
	@echo '                  run of the sections with targets) puts instructions beside times'
	@echo '                  (BENCH_ICOUNT=0: not; ICOUNT=1: that boot only)'
	@echo 'make bench-kernels  the same on the stock kernel and on ours, each row side by side'
	@echo '                  with its ratio: build/bench-kernels/kernels.txt (BENCH_ARGS=frames:'
	@echo '                  what a call of a bounded loop costs under each kernel; ICOUNT=1)'
	@echo 'make replay     the arena list walks (the bare walk, ak_list_count, ak_list_find,'
	@echo "                  ak_list_for_each_entry) as both kernels JIT them, replayed natively on"
	@echo "                  this host's CPU beside native C and the last make bench: ns/node"
	@echo "                  (bench/replay/replay.py; REPLAY_ARGS='--nodes N --rounds R')"
	@echo 'make profile    where a BPF program'"'"'s instructions go, by function, from a trace'
	@echo '                  of the JIT code under TCG (x86-64): build/profile/profile.txt;'
	@echo "                  PROFILE_ARGS='OPS OBJECT [NAME=VALUE|PROGRAM]... [-- --annotate FUNC]'"
	@echo '                  (bench/profile/profile.sh; the default: the omap bench'"'"'s inserts)'
	@echo 'make stress     arenakit stress, every scenario, lists up to 100M items, in a'
	@echo '                  4-CPU 6 GiB VM; STRESS_ARGS= other arguments (make run ARGS="stress --help")'
	@echo "make kernel-selftests  the tree's BPF selftests on the stock and patched"
	@echo '                  kernels, side by side (long the first time; ARCH=arm64 too)'
	@echo 'make install    the headers and arenakit.pc under PREFIX=$(PREFIX) (DESTDIR too);'
	@echo '                  make uninstall removes them'
	@echo "make flags      BPFTOOL=, LIBBPF_DIR= and VMLINUX_DIR= of the project's kernel, for"
	@echo '                  your own Makefile: make -C bpf/examples exec_glob $$(make -s flags)'
	@echo '                  after make install'
	@echo 'make kernel-dir the kernel cache entry KERNEL= and KASAN= name (builds nothing)'
	@echo 'make example    the worked examples (bpf/examples: exec_glob, open_policy, top_opens) built from'
	@echo '                  a scratch install in build/example/ (make does it too)'
	@echo 'make same-code BASE=REV  is every BPF object the same code as at REV, function by'
	@echo '                  function? (tests/same_code.sh; for changes that only move code)'
	@echo 'make clean      remove build/; make kernel-clean removes the cached kernel'
	@echo 'make deps       install the Debian packages only (kernel/deps.sh; as root)'
	@echo ''
	@echo 'Every goal but help, clean, kernel-clean, install and uninstall needs'
	@echo 'build/deps.mk, made by kernel/deps.sh: as root it installs the Debian packages'
	@echo 'that are missing (bench, replay and kernel-selftests add their own sets);'
	@echo 'otherwise it names them and stops.'
	@echo 'V=1 prints the commands instead of one line per step.'

# The base set (see the top): made before anything else, as make remakes
# its makefiles first. /var/lib/dpkg/status changes whenever a package does.
$(BUILD)/deps.mk: kernel/deps.sh /var/lib/dpkg/status
	$(Q)kernel/deps.sh $(DEPS_CHECK) $(filter arm64,$(ARCH))
	$(Q)mkdir -p $(@D)
	$(Q)echo '# kernel/deps.sh found the base set installed' > $@
deps: $(BUILD)/deps.mk
deps-bench deps-selftests: $(BUILD)/deps.mk
deps-bench:
	$(Q)kernel/deps.sh $(DEPS_CHECK) bench
deps-selftests:
	$(Q)kernel/deps.sh $(DEPS_CHECK) kernel-selftests $(filter arm64,$(ARCH))

all: kernel bpf tool tests example

kernel: $(KSTAMP) $(BOOT_KSTAMP)
$(KSTAMP):
	$(call msg,KERNEL,$(KDIR))
	$(Q)KERNEL=$(BUILD_KERNEL) KASAN= kernel/build.sh > /dev/null
ifneq ($(BOOT_KDIR),$(KDIR))
$(BOOT_KSTAMP):
	$(call msg,KERNEL,$(BOOT_KDIR))
	$(Q)kernel/build.sh > /dev/null
endif

bpf: $(SKELS)
tool: $(TOOL)
# The host's tests run on the host only; arm64 builds the guest's.
ifeq ($(ARCH),arm64)
tests: $(GUEST_TESTS) $(NEW_BPF_OBJS)
else
tests: $(HOST_TESTS) $(SYSTEM_TESTS) $(GUEST_TESTS) $(EXPLORE_TESTS) $(NEW_BPF_OBJS)
endif

# One rule per compiler; BPF_INCLUDES (above) differ by the program's class.
$(COMPILED_BPF_OBJS): $(BUILD)/%.bpf.o: %.bpf.c $(KSTAMP)
	$(call msg,CLANG,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) $(BPF_INCLUDES) $(CLANG_BPF_SYS_INCLUDES) -MMD -MP -c $< -o $@
$(call new,$(COMPILED_BPF_OBJS)): $(NEW_BUILD)/%.bpf.o: %.bpf.c $(KSTAMP)
	$(call msg,CLANG,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG_NEW) $(BPF_CFLAGS) $(BPF_INCLUDES) $(CLANG_NEW_BPF_SYS_INCLUDES) -MMD -MP -c $< -o $@

# The linked program, from either compiler's parts (the clang-22 one is
# loaded by tests/guest/compilers.c like every other object there).
$(LINKED_BPF_OBJ): $(LINKED_PARTS)
$(call new,$(LINKED_BPF_OBJ)): $(call new,$(LINKED_PARTS))
$(LINKED_BPF_OBJ) $(call new,$(LINKED_BPF_OBJ)):
	$(call msg,LINK,$@)
	$(Q)$(BPFTOOL) gen object $@ $^

# Keep the objects the skeletons come from: tests read them (tests/system/bpf_objects_system.c).
.SECONDARY: $(BPF_OBJS) $(LINKED_PARTS)

%.skel.h: %.bpf.o
	$(call msg,GEN,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(notdir $*) > $@.tmp && mv $@.tmp $@

# INCLUDES (above) differ by folder.
$(C_OBJS): $(BUILD)/%.o: %.c $(KSTAMP) | $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(INCLUDES) $(CFLAGS) -MMD -MP -c $< -o $@

# The JSON names the compiler of the BPF programs it measured.
$(BUILD)/bench/bench.o $(BUILD)/bench/bench_report.o: CFLAGS += -DBENCH_BPF_CC='"$(shell $(CLANG) --version | head -1)"'

# Guest tests: one Criterion test per SEC("syscall") program named test_*,
# found in the objects themselves; a new tests/guest/*.bpf.c joins without edits.
$(BUILD)/tests/guest/registry.c: tests/guest/gen-registry.sh $(TEST_BPF_OBJS) $(wildcard include/arenakit/*.h)
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)LLVM_OBJDUMP=$(LLVM_OBJDUMP) $< $(TEST_BPF_OBJS) > $@.tmp && mv $@.tmp $@
$(REGISTRY_OBJ): $(BUILD)/tests/guest/registry.c $(SKELS)
	$(call msg,CC,$@)
	$(Q)$(CC) $(INCLUDES) $(CFLAGS) -c $< -o $@

$(TOOL): $(TOOL_OBJS)
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lpthread
# The host tests run under AddressSanitizer and UBSan: the allocator's and the
# list's logic is exercised natively there, so memory errors fail the test.
SANITIZE := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
$(HOST_TEST_OBJS) $(SYSTEM_TEST_OBJS) $(TEST_COMMAND_OBJ): CFLAGS += $(SANITIZE)
HOST_TEST_ENV := ARENAKIT_KDIR=$(KDIR) LSAN_OPTIONS=suppressions=tests/lsan.supp
$(HOST_TESTS): $(HOST_TEST_OBJS) $(TEST_COMMAND_OBJ) $(LOADER_OBJS)
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) $(SANITIZE) -o $@ $^ -lcriterion $(LDLIBS) -ldl \
		-Wl,--export-dynamic-symbol=syscall
# The system tests (tests/system/), as the host tests: the same sanitizers
# and environment.
$(SYSTEM_TESTS): $(SYSTEM_TEST_OBJS) $(TEST_COMMAND_OBJ)
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) $(SANITIZE) -o $@ $^ -lcriterion
# The schedule explorer (tests/explore/): the headers in user space, with a
# scheduler hooked into atomic.h's points, built by clang with its
# thread-sanitizer instrumentation and none of its run-time library (as the
# kernel's KCSAN builds): every load and store of the scenarios' files
# calls explore_access.c, which the scheduler and the emulated arena are
# not built with. UBSan's run-time library is gcc's (the same interface).
EXPLORE_RUNTIME_OBJS := $(addprefix $(BUILD)/tests/explore/,explore.o explore_weak.o \
	explore_arena.o explore_access.o gen.o)
EXPLORE_SANITIZE := -fsanitize=undefined -fno-sanitize=function -fno-sanitize-recover=all \
	-fno-omit-frame-pointer
EXPLORE_TSAN := -fsanitize=thread -mllvm -tsan-distinguish-volatile=1 \
	-mllvm -tsan-instrument-func-entry-exit=0
$(EXPLORE_OBJS): CC := $(CLANG)
# (clang, unlike gcc, warns of a positional initializer that leaves the
# fields after it zero, as the scenario tables' do.)
EXPLORE_CFLAGS := $(EXPLORE_SANITIZE) -pthread -Wno-missing-field-initializers
EXPLORE_LDFLAGS := -fsanitize=undefined -pthread
$(EXPLORE_OBJS): CFLAGS += $(EXPLORE_CFLAGS)
$(filter-out $(EXPLORE_RUNTIME_OBJS),$(EXPLORE_OBJS)): CFLAGS += $(EXPLORE_TSAN)
# The access runtime is called at every load and store: no UBSan checks in it.
$(BUILD)/tests/explore/explore_access.o: CFLAGS += -fno-sanitize=undefined
$(EXPLORE_TESTS): $(EXPLORE_OBJS)
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) $(EXPLORE_LDFLAGS) -o $@ $^ -lcriterion -ldl
# EXPLORE_BOUND: preemptions per schedule (every schedule up to it is run).
EXPLORE_BOUND ?= 2
# EXPLORE_ACCESSES=all: every watched access a point (tests/explore/README.md).
EXPLORE_ENV = EXPLORE_BOUND=$(EXPLORE_BOUND) $(if $(EXPLORE_ACCESSES),EXPLORE_ACCESSES=$(EXPLORE_ACCESSES))

$(GUEST_TESTS): $(GUEST_TEST_OBJS) $(REGISTRY_OBJ) $(LOADER_OBJS)
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ -lcriterion $(LDLIBS) -lpthread

# The guest tests find the tool and the examples under $(BUILD).
$(GUEST_TEST_OBJS): CFLAGS += -DAK_BUILD_DIR='"$(BUILD)"'

# make test's guest run (both architectures), its log for tests/summary.sh.
GUEST_TEST_RUN = SMP=$(GUEST_SMP) MEM=$(GUEST_MEM) \
	kernel/vm '$(GUEST_ENV) $(GUEST_TESTS) --verbose $(TEST_ARGS) 2>&1' 2>&1 | tee $(BUILD)/guest-tests.log

# Each phase of make test is timed: its seconds go to $(PHASES) as they end,
# and the table is printed before the closing line, so every log shows where
# the time went. The build is a phase of its own (make all, then the test
# binaries), run from the recipe so it can be timed (by $(MAKE) itself,
# written out: make passes its jobs to a recipe line that names it).
PHASES := $(BUILD)/phases.txt
phase_start = t0=$$(date +%s)
phase_end = echo "$(1) $$(($$(date +%s) - t0))" >> $(PHASES); t0=$$(date +%s)
phase_begin = mkdir -p $(BUILD); : > $(PHASES); $(phase_start)

# The suites run on after a failure; the closing line adds them up, and any
# failure (a test, the VM runner, a guest kernel warning) fails the target.
# ARCH=arm64 runs the guest tests alone: the others are the host's.
# What depends on the kernel (the guest tests, the LSE check, the system
# tests that boot it) is KERNEL_SUITES; make test-kernel runs only that,
# for a second kernel in one CI run (.ci/run).
ifeq ($(ARCH),arm64)
KERNEL_BUILD_GOALS := all
define KERNEL_SUITES
	echo '== guest tests (QEMU, arm64)'; \
	$(GUEST_TEST_RUN) || rc=1; \
	$(call phase_end,guest-arm64); \
	echo '== a CPU without LSE atomics is refused (QEMU cortex-a57)'; \
	tests/cpu_refused.sh $(TOOL) $(BUILD)/cpu-refused.log || rc=1; \
	$(call phase_end,lse-check)
endef
KERNEL_LOGS := $(BUILD)/guest-tests.log
else
# The stock kernel's suite needs neither the host tests nor the explorer.
KERNEL_BUILD_GOALS := kernel bpf tool example $(SYSTEM_TESTS) $(GUEST_TESTS) $(NEW_BPF_OBJS)
# The system tests that boot the kernel: the VM runner and the tool's glob.
KERNEL_SYSTEM_FILTER := $(or $(FILTER),@(vm_runner|glob_cli)/*)
define KERNEL_SUITES
	echo '== system tests that boot the kernel ($(KERNEL))'; \
	$(HOST_TEST_ENV) $(SYSTEM_TESTS) --color=never --filter='$(KERNEL_SYSTEM_FILTER)' $(CRITERION_ARGS) \
		2>&1 | tee $(BUILD)/system-tests.log || rc=1; \
	$(call phase_end,system-$(KERNEL)); \
	echo '== guest tests (QEMU, $(KERNEL))'; \
	$(GUEST_TEST_RUN) || rc=1; \
	$(call phase_end,guest-$(KERNEL))
endef
KERNEL_LOGS := $(BUILD)/system-tests.log $(BUILD)/guest-tests.log
endif

# Phases: kernel (built once into the cache; 0 when cached), build, then
# each suite; tests/summary.sh prints them beside the counts.
test-kernel:
	@rc=0; $(phase_begin); \
	$(MAKE) --no-print-directory kernel || exit 1; $(call phase_end,kernel); \
	$(MAKE) --no-print-directory $(KERNEL_BUILD_GOALS) || exit 1; $(call phase_end,build); \
	$(KERNEL_SUITES); \
	tests/summary.sh --phases $(PHASES) $(KERNEL_LOGS) || rc=1; \
	exit $$rc

ifeq ($(ARCH),arm64)
test: test-kernel
else
test:
	@rc=0; $(phase_begin); \
	$(MAKE) --no-print-directory kernel || exit 1; $(call phase_end,kernel); \
	$(MAKE) --no-print-directory all || exit 1; $(call phase_end,build); \
	echo '== host tests'; \
	$(HOST_TEST_ENV) $(HOST_TESTS) $(TEST_ARGS) 2>&1 | tee $(BUILD)/host-tests.log || rc=1; \
	$(call phase_end,host); \
	echo '== system tests'; \
	$(HOST_TEST_ENV) $(SYSTEM_TESTS) $(TEST_ARGS) 2>&1 | tee $(BUILD)/system-tests.log || rc=1; \
	$(call phase_end,system); \
	echo '== schedule explorer'; \
	$(EXPLORE_ENV) $(EXPLORE_TESTS) $(TEST_ARGS) 2>&1 | tee $(BUILD)/explore-tests.log || rc=1; \
	$(call phase_end,explorer); \
	$(if $(FILTER),,$(EXPLORE_ALL_RUN) || rc=1; $(call phase_end,explorer-all);) \
	$(if $(FILTER),,$(MUTANTS_RUN) || rc=1; $(call phase_end,mutants);) \
	echo '== guest tests (QEMU)'; \
	$(GUEST_TEST_RUN) || rc=1; \
	$(call phase_end,guest-$(KERNEL)); \
	tests/summary.sh --phases $(PHASES) $(BUILD)/host-tests.log $(BUILD)/system-tests.log \
		$(BUILD)/explore-tests.log $(if $(FILTER),,$(BUILD)/explore-all-tests.log) \
		$(BUILD)/guest-tests.log || rc=1; \
	exit $$rc
endif

host-test: $(HOST_TESTS)
	$(Q)$(HOST_TEST_ENV) $(HOST_TESTS) $(TEST_ARGS) 2>&1

# What the system tests run: the kernel and the tool in the VM, the objects.
system-test: kernel $(SYSTEM_TESTS) $(TOOL) $(TOOL_BPF_OBJS) $(TEST_BPF_OBJS)
	$(Q)$(HOST_TEST_ENV) $(SYSTEM_TESTS) $(TEST_ARGS) 2>&1

# The hand-written scenarios again with every watched access a point
# (tests/explore/README.md), but the allocator's: its plain accesses make
# those take more than ten minutes so.
EXPLORE_ALL_SUITES := explore_htab|explore_list|explore_rculist|explore_lock|explore_weak
EXPLORE_ALL_RUN = echo '== schedule explorer, every access a point'; \
	EXPLORE_BOUND=$(EXPLORE_BOUND) EXPLORE_ACCESSES=all $(EXPLORE_TESTS) --color=never \
	--filter='@($(EXPLORE_ALL_SUITES))/*' $(CRITERION_ARGS) 2>&1 | tee $(BUILD)/explore-all-tests.log

# Each mutant takes one fix back out of the headers: the explorer must find it
# (the script gives the headers' and tests' include paths itself).
MUTANTS_RUN = CC='$(CC)' CFLAGS='$(CFLAGS) $(SANITIZE) -pthread' EXPLORE_BOUND=$(EXPLORE_BOUND) \
	EXPLORE_CC='$(CLANG)' EXPLORE_CFLAGS='$(CFLAGS) $(EXPLORE_CFLAGS)' EXPLORE_TSAN='$(EXPLORE_TSAN)' \
	EXPLORE_LDFLAGS='$(CFLAGS) $(EXPLORE_LDFLAGS)' tests/explore/mutants.sh $(BUILD)/mutants

# The explorer alone, deeper: make explore EXPLORE_BOUND=3.
explore: $(EXPLORE_TESTS)
	$(Q)$(EXPLORE_ENV) $(EXPLORE_TESTS) $(TEST_ARGS) 2>&1
	$(Q)$(MUTANTS_RUN)

guest-test: all
	$(Q)SMP=$(GUEST_SMP) MEM=$(GUEST_MEM) kernel/vm '$(GUEST_ENV) $(GUEST_TESTS) $(TEST_ARGS) 2>&1'

# With no ARGS, the main job: the built-in patterns against every path in
# the kernel source tarball, counted, timed and checked against fnmatch(3).
GLOB_DEMO_PATTERNS := -e "*.c" -e "*.[ch]" -e "Documentation/*" -e "*[!a-z]*" -e "*/*/*/Makefile"
KERNEL_FILES := $(BUILD)/kernel-files.txt

$(KERNEL_FILES):
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)tar -tJf /usr/src/linux-source-6.12.tar.xz | sed -n 's|^linux-source-6.12/||; /[^/]$$/p' > $@.tmp
	$(Q)mv $@.tmp $@

# The tool alone: make run and make stress build no test or benchmark.
ifeq ($(ARGS),)
run: kernel tool $(KERNEL_FILES)
	$(Q)kernel/vm '$(TOOL) info && $(TOOL) glob --stats --check $(GLOB_DEMO_PATTERNS) $(KERNEL_FILES)'
else
run: kernel tool
	$(Q)kernel/vm "$(TOOL) $$ARGS"
endif

# Every figure of one run, the environment and the plots go to build/bench/.
# BENCH_ARGS go to arenakit bench after these (make run ARGS='bench --help').
BENCH_RUNS ?= 5
bench: deps-bench all $(KERNEL_FILES)
	$(Q)TOOL=$(TOOL) bench/run.sh $(BUILD)/bench --runs $(BENCH_RUNS) --glob-input $(KERNEL_FILES) \
		--objects $(BUILD)/tests/guest $(BENCH_ARGS)

# The same, on the stock kernel and then on ours (both built first).
bench-kernels: deps-bench all $(KERNEL_FILES)
	$(Q)KERNEL=stock kernel/build.sh > /dev/null
	$(Q)TOOL=$(TOOL) bench/kernels.sh $(BUILD)/bench-kernels --runs $(BENCH_RUNS) --glob-input $(KERNEL_FILES) \
		--objects $(BUILD)/tests/guest $(BENCH_ARGS)

# The list walks as each kernel's JIT emitted them, replayed natively.
JIT_DUMP := $(BUILD)/jit_dump
$(JIT_DUMP): bench/replay/jit_dump.c $(LOADER_OBJS)
	$(call msg,CC,$@)
	$(Q)$(CC) -Iinclude -Iuser $(LIBBPF_INCLUDES) $(CFLAGS) -o $@ $^ $(LDLIBS)
replay: deps-bench kernel $(JIT_DUMP) $(BUILD)/bench/walk.bpf.o
	$(Q)KERNEL=stock kernel/build.sh > /dev/null
	$(Q)bench/replay/replay.sh $(BUILD)/replay $(REPLAY_ARGS)

# Where a program's instructions go, by function: a trace of the JIT's code
# (bench/profile/profile.sh). The default: the omap bench's inserts, 8k keys.
JIT_RUN := $(BUILD)/jit_run
$(JIT_RUN): bench/profile/jit_run.c $(LOADER_OBJS)
	$(call msg,CC,$@)
	$(Q)$(CC) -Iinclude -Iuser $(LIBBPF_INCLUDES) $(CFLAGS) -o $@ $^ $(LDLIBS)
PROFILE_ARGS ?= 8192 build/bench/omap_vs_rbtree.bpf.o entries=8192 reps=1 setup timed -- --prog timed
profile: deps-bench kernel $(JIT_RUN) $(BENCH_BPF_OBJS)
	$(Q)bench/profile/profile.sh $(BUILD)/profile $(PROFILE_ARGS)

# 100M items of 24 bytes: 2.4 GB of arena, so the VM gets 6 GiB.
STRESS_ARGS ?= --size 100000000 all
stress: kernel tool
	$(Q)SMP=4 MEM=6G kernel/vm "$(TOOL) stress $(STRESS_ARGS)"

# The kernel, the tool and the examples: what a command in the VM most often
# runs (a test binary needs make tests first; make guest-test runs them).
vm: kernel tool example
	@test -n "$$CMD" || { echo "make vm: give a command: make vm CMD='...'"; exit 2; }
	$(Q)kernel/vm "$$CMD"

# A change that only moves code must leave every object's code as it was.
ifneq ($(filter same-code,$(MAKECMDGOALS)),)
ifeq ($(BASE),)
$(error make same-code needs BASE=REV, the revision to compare with)
endif
endif
same-code: bpf tests example
	$(Q)tests/same_code.sh $(BASE)

kernel-selftests: deps-selftests
	$(Q)kernel/selftests.sh

# The library as users get it: headers and a pkg-config file whose Cflags
# are for BPF builds (the include path and -mcpu=v3: the headers use
# atomics and may_goto). Header-only, so the .pc goes to share/pkgconfig.
PREFIX ?= /usr/local
VERSION := 0.1.0
HEADERS := $(wildcard include/arenakit/*.h)
INCLUDEDIR := $(PREFIX)/include
PCDIR := $(PREFIX)/share/pkgconfig

install:
	$(call msg,INSTALL,$(DESTDIR)$(INCLUDEDIR)/arenakit $(DESTDIR)$(PCDIR)/arenakit.pc)
	$(Q)install -d $(DESTDIR)$(INCLUDEDIR)/arenakit $(DESTDIR)$(PCDIR)
	$(Q)install -m 644 $(HEADERS) $(DESTDIR)$(INCLUDEDIR)/arenakit/
	$(Q)printf '%s\n' 'prefix=$(PREFIX)' 'includedir=$${prefix}/include' '' \
		'Name: arenakit' \
		'Description: BPF data structures in a bpf_arena (header-only; Cflags are for clang --target=bpf)' \
		'Version: $(VERSION)' 'Cflags: -I$${includedir} -mcpu=v3' \
		> $(DESTDIR)$(PCDIR)/arenakit.pc
	$(Q)chmod 644 $(DESTDIR)$(PCDIR)/arenakit.pc

uninstall:
	$(call msg,RM,$(DESTDIR)$(INCLUDEDIR)/arenakit $(DESTDIR)$(PCDIR)/arenakit.pc)
	$(Q)rm -f $(addprefix $(DESTDIR)$(INCLUDEDIR)/arenakit/,$(notdir $(HEADERS))) \
		$(DESTDIR)$(PCDIR)/arenakit.pc
	-$(Q)rmdir $(DESTDIR)$(INCLUDEDIR)/arenakit 2> /dev/null

# The kernel cache entry KERNEL and KASAN name, the VM's (builds nothing).
kernel-dir:
	@echo $(BOOT_KDIR)

flags: $(KSTAMP)
	@echo BPFTOOL=$(BPFTOOL) LIBBPF_DIR=$(KDIR)/libbpf VMLINUX_DIR=$(KDIR)

# The worked examples, built as a user would: from a scratch install of the
# headers, through pkg-config only (tests/guest/*_example.c run them).
EXAMPLE_ROOT := $(abspath $(BUILD)/example-root)
EXAMPLE_INSTALLED := $(EXAMPLE_ROOT)/.installed
EXAMPLE_ENV := PKG_CONFIG_LIBDIR=$(EXAMPLE_ROOT)/usr/local/share/pkgconfig \
	PKG_CONFIG_SYSROOT_DIR=$(EXAMPLE_ROOT)
example_args = $(if $(Q),-s) --no-print-directory -C bpf/examples \
	OUT=$(abspath $(BUILD)/example) BPFTOOL=$(BPFTOOL) LIBBPF_DIR=$(KDIR)/libbpf \
	VMLINUX_DIR=$(KDIR) CC='$(CC)' LDFLAGS='$(LDFLAGS)' BPF_ARCH=$(BPF_ARCH)
example: $(addprefix $(BUILD)/example/,$(EXAMPLES))
$(EXAMPLE_INSTALLED): $(HEADERS) $(KSTAMP)
	$(Q)rm -rf $(EXAMPLE_ROOT)
	$(Q)$(MAKE) -s --no-print-directory install DESTDIR=$(EXAMPLE_ROOT) PREFIX=/usr/local
	$(Q)touch $@

# Each example, and its BPF object with $(CLANG_NEW), from the same install.
# $$(MAKE) stays a reference in the rule, so make sees a sub-make and
# passes its jobs on.
define example_rules
$(BUILD)/example/$(1): $(EXAMPLE_INSTALLED) $(wildcard bpf/examples/$(1)/*) bpf/examples/Makefile
	$$(call msg,EXAMPLE,$$@)
	$(Q)$(EXAMPLE_ENV) $$(MAKE) $(call example_args,$(1)) CLANG=$(CLANG) $$(abspath $$@)
$(NEW_BUILD)/example/$(1).bpf.o: $(BUILD)/example/$(1)
	$$(call msg,EXAMPLE,$$@)
	$(Q)$(EXAMPLE_ENV) $$(MAKE) $(call example_args,$(1)) OUT=$(abspath $(NEW_BUILD)/example) \
		CLANG=$(CLANG_NEW) $$(abspath $$@)
endef
$(foreach e,$(EXAMPLES),$(eval $(call example_rules,$(e))))

clean:
	$(call msg,CLEAN,$(BUILD))
	$(Q)rm -rf $(BUILD)

kernel-clean:
	@test -n "$(BOOT_KDIR)" || { echo "make kernel-clean: linux-source-6.12 is not installed, so no cache entry is named"; exit 1; }
	$(call msg,CLEAN,$(BOOT_KDIR))
	$(Q)rm -rf $(BOOT_KDIR)

-include $(COMPILED_BPF_OBJS:.o=.d) $(call new,$(COMPILED_BPF_OBJS:.o=.d)) \
	$(NEW_EXAMPLE_BPF_OBJS:.o=.d) $(C_OBJS:.o=.d)
