/* permute plugin: block-sparse tensor permutation with recoupling (README.md beside it; the
 * seed is TensorKit.jl PR #616).  For every block and destination tree i,
 *     out[i] = alpha * sum_j U[i][j] * permute_p(src[j]) + beta * cin[i]
 * on a tensor from the seeded generator (gen.c).  prepare builds the blocks, the inputs and
 * the double reference once per point; init copies them to the device and plans the variant
 * (plan.c); verify checks every element against the reference within a bound stated from the
 * sum length (exact for abelian blocks with alpha = 1, beta = 0); instrument (ABI 1.4, after the
 * last verify) times the variant and a cudaMemcpyAsync of the destination's bytes itself (CUDA
 * graphs of back-to-back runs) to report the ratio to copy beside the cost model's prediction. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "kbench/cuda_check.h"
#include "kbench/plugin.h"
#include "permute.h"

enum {
    V_HOST,
    V_PER_ELEMENT,
    V_TILED,
    V_GEMM,
    V_AUTO,
    V_COPY,
    V_FUSED,
    V_FUSED_ASYNC,
    V_FUSED_MMA,
    V_COUNT
};

static const kb_variant variants[V_COUNT] = {
    [V_HOST] = {"host", "C loops on the CPU in the element type (small sizes)", KB_HOST, 0},
    [V_PER_ELEMENT] = {"per_element",
                       "a thread per destination element, unique/generic kernels (the seed's old)",
                       KB_DEVICE, 0},
    [V_TILED] = {"tiled", "the seed's tiled shared-memory kernel, one launch, cost-model tiles",
                 KB_DEVICE, 0},
    [V_GEMM] = {"gemm", "recoupling blocks: extract + one grouped cuBLAS GEMM; abelian: tiled",
                KB_DEVICE, 0},
    [V_AUTO] = {"auto", "tiled, fused or extract + GEMM per block, by the cost model", KB_DEVICE,
                0},
    [V_COPY] = {"copy", "cudaMemcpyAsync of the destination's bytes (the roof)", KB_DEVICE,
                KB_VARIANT_BASELINE},
    [V_FUSED] = {"fused",
                 "recoupling blocks: one register-tiled GEMM gathering the permute; abelian: tiled",
                 KB_DEVICE, 0},
    [V_FUSED_ASYNC] =
        {"fused_async",
         "fused with cp.async fills: no registers hold the next fill (more CTAs an SM)", KB_DEVICE,
         0},
    [V_FUSED_MMA] = {"fused_mma",
                     "fused with the product on the FP64 tensor cores (DMMA), accumulated in "
                     "double",
                     KB_DEVICE, 0},
};

static const kb_param params[] = {
    {"preset", KB_PARAM_STRING, "recoupling_small", "block structure (the seed's categories)",
     "abelian_small|recoupling_small|many_small|large_u|few_large|mixed|dense|custom"},
    {"dtype", KB_PARAM_STRING, "f32", "element type", "f32|f64"},
    {"alpha", KB_PARAM_FLOAT, "1.0", "scale of the recoupled permute", NULL},
    {"beta", KB_PARAM_FLOAT, "0.0", "scale of cin added to the result (0: cin is not read)", NULL},
    {"scale", KB_PARAM_FLOAT, "1.0", "element count factor (small for CI)", NULL},
    {"dims", KB_PARAM_DIMS, "48x48x48x48",
     "dense: the block's source dims, rank <= 8; custom: fixed dims where dmax = 0", "1-8"},
    {"perm", KB_PARAM_INTS, "[]",
     "dense, custom: destination axis k is source axis perm[k], e.g. [3,2,0,1]; []: reversed",
     "0-8"},
    {"n_blocks", KB_PARAM_INT, "16", "custom: number of blocks", NULL},
    {"rank", KB_PARAM_INT, "4", "custom: rank when dims = auto", NULL},
    {"dmin", KB_PARAM_INT, "1", "custom: smallest random dim", NULL},
    {"dmax", KB_PARAM_INT, "4", "custom: largest random dim; 0: the dims parameter", NULL},
    {"rows_min", KB_PARAM_INT, "1", "custom: fewest destination trees per block", NULL},
    {"rows_max", KB_PARAM_INT, "4", "custom: most destination trees per block", NULL},
    {"cols_min", KB_PARAM_INT, "1", "custom: fewest source trees (with cols_max)", NULL},
    {"cols_max", KB_PARAM_INT, "0", "custom: most source trees; 0: cols = rows (square U)", NULL},
    {"gemm_call", KB_PARAM_STRING, "grouped",
     "gemm, auto: one grouped cuBLAS call, or a loop of one GEMM per block", "grouped|loop"},
    {"tile_len", KB_PARAM_INT, "0",
     "tiled, gemm, fused, auto: threads per tile 32|64|128|256; 0: the cost model's choice", NULL},
    {"lean", KB_PARAM_INT, "4",
     "tiled, gemm, fused, auto: plans of lean tiles only (a split plan's lean launch runs v2's "
     "tile, one a CTA): 4 moves whole aligned "
     "tiles in 16-byte vectors (one tile a CTA, v2's scalar tile elsewhere) in launches of 132 "
     "tiles or more, and as 3 below that; 3 pipelines up to 4 scalar tiles a CTA (the next "
     "tile's loads before this one's writes); 2 is v2's scalar tile, one a CTA",
     NULL},
    {"tile_direct", KB_PARAM_INT, "1",
     "tiled, auto: 1: tiny recoupling blocks on direct tiles where the model says; 0: never", NULL},
    {"mma_ctas", KB_PARAM_INT, "3",
     "fused_mma, auto: CTAs an SM the DMMA kernel's registers are capped for, 3 or 4 (run 18: "
     "3 was 18-39% faster; the float32 ring's shared memory allows 3 anyway)",
     NULL},
    {"mma_ring", KB_PARAM_INT, "3",
     "fused_mma, auto, float32: fill the DMMA kernel through a cp.async ring of 3 or 2 stages "
     "(v8.2); 0: through registers (v8.1, float64's way)",
     NULL},
    {"tile_split", KB_PARAM_INT, "2",
     "tiled, auto: where the model says, the lean tiles in a lean-only launch of their own "
     "(v6); 2: forked onto a second stream beside the general tiles' launch (run 16, mixed: "
     "3-8% faster than 1); 1: after it, waits for slots counted; 0: one launch, run 10's plan",
     NULL},
};

static const kb_metric_def metrics[] = {
    {"copy_ratio", "1", KB_BETTER_LOWER, KB_METRIC_TIMING, 0, 0,
     "own graph-timed us per call over a memcpy of the destination's bytes"},
    {"self_us", "us", KB_BETTER_LOWER, KB_METRIC_TIMING, 0, 0,
     "own graph-timed us per call (beside the model)"},
    {"predicted_us", "us", KB_BETTER_NONE, 0, 0, 0, "the cost model's predicted us per call"},
    {"tiles", "1", KB_BETTER_NONE, 0, 0, 0, "tiles (CTAs) of the tiled launch"},
    {"launches", "1", KB_BETTER_NONE, 0, 0, 0, "kernel launches, copies and cuBLAS calls per run"},
    {"gemm_blocks", "1", KB_BETTER_NONE, 0, 0, 0, "blocks sent through extract + GEMM"},
    {"fused_blocks", "1", KB_BETTER_NONE, 0, 0, 0, "blocks sent through the fused kernel"},
    {"tiled_blocks", "1", KB_BETTER_NONE, 0, 0, 0, "blocks permuted by the tiled kernel itself"},
    {"fused_tiles", "1", KB_BETTER_NONE, 0, 0, 0, "tiles (CTAs) of the fused launch"},
};

typedef struct state {
    int variant;
    const kb_host *host;
    kb_case_handle *handle;
    pm_problem *prob;
    int own_prob; /* generated here (a 1.0 harness has no prepare) */
    void *h_out;
    /* device */
    void *d_src, *d_cin, *d_u, *d_out, *d_ws, *d_scratch;
    pm_tile_plan tp;
    int lean; /* the lean parameter: 4 v4 (tp.lean_vec), 3 v3 (lean_per), 2 v2 (neither) */
    pm_tile_block *d_tblk;
    pm_gen_tile *d_tgen;
    pm_lean_tile *d_tlean;
    pm_elem_plan ep[2]; /* generic, unique */
    pm_elem_block *d_eblk[2];
    int32_t *d_ebegin[2], *d_eowner[2];
    pm_gemm_plan gp;
    pm_fused_plan fp;
    pm_fused_gather *d_fgather;
    int32_t *d_fdcol;
    pm_fused_item *d_fitem;
    cublasHandle_t blas;
    void *d_blas_ws;
    cudaStream_t own;
    double predicted_ns;
    int launches;
    int direct;   /* tile_direct */
    int mma_ctas; /* mma_ctas */
    int mma_ring; /* mma_ring */
    int split;    /* tile_split (tiled and auto; 0 elsewhere) */
    int fork;     /* tile_split = 2: a split plan's general launch on side, joined by events */
    cudaStream_t side;
    cudaEvent_t ev_fork, ev_join;
} state;

