// tiled: the seed's kernel (TensorKit.jl PR #616) in CUDA C, with a lean path for abelian
// blocks.  One CTA per tile, one launch for the whole tensor.
//
// General tiles (recoupling blocks): a tile is a power-of-two region of a block (2^lg[k] along
// destination axis k) times up to 32 consecutive destination trees.  The CTA gathers the
// region of `chunk` source trees at a time into shared memory in source order (coalesced
// reads), then every thread recouples its (element, tree) slots over those trees with U[i][j],
// and finally writes its slots in destination order (coalesced writes).  All the trees of a
// tile share the source reads.  Tile index arithmetic is shifts and masks in 32-bit integers;
// inside a tile each slot's offsets are its thread's part plus a part shared by all threads
// (permute.h, pm_part_of); shared memory has one pad element per source row of the tile.
//
// Lean tiles (abelian blocks, GEMM extracts): the host merges the block's axes and reduces the
// tile to a TX x TY patch of a transpose (x along the destination's stride-1 axis, y along the
// source's) or of a strided copy, with both origins precomputed (pm_lean_tile): a CTA loads
// its 32-byte record and moves its elements with 32-bit multiply-adds, through a padded
// shared-memory patch for a transpose, directly for a copy.  This is the classic transpose,
// and it is what the dense permutes need: few instructions per element and a small register
// footprint (the general tile's descriptor, parts and 8 slots cost 80-120 registers).
//
// CTAs [0, tiles) run general tiles (scheduled most source trees first: the host orders the
// descriptors), the rest lean tiles; a launch with no general tile uses a kernel without the
// general code.  The tile length (32 to 256 threads) and beta != 0 are template parameters.
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
__device__ __noinline__ void
general_tile(const int32_t tile, const pm_tile_block *__restrict__ blk,
             const int32_t *__restrict__ begin, const int32_t *__restrict__ owner,
             const T *__restrict__ src, const T *__restrict__ cin, const T *__restrict__ u,
             T *__restrict__ out, T *__restrict__ ws, T alpha, T beta, T *sm)
{
    constexpr int kLogNT = NT == 32 ? 5 : NT == 64 ? 6 : NT == 128 ? 7 : 8;
    // The tile's descriptor, origin and slot parts live in shared memory, not in registers.
    __shared__ pm_tile_block b;
    __shared__ pm_part slot_part[PM_MAX_ACC]; // the part of slot m shared by all threads
    __shared__ int32_t org[PM_MAX_RANK], tile_i0, tile_dorg, tile_sorg, tile_inside;
    {
        const int bi = owner[tile];
        pm_load_desc<pm_tile_block, NT>(&b, blk + bi);
        if (threadIdx.x < PM_MAX_ACC)
            pm_part_of(blk + bi, (int32_t)threadIdx.x << kLogNT, &slot_part[threadIdx.x]);
        if (threadIdx.x == NT - 1) {
            int32_t o[PM_MAX_RANK], i0, d, sg;
            pm_tile_origin(blk + bi, tile - begin[bi], &i0, o);
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

// A lean tile (permute.h, pm_lean_tile): every thread loads its EPT elements first, then
// (transpose) stores them into the padded patch, and after the barrier reads and writes them
// in destination order.  Patch slot l of thread t is l = t + NT*i; the read phase takes y from
// its low bits (consecutive threads along the source's stride-1 axis), the write phase x.  The
// patch is [x][TY + 1]: both phases hit distinct banks.
template <typename T, int NT, bool BETA>
__device__ __forceinline__ void lean_tile(const pm_lean_tile *__restrict__ rec,
                                          const T *__restrict__ src, const T *__restrict__ cin,
                                          T *__restrict__ out, T *__restrict__ ws, T alpha, T beta,
                                          T *sm)
{
    constexpr int EPT = PM_LEAN_EPT(sizeof(T));
    const int4 r0 = __ldg(reinterpret_cast<const int4 *>(rec));
    const int4 r1 = __ldg(reinterpret_cast<const int4 *>(rec) + 1);
    const int64_t so = (int64_t)(((uint64_t)(uint32_t)r0.y << 32) | (uint32_t)r0.x);
    const int64_t dof = (int64_t)(((uint64_t)(uint32_t)r0.w << 32) | (uint32_t)r0.z);
    const int32_t sx = r1.x, dy = r1.y, nx = r1.z & 0xffff, ny = (int32_t)((uint32_t)r1.z >> 16);
    const int32_t info = r1.w, lx = info & 15, ly = (info >> 4) & 15;
    const T *s = src + so;
    const bool to_ws = (info & PM_LEAN_WS) != 0;
    T *d = (to_ws ? ws : out) + dof;
    const T *c = cin + dof;
    T v[EPT];
    if (info & PM_LEAN_COPY) {
        // Both sides run along x: no shared memory, no barrier.
#pragma unroll
        for (int i = 0; i < EPT; i++) {
            const int32_t l = (int32_t)threadIdx.x + NT * i, x = l & ((1 << lx) - 1), y = l >> lx;
            v[i] = x < nx && y < ny ? s[x + y * sx] : T(0);
        }
#pragma unroll
        for (int i = 0; i < EPT; i++) {
            const int32_t l = (int32_t)threadIdx.x + NT * i, x = l & ((1 << lx) - 1), y = l >> lx;
            if (x < nx && y < ny) {
                const int32_t o = x + y * dy;
                d[o] = to_ws ? v[i] : BETA ? alpha * v[i] + beta * c[o] : alpha * v[i];
            }
        }
        return;
    }
    const int32_t pitch = (1 << ly) + 1;
#pragma unroll
    for (int i = 0; i < EPT; i++) {
        const int32_t l = (int32_t)threadIdx.x + NT * i, y = l & ((1 << ly) - 1), x = l >> ly;
        v[i] = x < nx && y < ny ? s[x * sx + y] : T(0);
    }
#pragma unroll
    for (int i = 0; i < EPT; i++) {
        const int32_t l = (int32_t)threadIdx.x + NT * i, y = l & ((1 << ly) - 1), x = l >> ly;
        if (x < nx && y < ny)
            sm[x * pitch + y] = v[i];
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < EPT; i++) {
        const int32_t l = (int32_t)threadIdx.x + NT * i, x = l & ((1 << lx) - 1), y = l >> lx;
        if (x < nx && y < ny) {
            const int32_t o = x + y * dy;
            const T w = sm[x * pitch + y];
            d[o] = to_ws ? w : BETA ? alpha * w + beta * c[o] : alpha * w;
        }
    }
}

// GENERAL: the launch has general tiles (CTAs below n_general); without them the kernel holds
// only the lean path, and its registers are the lean path's.
template <typename T, int NT, bool BETA, bool GENERAL>
__global__ void __launch_bounds__(NT)
    tiled(const pm_tile_block *__restrict__ blk, const int32_t *__restrict__ begin,
          const int32_t *__restrict__ owner, const pm_lean_tile *__restrict__ lean,
          int32_t n_general, const T *__restrict__ src, const T *__restrict__ cin,
          const T *__restrict__ u, T *__restrict__ out, T *__restrict__ ws, T alpha, T beta)
{
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *sm = reinterpret_cast<T *>(smem_raw);
    const int32_t t = (int32_t)blockIdx.x;
    if (GENERAL && t < n_general)
        general_tile<T, NT, BETA>(t, blk, begin, owner, src, cin, u, out, ws, alpha, beta, sm);
    else
        lean_tile<T, NT, BETA>(lean + (t - n_general), src, cin, out, ws, alpha, beta, sm);
}

template <typename T, int NT, bool GENERAL>
cudaError_t launch(const pm_tile_plan *h, const pm_tile_block *blk, const int32_t *begin,
                   const int32_t *owner, const pm_lean_tile *lean, const void *src, const void *cin,
                   const void *u, void *out, void *ws, double alpha, double beta, cudaStream_t s)
{
    const size_t smem = h->smem_elems * sizeof(T);
    const unsigned grid = (unsigned)(h->tiles + h->lean_tiles);
    const int32_t ng = (int32_t)h->tiles;
    if (beta != 0.0)
        tiled<T, NT, true, GENERAL>
            <<<grid, NT, smem, s>>>(blk, begin, owner, lean, ng, (const T *)src, (const T *)cin,
                                    (const T *)u, (T *)out, (T *)ws, (T)alpha, (T)beta);
    else
        tiled<T, NT, false, GENERAL>
            <<<grid, NT, smem, s>>>(blk, begin, owner, lean, ng, (const T *)src, (const T *)cin,
                                    (const T *)u, (T *)out, (T *)ws, (T)alpha, (T)beta);
    return cudaGetLastError();
}

template <typename T, int NT>
cudaError_t launch_kind(const pm_tile_plan *h, const pm_tile_block *blk, const int32_t *begin,
                        const int32_t *owner, const pm_lean_tile *lean, const void *src,
                        const void *cin, const void *u, void *out, void *ws, double alpha,
                        double beta, cudaStream_t s)
{
    if (h->tiles > 0)
        return launch<T, NT, true>(h, blk, begin, owner, lean, src, cin, u, out, ws, alpha, beta,
                                   s);
    return launch<T, NT, false>(h, blk, begin, owner, lean, src, cin, u, out, ws, alpha, beta, s);
}

template <typename T>
cudaError_t launch_len(const pm_tile_plan *h, const pm_tile_block *blk, const int32_t *begin,
                       const int32_t *owner, const pm_lean_tile *lean, const void *src,
                       const void *cin, const void *u, void *out, void *ws, double alpha,
                       double beta, cudaStream_t s)
{
    switch (h->len_log) {
    case 0:
        return launch_kind<T, 32>(h, blk, begin, owner, lean, src, cin, u, out, ws, alpha, beta, s);
    case 1:
        return launch_kind<T, 64>(h, blk, begin, owner, lean, src, cin, u, out, ws, alpha, beta, s);
    case 2:
        return launch_kind<T, 128>(h, blk, begin, owner, lean, src, cin, u, out, ws, alpha, beta,
                                   s);
    default:
        return launch_kind<T, 256>(h, blk, begin, owner, lean, src, cin, u, out, ws, alpha, beta,
                                   s);
    }
}

} // namespace

extern "C" size_t pm_tiled_smem_bytes(int esize, const pm_tile_plan *plan)
{
    return plan->smem_elems * (size_t)esize;
}

extern "C" int pm_run_tiled(int esize, const pm_tile_plan *hplan, const pm_tile_block *dblk,
                            const int32_t *dbegin, const int32_t *downer, const pm_lean_tile *dlean,
                            const void *src, const void *cin, const void *u, void *out, void *ws,
                            double alpha, double beta, void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    if (hplan->tiles + hplan->lean_tiles == 0)
        return (int)cudaSuccess;
    if (esize == 4)
        return (int)launch_len<float>(hplan, dblk, dbegin, downer, dlean, src, cin, u, out, ws,
                                      alpha, beta, s);
    return (int)launch_len<double>(hplan, dblk, dbegin, downer, dlean, src, cin, u, out, ws, alpha,
                                   beta, s);
}
