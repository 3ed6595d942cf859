/* The permute plugin's tile plan of a launch of the tiled kernel: each block's path (lean,
 * direct or general tiles) and cost, the tile length of least predicted time, the records of
 * every tile in schedule order, and (v6) whether the lean tiles run in a launch of their own. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kbench/plugin.h"
#include "plan.h"

/* An abelian block on a general tile costs more than the model's bytes and tiles say (the
 * seed's kernel ran 2.5-5x over them: HISTORY.md, "6. Outcomes"; the v2 general tile still
 * does a few times the lean tile's instructions per element): the choice weighs that in. */
#define GENERAL_SLOWDOWN 4.0
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

/* A block's best cost at tile length len_log and whether the lean path gives it: abelian
 * blocks and extracts go lean unless the general tile is cheaper (tiny blocks whose lean
 * tiles would be mostly idle); recoupling blocks go on direct tiles (*direct) where those,
 * chain included, are cheaper than the general tiles (with direct_ok).  *chain: the latency
 * of one of its tiles beyond the launch (ns; 0 for a lean tile), of which a launch takes at
 * least the longest (pm_plan_tiles). */
static double block_cost(const pm_problem *p, const pm_block *b, int extract, int len_log,
                         int direct_ok, int *lean, int *direct, double *chain)
{
    pm_geom g;
    int lg[PM_MAX_RANK], lr, log_p = 0;
    double general;
    pm_block v;
    pm_merge_block(b, &v);
    pm_geom_of(p, &v, extract, &g);
    general = pm_best_shape(&g, len_log, extract || pm_is_unique(b), lg, &lr);
    *lean = extract; /* the general tiles do not write the workspace */
    *direct = 0;
    for (int k = 0; k < g.rank; k++)
        log_p += lg[k];
    /* The general tile's chain: the first round, and each further gather round exposes a
     * dependent load round trip and a barrier. */
    *chain =
        NS_GEN_CHAIN + (g.beta ? NS_GEN_CHAIN_BETA : 0.0) +
        (g.esize == 8 ? NS_GEN_CHAIN_F64 : 0.0) +
        ((g.cols + pm_chunk_of(g.cols, log_p, len_log) - 1) / pm_chunk_of(g.cols, log_p, len_log) -
         1) *
            NS_PER_ROUND;
    if (extract || pm_is_unique(b)) {
        pm_lean_geom lgm;
        double c;
        pm_lean_geom_of(b, p->esize, !extract && p->beta != 0.0, len_log, &lgm);
        c = pm_lean_cost(&lgm, extract ? b->cols : 1, p->esize, !extract && p->beta != 0.0,
                         len_log);
        /* With direct tiles (the model since run 8), a general tile's chain counts against it:
         * one tiny abelian block on a general tile would set the launch's time. */
        if (extract || c <= GENERAL_SLOWDOWN * general + (direct_ok ? *chain : 0.0)) {
            *lean = 1;
            *chain = 0.0;
            return c;
        }
    }
    if (direct_ok && pm_direct_fits(b)) {
        double ch, d = pm_direct_cost(&g, len_log, &ch);
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

/* Lean tiles a CTA of a lean-only launch of `tiles` lean tiles (pm_tile_plan.lean_per). */
static int lean_per_of(int64_t tiles)
{
    int per = LEAN_PER;
    while (per > 1 && tiles < (int64_t)per * LEAN_MIN_CTAS)
        per /= 2;
    return per;
}

int pm_by_cols(const void *a, const void *b)
{
    const pm_order *x = a, *y = b;
    if (x->cols != y->cols)
        return y->cols - x->cols;
    return x->idx - y->idx;
}

int pm_plan_tiles(const pm_problem *p, const unsigned char *which, const int64_t *ws_off,
                  int len_log, pm_tile_plan *out, char *msg)
{
    return pm_plan_tiles_direct(p, which, ws_off, len_log, 1, out, msg);
}

/* v6: the whole plan at every length (waves and the split depend on the tile counts), the
 * least predicted time kept; among equal times the least work.  Returns a kb_status. */
static int plan_every_length(const pm_problem *p, const unsigned char *which, const int64_t *ws_off,
                             int opts, pm_tile_plan *out, char *msg)
{
    for (int l = 0; l < PM_N_LENGTHS; l++) {
        pm_tile_plan t;
        int rc = pm_plan_tiles_direct(p, which, ws_off, l, opts, &t, msg);
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

/* The blocks in `which` (NULL: all) in schedule order into ord; returns how many. */
static int schedule_of(const pm_problem *p, const unsigned char *which, pm_order *ord)
{
    int n = 0;
    for (int i = 0; i < p->n_blocks; i++)
        if (!which || which[i]) {
            int extract = which && which[i] == 2;
            ord[n].idx = i;
            ord[n].cols = extract ? 1 : p->blocks[i].cols;
            n++;
        }
    qsort(ord, (size_t)n, sizeof *ord, pm_by_cols);
    return n;
}

/* The tile length of least total cost of the n blocks of ord. */
static int least_cost_length(const pm_problem *p, const unsigned char *which, const pm_order *ord,
                             int n, int direct_ok)
{
    double best = INFINITY, best_sum = INFINITY;
    int len_log = 0;
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
    return len_log;
}

/* Each block's path into lean_of (1 lean, 2 direct, 0 general tiles), and the lean blocks'
 * tiles and shared memory counted into out; returns the lean blocks' summed cost. */
static double count_lean(const pm_problem *p, const unsigned char *which, const pm_order *ord,
                         int n, int direct_ok, unsigned char *lean_of, pm_tile_plan *out)
{
    const int len_log = out->len_log;
    double lean_sum = 0.0;
    for (int i = 0; i < n; i++) {
        const pm_block *b = &p->blocks[ord[i].idx];
        int extract = which && which[ord[i].idx] == 2, lean, direct;
        double ch, c = block_cost(p, b, extract, len_log, direct_ok, &lean, &direct, &ch);
        lean_of[i] = (unsigned char)(lean ? 1 : direct ? 2 : 0);
        if (lean) {
            pm_lean_geom lgm;
            pm_lean_geom_of(b, p->esize, !extract && p->beta != 0.0, len_log, &lgm);
            lean_sum += c;
            out->lean_tiles += pm_lean_fill(&lgm, 0, 0, extract ? b->cols : 1, 0, 0, NULL);
            out->n_lean_blocks++;
            size_t sm = ((size_t)1 << (lgm.lx + lgm.lz)) * (((size_t)1 << lgm.ly) + 1);
            if (!lgm.copy && sm > out->smem_elems)
                out->smem_elems = sm;
        }
    }
    return lean_sum;
}

/* The lean blocks' tiles into out->lean (extracts to the workspace at ws_off). */
static void fill_lean(const pm_problem *p, const unsigned char *which, const int64_t *ws_off,
                      const pm_order *ord, int n, const unsigned char *lean_of, pm_tile_plan *out)
{
    for (int i = 0, j = 0; i < n; i++) {
        const pm_block *b = &p->blocks[ord[i].idx];
        int extract = which && which[ord[i].idx] == 2;
        pm_lean_geom lgm;
        if (lean_of[i] != 1)
            continue;
        pm_lean_geom_of(b, p->esize, !extract && p->beta != 0.0, out->len_log, &lgm);
        j += (int)pm_lean_fill(&lgm, b->src_off, extract ? ws_off[ord[i].idx] : b->dst_off,
                               extract ? b->cols : 1, b->n, extract, out->lean + j);
    }
}

/* The descriptors of the general and direct blocks (lean_of 0 and 2) in schedule order, their
 * first tiles and the shared memory of the general ones; their summed cost into *gen_sum, the
 * longest chain into *chain, and whether any is direct into *any_direct.  Returns KB_OK, or
 * KB_SKIP with msg over 2^31 tiles. */
static int plan_general(const pm_problem *p, const pm_order *ord, int n,
                        const unsigned char *lean_of, int direct_ok, pm_tile_plan *out,
                        double *gen_sum, double *chain, int *any_direct, char *msg)
{
    const int len_log = out->len_log;
    out->n_blocks = 0;
    for (int i = 0, k = 0; i < n; i++) {
        const pm_block *b = &p->blocks[ord[i].idx];
        int lg[PM_MAX_RANK] = {0}, lr = 0, lean, direct;
        double ch;
        pm_geom g;
        pm_block v;
        if (lean_of[i] == 1)
            continue;
        pm_tile_block *t = &out->blk[k++];
        out->n_blocks = k;
        pm_merge_block(b, &v);
        pm_geom_of(p, &v, 0, &g);
        *gen_sum += block_cost(p, b, 0, len_log, direct_ok, &lean, &direct, &ch);
        *chain = ch > *chain ? ch : *chain;
        if (lean_of[i] == 0)
            pm_best_shape(&g, len_log, pm_is_unique(b), lg, &lr);
        pm_fill_tile(p, &v, &g, lg, lr, len_log, b->dst_off, t);
        int64_t tiles = (int64_t)t->n_sp * ((t->rows + (1 << t->log_r) - 1) >> t->log_r);
        if (lean_of[i] == 2) { /* direct: no shared memory */
            *any_direct = 1;
            t->flags |= PM_FLAG_DIRECT;
            t->chunk = 0;
            tiles = direct_fill(t, k - 1, len_log, NULL);
            out->begin[k - 1] = (int32_t)out->tiles;
            out->tiles += tiles;
            continue;
        }
        if (out->tiles + tiles >= INT32_MAX) {
            kb_msgf(msg, "over 2^31 tiles in one launch");
            return KB_SKIP;
        }
        out->begin[k - 1] = (int32_t)out->tiles;
        out->tiles += tiles;
        size_t p_el = (size_t)1 << t->log_p;
        size_t smem = (size_t)t->chunk * (p_el + (p_el >> t->pad_shift));
        if (smem > out->smem_elems)
            out->smem_elems = smem;
    }
    out->begin[out->n_blocks] = (int32_t)out->tiles;
    return KB_OK;
}

/* The plan's predicted time (one launch, or v6's choice of the split) and the lean-only
 * launch's kernel. */
static void predict(pm_tile_plan *out, double gen_sum, double lean_sum, double chain, int v6)
{
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
}

/* Each block chose direct tiles by their cost plus chain against the general tile's; where
 * the launch is not one wave of chains (the sum of costs is the time), the plan without them
 * may be cheaper: out becomes the cheaper of the two.  Returns a kb_status (out freed on
 * failure). */
static int cheaper_without_direct(const pm_problem *p, const unsigned char *which,
                                  const int64_t *ws_off, int len_log, int opts, pm_tile_plan *out,
                                  char *msg)
{
    pm_tile_plan alt;
    int rc = pm_plan_tiles_direct(p, which, ws_off, len_log, opts & ~PM_PLAN_DIRECT, &alt, msg);
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
    return KB_OK;
}

int pm_plan_tiles_direct(const pm_problem *p, const unsigned char *which, const int64_t *ws_off,
                         int len_log, int opts, pm_tile_plan *out, char *msg)
{
    pm_order *ord = NULL;
    unsigned char *lean_of = NULL; /* per block: 1 lean, 2 direct, 0 general tiles */
    int n, rc = KB_OK, any_direct = 0;
    const int direct_ok = opts & PM_PLAN_DIRECT, v6 = opts & PM_PLAN_SPLIT;
    double chain = 0.0, lean_sum, gen_sum = 0.0;
    memset(out, 0, sizeof *out);
    if (v6 && len_log < 0)
        return plan_every_length(p, which, ws_off, opts, out, msg);
    ord = malloc((size_t)(p->n_blocks ? p->n_blocks : 1) * sizeof *ord);
    if (!ord)
        goto nomem;
    n = schedule_of(p, which, ord);
    out->len_log = len_log < 0 ? least_cost_length(p, which, ord, n, direct_ok) : len_log;
    out->n_blocks = n;
    out->blk = calloc((size_t)(n ? n : 1), sizeof *out->blk);
    out->begin = calloc((size_t)n + 1, sizeof *out->begin);
    if (!out->blk || !out->begin)
        goto nomem;
    /* The lean blocks first (counted, then filled), the general ones in schedule order. */
    lean_of = calloc((size_t)(n ? n : 1), 1);
    if (!lean_of)
        goto nomem;
    lean_sum = count_lean(p, which, ord, n, direct_ok, lean_of, out);
    if (out->lean_tiles >= INT32_MAX) {
        kb_msgf(msg, "over 2^31 tiles in one launch");
        rc = KB_SKIP;
        goto fail;
    }
    out->lean = malloc((size_t)(out->lean_tiles ? out->lean_tiles : 1) * sizeof *out->lean);
    if (!out->lean)
        goto nomem;
    fill_lean(p, which, ws_off, ord, n, lean_of, out);
    rc = plan_general(p, ord, n, lean_of, direct_ok, out, &gen_sum, &chain, &any_direct, msg);
    if (rc != KB_OK)
        goto fail;
    if (out->tiles + out->lean_tiles >= INT32_MAX) {
        kb_msgf(msg, "over 2^31 tiles in one launch");
        rc = KB_SKIP;
        goto fail;
    }
    out->gen = malloc((size_t)(out->tiles ? out->tiles : 1) * sizeof *out->gen);
    if (!out->gen)
        goto nomem;
    for (int i = 0; i < out->n_blocks; i++)
        if (out->blk[i].flags & PM_FLAG_DIRECT)
            direct_fill(&out->blk[i], i, out->len_log, out->gen + out->begin[i]);
        else
            gen_fill(&out->blk[i], i, out->gen + out->begin[i]);
    predict(out, gen_sum, lean_sum, chain, v6);
    free(ord);
    free(lean_of);
    return any_direct ? cheaper_without_direct(p, which, ws_off, len_log, opts, out, msg) : KB_OK;
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
