/* sgemm ladder step 07, cp.async pipeline: the seed's main loop.  A 3-stage ring of SMEM tiles
 * is filled by cp.async (global -> SMEM without passing through registers and without blocking
 * the issuing warp) two tiles ahead of the one being multiplied, and the 8x8 outer products
 * read their fragments one k ahead into a second register buffer, so neither global nor SMEM
 * latency sits between dependent instructions.
 *
 * Tile 128x128x16, 256 threads (16x16), 8x8 contiguous outputs per thread as in steps 05-06.
 * A is copied 16 bytes at a time into As[k][m].  cp.async cannot transpose, and B's columns run
 * along K, so B is copied 4 bytes at a time into Bs[k][n]: lanes walk 8 k of 4 columns (full
 * 32-byte sectors from global memory).  Unswizzled, those 8 k land in one SMEM bank (8-way
 * store conflicts), and the A fragment reads (16 lanes, 32 bytes apart) conflict 2x over their
 * minimum; step 08 removes both with an XOR swizzle. */
#include "common.cuh"

namespace
{

constexpr int kBM = 128, kBN = 128, kBK = 16, kTM = 8, kTN = 8, kStages = 3;
constexpr int kThreads = (kBM / kTM) * (kBN / kTN);  /* 256 */
constexpr int kChunksA = kBM * kBK / (4 * kThreads); /* 16-byte copies of A per thread: 2 */
constexpr int kRowsB = kBK / 8, kColsB = kBN / 32;   /* 4-byte copies of B: 2 x 4 */
static_assert(kBK % 2 == 0, "register double buffering alternates per k");
static_assert(kThreads == 8 * 32, "B loader: 8 k x 32 columns per pass");

typedef float TileA[kBK][kBM];
typedef float TileB[kBK][kBN];

/* Issue the copies of one K tile into one stage; zero fill outside the matrices. */
__device__ __forceinline__ void load_tile(TileA &as, TileB &bs, const float *A, int lda,
                                          const float *B, int ldb, int M, int N, int K, int m0,
                                          int n0, int k0, bool vec_a)
{
    const int t = threadIdx.x;
#pragma unroll
    for (int r = 0; r < kChunksA; r++) {
        const int c = t + r * kThreads;
        const int m = 4 * (c % (kBM / 4)), k = c / (kBM / 4); /* a warp: 512 B of one column */
        cp_async_load4(&as[k][m], A, lda, m0 + m, k0 + k, M, K, vec_a);
    }
    const int bk = t % 8, bn = t / 8;
#pragma unroll
    for (int r1 = 0; r1 < kRowsB; r1++)
#pragma unroll
        for (int r2 = 0; r2 < kColsB; r2++) {
            const int k = bk + 8 * r1, n = bn + 32 * r2;
            cp_async_load1(&bs[k][n], B, ldb, k0 + k, n0 + n, K, N);
        }
}

/* The thread's A and B fragments at one k: two 128-bit loads each. */
__device__ __forceinline__ void load_frag(float (&a)[kTM], float (&b)[kTN], const TileA &as,
                                          const TileB &bs, int kk, int tm, int tn)
{
    const float4 a0 = *reinterpret_cast<const float4 *>(&as[kk][tm * kTM]);
    const float4 a1 = *reinterpret_cast<const float4 *>(&as[kk][tm * kTM + 4]);
    const float4 b0 = *reinterpret_cast<const float4 *>(&bs[kk][tn * kTN]);
    const float4 b1 = *reinterpret_cast<const float4 *>(&bs[kk][tn * kTN + 4]);
    a[0] = a0.x, a[1] = a0.y, a[2] = a0.z, a[3] = a0.w;
    a[4] = a1.x, a[5] = a1.y, a[6] = a1.z, a[7] = a1.w;
    b[0] = b0.x, b[1] = b0.y, b[2] = b0.z, b[3] = b0.w;
    b[4] = b1.x, b[5] = b1.y, b[6] = b1.z, b[7] = b1.w;
}

__global__ void __launch_bounds__(kThreads, 2)
    sgemm_cp_async_kernel(int M, int N, int K, float alpha, const float *__restrict__ A, int lda,
                          const float *__restrict__ B, int ldb, float beta, const float *C0,
                          float *C, int ldc)
{
    /* 3 x (8 + 8) KiB = 48 KiB, the static limit; two CTAs fit an SM's 228 KiB. */
    __shared__ __align__(16) TileA As[kStages];
    __shared__ __align__(16) TileB Bs[kStages];

    const int t = threadIdx.x;
    const int tm = t % (kBM / kTM), tn = t / (kBM / kTM);
    const int m0 = blockIdx.x * kBM, n0 = blockIdx.y * kBN;
    const bool vec_a = sgemm_vec4_ok(A, lda);
    const int tiles = CEIL_DIV(K, kBK);

    float acc[kTM][kTN] = {};
    float a[2][kTM], b[2][kTN];

    /* Prologue: tiles 0 .. kStages-2 in flight.  A group is committed even when there is no
     * tile left to load, so "all but kStages-2 groups done" always means "the next tile is
     * here" (an empty group completes at once). */
#pragma unroll
    for (int s = 0; s < kStages - 1; s++) {
        if (s < tiles)
            load_tile(As[s], Bs[s], A, lda, B, ldb, M, N, K, m0, n0, s * kBK, vec_a);
        cp_async_commit();
    }
    cp_async_wait<kStages - 2>();
    __syncthreads();
    load_frag(a[0], b[0], As[0], Bs[0], 0, tm, tn);

    int read = 0, write = kStages - 1;
    for (int tile = 0; tile < tiles; tile++) {
        /* The stage written here was last read in the previous iteration, before its closing
         * __syncthreads(), so no thread can still be reading it. */
        if (tile + kStages - 1 < tiles)
            load_tile(As[write], Bs[write], A, lda, B, ldb, M, N, K, m0, n0,
                      (tile + kStages - 1) * kBK, vec_a);
        cp_async_commit();

#pragma unroll
        for (int kk = 0; kk < kBK; kk++) {
            if (kk + 1 < kBK) /* fragments of k+1 load while k's 64 FMAs run */
                load_frag(a[(kk + 1) & 1], b[(kk + 1) & 1], As[read], Bs[read], kk + 1, tm, tn);
#pragma unroll
            for (int i = 0; i < kTM; i++)
#pragma unroll
                for (int j = 0; j < kTN; j++)
                    acc[i][j] += a[kk & 1][i] * b[kk & 1][j];
        }

        write = read;
        read = read + 1 == kStages ? 0 : read + 1;
        cp_async_wait<kStages - 2>(); /* this thread's copies of the next tile have landed */
        __syncthreads();              /* ... and everyone's; and the old stage is free */
        if (tile + 1 < tiles)
            load_frag(a[0], b[0], As[read], Bs[read], 0, tm, tn);
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

SGEMM_LAUNCHER(cp_async)
{
    const dim3 grid(CEIL_DIV(M, kBM), CEIL_DIV(N, kBN));
    auto kernel = sgemm_cp_async_kernel;
    kernel<<<grid, kThreads, 0, stream>>>(M, N, K, alpha, A, lda, B, ldb, beta, C0, C, ldc);
    return cudaGetLastError();
}
