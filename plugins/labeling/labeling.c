/* labeling plugin: Swendsen-Wang multi-cluster Monte Carlo with the cluster labeler as the
 * variant (README.md beside it; Komura and Okabe's CUDA programs, then the labelers since).
 *
 * A point is (model, dim, L, T, q, seeds, ...).  prepare() thermalises the lattice once
 * (mcs_discard steps; on the device with union_find when a device runs there, else on the
 * host: the same lattice either way, see labeling.h).  Each case starts from it.  One run is
 * `steps` whole SW steps continuing from where the last run left (mode = mcs), or the labeling
 * of one stored bond configuration (mode = labeling_only).  verify() checks, on the same
 * bonds, that the variant's clusters are exactly the reference's (the last run's bonds; at
 * the first verify also random bond sets below, at and above the percolation threshold), that
 * every spin is in range, and at the first verify that the variant evolves the prepared
 * lattice exactly as the host reference does.  instrument() (ABI 1.4, after the last verify)
 * measures mcs_measure steps from the prepared lattice: the observables with binning/jackknife
 * errors and the time per spin flip, whole step and labeling alone, reported as declared
 * metrics (labeling_only: the stored bonds labelled LB_LABEL_TIMINGS times, timed). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h> /* sysconf */

#include <cuda_runtime_api.h>

#include "host.h"
#include "kbench/cuda_check.h"
#include "kbench/plugin.h"
#include "kernels/kernels.h"

/* ---- descriptor ----------------------------------------------------------------------------- */

enum { V_HOST_UF, V_HAWICK, V_KALENTEV, V_KOMURA, V_UNION_FIND, V_COUNT };

static const kb_variant lb_variants[V_COUNT] = {
    {"host_uf", "union-find on the CPU (Hoshen-Kopelman class): the baseline and reference",
     KB_HOST, KB_VARIANT_BASELINE},
    {"hawick", "label equivalence, scan/analysis/labeling with atomicMin, iterated (Hawick 2010)",
     KB_DEVICE, 0},
    {"kalentev", "one label array, two kernels, no atomics, iterated (Kalentev 2011)", KB_DEVICE,
     0},
    {"komura", "non-iterative label equivalence with atomicMin reduction (Komura 2015)", KB_DEVICE,
     0},
    {"union_find",
     "direct union-find: tile union in shared memory, border union, flatten (Playne 2018)",
     KB_DEVICE, 0},
};

static const kb_param lb_params[] = {
    {"model", KB_PARAM_STRING, "ising", "spin model", "ising|potts|xy"},
    {"dim", KB_PARAM_INT, "2", "2 (L x L square) or 3 (L^3 simple cubic), periodic", NULL},
    {"L", KB_PARAM_INT, "256", "linear lattice size", NULL},
    {"T", KB_PARAM_FLOAT, "0",
     "temperature in units of J; 0: the model's critical temperature (HISTORY.md)", NULL},
    {"q", KB_PARAM_INT, "0", "states of potts (0: 3) and of the xy clock model (0: 512)", NULL},
    {"mcs_discard", KB_PARAM_INT, "200", "thermalisation steps, once per point (prepare)", NULL},
    {"mcs_measure", KB_PARAM_INT, "100", "steps measured by verify for the observables", NULL},
    {"seed", KB_PARAM_INT, "0", "Monte Carlo seed (0: the [run] seed)", NULL},
    {"mode", KB_PARAM_STRING, "mcs",
     "mcs: a run is `steps` SW steps; labeling_only: a run labels one stored bond set",
     "mcs|labeling_only"},
    {"steps", KB_PARAM_INT, "1", "SW steps per run (mode = mcs)", NULL},
};

static const kb_metric_def lb_metrics[] = {
    {"m2", "1", KB_BETTER_NONE, 0, 0, 0, "<m^2> over the measured steps"},
    {"m4", "1", KB_BETTER_NONE, 0, 0, 0, "<m^4> over the measured steps"},
    {"energy", "J", KB_BETTER_NONE, 0, 0, 0, "energy per spin"},
    {"specific_heat", "1", KB_BETTER_NONE, 0, 0, 0, "specific heat per spin, N var(e) / T^2"},
    {"moment_ratio", "1", KB_BETTER_NONE, 0, 0, 0, "<m^4>/<m^2>^2"},
    {"clusters", "1", KB_BETTER_NONE, 0, 0, 0, "mean number of clusters per step"},
    {"ns_per_flip", "ns", KB_BETTER_LOWER, KB_METRIC_TIMING, 0, 0,
     "whole SW step per spin (instrument's measured steps)"},
    {"ns_per_flip_label", "ns", KB_BETTER_LOWER, KB_METRIC_TIMING, 0, 0, "labeling alone per spin"},
    {"label_iterations", "1", KB_BETTER_NONE, 0, 0, 0, "scans per labeling (iterative ones)"},
};

/* ---- limits and check sizes ------------------------------------------------------------------ */

/* Labels are uint32_t site indices. */
#define LB_MAX_SITES (1ull << 31)
/* host_uf: about 1 s per step at 2^26 sites on one core. */
#define LB_HOST_MAX_SITES (1ull << 26)
/* Up to this many sites every random bond set is checked; above, the one at threshold. */
#define LB_CHECK_ALL_SITES (1u << 24)
/* Up to this many sites the variant's evolution is compared with the host's. */
#define LB_EVOLVE_MAX_SITES (1u << 22)
/* Steps of that comparison (the first steps of the measurement). */
#define LB_EVOLVE_STEPS 2
/* host_uf measures at most this many site updates (about 10 s on one core) in instrument:
 * min(mcs_measure, LB_HOST_MEASURE_SITES / n) steps, at least LB_EVOLVE_STEPS. */
#define LB_HOST_MEASURE_SITES (1ull << 27)
/* From this many sites the reference union-find runs on all host cores. */
#define LB_THREADED_SITES (1u << 20)
/* Labelings timed by instrument in labeling_only mode. */
#define LB_LABEL_TIMINGS 5

