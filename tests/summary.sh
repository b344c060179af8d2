#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Add up the Criterion "Synthesis" lines of the given logs into one closing
# line. Fails if a log has no Synthesis line (the binary or the VM died) or
# any test failed or crashed.
#
#   tests/summary.sh [--phases FILE] LOG...
#
# FILE holds make test's phases, "NAME SECONDS" a line: they are printed
# first, as one line, so a slow phase shows in the last lines of every log.
set -u
passed=0 failed=0 rc=0
if [ "${1:-}" = --phases ]; then
	awk '{ printf "%s%s %d:%02d", (NR > 1 ? ", " : "phases: "), $1, $2 / 60, $2 % 60; total += $2 }
	     END { if (NR) printf " (total %d:%02d)\n", total / 60, total % 60 }' "$2"
	shift 2
fi
for log in "$@"; do
	line=$(grep -a 'Synthesis: Tested:' "$log" | tail -n 1)
	if [ -z "$line" ]; then
		echo "summary: $log has no Criterion Synthesis line: its run did not finish" >&2
		rc=1
		continue
	fi
	pass=$(sed -n 's/.*Passing: \([0-9]*\).*/\1/p' <<< "$line")
	fail=$(sed -n 's/.*Failing: \([0-9]*\).*/\1/p' <<< "$line")
	crash=$(sed -n 's/.*Crashing: \([0-9]*\).*/\1/p' <<< "$line")
	passed=$((passed + pass))
	failed=$((failed + fail + crash))
done
[ $failed = 0 ] || rc=1
# Failures are repeated at the end, where a log cut to its tail still shows
# them: each assertion with its message, and the tests that failed or crashed.
if [ $failed != 0 ]; then
	echo "failures:"
	sed 's/\x1b\[[0-9;]*m//g' "$@" | awk '
		/Assertion Failed/ { print "  " $0; more = 3; next }
		more > 0 && /^\[----\]/ { if ($0 !~ /^\[----\] *$/) print "  " $0; more--; next }
		/\[FAIL\]|CRASH|Unexpected signal/ { print "  " $0 }
		{ more = 0 }'
fi
# Tests that skipped themselves (a kernel without a feature), with why;
# Criterion prints them with --verbose. "Test is disabled" is a filter's doing.
skips=$(sed 's/\x1b\[[0-9;]*m//g' "$@" | grep -a '\[SKIP\]' | grep -v 'Test is disabled' | sed 's/^.*\[SKIP\] *//')
skipped=0
[ -z "$skips" ] || skipped=$(wc -l <<< "$skips")
if [ "$skipped" -gt 0 ]; then
	echo "tests: $passed passed, $failed failed, $skipped skipped:"
	sed 's/^/  /' <<< "$skips"
else
	echo "tests: $passed passed, $failed failed"
fi
exit $rc
