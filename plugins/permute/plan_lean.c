/* The permute plugin's lean tiles: a unique block (or an extract's trees) with its axes merged,
 * the patch (extents along x, y and z) of least predicted time, the tiles' records, and the
 * lean path's cost. */
#include <math.h>
#include <string.h>

#include "plan.h"

/* A lean tile's scheduling (its CTA is short and overlaps its neighbours': less than a
 * general tile's), and a transpose tile's warps' wait at its barrier on the slowest of them,
 * per warp and log2 of warps: both fitted to few_large's (two transposes) forced tile lengths
 * in gpu-run-4 (HISTORY.md, v2.1). */
#define NS_PER_LEAN_TILE 0.1
#define NS_PER_WARP_WAIT 0.05
/* A 32-thread lean tile: an SM holds at most 32 CTAs, so half the warps of the longer tiles
 * (and its kernel takes 52-64 registers, not 32-42): its memory is less well hidden.  Fitted
 * to few_large at tile_len 32 in gpu-run-4 (189 µs, the model without it 162). */
#define LEAN_32_SLOWDOWN 1.15

static void lean_merge(const pm_block *b, pm_lean_geom *g)
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
void pm_merge_block(const pm_block *b, pm_block *v)
{
    pm_lean_geom g;
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
    return pm_log2_ceil(d < (1 << 20) ? (int)d : (1 << 20));
}

void pm_lean_geom_of(const pm_block *b, int esize, int beta, int len_log, pm_lean_geom *g)
{
    int lt = 5 + len_log + pm_log2_ceil(PM_LEAN_EPT(esize)), lgx, lgy, lgz;
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
            c = pm_lean_cost(g, 1, esize, beta, len_log);
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
int64_t pm_lean_fill(const pm_lean_geom *g, int64_t src_off, int64_t dst_off, int trees, int64_t n,
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
static int run_align(const pm_lean_geom *g, const int64_t *st, int run, int64_t ext, int esize)
{
    int64_t a = g->dim[run] > ext ? ext : 0;
    for (int k = 0; k < g->m; k++)
        if (k != run && g->dim[k] > 1)
            a = gcd64(a, st[k]);
    a = a > 0 ? a * esize : 32;
    return a >= 32 ? 32 : (int)a;
}

/* Predicted ns of a block (trees trees) on the lean path at tile length len_log. */
double pm_lean_cost(const pm_lean_geom *g, int trees, int esize, int beta, int len_log)
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
    double tiles = (double)pm_lean_fill(g, 0, 0, trees, 0, 0, NULL);
    double rd = ez * (g->copy ? ey * pm_sectors(ex * esize, ar) : ex * pm_sectors(ey * esize, ar));
    double wr = ez * ey * pm_sectors(ex * esize, aw) * (beta ? 2 : 1);
    double runs = ez * ((g->copy ? ey : ex) + ey * (beta ? 2 : 1));
    /* A transpose tile's barrier holds all its warps until the slowest has loaded: the wait
     * grows with its warps (~log2) and idles all of them (a copy tile has no barrier). */
    return (len_log == 0 ? LEAN_32_SLOWDOWN : 1.0) * tiles *
           ((rd + wr) * NS_PER_SECTOR + runs * NS_PER_RUN + NS_PER_LEAN_TILE +
            (32 << len_log) * NS_PER_THREAD +
            (g->copy ? 0.0 : NS_PER_SYNC + NS_PER_WARP_WAIT * warps * len_log));
}
