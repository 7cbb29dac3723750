#!/usr/bin/env bash
# Session 31, call 3: the suite, 2 rounds, clean install.
source benchmarks/device_call.sh
short_suite 2
stamp done
