/* sgemm ladder step 10, warp tiling: the fastest CUDA-core (FFMA only) SGEMM of the ladder,
 * autotuned over a handful of template configurations.
 *
 * Every configuration shares one kernel template:
 *   - Each warp owns a 64x32 tile of C; its 32 lanes form an 8 (M) x 4 (N) grid and lane
 *     (lm, ln) owns rows 4*lm + {0..3} and 32 + 4*lm + {0..3}, columns 4*ln + {0..3} and
 *     16 + 4*ln + {0..3} of it: an 8x8 block as 2x2 sub-blocks of 4x4.  Per k a warp reads 8
 *     distinct float4 of A (128 contiguous bytes) and 4 of B (64 contiguous bytes), one
 *     wavefront each, the rest broadcasts; 64 FFMA per 4 LDS.128 per thread.
 *   - A (column-major, M contiguous) lands in SMEM as As[k][m] straight from 16-byte cp.async:
 *     outer products along M want exactly that layout.
 *   - B (column-major, K contiguous) is transposed on the way in, Bs[k][n], by 4-byte cp.async
 *     (see the loader), so B too stays in the asynchronous multi-stage ring with no register
 *     staging; rows padded by 4 floats keep those copies and the fragment loads conflict-free.
 *   - A STAGES-deep cp.async ring with one barrier per K tile (BK = 16 or 32 k); fragments
 *     double-buffered in registers; __launch_bounds__ sized so that MIN_BLOCKS CTAs share an
 *     SM (two of the 256-thread ones: 16 warps).
 *   - Interior tiles copy without predicates; edge tiles zero-fill, and A falls back to 4-byte
 *     copies when A/lda are not 16-byte aligned or M % 4 != 0.  The epilogue stores float4
 *     (C0 loads batched ahead of the stores) when C/C0/ldc allow, guarded scalars otherwise.
 *   - Grouped rasterisation of the 1-D grid so that CTAs resident together share A and B
 *     panels in L2.
 *   - Optional split-K for shapes with too few output tiles to fill the GPU: each split writes
 *     its partial tile to a workspace and a second kernel sums the splits in a fixed order and
 *     applies alpha/beta once, so the result is deterministic.
 * warptile_tune() times every configuration on the caller's buffers and remembers the fastest
 * per shape; run_warptile() uses that choice, or a shape heuristic when nothing was tuned. */
#include "common.cuh"
#include "tune.cuh"

#include "10_warptile_cluster.cuh"

#include <algorithm>

