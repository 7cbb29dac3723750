"""A slow, obviously-sequential Python model of the engine's semantics (docs/engine.md), used as an oracle.

It keeps dicts instead of shadow memory, exact barrier counters instead of modular ones, processes every lane
in record order, and knows nothing about workers, batches, pages or routing. Its output is keyed by PCs, not
node ids: edges {(from, to, label, prior): stats} and barrier spans {barrier: accesses}. With values (value
mode, docs/engine.md "Value redundancy"), also value_edges {(from, to, label, prior): [load lane-granules with a
value, those that returned the granule's last loaded value, those within `value_approx` of it otherwise]}:
LoadSpy's temporal redundancy, exact and approximate (seeds/001), and silent {pc: store lanes that wrote the value
their location held}, shared and local ones only where the block (thread) had accessed the granule before.
"""

from __future__ import annotations

import math
import struct
from collections import defaultdict

import numpy as np

MEM, BARRIER, BLOCK_EXIT = 1, 2, 3
GLOBAL, SHARED, LOCAL = 1, 2, 3
READ, WRITE = 0x1, 0x2


def within_share(a: float, b: float, share: float) -> bool:
    return math.isfinite(a) and math.isfinite(b) and abs(a - b) <= share * max(abs(a), abs(b))


def approx_float(a: int, b: int, share: float) -> bool:
    """Two 4-byte granules as floats (value_shadow.h)."""
    return within_share(
        struct.unpack("<f", struct.pack("<I", a))[0], struct.unpack("<f", struct.pack("<I", b))[0], share
    )


def approx_double_high(a_high: int, b_high: int, share: float) -> bool:
    """Two doubles from their high words alone (value_shadow.h)."""
    a, b = (struct.unpack("<d", struct.pack("<Q", h << 32))[0] for h in (a_high, b_high))
    return within_share(a, b, share)


def _stats():
    return {"bytes": 0, "accesses": 0, "rar": 0, "raw": 0, "war": 0, "waw": 0, "synced": 0, "synced_bytes": 0}


