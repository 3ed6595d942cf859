/* The stream plugin: the STREAM kernels (copy, scale, add, triad) as plain C
 * loops on the host and as 128-bit grid-stride kernels on the device, plus
 * cudaMemcpyAsync as the device-to-device roof.  Every run writes
 * c = op(a, b) from inputs it never changes, so any number of runs leaves a
 * verifiable c.  It is the template for new plugins: descriptor, init
 * (seeded inputs, poisoned output), counts, run, verify, teardown. */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kbench/cuda_check.h"
#include "kbench/plugin.h"
#include "stream.h"

enum {
    V_HOST_COPY,
    V_HOST_SCALE,
    V_HOST_ADD,
    V_HOST_TRIAD,
    V_COPY,
    V_SCALE,
    V_ADD,
    V_TRIAD,
    V_MEMCPY,
    V_FMA,
    V_COUNT
};

static const kb_variant variants[V_COUNT] = {
    [V_HOST_COPY] = {"host_copy", "c[i] = a[i], C loop", KB_HOST, 0},
    [V_HOST_SCALE] = {"host_scale", "c[i] = q*a[i], C loop", KB_HOST, 0},
    [V_HOST_ADD] = {"host_add", "c[i] = a[i] + b[i], C loop", KB_HOST, 0},
    [V_HOST_TRIAD] = {"host_triad", "c[i] = a[i] + q*b[i], C loop", KB_HOST, 0},
    [V_COPY] = {"copy", "c[i] = a[i], grid-stride float4 kernel", KB_DEVICE, 0},
    [V_SCALE] = {"scale", "c[i] = q*a[i], grid-stride float4 kernel", KB_DEVICE, 0},
    [V_ADD] = {"add", "c[i] = a[i] + b[i], grid-stride float4 kernel", KB_DEVICE, 0},
    [V_TRIAD] = {"triad", "c[i] = a[i] + q*b[i], grid-stride float4 kernel", KB_DEVICE, 0},
    [V_MEMCPY] = {"memcpy", "cudaMemcpyAsync device to device (the roof)", KB_DEVICE,
                  KB_VARIANT_BASELINE},
    [V_FMA] = {"fma", "c[i] = a[i] after 1,024 dependent FMAs: bound by the FP32 pipes, not memory",
               KB_DEVICE, 0},
};

static const kb_param params[] = {
    {"bytes", KB_PARAM_INT, "256Mi", "size of each array in bytes (a multiple of 4)", NULL},
    {"blocks_per_sm", KB_PARAM_INT, "0",
     "device kernels: 0 = one pass over the array, N = a persistent grid of N blocks per SM",
     NULL},
};

typedef struct state {
    int variant;
    stream_op op;
    size_t n;
    uint64_t seed;
    float *a, *b, *c;    /* host arrays (host variants) */
    float *da, *db, *dc; /* device arrays (device variants) */
    int sm_count;
    int blocks_per_sm;
} state;

static stream_op op_of(int v)
{
    switch (v) {
    case V_HOST_SCALE:
    case V_SCALE:
        return OP_SCALE;
    case V_HOST_ADD:
    case V_ADD:
        return OP_ADD;
    case V_HOST_TRIAD:
    case V_TRIAD:
        return OP_TRIAD;
    case V_FMA:
        return OP_FMA;
    default:
        return OP_COPY;
    }
}

static int uses_b(stream_op op)
{
    return op == OP_ADD || op == OP_TRIAD;
}

static int teardown(void *p, char *msg)
{
    state *s = p;
    (void)msg;
    if (!s)
        return KB_OK;
    free(s->a);
    free(s->b);
    free(s->c);
    if (s->da)
        cudaFree(s->da);
    if (s->db)
        cudaFree(s->db);
    if (s->dc)
        cudaFree(s->dc);
    free(s);
    return KB_OK;
}

