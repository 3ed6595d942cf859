/* sgemm plugin: fp32 GEMM, the optimisation ladder (docs/design.md, "The workloads").
 *
 * Column-major C = alpha*A*B + beta*C0 (nn); A is MxK, B is KxN, C0 and C are MxN, every
 * leading dimension the row count.  Each run reads the pristine C0 and writes C (see
 * kernels/kernels.h for why), so any number of runs leaves the same, verifiable C.  The device
 * variants are the kernels in kernels/NN_<variant>.cu plus cuBLAS as the baseline; `host` is a
 * blocked CPU loop for small sizes.  Verification is against a double-precision reference by
 * the relative Frobenius error, held to 16*sqrt(K)*2^-24 (see sgemm_tolerance).
 *
 * The inputs and the device reference (cublasDgemm on the upcast inputs) are made once per
 * shape by prepare (ABI 1.1) and shared, read-only, by every variant's init at that point.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "kbench/cuda_check.h"
#include "kbench/plugin.h"
#include "kernels/kernels.h"
#include "sgemm.h"

/* ---- variants ------------------------------------------------------------------------------ */

enum {
    V_NAIVE,
    V_COALESCED,
    V_SMEM_TILED,
    V_REG_1D,
    V_REG_2D,
    V_VECTORIZED,
    V_CP_ASYNC,
    V_SWIZZLED,
    V_WIDE_EPILOGUE,
    V_WARPTILE,
    V_CUBLAS,
    V_TF32X3,
    V_HOST,
    V_COUNT
};

static const kb_variant sgemm_variants[V_COUNT] = {
    {"naive", "01: a thread per element of C, lanes along N (uncoalesced)", KB_DEVICE, 0},
    {"coalesced", "02: a thread per element of C, lanes along M (coalesced)", KB_DEVICE, 0},
    {"smem_tiled", "03: 32x32 tiles of A and B staged in shared memory", KB_DEVICE, 0},
    {"reg_1d", "04: 8 outputs per thread along N (1-D register tile)", KB_DEVICE, 0},
    {"reg_2d", "05: 8x8 outer product per thread, 128x128x8 CTA tile", KB_DEVICE, 0},
    {"vectorized", "06: 128-bit global loads, B tile transposed in SMEM, 128-bit LDS", KB_DEVICE,
     0},
    {"cp_async", "07: 3-stage cp.async ring, register double buffering, 128x128x16", KB_DEVICE, 0},
    {"swizzled", "08: XOR-swizzled SMEM tiles, no bank conflicts", KB_DEVICE, 0},
    {"wide_epilogue", "09: permuted thread-value layout, 128-bit coalesced epilogue", KB_DEVICE, 0},
    {"warptile", "10: warp tiling, autotuned: the fastest CUDA-core variant", KB_DEVICE, 0},
    {"cublas", "cuBLAS(Lt) FP32 GEMM, CUBLAS_COMPUTE_32F (no TF32): the baseline", KB_DEVICE,
     KB_VARIANT_BASELINE},
    {"tf32x3", "11: 3xTF32 on tensor cores, fp32-level accuracy", KB_DEVICE, 0},
    {"host", "blocked C loop on the CPU (small sizes)", KB_HOST, 0},
};

typedef cudaError_t (*sgemm_launcher)(int M, int N, int K, float alpha, const float *A, int lda,
                                      const float *B, int ldb, float beta, const float *C0,
                                      float *C, int ldc, cudaStream_t stream);

static const sgemm_launcher sgemm_launchers[V_COUNT] = {
    [V_NAIVE] = run_naive,
    [V_COALESCED] = run_coalesced,
    [V_SMEM_TILED] = run_smem_tiled,
    [V_REG_1D] = run_reg_1d,
    [V_REG_2D] = run_reg_2d,
    [V_VECTORIZED] = run_vectorized,
    [V_CP_ASYNC] = run_cp_async,
    [V_SWIZZLED] = run_swizzled,
    [V_WIDE_EPILOGUE] = run_wide_epilogue,
    [V_WARPTILE] = run_warptile,
    [V_TF32X3] = run_tf32x3,
};

