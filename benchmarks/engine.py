"""Engine throughput: records/s and lane-accesses/s for 1 worker and scaling over workers, plus peak RSS.

Usage: python benchmarks/engine.py [--blocks 16384] [--workers 1,2,4,8,16] [--repeat 3] [--independent 1,4,8,16]
                                  [--pattern mix|gather|scalars|strided|shared|bitonic|gemm|gemm-pairs|fragments|fragments-swizzled|sgemm|matvec|rowwalk|stencil|transpose|bfs]
                                  [--slice DIR/NAME]
                                  [--footprint-mb 256]
                                  [--values | --handed-over] [--engine installed|PATH/_engine*.so]

--handed-over: the records as the engine queue hands them to the online engine (unpack_for_engine: a broadcast by
its one address, another record of one stride over the warp by its first and last, a barrier or exit by its header;
the other bytes hold whatever the memory held), not whole.

--values: value mode (issue 19): every memory record followed by its value companion (values from a few small
numbers, stores one in two silent), the engine in value mode; the figures count records without companions.

The trace is generated, not recorded; warps of 264 resident blocks interleaved instruction by instruction, as a
drain thread sees them. Every pattern but stencil (5) and transpose (17) has 8 instructions per warp, so --blocks N
gives about 64 N records.
  mix (default): a realistic mix per warp (coalesced global loads, a neighbour exchange, a shared-memory tile
    written, __syncthreads, read by another warp, a table shared by all blocks, 8-byte stores, a re-read).
  gather: a Monte-Carlo lookup kernel: 7 loads of 4 B per lane, each at a uniformly random index of a
    --footprint-mb table (fixed seed), then a coalesced store of the result.
  scalars: the gather's loads made warp-uniform: each warp reads 7 elements at random indices of the table with all
    its lanes (broadcasts, as a graph walk's per-vertex loads are, over data far larger than the caches).
  strided: a column walk (PolyBench mvt/gemm): lane gid reads A[gid * n + j] of a row-major n x n float matrix
    of --footprint-mb, for j = 0, 1, ...: the 32 lanes of a warp touch 32 rows, 4 n bytes apart.
  shared: a bitonic sort of 512 keys in shared memory per block of 256 threads (cuda-samples sortingNetworks,
    mergeSort): per compare-exchange step of stride j a barrier, loads of s[tid] and s[tid ^ j], stores of both,
    by the threads whose bit j is clear (half of each warp for j < 32, every other warp beyond); 45 steps, and
    --blocks scaled down so that the trace still holds about 64 * --blocks records.
  bitonic: cuda-samples' bitonicSortShared as it runs (bitonic_launch): 512 threads, keys and values in two
    4 KiB shared arrays, random keys (only out-of-order pairs swap), 528 blocks resident with their records
    shuffled as a drain delivers them, block exits; about 64 * --blocks records (--blocks 131072: one launch of
    about 1100 blocks, as sortingNetworks' 1 M-key launches). Issue 14: the per-record cost of the block step
    grows with the shadow of the resident blocks (32 KiB each) once they are interleaved.
  transpose: cuda-samples transposeNoBankConflicts (17 instructions per warp, --blocks scaled to about 64 N
    records): rows loaded and stored into a padded shared tile, a barrier, its columns (lanes 33 words apart) read
    and stored; the column reads' distributions have a closed form since session 27.
  stencil: a 2-D stencil sweep as PolyBench's fdtd2d and jacobi run it: per thread, 4-byte coalesced loads of
    its element, the one a row below and the one to its right (a[tid + 1]: the last lane's neighbour belongs to the
    next warp), then a load and a store of the output element.
  matvec: a matrix-vector product as PolyBench's mvt (its second kernel), gesummv and atax run it: thread i of
    4096 sums A[j][i] * y[j] over j, so each step is a coalesced load of a row segment and a load of y[j] that
    every lane and every warp of the grid reads (a broadcast: all those records meet in one granule).
  rowwalk: PolyBench mvt's first kernel: thread i of 4096 sums A[i][j] * y[j] over j, so each step's load of A
    has its lanes a row (16 KiB) apart, one sector and one shadow page each, and each worker of the chunk-owner
    split gets a share of nearly every such record; then the broadcast of y[j]. (strided with --footprint-mb 64
    walks the same rows without the broadcasts.)
  bfs: SHOC BFS's warp-centric kernel over a tree: per warp 32 consecutive vertices, each one's level loaded by
    every lane (a broadcast), and for one in eight its edge bounds (broadcasts), 4 neighbour ids and the neighbours'
    levels, loaded and stored (4 lanes, scattered); 77% broadcasts here, 97% in SHOC BFS on the H200.
  gemm: a SIMT SGEMM (cuBLAS's and CUTLASS's FFMA kernels, the GEMMs of a PyTorch training loop): 64 x 64 tiles
    of C, 8-byte loads of A and B staged in shared memory, and 16-byte fragment loads from it that groups of 8
    and 4 lanes share.
  gemm-pairs: the same with warps of 16 x 2 threads: each A fragment read by a pair of lanes (16 footprints per
    record, as the 64 x 64-tile cuBLAS SGEMM of the PyTorch loop reads a third of its fragments), B's by 16 lanes.
  fragments: a 4 KiB shared tile per block that 4-byte asynchronous copies of its eight warps write (each warp 512
    bytes), a barrier, then read back as 16-byte fragments, each lane its own, consecutive (each warp the whole
    tile), a barrier, over and over: so every fragment load finds its words written by four issues of another warp,
    as the 64 x 64-tile cuBLAS SGEMM's fragment loads with 32 distinct addresses do (two thirds of them in the
    PyTorch loop, tests/data/library_runs/pytorch).
  fragments-swizzled: the same with the fragments of each 512-byte row in another order per load (lane ^ (k + 1),
    as swizzled shared layouts read them): disjoint footprints, not consecutive lanes.
  sgemm: recorded, not generated: the slice of PyTorch's cuBLAS SGEMM launch kept in tests/data/real_launches
    (sm80_xmma, 32 x 32 tiles, 64 threads a block: cp.async tile loads into a padded shared tile, 16-byte
    fragments that lanes share in groups of four, C stores, barriers), copied as --slice does; its 1,024 blocks
    were all resident on the H200 (about 940 distinct blocks in every 4,096 records). A PyTorch training step's
    records are 95% cuBLAS SGEMMs, but this 32 x 32 kernel is 3% of them: its two heaviest SGEMMs (89%) are the
    slices tests/data/real_launches/pytorch_xmma_sgemm_64x64_tn and pytorch_cutlass_sgemm_256x128_nt, which
    --slice takes.
--slice DIR/NAME: any launch slice (benchmarks/launch_slice.py): its blocks copied as blocks of one grid of about
  64 * --blocks records, as many at a time as interleaved in the recorded launch, their records interleaved one by
  one; every copy reads the slice's global addresses, moved into the benchmark's allocations. So the copies share
  their global data: the global step of a global-heavy slice (fdtd2d, SHOC BFS) finds its shadow in the caches, unlike
  the launch's; measure that step on recorded launches (benchmarks/replay_speed.py). And at several workers all
  copies' global records go to the few owners of the slice's chunks: on sgemm at 12 workers the global step's
  slowest worker took 33.5 ms against a mean near 5 (H200, session 32, call 3), so the speed-up at several workers
  on a slice understates a real launch's, whose blocks read other tiles.
Targets (issue 7): >= 50 M lane-accesses/s per worker; speed-up >= 0.85 N at N workers. Issue 14: the same
per worker on gather and strided with a footprint of at least 256 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import threading
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # numpy's BLAS threads would compete with the workers
import numpy as np  # noqa: E402

from reuselens.analyzer.replay import RECORD_DTYPE  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from engine_module import engine_module  # noqa: E402
from record_shapes import one_stride  # noqa: E402

A, B, C = 0x7F0000000000, 0x7F1000000000, 0x7F2000000000
WARPS = 8
RESIDENT = 264  # resident blocks: 132 SMs x 2, as on an H200


def program(gid: np.ndarray, tid: np.ndarray) -> list[tuple[int, int, int, int, np.ndarray]]:
    """(pc, type/space code, access, size, per-lane addresses) for one warp's instruction stream."""
    return [
        (0x10, 1, 1, 4, A + 4 * gid),
        (0x20, 1, 1, 4, A + 4 * (gid ^ 1)),
        (0x30, 2, 2, 4, 4 * tid),
        (0x38, 9, 0, 0, np.zeros_like(gid)),  # __syncthreads
        (0x40, 2, 1, 4, 4 * ((tid + 32) % (32 * WARPS))),
        (0x50, 1, 1, 4, B + 4 * (gid % 4096)),
        (0x60, 1, 2, 8, C + 8 * gid),
        (0x70, 1, 1, 4, A + 4 * gid),
    ]


