/* The permute plugin's behaviour that needs no GPU.  The plugin's host code (generator,
 * reference, check, planner) is compiled into this test, and the tiled and per-element kernels
 * are emulated on the host with the very index functions the kernels use (permute.h), so a
 * wrong tile shape, shift, pad or schedule fails here before it reaches the H200:
 *   - hand-checked tiny cases: a 2x3 transpose, a 2-tree recoupling with a known U;
 *   - the host variant verifies on every preset (kbench run, small scale), device variants skip;
 *   - the tiled emulation writes every element exactly once and verifies on every preset, both
 *     element types, beta = 0 and not, at every tile length; so do extract + GEMM,
 *     per-element and the fused kernel (emulated in the element type, FMA for FMA);
 *   - the check fails an unwritten (NaN) element and an inexact abelian copy;
 *   - the cost model: large tiles for the 7264^2 transpose, GEMM over tiled for 91x91 U only,
 *     the fused kernel for every large_u block and for no many_small block;
 *   - rank 7 and 8 (dims and integer-list perm), and profiles/permute.ini parses. */
#define _XOPEN_SOURCE 700
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "helpers.h"
#include "loader.h"
#include "profile.h"

#include "../plugins/permute/gen.c"
#include "../plugins/permute/plan_elem.c"
#include "../plugins/permute/plan_fused.c"
#include "../plugins/permute/plan_lean.c"
#include "../plugins/permute/plan_model.c"
#include "../plugins/permute/plan_tiled.c"
#include "../plugins/permute/test/spec.h"

static void setup(void)
{
    make_tmp_named("permute");
}

TestSuite(permute, .init = setup, .fini = remove_tmp);

/* alpha 1: the abelian blocks' copies stay exact. */
static pm_spec spec_of(pm_preset preset, int esize, double beta, double scale)
{
    return pm_test_spec(preset, esize, 1.0, beta, scale);
}

/* ---- host emulation of the kernels -------------------------------------------------------- */

/* The output of one element of a lean tile (to the workspace as it is, else with alpha and
 * beta), counted in `writes`. */
static void lean_put(const pm_problem *p, int to_ws, int64_t d, double w, void *out, void *ws,
                     int *writes, int64_t ws_elems)
{
    if (to_ws) {
        cr_assert(d >= 0 && d < ws_elems, "workspace write out of range");
        pm_set(ws, p->esize, d, w);
        return;
    }
    cr_assert(d >= 0 && d < p->dst_elems, "write out of range");
    writes[d]++;
    pm_set(out, p->esize, d,
           p->alpha * w + (p->beta != 0 ? p->beta * pm_get(p->cin, p->esize, d) : 0));
}

/* A v4 lean tile (permute.h, pm_lean_vec_ok) vector by vector as the kernel's vec_tile: every
 * vector inside the tile or wholly outside it (skipped), its offsets aligned to 16 bytes, a
 * transpose's patch slots (pm_lean_vec_at) inside the patch and each stashed once (sm poisoned with
 * NaN by the caller), its vector reads whole 16-byte groups; the patch a warp stashes at once
 * without a bank conflict (as the shapes allow: see below). */
static int64_t vec_tiles[2]; /* v4 tiles emulated: transposes, copies */

static void emulate_lean_vec(const pm_problem *p, const pm_tile_plan *tp, const pm_lean_tile *t,
                             double *sm, void *out, void *ws, int *writes, int64_t ws_elems)
{
    const int nt = 32 << tp->len_log, vw = 16 / p->esize, lv = vw == 4 ? 2 : 1;
    const int nv = PM_LEAN_EPT(p->esize) / vw;
    const int lx = t->info & 15, ly = (t->info >> 4) & 15, lz = (t->info >> 8) & 15;
    const int lxyz = lx + ly + lz, to_ws = !!(t->info & PM_LEAN_WS);
    cr_assert_leq((int64_t)1 << lxyz, (int64_t)tp->smem_elems, "v4 patch beyond shared memory");
    vec_tiles[!!(t->info & PM_LEAN_COPY)]++;
    if (t->info & PM_LEAN_COPY) {
        for (int th = 0; th < nt; th++)
            for (int i = 0; i < nv; i++) {
                const int32_t v = th + nt * i, x = (v & ((1 << (lx - lv)) - 1)) << lv;
                const int32_t y = (v >> (lx - lv)) & ((1 << ly) - 1), z = v >> (lx - lv + ly);
                if (x >= t->nx || y >= t->ny || z >= t->nz)
                    continue;
                cr_assert_leq(x + vw, t->nx, "v4 copy: a vector across the tile's edge");
                const int64_t from = t->src + x + (int64_t)y * t->sx + (int64_t)z * t->sz;
                const int64_t d = t->dst + x + (int64_t)y * t->dy + (int64_t)z * t->dz;
                cr_assert(from % vw == 0 && d % vw == 0, "v4 copy: unaligned vector");
                for (int j = 0; j < vw; j++) {
                    cr_assert(from + j < p->src_elems, "source read out of range");
                    lean_put(p, to_ws, d + j, pm_get(p->src, p->esize, from + j), out, ws, writes,
                             ws_elems);
                }
            }
        return;
    }
    for (int w0 = 0; w0 < nt; w0 += 32) /* warps */
        for (int i = 0; i < nv; i++)
            for (int j = 0; j < vw; j++) {
                int lines[32] = {0}, used[32] = {0}, ways = 1; /* banks of 4 bytes */
                for (int th = w0; th < w0 + 32 && th < nt; th++) {
                    const int32_t v = th + nt * i, y = (v & ((1 << (ly - lv)) - 1)) << lv;
                    const int32_t x = (v >> (ly - lv)) & ((1 << lx) - 1);
                    const int32_t z = v >> (ly - lv + lx), row = (z << ly) + y + j;
                    if (x >= t->nx || y >= t->ny || z >= t->nz)
                        continue;
                    cr_assert_leq(y + vw, t->ny, "v4 transpose: a vector across the tile's edge");
                    const int64_t from = t->src + (int64_t)x * t->sx + y + j + (int64_t)z * t->sz;
                    /* the kernel's slot: row y's XOR j << lx */
                    const int32_t at =
                        pm_lean_vec_at(row - j, x, lx, ly, lxyz, p->esize) ^ (j << lx);
                    cr_assert_eq(at, pm_lean_vec_at(row, x, lx, ly, lxyz, p->esize),
                                 "v4 stash: row %d's slot is not row %d's XOR %d", row, row - j,
                                 j << lx);
                    cr_assert((from - j) % vw == 0, "v4 transpose: unaligned source vector");
                    cr_assert(from >= 0 && from < p->src_elems, "source read out of range");
                    cr_assert(at >= 0 && at < 1 << lxyz, "v4 patch slot outside the patch");
                    cr_assert(isnan(sm[at]), "v4 patch slot %d stashed twice", at);
                    sm[at] = pm_get(p->src, p->esize, from);
                    /* f64: a half-warp a shared-memory wavefront */
                    if (p->esize == 8 && th == w0 + 16)
                        for (int b = 0; b < 32; b++)
                            used[b] = 0;
                    for (int b4 = 0; b4 < p->esize / 4; b4++) {
                        const int64_t word = (int64_t)at * (p->esize / 4) + b4;
                        const int bank = (int)(word % 32), line = (int)(word / 32);
                        if (used[bank] && lines[bank] != line)
                            ways = 2;
                        used[bank] = 1;
                        lines[bank] = line;
                    }
                }
                /* Conflict-free where a row group's lanes fit the 128-byte line's 16-byte
                 * groups: rows of 16 elements or more, TY at most a line (longer: the lanes
                 * of a stash share x, and a line has only 8 groups for them). */
                if (lx >= 4 && ly <= (p->esize == 4 ? 5 : 4) && (p->esize == 8 || ly >= 3))
                    cr_expect_eq(ways, 1, "v4 %dx%dx%d patch: a bank conflict on the stash",
                                 1 << lx, 1 << ly, 1 << lz);
            }
    for (int th = 0; th < nt; th++)
        for (int i = 0; i < nv; i++) {
            const int32_t v = th + nt * i, x = (v & ((1 << (lx - lv)) - 1)) << lv;
            const int32_t y = (v >> (lx - lv)) & ((1 << ly) - 1), z = v >> (lx - lv + ly);
            if (x >= t->nx || y >= t->ny || z >= t->nz)
                continue;
            cr_assert_leq(x + vw, t->nx, "v4 transpose: a vector across the tile's edge");
            const int32_t at = pm_lean_vec_at((z << ly) + y, x, lx, ly, lxyz, p->esize);
            const int64_t d = t->dst + x + (int64_t)y * t->dy + (int64_t)z * t->dz;
            cr_assert(at % vw == 0 && d % vw == 0, "v4 transpose: unaligned vector");
            for (int j = 0; j < vw; j++) {
                cr_assert(!isnan(sm[at + j]), "v4 patch slot %d read before a stash", at + j);
                lean_put(p, to_ws, d + j, sm[at + j], out, ws, writes, ws_elems);
            }
        }
}