namespace
{

/* ---- configuration ------------------------------------------------------------------------ */

constexpr int kWarpM = 64; /* warp tile rows; lanes 8 (M) x 4 (N), 8 rows per lane */
constexpr int kGroupM = 8; /* rasterisation: tile rows per group */

/* BK, the K tile, sets how much work one barrier and one round of loader index arithmetic are
 * spread over: 16 k is 1024 FFMA per thread between barriers, 32 k is 2048 for the same SMEM
 * per k, paid for with twice the SMEM per stage (fewer stages or CTAs per SM). */
/* WARP_N, the warp tile's columns: 32 (8x8 per lane, 64 FFMA per 4 LDS.128) or 64 (8x16 per
 * lane, 128 FFMA per 6 LDS.128, twice the accumulators: one 256-thread CTA per SM, as cuBLAS's
 * own SIMT kernel on the H200 is built). */
template <int WARPS_M_, int WARPS_N_, int BK_, int STAGES_, int MIN_BLOCKS_, int WARP_N_ = 32>
struct WtConfig {
    static constexpr int WARPS_M = WARPS_M_, WARPS_N = WARPS_N_, WARP_N = WARP_N_;
    static constexpr int NJ = WARP_N / 4;  /* accumulator columns per lane */
    static constexpr int NQ = WARP_N / 16; /* float4 of B per lane and k */
    static_assert(WARP_N == 32 || WARP_N == 64, "lanes own 4 columns in every 16");
    static constexpr int BM = kWarpM * WARPS_M, BN = WARP_N * WARPS_N, BK = BK_;
    static constexpr int THREADS = 32 * WARPS_M * WARPS_N;
    static constexpr int STAGES = STAGES_, MIN_BLOCKS = MIN_BLOCKS_;
    /* B rows (one k, BN columns) are padded by 4 floats: the transposing 4-byte copies of 8
     * consecutive k x 4 consecutive n per warp then hit 32 distinct banks (4k + n mod 32),
     * and rows stay 16-byte aligned for the 128-bit fragment loads. */
    static constexpr int B_LD = BN + 4;
    static constexpr int A_STAGE = BK * BM, B_STAGE = BK * B_LD; /* floats */
    static constexpr size_t SMEM = (size_t)STAGES * (A_STAGE + B_STAGE) * sizeof(float);
    static constexpr int A_CHUNKS = BM * BK / 4 / THREADS; /* 16-byte copies of A per thread */
    static constexpr int B_COPIES = BN * BK / THREADS;     /* 4-byte copies of B per thread */
    static_assert(A_CHUNKS * THREADS * 4 == BM * BK, "A tile must split evenly into chunks");
    static_assert(B_COPIES * THREADS == BN * BK, "B tile must split evenly into elements");
    static_assert(STAGES >= 2, "the ring needs two stages at least");
    static_assert(BK % 8 == 0, "B copies move 8 consecutive k per column (one 32-byte sector)");
    /* With B transposed before the GEMM (wt_transpose_b): 16-byte copies of B per thread */
    static constexpr int BT_CHUNKS = BN * BK / 4 / THREADS;
    static_assert(BT_CHUNKS * THREADS * 4 == BN * BK && THREADS % (BN / 4) == 0,
                  "a thread's transposed-B chunks must share their columns");
};

/* B transposed once per launch for the configurations that take it (BT): Bt is K x N with N
 * contiguous (element (k, n) at k * ldt + n), its rows padded to ldt = N rounded up to
 * kBtPadN and its K to kBtPadK, the padding zero, so that every tile of every such
 * configuration reads inside it without predicates. */
constexpr int kBtPadN = 256, kBtPadK = 32;

/* ---- tile loads ---------------------------------------------------------------------------
 * A (M contiguous) is copied as it lies: chunk q = tid + i*THREADS is rows 4*(q % (BM/4)) .. +3
 * of tile column k = q / (BM/4), so a warp copies 512 contiguous bytes of one column, and
 * since THREADS is a multiple of BM/4 all of a thread's chunks share their rows and sit
 * A_KSTEP columns apart.  Outer products along M want exactly this layout, As[k][m].
 *
 * B (K contiguous) must be transposed to Bs[k][n] so that a thread reads 4 consecutive columns
 * at one k with one 128-bit load.  cp.async cannot transpose 16-byte chunks, but its 4-byte
 * form can place every element: copy q = tid + i*THREADS takes k = q % 8 + 8*(nq / BN) and
 * n = nq % BN with nq = q / 8 (q < BN*BK, so nq / BN counts the BK/8 slices of 8 k: 0..1 at
 * BK = 16, 0..3 at BK = 32).  A warp (32 consecutive q) thus reads 8 consecutive k, k % 8 =
 * 0..7 of one slice, from each of 4 consecutive columns: one whole 32-byte sector per column
 * (when B is 32-byte aligned and ldb a multiple of 8; else the 32 bytes straddle two),
 * whatever BK is.  It writes Bs[k][n] at k*(BN + 4) + n, i.e. bank (4k + n) mod 32 since BN
 * is a multiple of 32; with k = 8j + 0..7 and n = 4c + 0..3 that is 4*(k % 8) + n % 4 + 4c
 * mod 32: the 32 banks once each, conflict-free.  (A warp reading 16 or 32 k of one column
 * instead, to touch fewer columns per request at BK = 32, would put k and k + 8 in one bank:
 * 2- or 4-way write conflicts, unless rows were padded by 2 or 1 floats, which breaks the
 * 16-byte row alignment of the 128-bit fragment loads.)  A thread's copies i = 0, 1, .. step
 * through the n ranges first (T8 = THREADS/8 columns apart), then the k slices, so they keep
 * k % 8 and n % T8 and differ only by compile-time offsets.  No registers stage the data, so
 * B keeps the asynchronous multi-stage pipeline; the price is 4x more copy instructions for
 * B: 8 per thread per 16-k tile in the 128x128 configuration against 1024 FFMA, 16 per 32-k
 * tile against 2048.
 *
 * Interior tiles (the CTA inside M and N, the K tile inside K) take a fast path: two running
 * pointers and compile-time offsets, no predicates, a few integer instructions per copy.
 * Edge tiles form every address from 32-bit indices, zero-fill what lies outside the
 * matrices, and hand cp.async only addresses inside them (the matrix base when predicated
 * off).  Tiles are loaded strictly in order, one per call. */
template <class Cfg, bool VEC, bool BT = false> struct WtLoader {
    static constexpr int A_KSTEP = Cfg::THREADS / (Cfg::BM / 4);
    static constexpr int BT_KSTEP = Cfg::THREADS / (Cfg::BN / 4); /* BT: rows between chunks */
    static constexpr int T8 = Cfg::THREADS / 8; /* B columns covered per copy index */
    static_assert(Cfg::THREADS % (Cfg::BM / 4) == 0, "A chunks of a thread must share rows");
    static_assert(Cfg::BN % T8 == 0, "B copies of a thread must keep k % 8 and n % T8");

    const float *a_ptr; /* A[a_row, a_col]: the thread's first A chunk of the next tile */
    const float *b_ptr; /* B[b_k, n0 + b_n]: the thread's first B copy of the next tile */
    int a_row;          /* first row of the thread's A chunks (clamped to 0 when outside A) */
    int a_rows;         /* rows of those chunks inside A: 0..4 */
    int a_col;          /* column of A (= k) of the thread's first A chunk in the next tile */
    int b_k;            /* row of B (= k) of the thread's first B copy in the next tile */
    int a_dst, b_dst;   /* float offsets of the first A chunk / B copy inside a stage */

    /* BT: B is Bt (wt_transpose_b) and ldb its ldt; chunk q = tid + i*THREADS of the tile is
     * row k = q / (BN/4), columns 4*(q % (BN/4)) .. +3, so a warp copies 512 contiguous bytes
     * of a row (BN >= 128) into one row of Bs, and a thread's chunks sit BT_KSTEP rows apart. */
    __device__ __forceinline__ WtLoader(const float *A, int lda, const float *B, int ldb, int M,
                                        int N, int m0, int n0, int k_first, int tid)
    {
        const int m = 4 * (tid % (Cfg::BM / 4)), ak = tid / (Cfg::BM / 4);
        a_rows = min(max(M - (m0 + m), 0), 4);
        a_row = a_rows > 0 ? m0 + m : 0;
        a_col = k_first + ak;
        a_dst = ak * Cfg::BM + m;
        a_ptr = A + a_row + (size_t)a_col * lda; /* dereferenced only on interior tiles */
        if (BT) {
            const int bk = tid / (Cfg::BN / 4), bc = 4 * (tid % (Cfg::BN / 4));
            b_k = k_first + bk;
            b_dst = bk * Cfg::B_LD + bc;
            b_ptr = B + (size_t)b_k * ldb + n0 + bc;
            return;
        }
        const int bn = tid / 8;
        b_k = k_first + tid % 8;
        b_dst = (tid % 8) * Cfg::B_LD + bn;
        b_ptr = B + (size_t)min(n0 + bn, N - 1) * ldb + b_k;
    }

    /* BT: the tile's B chunks, never predicated (Bt is padded to every tile). */
    __device__ __forceinline__ void load_bt(float *bs, int ldb)
    {
#pragma unroll
        for (int i = 0; i < Cfg::BT_CHUNKS; i++)
            cp_async_16(bs + b_dst + i * BT_KSTEP * Cfg::B_LD, b_ptr + (size_t)(i * BT_KSTEP) * ldb,
                        true);
    }

    /* Copy index i of B: tile column b_n + n_off(i), tile row (k) tid % 8 + k_off(i). */
    __host__ __device__ static constexpr int n_off(int i)
    {
        return (i * T8) % Cfg::BN;
    }
    __host__ __device__ static constexpr int k_off(int i)
    {
        return 8 * ((i * T8) / Cfg::BN);
    }

    /* Copies the next K tile into the stage.  `interior`: the CTA's rows and columns are all
     * inside C (so every A row and B column it reads exists). */
    __device__ __forceinline__ void load(float *as, float *bs, const float *A, int lda,
                                         const float *B, int ldb, int N, int K, int n0,
                                         bool interior)
    {
        const int k0 = a_col - (a_dst / Cfg::BM); /* first k of the tile */
        if (interior && k0 + Cfg::BK <= K) {
#pragma unroll
            for (int i = 0; i < Cfg::A_CHUNKS; i++) {
                float *dst = as + a_dst + i * A_KSTEP * Cfg::BM;
                const float *src = a_ptr + (size_t)(i * A_KSTEP) * lda;
                if (VEC) {
                    cp_async_16(dst, src, true);
                } else {
#pragma unroll
                    for (int e = 0; e < 4; e++)
                        cp_async_4(dst + e, src + e, true);
                }
            }
            if (BT) {
                load_bt(bs, ldb);
            } else {
#pragma unroll
                for (int i = 0; i < Cfg::B_COPIES; i++)
                    cp_async_4(bs + b_dst + k_off(i) * Cfg::B_LD + n_off(i),
                               b_ptr + (size_t)n_off(i) * ldb + k_off(i), true);
            }
        } else {
#pragma unroll
            for (int i = 0; i < Cfg::A_CHUNKS; i++) {
                const int k = a_col + i * A_KSTEP;
                const bool k_ok = k < K;
                const float *src = A + a_row + (size_t)(k_ok ? k : 0) * lda;
                float *dst = as + a_dst + i * A_KSTEP * Cfg::BM;
                if (VEC) {
                    /* M % 4 == 0 here, so a chunk is entirely inside or entirely outside */
                    const bool p = k_ok && a_rows == 4;
                    cp_async_16(dst, p ? src : A, p);
                } else {
#pragma unroll
                    for (int e = 0; e < 4; e++) {
                        const bool p = k_ok && e < a_rows;
                        cp_async_4(dst + e, p ? src + e : A, p);
                    }
                }
            }
            if (BT) {
                load_bt(bs, ldb);
            } else {
                const int bn = b_dst % Cfg::B_LD; /* tid / 8 */
#pragma unroll
                for (int i = 0; i < Cfg::B_COPIES; i++) {
                    const int n = n0 + bn + n_off(i), k = b_k + k_off(i);
                    const bool p = n < N && k < K;
                    const float *src = p ? B + (size_t)n * ldb + k : B;
                    cp_async_4(bs + b_dst + k_off(i) * Cfg::B_LD + n_off(i), src, p);
                }
            }
        }
        a_col += Cfg::BK;
        b_k += Cfg::BK;
        a_ptr += (size_t)Cfg::BK * lda;
        b_ptr += BT ? (size_t)Cfg::BK * ldb : (size_t)Cfg::BK;
    }
};

/* ---- the kernel ---------------------------------------------------------------------------
 * Grouped rasterisation: consecutive tile indices (pid) walk down a band of kGroupM tile rows,
 * column after column, so the CTAs resident at one time read few distinct A panels and share
 * each B panel. */
__device__ __forceinline__ void wt_tile_of(int pid, int tiles_m, int tiles_n, int &tile_m,
                                           int &tile_n)
{
    const int per_group = kGroupM * tiles_n;
    const int group = pid / per_group;
    const int first_m = group * kGroupM;
    const int rows = min(tiles_m - first_m, kGroupM);
    const int in_group = pid - group * per_group;
    tile_m = first_m + in_group % rows;
    tile_n = in_group / rows; /* < tiles_n since pid < tiles */
}

/* Copies K tile t (of the CTA's ktiles) into its stage of the ring (As, Bs), tiles strictly in
 * order, and commits a cp.async group, empty past the last tile, so that a wait count always
 * means "tile t has landed". */
template <class Cfg, bool VEC, bool BT>
__device__ __forceinline__ void
wt_load_stage(WtLoader<Cfg, VEC, BT> &loader, float *As, float *Bs, int t, int ktiles,
              const float *A, int lda, const float *B, int ldb, int N, int K, int n0, bool interior)
{
    if (t < ktiles) {
        const int s = t % Cfg::STAGES;
        loader.load(As + s * Cfg::A_STAGE, Bs + s * Cfg::B_STAGE, A, lda, B, ldb, N, K, n0,
                    interior);
    }
    cp_async_commit();
}

/* The epilogue of wt_kernel: rows m0 + a_off + 32*h + e, columns n0 + b_off + 16*(j/4) + j%4.  A
 * warp's float4 store covers 128 contiguous bytes of each of 4 columns. */
template <int NJ>
__device__ __forceinline__ void wt_epilogue(const float (&acc)[8][NJ], int M, int N, float alpha,
                                            float beta, const float *C0, float *C, int ldc,
                                            float *ws, int ldw, size_t ws_split, int m0, int n0,
                                            int a_off, int b_off, bool interior)
{
    const bool to_ws = ws != nullptr;
    float *const out = to_ws ? ws + (size_t)blockIdx.z * ws_split : C;
    const int ldo = to_ws ? ldw : ldc;
    const float oa = to_ws ? 1.0f : alpha, ob = to_ws ? 0.0f : beta;
    const bool vec_out =
        to_ws ? true : (sgemm_vec4_ok(C, ldc) && (beta == 0.0f || sgemm_vec4_ok(C0, ldc)));
    if (vec_out && interior) {
        /* All 8 C0 loads of a half (of each 8 columns) are issued before any store, so a
         * short-K tile (where the epilogue is a large share of the time) waits for memory
         * twice, not 16 times.  C0 may alias C: each element is read by the thread that writes
         * it, before the write. */
#pragma unroll
        for (int hb = 0; hb < 2 * (NJ / 8); hb++) {
            const int h = hb % 2, jb = 8 * (hb / 2);
            const int m = m0 + a_off + 32 * h;
            float4 c[8];
            if (ob != 0.0f) {
#pragma unroll
                for (int jj = 0; jj < 8; jj++) {
                    const int j = jb + jj;
                    c[jj] = *reinterpret_cast<const float4 *>(
                        C0 + sgemm_at(m, n0 + b_off + 16 * (j / 4) + (j % 4), ldo));
                }
            }
#pragma unroll
            for (int jj = 0; jj < 8; jj++) {
                const int j = jb + jj;
                float4 v = make_float4(oa * acc[4 * h][j], oa * acc[4 * h + 1][j],
                                       oa * acc[4 * h + 2][j], oa * acc[4 * h + 3][j]);
                if (ob != 0.0f) {
                    v.x = fmaf(ob, c[jj].x, v.x);
                    v.y = fmaf(ob, c[jj].y, v.y);
                    v.z = fmaf(ob, c[jj].z, v.z);
                    v.w = fmaf(ob, c[jj].w, v.w);
                }
                *reinterpret_cast<float4 *>(
                    out + sgemm_at(m, n0 + b_off + 16 * (j / 4) + (j % 4), ldo)) = v;
            }
        }
        return;
    }
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int m = m0 + a_off + 32 * h;
#pragma unroll
        for (int j = 0; j < NJ; j++) {
            const int n = n0 + b_off + 16 * (j / 4) + (j % 4);
            if (n >= N || m >= M)
                continue;
            const size_t idx = sgemm_at(m, n, ldo);
            if (vec_out && m + 3 < M) {
                sgemm_store4(make_float4(acc[4 * h][j], acc[4 * h + 1][j], acc[4 * h + 2][j],
                                         acc[4 * h + 3][j]),
                             oa, ob, C0, out, idx);
            } else {
#pragma unroll
                for (int e = 0; e < 4; e++)
                    if (m + e < M)
                        sgemm_store(acc[4 * h + e][j], oa, ob, C0, out, idx + e);
            }
        }
    }
}

