"""Every pattern: an implanted kernel where it must be found, and a control where nothing is reported."""

from __future__ import annotations

import pytest
from pattern_kernels import KernelBuilder

from reuselens.analyzer.patterns import PATTERNS, find_findings, find_report_findings


def patterns_of(findings):
    return sorted(f["pattern"] for f in findings)


def only(findings, pattern):
    hits = [f for f in findings if f["pattern"] == pattern]
    assert len(hits) == 1, f"expected one {pattern}, got {patterns_of(findings)}"
    return hits[0]


def pc_of(kernel, node_id):
    return kernel["nodes"][node_id]["pc"]


# --- Redundant access (paper 3.3 III) ---------------------------------------------------------------------


def rar_kernel(label: str) -> tuple[dict, int, int]:
    # GIVEN a load A (mostly first touch) and a second load B of the same data, reused at `label` scope
    k = KernelBuilder()
    a = k.background()
    b = k.node("global", "read", executions=4096, line=42)
    k.edge(b, a, label, 1.0) if label == "thread" else (k.edge(b, a, "block", 0.5), k.edge(b, a, "grid", 0.5))
    return k.build(), a, b


def test_rar_implant_is_one_finding_on_the_rereading_pc():
    kernel, a, b = rar_kernel("thread")
    finding = only(find_findings(kernel), "redundant-rar")
    assert finding["pcs"] == [b] and finding["origin_pcs"] == [a] and finding["scope"] == "thread"
    assert finding["fix"]["kind"] == "register-promotion"
    assert finding["waste"]["bytes"] == 4096 * 128 and finding["waste"]["instructions"] == 4096
    assert finding["metrics"]["predicted"] == {
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": 4096,
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 4 * 4096,
    }
    assert finding["message"].startswith("re-reads 524.3 KB already read by the same thread (RAR)")
    assert "— keep it in a register" in finding["message"]
    # thread-dominant hierarchical reuse on the same PC is covered by this finding, not repeated
    assert patterns_of(find_findings(kernel)) == ["redundant-rar"]


def two_loops_kernel(reload_loop: tuple[int, int], per_thread: int = 64) -> tuple[dict, int, int]:
    """PolyBench gramschmidt's two passes: a first loop (PCs 0x100-0x1f0) sums a column, loading a[i][j] `per_thread`
    times per thread; a load at 0x300 re-reads each a[i][j] (RAR) in a loop `reload_loop` (the report's `loops`)."""
    k = KernelBuilder(grid=(8, 1, 1), block=(256, 1, 1))  # 64 warps
    executions = 64 * per_thread
    first = k.node("global", "read", executions=executions, line=163, pc=0x180)
    k.edge(first, 0, "cold")
    again = k.node("global", "read", executions=executions, line=168, pc=0x300)
    k.edge(again, first, "thread")
    kernel = k.build()
    kernel["loops"] = {kernel["mangled"]: [[0x100, 0x1F0], list(reload_loop)]}
    return kernel, first, again


def test_a_reload_of_what_an_earlier_loop_loaded_gets_no_register_advice():
    kernel, first, again = two_loops_kernel((0x280, 0x380))
    finding = only(find_findings(kernel), "redundant-rar")
    assert finding["pcs"] == [again] and finding["origin_pcs"] == [first]
    assert finding["severity"] == "information" and finding["fix"]["kind"] == "none"
    assert finding["metrics"]["earlier_loop_values"] == 64
    assert "keep it in a register" not in finding["message"]
    assert finding["message"].endswith(
        "an earlier loop loaded them (about 64 values per thread): no register can keep them between the loops"
    )


@pytest.mark.parametrize(
    "reload_loop, per_thread",
    [((0x100, 0x380), 64), ((0x280, 0x380), 4)],
    ids=["same loop as its origin", "an earlier loop of 4 values"],
)
def test_reloads_in_their_origins_loop_or_of_a_few_values_keep_the_register_advice(reload_loop, per_thread):
    kernel, _first, again = two_loops_kernel(reload_loop, per_thread)
    finding = only(find_findings(kernel), "redundant-rar")
    assert finding["fix"]["kind"] == "register-promotion" and "earlier_loop_values" not in finding["metrics"]
    del kernel["loops"]  # a report without loops (no nvdisasm): the advice as before
    assert only(find_findings(kernel), "redundant-rar")["fix"]["kind"] == "register-promotion"


def test_rar_control_cross_thread_reuse_is_no_reload():
    # other warps' and blocks' re-reads are no register's to keep: reuse between warps, hierarchical's alone
    kernel, _a, _b = rar_kernel("cross-thread")
    assert patterns_of(find_findings(kernel)) == ["hierarchical-reuse-block"]


def shared_pair(
    reader_label: str, synced: int | None = None, write_size: int = 4, read_size: int = 4
) -> tuple[dict, int, int]:
    """Shared buffer: W stores, R re-reads; a second reader from another warp keeps the buffer block-shared."""
    k = KernelBuilder()
    w = k.node("shared", "write", executions=2048, size=write_size, line=10)
    k.edge(w, 0, "cold")
    r = k.node("shared", "read", executions=2048, size=read_size, line=20)
    if synced is None:
        k.edge(r, w, reader_label)
    else:
        k.edge(r, w, reader_label, synced=synced, synced_bytes=4 * synced)
    other = k.node("shared", "read", executions=2048, line=30)
    k.edge(other, w, "block")
    k.barrier(0x500, spanned=2048)
    return k.build(), w, r


def comparator_kernel(own_shares: list[float], line: int = 44) -> tuple[dict, int, list[int]]:
    """A shared tile stored once, then one load PC per unrolled step on one line, each finding its own element
    in `own_share` of its bytes and another thread's in the rest (a sorting network's comparator)."""
    k = KernelBuilder()
    tile = k.node("shared", "write", executions=2048, line=10)
    k.edge(tile, 0, "cold")
    steps = []
    for own in own_shares:
        step = k.node("shared", "read", executions=2048, line=line)
        if own:
            k.edge(step, tile, "thread", own)
        if own < 1:
            k.edge(step, tile, "warp_diff_inst", 1 - own)
        steps.append(step)
    k.barrier(0x500, spanned=2048)
    return k.build(), tile, steps


def test_lane_dependent_rereads_are_information_without_a_fix():
    # GIVEN cuda-samples sortingNetworks' comparator: each unrolled step's load finds its own element in half (a
    # quarter, an eighth) of its lanes and a neighbour's in the rest; a register cannot replace such a load
    kernel, tile, steps = comparator_kernel([0.5, 0.25, 0.5, 0.125])
    finding = only(find_findings(kernel), "redundant-raw")
    assert finding["pcs"] == steps and finding["severity"] in ("information", "hint")
    assert finding["fix"]["kind"] == "none" and finding["metrics"]["lane_dependent"] is True
    assert "lane-dependent" in finding["message"] and "no register can stand in" in finding["message"]
    assert "keep it in a register" not in finding["message"]  # which the same message would deny
    assert "__restrict__" not in finding["fix"]["explanation"]  # nor does the explanation offer a register after all
    # the first step after the tile's load reads only the thread's own elements: that PC keeps its register advice
    kernel, tile, steps = comparator_kernel([1.0, 0.5, 0.5])
    found = sorted((f["pcs"], f["fix"]["kind"]) for f in find_findings(kernel) if f["pattern"] == "redundant-raw")
    assert found == [([steps[0]], "register-promotion"), (steps[1:], "none")]


def test_a_reload_that_other_threads_only_read_in_between_offers_the_register_as_a_condition():
    # GIVEN SHOC sort's Hillis-Steele step `s_data[idx] += t`: the thread stored its element, the thread `offset`
    # above read it (t = s_data[idx - offset] there), and the thread reloads it; where no thread reads it in between,
    # the reload finds the thread's own store. The other threads only read: a register holds the partial sum,
    # unless a write the shadow cannot see came first
    k = KernelBuilder()
    tile = k.node("shared", "write", executions=2048, line=24)
    k.edge(tile, 0, "cold")
    neighbour = k.node("shared", "read", executions=2048, line=25)
    k.edge(neighbour, tile, "warp_diff_inst")
    reload = k.node("shared", "read", executions=2048, line=26)
    k.edge(reload, tile, "thread", 0.5)
    k.edge(reload, neighbour, "warp_diff_inst", 0.5)
    k.barrier(0x500, spanned=2048)
    finding = only(find_findings(k.build()), "redundant-raw")
    assert finding["pcs"] == [reload] and finding["fix"]["kind"] == "none"
    assert finding["metrics"]["lane_dependent"] is True and finding["metrics"]["read_between"] is True
    assert "other threads read this element in between" in finding["message"]
    assert "no register can stand in" not in finding["message"]
    assert finding["fix"]["explanation"].startswith("Between this thread's accesses, other threads")


def test_a_global_reload_touched_by_other_blocks_in_between_keeps_its_register_advice():
    # GIVEN a thread's reload of its own in[i] in global memory, 15% of whose bytes other blocks' halo reads touched
    # last: the labels say who touched it last, not whose value it is; a register serves every lane
    k = KernelBuilder()
    k.background()
    first = k.node("global", "read", executions=4096, line=40)
    k.edge(first, 0, "cold")
    reload = k.node("global", "read", executions=4096, line=44)
    k.edge(reload, first, "thread", 0.85)
    k.edge(reload, first, "block", 0.15)
    finding = only(find_findings(k.build()), "redundant-rar")
    assert finding["fix"]["kind"] == "register-promotion" and "lane_dependent" not in finding["metrics"]


def test_a_line_of_own_and_neighbour_loads_keeps_register_advice_on_the_own_ones():
    # GIVEN SHOC stencil2d's `sh[nidx] + sh[sidx] + sh[eidx] + sh[widx]` swept down a column: the north load
    # re-reads the thread's own centre of the row before, the east and west loads read neighbours' (no thread
    # reuse at all): one PC all own is a register candidate, and the line's finding is a warning with that fix
    kernel, tile, steps = comparator_kernel([1.0, 0.0, 0.0], line=176)
    finding = only(find_findings(kernel), "redundant-raw")
    assert finding["pcs"] == [steps[0]] and finding["fix"]["kind"] == "register-promotion"
    assert finding["severity"] == "warning" and "lane_dependent" not in finding["metrics"]


def test_raw_implant_in_a_block_shared_buffer():
    kernel, w, r = shared_pair("thread")
    finding = only(find_findings(kernel), "redundant-raw")
    assert finding["pcs"] == [r] and finding["origin_pcs"] == [w]
    assert "the same thread wrote itself (RAW)" in finding["message"]
    assert finding["metrics"]["predicted"] == {
        "smsp__inst_executed_op_shared_ld.sum": 2048,
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": 2048,
    }
    assert patterns_of(find_findings(kernel)) == ["redundant-raw"]


def test_raw_control_reads_another_warps_data_after_a_barrier():
    kernel, _w, _r = shared_pair("block")
    assert find_findings(kernel) == []


def waw_kernel(overwrite_label: str) -> tuple[dict, int, int]:
    k = KernelBuilder()
    first = k.node("shared", "write", executions=2048, line=11)
    k.edge(first, 0, "cold")
    second = k.node("shared", "write", executions=2048, line=12)
    k.edge(second, first, overwrite_label)
    reader = k.node("shared", "read", executions=2048, line=13)
    k.edge(reader, second, "block")
    k.barrier(0x500, spanned=4096)
    return k.build(), first, second


def test_waw_implant_reports_the_dead_store_with_its_overwriter():
    kernel, first, second = waw_kernel("thread")
    finding = only(find_findings(kernel), "redundant-waw")
    assert finding["pcs"] == [first] and finding["origin_pcs"] == [second]
    assert "(WAW, a dead store)" in finding["message"]
    assert finding["metrics"]["predicted"]["smsp__inst_executed_op_shared_st.sum"] == 2048
    assert patterns_of(find_findings(kernel)) == ["redundant-waw"]


def test_waw_control_overwrite_by_another_warp_is_not_dead():
    kernel, _first, _second = waw_kernel("block")
    assert find_findings(kernel) == []


def test_waw_between_sub_word_stores_is_information_without_a_fix_unless_the_overwrite_covers_the_word():
    # GIVEN one thread's byte stores to s[3t] and s[3t + 1] (simpleVoteIntrinsics): one 4-byte granule, so the
    # engine sees the second overwrite the first, though the bytes differ; deleting the first as a dead store would
    # change the results. A word-wide overwrite covers the byte, and the store is dead.
    for first_size, overwrite_size, sub_word in ((1, 1, True), (4, 2, True), (1, 4, False), (4, 4, False)):
        k = KernelBuilder()
        first = k.node("shared", "write", executions=2048, size=first_size, line=11)
        k.edge(first, 0, "cold")
        second = k.node("shared", "write", executions=2048, size=overwrite_size, line=12)
        k.edge(second, first, "thread")
        reader = k.node("shared", "read", executions=2048, line=13)
        k.edge(reader, second, "block")
        k.barrier(0x500, spanned=4096)
        finding = only(find_findings(k.build()), "redundant-waw")
        assert finding["severity"] == ("information" if sub_word else "warning"), (first_size, overwrite_size)
        assert finding["fix"]["kind"] == ("none" if sub_word else "register-promotion")
        assert ("may be different bytes" in finding["message"]) == sub_word
        assert finding["metrics"].get("sub_word", False) == sub_word


def test_reread_after_a_sub_word_origin_is_information_and_async_copies_are_no_register_reuse():
    # GIVEN a thread reading a 4-byte word after writing one byte of it: the read covers bytes nobody wrote
    kernel, _w, _r = shared_pair("thread", write_size=1)
    finding = only(find_findings(kernel), "redundant-raw")
    assert finding["severity"] in ("information", "hint") and finding["fix"]["kind"] == "none"
    assert finding["metrics"]["sub_word"] is True
    # GIVEN the origin is an asynchronous copy into shared memory (cp.async, a bulk copy): its value never sat in a
    # register of the thread, so there is no redundant read to keep in one
    kernel, copied, _r = shared_pair("thread")
    assert patterns_of(find_findings(kernel)) == ["redundant-raw"]
    kernel["nodes"][copied]["async_copy"] = True
    assert "redundant-raw" not in patterns_of(find_findings(kernel))


def test_self_loop_rereads_are_thread_dominant_hierarchical_reuse_not_rar():
    # GIVEN a load that re-reads its own earlier values in a loop (paper: redundant access needs two nodes)
    k = KernelBuilder()
    k.background()
    loop = k.node("global", "read", executions=4096)
    k.edge(loop, 0, "cold", 0.1)
    k.edge(loop, loop, "thread", 0.9)
    findings = find_findings(k.build())
    finding = only(findings, "hierarchical-reuse-block")
    assert finding["scope"] == "thread" and finding["fix"]["kind"] == "register-promotion"
    assert patterns_of(findings) == ["hierarchical-reuse-block"]


# --- Abuse SMEM (paper 3.3 III, Figure 1 / Listing 3) --------------------------------------------------------


def softmax_like() -> tuple[dict, list[int], list[int]]:
    """Listing 3: `vals` (thread-private, 4 PCs) and `buf_iw` (broadcast reduction) in one allocation."""
    k = KernelBuilder("_Z12soft_max_f32PKfPfi", grid=(128, 1, 1), block=(256, 1, 1))
    x = k.node("global", "read", executions=8192, line=40)
    k.edge(x, 0, "cold")
    st1 = k.node("shared", "write", executions=8192, line=41)
    k.edge(st1, 0, "cold")
    ld1 = k.node("shared", "read", executions=8192, line=45)
    k.edge(ld1, st1, "thread")
    st2 = k.node("shared", "write", executions=8192, line=47)
    k.edge(st2, ld1, "thread")
    ld2 = k.node("shared", "read", executions=8192, line=50)
    k.edge(ld2, st2, "thread")
    red_st = k.node("shared", "write", executions=1024, lanes=1, line=60)
    k.edge(red_st, 0, "cold", 0.5)
    red_ld = k.node("shared", "read", executions=2048, line=62)
    k.edge(red_st, red_ld, "block", 0.5)
    k.edge(red_ld, red_st, "block", 0.8)
    k.edge(red_ld, red_st, "warp_diff_inst", 0.2)
    out = k.node("global", "write", executions=8192, line=52)
    k.edge(out, 0, "cold")
    k.barrier(0x900, spanned=4096)
    return k.build(), [st1, ld1, st2, ld2], [red_st, red_ld]


def test_abuse_smem_finds_the_thread_private_group_not_the_broadcast_group():
    kernel, private, broadcast = softmax_like()
    findings = find_findings(kernel)
    finding = only(findings, "abuse-smem")
    assert finding["pcs"] == private
    assert not set(finding["pcs"]) & set(broadcast)
    assert finding["fix"]["kind"] == "shared-demotion"
    assert finding["waste"]["instructions"] == 4 * 8192
    assert finding["metrics"]["predicted"]["smsp__inst_executed_op_shared_st.sum"] == 2 * 8192
    # the private group's RAW/RAR are not repeated as redundant-access findings
    assert not [f for f in findings if f["pattern"].startswith("redundant") and set(f["pcs"]) & set(private)]


