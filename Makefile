# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# arenakit: every entry point. `make help` lists them.
#
# The kernel, libbpf and bpftool are built outside the checkout, in
# $(ARENAKIT_CACHE), by kernel/build.sh; everything else goes to build/.

SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c
.DEFAULT_GOAL := all

KERNEL ?= patched
ARENAKIT_CACHE ?= $(HOME)/.cache/arenakit
export KERNEL ARENAKIT_CACHE KASAN
# In the recipes' environment, so quotes in them reach the guest's shell intact.
export CMD ARGS

# Debian packages every target needs; `make deps` installs the missing ones.
PACKAGES := linux-source-6.12 xz-utils make gcc libc6-dev bc bison flex \
	libelf-dev libssl-dev zlib1g-dev pahole clang-19 llvm-19 \
	qemu-system-x86 busybox-static libcriterion-dev pkg-config clang-22 patch

# ... and what the tree's BPF selftests need besides (make kernel-selftests),
# and the plots of make bench.
SELFTESTS_PACKAGES := lld-19 rsync
BENCH_PACKAGES := gnuplot-nox

BUILD := build
CLANG := clang-19
LLVM_OBJDUMP := llvm-objdump-19

# The cache entry for this kernel variant (empty until linux-source is installed,
# which is why the public targets re-enter make after `deps`).
KDIR := $(shell kernel/build.sh --dir 2>/dev/null)
KSTAMP := $(KDIR)/.done
LIBBPF_INC := $(KDIR)/libbpf/include
LIBBPF_A := $(KDIR)/libbpf/lib/libbpf.a
BPFTOOL := $(KDIR)/bpftool

