/* The permute plugin's planning on the host: the cost model that picks each block's tile shape
 * (extents along every destination axis and the number of destination trees per tile) and the
 * tile length of a launch, the choice between the tiled kernel and extract + GEMM per block,
 * and the descriptor tables both device kernels read.
 *
 * The model (the seed's: sectors, runs, coefficients, per-tile overhead) predicts nanoseconds
 * of the whole GPU.  Its constants are first guesses from the H200's measured ceilings (4.18
 * TB/s copy, ~63 TFLOP/s FMA peak); NOTES.md says how they are to be calibrated. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kbench/plugin.h"
#include "permute.h"

#define NS_PER_SECTOR (32.0 / 4180.0) /* one 32-byte sector at the copy bandwidth */
#define NS_PER_BYTE (1.0 / 4180.0)
#define NS_PER_RUN 0.002         /* address arithmetic and a partial sector per contiguous run */
#define NS_PER_FMA 0.0002        /* a recoupling FMA slot, its share of the reads (float32) */
#define NS_PER_COEF 0.001        /* one coefficient read per tile */
#define NS_PER_TILE 0.25         /* scheduling a tile */
#define NS_PER_THREAD 0.001      /* each thread of a tile, busy or idle */
#define NS_PER_SYNC 0.02         /* one shared-memory fill (two barriers) */
#define GEMM_FLOP_PER_NS 30000.0 /* cuBLAS on mid-size problems: 30 TFLOP/s */
#define NS_PER_GEMM 500.0        /* each problem of a grouped GEMM */
/* An abelian block on a general tile costs more than the model's bytes and tiles say (the
 * seed's kernel ran 2.5-5x over them: NOTES.md, first outcome; the v2 general tile still
 * does a few times the lean tile's instructions per element): the choice weighs that in. */
#define GENERAL_SLOWDOWN 4.0
/* A lean tile's scheduling (its CTA is short and overlaps its neighbours': less than a
 * general tile's), and a transpose tile's warps' wait at its barrier on the slowest of them,
 * per warp and log2 of warps: both fitted to few_large's (two transposes) forced tile lengths
 * in gpu-run-4 (NOTES.md, v2.1). */
#define NS_PER_LEAN_TILE 0.1
#define NS_PER_WARP_WAIT 0.05
/* A 32-thread lean tile: an SM holds at most 32 CTAs, so half the warps of the longer tiles
 * (and its kernel takes 52-64 registers, not 32-42): its memory is less well hidden.  Fitted
 * to few_large at tile_len 32 in gpu-run-4 (189 µs, the model without it 162). */
#define LEAN_32_SLOWDOWN 1.15
/* A general tile's gather round beyond the first, exposed where the tiles run in one wave:
 * recoupling_small at tile_len 64/128/256 (4/2/1 rounds) ran 5.85/4.90/3.79 µs (gpu-run-7),
 * ~0.66 µs a round by a line through the three. */
#define NS_PER_ROUND 700.0
/* v3 lean-only launches: a CTA pipelines LEAN_PER consecutive lean tiles where the launch
 * still has LEAN_MIN_CTAS CTAs for them (about 8 an SM on an H200's 132 SMs: enough to fill
 * the SMs at every tile length), fewer tiles a CTA on smaller launches. */
#define LEAN_PER 4
#define LEAN_MIN_CTAS (132 * 8)
/* v4's vector tile where a lean-only launch has at least one tile an SM; below that the launch
 * is one short wave whose time is one tile's latency, and the scalar tile (lean_pipe at one
 * tile a CTA, or v2's kernel with lean = 2) is quicker: run 12
 * (258864a) measured abelian_small at scale 1 (35 tiles) 0.2-0.5 us slower on v4 than run 10's
 * same plan on v3 / v2 kernels (f32 beta 0: 2.18 against 1.67-1.85 us), while v4 won from 1024
 * tiles up (run 11: 8x8x8x4x4x4x4x4, 2.35 against v2's 2.77 us). */
#define LEAN_VEC_MIN_TILES 132
/* The latency of a general tile's first round (record, descriptor into shared memory, the
 * gather, a barrier, the recoupling, the stores; with beta a cin load after the recoupling):
 * run 8 (be12218) measured the small recoupling presets 1.4-2.5 us over the model's launch
 * and sum of costs (recoupling_small 0.1 f32 beta 0: 3.37 us, predicted 2.01; many_small
 * 3.77, 2.06; recoupling_small 1: 3.83, 2.05), 0.35 us more with beta, 0.35 more in float64. */
#define NS_GEN_CHAIN 1500.0
#define NS_GEN_CHAIN_BETA 350.0
#define NS_GEN_CHAIN_F64 350.0
/* A direct tile's chain: its record, then its source trees and U rows in one round
 * (PM_DIRECT_STEP trees a round; with beta cin in the same round), then the stores.  A guess
 * from per_element's generic kernel, which has two dependent loads before that round (owner,
 * descriptor) and ran 0.46 us over the model's launch (run 8, recoupling_small 0.1 f32). */
#define NS_DIRECT_CHAIN 300.0
#define NS_DIRECT_CHAIN_F64 150.0
#define NS_DIRECT_ROUND 300.0
/* A direct tile's index arithmetic (a division per axis) per element, and one (coefficient,
 * source element) pair, both through L1/L2. */
#define NS_PER_DIRECT_ELEM 0.003
#define NS_PER_DIRECT_PAIR 0.002
/* v6 (PM_PLAN_SPLIT).  A launch with general tiles runs the tiled kernel's general instance,
 * 80-124 registers a thread (cuobjdump -res-usage, sm_90a; GEN_REGS the most, rounded to the
 * allocation's 8): an SM holds 65536 / (GEN_REGS x 32) of its warps, and CTAs past what the
 * 132 SMs hold wait for a slot (run 10: many_small at scale 1 with beta 0.5, 1748 CTAs of 64
 * threads where an H200 holds ~1200, ran 3.51 us f32, 3.38 f64; with beta 0, 2002 CTAs of 32
 * threads, which fit, 2.74 and 2.59; beta itself costs recoupling_small's one-wave plans
 * 0.03-0.07 us; the model without waves tied the two lengths). */
#define GEN_REGS 104
/* What a CTA waiting for a slot held by a direct tile waits: the direct tile's life beyond the
 * lean floor (run 10: recoupling_small at scale 1, one wave of direct tiles, 1.95 us, a lean
 * tile alone 1.22), not the model's 0.3 us chain, which is relative to its 2 us launch. */
#define NS_SLOT_WAIT 750.0
#define N_SMS 132
#define MAX_CTAS_SM 32
/* Lean tiles inside a launch with general tiles run the general instance (its registers, four
 * elements a step, one tile a CTA), which hides less of their memory latency where they are
 * many: run 10's mixed at scale 1 (69 abelian blocks, 43 MB, beside 139 tiny recoupling
 * blocks, 41 kB; 17217 CTAs) ran 1.2-1.7x the model's sum (1.56 f32 beta 0), where lean-only
 * launches of the same size (dense 48^4) ran 0.9-1.1x it; at scale 0.1 (1-2 waves) the
 * model's sum held (f32 2.93 us measured, 2.87 predicted; f64 3.47, 3.59).  Charged from
 * SLOW_WAVES waves of CTAs on, where the launch's throughput, not its ramp, sets its time. */
#define GEN_LEAN_SLOWDOWN 1.5
#define SLOW_WAVES 4
/* A second kernel node behind the first in the graph: the one-element floor (run 10: a lean
 * tile 1.22 us against copy's 0.93, per_element's two nodes ~1.5 us over one). */
