/* sgemm step 11, 3xTF32, kernel 5: kernel 3 with a producer warpgroup (sm_90a), and its launch
 * (run_wgmma_ws).  Part of the translation unit 11_tf32x3.cu. */
#ifndef KBENCH_SGEMM_TF32X3_WS_CUH
#define KBENCH_SGEMM_TF32X3_WS_CUH

#include "11_tf32x3_presplit.cuh"

namespace
{

/* =========================================================================================
 * Kernel 5: kernel 3's K loop fed by a producer warpgroup (sm_90a)
 * =========================================================================================
 * Kernel 3's compute threads issue their own copies, two tiles ahead, at fixed points of the
 * K loop: a copy waits there for the stage it refills, and the data of the next tile is asked
 * for only two tiles before it is needed.  An Nsight Compute profile at 8192^3 (H200) had
 * the tensor pipe busy 77.5% of the time, with long-scoreboard stalls (the mbarrier waits
 * for data not yet there) at 20.8% of warp samples.  Here a third warpgroup only copies:
 *   - B comes pre-split into tile images (tf32x3_presplit_b_tiles): each 128x32 tile's big
 *     and small copies are 32 KB, contiguous, already in the SWIZZLE_128B layout of the
 *     stage, so one thread moves them with one bulk copy (cp.async.bulk, the TMA unit's
 *     linear form) counted on the stage's full barrier by its transaction count.
 *   - The raw A tile comes by 16-byte cp.async from the producer's 128 threads into the
 *     padded As[k][m] of kernel 3, each thread's arrival on the full barrier (noinc) made
 *     when its copies have landed: 128 arrivals and the bulk copy's expect_tx one.
 *   - The producer refills each stage as soon as both computing warpgroups release it (the
 *     empty barrier: every computing thread arrives once its wgmmas that read the stage have
 *     retired, so each thread's own reads of the A tile are ordered before the refill by its
 *     own arrival), so the ring runs up to four tiles ahead.
 *   - setmaxnreg gives the producer 40 registers and the computing warpgroups 232 each
 *     (2 x 128 x 232 + 128 x 40 = 64512 of the SM's 65536).
 * The computing warpgroups are threads 0-255 with kernel 3's roles (rows 64w .. 64w+63), K
 * loop (two K tiles per iteration, partial sums promoted every 64 k) and epilogue; the
 * producer (threads 256-383) leaves after its last copy, and the split-K epilogue's barriers
 * count the 256 that stay (tile_sync<256>).
 * C0 comes through the ring as in kernel 3 (on a whole tile, not TRANS, 16-byte aligned columns,
 * beta != 0, the CTA that writes C): the producer copies it as two more tiles after the K tiles
 * (ps_copy_c0_half<128>), so the epilogue reads it from shared memory. */
constexpr int kWsThreads = kThreads + 128;
constexpr int kWsStages = 4;
constexpr int kWsProducerRegs = 40, kWsConsumerRegs = 232;
static_assert(2 * 128 * kWsConsumerRegs + 128 * kWsProducerRegs <= 65536,
              "the register file holds both roles");
/* A stage: the pre-split operand's big and small (one 32 KB tile image), then the raw tile:
 * kernel 3's layout, ps_stage_floats<TRANS>(). */
constexpr int kWsImageFloats = 2 * kBStageSw;
template <bool TRANS> constexpr size_t ws_smem()
{
    return (size_t)kWsStages * ps_stage_floats<TRANS>() * sizeof(float) + 1024;
}

/* B -> tile images: for n tile nt and K tile kt, the 8192 floats at (nt * tiles_k + kt) * 8192
 * are the big then the small copy of B's rows n = 128nt.., k = 32kt.. in BOffSwizzled's layout
 * (row n at n * 32 floats, 16-byte chunk c at c ^ (n % 8)); zero outside K x N.  One thread
 * per 4 consecutive k of one column (a warp reads 512 contiguous bytes of a column, and each
 * 8 of its threads write one whole 128-byte row of an image). */
__global__ void tf32x3_presplit_b_tiles(int N, int K, const float *__restrict__ B, int ldb, int Np,
                                        int tiles_k, float *__restrict__ img)
{
    pdl_launch_dependents(); /* the GEMM may take SMs as they free up */
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int kq = tiles_k * (kBK / 4);
    if (i >= (size_t)Np * kq)
        return;
    const int n = (int)(i / kq), k = 4 * (int)(i % kq);
    uint4 b, s;
    load_split4(B, ldb, N, K, n, k, b, s);
    const int nl = n % kBN, c = (k % kBK) / 4;
    float *const blk = img + ((size_t)(n / kBN) * tiles_k + k / kBK) * kWsImageFloats;
    const int at = nl * kBK + ((c ^ (nl & 7)) << 2); /* BOffSwizzled::at(nl, c) */
    *reinterpret_cast<uint4 *>(blk + at) = b;
    *reinterpret_cast<uint4 *>(blk + kBStageSw + at) = s;
}

/* A -> A^T's tile images for the C^T form (TRANS): for m tile mt and K tile kt, the 8192 floats
 * at (mt * tiles_k + kt) * 8192 are the big then the small copy of A's rows m = 128mt..,
 * k = 32kt.. in BOffSwizzled's layout (row m at m * 32 floats, 16-byte chunk c at c ^ (m % 8));
 * zero outside M x K.  32x32 tiles through shared memory as tf32x3_presplit_at (blocks of
 * 32x8 threads): read along m, written along k (a warp writes one whole 128-byte row). */
__global__ void tf32x3_presplit_at_tiles(int M, int K, const float *__restrict__ A, int lda,
                                         int tiles_k, float *__restrict__ img)
{
    pdl_launch_dependents(); /* the GEMM may take SMs as they free up */
    __shared__ float t[32][33];
    const int m0 = blockIdx.y * 32, k0 = blockIdx.x * 32;
    const int tx = threadIdx.x, ty = threadIdx.y;
    load_a_block_t(A, lda, M, K, m0, k0, t);
#pragma unroll
    for (int j = 0; j < 32; j += 8) {
        const int m = m0 + ty + j, k = k0 + tx, ml = m % kBM;
        uint32_t b, sm;
        split_tf32(t[tx][ty + j], b, sm);
        const size_t at = ((size_t)(m / kBM) * tiles_k + k / kBK) * kWsImageFloats + ml * kBK +
                          ((((k % kBK) / 4) ^ (ml & 7)) << 2) + k % 4;
        reinterpret_cast<uint32_t *>(img)[at] = b;
        reinterpret_cast<uint32_t *>(img)[at + kBStageSw] = sm;
    }
}

#ifdef TF32X3_HAVE_WGMMA
#ifndef SGEMM_HOST_EMULATION
__device__ __forceinline__ void ws_expect_tx(uint32_t bar, uint32_t bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
                 : "memory");
}
/* bytes from global src to shared dst, counted on bar's transaction count when they land. */
__device__ __forceinline__ void ws_bulk_load(uint32_t dst, const void *src, uint32_t bytes,
                                             uint32_t bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], "
                 "%2, [%3];\n" ::"r"(dst),
                 "l"(src), "r"(bytes), "r"(bar)
                 : "memory");
}
/* Makes the mbarrier initialisations visible to the async proxy (the bulk copies). */
__device__ __forceinline__ void ws_fence_mbar_init()
{
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
template <int REGS> __device__ __forceinline__ void ws_regs_dec()
{
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(REGS));
}
template <int REGS> __device__ __forceinline__ void ws_regs_inc()
{
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(REGS));
}
#endif /* SGEMM_HOST_EMULATION */
#endif /* TF32X3_HAVE_WGMMA */

