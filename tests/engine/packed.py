"""A model of the device patch's packing (collector/native/src/patch.cu, docs/trace-format.md "Packed records"):
full records (RECORD_DTYPE) in, the packed stream of 32-byte slots out, each record in the cheapest form that
reproduces it exactly, as the patch chooses it. Padding can be put in anywhere, as the patch does at a buffer's
end."""

from __future__ import annotations

import random
import struct

import numpy as np

FULL, NO_ADDRESSES, STRIDED, PADDING = 0, 1, 2, 3
FORM_SHIFT = 5
SLOT = 32
M64 = (1 << 64) - 1


def strided_form(mask: int, addr: list[int]) -> tuple[int, int, int, int] | None:
    """(base, stride, group_stride, group) that give every lane of `mask` its address, or None: one stride over
    the lanes of any mask, or, for a full warp, a stride within groups of 2..16 lanes and another between groups."""
    lanes = [i for i in range(32) if mask >> i & 1]
    if not lanes:
        return (0, 0, 0, 32)
    first = lanes[0]
    stride = 0
    if len(lanes) > 1:
        second = lanes[1]
        diff = (addr[second] - addr[first]) & M64
        step = second - first
        # an exact division in 64-bit modular arithmetic only when it divides as integers; otherwise no form
        stride = diff // step if diff % step == 0 else None
    if stride is not None:
        base = (addr[first] - stride * first) & M64
        if all(addr[i] == (base + stride * i) & M64 for i in lanes):
            return (base, stride, 0, 32)
    if mask != 0xFFFFFFFF:
        return None
    inner = (addr[1] - addr[0]) & M64
    breaks = [i for i in range(1, 32) if (addr[i] - addr[i - 1]) & M64 != inner]
    group = breaks[0]
    if group not in (2, 4, 8, 16):
        return None
    outer = (addr[group] - addr[0]) & M64
    if all(addr[i] == (addr[0] + inner * (i % group) + outer * (i // group)) & M64 for i in range(32)):
        return (addr[0], inner, outer, group)
    return None


def header_slot(rec: np.void, form: int) -> bytes:
    raw = bytearray(rec.tobytes()[:SLOT])
    raw[0] = raw[0] | (form << FORM_SHIFT)
    return bytes(raw)


def pack(records: np.ndarray, *, padding: float = 0.0, seed: int = 0) -> bytes:
    """The packed stream of `records`; with `padding` > 0, that share of records is preceded by 1-8 padding
    slots."""
    rng = random.Random(seed)
    out = bytearray()
    pad = bytes([PADDING << FORM_SHIFT]) + bytes(SLOT - 1)
    for rec in records:
        if padding and rng.random() < padding:
            out += pad * rng.randint(1, 8)
        addr = [int(a) for a in rec["addr"]]
        mask = int(rec["active_mask"])
        if not any(addr):
            out += header_slot(rec, NO_ADDRESSES)
            continue
        form = strided_form(mask, addr)
        if form is None:
            out += rec.tobytes()
            continue
        base, stride, group_stride, group = form
        out += header_slot(rec, STRIDED) + struct.pack("<QQQII", base, stride, group_stride, group, 0)
    return bytes(out)


def forms(stream: bytes) -> list[int]:
    """The form of each record and padding slot of a packed stream, in order."""
    out, at = [], 0
    while at < len(stream):
        form = stream[at] >> FORM_SHIFT
        out.append(form)
        at += SLOT * {FULL: 9, NO_ADDRESSES: 1, STRIDED: 2, PADDING: 1}[form]
    return out
