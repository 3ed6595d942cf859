/* md plugin: short-range molecular dynamics, the neighbour-list strategies of Rapaport,
 * "Enhanced molecular dynamics performance with a programmable graphics processor"
 * (plugins/md/README.md; its history in plugins/md/HISTORY.md).
 *
 * One run is `steps` MD steps (leapfrog, dt 0.005) continuing from the state the previous run
 * left; prepare equilibrates the point's system once (lattice start, rescaling every 20 steps
 * for 500 steps) and every variant's init and reset load that state.  Variants are the
 * neighbour strategies: host_pairlist and host_layer (double, on the CPU), allpairs,
 * cell_block, layer_matrix, layer_atomic and sorted (float, on the device).  verify checks the
 * forces and energy against a double reference, the neighbour set against brute force, the
 * energy drift of the latest run, and the first-step energy and pair count against the point's
 * reference; it reports the run's figures (drift, energies, neighbours per atom).  instrument
 * (ABI 1.4) makes one run of `steps` steps with a clock around each phase, apart from the
 * samples, and reports the phase fractions and the host pass's pieces.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "device.h"
#include "kbench/cuda_check.h"
#include "kbench/plugin.h"
#include "md.h"

/* ---- variants and parameters --------------------------------------------------------------- */

enum {
    V_HOST_PAIRLIST,
    V_HOST_LAYER,
    V_ALLPAIRS,
    V_CELL_BLOCK,
    V_LAYER_MATRIX,
    V_LAYER_ATOMIC,
    V_SORTED,
    V_COUNT
};

static const kb_variant md_variants[V_COUNT] = {
    {"host_pairlist", "CPU: linked-list cells, half-shell pair list, Newton's third law (double)",
     KB_HOST, KB_VARIANT_BASELINE},
    {"host_layer", "CPU: the layer matrix H and neighbour matrix W in C, no third law (double)",
     KB_HOST, 0},
    {"allpairs", "GPU: O(N^2) forces tiled through shared memory (small N: the reference)",
     KB_DEVICE, 0},
    {"cell_block", "GPU: Ref. [6] tabulation, a block per cell, threads = layers, host layers",
     KB_DEVICE, 0},
    {"layer_matrix", "GPU: the paper's H and W[m][i], a thread per atom, layers on the host",
     KB_DEVICE, 0},
    {"layer_atomic", "GPU: layer_matrix with layers assigned by device atomics (capturable)",
     KB_DEVICE, 0},
    {"sorted", "GPU: counting sort by cell each rebuild, W from cell ranges (capturable)",
     KB_DEVICE, 0},
};

static const kb_param md_params[] = {
    {"system", KB_PARAM_STRING, "sp",
     "lj (T 1.2, rho 0.38, rc 3, delta 0.8), sp soft spheres (T 1, rho 0.8, rc 2^(1/6), delta "
     "0.6), ljstd (T 1, rho 0.8442, rc 2.5, delta 0.4)",
     "lj|sp|ljstd"},
    {"N_e", KB_PARAM_INT, "16", "edge of the initial cubic lattice: N_e^3 atoms", NULL},
    {"steps", KB_PARAM_INT, "100", "MD steps of one run", NULL},
    {"rho", KB_PARAM_FLOAT, "0", "density (0: the system's)", NULL},
    {"T", KB_PARAM_FLOAT, "0", "temperature (0: the system's)", NULL},
    {"rc", KB_PARAM_FLOAT, "0", "cutoff (0: the system's)", NULL},
    {"delta", KB_PARAM_FLOAT, "0", "neighbour shell thickness (0: the system's)", NULL},
    {"threads", KB_PARAM_INT, "128", "threads per block of the per-atom kernels (32..1024, 2^k)",
     NULL},
    {"reorder", KB_PARAM_INT, "100",
     "steps between reorderings of the atoms by cell (at the next rebuild), 0 = never", NULL},
    {"ldg", KB_PARAM_INT, "1", "1: coordinates and H through the read-only cache, 0: plain loads",
     NULL},
    {"equil", KB_PARAM_INT, "500", "equilibration steps in prepare (rescaled every 20)", NULL},
    {"shuffle", KB_PARAM_INT, "0",
     "1: the equilibrated atoms stored in a random order (the order a long run without "
     "reordering ends in: the paper's Table 8 limit), 0: lattice order",
     NULL},
    /* Added in v3.2 after the others, so case ids of earlier results differ only by the suffix
     * ",l1=1,shifted=0". */
    {"l1", KB_PARAM_INT, "1",
     "with ldg 0: 1 plain loads (L1-cached on sm_90), 0 loads past L1 (ld.global.cg, L2 only: "
     "the nearest sm_90 analogue of the G80's uncached global loads)",
     NULL},
    {"shifted", KB_PARAM_INT, "0",
     "1: u(r) shifted to 0 at rc (lj, ljstd: the truncated and shifted fluid's energy; forces "
     "unchanged), 0: truncated only; sp is shifted by construction",
     NULL},
};
#define N_PARAMS ((int)(sizeof md_params / sizeof md_params[0]))

/* Bounds of verify (see HISTORY.md, "Verification"). */
#define MD_TOL_FORCE 1e-3   /* max_i |F_i - F_ref,i| / rms |F_ref| */
#define MD_TOL_ENERGY 1e-5  /* |U - U_ref| / |U_ref| */
#define MD_TOL_DRIFT 2e-3   /* energy drift of one run, relative */
#define MD_TOL_FIRST_U 2e-5 /* first-step energy against the point's double reference */
#define MD_ALLPAIRS_MAX_N 65536
/* Host variants beyond this take seconds per run of 100 steps (about 1-2 us per atom-step). */
#define MD_HOST_MAX_N 32768
#define MD_REF_ALLPAIRS_MAX_N 4096 /* above it the double reference goes through cells */