/* The tiled kernel's lean tiles, thread by thread and phase by phase (the patch in shared
 * memory poisoned with NaN before each tile); returns how many tiles were whole patches. */
static int64_t emulate_lean(const pm_problem *p, const pm_tile_plan *tp, void *out, void *ws,
                            int *writes, int64_t ws_elems)
{
    const int nt = 32 << tp->len_log, ept = PM_LEAN_EPT(p->esize);
    double *sm = malloc((tp->smem_elems + 1) * sizeof *sm);
    double *v = malloc((size_t)nt * ept * sizeof *v);
    int64_t whole = 0;
    cr_assert(sm && v);
    for (int64_t ti = 0; ti < tp->lean_tiles; ti++) {
        const pm_lean_tile *t = &tp->lean[ti];
        const int lx = t->info & 15, ly = (t->info >> 4) & 15, lz = (t->info >> 8) & 15;
        const int copy = !!(t->info & PM_LEAN_COPY), to_ws = !!(t->info & PM_LEAN_WS);
        const int32_t pitch = (1 << ly) + 1;
        cr_assert_leq(1 << (lx + ly + lz), nt * ept, "patch %dx%dx%d for %d threads", 1 << lx,
                      1 << ly, 1 << lz, nt);
        cr_assert(t->nx <= 1 << lx && t->ny <= 1 << ly && t->nz <= 1 << lz);
        cr_assert(t->nx > 0 && t->ny > 0 && t->nz > 0);
        whole += t->nx == 1 << lx && t->ny == 1 << ly && t->nz == 1 << lz;
        for (size_t i = 0; i < tp->smem_elems; i++)
            sm[i] = NAN;
        if (tp->lean_vec && tp->tiles == 0 &&
            pm_lean_vec_ok(t->src, t->dst, t->sx, t->dy, t->sz, t->dz, t->nx, t->ny, t->nz, t->info,
                           p->esize)) {
            emulate_lean_vec(p, tp, t, sm, out, ws, writes, ws_elems);
            continue;
        }
        for (int th = 0; th < nt; th++)
            for (int i = 0; i < ept; i++) {
                const int32_t l = th + nt * i, z = l >> (lx + ly);
                int32_t x, y, from;
                if (copy) {
                    x = l & ((1 << lx) - 1);
                    y = (l >> lx) & ((1 << ly) - 1);
                    from = x + y * t->sx + z * t->sz;
                } else {
                    y = l & ((1 << ly) - 1);
                    x = (l >> ly) & ((1 << lx) - 1);
                    from = x * t->sx + y + z * t->sz;
                }
                v[th * ept + i] = NAN;
                if (x < t->nx && y < t->ny && z < t->nz) {
                    cr_assert(t->src + from >= 0 && t->src + from < p->src_elems,
                              "source read out of range");
                    v[th * ept + i] = pm_get(p->src, p->esize, t->src + from);
                    if (!copy) {
                        int64_t at = ((int64_t)(z << lx) + x) * pitch + y;
                        cr_assert_lt(at, (int64_t)tp->smem_elems, "shared memory overrun");
                        sm[at] = v[th * ept + i];
                    }
                }
            }
        for (int th = 0; th < nt; th++)
            for (int i = 0; i < ept; i++) {
                const int32_t l = th + nt * i, x = l & ((1 << lx) - 1);
                const int32_t y = (l >> lx) & ((1 << ly) - 1), z = l >> (lx + ly);
                if (x >= t->nx || y >= t->ny || z >= t->nz)
                    continue;
                const double w = copy ? v[th * ept + i] : sm[((int64_t)(z << lx) + x) * pitch + y];
                const int64_t d = t->dst + x + (int64_t)y * t->dy + (int64_t)z * t->dz;
                if (to_ws) {
                    cr_assert(d >= 0 && d < ws_elems, "workspace write out of range");
                    pm_set(ws, p->esize, d, w);
                } else {
                    cr_assert(d >= 0 && d < p->dst_elems, "write out of range");
                    writes[d]++;
                    pm_set(out, p->esize, d,
                           p->alpha * w +
                               (p->beta != 0 ? p->beta * pm_get(p->cin, p->esize, d) : 0));
                }
            }
    }
    free(sm);
    free(v);
    return whole;
}

/* A direct tile of the tiled kernel, thread by thread, from its record alone (as the kernel):
 * its elements, each summed over the source trees in order (as the kernel's FMAs). */
static void emulate_direct(const pm_problem *p, const pm_tile_plan *tp, const pm_gen_tile *rec,
                           void *out, int *writes)
{
    const int nt = 32 << tp->len_log;
    const pm_tile_block *b = &tp->blk[rec->blk];
    uint32_t w[4];
    int32_t count, cols, r0, rank;
    memcpy(w, rec->rem, sizeof w);
    pm_direct_fields(rec->nr, &count, &cols, &r0, &rank);
    const int32_t n = pm_direct_n(w, rank);
    cr_assert(n == b->n && cols == b->cols && rank == b->rank, "direct record fields");
    cr_assert(count <= nt * PM_DIRECT_EPT && r0 < n, "direct tile range");
    for (int t = 0; t < nt; t++) {
        int32_t i;
        const int32_t s = pm_direct_src(w, rank, n, r0 + t, &i);
        if (t >= count)
            continue;
        /* The same element through the descriptor (pm_elem_src_off's arithmetic). */
        int32_t e = (r0 + t) % n, s_ref = 0;
        for (int k = 0; k < b->rank; k++) {
            s_ref += (e % b->ddim[k]) * b->sstr[k];
            e /= b->ddim[k];
        }
        cr_assert_eq(s, s_ref, "direct tile: source offset");
        double acc = 0.0;
        for (int32_t j = 0; j < cols; j++) {
            const int64_t from = rec->src + (int64_t)j * n + s, uo = rec->u + (int64_t)i * cols + j;
            cr_assert(from >= b->src_off && from < b->src_off + (int64_t)b->n * b->cols,
                      "source read outside the block");
            cr_assert(uo >= b->u_off && uo < b->u_off + (int64_t)b->rows * b->cols,
                      "U read outside the block");
            acc += pm_get(p->u, p->esize, uo) * pm_get(p->src, p->esize, from);
        }
        const int64_t d = rec->dst + t;
        cr_assert(d >= b->dst_off && d < b->dst_off + (int64_t)b->n * b->rows,
                  "write outside the block");
        writes[d]++;
        pm_set(out, p->esize, d,
               p->alpha * acc + (p->beta != 0 ? p->beta * pm_get(p->cin, p->esize, d) : 0));
    }
}

