/* Autotuning shared by the tuned sgemm variants (kernels/10_warptile.cu, 11_tf32x3.cu): the
 * run arguments every configuration takes, the tuned configuration per (M, N, K), and the
 * tune loop that times every configuration on the caller's buffers and keeps the fastest.
 * A variant supplies its configuration table and its choice for shapes never tuned, and its
 * extern "C" entry points (kernels.h) forward to one SgemmTuner.  Host code only: nothing
 * here reaches a kernel. */
#ifndef KBENCH_SGEMM_TUNE_CUH
#define KBENCH_SGEMM_TUNE_CUH

#include <algorithm>
#include <mutex>

#include "common.cuh"

/* The arguments of one run (kernels.h's launcher signature), passed to a configuration's
 * launcher as one reference. */
struct SgemmArgs {
    int M, N, K;
    float alpha;
    const float *A;
    int lda;
    const float *B;
    int ldb;
    float beta;
    const float *C0;
    float *C;
    int ldc;
    cudaStream_t stream;
};

/* One configuration of a tuned variant.  needs_sm90 (false when left out of an initialiser):
 * it runs only on compute capability 9.0 (sm_90a code), so the tuner does not try it
 * elsewhere; its launcher must still refuse with cudaErrorNotSupported there, for a forced
 * run. */
struct SgemmConfig {
    const char *name; /* what *_config_name returns and a forced configuration is called */
    cudaError_t (*launch)(const SgemmArgs &);
    bool needs_sm90;
};

/* True when the current device is compute capability 9.0, the only one sm_90a code runs on.
 * Cached per device: run paths ask on every launch. */
inline bool sgemm_device_is_sm90()
{
    static std::mutex mu;
    static int cached_dev = -1;
    static bool cached = false;
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess)
        return false;
    std::lock_guard<std::mutex> lock(mu);
    if (dev != cached_dev) {
        int major = 0, minor = 0;
        cached =
            cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess &&
            cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) == cudaSuccess &&
            major == 9 && minor == 0;
        cached_dev = dev;
    }
    return cached;
}

/* Errors with which a launch is refused before anything runs (not sticky): the tuner skips
 * such a configuration instead of failing. */
inline bool sgemm_launch_refused(cudaError_t e)
{
    return e == cudaErrorNotSupported || e == cudaErrorInvalidConfiguration ||
           e == cudaErrorLaunchOutOfResources || e == cudaErrorInvalidValue;
}

/* The shapes and leading dimensions kernels.h accepts. */
inline bool sgemm_args_ok(const SgemmArgs &a)
{
    return a.M >= 1 && a.N >= 1 && a.K >= 1 && a.lda >= a.M && a.ldb >= a.K && a.ldc >= a.M;
}

/* A tuned variant: its configurations, its choice for shapes never tuned, and the fastest
 * configuration per tuned shape, kept for the last kSlots shapes tuned (oldest replaced
 * first).  One per variant, at namespace scope in its .cu file; safe to call from several
 * threads. */
class SgemmTuner
{
  public:
    template <int kCount>
    SgemmTuner(const SgemmConfig (&configs)[kCount], int (*untuned_choice)(int M, int N, int K))
        : configs_(configs), count_(kCount), untuned_choice_(untuned_choice)
    {
    }

    int count() const
    {
        return count_;
    }

    /* NULL when idx is out of range. */
    const char *name(int idx) const
    {
        return idx >= 0 && idx < count_ ? configs_[idx].name : nullptr;
    }

    /* Runs configuration `config` whatever was tuned; cudaErrorInvalidValue for an index out
     * of range or arguments kernels.h does not accept, else what its launcher returns. */
    cudaError_t run_config(int config, const SgemmArgs &a) const
    {
        if (config < 0 || config >= count_ || !sgemm_args_ok(a))
            return cudaErrorInvalidValue;
        return configs_[config].launch(a);
    }