class Reference:
    def __init__(self, allocation: tuple[int, int] | None = None, value_approx: float = 0.0):
        """`allocation` (address, size): value mode also counts that object's load lane-granules with a value and
        the redundant ones (object_values), as object_touches.json's `value_loads` and `same_value`.
        `value_approx`: the share of approximate redundancy (EngineConfig.value_approx)."""
        self.allocation = allocation
        self.value_approx = value_approx
        self.silent = defaultdict(lambda: defaultdict(int))  # launch -> pc key -> silent store lanes
        self.object_values = [0, 0]
        self.glob = {}  # granule -> (launch, pc_key, block, tid, write, bsync, wsync)
        self.edges = defaultdict(lambda: defaultdict(_stats))  # launch -> key -> stats
        self.spans = defaultdict(lambda: defaultdict(int))  # launch -> barrier pc key -> accesses
        self.launch_kernel = {}
        self.gvals = {}  # granule -> the 4 bytes its last load returned
        # launch -> key -> [with a value, same, approximately same]
        self.value_edges = defaultdict(lambda: defaultdict(lambda: [0, 0, 0]))

    def run_launch(self, launch: int, kernel: int, threads: int, recs: np.ndarray, values: dict | None = None) -> None:
        """`values`: per index into `recs` of a memory record, (lanes with a value, silent lanes, 32 values)."""
        self.launch_kernel[launch] = kernel
        warps_per_block = (threads + 31) // 32
        blocks = {}  # block -> {"shared": {}, "local": {}, "warps": {}, "exited": {}, "done": 0}

        def block_state(b):
            return blocks.setdefault(
                b,
                {
                    "shared": {},
                    "local": {},
                    "svals": {},
                    "lvals": {},
                    "warps": defaultdict(lambda: [0, 0, None, None]),
                    "exited": defaultdict(int),
                    "done": 0,
                },
            )

        def want(w):
            tail = threads % 32
            return 0xFFFFFFFF if (w + 1 < warps_per_block or tail == 0) else (1 << tail) - 1

        for i, r in enumerate(recs):
            t, b, w, pc = int(r["type"]), int(r["block"]), int(r["warp"]), (int(r["function_id"]), int(r["pc"]))
            st = block_state(b)
            ws = st["warps"][w]
            if t == BARRIER:
                kind = int(r["space"])
                if kind == 1:
                    ws[0] += 1
                    ws[1] += 1
                    ws[2] = ws[3] = pc
                elif kind == 2:
                    ws[1] += 1
                    ws[3] = pc
                continue
            if t == BLOCK_EXIT:
                mask = int(r["active_mask"]) or want(w)
                before = st["exited"][w]
                st["exited"][w] |= mask & want(w)
                if before != want(w) and st["exited"][w] == want(w):
                    st["done"] += 1
                if st["done"] >= warps_per_block:
                    del blocks[b]
                continue
            self._mem(launch, r, b, w, pc, st, ws, (values or {}).get(i))

    def _mem(self, launch, r, b, w, pc, st, ws, vals=None):
        space, size, access = int(r["space"]), int(r["size"]), int(r["access"])
        write = bool(access & WRITE)
        vmask, _, lane_values = vals if vals is not None and access == READ else (0, 0, None)
        silent = vals[1] & vals[0] & int(r["active_mask"]) if vals is not None and access == WRITE else 0
        seen = set()
        for lane in range(32):
            if not (int(r["active_mask"]) >> lane) & 1:
                continue
            tid = w * 32 + lane
            addr = int(r["addr"][lane])
            for k in range((size + 3) // 4):
                g = (addr >> 2) + k
                nbytes = min(4, size - 4 * k)
                if space == GLOBAL:
                    table, vtable, key = self.glob, self.gvals, g
                elif space == SHARED:
                    table, vtable, key = st["shared"], st["svals"], g
                else:
                    table, vtable, key = st["local"], st["lvals"], (tid, g)
                old = table.get(key)
                table[key] = (launch, pc, b, tid, write, ws[0], ws[1])
                # a shared or local silent store counts against what this block (thread) left there
                if k == 0 and (silent >> lane) & 1 and (space == GLOBAL or old is not None):
                    self.silent[launch][pc] += 1
                same = space != LOCAL and g in seen
                seen.add(g)
                edge = self._edge(launch, pc, old, same, b, w, tid, write, ws, nbytes, space)
                if (vmask >> lane) & 1:
                    now = (lane_values[lane] >> (32 * (k & 1))) & 0xFFFFFFFF
                    counts = self.value_edges[launch][edge]
                    last = vtable.get(key)
                    same = old is not None and last == now
                    counts[0] += 1
                    counts[1] += same
                    if not same and old is not None and last is not None and self.value_approx > 0:
                        high_new = (lane_values[lane] >> 32) & 0xFFFFFFFF
                        if size == 4:
                            counts[2] += approx_float(last, now, self.value_approx)
                        elif size == 8:
                            high_key = key if k == 1 else ((tid, g + 1) if space == LOCAL else g + 1)
                            high_old = vtable.get(high_key)
                            counts[2] += high_old is not None and approx_double_high(
                                high_old, high_new, self.value_approx
                            )
                    if space == GLOBAL and self.allocation and 0 <= (g << 2) - self.allocation[0] < self.allocation[1]:
                        self.object_values[0] += 1
                        self.object_values[1] += same
                    vtable[key] = now

    def _edge(self, launch, pc, old, same, b, w, tid, write, ws, nbytes, space):
        to, label, prior, spanned, barrier = None, "cold", None, False, None
        if old is not None and old[0] != launch and space == GLOBAL:
            prior = (self.launch_kernel[old[0]], old[1])
        elif old is not None and old[0] == launch:
            to = old[1]
            if same:
                label = "warp_same_inst"
            elif old[2] != b:
                label = "grid"
            elif old[3] == tid:
                label = "thread"
            elif old[3] // 32 == w:
                label, spanned, barrier = "warp_diff_inst", ws[1] > old[6], ws[3]
            else:
                label, spanned, barrier = "block", ws[0] > old[5], ws[2]
        edge = (pc, to, label, prior)
        s = self.edges[launch][edge]
        s["bytes"] += nbytes
        s["accesses"] += 1
        if old is not None and (to is not None or prior is not None):
            s[("w" if write else "r") + "a" + ("w" if old[4] else "r")] += 1
        if spanned:
            s["synced"] += 1
            s["synced_bytes"] += nbytes
            self.spans[launch][barrier] += 1
        return edge


def engine_edges(kernel: dict) -> dict:
    """The engine's edges of one kernel entry, keyed like Reference.edges."""
    pcs = {n["id"]: (n["function_id"], n["pc"]) for n in kernel["nodes"] if n["id"]}
    out = {}
    for e in kernel["edges"]:
        p = e["prior_kernel"]
        prior = (p["kernel_function_id"], (p["function_id"], p["pc"])) if p else None
        key = (pcs[e["from"]], pcs.get(e["to"]), e["label"], prior)
        out[key] = {k: e[k] for k in ("bytes", "accesses", "rar", "raw", "war", "waw", "synced", "synced_bytes")}
    return out


def engine_spans(kernel: dict) -> dict:
    return {(b["function_id"], b["pc"]): b["spanned_accesses"] for b in kernel["barriers"] if b["spanned_accesses"]}


def distributions(recs: np.ndarray) -> dict:
    """Node distributions of paper 3.2.2, computed the slow way: {(fid, pc): {name: {value: count}}}."""
    out: dict = defaultdict(lambda: defaultdict(lambda: defaultdict(int)))
    for r in recs:
        if int(r["type"]) != MEM:
            continue
        d = out[(int(r["function_id"]), int(r["pc"]))]
        size, space = int(r["size"]), int(r["space"])
        lanes = [i for i in range(32) if (int(r["active_mask"]) >> i) & 1]
        addrs = [int(r["addr"][i]) for i in lanes]
        d["lanes"][len(lanes)] += 1
        if space == GLOBAL and lanes:  # a lane-less global half (all zero fills) is no request
            d["addresses"][len(set(addrs))] += 1
            d["sectors"][len({s for a in addrs for s in range(a >> 5, ((a + size - 1) >> 5) + 1)})] += 1
            d["sectors_ideal"][-(-len(lanes) * size // 32)] += 1
        elif space == SHARED:
            per_group = 32 if size <= 4 else max(1, 128 // size)
            words, wave, ideal = set(), 0, 0
            for g0 in range(0, 32, per_group):
                group = {
                    wd
                    for i in lanes
                    if g0 <= i < g0 + per_group
                    for wd in range(int(r["addr"][i]) >> 2, ((int(r["addr"][i]) + size - 1) >> 2) + 1)
                }
                if group:
                    banks = defaultdict(int)
                    for wd in group:
                        banks[wd & 31] += 1
                    wave += max(banks.values())
                    ideal += -(-len(group) // 32)
                words |= group
            d["addresses"][len(words)] += 1
            d["wavefronts"][wave] += 1
            d["wavefronts_ideal"][ideal] += 1
    return out


def _on_strides(addr: list[int], lanes: list[int]) -> bool:
    """The slow way (docs/engine.md, "Node distributions"): the k-th active lane at base + stride * k, or each
    address an affine function of the lane index's bits, each bit's coefficient read off the lowest active lane
    with the bit clear whose partner is active, a lane differing from the first in a bit without such a pair not
    judged (all arithmetic modulo 2**64)."""
    wrap = (1 << 64) - 1
    if len(lanes) <= 2:
        return True
    stride = (addr[lanes[1]] - addr[lanes[0]]) & wrap
    if all(addr[lane] == (addr[lanes[0]] + stride * k) & wrap for k, lane in enumerate(lanes)):
        return True
    active = set(lanes)
    coefficient = {}
    for b in range(5):
        pair = next((lane for lane in lanes if not lane >> b & 1 and lane + (1 << b) in active), None)
        if pair is not None:
            coefficient[b] = (addr[pair + (1 << b)] - addr[pair]) & wrap
    first = lanes[0]
    for lane in lanes[1:]:
        differ = lane ^ first
        if any(differ >> b & 1 and b not in coefficient for b in range(5)):
            continue
        at = addr[first]
        for b in range(5):
            if differ >> b & 1:
                at += coefficient[b] if lane >> b & 1 else -coefficient[b]
        if addr[lane] != at & wrap:
            return False
    return True


def irregular_counts(recs: np.ndarray) -> dict:
    """{(fid, pc): global executions whose lanes' addresses follow no stride}, the slow way."""
    out: dict = defaultdict(int)
    for r in recs:
        lanes = [i for i in range(32) if (int(r["active_mask"]) >> i) & 1]
        if int(r["type"]) == MEM and int(r["space"]) == GLOBAL and lanes:
            if not _on_strides([int(a) for a in r["addr"]], lanes):
                out[(int(r["function_id"]), int(r["pc"]))] += 1
    return dict(out)


def engine_distributions(kernel: dict) -> dict:
    names = ("lanes", "addresses", "sectors", "sectors_ideal", "wavefronts", "wavefronts_ideal")
    return {
        (n["function_id"], n["pc"]): {k: dict(map(tuple, n[k])) for k in names if n[k]}
        for n in kernel["nodes"]
        if n["id"]
    }
