/* Shared by the permute plugin's C glue, host code and CUDA kernels: the block structure of a
 * block-sparse tensor, the generator's specification, the per-block descriptors the kernels
 * read, and the tile index arithmetic (plain inline functions, so the host can emulate the
 * tiled kernel exactly in the tests).
 *
 * The operation, for every block and every destination tree i:
 *     out[i] = alpha * sum_j U[i][j] * permute_p(src[j]) + beta * cin[i]
 * Each run reads the pristine cin and writes out (as the sgemm plugin reads C0 and writes C),
 * so any number of runs leaves the same verifiable result and run() stays capturable.
 * Layout: axis 0 fastest; the subblock of source tree j of a block starts at
 * src_off + j*n, of destination tree i at dst_off + i*n; U is rows x cols, row-major, at u_off.
 * Destination axis k is source axis perm[k]. */
#ifndef KBENCH_PERMUTE_H
#define KBENCH_PERMUTE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#define PM_HD __host__ __device__ __forceinline__
#else
#define PM_HD static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define PM_MAX_RANK 8
/* Most destination trees one tile covers (the seed's 32). */
#define PM_MAX_TREES 32
/* Most (element, tree) slots one thread accumulates in the tiled kernel. */
#define PM_MAX_ACC 8
/* Tile lengths (threads per tile) the tiled kernel is built for: 32 << PM_LEN_*. */
#define PM_N_LENGTHS 4

typedef enum pm_preset {
    PM_ABELIAN_SMALL,
    PM_RECOUPLING_SMALL,
    PM_MANY_SMALL,
    PM_LARGE_U,
    PM_FEW_LARGE,
    PM_MIXED,
    PM_DENSE,
    PM_CUSTOM,
    PM_N_PRESETS
} pm_preset;

/* What the generator builds (parameters of a case). */
typedef struct pm_spec {
    pm_preset preset;
    int esize; /* 4 (f32) or 8 (f64) */
    double alpha, beta;
    double scale;           /* element count factor */
    int n_blocks, rank;     /* custom */
    int dmin, dmax;         /* custom: random dims range */
    int rows_min, rows_max; /* custom: destination trees range */
    int cols_min, cols_max; /* custom: source trees range; cols_max 0: cols = rows */
    int dims[PM_MAX_RANK];  /* dense, custom: fixed dims (n_dims 0: none) */
    int n_dims;
    int perm[PM_MAX_RANK]; /* dense, custom: the permutation (n_perm 0: the preset's) */
    int n_perm;
} pm_spec;

typedef struct pm_block {
    int rank;
    int rows, cols;
    int dims[PM_MAX_RANK]; /* source dims */
    int perm[PM_MAX_RANK]; /* destination axis k is source axis perm[k] */
    int64_t n;             /* elements of one tree's subblock */
    int64_t src_off, dst_off, u_off;
} pm_block;

/* A generated tensor pair, its inputs and its double-precision reference. */
typedef struct pm_problem {
    int esize;
    double alpha, beta;
    int n_blocks;
    pm_block *blocks;
    int64_t src_elems, dst_elems, u_elems;
    void *src, *cin, *u; /* inputs in the element type */
    double *ref;         /* the exact-as-double result */
    float *mag; /* |alpha| sum_j |U_ij x_j| + |beta c|: the scale of each element's error */
} pm_problem;

/* Element i of an element-type buffer (esize 4: float, 8: double) as a double, and back. */
static inline double pm_get(const void *a, int esize, int64_t i)
{
    return esize == 4 ? (double)((const float *)a)[i] : ((const double *)a)[i];
}

static inline void pm_set(void *a, int esize, int64_t i, double v)
{
    if (esize == 4)
        ((float *)a)[i] = (float)v;
    else
        ((double *)a)[i] = v;
}

static inline int pm_is_unique(const pm_block *b)
{
    return b->rows == 1 && b->cols == 1;
}

