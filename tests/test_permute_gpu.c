/* The permute plugin on a real GPU: every device variant verifies on every preset (float32 and
 * float64, beta = 0 and not, every tile length of the tiled kernel) and reports its declared
 * metrics; and the tiled kernel keeps its distance to the per-element one on the seed's
 * recoupling category and on a large transpose (loose bounds, well under the seed's 2.3x and
 * its 1.5-4.5x: they catch a broken fast path, not noise); and auto takes the fused kernel on
 * large_u, well ahead of extract + GEMM.  Skips without a device. */
#define _XOPEN_SOURCE 700
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "helpers.h"

static void setup(void)
{
    make_tmp_named("permute-gpu");
}

TestSuite(permute_gpu, .init = setup, .fini = remove_tmp);

Test(permute_gpu, every_variant_verifies_on_every_preset, .timeout = 900)
{
    kbi_result_set set = {0};
    need_gpu();
    cr_expect_eq(
        run_profile_text(
            "[run]\nwarmup = 1\nmin_samples = 3\nmin_time = 0\ntimeout = 120\ncache = hot\n"
            "[permute]\nvariants = per_element, tiled, gemm, auto, copy, fused, fused_async, "
            "fused_mma\n"
            "preset = abelian_small, recoupling_small, many_small, large_u, few_large, mixed, "
            "dense, custom\ndtype = f32, f64\nalpha = 1.5\nbeta = 0, -0.75\nscale = 0.05\n"
            "[permute.lengths]\nvariants = tiled, auto\n"
            "preset = recoupling_small, large_u, few_large, custom\nscale = 0.05\n"
            "tile_len = 32, 64, 128, 256\n"
            "[permute.exact]\nvariants = tiled, per_element\npreset = few_large, abelian_small\n"
            "scale = 0.05\n"
            "[permute.loop]\nvariants = gemm, auto\npreset = large_u, mixed\nscale = 0.05\n"
            "gemm_call = loop\nbeta = 0, 0.5\n"
            "[permute.split]\nvariants = tiled, auto\npreset = mixed, many_small\nscale = 1\n"
            "dtype = f32, f64\nbeta = 0, 0.5\ntile_split = 0, 1, 2\n",
            &set),
        0);
    cr_assert_eq(set.n_cases, 8 * 8 * 2 * 2 + 2 * 4 * 4 + 2 * 2 + 2 * 2 * 2 + 2 * 2 * 2 * 2 * 3);
    for (size_t i = 0; i < set.n_cases; i++) {
        const kbi_case_result *c = &set.cases[i];
        cr_expect_eq(c->status, KBI_ST_OK, "%s: %s", c->id, c->message);
        cr_expect(c->has_verify && c->verify_passed, "%s: %s", c->id, c->message);
        if (strcmp(c->variant, "copy") != 0) {
            cr_expect((case_metric(c, "tiles") != NULL) && (case_metric(c, "predicted_us") != NULL),
                      "%s", c->id);
            cr_expect((case_metric(c, "copy_ratio") != NULL), "%s: no copy_ratio", c->id);
        }
        /* The self-timing is instrument's (ABI 1.4), the plan's figures init's. */
        cr_expect(case_metric(c, "copy_ratio") && case_metric(c, "copy_ratio")->instrumented &&
                      case_metric(c, "self_us") && case_metric(c, "self_us")->instrumented,
                  "%s: copy_ratio and self_us not instrumented", c->id);
        cr_expect(!case_metric(c, "tiles") || !case_metric(c, "tiles")->instrumented, "%s", c->id);
        /* Abelian blocks with alpha = 1, beta = 0 are copies: exact. */
        if (strstr(c->id, "preset=abelian_small") && strstr(c->id, "alpha=1,beta=0,"))
            cr_expect_eq(c->verify_error, 0.0, "%s: %g", c->id, c->verify_error);
    }
    kbi_results_free(&set);
}

static double median_of(const kbi_result_set *set, const char *variant, const char *preset)
{
    for (size_t i = 0; i < set->n_cases; i++) {
        const kbi_case_result *c = &set->cases[i];
        if (strcmp(c->variant, variant) == 0 && strstr(c->id, preset) && c->status == KBI_ST_OK)
            return c->stats.median;
    }
    return 0.0;
}