/* CTA (b, 0, z) owns tile pid_base + b.  With ws == nullptr it computes all of K and writes
 * C = alpha*acc + beta*C0; otherwise it computes K split z (ktiles_per_split K tiles) and
 * writes its raw partial sums to split z of the workspace (leading dimension ldw, split
 * stride ws_split), and wt_splitk_reduce finishes the tile.  Classic split-K launches every
 * tile split; tail splitting launches the full waves unsplit and then the tiles of the last,
 * mostly empty wave split.  BT: B is Bt, B transposed and padded by wt_transpose_b (ldb its
 * row length), copied in 16-byte chunks.  CLUSTER: the K splits of a tile form one thread-block
 * cluster and sum their partial tiles through distributed shared memory (10_warptile_cluster.cuh).
 */
template <class Cfg, bool VEC, bool CLUSTER = false, bool BT = false>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS)
    wt_kernel(int M, int N, int K, float alpha, const float *__restrict__ A, int lda,
              const float *__restrict__ B, int ldb, float beta, const float *C0, float *C, int ldc,
              int tiles_m, int tiles_n, int pid_base, int ktiles_per_split, float *ws, int ldw,
              size_t ws_split)
{
    extern __shared__ __align__(16) float wt_smem[];
    float *const As = wt_smem;
    float *const Bs = wt_smem + Cfg::STAGES * Cfg::A_STAGE;

    const int pid = pid_base + blockIdx.x;
    int tile_m, tile_n;
    wt_tile_of(pid, tiles_m, tiles_n, tile_m, tile_n);
    const int m0 = tile_m * Cfg::BM, n0 = tile_n * Cfg::BN;

    const int ktiles_total = CEIL_DIV(K, Cfg::BK);
    const int kt_begin = blockIdx.z * ktiles_per_split;
    const int ktiles = max(min(ktiles_per_split, ktiles_total - kt_begin), 0);

    const int tid = threadIdx.x;
    const int warp = tid / 32, lane = tid % 32;
    const int wm = warp % Cfg::WARPS_M, wn = warp / Cfg::WARPS_M;
    const int lm = lane % 8, ln = lane / 8;

    WtLoader<Cfg, VEC, BT> loader(A, lda, B, ldb, M, N, m0, n0, kt_begin * Cfg::BK, tid);
    const bool interior = m0 + Cfg::BM <= M && n0 + Cfg::BN <= N;

    /* Prologue: STAGES-1 tiles in flight. */
#pragma unroll
    for (int s = 0; s < Cfg::STAGES - 1; s++)
        wt_load_stage(loader, As, Bs, s, ktiles, A, lda, B, ldb, N, K, n0, interior);

    float acc[8][Cfg::NJ];
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < Cfg::NJ; j++)
            acc[i][j] = 0.0f;

    /* The lane's rows: wm*64 + lm*4 + {0..3} and +32; columns: wn*WARP_N + ln*4 + {0..3} and
     * +16 (and +32, +48 with 64-wide warp tiles).  Per k a warp reads 8 distinct float4 of one
     * As row (128 contiguous bytes) and 4 distinct float4 of one Bs row per 16 columns: one
     * wavefront each, the rest are broadcasts. */
    const int a_off = wm * kWarpM + lm * 4;
    const int b_off = wn * Cfg::WARP_N + ln * 4;

    for (int kt = 0; kt < ktiles; kt++) {
        cp_async_wait<Cfg::STAGES - 2>();
        /* Tile kt is visible to all threads, and every thread has finished computing on tile
         * kt-1, whose stage the load below overwrites. */
        __syncthreads();
        wt_load_stage(loader, As, Bs, kt + Cfg::STAGES - 1, ktiles, A, lda, B, ldb, N, K, n0,
                      interior);

        const int s = kt % Cfg::STAGES;
        const float *as = As + s * Cfg::A_STAGE + a_off;
        const float *bs = Bs + s * Cfg::B_STAGE + b_off;
        /* Fragments double-buffered in registers: the loads for k+1 are issued before the 64
         * FFMA of k, which hide their latency. */
        float4 fa[2][2], fb[2][Cfg::NQ];
        fa[0][0] = *reinterpret_cast<const float4 *>(as);
        fa[0][1] = *reinterpret_cast<const float4 *>(as + 32);
#pragma unroll
        for (int q = 0; q < Cfg::NQ; q++)
            fb[0][q] = *reinterpret_cast<const float4 *>(bs + 16 * q);
#pragma unroll
        for (int k = 0; k < Cfg::BK; k++) {
            const int cur = k & 1, nxt = cur ^ 1;
            if (k + 1 < Cfg::BK) {
                fa[nxt][0] = *reinterpret_cast<const float4 *>(as + (k + 1) * Cfg::BM);
                fa[nxt][1] = *reinterpret_cast<const float4 *>(as + (k + 1) * Cfg::BM + 32);
#pragma unroll
                for (int q = 0; q < Cfg::NQ; q++)
                    fb[nxt][q] =
                        *reinterpret_cast<const float4 *>(bs + (k + 1) * Cfg::B_LD + 16 * q);
            }
            const float av[8] = {fa[cur][0].x, fa[cur][0].y, fa[cur][0].z, fa[cur][0].w,
                                 fa[cur][1].x, fa[cur][1].y, fa[cur][1].z, fa[cur][1].w};
            float bv[Cfg::NJ];
#pragma unroll
            for (int q = 0; q < Cfg::NQ; q++) {
                bv[4 * q] = fb[cur][q].x;
                bv[4 * q + 1] = fb[cur][q].y;
                bv[4 * q + 2] = fb[cur][q].z;
                bv[4 * q + 3] = fb[cur][q].w;
            }
#pragma unroll
            for (int i = 0; i < 8; i++)
#pragma unroll
                for (int j = 0; j < Cfg::NJ; j++)
                    acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
        }
    }
    /* Drain the (empty) trailing groups so no copy is in flight at exit. */
    cp_async_wait<0>();

