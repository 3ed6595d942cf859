/* The sgemm plugin on a real GPU: every device variant, and every configuration of the two
 * tuned ones forced, verifies on the tail-heavy shapes of profiles/sgemm-tails.ini; and at
 * 4096^3 the fast variants keep their distance to cuBLAS (loose bounds, far below the
 * measured 0.91x and 2.07x: they catch a broken fast path, such as a fallback to a slow
 * configuration, not noise); and tf32x3's split-K gives the same bits in every run.  Skips
 * with the reason where there is no device. */
#define _XOPEN_SOURCE 700
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "helpers.h"

static void setup(void)
{
    make_tmp_named("sgemm-gpu");
}

TestSuite(sgemm_gpu, .init = setup, .fini = remove_tmp);

Test(sgemm_gpu, every_variant_and_configuration_verifies_on_tails, .timeout = 900)
{
    kbi_result_set set = {0};
    size_t forced = 0;
    need_gpu();
    char profile[4200];
    snprintf(profile, sizeof profile, "%s/profiles/sgemm-tails.ini", KBENCH_TEST_SOURCE_DIR);
    cr_expect_eq(run_profile(profile, &set), 0);
    cr_assert_gt(set.n_cases, 100, "the tails profile has %zu cases", set.n_cases);
    for (size_t i = 0; i < set.n_cases; i++) {
        const kbi_case_result *c = &set.cases[i];
        cr_expect_eq(c->status, KBI_ST_OK, "%s: %s", c->id, c->message);
        cr_expect(c->has_verify && c->verify_passed, "%s", c->id);
        forced += strstr(c->params_text, ",config=-1") == NULL;
    }
    cr_expect_gt(forced, 40, "forced configurations were run (%zu)", forced);
    kbi_results_free(&set);
}

Test(sgemm_gpu, fast_variants_keep_their_distance_to_cublas, .timeout = 600)
{
    kbi_result_set set = {0};
    double cublas = 0.0, warptile = 0.0, tf32x3 = 0.0;
    need_gpu();
    cr_expect_eq(run_profile_text("[run]\nwarmup = 2\nmin_samples = 5\nmin_time = 0.1\ntimeout = "
                                  "120\n[sgemm]\nvariants = warptile, tf32x3, cublas\nshape = "
                                  "4096x4096x4096\n",
                                  &set),
                 0);
    cr_assert_eq(set.n_cases, 3);
    for (size_t i = 0; i < set.n_cases; i++) {
        const kbi_case_result *c = &set.cases[i];
        cr_expect_eq(c->status, KBI_ST_OK, "%s: %s", c->id, c->message);
        printf("%-60s %8.1f GFLOP/s\n", c->id, c->gflops);
        if (strcmp(c->variant, "cublas") == 0)
            cublas = c->gflops;
        else if (strcmp(c->variant, "warptile") == 0)
            warptile = c->gflops;
        else if (strcmp(c->variant, "tf32x3") == 0)
            tf32x3 = c->gflops;
    }
    cr_expect_gt(cublas, 0.0);
    cr_expect_geq(warptile, 0.75 * cublas, "warptile %.0f vs cublas %.0f GFLOP/s", warptile,
                  cublas);
    cr_expect_geq(tf32x3, 1.6 * cublas, "tf32x3 %.0f vs cublas %.0f GFLOP/s", tf32x3, cublas);
    kbi_results_free(&set);
}

/* tf32x3's split-K finishes each tile in split order (serial split-K, the splits waiting on a
 * per-tile flag): the same inputs give the same bits whatever order the CTAs ran in, so two
 * runs of a forced split-K configuration report the same error to the last bit.  The shapes
 * split K in 4 (1x4096x4096) and 2 (1000x1000x999, ragged edges); each run also relaunches
 * the kernel many times, so a flag left raised would hang it (the case would time out). */
Test(sgemm_gpu, tf32x3_split_k_gives_the_same_bits_every_run, .timeout = 300)
{
    const char *text = "[run]\nwarmup = 2\nmin_samples = 20\nmin_time = 0\ntimeout = 60\n"
                       "[sgemm]\nvariants = tf32x3\nshape = 1x4096x4096, 1000x1000x999\n"
                       "config = 3, 5, 6, 7\n";
    kbi_result_set a = {0}, b = {0};
    need_gpu();
    cr_expect_eq(run_binary_text(text, "first", "", &a), 0);
    cr_expect_eq(run_binary_text(text, "second", "", &b), 0);
    cr_assert_eq(a.n_cases, 8);
    cr_assert_eq(b.n_cases, 8);
    for (size_t i = 0; i < a.n_cases; i++) {
        const kbi_case_result *x = &a.cases[i], *y = &b.cases[i];
        cr_expect_eq(x->status, KBI_ST_OK, "%s: %s", x->id, x->message);
        cr_expect_eq(y->status, KBI_ST_OK, "%s: %s", y->id, y->message);
        cr_expect_str_eq(x->id, y->id);
        cr_expect(x->has_verify && x->verify_passed, "%s", x->id);
        /* 3xTF32 is not exact: an error of zero would mean nothing was compared */
        cr_expect_gt(x->verify_error, 0.0, "%s", x->id);
        cr_expect(x->verify_error == y->verify_error, "%s: error %.17g, then %.17g", x->id,
                  x->verify_error, y->verify_error);
    }
    kbi_results_free(&a);
    kbi_results_free(&b);
}
