"""The report's note on CUDA graph kernel nodes that were not instrumented (analyzer.pipeline.graph_nodes_note;
docs/collector.md, "CUDA graphs")."""

from __future__ import annotations

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
