/* Helpers shared by the labeling kernels: the launch shape, and the device union-find
 * primitives (links only ever point to smaller sites, so a root is the smallest site of its
 * tree and the final label is the cluster's smallest site). */
#ifndef LABELING_COMMON_CUH
#define LABELING_COMMON_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "kernels/kernels.h"
#include "labeling.h"

#define CEIL_DIV(a, b) (((a) + (b)-1) / (b))
#define LB_THREADS 256

/* One thread per site. */
static inline unsigned lb_blocks(uint32_t n)
{
    return (unsigned)CEIL_DIV(n, (uint32_t)LB_THREADS);
}

/* Root of a: follows links (read through volatile: other threads relink while we walk). */
__device__ __forceinline__ uint32_t lb_find(const uint32_t *labels, uint32_t a)
{
    const volatile uint32_t *l = labels;
    uint32_t p = l[a];
    while (p != a) {
        a = p;
        p = l[a];
    }
    return a;
}

/* Joins the trees of a and b: the larger root is linked under the smaller with atomicMin; a
 * root that another thread linked meanwhile is followed and the join retried. */
__device__ __forceinline__ void lb_unite(uint32_t *labels, uint32_t a, uint32_t b)
{
    for (;;) {
        a = lb_find(labels, a);
        b = lb_find(labels, b);
        if (a == b)
            return;
        if (a > b) {
            const uint32_t t = a;
            a = b;
            b = t;
        }
        const uint32_t old = atomicMin(&labels[b], a);
        if (old == b)
            return;
        b = old;
    }
}

/* The smallest of l and the labels of i's bonded neighbours. */
__device__ __forceinline__ uint32_t lb_min_bonded(const lb_lattice lat, const uint8_t *bonds,
                                                  const uint32_t *labels, uint32_t i, uint32_t l)
{
    const volatile uint32_t *v = labels;
    int x, y, z;
    lb_coords(lat.L, i, &x, &y, &z);
    const uint8_t b = bonds[i];
    for (int d = 0; d < lat.dim; d++) {
        if (b & (1u << d))
            l = min(l, v[lb_neighbor(lat.L, x, y, z, d, 1)]);
        const uint32_t dn = lb_neighbor(lat.L, x, y, z, d, 0);
        if (bonds[dn] & (1u << d))
            l = min(l, v[dn]);
    }
    return l;
}

/* Every label replaced by its root. */
static __global__ void lb_flatten_kernel(uint32_t n, uint32_t *labels)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        labels[i] = lb_find(labels, i);
}

#endif /* LABELING_COMMON_CUH */
