#define _XOPEN_SOURCE 700
/* Tests that can fail: a skip says "this cannot run here", never "this broke".  ctest's
 * wrapper (tests/criterion-run.sh) lets a binary's exit status decide, so one skipped test
 * cannot hide a failing one beside it, and reports a binary whose tests all skipped as
 * skipped; the GPU gate (tests/gpu.h) skips only where there is no device or no driver, fails
 * where a driver is installed but cudaGetDeviceCount fails, and fails where there is no GPU
 * under KBENCH_REQUIRE_GPU=1. */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpu.h"
#include "helpers.h"

static void setup(void)
{
    make_tmp_named("skips");
}

TestSuite(skips, .init = setup, .fini = remove_tmp);

/* Runs a shell command line with its output into tmp/out; returns its exit status.  Criterion's
 * sandbox variable is dropped, or a Criterion binary started here would take itself for one of
 * this binary's test processes. */
static int sh(const char *fmt, ...)
{
    char cmd[4096], line[8192];
    va_list ap;
    int st;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    snprintf(line, sizeof line, "unset BXFI_MAP; %s >'%s/out' 2>&1", cmd, tmp);
    st = system(line);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static char *output(void)
{
    char path[300];
    snprintf(path, sizeof path, "%s/out", tmp);
    return slurp(path);
}

/* The wrapper's rule on made-up Criterion output: the exit status wins; all skipped is 77. */
Test(skips, ctest_wrapper_lets_a_failure_fail_beside_a_skip)
{
    char wrapper[512];
    snprintf(wrapper, sizeof wrapper, "sh '%s/tests/criterion-run.sh'", KBENCH_TEST_SOURCE_DIR);
    cr_expect_eq(sh("%s sh -c 'echo \"[SKIP] a: no GPU\"; echo \"[FAIL] b\"; exit 1'", wrapper), 1,
                 "a failure beside a skip fails");
    cr_expect_eq(sh("%s sh -c 'echo \"[SKIP] a: no GPU\"; echo \"[PASS] b\"'", wrapper), 0,
                 "a pass beside a skip passes");
    cr_expect_eq(sh("%s sh -c 'echo \"[SKIP] a: no GPU\"; echo \"[SKIP] b: no GPU\"'", wrapper), 77,
                 "all skipped is reported as skipped");
    cr_expect_eq(sh("%s sh -c 'echo \"[SKIP] a: no GPU\"; exit 3'", wrapper), 3,
                 "a binary that fails after skipping fails");
    cr_expect_eq(sh("%s sh -c 'kill -SEGV $$'", wrapper), 128 + 11, "a crash fails");
    cr_expect_eq(sh("%s sh -c 'echo \"[SKIP] a: because\"'", wrapper), 77);
    char *text = output();
    cr_expect(strstr(text, "[SKIP] a: because"), "the reason is printed: %s", text);
    free(text);
}

/* A GPU test binary against a driver library that is there but does not work (any shared
 * object named libcuda.so.1 first on the library path): a failure, on any machine. */
Test(skips, a_broken_driver_fails_the_gpu_tests)
{
    char bin[512];
    char *text;
    snprintf(bin, sizeof bin, "%s/../test_stream_gpu", KBENCH_TEST_FIXTURES);
    if (access(bin, X_OK) != 0)
        cr_skip_test("%s is not built", bin);
    cr_assert_eq(sh("cp '%s/libkbench_good.so' '%s/libcuda.so.1'", KBENCH_TEST_FIXTURES, tmp), 0);
    cr_expect_eq(sh("LD_LIBRARY_PATH='%s' '%s' --jobs 1 --verbose", tmp, bin), 1);
    text = output();
    cr_expect(strstr(text, "although a driver is installed: a broken GPU setup"), "%s", text);
    cr_expect_null(strstr(text, "[SKIP]"), "%s", text);
    free(text);
}

/* Where there is no GPU, the GPU tests skip with the reason (ctest: skipped), and fail under
 * KBENCH_REQUIRE_GPU=1. */
Test(skips, no_gpu_skips_and_fails_when_a_gpu_is_required)
{
    char bin[512], why[512], wrapper[512];
    char *text;
    snprintf(bin, sizeof bin, "%s/../test_stream_gpu", KBENCH_TEST_FIXTURES);
    snprintf(wrapper, sizeof wrapper, "sh '%s/tests/criterion-run.sh'", KBENCH_TEST_SOURCE_DIR);
    if (access(bin, X_OK) != 0)
        cr_skip_test("%s is not built", bin);
    if (gpu_state(why, sizeof why) != GPU_NONE)
        cr_skip_test("this machine has a GPU (or a broken one): the no-GPU rule is not seen here");
    cr_expect_eq(sh("env -u KBENCH_REQUIRE_GPU %s '%s' --jobs 1 --verbose", wrapper, bin), 77);
    text = output();
    cr_expect(strstr(text, "[SKIP]") && strstr(text, why), "%s", text);
    free(text);
    cr_expect_eq(sh("KBENCH_REQUIRE_GPU=1 %s '%s' --jobs 1 --verbose", wrapper, bin), 1);
    text = output();
    cr_expect(strstr(text, "KBENCH_REQUIRE_GPU=1 says there must be one"), "%s", text);
    free(text);
}
