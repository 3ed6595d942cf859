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

struct Case {
    int M, N, K, pad, shift;
    float alpha, beta;
    bool alias; /* C0 == C */
    bool nan_c0;
};

static bool run_case(const Variant &v, const Case &c)
{
    const int lda = c.M + c.pad, ldb = c.K + c.pad, ldc = c.M + c.pad;
    Mat A = make(c.M, c.K, lda, c.shift, false), B = make(c.K, c.N, ldb, c.shift, false);
    Mat C0 = make(c.M, c.N, ldc, c.shift, c.nan_c0);
    Mat C = make(c.M, c.N, ldc, c.shift, false);
    std::vector<float> before(C.p, C.p + C.n);
    if (c.alias)
        std::memcpy(C.p, C0.p, C.n * sizeof(float));
    const float *c0 = c.alias ? C.p : C0.p;
    std::vector<float> c0copy(c0, c0 + C.n);
    const cudaError_t e =
        v.run(c.M, c.N, c.K, c.alpha, A.p, lda, B.p, ldb, c.beta, c0, C.p, ldc, 0);

    double e2 = 0, r2 = 0;
    bool outside = false;
    for (int n = 0; n < c.N; n++) {
        for (int m = 0; m < ldc && (size_t)m + (size_t)n * ldc < C.n; m++) {
            const size_t i = (size_t)m + (size_t)n * ldc;
            if (m >= c.M) { /* padding between columns must be untouched */
                if (std::memcmp(&C.p[i], c.alias ? &c0copy[i] : &before[i], 4))
                    outside = true;
                continue;
            }
            double ref = 0;
            for (int k = 0; k < c.K; k++)
                ref += (double)A.p[m + (size_t)k * lda] * B.p[k + (size_t)n * ldb];
            ref = c.alpha * ref + (c.beta != 0 ? c.beta * (double)c0copy[i] : 0.0);
            e2 += (C.p[i] - ref) * (C.p[i] - ref);
            r2 += ref * ref;
        }
    }
    const double err = std::sqrt(e2 / r2);
    const double tol = 16.0 * std::sqrt((double)c.K) * std::ldexp(1.0, -24);
    const bool ok = e == cudaSuccess && std::isfinite(err) && err <= tol && !outside;
    std::printf("%-14s %5dx%-5dx%-5d pad=%d shift=%d beta=%g%s%s  err=%.2e tol=%.2e %s\n", v.name,
                c.M, c.N, c.K, c.pad, c.shift, c.beta, c.alias ? " alias" : "",
                c.nan_c0 ? " nanC0" : "", err, tol,
                e != cudaSuccess ? "FAIL (launch error)"
                                 : (ok ? "ok" : (outside ? "FAIL (wrote outside C)" : "FAIL")));
    delete A.store;
    delete B.store;
    delete C0.store;
    delete C.store;
    return ok;
}

int main(int argc, char **argv)
{
    const char *only = argc > 1 ? argv[1] : nullptr;
    const Case cases[] = {
        {1, 1, 1, 0, 0, 1.0f, 0.5f, false, false},
        {128, 128, 16, 0, 0, 1.0f, 0.5f, false, false},   /* one full tile, vector paths */
        {256, 128, 48, 0, 0, -0.75f, 2.0f, false, false}, /* several K tiles: ring wraps */
        {129, 130, 33, 0, 0, 1.0f, 0.5f, false, false},   /* tails in M, N, K */
        {200, 67, 100, 0, 0, 1.0f, 0.5f, false, false},   /* M%4 == 0, tails elsewhere */
        {4097 % 300, 33, 17, 0, 0, 1.0f, 0.5f, false, false},
        {1, 300, 40, 0, 0, 1.0f, 0.5f, false, false},   /* a single row */
        {131, 1, 9, 0, 0, 1.0f, 0.5f, false, false},    /* a single column */
        {160, 136, 64, 3, 0, 1.0f, 0.5f, false, false}, /* odd leading dimensions */
        {160, 136, 64, 4, 1, 1.0f, 0.5f, false, false}, /* misaligned base pointers */
        {128, 128, 32, 4, 0, 1.0f, 0.0f, false, true},  /* beta 0: NaN C0 must not be read */
        {144, 140, 24, 0, 0, 1.0f, 0.5f, true, false},  /* in place: C0 == C */
        {64, 64, 1, 0, 0, 1.0f, 0.5f, false, false},    /* K = 1 */
    };
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
