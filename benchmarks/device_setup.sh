# Sourced by the device scripts (benchmarks/lead_device.sh, tests/gpu/run_on_device.sh) on the GPU machine:
# the runtime wheels its image lacks (carried in .whl/; docs/collector.md, "GPU machine scripts"), then the
# package installed in editable mode, built as pip builds it (engine module, collector, patch fatbin). Editable,
# so that `import reuselens` means the installed package even where the checkout is on sys.path (python -m,
# pytest's rootdir): the checkout's reuselens/ folder holds only the application, not the libraries.
# Leaves REUSELENS_COLLECTOR_LIB set; returns non-zero when the build fails.
reuselens_device_setup() {
  local out=${OUT:-/tmp/reuselens-out}
  mkdir -p "$out"
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir .whl/*.whl || return 1
  python3 -m pip install -q --no-deps --no-build-isolation --no-cache-dir -e . > "$out/pip_build.txt" 2>&1 \
    || { tail -30 "$out/pip_build.txt"; return 1; }
  REUSELENS_COLLECTOR_LIB=$(python3 -c "from reuselens.collector.launcher import find_tool_library as f; print(f())") \
    || return 1
  export REUSELENS_COLLECTOR_LIB
  ls -l "$(dirname "$REUSELENS_COLLECTOR_LIB")" "$(python3 -c 'import reuselens.analyzer._engine as e; print(e.__file__)')"
}
reuselens_device_setup
