/* sgemm kernel launchers: one per ladder step, all with one signature.
 *
 * Column-major, no transposes:  C[i + j*ldc] = alpha * sum_k A[i + k*lda] * B[k + j*ldb]
 *                                              + beta * C0[i + j*ldc]
 * A is MxK (lda >= M), B is KxN (ldb >= K), C0 and C are MxN with the same ldc >= M.
 *
 * Why C0 and C are separate buffers: C = alpha*A*B + beta*C reads C, so an in-place run would
 * change its own input and the second run would compute something else.  The plugin keeps the
 * pristine beta-term input in C0 and every run writes C, so any number of runs leaves the same
 * result and no copy enters the timed region.  The memory traffic is the same as in-place
 * (read M*N of C0, write M*N of C).  Rules every kernel follows:
 *   - C0 == C (exact alias, in-place) is allowed, so neither pointer is __restrict__; each
 *     element of C0 is read by the same thread that writes that element of C, before it does.
 *   - beta == 0 means C0 is not read at all (BLAS semantics: NaN/Inf in C0 do not propagate).
 *   - Any M, N, K >= 1 and any lda/ldb/ldc; a vectorised or cp.async path must fall back to a
 *     guarded scalar path for edge tiles and for pointers/leading dimensions not 16-byte aligned.
 *     Nothing outside the MxK, KxN, MxN matrices is read or written.
 *   - Launch on `stream`, never synchronise, return cudaGetLastError() after the launch(es).
 *
 * Numbers in file names (kernels/NN_<variant>.cu) give the ladder order.
 */
#ifndef KBENCH_SGEMM_KERNELS_H
#define KBENCH_SGEMM_KERNELS_H

#include <cuda_runtime_api.h>

#define SGEMM_LAUNCHER(variant)                                                                    \
    cudaError_t run_##variant(int M, int N, int K, float alpha, const float *A, int lda,           \
                              const float *B, int ldb, float beta, const float *C0, float *C,      \
                              int ldc, cudaStream_t stream)

#ifdef __cplusplus
extern "C" {
#endif

SGEMM_LAUNCHER(naive);         /* 01: one thread per C element, lanes along N (uncoalesced)  */
SGEMM_LAUNCHER(coalesced);     /* 02: same, threadIdx.x along M so warps read A/C coalesced  */
SGEMM_LAUNCHER(smem_tiled);    /* 03: 32x32 tiles of A and B staged through shared memory     */
SGEMM_LAUNCHER(reg_1d);        /* 04: each thread computes 8 C elements of one row            */
SGEMM_LAUNCHER(reg_2d);        /* 05: 8x8 outer product per thread, 128x128x8 CTA tile         */
SGEMM_LAUNCHER(vectorized);    /* 06: 128-bit global loads, B tile transposed into SMEM       */
SGEMM_LAUNCHER(cp_async);      /* 07: 3-stage cp.async ring, register double buffering        */
SGEMM_LAUNCHER(swizzled);      /* 08: XOR-swizzled SMEM, no bank conflicts                    */
SGEMM_LAUNCHER(wide_epilogue); /* 09: permuted thread-value layout, 128-bit C0 loads/C stores */
SGEMM_LAUNCHER(warptile);      /* 10: warp tiling, autotuned; fastest CUDA-core variant       */
SGEMM_LAUNCHER(tf32x3);        /* 11: 3xTF32 on tensor cores, fp32-level accuracy             */

/* Autotuning hooks of the tuned variants (10, 11), called from the plugin's untimed init: time
 * every configuration on the given buffers (this writes C), remember the fastest for (M, N, K)
 * so that run_<variant> uses it, store its index in *chosen_config; synchronise the stream. */
cudaError_t warptile_tune(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                          int ldb, float beta, const float *C0, float *C, int ldc,
                          cudaStream_t stream, int *chosen_config);
const char *warptile_config_name(int idx); /* NULL when out of range */
int warptile_config_count(void);
/* Runs configuration `config` whatever the tuner chose; cudaErrorNotSupported when it cannot
 * run on this device, cudaErrorInvalidValue for an index out of range. */
cudaError_t run_warptile_config(int config, int M, int N, int K, float alpha, const float *A,
                                int lda, const float *B, int ldb, float beta, const float *C0,
                                float *C, int ldc, cudaStream_t stream);
void warptile_release(void); /* frees warptile's split-K workspace */
cudaError_t tf32x3_tune(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                        int ldb, float beta, const float *C0, float *C, int ldc,
                        cudaStream_t stream, int *chosen_config);
const char *tf32x3_config_name(int idx);
int tf32x3_config_count(void);
cudaError_t run_tf32x3_config(int config, int M, int N, int K, float alpha, const float *A, int lda,
                              const float *B, int ldb, float beta, const float *C0, float *C,
                              int ldc, cudaStream_t stream);
void tf32x3_release(void); /* frees tf32x3's pre-split and split-K workspaces */

#ifdef __cplusplus
}
#endif

#endif /* KBENCH_SGEMM_KERNELS_H */
