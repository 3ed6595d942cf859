/* Helpers shared by the permute kernels (kernels/NN_<variant>.cu): CEIL_DIV, the project's
 * check macro, the plugin's shared header, and the element-type dispatch. */
#ifndef KBENCH_PERMUTE_COMMON_CUH
#define KBENCH_PERMUTE_COMMON_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "kbench/cuda_check.h"
#include "permute.h"

#define CEIL_DIV(a, b) (((a) + (b)-1) / (b))

/* Copies a descriptor from global into shared memory with the threads of the CTA (the caller
 * synchronises); every thread then reads its fields without further global traffic. */
template <typename D, int NT> __device__ __forceinline__ void pm_load_desc(D *to, const D *from)
{
    static_assert(sizeof(D) % 4 == 0, "descriptors are made of 32-bit words");
    const int32_t *f = reinterpret_cast<const int32_t *>(from);
    int32_t *t = reinterpret_cast<int32_t *>(to);
    for (int w = threadIdx.x; w < (int)(sizeof(D) / 4); w += NT)
        t[w] = f[w];
}

#endif
