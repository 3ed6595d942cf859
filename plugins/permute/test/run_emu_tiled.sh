#!/bin/sh
# Checks kernels/02_tiled.cu on the CPU: the kernel's own source compiled as C++ against
# test/emu_tiled.h, with the plugin's host code (gen.c, plan_*.c) and emu_tiled.cpp, once with
# ASan+UBSan (out-of-bounds global and shared memory: the launch's dynamic shared memory is a
# heap block of exactly its size; CUDA threads as fibers) and once with TSan on fewer cases
# (CUDA threads as OS threads: a missing __syncthreads shows as a data race), the two at once.
# No GPU needed; ctest runs it (permute_tiled_emu).
#   plugins/permute/test/run_emu_tiled.sh [asan|tsan|all]
# KERNEL=path compiles another copy of the kernel (to show the check bites on a known bug).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
repo=$(cd "$root/../.." && pwd)
work=${TMPDIR:-/tmp}/permute-emu-tiled
mode=${1:-all}
cxx=${CXX:-g++}
cc=${CC:-gcc}
kernel=${KERNEL:-$root/kernels/02_tiled.cu}
mkdir -p "$work"

build() { # $1: name, $2...: sanitizer flags
    name=$1
    shift
    inc="-I$here -I$root -I$root/kernels -I$repo/harness/include -isystem /usr/local/cuda/include"
    # k<<<g, b, smem, s>>>(args) -> emu_launch(k, g, b, smem, s)(args); the dynamic shared
    # memory -> the emulated launch's block; inline PTX (an L1 prefetch) -> nothing.
    sed -E -e 's/([A-Za-z_][A-Za-z_0-9]*(<[^<>]*>)?)<<<(.*)>>>\(/emu_launch(\1, \3)(/' \
        -e 's/extern __shared__ (__align__\([0-9]+\) )?([A-Za-z_ ]+) ([A-Za-z_0-9]+)\[\];/\2 *\3 = (\2 *)emu_dyn_smem;/' \
        -e 's/asm volatile\(/emu_asm(/' \
        "$kernel" >"$work/tiled.cpp"
    grep -q 'emu_dyn_smem' "$work/tiled.cpp" || { echo "run_emu_tiled.sh: no dynamic shared memory rewritten"; exit 1; }
    ! grep -q '<<<\|extern __shared__\|asm volatile' "$work/tiled.cpp" ||
        { echo "run_emu_tiled.sh: CUDA syntax left after the rewrite"; exit 1; }
    $cxx -std=c++20 -O1 -g "$@" -include "$here/emu_tiled.h" $inc -Wno-unknown-pragmas \
        -Wno-attributes -c "$work/tiled.cpp" -o "$work/tiled.$name.o"
    printf '#include "%s.c"\n' gen plan_model plan_lean plan_tiled plan_elem plan_fused \
        >"$work/host.c"
    $cc -O1 -g "$@" $inc -c "$work/host.c" -o "$work/host.$name.o"
    $cxx -std=c++20 -O1 -g "$@" $inc -c "$here/emu_tiled.cpp" -o "$work/emu_tiled.$name.o"
    $cxx "$@" -pthread "$work/tiled.$name.o" "$work/host.$name.o" "$work/emu_tiled.$name.o" \
        -lm -o "$work/emu_tiled.$name"
}

asan() {
    build asan -DEMU_FIBERS -fsanitize=address,undefined -fno-sanitize-recover=all \
        -fno-omit-frame-pointer
    "$work/emu_tiled.asan"
}
tsan() {
    build tsan -fsanitize=thread
    TSAN_OPTIONS="halt_on_error=1" "$work/emu_tiled.tsan" light
}

case $mode in
asan | tsan) $mode ;;
all) # both at once (one core each), each into its log, shown when both are done
    status=0
    asan >"$work/asan.log" 2>&1 &
    a=$!
    tsan >"$work/tsan.log" 2>&1 &
    t=$!
    wait $a || status=1
    wait $t || status=$((status | 2))
    echo "== ASan+UBSan (fibers, every case)"
    grep -v 'ASan does not fully support\|ASan doesn.t fully support' "$work/asan.log" || true
    echo "== TSan (threads, fewer cases)"
    cat "$work/tsan.log"
    exit $status
    ;;
*)
    echo "usage: $0 [asan|tsan|all]" >&2
    exit 2
    ;;
esac
