#!/usr/bin/env bash
# Builds kbench for the lent H200 into build-h200/ (sm_90a only, to save
# compile time), with the shared libraries the packed test binaries need
# that the GPU machine lacks (Criterion and its dependencies).  Carry
# build-h200/run.tar.xz (the programs without the objects; what it holds is
# chosen below) with the device call.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
cmake -S . -B build-h200 -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a >/dev/null
cmake --build build-h200 -j"$(nproc 2>/dev/null || echo 2)"
# What travels to the GPU machine (64 MiB at most with the checkout): the same layout
# without object files, in build-h200-run/ (the batch script runs from it), packed into
# build-h200/run.tar.xz (xz: half of gzip's size for the plugins).  Carry that and begin the
# command with `tar xf build-h200/run.tar.xz` (or, where the machine has no xz,
# `python3 -m tarfile -e build-h200/run.tar.xz .`).
#   PACK="sgemm md"  only these plugins (and their GPU tests); default: all of them
#   TESTS=0          no test binaries, and none of the libraries only they need (about 4 MB
#                    packed): kbench itself needs only the CUDA runtime
#   ALT="DIR..."     other builds' plugin folders, each copied to build-h200-run/plugins-NAME/
#                    (NAME: the folder's name) for the lab's A/B steps (--plugins)
rm -rf build-h200-run
mkdir -p build-h200-run/plugins
cp -a build-h200/kbench build-h200-run/
if [ -n "${PACK:-}" ]; then
  for name in $PACK; do
    cp -a "build-h200/plugins/libkbench_$name.so" build-h200-run/plugins/
  done
else
  cp -a build-h200/plugins/*.so build-h200-run/plugins/
fi
if [ "${TESTS:-1}" != 0 ]; then
  mkdir -p build-h200-run/tests/plugins build-h200-run/lib
  cp -a build-h200/tests/plugins/*.so build-h200-run/tests/plugins/
  if [ -n "${PACK:-}" ]; then
    for name in $PACK; do
      t=build-h200/tests/test_${name}_gpu
      [ -e "$t" ] && cp -a "$t" build-h200-run/tests/
    done
  else
    find build-h200/tests -maxdepth 1 -type f -perm -u+x -exec cp -a {} build-h200-run/tests/ \;
  fi
  # The libraries the packed test binaries link that the GPU machine lacks (Criterion and
  # its dependencies): everything that is not glibc, the C++ runtime or CUDA.
  for bin in build-h200-run/tests/test_*; do
    [ -e "$bin" ] && ldd "$bin" | awk '/=> \// {print $3}'
  done | sort -u |
    grep -Ev '/(libc|libm|libdl|libpthread|librt|libresolv|libstdc\+\+|libgcc_s|libcudart)\.so' |
    while read -r lib; do cp -L "$lib" build-h200-run/lib/; done
fi
for dir in ${ALT:-}; do
  mkdir -p "build-h200-run/plugins-$(basename "$dir")"
  cp -a "$dir"/*.so "build-h200-run/plugins-$(basename "$dir")/"
done
rm -f build-h200/run.tgz
XZ_OPT=-T0 tar -cJf build-h200/run.tar.xz build-h200-run
# The call's limit counts the checkout's tracked and untracked files too.
checkout=$(git ls-files -z --cached --others --exclude-standard | xargs -0 du -cb 2>/dev/null |
  tail -1 | cut -f1)
pack=$(stat -c %s build-h200/run.tar.xz)
echo "build-h200/run.tar.xz: $((pack / 1048576)) MiB; with the checkout $(((checkout + pack) / 1048576)) of 64 MiB"
if [ $((checkout + pack)) -gt $((64 * 1048576)) ]; then
  echo "too large to carry: pack less (PACK=..., TESTS=0)" >&2
  exit 1
fi