# The tool's BPF programs (bpf/) and the guest tests' (tests/guest/), each
# beside the C file that shares its stem and drives it through a skeleton.
TOOL_BPF_OBJS := $(patsubst bpf/%.bpf.c,$(BUILD)/bpf/%.bpf.o,$(wildcard bpf/*.bpf.c))
TEST_BPF_OBJS := $(patsubst tests/guest/%.bpf.c,$(BUILD)/tests/guest/%.bpf.o,\
	$(wildcard tests/guest/*.bpf.c))
BENCH_BPF_OBJS := $(patsubst bench/%.bpf.c,$(BUILD)/bench/%.bpf.o,$(wildcard bench/*.bpf.c))
BPF_OBJS := $(TOOL_BPF_OBJS) $(TEST_BPF_OBJS) $(BENCH_BPF_OBJS)
SKELS := $(BPF_OBJS:.bpf.o=.skel.h)

# Every BPF object again with the newest supported clang, in build/clang-22/
# (the example's too, from the scratch install): tests/guest/compilers.c
# loads each program of them in the VM. The skeletons and the other tests
# use the objects of $(CLANG).
CLANG_NEW := clang-22
NEW_BUILD := $(BUILD)/$(CLANG_NEW)
NEW_EXAMPLE_BPF_OBJ := $(NEW_BUILD)/example/exec_glob.bpf.o
NEW_BPF_OBJS := $(patsubst $(BUILD)/%,$(NEW_BUILD)/%,$(BPF_OBJS)) $(NEW_EXAMPLE_BPF_OBJ)

BPF_CFLAGS := --target=bpf -mcpu=v3 -O2 -g -Wall -Werror \
	-Iinclude -I$(KDIR) -I$(LIBBPF_INC) \
	-idirafter /usr/include/x86_64-linux-gnu -idirafter /usr/include

CFLAGS ?= -O2 -g
# The tree's UAPI headers, as libbpf itself builds with (Debian's predate arenas).
CFLAGS += -std=gnu11 -Wall -Wextra -Werror -Iinclude -Iuser -Ibpf -I$(LIBBPF_INC) -I$(BUILD)/bpf \
	-I$(BUILD)/tests/guest -Ibench -I$(BUILD)/bench \
	-I$(KDIR)/src/tools/include/uapi
LDLIBS := $(LIBBPF_A) -lelf -lz

LOADER_OBJS := $(BUILD)/user/loader.o $(BUILD)/user/kernel_features.o
TOOL_OBJS := $(patsubst user/%.c,$(BUILD)/user/%.o,$(wildcard user/*.c)) \
	$(patsubst bench/%.c,$(BUILD)/bench/%.o,$(filter-out %.bpf.c,$(wildcard bench/*.c)))
HOST_TEST_OBJS := $(patsubst tests/host/%.c,$(BUILD)/tests/host/%.o,$(wildcard tests/host/*.c))
EXPLORE_OBJS := $(patsubst tests/explore/%.c,$(BUILD)/tests/explore/%.o,$(wildcard tests/explore/*.c))
GUEST_TEST_OBJS := $(patsubst tests/guest/%.c,$(BUILD)/tests/guest/%.o,\
	$(filter-out %.bpf.c,$(wildcard tests/guest/*.c))) \
	$(BUILD)/tests/guest/registry.o

TOOL := $(BUILD)/arenakit
HOST_TESTS := $(BUILD)/tests/host_tests
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

.PHONY: all test run vm deps help clean kernel-clean kernel-selftests bench _bench
.PHONY: stress _stress
.PHONY: _all _test _run _vm kernel bpf tool tests host-test guest-test example explore
.PHONY: install uninstall flags

help:
	@echo 'make            install what is missing (as root) and build everything'
	@echo 'make test       ... and run the host tests and, in the VM, the guest tests'
	@echo '                  FILTER=suite/test  run only matching Criterion tests'
	@echo '                  KERNEL=stock       use the unpatched 6.12 kernel'
	@echo '                  KASAN=1            use the kernel with KASAN (its own cache entry)'
	@echo 'make explore    the schedule explorer alone (every schedule up to EXPLORE_BOUND=2'
	@echo '                  preemptions; make test runs it too), then its mutants'
	@echo "make run        boot the VM: arenakit info, then glob over the kernel's file list"
	@echo "                  ARGS='glob PATTERN FILE'  run any arenakit command instead"
	@echo "make vm CMD='...'  boot the VM and run a shell command in it"
	@echo '                  SMP=2 MEM=2G ACCEL=auto|tcg|kvm VM_TIMEOUT=900'
	@echo 'make deps       install the Debian packages only'
	@echo 'make bench      measure everything in the VM, side by side: a table, then'
	@echo '                  build/bench/results.json and plots; BENCH_RUNS=5 BENCH_ARGS=walk'
	@echo 'make stress     arenakit stress, every scenario, lists up to 100M items, in a'
	@echo '                  4-CPU 6 GiB VM; STRESS_ARGS= other arguments (make run ARGS="stress --help")'
	@echo "make kernel-selftests  the tree's BPF selftests on the stock and patched"
	@echo '                  kernels, side by side (long the first time)'
	@echo 'make install    the headers and arenakit.pc under PREFIX=$(PREFIX) (DESTDIR too);'
	@echo '                  make uninstall removes them'
	@echo "make flags      BPFTOOL=, LIBBPF_DIR= and VMLINUX_DIR= of the project's kernel, for"
	@echo '                  your own Makefile: make -C bpf/examples/exec_glob $$(make -s flags)'
	@echo 'make clean      remove build/; make kernel-clean removes the cached kernel'

# Public targets: install packages first, then re-enter make so that KDIR,
# which needs linux-source installed, is computed afresh.
all: deps
	@$(MAKE) --no-print-directory _all
test: deps
	@$(MAKE) --no-print-directory _test
run: deps
	@$(MAKE) --no-print-directory _run
vm: deps
	@$(MAKE) --no-print-directory _vm

stress: deps
	@$(MAKE) --no-print-directory _stress

bench:
	@$(MAKE) --no-print-directory deps PACKAGES='$(PACKAGES) $(BENCH_PACKAGES)'
	@$(MAKE) --no-print-directory _bench

kernel-selftests:
	@$(MAKE) --no-print-directory deps PACKAGES='$(PACKAGES) $(SELFTESTS_PACKAGES)'
	kernel/selftests.sh

deps:
	@missing=$$(for p in $(PACKAGES); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; \
	done); \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" != 0 ]; then \
			echo "make deps: missing Debian packages:" $$missing; \
			echo "make deps: run 'make deps' as root (it uses apt-get), or install them yourself"; \
			exit 1; \
		fi; \
		echo "make deps: installing" $$missing; \
		apt-get update -q && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; \
	fi

_all: kernel bpf tool tests example

kernel: $(KSTAMP)
$(KSTAMP):
	@test -n "$(KDIR)" || { echo "make: cannot name the kernel cache entry (is linux-source-6.12 installed?)"; exit 1; }
	kernel/build.sh

bpf: $(SKELS)
tool: $(TOOL)
tests: $(HOST_TESTS) $(GUEST_TESTS) $(EXPLORE_TESTS) $(NEW_BPF_OBJS)

$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(KSTAMP)
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -Ibpf -MMD -MP -c $< -o $@
$(BUILD)/tests/guest/%.bpf.o: tests/guest/%.bpf.c $(KSTAMP)
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -Itests -MMD -MP -c $< -o $@
$(BUILD)/bench/%.bpf.o: bench/%.bpf.c $(KSTAMP)
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -MMD -MP -c $< -o $@

$(NEW_BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(KSTAMP)
	@mkdir -p $(@D)
	$(CLANG_NEW) $(BPF_CFLAGS) -Ibpf -MMD -MP -c $< -o $@
$(NEW_BUILD)/tests/guest/%.bpf.o: tests/guest/%.bpf.c $(KSTAMP)
	@mkdir -p $(@D)
	$(CLANG_NEW) $(BPF_CFLAGS) -Itests -MMD -MP -c $< -o $@
$(NEW_BUILD)/bench/%.bpf.o: bench/%.bpf.c $(KSTAMP)
	@mkdir -p $(@D)
	$(CLANG_NEW) $(BPF_CFLAGS) -MMD -MP -c $< -o $@

# Keep the objects the skeletons come from: tests read them (bpf_objects.c).
.SECONDARY: $(BPF_OBJS)

# These include the 6.12 selftests' arena headers beside ours.
$(BUILD)/tests/guest/combined.bpf.o $(BUILD)/bench/alloc_vs_frag.bpf.o \
$(NEW_BUILD)/tests/guest/combined.bpf.o $(NEW_BUILD)/bench/alloc_vs_frag.bpf.o: \
	BPF_CFLAGS += -I$(KDIR)/src/tools/testing/selftests/bpf

%.skel.h: %.bpf.o
	$(BPFTOOL) gen skeleton $< name $(notdir $*) > $@.tmp && mv $@.tmp $@

$(BUILD)/user/%.o: user/%.c $(KSTAMP) | $(SKELS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

# The JSON names the compiler of the BPF programs it measured.
$(BUILD)/bench/bench.o: CFLAGS += -DBENCH_BPF_CC='"$(shell $(CLANG) --version | head -1)"'
$(BUILD)/bench/%.o: bench/%.c $(KSTAMP) | $(SKELS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/tests/%.o: tests/%.c $(KSTAMP) | $(SKELS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itests -MMD -MP -c $< -o $@

# Guest tests: one Criterion test per SEC("syscall") program named test_*,
# found in the objects themselves; a new tests/guest/*.bpf.c joins without edits.
$(BUILD)/tests/guest/registry.c: tests/guest/gen-registry.sh $(TEST_BPF_OBJS) $(wildcard include/arenakit/*.h)
	@mkdir -p $(@D)
	LLVM_OBJDUMP=$(LLVM_OBJDUMP) $< $(TEST_BPF_OBJS) > $@.tmp && mv $@.tmp $@
$(BUILD)/tests/guest/registry.o: $(BUILD)/tests/guest/registry.c $(SKELS)
	$(CC) $(CFLAGS) -Itests -c $< -o $@

$(TOOL): $(TOOL_OBJS)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS) -lpthread
# The host tests run under AddressSanitizer and UBSan: the allocator's and the
# list's logic is exercised natively there, so memory errors fail the test.
SANITIZE := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
$(HOST_TEST_OBJS): CFLAGS += $(SANITIZE)
HOST_TEST_ENV := ARENAKIT_KDIR=$(KDIR) LSAN_OPTIONS=suppressions=tests/host/lsan.supp
$(HOST_TESTS): $(HOST_TEST_OBJS) $(LOADER_OBJS)
	$(CC) $(CFLAGS) $(SANITIZE) -o $@ $^ -lcriterion $(LDLIBS) -ldl \
		-Wl,--export-dynamic-symbol=syscall
# The schedule explorer (tests/explore/): the headers in user space, under
# ASan/UBSan, with a scheduler hooked into atomic.h's points.
$(EXPLORE_OBJS): CFLAGS += $(SANITIZE) -pthread
$(EXPLORE_TESTS): $(EXPLORE_OBJS)
	$(CC) $(CFLAGS) $(SANITIZE) -pthread -o $@ $^ -lcriterion
# EXPLORE_BOUND: preemptions per schedule (every schedule up to it is run).
EXPLORE_BOUND ?= 2
EXPLORE_ENV = EXPLORE_BOUND=$(EXPLORE_BOUND) ASAN_OPTIONS=allow_user_segv_handler=1

$(GUEST_TESTS): $(GUEST_TEST_OBJS) $(LOADER_OBJS)
	$(CC) $(CFLAGS) -o $@ $^ -lcriterion $(LDLIBS) -lpthread

# Both runs go on after a failure; the closing line adds them up, and any
# failure (a test, the VM runner, a guest kernel warning) fails the target.
_test: _all
	@rc=0; \
	echo '== host tests'; \
	$(HOST_TEST_ENV) $(HOST_TESTS) $(TEST_ARGS) 2>&1 | tee $(BUILD)/host-tests.log || rc=1; \
	echo '== schedule explorer'; \
	$(EXPLORE_ENV) $(EXPLORE_TESTS) $(TEST_ARGS) 2>&1 | tee $(BUILD)/explore-tests.log || rc=1; \
	$(if $(FILTER),,$(MUTANTS_RUN) || rc=1;) \
	echo '== guest tests (QEMU)'; \
	SMP=$(GUEST_SMP) MEM=$(GUEST_MEM) kernel/vm '$(GUEST_TESTS) --verbose $(TEST_ARGS) 2>&1' 2>&1 | tee $(BUILD)/guest-tests.log || rc=1; \
	tests/summary.sh $(BUILD)/host-tests.log $(BUILD)/explore-tests.log \
		$(BUILD)/guest-tests.log || rc=1; \
	exit $$rc

host-test: $(HOST_TESTS)
	$(HOST_TEST_ENV) $(HOST_TESTS) $(TEST_ARGS) 2>&1

# Each mutant takes one fix back out of the headers: the explorer must find it.
MUTANTS_RUN = CC='$(CC)' CFLAGS='$(CFLAGS) $(SANITIZE) -pthread' EXPLORE_BOUND=$(EXPLORE_BOUND) \
	tests/explore/mutants.sh $(BUILD)/mutants

# The explorer alone, deeper: make explore EXPLORE_BOUND=3.
explore: $(EXPLORE_TESTS)
	$(EXPLORE_ENV) $(EXPLORE_TESTS) $(TEST_ARGS) 2>&1
	$(MUTANTS_RUN)

guest-test: _all
	SMP=$(GUEST_SMP) MEM=$(GUEST_MEM) kernel/vm '$(GUEST_TESTS) $(TEST_ARGS) 2>&1'

# With no ARGS, the main job: the built-in patterns against every path in
# the kernel source tarball, counted, timed and checked against fnmatch(3).
GLOB_DEMO_PATTERNS := -e "*.c" -e "*.[ch]" -e "Documentation/*" -e "*[!a-z]*" -e "*/*/*/Makefile"
KERNEL_FILES := $(BUILD)/kernel-files.txt

$(KERNEL_FILES):
	@mkdir -p $(@D)
	tar -tJf /usr/src/linux-source-6.12.tar.xz | sed -n 's|^linux-source-6.12/||; /[^/]$$/p' > $@.tmp
	mv $@.tmp $@

ifeq ($(ARGS),)
_run: _all $(KERNEL_FILES)
	kernel/vm '$(TOOL) info && $(TOOL) glob --stats --check $(GLOB_DEMO_PATTERNS) $(KERNEL_FILES)'
else
_run: _all
	kernel/vm "$(TOOL) $$ARGS"
endif

# Every figure of one run, the environment and the plots go to build/bench/.
BENCH_RUNS ?= 5
_bench: _all $(KERNEL_FILES)
	bench/run.sh $(BUILD)/bench --runs $(BENCH_RUNS) --glob-input $(KERNEL_FILES) \
		--objects $(BUILD)/tests/guest $(BENCH_ARGS)

# 100M items of 24 bytes: 2.4 GB of arena, so the VM gets 6 GiB.
STRESS_ARGS ?= --size 100000000 all
_stress: _all
	SMP=4 MEM=6G kernel/vm "$(TOOL) stress $(STRESS_ARGS)"

_vm: _all
	@test -n "$$CMD" || { echo "make vm: give a command: make vm CMD='...'"; exit 2; }
	kernel/vm "$$CMD"

# The library as users get it: headers and a pkg-config file whose Cflags
# are for BPF builds (the include path and -mcpu=v3: the headers use
# atomics and may_goto). Header-only, so the .pc goes to share/pkgconfig.
PREFIX ?= /usr/local
VERSION := 0.1.0
HEADERS := $(wildcard include/arenakit/*.h)
INCLUDEDIR := $(PREFIX)/include
PCDIR := $(PREFIX)/share/pkgconfig

install:
	install -d $(DESTDIR)$(INCLUDEDIR)/arenakit $(DESTDIR)$(PCDIR)
	install -m 644 $(HEADERS) $(DESTDIR)$(INCLUDEDIR)/arenakit/
	printf '%s\n' 'prefix=$(PREFIX)' 'includedir=$${prefix}/include' '' \
		'Name: arenakit' \
		'Description: BPF data structures in a bpf_arena (header-only; Cflags are for clang --target=bpf)' \
		'Version: $(VERSION)' 'Cflags: -I$${includedir} -mcpu=v3' \
		> $(DESTDIR)$(PCDIR)/arenakit.pc
	chmod 644 $(DESTDIR)$(PCDIR)/arenakit.pc

uninstall:
	rm -f $(addprefix $(DESTDIR)$(INCLUDEDIR)/arenakit/,$(notdir $(HEADERS))) \
		$(DESTDIR)$(PCDIR)/arenakit.pc
	-rmdir $(DESTDIR)$(INCLUDEDIR)/arenakit 2> /dev/null

flags: $(KSTAMP)
	@echo BPFTOOL=$(BPFTOOL) LIBBPF_DIR=$(KDIR)/libbpf VMLINUX_DIR=$(KDIR)

# The worked example, built as a user would: from a scratch install of the
# headers, through pkg-config only (tests/guest/exec_glob_example.c runs it).
EXAMPLE := $(BUILD)/example/exec_glob
EXAMPLE_ROOT := $(abspath $(BUILD)/example-root)
example: $(EXAMPLE)
$(EXAMPLE): $(HEADERS) $(wildcard bpf/examples/exec_glob/*) $(KSTAMP)
	rm -rf $(EXAMPLE_ROOT)
	$(MAKE) --no-print-directory install DESTDIR=$(EXAMPLE_ROOT) PREFIX=/usr/local > /dev/null
	PKG_CONFIG_LIBDIR=$(EXAMPLE_ROOT)/usr/local/share/pkgconfig PKG_CONFIG_SYSROOT_DIR=$(EXAMPLE_ROOT) \
		$(MAKE) --no-print-directory -C bpf/examples/exec_glob OUT=$(abspath $(@D)) CLANG=$(CLANG) \
		BPFTOOL=$(BPFTOOL) LIBBPF_DIR=$(KDIR)/libbpf VMLINUX_DIR=$(KDIR)

# ... and its BPF object with $(CLANG_NEW), from the same install.
$(NEW_EXAMPLE_BPF_OBJ): $(EXAMPLE)
	PKG_CONFIG_LIBDIR=$(EXAMPLE_ROOT)/usr/local/share/pkgconfig PKG_CONFIG_SYSROOT_DIR=$(EXAMPLE_ROOT) \
		$(MAKE) --no-print-directory -C bpf/examples/exec_glob OUT=$(abspath $(@D)) CLANG=$(CLANG_NEW) \
		BPFTOOL=$(BPFTOOL) LIBBPF_DIR=$(KDIR)/libbpf VMLINUX_DIR=$(KDIR) $(abspath $@)

clean:
	rm -rf $(BUILD)

kernel-clean:
	rm -rf $(KDIR)

-include $(BPF_OBJS:.o=.d) $(NEW_BPF_OBJS:.o=.d) $(TOOL_OBJS:.o=.d) $(HOST_TEST_OBJS:.o=.d) \
	$(GUEST_TEST_OBJS:.o=.d) $(EXPLORE_OBJS:.o=.d)
