/* The labeling plugin's behaviour that needs no GPU: the RNG against the Philox known answers,
 * the host union-find against an independent flood fill on random bond sets (and a broken
 * labeling caught), the physics of the host SW step (2-D Ising at Tc: energy per spin against
 * the exact finite-lattice value from Kaufman's partition function, moment ratio near its
 * universal value; the q = 4 clock model, which is two Ising copies at half the coupling, with
 * the same energy at half the temperature), and the host variant through `kbench run` in both
 * modes, every model, 2-D and 3-D.  The host code is compiled into the test. */
#define _XOPEN_SOURCE 700
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../plugins/labeling/host.c"
#include "helpers.h"

static void setup(void)
{
    make_tmp_named("labeling");
}

TestSuite(labeling, .init = setup, .fini = remove_tmp);

/* Random123's known-answer vectors for philox4x32-10: counter words c0..c3 are (site, step
 * low, step high, purpose), key words (seed low, seed high). */
Test(labeling, philox_matches_the_known_answers)
{
    lb_u32x4 a = lb_philox(0, 0, 0, 0);
    cr_expect_eq(a.v[0], 0x6627e8d5u);
    cr_expect_eq(a.v[1], 0xe169c58du);
    cr_expect_eq(a.v[2], 0xbc57ac4cu);
    cr_expect_eq(a.v[3], 0x9b00dbd8u);
    lb_u32x4 b = lb_philox(~0ull, ~0ull, ~0u, ~0u);
    cr_expect_eq(b.v[0], 0x408f276du);
    cr_expect_eq(b.v[1], 0x41c83b0eu);
    cr_expect_eq(b.v[2], 0xa20bc7c6u);
    cr_expect_eq(b.v[3], 0x6d5451fdu);
    lb_u32x4 c = lb_philox(0x299f31d0a4093822ull, 0x13198a2e85a308d3ull, 0x243f6a88u, 0x03707344u);
    cr_expect_eq(c.v[0], 0xd16cfe09u);
    cr_expect_eq(c.v[1], 0x94fdccebu);
    cr_expect_eq(c.v[2], 0x5001e420u);
    cr_expect_eq(c.v[3], 0x24126ea1u);
}

/* The threaded random bond sets and union-find (verify's reference at large L) give the
 * sequential ones' bonds and labels exactly, for thread counts that do and do not divide L, 2-D and
 * 3-D, below, at and above the percolation threshold and with every bond set (one cluster crossing
 * every slab). */
Test(labeling, threaded_union_find_equals_union_find)
{
    const int dims[] = {2, 3}, sizes[] = {61, 17}, threads[] = {1, 2, 3, 7, 16, 64, 100};
    const double ps[] = {0.3, 0.5, 0.8, 0.2488, 1.0};
    for (int di = 0; di < 2; di++) {
        lb_lattice lat = {dims[di], sizes[di], 0};
        lat.n = (uint32_t)(dims[di] == 2 ? lat.L * lat.L : lat.L * lat.L * lat.L);
        uint8_t *bonds = malloc(lat.n);
        uint32_t *a = malloc(4 * lat.n), *b = malloc(4 * lat.n), *parent = malloc(4 * lat.n);
        for (int pi = 0; pi < 5; pi++) {
            lb_random_bonds(&lat, ps[pi], 7, (uint64_t)pi, bonds);
            /* The threaded bond sets are the same, byte for byte. */
            uint8_t *again = malloc(lat.n);
            lb_random_bonds_threads(&lat, ps[pi], 7, (uint64_t)pi, again, 5);
            cr_expect(memcmp(again, bonds, lat.n) == 0, "dim %d p %g: threaded bonds differ",
                      lat.dim, ps[pi]);
            free(again);
            const uint32_t ca = lb_host_label_uf(&lat, bonds, a);
            for (size_t ti = 0; ti < sizeof threads / sizeof threads[0]; ti++) {
                memset(b, 0xFF, 4 * lat.n);
                const uint32_t cb = lb_host_label_uf_threads(&lat, bonds, b, parent, threads[ti]);
                cr_expect_eq(ca, cb, "dim %d p %g threads %d: %u vs %u clusters", lat.dim, ps[pi],
                             threads[ti], ca, cb);
                cr_expect(memcmp(a, b, 4 * lat.n) == 0, "dim %d p %g threads %d: labels differ",
                          lat.dim, ps[pi], threads[ti]);
            }
            if (ps[pi] == 1.0)
                cr_expect_eq(ca, 1);
        }
        free(bonds);
        free(a);
        free(b);
        free(parent);
    }
}

