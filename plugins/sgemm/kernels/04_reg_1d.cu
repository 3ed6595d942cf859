/* sgemm ladder step 04, 1-D register tiling: each thread keeps 8 outputs of one row of C in
 * registers (8 columns).  Per k it loads one A value and reuses it for 8 FMAs with 8 B values
 * that the whole warp shares (broadcast), so SMEM loads per FMA fall from 2 to about 1.1. */
#include "common.cuh"

namespace
{

constexpr int kBM = 64, kBN = 64, kBK = 8, kTN = 8;
constexpr int kThreads = kBM * kBN / kTN; /* 512 */
static_assert(kThreads == kBM * kBK && kThreads == kBN * kBK, "one A and one B element per thread");

__global__ void __launch_bounds__(kThreads)
    sgemm_reg_1d_kernel(int M, int N, int K, float alpha, const float *__restrict__ A, int lda,
                        const float *__restrict__ B, int ldb, float beta, const float *C0, float *C,
                        int ldc)
{
    __shared__ float As[kBK][kBM]; /* As[k][m], as A lies in memory */
    __shared__ float Bs[kBN][kBK]; /* Bs[n][k], as B lies in memory */

    const int t = threadIdx.x;
    const int tm = t % kBM; /* the row this thread owns */
    const int tn = t / kBM; /* its 8 columns are tn*8 .. tn*8+7 (one value per warp) */
    const int m0 = blockIdx.x * kBM, n0 = blockIdx.y * kBN;

    /* Loader coordinates: A by columns of 64 (a warp reads 128 contiguous bytes), B by
     * columns of 8 (a warp reads four 32-byte sectors). */
    const int am = t % kBM, ak = t / kBM;
    const int bk = t % kBK, bn = t / kBK;

    float acc[kTN] = {};
    for (int k0 = 0; k0 < K; k0 += kBK) {
        As[ak][am] = sgemm_load1(A, lda, m0 + am, k0 + ak, M, K);
        Bs[bn][bk] = sgemm_load1(B, ldb, k0 + bk, n0 + bn, K, N);
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < kBK; kk++) {
            const float a = As[kk][tm];
#pragma unroll
            for (int j = 0; j < kTN; j++)
                acc[j] += a * Bs[tn * kTN + j][kk];
        }
        __syncthreads();
    }

    const int m = m0 + tm;
    if (m >= M)
        return;
#pragma unroll
    for (int j = 0; j < kTN; j++) {
        const int n = n0 + tn * kTN + j;
        if (n < N)
            sgemm_store(acc[j], alpha, beta, C0, C, sgemm_at(m, n, ldc));
    }
}

} // namespace

SGEMM_LAUNCHER(reg_1d)
{
    const dim3 grid(CEIL_DIV(M, kBM), CEIL_DIV(N, kBN));
    auto kernel = sgemm_reg_1d_kernel;
    kernel<<<grid, kThreads, 0, stream>>>(M, N, K, alpha, A, lda, B, ldb, beta, C0, C, ldc);
    return cudaGetLastError();
}
