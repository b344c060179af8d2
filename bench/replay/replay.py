#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Replay a JITed arena list walk natively on this host's CPU.

    bench/replay/replay.py PATCHED_DUMP [STOCK_DUMP] [--nodes N] [--rounds R]

A dump is jit_dump's output for bench/walk.bpf.o's "walk" program, taken in
the VM (bench/replay/replay.sh). The bare walk (walk_can_loop) is copied
into executable memory with its kernel addresses pointed at this process:
the arena base (r12) at a buffer laid out as the guest's arena was (the
cursor walk_pos, the list head, N nodes after them or shuffled), the
counter global at a zero, and its may_goto count set so high that the
clock is never called. Each variant walks the same N nodes, interleaved,
R rounds; the median ns/node of each and their ratios are printed.

Variants: "patched" (the image as the JIT emitted it: arena accesses at
offset 0 with no displacement, kernel patch 11); "patched, disp8" (the
same image with each such access given back stock's 8-bit 0, jumps
relinked: only patch 11 undone); "stock" (the stock kernel's image, count
form), if given; "native C" (the same walk in C, gcc -O2, following the
same pointers: the arena sits at a 4 GiB-aligned address, so its user
addresses are pointers here too). Nothing here loads BPF.
"""
import ctypes
import mmap
import random
import re
import statistics
import struct
import subprocess
import sys
import tempfile
import time

FUNC = "walk_can_loop"
NODE = 24                       # struct walk_item: next, prev, key


def load_dump(path):
    funcs = {}
    with open(path) as f:
        for line in f:
            if "\t" in line:
                name, hexbytes = line.rstrip("\n").split("\t", 1)
                if re.fullmatch(r"[0-9a-f]+", hexbytes):
                    funcs[name] = bytes.fromhex(hexbytes)
    if FUNC not in funcs:
        sys.exit(f"replay.py: no {FUNC} in {path}")
    return funcs[FUNC]


def decode(code):
    """(offset, bytes, text) of each instruction, by objdump."""
    with tempfile.NamedTemporaryFile(suffix=".bin") as f:
        f.write(code)
        f.flush()
        out = subprocess.run(["objdump", "-D", "-b", "binary", "-mi386:x86-64", f.name],
                             check=True, capture_output=True, text=True).stdout
    insns = []
    for line in out.splitlines():
        m = re.match(r"\s*([0-9a-f]+):\t([0-9a-f ]+?)\s*(?:\t(.*))?$", line)
        if not m:
            continue
        off, raw, text = int(m.group(1), 16), bytes.fromhex(m.group(2).replace(" ", "")), m.group(3)
        if text is None:        # a long instruction's bytes continued
            insns[-1] = (insns[-1][0], insns[-1][1] + raw, insns[-1][2])
        else:
            insns.append((off, raw, text))
    return insns


def r12_access(raw):
    """Is it a load or store (REX, 8b/89, ModRM, SIB) with r12 in its SIB?"""
    if len(raw) < 4 or raw[0] & 0xf0 != 0x40 or raw[1] not in (0x8b, 0x89) or raw[2] & 7 != 4:
        return False
    sib = raw[3]
    return bool(raw[0] & 2 and (sib >> 3) & 7 == 4 or raw[0] & 1 and sib & 7 == 4)


def with_disp8(code):
    """Each no-displacement r12 access given stock's 8-bit 0, jumps relinked."""
    new = []                    # (offset, length before, bytes now)
    for off, raw, text in decode(code):
        old_len = len(raw)
        if r12_access(raw) and raw[2] & 0xc0 == 0:
            sib = raw[3]
            if sib & 7 == 4 and (sib >> 3) & 7 == 5:   # [r12 + r13]: stock's base is r13
                sib = (sib & 0xc0) | (4 << 3) | 5
            raw = raw[:2] + bytes([raw[2] | 0x40, sib]) + raw[4:] + b"\0"
        new.append((off, old_len, raw))
    where, at = {}, 0
    for off, old_len, raw in new:
        where[off] = at
        at += len(raw)
    where[len(code)] = at
    out = b""
    for off, old_len, raw in new:
        if raw[0] in (0xeb,) or 0x70 <= raw[0] <= 0x7f:                    # rel8
            target = off + old_len + struct.unpack("b", raw[1:2])[0]
            rel = where[target] - (where[off] + 2)
            if not -128 <= rel <= 127:
                sys.exit("replay.py: a short jump no longer reaches")
            raw = raw[:1] + struct.pack("b", rel)
        elif raw[0] in (0xe8, 0xe9) or (raw[0] == 0x0f and 0x80 <= raw[1] <= 0x8f):
            n = 1 if raw[0] != 0x0f else 2
            target = off + old_len + struct.unpack("<i", raw[n:n + 4])[0]
            new_target = where.get(target, target)     # outside: where it was
            raw = raw[:n] + struct.pack("<i", new_target - (where[off] + len(raw)))
        out += raw
    return out


def movabs(raw):
    """(register, imm64) of a movabs, or None."""
    if len(raw) == 10 and raw[0] in (0x48, 0x49) and 0xb8 <= raw[1] <= 0xbf:
        return (raw[1] - 0xb8) + (8 if raw[0] == 0x49 else 0), struct.unpack("<Q", raw[2:])[0]
    return None


class Arena:
    """4 GiB at a 4 GiB-aligned address: an arena address is then a pointer here too."""
    def __init__(self):
        self.mem = mmap.mmap(-1, 2 << 32, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS |
                             getattr(mmap, "MAP_NORESERVE", 0x4000))
        start = ctypes.addressof(ctypes.c_char.from_buffer(self.mem))
        self.base = (start + (1 << 32) - 1) & ~((1 << 32) - 1)
        self.skip = self.base - start

    def put(self, off, value):
        struct.pack_into("<Q", self.mem, self.skip + off, value)