static const kb_param sgemm_params[] = {
    {"shape", KB_PARAM_DIMS, "1024x1024x1024", "MxNxK of C(MxN) = alpha*A(MxK)*B(KxN) + beta*C",
     "3"},
    {"alpha", KB_PARAM_FLOAT, "1.0", "scale of A*B", NULL},
    {"beta", KB_PARAM_FLOAT, "0.5", "scale of the C input (0: C input not read)", NULL},
    {"config", KB_PARAM_INT, "-1",
     "warptile, tf32x3: configuration index to run (-1: time them all at init and take the "
     "fastest for the shape; names in plugins/sgemm/HISTORY-fast.md); other variants skip cases "
     "with config != -1",
     NULL},
};

/* Largest problem the host variant takes (M*N*K): about a second per run on one core. */
#define SGEMM_HOST_MAX_WORK (1ull << 32)
/* The hand-written kernels put one of M, N (in tiles of >= 32) on gridDim.y, capped at 65535. */
#define SGEMM_MAX_GRID_DIM (65535ll * 32)
/* cuBLASLt workspace: the size cuBLAS recommends for Hopper. */
#define SGEMM_LT_WORKSPACE (32u << 20)
/* Tolerance constant c in c*sqrt(K)*2^-24; see sgemm_tolerance. */
#define SGEMM_TOL_C 16.0

/* ---- state ------------------------------------------------------------------------------- */

/* What prepare makes once per parameter point, shared read-only by every variant there: the
 * seeded inputs on the host and, when the point runs on a device, on the device with the
 * double-precision reference. */
typedef struct sgemm_point {
    int M, N, K;
    float alpha, beta;
    float *hA, *hB, *hC0;
    float *dA, *dB, *dC0; /* NULL without a device */
    double *dRef;         /* cublasDgemm on the upcast inputs */
} sgemm_point;

typedef struct sgemm_state {
    int variant;
    int config; /* warptile, tf32x3: forced configuration, or -1 (tuned per shape) */
    int M, N, K;
    float alpha, beta;

    /* The point's inputs (owned by the sgemm_point). */
    const float *hA, *hB, *hC0;
    const float *dA, *dB, *dC0;
    const double *dRef;

    float *hC;    /* host variant: its output */
    double *hRef; /* host variant: the reference, computed at the first verify */

    float *dC;
    double *dSums; /* the two sums of the error figure */
    cublasHandle_t blas;

    /* cublas variant: cuBLASLt, because cublasSgemm only works in place (C == C0) and this
     * plugin's runs are out of place; same library, same FP32 compute type. */
    cublasLtHandle_t lt;
    cublasLtMatmulDesc_t lt_op;
    cublasLtMatrixLayout_t lt_a, lt_b, lt_c;
    cublasLtMatmulAlgo_t lt_algo;
    void *lt_workspace;
    size_t lt_workspace_size;
} sgemm_state;

/* ---- helpers ----------------------------------------------------------------------------- */

/* A cuBLAS status as a kbench status: KB_OK, or KB_CUDA_ERROR with the call named in msg
 * (KB_NOMEM when cuBLAS could not allocate). */
static int blas_status(cublasStatus_t st, const char *call, char *msg)
{
    if (st == CUBLAS_STATUS_SUCCESS)
        return KB_OK;
    kb_msgf(msg, "%s failed: %s (%s)", call, cublasGetStatusName(st), cublasGetStatusString(st));
    return st == CUBLAS_STATUS_ALLOC_FAILED ? KB_NOMEM : KB_CUDA_ERROR;
}

/* splitmix64: a counter-based generator, so element i of a matrix depends only on (seed,
 * matrix, i) and any consumer can regenerate it. */
static uint64_t splitmix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Uniform in [-1, 1) with 24 significant bits (exact in float). */
static void fill_uniform(float *x, size_t n, uint64_t seed, uint64_t stream)
{
    const uint64_t base = splitmix64(seed ^ (0xD1B54A32D192ED03ull * (stream + 1)));
    for (size_t i = 0; i < n; i++)
        x[i] = (float)((double)(splitmix64(base + i) >> 40) * (1.0 / 8388608.0) - 1.0);
}

static float *host_alloc_floats(size_t n, char *msg)
{
    float *p = malloc(n * sizeof(float));
    if (!p)
        kb_msgf(msg, "host allocation of %zu bytes failed", n * sizeof(float));
    return p;
}

