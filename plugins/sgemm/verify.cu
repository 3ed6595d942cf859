/* Device-side helpers of sgemm's verify(): upcasting the inputs for the cublasDgemm reference
 * and the two sums of the relative Frobenius error, so that no M x N matrix has to cross PCIe.
 * Not timed. */
#include "kernels/common.cuh"
#include "sgemm.h"

namespace
{

constexpr int kThreads = 256;
constexpr int kMaxBlocks = 4096; /* grid-stride beyond this; plenty for any GPU */

__global__ void upcast_kernel(const float *__restrict__ src, double *__restrict__ dst, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        dst[i] = (double)src[i];
}

__global__ void __launch_bounds__(kThreads)
    error_sums_kernel(const float *__restrict__ c, const double *__restrict__ ref, size_t n,
                      double *sums)
{
    double diff = 0.0, norm = 0.0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        const double d = (double)c[i] - ref[i];
        diff += d * d;
        norm += ref[i] * ref[i];
    }
    for (int off = 16; off > 0; off /= 2) {
        diff += __shfl_down_sync(0xffffffffu, diff, off);
        norm += __shfl_down_sync(0xffffffffu, norm, off);
    }
    __shared__ double part[2][kThreads / 32];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) {
        part[0][warp] = diff;
        part[1][warp] = norm;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < kThreads / 32; w++) {
            diff += part[0][w];
            norm += part[1][w];
        }
        atomicAdd(&sums[0], diff);
        atomicAdd(&sums[1], norm);
    }
}

unsigned blocks_for(size_t n)
{
    const size_t b = (n + kThreads - 1) / kThreads;
    return (unsigned)(b < kMaxBlocks ? (b > 0 ? b : 1) : kMaxBlocks);
}

} // namespace

extern "C" cudaError_t sgemm_upcast(const float *src, double *dst, size_t n, cudaStream_t stream)
{
    upcast_kernel<<<blocks_for(n), kThreads, 0, stream>>>(src, dst, n);
    return cudaGetLastError();
}

extern "C" cudaError_t sgemm_error_sums(const float *c, const double *ref, size_t n, double *sums,
                                        cudaStream_t stream)
{
    error_sums_kernel<<<blocks_for(n), kThreads, 0, stream>>>(c, ref, n, sums);
    return cudaGetLastError();
}
