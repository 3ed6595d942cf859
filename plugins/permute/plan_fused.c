/* The permute plugin's fused kernel: its cost, the choice of each block's path (tiled, extract
 * + GEMM or fused) and the fused plan (work items, each tile's gather sorted by source
 * offset). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kbench/plugin.h"
#include "plan.h"

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
    pm_elem_of(b, &e);
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
    pm_order *ord = NULL;
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
    qsort(ord, (size_t)n, sizeof *ord, pm_by_cols); /* the longest tiles first */
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
