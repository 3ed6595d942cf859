/* What the permute plugin's planners share: the cost model's memory constants, the tiled
 * kernel's geometry of a block (plan_model.c), the lean path's (plan_lean.c), the schedule
 * order of the tiled and fused plans (plan_tiled.c) and the per-element descriptor, which the
 * fused plan reuses (plan_elem.c).  The planners themselves are declared in permute.h.
 *
 * The model (the seed's: sectors, runs, coefficients, per-tile overhead) predicts nanoseconds
 * of the whole GPU.  Its constants are first guesses from the H200's measured ceilings (4.18
 * TB/s copy, ~63 TFLOP/s FMA peak); HISTORY.md says how they are to be calibrated. */
#ifndef KBENCH_PERMUTE_PLAN_H
#define KBENCH_PERMUTE_PLAN_H

#include <stdint.h>

#include "permute.h"

#define NS_PER_SECTOR (32.0 / 4180.0) /* one 32-byte sector at the copy bandwidth */
#define NS_PER_BYTE (1.0 / 4180.0)
#define NS_PER_RUN 0.002    /* address arithmetic and a partial sector per contiguous run */
#define NS_PER_THREAD 0.001 /* each thread of a tile, busy or idle */
#define NS_PER_SYNC 0.02    /* one shared-memory fill (two barriers) */

/* Sectors of a run of `bytes` whose start is a multiple of `align` bytes (at most 32): on
 * average align/32 of a sector less than one extra. */
static inline double pm_sectors(double bytes, int align)
{
    return bytes / 32.0 + 1.0 - align / 32.0;
}

static inline int pm_log2_ceil(int x)
{
    int l = 0;
    while ((1 << l) < x)
        l++;
    return l;
}

/* ---- the general and direct tiles (plan_model.c) ------------------------------------------ */

/* A block as the general tiles see it: the destination dims, and for an extract its source
 * trees as rows of one column. */
typedef struct pm_geom {
    int rank, rows, cols, esize, beta, extract;
    int ddim[PM_MAX_RANK];
    int inv[PM_MAX_RANK]; /* destination axis holding source axis q */
} pm_geom;

void pm_geom_of(const pm_problem *p, const pm_block *b, int extract, pm_geom *g);
/* Source trees a general tile gathers into shared memory at once. */
int pm_chunk_of(int cols, int log_p, int len_log);
/* The shape of least predicted ns of a block (tile extents 2^lg_out[k], 2^log_r_out trees);
 * returns that cost. */
double pm_best_shape(const pm_geom *g, int len_log, int unique, int *lg_out, int *log_r_out);
/* Fills the descriptor of block b with the shape (lg, log_r) at tile length len_log. */
void pm_fill_tile(const pm_problem *p, const pm_block *b, const pm_geom *g, const int *lg,
                  int log_r, int len_log, int64_t dst_off, pm_tile_block *t);
/* Predicted ns of a recoupling block on direct tiles, and in *chain one tile's latency. */
double pm_direct_cost(const pm_geom *g, int len_log, double *chain);
/* Whether a block may go on direct tiles. */
int pm_direct_fits(const pm_block *b);

/* ---- the lean tiles (plan_lean.c) ---------------------------------------------------------- */

/* A unique block (or the trees of an extract) as the lean tiles see it: destination axes with
 * dims of 1 dropped and each merged into its predecessor where the two are adjacent in the
 * source too (its source stride is the predecessor's stride times dim), so a transpose stays a
 * transpose whatever the rank; x is the destination's stride-1 axis, y the source's (or, where
 * that is x itself, the next destination axis: a strided copy). */
typedef struct pm_lean_geom {
    int m, ya, za, copy, lx, ly, lz; /* za: the z axis (-1: none) */
    int64_t dim[PM_MAX_RANK], sst[PM_MAX_RANK], dst[PM_MAX_RANK];
} pm_lean_geom;

/* The block with its axes merged as the lean tiles merge them (same offsets, trees and U). */
void pm_merge_block(const pm_block *b, pm_block *v);
/* The lean geometry of block b at tile length len_log, with the patch of least cost. */
void pm_lean_geom_of(const pm_block *b, int esize, int beta, int len_log, pm_lean_geom *g);
/* Lean tiles of `trees` trees of a block (n elements each); out NULL: count only. */
int64_t pm_lean_fill(const pm_lean_geom *g, int64_t src_off, int64_t dst_off, int trees, int64_t n,
                     int ws, pm_lean_tile *out);
/* Predicted ns of a block (trees trees) on the lean path at tile length len_log. */
double pm_lean_cost(const pm_lean_geom *g, int trees, int esize, int beta, int len_log);

/* ---- shared by the tiled and fused plans ---------------------------------------------------- */

/* Schedule order: blocks with more source trees first (their tiles run longest). */
typedef struct pm_order {
    int idx, cols;
} pm_order;

/* qsort comparator of pm_order: more columns first, then the block's index. */
int pm_by_cols(const void *a, const void *b);
/* The per-element descriptor of block b (also the fused kernel's). */
void pm_elem_of(const pm_block *b, pm_elem_block *e);

#endif