STENCIL_ROW = 1024  # elements per row of the stencil pattern


def stencil_program(gid: np.ndarray, tid: np.ndarray) -> list[tuple[int, int, int, int, np.ndarray]]:
    here = A + 4 * gid
    return [
        (0x10, 1, 1, 4, here),
        (0x20, 1, 1, 4, here + 4 * STENCIL_ROW),
        (0x30, 1, 1, 4, here + 4),
        (0x40, 1, 1, 4, B + 4 * gid),
        (0x50, 1, 2, 4, B + 4 * gid),
    ]


TRANSPOSE_ROW = 1024  # floats per row of the transpose pattern's matrix


def transpose_program(gid: np.ndarray, tid: np.ndarray) -> list[tuple[int, int, int, int, np.ndarray]]:
    """cuda-samples transposeNoBankConflicts, one 32 x 32 tile per block of 32 x 8 threads: four rows per thread
    loaded (coalesced) and stored into tile[33][32] by row, a barrier, four column elements read out of the tile
    (tile[tx][ty + j]: lanes 33 words apart) and stored (coalesced) to the transposed tile."""
    tile = (gid // (32 * WARPS)) * 32  # the block's first column in the matrix's first row of tiles
    tx, ty = tid % 32, tid // 32
    rows = [ty + 8 * j for j in range(4)]
    return [
        *[(0x10, 1, 1, 4, A + 4 * (r * TRANSPOSE_ROW + tile + tx)) for r in rows],
        *[(0x20, 2, 2, 4, 4 * (r * 33 + tx)) for r in rows],
        (0x30, 9, 0, 0, np.zeros_like(gid)),  # __syncthreads
        *[(0x40, 2, 1, 4, 4 * (tx * 33 + r)) for r in rows],
        *[(0x50, 1, 2, 4, B + 4 * (r * TRANSPOSE_ROW + tile + tx)) for r in rows],
    ]


PATTERNS = (
    "slice",
    "mix",
    "gather",
    "scalars",
    "strided",
    "shared",
    "bitonic",
    "gemm",
    "gemm-pairs",
    "fragments",
    "fragments-swizzled",
    "sgemm",
    "matvec",
    "rowwalk",
    "stencil",
    "transpose",
    "bfs",
)
TABLE_PATTERNS = ("gather", "scalars", "strided")  # whose footprint --footprint-mb sets
GATHER_LOOKUPS = 7


def gather_program(footprint: int, rng: np.random.Generator, per_warp: bool = False):
    """Monte-Carlo lookups: random 4-byte loads from a `footprint`-byte table at A, the result stored to B. per_warp
    (the scalars pattern): each load at one random index per warp, every lane on it."""

    def indices(gid: np.ndarray) -> np.ndarray:
        if not per_warp:
            return rng.integers(0, footprint // 4, size=gid.shape)
        return np.broadcast_to(rng.integers(0, footprint // 4, size=gid.shape[:-1])[..., None], gid.shape)

    def warp_program(gid: np.ndarray, tid: np.ndarray) -> list[tuple[int, int, int, int, np.ndarray]]:
        loads = [(0x10, 1, 1, 4, A + 4 * indices(gid)) for _ in range(GATHER_LOOKUPS)]
        return [*loads, (0x20, 1, 2, 4, B + 4 * gid)]

    return warp_program


def strided_rows(footprint: int) -> int:
    """n of the n x n float matrix that fills `footprint` bytes, a multiple of 32 (whole warps of rows)."""
    return max(32, int((footprint // 4) ** 0.5) // 32 * 32)


def thread_ids(b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(tid, gid): (block, warp, lane) grids of the thread index in its block and in the grid, for blocks `b` of
    8 warps."""
    tid = (np.arange(WARPS)[None, :, None] * 32 + np.arange(32)[None, None, :]).repeat(len(b), 0)
    return tid, b[:, None, None] * 32 * WARPS + tid


def mix_records(blocks: int, program) -> np.ndarray:
    """`program(gid, tid)` for every warp of `blocks` blocks of 8 warps, 264 blocks resident at a time."""
    out = []
    for wave in range(0, blocks, RESIDENT):
        b = np.arange(wave, min(blocks, wave + RESIDENT))
        tid, gid = thread_ids(b)  # warps interleaved per instruction
        for pc, code, access, size, addr in program(gid, tid):
            out.append(records(b, code, access, size, pc, addr))
    return np.concatenate(out)


def records(b: np.ndarray, code: int, access: int, size: int, pc: int, addr: np.ndarray) -> np.ndarray:
    """One instruction issued by every warp of blocks `b`; `addr` holds (blocks, warps, 32) lane addresses."""
    r = np.zeros(len(b) * WARPS, dtype=RECORD_DTYPE)
    r["type"], r["space"] = (2, 1) if code == 9 else (1, code)
    r["access"], r["size"], r["pc"] = access, size, pc
    r["warp"] = np.tile(np.arange(WARPS), len(b))
    r["block"] = b.repeat(WARPS)
    r["active_mask"] = 0xFFFFFFFF
    r["addr"] = addr.reshape(-1, 32)
    return r


def strided_records(blocks: int, footprint: int) -> np.ndarray:
    """One thread per row of the n x n matrix (n / 256 blocks, all resident); the loop over columns j runs
    as long as it takes to give about 64 * `blocks` records (at most n columns)."""
    n = strided_rows(footprint)
    b = np.arange((n + 32 * WARPS - 1) // (32 * WARPS))
    tid, gid = thread_ids(b)
    row = np.minimum(gid, n - 1)  # a partial last block repeats the last row rather than leave the matrix
    columns = max(1, min(n, 64 * blocks // (len(b) * WARPS)))
    return np.concatenate([records(b, 1, 1, 4, 0x10, A + 4 * (row * n + j)) for j in range(columns)])


SORTED_KEYS = 512  # per block: two keys per thread of a 256-thread block, as sortingNetworks' shared stage


def bitonic_strides(keys: int = SORTED_KEYS) -> list[int]:
    """The compare-exchange strides of a bitonic sorting network over `keys` keys, in execution order."""
    strides, size = [], 2
    while size <= keys:
        stride = size // 2
        while stride:
            strides.append(stride)
            stride //= 2
        size *= 2
    return strides


def shared_records(blocks: int) -> np.ndarray:
    """Bitonic compare-exchange steps in shared memory, warps of 264 resident blocks interleaved per instruction.
    A warp whose threads are all idle in a step issues only the barrier (the GPU records no instruction for it)."""
    strides = bitonic_strides()
    per_warp = len(strides) * 5  # upper bound: barrier, two loads, two stores per step
    blocks = max(1, 64 * blocks // (WARPS * per_warp))
    lane = np.arange(32)
    out = []
    for wave in range(0, blocks, RESIDENT):
        b = np.arange(wave, min(blocks, wave + RESIDENT))
        tid, _ = thread_ids(b)
        for j in strides:
            active = (tid & j) == 0
            mask = (active.astype(np.uint64) << lane.astype(np.uint64)).sum(axis=2).reshape(-1).astype(np.uint32)
            issuing = mask != 0
            out.append(records(b, 9, 0, 0, 0x10, np.zeros_like(tid)))  # __syncthreads at the top of the step
            for pc, access, key in ((0x20, 1, tid), (0x30, 1, tid ^ j), (0x40, 2, tid), (0x50, 2, tid ^ j)):
                r = records(b, 2, access, 4, pc, 4 * key)
                r["active_mask"] = mask
                out.append(r[issuing])
    return np.concatenate(out)


BFS_CHUNK, BFS_DEGREE = 32, 4  # vertices per warp, neighbours per vertex


def bfs_records(blocks: int) -> np.ndarray:
    """SHOC BFS's warp-centric kernel (BFS_kernel_warp, its default algorithm) over a tree: each warp takes 32
    consecutive vertices v and, one after another, loads levels[v] with every lane (a broadcast); for the one vertex
    in eight on the frontier it loads edgeArray[v] and edgeArray[v + 1] (broadcasts), its 4 neighbours' ids (lanes
    0-3, consecutive) and their levels (lanes 0-3, scattered over the whole levels array), and stores those levels.
    Warps of 264 resident blocks interleaved per instruction, as a drain sees them; about 64 * `blocks` records
    (SHOC BFS on the H200: 97% of its records are broadcasts, session 24's record_shapes.py)."""
    rng = np.random.default_rng(28)
    per_warp = BFS_CHUNK + BFS_CHUNK // 8 * 5  # records a warp issues
    grid = (max(1, 64 * blocks // per_warp) + WARPS - 1) // WARPS  # whole blocks of 8 warps
    vertices = grid * WARPS * BFS_CHUNK
    lane = np.arange(32)
    out = []
    for wave in range(0, grid, RESIDENT):
        b = np.arange(wave, min(grid, wave + RESIDENT))
        first = (b[:, None] * WARPS + np.arange(WARPS)[None, :]) * BFS_CHUNK  # each warp's first vertex
        for j in range(BFS_CHUNK):
            v = first + j
            out.append(records(b, 1, 1, 4, 0x10, np.broadcast_to((A + 4 * v)[..., None], (*v.shape, 32))))
            if j % 8:
                continue  # not on the frontier
            out.append(records(b, 1, 1, 4, 0x20, np.broadcast_to((B + 4 * v)[..., None], (*v.shape, 32))))
            out.append(records(b, 1, 1, 4, 0x30, np.broadcast_to((B + 4 * v + 4)[..., None], (*v.shape, 32))))
            ids = records(b, 1, 1, 4, 0x40, C + 4 * (BFS_DEGREE * v[..., None] + lane))
            neighbours = rng.integers(0, vertices, size=(*v.shape, 32))
            loads = records(b, 1, 1, 4, 0x50, A + 4 * neighbours)
            stores = records(b, 1, 2, 4, 0x60, A + 4 * neighbours)
            for r in (ids, loads, stores):
                r["active_mask"] = (1 << BFS_DEGREE) - 1
                r["addr"][:, BFS_DEGREE:] = 0
            out += [ids, loads, stores]
    return np.concatenate(out)


GEMM_TILE, GEMM_STEP, GEMM_K = 64, 8, 256  # C tile per block, k per step, the inner dimension
GEMM_RECORDS_PER_BLOCK = WARPS * (GEMM_K // GEMM_STEP * (6 + 2 * GEMM_STEP) + 4)


MATVEC_N = 4096


def matvec_records(blocks: int, by_rows: bool = False) -> np.ndarray:
    """Thread i of MATVEC_N (blocks of 256, all resident) walks j: a load of the matrix, then a broadcast load of
    y[j]; every warp issues step j before any issues step j + 1, as a drain sees resident warps. The matrix load is
    A[j * n + i], coalesced, or with `by_rows` (the rowwalk pattern, PolyBench mvt's first kernel: thread i walks row
    i) A[i * n + j], the lanes a row apart, each on a shadow page of its own. As many steps as give about
    64 * `blocks` records."""
    n = MATVEC_N
    b = np.arange(n // (32 * WARPS))
    tid, gid = thread_ids(b)
    steps = max(1, min(n, 64 * blocks // (2 * len(b) * WARPS)))
    out = []
    for j in range(steps):
        element = gid * n + j if by_rows else j * n + gid
        out.append(records(b, 1, 1, 4, 0x10, A + 4 * element))
        out.append(records(b, 1, 1, 4, 0x20, B + 4 * j + 0 * gid))
    return np.concatenate(out)


def gemm_records(blocks: int, pairs: bool = False) -> np.ndarray:
    """A SIMT SGEMM as cuBLAS's and CUTLASS's FFMA kernels run it, 256 threads per 64 x 64 tile of C: per step of
    8 along k, each thread loads 8 bytes of A's and of B's tile, stores them to shared memory, a barrier, then for
    each k the 4 x 4 piece of C it computes takes a 16-byte fragment of A and of B from shared memory, shared by the
    lanes of its row and its column (a warp is 4 x 8 threads: 4 A fragments read by 8 lanes each, 8 B fragments by
    4), a barrier; at the end each thread stores its piece of C. `pairs` (the gemm-pairs pattern): a warp is 16 x 2
    threads, so that each A fragment is read by two lanes, as 16-byte fragment loads with 16 distinct addresses are
    in the 64 x 64-tile cuBLAS SGEMM of the PyTorch loop (tests/data/library_runs/pytorch), and the B fragments by
    sixteen. Warps of 264 resident blocks interleaved per instruction; about 64 * `blocks` records."""
    tiles = max(1, 64 * blocks // GEMM_RECORDS_PER_BLOCK)
    gx = 8  # N = 512
    n, k_dim = GEMM_TILE * gx, GEMM_K
    lane = np.arange(32)
    out = []
    for wave in range(0, tiles, RESIDENT):
        b = np.arange(wave, min(tiles, wave + RESIDENT))
        bx, by = (b % gx)[:, None, None], (b // gx)[:, None, None]
        warp = np.arange(WARPS)[None, :, None]
        tid = (warp * 32 + lane[None, None, :]).repeat(len(b), 0)
        if pairs:
            ty = lane // 2 + 0 * tid
            tx = 2 * warp + lane % 2 + 0 * tid
        else:
            ty = 4 * (warp // 2) + lane // 8 + 0 * tid  # the thread's row and column of 4 x 4 pieces
            tx = 8 * (warp % 2) + lane % 8 + 0 * tid
        s_a, s_b = 0, 4 * GEMM_TILE * GEMM_STEP  # the two shared tiles, k-major
        for k0 in range(0, k_dim, GEMM_STEP):
            a = A + 4 * ((by * GEMM_TILE + tid // 4) * k_dim + k0 + 2 * (tid % 4))
            bb = B + 4 * ((k0 + tid // 32) * n + bx * GEMM_TILE + 2 * (tid % 32))
            out += [records(b, 1, 1, 8, 0x10, a), records(b, 1, 1, 8, 0x20, bb)]
            out += [records(b, 2, 2, 8, 0x30, s_a + 8 * tid), records(b, 2, 2, 8, 0x40, s_b + 8 * tid)]
            out.append(records(b, 9, 0, 0, 0x50, np.zeros_like(tid)))
            for kk in range(GEMM_STEP):
                out.append(records(b, 2, 1, 16, 0x60, s_a + 4 * (kk * GEMM_TILE + 4 * ty)))
                out.append(records(b, 2, 1, 16, 0x70, s_b + 4 * (kk * GEMM_TILE + 4 * tx)))
            out.append(records(b, 9, 0, 0, 0x80, np.zeros_like(tid)))
        for i in range(4):
            c = C + 4 * ((by * GEMM_TILE + 4 * ty + i) * n + bx * GEMM_TILE + 4 * tx)
            out.append(records(b, 1, 2, 16, 0x90 + 0x10 * i, c))
    return np.concatenate(out)


FRAGMENT_RECORDS_PER_BLOCK = WARPS * (4 + 1 + 8 + 1)  # per pass: 4 copies, a barrier, 8 fragment loads, a barrier


def fragment_records(blocks: int, swizzled: bool = False) -> np.ndarray:
    """The fragments patterns: RESIDENT blocks, as many passes as give about 64 * `blocks` records."""
    b = np.arange(RESIDENT)
    lane = np.arange(32)[None, None, :]
    warp = np.arange(WARPS)[None, :, None]
    shape = (len(b), WARPS, 32)
    none = np.zeros(shape, dtype=np.int64)
    out = []
    for _ in range(max(1, 64 * blocks // (FRAGMENT_RECORDS_PER_BLOCK * RESIDENT))):
        for j in range(4):
            out.append(records(b, 2, 2, 4, 0x10 + 0x10 * j, np.broadcast_to(4 * (lane + 32 * (4 * warp + j)), shape)))
        out.append(records(b, 9, 0, 0, 0x50, none))
        for k in range(8):
            slot = lane ^ (k + 1) if swizzled else lane
            out.append(records(b, 2, 1, 16, 0x60 + 0x10 * k, np.broadcast_to(16 * slot + 512 * k + 0 * warp, shape)))
        out.append(records(b, 9, 0, 0, 0xE0, none))
    return np.concatenate(out)


REAL_LAUNCHES = Path(__file__).resolve().parents[1] / "tests" / "data" / "real_launches"
SGEMM_SLICE = REAL_LAUNCHES / "cublas_sgemm_32x32_nn"
MAX_RESIDENT = 1024  # a slice that does not say how many blocks interleaved: its grid, up to this many
HUGE = 2 << 20


def slice_meta(path: Path) -> dict:
    """A slice's description (NAME.json), checked for its format."""
    meta = json.loads(Path(f"{path}.json").read_text())
    if (meta.get("format"), meta.get("version")) != ("reuselens-real-launch-slice", 1):
        raise SystemExit(f"{path}.json: not a launch slice of version 1")
    return meta


def launch_slice(path: Path) -> tuple[dict, np.ndarray]:
    """A recorded slice (tests/data/real_launches/README.md; benchmarks/launch_slice.py writes them) and its records,
    their global addresses moved into A's gigabyte: the allocations the slice touches laid out one after another, each
    at its offset within 2 MiB, so that lanes fall on shadow pages and 1 KiB chunks as they did."""
    import zstandard  # a test dependency, as slices are test data

    meta = slice_meta(path)
    raw = zstandard.ZstdDecompressor().decompress(Path(f"{path}.records.zst").read_bytes())
    recs = np.frombuffer(raw, dtype=RECORD_DTYPE).copy()
    addr = recs["addr"][(recs["type"] == 1) & (recs["space"] == 1)]
    moved, offset = addr.copy(), 0
    for base, size in sorted(meta["allocations"]):
        inside = (addr >= base) & (addr < base + size)
        if not inside.any():  # an allocation the slice never touches (a pool's other blocks) takes no room
            continue
        start = offset + base % HUGE
        moved[inside] = addr[inside] - base + A + start
        offset = (start + size + HUGE - 1) // HUGE * HUGE
    if offset > 1 << 30:
        raise SystemExit(f"{path}: its allocations take more than the benchmark's 1 GiB")
    recs["addr"][(recs["type"] == 1) & (recs["space"] == 1)] = moved
    return meta, recs


def slice_threads(meta: dict) -> int:
    x, y, z = meta["block"]
    return x * y * z


def slice_resident(meta: dict) -> int:
    """How many blocks' records interleaved in the recorded launch (launch_slice.py counts them); for a slice that
    does not say, its grid, up to MAX_RESIDENT (the cuBLAS slice's 1,024 blocks were all resident on the H200)."""
    if "resident_blocks" in meta:
        return max(1, int(meta["resident_blocks"]))
    x, y, z = meta["grid"]
    return min(x * y * z, MAX_RESIDENT)


def slice_records(blocks: int, path: Path) -> np.ndarray:
    """The slice's blocks copied into a grid of about 64 * `blocks` records, as many blocks at a time as interleaved
    in the recorded launch, their records interleaved one by one (each record of the slice issued by every resident
    copy in turn). Copy k's block j of the slice gets grid index k * per_copy + (j + k) % per_copy: the engine gives
    block b to worker b mod W, and the slices keep 12 blocks, so without the turn every copy of slice block j went to
    worker j at twelve workers, and a slice whose blocks differ in length (merge_intervals: 60 to 220 records) gave
    one worker 1.8 times the mean share of the block step, which a real launch's blocks do not."""
    meta, one = launch_slice(path)
    per_copy = int(one["block"].max()) + 1
    copies = max(1, 64 * blocks // len(one))
    wave = max(1, slice_resident(meta) // per_copy)
    out = []
    for first in range(0, copies, wave):
        k = np.arange(first, min(copies, first + wave), dtype=np.uint64)
        r = np.repeat(one, len(k))
        copy = np.tile(k, len(one))
        r["block"] = copy * np.uint64(per_copy) + (r["block"] + copy) % np.uint64(per_copy)
        out.append(r)
    return np.concatenate(out)


SORT_THREADS = 512  # bitonicSortShared: SHARED_SIZE_LIMIT / 2 threads, two keys each
SORT_KEYS = 2 * SORT_THREADS
SORT_WARPS = SORT_THREADS // 32
SORT_RESIDENT = 528  # 132 SMs x 4 blocks of 512 threads
BITONIC_RECORDS_PER_BLOCK = 7700  # about, with random keys (about 19 active lanes per record)


def threads_per_block(pattern: str, slice_path: Path | None = None) -> int:
    if pattern in ("sgemm", "slice"):
        return slice_threads(slice_meta(SGEMM_SLICE if pattern == "sgemm" else slice_path))
    return SORT_THREADS if pattern == "bitonic" else 32 * WARPS


def bitonic_launch(blocks: int, rng: np.random.Generator, interleave: bool = True) -> np.ndarray:
    """One launch of cuda-samples' bitonicSortShared over `blocks` blocks of random keys: keys in s_key[1024] at
    shared offset 0, values in s_val[1024] at 4096. Per compare-exchange step a barrier, loads of both keys by
    every thread, then, by the threads whose pair is out of order only, loads of both values and stores of all
    four (Comparator swaps under a branch), then the block's exit. Up to 528 blocks resident; their warps'
    records are shuffled per instruction (`interleave`), as the drain of a GPU buffer delivers them."""
    lane = np.arange(32)
    tid = np.arange(SORT_THREADS).reshape(SORT_WARPS, 32)
    out = []
    for wave in range(0, blocks, SORT_RESIDENT):
        b = np.arange(wave, min(blocks, wave + SORT_RESIDENT))
        keys = rng.integers(0, 1 << 32, size=(len(b), SORT_KEYS), dtype=np.uint64)
        slices = []

        def issue(pc, code, access, addr, mask=None, b=b, slices=slices):
            r = np.zeros(len(b) * SORT_WARPS, dtype=RECORD_DTYPE)
            r["type"], r["space"] = {9: (2, 1), 3: (3, 0)}.get(code, (1, code))
            r["access"], r["size"], r["pc"] = access, 0 if code in (3, 9) else 4, pc
            r["warp"] = np.tile(np.arange(SORT_WARPS), len(b))
            r["block"] = b.repeat(SORT_WARPS)
            r["active_mask"] = 0xFFFFFFFF if mask is None else mask.reshape(-1)
            r["addr"] = np.broadcast_to(addr, (len(b), SORT_WARPS, 32)).reshape(-1, 32)
            slices.append(r if mask is None else r[r["active_mask"] != 0])

        for pc, offset in ((0x10, 0), (0x20, 4096), (0x30, 4 * SORT_THREADS), (0x40, 4096 + 4 * SORT_THREADS)):
            issue(pc, 2, 2, offset + 4 * tid)
        for size, stride, final in [
            (s, st, False)
            for s in (2**k for k in range(1, 10))
            for st in (2**k for k in reversed(range(s.bit_length() - 1)))
        ] + [(SORT_KEYS, 2**k, True) for k in reversed(range(10))]:
            issue(0x50, 9, 0, 0 * tid)
            pos = 2 * tid - (tid & (stride - 1))
            ka, kb = keys[:, pos.reshape(-1)], keys[:, (pos + stride).reshape(-1)]
            ddd = np.zeros(SORT_THREADS, bool) if final else ((tid.reshape(-1) & (size // 2)) != 0)
            swap = (ka > kb) == ddd[None, :]
            keys[:, pos.reshape(-1)], keys[:, (pos + stride).reshape(-1)] = (
                np.where(swap, kb, ka),
                np.where(swap, ka, kb),
            )
            mask = (swap.reshape(len(b), SORT_WARPS, 32).astype(np.uint64) << lane.astype(np.uint64)).sum(axis=2)
            mask = mask.astype(np.uint32)
            issue(0x60, 2, 1, 4 * pos)
            issue(0x70, 2, 1, 4 * (pos + stride))
            for pc, (access, addr) in enumerate(
                (
                    (1, 4096 + 4 * pos),
                    (1, 4096 + 4 * (pos + stride)),
                    (2, 4 * pos),
                    (2, 4 * (pos + stride)),
                    (2, 4096 + 4 * pos),
                    (2, 4096 + 4 * (pos + stride)),
                )
            ):
                issue(0x80 + 0x10 * pc, 2, access, addr, mask)
        issue(0xE0, 9, 0, 0 * tid)
        for pc, offset in ((0xF0, 0), (0x100, 4096), (0x110, 4 * SORT_THREADS), (0x120, 4096 + 4 * SORT_THREADS)):
            issue(pc, 2, 1, offset + 4 * tid)
        issue(0x130, 3, 0, 0 * tid)
        if interleave:
            slices = [r[rng.permutation(len(r))] for r in slices]
        out.extend(slices)
    return np.concatenate(out)


def generate(blocks: int, pattern: str = "mix", footprint_mb: int = 256, slice_path: Path | None = None) -> np.ndarray:
    footprint = footprint_mb << 20
    if footprint > 1 << 30:
        raise SystemExit("--footprint-mb: at most 1024 (the benchmark's allocations are 1 GiB)")
    if pattern == "gather":
        return mix_records(blocks, gather_program(footprint, np.random.default_rng(14)))
    if pattern == "scalars":
        return mix_records(blocks, gather_program(footprint, np.random.default_rng(14), per_warp=True))
    if pattern == "strided":
        return strided_records(blocks, footprint)
    if pattern == "shared":
        return shared_records(blocks)
    if pattern == "gemm":
        return gemm_records(blocks)
    if pattern == "gemm-pairs":
        return gemm_records(blocks, pairs=True)
    if pattern == "fragments":
        return fragment_records(blocks)
    if pattern == "fragments-swizzled":
        return fragment_records(blocks, swizzled=True)
    if pattern == "sgemm":
        return slice_records(blocks, SGEMM_SLICE)
    if pattern == "slice":
        return slice_records(blocks, slice_path)
    if pattern == "rowwalk":
        return matvec_records(blocks, by_rows=True)
    if pattern == "matvec":
        return matvec_records(blocks)
    if pattern == "bfs":
        return bfs_records(blocks)
    if pattern == "stencil":
        return mix_records(blocks, stencil_program)
    if pattern == "transpose":
        return mix_records(max(1, blocks * 8 // 17), transpose_program)
    if pattern == "bitonic":
        return bitonic_launch(max(1, 64 * blocks // BITONIC_RECORDS_PER_BLOCK), np.random.default_rng(14))
    return mix_records(blocks, program)


def with_value_companions(recs: np.ndarray, seed: int = 7) -> np.ndarray:
    """The trace as the value patch writes it (docs/trace-format.md, "Value companions"): each memory record
    flagged and followed by a companion whose lanes hold values from {0, 1, 2, 3}, half the store lanes silent."""
    rng = np.random.default_rng(seed)
    mem = recs["type"] == 1
    out = np.zeros(len(recs) + int(mem.sum()), dtype=RECORD_DTYPE)
    slot = np.arange(len(recs)) + np.concatenate(([0], np.cumsum(mem)[:-1]))  # each record's slot
    out[slot] = recs
    out["flags"][slot[mem]] |= 0x8
    companion = slot[mem] + 1
    out["type"][companion] = 4
    for field in ("space", "access", "size", "warp", "block", "active_mask"):
        out[field][companion] = recs[field][mem]
    out["pc"][companion] = np.where(recs["access"][mem] == 2, rng.integers(0, 2**32, int(mem.sum())), 0)
    out["addr"][companion] = rng.integers(0, 4, (int(mem.sum()), 32))
    return out


def packed_stream(recs: np.ndarray) -> np.ndarray:
    """`recs` as the device patch packs them (docs/trace-format.md, "Packed records"), 32-byte slots of four words:
    a record whose lanes one stride over the warp gives in the strided form, a barrier or exit as its header alone,
    every other record whole. (The patch packs more records in the strided form, with a stride within groups of
    lanes; unpacked for the engine, those come back whole, as they are here.)"""
    words = recs.view(np.uint64).reshape(len(recs), 36)
    forms = one_stride(recs)
    strided = forms.one
    header_only = forms.header & (recs["type"] != 4)  # (no value companions here: --handed-over refuses --values)
    first = forms.first.astype(np.int64)
    base = (forms.a0 - forms.stride * first).view(np.uint64)  # int64 arithmetic wraps as the patch's uint64 does
    stride = forms.stride.view(np.uint64)
    slots = np.where(strided, 2, np.where(header_only, 1, 9))
    at = np.concatenate(([0], np.cumsum(slots)[:-1]))
    stream = np.zeros((int(slots.sum()), 4), dtype=np.uint64)
    full = ~strided & ~header_only
    for k in range(9):  # whole records, slot by slot
        stream[at[full] + k] = words[full, 4 * k : 4 * k + 4]
    packed = ~full
    stream[at[packed]] = words[packed, 0:4]
    form = np.where(strided[packed], 2, 1).astype(np.uint64)  # STRIDED, NO_ADDRESSES
    stream[at[packed], 0] |= form << np.uint64(5)
    stream[at[strided] + 1, 0] = base[strided]
    stream[at[strided] + 1, 1] = stride[strided]
    stream[at[strided] + 1, 3] = 32  # one group of 32 lanes
    return stream


def handed_over(engine, recs: np.ndarray) -> np.ndarray:
    """`recs` as the online engine gets them from the engine queue: packed (packed_stream), then unpacked by the
    queue's own function (unpack_for_engine), which writes none of the bytes the engine never reads."""
    stream = packed_stream(recs)
    if "for_engine" not in (engine.unpack_records.__doc__ or ""):
        raise SystemExit("--handed-over: this engine module has no unpack_records(for_engine=...)")
    return np.frombuffer(engine.unpack_records(stream.tobytes(), for_engine=True), dtype=RECORD_DTYPE).copy()


def lane_accesses(recs: np.ndarray) -> int:
    """Active lanes of the memory records (lane-accesses)."""
    masks = recs["active_mask"][recs["type"] == 1].astype("<u4")
    return int(np.unpackbits(masks.view(np.uint8)).sum())


def grid_blocks(recs: np.ndarray) -> int:
    return int(recs["block"].max()) + 1


STEPS = ("ids", "new-pcs", "route", "blocks", "global")


def step_seconds(e) -> dict[str, object]:
    s = e.stats()
    return {"crit": s["phase_seconds"], "cpu": s["phase_cpu_seconds"], "wall": s["consume_seconds"]}


def measure(
    engine,
    recs: np.ndarray,
    workers: int,
    repeat: int,
    warm: bool = False,
    threads: int = 32 * WARPS,
    values: bool = False,
) -> tuple[float, float, int, dict[str, object]]:
    """Best wall time, best process CPU time (all threads), peak shadow bytes over `repeat` runs, and the step
    split of the best run. Cold: the launch is the engine's first, so every shadow page is faulted in during
    the measurement. Warm: the same launch replayed a second time on the same engine (pages mapped, entries of
    an older generation), as every launch after the first sees the buffers it reuses."""
    best, best_cpu, peak_shadow, steps = float("inf"), float("inf"), 0, {}
    for _ in range(repeat):
        e = engine.Engine(workers=workers, values=values)
        for base in (A, B, C):
            e.add_allocation(base, 1 << 30)
        for launch in range(2 if warm else 1):
            e.begin_launch(launch, 0, [grid_blocks(recs), 1, 1], [threads, 1, 1], 0)
            before = step_seconds(e)
            t0, c0 = time.perf_counter(), time.process_time()
            for s in range(0, len(recs), 1 << 16):
                e.consume(recs[s : s + (1 << 16)])
            e.end_launch()
        elapsed = time.perf_counter() - t0
        if elapsed < best:
            after = step_seconds(e)
            steps = {
                "crit": [a - b for a, b in zip(after["crit"], before["crit"])],
                "cpu": [a - b for a, b in zip(after["cpu"], before["cpu"])],
                "wall": after["wall"] - before["wall"],
            }
        best = min(best, elapsed)
        best_cpu = min(best_cpu, time.process_time() - c0)
        peak_shadow = e.stats()["peak_shadow_bytes"]
        steps["wide"] = e.stats().get("wide_unit_batches", 0)  # an older engine (--engine PATH) has none
        json.loads(e.to_json())
    return best, best_cpu, peak_shadow, steps


def step_lines(steps: dict[str, object], workers: int) -> list[str]:
    """Per step: the critical path (slowest worker per batch, summed) and the mean worker's time; their ratio
    is the load imbalance, and consume's wall time beyond the critical paths is hand-over between steps. With
    several workers the block and global steps run fused (consume.cpp): a worker's global step begins when its own
    block step ends, so their critical paths overlap and the remainder is negative by as much as they overlapped."""
    crit, cpu, wall = steps["crit"], steps["cpu"], steps["wall"]
    rest = wall - sum(crit)
    rest_text = (
        f"hand-over and idling {1e3 * rest:.1f} ms"
        if rest >= 0
        else f"block and global steps overlapped {-1e3 * rest:.1f} ms"
    )
    return [
        "              ms per step, slowest worker: "
        + "  ".join(f"{name} {1e3 * x:6.1f}" for name, x in zip(STEPS, crit)),
        "              ms per step, mean worker:    "
        + "  ".join(f"{name} {1e3 * x / workers:6.1f}" for name, x in zip(STEPS, cpu)),
        f"              consume wall {1e3 * wall:.1f} ms, {rest_text}",
    ]


def independent(engine, recs: np.ndarray, copies: int, threads: int = 32 * WARPS) -> float:
    """Wall seconds for `copies` single-worker engines, each on its own thread with its own shadow and its own
    copy of `recs`, replaying at once (warm launch: each engine's first launch runs before the clock starts)."""
    engines, traces = [], [recs.copy() for _ in range(copies)]
    for _ in range(copies):
        e = engine.Engine(workers=1)
        for base in (A, B, C):
            e.add_allocation(base, 1 << 30)
        engines.append(e)
    start = threading.Barrier(copies + 1)

    def replay(e, mine: np.ndarray) -> None:
        try:
            for launch in range(2):
                if launch == 1:
                    start.wait()
                e.begin_launch(launch, 0, [grid_blocks(mine), 1, 1], [threads, 1, 1], 0)
                for s in range(0, len(mine), 1 << 16):
                    e.consume(mine[s : s + (1 << 16)])
                e.end_launch()
        except BaseException:
            start.abort()  # the others, and the clock, would wait for this engine forever
            raise

    runners = [threading.Thread(target=replay, args=(e, t)) for e, t in zip(engines, traces)]
    for t in runners:
        t.start()
    start.wait()
    t0 = time.perf_counter()
    for t in runners:
        t.join()
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--blocks", type=int, default=16384)
    ap.add_argument("--workers", default="1,2,4,8,16")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--independent",
        default="",
        help="also run N single-worker engines side by side, each on 1/N of the blocks (e.g. 1,4,8,16): "
        "a split with no communication at all, the ceiling for N workers on this machine",
    )
    ap.add_argument(
        "--pattern",
        choices=PATTERNS,
        default="mix",
    )
    ap.add_argument("--footprint-mb", type=int, default=256, help="table / matrix size of " + ", ".join(TABLE_PATTERNS))
    ap.add_argument(
        "--slice",
        type=Path,
        help="a launch slice (DIR/NAME of NAME.json and NAME.records.zst, benchmarks/launch_slice.py) copied into a "
        "full grid; implies --pattern slice",
    )
    ap.add_argument("--values", action="store_true", help="value mode: companions after every memory record")
    ap.add_argument(
        "--handed-over",
        action="store_true",
        help="the records as the engine queue hands them to the online engine: broadcasts by their one address, "
        "other records of one stride by their first and last, barriers and exits by their header (packed_records.h, "
        "unpack_for_engine); without it, whole records",
    )
    ap.add_argument(
        "--engine",
        default="installed",
        help="the engine module measured: a _engine*.so built from another revision (benchmarks/build_revision.sh) "
        "or `installed`; one per run, so compare two by alternating runs",
    )
    args = ap.parse_args()
    if args.footprint_mb < 1:
        ap.error("--footprint-mb: at least 1")
    if args.values and args.independent:
        ap.error("--independent replays without values: leave out --values")
    if args.slice is not None:
        if args.pattern not in ("mix", "slice"):
            ap.error("--slice replays a recorded slice: leave out --pattern")
        if not Path(f"{args.slice}.json").is_file():
            ap.error(f"--slice: {args.slice}.json does not exist")
        args.pattern = "slice"
    elif args.pattern == "slice":
        ap.error("--pattern slice: name the slice with --slice DIR/NAME")
    engine = engine_module(args.engine)
    recs = generate(args.blocks, args.pattern, args.footprint_mb, args.slice)
    threads = threads_per_block(args.pattern, args.slice)
    lanes = lane_accesses(recs)
    records_counted = len(recs)  # the figures count records, not their value companions
    if args.values:
        recs = with_value_companions(recs)
    if args.handed_over:
        if args.values or args.independent:
            ap.error("--handed-over: without --values and --independent")
        recs = handed_over(engine, recs)
    print(
        f"trace ({args.pattern if args.slice is None else args.slice}"
        + (f", {args.footprint_mb} MB footprint" if args.pattern in TABLE_PATTERNS else "")
        + f"): {len(recs):,} records, {lanes:,} lane-accesses, {recs.nbytes / 2**20:.0f} MiB; "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}"
    )
    for warm in (False, True):
        print(
            "cold: first launch, shadow pages faulted in"
            if not warm
            else "warm: the same launch again on the same engine"
        )
        base = None
        for w in [int(x) for x in args.workers.split(",")]:
            t, cpu, shadow, steps = measure(engine, recs, w, args.repeat, warm, threads, args.values)
            base = base or t
            print(
                f"  workers {w:2d}: {records_counted / t / 1e6:6.2f} M records/s  {lanes / t / 1e6:7.1f} M lane-accesses/s "
                f"({lanes / t / 1e6 / w:5.1f} M/s/worker; {lanes / cpu / 1e6:5.1f} M per CPU-second)  "
                f"speed-up {base / t:5.2f} (efficiency {base / t / w:4.2f})  peak shadow {shadow / 2**20:.0f} MiB"
                + (f"  {steps['wide']} wide-unit batches" if steps.get("wide") else "")
            )
            print("\n".join(step_lines(steps, w)))
    if args.independent:
        print(
            "N single-worker engines side by side, each with 1/N of the blocks, its own trace copy and shadow, "
            "warm: a split with no communication, the ceiling for N workers"
        )
        single = None  # lane-accesses/s of one engine alone (needs 1 in the list)
        for n in [int(x) for x in args.independent.split(",")]:
            share = recs if n == 1 else generate(args.blocks // n, args.pattern, args.footprint_mb, args.slice)
            share_lanes = lane_accesses(share)
            rate = n * share_lanes / min(independent(engine, share, n, threads) for _ in range(2))
            if n == 1:
                single = rate
            print(
                f"  engines {n:2d}: {rate / 1e6:7.1f} M lane-accesses/s in all"
                + (f"  speed-up {rate / single:5.2f} (efficiency {rate / single / n:4.2f})" if single else "")
            )
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"peak RSS: {rss / 1024:.0f} MiB (trace itself {recs.nbytes / 2**20:.0f} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