/* ---- configuration, shared point state, case state ---------------------------------------------
 */

typedef struct lb_config {
    lb_lattice lat;
    int kind, q;
    double T;
    uint64_t seed;
    int64_t discard, measure, steps;
    int labeling_only;
} lb_config;

/* Random bond sets of the partition check (below, at and above the percolation threshold). */
#define LB_TEST_SETS 3

typedef struct lb_shared {
    lb_config cfg;
    lb_model model;
    lb_tables tables;
    uint16_t *spins; /* the thermalised lattice, at step cfg.discard */
    /* The partition check's host references, made by the first device case of the point that
     * verifies and reused by the others, which label the same bond sets: the random sets
     * (bonds and union-find labels) and, for labeling_only, the stored bond set of the
     * prepared lattice.  At L = 16384 each costs seconds of one core per variant otherwise. */
    int n_test;
    uint8_t *test_bonds[LB_TEST_SETS];
    uint32_t *test_ref[LB_TEST_SETS];
    uint8_t *stored_bonds;
    uint32_t *stored_ref;
} lb_shared;

/* Scratch of the host-side checks: allocated at a case's first verify and kept to its
 * teardown (26 bytes a site; the second verify then touches no new pages). */
typedef struct lb_check {
    uint8_t *bonds;
    uint32_t *ref, *got, *map, *rev, *stack;
    uint16_t *spins_ref, *spins_got;
    uint8_t *bonds_ref;
} lb_check;

static void check_free(lb_check *k)
{
    free(k->bonds);
    free(k->ref);
    free(k->got);
    free(k->map);
    free(k->rev);
    free(k->stack);
    free(k->spins_ref);
    free(k->spins_got);
    free(k->bonds_ref);
}

typedef struct lb_state {
    int variant;
    const kb_host *host;
    kb_case_handle *handle; /* NULL under a 1.0 harness */
    lb_shared *sh;
    int own_shared; /* prepared by init (a 1.0 harness) */
    int verified;   /* verify calls so far */
    int iterations; /* of the last labeling */

    /* host_uf */
    uint16_t *spins;
    uint8_t *bonds;
    uint32_t *labels;
    uint64_t step;

    /* device variants */
    lb_dev dev;
    uint8_t *dbonds_test; /* random bond sets of the partition check */
    double *dproj;
    int64_t *dtables;

    lb_check check; /* verify's scratch */
} lb_state;

/* ---- helpers -------------------------------------------------------------------------------- */

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int is_device(int variant)
{
    return lb_variants[variant].target == KB_DEVICE;
}

static int labeler_of(int variant)
{
    return variant - V_HAWICK; /* LB_HAWICK .. LB_UNION_FIND in variant order */
}

/* Reads and checks the point's parameters. */
static int parse_config(const kb_host *h, const kb_params *p, uint64_t run_seed, lb_config *c,
                        char *msg)
{
    const char *model = NULL, *mode = NULL;
    int64_t dim = 0, L = 0, q = 0, seed = 0;
    double T = 0.0;
    memset(c, 0, sizeof *c);
    if (h->param_string(p, "model", &model) || h->param_int(p, "dim", &dim) ||
        h->param_int(p, "L", &L) || h->param_float(p, "T", &T) || h->param_int(p, "q", &q) ||
        h->param_int(p, "mcs_discard", &c->discard) ||
        h->param_int(p, "mcs_measure", &c->measure) || h->param_int(p, "seed", &seed) ||
        h->param_string(p, "mode", &mode) || h->param_int(p, "steps", &c->steps)) {
        kb_msgf(msg, "a parameter is missing or of the wrong type");
        return KB_BAD_PARAM;
    }
    c->kind = strcmp(model, "potts") == 0 ? LB_POTTS : strcmp(model, "xy") == 0 ? LB_XY : LB_ISING;
    c->labeling_only = strcmp(mode, "labeling_only") == 0;
    if (dim != 2 && dim != 3) {
        kb_msgf(msg, "dim = %lld: expected 2 or 3", (long long)dim);
        return KB_BAD_PARAM;
    }
    if (L < 4 || pow((double)L, (double)dim) > (double)LB_MAX_SITES) {
        kb_msgf(msg, "L = %lld: expected 4 <= L and L^%d <= 2^31", (long long)L, (int)dim);
        return KB_BAD_PARAM;
    }
    if (q == 0)
        q = c->kind == LB_POTTS ? 3 : c->kind == LB_XY ? 512 : 2;
    if (c->kind == LB_ISING)
        q = 2;
    if (q < 2 || q > LB_MAX_Q) {
        kb_msgf(msg, "q = %lld: expected 2..%d", (long long)q, LB_MAX_Q);
        return KB_BAD_PARAM;
    }
    if (T == 0.0)
        T = lb_critical_T(c->kind, (int)dim, (int)q);
    if (!(T > 0.0)) {
        kb_msgf(msg, "T = %g: expected a positive temperature (no known Tc for T = 0 here)", T);
        return KB_BAD_PARAM;
    }
    if (c->discard < 0 || c->measure < 0 || c->steps < 1) {
        kb_msgf(msg, "mcs_discard, mcs_measure >= 0 and steps >= 1 expected");
        return KB_BAD_PARAM;
    }
    c->lat.dim = (int)dim;
    c->lat.L = (int)L;
    c->lat.n = (uint32_t)(dim == 2 ? L * L : L * L * L);
    c->q = (int)q;
    c->T = T;
    c->seed = seed ? (uint64_t)seed : run_seed;
    return KB_OK;
}

static void dev_close(lb_dev *d, double *dproj, int64_t *dtables)
{
    cudaFree(d->spins);
    cudaFree(d->bonds);
    cudaFree(d->labels);
    cudaFree(d->scratch);
    cudaFree(d->step);
    cudaFree(d->flag);
    cudaFree(d->sums);
    if (d->host_flag)
        cudaFreeHost(d->host_flag);
    cudaFree(dproj);
    cudaFree(dtables);
    memset(d, 0, sizeof *d);
}

