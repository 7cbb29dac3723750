#!/usr/bin/env python3
"""Input files for Parboil's sad and bfs in the second breadth set (benchmarks/realapps/breadth2.json): the Parboil
tree we pin comes without its data sets, so we make our own, in exactly the format each app's reader expects.
parboil_inputs.py's writing and command line, with the writers of the two apps it does not cover.

    python3 benchmarks/realapps/parboil_inputs2.py DEST     # writes DEST/inputs/<app>/...

benchmarks/realapps_stage.py runs it on the staged parboil/ folder (the source's "inputs" field), so the apps'
arguments name the files as {src}/parboil/inputs/<app>/<file>. Deterministic: every app draws from its own
random.Random seeded by the app's name, through rng.random() only. The standard library only, since the stage
script may run under a bare system Python. Sizes keep each app well under a second natively and far under ~30 M
warp-level memory records under instrumentation (the manifest's "why" strings give the estimates); the files take
about 3.9 MiB, 3.5 MiB of it bfs's text graph.
"""

from __future__ import annotations

import math
import random
import struct
import sys
from pathlib import Path

# the first breadth set's generator, beside this file: its writing and command line serve both
sys.path.insert(0, str(Path(__file__).resolve().parent))
import parboil_inputs  # noqa: E402

# sad: CIF frames (352 x 288 pixels, 22 x 18 macroblocks); the app needs both sides to be multiples of 16.
SAD_SIZE = (352, 288)
# sad: the current frame is the reference moved by this much (pixels) plus noise, so each block's SADs have a clear
# minimum inside the +-16 pixel search range.
SAD_MOTION = (3, -2)
# bfs: a random 6-regular multigraph (three random permutations, each edge in both directions), source node 0.
BFS_NODES = 65536
BFS_MATCHINGS = 3
BFS_SOURCE = 0


def _sad_frame(width: int, height: int, shift: tuple[int, int], noise: float, rng: random.Random) -> list[int]:
    """A smooth luma pattern with edges, sampled at (x + dx, y + dy), plus uniform noise; values in 0..255. The
    kernels need them there: a 16 x 16 block's SAD (256 differences) must fit the 16-bit halves that
    larger_sad_calc_8/16 add as packed pairs."""
    dx, dy = shift
    pixels = []
    for y in range(height):
        for x in range(width):
            u, v = x + dx, y + dy
            value = (
                128.0
                + 50.0 * math.sin(u / 9.0) * math.cos(v / 13.0)
                + 30.0 * math.sin((u + 2 * v) / 23.0)
                + (25.0 if ((u // 24) + (v // 24)) % 2 else -25.0)
                + noise * (rng.random() - 0.5)
            )
            pixels.append(min(255, max(0, int(value))))
    return pixels


def write_sad(folder: Path, rng: random.Random) -> None:
    """reference.bin and frame.bin, as image.c's load_image reads them: width and height as 16-bit little-endian
    words (read16u: two fgetc), then width x height 16-bit pixels fread as native (little-endian) shorts, row by
    row. main.cu takes -i REFERENCE,CURRENT: the reference is bound to the texture the search reads, the current
    frame is copied to global memory and tiled into shared memory."""
    width, height = SAD_SIZE
    header = struct.pack("<2H", width, height)
    reference = _sad_frame(width, height, (0, 0), 6.0, rng)
    current = _sad_frame(width, height, SAD_MOTION, 6.0, rng)
    (folder / "reference.bin").write_bytes(header + struct.pack(f"<{len(reference)}h", *reference))
    (folder / "frame.bin").write_bytes(header + struct.pack(f"<{len(current)}h", *current))


def _permutation(n: int, rng: random.Random) -> list[int]:
    """A uniform random permutation by Fisher-Yates on rng.random() alone (random.shuffle's draws could change
    between Python versions)."""
    perm = list(range(n))
    for i in range(n - 1, 0, -1):
        j = int(rng.random() * (i + 1))
        perm[i], perm[j] = perm[j], perm[i]
    return perm


def write_bfs(folder: Path, rng: random.Random) -> None:
    """graph.txt, as main.cu reads it with fscanf("%d"): the node count; per node "start count" (its first edge's
    index and its number of edges); the source node; the edge count; per edge "id cost". Every node has exactly
    2 x BFS_MATCHINGS = 6 edges (node i to perm_k[i] and back, for three random permutations; a rare self-loop or
    repeated neighbour is harmless), so the graph is connected with near certainty and a frontier node adds at
    most 5 new nodes: a 512-thread block's 8 local queues (W_QUEUE_SIZE = 400 entries each, 64 threads per queue)
    cannot overflow, which would end the app early. Every cost is 1, so a node's cost is its BFS level, each node
    enters a frontier once and the frontiers do not depend on the order of the kernels' atomics. From node 0 the
    frontiers are 1, 6, 30, 150, 741, 3588, 15152, 34956, 10900 and 12 nodes: the single-block kernel (frontiers up
    to 512), the 14-block kernel with its spinning global barrier (513 to 7168) and the general kernel all run."""
    n = BFS_NODES
    adjacency: list[list[int]] = [[] for _ in range(n)]
    for _ in range(BFS_MATCHINGS):
        perm = _permutation(n, rng)
        for i, j in enumerate(perm):
            adjacency[i].append(j)
            adjacency[j].append(i)
    lines = [f"{n}\n"]
    start = 0
    for neighbours in adjacency:
        lines.append(f"{start} {len(neighbours)}\n")
        start += len(neighbours)
    lines.append(f"{BFS_SOURCE}\n{start}\n")
    lines += [f"{j} 1\n" for neighbours in adjacency for j in neighbours]
    (folder / "graph.txt").write_text("".join(lines))


WRITERS = {
    "sad": write_sad,
    "bfs": write_bfs,
}


def main(argv: list[str] | None = None) -> int:
    return parboil_inputs.main(argv, WRITERS, "parboil_inputs2.py")


if __name__ == "__main__":
    sys.exit(main())
