#!/usr/bin/env bash
set -uo pipefail
cd "$(dirname "$0")/.."; ROOT=$PWD
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
BUDGET_S=270 bash tests/gpu/run_on_device.sh quick > /tmp/quick.txt 2>&1; echo "quick rc $?"
grep -E '^== |->|mismatch|median|FAIL|rror' /tmp/quick.txt | tail -45
export PYTHONPATH=$ROOT:/tmp/site
REUSELENS_COLLECTOR_LIB=$ROOT/build/device/libreuselens_collector.so timeout 240 python3 -m pytest -q -p no:cacheprovider -rs \
  tests/collector/test_gpu.py tests/gpu/patterns tests/patterns/test_pattern_suite.py tests/engine > "$OUT/gpu_pytest.txt" 2>&1
echo "pytest rc $?"; tail -8 "$OUT/gpu_pytest.txt"
grep -rh 'copy threads\|drain thread' /tmp/reuselens-res/*/collector.log 2>/dev/null | head -3
