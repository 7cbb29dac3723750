"""benchmarks/realapps/parboil_inputs.py, the input files of the breadth set's Parboil apps, without a GPU and without
staged sources: the same bytes every time, every file the manifest's Parboil apps name (through {src}, which
realapps.py resolves when it runs them), each re-read here the way the app's own reader reads it (binary vs
text, header fields, counts) and checked against what the app's kernels assume; and the stage script's hook that
runs the generator."""

from __future__ import annotations

import hashlib
import json
import math
import re
import shutil
import struct
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks"
BREADTH = BENCH / "realapps" / "breadth.json"
for folder in (BENCH, BENCH / "realapps"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

import parboil_inputs  # noqa: E402
import realapps  # noqa: E402
import realapps_stage  # noqa: E402

MANIFEST = realapps.load_manifest(BREADTH)
APPS = {a["name"]: a for a in MANIFEST["apps"] if a["source"] == "parboil"}


@pytest.fixture(scope="module")
def src(tmp_path_factory) -> Path:
    """A stand-in for the staged-sources folder holding only the generated inputs, as staging lays them out."""
    root = tmp_path_factory.mktemp("src")
    parboil_inputs.write_all(root / "parboil")
    return root


def inputs(name: str, src: Path) -> list[Path]:
    return realapps.staged_inputs(APPS[name], src)


def own_args(name: str) -> list[str]:
    """The app's own arguments: what Parboil's pb_ReadParameters leaves after the `--`."""
    args = APPS[name]["args"]
    return args[args.index("--") + 1 :]


def digests(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*") if p.is_file()
    }


def test_the_same_bytes_every_time(tmp_path, src):
    written = parboil_inputs.write_all(tmp_path / "again")
    assert digests(tmp_path / "again") == digests(src / "parboil")
    assert set(written) == set(digests(src / "parboil"))
    # About 6.4 MiB in all, 2.1 of it lbm's fixed-size map: small enough to stage and carry with the sources.
    assert 4 << 20 < sum(written.values()) < 7 << 20


def test_every_file_the_apps_name_is_written_and_nothing_else(src):
    assert set(APPS) == {f"parboil_{app.replace('-', '_')}" for app in parboil_inputs.WRITERS}, (
        "one app per generator, named after it"
    )
    named = set()
    for name in APPS:
        paths = inputs(name, src)
        assert paths, f"{name} names no staged input"
        missing = [p for p in paths if not p.is_file()]
        assert not missing, f"{name}: not written: {missing}"
        named.update(paths)
    # mri-gridding finds its samples next to the parameter file, as <name>.data, which no argument names.
    (uks,) = inputs("parboil_mri_gridding", src)
    named.add(uks.with_name(uks.name + ".data"))
    written = {p for p in (src / "parboil" / parboil_inputs.INPUTS).rglob("*") if p.is_file()}
    assert written == named, f"written but named by no app: {sorted(map(str, written - named))}"


def test_the_manifest_stages_the_generator_and_resolves_paths_at_run_time(src):
    spec = MANIFEST["sources"]["parboil"]
    assert (BREADTH.parent / spec["inputs"]).resolve() == Path(parboil_inputs.__file__).resolve()
    for app in APPS.values():
        named = [a for a in app["args"] if "/inputs/" in a]
        assert named and all(
            item.startswith(realapps.SRC_TOKEN + "/parboil/inputs/") for a in named for item in a.split(",")
        ), f"{app['name']}: input paths must be {{src}}-relative, not baked at stage time"
    argv = realapps.app_argv(APPS["parboil_cutcp"], Path("/b/parboil_cutcp"), Path("/elsewhere"))
    assert argv == ["/b/parboil_cutcp", "-i", "/elsewhere/parboil/inputs/cutcp/watbox.pqr"]


def test_check_staged_names_a_missing_input(tmp_path):
    manifest = {
        "sources": {"s": {"commit": "c0"}},
        "apps": [{"name": "a", "source": "s", "dir": ".", "files": [], "args": ["-i", "{src}/s/in/x,{src}/s/in/y"]}],
    }
    (tmp_path / "s" / "in").mkdir(parents=True)
    (tmp_path / "s" / "STAGED.json").write_text(json.dumps({"commit": "c0"}))
    (tmp_path / "s" / "in" / "x").write_text("x")
    assert realapps.check_staged(manifest, tmp_path) == [
        f"a: missing input {tmp_path}/s/in/y (made by the source's inputs generator)"
    ]


def test_cutcp_atoms_parse_as_readatom_reads_them(src):
    (path,) = inputs("parboil_cutcp", src)
    atoms = []
    for line in path.read_text().splitlines(keepends=True):
        assert len(line) < 96, "readatom.c reads 96-byte lines; a longer one splits into two records"
        if line.startswith(("ATOM  ", "HETATM")):
            # sscanf(line, "%*s %*d %*s %*s %*d %f %f %f %f"): name, serial, atom, residue, residue number, x y z q
            tokens = line.split()
            assert tokens[1].isdigit() and tokens[4].isdigit() and len(tokens) >= 9
            atoms.append([float(t) for t in tokens[5:9]])
    assert len(atoms) == 3 * parboil_inputs.CUTCP_WATERS
    assert all(q != 0 for *_, q in atoms), "a zero charge ends the kernel's walk through a bin"
    assert abs(sum(q for *_, q in atoms)) < 1e-6
    extent = [max(a[d] for a in atoms) - min(a[d] for a in atoms) for d in range(3)]
    assert all(parboil_inputs.CUTCP_BOX - 1 < e < parboil_inputs.CUTCP_BOX + 3 for e in extent)


def histo_ranges(values: list[int], size: int) -> tuple[int, int]:
    """histo_prescan_kernel's shared-memory ranges: 64 blocks of 512 threads sample the first eighth of each
    block's share of the image, average the threads' means and standard deviations, and keep mean +- 10 of them,
    in units of 24 Ki bins."""
    stride, lo, hi = size // 64, 2**32, 0
    for block in range(64):
        end = block * stride + stride // 8
        means, devs = [], []
        for thread in range(512):
            sample = values[block * stride + thread : end : 512]
            assert sample, "a prescan thread with no sample divides by zero"
            mean = sum(sample) / len(sample)
            means.append(mean)
            devs.append(math.sqrt(sum((v - mean) ** 2 for v in sample) / len(sample)))
        mean, dev = sum(means) / 512, sum(devs) / 512
        lo, hi = min(lo, int(mean - 10 * dev) // (24 * 1024)), max(hi, int(mean + 10 * dev) // (24 * 1024))
    return lo, hi


def test_histo_image_has_main_cu_header_and_fits_the_kernels(src):
    (path,) = inputs("parboil_histo", src)
    data = path.read_bytes()
    width, height, histo_width, histo_height = struct.unpack("<4I", data[:16])
    assert (width, height) == parboil_inputs.HISTO_IMAGE and (histo_width, histo_height) == parboil_inputs.HISTO_BINS
    assert len(data) == 16 + 4 * width * height
    assert height % 16 == 0, "histo_intermediates_kernel writes 16 whole rows per block"
    assert histo_width <= width <= 2047, "buffers are sized by the image width; one thread per two columns"
    values = list(struct.unpack(f"<{width * height}I", data[16:]))
    bins = histo_width * histo_height
    assert max(values) < bins
    lo, hi = histo_ranges(values, width * height)
    assert 0 <= lo and hi - lo >= 1, "several ranges: blocks with blockIdx.y > 0 run too"
    assert (hi + 1) * 24 * 1024 <= width * histo_height, "ranges stay inside the global overflow buffer"
    outside = sum(1 for v in values if not lo <= v // (24 * 1024) <= hi)
    assert outside > 0, "some values take the global-atomics path"
    assert max(Counter(values).values()) > 256 * 14, "one bin overflows every block's 8-bit counter"
    assert own_args("parboil_histo") == ["10"]


def test_lbm_obstacle_map_has_the_size_main_cc_demands(src):
    (path,) = inputs("parboil_lbm", src)
    nx, ny, nz = parboil_inputs.LBM_SIZE
    data = path.read_bytes()
    assert len(data) == nx * ny * nz + (ny + 1) * nz == 2_178_150
    plane = ny * (nx + 1) + 1
    for z in range(nz):
        rows = data[z * plane : (z + 1) * plane]
        assert rows[-1:] == b"\n"
        for y in range(ny):
            row = rows[y * (nx + 1) : (y + 1) * (nx + 1)]
            assert row[-1:] == b"\n" and set(row[:-1]) <= set(b".#")
    obstacles = data.count(b"#") / (nx * ny * nz)
    assert 0.05 < obstacles < 0.2
    assert APPS["parboil_lbm"]["args"][2:4] == ["-o", "/dev/null"], "lbm fopen()s its result file unchecked"
    assert 1 <= int(own_args("parboil_lbm")[0]) <= 10


def read_uks(path: Path) -> dict[str, list[float]]:
    """setParameters' fscanf calls, in their order: `key=v1 v2 ...` lines."""
    keys = [
        "aquisition.numsamples",
        "aquisition.kmax",
        "aquisition.matrixSize",
        "reconstruction.matrixSize",
        "gridding.matrixSize",
        "gridding.oversampling",
        "kernel.width",
        "kernel.useLUT",
    ]
    lines = path.read_text().splitlines()
    assert [line.split("=")[0] for line in lines] == keys
    return {k: [float(v) for v in line.split("=")[1].split()] for k, line in zip(keys, lines)}


def test_mri_gridding_samples_map_into_the_grid(src):
    (uks,) = inputs("parboil_mri_gridding", src)
    p = read_uks(uks)
    count, kmax, size = int(p["aquisition.numsamples"][0]), p["aquisition.kmax"], p["gridding.matrixSize"]
    assert p["aquisition.matrixSize"] == p["reconstruction.matrixSize"] == size
    assert size[0] % 8 == 0 and size[1] % 4 == 0 and size[2] % 8 == 0, "gridding_GPU's 8x4x(2x4) tiles"
    data = uks.with_name(uks.name + ".data").read_bytes()
    assert len(data) == count * 6 * 4
    records = struct.iter_unpack("<6f", data)
    cells: dict[tuple, int] = {}
    for real, imag, *k, sdc in records:
        assert (real != 0 or imag != 0) and sdc != 0
        # readSampleData: floor(k * acq / (recon * kmax) * (size - 1) / 2 + (size - 1) / 2), a grid cell
        cell = tuple(math.floor(k[d] / kmax[d] * (size[d] - 1) / 2 + (size[d] - 1) / 2) for d in range(3))
        assert all(0 <= cell[d] < size[d] for d in range(3)), cell
        cells[cell] = cells.get(cell, 0) + 1
    binsize = int(own_args("parboil_mri_gridding")[0])
    assert max(cells.values()) > binsize, "some bins overflow to the CPU's share"
    assert APPS["parboil_mri_gridding"]["args"][2:4] == ["-o", "/dev/null"], "it fopen()s its output unchecked"


def test_mri_q_dataset_has_file_cc_layout(src):
    (path,) = inputs("parboil_mri_q", src)
    data = path.read_bytes()
    num_k, num_x = struct.unpack("<2i", data[:8])
    assert (num_k, num_x) == (parboil_inputs.MRIQ_NUMK, math.prod(parboil_inputs.MRIQ_IMAGE))
    assert len(data) == 8 + 4 * (5 * num_k + 3 * num_x)
    assert num_x % 256 == 0, "ComputeQ_GPU has no bounds check"


def read_matrix(path: Path) -> tuple[int, int, int]:
    text = path.read_text()
    assert text.endswith("\n"), "io.cc drops the last value it reads: the file must not end in a number"
    rows, cols, *values = text.split()
    assert all(math.isfinite(float(v)) for v in values)
    return int(rows), int(cols), len(values)


def test_sgemm_matrices_have_io_cc_layout_and_tile_sizes(src):
    a, b, bt = inputs("parboil_sgemm", src)
    assert b == bt, "main.cu reads inputs 0 and 2 only"
    m, k, count = read_matrix(a)
    n, k2, count2 = read_matrix(bt)
    assert (m, n, k) == parboil_inputs.SGEMM_MNK and k2 == k
    assert count == m * k and count2 == n * k
    assert m % 128 == 0 and n % 16 == 0 and k % 8 == 0


def test_spmv_matrix_converts_to_jds_without_padding(src):
    mtx, vector = inputs("parboil_spmv", src)
    lines = mtx.read_text().splitlines()
    assert lines[0].split() == ["%%MatrixMarket", "matrix", "coordinate", "real", "symmetric"]
    rows, cols, nnz = map(int, lines[1].split())
    entries = [line.split() for line in lines[2:]]
    assert rows == cols and len(entries) == nnz and rows % 32 == 0
    length = [0] * rows
    for row, col, value in entries:
        r, c = int(row) - 1, int(col) - 1
        assert 0 <= c <= r < rows and math.isfinite(float(value))
        length[r] += 1
        if r != c:  # convert_dataset.c mirrors the lower triangle
            length[c] += 1
    ordered = sorted(length, reverse=True)
    uneven = [w for w in range(0, rows, 32) if len(set(ordered[w : w + 32])) != 1]
    assert not uneven, "a warp of unequal rows gets padding entries of column -1, which the kernel reads as x[-1]"
    assert max(length) + 1 <= 5000 and rows // 32 <= 5000, "jds_ptr_int and sh_zcnt_int hold 5000"
    assert vector.stat().st_size == 4 * rows


def test_stencil_grid_matches_the_app_arguments(src):
    (path,) = inputs("parboil_stencil", src)
    nx, ny, nz, iterations = map(int, own_args("parboil_stencil"))
    assert (nx, ny, nz) == parboil_inputs.STENCIL_GRID and iterations >= 1
    assert path.stat().st_size == 4 * nx * ny * nz


def test_tpacf_files_match_its_set_and_point_counts(src):
    args = own_args("parboil_tpacf")
    sets, points = int(args[args.index("-n") + 1]), int(args[args.index("-p") + 1])
    files = inputs("parboil_tpacf", src)
    assert [p.name for p in files] == ["Datapnts.1"] + [f"Randompnts.{i}" for i in range(1, sets + 1)]
    for path in files:
        lines = path.read_text().splitlines()
        assert len(lines) >= points
        for line in lines[:points]:
            ra, dec = map(float, line.split())
            assert 0 <= ra < 360 and -90 <= dec <= 90


def make_repo(root: Path) -> tuple[Path, str]:
    """A bare clone holding one source file, as the stage script finds mirrors: MIRRORS/owner+name/repo."""
    work = root / "work"
    work.mkdir()
    (work / "k.cu").write_text("__global__ void k() {}\n")
    run = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(work)]
    subprocess.run([*run, "init", "-q"], check=True)
    subprocess.run([*run, "add", "k.cu"], check=True)
    subprocess.run([*run, "commit", "-q", "-m", "k"], check=True)
    commit = subprocess.run([*run, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    bare = root / "mirrors" / "own+tiny" / "repo"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True)
    return root / "mirrors", commit


@pytest.mark.skipif(shutil.which("git") is None, reason="staging reads bare git clones; no git here")
def test_staging_runs_the_sources_input_generator(tmp_path, capsys):
    mirrors, commit = make_repo(tmp_path)
    generator = tmp_path / "gen.py"
    generator.write_text(
        "import pathlib, sys\n"
        "dest = pathlib.Path(sys.argv[1])\n"
        "assert (dest / 'k.cu').is_file(), 'runs after the copy'\n"
        "(dest / 'inputs').mkdir()\n"
        "(dest / 'inputs' / 'x.bin').write_bytes(bytes(1000))\n"
    )
    source = {"repo": "own/tiny", "commit": commit, "paths": ["k.cu"], "inputs": "gen.py"}
    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps({"format": "reuselens-realapps-manifest", "version": 1, "sources": {"t": source}}))
    dest = tmp_path / "dest"
    argv = ["--mirrors", str(mirrors), "--dest", str(dest), "--manifest", str(manifest)]
    assert realapps_stage.main(argv) == 0
    assert (dest / "t" / "inputs" / "x.bin").stat().st_size == 1000
    assert json.loads((dest / "t" / "STAGED.json").read_text())["inputs"] == "gen.py"

    generator.write_text("import sys\nsys.exit('no room')\n")
    assert realapps_stage.main(argv) == 1
    err = capsys.readouterr().err
    assert re.search(r"t: input generator .*gen\.py exited 1: no room", err), err
    assert not (dest / "t" / "STAGED.json").exists(), "a failed generator leaves the source unstamped"


def test_check_staged_looks_only_at_the_selected_apps_and_their_sources(tmp_path):
    """A run of some apps does not stop at another app's missing input or at a source only others use (session 51:
    a run of six PolyBench and cuda-samples apps refused for Parboil tpacf's inputs, which were not carried)."""
    manifest = {
        "sources": {"s": {"commit": "c0"}, "t": {"commit": "c1"}},
        "apps": [
            {"name": "a", "source": "s", "dir": ".", "files": [], "args": []},
            {"name": "b", "source": "t", "dir": ".", "files": [], "args": ["{src}/t/in/x"]},
        ],
    }
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "STAGED.json").write_text(json.dumps({"commit": "c0"}))
    assert realapps.check_staged(manifest, tmp_path, [manifest["apps"][0]]) == []
    assert realapps.check_staged(manifest, tmp_path) == [
        f"t: not staged in {tmp_path} (run benchmarks/realapps_stage.py)",
        f"b: missing input {tmp_path}/t/in/x (made by the source's inputs generator)",
    ]
