#!/usr/bin/env bash
# The first-user walk of issue #16, by hand: a fresh clone of this checkout at a mktemp -d path, a fresh venv,
# `pip install .`, then the CLI with good and bad input; prints each command, its exit status and stderr.
# Not part of .ci/run (it takes a full non-editable install); run it before closing CLI work.
set -u
W=$(mktemp -d /tmp/rl-fresh.XXXXXX); export TMPDIR=$W/tmp; mkdir -p $TMPDIR
git clone -q "$(git -C "$(dirname "$0")" rev-parse --show-toplevel)" $W/rl && cd $W/rl
python3 -m venv $W/venv && source $W/venv/bin/activate && pip install -q --upgrade pip 2>/dev/null
( time pip install -q . ) 2>&1 | grep -v WARNING | tail -3
cd $W
run() { echo "\$ reuselens $*"; reuselens "$@" > $W/out.txt 2> $W/err.txt; rc=$?; echo "  exit $rc; stderr: $(head -c 300 $W/err.txt | tr '\n' '|')"; }
run demo --output $W/demo
head -3 $W/out.txt
grep -o '"file": "[^"]*demo.cu"' $W/demo/report.json | sort -u | head -2
run analyze $W/demo --quiet; grep -o '"file": "[^"]*demo.cu"' $W/demo/report.json | sort -u | head -2
run report $W/demo -o $W/missing/x.txt
run graph $W/demo --kernel k0 -o $W/missing/x.html
touch $W/afile; run demo --output $W/afile
run lines $W/demo --kernel no_such_kernel_xyz
run report $W/demo --top 0
run report $W/demo --top -1
run graph $W/demo --kernel k0 --format dot; grep -m2 "label" $W/out.txt | cut -c1-160
cp -r $W/demo $W/broken; echo '{"format": "reuselens-run", "version": 99}' > $W/broken/run.json
run analyze $W/broken; run report $W/broken; run lines $W/broken
run profile --run-dir $W/p -- /bin/false
run diff $W/demo $W/demo
run report $W/demo --delta 0.5 --top 3
