/* sgemm ladder step 11, 3xTF32: fp32 GEMM on the tensor cores at fp32-level accuracy.
 *
 * Each fp32 input x is split on chip into big = tf32(x) (rounded to nearest) and
 * small = tf32(x - big); x - big is exact in fp32 and small keeps its leading 11 bits, so
 * big + small holds x to 2^-23 relative.  A*B is then small*big + big*small + big*big
 * (small*small, below 2^-22 relative, is dropped), each product on the tensor cores with fp32
 * accumulation, the small products first.  The tensor cores' fp32 accumulation truncates, so
 * summing all of K in their accumulator would drift (by about 4e-5 relative at K = 4096 in a
 * CPU model of that rounding, where fp32 FFMA gets 1e-6); both kernels therefore accumulate a
 * short run of K (32 for mma_sync, 64 for wgmma) on the tensor cores and add it to a separate
 * fp32 accumulator with round-to-nearest FADDs (two-level accumulation: 3.5e-7 and 5.8e-7 in
 * the same model at K = 4096, better than sequential FFMA).
 *
 * Two kernels, both 128x128x32 CTA tiles of 256 threads with a cp.async ring fed straight
 * from the column-major inputs (A tile as As[k][m], B tile as Bs[n][k]: neither is transposed
 * in global memory, nothing is pre-split):
 *   - mma_sync (sm_80+): mma.sync.m16n8k8 tf32, 8 warps of 64x32; fragments are read from
 *     padded SMEM with conflict-free 32-bit loads and split in registers.
 *   - wgmma (sm_90a only): two warpgroups of 64x128, wgmma.m64n128k8 with A from registers
 *     (split there, as above) and B from SMEM through a matrix descriptor.  wgmma reads tf32
 *     only K-major, which B already is; a split pass per K tile turns the raw B tile into
 *     big and small copies in the 128-byte-swizzled layout the descriptor describes, while
 *     the tensor cores work on the previous tile.
 * run_tf32x3() takes the wgmma kernel on a compute capability 9.0 device and mma_sync
 * elsewhere; tf32x3_tune() times the configurations that can run here. */
#include "common.cuh"
#include "tune.cuh"

#include <algorithm>

