"""The pattern rules in the order they run, the removal of overlapping findings, and the entry points
(reexported by the package: reuselens.analyzer.patterns.find_findings and the rest)."""

from __future__ import annotations

from typing import Any, Protocol

from reuselens.analyzer.patterns import (
    abuse_smem,
    bank_conflict,
    barriers,
    coalescing,
    constant_region,
    hierarchical,
    races,
    redundant,
    streaming,
    value_redundancy,
    warp_sharing,
)
from reuselens.analyzer.patterns.finding import Draft, finalize
from reuselens.analyzer.patterns.settings import DEFAULT_SETTINGS, resolve_settings
from reuselens.analyzer.patterns.text import format_bytes, format_share

__all__ = ["find_findings", "find_report_findings", "PATTERNS", "VALUE_PATTERNS", "DEFAULT_SETTINGS", "RULES", "Rule"]
from reuselens.analyzer.patterns.view import COLD, KernelView
from reuselens.analyzer.reportview import places, short_kernel_name


class Rule(Protocol):
    """A pattern module: its ids and titles, and the rule over one kernel."""

    PATTERNS: dict[str, str]

    def find(self, view: KernelView, settings: dict[str, float]) -> list[Draft]: ...


RULES: tuple[Any, ...] = (
    redundant,
    abuse_smem,
    bank_conflict,
    coalescing,
    warp_sharing,
    constant_region,
    hierarchical,
    streaming,
    races,
    barriers,
    value_redundancy,
)

PATTERNS: dict[str, str] = {pid: title for rule in RULES for pid, title in rule.PATTERNS.items()}
CORRECTNESS_PATTERNS = frozenset(races.PATTERNS)
_REDUNDANT = ("redundant-rar", "redundant-raw", "redundant-waw")
# The patterns only a run profiled with values can show (their implants and controls: tests/gpu/value_redundancy.cu,
# not the pattern suite, which is profiled without).
VALUE_PATTERNS: frozenset[str] = frozenset(value_redundancy.PATTERNS)


# Findings that rest on which thread, warp or block an access came from (the edges' scope labels, barrier counts):
# the per-record patterns (coalescing, bank conflicts, broadcasts, contention within one warp access) and the
# first-touch ones (streaming, constant regions) do not.
_SCOPE_PATTERNS: frozenset[str] = frozenset().union(
    *(rule.PATTERNS for rule in (redundant, abuse_smem, hierarchical, races, barriers, value_redundancy))
)
# libcudadevrt's functions through which a kernel launches grids from the device (CUDA dynamic parallelism: CDP2's,
# and the legacy cudaLaunchDevice).
_DEVICE_LAUNCH_FUNCTIONS = ("__cudaCDP2LaunchDevice", "cudaLaunchDevice")
_DEVICE_LAUNCH_NOTE = (
    " (this kernel launches grids from the device: the profile counts its child grids' accesses in this launch, "
    "where their thread and block numbers repeat, so which thread or block an access came from is not known)"
)


def _launches_from_the_device(view: KernelView) -> bool:
    return any(node.function.startswith(_DEVICE_LAUNCH_FUNCTIONS) for node in view.nodes.values())


def _device_launched_grids(views: list[KernelView], findings: list[list[dict[str, Any]]]) -> None:
    """A kernel that launches grids from the device (cuda-samples cdpQuadtree, cdpSimpleQuicksort) has its children's
    records under its own launch, their thread and block numbers those of other grids: accesses of different grids'
    threads look like one thread's, and one grid's launch-ordered accesses like a race (cdpQuadtree had 35 race
    warnings, session 56's review). Its findings that rest on those identities become hints without a fix, saying
    why; the per-record ones stand."""
    for view, kernel_findings in zip(views, findings):
        if not _launches_from_the_device(view):
            continue
        for finding in kernel_findings:
            if finding["pattern"] not in _SCOPE_PATTERNS:
                continue
            finding["severity"] = "hint"
            finding["fix"] = {"kind": "none", "explanation": finding["fix"].get("explanation", "")}
            finding["message"] += _DEVICE_LAUNCH_NOTE


def _node_ids(drafts: list[Draft], *patterns: str) -> set[int]:
    return {node.id for d in drafts if d.pattern in patterns for node in d.nodes}


# A store at least this dead (redundant-waw's dead_fraction): storing once after the loop removes its sectors too.
DEAD_STORE = 0.9