/* ---- the tiled kernel's per-block descriptor -------------------------------------------- */

#define PM_FLAG_UNIQUE 0x1 /* rows = cols = 1, U = [1]: no coefficient read */
#define PM_FLAG_TO_WS 0x2  /* extract: write the permuted tree to the workspace, no alpha/beta */
#define PM_FLAG_DIRECT 0x4 /* a recoupling block on direct tiles (pm_gen_tile, nr < 0) */

/* One block of a tiled launch.  A tile is 2^lg[k] elements along destination axis k (their
 * product 2^log_p, the region) times 2^log_r consecutive destination trees; within the region,
 * the destination-order index has axis k at bit dsh[k], the source-order index at bit ssh[k]. */
typedef struct pm_tile_block {
    int64_t src_off, dst_off, u_off;
    int32_t n, rows, cols, flags;
    int32_t rank, log_p, log_r, chunk; /* chunk: source trees gathered per shared-memory fill */
    int32_t pad_shift;                 /* one padding element per 2^pad_shift (31: none) */
    int32_t n_sp;                      /* spatial tiles per group of trees */
    int32_t ddim[PM_MAX_RANK];         /* destination dims */
    int32_t nt[PM_MAX_RANK];           /* tiles along destination axis k */
    int32_t lg[PM_MAX_RANK];
    int32_t dsh[PM_MAX_RANK];
    int32_t ssh[PM_MAX_RANK];
    int32_t dstr[PM_MAX_RANK]; /* destination stride of axis k */
    int32_t sstr[PM_MAX_RANK]; /* source stride of destination axis k */
} pm_tile_block;

/* ---- the lean path: abelian blocks and GEMM extracts ---------------------------------------- */

/* One tile of the lean path: a TX x TY x TZ patch (powers of two, TX*TY*TZ <= threads *
 * PM_LEAN_EPT) of a unique block whose axes the host has merged (adjacent in both orders):
 * x along the destination's stride-1 axis, y along the source's (transpose), or, where both
 * are the same axis (copy), x along it and y along the next destination axis; z along one more
 * axis, so that blocks of short axes still fill a tile (each z-slice is its own x-y patch).
 * Everything else (the remaining axes, the tree of an extract) is in the two origins, computed
 * on the host, so a CTA does one 48-byte load and then only 32-bit multiply-adds:
 *   transpose: src[src + x*sx + y + z*sz] -> dst[dst + x + y*dy + z*dz]
 *   copy:      src[src + x + y*sx + z*sz] -> dst[dst + x + y*dy + z*dz]
 * for x < nx, y < ny, z < nz. */
typedef struct pm_lean_tile {
    int64_t src, dst;    /* element offsets of the patch's origin (dst: in out, or in the ws) */
    int32_t sx;          /* source stride along x (transpose) or along y (copy) */
    int32_t dy;          /* destination stride along y */
    int32_t sz, dz;      /* source and destination strides along z */
    uint16_t nx, ny, nz; /* the patch's extents inside the block */
    uint16_t pad;
    int32_t info; /* bits 0-3: log2 TX; 4-7: log2 TY; 8-11: log2 TZ; PM_LEAN_COPY, PM_LEAN_WS */
    int32_t pad2;
} pm_lean_tile;

#define PM_LEAN_COPY 0x1000 /* source and destination share the stride-1 axis */
#define PM_LEAN_WS 0x2000   /* an extract: write the workspace, no alpha or beta */
/* Elements per thread on the lean path: 32 bytes of each element type in flight per thread. */
#define PM_LEAN_EPT(esize) (32 / (esize))