#if !defined(SGEMM_HOST_EMULATION)
    if constexpr (CLUSTER) {
        wt_cluster_epilogue<Cfg>(acc, wt_smem, M, N, alpha, beta, C0, C, ldc, m0, n0, a_off, b_off);
        return;
    }
#endif
    wt_epilogue(acc, M, N, alpha, beta, C0, C, ldc, ws, ldw, ws_split, m0, n0, a_off, b_off,
                interior);
}

/* Second pass of split-K: C = alpha * sum_s ws[s] + beta * C0 for the split tiles (direct ..
 * tiles-1), the splits summed in order so that the result does not depend on scheduling.
 * Memory-bound, so it is built for memory-level parallelism: wt_reduce_chunks() CTAs of
 * kWtReduceThreads per tile, each thread one float4 of 4 consecutive rows (coalesced along M),
 * its `splits` loads independent of each other.  (The first version ran one CTA per tile with
 * each thread walking 64 elements one at a time: ncu on an H100 read 365 GB/s from it, 36.6 µs
 * for the tail split of 4096^3.)  The workspace's columns are float4-aligned (ldw % 4 == 0),
 * and rows past M in them are never written, so the last rows of C are read one by one. */
constexpr int kWtReduceThreads = 256;
template <class Cfg> constexpr int wt_reduce_chunks()
{
    return CEIL_DIV(Cfg::BM * Cfg::BN / 4, kWtReduceThreads);
}
template <class Cfg>
__global__ void wt_splitk_reduce(int M, int N, int tiles_m, int tiles_n, int direct, int splits,
                                 const float *__restrict__ ws, int ldw, size_t ws_split,
                                 float alpha, float beta, const float *C0, float *C, int ldc)
{
    constexpr int kQuads = Cfg::BM / 4; /* float4 per tile column */
    const int chunk = blockIdx.x % wt_reduce_chunks<Cfg>();
    const int q = chunk * kWtReduceThreads + threadIdx.x;
    if (q >= Cfg::BM * Cfg::BN / 4)
        return;
    int tile_m, tile_n;
    wt_tile_of(direct + blockIdx.x / wt_reduce_chunks<Cfg>(), tiles_m, tiles_n, tile_m, tile_n);
    const int m = tile_m * Cfg::BM + 4 * (q % kQuads), n = tile_n * Cfg::BN + q / kQuads;
    if (m >= M || n >= N)
        return;
    const float *p = ws + sgemm_at(m, n, ldw);
    const bool vec = sgemm_vec4_ok(C, ldc) && (beta == 0.0f || sgemm_vec4_ok(C0, ldc));
    float4 sum;
    if (m + 3 >= M) { /* the last 1-3 rows of C: the workspace holds only rows < M */
        float x = 0.0f, y = 0.0f, z = 0.0f;
        for (int s = 0; s < splits; s++) {
            const float *ps = p + (size_t)s * ws_split;
            x += ps[0];
            y += m + 1 < M ? ps[1] : 0.0f;
            z += m + 2 < M ? ps[2] : 0.0f;
        }
        sum = make_float4(x, y, z, 0.0f);
    } else {
        sum = *reinterpret_cast<const float4 *>(p);
#pragma unroll 4
        for (int s = 1; s < splits; s++) {
            const float4 v = *reinterpret_cast<const float4 *>(p + (size_t)s * ws_split);
            sum.x += v.x;
            sum.y += v.y;
            sum.z += v.z;
            sum.w += v.w;
        }
    }
    sgemm_store_rows(sum, alpha, beta, C0, C, sgemm_at(m, n, ldc), M - m, vec);
}

