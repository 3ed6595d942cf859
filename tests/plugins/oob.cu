// Fixture: a device plugin with a planted out-of-bounds write, for
// `kbench run --sanitize` (compute-sanitizer must catch "oob_write"; "ok"
// must come out clean).  Without a GPU both are skipped.
#include <cuda_runtime.h>
#include <stdlib.h>

#include "kbench/cuda_check.h"
#include "kbench/plugin.h"

namespace {

const kb_variant variants[] = {
    {"ok", "writes n floats, all in bounds", KB_DEVICE, 0},
    {"oob_write", "writes one float past the end of its buffer", KB_DEVICE, 0},
};

struct state {
    int variant;
    int n;
    float *d;
};

__global__ void fill(float *d, int n, int extra)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n + extra)
        d[i] = 1.0f; // with extra = 1, thread n writes past the end
}

int init(const kb_case *c, void **out, char *msg)
{
    state *s = (state *)calloc(1, sizeof *s);
    s->variant = c->variant;
    s->n = 1000;
    cudaError_t e = cudaMalloc(&s->d, s->n * sizeof(float));
    if (e != cudaSuccess) {
        free(s);
        return kb_cuda_fail(e, "cudaMalloc", __FILE__, __LINE__, msg);
    }
    cudaMemset(s->d, 0xff, s->n * sizeof(float));
    *out = s;
    return KB_OK;
}

int counts(void *p, kb_counts *k, char *msg)
{
    k->bytes = 4000;
    return KB_OK;
}

int run(void *p, void *stream, char *msg)
{
    state *s = (state *)p;
    fill<<<(s->n + 256) / 256, 256, 0, (cudaStream_t)stream>>>(s->d, s->n, s->variant);
    KB_CUDA_TRY(cudaGetLastError(), msg);
    return KB_OK;
}

int verify(void *p, kb_verdict *v, char *msg)
{
    state *s = (state *)p;
    float *h = (float *)malloc(s->n * sizeof(float));
    KB_CUDA_TRY(cudaMemcpy(h, s->d, s->n * sizeof(float), cudaMemcpyDeviceToHost), msg);
    int bad = 0;
    for (int i = 0; i < s->n; i++)
        bad += h[i] != 1.0f;
    free(h);
    v->metric = "mismatches";
    v->error = bad;
    v->tolerance = 0;
    v->passed = bad == 0;
    return KB_OK;
}

int teardown(void *p, char *msg)
{
    state *s = (state *)p;
    cudaFree(s->d);
    free(s);
    return KB_OK;
}

const kb_plugin plugin = {
    KB_ABI_CURRENT, sizeof(kb_plugin), "oob", "fixture: a planted out-of-bounds device write",
    variants,       2,                 nullptr, 0, init, counts, run, verify, teardown,
};

} // namespace

extern "C" KB_EXPORT const kb_plugin *kb_plugin_entry(void)
{
    return &plugin;
}
