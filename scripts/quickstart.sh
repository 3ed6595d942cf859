#!/usr/bin/env bash
# Installs what is missing, builds, and runs profiles/default.ini: every
# variant with a GPU, the host variants (device ones recorded as skipped)
# without one.  Prints where the results and the report went.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc 2>/dev/null || echo 2)"
status=0
results=$(build/kbench run profiles/default.ini "$@") || status=$?
if [ -n "$results" ] && [ -f "$results" ]; then
  build/kbench report "$results" || true
fi
exit $status
