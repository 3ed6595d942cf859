/* The md plugin on a real GPU: every strategy verifies (forces and energy against the double
 * reference, neighbour sets against brute force, energy drift, first-step energy and pair count
 * against the point's reference) on the three systems, with and without reordering and the
 * read-only cache, and from a shuffled atom order (never reordered, and sorted at the load); all
 * strategies report the same N_p/N_a within the dynamics' spread; every case reports the metrics
 * the issue asks for (time per atom-step, the fractions in neighbour building and forces, N_p/N_a,
 * N_l, N_u, bytes per atom within the paper's order, drift, energies, pressure), the host-layer
 * strategies the host layer assignment's pieces and every neighbour-matrix strategy its build
 * kernel, with fractions that nest (kernel and host part within t_nbr, t_nbr + t_force <= 1); and
 * the capturable fast variant keeps a loose floor on the standard LJ liquid (far below the issue's
 * target: it catches a broken fast path, not noise). Skips with the reason without a device. */
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
    make_tmp_named("md-gpu");
}

TestSuite(md_gpu, .init = setup, .fini = remove_tmp);

static int is_one_of(const char *v, const char *list)
{
    char pad[64];
    snprintf(pad, sizeof pad, ",%s,", v);
    return strstr(list, pad) != NULL;
}

/* The metrics the issue (and HISTORY.md's tables) rely on, present and consistent. */
static void check_metrics(const kbi_case_result *c)
{
    static const char *always[] = {"us_per_atom_step",   "t_nbr_fraction",    "t_force_fraction",
                                   "neighbors_per_atom", "steps_per_rebuild", "bytes_per_atom",
                                   "energy_drift",       "total_energy",      "kinetic_energy",
                                   "potential_energy",   "pressure"};
    static const char *host_layers[] = {"t_host_layers_fraction", "host_layers_ns_per_atom",
                                        "host_wait_ns_per_atom",  "host_loop_ns_per_atom",
                                        "host_c_copy_gbs",        "host_l_copy_gbs"};
    const kbi_metric *nbr = case_metric(c, "t_nbr_fraction"),
                     *frc = case_metric(c, "t_force_fraction");
    const kbi_metric *bytes = case_metric(c, "bytes_per_atom");
    int w = is_one_of(c->variant, ",cell_block,layer_matrix,layer_atomic,sorted,");
    int hl = is_one_of(c->variant, ",cell_block,layer_matrix,");
    for (size_t k = 0; k < sizeof always / sizeof always[0]; k++)
        cr_expect(case_metric(c, always[k]) != NULL, "%s: no %s", c->id, always[k]);
    /* The phase timings come from instrument (ABI 1.4), after the last verify; the run's
     * figures from verify. */
    for (size_t k = 0; k < 3; k++)
        cr_expect(case_metric(c, always[k]) && case_metric(c, always[k])->instrumented,
                  "%s: %s not instrumented", c->id, always[k]);
    for (size_t k = 3; k < sizeof always / sizeof always[0]; k++)
        cr_expect(!case_metric(c, always[k]) || !case_metric(c, always[k])->instrumented,
                  "%s: %s instrumented", c->id, always[k]);
    cr_expect(c->instrumented.ran && c->instrumented.status == KBI_ST_OK, "%s: instrument %s",
              c->id, c->instrumented.message);
    if (w || strcmp(c->variant, "host_layer") == 0)
        cr_expect(case_metric(c, "layers") != NULL, "%s: no layers", c->id);
    for (size_t k = 0; hl && k < sizeof host_layers / sizeof host_layers[0]; k++) {
        const kbi_metric *m = case_metric(c, host_layers[k]);
        cr_expect(m != NULL && m->value > 0, "%s: %s missing or not positive", c->id,
                  host_layers[k]);
    }
    if (nbr && frc) {
        cr_expect(nbr->value > 0 && frc->value > 0 && nbr->value + frc->value <= 1.0 + 1e-9,
                  "%s: t_nbr %g, t_force %g", c->id, nbr->value, frc->value);
        if (w) {
            const kbi_metric *b = case_metric(c, "t_build_kernel_fraction");
            cr_expect(b != NULL && case_metric(c, "build_kernel_ns_per_atom") != NULL,
                      "%s: no build kernel metrics", c->id);
            if (b)
                cr_expect(b->value > 0 && b->value <= nbr->value, "%s: build kernel %g of t_nbr %g",
                          c->id, b->value, nbr->value);
        }
        if (hl) {
            const kbi_metric *h = case_metric(c, "t_host_layers_fraction");
            if (h)
                cr_expect(h->value <= 1.01 * nbr->value, "%s: host layers %g of t_nbr %g", c->id,
                          h->value, nbr->value);
        }
    }
    /* The paper's order (about 220 B per atom for SP, 770 for LJ; HISTORY.md says why SP is
     * higher: the reordering scratch), at this small size too. */
    if (bytes && w)
        cr_expect(bytes->value < (strstr(c->id, "system=sp,") ? 300.0 : 800.0),
                  "%s: %g bytes per atom", c->id, bytes->value);
}

