// The device's ceilings, measured once per run by the env probe: copy
// bandwidth (bytes read + written by a device-to-device copy), the fp32
// FMA rate, and the TF32 tensor-core rate.  Plugins quote their rates as
// fractions of these, and charts draw each variant under the roof of the
// hardware path it uses.
#include <cuda_runtime.h>

#include <stdint.h>
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

/* ---- TF32 tensor cores -------------------------------------------------------------------
 * Both kernels multiply tiles of ones (1.0 is exact in tf32) into fp32 accumulators that no
 * other instruction touches, so every product is real work the hardware must do, and check
 * at the end that each accumulator holds exactly the count of products it summed (integers
 * under 2^24 are exact in fp32): status[0] counts the wrong ones, status[1] says the tensor
 * path ran (a build for an architecture without it leaves the kernel empty). */

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define CEILING_HAVE_WGMMA 1
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define CEILING_HAVE_MMA 1
#endif

constexpr uint32_t kTf32One = 0x3f800000u; // 1.0f, also 1.0 in tf32

// wgmma (sm_90a): groups of kWgGroup m64n128k8 products of one warpgroup, A from registers
// and B (128 x 32 tf32, K-major, 128-byte swizzled) from shared memory, as the sgemm plugin's
// tf32x3 kernel issues them.  Each product adds 8 to every accumulator.  ptxas keeps the A
// registers of every product in flight apart (4 each): groups of 8 hold a thread at about 154
// registers, so three warpgroups share an SM and the others' queued products cover the one
// that waits for its group to retire.
constexpr int kWgGroup = 8, kWgThreads = 384, kWgIters = 8192;
constexpr double kWgFlops = 2.0 * 64 * 128 * 8; // one m64n128k8

// mma.sync (sm_80+): kMmaChains independent m16n8k8 accumulators per warp, each product
// adding 8 to every accumulator.
constexpr int kMmaChains = 8, kMmaThreads = 256, kMmaIters = 16384;
constexpr double kMmaFlops = 2.0 * 16 * 8 * 8; // one m16n8k8

#ifdef CEILING_HAVE_WGMMA
// K-major SWIZZLE_128B descriptor of a tile at shared address addr: start >> 4 in [0,14),
// leading byte offset 1 (unused with swizzling) in [16,30), stride 1024 >> 4 (8 rows of 128
// bytes) in [32,46), layout 1 (128-byte swizzle) in [62,64).
__device__ __forceinline__ uint64_t wg_desc(uint32_t addr)
{
    return (uint64_t)((addr >> 4) & 0x3FFF) | ((uint64_t)1 << 16) | ((uint64_t)(1024 >> 4) << 32) |
           ((uint64_t)1 << 62);
}

// D (64x128 f32) += A (64x8 tf32, registers) * B (8x128 tf32, shared memory), as sgemm's
// tf32x3 does it.
#include "kbench/wgmma_tf32.cuh"
#endif

// Counts the accumulators of this thread that do not hold want; marks the tensor path as run.
template <int N> __device__ __forceinline__ void check_sums(const float *d, float want, int *status)
{
    int bad = 0;
#pragma unroll
    for (int i = 0; i < N; i++)
        bad += d[i] != want;
    if (bad)
        atomicAdd(&status[0], bad);
    if (blockIdx.x == 0 && threadIdx.x == 0)
        status[1] = 1;
}

__global__ void __launch_bounds__(kWgThreads, 1) tf32_wgmma_peak(int *status, int iters)
{
#ifdef CEILING_HAVE_WGMMA
    __shared__ __align__(1024) float b[128 * 32];
    const uint32_t a[4] = {kTf32One, kTf32One, kTf32One, kTf32One};
    float d[64];
    for (int i = threadIdx.x; i < 128 * 32; i += blockDim.x)
        b[i] = 1.0f;
    // generic-proxy stores -> async-proxy (wgmma) reads
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();
    const uint32_t base = (uint32_t)__cvta_generic_to_shared(b);
#pragma unroll
    for (int i = 0; i < 64; i++)
        d[i] = 0.0f;
    for (int it = 0; it < iters; it++) {
        asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
        for (int k = 0; k < kWgGroup; k++) // k-step k % 4 of the 128-byte rows
            kb_wgmma_tf32_m64n128k8<1>(d, a, wg_desc(base + 32 * (k % 4)));
        asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    }
    // the sums are read only after the last wait
#pragma unroll
    for (int i = 0; i < 64; i++)
        asm volatile("" : "+f"(d[i])::"memory");
    check_sums<64>(d, 8.0f * kWgGroup * (float)iters, status);
#else
    (void)status;
    (void)iters;
#endif
}

__global__ void __launch_bounds__(kMmaThreads) tf32_mma_peak(int *status, int iters)
{
#ifdef CEILING_HAVE_MMA
    float d[kMmaChains][4];
#pragma unroll
    for (int j = 0; j < kMmaChains; j++)
        d[j][0] = d[j][1] = d[j][2] = d[j][3] = 0.0f;
#pragma unroll 4
    for (int it = 0; it < iters; it++) {
#pragma unroll
        for (int j = 0; j < kMmaChains; j++)
            asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, "
                         "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                         : "+f"(d[j][0]), "+f"(d[j][1]), "+f"(d[j][2]), "+f"(d[j][3])
                         : "r"(kTf32One), "r"(kTf32One), "r"(kTf32One), "r"(kTf32One),
                           "r"(kTf32One), "r"(kTf32One));
    }
    check_sums<kMmaChains * 4>(&d[0][0], 8.0f * (float)iters, status);
