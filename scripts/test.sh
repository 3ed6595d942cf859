#!/usr/bin/env bash
# Installs what is missing, builds everything into build/ and runs the test
# suite (ctest).  Tests that need a GPU skip with a printed reason where
# there is none.  Extra arguments go to ctest (e.g. -R runner).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc 2>/dev/null || echo 2)"
status=0
ctest --test-dir build --output-on-failure "$@" || status=$?
# Say why any test skipped (GPU tests without a GPU).
grep -h '^\[SKIP\]' build/Testing/Temporary/LastTest.log 2>/dev/null | sort -u || true
exit $status