/* The bound on the relative Frobenius error.  Recursive fp32 summation of K products of
 * uniform [-1,1) data gives about 0.3*sqrt(K)*2^-24 (simulated on the host for K = 1..8192;
 * the error of each add is ~u times a partial sum of size ~sqrt(k)).  c = 16 leaves the
 * CUDA-core kernels a factor of ~50 and covers tensor-core accumulation that rounds toward zero
 * inside each MMA (3xTF32: modelled at ~3-5*sqrt(K)*2^-24 for K = 4096-8192).  A kernel that
 * drops one K tile of width BK errs by ~sqrt(BK/K) >= 1e-2, three orders of magnitude over. */
static double sgemm_tolerance(int K)
{
    return SGEMM_TOL_C * sqrt((double)K) * ldexp(1.0, -24);
}

static void sgemm_free(sgemm_state *s)
{
    if (!s)
        return;
    if (s->lt_a)
        cublasLtMatrixLayoutDestroy(s->lt_a);
    if (s->lt_b)
        cublasLtMatrixLayoutDestroy(s->lt_b);
    if (s->lt_c)
        cublasLtMatrixLayoutDestroy(s->lt_c);
    if (s->lt_op)
        cublasLtMatmulDescDestroy(s->lt_op);
    if (s->lt)
        cublasLtDestroy(s->lt);
    if (s->blas)
        cublasDestroy(s->blas);
    if (s->variant == V_WARPTILE)
        warptile_release();
    if (s->variant == V_TF32X3)
        tf32x3_release();
    if (s->variant != V_HOST) {
        cudaFree(s->lt_workspace);
        cudaFree(s->dC);
        cudaFree(s->dSums);
    }
    free(s->hC);
    free(s->hRef);
    free(s);
}

/* Descriptors, heuristic and workspace for the cublas variant. */
static int lt_setup(sgemm_state *s, char *msg)
{
    int rc;
    cublasLtMatmulPreference_t pref = NULL;
    cublasLtMatmulHeuristicResult_t result;
    int found = 0;
    uint64_t max_ws = SGEMM_LT_WORKSPACE;

    if ((rc = blas_status(cublasLtCreate(&s->lt), "cublasLtCreate", msg)))
        return rc;
    /* CUBLAS_COMPUTE_32F with fp32 matrices is what cublasSgemm does under
     * CUBLAS_DEFAULT_MATH: fp32 FMA, no TF32 (that would be CUBLAS_COMPUTE_32F_FAST_TF32). */
    if ((rc = blas_status(cublasLtMatmulDescCreate(&s->lt_op, CUBLAS_COMPUTE_32F, CUDA_R_32F),
                          "cublasLtMatmulDescCreate", msg)))
        return rc;
    if ((rc = blas_status(cublasLtMatrixLayoutCreate(&s->lt_a, CUDA_R_32F, s->M, s->K, s->M),
                          "cublasLtMatrixLayoutCreate(A)", msg)) ||
        (rc = blas_status(cublasLtMatrixLayoutCreate(&s->lt_b, CUDA_R_32F, s->K, s->N, s->K),
                          "cublasLtMatrixLayoutCreate(B)", msg)) ||
        (rc = blas_status(cublasLtMatrixLayoutCreate(&s->lt_c, CUDA_R_32F, s->M, s->N, s->M),
                          "cublasLtMatrixLayoutCreate(C)", msg)))
        return rc;
    if ((rc = blas_status(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate",
                          msg)))
        return rc;
    rc = blas_status(cublasLtMatmulPreferenceSetAttribute(
                         pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_ws, sizeof max_ws),
                     "cublasLtMatmulPreferenceSetAttribute", msg);
    if (!rc)
        rc = blas_status(cublasLtMatmulAlgoGetHeuristic(s->lt, s->lt_op, s->lt_a, s->lt_b, s->lt_c,
                                                        s->lt_c, pref, 1, &result, &found),
                         "cublasLtMatmulAlgoGetHeuristic", msg);
    cublasLtMatmulPreferenceDestroy(pref);
    if (rc)
        return rc;
    if (found < 1) {
        kb_msgf(msg, "cuBLASLt offers no FP32 algorithm for %dx%dx%d", s->M, s->N, s->K);
        return KB_SKIP;
    }
    s->lt_algo = result.algo;
    s->lt_workspace_size = result.workspaceSize;
    if (s->lt_workspace_size)
        KB_CUDA_TRY(cudaMalloc(&s->lt_workspace, s->lt_workspace_size), msg);
    return KB_OK;
}