/* The tiled kernel, thread by thread and phase by phase, in double, rounded to the element
 * type on store: its general tiles, then its lean ones.  Counts the writes of every output
 * element into `writes`; returns how many tiles lay wholly inside their block. */
static int64_t emulate_tiled(const pm_problem *p, const pm_tile_plan *tp, void *out, void *ws,
                             int *writes, int64_t ws_elems)
{
    const int nt = 32 << tp->len_log, slots = nt * PM_GEN_EPP * PM_GEN_RB;
    double *sm = malloc((tp->smem_elems + 1) * sizeof *sm);
    double *acc = malloc((size_t)slots * sizeof *acc);
    int64_t whole = 0;
    cr_assert(sm && acc);
    for (int32_t tile = 0; tile < (int32_t)tp->tiles; tile++) {
        const pm_gen_tile *rec = &tp->gen[tile];
        const int bi = rec->blk;
        const pm_tile_block *b = &tp->blk[bi];
        int32_t rem[PM_MAX_RANK] = {0}, inside = 1;
        cr_assert_eq(bi, pm_find_block(tp->begin, tp->n_blocks, tile));
        cr_assert_eq(rec->nr < 0, (b->flags & PM_FLAG_DIRECT) != 0, "tile %d: kind", tile);
        if (rec->nr < 0) {
            emulate_direct(p, tp, rec, out, writes);
            continue;
        }
        for (int k = 0; k < PM_MAX_RANK; k++) {
            rem[k] = rec->rem[k];
            if (k < b->rank) {
                cr_assert(rem[k] > 0 && rem[k] <= 1 << b->lg[k]);
                inside &= rem[k] == 1 << b->lg[k];
            }
        }
        whole += inside;
        const int32_t log_p = b->log_p, log_l = log_p > 2 ? log_p - 2 : 0;
        const int32_t epp = log_p >= 2 ? PM_GEN_EPP : 1 << log_p, pitch = pm_gen_pitch(b);
        cr_assert(rec->nr > 0 && rec->nr <= 1 << b->log_r && rec->nr <= b->rows);
        cr_assert_leq((rec->nr + PM_GEN_RB - 1) / PM_GEN_RB << log_l, nt,
                      "%d trees of %d elements for %d threads", rec->nr, 1 << log_p, nt);
        for (int x = 0; x < slots; x++)
            acc[x] = 0.0;
        for (int32_t jc = 0; jc < b->cols; jc += b->chunk) {
            const int32_t nc = b->chunk < b->cols - jc ? b->chunk : b->cols - jc;
            for (size_t i = 0; i < tp->smem_elems; i++)
                sm[i] = NAN; /* a read of a slot this fill did not write poisons the result */
            for (int32_t l = 0; l < nc << log_p; l++) {
                const int32_t s = l & ((1 << log_p) - 1), j = l >> log_p;
                const int64_t at = (int64_t)j * pitch + s + (s >> b->pad_shift);
                int32_t off;
                cr_assert_lt(at, (int64_t)tp->smem_elems, "shared memory overrun");
                sm[at] = 0.0;
                if (pm_gen_src(b, rem, s, &off)) {
                    const int64_t from = rec->src + (int64_t)(jc + j) * b->n + off;
                    cr_assert(from >= b->src_off && from < b->src_off + (int64_t)b->n * b->cols,
                              "source read outside the block");
                    sm[at] = pm_get(p->src, p->esize, from);
                }
            }
            for (int t = 0; t < nt; t++) {
                const int32_t q = t & ((1 << log_l) - 1), i0 = (t >> log_l) * PM_GEN_RB;
                for (int e = 0; e < epp; e++) {
                    int32_t doff, spos;
                    if (i0 >= rec->nr || !pm_gen_dst(b, rem, q + (e << log_l), &doff, &spos))
                        continue;
                    for (int r = 0; r < PM_GEN_RB && i0 + r < rec->nr; r++)
                        for (int32_t jj = 0; jj < nc; jj++)
                            acc[(t * PM_GEN_EPP + e) * PM_GEN_RB + r] +=
                                pm_get(p->u, p->esize,
                                       rec->u + (int64_t)(i0 + r) * b->cols + jc + jj) *
                                sm[jj * pitch + spos];
                }
            }
        }
        for (int t = 0; t < nt; t++) {
            const int32_t q = t & ((1 << log_l) - 1), i0 = (t >> log_l) * PM_GEN_RB;
            for (int e = 0; e < epp; e++) {
                int32_t doff, spos;
                if (i0 >= rec->nr || !pm_gen_dst(b, rem, q + (e << log_l), &doff, &spos))
                    continue;
                for (int r = 0; r < PM_GEN_RB && i0 + r < rec->nr; r++) {
                    const int64_t d = rec->dst + (int64_t)(i0 + r) * b->n + doff;
                    const double a = acc[(t * PM_GEN_EPP + e) * PM_GEN_RB + r];
                    cr_assert(d >= b->dst_off && d < b->dst_off + (int64_t)b->n * b->rows,
                              "write outside the block");
                    writes[d]++;
                    pm_set(out, p->esize, d,
                           p->alpha * a +
                               (p->beta != 0 ? p->beta * pm_get(p->cin, p->esize, d) : 0));
                }
            }
        }
    }
    free(sm);
    free(acc);
    return whole + emulate_lean(p, tp, out, ws, writes, ws_elems);
}

/* The per-element kernels, thread by thread. */
static void emulate_elems(const pm_problem *p, const pm_elem_plan *e, void *out, int *writes)
{
    for (int32_t cta = 0; cta < e->begin[e->n_blocks]; cta++) {
        const int bi = e->owner[cta];
        cr_assert_eq(bi, pm_find_block(e->begin, e->n_blocks, cta));
        const pm_elem_block *b = &e->blk[bi];
        for (int t = 0; t < PM_ELEM_THREADS; t++) {
            int32_t x = (cta - e->begin[bi]) * PM_ELEM_THREADS + t;
            if (x >= b->rows * b->n)
                continue;
            int32_t i = x / b->n, r = x - i * b->n, soff = 0;
            for (int k = 0; k < b->rank; k++) {
                soff += (r % b->ddim[k]) * b->sstr[k];
                r /= b->ddim[k];
            }
            double acc = 0;
            for (int j = 0; j < b->cols; j++)
                acc += pm_get(p->u, p->esize, b->u_off + (int64_t)i * b->cols + j) *
                       pm_get(p->src, p->esize, b->src_off + (int64_t)j * b->n + soff);
            int64_t d = b->dst_off + x;
            writes[d]++;
            pm_set(out, p->esize, d,
                   p->alpha * acc + (p->beta != 0 ? p->beta * pm_get(p->cin, p->esize, d) : 0));
        }
    }
}

/* The fused kernel, thread by thread and fill by fill, in the element type (fmaf for float32,
 * fma for float64, as the kernel's FMA chain), so the kernel's own rounding meets the bound.
 * The shared-memory buffers start as NaN before every fill, so a product that reads a slot the
 * fill did not stage poisons its result; counts the writes of every output element. */