namespace
{

constexpr int kBM = 128, kBN = 128, kBK = 32;
constexpr int kThreads = 256;
constexpr int kGroupM = 16; /* rasterisation: tile rows per group */

/* A raw tile: As[k][m], 32 rows of 128 floats padded to 136.  The tf32 A fragment of a warp
 * reads rows q and q+4 (q = lane % 4) at columns g and g+8 (g = lane / 4): with a row stride
 * of 136 = 8 (mod 32) words the 32 lanes hit banks 8q + g, all distinct. */
constexpr int kALd = kBM + 8;
constexpr int kAStage = kBK * kALd; /* floats */

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define TF32X3_HAVE_WGMMA 1
#endif

/* ---- PTX wrappers --------------------------------------------------------------------------
 * The only inline assembly of the file.  The CPU emulation used to test the index math
 * (SGEMM_HOST_EMULATION) supplies host versions of exactly these functions. */
#ifndef SGEMM_HOST_EMULATION
__device__ __forceinline__ void mma_tf32(float (&d)[4], const uint32_t (&a)[4],
                                         const uint32_t (&b)[2])
{
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, "
                 "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/* d = a*b (the accumulator input is zero): starts a K tile's partial sums without zeroing
 * 64 registers first. */
__device__ __forceinline__ void mma_tf32_zero(float (&d)[4], const uint32_t (&a)[4],
                                              const uint32_t (&b)[2])
{
    const float z = 0.0f;
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, "
                 "{%4, %5, %6, %7}, {%8, %9}, {%10, %10, %10, %10};\n"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(z));
}

#ifdef TF32X3_HAVE_WGMMA
__device__ __forceinline__ void wg_fence()
{
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wg_commit()
{
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N> __device__ __forceinline__ void wg_wait()
{
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
__device__ __forceinline__ void fence_proxy_async()
{
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
/* Pins the accumulator values in program order relative to the wgmma waits: without it the
 * compiler may move a read of the registers above the wait that makes them valid. */
__device__ __forceinline__ void fence_regs(float (&d)[64])
{
#pragma unroll
    for (int i = 0; i < 64; i++)
        asm volatile("" : "+f"(d[i])::"memory");
}

/* D (64x128 f32, 64 registers) += A (64x8 tf32 from registers) * B (8x128 tf32 from SMEM).
 * SCALE_D = 0 ignores the old D (first product of a K tile). */
template <int SCALE_D>
__device__ __forceinline__ void wgmma_rs(float (&d)[64], const uint32_t (&a)[4], uint64_t desc_b)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
                 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
                 "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
                 "{%64, %65, %66, %67}, %68, p, 1, 1;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),
                   "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),
                   "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]),
                   "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
                   "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]),
                   "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]),
                   "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
                   "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
                   "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]),
                   "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]),
                   "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(SCALE_D));
}
#endif /* TF32X3_HAVE_WGMMA */
#endif /* SGEMM_HOST_EMULATION */

/* ---- fp32 -> big + small ------------------------------------------------------------------ */

/* x rounded to tf32 (10 explicit mantissa bits), to nearest with ties away from zero, as
 * cvt.rna.tf32.f32 does for finite x; two integer instructions, where ptxas expands cvt.rna on
 * sm_90 into five with an Inf/NaN guard.  A finite x may round up to Inf, as it should. */
__device__ __forceinline__ uint32_t tf32_round(float x)
{
    return (__float_as_uint(x) + 0x1000u) & 0xffffe000u;
}

/* big + small == x to ~2^-23 relative: x - big is exact in fp32 (|x - big| <= half a tf32
 * ulp of x) and small keeps its leading 11 bits.  Non-finite inputs give non-finite output,
 * but not always the Inf that fp32 would give (3xTF32 forms Inf * 0 from the split parts). */
__device__ __forceinline__ void split_tf32(float x, uint32_t &big, uint32_t &small)
{
    big = tf32_round(x);
    small = tf32_round(x - __uint_as_float(big));
}

/* ---- tile loads (shared by both kernels) ---------------------------------------------------
 * A: 16-byte chunk q = tid + 256*i (i < 4) is rows 4*(q % 32) .. +3 of tile column
 * k = q / 32: a warp copies 512 contiguous bytes of one column of A.
 * B: chunk q is k = 4*(q % 8) .. +3 of tile column n = q / 8: a warp copies 128 contiguous
 * bytes from each of 4 columns of B.  Where the chunk lands in SMEM is the B layout's business
 * (BOff).  Interior tiles (the CTA inside M and N, the K tile inside K) copy without
 * predicates; edge tiles zero-fill outside the matrices and pass only in-range addresses
 * (the matrix base when predicated off).  VEC: 16-byte copies allowed (aligned bases and
 * leading dimensions, M and K multiples of 4 so no chunk straddles an edge); otherwise every
 * element moves as a 4-byte copy. */
template <bool VEC, class BOff> struct Tf32Loader {
    const float *a_ptr; /* A[m0 + a_m, k0 + a_k]: the thread's first A chunk of the next tile */
    const float *b_ptr; /* B[k0 + b_k, n0 + b_n]: the thread's first B chunk of the next tile */
    int k0;             /* first k of the next tile */
    /* The thread's chunk coordinates, recomputed where needed (registers are scarce):
     * A rows 4*(tid % 32) .. +3 of tile columns tid / 32 + 8*i; B rows 4*(tid % 8) .. +3 of
     * tile columns tid / 8 + 32*i.  Chunk i of B lands BOff::ROW*32*i floats after chunk 0
     * (the swizzle key n % 8 does not change by 32 rows). */
    __device__ __forceinline__ static int a_m(int tid)
    {
        return 4 * (tid % 32);
    }
    __device__ __forceinline__ static int a_k(int tid)
    {
        return tid / 32;
    }
    __device__ __forceinline__ static int b_k(int tid)
    {
        return 4 * (tid % 8);
    }
    __device__ __forceinline__ static int b_n(int tid)
    {
        return tid / 8;
    }

    __device__ __forceinline__ Tf32Loader(const float *A, int lda, const float *B, int ldb, int M,
                                          int N, int m0, int n0, int tid)
    {
        k0 = 0;
        /* dereferenced only on interior tiles, where these rows and columns exist */
        a_ptr = A + min(m0 + a_m(tid), M - 1) + (size_t)a_k(tid) * lda;
        b_ptr = B + (size_t)min(n0 + b_n(tid), N - 1) * ldb + b_k(tid);
    }

    /* Copies the next K tile into (as, bs); tiles are loaded strictly in order. */
    __device__ __forceinline__ void load(float *as, float *bs, const float *A, int lda,
                                         const float *B, int ldb, int M, int N, int K, int m0,
                                         int n0, bool interior, int tid)
    {
        copy_a(as, A, lda, M, K, m0, interior, tid);
        copy_b(bs, B, ldb, N, K, n0, interior, tid);
        advance(lda);
    }

    /* One 16-byte chunk of 4 consecutive floats, of which the first `valid` lie inside the
     * matrix (VEC: 0 or 4); the rest are zero filled, and only in-range addresses (the matrix
     * base when none is) reach cp.async. */
    __device__ __forceinline__ static void copy_chunk(float *dst, const float *src,
                                                      const float *base, int valid)
    {
        if (VEC) {
            cp_async_16(dst, valid == 4 ? src : base, valid == 4);
        } else {
#pragma unroll
            for (int e = 0; e < 4; e++)
                cp_async_4(dst + e, e < valid ? src + e : base, e < valid);
        }
    }

    /* The A half of load(), for kernels that bring B from elsewhere (then advance() after). */
    __device__ __forceinline__ void copy_a(float *as, const float *A, int lda, int M, int K, int m0,
                                           bool interior, int tid) const
    {
        const int a_dst = a_k(tid) * kALd + a_m(tid);
        if (interior && k0 + kBK <= K) {
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const float *src = a_ptr + (size_t)(8 * i) * lda;
                copy_chunk(as + a_dst + 8 * i * kALd, src, src, 4);
            }
        } else {
            const int am = m0 + a_m(tid);
            const int a_rows = min(max(M - am, 0), 4); /* rows of the chunks inside A */
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const int k = k0 + a_k(tid) + 8 * i;
                const bool k_ok = k < K;
                const float *src = A + (a_rows > 0 ? am : 0) + (size_t)(k_ok ? k : 0) * lda;
                copy_chunk(as + a_dst + 8 * i * kALd, src, A, k_ok ? a_rows : 0);
            }
        }
    }

    __device__ __forceinline__ void copy_b(float *bs, const float *B, int ldb, int N, int K, int n0,
                                           bool interior, int tid) const
    {
        const int b_dst = BOff::at(b_n(tid), tid % 8);
        if (interior && k0 + kBK <= K) {
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const float *src = b_ptr + (size_t)(32 * i) * ldb;
                copy_chunk(bs + b_dst + 32 * i * BOff::ROW, src, src, 4);
            }
        } else {
            const int k = k0 + b_k(tid);
            const int k_in = min(max(K - k, 0), 4); /* k of the chunks inside B */
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const int n = n0 + b_n(tid) + 32 * i;
                const bool n_ok = n < N;
                const float *src = B + (size_t)(n_ok ? n : 0) * ldb + (k < K ? k : 0);
                copy_chunk(bs + b_dst + 32 * i * BOff::ROW, src, B, n_ok ? k_in : 0);
            }
        }
    }

    __device__ __forceinline__ void advance(int lda)
    {
        k0 += kBK;
        a_ptr += (size_t)kBK * lda;
        b_ptr += kBK;
    }

    /* Starts at K tile `tiles` instead of 0 (a K split). */
    __device__ __forceinline__ void skip(int tiles, int lda)
    {
        k0 += tiles * kBK;
        a_ptr += (size_t)tiles * kBK * lda;
        b_ptr += (size_t)tiles * kBK;
    }
};

