#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# make bench: run `arenakit bench` in the VM, bring its files out, plot.
#
#   bench/run.sh OUT_DIR [arenakit bench arguments...]
#
# The guest's root is read-only, so the tool writes its JSON and plot data
# to the guest's /tmp and prints them after the table between marker
# lines; they are split back into OUT_DIR here: table.txt, results.json,
# *.dat, and the plots (*.png, by bench/plots.gp).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=$1
shift
mkdir -p "$out"
rm -f "$out"/*.dat "$out"/*.json "$out"/*.png
mark="=== arenakit-bench-file"

# The guest runs sh: quote each argument for it.
args=
for a in "$@"; do
	args+=" '${a//\'/\'\\\'\'}'"
done
rc=0
SMP=${SMP:-2} MEM=${MEM:-3G} VM_TIMEOUT=${VM_TIMEOUT:-3600} "$here/../kernel/vm" \
	"mkdir -p /tmp/bench && build/arenakit bench --out /tmp/bench $args; rc=\$?;
	 for f in /tmp/bench/*; do echo \"$mark \${f##*/}\"; cat \"\$f\"; done; exit \$rc" \
	> "$out/stdout.txt" || rc=$?

# The table goes to table.txt and the terminal; each marked file to its own.
awk -v dir="$out" -v mark="$mark" '
	index($0, mark " ") == 1 { file = dir "/" substr($0, length(mark) + 2); next }
	file { print > file; next }
	{ print > (dir "/table.txt"); print }
' "$out/stdout.txt"
rm -f "$out/stdout.txt"
if [ -e "$out/results.json" ] && command -v gnuplot > /dev/null; then
	gnuplot -e "dir='$out'" "$here/plots.gp" || rc=1
fi
exit $rc
