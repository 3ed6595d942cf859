// fused: the recoupling of large-U blocks as one register-tiled GEMM whose operand loads do the
// permute (issue 12).  Per CTA a tile of PM_FUSED_BM destination trees x PM_FUSED_BN columns
// (destination elements) of one block:
//     out[tile] = alpha * U[tile trees, :] * P[:, tile columns] + beta * cin[tile]
// where P[j][c] = src tree j at the source offset of column c.  The host's column tables make a
// tile's columns boxes of destination-consecutive x source-consecutive elements and list them
// for the gather in source order, so each thread loads one column (consecutive threads:
// ascending source addresses, runs of up to 16 elements); the result goes out through shared
// memory, one column a thread (consecutive threads: destination runs).  P goes
// from global memory to shared memory directly: no extract, no workspace, no second pass over
// the output, which is what the extract + GEMM path pays twice.
// The product runs over the source trees PM_FUSED_BK at a time, double-buffered in shared
// memory with the next fill's global loads in flight during the current fill's FMAs (one
// barrier a fill); every thread accumulates 8 trees x 4 columns in registers from two vector
// reads of U and one of P per source tree; a warp covers 16 trees and skips the product where
// they all lie past the block.  Accumulation is a plain FMA chain over the source trees in
// order, so the error bound of the other variants holds unchanged.  One launch covers every
// block auto gives it; the tiles come in the order of the host's work list (most source trees
// first), each with its own copy of its columns (permute.h, pm_fused_plan).
// Three kernels share those tiles and tables: `fused` (FMAs in the element type; its fill
// through registers or by cp.async: variants fused, fused_async), `fused_mma` (v8, the product
// on the FP64 tensor cores, the fill through registers: float64, and float32 at mma_ring = 0)
// and `fused_mma_ring` (v8.2, float32 through a cp.async ring: auto's float32 kernel).
#include "common.cuh"

namespace
{

constexpr int kBM = PM_FUSED_BM, kBN = PM_FUSED_BN, kBK = PM_FUSED_BK, kNT = PM_FUSED_THREADS;
constexpr int kTM = PM_FUSED_TM, kTN = PM_FUSED_TN, kUL = PM_FUSED_U_LOADS;
// U's staged rows padded by 4: rows stay 16-byte aligned for the vector reads, and the
// transposing store (consecutive threads: consecutive k) spreads over 8 banks, not one.
constexpr int kUP = kBM + 4, kPR = PM_FUSED_PROW;
static_assert(kBN == kNT, "one gathered element column per thread");
static_assert(kBM == 4 * kTM && kBN == 4 * 8 * kTN, "4 warps of 2 x 2 (16 trees x 64 columns)");
static_assert(kUL * kNT == kBM * kBK, "U's fill divides evenly over the threads");

// Four consecutive elements as vectors (16-byte aligned: float4, two double2).
template <typename T> struct vec4;

template <> struct vec4<float> {
    static __device__ __forceinline__ void load(const float *p, float *v)
    {
        const float4 x = *reinterpret_cast<const float4 *>(p);
        v[0] = x.x;
        v[1] = x.y;
        v[2] = x.z;
        v[3] = x.w;
    }
    static __device__ __forceinline__ void store(float *p, const float *v)
    {
        *reinterpret_cast<float4 *>(p) = make_float4(v[0], v[1], v[2], v[3]);
    }
};

template <> struct vec4<double> {
    static __device__ __forceinline__ void load(const double *p, double *v)
    {
        const double2 x = reinterpret_cast<const double2 *>(p)[0];
        const double2 y = reinterpret_cast<const double2 *>(p)[1];
        v[0] = x.x;
        v[1] = x.y;
        v[2] = y.x;
        v[3] = y.y;
    }
    static __device__ __forceinline__ void store(double *p, const double *v)
    {
        reinterpret_cast<double2 *>(p)[0] = make_double2(v[0], v[1]);
        reinterpret_cast<double2 *>(p)[1] = make_double2(v[2], v[3]);
    }
};

// The global loads of one fill: kBK source trees of this thread's element column, and its kUL
// elements of U (zero past the block's trees, so the product needs no bounds).  U load q is
// tree urow + q * kUS, column uk (pm_fused_u_slot: kNT threads are kUS whole rows of a fill).
// v3: the addresses walk: sj is this fill's first source tree (advanced by kBK trees a fill),
// each next tree n elements on, uj this fill's U column, its loads ucs = kUS * cols apart; kv
// (valid trees in this fill, 0 for a column past the block) and uok (bit q: U load q in the
// block) are one compare each.  The v2 form rebuilt every address from (jc + k) * n in 64 bits
// with its own predicate: ~13 instructions a load in the SASS, ~5 now.
constexpr int kUS = kNT / kBK;
static_assert(kNT % kBK == 0, "a U load's column does not depend on q");
static_assert(kUL <= 32, "uok holds one bit a U load");

template <typename T>
__device__ __forceinline__ void fill_load(const T *__restrict__ sj, int32_t kv, int32_t n,
                                          const T *__restrict__ uj, int32_t ucs, unsigned uok,
                                          T *pv, T *uv)
{
    const T *q = sj;
#pragma unroll
    for (int k = 0; k < kBK; k++) {
        pv[k] = k < kv ? *q : T(0);
        q += n;
    }
#pragma unroll
    for (int i = 0; i < kUL; i++)
        uv[i] = (uok >> i) & 1u ? uj[i * ucs] : T(0);
}

// The same fill by cp.async straight into shared memory (fused_load = async): no registers
// hold the next fill and no stores move it, and a slot with ok false is zero-filled without a
// read (its address stays a valid one).  Made visible by copy_wait and the barrier after it.
template <typename T> __device__ __forceinline__ void copy_async(T *smem, const T *gmem, bool ok)
{
#if defined(__CUDA_ARCH__)
    const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    if (sizeof(T) == 4)
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(gmem),
                     "r"(ok ? 4 : 0)
                     : "memory");
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(s), "l"(gmem),
                     "r"(ok ? 8 : 0)
                     : "memory");