/* ---- host side ------------------------------------------------------------------------------ */

/* The split-K workspace (common.cuh): grown in stream order, freed by warptile_release(). */
SgemmWorkspace splitk_ws;

/* B -> Bt for the BT configurations: Bt[k * ldt + n] = B[k + n * ldb], zero outside K x N, for
 * k < Kp and n < ldt.  32x32 tiles through shared memory (blocks of 32x8 threads): read along
 * k, written along n, both coalesced. */
__global__ void wt_transpose_b(int N, int K, const float *__restrict__ B, int ldb, int ldt,
                               float *__restrict__ bt)
{
    __shared__ float t[32][33];
    const int n0 = blockIdx.x * 32, k0 = blockIdx.y * 32;
    const int tx = threadIdx.x, ty = threadIdx.y;
#pragma unroll
    for (int j = 0; j < 32; j += 8) {
        const int n = n0 + ty + j, k = k0 + tx;
        t[ty + j][tx] = n < N && k < K ? B[(size_t)n * ldb + k] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int j = 0; j < 32; j += 8)
        bt[(size_t)(k0 + ty + j) * ldt + n0 + tx] = t[tx][ty + j];
}

/* Bt's workspace, grown in stream order and freed by warptile_release(). */
SgemmWorkspace bt_ws;

/* Transposes a.B into bt_ws (wt_transpose_b) and points b at it: a.B's arguments with B = Bt
 * and ldb = its row length. */
cudaError_t wt_prepare_bt(const SgemmArgs &a, SgemmArgs &b)
{
    const int ldt = CEIL_DIV(a.N, kBtPadN) * kBtPadN, kp = CEIL_DIV(a.K, kBtPadK) * kBtPadK;
    float *bt = nullptr;
    cudaError_t e = bt_ws.get((size_t)ldt * kp * sizeof(float), a.stream, &bt);
    if (e != cudaSuccess)
        return e;
    wt_transpose_b<<<dim3(ldt / 32, kp / 32), dim3(32, 8), 0, a.stream>>>(a.N, a.K, a.B, a.ldb, ldt,
                                                                          bt);
    b = a;
    b.B = bt;
    b.ldb = ldt;
    return cudaGetLastError();
}

/* How many K splits a configuration with split-K enabled uses for this shape: enough CTAs to
 * fill every SM about twice over, each split keeping at least 128 k (8 K tiles of 16, 4 of 32)
 * so that the pipeline prologue stays small, and at most 16. */
int choose_splits(int tiles, int ktiles, int bk, int sms, int ctas_per_sm)
{
    const int want = 2 * sms * ctas_per_sm;
    if (tiles >= want / 2)
        return 1;
    int s = CEIL_DIV(want, tiles);
    s = std::min(s, std::max(ktiles * bk / 128, 1));
    s = std::min(s, 16);
    return std::max(s, 1);
}

template <class Cfg, bool VEC, bool CLUSTER = false, bool BT = false> cudaError_t prepare_kernel()
{
    /* Once per instantiation: allow the dynamic SMEM above 48 KB and ask for the largest
     * shared-memory carveout so MIN_BLOCKS CTAs fit. */
    static const cudaError_t once = [] {
        cudaError_t e =
            cudaFuncSetAttribute((const void *)wt_kernel<Cfg, VEC, CLUSTER, BT>,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize, (int)Cfg::SMEM);
        if (e == cudaSuccess)
            e = cudaFuncSetAttribute((const void *)wt_kernel<Cfg, VEC, CLUSTER, BT>,
                                     cudaFuncAttributePreferredSharedMemoryCarveout, 100);
        return e;
    }();
    return once;
}

/* Launches the kernel over `tiles` tiles from pid_base, each in `splits` K splits (ws set) or
 * whole (ws == nullptr, splits 1). */
