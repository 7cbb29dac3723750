"""run.json as the launcher rewrites it (collector/manifest.py): members it did not change keep the text the tool
library wrote, decoded and written back without being encoded again, and the result reads back equal."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from reuselens.collector.manifest import (
    collector_finished,
    decode_members,
    finalize_manifest,
    json_lines,
    read_back,
    read_back_members,
    write_json_atomic,
)
from tests.collector.tool_library_layout import tool_library_text

RECORDED = Path(__file__).resolve().parents[1] / "data" / "memory_runs" / "pytorch_async"


@pytest.mark.parametrize(
    "text",
    [
        "{}",
        ' \n{ "a" : 1 ,"b":[1, 2,\n {"c": null}], "s": "x}\\"y", "f": -1.5e-05, "t": true }\n',
        '{"nested": {"deep": [[[]]]}, "empty": [], "u": "\\u00e9"}',
    ],
)
def test_members_decode_as_json_does_and_keep_their_own_text(text):
    data, texts = decode_members(text)
    assert data == json.loads(text)
    for key, (value, source) in texts.items():
        assert value is data[key] and json.loads(source) == value


@pytest.mark.parametrize("text", ["", "[1]", '{"a" 1}', '{"a": 1,}', '{"a": 1} x', "{1: 2}", '{"a": }'])
def test_anything_but_one_json_object_is_refused(text):
    with pytest.raises(ValueError):
        decode_members(text)


def test_the_launchers_rewrite_keeps_unchanged_members_verbatim_and_reads_back_equal(tmp_path):
    # GIVEN a run.json as the tool library wrote it, a member spelled unlike json's encoder would spell it
    run = tmp_path / "run"
    shutil.copytree(RECORDED, run)
    text = (run / "run.json").read_text()
    odd = text.replace('"memory_operations_truncated": false', '"memory_operations_truncated": [ false ,  0 ]', 1)
    assert odd != text
    (run / "run.json").write_text(odd)
    written = read_back_members(run)
    assert written is not None and written[0] == json.loads(odd)
    # WHEN the launcher finishes it (new status, exit code, end time, its own member)
    data = finalize_manifest(written[0], written[0], 3, None, 1.25)
    write_json_atomic(run / "run.json", data, verbatim=written[1])
    # THEN it reads back as what the launcher decided, the members it left alone with their text as written, and
    # the same as encoding everything afresh would give
    final = (run / "run.json").read_text()
    assert json.loads(final) == data == json.loads(json_lines(data))
    assert '"memory_operations_truncated": [ false ,  0 ]' in final
    assert written[1]["allocations"][1] in final
    assert read_back(run)["exit_code"] == 3 and read_back(run)["launcher"]["wall_seconds"] == 1.25


def test_a_member_replaced_by_an_equal_value_is_encoded_again():
    data, texts = decode_members('{"a": [1,  2]}')
    assert json_lines({"a": data["a"]}, texts) == '{\n "a": [1,  2]\n}\n'
    assert json_lines({"a": [1, 2]}, texts) == '{\n "a": [\n  1,\n  2\n ]\n}\n'


def test_the_tool_librarys_finish_is_recognised_in_its_own_layout_and_in_the_launchers():
    # GIVEN a recorded run.json, laid out as the tool library writes it and as the launcher rewrites it
    manifest = json.loads((RECORDED / "run.json").read_text())
    manifest["command"] = ['an argument holding "collector": {"finished": true}']  # a key only as a line's first
    for finished in (True, False):
        manifest["collector"] = dict(manifest["collector"], finished=finished)
        # WHEN the launcher asks whether the tool library has finished
        # THEN both layouts answer what the collector member says, whatever a string elsewhere holds
        assert collector_finished(tool_library_text(manifest)) is finished
        assert collector_finished(json_lines(manifest)) is finished
    del manifest["collector"]
    assert collector_finished(tool_library_text(manifest)) is False
    assert collector_finished('{\n  "collector": {"finished": tr') is False  # a file cut short
