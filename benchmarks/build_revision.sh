#!/usr/bin/env bash
# build_revision.sh REV DIR: the package of git revision REV (tool library, device patches, engine module) built
# as pip builds it and installed into DIR (pip --target), beside the installed one, for benchmarks/ab_collector.py
# and benchmarks/replay_speed.py --engine.
# build_revision.sh --patch PATCH DIR [-R]: the same for the working tree with PATCH applied (-R: taken back), for
# the GPU machine, whose checkout may hold no git objects of recent commits (docs/collector.md, "GPU machine
# scripts"). Prints the built tool library's and engine module's paths. Run from the repository root, where the
# build tools are (the GPU machine: nvcc, the Sanitizer wheel, scikit-build).
set -euo pipefail
usage="usage: build_revision.sh REV DIR | build_revision.sh --patch PATCH DIR [-R]"
# docs/ too: lsp_server/patterns.md is a link into it.
sources=(pyproject.toml CMakeLists.txt README.md LICENSE analyzer collector reuselens lsp_server docs)
src=$(mktemp -d)
trap 'rm -rf "$src"' EXIT
if [ "${1:-}" = "--patch" ]; then
  patch=$(realpath "${2:?$usage}")
  dir=${3:?$usage}
  cp -r "${sources[@]}" "$src"/
  # Only the package's sources are copied: a patch's other files (its tests) are left out, not failed on.
  includes=()
  for path in "${sources[@]}"; do includes+=(--include="$path" --include="$path/*"); done
  (cd "$src" && git apply "${includes[@]}" ${4:-} "$patch")
else
  rev=${1:?$usage}
  dir=${2:?$usage}
  git archive "$rev" "${sources[@]}" | tar -x -C "$src"
fi
python3 -m pip install -q --no-deps --no-build-isolation --no-cache-dir --target "$dir" "$src"
find "$dir" -name libreuselens_collector.so
find "$dir" -name "_engine*.so"