/* Regression guards 25% around the committed reference (baselines/h200/permute/categories,
 * a54ded9, float32, beta 0, the mean of its 3 rounds): recoupling_small per_element 4.60 us,
 * tiled 1.93 us (2.38x faster); few_large per_element 474.5 us, tiled 120.9 us, copy 110.8 us
 * (1.09x copy). */
#define TILED_OVER_PE_SMALL_GUARD (1.25 * 1.93 / 4.60)
#define TILED_OVER_PE_LARGE_GUARD (1.25 * 120.9 / 474.5)
#define TILED_OVER_COPY_LARGE_GUARD (1.25 * 120.9 / 110.8)
Test(permute_gpu, tiled_keeps_its_distance_to_per_element, .timeout = 600)
{
    kbi_result_set set = {0};
    need_gpu();
    cr_expect_eq(run_profile_text("[run]\nwarmup = 2\nmin_samples = 5\nmin_time = 0.1\ntimeout = "
                                  "120\ncache = hot\n[permute]\nvariants = per_element, tiled, "
                                  "copy\npreset = recoupling_small, few_large\n",
                                  &set),
                 0);
    cr_assert_eq(set.n_cases, 6);
    double pe_r = median_of(&set, "per_element", "preset=recoupling_small");
    double ti_r = median_of(&set, "tiled", "preset=recoupling_small");
    double pe_f = median_of(&set, "per_element", "preset=few_large");
    double ti_f = median_of(&set, "tiled", "preset=few_large");
    double cp_f = median_of(&set, "copy", "preset=few_large");
    printf("recoupling_small: per_element %.2f us, tiled %.2f us\n", pe_r * 1e6, ti_r * 1e6);
    printf("few_large: per_element %.1f us, tiled %.1f us, copy %.1f us\n", pe_f * 1e6, ti_f * 1e6,
           cp_f * 1e6);
    cr_assert(pe_r > 0 && ti_r > 0 && pe_f > 0 && ti_f > 0 && cp_f > 0);
    if (!speed_guards_apply(set.envs[0].device_name)) {
        kbi_results_free(&set);
        return;
    }
    cr_expect_leq(ti_r, TILED_OVER_PE_SMALL_GUARD * pe_r, "tiled %.2f us vs per_element %.2f us",
                  ti_r * 1e6, pe_r * 1e6);
    cr_expect_leq(ti_f, TILED_OVER_PE_LARGE_GUARD * pe_f, "tiled %.1f us vs per_element %.1f us",
                  ti_f * 1e6, pe_f * 1e6);
    cr_expect_leq(ti_f, TILED_OVER_COPY_LARGE_GUARD * cp_f, "tiled %.1f us vs copy %.1f us",
                  ti_f * 1e6, cp_f * 1e6);
    kbi_results_free(&set);
}

/* Issue 12 on the small presets (launch latency): tiled, with direct tiles for the tiny
 * recoupling blocks, no slower than per_element on recoupling_small, many_small and mixed at
 * scale 0.1 (run 8, general tiles only: 0.65-0.74x on recoupling_small); the plan without
 * direct tiles (tile_direct = 0, run 8's) still verifies. */
Test(permute_gpu, tiled_no_slower_than_per_element_on_small_presets, .timeout = 300)
{
    static const char *presets[] = {"recoupling_small", "many_small", "mixed"};
    kbi_result_set set = {0};
    need_gpu();
    cr_expect_eq(run_profile_text("[run]\nwarmup = 2\nmin_samples = 5\nmin_time = 0.1\ntimeout = "
                                  "120\ncache = hot\n[permute]\nvariants = per_element, tiled\n"
                                  "preset = recoupling_small, many_small, mixed\nscale = 0.1\n"
                                  "[permute.general]\nvariants = tiled\n"
                                  "preset = recoupling_small, many_small, mixed\nscale = 0.1\n"
                                  "tile_direct = 0\n",
                                  &set),
                 0);
    cr_assert_eq(set.n_cases, 9);
    for (size_t i = 0; i < set.n_cases; i++) {
        const kbi_case_result *c = &set.cases[i];
        cr_expect(c->status == KBI_ST_OK && c->has_verify && c->verify_passed, "%s: %s", c->id,
                  c->message);
    }
    for (int k = 0; k < 3; k++) {
        double pe = 0.0, ti = 0.0;
        char key[64];
        snprintf(key, sizeof key, "preset=%s,", presets[k]);
        for (size_t i = 0; i < set.n_cases; i++) {
            const kbi_case_result *c = &set.cases[i];
            if (!strstr(c->params_text, key) || c->status != KBI_ST_OK)
                continue;
            if (strcmp(c->variant, "per_element") == 0)
                pe = c->stats.median;
            else if (strstr(c->params_text, "tile_direct=1"))
                ti = c->stats.median;
        }
        printf("%s 0.1: per_element %.2f us, tiled %.2f us\n", presets[k], pe * 1e6, ti * 1e6);
        cr_expect(pe > 0 && ti > 0 && ti <= pe, "%s: tiled %.2f us vs per_element %.2f us",
                  presets[k], ti * 1e6, pe * 1e6);
    }
    kbi_results_free(&set);
}