/* v4 (lean = 4): a lean tile whose runs are whole 16-byte vectors (nx, and for a transpose ny,
 * multiples of VW = 16 / esize elements; origins and strides aligned to 16 bytes) moves in
 * 16-byte vectors, bounds checked once a vector: a copy tile
 * along x on both sides; a transpose tile along y (the source's stride-1 axis) when it loads
 * and along x (the destination's) when it writes, through an unpadded patch [z][y][x] (rows of
 * TX elements, row r = z*TY + y) whose 16-byte groups are swizzled within each 128-byte bank
 * line (pm_lean_vec_at), so neither the scalar stores of the loaded vectors nor the vector
 * reads for the writes share a bank.  32-bit offsets.  The other tiles (odd extents or
 * strides) run v2's scalar tile. */
PM_HD int pm_lean_vec_ok(int64_t so, int64_t dof, int32_t sx, int32_t dy, int32_t sz, int32_t dz,
                         int32_t nx, int32_t ny, int32_t nz, int32_t info, int esize)
{
    const int32_t vw = 16 / esize, lv = esize == 4 ? 2 : 1;
    const int32_t lx = info & 15, ly = (info >> 4) & 15, lz = (info >> 8) & 15;
    if (lx < lv || (!(info & PM_LEAN_COPY) && ly < lv))
        return 0;
    if (nx % vw || (!(info & PM_LEAN_COPY) && ny % vw) || nx > 1 << lx || ny > 1 << ly ||
        nz > 1 << lz)
        return 0;
    return ((so | dof | (int64_t)(sx | dy | sz | dz)) & (vw - 1)) == 0;
}

/* The patch slot of element x of row r of a v4 transpose patch (TX = 2^lx, TY = 2^ly,
 * 2^(lx+ly+lz) elements): the row's 16-byte group XOR the row group r / VW (of the line's
 * first row where rows are shorter than a line) times 128 bytes / TY, so the VW-row
 * groups a warp stashes at once land in different banks; within the patch's first line where
 * the patch is smaller.  A bijection on the patch (only bits below the line change, by a
 * function of the line), and it keeps each 16-byte group whole. */
PM_HD int32_t pm_lean_vec_at(int32_t r, int32_t x, int32_t lx, int32_t ly, int32_t lxyz, int esize)
{
    const int32_t lv = esize == 4 ? 2 : 1, lw = esize == 4 ? 5 : 4; /* VW, elements a line */
    const int32_t lr = lw > lx ? lw - lx : 0, sh = lw - ly + lv > lv ? lw - ly + lv : lv;
    const int32_t m = ((lxyz < lw ? 1 << lxyz : 1 << lw) - 1) & ~((1 << lv) - 1);
    return ((r << lx) | x) ^ ((((r >> lr) << lr) >> lv << sh) & m);
}

/* One tile of the general path, its origins computed on the host: the region starting at
 * its origin, destination trees i0 .. i0 + nr - 1. */
typedef struct pm_gen_tile {
    int64_t src;               /* the region's origin in source tree 0 of the block */
    int64_t dst;               /* the region's origin in destination tree i0 */
    int64_t u;                 /* U[i0][0] */
    int32_t blk;               /* the block's descriptor */
    int32_t nr;                /* destination trees of the tile */
    uint16_t rem[PM_MAX_RANK]; /* the region's extent inside the block along destination axis k */
} pm_gen_tile;

/* A direct tile (a tiny recoupling block, PM_FLAG_DIRECT) has a record of the same layout,
 * told apart by nr < 0, that holds all the tile needs (no descriptor read): -> count
 * consecutive destination elements (tree-major) from element e0 = i0 * n + r0 of the block;
 * src is the block's source, dst its destination element e0, u its U row i0; nr packs count,
 * cols, r0 and the rank (pm_direct_nr), rem[k] destination dim k | its source stride << 8.
 * Each thread takes element e0 + t and sums U[i][j] times its source element over the source
 * trees j, PM_DIRECT_STEP trees' loads at a time, as per_element's generic kernel does, but in
 * the tiled launch: the chain of a tile is its record, then its sources and U, then the
 * stores.  Hence n (and every dim and stride) at most PM_DIRECT_MAX_N, cols at most 31, and
 * the tile at most 256 elements. */