/* Device buffers for the lattice of sh (spins uninitialised, labels poisoned), the model's
 * tables uploaded, the step counter at `step`. */
static int dev_open(lb_dev *d, double **dproj, int64_t **dtables, const lb_shared *sh, int scratch,
                    uint64_t step, cudaStream_t st, char *msg)
{
    int rc = KB_OK;
    const size_t n = sh->cfg.lat.n, q = (size_t)sh->model.q;
    memset(d, 0, sizeof *d);
    *dproj = NULL;
    *dtables = NULL;
    d->lat = sh->cfg.lat;
    d->model = sh->model;
    d->seed = sh->cfg.seed;
    KB_CUDA_GOTO(cudaMalloc((void **)&d->spins, n * sizeof(uint16_t)), msg, fail);
    KB_CUDA_GOTO(cudaMalloc((void **)&d->bonds, n), msg, fail);
    KB_CUDA_GOTO(cudaMalloc((void **)&d->labels, n * sizeof(uint32_t)), msg, fail);
    if (scratch)
        KB_CUDA_GOTO(cudaMalloc((void **)&d->scratch, n * sizeof(uint32_t)), msg, fail);
    KB_CUDA_GOTO(cudaMalloc((void **)&d->step, sizeof(uint64_t)), msg, fail);
    KB_CUDA_GOTO(cudaMalloc((void **)&d->flag, sizeof(int)), msg, fail);
    KB_CUDA_GOTO(cudaMallocHost((void **)&d->host_flag, sizeof(int)), msg, fail);
    KB_CUDA_GOTO(cudaMalloc((void **)&d->sums, sizeof(lb_sums)), msg, fail);
    KB_CUDA_GOTO(cudaMalloc((void **)dproj, 2 * q * sizeof(double)), msg, fail);
    KB_CUDA_GOTO(cudaMalloc((void **)dtables, 2 * q * sizeof(int64_t)), msg, fail);
    KB_CUDA_GOTO(
        cudaMemcpy(*dproj, sh->tables.proj, 2 * q * sizeof(double), cudaMemcpyHostToDevice), msg,
        fail);
    KB_CUDA_GOTO(
        cudaMemcpy(*dtables, sh->tables.cos_fix, q * sizeof(int64_t), cudaMemcpyHostToDevice), msg,
        fail);
    KB_CUDA_GOTO(
        cudaMemcpy(*dtables + q, sh->tables.sin_fix, q * sizeof(int64_t), cudaMemcpyHostToDevice),
        msg, fail);
    d->model.proj = *dproj;
    d->cos_fix = *dtables;
    d->sin_fix = *dtables + q;
    KB_CUDA_GOTO(cudaMemsetAsync(d->labels, 0xFF, n * sizeof(uint32_t), st), msg, fail);
    KB_CUDA_GOTO(lb_dev_set_step(d, step, st), msg, fail);
    KB_CUDA_GOTO(cudaStreamSynchronize(st), msg, fail);
    return KB_OK;
fail:
    dev_close(d, *dproj, *dtables);
    *dproj = NULL;
    *dtables = NULL;
    return rc;
}

/* One SW step on the device with `labeler` (the counter advances). */
static cudaError_t dev_sweep(const lb_dev *d, int labeler, cudaStream_t st, int *iterations)
{
    cudaError_t e;
    if ((e = lb_dev_bonds(d, st)) != cudaSuccess ||
        (e = lb_dev_label(labeler, d, d->bonds, st, iterations)) != cudaSuccess ||
        (e = lb_dev_flip(d, st)) != cudaSuccess)
        return e;
    return lb_dev_advance(d, st);
}

static void shared_free(lb_shared *sh)
{
    if (!sh)
        return;
    for (int i = 0; i < LB_TEST_SETS; i++) {
        free(sh->test_bonds[i]);
        free(sh->test_ref[i]);
    }
    free(sh->stored_bonds);
    free(sh->stored_ref);
    free(sh->spins);
    free(sh);
}

/* The point's thermalised lattice: mcs_discard steps from a random start, on the device
 * (union_find) when device >= 0, else on the host. */
static int prepare_point(const kb_host *h, const kb_params *p, uint64_t run_seed, int device,
                         void *stream, lb_shared **out, char *msg)
{
    int rc;
    lb_shared *sh = calloc(1, sizeof *sh);
    lb_dev d;
    double *dproj = NULL;
    int64_t *dtables = NULL;
    uint8_t *bonds = NULL;
    uint32_t *labels = NULL;
    *out = NULL;
    memset(&d, 0, sizeof d);
    if (!sh) {
        kb_msgf(msg, "host allocation failed");
        return KB_NOMEM;
    }
    if ((rc = parse_config(h, p, run_seed, &sh->cfg, msg)))
        goto fail;
    lb_model_setup(&sh->model, &sh->tables, sh->cfg.kind, sh->cfg.q, sh->cfg.T);
    const size_t n = sh->cfg.lat.n;
    if (!(sh->spins = malloc(n * sizeof(uint16_t)))) {
        kb_msgf(msg, "cannot allocate %zu bytes of host memory", n * sizeof(uint16_t));
        rc = KB_NOMEM;
        goto fail;
    }
    if (device >= 0) {
        cudaStream_t st = (cudaStream_t)stream;
        int it;
        if ((rc = dev_open(&d, &dproj, &dtables, sh, 0, 0, st, msg)))
            goto fail;
        KB_CUDA_GOTO(lb_dev_init_spins(&d, st), msg, fail);
        for (int64_t k = 0; k < sh->cfg.discard; k++)
            KB_CUDA_GOTO(dev_sweep(&d, LB_UNION_FIND, st, &it), msg, fail);
        KB_CUDA_GOTO(
            cudaMemcpyAsync(sh->spins, d.spins, n * sizeof(uint16_t), cudaMemcpyDeviceToHost, st),
            msg, fail);
        KB_CUDA_GOTO(cudaStreamSynchronize(st), msg, fail);
        dev_close(&d, dproj, dtables);
    } else {
        if (n > LB_HOST_MAX_SITES) {
            kb_msgf(msg, "%zu sites: too many to thermalise on the host (at most %llu)", n,
                    LB_HOST_MAX_SITES);
            rc = KB_SKIP;
            goto fail;
        }
        bonds = malloc(n);
        labels = malloc(n * sizeof(uint32_t));
        if (!bonds || !labels) {
            kb_msgf(msg, "cannot allocate %zu bytes of host memory", 5 * n);
            rc = KB_NOMEM;
            goto fail;
        }
        lb_host_init_spins(&sh->cfg.lat, &sh->model, sh->cfg.seed, sh->spins);
        for (int64_t k = 0; k < sh->cfg.discard; k++)
            lb_host_sweep(&sh->cfg.lat, &sh->model, sh->cfg.seed, (uint64_t)k, sh->spins, bonds,
                          labels);
        free(bonds);
        free(labels);
    }
    /* lb_model_setup pointed proj at the tables inside sh: still valid (sh does not move). */
    *out = sh;
    return KB_OK;
fail:
    if (d.spins || d.step)
        dev_close(&d, dproj, dtables);
    free(bonds);
    free(labels);
    shared_free(sh);
    return rc;
}

