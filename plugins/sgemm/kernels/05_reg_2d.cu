/* sgemm ladder step 05, 2-D register tiling: a 128x128 CTA tile, 256 threads, each thread an
 * 8x8 block of C held in 64 registers.  Per k a thread loads 8 A and 8 B values from SMEM and
 * does 64 FMAs with them (an outer product): 4 FMAs per SMEM load instead of ~1. */
#include "common.cuh"

namespace
{

constexpr int kBM = 128, kBN = 128, kBK = 8, kTM = 8, kTN = 8;
constexpr int kThreads = (kBM / kTM) * (kBN / kTN); /* 256: a 16x16 grid of threads */
constexpr int kLoadsA = kBM * kBK / kThreads;       /* 4 elements per thread per tile */
constexpr int kLoadsB = kBN * kBK / kThreads;
constexpr int kStepA = kThreads / kBM, kStepB = kThreads / kBK; /* columns apart per load */

__global__ void __launch_bounds__(kThreads, 2)
    sgemm_reg_2d_kernel(int M, int N, int K, float alpha, const float *__restrict__ A, int lda,
                        const float *__restrict__ B, int ldb, float beta, const float *C0, float *C,
                        int ldc)
{
    /* Both tiles as they lie in global memory: As[k][m] and Bs[n][k].  The B fragment of a
     * thread is therefore 8 words kBK apart; step 06 transposes B so it can be read 128 bits
     * at a time. */
    __shared__ float As[kBK][kBM];
    __shared__ float Bs[kBN][kBK];

    const int t = threadIdx.x;
    const int tm = t % (kBM / kTM), tn = t / (kBM / kTM);
    const int m0 = blockIdx.x * kBM, n0 = blockIdx.y * kBN;
    /* Loaders: consecutive lanes walk down a column of A (128 B per warp) and down a column of
     * B (8 lanes per column, four 32-byte sectors per warp). */
    const int am = t % kBM, ak = t / kBM;
    const int bk = t % kBK, bn = t / kBK;

    float acc[kTM][kTN] = {};
    float a[kTM], b[kTN];

    for (int k0 = 0; k0 < K; k0 += kBK) {
#pragma unroll
        for (int r = 0; r < kLoadsA; r++)
            As[ak + r * kStepA][am] = sgemm_load1(A, lda, m0 + am, k0 + ak + r * kStepA, M, K);
#pragma unroll
        for (int r = 0; r < kLoadsB; r++)
            Bs[bn + r * kStepB][bk] = sgemm_load1(B, ldb, k0 + bk, n0 + bn + r * kStepB, K, N);
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < kBK; kk++) {
#pragma unroll
            for (int i = 0; i < kTM; i++)
                a[i] = As[kk][tm * kTM + i];
#pragma unroll
            for (int j = 0; j < kTN; j++)
                b[j] = Bs[tn * kTN + j][kk];
#pragma unroll
            for (int i = 0; i < kTM; i++)
#pragma unroll
                for (int j = 0; j < kTN; j++)
                    acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }

#pragma unroll
    for (int j = 0; j < kTN; j++) {
        const int n = n0 + tn * kTN + j;
#pragma unroll
        for (int i = 0; i < kTM; i++) {
            const int m = m0 + tm * kTM + i;
            if (m < M && n < N)
                sgemm_store(acc[i][j], alpha, beta, C0, C, sgemm_at(m, n, ldc));
        }
    }
}

} // namespace

SGEMM_LAUNCHER(reg_2d)
{
    const dim3 grid(CEIL_DIV(M, kBM), CEIL_DIV(N, kBN));
    auto kernel = sgemm_reg_2d_kernel;
    kernel<<<grid, kThreads, 0, stream>>>(M, N, K, alpha, A, lda, B, ldb, beta, C0, C, ldc);
    return cudaGetLastError();
}