/* ---- parameters and prepare ------------------------------------------------------------- */

static int read_spec(const kb_host *h, const kb_params *pr, pm_spec *s, char *msg)
{
    const char *preset, *dtype;
    int64_t v[8], dims[PM_MAX_RANK], perm[PM_MAX_RANK];
    int n_dims = 0, n_perm = 0, rc;
    static const char *const ints[8] = {"n_blocks", "rank",     "dmin",     "dmax",
                                        "rows_min", "rows_max", "cols_min", "cols_max"};
    memset(s, 0, sizeof *s);
    if (h->param_string(pr, "preset", &preset) != KB_OK ||
        h->param_string(pr, "dtype", &dtype) != KB_OK ||
        h->param_float(pr, "alpha", &s->alpha) != KB_OK ||
        h->param_float(pr, "beta", &s->beta) != KB_OK ||
        h->param_float(pr, "scale", &s->scale) != KB_OK || !h->param_dims_cap ||
        h->param_dims_cap(pr, "dims", dims, PM_MAX_RANK, &n_dims) != KB_OK || !h->param_ints ||
        h->param_ints(pr, "perm", perm, PM_MAX_RANK, &n_perm) != KB_OK) {
        kb_msgf(msg, "a parameter is missing (dims and perm need a 1.1 harness)");
        return KB_BAD_PARAM;
    }
    for (int i = 0; i < 8; i++)
        if (h->param_int(pr, ints[i], &v[i]) != KB_OK || v[i] < 0 || v[i] > 1000000) {
            kb_msgf(msg, "%s: expected 0 to 1000000", ints[i]);
            return KB_BAD_PARAM;
        }
    if (pm_preset_of(preset, &s->preset) != KB_OK) {
        kb_msgf(msg, "preset = %s: unknown", preset);
        return KB_BAD_PARAM;
    }
    s->esize = strcmp(dtype, "f64") == 0 ? 8 : 4;
    s->n_blocks = (int)v[0];
    s->rank = (int)v[1];
    s->dmin = (int)v[2];
    s->dmax = (int)v[3];
    s->rows_min = (int)v[4];
    s->rows_max = (int)v[5];
    s->cols_min = (int)v[6];
    s->cols_max = (int)v[7];
    rc = pm_set_perm(perm, n_perm, s->perm, &s->n_perm, msg);
    if (rc != KB_OK)
        return rc;
    /* dims counts for dense, and for custom where dmax = 0; elsewhere it must keep its
     * default (a profile sweeping it over other presets would repeat the same case). */
    int is_default = n_dims == 4;
    for (int k = 0; k < n_dims; k++) {
        if (dims[k] > (1 << 30)) {
            kb_msgf(msg, "dims: %lld is too large", (long long)dims[k]);
            return KB_BAD_PARAM;
        }
        is_default &= dims[k] == 48;
    }
    if (s->preset == PM_DENSE || (s->preset == PM_CUSTOM && s->dmax == 0)) {
        s->n_dims = n_dims;
        for (int k = 0; k < n_dims; k++)
            s->dims[k] = (int)dims[k];
    } else if (!is_default) {
        kb_msgf(msg, "dims applies to preset dense, and to custom with dmax = 0");
        return KB_SKIP;
    }
    return KB_OK;
}

