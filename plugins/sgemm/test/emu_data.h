/* The cases of the sgemm CPU emulations (emu_ladder.cpp for kernels 01-09, emu_warptile.cpp
 * for 10) and their check: a fixed-seed generator of uniform [-1, 1) values, column-major
 * matrices laid out to catch out-of-bounds reads, and the result against a double reference
 * with the padding between C's columns left alone. */
#ifndef KBENCH_SGEMM_EMU_DATA_H
#define KBENCH_SGEMM_EMU_DATA_H

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <vector>

#include <cuda_runtime_api.h>

static uint64_t rng = 0x1234567;
static float uniform()
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((double)(rng >> 40) / 8388608.0 - 1.0);
}

/* A column-major rows x cols matrix with leading dimension ld, allocated to end exactly after
 * its last element (ASan sees a read past it), optionally starting `shift` floats into the
 * allocation (a misaligned base); all NaN when `nan`, random otherwise. */
struct Mat {
    std::vector<float> *store;
    float *p;
    size_t n;
};
static Mat make(int rows, int cols, int ld, int shift, bool nan)
{
    const size_t n = (size_t)ld * (cols - 1) + rows;
    auto *v = new std::vector<float>(n + shift);
    for (auto &x : *v)
        x = nan ? std::numeric_limits<float>::quiet_NaN() : uniform();
    return Mat{v, v->data() + shift, n};
}

struct Case {
    int M, N, K, pad, shift;
    float alpha, beta;
    bool alias; /* C0 == C */
    bool nan_c0;
};

/* The shapes every kernel must take: tails, a single row or column, odd leading dimensions,
 * misaligned base pointers, beta 0 with a NaN C0, C0 == C, K = 1 (each driver adds its
 * kernels' own tile sizes). */
static const Case kEdgeCases[] = {
    {1, 1, 1, 0, 0, 1.0f, 0.5f, false, false},
    {129, 130, 33, 0, 0, 1.0f, 0.5f, false, false}, /* tails in M, N, K */
    {200, 67, 100, 0, 0, 1.0f, 0.5f, false, false}, /* M % 4 == 0, tails elsewhere */
    {1, 300, 40, 0, 0, 1.0f, 0.5f, false, false},   /* a single row */
    {131, 1, 9, 0, 0, 1.0f, 0.5f, false, false},    /* a single column */
    {160, 136, 64, 3, 0, 1.0f, 0.5f, false, false}, /* odd leading dimensions */
    {160, 136, 64, 4, 1, 1.0f, 0.5f, false, false}, /* misaligned base pointers */
    {128, 128, 32, 4, 0, 1.0f, 0.0f, false, true},  /* beta 0: NaN C0 must not be read */
    {144, 140, 24, 0, 0, 1.0f, 0.5f, true, false},  /* in place: C0 == C */
    {64, 64, 1, 0, 0, 1.0f, 0.5f, false, false},    /* K = 1 */
};

/* kEdgeCases and then more. */
static std::vector<Case> edge_cases_and(std::initializer_list<Case> more)
{
    std::vector<Case> all(std::begin(kEdgeCases), std::end(kEdgeCases));
    all.insert(all.end(), more);
    return all;
}

/* A launcher of kernels.h's signature, bound to what the driver runs. */
typedef cudaError_t (*emu_gemm)(int M, int N, int K, float alpha, const float *A, int lda,
                                const float *B, int ldb, float beta, const float *C0, float *C,
                                int ldc, const void *bound);

/* One case run: the launch's error, the result's relative error against |ref| and against the
 * magnitude |alpha|*sum|a*b| + |beta*c0| (which bounds fp32 rounding whatever the signs: a
 * small case whose terms happen to cancel, one element at 1x1x1, fails against |ref| alone
 * on correct arithmetic), whether anything outside C changed, and the tolerance. */
struct Outcome {
    cudaError_t launch;
    double err_ref, err_mag, tol;
    bool outside;
};

static Outcome run_gemm_case(const Case &c, emu_gemm run, const void *bound)
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
    Outcome o = {};
    o.launch = run(c.M, c.N, c.K, c.alpha, A.p, lda, B.p, ldb, c.beta, c0, C.p, ldc, bound);
    double e2 = 0, r2 = 0, m2 = 0;
    for (int n = 0; n < c.N; n++) {
        for (int m = 0; m < ldc && (size_t)m + (size_t)n * ldc < C.n; m++) {
            const size_t i = (size_t)m + (size_t)n * ldc;
            if (m >= c.M) { /* padding between columns must be untouched */
                if (std::memcmp(&C.p[i], c.alias ? &c0copy[i] : &before[i], 4))
                    o.outside = true;
                continue;
            }
            double ref = 0, mag = 0;
            for (int k = 0; k < c.K; k++) {
                const double p = (double)A.p[m + (size_t)k * lda] * B.p[k + (size_t)n * ldb];
                ref += p;
                mag += std::fabs(p);
            }
            const double c0v = c.beta != 0 ? c.beta * (double)c0copy[i] : 0.0;
            ref = c.alpha * ref + c0v;
            mag = std::fabs(c.alpha) * mag + std::fabs(c0v);
            e2 += (C.p[i] - ref) * (C.p[i] - ref);
            r2 += ref * ref;
            m2 += mag * mag;
        }
    }
    o.err_ref = std::sqrt(e2 / r2);
    o.err_mag = std::sqrt(e2 / m2);
    o.tol = 16.0 * std::sqrt((double)c.K) * std::ldexp(1.0, -24);
    delete A.store;
    delete B.store;
    delete C0.store;
    delete C.store;
    return o;
}

/* What a failed case shows. */
static const char *verdict_of(const Outcome &o, bool ok)
{
    if (o.launch != cudaSuccess)
        return "FAIL (launch error)";
    return ok ? "ok" : o.outside ? "FAIL (wrote outside C)" : "FAIL";
}

#endif