/* The timings of the instrumented run (instrument), the host pass's pieces and the energy drift are
 * single-run figures whose noise this plugin does not estimate (uncertainty 0 would make
 * `kbench compare` call any move of them worse: run 4 against run 13 of the same kernels
 * flagged 50 such metrics in the profile's first half): they carry no better direction, so compare
 * reports them as changed, never as a regression.  The case's time, which compare judges against
 * its noise, carries the performance verdict; energy_drift's bound carries the physics check. */
static const kb_metric_def md_metrics[] = {
    {"us_per_atom_step", "us", KB_BETTER_NONE, KB_METRIC_TIMING, 0, 0,
     "time per atom-step of the instrumented run (instrument: per-step events)"},
    {"t_nbr_fraction", "1", KB_BETTER_NONE, KB_METRIC_TIMING, 0, 0,
     "fraction of the time in neighbour builds"},
    {"t_force_fraction", "1", KB_BETTER_NONE, KB_METRIC_TIMING, 0, 0,
     "fraction of the time in forces"},
    {"t_host_layers_fraction", "1", KB_BETTER_NONE, KB_METRIC_TIMING, 0, 0,
     "fraction of the time in the host layer assignment (cell_block, layer_matrix: part of "
     "t_nbr): copy of c_i out, the loop, l_i and k_c back"},
    {"t_build_kernel_fraction", "1", KB_BETTER_NONE, KB_METRIC_TIMING, 0, 0,
     "fraction of the time in the strategy's neighbour-matrix kernel alone (cell_block's block "
     "per cell, layer_matrix's thread per atom; part of t_nbr)"},
    {"build_kernel_ns_per_atom", "ns", KB_BETTER_NONE, KB_METRIC_TIMING, 0, 0,
     "that kernel's time per build and atom"},
    {"host_layers_ns_per_atom", "ns", KB_BETTER_NONE, KB_METRIC_TIMING, 0, 0,
     "host layer assignment, wall time per build and atom (cell_block, layer_matrix)"},
    {"host_wait_ns_per_atom", "ns", KB_BETTER_NONE, KB_METRIC_TIMING, 0, 0,
     "of it: blocked waiting for the pieces of c_i (cells kernel and copies), per build and atom"},
    {"host_loop_ns_per_atom", "ns", KB_BETTER_NONE, KB_METRIC_TIMING, 0, 0,
     "of it: the host loop l_i = k_{c_i}++, per build and atom"},
    {"host_c_copy_gbs", "GB/s", KB_BETTER_NONE, KB_METRIC_TIMING, 0, 0,
     "copy of c_i to pinned host memory, device clock"},
    {"host_l_copy_gbs", "GB/s", KB_BETTER_NONE, KB_METRIC_TIMING, 0, 0,
     "copies of l_i and k_c from pinned host memory, device clock"},
    {"neighbors_per_atom", "1", KB_BETTER_NONE, 0, 0, 0,
     "N_p/N_a: neighbour-list entries per atom (r < rc+delta, both directions), mean over builds"},
    {"layers", "1", KB_BETTER_NONE, 0, 0, 0, "N_l: most atoms in one cell, mean over builds"},
    {"steps_per_rebuild", "1", KB_BETTER_NONE, 0, 0, 0, "N_u: mean steps between rebuilds"},
    {"bytes_per_atom", "B", KB_BETTER_LOWER, 0, 0, 0, "device (or host) memory per atom"},
    {"energy_drift", "1", KB_BETTER_NONE, KB_BOUND_HIGH, 0, MD_TOL_DRIFT,
     "|E_end - E_start| / |E| over the latest run (5% windows)"},
    {"total_energy", "1", KB_BETTER_NONE, 0, 0, 0, "mean total energy per atom, latest run"},
    {"kinetic_energy", "1", KB_BETTER_NONE, 0, 0, 0, "mean kinetic energy per atom, latest run"},
    {"potential_energy", "1", KB_BETTER_NONE, 0, 0, 0, "mean potential energy per atom"},
    {"pressure", "1", KB_BETTER_NONE, 0, 0, 0, "mean pressure, latest run"},
    {"temperature", "1", KB_BETTER_NONE, 0, 0, 0,
     "2 K / (3 (N - 1)) per atom: kinetic temperature with the momentum's 3 degrees removed"},
    {"eos_p_ref", "1", KB_BETTER_NONE, 0, 0, 0,
     "LJTS equation of state (Thol et al. 2015) at the run's T and rho: pressure (rc 2.5 lj or "
     "ljstd, in the equation's range)"},
    {"eos_p_dev", "1", KB_BETTER_NONE, 0, 0, 0,
     "mean of P - p_ref(T) per step / its block error (holds the reference's through T); runs "
     "of >= 1000 steps"},
    {"eos_u_ref", "1", KB_BETTER_NONE, 0, 0, 0,
     "LJTS equation of state at the run's T and rho: potential energy per atom (shifted 1 only)"},
    {"eos_u_dev", "1", KB_BETTER_NONE, 0, 0, 0,
     "mean of U - u_ref(T) per step / its block error; runs of >= 1000 steps"},
};
#define N_METRICS ((int)(sizeof md_metrics / sizeof md_metrics[0]))

/* ---- state ------------------------------------------------------------------------------- */

