#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# make test ARCH=arm64: on an arm64 CPU without LSE atomics (QEMU's
# cortex-a57, ARMv8.0), whose 6.12 JIT cannot compile atomics on arena
# memory, the tool refuses to load anything and says why, with a failing
# exit status, instead of passing on a verifier error.
#
#   tests/cpu_refused.sh TOOL LOG
set -uo pipefail
tool=$1 log=$2

VM_CPU=cortex-a57 SMP=1 MEM=512M kernel/vm "$tool info" > "$log" 2>&1
rc=$?
if [ $rc = 0 ]; then
	echo "cpu_refused: '$tool info' succeeded on a CPU without LSE atomics" >&2
	rc=1
elif ! grep -q 'has no LSE atomics' "$log"; then
	echo "cpu_refused: '$tool info' failed (status $rc) without saying why:" >&2
	tail -n 20 "$log" >&2
	rc=1
else
	grep -m1 'has no LSE atomics' "$log" | cut -c1-120
	echo "cpu_refused: refused, saying why (exit status $rc)"
	rc=0
fi
exit $rc
