#!/usr/bin/env bash
# Builds every plugin's lab probes (plugins/*/lab/: programs that measured something once,
# kept so NOTES figures can be reproduced) into build-lab/lab/, so they cannot rot.  Not
# tests and not shipped; CI runs this.  Run a probe from the repository root as its file's
# head says, e.g. build-lab/lab/md/dt_probe 10 200 3000 7 0.01 0.005.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
cmake -S . -B build-lab -DCMAKE_BUILD_TYPE=Release -DKBENCH_LAB=ON -DKBENCH_TESTS=OFF \
  -DCMAKE_CUDA_ARCHITECTURES=90a >/dev/null
cmake --build build-lab --target kbench_lab -j"$(nproc 2>/dev/null || echo 2)"
find build-lab/lab -maxdepth 2 -type f -perm -u+x | sort