/* Grouped rasterisation of the 1-D grid: consecutive CTAs walk down a band of kGroupM tile
 * rows, column after column, so the ~132 CTAs resident at once cover about 16 x 8 tiles and
 * each A and B panel they read is shared by 8-16 of them in L2 (walking down all of M first
 * would re-read the whole of A from DRAM for every two tile columns at 8192^3). */
__device__ __forceinline__ void tile_coords(int tiles_m, int tiles_n, int &m0, int &n0)
{
    const int pid = blockIdx.x;
    const int per_group = kGroupM * tiles_n;
    const int group = pid / per_group;
    const int first_m = group * kGroupM;
    const int rows = min(tiles_m - first_m, kGroupM);
    const int in_group = pid - group * per_group;
    m0 = (first_m + in_group % rows) * kBM;
    n0 = (in_group / rows) * kBN;
}

/* Writes the thread's 64 results, result e being value(e) at coord(e) -> (m, n).  C0 and C
 * are not __restrict__ (C0 == C is allowed), so the compiler may not hoist a C0 load above an
 * earlier C store: one load-store pair per element waits for memory 64 times in a row (the
 * likely cause of the slow short-K shapes in the first H200 run).  Interior tiles therefore
 * load all their C0 values first and then store; that stays correct for C0 == C because each
 * element is read and written by this thread only.  beta == 0 does not read C0 (BLAS rule). */
template <class Value, class Coord>
__device__ __forceinline__ void store_results(Value value, Coord coord, bool interior, int M, int N,
                                              float alpha, float beta, const float *C0, float *C,
                                              int ldc)
{
    if (interior) {
        float c[64];
        if (beta != 0.0f) {
#pragma unroll
            for (int e = 0; e < 64; e++) {
                int m, n;
                coord(e, m, n);
                c[e] = C0[sgemm_at(m, n, ldc)];
            }
        }
#pragma unroll
        for (int e = 0; e < 64; e++) {
            int m, n;
            coord(e, m, n);
            float r = alpha * value(e);
            if (beta != 0.0f)
                r = fmaf(beta, c[e], r);
            C[sgemm_at(m, n, ldc)] = r;
        }
    } else {
#pragma unroll
        for (int e = 0; e < 64; e++) {
            int m, n;
            coord(e, m, n);
            if (m < M && n < N)
                sgemm_store(value(e), alpha, beta, C0, C, sgemm_at(m, n, ldc));
        }
    }
}

#ifdef TF32X3_HAVE_WGMMA
/* The 64 accumulators of a wgmma m64n128 warpgroup: register e = 4j + 2v1 + v0 of the lane
 * holds row m + 8v1, column n + 8j + v0, where m = (warpgroup rows) + 16wi + g and
 * n = n0 + 2q (CUTLASS CLayout_64xN). */
__device__ __forceinline__ void store_wg_results(const float (&acc)[64], int m, int n,
                                                 bool interior, int M, int N, float alpha,
                                                 float beta, const float *C0, float *C, int ldc)
{
    store_results([&](int e) { return acc[e]; },
                  [&](int e, int &mm, int &nn) {
                      mm = m + 8 * ((e % 4) / 2);
                      nn = n + 8 * (e / 4) + (e % 2);
                  },
                  interior, M, N, alpha, beta, C0, C, ldc);
}
#endif

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

/* =========================================================================================
 * Kernel 2: wgmma (sm_90a)
 * ========================================================================================= */

constexpr int kBStageSw = kBN * kBK;
constexpr int kWgStages = 4;
/* SMEM: two compute buffers {B big, B small} (1024-byte aligned, first), then the raw ring. */
constexpr int kCbufFloats = 2 * kBStageSw;
constexpr size_t kWgSmem =
    (size_t)(2 * kCbufFloats + kWgStages * (kAStage + kBStageSw)) * sizeof(float) + 1024;

#ifdef TF32X3_HAVE_WGMMA
/* B tile for wgmma: Bs[n][k], 128 rows of exactly 128 bytes, 16-byte chunk c of row n stored
 * at chunk c ^ (n % 8): the hardware's 128-byte swizzle (address bits [4,7) ^= bits [7,10))
 * on a 1024-byte aligned buffer, i.e. the canonical K-major SWIZZLE_128B layout: 8-row groups
 * 1024 bytes apart.  The raw tile uses the same layout so the split pass is elementwise. */
struct BOffSwizzled {
    static constexpr int ROW = kBK;
    __device__ __forceinline__ static int at(int n, int c)
    {
        return n * kBK + ((c ^ (n & 7)) << 2);
    }
};
/* K-major SWIZZLE_128B matrix descriptor for a tile starting at shared address `addr`
 * (1024-byte aligned, or advanced by a multiple of 32 bytes inside the 128-byte row for the
 * k-steps): start address >> 4 in bits [0,14), leading byte offset (unused with swizzling,
 * conventionally 1) in [16,30), stride byte offset 1024 >> 4 (8 rows of 128 bytes) in
 * [32,46), base offset 0, layout type 1 (128B swizzle) in [62,64). */
__device__ __forceinline__ uint64_t wg_desc(uint32_t addr)
{
    return (uint64_t)((addr >> 4) & 0x3FFF) | ((uint64_t)1 << 16) | ((uint64_t)(1024 >> 4) << 32) |
           ((uint64_t)1 << 62);
}

/* Split pass: raw B tile -> big and small copies in the same (swizzled) layout. */
__device__ __forceinline__ void split_b(const float *raw, float *big, float *small, int tid)
{
#pragma unroll
    for (int i = 0; i < kBStageSw / 4 / kThreads; i++) {
        const int p = 4 * (tid + kThreads * i);
        const float4 x = *reinterpret_cast<const float4 *>(raw + p);
        uint4 b, s;
        split_tf32(x.x, b.x, s.x);
        split_tf32(x.y, b.y, s.y);
        split_tf32(x.z, b.z, s.z);
        split_tf32(x.w, b.w, s.w);
        *reinterpret_cast<uint4 *>(big + p) = b;
        *reinterpret_cast<uint4 *>(small + p) = s;
    }
}

