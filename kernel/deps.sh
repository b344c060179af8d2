#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# Install the Debian 12 packages arenakit needs, those that are missing.
# The Makefile makes build/deps.mk with it before every goal that builds;
# usage() says how.
set -euo pipefail

# Every build and test: the kernel from linux-source (xz-utils to extract
# it, patch to apply the series, the kernel's build tools, pahole for its
# BTF), clang-19 and llvm-19 for the BPF programs, clang-22 (every BPF
# program is built again with it), QEMU and busybox for the guest,
# Criterion for the tests, pkg-config for the worked example.
base=(linux-source-6.12 xz-utils patch make gcc libc6-dev bc bison flex
	libelf-dev libssl-dev zlib1g-dev pahole clang-19 llvm-19 clang-22
	qemu-system-x86 busybox-static libcriterion-dev pkg-config)
# The plots of make bench; python3 for make replay's bench/replay/replay.py.
bench=(gnuplot-nox python3)
# The tree's BPF selftests (make kernel-selftests); llvm-19-dev gives
# test_progs its disassembler, for the tests that match JITed code (__jited),
# and libzstd-dev the library LLVM links with.
selftests=(lld-19 rsync llvm-19-dev libzstd-dev)
# ARCH=arm64: the cross compiler, its C library's headers (only recommended
# by the compiler, and apt-get here installs no recommends) and QEMU for
# arm64; the guest's own packages come from the archive's arm64
# architecture (kernel/build.sh downloads them into its root), which dpkg
# must know.
arm64=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-system-arm)

usage() {
	local fd=1
	[ "$1" = 0 ] || fd=2
	cat >&"$fd" <<-'EOF'
	usage: kernel/deps.sh [--check] [bench] [kernel-selftests] [arm64]

	Install the Debian 12 packages arenakit needs, those that are missing.
	With no set named, the packages every build and test needs; `bench` and
	`kernel-selftests` add what those make targets need besides, and `arm64`
	what ARCH=arm64 needs (and dpkg's arm64 architecture). The Makefile
	runs it for the base set to make build/deps.mk, which every goal that
	builds needs (not help, clean, install, uninstall or kernel-clean), and
	for a goal's own set as that goal's prerequisite (deps-bench,
	deps-selftests).

	As root, the missing packages are installed with apt-get
	(--no-install-recommends). Otherwise, or with --check, nothing is
	installed: the missing packages are named with the command that installs
	them, and the exit status is 1. Everything goes to stderr; nothing is
	printed when nothing is missing.
	EOF
	exit "$1"
}

check=0
sets=()
packages=("${base[@]}")
for arg; do
	case $arg in
	--check) check=1 ;;
	bench) packages+=("${bench[@]}"); sets+=("$arg") ;;
	kernel-selftests) packages+=("${selftests[@]}"); sets+=("$arg") ;;
	arm64) packages+=("${arm64[@]}"); sets+=("$arg") ;;
	-h|--help) usage 0 ;;
	*) echo "kernel/deps.sh: unknown argument '$arg'" >&2; usage 2 ;;
	esac
done

# The arm64 set also needs dpkg to know the architecture, for apt to list
# (and kernel/build.sh to download) arm64 packages.
foreign=yes
if [[ " ${sets[*]} " = *" arm64 "* ]] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
	foreign=no
fi

# ${db:Status-Abbrev} is three letters: what is wanted of the package (i
# install, h hold...), its state (i installed) and an error flag (blank:
# none). It is there when installed without error: "ii" or "hi" (held).
installed=$(dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' "${packages[@]}" 2>/dev/null |
	sed -n 's/^[a-z]i  *//p') || true
missing=()
for p in "${packages[@]}"; do
	grep -qxF "$p" <<< "$installed" || missing+=("$p")
done
[ ${#missing[@]} = 0 ] && [ $foreign = yes ] && exit 0

if [ "$check" = 1 ] || [ "$(id -u)" != 0 ]; then
	{
		[ ${#missing[@]} = 0 ] || echo "kernel/deps.sh: missing Debian packages: ${missing[*]}"
		[ $foreign = yes ] || echo "kernel/deps.sh: dpkg does not know the arm64 architecture"
		echo "kernel/deps.sh: install them as root with:" \
			"kernel/deps.sh${sets[*]:+ ${sets[*]}}"
		[ $foreign = yes ] || echo "kernel/deps.sh: (or: dpkg --add-architecture arm64; apt-get update)"
		[ ${#missing[@]} = 0 ] ||
			echo "kernel/deps.sh: (or: apt-get install --no-install-recommends ${missing[*]})"
	} >&2
	exit 1
fi
if ! command -v apt-get > /dev/null; then
	echo "kernel/deps.sh: no apt-get (arenakit wants Debian 12); install: ${missing[*]}" >&2
	exit 1
fi
if [ $foreign = no ]; then
	echo "kernel/deps.sh: adding dpkg's arm64 architecture" >&2
	dpkg --add-architecture arm64
fi
[ ${#missing[@]} = 0 ] || echo "kernel/deps.sh: installing ${missing[*]}" >&2
{
	apt-get update -q
	[ ${#missing[@]} = 0 ] ||
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
} >&2
