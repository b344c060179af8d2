#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# make profile: where a BPF program's instructions go, by function, from a
# trace of the guest's JIT code under TCG (x86-64 guests: the JIT's code
# lies in the module area, which the trace is filtered to).
#
#   bench/profile/profile.sh OUT_DIR OPS OBJECT [NAME=VALUE | PROGRAM]... [-- profile.py options]
#
# jit_run (bench/profile/jit_run.c) runs in the VM, one vCPU, with QEMU
# logging every translated block and every block run (OUT_DIR/qemu.log,
# about 100 bytes a block run: keep the runs to a few million
# instructions), and prints where the JIT put each function
# (OUT_DIR/jit_run.txt); profile.py counts the instructions by function,
# per operation (OPS: how many the runs made), into OUT_DIR/profile.txt.
# Every program run is counted: to see one phase alone, run only what it
# needs before it. Nothing loads BPF on the host.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ $# -ge 4 ] || { sed -n '/^#   /p' "$0" >&2; exit 2; }
out=$1
ops=$2
shift 2
run=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	run+=("$1")
	shift
done
[ $# -gt 0 ] && shift
mkdir -p "$out"
rm -f "$out/qemu.log"
VM_QEMU_ARGS="-d exec,nochain,in_asm -D $out/qemu.log -dfilter 0xffffffffa0000000..0xfffffffffeffffff" \
	SMP=1 ACCEL=tcg "$here/../../kernel/vm" "build/jit_run ${run[*]}" > "$out/jit_run.txt"
"$here/profile.py" "$out/qemu.log" "$out/jit_run.txt" --ops "$ops" "$@" | tee "$out/profile.txt"