/* The A fragments of one K tile for this warp, split: k-step kk, register r holds row
 * 16*wi + g + 8*(r % 2), k = 8*kk + q + 4*(r / 2) of the warpgroup's 64 rows (the tf32
 * register layout of wgmma's A operand, the same as mma.sync m16n8k8's). */
__device__ __forceinline__ void load_a_tile(const float *as, uint32_t (&big)[4][4],
                                            uint32_t (&small)[4][4])
{
#pragma unroll
    for (int kk = 0; kk < kBK / 8; kk++) {
        const float *p = as + kk * 8 * kALd;
        split_tf32(p[0], big[kk][0], small[kk][0]);
        split_tf32(p[8], big[kk][1], small[kk][1]);
        split_tf32(p[4 * kALd], big[kk][2], small[kk][2]);
        split_tf32(p[4 * kALd + 8], big[kk][3], small[kk][3]);
    }
}

/* Issues one K tile (4 k-steps x 3 products = 12 wgmmas, one commit group) into part.
 * FIRST: the first product overwrites part instead of adding to it. */
template <bool FIRST>
__device__ __forceinline__ void issue_tile(float (&part)[64], const uint32_t (&big)[4][4],
                                           const uint32_t (&small)[4][4], uint32_t big_addr,
                                           uint32_t small_addr)
{
    wg_fence(); /* the A registers (and part, read by the promotion) were written normally */
#pragma unroll
    for (int kk = 0; kk < kBK / 8; kk++) {
        /* advancing the start address by 32 bytes inside the 128-byte swizzled row selects
         * k = 8*kk .. 8*kk+7; the hardware applies the swizzle to the final address */
        const uint64_t db = wg_desc(big_addr + 32 * kk), ds = wg_desc(small_addr + 32 * kk);
        if (FIRST && kk == 0)
            wgmma_rs<0>(part, small[kk], db);
        else
            wgmma_rs<1>(part, small[kk], db);
        wgmma_rs<1>(part, big[kk], ds);
        wgmma_rs<1>(part, big[kk], db);
    }
    wg_commit();
}
#endif /* TF32X3_HAVE_WGMMA */

/* Warpgroup w computes rows 64w .. 64w+63 of the CTA tile, all 128 columns.  Accumulator
 * register 4j + 2v1 + v0 of lane (g, q) in warp wi of the warpgroup holds row
 * 64w + 16wi + g + 8v1, column 8j + 2q + v0.
 *
 * The K loop handles two K tiles per iteration, t0 (A registers set 0, compute buffer 0) and
 * t1 (set 1, buffer 1), with every wgmma group retired by the end of the iteration.  So the
 * only wgmma-register hazards are inside straight-line code, where ptxas can see which
 * wait_group retires which group (it cannot across a loop back edge, and then serialises
 * every wgmma).  The end-of-iteration wait_group 0 is also where the 64-k partial sums move
 * into the fp32 accumulator.  Per iteration:
 *   G0 = tile t0 issued | refill ring; tile t1 lands; split t1 -> buffer 1; A(t1) -> set 1
 *   G1 = tile t1 issued | refill ring; tile t2 lands; G0 retired (wait_group 1); split t2 ->
 *   buffer 0; A(t2) -> set 0 | G1 retired (wait_group 0); acc += part.
 * The tensor cores always have the other group queued while the threads split and load,
 * except for the short promotion at the end of each iteration. */
template <bool VEC>
__global__ void __launch_bounds__(kThreads, 1)
    tf32x3_wgmma_kernel(int M, int N, int K, float alpha, const float *__restrict__ A, int lda,
                        const float *__restrict__ B, int ldb, float beta, const float *C0, float *C,
                        int ldc, int tiles_m, int tiles_n)
{
#ifdef TF32X3_HAVE_WGMMA
    extern __shared__ __align__(16) float tf_smem[];
    /* 1024-byte alignment for the swizzled buffers (the swizzle is a function of address bits) */
    const uint32_t raw_addr = sgemm_smem_addr(tf_smem);
    float *const base = tf_smem + ((1024 - (raw_addr & 1023)) & 1023) / 4;
    float *const cbuf = base;                   /* [2][B big, B small] */
    float *const As = base + 2 * kCbufFloats;   /* [stages][kAStage] */
    float *const Bs = As + kWgStages * kAStage; /* [stages][kBStageSw] */
    const uint32_t cbuf_addr = sgemm_smem_addr(cbuf);
    const uint32_t big0 = cbuf_addr, small0 = big0 + kBStageSw * 4;
    const uint32_t big1 = cbuf_addr + kCbufFloats * 4, small1 = big1 + kBStageSw * 4;

    int m0, n0;
    tile_coords(tiles_m, tiles_n, m0, n0);
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int wg = warp / 4, wi = warp % 4;
    const int g = lane / 4, q = lane % 4;
    const bool interior = m0 + kBM <= M && n0 + kBN <= N;
    const int ktiles = CEIL_DIV(K, kBK);
    const int a_off = q * kALd + wg * 64 + wi * 16 + g; /* As[q][64wg + 16wi + g] */

    Tf32Loader<VEC, BOffSwizzled> loader(A, lda, B, ldb, M, N, m0, n0, tid);
    /* Refill the ring with the next tile (tiles strictly in order); always commit a group so
     * that cp_async_wait<STAGES-2> means "the tile after the current one has landed". */
    int next_load = 0;
    auto refill = [&]() {
        if (next_load < ktiles) {
            const int s = next_load % kWgStages;
            loader.load(As + s * kAStage, Bs + s * kBStageSw, A, lda, B, ldb, M, N, K, m0, n0,
                        interior, tid);
        }
        next_load++;
        cp_async_commit();
    };
#pragma unroll
    for (int s = 0; s < kWgStages - 1; s++)
        refill();

    float acc[64], part[64];
#pragma unroll
    for (int i = 0; i < 64; i++) {
        acc[i] = 0.0f;
        part[i] = 0.0f;
    }
    uint32_t big[2][4][4], small[2][4][4];

    /* Tile 0: split B into buffer 0, A into set 0. */
    cp_async_wait<kWgStages - 2>();
    __syncthreads();
    split_b(Bs, cbuf, cbuf + kBStageSw, tid);
    fence_proxy_async();
    __syncthreads();
    load_a_tile(As + a_off, big[0], small[0]);

    for (int t0 = 0; t0 < ktiles; t0 += 2) {
        const int t1 = t0 + 1, t2 = t0 + 2;
        issue_tile<true>(part, big[0], small[0], big0, small0); /* G0 */

        refill(); /* into the stage of tile t0-1: read before the barriers of the last iteration */
        cp_async_wait<kWgStages - 2>(); /* tile t1 landed (own copies) */
        __syncthreads();                /* ... everyone's; buffer 1 free since last iteration */
        if (t1 < ktiles) {
            const int s = t1 % kWgStages;
            split_b(Bs + s * kBStageSw, cbuf + kCbufFloats, cbuf + kCbufFloats + kBStageSw, tid);
            fence_proxy_async(); /* generic-proxy stores -> async-proxy (wgmma) reads */
        }
        __syncthreads();
        if (t1 < ktiles) {
            load_a_tile(As + (t1 % kWgStages) * kAStage + a_off, big[1], small[1]);
            issue_tile<false>(part, big[1], small[1], big1, small1); /* G1 */
        }

        refill();                       /* into the stage of tile t0 */
        cp_async_wait<kWgStages - 2>(); /* tile t2 landed (own copies) */
        if (t1 < ktiles)
            wg_wait<1>(); /* G0 retired: set 0 and (after the barrier, everyone's) buffer 0 free */
        else
            wg_wait<0>();
        __syncthreads();
        if (t2 < ktiles) {
            const int s = t2 % kWgStages;
            split_b(Bs + s * kBStageSw, cbuf, cbuf + kBStageSw, tid);
            fence_proxy_async();
        }
        __syncthreads();
        if (t2 < ktiles)
            load_a_tile(As + (t2 % kWgStages) * kAStage + a_off, big[0], small[0]);

        wg_wait<0>(); /* G1 retired: promote the 64-k partial sums with round-to-nearest adds */
        fence_regs(part);
#pragma unroll
        for (int i = 0; i < 64; i++)
            acc[i] += part[i];
    }
    cp_async_wait<0>();

    store_wg_results(acc, m0 + wg * 64 + wi * 16 + g, n0 + 2 * q, interior, M, N, alpha, beta, C0,
                     C, ldc);
#else
    /* Built for an architecture without wgmma: the host never launches this. */
    __trap();
#endif
}