static int make_problem(const kb_host *h, const kb_params *pr, uint64_t seed, pm_problem **out,
                        char *msg)
{
    pm_spec spec;
    pm_problem *p;
    int rc = read_spec(h, pr, &spec, msg);
    *out = NULL;
    if (rc != KB_OK)
        return rc;
    p = calloc(1, sizeof *p);
    if (!p) {
        kb_msgf(msg, "out of host memory");
        return KB_NOMEM;
    }
    rc = pm_generate(&spec, seed, p, msg);
    if (rc != KB_OK) {
        free(p);
        return rc;
    }
    *out = p;
    return KB_OK;
}

static int prepare(const kb_point *pt, void **shared, char *msg)
{
    pm_problem *p;
    int rc = make_problem(pt->host, pt->params, pt->seed, &p, msg);
    *shared = rc == KB_OK ? p : NULL;
    return rc;
}

static int release(void *shared, char *msg)
{
    (void)msg;
    pm_problem_free(shared);
    free(shared);
    return KB_OK;
}

/* ---- metrics --------------------------------------------------------------------------------- */

static int has_report(const kb_host *h)
{
    return h->abi_version >= KB_ABI_VERSION(1, 1) &&
           h->struct_size >= offsetof(kb_host, report) + sizeof h->report && h->report;
}

static void report(state *s, const char *name, double value, double unc, const char *unit)
{
    if (has_report(s->host) && s->handle)
        s->host->report(s->handle, name, value, unc);
    else if (s->host->metric)
        s->host->metric(name, value, unit);
}

/* ---- init / teardown ------------------------------------------------------------------------- */

static int teardown(void *p, char *msg)
{
    state *s = p;
    (void)msg;
    if (!s)
        return KB_OK;
    free(s->h_out);
    cudaFree(s->d_src);
    cudaFree(s->d_cin);
    cudaFree(s->d_u);
    cudaFree(s->d_out);
    cudaFree(s->d_ws);
    cudaFree(s->d_scratch);
    cudaFree(s->d_tblk);
    cudaFree(s->d_tgen);
    cudaFree(s->d_tlean);
    for (int i = 0; i < 2; i++) {
        cudaFree(s->d_eblk[i]);
        cudaFree(s->d_ebegin[i]);
        cudaFree(s->d_eowner[i]);
        pm_elem_plan_free(&s->ep[i]);
    }
    pm_tile_plan_free(&s->tp);
    cudaFree(s->d_fgather);
    cudaFree(s->d_fdcol);
    cudaFree(s->d_fitem);
    pm_fused_plan_free(&s->fp);
    cudaFree(s->gp.dA);
    cudaFree(s->gp.dB);
    cudaFree(s->gp.dC);
    free(s->gp.m);
    free(s->gp.n);
    free(s->gp.k);
    free(s->gp.group_size);
    free(s->gp.alpha);
    free(s->gp.beta);
    free(s->gp.hA);
    free(s->gp.hB);
    free(s->gp.hC);
    free(s->gp.copy_off);
    free(s->gp.copy_len);
    if (s->blas)
        cublasDestroy(s->blas);
    cudaFree(s->d_blas_ws);
    if (s->own)
        cudaStreamDestroy(s->own);
    if (s->side)
        cudaStreamDestroy(s->side);
    if (s->ev_fork)
        cudaEventDestroy(s->ev_fork);
    if (s->ev_join)
        cudaEventDestroy(s->ev_join);
    if (s->own_prob) {
        pm_problem_free(s->prob);
        free(s->prob);
    }
    free(s);
    return KB_OK;
}

/* Copies n bytes of a host table to a new device allocation. */
static int upload(void **d, const void *h, size_t n, char *msg)
{
    int rc = KB_OK;
    KB_CUDA_GOTO(cudaMalloc(d, n ? n : 1), msg, fail);
    if (n)
        KB_CUDA_GOTO(cudaMemcpy(*d, h, n, cudaMemcpyHostToDevice), msg, fail);
    return KB_OK;
fail:
    return rc;
}

