/* The permute plugin's host code (generator, reference, check, planner), compiled into this
 * test; its kernels run from their own source on the CPU in tests/emu (permute_tiled_emu,
 * permute_per_element_emu, permute_fused_emu, in the sanitizer build):
 *   - hand-checked tiny cases: a 2x3 transpose, a 2-tree recoupling with a known U;
 *   - the host variant verifies on every preset (kbench run, small scale), device variants skip;
 *   - the check fails an unwritten (NaN) element and an inexact abelian copy;
 *   - the tiled plans: direct tiles as tile_direct says, v4 patches whose stash is a bijection
 *     without bank conflicts, lean patches and tiles a CTA, v6's split;
 *   - the cost model: large tiles for the 7264^2 transpose, GEMM over tiled for 91x91 U only,
 *     the fused kernel for every large_u block and for no many_small block; the fused kernel's
 *     column tables;
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

/* ---- the v4 patch layout (permute.h, pm_lean_vec_at) ------------------------------------------
 * The kernel's own source runs on the CPU in permute_tiled_emu (tests/emu), which checks its
 * results; what no emulation sees is the shared-memory bank of each access.  Here, for every
 * v4 transpose patch shape the planner picks: the vector slots 02_tiled.cu's vec_tile stashes
 * (row y + j's slot is row y's XOR j << lx, each slot once, inside the patch) and reads (whole
 * 16-byte groups), and a warp's stash without a bank conflict where the shape allows it. */

