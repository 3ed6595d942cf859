#!/usr/bin/env bash
# The whole test suite under AddressSanitizer (with LeakSanitizer) and UBSan:
# builds build-asan/ with KBENCH_SANITIZE=ON (the harness, the plugins' host
# code and the tests; sm_90a only, to save compile time) and runs ctest
# there, the kernels' CPU emulations included (label emu, tests/emu: this is
# the build that has them).  Any sanitizer finding stops its process and
# fails its test.  Extra arguments go to ctest (e.g. -R faults, -L emu).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKBENCH_SANITIZE=ON \
  -DCMAKE_CUDA_ARCHITECTURES="${KBENCH_ASAN_ARCHS:-90a}" >/dev/null
cmake --build build-asan -j"$(nproc 2>/dev/null || echo 2)"
status=0
ctest --test-dir build-asan --output-on-failure "$@" || status=$?
grep -h '^\[SKIP\]' build-asan/Testing/Temporary/LastTest.log 2>/dev/null | sort -u || true
exit $status
