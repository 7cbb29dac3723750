"""`reuselens lines`: table and JSON output, filters, and one-line errors with exit code 2."""

from __future__ import annotations

import json

import pytest

from reuselens.cli.main import main
from tests.lineinfo.conftest import CU, FIXTURE_SRC, FIXTURES
from tests.lineinfo.nvdisasm_ref import find_tool

CUBIN = str(FIXTURES / "kernels.sm_90.lineinfo.cubin")


def run(capsys, *argv):
    code = main(["lines", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_lists_every_instruction_of_every_kernel(capsys):
    code, out, _ = run(capsys, CUBIN, "--format", "json", "--prefix-map", f"{FIXTURE_SRC}={CU}")
    assert code == 0
    doc = json.loads(out)
    assert doc["format"] == "reuselens-lines" and doc["version"] == 1
    (module,) = doc["modules"]
    assert module["arch"] == "sm_90" and module["line_info"] is True
    assert len(module["functions"]) == 8
    rows = [r for f in module["functions"] for r in f["instructions"]]
    assert len(rows) == 656 and all(
        r["file"] == str(CU / "kernels.cu") or r["file"] == str(CU / "helpers.cuh") for r in rows
    )
    assert all(r["exists"] for r in rows) and doc["notes"] == []
    assert any(len(r["inline"]) >= 3 for r in rows)


def test_table_with_kernel_filter_and_inline_chain(capsys):
    code, out, _ = run(capsys, CUBIN, "--kernel", "kernB", "--inline", "--prefix-map", f"{FIXTURE_SRC}={CU}")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "kernB(float*, float const*, int)  [sm_90]"
    assert len(lines) == 1 + 176
    assert lines[1].startswith(f"  0x0000  {CU}/kernels.cu:")
    assert any(" <- combine(float, float) kernels.cu:" in line for line in lines)


def test_sources_that_are_not_there_get_one_note_each(capsys, tmp_path):
    """The build tree the fixtures were compiled in is mapped to a folder that cannot exist, so this holds on
    every machine, including one where that build tree is still around."""
    gone = tmp_path / "gone"
    code, out, _ = run(capsys, CUBIN, "--kernel", "kernB", "--prefix-map", f"{FIXTURE_SRC}={gone}")
    assert code == 0
    lines = out.splitlines()
    assert lines[1].startswith(f"  0x0000  {gone}/kernels.cu:")
    notes = [line for line in lines if line.startswith("note: ")]
    assert len(lines) == 1 + 176 + len(notes)
    assert sorted(note.split()[3] for note in notes) == [f"{gone}/helpers.cuh", f"{gone}/kernels.cu"]


def test_demangled_names_match_the_filter_too(capsys):
    code, out, _ = run(capsys, CUBIN, "--kernel", r"tmpl_kernel<float", "--format", "json")
    functions = json.loads(out)["modules"][0]["functions"]
    assert [f["name"] for f in functions] == ["_Z11tmpl_kernelIfLi256EEvPT_PKS0_i"]


def test_executable_picks_the_requested_arch(capsys):
    code, out, _ = run(capsys, str(FIXTURES / "app_zstd.elf"), "--arch", "sm_80", "--format", "json")
    assert code == 0
    assert [m["arch"] for m in json.loads(out)["modules"]] == ["sm_80"]


def test_no_line_info_is_said_once(capsys):
    code, out, _ = run(capsys, str(FIXTURES / "kernels.sm_90.nolineinfo.cubin"), "--kernel", "kernA")
    assert code == 0
    assert "(no line info)" in out
    assert out.count("no line info; rebuild with -lineinfo") == 1


def test_sass_column(capsys):
    if find_tool("nvdisasm") is None:
        pytest.skip("nvdisasm not found (pip install nvidia-cuda-nvdisasm)")
    code, out, _ = run(capsys, CUBIN, "--kernel", "^_Z5kernA", "--sass")
    assert code == 0
    assert out.splitlines()[1].endswith("| LDC R1, c[0x0][0x28] ;")


@pytest.mark.parametrize(
    "argv, message",
    [
        (["/nonexistent/app"], "/nonexistent/app: no such file"),
        ([str(FIXTURES / "app_zstd.elf"), "--arch", "sm_75"], "no CUBIN for sm_75; this binary has sm_80, sm_90"),
        ([str(FIXTURES / "app_zstd.elf"), "--arch", "hopper"], "--arch 'hopper': expected a name like sm_90"),
        ([CUBIN, "--kernel", "("], "--kernel '(' is not a valid regular expression"),
        ([str(FIXTURES / "make_fixtures.sh")], "not an ELF file or fatbinary"),
        ([CUBIN, "--prefix-map", "nothing"], "expected OLD=NEW"),
    ],
)
def test_user_mistakes_are_one_line_and_exit_2(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert err.startswith("reuselens: error: ") and message in err and err.count("\n") == 1


def test_a_kernel_filter_that_matches_nothing_is_an_error(capsys):
    code, out, err = run(capsys, CUBIN, "--kernel", "no_such_kernel")
    assert code == 2 and out == ""
    assert (
        err.startswith("reuselens: error: --kernel 'no_such_kernel' matches no function in ")
        and err.count("\n") == 1
        and "(8 functions" in err
    )


def test_a_run_without_modules_is_an_error(capsys, tmp_path):
    (tmp_path / "run.json").write_text(json.dumps({"format": "reuselens-run", "version": 1, "modules": []}))
    code, out, err = run(capsys, str(tmp_path))
    assert code == 2 and out == ""
    assert "the run lists no modules" in err and err.count("\n") == 1


def test_run_directory_input(capsys, tmp_path):
    import hashlib
    import shutil

    sha = hashlib.sha256(open(CUBIN, "rb").read()).hexdigest()
    (tmp_path / "modules").mkdir()
    shutil.copy(CUBIN, tmp_path / "modules" / f"{sha}.cubin")
    (tmp_path / "run.json").write_text(
        json.dumps(
            {
                "format": "reuselens-run",
                "version": 1,
                "modules": [{"sha256": sha, "path": f"modules/{sha}.cubin", "arch": "sm_90"}],
            }
        )
    )
    code, out, _ = run(capsys, str(tmp_path), "--format", "json", "--kernel", "loop_kernel")
    (module,) = json.loads(out)["modules"]
    assert code == 0 and module["module"] == sha and len(module["functions"][0]["instructions"]) == 32