typedef struct md_state {
    int variant;
    md_config cfg;
    const kb_host *host;
    kb_case_handle *handle; /* NULL under a 1.0 harness: metrics go through host->metric */
    md_point_state *ps;
    md_point_state own_ps; /* the state init prepared itself when no prepare ran */
    int own;
    md_host h;
    md_dev d;
    double u_first;     /* potential energy per atom of the loaded state, this variant */
    long long np_first; /* its pairs within rc + delta */
    md_timing tm;       /* of the instrumented run */
} md_state;

static int is_host(int variant)
{
    return variant == V_HOST_PAIRLIST || variant == V_HOST_LAYER;
}

static int dev_strategy(int variant)
{
    switch (variant) {
    case V_ALLPAIRS:
        return MD_DEV_ALLPAIRS;
    case V_CELL_BLOCK:
        return MD_DEV_CELL_BLOCK;
    case V_LAYER_MATRIX:
        return MD_DEV_LAYER_MATRIX;
    case V_LAYER_ATOMIC:
        return MD_DEV_LAYER_ATOMIC;
    default:
        return MD_DEV_SORTED;
    }
}

/* Reads the parameters into cfg.  Returns KB_OK or KB_BAD_PARAM with msg. */
static int read_config(const kb_host *host, const kb_params *p, md_config *cfg, char *msg)
{
    const char *sys = NULL;
    int64_t ne = 0, steps = 0, threads = 0, reorder = 0, ldg = 0, equil = 0, shuffle = 0;
    int64_t l1 = 1, shifted = 0;
    double rho = 0, temp = 0, rc = 0, delta = 0;
    memset(cfg, 0, sizeof *cfg);
    if (host->param_string(p, "system", &sys) || host->param_int(p, "N_e", &ne) ||
        host->param_int(p, "steps", &steps) || host->param_int(p, "threads", &threads) ||
        host->param_int(p, "reorder", &reorder) || host->param_int(p, "ldg", &ldg) ||
        host->param_int(p, "equil", &equil) || host->param_int(p, "shuffle", &shuffle) ||
        host->param_int(p, "l1", &l1) || host->param_int(p, "shifted", &shifted) ||
        host->param_float(p, "rho", &rho) || host->param_float(p, "T", &temp) ||
        host->param_float(p, "rc", &rc) || host->param_float(p, "delta", &delta)) {
        kb_msgf(msg, "md: a parameter could not be read");
        return KB_BAD_PARAM;
    }
    if (md_config_system(cfg, sys)) {
        kb_msgf(msg, "system '%s': expected lj, sp or ljstd", sys);
        return KB_BAD_PARAM;
    }
    if (rho > 0)
        cfg->rho = rho;
    if (temp > 0)
        cfg->temp = temp;
    if (rc > 0)
        cfg->rc = rc;
    if (delta > 0)
        cfg->delta = delta;
    if (shifted && cfg->system != MD_SYS_SP) { /* SP is shifted (by +1) already */
        double ri6 = pow(cfg->rc, -6.0);
        cfg->shift = -4.0 * ri6 * (ri6 - 1.0);
    }
    if (steps < 1 || steps > 10000000 || equil < 0 || reorder < 0 || (threads & (threads - 1)) ||
        threads < 32 || threads > 1024) {
        kb_msgf(msg,
                "steps (%lld), equil, reorder or threads (%lld: a power of 2 in 32..1024) "
                "out of range",
                (long long)steps, (long long)threads);
        return KB_BAD_PARAM;
    }
    cfg->ne = (int)(ne > 0 && ne < 100000 ? ne : 0);
    cfg->steps = (int)steps;
    cfg->threads = (int)threads;
    cfg->reorder = (int)reorder;
    cfg->ldg = ldg != 0;
    cfg->l1 = l1 != 0;
    cfg->shuffle = shuffle != 0;
    cfg->equil = (int)equil;
    if (md_config_derive(cfg, msg))
        return KB_BAD_PARAM;
    return KB_OK;
}

/* Host 1.1 services present (report), and a kb_case long enough to hold shared and handle. */
static int host_has_report(const kb_host *host)
{
    return host->abi_version >= KB_ABI_VERSION(1, 1) &&
           host->struct_size >= offsetof(kb_host, report) + sizeof(host->report) && host->report;
}

static void report(md_state *s, const char *name, const char *unit, double value, double err)
{
    if (s->handle && host_has_report(s->host))
        s->host->report(s->handle, name, value, err);
    else if (s->host->metric)
        s->host->metric(name, value, unit);
}

/* ---- prepare / release ------------------------------------------------------------------- */

static int md_prepare(const kb_point *pt, void **shared, char *msg)
{
    md_point_state *ps = calloc(1, sizeof *ps);
    md_config cfg;
    int rc;
    *shared = NULL;
    if (!ps) {
        kb_msgf(msg, "host allocation failed");
        return KB_NOMEM;
    }
    if ((rc = read_config(pt->host, pt->params, &cfg, msg)))
        goto fail;
    if (pt->device >= 0)
        rc = md_prepare_device(&cfg, pt->seed, (cudaStream_t)pt->stream, ps, msg);
    else
        rc = md_prepare_host(&cfg, pt->seed, ps, msg) ? KB_NOMEM : KB_OK;
    if (rc)
        goto fail;
    if (cfg.shuffle)
        md_point_shuffle(ps, pt->seed);
    *shared = ps;
    return KB_OK;
fail:
    free(ps);
    return rc;
}

static int md_release(void *shared, char *msg)
{
    md_point_free(shared);
    free(shared);
    return KB_OK;
}

/* ---- init / counts / run / teardown ----------------------------------------------------- */

