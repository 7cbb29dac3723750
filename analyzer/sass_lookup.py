"""SASS text of a report's memory instructions, disassembled from the run's CUBINs when first asked for.

report.json does not carry SASS: nvdisasm took longer than the rest of the post-run analysis together (0.2 s to
1 s per module, docs/engine.md "Post-run cost"), and only a hover shows it. `RunSass` runs nvdisasm once per
module, on the code of every function of that module that has memory PCs in the report (the same sections the
analysis used to disassemble, so the text is the same), the first time an instruction of the module is asked
for, and keeps the result. Reports of earlier builds carry `sass` in their nodes; that text is used as it is.

Public API: :class:`RunSass`.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from reuselens.analyzer.errors import ReuseLensError


class RunSass:
    """SASS per report node of one run directory (the report's kernels name each node's module and function)."""

    def __init__(self, run_dir: str | os.PathLike[str], kernels: list[dict[str, Any]]):
        self._run_dir = run_dir
        self._functions_of: dict[str, set[str]] = {}  # module -> functions with memory PCs
        for kernel in kernels:
            module = kernel.get("module")
            if isinstance(module, str):
                self._functions_of.setdefault(module, set()).update(
                    node["function"]
                    for node in kernel.get("nodes", []) or []
                    if isinstance(node, dict) and isinstance(node.get("function"), str)
                )
        self._mapper: Any = None
        self._unavailable = False  # no run directory with CUBINs here (e.g. a report copied elsewhere)
        self._prepared: set[str] = set()
        self._missing: list[str] = []  # why SASS could not be had (nvdisasm absent, a CUBIN unreadable)
        self._lock = threading.Lock()  # the server may warm the cache in a thread while a hover asks

    def text(self, kernel: dict[str, Any], node: dict[str, Any], wait: bool = True) -> str | None:
        """The instruction's SASS; None without nvdisasm, without the module's CUBIN, or outside the code. With
        wait=False, also None while another thread disassembles (a hover must not wait for nvdisasm; busy()
        says so)."""
        if "sass" in node:
            return node["sass"]
        module, function, pc = kernel.get("module"), node.get("function"), node.get("pc")
        if not isinstance(module, str) or not isinstance(function, str) or not isinstance(pc, int):
            return None
        if not self._lock.acquire(blocking=wait):
            return None
        try:
            mapper = self._prepare(module)
            if mapper is None:
                return None
            try:
                return mapper.sass(module, function, pc)
            except ReuseLensError:  # the module's CUBIN is missing or unreadable: no SASS, as before
                return None
        finally:
            self._lock.release()

    def busy(self) -> bool:
        """Another thread holds the disassembler (the server's background warm-up)."""
        if self._lock.acquire(blocking=False):
            self._lock.release()
            return False
        return True

    def why_missing(self) -> list[str]:
        """The reasons SASS was not available for the modules asked for so far, one sentence each (the
        analysis no longer puts them in the report, so the hover says them where the SASS would be)."""
        with self._lock:
            return list(self._missing)

    def prepare_all(self) -> None:
        """Disassemble every module now (a background warm-up, so that the first hover does not wait)."""
        for module in list(self._functions_of):
            with self._lock:
                self._prepare(module)

    def _prepare(self, module: str) -> Any:
        if self._unavailable:
            return None
        if self._mapper is None:
            from reuselens.analyzer.lineinfo import SourceMapper

            try:
                self._mapper = SourceMapper.from_run(self._run_dir)
            except ReuseLensError:
                self._unavailable = True
                return None
        if module not in self._prepared:
            self._prepared.add(module)
            known = len(self._mapper.notes)
            self._mapper.prepare_sass({module: sorted(self._functions_of.get(module, ()))})
            new = [n for n in self._mapper.notes[known:] if n not in self._missing]
            self._missing.extend(new)
        return self._mapper
