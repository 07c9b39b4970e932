#!/bin/bash
# bazel run -c opt //bench:run -- [options]   (see bench/run.py)
set -euo pipefail
here="${RUNFILES_DIR:-$0.runfiles}/provisioner"
[ -f "$here/bench/run.py" ] || here="$PWD"
cd "$here"
exec python3 bench/run.py ${BENCH_ONLY:+--only "$BENCH_ONLY"} "$@"