#define PM_DIRECT_EPT 1
#define PM_DIRECT_STEP 8
#define PM_DIRECT_MAX_N 255

PM_HD int32_t pm_direct_nr(int32_t count, int32_t cols, int32_t r0, int32_t rank)
{
    return (int32_t)(0x80000000u | (uint32_t)(count - 1) | (uint32_t)cols << 8 |
                     (uint32_t)r0 << 13 | (uint32_t)rank << 21);
}

PM_HD void pm_direct_fields(int32_t nr, int32_t *count, int32_t *cols, int32_t *r0, int32_t *rank)
{
    *count = (nr & 0xff) + 1;
    *cols = (nr >> 8) & 31;
    *r0 = (nr >> 13) & 0xff;
    *rank = (nr >> 21) & 15;
}

/* Element r0 + l of a direct tile (w: rem as four 32-bit words): its tree from i0 (*tree)
 * and its source offset within the tree (returned); n the block's tree size. */
PM_HD int32_t pm_direct_src(const uint32_t *w, int32_t rank, int32_t n, int32_t e, int32_t *tree)
{
    int32_t s = 0;
    *tree = e / n;
    e -= *tree * n;
    for (int k = 0; k < PM_MAX_RANK; k++) {
        if (k < rank) {
            const uint32_t f = (w[k >> 1] >> (16 * (k & 1))) & 0xffff;
            const int32_t d = (int32_t)(f & 0xff), q = e / d;
            s += (e - q * d) * (int32_t)(f >> 8);
            e = q;
        }
    }
    return s;
}

/* A direct tile's tree size: the product of its dims. */
PM_HD int32_t pm_direct_n(const uint32_t *w, int32_t rank)
{
    int32_t n = 1;
    for (int k = 0; k < PM_MAX_RANK; k++)
        if (k < rank)
            n *= (int32_t)((w[k >> 1] >> (16 * (k & 1))) & 0xff);
    return n;
}

/* Destination trees one thread of a general tile accumulates, and region elements. */
#define PM_GEN_RB 4
#define PM_GEN_EPP 4

/* A whole tiled launch: general blocks in schedule order (most source trees first), the first
 * tile of each (begin[n_blocks] = the number of general tiles) and every tile's record; then
 * the lean tiles.  The grid is tiles + lean_tiles CTAs: CTA t < tiles runs general tile t,
 * the others lean tile t - tiles; with split (v6), two launches: the general tiles, then the
 * lean tiles as a lean-only launch. */
typedef struct pm_tile_plan {
    int n_blocks;
    int len_log;        /* tile length (threads) = 32 << len_log */
    pm_tile_block *blk; /* host copy */
    int32_t *begin;
    pm_gen_tile *gen;
    int64_t tiles; /* general tiles (recoupling blocks) */
    pm_lean_tile *lean;
    int64_t lean_tiles;
    int n_lean_blocks; /* blocks (or extracts) on the lean path */
    int lean_per;      /* lean-only launches: lean tiles a CTA, pipelined (v3); 0: v2, one */
    int split;         /* v6: the general tiles, then the lean tiles as a lean-only launch */
    int lean_vec;      /* lean-only launches: v4 (one tile a CTA, 16-byte vectors), over lean_per */
    size_t smem_elems; /* shared memory of one tile, elements */
    double predicted_ns;
    double work_ns; /* the sum of the tiles' costs (predicted_ns less chains and launches) */
} pm_tile_plan;

/* ---- the per-element kernels' descriptor ------------------------------------------------- */

typedef struct pm_elem_block {
    int64_t src_off, dst_off, u_off;
    int32_t n, rows, cols, rank;
    int32_t ddim[PM_MAX_RANK];
    int32_t sstr[PM_MAX_RANK];
} pm_elem_block;

typedef struct pm_elem_plan {
    int n_blocks;
    pm_elem_block *blk;
    int32_t *begin; /* first CTA of each block; begin[n_blocks] = CTAs */
    int32_t *owner; /* the block of each CTA */
} pm_elem_plan;