#define NS_SECOND_LAUNCH 1500.0

static void merge_block(const pm_block *b, pm_block *v);

typedef struct geom {
    int rank, rows, cols, esize, beta, extract;
    int ddim[PM_MAX_RANK];
    int inv[PM_MAX_RANK]; /* destination axis holding source axis q */
} geom;

static void geom_of(const pm_problem *p, const pm_block *b, int extract, geom *g)
{
    g->rank = b->rank;
    g->rows = b->rows;
    g->cols = extract ? 1 : b->cols;
    g->esize = p->esize;
    g->beta = !extract && p->beta != 0.0;
    g->extract = extract;
    for (int k = 0; k < b->rank; k++) {
        g->ddim[k] = b->dims[b->perm[k]];
        g->inv[b->perm[k]] = k;
    }
    if (extract)
        g->rows = b->cols;
}

/* Sectors of a run of `bytes` whose start is a multiple of `align` bytes (at most 32): on
 * average align/32 of a sector less than one extra. */
static double sectors(double bytes, int align)
{
    return bytes / 32.0 + 1.0 - align / 32.0;
}

static int log2_ceil(int x)
{
    int l = 0;
    while ((1 << l) < x)
        l++;
    return l;
}

static int chunk_of(int cols, int log_p, int len_log)
{
    int c = (4 * (32 << len_log)) >> log_p;
    if (c < 1)
        c = 1;
    return c > cols ? cols : c;
}

/* Predicted ns of a block with tile extents 2^lg[k] and 2^log_r trees at tile length len_log. */
static double shape_cost(const geom *g, const int *lg, int log_r, int len_log, int unique)
{
    double ext[PM_MAX_RANK], peff = 1.0, n_sp = 1.0, run_s = 1.0, run_d = 1.0;
    int log_p = 0, nt = 32 << len_log;
    for (int k = 0; k < g->rank; k++) {
        int t = 1 << lg[k];
        double ntk = (double)((g->ddim[k] + t - 1) / t);
        ext[k] = g->ddim[k] / ntk;
        peff *= ext[k];
        n_sp *= ntk;
        log_p += lg[k];
    }
    for (int q = 0; q < g->rank; q++) {
        int k = g->inv[q];
        run_s *= ext[k];
        if ((1 << lg[k]) < g->ddim[k])
            break;
    }
    for (int k = 0; k < g->rank; k++) {
        run_d *= ext[k];
        if ((1 << lg[k]) < g->ddim[k])
            break;
    }
    double groups = (double)((g->rows + (1 << log_r) - 1) >> log_r), r_eff = g->rows / groups;
    double tiles = n_sp * groups, runs_s = peff / run_s, runs_d = peff / run_d;
    double rd = tiles * g->cols * runs_s * sectors(run_s * g->esize, g->esize);
    double wr = tiles * r_eff * runs_d * sectors(run_d * g->esize, g->esize) * (g->beta ? 2 : 1);
    double runs = tiles * (g->cols * runs_s + r_eff * runs_d * (g->beta ? 2 : 1));
    double syncs = ceil((double)g->cols / chunk_of(g->cols, log_p, len_log));
    double ns = (rd + wr) * NS_PER_SECTOR + runs * NS_PER_RUN +
                tiles * (NS_PER_TILE + nt * NS_PER_THREAD + syncs * NS_PER_SYNC);
    if (!unique)
        ns += tiles * (double)(1 << log_r) * g->cols *
              (NS_PER_COEF + (double)(1 << log_p) * NS_PER_FMA * (g->esize / 4));
    return ns;
}

/* Predicted ns of a recoupling block on direct tiles (permute.h, PM_FLAG_DIRECT) at tile
 * length len_log, and in *chain the latency of one of its tiles: each destination element
 * reads its source element in every source tree and its row of U, so the source trees are read
 * once per destination tree (no reuse across trees as in the general tile: only for tiny
 * blocks, where that does not matter and the general tile's chain does). */
static double direct_cost(const geom *g, int len_log, double *chain)
{
    double n = 1.0, elems, tiles;
    for (int k = 0; k < g->rank; k++)
        n *= g->ddim[k];
    elems = n * g->rows;
    tiles = ceil(elems / ((32 << len_log) * PM_DIRECT_EPT));
    *chain = NS_DIRECT_CHAIN + (g->esize == 8 ? NS_DIRECT_CHAIN_F64 : 0.0) +
             (double)((g->cols - 1) / PM_DIRECT_STEP) * NS_DIRECT_ROUND;
    return (g->rows * (g->cols + (g->beta ? 2 : 1)) * sectors(n * g->esize, g->esize)) *
               NS_PER_SECTOR +
           tiles * (NS_PER_TILE + (32 << len_log) * NS_PER_THREAD) +
           elems * (NS_PER_DIRECT_ELEM + g->cols * NS_PER_DIRECT_PAIR * (g->esize / 4));
}

/* Whether a block may go on direct tiles: a recoupling block of at most two steps of source
 * trees (a longer chain of loads than that is the general tile's domain; the model's chain
 * for it is a guess) whose trees fit the record's 8-bit fields (permute.h). */
static int direct_fits(const pm_block *b)
{
    return !pm_is_unique(b) && b->cols <= 2 * PM_DIRECT_STEP && b->n <= PM_DIRECT_MAX_N &&
           b->n * b->rows < INT32_MAX / 2;
}

/* Greedy doubling of the extents (trees included), keeping the cheapest shape seen. */
/* Whether a region of 2^log_p elements times 2^log_r trees fits the tile length: a thread
 * holds PM_GEN_EPP elements times PM_GEN_RB trees. */
static int fits(int log_p, int log_r, int len_log)
{
    return (log_p > 2 ? log_p - 2 : 0) + (log_r > 2 ? log_r - 2 : 0) <= 5 + len_log;
}

static double best_shape(const geom *g, int len_log, int unique, int *lg_out, int *log_r_out)
{
    int lg[PM_MAX_RANK] = {0}, log_r = 0, log_p = 0;
    int max_r = g->extract ? 0 : log2_ceil(g->rows < PM_MAX_TREES ? g->rows : PM_MAX_TREES);
    double best = shape_cost(g, lg, log_r, len_log, unique);
    memcpy(lg_out, lg, sizeof lg);
    *log_r_out = 0;
    for (;;) {
        int pick = -1;
        double pick_cost = INFINITY;
        for (int k = 0; k <= g->rank; k++) {
            double c;
            if (k < g->rank) {
                if ((1 << lg[k]) >= g->ddim[k] || !fits(log_p + 1, log_r, len_log))
                    continue;
                lg[k]++;
                c = shape_cost(g, lg, log_r, len_log, unique);
                lg[k]--;
            } else {
                if (log_r >= max_r || !fits(log_p, log_r + 1, len_log))
                    continue;
                c = shape_cost(g, lg, log_r + 1, len_log, unique);
            }
            if (c < pick_cost) {
                pick_cost = c;
                pick = k;
            }
        }
        if (pick < 0)
            break;
        if (pick < g->rank) {
            lg[pick]++;
            log_p++;
        } else {
            log_r++;
        }
        if (pick_cost < best) {
            best = pick_cost;
            memcpy(lg_out, lg, sizeof lg);
            *log_r_out = log_r;
        }
    }
    return best;
}

