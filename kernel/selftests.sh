#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# The kernel series' regression check: build the tree's own BPF selftests
# runner (tools/testing/selftests/bpf, test_progs) in a kernel configured
# for it (SELFTESTS=1 kernel/build.sh: its own cache entry), run the tests
# the series could change in the VM, and compare stock with patched.
#
#   kernel/selftests.sh [stock|patched ...]    default: stock patched
#
# Each kernel's log goes to build/selftests-VARIANT.log; with both, the
# tests whose result differs are listed, and the exit status is non-zero
# if a test that passes on stock does not pass on the patched kernel.
#
# `make kernel-selftests` runs it (after installing lld and rsync, which
# the selftests' build needs). Not part of make test: each variant's kernel
# and test_progs take a long build the first time.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
tests=${SELFTESTS_TESTS:-verifier_iterating_callbacks,verifier_arena,verifier_arena_large,arena_list,arena_htab,iters,verifier_bpf_fastcall}
variants=("$@")
[ ${#variants[@]} -gt 0 ] || variants=(stock patched)

log() { echo "kernel/selftests.sh: $*" >&2; }

mkdir -p "$repo/build"
for variant in "${variants[@]}"; do
	dir=$(SELFTESTS=1 KERNEL=$variant "$here/build.sh")
	sel=$dir/src/tools/testing/selftests/bpf
	if [ ! -e "$dir/src/Module.symvers" ]; then
		# The selftests' test module links against the kernel's exported symbols.
		log "building the $variant kernel's modules (Module.symvers)"
		make -C "$dir/src" -s -j"$(nproc)" modules >&2
	fi
	if [ ! -e "$dir/.stage-test_progs" ]; then
		log "building test_progs for the $variant kernel (long)"
		# clang, ld.lld and llvm-strip without version suffixes, as the Makefile calls them.
		PATH=/usr/lib/llvm-19/bin:$PATH make -C "$sel" -s -j"$(nproc)" \
			VMLINUX_BTF="$dir/vmlinux" test_progs >&2
		touch "$dir/.stage-test_progs"
	fi
	log "running $tests on the $variant kernel"
	"$here/vm" -k "$dir" "mount -t debugfs none /sys/kernel/debug; mount -t tracefs none /sys/kernel/tracing;
		cd $sel && ./test_progs -t $tests" \
		> "$repo/build/selftests-$variant.log" 2>&1 || true
	grep -a '^Summary:' "$repo/build/selftests-$variant.log" >&2 ||
		log "no summary in build/selftests-$variant.log: the run did not finish"
done

[ -e "$repo/build/selftests-stock.log" ] && [ -e "$repo/build/selftests-patched.log" ] || exit 0

# "#12/3    name/sub:OK" lines, as test name and result.
results() { sed -n 's/^#[0-9/]*[[:space:]]*\([^:]*\):\([A-Z]*\).*/\1 \2/p' "$1" | sort; }
log "differences (test, stock, patched):"
join -a1 -a2 -e none -o 0,1.2,2.2 <(results "$repo/build/selftests-stock.log") \
	<(results "$repo/build/selftests-patched.log") | awk '$2 != $3' | tee "$repo/build/selftests-diff.txt" >&2
! awk '$2 == "OK" && $3 != "OK"' "$repo/build/selftests-diff.txt" | grep -q .