/* The partition comparison: identical arrays pass by the fast path, but a label out of range
 * still counts; a renamed partition passes; a moved site fails. */
Test(labeling, partition_mismatches_counts_up_to_renaming)
{
    enum { N = 12 };
    uint32_t a[N] = {0, 0, 2, 2, 2, 5, 5, 7, 7, 7, 7, 11}, b[N], map[N], rev[N];
    memcpy(b, a, sizeof a);
    cr_expect_eq(lb_partition_mismatches(N, a, b, map, rev), 0);
    for (int i = 0; i < N; i++) /* rename: label l -> 11 - l */
        b[i] = 11 - a[i];
    cr_expect_eq(lb_partition_mismatches(N, a, b, map, rev), 0);
    b[4] = b[5]; /* site 4 joins 5's cluster */
    cr_expect_gt(lb_partition_mismatches(N, a, b, map, rev), 0);
    a[3] = N; /* out of range, in both */
    memcpy(b, a, sizeof a);
    cr_expect_eq(lb_partition_mismatches(N, a, b, map, rev), 1);
}

/* Union-find and flood fill agree on every site, 2-D and 3-D, below, at and above the
 * percolation threshold; both put each site under its cluster's smallest site; a labeling
 * with one site moved to another cluster is caught. */
Test(labeling, union_find_equals_flood_fill_on_random_bonds)
{
    const int dims[] = {2, 3}, sizes[] = {37, 13};
    const double ps[] = {0.3, 0.5, 0.8, 0.2488};
    for (int di = 0; di < 2; di++) {
        lb_lattice lat = {dims[di], sizes[di], 0};
        lat.n = (uint32_t)(dims[di] == 2 ? lat.L * lat.L : lat.L * lat.L * lat.L);
        uint8_t *bonds = malloc(lat.n);
        uint32_t *a = malloc(4 * lat.n), *b = malloc(4 * lat.n), *map = malloc(4 * lat.n),
                 *rev = malloc(4 * lat.n), *stack = malloc(4 * lat.n);
        for (int pi = 0; pi < 4; pi++) {
            lb_random_bonds(&lat, ps[pi], 42, (uint64_t)pi, bonds);
            const uint32_t ca = lb_host_label_uf(&lat, bonds, a);
            const uint32_t cb = lb_host_label_bfs(&lat, bonds, b, stack);
            cr_expect_eq(ca, cb, "dim %d p %g: %u vs %u clusters", lat.dim, ps[pi], ca, cb);
            cr_expect_eq(lb_partition_mismatches(lat.n, a, b, map, rev), 0);
            for (uint32_t i = 0; i < lat.n; i++)
                cr_assert(a[i] <= i && a[a[i]] == a[i] && a[i] == b[i], "site %u", i);
            cr_expect((ca > 1 || ps[pi] > 0.6) && ca < lat.n, "dim %d p %g: %u clusters", lat.dim,
                      ps[pi], ca);
            /* Move the last site of a cluster of two or more to a singleton's label. */
            for (uint32_t i = lat.n; i-- > 0;)
                if (a[i] != i) {
                    a[i] = i;
                    break;
                }
            cr_expect_gt(lb_partition_mismatches(lat.n, a, b, map, rev), 0);
        }
        free(bonds);
        free(a);
        free(b);
        free(map);
        free(rev);
        free(stack);
    }
}