/* Fills the descriptor of block b with the shape (lg, log_r) at tile length len_log. */
static void fill_tile(const pm_problem *p, const pm_block *b, const geom *g, const int *lg,
                      int log_r, int len_log, int64_t dst_off, pm_tile_block *t)
{
    int32_t st[PM_MAX_RANK], acc = 1, sh = 0;
    memset(t, 0, sizeof *t);
    t->src_off = b->src_off;
    t->dst_off = dst_off;
    t->u_off = b->u_off;
    t->n = (int32_t)b->n;
    t->rows = g->rows;
    t->cols = g->cols;
    t->flags = (pm_is_unique(b) ? PM_FLAG_UNIQUE : 0) | (g->extract ? PM_FLAG_TO_WS : 0);
    t->rank = b->rank;
    t->log_r = log_r;
    for (int q = 0; q < b->rank; q++) {
        st[q] = acc;
        acc *= b->dims[q];
    }
    t->n_sp = 1;
    acc = 1;
    for (int k = 0; k < b->rank; k++) {
        t->ddim[k] = g->ddim[k];
        t->lg[k] = lg[k];
        t->nt[k] = (g->ddim[k] + (1 << lg[k]) - 1) >> lg[k];
        t->n_sp *= t->nt[k];
        t->dsh[k] = sh;
        sh += lg[k];
        t->dstr[k] = acc;
        acc *= g->ddim[k];
        t->sstr[k] = st[b->perm[k]];
    }
    t->log_p = sh;
    sh = 0;
    for (int q = 0; q < b->rank; q++) {
        t->ssh[g->inv[q]] = sh;
        sh += lg[g->inv[q]];
    }
    /* A pad element per source row of the tile keeps the destination-order reads of shared
     * memory off one bank; no pad where the stride-1 axis stays or the row is one element. */
    t->pad_shift = (b->perm[0] == 0 || lg[g->inv[0]] == 0) ? 31 : lg[g->inv[0]];
    t->chunk = chunk_of(g->cols, t->log_p, len_log);
    (void)p;
}

double pm_tiled_cost(const pm_problem *p, const pm_block *b, int len_log, pm_tile_block *shape)
{
    geom g;
    int lg[PM_MAX_RANK], log_r;
    double c;
    pm_block v;
    merge_block(b, &v);
    geom_of(p, &v, 0, &g);
    c = best_shape(&g, len_log, pm_is_unique(b), lg, &log_r);
    if (shape)
        fill_tile(p, &v, &g, lg, log_r, len_log, b->dst_off, shape);
    if (direct_fits(b)) { /* the cheaper of the two tile kinds (the launch's chain aside) */
        double ch, d = direct_cost(&g, len_log, &ch);
        return d < c ? d : c;
    }
    return c;
}

double pm_gemm_cost(const pm_problem *p, const pm_block *b)
{
    geom g;
    int lg[PM_MAX_RANK], log_r;
    double extract, flops = 2.0 * b->n * b->rows * b->cols, bytes;
    geom_of(p, b, 1, &g);
    extract = best_shape(&g, 3, 1, lg, &log_r);
    bytes = (double)p->esize * (b->n * b->cols + b->n * b->rows * (p->beta != 0.0 ? 4 : 1) +
                                (double)b->rows * b->cols);
    return extract + fmax(flops / GEMM_FLOP_PER_NS, bytes * NS_PER_BYTE) + NS_PER_GEMM;
}

/* ---- the lean path ----------------------------------------------------------------------- */

/* A unique block (or the trees of an extract) as the lean tiles see it: destination axes with
 * dims of 1 dropped and each merged into its predecessor where the two are adjacent in the
 * source too (its source stride is the predecessor's stride times dim), so a transpose stays a
 * transpose whatever the rank; x is the destination's stride-1 axis, y the source's (or, where
 * that is x itself, the next destination axis: a strided copy). */
typedef struct lean_geom {
    int m, ya, za, copy, lx, ly, lz; /* za: the z axis (-1: none) */
    int64_t dim[PM_MAX_RANK], sst[PM_MAX_RANK], dst[PM_MAX_RANK];
} lean_geom;

static double lean_cost(const lean_geom *g, int trees, int esize, int beta, int len_log);

static void lean_merge(const pm_block *b, lean_geom *g)
{
    int64_t st[PM_MAX_RANK], acc = 1, dacc = 1;
    for (int q = 0; q < b->rank; q++) {
        st[q] = acc;
        acc *= b->dims[q];
    }
    g->m = 0;
    for (int k = 0; k < b->rank; k++) {
        int64_t d = b->dims[b->perm[k]], sk = st[b->perm[k]];
        if (d > 1) {
            if (g->m && sk == g->sst[g->m - 1] * g->dim[g->m - 1]) {
                g->dim[g->m - 1] *= d;
            } else {
                g->dim[g->m] = d;
                g->sst[g->m] = sk;
                g->dst[g->m] = dacc;
                g->m++;
            }
        }
        dacc *= d;
    }
    if (g->m == 0) {
        g->m = 1;
        g->dim[0] = g->sst[0] = g->dst[0] = 1;
    }
}

/* The block with its axes merged as lean_merge does (same offsets, trees and U): the general
 * tiles see fewer axes, and no axis of 1. */
static void merge_block(const pm_block *b, pm_block *v)
{
    lean_geom g;
    int order[PM_MAX_RANK];
    lean_merge(b, &g);
    *v = *b;
    v->rank = g.m;
    for (int q = 0; q < g.m; q++) /* source axis q: the q-th smallest source stride */
        order[q] = q;
    for (int q = 1; q < g.m; q++)
        for (int r = q; r > 0 && g.sst[order[r]] < g.sst[order[r - 1]]; r--) {
            int t = order[r];
            order[r] = order[r - 1];
            order[r - 1] = t;
        }
    for (int q = 0; q < g.m; q++) {
        v->dims[q] = (int)g.dim[order[q]];
        v->perm[order[q]] = q;
    }
}

static int lg_of(int64_t d)
{
    return log2_ceil(d < (1 << 20) ? (int)d : (1 << 20));
}

static void lean_geom_of(const pm_block *b, int esize, int beta, int len_log, lean_geom *g)
{
    int lt = 5 + len_log + log2_ceil(PM_LEAN_EPT(esize)), lgx, lgy, lgz;
    lean_merge(b, g);
    g->copy = g->sst[0] == 1;
    g->ya = g->copy ? (g->m > 1 ? 1 : -1) : 0;
    if (!g->copy)
        for (int k = 1; k < g->m; k++)
            if (g->sst[k] == 1)
                g->ya = k;
    g->za = -1; /* the longest of the other axes */
    for (int k = 1; k < g->m; k++)
        if (k != g->ya && (g->za < 0 || g->dim[k] > g->dim[g->za]))
            g->za = k;
    lgx = lg_of(g->dim[0]);
    lgy = g->ya < 0 ? 0 : lg_of(g->dim[g->ya]);
    lgz = g->za < 0 ? 0 : lg_of(g->dim[g->za]);
    /* The patch of least modelled cost among TX = 2^lx and TY = 2^ly (TZ the rest of the
     * tile's elements): whole sectors along both runs against idle threads at the edges (48 =
     * 3 x 16, not 2 x 32, along x and, since v3, along y too: v2 took the longest TY, so a
     * 48 x 48 transpose ran 16 x 32 patches, a quarter of their threads idle).  TY from the
     * longest down: on a tie, v2's patch. */
    double best = INFINITY;
    int bx = 0, by = 0;
    for (int lx = 0; lx <= (lgx < lt ? lgx : lt); lx++)
        for (int ly = lgy < lt - lx ? lgy : lt - lx; ly >= 0; ly--) {
            double c;
            g->lx = lx;
            g->ly = ly;
            g->lz = lgz < lt - lx - ly ? lgz : lt - lx - ly;
            c = lean_cost(g, 1, esize, beta, len_log);
            if (c < best - 1e-9) {
                best = c;
                bx = lx;
                by = ly;
            }
        }
    g->lx = bx;
    g->ly = by;
    g->lz = lgz < lt - bx - by ? lgz : lt - bx - by;
}