def _dead_stores(drafts: list[Draft], traffic: float, min_share: float) -> set[int]:
    """The PCs of stores whose bytes are nearly all overwritten by the same thread before any read, whose finding
    is reported (its share passes minShare), with a fix that does not hinge on aliasing (with alias suspects, the
    store is dead only if the pointers do not overlap)."""
    return {
        node.id
        for d in drafts
        if d.pattern == "redundant-waw"
        and d.fix_kind != "none"
        and not d.metrics.get("alias_pcs")
        and d.metrics.get("dead_fraction", 0.0) >= DEAD_STORE
        and traffic > 0
        and d.waste_bytes / traffic >= min_share
        for node in d.nodes
    }


def _remove_overlaps(drafts: list[Draft], traffic: float, min_share: float) -> list[Draft]:
    private = _node_ids(drafts, "abuse-smem")
    constant = _node_ids(drafts, "constant-region")
    registers = _node_ids(drafts, "redundant-rar", "redundant-raw")
    dead = _dead_stores(drafts, traffic, min_share)
    # the fields of one element read or written one by one (poor-coalescing's split elements): their sub-word
    # "re-reads" and "dead stores" are the element's other bytes of one word, which the alignment advice explains
    elements = {node.id for d in drafts if "element_bytes" in d.metrics for node in d.nodes}
    kept = []
    for draft in drafts:
        ids = {node.id for node in draft.nodes}
        if draft.pattern in _REDUNDANT and draft.metrics.get("sub_word") and ids <= elements:
            continue
        # an uncoalesced store that is dead: the dead store's fix (store once) removes it, one finding says so
        # (PolyBench correlation's `symmat[j1][j2] +=` in the i loop: both a coalescing and a dead-store warning)
        if draft.pattern == "poor-coalescing" and ids <= dead:
            continue
        if draft.pattern in ("redundant-rar", "redundant-raw", "redundant-waw", "bank-conflict") and ids & private:
            continue
        if draft.pattern == "broadcasting" and ids & constant:
            continue
        # a __constant__ candidate's reuse is that finding's; the object's other PCs on the line keep theirs
        if draft.pattern in ("hierarchical-reuse-block", "hierarchical-reuse-grid") and ids & constant:
            draft = hierarchical.without(draft, constant)
            if draft is None:
                continue
        if draft.pattern == "hierarchical-reuse-block" and draft.scope == "thread":
            draft = hierarchical.without(draft, registers)
            if draft is None:
                continue
        kept.append(draft)
    return kept


# A performance warning must waste at least this share of the whole run's traffic (all kernels): a kernel's own
# share decides the severity, and a tiny kernel of a run (a scan's 2 KB inter-block step, PolyBench correlation's
# mean kernel at 0.13% of the app) got warnings next to the kernels that matter (session 46's reviews of the
# breadth set: 30 such warnings, all minor). Correctness findings (races) keep their severity.
RUN_WARNING_SHARE = 0.01
# Below this share of the run's traffic such a warning is a hint: what it could save is too small to list among the
# editor's problems (session 55's review of the breadth set: reloads "under 0.1%" of a run were noise).
RUN_HINT_SHARE = 0.001
# ... and at least this many bytes: a tiny app's 192-byte coalescing waste was 8% of its 2.3 KB run (cuda-samples
# simpleVoteIntrinsics; session 47's review), while any GPU moves 64 KiB in well under a microsecond.
MIN_WARNING_BYTES = 64 << 10
# Findings whose cost is not the bytes they move (a barrier's waits): the run's traffic does not measure them.
_WAIT_PATTERNS = frozenset({"removable-barrier"})