/* log(e^x + sign*e^y) for x >= y helpers: signed log-sum-exp of terms (lg[i], sg[i]). */
static double logsumexp_signed(const double *lg, const int *sg, int n)
{
    double mx = -INFINITY, s = 0.0;
    for (int i = 0; i < n; i++)
        if (sg[i] && lg[i] > mx)
            mx = lg[i];
    for (int i = 0; i < n; i++)
        if (sg[i])
            s += sg[i] * exp(lg[i] - mx);
    return mx + log(s);
}

/* ln Z of the L x L periodic Ising model at coupling K (Kaufman 1949): four products over
 * gamma_l, cosh gamma_l = cosh 2K coth 2K - cos(pi l / L), gamma_0 = 2K + ln tanh K. */
static double ising_lnZ(int L, double K)
{
    double lg[4] = {0, 0, 0, 0};
    int sg[4] = {1, 1, 1, 1};
    const double c = cosh(2 * K) / tanh(2 * K);
    for (int r = 0; r < L; r++) {
        for (int odd = 0; odd < 2; odd++) {
            const int l = 2 * r + odd;
            const double g = l == 0 ? 2 * K + log(tanh(K)) : acosh(c - cos(M_PI * l / L));
            const double hc = 2 * cosh(L * g / 2), hs = 2 * sinh(L * g / 2);
            /* terms: 0 cosh odd, 1 sinh odd, 2 cosh even, 3 sinh even */
            lg[odd ? 0 : 2] += log(hc);
            if (hs == 0.0)
                sg[odd ? 1 : 3] = 0;
            else {
                lg[odd ? 1 : 3] += log(fabs(hs));
                if (hs < 0)
                    sg[odd ? 1 : 3] *= -1;
            }
        }
    }
    const double N = (double)L * L;
    return log(0.5) + N / 2 * log(2 * sinh(2 * K)) + logsumexp_signed(lg, sg, 4);
}

/* Exact energy per spin, -d ln Z / dK / N. */
static double ising_energy(int L, double K)
{
    const double h = 1e-6;
    return -(ising_lnZ(L, K + h) - ising_lnZ(L, K - h)) / (2 * h) / ((double)L * L);
}

Test(labeling, kaufman_energy_tends_to_onsager)
{
    const double Kc = 0.5 * log(1 + sqrt(2.0));
    const double e8 = ising_energy(8, Kc), e64 = ising_energy(64, Kc), e512 = ising_energy(512, Kc);
    /* Finite lattices lie below -sqrt 2 at Tc and approach it as 1/L. */
    cr_expect(e8 < e64 && e64 < e512 && e512 < -sqrt(2.0), "%.6f %.6f %.6f", e8, e64, e512);
    cr_expect_lt(fabs(e512 + sqrt(2.0)), 0.002, "%.6f", e512);
    /* High temperature: e -> -2 tanh K for small K (leading order). */
    cr_expect_lt(fabs(ising_energy(16, 0.01) + 2 * tanh(0.01)), 1e-5);
}

/* Runs `steps` host SW steps after `discard`, returns the analysis. */
static void simulate(const lb_lattice *lat, int kind, int q, double T, int discard, int steps,
                     lb_results *r)
{
    lb_model m;
    static lb_tables t;
    lb_sums sums;
    uint16_t *spins = malloc(lat->n * sizeof(uint16_t));
    uint8_t *bonds = malloc(lat->n);
    uint32_t *labels = malloc(lat->n * sizeof(uint32_t));
    double *obs = malloc((size_t)steps * LB_OBS_COUNT * sizeof(double));
    lb_model_setup(&m, &t, kind, q, T);
    lb_host_init_spins(lat, &m, 7, spins);
    for (int k = 0; k < discard + steps; k++) {
        lb_host_sweep(lat, &m, 7, (uint64_t)k, spins, bonds, labels);
        if (k >= discard) {
            lb_host_sums(lat, &m, &t, spins, labels, &sums);
            cr_assert_eq(sums.bad, 0);
            lb_observe(lat, &m, &sums, &obs[(size_t)(k - discard) * LB_OBS_COUNT]);
        }
    }
    lb_analyse(lat, &m, obs, (size_t)steps, r);
    free(spins);
    free(bonds);
    free(labels);
    free(obs);
}

