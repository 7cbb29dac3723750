"""The memory-timeline reader (docs/memory.md): a good document becomes a Timeline; a bad one is one line naming
the field, never a traceback from a later stage."""

from __future__ import annotations

import copy
import json

import pytest
from memory_programs import Program

from reuselens.analyzer.memory.timeline import Frame, TimelineError, load, parse


def good():
    return Program().alloc(1, 64).memcpy((1, "w", 64)).kernel((1, "r")).free(1).document()


def test_a_good_document_is_read_with_lifetimes_and_touches():
    timeline = parse(json.dumps(good()))
    assert (timeline.allocated_at, timeline.freed_at, timeline.end_of(1)) == ({1: 0}, {1: 3}, 3)
    assert [index for index, _ in timeline.touched_at[1]] == [1, 2]
    assert timeline.objects[1].call_path == (Frame("main", "app.cu", 10),)
    assert timeline.operations[2].label() == "op 2 (kernel step, stream 0)"


def test_a_frame_without_debug_info_says_so():
    assert Frame("_Z4initPf", None, None).where() == "_Z4initPf (no debug info; build with -g)"


def broken(change):
    document = good()
    change(document)
    return document


def drop(mapping, key):
    del mapping[key]


CASES = {
    "format": (
        lambda d: d.update(format="reuselens-engine"),
        "format: expected one of 'reuselens-memory-timeline', found str 'reuselens-engine'",
    ),
    "version": (lambda d: d.update(version=2), "memory timeline version int 2, this build reads 1"),
    "operations missing": (lambda d: drop(d, "operations"), "operations is missing"),
    "size zero": (
        lambda d: d["objects"][0].update(size=0),
        "objects[0].size: expected an integer 1 to 2^64-1, found int 0",
    ),
    "frame function": (
        lambda d: d["objects"][0]["call_path"][0].update(function=""),
        "objects[0].call_path[0].function: expected a non-empty string of at most 1048576 characters, found str ''",
    ),
    "kind": (
        lambda d: d["operations"][1].update(kind="launch"),
        "operations[1].kind: expected one of 'alloc', 'free', 'memcpy', 'memset', 'kernel', found str 'launch'",
    ),
    "touch flags": (
        lambda d: d["operations"][2]["touches"][0].update(read=False),
        "operations[2].touches[0]: a touch must read, write or both",
    ),
    "touches missing": (
        lambda d: drop(d["operations"][2], "touches"),
        "operations[2].touches: missing: a kernel lists the objects it touched (may be empty)",
    ),
    "alloc object missing": (
        lambda d: drop(d["operations"][0], "object"),
        "operations[0].object: missing: an alloc names the object it creates or releases",
    ),
    "unknown object": (
        lambda d: d["operations"][3].update(object=7),
        "operations[3].object: 7 is not the id of an object",
    ),
    "double free": (
        lambda d: d["operations"].append({"kind": "free", "stream": 0, "object": 1}),
        "operations[4].object: free of object 1, which is already freed",
    ),
    "double alloc": (
        lambda d: d["operations"].insert(1, {"kind": "alloc", "stream": 0, "object": 1}),
        "operations[1].object: alloc of object 1, which is already allocated",
    ),
    "free first": (
        lambda d: d["operations"].insert(0, {"kind": "free", "stream": 0, "object": 1}),
        "operations[0].object: free of object 1, which is never allocated",
    ),
    "touch after free": (
        lambda d: d["operations"].append(copy.deepcopy(d["operations"][2])),
        "operations[4].touches[0].object: object 1 is not allocated here",
    ),
    "duplicate id": (
        lambda d: d["objects"].append(copy.deepcopy(d["objects"][0])),
        "objects[1].id: 1 is the id of an earlier object too",
    ),
    "never allocated": (
        lambda d: d["objects"].append({"id": 2, "address": 0, "size": 8}),
        "objects[1]: no operation allocates this object",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_documents_are_one_line_errors_naming_the_field(name):
    change, message = CASES[name]
    with pytest.raises(TimelineError) as caught:
        parse(json.dumps(broken(change)), "t.json")
    assert str(caught.value) == f"t.json: {message}"


def test_text_that_is_not_json(tmp_path):
    path = tmp_path / "timeline.json"
    path.write_text('{"format": ')
    with pytest.raises(TimelineError) as caught:
        load(path)
    assert str(caught.value).startswith(f"{path}: not readable as JSON (Expecting value")
    assert "\n" not in str(caught.value)


def test_a_missing_file(tmp_path):
    with pytest.raises(TimelineError) as caught:
        load(tmp_path / "absent.json")
    assert str(caught.value) == f"{tmp_path / 'absent.json'}: unreadable memory timeline (No such file or directory)"


def test_load_reads_a_file(tmp_path):
    path = tmp_path / "timeline.json"
    path.write_text(json.dumps(good()))
    assert len(load(path).operations) == 4
