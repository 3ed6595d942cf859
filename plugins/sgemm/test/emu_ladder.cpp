/* Drives the hand-written sgemm kernels (01..09) through the CPU emulation (sgemm_ladder_emu,
 * tests/emu) on tail shapes, odd leading dimensions, misaligned pointers, beta == 0 with a NaN
 * C0, and C0 == C; checks the result against a double reference and that nothing outside C
 * changed.
 *   sgemm_ladder_emu [variant]     exit status 0 when every case passes */
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "emu_data.h"
#include "kernels/kernels.h"

typedef cudaError_t (*launcher)(int, int, int, float, const float *, int, const float *, int, float,
                                const float *, float *, int, cudaStream_t);
struct Variant {
    const char *name;
    launcher run;
};
static const Variant kVariants[] = {
    {"naive", run_naive},       {"coalesced", run_coalesced}, {"smem_tiled", run_smem_tiled},
    {"reg_1d", run_reg_1d},     {"reg_2d", run_reg_2d},       {"vectorized", run_vectorized},
    {"cp_async", run_cp_async}, {"swizzled", run_swizzled},   {"wide_epilogue", run_wide_epilogue},
};

/* kernels.h's launcher as an emu_gemm: `bound` is the Variant. */
static cudaError_t run_variant(int M, int N, int K, float alpha, const float *A, int lda,
                               const float *B, int ldb, float beta, const float *C0, float *C,
                               int ldc, const void *bound)
{
    return ((const Variant *)bound)->run(M, N, K, alpha, A, lda, B, ldb, beta, C0, C, ldc, 0);
}

/* Checked against |ref| (these cases do not cancel). */
static bool run_case(const Variant &v, const Case &c)
{
    const Outcome o = run_gemm_case(c, run_variant, &v);
    const bool ok =
        o.launch == cudaSuccess && std::isfinite(o.err_ref) && o.err_ref <= o.tol && !o.outside;
    std::printf("%-14s %5dx%-5dx%-5d pad=%d shift=%d beta=%g%s%s  err=%.2e tol=%.2e %s\n", v.name,
                c.M, c.N, c.K, c.pad, c.shift, c.beta, c.alias ? " alias" : "",
                c.nan_c0 ? " nanC0" : "", o.err_ref, o.tol, verdict_of(o, ok));
    return ok;
}

int main(int argc, char **argv)
{
    const char *only = argc > 1 ? argv[1] : nullptr;
    const std::vector<Case> cases = edge_cases_and({
        {128, 128, 16, 0, 0, 1.0f, 0.5f, false, false},   /* one full tile, vector paths */
        {256, 128, 48, 0, 0, -0.75f, 2.0f, false, false}, /* several K tiles: ring wraps */
        {4097 % 300, 33, 17, 0, 0, 1.0f, 0.5f, false, false},
    });
    int failed = 0;
    for (const auto &v : kVariants) {
        if (only && std::string(only) != v.name)
            continue;
        for (const auto &c : cases)
            failed += !run_case(v, c);
    }
    std::printf("%s: %d failure(s)\n", failed ? "FAILED" : "passed", failed);
    return failed ? 1 : 0;
}