/* Declared metric: through report (1.1), else as a plain metric of the case. */
static void put_metric(const lb_state *s, const char *name, double value, double error)
{
    if (s->handle && s->host->report) {
        s->host->report(s->handle, name, value, error);
        return;
    }
    if (s->host->metric) {
        char err_name[64];
        const char *unit = NULL;
        for (size_t i = 0; i < sizeof lb_metrics / sizeof lb_metrics[0]; i++)
            if (strcmp(lb_metrics[i].name, name) == 0)
                unit = lb_metrics[i].unit;
        s->host->metric(name, value, unit);
        snprintf(err_name, sizeof err_name, "%s_err", name);
        s->host->metric(err_name, error, unit);
    }
}

/* ---- entry points -------------------------------------------------------------------------- */

static int lb_prepare(const kb_point *pt, void **shared, char *msg)
{
    lb_shared *sh = NULL;
    int rc = prepare_point(pt->host, pt->params, pt->seed, pt->device, pt->stream, &sh, msg);
    *shared = sh;
    return rc;
}

static int lb_release(void *shared, char *msg)
{
    (void)msg;
    shared_free(shared);
    return KB_OK;
}

static int lb_teardown(void *p, char *msg)
{
    lb_state *s = p;
    (void)msg;
    if (!s)
        return KB_OK;
    free(s->spins);
    free(s->bonds);
    free(s->labels);
    if (is_device(s->variant)) {
        dev_close(&s->dev, s->dproj, s->dtables);
        cudaFree(s->dbonds_test);
    }
    check_free(&s->check);
    if (s->own_shared)
        shared_free(s->sh);
    free(s);
    return KB_OK;
}

static int lb_init(const kb_case *c, void **out, char *msg)
{
    lb_state *s;
    lb_config cfg;
    int rc;
    *out = NULL;
    if (c->variant < 0 || c->variant >= V_COUNT) {
        kb_msgf(msg, "variant index %d out of range", c->variant);
        return KB_BAD_PARAM;
    }
    if ((rc = parse_config(c->host, c->params, c->seed, &cfg, msg)))
        return rc;
    if (!is_device(c->variant) && cfg.lat.n > LB_HOST_MAX_SITES) {
        kb_msgf(msg, "host_uf takes at most %llu sites (about a second per step); %u is more",
                LB_HOST_MAX_SITES, cfg.lat.n);
        return KB_SKIP;
    }
    if (!(s = calloc(1, sizeof *s))) {
        kb_msgf(msg, "host allocation failed");
        return KB_NOMEM;
    }
    s->variant = c->variant;
    s->host = c->host;
    {
        const int v11 = KB_ABI_MINOR_OF(c->host->abi_version) >= 1 &&
                        c->host->struct_size >= offsetof(kb_host, report) + sizeof(void *) &&
                        c->struct_size >= offsetof(kb_case, handle) + sizeof(void *);
        s->handle = v11 ? c->handle : NULL;
        s->sh = v11 ? c->shared : NULL;
    }
    if (!s->sh) {
        /* No prepare (a 1.0 harness): thermalise here, on the device where there is one even
         * for host_uf (the same lattice; the host would take minutes at L = 4096). */
        int dev = -1, count = 0;
        if (c->device >= 0) {
            if (cudaGetDeviceCount(&count) == cudaSuccess && count > c->device)
                dev = c->device;
            else
                (void)cudaGetLastError();
        }
        if ((rc = prepare_point(c->host, c->params, c->seed, dev, NULL, &s->sh, msg)))
            goto fail;
        s->own_shared = 1;
    }
    const lb_shared *sh = s->sh;
    const size_t n = sh->cfg.lat.n;
    s->step = (uint64_t)sh->cfg.discard;
    if (!is_device(c->variant)) {
        s->spins = malloc(n * sizeof(uint16_t));
        s->bonds = malloc(n);
        s->labels = malloc(n * sizeof(uint32_t));
        if (!s->spins || !s->bonds || !s->labels) {
            kb_msgf(msg, "cannot allocate %zu bytes of host memory", 7 * n);
            rc = KB_NOMEM;
            goto fail;
        }
        memcpy(s->spins, sh->spins, n * sizeof(uint16_t));
        memset(s->labels, 0xFF, n * sizeof(uint32_t)); /* an unlabelled site fails verify */
        if (sh->cfg.labeling_only)
            lb_host_bonds(&sh->cfg.lat, &sh->model, sh->cfg.seed, s->step, s->spins, s->bonds);
    } else {
        const int labeler = labeler_of(c->variant);
        if ((rc = dev_open(&s->dev, &s->dproj, &s->dtables, sh, labeler == LB_HAWICK, s->step, 0,
                           msg)))
            goto fail;
        KB_CUDA_GOTO(cudaMalloc((void **)&s->dbonds_test, n), msg, fail);
        KB_CUDA_GOTO(
            cudaMemcpy(s->dev.spins, sh->spins, n * sizeof(uint16_t), cudaMemcpyHostToDevice), msg,
            fail);
        /* labeling_only: the stored bond configuration, that of the prepared lattice. */
        KB_CUDA_GOTO(lb_dev_bonds(&s->dev, 0), msg, fail);
        KB_CUDA_GOTO(cudaDeviceSynchronize(), msg, fail);
    }
    *out = s;
    return KB_OK;
fail:
    lb_teardown(s, NULL);
    return rc;
}