#define PM_ELEM_THREADS 256

/* ---- the fused recoupling kernel's plan (kernels/04_fused.cu) ------------------------------- */

/* A tile is PM_FUSED_BM destination trees x PM_FUSED_BN destination elements ("columns") of
 * one block: out tile = alpha * U(tile trees, all cols) * P(all cols, tile columns) + beta * cin,
 * with P the permuted source trees gathered straight into shared memory (no workspace).
 * The columns of a tile are not consecutive destination elements but boxes of up to
 * PM_FUSED_RX destination-consecutive x BN / RX source-consecutive elements (host-built
 * column tables), so that both the gather and the stores move whole runs; the gather reads the
 * tile's columns in ascending source order.  PM_FUSED_BK source trees per shared-memory fill;
 * each of the PM_FUSED_THREADS threads gathers one column and accumulates 8 trees x 4 columns. */
#define PM_FUSED_BM 32
#define PM_FUSED_BN 128
#define PM_FUSED_BK 16
#define PM_FUSED_THREADS 128
#define PM_FUSED_TM 8 /* trees per thread */
#define PM_FUSED_TN 4 /* columns per thread */
/* A box's extent along the destination-consecutive elements (and BN / RX along the source-
 * consecutive ones).  On large_u, 8 moves the fewest 32-byte sectors per tile: a warp's gather
 * touches 5.2 (4 at best), 64 columns of a tree stored 10.0 (8); 16 gives 6.9 and 8.9, 4 gives
 * 4.6 and 17.0, and the gather runs cols / 8 times as often as the stores. */
#define PM_FUSED_RX 8
/* Shared-memory row of P: 4 pad elements per 32 columns spread the gather's stores
 * (consecutive threads: columns PM_FUSED_RX apart; at most 2 to a bank) and keep the 4-column
 * reads 16-byte aligned. */
#define PM_FUSED_PROW (PM_FUSED_BN + PM_FUSED_BN / 8)

/* How the fused kernel fills shared memory and runs the product (pm_fused_plan.fill):
 * through registers, FMAs in the element type (fused); by cp.async, the same FMAs
 * (fused_async); through registers converted to double, the product on the FP64 tensor cores
 * (fused_mma, v8); float32 by cp.async into a ring of stages, the same product (fused_mma_ring,
 * v8.2; float64 takes fused_mma's). */
enum { PM_FUSED_FILL_REGS, PM_FUSED_FILL_ASYNC, PM_FUSED_FILL_MMA, PM_FUSED_FILL_RING };

/* A block of the fused launch; its column tables start at `tab` (ceil(n / BN) * BN entries). */
typedef struct pm_fused_block {
    int64_t src_off, dst_off, u_off, tab;
    int32_t n, rows, cols, pad;
} pm_fused_block;

/* Gather entry t of a tile: the source offset (within a tree) thread t loads, -1 past the
 * block's elements, and the shared-memory slot of its column. */
typedef struct pm_fused_gather {
    int32_t soff, spos;
} pm_fused_gather;

/* One tile of the fused launch, all the kernel needs of it: its block's offsets and sizes, its
 * origin (first tree, first column: a multiple of PM_FUSED_BN), and its block's index into the
 * plan's descriptors.  Its columns are entries item * BN .. + BN - 1 of the per-item tables, so
 * a CTA loads its item and its gather entry at once (no load waits on another before the
 * first fill's). */
typedef struct pm_fused_item {
    int64_t src_off, dst_off, u_off;
    int32_t n, rows, cols, row0, elem0, blk;
} pm_fused_item;

/* The fused launch: descriptors, column tables per block (gather: in gather order; dcol: the
 * destination offset within a tree of each column, -1 past the block), the tiles in schedule
 * order (tiles of the blocks with most source trees first, so the longest run first) and the
 * tables per tile as the kernel reads them (igather, idcol: items x BN entries, copies of
 * their block's columns). */
