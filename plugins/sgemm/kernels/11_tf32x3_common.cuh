/* sgemm ladder step 11, 3xTF32 (11_tf32x3.cu): what its three kernels share.  The tile
 * shape, the PTX wrappers, the split of fp32 into tf32 big + small, the cp.async tile loader,
 * the grouped rasterisation and the epilogue; for the two wgmma kernels the swizzled B layout,
 * its matrix descriptor, the split A fragments and the issue of one K tile.  Included by the
 * kernels' headers into the one translation unit 11_tf32x3.cu, inside its anonymous namespace. */
#ifndef KBENCH_SGEMM_TF32X3_COMMON_CUH
#define KBENCH_SGEMM_TF32X3_COMMON_CUH

#include "common.cuh"

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
/* C0's tile in kernel 3's ring (not TRANS): two ring tiles of 64 columns each, in columns of
 * 132 floats (16-byte aligned).  The epilogue's lane (g, q) reads row g of columns 2q + ...:
 * banks 8q + g (2 * 132 = 8 mod 32), all distinct. */
constexpr int kPsC0Ld = kBM + 4;

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define TF32X3_HAVE_WGMMA 1
#endif

/* ---- PTX wrappers --------------------------------------------------------------------------
 * The inline assembly of the mma and wgmma products (kernel 3's mbarriers have theirs in
 * 11_tf32x3_presplit.cuh).  The CPU emulation used to test the index math
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
/* The product itself: kb_wgmma_tf32_m64n128k8<SCALE_D>(d, a, desc_b), D (64x128 f32, 64
 * registers) += A (64x8 tf32 from registers) * B (8x128 tf32 from SMEM), in the header the
 * harness's TF32 ceiling uses too. */
#include "kbench/wgmma_tf32.cuh"

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

/* ---- tile loads (shared by the three kernels) ---------------------------------------------------
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

/* The wgmma kernels' accumulators: the total and a K tile group's partial sums, zeroed. */
__device__ __forceinline__ void zero_acc(float (&acc)[64], float (&part)[64])
{
#pragma unroll
    for (int i = 0; i < 64; i++) {
        acc[i] = 0.0f;
        part[i] = 0.0f;
    }
}

/* The K tiles of a CTA (kernels 3 and 5): all of them, or with SPLITK split blockIdx.z's
 * kt_per_split from kt_begin (none past K). */
template <bool SPLITK>
__device__ __forceinline__ void ktile_range(int K, int kt_per_split, int &kt_begin, int &ktiles)
{
    kt_begin = SPLITK ? (int)blockIdx.z * kt_per_split : 0;
    ktiles = SPLITK ? max(min(kt_per_split, CEIL_DIV(K, kBK) - kt_begin), 0) : CEIL_DIV(K, kBK);
}

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

/* Programmatic dependent launch (sm_90): the primary kernel lets its dependent start
 * (pdl_launch_dependents), and the dependent waits in pdl_wait() until the primary has finished
 * and its memory is visible.  Both are no-ops for a kernel launched without the attribute. */