static int lb_counts(void *p, kb_counts *k, char *msg)
{
    const lb_state *s = p;
    const lb_config *c = &s->sh->cfg;
    const double n = (double)c->lat.n, spin_bytes = c->q > 256 ? 2.0 : 1.0;
    (void)msg;
    k->flops = 0.0;
    k->item_unit = "spin flips";
    if (c->labeling_only) {
        /* Bonds read once, labels written once. */
        k->bytes = n * (1.0 + 4.0);
        k->items = n;
    } else {
        /* Per step: spins read for the bonds and for the flip and written once, the bond
         * byte written and read once, a 4-byte label written and read once (HISTORY.md). */
        k->bytes = (double)c->steps * n * (3.0 * spin_bytes + 2.0 + 8.0);
        k->items = (double)c->steps * n;
    }
    k->max_batch = 0;
    k->run_flags = (s->variant == V_HAWICK || s->variant == V_KALENTEV) ? KB_RUN_SYNCS : 0u;
    return KB_OK;
}

static int lb_run(void *p, void *stream, char *msg)
{
    lb_state *s = p;
    const lb_shared *sh = s->sh;
    const lb_config *c = &sh->cfg;
    if (!is_device(s->variant)) {
        if (c->labeling_only) {
            lb_host_label_uf(&c->lat, s->bonds, s->labels);
            return KB_OK;
        }
        for (int64_t k = 0; k < c->steps; k++)
            lb_host_sweep(&c->lat, &sh->model, c->seed, s->step++, s->spins, s->bonds, s->labels);
        return KB_OK;
    }
    cudaStream_t st = (cudaStream_t)stream;
    const int labeler = labeler_of(s->variant);
    if (c->labeling_only) {
        KB_CUDA_TRY(lb_dev_label(labeler, &s->dev, s->dev.bonds, st, &s->iterations), msg);
        return KB_OK;
    }
    for (int64_t k = 0; k < c->steps; k++)
        KB_CUDA_TRY(dev_sweep(&s->dev, labeler, st, &s->iterations), msg);
    return KB_OK;
}

/* ---- verify ---------------------------------------------------------------------------------- */

/* The labeling of `bonds` (host) by the variant, into k->got. */
static int label_with_variant(lb_state *s, const uint8_t *bonds, lb_check *k, char *msg)
{
    const lb_lattice *lat = &s->sh->cfg.lat;
    if (!is_device(s->variant)) {
        lb_host_label_uf(lat, bonds, k->got);
        return KB_OK;
    }
    KB_CUDA_TRY(cudaMemcpy(s->dbonds_test, bonds, lat->n, cudaMemcpyHostToDevice), msg);
    KB_CUDA_TRY(lb_dev_label(labeler_of(s->variant), &s->dev, s->dbonds_test, 0, &s->iterations),
                msg);
    KB_CUDA_TRY(
        cudaMemcpy(k->got, s->dev.labels, lat->n * sizeof(uint32_t), cudaMemcpyDeviceToHost), msg);
    return KB_OK;
}

/* Threads for the host checks at large L: the host's cores. */
static int host_threads(void)
{
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return cpus > 1 ? (int)cpus : 1;
}

/* The reference partition of `bonds` into k->ref: union-find, or for host_uf (which is
 * union-find) the flood fill.  From LB_THREADED_SITES on, the union-find runs on the host's
 * cores (the same labels; k->map is its scratch): on one core it took ~6 s of each L = 16384
 * case's two verifies. */
static void reference_labels(const lb_state *s, const uint8_t *bonds, lb_check *k)
{
    const lb_lattice *lat = &s->sh->cfg.lat;
    if (!is_device(s->variant)) {
        lb_host_label_bfs(lat, bonds, k->ref, k->stack);
    } else if (lat->n >= LB_THREADED_SITES) {
        lb_host_label_uf_threads(lat, bonds, k->ref, k->map, host_threads());
    } else {
        lb_host_label_uf(lat, bonds, k->ref);
    }
}

/* A copy of n bytes, NULL when out of memory. */
static void *dup_bytes(const void *p, size_t n)
{
    void *q = malloc(n);
    if (q)
        memcpy(q, p, n);
    return q;
}

/* Mismatched sites of the variant's current labels against the reference on its current
 * bonds (those of the last run).  labeling_only: every device case labels the stored bond set
 * of the same prepared lattice, so the first keeps its bonds and reference in the point's
 * cache and the others use it where their bonds are byte for byte the same. */