typedef struct pm_fused_plan {
    int n_blocks;
    pm_fused_block *blk;
    int64_t tab_len;
    pm_fused_gather *gather;
    int32_t *dcol;
    int64_t items;
    pm_fused_item *item;
    pm_fused_gather *igather;
    int32_t *idcol;
    double predicted_ns;
    int fill; /* PM_FUSED_FILL_*: how shared memory is filled and the product run (set by the
               * caller) */
    int ctas; /* fused_mma: the CTAs an SM its registers are capped for, 3 or 4 (the caller) */
    int ring; /* fused_mma_ring: its stages, 2 or 3 (the caller) */
} pm_fused_plan;

/* Source offset (within a tree) of destination element e of a block: one division per axis. */
PM_HD int32_t pm_elem_src_off(const pm_elem_block *b, int32_t e)
{
    int32_t soff = 0;
    for (int k = 0; k < PM_MAX_RANK; k++) {
        if (k < b->rank) {
            int32_t q = e / b->ddim[k];
            soff += (e - q * b->ddim[k]) * b->sstr[k];
            e = q;
        }
    }
    return soff;
}

/* Shared-memory slot of tile column c in P's row. */
PM_HD int32_t pm_fused_pos(int32_t c)
{
    return c + ((c >> 5) << 2);
}

/* The tile slots thread t accumulates: trees *r0 .. *r0 + TM - 1 and columns *e0 .. *e0 + TN - 1
 * of the tile.  Warp w covers 16 trees (from 16 (w >> 1)) x 64 columns (from 64 (w & 1)) as 2
 * tree groups x 16 column groups: its shared-memory reads of U are 2 addresses (broadcast, one
 * wavefront) and of P 16 consecutive vectors (two), and a warp whose 16 trees all lie past the
 * block skips the product (pm_fused_warp_row0), so the last tile of a block with 48 trees
 * costs 16 trees' FMAs, not 32. */
PM_HD void pm_fused_thread(int32_t t, int32_t *r0, int32_t *e0)
{
    const int32_t lane = t & 31, warp = t >> 5;
    *r0 = (warp >> 1) * 16 + (lane >> 4) * PM_FUSED_TM;
    *e0 = (warp & 1) * 64 + (lane & 15) * PM_FUSED_TN;
}

/* The first tile tree of thread t's warp (all its slots' trees are this + 0..15). */
PM_HD int32_t pm_fused_warp_row0(int32_t t)
{
    return (t >> 6) * 16;
}

/* The U element thread t stages in its q-th load of a fill: tile tree *r, fill column *k
 * (consecutive threads read consecutive columns of one U row: coalesced). */
PM_HD void pm_fused_u_slot(int32_t t, int32_t q, int32_t *r, int32_t *k)
{
    const int32_t x = t + PM_FUSED_THREADS * q;
    *r = x / PM_FUSED_BK;
    *k = x % PM_FUSED_BK;
}
#define PM_FUSED_U_LOADS (PM_FUSED_BM * PM_FUSED_BK / PM_FUSED_THREADS)

/* ---- index arithmetic shared by the host emulation and the kernels -------------------------- */

/* The entry of `begin` (n+1 ascending values, begin[0] = 0) whose range holds x. */
PM_HD int pm_find_block(const int32_t *begin, int n, int32_t x)
{
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) >> 1;
        if (begin[mid] <= x)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* Destination-order index p of a general tile's region: its offset from the tile's origin in
 * a destination tree, its shared-memory slot (the source-order index, one pad element per
 * 2^pad_shift), and whether it lies inside the block (rem: the region's extent inside it along
 * each destination axis).  Shifts, masks and multiply-adds on 32-bit integers. */