#else
    *smem = ok ? *gmem : T(0); // the CPU emulation (tests/emu: permute_fused_emu): copied at issue
#endif
}

// This thread's copies have landed (a barrier must follow before others read them).
__device__ __forceinline__ void copy_wait()
{
#if defined(__CUDA_ARCH__)
    asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}

template <typename T>
__device__ __forceinline__ void fill_async(T (*ps)[kPR], T (*us)[kUP], int32_t spos,
                                           const T *__restrict__ sj, int32_t kv, int32_t n,
                                           const T *__restrict__ uj, int32_t ucs, unsigned uok,
                                           int32_t ur, int32_t uk, const T *__restrict__ safe)
{
    // A slot past the block passes safe (a valid address) and is zero-filled without a read.
    const T *q = sj;
#pragma unroll
    for (int k = 0; k < kBK; k++) {
        const bool ok = k < kv;
        copy_async(&ps[k][spos], ok ? q : safe, ok);
        q += n;
    }
#pragma unroll
    for (int i = 0; i < kUL; i++) {
        const bool ok = (uok >> i) & 1u;
        copy_async(&us[uk][ur + i * kUS], ok ? uj + i * ucs : safe, ok);
    }
}

// The epilogue of `fused` (v3): the tile goes through shared memory (ps is free: the loop's last
// barrier closed its reads) and thread t writes column t of every tree.  Columns are destination
// runs of up to PM_FUSED_RX elements in order, so a warp's store is 4 runs (4-8 sectors for
// 32 elements); v2 stored each thread's 8 x 4 from registers: one float4 where aligned (54%
// on large_u), else 4 scalar stores a tree with columns 4 apart (16 sectors for 32
// elements: ncu saw 9.5 of 32 bytes a sector used and 25% of the stall samples there).
template <typename T, bool BETA>
__device__ __forceinline__ void
fused_epilogue(const T (&acc)[kTM][kTN], T (&ps)[2][kBK][kPR], const int32_t *dcs, int64_t dst_off,
               int32_t row0, int32_t n, int32_t rows, int32_t t, int32_t r0, int32_t e0, bool busy,
               const T *__restrict__ cin, T *__restrict__ out, T alpha, T beta)
{
    constexpr int kOP = kBN + 4; // rows stay 16-byte aligned for the float4 writes
    static_assert(sizeof(T) * kBM * kOP <= sizeof(ps), "the staged tile fits in ps");
    T(*os)[kOP] = reinterpret_cast<T(*)[kOP]>(&ps[0][0][0]);
    if (busy)
#pragma unroll
        for (int i = 0; i < kTM; i++)
            vec4<T>::store(&os[r0 + i][e0], acc[i]);
    __syncthreads();
    const int32_t c = dcs[t];
    const int32_t nr = min(kBM, rows - row0);
    if (c < 0)
        return;
    const int64_t d = dst_off + (int64_t)row0 * n + c;
    T *__restrict__ o = out + d;
    const T *__restrict__ ci = cin + (BETA ? d : 0);
#pragma unroll 4
    for (int32_t r = 0; r < nr; r++) {
        const T x = os[r][t];
        *o = BETA ? alpha * x + beta * *ci : alpha * x;
        o += n;
        if (BETA)
            ci += n;
    }
}

// Register budget: 32 accumulators (64 in float64), 12 operands, the next fill's 20 (40)
// loads.  Capped for 4 CTAs an SM in float32 (117 registers on sm_90a, 108 on sm_80, no
// spills) and 3 in float64 on sm_90a (164, no spills; uncapped it takes 230, 2 CTAs; 4 CTAs
// spill); sm_80 keeps float64 at 2 CTAs (184), as 3 spill there.  With cp.async fills
// (fused_async, and auto in float32) nothing holds the next fill: 5 CTAs in float32 (95 / 87
// registers; a cap of 6 spills), 4 in float64 (128), no spills.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
constexpr int kCtas64 = 2;
#else
constexpr int kCtas64 = 3;
#endif

