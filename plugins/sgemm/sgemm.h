/* Internal interface of the sgemm plugin between its C glue (sgemm.c), its host code (host.c)
 * and its device-side verification helpers (verify.cu).  Not part of the plugin ABI. */
#ifndef KBENCH_SGEMM_H
#define KBENCH_SGEMM_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The host variant: C = alpha*A*B + beta*C0 in float, column-major, blocked for the caches,
 * the innermost loop an axpy down a column that the compiler vectorises.  beta == 0 does not
 * read C0. */
void sgemm_host(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
                float beta, const float *C0, float *C, int ldc);

/* The same in double from float inputs, into ref (M x N, leading dimension M): the reference
 * for the host variant. */
void sgemm_host_reference(int M, int N, int K, double alpha, const float *A, const float *B,
                          double beta, const float *C0, double *ref);

/* dst[i] = (double)src[i] for i < n, enqueued on stream. */
cudaError_t sgemm_upcast(const float *src, double *dst, size_t n, cudaStream_t stream);

/* Adds sum((c - ref)^2) to sums[0] and sum(ref^2) to sums[1] over n elements (the caller
 * zeroes sums).  A NaN or Inf in c makes sums[0] NaN or Inf. */
cudaError_t sgemm_error_sums(const float *c, const double *ref, size_t n, double *sums,
                             cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* KBENCH_SGEMM_H */
