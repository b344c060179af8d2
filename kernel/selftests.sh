#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# The kernel series' regression check: the tree's own BPF selftests runner
# (tools/testing/selftests/bpf, test_progs) on the stock kernel and on the
# same kernel with kernel/patches/series applied, side by side.
#
#   kernel/selftests.sh        (make kernel-selftests)
#   ARCH=arm64 kernel/selftests.sh   (make kernel-selftests ARCH=arm64)
#
# 1. SELFTESTS=1 KERNEL=stock kernel/build.sh: the stock kernel configured
#    for the selftests too (its own cache entry), its modules, test_progs
#    and test_verifier.
# 2. A copy of that tree brought to stock + the series (its selftests
#    included): the same rebuilt incrementally. Only files whose content
#    the series changes are rewritten, so an edited commit message rebuilds
#    nothing and an edited selftest little. It keeps the stock release
#    string (the loader's mark is in both).
# 3. The upstream tests the series could change and the whole of
#    test_verifier run on each kernel in the VM, and the series' own tests
#    ($ours below) on both, from the patched tree's test_progs. The logs
#    go to build/selftests-NAME.log (NAME: stock, stock-ours, patched,
#    verifier-stock, verifier-patched; arm64's to selftests-arm64-NAME),
#    the tests whose result differs to build/selftests-diff.txt (arm64:
#    selftests-arm64-diff.txt). The exit status is non-zero if a test that
#    passes on stock does not pass with the series, or one of the series'
#    own tests does not pass with it.
#
# ARCH=arm64 cross-builds both kernels, their modules and test_progs
# (against the arm64 root kernel/build.sh makes, whose libelf and zlib the
# cross compiler is pointed at) and runs them in the arm64 guest, under TCG.
#
# The first run builds a kernel and test_progs (about an hour on 2 CPUs);
# later runs reuse both. Not part of make test.
set -euo pipefail
# The selftests' Makefiles set their OUTPUT only when they are the first
# make: run from make kernel-selftests, they would build into /.
unset MAKELEVEL MAKEFLAGS MFLAGS

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
# Every verifier_* test (the series changes the verifier), and the runtime
# tests of what it touches: arenas, iterators and loops, tail calls (the
# clock's call must keep the tail-call count), exceptions and callbacks.
tests=${SELFTESTS_TESTS:-verifier,arena_list,arena_htab,arena_atomics,iters,bpf_loop,tailcalls,exceptions,timer}
jobs=${JOBS:-$(nproc)}
arch=${ARCH:-x86_64}
# The series' own tests; arena_jit_disp reads x86-64's encoding, and
# elsewhere only skips.
ours=verifier_may_goto_nop,verifier_may_goto_clock,verifier_may_goto_counted,verifier_may_goto_frames,verifier_may_goto_prologue,may_goto_clock,verifier_can_loop
[ "$arch" != x86_64 ] || ours=$ours,arena_jit_disp
case $arch in
x86_64) image=arch/x86/boot/bzImage kmake=(make) ;;
arm64) image=arch/arm64/boot/Image kmake=(make ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-) ;;
*) echo "kernel/selftests.sh: ARCH must be 'x86_64' or 'arm64', not '$arch'" >&2; exit 2 ;;
esac

log() { echo "kernel/selftests.sh: $*" >&2; }

