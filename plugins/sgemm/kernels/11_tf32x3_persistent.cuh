/* sgemm step 11, 3xTF32, kernel 4: kernel 3 made persistent, its epilogue through shared
 * memory and bulk copies (sm_90a), and its launch (run_wgmma_pp).  Part of the translation
 * unit 11_tf32x3.cu, after 11_tf32x3_presplit.cuh. */
#ifndef KBENCH_SGEMM_TF32X3_PERSISTENT_CUH
#define KBENCH_SGEMM_TF32X3_PERSISTENT_CUH

#include "11_tf32x3_presplit.cuh"

namespace
{

/* =========================================================================================
 * Kernel 4: persistent kernel 3, the epilogue's memory traffic off the warpgroups' path
 * =========================================================================================
 * Kernel 3 holds a whole SM per CTA (about 250 registers x 256 threads), so on each SM one
 * tile's K loop, its epilogue (64 KB of C0 read, 64 KB of C written) and the next tile's ring
 * fill run one after another.  At 4096x4096x256 (eight K tiles per output tile) that is about
 * 9 + 5.7 + 1.5 us per tile on an H100, and the tensor cores wait through the last two.  Here
 * one CTA per SM loops over output tiles (tile blockIdx.x, then + gridDim.x, ...), and:
 *   - the ring runs on across tiles: the copies two K tiles ahead reach into the next output
 *     tile while this one finishes, so its first K tiles are in shared memory by the time its
 *     loop starts;
 *   - C0's tile comes into a shared buffer by bulk copies (cp.async.bulk, one per 512-byte
 *     column, completing on an mbarrier) issued once the tile's first wgmma group is queued,
 *     so it lands during the K loop;
 *   - the epilogue forms alpha * acc + beta * C0 in that buffer and hands it to bulk copies
 *     back to C, which nobody waits for until the buffer takes the next tile's C0.
 * The ring is 3 stages instead of 4 to make room for the buffer (3 x 49 + 66 KB).  Tiles that
 * are not whole (the edges of M and N), and every tile when C, C0 or ldc do not allow 16-byte
 * aligned columns, take kernel 3's register epilogue instead.  Not split: the shapes of few
 * tiles keep kernel 3's split-K. */
constexpr int kPpStages = 3;
/* The C buffer: 128 columns of the tile (m contiguous, as in C) in rows of 132 floats, 16-byte
 * aligned for the bulk copies.  Register e of lane (g, q) holds column 2q + 8j + v0, row
 * 16wi + g + 8v1 (store_wg_results): a warp's 32 accesses hit banks 4 * 2q + g, all distinct. */
constexpr int kPpCLd = kBM + 4;
constexpr int kPpCFloats = kBN * kPpCLd;
constexpr size_t pp_smem()
{
    return (size_t)(kPpStages * ps_stage_floats<false>() + kPpCFloats) * sizeof(float) + 1024;
}
static_assert(pp_smem() <= 227 * 1024, "kernel 4's shared memory exceeds an SM's");

#ifdef TF32X3_HAVE_WGMMA
#ifndef SGEMM_HOST_EMULATION
/* Bulk copies (the TMA unit's linear form) and the mbarrier transaction count they complete. */
__device__ __forceinline__ void mbar_expect_tx(uint32_t bar, uint32_t bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
                 : "memory");
}
/* bytes from global src to shared dst, counted on bar's transaction count when they land. */
__device__ __forceinline__ void bulk_load(uint32_t dst, const void *src, uint32_t bytes,
                                          uint32_t bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], "
                 "%2, [%3];\n" ::"r"(dst),
                 "l"(src), "r"(bytes), "r"(bar)
                 : "memory");
}
/* bytes from shared src to global dst, in this thread's current bulk group. */
__device__ __forceinline__ void bulk_store(void *dst, uint32_t src, uint32_t bytes)
{
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(dst),
                 "r"(src), "r"(bytes)
                 : "memory");
}
__device__ __forceinline__ void bulk_commit()
{
    asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}