/* Plans extract + GEMM for the blocks with via[b] == 2 (workspace offsets in ws_off). */
static int plan_gemm(state *s, const unsigned char *via, const int64_t *ws_off, char *msg)
{
    const pm_problem *p = s->prob;
    pm_gemm_plan *g = &s->gp;
    int n = 0, rc = KB_OK;
    size_t es = (size_t)p->esize;
    for (int b = 0; b < p->n_blocks; b++)
        n += via[b] == 2;
    g->count = n;
    g->m = calloc((size_t)n + 1, sizeof(int));
    g->n = calloc((size_t)n + 1, sizeof(int));
    g->k = calloc((size_t)n + 1, sizeof(int));
    g->group_size = calloc((size_t)n + 1, sizeof(int));
    g->alpha = calloc((size_t)n + 1, sizeof(double));
    g->beta = calloc((size_t)n + 1, sizeof(double));
    g->hA = calloc((size_t)n + 1, sizeof(void *));
    g->hB = calloc((size_t)n + 1, sizeof(void *));
    g->hC = calloc((size_t)n + 1, sizeof(void *));
    g->copy_off = calloc((size_t)n + 1, sizeof(int64_t));
    g->copy_len = calloc((size_t)n + 1, sizeof(int64_t));
    if (!g->m || !g->n || !g->k || !g->group_size || !g->alpha || !g->beta || !g->hA || !g->hB ||
        !g->hC || !g->copy_off || !g->copy_len) {
        kb_msgf(msg, "out of host memory planning the GEMMs");
        return KB_NOMEM;
    }
    for (int b = 0, i = 0; b < p->n_blocks; b++) {
        const pm_block *bl = &p->blocks[b];
        if (via[b] != 2)
            continue;
        g->m[i] = (int)bl->n;
        g->n[i] = bl->rows;
        g->k[i] = bl->cols;
        g->group_size[i] = 1;
        g->alpha[i] = p->alpha;
        g->beta[i] = p->beta;
        g->hA[i] = (char *)s->d_ws + (size_t)ws_off[b] * es;
        g->hB[i] = (char *)s->d_u + (size_t)bl->u_off * es;
        g->hC[i] = (char *)s->d_out + (size_t)bl->dst_off * es;
        g->copy_off[i] = bl->dst_off;
        g->copy_len[i] = bl->n * bl->rows;
        i++;
    }
    rc = upload((void **)&g->dA, g->hA, (size_t)n * sizeof(void *), msg);
    if (rc == KB_OK)
        rc = upload((void **)&g->dB, g->hB, (size_t)n * sizeof(void *), msg);
    if (rc == KB_OK)
        rc = upload((void **)&g->dC, g->hC, (size_t)n * sizeof(void *), msg);
    if (rc != KB_OK || n == 0)
        return rc;
    if (cublasCreate(&s->blas) != CUBLAS_STATUS_SUCCESS) {
        s->blas = NULL;
        kb_msgf(msg, "cublasCreate failed");
        return KB_ERROR;
    }
    /* A workspace of its own keeps cuBLAS from allocating during graph capture. */
    size_t wsb = 32u << 20;
    KB_CUDA_TRY(cudaMalloc(&s->d_blas_ws, wsb), msg);
    if (cublasSetWorkspace(s->blas, s->d_blas_ws, wsb) != CUBLAS_STATUS_SUCCESS ||
        cublasSetMathMode(s->blas, CUBLAS_DEFAULT_MATH) != CUBLAS_STATUS_SUCCESS) {
        kb_msgf(msg, "cublasSetWorkspace/SetMathMode failed");
        return KB_ERROR;
    }
    s->launches += (g->loop ? n : 1) + (p->beta != 0.0 ? n : 0);
    for (int b = 0; b < p->n_blocks; b++)
        if (via[b] == 2)
            s->predicted_ns += pm_gemm_cost(p, &p->blocks[b]);
    s->predicted_ns += PM_LAUNCH_NS;
    return KB_OK;
}

/* Plans the fused launch of the blocks with via[b] == 3 (none: no launch). */
static int plan_fused(state *s, const unsigned char *via, char *msg)
{
    int rc = pm_plan_fused(s->prob, via, &s->fp, msg);
    const int f32 = s->prob->esize == 4;
    /* auto: the DMMA product (v8; run 23, large_u at beta 0: float64 22.5 against fused's
     * 39.5 µs, float32 through the ring 16.2 against fused_async's 18.5). */
    s->fp.fill = s->variant == V_FUSED_MMA || s->variant == V_AUTO ? PM_FUSED_FILL_MMA
                 : s->variant == V_FUSED_ASYNC                     ? PM_FUSED_FILL_ASYNC
                                                                   : PM_FUSED_FILL_REGS;
    if (s->fp.fill == PM_FUSED_FILL_MMA && f32 && s->mma_ring)
        s->fp.fill = PM_FUSED_FILL_RING;
    s->fp.ctas = s->mma_ctas;
    s->fp.ring = s->mma_ring;
    if (rc != KB_OK || s->fp.items == 0)
        return rc;
    const size_t cols = (size_t)s->fp.items * PM_FUSED_BN; /* the per-tile tables */
    rc = upload((void **)&s->d_fgather, s->fp.igather, cols * sizeof(pm_fused_gather), msg);
    if (rc == KB_OK)
        rc = upload((void **)&s->d_fdcol, s->fp.idcol, cols * sizeof(int32_t), msg);
    if (rc == KB_OK)
        rc = upload((void **)&s->d_fitem, s->fp.item, (size_t)s->fp.items * sizeof(pm_fused_item),
                    msg);
    s->launches++;
    s->predicted_ns += s->fp.predicted_ns;
    return rc;
}

/* The tiled plan's options (pm_plan_tiles_direct) from tile_direct and tile_split. */
static int plan_opts(const state *s)
{
    return (s->direct ? PM_PLAN_DIRECT : 0) | (s->split ? PM_PLAN_SPLIT : 0);
}

/* Plans the tiled launch, and for gemm/fused/auto the blocks that go through extract + GEMM
 * or the fused kernel. */
