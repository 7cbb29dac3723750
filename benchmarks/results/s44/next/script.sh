#!/usr/bin/env bash
# For session 45 (session 44's call 5, which got no machine): what the Sanitizer's subscription costs by itself,
# domain by domain (benchmarks/subscribe_probe through teardown.py's passive mode), beside the collector attached
# with nothing to instrument. Session 44's calls 3 and 4 could not build the probe: its script looked for the
# Sanitizer only in the wheel, while the GPU machine's build of the collector takes the CUDA toolkit's
# compute-sanitizer/ (the script now looks there too; checked on the development machine with a toolkit-like
# folder, not yet on the GPU machine).
# Then, with time left, glibc's malloc on transparent huge pages (GLIBC_TUNABLES=glibc.malloc.hugetlb=1, no code
# change) paired with the default on mergeSort and sortingNetworks: the engine's per-block states and shared shadows
# are malloc'd on 4 KiB pages, and on this host a 2 MiB working set read at random costs 25 ns a load on 4 KiB pages
# against 10 on 2 MiB ones (session 37's latency.txt). Last, sortingNetworks' launcher phases under the full profile
# and under --no-analyze: its full profile took 0.8-3.5 s longer than its collection in three calls (sessions
# 43-44), while what runs after the app's exit measured 0.62 s (session 43, call 4).
#   LIMIT=300 bash benchmarks/results/s44/next/script.sh   (carry .whl and benchmarks/realapps/src)
source benchmarks/device_call.sh
LIMIT=${LIMIT:-300}
REPO=$PWD
left() { [ $(($(date +%s) - T0)) -lt $((LIMIT - $1)) ]; }
stamp "clean install, the probe library, builds"
clean=$(timeout 200 bash benchmarks/clean_install.sh /tmp/clean | tail -1) || { echo "clean install failed"; exit 1; }
probe=$(bash benchmarks/subscribe_probe/build.sh /tmp/probe) || { echo "the probe did not build"; exit 1; }
echo "probe: $probe"; ldd "$probe" | grep sanitizer
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rf --check-only --jobs 16 \
  --apps cs_matrixMul,cs_transpose,shoc_sort,pb_lu,cs_sortingNetworks,cs_mergeSort > $OUT/build.txt 2>&1 || tail -5 $OUT/build.txt
cd /tmp/rf/build || exit 1
P=RL_PROBE_DOMAINS
stamp "the probe, subscribed to all, in one matrixMul run: what it says"
RL_PROBE_DOMAINS=all LD_PRELOAD=$probe CUDA_INJECTION64_PATH=$probe timeout 30 ./cs_matrixMul \
  $(manifest_args cs_matrixMul) 2>&1 >/dev/null | grep subscribe_probe
for app in cs_matrixMul shoc_sort cs_transpose pb_lu; do
  left 30 || break
  stamp "the subscription's parts: $app, 3 rounds"
  timeout $((LIMIT - $(date +%s) + T0 - 5)) python3 $REPO/benchmarks/teardown.py --rounds 3 --reuselens $clean \
    --timeout 30 --library "$probe" --json $OUT/probe_$app.json \
    --modes "native,passive,passive:$P=none,passive:$P=resource,passive:$P=launch,passive:$P=memcpy+memset,passive:$P=api,passive:$P=all,attach" \
    -- ./$app $(manifest_args $app) 2>&1 | tail -10
done
stamp "malloc on huge pages: does the tunable take here"
ldd --version | head -1; cat /sys/kernel/mm/transparent_hugepage/enabled
GLIBC_TUNABLES=glibc.malloc.hugetlb=1 python3 -c "
import ctypes
libc = ctypes.CDLL(None); libc.malloc.restype = ctypes.c_void_p
blocks = [libc.malloc(16384) for _ in range(8192)]
for b in blocks: ctypes.memset(b, 1, 16384)
print('128 MiB of 16 KiB blocks:', [l.split()[1] + ' kB' for l in open('/proc/self/smaps_rollup') if 'AnonHugePages' in l])
"
cd /tmp/rf/build
for spec in cs_mergeSort:2 cs_sortingNetworks:1; do
  app=${spec%:*}
  left 60 || break
  stamp "malloc on huge pages against the default: $app, ${spec#*:} rounds"
  timeout $((LIMIT - $(date +%s) + T0 - 5)) python3 $REPO/benchmarks/teardown.py --rounds ${spec#*:} --reuselens $clean \
    --timeout 60 --json $OUT/hugetlb_$app.json --modes "native,collect,collect:GLIBC_TUNABLES=glibc.malloc.hugetlb=1" \
    -- ./$app $(manifest_args $app) 2>&1 | tail -4
done
cd /tmp/rf/build
for mode in reuse no-analyze; do
  left 45 || break
  stamp "launcher phases: cs_sortingNetworks, --mode $mode, 1 round"
  timeout $((LIMIT - $(date +%s) + T0 - 5)) python3 $REPO/benchmarks/launcher_phases.py --rounds 1 --mode $mode \
    -- ./cs_sortingNetworks $(manifest_args cs_sortingNetworks) 2>&1 | tail -20
done
cd $REPO
stamp done