template <class Cfg, bool VEC, bool BT = false>
cudaError_t launch_kernel(const SgemmArgs &a, int tiles, int tiles_m, int tiles_n, int pid_base,
                          int splits, int per_split, float *ws, int ldw, size_t ws_split)
{
    cudaError_t e = prepare_kernel<Cfg, VEC, false, BT>();
    if (e != cudaSuccess)
        return e;
    wt_kernel<Cfg, VEC, false, BT><<<dim3(tiles, 1, splits), Cfg::THREADS, Cfg::SMEM, a.stream>>>(
        a.M, a.N, a.K, a.alpha, a.A, a.lda, a.B, a.ldb, a.beta, a.C0, a.C, a.ldc, tiles_m, tiles_n,
        pid_base, per_split, ws, ldw, ws_split);
    return cudaGetLastError();
}

/* The launch of `tiles` x `splits` CTAs of Cfg in clusters (1, 1, splits); attr holds the
 * cluster attribute the configuration points to. */
template <class Cfg>
cudaLaunchConfig_t cluster_launch_config(int tiles, int splits, cudaStream_t stream,
                                         cudaLaunchAttribute *attr)
{
    attr->id = cudaLaunchAttributeClusterDimension;
    attr->val.clusterDim.x = 1;
    attr->val.clusterDim.y = 1;
    attr->val.clusterDim.z = (unsigned)splits;
    cudaLaunchConfig_t lc = {};
    lc.gridDim = dim3(tiles, 1, splits);
    lc.blockDim = dim3(Cfg::THREADS);
    lc.dynamicSmemBytes = Cfg::SMEM;
    lc.stream = stream;
    lc.attrs = attr;
    lc.numAttrs = 1;
    return lc;
}

/* Launches every tile in `splits` K splits of per_split K tiles, the splits of a tile one
 * thread-block cluster (1, 1, splits) that reduces through distributed shared memory
 * (10_warptile_cluster.cuh).  Compute capability 9.0 only; refused in the CPU emulation. */
template <class Cfg, bool VEC>
cudaError_t launch_cluster_kernel(const SgemmArgs &a, int tiles, int tiles_m, int tiles_n,
                                  int splits, int per_split)
{
#if defined(SGEMM_HOST_EMULATION)
    (void)a, (void)tiles, (void)tiles_m, (void)tiles_n, (void)splits, (void)per_split;
    return cudaErrorNotSupported;
#else
    static_assert(Cfg::SMEM >= sizeof(float) * Cfg::BM * Cfg::BN,
                  "the ring must hold the partial tile the cluster reduces");
    cudaError_t e = prepare_kernel<Cfg, VEC, true>();
    if (e != cudaSuccess)
        return e;
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t lc = cluster_launch_config<Cfg>(tiles, splits, a.stream, &attr);
    return cudaLaunchKernelEx(&lc, wt_kernel<Cfg, VEC, true>, a.M, a.N, a.K, a.alpha, a.A, a.lda,
                              a.B, a.ldb, a.beta, a.C0, a.C, a.ldc, tiles_m, tiles_n, 0, per_split,
                              (float *)nullptr, 0, (size_t)0);
#endif
}

/* slots[s]: CTAs resident at once when wt_kernel<Cfg, VEC, true> runs in clusters of s (s = 2,
 * 4, 8): the runtime's cudaOccupancyMaxActiveClusters times s (10_warptile_cluster.cuh says why
 * this is not SMs x CTAs per SM); 0 when the runtime cannot tell, and always in the CPU
 * emulation.  Asked once per device, all sizes together, so a launch reads a cached table. */
template <class Cfg, bool VEC> void cluster_slots(int (&slots)[kWtMaxClusterSplits + 1])
{
#if defined(SGEMM_HOST_EMULATION)
    std::fill(slots + 2, slots + kWtMaxClusterSplits + 1, 0);
#else
    static std::mutex mu;
    static int cached_dev = -1;
    static int cached[kWtMaxClusterSplits + 1];
    int dev = -1;
    (void)cudaGetDevice(&dev);
    std::lock_guard<std::mutex> lock(mu);
    if (dev != cached_dev) {
        for (int s = 2; s <= kWtMaxClusterSplits; s *= 2) {
            cudaLaunchAttribute attr;
            const cudaLaunchConfig_t lc = cluster_launch_config<Cfg>(1, s, 0, &attr);
            int clusters = 0;
            cudaError_t e = prepare_kernel<Cfg, VEC, true>();
            if (e == cudaSuccess)
                e = cudaOccupancyMaxActiveClusters(&clusters, wt_kernel<Cfg, VEC, true>, &lc);
            if (e != cudaSuccess) {
                (void)cudaGetLastError(); /* not sticky: the size is simply not chosen */
                clusters = 0;
            }
            cached[s] = clusters * s;
        }
        cached_dev = dev;
    }
    std::copy(cached + 2, cached + kWtMaxClusterSplits + 1, slots + 2);
#endif
}

/* How a configuration treats K: never split; classic split-K (every tile, when the tiles are
 * too few to fill the SMs); split only the tiles of a last wave that would run mostly empty
 * (the rest of the grid is unchanged); or split every tile in a cluster when the tiles are too
 * few (wt_choose_cluster_splits). */
enum class Split { kNone, kAll, kTail, kCluster };

/* Tail splitting: with `slots` CTAs resident at once, the tiles beyond the last full wave
 * (rem of them) would run on rem slots while the others idle.  If that wave is at most half
 * full, each of its tiles is split into as many K ranges as fit the free slots (at most 16,
 * each at least 128 k); 1 means no split. */
int choose_tail_splits(int tiles, int ktiles, int bk, int slots)
{
    const int rem = tiles % slots;
    if (tiles < slots || rem == 0 || 2 * rem > slots)
        return 1;
    return std::max(std::min({slots / rem, ktiles * bk / 128, 16}), 1);
}

/* 16-byte copies of A need an aligned base and leading dimension, and M a multiple of 4 so that
 * a chunk never straddles the matrix edge (the VEC kernels). */
bool wt_a_vec_ok(const SgemmArgs &a)
{
    return sgemm_vec4_ok(a.A, a.lda) && a.M % 4 == 0;
}

/* BT configurations (no split): B transposed into Bt first, then the kernel on Bt. */
template <class Cfg> cudaError_t launch_bt(const SgemmArgs &a)
{
    const int tiles_m = CEIL_DIV(a.M, Cfg::BM), tiles_n = CEIL_DIV(a.N, Cfg::BN);
    SgemmArgs b;
    cudaError_t e = wt_prepare_bt(a, b);
    if (e != cudaSuccess)
        return e;
    const bool vec = wt_a_vec_ok(a);
    const int tiles = tiles_m * tiles_n, ktiles = CEIL_DIV(a.K, Cfg::BK);
    return vec ? launch_kernel<Cfg, true, true>(b, tiles, tiles_m, tiles_n, 0, 1, ktiles, nullptr,
                                                0, 0)
               : launch_kernel<Cfg, false, true>(b, tiles, tiles_m, tiles_n, 0, 1, ktiles, nullptr,
                                                 0, 0);
}