static int plan_device(state *s, int len_log, char *msg)
{
    const pm_problem *p = s->prob;
    unsigned char *via = NULL, *tvia = NULL; /* tvia: via without the fused blocks */
    int64_t *ws_off = NULL, ws = 0;
    int rc = KB_OK;
    if (s->variant == V_PER_ELEMENT) {
        for (int i = 0; i < 2; i++) {
            rc = pm_plan_elems(p, i, &s->ep[i], msg);
            if (rc != KB_OK)
                return rc;
            rc = upload((void **)&s->d_eblk[i], s->ep[i].blk,
                        (size_t)s->ep[i].n_blocks * sizeof(pm_elem_block), msg);
            if (rc == KB_OK)
                rc = upload((void **)&s->d_ebegin[i], s->ep[i].begin,
                            ((size_t)s->ep[i].n_blocks + 1) * sizeof(int32_t), msg);
            if (rc == KB_OK)
                rc = upload((void **)&s->d_eowner[i], s->ep[i].owner,
                            (size_t)s->ep[i].begin[s->ep[i].n_blocks] * sizeof(int32_t), msg);
            if (rc != KB_OK)
                return rc;
            s->launches += s->ep[i].n_blocks > 0;
        }
        return KB_OK;
    }
    via = calloc((size_t)p->n_blocks + 1, 1);
    tvia = calloc((size_t)p->n_blocks + 1, 1);
    ws_off = calloc((size_t)p->n_blocks + 1, sizeof *ws_off);
    if (!via || !tvia || !ws_off) {
        kb_msgf(msg, "out of host memory");
        rc = KB_NOMEM;
        goto done;
    }
    for (int b = 0; b < p->n_blocks; b++)
        via[b] = 1;
    if (s->variant == V_GEMM || s->variant == V_FUSED || s->variant == V_FUSED_ASYNC ||
        s->variant == V_FUSED_MMA) {
        for (int b = 0; b < p->n_blocks; b++)
            via[b] = pm_is_unique(&p->blocks[b]) ? 1 : s->variant == V_GEMM ? 2 : 3;
    } else if (s->variant == V_AUTO) {
        /* Per block, the cheapest path at the all-tiled plan's tile length; then the whole
         * choice against all-tiled, as the fused launch, the GEMM call and its copies cost
         * launches of their own. */
        pm_tile_plan all;
        double other = 0.0;
        int any_gemm = 0, any_fused = 0;
        rc = pm_plan_tiles_direct(p, NULL, NULL, len_log, plan_opts(s), &all, msg);
        if (rc != KB_OK)
            goto done;
        for (int b = 0; b < p->n_blocks; b++) {
            via[b] = (unsigned char)pm_choose_path(p, &p->blocks[b], all.len_log);
            any_gemm |= via[b] == 2;
            any_fused |= via[b] == 3;
        }
        if (any_gemm || any_fused) {
            pm_tile_plan mixed;
            for (int b = 0; b < p->n_blocks; b++)
                other += via[b] == 2   ? pm_gemm_cost(p, &p->blocks[b])
                         : via[b] == 3 ? pm_fused_cost(p, &p->blocks[b])
                                       : 0.0;
            other += PM_LAUNCH_NS * (any_fused + any_gemm * (1 + (p->beta != 0.0)));
            for (int b = 0; b < p->n_blocks; b++)
                tvia[b] = via[b] == 3 ? 0 : via[b];
            rc = pm_plan_tiles_direct(p, tvia, ws_off, len_log, plan_opts(s), &mixed,
                                      msg); /* ws_off unused yet */
            if (rc != KB_OK) {
                pm_tile_plan_free(&all);
                goto done;
            }
            if (mixed.predicted_ns + other >= all.predicted_ns)
                for (int b = 0; b < p->n_blocks; b++)
                    via[b] = 1;
            pm_tile_plan_free(&mixed);
        }
        pm_tile_plan_free(&all);
    }
    for (int b = 0; b < p->n_blocks; b++)
        if (via[b] == 2) {
            ws_off[b] = ws;
            ws += p->blocks[b].n * p->blocks[b].cols;
        }
    if (ws)
        KB_CUDA_GOTO(cudaMalloc(&s->d_ws, (size_t)ws * (size_t)p->esize), msg, done);
    for (int b = 0; b < p->n_blocks; b++)
        tvia[b] = via[b] == 3 ? 0 : via[b];
    rc = pm_plan_tiles_direct(p, tvia, ws_off, len_log, plan_opts(s), &s->tp, msg);
    if (rc != KB_OK)
        goto done;
    if (s->lean != 4)
        s->tp.lean_vec = 0;
    if (s->lean == 2)
        s->tp.lean_per = 0;
    s->predicted_ns = s->tp.predicted_ns;
    s->launches = s->tp.split ? 2 : s->tp.tiles + s->tp.lean_tiles > 0;
    rc =
        upload((void **)&s->d_tblk, s->tp.blk, (size_t)s->tp.n_blocks * sizeof(pm_tile_block), msg);
    if (rc == KB_OK)
        rc = upload((void **)&s->d_tgen, s->tp.gen, (size_t)s->tp.tiles * sizeof(pm_gen_tile), msg);
    if (rc == KB_OK)
        rc = upload((void **)&s->d_tlean, s->tp.lean,
                    (size_t)s->tp.lean_tiles * sizeof(pm_lean_tile), msg);
    if (rc == KB_OK)
        rc = plan_fused(s, via, msg);
    if (rc == KB_OK && ws)
        rc = plan_gemm(s, via, ws_off, msg);
done:
    free(via);
    free(tvia);
    free(ws_off);
    return rc;
}

/* The knobs of a case.  Which variants each applies to is the descriptor's knob_variants: the
 * harness refuses a profile that sets one away from its default for any other variant. */
typedef struct knobs {
    int64_t tile_len, lean, tile_direct, tile_split, mma_ctas, mma_ring;
    const char *gemm_call;
} knobs;

/* Reads the knobs; KB_BAD_PARAM, naming the knob and the values it takes, for any other. */
static int read_knobs(const kb_case *c, knobs *k, char *msg)
{
    static const struct {
        const char *name;
        size_t at;
        int n;
        int64_t takes[5];
    } ints[] = {
        {"tile_len", offsetof(knobs, tile_len), 5, {0, 32, 64, 128, 256}},
        {"lean", offsetof(knobs, lean), 3, {2, 3, 4}},
        {"tile_direct", offsetof(knobs, tile_direct), 2, {0, 1}},
        {"tile_split", offsetof(knobs, tile_split), 3, {0, 1, 2}},
        {"mma_ctas", offsetof(knobs, mma_ctas), 2, {3, 4}},
        {"mma_ring", offsetof(knobs, mma_ring), 3, {0, 2, 3}},
    };
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        int64_t *v = (int64_t *)((char *)k + ints[i].at);
        int ok = 0, at = 0;
        char takes[64] = "";
        if (c->host->param_int(c->params, ints[i].name, v) != KB_OK) {
            kb_msgf(msg, "parameter %s missing", ints[i].name);
            return KB_BAD_PARAM;
        }
        for (int j = 0; j < ints[i].n; j++) {
            ok |= *v == ints[i].takes[j];
            at += snprintf(takes + at, sizeof takes - (size_t)at, "%s%lld",
                           j == 0              ? ""
                           : j + 1 < ints[i].n ? ", "
                                               : " or ",
                           (long long)ints[i].takes[j]);
        }
        if (!ok) {
            kb_msgf(msg, "%s = %lld: expected %s", ints[i].name, (long long)*v, takes);
            return KB_BAD_PARAM;
        }
    }
    if (c->host->param_string(c->params, "gemm_call", &k->gemm_call) != KB_OK) {
        kb_msgf(msg, "parameter gemm_call missing");
        return KB_BAD_PARAM;
    }
    return KB_OK;
}

