/* The labeling plugin on the GPU: every device variant gives the host union-find's partition
 * on the same bonds and evolves the prepared lattice exactly as the host does (verify checks
 * both), for every model in 2-D and 3-D, both modes, on lattices that are not multiples of the
 * union_find tiles; the same seed gives bit-identical observables for every variant, host
 * included; and the ratios: union_find labels >= 2.5x faster than kalentev (2-D and
 * 3-D) and every device variant steps >= 50x faster than host_uf at L = 4096.  Skips without
 * a GPU. */
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
    make_tmp_named("labeling-gpu");
}

TestSuite(labeling_gpu, .init = setup, .fini = remove_tmp);

/* The value of metric `name` of case c, NAN when absent. */
static double metric_of(const kbi_case_result *c, const char *name)
{
    const kbi_metric *m = case_metric(c, name);
    return m ? m->value : NAN;
}

Test(labeling_gpu, every_variant_verifies_every_model_and_mode, .timeout = 600)
{
    kbi_result_set set = {0};
    need_gpu();
    cr_expect_eq(
        run_profile_text("[run]\nwarmup = 1\nmin_samples = 3\nmin_time = 0\ntimeout = 120\n"
                         "[labeling]\nvariants = host_uf, hawick, kalentev, komura, "
                         "union_find\nmodel = ising, potts, xy\ndim = 2\nL = 40, 97\n"
                         "mcs_discard = 20\nmcs_measure = 20\nmode = mcs, labeling_only\n"
                         "[labeling.3d]\nvariants = host_uf, hawick, kalentev, komura, "
                         "union_find\nmodel = ising, potts, xy\ndim = 3\nL = 13, 20\n"
                         "mcs_discard = 20\nmcs_measure = 20\nmode = mcs, labeling_only\n",
                         &set),
        0);
    cr_assert_eq(set.n_cases, 2 * 5 * 3 * 2 * 2);
    for (size_t i = 0; i < set.n_cases; i++) {
        const kbi_case_result *c = &set.cases[i];
        const char *timing =
            strstr(c->id, "mode=labeling_only") ? "ns_per_flip_label" : "ns_per_flip";
        cr_expect_eq(c->status, KBI_ST_OK, "%s: %s", c->id, c->message);
        cr_expect(c->has_verify && c->verify_passed, "%s: %s", c->id, c->message);
        /* The measurement is instrument's (ABI 1.4), after the last verify. */
        cr_expect(case_metric(c, timing) && case_metric(c, timing)->instrumented, "%s: %s", c->id,
                  timing);
    }
    kbi_results_free(&set);
}

/* Observables are integer sums of bit-identical lattices: equal across variants exactly. */
Test(labeling_gpu, same_seed_same_observables_for_every_variant, .timeout = 600)
{
    kbi_result_set set = {0};
    const char *names[] = {"m2", "m4", "energy", "specific_heat", "moment_ratio", "clusters"};
    need_gpu();
    cr_expect_eq(
        run_profile_text("[run]\nwarmup = 0\nmin_samples = 2\nmin_time = 0\ntimeout = 300\n"
                         "[labeling]\nvariants = host_uf, hawick, kalentev, komura, "
                         "union_find\nmodel = ising, xy\ndim = 2, 3\nL = 48\n"
                         "mcs_discard = 50\nmcs_measure = 100\n",
                         &set),
        0);
    cr_assert_eq(set.n_cases, 20);
    for (size_t i = 0; i < set.n_cases; i++) {
        const kbi_case_result *c = &set.cases[i], *ref = NULL;
        cr_expect_eq(c->status, KBI_ST_OK, "%s: %s", c->id, c->message);
        for (size_t j = 0; j < set.n_cases; j++)
            if (strcmp(set.cases[j].variant, "host_uf") == 0 &&
                strcmp(set.cases[j].params_text, c->params_text) == 0)
                ref = &set.cases[j];
        cr_assert_not_null(ref, "%s: no host_uf case", c->id);
        for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
            const double a = metric_of(c, names[k]), b = metric_of(ref, names[k]);
            cr_expect(isfinite(a) && a == b, "%s: %s = %.17g, host_uf %.17g", c->id, names[k], a,
                      b);
        }
    }
    kbi_results_free(&set);
}

