#!/usr/bin/env bash
# Session 24, call 7: benchmarks/device_call.sh's two checks (fidelity_against_ncu, short_suite), run once at the
# final code to show that they work.
# Run from the repository root with .whl/, .whl-lsp/ and benchmarks/realapps/src carried:
#   bash benchmarks/results/h200-2026-12-04-s24/call7/script.sh
source benchmarks/device_call.sh
fidelity_against_ncu
short_suite 1
stamp done
