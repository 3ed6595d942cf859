/* sgemm step 11, 3xTF32, kernel 2: wgmma with B split on chip by a split pass per K tile
 * (sm_90a), and its launch (run_wgmma).  Part of the translation unit 11_tf32x3.cu. */
#ifndef KBENCH_SGEMM_TF32X3_WGMMA_CUH
#define KBENCH_SGEMM_TF32X3_WGMMA_CUH

#include "11_tf32x3_common.cuh"

namespace
{

/* =========================================================================================
 * Kernel 2: wgmma (sm_90a)
 * ========================================================================================= */

constexpr int kWgStages = 4;
/* SMEM: two compute buffers {B big, B small} (1024-byte aligned, first), then the raw ring. */
constexpr int kCbufFloats = 2 * kBStageSw;
constexpr size_t kWgSmem =
    (size_t)(2 * kCbufFloats + kWgStages * (kAStage + kBStageSw)) * sizeof(float) + 1024;

#ifdef TF32X3_HAVE_WGMMA
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
 * except for the short promotion at the end of each iteration.
 * SPLITK: CTA (b, 0, z) computes K tiles z*kt_per_split .. of its tile, and the tile's splits
 * finish it in order through the workspace ws and flags (store_wg_or_partial).  Unlike kernel 3's,
 * this split reads B as it is: a shape of few tiles and long K (256x4096x4096) does not pay for
 * pre-splitting all of B. */
template <bool VEC, bool SPLITK>
__global__ void __launch_bounds__(kThreads, 1)
    tf32x3_wgmma_kernel(int M, int N, int K, float alpha, const float *__restrict__ A, int lda,
                        const float *__restrict__ B, int ldb, float beta, const float *C0, float *C,
                        int ldc, int tiles_m, int tiles_n, int kt_per_split, float *ws, int ldw,
                        int *flags)
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
    const int kt_begin = SPLITK ? (int)blockIdx.z * kt_per_split : 0;
    const int ktiles =
        SPLITK ? max(min(kt_per_split, CEIL_DIV(K, kBK) - kt_begin), 0) : CEIL_DIV(K, kBK);
    const int a_off = q * kALd + wg * 64 + wi * 16 + g; /* As[q][64wg + 16wi + g] */

    Tf32Loader<VEC, BOffSwizzled> loader(A, lda, B, ldb, M, N, m0, n0, tid);
    if (SPLITK)
        loader.skip(kt_begin, lda);
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
    zero_acc(acc, part);
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

    store_wg_or_partial<SPLITK>(acc, m0 + wg * 64 + wi * 16 + g, n0 + 2 * q, interior, M, N, alpha,
                                beta, C0, C, ldc, ws, ldw, flags);
#else
    /* Built for an architecture without wgmma: the host never launches this. */
    __trap();
#endif
}

/* ---- host side ------------------------------------------------------------------------------ */

template <bool VEC, bool SPLITK>
cudaError_t launch_wgmma(const SgemmArgs &a, int splits, int kt_per_split, float *ws, int *flags)
{
    static const cudaError_t once = set_smem(tf32x3_wgmma_kernel<VEC, SPLITK>, kWgSmem);
    if (once != cudaSuccess)
        return once;
    const int tiles_m = CEIL_DIV(a.M, kBM), tiles_n = CEIL_DIV(a.N, kBN);
    const int ldw = splitk_ldw(a);
    tf32x3_wgmma_kernel<VEC, SPLITK>
        <<<dim3(tiles_m * tiles_n, 1, splits), kThreads, kWgSmem, a.stream>>>(
            a.M, a.N, a.K, a.alpha, a.A, a.lda, a.B, a.ldb, a.beta, a.C0, a.C, a.ldc, tiles_m,
            tiles_n, kt_per_split, ws, ldw, flags);
    return cudaGetLastError();
}

/* Kernel 2; SPLITK: K split as splitk_plan says, the splits finishing each tile in order
 * (store_wg_or_partial; with one split, kernel 2 as is). */
template <bool SPLITK> cudaError_t run_wgmma(const SgemmArgs &a)
{
    if (!sgemm_device_is_sm90())
        return cudaErrorNotSupported;
    const bool vec = vec_ok(a);
    int splits = 1, per_split = CEIL_DIV(a.K, kBK);
    if (SPLITK)
        splitk_plan(a, splits, per_split);
    if (splits == 1)
        return vec ? launch_wgmma<true, false>(a, 1, per_split, nullptr, nullptr)
                   : launch_wgmma<false, false>(a, 1, per_split, nullptr, nullptr);
    float *part = nullptr;
    int *flags = nullptr;
    cudaError_t e = splitk_buffers(a, &part, &flags);
    if (e == cudaSuccess)
        e = vec ? launch_wgmma<true, true>(a, splits, per_split, part, flags)
                : launch_wgmma<false, true>(a, splits, per_split, part, flags);
    return e;
}

} // namespace

#endif
