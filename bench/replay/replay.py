#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Replay the JITed arena list walks natively on this host's CPU.

    bench/replay/replay.py PATCHED_DUMP [STOCK_DUMP] [--nodes N] [--rounds R]
                           [--results JSON]

A dump is jit_dump's output for bench/walk.bpf.o's "walk" program, taken in
the VM (bench/replay/replay.sh). Each walk's JITed function is copied into
executable memory with its kernel addresses pointed at this process: the
arena base (r12) at a buffer laid out as the guest's arena was (the cursor
walk_pos, the list head, N nodes after them or shuffled), each page of
globals (a map value: walk_cursor, result_count...) at a zeroed page of its
own, and its may_goto budget set so high that it never runs out (the clock
of our kernel's budget is never called). The walks, each as bench/walk.c
runs it:

  can_loop (bare walk)    walk_can_loop(): the bare loop, from walk_pos
  ak_list_count           ak_list_count(list, cursor), the library's function
  ak_list_find (absent)   walk_lib_find(): ak_list_find of a key no node has
  ak_list_for_each_entry  walk_lib_for_each(): ak_list_for_each_entry_resume

Each runs as our kernel JITed it ("ours") and, given STOCK_DUMP, as stock
6.12 did ("stock"); the bare walk also as ours with patch 11 undone ("ours,
disp8": each arena access without a displacement given stock's 8-bit 0,
jumps relinked). Beside them the same walks in C (gcc -O2) over the same
nodes: the arena sits at a 4 GiB-aligned address, so its user addresses are
pointers here too. Every function walks the same N nodes, interleaved, R
rounds after one to warm up; each answer is checked (the count, "not
found", the entries counted). The TCG figures beside them (ns a node, and
x86 instructions a node with ICOUNT=1) come from a results.json of `make
bench` (--results; default build/bench/results.json), the cases run alone
where it has them. Nothing here loads BPF.
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


import json
import os

NODE = 24                       # struct walk_item: next, prev, key
KEY = 16                        # its key's offset; ak_list_find looks for ~0
BUDGET_FORMS = (0x100, 0x800000)    # ours: 256 steps before the clock; stock: a count

# The walks: (name as the bench's tables give it, function in the dump,
# how it is called, what it answers, the native walk it is set beside).
WALKS = [
    ("can_loop (bare walk)", "walk_can_loop", "walk_pos", "count", "native C, user space"),
    ("ak_list_count", "ak_list_count", "list, cursor", "count", "native C, user space"),
    ("ak_list_find (absent)", "walk_lib_find", "", "zero", "native C, key compared"),
    ("ak_list_for_each_entry", "walk_lib_for_each", "", "global", "native C, user space"),
]


def load_dump(path):
    funcs = {}
    with open(path) as f:
        for line in f:
            if "\t" in line:
                name, hexbytes = line.rstrip("\n").split("\t", 1)
                if re.fullmatch(r"[0-9a-f]+", hexbytes):
                    funcs[name] = bytes.fromhex(hexbytes)
    for _, func, _, _, _ in WALKS:
        if func not in funcs:
            sys.exit(f"replay.py: no {func} in {path}")
    return funcs


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




class Globals:
    """Each page of kernel memory an image names (map values): a zeroed page here."""
    def __init__(self):
        self.pages = {}

    def addr(self, kaddr):
        page = kaddr & ~0xfff
        if page not in self.pages:
            self.pages[page] = mmap.mmap(-1, 2 * mmap.PAGESIZE)
        buf = self.pages[page]
        return ctypes.addressof(ctypes.c_char.from_buffer(buf)) + (kaddr & 0xfff)

    def clear(self):
        for buf in self.pages.values():
            buf[:] = bytes(len(buf))

    def words(self):
        for buf in self.pages.values():
            yield from struct.unpack(f"<{len(buf) // 8}Q", buf)


NATIVE_C = """
struct node { struct node *next, *prev; unsigned long long key; };

long long native_count(struct node *head)
{
	struct node *p;
	long long n = 0;

	for (p = head->next; p != head; p = p->next)
		n++;
	return n;
}

long long native_find(struct node *head, unsigned long long key)
{
	struct node *p;
	long long n = 0;

	for (p = head->next; p != head; p = p->next) {
		if (p->key == key)
			return -17;
		n++;
	}
	return n;
}
"""


def native_walks():
    """The same walks in C (gcc -O2), following the same pointers."""
    tmp = tempfile.mkdtemp()
    with open(f"{tmp}/walk.c", "w") as f:
        f.write(NATIVE_C)
    subprocess.run(["gcc", "-O2", "-shared", "-fPIC", "-o", f"{tmp}/walk.so", f"{tmp}/walk.c"],
                   check=True)
    lib = ctypes.CDLL(f"{tmp}/walk.so")
    for fn in (lib.native_count, lib.native_find):
        fn.restype = ctypes.c_longlong
        fn.argtypes = [ctypes.c_void_p, ctypes.c_ulonglong]
    return lib


def prepare(code, arena, kmem):
    """The image with its kernel addresses replaced; (code, the arena offsets it names)."""
    code = bytearray(code)
    named = []
    count_set = False
    for off, raw, text in decode(bytes(code)):
        m = movabs(raw)
        if m:
            reg, imm = m
            if reg == 12:                               # the arena's kernel base
                new = arena.base
            elif imm >> 56 == 0xff:                     # a global in a map value
                new = kmem.addr(imm)
            else:                                       # an arena address, as user space sees it
                new = arena.base | (imm & 0xffffffff)
                named.append(imm & 0xffffffff)
            code[off + 2:off + 10] = struct.pack("<Q", new)
        elif raw[:3] == b"\x48\xc7\x45" and not count_set:   # the frame's may_goto budget
            if struct.unpack("<i", raw[4:8])[0] not in BUDGET_FORMS:
                sys.exit(f"replay.py: the first stack store is not a may_goto budget: {text}")
            code[off + 4:off + 8] = struct.pack("<i", 0x7fffffff)
            count_set = True
    if not count_set:
        sys.exit("replay.py: no may_goto budget found in an image")
    return bytes(code), named


def executable(code, keep):
    page = mmap.mmap(-1, mmap.PAGESIZE * (1 + len(code) // mmap.PAGESIZE),
                     prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    page.write(code)
    keep.append(page)
    fn = ctypes.CFUNCTYPE(ctypes.c_longlong, ctypes.c_void_p, ctypes.c_void_p)(
        ctypes.addressof(ctypes.c_char.from_buffer(page)))
    keep.append(fn)
    return fn


def tcg_figures(path, nodes):
    """{(case, order): (ns a node, insns a node or None, "alone" or "")} from a results.json."""
    figures = {}
    if not path or not os.path.exists(path):
        return figures, None
    with open(path) as f:
        data = json.load(f)
    for row in data.get("rows", []):
        if row["section"] not in ("walk", "walk-alone") or row["size"] != nodes:
            continue
        key = (row["case"], row["variant"])
        alone = row["section"] == "walk-alone"
        if key in figures and not alone:
            continue                                    # the case alone is the figure judged
        figures[key] = (row["median"], row.get("icount_median"), "alone" if alone else "")
    return figures, data.get("environment", {})


def host_cpu():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown"


def main():
    args, nodes, rounds = [], 1 << 20, 11
    results = "build/bench/results.json"
    argv = sys.argv[1:]
    while argv:
        a = argv.pop(0)
        if a == "--nodes":
            nodes = int(argv.pop(0))
        elif a == "--rounds":
            rounds = int(argv.pop(0))
        elif a == "--results":
            results = argv.pop(0)
        elif a in ("-h", "--help"):
            print(__doc__)
            return
        else:
            args.append(a)
    if not args or len(args) > 2:
        sys.exit(__doc__)
    images = [("ours", load_dump(args[0]))]
    if len(args) == 2:
        images.append(("stock", load_dump(args[1])))

    arena = Arena()
    USER = arena.base
    kmem = Globals()
    keep = []
    cursor = ctypes.create_string_buffer(64)            # ak_list_count's cursor argument

    # (walk name, image name, function, how it is called, what it answers,
    # walk_pos and the list head where that kernel's arena had them: the
    # bare walk names walk_pos, then the head just after it)
    fns = []
    for image, funcs in images:
        _, named = prepare(funcs["walk_can_loop"], arena, kmem)
        if len(named) < 2 or named[1] != named[0] + 8:
            sys.exit(f"replay.py: {image}: walk_pos and the list head were not where expected")
        at = (named[0], named[1])
        for walk, func, call, answer, _ in WALKS:
            code, named = prepare(funcs[func], arena, kmem)
            if any(a not in at for a in named):
                sys.exit(f"replay.py: {image}: {func} names arena addresses other than the list's")
            fns.append((walk, image, executable(code, keep), at, answer))
            if func == "walk_can_loop" and image == "ours":
                code, _ = prepare(with_disp8(funcs[func]), arena, kmem)
                fns.append((walk, "ours, disp8", executable(code, keep), at, answer))
    native = native_walks()
    # The native walks use the first image's list head.
    at = fns[0][3]
    fns.append(("native C, user space", "gcc -O2", native.native_count, at, "count"))
    fns.append(("native C, key compared", "gcc -O2", native.native_find, at, "count"))

    # The nodes: clear of every image's globals (anywhere in its 4 GiB).
    heads = {f[3][1] for f in fns}
    first = next((f for f in [1 << 16] + [(h + (1 << 16)) & ~0xfff for h in heads]
                  if f + nodes * NODE <= 1 << 32 and
                  not any(f - 16 <= h < f + nodes * NODE for h in heads)), None)
    if first is None:
        sys.exit("replay.py: no room for the nodes beside the list heads")
    figures, env = tcg_figures(results, nodes)
    print(f"The JITed list walks of bench/walk.bpf.o replayed natively on {host_cpu()}: "
          f"{nodes} nodes, {rounds} rounds interleaved; ns a node, median [min-max]")
    if env is not None:
        print(f"TCG figures: {results} ({env.get('date', '?')}, {env.get('cpus', '?')} vCPUs, "
              f"host {env.get('host_cpu') or '?'}); insns: the same run's ICOUNT=1 figures")
    head_line = (f"  {'walk':24} {'image':13} {'native ns/node':24} {'/ native C':>10}"
                 f" {'TCG ns/node':>12} {'TCG / nat.':>10} {'insns/node':>10}")
    for order in ("in order", "shuffled"):
        slots = list(range(nodes))
        if order == "shuffled":
            random.Random(1).shuffle(slots)
        for i, s in enumerate(slots[:-1]):
            arena.put(first + s * NODE, USER | (first + slots[i + 1] * NODE))
        samples = {(w, i): [] for w, i, _, _, _ in fns}
        for r in range(rounds + 1):
            for walk, image, fn, (pos_at, head), answer in fns:
                kmem.clear()
                ctypes.memset(cursor, 0, len(cursor))
                arena.put(first + slots[-1] * NODE, USER | head)
                arena.put(head, USER | (first + slots[0] * NODE))
                arena.put(pos_at, USER | (first + slots[0] * NODE))
                if image == "gcc -O2":
                    a1, a2 = USER | head, 0xffffffffffffffff
                else:
                    a1, a2 = USER | head, ctypes.addressof(cursor)
                start = time.perf_counter_ns()
                got = fn(a1, a2)
                ns = time.perf_counter_ns() - start
                ok = {"count": got == nodes, "zero": got == 0,
                      "global": got == 0 and nodes in kmem.words()}[answer]
                if not ok:
                    sys.exit(f"replay.py: {walk} ({image}) answered {got} over {nodes} nodes")
                if r:           # round 0 warms up
                    samples[(walk, image)].append(ns / nodes)
        med = {k: statistics.median(v) for k, v in samples.items()}
        print(f"\n{order}:")
        print(head_line)
        nat = {w: med[(w, "gcc -O2")] for w in ("native C, user space", "native C, key compared")}
        order_of = [w for w, _, _, _, _ in WALKS] + [f[0] for f in fns]
        for walk, image, _, _, _ in sorted(fns, key=lambda f: order_of.index(f[0])):
            s = samples[(walk, image)]
            base = next((n for w, _, _, _, n in WALKS if w == walk), walk)
            # The TCG figures are of our kernel's image (and of native C).
            tcg = figures.get((walk, order)) if image in ("ours", "gcc -O2") else None
            tcg_nat = figures.get((base, order))
            tcg_text = f"{tcg[0]:7.2f}{' a' if tcg[2] else '  '}" if tcg else "-"
            ratio = (f"{tcg[0] / tcg_nat[0]:.3f}" if tcg and tcg_nat and tcg_nat[0] else "-")
            insns = f"{tcg[1]:.2f}" if tcg and tcg[1] is not None else "-"
            med_text = f"{med[(walk, image)]:.3f} [{min(s):.3f}-{max(s):.3f}]"
            print(f"  {walk:24} {image:13} {med_text:24} {med[(walk, image)] / nat[base]:10.3f}"
                  f" {tcg_text:>12} {ratio:>10} {insns:>10}")
        if ("can_loop (bare walk)", "ours, disp8") in med:
            print(f"  patch 11: the bare walk, ours / ours with disp8: "
                  f"{med[('can_loop (bare walk)', 'ours')] / med[('can_loop (bare walk)', 'ours, disp8')]:.3f}")
    print("\n(a: the TCG case run alone, one case a process; TCG figures are from the guest,"
          " the others from this host's CPU)")


if __name__ == "__main__":
    main()
