#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# Build the arenakit guest kernel, libbpf and bpftool from Debian's
# linux-source-6.12 tarball, in a cache outside the checkout.
#
#   kernel/build.sh            build (if not cached) and print the cache entry
#   kernel/build.sh --dir      print the cache entry only, build nothing
#
# Environment:
#   KERNEL=patched|stock   patched applies kernel/patches/series (default);
#                          stock applies nothing (its own cache entry)
#   ARCH=x86_64|arm64      the guest's architecture (default x86_64); arm64
#                          is cross-built (gcc-aarch64-linux-gnu) with
#                          kernel/config.arm64, and its entry also holds the
#                          guest's user space: a root of Debian's arm64
#                          packages (busybox, libc, Criterion, libelf, zlib)
#   SELFTESTS=1            configure for the tree's BPF selftests too
#                          (tools/testing/selftests/bpf/config*): a larger
#                          kernel, its own cache entry, for make kernel-selftests
#   KASAN=1                add kernel/config.kasan (its own cache entry)
#   ARENAKIT_CACHE         cache root (default $HOME/.cache/arenakit)
#   JOBS                   parallel make jobs (default: number of CPUs)
#
# The entry is named by a hash of the package version, the variant, the
# patch series (what the build uses of it: see built_part), the config
# fragment and this script's code (not its comments), so a fresh clone on
# the same machine reuses a kernel built earlier.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
variant=${KERNEL:-patched}
arch=${ARCH:-x86_64}
selftests=${SELFTESTS:-0}
kasan=${KASAN:-0}
cache=${ARENAKIT_CACHE:-$HOME/.cache/arenakit}
jobs=${JOBS:-$(nproc)}
tarball=/usr/src/linux-source-6.12.tar.xz

die() { echo "kernel/build.sh: $*" >&2; exit 1; }

case $variant in
patched|stock) ;;
*) die "KERNEL must be 'patched' or 'stock', not '$variant'" ;;
esac
case $arch in
x86_64) image=arch/x86/boot/bzImage cross=() ;;
arm64) image=arch/arm64/boot/Image cross=(CROSS_COMPILE=aarch64-linux-gnu-)
       command -v aarch64-linux-gnu-gcc > /dev/null ||
		die "aarch64-linux-gnu-gcc is missing (run 'make deps ARCH=arm64' as root)" ;;
*) die "ARCH must be 'x86_64' or 'arm64', not '$arch'" ;;
esac
# Ours, for SELFTESTS=1: what the selftests assume of their base, for any
# architecture and for this one.
selftests_config=("$here/config.selftests")
[ -e "$here/config.selftests.$arch" ] && selftests_config+=("$here/config.selftests.$arch")
# The kernel's make for the guest's architecture; the tools that run on the
# host (bpftool's bootstrap) are built without these.
kmake=(make ARCH="$arch" "${cross[@]}")

pkgver=$(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null) ||
	die "linux-source-6.12 is not installed (run 'make deps' as root)"

