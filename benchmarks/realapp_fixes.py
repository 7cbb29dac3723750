"""Fixes applied to real-application kernels (benchmarks/realapps/manifest.json) for the actionability loop.

Each fix names the app, the kernel, the findings it answers (pattern and line, as tests/realapps/answer_key.json
lists them) and how the source changes: through the language server's own quick-fix edit where one exists for
the finding's fix kind (reuselens.lsp_server.edits), else by a documented patch, a list of exact replacements
inside one function (its signature and body). A patch whose text is not found the stated number of times is
refused: the staged sources are not the ones the fix was written for.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import realapps
from program_steps import build

from reuselens.lsp_server import edits


class FixRefused(Exception):
    """The source does not match the fix; the message says where."""


@dataclass(frozen=True)
class Replacement:
    old: str
    new: str
    count: int = 1


@dataclass(frozen=True)
class Fix:
    name: str
    app: str
    file: str  # relative to the app's source tree (manifest "source")
    kernel: str  # a regex for ncu --kernel-name, reuselens --kernel-filter and the report's kernel names
    patterns: tuple[str, ...]
    lines: tuple[int, ...]  # the finding lines this fix answers (answer key)
    why: str
    scope: str | None = None  # only findings of this scope (a thread-scope accumulator, not block-scope reuse)
    lsp_edit: str | None = None  # the server's quick fix for this finding's fix kind, tried first
    function: str = ""  # the function the patch edits
    patch: tuple[Replacement, ...] = field(default_factory=tuple)
    # Which of several definitions of `function` the patch edits (alternatives under #if: SHOC's BFS keeps empty
    # stubs for builds without atomics); None: there must be exactly one.
    definition: int | None = None


FIXES = (
    Fix(
        name="transpose_padding",
        app="cs_transpose",
        file="Samples/6_Performance/transpose/transpose.cu",
        kernel="transposeCoalesced",
        patterns=("bank-conflict",),
        lines=(160,),
        why="the column read tile[threadIdx.x][threadIdx.y + i] of a 32x32 float tile is a 32-way conflict; one "
        "padding column puts the 32 elements of a column in 32 banks (what transposeNoBankConflicts does)",
        lsp_edit="padding",
        function="transposeCoalesced",
        patch=(
            Replacement("__shared__ float tile[TILE_DIM][TILE_DIM];", "__shared__ float tile[TILE_DIM][TILE_DIM + 1];"),
        ),
    ),
    Fix(
        name="transpose_copy_registers",
        app="cs_transpose",
        file="Samples/6_Performance/transpose/transpose.cu",
        kernel="copySharedMem",
        patterns=("abuse-smem",),
        lines=(106, 114),
        why="each thread reads back only the tile elements it stored itself: the shared tile becomes "
        "TILE_DIM/BLOCK_ROWS registers per thread (the loops have a constant trip count, so they unroll)",
        function="copySharedMem",
        patch=(
            Replacement("__shared__ float tile[TILE_DIM][TILE_DIM];", "float tile[TILE_DIM / BLOCK_ROWS];"),
            Replacement("tile[threadIdx.y + i][threadIdx.x]", "tile[i / BLOCK_ROWS]", count=2),
        ),
    ),
    Fix(
        name="gemm_restrict",
        app="pb_gemm",
        file="CUDA/GEMM/gemm.cu",
        kernel="gemm_kernel",
        patterns=("redundant-raw", "redundant-rar", "redundant-waw", "hierarchical-reuse-block"),
        scope="thread",
        lines=(130, 134),
        why="c[i*NJ + j] += ... in the k loop goes through global memory on every iteration because the store "
        "may alias a and b; __restrict__ on the pointers lets the compiler keep the accumulator in a register",
        function="gemm_kernel",
        patch=(
            Replacement(
                "DATA_TYPE *a, DATA_TYPE *b, DATA_TYPE *c)",
                "DATA_TYPE *__restrict__ a, DATA_TYPE *__restrict__ b, DATA_TYPE *__restrict__ c)",
            ),
        ),
    ),
)


# Fixes that answer value findings (issue 19; `reuselens profile --values`): benchmarks/value_fixes.py applies each,
# checks the output, and measures the kernel before and after with ncu (loads and stores removed, time).
VALUE_FIXES = (
    Fix(
        name="bfs_cost_in_register",
        app="shoc_bfs_uiuc",
        file="src/cuda/level1/bfs/bfs_kernel.cu",
        kernel="BFS_kernel_multi_block_spill",
        patterns=("value-reload",),
        lines=(596,),
        scope="thread",
        why="cost[node_to_process] is a volatile load, issued twice per neighbour in the edge loop, and every one "
        "returns the value the thread loaded before (value-reload, scope thread, 100%): a frontier node's cost is "
        "final during its level (other threads only lower the costs of the next level's nodes), so one load before "
        "the loop serves them all",
        function="BFS_kernel_multi_block_spill",
        definition=0,  # the kernel; the second is the stub for builds without atomics
        patch=(  # in order: the loop's two loads replaced, then the one load before the loop added
            Replacement("cost[node_to_process]+1", "next_cost", count=2),
            Replacement(
                "unsigned int next=edgeArray[node_to_process+1];",
                "unsigned int next=edgeArray[node_to_process+1];\n"
                "        const unsigned int next_cost=cost[node_to_process]+1;  // final during this level",
            ),
        ),
    ),
    Fix(
        name="radix_offsets_in_registers",
        app="shoc_sort",
        file="src/cuda/level1/sort/sort_kernel.cu",
        kernel="findRadixOffsets",
        patterns=("value-reload",),
        lines=(209, 214),
        why="after the first barrier sRadix1 is only read, and each thread reads the same four elements again in "
        "the second pass (value-reload, scopes thread and warp, 100%): four registers loaded once serve both passes",
        function="findRadixOffsets",
        patch=(
            Replacement(
                "        sStartPointers[localId] = 0;\n    }\n    __syncthreads();\n",
                "        sStartPointers[localId] = 0;\n    }\n    __syncthreads();\n"
                "    // sRadix1 is only read from here on: its four elements per thread, loaded once\n"
                "    const uint r_lo = sRadix1[localId], r_lo_prev = localId > 0 ? sRadix1[localId - 1] : 0;\n"
                "    const uint r_hi = sRadix1[localId + groupSize];\n"
                "    const uint r_hi_prev = sRadix1[localId + groupSize - 1];\n",
            ),
            Replacement("(sRadix1[localId] != sRadix1[localId - 1])", "(r_lo != r_lo_prev)", count=2),
            Replacement("sStartPointers[sRadix1[localId]] = localId;", "sStartPointers[r_lo] = localId;"),
            Replacement(
                "if(sRadix1[localId + groupSize] != sRadix1[localId + groupSize - 1])", "if(r_hi != r_hi_prev)"
            ),
            Replacement(
                "sStartPointers[sRadix1[localId + groupSize]] = localId + groupSize;",
                "sStartPointers[r_hi] = localId + groupSize;",
            ),
            Replacement(
                "if(sRadix1[localId + groupSize] != sRadix1[localId + groupSize - 1] )", "if(r_hi != r_hi_prev)"
            ),
            Replacement(
                "sStartPointers[sRadix1[localId - 1]] =\n            localId - sStartPointers[sRadix1[localId - 1]];",
                "sStartPointers[r_lo_prev] = localId - sStartPointers[r_lo_prev];",
            ),
            Replacement(
                "sStartPointers[sRadix1[localId + groupSize - 1]] =\n"
                "            localId + groupSize - sStartPointers[sRadix1[localId +\n"
                "                                                         groupSize - 1]];",
                "sStartPointers[r_hi_prev] = localId + groupSize - sStartPointers[r_hi_prev];",
            ),
        ),
    ),
    Fix(
        name="lu_guard_silent_store",
        app="pb_lu",
        file="CUDA/LU/lu.cu",
        kernel="lu_kernel2",
        patterns=("silent-store",),
        lines=(116,),
        why="97% of the trailing update's stores write the bits already there (silent-store): this LU has no "
        "pivoting, PolyBench's matrix (i*j+1)/N has rank 2, so from the third pivot on the pivots are 0 and the trailing "
        "matrix is NaN, rewritten with NaN at every pivot. The guard compares bits: a float comparison is true for "
        "NaN != NaN and would store anyway (a first guard, updated != old, removed no store: session 15, call 5)",
        function="lu_kernel2",
        patch=(
            Replacement(
                "A[i*N + j] = A[i*N + j] - A[i*N + k] * A[k*N + j];",
                "const DATA_TYPE old = A[i*N + j], updated = old - A[i*N + k] * A[k*N + j];\n"
                "\t\t// most updates leave the element's bits as they are (NaN onto NaN): compare bits, not floats\n"
                "\t\tif (__float_as_uint(updated) != __float_as_uint(old)) A[i*N + j] = updated;",
            ),
        ),
    ),
)


def function_span(text: str, name: str, definition: int | None = None) -> tuple[int, int]:
    """[start, end) of `name`'s definition (the `definition`-th of several, counted from 0): from its name before
    the parameter list to its closing brace."""
    definitions = [m for m in re.finditer(rf"\b{re.escape(name)}\s*\(", text) if _is_definition(text, m.end())]
    if definition is None and len(definitions) != 1:
        raise FixRefused(f"{len(definitions)} definitions of {name} found, expected 1")
    if definition is not None and definition >= len(definitions):
        raise FixRefused(f"{len(definitions)} definitions of {name} found, expected at least {definition + 1}")
    chosen = definitions[definition or 0]
    start = chosen.start()
    body = text.index("{", chosen.end())
    depth = 0
    for index in range(body, len(text)):
        depth += {"{": 1, "}": -1}.get(text[index], 0)
        if depth == 0:
            return start, index + 1
    raise FixRefused(f"the body of {name} does not end")


def _is_definition(text: str, after_paren: int) -> bool:
    """The parameter list is followed by a body, not by ';' (a declaration) or an operator (a call)."""
    depth = 1
    index = after_paren
    while index < len(text) and depth:
        depth += {"(": 1, ")": -1}.get(text[index], 0)
        index += 1
    rest = text[index:].lstrip()
    return rest.startswith("{")


def apply_patch(text: str, fix: Fix) -> str:
    start, end = function_span(text, fix.function, fix.definition)
    region = text[start:end]
    for replacement in fix.patch:
        found = region.count(replacement.old)
        if found != replacement.count:
            raise FixRefused(
                f"{fix.file}: {replacement.old!r} occurs {found} times in {fix.function}, expected {replacement.count}"
            )
        region = region.replace(replacement.old, replacement.new)
    return text[:start] + region + text[end:]


def _apply_edit(lines: list[str], edit: edits.Edit) -> list[str]:
    out = list(lines)
    if edit.end is None:
        del out[edit.line - 1]
    else:
        text = out[edit.line - 1]
        out[edit.line - 1] = text[: edit.start] + edit.text + text[edit.end :]
    return out


def apply_fix(text: str, fix: Fix) -> tuple[str, str]:
    """(fixed text, how: "server quick fix: <title>" or "documented patch (server: <why it offered none>)")."""
    refusal = None
    if fix.lsp_edit:
        lines = text.splitlines()
        outcome = getattr(edits, fix.lsp_edit)(lines, fix.lines[0])
        if isinstance(outcome, edits.Edit):
            fixed = "\n".join(_apply_edit(lines, outcome)) + ("\n" if text.endswith("\n") else "")
            return fixed, f"server quick fix: {outcome.title}"
        refusal = outcome
    fixed = apply_patch(text, fix)
    return fixed, "documented patch" + (f" (server quick fix not offered: {refusal})" if refusal else "")


def fix_tree(tree: Path, fix: Fix) -> str:
    """Apply the fix to the copy of the app's source tree at `tree`; returns how."""
    path = tree / fix.file
    if not path.is_file():
        raise FixRefused(f"{fix.file} is not in {tree}")
    fixed, how = apply_fix(path.read_text(), fix)
    path.write_text(fixed)
    return how


def build_original_and_fixed(manifest: dict, app: dict, fix: Fix, src: Path, out: Path) -> tuple[Path, Path, str]:
    """The app built as benchmarks/realapps.py builds it (OUT/original/APP) and a copy of its sources with the fix
    applied, built alike (OUT/fixed/APP_fixed); returns both binaries and how the fix was applied. Raises
    FixRefused or program_steps.StepError."""
    original = out / "original" / fix.app
    original.parent.mkdir(parents=True, exist_ok=True)  # build_command may write a prelude header there
    build(realapps.build_command(manifest, app, src, original), what=f"nvcc {fix.app}", cwd=original.parent)
    tree = out / "fixed" / app["source"]
    if tree.exists():
        shutil.rmtree(tree)
    shutil.copytree(src / app["source"], tree, ignore=shutil.ignore_patterns("STAGED.json"))
    how = fix_tree(tree, fix)
    fixed = out / "fixed" / f"{fix.app}_fixed"
    build(realapps.build_command(manifest, app, tree.parent, fixed), what=f"nvcc {fix.app} (fixed)", cwd=fixed.parent)
    return original, fixed, how