/* A forced configuration of a tuned variant. */
static cudaError_t run_config(const sgemm_state *s, cudaStream_t st)
{
    return (s->variant == V_WARPTILE ? run_warptile_config : run_tf32x3_config)(
        s->config, s->M, s->N, s->K, s->alpha, s->dA, s->M, s->dB, s->K, s->beta, s->dC0, s->dC,
        s->M, st);
}

/* The tuned variants time their configurations on this case's buffers once, untimed, and keep
 * the fastest for the shape; a forced configuration (param config) is launched once instead,
 * to find out whether it runs here.  Either writes C, so the poison goes back on afterwards. */
static int tune(sgemm_state *s, const kb_host *h, char *msg)
{
    const int wt = s->variant == V_WARPTILE;
    const char *vname = sgemm_variants[s->variant].name;
    int config = s->config;
    cudaError_t e;
    if (config >= 0) {
        e = run_config(s, 0);
        if (e == cudaErrorNotSupported) {
            kb_msgf(msg, "%s configuration %d (%s) cannot run on this device", vname, config,
                    (wt ? warptile_config_name : tf32x3_config_name)(config));
            return KB_SKIP;
        }
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(0);
    } else {
        e = (wt ? warptile_tune : tf32x3_tune)(s->M, s->N, s->K, s->alpha, s->dA, s->M, s->dB, s->K,
                                               s->beta, s->dC0, s->dC, s->M, 0, &config);
    }
    if (e != cudaSuccess)
        return kb_cuda_fail(e,
                            s->config >= 0 ? vname
                            : wt           ? "warptile_tune"
                                           : "tf32x3_tune",
                            __FILE__, __LINE__, msg);
    const char *name = (wt ? warptile_config_name : tf32x3_config_name)(config);
    if (h->log)
        h->log("%s: %s configuration %s", vname, s->config >= 0 ? "forced" : "tuned",
               name ? name : "?");
    if (h->metric)
        h->metric("tuned_config", (double)config, NULL);
    KB_CUDA_TRY(cudaMemset(s->dC, 0xFF, (size_t)s->M * s->N * sizeof(float)), msg);
    return KB_OK;
}

/* ---- entry points -------------------------------------------------------------------------- */

/* Reads shape, alpha and beta.  Returns KB_OK or KB_BAD_PARAM with msg set. */
static int read_shape(const kb_host *h, const kb_params *params, int64_t dims[3], double *alpha,
                      double *beta, char *msg)
{
    int64_t d[KB_MAX_DIMS];
    int nd = 0;
    if (h->param_dims(params, "shape", d, &nd) != KB_OK || nd != 3) {
        kb_msgf(msg, "shape: expected MxNxK");
        return KB_BAD_PARAM;
    }
    for (int i = 0; i < 3; i++) {
        if (d[i] < 1 || d[i] > INT_MAX) {
            kb_msgf(msg, "shape: %lldx%lldx%lld: every extent must be in 1..%d", (long long)d[0],
                    (long long)d[1], (long long)d[2], INT_MAX);
            return KB_BAD_PARAM;
        }
        dims[i] = d[i];
    }
    if (h->param_float(params, "alpha", alpha) != KB_OK ||
        h->param_float(params, "beta", beta) != KB_OK) {
        kb_msgf(msg, "alpha and beta must be numbers");
        return KB_BAD_PARAM;
    }
    return KB_OK;
}

static int sgemm_release(void *shared, char *msg)
{
    sgemm_point *pt = shared;
    if (!pt)
        return KB_OK;
    cudaFree(pt->dA);
    cudaFree(pt->dB);
    cudaFree(pt->dC0);
    cudaFree(pt->dRef);
    free(pt->hA);
    free(pt->hB);
    free(pt->hC0);
    free(pt);
    return KB_OK;
}

/* The device inputs and the reference: cublasDgemm on the upcast inputs, on the harness's
 * stream. */
