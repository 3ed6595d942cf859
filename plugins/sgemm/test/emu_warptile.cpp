/* Drives kernels/10_warptile.cu through the CPU emulation (sgemm_warptile_emu, tests/emu):
 * every configuration of run_warptile_config, split-K on every tile configuration
 * (emu_warptile_hooks.cpp), the untuned launcher and warptile_tune + the tuned launcher, on
 * tail shapes, odd leading dimensions, misaligned pointers, beta == 0 with a NaN C0, C0 == C
 * and K = 1.  Each result is checked against a double reference, and the padding between
 * columns of C must stay untouched.  The emulated device is an H200 (132 SMs: the split
 * counts) whose allocations start as NaN (a partial tile the split-K reduce reads but no CTA
 * wrote shows).
 *   sgemm_warptile_emu [-v] [name-substring]     exit status 0 when every case passes */
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "emu_data.h"
#include "kernels/kernels.h"

extern "C" {
/* 10_warptile.cu's own entry points (not in kernels.h) and the test hooks. */
int warptile_config_count(void);
cudaError_t run_warptile_config(int config, int M, int N, int K, float alpha, const float *A,
                                int lda, const float *B, int ldb, float beta, const float *C0,
                                float *C, int ldc, cudaStream_t stream);
int emu_warptile_splitk_count(void);
const char *emu_warptile_splitk_name(int idx);
int emu_warptile_splitk_splits(int idx, int M, int N, int K);
cudaError_t emu_warptile_splitk(int idx, int M, int N, int K, float alpha, const float *A, int lda,
                                const float *B, int ldb, float beta, const float *C0, float *C,
                                int ldc);
}

/* ---- cases ----------------------------------------------------------------------------------- */

/* Every configuration: tails of every tile size (64..256), 16- and 32-k tiles. */
static const std::vector<Case> kCases = edge_cases_and({
    {128, 128, 32, 0, 0, 1.0f, 0.5f, false, false},    /* one full tile, vector paths */
    {256, 256, 160, 0, 0, -0.75f, 2.0f, false, false}, /* interior CTAs, the ring wraps */
    {256, 256, 40, 0, 0, 1.0f, 0.5f, false, false},    /* interior CTAs, K tail (8) */
    {97, 33, 17, 0, 0, 1.0f, 0.5f, false, false},      /* M % 4 != 0: A as 4-byte copies */
    {260, 132, 999, 0, 0, 1.0f, 0.5f, false, false},   /* long K with a tail */
    {600, 100, 20, 0, 0, 1.0f, 0.5f, false, false},    /* more tile rows than a group */
});

/* Split-K: 1 to 4 splits of 128+ k, the last one with a K tail. */
static const std::vector<Case> kSplitCases = {
    {1, 1, 1, 0, 0, 1.0f, 0.5f, false, false},
    {129, 130, 520, 0, 0, 1.0f, 0.5f, false, false},
    {256, 256, 256, 0, 0, -0.75f, 2.0f, false, false},
    {97, 33, 300, 3, 1, 1.0f, 0.5f, false, false},
    {128, 128, 512, 4, 0, 1.0f, 0.0f, false, true},
    {144, 140, 400, 0, 0, 1.0f, 0.5f, true, false},
    /* M = 2 and 3 mod 4: the reduction's last float4 of a column holds 2 or 3 rows */
    {130, 70, 300, 0, 0, 1.0f, 0.5f, false, false},
    {131, 40, 400, 1, 0, 1.0f, 0.5f, false, false},
};

/* The untuned launcher, shapes that reach each branch of its heuristic on 132 SMs. */
static const std::vector<Case> kDefaultCases = {
    {129, 130, 33, 0, 0, 1.0f, 0.5f, false, false},
    {100, 100, 1030, 0, 0, 1.0f, 0.5f, false, false}, /* split-K (7) */
    {1, 300, 40, 0, 0, 1.0f, 0.5f, false, false},
};

typedef int (*splits_fn)(int variant, int M, int N, int K);
typedef cudaError_t (*runner)(int variant, int M, int N, int K, float alpha, const float *A,
                              int lda, const float *B, int ldb, float beta, const float *C0,
                              float *C, int ldc);