PM_HD int pm_gen_dst(const pm_tile_block *b, const int32_t *rem, int32_t p, int32_t *doff,
                     int32_t *spos)
{
    int32_t o = 0, s = 0;
    int ok = 1;
    for (int k = 0; k < PM_MAX_RANK; k++) {
        if (k < b->rank) {
            const int32_t c = (p >> b->dsh[k]) & ((1 << b->lg[k]) - 1);
            ok &= c < rem[k];
            o += c * b->dstr[k];
            s |= c << b->ssh[k];
        }
    }
    *doff = o;
    *spos = s + (s >> b->pad_shift);
    return ok;
}

/* Source-order index s of the region: its offset from the tile's origin in a source tree, and
 * whether it lies inside the block. */
PM_HD int pm_gen_src(const pm_tile_block *b, const int32_t *rem, int32_t s, int32_t *soff)
{
    int32_t o = 0;
    int ok = 1;
    for (int k = 0; k < PM_MAX_RANK; k++) {
        if (k < b->rank) {
            const int32_t c = (s >> b->ssh[k]) & ((1 << b->lg[k]) - 1);
            ok &= c < rem[k];
            o += c * b->sstr[k];
        }
    }
    *soff = o;
    return ok;
}

/* Shared-memory pitch of one gathered source tree of a general tile. */
PM_HD int32_t pm_gen_pitch(const pm_tile_block *b)
{
    return (1 << b->log_p) + ((1 << b->log_p) >> b->pad_shift);
}

/* ---- host side (gen.c, plan_*.c) ------------------------------------------------------------- */

/* Parses "auto" (n = 0) or a permutation of 0..n-1 written as digits ("1032") or with commas. */
int pm_parse_perm(const char *text, int *perm, int *n, char *msg);
/* Checks that v[0..n) is a permutation of 0..n-1 and copies it (n = 0: none). */
int pm_set_perm(const int64_t *v, int n, int *perm, int *n_out, char *msg);
const char *pm_preset_name(pm_preset p);
int pm_preset_of(const char *name, pm_preset *out);
/* Builds blocks, inputs and reference.  Returns a kb_status; frees what it took on failure. */
int pm_generate(const pm_spec *spec, uint64_t seed, pm_problem *out, char *msg);
/* Builds the block structure only (no inputs, no reference). */
int pm_generate_blocks(const pm_spec *spec, uint64_t seed, pm_problem *out, char *msg);
/* Fills inputs and computes the reference of a problem whose blocks are set. */
int pm_fill(pm_problem *p, uint64_t seed, char *msg);
void pm_problem_free(pm_problem *p);
/* The host variant: out (element type, dst_elems) from the problem's inputs. */
void pm_host_apply(const pm_problem *p, void *out);
/* Largest |out - ref| over its bound (1 passes); counts elements over it into *bad. */
double pm_check(const pm_problem *p, const void *out, int64_t *bad);

/* Tile plan of the blocks in `which` (NULL: all; else nonzero entries), built for tile length
 * len_log (-1: the one of least predicted cost).  gemm_extract: blocks are written as
 * extracted trees (unique pseudo-blocks) to a workspace at ws_off[b].  Direct tiles, no v6. */
int pm_plan_tiles(const pm_problem *p, const unsigned char *which, const int64_t *ws_off,
                  int len_log, pm_tile_plan *out, char *msg);
/* The same with options (opts 0: run 8's plan): PM_PLAN_DIRECT puts recoupling blocks on
 * direct tiles where the model prefers them (else general tiles for all of them, the choice
 * before direct tiles existed); PM_PLAN_SPLIT (v6, tile_split) counts a chain once per wave of
 * CTAs and the lean tiles' slowdown inside a launch with general tiles, and moves the lean
 * tiles into a lean-only launch of their own where that is cheaper (pm_tile_plan.split). */
#define PM_PLAN_DIRECT 1
#define PM_PLAN_SPLIT 2
int pm_plan_tiles_direct(const pm_problem *p, const unsigned char *which, const int64_t *ws_off,
                         int len_log, int opts, pm_tile_plan *out, char *msg);