static int point_device(sgemm_point *pt, cudaStream_t st, char *msg)
{
    const size_t nA = (size_t)pt->M * pt->K, nB = (size_t)pt->K * pt->N, nC = (size_t)pt->M * pt->N;
    const double alpha = pt->alpha, beta = pt->beta;
    double *dA = NULL, *dB = NULL;
    cublasHandle_t blas = NULL;
    int rc = KB_OK;

    KB_CUDA_GOTO(cudaMalloc((void **)&pt->dA, nA * sizeof(float)), msg, fail);
    KB_CUDA_GOTO(cudaMalloc((void **)&pt->dB, nB * sizeof(float)), msg, fail);
    KB_CUDA_GOTO(cudaMalloc((void **)&pt->dC0, nC * sizeof(float)), msg, fail);
    KB_CUDA_GOTO(cudaMemcpy(pt->dA, pt->hA, nA * sizeof(float), cudaMemcpyHostToDevice), msg, fail);
    KB_CUDA_GOTO(cudaMemcpy(pt->dB, pt->hB, nB * sizeof(float), cudaMemcpyHostToDevice), msg, fail);
    KB_CUDA_GOTO(cudaMemcpy(pt->dC0, pt->hC0, nC * sizeof(float), cudaMemcpyHostToDevice), msg,
                 fail);
    KB_CUDA_GOTO(cudaMalloc((void **)&pt->dRef, nC * sizeof(double)), msg, fail);
    KB_CUDA_GOTO(cudaMalloc((void **)&dA, nA * sizeof(double)), msg, fail);
    KB_CUDA_GOTO(cudaMalloc((void **)&dB, nB * sizeof(double)), msg, fail);
    KB_CUDA_GOTO(sgemm_upcast(pt->dA, dA, nA, st), msg, fail);
    KB_CUDA_GOTO(sgemm_upcast(pt->dB, dB, nB, st), msg, fail);
    KB_CUDA_GOTO(sgemm_upcast(pt->dC0, pt->dRef, nC, st), msg, fail);
    if ((rc = blas_status(cublasCreate(&blas), "cublasCreate", msg)) ||
        (rc = blas_status(cublasSetStream(blas, st), "cublasSetStream", msg)) ||
        (rc = blas_status(cublasDgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, pt->M, pt->N, pt->K, &alpha,
                                      dA, pt->M, dB, pt->K, &beta, pt->dRef, pt->M),
                          "cublasDgemm", msg)))
        goto fail;
    KB_CUDA_GOTO(cudaStreamSynchronize(st), msg, fail);
fail:
    if (blas)
        cublasDestroy(blas);
    cudaFree(dA);
    cudaFree(dB);
    return rc;
}

/* Once per point (ABI 1.1): the seeded inputs, and on a device the reference. */
static int sgemm_prepare(const kb_point *p, void **shared, char *msg)
{
    int64_t dims[3];
    double alpha = 0.0, beta = 0.0;
    sgemm_point *pt;
    int rc;
    *shared = NULL;
    if ((rc = read_shape(p->host, p->params, dims, &alpha, &beta, msg)) != KB_OK)
        return rc;
    if (!(pt = calloc(1, sizeof *pt))) {
        kb_msgf(msg, "host allocation of %zu bytes failed", sizeof *pt);
        return KB_NOMEM;
    }
    pt->M = (int)dims[0];
    pt->N = (int)dims[1];
    pt->K = (int)dims[2];
    pt->alpha = (float)alpha;
    pt->beta = (float)beta;
    const size_t nA = (size_t)pt->M * pt->K, nB = (size_t)pt->K * pt->N, nC = (size_t)pt->M * pt->N;
    if (!(pt->hA = host_alloc_floats(nA, msg)) || !(pt->hB = host_alloc_floats(nB, msg)) ||
        !(pt->hC0 = host_alloc_floats(nC, msg))) {
        rc = KB_NOMEM;
        goto fail;
    }
    fill_uniform(pt->hA, nA, p->seed, 0);
    fill_uniform(pt->hB, nB, p->seed, 1);
    fill_uniform(pt->hC0, nC, p->seed, 2);
    /* beta == 0 means C is not read (BLAS): a NaN C input makes a variant that reads it anyway
     * fail verification. */
    if (pt->beta == 0.0f)
        memset(pt->hC0, 0xFF, nC * sizeof(float));
    if (p->device >= 0 && (rc = point_device(pt, (cudaStream_t)p->stream, msg)) != KB_OK)
        goto fail;
    *shared = pt;
    return KB_OK;
fail:
    sgemm_release(pt, NULL);
    return rc;
}

