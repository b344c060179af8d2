#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# Write mutants anew against today's headers, so that each applies exactly
# (tests/explore/mutants.sh refuses fuzz and offsets past 3 lines). Each is
# applied as patch would with fuzz, and its diff taken again from the
# result; its comment lines stay. Read what this prints: a hunk that
# needed fuzz or moved far may now land in another function than the one
# its comment names, and then the mutant must be rewritten by hand.
#
# Usage: tests/explore/mutants-refresh.sh [MUTANT.patch...]
set -eu
[ $# -gt 0 ] || set -- tests/explore/mutants/*.patch
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for mutant in "$@"; do
	rm -rf "$work/a" "$work/b"
	mkdir -p "$work/a" "$work/b"
	cp -r include "$work/a/include"
	cp -r include "$work/b/include"
	if ! patch --no-backup-if-mismatch -d "$work/b" -p1 < "$mutant" > "$work/log" 2>&1; then
		echo "$mutant: does not apply even with fuzz: rewrite it"
		sed 's/^/  /' "$work/log"
		continue
	fi
	if grep -q 'offset\|fuzz' "$work/log"; then
		echo "$mutant: refreshed; check it still lands where its comment says:"
		grep 'offset\|fuzz' "$work/log" | sed 's/^/  /'
	fi
	{
		sed -n '/^--- /q;p' "$mutant"
		(cd "$work" && diff -ru a/include b/include) | grep -v '^diff -ru' |
			sed 's|^--- a/\([^\t]*\).*|--- a/\1|; s|^+++ b/\([^\t]*\).*|+++ b/\1|'
	} > "$work/new.patch"
	mv "$work/new.patch" "$mutant"
done