    /* Runs the configuration tuned for this shape, or the variant's choice if none was. */
    cudaError_t run(const SgemmArgs &a)
    {
        int config = lookup(a.M, a.N, a.K);
        if (config < 0)
            config = untuned_choice_(a.M, a.N, a.K);
        return run_config(config, a);
    }

    /* Times every configuration that may run on this device, in table order (one warm-up
     * launch, then the median of three timed launches), remembers the fastest for (M, N, K)
     * and returns its index in *chosen_config (may be NULL).  A configuration refused at
     * launch (sgemm_launch_refused) is skipped; cudaErrorNotSupported when every one is.
     * Synchronises the stream; meant for a plugin's untimed init.  Writes C like a run does
     * (so with C0 == C the beta term of later runs changes). */
    cudaError_t tune(const SgemmArgs &a, int *chosen_config)
    {
        if (!sgemm_args_ok(a))
            return cudaErrorInvalidValue;
        cudaEvent_t ev[2] = {};
        cudaError_t err = cudaEventCreate(&ev[0]);
        if (err == cudaSuccess)
            err = cudaEventCreate(&ev[1]);
        int best = -1;
        float best_ms = 0.0f;
        for (int c = 0; c < count_ && err == cudaSuccess; c++) {
            if (configs_[c].needs_sm90 && !sgemm_device_is_sm90())
                continue;
            err = run_config(c, a);
            if (sgemm_launch_refused(err)) { /* this configuration cannot run here: skip it */
                (void)cudaGetLastError();
                err = cudaSuccess;
                continue;
            }
            float ms[3] = {};
            for (int r = 0; r < 3 && err == cudaSuccess; r++) {
                err = cudaEventRecord(ev[0], a.stream);
                if (err == cudaSuccess)
                    err = run_config(c, a);
                if (err == cudaSuccess)
                    err = cudaEventRecord(ev[1], a.stream);
                if (err == cudaSuccess)
                    err = cudaEventSynchronize(ev[1]);
                if (err == cudaSuccess)
                    err = cudaEventElapsedTime(&ms[r], ev[0], ev[1]);
            }
            if (err != cudaSuccess)
                break;
            std::sort(ms, ms + 3);
            if (best < 0 || ms[1] < best_ms) {
                best = c;
                best_ms = ms[1];
            }
        }
        for (int i = 0; i < 2; i++)
            if (ev[i])
                cudaEventDestroy(ev[i]);
        if (err != cudaSuccess)
            return err;
        if (best < 0)
            return cudaErrorNotSupported; /* no configuration runs on this device */
        remember(a.M, a.N, a.K, best);
        if (chosen_config)
            *chosen_config = best;
        return cudaSuccess;
    }

  private:
    static constexpr int kSlots = 16;
    struct TunedShape {
        int M, N, K, config;
    };

    /* The configuration tuned for (M, N, K), -1 when none was. */
    int lookup(int M, int N, int K)
    {
        std::lock_guard<std::mutex> lock(mu_);
        for (int i = 0; i < tuned_count_; i++)
            if (tuned_[i].M == M && tuned_[i].N == N && tuned_[i].K == K)
                return tuned_[i].config;
        return -1;
    }

    /* Replaces the choice for (M, N, K) if there is one, else takes the next slot of the
     * ring, so the oldest shape goes first once all kSlots are used. */
    void remember(int M, int N, int K, int config)
    {
        std::lock_guard<std::mutex> lock(mu_);
        for (int i = 0; i < tuned_count_; i++)
            if (tuned_[i].M == M && tuned_[i].N == N && tuned_[i].K == K) {
                tuned_[i].config = config;
                return;
            }
        tuned_[tuned_next_] = {M, N, K, config};
        tuned_next_ = (tuned_next_ + 1) % kSlots;
        tuned_count_ = std::min(tuned_count_ + 1, kSlots);
    }

    const SgemmConfig *configs_;
    int count_;
    int (*untuned_choice_)(int M, int N, int K);
    std::mutex mu_;
    TunedShape tuned_[kSlots] = {};
    int tuned_count_ = 0, tuned_next_ = 0;
};

#endif /* KBENCH_SGEMM_TUNE_CUH */
