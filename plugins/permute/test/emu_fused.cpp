/* Runs kernels/04_fused.cu itself on the CPU (compiled as C++ against the sgemm plugin's
 * test/emu_cuda.h: a std::thread per CUDA thread, a std::barrier per __syncthreads), so its
 * shared-memory indexing, double buffering and barriers are checked without a GPU: every
 * recoupling block of a few presets, float32 and float64, beta 0 and not, both fill paths
 * (registers; cp.async, which the CPU copies at issue; the DMMA product, whose warp-wide
 * step each CPU thread computes for its own fragment, through registers and, float32, through
 * the cp.async ring), against the double reference within
 * the plugin's bound (pm_check; abelian blocks are not the fused kernel's and are left out).
 * Built and run by run_emu_fused.sh (ASan+UBSan, TSan). */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

#include <cuda_runtime_api.h>

#include "kbench/plugin.h"
#include "permute.h"
#include "spec.h"

/* The kernel's launch checks the last error; nothing on the CPU sets one. */
extern "C" cudaError_t cudaGetLastError(void)
{
    return cudaSuccess;
}

int main()
{
    int fails = 0;
    for (int mode = 0; mode < 5; mode++) /* regs, async, mma, ring of 3, ring of 2 */
        for (pm_preset preset : {PM_LARGE_U, PM_RECOUPLING_SMALL, PM_MIXED, PM_CUSTOM})
            for (int esize = 4; esize <= 8; esize += 4)
                for (double beta : {0.0, -0.75}) {
                    pm_spec s = pm_test_spec(preset, esize, 1.5, beta,
                                             preset == PM_LARGE_U ? 0.1
                                             : preset == PM_MIXED ? 0.05
                                                                  : 0.3);
                    pm_problem p;
                    pm_fused_plan f;
                    char msg[KB_MSG_SIZE] = "";
                    s.rows_max = 40; /* custom: U up to 40 x 37 */
                    s.cols_max = 37;
                    if (pm_generate(&s, 3 + preset, &p, msg) != KB_OK ||
                        pm_plan_fused(&p, NULL, &f, msg) != KB_OK) {
                        printf("%s: %s\n", pm_preset_name(preset), msg);
                        return 1;
                    }
                    const size_t bytes = (size_t)p.dst_elems * esize;
                    char *out = (char *)malloc(bytes);
                    memset(out, 0xff, bytes); /* NaN: an element nobody writes fails */
                    const int fill = mode < 4 ? mode : PM_FUSED_FILL_RING;
                    f.fill = fill;
                    f.ctas = 3;
                    f.ring = mode == 4 ? 2 : 3;
                    int rc = pm_run_fused(esize, &f, f.igather, f.idcol, f.item, p.src, p.cin, p.u,
                                          out, p.alpha, p.beta, NULL);
                    /* Checked: the recoupling blocks (the problem with its abelian blocks left
                     * out). */
                    pm_problem q = p;
                    pm_block *kept = (pm_block *)malloc((size_t)(p.n_blocks + 1) * sizeof *kept);
                    q.blocks = kept;
                    q.n_blocks = 0;
                    for (int b = 0; b < p.n_blocks; b++)
                        if (!pm_is_unique(&p.blocks[b]))
                            kept[q.n_blocks++] = p.blocks[b];
                    int64_t bad = 0;
                    double err = pm_check(&q, out, &bad);
                    free(kept);
                    printf("%-8s %-16s f%d beta %5.2f: %4lld tiles, err/bound %.3g, %lld bad\n",
                           mode == 4                     ? "ring2"
                           : fill == PM_FUSED_FILL_RING  ? "ring"
                           : fill == PM_FUSED_FILL_MMA   ? "mma"
                           : fill == PM_FUSED_FILL_ASYNC ? "async"
                                                         : "regs",
                           pm_preset_name(preset), 8 * esize, beta, (long long)f.items, err,
                           (long long)bad);
                    fails += rc != 0 || !(err <= 1.0);
                    free(out);
                    pm_fused_plan_free(&f);
                    pm_problem_free(&p);
                }
    printf(fails ? "FAILED: %d cases\n" : "all cases verified\n", fails);
    return fails != 0;
}
