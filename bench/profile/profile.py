#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Count a QEMU trace's guest instructions by JIT function.

  profile.py QEMU_LOG JIT_RUN_OUTPUT [--ops N] [--prog NAME] [--annotate FUNCTION]

QEMU_LOG is what '-d exec,nochain,in_asm' wrote (each translated block's
instructions, then a line per block run); JIT_RUN_OUTPUT is jit_run's, whose
KSYM lines say where each function of each program lies. Prints the
instructions run in each function of each program (or of --prog's), per
operation if --ops gives how many the runs made; --annotate prints one
function's instructions with how often each ran (per operation).
"""
import argparse
import bisect
import collections
import re
import sys


def read_ksyms(path):
    ksyms = []
    for line in open(path):
        if line.startswith('KSYM '):
            _, prog, addr, length, func = line.split()
            ksyms.append((int(addr, 16), int(length), prog, func))
    ksyms.sort()
    return ksyms


def read_trace(path):
    """Each block's instructions (address, text), and how often each block ran."""
    blocks, runs, text = {}, collections.Counter(), {}
    pending = None
    insn = re.compile(r'0x([0-9a-f]+):\s+(?:[0-9a-f]{2} )+\s*(.*)')
    with open(path, errors='replace') as f:
        for line in f:
            if line.startswith('IN:'):
                pending = []
                continue
            if pending is not None:
                m = insn.match(line)
                if m:
                    addr = int(m.group(1), 16)
                    pending.append(addr)
                    text[addr] = m.group(2).strip()
                    continue
                if pending:
                    blocks[pending[0]] = pending
                pending = None
            if line.startswith('Trace'):
                runs[int(line.split('[')[1].split('/')[1], 16)] += 1
    if pending:
        blocks[pending[0]] = pending
    return blocks, runs, text


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('log')
    ap.add_argument('jit_run_output')
    ap.add_argument('--ops', type=int, default=1, help='operations the runs made')
    ap.add_argument('--prog', help='only this program\'s functions')
    ap.add_argument('--annotate', help='a function to print instruction by instruction')
    args = ap.parse_args()

    ksyms = [k for k in read_ksyms(args.jit_run_output) if not args.prog or k[2] == args.prog]
    if not ksyms:
        sys.exit('profile.py: no KSYM lines (of that program) in %s' % args.jit_run_output)
    starts = [k[0] for k in ksyms]

    def where(addr):
        i = bisect.bisect_right(starts, addr) - 1
        if i >= 0 and addr < ksyms[i][0] + ksyms[i][1]:
            return ksyms[i]
        return None

    blocks, runs, text = read_trace(args.log)
    per_func, per_insn = collections.Counter(), collections.Counter()
    for start, count in runs.items():
        insns = blocks.get(start, [start])
        for addr in insns:
            per_insn[addr] += count
        k = where(start)
        if k:
            per_func[(k[2], k[3])] += count * len(insns)
    total = sum(per_func.values())
    print('%.1f instructions per operation in %s\'s functions (%d operations)' %
          (total / args.ops, args.prog or 'the programs', args.ops))
    for (prog, func), count in per_func.most_common():
        print('%10.1f  %s: %s' % (count / args.ops, prog, func))
    if args.annotate:
        for addr, length, prog, func in ksyms:
            if func != args.annotate:
                continue
            print('\n%s: %s, each instruction\'s runs per operation' % (prog, func))
            for a in sorted(x for x in text if addr <= x < addr + length):
                print('%8.2f  %5x  %s' % (per_insn[a] / args.ops, a - addr, text[a]))


if __name__ == '__main__':
    main()