template <typename T, bool BETA, bool ASYNC>
__global__ void __launch_bounds__(kNT, ASYNC            ? (sizeof(T) == 4 ? 5 : 4)
                                       : sizeof(T) == 4 ? 4
                                                        : kCtas64)
    fused(const pm_fused_gather *__restrict__ gather, const int32_t *__restrict__ dcol,
          const pm_fused_item *__restrict__ items, const T *__restrict__ src,
          const T *__restrict__ cin, const T *__restrict__ u, T *__restrict__ out, T alpha, T beta)
{
    __shared__ __align__(16) T ps[2][kBK][kPR];
    __shared__ __align__(16) T us[2][kBK][kUP];
    __shared__ __align__(16) int32_t dcs[kBN]; // the tile's destination columns (epilogue)
    const int32_t t = (int32_t)threadIdx.x;
    // The tile, this thread's gather entry and one destination column: three loads, none
    // waiting on another.  The column goes to shared memory before the first fill's barrier,
    // so the epilogue reads it there instead of starting a dependent global round trip after
    // the loop (v3: ~4% of the f32 profile's stall samples sat on that load).
    const pm_fused_item it = items[blockIdx.x];
    const int64_t tab = (int64_t)blockIdx.x * kBN;
    const pm_fused_gather g = gather[tab + t];
    dcs[t] = dcol[tab + t];
    const int32_t n = it.n, rows = it.rows, cols = it.cols;

    // The gather: this thread's source offset (-1: past the block) and shared-memory slot.
    const bool valid = g.soff >= 0;
    const T *sp = src + it.src_off + (valid ? g.soff : 0);
    // U's staging: tile tree ur + q * kUS, fill column uk of this thread's loads.
    int32_t ur, uk;
    pm_fused_u_slot(t, 0, &ur, &uk);
    const int32_t urow = it.row0 + ur;
    const T *uq = u + it.u_off + (int64_t)urow * cols + uk;
    int32_t r0, e0;
    pm_fused_thread(t, &r0, &e0);
    const int32_t pe = pm_fused_pos(e0);
    // A warp whose trees all lie past the block gathers and waits at the barriers, no more.
    const bool busy = it.row0 + pm_fused_warp_row0(t) < rows;

    T pv[kBK], uv[kUL], acc[kTM][kTN];
#pragma unroll
    for (int i = 0; i < kTM; i++)
#pragma unroll
        for (int j = 0; j < kTN; j++)
            acc[i][j] = T(0);

    // The walking fill state (fill_load): the source trees and U column of the next fill.
    const T *sj = sp, *uj = uq;
    const int64_t sstep = (int64_t)kBK * n;
    const int32_t ucs = kUS * cols;
    unsigned urmask = 0;
#pragma unroll
    for (int i = 0; i < kUL; i++)
        urmask |= urow + i * kUS < rows ? 1u << i : 0u;

    if (ASYNC) {
        fill_async(ps[0], us[0], g.spos, sj, valid ? min(kBK, cols) : 0, n, uj, ucs,
                   uk < cols ? urmask : 0u, ur, uk, src);
        copy_wait();
    } else {
        fill_load(sj, valid ? min(kBK, cols) : 0, n, uj, ucs, uk < cols ? urmask : 0u, pv, uv);
#pragma unroll
        for (int k = 0; k < kBK; k++)
            ps[0][k][g.spos] = pv[k];
#pragma unroll
        for (int q = 0; q < kUL; q++)
            us[0][uk][ur + q * kUS] = uv[q];
    }
    __syncthreads();

    int buf = 0;
    for (int32_t jc = 0; jc < cols; jc += kBK) {
        // The next fill's loads go out before this fill's FMAs; its buffer was last read in
        // the previous fill, which the barrier below that fill closed.
        const int32_t jn = jc + kBK;
        const bool more = jn < cols;
        if (more) {
            sj += sstep;
            uj += kBK;
            const int32_t kv = valid ? min(kBK, cols - jn) : 0;
            const unsigned uok = jn + uk < cols ? urmask : 0u;
            if (ASYNC)
                fill_async(ps[buf ^ 1], us[buf ^ 1], g.spos, sj, kv, n, uj, ucs, uok, ur, uk, src);
            else
                fill_load(sj, kv, n, uj, ucs, uok, pv, uv);
        }
        const int32_t nc = busy ? min(kBK, cols - jc) : 0;
#pragma unroll
        for (int k0 = 0; k0 < kBK; k0 += 4) {
            if (k0 >= nc) // the same for the whole warp; the staged zeros cover nc..k0+3
                break;
#pragma unroll
            for (int k = k0; k < k0 + 4; k++) {
                T a[kTM], p[kTN];
                vec4<T>::load(&us[buf][k][r0], a);
                vec4<T>::load(&us[buf][k][r0 + 4], a + 4);
                vec4<T>::load(&ps[buf][k][pe], p);
#pragma unroll
                for (int i = 0; i < kTM; i++)
#pragma unroll
                    for (int j = 0; j < kTN; j++)
                        acc[i][j] = fma(a[i], p[j], acc[i][j]);
            }
        }
        if (more && !ASYNC) {
#pragma unroll
            for (int k = 0; k < kBK; k++)
                ps[buf ^ 1][k][g.spos] = pv[k];
#pragma unroll
            for (int q = 0; q < kUL; q++)
                us[buf ^ 1][uk][ur + q * kUS] = uv[q];
        }
        if (ASYNC)
            copy_wait();
        __syncthreads();
        buf ^= 1;
    }

    fused_epilogue<T, BETA>(acc, ps, dcs, it.dst_off, it.row0, n, rows, t, r0, e0, busy, cin, out,
                            alpha, beta);
}