static int check_current(lb_state *s, lb_check *k, uint64_t *bad, char *msg)
{
    lb_shared *sh = s->sh;
    const lb_lattice *lat = &sh->cfg.lat;
    const int dev = is_device(s->variant), cache = dev && sh->cfg.labeling_only;
    const uint8_t *bonds = s->bonds;
    const uint32_t *got = s->labels, *ref = k->ref;
    if (dev) {
        KB_CUDA_TRY(cudaMemcpy(k->bonds, s->dev.bonds, lat->n, cudaMemcpyDeviceToHost), msg);
        KB_CUDA_TRY(
            cudaMemcpy(k->got, s->dev.labels, lat->n * sizeof(uint32_t), cudaMemcpyDeviceToHost),
            msg);
        bonds = k->bonds;
        got = k->got;
    }
    if (cache && sh->stored_ref && memcmp(bonds, sh->stored_bonds, lat->n) == 0) {
        ref = sh->stored_ref;
    } else {
        reference_labels(s, bonds, k);
        if (cache && !sh->stored_ref) {
            /* Out of memory here only costs the next cases the recomputation. */
            sh->stored_bonds = dup_bytes(bonds, lat->n);
            sh->stored_ref = dup_bytes(k->ref, lat->n * sizeof(uint32_t));
            if (!sh->stored_bonds || !sh->stored_ref) {
                free(sh->stored_bonds);
                free(sh->stored_ref);
                sh->stored_bonds = NULL;
                sh->stored_ref = NULL;
            }
        }
    }
    *bad += lb_partition_mismatches(lat->n, ref, got, k->map, k->rev);
    /* Every spin in range (an unwritten or corrupted site is not). */
    lb_sums sums;
    if (dev)
        KB_CUDA_TRY(lb_dev_sums(&s->dev, 0, &sums, 0), msg);
    else
        lb_host_sums(lat, &sh->model, &sh->tables, s->spins, NULL, &sums);
    *bad += (uint64_t)sums.bad;
    return KB_OK;
}

/* Random bond sets: below, at and above the bond percolation threshold (2-D 1/2, 3-D 0.2488),
 * all at the first verify of a lattice up to LB_CHECK_ALL_SITES, else the one at threshold.
 * The sets and their union-find references depend only on the point: the first device case
 * makes them, keeps them in the point's cache, and the others reuse them.  host_uf (itself
 * union-find) checks against the flood fill, never against the cache. */
static int check_random(lb_state *s, lb_check *k, uint64_t *bad, char *msg)
{
    lb_shared *sh = s->sh;
    const lb_lattice *lat = &sh->cfg.lat;
    const double p2[] = {0.5, 0.3, 0.8}, p3[] = {0.2488, 0.15, 0.5};
    const int sets = lat->n <= LB_CHECK_ALL_SITES ? LB_TEST_SETS : 1;
    const int dev = is_device(s->variant);
    int rc;
    for (int i = 0; i < sets; i++) {
        const uint8_t *bonds = k->bonds;
        const uint32_t *ref = k->ref;
        if (dev && i < sh->n_test) {
            bonds = sh->test_bonds[i];
            ref = sh->test_ref[i];
        } else {
            lb_random_bonds_threads(lat, lat->dim == 2 ? p2[i] : p3[i], sh->cfg.seed, (uint64_t)i,
                                    k->bonds, lat->n >= LB_THREADED_SITES ? host_threads() : 1);
            reference_labels(s, k->bonds, k);
            if (dev && i == sh->n_test) {
                sh->test_bonds[i] = dup_bytes(k->bonds, lat->n);
                sh->test_ref[i] = dup_bytes(k->ref, lat->n * sizeof(uint32_t));
                if (sh->test_bonds[i] && sh->test_ref[i]) {
                    sh->n_test++;
                } else {
                    free(sh->test_bonds[i]);
                    free(sh->test_ref[i]);
                    sh->test_bonds[i] = NULL;
                    sh->test_ref[i] = NULL;
                }
            }
        }
        if ((rc = label_with_variant(s, bonds, k, msg)))
            return rc;
        *bad += lb_partition_mismatches(lat->n, ref, k->got, k->map, k->rev);
    }
    return KB_OK;
}

/* Puts the case's lattice back to the prepared one, its step counter at mcs_discard. */
static int start_from_prepared(lb_state *s, char *msg)
{
    const lb_shared *sh = s->sh;
    const size_t n = sh->cfg.lat.n;
    if (!is_device(s->variant)) {
        memcpy(s->spins, sh->spins, n * sizeof(uint16_t));
        s->step = (uint64_t)sh->cfg.discard;
        return KB_OK;
    }
    KB_CUDA_TRY(cudaMemcpy(s->dev.spins, sh->spins, n * sizeof(uint16_t), cudaMemcpyHostToDevice),
                msg);
    KB_CUDA_TRY(lb_dev_set_step(&s->dev, (uint64_t)sh->cfg.discard, 0), msg);
    return KB_OK;
}

/* LB_EVOLVE_STEPS steps of the variant from the prepared lattice against the host reference's
 * (flood-fill labels), up to LB_EVOLVE_MAX_SITES sites: every labeler must evolve the lattice
 * bit for bit as the reference does.  Leaves the case's lattice there; the runs continue from
 * it. */
static int check_evolution(lb_state *s, lb_check *k, uint64_t *bad, char *msg)
{
    const lb_shared *sh = s->sh;
    const lb_config *c = &sh->cfg;
    const lb_lattice *lat = &c->lat;
    const size_t n = lat->n;
    const uint16_t *got = s->spins;
    int rc;
    if (n > LB_EVOLVE_MAX_SITES)
        return KB_OK;
    memcpy(k->spins_ref, sh->spins, n * sizeof(uint16_t));
    for (int j = 0; j < LB_EVOLVE_STEPS; j++) {
        const uint64_t step = (uint64_t)c->discard + (uint64_t)j;
        lb_host_bonds(lat, &sh->model, c->seed, step, k->spins_ref, k->bonds_ref);
        lb_host_label_bfs(lat, k->bonds_ref, k->ref, k->stack);
        lb_host_flip(lat, &sh->model, c->seed, step, k->spins_ref, k->ref);
    }
    if ((rc = start_from_prepared(s, msg)))
        return rc;
    for (int j = 0; j < LB_EVOLVE_STEPS; j++) {
        if (is_device(s->variant))
            KB_CUDA_TRY(dev_sweep(&s->dev, labeler_of(s->variant), 0, &s->iterations), msg);
        else
            lb_host_sweep(lat, &sh->model, c->seed, s->step++, s->spins, s->bonds, s->labels);
    }
    if (is_device(s->variant)) {
        KB_CUDA_TRY(
            cudaMemcpy(k->spins_got, s->dev.spins, n * sizeof(uint16_t), cudaMemcpyDeviceToHost),
            msg);
        got = k->spins_got;
    }
    for (size_t i = 0; i < n; i++)
        *bad += got[i] != k->spins_ref[i];
    return KB_OK;
}