stock=$(SELFTESTS=1 KERNEL=stock ARCH=$arch "$here/build.sh")
sel=$stock/src/tools/testing/selftests/bpf
# The selftests' make: for arm64 its user-space programs are cross-built,
# the compiler finding the arm64 root's libelf and zlib after its own
# headers and libraries (the root holds no C library headers); clang
# links liburandom_read.so, so the linker flags also go in LIBELF_LIBS.
selmake=(make VMLINUX_BTF="$stock/vmlinux")
if [ "$arch" = arm64 ]; then
	lib=$stock/root/usr/lib/aarch64-linux-gnu
	if [ ! -e "$stock/.stage-root-selftests" ]; then
		# test_progs' sign-file links with libcrypto: its arm64
		# headers and library, unpacked into the root beside the rest.
		debs=$(mktemp -d)
		(cd "$debs" && apt-get download -q -o APT::Sandbox::User="$(id -un)" libssl-dev:arm64 >&2)
		dpkg-deb -x "$debs"/libssl-dev_*.deb "$stock/root"
		rm -rf "$debs"
		touch "$stock/.stage-root-selftests"
	fi
	mkdir -p "$stock/cross-bin"
	for t in /usr/bin/aarch64-linux-gnu-*; do
		ln -sf "$t" "$stock/cross-bin/"
	done
	rm -f "$stock/cross-bin/aarch64-linux-gnu-gcc"
	# Debian's cross compiler reads the host's /usr/include (headers
	# common to all architectures): the root's, and its arm64-only
	# ones (openssl/opensslconf.h), after it.
	printf '#!/bin/sh\nexec /usr/bin/aarch64-linux-gnu-gcc "$@" -idirafter %s -idirafter %s -L%s -Wl,-rpath-link=%s\n' \
		"$stock/root/usr/include" "$stock/root/usr/include/aarch64-linux-gnu" "$lib" "$lib" \
		> "$stock/cross-bin/aarch64-linux-gnu-gcc"
	chmod +x "$stock/cross-bin/aarch64-linux-gnu-gcc"
	selmake=(make ARCH=arm64 CROSS_COMPILE="$stock/cross-bin/aarch64-linux-gnu-"
		 LIBELF_CFLAGS="-idirafter $stock/root/usr/include"
		 LIBELF_LIBS="-L$lib -Wl,-rpath-link=$lib -lelf")
fi
if [ ! -e "$stock/.stage-modules" ]; then
	# The selftests' test module links against the kernel's exported symbols.
	log "building the stock kernel's modules (Module.symvers)"
	"${kmake[@]}" -C "$stock/src" -s -j"$jobs" modules >&2
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
	# A tree copied from another entry (build.sh's sibling) may hold its
	# test modules' build, which names that entry's paths.
	find "$sel"/bpf_test* \( -name '*.o' -o -name '.*.cmd' -o -name '*.ko' -o -name '*.mod' \
		-o -name '*.mod.c' -o -name Module.symvers -o -name modules.order \) -delete
	log "building test_progs (long)"
	# clang, ld.lld and llvm-strip without version suffixes, as the Makefile calls them.
	PATH=/usr/lib/llvm-19/bin:$PATH "${selmake[@]}" -C "$sel" -s -j"$jobs" \
		test_progs test_verifier >&2
	touch "$stock/.stage-test_progs"
fi

series=$(sed 's/#.*//' "$here/patches/series")
patched=$stock+series
sel_in_tree=/src/tools/testing/selftests/bpf
if [ ! -e "$patched/.copied" ]; then
	log "copying the stock tree to $patched"
	rm -rf "$patched"
	mkdir -p "$patched"
	cp -a "$stock/src" "$patched/src"
	# The selftests' dependency files name the stock tree's paths: their
	# test objects would not see the series' changes to the selftests.
	rm -f "$patched$sel_in_tree"/*.test.o "$patched$sel_in_tree/test_progs"
	touch "$patched/.copied"
fi
# Bring the copy to stock + the series, touching only the files whose
# content changes: an edited commit message, or a selftest, rebuilds little.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
files=$( { cat "$patched/.touched" 2>/dev/null || true
	   for p in $series; do sed -n 's|^+++ b/||p' "$here/patches/$p"; done; } | sort -u)
for f in $files; do
	[ -e "$stock/src/$f" ] || continue
	mkdir -p "$scratch/$(dirname "$f")"
	cp -p "$stock/src/$f" "$scratch/$f"
done
for p in $series; do
	patch -d "$scratch" -p1 --forward --batch --quiet < "$here/patches/$p"
done
changed=0
for f in $files; do
	if [ ! -e "$scratch/$f" ]; then
		[ -e "$patched/src/$f" ] && rm -f "$patched/src/$f" && changed=1
	elif ! cmp -s "$scratch/$f" "$patched/src/$f"; then
		mkdir -p "$patched/src/$(dirname "$f")"
		cp "$scratch/$f" "$patched/src/$f"
		changed=1
	fi
done
echo "$files" > "$patched/.touched"
if [ $changed = 1 ] || [ ! -e "$patched/.done" ]; then
	rm -f "$patched/.done"
	log "rebuilding the copy, its modules and test_progs (incremental)"
	"${kmake[@]}" -C "$patched/src" -s -j"$jobs" "${image##*/}" modules >&2
	# The test module's BTF is built on the kernel's: it must be this one's.
	rm -f "$patched$sel_in_tree/bpf_testmod.ko" "$patched$sel_in_tree"/bpf_testmod/*.o
	PATH=/usr/lib/llvm-19/bin:$PATH "${selmake[@]}" -C "$patched$sel_in_tree" -s -j"$jobs" \
		VMLINUX_BTF="$patched/src/vmlinux" test_progs test_verifier >&2
	cp "$patched/src/$image" "$patched/src/vmlinux" "$patched/"
	ln -sf "${image##*/}" "$patched/image"	# what kernel/vm boots
	# arm64's guest root is the stock entry's.
	[ "$arch" = x86_64 ] || ln -sfn "$stock/root" "$patched/root"
	"${kmake[@]}" -C "$patched/src" -s kernelrelease > "$patched/release"
	touch "$patched/.done"