def _minor_in_the_run(findings: list[list[dict[str, Any]]], run_traffic: float) -> None:
    """Performance warnings below RUN_WARNING_SHARE of the run's traffic, or wasting less than MIN_WARNING_BYTES,
    become information (below RUN_HINT_SHARE, hints), saying why. Information below RUN_HINT_SHARE becomes a hint
    too: what wastes less than a warning that was demoted so is no more worth the problem list (session 56's reviews:
    some 50 small-waste findings that kept their fix at information). Removable barriers are judged by the waits
    they cost, not by bytes (barriers.py)."""
    for kernel_findings in findings:
        for finding in kernel_findings:
            if finding["pattern"] in CORRECTNESS_PATTERNS:
                continue
            if finding["severity"] == "information" and finding["pattern"] not in _WAIT_PATTERNS:
                wasted = float(finding["waste"]["bytes"])
                if run_traffic > 0 and wasted / run_traffic < RUN_HINT_SHARE:
                    finding["severity"] = "hint"
                    finding["message"] += " (a minor part of the run: under 0.1% of its traffic)"
                continue
            if finding["severity"] != "warning":
                continue
            wasted = float(finding["waste"]["bytes"])
            share = wasted / run_traffic if run_traffic > 0 else 1.0
            if share < RUN_WARNING_SHARE:
                # under a thousandth of the run, a hint: out of the editor's problem list (session 55's review)
                finding["severity"] = "hint" if share < RUN_HINT_SHARE else "information"
                part = "under 0.1%" if share < RUN_HINT_SHARE else format_share(share)
                finding["message"] += f" (a minor part of the run: {part} of its traffic)"
            elif (
                wasted < MIN_WARNING_BYTES and finding["pattern"] != "atomic-contention"
            ):  # serialized updates, not bytes
                finding["severity"] = "information"
                finding["message"] += f" (only {format_bytes(wasted)} in the whole run)"


# A reload or dead store removing fewer warp instructions than this per launch is no warning, whatever its share of
# a small kernel: a launch costs microseconds, and a few hundred L1 or shared-memory accesses spread over the SMs cost
# nanoseconds (PolyBench adi's kernel4: 32 reloads per launch over 511 launches was a warning; session 48's review,
# whose smallest correct reload warnings remove 1,139 per launch).
MIN_WARNING_INSTRUCTIONS_PER_LAUNCH = 256
# A kernel that streams at least this share of its traffic from DRAM (first touches of global memory) is bound by
# that stream: fewer shared-memory accesses do not shorten it (cuda-samples scalarProd: a shared reload of 15,360
# LDS beside 65,536 streaming LDG, 67% cold; session 48's review). Kernels whose shared reloads matter stream far
# less (SHOC stencil2d 21%, reductionMultiBlockCG 11%).
STREAMING_KERNEL_SHARE = 0.5


def _minor_in_the_kernel(views: list[KernelView], findings: list[list[dict[str, Any]]]) -> None:
    """Reload and dead-store warnings too small per launch, or on shared memory in a kernel that streams from DRAM,
    become information, saying why."""
    for view, kernel_findings in zip(views, findings):
        launches = view.launch_count()
        streamed: float | None = None
        for finding in kernel_findings:
            if finding["severity"] != "warning" or finding["pattern"] not in _REDUNDANT:
                continue
            per_launch = float(finding["waste"]["instructions"]) / launches
            if per_launch < MIN_WARNING_INSTRUCTIONS_PER_LAUNCH:
                finding["severity"] = "information"
                finding["message"] += f" (only {per_launch:,.0f} warp instructions per launch)"
                continue
            if all(view.nodes[i].space == "shared" for i in finding["pcs"]):
                if streamed is None:
                    streamed = _cold_global_share(view)
                if streamed >= STREAMING_KERNEL_SHARE:
                    finding["severity"] = "information"
                    finding["message"] += (
                        f" (the kernel streams {format_share(streamed)} of its traffic from DRAM: fewer "
                        "shared-memory accesses will not shorten it)"
                    )


def _cold_global_share(view: KernelView) -> float:
    """The share of the kernel's traffic that is global memory touched for the first time (the DRAM stream)."""
    traffic = view.traffic_bytes()
    return view.global_footprint_per_launch * view.launch_count() / traffic if traffic > 0 else 0.0


def find_report_findings(
    kernels: list[dict[str, Any]], settings: dict[str, Any] | None = None, gpu: dict[str, Any] | None = None
) -> list[list[dict]]:
    """The findings of every kernel of a report, in order. Unlike find_findings kernel by kernel, a barrier line
    that one kernel keeps is kept in all (template instantiations share their source lines), and a performance
    warning must matter to the run, not only to its kernel (RUN_WARNING_SHARE). `gpu`: the run's GPU as run.json
    describes it (its `l2_bytes`, where the collector recorded it, sizes what fits in L2; its `arch`, the shared
    memory a block can have)."""
    from reuselens.analyzer.patterns.barriers import kept_lines

    resolved = resolve_settings(settings)
    views = [KernelView(kernel) for kernel in kernels]
    pinned = frozenset(line for view in views for line in kept_lines(view))
    l2_bytes, arch = (gpu or {}).get("l2_bytes"), (gpu or {}).get("arch")
    for view in views:
        view.pinned_barrier_lines = pinned
        if isinstance(l2_bytes, int) and not isinstance(l2_bytes, bool) and l2_bytes > 0:
            view.l2_bytes = l2_bytes
        if isinstance(arch, str):
            view.gpu_arch = arch
    _read_again_later(views)
    findings = [_find(view, resolved) for view in views]
    _minor_in_the_run(findings, sum(view.traffic_bytes() for view in views))
    _device_launched_grids(views, findings)
    _minor_in_the_kernel(views, findings)
    _one_warning_per_source(views, findings)
    return findings