static void emulate_fused(const pm_problem *p, const pm_fused_plan *fp, void *out, int *writes)
{
    enum { BM = PM_FUSED_BM, BN = PM_FUSED_BN, BK = PM_FUSED_BK, NT = PM_FUSED_THREADS };
    enum { PR = PM_FUSED_PROW };
    static double ps[BK][PR], us[BK][BM];
    static double acc[NT][PM_FUSED_TM][PM_FUSED_TN];
    const int f32 = p->esize == 4;
    for (int64_t x = 0; x < fp->items; x++) {
        const pm_fused_item *it = &fp->item[x];
        cr_assert(it->blk >= 0 && it->blk < fp->n_blocks);
        /* The kernel reads the item's copy of its block's fields and of its columns. */
        const pm_fused_block *fb = &fp->blk[it->blk];
        const pm_fused_item *b = it;
        cr_assert(it->src_off == fb->src_off && it->dst_off == fb->dst_off &&
                  it->u_off == fb->u_off && it->n == fb->n && it->rows == fb->rows &&
                  it->cols == fb->cols);
        cr_assert(it->row0 % BM == 0 && it->row0 < b->rows && it->elem0 % BN == 0 &&
                  it->elem0 < b->n);
        const int64_t tab = x * BN;
        cr_assert(fb->tab + it->elem0 + BN <= fp->tab_len, "column table out of range");
        cr_assert(memcmp(&fp->igather[tab], &fp->gather[fb->tab + it->elem0],
                         BN * sizeof *fp->igather) == 0 &&
                      memcmp(&fp->idcol[tab], &fp->dcol[fb->tab + it->elem0],
                             BN * sizeof *fp->idcol) == 0,
                  "the tile's columns are not its block's");
        memset(acc, 0, sizeof acc);
        for (int32_t jc = 0; jc < b->cols; jc += BK) {
            for (int k = 0; k < BK; k++)
                for (int i = 0; i < PR; i++)
                    ps[k][i] = NAN;
            for (int k = 0; k < BK; k++)
                for (int i = 0; i < BM; i++)
                    us[k][i] = NAN;
            for (int32_t t = 0; t < NT; t++) {
                const pm_fused_gather g = fp->igather[tab + t];
                const int valid = g.soff >= 0;
                cr_assert(g.spos >= 0 && g.spos < PR && g.soff < b->n);
                for (int k = 0; k < BK; k++) {
                    double v = 0.0;
                    if (valid && jc + k < b->cols)
                        v = pm_get(p->src, p->esize,
                                   b->src_off + (int64_t)(jc + k) * b->n + g.soff);
                    cr_assert(isnan(ps[k][g.spos]), "two gathers into one slot");
                    ps[k][g.spos] = v;
                }
                for (int q = 0; q < PM_FUSED_U_LOADS; q++) {
                    int32_t r, k;
                    pm_fused_u_slot(t, q, &r, &k);
                    cr_assert(r >= 0 && r < BM && k >= 0 && k < BK);
                    const int32_t row = it->row0 + r;
                    us[k][r] =
                        row < b->rows && jc + k < b->cols
                            ? pm_get(p->u, p->esize, b->u_off + (int64_t)row * b->cols + jc + k)
                            : 0.0;
                }
            }
            const int32_t nc = BK < b->cols - jc ? BK : b->cols - jc;
            for (int32_t t = 0; t < NT; t++) {
                int32_t r0, e0;
                pm_fused_thread(t, &r0, &e0);
                cr_assert(r0 >= 0 && r0 + PM_FUSED_TM <= BM && e0 >= 0 && e0 + PM_FUSED_TN <= BN);
                const int32_t w0 = pm_fused_warp_row0(t), pe = pm_fused_pos(e0);
                cr_assert(r0 >= w0 && r0 + PM_FUSED_TM <= w0 + 16,
                          "a slot outside its warp's trees");
                if (it->row0 + w0 >= b->rows) { /* the warp skips: its slots must stay unstored */
                    for (int i = 0; i < PM_FUSED_TM; i++)
                        for (int j = 0; j < PM_FUSED_TN; j++)
                            acc[t][i][j] = NAN;
                    continue;
                }
                for (int k = 0; k < (nc + 3) / 4 * 4; k++)
                    for (int i = 0; i < PM_FUSED_TM; i++)
                        for (int j = 0; j < PM_FUSED_TN; j++) {
                            double a = us[k][r0 + i], v = ps[k][pe + j], *c = &acc[t][i][j];
                            *c = f32 ? (double)fmaf((float)a, (float)v, (float)*c) : fma(a, v, *c);
                        }
            }
        }
        for (int32_t t = 0; t < NT; t++) {
            int32_t r0, e0;
            pm_fused_thread(t, &r0, &e0);
            for (int i = 0; i < PM_FUSED_TM; i++)
                for (int j = 0; j < PM_FUSED_TN; j++) {
                    const int32_t row = it->row0 + r0 + i, col = fp->idcol[tab + e0 + j];
                    if (row >= b->rows || col < 0)
                        continue;
                    cr_assert(col < b->n);
                    const int64_t d = b->dst_off + (int64_t)row * b->n + col;
                    const double a = acc[t][i][j], c = pm_get(p->cin, p->esize, d);
                    double v;
                    if (f32) {
                        const float f_alpha = (float)p->alpha, f_beta = (float)p->beta;
                        v = p->beta != 0 ? (double)(f_alpha * (float)a + f_beta * (float)c)
                                         : (double)(f_alpha * (float)a);
                    } else {
                        v = p->beta != 0 ? p->alpha * a + p->beta * c : p->alpha * a;
                    }
                    writes[d]++;
                    pm_set(out, p->esize, d, v);
                }
        }
    }
}

/* Extract + GEMM as variant gemm (via = 2 for recoupling blocks) or auto plans it. */
static void emulate_gemm(const pm_problem *p, const unsigned char *via, const int64_t *ws_off,
                         const void *ws, void *out, int *writes)
{
    for (int bi = 0; bi < p->n_blocks; bi++) {
        const pm_block *b = &p->blocks[bi];
        if (via[bi] != 2)
            continue;
        for (int i = 0; i < b->rows; i++)
            for (int64_t e = 0; e < b->n; e++) {
                double acc = 0;
                for (int j = 0; j < b->cols; j++)
                    acc += pm_get(p->u, p->esize, b->u_off + (int64_t)i * b->cols + j) *
                           pm_get(ws, p->esize, ws_off[bi] + j * b->n + e);
                int64_t d = b->dst_off + i * b->n + e;
                writes[d]++;
                pm_set(out, p->esize, d,
                       p->alpha * acc + (p->beta != 0 ? p->beta * pm_get(p->cin, p->esize, d) : 0));
            }
    }
}

static void expect_once(const pm_problem *p, const int *writes, const char *what)
{
    int64_t wrong = 0;
    for (int64_t d = 0; d < p->dst_elems; d++)
        wrong += writes[d] != 1;
    cr_expect_eq(wrong, 0, "%s: %lld of %lld elements not written exactly once", what,
                 (long long)wrong, (long long)p->dst_elems);
}

/* ---- hand-checked cases -----------------------------------------------------------------------
 */