/* =========================================================================================
 * Kernel 3: wgmma on pre-split B, stages handed over by mbarriers (sm_90a)
 * =========================================================================================
 * An Nsight Compute profile of kernel 2 at 4096^3 (H200) had the tensor pipe busy 53.6% of the
 * time and 28% of warp stall samples at __syncthreads: four CTA-wide barriers per two K tiles
 * (the B split pass needs all of them) tie both warpgroups to the slowest warp's copies and
 * splits, and the tensor cores wait with them.  This kernel removes both the split pass and
 * the barriers from the K loop:
 *   - B is split once per launch by tf32x3_presplit_b into a workspace: big and small copies,
 *     each [Np][Kp] (K contiguous, N padded to the tile, K to the K tile, padding zero), so the
 *     ring receives ready tf32 tiles by plain 16-byte cp.async into the swizzled layout, with
 *     no predicates.  That costs one read of B and two writes of it (0.77 GB at 8192^3, about
 *     0.2 ms of 12.6) and takes 32 KB per stage of SMEM writes off the K loop.
 *   - Each ring stage has a "full" mbarrier (256 arrivals: every thread's
 *     cp.async.mbarrier.arrive.noinc, which fires when that thread's copies have landed) and an
 *     "empty" one (8 arrivals: one per warp once the wgmma group that read the stage has
 *     retired).  A warpgroup waits only for the data it is about to use and for the stage it
 *     is about to refill, so the two warpgroups drift apart by up to two tiles and one
 *     warpgroup's promotion or stall is covered by the other's queued wgmmas.
 * The A operand, the split of A in registers, the two-level accumulation (64 k per promotion)
 * and the epilogue are those of kernel 2. */
constexpr int kPsStages = 4; /* ring depth; tiles are copied two ahead of the one computed */
/* A stage: B big, B small (swizzled, 16 KB each), then the padded raw A tile.  49 x 1024 bytes,
 * so every stage stays 1024-byte aligned for the swizzle. */
constexpr int kPsStageFloats = 2 * kBStageSw + kAStage;
static_assert(kPsStageFloats * 4 % 1024 == 0, "stages must keep the 1024-byte alignment");
constexpr size_t kPsSmem = (size_t)kPsStages * kPsStageFloats * sizeof(float) + 1024;

/* B -> big, small: [Np][Kp] each, element (k, n) at n*Kp + k, zero outside K x N.  One thread
 * per 4 consecutive k of one column (a warp covers 512 contiguous bytes of a column). */
__global__ void tf32x3_presplit_b(int N, int K, const float *__restrict__ B, int ldb, int Np,
                                  int Kp, float *__restrict__ big, float *__restrict__ small)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int kq = Kp / 4;
    if (i >= (size_t)Np * kq)
        return;
    const int n = (int)(i / kq), k = 4 * (int)(i % kq);
    float x[4];
#pragma unroll
    for (int e = 0; e < 4; e++)
        x[e] = n < N && k + e < K ? B[(size_t)n * ldb + k + e] : 0.0f;
    uint4 b, s;
    split_tf32(x[0], b.x, s.x);
    split_tf32(x[1], b.y, s.y);
    split_tf32(x[2], b.z, s.z);
    split_tf32(x[3], b.w, s.w);
    *reinterpret_cast<uint4 *>(big + (size_t)n * Kp + k) = b;
    *reinterpret_cast<uint4 *>(small + (size_t)n * Kp + k) = s;
}

