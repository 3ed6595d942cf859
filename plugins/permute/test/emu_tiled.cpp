/* Runs kernels/02_tiled.cu itself on the CPU (permute_tiled_emu, tests/emu), so the kernel's
 * own indexing, guards and barriers are checked.  Every kernel entry the plan can pick:
 * tiled<> with general and direct tiles (and lean tiles after them), split launches, tiled<>
 * lean-only (lean = 2), lean_pipe (lean = 3), lean_vec (lean = 4: vector and scalar tiles),
 * extracts into the GEMM workspace; float32 and float64, beta 0 and not, every tile length,
 * on every preset at small scale and on dense shapes (a scaled-down 48^4 reversal, ragged 2-D
 * transposes, copies, tiny patches, ranks 7 and 8).  Each result is checked as the plugin
 * checks it (pm_check against the double reference within its bound; out starts as NaN, so an
 * element nobody writes fails), and the run fails if a kind of tile or launch was never
 * exercised.  Exit status: 0 when every case verified.
 *   permute_tiled_emu [light]     light: fewer cases (the TSan build) */
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

#include <cuda_runtime_api.h>

#include "kbench/plugin.h"
#include "permute.h"
#include "spec.h"

static int cases, fails;
static bool tsan_light; /* TSan: fewer cases (every thread access is instrumented) */

/* What the runs exercised, from the plans they ran: each must be seen at least once. */
enum {
    COV_DIRECT,      /* direct tiles */
    COV_INTERIOR,    /* general tiles wholly inside their block */
    COV_EDGE,        /* general tiles cut by their block's edge */
    COV_LEAN_SCALAR, /* lean tiles on the scalar path */
    COV_VEC_COPY,    /* v4 vector tiles: copies */
    COV_VEC_T,       /* v4 vector tiles: transposes */
    COV_PIPE,        /* lean_pipe launches */
    COV_SPLIT,       /* split launches */
    COV_EXTRACT,     /* lean tiles into the GEMM workspace */
    COV_N
};
static const char *const cov_name[COV_N] = {
    "direct tiles",       "interior general tiles", "edge general tiles",
    "scalar lean tiles",  "v4 copy tiles",          "v4 transpose tiles",
    "lean_pipe launches", "split launches",         "extract tiles",
};
static long long coverage[COV_N];

/* Counts what plan tp makes the kernel run (02_tiled.cu's launch and lean_vec's test). */
static void count_coverage(const pm_tile_plan *tp, int esize)
{
    for (int64_t i = 0; i < tp->tiles; i++) {
        const pm_gen_tile *g = &tp->gen[i];
        const pm_tile_block *b = &tp->blk[g->blk];
        bool inside = true;
        if (g->nr < 0) {
            coverage[COV_DIRECT]++;
            continue;
        }
        for (int k = 0; k < b->rank; k++)
            inside &= g->rem[k] == 1 << b->lg[k];
        coverage[inside ? COV_INTERIOR : COV_EDGE]++;
    }
    const bool split = tp->split && tp->tiles > 0 && tp->lean_tiles > 0;
    const bool lean_only = tp->lean_tiles > 0 && (tp->tiles == 0 || split);
    coverage[COV_SPLIT] += split;
    coverage[COV_PIPE] += lean_only && !tp->lean_vec && tp->lean_per > 0;
    for (int64_t i = 0; i < tp->lean_tiles; i++) {
        const pm_lean_tile *t = &tp->lean[i];
        coverage[COV_EXTRACT] += (t->info & PM_LEAN_WS) != 0;
        if (lean_only && tp->lean_vec &&
            pm_lean_vec_ok(t->src, t->dst, t->sx, t->dy, t->sz, t->dz, t->nx, t->ny, t->nz, t->info,
                           esize))
            coverage[(t->info & PM_LEAN_COPY) ? COV_VEC_COPY : COV_VEC_T]++;
        else
            coverage[COV_LEAN_SCALAR]++;
    }
}

/* One launch of plan tp (lean: the plugin's parameter: 4 keeps the plan's lean_vec, 3 clears
 * it, 2 also lean_per), then the GEMM
 * of the extracted blocks on the host where via marks some, then the check. */
