/* sgemm ladder step 01, naive: one thread per element of C, with threadIdx.x walking N.
 * Neighbouring lanes therefore read B and write C one column (ldb/ldc floats) apart: every
 * lane of a warp touches its own cache line.  The point of the step is that slowness. */
#include "common.cuh"

namespace
{

constexpr int kBlock = 32; /* 32x32 = 1024 threads per block */

__global__ void __launch_bounds__(kBlock *kBlock)
    sgemm_naive_kernel(int M, int N, int K, float alpha, const float *__restrict__ A, int lda,
                       const float *__restrict__ B, int ldb, float beta, const float *C0, float *C,
                       int ldc)
{
    const int n = blockIdx.x * kBlock + threadIdx.x;
    const int m = blockIdx.y * kBlock + threadIdx.y;
    if (m >= M || n >= N)
        return;
    const float *b = B + (size_t)n * ldb;
    float acc = 0.0f;
    for (int k = 0; k < K; k++)
        acc += A[sgemm_at(m, k, lda)] * b[k];
    sgemm_store(acc, alpha, beta, C0, C, sgemm_at(m, n, ldc));
}

} // namespace

SGEMM_LAUNCHER(naive)
{
    const dim3 block(kBlock, kBlock);
    const dim3 grid(CEIL_DIV(N, kBlock), CEIL_DIV(M, kBlock));
    auto kernel = sgemm_naive_kernel;
    kernel<<<grid, block, 0, stream>>>(M, N, K, alpha, A, lda, B, ldb, beta, C0, C, ldc);
    return cudaGetLastError();
}