#else
    (void)status;
    (void)iters;
#endif
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

// Launches once to warm up (clocks up), then times 7 launches with events and gives the
// median in *ms.  Returns 0, or a kb_status with msg naming the failed call.
template <typename Launch> int time_launches(Launch launch, float *ms, char *msg)
{
    cudaEvent_t e0 = nullptr, e1 = nullptr;
    float t[7];
    int rc = 0;
    KB_CUDA_GOTO(cudaEventCreate(&e0), msg, fail);
    KB_CUDA_GOTO(cudaEventCreate(&e1), msg, fail);
    launch();
    KB_CUDA_GOTO(cudaGetLastError(), msg, fail);
    for (int i = 0; i < 7; i++) {
        KB_CUDA_GOTO(cudaEventRecord(e0), msg, fail);
        launch();
        KB_CUDA_GOTO(cudaGetLastError(), msg, fail);
        KB_CUDA_GOTO(cudaEventRecord(e1), msg, fail);
        KB_CUDA_GOTO(cudaEventSynchronize(e1), msg, fail);
        KB_CUDA_GOTO(cudaEventElapsedTime(&t[i], e0, e1), msg, fail);
    }
    *ms = median_of(t, 7);
fail:
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
    int rc = 0, blocks = 0;
    char msg[KB_MSG_SIZE];
    float ms = 0;
    const int threads = 256, iters = 1 << 14;
    KB_CUDA_GOTO(cudaGetDeviceProperties(&prop, device), msg, fail);
    KB_CUDA_GOTO(cudaMalloc(&out, threads * sizeof(float)), msg, fail);
    blocks = prop.multiProcessorCount * 8;
    rc = time_launches([&] { fma_peak<<<blocks, threads>>>(out, 1.0f, iters); }, &ms, msg);
    if (rc == 0)
        *gflops = 2.0 * 8.0 * iters * (double)threads * blocks / (ms * 1e-3) / 1e9;
fail:
    cudaFree(out);
    return finish(rc, "fp32 peak", msg, err, nullptr, nullptr);
}

/* Runs one TF32 kernel once to check its sums, then times it (time_launches); *ran says
 * whether the tensor path was compiled in for this device. */
template <typename Launch>
static int tf32_run(Launch launch, int *status, double flops, double *gflops, int *ran, char *msg)
{
    int host[2] = {0, 0}, rc = 0;
    float ms = 0;
    KB_CUDA_GOTO(cudaMemset(status, 0, 2 * sizeof(int)), msg, fail);
    launch();
    KB_CUDA_GOTO(cudaGetLastError(), msg, fail);
    KB_CUDA_GOTO(cudaMemcpy(host, status, sizeof host, cudaMemcpyDeviceToHost), msg, fail);
    *ran = host[1];
    if (!*ran)
        return 0;
    if (host[0] != 0) {
        snprintf(msg, KB_MSG_SIZE,
                 "%d accumulators of the tensor-core kernel did not hold the sum of their "
                 "products: not a measurement",
                 host[0]);
        return -1;
    }
    rc = time_launches(launch, &ms, msg);
    if (rc == 0)
        *gflops = flops / (ms * 1e-3) / 1e9;
fail:
    return rc;
}

extern "C" int kbi_measure_peak_tf32(int device, double *gflops, const char **method, char *err)
{
    cudaDeviceProp prop;
    int *status = nullptr, rc = 0, ran = 0;
    char msg[KB_MSG_SIZE] = "";
    *method = "";
    KB_CUDA_GOTO(cudaGetDeviceProperties(&prop, device), msg, fail);
    if (prop.major < 8) {
        snprintf(msg, sizeof msg, "no TF32 tensor cores on compute capability %d.%d", prop.major,
                 prop.minor);
        rc = -1;
        goto fail;
    }
    KB_CUDA_GOTO(cudaMalloc(&status, 2 * sizeof(int)), msg, fail);
    if (prop.major == 9) { // wgmma exists on sm_90a only; later GPUs take mma.sync
        const int blocks = prop.multiProcessorCount; // one block of three warpgroups each
        const double flops = kWgFlops * kWgGroup * kWgIters * (kWgThreads / 128) * blocks;
        rc = tf32_run([&] { tf32_wgmma_peak<<<blocks, kWgThreads>>>(status, kWgIters); }, status,
                      flops, gflops, &ran, msg);
        if (rc == 0 && ran)
            *method = "wgmma m64n128k8";
    }
    if (rc == 0 && !ran) {
        const int blocks = prop.multiProcessorCount * 4;
        const double flops = kMmaFlops * kMmaChains * kMmaIters * (kMmaThreads / 32) * blocks;
        rc = tf32_run([&] { tf32_mma_peak<<<blocks, kMmaThreads>>>(status, kMmaIters); }, status,
                      flops, gflops, &ran, msg);
        if (rc == 0 && ran)
            *method = "mma.sync m16n8k8";
        else if (rc == 0) {
            snprintf(msg, sizeof msg,
                     "kbench was built without a TF32 tensor-core kernel for "
                     "this device (CMAKE_CUDA_ARCHITECTURES)");
            rc = -1;
        }
    }
fail:
    cudaFree(status);
    return finish(rc, "tf32 peak", msg, err, nullptr, nullptr);
}