/* SPLITK: CTA (b, 0, z) computes K tiles z*kt_per_split .. of its tile, as kernel 3's.
 * img: the pre-split operand's tile images, tiles_k K tiles per tile row: B's
 * (tf32x3_presplit_b_tiles), or with TRANS (C^T = B^T A^T, as kernel 3's configuration 5) A^T's
 * (tf32x3_presplit_at_tiles), B then being the raw operand, split in registers.  The register
 * rows r0 and image rows s0 are (m0, n0), or with TRANS (n0, m0); tiles_r and tiles_s count
 * them. */
template <bool VEC, bool SPLITK, bool TRANS>
__global__ void __launch_bounds__(kWsThreads, 1)
    tf32x3_wgmma_ws_kernel(int M, int N, int K, float alpha, const float *__restrict__ A, int lda,
                           const float *__restrict__ B, int ldb, const float *__restrict__ img,
                           int tiles_k, float beta, const float *C0, float *C, int ldc, int tiles_r,
                           int tiles_s, int kt_per_split, float *ws, int ldw, int *flags,
                           int c0_vec)
{
#ifdef TF32X3_HAVE_WGMMA
    extern __shared__ __align__(16) float tf_smem[];
    __shared__ __align__(8) uint64_t bars[2 * kWsStages]; /* full[s], then empty[s] */
    const MbarRing<kWsStages, ps_stage_floats<TRANS>()> ring(tf_smem, bars);

    int r0, s0;
    tile_coords(tiles_r, tiles_s, r0, s0);
    const int m0 = TRANS ? s0 : r0, n0 = TRANS ? r0 : s0;
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const bool interior = m0 + kBM <= M && n0 + kBN <= N;
    int kt_begin, ktiles;
    ktile_range<SPLITK>(K, kt_per_split, kt_begin, ktiles);
    /* C0's tile comes through the ring as two more tiles after the K tiles (kernel 3's rule) */
    const bool stage_c0 =
        !TRANS && c0_vec && beta != 0.0f && interior && (!SPLITK || blockIdx.z == gridDim.z - 1);
    const int ring_tiles = ktiles + (stage_c0 ? 2 : 0);

    if (tid == 0) {
        for (int s = 0; s < kWsStages; s++) {
            mbar_init(ring.full(s), 128 + 1); /* the producer's cp.async arrivals, the expect_tx */
            mbar_init(ring.empty(s), kThreads);
        }
        ws_fence_mbar_init();
    }
    __syncthreads();
    /* Launched as the pre-split pass's programmatic dependent: the images are read only once
     * it has finished. */
    pdl_wait();

    if (warp >= kThreads / 32) {
        /* ---- the producer ---- */
        ws_regs_dec<kWsProducerRegs>();
        const int p = tid - kThreads;
        /* A chunk p + 128i (i < 8): rows 4*(p % 32) .. +3 of tile column p / 32 + 4i; with
         * TRANS, B chunk p + 128i: k = 4*(p % 8) .. +3 of tile column p / 8 + 16i */
        const int am = 4 * (p % 32), ak = p / 32, bk = 4 * (p % 8), bn = p / 8;
        const int r_dst = TRANS ? BOffPadded::at(bn, p % 8) : ak * kALd + am;
        const int r_step = TRANS ? 16 * BOffPadded::LD : 4 * kALd; /* floats per chunk i */
        const int a_rows = min(max(M - (m0 + am), 0), 4);          /* rows of the chunks inside A */
        const float *r_ptr = TRANS ? B + (size_t)min(n0 + bn, N - 1) * ldb + bk + kt_begin * kBK
                                   : A + min(m0 + am, M - 1) + (size_t)(ak + kt_begin * kBK) * lda;
        const size_t r_next = TRANS ? (size_t)kBK : (size_t)kBK * lda; /* per K tile */
        const float *s_img = img + ((size_t)(s0 / kBM) * tiles_k + kt_begin) * kWsImageFloats;
        for (int u = 0; u < ring_tiles; u++) {
            if (u >= kWsStages) /* both computing warpgroups are done with tile u - 4 here */
                mbar_wait(ring.empty(u), (u / kWsStages - 1) & 1);
            if (u >= ktiles) { /* C0's columns 64h .. 64h + 63: 128 copies' arrivals and one */
                if (p == 0)
                    mbar_arrive(ring.full(u));
                ps_copy_c0_half<128>(ring.stage(u),
                                     C0 + sgemm_at(m0 + 4 * (p % 32), n0 + p / 32, ldc), u - ktiles,
                                     ldc, p);
                mbar_arrive_cp_async(ring.full(u));
                continue;
            }
            if (p == 0) {
                ws_expect_tx(ring.full(u), kWsImageFloats * 4);
                ws_bulk_load(ring.stage_addr(u), s_img + (size_t)u * kWsImageFloats,
                             kWsImageFloats * 4, ring.full(u));
            }
            float *const rs = ring.stage(u) + 2 * kBStageSw + r_dst;
            const int k0 = (kt_begin + u) * kBK;
            using Copy = Tf32Loader<VEC, BOffSwizzled>;
            if (interior && k0 + kBK <= K) {
#pragma unroll
                for (int i = 0; i < 8; i++) {
                    const float *src =
                        r_ptr + (TRANS ? (size_t)(16 * i) * ldb : (size_t)(4 * i) * lda);
                    Copy::copy_chunk(rs + i * r_step, src, src, 4);
                }
            } else if (TRANS) {
                const int k = k0 + bk;
                const int k_in = min(max(K - k, 0), 4); /* k of the chunks inside B */
#pragma unroll
                for (int i = 0; i < 8; i++) {
                    const int n = n0 + bn + 16 * i;
                    const bool n_ok = n < N;
                    const float *src = B + (size_t)(n_ok ? n : 0) * ldb + (k < K ? k : 0);
                    Copy::copy_chunk(rs + i * r_step, src, B, n_ok ? k_in : 0);
                }
            } else {
#pragma unroll
                for (int i = 0; i < 8; i++) {
                    const int k = k0 + ak + 4 * i;
                    const bool k_ok = k < K;
                    const float *src =
                        A + (a_rows > 0 ? m0 + am : 0) + (size_t)(k_ok ? k : 0) * lda;
                    Copy::copy_chunk(rs + i * r_step, src, A, k_ok ? a_rows : 0);
                }
            }
            r_ptr += r_next;
            mbar_arrive_cp_async(ring.full(u));
        }
        cp_async_wait<0>();
        return;
    }

    /* ---- the computing warpgroups: kernel 3's K loop without its copies ---- */
    ws_regs_inc<kWsConsumerRegs>();
    const int wg = warp / 4, wi = warp % 4;
    const int g = lane / 4, q = lane % 4;
    /* the thread's first register-operand element: As[q][64wg + 16wi + g], or with TRANS
     * Bs[64wg + 16wi + g][q] */
    const int a_off = 2 * kBStageSw + (TRANS ? (wg * 64 + wi * 16 + g) * BOffPadded::LD + q
                                             : q * kALd + wg * 64 + wi * 16 + g);
    auto load_regs = [&](const float *p, uint32_t(&bg)[4][4], uint32_t(&sm)[4][4]) {
        if (TRANS)
            load_a_tile_rows<BOffPadded::LD>(p, bg, sm);
        else
            load_a_tile(p, bg, sm);
    };
    auto wait_full = [&](int t) { mbar_wait(ring.full(t), (t / kWsStages) & 1); };
    auto release = [&](int t) { mbar_arrive(ring.empty(t)); };

    float acc[64], part[64];
    zero_acc(acc, part);
    uint32_t big[2][4][4], small[2][4][4];
    if (ktiles > 0) {
        wait_full(0);
        load_regs(ring.stage(0) + a_off, big[0], small[0]);
    }
    ring_k_loop(
        ring, ktiles, a_off, acc, part, big, small, load_regs, wait_full, [] {}, release);

    /* the thread's first C0 element of each half in the ring (stage_c0) */
    const float *c0s = nullptr, *c0s_hi = nullptr;
    if (stage_c0) {
        wait_full(ktiles);
        wait_full(ktiles + 1);
        c0s = ring.stage(ktiles) + 2 * q * kPsC0Ld + wg * 64 + wi * 16 + g;
        c0s_hi = ring.stage(ktiles + 1) + 2 * q * kPsC0Ld + wg * 64 + wi * 16 + g;
    }
    store_wg_or_partial<SPLITK, TRANS, kThreads>(acc, r0 + wg * 64 + wi * 16 + g, s0 + 2 * q,
                                                 interior, M, N, alpha, beta, C0, C, ldc, ws, ldw,
                                                 flags, c0s, c0s_hi);
#else
    /* Built for an architecture without wgmma: the host never launches this. */
    __trap();
#endif
}

