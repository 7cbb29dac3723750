"""Removable barriers (paper section 6.3) are decided together and placed on their source line."""

from __future__ import annotations

from pattern_kernels import KernelBuilder

from reuselens.analyzer.patterns import find_findings
from reuselens.analyzer.reporters.findings_rows import finding_rows
from reuselens.analyzer.reporters.findings_sarif import to_sarif


def removable(kernel):
    """The removable-barrier findings in barrier order (equal ranks are ordered by id, a hash)."""
    return sorted(
        (f for f in find_findings(kernel) if f["pattern"] == "removable-barrier"), key=lambda f: f["barrier"]["pc"]
    )


def backprop_like(second_barrier_runs: int = 512) -> dict:
    """rodinia backprop's layer-forward prologue:

        if (tx == 0) s[ty] = in[...];          // L33, lanes 0 and 16 of each warp
        __syncthreads();                       // L35
        w[ty][tx] = in2[...];                  // L37, each thread its own element
        __syncthreads();                       // L39
        w[ty][tx] = w[ty][tx] * s[ty];         // L41, every thread reads s[ty]

    The writer of s[ty] is in the reader's warp and the reader's lane 0 is the writer itself, so the shadow
    records the read of s[ty] as the writer's own read-after-write and the other lanes' as a read after that
    read in the same instruction: no edge spans either barrier. One of the two must stay."""
    k = KernelBuilder(block=(16, 16, 1))
    s_store = k.node("shared", "write", executions=512, lanes=2, pc=0x100, line=33)
    k.edge(s_store, 0, "cold")
    k.barrier(0x180, spanned=0, line=35)
    w_store = k.node("shared", "write", executions=512, pc=0x200, line=37)
    k.edge(w_store, 0, "cold")
    k.barrier(0x280, spanned=0, line=39, executions=second_barrier_runs)
    w_load = k.node("shared", "read", executions=512, pc=0x300, line=41)
    k.edge(w_load, w_store, "thread")
    s_load = k.node("shared", "read", executions=512, addresses=2, pc=0x310, line=41)
    k.edge(s_load, s_store, "thread", 2 / 32)
    k.edge(s_load, s_load, "warp_same_inst", 30 / 32)
    return k.build()


def test_two_barriers_that_each_hand_over_the_same_write_are_not_both_removable():
    findings = removable(backprop_like())
    assert [f["barrier"]["pc"] for f in findings] == [0x180]
    assert findings[0]["metrics"]["relies_on_pcs"] == [0x280]
    assert "also ordered by __syncthreads() at app.cu:39, which stays — it can be removed" in findings[0]["message"]


def test_a_barrier_that_a_uniform_branch_may_skip_does_not_stand_in_for_one_that_always_runs():
    # GIVEN the second barrier ran in fewer passes than the first: only the first surely lies between
    findings = removable(backprop_like(second_barrier_runs=256))
    assert [f["barrier"]["pc"] for f in findings] == [0x280]


def test_removable_barriers_are_one_set_and_each_finding_names_the_others():
    kernel = backprop_like()
    kernel["barriers"].append(
        {**kernel["barriers"][0], "pc": 0x80, "source": {**kernel["barriers"][0]["source"], "line": 30}}
    )
    findings = removable(kernel)
    assert [f["barrier"]["pc"] for f in findings] == [0x80, 0x180]
    assert all(f["metrics"]["removable_together_pcs"] == [0x80, 0x180] for f in findings)
    assert findings[0]["message"].endswith("together with __syncthreads() at app.cu:35 (all 2 can go at once)")
    assert "orders nothing" in findings[0]["message"]


def spanned_twice() -> tuple[dict, int, int]:
    """Two hand-overs from one write: the first reader after barrier A, the second after A and B. The engine
    credits the second reader's edge to B (the last barrier before it) although A orders it too."""
    k = KernelBuilder()
    store = k.node("shared", "write", executions=512, pc=0x100, line=10)
    k.edge(store, 0, "cold")
    near = k.node("shared", "read", executions=512, pc=0x200, line=12)
    k.edge(near, store, "block")
    far = k.node("shared", "read", executions=512, pc=0x300, line=14)
    k.edge(far, store, "block")
    k.barrier(0x180, line=11, spans=[(near, store)])
    k.barrier(0x280, line=13, spans=[(far, store)])
    return k.build(), near, far


def test_a_spanned_barrier_is_removable_when_a_kept_barrier_orders_the_same_pair():
    kernel, _near, _far = spanned_twice()
    findings = removable(kernel)
    assert [f["barrier"]["pc"] for f in findings] == [0x280]
    assert findings[0]["metrics"]["relies_on_pcs"] == [0x180]


