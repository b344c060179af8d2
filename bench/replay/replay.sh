#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# make replay: the arena list walks (the bare walk, ak_list_count,
# ak_list_find, ak_list_for_each_entry_resume) as each kernel's JIT emitted
# them, replayed natively on this host's CPU (bench/replay/replay.py).
#
#   bench/replay/replay.sh OUT_DIR [replay.py options]
#
# jit_dump runs in the VM on our kernel and on the stock one and prints
# bench/walk.bpf.o's walk program's JIT image (OUT_DIR/jit-{patched,stock}.txt);
# replay.py, on the host, runs each walk's function of each image (and the
# bare walk of ours with patch 13 undone) and the same walks in C, over the
# same nodes, beside the TCG figures of the last make bench
# (build/bench/results.json, if there is one), and writes OUT_DIR/replay.txt.
# Both kernels must be built; nothing loads BPF on the host.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=$1
shift
mkdir -p "$out"
for k in patched stock; do
	KERNEL=$k "$here/../../kernel/vm" "build/jit_dump build/bench/walk.bpf.o walk" \
		> "$out/jit-$k.txt"
done
"$here/replay.py" "$out/jit-patched.txt" "$out/jit-stock.txt" "$@" | tee "$out/replay.txt"