static int init(const kb_case *c, void **out, char *msg)
{
    state *s;
    int64_t bytes;
    int rc = KB_OK;
    *out = NULL;
    if (c->host->param_int(c->params, "bytes", &bytes) != KB_OK) {
        kb_msgf(msg, "parameter bytes missing");
        return KB_BAD_PARAM;
    }
    int64_t bps = 0;
    c->host->param_int(c->params, "blocks_per_sm", &bps);
    if (bps < 0 || bps > 64) {
        kb_msgf(msg, "blocks_per_sm = %lld: expected 0 (one pass) to 64", (long long)bps);
        return KB_BAD_PARAM;
    }
    if (bytes < 4 || bytes % 4 != 0) {
        kb_msgf(msg, "bytes = %lld: expected a positive multiple of 4", (long long)bytes);
        return KB_BAD_PARAM;
    }
    s = calloc(1, sizeof *s);
    if (!s) {
        kb_msgf(msg, "out of host memory");
        return KB_NOMEM;
    }
    s->variant = c->variant;
    s->op = op_of(c->variant);
    s->n = (size_t)bytes / 4;
    s->seed = c->seed;
    s->blocks_per_sm = (int)bps;
    if (variants[c->variant].target == KB_HOST) {
        s->a = malloc(s->n * sizeof(float));
        s->b = uses_b(s->op) ? malloc(s->n * sizeof(float)) : NULL;
        s->c = malloc(s->n * sizeof(float));
        if (!s->a || !s->c || (uses_b(s->op) && !s->b)) {
            kb_msgf(msg, "cannot allocate 3 x %lld bytes of host memory", (long long)bytes);
            rc = KB_NOMEM;
            goto fail;
        }
        for (size_t i = 0; i < s->n; i++) {
            s->a[i] = stream_input(s->seed, 0, i);
            if (s->b)
                s->b[i] = stream_input(s->seed, 1, i);
        }
        memset(s->c, 0xff, s->n * sizeof(float)); /* NaN: unwritten elements fail */
    } else {
        int dev;
        KB_CUDA_GOTO(cudaGetDevice(&dev), msg, fail);
        KB_CUDA_GOTO(cudaDeviceGetAttribute(&s->sm_count, cudaDevAttrMultiProcessorCount, dev),
                     msg, fail);
        KB_CUDA_GOTO(cudaMalloc((void **)&s->da, s->n * sizeof(float)), msg, fail);
        if (uses_b(s->op))
            KB_CUDA_GOTO(cudaMalloc((void **)&s->db, s->n * sizeof(float)), msg, fail);
        KB_CUDA_GOTO(cudaMalloc((void **)&s->dc, s->n * sizeof(float)), msg, fail);
        KB_CUDA_GOTO((cudaError_t)stream_device_fill(s->da, s->n, s->seed, 0, NULL), msg, fail);
        if (s->db)
            KB_CUDA_GOTO((cudaError_t)stream_device_fill(s->db, s->n, s->seed, 1, NULL), msg,
                         fail);
        KB_CUDA_GOTO(cudaMemset(s->dc, 0xff, s->n * sizeof(float)), msg, fail);
        KB_CUDA_GOTO(cudaDeviceSynchronize(), msg, fail);
    }
    *out = s;
    return KB_OK;
fail:
    teardown(s, NULL);
    return rc;
}

static int counts(void *p, kb_counts *k, char *msg)
{
    state *s = p;
    (void)msg;
    /* Each input read once, the output written once. */
    k->bytes = (double)s->n * sizeof(float) * (uses_b(s->op) ? 3.0 : 2.0);
    k->flops = (double)s->n * (s->op == OP_FMA     ? 2.0 * STREAM_FMA_STEPS
                               : s->op == OP_TRIAD ? 2.0
                               : s->op == OP_COPY  ? 0.0
                                                   : 1.0);
    k->items = (double)s->n;
    k->item_unit = "elements";
    return KB_OK;
}

