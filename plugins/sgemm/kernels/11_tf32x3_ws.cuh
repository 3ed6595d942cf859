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
 *     empty barrier, 8 warp arrivals), so the ring runs up to four tiles ahead.
 *   - setmaxnreg gives the producer 40 registers and the computing warpgroups 232 each
 *     (2 x 128 x 232 + 128 x 40 = 64512 of the SM's 65536).
 * The computing warpgroups are threads 0-255 with kernel 3's roles (rows 64w .. 64w+63), K
 * loop (two K tiles per iteration, partial sums promoted every 64 k) and epilogue; the
 * producer (threads 256-383) leaves after its last copy, and the split-K epilogue's barriers
 * count the 256 that stay (tile_sync<256>). */
constexpr int kWsThreads = kThreads + 128;
constexpr int kWsStages = 4;
constexpr int kWsProducerRegs = 40, kWsConsumerRegs = 232;
static_assert(2 * 128 * kWsConsumerRegs + 128 * kWsProducerRegs <= 65536,
              "the register file holds both roles");
/* A stage: B big and small (one 32 KB tile image), then the padded raw A tile. */
constexpr int kWsStageFloats = 2 * kBStageSw + kAStage;
constexpr int kWsImageFloats = 2 * kBStageSw;
constexpr size_t ws_smem()
{
    return (size_t)kWsStages * kWsStageFloats * sizeof(float) + 1024;
}
static_assert(kWsStageFloats * 4 % 1024 == 0, "stages must keep the 1024-byte alignment");

/* B -> tile images: for n tile nt and K tile kt, the 8192 floats at (nt * tiles_k + kt) * 8192
 * are the big then the small copy of B's rows n = 128nt.., k = 32kt.. in BOffSwizzled's layout
 * (row n at n * 32 floats, 16-byte chunk c at c ^ (n % 8)); zero outside K x N.  One thread
 * per 4 consecutive k of one column (a warp reads 512 contiguous bytes of a column, and each
 * 8 of its threads write one whole 128-byte row of an image). */
__global__ void tf32x3_presplit_b_tiles(int N, int K, const float *__restrict__ B, int ldb,
                                        int Np, int tiles_k, float *__restrict__ img)
{
    pdl_launch_dependents(); /* the GEMM may take SMs as they free up */
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int kq = tiles_k * (kBK / 4);
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
    const int nl = n % kBN, c = (k % kBK) / 4;
    float *const blk = img + ((size_t)(n / kBN) * tiles_k + k / kBK) * kWsImageFloats;
    const int at = nl * kBK + ((c ^ (nl & 7)) << 2); /* BOffSwizzled::at(nl, c) */
    *reinterpret_cast<uint4 *>(blk + at) = b;
    *reinterpret_cast<uint4 *>(blk + kBStageSw + at) = s;
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
 * img: B's tile images (tf32x3_presplit_b_tiles), tiles_k K tiles per n tile. */
template <bool VEC, bool SPLITK>
__global__ void __launch_bounds__(kWsThreads, 1)
    tf32x3_wgmma_ws_kernel(int M, int N, int K, float alpha, const float *__restrict__ A, int lda,
                           const float *__restrict__ img, int tiles_k, float beta, const float *C0,
                           float *C, int ldc, int tiles_m, int tiles_n, int kt_per_split, float *ws,
                           int ldw, int *flags)
{
#ifdef TF32X3_HAVE_WGMMA
    extern __shared__ __align__(16) float tf_smem[];
    __shared__ __align__(8) uint64_t bars[2 * kWsStages]; /* full[s], then empty[s] */
    const uint32_t raw_addr = sgemm_smem_addr(tf_smem);
    float *const base = tf_smem + ((1024 - (raw_addr & 1023)) & 1023) / 4;
    const uint32_t base_addr = sgemm_smem_addr(base);
    const uint32_t bar_addr = sgemm_smem_addr(bars);
    auto full = [&](int t) { return bar_addr + 8 * (t % kWsStages); };
    auto empty = [&](int t) { return bar_addr + 8 * (kWsStages + t % kWsStages); };
    auto stage = [&](int t) { return base + (t % kWsStages) * kWsStageFloats; };
    auto stage_addr = [&](int t) {
        return base_addr + (uint32_t)((t % kWsStages) * kWsStageFloats * 4);
    };

    int m0, n0;
    tile_coords(tiles_m, tiles_n, m0, n0);
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const bool interior = m0 + kBM <= M && n0 + kBN <= N;
    const int kt_begin = SPLITK ? (int)blockIdx.z * kt_per_split : 0;
    const int ktiles =
        SPLITK ? max(min(kt_per_split, CEIL_DIV(K, kBK) - kt_begin), 0) : CEIL_DIV(K, kBK);

    if (tid == 0) {
        for (int s = 0; s < kWsStages; s++) {
            mbar_init(full(s), 128 + 1); /* the producer's cp.async arrivals, the expect_tx */
            mbar_init(empty(s), kThreads / 32);
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
        /* A chunk p + 128i (i < 8): rows 4*(p % 32) .. +3 of tile column p / 32 + 4i */
        const int am = 4 * (p % 32), ak = p / 32;
        const int a_dst = ak * kALd + am;
        const int a_rows = min(max(M - (m0 + am), 0), 4); /* rows of the chunks inside A */
        const float *a_ptr = A + min(m0 + am, M - 1) + (size_t)(ak + kt_begin * kBK) * lda;
        const float *b_img = img + ((size_t)(n0 / kBN) * tiles_k + kt_begin) * kWsImageFloats;
        for (int u = 0; u < ktiles; u++) {
            if (u >= kWsStages) /* both computing warpgroups are done with tile u - 4 here */
                mbar_wait(empty(u), (u / kWsStages - 1) & 1);
            if (p == 0) {
                ws_expect_tx(full(u), kWsImageFloats * 4);
                ws_bulk_load(stage_addr(u), b_img + (size_t)u * kWsImageFloats,
                             kWsImageFloats * 4, full(u));
            }
            float *const as = stage(u) + 2 * kBStageSw;
            const int k0 = (kt_begin + u) * kBK;
            if (interior && k0 + kBK <= K) {
#pragma unroll
                for (int i = 0; i < 8; i++) {
                    const float *src = a_ptr + (size_t)(4 * i) * lda;
                    Tf32Loader<VEC, BOffSwizzled>::copy_chunk(as + a_dst + 4 * i * kALd, src, src,
                                                              4);
                }
            } else {
#pragma unroll
                for (int i = 0; i < 8; i++) {
                    const int k = k0 + ak + 4 * i;
                    const bool k_ok = k < K;
                    const float *src = A + (a_rows > 0 ? m0 + am : 0) + (size_t)(k_ok ? k : 0) * lda;
                    Tf32Loader<VEC, BOffSwizzled>::copy_chunk(as + a_dst + 4 * i * kALd, src, A,
                                                              k_ok ? a_rows : 0);
                }
            }
            a_ptr += (size_t)kBK * lda;
            mbar_arrive_cp_async(full(u));
        }
        cp_async_wait<0>();
        return;
    }

    /* ---- the computing warpgroups: kernel 3's K loop without its copies ---- */
    ws_regs_inc<kWsConsumerRegs>();
    const int wg = warp / 4, wi = warp % 4;
    const int g = lane / 4, q = lane % 4;
    /* the thread's first A element: As[q][64wg + 16wi + g] */
    const int a_off = 2 * kBStageSw + q * kALd + wg * 64 + wi * 16 + g;
    auto wait_full = [&](int t) { mbar_wait(full(t), (t / kWsStages) & 1); };

    float acc[64], part[64];
#pragma unroll
    for (int i = 0; i < 64; i++) {
        acc[i] = 0.0f;
        part[i] = 0.0f;
    }
    uint32_t big[2][4][4], small[2][4][4];
    if (ktiles > 0) {
        wait_full(0);
        load_a_tile(stage(0) + a_off, big[0], small[0]);
    }
    for (int t0 = 0; t0 < ktiles; t0 += 2) {
        const int t1 = t0 + 1, t2 = t0 + 2;
        issue_tile<true>(part, big[0], small[0], stage_addr(t0), stage_addr(t0) + kBStageSw * 4);
        if (t1 < ktiles) {
            wait_full(t1);
            load_a_tile(stage(t1) + a_off, big[1], small[1]);
            issue_tile<false>(part, big[1], small[1], stage_addr(t1),
                              stage_addr(t1) + kBStageSw * 4);
            wg_wait<1>(); /* G0 retired */
        } else {
            wg_wait<0>();
        }
        ps_release(empty(t0), lane);
        if (t2 < ktiles) {
            wait_full(t2);
            load_a_tile(stage(t2) + a_off, big[0], small[0]);
        }
        wg_wait<0>(); /* G1 retired: promote the 64-k partial sums with round-to-nearest adds */
        if (t1 < ktiles)
            ps_release(empty(t1), lane);
        fence_regs(part);
#pragma unroll
        for (int i = 0; i < 64; i++)
            acc[i] += part[i];
    }

    store_wg_or_partial<SPLITK, false, kThreads>(acc, m0 + wg * 64 + wi * 16 + g, n0 + 2 * q,
                                                 interior, M, N, alpha, beta, C0, C, ldc, ws, ldw,
                                                 flags);
#else
    /* Built for an architecture without wgmma: the host never launches this. */
    __trap();
#endif
}

/* ---- host side ------------------------------------------------------------------------------ */

template <bool VEC, bool SPLITK>
cudaError_t launch_wgmma_ws(const SgemmArgs &a, const float *img, int tiles_k, int splits,
                            int kt_per_split, float *ws, int *flags)
{
    static const cudaError_t once = set_smem(tf32x3_wgmma_ws_kernel<VEC, SPLITK>, ws_smem());
    if (once != cudaSuccess)
        return once;
    const int tiles_m = CEIL_DIV(a.M, kBM), tiles_n = CEIL_DIV(a.N, kBN);
    /* a programmatic dependent of the pre-split pass, as kernel 3 */
    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t lc = {};
    lc.gridDim = dim3(tiles_m * tiles_n, 1, splits);
    lc.blockDim = dim3(kWsThreads);
    lc.dynamicSmemBytes = ws_smem();
    lc.stream = a.stream;
    lc.attrs = &attr;
    lc.numAttrs = 1;
    return cudaLaunchKernelEx(&lc, tf32x3_wgmma_ws_kernel<VEC, SPLITK>, a.M, a.N, a.K, a.alpha,
                              a.A, a.lda, img, tiles_k, a.beta, a.C0, a.C, a.ldc, tiles_m, tiles_n,
                              kt_per_split, ws, splitk_ldw(a), flags);
}

/* Kernel 5: B split into tile images first, then the kernel; SPLITK as kernel 3's. */
template <bool SPLITK> cudaError_t run_wgmma_ws(const SgemmArgs &a)
{
    if (!sgemm_device_is_sm90())
        return cudaErrorNotSupported;
    const int tiles_k = CEIL_DIV(a.K, kBK), Np = CEIL_DIV(a.N, kBN) * kBN;
    int splits = 1, per_split = tiles_k;
    if (SPLITK)
        splitk_plan(a, splits, per_split);
    const size_t elems = (size_t)Np * tiles_k * kBK;
    float *img = nullptr, *part = nullptr;
    int *flags = nullptr;
    cudaError_t e = presplit_ws.get(2 * elems * sizeof(float), a.stream, &img);
    if (e == cudaSuccess && splits > 1)
        e = splitk_buffers(a, &part, &flags);
    if (e != cudaSuccess)
        return e;
    tf32x3_presplit_b_tiles<<<(unsigned)CEIL_DIV(elems / 4, (size_t)256), 256, 0, a.stream>>>(
        a.N, a.K, a.B, a.ldb, Np, tiles_k, img);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return e;
    const bool vec = raw_vec_ok<false>(a);
    if (splits == 1)
        return vec ? launch_wgmma_ws<true, false>(a, img, tiles_k, 1, tiles_k, nullptr, nullptr)
                   : launch_wgmma_ws<false, false>(a, img, tiles_k, 1, tiles_k, nullptr, nullptr);
    return vec ? launch_wgmma_ws<true, true>(a, img, tiles_k, splits, per_split, part, flags)
               : launch_wgmma_ws<false, true>(a, img, tiles_k, splits, per_split, part, flags);
}

} // namespace

#endif
