#!/usr/bin/env bash
# build_revision.sh REV DIR: the package of git revision REV (tool library, device patches, engine module) built
# as pip builds it and installed into DIR (pip --target), beside the installed one, for benchmarks/ab_collector.py.
# Run from the repository root, where the build tools are (the GPU machine: nvcc, the Sanitizer wheel, scikit-build).
set -euo pipefail
rev=${1:?usage: build_revision.sh REV DIR}
dir=${2:?usage: build_revision.sh REV DIR}
src=$(mktemp -d)
trap 'rm -rf "$src"' EXIT
# docs/ too: lsp_server/patterns.md is a link into it.
git archive "$rev" pyproject.toml CMakeLists.txt README.md LICENSE analyzer collector reuselens lsp_server docs |
  tar -x -C "$src"
python3 -m pip install -q --no-deps --no-build-isolation --no-cache-dir --target "$dir" "$src"
find "$dir" -name libreuselens_collector.so