template <class Cfg, Split SPLIT> cudaError_t launch(const SgemmArgs &a)
{
    const int tiles_m = CEIL_DIV(a.M, Cfg::BM), tiles_n = CEIL_DIV(a.N, Cfg::BN);
    const int tiles = tiles_m * tiles_n;
    const int ktiles = CEIL_DIV(a.K, Cfg::BK);
    const int slots = sgemm_sm_count() * Cfg::MIN_BLOCKS;
    /* B moves as 4-byte copies here, A in 16-byte ones where wt_a_vec_ok */
    const bool vec = wt_a_vec_ok(a);
    if constexpr (SPLIT == Split::kCluster) {
#if defined(SGEMM_HOST_EMULATION)
        return cudaErrorNotSupported; /* the emulation runs no cluster (10_warptile_cluster.cuh) */
#endif
        if (!sgemm_device_is_sm90())
            return cudaErrorNotSupported;
        int cap[kWtMaxClusterSplits + 1] = {0, slots};
        if (vec)
            cluster_slots<Cfg, true>(cap);
        else
            cluster_slots<Cfg, false>(cap);
        const int want = wt_choose_cluster_splits(tiles, ktiles, Cfg::BK, cap);
        const int per_split = CEIL_DIV(ktiles, want);
        const int splits = CEIL_DIV(ktiles, per_split); /* no empty trailing split */
        if (splits > 1)
            return vec ? launch_cluster_kernel<Cfg, true>(a, tiles, tiles_m, tiles_n, splits,
                                                          per_split)
                       : launch_cluster_kernel<Cfg, false>(a, tiles, tiles_m, tiles_n, splits,
                                                           per_split);
        return vec ? launch_kernel<Cfg, true>(a, tiles, tiles_m, tiles_n, 0, 1, ktiles, nullptr, 0,
                                              0)
                   : launch_kernel<Cfg, false>(a, tiles, tiles_m, tiles_n, 0, 1, ktiles, nullptr, 0,
                                               0);
    }
    int splits = 1;
    if (SPLIT == Split::kAll)
        splits = choose_splits(tiles, ktiles, Cfg::BK, sgemm_sm_count(), Cfg::MIN_BLOCKS);
    else if (SPLIT == Split::kTail)
        splits = choose_tail_splits(tiles, ktiles, Cfg::BK, slots);
    const int per_split = CEIL_DIV(ktiles, splits);
    splits = CEIL_DIV(ktiles, per_split); /* no empty trailing split */
    const int direct = splits == 1 ? tiles : SPLIT == Split::kAll ? 0 : tiles - tiles % slots;
    const int split_tiles = tiles - direct;

    float *ws = nullptr;
    int ldw = 0;
    size_t ws_split = 0;
    if (split_tiles > 0) {
        ldw = (a.M + 3) / 4 * 4; /* float4-aligned columns for the 128-bit partial stores */
        ws_split = (size_t)ldw * (size_t)a.N;
        cudaError_t e = splitk_ws.get(ws_split * splits * sizeof(float), a.stream, &ws);
        if (e != cudaSuccess)
            return e;
    }

    cudaError_t e = cudaSuccess;
    if (direct > 0)
        e = vec ? launch_kernel<Cfg, true>(a, direct, tiles_m, tiles_n, 0, 1, ktiles, nullptr, 0, 0)
                : launch_kernel<Cfg, false>(a, direct, tiles_m, tiles_n, 0, 1, ktiles, nullptr, 0,
                                            0);
    if constexpr (SPLIT == Split::kAll ||
                  SPLIT == Split::kTail) { /* (only these build the reduce) */
        if (e != cudaSuccess || split_tiles == 0)
            return e;
        /* The split tiles' CTAs start once the full waves before them have finished (same
         * stream): they fill the slots those waves leave, instead of a mostly idle last wave. */
        e = vec ? launch_kernel<Cfg, true>(a, split_tiles, tiles_m, tiles_n, direct, splits,
                                           per_split, ws, ldw, ws_split)
                : launch_kernel<Cfg, false>(a, split_tiles, tiles_m, tiles_n, direct, splits,
                                            per_split, ws, ldw, ws_split);
        if (e != cudaSuccess)
            return e;
        wt_splitk_reduce<Cfg>
            <<<split_tiles * wt_reduce_chunks<Cfg>(), kWtReduceThreads, 0, a.stream>>>(
                a.M, a.N, tiles_m, tiles_n, direct, splits, ws, ldw, ws_split, a.alpha, a.beta,
                a.C0, a.C, a.ldc);
        e = cudaGetLastError();
    }
    return e;
}

/* The configurations, in warptile_config_name() order.  MIN_BLOCKS is the number of CTAs per
 * SM the register cap is sized for (64K registers / (THREADS * MIN_BLOCKS), at most 255); the
 * SMEM of MIN_BLOCKS CTAs, plus 1 KB the hardware reserves per CTA, must fit the 228 KB of an
 * H100/H200 SM (kMaxSmemPerSm below checks it; an A100's 164 KB holds fewer of the larger
 * ones, which then simply run fewer CTAs per SM). */
using Cfg128x128s3 = WtConfig<2, 4, 16, 3, 2>;
using Cfg128x128s4 = WtConfig<2, 4, 16, 4, 2>;
using Cfg128x256s3 = WtConfig<2, 8, 16, 3, 1>;
using Cfg256x128s3 = WtConfig<4, 4, 16, 3, 1>;
using Cfg64x128s3 = WtConfig<1, 4, 16, 3, 3>;
using Cfg128x64s3 = WtConfig<2, 2, 16, 3, 4>;
using Cfg64x64s4 = WtConfig<1, 2, 16, 4, 6>;
/* 32-k tiles (appended: configuration indices are quoted in notes and results): half the
 * barriers, and half the per-tile loader and loop arithmetic per FFMA, of their 16-k
 * counterparts.  The SMEM per stage doubles, so 128x128 keeps two CTAs per SM with 3 stages
 * (2 x 97.5 KB; 4 stages would need 2 x 130 KB), the 4-warp 128x64 tile gets three CTAs with
 * 3 stages (3 x 73.5 KB; four would need 4 x 73.5), and 256x128 runs one 16-warp CTA with 3
 * stages (145.5 KB).  (128x64x32 with 2 stages would fit four CTAs, 4 x 49 KB, but at the
 * 128-register cap that implies its 16-byte A copies spill on sm_90a.) */