static int sgemm_init(const kb_case *c, void **state, char *msg)
{
    const kb_host *h = c->host;
    const sgemm_point *pt = c->shared;
    int64_t dims[3];
    int rc = KB_OK;
    double alpha = 0.0, beta = 0.0;
    int64_t config = -1;
    sgemm_state *s;

    *state = NULL;
    if (c->variant < 0 || c->variant >= V_COUNT) {
        kb_msgf(msg, "variant index %d out of range", c->variant);
        return KB_BAD_PARAM;
    }
    if ((rc = read_shape(h, c->params, dims, &alpha, &beta, msg)) != KB_OK)
        return rc;
    if (h->param_int(c->params, "config", &config) != KB_OK) {
        kb_msgf(msg, "config must be an integer");
        return KB_BAD_PARAM;
    }
    if (config != -1 && c->variant != V_WARPTILE && c->variant != V_TF32X3) {
        kb_msgf(msg, "config selects a configuration of warptile or tf32x3; %s has none",
                sgemm_variants[c->variant].name);
        return KB_SKIP;
    }
    if (config != -1) {
        const int n = c->variant == V_WARPTILE ? warptile_config_count() : tf32x3_config_count();
        if (config < 0 || config >= n) {
            kb_msgf(msg, "config: %lld is not a configuration of %s: expected -1 (tuned) or 0..%d",
                    (long long)config, sgemm_variants[c->variant].name, n - 1);
            return KB_BAD_PARAM;
        }
    }
    if (c->variant == V_HOST &&
        (double)dims[0] * (double)dims[1] * (double)dims[2] > (double)SGEMM_HOST_MAX_WORK) {
        kb_msgf(msg,
                "host variant takes M*N*K <= 2^32 (about a second per run); %lldx%lldx%lld "
                "is larger",
                (long long)dims[0], (long long)dims[1], (long long)dims[2]);
        return KB_SKIP;
    }
    if (c->variant != V_HOST && c->variant != V_CUBLAS &&
        (dims[0] > SGEMM_MAX_GRID_DIM || dims[1] > SGEMM_MAX_GRID_DIM)) {
        kb_msgf(msg, "M and N above %lld exceed the 65535 grid rows of the hand-written kernels",
                SGEMM_MAX_GRID_DIM);
        return KB_SKIP;
    }

    if (!pt || (c->variant != V_HOST && !pt->dA)) {
        kb_msgf(msg, "no inputs from prepare (a harness older than ABI 1.1?)");
        return KB_ERROR;
    }

    s = calloc(1, sizeof *s);
    if (!s) {
        kb_msgf(msg, "host allocation of %zu bytes failed", sizeof *s);
        return KB_NOMEM;
    }
    s->variant = c->variant;
    s->config = (int)config;
    s->M = pt->M;
    s->N = pt->N;
    s->K = pt->K;
    s->alpha = pt->alpha;
    s->beta = pt->beta;
    s->hA = pt->hA;
    s->hB = pt->hB;
    s->hC0 = pt->hC0;
    s->dA = pt->dA;
    s->dB = pt->dB;
    s->dC0 = pt->dC0;
    s->dRef = pt->dRef;

    const size_t nC = (size_t)s->M * s->N;
    if (s->variant == V_HOST) {
        if (!(s->hC = host_alloc_floats(nC, msg))) {
            rc = KB_NOMEM;
            goto fail;
        }
        memset(s->hC, 0xFF, nC * sizeof(float)); /* NaN: an unwritten element fails */
        *state = s;
        return KB_OK;
    }

    KB_CUDA_GOTO(cudaMalloc((void **)&s->dC, nC * sizeof(float)), msg, fail);
    KB_CUDA_GOTO(cudaMalloc((void **)&s->dSums, 2 * sizeof(double)), msg, fail);
    KB_CUDA_GOTO(cudaMemset(s->dC, 0xFF, nC * sizeof(float)), msg, fail); /* NaN poison */

    if ((rc = blas_status(cublasCreate(&s->blas), "cublasCreate", msg)))
        goto fail;
    if (s->variant == V_CUBLAS && (rc = lt_setup(s, msg)))
        goto fail;
    if ((s->variant == V_WARPTILE || s->variant == V_TF32X3) && (rc = tune(s, h, msg)))
        goto fail;
    KB_CUDA_GOTO(cudaDeviceSynchronize(), msg, fail);
    *state = s;
    return KB_OK;

fail:
    sgemm_free(s);
    return rc;
}

static int sgemm_counts(void *state, kb_counts *out, char *msg)
{
    const sgemm_state *s = state;
    const double M = s->M, N = s->N, K = s->K;
    out->flops = 2.0 * M * N * K;
    /* A, B read once and C written once; C0 read too unless beta is 0. */
    out->bytes = 4.0 * (M * K + K * N + M * N) + (s->beta != 0.0f ? 4.0 * M * N : 0.0);
    out->items = 0.0;
    out->item_unit = NULL;
    return KB_OK;
}