/* 2-D Ising at Tc, L = 32, 40000 steps: the energy within 4 standard errors of the exact
 * finite-lattice value (~0.004), and the moment ratio within 4 standard errors plus 0.01
 * (corrections to scaling at L = 32) of 1.1679. */
Test(labeling, ising_2d_at_tc_matches_the_exact_energy, .timeout = 120)
{
    const lb_lattice lat = {2, 32, 32 * 32};
    const double Tc = 2.0 / log(1.0 + sqrt(2.0)), exact = ising_energy(32, 1.0 / Tc);
    lb_results r;
    simulate(&lat, LB_ISING, 2, Tc, 200, 40000, &r);
    printf("ising L=32 Tc: e = %.5f +- %.5f (exact %.5f), U = %.4f +- %.4f, C = %.3f +- %.3f\n",
           r.energy.value, r.energy.error, exact, r.moment_ratio.value, r.moment_ratio.error,
           r.specific_heat.value, r.specific_heat.error);
    cr_expect_lt(r.energy.error, 0.003);
    cr_expect_lt(fabs(r.energy.value - exact), 4 * r.energy.error, "e = %.5f +- %.5f, exact %.5f",
                 r.energy.value, r.energy.error, exact);
    cr_expect_lt(fabs(r.moment_ratio.value - 1.1679), 4 * r.moment_ratio.error + 0.01,
                 "U = %.4f +- %.4f", r.moment_ratio.value, r.moment_ratio.error);
}

/* The q = 4 clock model splits into two Ising models of coupling J/2: at T = Tc(Ising)/2 its
 * energy per spin is the Ising one at Tc.  Checks the embedded-cluster (xy) update. */
Test(labeling, clock4_is_two_ising_copies, .timeout = 120)
{
    const lb_lattice lat = {2, 16, 16 * 16};
    const double Tc = 2.0 / log(1.0 + sqrt(2.0)), exact = ising_energy(16, 1.0 / Tc);
    lb_results r;
    simulate(&lat, LB_XY, 4, Tc / 2, 200, 40000, &r);
    printf("clock4 L=16 Tc/2: e = %.5f +- %.5f (exact %.5f)\n", r.energy.value, r.energy.error,
           exact);
    cr_expect_lt(fabs(r.energy.value - exact), 4 * r.energy.error, "e = %.5f +- %.5f, exact %.5f",
                 r.energy.value, r.energy.error, exact);
}

/* 2-D 3-state Potts at Tc: energy per spin -(1 + 1/sqrt 3) in the limit; L = 32 within
 * 4 standard errors plus 0.02 (finite size). */
Test(labeling, potts3_2d_energy_at_tc, .timeout = 120)
{
    const lb_lattice lat = {2, 32, 32 * 32};
    lb_results r;
    simulate(&lat, LB_POTTS, 3, 1.0 / log(1.0 + sqrt(3.0)), 200, 20000, &r);
    printf("potts3 L=32 Tc: e = %.5f +- %.5f (limit %.5f)\n", r.energy.value, r.energy.error,
           -(1 + 1 / sqrt(3.0)));
    cr_expect_lt(fabs(r.energy.value + 1 + 1 / sqrt(3.0)), 4 * r.energy.error + 0.02);
}

