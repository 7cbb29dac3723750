#!/usr/bin/env bash
# Session 48, call 2: the breadth set's 16 new apps (9 PolyBench kernels, 7 cuda-samples; call 1 ran the other 35)
# and PolyBench gramschmidt and adi again (their reloads have the earlier-loop shape: loops read off the SASS there)
# on main with this session's rules, from a user's install; breadth_check.py names every defect, and the reports
# come back for the review of the findings on code the product had not seen. (Asked for five times as the whole
# 51-app set: every start was refused, and the budget left allows this much.)
#   LIMIT=240 bash benchmarks/results/s48/call2/script.sh   (carry .whl, benchmarks/realapps/breadth-src)
source benchmarks/device_call.sh
LIMIT=${LIMIT:-240}
nvidia-smi --query-gpu=name --format=csv,noheader
stamp "clean install"
timeout 200 bash benchmarks/clean_install.sh /tmp/clean | tail -1
breadth_set $((LIMIT - $(date +%s) + T0 - 25)) --apps \
  pb_gramschm,pb_adi,pb_2dconv,pb_2mm,pb_3mm,pb_atax,pb_bicg,pb_covar,pb_gesummv,pb_syr2k,pb_syrk,cs_alignedTypes,cs_histogram,cs_scan,cs_convolutionSeparable,cs_scalarProd,cs_BlackScholes,cs_quasirandomGenerator
stamp done
