#!/bin/sh
# Checks the hand-written sgemm kernels (01..09) on the CPU: each kernels/NN_*.cu is compiled as
# C++ against test/emu_cuda.h, once with ASan+UBSan (out-of-bounds global and shared memory)
# and once with TSan (a missing __syncthreads shows as a data race).  No GPU needed.
#   plugins/sgemm/test/run_emu.sh [asan|tsan|all] [variant]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
work=${TMPDIR:-/tmp}/sgemm-emu
mode=${1:-all}
only=${2:-}
cxx=${CXX:-g++}
mkdir -p "$work"

build() { # $1: name, $2...: sanitizer flags
    name=$1
    shift
    objs=""
    for f in "$root"/kernels/0[1-9]_*.cu; do
        b=$(basename "$f" .cu)
        # kernel<<<grid, block, smem, stream>>>(args) -> emu_launch(kernel, grid, ...)(args)
        sed -E 's/([A-Za-z_][A-Za-z_0-9]*)<<<(.*)>>>\(/emu_launch(\1, \2)(/' "$f" >"$work/$b.cpp"
        $cxx -std=c++20 -O1 -g "$@" -DSGEMM_HOST_EMULATION -include "$here/emu_cuda.h" \
            -I"$root/kernels" -I"$root" -isystem /usr/local/cuda/include \
            -Wno-unknown-pragmas -Wno-attributes -c "$work/$b.cpp" -o "$work/$b.$name.o"
        objs="$objs $work/$b.$name.o"
    done
    $cxx -std=c++20 -O1 -g "$@" -I"$root" -isystem /usr/local/cuda/include \
        -c "$here/emu_test.cpp" -o "$work/emu_test.$name.o"
    $cxx "$@" -pthread $objs "$work/emu_test.$name.o" -o "$work/emu_test.$name"
}

status=0
if [ "$mode" = asan ] || [ "$mode" = all ]; then
    build asan -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
    "$work/emu_test.asan" $only || status=1
fi
if [ "$mode" = tsan ] || [ "$mode" = all ]; then
    build tsan -fsanitize=thread
    TSAN_OPTIONS="halt_on_error=1" "$work/emu_test.tsan" $only || status=1
fi
exit $status