static void md_free(md_state *s)
{
    if (!s)
        return;
    if (is_host(s->variant))
        md_host_destroy(&s->h);
    else
        md_dev_destroy(&s->d);
    if (s->own)
        md_point_free(&s->own_ps);
    free(s);
}

/* Loads the point's state into the variant and records its first-step figures. */
static int load_state(md_state *s, cudaStream_t stream, int first, char *msg)
{
    const md_point_state *ps = s->ps;
    int rc, n = s->cfg.n;
    if (is_host(s->variant)) {
        int kind = s->variant == V_HOST_PAIRLIST ? MD_HOST_PAIRLIST : MD_HOST_LAYER;
        md_host_destroy(&s->h);
        if (md_host_create(&s->h, &s->cfg, kind, ps->r, ps->v, ps->max_occ + 4,
                           ps->max_nbr + ps->max_nbr / 4 + 8, msg))
            return KB_NOMEM;
        if (first) {
            s->u_first = s->h.pe;
            s->np_first = (long long)llround(0.5 * s->h.sum_np * n);
        }
        return KB_OK;
    }
    if ((rc = md_dev_load(&s->d, ps->r, ps->v, stream, msg)))
        return rc;
    if (first) {
        float4 *a = malloc((size_t)n * sizeof(float4));
        md_ctl ctl;
        double u = 0.0;
        if (!a) {
            kb_msgf(msg, "host allocation failed");
            return KB_NOMEM;
        }
        rc = md_dev_read_ctl(&s->d, &ctl, stream, msg);
        if (!rc && cudaMemcpy(a, s->d.v.a, (size_t)n * sizeof(float4), cudaMemcpyDeviceToHost))
            rc = kb_cuda_fail(cudaGetLastError(), "cudaMemcpy(a)", __FILE__, __LINE__, msg);
        for (int i = 0; !rc && i < n; i++)
            u += a[i].w;
        free(a);
        if (rc)
            return rc;
        s->u_first = 0.5 * u / n;
        s->np_first = s->variant == V_ALLPAIRS ? ps->np0 : (long long)(ctl.nbr_total / 2);
    }
    return KB_OK;
}

static int md_init(const kb_case *c, void **state, char *msg)
{
    md_state *s = calloc(1, sizeof *s);
    int rc;
    *state = NULL;
    if (!s) {
        kb_msgf(msg, "host allocation failed");
        return KB_NOMEM;
    }
    s->variant = c->variant;
    s->host = c->host;
    if ((rc = read_config(c->host, c->params, &s->cfg, msg)))
        goto fail;
    if (c->struct_size >= offsetof(kb_case, handle) + sizeof(c->handle)) {
        s->ps = c->shared;
        s->handle = c->handle;
    }
    if (s->variant == V_ALLPAIRS && s->cfg.n > MD_ALLPAIRS_MAX_N) {
        kb_msgf(msg, "allpairs is O(N^2): %d atoms is more than %d", s->cfg.n, MD_ALLPAIRS_MAX_N);
        rc = KB_SKIP;
        goto fail;
    }
    if (is_host(s->variant) && s->cfg.n > MD_HOST_MAX_N) {
        kb_msgf(msg, "host variants take at most %d atoms (%d here: seconds per run)",
                MD_HOST_MAX_N, s->cfg.n);
        rc = KB_SKIP;
        goto fail;
    }
    if (!s->ps) { /* no prepare (a 1.0 harness): make the state here */
        if (is_host(s->variant))
            rc = md_prepare_host(&s->cfg, c->seed, &s->own_ps, msg) ? KB_NOMEM : KB_OK;
        else
            rc = md_prepare_device(&s->cfg, c->seed, 0, &s->own_ps, msg);
        if (rc)
            goto fail;
        if (s->cfg.shuffle)
            md_point_shuffle(&s->own_ps, c->seed);
        s->own = 1;
        s->ps = &s->own_ps;
    }
    if (!is_host(s->variant)) {
        const md_point_state *ps = s->ps;
        int lcap = ps->max_occ + ps->max_occ / 2 + 4, mcap = ps->max_nbr + ps->max_nbr / 4 + 8;
        if ((rc = md_dev_create(&s->d, &s->cfg, dev_strategy(s->variant), lcap, mcap, msg)))
            goto fail;
    }
    if ((rc = load_state(s, 0, 1, msg)))
        goto fail;
    *state = s;
    return KB_OK;
fail:
    md_free(s);
    return rc;
}

static int md_counts(void *state, kb_counts *out, char *msg)
{
    md_state *s = state;
    const md_config *cfg = &s->cfg;
    double n = cfg->n, full = 2.0 * (double)s->ps->np0 / n;
    double frac_rc = pow(cfg->rc / (cfg->rc + cfg->delta), 3.0);
    out->items = n * cfg->steps;
    out->item_unit = "atom-steps";
    /* Nominal work of the force step: a distance test (~15 flops with the image) per listed
     * neighbour, the pair force and energy (~20) for those within rc. */
    out->flops = out->items * full * (15.0 + 20.0 * frac_rc);
    /* The least traffic of a step per atom: leapfrog halves (r, v, a: 80 + 52 bytes), the
     * force kernel's own coordinate, count, W row and outputs (40 + 4 per neighbour). */
    out->bytes = out->items * (172.0 + 4.0 * full);
    out->max_batch = 0;
    out->run_flags = (!is_host(s->variant) && s->d.host_layers) ? KB_RUN_SYNCS : 0;
    return KB_OK;
}