/* The host variant through kbench: every model, 2-D and 3-D, both modes, verified, with the
 * declared metrics reported: the measurement's by instrument (ABI 1.4), after the last verify
 * and recorded as instrumented, none by verify. */
Test(labeling, host_variant_runs_and_verifies, .timeout = 300)
{
    kbi_result_set set = {0};
    cr_expect_eq(
        run_profile_text("[run]\nwarmup = 1\nmin_samples = 3\nmin_time = 0\nmax_time = 0.05\n"
                         "timeout = 120\n[labeling]\nvariants = host_uf\nmodel = ising, potts, xy\n"
                         "dim = 2, 3\nL = 12\nmcs_discard = 20\nmcs_measure = 40\n"
                         "mode = mcs, labeling_only\nsteps = 2\n",
                         &set),
        0);
    cr_assert_eq(set.n_cases, 12);
    for (size_t i = 0; i < set.n_cases; i++) {
        const kbi_case_result *c = &set.cases[i];
        const int only = strstr(c->id, "mode=labeling_only") != NULL;
        const char *timing = only ? "ns_per_flip_label" : "ns_per_flip";
        cr_expect_eq(c->status, KBI_ST_OK, "%s: %s", c->id, c->message);
        cr_expect(c->has_verify && c->verify_passed, "%s", c->id);
        cr_expect(c->instrumented.ran && c->instrumented.status == KBI_ST_OK, "%s", c->id);
        cr_expect(case_metric(c, timing) && case_metric(c, timing)->instrumented, "%s: %s", c->id,
                  timing);
        cr_expect(only || (case_metric(c, "m2") && case_metric(c, "m2")->instrumented), "%s",
                  c->id);
        for (size_t k = 0; k < c->n_metrics; k++)
            cr_expect(c->metrics[k].instrumented, "%s: %s reported outside instrument", c->id,
                      c->metrics[k].name);
    }
    kbi_results_free(&set);
}

/* ---- the device labelers' per-site code, run sequentially on the CPU ---------------------- */

#include "../plugins/labeling/kernels/kernels.h"
#include "../plugins/labeling/kernels/01_hawick.cuh"
#include "../plugins/labeling/kernels/02_kalentev.cuh"
#include "../plugins/labeling/kernels/03_komura.cuh"
#include "../plugins/labeling/kernels/04_union_find.cuh"

/* A "kernel launch": the site bodies one after another in a shuffled order, one of the
 * interleavings the GPU may produce (each body as if atomic). */
static void shuffle(uint32_t *perm, uint32_t n, uint64_t seed)
{
    for (uint32_t i = 0; i < n; i++)
        perm[i] = i;
    for (uint32_t i = n; i > 1; i--) {
        const uint32_t j = lb_below(lb_philox(seed, i, 0, LB_RNG_TEST).v[0], i);
        const uint32_t t = perm[i - 1];
        perm[i - 1] = perm[j];
        perm[j] = t;
    }
}

/* The flatten as a kernel in which every thread reads before any thread writes, a legal
 * interleaving of a phase without atomics (each find reads only earlier links): each site's
 * body runs on its own copy of the labels as they were at the launch, and the stores it made
 * are then applied, those of all sites interleaved in a shuffled order.  A flatten whose finds
 * relinked (stored an ancestor into a site other than its own) fails here: such a store can
 * land after that site's own root (as on the H200 in union_find v2's first run). */
static void flatten_reads_first(uint32_t *L, uint32_t n, uint64_t seed)
{
    uint32_t *copy = malloc(n * sizeof *copy), *addr = NULL, *val = NULL, *order;
    size_t m = 0, cap = 0;
    cr_assert_not_null(copy);
    for (uint32_t i = 0; i < n; i++) {
        memcpy(copy, L, n * sizeof *copy);
        lb_flatten_site(copy, i);
        for (uint32_t j = 0; j < n; j++)
            if (copy[j] != L[j]) {
                if (m == cap) {
                    cap = cap ? 2 * cap : 1024;
                    addr = realloc(addr, cap * sizeof *addr);
                    val = realloc(val, cap * sizeof *val);
                    cr_assert(addr && val);
                }
                addr[m] = j;
                val[m++] = copy[j];
            }
    }
    order = malloc((m ? m : 1) * sizeof *order);
    cr_assert_not_null(order);
    shuffle(order, (uint32_t)m, seed);
    for (size_t k = 0; k < m; k++)
        L[addr[order[k]]] = val[order[k]];
    free(copy);
    free(addr);
    free(val);
    free(order);
}

