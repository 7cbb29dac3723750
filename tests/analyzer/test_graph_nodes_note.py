"""The report's note on CUDA graph kernel nodes that were not instrumented (analyzer.pipeline.graph_nodes_note;
docs/collector.md, "CUDA graphs")."""

from __future__ import annotations

from pathlib import Path

from reuselens.analyzer.pipeline import graph_nodes_note


def launch(instrumented: bool, graph_node: bool | None) -> dict:
    entry = {"kernel": "k", "instrumented": instrumented}
    if graph_node is not None:
        entry["graph_node"] = graph_node
    return entry


def test_no_note_without_graph_nodes_left_out():
    assert graph_nodes_note({}) is None
    assert graph_nodes_note({"launches": [launch(True, None), launch(False, None)]}) is None  # a kernel filter's
    assert graph_nodes_note({"launches": [launch(True, True), launch(True, None)]}) is None


def test_note_counts_the_graph_launches_and_kernels_left_out():
    manifest = {"launches": [launch(True, None), launch(False, True), launch(False, True)]}
    manifest["launches"][2]["kernel"] = "other"
    note = graph_nodes_note(manifest)
    assert note is not None and note.startswith("2 kernel launch(es) of 2 kernel(s) ran inside CUDA graphs")


def test_the_collectors_count_wins_over_a_truncated_launch_list():
    manifest = {"collector": {"graph_kernel_nodes": 250000}, "launches": [launch(False, True)]}
    assert graph_nodes_note(manifest).startswith("250000 kernel launch(es) of 1 kernel(s)")


def test_an_object_level_report_carries_the_note_too(tmp_path):
    import json
    import shutil

    from reuselens.analyzer.pipeline import build_report

    run = tmp_path / "run"
    shutil.copytree(Path(__file__).resolve().parents[1] / "data" / "runs" / "app_abort", run)
    manifest = json.loads((run / "run.json").read_text())
    manifest["collector"]["collection"] = "objects"
    manifest["collector"]["graph_kernel_nodes"] = 3
    (run / "run.json").write_text(json.dumps(manifest))
    notes = build_report(run, write=False)["notes"]
    assert len(notes) == 2 and notes[1].startswith("3 kernel launch(es) ran inside CUDA graphs")