using Cfg128x128x32s3 = WtConfig<2, 4, 32, 3, 2>;
using Cfg128x64x32s3 = WtConfig<2, 2, 32, 3, 3>;
using Cfg256x128x32s3 = WtConfig<4, 4, 32, 3, 1>;
/* 64x64 warp tiles (appended): 8 warps, one CTA per SM (255 registers at most). */
using Cfg256x128s4w64 = WtConfig<4, 2, 16, 4, 1, 64>;
using Cfg128x256s4w64 = WtConfig<2, 4, 16, 4, 1, 64>;
using Cfg256x128x8s4w64 = WtConfig<4, 2, 8, 4, 1, 64>;

constexpr size_t kMaxSmemPerSm = 228 * 1024, kSmemReservedPerCta = 1024;
template <class Cfg> constexpr bool fits_sm()
{
    return Cfg::MIN_BLOCKS * (Cfg::SMEM + kSmemReservedPerCta) <= kMaxSmemPerSm;
}
static_assert(fits_sm<Cfg128x128s3>() && fits_sm<Cfg128x128s4>() && fits_sm<Cfg128x256s3>() &&
                  fits_sm<Cfg256x128s3>() && fits_sm<Cfg64x128s3>() && fits_sm<Cfg128x64s3>() &&
                  fits_sm<Cfg64x64s4>() && fits_sm<Cfg128x128x32s3>() &&
                  fits_sm<Cfg128x64x32s3>() && fits_sm<Cfg256x128x32s3>() &&
                  fits_sm<Cfg256x128s4w64>() && fits_sm<Cfg128x256s4w64>() &&
                  fits_sm<Cfg256x128x8s4w64>(),
              "MIN_BLOCKS CTAs of every configuration must fit one SM's shared memory");

/* Tuned in this order (tune.cuh); the index is what *_config and the forced configurations use. */
const SgemmConfig kConfigs[] = {
    {"128x128x16_s3_8w", launch<Cfg128x128s3, Split::kNone>},
    {"128x128x16_s4_8w", launch<Cfg128x128s4, Split::kNone>},
    {"128x256x16_s3_16w", launch<Cfg128x256s3, Split::kNone>},
    {"256x128x16_s3_16w", launch<Cfg256x128s3, Split::kNone>},
    {"64x128x16_s3_4w", launch<Cfg64x128s3, Split::kNone>},
    {"128x64x16_s3_4w", launch<Cfg128x64s3, Split::kNone>},
    {"64x64x16_s4_2w", launch<Cfg64x64s4, Split::kNone>},
    {"128x128x16_s4_8w_splitk", launch<Cfg128x128s4, Split::kAll>},
    {"64x128x16_s3_4w_splitk", launch<Cfg64x128s3, Split::kAll>},
    {"128x128x32_s3_8w", launch<Cfg128x128x32s3, Split::kNone>},
    {"128x64x32_s3_4w", launch<Cfg128x64x32s3, Split::kNone>},
    {"256x128x32_s3_16w", launch<Cfg256x128x32s3, Split::kNone>},
    {"128x64x32_s3_4w_tailsplit", launch<Cfg128x64x32s3, Split::kTail>},
    /* Split-K through thread-block clusters (compute capability 9.0): every tile in as many K
     * splits as fill the SMs, reduced in distributed shared memory; unsplit where the tiles
     * already fill them (then the same kernel as the configuration without the suffix). */
    {"128x128x16_s4_8w_cluster", launch<Cfg128x128s4, Split::kCluster>, true},
    {"128x64x16_s3_4w_cluster", launch<Cfg128x64s3, Split::kCluster>, true},
    {"128x64x32_s3_4w_cluster", launch<Cfg128x64x32s3, Split::kCluster>, true},
    /* 64x64 warp tiles (8x16 per lane), one 256-thread CTA per SM with up to 255 registers:
     * the shape of cuBLAS's SIMT kernel on the H200 (256x128x8, 3 stages, warps 4x2). */
    {"256x128x16_s4_8w_w64", launch<Cfg256x128s4w64, Split::kNone>},
    {"128x256x16_s4_8w_w64", launch<Cfg128x256s4w64, Split::kNone>},
    {"256x128x8_s4_8w_w64", launch<Cfg256x128x8s4w64, Split::kNone>},
    /* B transposed once per launch (wt_transpose_b), so that B too moves in 16-byte copies
     * (a quarter of the copy instructions of the 4-byte transposing ones), at the cost of a
     * pass over B (HISTORY-fast.md part 11). */
    {"256x128x16_s4_8w_w64_bt", launch_bt<Cfg256x128s4w64>},
    {"128x64x32_s3_4w_bt", launch_bt<Cfg128x64x32s3>},
    {"128x128x16_s4_8w_bt", launch_bt<Cfg128x128s4>},
};

/* Shape heuristic used when the shape was not tuned: the 128x128 tile whenever it gives at
 * least about one full wave, split-K when K is long and the tiles are few, and smaller tiles
 * otherwise. */
int default_config(int M, int N, int K)
{
    const int sms = sgemm_sm_count();
    const int tiles128 = CEIL_DIV(M, 128) * CEIL_DIV(N, 128);
    if (tiles128 >= sms)
        return 1;
    if (K >= 1024)
        return 7;
    const int tiles64x128 = CEIL_DIV(M, 64) * CEIL_DIV(N, 128);
    if (tiles64x128 >= sms)
        return 4;
    return 6;
}

/* The tuned choice per shape, and the tune loop (tune.cuh). */
SgemmTuner tuner(kConfigs, default_config);

} // namespace

extern "C" int warptile_config_count(void)
{
    return tuner.count();
}

extern "C" const char *warptile_config_name(int idx)
{
    return tuner.name(idx);
}

extern "C" cudaError_t run_warptile_config(int config, int M, int N, int K, float alpha,
                                           const float *A, int lda, const float *B, int ldb,
                                           float beta, const float *C0, float *C, int ldc,
                                           cudaStream_t stream)
{
    return tuner.run_config(config, {M, N, K, alpha, A, lda, B, ldb, beta, C0, C, ldc, stream});
}

extern "C" SGEMM_LAUNCHER(warptile)
{
    return tuner.run({M, N, K, alpha, A, lda, B, ldb, beta, C0, C, ldc, stream});
}

extern "C" cudaError_t warptile_tune(int M, int N, int K, float alpha, const float *A, int lda,
                                     const float *B, int ldb, float beta, const float *C0, float *C,
                                     int ldc, cudaStream_t stream, int *chosen_config)
{
    return tuner.tune({M, N, K, alpha, A, lda, B, ldb, beta, C0, C, ldc, stream}, chosen_config);
}

/* Frees the split-K and Bt workspaces after all work on the device has finished (synchronises the
 * device); safe to call more than once. */
extern "C" void warptile_release(void)
{
    splitk_ws.release();
    bt_ws.release();
}