Test(md_gpu, every_strategy_verifies_on_every_system, .timeout = 900)
{
    kbi_result_set set = {0};
    need_gpu();
    cr_expect_eq(
        run_profile_text("[run]\nwarmup = 1\nmin_samples = 3\nmin_time = 0\nmax_time = 1\n"
                         "timeout = 300\ncache = hot\n"
                         "[md]\nvariants = allpairs, cell_block, layer_matrix, layer_atomic, "
                         "sorted, host_pairlist\nsystem = sp, lj, ljstd\nN_e = 16\n"
                         "steps = 200\n"
                         "[md.options]\nvariants = layer_matrix, layer_atomic, cell_block\n"
                         "system = sp\nN_e = 20\nreorder = 0, 7\nldg = 0, 1\nthreads = 64\n"
                         "steps = 300\n"
                         "[md.shuffled]\nvariants = cell_block, layer_matrix\n"
                         "system = ljstd\nN_e = 20\nshuffle = 1\nreorder = 0, 30\nsteps = 100\n"
                         /* sorted reorders at every rebuild: reorder is not its knob */
                         "[md.shuffled_sorted]\nvariants = sorted\n"
                         "system = ljstd\nN_e = 20\nshuffle = 1\nsteps = 100\n"
                         "[md.l1]\nvariants = layer_matrix, layer_atomic, sorted\n"
                         "system = sp, ljstd\nN_e = 20\nldg = 0\nl1 = 0\nshifted = 1\n"
                         "steps = 300\n",
                         &set),
        0);
    cr_assert_eq(set.n_cases, 18 + 12 + 4 + 1 + 6);
    for (size_t sys = 0; sys < 3; sys++) {
        double np_ref = -1;
        for (size_t i = 0; i < set.n_cases; i++) {
            const kbi_case_result *c = &set.cases[i];
            const char *names[3] = {"system=sp,", "system=lj,", "system=ljstd,"};
            const kbi_metric *np;
            if (!strstr(c->id, names[sys]) || strstr(c->id, "N_e=20"))
                continue;
            np = case_metric(c, "neighbors_per_atom");
            cr_expect(np != NULL, "%s", c->id);
            if (np && np_ref < 0)
                np_ref = np->value;
            else if (np)
                cr_expect(fabs(np->value - np_ref) < 0.02 * np_ref, "%s: N_p/N_a %g vs %g", c->id,
                          np->value, np_ref);
        }
    }
    for (size_t i = 0; i < set.n_cases; i++) {
        const kbi_case_result *c = &set.cases[i];
        cr_expect_eq(c->status, KBI_ST_OK, "%s: %s", c->id, c->message);
        cr_expect(c->has_verify && c->verify_passed, "%s: %s", c->id, c->message);
        check_metrics(c);
        if (strstr(c->id, "system=ljstd,") && strstr(c->id, "shifted=1")) {
            /* the LJTS energy (-4.89 at this point; unshifted it is -5.34) beside the EOS */
            const kbi_metric *u = case_metric(c, "potential_energy"),
                             *ur = case_metric(c, "eos_u_ref");
            cr_expect(u && ur && fabs(u->value - ur->value) < 0.05 && case_metric(c, "eos_p_ref"),
                      "%s: U %g vs EOS %g", c->id, u ? u->value : 0.0, ur ? ur->value : 0.0);
        }
        printf("%-90s %10.3e atom-steps/s  %s\n", c->id, c->items_per_s, c->message);
    }
    kbi_results_free(&set);
}

