#!/usr/bin/env bash
# bundle_perf.sh [DIR]: this machine's `perf` with every library it loads, the dynamic loader included, copied into
# DIR (default .perf, ignored by git), and DIR/perf, a wrapper that runs it through the copied loader: for the GPU
# machine, whose image has no perf (session 36). Carry DIR.tar.xz, written last, with the device call (DIR itself
# and the tree are more than a call carries), unpack it there and run DIR/perf; through its own loader and libraries
# it needs nothing of the image but a kernel that allows perf_event_open (benchmarks/results/h100-2026-12-05-s36/
# next/perf.sh checks that first; on the GPU host it allows cpu-clock sampling, no hardware counters).
set -euo pipefail
dir=${1:-.perf}
perf_bin=$(command -v perf) || { echo "bundle_perf.sh: no perf on this machine" >&2; exit 1; }
rm -rf "$dir"
mkdir -p "$dir/lib"
cp "$(readlink -f "$perf_bin")" "$dir/perf.bin"
ldd "$perf_bin" | awk '/=>/ { print $3 } /ld-linux/ { print $1 }' | while read -r lib; do
  [ -e "$lib" ] && cp "$(readlink -f "$lib")" "$dir/lib/$(basename "$lib")"
done
cat > "$dir/perf" <<'WRAP'
#!/usr/bin/env bash
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
exec "$here/lib/ld-linux-x86-64.so.2" --library-path "$here/lib" "$here/perf.bin" "$@"
WRAP
chmod +x "$dir/perf"
du -sh "$dir" | cut -f1 | sed "s#^#$dir: #"
# 33 MB beside a 41 MB tree is more than the 64 MiB a device call carries: the call carries this archive (8 MB)
# instead and unpacks it first (`tar xJf .perf.tar.xz`).
tar cJf "$dir.tar.xz" -C "$(dirname "$dir")" "$(basename "$dir")"
du -sh "$dir.tar.xz" | cut -f1 | sed "s#^#$dir.tar.xz: #"
