#!/usr/bin/env bash
# A user's install on the GPU machine, for the overhead benchmarks: reuselens built as a wheel and installed into a
# fresh virtual environment, whose console script is then what realapps.py runs (`--reuselens VENV/bin/reuselens`).
#
# Why: the GPU image's interpreter runs numba-cuda's start-up hook (a .pth file of its site-packages) at every
# Python start, 60-80 ms on the H200 host (session 21, call 1: `python3 -c pass` 82 ms, `python3 -S -c pass` 13 ms),
# and the device scripts install reuselens in editable mode, whose import finder (another .pth hook) runs at every
# start too. A user who runs `pip install reuselens` in a virtual environment pays neither, and the object-level
# mode's cost on a 0.3-0.4 s app (issue 18) is mostly the launcher's start-up.
#
# The environment sees the image's packages (numpy, pyelftools, the Sanitizer wheel, ...) through a path line, which
# adds the folder to sys.path without running the .pth hooks in it; reuselens itself comes from the wheel, with its
# bytecode compiled at install as pip does. The collector finds libsanitizer-public.so at site-packages/nvidia (its
# RPATH, collector/native/CMakeLists.txt), linked to the image's.
#
#   bash benchmarks/clean_install.sh /tmp/clean [WHEEL]   # prints the console script's path last
set -euo pipefail
VENV=${1:?usage: clean_install.sh VENV_DIR [WHEEL]}
WHEELS=$(mktemp -d)
if [ -n "${2:-}" ]; then
  cp "$2" "$WHEELS/"
else
  # The build folder of the editable install (pyproject's build-dir) is reused: only the packaging is new.
  python3 -m pip wheel -q --no-deps --no-build-isolation --no-cache-dir -w "$WHEELS" . > "$WHEELS/build.txt" 2>&1 \
    || { tail -20 "$WHEELS/build.txt"; exit 1; }
fi
rm -rf "$VENV"
python3 -m venv --without-pip "$VENV"
IMAGE_SP=$(python3 -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
VENV_SP=$("$VENV/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
echo "$IMAGE_SP" > "$VENV_SP/zz_image_packages.pth"
python3 -m pip install -q --no-deps --no-index --target "$VENV_SP" "$WHEELS"/reuselens-*.whl
ln -sfn "$IMAGE_SP/nvidia" "$VENV_SP/nvidia"
rm -rf "$VENV_SP/bin"  # pip --target writes the console script there, for this interpreter: the venv gets its own
printf '#!%s\nimport sys\nfrom reuselens.cli.main import entry\nsys.exit(entry())\n' "$VENV/bin/python" \
  > "$VENV/bin/reuselens"
chmod +x "$VENV/bin/reuselens"
rm -rf "$WHEELS"
# Fail here, not in the benchmark, when the install does not resolve to the wheel's copy or cannot load the collector.
(cd / && "$VENV/bin/python" -c "
import reuselens.cli.main, reuselens.collector.launcher as l, sys
assert reuselens.cli.main.__file__.startswith(sys.argv[1]), reuselens.cli.main.__file__
print(l.find_tool_library(env={}), file=sys.stderr)" "$VENV_SP")
echo "$VENV/bin/reuselens"