/* Hot mode times a run() of many kernels as the GPU executes them: sorted at 13,824 atoms
 * with 100 steps a run (about 900 small kernels, over a millisecond: a batch of one) reads
 * within 5% per step of 10 steps a run (batched, graph replay).  Before the graph-or-stream
 * trial, the batch of one was timed at the CPU's launch rate: 39.5 against 28.5 us a step. */
Test(md_gpu, a_long_run_of_small_kernels_is_timed_like_a_batched_one, .timeout = 600)
{
    kbi_result_set set = {0};
    double us_per_step[2] = {0, 0};
    need_gpu();
    cr_expect_eq(run_profile_text("[run]\nwarmup = 2\nmin_samples = 10\nmin_time = 0.3\n"
                                  "timeout = 300\ncache = hot\n"
                                  "[md]\nvariants = sorted\nsystem = sp\nN_e = 24\n"
                                  "steps = 100, 10\n",
                                  &set),
                 0);
    cr_assert_eq(set.n_cases, 2);
    for (size_t i = 0; i < set.n_cases; i++) {
        const kbi_case_result *c = &set.cases[i];
        long long steps = json_integer_value(json_object_get(c->params, "steps"));
        cr_expect_eq(c->status, KBI_ST_OK, "%s: %s", c->id, c->message);
        cr_assert(steps == 100 || steps == 10, "%s", c->id);
        us_per_step[steps == 10] = c->stats.median * 1e6 / (double)steps;
        printf("%-70s %-8s batch %ld  %8.3f us/step  %s\n", c->id, c->timing, c->batch,
               us_per_step[steps == 10], c->message);
    }
    cr_expect_lt(fabs(us_per_step[0] / us_per_step[1] - 1.0), 0.05,
                 "100 steps a run: %.3f us/step; 10 steps a run: %.3f us/step", us_per_step[0],
                 us_per_step[1]);
    kbi_results_free(&set);
}

Test(md_gpu, sorted_keeps_a_floor_on_the_standard_liquid, .timeout = 600)
{
    kbi_result_set set = {0};
    need_gpu();
    cr_expect_eq(run_profile_text("[run]\nwarmup = 2\nmin_samples = 5\nmin_time = 0.2\n"
                                  "timeout = 300\ncache = hot\n"
                                  "[md]\nvariants = sorted, layer_atomic\nsystem = ljstd\n"
                                  "N_e = 40\nsteps = 100\n",
                                  &set),
                 0);
    cr_assert_eq(set.n_cases, 2);
    for (size_t i = 0; i < set.n_cases; i++) {
        const kbi_case_result *c = &set.cases[i];
        const kbi_metric *u = case_metric(c, "potential_energy");
        cr_expect_eq(c->status, KBI_ST_OK, "%s: %s", c->id, c->message);
        printf("%-70s %10.3e atom-steps/s\n", c->id, c->items_per_s);
        /* T drifts from 1.0 after the rescaling stops: a wide band around -5.33 */
        cr_expect(u && u->value > -5.6 && u->value < -5.0, "%s: U/N %g", c->id, u ? u->value : 0);
        /* A regression guard 20% under the committed reference (baselines/h200/md, 262878e:
         * 8.16e8 atom-steps/s for sorted at ljstd N_e = 40). */
        if (strcmp(c->variant, "sorted") == 0 &&
            speed_guards_apply(c->env ? c->env->device_name : NULL))
            cr_expect_gt(c->items_per_s, 0.8 * 8.16e8, "sorted: %g atom-steps/s, reference 8.16e8",
                         c->items_per_s);
    }
    kbi_results_free(&set);
}
