// tiled: the seed's kernel (TensorKit.jl PR #616) in CUDA C.  One CTA per tile; a tile is a
// power-of-two region of a block (2^lg[k] along destination axis k) times up to 32 consecutive
// destination trees.  The CTA gathers the region of `chunk` source trees at a time into shared
// memory in source order (coalesced reads), then every thread recouples its (element, tree)
// slots over those trees with U[i][j], and finally writes its slots in destination order
// (coalesced writes).  All the trees of a tile share the source reads.  Tile index arithmetic
// is shifts and masks in 32-bit integers (one division per axis per tile, for its origin);
// inside a tile each slot's offsets are its thread's part plus a part shared by all threads
// (permute.h, pm_part_of), so interior tiles pay a few adds per element; shared memory has
// one pad element per source row of the tile against bank conflicts.
// Abelian blocks, recoupling blocks and GEMM extracts (PM_FLAG_TO_WS) share one launch,
// scheduled most source trees first (the host orders the descriptors).  The tile length (32 to
// 256 threads) and beta != 0 are template parameters, chosen per launch.
#include "common.cuh"

namespace
{

// Where slot s (= threadIdx.x + NT*m) of the tile writes: its tree (-1 when the slot is
// unused or outside the block), its shared-memory position and its destination offset.
template <int NT>
__device__ __forceinline__ int32_t slot_at(const pm_tile_block &b, const int32_t *org, int32_t i0,
                                           int32_t dorg, bool inside, const pm_part &mine,
                                           const pm_part &part, int32_t s, int32_t *dpos,
                                           int32_t *doff)
{
    const int32_t slots = (1 << b.log_p) << b.log_r;
    int32_t tree;
    bool ok;
    if (inside) {
        tree = i0 + mine.tree + part.tree;
        ok = s < slots && tree < b.rows;
        *doff = dorg + mine.doff + part.doff;
        *dpos = mine.dpos + part.dpos;
    } else {
        int32_t es = 0;
        tree = i0 + (s >> b.log_p);
        ok =
            s < slots && pm_tile_dst(&b, org, s & ((1 << b.log_p) - 1), doff, &es) && tree < b.rows;
        *dpos = pm_pad(es, b.pad_shift);
    }
    return ok ? tree : -1;
}

// About 100-120 registers (sm_90a, no spills): two 256-thread tiles an SM.  Capping at 64 or
// 80 spills (tried); the per-tile state already lives in shared memory.
template <typename T, int NT, bool BETA>
__global__ void __launch_bounds__(NT)
    tiled(const pm_tile_block *__restrict__ blk, const int32_t *__restrict__ begin,
          const int32_t *__restrict__ owner, const T *__restrict__ src, const T *__restrict__ cin,
          const T *__restrict__ u, T *__restrict__ out, T *__restrict__ ws, T alpha, T beta)
{
    constexpr int kLogNT = NT == 32 ? 5 : NT == 64 ? 6 : NT == 128 ? 7 : 8;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *sm = reinterpret_cast<T *>(smem_raw);
    // The tile's descriptor, origin and slot parts live in shared memory, not in registers.
    __shared__ pm_tile_block b;
    __shared__ pm_part slot_part[PM_MAX_ACC]; // the part of slot m shared by all threads
    __shared__ int32_t org[PM_MAX_RANK], tile_i0, tile_dorg, tile_sorg, tile_inside;
    {
        const int bi = owner[blockIdx.x];
        pm_load_desc<pm_tile_block, NT>(&b, blk + bi);
        if (threadIdx.x < PM_MAX_ACC)
            pm_part_of(blk + bi, (int32_t)threadIdx.x << kLogNT, &slot_part[threadIdx.x]);
        if (threadIdx.x == NT - 1) {
            int32_t o[PM_MAX_RANK], i0, d, sg;
            pm_tile_origin(blk + bi, (int32_t)blockIdx.x - begin[bi], &i0, o);
            tile_inside = pm_tile_base(blk + bi, o, &d, &sg);
            for (int k = 0; k < PM_MAX_RANK; k++)
                org[k] = o[k];
            tile_i0 = i0;
            tile_dorg = d;
            tile_sorg = sg;
        }
    }
    __syncthreads();

    pm_part mine;
    pm_part_of(&b, (int32_t)threadIdx.x, &mine);
    const int32_t i0 = tile_i0, dorg = tile_dorg, log_p = b.log_p;
    const bool inside = tile_inside != 0;
    const int32_t pp = (1 << log_p) + ((1 << log_p) >> b.pad_shift);
    const bool to_ws = (b.flags & PM_FLAG_TO_WS) != 0;
    const bool no_u = (b.flags & (PM_FLAG_UNIQUE | PM_FLAG_TO_WS)) != 0;

    int32_t dpos[PM_MAX_ACC], tree[PM_MAX_ACC];
    T acc[PM_MAX_ACC];
#pragma unroll
    for (int m = 0; m < PM_MAX_ACC; m++) {
        int32_t doff;
        tree[m] = slot_at<NT>(b, org, i0, dorg, inside, mine, slot_part[m],
                              (int32_t)threadIdx.x + NT * m, &dpos[m], &doff);
        acc[m] = T(0);
    }

    // An extract copies tree i0 of the source into tree i0 of the workspace (identity U).
    const int32_t ncols = to_ws ? 1 : b.cols;
    const T *sbase = src + b.src_off + (to_ws ? (int64_t)i0 * b.n : 0);
    for (int32_t jc = 0; jc < ncols; jc += b.chunk) {
        const int32_t nc = min(b.chunk, ncols - jc), ng = nc << log_p;
        const T *sj = sbase + (int64_t)jc * b.n;
        // All of the thread's loads first, then the shared-memory stores, so the loads are
        // in flight together (a store between them would wait for each in turn).
        T v[PM_MAX_ACC];
#pragma unroll
        for (int g = 0; g < PM_MAX_ACC; g++) {
            const int32_t s = (int32_t)threadIdx.x + NT * g;
            v[g] = T(0);
            if (s < ng) {
                if (inside) {
                    const int32_t jj = mine.tree + slot_part[g].tree;
                    v[g] = sj[(int64_t)jj * b.n + tile_sorg + mine.soff + slot_part[g].soff];
                } else {
                    int32_t off;
                    if (pm_tile_src(&b, org, s & ((1 << log_p) - 1), &off))
                        v[g] = sj[(int64_t)(s >> log_p) * b.n + off];
                }
            }
        }
#pragma unroll
        for (int g = 0; g < PM_MAX_ACC; g++) {
            const int32_t s = (int32_t)threadIdx.x + NT * g;
            if (s < ng)
                sm[(s >> log_p) * pp + pm_pad(s & ((1 << log_p) - 1), b.pad_shift)] = v[g];
        }
        __syncthreads();
        if (no_u) {
#pragma unroll
            for (int m = 0; m < PM_MAX_ACC; m++)
                if (tree[m] >= 0)
                    acc[m] = sm[dpos[m]];
        } else {
            const T *uj = u + b.u_off + jc;
            for (int32_t jj = 0; jj < nc; jj++) {
                const T *smj = sm + jj * pp;
#pragma unroll
                for (int m = 0; m < PM_MAX_ACC; m++)
                    if (tree[m] >= 0)
                        acc[m] += __ldg(uj + tree[m] * b.cols + jj) * smj[dpos[m]];
            }
        }
        __syncthreads();
    }

    // The same for the stores: offsets and (beta != 0) the loads of cin first.
    int32_t doff[PM_MAX_ACC];
    T c[PM_MAX_ACC];
#pragma unroll
    for (int m = 0; m < PM_MAX_ACC; m++) {
        int32_t p;
        slot_at<NT>(b, org, i0, dorg, inside, mine, slot_part[m], (int32_t)threadIdx.x + NT * m, &p,
                    &doff[m]);
        c[m] = T(0);
        if (BETA && !to_ws && tree[m] >= 0)
            c[m] = cin[b.dst_off + (int64_t)tree[m] * b.n + doff[m]];
    }
#pragma unroll
    for (int m = 0; m < PM_MAX_ACC; m++) {
        if (tree[m] < 0)
            continue;
        const int64_t d = b.dst_off + (int64_t)tree[m] * b.n + doff[m];
        if (to_ws)
            ws[d] = acc[m];
        else
            out[d] = BETA ? alpha * acc[m] + beta * c[m] : alpha * acc[m];
    }
}

template <typename T, int NT>
cudaError_t launch(const pm_tile_plan *h, const pm_tile_block *blk, const int32_t *begin,
                   const int32_t *owner, const void *src, const void *cin, const void *u, void *out,
                   void *ws, double alpha, double beta, cudaStream_t s)
{
    const size_t smem = h->smem_elems * sizeof(T);
    if (beta != 0.0)
        tiled<T, NT, true><<<(unsigned)h->tiles, NT, smem, s>>>(
            blk, begin, owner, (const T *)src, (const T *)cin, (const T *)u, (T *)out, (T *)ws,
            (T)alpha, (T)beta);
    else
        tiled<T, NT, false><<<(unsigned)h->tiles, NT, smem, s>>>(
            blk, begin, owner, (const T *)src, (const T *)cin, (const T *)u, (T *)out, (T *)ws,
            (T)alpha, (T)beta);
    return cudaGetLastError();
}

template <typename T>
cudaError_t launch_len(const pm_tile_plan *h, const pm_tile_block *blk, const int32_t *begin,
                       const int32_t *owner, const void *src, const void *cin, const void *u,
                       void *out, void *ws, double alpha, double beta, cudaStream_t s)
{
    switch (h->len_log) {
    case 0:
        return launch<T, 32>(h, blk, begin, owner, src, cin, u, out, ws, alpha, beta, s);
    case 1:
        return launch<T, 64>(h, blk, begin, owner, src, cin, u, out, ws, alpha, beta, s);
    case 2:
        return launch<T, 128>(h, blk, begin, owner, src, cin, u, out, ws, alpha, beta, s);
    default:
        return launch<T, 256>(h, blk, begin, owner, src, cin, u, out, ws, alpha, beta, s);
    }
}

} // namespace

extern "C" size_t pm_tiled_smem_bytes(int esize, const pm_tile_plan *plan)
{
    return plan->smem_elems * (size_t)esize;
}

extern "C" int pm_run_tiled(int esize, const pm_tile_plan *hplan, const pm_tile_block *dblk,
                            const int32_t *dbegin, const int32_t *downer, const void *src,
                            const void *cin, const void *u, void *out, void *ws, double alpha,
                            double beta, void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    if (hplan->tiles == 0)
        return (int)cudaSuccess;
    if (esize == 4)
        return (int)launch_len<float>(hplan, dblk, dbegin, downer, src, cin, u, out, ws, alpha,
                                      beta, s);
    return (int)launch_len<double>(hplan, dblk, dbegin, downer, src, cin, u, out, ws, alpha, beta,
                                   s);
}
