/* sgemm step 11, 3xTF32, kernel 3: wgmma on B split once per launch into a workspace, stages
 * handed over by mbarriers, optionally split-K (sm_90a), and its launch (run_wgmma_ps).  Part
 * of the translation unit 11_tf32x3.cu. */
#ifndef KBENCH_SGEMM_TF32X3_PRESPLIT_CUH
#define KBENCH_SGEMM_TF32X3_PRESPLIT_CUH

#include "11_tf32x3_common.cuh"

namespace
{

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
/* A stage: B big, B small (swizzled, 16 KB each), then the padded raw A tile As[k][m] (49 x
 * 1024 bytes in all); with TRANS (C^T = B^T A^T: A pre-split, B raw) A^T big, A^T small, then
 * the raw B tile Bs[n][k] in rows of 36 floats (50 x 1024 bytes).  Every stage stays
 * 1024-byte aligned for the swizzle. */
template <bool TRANS> constexpr int ps_stage_floats()
{
    return 2 * kBStageSw + (TRANS ? kBStagePadded : kAStage);
}
static_assert(ps_stage_floats<false>() * 4 % 1024 == 0 && ps_stage_floats<true>() * 4 % 1024 == 0,
              "stages must keep the 1024-byte alignment");
template <bool TRANS> constexpr size_t ps_smem()
{
    return (size_t)kPsStages * ps_stage_floats<TRANS>() * sizeof(float) + 1024;
}

/* The mbarrier ring of kernels 3 and 5 in shared memory: STAGES stages of STAGE_FLOATS from
 * the first 1024-byte boundary of smem (the swizzle's alignment), and each stage's "full"
 * barrier at bars[s] and "empty" one at bars[STAGES + s].  Tile t goes to stage t % STAGES. */
template <int STAGES, int STAGE_FLOATS> struct MbarRing {
    float *base;
    uint32_t base_addr, bar_addr;
    __device__ __forceinline__ MbarRing(float *smem, uint64_t *bars)
    {
        const uint32_t raw_addr = sgemm_smem_addr(smem);
        base = smem + ((1024 - (raw_addr & 1023)) & 1023) / 4;
        base_addr = sgemm_smem_addr(base);
        bar_addr = sgemm_smem_addr(bars);
    }
    __device__ __forceinline__ uint32_t full(int t) const
    {
        return bar_addr + 8 * (t % STAGES);
    }
    __device__ __forceinline__ uint32_t empty(int t) const
    {
        return bar_addr + 8 * (STAGES + t % STAGES);
    }
    __device__ __forceinline__ float *stage(int t) const
    {
        return base + (t % STAGES) * STAGE_FLOATS;
    }
    __device__ __forceinline__ uint32_t stage_addr(int t) const
    {
        return base_addr + (uint32_t)((t % STAGES) * STAGE_FLOATS * 4);
    }
};

/* Four consecutive k (k .. k + 3) of B's column n, zero outside K x N, split into big and
 * small (the pre-split passes of kernels 3 and 5). */
__device__ __forceinline__ void load_split4(const float *__restrict__ B, int ldb, int N, int K,
                                            int n, int k, uint4 &b, uint4 &s)
{
    float x[4];
#pragma unroll
    for (int e = 0; e < 4; e++)
        x[e] = n < N && k + e < K ? B[(size_t)n * ldb + k + e] : 0.0f;
    split_tf32(x[0], b.x, s.x);
    split_tf32(x[1], b.y, s.y);
    split_tf32(x[2], b.z, s.z);
    split_tf32(x[3], b.w, s.w);
}

/* B -> big, small: [Np][Kp] each, element (k, n) at n*Kp + k, zero outside K x N.  One thread
 * per 4 consecutive k of one column (a warp covers 512 contiguous bytes of a column). */
__global__ void tf32x3_presplit_b(int N, int K, const float *__restrict__ B, int ldb, int Np,
                                  int Kp, float *__restrict__ big, float *__restrict__ small)
{
    pdl_launch_dependents(); /* the GEMM may take SMs as they free up */
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int kq = Kp / 4;
    if (i >= (size_t)Np * kq)
        return;
    const int n = (int)(i / kq), k = 4 * (int)(i % kq);
    uint4 b, s;
    load_split4(B, ldb, N, K, n, k, b, s);
    *reinterpret_cast<uint4 *>(big + (size_t)n * Kp + k) = b;
    *reinterpret_cast<uint4 *>(small + (size_t)n * Kp + k) = s;
}

/* A's 32x32 block at (m0, k0) into t as t[k - k0][m - m0], zero outside M x K, by blocks of
 * 32x8 threads reading along m (the first half of the A^T pre-split passes of kernels 3 and
 * 5); t is complete when it returns. */
__device__ __forceinline__ void load_a_block_t(const float *__restrict__ A, int lda, int M, int K,
                                               int m0, int k0, float (&t)[32][33])
{
    const int tx = threadIdx.x, ty = threadIdx.y;
#pragma unroll
    for (int j = 0; j < 32; j += 8) {
        const int m = m0 + tx, k = k0 + ty + j;
        t[ty + j][tx] = m < M && k < K ? A[sgemm_at(m, k, lda)] : 0.0f;
    }
    __syncthreads();
}

/* A -> (A^T) big, small for the transposed form: [Mp][Kp] each, element (m, k) at m*Kp + k,
 * zero outside M x K, so that A^T's tiles are K-major like the pre-split B's.  32x32 tiles
 * through shared memory (blocks of 32x8 threads): read along m, written along k. */
__global__ void tf32x3_presplit_at(int M, int K, const float *__restrict__ A, int lda, int Kp,
                                   float *__restrict__ big, float *__restrict__ small)
{
    pdl_launch_dependents(); /* the GEMM may take SMs as they free up */
    __shared__ float t[32][33];
    const int m0 = blockIdx.y * 32, k0 = blockIdx.x * 32;
    const int tx = threadIdx.x, ty = threadIdx.y;
    load_a_block_t(A, lda, M, K, m0, k0, t);
#pragma unroll
    for (int j = 0; j < 32; j += 8) {
        const int m = m0 + ty + j, k = k0 + tx;
        uint32_t b, s;
        split_tf32(t[tx][ty + j], b, s);
        const size_t at = (size_t)m * Kp + k;
        reinterpret_cast<uint32_t *>(big)[at] = b;
        reinterpret_cast<uint32_t *>(small)[at] = s;
    }
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

static_assert(64 * kPsC0Ld <= ps_stage_floats<false>(), "half of C0's tile must fit a stage");

#ifdef TF32X3_HAVE_WGMMA
/* Copies C0's columns 64h .. 64h + 63 of the tile into stage st, in columns of kPsC0Ld floats,
 * by THREADS threads (kernel 3's 256, or kernel 5's producer's 128): 16-byte chunk
 * c = tid + THREADS*i (i < 2048 / THREADS) is rows 4*(c % 32) .. +3 of column c / 32, so a warp
 * copies one whole 512-byte column.  src: the thread's first chunk of the tile (C0 at row
 * m0 + 4*(tid % 32), column n0 + tid / 32; 16-byte aligned). */
template <int THREADS = kThreads>
__device__ __forceinline__ void ps_copy_c0_half(float *st, const float *src, int h, int ldc,
                                                int tid)
{
    constexpr int kCols = THREADS / 32; /* columns per pass */
    float *const dst = st + (tid / 32) * kPsC0Ld + 4 * (tid % 32);
#pragma unroll
    for (int i = 0; i < 64 / kCols; i++)
        cp_async_16(dst + kCols * i * kPsC0Ld, src + (size_t)(64 * h + kCols * i) * ldc, true);
}

/* Waits for tile t to land (its stage's full barrier at bar), then makes the copies visible to
 * wgmma's (async proxy) reads. */
__device__ __forceinline__ void ps_wait_full(uint32_t bar, int t)
{
    mbar_wait(bar, (t / kPsStages) & 1);
    fence_proxy_async();
}

/* The stage of empty barrier bar may be refilled: this warp's wgmmas that read it have
 * retired. */
__device__ __forceinline__ void ps_release(uint32_t bar, int lane)
{
    __syncwarp();
    if (lane == 0)
        mbar_arrive(bar);
}

/* Thread 0 initialises kernel 3's barriers at bar_addr (full[s], then empty[s]); they are
 * initialised before anyone uses them. */
__device__ __forceinline__ void ps_init_barriers(uint32_t bar_addr, int tid)
{
    if (tid == 0) {
        for (int s = 0; s < kPsStages; s++) {
            mbar_init(bar_addr + 8 * (s % kPsStages), kThreads);
            mbar_init(bar_addr + 8 * (kPsStages + s % kPsStages), kThreads / 32);
        }
    }
    __syncthreads();
}

/* The K loop of kernels 3 and 5 over a ring's tiles 0 .. ktiles-1, two K tiles per iteration,
 * tile 0's register operand already in set 0 of big, small (load_regs from the stage at
 * a_off):
 *   G0 = tile t0 issued | tile t1 full? between() | A(t1) -> set 1 | G1 = tile t1 issued |
 *   G0 retired: release(t0) | tile t2 full? between() | A(t2) -> set 0 |
 *   G1 retired: release(t1); acc += part (the 64-k partial sums promoted with round-to-nearest
 *   adds).
 * wait_full(t) waits for tile t's data, release(t) gives its stage back, between() is where
 * kernel 3 issues its next copy (after the wait, so the wait's proxy fence does not wait for
 * copies that have just left); kernel 5's producer copies instead. */
template <class Ring, class LoadRegs, class WaitFull, class Between, class Release>
__device__ __forceinline__ void
ring_k_loop(const Ring &ring, int ktiles, int a_off, float (&acc)[64], float (&part)[64],
            uint32_t (&big)[2][4][4], uint32_t (&small)[2][4][4], LoadRegs load_regs,
            WaitFull wait_full, Between between, Release release)
{
    for (int t0 = 0; t0 < ktiles; t0 += 2) {
        const int t1 = t0 + 1, t2 = t0 + 2;
        issue_tile<true>(part, big[0], small[0], ring.stage_addr(t0),
                         ring.stage_addr(t0) + kBStageSw * 4);
        if (t1 < ktiles)
            wait_full(t1);
        between();
        if (t1 < ktiles) {
            load_regs(ring.stage(t1) + a_off, big[1], small[1]);
            issue_tile<false>(part, big[1], small[1], ring.stage_addr(t1),
                              ring.stage_addr(t1) + kBStageSw * 4);
            wg_wait<1>(); /* G0 retired */
        } else {
            wg_wait<0>();
        }
        release(t0);
        if (t2 < ktiles)
            wait_full(t2);
        between();
        if (t2 < ktiles)
            load_regs(ring.stage(t2) + a_off, big[0], small[0]);
        wg_wait<0>(); /* G1 retired */
        if (t1 < ktiles)
            release(t1);
        fence_regs(part);
#pragma unroll
        for (int i = 0; i < 64; i++)
            acc[i] += part[i];
    }
}

#endif /* TF32X3_HAVE_WGMMA */

/* Warpgroup w computes rows 64w .. 64w+63 of the CTA tile, as in kernel 2, and the K loop has
 * the same shape (two K tiles per iteration, every wgmma group retired by its end, partial sums
 * promoted there); the differences are where it waits:
 *   G0 = tile t0 issued | tile t1 full? copy tile t0+2 | A(t1) -> set 1 | G1 = tile t1 issued |
 *   G0 retired: stage t0 empty | tile t2 full? copy tile t0+3 | A(t2) -> set 0 |
 *   G1 retired: stage t1 empty; acc += part.
 * Copying tile u into stage u % 4 first waits until both warpgroups have retired tile u - 4
 * there; no other wait involves the other warpgroup.
 * SPLITK: CTA (b, 0, z) computes K tiles z*kt_per_split .. of its tile, and the tile's splits
 * finish it in order through the workspace ws (leading dimension ldw) and flags
 * (store_wg_or_partial).
 * C0: on a whole tile (not TRANS, c0_vec: 16-byte aligned columns), the CTA that writes C
 * copies C0's tile into the ring as two more tiles after its K tiles (64 columns each), two
 * tiles ahead like the others, so the epilogue reads C0 from shared memory instead of waiting
 * for global loads after the K loop.
 * TRANS: the kernel computes C^T = B^T A^T, with the operands' roles swapped: B is raw and
 * split in registers (the wgmma register operand, rows n), A is the pre-split one in the
 * workspace (Sbig, Ssmall: A^T, K-major, rows m).  Where B is much larger than A
 * (256x4096x4096: 64 MB against 4 MB) this pre-splits 4 MB instead of 64.  Otherwise (not
 * TRANS) A is raw and Sbig, Ssmall are the pre-split B.  The CTA tile's register rows r0 and
 * workspace rows s0 are (m0, n0), or with TRANS (n0, m0); tiles_r and tiles_s count them. */
template <bool VEC, bool SPLITK, bool TRANS>
__global__ void __launch_bounds__(kThreads, 1)
    tf32x3_wgmma_ps_kernel(int M, int N, int K, float alpha, const float *__restrict__ A, int lda,
                           const float *__restrict__ B, int ldb, const float *__restrict__ Sbig,
                           const float *__restrict__ Ssmall, int Kp, float beta, const float *C0,
                           float *C, int ldc, int tiles_r, int tiles_s, int kt_per_split, float *ws,
                           int ldw, int *flags, int c0_vec)
{
#ifdef TF32X3_HAVE_WGMMA
    extern __shared__ __align__(16) float tf_smem[];
    __shared__ __align__(8) uint64_t bars[2 * kPsStages]; /* full[s], then empty[s] */
    const MbarRing<kPsStages, ps_stage_floats<TRANS>()> ring(tf_smem, bars);

    int r0, s0;
    tile_coords(tiles_r, tiles_s, r0, s0);
    const int m0 = TRANS ? s0 : r0, n0 = TRANS ? r0 : s0;
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int wg = warp / 4, wi = warp % 4;
    const int g = lane / 4, q = lane % 4;
    const bool interior = m0 + kBM <= M && n0 + kBN <= N;
    int kt_begin, ktiles;
    ktile_range<SPLITK>(K, kt_per_split, kt_begin, ktiles);
    /* C0's tile comes through the ring as two more tiles after the K tiles (ps_copy_c0_half), so
     * the epilogue reads it from shared memory: for the CTA that writes C (the last split), on a
     * whole tile, where C0 is read at all and its columns are 16-byte aligned (c0_vec). */
    const bool stage_c0 =
        !TRANS && c0_vec && beta != 0.0f && interior && (!SPLITK || blockIdx.z == gridDim.z - 1);
    const int ring_tiles = ktiles + (stage_c0 ? 2 : 0);
    const float *const c0_src =
        stage_c0 ? C0 + sgemm_at(m0 + 4 * (tid % 32), n0 + tid / 32, ldc) : C0;
    /* the thread's first register-operand element: As[q][64wg + 16wi + g], or with TRANS
     * Bs[64wg + 16wi + g][q] */
    const int a_off = 2 * kBStageSw + (TRANS ? (wg * 64 + wi * 16 + g) * BOffPadded::LD + q
                                             : q * kALd + wg * 64 + wi * 16 + g);

    ps_init_barriers(ring.bar_addr, tid);

    /* Pre-split chunk c = tid + 256*i (i < 4) of each of big and small: row s0 + c / 8 of the
     * workspace, 16-byte chunk c % 8 of its 32 k; a warp copies 4 whole 128-byte rows. */
    const size_t b_k0 = (size_t)kt_begin * kBK; /* 0 unless SPLITK */
    const float *b_big = Sbig + (size_t)(s0 + tid / 8) * Kp + 4 * (tid % 8) + b_k0;
    const float *b_small = Ssmall + (size_t)(s0 + tid / 8) * Kp + 4 * (tid % 8) + b_k0;
    const int b_dst = BOffSwizzled::at(tid / 8, tid % 8);
    /* the raw operand: A by copy_a, or with TRANS B by copy_b into rows of 36 floats */
    Tf32Loader<VEC, BOffPadded> loader(A, lda, B, ldb, M, N, m0, n0, tid);
    if (SPLITK)
        loader.skip(kt_begin, lda);
    auto copy_tile = [&](int u) {
        if (u >= kPsStages) /* both warpgroups are done with tile u - 4 in this stage */
            mbar_wait(ring.empty(u), (u / kPsStages - 1) & 1);
        float *const st = ring.stage(u);
        if (u >= ktiles) { /* C0's columns 64h .. 64h + 63 */
            ps_copy_c0_half(st, c0_src, u - ktiles, ldc, tid);
            mbar_arrive_cp_async(ring.full(u));
            return;
        }
        const size_t k = (size_t)u * kBK;
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const size_t rows = (size_t)32 * i * Kp;
            cp_async_16(st + b_dst + 32 * i * kBK, b_big + rows + k, true);
            cp_async_16(st + kBStageSw + b_dst + 32 * i * kBK, b_small + rows + k, true);
        }
        if (TRANS)
            loader.copy_b(st + 2 * kBStageSw, B, ldb, N, K, n0, interior, tid);
        else
            loader.copy_a(st + 2 * kBStageSw, A, lda, M, K, m0, interior, tid);
        loader.advance(lda);
        mbar_arrive_cp_async(ring.full(u));
    };

    /* Launched as the pre-split pass's programmatic dependent (launch_wgmma_ps): everything
     * above overlaps that pass; the workspace is read only once it has finished. */
    pdl_wait();

    constexpr int kAhead = 2; /* tiles in flight ahead of the one being computed */
    int next = 0;             /* next tile to copy */
    for (; next < kAhead; next++)
        if (next < ring_tiles)
            copy_tile(next);

    float acc[64], part[64];
    zero_acc(acc, part);
    uint32_t big[2][4][4], small[2][4][4];

    auto load_regs = [&](const float *p, uint32_t(&bg)[4][4], uint32_t(&sm)[4][4]) {
        if (TRANS)
            load_a_tile_rows<BOffPadded::LD>(p, bg, sm);
        else
            load_a_tile(p, bg, sm);
    };
    ps_wait_full(ring.full(0), 0);
    load_regs(ring.stage(0) + a_off, big[0], small[0]);

    ring_k_loop(
        ring, ktiles, a_off, acc, part, big, small, load_regs,
        [&](int t) { ps_wait_full(ring.full(t), t); },
        [&] {
            if (next < ring_tiles)
                copy_tile(next);
            next++;
        },
        [&](int t) { ps_release(ring.empty(t), lane); });

    /* the thread's first C0 element of each half in the ring (stage_c0) */
    const float *c0s = nullptr, *c0s_hi = nullptr;
    if (stage_c0) {
        ps_wait_full(ring.full(ktiles), ktiles);
        ps_wait_full(ring.full(ktiles + 1), ktiles + 1);
        c0s = ring.stage(ktiles) + 2 * q * kPsC0Ld + wg * 64 + wi * 16 + g;
        c0s_hi = ring.stage(ktiles + 1) + 2 * q * kPsC0Ld + wg * 64 + wi * 16 + g;
    }
    store_wg_or_partial<SPLITK, TRANS>(acc, r0 + wg * 64 + wi * 16 + g, s0 + 2 * q, interior, M, N,
                                       alpha, beta, C0, C, ldc, ws, ldw, flags, c0s, c0s_hi);
#else
    /* Built for an architecture without wgmma: the host never launches this. */
    __trap();
#endif
}

/* ---- host side ------------------------------------------------------------------------------ */

/* The pre-split B of kernel 3, grown on demand in stream order (no device-wide synchronisation
 * in the run path) and freed by tf32x3_release().  One per process: runs on several streams at
 * once would share it (the harness uses one stream). */
SgemmWorkspace presplit_ws;

/* 16-byte copies of the raw operand: A (kernel 3) or B (TRANS) aligned, and no chunk of 4
 * straddling M (A's chunks run along m) or K (B's run along k). */
template <bool TRANS> bool raw_vec_ok(const SgemmArgs &a)
{
    return TRANS ? sgemm_vec4_ok(a.B, a.ldb) && a.K % 4 == 0
                 : sgemm_vec4_ok(a.A, a.lda) && a.M % 4 == 0;
}

template <bool VEC, bool SPLITK, bool TRANS>
cudaError_t launch_wgmma_ps(const SgemmArgs &a, const float *big, const float *small, int Kp,
                            int splits, int kt_per_split, float *ws, int *flags)
{
    static const cudaError_t once =
        set_smem(tf32x3_wgmma_ps_kernel<VEC, SPLITK, TRANS>, ps_smem<TRANS>());
    if (once != cudaSuccess)
        return once;
    const int tiles_m = CEIL_DIV(a.M, kBM), tiles_n = CEIL_DIV(a.N, kBN);
    return launch_after_presplit(
        tf32x3_wgmma_ps_kernel<VEC, SPLITK, TRANS>, a, tiles_m * tiles_n, splits, kThreads,
        ps_smem<TRANS>(), a.M, a.N, a.K, a.alpha, a.A, a.lda, a.B, a.ldb, big, small, Kp, a.beta,
        a.C0, a.C, a.ldc, TRANS ? tiles_n : tiles_m, TRANS ? tiles_m : tiles_n, kt_per_split, ws,
        splitk_ldw(a), flags, (int)(!TRANS && a.ldc % 4 == 0 && (uintptr_t)a.C0 % 16 == 0));
}

template <bool SPLITK, bool TRANS>
cudaError_t launch_wgmma_ps(const SgemmArgs &a, const float *big, const float *small, int Kp,
                            int splits, int kt_per_split, float *ws, int *flags)
{
    return raw_vec_ok<TRANS>(a) ? launch_wgmma_ps<true, SPLITK, TRANS>(a, big, small, Kp, splits,
                                                                       kt_per_split, ws, flags)
                                : launch_wgmma_ps<false, SPLITK, TRANS>(a, big, small, Kp, splits,
                                                                        kt_per_split, ws, flags);
}

/* Kernel 3: B split into the workspace first (with TRANS, A^T), then the kernel.  SPLITK: K
 * split as splitk_plan says, the splits finishing each tile in order (store_wg_or_partial); with
 * one split it is kernel 3 as is. */
template <bool SPLITK, bool TRANS = false> cudaError_t run_wgmma_ps(const SgemmArgs &a)
{
    if (!sgemm_device_is_sm90())
        return cudaErrorNotSupported;
    const int Kp = CEIL_DIV(a.K, kBK) * kBK;
    const int rows = TRANS ? CEIL_DIV(a.M, kBM) * kBM : CEIL_DIV(a.N, kBN) * kBN;
    const int ktiles = Kp / kBK;
    int splits = 1, per_split = ktiles;
    if (SPLITK)
        splitk_plan(a, splits, per_split);

    const size_t elems = (size_t)rows * Kp;
    float *ws = nullptr, *part = nullptr;
    int *flags = nullptr;
    cudaError_t e = presplit_ws.get(2 * elems * sizeof(float), a.stream, &ws);
    if (e == cudaSuccess && splits > 1)
        e = splitk_buffers(a, &part, &flags);
    if (e != cudaSuccess)
        return e;
    if (TRANS)
        tf32x3_presplit_at<<<dim3(Kp / 32, rows / 32), dim3(32, 8), 0, a.stream>>>(
            a.M, a.K, a.A, a.lda, Kp, ws, ws + elems);
    else
        tf32x3_presplit_b<<<(unsigned)CEIL_DIV(elems / 4, (size_t)256), 256, 0, a.stream>>>(
            a.N, a.K, a.B, a.ldb, rows, Kp, ws, ws + elems);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return e;
    if (splits == 1)
        return launch_wgmma_ps<false, TRANS>(a, ws, ws + elems, Kp, 1, ktiles, nullptr, nullptr);
    return launch_wgmma_ps<true, TRANS>(a, ws, ws + elems, Kp, splits, per_split, part, flags);
}

} // namespace

#endif
