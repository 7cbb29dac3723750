#!/usr/bin/env bash
# For the next session (session 59's device refused every request, then was paused): the parked collector work,
# next/stack_and_grid.patch (applied first: session 58's stack-limit fix and the grid filter, with their tests).
# (1) The grid-identity probe (benchmarks/gridid_probe): is the Sanitizer's gridId the %gridid a kernel reads, for
# plain launches, a device-launched child grid and graph nodes, and when do the graph callbacks come against the
# kernels? (2) cuda-samples tf32TensorCoreGemm under `profile`, collector.log's "stack:" line. (3) The opt-in grid
# filter (REUSELENS_ONE_GRID=1, exported for the rest when the probe's plain launches agree) on cuda-samples
# cdpAdvancedQuicksort, whose child grids stopped the online analysis (session 58, call 3), without and with it.
# (4) The GPU tests (deep_stack.cu and child_grids.cu among them), then ncu side by side as time allows.
#   bash benchmarks/results/s59/next/script.sh   (carry .whl and benchmarks/realapps/breadth3-src)
git apply benchmarks/results/s59/next/stack_and_grid.patch || { echo "the patch does not apply"; exit 1; }
source benchmarks/device_call.sh
nvidia-smi --query-gpu=name --format=csv,noheader
elapsed() { echo $(($(date +%s) - T0)); }
stamp "grid-identity probe"
timeout 60 bash benchmarks/gridid_probe/run.sh /tmp/gridid_probe > /tmp/probe.txt 2>&1; tail -30 /tmp/probe.txt
# The grid filter is what the rest runs with (exported) when the probe's plain launches read the gridId the
# Sanitizer handed LAUNCH_BEGIN; else without it, so that the stack fix is still tested.
sanitizer_ids=$(grep -oP "launch _Z5plain\S* gridId=\K[0-9]+" /tmp/probe.txt | sort -u)
kernel_ids=$(grep -oP "^app: plain \K[0-9]+" /tmp/probe.txt | sort -u)
if [ -n "$kernel_ids" ] && [ "$sanitizer_ids" = "$kernel_ids" ]; then
  export REUSELENS_ONE_GRID=1; echo "grid ids agree: REUSELENS_ONE_GRID=1 from here on"
else
  echo "grid ids differ or are missing (Sanitizer: $sanitizer_ids; kernel: $kernel_ids): the grid filter stays off"
fi
S=benchmarks/realapps/breadth3-src/cuda-samples
stamp "tf32TensorCoreGemm: build, then profile"
nvcc -O3 -lineinfo -arch=sm_90 -I$S/Common -o /tmp/tf32 $S/Samples/3_CUDA_Features/tf32TensorCoreGemm/tf32TensorCoreGemm.cu 2>&1 |
  grep -v warning | head -3
timeout 90 reuselens profile --run-dir /tmp/tf32run -- /tmp/tf32 2>&1 | grep -E "TFLOPS|warning|error|findings|run written" | head -6
grep -E "stack:|error|exit: [0-9]+ launches" /tmp/tf32run/collector.log | head -4 | cut -c1-220
cp /tmp/tf32run/collector.log "$OUT/tf32_collector.log" 2>/dev/null
stamp "cdpAdvancedQuicksort: build, then profile without and with REUSELENS_ONE_GRID=1"
C=$S/Samples/3_CUDA_Features/cdpAdvancedQuicksort
nvcc -O3 -lineinfo -arch=sm_90 -rdc=true -I$S/Common -o /tmp/cdpq $C/cdpAdvancedQuicksort.cu $C/cdpBitonicSort.cu -lcudadevrt 2>&1 |
  grep -v warning | head -3
one_grid=${REUSELENS_ONE_GRID:-0}
for one in 0 1; do
  REUSELENS_ONE_GRID=$one timeout 90 reuselens profile --run-dir /tmp/cdpq$one -- /tmp/cdpq -size=262144 2>&1 |
    grep -E "PASS|FAIL|rror|findings|run written" | head -6 | cut -c1-300
  grep -E "not recorded|error|warp index|exit: [0-9]+ launches" /tmp/cdpq$one/collector.log | head -6 | cut -c1-240
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print('launches', len(r['launches']), 'other_grid_records', sum(l.get('other_grid_records', 0) for l in r['launches']), 'status', r.get('status'))" /tmp/cdpq$one/run.json
  ls -la /tmp/cdpq$one | head -12
  mkdir -p "$OUT/cdpq$one" && cp /tmp/cdpq$one/collector.log /tmp/cdpq$one/run.json "$OUT/cdpq$one/" 2>/dev/null
  cp /tmp/cdpq$one/report.json "$OUT/cdpq$one/" 2>/dev/null
done
export REUSELENS_ONE_GRID=$one_grid
gpu_tests
[ "$(elapsed)" -lt 230 ] && fidelity_against_ncu
stamp done