#ifdef TF32X3_HAVE_WGMMA
#ifndef SGEMM_HOST_EMULATION
__device__ __forceinline__ void mbar_init(uint32_t bar, int count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar)
{
    asm volatile("{\n.reg .b64 state;\nmbarrier.arrive.shared::cta.b64 state, [%0];\n}\n" ::"r"(bar)
                 : "memory");
}
/* One arrival on `bar` once all of this thread's earlier cp.async copies have landed; the
 * arrival counts against the count given at init (noinc). */
__device__ __forceinline__ void mbar_arrive_cp_async(uint32_t bar)
{
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}
/* Waits until the phase with parity `parity` of `bar` has completed. */
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity)
{
    asm volatile("{\n.reg .pred done;\nWAIT:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 "@!done bra WAIT;\n}\n" ::"r"(bar),
                 "r"(parity)
                 : "memory");
}
#endif /* SGEMM_HOST_EMULATION */
#endif /* TF32X3_HAVE_WGMMA */

/* Warpgroup w computes rows 64w .. 64w+63 of the CTA tile, as in kernel 2, and the K loop has
 * the same shape (two K tiles per iteration, every wgmma group retired by its end, partial sums
 * promoted there); the differences are where it waits:
 *   G0 = tile t0 issued | tile t1 full? copy tile t0+2 | A(t1) -> set 1 | G1 = tile t1 issued |
 *   G0 retired: stage t0 empty | tile t2 full? copy tile t0+3 | A(t2) -> set 0 |
 *   G1 retired: stage t1 empty; acc += part.
 * Copying tile u into stage u % 4 first waits until both warpgroups have retired tile u - 4
 * there; no other wait involves the other warpgroup.
 * SPLITK: CTA (b, 0, z) computes K tiles z*kt_per_split .. of its tile and writes the raw
 * partial sums to split z of the workspace ws (leading dimension ldw, split stride ws_split);
 * tf32x3_splitk_reduce finishes. */
template <bool VEC, bool SPLITK>
__global__ void __launch_bounds__(kThreads, 1)
    tf32x3_wgmma_ps_kernel(int M, int N, int K, float alpha, const float *__restrict__ A, int lda,
                           const float *__restrict__ Bbig, const float *__restrict__ Bsmall, int Kp,
                           float beta, const float *C0, float *C, int ldc, int tiles_m, int tiles_n,
                           int kt_per_split, float *ws, int ldw, size_t ws_split)
{
#ifdef TF32X3_HAVE_WGMMA
    extern __shared__ __align__(16) float tf_smem[];
    __shared__ __align__(8) uint64_t bars[2 * kPsStages]; /* full[s], then empty[s] */
    const uint32_t raw_addr = sgemm_smem_addr(tf_smem);
    float *const base = tf_smem + ((1024 - (raw_addr & 1023)) & 1023) / 4;
    const uint32_t base_addr = sgemm_smem_addr(base);
    const uint32_t bar_addr = sgemm_smem_addr(bars);
    auto full = [&](int t) { return bar_addr + 8 * (t % kPsStages); };
    auto empty = [&](int t) { return bar_addr + 8 * (kPsStages + t % kPsStages); };
    auto stage = [&](int t) { return base + (t % kPsStages) * kPsStageFloats; };
    auto stage_addr = [&](int t) {
        return base_addr + (uint32_t)((t % kPsStages) * kPsStageFloats * 4);
    };

    int m0, n0;
    tile_coords(tiles_m, tiles_n, m0, n0);
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int wg = warp / 4, wi = warp % 4;
    const int g = lane / 4, q = lane % 4;
    const bool interior = m0 + kBM <= M && n0 + kBN <= N;
    const int kt_begin = SPLITK ? (int)blockIdx.z * kt_per_split : 0;
    const int ktiles =
        SPLITK ? max(min(kt_per_split, CEIL_DIV(K, kBK) - kt_begin), 0) : CEIL_DIV(K, kBK);
    const int a_off = 2 * kBStageSw + q * kALd + wg * 64 + wi * 16 + g;

    if (tid == 0) {
        for (int s = 0; s < kPsStages; s++) {
            mbar_init(full(s), kThreads);
            mbar_init(empty(s), kThreads / 32);
        }
    }
    __syncthreads(); /* the barriers are initialised before anyone uses them */

    /* B chunk c = tid + 256*i (i < 4) of each of big and small: row n = c / 8 (tile column),
     * 16-byte chunk c % 8 of its 32 k; a warp copies 4 whole 128-byte rows. */
    const size_t b_k0 = (size_t)kt_begin * kBK; /* 0 unless SPLITK */
    const float *b_big = Bbig + (size_t)(n0 + tid / 8) * Kp + 4 * (tid % 8) + b_k0;
    const float *b_small = Bsmall + (size_t)(n0 + tid / 8) * Kp + 4 * (tid % 8) + b_k0;
    const int b_dst = BOffSwizzled::at(tid / 8, tid % 8);
    Tf32Loader<VEC, BOffSwizzled> loader(A, lda, Bbig, Kp, M, N, m0, n0, tid);
    if (SPLITK)
        loader.skip(kt_begin, lda);
    auto copy_tile = [&](int u) {
        if (u >= kPsStages) /* both warpgroups are done with tile u - 4 in this stage */
            mbar_wait(empty(u), (u / kPsStages - 1) & 1);
        float *const st = stage(u);
        const size_t k = (size_t)u * kBK;
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const size_t rows = (size_t)32 * i * Kp;
            cp_async_16(st + b_dst + 32 * i * kBK, b_big + rows + k, true);
            cp_async_16(st + kBStageSw + b_dst + 32 * i * kBK, b_small + rows + k, true);
        }
        loader.copy_a(st + 2 * kBStageSw, A, lda, M, K, m0, interior, tid);
        loader.advance(lda);
        mbar_arrive_cp_async(full(u));
    };
    /* Waits for tile t to land, then makes the copies visible to wgmma's (async proxy) reads. */
    auto wait_full = [&](int t) {
        mbar_wait(full(t), (t / kPsStages) & 1);
        fence_proxy_async();
    };
    /* Stage of tile t may be refilled: this warp's wgmmas that read it have retired. */
    auto release = [&](int t) {
        __syncwarp();
        if (lane == 0)
            mbar_arrive(empty(t));
    };

    constexpr int kAhead = 2; /* tiles in flight ahead of the one being computed */
    int next = 0;             /* next tile to copy */
    for (; next < kAhead; next++)
        if (next < ktiles)
            copy_tile(next);

    float acc[64], part[64];
