#!/usr/bin/env bash
# Session 24, call 8: the final code after the review mend of the segment flags (RegionShadow::segment_of):
# fidelity against ncu and one round of the suite from a user's install.
#   bash benchmarks/results/h200-2026-12-04-s24/call8/script.sh
source benchmarks/device_call.sh
fidelity_against_ncu
short_suite 1
stamp done