NATIVE_C = """
long long native_walk(void **cursor, void *head)
{
	void *p = *cursor;
	long long n = 0;

	while (p != head) {
		n++;
		p = *(void **)p;
	}
	*cursor = p;
	return n;
}
"""


def native_walk():
    """The same walk in C (gcc -O2), following the same pointers."""
    tmp = tempfile.mkdtemp()
    with open(f"{tmp}/walk.c", "w") as f:
        f.write(NATIVE_C)
    subprocess.run(["gcc", "-O2", "-shared", "-fPIC", "-o", f"{tmp}/walk.so", f"{tmp}/walk.c"],
                   check=True)
    fn = ctypes.CDLL(f"{tmp}/walk.so").native_walk
    fn.restype = ctypes.c_longlong
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    return fn


def prepare(code, arena, zero_addr):
    """The image with its kernel addresses replaced; (code, cursor offset, head offset)."""
    code = bytearray(code)
    cursor = head = None
    count_set = False
    for off, raw, text in decode(bytes(code)):
        m = movabs(raw)
        if m:
            reg, imm = m
            if reg == 12:                               # the arena's kernel base
                new = arena.base
            elif imm >> 48 == 0xffa0:                   # a global in a map value
                new = zero_addr
            else:                                       # an arena address, as user space sees it
                new = arena.base | (imm & 0xffffffff)
                if cursor is None:
                    cursor = imm & 0xffffffff
                elif head is None:
                    head = imm & 0xffffffff
            code[off + 2:off + 10] = struct.pack("<Q", new)
        elif raw[:3] == b"\x48\xc7\x45" and not count_set:   # the frame's may_goto count
            code[off + 4:off + 8] = struct.pack("<i", 0x7fffffff)
            count_set = True
    if cursor is None or head is None or head != cursor + 8:
        sys.exit("replay.py: the walk's cursor and list head were not where expected")
    return bytes(code), cursor, head


def main():
    args, nodes, rounds = [], 1 << 20, 11
    argv = sys.argv[1:]
    while argv:
        a = argv.pop(0)
        if a == "--nodes":
            nodes = int(argv.pop(0))
        elif a == "--rounds":
            rounds = int(argv.pop(0))
        elif a in ("-h", "--help"):
            print(__doc__)
            return
        else:
            args.append(a)
    if not args or len(args) > 2:
        sys.exit(__doc__)
    patched = load_dump(args[0])
    variants = [("patched", patched), ("patched, disp8", with_disp8(patched))]
    if len(args) == 2:
        variants.append(("stock", load_dump(args[1])))

    zero = ctypes.c_ulonglong(0)
    # An arena address is the base plus its user address's low 32 bits.
    arena = Arena()
    USER = arena.base
    fns, keep = [], []
    for name, code in variants:
        code, cursor, head = prepare(code, arena, ctypes.addressof(zero))
        page = mmap.mmap(-1, mmap.PAGESIZE * (1 + len(code) // mmap.PAGESIZE),
                         prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
        page.write(code)
        keep.append(page)
        fns.append((name, cursor, head, ctypes.CFUNCTYPE(ctypes.c_longlong)(
            ctypes.addressof(ctypes.c_char.from_buffer(page)))))
    # The native walk uses the first image's cursor and head.
    native = native_walk()
    cursor0, head0 = fns[0][1], fns[0][2]
    fns.append(("native C", cursor0, head0,
                lambda: native(USER + cursor0, USER + head0)))

    # The nodes' offsets: clear of every image's globals (where the guest's
    # arena had them, anywhere in its 4 GiB).
    globals_at = [cursor for _, cursor, _, _ in fns]
    first = next((f for f in [1 << 16] + [(g + (1 << 16)) & ~0xfff for g in globals_at]
                  if f + nodes * NODE <= 1 << 32 and
                  not any(f - 16 <= g < f + nodes * NODE for g in globals_at)), None)
    if first is None:
        sys.exit("replay.py: no room for the nodes beside the globals")
    print(f"{FUNC}, {nodes} nodes, {rounds} rounds, interleaved; ns/node, median [min-max]")
    for order in ("in order", "shuffled"):
        slots = list(range(nodes))
        if order == "shuffled":
            random.Random(1).shuffle(slots)
        for i, s in enumerate(slots[:-1]):
            arena.put(first + s * NODE, USER | (first + slots[i + 1] * NODE))
        samples = {name: [] for name, _, _, _ in fns}
        for r in range(rounds + 1):
            for name, cursor, head, fn in fns:
                arena.put(first + slots[-1] * NODE, USER | head)
                arena.put(cursor, USER | (first + slots[0] * NODE))
                start = time.perf_counter_ns()
                got = fn()
                ns = time.perf_counter_ns() - start
                if got != nodes:
                    sys.exit(f"replay.py: {name} walked {got} nodes, want {nodes}")
                if r:           # round 0 warms up
                    samples[name].append(ns / nodes)
        med = {name: statistics.median(s) for name, s in samples.items()}
        for name, s in samples.items():
            print(f"  {order:9} {name:15} {med[name]:7.3f} [{min(s):.3f}-{max(s):.3f}]")
        for name in med:
            if name != "patched":
                print(f"  {order:9} patched / {name}: {med['patched'] / med[name]:.3f}")
        for name in med:
            if name not in ("patched", "native C"):
                print(f"  {order:9} {name} / native C: {med[name] / med['native C']:.3f}")


if __name__ == "__main__":
    main()