/* The stash and read of one whole TX x TY x TZ patch (2^lx, 2^ly, 2^lz) by nt threads. */
static void check_vec_patch(int lx, int ly, int lz, int esize, int nt)
{
    const int vw = 16 / esize, lv = vw == 4 ? 2 : 1, nv = PM_LEAN_EPT(esize) / vw;
    const int lxyz = lx + ly + lz, slots = 1 << lxyz;
    char *stashed = calloc((size_t)slots, 1);
    cr_assert(stashed);
    for (int w0 = 0; w0 < nt; w0 += 32) /* warps */
        for (int i = 0; i < nv; i++)
            for (int j = 0; j < vw; j++) {
                int lines[32] = {0}, used[32] = {0}, ways = 1; /* banks of 4 bytes */
                for (int th = w0; th < w0 + 32 && th < nt; th++) {
                    const int32_t v = th + nt * i, y = (v & ((1 << (ly - lv)) - 1)) << lv;
                    const int32_t x = (v >> (ly - lv)) & ((1 << lx) - 1);
                    const int32_t z = v >> (ly - lv + lx), row = (z << ly) + y + j;
                    if (z >= 1 << lz)
                        continue;
                    const int32_t at = pm_lean_vec_at(row - j, x, lx, ly, lxyz, esize) ^ (j << lx);
                    cr_assert_eq(at, pm_lean_vec_at(row, x, lx, ly, lxyz, esize),
                                 "%dx%dx%d f%d: row %d's slot is not row %d's XOR %d", 1 << lx,
                                 1 << ly, 1 << lz, 8 * esize, row, row - j, j << lx);
                    cr_assert(at >= 0 && at < slots, "slot %d outside the patch", at);
                    cr_assert_eq(stashed[at], 0, "slot %d stashed twice", at);
                    stashed[at] = 1;
                    /* f64: a half-warp a shared-memory wavefront */
                    if (esize == 8 && th == w0 + 16)
                        for (int b = 0; b < 32; b++)
                            used[b] = 0;
                    for (int b4 = 0; b4 < esize / 4; b4++) {
                        const int64_t word = (int64_t)at * (esize / 4) + b4;
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
                if (lx >= 4 && ly <= (esize == 4 ? 5 : 4) && (esize == 8 || ly >= 3))
                    cr_expect_eq(ways, 1, "%dx%dx%d f%d: a bank conflict on the stash", 1 << lx,
                                 1 << ly, 1 << lz, 8 * esize);
            }
    for (int th = 0; th < nt; th++)
        for (int i = 0; i < nv; i++) {
            const int32_t v = th + nt * i, x = (v & ((1 << (lx - lv)) - 1)) << lv;
            const int32_t y = (v >> (lx - lv)) & ((1 << ly) - 1), z = v >> (lx - lv + ly);
            if (z >= 1 << lz)
                continue;
            const int32_t at = pm_lean_vec_at((z << ly) + y, x, lx, ly, lxyz, esize);
            cr_assert_eq(at % vw, 0, "%dx%dx%d f%d: an unaligned vector read", 1 << lx, 1 << ly,
                         1 << lz, 8 * esize);
            for (int k = 0; k < vw; k++)
                cr_assert(stashed[at + k], "slot %d read but never stashed", at + k);
        }
    free(stashed);
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
    /* an integer-list perm (ranks up to 8) that is not a permutation */
    cr_expect_eq(pm_set_perm((const int64_t[]){0, 0, 1}, 3, perm, &n, msg), KB_BAD_PARAM);
    cr_expect_eq(pm_set_perm((const int64_t[]){0, 3, 1}, 3, perm, &n, msg), KB_BAD_PARAM);
    cr_expect_eq(pm_set_perm((const int64_t[]){7, 5, 3, 1, 0, 2, 4, 6}, 8, perm, &n, msg), KB_OK);
    cr_expect_eq(n, 8);
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

/* ---- the tiled plans ---------------------------------------------------------------------------
 * (The kernels that run them: permute_tiled_emu, permute_per_element_emu and permute_fused_emu
 * in tests/emu, the kernels' own source on the CPU under ASan.) */

static const double preset_scale[PM_N_PRESETS] = {
    [PM_ABELIAN_SMALL] = 0.5, [PM_RECOUPLING_SMALL] = 0.3, [PM_MANY_SMALL] = 0.05,
    [PM_LARGE_U] = 0.1,       [PM_FEW_LARGE] = 0.0005,     [PM_MIXED] = 0.05,
    [PM_DENSE] = 0.02,        [PM_CUSTOM] = 1.0,
};

/* Direct tiles where the model wants them (recoupling_small and many_small put tiny recoupling
 * blocks on them) and none with tile_direct = 0 (PM_PLAN_DIRECT off), at every tile length. */
Test(permute, direct_tiles_follow_tile_direct)
{
    char msg[KB_MSG_SIZE] = "";
    for (int preset = 0; preset < PM_N_PRESETS; preset++) {
        pm_problem p;
        pm_spec s = spec_of((pm_preset)preset, 4, 0.0, preset_scale[preset]);
        cr_assert_eq(pm_generate_blocks(&s, 5 + preset, &p, msg), KB_OK, "%s", msg);
        for (int len = -1; len <= PM_N_LENGTHS; len++) {
            const int direct = len < PM_N_LENGTHS;
            pm_tile_plan tp;
            int direct_blocks = 0;
            cr_assert_eq(pm_plan_tiles_direct(&p, NULL, NULL, direct ? len : -1, direct, &tp, msg),
                         KB_OK, "%s", msg);
            for (int b = 0; b < tp.n_blocks; b++)
                direct_blocks += (tp.blk[b].flags & PM_FLAG_DIRECT) != 0;
            if (!direct)
                cr_expect_eq(direct_blocks, 0, "%s: tile_direct = 0 planned direct tiles",
                             pm_preset_name((pm_preset)preset));
            else if (len < 0 && (preset == PM_RECOUPLING_SMALL || preset == PM_MANY_SMALL))
                cr_expect_gt(direct_blocks, 0, "%s: no direct tiles",
                             pm_preset_name((pm_preset)preset));
            pm_tile_plan_free(&tp);
        }
        pm_problem_free(&p);
    }
}

/* Every v4 transpose patch shape of the plans of every preset and of a 48^4 reversal. */
Test(permute, lean_vec_patches_stash_once_and_without_bank_conflicts)
{
    static const int64_t rev[] = {3, 2, 1, 0};
    char msg[KB_MSG_SIZE] = "";
    int seen[2][16][16][16] = {{{{0}}}}, shapes = 0;
    for (int preset = 0; preset <= PM_N_PRESETS; preset++)
        for (int esize = 4; esize <= 8; esize += 4) {
            pm_problem p;
            pm_tile_plan tp;
            pm_spec s;
            if (preset < PM_N_PRESETS) {
                s = spec_of((pm_preset)preset, esize, 0.0, preset_scale[preset]);
            } else {
                s = spec_of(PM_DENSE, esize, 0.0, 1.0);
                s.n_dims = 4;
                s.dims[0] = s.dims[1] = s.dims[2] = s.dims[3] = 48;
                cr_assert_eq(pm_set_perm(rev, 4, s.perm, &s.n_perm, msg), KB_OK, "%s", msg);
            }
            cr_assert_eq(pm_generate_blocks(&s, 5 + preset, &p, msg), KB_OK, "%s", msg);
            cr_assert_eq(pm_plan_tiles(&p, NULL, NULL, -1, &tp, msg), KB_OK, "%s", msg);
            for (int64_t i = 0; tp.lean_vec && tp.tiles == 0 && i < tp.lean_tiles; i++) {
                const pm_lean_tile *t = &tp.lean[i];
                const int lx = t->info & 15, ly = (t->info >> 4) & 15, lz = (t->info >> 8) & 15;
                if ((t->info & PM_LEAN_COPY) ||
                    !pm_lean_vec_ok(t->src, t->dst, t->sx, t->dy, t->sz, t->dz, t->nx, t->ny, t->nz,
                                    t->info, esize) ||
                    seen[esize == 8][lx][ly][lz]++)
                    continue;
                check_vec_patch(lx, ly, lz, esize, 32 << tp.len_log);
                shapes++;
            }
            pm_tile_plan_free(&tp);
            pm_problem_free(&p);
        }
    cr_expect_gt(shapes, 0, "no v4 transpose patch planned");
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
 * blocks) moves its lean tiles into a lean-only launch of their own (v2's tile; the split
 * launches run in permute_tiled_emu); run 10's plan (opts without PM_PLAN_SPLIT) stays one
 * launch.  many_small at scale 1 with beta takes 32-thread tiles (2002 CTAs, one wave of the
 * general instance) where run 10's plan took 64 (1748 CTAs, more than a wave). */
Test(permute, v6_splits_mixed_and_fits_many_small_in_a_wave)
{
    char msg[KB_MSG_SIZE] = "";
    for (int bi = 0; bi < 2; bi++) {
        pm_spec s = spec_of(PM_MIXED, 4, bi ? 0.5 : 0.0, 1.0);
        pm_problem p;
        pm_tile_plan tp, old;
        cr_assert_eq(pm_generate_blocks(&s, 3, &p, msg), KB_OK, "%s", msg);
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
