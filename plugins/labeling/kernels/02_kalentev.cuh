/* kalentev's per-site steps (see 02_kalentev.cu): init, scanning, analysis. */
#ifndef LABELING_KALENTEV_CUH
#define LABELING_KALENTEV_CUH

#include "sites.h"

LB_HD void lb_kalentev_init_site(uint32_t *L, uint32_t i)
{
    L[i] = i;
}

/* L[L[i]] lowered (a plain store) to the smallest bonded neighbour label; *flag set. */
LB_HD void lb_kalentev_scan_site(const lb_lattice *lat, const uint8_t *bonds, uint32_t *L,
                                 int *flag, uint32_t i)
{
    volatile uint32_t *v = L;
    const uint32_t l = v[i], lmin = lb_min_bonded(lat, bonds, L, i, l);
    if (lmin < l) {
        if (lmin < v[l])
            v[l] = lmin;
        *flag = 1;
    }
}

/* The site pointed at the end of its label chain. */
LB_HD void lb_kalentev_analysis_site(uint32_t *L, uint32_t i)
{
    volatile uint32_t *v = L;
    uint32_t l = v[i];
    if (l == i)
        return;
    uint32_t r = v[l];
    while (r != l) {
        l = r;
        r = v[l];
    }
    v[i] = l;
}

#endif
