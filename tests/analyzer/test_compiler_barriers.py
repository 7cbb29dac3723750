"""A warp barrier whose source line, and every line of its inline chain, can be read and names no barrier is one
ptxas placed (WARPSYNC.ALL where a warp reconverges after a divergent loop: Tango AlexNet's convolution loops,
session 56): analyzer/pipeline.py marks it `compiler_inserted`, which removable-barrier leaves alone."""

from __future__ import annotations

from reuselens.analyzer.lineinfo.mapper import InlineFrame, SourceLocation
from reuselens.analyzer.pipeline import _SourceLines, _written_nowhere


def _at(path, line, inline=()):
    return SourceLocation(str(path), line, 0, True, "kernel", tuple(inline), str(path))


def test_only_a_line_that_names_no_barrier_is_the_compilers(tmp_path):
    source = tmp_path / "conv.cu"
    source.write_text("for (int i = 0; i < n; i++)\n  __syncwarp();\n  tile.sync();\n  helper(x);\n")
    header = tmp_path / "helpers.cuh"
    header.write_text("__device__ void helper(int x) { __syncwarp(); }\n")
    lines = _SourceLines()
    assert _written_nowhere(_at(source, 1), lines)  # the loop's own line
    assert not _written_nowhere(_at(source, 2), lines)  # __syncwarp()
    assert not _written_nowhere(_at(source, 3), lines)  # a cooperative group's sync
    # the barrier in an inlined helper: its innermost line names it, the call site does not
    inlined = [InlineFrame("helper(int)", str(header), 1), InlineFrame("kernel", str(source), 4)]
    assert not _written_nowhere(_at(header, 1, inlined), lines)
    # a file or line that cannot be read: the barrier stays the developer's
    assert not _written_nowhere(_at(tmp_path / "missing.cu", 1), lines)
    assert not _written_nowhere(_at(source, 99), lines)