/* labeling_only, Ising at Tc, 2-D L = 2048 and 3-D L = 128, hot: the best device labeler
 * (union_find) keeps its lead on kalentev in the same run, in 2-D and in 3-D.  A regression
 * guard 20% under the committed reference (baselines/h200/labeling/test_labeling_gpu.log,
 * 2be10bb: 4.83x and 4.79x; the target was 2.5x): at least 3.8x.  The capturable
 * labelers are timed as CUDA graphs (or on the stream where the graph is slower). */
#define KALENTEV_OVER_UNION_FIND_GUARD 3.8
Test(labeling_gpu, union_find_labels_3_8x_faster_than_kalentev_2d_and_3d, .timeout = 600)
{
    kbi_result_set set = {0};
    double uf[2] = {0.0, 0.0}, ka[2] = {0.0, 0.0};
    need_gpu();
    cr_expect_eq(run_profile_text(
                     "[run]\nwarmup = 2\nmin_samples = 10\nmin_time = 0.2\n"
                     "timeout = 300\ncache = hot\n[labeling]\nvariants = hawick, kalentev, komura, "
                     "union_find\nL = 2048\nmcs_discard = 100\nmcs_measure = 10\n"
                     "mode = labeling_only\n[labeling.3d]\nvariants = hawick, kalentev, komura, "
                     "union_find\ndim = 3\nL = 128\nmcs_discard = 100\nmcs_measure = 10\n"
                     "mode = labeling_only\n",
                     &set),
                 0);
    cr_assert_eq(set.n_cases, 8);
    for (size_t i = 0; i < set.n_cases; i++) {
        const kbi_case_result *c = &set.cases[i];
        const int d3 = strstr(c->params_text, "dim=3") != NULL;
        cr_expect_eq(c->status, KBI_ST_OK, "%s: %s", c->id, c->message);
        printf("%-12s %s %10.3f ms  %8.4f ns/site  iterations %.1f\n", c->variant,
               d3 ? "3-D" : "2-D", 1e3 * c->stats.median, 1e9 * c->stats.median / c->items,
               metric_of(c, "label_iterations"));
        /* The device step counter makes komura and union_find capturable; the iterative
         * ones read a flag back and say so (KB_RUN_SYNCS).  A batch of one run (a run of
         * 1 ms or more) is timed the same way. */
        const char *timing = c->timing;
        const int iterative =
            strcmp(c->variant, "hawick") == 0 || strcmp(c->variant, "kalentev") == 0;
        cr_expect(c->batch >= 1, "%s: batch %ld", c->id, c->batch);
        cr_expect(timing && (iterative ? strcmp(timing, "launches") == 0
                                       : strcmp(timing, "graph") == 0 ||
                                             strcmp(timing, "blocked") == 0),
                  "%s: timing %s with batch %ld, expected %s", c->id, timing ? timing : "(none)",
                  c->batch, iterative ? "launches" : "graph or blocked");
        if (strcmp(c->variant, "union_find") == 0)
            uf[d3] = c->stats.median;
        if (strcmp(c->variant, "kalentev") == 0)
            ka[d3] = c->stats.median;
    }
    for (int d3 = 0; d3 < 2; d3++) {
        printf("%s: kalentev / union_find = %.2f (guard >= %.1f)\n", d3 ? "3-D" : "2-D",
               uf[d3] > 0.0 ? ka[d3] / uf[d3] : 0.0, KALENTEV_OVER_UNION_FIND_GUARD);
        cr_expect(uf[d3] > 0.0 && ka[d3] >= KALENTEV_OVER_UNION_FIND_GUARD * uf[d3],
                  "%s: union_find %.4g s, kalentev %.4g s: %.2fx, the guard is >= %.1fx",
                  d3 ? "3-D" : "2-D", uf[d3], ka[d3], uf[d3] > 0.0 ? ka[d3] / uf[d3] : 0.0,
                  KALENTEV_OVER_UNION_FIND_GUARD);
    }
    kbi_results_free(&set);
}

