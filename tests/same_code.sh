#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# tests/same_code.sh REV: is every BPF object of the work tree's build the
# same code as REV's? For changes that only move code (a header split, a
# rename of a file): `make same-code BASE=REV`.
#
# REV is built in a worktree under build/same-code/ (the kernel comes from
# the cache, as for any build); then each object's code is disassembled
# (llvm-objdump -d -r) and cut into one file a function, so that a function
# that moved within its section, or to another header, still compares equal.
# What makes two equal functions print differently is taken out: the
# instruction offsets and the function's number in LLVM's block labels.
# Prints each object as "same" or with the functions that differ, and exits
# 1 if any differs (0 when all are the same).
set -euo pipefail

usage() {
	echo "usage: tests/same_code.sh REV   (run from the top of the tree, after make)" >&2
	exit 2
}
[ $# = 1 ] && [ "$1" != -h ] && [ "$1" != --help ] || usage
rev=$(git rev-parse --verify "$1^{commit}") || usage
objdump=${LLVM_OBJDUMP:-llvm-objdump-19}
work=build/same-code
base=$work/tree-${rev:0:12}

# Cut llvm-objdump's listing (stdin) into one file a function under argv[1].
# A call within a section names the function it lands on, not the distance
# to it, which any function between them that changed size moves (a call
# landing on no function's start is a helper's, its number kept).
split_py='
import re, sys
out_dir, lines = sys.argv[1], sys.stdin.read().split("\n")
section, starts, funcs, out = "", {}, [], None
for line in lines:
	m = re.match(r"^Disassembly of section (.*):$", line)
	if m:
		section = m.group(1)
	m = re.match(r"^([0-9a-f]+) <(.*)>:$", line)
	if m and not re.match(r"LBB[0-9_]+$", m.group(2)):
		starts[(section, int(m.group(1), 16) // 8)] = m.group(2)
for i, line in enumerate(lines):
	m = re.match(r"^Disassembly of section (.*):$", line)
	if m:
		section = m.group(1)
		continue
	m = re.match(r"^([0-9a-f]+) <(.*)>:$", line)
	if m:
		if not re.match(r"LBB[0-9_]+$", m.group(2)):
			out = open("%s/%s~%s" % (out_dir, section.replace("/", "_"), m.group(2)), "w")
		continue
	if out is None or not line.strip():
		continue
	m = re.match(r"^\s*([0-9a-f]+):\s*(.*)$", line)
	insn = m.group(2) if m else line.strip()
	c = re.match(r"^call (0x[0-9a-f]+)$", insn)
	if m and c:
		imm = int(c.group(1), 16)
		imm -= (1 << 32) if imm >= 1 << 31 else 0
		target = int(m.group(1)) + 1 + imm
		if (section, target) in starts:	# else a helper call: imm is its id
			insn = "call <%s>" % starts[(section, target)]
		# A call from another section to .text: its number is the offset there.
		if i + 1 < len(lines) and re.search(r"R_BPF_64_32\s+\.text$", lines[i + 1]):
			insn = "call <%s>" % starts.get((".text", imm + 1), "?")
	insn = re.sub(r"LBB[0-9]+_", "LBB_", insn)
	if "CO-RE <local_type_id>" in insn:	# a BTF id moves as types come and go
		insn = re.sub(r"\[\d+\]", "[id]", insn)
		out.write(insn + "\n")
		continue
	out.write(insn + "\n")
'

# The functions of every *.bpf.o below $1, one file each under $2.
split_functions() {
	local from=$1 to=$2 obj
	rm -rf "$to"
	(cd "$from" && find . -name '*.bpf.o' -not -path './same-code/*' | sort) | while read -r obj; do
		mkdir -p "$to/$obj"
		"$objdump" -d -r --no-show-raw-insn "$from/$obj" | python3 -c "$split_py" "$to/$obj"
	done
}

if [ ! -e "$base/.built" ]; then
	rm -rf "$base"
	git worktree prune
	git worktree add -q --detach "$base" "$rev"
	echo "building $rev's BPF objects in $base (log: $base.log)" >&2
	make -C "$base" bpf tests example > "$base.log" 2>&1 ||
		{ echo "the build at $rev failed: $base.log" >&2; exit 2; }
	touch "$base/.built"
fi

split_functions "$base/build" "$work/before"
split_functions build "$work/after"

# An object that moved (only before at one path, only after at another,
# with the same file name in the same compiler's or arch's folder, one on each
# side) is compared at its new path.
python3 - "$work/before" "$work/after" <<'PY'
import os, sys
before, after = sys.argv[1], sys.argv[2]
def objects(top):
	found = []
	for d, subdirs, _ in os.walk(top):
		found += [os.path.relpath(os.path.join(d, s), top) for s in subdirs if s.endswith(".bpf.o")]
	return set(found)
b, a = objects(before), objects(after)
def key(path):	# the file name, and the compiler's or arch's folder if any
	top = path.split("/")[0]
	return (os.path.basename(path), top if top in ("clang-22", "arm64") else "")
only_b, only_a = {}, {}
for path in b - a:
	only_b.setdefault(key(path), []).append(path)
for path in a - b:
	only_a.setdefault(key(path), []).append(path)
for k, new in only_a.items():
	old = only_b.get(k, [])
	if len(new) == 1 and len(old) == 1:
		print("%s: moved from %s" % (new[0], old[0]))
		os.makedirs(os.path.dirname(os.path.join(before, new[0])) or before, exist_ok=True)
		os.rename(os.path.join(before, old[0]), os.path.join(before, new[0]))
PY

# Objects of other targets than REV's build (make test's arm64/ and
# clang-22/ builds, the verifier's vobj/) are under folders REV's build has
# none of: they are named once, not compared.
for dir in "$work/after"/*/; do
	dir=$(basename "$dir")
	if [ ! -d "$work/before/$dir" ]; then
		echo "$dir/: not built at ${rev:0:12} (another target's objects), not compared"
		rm -rf "${work:?}/after/$dir"
	fi
done

status=0
for obj in $( (cd "$work/before" && find . -type d -name '*.bpf.o';
	       cd ../after && find . -type d -name '*.bpf.o') | sort -u); do
	if [ ! -d "$work/before/$obj" ] || [ ! -d "$work/after/$obj" ]; then
		echo "${obj#./}: only $( [ -d "$work/before/$obj" ] && echo before || echo after)"
		status=1
	elif diffs=$(diff -rq "$work/before/$obj" "$work/after/$obj"); then
		echo "${obj#./}: same ($(ls "$work/after/$obj" | wc -l) functions)"
	else
		echo "${obj#./}: DIFFERS"
		sed -E 's|^Files .*/([^/]+) and .* differ$|  changed: \1|;
			s|^Only in .*/before/.*: (.*)$|  only before: \1|;
			s|^Only in .*/after/.*: (.*)$|  only after: \1|' <<< "$diffs"
		status=1
	fi
done
exit $status
