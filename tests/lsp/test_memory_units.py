"""The memory surface's builders without a server: a line that allocates in a loop (one diagnostic per pattern,
a hover within its cap, a one-line lens) and the checks of the reuselens.memory settings."""

from __future__ import annotations

import json

from reuselens.analyzer.memory.analysis import MemoryAnalysis
from reuselens.analyzer.memory.patterns import analyze
from reuselens.analyzer.memory.peak import peak
from reuselens.analyzer.memory.run_timeline import RunMemory
from reuselens.analyzer.memory.timeline import FORMAT, VERSION, parse
from reuselens.lsp_server import memory_hover, memory_model, memory_views, settings


def loop_allocation_surface(count: int) -> memory_model.MemorySurface:
    """`count` buffers allocated on one line in a loop, each used once and never freed, by a kernel whose
    demangled name is long (templates): what a hover must survive without growing to megabytes."""
    kernel = "void detail::reduce_kernel<cub::DeviceReducePolicy<float, int, cub::Sum>::Policy600>(float*)"
    frame = {"function": "allocate_workspace(std::vector<float*>&)", "file": "/ws/train.cu", "line": 40}
    objects = [{"id": i, "address": (i + 1) << 24, "size": (i + 1) << 16, "call_path": [frame]} for i in range(count)]
    operations = []
    for i in range(count):
        operations.append({"kind": "alloc", "stream": 0, "object": i, "name": "cudaMalloc"})
        operations.append(
            {"kind": "kernel", "stream": 0, "name": kernel, "touches": [{"object": i, "read": True, "write": True}]}
        )
        operations.append({"kind": "memset", "stream": 0, "touches": []})
    timeline = parse(json.dumps({"format": FORMAT, "version": VERSION, "objects": objects, "operations": operations}))
    analysis = MemoryAnalysis(RunMemory(None, timeline, 0, 0), peak(timeline), analyze(timeline))
    return memory_model.index(analysis, "0" * 64, lambda f: (f.file, f.line) if f.file and f.line else None)


def test_a_loop_allocation_gets_one_diagnostic_per_pattern_and_a_capped_hover():
    surface = loop_allocation_surface(200)
    found = memory_views.diagnostics(surface, "/ws/train.cu", ["x"] * 50, None, 0.05)
    # one per pattern on the line, the strongest of each, with the count of the others
    assert sorted(d.code for d in found) == ["late_deallocation", "memory_leak"]
    leak = next(d for d in found if d.code == "memory_leak")
    assert leak.message.endswith("(and 199 more objects allocated on this line)")
    # freeing object 198 after its use lowers the peak by its size; object 199, larger, is last used at the peak
    assert leak.data["object"] == 198
    text = memory_hover.markdown(surface, "/ws/train.cu", 40)
    assert len(text) <= memory_hover.MAX_CHARS
    assert text.startswith("**ReuseLens memory** · train.cu:40 · 200 allocations, 1.3 GB in all")
    # the strongest objects in detail while they fit; the rest counted; the peak always said
    assert text.count("**object ") == 2 and "\n\n+198 more objects allocated on this line.\n" in text
    assert text.endswith("\n\nPeak device memory 1.3 GB at op 597 (alloc cudaMalloc, stream 0).")
    title = memory_views.lens_title(surface.at("/ws/train.cu", 40))
    assert len(title) <= memory_views.MAX_LENS_CHARS and "\n" not in title
    assert title.startswith("200 allocations, 1.3 GB · 200 live at peak · idle ")


def test_reuselens_memory_settings_are_checked():
    parsed, problems = settings.parse({"memory": {"enabled": "yes", "warningPeakShare": 5}}, "/ws")
    assert (parsed.memory_enabled, parsed.memory_warning_peak_share) == (True, 0.05)
    assert problems == [
        "Setting reuselens.memory.enabled must be true or false; using the default True.",
        "Setting reuselens.memory.warningPeakShare must be a share of the peak between 0 and 1; using the default 0.05.",
    ]


def test_the_intra_object_findings_read_as_sentences_with_what_the_fix_changes():
    # GIVEN one 4 MiB buffer of which the kernels touched 256 KiB spread over 16 of its 64 slices, mostly the first
    # two (engine profile)
    from reuselens.analyzer.memory.intra import analyze_intra
    from reuselens.analyzer.memory.object_touches import ObjectProfile

    frame = {"function": "main", "file": "/ws/app.cu", "line": 12}
    objects = [{"id": 0, "address": 1 << 24, "size": 4 << 20, "call_path": [frame]}]
    operations = [
        {"kind": "alloc", "stream": 0, "object": 0, "name": "cudaMalloc"},
        {"kind": "kernel", "stream": 0, "name": "k", "touches": [{"object": 0, "read": True, "write": False}]},
        {"kind": "free", "stream": 0, "object": 0},
    ]
    timeline = parse(json.dumps({"format": FORMAT, "version": VERSION, "objects": objects, "operations": operations}))
    profile = ObjectProfile(1 << 24, 4 << 20, 64 << 10, 256 << 10, (1000, 1000) + (10,) * 14 + (0,) * 48)
    memory = RunMemory(None, timeline, 0, 0, {0: profile}, {1: {0: 0xF}})
    analysis = MemoryAnalysis(memory, peak(timeline), analyze(timeline) + analyze_intra(memory))
    surface = memory_model.index(analysis, "0" * 64, lambda f: (f.file, f.line))
    # WHEN the editor shows them
    messages = {d.code: d.message for d in memory_views.diagnostics(surface, "/ws/app.cu", ["x"] * 20, None, 0.05)}
    # THEN each says what the bytes suffer and what its fix changes
    assert messages["overallocation"] == (
        "overallocation: 3.9 MB allocated but never touched by any kernel; peak -3.9 MB if sized to the 262.1 KB "
        "the kernels touch"
    )
    assert messages["non_uniform_access"] == (
        "non-uniform access: 131.1 KB take most of the object's accesses; faster if its hot 131.1 KB are staged in "
        "shared memory or L2"
    )


def test_an_allocation_hover_says_how_the_kernels_used_its_elements():
    # GIVEN the recorded element-map run of the intra-object implants, its allocations placed on their lines
    from pathlib import Path

    from reuselens.analyzer.memory.analysis import analyze_run
    from reuselens.analyzer.memory.intra import element_use

    run = Path(__file__).resolve().parents[1] / "data" / "memory_runs" / "intra_waste_elements"
    analysis = analyze_run(run)
    lines = {oid: ("/ws/intra_waste.cu", 40 + oid) for oid in analysis.timeline.objects}
    by_frame = {id(obj.call_path[0]): lines[oid] for oid, obj in analysis.timeline.objects.items()}
    surface = memory_model.index(analysis, "0" * 64, lambda frame: by_frame.get(id(frame)))
    # WHEN the oversized buffer's line (object 1) and the hot table's (object 3) are hovered
    oversized = memory_hover.markdown(surface, "/ws/intra_waste.cu", 41)
    hot = memory_hover.markdown(surface, "/ws/intra_waste.cu", 43)
    # THEN each says what the kernels touched and where the accesses went, as the element maps counted them
    # (the oversized buffer's four touched slices are read alike: the hottest eighth, one slice, takes a quarter)
    assert (
        "- kernels touched 262.1 KB of it (6.2%); bytes 0-65,536 took 25% of its 1,114,112 word accesses" in oversized
    )
    assert "- kernels touched 4.2 MB of it (100.0%); bytes 0-524,288 took 82% of its 10,485,760 word accesses" in hot
    assert element_use(analysis.memory.profiles[3]) in hot
