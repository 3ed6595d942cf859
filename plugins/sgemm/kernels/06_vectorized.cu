/* sgemm ladder step 06, vectorised: step 05 with 128-bit global loads (one float4 of A and one
 * of B per thread per tile) and the B tile transposed on its way into SMEM, so both fragments
 * of the outer product are read with 128-bit LDS (4 per k instead of 16 scalar loads).
 *
 * Column-major nn is the mirror image of the row-major case in the SGEMM_CUDA ladder: there A
 * is transposed; here A's columns already hold M contiguous, and B is the tile whose
 * contiguous direction (K) is not the one the fragment needs (N). */
#include "common.cuh"

namespace
{

constexpr int kBM = 128, kBN = 128, kBK = 8, kTM = 8, kTN = 8;
constexpr int kThreads = (kBM / kTM) * (kBN / kTN); /* 256 */
static_assert(kBM * kBK == 4 * kThreads && kBN * kBK == 4 * kThreads, "one float4 per thread");

__global__ void __launch_bounds__(kThreads, 2)
    sgemm_vectorized_kernel(int M, int N, int K, float alpha, const float *__restrict__ A, int lda,
                            const float *__restrict__ B, int ldb, float beta, const float *C0,
                            float *C, int ldc)
{
    __shared__ __align__(16) float As[kBK][kBM]; /* As[k][m] */
    __shared__ __align__(16) float Bs[kBK][kBN]; /* Bs[k][n]: transposed */

    const int t = threadIdx.x;
    const int tm = t % (kBM / kTM), tn = t / (kBM / kTM);
    const int m0 = blockIdx.x * kBM, n0 = blockIdx.y * kBN;

    /* Columns whose start is 16-byte aligned take float4 loads; anything else (an odd lda, an
     * offset pointer) and the edges of the matrix take the guarded scalar path. */
    const bool vec_a = sgemm_vec4_ok(A, lda);
    const bool vec_b = sgemm_vec4_ok(B, ldb);
    const int am = 4 * (t % (kBM / 4)), ak = t / (kBM / 4); /* a warp reads 512 B of a column */
    const int bk = 4 * (t % (kBK / 4)), bn = t / (kBK / 4); /* 2 lanes per 32 B of a column */

    float acc[kTM][kTN] = {};
    float a[kTM], b[kTN];

    for (int k0 = 0; k0 < K; k0 += kBK) {
        const float4 va = sgemm_load4(A, lda, m0 + am, k0 + ak, M, K, vec_a);
        const float4 vb = sgemm_load4(B, ldb, k0 + bk, n0 + bn, K, N, vec_b);
        *reinterpret_cast<float4 *>(&As[ak][am]) = va;
        Bs[bk + 0][bn] = vb.x;
        Bs[bk + 1][bn] = vb.y;
        Bs[bk + 2][bn] = vb.z;
        Bs[bk + 3][bn] = vb.w;
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < kBK; kk++) {
            const float4 a0 = *reinterpret_cast<const float4 *>(&As[kk][tm * kTM]);
            const float4 a1 = *reinterpret_cast<const float4 *>(&As[kk][tm * kTM + 4]);
            const float4 b0 = *reinterpret_cast<const float4 *>(&Bs[kk][tn * kTN]);
            const float4 b1 = *reinterpret_cast<const float4 *>(&Bs[kk][tn * kTN + 4]);
            a[0] = a0.x, a[1] = a0.y, a[2] = a0.z, a[3] = a0.w;
            a[4] = a1.x, a[5] = a1.y, a[6] = a1.z, a[7] = a1.w;
            b[0] = b0.x, b[1] = b0.y, b[2] = b0.z, b[3] = b0.w;
            b[4] = b1.x, b[5] = b1.y, b[6] = b1.z, b[7] = b1.w;
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

SGEMM_LAUNCHER(vectorized)
{
    const dim3 grid(CEIL_DIV(M, kBM), CEIL_DIV(N, kBN));
    auto kernel = sgemm_vectorized_kernel;
    kernel<<<grid, kThreads, 0, stream>>>(M, N, K, alpha, A, lda, B, ldb, beta, C0, C, ldc);
    return cudaGetLastError();
}
