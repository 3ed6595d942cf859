// The device's ceilings, measured once per run by the env probe: copy
// bandwidth (bytes read + written by a device-to-device copy) and the fp32
// FMA rate.  Plugins quote their rates as fractions of these.
#include <cuda_runtime.h>

#include <stdio.h>

extern "C" {
#include "env.h"
}
#include "kbench/cuda_check.h"

namespace
{

// Many independent FMA chains per thread so the pipes, not latency, limit.
__global__ void fma_peak(float *out, float seed, int iters)
{
    float a[8];
#pragma unroll
    for (int i = 0; i < 8; i++)
        a[i] = seed + (float)(threadIdx.x + i);
    const float m = 0.999f, c = 0.001f;
    // Unrolled so loop overhead is a small share of the issued instructions.
#pragma unroll 16
    for (int it = 0; it < iters; it++) {
#pragma unroll
        for (int i = 0; i < 8; i++)
            a[i] = fmaf(a[i], m, c);
    }
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < 8; i++)
        s += a[i];
    if (s == 12345.678f) // never true; keeps the chains alive
        out[threadIdx.x] = s;
}

float median_of(float *x, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && x[j] < x[j - 1]; j--) {
            float t = x[j];
            x[j] = x[j - 1];
            x[j - 1] = t;
        }
    return x[n / 2];
}

// The common end of both measurements: the events go, a failure is named in err.
int finish(int rc, const char *what, const char *msg, char *err, cudaEvent_t e0, cudaEvent_t e1)
{
    if (rc != 0)
        snprintf(err, 1024, "%s: %s", what, msg);
    if (e0)
        cudaEventDestroy(e0);
    if (e1)
        cudaEventDestroy(e1);
    return rc;
}

} // namespace

extern "C" int kbi_measure_bandwidth(int device, double *gbs, char *err)
{
    const size_t bytes = (size_t)1 << 30; // 1 GiB each way: far past any L2
    void *a = nullptr, *b = nullptr;
    cudaEvent_t e0 = nullptr, e1 = nullptr;
    float ms[10];
    int rc = 0;
    char msg[KB_MSG_SIZE];
    KB_CUDA_GOTO(cudaSetDevice(device), msg, fail);
    KB_CUDA_GOTO(cudaMalloc(&a, bytes), msg, fail);
    KB_CUDA_GOTO(cudaMalloc(&b, bytes), msg, fail);
    KB_CUDA_GOTO(cudaMemset(a, 1, bytes), msg, fail);
    KB_CUDA_GOTO(cudaEventCreate(&e0), msg, fail);
    KB_CUDA_GOTO(cudaEventCreate(&e1), msg, fail);
    KB_CUDA_GOTO(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice), msg, fail);
    for (int i = 0; i < 10; i++) {
        KB_CUDA_GOTO(cudaEventRecord(e0), msg, fail);
        KB_CUDA_GOTO(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice), msg, fail);
        KB_CUDA_GOTO(cudaEventRecord(e1), msg, fail);
        KB_CUDA_GOTO(cudaEventSynchronize(e1), msg, fail);
        KB_CUDA_GOTO(cudaEventElapsedTime(&ms[i], e0, e1), msg, fail);
    }
    *gbs = 2.0 * (double)bytes / (median_of(ms, 10) * 1e-3) / 1e9;
fail:
    cudaFree(a);
    cudaFree(b);
    return finish(rc, "bandwidth", msg, err, e0, e1);
}

extern "C" int kbi_measure_peak_fp32(int device, double *gflops, char *err)
{
    cudaDeviceProp prop;
    float *out = nullptr;
    cudaEvent_t e0 = nullptr, e1 = nullptr;
    float ms[7];
    int rc = 0;
    char msg[KB_MSG_SIZE];
    const int threads = 256, iters = 1 << 14;
    KB_CUDA_GOTO(cudaGetDeviceProperties(&prop, device), msg, fail);
    KB_CUDA_GOTO(cudaMalloc(&out, threads * sizeof(float)), msg, fail);
    KB_CUDA_GOTO(cudaEventCreate(&e0), msg, fail);
    KB_CUDA_GOTO(cudaEventCreate(&e1), msg, fail);
    {
        const int blocks = prop.multiProcessorCount * 8;
        fma_peak<<<blocks, threads>>>(out, 1.0f, iters); // warm-up, clocks up
        KB_CUDA_GOTO(cudaGetLastError(), msg, fail);
        for (int i = 0; i < 7; i++) {
            KB_CUDA_GOTO(cudaEventRecord(e0), msg, fail);
            fma_peak<<<blocks, threads>>>(out, 1.0f, iters);
            KB_CUDA_GOTO(cudaGetLastError(), msg, fail);
            KB_CUDA_GOTO(cudaEventRecord(e1), msg, fail);
            KB_CUDA_GOTO(cudaEventSynchronize(e1), msg, fail);
            KB_CUDA_GOTO(cudaEventElapsedTime(&ms[i], e0, e1), msg, fail);
        }
        const double flops = 2.0 * 8.0 * iters * (double)threads * blocks;
        *gflops = flops / (median_of(ms, 7) * 1e-3) / 1e9;
    }
fail:
    cudaFree(out);
    return finish(rc, "fp32 peak", msg, err, e0, e1);
}
