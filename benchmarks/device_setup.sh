# Sourced by the device scripts (benchmarks/lead_device.sh, tests/gpu/run_on_device.sh) on the GPU machine:
# the runtime wheels its image lacks (carried in .whl/, README "Measuring on the GPU machine"), then the package
# built as pip builds it (engine module, collector, patch fatbin) into /tmp/rl. The checkout itself is never on
# sys.path: its reuselens/ folder holds only the application, and would hide the installed libraries.
# Leaves PYTHONPATH, PATH and REUSELENS_COLLECTOR_LIB set; returns non-zero when the build fails.
reuselens_device_setup() {
  local out=${OUT:-/tmp/reuselens-out}
  mkdir -p "$out"
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    || return 1
  python3 -m pip install -q --no-deps --no-build-isolation --no-cache-dir --target /tmp/rl . > "$out/pip_build.txt" 2>&1 \
    || { tail -30 "$out/pip_build.txt"; return 1; }
  export PYTHONPATH=/tmp/rl:/tmp/site PATH=/tmp/rl/bin:$PATH
  export REUSELENS_COLLECTOR_LIB=/tmp/rl/reuselens/collector/native/libreuselens_collector.so
  ls -l /tmp/rl/reuselens/collector/native/ /tmp/rl/reuselens/analyzer/_engine*.so
}
reuselens_device_setup
