"""Reloads and dead stores that possible aliasing forces name the access in between and __restrict__."""

from __future__ import annotations

import pytest
from pattern_kernels import KernelBuilder

from reuselens.analyzer.patterns import find_findings


def reload_kernel(between: str | None) -> tuple[dict, int]:
    """x = a[i] (L10); then `between` (L11); then a[i] again by the same thread (L12)."""
    k = KernelBuilder()
    first = k.node("global", "read", executions=1024, pc=0x100, line=10)
    k.edge(first, 0, "cold")
    if between == "store":
        store = k.node("global", "write", executions=1024, pc=0x180, line=11)
        k.edge(store, 0, "cold")
    elif between == "barrier+store":
        store = k.node("global", "write", executions=1024, pc=0x180, line=11)
        k.edge(store, 0, "cold")
        k.barrier(0x1C0, spanned=0, line=11)
    reload = k.node("global", "read", executions=1024, pc=0x200, line=12)
    k.edge(reload, first, "thread")
    return k.build(), reload


def rar(kernel):
    return next(f for f in find_findings(kernel) if f["pattern"] == "redundant-rar")


def test_a_reload_after_a_store_through_another_pointer_names_the_store_and_restrict():
    kernel, reload = reload_kernel("store")
    finding = rar(kernel)
    assert finding["pcs"] == [reload] and finding["metrics"]["alias_pcs"] == [0x180]
    assert (
        "the store at app.cu:11 in between may alias it for the compiler: mark the pointer parameters "
        "__restrict__ (const __restrict__ for read-only inputs)" in finding["message"]
    )
    assert finding["fix"]["explanation"].startswith("The compiler reloads this value because a store")


@pytest.mark.parametrize("between", [None, "barrier+store"])
def test_without_a_store_or_with_a_barrier_in_between_no_aliasing_is_claimed(between):
    finding = rar(reload_kernel(between)[0])
    assert finding["metrics"]["alias_pcs"] == [] and "__restrict__" not in finding["message"]
    assert "— keep it in a register" in finding["message"]


def test_a_dead_store_kept_by_a_load_in_between_names_the_load():
    k = KernelBuilder()
    zero = k.node("global", "write", executions=1024, pc=0x100, line=20)
    k.edge(zero, 0, "cold")
    load = k.node("global", "read", executions=1024, pc=0x180, line=21)
    k.edge(load, 0, "cold")
    final = k.node("global", "write", executions=1024, pc=0x200, line=22)
    k.edge(final, zero, "thread")
    finding = next(f for f in find_findings(k.build()) if f["pattern"] == "redundant-waw")
    assert finding["pcs"] == [zero] and finding["metrics"]["alias_pcs"] == [0x180]
    assert "the load at app.cu:21 in between may alias it" in finding["message"]