/* This thread's bulk stores have read their shared memory (READ) or are complete. */
template <bool READ> __device__ __forceinline__ void bulk_wait_all()
{
    if (READ)
        asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
    else
        asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
}
/* Makes mbarrier initialisations visible to the async proxy (the bulk copies). */
__device__ __forceinline__ void fence_mbar_init()
{
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
#endif /* SGEMM_HOST_EMULATION */

#endif /* TF32X3_HAVE_WGMMA */

/* One CTA per SM, output tiles blockIdx.x, blockIdx.x + gridDim.x, ... of the grouped order;
 * warpgroups, ring and K loop as in kernel 3 (ps_k_loop), A raw and B pre-split (Sbig, Ssmall).
 * bulk_c: C, C0 and ldc allow the bulk-copy epilogue (16-byte aligned columns). */
template <bool VEC>
__global__ void __launch_bounds__(kThreads, 1)
    tf32x3_wgmma_pp_kernel(int M, int N, int K, float alpha, const float *__restrict__ A, int lda,
                           const float *__restrict__ B, int ldb, const float *__restrict__ Sbig,
                           const float *__restrict__ Ssmall, int Kp, float beta, const float *C0,
                           float *C, int ldc, int tiles_m, int tiles_n, int bulk_c)
{
#ifdef TF32X3_HAVE_WGMMA
    extern __shared__ __align__(16) float tf_smem[];
    /* full[s], then empty[s], then the C buffer's: C0 has landed */
    __shared__ __align__(8) uint64_t bars[2 * kPpStages + 1];
    const uint32_t raw_addr = sgemm_smem_addr(tf_smem);
    float *const base = tf_smem + ((1024 - (raw_addr & 1023)) & 1023) / 4;
    constexpr int kStageFloats = ps_stage_floats<false>();
    float *const cbuf = base + kPpStages * kStageFloats;
    const uint32_t cbuf_addr = sgemm_smem_addr(cbuf);
    const uint32_t bar_addr = sgemm_smem_addr(bars);
    const uint32_t c0_bar = bar_addr + 8 * 2 * kPpStages;

    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int wg = warp / 4, wi = warp % 4;
    const int g = lane / 4, q = lane % 4;
    const int tiles = tiles_m * tiles_n, ktiles = CEIL_DIV(K, kBK);

    if (tid == 0) {
        mbar_init(c0_bar, 1);
        fence_mbar_init();
    }
    ps_init_barriers<kPpStages>(bar_addr, tid);

    /* The copies: output tile p_tile (origin p_m0, p_n0), its K tile p_k, ring tile p_u. */
    int p_tile = blockIdx.x, p_k = 0, p_u = 0, p_m0, p_n0;
    tile_coords_of(p_tile, tiles_m, tiles_n, p_m0, p_n0);
    bool p_interior = p_m0 + kBM <= M && p_n0 + kBN <= N;
    size_t s_off = (size_t)(p_n0 + tid / 8) * Kp + 4 * (tid % 8);
    Tf32Loader<VEC, BOffPadded> loader(A, lda, B, ldb, M, N, p_m0, p_n0, tid);
    auto copy_next = [&]() {
        if (p_tile >= tiles)
            return;
        if (p_u >= kPpStages) /* both warpgroups are done with ring tile p_u - 3 there */
            mbar_wait(bar_addr + 8 * (kPpStages + p_u % kPpStages), (p_u / kPpStages - 1) & 1);
        ps_copy_stage<VEC, false>(base + (p_u % kPpStages) * kStageFloats,
                                  bar_addr + 8 * (p_u % kPpStages), Sbig, Ssmall, s_off, Kp,
                                  (size_t)p_k * kBK, loader, A, lda, B, ldb, M, N, K, p_m0, p_n0,
                                  p_interior, tid);
        p_u++;
        if (++p_k == ktiles) { /* on to this CTA's next output tile */
            p_k = 0;
            p_tile += gridDim.x;
            if (p_tile < tiles) {
                tile_coords_of(p_tile, tiles_m, tiles_n, p_m0, p_n0);
                p_interior = p_m0 + kBM <= M && p_n0 + kBN <= N;
                s_off = (size_t)(p_n0 + tid / 8) * Kp + 4 * (tid % 8);
                loader = Tf32Loader<VEC, BOffPadded>(A, lda, B, ldb, M, N, p_m0, p_n0, tid);
            }
        }
    };

    /* Launched as the pre-split pass's programmatic dependent, as kernel 3 is. */
    pdl_wait();

    copy_next(); /* two ring tiles in flight ahead of the one being computed */
    copy_next();
    const int a_off = 2 * kBStageSw + q * kALd + wg * 64 + wi * 16 + g;
    int u0 = 0;       /* the output tile's first ring tile */
    int c0_loads = 0; /* C0 tiles brought into the buffer so far (the barrier's phase) */
    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        int m0, n0;
        tile_coords_of(tile, tiles_m, tiles_n, m0, n0);
        const bool bulk = bulk_c && m0 + kBM <= M && n0 + kBN <= N;
        /* C0's tile into the buffer, once the last tile's stores have read it (warp 0 issued
         * them): one 512-byte column per copy, 4 per lane. */
        auto load_c0 = [&]() {
            if (!bulk || beta == 0.0f || warp != 0)
                return;
            bulk_wait_all<true>();
            __syncwarp();
            if (lane == 0)
                mbar_expect_tx(c0_bar, kBN * kBM * 4);
            __syncwarp();
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const int n = lane + 32 * i;
                bulk_load(cbuf_addr + n * kPpCLd * 4, C0 + sgemm_at(m0, n0 + n, ldc), kBM * 4,
                          c0_bar);
            }
        };
        float acc[64];
        ps_k_loop<kPpStages, kStageFloats, false>(acc, ktiles, u0, base, bar_addr, a_off, lane,
                                                  copy_next, load_c0);
        u0 += ktiles;
        if (!bulk) {
            const bool interior = m0 + kBM <= M && n0 + kBN <= N;
            store_wg_results<false>(acc, m0 + wg * 64 + wi * 16 + g, n0 + 2 * q, interior, M, N,
                                    alpha, beta, C0, C, ldc);
            continue;
        }
        if (beta != 0.0f) {
            mbar_wait(c0_bar, c0_loads & 1); /* C0 has landed (and the last stores read it) */
            c0_loads++;
        } else {
            if (warp == 0)
                bulk_wait_all<true>(); /* the last tile's stores have read the buffer */
            __syncthreads();
        }
        /* register e = 4j + 2v1 + v0: row 64wg + 16wi + g + 8v1, column 8j + 2q + v0 */
        float *const cb = cbuf + 2 * q * kPpCLd + wg * 64 + wi * 16 + g;
#pragma unroll
        for (int e = 0; e < 64; e++) {
            float *const p = cb + (8 * (e / 4) + e % 2) * kPpCLd + 8 * ((e % 4) / 2);
            float r = alpha * acc[e];
            if (beta != 0.0f)
                r = fmaf(beta, *p, r);
            *p = r;
        }
        fence_proxy_async(); /* the buffer's generic-proxy stores -> the bulk copies' reads */
        __syncthreads();
        if (warp == 0) {
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const int n = lane + 32 * i;
                bulk_store(C + sgemm_at(m0, n0 + n, ldc), cbuf_addr + n * kPpCLd * 4, kBM * 4);
            }
            bulk_commit();
        }
    }
    if (warp == 0)
        bulk_wait_all<false>(); /* C written before the CTA exits */