static void run(const char *name, const pm_problem *p, pm_tile_plan *tp, int lean,
                const unsigned char *via, const int64_t *ws_off, int64_t ws_elems)
{
    const int es = p->esize;
    if (lean != 4) /* the plugin's lean parameter (permute.c, plan_device) */
        tp->lean_vec = 0;
    if (lean == 2)
        tp->lean_per = 0;
    char *out = (char *)malloc((size_t)p->dst_elems * es);
    void *ws = ws_elems ? malloc((size_t)ws_elems * es) : NULL;
    memset(out, 0xff, (size_t)p->dst_elems * es); /* NaN: an element nobody writes fails */
    if (ws)
        memset(ws, 0xff, (size_t)ws_elems * es);
    count_coverage(tp, es);
    const int rc = pm_run_tiled(es, tp, tp->blk, tp->gen, tp->lean, p->src, p->cin, p->u, out, ws,
                                p->alpha, p->beta, NULL);
    for (int bi = 0; via && bi < p->n_blocks; bi++) { /* extract + GEMM: the GEMM part */
        const pm_block *b = &p->blocks[bi];
        if (via[bi] != 2)
            continue;
        for (int i = 0; i < b->rows; i++)
            for (int64_t e = 0; e < b->n; e++) {
                double acc = 0;
                for (int j = 0; j < b->cols; j++)
                    acc += pm_get(p->u, es, b->u_off + (int64_t)i * b->cols + j) *
                           pm_get(ws, es, ws_off[bi] + j * b->n + e);
                const int64_t d = b->dst_off + i * b->n + e;
                pm_set(out, es, d,
                       p->alpha * acc + (p->beta != 0 ? p->beta * pm_get(p->cin, es, d) : 0));
            }
    }
    int64_t bad = 0;
    const double err = pm_check(p, out, &bad);
    const bool ok = rc == 0 && err <= 1.0;
    cases++;
    fails += !ok;
    if (!ok || getenv("EMU_VERBOSE"))
        printf(
            "%-28s f%d beta %5.2f len %3d lean %d: %lld general, %lld lean tiles (per %d, vec %d, "
            "split %d), %zu smem elems: err/bound %.3g, %lld bad%s\n",
            name, 8 * es, p->beta, 32 << tp->len_log, lean, (long long)tp->tiles,
            (long long)tp->lean_tiles, tp->lean_per, tp->lean_vec, tp->split, tp->smem_elems, err,
            (long long)bad, ok ? "" : "  FAILED");
    free(ws);
    free(out);
}

/* Every plan of problem p: each tile length with direct tiles where the model wants them, the
 * model's length without direct tiles and with split launches (TSan: 256 threads and those
 * two only); lean = 4, 3 and 2 where a lean-only launch runs (tiles == 0, or split), and the
 * recoupling blocks as extracts (the GEMM variant). */
static void run_problem(const char *name, const pm_problem *p)
{
    char msg[KB_MSG_SIZE] = "";
    for (int len = 0; len <= PM_N_LENGTHS + 1; len++) { /* the model's choice is one of 0-3 */
        const int opts = len < PM_N_LENGTHS    ? PM_PLAN_DIRECT
                         : len == PM_N_LENGTHS ? 0
                                               : PM_PLAN_DIRECT | PM_PLAN_SPLIT;
        if (tsan_light && len != 3 && len < PM_N_LENGTHS)
            continue;
        for (int lean = 4; lean >= 2; lean--) {
            pm_tile_plan tp;
            if (pm_plan_tiles_direct(p, NULL, NULL, len < PM_N_LENGTHS ? len : -1, opts, &tp,
                                     msg) != KB_OK) {
                printf("%s: %s\n", name, msg);
                fails++;
                return;
            }
            /* split: the model splits only at scale (mixed at 1), so the emulation forces it
             * on a launch with both kinds of tiles (the records are the same; the lean launch
             * as the planner sets it: lean_vec, lean_per > 1 so lean_pipe pipelines); lean 3
             * and 2 differ from 4 only where a lean-only launch runs */
            if (len == PM_N_LENGTHS + 1 && !tp.split && tp.tiles > 0 && tp.lean_tiles > 0) {
                tp.split = 1;
                tp.lean_vec = 1;
                tp.lean_per = 2;
            }
            const bool alone = tp.lean_tiles > 0 && (tp.tiles == 0 || tp.split);
            if ((len <= PM_N_LENGTHS || tp.split) && (lean == 4 || alone))
                run(name, p, &tp, lean, NULL, NULL, 0);
            pm_tile_plan_free(&tp);
        }
    }
    unsigned char *via = (unsigned char *)calloc((size_t)p->n_blocks + 1, 1);
    int64_t *ws_off = (int64_t *)calloc((size_t)p->n_blocks + 1, sizeof *ws_off), ws = 0;
    for (int b = 0; b < p->n_blocks; b++) {
        via[b] = pm_is_unique(&p->blocks[b]) ? 1 : 2;
        if (via[b] == 2) {
            ws_off[b] = ws;
            ws += p->blocks[b].n * p->blocks[b].cols;
        }
    }
    if (ws) {
        pm_tile_plan tp;
        if (pm_plan_tiles(p, via, ws_off, -1, &tp, msg) != KB_OK) {
            printf("%s extracts: %s\n", name, msg);
            fails++;
        } else {
            run(name, p, &tp, 4, via, ws_off, ws);
            pm_tile_plan_free(&tp);
        }
    }
    free(via);
    free(ws_off);
}

/* alpha 1.5: the alpha product rounds too. */
static pm_spec spec_of(pm_preset preset, int esize, double beta, double scale)
{
    return pm_test_spec(preset, esize, 1.5, beta, scale);
}

static void run_spec(const pm_spec &s, const char *name, uint64_t seed)
{
    pm_problem p;
    char msg[KB_MSG_SIZE] = "";
    if (pm_generate(&s, seed, &p, msg) != KB_OK) {
        printf("%s: %s\n", name, msg);
        fails++;
        return;
    }
    run_problem(name, &p);
    pm_problem_free(&p);
}