/* Emulates labeler `which` (LB_HAWICK..LB_UNION_FIND); returns the scans of an iterative one. */
static int emulate(int which, const lb_lattice *lat, const uint8_t *bonds, uint32_t *L, uint32_t *R,
                   uint32_t *perm, uint64_t seed)
{
    const uint32_t n = lat->n;
    int it = 0, flag = 1;
    shuffle(perm, n, seed);
    switch (which) {
    case LB_HAWICK:
        for (uint32_t k = 0; k < n; k++)
            lb_hawick_init_site(L, R, perm[k]);
        while (flag && it <= (int)n) {
            flag = 0;
            it++;
            shuffle(perm, n, seed + (uint64_t)it);
            for (uint32_t k = 0; k < n; k++)
                lb_hawick_scan_site(lat, bonds, L, R, &flag, perm[k]);
            for (uint32_t k = 0; k < n; k++)
                lb_hawick_analysis_site(L, R, perm[k]);
            for (uint32_t k = 0; k < n; k++)
                lb_hawick_labeling_site(L, R, perm[k]);
        }
        break;
    case LB_KALENTEV:
        for (uint32_t k = 0; k < n; k++)
            lb_kalentev_init_site(L, perm[k]);
        while (flag && it <= (int)n) {
            flag = 0;
            it++;
            shuffle(perm, n, seed + (uint64_t)it);
            for (uint32_t k = 0; k < n; k++)
                lb_kalentev_scan_site(lat, bonds, L, &flag, perm[k]);
            for (uint32_t k = 0; k < n; k++)
                lb_kalentev_analysis_site(L, perm[k]);
        }
        break;
    case LB_KOMURA:
        for (uint32_t k = 0; k < n; k++)
            lb_komura_init_site(lat, bonds, L, perm[k]);
        for (uint32_t k = 0; k < n; k++)
            lb_flatten_site(L, perm[k]);
        for (uint32_t k = 0; k < n; k++)
            lb_komura_reduce_site(lat, bonds, L, perm[k]);
        for (uint32_t k = 0; k < n; k++)
            lb_flatten_site(L, perm[k]);
        break;
    default: {
        const int tx = lat->dim == 2 ? 32 : 8, ty = 8, tz = lat->dim == 2 ? 1 : 4;
        const int nz = lat->dim == 2 ? 1 : (lat->L + tz - 1) / tz;
        uint32_t s[256], tp[256];
        for (int bz = 0; bz < nz; bz++)
            for (int by = 0; by < (lat->L + ty - 1) / ty; by++)
                for (int bx = 0; bx < (lat->L + tx - 1) / tx; bx++) {
                    const lb_tile tl = {tx, ty, tz, bx, by, bz};
                    shuffle(tp, 256, seed + (uint64_t)(bx + 1000 * by + 1000000 * bz));
                    for (uint32_t t = 0; t < 256; t++)
                        s[t] = t;
                    for (uint32_t t = 0; t < 256; t++)
                        lb_uf_local_site(lat, &tl, bonds, s, tp[t]);
                    for (uint32_t t = 0; t < 256; t++)
                        lb_uf_write_site(lat, &tl, s, L, tp[t]);
                }
        /* Phase 3: every (tile, lane) in a shuffled order. */
        const int nbx = (lat->L + tx - 1) / tx, nby = (lat->L + ty - 1) / ty;
        const uint32_t lanes = (uint32_t)lb_uf_face_lanes(lat->dim, tx, ty, tz),
                       work = (uint32_t)(nbx * nby * nz) * lanes;
        uint32_t *fp = malloc(work * sizeof *fp);
        cr_assert_not_null(fp);
        shuffle(fp, work, seed + 77);
        for (uint32_t k = 0; k < work; k++) {
            const uint32_t tile = fp[k] / lanes;
            lb_uf_face_site(lat, tx, ty, tz, (int)(tile % (uint32_t)nbx),
                            (int)(tile / (uint32_t)nbx % (uint32_t)nby),
                            (int)(tile / (uint32_t)(nbx * nby)), (int)(fp[k] % lanes), bonds, L);
        }
        free(fp);
        flatten_reads_first(L, n, seed + 99);
        it = 1;
    }
    }
    return it;
}

