/* warptile's split-K through a thread-block cluster (included by 10_warptile.cu only).
 *
 * For shapes with too few output tiles to fill the SMs (256x4096x4096: 64 tiles of 128x128 for
 * 264 CTA slots), the S CTAs of one tile's K splits form a cluster (1, 1, S), S <= 8.  Each
 * computes its K range, writes its raw partial tile into its own shared memory (the cp.async
 * ring, drained by then), and after a cluster barrier each CTA finishes 1/S of the tile's
 * columns: it reads that slice from all S CTAs' shared memory (distributed shared memory) in
 * rank order, so the sum does not depend on scheduling, and writes alpha*sum + beta*C0 to C.
 * A second cluster barrier keeps every CTA's shared memory alive until the others have read
 * it.  Unlike the workspace split-K (configurations 7 and 8) the partial sums never leave the
 * GPC: no workspace, no second kernel.
 *
 * Needs compute capability 9.0 (clusters); the launcher refuses elsewhere and in the CPU
 * emulation (tests/emu runs a launch's CTAs one after another, so a cluster barrier could
 * never be passed there). */
#ifndef KBENCH_SGEMM_WARPTILE_CLUSTER_CUH
#define KBENCH_SGEMM_WARPTILE_CLUSTER_CUH

#include <algorithm>

#if !defined(SGEMM_HOST_EMULATION)
#include <cooperative_groups.h>
#endif

/* The largest portable cluster: the K splits of one tile. */
constexpr int kWtMaxClusterSplits = 8;

/* How many K splits (one cluster of that many CTAs per tile) minimise the estimated time:
 * waves of CTAs times the K tiles each CTA runs plus a fixed cost of about 64 k per CTA (the
 * ring's prologue, the epilogue and the cluster reduction), over 1, 2, 4 and 8 splits.
 * slots[s]: CTAs resident at once in clusters of s (slots[1]: the plain kernel, SMs x CTAs per
 * SM); a cluster must fit one GPC, so slots[s] can be well below slots[1] (ncu on an H100: 124
 * clusters of four 128x64x16 CTAs, 496 CTAs, where 132 x 4 = 528), and a size with slots[s] = 0
 * (unknown) is not chosen.  Each split keeps at least 128 k; 1 means no split.  E.g. 64 tiles
 * of 256 K tiles with 264 slots for every size: 4 splits, one wave of 256 CTAs of 64 K tiles. */
inline int wt_choose_cluster_splits(int tiles, int ktiles, int bk,
                                    const int (&slots)[kWtMaxClusterSplits + 1])
{
    const int fixed = std::max(64 / bk, 1);
    auto cost = [&](int s) {
        const long long waves = (long long)CEIL_DIV((long long)tiles * s, slots[s]);
        return waves * (CEIL_DIV(ktiles, s) + fixed);
    };
    int best = 1;
    /* Powers of two: every cluster size that divides the portable maximum. */
    for (int s = 2; s <= kWtMaxClusterSplits && (long long)ktiles * bk / s >= 128; s *= 2)
        if (slots[s] > 0 && cost(s) < cost(best))
            best = s;
    return best;
}

#if !defined(SGEMM_HOST_EMULATION)
/* The cluster's epilogue, run by every thread of every CTA of the cluster after its main loop
 * (no cp.async in flight).  acc: the thread's 8 x NJ partial sums at rows m0 + a_off + 32*h + e,
 * columns n0 + b_off + 16*(j/4) + j%4 (wt_epilogue's layout); smem: the CTA's dynamic shared
 * memory, at least BM*BN floats. */
template <class Cfg>
__device__ __forceinline__ void wt_cluster_epilogue(const float (&acc)[8][Cfg::NJ], float *smem,
                                                    int M, int N, float alpha, float beta,
                                                    const float *C0, float *C, int ldc, int m0,
                                                    int n0, int a_off, int b_off)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    namespace cg = cooperative_groups;
    cg::cluster_group cluster = cg::this_cluster();
    /* Every warp has finished reading the ring before it becomes the partial tile. */
    __syncthreads();
    /* The partial tile, column-major [BN][BM]: a warp's float4 stores cover 128 contiguous
     * bytes of each of 4 columns. */
#pragma unroll
    for (int h = 0; h < 2; h++)
#pragma unroll
        for (int j = 0; j < Cfg::NJ; j++)
            *reinterpret_cast<float4 *>(smem + (b_off + 16 * (j / 4) + j % 4) * Cfg::BM + a_off +
                                        32 * h) =
                make_float4(acc[4 * h][j], acc[4 * h + 1][j], acc[4 * h + 2][j], acc[4 * h + 3][j]);
    cluster.sync(); /* every partial tile written and visible to the cluster */

    const int S = (int)cluster.num_blocks(), r = (int)cluster.block_rank();
    const int n_first = r * Cfg::BN / S, n_end = (r + 1) * Cfg::BN / S;
    const bool vec = sgemm_vec4_ok(C, ldc) && (beta == 0.0f || sgemm_vec4_ok(C0, ldc));
    constexpr int kQuads = Cfg::BM / 4; /* float4 per tile column */
    for (int q = threadIdx.x; q < (n_end - n_first) * kQuads; q += Cfg::THREADS) {
        const int n = n_first + q / kQuads, m = 4 * (q % kQuads);
        const int off = n * Cfg::BM + m, gm = m0 + m, gn = n0 + n;
        if (gn >= N || gm >= M)
            continue;
        float4 sum = *reinterpret_cast<const float4 *>(cluster.map_shared_rank(smem, 0) + off);
        for (int s = 1; s < S; s++) {
            const float4 p =
                *reinterpret_cast<const float4 *>(cluster.map_shared_rank(smem, s) + off);
            sum.x += p.x;
            sum.y += p.y;
            sum.z += p.z;
            sum.w += p.w;
        }
        sgemm_store_rows(sum, alpha, beta, C0, C, sgemm_at(gm, gn, ldc), M - gm, vec);
    }
    cluster.sync(); /* no CTA leaves while another still reads its shared memory */
#else
    __trap(); /* the launcher runs this only on compute capability 9.0 */
#endif
}
#endif /* !SGEMM_HOST_EMULATION */

#endif /* KBENCH_SGEMM_WARPTILE_CLUSTER_CUH */