Test(permute, transpose_2x3_by_hand)
{
    pm_spec s = spec_of(PM_DENSE, 4, 0.0, 1.0);
    pm_problem p;
    float out[6];
    const float want[6] = {0, 2, 4, 1, 3, 5};
    char msg[KB_MSG_SIZE] = "";
    s.dims[0] = 2;
    s.dims[1] = 3;
    s.n_dims = 2;
    cr_assert_eq(pm_parse_perm("10", s.perm, &s.n_perm, msg), KB_OK, "%s", msg);
    cr_assert_eq(pm_generate(&s, 7, &p, msg), KB_OK, "%s", msg);
    cr_assert_eq(p.n_blocks, 1);
    cr_assert_eq(p.dst_elems, 6);
    for (int i = 0; i < 6; i++)
        ((float *)p.src)[i] = (float)i; /* src(a, b) = a + 2b */
    pm_host_apply(&p, out);
    for (int i = 0; i < 6; i++)
        cr_expect_eq(out[i], want[i], "dst[%d] = %g, want %g", i, out[i], want[i]);
    pm_problem_free(&p);
}

Test(permute, recoupling_two_trees_by_hand)
{
    /* Two 2x2 trees transposed and mixed by U = [1 2; 3 4], with alpha = 2, beta = 0.5 and
     * cin = 1: P(t0) = [1 3 2 4], P(t1) = [5 7 6 8], so
     * out0 = 2 (P0 + 2 P1) + 0.5 = [22.5 34.5 28.5 40.5],
     * out1 = 2 (3 P0 + 4 P1) + 0.5 = [46.5 74.5 60.5 88.5]. */
    pm_spec s = spec_of(PM_CUSTOM, 8, 0.5, 1.0);
    pm_problem p;
    double out[8];
    const double want[8] = {22.5, 34.5, 28.5, 40.5, 46.5, 74.5, 60.5, 88.5};
    const double u[4] = {1, 2, 3, 4};
    char msg[KB_MSG_SIZE] = "";
    s.alpha = 2.0;
    s.n_blocks = 1;
    s.dims[0] = s.dims[1] = 2;
    s.n_dims = 2;
    s.rows_min = s.rows_max = 2;
    s.cols_max = 0;
    cr_assert_eq(pm_parse_perm("1,0", s.perm, &s.n_perm, msg), KB_OK, "%s", msg);
    cr_assert_eq(pm_generate_blocks(&s, 3, &p, msg), KB_OK, "%s", msg);
    cr_assert_eq(p.n_blocks, 1);
    cr_assert_eq(p.blocks[0].rows, 2);
    cr_assert_eq(p.blocks[0].cols, 2);
    cr_assert_eq(pm_fill(&p, 3, msg), KB_OK, "%s", msg);
    for (int i = 0; i < 8; i++) {
        ((double *)p.src)[i] = i + 1;
        ((double *)p.cin)[i] = 1.0;
    }
    memcpy(p.u, u, sizeof u);
    pm_host_apply(&p, out);
    for (int i = 0; i < 8; i++)
        cr_expect_eq(out[i], want[i], "out[%d] = %g, want %g", i, out[i], want[i]);

    /* The tiled emulation agrees on the same numbers at every tile length. */
    for (int len = 0; len < PM_N_LENGTHS; len++) {
        pm_tile_plan tp;
        double tout[8];
        int writes[8] = {0};
        cr_assert_eq(pm_plan_tiles(&p, NULL, NULL, len, &tp, msg), KB_OK, "%s", msg);
        emulate_tiled(&p, &tp, tout, NULL, writes, 0);
        for (int i = 0; i < 8; i++) {
            cr_expect_eq(tout[i], want[i], "len %d: out[%d] = %g", len, i, tout[i]);
            cr_expect_eq(writes[i], 1);
        }
        pm_tile_plan_free(&tp);
    }
    pm_problem_free(&p);
}

Test(permute, perm_and_dims_parse)
{
    int perm[PM_MAX_RANK], n;
    char msg[KB_MSG_SIZE];
    cr_expect_eq(pm_parse_perm("auto", perm, &n, msg), KB_OK);
    cr_expect_eq(n, 0);
    cr_expect_eq(pm_parse_perm("76543210", perm, &n, msg), KB_OK);
    cr_expect_eq(n, 8);
    cr_expect_eq(perm[0], 7);
    cr_expect_eq(pm_parse_perm("0012", perm, &n, msg), KB_BAD_PARAM);
    cr_expect_eq(pm_parse_perm("013", perm, &n, msg), KB_BAD_PARAM);
    cr_expect_eq(pm_parse_perm("8", perm, &n, msg), KB_BAD_PARAM);
}

/* ---- the check ----------------------------------------------------------------------------------
 */

Test(permute, check_fails_unwritten_and_inexact_abelian)
{
    pm_spec s = spec_of(PM_ABELIAN_SMALL, 4, 0.0, 0.2);
    pm_problem p;
    char msg[KB_MSG_SIZE] = "";
    int64_t bad;
    cr_assert_eq(pm_generate(&s, 11, &p, msg), KB_OK, "%s", msg);
    float *out = malloc((size_t)p.dst_elems * sizeof *out);
    pm_host_apply(&p, out);
    cr_expect_eq(pm_check(&p, out, &bad), 0.0, "an abelian copy is exact");
    cr_expect_eq(bad, 0);
    out[p.dst_elems / 2] = nextafterf(out[p.dst_elems / 2], INFINITY);
    cr_expect_gt(pm_check(&p, out, &bad), 1.0, "one ulp off an exact copy fails");
    cr_expect_eq(bad, 1);
    memset(out, 0xff, (size_t)p.dst_elems * sizeof *out);
    cr_expect(isinf(pm_check(&p, out, &bad)), "NaN (unwritten) fails");
    cr_expect_eq(bad, p.dst_elems);
    free(out);
    pm_problem_free(&p);
}

/* ---- every preset, emulated ----------------------------------------------------------------- */

static const double preset_scale[PM_N_PRESETS] = {
    [PM_ABELIAN_SMALL] = 0.5, [PM_RECOUPLING_SMALL] = 0.3, [PM_MANY_SMALL] = 0.05,
    [PM_LARGE_U] = 0.1,       [PM_FEW_LARGE] = 0.0005,     [PM_MIXED] = 0.05,
    [PM_DENSE] = 0.02,        [PM_CUSTOM] = 1.0,
};

static void emulate_spec(pm_spec s, pm_preset preset, int esize, double beta);

static void emulate_all(pm_preset preset, int esize, double beta)
{
    emulate_spec(spec_of(preset, esize, beta, preset_scale[preset]), preset, esize, beta);
}