static int md_run(void *state, void *stream, char *msg)
{
    md_state *s = state;
    if (is_host(s->variant)) {
        for (int k = 0; k < s->cfg.steps; k++)
            md_host_step(&s->h);
        return s->h.overflow ? (kb_msgf(msg, "host allocation failed in a rebuild"), KB_NOMEM)
                             : KB_OK;
    }
    return md_dev_steps(&s->d, s->cfg.steps, (cudaStream_t)stream, NULL, msg);
}

static int md_reset(void *state, void *stream, char *msg)
{
    return load_state(state, (cudaStream_t)stream, 0, msg);
}

static int md_teardown(void *state, char *msg)
{
    md_free(state);
    return KB_OK;
}

/* ---- verify ------------------------------------------------------------------------------ */

/* The checks' figures, each with its bound. */
typedef struct md_checks {
    double force, energy, drift, first_u;
    long long nbr_bad, np_diff;
    long long edge_pairs; /* pairs within float rounding of rc (either side allowed) */
    int overflow;
} md_checks;

/* Pairs this close to rc (relative to the region edge, like the neighbour check's slack) may
 * fall on either side of a float cutoff test: the coordinate difference of a wrapped pair is
 * rounded to ulp(L)/2 per component, r2 to a few ulps. */
#define MD_RC_SLACK(cfg) (1e-6 * ((cfg)->L + (cfg)->rc))

/* Forces and energy of the current configuration against the double reference.  A pair
 * within MD_RC_SLACK of rc may be counted or not (the truncated LJ force jumps there by
 * |f(rc)| rc = 0.039 at rc = 2.5, 1.2e-3 of rms |F| in the standard liquid: one such pair
 * alone exceeds MD_TOL_FORCE); its force is allowed on its atoms, its energy on U, and
 * everything else is held to the bounds. */
static int check_forces(md_state *s, const float *r4, const double *f, double u, md_checks *k,
                        char *msg)
{
    const md_config *cfg = &s->cfg;
    int n = cfg->n, rc = KB_NOMEM;
    double *ref = malloc(3 * (size_t)n * sizeof(double)), *fa = malloc((size_t)n * sizeof(double));
    double uref = 0, vref = 0, rms = 0, worst = 0, ua = 0;
    if (!ref || !fa)
        goto fail;
    if (n <= MD_REF_ALLPAIRS_MAX_N)
        md_ref_allpairs(cfg, r4, n, ref, &uref, &vref);
    else if (md_ref_cells(cfg, r4, n, ref, &uref, &vref))
        goto fail;
    if (md_ref_cutoff_slack(cfg, r4, n, MD_RC_SLACK(cfg), fa, &ua, &k->edge_pairs))
        goto fail;
    for (int i = 0; i < 3 * n; i++)
        rms += ref[i] * ref[i];
    rms = sqrt(rms / n);
    for (int i = 0; i < n; i++) {
        double dx = f[3 * i] - ref[3 * i], dy = f[3 * i + 1] - ref[3 * i + 1],
               dz = f[3 * i + 2] - ref[3 * i + 2], e = sqrt(dx * dx + dy * dy + dz * dz) - fa[i];
        if (!(e <= worst)) /* NaN (a poisoned force) wins */
            worst = e;
    }
    k->force = rms > 0 ? worst / rms : worst;
    k->energy = fmax(0.0, fabs(u - uref) - ua) / (fabs(uref) > 1e-12 ? fabs(uref) : 1.0);
    if (isnan(u))
        k->energy = NAN;
    rc = KB_OK;
fail:
    if (rc)
        kb_msgf(msg, "host allocation failed");
    free(ref);
    free(fa);
    return rc;
}

static int verify_host(md_state *s, md_checks *k, char *msg)
{
    md_host *h = &s->h;
    int n = s->cfg.n, rc = KB_OK;
    float *r4 = malloc(4 * (size_t)n * sizeof(float));
    int *W = NULL, *nn = NULL, mcap = s->ps->max_nbr + s->ps->max_nbr / 2 + 16;
    if (!r4) {
        kb_msgf(msg, "host allocation failed");
        return KB_NOMEM;
    }
    /* The host engine works in double: the reference gets its positions rounded to float,
     * so the force check compares at the host's own configuration within float rounding. */
    for (int i = 0; i < n; i++) {
        for (int d = 0; d < 3; d++)
            r4[4 * i + d] = (float)h->r[3 * i + d];
        r4[4 * i + 3] = 0.0f;
    }
    /* Rebuild from the float-rounded positions, so both sides see the same configuration. */
    for (int i = 0; i < 3 * n; i++)
        h->r[i] = r4[4 * (i / 3) + i % 3];
    md_host_rebuild_now(h);
    if ((rc = check_forces(s, r4, h->a, h->pe, k, msg)))
        goto done;
    W = malloc((size_t)mcap * n * sizeof(int));
    nn = malloc((size_t)n * sizeof(int));
    if (!W || !nn) {
        kb_msgf(msg, "host allocation failed");
        rc = KB_NOMEM;
        goto done;
    }
    {
        int *tmp = malloc((size_t)mcap * sizeof(int));
        if (!tmp) {
            kb_msgf(msg, "host allocation failed");
            rc = KB_NOMEM;
            goto done;
        }
        if (h->kind == MD_HOST_PAIRLIST) { /* both directions of every pair into W's layout */
            memset(nn, 0, (size_t)n * sizeof(int));
            for (size_t p = 0; p < h->npairs; p++) {
                int i = h->pi[p], j = h->pj[p];
                if (nn[i] < mcap)
                    W[(size_t)nn[i] * n + i] = j;
                if (nn[j] < mcap)
                    W[(size_t)nn[j] * n + j] = i;
                nn[i]++;
                nn[j]++;
            }
        } else {
            for (int i = 0; i < n; i++) {
                int m = md_host_neighbors(h, i, tmp, mcap);
                nn[i] = m;
                for (int j = 0; j < m && j < mcap; j++)
                    W[(size_t)j * n + i] = tmp[j];
            }
        }
        free(tmp);
    }
    k->nbr_bad = md_check_neighbor_matrix(&s->cfg, r4, n, W, n, nn, mcap,
                                          1e-9 * (s->cfg.L + s->cfg.rc + s->cfg.delta));
    if (k->nbr_bad < 0) {
        kb_msgf(msg, "host allocation failed");
        rc = KB_NOMEM;
    }
done:
    free(r4);
    free(W);
    free(nn);
    return rc;
}

