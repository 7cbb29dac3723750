"""How reports read for library kernels (names and notes from a profiled PyTorch run on the H200): kernel names
in finding tables and exports lose their parameter list whatever parentheses the name holds before it (PyTorch
and CUB kernels), long names fit the table's columns, and modules without line info share one note."""

from __future__ import annotations

import pytest

from reuselens.analyzer.reportview import short_kernel_name

TORCH_CLAMP = (
    "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_scalar("
    "at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()"
    "() const::{lambda()#7}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul> >(int, at::native::("
    "anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::"
    "detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, "
    "std::array<char*, 2ul>)"
)


@pytest.mark.parametrize(
    "name, short",
    [
        (TORCH_CLAMP, TORCH_CLAMP[5 : TORCH_CLAMP.index(" >(int, ") + 2]),
        (
            "void (anonymous namespace)::softmax_warp_forward<float, float, float, 9, false, false>(float*, float const*, "
            "int, int, int, bool const*, int, bool)",
            "(anonymous namespace)::softmax_warp_forward<float, float, float, 9, false, false>",
        ),
        ("vecadd(float const*, float const*, float*, int)", "vecadd"),
        ("kern()", "kern"),
        (
            "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x64x8_stage3_warpsize1x4x1_ffma_aligna4_alignc4_execute_kernel"
            "__5x_cublas",
            "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x64x8_stage3_warpsize1x4x1_ffma_aligna4_alignc4_"
            "execute_kernel__5x_cublas",
        ),  # extern "C" or no demangled form: the name as it is
        ("_Z6vecaddPKfS0_Pfi", "_Z6vecaddPKfS0_Pfi"),
        ("broken)", "broken)"),  # unbalanced: left alone rather than cut
    ],
)
def test_short_kernel_name_drops_only_the_parameter_list(name, short):
    assert short_kernel_name({"name": name}) == short


def test_short_kernel_name_falls_back_to_mangled_then_id():
    assert short_kernel_name({"mangled": "_Z4kernv"}) == "_Z4kernv"
    assert short_kernel_name({"id": 7}) == "7"


def test_fit_keeps_both_ends():
    from reuselens.analyzer.reportview import fit

    assert fit("short", 10) == "short"
    assert fit("abcdefghijklmnop", 9) == "abcd…mnop"
    assert len(fit(TORCH_CLAMP, 60)) == 60


def test_finding_table_columns_stay_narrow_for_library_kernels():
    from reuselens.analyzer.reporters.findings_table import TABLE_NAME_WIDTH, to_table

    row = {
        "rank": 1,
        "severity": "information",
        "location": f"kernel {TORCH_CLAMP}",
        "file": None,
        "kernel": short_kernel_name({"name": TORCH_CLAMP}),
        "kernel_id": "k3",
        "pattern": "streaming-access",
        "waste_bytes": 1 << 20,
        "waste_basis": "bytes",
        "share": 0.5,
        "message": "streams: reads 1.0 MB once",
    }
    lines = to_table([row]).splitlines()
    assert lines[1].split()[2:4] == ["kernel", "k3"]  # placed by kernel id: the name is in the next column
    assert max(len(line) for line in lines) < 2 * TABLE_NAME_WIDTH + 120


def test_modules_without_line_info_share_one_note():
    """A PyTorch run loads six library modules without line info: one note names them all, in the place of the
    first, and other notes keep their order; a single such module keeps its own note."""
    from reuselens.analyzer.lineinfo.mapper import NO_LINE_INFO
    from reuselens.analyzer.pipeline import _merge_lineless

    single = ["module aaaaaaaaaaaa" + NO_LINE_INFO, "nvdisasm not found"]
    assert _merge_lineless(single) == single
    notes = ["first", "module aaaaaaaaaaaa" + NO_LINE_INFO, "middle", "module bbbbbbbbbbbb" + NO_LINE_INFO]
    merged = _merge_lineless(notes)
    assert merged[0] == "first" and merged[2] == "middle" and len(merged) == 3
    assert merged[1].startswith("2 modules have no line info (aaaaaaaaaaaa, bbbbbbbbbbbb)")


def test_a_recorded_pytorch_run_reads_well(tmp_path, capsys):
    """The PyTorch run recorded on the H200 (tests/data/library_runs/pytorch, modules left out): 7 kernel
    configurations with their launch configurations, every terminal line of bounded width, and the unrolled
    softmax kernel's 32 streaming PCs as one finding per direction."""
    import json
    import shutil
    from pathlib import Path

    from reuselens.cli.main import main

    run = tmp_path / "pytorch"
    shutil.copytree(Path(__file__).resolve().parents[1] / "data/library_runs/pytorch", run)
    assert main(["analyze", str(run), "--top", "30"]) == 0
    out = capsys.readouterr().out
    assert "7 kernel configuration(s) analysed" in out
    assert (
        "  k5 (anonymous namespace)::softmax_warp_forward<float, float, float, 9, false, false> <<<128x1x1, "
        "32x4x1>>>" in out
    )
    assert max(len(line) - len(line.split("  ")[-1]) for line in out.splitlines() if line[:1].isdigit()) < 250
    report = json.loads((run / "report.json").read_text())
    softmax = next(k for k in report["kernels"] if "softmax_warp_forward" in k["name"])
    streaming = [f for f in softmax["findings"] if f["pattern"] == "streaming-access"]
    assert len(streaming) == 2 and sum(len(f["pcs"]) for f in streaming) == 32