def test_a_barrier_inside_a_loop_does_not_stand_in_for_the_one_after_it():
    # GIVEN Parboil tpacf's merge: the store and barrier A run in a loop (4 passes a warp), barrier B after the loop
    # once a warp; the last pass leaves the loop before A, so only B orders the store's last value for the reader
    # after the loop (session 55's review: B was called removable, "also ordered by" A)
    kernel, _near, _far = spanned_twice()
    kernel["nodes"][1]["executions"] = 2048
    kernel["barriers"][0]["executions"] = 2048
    findings = removable(kernel)
    assert 0x280 not in [f["barrier"]["pc"] for f in findings]
    # THEN the same hand-over that no edge spans (the reader's edge points at another reader) keeps both barriers
    kernel, near, far = spanned_twice()
    kernel["barriers"][0]["executions"] = 2048
    for barrier in kernel["barriers"]:
        barrier.pop("spans")
        barrier["spanned_cross_thread_edges"] = 0
    edge = next(e for e in kernel["edges"] if e["from"] == far)
    edge.update(to=near, raw=0, rar=edge["accesses"], synced=0, synced_bytes=0)
    assert removable(kernel) == []


def test_a_pair_carried_around_a_loop_keeps_the_barrier_it_was_credited_to():
    kernel, _near, far = spanned_twice()
    kernel["nodes"][far]["pc"] = 0x50  # the reader comes first in the code: the data crossed a back edge
    assert removable(kernel) == []


def test_a_removable_barrier_is_placed_on_its_line_in_rows_and_sarif():
    report = {"kernels": [{**backprop_like(), "findings": None}]}
    report["kernels"][0]["findings"] = removable(report["kernels"][0])
    rows = [r for r in finding_rows(report) if r["pattern"] == "removable-barrier"]
    assert [(r["file"], r["line"], r["location"]) for r in rows] == [("/src/app.cu", 35, "/src/app.cu:35")]
    sarif = to_sarif(report)
    assert '"startLine": 35' in sarif


def last_block_reduction() -> dict:
    """PyTorch's reduce_kernel across blocks: every block stores its partial (L10), __threadfence,
    __syncthreads twice (L11, L12: two helpers' back-to-back barriers), thread 0 bumps a semaphore (L13),
    __syncthreads (L15) so all threads see whether this block came last (L14 store, L16 load), and the
    last block reads every partial (L17). The partials cross blocks, so no barrier is credited with them; the
    barrier before the semaphore is what publishes them."""
    k = KernelBuilder(grid=(32, 1, 1), block=(512, 1, 1))
    partial = k.node("global", "write", executions=32, lanes=1, pc=0x100, line=10)
    k.edge(partial, 0, "cold")
    k.barrier(0x180, spanned=0, line=11)
    k.barrier(0x190, spanned=0, line=12)
    semaphore = k.node("global", "atomic", executions=32, lanes=1, pc=0x200, line=13)
    k.edge(semaphore, 0, "cold", 1 / 32)
    k.edge(semaphore, semaphore, "grid", 31 / 32)
    last_flag = k.node("shared", "write", executions=32, lanes=1, pc=0x240, line=14)
    k.edge(last_flag, 0, "cold")
    flag_read = k.node("shared", "read", executions=512, pc=0x2A0, line=16)
    k.edge(flag_read, last_flag, "block", 1 / (512 * 32))
    k.edge(flag_read, flag_read, "warp_same_inst", 1 - 1 / (512 * 32))
    k.barrier(0x280, line=15, spans=[(flag_read, last_flag)])
    gather = k.node("global", "read", executions=1, pc=0x300, line=17)
    k.edge(gather, 0, "cold", 1 / 32)
    k.edge(gather, partial, "grid", 31 / 32)
    return k.build()


def test_the_barrier_that_publishes_a_blocks_writes_before_its_signal_stays():
    findings = removable(last_block_reduction())
    # one of the two back-to-back barriers can go, not both: the later one stays before the semaphore
    assert [f["barrier"]["pc"] for f in findings] == [0x180]
    assert findings[0]["metrics"]["relies_on_pcs"] == [0x190]


