#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# make bench: run `arenakit bench` in the VM, bring its files out, plot.
#
#   bench/run.sh OUT_DIR [arenakit bench arguments...]
#
# Two boots unless ICOUNT=1: first one with ICOUNT=1 (the guest's clock
# counts instructions: deterministic, so one run), of the sections given
# that have targets (walk, htab, alloc, glob: frames has none and the
# verifier's figures are counts already), into OUT_DIR/icount/; then the
# timed one, which reads that run's results.json (--icount-results) and
# prints each row's and ratio's instruction figure beside its time.
# BENCH_ICOUNT=0 skips the first boot. With ICOUNT=1, one boot that counts.
#
# The guest's root is read-only, so the tool writes its JSON and plot data
# to the guest's /tmp and prints them after the table between marker
# lines; they are split back into OUT_DIR here: table.txt, results.json,
# *.dat, and the plots (*.png, by bench/plots.gp). The guest is told what
# it cannot see for itself: ICOUNT and the host's CPU model
# (ARENAKIT_ICOUNT, ARENAKIT_HOST_CPU; its CPUs, kernel and own CPU model
# it reads itself). TOOL names the tool (default build/arenakit).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=$1
shift
mkdir -p "$out"
out=$(cd "$out" && pwd)	# the guest reads the ICOUNT run's file by this path
rm -f "$out"/*.dat "$out"/*.json "$out"/*.png
mark="=== arenakit-bench-file"
icount=${ICOUNT:-0}
host_cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)

# The guest runs sh: quote each argument for it.
quote() {
	local a q=
	for a in "$@"; do
		q+="${q:+ }'${a//\'/\'\\\'\'}'"
	done
	printf '%s' "$q"
}

# One boot: DIR ICOUNT(0|1) [arenakit bench arguments...]; the table goes
# to DIR/table.txt (and the terminal if SHOW=1), each marked file to DIR.
boot() {
	local dir=$1 count=$2 rc=0
	shift 2
	mkdir -p "$dir"
	ICOUNT=$count SMP=${SMP:-2} MEM=${MEM:-3G} VM_TIMEOUT=${VM_TIMEOUT:-3600} \
		"$here/../kernel/vm" \
		"mkdir -p /tmp/bench && ARENAKIT_ICOUNT=$count ARENAKIT_HOST_CPU=$(quote "$host_cpu") \
		 ${TOOL:-build/arenakit} bench --out /tmp/bench $(quote "$@"); rc=\$?;
		 for f in /tmp/bench/*; do echo \"$mark \${f##*/}\"; cat \"\$f\"; done; exit \$rc" \
		> "$dir/stdout.txt" || rc=$?
	awk -v dir="$dir" -v mark="$mark" -v show="${SHOW:-1}" '
		index($0, mark " ") == 1 { file = dir "/" substr($0, length(mark) + 2); next }
		file { print > file; next }
		{ print > (dir "/table.txt"); if (show) print }
	' "$dir/stdout.txt"
	rm -f "$dir/stdout.txt"
	return $rc
}

# The ICOUNT=1 boot's arguments: one run, the sections with targets.
counted=()
sections=()
runs_next=0
for a in "$@"; do
	if [ $runs_next = 1 ]; then
		counted+=(1)
		runs_next=0
		continue
	fi
	case $a in
	--runs) counted+=("$a"); runs_next=1 ;;
	walk|htab|omap|alloc|glob) sections+=("$a") ;;
	frames|verifier) ;;
	*) counted+=("$a") ;;
	esac
done
wanted=0
for a in "$@"; do
	case $a in walk|frames|htab|omap|alloc|glob|verifier) wanted=1 ;; esac
done
[ $wanted = 1 ] || sections=(walk htab omap alloc glob)

rc=0
timed_args=("$@")
rm -rf "$out/icount"
if [ "$icount" != 1 ] && [ "${BENCH_ICOUNT:-1}" != 0 ] && [ ${#sections[@]} -gt 0 ]; then
	echo "bench/run.sh: ICOUNT=1, one run of ${sections[*]} (instructions, into $out/icount/)" >&2
	start=$(date +%s)
	SHOW=0 boot "$out/icount" 1 "${counted[@]}" "${sections[@]}" || rc=$?
	echo "bench/run.sh: the ICOUNT=1 boot took $(($(date +%s) - start)) s (exit status $rc)" >&2
	if [ -e "$out/icount/results.json" ]; then
		timed_args+=(--icount-results "$out/icount/results.json")
	fi
	[ $rc = 0 ] || echo "bench/run.sh: the ICOUNT=1 run failed; its table is in $out/icount/table.txt" >&2
fi
start=$(date +%s)
boot "$out" "$icount" "${timed_args[@]}" || rc=$?
echo "bench/run.sh: the $([ "$icount" = 1 ] && echo ICOUNT=1 || echo timed) boot took $(($(date +%s) - start)) s" >&2
if [ -e "$out/results.json" ] && command -v gnuplot > /dev/null; then
	gnuplot -e "dir='$out'" "$here/plots.gp" || rc=1
fi
exit $rc