__device__ __forceinline__ void pdl_launch_dependents()
{
#if !defined(SGEMM_HOST_EMULATION) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void pdl_wait()
{
#if !defined(SGEMM_HOST_EMULATION) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

#ifdef TF32X3_HAVE_WGMMA
/* The 64 accumulators of a wgmma m64n128 warpgroup: register e = 4j + 2v1 + v0 of the lane
 * holds row r + 8v1, column c + 8j + v0 of the product the tensor cores form, where
 * r = (warpgroup rows) + 16wi + g and c = (tile columns) + 2q (CUTLASS CLayout_64xN).  That
 * product is C's tile (r = m, c = n), or with TRANS C's tile transposed (r = n, c = m: the
 * kernel computed C^T = B^T A^T). */
template <bool TRANS = false>
__device__ __forceinline__ void store_wg_results(const float (&acc)[64], int r, int c,
                                                 bool interior, int M, int N, float alpha,
                                                 float beta, const float *C0, float *C, int ldc)
{
    /* Transposed, registers e and e+1 (v0 = 0, 1) are C(m, n) and C(m+1, n) with m even (c
     * is): one 8-byte access where C, C0 and ldc allow.  A warp's access then covers 8 whole
     * 32-byte sectors of 8 columns, where single floats covered half of each (measured on an
     * H100: the transposed kernel at 4096x4096x256, where C's traffic is most of the time,
     * 159 us with single floats against 129 us for the untransposed one). */
    if (TRANS && interior && ldc % 2 == 0 && ((uintptr_t)C | (uintptr_t)C0) % 8 == 0) {
        auto at = [&](int e) {
            return sgemm_at(c + 8 * (e / 4), r + 8 * ((e % 4) / 2), ldc); /* e even */
        };
        float2 c0[32];
        if (beta != 0.0f) {
#pragma unroll
            for (int e = 0; e < 64; e += 2)
                c0[e / 2] = *reinterpret_cast<const float2 *>(C0 + at(e));
        }
#pragma unroll
        for (int e = 0; e < 64; e += 2) {
            float2 v = make_float2(alpha * acc[e], alpha * acc[e + 1]);
            if (beta != 0.0f) {
                v.x = fmaf(beta, c0[e / 2].x, v.x);
                v.y = fmaf(beta, c0[e / 2].y, v.y);
            }
            *reinterpret_cast<float2 *>(C + at(e)) = v;
        }
        return;
    }
    store_results([&](int e) { return acc[e]; },
                  [&](int e, int &mm, int &nn) {
                      const int rr = r + 8 * ((e % 4) / 2), cc = c + 8 * (e / 4) + (e % 2);
                      mm = TRANS ? cc : rr;
                      nn = TRANS ? rr : cc;
                  },
                  interior, M, N, alpha, beta, C0, C, ldc);
}

/* The barrier of the threads that store a tile: the whole CTA (SYNC = 0), or with a producer
 * warpgroup that has left (kernel 5) named barrier 1 of the SYNC threads that compute. */
template <int SYNC> __device__ __forceinline__ void tile_sync()
{
#ifndef SGEMM_HOST_EMULATION
    if (SYNC)
        asm volatile("bar.sync 1, %0;\n" ::"n"(SYNC) : "memory");
    else
#endif
        __syncthreads();
}

/* Serial split-K: the CTAs of one output tile, one per K split (blockIdx.z), finish it in split
 * order.  Split 0 stores its raw partial sums in the workspace ws (leading dimension ldw), split
 * z adds its own to what splits 0..z-1 left there, and the last split writes C from the total:
 * ((p0 + p1) + p2) + ..., the order a reduction kernel reading every split would add them in,
 * so the bits do not depend on scheduling.  The tile's flag (flags[blockIdx.x], zero between
 * launches) counts the splits done; split z waits until it reads z.  The workspace stays in L2
 * (one M x N buffer, not one per split), and no second kernel reads it all back: measured on an
 * H100 against that kernel, 2.3-2.7 us less at 1024^3 and 256x4096x4096.  No deadlock: splits
 * x tiles is at most one CTA per SM (splitk_plan), and CTAs start in blockIdx order, so split
 * z - 1 is running or done when split z waits (as CUTLASS's serial split-K assumes). */
template <int SYNC = 0> __device__ __forceinline__ void splitk_wait(const int *flag, int z)
{
#ifndef SGEMM_HOST_EMULATION
    if (threadIdx.x == 0) {
        int v;
        for (;;) {
            asm volatile("ld.acquire.gpu.global.b32 %0, [%1];\n" : "=r"(v) : "l"(flag) : "memory");
            if (v == z)
                break;
            __nanosleep(32);
        }
    }
#endif
    tile_sync<SYNC>();
}

/* Publishes the CTA's stores to ws (every thread's, through the barrier) with the flag's new
 * value. */
template <int SYNC = 0> __device__ __forceinline__ void splitk_signal(int *flag, int value)
{
    tile_sync<SYNC>();
#ifndef SGEMM_HOST_EMULATION
    if (threadIdx.x == 0)
        asm volatile("st.release.gpu.global.b32 [%0], %1;\n" ::"l"(flag), "r"(value) : "memory");
#endif
}

/* acc[e] = (what the earlier splits left in ws) + acc[e], for store_wg_results's elements
 * (the same coordinates and bounds); read through L2, where the other CTAs' stores are. */
template <bool TRANS>
__device__ __forceinline__ void add_wg_partial(float (&acc)[64], int r, int c, bool interior, int M,
                                               int N, const float *ws, int ldw)
{
    float p[64];
#pragma unroll
    for (int e = 0; e < 64; e++) {
        const int rr = r + 8 * ((e % 4) / 2), cc = c + 8 * (e / 4) + (e % 2);
        const int m = TRANS ? cc : rr, n = TRANS ? rr : cc;
        p[e] = interior || (m < M && n < N) ? __ldcg(ws + sgemm_at(m, n, ldw)) : 0.0f;
    }
#pragma unroll
    for (int e = 0; e < 64; e++)
        acc[e] = p[e] + acc[e];
}

/* A wgmma kernel's results (store_wg_results): C = alpha * acc + beta * C0, or with SPLITK and
 * more than one split, this split's part of the serial split-K above (SYNC: tile_sync's).
 * c0s, c0s_hi: where the CTA brought C0's tile into shared memory (kernels 3 and 5), the thread's
 * first element of its columns 0-63 and 64-127 in columns of kPsC0Ld floats; then C0 is read there
 * instead (the same arithmetic, so the same bits). */
template <bool SPLITK, bool TRANS = false, int SYNC = 0>
__device__ __forceinline__ void
store_wg_or_partial(float (&acc)[64], int r, int c, bool interior, int M, int N, float alpha,
                    float beta, const float *C0, float *C, int ldc, float *ws, int ldw, int *flags,
                    const float *c0s = nullptr, const float *c0s_hi = nullptr)
{
    const int z = SPLITK ? (int)blockIdx.z : 0, last = SPLITK ? (int)gridDim.z - 1 : 0;
    int *const flag = SPLITK ? flags + blockIdx.x : nullptr;
    if (z > 0) {
        splitk_wait<SYNC>(flag, z);
        add_wg_partial<TRANS>(acc, r, c, interior, M, N, ws, ldw);
    }
    if (z < last) {
        store_wg_results<TRANS>(acc, r, c, interior, M, N, 1.0f, 0.0f, nullptr, ws, ldw);
        splitk_signal<SYNC>(flag, z + 1);
        return;
    }
    if (z > 0 && threadIdx.x == 0)
        *flag = 0; /* every split has read it: ready for the next launch */
    if (c0s) {
        /* register e = 4j + 2v1 + v0: row 8v1, column 8j + v0 from the thread's first */
#pragma unroll
        for (int e = 0; e < 64; e++) {
            const int j = e / 4;
            const float *p =
                (j < 8 ? c0s : c0s_hi) + (8 * (j % 8) + e % 2) * kPsC0Ld + 8 * ((e % 4) / 2);
            acc[e] = fmaf(beta, *p, alpha * acc[e]);
        }
        store_wg_results<TRANS>(acc, r, c, interior, M, N, 1.0f, 0.0f, nullptr, C, ldc);
        return;
    }
    store_wg_results<TRANS>(acc, r, c, interior, M, N, alpha, beta, C0, C, ldc);
}
#endif

/* ---- the wgmma kernels' B tile and operands (kernels 2 and 3) ---------------------------------
 */

constexpr int kBStageSw = kBN * kBK;

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

/* load_a_tile's fragments from a tile stored [row][k] in rows of LD floats (the B tile of
 * the mma.sync kernel, BOffPadded) instead of [k][row]: p points at row 16*wi + g (of the
 * warpgroup's 64), k = q.  With LD = 36 the 32 lanes hit banks 4g + q, all distinct. */
template <int LD>
__device__ __forceinline__ void load_a_tile_rows(const float *p, uint32_t (&big)[4][4],
                                                 uint32_t (&small)[4][4])
{
#pragma unroll
    for (int kk = 0; kk < kBK / 8; kk++) {
        const float *t = p + kk * 8;
        split_tf32(t[0], big[kk][0], small[kk][0]);          /* (g,   q)   */
        split_tf32(t[8 * LD], big[kk][1], small[kk][1]);     /* (g+8, q)   */
        split_tf32(t[4], big[kk][2], small[kk][2]);          /* (g,   q+4) */
        split_tf32(t[8 * LD + 4], big[kk][3], small[kk][3]); /* (g+8, q+4) */
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
            kb_wgmma_tf32_m64n128k8<0>(part, small[kk], db);
        else
            kb_wgmma_tf32_m64n128k8<1>(part, small[kk], db);
        kb_wgmma_tf32_m64n128k8<1>(part, big[kk], ds);
        kb_wgmma_tf32_m64n128k8<1>(part, big[kk], db);
    }
    wg_commit();
}
#endif /* TF32X3_HAVE_WGMMA */

/* ---- host side ------------------------------------------------------------------------------ */

bool vec_ok(const SgemmArgs &a)
{
    return sgemm_vec4_ok(a.A, a.lda) && sgemm_vec4_ok(a.B, a.ldb) && a.M % 4 == 0 && a.K % 4 == 0;
}

/* The serial split-K's running sums and per-tile flags (kernels 2 and 3), grown on demand in
 * stream order and freed by tf32x3_release(); the flags start at zero. */
SgemmWorkspace splitk_ws, splitk_flag_ws;

/* How a split-K configuration divides K: when the 128x128 tiles are fewer than half the SMs
 * (1024^3 and 256x4096x4096 have 64 for 132), K is split so that tiles x splits fill about one
 * wave of one CTA per SM (at least 4 K tiles, 128 k, per split; at most 16 splits); otherwise
 * splits is 1.  per_split: K tiles per split, the last one possibly shorter, none empty. */
void splitk_plan(const SgemmArgs &a, int &splits, int &per_split)
{
    const int tiles = CEIL_DIV(a.M, kBM) * CEIL_DIV(a.N, kBN), ktiles = CEIL_DIV(a.K, kBK);
    splits = 1;
    if (2 * tiles <= sgemm_sm_count())
        splits = std::max(1, std::min({sgemm_sm_count() / tiles, ktiles / 4, 16}));
    per_split = CEIL_DIV(ktiles, splits);
    splits = CEIL_DIV(ktiles, per_split);
}

/* The serial split-K workspace's leading dimension for a: M rounded up to 4. */
int splitk_ldw(const SgemmArgs &a)
{
    return (a.M + 3) / 4 * 4;
}

/* The serial split-K's buffers for a: the running sums (*part, M x N with leading dimension
 * splitk_ldw(a)) and one flag per 128x128 tile (*flags), grown in a's stream. */
cudaError_t splitk_buffers(const SgemmArgs &a, float **part, int **flags)
{
    const size_t tiles = (size_t)CEIL_DIV(a.M, kBM) * CEIL_DIV(a.N, kBN);
    float *f = nullptr;
    cudaError_t e = splitk_ws.get((size_t)splitk_ldw(a) * a.N * sizeof(float), a.stream, part);
    if (e == cudaSuccess)
        e = splitk_flag_ws.get(tiles * sizeof(int), a.stream, &f, true);
    *flags = (int *)f;
    return e;
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

/* Launches kernel (grid x 1 x splits CTAs of `threads`, `smem` bytes of dynamic shared memory)
 * on a.stream as a programmatic dependent of the pre-split pass just queued there: its CTAs
 * start (barriers, pointers) while that pass ends, and wait for it in pdl_wait() (measured on
 * an H100 against a plain launch: 1.2-2.9 us less where the pass is short next to the GEMM).
 * Kernels 3 and 5. */
template <class F, class... Args>
cudaError_t launch_after_presplit(F *kernel, const SgemmArgs &a, unsigned grid, unsigned splits,
                                  unsigned threads, size_t smem, Args... args)
{
    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t lc = {};
    lc.gridDim = dim3(grid, 1, splits);
    lc.blockDim = dim3(threads);
    lc.dynamicSmemBytes = smem;
    lc.stream = a.stream;
    lc.attrs = &attr;
    lc.numAttrs = 1;
    return cudaLaunchKernelEx(&lc, kernel, args...);
}

} // namespace

#endif
