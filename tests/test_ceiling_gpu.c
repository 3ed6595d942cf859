/* The device's ceilings (ceiling.cu) on a real GPU, as the env probe of a run records them:
 * the TF32 tensor-core peak is measured (its kernel's sums checked), several times the FP32
 * FMA peak as tensor cores are, and above what the sgemm plugin's 3xTF32 kernel drives through
 * the tensor cores; a peak the profile gives is recorded as given, with nothing measured.
 * Skips with the reason where there is no device. */
#define _XOPEN_SOURCE 700
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "gpu.h"
#include "helpers.h"

static void setup(void)
{
    make_tmp_named("ceiling-gpu");
}

TestSuite(ceiling_gpu, .init = setup, .fini = remove_tmp);

Test(ceiling_gpu, the_tf32_peak_is_measured_with_the_tensor_cores, .timeout = 600)
{
    kbi_result_set set = {0};
    const kbi_env_record *e;
    const char *method;
    need_gpu();
    cr_expect_eq(run_profile_text("[run]\nwarmup = 1\nmin_samples = 3\nmin_time = 0\n"
                                  "timeout = 60\n[stream]\nvariants = copy\nbytes = 1Mi\n",
                                  &set),
                 0);
    cr_assert_eq(set.n_envs, 1);
    e = &set.envs[0];
    method = kbi_jstr(e->json, "ceilings", "tf32_method");
    printf("%s: FP32 FMA %.0f GFLOP/s, TF32 tensor cores %.0f GFLOP/s (%s; %.2fx), copy %.0f "
           "GB/s\n",
           e->device_name, e->peak_gflops, e->tf32_gflops, method,
           e->peak_gflops > 0 ? e->tf32_gflops / e->peak_gflops : 0, e->bandwidth_gbs);
    cr_expect_str_eq(kbi_jstr(e->json, "ceilings", "tf32_error"), "", "the probe failed");
    cr_expect_gt(e->tf32_gflops, 0.0);
    /* Dense TF32 with fp32 accumulation is 8x the FP32 FMA rate on A100 and about 7.4x on
     * H100/H200: far under 3x is a kernel that did not keep the tensor cores busy. */
    cr_expect_gt(e->tf32_gflops, 3.0 * e->peak_gflops, "TF32 %.0f vs FP32 %.0f GFLOP/s",
                 e->tf32_gflops, e->peak_gflops);
    cr_expect_lt(e->tf32_gflops, 20.0 * e->peak_gflops, "TF32 %.0f vs FP32 %.0f GFLOP/s",
                 e->tf32_gflops, e->peak_gflops);
    if (strstr(e->device_name, "H100") || strstr(e->device_name, "H200"))
        cr_expect_str_eq(method, "wgmma m64n128k8", "Hopper's full rate needs wgmma");
    kbi_results_free(&set);
}

/* tf32x3 does three TF32 products per fp32 product: the tensor-core work it does per second is
 * three times its GFLOP/s, and a TF32 roof under that would be no roof. */
Test(ceiling_gpu, tf32x3_works_the_tensor_cores_under_the_measured_peak, .timeout = 600)
{
    kbi_result_set set = {0};
    need_gpu();
    cr_expect_eq(run_profile_text("[run]\nwarmup = 2\nmin_samples = 5\nmin_time = 0.1\n"
                                  "timeout = 120\n[sgemm]\nvariants = tf32x3\n"
                                  "shape = 8192x8192x8192\n",
                                  &set),
                 0);
    cr_assert_eq(set.n_cases, 1);
    const kbi_case_result *c = &set.cases[0];
    cr_expect_eq(c->status, KBI_ST_OK, "%s: %s", c->id, c->message);
    cr_expect_str_eq(c->roof, "tf32x3", "the plugin declares its roof and the record keeps it");
    printf("%s: %.0f GFLOP/s, %.0f GFLOP/s of TF32 products, %.2f of the TF32 peak %.0f\n", c->id,
           c->gflops, 3 * c->gflops, 3 * c->gflops / set.envs[0].tf32_gflops,
           set.envs[0].tf32_gflops);
    cr_expect_lt(3 * c->gflops, set.envs[0].tf32_gflops);
    kbi_results_free(&set);
}

Test(ceiling_gpu, a_tf32_peak_the_profile_gives_is_not_measured, .timeout = 600)
{
    kbi_result_set set = {0};
    need_gpu();
    cr_expect_eq(run_profile_text("[run]\nwarmup = 1\nmin_samples = 3\nmin_time = 0\n"
                                  "timeout = 60\npeak_tf32_gflops = 123456\n"
                                  "[stream]\nvariants = copy\nbytes = 1Mi\n",
                                  &set),
                 0);
    cr_assert_eq(set.n_envs, 1);
    cr_expect_eq(set.envs[0].tf32_gflops, 123456.0);
    cr_expect_str_eq(kbi_jstr(set.envs[0].json, "ceilings", "tf32_method"), "");
    kbi_results_free(&set);
}
