#!/usr/bin/env bash
# Builds kbench for the lent H200 into build-h200/ (sm_90a only, to save
# compile time), and copies the shared libraries the test binaries need
# that the GPU machine lacks (Criterion and its dependencies) into
# build-h200/lib.  Carry build-h200/run.tgz (the programs without the objects, packed)
# with the device call.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
cmake -S . -B build-h200 -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a >/dev/null
cmake --build build-h200 -j"$(nproc 2>/dev/null || echo 2)"
mkdir -p build-h200/lib
# Everything a test binary links that is not glibc, the C++ runtime or CUDA.
for bin in build-h200/tests/test_*; do
  ldd "$bin" | awk '/=> \// {print $3}'
done | sort -u | grep -Ev '/(libc|libm|libdl|libpthread|librt|libresolv|libstdc\+\+|libgcc_s|libcudart)\.so' |
  while read -r lib; do cp -Lu "$lib" build-h200/lib/; done
# What travels to the GPU machine (64 MiB at most with the checkout): the same layout
# without object files, in build-h200-run/ (carry that; the batch script runs from it).
rm -rf build-h200-run
mkdir -p build-h200-run/plugins build-h200-run/tests/plugins
cp -a build-h200/kbench build-h200/lib build-h200-run/
cp -a build-h200/plugins/*.so build-h200-run/plugins/
cp -a build-h200/tests/plugins/*.so build-h200-run/tests/plugins/
find build-h200/tests -maxdepth 1 -type f -perm -u+x -exec cp -a {} build-h200-run/tests/ \;
du -sh build-h200-run | cut -f1
# The same, packed (36 MB of programs pack to 13 MB): with the checkout's own 33 MB the
# unpacked folder no longer fits the 64 MiB a call carries.  Carry build-h200/run.tgz and
# begin the command with `tar xzf build-h200/run.tgz`.
tar -czf build-h200/run.tgz build-h200-run
du -sh build-h200/run.tgz | cut -f1
