#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# Does the explorer find the defects it was built for? Each mutant in
# tests/explore/mutants/ is a patch that takes one fix back out of the
# headers, and names the scenario that must then fail. For each: copy the
# headers, apply the patch, build the explorer against them, run that
# scenario, and say after how many schedules it failed. Exit 1 if a mutant
# survives (its scenario passes: the explorer would not have found it) or
# does not apply.
#
# Usage: tests/explore/mutants.sh BUILD_DIR [MUTANT.patch...]
# CC, CFLAGS (the build's, sanitizers in) and EXPLORE_BOUND from the Makefile.
set -u
out=${1:?usage: $0 BUILD_DIR [MUTANT.patch...]}
shift
[ $# -gt 0 ] || set -- tests/explore/mutants/*.patch
: "${CC:=cc}" "${CFLAGS:=-O2 -g}" "${EXPLORE_BOUND:=2}"
survived=0
for mutant in "$@"; do
	name=$(basename "$mutant" .patch)
	scenario=$(sed -n 's/^# scenario: //p' "$mutant")
	dir=$out/$name
	rm -rf "$dir"
	mkdir -p "$dir"
	cp -r include "$dir/include"
	if ! patch -s -d "$dir" -p1 < "$mutant"; then
		echo "mutant $name: does not apply to today's headers"
		survived=$((survived + 1))
		continue
	fi
	# The patched headers come first; the sources are today's.
	if ! $CC -I"$dir/include" $CFLAGS -Itests -o "$dir/explore" tests/explore/*.c \
		-lcriterion > "$dir/build.log" 2>&1; then
		echo "mutant $name: does not build:"
		sed 's/^/  /' "$dir/build.log"
		survived=$((survived + 1))
		continue
	fi
	EXPLORE_BOUND=$EXPLORE_BOUND ASAN_OPTIONS=allow_user_segv_handler=1 \
		"$dir/explore" --filter="$scenario" > "$dir/run.log" 2>&1
	found=$(grep -m1 '^explore: .* schedule [0-9]* failed' "$dir/run.log")
	if [ -n "$found" ]; then
		schedules=$(sed -n 's/.* schedule \([0-9]*\) failed.*/\1/p' <<< "$found")
		echo "mutant $name: found by $scenario after $schedules schedules:"
		sed -n '/ failed:$/,/^\[/p' "$dir/run.log" | sed '1d;$d' | head -n 12 | sed 's/^/  /'
	else
		echo "mutant $name: SURVIVED ($scenario passed with the fix taken out)"
		sed 's/^/  /' "$dir/run.log" | tail -n 5
		survived=$((survived + 1))
	fi
done
echo "mutants: $# tried, $(($# - survived)) found, $survived survived"
[ $survived = 0 ]
