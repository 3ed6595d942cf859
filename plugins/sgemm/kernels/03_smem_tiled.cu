/* sgemm ladder step 03, shared-memory tiling: a 32x32 block stages 32x32 tiles of A and B in
 * SMEM, so each element fetched from global memory is used 32 times instead of once.  Still one
 * output per thread, so every FMA costs two SMEM loads: the next steps attack that ratio. */
#include "common.cuh"

namespace
{

constexpr int kTile = 32; /* CTA tile 32x32, K step 32, 1024 threads */

__global__ void __launch_bounds__(kTile *kTile)
    sgemm_smem_tiled_kernel(int M, int N, int K, float alpha, const float *__restrict__ A, int lda,
                            const float *__restrict__ B, int ldb, float beta, const float *C0,
                            float *C, int ldc)
{
    /* As[k][m]: a column of A stays contiguous.  Bs[n][k]: a column of B stays contiguous; the
     * compute loop reads Bs[ty][kk], the same word for the whole warp (broadcast). */
    __shared__ float As[kTile][kTile];
    __shared__ float Bs[kTile][kTile];

    const int tx = threadIdx.x, ty = threadIdx.y;
    const int m0 = blockIdx.x * kTile, n0 = blockIdx.y * kTile;
    float acc = 0.0f;

    for (int k0 = 0; k0 < K; k0 += kTile) {
        As[ty][tx] = sgemm_load1(A, lda, m0 + tx, k0 + ty, M, K);
        Bs[ty][tx] = sgemm_load1(B, ldb, k0 + tx, n0 + ty, K, N);
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < kTile; kk++)
            acc += As[kk][tx] * Bs[ty][kk];
        /* The next iteration overwrites the tiles other threads may still be reading. */
        __syncthreads();
    }
    if (m0 + tx < M && n0 + ty < N)
        sgemm_store(acc, alpha, beta, C0, C, sgemm_at(m0 + tx, n0 + ty, ldc));
}

} // namespace

SGEMM_LAUNCHER(smem_tiled)
{
    const dim3 block(kTile, kTile);
    const dim3 grid(CEIL_DIV(M, kTile), CEIL_DIV(N, kTile));
    auto kernel = sgemm_smem_tiled_kernel;
    kernel<<<grid, block, 0, stream>>>(M, N, K, alpha, A, lda, B, ldb, beta, C0, C, ldc);
    return cudaGetLastError();
}