def test_abuse_smem_control_shared_buffer_read_by_other_warps():
    kernel, _w, _r = shared_pair("block")
    assert [f for f in find_findings(kernel) if f["pattern"] == "abuse-smem"] == []
    assert find_findings(kernel) == []


# --- Bank conflict and coalescing (paper 3.3 II) ------------------------------------------------------------


def shared_reader(wavefronts: int) -> dict:
    k = KernelBuilder()
    w = k.node("shared", "write", executions=1024)
    k.edge(w, 0, "cold")
    r = k.node("shared", "read", executions=1024, wavefronts=wavefronts, line=77)
    k.edge(r, w, "block")
    k.barrier(0x400, spanned=1024)
    return k.build()


def test_bank_conflict_implant_32_way():
    finding = only(find_findings(shared_reader(32)), "bank-conflict")
    assert finding["metrics"]["R_conf"] == 32.0
    assert finding["waste"]["wavefronts"] == 31 * 1024
    assert finding["fix"]["kind"] == "padding"
    assert finding["message"].startswith("32.0-way bank conflict")
    assert finding["metrics"]["predicted"] == {"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": 31 * 1024}


@pytest.mark.parametrize("block, fires", [((16, 4, 1), True), ((32, 8, 1), False), ((16, 4, 1), False)])
def test_a_conflict_of_a_warp_spanning_two_rows_gets_no_one_word_padding(block, fires):
    # GIVEN convolutionSeparable's 16x4 blocks: each warp covers two rows of s_Data[4][160], which start on one bank,
    # 2 wavefronts on every access; a 32-wide block's 2-way conflict (or a 16-wide one's 3-way) keeps the padding fix
    k = KernelBuilder(block=block)
    writer = k.node("shared", "write", executions=1024, line=70)
    k.edge(writer, 0, "cold")
    reader = k.node("shared", "read", executions=1024, wavefronts=2 if fires or block[0] == 32 else 3, line=99)
    k.edge(reader, writer, "block")
    finding = only(find_findings(k.build()), "bank-conflict")
    assert (finding["fix"]["kind"] == "none") is fires and ("warp_rows" in finding["metrics"]) is fires
    if fires:
        assert finding["metrics"]["warp_rows"] == 2
        assert "each warp spans 2 rows of the 16-thread-wide block" in finding["message"]
        assert "16 banks apart" in finding["message"] and "tile[ty][tx]" in finding["fix"]["explanation"]


# (node type, lanes, addresses = distinct words, wavefronts) per execution, as [value, count] of 1000 executions
_HISTOGRAM64 = ("read", [[32, 1000]], [[30, 30], [31, 200], [32, 770]], [[1, 1], [2, 999]])
_TPACF = ("atomic", [[20, 220], [27, 200], [32, 580]], [[8, 300], [9, 200], [12, 300], [16, 200]], [[2, 1000]])
_SEARCH = ("read", [[32, 1000]], [[12, 260], [14, 240], [17, 250], [20, 250]], [[2, 500], [3, 500]])
_STRIDED = ("read", [[32, 1000]], [[32, 1000]], [[2, 1000]])
_PARTIAL_WARPS = ("read", [[8, 250], [16, 250], [32, 500]], [[8, 250], [16, 250], [32, 500]], [[2, 1000]])


@pytest.mark.parametrize(
    "access, advice",
    [(_HISTOGRAM64, "layout"), (_TPACF, "layout"), (_SEARCH, "data"), (_STRIDED, "pad"), (_PARTIAL_WARPS, "pad")],
)
def test_a_conflict_of_words_chosen_by_the_data_gets_no_one_word_padding(access, advice):
    # GIVEN histogram64's per-thread byte histograms (s_Hist[threadPos + 64 * bin], laid out for 16 banks): every lane
    # active, but 28-32 words as the bins fall, and 2 wavefronts on every access; tpacf's two lanes per sub-histogram
    # column; mergeSort's binary-search probes, whose collisions vary too. Against them, a strided conflict whose words
    # follow its lanes, whole warps or partial ones (mri-gridding): one word of padding is the fix there
    node_type, lanes, words, wavefronts = access
    k = KernelBuilder()
    writer = k.node("shared", "write", executions=1000, line=50)
    k.edge(writer, 0, "cold")
    reader = k.node("shared", node_type, executions=1000, line=54)
    k.edge(reader, writer, "block")
    kernel = k.build()
    kernel["nodes"][reader].update(lanes=lanes, addresses=words, wavefronts=wavefronts)
    finding = only(find_findings(kernel), "bank-conflict")
    assert finding["fix"]["kind"] == ("padding" if advice == "pad" else "none")
    assert ("data_indexed" in finding["metrics"]) is (advice != "pad")
    assert finding["severity"] == ("information" if advice == "data" else "warning")
    assert ("lay the array out so that each lane keeps to its own bank" in finding["message"]) is (advice == "layout")
    assert ("data-dependent: the data picks the words" in finding["message"]) is (advice == "data")
    if advice == "layout":
        assert "l + 32·k" in finding["fix"]["explanation"] and "2 wavefronts" in finding["message"]


def test_bank_conflict_threshold_is_a_setting():
    assert [f["pattern"] for f in find_findings(shared_reader(2))] == ["bank-conflict"]
    assert find_findings(shared_reader(2), {"bankConflict": 2.0}) == []


def test_bank_conflict_control_conflict_free():
    assert find_findings(shared_reader(1)) == []


def shared_read_modify_write(reload: bool) -> tuple[dict, int, int, int | None]:
    """cuda-samples shfl_scan's `sums[tx][ty]`: a 2-way conflicting read at line 298 and, at line 307, the store of
    the element the same thread read; with `reload`, a later line re-reads what the store wrote."""
    k = KernelBuilder()
    fill = k.node("shared", "write", executions=4096, line=290)  # the tile other threads filled
    k.edge(fill, 0, "cold")
    load = k.node("shared", "read", executions=4096, wavefronts=2, wavefronts_ideal=1, line=298)
    k.edge(load, fill, "block")
    store = k.node("shared", "write", executions=4096, wavefronts=2, wavefronts_ideal=1, line=307)
    k.edge(store, load, "thread")
    again = None
    if reload:
        again = k.node("shared", "read", executions=4096, wavefronts=2, wavefronts_ideal=1, line=320)
        k.edge(again, store, "thread")
    return k.build(), load, store, again


def test_the_store_of_a_shared_read_modify_write_joins_its_loads_bank_conflict():
    kernel, load, store, _again = shared_read_modify_write(reload=False)
    finding = only(find_findings(kernel), "bank-conflict")
    assert finding["pcs"] == [load, store] and finding["waste"]["wavefronts"] == 2 * 4096
    assert finding["metrics"]["predicted"] == {
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": 4096,
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": 4096,
    }


def test_a_helpers_bank_conflict_inlined_at_several_call_sites_is_one_finding():
    # GIVEN cuda-samples histogram64's addByte (line 54), inlined through addWord at four call sites of the kernel:
    # one shared access of the helper's line, one layout to change; a conflict on another line stays its own
    k = KernelBuilder()
    writer = k.node("shared", "write", executions=1024, line=40)
    k.edge(writer, 0, "cold")
    loads = []
    for call in (99, 100, 101, 102):
        load = k.node("shared", "read", executions=1024, wavefronts=2, wavefronts_ideal=1, line=54)
        k.kernel["nodes"][load]["source"]["inline"] = [
            {"function": "addByte", "file": "/src/app.cu", "line": 54},
            {"function": "addWord", "file": "/src/app.cu", "line": call},
        ]
        k.edge(load, writer, "block")
        loads.append(load)
    other = k.node("shared", "read", executions=1024, wavefronts=2, wavefronts_ideal=1, line=117)
    k.edge(other, writer, "block")
    findings = [f for f in find_findings(k.build()) if f["pattern"] == "bank-conflict"]
    assert sorted(f["pcs"] for f in findings) == [loads, [other]]
    (helper,) = [f for f in findings if f["pcs"] == loads]
    assert helper["waste"]["wavefronts"] == 4 * 1024


def test_atomics_the_app_inlines_at_two_lines_on_two_arrays_stay_two_bank_conflicts():
    # GIVEN two shared atomicAdds, both the toolkit header's line 112, inlined at app lines 50 (a histogram: the bins
    # pick the words, 1 to 6 wavefronts) and 60 (s_acc[lane * 32]: 32 wavefronts always): two arrays, two fixes
    header = "/usr/local/cuda/include/device_atomic_functions.hpp"
    k = KernelBuilder()
    k.background()
    atomics = []
    for app_line in (50, 60):
        writer = k.node("shared", "write", executions=1000, line=app_line - 5)
        k.edge(writer, 0, "cold")
        atomic = k.node("shared", "atomic", executions=1000, line=112)
        node = k.kernel["nodes"][atomic]
        node["source"] = {
            "file": header,
            "line": 112,
            "column": 0,
            "inline": [
                {"function": "atomicAdd(unsigned int*, unsigned int)", "file": header, "line": 112},
                {"function": "kernel", "file": "/src/app.cu", "line": app_line},
            ],
        }
        if app_line == 50:
            node.update(
                addresses=[[20, 300], [24, 300], [28, 400]],
                wavefronts=[[1, 100], [2, 300], [3, 300], [4, 200], [6, 100]],
                wavefronts_ideal=[[1, 1000]],
            )
        else:
            node.update(wavefronts=[[32, 1000]], wavefronts_ideal=[[1, 1000]])
        k.edge(atomic, writer, "block")
        atomics.append(atomic)
    findings = {f["pcs"][0]: f for f in find_findings(k.build()) if f["pattern"] == "bank-conflict"}
    assert sorted(findings) == atomics
    assert findings[atomics[0]]["fix"]["kind"] == "none" and findings[atomics[1]]["fix"]["kind"] == "padding"


def test_unrolled_atomics_steady_at_different_wavefront_counts_are_a_layout_conflict():
    # GIVEN two unrolled copies of one shared atomic, one always 2 wavefronts, the other always 4: pooled, no count
    # covers 90% of executions, yet neither copy's count varies with the data, so padding is the advice
    k = KernelBuilder()
    writer = k.node("shared", "write", executions=1000, line=45)
    k.edge(writer, 0, "cold")
    copies = []
    for wavefronts in (2, 4):
        atomic = k.node("shared", "atomic", executions=1000, wavefronts=wavefronts, wavefronts_ideal=1, line=50)
        k.edge(atomic, writer, "block")
        copies.append(atomic)
    finding = only(find_findings(k.build()), "bank-conflict")
    assert (
        finding["pcs"] == copies and finding["fix"]["kind"] == "padding" and "data_dependent" not in finding["metrics"]
    )


def test_a_store_after_a_shared_atomic_keeps_its_own_bank_conflict():
    # a histogram bin's atomic (conflicts that follow the data) and a store of the same element by the same thread
    # (a layout conflict): two fixes, two findings, whichever PC comes first
    for store_pc, atomic_pc in ((0x100, 0x200), (0x200, 0x100)):
        k = KernelBuilder()
        atomic = k.node("shared", "atomic", executions=4096, line=20, pc=atomic_pc)
        k.kernel["nodes"][atomic]["wavefronts"] = [[1, 1024], [2, 1024], [3, 1024], [4, 1024]]
        k.kernel["nodes"][atomic]["wavefronts_ideal"] = [[1, 4096]]
        k.edge(atomic, 0, "cold", 0.5)
        k.edge(atomic, atomic, "block", 0.5)  # other warps' updates of the bins: a shared histogram
        store = k.node("shared", "write", executions=4096, wavefronts=2, wavefronts_ideal=1, line=30, pc=store_pc)
        k.edge(store, atomic, "thread")
        conflicts = {
            tuple(f["pcs"]): f["fix"]["kind"] for f in find_findings(k.build()) if f["pattern"] == "bank-conflict"
        }
        assert conflicts == {(atomic,): "none", (store,): "padding"}


def test_a_shared_reload_of_a_stored_element_keeps_its_own_bank_conflict():
    # a kernel's loop reads back what its threads stored in shared memory: reloads do not chain into one finding
    kernel, load, store, again = shared_read_modify_write(reload=True)
    conflicts = sorted(f["pcs"] for f in find_findings(kernel) if f["pattern"] == "bank-conflict")
    assert conflicts == [[load, store], [again]]


def global_reader(sectors: int) -> dict:
    k = KernelBuilder()
    k.background()
    node = k.node("global", "read", executions=4096, sectors=sectors, line=5)
    k.edge(node, 0, "cold", 0.9)
    k.edge(node, node, "block", 0.05)
    k.edge(node, node, "grid", 0.05)
    return k.build()


def test_poor_coalescing_implant_one_sector_per_lane():
    finding = only(find_findings(global_reader(32)), "poor-coalescing")
    assert finding["metrics"]["R_coal"] == 8.0
    assert finding["waste"]["bytes"] == 28 * 4096 * 32
    assert finding["metrics"]["predicted"] == {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 28 * 4096}
    # its share is of the kernel's requested sectors (the background load's 4 per access and its own 32), not of
    # lane-bytes, where 28 wasted bytes per 4 used saturated at 1
    assert finding["waste"]["basis"] == "sectors"
    assert finding["waste"]["share"] == pytest.approx(28 / 36, abs=1e-6)
    assert "extra sector requests" in finding["message"] and "access consecutive addresses" in finding["message"]
    # a thread walking a row of its own (PolyBench atax, bicg, mvt) cannot put threadIdx.x on the row's index: a warp
    # per row or a transposed matrix is its remedy (session 54's review of the breadth set)
    assert "give each warp a row" in finding["fix"]["explanation"]
    assert "store the matrix transposed" in finding["fix"]["explanation"]


def test_a_gather_through_loaded_indices_is_told_what_helps_instead_of_reindexing():
    # GIVEN SHOC BFS's atomicMin(&cost[nid], ...) on neighbours read from the edge list: 95% of its requests have
    # lanes on no stride (the engine's `irregular`), so threadIdx.x indexing cannot coalesce it
    for irregular, follows in ((int(0.95 * 4096), True), (int(0.5 * 4096), False), (0, False)):
        kernel = global_reader(32)
        node = next(n for n in kernel["nodes"] if n.get("line") == 5 or (n.get("source") or {}).get("line") == 5)
        if irregular:
            node["irregular"] = irregular
        finding = only(find_findings(kernel), "poor-coalescing")
        assert finding["severity"] == "warning" and finding["fix"]["kind"] == "coalescing"
        assert finding["metrics"].get("addresses_follow_data", False) is follows, irregular
        assert ("the addresses come from loaded data" in finding["message"]) is follows
        assert ("come from data the kernel loaded" in finding["fix"]["explanation"]) is follows


def test_a_gather_of_data_the_kernel_writes_is_not_told_to_use_the_read_only_path():
    # GIVEN SHOC BFS (UIUC)'s gather of cost[nid] beside the atomicMin that lowers cost[nid] in the same kernel: the
    # read-only path's cache does not see the kernel's own writes, so __ldg on it would read stale costs; the same
    # gather of data nobody writes keeps that option
    for written in (False, True):
        k = KernelBuilder()
        k.background()
        gather = k.node("global", "read", executions=4096, sectors=32, line=594)
        k.kernel["nodes"][gather]["irregular"] = int(0.95 * 4096)
        k.edge(gather, 0, "cold")
        if written:
            lower = k.node("global", "atomic", executions=1024, line=593)
            k.edge(lower, gather, "grid")
        finding = next(
            f for f in find_findings(k.build()) if f["pattern"] == "poor-coalescing" and f["pcs"] == [gather]
        )
        assert finding["metrics"]["addresses_follow_data"] is True
        assert ("__ldg" in finding["fix"]["explanation"]) is not written, written
        assert finding["fix"]["explanation"].endswith("(paper 3.3 II).")


def test_a_report_without_a_lanes_distribution_says_nothing_of_data_indexed_addresses():
    # GIVEN an uncoalesced load whose report left `lanes` out (the schema allows it), its address counts spread by
    # partial warps: no evidence that the data picks its addresses
    kernel = global_reader(32)
    node = next(n for n in kernel["nodes"] if (n.get("source") or {}).get("line") == 5)
    node.update(lanes=None, addresses=[[32, 2048], [16, 2048]])
    finding = only(find_findings(kernel), "poor-coalescing")
    assert "addresses_follow_data" not in finding["metrics"]


def test_a_scatter_through_claimed_slots_is_not_told_to_use_the_read_only_path():
    # GIVEN warpAggregatedAtomicsCG's mapToBuckets: each lane stores to a slot an atomic returned (95% of the requests
    # follow no stride); a store has no read-only path, and a warp per row is no remedy for a bucket scatter
    k = KernelBuilder()
    k.background()
    store = k.node("global", "write", executions=4096, sectors=9, line=100)
    k.kernel["nodes"][store]["irregular"] = int(0.95 * 4096)
    k.edge(store, 0, "cold")
    finding = only(find_findings(k.build()), "poor-coalescing")
    assert finding["metrics"]["addresses_follow_data"] is True
    assert finding["message"].endswith("(a scatter): stage the stores by destination in shared memory")
    assert "group the stores by destination" in finding["fix"]["explanation"]
    assert "__ldg" not in finding["fix"]["explanation"]


