#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""tests/header_order.py [DIR]: the library's headers keep their order.

Two rules over include/arenakit/ (or DIR):
  - no circle among the headers' #include lines;
  - no function body in an internal header (*_impl*.h: the bodies, cut by
    mechanism) uses a function whose body comes later in the text a program
    sees (every header's includes followed where they stand, each header
    once), unless both are in one file: each file uses only what the files
    before it define. A prototype earlier does not count: a body that needs
    one written ahead of a later file is the circle this finds. A public
    header's inline wrapper may call a function its own interface declares.
Macro bodies are not checked (they are expanded where used). Prints each
fault and exits 1 if any, else prints what it read and exits 0.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*<arenakit/([\w.]+)>')
IDENT = re.compile(r'[A-Za-z_]\w*')
KEYWORDS = {'if', 'for', 'while', 'switch', 'return', 'sizeof', 'do', 'else',
            '__attribute__', '_Static_assert', 'typeof', '__typeof__',
            '__builtin_memcpy', '__builtin_memset', 'defined'}


def code_lines(text):
    """Each line with comments, strings and macro bodies blanked."""
    text = re.sub(r'/\*.*?\*/', lambda m: re.sub(r'[^\n]', ' ', m.group()), text, flags=re.S)
    text = re.sub(r'//[^\n]*', '', text)
    text = re.sub(r'"(\\.|[^"\\\n])*"', '""', text)
    out, in_macro = [], False
    for line in text.split('\n'):
        starts = line.lstrip().startswith('#')
        if starts or in_macro:
            in_macro = line.rstrip().endswith('\\')
            out.append(('#', line))
        else:
            out.append(('', line))
    return out


def flatten(name, headers, seen, out):
    """The lines a program sees from @name: (file, line number, kind, text)."""
    if name in seen or name not in headers:
        return
    seen.add(name)
    for number, (kind, line) in enumerate(code_lines(headers[name]), 1):
        m = INCLUDE.match(line)
        if m:
            flatten(m.group(1), headers, seen, out)
        else:
            out.append((name, number, kind, line))


def bodies(lines):
    """Function definitions (name -> position) and uses inside bodies."""
    defs, uses = {}, []
    depth, tokens, current = 0, [], None
    for pos, (name, number, kind, line) in enumerate(lines):
        if kind == '#':
            continue
        for tok in re.findall(r'[A-Za-z_]\w*|[{}();]', line):
            if tok == '{':
                if depth == 0 and tokens and tokens[-1][0] == ')':
                    level, i = 0, len(tokens) - 1
                    while i >= 0:
                        level += tokens[i][0] == ')'
                        level -= tokens[i][0] == '('
                        if level == 0:
                            break
                        i -= 1
                    fn, fpos, fnumber = tokens[i - 1] if i > 0 else (None, 0, 0)
                    if fn and IDENT.fullmatch(fn) and fn not in KEYWORDS:
                        defs.setdefault(fn, (fpos, name, fnumber))
                        current = fn
                depth += 1
            elif tok == '}':
                depth = max(depth - 1, 0)
                if depth == 0:
                    current, tokens = None, []
            elif tok == ';' and depth == 0:
                tokens = []
            elif depth == 0:
                tokens.append((tok, pos, number))
            elif current and IDENT.fullmatch(tok) and tok not in KEYWORDS:
                uses.append((tok, pos, name, number, current))
    return defs, uses


def main():
    top = sys.argv[1] if len(sys.argv) > 1 else 'include/arenakit'
    headers = {f: open(os.path.join(top, f)).read()
               for f in sorted(os.listdir(top)) if f.endswith('.h')}
    faults = set()

    edges = {f: [m.group(1) for m in map(INCLUDE.match, t.split('\n')) if m]
             for f, t in headers.items()}

    def visit(f, path):
        if f in path:
            faults.add('circle: ' + ' -> '.join(path[path.index(f):] + [f]))
            return
        for g in edges.get(f, []):
            visit(g, path + [f])
    for f in headers:
        visit(f, [])

    for entry in headers:
        lines = []
        flatten(entry, headers, set(), lines)
        defs, uses = bodies(lines)
        for tok, pos, name, number, fn in uses:
            d = defs.get(tok)
            if d and d[0] > pos and d[1] != name and '_impl' in name:
                faults.add('%s:%d: %s() uses %s(), whose body is later, in %s:%d'
                           % (name, number, fn, tok, d[1], d[2]))
    for fault in sorted(faults):
        print(fault)
    if faults:
        return 1
    print('%d headers: no circle, and no body uses a later file\'s function' % len(headers))
    return 0


if __name__ == '__main__':
    sys.exit(main())
