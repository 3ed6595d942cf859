/* Fixture plugin for hot timing: a microsecond axpy, a cuBLAS SGEMM, a run
 * of many small axpys (n launches) and one device-to-device memcpy of n
 * floats: the work tests/hot/graph_replay.cu times by CUDA-graph replay
 * (and, with --stream, by events around uncaptured launches).  With
 * capture = 0 it forbids graph capture (KB_RUN_NO_CAPTURE), so the
 * blocking-kernel method is timed instead; with syncs = 1 it declares
 * KB_RUN_SYNCS (plain launches). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kbench/cuda_check.h"
#include "kbench/plugin.h"
#include "work.cuh"

static const kb_variant variants[] = {
    {"axpy", "z = 2 x + y on n floats", KB_DEVICE, 0},
    {"sgemm", "cublasSgemm C = A B, n x n x n", KB_DEVICE, 0},
    {"many", "n launches of a 4096-float axpy in one run", KB_DEVICE, 0},
    {"memcpy", "cudaMemcpyAsync of n floats, device to device", KB_DEVICE, 0},
};

enum { V_AXPY, V_SGEMM, V_MANY, V_MEMCPY };

static const kb_param params[] = {
    {"n", KB_PARAM_INT, "65536",
     "floats (axpy, memcpy), matrix order (sgemm) or launches (many)", NULL},
    {"capture", KB_PARAM_INT, "1", "0: forbid graph capture (KB_RUN_NO_CAPTURE)", NULL},
    {"syncs", KB_PARAM_INT, "0", "1: declare KB_RUN_SYNCS", NULL},
};

typedef struct state {
    int variant, n;
    uint32_t flags;
    size_t elems;     /* of each array */
    float *x, *y, *z; /* axpy, many: x, y in, z out; sgemm: A, B in, C out; memcpy: x to z */
    float *hx, *hy;
    cublasHandle_t blas;
    void *workspace;
} state;

static int teardown(void *p, char *msg)
{
    state *s = (state *)p;
    if (!s)
        return KB_OK;
    if (s->blas)
        cublasDestroy(s->blas);
    cudaFree(s->workspace);
    cudaFree(s->x);
    cudaFree(s->y);
    cudaFree(s->z);
    free(s->hx);
    free(s->hy);
    free(s);
    return KB_OK;
}

static int init(const kb_case *c, void **out, char *msg)
{
    state *s = (state *)calloc(1, sizeof *s);
    int64_t n, capture, syncs;
    size_t in;
    int rc = KB_OK;
    if (!s)
        return KB_NOMEM;
    if (c->host->param_int(c->params, "n", &n) || c->host->param_int(c->params, "capture", &capture) ||
        c->host->param_int(c->params, "syncs", &syncs) || n < 1 || n > (1 << 28)) {
        kb_msgf(msg, "bad parameters");
        free(s);
        return KB_BAD_PARAM;
    }
    s->variant = c->variant;
    s->n = (int)n;
    s->flags = (capture ? 0 : KB_RUN_NO_CAPTURE) | (syncs ? KB_RUN_SYNCS : 0);
    in = s->variant == V_SGEMM ? (size_t)n * (size_t)n
         : s->variant == V_MANY ? (size_t)HOT_MANY_ELEMS
                                : (size_t)n;
    s->elems = in;
    s->hx = (float *)malloc(in * sizeof(float));
    s->hy = (float *)malloc(in * sizeof(float));
    if (!s->hx || !s->hy) {
        rc = KB_NOMEM;
        goto fail;
    }
    hot_fill(s->hx, in, (unsigned)c->seed);
    hot_fill(s->hy, in, (unsigned)c->seed + 1);
    KB_CUDA_GOTO(cudaMalloc((void **)&s->x, in * sizeof(float)), msg, fail);
    KB_CUDA_GOTO(cudaMalloc((void **)&s->y, in * sizeof(float)), msg, fail);
    KB_CUDA_GOTO(cudaMalloc((void **)&s->z, in * sizeof(float)), msg, fail);
    KB_CUDA_GOTO(cudaMemcpy(s->x, s->hx, in * sizeof(float), cudaMemcpyHostToDevice), msg, fail);
    KB_CUDA_GOTO(cudaMemcpy(s->y, s->hy, in * sizeof(float), cudaMemcpyHostToDevice), msg, fail);
    /* Poison: NaN everywhere until a run writes it. */
    KB_CUDA_GOTO(cudaMemset(s->z, 0xff, in * sizeof(float)), msg, fail);
    if (s->variant == V_SGEMM) {
        KB_CUDA_GOTO(cudaMalloc(&s->workspace, HOT_CUBLAS_WORKSPACE), msg, fail);
        if (cublasCreate(&s->blas) != CUBLAS_STATUS_SUCCESS ||
            cublasSetWorkspace(s->blas, s->workspace, HOT_CUBLAS_WORKSPACE) !=
                CUBLAS_STATUS_SUCCESS ||
            cublasSetMathMode(s->blas, CUBLAS_DEFAULT_MATH) != CUBLAS_STATUS_SUCCESS) {
            kb_msgf(msg, "cuBLAS set-up failed");
            rc = KB_ERROR;
            goto fail;
        }
    }
    *out = s;
    return KB_OK;
fail:
    teardown(s, NULL);
    return rc;
}