def test_probes_whose_address_count_follows_the_data_are_a_gather_though_the_engine_judged_few():
    # GIVEN cuda-samples mergeSort's binary search: every execution has 32 active lanes, but they probe 1 to 32
    # distinct addresses as the keys fall (the addresses mode covers 37% of executions), while the engine's affine
    # test, which leaves lanes it cannot pair unjudged, calls only 66% of the requests irregular; a partial warp whose
    # address count follows its lane count is no gather
    for lanes, addresses, follows in (
        ([[32, 4096]], [[1, 1536], [2, 512], [8, 1024], [32, 1024]], True),
        ([[16, 2048], [32, 2048]], [[16, 2048], [32, 2048]], False),
    ):
        kernel = global_reader(32)
        node = next(n for n in kernel["nodes"] if (n.get("source") or {}).get("line") == 5)
        node.update(lanes=lanes, addresses=addresses, irregular=int(0.66 * 4096))
        finding = only(find_findings(kernel), "poor-coalescing")
        assert finding["metrics"].get("addresses_follow_data", False) is follows
        assert ("the addresses come from loaded data" in finding["message"]) is follows


def dead_store_kernel(dead_share: float) -> tuple[dict, int]:
    """An uncoalesced store (a sector per lane) that the same thread overwrites (`dead_share` of its bytes)."""
    k = KernelBuilder()
    k.background()
    store = k.node("global", "write", executions=4096, sectors=32, line=216)
    k.edge(store, 0, "cold")
    later = k.node("global", "write", executions=4096, sectors=32, line=217)
    k.edge(later, store, "thread", dead_share)
    k.edge(later, 0, "cold", 1 - dead_share)
    return k.build(), store


def test_an_uncoalesced_dead_store_is_one_dead_store_finding():
    # GIVEN PolyBench correlation's `symmat[j1 * M + j2] +=` in the i loop: each lane's store hits its own sector,
    # and the same thread overwrites it on the next pass (no reader in between): storing once after the loop
    # removes the uncoalesced stores too, so the dead store is the one finding
    for dead_share, expected in ((1.0, ["redundant-waw"]), (0.5, ["poor-coalescing", "redundant-waw"])):
        kernel, store = dead_store_kernel(dead_share)
        found = [
            f["pattern"] for f in find_findings(kernel) if store in f["pcs"] and f["pattern"] != "streaming-access"
        ]
        assert sorted(found) == expected, (dead_share, found)
    # the dead store's finding under minShare (33% of the traffic against 35%): the coalescing one (41% of the
    # sectors) is not dropped for a finding nobody sees
    kernel, store = dead_store_kernel(1.0)
    assert [f["pattern"] for f in find_findings(kernel, {"minShare": 0.35}) if store in f["pcs"]] == ["poor-coalescing"]


def reload_kernel(reload_share: float, origin_sectors: int = 32) -> tuple[dict, int, int]:
    """A gather (a sector per lane, `origin_sectors`) and a reload of it by the same thread at another line
    (`reload_share` of its bytes last touched there, the rest first touches)."""
    k = KernelBuilder()
    k.background()
    first = k.node("global", "read", executions=4096, sectors=origin_sectors, line=594)
    k.edge(first, 0, "cold")
    reload = k.node("global", "read", executions=4096, sectors=32, line=596)
    k.edge(reload, first, "thread", reload_share)
    if reload_share < 1:
        k.edge(reload, 0, "cold", 1 - reload_share)
    return k.build(), first, reload


def coalescing_pcs(kernel) -> list[list[int]]:
    return [f["pcs"] for f in find_findings(kernel) if f["pattern"] == "poor-coalescing"]


def test_a_reload_of_an_uncoalesced_gather_is_the_gathers_one_finding():
    # GIVEN SHOC BFS's volatile cost[node_to_process], gathered at line 594 and loaded again by the same thread at
    # line 596: the reload fetches the gather's sectors, so coalescing the gather fixes both; one finding with both
    # PCs, both loads' extra sectors counted
    kernel, first, reload = reload_kernel(1.0)
    assert coalescing_pcs(kernel) == [[first, reload]]
    finding = only(find_findings(kernel), "poor-coalescing")
    assert finding["metrics"]["excess_sectors"] == 2 * 28 * 4096
    assert finding["metrics"]["predicted"] == {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 2 * 28 * 4096}
    assert [f["pcs"] for f in find_findings(kernel) if f["pattern"] == "redundant-rar"] == [[reload]]
    # a load that mostly touches data of its own is a layout of its own
    kernel, first, reload = reload_kernel(0.5)
    assert coalescing_pcs(kernel) == [[first], [reload]]
    # a reload of a coalesced load keeps its own finding: nothing else reports its sectors
    kernel, first, reload = reload_kernel(1.0, origin_sectors=4)
    assert coalescing_pcs(kernel) == [[reload]]


def test_the_store_of_a_read_modify_write_joins_its_loads_finding():
    # GIVEN PolyBench adi's `X[i][j] = X[i][j] - ...` walking a column: the store writes the element the same thread
    # has just read, in the sectors the load fetched; one statement, one layout, one finding with both PCs
    k = KernelBuilder()
    k.background()
    load = k.node("global", "read", executions=4096, sectors=32, line=151)
    k.edge(load, 0, "cold")
    store = k.node("global", "write", executions=4096, sectors=32, line=151)
    k.edge(store, load, "thread")
    finding = only(find_findings(k.build()), "poor-coalescing")
    assert finding["pcs"] == [load, store]
    assert finding["metrics"]["predicted"] == {
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 28 * 4096,
        "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": 28 * 4096,
    }


def test_a_load_and_store_that_follow_each_other_round_a_loop_are_one_finding():
    # GIVEN `v = x[r * pitch]; x[r * pitch] = f(v);` in a loop the compiler reloads (a store that may alias): the load's
    # bytes are re-reads of the store's last iteration and the store's of the load; neither is the first, and the
    # rule once followed the chain round the loop for ever
    k = KernelBuilder()
    k.background()
    load = k.node("global", "read", executions=4096, sectors=32, line=10)
    k.edge(load, 0, "cold", 0.05)
    store = k.node("global", "write", executions=4096, sectors=32, line=11)
    k.edge(load, store, "thread", 0.95)
    k.edge(store, load, "thread", 1.0)
    assert coalescing_pcs(k.build()) == [[load, store]]


def test_a_loop_that_rereads_its_own_gather_keeps_its_finding():
    # GIVEN one uncoalesced PC whose later iterations re-read what its earlier ones read (a self-loop): it is the
    # first touch of its data as well, and stays reported
    k = KernelBuilder()
    k.background()
    walk = k.node("global", "read", executions=4096, sectors=32, line=40)
    k.edge(walk, walk, "thread", 0.95)
    k.edge(walk, 0, "cold", 0.05)
    assert coalescing_pcs(k.build()) == [[walk]]


def split_element_kernel(
    sizes: list[int], sectors: int, copies: int = 1, share_words: bool = True, type_: str = "read"
) -> tuple[dict, list[list[int]]]:
    """`copies` elements per statement (a loop unrolled), each accessed field by field: one PC per field of `sizes`
    bytes on line 139, every one touching `sectors` per warp access; with share_words, each field's bytes are the
    same thread's last access at the field before it (the rest of its 4-byte word), else first touches."""
    k = KernelBuilder()
    k.background()
    elements = []
    for _copy in range(copies):
        fields = [k.node("global", type_, executions=4096, size=size, sectors=sectors, line=139) for size in sizes]
        k.edge(fields[0], 0, "cold")
        for before, field in zip(fields, fields[1:]):
            k.edge(field, before if share_words else 0, "thread" if share_words else "cold")
        elements.append(fields)
    return k.build(), elements


def test_one_element_split_into_byte_accesses_is_told_to_align_its_type_not_to_reindex():
    # GIVEN cuda-samples alignedTypes' RGBA8_misaligned (four unsigned chars, no __align__) copied in a loop unrolled
    # twice: four 1-byte loads per element, lanes 4 bytes apart, 4 sectors each where one byte needs 1; together the
    # four use every byte of those sectors, so one aligned 4-byte load is the fix (session 48's review: re-indexing
    # advice wrong)
    for type_, op in (("read", "ld"), ("write", "st")):
        kernel, elements = split_element_kernel([1, 1, 1, 1], sectors=4, copies=2, type_=type_)
        finding = only(find_findings(kernel), "poor-coalescing")
        assert finding["pcs"] == [pc for fields in elements for pc in fields]
        assert finding["fix"]["kind"] == "coalescing" and "__align__(4)" in finding["fix"]["explanation"]
        assert "__align__(4)" in finding["message"] and "consecutive addresses" not in finding["message"]
        assert finding["message"].startswith(("reads" if type_ == "read" else "writes") + " each 4-byte element in 4")
        metrics = finding["metrics"]
        assert (metrics["element_bytes"], metrics["aligned_bytes"], metrics["element_accesses"]) == (4, 4, 4)
        # one 4-byte access per element: 2 x 4 requests of 4 sectors become 2 x 1 of 4
        assert metrics["predicted"] == {
            f"l1tex__t_requests_pipe_lsu_mem_global_op_{op}.sum": 2 * 3 * 4096,
            f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum": 2 * 12 * 4096,
        }
        assert finding["waste"]["bytes"] == 2 * 12 * 4096 * 32
        # the fields' "re-reads" and "dead stores" of one word are the element's other bytes: no finding of their own
        assert not [f for f in find_findings(kernel) if f["pattern"].startswith("redundant-")]


def test_fields_of_different_widths_are_one_element():
    # GIVEN a packed {short; char; char}: one finding, though its PCs differ in width
    kernel, (fields,) = split_element_kernel([2, 1, 1], sectors=4)
    finding = only(find_findings(kernel), "poor-coalescing")
    assert finding["pcs"] == fields and "(2+1+1 bytes)" in finding["message"]
    assert (finding["metrics"]["element_bytes"], finding["metrics"]["aligned_bytes"]) == (4, 4)


def test_a_three_byte_element_whose_words_neighbouring_lanes_share_keeps_the_general_advice():
    # GIVEN a uchar3 read field by field, its edges as the engine labels them: lane l's bytes 3l..3l+2 share 4-byte
    # words with lanes l - 1 and l + 1, so a field's word was last touched by another lane as often as by its own
    # thread (docs/patterns.md: only elements of one word are recognized); the report cannot say "one element"
    k = KernelBuilder()
    k.background()
    fields = [k.node("global", "read", executions=4096, size=1, sectors=3, line=139) for _ in range(3)]
    k.edge(fields[0], 0, "cold")
    for before, field in zip(fields, fields[1:]):
        k.edge(field, before, "thread", 0.25)
        k.edge(field, before, "warp_diff_inst", 0.75)
    finding = only(find_findings(k.build()), "poor-coalescing")
    assert "element_bytes" not in finding["metrics"] and "consecutive addresses" in finding["message"]


def test_a_char_column_walk_keeps_its_reindexing_advice():
    # GIVEN each thread walking its own row of chars, unrolled by four: the four loads share a word, but the lanes
    # are a 1 KB row apart (32 sectors each), so one 4-byte load would still take 32: the stride is the problem
    kernel, _ = split_element_kernel([1, 1, 1, 1], sectors=32)
    finding = only(find_findings(kernel), "poor-coalescing")
    assert "element_bytes" not in finding["metrics"] and "consecutive addresses" in finding["message"]
    # ... and bytes 4 apart that share no word (unrolled iterations of a stride-4 walk): a byte of every word is used
    kernel, _ = split_element_kernel([1, 1, 1, 1], sectors=4, share_words=False)
    finding = only(find_findings(kernel), "poor-coalescing")
    assert "element_bytes" not in finding["metrics"] and "consecutive addresses" in finding["message"]


def addressed_kernel(fields: list[tuple[int, ...]], sectors: int) -> tuple[dict, list[int]]:
    """Loads on line 14 (tests/data/sass/elements.cu), each (size, base register, offset[, where the register was
    set]) as the CUBIN's SASS addresses it (the report's `address`, analyzer/operands.py), every one touching
    `sectors` per warp access."""
    k = KernelBuilder()
    k.background()
    ids = []
    for size, register, offset, *defined_at in fields:
        load = k.node("global", "read", executions=4096, size=size, sectors=sectors, line=14)
        address = {"register": register, "offset": offset, "defined_at": defined_at[0] if defined_at else 0xB0}
        k.kernel["nodes"][load]["address"] = address
        k.edge(load, 0, "cold")
        ids.append(load)
    return k.build(), ids


def test_members_of_one_element_told_by_their_address_are_told_to_align_the_type():
    # GIVEN a struct of four ints aligned to 4 only (alignedTypes' RGBA32_misaligned), copied in a loop unrolled twice
    # whose second copy sets its base register anew: four 4-byte loads an element, [R8], [R8+0x4], [R8+0x8], [R8+0xc],
    # lanes 16 bytes apart (16 sectors where 4 would do); the fields share no 4-byte word, so only the SASS shows it
    quads = [(4, 8, offset) for offset in (0, 4, 8, 12)] * 2
    kernel, ids = addressed_kernel(quads, sectors=16)
    finding = only(find_findings(kernel), "poor-coalescing")
    assert finding["pcs"] == ids and "__align__(16)" in finding["message"]
    metrics = finding["metrics"]
    assert (metrics["element_bytes"], metrics["aligned_bytes"], metrics["element_accesses"]) == (16, 16, 4)
    # one 16-byte access per element: 2 x 4 requests of 16 sectors become 2 x 1 of 16
    assert finding["waste"]["bytes"] == (8 * 16 - 2 * 16) * 4096 * 32
    # a three-int member list (RGB32_misaligned) is aligned to 16, the power of two above its 12 bytes
    kernel, ids = addressed_kernel([(4, 2, offset) for offset in (0, 4, 8)], sectors=12)
    finding = only(find_findings(kernel), "poor-coalescing")
    assert (finding["metrics"]["element_bytes"], finding["metrics"]["aligned_bytes"]) == (12, 16)


def test_an_element_wider_than_any_access_split_in_two_is_no_waste():
    # GIVEN SHOC scan's double4 (alignedTypes' RGBA32_2): two 16-byte loads, [R4] and [R4+0x10], lanes 32 bytes apart:
    # each touches 32 sectors where 16 would do, but together exactly the element's 32, and no access is wider
    kernel, _ids = addressed_kernel([(16, 4, 0), (16, 4, 16)], sectors=32)
    assert "poor-coalescing" not in patterns_of(find_findings(kernel))


def test_a_structure_wider_than_any_access_read_in_narrow_members_keeps_its_finding():
    # GIVEN eight floats a thread, read as eight 4-byte loads of one register: 32 sectors each where 4 would do; no
    # one access moves 32 bytes, but 16-byte ones would: the waste is real, and the general advice stays
    kernel, _ids = addressed_kernel([(4, 2, 4 * k) for k in range(8)], sectors=32)
    finding = only(find_findings(kernel), "poor-coalescing")
    assert "element_bytes" not in finding["metrics"]


def test_one_register_number_set_anew_between_loads_makes_no_element():
    # GIVEN p[i].x + p[i].y + q[i].z + q[i].w with R2 set to p, read, then set to q: consecutive offsets of one
    # register number, but two arrays (the SASS's definitions of R2 differ)
    fields = [(4, 2, 0, 0x80), (4, 2, 4, 0x80), (4, 2, 8, 0x100), (4, 2, 12, 0x100)]
    kernel, _ids = addressed_kernel(fields, sectors=16)
    assert all("element_bytes" not in f["metrics"] for f in find_findings(kernel) if f["pattern"] == "poor-coalescing")


def test_loads_from_other_registers_or_apart_are_no_element():
    # GIVEN elements.cu's every_fourth (two loads 16 bytes apart per lane, from two registers: two iterations) and two
    # loads of one register 8 bytes apart (a gap: no element whose members fill it): the general advice stays
    for fields in ([(4, 2, 0), (4, 4, 0)], [(4, 2, 0), (4, 2, 8)]):
        kernel, _ids = addressed_kernel(fields, sectors=16)
        finding = only(find_findings(kernel), "poor-coalescing")
        assert "element_bytes" not in finding["metrics"] and "consecutive addresses" in finding["message"]


def test_split_elements_of_a_templates_instantiations_keep_a_warning_each():
    # GIVEN alignedTypes' testKernel<RGBA8_misaligned> and testKernel<RGBA32_misaligned> on one line: aligning one
    # instantiation's element type does not fix the other's, so the element warning stands for no other
    def named(kernel: dict, name: str) -> dict:
        kernel["id"], kernel["name"] = name, f"void testKernel<{name}>({name}*, {name}*, int)"
        return kernel

    bytes_, _ = split_element_kernel([1, 1, 1, 1], sectors=4)
    words = KernelBuilder()
    for _field in range(4):
        words.edge(words.node("global", "read", executions=4096, sectors=16, line=139), 0, "cold")
    findings = find_report_findings([named(bytes_, "RGBA8_misaligned"), named(words.build(), "RGBA32_misaligned")])
    severities = [[f["severity"] for f in fs if f["pattern"] == "poor-coalescing"] for fs in findings]
    assert severities == [["warning"], ["warning"]]