static void emulate_spec(pm_spec s, pm_preset preset, int esize, double beta)
{
    pm_problem p;
    char msg[KB_MSG_SIZE] = "";
    int64_t bad;
    double err;
    s.alpha = 1.5;
    cr_assert_eq(pm_generate(&s, 5 + preset, &p, msg), KB_OK, "%s", msg);
    void *out = malloc((size_t)p.dst_elems * esize);
    int *writes = calloc((size_t)p.dst_elems, sizeof *writes);
    cr_assert(out && writes);

    pm_host_apply(&p, out);
    err = pm_check(&p, out, &bad);
    cr_expect_leq(err, 1.0, "%s f%d beta %g: host err %g/bound", pm_preset_name(preset), 8 * esize,
                  beta, err);

    /* Every tile length with direct tiles where the model wants them, then the model's length
     * without them (tile_direct = 0: every recoupling block on general tiles). */
    for (int len = -1; len <= PM_N_LENGTHS; len++) {
        pm_tile_plan tp;
        const int direct = len < PM_N_LENGTHS;
        memset(out, 0xff, (size_t)p.dst_elems * esize);
        memset(writes, 0, (size_t)p.dst_elems * sizeof *writes);
        cr_assert_eq(pm_plan_tiles_direct(&p, NULL, NULL, direct ? len : -1, direct, &tp, msg),
                     KB_OK, "%s", msg);
        int direct_blocks = 0;
        for (int b = 0; b < tp.n_blocks; b++)
            direct_blocks += (tp.blk[b].flags & PM_FLAG_DIRECT) != 0;
        if (!direct)
            cr_expect_eq(direct_blocks, 0, "tile_direct = 0 planned direct tiles");
        else if (len < 0 && (preset == PM_RECOUPLING_SMALL || preset == PM_MANY_SMALL))
            cr_expect_gt(direct_blocks, 0, "%s: no direct tiles", pm_preset_name(preset));
        int64_t inside = emulate_tiled(&p, &tp, out, NULL, writes, 0);
        expect_once(&p, writes, "tiled");
        if (preset == PM_FEW_LARGE || preset == PM_MIXED)
            cr_expect_gt(inside, 0, "%s: the interior path was not exercised",
                         pm_preset_name(preset));
        err = pm_check(&p, out, &bad);
        cr_expect_leq(err, 1.0, "%s f%d beta %g len %d: tiled err %g/bound, %lld bad",
                      pm_preset_name(preset), 8 * esize, beta, len, err, (long long)bad);
        pm_tile_plan_free(&tp);
    }

    { /* per-element: the two kernels */
        memset(out, 0xff, (size_t)p.dst_elems * esize);
        memset(writes, 0, (size_t)p.dst_elems * sizeof *writes);
        for (int u = 0; u < 2; u++) {
            pm_elem_plan ep;
            cr_assert_eq(pm_plan_elems(&p, u, &ep, msg), KB_OK, "%s", msg);
            emulate_elems(&p, &ep, out, writes);
            pm_elem_plan_free(&ep);
        }
        expect_once(&p, writes, "per_element");
        err = pm_check(&p, out, &bad);
        cr_expect_leq(err, 1.0, "%s: per_element err %g/bound", pm_preset_name(preset), err);
    }

    { /* gemm: recoupling blocks extracted then multiplied */
        unsigned char *via = calloc((size_t)p.n_blocks + 1, 1);
        int64_t *ws_off = calloc((size_t)p.n_blocks + 1, sizeof *ws_off), ws_elems = 0;
        pm_tile_plan tp;
        for (int b = 0; b < p.n_blocks; b++) {
            via[b] = pm_is_unique(&p.blocks[b]) ? 1 : 2;
            if (via[b] == 2) {
                ws_off[b] = ws_elems;
                ws_elems += p.blocks[b].n * p.blocks[b].cols;
            }
        }
        void *ws = malloc((size_t)(ws_elems + 1) * esize);
        memset(out, 0xff, (size_t)p.dst_elems * esize);
        memset(writes, 0, (size_t)p.dst_elems * sizeof *writes);
        cr_assert_eq(pm_plan_tiles(&p, via, ws_off, -1, &tp, msg), KB_OK, "%s", msg);
        emulate_tiled(&p, &tp, out, ws, writes, ws_elems);
        emulate_gemm(&p, via, ws_off, ws, out, writes);
        expect_once(&p, writes, "gemm");
        err = pm_check(&p, out, &bad);
        cr_expect_leq(err, 1.0, "%s: gemm err %g/bound", pm_preset_name(preset), err);
        pm_tile_plan_free(&tp);
        free(ws);
        free(via);
        free(ws_off);
    }
    { /* fused: recoupling blocks through the fused kernel, abelian blocks tiled */
        unsigned char *via = calloc((size_t)p.n_blocks + 1, 1);
        pm_tile_plan tp;
        pm_fused_plan fp;
        for (int b = 0; b < p.n_blocks; b++)
            via[b] = pm_is_unique(&p.blocks[b]) ? 1 : 0;
        memset(out, 0xff, (size_t)p.dst_elems * esize);
        memset(writes, 0, (size_t)p.dst_elems * sizeof *writes);
        cr_assert_eq(pm_plan_tiles(&p, via, NULL, -1, &tp, msg), KB_OK, "%s", msg);
        emulate_tiled(&p, &tp, out, NULL, writes, 0);
        for (int b = 0; b < p.n_blocks; b++)
            via[b] = pm_is_unique(&p.blocks[b]) ? 0 : 3;
        cr_assert_eq(pm_plan_fused(&p, via, &fp, msg), KB_OK, "%s", msg);
        emulate_fused(&p, &fp, out, writes);
        expect_once(&p, writes, "fused");
        err = pm_check(&p, out, &bad);
        cr_expect_leq(err, 1.0, "%s f%d beta %g: fused err %g/bound, %lld bad",
                      pm_preset_name(preset), 8 * esize, beta, err, (long long)bad);
        pm_fused_plan_free(&fp);
        pm_tile_plan_free(&tp);
        free(via);
    }
    free(out);
    free(writes);
    pm_problem_free(&p);
}

Test(permute, emulated_kernels_verify_on_every_preset, .timeout = 300)
{
    vec_tiles[0] = vec_tiles[1] = 0;
    for (int preset = 0; preset < PM_N_PRESETS; preset++)
        for (int esize = 4; esize <= 8; esize += 4) {
            emulate_all((pm_preset)preset, esize, 0.0);
            emulate_all((pm_preset)preset, esize, -0.75);
        }
    cr_expect_gt(vec_tiles[0], 0, "no v4 transpose tile was exercised");
    cr_expect_gt(vec_tiles[1], 0, "no v4 copy tile was exercised");
}

Test(permute, emulated_kernels_verify_at_rank_7_and_8, .timeout = 120)
{
    /* dense rank 8 with a pairwise swap, custom rank 7 with recoupling and fixed dims */
    static const int64_t p8[] = {6, 7, 4, 5, 2, 3, 0, 1}, p7[] = {3, 0, 6, 1, 5, 2, 4};
    static const int d8[] = {3, 4, 2, 5, 3, 2, 4, 3}, d7[] = {2, 3, 5, 2, 3, 2, 3};
    char msg[KB_MSG_SIZE] = "";
    pm_spec s = spec_of(PM_DENSE, 4, 0.0, 1.0);
    s.n_dims = 8;
    memcpy(s.dims, d8, sizeof d8);
    cr_assert_eq(pm_set_perm(p8, 8, s.perm, &s.n_perm, msg), KB_OK, "%s", msg);
    emulate_spec(s, PM_DENSE, 4, 0.0);
    s = spec_of(PM_CUSTOM, 8, 0.25, 1.0);
    s.n_dims = 7;
    s.n_blocks = 3;
    s.rows_max = 7;
    memcpy(s.dims, d7, sizeof d7);
    cr_assert_eq(pm_set_perm(p7, 7, s.perm, &s.n_perm, msg), KB_OK, "%s", msg);
    emulate_spec(s, PM_CUSTOM, 8, 0.25);
    /* not a permutation */
    cr_expect_eq(pm_set_perm((const int64_t[]){0, 0, 1}, 3, s.perm, &s.n_perm, msg), KB_BAD_PARAM);
    cr_expect_eq(pm_set_perm((const int64_t[]){0, 3, 1}, 3, s.perm, &s.n_perm, msg), KB_BAD_PARAM);
}

/* ---- the cost model ---------------------------------------------------------------------------
 */

