/* Helpers shared by the labeling kernels: the launch shape and the flatten kernel; the
 * per-site bodies live in sites.h and NN_<variant>.cuh (host-callable, so the CPU test runs
 * them). */
#ifndef LABELING_COMMON_CUH
#define LABELING_COMMON_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "kernels/kernels.h"
#include "kernels/sites.h"
#include "labeling.h"

#define CEIL_DIV(a, b) (((a) + (b)-1) / (b))
#define LB_THREADS 256

/* One thread per site. */
static inline unsigned lb_blocks(uint32_t n)
{
    return (unsigned)CEIL_DIV(n, (uint32_t)LB_THREADS);
}

/* Every label replaced by its root. */
static __global__ void lb_flatten_kernel(uint32_t n, uint32_t *labels)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        lb_flatten_site(labels, i);
}

#endif /* LABELING_COMMON_CUH */