/* The whole SW step, 2-D Ising at Tc, L = 4096.  Regression guards around the committed
 * reference (baselines/h200/labeling/test_labeling_gpu.log, 2be10bb): each device variant's
 * ns per spin flip at most 25% over its reference (hawick 0.2735, kalentev 0.2321, komura
 * 0.1072, union_find 0.0534), and at least 100x host_uf: half the slowest reference ratio
 * (207x), since host_uf runs on the lease's CPU, which moved host times by 30-80% from one
 * lease to another.  host_uf takes ~1 s a step here: two samples, and the two measured steps
 * its evolution check needs.  (The target was 50x; the <= 0.08 ns whole step is at
 * L = 8192, in the profile, not asserted here.) */
static const struct {
    const char *variant;
    double ns_per_flip;
} step_reference[] = {
    {"hawick", 0.2735}, {"kalentev", 0.2321}, {"komura", 0.1072}, {"union_find", 0.0534}};
#define STEP_GUARD_MARGIN 1.25
#define HOST_RATIO_GUARD 100.0
Test(labeling_gpu, every_device_variant_keeps_its_step_time_at_4096, .timeout = 600)
{
    kbi_result_set set = {0};
    double host = 0.0;
    need_gpu();
    cr_expect_eq(run_profile_text("[run]\nwarmup = 1\nmin_samples = 2\nmin_time = 0\n"
                                  "max_time = 3\ntimeout = 300\ncache = hot\n[labeling]\n"
                                  "variants = host_uf, hawick, kalentev, komura, union_find\n"
                                  "L = 4096\nmcs_discard = 20\nmcs_measure = 2\n",
                                  &set),
                 0);
    cr_assert_eq(set.n_cases, 5);
    for (size_t i = 0; i < set.n_cases; i++) {
        const kbi_case_result *c = &set.cases[i];
        cr_expect_eq(c->status, KBI_ST_OK, "%s: %s", c->id, c->message);
        cr_expect(c->has_verify && c->verify_passed, "%s: %s", c->id, c->message);
        if (strcmp(c->variant, "host_uf") == 0)
            host = c->stats.median / c->items;
    }
    cr_assert(host > 0.0, "no host_uf median");
    for (size_t i = 0; i < set.n_cases; i++) {
        const kbi_case_result *c = &set.cases[i];
        const double per = c->stats.median / c->items;
        printf("%-12s %9.4f ns/flip  host_uf / variant = %.0fx\n", c->variant, 1e9 * per,
               per > 0.0 ? host / per : 0.0);
        if (strcmp(c->variant, "host_uf") == 0)
            continue;
        cr_expect(per > 0.0 && host >= HOST_RATIO_GUARD * per,
                  "%s: %.4g ns/flip against host_uf's %.4g: %.1fx, the guard is >= %.0fx",
                  c->variant, 1e9 * per, 1e9 * host, per > 0.0 ? host / per : 0.0,
                  HOST_RATIO_GUARD);
        for (size_t k = 0; k < sizeof step_reference / sizeof step_reference[0]; k++)
            if (strcmp(c->variant, step_reference[k].variant) == 0 &&
                speed_guards_apply(c->env ? c->env->device_name : NULL))
                cr_expect_leq(1e9 * per, STEP_GUARD_MARGIN * step_reference[k].ns_per_flip,
                              "%s: %.4f ns/flip, reference %.4f, guard %.0f%% over it",
                              c->variant, 1e9 * per, step_reference[k].ns_per_flip,
                              100 * (STEP_GUARD_MARGIN - 1));
    }
    kbi_results_free(&set);
}
