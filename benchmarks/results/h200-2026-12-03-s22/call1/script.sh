#!/usr/bin/env bash
# Session 22, call 1: session 21's prepared engine experiment (block owners' items carry a global record's block and
# warp), run as prepared: benchmarks/results/h200-2026-12-03-s21/next-blockitem/script.sh.
# Run from the repository root with .whl/ and benchmarks/realapps/src carried:
#   bash benchmarks/results/h200-2026-12-03-s22/call1/script.sh
exec bash benchmarks/results/h200-2026-12-03-s21/next-blockitem/script.sh
