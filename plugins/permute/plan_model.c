/* The permute plugin's cost model of the tiled kernel's general and direct tiles and of
 * extract + GEMM: the shape of a block's general tile (extents along every destination axis
 * and the number of destination trees per tile) of least predicted time, its descriptor, and
 * the predicted ns of a block on each path (the model's memory constants: plan.h). */
#include <math.h>
#include <string.h>

#include "plan.h"

#define NS_PER_FMA 0.0002        /* a recoupling FMA slot, its share of the reads (float32) */
#define NS_PER_COEF 0.001        /* one coefficient read per tile */
#define NS_PER_TILE 0.25         /* scheduling a tile */
#define GEMM_FLOP_PER_NS 30000.0 /* cuBLAS on mid-size problems: 30 TFLOP/s */
#define NS_PER_GEMM 500.0        /* each problem of a grouped GEMM */
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

void pm_geom_of(const pm_problem *p, const pm_block *b, int extract, pm_geom *g)
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

int pm_chunk_of(int cols, int log_p, int len_log)
{
    int c = (4 * (32 << len_log)) >> log_p;
    if (c < 1)
        c = 1;
    return c > cols ? cols : c;
}

/* Predicted ns of a block with tile extents 2^lg[k] and 2^log_r trees at tile length len_log. */
static double shape_cost(const pm_geom *g, const int *lg, int log_r, int len_log, int unique)
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
    double rd = tiles * g->cols * runs_s * pm_sectors(run_s * g->esize, g->esize);
    double wr = tiles * r_eff * runs_d * pm_sectors(run_d * g->esize, g->esize) * (g->beta ? 2 : 1);
    double runs = tiles * (g->cols * runs_s + r_eff * runs_d * (g->beta ? 2 : 1));
    double syncs = ceil((double)g->cols / pm_chunk_of(g->cols, log_p, len_log));
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
double pm_direct_cost(const pm_geom *g, int len_log, double *chain)
{
    double n = 1.0, elems, tiles;
    for (int k = 0; k < g->rank; k++)
        n *= g->ddim[k];
    elems = n * g->rows;
    tiles = ceil(elems / ((32 << len_log) * PM_DIRECT_EPT));
    *chain = NS_DIRECT_CHAIN + (g->esize == 8 ? NS_DIRECT_CHAIN_F64 : 0.0) +
             (double)((g->cols - 1) / PM_DIRECT_STEP) * NS_DIRECT_ROUND;
    return (g->rows * (g->cols + (g->beta ? 2 : 1)) * pm_sectors(n * g->esize, g->esize)) *
               NS_PER_SECTOR +
           tiles * (NS_PER_TILE + (32 << len_log) * NS_PER_THREAD) +
           elems * (NS_PER_DIRECT_ELEM + g->cols * NS_PER_DIRECT_PAIR * (g->esize / 4));
}

/* Whether a block may go on direct tiles: a recoupling block of at most two steps of source
 * trees (a longer chain of loads than that is the general tile's domain; the model's chain
 * for it is a guess) whose trees fit the record's 8-bit fields (permute.h). */
int pm_direct_fits(const pm_block *b)
{
    return !pm_is_unique(b) && b->cols <= 2 * PM_DIRECT_STEP && b->n <= PM_DIRECT_MAX_N &&
           b->n * b->rows < INT32_MAX / 2;
}

/* Whether a region of 2^log_p elements times 2^log_r trees fits the tile length: a thread
 * holds PM_GEN_EPP elements times PM_GEN_RB trees. */
static int fits(int log_p, int log_r, int len_log)
{
    return (log_p > 2 ? log_p - 2 : 0) + (log_r > 2 ? log_r - 2 : 0) <= 5 + len_log;
}

/* Greedy doubling of the extents (trees included), keeping the cheapest shape seen. */
double pm_best_shape(const pm_geom *g, int len_log, int unique, int *lg_out, int *log_r_out)
{
    int lg[PM_MAX_RANK] = {0}, log_r = 0, log_p = 0;
    int max_r = g->extract ? 0 : pm_log2_ceil(g->rows < PM_MAX_TREES ? g->rows : PM_MAX_TREES);
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
void pm_fill_tile(const pm_problem *p, const pm_block *b, const pm_geom *g, const int *lg,
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
    t->chunk = pm_chunk_of(g->cols, t->log_p, len_log);
    (void)p;
}

double pm_tiled_cost(const pm_problem *p, const pm_block *b, int len_log, pm_tile_block *shape)
{
    pm_geom g;
    int lg[PM_MAX_RANK], log_r;
    double c;
    pm_block v;
    pm_merge_block(b, &v);
    pm_geom_of(p, &v, 0, &g);
    c = pm_best_shape(&g, len_log, pm_is_unique(b), lg, &log_r);
    if (shape)
        pm_fill_tile(p, &v, &g, lg, log_r, len_log, b->dst_off, shape);
    if (pm_direct_fits(b)) { /* the cheaper of the two tile kinds (the launch's chain aside) */
        double ch, d = pm_direct_cost(&g, len_log, &ch);
        return d < c ? d : c;
    }
    return c;
}

double pm_gemm_cost(const pm_problem *p, const pm_block *b)
{
    pm_geom g;
    int lg[PM_MAX_RANK], log_r;
    double extract, flops = 2.0 * b->n * b->rows * b->cols, bytes;
    pm_geom_of(p, b, 1, &g);
    extract = pm_best_shape(&g, 3, 1, lg, &log_r);
    bytes = (double)p->esize * (b->n * b->cols + b->n * b->rows * (p->beta != 0.0 ? 4 : 1) +
                                (double)b->rows * b->cols);
    return extract + fmax(flops / GEMM_FLOP_PER_NS, bytes * NS_PER_BYTE) + NS_PER_GEMM;
}