/* Every device labeler's site code, run in shuffled orders, gives exactly the host
 * union-find's labels (the smallest site of each cluster) on random bond sets and on the
 * bonds of a thermalised Ising lattice at Tc; 2-D and 3-D, sizes that are and are not
 * multiples of the union_find tiles, and smaller than one.  The iterative ones stop after a
 * bounded number of scans. */
Test(labeling, device_labelers_emulated_give_the_reference_labels, .timeout = 120)
{
    /* Also lattices smaller than one tile and exact multiples of the tiles. */
    const int dims[] = {2, 2, 2, 2, 3, 3, 3, 3}, sizes[] = {37, 70, 64, 5, 9, 13, 16, 4};
    const char *names[] = {"hawick", "kalentev", "komura", "union_find"};
    for (int c = 0; c < 8; c++) {
        lb_lattice lat = {dims[c], sizes[c], 0};
        lat.n = (uint32_t)(lat.dim == 2 ? lat.L * lat.L : lat.L * lat.L * lat.L);
        uint8_t *bonds = malloc(lat.n);
        uint16_t *spins = malloc(2 * lat.n);
        uint32_t *ref = malloc(4 * lat.n), *L = malloc(4 * lat.n), *R = malloc(4 * lat.n),
                 *perm = malloc(4 * lat.n), *work = malloc(4 * lat.n);
        static lb_tables t;
        lb_model m;
        lb_model_setup(&m, &t, LB_ISING, 2, lb_critical_T(LB_ISING, lat.dim, 2));
        lb_host_init_spins(&lat, &m, 3, spins);
        for (int k = 0; k < 30; k++)
            lb_host_sweep(&lat, &m, 3, (uint64_t)k, spins, bonds, work);
        for (int set = 0; set < 4; set++) {
            if (set < 3)
                lb_random_bonds(&lat, (lat.dim == 2 ? 0.5 : 0.2488) * (0.6 + 0.4 * set), 9,
                                (uint64_t)set, bonds);
            else
                lb_host_bonds(&lat, &m, 3, 30, spins, bonds);
            lb_host_label_uf(&lat, bonds, ref);
            for (int w = 0; w < LB_LABELER_COUNT; w++) {
                for (uint64_t seed = 1; seed <= 3; seed++) {
                    memset(L, 0xFF, 4 * lat.n);
                    const int it = emulate(w, &lat, bonds, L, R, perm, seed * 77 + (uint64_t)set);
                    cr_assert(it <= (int)lat.n, "%s: no convergence", names[w]);
                    uint32_t bad = 0;
                    for (uint32_t i = 0; i < lat.n; i++)
                        bad += L[i] != ref[i];
                    cr_expect_eq(bad, 0, "%s dim %d L %d set %d: %u sites differ", names[w],
                                 lat.dim, lat.L, set, bad);
                }
            }
        }
        free(bonds);
        free(spins);
        free(ref);
        free(L);
        free(R);
        free(perm);
        free(work);
    }
}
