/* The labeling plugin on the GPU: every device variant gives the host union-find's partition
 * on the same bonds and evolves the prepared lattice exactly as the host does (verify checks
 * both), for every model in 2-D and 3-D, both modes, on lattices that are not multiples of the
 * union_find tiles; the same seed gives bit-identical observables for every variant, host
 * included; and the direct union-find labels faster than Kalentev's iteration.  Skips without
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
    for (size_t i = 0; i < c->n_metrics; i++)
        if (strcmp(c->metrics[i].name, name) == 0)
            return c->metrics[i].value;
    return NAN;
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
        cr_expect_eq(c->status, KBI_ST_OK, "%s: %s", c->id, c->message);
        cr_expect(c->has_verify && c->verify_passed, "%s: %s", c->id, c->message);
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

/* labeling_only at 2-D L = 2048 (Ising at Tc), hot: union_find's median labeling time beats
 * kalentev's (the target is 2.5x; the figures are printed); the capturable labelers
 * are timed as CUDA graphs. */
Test(labeling_gpu, union_find_labels_faster_than_kalentev, .timeout = 600)
{
    kbi_result_set set = {0};
    double uf = 0.0, ka = 0.0;
    need_gpu();
    cr_expect_eq(run_profile_text(
                     "[run]\nwarmup = 2\nmin_samples = 10\nmin_time = 0.2\n"
                     "timeout = 300\ncache = hot\n[labeling]\nvariants = hawick, kalentev, komura, "
                     "union_find\nL = 2048\nmcs_discard = 100\nmcs_measure = 10\n"
                     "mode = labeling_only\n",
                     &set),
                 0);
    cr_assert_eq(set.n_cases, 4);
    for (size_t i = 0; i < set.n_cases; i++) {
        const kbi_case_result *c = &set.cases[i];
        cr_expect_eq(c->status, KBI_ST_OK, "%s: %s", c->id, c->message);
        printf("%-12s %10.3f ms  %8.4f ns/site  iterations %.1f\n", c->variant,
               1e3 * c->stats.median, 1e9 * c->stats.median / c->items,
               metric_of(c, "label_iterations"));
        /* The device step counter makes komura and union_find capturable; the iterative
         * ones read a flag back and say so (KB_RUN_SYNCS).  A batch of one run (a run of
         * 1 ms or more) is timed by events whatever the flags: hawick at this size sits on
         * that edge. */
        const char *timing = c->timing;
        const int iterative =
            strcmp(c->variant, "hawick") == 0 || strcmp(c->variant, "kalentev") == 0;
        const char *want = c->batch == 1 ? "events" : iterative ? "launches" : "graph";
        cr_expect(c->batch >= 1, "%s: batch %ld", c->id, c->batch);
        cr_expect(timing && strcmp(timing, want) == 0, "%s: timing %s with batch %ld, expected %s",
                  c->id, timing ? timing : "(none)", c->batch, want);
        if (strcmp(c->variant, "union_find") == 0)
            uf = c->stats.median;
        if (strcmp(c->variant, "kalentev") == 0)
            ka = c->stats.median;
    }
    cr_expect(uf > 0.0 && ka > uf, "union_find %.3g s, kalentev %.3g s", uf, ka);
    printf("kalentev / union_find = %.2f (target >= 2.5)\n", ka / uf);
    kbi_results_free(&set);
}