/* ---- host side ------------------------------------------------------------------------------ */

template <bool VEC, bool SPLITK, bool TRANS>
cudaError_t launch_wgmma_ws(const SgemmArgs &a, const float *img, int tiles_k, int splits,
                            int kt_per_split, float *ws, int *flags)
{
    static const cudaError_t once =
        set_smem(tf32x3_wgmma_ws_kernel<VEC, SPLITK, TRANS>, ws_smem<TRANS>());
    if (once != cudaSuccess)
        return once;
    const int tiles_m = CEIL_DIV(a.M, kBM), tiles_n = CEIL_DIV(a.N, kBN);
    return launch_after_presplit(
        tf32x3_wgmma_ws_kernel<VEC, SPLITK, TRANS>, a, tiles_m * tiles_n, splits, kWsThreads,
        ws_smem<TRANS>(), a.M, a.N, a.K, a.alpha, a.A, a.lda, a.B, a.ldb, img, tiles_k, a.beta,
        a.C0, a.C, a.ldc, TRANS ? tiles_n : tiles_m, TRANS ? tiles_m : tiles_n, kt_per_split, ws,
        splitk_ldw(a), flags, (int)(!TRANS && a.ldc % 4 == 0 && (uintptr_t)a.C0 % 16 == 0));
}

