# Copies one kernel file (.cu, .cuh or .h) of a plugin so that g++ compiles it against
# emu_cuda.h, keeping its line numbers (a sanitizer report names the original file and line):
#   cmake -DIN=kernels/02_tiled.cu -DOUT=emu/permute/02_tiled.cu -P rewrite.cmake
# - `k<<<g, b, smem, s>>>(args)` -> `emu_launch(k, g, b, smem, s)(args)`; the kernel's name may
#   be a template-id and may end the line before the `<<<`;
# - `extern __shared__ [__align__(N)] T x[];` -> `T *x = (T *)emu_dyn_smem;`;
# - `asm volatile(` -> `emu_asm(` (inline PTX left outside __CUDA_ARCH__ guards: hints only);
# - in .cu files, `cp_async_16/4/commit/wait` -> `emu_cp_async_*` (emu_async.h: copies land at
#   the wait that retires them).
# CUDA syntax left after the rewrite stops the build here, naming the file.
file(READ "${IN}" text)

set(name "([A-Za-z_][A-Za-z_0-9]*(<[^<>;\n]*>)?)")
# A launch split after the kernel's name: the name moves down to the `<<<`, the line count stays.
string(REGEX REPLACE "${name}(\n[ \t]*)<<<" "\\3\\1<<<" text "${text}")
# The configuration may span lines (a launch is one statement: no `;` before its arguments).
string(REGEX REPLACE "${name}<<<([^;]*)>>>\\(" "emu_launch(\\1, \\3)(" text "${text}")
string(REGEX REPLACE
       "extern __shared__ (__align__\\([0-9]+\\) )?([A-Za-z_0-9 ]+[A-Za-z_0-9]) ([A-Za-z_0-9]+)\\[\\];"
       "\\2 *\\3 = (\\2 *)emu_dyn_smem;" text "${text}")
string(REPLACE "asm volatile(" "emu_asm(" text "${text}")
if(IN MATCHES "\\.cu$")
  string(REGEX REPLACE "([^A-Za-z_0-9])cp_async_(16|4|commit|wait)([^A-Za-z_0-9])"
         "\\1emu_cp_async_\\2\\3" text "${text}")
endif()

# What is left outside comments would not mean the same on the CPU.
string(REGEX REPLACE "/\\*([^*]|\\*+[^*/])*\\*+/" "" code "${text}")
string(REGEX REPLACE "//[^\n]*" "" code "${code}")
foreach(left "<<<" "extern __shared__")
  string(FIND "${code}" "${left}" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "${IN}: `${left}` left after the rewrite for the CPU emulation; "
                        "extend tests/emu/rewrite.cmake")
  endif()
endforeach()

file(WRITE "${OUT}.tmp" "#line 1 \"${IN}\"\n${text}")
file(RENAME "${OUT}.tmp" "${OUT}")