// ---- v8: the product on the FP64 tensor cores -------------------------------------------------
// fused_mma: the tiles, column tables, gather and epilogue order of `fused`; the fill goes
// through registers as there, converted to double on its way into shared memory, and the
// product runs on the FP64 tensor cores: mma.sync.m16n8k4.f64 (two m8n8k4 on sm_80), 512
// multiply-adds a warp-instruction against an FFMA's 32.  The products of float32 operands are
// exact in double and the sums round to 53 bits, so a float32 result rounds once, at the end:
// tighter than the FMA chain's bound, which still applies; in float64 each DMMA step is a
// rounded (.rn) multiply-add, the FMA chain's error class.
// v8.1: 256 threads a CTA (8 warps of 16 trees x 32 columns, 32 double accumulators a thread)
// instead of v8's 128 (4 warps of 16 x 64, 64 accumulators: 128 registers, 4 CTAs an SM): run
// 16's profile of v8 had the tensor pipe 24% busy and 0.46 eligible warps a scheduler, its loop
// stalled on short dependency chains (fixed-latency waits, shared-memory loads) and 45% of
// the samples in the prologue and epilogue: more warps to overlap them.  Each column of the
// gather is two threads' (trees 0-7 and 8-15 of every fill).
// Shared memory in doubles: P's rows hold tile column c at c + c / 8 (mma_pos: a half-warp's
// gather stores, columns 8 apart, and a fragment read, 4 trees x 4 consecutive columns, each
// fall on 16 distinct 8-byte bank pairs), rows 148 apart; U's 36 apart (a fragment read: 4
// columns x 4 trees, distinct); the staged result's 136 apart (a quarter-warp's 16-byte
// stores, 2 trees x 4 column pairs, distinct).
constexpr int kMT = 2 * kNT, kMH = kBK / 2, kMUL = kBM * kBK / kMT, kMUS = kMT / kBK;
constexpr int kMP = kBN + kBN / 8 + 4, kMU = kBM + 4, kMO = kBN + 8;
constexpr int kMPFill = kBK * kMP, kMUFill = kBK * kMU;
static_assert(kBM * kMO <= 2 * kMPFill, "the staged result fits in P's fills");
static_assert(kBM == 32 && kBN == 128 && kMT == 256, "8 warps of 16 trees x 32 columns");

__device__ __forceinline__ int32_t mma_pos(int32_t c)
{
    return c + (c >> 3);
}

// U's slot of tree r in fill column k: r XOR-swizzled by k / 4 % 4 (within its aligned group of
// 4), so the converting stores (a half-warp: 16 fill columns of one tree) meet 16 distinct bank
// pairs; unswizzled they met 4 (run 17: 4-way conflicts on 1 in 8 of the kernel's stores,
// 44% of its shared-store wavefronts excess).  A fragment read (4 columns from one k / 4, 4
// trees) stays conflict-free.
__device__ __forceinline__ int32_t mma_urow(int32_t r, int32_t k)
{
    return r ^ ((k >> 2) & 3);
}

// One k-step of 4 source trees for this lane's 4 tiles: d[j] += A(16 x 4) B(4 x 8) where A is
// U's trees wr.. of fill columns k.., B P's columns wc + 8 j.. (PTX ISA, matrix fragments for
// mma.m16n8k4 .f64: a0 = A[g][q], a1 = A[g + 8][q], b = B[q][g], d = D[g][2q, 2q + 1] and
// D[g + 8][2q, 2q + 1], g = lane / 4, q = lane % 4).  S is shared memory's element type (float
// in the ring: converted as read), U's rows PU and P's PP apart, U's tree index XOR-swizzled by
// (k / 4 % 4) << SWZ.  The CPU emulation (tests/emu: permute_fused_emu) computes the same lane's D
// elements from shared memory directly.
template <typename S, int PU, int PP, int SWZ>
__device__ __forceinline__ void mma_step(double (&d)[4][4], const S (*us)[PU], const S (*ps)[PP],
                                         int32_t k, int32_t wr, int32_t wc, int32_t lane)
{
    const int32_t g = lane >> 2, q = lane & 3, swz = ((k >> 2) & 3) << SWZ;
#if defined(__CUDA_ARCH__)
    const double a0 = us[k + q][(wr + g) ^ swz], a1 = us[k + q][(wr + g + 8) ^ swz];
    const S *pb = &ps[k + q][mma_pos(wc) + g];
#pragma unroll
    for (int j = 0; j < 4; j++) {
        const double b = pb[9 * j]; // column wc + 8 j + g: mma_pos adds j
#if __CUDA_ARCH__ >= 900
        asm("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5}, "
            "{%6}, {%0, %1, %2, %3};\n"
            : "+d"(d[j][0]), "+d"(d[j][1]), "+d"(d[j][2]), "+d"(d[j][3])
            : "d"(a0), "d"(a1), "d"(b));
#else
        asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\n"
            : "+d"(d[j][0]), "+d"(d[j][1])
            : "d"(a0), "d"(b));
        asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\n"
            : "+d"(d[j][2]), "+d"(d[j][3])
            : "d"(a1), "d"(b));