void pm_tile_plan_free(pm_tile_plan *t);
/* Predicted time of block b through the tiled kernel at tile length len_log (ns). */
double pm_tiled_cost(const pm_problem *p, const pm_block *b, int len_log, pm_tile_block *shape);
/* Predicted time of block b through extract + GEMM (ns), without the launch overheads. */
double pm_gemm_cost(const pm_problem *p, const pm_block *b);
/* Predicted per-launch overhead (ns). */
#define PM_LAUNCH_NS 2000.0

int pm_plan_elems(const pm_problem *p, int unique, pm_elem_plan *out, char *msg);
void pm_elem_plan_free(pm_elem_plan *e);

/* Predicted time of block b through the fused kernel (ns), without the launch overhead. */
double pm_fused_cost(const pm_problem *p, const pm_block *b);
/* The path of least predicted cost for block b: 1 tiled (at tile length len_log), 2 extract +
 * GEMM, 3 fused.  Abelian blocks stay tiled. */
int pm_choose_path(const pm_problem *p, const pm_block *b, int len_log);
/* Fused plan of the blocks with which[b] == 3 (NULL: every recoupling block). */
int pm_plan_fused(const pm_problem *p, const unsigned char *which, pm_fused_plan *out, char *msg);
void pm_fused_plan_free(pm_fused_plan *f);

/* ---- the GEMM path: one grouped cuBLAS GEMM over the blocks taken out of the tiled launch ---- */

/* Problem g: out block (n x rows, column-major, ld n) = alpha * W (n x cols, ld n) *
 * U^T (U row-major rows x cols is U^T column-major, ld cols) + beta * out, where W holds the
 * block's source trees already permuted (the extract).  With beta != 0 each block's cin is
 * copied into out first. */
typedef struct pm_gemm_plan {
    int count;
    int loop; /* one cuBLAS call per problem instead of one grouped call */
    int *m, *n, *k, *group_size;
    double *alpha, *beta;         /* per problem; converted to the element type at the call */
    void **hA, **hB, **hC;        /* device pointers, host copies */
    void **dA, **dB, **dC;        /* the same arrays on the device */
    int64_t *copy_off, *copy_len; /* beta != 0: cin -> out, in elements */
} pm_gemm_plan;

/* ---- device side (kernels/) ------------------------------------------------------------------ */

/* Each returns a cudaError_t as int.  Pointers are device pointers. */
int pm_run_per_element(int esize, int unique, const pm_elem_plan *hplan, const pm_elem_block *dblk,
                       const int32_t *dbegin, const int32_t *downer, const void *src,
                       const void *cin, const void *u, void *out, double alpha, double beta,
                       void *stream);
int pm_run_tiled(int esize, const pm_tile_plan *hplan, const pm_tile_block *dblk,
                 const pm_gen_tile *dgen, const pm_lean_tile *dlean, const void *src,
                 const void *cin, const void *u, void *out, void *ws, double alpha, double beta,
                 void *stream);
/* Largest dynamic shared memory the tiled kernel may need, so init can refuse a plan. */
size_t pm_tiled_smem_bytes(int esize, const pm_tile_plan *plan);
/* Copies (beta != 0) and the grouped GEMM; `handle` is a cublasHandle_t with its workspace set.
 * Returns a cudaError_t as int, or -1 with the cuBLAS status in *blas when cuBLAS failed. */
int pm_run_gemm(int esize, void *handle, const pm_gemm_plan *g, const void *cin, void *out,
                void *stream, int *blas);
/* The fused launch (nothing when the plan has no tiles). */
int pm_run_fused(int esize, const pm_fused_plan *hplan, const pm_fused_gather *digather,
                 const int32_t *didcol, const pm_fused_item *ditem, const void *src,
                 const void *cin, const void *u, void *out, double alpha, double beta,
                 void *stream);

#ifdef __cplusplus
}
#endif

#endif
