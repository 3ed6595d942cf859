# Helpers shared by the harness, the plugins and the tests.

# Where plugins land: next to the kbench binary, in plugins/.
set(KBENCH_PLUGIN_DIR ${CMAKE_BINARY_DIR}/plugins)

set(KBENCH_WARNINGS -Wall -Wextra -Wshadow -Wno-unused-parameter)

# KBENCH_SANITIZE: AddressSanitizer (with LeakSanitizer) and UBSan on every
# C/C++ object of the harness, the plugins' host code and the tests.  CUDA
# code (device and nvcc-compiled host code) stays uninstrumented; plugins
# link the sanitizer runtime like everything else.  Any finding stops the
# process (-fno-sanitize-recover), so a test with a finding fails.  The CPU
# emulations of the kernels (tests/emu) carry the same flags in any build.
set(KBENCH_SAN_FLAGS -fsanitize=address,undefined -fno-omit-frame-pointer
                     -fno-sanitize-recover=all)
if(CMAKE_C_COMPILER_ID STREQUAL "GNU")
  # GCC leaves these out of -fsanitize=undefined; clang has them in it.
  list(APPEND KBENCH_SAN_FLAGS -fsanitize=float-cast-overflow)
endif()
if(KBENCH_SANITIZE)
  # Default sanitizer options (CUDA-safe shadow, leak check, stop at the
  # first error), linked into every program of the build.
  set(KBENCH_SAN_OPTIONS_SOURCE ${CMAKE_SOURCE_DIR}/harness/sanitizer_options.c)
endif()

# Apply the project's host-compiler settings to a target.
function(kbench_target_defaults target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:C>:${KBENCH_WARNINGS}>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall --expt-relaxed-constexpr -lineinfo>)
  if(KBENCH_SANITIZE)
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:C,CXX>:${KBENCH_SAN_FLAGS}>)
    target_link_options(${target} PRIVATE ${KBENCH_SAN_FLAGS})
  endif()
endfunction()

# Links the default sanitizer options into a program (KBENCH_SANITIZE only).
function(kbench_sanitizer_options target)
  if(KBENCH_SANITIZE)
    target_sources(${target} PRIVATE ${KBENCH_SAN_OPTIONS_SOURCE})
  endif()
endfunction()

# kbench_add_plugin(NAME SOURCES... [LIBRARIES lib...] [OUTPUT_DIR dir])
# Builds libkbench_NAME.so from C and CUDA sources into the plugin folder,
# exporting only the entry symbol.
function(kbench_add_plugin name)
  cmake_parse_arguments(KP "" "OUTPUT_DIR" "SOURCES;LIBRARIES" ${ARGN})
  if(NOT KP_SOURCES)
    set(KP_SOURCES ${KP_UNPARSED_ARGUMENTS})
  endif()
  if(NOT KP_OUTPUT_DIR)
    set(KP_OUTPUT_DIR ${KBENCH_PLUGIN_DIR})
  endif()
  set(target kbench_${name})
  add_library(${target} MODULE ${KP_SOURCES})
  target_include_directories(${target} PRIVATE ${CMAKE_SOURCE_DIR}/harness/include
                                               ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(${target} PRIVATE CUDA::cudart m ${KP_LIBRARIES})
  set_target_properties(${target} PROPERTIES
    PREFIX "lib"
    LIBRARY_OUTPUT_DIRECTORY ${KP_OUTPUT_DIR}
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    CUDA_VISIBILITY_PRESET hidden
    CUDA_SEPARABLE_COMPILATION OFF)
  kbench_target_defaults(${target})
endfunction()