#endif
    }
#else
    for (int j = 0; j < 4; j++)
        for (int i = 0; i < 4; i++) {
            const int32_t r = wr + g + 8 * (i >> 1), c = wc + 8 * j + 2 * q + (i & 1);
            for (int kk = 0; kk < 4; kk++)
                d[j][i] = fma((double)us[k + kk][r ^ swz], (double)ps[k + kk][mma_pos(c)], d[j][i]);
        }
#endif
}

// This thread's loads of one fill: its kMH source trees of its column (every other tree
// half: sj is the first), its kMUL elements of U (rows urow + q * kMUS, zero past the block).
template <typename T>
__device__ __forceinline__ void mma_load(const T *__restrict__ sj, int32_t kv, int32_t n,
                                         const T *__restrict__ uj, int32_t ucs, unsigned uok, T *pv,
                                         T *uv)
{
    const T *q = sj;
#pragma unroll
    for (int k = 0; k < kMH; k++) {
        pv[k] = k < kv ? *q : T(0);
        q += n;
    }
#pragma unroll
    for (int i = 0; i < kMUL; i++)
        uv[i] = (uok >> i) & 1u ? uj[i * ucs] : T(0);
}

// The trees of a fill this thread loads, of its kMH: left = the block's trees from its first.
__device__ __forceinline__ int32_t mma_kv(bool valid, int32_t left)
{
    return !valid || left < 0 ? 0 : min(kMH, left);
}

// A thread's part of a DMMA tile (fused_mma, fused_mma_ring): the tile's item, its gather
// column e and tree half (trees k0h.. of every fill), that column's slot mp in P's rows, its U
// loads (trees ur + q * kMUS of fill column uk: rows in urmask), its warp's trees wr.. and
// columns wc..; busy: the warp's trees hold any of the block's.  Offsets are in elements.
struct mma_thread {
    pm_fused_item it;
    int64_t soff, sstep, uoff;
    int32_t lane, e, half, k0h, mp, ur, uk, ucs, wr, wc;
    unsigned urmask;
    bool valid, busy;
};

// The tile's item, this thread's gather entry and (first half) its column's destination into
// dcs: three loads, none waiting on another.
__device__ __forceinline__ mma_thread mma_begin(const pm_fused_gather *__restrict__ gather,
                                                const int32_t *__restrict__ dcol,
                                                const pm_fused_item *__restrict__ items,
                                                int32_t *dcs)
{
    mma_thread m;
    const int32_t t = (int32_t)threadIdx.x, warp = t >> 5;
    m.lane = t & 31;
    m.e = t & (kBN - 1);
    m.half = t >> 7;
    m.it = items[blockIdx.x];
    const int64_t tab = (int64_t)blockIdx.x * kBN;
    const pm_fused_gather g = gather[tab + m.e];
    if (m.half == 0)
        dcs[m.e] = dcol[tab + m.e];
    m.valid = g.soff >= 0;
    m.k0h = m.half * kMH;
    m.soff = m.it.src_off + (m.valid ? g.soff : 0) + (int64_t)m.k0h * m.it.n;
    m.sstep = (int64_t)kBK * m.it.n;
    // The column's slot in P's rows: the table's slot (pm_fused_pos: 4 pad a 32) undone.
    m.mp = mma_pos(g.spos - g.spos / (32 + 4) * 4);
    m.ur = t / kBK;
    m.uk = t % kBK;
    const int32_t urow = m.it.row0 + m.ur;
    m.uoff = m.it.u_off + (int64_t)urow * m.it.cols + m.uk;
    m.ucs = kMUS * m.it.cols;
    m.urmask = 0;
#pragma unroll
    for (int i = 0; i < kMUL; i++)
        m.urmask |= urow + i * kMUS < m.it.rows ? 1u << i : 0u;
    m.wr = (warp >> 2) * 16;
    m.wc = (warp & 3) * 32;
    m.busy = m.it.row0 + m.wr < m.it.rows;
    return m;
}

// Epilogue as fused's, once the loop's last barrier closed the reads of ms: the tile staged in
// shared memory in double (alpha and beta apply before the one rounding to T), then thread t
// writes column t % 128 of the tile's trees 16 (t / 128) ...
template <typename T, bool BETA>
__device__ __forceinline__ void mma_end(const mma_thread &m, const double (&acc)[4][4], void *ms,
                                        const int32_t *dcs, T *__restrict__ out,
                                        const T *__restrict__ cin, T alpha, T beta)
{
    double(*os)[kMO] = reinterpret_cast<double(*)[kMO]>(ms);
    if (m.busy) {
        const int32_t g4 = m.lane >> 2, q4 = m.lane & 3;
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const int32_t c = m.wc + 8 * j + 2 * q4;
            *reinterpret_cast<double2 *>(&os[m.wr + g4][c]) = make_double2(acc[j][0], acc[j][1]);
            *reinterpret_cast<double2 *>(&os[m.wr + g4 + 8][c]) =
                make_double2(acc[j][2], acc[j][3]);
        }
    }
    __syncthreads();
    const int32_t c = dcs[m.e], n = m.it.n;
    const int32_t r0 = m.half * (kBM / 2), nr = min(kBM / 2, m.it.rows - m.it.row0 - r0);
    if (c < 0)
        return;
    const int64_t d = m.it.dst_off + (int64_t)(m.it.row0 + r0) * n + c;
    T *__restrict__ o = out + d;
    const T *__restrict__ ci = cin + (BETA ? d : 0);
    const double da = (double)alpha, db = (double)beta;
