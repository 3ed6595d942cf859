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
// Direct tiles (tiny recoupling blocks, permute.h PM_FLAG_DIRECT) share the general tiles'
// records and CTA range (nr < 0 tells them apart): a thread per destination element sums
// U[i][j] times its source element over the source trees straight from L2 and L1, as
// per_element's generic kernel does, so a tile's latency is one round of loads after its
// record (which holds the block's dims and strides), not the general tile's descriptor,
// gather, barrier, recoupling and stores.
//
// CTAs [0, tiles) run general tiles (scheduled most source trees first: the host orders the
// descriptors), the rest lean tiles; a launch with no general tile uses a kernel without the
// general code: since v4 (lean = 4, the default) `lean_vec`, one tile a CTA, whole aligned tiles
// in 16-byte vectors; v3's `lean_pipe` (lean = 3) moves several lean tiles a CTA, the next
// one's loads in flight while it writes the current one; v2 (lean = 2) one scalar tile a CTA.
// The tile length (32 to 256 threads) and beta != 0 are template parameters.
#include <cstddef>

#include "common.cuh"

namespace
{

// The records are read as int4 vectors: their layout is part of the kernel.
static_assert(sizeof(pm_lean_tile) == 48 && offsetof(pm_lean_tile, sx) == 16 &&
                  offsetof(pm_lean_tile, sz) == 24 && offsetof(pm_lean_tile, nx) == 32 &&
                  offsetof(pm_lean_tile, nz) == 36 && offsetof(pm_lean_tile, info) == 40,
              "pm_lean_tile layout");
static_assert(sizeof(pm_gen_tile) == 48 && offsetof(pm_gen_tile, u) == 16 &&
                  offsetof(pm_gen_tile, blk) == 24 && offsetof(pm_gen_tile, nr) == 28 &&
                  offsetof(pm_gen_tile, rem) == 32,
              "pm_gen_tile layout");

// Extent k of a general tile's region inside its block (pm_gen_tile.rem, 16 bits each).
__device__ __forceinline__ int32_t rem_of(const int4 &r2, int k)
{
    const int32_t w = k < 2 ? r2.x : k < 4 ? r2.y : k < 6 ? r2.z : r2.w;
    return (k & 1) ? (int32_t)((uint32_t)w >> 16) : w & 0xffff;
}

// A direct tile (permute.h, pm_direct_nr): everything is in the record's three words, already
// loaded; cin first, then each step of PM_DIRECT_STEP source trees issues all its loads before
// its FMAs (a tiny block has one or two steps).
template <typename T, int NT, bool BETA>
__device__ __forceinline__ void direct_tile(const int4 r0, const int4 r1, const int4 r2,
                                            const T *__restrict__ src, const T *__restrict__ cin,
                                            const T *__restrict__ u, T *__restrict__ out, T alpha,
                                            T beta)
{
    constexpr int J = PM_DIRECT_STEP;
    static_assert(PM_DIRECT_EPT == 1, "a direct tile is one element a thread");
    const int64_t so = (int64_t)(((uint64_t)(uint32_t)r0.y << 32) | (uint32_t)r0.x);
    const int64_t dof = (int64_t)(((uint64_t)(uint32_t)r0.w << 32) | (uint32_t)r0.z);
    const int64_t uo = (int64_t)(((uint64_t)(uint32_t)r1.y << 32) | (uint32_t)r1.x);
    const uint32_t w[4] = {(uint32_t)r2.x, (uint32_t)r2.y, (uint32_t)r2.z, (uint32_t)r2.w};
    int32_t count, cols, e0, rank, row;
    pm_direct_fields(r1.w, &count, &cols, &e0, &rank);
    const int32_t l = (int32_t)threadIdx.x, n = pm_direct_n(w, rank);
    const int32_t soff = pm_direct_src(w, rank, n, e0 + l, &row);
    const bool in = l < count;
    const T cv = BETA && in ? cin[dof + l] : T(0);
    T acc = T(0);
#pragma unroll 1
    for (int32_t j0 = 0; j0 < cols; j0 += J) {
        T x[J], c[J];
#pragma unroll
        for (int q = 0; q < J; q++) {
            const int32_t j = j0 + q;
            const bool use = in && j < cols;
            x[q] = use ? __ldg(src + so + (int64_t)j * n + soff) : T(0);
            c[q] = use ? __ldg(u + uo + (int64_t)row * cols + j) : T(0);
        }
#pragma unroll
        for (int q = 0; q < J; q++)
            acc += c[q] * x[q];
    }
    if (in)
        out[dof + l] = BETA ? alpha * acc + beta * cv : alpha * acc;
}

template <int NT> __device__ __forceinline__ constexpr int kLog()
{
    return NT == 32 ? 5 : NT == 64 ? 6 : NT == 128 ? 7 : 8;
}

// A general tile's offsets for thread t, lane q of its tree group (its trees, if any: `rows`):
// pm_gen_dst for its elements (doff, ok; sidx in the region, spos in shared memory) and
// pm_gen_src for the elements it gathers (goff, gok, and gpos in shared memory), axis by axis
// (the same arithmetic, but only one axis's descriptor fields live at a time).  sidx is the
// caller's too, though no use to it: as a local here it made the compiler number the
// registers otherwise (the same instructions, another register allocation after ptxas).
template <int NT, int EPP, int M>
__device__ __forceinline__ void
gen_offsets(const pm_tile_block &b, const int4 r2, int32_t t, int32_t q, int32_t log_l,
            int32_t log_p, int32_t pad_shift, int32_t epp, int32_t m_all, bool rows,
            int32_t (&spos)[EPP], int32_t (&doff)[EPP], bool (&ok)[EPP], int32_t (&goff)[M],
            int32_t (&gpos)[M], bool (&gok)[M], int32_t (&sidx)[EPP])
{
#pragma unroll
    for (int e = 0; e < EPP; e++) {
        ok[e] = e < epp && rows;
        doff[e] = sidx[e] = 0;
    }
#pragma unroll
    for (int m = 0; m < M; m++) {
        gok[m] = m < m_all;
        goff[m] = 0;
    }
    // A loop, not unrolled: the code a CTA runs once is fetched cold into its SM, and a
    // small general tile's time is mostly that (v2's first run: ~4 µs for 5 tiles).
    const int32_t rank = b.rank;
#pragma unroll 1
    for (int k = 0; k < rank; k++) {
        {
            const int32_t mask = (1 << b.lg[k]) - 1, dsh = b.dsh[k], ssh = b.ssh[k];
            const int32_t dstr = b.dstr[k], sstr = b.sstr[k], rk = rem_of(r2, k);
#pragma unroll
            for (int e = 0; e < EPP; e++) {
                const int32_t c = ((q + (e << log_l)) >> dsh) & mask;
                ok[e] = ok[e] && c < rk;
                doff[e] += c * dstr;
                sidx[e] |= c << ssh;
            }
#pragma unroll
            for (int m = 0; m < M; m++) {
                const int32_t c = (((t + NT * m) & ((1 << log_p) - 1)) >> ssh) & mask;
                gok[m] = gok[m] && c < rk;
                goff[m] += c * sstr;
            }
        }
    }
#pragma unroll
    for (int e = 0; e < EPP; e++) // not ok: a harmless shared-memory read
        spos[e] = ok[e] ? sidx[e] + (sidx[e] >> pad_shift) : 0;
        // Gathered element m of every tree: region element (t + NT*m) mod 2^log_p.
#pragma unroll
    for (int m = 0; m < M; m++) {
        const int32_t s = (t + NT * m) & ((1 << log_p) - 1);
        gpos[m] = s + (s >> pad_shift);
    }
}

// A general tile thread's rows of U (rows i0 .. i0 + RB - 1 of the nr at ub) are read after the
// gather's barrier: ask for their first lines now, so that those reads hit L1 instead of
// adding a round trip to L2 after it.
template <int RB, typename T>
__device__ __forceinline__ void prefetch_rows(const T *ub, int32_t i0, int32_t nr, int32_t cols)
{
#pragma unroll
    for (int r = 0; r < RB; r++)
        if (i0 + r < nr)
            asm volatile("prefetch.global.L1 [%0];" ::"l"(
                __cvta_generic_to_global(ub + (int64_t)(i0 + r) * cols)));
}

// A general tile (permute.h, pm_gen_tile): region elements times destination trees.  Thread t
// is lane q = t mod L of tree group t / L, L = 2^(log_p - 2) (at least 1); it owns region
// elements q + L*e (e < PM_GEN_EPP) of trees 4*group .. 4*group + 3, PM_GEN_EPP x PM_GEN_RB
// accumulators, so each shared-memory value and each coefficient it reads feeds 4 FMAs.  The
// CTA gathers `chunk` source trees of the region at a time into shared memory in source order.
// A region has at most 4*NT elements, so in every tree a thread gathers the same (at most 4)
// region elements: their source offsets are computed once, and the descriptor is read only in
// the prologue (its fields would otherwise stay live in registers through the loops).
template <typename T, int NT, bool BETA>
__device__ __forceinline__ void
general_tile(const pm_gen_tile *__restrict__ rec, const pm_tile_block *__restrict__ blk,
             const T *__restrict__ src, const T *__restrict__ cin, const T *__restrict__ u,
             T *__restrict__ out, T alpha, T beta, T *sm)
{
    constexpr int EPP = PM_GEN_EPP, RB = PM_GEN_RB, M = 4; // M: gathered elements per tree
    __shared__ pm_tile_block b;
    const int4 r0 = __ldg(reinterpret_cast<const int4 *>(rec));
    const int4 r1 = __ldg(reinterpret_cast<const int4 *>(rec) + 1);
    const int4 r2 = __ldg(reinterpret_cast<const int4 *>(rec) + 2);
    if (r1.w < 0) { // a direct tile (the same for the whole CTA: no barrier is skipped)
        direct_tile<T, NT, BETA>(r0, r1, r2, src, cin, u, out, alpha, beta);
        return;
    }
    pm_load_desc<pm_tile_block, NT>(&b, blk + r1.z);
    const int64_t so = (int64_t)(((uint64_t)(uint32_t)r0.y << 32) | (uint32_t)r0.x);
    const int64_t dof = (int64_t)(((uint64_t)(uint32_t)r0.w << 32) | (uint32_t)r0.z);
    const int64_t uo = (int64_t)(((uint64_t)(uint32_t)r1.y << 32) | (uint32_t)r1.x);
    const int32_t nr = r1.w;
    __syncthreads();

    const int32_t log_p = b.log_p, n = b.n, cols = b.cols, chunk = b.chunk;
    const int32_t pitch = pm_gen_pitch(&b), pad_shift = b.pad_shift;
    const int32_t log_l = log_p > 2 ? log_p - 2 : 0, epp = log_p >= 2 ? EPP : 1 << log_p;
    const int32_t t = (int32_t)threadIdx.x, q = t & ((1 << log_l) - 1);
    const int32_t i0 = (t >> log_l) * RB; // the first of my trees, from the tile's first
    // m_all: gathered elements per tree (the region's elements over NT, at least 1).
    const int32_t m_all = log_p > kLog<NT>() ? 1 << (log_p - kLog<NT>()) : 1;
    int32_t spos[EPP], doff[EPP], goff[M], gpos[M], sidx[EPP];
    bool ok[EPP], gok[M];
    gen_offsets<NT>(b, r2, t, q, log_l, log_p, pad_shift, epp, m_all, i0 < nr, spos, doff, ok, goff,
                    gpos, gok, sidx);
    prefetch_rows<RB>(u + uo, i0, nr, cols);
    // Trees a thread gathers: from t / 2^log_p, every NT / 2^log_p (every one when the region
    // has NT elements or more).
    const int32_t j_first = log_p < kLog<NT>() ? t >> log_p : 0;
    const int32_t j_step = log_p < kLog<NT>() ? 1 << (kLog<NT>() - log_p) : 1;
    // multi: M trees a step (float32 only: float64 spills with it, at 126-136 registers).
    const bool multi = sizeof(T) == 4 && m_all == 1;
    const int32_t jq = multi ? j_step : 0, jstep = multi ? M * j_step : j_step;

    T acc[EPP][RB];
#pragma unroll
    for (int e = 0; e < EPP; e++)
#pragma unroll
        for (int r = 0; r < RB; r++)
            acc[e][r] = T(0);

    for (int32_t jc = 0; jc < cols; jc += chunk) {
        const int32_t nc = min(chunk, cols - jc);
        const T *sj = src + so + (int64_t)jc * n;
        // M loads in flight a step: M elements of one tree where the region has more than NT
        // elements, else (multi) one element of M trees (a runtime loop does not overlap one
        // step's loads with the next's: v2's first run spent a round trip per tree here).
#pragma unroll 1
        for (int32_t j = j_first; j < nc; j += jstep) {
            T v[M];
#pragma unroll
            for (int q = 0; q < M; q++) {
                const int32_t jj = j + q * jq;
                const bool use = multi ? jj < nc : q < m_all;
                v[q] = use && (multi ? gok[0] : gok[q])
                           ? sj[(int64_t)jj * n + (multi ? goff[0] : goff[q])]
                           : T(0);
            }
#pragma unroll
            for (int q = 0; q < M; q++) {
                const int32_t jj = j + q * jq;
                if (multi ? jj < nc : q < m_all)
                    sm[jj * pitch + (multi ? gpos[0] : gpos[q])] = v[q];
            }
        }
        __syncthreads();
        if (i0 < nr) {
            const T *uj = u + uo + (int64_t)i0 * cols + jc;
#pragma unroll 2
            for (int32_t jj = 0; jj < nc; jj++) {
                T c[RB], x[EPP];
#pragma unroll
                for (int r = 0; r < RB; r++)
                    c[r] = i0 + r < nr ? __ldg(uj + r * cols + jj) : T(0);
#pragma unroll
                for (int e = 0; e < EPP; e++)
                    x[e] = sm[jj * pitch + spos[e]];
#pragma unroll
                for (int e = 0; e < EPP; e++)
#pragma unroll
                    for (int r = 0; r < RB; r++)
                        acc[e][r] += c[r] * x[e];
            }
        }
        __syncthreads();
    }

    // The writes, a tree at a time in a loop (compact code, as the prologue; unrolled twice:
    // once spills float64 at 32 threads), the next tree's accumulators shifted into acc[.][0];
    // with beta, the tree's cin loads first.
#pragma unroll 2
    for (int r = 0; r < RB && i0 + r < nr; r++) {
        T cv[EPP];
        const int64_t d = dof + (int64_t)(i0 + r) * n;
#pragma unroll
        for (int e = 0; e < EPP; e++)
            cv[e] = BETA && ok[e] ? cin[d + doff[e]] : T(0);
#pragma unroll
        for (int e = 0; e < EPP; e++) {
            if (ok[e])
                out[d + doff[e]] = BETA ? alpha * acc[e][0] + beta * cv[e] : alpha * acc[e][0];
#pragma unroll
            for (int q = 0; q + 1 < RB; q++)
                acc[e][q] = acc[e][q + 1];
        }
    }
}

// A lean tile's record (permute.h, pm_lean_tile), decoded from its three 16-byte words.
struct lean_rec {
    int64_t so, dof;
    int32_t sx, dy, sz, dz, nx, ny, nz, lx, ly, info;
};

__device__ __forceinline__ lean_rec lean_decode(const int4 r0, const int4 r1, const int4 r2)
{
    lean_rec r;
    r.so = (int64_t)(((uint64_t)(uint32_t)r0.y << 32) | (uint32_t)r0.x);
    r.dof = (int64_t)(((uint64_t)(uint32_t)r0.w << 32) | (uint32_t)r0.z);
    r.sx = r1.x, r.dy = r1.y, r.sz = r1.z, r.dz = r1.w;
    r.nx = r2.x & 0xffff, r.ny = (int32_t)((uint32_t)r2.x >> 16), r.nz = r2.y & 0xffff;
    r.info = r2.z, r.lx = r2.z & 15, r.ly = (r2.z >> 4) & 15;
    return r;
}

// The phases of a lean tile, N elements of each thread from its element i0: patch slot l of
// thread t is l = t + NT*i.  A copy tile (both sides along x) reads and writes x, then y, then
// z; a transpose tile reads y (the source's stride-1 axis) from l's low bits, then x, then z,
// stores into the padded patch [z][x][TY + 1] (both phases hit distinct banks), and after the
// barrier reads it and writes x, then y, then z.
//
// lean_load: the source (and, for a copy tile with beta, its cin: w).
template <typename T, int NT, bool BETA, int N>
__device__ __forceinline__ void lean_load(const lean_rec &r, int i0, const T *__restrict__ src,
                                          const T *__restrict__ cin, T (&v)[N], T (&w)[N])
{
    const T *s = src + r.so;
    const int32_t lxy = r.lx + r.ly;
    if (r.info & PM_LEAN_COPY) {
        const T *c = cin + r.dof;
        const bool with_c = BETA && !(r.info & PM_LEAN_WS);
#pragma unroll
        for (int i = 0; i < N; i++) {
            const int32_t l = (int32_t)threadIdx.x + NT * (i0 + i), x = l & ((1 << r.lx) - 1);
            const int32_t y = (l >> r.lx) & ((1 << r.ly) - 1), z = l >> lxy;
            const bool in = x < r.nx && y < r.ny && z < r.nz;
            v[i] = in ? s[x + y * r.sx + z * r.sz] : T(0);
            w[i] = with_c && in ? c[x + y * r.dy + z * r.dz] : T(0);
        }
        return;
    }
#pragma unroll
    for (int i = 0; i < N; i++) {
        const int32_t l = (int32_t)threadIdx.x + NT * (i0 + i), y = l & ((1 << r.ly) - 1);
        const int32_t x = (l >> r.ly) & ((1 << r.lx) - 1), z = l >> lxy;
        v[i] = x < r.nx && y < r.ny && z < r.nz ? s[x * r.sx + y + z * r.sz] : T(0);
    }
}

// lean_stash (transpose tiles): the loaded elements into the patch.
template <typename T, int NT, int N>
__device__ __forceinline__ void lean_stash(const lean_rec &r, int i0, const T (&v)[N], T *sm)
{
    const int32_t pitch = (1 << r.ly) + 1, lxy = r.lx + r.ly;
#pragma unroll
    for (int i = 0; i < N; i++) {
        const int32_t l = (int32_t)threadIdx.x + NT * (i0 + i), y = l & ((1 << r.ly) - 1);
        const int32_t x = (l >> r.ly) & ((1 << r.lx) - 1), z = l >> lxy;
        if (x < r.nx && y < r.ny && z < r.nz)
            sm[((z << r.lx) + x) * pitch + y] = v[i];
    }
}

// lean_emit: the destination writes, from v and w (COPY) or from the patch (transpose, its cin
// loaded first).  COPY is a template parameter: a select between v and the patch would make a
// transpose's writes wait for v, which v3 refills with the next tile's loads meanwhile.
template <typename T, int NT, bool BETA, bool COPY, int N>
__device__ __forceinline__ void lean_emit(const lean_rec &r, int i0, const T (&v)[N],
                                          const T (&w)[N], const T *sm, const T *__restrict__ cin,
                                          T *__restrict__ out, T *__restrict__ ws, T alpha, T beta)
{
    const bool to_ws = (r.info & PM_LEAN_WS) != 0;
    const int32_t pitch = (1 << r.ly) + 1, lxy = r.lx + r.ly;
    T *d = (to_ws ? ws : out) + r.dof;
    const T *c = cin + r.dof;
    // A transpose's cin, then its patch read first: N shared-memory loads in flight, not one
    // before each store.  Only the slots inside the tile: a small tile's slots beyond it lie
    // past its patch, and past the launch's shared memory where that patch is the largest.
    T cv[N], pv[N];
    if (!COPY)
#pragma unroll
        for (int i = 0; i < N; i++) {
            const int32_t l = (int32_t)threadIdx.x + NT * (i0 + i), x = l & ((1 << r.lx) - 1);
            const int32_t y = (l >> r.lx) & ((1 << r.ly) - 1), z = l >> lxy;
            const bool in = x < r.nx && y < r.ny && z < r.nz;
            cv[i] = BETA && !to_ws && in ? c[x + y * r.dy + z * r.dz] : T(0);
            pv[i] = in ? sm[((z << r.lx) + x) * pitch + y] : T(0);
        }
#pragma unroll
    for (int i = 0; i < N; i++) {
        const int32_t l = (int32_t)threadIdx.x + NT * (i0 + i), x = l & ((1 << r.lx) - 1);
        const int32_t y = (l >> r.lx) & ((1 << r.ly) - 1), z = l >> lxy;
        if (x < r.nx && y < r.ny && z < r.nz) {
            const T e = COPY ? v[i] : pv[i];
            const T f = COPY ? w[i] : cv[i];
            d[x + y * r.dy + z * r.dz] = to_ws ? e : BETA ? alpha * e + beta * f : alpha * e;
        }
    }
}

// A lean tile on its own (v2: one a CTA, and where general tiles share the kernel): every
// thread loads its elements (and with a copy and beta their cin) first, then (transpose)
// stashes them, and after the barrier writes them.  STEP elements at a time: all EPT for the
// lean-only kernel (the most loads in flight), fewer where general tiles share the kernel
// (less code to fetch cold: see the general tile's prologue).
template <typename T, int NT, bool BETA, int STEP>
__device__ __forceinline__ void lean_tile(const int4 r0, const int4 r1, const int4 r2,
                                          const T *__restrict__ src, const T *__restrict__ cin,
                                          T *__restrict__ out, T *__restrict__ ws, T alpha, T beta,
                                          T *sm)
{
    constexpr int EPT = PM_LEAN_EPT(sizeof(T));
    const lean_rec r = lean_decode(r0, r1, r2);
    T v[STEP], w[STEP];
    if (r.info & PM_LEAN_COPY) {
        // No shared memory, no barrier.
#pragma unroll 1
        for (int i0 = 0; i0 < EPT; i0 += STEP) {
            lean_load<T, NT, BETA, STEP>(r, i0, src, cin, v, w);
            lean_emit<T, NT, BETA, true, STEP>(r, i0, v, w, sm, cin, out, ws, alpha, beta);
        }
        return;
    }
#pragma unroll 1
    for (int i0 = 0; i0 < EPT; i0 += STEP) {
        lean_load<T, NT, BETA, STEP>(r, i0, src, cin, v, w);
        lean_stash<T, NT, STEP>(r, i0, v, sm);
    }
    __syncthreads();
#pragma unroll 1
    for (int i0 = 0; i0 < EPT; i0 += STEP)
        lean_emit<T, NT, BETA, false, STEP>(r, i0, v, w, sm, cin, out, ws, alpha, beta);
}

// v3 (lean = 3): a CTA moves up to `per` lean tiles, software-pipelined: the next tile's
// record is asked for before the current tile's barrier, and the next tile's loads are issued
// right after it, before the current tile's writes.  So each thread keeps its EPT loads in
// flight while it writes (v2 issued them only after a record round trip, and waited at the
// barrier with nothing in flight), and the record's round trip before the first load is paid
// once per `per` tiles.  Two patches, alternating, so one barrier a tile: the stash of tile
// k + 2 into tile k's patch comes after the barrier of tile k + 1, which every thread passes
// only after its reads of tile k's patch.  CTA b takes tiles b, b + grid, b + 2 grid, ...: the
// tiles in flight at one time are neighbours in memory, as with one tile a CTA.  (v2.0's
// grid-stride loop, slower by 17%, ran its tiles one after the other, each behind its barrier,
// nothing in flight across them.)
template <typename T, int NT, bool BETA>
__global__ void __launch_bounds__(NT)
    lean_pipe(const pm_lean_tile *__restrict__ lean, int32_t n, int32_t patch,
              const T *__restrict__ src, const T *__restrict__ cin, T *__restrict__ out,
              T *__restrict__ ws, T alpha, T beta)
{
    constexpr int EPT = PM_LEAN_EPT(sizeof(T));
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *sm = reinterpret_cast<T *>(smem_raw), *other = sm + patch;
    const int32_t step = (int32_t)gridDim.x;
    int32_t t = (int32_t)blockIdx.x;
    const int4 *q = reinterpret_cast<const int4 *>(lean + t);
    lean_rec a = lean_decode(__ldg(q), __ldg(q + 1), __ldg(q + 2));
    T v[EPT], w[EPT];
    lean_load<T, NT, BETA, EPT>(a, 0, src, cin, v, w);
#pragma unroll 1
    for (;;) {
        const bool more = t < n - step; // step <= n: no overflow near 2^31 tiles
        int4 b0 = make_int4(0, 0, 0, 0), b1 = b0, b2 = b0;
        if (more) {
            q = reinterpret_cast<const int4 *>(lean + t + step);
            b0 = __ldg(q), b1 = __ldg(q + 1), b2 = __ldg(q + 2);
        }
        const bool copy = (a.info & PM_LEAN_COPY) != 0;
        if (copy) {
            lean_emit<T, NT, BETA, true, EPT>(a, 0, v, w, sm, cin, out, ws, alpha, beta);
        } else {
            lean_stash<T, NT, EPT>(a, 0, v, sm);
            __syncthreads();
        }
        const lean_rec b = lean_decode(b0, b1, b2);
        if (more)
            lean_load<T, NT, BETA, EPT>(b, 0, src, cin, v, w);
        if (!copy)
            lean_emit<T, NT, BETA, false, EPT>(a, 0, v, w, sm, cin, out, ws, alpha, beta);
        if (!more)
            break;
        if (!copy) {
            T *const u = sm;
            sm = other;
            other = u;
        }
        a = b;
        t += step;
    }
}

// v4 (lean = 4, permute.h pm_lean_vec_ok): one tile a CTA as v2, but a tile whose runs are
// whole 16-byte vectors moves in 16-byte vectors, NV = EPT / VW of them a thread (run 10's ncu
// of v3 on a 537 MB transpose: SM throughput 84%, memory 60%: issue-bound, so the point is
// fewer instructions an element, not more bytes in flight).  Vector v of a tile: a copy's
// x-group v mod TX/VW, then y, then z; a transpose loads y-group v mod TY/VW of row x, stashes
// its VW elements into rows y .. y + VW - 1 of the patch, and after the barrier reads x-group
// v mod TX/VW of row (z, y) as one vector.  The tile's extents along the vectors' axes are
// multiples of VW (the per-tile test, a uniform branch), so the bounds are checked once a
// vector, not once an element; tiles that fail the test run v2's scalar tile.
// At least 1536 threads an SM (at most 32 CTAs): 40 registers, 75% occupancy (without the
// bound 54-56 registers, v3's 56% occupancy in run 10's ncu), no spills.
#define LEAN_VEC_CTAS(NT) (1536 / (NT) < 32 ? 1536 / (NT) : 32)
template <typename T> struct alignas(16) vec16 {
    T e[16 / sizeof(T)];
};

template <typename T, int NT, bool BETA>
__device__ __forceinline__ void vec_tile(const lean_rec &r, const T *__restrict__ src,
                                         const T *__restrict__ cin, T *__restrict__ out,
                                         T *__restrict__ ws, T alpha, T beta, T *sm)
{
    constexpr int VW = 16 / sizeof(T), LV = VW == 4 ? 2 : 1, NV = PM_LEAN_EPT(sizeof(T)) / VW;
    using V = vec16<T>;
    const bool to_ws = (r.info & PM_LEAN_WS) != 0;
    const int32_t lz = (r.info >> 8) & 15, lxyz = r.lx + r.ly + lz;
    const int32_t t = (int32_t)threadIdx.x;
    const T *s = src + r.so;
    const T *c = cin + r.dof;
    T *d = (to_ws ? ws : out) + r.dof;
    V a[NV];
    if (r.info & PM_LEAN_COPY) {
        const int32_t lgx = r.lx - LV, mx = (1 << lgx) - 1, my = (1 << r.ly) - 1;
        const int32_t lgxy = lgx + r.ly;
        int32_t dof[NV];
        bool in[NV];
#pragma unroll
        for (int i = 0; i < NV; i++) {
            const int32_t v = t + NT * i, x = (v & mx) << LV, y = (v >> lgx) & my, z = v >> lgxy;
            in[i] = x < r.nx && y < r.ny && z < r.nz;
            dof[i] = x + y * r.dy + z * r.dz;
            if (in[i])
                a[i] = *reinterpret_cast<const V *>(s + x + y * r.sx + z * r.sz);
        }
#pragma unroll
        for (int i = 0; i < NV; i++) {
            if (!in[i])
                continue;
            V o = a[i], w;
            if (BETA && !to_ws)
                w = *reinterpret_cast<const V *>(c + dof[i]);
#pragma unroll
            for (int j = 0; j < VW; j++)
                o.e[j] = to_ws ? o.e[j] : BETA ? alpha * o.e[j] + beta * w.e[j] : alpha * o.e[j];
            *reinterpret_cast<V *>(d + dof[i]) = o;
        }
        return;
    }
    {
        // Loads along y, stash into rows (z, y + j).
        const int32_t lgy = r.ly - LV, my = (1 << lgy) - 1, mx = (1 << r.lx) - 1;
        const int32_t lgxy = lgy + r.lx;
        bool in[NV];
#pragma unroll
        for (int i = 0; i < NV; i++) {
            const int32_t v = t + NT * i, y = (v & my) << LV, x = (v >> lgy) & mx, z = v >> lgxy;
            in[i] = x < r.nx && y < r.ny && z < r.nz;
            if (in[i])
                a[i] = *reinterpret_cast<const V *>(s + x * r.sx + y + z * r.sz);
        }
#pragma unroll
        for (int i = 0; i < NV; i++) {
            const int32_t v = t + NT * i, y = (v & my) << LV, x = (v >> lgy) & mx, z = v >> lgxy;
            // Rows y .. y + VW - 1 share the row group, hence the swizzle: row y + j's slot is
            // row y's XOR j << lx (permute.h, pm_lean_vec_at; the emulation checks it).
            const int32_t at = pm_lean_vec_at((z << r.ly) + y, x, r.lx, r.ly, lxyz, sizeof(T));
            if (in[i])
#pragma unroll
                for (int j = 0; j < VW; j++)
                    sm[at ^ (j << r.lx)] = a[i].e[j];
        }
    }
    __syncthreads();
    {
        const int32_t lgx = r.lx - LV, mx = (1 << lgx) - 1, my = (1 << r.ly) - 1;
        const int32_t lgxy = lgx + r.ly;
        int32_t dof[NV];
        bool in[NV];
        V w[NV];
#pragma unroll
        for (int i = 0; i < NV; i++) {
            const int32_t v = t + NT * i, x = (v & mx) << LV, y = (v >> lgx) & my, z = v >> lgxy;
            dof[i] = x + y * r.dy + z * r.dz;
            in[i] = x < r.nx && y < r.ny && z < r.nz;
            if (in[i]) {
                if (BETA && !to_ws)
                    w[i] = *reinterpret_cast<const V *>(c + dof[i]);
                a[i] = *reinterpret_cast<const V *>(
                    sm + pm_lean_vec_at((z << r.ly) + y, x, r.lx, r.ly, lxyz, sizeof(T)));
            }
        }
#pragma unroll
        for (int i = 0; i < NV; i++) {
            if (!in[i])
                continue;
            V o = a[i];
#pragma unroll
            for (int j = 0; j < VW; j++)
                o.e[j] = to_ws ? o.e[j] : BETA ? alpha * o.e[j] + beta * w[i].e[j] : alpha * o.e[j];
            *reinterpret_cast<V *>(d + dof[i]) = o;
        }
    }
}

// The v4 kernel: a CTA a lean tile, vectors where the tile allows (the test is uniform across
// the CTA, so the barrier inside either path is reached by all its threads).
template <typename T, int NT, bool BETA>
__global__ void __launch_bounds__(NT, LEAN_VEC_CTAS(NT))
    lean_vec(const pm_lean_tile *__restrict__ lean, const T *__restrict__ src,
             const T *__restrict__ cin, T *__restrict__ out, T *__restrict__ ws, T alpha, T beta)
{
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *sm = reinterpret_cast<T *>(smem_raw);
    const int4 *q = reinterpret_cast<const int4 *>(lean + blockIdx.x);
    const int4 r0 = __ldg(q), r1 = __ldg(q + 1), r2 = __ldg(q + 2);
    const lean_rec r = lean_decode(r0, r1, r2);
    // The buffers' own alignment (cudaMalloc's is 256 bytes; a caller's offset pointer may not be).
    const uintptr_t base =
        (uintptr_t)src | (uintptr_t)out | (uintptr_t)ws | (BETA ? (uintptr_t)cin : 0);
    if ((base & 15) == 0 && pm_lean_vec_ok(r.so, r.dof, r.sx, r.dy, r.sz, r.dz, r.nx, r.ny, r.nz,
                                           r.info, (int)sizeof(T)))
        vec_tile<T, NT, BETA>(r, src, cin, out, ws, alpha, beta, sm);
    else
        lean_tile<T, NT, BETA, PM_LEAN_EPT(sizeof(T)) / 2>(r0, r1, r2, src, cin, out, ws, alpha,
                                                           beta, sm);
}

// GENERAL: the launch has general tiles (CTAs below n_general); without them the kernel holds
// only the lean path, its registers are the lean path's, and it moves a tile's EPT elements in
// one step (the most loads in flight).  One CTA a tile either way; lean-only launches run
// lean_pipe instead unless the plan says lean_per = 0 (the parameter lean = 2: v2).
template <typename T, int NT, bool BETA, bool GENERAL>
__global__ void __launch_bounds__(NT)
    tiled(const pm_tile_block *__restrict__ blk, const pm_gen_tile *__restrict__ gen,
          const pm_lean_tile *__restrict__ lean, int32_t n_general, const T *__restrict__ src,
          const T *__restrict__ cin, const T *__restrict__ u, T *__restrict__ out,
          T *__restrict__ ws, T alpha, T beta)
{
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *sm = reinterpret_cast<T *>(smem_raw);
    const int32_t t = (int32_t)blockIdx.x;
    if (GENERAL && t < n_general) {
        general_tile<T, NT, BETA>(gen + t, blk, src, cin, u, out, alpha, beta, sm);
        return;
    }
    const int4 *r = reinterpret_cast<const int4 *>(lean + (t - (GENERAL ? n_general : 0)));
    lean_tile<T, NT, BETA, GENERAL ? 4 : PM_LEAN_EPT(sizeof(T))>(
        __ldg(r), __ldg(r + 1), __ldg(r + 2), src, cin, out, ws, alpha, beta, sm);
}

template <typename T, int NT, bool GENERAL>
cudaError_t launch(const pm_tile_plan *h, const pm_tile_block *blk, const pm_gen_tile *gen,
                   const pm_lean_tile *lean, const void *src, const void *cin, const void *u,
                   void *out, void *ws, double alpha, double beta, cudaStream_t s)
{
    const size_t smem = h->smem_elems * sizeof(T);
    if (!GENERAL && h->lean_vec) { // v4: one patch, one tile a CTA
        const unsigned grid = (unsigned)h->lean_tiles;
        if (beta != 0.0)
            lean_vec<T, NT, true><<<grid, NT, smem, s>>>(lean, (const T *)src, (const T *)cin,
                                                         (T *)out, (T *)ws, (T)alpha, (T)beta);
        else
            lean_vec<T, NT, false><<<grid, NT, smem, s>>>(lean, (const T *)src, (const T *)cin,
                                                          (T *)out, (T *)ws, (T)alpha, (T)beta);
        return cudaGetLastError();
    }
    if (!GENERAL && h->lean_per > 0) { // two patches (lean_pipe)
        const int32_t n = (int32_t)h->lean_tiles, patch = (int32_t)h->smem_elems;
        const unsigned grid = (unsigned)CEIL_DIV(n, h->lean_per);
        if (beta != 0.0)
            lean_pipe<T, NT, true><<<grid, NT, 2 * smem, s>>>(lean, n, patch, (const T *)src,
                                                              (const T *)cin, (T *)out, (T *)ws,
                                                              (T)alpha, (T)beta);
        else
            lean_pipe<T, NT, false><<<grid, NT, 2 * smem, s>>>(lean, n, patch, (const T *)src,
                                                               (const T *)cin, (T *)out, (T *)ws,
                                                               (T)alpha, (T)beta);
        return cudaGetLastError();
    }
    const int32_t ng = (int32_t)h->tiles;
    const unsigned grid = (unsigned)(h->tiles + h->lean_tiles);
    if (beta != 0.0)
        tiled<T, NT, true, GENERAL><<<grid, NT, smem, s>>>(blk, gen, lean, ng, (const T *)src,
                                                           (const T *)cin, (const T *)u, (T *)out,
                                                           (T *)ws, (T)alpha, (T)beta);
    else
        tiled<T, NT, false, GENERAL><<<grid, NT, smem, s>>>(blk, gen, lean, ng, (const T *)src,
                                                            (const T *)cin, (const T *)u, (T *)out,
                                                            (T *)ws, (T)alpha, (T)beta);
    return cudaGetLastError();
}

template <typename T, int NT>
cudaError_t launch_kind(const pm_tile_plan *h, const pm_tile_block *blk, const pm_gen_tile *gen,
                        const pm_lean_tile *lean, const void *src, const void *cin, const void *u,
                        void *out, void *ws, double alpha, double beta, cudaStream_t s)
{
    if (h->tiles > 0)
        return launch<T, NT, true>(h, blk, gen, lean, src, cin, u, out, ws, alpha, beta, s);
    return launch<T, NT, false>(h, blk, gen, lean, src, cin, u, out, ws, alpha, beta, s);
}

template <typename T>
cudaError_t launch_len(const pm_tile_plan *h, const pm_tile_block *blk, const pm_gen_tile *gen,
                       const pm_lean_tile *lean, const void *src, const void *cin, const void *u,
                       void *out, void *ws, double alpha, double beta, cudaStream_t s)
{
    switch (h->len_log) {
    case 0:
        return launch_kind<T, 32>(h, blk, gen, lean, src, cin, u, out, ws, alpha, beta, s);
    case 1:
        return launch_kind<T, 64>(h, blk, gen, lean, src, cin, u, out, ws, alpha, beta, s);
    case 2:
        return launch_kind<T, 128>(h, blk, gen, lean, src, cin, u, out, ws, alpha, beta, s);
    default:
        return launch_kind<T, 256>(h, blk, gen, lean, src, cin, u, out, ws, alpha, beta, s);
    }
}

} // namespace

