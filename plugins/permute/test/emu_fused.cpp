/* Runs kernels/04_fused.cu itself on the CPU (permute_fused_emu, tests/emu), so its
 * shared-memory indexing, double buffering and barriers are checked without a GPU: every
 * recoupling block of a few presets and of a rank-7 custom tensor, float32 and float64, beta 0
 * and not, every fill (registers; cp.async, which the CPU copies at issue; the DMMA product,
 * whose warp-wide step each CPU thread computes for its own fragment, through registers and,
 * float32, through the cp.async ring of 3 and of 2 stages), against the double reference
 * within the plugin's bound (pm_check; abelian blocks are not the fused kernel's and are left
 * out).  Exit status: 0 when every case verified. */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

#include "kbench/plugin.h"
#include "permute.h"
#include "spec.h"

enum { MODES = 5 }; /* registers, async, mma, ring of 3, ring of 2 */
static const char *const mode_name[MODES] = {"regs", "async", "mma", "ring", "ring2"};

/* One fill mode on problem s; returns whether it verified. */
static bool run_case(int mode, const pm_spec &s, const char *name, uint64_t seed)
{
    pm_problem p;
    pm_fused_plan f;
    char msg[KB_MSG_SIZE] = "";
    if (pm_generate(&s, seed, &p, msg) != KB_OK || pm_plan_fused(&p, NULL, &f, msg) != KB_OK) {
        printf("%s: %s\n", name, msg);
        return false;
    }
    const int esize = p.esize;
    const size_t bytes = (size_t)p.dst_elems * esize;
    char *out = (char *)malloc(bytes);
    memset(out, 0xff, bytes); /* NaN: an element nobody writes fails */
    f.fill = mode < 4 ? mode : PM_FUSED_FILL_RING;
    f.ctas = 3;
    f.ring = mode == 4 ? 2 : 3;
    const int rc = pm_run_fused(esize, &f, f.igather, f.idcol, f.item, p.src, p.cin, p.u, out,
                                p.alpha, p.beta, NULL);
    /* Checked: the recoupling blocks (the problem with its abelian blocks left out). */
    pm_problem q = p;
    pm_block *kept = (pm_block *)malloc((size_t)(p.n_blocks + 1) * sizeof *kept);
    q.blocks = kept;
    q.n_blocks = 0;
    for (int b = 0; b < p.n_blocks; b++)
        if (!pm_is_unique(&p.blocks[b]))
            kept[q.n_blocks++] = p.blocks[b];
    int64_t bad = 0;
    const double err = pm_check(&q, out, &bad);
    free(kept);
    printf("%-6s %-16s f%d beta %5.2f: %4lld tiles, err/bound %.3g, %lld bad%s\n", mode_name[mode],
           name, 8 * esize, p.beta, (long long)f.items, err, (long long)bad,
           rc != 0 ? ", launch failed" : "");
    free(out);
    pm_fused_plan_free(&f);
    pm_problem_free(&p);
    return rc == 0 && err <= 1.0;
}

int main()
{
    int fails = 0, cases = 0;
    for (int mode = 0; mode < MODES; mode++)
        for (int esize = 4; esize <= 8; esize += 4)
            for (double beta : {0.0, -0.75}) {
                for (pm_preset preset : {PM_LARGE_U, PM_RECOUPLING_SMALL, PM_MIXED, PM_CUSTOM}) {
                    pm_spec s = pm_test_spec(preset, esize, 1.5, beta,
                                             preset == PM_LARGE_U ? 0.1
                                             : preset == PM_MIXED ? 0.05
                                                                  : 0.3);
                    s.rows_max = 40; /* custom: U up to 40 x 37 */
                    s.cols_max = 37;
                    fails += !run_case(mode, s, pm_preset_name(preset), 3 + preset);
                    cases++;
                }
                char msg[KB_MSG_SIZE] = "";
                pm_spec s;
                if (pm_test_spec_rank7(esize, 1.5, beta, &s, msg) != KB_OK) {
                    printf("custom rank 7: %s\n", msg);
                    return 1;
                }
                fails += !run_case(mode, s, "custom rank 7", 13);
                cases++;
            }
    return emu_summary(fails, cases);
}
