/* The per-site bodies of the device labelers' common steps, as __host__ __device__ functions
 * in C: the kernels call them for their thread's site, and the CPU test calls them site by
 * site (in shuffled orders) to check each labeler's logic without a GPU.  Links only ever
 * point to smaller sites, so a root is the smallest site of its tree and the final label is
 * the cluster's smallest site. */
#ifndef LABELING_SITES_H
#define LABELING_SITES_H

#include <stdint.h>

#include "../labeling.h" /* relative: the CPU test includes this file too */

/* atomicMin on the device; on the host (the sequential emulation) a plain min. Returns the
 * old value. */
#if defined(__CUDA_ARCH__)
#define LB_ATOMIC_MIN(p, v) atomicMin((p), (v))
#else
LB_HD uint32_t lb_host_atomic_min(uint32_t *p, uint32_t v)
{
    const uint32_t old = *p;
    if (v < old)
        *p = v;
    return old;
}
#define LB_ATOMIC_MIN(p, v) lb_host_atomic_min((p), (v))
#endif

/* Root of a: follows links (read through volatile: other threads relink while we walk). */
LB_HD uint32_t lb_find(const uint32_t *labels, uint32_t a)
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
LB_HD void lb_unite(uint32_t *labels, uint32_t a, uint32_t b)
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
        const uint32_t old = LB_ATOMIC_MIN(&labels[b], a);
        if (old == b)
            return;
        b = old;
    }
}

/* Root of a, relinking every node on the way to the node two up (intermediate pointer
 * jumping, as in Jaiganesh and Burtscher's ECL-CC): union_find's finds, which otherwise walk
 * the same long chains of a spanning cluster again and again.  A relink points to an
 * ancestor, so smaller and in the same tree; it may overwrite a concurrent atomicMin on a
 * node that was a root when that thread looked, but that thread sees the old value is not
 * its root and retries the join (lb_unite_jump), so no join is lost. */
LB_HD uint32_t lb_find_jump(uint32_t *labels, uint32_t a)
{
    volatile uint32_t *l = labels;
    uint32_t cur = l[a];
    if (cur != a) {
        uint32_t prev = a, next;
        while (cur > (next = l[cur])) {
            l[prev] = next;
            prev = cur;
            cur = next;
        }
    }
    return cur;
}

/* lb_unite with lb_find_jump. */
LB_HD void lb_unite_jump(uint32_t *labels, uint32_t a, uint32_t b)
{
    for (;;) {
        a = lb_find_jump(labels, a);
        b = lb_find_jump(labels, b);
        if (a == b)
            return;
        if (a > b) {
            const uint32_t t = a;
            a = b;
            b = t;
        }
        const uint32_t old = LB_ATOMIC_MIN(&labels[b], a);
        if (old == b)
            return;
        b = old;
    }
}

/* The smallest of l and the labels of i's bonded neighbours. */
LB_HD uint32_t lb_min_bonded(const lb_lattice *lat, const uint8_t *bonds, const uint32_t *labels,
                             uint32_t i, uint32_t l)
{
    const volatile uint32_t *v = labels;
    int x, y, z;
    lb_coords(lat->L, i, &x, &y, &z);
    const uint8_t b = bonds[i];
    for (int d = 0; d < lat->dim; d++) {
        if (b & (1u << d)) {
            const uint32_t u = v[lb_neighbor(lat->L, x, y, z, d, 1)];
            l = u < l ? u : l;
        }
        const uint32_t dn = lb_neighbor(lat->L, x, y, z, d, 0);
        if (bonds[dn] & (1u << d)) {
            const uint32_t u = v[dn];
            l = u < l ? u : l;
        }
    }
    return l;
}

/* Flatten: the site's label replaced by its root. */
LB_HD void lb_flatten_site(uint32_t *labels, uint32_t i)
{
    labels[i] = lb_find(labels, i);
}

#endif /* LABELING_SITES_H */
