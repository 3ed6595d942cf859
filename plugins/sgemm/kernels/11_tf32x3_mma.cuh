/* sgemm step 11, 3xTF32, kernel 1: mma.sync (sm_80+), and its launch (run_mma).  Part of the
 * translation unit 11_tf32x3.cu. */
#ifndef KBENCH_SGEMM_TF32X3_MMA_CUH
#define KBENCH_SGEMM_TF32X3_MMA_CUH

#include "11_tf32x3_common.cuh"

namespace
{

/* =========================================================================================
 * Kernel 1: mma.sync (sm_80+)
 * ========================================================================================= */

/* B raw tile for mma.sync: Bs[n][k], 128 rows of 32 floats padded to 36.  The tf32 B fragment
 * reads row g at k = q and q+4: banks 4g + q (36 = 4 mod 32), all distinct.  The rows stay
 * 16-byte aligned (144 bytes) for the 16-byte copies. */
struct BOffPadded {
    static constexpr int LD = kBK + 4, ROW = LD;
    __device__ __forceinline__ static int at(int n, int c)
    {
        return n * LD + 4 * c;
    }
};
constexpr int kBStagePadded = kBN * BOffPadded::LD;
constexpr int kMmaStages = 4;
constexpr size_t kMmaSmem = (size_t)kMmaStages * (kAStage + kBStagePadded) * sizeof(float);

/* Warps 2 (M) x 4 (N), each 64x32: 4 m16 x 4 n8 MMA tiles.  Lane (g = lane/4, q = lane%4) of
 * MMA tile (i, j) holds C rows 16i + g (+8) and columns 8j + 2q (+1) of the warp tile. */
template <bool VEC>
__global__ void __launch_bounds__(kThreads, 1)
    tf32x3_mma_kernel(int M, int N, int K, float alpha, const float *__restrict__ A, int lda,
                      const float *__restrict__ B, int ldb, float beta, const float *C0, float *C,
                      int ldc, int tiles_m, int tiles_n)
{
    extern __shared__ __align__(16) float tf_smem[];
    float *const As = tf_smem;
    float *const Bs = tf_smem + kMmaStages * kAStage;

    int m0, n0;
    tile_coords(tiles_m, tiles_n, m0, n0);
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int wm = warp % 2, wn = warp / 2;
    const int g = lane / 4, q = lane % 4;
    const bool interior = m0 + kBM <= M && n0 + kBN <= N;
    const int ktiles = CEIL_DIV(K, kBK);

    Tf32Loader<VEC, BOffPadded> loader(A, lda, B, ldb, M, N, m0, n0, tid);
#pragma unroll
    for (int s = 0; s < kMmaStages - 1; s++) {
        if (s < ktiles)
            loader.load(As + s * kAStage, Bs + s * kBStagePadded, A, lda, B, ldb, M, N, K, m0, n0,
                        interior, tid);
        cp_async_commit();
    }

    float acc[4][4][4], part[4][4][4];
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int r = 0; r < 4; r++)
                acc[i][j][r] = 0.0f;

    const int a_off = q * kALd + wm * 64 + g;             /* As[q][wm*64 + g] */
    const int b_off = (wn * 32 + g) * BOffPadded::LD + q; /* Bs[wn*32 + g][q] */

    for (int kt = 0; kt < ktiles; kt++) {
        cp_async_wait<kMmaStages - 2>();
        /* tile kt visible to all; every warp is done with tile kt-1, whose stage is refilled */
        __syncthreads();
        {
            const int nt = kt + kMmaStages - 1;
            if (nt < ktiles) {
                const int s = nt % kMmaStages;
                loader.load(As + s * kAStage, Bs + s * kBStagePadded, A, lda, B, ldb, M, N, K, m0,
                            n0, interior, tid);
            }
            cp_async_commit();
        }
        const int s = kt % kMmaStages;
        const float *as = As + s * kAStage + a_off;
        const float *bs = Bs + s * kBStagePadded + b_off;
#pragma unroll
        for (int kk = 0; kk < kBK / 8; kk++) {
            /* B fragments of the k-step for the warp's 4 n8 tiles, then one m16 tile of A at
             * a time (12 MMAs each): 16 + 8 fragment registers live instead of 48. */
            uint32_t bb[4][2], bsm[4][2];
#pragma unroll
            for (int j = 0; j < 4; j++) {
                const float *p = bs + 8 * j * BOffPadded::LD + kk * 8;
                split_tf32(p[0], bb[j][0], bsm[j][0]); /* (k = q,   n = g) */
                split_tf32(p[4], bb[j][1], bsm[j][1]); /* (k = q+4, n = g) */
            }
#pragma unroll
            for (int i = 0; i < 4; i++) {
                uint32_t ab[4], asml[4];
                const float *p = as + kk * 8 * kALd + 16 * i;
                split_tf32(p[0], ab[0], asml[0]);            /* (g,   q)   */
                split_tf32(p[8], ab[1], asml[1]);            /* (g+8, q)   */
                split_tf32(p[4 * kALd], ab[2], asml[2]);     /* (g,   q+4) */
                split_tf32(p[4 * kALd + 8], ab[3], asml[3]); /* (g+8, q+4) */
#pragma unroll
                for (int j = 0; j < 4; j++) {
                    if (kk == 0)
                        mma_tf32_zero(part[i][j], asml, bb[j]);
                    else
                        mma_tf32(part[i][j], asml, bb[j]);
                    mma_tf32(part[i][j], ab, bsm[j]);
                    mma_tf32(part[i][j], ab, bb[j]);
                }
            }
        }
        /* Second level of the accumulation: round-to-nearest fp32 adds once per K tile. */
#pragma unroll
        for (int i = 0; i < 4; i++)
#pragma unroll
            for (int j = 0; j < 4; j++)
#pragma unroll
                for (int r = 0; r < 4; r++)
                    acc[i][j][r] += part[i][j][r];
    }
    cp_async_wait<0>();

    /* result e = 16i + 4j + r: MMA tile (i, j), register r */
    store_results([&](int e) { return acc[e / 16][(e / 4) % 4][e % 4]; },
                  [&](int e, int &m, int &n) {
                      m = m0 + wm * 64 + 16 * (e / 16) + g + 8 * ((e % 4) / 2);
                      n = n0 + wn * 32 + 8 * ((e / 4) % 4) + 2 * q + (e % 2);
                  },
                  interior, M, N, alpha, beta, C0, C, ldc);
}

/* ---- host side ------------------------------------------------------------------------------ */

template <bool VEC> cudaError_t launch_mma(const SgemmArgs &a)
{
    static const cudaError_t once = set_smem(tf32x3_mma_kernel<VEC>, kMmaSmem);
    if (once != cudaSuccess)
        return once;
    const int tiles_m = CEIL_DIV(a.M, kBM), tiles_n = CEIL_DIV(a.N, kBN);
    tf32x3_mma_kernel<VEC><<<tiles_m * tiles_n, kThreads, kMmaSmem, a.stream>>>(
        a.M, a.N, a.K, a.alpha, a.A, a.lda, a.B, a.ldb, a.beta, a.C0, a.C, a.ldc, tiles_m, tiles_n);
    return cudaGetLastError();
}

cudaError_t run_mma(const SgemmArgs &a)
{
    return vec_ok(a) ? launch_mma<true>(a) : launch_mma<false>(a);
}

} // namespace

#endif
