"""`reuselens memory RUN_DIR`: the table, JSON and SARIF, the HTML timeline, and one-line errors."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree

import pytest
from run_dirs import RunWriter

from reuselens.cli.main import main

HOST = 0x5600_0000_0000
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture
def run_dir(tmp_path):
    """An input buffer used by one kernel, then held across more; a scratch buffer never used and freed before
    an uninstrumented kernel (which would otherwise count as using it); a result buffer never freed."""
    run = RunWriter()
    data = run.alloc(1 << 20)
    scratch = run.alloc(1 << 16)
    out = run.alloc(1 << 10)
    run.memcpy(HOST, run.address(data), 1 << 20, "htod")
    run.kernel("_Z5firstPKfPf", [(data, "r"), (out, "w")])
    run.kernel("_Z6secondPf", [(out, "rw")])
    run.free(scratch)
    run.kernel("_Z5thirdv", None)
    run.memcpy(run.address(out), HOST, 1 << 10, "dtoh")
    run.free(data)
    return run.write(tmp_path / "run"), (data, scratch, out)


def run_cli(capsys, *argv):
    code = main(["memory", *map(str, argv)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_json_document_lists_the_peak_objects_and_findings_largest_saving_first(run_dir, capsys):
    path, (data, scratch, out) = run_dir
    code, out_text, _ = run_cli(capsys, path, "--format", "json")
    document = json.loads(out_text)
    assert code == 0 and (document["format"], document["version"]) == ("reuselens-memory", 1)
    assert document["peak"]["bytes"] == (1 << 20) + (1 << 16) + (1 << 10)
    assert sorted(document["peak"]["live"]) == [data, scratch, out]
    assert document["unknown_touch_kernels"] == 1 and document["kernel_operations"] == 3
    reductions = [f["peak_reduction"] for f in document["findings"]]
    assert reductions == sorted(reductions, reverse=True)
    assert ("unused_allocation", scratch, 1 << 16) in {
        (f["pattern"], f["object"], f["peak_reduction"]) for f in document["findings"]
    }
    assert ("memory_leak", out) in {(f["pattern"], f["object"]) for f in document["findings"]}


def test_the_table_shows_the_peak_the_unknown_kernels_and_a_row_per_finding(run_dir, capsys):
    path, _ = run_dir
    code, text, _ = run_cli(capsys, path, "--top", "2")
    lines = text.splitlines()
    assert code == 0 and lines[0].startswith("peak device memory 1.1 MB at op 2")
    assert "1 of 3 kernel operations have unknown touches" in text
    header = next(i for i, line in enumerate(lines) if line.startswith("#  pattern"))
    assert len(lines) - header - 1 == 2  # --top 2


def test_sarif_places_each_finding_on_the_allocation_line(tmp_path, capsys):
    run = RunWriter()
    frame = {"module": str(tmp_path / "absent-app"), "offset": 0x40}
    unused = run.alloc(512, [frame])
    run.free(unused)
    path = run.write(tmp_path / "run")
    code, text, _ = run_cli(capsys, path, "--format", "sarif")
    sarif = json.loads(text)
    results = sarif["runs"][0]["results"]
    assert code == 0 and sarif["version"] == "2.1.0"
    assert [r["ruleId"] for r in results] == ["unused_allocation"]
    assert "locations" not in results[0]  # no debug info: no line to point at
    assert "absent-app+0x40" in results[0]["message"]["text"]


def test_sarif_locations_are_the_source_lines_of_a_debug_build(tmp_path, capsys):
    from test_symbols import SITE_LINE, build, first_address_of_line

    binary = build(tmp_path, "app", "-g")
    run = RunWriter()
    unused = run.alloc(512, [{"module": str(binary), "offset": first_address_of_line(binary, SITE_LINE) + 1}])
    run.free(unused)
    code, text, _ = run_cli(capsys, run.write(tmp_path / "run"), "--format", "sarif", "--source-root", tmp_path)
    (result,) = json.loads(text)["runs"][0]["results"]
    (location,) = result["locations"]
    assert location["physicalLocation"]["artifactLocation"] == {"uri": "app.c", "uriBaseId": "SRCROOT"}
    assert location["physicalLocation"]["region"]["startLine"] == SITE_LINE
    assert result["properties"]["peakReduction"] == 512


def test_the_html_page_is_well_formed_and_draws_every_object_and_finding(run_dir, tmp_path, capsys):
    path, objects = run_dir
    page = tmp_path / "timeline.html"
    code, _, _ = run_cli(capsys, path, "--html", page)
    text = page.read_text()
    root = ElementTree.fromstring(text.split("\n", 1)[1])  # after <!DOCTYPE html>
    assert code == 0
    assert not [e.tag for e in root.iter() if {"src", "href"} & set(e.attrib)]  # nothing fetched from anywhere
    svg = root.find(f".//{SVG}svg")
    labels = [t.text for t in svg.iter(f"{SVG}text")]
    for oid in objects:
        assert any(label and label.startswith(f"object {oid} at ") for label in labels)
    findings = [r for r in svg.iter(f"{SVG}rect") if r.get("class") == "finding"]
    document = json.loads(run_cli(capsys, path, "--format", "json")[1])
    assert len(findings) == len(document["findings"]) > 0
    tips = [r.find(f"{SVG}title").text for r in findings]
    assert all(f["fix"] in tip for f, tip in zip(document["findings"], tips))
    assert [r.get("class") for r in svg.iter(f"{SVG}rect")].count("unknown") == 1
    assert run_cli(capsys, path, "--html", tmp_path / "again.html")[0] == 0
    assert (tmp_path / "again.html").read_text() == text  # deterministic


def test_a_run_without_memory_operations_is_one_line_on_stderr_and_exit_2(tmp_path, capsys):
    run = RunWriter()
    run.alloc(64)
    manifest = run.manifest()
    del manifest["memory_operations"]
    manifest["collector"] = {"finished": True}  # an older collector wrote the run, without memory operations
    code, out, err = run_cli(capsys, run.write(tmp_path / "old", manifest))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "no memory operations" in err and "re-profile" in err


def test_a_path_that_is_not_a_run_is_one_line(tmp_path, capsys):
    code, _, err = run_cli(capsys, tmp_path / "nowhere")
    assert code == 2 and err.count("\n") == 1 and "no such directory" in err


def test_the_cli_default_gap_is_the_analysis_default():
    # the CLI names the default without importing the analysis (start-up cost); both must stay one number
    from reuselens.analyzer.memory.patterns import SETTINGS
    from reuselens.cli.memory import DEFAULT_MIN_IDLE_OPERATIONS

    assert DEFAULT_MIN_IDLE_OPERATIONS == SETTINGS["min_idle_operations"]


def _object_level(run: RunWriter) -> dict:
    manifest = run.manifest()
    manifest.setdefault("collector", {})["collection"] = "objects"
    return manifest


def test_an_object_level_run_says_the_intra_object_patterns_need_a_traced_one(tmp_path, capsys):
    run = RunWriter()
    data = run.alloc(1 << 20)
    run.kernel("_Z5firstPf", [(data, "w")])
    path = run.write(tmp_path / "objects", _object_level(run))
    code, out, _ = run_cli(capsys, path)
    assert code == 0 and "object-level profile" in out and "without --object-level" in out
    assert "with --intra-object" in out
    code, out, _ = run_cli(capsys, path, "--format", "json")
    assert (json.loads(out)["collection"], json.loads(out)["element_maps"]) == ("objects", False)
    code, out, _ = run_cli(capsys, run.write(tmp_path / "traced"), "--format", "json")
    assert json.loads(out)["collection"] == "trace"


def test_an_element_map_run_says_its_objects_were_counted_on_the_gpu(tmp_path, capsys):
    run = RunWriter()
    data = run.alloc(1 << 20)
    run.kernel("_Z5firstPf", [(data, "w")])
    manifest = _object_level(run)
    manifest["collector"]["element_maps"] = True
    path = run.write(tmp_path / "elements", manifest)
    code, out, _ = run_cli(capsys, path)
    assert code == 0 and "with element maps" in out and "without --object-level" not in out
    code, out, _ = run_cli(capsys, path, "--format", "json")
    assert json.loads(out)["element_maps"] is True


def test_the_reuse_report_of_an_object_level_run_is_empty_and_says_why(tmp_path, capsys):
    # an editor loads a run through its report.json: an object-level run gets one with no kernel and a note
    run = RunWriter()
    run.kernel("_Z5firstPf", None)
    path = run.write(tmp_path / "objects", _object_level(run))
    code = main(["analyze", str(path)])
    out, err = capsys.readouterr()
    assert code == 0 and err == ""
    report = json.loads((path / "report.json").read_text())
    assert report["kernels"] == [] and report["format"] == "reuselens-report"
    (note,) = report["notes"]
    assert note.startswith("object-level profile") and f"reuselens memory {path}" in note
    assert "object-level profile" in out


def test_a_run_the_collector_never_wrote_says_so_rather_than_blame_an_old_collector(tmp_path, capsys):
    # the launcher's run.json of an app the collector never started in (it used no CUDA, or the library did not load)
    run = tmp_path / "run"
    run.mkdir()
    manifest = {k: v for k, v in RunWriter().manifest().items() if k not in ("collector", "memory_operations")}
    manifest.update(status="partial", partial_reason="the collector did not start in the application")
    (run / "run.json").write_text(json.dumps(manifest))
    code, _, err = run_cli(capsys, run)
    assert code != 0 and err.count("\n") == 1
    assert "the collector recorded nothing in this run (the collector did not start in the application)" in err
    assert "newer ReuseLens collector" not in err