fi

mkdir -p "$repo/build"
logs=$repo/build/selftests-
[ "$arch" = x86_64 ] || logs=$repo/build/selftests-$arch-
# @command in @tree's selftests directory on @kernel, into $logs@name.log.
# The VM starts there: the arm64 guest sees the host's directories it
# starts in (and the checkout's), not the whole of the host's /.
run() {	# name kernel tree command
	log "running $4 on the ${2##*/} kernel"
	cd "$3$sel_in_tree"
	MEM=${MEM:-2G} "$here/vm" -k "$2" \
		"mount -t debugfs none /sys/kernel/debug; mount -t tracefs none /sys/kernel/tracing;
		 cd $3$sel_in_tree && $4" \
		> "$logs$1.log" 2>&1 || true
	grep -a '^Summary:' "$logs$1.log" >&2 ||
		log "no summary in $logs$1.log: the run did not finish"
}
run stock "$stock" "$stock" "./test_progs -t $tests"
# The series' own tests exist only in the patched tree; its test_progs runs
# them on the stock kernel too, where they show what the series changes.
run stock-ours "$stock" "$patched" "./test_progs -t $ours"
run patched "$patched" "$patched" "./test_progs -t $tests,$ours"
run verifier-stock "$stock" "$stock" ./test_verifier
run verifier-patched "$patched" "$patched" ./test_verifier

# "#12/3    name/sub: a description:OK" (test_progs) and "#12/p a
# description OK" (test_verifier) lines, as "name<TAB>result".
tab=$'\t'
# The arm64 guest's consoles end lines with CR LF.
results() {
	cat "$@" | tr -d '\r' |
	sed -n -e "s/^#[0-9/]*[[:space:]]*\(.*\):\([A-Z]*\)\( (SKIP: [0-9/]*)\)\{0,1\}\$/\1$tab\2/p" \
	       -e "s/^#[0-9]*\/\([up]\) \(.*\) \(OK\|FAIL\|SKIP\)\$/test_verifier\/\1 \2$tab\3/p" |
		sort -u -t"$tab" -k1,1
}
# A log without results is a run that failed, not one with nothing to compare.
for name in stock stock-ours patched verifier-stock verifier-patched; do
	[ -n "$(results "${logs}$name.log")" ] ||
		{ log "no test results in ${logs}$name.log"; exit 1; }
done
log "differences (test, stock, patched):"
join -t"$tab" -a1 -a2 -e none -o 0,1.2,2.2 \
	<(results "${logs}stock.log" "${logs}stock-ours.log" \
		  "${logs}verifier-stock.log") \
	<(results "${logs}patched.log" "${logs}verifier-patched.log") |
	awk -F"$tab" '$2 != $3' | tee "${logs}diff.txt" >&2
# Failed: a test that passes on stock and fails (or is missing) with the
# series, or one of the series' own tests that does not pass with it. A
# test that passes on stock and skips with the series is named, not
# failed: a skip is the test's own "could not run here" (timer_lockup
# skips when it cannot reproduce its race within 51 runs, on either
# kernel).
ours_re="^(${ours//,/|})[$tab/]"
awk -F"$tab" '$2 == "OK" && $3 == "SKIP" { print "skipped with the series, passed on stock: " $1 }' \
	"${logs}diff.txt" | while read -r line; do log "$line"; done
! { awk -F"$tab" '$2 == "OK" && $3 != "OK" && $3 != "SKIP"' "${logs}diff.txt"
    results "${logs}patched.log" | grep -E "$ours_re" |
	awk -F"$tab" '$2 != "OK"'; } | grep .
