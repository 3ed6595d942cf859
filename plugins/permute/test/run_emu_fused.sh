#!/bin/sh
# Checks kernels/04_fused.cu on the CPU: the kernel compiled as C++ against the sgemm plugin's
# test/emu_cuda.h, with the plugin's host code (gen.c, plan_*.c) and emu_fused.cpp, once with
# ASan+UBSan (out-of-bounds global and shared memory) and once with TSan (a missing
# __syncthreads shows as a data race; removing the loop's barrier was seen to trip it).
# No GPU needed; about 1 minute (ASan) and 3 minutes (TSan) on 2 cores.
#   plugins/permute/test/run_emu_fused.sh [asan|tsan|all]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
repo=$(cd "$root/../.." && pwd)
work=${TMPDIR:-/tmp}/permute-emu
mode=${1:-all}
cxx=${CXX:-g++}
cc=${CC:-gcc}
mkdir -p "$work"

build() { # $1: name, $2...: sanitizer flags
    name=$1
    shift
    inc="-I$root -I$root/kernels -I$repo/harness/include -isystem /usr/local/cuda/include"
    # kernel<<<grid, block, smem, stream>>>(args) -> emu_launch(kernel, grid, ...)(args)
    sed -E 's/([A-Za-z_][A-Za-z_0-9]*(<[^<>]*>)?)<<<(.*)>>>\(/emu_launch(\1, \3)(/' \
        "$root/kernels/04_fused.cu" >"$work/fused.cpp"
    printf '#include <algorithm>\n#include <cmath>\nusing std::min;\n%s\n' \
        'static inline float fma(float a, float b, float c) { return std::fmaf(a, b, c); }' \
        >"$work/emu_math.h"
    $cxx -std=c++20 -O1 -g "$@" -include "$repo/plugins/sgemm/test/emu_cuda.h" \
        -include "$work/emu_math.h" $inc -Wno-unknown-pragmas -Wno-attributes \
        -c "$work/fused.cpp" -o "$work/fused.$name.o"
    printf '#include "%s.c"\n' gen plan_model plan_lean plan_tiled plan_elem plan_fused \
        >"$work/host.c"
    $cc -O1 -g "$@" $inc -c "$work/host.c" -o "$work/host.$name.o"
    $cxx -std=c++20 -O1 -g "$@" $inc -c "$here/emu_fused.cpp" -o "$work/emu_fused.$name.o"
    $cxx "$@" -pthread "$work/fused.$name.o" "$work/host.$name.o" "$work/emu_fused.$name.o" \
        -lm -o "$work/emu_fused.$name"
}

status=0
if [ "$mode" = asan ] || [ "$mode" = all ]; then
    build asan -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
    "$work/emu_fused.asan" || status=1
fi
if [ "$mode" = tsan ] || [ "$mode" = all ]; then
    build tsan -fsanitize=thread
    TSAN_OPTIONS="halt_on_error=1" "$work/emu_fused.tsan" || status=1
fi
exit $status