#pragma unroll
    for (int i = 0; i < 64; i++) {
        acc[i] = 0.0f;
        part[i] = 0.0f;
    }
    uint32_t big[2][4][4], small[2][4][4];

    wait_full(0);
    load_a_tile(stage(0) + a_off, big[0], small[0]);

    for (int t0 = 0; t0 < ktiles; t0 += 2) {
        const int t1 = t0 + 1, t2 = t0 + 2;
        issue_tile<true>(part, big[0], small[0], stage_addr(t0), stage_addr(t0) + kBStageSw * 4);
        /* Each wait_full comes before the next copies are issued: the proxy fence compiles to
         * MEMBAR.ALL.CTA + FENCE.VIEW.ASYNC, and the membar should not wait for copies that
         * have just left. */
        if (t1 < ktiles)
            wait_full(t1);
        if (next < ktiles)
            copy_tile(next);
        next++;
        if (t1 < ktiles) {
            load_a_tile(stage(t1) + a_off, big[1], small[1]);
            issue_tile<false>(part, big[1], small[1], stage_addr(t1),
                              stage_addr(t1) + kBStageSw * 4);
            wg_wait<1>(); /* G0 retired */
        } else {
            wg_wait<0>();
        }
        release(t0);
        if (t2 < ktiles)
            wait_full(t2);
        if (next < ktiles)
            copy_tile(next);
        next++;
        if (t2 < ktiles)
            load_a_tile(stage(t2) + a_off, big[0], small[0]);
        wg_wait<0>(); /* G1 retired: promote the 64-k partial sums with round-to-nearest adds */
        if (t1 < ktiles)
            release(t1);
        fence_regs(part);
#pragma unroll
        for (int i = 0; i < 64; i++)
            acc[i] += part[i];
    }

    if (SPLITK)
        store_wg_results(acc, m0 + wg * 64 + wi * 16 + g, n0 + 2 * q, interior, M, N, 1.0f, 0.0f,
                         nullptr, ws + (size_t)blockIdx.z * ws_split, ldw);
    else
        store_wg_results(acc, m0 + wg * 64 + wi * 16 + g, n0 + 2 * q, interior, M, N, alpha, beta,
                         C0, C, ldc);
#else
    /* Built for an architecture without wgmma: the host never launches this. */
    __trap();
#endif
}

/* Second pass of split-K: C = alpha * sum_z ws[z] + beta * C0, the splits summed in order (the
 * result does not depend on scheduling).  One thread per element, M fastest. */
__global__ void tf32x3_splitk_reduce(int M, int N, int splits, const float *__restrict__ ws,
                                     int ldw, size_t ws_split, float alpha, float beta,
                                     const float *C0, float *C, int ldc)
{
    const size_t total = (size_t)M * N;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (size_t)gridDim.x * blockDim.x) {
        const int m = (int)(i % M), n = (int)(i / M);
        const float *p = ws + sgemm_at(m, n, ldw);
        float sum = 0.0f;
        for (int z = 0; z < splits; z++)
            sum += p[(size_t)z * ws_split];
        sgemm_store(sum, alpha, beta, C0, C, sgemm_at(m, n, ldc));
    }
}

/* ---- host side ------------------------------------------------------------------------------ */

bool vec_ok(const SgemmArgs &a)
{
    return sgemm_vec4_ok(a.A, a.lda) && sgemm_vec4_ok(a.B, a.ldb) && a.M % 4 == 0 && a.K % 4 == 0;
}