#pragma unroll 4
    for (int32_t r = 0; r < nr; r++) {
        const double x = os[r0 + r][m.e];
        *o = (T)(BETA ? da * x + db * (double)*ci : da * x);
        o += n;
        if (BETA)
            ci += n;
    }
}

// Registers: 16 double accumulators a thread, the next fill's 10 elements, the fragments;
// capped for MINB CTAs an SM (pm_fused_plan.ctas): 3 (80 registers, no spills) or 4 (64: 8
// bytes spilled in float32, 48 in float64; nvcc 13.0, sm_90a).  4 CTAs is the shared memory's
// limit too (47.6 KB a CTA).
template <typename T, bool BETA, int MINB>
__global__ void __launch_bounds__(kMT, MINB)
    fused_mma(const pm_fused_gather *__restrict__ gather, const int32_t *__restrict__ dcol,
              const pm_fused_item *__restrict__ items, const T *__restrict__ src,
              const T *__restrict__ cin, const T *__restrict__ u, T *__restrict__ out, T alpha,
              T beta)
{
    __shared__ __align__(16) double ms[2 * kMPFill + 2 * kMUFill];
    __shared__ __align__(16) int32_t dcs[kBN];
    double(*ps)[kBK][kMP] = reinterpret_cast<double(*)[kBK][kMP]>(ms);
    double(*us)[kBK][kMU] = reinterpret_cast<double(*)[kBK][kMU]>(ms + 2 * kMPFill);
    const mma_thread m = mma_begin(gather, dcol, items, dcs);
    const int32_t cols = m.it.cols, k0h = m.k0h, mp = m.mp, ur = m.ur, uk = m.uk;
    const T *sj = src + m.soff, *uj = u + m.uoff;

    T pv[kMH], uv[kMUL];
    double acc[4][4];
#pragma unroll
    for (int j = 0; j < 4; j++)
#pragma unroll
        for (int i = 0; i < 4; i++)
            acc[j][i] = 0.0;

    mma_load(sj, mma_kv(m.valid, cols - k0h), m.it.n, uj, m.ucs, uk < cols ? m.urmask : 0u, pv, uv);
#pragma unroll
    for (int k = 0; k < kMH; k++)
        ps[0][k0h + k][mp] = (double)pv[k];
#pragma unroll
    for (int q = 0; q < kMUL; q++)
        us[0][uk][mma_urow(ur + q * kMUS, uk)] = (double)uv[q];
    __syncthreads();

    int buf = 0;
    for (int32_t jc = 0; jc < cols; jc += kBK) {
        const int32_t jn = jc + kBK;
        const bool more = jn < cols;
        if (more) {
            sj += m.sstep;
            uj += kBK;
            mma_load(sj, mma_kv(m.valid, cols - jn - k0h), m.it.n, uj, m.ucs,
                     jn + uk < cols ? m.urmask : 0u, pv, uv);
        }
        const int32_t nc = m.busy ? min(kBK, cols - jc) : 0;
#pragma unroll
        for (int k0 = 0; k0 < kBK; k0 += 4) {
            if (k0 >= nc) // the same for the whole warp; the staged zeros cover nc..k0+3
                break;
            mma_step<double, kMU, kMP, 0>(acc, us[buf], ps[buf], k0, m.wr, m.wc, m.lane);
        }
        if (more) {
#pragma unroll
            for (int k = 0; k < kMH; k++)
                ps[buf ^ 1][k0h + k][mp] = (double)pv[k];
#pragma unroll
            for (int q = 0; q < kMUL; q++)
                us[buf ^ 1][uk][mma_urow(ur + q * kMUS, uk)] = (double)uv[q];
        }
        __syncthreads();
        buf ^= 1;
    }
    mma_end<T, BETA>(m, acc, ms, dcs, out, cin, alpha, beta);
}