Test(permute, cost_model_choices)
{
    pm_spec s = spec_of(PM_FEW_LARGE, 4, 0.0, 1.0);
    pm_problem p;
    pm_tile_block t;
    char msg[KB_MSG_SIZE] = "";
    cr_assert_eq(pm_generate_blocks(&s, 1, &p, msg), KB_OK, "%s", msg);
    cr_assert_eq(p.blocks[0].dims[0], 7264);
    /* The transpose: both axes long enough for whole sectors (8 floats), a sizeable region. */
    pm_tiled_cost(&p, &p.blocks[0], 3, &t);
    cr_expect_geq(t.lg[0], 3, "transpose tile %d x %d", 1 << t.lg[0], 1 << t.lg[1]);
    cr_expect_geq(t.lg[1], 3, "transpose tile %d x %d", 1 << t.lg[0], 1 << t.lg[1]);
    cr_expect_geq(t.log_p, 8);
    cr_expect_neq(t.pad_shift, 31, "a transpose pads its shared memory");
    pm_problem_free(&p);

    /* GEMM pays off for the 91x91 U of large_u, not for the 5x5 of recoupling_small. */
    s = spec_of(PM_LARGE_U, 4, 0.0, 1.0);
    cr_assert_eq(pm_generate_blocks(&s, 1, &p, msg), KB_OK, "%s", msg);
    cr_assert_eq(p.blocks[0].rows, 91);
    cr_expect_lt(pm_gemm_cost(&p, &p.blocks[0]), pm_tiled_cost(&p, &p.blocks[0], 3, NULL));
    pm_problem_free(&p);
    s = spec_of(PM_RECOUPLING_SMALL, 4, 0.0, 1.0);
    cr_assert_eq(pm_generate_blocks(&s, 1, &p, msg), KB_OK, "%s", msg);
    for (int b = 0; b < p.n_blocks; b++)
        cr_expect_gt(pm_gemm_cost(&p, &p.blocks[b]), pm_tiled_cost(&p, &p.blocks[b], 3, NULL),
                     "block %d (%dx%d)", b, p.blocks[b].rows, p.blocks[b].cols);
    pm_problem_free(&p);

    /* The fused kernel beats both for every large_u block (U 8x8 to 91x91 on 288-4800
     * elements a tree), in both element types; tiny recoupling blocks stay tiled. */
    for (int esize = 4; esize <= 8; esize += 4) {
        s = spec_of(PM_LARGE_U, esize, 0.0, 1.0);
        cr_assert_eq(pm_generate_blocks(&s, 1, &p, msg), KB_OK, "%s", msg);
        for (int b = 0; b < p.n_blocks; b++)
            cr_expect_eq(pm_choose_path(&p, &p.blocks[b], 3), 3, "f%d large_u block %d (%dx%d)",
                         8 * esize, b, p.blocks[b].rows, p.blocks[b].cols);
        pm_problem_free(&p);
    }
    s = spec_of(PM_MANY_SMALL, 4, 0.0, 1.0);
    cr_assert_eq(pm_generate_blocks(&s, 1, &p, msg), KB_OK, "%s", msg);
    for (int b = 0; b < p.n_blocks; b++)
        cr_expect_eq(pm_choose_path(&p, &p.blocks[b], 0), 1, "many_small block %d (%dx%d)", b,
                     p.blocks[b].rows, p.blocks[b].cols);
    pm_problem_free(&p);
}

/* The lean plan (v3): a 48^4 reversal runs whole 16 x 16 x 2 patches (v2: 16 x 32, a quarter
 * of the threads idle on every second tile along y), lean-only launches pipeline 1-4 tiles a
 * CTA, and a launch with general tiles keeps one a CTA (lean_per 0).  v4: the lean-only
 * launch's tiles are all vector tiles (whole, 16-byte aligned); not with general tiles. */
Test(permute, lean_plan_patches_and_tiles_a_cta)
{
    static const int64_t rev[] = {3, 2, 1, 0};
    pm_spec s = spec_of(PM_DENSE, 4, 0.0, 1.0);
    pm_problem p;
    pm_tile_plan tp;
    char msg[KB_MSG_SIZE] = "";
    s.n_dims = 4;
    s.dims[0] = s.dims[1] = s.dims[2] = s.dims[3] = 48;
    cr_assert_eq(pm_set_perm(rev, 4, s.perm, &s.n_perm, msg), KB_OK, "%s", msg);
    cr_assert_eq(pm_generate_blocks(&s, 1, &p, msg), KB_OK, "%s", msg);
    cr_assert_eq(pm_plan_tiles(&p, NULL, NULL, -1, &tp, msg), KB_OK, "%s", msg);
    cr_assert_eq(tp.tiles, 0);
    cr_assert_gt(tp.lean_tiles, 0);
    cr_expect(tp.lean_per >= 1 && tp.lean_per <= 4, "lean_per %d", tp.lean_per);
    cr_expect_eq(tp.lean_vec, 1, "a lean-only launch runs v4");
    for (int64_t i = 0; i < tp.lean_tiles; i++) {
        const pm_lean_tile *t = &tp.lean[i];
        const int info = t->info;
        cr_expect(pm_lean_vec_ok(t->src, t->dst, t->sx, t->dy, t->sz, t->dz, t->nx, t->ny, t->nz,
                                 info, 4),
                  "tile %lld: not a v4 vector tile", (long long)i);
        cr_assert_eq(t->nx * t->ny * t->nz,
                     1 << ((info & 15) + ((info >> 4) & 15) + ((info >> 8) & 15)),
                     "tile %lld: %d x %d x %d in a %d x %d x %d patch", (long long)i, t->nx, t->ny,
                     t->nz, 1 << (info & 15), 1 << ((info >> 4) & 15), 1 << ((info >> 8) & 15));
    }
    pm_tile_plan_free(&tp);
    pm_problem_free(&p);

    s = spec_of(PM_RECOUPLING_SMALL, 4, 0.0, 1.0);
    cr_assert_eq(pm_generate_blocks(&s, 1, &p, msg), KB_OK, "%s", msg);
    cr_assert_eq(pm_plan_tiles(&p, NULL, NULL, -1, &tp, msg), KB_OK, "%s", msg);
    cr_assert_gt(tp.tiles, 0);
    cr_expect_eq(tp.lean_per, 0);
    cr_expect_eq(tp.lean_vec, 0);
    pm_tile_plan_free(&tp);
    pm_problem_free(&p);
}

/* v6 (tile_split): mixed at scale 1 (43 MB of abelian blocks beside 139 tiny recoupling
 * blocks) moves its lean tiles into a lean-only launch of their own (v2's tile), and the split
 * plan still writes every element once, right; run 10's plan (opts without PM_PLAN_SPLIT)
 * stays one launch.  many_small at scale 1 with beta takes 32-thread tiles (2002 CTAs, one
 * wave of the general instance) where run 10's plan took 64 (1748 CTAs, more than a wave). */