/* A dense tensor of the given dims, permuted by perm. */
static void run_dense(std::initializer_list<int> dims, std::initializer_list<int64_t> perm,
                      int esize, double beta)
{
    pm_spec s = spec_of(PM_DENSE, esize, beta, 1.0);
    char name[64], msg[KB_MSG_SIZE] = "";
    int n = 0, k = 0;
    int64_t pv[PM_MAX_RANK];
    n += snprintf(name + n, sizeof name - (size_t)n, "dense ");
    for (int d : dims) {
        s.dims[s.n_dims++] = d;
        n += snprintf(name + n, sizeof name - (size_t)n, "%s%d", k++ ? "x" : "", d);
    }
    k = 0;
    for (int64_t q : perm)
        pv[k++] = q;
    n += snprintf(name + n, sizeof name - (size_t)n, " [");
    for (int i = 0; i < k; i++)
        n += snprintf(name + n, sizeof name - (size_t)n, "%s%lld", i ? "," : "", (long long)pv[i]);
    snprintf(name + n, sizeof name - (size_t)n, "]");
    if (pm_set_perm(pv, k, s.perm, &s.n_perm, msg) != KB_OK) {
        printf("%s: %s\n", name, msg);
        fails++;
        return;
    }
    run_spec(s, name, 11);
}

/* Ranks 8 and 7 (spec.h). */
static void run_ranks_7_and_8(int esize, double beta)
{
    char msg[KB_MSG_SIZE] = "";
    pm_spec s8, s7;
    if (pm_test_spec_rank8(esize, 1.5, beta, &s8, msg) != KB_OK ||
        pm_test_spec_rank7(esize, 1.5, beta, &s7, msg) != KB_OK) {
        printf("ranks 7 and 8: %s\n", msg);
        fails++;
        return;
    }
    run_spec(s8, "dense rank 8", 11);
    run_spec(s7, "custom rank 7", 13);
}

int main(int argc, char **argv)
{
    tsan_light = argc > 1 && strcmp(argv[1], "light") == 0;
    /* Small scales: a CTA costs its threads' barriers (about 1 ms on 2 cores), and what is
     * checked is every kind of tile, not its count. */
    static const double scale[PM_N_PRESETS] = {
        [PM_ABELIAN_SMALL] = 0.1, [PM_RECOUPLING_SMALL] = 0.1, [PM_MANY_SMALL] = 0.02,
        [PM_LARGE_U] = 0.005,     [PM_FEW_LARGE] = 0.0001,     [PM_MIXED] = 0.0,
        [PM_DENSE] = 0.0002,      [PM_CUSTOM] = 1.0,
    };
    for (int esize = 4; esize <= 8; esize += 4)
        for (double beta : {0.0, -0.75}) {
            /* large_u keeps a 91 x 91 U on a rank-6 block at any scale: two of the four. */
            const bool big = (esize == 4) == (beta == 0.0);
            for (int pr = 0; pr < PM_N_PRESETS; pr++)
                if (scale[pr] > 0 && (pr != PM_LARGE_U || big) &&
                    (!tsan_light || pr == PM_RECOUPLING_SMALL))
                    run_spec(spec_of((pm_preset)pr, esize, beta, scale[pr]),
                             pm_preset_name((pm_preset)pr), 5 + pr);
            /* mixed's shape (general and lean tiles in one launch, so tiled<..., true> runs
             * both) at a size the emulation affords: the preset keeps a 16-40^4 block at any
             * scale. */
            pm_spec m = spec_of(PM_CUSTOM, esize, beta, 1.0);
            m.n_blocks = 8;
            m.rank = 4;
            m.dmin = 1;
            m.dmax = 8;
            m.rows_min = 1;
            m.rows_max = 2;
            m.cols_max = 0; /* square U: about half the blocks 1 x 1 (abelian) */
            run_spec(m, "custom mixed", 9);
            run_dense({8, 8, 8, 8}, {3, 2, 1, 0}, esize, beta); /* 48^4 reversal, smaller */
            run_dense({37, 53}, {1, 0}, esize, beta);           /* ragged 2-D transpose */
            run_dense({3, 5}, {1, 0}, esize, beta);             /* tiny patches */
            if (tsan_light)
                continue;
            run_dense({2, 3}, {1, 0}, esize, beta);
            run_dense({1, 7, 2}, {2, 1, 0}, esize, beta);
            run_dense({13, 7, 5}, {0, 2, 1}, esize, beta); /* copy tiles */
            run_dense({9, 10, 11}, {2, 0, 1}, esize, beta);
            run_dense({10, 6, 6, 10}, {3, 1, 2, 0}, esize, beta);
            run_ranks_7_and_8(esize, beta);
        }
    for (int k = 0; k < COV_N; k++) {
        printf("  %-24s %lld\n", cov_name[k], coverage[k]);
        if (coverage[k] == 0 && !tsan_light) {
            printf("FAILED: no %s exercised\n", cov_name[k]);
            fails++;
        }
    }
    return emu_summary(fails, cases);
}
