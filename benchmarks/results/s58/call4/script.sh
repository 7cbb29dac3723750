#!/usr/bin/env bash
# Session 58, call 4: why cuda-samples tf32TensorCoreGemm faults under the collector (call 3) and not under memcheck:
# its kernels take 1,280-1,304 bytes of stack (EIATTR frame sizes), above the 1,024-byte default limit, and the
# device patch's functions take 96-184 bytes more each. The sample built with stack.cu (the limit raised before main
# when STACK is set), natively and under `profile --no-analyze`, at the default and at 2, 4 KiB.
#   bash benchmarks/results/s58/call4/script.sh   (carry .whl and benchmarks/realapps/breadth3-src)
source benchmarks/device_call.sh
S=benchmarks/realapps/breadth3-src/cuda-samples
stamp "build"
nvcc -O3 -lineinfo -arch=sm_90 -I$S/Common -o /tmp/tf32 $S/Samples/3_CUDA_Features/tf32TensorCoreGemm/tf32TensorCoreGemm.cu \
  benchmarks/results/s58/call4/stack.cu 2>&1 | grep -v warning | head -5
cuobjdump -res-usage /tmp/tf32 | grep -A1 async_copy | tail -1
for stack in "" 1536 2048 4096; do
  stamp "STACK=${stack:-default}"
  rm -rf /tmp/d_$stack
  STACK=$stack timeout 60 reuselens profile --no-analyze --run-dir /tmp/d_$stack -- /tmp/tf32 2>&1 | grep -E "stack limit|TFLOPS|warning|error|Result" | head -5
  grep -E "error|exit: [0-9]+ launches" /tmp/d_$stack/collector.log | head -3 | cut -c1-200
done
stamp done