Test(permute, v6_splits_mixed_and_fits_many_small_in_a_wave, .timeout = 120)
{
    char msg[KB_MSG_SIZE] = "";
    for (int bi = 0; bi < 2; bi++) {
        pm_spec s = spec_of(PM_MIXED, 4, bi ? 0.5 : 0.0, 1.0);
        pm_problem p;
        pm_tile_plan tp, old;
        int64_t bad = 0;
        cr_assert_eq(pm_generate(&s, 3, &p, msg), KB_OK, "%s", msg);
        cr_assert_eq(
            pm_plan_tiles_direct(&p, NULL, NULL, -1, PM_PLAN_DIRECT | PM_PLAN_SPLIT, &tp, msg),
            KB_OK, "%s", msg);
        cr_assert_eq(pm_plan_tiles_direct(&p, NULL, NULL, -1, PM_PLAN_DIRECT, &old, msg), KB_OK,
                     "%s", msg);
        cr_expect_eq(tp.split, 1, "beta %g: mixed at scale 1 not split", s.beta);
        cr_expect_gt(tp.tiles, 0);
        cr_expect_gt(tp.lean_tiles, 0);
        /* run 16: v2's tile, one a CTA, beat v3 and v4 in a split's lean launch */
        cr_expect_eq(tp.lean_per, 0, "a split's lean launch runs v2's tile");
        cr_expect_eq(tp.lean_vec, 0, "a split's lean launch runs v2's tile");
        cr_expect_eq(old.split, 0);
        cr_expect_eq(old.lean_per, 0);
        void *out = malloc((size_t)p.dst_elems * 4);
        int *writes = calloc((size_t)p.dst_elems, sizeof *writes);
        cr_assert(out && writes);
        memset(out, 0xff, (size_t)p.dst_elems * 4);
        emulate_tiled(&p, &tp, out, NULL, writes, 0);
        expect_once(&p, writes, "tiled v6");
        double err = pm_check(&p, out, &bad);
        cr_expect_leq(err, 1.0, "beta %g: split plan err %g/bound, %lld bad", s.beta, err,
                      (long long)bad);
        free(out);
        free(writes);
        pm_tile_plan_free(&tp);
        pm_tile_plan_free(&old);
        pm_problem_free(&p);
    }
    for (int esize = 4; esize <= 8; esize += 4) {
        pm_spec s = spec_of(PM_MANY_SMALL, esize, 0.5, 1.0);
        pm_problem p;
        pm_tile_plan tp, old;
        cr_assert_eq(pm_generate_blocks(&s, 1, &p, msg), KB_OK, "%s", msg);
        cr_assert_eq(
            pm_plan_tiles_direct(&p, NULL, NULL, -1, PM_PLAN_DIRECT | PM_PLAN_SPLIT, &tp, msg),
            KB_OK, "%s", msg);
        cr_assert_eq(pm_plan_tiles_direct(&p, NULL, NULL, -1, PM_PLAN_DIRECT, &old, msg), KB_OK,
                     "%s", msg);
        cr_expect_eq(tp.len_log, 0, "f%d: many_small beta 0.5 at %d threads", 8 * esize,
                     32 << tp.len_log);
        cr_expect_eq(tp.split, 0);
        cr_expect_eq(old.len_log, 1, "run 10's choice moved");
        pm_tile_plan_free(&tp);
        pm_tile_plan_free(&old);
        pm_problem_free(&p);
    }
}

/* The fused kernel's column tables on large_u (the permute swaps two halves of rank 6, so
 * consecutive destination elements are a source stride of 8-125 elements apart): every tile
 * lists each of its block's elements once, and a warp's gather (32 table entries) touches few
 * 32-byte sectors: 5.2 on average, where destination order touches 14.4). */
Test(permute, fused_tables_gather_runs)
{
    pm_spec s = spec_of(PM_LARGE_U, 4, 0.0, 1.0);
    pm_problem p;
    pm_fused_plan f;
    char msg[KB_MSG_SIZE] = "";
    double sectors = 0.0, loads = 0.0;
    cr_assert_eq(pm_generate_blocks(&s, 1, &p, msg), KB_OK, "%s", msg);
    cr_assert_eq(pm_plan_fused(&p, NULL, &f, msg), KB_OK, "%s", msg);
    cr_assert_eq(f.n_blocks, p.n_blocks);
    for (int b = 0; b < f.n_blocks; b++) {
        const pm_fused_block *fb = &f.blk[b];
        char *seen = calloc((size_t)fb->n, 1);
        for (int64_t c = 0; c < (fb->n + PM_FUSED_BN - 1) / PM_FUSED_BN * PM_FUSED_BN; c++) {
            const int32_t d = f.dcol[fb->tab + c];
            cr_assert(d >= -1 && d < fb->n);
            if (d >= 0) {
                cr_expect_eq(seen[d], 0, "block %d: element %d listed twice", b, d);
                seen[d] = 1;
            }
        }
        for (int32_t e = 0; e < fb->n; e++)
            cr_expect_eq(seen[e], 1, "block %d: element %d not listed", b, e);
        free(seen);
        for (int64_t w = 0; w < (fb->n + 31) / 32; w++) {
            int64_t sec[32];
            int ns = 0;
            for (int l = 0; l < 32; l++) {
                const int32_t so = f.gather[fb->tab + w * 32 + l].soff;
                int found = 0;
                if (so < 0)
                    continue;
                for (int i = 0; i < ns; i++)
                    found |= sec[i] == so / 8;
                if (!found)
                    sec[ns++] = so / 8;
            }
            sectors += ns;
            loads++;
        }
    }
    cr_expect_lt(sectors / loads, 7.0, "%.2f sectors per warp gather", sectors / loads);
    pm_fused_plan_free(&f);
    pm_problem_free(&p);
}

/* ---- through kbench ------------------------------------------------------------------------- */

Test(permute, host_verifies_on_every_preset_and_device_variants_are_listed, .timeout = 300)
{
    kbi_result_set set = {0};
    size_t ok = 0;
    int rc = run_profile_text(
        "[run]\nwarmup = 0\nmin_samples = 1\nmin_time = 0\ntimeout = 60\ncache = hot\n"
        "[permute]\nvariants = host, per_element, tiled, gemm, auto, copy, fused, fused_async, "
        "fused_mma\n"
        "preset = abelian_small, recoupling_small, many_small, large_u, few_large, mixed, "
        "dense, custom\ndtype = f32, f64\nbeta = 0, 0.5\nscale = 0.002\n"
        "[permute.ranks]\nvariants = host\npreset = dense\n"
        "dims = 8x8x8x8x8x8, 5x5x5x5x5x5x5x5\nperm = [5,3,1,0,2,4], [7,5,3,1,0,2,4,6]\n"
        "zip = dims+perm\n",
        &set);
    cr_assert_eq(set.n_cases, 9 * 8 * 2 * 2 + 2);
    for (size_t i = 0; i < set.n_cases; i++) {
        const kbi_case_result *c = &set.cases[i];
        if (strcmp(c->variant, "host") == 0) {
            cr_expect_eq(c->status, KBI_ST_OK, "%s: %s", c->id, c->message);
            cr_expect(c->has_verify && c->verify_passed, "%s", c->id);
            ok += c->status == KBI_ST_OK && c->verify_passed;
        } else {
            /* No GPU here: skipped; on the GPU machine: verified. */
            cr_expect(c->status == KBI_ST_SKIPPED || (c->status == KBI_ST_OK && c->verify_passed),
                      "%s: %s", c->id, c->message);
        }
    }
    cr_expect_eq(ok, 34);
    cr_expect_eq(rc, 0);
    kbi_results_free(&set);
}

Test(permute, shipped_profile_parses)
{
    const char *dirs[] = {KBENCH_TEST_PLUGINS, NULL};
    int req[] = {1};
    kbi_plugin_set real;
    kbi_profile p;
    kbi_buf errors = {0};
    kbi_case *cases = NULL;
    size_t n = 0;
    char err[KBI_ERR_SIZE], path[4096];
    cr_assert_eq(kbi_plugins_load(dirs, req, &real, err), KBI_OK, "%s", err);
    snprintf(path, sizeof path, "%s/profiles/permute.ini", KBENCH_TEST_SOURCE_DIR);
    cr_assert_eq(kbi_profile_load(path, &real, &p, &errors), KBI_OK, "%s",
                 errors.data ? errors.data : "");
    cr_assert_eq(kbi_profile_cases(&p, &cases, &n), KBI_OK);
    cr_expect_eq(n, 255, "profiles/permute.ini has %zu cases", n);
    kbi_cases_free(cases, n);
    kbi_buf_free(&errors);
    kbi_profile_free(&p);
    kbi_plugins_free(&real);
}
