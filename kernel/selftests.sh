#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# The kernel series' regression check: the tree's own BPF selftests runner
# (tools/testing/selftests/bpf, test_progs) on the stock kernel and on the
# same kernel with kernel/patches/series applied, side by side.
#
#   kernel/selftests.sh        (make kernel-selftests)
#
# 1. SELFTESTS=1 KERNEL=stock kernel/build.sh: the stock kernel configured
#    for the selftests too (its own cache entry), its modules and test_progs.
# 2. A copy of that tree with the series applied (the selftests the series
#    updates included), kernel, modules and test_progs rebuilt incrementally:
#    its own cache entry, named after the stock one and the series' hash.
#    It keeps the stock release string (the loader's mark is in both).
# 3. The tests the series could change run on each kernel in the VM; the
#    logs go to build/selftests-{stock,patched}.log, the tests whose result
#    differs to build/selftests-diff.txt. The exit status is non-zero if a
#    test that passes on stock does not pass with the series.
#
# The first run builds a kernel and test_progs (about an hour on 2 CPUs);
# later runs reuse both. Not part of make test.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
tests=${SELFTESTS_TESTS:-verifier_iterating_callbacks,verifier_arena,verifier_arena_large,arena_list,arena_htab,iters,verifier_bpf_fastcall}
jobs=${JOBS:-$(nproc)}

log() { echo "kernel/selftests.sh: $*" >&2; }

stock=$(SELFTESTS=1 KERNEL=stock "$here/build.sh")
sel=$stock/src/tools/testing/selftests/bpf
if [ ! -e "$stock/.stage-modules" ]; then
	# The selftests' test module links against the kernel's exported symbols.
	log "building the stock kernel's modules (Module.symvers)"
	make -C "$stock/src" -s -j"$jobs" modules >&2
	touch "$stock/.stage-modules"
fi
if [ ! -e "$stock/.stage-test_progs" ]; then
	# Debian's tree carries prog_tests/bpf_attr_size.c without the program
	# its skeleton comes from; a test like that cannot build: leave it out.
	for t in "$sel"/prog_tests/*.c; do
		for s in $(sed -n 's/^#include "\(.*\)\.skel\.h"/\1/p' "$t"); do
			[ -e "$sel/progs/$s.c" ] || grep -q "^$s-deps\|$s\.skel\.h" "$sel/Makefile" ||
				{ log "left out ${t##*/}: the tree lacks progs/$s.c"; mv "$t" "$t.left-out"; break; }
		done
	done
	rm -f "$sel/prog_tests/tests.h"	# the list of tests, made again
	log "building test_progs (long)"
	# clang, ld.lld and llvm-strip without version suffixes, as the Makefile calls them.
	PATH=/usr/lib/llvm-19/bin:$PATH make -C "$sel" -s -j"$jobs" \
		VMLINUX_BTF="$stock/vmlinux" test_progs >&2
	touch "$stock/.stage-test_progs"
fi

series=$(sed 's/#.*//' "$here/patches/series")
series_key=$(for p in $series; do
	echo "== $p"; cat "$here/patches/$p"; done | sha256sum | cut -c1-12)
patched=$stock+series-$series_key
sel_in_tree=/src/tools/testing/selftests/bpf
if [ ! -e "$patched/.done" ]; then
	log "copying the stock tree to $patched and applying the series"
	rm -rf "$patched"
	mkdir -p "$patched"
	cp -a "$stock/src" "$patched/src"
	for p in $series; do
		patch -d "$patched/src" -p1 --forward --batch --quiet < "$here/patches/$p"
	done
	# The selftests' dependency files name the stock tree's paths: their
	# test objects would not see the series' changes to the selftests.
	rm -f "$patched$sel_in_tree"/*.test.o "$patched$sel_in_tree/test_progs"
	log "rebuilding it, its modules and test_progs (incremental)"
	make -C "$patched/src" -s -j"$jobs" bzImage modules >&2
	# The test module's BTF is built on the kernel's: it must be this one's.
	rm -f "$patched$sel_in_tree/bpf_testmod.ko" "$patched$sel_in_tree"/bpf_testmod/*.o
	PATH=/usr/lib/llvm-19/bin:$PATH make -C "$patched$sel_in_tree" -s -j"$jobs" \
		VMLINUX_BTF="$patched/src/vmlinux" test_progs >&2
	cp "$patched/src/arch/x86/boot/bzImage" "$patched/src/vmlinux" "$patched/"
	make -C "$patched/src" -s kernelrelease > "$patched/release"
	touch "$patched/.done"
fi

mkdir -p "$repo/build"
for variant in stock patched; do
	dir=${!variant}
	log "running $tests on the $variant kernel"
	MEM=${MEM:-2G} "$here/vm" -k "$dir" \
		"mount -t debugfs none /sys/kernel/debug; mount -t tracefs none /sys/kernel/tracing;
		 cd $dir$sel_in_tree && ./test_progs -t $tests" \
		> "$repo/build/selftests-$variant.log" 2>&1 || true
	grep -a '^Summary:' "$repo/build/selftests-$variant.log" >&2 ||
		log "no summary in build/selftests-$variant.log: the run did not finish"
done

# "#12/3    name/sub:OK" lines, as test name and result.
results() { sed -n 's/^#[0-9/]*[[:space:]]*\([^:]*\):\([A-Z]*\).*/\1 \2/p' "$1" | sort; }
log "differences (test, stock, patched):"
join -a1 -a2 -e none -o 0,1.2,2.2 <(results "$repo/build/selftests-stock.log") \
	<(results "$repo/build/selftests-patched.log") | awk '$2 != $3' |
	tee "$repo/build/selftests-diff.txt" >&2
! awk '$2 == "OK" && $3 != "OK"' "$repo/build/selftests-diff.txt" | grep -q .