static void host_run(state *s)
{
    const float q = STREAM_Q;
    float *restrict c = s->c;
    const float *restrict a = s->a, *restrict b = s->b;
    size_t n = s->n;
    switch (s->op) {
    case OP_COPY:
        for (size_t i = 0; i < n; i++)
            c[i] = a[i];
        break;
    case OP_SCALE:
        for (size_t i = 0; i < n; i++)
            c[i] = q * a[i];
        break;
    case OP_ADD:
        for (size_t i = 0; i < n; i++)
            c[i] = a[i] + b[i];
        break;
    case OP_TRIAD:
        for (size_t i = 0; i < n; i++)
            c[i] = a[i] + q * b[i];
        break;
    case OP_FMA: /* device only: no host variant computes it */
        break;
    }
}

static int run(void *p, void *stream, char *msg)
{
    state *s = p;
    if (variants[s->variant].target == KB_HOST) {
        host_run(s);
        return KB_OK;
    }
    if (s->variant == V_MEMCPY) {
        KB_CUDA_TRY(cudaMemcpyAsync(s->dc, s->da, s->n * sizeof(float), cudaMemcpyDeviceToDevice,
                                    (cudaStream_t)stream),
                    msg);
        return KB_OK;
    }
    KB_CUDA_TRY((cudaError_t)stream_device_run(s->op, s->dc, s->da, s->db, s->n, s->sm_count,
                                               s->blocks_per_sm, stream),
                msg);
    return KB_OK;
}

/* Relative error of c against the op in double precision.  Copy must be
 * exact; scale, add and triad round at most twice in fp32 on positive
 * inputs (no cancellation), so 2^-22 is twice the worst case; fma's chain
 * carries at most 2^-23 (stream.h), inside the same bound.  Device
 * results are checked on the device (gigabytes would take seconds on the
 * host). */
static int verify(void *p, kb_verdict *v, char *msg)
{
    state *s = p;
    double worst = 0.0, tol = s->op == OP_COPY ? 0.0 : ldexp(1.0, -22);
    unsigned long long bad = 0;
    if (variants[s->variant].target == KB_DEVICE) {
        KB_CUDA_TRY((cudaError_t)stream_device_check(s->op, s->dc, s->n, s->seed, tol, &worst,
                                                     &bad),
                    msg);
    } else {
        for (size_t i = 0; i < s->n; i++) {
            double a = stream_input(s->seed, 0, i), b = stream_input(s->seed, 1, i), want, err;
            switch (s->op) {
            case OP_COPY:
                want = a;
                break;
            case OP_SCALE:
                want = (double)STREAM_Q * a;
                break;
            case OP_ADD:
                want = a + b;
                break;
            default:
                want = a + (double)STREAM_Q * b;
            }
            err = fabs((double)s->c[i] - want) / want;
            if (!(err <= 1e300))
                err = INFINITY; /* NaN: an unwritten element */
            worst = err > worst ? err : worst;
            bad += err > tol;
        }
    }
    v->metric = "max_rel";
    v->error = worst;
    v->tolerance = tol;
    v->passed = worst <= tol;
    if (!v->passed)
        kb_msgf(msg, "%llu of %zu elements off by more than %g", bad, s->n, tol);
    return KB_OK;
}

static const kb_plugin plugin = {
    .abi_version = KB_ABI_CURRENT,
    .struct_size = sizeof(kb_plugin),
    .name = "stream",
    .description = "STREAM copy/scale/add/triad on host and device; memcpy is the roof",
    .variants = variants,
    .n_variants = V_COUNT,
    .params = params,
    .n_params = sizeof params / sizeof params[0],
    .init = init,
    .counts = counts,
    .run = run,
    .verify = verify,
    .teardown = teardown,
    /* ABI 1.3: a tuning knob, named in a case id only where a profile sets it. */
    .knobs = "blocks_per_sm",
    /* ABI 1.4: it shapes the grid of the device kernels; memcpy and the host loops have none. */
    .knob_variants = "blocks_per_sm=copy|scale|add|triad|fma",
};

KB_EXPORT const kb_plugin *kb_plugin_entry(void)
{
    return &plugin;
}