// ---- v8.2: float32 through a cp.async ring ---------------------------------------------------
// fused_mma_ring: fused_mma's warps and tensor-core product for float32, with the fill copied
// by cp.async into a ring of RS stages of raw floats, converted to double as the fragments are
// read: each fill's copies have RS - 1 fills' products to land in, and no registers hold a
// fill.  Why (NOTES, v8): run 17's profile of v8.1 (float32) had its loop stalled on the
// next fill's loads (its converting stores wait on them after one fill's product) and on short
// dependency chains; the tensor pipe 25% busy.  A ring that converted each element once, by
// the thread that copied it, into double operands (67.6 KB of dynamic shared memory, 3 CTAs an
// SM) ran 37% slower than this one (run 19: 22.0 against 16.1 µs), ~8% of it the footprint
// alone (run 24: this kernel with 27 KB more shared memory a CTA); v8.3 (U converted once, warps
// of 32 trees x 16 columns, 48.1 KB) ran 17.0 against 16.1 (branch mma-u) (NOTES, v8).
// 32-bit shared memory (a warp's access in one wavefront): P's rows 168 floats apart
// (168 = 8 mod 32), column c at mma_pos(c): a fragment read (4 trees x 8 columns) meets 32
// distinct banks, the gather's copies (columns 8 apart, two runs) at most 2 to a bank; U's rows
// 40 apart with the tree index XOR-swizzled by 2 (k / 4 % 4) (ring_urow): the copies (16 fill
// columns x 2 trees a warp) and a fragment read (4 columns x 8 trees) each meet 32 banks.
constexpr int kRP = 168, kRU = 40;
constexpr int kRPFill = kBK * kRP, kRUFill = kBK * kRU, kRStage = kRPFill + kRUFill;
constexpr int kROut = kBM * kMO * 2; // the staged result (double) in floats: 34.8 KB
static_assert(kRP >= kBN + kBN / 8 && kRP % 32 == 8 && kRU % 32 == 8, "ring pitches");

// U's slot in a fill column k: tree r XOR-swizzled (stays within its aligned group of 8).
__device__ __forceinline__ int32_t ring_urow(int32_t r, int32_t k)
{
    return r ^ (((k >> 2) & 3) << 1);
}