static int sgemm_run(void *state, void *stream, char *msg)
{
    sgemm_state *s = state;
    cudaStream_t st = (cudaStream_t)stream;

    if (s->variant == V_HOST) {
        sgemm_host(s->M, s->N, s->K, s->alpha, s->hA, s->M, s->hB, s->K, s->beta, s->hC0, s->hC,
                   s->M);
        return KB_OK;
    }
    if (s->variant == V_CUBLAS) {
        int rc = blas_status(cublasLtMatmul(s->lt, s->lt_op, &s->alpha, s->dA, s->lt_a, s->dB,
                                            s->lt_b, &s->beta, s->dC0, s->lt_c, s->dC, s->lt_c,
                                            &s->lt_algo, s->lt_workspace, s->lt_workspace_size, st),
                             "cublasLtMatmul", msg);
        if (rc)
            return rc;
        KB_CUDA_TRY(cudaGetLastError(), msg);
        return KB_OK;
    }
    const cudaError_t e =
        s->config >= 0 ? run_config(s, st)
                       : sgemm_launchers[s->variant](s->M, s->N, s->K, s->alpha, s->dA, s->M, s->dB,
                                                     s->K, s->beta, s->dC0, s->dC, s->M, st);
    if (e != cudaSuccess)
        return kb_cuda_fail(e, sgemm_variants[s->variant].name, __FILE__, __LINE__, msg);
    return KB_OK;
}

static int sgemm_verify(void *state, kb_verdict *out, char *msg)
{
    sgemm_state *s = state;
    const size_t nC = (size_t)s->M * s->N;
    double sums[2] = {0.0, 0.0};

    if (s->variant == V_HOST) {
        if (!s->hRef) {
            s->hRef = malloc(nC * sizeof(double));
            if (!s->hRef) {
                kb_msgf(msg, "host allocation of %zu bytes failed", nC * sizeof(double));
                return KB_NOMEM;
            }
            sgemm_host_reference(s->M, s->N, s->K, s->alpha, s->hA, s->hB, s->beta, s->hC0,
                                 s->hRef);
        }
        for (size_t i = 0; i < nC; i++) {
            const double d = (double)s->hC[i] - s->hRef[i];
            sums[0] += d * d;
            sums[1] += s->hRef[i] * s->hRef[i];
        }
    } else {
        KB_CUDA_TRY(cudaMemset(s->dSums, 0, 2 * sizeof(double)), msg);
        KB_CUDA_TRY(sgemm_error_sums(s->dC, s->dRef, nC, s->dSums, 0), msg);
        KB_CUDA_TRY(cudaMemcpy(sums, s->dSums, sizeof sums, cudaMemcpyDeviceToHost), msg);
    }

    /* Relative to the reference's norm; absolute if the reference is exactly zero. */
    const double err = sums[1] > 0.0 ? sqrt(sums[0] / sums[1]) : sqrt(sums[0]);
    out->error = err;
    out->tolerance = sgemm_tolerance(s->K);
    out->passed = isfinite(err) && err <= out->tolerance; /* NaN never passes */
    out->metric = "rel_frobenius";
    if (!out->passed)
        kb_msgf(msg, "relative Frobenius error %.3g over the bound %.3g (16*sqrt(K)*2^-24)", err,
                out->tolerance);
    return KB_OK;
}

static int sgemm_teardown(void *state, char *msg)
{
    sgemm_free(state);
    return KB_OK;
}

static const kb_plugin sgemm_plugin = {
    .abi_version = KB_ABI_CURRENT,
    .struct_size = sizeof(kb_plugin),
    .name = "sgemm",
    .description = "fp32 GEMM (column-major nn): the CUDA-core optimisation ladder, 3xTF32, cuBLAS",
    .variants = sgemm_variants,
    .n_variants = V_COUNT,
    .params = sgemm_params,
    .n_params = (int)(sizeof sgemm_params / sizeof sgemm_params[0]),
    .init = sgemm_init,
    .counts = sgemm_counts,
    .run = sgemm_run,
    .verify = sgemm_verify,
    .teardown = sgemm_teardown,
    .prepare = sgemm_prepare,
    .release = sgemm_release,
    .size_param = "shape",
    .knobs = "config",
};

KB_EXPORT const kb_plugin *kb_plugin_entry(void)
{
    return &sgemm_plugin;
}
