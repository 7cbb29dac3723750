#!/usr/bin/env bash
# For the next session (session 58's device budget ran out before it could run): the collector's stack-limit fix
# (next/stack_limit.patch, applied first) on the GPU. cuda-samples tf32TensorCoreGemm (call 3's fault) under `profile`
# from the installed package, collector.log's "stack:" line (the driver took cuCtxSetLimit inside LAUNCH_BEGIN); the
# GPU tests (tests/gpu/deep_stack.cu among them); then, as time allows, ncu side by side.
#   bash benchmarks/results/s58/next/call6/script.sh   (carry .whl and benchmarks/realapps/breadth3-src)
git apply benchmarks/results/s58/next/stack_limit.patch || { echo "the patch does not apply"; exit 1; }
source benchmarks/device_call.sh
nvidia-smi --query-gpu=name --format=csv,noheader
elapsed() { echo $(($(date +%s) - T0)); }
S=benchmarks/realapps/breadth3-src/cuda-samples
stamp "tf32TensorCoreGemm: build, then profile"
nvcc -O3 -lineinfo -arch=sm_90 -I$S/Common -o /tmp/tf32 $S/Samples/3_CUDA_Features/tf32TensorCoreGemm/tf32TensorCoreGemm.cu 2>&1 |
  grep -v warning | head -3
timeout 60 reuselens profile --run-dir /tmp/tf32run -- /tmp/tf32 2>&1 | grep -E "TFLOPS|warning|error|findings|run written" | head -6
grep -E "stack:|error|exit: [0-9]+ launches" /tmp/tf32run/collector.log | head -4 | cut -c1-220
cp /tmp/tf32run/collector.log "$OUT/tf32_collector.log" 2>/dev/null
gpu_tests
[ "$(elapsed)" -lt 150 ] && fidelity_against_ncu
stamp done
