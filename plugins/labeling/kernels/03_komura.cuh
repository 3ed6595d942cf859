/* komura's per-site steps (see 03_komura.cu): init, reduction (flatten is lb_flatten_site). */
#ifndef LABELING_KOMURA_CUH
#define LABELING_KOMURA_CUH

#include "sites.h"

/* The smallest of the site and its bonded neighbours. */
LB_HD void lb_komura_init_site(const lb_lattice *lat, const uint8_t *bonds, uint32_t *L, uint32_t i)
{
    int x, y, z;
    lb_coords(lat->L, i, &x, &y, &z);
    uint32_t l = i;
    const uint8_t b = bonds[i];
    for (int d = 0; d < lat->dim; d++) {
        if (b & (1u << d)) {
            const uint32_t u = lb_neighbor(lat->L, x, y, z, d, 1);
            l = u < l ? u : l;
        }
        const uint32_t dn = lb_neighbor(lat->L, x, y, z, d, 0);
        if ((bonds[dn] & (1u << d)) && dn < l)
            l = dn;
    }
    L[i] = l;
}

/* Every +d bond whose ends still have different roots joins them. */
LB_HD void lb_komura_reduce_site(const lb_lattice *lat, const uint8_t *bonds, uint32_t *L,
                                 uint32_t i)
{
    const uint8_t b = bonds[i];
    if (!b)
        return;
    int x, y, z;
    lb_coords(lat->L, i, &x, &y, &z);
    for (int d = 0; d < lat->dim; d++)
        if (b & (1u << d)) {
            const uint32_t j = lb_neighbor(lat->L, x, y, z, d, 1);
            if (lb_find(L, i) != lb_find(L, j))
                lb_unite(L, i, j);
        }
}

#endif