static int counts(void *p, kb_counts *k, char *msg)
{
    state *s = (state *)p;
    double n = s->n;
    switch (s->variant) {
    case V_AXPY:
        k->flops = 2 * n;
        k->bytes = 12 * n;
        break;
    case V_SGEMM:
        k->flops = 2 * n * n * n;
        k->bytes = 12 * n * n;
        break;
    case V_MANY:
        k->flops = 2.0 * HOT_MANY_ELEMS * n;
        k->bytes = 12.0 * HOT_MANY_ELEMS * n;
        break;
    default: /* memcpy: read and written */
        k->flops = 0;
        k->bytes = 8 * n;
    }
    k->run_flags = s->flags;
    return KB_OK;
}

static int run(void *p, void *stream, char *msg)
{
    state *s = (state *)p;
    cudaStream_t st = (cudaStream_t)stream;
    if (s->variant == V_AXPY) {
        KB_CUDA_TRY(hot_axpy(st, s->n, s->x, s->y, s->z), msg);
        return KB_OK;
    }
    if (s->variant == V_MANY) {
        KB_CUDA_TRY(hot_many(st, s->n, s->x, s->y, s->z), msg);
        return KB_OK;
    }
    if (s->variant == V_MEMCPY) {
        KB_CUDA_TRY(hot_memcpy(st, s->elems, s->x, s->z), msg);
        return KB_OK;
    }
    if (cublasSetStream(s->blas, st) != CUBLAS_STATUS_SUCCESS ||
        hot_sgemm(s->blas, s->n, s->x, s->y, s->z) != CUBLAS_STATUS_SUCCESS) {
        kb_msgf(msg, "cublasSgemm failed");
        return KB_ERROR;
    }
    return KB_OK;
}

/* Checks 64 spread elements against host arithmetic in double. */
static int verify(void *p, kb_verdict *v, char *msg)
{
    state *s = (state *)p;
    size_t outn = s->elems;
    double worst = 0;
    for (int t = 0; t < 64; t++) {
        size_t i = (size_t)t * (outn - 1) / 63;
        float got;
        double want = 0, scale = 0;
        KB_CUDA_TRY(cudaMemcpy(&got, s->z + i, sizeof got, cudaMemcpyDeviceToHost), msg);
        if (s->variant == V_MEMCPY) {
            want = s->hx[i];
            scale = fabs(want);
        } else if (s->variant != V_SGEMM) {
            want = 2.0 * s->hx[i] + s->hy[i];
            scale = fabs(2.0 * s->hx[i]) + fabs(s->hy[i]);
        } else {
            size_t row = i % (size_t)s->n, col = i / (size_t)s->n;
            for (int k = 0; k < s->n; k++) {
                double t1 = (double)s->hx[row + (size_t)k * s->n] * s->hy[k + col * (size_t)s->n];
                want += t1;
                scale += fabs(t1);
            }
        }
        double err = fabs(got - want) / (scale > 0 ? scale : 1);
        if (!(err <= worst))
            worst = isnan(err) ? INFINITY : err > worst ? err : worst;
    }
    v->error = worst;
    v->tolerance = 1e-5;
    v->passed = worst <= v->tolerance;
    v->metric = "max_rel_error";
    return KB_OK;
}

static const kb_plugin plugin = {
    KB_ABI_CURRENT,
    sizeof(kb_plugin),
    "hot",
    "hot-timing check: axpy, cuBLAS SGEMM, many launches, memcpy; also timed by "
    "tests/hot/graph_replay",
    variants,
    4,
    params,
    3,
    init,
    counts,
    run,
    verify,
    teardown,
};

extern "C" KB_EXPORT const kb_plugin *kb_plugin_entry(void) { return &plugin; }