static int verify_device(md_state *s, cudaStream_t st, md_checks *k, char *msg)
{
    md_dev *d = &s->d;
    int n = s->cfg.n, rc = KB_OK;
    float *r4 = malloc((size_t)n * sizeof(float4)), *a4 = malloc((size_t)n * sizeof(float4));
    double *f = malloc(3 * (size_t)n * sizeof(double)), u = 0.0;
    int *W = NULL, *nn = NULL;
    md_ctl ctl;
    if (!r4 || !a4 || !f) {
        kb_msgf(msg, "host allocation failed");
        rc = KB_NOMEM;
        goto done;
    }
    /* (1) forces and energy as the latest step left them, through its (aged) neighbour list */
    KB_CUDA_GOTO(cudaMemcpy(r4, d->v.r, (size_t)n * sizeof(float4), cudaMemcpyDeviceToHost), msg,
                 done);
    KB_CUDA_GOTO(cudaMemcpy(a4, d->v.a, (size_t)n * sizeof(float4), cudaMemcpyDeviceToHost), msg,
                 done);
    for (int i = 0; i < n; i++) {
        for (int c = 0; c < 3; c++)
            f[3 * i + c] = a4[4 * i + c];
        u += a4[4 * i + 3];
    }
    if ((rc = check_forces(s, r4, f, 0.5 * u / n, k, msg)))
        goto done;
    /* (2) the neighbour set, rebuilt now, against brute force on the same coordinates */
    if (s->variant != V_ALLPAIRS) {
        int mcap = d->v.mcap;
        if ((rc = md_dev_rebuild_now(d, st, msg)))
            goto done;
        W = malloc((size_t)mcap * n * sizeof(int));
        nn = malloc((size_t)n * sizeof(int));
        if (!W || !nn) {
            kb_msgf(msg, "host allocation failed");
            rc = KB_NOMEM;
            goto done;
        }
        KB_CUDA_GOTO(cudaStreamSynchronize(st), msg, done);
        KB_CUDA_GOTO(cudaMemcpy(r4, d->v.r, (size_t)n * sizeof(float4), cudaMemcpyDeviceToHost),
                     msg, done);
        KB_CUDA_GOTO(cudaMemcpy(W, d->v.W, (size_t)mcap * n * sizeof(int), cudaMemcpyDeviceToHost),
                     msg, done);
        KB_CUDA_GOTO(cudaMemcpy(nn, d->v.nn, (size_t)n * sizeof(int), cudaMemcpyDeviceToHost), msg,
                     done);
        /* Float rounding of the builder's distance: a few ulps of the region edge. */
        k->nbr_bad = md_check_neighbor_matrix(&s->cfg, r4, n, W, n, nn, mcap,
                                              1e-6 * (s->cfg.L + s->cfg.rc + s->cfg.delta));
        if (k->nbr_bad < 0) {
            kb_msgf(msg, "host allocation failed");
            rc = KB_NOMEM;
            goto done;
        }
    }
    if ((rc = md_dev_read_ctl(d, &ctl, st, msg)))
        goto done;
    k->overflow = ctl.overflow;
done:
    free(r4);
    free(a4);
    free(f);
    free(W);
    free(nn);
    return rc;
}

/* History of the latest run as (ke, pe, vir) per step. */
static int read_history(md_state *s, double *hist, char *msg)
{
    int steps = s->cfg.steps;
    if (is_host(s->variant)) {
        memcpy(hist, s->h.hist, 3 * (size_t)steps * sizeof(double));
        return KB_OK;
    }
    KB_CUDA_TRY(
        cudaMemcpy(hist, s->d.v.hist, 3 * (size_t)steps * sizeof(double), cudaMemcpyDeviceToHost),
        msg);
    return KB_OK;
}

/* One instrumented run: phase times for the metrics. */
static int instrumented_run(md_state *s, cudaStream_t st, char *msg)
{
    int rc = KB_OK;
    memset(&s->tm, 0, sizeof s->tm);
    if (is_host(s->variant)) {
        md_host *h = &s->h;
        double n0 = h->t_nbr, f0 = h->t_force, t0 = h->t_total;
        for (int k = 0; k < s->cfg.steps; k++)
            md_host_step(h);
        s->tm.nbr = h->t_nbr - n0;
        s->tm.force = h->t_force - f0;
        s->tm.total = h->t_total - t0;
        s->tm.steps = s->cfg.steps;
    } else if ((rc = md_dev_steps(&s->d, s->cfg.steps, st, &s->tm, msg))) {
        return rc;
    }
    return KB_OK;
}

