// gemm: the seed's proposed follow-up for large recoupling matrices.  The tiled kernel
// extracts each chosen block's source trees, permuted, into a workspace (PM_FLAG_TO_WS, in
// the same launch as the blocks that stay tiled); then one grouped cuBLAS GEMM multiplies every
// extracted block by its U^T straight into the output (gemm_call = loop: one cuBLAS GEMM per
// block instead, in case the grouped call cannot be captured into a graph).  With beta != 0 the
// output ranges are first filled from cin, since cuBLAS accumulates in place.  This file holds the
// host side of the GEMM step; capturable, as the handle has its stream and a workspace.
#include <cublas_v2.h>

#include "common.cuh"

namespace
{

template <typename T> struct blas;

template <> struct blas<float> {
    static cublasStatus_t one(cublasHandle_t h, const pm_gemm_plan *g, int i, const float *alpha,
                              const float *beta)
    {
        return cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, g->m[i], g->n[i], g->k[i], alpha,
                           (const float *)g->hA[i], g->m[i], (const float *)g->hB[i], g->k[i], beta,
                           (float *)g->hC[i], g->m[i]);
    }
    static cublasStatus_t grouped(cublasHandle_t h, const cublasOperation_t *ta,
                                  const cublasOperation_t *tb, const pm_gemm_plan *g,
                                  const float *alpha, const float *beta)
    {
        return cublasSgemmGroupedBatched(h, ta, tb, g->m, g->n, g->k, alpha,
                                         (const float *const *)g->dA, g->m,
                                         (const float *const *)g->dB, g->k, beta,
                                         (float *const *)g->dC, g->m, g->count, g->group_size);
    }
};

template <> struct blas<double> {
    static cublasStatus_t one(cublasHandle_t h, const pm_gemm_plan *g, int i, const double *alpha,
                              const double *beta)
    {
        return cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, g->m[i], g->n[i], g->k[i], alpha,
                           (const double *)g->hA[i], g->m[i], (const double *)g->hB[i], g->k[i],
                           beta, (double *)g->hC[i], g->m[i]);
    }
    static cublasStatus_t grouped(cublasHandle_t h, const cublasOperation_t *ta,
                                  const cublasOperation_t *tb, const pm_gemm_plan *g,
                                  const double *alpha, const double *beta)
    {
        return cublasDgemmGroupedBatched(h, ta, tb, g->m, g->n, g->k, alpha,
                                         (const double *const *)g->dA, g->m,
                                         (const double *const *)g->dB, g->k, beta,
                                         (double *const *)g->dC, g->m, g->count, g->group_size);
    }
};

// Up to this many problems per call: the per-problem host arrays live on the stack.
constexpr int kMaxGroups = 4096;

template <typename T>
int run(cublasHandle_t h, const pm_gemm_plan *g, const void *cin, void *out, cudaStream_t s,
        int *blas_status)
{
    static thread_local cublasOperation_t ta[kMaxGroups], tb[kMaxGroups];
    static thread_local T alpha[kMaxGroups], beta[kMaxGroups];
    if (g->count == 0)
        return (int)cudaSuccess;
    if (g->count > kMaxGroups)
        return (int)cudaErrorInvalidValue;
    for (int i = 0; i < g->count; i++) {
        ta[i] = tb[i] = CUBLAS_OP_N;
        alpha[i] = (T)g->alpha[i];
        beta[i] = (T)g->beta[i];
        if (g->beta[i] != 0.0) {
            cudaError_t e =
                cudaMemcpyAsync((T *)out + g->copy_off[i], (const T *)cin + g->copy_off[i],
                                (size_t)g->copy_len[i] * sizeof(T), cudaMemcpyDeviceToDevice, s);
            if (e != cudaSuccess)
                return (int)e;
        }
    }
    cublasStatus_t st = cublasSetStream(h, s);
    if (st == CUBLAS_STATUS_SUCCESS && g->loop)
        for (int i = 0; i < g->count && st == CUBLAS_STATUS_SUCCESS; i++)
            st = blas<T>::one(h, g, i, &alpha[i], &beta[i]);
    else if (st == CUBLAS_STATUS_SUCCESS)
        st = blas<T>::grouped(h, ta, tb, g, alpha, beta);
    if (st != CUBLAS_STATUS_SUCCESS) {
        *blas_status = (int)st;
        return -1;
    }
    return (int)cudaGetLastError();
}

} // namespace

extern "C" int pm_run_gemm(int esize, void *handle, const pm_gemm_plan *g, const void *cin,
                           void *out, void *stream, int *blas_status)
{
    if (esize == 4)
        return run<float>((cublasHandle_t)handle, g, cin, out, (cudaStream_t)stream, blas_status);
    return run<double>((cublasHandle_t)handle, g, cin, out, (cudaStream_t)stream, blas_status);
}
