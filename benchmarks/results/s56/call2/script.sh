#!/usr/bin/env bash
# Session 56, call 2: the callee-PC fix (19a15a1) on the GPU: the GPU tests (the microbenchmark's noinline_caller
# among them), then the breadth2 apps whose findings call 1 left on no source line (cs_interval: recursion;
# cs_newdelete: virtual calls) and one with device launches (cs_cdpQuadtree), natively and under `profile`.
#   bash benchmarks/results/s56/call2/script.sh
#   (carry .whl and benchmarks/realapps/breadth2-src)
source benchmarks/device_call.sh
nvidia-smi --query-gpu=name --format=csv,noheader
gpu_tests
stamp "clean install"
timeout 200 bash benchmarks/clean_install.sh /tmp/clean | tail -1
BREADTH_MANIFEST=benchmarks/realapps/breadth2.json BREADTH_SRC=benchmarks/realapps/breadth2-src breadth_set 150 \
  --apps cs_interval,cs_newdelete,cs_cdpQuadtree
stamp done