def _read_again_later(views: list[KernelView]) -> None:
    """Each view's `read_again_later`: the cold edges of every kernel of the run name, in `prior_kernel`, the kernel
    and PC that last touched the bytes; summed per (kernel, function, pc), with the names of the kernels that read
    them (streaming.py keeps evict-first hints off streams a later kernel reads again)."""
    names = {str(view.raw.get("mangled") or ""): short_kernel_name(view.raw) for view in views}
    later: dict[tuple[str, str, int], tuple[float, set[str]]] = {}
    for view in views:
        reader = names.get(str(view.raw.get("mangled") or ""), "")
        for edge in view.edges:
            prior = edge.raw.get("prior_kernel") if edge.label == COLD else None
            if not isinstance(prior, dict) or not isinstance(prior.get("pc"), int):
                continue
            key = (str(prior.get("kernel") or ""), str(prior.get("function") or ""), prior["pc"])
            nbytes, readers = later.setdefault(key, (0.0, set()))
            readers.add(reader)
            later[key] = (nbytes + float(prior.get("bytes") or 0), readers)
    for view in views:
        mangled = str(view.raw.get("mangled") or "")
        view.read_again_later = {
            (function, pc): (nbytes, frozenset(readers))
            for (kernel, function, pc), (nbytes, readers) in later.items()
            if kernel == mangled
        }


def _template_of(view: KernelView) -> str:
    """A kernel's short name (reportview.short_kernel_name) without its template arguments: what its instantiations
    share (`void reduce<float, 256>(float*, ...)` -> `reduce`)."""
    depth, out = 0, []
    for char in short_kernel_name(view.raw):
        depth += char == "<"
        if depth == 0:
            out.append(char)
        depth -= char == ">" and depth > 0
    return "".join(out).strip()


def _one_warning_per_source(views: list[KernelView], findings: list[list[dict[str, Any]]]) -> None:
    """Warnings of the same pattern on the same source lines in several instantiations of one kernel template
    (SHOC scan's reduce<float, 256> and reduce<double, 256>) are one edit of the source: the one that wastes most
    stays a warning, the others become information naming it (session 47's review of the breadth set). Different
    kernels that inline one helper keep theirs: each passes the helper its own arguments, as do split elements
    (poor-coalescing's `element_bytes`): their edit is the alignment of each instantiation's element type, not the
    template's lines (cuda-samples alignedTypes' packed structs)."""
    by_source: dict[tuple, list[tuple[KernelView, dict[str, Any]]]] = {}
    for view, kernel_findings in zip(views, findings):
        for finding in kernel_findings:
            if "element_bytes" in finding["metrics"]:
                continue
            lines = frozenset(places(view.raw, finding["pcs"])) if finding["severity"] == "warning" else frozenset()
            if any(place.line for place in lines):
                by_source.setdefault((_template_of(view), finding["pattern"], lines), []).append((view, finding))
    for same in by_source.values():
        kernels = {id(view) for view, _f in same}
        if len(kernels) < 2:
            continue
        same.sort(key=lambda vf: -float(vf[1]["waste"]["bytes"]))
        first_view = same[0][0]
        name = str(first_view.raw.get("name") or first_view.raw.get("mangled") or "another kernel")
        for view, finding in same[1:]:
            if view is not first_view:
                finding["severity"] = "information"
                finding["message"] += f" (the same lines as the warning in {name})"


def find_findings(kernel: dict[str, Any], settings: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The findings of one report.json kernel, ranked; raises SettingsError / ReportError on bad input."""
    return _find(KernelView(kernel), resolve_settings(settings))


def _find(view: KernelView, resolved: dict[str, Any]) -> list[dict[str, Any]]:
    drafts: list[Draft] = []
    for rule in RULES:
        drafts.extend(rule.find(view, resolved))
    return finalize(view, _remove_overlaps(drafts, view.traffic_bytes(), resolved["minShare"]), resolved["minShare"])
