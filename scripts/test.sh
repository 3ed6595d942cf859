#!/usr/bin/env bash
# Installs what is missing, builds everything into build/ and runs the test
# suite (ctest).  Tests that need a GPU skip with a printed reason where
# there is none; a failure fails whatever skipped beside it
# (tests/criterion-run.sh).  The kernels' CPU emulations run in the sanitizer
# build (scripts/test-asan.sh), not here.  Extra arguments go to ctest (e.g.
# -R runner, -L unit).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc 2>/dev/null || echo 2)"
status=0
ctest --test-dir build --output-on-failure -j"$(nproc 2>/dev/null || echo 2)" "$@" || status=$?
# Say why every skipped test skipped (GPU tests without a GPU, CPU tests that cannot run
# here): every binary runs with --verbose, so each skip is in the log with its reason.
grep -h '^\[SKIP\]' build/Testing/Temporary/LastTest.log 2>/dev/null | sort -u || true
exit $status
