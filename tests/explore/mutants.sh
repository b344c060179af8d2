#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# Do the tests find the defects they were written for? Each mutant in
# tests/explore/mutants/ is a patch that takes one fix back out of the
# headers, and names the test that must then fail: an explorer scenario
# ("# scenario: suite/test", and for a generated one "# generated: NAME",
# the scenario's name as the generator prints it) or a host test
# ("# host test: suite/test", built from the files of tests/host/ that
# hold its suite, with alloc_pages.c).
# For each: copy the headers, apply the patch exactly (no fuzz, at most 3
# lines from where it was written), build the test against them, run it,
# and say how it failed (for the explorer, after how many schedules).
# Exit 1 if a mutant survives (its test passes: it would not have found
# the defect), does not apply exactly, or does not build.
#
# Usage: tests/explore/mutants.sh BUILD_DIR [MUTANT.patch...]
# From the Makefile: CC and CFLAGS (a host test's build, sanitizers in);
# EXPLORE_CC, EXPLORE_CFLAGS and EXPLORE_TSAN (the explorer's: the scenarios'
# files take the instrumentation, its run-time files do not), EXPLORE_LDFLAGS
# (its link, by CC); and EXPLORE_BOUND.
set -u
out=${1:?usage: $0 BUILD_DIR [MUTANT.patch...]}
shift
[ $# -gt 0 ] || set -- tests/explore/mutants/*.patch
: "${CC:=cc}" "${CFLAGS:=-O2 -g}" "${EXPLORE_BOUND:=2}"
: "${EXPLORE_CC:=clang-19}" "${EXPLORE_CFLAGS:=$CFLAGS}" "${EXPLORE_TSAN:=-fsanitize=thread}"
: "${EXPLORE_LDFLAGS:=-fsanitize=undefined}"
# The test of $host_test (or of an explorer scenario) from SOURCES, against
# the headers in DIR/include, as DIR/test.
build_test() {
	local dir=$1 src objs
	shift
	if [ -n "$host_test" ]; then
		$CC -I"$dir/include" $CFLAGS -Itests -o "$dir/test" "$@" -lcriterion
		return
	fi
	# The emulated arena calls the allocator: built against the mutant's
	# headers, without the instrumentation, as make builds it.
	objs=$dir/explore_arena.o
	$EXPLORE_CC -I"$dir/include" $EXPLORE_CFLAGS -Itests -c -o "$objs" \
		tests/explore/explore_arena.c || return
	for src; do
		objs="$objs $dir/$(basename "$src" .c).o"
		$EXPLORE_CC -I"$dir/include" $EXPLORE_CFLAGS $EXPLORE_TSAN -Itests -c \
			-o "$dir/$(basename "$src" .c).o" "$src" || return
	done
	$CC $EXPLORE_LDFLAGS -o "$dir/test" $common $objs -lcriterion -ldl
}

# One mutant: its report in $out/NAME/report, "survived" in $out/NAME/verdict
# if its test did not find it.
try_mutant() {
	local mutant=$1 name scenario generated host_test dir sources test found schedules src objs
	name=$(basename "$mutant" .patch)
	scenario=$(sed -n 's/^# scenario: //p' "$mutant")
	generated=$(sed -n 's/^# generated: //p' "$mutant")
	host_test=$(sed -n 's/^# host test: //p' "$mutant")
	dir=$out/$name
	rm -rf "$dir"
	mkdir -p "$dir"
	cp -r include "$dir/include"
	exec > "$dir/report"
	echo survived > "$dir/verdict"
	# Exactly where it was written, or it may mean another defect now.
	if ! patch -d "$dir" -p1 --fuzz=0 < "$mutant" > "$dir/patch.log" 2>&1; then
		echo "mutant $name: does not apply to today's headers:"
		sed 's/^/  /' "$dir/patch.log"
		return
	fi
	if grep -q 'offset [4-9]\|offset [1-9][0-9]' "$dir/patch.log"; then
		echo "mutant $name: applies only more than 3 lines from where it was written" \
			"(refresh it: tests/explore/mutants-refresh.sh):"
		grep 'offset' "$dir/patch.log" | sed 's/^/  /'
		return
	fi
	# The patched headers come first; the sources are today's: the
	# scheduler, the generator and the file that holds the test's suite.
	if [ -n "$host_test" ]; then
		# The file that holds the test's suite, and the pages it runs on.
		sources="$(grep -l "^Test(${host_test%%/*}," tests/host/*.c) tests/host/alloc_pages.c"
		test=$host_test
	else
		# ... and its parts, the files beside it named after it (NAME_*.c).
		sources=$(grep -l "^Test(${scenario%%/*}," tests/explore/*.c)
		sources="$sources $(ls ${sources//.c/_*.c} 2> /dev/null)"
		test=$scenario
	fi
	if ! build_test "$dir" $sources > "$dir/build.log" 2>&1; then
		echo "mutant $name: does not build:"
		sed 's/^/  /' "$dir/build.log"
		return
	fi
	EXPLORE_BOUND=$EXPLORE_BOUND EXPLORE_ONLY=$generated \
		"$dir/test" --filter="$test" > "$dir/run.log" 2>&1
	found=$(grep -a -m1 '^explore: .* schedule [0-9]* failed' "$dir/run.log")
	if [ -n "$found" ]; then
		schedules=$(sed -n 's/.* schedule \([0-9]*\) failed.*/\1/p' <<< "$found")
		echo "mutant $name: found by $test${generated:+ ($generated)} after $schedules schedules:"
		sed -n '/ failed:$/,/^\[/p' "$dir/run.log" | sed '1d;$d' | head -n 12 | sed 's/^/  /'
		echo found > "$dir/verdict"
	elif [ -n "$host_test" ] && grep -q 'Synthesis: .*Passing: 0 ' "$dir/run.log"; then
		echo "mutant $name: found by $test:"
		grep -a -m3 'Assertion Failed\|CRASH\|Unexpected signal\|runtime error\|ERROR: AddressSanitizer' -A2 "$dir/run.log" |
			grep -v '^\[----\] *$\|Synthesis' | cut -c1-160 | head -n 4 | sed 's/^/  /'
		echo found > "$dir/verdict"
	else
		echo "mutant $name: SURVIVED ($test passed with the fix taken out)"
		sed 's/^/  /' "$dir/run.log" | tail -n 5
	fi
}

# The scheduler, its weak mode, the access runtime and the generator
# (explore.c, explore_weak.c, explore_access.c, gen.c) call no function of the library (no function
# symbol of it, defined or called): built once, against today's headers,
# they are the same in every mutant's test (a mutant changes what a
# function does, not a type or a constant). If one ever has such a symbol,
# the run stops and says so.
mkdir -p "$out/common"
common=
for src in tests/explore/explore.c tests/explore/explore_weak.c tests/explore/explore_access.c \
	tests/explore/gen.c; do
	obj=$out/common/$(basename "$src" .c).o
	# (The access runtime without UBSan's checks, as make builds it.)
	if ! $EXPLORE_CC -Iinclude $EXPLORE_CFLAGS $([ "$src" != tests/explore/explore_access.c ] ||
		echo -fno-sanitize=undefined) -Itests -c -o "$obj" "$src" > "$out/common/build.log" 2>&1; then
		echo "mutants: $src does not build:"; cat "$out/common/build.log"; exit 1
	fi
	if nm "$obj" | grep -Eq ' [TtUWw] _*ak_'; then
		echo "mutants: $src calls the library: it must be built against each mutant"; exit 1
	fi
	common="$common $obj"
done

# Two at a time (this machine has two cores), reported in order.
running=0
for mutant in "$@"; do
	try_mutant "$mutant" &
	running=$((running + 1))
	if [ $running -ge "${MUTANT_JOBS:-2}" ]; then
		wait -n
		running=$((running - 1))
	fi
done
wait
survived=0
for mutant in "$@"; do
	name=$(basename "$mutant" .patch)
	cat "$out/$name/report"
	[ "$(cat "$out/$name/verdict")" = found ] || survived=$((survived + 1))
done
echo "mutants: $# tried, $(($# - survived)) found, $survived survived"
[ $survived = 0 ]
