"""The real-application fixes of `actionability.py --suite realapps` without a GPU: each documented patch and
server edit on the staged sources (when staged), refusals on sources that do not match, and the predicted vs
measured comparison."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks"
SRC = BENCH / "realapps" / "src"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))
realapp_fixes = importlib.import_module("realapp_fixes")
realapp_actionability = importlib.import_module("realapp_actionability")
realapps = importlib.import_module("realapps")

KERNEL = """__global__ void k(float *a, float *b)
{
    __shared__ float tile[4][4];
    tile[threadIdx.y][threadIdx.x] = a[threadIdx.x];
    b[threadIdx.x] = tile[threadIdx.x][threadIdx.y];
}
void host() { k<<<1, 16>>>(0, 0); }
"""
FIX = realapp_fixes.Fix(
    name="t",
    app="a",
    file="k.cu",
    kernel="k",
    patterns=("bank-conflict",),
    lines=(5,),
    why="test",
    function="k",
    patch=(realapp_fixes.Replacement("tile[4][4];", "tile[4][5];"),),
)


def test_patch_edits_only_the_named_function():
    fixed = realapp_fixes.apply_patch(KERNEL + "__global__ void other() { __shared__ float tile[4][4]; }\n", FIX)
    assert "tile[4][5];" in fixed and fixed.count("tile[4][4];") == 1


def test_patch_is_refused_when_the_text_is_not_there():
    with pytest.raises(realapp_fixes.FixRefused, match="occurs 0 times in k, expected 1"):
        realapp_fixes.apply_patch(KERNEL.replace("tile[4][4]", "tile[8][8]"), FIX)
    with pytest.raises(realapp_fixes.FixRefused, match="0 definitions of k found"):
        realapp_fixes.apply_patch("void host() { k<<<1, 1>>>(); }", FIX)


def test_the_server_padding_edit_is_used_when_it_applies():
    fix = realapp_fixes.Fix(**{**FIX.__dict__, "lsp_edit": "padding", "patch": ()})
    fixed, how = realapp_fixes.apply_fix(KERNEL, fix)
    assert how.startswith("server quick fix: Pad tile to [4][5]") and "__shared__ float tile[4][5];" in fixed


def test_comparison_flags_a_drop_outside_5_percent():
    rows = realapp_actionability.compare(
        {
            "smsp__inst_executed_op_shared_ld.sum": 1000,
            "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": 100,
            "smsp__inst_executed_op_local_ld.sum": 5,
        },
        {"smsp__inst_executed_op_shared_ld.sum": 1040, "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": 80},
    )
    by = {row["metric"]: row for row in rows}
    assert by["smsp__inst_executed_op_shared_ld.sum"]["within_5pct"] is True
    assert by["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"]["within_5pct"] is False
    assert by["smsp__inst_executed_op_local_ld.sum"]["note"].startswith("not measured")


@pytest.mark.parametrize("fix", realapp_fixes.FIXES, ids=lambda f: f.name)
def test_every_fix_applies_to_the_staged_sources(fix):
    manifest = realapps.load_manifest(realapps.MANIFEST)
    app = next(a for a in manifest["apps"] if a["name"] == fix.app)
    path = SRC / app["source"] / fix.file
    if not path.is_file():
        pytest.skip(f"real-application sources not staged ({path}); run benchmarks/realapps_stage.py")
    text = path.read_text()
    fixed, how = realapp_fixes.apply_fix(text, fix)
    assert fixed != text and how
    lines = text.splitlines()
    assert all(0 < line <= len(lines) for line in fix.lines)
