/* Default options of the sanitizers in a KBENCH_SANITIZE build, linked into
 * kbench and every test program (ASAN_OPTIONS, UBSAN_OPTIONS and
 * LSAN_OPTIONS in the environment still override them).  Not part of a
 * normal build. */

/* protect_shadow_gap=0: the CUDA driver maps device memory where ASan would
 * otherwise protect its shadow gap (without it cuInit fails on a GPU).
 * Every error stops the process with status 1, leaks included. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "protect_shadow_gap=0:detect_leaks=1:halt_on_error=1:abort_on_error=0"
           ":detect_stack_use_after_return=1:check_initialization_order=1"
           ":strict_string_checks=1:print_summary=1";
}

const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void)
{
    return "halt_on_error=1:print_stacktrace=1";
}

/* What the CUDA runtime, the driver and NVML keep until the process ends
 * is theirs, not a leak of kbench's. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:libcuda.so\n"
           "leak:libcudart.so\n"
           "leak:libnvidia-ml.so\n"
           "leak:libcublas.so\n"
           "leak:libcublasLt.so\n";
}