/* mcs_measure steps from the prepared lattice with the variant's labeler (host_uf: at most
 * LB_HOST_MEASURE_SITES site updates), each step timed whole and its labeling alone (events on
 * the legacy stream, whose copies here are synchronous ones; the host clock for host_uf), the
 * observables of every step: reports the observables with binning/jackknife errors and the
 * times per spin flip.  A spin out of range or an observable that is not a number on the way
 * is an error.  Leaves the case's lattice there. */
static int measure(lb_state *s, char *msg)
{
    const lb_shared *sh = s->sh;
    const lb_config *c = &sh->cfg;
    const lb_lattice *lat = &c->lat;
    const size_t n = lat->n;
    const int dev = is_device(s->variant), labeler = dev ? labeler_of(s->variant) : -1;
    size_t steps = (size_t)c->measure;
    if (!dev && steps > LB_EVOLVE_STEPS && steps > LB_HOST_MEASURE_SITES / n)
        steps = LB_HOST_MEASURE_SITES / n > LB_EVOLVE_STEPS ? LB_HOST_MEASURE_SITES / n
                                                            : LB_EVOLVE_STEPS;
    double *obs = malloc((steps ? steps : 1) * LB_OBS_COUNT * sizeof(double));
    double *t_mcs = malloc((steps ? steps : 1) * sizeof(double));
    double *t_lab = malloc((steps ? steps : 1) * sizeof(double));
    double iters = 0.0;
    uint64_t bad = 0;
    cudaEvent_t ev[4] = {0};
    lb_sums sums;
    int rc = KB_OK;

    if (!obs || !t_mcs || !t_lab) {
        kb_msgf(msg, "host allocation failed");
        rc = KB_NOMEM;
        goto done;
    }
    for (int j = 0; dev && j < 4; j++)
        KB_CUDA_GOTO(cudaEventCreate(&ev[j]), msg, done);
    if ((rc = start_from_prepared(s, msg)))
        goto done;
    for (size_t j = 0; j < steps; j++) {
        if (dev) {
            float a, b;
            KB_CUDA_GOTO(cudaEventRecord(ev[0], 0), msg, done);
            KB_CUDA_GOTO(lb_dev_bonds(&s->dev, 0), msg, done);
            KB_CUDA_GOTO(cudaEventRecord(ev[1], 0), msg, done);
            KB_CUDA_GOTO(lb_dev_label(labeler, &s->dev, s->dev.bonds, 0, &s->iterations), msg,
                         done);
            KB_CUDA_GOTO(cudaEventRecord(ev[2], 0), msg, done);
            KB_CUDA_GOTO(lb_dev_flip(&s->dev, 0), msg, done);
            KB_CUDA_GOTO(lb_dev_advance(&s->dev, 0), msg, done);
            KB_CUDA_GOTO(cudaEventRecord(ev[3], 0), msg, done);
            KB_CUDA_GOTO(cudaEventSynchronize(ev[3]), msg, done);
            KB_CUDA_GOTO(cudaEventElapsedTime(&a, ev[0], ev[3]), msg, done);
            KB_CUDA_GOTO(cudaEventElapsedTime(&b, ev[1], ev[2]), msg, done);
            t_mcs[j] = 1e6 * a / (double)n;
            t_lab[j] = 1e6 * b / (double)n;
            KB_CUDA_GOTO(lb_dev_sums(&s->dev, 1, &sums, 0), msg, done);
        } else {
            const uint64_t step = s->step++;
            const double t0 = now_s();
            lb_host_bonds(lat, &sh->model, c->seed, step, s->spins, s->bonds);
            const double t1 = now_s();
            lb_host_label_uf(lat, s->bonds, s->labels);
            const double t2 = now_s();
            lb_host_flip(lat, &sh->model, c->seed, step, s->spins, s->labels);
            const double t3 = now_s();
            t_mcs[j] = 1e9 * (t3 - t0) / (double)n;
            t_lab[j] = 1e9 * (t2 - t1) / (double)n;
            s->iterations = 1;
            lb_host_sums(lat, &sh->model, &sh->tables, s->spins, s->labels, &sums);
        }
        iters += s->iterations;
        bad += (uint64_t)sums.bad;
        lb_observe(lat, &sh->model, &sums, &obs[j * LB_OBS_COUNT]);
    }
    if (steps) {
        lb_results r;
        lb_analyse(lat, &sh->model, obs, steps, &r);
        const lb_estimate tm = lb_mean_error(t_mcs, steps), tl = lb_mean_error(t_lab, steps);
        put_metric(s, "m2", r.m2.value, r.m2.error);
        put_metric(s, "m4", r.m4.value, r.m4.error);
        put_metric(s, "energy", r.energy.value, r.energy.error);
        put_metric(s, "specific_heat", r.specific_heat.value, r.specific_heat.error);
        put_metric(s, "moment_ratio", r.moment_ratio.value, r.moment_ratio.error);
        put_metric(s, "clusters", r.clusters.value, r.clusters.error);
        put_metric(s, "ns_per_flip", tm.value, tm.error);
        put_metric(s, "ns_per_flip_label", tl.value, tl.error);
        put_metric(s, "label_iterations", iters / (double)steps, 0.0);
        if (!isfinite(r.m2.value) || !isfinite(r.energy.value))
            bad += 1;
    }
    if (bad) {
        kb_msgf(msg,
                "the measured steps left %llu spins out of range or an observable that is "
                "not a number",
                (unsigned long long)bad);
        rc = KB_ERROR;
    }
done:
    for (int j = 0; j < 4; j++)
        if (ev[j])
            cudaEventDestroy(ev[j]);
    free(obs);
    free(t_mcs);
    free(t_lab);
    return rc;
}

