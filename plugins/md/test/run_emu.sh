#!/bin/sh
# Runs the md plugin's device variants on the CPU: kernels/*.cu compiled as C++ against
# test/emu_cuda.h (fibers for CUDA threads), the glue and the host code (md.c, device.c,
# system.c, host.c, point.c, reference.c, summary.c, eos.c) as they are, the CUDA runtime calls
# from test/emu_runtime.cpp, driven by test/emu_test.cpp.  No GPU needed.
#   plugins/md/test/run_emu.sh [variant]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
top=$(cd "$root/../.." && pwd)
work=${TMPDIR:-/tmp}/md-emu
cxx=${CXX:-g++}
cc=${CC:-gcc}
flags="-O1 -g ${EMU_FLAGS:-}"
inc="-I$top/harness/include -I$root -I$root/kernels -isystem /usr/local/cuda/include"
mkdir -p "$work"
objs=""
for f in "$root"/kernels/*.cu; do
    b=$(basename "$f" .cu)
    # k<<<g, b, smem, s>>>(args) -> emu_launch(k, g, b, smem, s)(args); dynamic shared memory
    sed -E -e 's/([A-Za-z_][A-Za-z_0-9]*(<[A-Za-z_0-9]+>)?)<<<(.*)>>>\(/emu_launch(\1, \3)(/' \
        -e 's/extern __shared__ ([A-Za-z0-9_]+) ([A-Za-z_0-9]+)\[\];/\1 *\2 = (\1 *)emu_dyn_smem;/' \
        "$f" >"$work/$b.cpp"
    $cxx -std=c++20 $flags -DMD_HOST_EMULATION -include "$here/emu_cuda.h" $inc \
        -Wno-unknown-pragmas -Wno-attributes -c "$work/$b.cpp" -o "$work/$b.o"
    objs="$objs $work/$b.o"
done
for f in md device system host point reference summary eos; do
    $cc -std=c11 $flags $inc -c "$root/$f.c" -o "$work/$f.o"
    objs="$objs $work/$f.o"
done
$cxx -std=c++20 $flags $inc -c "$here/emu_runtime.cpp" -o "$work/emu_runtime.o"
$cxx -std=c++20 $flags $inc -c "$here/emu_test.cpp" -o "$work/emu_test.o"
$cxx $flags $objs "$work/emu_runtime.o" "$work/emu_test.o" -lm -o "$work/emu_test"
"$work/emu_test" "$@"