def test_a_copy_of_an_unrolled_barrier_is_not_removable_while_another_copy_of_its_line_stays():
    """An unrolled loop's __syncthreads is several barrier PCs on one line: the last copy may order nothing
    while the others hand the buffer over. The developer can only delete the line, so none is reported
    (the GPU safety test found such findings on the pattern suite's reductions: the line's kept copy stayed)."""
    k = KernelBuilder()
    store = k.node("shared", "write", executions=512, pc=0x100, line=10)
    k.edge(store, 0, "cold")
    load = k.node("shared", "read", executions=512, pc=0x200, line=12)
    k.edge(load, store, "block")
    k.barrier(0x180, line=11, spans=[(load, store)])  # the copy that hands the buffer over
    k.barrier(0x280, spanned=0, line=11)  # the unrolled loop's last copy: nothing crosses it
    kernel = k.build()
    assert removable(kernel) == []
    # the same two barriers on two lines: the second is removable
    kernel["barriers"][1]["source"] = {**kernel["barriers"][1]["source"], "line": 13}
    assert [f["barrier"]["pc"] for f in removable(kernel)] == [0x280]


def test_a_line_another_instantiation_keeps_is_not_removable():
    """cuda-samples reduce7<int, 32> (one warp per block) needs no __syncthreads at reduction_kernel.cu:496,
    reduce7<int, 256> does; deleting the line for the first broke the second (racecheck: 100 hazards, on the
    GPU). The report's kernels are judged together."""
    from reuselens.analyzer.patterns import find_report_findings

    k = KernelBuilder(mangled="_Z7reduce7ILj256EEvPi")
    store = k.node("shared", "write", executions=512, pc=0x100, line=493)
    k.edge(store, 0, "cold")
    load = k.node("shared", "read", executions=512, pc=0x200, line=501)
    k.edge(load, store, "block")
    k.barrier(0x180, line=496, spans=[(load, store)])
    wide = k.build()
    k = KernelBuilder(mangled="_Z7reduce7ILj32EEvPi", block=(32, 1, 1))
    store = k.node("shared", "write", executions=100, lanes=1, pc=0x100, line=493)
    k.edge(store, 0, "cold")
    load = k.node("shared", "read", executions=100, lanes=1, pc=0x200, line=501)
    k.edge(load, store, "thread")
    k.barrier(0x180, spanned=0, line=496)
    narrow = k.build()
    assert [f["pattern"] for f in find_findings(narrow) if f["pattern"] == "removable-barrier"]  # alone: removable
    wide_findings, narrow_findings = find_report_findings([wide, narrow])
    assert "removable-barrier" not in [f["pattern"] for f in wide_findings + narrow_findings]


def test_a_helpers_barrier_inlined_twice_is_one_line():
    """tests/gpu/patterns/reduction_reread.cu: block_sum() holds __syncthreads() at line 16 and is inlined for
    the mean (call at line 28) and the variance (line 30). The second copy orders the reuse of the shared buffer,
    the first orders nothing; both are line 16, so neither is removable (the GPU safety test refused the first)."""
    k = KernelBuilder()
    store = k.node("shared", "write", executions=512, pc=0x100, line=17)
    k.edge(store, 0, "cold")
    load = k.node("shared", "read", executions=512, pc=0x200, line=19)
    k.edge(load, store, "block")
    for pc, call_site, spans in ((0x80, 28, None), (0x180, 30, [(load, store)])):
        if spans:
            k.barrier(pc, line=16, spans=spans)
        else:
            k.barrier(pc, spanned=0, line=16)
        k.kernel["barriers"][-1]["source"]["inline"] = [
            {"function": "block_sum(float, float*)", "file": "/src/app.cu", "line": 16},
            {"function": "normalize_rows", "file": "/src/app.cu", "line": call_site},
        ]
    assert removable(k.build()) == []


def test_a_barrier_in_a_toolkit_header_belongs_to_its_call_site():
    """cg::sync(cta) compiles to a barrier whose innermost frame is the cooperative-groups header: two calls on
    two user lines are two lines, not one (cuda-samples transpose.cu:110 and :292)."""
    from reuselens.analyzer.patterns.barriers import source_line

    header = "/usr/local/cuda/targets/x86_64-linux/include/cooperative_groups/details/sync.h"
    barriers = [
        {
            "kind": "block",
            "source": {
                "file": header,
                "line": 98,
                "inline": [{"file": header, "line": 98}, {"file": "/s/transpose.cu", "line": user}],
            },
        }
        for user in (110, 292)
    ]
    assert [source_line(b) for b in barriers] == [("/s/transpose.cu", 110), ("/s/transpose.cu", 292)]


def test_a_removable_barrier_that_runs_once_a_warp_is_a_hint():
    # GIVEN backprop's prologue: its removable barrier runs once in each of the 512 warps (no loop), one wait a warp
    (finding,) = removable(backprop_like())
    assert finding["severity"] == "hint"
    # THEN in a loop (4 passes a warp) it is information
    kernel = backprop_like()
    for barrier in kernel["barriers"]:
        barrier["executions"] = 2048
    (finding,) = removable(kernel)
    assert finding["severity"] == "information"
