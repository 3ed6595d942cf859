/* kbench's one CUDA check macro, for the harness and for plugins.
 *
 * Header-only (a plugin includes it without linking anything of the
 * harness); needs the CUDA runtime API header, so plugin.h stays free of it.
 *
 *   KB_CUDA_TRY(cudaMalloc(&p, n), msg);          // on failure: writes msg, returns KB_CUDA_ERROR
 *   KB_CUDA_GOTO(cudaMemcpy(...), msg, fail);      // on failure: writes msg, sets rc, jumps to fail
 *   KB_CUDA_TRY(cudaGetLastError(), msg);          // after every launch
 *
 * The message names the file, line, call, the error's name and its text.
 * The error is read with cudaGetLastError() afterwards so that a non-sticky
 * error does not leak into the next call; a sticky error (an illegal address
 * in a kernel) stays, and the harness ends the worker process after it.
 */
#ifndef KBENCH_CUDA_CHECK_H
#define KBENCH_CUDA_CHECK_H

#include <cuda_runtime_api.h>

#include "kbench/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Formats the failure of `call` into msg (KB_MSG_SIZE bytes) and clears the
 * last error.  Returns KB_CUDA_ERROR, or KB_NOMEM for an allocation failure
 * so that "too large for this GPU" reads as what it is. */
static inline int kb_cuda_fail(cudaError_t e, const char *call, const char *file, int line,
                               char *msg)
{
    const char *base = file;
    for (const char *p = file; *p; p++)
        if (*p == '/')
            base = p + 1;
    kb_msgf(msg, "%s:%d: %s failed: %s (%s)", base, line, call, cudaGetErrorName(e),
            cudaGetErrorString(e));
    (void)cudaGetLastError();
    return e == cudaErrorMemoryAllocation ? KB_NOMEM : KB_CUDA_ERROR;
}

#define KB_CUDA_TRY(call, msg)                                                          \
    do {                                                                                \
        cudaError_t kb_e_ = (call);                                                     \
        if (kb_e_ != cudaSuccess)                                                       \
            return kb_cuda_fail(kb_e_, #call, __FILE__, __LINE__, (msg));               \
    } while (0)

/* Needs an `int rc` in scope; sets it and jumps to `label`. */
#define KB_CUDA_GOTO(call, msg, label)                                                  \
    do {                                                                                \
        cudaError_t kb_e_ = (call);                                                     \
        if (kb_e_ != cudaSuccess) {                                                     \
            rc = kb_cuda_fail(kb_e_, #call, __FILE__, __LINE__, (msg));                 \
            goto label;                                                                 \
        }                                                                               \
    } while (0)

#ifdef __cplusplus
}
#endif

#endif /* KBENCH_CUDA_CHECK_H */