static cudaError_t run_config(int v, int M, int N, int K, float alpha, const float *A, int lda,
                              const float *B, int ldb, float beta, const float *C0, float *C,
                              int ldc)
{
    return run_warptile_config(v, M, N, K, alpha, A, lda, B, ldb, beta, C0, C, ldc, 0);
}
static cudaError_t run_default(int, int M, int N, int K, float alpha, const float *A, int lda,
                               const float *B, int ldb, float beta, const float *C0, float *C,
                               int ldc)
{
    return run_warptile(M, N, K, alpha, A, lda, B, ldb, beta, C0, C, ldc, 0);
}
/* Tunes on scratch outputs (tuning writes C), then runs the tuned choice on the real ones. */
static cudaError_t run_tuned(int, int M, int N, int K, float alpha, const float *A, int lda,
                             const float *B, int ldb, float beta, const float *C0, float *C,
                             int ldc)
{
    const size_t n = (size_t)ldc * (N - 1) + M;
    std::vector<float> c0(C0, C0 + n), scratch(n);
    int chosen = -1;
    cudaError_t e = warptile_tune(M, N, K, alpha, A, lda, B, ldb, beta, c0.data(), scratch.data(),
                                  ldc, 0, &chosen);
    if (e != cudaSuccess)
        return e;
    std::printf("  (tuned %dx%dx%d: %s)\n", M, N, K, warptile_config_name(chosen));
    return run_warptile(M, N, K, alpha, A, lda, B, ldb, beta, C0, C, ldc, 0);
}

struct Result {
    bool ok;
    double err;
};

/* A runner and its configuration as an emu_gemm's `bound`. */
struct Bound {
    runner run;
    int v;
};
static cudaError_t run_bound(int M, int N, int K, float alpha, const float *A, int lda,
                             const float *B, int ldb, float beta, const float *C0, float *C,
                             int ldc, const void *bound)
{
    const Bound *b = (const Bound *)bound;
    return b->run(b->v, M, N, K, alpha, A, lda, B, ldb, beta, C0, C, ldc);
}

/* Checked against the magnitude: the 1x1x1 and split-K cases may cancel. */
static Result run_case(const char *name, runner run, splits_fn splits, int v, const Case &c,
                       bool verbose)
{
    const Bound b = {run, v};
    const Outcome o = run_gemm_case(c, run_bound, &b);
    const bool ok =
        o.launch == cudaSuccess && std::isfinite(o.err_mag) && o.err_mag <= o.tol && !o.outside;
    char split_note[32] = "";
    if (splits)
        std::snprintf(split_note, sizeof split_note, " splits=%d", splits(v, c.M, c.N, c.K));
    if (verbose || !ok)
        std::printf("%-26s %4dx%-4dx%-4d pad=%d shift=%d beta=%g%s%s%s  err=%.2e tol=%.2e %s\n",
                    name, c.M, c.N, c.K, c.pad, c.shift, c.beta, c.alias ? " alias" : "",
                    c.nan_c0 ? " nanC0" : "", split_note, o.err_mag, o.tol, verdict_of(o, ok));
    return {ok, o.err_mag};
}

static int failed = 0;

static void run_variant(const char *only, bool verbose, const char *name, runner run,
                        splits_fn splits, int v, const std::vector<Case> &cases)
{
    if (only && !std::strstr(name, only))
        return;
    int bad = 0;
    double worst = 0;
    for (const auto &c : cases) {
        const Result r = run_case(name, run, splits, v, c, verbose);
        bad += !r.ok;
        if (!(r.err <= worst)) /* NaN sticks */
            worst = r.err;
    }
    std::printf("%-26s %2zu cases, %s, max err %.1e\n", name, cases.size(),
                bad ? "FAILED" : "all ok", worst);
    std::fflush(stdout);
    failed += bad;
}

int main(int argc, char **argv)
{
    bool verbose = false;
    const char *only = nullptr;
    for (int i = 1; i < argc; i++) {
        if (!std::strcmp(argv[i], "-v"))
            verbose = true;
        else
            only = argv[i];
    }
    for (int v = 0; v < warptile_config_count(); v++) {
        const char *name = warptile_config_name(v);
        /* Split-K through a thread-block cluster: its CTAs wait for each other at a cluster
         * barrier, and the emulation runs a launch's CTAs one after another (the GPU test
         * sgemm_gpu verifies these on the tails profile). */
        if (std::strstr(name, "_cluster")) {
            if (!only || std::strstr(name, only))
                std::printf("%-26s skipped: the emulation runs no thread-block cluster\n", name);
            continue;
        }
        run_variant(only, verbose, name, run_config, nullptr, v, kCases);
    }
    for (int v = 0; v < emu_warptile_splitk_count(); v++)
        run_variant(only, verbose, emu_warptile_splitk_name(v), emu_warptile_splitk,
                    emu_warptile_splitk_splits, v, kSplitCases);
    run_variant(only, verbose, "default", run_default, nullptr, 0, kDefaultCases);
    static const std::vector<Case> tuned = {{129, 130, 33, 0, 0, 1.0f, 0.5f, false, false}};
    run_variant(only, verbose, "tuned", run_tuned, nullptr, 0, tuned);
    warptile_release();
    std::printf("%s: %d failure(s)\n", failed ? "FAILED" : "passed", failed);
    return failed ? 1 : 0;
}