static int64_t ceil_div64(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

/* Lean tiles of `trees` trees of a block (n elements each); out NULL: count only. */
static int64_t lean_fill(const lean_geom *g, int64_t src_off, int64_t dst_off, int trees, int64_t n,
                         int ws, pm_lean_tile *out)
{
    int rest[PM_MAX_RANK], nr = 0;
    const int64_t tx = (int64_t)1 << g->lx, ty = (int64_t)1 << g->ly, tz = (int64_t)1 << g->lz;
    const int64_t dx = g->dim[0], dy = g->ya < 0 ? 1 : g->dim[g->ya];
    const int64_t dz = g->za < 0 ? 1 : g->dim[g->za];
    const int64_t ssy = g->ya < 0 ? 0 : g->sst[g->ya], dsy = g->ya < 0 ? 0 : g->dst[g->ya];
    const int64_t ssz = g->za < 0 ? 0 : g->sst[g->za], dsz = g->za < 0 ? 0 : g->dst[g->za];
    int64_t cnt = 0;
    for (int k = 1; k < g->m; k++)
        if (k != g->ya && k != g->za)
            rest[nr++] = k;
    if (!out) {
        cnt = (int64_t)trees * ceil_div64(dx, tx) * ceil_div64(dy, ty) * ceil_div64(dz, tz);
        for (int r = 0; r < nr; r++)
            cnt *= g->dim[rest[r]];
        return cnt;
    }
    for (int tree = 0; tree < trees; tree++) {
        int64_t c[PM_MAX_RANK] = {0};
        for (;;) {
            int64_t so = src_off + tree * n, de = dst_off + tree * n;
            for (int r = 0; r < nr; r++) {
                so += c[r] * g->sst[rest[r]];
                de += c[r] * g->dst[rest[r]];
            }
            for (int64_t z = 0; z < dz; z += tz)
                for (int64_t y = 0; y < dy; y += ty)
                    for (int64_t x = 0; x < dx; x += tx) {
                        pm_lean_tile *t = &out[cnt++];
                        memset(t, 0, sizeof *t);
                        t->src = so + x * g->sst[0] + y * ssy + z * ssz;
                        t->dst = de + x + y * dsy + z * dsz;
                        t->sx = (int32_t)(g->copy ? ssy : g->sst[0]);
                        t->dy = (int32_t)dsy;
                        t->sz = (int32_t)ssz;
                        t->dz = (int32_t)dsz;
                        t->nx = (uint16_t)(dx - x < tx ? dx - x : tx);
                        t->ny = (uint16_t)(dy - y < ty ? dy - y : ty);
                        t->nz = (uint16_t)(dz - z < tz ? dz - z : tz);
                        t->info = g->lx | g->ly << 4 | g->lz << 8 | (g->copy ? PM_LEAN_COPY : 0) |
                                  (ws ? PM_LEAN_WS : 0);
                    }
            int r = 0;
            while (r < nr && ++c[r] == g->dim[rest[r]])
                c[r++] = 0;
            if (r == nr)
                break;
        }
    }
    return cnt;
}

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* The alignment in bytes (at most a sector) of the runs along axis `run` of a lean block: the
 * gcd of every other axis's stride and, where the axis has more than one tile, the tile's
 * extent along it (the block's offset is not known here and counts as aligned). */
static int run_align(const lean_geom *g, const int64_t *st, int run, int64_t ext, int esize)
{
    int64_t a = g->dim[run] > ext ? ext : 0;
    for (int k = 0; k < g->m; k++)
        if (k != run && g->dim[k] > 1)
            a = gcd64(a, st[k]);
    a = a > 0 ? a * esize : 32;
    return a >= 32 ? 32 : (int)a;
}

/* Lean tiles a CTA of a lean-only launch of `tiles` lean tiles (pm_tile_plan.lean_per). */
static int lean_per_of(int64_t tiles)
{
    int per = LEAN_PER;
    while (per > 1 && tiles < (int64_t)per * LEAN_MIN_CTAS)
        per /= 2;
    return per;
}

/* Predicted ns of a block (trees trees) on the lean path at tile length len_log. */
static double lean_cost(const lean_geom *g, int trees, int esize, int beta, int len_log)
{
    const double dx = (double)g->dim[0], dy = g->ya < 0 ? 1.0 : (double)g->dim[g->ya];
    const double dz = g->za < 0 ? 1.0 : (double)g->dim[g->za];
    const double ntx = ceil(dx / (1 << g->lx)), nty = ceil(dy / (1 << g->ly));
    const double ntz = ceil(dz / (1 << g->lz));
    const double ex = dx / ntx, ey = dy / nty, ez = dz / ntz; /* mean extents of a tile */
    const int warps = 1 << len_log;
    /* Runs start where the strides and the tile origins put them: a run that starts on a
     * sector boundary touches no extra sector (v2.0 charged every run as if it started at a
     * random element, which made short runs, hence short tiles, look 10-40% dearer). */
    const int aw = run_align(g, g->dst, 0, (int64_t)1 << g->lx, esize);
    const int ar = g->copy ? run_align(g, g->sst, 0, (int64_t)1 << g->lx, esize)
                           : run_align(g, g->sst, g->ya, (int64_t)1 << g->ly, esize);
    double tiles = (double)lean_fill(g, 0, 0, trees, 0, 0, NULL);
    double rd = ez * (g->copy ? ey * sectors(ex * esize, ar) : ex * sectors(ey * esize, ar));
    double wr = ez * ey * sectors(ex * esize, aw) * (beta ? 2 : 1);
    double runs = ez * ((g->copy ? ey : ex) + ey * (beta ? 2 : 1));
    /* A transpose tile's barrier holds all its warps until the slowest has loaded: the wait
     * grows with its warps (~log2) and idles all of them (a copy tile has no barrier). */
    return (len_log == 0 ? LEAN_32_SLOWDOWN : 1.0) * tiles *
           ((rd + wr) * NS_PER_SECTOR + runs * NS_PER_RUN + NS_PER_LEAN_TILE +
            (32 << len_log) * NS_PER_THREAD +
            (g->copy ? 0.0 : NS_PER_SYNC + NS_PER_WARP_WAIT * warps * len_log));
}

/* A block's best cost at tile length len_log and whether the lean path gives it: abelian
 * blocks and extracts go lean unless the general tile is cheaper (tiny blocks whose lean
 * tiles would be mostly idle); recoupling blocks go on direct tiles (*direct) where those,
 * chain included, are cheaper than the general tiles (with direct_ok).  *chain: the latency
 * of one of its tiles beyond the launch (ns; 0 for a lean tile), of which a launch takes at
 * least the longest (pm_plan_tiles). */
static double block_cost(const pm_problem *p, const pm_block *b, int extract, int len_log,
                         int direct_ok, int *lean, int *direct, double *chain)
{
    geom g;
    int lg[PM_MAX_RANK], lr, log_p = 0;
    double general;
    pm_block v;
    merge_block(b, &v);
    geom_of(p, &v, extract, &g);
    general = best_shape(&g, len_log, extract || pm_is_unique(b), lg, &lr);
    *lean = extract; /* the general tiles do not write the workspace */
    *direct = 0;
    for (int k = 0; k < g.rank; k++)
        log_p += lg[k];
    /* The general tile's chain: the first round, and each further gather round exposes a
     * dependent load round trip and a barrier. */
    *chain =
        NS_GEN_CHAIN + (g.beta ? NS_GEN_CHAIN_BETA : 0.0) +
        (g.esize == 8 ? NS_GEN_CHAIN_F64 : 0.0) +
        ((g.cols + chunk_of(g.cols, log_p, len_log) - 1) / chunk_of(g.cols, log_p, len_log) - 1) *
            NS_PER_ROUND;
    if (extract || pm_is_unique(b)) {
        lean_geom lgm;
        double c;
        lean_geom_of(b, p->esize, !extract && p->beta != 0.0, len_log, &lgm);
        c = lean_cost(&lgm, extract ? b->cols : 1, p->esize, !extract && p->beta != 0.0, len_log);
        /* With direct tiles (the model since run 8), a general tile's chain counts against it:
         * one tiny abelian block on a general tile would set the launch's time. */
        if (extract || c <= GENERAL_SLOWDOWN * general + (direct_ok ? *chain : 0.0)) {
            *lean = 1;
            *chain = 0.0;
            return c;
        }
    }
    if (direct_ok && direct_fits(b)) {
        double ch, d = direct_cost(&g, len_log, &ch);
        if (d + ch < general + *chain) {
            *direct = 1;
            *chain = ch;
            return d;
        }
    }
    return general;
}

/* A launch takes at least its longest tile's chain; where the tiles are few (one wave) this,
 * not the sum of their costs, is the time. */
static double chain_ns(double sum, double chain)
{
    return sum > chain ? sum : chain;
}

/* v6: CTAs of the general instance the SMs hold at once at tile length len_log. */
static int64_t gen_slots(int len_log)
{
    int64_t per_sm = (65536 / (GEN_REGS * 32)) >> len_log;
    per_sm = per_sm < 1 ? 1 : per_sm > MAX_CTAS_SM ? MAX_CTAS_SM : per_sm;
    return per_sm * N_SMS;
}

/* v6: what a launch of gen general (or direct) tiles, scheduled first, and lean lean tiles
 * adds to its chain where the general tiles fit in one wave but the lean tiles do not all fit
 * beside them: the ones left wait for a slot, which a general tile holds with the odds of its
 * share of the slots (many_small's +0.8 us at 64 threads: 1080 direct tiles of 1188 slots;
 * mixed f64 at scale 0.1: 16 of 1188, no cost).  Several waves of general tiles (large_u at
 * scale 1) overlap their chains with the sum of costs: nothing added, as before (the model's
 * chains were fitted on one wave; run 10 measured nothing else). */
static double wave_wait_ns(int64_t gen, int64_t lean, int len_log, double chain)
{
    const int64_t slots = gen_slots(len_log);
    if (gen > slots || gen + lean <= slots)
        return 0.0;
    return (double)gen / (double)slots * (chain > NS_SLOT_WAIT ? chain : NS_SLOT_WAIT);
}

/* v6: the time of a plan at a fixed length from its general tiles' summed cost and longest
 * chain and its lean tiles' summed cost: one launch (the lean tiles slowed on the general
 * instance, the waits for slots) or, with general and lean tiles both there,
 * two (the lean-only launch after the general one); sets t->split and t->predicted_ns. */
static void split_choice(pm_tile_plan *t, double gen_sum, double lean_sum, double chain)
{
    double one, two;
    int slow;
    if (t->tiles == 0) { /* lean-only: as before */
        t->split = 0;
        t->predicted_ns = lean_sum + (t->lean_tiles ? PM_LAUNCH_NS : 0.0);
        return;
    }
    slow = t->tiles + t->lean_tiles >= SLOW_WAVES * gen_slots(t->len_log);
    one = chain_ns(gen_sum + (slow ? GEN_LEAN_SLOWDOWN : 1.0) * lean_sum, chain) +
          wave_wait_ns(t->tiles, t->lean_tiles, t->len_log, chain) + PM_LAUNCH_NS;
    two = chain_ns(gen_sum, chain) + PM_LAUNCH_NS + lean_sum + NS_SECOND_LAUNCH;
    t->split = t->lean_tiles > 0 && two < one;
    t->predicted_ns = t->split ? two : one;
}

/* The records of block bi's general tiles: groups of 2^log_r destination trees, and within a
 * group the regions with destination axis 0 fastest (neighbouring CTAs write neighbouring
 * memory). */
static void gen_fill(const pm_tile_block *t, int bi, pm_gen_tile *out)
{
    const int32_t r = 1 << t->log_r;
    int64_t at = 0;
    for (int32_t i0 = 0; i0 < t->rows; i0 += r) {
        int32_t c[PM_MAX_RANK] = {0};
        for (;;) {
            pm_gen_tile *g = &out[at++];
            int64_t so = 0, de = 0;
            memset(g, 0, sizeof *g);
            for (int k = 0; k < t->rank; k++) {
                const int32_t org = c[k] << t->lg[k], e = t->ddim[k] - org;
                so += (int64_t)org * t->sstr[k];
                de += (int64_t)org * t->dstr[k];
                g->rem[k] = (uint16_t)(e < (1 << t->lg[k]) ? e : (1 << t->lg[k]));
            }
            g->src = t->src_off + so;
            g->dst = t->dst_off + (int64_t)i0 * t->n + de;
            g->u = t->u_off + (int64_t)i0 * t->cols;
            g->blk = bi;
            g->nr = t->rows - i0 < r ? t->rows - i0 : r;
            int k = 0;
            while (k < t->rank && ++c[k] == t->nt[k])
                c[k++] = 0;
            if (k == t->rank)
                break;
        }
    }
}

/* The records of direct block bi at tile length len_log (permute.h, PM_FLAG_DIRECT): runs of
 * threads x PM_DIRECT_EPT consecutive destination elements (tree-major); out NULL: count
 * only.  Returns how many. */
static int64_t direct_fill(const pm_tile_block *t, int bi, int len_log, pm_gen_tile *out)
{
    const int32_t per = (32 << len_log) * PM_DIRECT_EPT, total = t->rows * t->n;
    int64_t at = 0;
    for (int32_t e0 = 0; e0 < total; e0 += per) {
        pm_gen_tile *g = out ? &out[at] : NULL;
        at++;
        if (!g)
            continue;
        memset(g, 0, sizeof *g);
        g->src = t->src_off;
        g->dst = t->dst_off + e0;
        g->u = t->u_off + (int64_t)(e0 / t->n) * t->cols;
        g->blk = bi;
        g->nr = pm_direct_nr(total - e0 < per ? total - e0 : per, t->cols, e0 % t->n, t->rank);
        for (int k = 0; k < t->rank; k++)
            g->rem[k] = (uint16_t)(t->ddim[k] | t->sstr[k] << 8);
    }
    return at;
}

/* Schedule order: blocks with more source trees first (their tiles run longest). */
typedef struct order {
    int idx, cols;
} order;

static int by_cols(const void *a, const void *b)
{
    const order *x = a, *y = b;
    if (x->cols != y->cols)
        return y->cols - x->cols;
    return x->idx - y->idx;
}

int pm_plan_tiles(const pm_problem *p, const unsigned char *which, const int64_t *ws_off,
                  int len_log, pm_tile_plan *out, char *msg)
{
    return pm_plan_tiles_direct(p, which, ws_off, len_log, 1, out, msg);
}

int pm_plan_tiles_direct(const pm_problem *p, const unsigned char *which, const int64_t *ws_off,
                         int len_log, int opts, pm_tile_plan *out, char *msg)
{
    order *ord = NULL;
    unsigned char *lean_of = NULL; /* per block: 1 lean, 2 direct, 0 general tiles */
    int n = 0, rc = KB_OK, any_direct = 0;
    const int len_arg = len_log, direct_ok = opts & PM_PLAN_DIRECT, v6 = opts & PM_PLAN_SPLIT;
    double chain = 0.0, lean_sum = 0.0, gen_sum = 0.0;
    memset(out, 0, sizeof *out);
    if (v6 && len_log < 0) {
        /* v6: the whole plan at every length (waves and the split depend on the tile counts),
         * the least predicted time kept; among equal times the least work. */
        for (int l = 0; l < PM_N_LENGTHS; l++) {
            pm_tile_plan t;
            rc = pm_plan_tiles_direct(p, which, ws_off, l, opts, &t, msg);
            if (rc != KB_OK) {
                if (l > 0)
                    pm_tile_plan_free(out);
                return rc;
            }
            if (l == 0 || t.predicted_ns < out->predicted_ns - 1e-6 ||
                (t.predicted_ns < out->predicted_ns + 1e-6 && t.work_ns < out->work_ns)) {
                if (l > 0)
                    pm_tile_plan_free(out);
                *out = t;
            } else {
                pm_tile_plan_free(&t);
            }
        }
        return KB_OK;
    }
    ord = malloc((size_t)(p->n_blocks ? p->n_blocks : 1) * sizeof *ord);
    if (!ord)
        goto nomem;
    for (int i = 0; i < p->n_blocks; i++)
        if (!which || which[i]) {
            int extract = which && which[i] == 2;
            ord[n].idx = i;
            ord[n].cols = extract ? 1 : p->blocks[i].cols;
            n++;
        }
    qsort(ord, (size_t)n, sizeof *ord, by_cols);
    if (len_log < 0) { /* the tile length of least total cost */
        double best = INFINITY, best_sum = INFINITY;
        for (int l = 0; l < PM_N_LENGTHS; l++) {
            double total = 0.0, longest = 0.0, sum;
            for (int i = 0; i < n; i++) {
                int lean, direct;
                double ch;
                total += block_cost(p, &p->blocks[ord[i].idx], which && which[ord[i].idx] == 2, l,
                                    direct_ok, &lean, &direct, &ch);
                longest = ch > longest ? ch : longest;
            }
            sum = total;
            total = chain_ns(total, longest);
            /* Where the chain sets the time at several lengths, the least work among them. */
            if (total < best - 1e-6 || (total < best + 1e-6 && sum < best_sum)) {
                best = total;
                best_sum = sum;
                len_log = l;
            }
        }
    }
    out->len_log = len_log;
    out->n_blocks = n;
    out->blk = calloc((size_t)(n ? n : 1), sizeof *out->blk);
    out->begin = calloc((size_t)n + 1, sizeof *out->begin);
    if (!out->blk || !out->begin)
        goto nomem;
    /* The lean blocks first (counted, then filled), the general ones in schedule order. */
    lean_of = calloc((size_t)(n ? n : 1), 1);
    if (!lean_of)
        goto nomem;
    for (int i = 0; i < n; i++) {
        const pm_block *b = &p->blocks[ord[i].idx];
        int extract = which && which[ord[i].idx] == 2, lean, direct;
        double ch, c = block_cost(p, b, extract, len_log, direct_ok, &lean, &direct, &ch);
        lean_of[i] = (unsigned char)(lean ? 1 : direct ? 2 : 0);
        if (lean) {
            lean_geom lgm;
            lean_geom_of(b, p->esize, !extract && p->beta != 0.0, len_log, &lgm);
            lean_sum += c;
            out->lean_tiles += lean_fill(&lgm, 0, 0, extract ? b->cols : 1, 0, 0, NULL);
            out->n_lean_blocks++;
            size_t sm = ((size_t)1 << (lgm.lx + lgm.lz)) * (((size_t)1 << lgm.ly) + 1);
            if (!lgm.copy && sm > out->smem_elems)
                out->smem_elems = sm;
        }
    }
    if (out->lean_tiles >= INT32_MAX) {
        kb_msgf(msg, "over 2^31 tiles in one launch");
        rc = KB_SKIP;
        goto fail;
    }
    out->lean = malloc((size_t)(out->lean_tiles ? out->lean_tiles : 1) * sizeof *out->lean);
    if (!out->lean)
        goto nomem;
    for (int i = 0, j = 0; i < n; i++) {
        const pm_block *b = &p->blocks[ord[i].idx];
        int extract = which && which[ord[i].idx] == 2;
        lean_geom lgm;
        if (lean_of[i] != 1)
            continue;
        lean_geom_of(b, p->esize, !extract && p->beta != 0.0, len_log, &lgm);
        j += (int)lean_fill(&lgm, b->src_off, extract ? ws_off[ord[i].idx] : b->dst_off,
                            extract ? b->cols : 1, b->n, extract, out->lean + j);
    }
    out->n_blocks = 0;
    for (int i = 0, k = 0; i < n; i++) {
        const pm_block *b = &p->blocks[ord[i].idx];
        int lg[PM_MAX_RANK] = {0}, lr = 0, lean, direct;
        double ch;
        geom g;
        pm_block v;
        if (lean_of[i] == 1)
            continue;
        pm_tile_block *t = &out->blk[k++];
        out->n_blocks = k;
        merge_block(b, &v);
        geom_of(p, &v, 0, &g);
        gen_sum += block_cost(p, b, 0, len_log, direct_ok, &lean, &direct, &ch);
        chain = ch > chain ? ch : chain;
        if (lean_of[i] == 0)
            best_shape(&g, len_log, pm_is_unique(b), lg, &lr);
        fill_tile(p, &v, &g, lg, lr, len_log, b->dst_off, t);
        int64_t tiles = (int64_t)t->n_sp * ((t->rows + (1 << t->log_r) - 1) >> t->log_r);
        if (lean_of[i] == 2) { /* direct: no shared memory */
            any_direct = 1;
            t->flags |= PM_FLAG_DIRECT;
            t->chunk = 0;
            tiles = direct_fill(t, k - 1, len_log, NULL);
            out->begin[k - 1] = (int32_t)out->tiles;
            out->tiles += tiles;
            continue;
        }
        if (out->tiles + tiles >= INT32_MAX) {
            kb_msgf(msg, "over 2^31 tiles in one launch");
            rc = KB_SKIP;
            goto fail;
        }
        out->begin[k - 1] = (int32_t)out->tiles;
        out->tiles += tiles;
        size_t p_el = (size_t)1 << t->log_p;
        size_t smem = (size_t)t->chunk * (p_el + (p_el >> t->pad_shift));
        if (smem > out->smem_elems)
            out->smem_elems = smem;
    }
    n = out->n_blocks;
    out->begin[n] = (int32_t)out->tiles;
    if (out->tiles + out->lean_tiles >= INT32_MAX) {
        kb_msgf(msg, "over 2^31 tiles in one launch");
        rc = KB_SKIP;
        goto fail;
    }
    out->gen = malloc((size_t)(out->tiles ? out->tiles : 1) * sizeof *out->gen);
    if (!out->gen)
        goto nomem;
    for (int i = 0; i < n; i++)
        if (out->blk[i].flags & PM_FLAG_DIRECT)
            direct_fill(&out->blk[i], i, len_log, out->gen + out->begin[i]);
        else
            gen_fill(&out->blk[i], i, out->gen + out->begin[i]);
    out->work_ns = gen_sum + lean_sum;
    if (v6) {
        split_choice(out, gen_sum, lean_sum, chain);
    } else {
        out->predicted_ns = chain_ns(out->work_ns, chain);
        if (out->tiles + out->lean_tiles)
            out->predicted_ns += PM_LAUNCH_NS;
    }
    /* v4 where the plan is lean tiles only, unless they are too few to fill the SMs; a split
     * plan's lean launch keeps v2's tile, one a CTA (run 16, mixed at scale 1: 4-8% faster
     * than v4 in all four configurations, either way of launching the split). */
    out->lean_per = out->tiles == 0 && !out->split ? lean_per_of(out->lean_tiles) : 0;
    out->lean_vec = out->tiles == 0 && !out->split && out->lean_tiles >= LEAN_VEC_MIN_TILES;
    free(ord);
    free(lean_of);
    if (any_direct) {
        /* Each block chose direct tiles by their cost plus chain against the general tile's;
         * where the launch is not one wave of chains (the sum of costs is the time), the
         * plan without them may be cheaper: keep the cheaper of the two. */
        pm_tile_plan alt;
        rc = pm_plan_tiles_direct(p, which, ws_off, len_arg, opts & ~PM_PLAN_DIRECT, &alt, msg);
        if (rc != KB_OK) {
            pm_tile_plan_free(out);
            return rc;
        }
        if (alt.predicted_ns < out->predicted_ns) {
            pm_tile_plan_free(out);
            *out = alt;
        } else {
            pm_tile_plan_free(&alt);
        }
    }
    return KB_OK;
nomem:
    kb_msgf(msg, "out of host memory planning tiles");
    rc = KB_NOMEM;
fail:
    free(ord);
    free(lean_of);
    pm_tile_plan_free(out);
    return rc;
}

void pm_tile_plan_free(pm_tile_plan *t)
{
    free(t->lean);
    free(t->blk);
    free(t->begin);
    free(t->gen);
    memset(t, 0, sizeof *t);
}

/* The per-element descriptor of block b (also the fused kernel's). */
static void elem_of(const pm_block *b, pm_elem_block *e)
{
    int32_t st[PM_MAX_RANK], acc = 1;
    memset(e, 0, sizeof *e);
    e->src_off = b->src_off;
    e->dst_off = b->dst_off;
    e->u_off = b->u_off;
    e->n = (int32_t)b->n;
    e->rows = b->rows;
    e->cols = b->cols;
    e->rank = b->rank;
    for (int q = 0; q < b->rank; q++) {
        st[q] = acc;
        acc *= b->dims[q];
    }
    for (int k = 0; k < b->rank; k++) {
        e->ddim[k] = b->dims[b->perm[k]];
        e->sstr[k] = st[b->perm[k]];
    }
}

int pm_plan_elems(const pm_problem *p, int unique, pm_elem_plan *out, char *msg)
{
    int n = 0;
    int64_t ctas = 0;
    memset(out, 0, sizeof *out);
    out->blk = calloc((size_t)(p->n_blocks ? p->n_blocks : 1), sizeof *out->blk);
    out->begin = calloc((size_t)p->n_blocks + 1, sizeof *out->begin);
    if (!out->blk || !out->begin) {
        pm_elem_plan_free(out);
        kb_msgf(msg, "out of host memory planning the per-element kernels");
        return KB_NOMEM;
    }
    for (int i = 0; i < p->n_blocks; i++) {
        const pm_block *b = &p->blocks[i];
        if (pm_is_unique(b) != !!unique)
            continue;
        elem_of(b, &out->blk[n]);
        out->begin[n] = (int32_t)ctas;
        ctas += (b->n * b->rows + PM_ELEM_THREADS - 1) / PM_ELEM_THREADS;
        if (ctas >= INT32_MAX) {
            pm_elem_plan_free(out);
            kb_msgf(msg, "over 2^31 CTAs in one launch");
            return KB_SKIP;
        }
        n++;
    }
    out->n_blocks = n;
    out->begin[n] = (int32_t)ctas;
    out->owner = malloc((size_t)(ctas ? ctas : 1) * sizeof *out->owner);
    if (!out->owner) {
        pm_elem_plan_free(out);
        kb_msgf(msg, "out of host memory planning the per-element kernels");
        return KB_NOMEM;
    }
    for (int i = 0; i < n; i++)
        for (int32_t t = out->begin[i]; t < out->begin[i + 1]; t++)
            out->owner[t] = i;
    return KB_OK;
}

void pm_elem_plan_free(pm_elem_plan *e)
{
    free(e->blk);
    free(e->begin);
    free(e->owner);
    memset(e, 0, sizeof *e);
}

/* ---- the fused kernel: cost, choice and plan ------------------------------------------------ */

/* Rate of the fused kernel over its padded tiles, as auto runs it (fused_mma, the product on
 * the FP64 tensor cores), calibrated on large_u at scale 1 (session 6): float32 (the cp.async
 * ring) 16.1 µs, float64 22.5 µs in runs 23-29, less the launch and the tiles' share (2.73 µs),
 * for 367 padded MFLOP.  Session 3's first guess (38 / 19 TFLOP/s, for the FMA kernels) put
 * float32 at 1.30x under.  The FMA fills (variants fused, fused_async) run slower than this
 * model (large_u float32 18.5-21.2 µs, float64 39.5-40.4). */
#define FUSED_F32_FLOP_PER_NS 27500.0
#define FUSED_F64_FLOP_PER_NS 19000.0
#define NS_PER_FUSED_TILE 1.0 /* a tile's prologue, descriptor and epilogue, whole GPU */

static int64_t fused_tiles(const pm_block *b)
{
    return ((b->rows + PM_FUSED_BM - 1) / PM_FUSED_BM) * ((b->n + PM_FUSED_BN - 1) / PM_FUSED_BN);
}

/* Whether the fused kernel's 32-bit offsets (within a tree, into U) hold block b. */
static int fused_fits(const pm_block *b)
{
    return b->n <= INT32_MAX - PM_FUSED_BN && (int64_t)b->rows * b->n <= INT32_MAX &&
           (int64_t)(b->rows + PM_FUSED_BM) * b->cols <= INT32_MAX;
}

double pm_fused_cost(const pm_problem *p, const pm_block *b)
{
    /* The FMAs issued count: every tile runs 128 columns over the source trees in steps of 4
     * (the inner unroll), on the trees rounded up to a warp's 16 (warps past the block skip);
     * DRAM sees the source, U, the destination (and cin) once, the re-reads of the source by
     * the row tiles of a block hitting L2. */
    const double tiles = (double)fused_tiles(b);
    const double k4 = (double)((b->cols + 3) / 4 * 4), rows16 = (double)((b->rows + 15) / 16 * 16);
    const double n128 = (double)((b->n + PM_FUSED_BN - 1) / PM_FUSED_BN * PM_FUSED_BN);
    const double flops = 2.0 * rows16 * n128 * k4;
    const double rate = p->esize == 4 ? FUSED_F32_FLOP_PER_NS : FUSED_F64_FLOP_PER_NS;
    const double bytes = (double)p->esize * ((double)b->n * b->cols +
                                             (double)b->n * b->rows * (p->beta != 0.0 ? 2 : 1) +
                                             (double)b->rows * b->cols);
    return fmax(flops / rate, bytes * NS_PER_BYTE) + tiles * NS_PER_FUSED_TILE;
}

int pm_choose_path(const pm_problem *p, const pm_block *b, int len_log)
{
    double tiled, gemm, fused;
    if (pm_is_unique(b))
        return 1;
    tiled = pm_tiled_cost(p, b, len_log, NULL);
    gemm = pm_gemm_cost(p, b);
    fused = fused_fits(b) ? pm_fused_cost(p, b) : INFINITY;
    if (fused < tiled && fused <= gemm)
        return 3;
    return gemm < tiled ? 2 : 1;
}

typedef struct fused_col {
    int32_t soff, c;
} fused_col;

static int by_soff(const void *a, const void *b)
{
    const fused_col *x = a, *y = b;
    if (x->soff != y->soff) /* -1 (past the block) last */
        return x->soff < 0 ? 1 : y->soff < 0 ? -1 : (x->soff > y->soff) - (x->soff < y->soff);
    return x->c - y->c;
}

/* The column tables of block b at tab: its destination elements in boxes of up to
 * PM_FUSED_RX destination-consecutive (the destination axes before the one holding source
 * axis 0) x BN / RX source-consecutive elements, destination order inside a box; each tile's
 * gather sorted by source offset.  `list` has room for n elements. */
static void fused_tables(const pm_block *b, pm_fused_plan *f, int64_t tab, int32_t *list)
{
    pm_elem_block e;
    int32_t x_len = 1, m = 0, n = (int32_t)b->n, len = 0;
    elem_of(b, &e);
    while (m < b->rank && b->perm[m] != 0)
        x_len *= e.ddim[m++];
    const int32_t y_len = n / x_len, rx = x_len < PM_FUSED_RX ? x_len : PM_FUSED_RX;
    const int32_t ry = PM_FUSED_BN / rx;
    for (int32_t y0 = 0; y0 < y_len; y0 += ry)
        for (int32_t x0 = 0; x0 < x_len; x0 += rx)
            for (int32_t y = y0; y < y0 + ry && y < y_len; y++)
                for (int32_t x = x0; x < x0 + rx && x < x_len; x++)
                    list[len++] = x + x_len * y;
    for (int32_t c0 = 0; c0 < n; c0 += PM_FUSED_BN) {
        fused_col col[PM_FUSED_BN];
        for (int32_t c = 0; c < PM_FUSED_BN; c++) {
            const int32_t el = c0 + c < n ? list[c0 + c] : -1;
            f->dcol[tab + c0 + c] = el;
            col[c].soff = el >= 0 ? pm_elem_src_off(&e, el) : -1;
            col[c].c = c;
        }
        qsort(col, PM_FUSED_BN, sizeof col[0], by_soff);
        for (int32_t t = 0; t < PM_FUSED_BN; t++) {
            f->gather[tab + c0 + t].soff = col[t].soff;
            f->gather[tab + c0 + t].spos = pm_fused_pos(col[t].c);
        }
    }
}

int pm_plan_fused(const pm_problem *p, const unsigned char *which, pm_fused_plan *out, char *msg)
{
    order *ord = NULL;
    int32_t *list = NULL;
    int n = 0;
    int64_t items = 0, tab = 0, nmax = 1;
    memset(out, 0, sizeof *out);
    ord = malloc((size_t)(p->n_blocks ? p->n_blocks : 1) * sizeof *ord);
    if (!ord)
        goto nomem;
    for (int i = 0; i < p->n_blocks; i++) {
        const pm_block *b = &p->blocks[i];
        if (which ? which[i] != 3 : pm_is_unique(b))
            continue;
        if (!fused_fits(b)) {
            kb_msgf(msg,
                    "block %d: %lld elements x %d x %d trees is over the fused kernel's 32-bit "
                    "offsets",
                    i, (long long)b->n, b->rows, b->cols);
            free(ord);
            return KB_SKIP;
        }
        ord[n].idx = i;
        ord[n].cols = b->cols;
        items += fused_tiles(b);
        tab += (b->n + PM_FUSED_BN - 1) / PM_FUSED_BN * PM_FUSED_BN;
        nmax = b->n > nmax ? b->n : nmax;
        n++;
    }
    if (items >= INT32_MAX / PM_FUSED_BN || tab >= INT32_MAX) {
        kb_msgf(msg, "over 2^31 fused tiles or table entries in one launch");
        free(ord);
        return KB_SKIP;
    }
    qsort(ord, (size_t)n, sizeof *ord, by_cols); /* the longest tiles first */
    out->blk = calloc((size_t)(n ? n : 1), sizeof *out->blk);
    out->item = calloc((size_t)(items ? items : 1), sizeof *out->item);
    out->gather = calloc((size_t)(tab ? tab : 1), sizeof *out->gather);
    out->dcol = calloc((size_t)(tab ? tab : 1), sizeof *out->dcol);
    out->igather = calloc((size_t)(items ? items : 1) * PM_FUSED_BN, sizeof *out->igather);
    out->idcol = calloc((size_t)(items ? items : 1) * PM_FUSED_BN, sizeof *out->idcol);
    list = malloc((size_t)nmax * sizeof *list);
    if (!out->blk || !out->item || !out->gather || !out->dcol || !out->igather || !out->idcol ||
        !list)
        goto nomem;
    out->n_blocks = n;
    out->tab_len = tab;
    tab = 0;
    for (int i = 0; i < n; i++) {
        const pm_block *b = &p->blocks[ord[i].idx];
        pm_fused_block *fb = &out->blk[i];
        fb->src_off = b->src_off;
        fb->dst_off = b->dst_off;
        fb->u_off = b->u_off;
        fb->tab = tab;
        fb->n = (int32_t)b->n;
        fb->rows = b->rows;
        fb->cols = b->cols;
        fused_tables(b, out, tab, list);
        tab += (b->n + PM_FUSED_BN - 1) / PM_FUSED_BN * PM_FUSED_BN;
        out->predicted_ns += pm_fused_cost(p, b);
        for (int32_t r = 0; r < b->rows; r += PM_FUSED_BM)
            for (int32_t e = 0; e < (int32_t)b->n; e += PM_FUSED_BN) {
                const int64_t x = out->items++;
                pm_fused_item *it = &out->item[x];
                it->src_off = b->src_off;
                it->dst_off = b->dst_off;
                it->u_off = b->u_off;
                it->n = fb->n;
                it->rows = fb->rows;
                it->cols = fb->cols;
                it->row0 = r;
                it->elem0 = e;
                it->blk = i;
                memcpy(&out->igather[x * PM_FUSED_BN], &out->gather[fb->tab + e],
                       PM_FUSED_BN * sizeof *out->igather);
                memcpy(&out->idcol[x * PM_FUSED_BN], &out->dcol[fb->tab + e],
                       PM_FUSED_BN * sizeof *out->idcol);
            }
    }
    if (n)
        out->predicted_ns += PM_LAUNCH_NS;
    free(ord);
    free(list);
    return KB_OK;
nomem:
    kb_msgf(msg, "out of host memory planning the fused kernel");
    free(ord);
    free(list);
    pm_fused_plan_free(out);
    return KB_NOMEM;
}

void pm_fused_plan_free(pm_fused_plan *f)
{
    free(f->blk);
    free(f->gather);
    free(f->dcol);
    free(f->item);
    free(f->igather);
    free(f->idcol);
    memset(f, 0, sizeof *f);
}