__device__ __forceinline__ void copy_commit()
{
#if defined(__CUDA_ARCH__)
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

// All but the newest N groups of this thread's copies have landed.
template <int N> __device__ __forceinline__ void copy_wait_group()
{
#if defined(__CUDA_ARCH__)
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

// One fill's copies: this thread's kMH trees of its column, its kMUL elements of U; a slot
// past the block is zero-filled from a valid address (safe) without a read.
__device__ __forceinline__ void ring_fill(float *st, int32_t mp, int32_t k0h,
                                          const float *__restrict__ sj, int32_t kv, int32_t n,
                                          const float *__restrict__ uj, int32_t ucs, unsigned uok,
                                          int32_t ur, int32_t uk, const float *__restrict__ safe)
{
    float(*ps)[kRP] = reinterpret_cast<float(*)[kRP]>(st);
    float(*us)[kRU] = reinterpret_cast<float(*)[kRU]>(st + kRPFill);
    const float *q = sj;
#pragma unroll
    for (int k = 0; k < kMH; k++) {
        const bool ok = k < kv;
        copy_async(&ps[k0h + k][mp], ok ? q : safe, ok);
        q += n;
    }
#pragma unroll
    for (int i = 0; i < kMUL; i++) {
        const bool ok = (uok >> i) & 1u;
        copy_async(&us[uk][ring_urow(ur + i * kMUS, uk)], ok ? uj + i * ucs : safe, ok);
    }
}

// A CTA's timeline (lab/trace_probe.cu; compiled in only with PM_FUSED_TRACE, so the plugin's
// kernels are unchanged): thread 0 writes its SM and the global timer at the kernel's start,
// when the first fill has landed, after the loop and after the epilogue's stores have issued,
// into pm_fused_trace[blockIdx.x][0..5] where that pointer is set.
#ifdef PM_FUSED_TRACE
__device__ unsigned long long *pm_fused_trace;
__device__ __forceinline__ void trace_at(int k)
{
    if (threadIdx.x != 0 || !pm_fused_trace)
        return;
    unsigned long long t;
    unsigned sm;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    pm_fused_trace[blockIdx.x * 6 + 1 + k] = t;
    if (k == 0)
        pm_fused_trace[blockIdx.x * 6] = sm;
}
#else
__device__ __forceinline__ void trace_at(int) {}
#endif

// RS stages: 2 (26.6 KB, 34.8 KB with the staged result: the next fill's copies land during
// one fill's product) or 3 (39.9 KB: two fills'); registers capped for MINB CTAs an SM.
template <bool BETA, int MINB, int RS>
__global__ void __launch_bounds__(kMT, MINB)
    fused_mma_ring(const pm_fused_gather *__restrict__ gather, const int32_t *__restrict__ dcol,
                   const pm_fused_item *__restrict__ items, const float *__restrict__ src,
                   const float *__restrict__ cin, const float *__restrict__ u,
                   float *__restrict__ out, float alpha, float beta)
{
    __shared__ __align__(16) float ring[RS * kRStage > kROut ? RS * kRStage : kROut];
    __shared__ __align__(16) int32_t dcs[kBN];
    trace_at(0);
    const mma_thread m = mma_begin(gather, dcol, items, dcs);
    const int32_t cols = m.it.cols, k0h = m.k0h;
    const float *sj = src + m.soff, *uj = u + m.uoff;

    double acc[4][4];
#pragma unroll
    for (int j = 0; j < 4; j++)
#pragma unroll
        for (int i = 0; i < 4; i++)
            acc[j][i] = 0.0;

            // Fills 0 .. RS - 2 go out first, one group each (empty past the block's trees, so that
            // the group count of the waits holds).
#pragma unroll
    for (int f = 0; f < RS - 1; f++) {
        const int32_t j0 = f * kBK;
        if (j0 < cols)
            ring_fill(ring + f * kRStage, m.mp, k0h, sj + f * m.sstep,
                      mma_kv(m.valid, cols - j0 - k0h), m.it.n, uj + j0, m.ucs,
                      j0 + m.uk < cols ? m.urmask : 0u, m.ur, m.uk, src);
        copy_commit();
    }
    copy_wait_group<RS - 2>();
    __syncthreads();
    trace_at(1);

    int stage = 0;
    for (int32_t jc = 0; jc < cols; jc += kBK) {
        // Fill f + RS - 1 into the stage fill f - 1 used (the last barrier closed its reads).
        const int32_t jn = jc + (RS - 1) * kBK;
        int nst = stage + RS - 1;
        nst -= nst >= RS ? RS : 0;
        if (jn < cols)
            ring_fill(ring + nst * kRStage, m.mp, k0h, sj + (int64_t)(jn / kBK) * m.sstep,
                      mma_kv(m.valid, cols - jn - k0h), m.it.n, uj + jn, m.ucs,
                      jn + m.uk < cols ? m.urmask : 0u, m.ur, m.uk, src);
        copy_commit();
        const int32_t nc = m.busy ? min(kBK, cols - jc) : 0;
        const float *st = ring + stage * kRStage;
#pragma unroll
        for (int k0 = 0; k0 < kBK; k0 += 4) {
            if (k0 >= nc) // the same for the whole warp; the zero-filled slots cover nc..k0+3
                break;
            mma_step<float, kRU, kRP, 1>(acc, reinterpret_cast<const float(*)[kRU]>(st + kRPFill),
                                         reinterpret_cast<const float(*)[kRP]>(st), k0, m.wr, m.wc,
                                         m.lane);
        }
        copy_wait_group<RS - 2>(); // fill f + 1 has landed (this thread's copies)
        __syncthreads();
        stage += stage + 1 == RS ? 1 - RS : 1;
    }
    trace_at(2);
    copy_wait_group<0>(); // nothing in flight over the ring before it holds the result
    __syncthreads();
    mma_end<float, BETA>(m, acc, ring, dcs, out, cin, alpha, beta);
    trace_at(3);
}

// One launch of a fused kernel over the plan's tiles: every kernel here takes the same
// arguments, in its element type T; the callers pick the template instance.
template <typename T>
using fused_kernel = void (*)(const pm_fused_gather *, const int32_t *, const pm_fused_item *,
                              const T *, const T *, const T *, T *, T, T);

template <typename T>
cudaError_t launch_one(fused_kernel<T> kernel, int threads, const pm_fused_plan *h,
                       const pm_fused_gather *gather, const int32_t *dcol,
                       const pm_fused_item *items, const void *src, const void *cin,
                       const void *u, void *out, double alpha, double beta, cudaStream_t s)
{
    kernel<<<(unsigned)h->items, threads, 0, s>>>(gather, dcol, items, (const T *)src,
                                                  (const T *)cin, (const T *)u, (T *)out,
                                                  (T)alpha, (T)beta);
    return cudaGetLastError();
}

template <typename T, bool BETA> fused_kernel<T> pick(const pm_fused_plan *h)
{
    if (h->fill == PM_FUSED_FILL_REGS || h->fill == PM_FUSED_FILL_ASYNC)
        return h->fill == PM_FUSED_FILL_ASYNC ? fused<T, BETA, true> : fused<T, BETA, false>;
    if constexpr (sizeof(T) == 4)
        if (h->fill == PM_FUSED_FILL_RING) {
            if (h->ring == 2)
                return h->ctas == 4 ? fused_mma_ring<BETA, 4, 2> : fused_mma_ring<BETA, 3, 2>;
            return h->ctas == 4 ? fused_mma_ring<BETA, 4, 3> : fused_mma_ring<BETA, 3, 3>;
        }
    return h->ctas == 4 ? fused_mma<T, BETA, 4> : fused_mma<T, BETA, 3>;
}

template <typename T>
cudaError_t launch(const pm_fused_plan *h, const pm_fused_gather *gather, const int32_t *dcol,
                   const pm_fused_item *items, const void *src, const void *cin, const void *u,
                   void *out, double alpha, double beta, cudaStream_t s)
{
    const fused_kernel<T> k = beta != 0.0 ? pick<T, true>(h) : pick<T, false>(h);
    const int threads =
        h->fill == PM_FUSED_FILL_REGS || h->fill == PM_FUSED_FILL_ASYNC ? kNT : kMT;
    return launch_one<T>(k, threads, h, gather, dcol, items, src, cin, u, out, alpha, beta, s);
}

} // namespace

extern "C" int pm_run_fused(int esize, const pm_fused_plan *hplan, const pm_fused_gather *digather,
                            const int32_t *didcol, const pm_fused_item *ditem, const void *src,
                            const void *cin, const void *u, void *out, double alpha, double beta,
                            void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    if (hplan->items == 0)
        return (int)cudaSuccess;
    return (int)(esize == 4 ? launch<float>(hplan, digather, didcol, ditem, src, cin, u, out,
                                            alpha, beta, s)
                            : launch<double>(hplan, digather, didcol, ditem, src, cin, u, out,
                                             alpha, beta, s));
}