/* A device variant's buffers (the problem's inputs copied over, the output poisoned), its
 * own stream, and its plan at tile length tile_len (0: the cost model's). */
static int init_device(state *s, int64_t tile_len, char *msg)
{
    const pm_problem *p = s->prob;
    size_t es = (size_t)p->esize, dst_bytes = (size_t)p->dst_elems * es;
    int rc;
    KB_CUDA_TRY(cudaMalloc(&s->d_src, (size_t)p->src_elems * es + 1), msg);
    KB_CUDA_TRY(cudaMalloc(&s->d_cin, dst_bytes + 1), msg);
    KB_CUDA_TRY(cudaMalloc(&s->d_u, (size_t)p->u_elems * es + 1), msg);
    KB_CUDA_TRY(cudaMalloc(&s->d_out, dst_bytes + 1), msg);
    KB_CUDA_TRY(cudaMemcpy(s->d_src, p->src, (size_t)p->src_elems * es, cudaMemcpyHostToDevice),
                msg);
    KB_CUDA_TRY(cudaMemcpy(s->d_cin, p->cin, dst_bytes, cudaMemcpyHostToDevice), msg);
    KB_CUDA_TRY(cudaMemcpy(s->d_u, p->u, (size_t)p->u_elems * es, cudaMemcpyHostToDevice), msg);
    KB_CUDA_TRY(cudaMemset(s->d_out, 0xff, dst_bytes), msg);
    KB_CUDA_TRY(cudaStreamCreateWithFlags(&s->own, cudaStreamNonBlocking), msg);
    if (s->variant == V_COPY) {
        s->launches = 1;
        s->predicted_ns = 2.0 * (double)dst_bytes / 4180.0 + PM_LAUNCH_NS;
    } else {
        int len_log = tile_len == 0     ? -1
                      : tile_len == 32  ? 0
                      : tile_len == 64  ? 1
                      : tile_len == 128 ? 2
                                        : 3;
        rc = plan_device(s, len_log, msg);
        if (rc != KB_OK)
            return rc;
        if (s->fork && s->tp.split) {
            KB_CUDA_TRY(cudaStreamCreateWithFlags(&s->side, cudaStreamNonBlocking), msg);
            KB_CUDA_TRY(cudaEventCreateWithFlags(&s->ev_fork, cudaEventDisableTiming), msg);
            KB_CUDA_TRY(cudaEventCreateWithFlags(&s->ev_join, cudaEventDisableTiming), msg);
        }
    }
    KB_CUDA_TRY(cudaDeviceSynchronize(), msg);
    return KB_OK;
}

/* The plan's figures, as declared metrics of the case. */
static void report_plan(state *s)
{
    report(s, "predicted_us", s->predicted_ns * 1e-3, 0.0, "us");
    report(s, "tiles", (double)(s->tp.tiles + s->tp.lean_tiles), 0.0, "1");
    report(s, "launches", (double)s->launches, 0.0, "1");
    report(s, "gemm_blocks", (double)s->gp.count, 0.0, "1");
    report(s, "fused_blocks", (double)s->fp.n_blocks, 0.0, "1");
    /* The tiled launch's blocks less the GEMM's extracts (per_element: none). */
    report(s, "tiled_blocks", (double)(s->tp.n_blocks - s->gp.count), 0.0, "1");
    report(s, "fused_tiles", (double)s->fp.items, 0.0, "1");
}

static int init(const kb_case *c, void **out, char *msg)
{
    state *s;
    knobs k;
    size_t dst_bytes;
    int rc = read_knobs(c, &k, msg);
    *out = NULL;
    if (rc != KB_OK)
        return rc;
    s = calloc(1, sizeof *s);
    if (!s) {
        kb_msgf(msg, "out of host memory");
        return KB_NOMEM;
    }
    s->variant = c->variant;
    s->host = c->host;
    s->gp.loop = strcmp(k.gemm_call, "loop") == 0;
    s->lean = (int)k.lean;
    s->direct = (int)k.tile_direct;
    s->mma_ctas = (int)k.mma_ctas;
    s->mma_ring = (int)k.mma_ring;
    /* v6's plan for tiled and auto only: gemm and fused keep theirs (their tiled launch holds
     * extracts and unique blocks, which run 10 did not measure against a split). */
    s->split = k.tile_split != 0 && (c->variant == V_TILED || c->variant == V_AUTO);
    s->fork = s->split && k.tile_split == 2;
    if (c->struct_size >= offsetof(kb_case, handle) + sizeof c->handle) {
        s->handle = c->handle;
        s->prob = c->shared;
    }
    if (!s->prob) {
        rc = make_problem(c->host, c->params, c->seed, &s->prob, msg);
        if (rc != KB_OK)
            goto fail;
        s->own_prob = 1;
    }
    /* The host variant's output, or a device variant's readback. */
    dst_bytes = (size_t)s->prob->dst_elems * (size_t)s->prob->esize;
    s->h_out = malloc(dst_bytes ? dst_bytes : 1);
    if (!s->h_out) {
        kb_msgf(msg, "out of host memory for the output");
        rc = KB_NOMEM;
        goto fail;
    }
    if (variants[c->variant].target == KB_HOST) {
        memset(s->h_out, 0xff, dst_bytes); /* NaN: an unwritten element fails */
    } else {
        rc = init_device(s, k.tile_len, msg);
        if (rc != KB_OK)
            goto fail;
        report_plan(s);
    }
    *out = s;
    return KB_OK;
fail:
    teardown(s, NULL);
    return rc;
}

/* ---- counts / run ---------------------------------------------------------------------------- */