/* The run's pressure and energy against the LJTS equation of state (md_eos_compare): the
 * references at its mean T, and the deviation in units of the combined error (the block
 * error of the per-step differences, which holds the reference's through T).  The deviation
 * only for runs of >= 1000 steps, whose 10 blocks (>= 0.5 time units each) are long against
 * the correlation time of U and P in the liquid, so their block error means something. */
static void report_eos(md_state *s, const double *hist)
{
    md_eos_cmp c;
    int dev = s->cfg.steps >= 1000;
    if (md_eos_compare(&s->cfg, hist, s->cfg.steps, &c))
        return;
    report(s, "temperature", "1", c.T, c.T_err);
    if (!c.applies)
        return;
    report(s, "eos_p_ref", "1", c.p_ref, c.p_ref_err);
    if (dev && c.dp_err > 0)
        report(s, "eos_p_dev", "1", c.dp / c.dp_err, 0.0);
    if (!c.energy)
        return;
    report(s, "eos_u_ref", "1", c.u_ref, c.u_ref_err);
    if (dev && c.du_err > 0)
        report(s, "eos_u_dev", "1", c.du / c.du_err, 0.0);
}

/* The instrumented run's phase fractions and the host pass's pieces (s->tm). */
static void report_timing(md_state *s)
{
    const md_config *cfg = &s->cfg;
    if (!(s->tm.steps > 0 && s->tm.total > 0))
        return;
    report(s, "us_per_atom_step", "us", 1e6 * s->tm.total / ((double)s->tm.steps * cfg->n), 0.0);
    report(s, "t_nbr_fraction", "1", s->tm.nbr / s->tm.total, 0.0);
    report(s, "t_force_fraction", "1", s->tm.force / s->tm.total, 0.0);
    if (!is_host(s->variant) && s->d.host_layers)
        report(s, "t_host_layers_fraction", "1", s->tm.host / s->tm.total, 0.0);
    if (!is_host(s->variant) && s->variant != V_ALLPAIRS && s->tm.builds > 0) {
        double per = 1e9 / ((double)s->tm.builds * cfg->n);
        report(s, "t_build_kernel_fraction", "1", s->tm.build / s->tm.total, 0.0);
        report(s, "build_kernel_ns_per_atom", "ns", s->tm.build * per, 0.0);
    }
    if (!is_host(s->variant) && s->d.host_layers && s->tm.host_calls > 0) {
        double per = 1e9 / ((double)s->tm.host_calls * cfg->n);
        double cbytes = 4.0 * (double)cfg->n * (double)s->tm.host_calls;
        report(s, "host_layers_ns_per_atom", "ns", s->tm.host * per, 0.0);
        report(s, "host_wait_ns_per_atom", "ns", s->tm.host_wait * per, 0.0);
        report(s, "host_loop_ns_per_atom", "ns", s->tm.host_loop * per, 0.0);
        if (s->tm.copy_in > 0)
            report(s, "host_c_copy_gbs", "GB/s", 1e-9 * cbytes / s->tm.copy_in, 0.0);
        if (s->tm.copy_out > 0)
            report(s, "host_l_copy_gbs", "GB/s",
                   1e-9 * (cbytes + 4.0 * cfg->ncell * (double)s->tm.host_calls) / s->tm.copy_out,
                   0.0);
    }
}

/* The latest run's figures: neighbour statistics, memory, energies, the equation of state. */
static void report_metrics(md_state *s, const md_summary *sm, const double *hist)
{
    const md_config *cfg = &s->cfg;
    double builds = 0, sum_np = 0, sum_nl = 0, sum_nu = 0, rebuilds = 0, bytes = 0;
    if (is_host(s->variant)) {
        const md_host *h = &s->h;
        builds = (double)h->builds;
        rebuilds = (double)h->rebuilds;
        sum_np = h->sum_np;
        sum_nl = h->sum_nl;
        sum_nu = h->sum_nu;
        bytes = (double)cfg->n * (3 * 3 * 8 + 4) + (double)cfg->ncell * 4;
        if (h->kind == MD_HOST_PAIRLIST)
            bytes += (double)h->pair_cap * 8;
        else
            bytes += (double)cfg->n * (4 * 3 + 4.0 * h->mcap) + (double)cfg->ncell * 4 * h->lcap;
    } else {
        md_ctl ctl;
        char m2[KB_MSG_SIZE];
        if (md_dev_read_ctl(&s->d, &ctl, 0, m2) == KB_OK) {
            builds = (double)ctl.builds;
            rebuilds = (double)ctl.rebuilds;
            sum_np = ctl.sum_np;
            sum_nl = ctl.sum_nl;
            sum_nu = ctl.sum_nu;
        }
        bytes = (double)s->d.bytes;
    }
    if (s->variant == V_ALLPAIRS)
        report(s, "neighbors_per_atom", "1", 2.0 * (double)s->ps->np0 / cfg->n, 0.0);
    else if (builds > 0)
        report(s, "neighbors_per_atom", "1", sum_np / builds, 0.0);
    if (builds > 0 && s->variant != V_HOST_PAIRLIST && s->variant != V_ALLPAIRS)
        report(s, "layers", "1", sum_nl / builds, 0.0);
    if (rebuilds > 0)
        report(s, "steps_per_rebuild", "1", sum_nu / rebuilds, 0.0);
    report(s, "bytes_per_atom", "B", bytes / cfg->n, 0.0);
    report(s, "energy_drift", "1", sm->drift, 0.0);
    report(s, "total_energy", "1", sm->e_mean, sm->e_err);
    report(s, "kinetic_energy", "1", sm->ke_mean, sm->ke_err);
    report(s, "potential_energy", "1", sm->pe_mean, sm->pe_err);
    report(s, "pressure", "1", sm->p_mean, sm->p_err);
    report_eos(s, hist);
}