extern "C" size_t pm_tiled_smem_bytes(int esize, const pm_tile_plan *plan)
{
    return plan->smem_elems * (size_t)esize *
           ((plan->tiles == 0 || plan->split) && !plan->lean_vec && plan->lean_per > 0 ? 2 : 1);
}

extern "C" int pm_run_tiled(int esize, const pm_tile_plan *hplan, const pm_tile_block *dblk,
                            const pm_gen_tile *dgen, const pm_lean_tile *dlean, const void *src,
                            const void *cin, const void *u, void *out, void *ws, double alpha,
                            double beta, void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    if (hplan->tiles + hplan->lean_tiles == 0)
        return (int)cudaSuccess;
    if (hplan->split && hplan->tiles > 0 && hplan->lean_tiles > 0) {
        // v6: the general tiles alone (a grid of tiles CTAs), then the lean tiles as a
        // lean-only launch (its own instance: lean_pipe, or v2's with lean_per = 0).
        pm_tile_plan g = *hplan, l = *hplan;
        int e;
        g.lean_tiles = 0;
        l.tiles = 0;
        e = pm_run_tiled(esize, &g, dblk, dgen, dlean, src, cin, u, out, ws, alpha, beta, stream);
        if (e != (int)cudaSuccess)
            return e;
        return pm_run_tiled(esize, &l, dblk, dgen, dlean, src, cin, u, out, ws, alpha, beta,
                            stream);
    }
    if (esize == 4)
        return (int)launch_len<float>(hplan, dblk, dgen, dlean, src, cin, u, out, ws, alpha, beta,
                                      s);
    return (int)launch_len<double>(hplan, dblk, dgen, dlean, src, cin, u, out, ws, alpha, beta, s);
}
