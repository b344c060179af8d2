#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# make bench-kernels: the same `arenakit bench` on the stock kernel and on
# ours, one after the other, and each row's medians side by side with
# their ratio (ours / stock): what the kernel series costs or saves.
#
#   bench/kernels.sh OUT_DIR [arenakit bench arguments...]
#
# OUT_DIR/stock and OUT_DIR/patched get each run's files (bench/run.sh);
# OUT_DIR/kernels.txt the side-by-side table, with each kernel's ICOUNT=1
# medians where run.sh's first boot gave them (sections with targets). With
# ICOUNT=1 in the environment both runs count instructions (see
# bench/README.md). Both
# kernels must be built (kernel/build.sh, KERNEL=stock and patched); the
# tool is the one make built, the same binary on both.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=$1
shift
for k in stock patched; do
	echo "bench/kernels.sh: the $k kernel" >&2
	KERNEL=$k "$here/run.sh" "$out/$k" "$@" > /dev/null
done

# "section<TAB>case<TAB>size<TAB>variant<TAB>unit<TAB>median<TAB>icount median (- none)"
# per row of a results.json (the ICOUNT=1 boot's median, which run.sh puts beside).
rows() {
	sed -n '/"section": /{
		s/^ *{"section": "\([^"]*\)", "case": "\([^"]*\)", "size": \([0-9]*\), "variant": "\([^"]*\)", "unit": "\([^"]*\)", "clock": "[^"]*", "median": \([-0-9.]*\),\(.*\)/\1\t\2\t\3\t\4\t\5\t\6\t\7/
		t a
		:a
		s/\t[^\t]*"icount_median": \([-0-9.]*\).*/\t\1/
		t ok
		s/\t[^\t]*$/\t-/
		:ok
		p
	}' "$1"
}
{
	printf '%s, %s\n' "$(sed -n 's/.*"kernel": "\(.*\)",/stock: \1/p' "$out/stock/results.json")" \
		"$(sed -n 's/.*"kernel": "\(.*\)",/ours: \1/p' "$out/patched/results.json")"
	printf '%-10s %-40s %7s %-14s %14s %14s %12s %10s %12s %12s %s\n' section case size variant \
		stock ours ours-stock ours/stock "stock insns" "ours insns" unit
	# Rows are matched by section, case, size and variant, in the stock run's order.
	awk -F'\t' 'NR == FNR { ours[$1 FS $2 FS $3 FS $4] = $6; oi[$1 FS $2 FS $3 FS $4] = $7; next }
		($1 FS $2 FS $3 FS $4) in ours {
			o = ours[$1 FS $2 FS $3 FS $4]
			printf "%-10s %-40s %7s %-14s %14.2f %14.2f %12.2f %10s %12s %12s %s\n", $1, $2, $3, $4,
			       $6, o, o - $6, $6 != 0 ? sprintf("%.4f", o / $6) : "-", $7,
			       oi[$1 FS $2 FS $3 FS $4], $5
		}' <(rows "$out/patched/results.json") <(rows "$out/stock/results.json")
} | tee "$out/kernels.txt"