static int counts(void *p, kb_counts *k, char *msg)
{
    state *s = p;
    const pm_problem *pr = s->prob;
    double es = pr->esize, u = 0.0, flops = 0.0;
    (void)msg;
    for (int b = 0; b < pr->n_blocks; b++) {
        const pm_block *bl = &pr->blocks[b];
        if (!pm_is_unique(bl)) {
            u += (double)bl->rows * bl->cols;
            flops += 2.0 * (double)bl->n * bl->rows * bl->cols;
        }
    }
    if (s->variant == V_COPY) {
        k->bytes = 2.0 * es * (double)pr->dst_elems;
        k->flops = 0.0;
    } else {
        /* Source read once, destination written once (and read when beta != 0), U read. */
        k->bytes =
            es * ((double)pr->src_elems + (double)pr->dst_elems * (pr->beta != 0 ? 2 : 1) + u);
        k->flops = flops;
    }
    k->items = (double)pr->dst_elems;
    k->item_unit = "elements";
    k->max_batch = 0;
    k->run_flags = 0; /* capturable: nothing on the host changes from run to run */
    return KB_OK;
}

static int run_on(state *s, cudaStream_t st, void *out, char *msg)
{
    const pm_problem *p = s->prob;
    switch (s->variant) {
    case V_COPY:
        KB_CUDA_TRY(cudaMemcpyAsync(out, s->d_cin, (size_t)p->dst_elems * p->esize,
                                    cudaMemcpyDeviceToDevice, st),
                    msg);
        return KB_OK;
    case V_PER_ELEMENT:
        for (int i = 0; i < 2; i++)
            KB_CUDA_TRY((cudaError_t)pm_run_per_element(
                            p->esize, i, &s->ep[i], s->d_eblk[i], s->d_ebegin[i], s->d_eowner[i],
                            s->d_src, s->d_cin, s->d_u, out, p->alpha, p->beta, st),
                        msg);
        return KB_OK;
    default: {
        int blas = 0, e;
        if (s->side) { /* tile_split = 2: the general launch beside the lean-only one */
            pm_tile_plan g = s->tp, l = s->tp;
            g.lean_tiles = 0;
            l.tiles = 0;
            KB_CUDA_TRY(cudaEventRecord(s->ev_fork, st), msg);
            KB_CUDA_TRY(cudaStreamWaitEvent(s->side, s->ev_fork, 0), msg);
            KB_CUDA_TRY((cudaError_t)pm_run_tiled(p->esize, &g, s->d_tblk, s->d_tgen, s->d_tlean,
                                                  s->d_src, s->d_cin, s->d_u, out, s->d_ws,
                                                  p->alpha, p->beta, s->side),
                        msg);
            KB_CUDA_TRY(cudaEventRecord(s->ev_join, s->side), msg);
            KB_CUDA_TRY((cudaError_t)pm_run_tiled(p->esize, &l, s->d_tblk, s->d_tgen, s->d_tlean,
                                                  s->d_src, s->d_cin, s->d_u, out, s->d_ws,
                                                  p->alpha, p->beta, st),
                        msg);
            KB_CUDA_TRY(cudaStreamWaitEvent(st, s->ev_join, 0), msg);
        } else {
            KB_CUDA_TRY((cudaError_t)pm_run_tiled(p->esize, &s->tp, s->d_tblk, s->d_tgen,
                                                  s->d_tlean, s->d_src, s->d_cin, s->d_u, out,
                                                  s->d_ws, p->alpha, p->beta, st),
                        msg);
        }
        KB_CUDA_TRY((cudaError_t)pm_run_fused(p->esize, &s->fp, s->d_fgather, s->d_fdcol,
                                              s->d_fitem, s->d_src, s->d_cin, s->d_u, out, p->alpha,
                                              p->beta, st),
                    msg);
        if (s->gp.count == 0)
            return KB_OK;
        e = pm_run_gemm(p->esize, s->blas, &s->gp, s->d_cin, out, st, &blas);
        if (e == -1) {
            kb_msgf(msg, "cublas{S,D}gemmGroupedBatched failed: cuBLAS status %d", blas);
            return KB_ERROR;
        }
        KB_CUDA_TRY((cudaError_t)e, msg);
        return KB_OK;
    }
    }
}

static int run(void *p, void *stream, char *msg)
{
    state *s = p;
    if (s->variant == V_HOST) {
        pm_host_apply(s->prob, s->h_out);
        return KB_OK;
    }
    return run_on(s, (cudaStream_t)stream, s->d_out, msg);
}

/* ---- verify and self-timing ------------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Microseconds per call of this variant's run (copy: a memcpy of the destination's bytes into
 * a scratch buffer, so the output stays verified) as the GPU sees back-to-back calls: a CUDA
 * graph of `reps` calls replayed 5 times, median and standard error. */
