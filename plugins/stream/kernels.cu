// Device STREAM kernels: grid-stride loops over 128-bit (float4) elements
// with several independent loads in flight per thread, plus a scalar tail.
#include <cuda_runtime.h>
#include <math.h>
#include <string.h>

#include "stream.h"

namespace {

constexpr int kThreads = 256;
constexpr int kUnroll = 4; // float4 loads in flight per thread per iteration

__global__ void fill(float *x, size_t n, uint64_t seed, int which)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        x[i] = stream_input(seed, which, i);
}

template <stream_op Op>
__device__ __forceinline__ float4 apply(float4 a, float4 b)
{
    const float q = STREAM_Q;
    switch (Op) {
    case OP_COPY:
        return a;
    case OP_SCALE:
        return make_float4(q * a.x, q * a.y, q * a.z, q * a.w);
    case OP_ADD:
        return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
    case OP_FMA:
#pragma unroll 16
        for (int k = 0; k < STREAM_FMA_STEPS; k++) {
            a.x = fmaf(a.x, 0.5f, 0.5f);
            a.y = fmaf(a.y, 0.5f, 0.5f);
            a.z = fmaf(a.z, 0.5f, 0.5f);
            a.w = fmaf(a.w, 0.5f, 0.5f);
        }
        return a;
    default: // triad
        return make_float4(a.x + q * b.x, a.y + q * b.y, a.z + q * b.z, a.w + q * b.w);
    }
}

template <stream_op Op>
__device__ __forceinline__ float apply1(float a, float b)
{
    return apply<Op>(make_float4(a, 0, 0, 0), make_float4(b, 0, 0, 0)).x;
}

// c = op(a, b) over n floats; a, b, c are cudaMalloc'd (256-byte aligned).
// Grid-stride: block b, thread t handles float4 i = b*blockDim + t, then
// i + stride, ...; kUnroll independent 16-byte loads per array are issued
// before any store.  With a grid covering the array once (one pass), every
// thread does at most kUnroll elements and the loop runs once.
template <stream_op Op>
__global__ void __launch_bounds__(kThreads) stream_kernel(float *__restrict__ c,
                                                          const float *__restrict__ a,
                                                          const float *__restrict__ b, size_t n)
{
    const bool two = Op == OP_ADD || Op == OP_TRIAD;
    const size_t n4 = n / 4;
    const float4 *a4 = reinterpret_cast<const float4 *>(a);
    const float4 *b4 = reinterpret_cast<const float4 *>(b);
    float4 *c4 = reinterpret_cast<float4 *>(c);
    const size_t stride = (size_t)gridDim.x * blockDim.x * kUnroll;

    for (size_t base = (size_t)blockIdx.x * blockDim.x * kUnroll + threadIdx.x; base < n4;
         base += stride) {
        float4 va[kUnroll], vb[kUnroll];
        if (base + (kUnroll - 1) * kThreads < n4) {
#pragma unroll
            for (int u = 0; u < kUnroll; u++) {
                va[u] = __ldcs(a4 + base + u * kThreads);
                vb[u] = two ? __ldcs(b4 + base + u * kThreads) : va[u];
            }
#pragma unroll
            for (int u = 0; u < kUnroll; u++)
                __stcs(c4 + base + u * kThreads, apply<Op>(va[u], vb[u]));
        } else {
            for (int u = 0; u < kUnroll && base + u * kThreads < n4; u++) {
                const size_t i = base + u * kThreads;
                c4[i] = apply<Op>(a4[i], two ? b4[i] : a4[i]);
            }
        }
    }

    // The last n % 4 floats.
    const size_t t = n4 * 4 + blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (t < n)
        c[t] = apply1<Op>(a[t], two ? b[t] : a[t]);
}

// The largest relative error of c against op(a, b) computed in double, as
// the bits of a non-negative double (their order is the numbers' order), and
// how many elements exceed tol.  A NaN counts as +infinity.
__global__ void check(stream_op op, const float *c, size_t n, uint64_t seed, double tol,
                      unsigned long long *worst_bits, unsigned long long *bad)
{
    double worst = 0.0;
    unsigned long long nbad = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        double a = stream_input(seed, 0, i), b = stream_input(seed, 1, i), want;
        switch (op) {
        case OP_COPY:
            want = a;
            break;
        case OP_SCALE:
            want = (double)STREAM_Q * a;
            break;
        case OP_ADD:
            want = a + b;
            break;
        case OP_FMA:
            want = a;
            for (int k = 0; k < STREAM_FMA_STEPS; k++)
                want = fma(want, 0.5, 0.5);
            break;
        default:
            want = a + (double)STREAM_Q * b;
        }
        double err = fabs((double)c[i] - want) / want;
        if (!(err <= 1e300))
            err = INFINITY;
        worst = fmax(worst, err);
        nbad += err > tol;
    }
    atomicMax(worst_bits, (unsigned long long)__double_as_longlong(worst));
    if (nbad)
        atomicAdd(bad, nbad);
}

} // namespace

extern "C" int stream_device_check(stream_op op, const float *c, size_t n, uint64_t seed,
                                   double tol, double *worst, unsigned long long *bad)
{
    unsigned long long *d = nullptr, h[2] = {0, 0};
    cudaError_t e = cudaMalloc(&d, sizeof h);
    if (e == cudaSuccess)
        e = cudaMemset(d, 0, sizeof h);
    if (e == cudaSuccess) {
        check<<<1024, kThreads>>>(op, c, n, seed, tol, d, d + 1);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess)
        e = cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    cudaFree(d);
    memcpy(worst, &h[0], sizeof *worst);
    *bad = h[1];
    return (int)e;
}

extern "C" int stream_device_fill(float *x, size_t n, uint64_t seed, int which, void *stream)
{
    fill<<<1024, kThreads, 0, (cudaStream_t)stream>>>(x, n, seed, which);
    return (int)cudaGetLastError();
}

extern "C" int stream_device_run(stream_op op, float *c, const float *a, const float *b,
                                 size_t n, int sm_count, int blocks_per_sm, void *stream)
{
    // One pass over the array (blocks_per_sm = 0), or a persistent grid of
    // blocks_per_sm blocks on every SM looping over it.
    size_t per_block = (size_t)kThreads * kUnroll;
    size_t blocks = (n / 4 + per_block - 1) / per_block;
    if (blocks_per_sm > 0 && blocks > (size_t)sm_count * blocks_per_sm)
        blocks = (size_t)sm_count * blocks_per_sm;
    if (blocks == 0)
        blocks = 1;
    if (blocks > 0x7fffffffu)
        return (int)cudaErrorInvalidValue;
    cudaStream_t s = (cudaStream_t)stream;
    switch (op) {
    case OP_COPY:
        stream_kernel<OP_COPY><<<(unsigned)blocks, kThreads, 0, s>>>(c, a, b, n);
        break;
    case OP_SCALE:
        stream_kernel<OP_SCALE><<<(unsigned)blocks, kThreads, 0, s>>>(c, a, b, n);
        break;
    case OP_ADD:
        stream_kernel<OP_ADD><<<(unsigned)blocks, kThreads, 0, s>>>(c, a, b, n);
        break;
    case OP_TRIAD:
        stream_kernel<OP_TRIAD><<<(unsigned)blocks, kThreads, 0, s>>>(c, a, b, n);
        break;
    case OP_FMA:
        stream_kernel<OP_FMA><<<(unsigned)blocks, kThreads, 0, s>>>(c, a, b, n);
        break;
    }
    return (int)cudaGetLastError();
}