static int md_verify(void *state, kb_verdict *out, char *msg)
{
    md_state *s = state;
    md_checks k = {0};
    md_summary sm;
    double *hist = malloc(3 * (size_t)s->cfg.steps * sizeof(double)), worst = 0;
    double r_force, r_energy, r_drift, r_first, r_np;
    int rc;
    if (!hist) {
        kb_msgf(msg, "host allocation failed");
        return KB_NOMEM;
    }
    /* (3) drift of the latest run, before anything below moves the state on */
    if ((rc = read_history(s, hist, msg)))
        goto done;
    md_summarize(&s->cfg, hist, s->cfg.steps, &sm);
    rc = is_host(s->variant) ? verify_host(s, &k, msg) : verify_device(s, 0, &k, msg);
    if (rc)
        goto done;
    /* (4) the first-step energy and pair count of this strategy against the point's reference */
    k.first_u = fabs(s->u_first - s->ps->u0) / (fabs(s->ps->u0) > 1e-12 ? fabs(s->ps->u0) : 1.0);
    k.np_diff = llabs(s->np_first - s->ps->np0);
    k.drift = sm.drift;
    r_force = k.force / MD_TOL_FORCE;
    r_energy = k.energy / MD_TOL_ENERGY;
    r_drift = k.drift / MD_TOL_DRIFT;
    r_first = k.first_u / MD_TOL_FIRST_U;
    /* Pairs within float rounding of rc + delta may go either way: 1e-5 of them. */
    r_np = (double)k.np_diff / (1e-5 * (double)s->ps->np0 + 2.0);
    {
        /* The verdict names the worst check, so a failure says which one (the harness shows
         * the metric and its figure, not this message). */
        static const char *names[5] = {"force_err/bound(1e-3 rms|F|)", "energy_err/bound(1e-5)",
                                       "drift/bound(2e-3)", "first_step_U/bound(2e-5)",
                                       "pair_count_diff/bound(1e-5 Np+2)"};
        double r[5] = {r_force, r_energy, r_drift, r_first, r_np};
        const char *what = "max(check/bound)";
        for (int i = 0; i < 5; i++)
            if (!(r[i] <= worst)) {
                worst = r[i];
                what = names[i];
            }
        out->metric = what;
    }
    out->passed = worst <= 1.0 && k.nbr_bad == 0 && k.overflow == 0;
    out->error = worst;
    out->tolerance = 1.0;
    kb_msgf(msg,
            "force %.2e (<%.0e; %lld pairs at rc within float rounding allowed), energy %.2e "
            "(<%.0e), drift %.2e (<%.0e), first-step U %.2e (<%.0e), pairs %lld vs %lld, "
            "neighbour sets wrong %lld, overflow %d",
            k.force, MD_TOL_FORCE, k.edge_pairs, k.energy, MD_TOL_ENERGY, k.drift, MD_TOL_DRIFT,
            k.first_u, MD_TOL_FIRST_U, s->np_first, s->ps->np0, k.nbr_bad, k.overflow);
    if (k.nbr_bad && worst <= 1.0) {
        out->error = 1.0 + (double)k.nbr_bad;
        out->metric = "1+neighbour_sets_wrong";
    } else if (k.overflow && worst <= 1.0) {
        out->error = 1.0 + k.overflow;
        out->metric = "1+capacity_overflow_flags";
    }
    report_metrics(s, &sm, hist);
    rc = KB_OK;
done:
    free(hist);
    return rc;
}

/* ABI 1.4: one run of `steps` steps from the state the last verify left (its neighbour list
 * just rebuilt, as the first verify's was when this run was part of it), with an event pair
 * around each phase of every step (device) or the host engine's clocks, synchronising each
 * step: apart from the samples, which that would slow.  Reports the phase fractions. */
static int md_instrument(void *state, void *stream, char *msg)
{
    md_state *s = state;
    int rc = instrumented_run(s, (cudaStream_t)stream, msg);
    if (rc == KB_OK)
        report_timing(s);
    return rc;
}

static const kb_plugin md_plugin = {
    .abi_version = KB_ABI_CURRENT,
    .struct_size = sizeof(kb_plugin),
    .name = "md",
    .description = "short-range MD (LJ, soft spheres): neighbour-list strategies of Rapaport's "
                   "GPU paper, leapfrog, atom-steps",
    .variants = md_variants,
    .n_variants = V_COUNT,
    .params = md_params,
    .n_params = N_PARAMS,
    .init = md_init,
    .counts = md_counts,
    .run = md_run,
    .verify = md_verify,
    .instrument = md_instrument,
    .teardown = md_teardown,
    .prepare = md_prepare,
    .release = md_release,
    .reset = md_reset,
    .metrics = md_metrics,
    .n_metrics = N_METRICS,
    .size_param = "N_e",
    .knobs = "threads|reorder|ldg|equil|shuffle|l1",
    .implicit = "rho|T|rc|delta",
    /* equil and shuffle shape the point's state, which every variant starts from. */
    .knob_variants = "threads=allpairs|cell_block|layer_matrix|layer_atomic|sorted;"
                     "reorder=cell_block|layer_matrix|layer_atomic;"
                     "ldg=cell_block|layer_matrix|layer_atomic|sorted;"
                     "l1=cell_block|layer_matrix|layer_atomic|sorted",
    .headline = "time_per_item",
};

KB_EXPORT const kb_plugin *kb_plugin_entry(void)
{
    return &md_plugin;
}