static int self_time(state *s, int copy, double *us, double *se, char *msg)
{
    const pm_problem *p = s->prob;
    size_t bytes = (size_t)p->dst_elems * p->esize;
    cudaGraph_t g = NULL;
    cudaGraphExec_t x = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    double t[5], mean = 0.0, var = 0.0;
    float ms;
    int rc = KB_OK, reps;
    if (!s->d_scratch)
        KB_CUDA_GOTO(cudaMalloc(&s->d_scratch, bytes + 1), msg, fail);
    KB_CUDA_GOTO(cudaEventCreate(&e0), msg, fail);
    KB_CUDA_GOTO(cudaEventCreate(&e1), msg, fail);
    /* One call, to size the graph to about 2 ms. */
    KB_CUDA_GOTO(cudaEventRecord(e0, s->own), msg, fail);
    if (copy)
        KB_CUDA_GOTO(
            cudaMemcpyAsync(s->d_scratch, s->d_cin, bytes, cudaMemcpyDeviceToDevice, s->own), msg,
            fail);
    else if ((rc = run_on(s, s->own, s->d_scratch, msg)) != KB_OK)
        goto fail;
    KB_CUDA_GOTO(cudaEventRecord(e1, s->own), msg, fail);
    KB_CUDA_GOTO(cudaEventSynchronize(e1), msg, fail);
    KB_CUDA_GOTO(cudaEventElapsedTime(&ms, e0, e1), msg, fail);
    reps = (int)(2.0 / (ms > 1e-3 ? ms : 1e-3));
    reps = reps < 1 ? 1 : reps > 200 ? 200 : reps;
    KB_CUDA_GOTO(cudaStreamBeginCapture(s->own, cudaStreamCaptureModeThreadLocal), msg, fail);
    for (int i = 0; i < reps && rc == KB_OK; i++) {
        if (copy) {
            cudaError_t e =
                cudaMemcpyAsync(s->d_scratch, s->d_cin, bytes, cudaMemcpyDeviceToDevice, s->own);
            if (e != cudaSuccess)
                rc = kb_cuda_fail(e, "cudaMemcpyAsync (capture)", __FILE__, __LINE__, msg);
        } else {
            rc = run_on(s, s->own, s->d_scratch, msg);
        }
    }
    {
        cudaError_t e = cudaStreamEndCapture(s->own, &g);
        if (rc != KB_OK)
            goto fail;
        KB_CUDA_GOTO(e, msg, fail);
    }
    KB_CUDA_GOTO(cudaGraphInstantiate(&x, g, 0), msg, fail);
    KB_CUDA_GOTO(cudaGraphLaunch(x, s->own), msg, fail); /* warm-up */
    for (int i = 0; i < 5; i++) {
        KB_CUDA_GOTO(cudaEventRecord(e0, s->own), msg, fail);
        KB_CUDA_GOTO(cudaGraphLaunch(x, s->own), msg, fail);
        KB_CUDA_GOTO(cudaEventRecord(e1, s->own), msg, fail);
        KB_CUDA_GOTO(cudaEventSynchronize(e1), msg, fail);
        KB_CUDA_GOTO(cudaEventElapsedTime(&ms, e0, e1), msg, fail);
        t[i] = 1e3 * ms / reps;
        mean += t[i] / 5;
    }
    for (int i = 0; i < 5; i++)
        var += (t[i] - mean) * (t[i] - mean) / 4;
    qsort(t, 5, sizeof t[0], cmp_double);
    *us = t[2];
    *se = sqrt(var / 5);
fail:
    if (x)
        cudaGraphExecDestroy(x);
    if (g)
        cudaGraphDestroy(g);
    if (e0)
        cudaEventDestroy(e0);
    if (e1)
        cudaEventDestroy(e1);
    return rc;
}

static int verify(void *p, kb_verdict *v, char *msg)
{
    state *s = p;
    const pm_problem *pr = s->prob;
    size_t bytes = (size_t)pr->dst_elems * pr->esize;
    int64_t bad = 0;
    if (s->variant != V_HOST)
        KB_CUDA_TRY(cudaMemcpy(s->h_out, s->d_out, bytes, cudaMemcpyDeviceToHost), msg);
    if (s->variant == V_COPY) {
        /* The roof copies cin: it must arrive bit for bit. */
        const unsigned char *a = s->h_out, *b = pr->cin;
        for (size_t i = 0; i < bytes; i++)
            bad += a[i] != b[i];
        v->metric = "mismatched_bytes";
        v->error = (double)bad;
        v->tolerance = 0.0;
        v->passed = bad == 0;
    } else {
        v->metric = "max_err/bound";
        v->error = pm_check(pr, s->h_out, &bad);
        v->tolerance = 1.0;
        v->passed = v->error <= 1.0;
        if (!v->passed)
            kb_msgf(msg, "%lld of %lld elements off by more than their bound (worst %.3g x)",
                    (long long)bad, (long long)pr->dst_elems, v->error);
    }
    return KB_OK;
}

/* ABI 1.4: the self-timing, once per case after its last verify: self_us and copy_ratio.
 * Where it cannot be made (a call that cannot be captured) the case keeps its timing and
 * verdict and the record says why (KB_SKIP); the host variant has none. */
static int instrument(void *p, void *stream, char *msg)
{
    state *s = p;
    double us, se, cus, cse;
    (void)stream; /* graphs are captured on the plugin's own stream */
    if (s->variant == V_HOST)
        return KB_OK;
    if (self_time(s, 0, &us, &se, msg) != KB_OK || self_time(s, 1, &cus, &cse, msg) != KB_OK) {
        (void)cudaGetLastError();
        return KB_SKIP;
    }
    report(s, "self_us", us, se, "us");
    report(s, "copy_ratio", us / cus, us / cus * hypot(se / us, cse / cus), "1");
    return KB_OK;
}

static const kb_plugin plugin = {
    .abi_version = KB_ABI_CURRENT,
    .struct_size = sizeof(kb_plugin),
    .name = "permute",
    .description =
        "block-sparse tensor permutation with recoupling: per-element, tiled, fused, GEMM, copy",
    .variants = variants,
    .n_variants = V_COUNT,
    .params = params,
    .n_params = sizeof params / sizeof params[0],
    .init = init,
    .counts = counts,
    .run = run,
    .verify = verify,
    .instrument = instrument,
    .teardown = teardown,
    .prepare = prepare,
    .release = release,
    .metrics = metrics,
    .n_metrics = sizeof metrics / sizeof metrics[0],
    .size_param = "preset",
    .knobs = "gemm_call|tile_len|lean|tile_direct|mma_ctas|mma_ring|tile_split",
    .implicit = "dims|perm|n_blocks|rank|dmin|dmax|rows_min|rows_max|cols_min|cols_max",
    .knob_variants = "tile_len=tiled|gemm|auto|fused|fused_async|fused_mma;"
                     "lean=tiled|gemm|auto|fused|fused_async|fused_mma;"
                     "tile_direct=tiled|auto;tile_split=tiled|auto;mma_ctas=fused_mma|auto;"
                     "mma_ring=fused_mma|auto;gemm_call=gemm|auto",
};

KB_EXPORT const kb_plugin *kb_plugin_entry(void)
{
    return &plugin;
}
