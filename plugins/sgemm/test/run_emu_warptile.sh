#!/bin/sh
# Checks kernels/10_warptile.cu on the CPU, like run_emu.sh does for 01..09: every
# configuration, split-K on every tile configuration, the untuned and the tuned launcher, on
# tail shapes (emu_warptile.cpp), once with ASan+UBSan and once with TSan.  No GPU needed.
# emu_async.h adds what 10 needs beyond emu_cuda.h: dynamic SMEM that starts as NaN, and
# cp.async that lands at the wait_group retiring it (a too-shallow wait reads NaN, a copy into
# a stage still being read races under TSan).
#   plugins/sgemm/test/run_emu_warptile.sh [asan|tsan|all] [-v] [config-name-substring]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
work=${TMPDIR:-/tmp}/sgemm-emu-warptile
mode=${1:-all}
[ $# -gt 0 ] && shift
cxx=${CXX:-g++}
mkdir -p "$work"

build() { # $1: name, $2...: sanitizer flags
    name=$1
    shift
    # kernel<<<grid, block, smem, stream>>>(args) -> emu_launch_dyn(kernel, grid, ...)(args),
    # template arguments allowed in the kernel name; extern __shared__ x[] -> a pointer to the
    # CTA's emulated dynamic SMEM; cp_async_* -> emu_cp_async_* (emu_async.h; the issue-time
    # copies of common.cuh's emulation branch stay unused).  The hooks are appended.
    cat "$root/kernels/10_warptile.cu" "$here/emu_warptile_hooks.inc" | sed -E \
        -e 's/([A-Za-z_][A-Za-z_0-9]*(<[^<>;]*>)?)<<<(.*)>>>\(/emu_launch_dyn(\1, \3)(/' \
        -e 's/extern __shared__ __align__\([0-9]+\) float ([A-Za-z_0-9]+)\[\];/float *const \1 = (float *)emu_dyn_smem;/' \
        -e 's/\bcp_async_(16|4|commit|wait)\b/emu_cp_async_\1/g' >"$work/10_warptile.cpp"
    $cxx -std=c++20 -O1 -g "$@" -DSGEMM_HOST_EMULATION -include "$here/emu_async.h" \
        -I"$root/kernels" -I"$root" -isystem /usr/local/cuda/include \
        -Wno-unknown-pragmas -Wno-attributes -c "$work/10_warptile.cpp" -o "$work/10_warptile.$name.o"
    $cxx -std=c++20 -O1 -g "$@" -I"$here" -I"$root" -isystem /usr/local/cuda/include \
        -c "$here/emu_warptile.cpp" -o "$work/emu_warptile.$name.o"
    $cxx "$@" -pthread "$work/10_warptile.$name.o" "$work/emu_warptile.$name.o" \
        -o "$work/emu_warptile.$name"
}

status=0
if [ "$mode" = asan ] || [ "$mode" = all ]; then
    build asan -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
    "$work/emu_warptile.asan" "$@" || status=1
fi
if [ "$mode" = tsan ] || [ "$mode" = all ]; then
    build tsan -fsanitize=thread
    TSAN_OPTIONS="halt_on_error=1" "$work/emu_warptile.tsan" "$@" || status=1
fi
exit $status