template <class F> cudaError_t set_smem(F *kernel, size_t bytes)
{
    cudaError_t e = cudaFuncSetAttribute((const void *)kernel,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute((const void *)kernel,
                                 cudaFuncAttributePreferredSharedMemoryCarveout, 100);
    return e;
}

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

template <bool VEC> cudaError_t launch_wgmma(const SgemmArgs &a)
{
    static const cudaError_t once = set_smem(tf32x3_wgmma_kernel<VEC>, kWgSmem);
    if (once != cudaSuccess)
        return once;
    const int tiles_m = CEIL_DIV(a.M, kBM), tiles_n = CEIL_DIV(a.N, kBN);
    tf32x3_wgmma_kernel<VEC><<<tiles_m * tiles_n, kThreads, kWgSmem, a.stream>>>(
        a.M, a.N, a.K, a.alpha, a.A, a.lda, a.B, a.ldb, a.beta, a.C0, a.C, a.ldc, tiles_m, tiles_n);
    return cudaGetLastError();
}

cudaError_t run_mma(const SgemmArgs &a)
{
    return vec_ok(a) ? launch_mma<true>(a) : launch_mma<false>(a);
}

cudaError_t run_wgmma(const SgemmArgs &a)
{
    if (!sgemm_device_is_sm90())
        return cudaErrorNotSupported;
    return vec_ok(a) ? launch_wgmma<true>(a) : launch_wgmma<false>(a);
}

/* The pre-split B of kernel 3, grown on demand in stream order (no device-wide synchronisation
 * in the run path) and freed by tf32x3_release().  One per process: runs on several streams at
 * once would share it (the harness uses one stream). */
SgemmWorkspace presplit_ws;
/* The partial sums of the split-K configuration (the same terms). */
SgemmWorkspace splitk_ws;

bool a_vec_ok(const SgemmArgs &a)
{
    return sgemm_vec4_ok(a.A, a.lda) && a.M % 4 == 0;
}

template <bool VEC, bool SPLITK>
cudaError_t launch_wgmma_ps(const SgemmArgs &a, const float *big, const float *small, int Kp,
                            int splits, int kt_per_split, float *ws, int ldw, size_t ws_split)
{
    static const cudaError_t once = set_smem(tf32x3_wgmma_ps_kernel<VEC, SPLITK>, kPsSmem);
    if (once != cudaSuccess)
        return once;
    const int tiles_m = CEIL_DIV(a.M, kBM), tiles_n = CEIL_DIV(a.N, kBN);
    tf32x3_wgmma_ps_kernel<VEC, SPLITK>
        <<<dim3(tiles_m * tiles_n, 1, splits), kThreads, kPsSmem, a.stream>>>(
            a.M, a.N, a.K, a.alpha, a.A, a.lda, big, small, Kp, a.beta, a.C0, a.C, a.ldc, tiles_m,
            tiles_n, kt_per_split, ws, ldw, ws_split);
    return cudaGetLastError();
}

/* Kernel 3 after splitting B.  SPLITK: when the 128x128 tiles are fewer than half the SMs
 * (1024^3 and 256x4096x4096 have 64 for 132), K is split so that tiles x splits fill about one
 * wave (at least 4 K tiles, 128 k, per split; at most 16 splits), the partial sums go to a
 * workspace and tf32x3_splitk_reduce adds them in order; otherwise it is kernel 3 as is. */
template <bool SPLITK> cudaError_t run_wgmma_ps(const SgemmArgs &a)
{
    if (!sgemm_device_is_sm90())
        return cudaErrorNotSupported;
    const int Kp = CEIL_DIV(a.K, kBK) * kBK, Np = CEIL_DIV(a.N, kBN) * kBN;
    const int tiles = CEIL_DIV(a.M, kBM) * CEIL_DIV(a.N, kBN), ktiles = Kp / kBK;
    int splits = 1;
    if (SPLITK && 2 * tiles <= sgemm_sm_count())
        splits = std::max(1, std::min({sgemm_sm_count() / tiles, ktiles / 4, 16}));
    const int per_split = CEIL_DIV(ktiles, splits);
    splits = CEIL_DIV(ktiles, per_split); /* no empty trailing split */

    const size_t elems = (size_t)Np * Kp;
    float *ws = nullptr, *part = nullptr;
    cudaError_t e = presplit_ws.get(2 * elems * sizeof(float), a.stream, &ws);
    const int ldw = (a.M + 3) / 4 * 4;
    const size_t ws_split = (size_t)ldw * a.N;
    if (e == cudaSuccess && splits > 1)
        e = splitk_ws.get(ws_split * splits * sizeof(float), a.stream, &part);
    if (e != cudaSuccess)
        return e;
    const size_t threads = elems / 4;
    tf32x3_presplit_b<<<(unsigned)CEIL_DIV(threads, (size_t)256), 256, 0, a.stream>>>(
        a.N, a.K, a.B, a.ldb, Np, Kp, ws, ws + elems);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return e;
    if (splits == 1)
        return a_vec_ok(a)
                   ? launch_wgmma_ps<true, false>(a, ws, ws + elems, Kp, 1, ktiles, nullptr, 0, 0)
                   : launch_wgmma_ps<false, false>(a, ws, ws + elems, Kp, 1, ktiles, nullptr, 0, 0);
    e = a_vec_ok(a) ? launch_wgmma_ps<true, true>(a, ws, ws + elems, Kp, splits, per_split, part,
                                                  ldw, ws_split)
                    : launch_wgmma_ps<false, true>(a, ws, ws + elems, Kp, splits, per_split, part,
                                                   ldw, ws_split);
    if (e != cudaSuccess)
        return e;
    const size_t total = (size_t)a.M * a.N;
    tf32x3_splitk_reduce<<<(unsigned)std::min(CEIL_DIV(total, (size_t)256), (size_t)65535), 256, 0,
                           a.stream>>>(a.M, a.N, splits, part, ldw, ws_split, a.alpha, a.beta, a.C0,
                                       a.C, a.ldc);
    return cudaGetLastError();
}

/* Tuned in this order (tune.cuh), the wgmma ones on compute capability 9.0 only. */
const SgemmConfig kConfigs[] = {
    {"mma_sync_128x128x32_s4", run_mma, false},
    {"wgmma_128x128x32_s4", run_wgmma, true},
    {"wgmma_presplit_128x128x32_s4", run_wgmma_ps<false>, true},
    {"wgmma_presplit_128x128x32_s4_splitk", run_wgmma_ps<true>, true},
};

/* Used when the shape was not tuned: the pre-split wgmma kernel with split-K where it runs,
 * mma_sync elsewhere. */
int default_config(int, int, int)
{
    return sgemm_device_is_sm90() ? 3 : 0;
}

/* The tuned choice per shape, and the tune loop (tune.cuh). */
SgemmTuner tuner(kConfigs, default_config);

} // namespace

extern "C" int tf32x3_config_count(void)
{
    return tuner.count();
}

extern "C" const char *tf32x3_config_name(int idx)
{
    return tuner.name(idx);
}

/* Runs configuration `config`; cudaErrorNotSupported when it cannot run on this device (the
 * wgmma kernel anywhere but compute capability 9.0). */
extern "C" cudaError_t run_tf32x3_config(int config, int M, int N, int K, float alpha,
                                         const float *A, int lda, const float *B, int ldb,
                                         float beta, const float *C0, float *C, int ldc,
                                         cudaStream_t stream)
{
    return tuner.run_config(config, {M, N, K, alpha, A, lda, B, ldb, beta, C0, C, ldc, stream});
}

extern "C" SGEMM_LAUNCHER(tf32x3)
{
    return tuner.run({M, N, K, alpha, A, lda, B, ldb, beta, C0, C, ldc, stream});
}

extern "C" cudaError_t tf32x3_tune(int M, int N, int K, float alpha, const float *A, int lda,
                                   const float *B, int ldb, float beta, const float *C0, float *C,
                                   int ldc, cudaStream_t stream, int *chosen_config)
{
    return tuner.tune({M, N, K, alpha, A, lda, B, ldb, beta, C0, C, ldc, stream}, chosen_config);
}

/* Frees the pre-split and split-K workspaces after all work on the device has finished
 * (synchronises the device); safe to call more than once. */
extern "C" void tf32x3_release(void)
{
    presplit_ws.release();
    splitk_ws.release();
}
