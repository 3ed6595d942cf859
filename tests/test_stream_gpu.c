/* The stream plugin on a real GPU: every device variant verifies, the best
 * one reaches most of the device's copy bandwidth, and fma is bound by the
 * FP32 pipes, not by memory.  Skips with the reason where there is no
 * device. */
#define _XOPEN_SOURCE 700
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpu.h"
#include "helpers.h"

static void setup(void)
{
    make_tmp_named("stream-gpu");
}

TestSuite(stream_gpu, .init = setup, .fini = remove_tmp);

Test(stream_gpu, device_variants_verify_and_reach_the_roof, .timeout = 600)
{
    kbi_result_set set = {0};
    double best = 0.0, memcpy_gbs = 0.0;
    need_gpu();
    cr_expect_eq(
        run_profile_text("[run]\nwarmup = 2\nmin_samples = 10\nmin_time = 0.1\ntimeout = 120\n"
                         "[stream]\nvariants = copy, scale, add, triad, memcpy\n"
                         "bytes = 1Gi, 1000004\n",
                         &set),
        0);
    cr_assert_eq(set.n_cases, 10);
    for (size_t i = 0; i < set.n_cases; i++) {
        const kbi_case_result *c = &set.cases[i];
        cr_expect_eq(c->status, KBI_ST_OK, "%s: %s", c->id, c->message);
        cr_expect(c->has_verify && c->verify_passed, "%s", c->id);
        if (strstr(c->params_text, "bytes=1073741824,")) {
            printf("%-40s %8.1f GB/s\n", c->id, c->gbs);
            if (strcmp(c->variant, "memcpy") == 0)
                memcpy_gbs = c->gbs;
            else if (c->gbs > best)
                best = c->gbs;
        }
    }
    cr_expect_gt(set.envs[0].bandwidth_gbs, 0.0, "the probe measured the copy bandwidth");
    cr_expect_geq(best, 0.85 * memcpy_gbs, "best kernel %.1f GB/s vs memcpy %.1f GB/s", best,
                  memcpy_gbs);
    kbi_results_free(&set);
}

/* fma does 2,048 flops per 8 bytes: it must run near the FMA ceiling the
 * run measured and far under the copy bandwidth, or it is no check of energy
 * per FLOP against copy's energy per byte (lab/h200/energy). */
Test(stream_gpu, fma_is_bound_by_the_fp32_pipes, .timeout = 600)
{
    kbi_result_set set = {0};
    need_gpu();
    cr_expect_eq(run_profile_text("[run]\nwarmup = 2\nmin_samples = 10\nmin_time = 0.1\n"
                                  "timeout = 120\n[stream]\nvariants = fma\nbytes = 256Mi\n",
                                  &set),
                 0);
    cr_assert_eq(set.n_cases, 1);
    const kbi_case_result *c = &set.cases[0];
    cr_expect_eq(c->status, KBI_ST_OK, "%s: %s", c->id, c->message);
    cr_expect(c->has_verify && c->verify_passed, "%s", c->id);
    printf("%-40s %8.1f GFLOP/s (%.2f of the measured FMA ceiling), %6.1f GB/s\n", c->id, c->gflops,
           c->frac_peak, c->gbs);
    cr_expect_gt(c->frac_peak, 0.7, "fma at %.2f of the FMA ceiling", c->frac_peak);
    cr_expect_lt(c->gbs, 0.2 * set.envs[0].bandwidth_gbs, "fma moves %.1f GB/s", c->gbs);
    kbi_results_free(&set);
}
