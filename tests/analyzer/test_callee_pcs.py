"""Node PCs are offsets in the function's code section (docs/report-format.md), also for a non-inlined callee that
ptxas places after its kernel in the kernel's section (`$kernel$callee`, symbol value > 0). cuda-samples' interval
(recursive newton_interval_rec) had all 36 findings on no source line, since the source lookup and the SASS decoders
read such PCs from the callee's start (session 56). tests/data/runs/microbench's noinline_caller: the callee
starts at 0x100, its two LDGs are at 0x130 and 0x140 of the section (nvdisasm)."""

from __future__ import annotations

import struct
from pathlib import Path

from reuselens.analyzer.lineinfo import SourceMapper
from reuselens.analyzer.loops import function_code, node_instructions
from reuselens.analyzer.pipeline import build_report

RUN = Path(__file__).resolve().parents[1] / "data" / "runs" / "microbench"
CALLEE = "$_Z15noinline_callerPKfPf$_Z10callee_sumPKfi"
LDG = 0x981


def _caller(report: dict) -> dict:
    return next(k for k in report["kernels"] if k["mangled"] == "_Z15noinline_callerPKfPf")


def test_the_callees_accesses_are_read_at_their_section_offsets():
    report = build_report(RUN, write=False)  # the fixture stays as committed: other tests copy it
    kernel = _caller(report)
    callee_nodes = [n for n in kernel["nodes"] if n.get("function") == CALLEE]
    assert sorted(n["pc"] for n in callee_nodes) == [0x130, 0x140]
    mapper = SourceMapper.from_run(RUN)
    code, _arch, start = function_code(mapper, kernel["module"], CALLEE)
    assert start == 0x100
    for node in callee_nodes:
        assert struct.unpack_from("<Q", code, node["pc"] - start)[0] & 0xFFF == LDG
        assert node["source"]["line"] == 158  # callee_sum's one line (tests/gpu/microbench.cu)
        assert node["source"]["function"].endswith("$callee_sum(float const*, int)")
    decoded = {node["pc"]: lo & 0xFFF for node, lo, _hi in node_instructions(mapper, kernel, lambda n: True)}
    assert decoded[0x130] == decoded[0x140] == LDG