static double metric_of(const kbi_result_set *set, const char *variant, const char *name)
{
    for (size_t i = 0; i < set->n_cases; i++) {
        const kbi_case_result *c = &set->cases[i];
        if (strcmp(c->variant, variant) != 0)
            continue;
        const kbi_metric *m = case_metric(c, name);
        if (m)
            return m->value;
    }
    return NAN;
}

/* large_u: auto sends its recoupling blocks to the fused kernel, none to the GEMM, is no
 * slower than the best single path it chooses from (10% for noise), and keeps its distance to
 * copy: a regression guard 25% over the committed reference (baselines/h200/permute/categories,
 * a54ded9, the mean of its 3 rounds: auto 16.04 us against copy 6.44 us, 2.49x, in float32;
 * 22.45 against 10.58 us, 2.12x, in float64; de1de39 read 2.45x and 1.77x against a
 * copy timed by graph replay, which hot mode now drops where the stream's copy is faster: the
 * float64 copy went from 12.6 to 10.4 us).  The 2x target of float32 is not met; it lives in
 * the plugin's notes, not here. */
static const double auto_over_copy_guard[2] = {1.25 * 2.49, 1.25 * 2.12};
Test(permute_gpu, auto_fuses_large_u, .timeout = 300)
{
    kbi_result_set set = {0};
    need_gpu();
    cr_expect_eq(run_profile_text("[run]\nwarmup = 2\nmin_samples = 5\nmin_time = 0.1\ntimeout = "
                                  "120\ncache = hot\n[permute]\nvariants = gemm, fused, fused_mma, "
                                  "auto, copy\npreset = large_u\ndtype = f32, f64\n",
                                  &set),
                 0);
    cr_assert_eq(set.n_cases, 10);
    cr_expect_gt(metric_of(&set, "auto", "fused_blocks"), 0.0, "auto took no block fused");
    cr_expect_eq(metric_of(&set, "auto", "gemm_blocks"), 0.0);
    for (int f64 = 0; f64 < 2; f64++) {
        const char *key = f64 ? "dtype=f64" : "dtype=f32";
        double ge = median_of(&set, "gemm", key), fu = median_of(&set, "fused", key);
        double fm = median_of(&set, "fused_mma", key), au = median_of(&set, "auto", key);
        double cp = median_of(&set, "copy", key);
        printf("large_u %s: gemm %.1f us, fused %.1f us, fused_mma %.1f us, auto %.1f us, copy "
               "%.2f us (auto %.2fx copy)\n",
               key, ge * 1e6, fu * 1e6, fm * 1e6, au * 1e6, cp * 1e6, au / cp);
        cr_assert(ge > 0 && fu > 0 && fm > 0 && au > 0 && cp > 0, "%s", key);
        cr_expect_leq(au, 1.1 * fmin(ge, fmin(fu, fm)),
                      "%s: auto %.1f us vs gemm %.1f us, fused %.1f us, fused_mma %.1f us", key,
                      au * 1e6, ge * 1e6, fu * 1e6, fm * 1e6);
        if (speed_guards_apply(set.envs[0].device_name))
            cr_expect_leq(au, auto_over_copy_guard[f64] * cp,
                          "%s: auto %.1f us vs copy %.2f us: %.2fx (the guard: at most %.2fx)", key,
                          au * 1e6, cp * 1e6, au / cp, auto_over_copy_guard[f64]);
    }
    kbi_results_free(&set);
}
