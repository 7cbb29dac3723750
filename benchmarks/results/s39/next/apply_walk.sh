# Sourced first by this folder's call scripts: walk_ahead.patch applied to the tree the device call copied (left as
# it is when it is in already), so that device_setup.sh installs the engine with it.
P=benchmarks/results/s39/next/walk_ahead.patch
if git apply --check "$P" 2>/dev/null; then
  git apply "$P" && echo "walk_ahead.patch applied"
elif git apply -R --check "$P" 2>/dev/null; then
  echo "walk_ahead.patch already in the tree"
else
  echo "walk_ahead.patch neither applies nor is in the tree" >&2
  exit 1
fi