def test_poor_coalescing_control_coalesced():
    assert find_findings(global_reader(4)) == []


# --- Broadcasting / multicasting / atomic contention / constant region ---------------------------------------


def uniform_reader(addresses: int, footprint_fraction: float, type_: str = "read") -> tuple[dict, int]:
    """A load (or atomic) whose lanes hit `addresses` distinct addresses; reuse from other warps split 50/50."""
    k = KernelBuilder()
    k.background()
    node = k.node("global", type_, executions=4096, addresses=addresses, sectors=1, line=9)
    same = 1 - addresses / 32
    k.edge(node, 0, "cold", footprint_fraction)
    if same:
        k.edge(node, node, "warp_same_inst", same)
    rest = 1 - footprint_fraction - same
    k.edge(node, node, "block", rest / 2)
    k.edge(node, node, "grid", rest / 2)
    return k.build(), node


def test_constant_region_implant_small_uniform_table():
    kernel, node = uniform_reader(1, 1 / 4096)  # footprint 128 B
    findings = find_findings(kernel)
    finding = only(findings, "constant-region")
    assert finding["pcs"] == [node] and finding["fix"]["kind"] == "constant-promotion"
    assert finding["metrics"]["footprint_bytes"] == 128
    assert finding["metrics"]["predicted"]["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] == 4096
    assert patterns_of(findings) == ["constant-region"]  # its broadcasting is not repeated


def test_a_volatile_flag_every_lane_polls_is_no_constant_candidate():
    # GIVEN the small uniform table of the implant, read through a volatile pointer (LDG.E.STRONG.SYS): a flag the
    # host sets in mapped memory while the kernel polls it, which a __constant__ copy would never show
    kernel, node = uniform_reader(1, 1 / 4096)
    next(n for n in kernel["nodes"] if n["id"] == node)["strong"] = True
    findings = find_findings(kernel)
    assert "constant-region" not in patterns_of(findings)


def test_constant_region_capacity_is_checked():
    kernel, _node = uniform_reader(1, 1 / 4096)
    findings = find_findings(kernel, {"constantCapacityBytes": 64})
    assert "constant-region" not in patterns_of(findings)
    assert only(findings, "broadcasting")["severity"] in ("hint", "information")


def test_constant_region_waste_is_the_sectors_its_loads_take():
    # GIVEN the table of the implant read in a loop (8 loads a warp) beside a row walk whose every warp load takes
    # 32 sectors (PolyBench mvt's a[i*N + j] beside y_1[j]): in lane-bytes the table is half the kernel's traffic,
    # in sectors 1 in 33, which is what an LDC in the LDG's place saves
    kernel, node = uniform_reader(1, 1 / 4096)
    kernel["nodes"][1]["sectors"] = [[32, 4096]]
    finding = only(find_findings(kernel), "constant-region")
    assert finding["waste"]["basis"] == "sectors" and finding["waste"]["share"] == pytest.approx(1 / 33, abs=1e-4)
    assert finding["severity"] == "information" and "4,096 sectors" in finding["message"]
    # THEN beside a coalesced stream (4 sectors a warp load) the same table is a fifth of the sectors: a warning
    kernel, node = uniform_reader(1, 1 / 4096)
    assert only(find_findings(kernel), "constant-region")["severity"] == "warning"


def test_a_vector_whose_warps_each_read_one_element_is_no_constant_candidate():
    # GIVEN a warp-uniform read-only vector of which each of the 512 warps reads one element (PolyBench gemver's
    # u1[i] beside the matrix it streams): no table the warps share, and L1 serves each warp's one read as well
    def table_kernel(elements: int, reads_per_warp: int) -> dict:
        k = KernelBuilder()
        row = k.node("global", "read", executions=512)  # the matrix row each warp streams, 4 sectors a load
        k.edge(row, 0, "cold")
        node = k.node("global", "read", executions=512 * reads_per_warp, addresses=1, sectors=1, line=9)
        cold = elements * 4 / (512 * reads_per_warp * 128)
        k.edge(node, 0, "cold", cold)
        k.edge(node, node, "warp_same_inst", 31 / 32)
        k.edge(node, node, "grid", 1 - cold - 31 / 32)
        return k.build()

    assert "constant-region" not in patterns_of(find_findings(table_kernel(4096, 1)))
    # THEN an 8-entry table that every warp reads whole (a loop, or its unrolled copies) is one, a warning by its
    # sectors (8 of 12)
    assert only(find_findings(table_kernel(8, 8)), "constant-region")["severity"] == "warning"


def test_constant_region_and_broadcasting_control_divergent_lookups():
    # a table every warp re-reads with divergent lanes: reuse between warps (hierarchical's), no broadcast
    kernel, _node = uniform_reader(32, 0.0)
    assert patterns_of(find_findings(kernel)) == ["hierarchical-reuse-block"]


def test_multicasting_implant_is_informational():
    kernel, node = uniform_reader(4, 1 / 64, "read")
    kernel["nodes"][node]["sectors"] = [[1, 4096]]
    finding = only(find_findings(kernel, {"constantCapacityBytes": 1}), "multicasting")
    assert finding["severity"] in ("hint", "information") and finding["fix"]["kind"] == "none"


def test_atomic_contention_implant_and_control():
    kernel, node = uniform_reader(1, 1 / 4096, "atomic")
    finding = only(find_findings(kernel), "atomic-contention")
    assert finding["pcs"] == [node] and finding["fix"]["kind"] == "warp-shuffle"
    assert finding["metrics"]["serialized_updates"] == 31 * 4096
    control, _ = uniform_reader(32, 0.5, "atomic")
    assert "atomic-contention" not in patterns_of(find_findings(control))


def test_atomics_on_mostly_distinct_addresses_are_not_told_to_aggregate():
    # GIVEN cuda-samples histogram256's bins: 32 lanes on 30 addresses a warp atomic (the paper's contention, Mode(Addr)
    # below Lane), where aggregating would save 2 updates of 32 and matching the lanes costs more
    kernel, node = uniform_reader(30, 0.0, "atomic")
    finding = only(find_findings(kernel), "atomic-contention")
    assert finding["fix"]["kind"] == "none" and finding["severity"] in ("hint", "information")
    assert "mostly distinct addresses" in finding["message"]
    # THEN 16 addresses for 32 lanes, halved by aggregation, keep the advice
    kernel, node = uniform_reader(16, 0.0, "atomic")
    assert only(find_findings(kernel), "atomic-contention")["fix"]["kind"] == "warp-shuffle"


def test_contention_of_order_dependent_atomics_is_information_without_a_fix():
    # GIVEN cuda-samples simpleAtomicIntrinsics: every lane of a warp updates one address with each intrinsic; those
    # whose lanes' results depend on the order (exchange, CAS, wrapping increment and decrement) cannot be combined
    # into one update per warp, so the aggregation advice would change the results
    header = "/usr/local/cuda/include/device_atomic_functions.hpp"
    for intrinsic, fix in (
        ("atomicExch", "none"),
        ("atomicCAS", "none"),
        ("atomicInc", "none"),
        ("atomicDec", "none"),
        ("atomicAdd", "warp-shuffle"),
        ("atomicMax_block", "warp-shuffle"),
    ):
        kernel, node = uniform_reader(1, 1 / 4096, "atomic")
        kernel["nodes"][node]["source"]["inline"] = [
            {"function": f"_INTERNAL_0d080f93_25_app_cu::{intrinsic}(int*, int)", "file": header, "line": 127}
        ]
        finding = only(find_findings(kernel), "atomic-contention")
        assert finding["fix"]["kind"] == fix, intrinsic
        assert (finding["severity"] == "warning") is (fix != "none"), intrinsic
        if fix == "none":
            assert f"{intrinsic} results depend on the order" in finding["message"]


# --- Hierarchical reuse (paper 3.3 I) and streaming (3.3 IV) ------------------------------------------------


def reuse_kernel(split: dict[str, float], executions: int = 4096) -> dict:
    k = KernelBuilder()
    k.background()
    a = k.node("global", "read", executions=executions, line=70)
    k.edge(a, 0, "cold", 0.2)
    b = k.node("global", "read", executions=executions, line=71)
    for label, fraction in split.items():
        k.edge(a, b, label, 0.8 * fraction)
        k.edge(b, a, label, fraction)
    return k.build()


def test_warp_reuse_at_addresses_that_follow_the_data_gets_no_shuffle_advice():
    # GIVEN Parboil spmv's x_vec[d_index[j]]: lanes re-read elements other lanes loaded at the previous unrolled
    # step, at column indices loaded from memory; a regular neighbour exchange (a stencil's a[i+1]) keeps the advice
    for follows in (True, False):
        kernel = reuse_kernel({"warp_diff_inst": 0.9, "grid": 0.1})
        for node in kernel["nodes"][1:]:
            if follows and (node.get("source") or {}).get("line") in (70, 71):
                node["irregular"] = node["executions"]
        finding = only(find_findings(kernel), "hierarchical-reuse-block")
        assert finding["scope"] == "warp_diff_inst"
        assert finding["fix"]["kind"] == ("none" if follows else "warp-shuffle")
        assert (finding["severity"] == "warning") is not follows
        assert ("no shuffle can pass it" in finding["message"]) is follows


def test_hierarchical_block_implant_suggests_shared_promotion():
    finding = only(find_findings(reuse_kernel({"block": 0.9, "grid": 0.1})), "hierarchical-reuse-block")
    assert finding["scope"] == "block" and finding["fix"]["kind"] == "shared-promotion"
    assert finding["metrics"]["r_block"] == pytest.approx(0.9)


def duplicated_warps_kernel(store_races: bool, self_share: float = 1.0, init_store: bool = False) -> tuple[dict, int]:
    """PolyBench mvt's `x1[i] += a[i][j] * y_1[j]` in a block of 8 warps indexed by threadIdx.x alone: every warp
    reads row i's elements at the same PC (7/8 of the reads re-read another warp's), and stores x1[i], which the
    other warps store too (WAW between warps, no barrier) when `store_races`; else a GEMM-like `b[k][j]` shared by
    the warps of a block, its results stored apart. `self_share` of the block reuse is between copies of the access.
    `init_store`: the loop's `x1[i] = 0` before it (line 114), which every warp of the block stores too."""
    k = KernelBuilder(block=(32, 8, 1))
    load = k.node("global", "read", executions=8192, line=115)
    k.edge(load, 0, "cold", 1 / 8)
    other = k.node("global", "read", executions=8192, line=116)
    k.edge(other, 0, "cold")
    k.edge(load, load, "block", 7 / 8 * self_share)
    if self_share < 1:
        k.edge(load, other, "block", 7 / 8 * (1 - self_share))
    store = k.node("global", "write", executions=8192, line=115)
    if store_races:
        k.edge(store, 0, "cold", 1 / 8)
        k.edge(store, store, "block", 7 / 8, synced=0, synced_bytes=0)
    else:
        k.edge(store, 0, "cold")
    if init_store:
        init = k.node("global", "write", executions=8192, line=114)
        k.edge(init, 0, "cold", 1 / 8)
        k.edge(init, init, "block", 7 / 8, synced=0, synced_bytes=0)
    return k.build(), load


def test_block_reuse_of_warps_repeating_one_anothers_work_gets_no_tile_advice():
    kernel, load = duplicated_warps_kernel(store_races=True)
    finding = only(find_findings(kernel), "hierarchical-reuse-block")
    assert finding["pcs"] == [load] and finding["scope"] == "block"
    assert finding["fix"]["kind"] == "none" and finding["metrics"]["duplicated_warps"] is True
    assert "the warps repeat one another's work" in finding["message"] and "app.cu:115 race" in finding["message"]
    assert "Index with every dimension of the block" in finding["fix"]["explanation"]


def test_stores_racing_between_warps_that_repeat_one_anothers_work_are_told_the_cause_not_a_barrier():
    kernel, _load = duplicated_warps_kernel(store_races=True)
    race = only(find_findings(kernel), "race-candidate")
    assert race["severity"] == "warning" and race["metrics"]["duplicated_warps"] is True
    assert race["message"].endswith("— the warps repeat one another's work: index with every dimension of the block")
    assert "__syncthreads() would only order the repeated stores" in race["fix"]["explanation"]
    # the same racing stores beside loads that read other accesses' data: a missing barrier, as before
    kernel, _load = duplicated_warps_kernel(store_races=True, self_share=0.5)
    race = only(find_findings(kernel), "race-candidate")
    assert "duplicated_warps" not in race["metrics"] and "Insert __syncthreads()" in race["fix"]["explanation"]


def test_an_initialising_store_of_warps_that_repeat_one_anothers_work_is_told_the_cause_too():
    # GIVEN ATAX's `tmp[i] = 0` before the loop: a store line with no load, racing only with copies of itself in the
    # block's other warps; the kernel's loop shows the duplication, so the store's race says so, not "add a barrier"
    for self_share in (1.0, 0.5):
        kernel, _load = duplicated_warps_kernel(store_races=True, self_share=self_share, init_store=True)
        init = next(n["id"] for n in kernel["nodes"] if (n["source"] or {}).get("line") == 114)
        races = [f for f in find_findings(kernel) if f["pattern"] == "race-candidate"]
        init_race = next(f for f in races if f["pcs"] == [init])
        if self_share == 1.0:
            assert init_race["metrics"]["duplicated_warps"] is True
            assert "at this same instruction" in init_race["fix"]["explanation"]
        else:  # no line shows the warps repeating work: the self-racing store is a missing barrier, as before
            assert "duplicated_warps" not in init_race["metrics"]
            assert "Insert __syncthreads()" in init_race["fix"]["explanation"]


def test_without_synced_counts_racing_stores_are_not_judged_and_the_tile_advice_stays():
    # a report without `synced` on block edges, with a barrier executed: the race rule judges no race, so the block
    # reuse is not called duplicated work on the strength of one either
    kernel, _load = duplicated_warps_kernel(store_races=True)
    for edge in kernel["edges"]:
        edge.pop("synced", None)
        edge.pop("synced_bytes", None)
    kernel["barriers"] = [
        {"function": kernel["mangled"], "pc": 0x400, "kind": "block", "executions": 512, "source": None}
    ]
    findings = find_findings(kernel)
    assert patterns_of(findings).count("race-candidate") == 0
    assert only(findings, "hierarchical-reuse-block")["fix"]["kind"] == "shared-promotion"


def test_the_duplicated_warps_test_costs_little_on_a_kernel_of_thousands_of_lines():
    # one index of the view's global accesses by line, made once: every draft used to sort all the kernel's nodes
    import time

    from reuselens.analyzer.patterns import hierarchical, races
    from reuselens.analyzer.patterns.view import KernelView

    k = KernelBuilder(block=(32, 8, 1))
    for line in range(1000, 4000):
        load = k.node("global", "read", executions=64, line=line)
        k.edge(load, 0, "cold", 1 / 8)
        k.edge(load, load, "block", 7 / 8)
        store = k.node("global", "write", executions=64, line=line)
        k.edge(store, 0, "cold", 1 / 8)
        k.edge(store, store, "block", 7 / 8, synced=0, synced_bytes=0)
    view = KernelView(k.kernel)
    started = time.perf_counter()
    found = races.find(view, {"delta": 0.1}) + hierarchical.find(view, {"delta": 0.1})
    assert sum(1 for d in found if d.metrics.get("duplicated_warps")) == 6000
    assert time.perf_counter() - started < 5.0  # 30 s and more before the index


def test_block_reuse_without_racing_stores_or_between_different_accesses_keeps_the_tile_advice():
    for store_races, self_share in ((False, 1.0), (True, 0.5)):
        kernel, _load = duplicated_warps_kernel(store_races, self_share)
        finding = only(find_findings(kernel), "hierarchical-reuse-block")
        assert finding["fix"]["kind"] == "shared-promotion" and "duplicated_warps" not in finding["metrics"]


def test_hierarchical_grid_implant_suggests_l2_window():
    # 4 M warp loads of 128 B, a fifth first touches: a 107 MB object, which an L2 access-policy window can help
    kernel = reuse_kernel({"grid": 0.85, "block": 0.15}, executions=4 << 20)
    finding = only(find_findings(kernel), "hierarchical-reuse-grid")
    assert finding["fix"]["kind"] == "l2-window" and finding["severity"] == "warning"


def test_hierarchical_grid_reuse_of_an_object_that_fits_in_l2_has_no_fix():
    # the same reuse over a 105 KB object (per launch): L2 already keeps it, a window adds nothing
    finding = only(find_findings(reuse_kernel({"grid": 0.85, "block": 0.15})), "hierarchical-reuse-grid")
    assert finding["fix"]["kind"] == "none" and finding["severity"] == "information"
    assert "it fits in L2, which already serves it" in finding["message"]
    # beside a stream of 128 MB in the same kernel the small object can be evicted: the window is the fix again
    kernel = reuse_kernel({"grid": 0.85, "block": 0.15})
    stream = max(n["id"] for n in kernel["nodes"]) + 1
    kernel["nodes"].append(
        {**kernel["nodes"][1], "id": stream, "pc": 0x9000, "executions": 1 << 20, "bytes": 128 << 20}
    )
    kernel["edges"].append({"from": stream, "to": 0, "label": "cold", "accesses": 32 << 20, "bytes": 128 << 20})
    finding = only(find_findings(kernel, {"minShare": 0}), "hierarchical-reuse-grid")
    assert finding["fix"]["kind"] == "l2-window"


def test_grid_reuse_that_fits_in_l2_but_is_read_many_times_over_is_told_to_tile():
    # GIVEN PolyBench gemm's untiled C += A * B: a 5 KB-a-launch object that fits in L2, whose every byte other blocks
    # read about a hundred times from L2 (reuse intensity 100): its cost is L2 bandwidth, which a tile in shared
    # memory per block cuts; a tiled kernel's operand, read a few times (intensity 10), keeps "L2 serves it"
    for cold, heavy in ((0.01, True), (0.1, False)):
        k = KernelBuilder()
        k.background()
        operand = k.node("global", "read", executions=4096, line=134)
        k.edge(operand, 0, "cold", cold)
        k.edge(operand, operand, "grid", 1 - cold)
        finding = only(find_findings(k.build()), "hierarchical-reuse-grid")
        assert finding["fix"]["kind"] == ("shared-promotion" if heavy else "none"), cold
        assert ("blocks read each byte about 100 times" in finding["message"]) is heavy
        assert ("it fits in L2, which already serves it" in finding["message"]) is not heavy


def test_a_scalar_every_block_reads_is_not_told_to_tile():
    # GIVEN SHOC BFS (UIUC)'s Frontier_copy: `if (tid < *frontier_length)`, one 4-byte word that every warp of every
    # block reads (a broadcast), reuse intensity in the thousands. Every block needs all of it: no tile reads it less
    # often. An 8 KB operand read as often keeps the tile advice.
    for footprint, tiled in ((4, False), (8192, True)):
        k = KernelBuilder()
        k.background()
        loaded = k.node("global", "read", executions=40960, line=183)  # 32 lanes of 4 bytes: 5 MiB read
        k.edge(loaded, 0, "cold", footprint / (40960 * 32 * 4))
        k.edge(loaded, loaded, "grid", 1 - footprint / (40960 * 32 * 4))
        finding = only(find_findings(k.build()), "hierarchical-reuse-grid")
        assert finding["fix"]["kind"] == ("shared-promotion" if tiled else "none"), footprint
        assert ("no tile reads less often" in finding["message"]) is not tiled, finding["message"]


def test_a_cas_loop_inside_an_apps_helper_keeps_the_aggregation_advice():
    # GIVEN atomicMaxFloat(float*, float), the app's CAS loop, inlined into the kernel: every lane on one address; a
    # warp max-reduction before the loop is the standard fix, which a bare atomicCAS in the kernel would not allow
    header = "/usr/local/cuda/include/device_atomic_functions.hpp"
    for helper, fix in ((True, "warp-shuffle"), (False, "none")):
        kernel, node = uniform_reader(1, 1 / 4096, "atomic")
        source = kernel["nodes"][node]["source"]
        frames = [{"function": "atomicCAS(int*, int, int)", "file": header, "line": 112}]
        if helper:
            frames.append({"function": "atomicMaxFloat(float*, float)", "file": "/src/atomics.cuh", "line": 9})
        frames.append({"function": "kernel(float*)", "file": source["file"], "line": source["line"]})
        source["inline"] = frames
        assert only(find_findings(kernel), "atomic-contention")["fix"]["kind"] == fix, helper


def test_what_fits_in_l2_is_judged_against_the_gpu_the_run_used():
    # GIVEN the 107 MB object of the l2-window implant beside nothing else, and Parboil histo's case: a 4 MB object
    # beside a 16 MB write-once stream, which the 2 MiB fallback called too large for any L2
    big = reuse_kernel({"grid": 0.85, "block": 0.15}, executions=4 << 20)
    histo = reuse_kernel({"grid": 0.85, "block": 0.15}, executions=160 << 10)
    stream = max(n["id"] for n in histo["nodes"]) + 1
    histo["nodes"].append({**histo["nodes"][1], "id": stream, "pc": 0x9000, "executions": 1 << 17, "bytes": 16 << 20})
    histo["edges"].append({"from": stream, "to": 0, "label": "cold", "accesses": 4 << 20, "bytes": 16 << 20})

    def grid_fix(kernel, gpu):
        (findings,) = find_report_findings([kernel], {"minShare": 0}, gpu)
        return only(findings, "hierarchical-reuse-grid")["fix"]["kind"]

    h100 = {"name": "NVIDIA H100 80GB HBM3", "l2_bytes": 50 << 20}
    assert grid_fix(histo, None) == "l2-window" and grid_fix(histo, {"name": "old run"}) == "l2-window"
    assert grid_fix(histo, h100) == "none"  # 4 + 16 MB per launch in a 50 MB L2: it stays there anyway
    assert grid_fix(histo, {"l2_bytes": 4 << 20}) == "l2-window"  # a T4's 4 MB: the window still helps
    assert grid_fix(big, h100) == "l2-window"  # 107 MB is more than an H100 keeps
    assert grid_fix(histo, {"l2_bytes": "50 MB"}) == "l2-window"  # a malformed size is no size


def test_atomics_over_more_than_a_blocks_shared_memory_are_not_told_to_privatize():
    # GIVEN atomics that blocks share (r(grid) 0.85): a histogram of 4096 warp updates of 128 B, a 105 KB object per
    # launch, and SHOC BFS (UIUC)'s atomicMin over a graph's distances, 16 times larger (1.7 MB)
    def grid_finding(executions, gpu):
        kernel = reuse_kernel({"grid": 0.85, "block": 0.15}, executions=executions)
        for node in kernel["nodes"][1:]:
            node["type"] = "atomic"
        (findings,) = find_report_findings([kernel], {"minShare": 0}, gpu)
        return only(findings, "hierarchical-reuse-grid")

    h100 = {"name": "NVIDIA H100 80GB HBM3", "arch": "sm_90", "l2_bytes": 50 << 20}
    histogram = grid_finding(4096, h100)
    assert histogram["fix"]["kind"] == "shared-promotion" and "privatize it per block" in histogram["message"]
    graph = grid_finding(4096 << 4, h100)
    assert graph["fix"]["kind"] == "none" and graph["severity"] in ("information", "hint")
    assert "more than a block's 232.4 KB of shared memory can privatize" in graph["message"]
    # where the run does not say its GPU, the 48 KB any block may have: the histogram does not fit either
    assert grid_finding(4096, None)["fix"]["kind"] == "none"
    assert grid_finding(4096, {"arch": "sm_120"})["fix"]["kind"] == "none"  # 99 KB on a consumer Blackwell


def test_atomics_a_block_updates_once_are_not_told_to_privatize():
    # GIVEN atomics that blocks share (r(grid) 0.85) over 64 blocks: a histogram's 128 warp updates per block, and
    # newdelete's containerFill, whose block pushes once (32 warp updates in all, half a warp update per block)
    def grid_finding(executions):
        kernel = reuse_kernel({"grid": 0.85, "block": 0.15}, executions=executions)
        for node in kernel["nodes"][1:]:
            node["type"] = "atomic"
        (findings,) = find_report_findings([kernel], {"minShare": 0}, {"arch": "sm_90"})
        return only(findings, "hierarchical-reuse-grid")

    histogram = grid_finding(4096)
    assert histogram["fix"]["kind"] == "shared-promotion" and "updates_per_block" not in histogram["metrics"]
    once = grid_finding(16)
    assert once["fix"]["kind"] == "none" and once["severity"] in ("information", "hint")
    assert "each block updates it about 0.5 times, which a per-block copy cannot merge" in once["message"]
    assert once["metrics"]["updates_per_block"] == pytest.approx(0.5)


def test_thread_reuse_through_a_volatile_load_is_no_register_advice():
    # GIVEN a loop re-reading one element per thread: through a plain load (registers serve it) and through a
    # volatile one (LDG.E.STRONG.SYS: a value other threads update, a polled flag), which must reach memory each time
    for strong in (False, True):
        k = KernelBuilder()
        k.background()
        load = k.node("global", "read", executions=4096, line=70)
        k.edge(load, 0, "cold", 0.1)
        k.edge(load, load, "thread", 0.9)  # the same PC, the next iteration
        kernel = k.build()
        for node in kernel["nodes"][1:]:
            if (node.get("source") or {}).get("line") == 70:
                node["strong"] = strong
        finding = only(find_findings(kernel), "hierarchical-reuse-block")
        assert finding["scope"] == "thread"
        assert finding["fix"]["kind"] == ("none" if strong else "register-promotion")
        assert ("a volatile (strong) load" in finding["message"]) is strong
        assert (finding["severity"] == "warning") is not strong


def test_hierarchical_delta_is_a_setting_and_control_has_no_dominant_scope():
    assert find_findings(reuse_kernel({"warp_diff_inst": 0.5, "grid": 0.5})) == []
    assert find_findings(reuse_kernel({"warp_diff_inst": 0.5, "block": 0.5})) == []
    findings = find_findings(reuse_kernel({"block": 0.9, "warp_diff_inst": 0.1}), {"delta": 0.95})
    assert "hierarchical-reuse-block" not in patterns_of(findings)


def test_reuse_between_warps_split_by_the_scheduler_is_one_finding_naming_both_shares():
    # GIVEN PolyBench LU's row k: read by the warps of each block and by the blocks of its column, labelled block or
    # grid by which block touched it last; neither share passes delta alone, together they do
    for split, scope in (({"block": 0.3, "grid": 0.7}, "grid"), ({"block": 0.6, "grid": 0.3, "thread": 0.1}, "block")):
        findings = find_findings(reuse_kernel(split, executions=4 << 20))
        finding = only(findings, f"hierarchical-reuse-{'grid' if scope == 'grid' else 'block'}")
        assert finding["scope"] == scope and finding["metrics"]["across_warps"] is True
        assert "from other blocks" in finding["message"] and "from other warps of the same block" in finding["message"]
        # the finding's reuse is both scopes' bytes: a tile in shared memory serves both
        kernel = reuse_kernel(split, 4 << 20)
        implant = {n["id"] for n in kernel["nodes"] if (n.get("source") or {}).get("line") in (70, 71)}
        reused = sum(e["bytes"] for e in kernel["edges"] if e["label"] in ("block", "grid") and e["from"] in implant)
        assert finding["waste"]["bytes"] == pytest.approx(reused)
    # one scope above delta keeps the paper's reading: its share alone, no across_warps
    finding = only(find_findings(reuse_kernel({"block": 0.15, "grid": 0.85})), "hierarchical-reuse-grid")
    assert "across_warps" not in finding["metrics"] and "other warps" not in finding["message"]
    # a stream whose few re-read lines split between the labels (a halo: 6% of its bytes) is no tile's
    k = KernelBuilder()
    stream = k.node("global", "read", executions=4 << 20, line=70)
    k.edge(stream, 0, "cold", 0.94)
    k.edge(stream, stream, "block", 0.03)
    k.edge(stream, stream, "grid", 0.03)
    assert not [f for f in find_findings(k.build()) if f["pattern"].startswith("hierarchical")]


def test_a_constant_candidate_on_the_line_of_another_reused_object_leaves_that_objects_finding():
    # GIVEN Tango SqueezeNet's convolution line: weights every lane of a warp reads alike (a __constant__ candidate)
    # and the input, which other blocks re-read, both with grid-dominant reuse on one source line
    k = KernelBuilder()
    weights = k.node("global", "read", executions=4096, addresses=1, sectors=1, line=9)
    k.edge(weights, 0, "cold", 1 / 4096)
    k.edge(weights, weights, "warp_same_inst", 31 / 32)
    k.edge(weights, weights, "grid", 1 - 1 / 4096 - 31 / 32)
    image = k.node("global", "read", executions=8192, line=9)
    k.edge(image, 0, "cold", 0.1)
    k.edge(image, image, "grid", 0.9)
    findings = find_findings(k.build())
    assert only(findings, "constant-region")["pcs"] == [weights]
    # THEN the input's reuse is still reported, without the weights the constant finding took
    assert only(findings, "hierarchical-reuse-grid")["pcs"] == [image]


def reused_table(k: KernelBuilder, executions: int = 8192) -> int:
    """A load whose lines another block reads once more: half first touch, half grid-scope reuse, which a stream
    could evict between the two reads (read only twice, a line waits for half the launch's new data)."""
    node = k.node("global", "read", executions=executions)
    k.edge(node, 0, "cold", 0.5)
    k.edge(node, node, "grid", 0.5)
    return node


def stream_beside_reuse(type_: str, executions: int) -> tuple[KernelBuilder, int]:
    """A kernel with the background load, reused_table's reuse to protect, and one stream on line 3."""
    k = KernelBuilder()
    k.background()
    reused_table(k)
    stream = k.node("global", type_, executions=executions, line=3)
    k.edge(stream, 0, "cold")
    return k, stream


def test_streaming_implant_and_control():
    # a stream of 4 MB a launch, beyond the 2 MB the default L2 keeps, past a load with block/grid reuse to protect
    k, _stream = stream_beside_reuse("read", 32768)
    finding = only(find_findings(k.build()), "streaming-access")
    assert finding["severity"] == "hint" or finding["severity"] == "information"
    assert finding["fix"]["kind"] == "l2-window"
    control = KernelBuilder()
    control.background()
    assert find_findings(control.build()) == []


def test_a_stream_beside_reuse_that_all_fits_in_l2_has_nothing_to_fix():
    # GIVEN cuda-samples mergeSort's rank kernel: 786 KB a launch streamed beside a little block/grid reuse, all of
    # it in the L2 (the default 2 MB, or half of the run's own L2): the stream cannot evict the reuse, and
    # evict-first would only cost the next kernel, which reads these ranks
    k, _stream = stream_beside_reuse("write", 4096)
    finding = only(find_findings(k.build()), "streaming-access")
    assert finding["fix"]["kind"] == "none"
    assert "fit in L2" in finding["message"] and "fits in the L2" in finding["fix"]["explanation"]
    # ... while on a GPU whose L2 keeps less than the kernel's data, the same stream is told to go evict-first
    kernel = k.build()
    [findings] = find_report_findings([kernel], gpu={"l2_bytes": 1 << 20})
    assert only(findings, "streaming-access")["fix"]["kind"] == "l2-window"


def test_a_stream_whose_bytes_another_access_reads_again_is_not_told_to_evict_them():
    # GIVEN PolyBench fdtd2d's hz[i][j] - hz[i - 1][j] in a kernel too large for L2: the first load touches each row
    # first, and the other load reads it again a row later; a second stream that nobody reads again
    k = KernelBuilder()
    k.background()
    first = k.node("global", "read", executions=32768, line=138)
    neighbour = k.node("global", "read", executions=32768, line=139)
    alone = k.node("global", "read", executions=32768, line=140)
    k.edge(first, 0, "cold")
    k.edge(neighbour, first, "grid")
    k.edge(alone, 0, "cold")
    findings = {f["pcs"][0]: f for f in find_findings(k.build()) if f["pattern"] == "streaming-access"}
    assert set(findings) == {first, alone}
    assert findings[first]["fix"]["kind"] == "none"
    assert findings[first]["message"].endswith("other accesses read it again at app.cu:139: keep it cached")
    assert findings[alone]["fix"]["kind"] == "l2-window"


def test_a_table_every_block_reads_stays_in_l2_beside_a_stream_without_help():
    # GIVEN SobolQRNG: a 64 KB table that every block reads (1 in 64 of its reads a first touch, the rest other blocks'),
    # while 8 MB a launch of results stream out: each table line is read again after about 190 KB of other data,
    # well within the L2, so neither a persisting window for the table nor evict-first for the stream does anything
    def sobol(table_cold: float) -> list[dict]:
        k = KernelBuilder()
        table = k.node("global", "read", executions=32768, line=82)
        k.edge(table, 0, "cold", table_cold)
        k.edge(table, table, "grid", 1 - table_cold)
        for line in (116, 154):
            out = k.node("global", "write", executions=32768, line=line)
            k.edge(out, 0, "cold")
        return find_findings(k.build())

    findings = sobol(1 / 64)
    grid = only(findings, "hierarchical-reuse-grid")
    assert grid["fix"]["kind"] == "none" and "so the L2 keeps it without a window" in grid["message"]
    streams = [f for f in findings if f["pattern"] == "streaming-access"]
    assert [f["fix"]["kind"] for f in streams] == ["none"]
    assert "read again long before it could be evicted" in streams[0]["message"]
    # THEN a 2 MB table read twice, its second read after half of the stream, is at risk: both advices stand
    findings = sobol(1 / 2)
    assert only(findings, "hierarchical-reuse-grid")["fix"]["kind"] == "l2-window"
    assert {f["fix"]["kind"] for f in findings if f["pattern"] == "streaming-access"} == {"l2-window"}


def test_a_stream_that_a_later_kernel_reads_again_is_not_told_to_evict_it():
    # GIVEN cuda-samples warpAggregatedAtomicsCG: mapToBuckets streams its 4 MB source array beside reuse to protect,
    # and the next kernel (calculateMaxInEachBuckets) reads the same array first after it (its cold edges name the
    # stream's PC as the bytes' last toucher)
    k, stream = stream_beside_reuse("read", 32768)
    streamer = k.build()
    reader = KernelBuilder("_Z6readerPKi")
    again = reader.node("global", "read", executions=32768, line=7)
    reader.edge(again, 0, "cold")
    reader_kernel = reader.build()
    node = streamer["nodes"][stream]
    cold = next(e for e in reader_kernel["edges"] if e["from"] == again)
    cold["prior_kernel"] = {"kernel": streamer["mangled"], "function": node["function"], "pc": node["pc"]}
    cold["prior_kernel"]["bytes"] = cold["bytes"]
    findings, _reader = find_report_findings([streamer, reader_kernel])
    finding = only(findings, "streaming-access")
    assert finding["fix"]["kind"] == "none" and "a later kernel" in finding["fix"]["explanation"]
    assert finding["message"].endswith("_Z6readerPKi reads it again later: keep it cached")
    # THEN a reader of another PC's bytes leaves the advice as it was
    cold["prior_kernel"]["pc"] = node["pc"] + 0x10
    findings, _reader = find_report_findings([streamer, reader_kernel])
    assert only(findings, "streaming-access")["fix"]["kind"] == "l2-window"


def test_a_stream_beside_little_reuse_is_not_told_to_protect_it():
    # GIVEN cuda-samples mergeSort's merge kernel: 64 MB a launch of streams beside a block/grid reuse of 0.4% of its
    # traffic (the background load's 6%, here under 1% of all): evicting all of it would cost less than the
    # PROTECT_SHARE a cache-streaming hint must be able to save
    k = KernelBuilder()
    k.background()
    streams = [k.node("global", "read", executions=32768, line=line) for line in (372, 373)]
    for node in streams:
        k.edge(node, 0, "cold")
    [finding] = [f for f in find_findings(k.build()) if f["pattern"] == "streaming-access"]
    assert sorted(finding["pcs"]) == streams and finding["fix"]["kind"] == "none"
    assert "small part of its global traffic" in finding["fix"]["explanation"]


def test_streaming_in_a_pure_streaming_kernel_has_nothing_to_fix():
    k = KernelBuilder()
    node = k.node("global", "read", executions=4096)
    k.edge(node, 0, "cold")
    assert only(find_findings(k.build()), "streaming-access")["fix"]["kind"] == "none"


def test_streaming_without_line_info_is_one_finding_per_direction():
    # GIVEN a library kernel without -lineinfo: three streaming loads and two streaming stores (an unrolled
    # softmax had 32 such PCs), and two streaming loads on source lines of their own, in a kernel with reuse the
    # streams could evict, beyond what L2 keeps (each line can be marked streaming)
    k = KernelBuilder()
    k.background()
    reused_table(k, executions=8192)
    loads = [k.node("global", "read", executions=8192) for _ in range(3)]
    stores = [k.node("global", "write", executions=8192) for _ in range(2)]
    lined = [k.node("global", "read", executions=8192, line=line) for line in (7, 9)]
    for node in loads + stores + lined:
        k.edge(node, 0, "cold")
    kernel = k.build()
    findings = [f for f in find_findings(kernel) if f["pattern"] == "streaming-access"]
    assert sorted(sorted(f["pcs"]) for f in findings) == [loads, stores, [lined[0]], [lined[1]]]
    reads = next(f for f in findings if sorted(f["pcs"]) == loads)
    assert reads["message"].startswith("streams: reads 3.1 MB once")  # 3 x 8192 x 128 B


def test_a_pure_stream_is_one_finding_per_direction():
    # GIVEN Parboil lbm's update: 19 distribution loads and 19 stores on lines of their own, and no reuse in the
    # kernel for them to evict: nothing to change line by line, so one finding per direction
    k = KernelBuilder()
    loads = [k.node("global", "read", executions=1024, line=34 + i) for i in range(19)]
    stores = [k.node("global", "write", executions=1024, line=142 + i) for i in range(19)]
    for node in loads + stores:
        k.edge(node, 0, "cold")
    findings = [f for f in find_findings(k.build()) if f["pattern"] == "streaming-access"]
    assert sorted(sorted(f["pcs"]) for f in findings) == [loads, stores]
    reads = next(f for f in findings if sorted(f["pcs"]) == loads)
    assert reads["fix"]["kind"] == "none" and " once over 19 lines " in reads["message"]


# --- Section 6.3: race candidates and removable barriers ---------------------------------------------------


def test_race_candidate_implant_unsynchronized_block_raw():
    kernel, w, r = shared_pair("block", synced=2048 * 8)  # 3/4 of the accesses unsynchronized
    finding = only(find_findings(kernel), "race-candidate")
    assert finding["pcs"] == [r] and finding["origin_pcs"] == [w] and finding["scope"] == "block"
    assert finding["severity"] == "warning" and finding["rank"] == 1
    assert "with no __syncthreads() in between: 49,152 unsynchronized lane accesses" in finding["message"]
    assert finding["waste"]["bytes"] == 49152 * 4


def test_race_candidate_on_an_async_copy_in_a_kernel_with_mbarriers_is_a_hint():
    # GIVEN a kernel that waits on mbarriers (cuda::barrier): a bulk copy's shared write read by another warp with
    # no __syncthreads() between may be ordered by an mbarrier wait (globalToShmemAsyncCopy's cuda::barrier
    # kernels); a plain store read the same way in the same kernel is still a race
    k = KernelBuilder()
    copied = k.node("shared", "write", executions=2048, line=10)
    k.edge(copied, 0, "cold")
    reader = k.node("shared", "read", executions=2048, line=20)
    k.edge(reader, copied, "block", synced=0, synced_bytes=0)
    plain = k.node("shared", "write", executions=2048, line=30)
    k.edge(plain, 0, "cold")
    plain_reader = k.node("shared", "read", executions=2048, line=40)
    k.edge(plain_reader, plain, "block", synced=0, synced_bytes=0)
    k.barrier(0x500, spanned=0)
    k.barrier(0x600, kind="mbarrier", executions=4096, spanned=0)
    kernel = k.build()
    kernel["nodes"][copied]["async_copy"] = True
    races = {f["pcs"][0]: f for f in find_findings(kernel) if f["pattern"] == "race-candidate"}
    assert races[reader]["severity"] == "hint" and races[reader]["metrics"]["unseen_order"] == "mbarrier"
    assert "synchronizes through mbarriers, which may order the pair" in races[reader]["message"]
    assert races[reader]["fix"]["explanation"].startswith("This kernel synchronizes through mbarriers")
    assert races[plain_reader]["severity"] == "warning" and "unseen_order" not in races[plain_reader]["metrics"]
    # without the mbarrier the copy's pair is a warning too
    kernel["barriers"] = [b for b in kernel["barriers"] if b["kind"] != "mbarrier"]
    assert only([f for f in find_findings(kernel) if f["pcs"] == [reader]], "race-candidate")["severity"] == "warning"


def test_plain_accesses_with_an_mbarrier_arrive_and_wait_between_them_are_a_hint():
    # GIVEN cuda-samples simpleAWBarrier's block reduction: thread 0 of each warp stores its partial sum, the block
    # arrives and waits on a cuda::barrier (mbarrier operations at PCs between), warp 0 reads the sums; and a plain
    # pair of the same kernel with no mbarrier operation between its two PCs
    k = KernelBuilder()
    partial = k.node("shared", "write", executions=256, line=58, pc=0x5B0)
    k.edge(partial, 0, "cold")
    sums = k.node("shared", "read", executions=256, line=67, pc=0x820)
    k.edge(sums, partial, "block", synced=0, synced_bytes=0)
    other = k.node("shared", "write", executions=256, line=80, pc=0x900)
    k.edge(other, 0, "cold")
    other_reader = k.node("shared", "read", executions=256, line=81, pc=0x980)
    k.edge(other_reader, other, "block", synced=0, synced_bytes=0)
    k.barrier(0x5C0, kind="mbarrier", executions=256, spanned=0)  # arrive
    k.barrier(0x750, kind="mbarrier", executions=256, spanned=0)  # wait
    races = {f["pcs"][0]: f for f in find_findings(k.build()) if f["pattern"] == "race-candidate"}
    assert races[sums]["severity"] == "hint" and races[sums]["metrics"]["unseen_order"] == "mbarrier"
    assert "arrive and wait between them" in races[sums]["fix"]["explanation"]
    # THEN the pair with no mbarrier operation between its PCs stays a warning
    assert races[other_reader]["severity"] == "warning" and "unseen_order" not in races[other_reader]["metrics"]


def test_race_candidate_between_sub_word_accesses_is_a_hint_but_words_stay_warnings():
    # GIVEN threads of one block accessing one byte or half-word each of a bool or unsigned short array
    # (simpleVoteIntrinsics, eigenvalues' scan tree): the 4-byte granule makes neighbouring elements one location,
    # for stores against stores and reads against stores alike; an access of 4 bytes at either end stays a warning
    for size, other_size, reader, severity in (
        (1, 1, False, "hint"),
        (2, 2, False, "hint"),
        (1, 1, True, "hint"),
        (2, 2, True, "hint"),
        (4, 4, False, "warning"),
        (4, 4, True, "warning"),
        (2, 4, True, "warning"),
    ):
        k = KernelBuilder()
        a = k.node("global", "write", executions=64, size=other_size, line=10)
        k.edge(a, 0, "cold")
        b = k.node("global", "read" if reader else "write", executions=64, size=size, line=11)
        k.edge(b, a, "block", synced=0, synced_bytes=0)
        finding = only(find_findings(k.build()), "race-candidate")
        assert finding["severity"] == severity, (size, other_size, reader)
        assert (finding["metrics"].get("unseen_order") == "sub_word") == (severity == "hint")
        if severity == "hint":
            assert "narrower than a 4-byte word" in finding["message"]


def test_removable_barrier_never_on_a_grid_sync():
    # GIVEN the bar.sync inside cooperative groups' grid_group::sync(), inlined at the user's grid.sync() line, with
    # no block-scope reuse crossing it: it orders blocks, which the profile never sees, so it is not removable
    from reuselens.analyzer.patterns.barriers import _written_by_user

    header = "/usr/local/cuda/include/cooperative_groups/details/sync.h"
    grid = {
        "kind": "block",
        "source": {
            "file": header,
            "line": 80,
            "function": "cooperative_groups::details::sync_grids(unsigned int, unsigned int*)",
            "inline": [
                {"function": "cooperative_groups::details::sync_grids(unsigned int, unsigned int*)", "file": header},
                {"function": "cooperative_groups::__v1::grid_group::sync() const", "file": header},
                {"function": "kern(float*)", "file": "/src/app.cu", "line": 12},
            ],
        },
    }
    block = {"kind": "block", "source": {"file": "/src/app.cu", "line": 9, "function": "kern(float*)"}}
    assert not _written_by_user(grid) and _written_by_user(block)
    assert not _written_by_user({**grid, "kind": "warp"})  # the WARPSYNC the grid sync also runs


def test_grid_race_candidates_ordered_by_a_grid_sync_or_inside_it_are_not_reported():
    # GIVEN reductionMultiBlockCG: a block's partial sum stored, cg::sync(grid), then block 0 reads all the partials
    # (RAW across blocks, ordered by the grid sync between them); and the sync's own arrival-counter accesses
    header = "/usr/local/cuda/include/cooperative_groups/details/sync.h"
    in_sync = {
        "file": header,
        "line": 82,
        "function": "cooperative_groups::details::sync_grids(unsigned int, unsigned int*)",
        "inline": [{"function": "cooperative_groups::__v1::grid_group::sync() const", "file": header}],
    }

    def kernel(with_sync: bool) -> dict:
        k = KernelBuilder()
        store = k.node("global", "write", executions=64, lanes=1, line=134, pc=0x100)
        k.edge(store, 0, "cold")
        load = k.node("global", "read", executions=64, lanes=1, line=140, pc=0x300)
        k.edge(load, store, "grid")
        arrive = k.node("global", "atomic", executions=64, lanes=1, line=80, pc=0x1F0)
        k.edge(arrive, 0, "cold")
        poll = k.node("global", "read", executions=64, lanes=1, line=82, pc=0x200)
        k.edge(poll, arrive, "grid")  # reads the arrival counter other blocks' atomics wrote
        if with_sync:
            k.barrier(0x210, line=136)
        built = k.build()
        for node in (arrive, poll):
            built["nodes"][node]["source"] = in_sync
        if with_sync:
            built["barriers"][-1]["source"] = in_sync
        return built, load

    unordered, load = kernel(with_sync=False)
    races = [f for f in find_findings(unordered) if f["pattern"] == "race-candidate"]
    assert [f["pcs"] for f in races] == [[load]]  # no sync: block 0's read is a candidate; the counter never is
    ordered, _load = kernel(with_sync=True)
    assert [f for f in find_findings(ordered) if f["pattern"] == "race-candidate"] == []


def test_a_warp_synchronous_sequence_is_one_race_finding():
    # GIVEN SHOC scan's `volatile` reduction tail: at each step (lines 127-131) a lane reads what another lane of
    # its warp writes in the same step, with no __syncwarp(); then a warp race 20 lines further down, and a block
    # race on the next line
    k = KernelBuilder()
    step_reads = []
    for line in (127, 128, 129, 130, 131, 151):
        write = k.node("shared", "write", executions=256, line=line)
        k.edge(write, 0, "cold")
        read = k.node("shared", "read", executions=256, line=line)
        k.edge(read, write, "warp_diff_inst", synced=0, synced_bytes=0)
        step_reads.append(read)
    block_write = k.node("shared", "write", executions=256, line=132)
    k.edge(block_write, 0, "cold")
    block_read = k.node("shared", "read", executions=256, line=133)
    k.edge(block_read, block_write, "block", synced=0, synced_bytes=0)
    races = [f for f in find_findings(k.build()) if f["pattern"] == "race-candidate"]
    assert sorted(f["pcs"] for f in races) == sorted([step_reads[:5], [step_reads[5]], [block_read]])
    (sequence,) = [f for f in races if len(f["pcs"]) == 5]
    assert sequence["scope"] == "warp_diff_inst" and sequence["metrics"]["unsynchronized_accesses"] == 5 * 256 * 32


def test_a_users_helper_taking_a_grid_group_is_not_the_grid_sync():
    # GIVEN conjugateGradientMultiBlockCG's style: a grid pair inside the user's `gpuSpMV(..., const grid_group&)`
    # (or a kernel named multi_grid_*), with no grid sync between: still a race candidate
    from reuselens.analyzer.patterns.barriers import inside_grid_sync

    for function in ("gpuSpMV(float*, cooperative_groups::__v1::grid_group const&)", "multi_grid_smooth(float*)"):
        k = KernelBuilder()
        store = k.node("global", "write", executions=64, lanes=1, line=20)
        k.edge(store, 0, "cold")
        load = k.node("global", "read", executions=64, lanes=1, line=24)
        k.edge(load, store, "grid")
        kernel = k.build()
        for node in (store, load):
            kernel["nodes"][node]["source"]["inline"] = [{"function": function, "file": "/src/app.cu", "line": 40}]
        assert not inside_grid_sync(kernel["nodes"][load]["source"])
        assert [f["pcs"] for f in find_findings(kernel) if f["pattern"] == "race-candidate"] == [[load]], function


def test_warp_races_of_another_space_or_across_another_race_are_not_one_sequence():
    # GIVEN warp races at lines 10 and 14 of one function, but the second in global memory; and warp races at lines
    # 30 and 36 with a block race at line 33 between them: four findings, no sequence
    k = KernelBuilder()
    readers = []
    for line, space, label in (
        (10, "shared", "warp_diff_inst"),
        (14, "global", "warp_diff_inst"),
        (30, "shared", "warp_diff_inst"),
        (33, "shared", "block"),
        (36, "shared", "warp_diff_inst"),
    ):
        write = k.node(space, "write", executions=256, line=line)
        k.edge(write, 0, "cold")
        read = k.node(space, "read", executions=256, line=line)
        k.edge(read, write, label, synced=0, synced_bytes=0)
        readers.append(read)
    races = [f for f in find_findings(k.build()) if f["pattern"] == "race-candidate"]
    assert sorted(f["pcs"] for f in races) == sorted([r] for r in readers)


def reused_buffer_kernel(readers: int = 3, k: KernelBuilder | None = None) -> tuple[dict, int, list[int]]:
    """Parboil tpacf's gen_hists: a shared buffer stored at the top of a loop (line 105) and read at lines 137-139,
    with no barrier at the loop's end: many stores overwrite what slower warps still read (WAR), and a few reads
    come after a faster warp's next stores (RAW). Built into `k` when given (with what it holds already)."""
    k = k or KernelBuilder()
    store = k.node("shared", "write", executions=2048, line=105)
    reads = [k.node("shared", "read", executions=2048, line=137 + i) for i in range(readers)]
    k.edge(store, 0, "cold", 1 - 0.1 * readers)
    for read in reads:
        k.edge(store, read, "block", 0.1, synced=0, synced_bytes=0)
        k.edge(read, store, "block", 0.001, synced=0, synced_bytes=0)
        k.edge(read, 0, "cold", 0.999)
    return k.build(), store, reads


def test_a_race_in_both_orders_is_one_finding():
    kernel, store, reads = reused_buffer_kernel()
    race = only(find_findings(kernel), "race-candidate")
    assert race["pcs"] == [store, *reads] and race["origin_pcs"] == reads
    assert race["severity"] == "warning" and race["message"].startswith("overwrites data another thread read (WAR)")
    assert race["metrics"]["war_accesses"] > 0 and race["metrics"]["raw_accesses"] > 0


def test_races_of_like_size_in_both_orders_stay_two_findings():
    # GIVEN `s[tid] = ...; acc += s[(tid + 1) % B];` in a loop with no barrier at all: the reads race the stores (RAW)
    # and the next stores the reads (WAR) about equally often; one barrier does not order both
    k = KernelBuilder()
    store = k.node("shared", "write", executions=2048, line=105)
    read = k.node("shared", "read", executions=2048, line=106)
    k.edge(store, 0, "cold", 0.5)
    k.edge(store, read, "block", 0.5, synced=0, synced_bytes=0)
    k.edge(read, store, "block", 0.5, synced=0, synced_bytes=0)
    k.edge(read, 0, "cold", 0.5)
    races = [f["pcs"] for f in find_findings(k.build()) if f["pattern"] == "race-candidate"]
    assert sorted(races) == [[store], [read]]


def test_races_with_different_partners_stay_apart():
    # GIVEN a reader racing a store each way, and another reader racing a store of its own: the other reader's race
    # is not the pair's reverse order
    k = KernelBuilder()
    other = k.node("shared", "write", executions=2048, line=200)
    k.edge(other, 0, "cold")
    reader = k.node("shared", "read", executions=2048, line=210)
    k.edge(reader, other, "block", synced=0, synced_bytes=0)
    kernel, store, reads = reused_buffer_kernel(readers=1, k=k)
    races = [f["pcs"] for f in find_findings(kernel) if f["pattern"] == "race-candidate"]
    assert sorted(races) == sorted([[store, *reads], [reader]])


def grid_race_with_in_block_remainder(in_block: float) -> tuple[dict, int]:
    """SHOC BFS's frontier: threads read costs that threads of other blocks write (RAW between blocks), and a share
    `in_block` of those conflicts happens to pair two threads of one block."""
    k = KernelBuilder()
    store = k.node("global", "write", executions=2048, line=72)
    k.edge(store, 0, "cold")
    read = k.node("global", "read", executions=2048, line=63)
    k.edge(read, store, "grid", 0.5 - in_block)
    k.edge(read, store, "block", in_block, synced=0, synced_bytes=0)
    k.edge(read, 0, "cold", 0.5)
    return k.build(), read


def test_a_grid_race_with_a_tiny_in_block_remainder_is_a_grid_finding():
    kernel, read = grid_race_with_in_block_remainder(0.001)
    race = only(find_findings(kernel), "race-candidate")
    assert race["pcs"] == [read] and race["scope"] == "grid" and race["severity"] == "information"
    assert "from another block" in race["message"] and "of them within one block" in race["message"]
    assert race["metrics"]["unsynchronized_block"] > 0


def test_a_grid_race_with_a_real_in_block_share_stays_a_barrier_warning():
    kernel, read = grid_race_with_in_block_remainder(0.05)
    race = only(find_findings(kernel), "race-candidate")
    assert race["scope"] == "block" and race["severity"] == "warning"
    assert "within one block" not in race["message"]


def test_race_candidate_control_synchronized():
    kernel, _w, _r = shared_pair("block", synced=2048 * 32)
    assert find_findings(kernel) == []


def test_race_candidate_without_synced_counts_uses_the_barrier_list():
    kernel, _w, r = shared_pair("block")
    for edge in kernel["edges"]:
        edge.pop("synced", None)
    assert find_findings(kernel) == []  # a __syncthreads() ran: not judged
    kernel["barriers"] = []
    findings = find_findings(kernel)
    races = [f for f in findings if f["pattern"] == "race-candidate"]
    assert sorted(f["pcs"][0] for f in races) == [r, r + 1]  # both readers of the unsynchronized buffer
    assert races[0]["message"].endswith("against app.cu:10")


def test_both_atomic_ends_are_no_race():
    kernel, _node = uniform_reader(32, 0.5, "atomic")
    for edge in kernel["edges"]:
        edge["synced"] = 0
    assert "race-candidate" not in patterns_of(find_findings(kernel))


def removable_barrier_kernel() -> KernelBuilder:
    """A shared buffer handed over by the barrier at line 15; the one at line 16 orders nothing."""
    k = KernelBuilder()
    w = k.node("shared", "write", executions=1024)
    k.edge(w, 0, "cold")
    r = k.node("shared", "read", executions=1024)
    k.edge(r, w, "block")
    k.barrier(0x300, spanned=1024, line=15)
    k.barrier(0x380, spanned=0, line=16, executions=512)
    return k


def test_removable_barrier_implant_and_control():
    findings = find_findings(removable_barrier_kernel().build())
    finding = only(findings, "removable-barrier")
    assert finding["barrier"]["pc"] == 0x380 and finding["pcs"] == []
    assert finding["fix"]["kind"] == "barrier-removal" and finding["waste"]["instructions"] == 512
    assert finding["message"].startswith("__syncthreads() at app.cu:16 executed 512 times")
    assert patterns_of(findings) == ["removable-barrier"]


def test_no_barrier_is_removable_in_a_kernel_that_executed_mbarrier_operations():
    # GIVEN the implant's barrier that orders nothing, in a kernel that also waits on an mbarrier
    # (cuda::barrier): the __syncthreads() after the mbarrier's init publishes it, which no reuse edge shows
    k = removable_barrier_kernel()
    kernel = k.build()
    assert "removable-barrier" in patterns_of(find_findings(kernel))
    k.barrier(0x400, kind="mbarrier", spanned=0, line=17)
    assert "removable-barrier" not in patterns_of(find_findings(k.build()))


def test_a_barrier_that_may_hand_over_a_write_hidden_behind_a_read_is_kept():
    """Thread 0 writes, __syncthreads, every thread reads: the shadow keeps only the last access, so when warp 0
    reads first the other warps' edges point at warp 0's read (unsynced read after read) and no edge spans the
    barrier. It must not be called removable; a barrier before the write still is."""
    k = KernelBuilder()
    w = k.node("shared", "write", executions=8, lanes=1, pc=0x100)
    k.edge(w, 0, "cold")
    r = k.node("shared", "read", executions=32, pc=0x200)
    k.edge(r, w, "thread", 1 / 1024)
    k.edge(r, r, "warp_same_inst", 31 / 1024)
    k.edge(r, r, "block", 992 / 1024, synced=0, synced_bytes=0)
    k.barrier(0x80, spanned=0, line=10)  # before the write: orders nothing
    k.barrier(0x180, spanned=0, line=12)  # between the write and the reads
    findings = [f for f in find_findings(k.build()) if f["pattern"] == "removable-barrier"]
    assert [f["barrier"]["pc"] for f in findings] == [0x80]


def test_a_warp_barrier_emitted_by_a_shuffle_is_not_the_developers_to_remove():
    k = KernelBuilder()
    w = k.node("shared", "write", executions=1024)
    k.edge(w, 0, "cold")
    header = "/usr/local/cuda/include/sm_30_intrinsics.hpp"
    for pc, intrinsic in ((0x300, "__shfl_sync(unsigned int, float, int, int)"), (0x340, "__syncwarp(unsigned int)")):
        k.barrier(pc, kind="warp", spanned=0, line=20)
        k.kernel["barriers"][-1]["source"] = {
            "file": header,
            "line": 422,
            "column": 0,
            "function": f"_INTERNAL_1::{intrinsic}",
            "inline": [
                {"function": f"_INTERNAL_1::{intrinsic}", "file": header, "line": 422},
                {"function": "kernel", "file": "/src/app.cu", "line": 20},
            ],
        }
    k.barrier(0x380, kind="warp", spanned=0)  # no line information: cannot tell whose it is
    findings = [f for f in find_findings(k.build()) if f["pattern"] == "removable-barrier"]
    assert [f["barrier"]["pc"] for f in findings] == [0x340]


def test_every_pattern_has_an_implant_here():
    implanted = {
        "redundant-rar",
        "redundant-raw",
        "redundant-waw",
        "abuse-smem",
        "bank-conflict",
        "poor-coalescing",
        "broadcasting",
        "multicasting",
        "atomic-contention",
        "constant-region",
        "hierarchical-reuse-block",
        "hierarchical-reuse-grid",
        "streaming-access",
        "race-candidate",
        "removable-barrier",
        "value-reload",
        "approx-reload",
        "silent-store",
        "zero-operands",
        "value-uniform",
    }
    assert implanted == set(PATTERNS)


def _values(k: KernelBuilder, node: int, *, zero=0, silent=0, uniform=0, spatial=0) -> None:
    """Value-mode counts on a node of `k` (docs/engine.md, "Value redundancy"), every lane with a value."""
    entry = k.kernel["nodes"][node]
    lanes = entry["lanes"][0][0] * entry["executions"]
    entry["values"] = {"lanes": lanes, "zero": zero, "silent": silent, "uniform": uniform, "spatial": spatial}


def _value_findings(k: KernelBuilder) -> list[dict]:
    patterns = {"value-reload", "approx-reload", "silent-store", "zero-operands", "value-uniform"}
    return [f for f in find_findings(k.build()) if f["pattern"] in patterns]


@pytest.mark.parametrize(
    "value_type, exact, near, fires",
    [
        ("float", 0.1, 0.8, True),  # drifts within the share: memoise within it
        ("float", 0.9, 0.05, False),  # exact repeats: value-reload's, not this rule's
        ("float", 0.1, 0.2, False),  # too few near ones
        ("int", 0.1, 0.8, False),  # an integer's small steps are no approximation
        (None, 0.1, 0.8, False),  # untyped (no SASS): nothing said
    ],
)
def test_approx_reload_only_on_floats_that_drift_within_the_share(value_type, exact, near, fires):
    # GIVEN a load whose earlier-launch edge found its value again exactly for `exact` of its loads and within 1%
    # for `near` more, in a run that counted approximate redundancy, the load typed `value_type` by its SASS
    k = KernelBuilder()
    k.background()
    k.kernel["value_approx"] = 0.01
    load = k.node("global", "read", line=30)
    accesses = 1024 * 32
    k.edge(
        load,
        0,
        "cold",
        1.0,
        prior_kernel={"kernel_function_id": 0, "function_id": 0, "pc": 0x100, "bytes": 4 * accesses},
        value_loads=accesses,
        same_value=round(exact * accesses),
        approx_value=round(near * accesses),
    )
    _values(k, load)
    if value_type:
        k.kernel["nodes"][load]["value_type"] = value_type
    findings = [f for f in _value_findings(k) if f["pattern"] == "approx-reload"]
    # THEN it is a memoisation finding that states its error bound, only for a float that drifts within the share
    assert [(f["scope"], f["fix"]["kind"]) for f in findings] == ([("prior_launch", "memoise")] if fires else [])
    if fires:
        assert findings[0]["metrics"]["error_bound"] == 0.01
        assert "within 1% of their location's last load" in findings[0]["message"]


@pytest.mark.parametrize("same, fires", [(0.9, True), (0.3, False)])
def test_value_reload_in_a_thread_is_a_register_promotion(same, fires):
    # GIVEN a reload whose thread edge brought back the value the first load returned, for `same` of its loads
    k = KernelBuilder()
    k.background()
    first = k.node("global", "read", line=10)
    again = k.node("global", "read", line=12)
    k.edge(first, 0, "cold", 1.0)
    accesses = 1024 * 32
    k.edge(again, first, "thread", 1.0, value_loads=accesses, same_value=round(same * accesses))
    _values(k, first)
    _values(k, again)
    findings = _value_findings(k)
    # THEN the reload is a finding (scope thread, a register) only when most of its loads are redundant
    assert [(f["pattern"], f["scope"], f["fix"]["kind"]) for f in findings] == (
        [("value-reload", "thread", "register-promotion")] if fires else []
    )
    if fires:
        assert findings[0]["metrics"]["by_scope"] == {"thread": 1.0}


@pytest.mark.parametrize("prior, tier", [("read", "information"), ("write", "warning")])
def test_value_reload_of_read_only_data_is_information(prior, tier):
    # GIVEN a block-scope reload whose previous access was another warp's read (nothing wrote the location: the
    # value is the same because the data is read-only, the reuse rules' matter) or another warp's store that
    # left the value as it was (news only values tell)
    k = KernelBuilder()
    k.background()
    before = k.node("global", prior, line=40)
    again = k.node("global", "read", line=42)
    accesses = 1024 * 32
    k.edge(before, 0, "cold", 1.0)
    k.edge(again, before, "block", 1.0, value_loads=accesses, same_value=accesses)
    _values(k, before)
    _values(k, again)
    (finding,) = [f for f in _value_findings(k) if f["pattern"] == "value-reload"]
    # THEN the read-only reload ranks as information and says why; the reload across a silent store is a warning
    assert finding["severity"] == tier
    assert ("read-only data" in finding["message"]) == (prior == "read")
    assert finding["metrics"]["read_only_fraction"] == (1.0 if prior == "read" else 0.0)


def test_value_reload_across_launches_names_the_earlier_launch():
    k = KernelBuilder()
    k.background()
    table = k.node("global", "read", line=20)
    accesses = 1024 * 32
    k.edge(
        table,
        0,
        "cold",
        1.0,
        prior_kernel={"kernel_function_id": 0, "function_id": 0, "pc": 0x100, "bytes": 4 * accesses},
        value_loads=accesses,
        same_value=accesses,
    )
    _values(k, table)
    (finding,) = _value_findings(k)
    assert (finding["pattern"], finding["scope"], finding["fix"]["kind"]) == (
        "value-reload",
        "prior_launch",
        "value-reuse",
    )
    assert "an earlier launch" in finding["message"]


@pytest.mark.parametrize("silent, fires", [(0.8, True), (0.1, False)])
def test_silent_store(silent, fires):
    k = KernelBuilder()
    k.background()
    flags = k.node("global", "write", line=30)
    k.edge(flags, 0, "cold", 1.0)
    _values(k, flags, silent=round(silent * 1024 * 32))
    assert [f["fix"]["kind"] for f in _value_findings(k)] == (["store-guard"] if fires else [])


@pytest.mark.parametrize("zeros, fires", [(0.9, True), (0.2, False)])
def test_zero_operands(zeros, fires):
    k = KernelBuilder()
    k.background()
    sparse = k.node("global", "read", line=40)
    k.edge(sparse, 0, "cold", 1.0)
    _values(k, sparse, zero=round(zeros * 1024 * 32))
    assert [f["pattern"] for f in _value_findings(k)] == (["zero-operands"] if fires else [])


@pytest.mark.parametrize("addresses, fires", [(32, True), (1, False)])
def test_value_uniform_needs_different_addresses(addresses, fires):
    # a broadcast of one address is the reuse rules' (broadcasting); one value from 32 addresses is this rule's
    k = KernelBuilder()
    k.background()
    replicated = k.node("global", "read", line=50, addresses=addresses)
    k.edge(replicated, 0, "cold", 1.0)
    _values(k, replicated, uniform=1024)
    assert [f["fix"]["kind"] for f in _value_findings(k)] == (["warp-broadcast"] if fires else [])


def test_no_value_finding_without_values():
    k = KernelBuilder()
    k.background()
    first = k.node("global", "read", line=10)
    again = k.node("global", "read", line=12)
    k.edge(first, 0, "cold", 1.0)
    k.edge(again, first, "thread", 1.0)
    assert _value_findings(k) == []


def test_grid_reuse_of_atomics_suggests_privatization_not_an_l2_window():
    # GIVEN a global histogram: lanes of a warp hit distinct bins, blocks keep updating the same bins
    k = KernelBuilder()
    k.background()
    bins = k.node("global", "atomic", executions=4096, line=99)
    k.edge(bins, 0, "cold", 0.05)
    k.edge(bins, bins, "grid", 0.95)
    finding = only(find_findings(k.build()), "hierarchical-reuse-grid")
    assert finding["fix"]["kind"] == "shared-promotion" and "Privatize" in finding["fix"]["explanation"]


def _contended_atomic(line: int, **decoded: bool) -> dict:
    """A kernel whose one-lane atomic at `line` every block updates (95% of its reuse from other blocks), with what
    the pipeline reads off its SASS (`returns`, `fetch_add`)."""
    k = KernelBuilder()
    k.background()
    atomic = k.node("global", "atomic", executions=4096, lanes=1, line=line)
    k.edge(atomic, 0, "cold", 0.05)
    k.edge(atomic, atomic, "grid", 0.95)
    kernel = k.build()
    kernel["nodes"][atomic].update(decoded)
    return kernel


def test_atomics_whose_old_values_are_slots_are_told_to_reserve_a_range_per_block():
    # GIVEN stream compaction's counter, `out[atomicAdd(&count, 1)] = x` (an ATOMG with a destination: `returns`):
    # a per-block copy merged at the end would hand other blocks' slots out again (warpAggregatedAtomicsCG)
    finding = only(find_findings(_contended_atomic(99, returns=True)), "hierarchical-reuse-grid")
    assert (
        "Privatize" not in finding["fix"]["explanation"] and "atomicAdd of that count" in finding["fix"]["explanation"]
    )
    assert "reserve a range per block" in finding["message"] and finding["metrics"]["returns"] is True


def test_atomics_whose_old_values_decide_but_are_no_adds_are_not_told_to_privatize_or_reserve():
    # GIVEN Parboil bfs's atomicMin(&g_cost[id], cost) whose old value the thread compares (session 56's review): an
    # ATOMG.MIN with a destination, `returns` but no `fetch_add`. An add keeps the slot advice.
    for adds in (True, False):
        finding = only(find_findings(_contended_atomic(159, returns=True, fetch_add=adds)), "hierarchical-reuse-grid")
        assert ("reserve a range per block" in finding["message"]) is adds
        assert (finding["fix"]["kind"] == "none" and "old values its atomics return" in finding["message"]) is not adds
        assert "Privatize" not in finding["fix"]["explanation"]


def test_predicted_counters_of_a_cp_async_follow_the_hardware_attribution():
    from reuselens.analyzer.patterns.finding import predicted_removal
    from reuselens.analyzer.patterns.view import KernelView

    k = KernelBuilder()
    halves = {}
    for size, pc in ((16, 0x200), (4, 0x300)):
        g = k.node("global", "read", executions=100, pc=pc, size=size)
        k.edge(g, 0, "cold")
        s = k.node("shared", "write", executions=100, pc=pc + 1, size=size)
        k.edge(s, 0, "cold")
        for node_id in (g, s):
            k.kernel["nodes"][node_id]["async_copy"] = True
        halves[size] = (g, s)
    view = KernelView(k.build())
    # LDGSTS: a global load request with its sectors; ncu counts the 16-byte form as a shared *load* instruction
    # too, the 4- and 8-byte forms not (benchmarks/fidelity.py derive()); the shared half: none
    wide, narrow = (view.nodes[halves[size][0]] for size in (16, 4))
    assert predicted_removal(wide, 1.0) == {
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": 100,
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": wide.sectors_total(),
        "smsp__inst_executed_op_shared_ld.sum": 100,
    }
    assert predicted_removal(narrow, 1.0) == {
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": 100,
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": narrow.sectors_total(),
    }
    assert all(predicted_removal(view.nodes[halves[size][1]], 1.0) == {} for size in (16, 4))


# --- Unrolled copies: one finding per source line -------------------------------------------------------------


def unrolled_conflicts(line: int | None) -> tuple[dict, list[int]]:
    """A transposed tile read unrolled four times: four PCs, one source line, each 32-way conflicting."""
    k = KernelBuilder()
    w = k.node("shared", "write", executions=4096)
    k.edge(w, 0, "cold")
    copies = []
    for _ in range(4):
        r = k.node("shared", "read", executions=1024, wavefronts=32, line=line)
        k.edge(r, w, "block")
        copies.append(r)
    k.barrier(0x900, spanned=4096)
    return k.build(), copies


def test_unrolled_copies_of_one_line_are_one_finding():
    kernel, copies = unrolled_conflicts(line=33)
    finding = only(find_findings(kernel), "bank-conflict")
    assert finding["pcs"] == copies
    assert finding["waste"]["wavefronts"] == 4 * 31 * 1024 and finding["metrics"]["R_conf"] == 32.0
    assert finding["metrics"]["predicted"] == {"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": 4 * 31 * 1024}


def test_copies_without_line_info_stay_separate():
    kernel, copies = unrolled_conflicts(line=None)
    findings = [f for f in find_findings(kernel) if f["pattern"] == "bank-conflict"]
    assert sorted(f["pcs"][0] for f in findings) == copies


def unrolled_table(copies: int) -> tuple[dict, list[int]]:
    """`table[s]` in a loop unrolled `copies` times: each PC reads its own 128 B of the table warp-uniformly."""
    k = KernelBuilder()
    k.background()
    ids = []
    for _ in range(copies):
        node = k.node("global", "read", executions=4096, addresses=1, sectors=1, line=21)
        k.edge(node, 0, "cold", 1 / 4096)
        k.edge(node, node, "warp_same_inst", 31 / 32)
        rest = 1 - 1 / 4096 - 31 / 32
        k.edge(node, node, "grid", rest)
        ids.append(node)
    return k.build(), ids


def test_unrolled_table_reads_are_one_constant_region_when_the_table_fits():
    kernel, ids = unrolled_table(4)
    finding = only(find_findings(kernel), "constant-region")
    assert finding["pcs"] == ids and finding["metrics"]["footprint_bytes"] == 4 * 128
    # the same table against a 256-byte bank: each copy's 128 B slice still fits alone, the whole table does not,
    # and __constant__ is declared for the table, not for one copy's slice: no candidate (PolyBench 2mm's A[i][k])
    regions = [f for f in find_findings(kernel, {"constantCapacityBytes": 256}) if f["pattern"] == "constant-region"]
    assert regions == []


def test_unrolled_copies_of_a_removable_barrier_are_one_finding():
    k = KernelBuilder()
    w = k.node("shared", "write", executions=1024)
    k.edge(w, 0, "cold")
    for pc in (0x300, 0x340, 0x380):
        k.barrier(pc, spanned=0, line=16, executions=256)
    k.barrier(0x3C0, spanned=0, executions=256)  # no line info: its own finding
    findings = [f for f in find_findings(k.build()) if f["pattern"] == "removable-barrier"]
    assert [f["metrics"]["barrier_pcs"] for f in findings] == [[0x300, 0x340, 0x380], [0x3C0]]
    assert findings[0]["waste"]["instructions"] == 768 and "(3 copies)" in findings[0]["message"]


def test_messages_name_the_apps_line_of_an_access_inlined_from_a_toolkit_header():
    # GIVEN a store whose line is the toolkit's atomic header, inlined at app.cu:48, read by another warp unsynced
    kernel, w, _r = shared_pair("block", synced=0)
    header = "/usr/local/cuda/targets/x86_64-linux/include/device_atomic_functions.hpp"
    kernel["nodes"][w]["source"] = {
        "file": header,
        "line": 107,
        "column": 0,
        "inline": [{"file": header, "line": 107}, {"file": "/src/app.cu", "line": 48}],
    }
    finding = only(find_findings(kernel), "race-candidate")
    assert finding["message"].endswith("against app.cu:48")


def test_a_kernel_that_launches_grids_from_the_device_gets_no_advice_that_rests_on_thread_identity():
    # GIVEN cuda-samples cdpQuadtree: its child grids' records come under the parent's launch, their thread and block
    # numbers repeating across grids (35 race warnings in session 56). A kernel calling libcudadevrt's launch keeps
    # its per-record findings; those built on which thread or block accessed become hints without a fix, saying why.
    for launches in (False, True):
        kernel = reuse_kernel({"grid": 0.85, "block": 0.15}, executions=4 << 20)
        wasteful = KernelBuilder()
        coalesced = wasteful.node("global", "read", executions=1 << 20, sectors=32, line=77)
        wasteful.edge(coalesced, 0, "cold", 1.0)
        node = dict(wasteful.kernel["nodes"][coalesced], id=len(kernel["nodes"]), pc=0x7000)
        kernel["nodes"].append(node)
        kernel["edges"].append(dict(wasteful.kernel["edges"][0], **{"from": node["id"]}))
        if launches:  # its parameter buffer's stores, one lane each: nothing to report on their own
            launch = KernelBuilder()
            store = launch.node("global", "write", executions=1, lanes=1, function="__cudaCDP2LaunchDeviceV2")
            launch.edge(store, 0, "cold", 1.0)
            kernel["nodes"].append(dict(launch.kernel["nodes"][store], id=len(kernel["nodes"]), pc=0x10))
            kernel["edges"].append(dict(launch.kernel["edges"][0], **{"from": len(kernel["nodes"]) - 1}))
        (found,) = find_report_findings([kernel], {"minShare": 0})
        grid = only(found, "hierarchical-reuse-grid")
        coalescing = only(found, "poor-coalescing")
        assert (grid["severity"] == "hint" and grid["fix"]["kind"] == "none") is launches
        assert ("launches grids from the device" in grid["message"]) is launches
        assert coalescing["fix"]["kind"] != "none" and "from the device" not in coalescing["message"]


def test_a_warp_barrier_the_compiler_placed_is_not_the_developers_to_remove():
    # GIVEN Tango AlexNet's convolution loop: ptxas's WARPSYNC.ALL where the warp reconverges, on the `for` line of a
    # file with no barrier (session 56). The pipeline marks it `compiler_inserted`; the rule then says nothing of it.
    for inserted in (False, True):
        k = KernelBuilder()
        w = k.node("shared", "write", executions=1024)
        k.edge(w, 0, "cold")
        k.barrier(0x300, kind="warp", spanned=0, line=143)
        if inserted:
            k.kernel["barriers"][-1]["compiler_inserted"] = True
        findings = [f for f in find_findings(k.build()) if f["pattern"] == "removable-barrier"]
        assert len(findings) == (0 if inserted else 1)


def self_reuse_kernel(label: str, footprint: int, *, grid: int, block: int, size: int) -> dict:
    """One global load of 8,192 executions beside the background, whose first touches are `footprint` bytes and
    whose other bytes are reuse of its own at scope `label`."""
    k = KernelBuilder(grid=(grid, 1, 1), block=(block, 1, 1))
    k.background()
    loaded = k.node("global", "read", executions=8192, size=size, line=90)
    cold = footprint / (k.kernel["nodes"][loaded]["bytes"])
    k.edge(loaded, 0, "cold", cold)
    k.edge(loaded, loaded, label, 1 - cold)
    return k.build()


def test_a_scalar_each_block_reads_is_not_told_to_go_to_shared_memory():
    # GIVEN Tango ResNet's batch norm: every warp of a block reads `mean[output]`, 8 bytes per block; L1 serves the
    # block's other warps after the first one's load. A 2 KB tile per block keeps the shared-memory advice.
    for per_block, staged in ((8, False), (2048, True)):
        kernel = self_reuse_kernel("block", per_block * 64, grid=64, block=256, size=4)  # 1 MiB of lane bytes
        finding = only(find_findings(kernel), "hierarchical-reuse-block")
        assert finding["scope"] == "block"
        assert finding["fix"]["kind"] == ("shared-promotion" if staged else "none"), per_block
        assert ("which L1 serves to the block's other warps" in finding["message"]) is not staged
        assert ("bytes_per_block" in finding["metrics"]) is not staged


def test_a_working_set_beyond_the_registers_is_not_told_to_stay_in_registers():
    # GIVEN Tango SqueezeNet's 1x1 convolutions: each thread re-reads 96 doubles of its input for every output
    # channel, 768 bytes a thread; "load it once into a register" would spill. 16 bytes a thread keep the advice.
    for per_thread, registers in ((768, False), (16, True)):
        kernel = self_reuse_kernel("thread", per_thread * 1024, grid=16, block=64, size=8)  # 2 MiB of lane bytes
        finding = only(find_findings(kernel), "hierarchical-reuse-block")
        assert finding["scope"] == "thread"
        assert finding["fix"]["kind"] == ("register-promotion" if registers else "none"), per_thread
        assert ("more than registers can hold" in finding["message"]) is not registers
        assert finding["metrics"].get("bytes_per_thread", 0) == (0 if registers else per_thread)


def local_reloads(mangled: str, pairs: list[tuple[str, str, int, int]]) -> tuple[dict, list[tuple[int, int]]]:
    """A kernel with, per (writer's function, reader's function, writer's line, reader's line), a local store and the
    same thread's load of it (8,192 executions each) beside the background; returns it and each pair's node ids."""
    k = KernelBuilder(mangled=mangled)
    k.background()
    ids = []
    for writer, reader, write_line, read_line in pairs:
        written = k.node("local", "write", executions=8192, line=write_line, function=writer)
        read = k.node("local", "read", executions=8192, line=read_line, function=reader)
        k.edge(written, 0, "cold")
        k.edge(read, written, "thread")
        ids.append((written, read))
    return k.build(), ids


def test_a_called_functions_register_restores_are_not_told_to_stay_in_registers():
    # GIVEN cuda-samples interval's recursive newton_interval_rec, not inlined: on entry it stores the callee-saved
    # registers it uses to its stack frame and loads them back before it returns (analyzer/frame_saves.py marks
    # both); beside it, a local array the same callee writes and reads back, which keeps the register advice
    callee = "$_Z6kernelPfS_i$_Z3recPfi"
    for routine, tier in (
        ("void rec(float*, int)", "warning"),
        ("__internal_0_$__cuda_sm20_div_rd_f64_v2", "information"),
    ):
        kernel, [(saves, restores), (_stored, reread)] = local_reloads(
            "_Z6kernelPfS_i", [(callee, callee, 206, 76), (callee, callee, 80, 81)]
        )
        kernel["nodes"][saves]["frame"], kernel["nodes"][restores]["frame"] = "save", "restore"
        kernel["nodes"][saves]["source"]["function"] = f"void kernel(float*, float*, int)${routine}"
        findings = {f["pcs"][0]: f for f in find_findings(kernel) if f["pattern"] == "redundant-raw"}
        frame, array = findings[restores], findings[reread]
        assert frame["fix"]["kind"] == "none" and frame["metrics"]["frame_restores"] == 1
        assert frame["severity"] == tier
        name = "rec" if tier == "warning" else "__cuda_sm20_div_rd_f64_v2"
        assert f"1 register that {name} saves on entry and restores before it returns" in frame["message"]
        assert "keep it in a register" not in frame["message"]
        assert array["fix"]["kind"] == "register-promotion" and "keep it in a register" in array["message"]


def test_loads_of_one_statement_over_three_lines_give_one_finding():
    # GIVEN Tango AlexNet's first layer: the R, G and B loads of one pixel in one statement over three lines, each
    # uncoalesced (lanes rows apart): one poor-coalescing finding, as for a statement on one line
    def kernel(statement: bool) -> dict:
        k = KernelBuilder()
        k.background()
        for line in (63, 64, 65):
            node = k.node("global", "read", executions=4096, sectors=32, line=line)
            k.edge(node, 0, "cold")
            if statement and line != 63:
                k.kernel["nodes"][node]["source"]["statement_line"] = 63
        return k.build()

    def coalescing(statement: bool) -> list[dict]:
        return [f for f in find_findings(kernel(statement)) if f["pattern"] == "poor-coalescing"]

    assert len(coalescing(False)) == 3
    (one,) = coalescing(True)
    assert len(one["pcs"]) == 3


def test_a_value_passed_through_the_stack_between_caller_and_callee_is_not_told_to_stay_in_a_register():
    # GIVEN cuda-samples newdelete's `bool pop(T &e)`, not inlined: the callee stores `e` into the caller's stack
    # frame and the caller reads it back; beside it, the caller's own local array re-read, which keeps the advice
    caller, callee = "_Z12placementNewPi", "$_Z12placementNewPi$_ZN6VectorIiE3popERi"
    kernel, [(written, read), (_stored, reread)] = local_reloads(
        caller, [(callee, caller, 96, 134), (caller, caller, 140, 141)]
    )
    kernel["nodes"][written]["source"]["function"] = "placementNew(int*)$Vector<int>::pop(int&)"
    kernel["nodes"][read]["source"]["function"] = "placementNew(int*)"
    findings = {f["pcs"][0]: f for f in find_findings(kernel) if f["pattern"] == "redundant-raw"}
    passed, array = findings[read], findings[reread]
    assert passed["fix"]["kind"] == "none" and passed["metrics"]["across_call"] is True
    assert "a value passed through the stack between placementNew and Vector<int>::pop" in passed["message"]
    assert array["fix"]["kind"] == "register-promotion" and "across_call" not in array["metrics"]


def test_blocks_of_one_warp_are_told_to_grow_before_sharing_a_tile():
    # GIVEN Tango SqueezeNet's layers, launched with 27 threads per block (one partial warp), whose weights every block
    # reads hundreds of times from L2: no other warp of the block could share a tile; 256-thread blocks keep the
    # tile advice
    for threads, small in ((27, True), (256, False)):
        k = KernelBuilder(block=(threads, 1, 1))
        k.background()
        weights = k.node("global", "read", executions=4096, line=1608)
        k.edge(weights, 0, "cold", 0.01)
        k.edge(weights, weights, "grid", 0.99)
        finding = only(find_findings(k.build()), "hierarchical-reuse-grid")
        assert finding["fix"]["kind"] == "shared-promotion"
        assert ("blocks of one warp or less share nothing" in finding["message"]) is small, threads
        assert ("give each block a larger tile in shared memory" in finding["message"]) is not small