/* labeling_only: the stored bonds labelled LB_LABEL_TIMINGS times, timed. */
static int time_labeling(lb_state *s, char *msg)
{
    const lb_lattice *lat = &s->sh->cfg.lat;
    double t[LB_LABEL_TIMINGS], iters = 0.0;
    cudaEvent_t a = NULL, b = NULL;
    int rc = KB_OK;
    if (is_device(s->variant)) {
        KB_CUDA_GOTO(cudaEventCreate(&a), msg, done);
        KB_CUDA_GOTO(cudaEventCreate(&b), msg, done);
    }
    for (int j = 0; j < LB_LABEL_TIMINGS; j++) {
        if (is_device(s->variant)) {
            float ms;
            KB_CUDA_GOTO(cudaEventRecord(a, 0), msg, done);
            KB_CUDA_GOTO(
                lb_dev_label(labeler_of(s->variant), &s->dev, s->dev.bonds, 0, &s->iterations), msg,
                done);
            KB_CUDA_GOTO(cudaEventRecord(b, 0), msg, done);
            KB_CUDA_GOTO(cudaEventSynchronize(b), msg, done);
            KB_CUDA_GOTO(cudaEventElapsedTime(&ms, a, b), msg, done);
            t[j] = 1e6 * ms / (double)lat->n;
        } else {
            const double t0 = now_s();
            lb_host_label_uf(lat, s->bonds, s->labels);
            t[j] = 1e9 * (now_s() - t0) / (double)lat->n;
            s->iterations = 1;
        }
        iters += s->iterations;
    }
    const lb_estimate e = lb_mean_error(t, LB_LABEL_TIMINGS);
    put_metric(s, "ns_per_flip_label", e.value, e.error);
    put_metric(s, "label_iterations", iters / LB_LABEL_TIMINGS, 0.0);
done:
    if (a)
        cudaEventDestroy(a);
    if (b)
        cudaEventDestroy(b);
    return rc;
}

static int lb_verify(void *p, kb_verdict *v, char *msg)
{
    lb_state *s = p;
    const lb_config *c = &s->sh->cfg;
    const size_t n = c->lat.n;
    lb_check *k = &s->check;
    uint64_t bad = 0;
    int rc = KB_OK;
    if (!k->bonds) {
        k->bonds = malloc(n);
        k->ref = malloc(n * sizeof(uint32_t));
        k->got = malloc(n * sizeof(uint32_t));
        k->map = malloc(n * sizeof(uint32_t));
        k->rev = malloc(n * sizeof(uint32_t));
        k->stack = malloc(n * sizeof(uint32_t));
        k->spins_ref = malloc(n * sizeof(uint16_t));
        k->spins_got = malloc(n * sizeof(uint16_t));
        k->bonds_ref = malloc(n);
        if (!k->bonds || !k->ref || !k->got || !k->map || !k->rev || !k->stack || !k->spins_ref ||
            !k->spins_got || !k->bonds_ref) {
            check_free(k);
            memset(k, 0, sizeof *k);
            kb_msgf(msg, "cannot allocate the %zu bytes of the host check", 26 * n);
            return KB_NOMEM;
        }
    }
    /* The last run's labels against the reference, before the checks below overwrite them. */
    if ((rc = check_current(s, k, &bad, msg)))
        return rc;
    /* The random bond sets and the evolution once per case: they do not depend on the runs
     * in between (the evolution starts from the prepared lattice). */
    if (!s->verified && (rc = check_random(s, k, &bad, msg)))
        return rc;
    if (!s->verified && !c->labeling_only && (rc = check_evolution(s, k, &bad, msg)))
        return rc;
    s->verified++;
    v->passed = bad == 0;
    v->error = (double)bad;
    v->tolerance = 0.0;
    v->metric = "mismatches";
    if (bad)
        kb_msgf(msg, "%llu sites differ from the reference partition or evolution",
                (unsigned long long)bad);
    return KB_OK;
}

/* ABI 1.4: the measurement, once per case after its last verify and apart from the samples:
 * mcs_measure steps from the prepared lattice (observables, time per spin flip whole and
 * labeling alone), or in labeling_only mode the stored bonds labelled LB_LABEL_TIMINGS
 * times.  Both time on the legacy stream and synchronise before they return. */
static int lb_instrument(void *p, void *stream, char *msg)
{
    lb_state *s = p;
    (void)stream;
    return s->sh->cfg.labeling_only ? time_labeling(s, msg) : measure(s, msg);
}

static const kb_plugin lb_plugin = {
    .abi_version = KB_ABI_CURRENT,
    .struct_size = sizeof(kb_plugin),
    .name = "labeling",
    .description = "Swendsen-Wang cluster Monte Carlo (Ising, Potts, clock/XY), labelers compared",
    .variants = lb_variants,
    .n_variants = V_COUNT,
    .params = lb_params,
    .n_params = sizeof lb_params / sizeof lb_params[0],
    .init = lb_init,
    .counts = lb_counts,
    .run = lb_run,
    .verify = lb_verify,
    .instrument = lb_instrument,
    .teardown = lb_teardown,
    .prepare = lb_prepare,
    .release = lb_release,
    .reset = NULL,
    .metrics = lb_metrics,
    .n_metrics = sizeof lb_metrics / sizeof lb_metrics[0],
    .size_param = "L",
    .knobs = "mcs_discard|mcs_measure|seed",
    .implicit = "T|q",
    /* No knob_variants: the thermalisation, the measurement and the seed are every labeler's. */
    .headline = "time_per_item",
};

KB_EXPORT const kb_plugin *kb_plugin_entry(void)
{
    return &lb_plugin;
}
