/* sgemm ladder step 02, coalesced: the naive kernel with threadIdx.x walking M instead, so a
 * warp reads 32 consecutive floats of a column of A, writes 32 consecutive floats of C, and
 * shares one element of B (a broadcast).  Same arithmetic, one transaction where there were 32. */
#include "common.cuh"

namespace
{

constexpr int kBlock = 32;

__global__ void __launch_bounds__(kBlock *kBlock)
    sgemm_coalesced_kernel(int M, int N, int K, float alpha, const float *__restrict__ A, int lda,
                           const float *__restrict__ B, int ldb, float beta, const float *C0,
                           float *C, int ldc)
{
    const int m = blockIdx.x * kBlock + threadIdx.x;
    const int n = blockIdx.y * kBlock + threadIdx.y;
    if (m >= M || n >= N)
        return;
    const float *b = B + (size_t)n * ldb;
    float acc = 0.0f;
    for (int k = 0; k < K; k++)
        acc += A[sgemm_at(m, k, lda)] * b[k];
    sgemm_store(acc, alpha, beta, C0, C, sgemm_at(m, n, ldc));
}

} // namespace

SGEMM_LAUNCHER(coalesced)
{
    const dim3 block(kBlock, kBlock);
    const dim3 grid(CEIL_DIV(M, kBlock), CEIL_DIV(N, kBlock));
    auto kernel = sgemm_coalesced_kernel;
    kernel<<<grid, block, 0, stream>>>(M, N, K, alpha, A, lda, B, ldb, beta, C0, C, ldc);
    return cudaGetLastError();
}