# The patches this variant applies, in order.
patches=()
if [ "$variant" = patched ]; then
	while read -r line; do
		line=${line%%#*}
		line=${line//[[:space:]]/}
		[ -n "$line" ] && patches+=("$line")
	done < "$here/patches/series"
fi

# What of a patch the build uses: its diff, without the commit message and
# without the files under tools/testing/ (selftests, which only make
# kernel-selftests builds, from a tree of its own). An edited message or
# selftest keeps the entry; the entry's own tree keeps the selftests of the
# series it was built from.
built_part() {
	awk '/^diff --git / { skip = ($3 ~ /^a\/tools\/testing\//) } /^diff --git /, 0 { if (!skip) print }' "$1"
}

key=$({
	echo "$pkgver $variant"
	[ "$arch" = x86_64 ] || echo "$arch"
	[ "$selftests" = 1 ] && echo selftests && cat "${selftests_config[@]}"
	[ "$kasan" = 1 ] && echo kasan && cat "$here/config.kasan"
	cat "$here/config" "$here/config.$arch"
	grep -v '^[[:space:]]*\(#.*\)\?$' "$here/build.sh"
	for p in "${patches[@]}"; do
		echo "== $p"
		[ -e "$here/patches/$p" ] && built_part "$here/patches/$p" || echo "missing"
	done
} | sha256sum | cut -c1-12)
suffix=
[ "$arch" = x86_64 ] || suffix=-$arch
[ "$selftests" = 1 ] && suffix=$suffix-selftests
[ "$kasan" = 1 ] && suffix=$suffix-kasan
dir=$cache/linux-$pkgver-$variant$suffix-$key

if [ "${1:-}" = --dir ]; then
	echo "$dir"
	exit 0
fi

if [ -e "$dir/.done" ]; then
	echo "$dir"
	exit 0
fi

mkdir -p "$cache"
exec 9> "$cache/.lock"
flock 9
if [ -e "$dir/.done" ]; then	# built by another run while we waited
	echo "$dir"
	exit 0
fi

log() { echo "kernel/build.sh: $*" >&2; }
start=$SECONDS
mkdir -p "$dir"
src=$dir/src

# Each stage leaves a stamp, so an interrupted build resumes at the stage it
# was in; a stage without its stamp starts over from its own beginning.
stage() {	# name
	local t=$SECONDS
	[ -e "$dir/.stage-$1" ] && return 0
	"stage_$1"
	touch "$dir/.stage-$1"
	log "$1: $((SECONDS - t)) s"
}

# The tree of another entry that has built its kernel, with the same
# architecture and options (this variant's, from an older series, or the
# other variant's): most of its objects are ours too, so copying its tree
# and moving it from that entry's patches to ours lets the kernel's make
# rebuild only what the difference touches (a third of the objects for
# stock against patched, less for a change to one patch) instead of all
# of them. The newest such entry, or nothing.
sibling() {
	local entry name
	for entry in $(ls -td "$cache/linux-$pkgver-"* 2> /dev/null); do
		name=${entry##*/}
		[[ $name =~ ^"linux-$pkgver-"(patched|stock)"$suffix-"[0-9a-f]{12}$ ]] || continue
		if [ "$entry" != "$dir" ] && [ -e "$entry/.stage-kernel" ] &&
		   [ -e "$entry/applied/.done" ]; then
			echo "$entry"
			return
		fi
	done
}

# The tree: the tarball extracted, or a sibling's tree with its patches
# taken back out (newest first). Then the series applied, each patch kept
# in applied/ so that another variant can take it back out of a copy.
stage_extract() {
	local from p applied=()
	rm -rf "$src" "$dir/linux-source-6.12" "$dir/applied"
	from=$(sibling)
	if [ -n "$from" ]; then
		log "copying the tree of $from"
		cp -a "$from/src" "$src"
		# The host tools' dependency files (objtool, resolve_btfids)
		# name their sources by absolute path: moved to ours, or make
		# sees them missing, rebuilds objtool, and every object that
		# objtool checked with it. Their times are kept.
		grep -rlIZF --include='.*.cmd' --include='*.d' "$from/src/" "$src/tools" |
			while IFS= read -r -d '' f; do
				sed "s|$from/src/|$src/|g" "$f" > "$f.new"
				touch -r "$f" "$f.new"
				mv "$f.new" "$f"
			done
		for p in $(ls -r "$from/applied" | grep '\.patch$'); do
			patch -d "$src" -p1 -R --batch --quiet < "$from/applied/$p" ||
				die "$from/applied/$p does not come back out of the copy"
		done
	else
		log "extracting $tarball into $dir"
		tar -xf "$tarball" -C "$dir"
		mv "$dir/linux-source-6.12" "$src"
	fi
	mkdir -p "$dir/applied"
	for p in "${patches[@]}"; do
		[ -f "$here/patches/$p" ] || die "series names $p, which is not in kernel/patches/"
		log "applying $p"
		patch -d "$src" -p1 --forward --batch --quiet < "$here/patches/$p" ||
			die "patch $p does not apply to linux-source $pkgver"
		cp "$here/patches/$p" "$dir/applied/$(printf %04d ${#applied[@]})-$p"
		applied+=("$p")
	done
	touch "$dir/applied/.done"
}

stage_config() {
	local fragment=$dir/config.fragment tree=() bad=0 line want name got

	cat "$here/config" "$here/config.$arch" > "$fragment"
	# The stock kernel says so in its release (still "-arenakit": the loader's check).
	[ "$variant" = stock ] &&
		sed -i 's/^CONFIG_LOCALVERSION=.*/CONFIG_LOCALVERSION="-arenakit-stock"/' "$fragment"
	if [ "$selftests" = 1 ]; then
		# What the selftests need wins over what the small kernel leaves
		# out, and their choice of DWARF version over ours; our
		# BPF_JIT_ALWAYS_ON is switched off below.
		sed -i -e '/^# CONFIG_.* is not set$/d' -e '/DEBUG_INFO_DWARF/d' \
			-e '/BPF_JIT_ALWAYS_ON/d' "$fragment"
		cat "${selftests_config[@]}" >> "$fragment"
		tree=("$src/tools/testing/selftests/bpf/config")
		# x86-64's is what a defconfig would add. arm64's (config.aarch64)
		# adds lock debugging, DEBUG_PAGEALLOC and drivers for real
		# boards to that, which the BPF tests do not need and which
		# would lengthen the build and slow the run under TCG.
		if [ "$arch" = x86_64 ]; then
			tree+=("$src/tools/testing/selftests/bpf/config.x86_64")
		fi
	fi
	[ "$kasan" = 1 ] && cat "$here/config.kasan" >> "$fragment"
	log "configuring $arch: tinyconfig + kernel/config + kernel/config.$arch${tree:+ + kernel/config.selftests + the selftests config}$([ "$kasan" = 1 ] && echo " + kernel/config.kasan")"
	"${kmake[@]}" -C "$src" -s tinyconfig >&2
	(cd "$src" && ARCH=$arch scripts/kconfig/merge_config.sh -m .config "$fragment" "${tree[@]}" \
		> /dev/null 2>&1)
	# The selftests' fragments force the JIT on; the count form of may_goto
	# is tested in the interpreter, with the JIT off for that test
	# (verifier_may_goto_counted, kernel/patches/0010).
	[ "$selftests" = 1 ] && "$src/scripts/config" --file "$src/.config" --disable BPF_JIT_ALWAYS_ON
	"${kmake[@]}" -C "$src" -s olddefconfig >&2

	# merge_config only warns; an option of ours that did not stick is an
	# error (the selftests' own fragments disagree with each other on DWARF,
	# so theirs are only reported).
	while read -r line; do
		case $line in
		CONFIG_*=*|"# CONFIG_"*" is not set") want=$line ;;
		*) continue ;;
		esac
		name=${want#\# }
		name=${name%%[= ]*}
		# The selftests' own value (e.g. NR_CPUS) wins over ours.
		[ ${#tree[@]} = 0 ] || ! grep -q "^$name=" "${tree[@]}" || continue
		got=$(grep -E "^(# )?$name[= ]" "$src/.config" || echo "# $name is not set")
		if [ "$got" != "$want" ]; then
			log "config: wanted '$want', got '$got'"
			bad=1
		fi
	done < "$fragment"
	[ $bad = 0 ] || die "the config fragment does not apply cleanly"
	[ ${#tree[@]} = 0 ] || cat "${tree[@]}" | while read -r line; do
		case $line in CONFIG_*=*) ;; *) continue ;; esac
		grep -qx -- "$line" "$src/.config" || log "config (selftests): wanted '$line', which did not stick"
	done
}

stage_kernel() {
	log "make -j$jobs ${image##*/} for $arch (a few minutes; arm64's cross build about ten)"
	"${kmake[@]}" -C "$src" -s -j"$jobs" "${image##*/}" >&2
	cp "$src/$image" "$src/vmlinux" "$src/.config" "$dir/"
	# kernel/vm boots $dir/image, whatever the architecture calls it.
	ln -sf "${image##*/}" "$dir/image"
	"${kmake[@]}" -C "$src" -s kernelrelease > "$dir/release"
}

# arm64: the guest's root, from Debian's arm64 packages (apt-get download,
# dpkg-deb -x: nothing is installed on the host, nothing registered in its
# kernel). The runtime closure of busybox, Criterion, libelf and zlib, and
# the three -dev packages without theirs, for the cross build to link with.
# kernel/vm shares it as the guest's / and binds the checkout into it.
root_runtime=(busybox-static libcriterion3 libelf1 zlib1g)
root_dev=(libcriterion-dev libelf-dev zlib1g-dev)
stage_root() {
	local debs=$dir/debs root=$dir/root pkgs deb
	log "building the arm64 root from Debian's arm64 packages"
	rm -rf "$debs" "$root"
	mkdir -p "$debs" "$root"
	pkgs=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts \
		--no-breaks --no-replaces --no-enhances "${root_runtime[@]/%/:$arch}" |
		sed -n "s/^\([a-z0-9][^ <]*:$arch\)\$/\1/p" | sort -u)
	[ -n "$pkgs" ] || die "apt knows no arm64 packages (run 'make deps ARCH=arm64' as root)"
	# shellcheck disable=SC2086
	(cd "$debs" && apt-get download -q -o APT::Sandbox::User="$(id -un)" $pkgs "${root_dev[@]/%/:$arch}" >&2) ||
		die "apt-get download of the arm64 packages failed"
	for deb in "$debs"/*.deb; do
		dpkg-deb -x "$deb" "$root"
	done
	# Merged /usr, as Debian 12's own root: /bin, /sbin and /lib are links
	# into /usr, so a path under either is found (the packages unpack into
	# both).
	for d in bin sbin lib; do
		mkdir -p "$root/usr/$d"
		if [ -d "$root/$d" ] && [ ! -L "$root/$d" ]; then
			cp -a "$root/$d/." "$root/usr/$d/"
			rm -rf "${root:?}/$d"
		fi
		ln -sfn "usr/$d" "$root/$d"
	done
	# The applets the guest's shell and tests call by path (/bin/sh,
	# /bin/true, /usr/bin/env...): links to busybox where its --install
	# would put them.
	for applet in $(busybox --list-full); do
		case $applet in bin/*|sbin/*) applet=usr/$applet ;; usr/*) ;; *) continue ;; esac
		[ -e "$root/$applet" ] || ln -s /bin/busybox "$root/$applet"
	done
	mkdir -p "$root/proc" "$root/sys" "$root/dev" "$root/tmp" "$root/run" "$root/etc"
	[ -x "$root/bin/busybox" ] && [ -e "$root/lib/ld-linux-aarch64.so.1" ] ||
		die "the arm64 root lacks busybox or the dynamic loader"
}

stage_libbpf() {
	local flags=()
	log "building libbpf for $arch"
	rm -rf "$dir/libbpf-build" "$dir/libbpf"
	mkdir -p "$dir/libbpf-build"
	# The tree's libbpf builds its shared library too, which links with
	# the root's libelf and zlib.
	[ "$arch" = x86_64 ] || flags=(EXTRA_CFLAGS="-I$dir/root/usr/include"
				      LDFLAGS="-L$dir/root/usr/lib/aarch64-linux-gnu")
	"${kmake[@]}" -C "$src/tools/lib/bpf" -s -j"$jobs" BUILD_STATIC_ONLY=1 "${flags[@]}" \
		OUTPUT="$dir/libbpf-build/" DESTDIR="$dir/libbpf" prefix= \
		libdir_relative=lib install install_headers >&2
}

stage_bpftool() {
	log "building bpftool"
	rm -rf "$dir/bpftool-build"
	mkdir -p "$dir/bpftool-build"
	if [ "$arch" = x86_64 ]; then
		# The full bpftool (prog, map, link... for users in the VM), with
		# its skeletons built against our vmlinux; no disassembler (no
		# LLVM, no libbfd), so no 'prog dump jited'.
		make -C "$src/tools/bpf/bpftool" -s -j"$jobs" feature-llvm=0 \
			VMLINUX_BTF="$dir/vmlinux" OUTPUT="$dir/bpftool-build/" >&2
		cp "$dir/bpftool-build/bpftool" "$dir/bpftool"
		ln -sf bpftool "$dir/host-bpftool"
	else
		# The build's bpftool runs on the host (gen skeleton, gen object,
		# btf dump): its bootstrap, which needs no vmlinux. The guest
		# gets none.
		env -u ARCH -u CROSS_COMPILE make -C "$src/tools/bpf/bpftool" -s -j"$jobs" \
			OUTPUT="$dir/bpftool-build/" bootstrap >&2
		cp "$dir/bpftool-build/bootstrap/bpftool" "$dir/host-bpftool"
	fi
	"$dir/host-bpftool" btf dump file "$dir/vmlinux" format c > "$dir/vmlinux.h"
}

stages=(extract config kernel libbpf bpftool)
[ "$arch" = x86_64 ] || stages=(extract config root kernel libbpf bpftool)
for s in "${stages[@]}"; do
	stage $s
done
touch "$dir/.done"
log "done in $((SECONDS - start)) s: $(cat "$dir/release")"
echo "$dir"