#else
    /* Built for an architecture without wgmma: the host never launches this. */
    __trap();
#endif
}

/* ---- host side ------------------------------------------------------------------------------ */

/* Kernel 4: B split into kernel 3's workspace, then one CTA per SM (or per tile, if fewer). */
cudaError_t run_wgmma_pp(const SgemmArgs &a)
{
    if (!sgemm_device_is_sm90())
        return cudaErrorNotSupported;
    const int Kp = CEIL_DIV(a.K, kBK) * kBK;
    const int rows = CEIL_DIV(a.N, kBN) * kBN;
    const size_t elems = (size_t)rows * Kp;
    float *ws = nullptr;
    cudaError_t e = presplit_ws.get(2 * elems * sizeof(float), a.stream, &ws);
    if (e != cudaSuccess)
        return e;
    tf32x3_presplit_b<<<(unsigned)CEIL_DIV(elems / 4, (size_t)256), 256, 0, a.stream>>>(
        a.N, a.K, a.B, a.ldb, rows, Kp, ws, ws + elems);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return e;
    const int tiles_m = CEIL_DIV(a.M, kBM), tiles_n = CEIL_DIV(a.N, kBN);
    const int bulk_c = a.ldc % 4 == 0 && ((uintptr_t)a.C | (uintptr_t)a.C0) % 16 == 0;
    const bool vec = raw_vec_ok<false>(a);
    auto kernel = vec ? tf32x3_wgmma_pp_kernel<true> : tf32x3_wgmma_pp_kernel<false>;
    static const cudaError_t once[2] = {set_smem(tf32x3_wgmma_pp_kernel<false>, pp_smem()),
                                        set_smem(tf32x3_wgmma_pp_kernel<true>, pp_smem())};
    if (once[vec] != cudaSuccess)
        return once[vec];
    return launch_after_presplit(kernel, dim3(std::min(tiles_m * tiles_n, sgemm_sm_count())),
                                 pp_smem(), a.stream, a.M, a.N, a.K, a.alpha, a.A, a.lda, a.B,
                                 a.ldb, (const float *)ws, (const float *)(ws + elems), Kp, a.beta,
                                 a.C0, a.C, a.ldc, tiles_m, tiles_n, bulk_c);
}

} // namespace

#endif
