#!/usr/bin/env bash
# build_patched.sh PATCH DIR [-R]: the package of the working tree with PATCH applied (-R: taken back), built as
# pip builds it and installed into DIR (pip --target), beside the installed one, for benchmarks/ab_collector.py and
# benchmarks/replay_speed.py --engine. Prints the tool library's and the engine module's paths. For the GPU machine,
# whose checkout may hold no git objects of recent commits, where build_revision.sh cannot build a revision
# (docs/collector.md, "GPU machine scripts"). Run from the repository root.
set -euo pipefail
patch=$(realpath "${1:?usage: build_patched.sh PATCH DIR [-R]}")
dir=${2:?usage: build_patched.sh PATCH DIR [-R]}
reverse=${3:-}
src=$(mktemp -d)
trap 'rm -rf "$src"' EXIT
# docs/ too: lsp_server/patterns.md is a link into it.
cp -r pyproject.toml CMakeLists.txt README.md LICENSE analyzer collector reuselens lsp_server docs "$src"/
(cd "$src" && git apply $reverse "$patch")
python3 -m pip install -q --no-deps --no-build-isolation --no-cache-dir --target "$dir" "$src"
find "$dir" -name libreuselens_collector.so
find "$dir" -name "_engine*.so"