template <bool SPLITK, bool TRANS>
cudaError_t launch_wgmma_ws(const SgemmArgs &a, const float *img, int tiles_k, int splits,
                            int kt_per_split, float *ws, int *flags)
{
    return raw_vec_ok<TRANS>(a) ? launch_wgmma_ws<true, SPLITK, TRANS>(a, img, tiles_k, splits,
                                                                       kt_per_split, ws, flags)
                                : launch_wgmma_ws<false, SPLITK, TRANS>(a, img, tiles_k, splits,
                                                                        kt_per_split, ws, flags);
}

/* Kernel 5: B split into tile images first (with TRANS, A^T), then the kernel; SPLITK as
 * kernel 3's. */
template <bool SPLITK, bool TRANS = false> cudaError_t run_wgmma_ws(const SgemmArgs &a)
{
    if (!sgemm_device_is_sm90())
        return cudaErrorNotSupported;
    const int tiles_k = CEIL_DIV(a.K, kBK);
    const int rows = TRANS ? CEIL_DIV(a.M, kBM) * kBM : CEIL_DIV(a.N, kBN) * kBN;
    int splits = 1, per_split = tiles_k;
    if (SPLITK)
        splitk_plan(a, splits, per_split);
    const size_t elems = (size_t)rows * tiles_k * kBK;
    float *img = nullptr, *part = nullptr;
    int *flags = nullptr;
    cudaError_t e = presplit_ws.get(2 * elems * sizeof(float), a.stream, &img);
    if (e == cudaSuccess && splits > 1)
        e = splitk_buffers(a, &part, &flags);
    if (e != cudaSuccess)
        return e;
    if (TRANS)
        tf32x3_presplit_at_tiles<<<dim3(tiles_k, rows / 32), dim3(32, 8), 0, a.stream>>>(
            a.M, a.K, a.A, a.lda, tiles_k, img);
    else
        tf32x3_presplit_b_tiles<<<(unsigned)CEIL_DIV(elems / 4, (size_t)256), 256, 0, a.stream>>>(
            a.N, a.K, a.B, a.ldb, rows, tiles_k, img);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return e;
    if (splits == 1)
        return launch_wgmma_ws<false, TRANS>(a, img, tiles_k, 1, tiles_k, nullptr, nullptr);
    return launch_wgmma_ws<true, TRANS>(a, img, tiles_k, splits, per_split, part, flags);
}

} // namespace

#endif
