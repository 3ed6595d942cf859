/* hawick's per-site steps (see 01_hawick.cu): init, scanning, analysis, labeling. */
#ifndef LABELING_HAWICK_CUH
#define LABELING_HAWICK_CUH

#include "sites.h"

LB_HD void lb_hawick_init_site(uint32_t *L, uint32_t *R, uint32_t i)
{
    L[i] = R[i] = i;
}

/* R[L[i]] lowered to the smallest bonded neighbour label; *flag set when that is lower. */
LB_HD void lb_hawick_scan_site(const lb_lattice *lat, const uint8_t *bonds, const uint32_t *L,
                               uint32_t *R, int *flag, uint32_t i)
{
    const uint32_t l = L[i], lmin = lb_min_bonded(lat, bonds, L, i, l);
    if (lmin < l) {
        LB_ATOMIC_MIN(&R[l], lmin);
        *flag = 1;
    }
}

/* A self-labelled site resolves its R chain to the end. */
LB_HD void lb_hawick_analysis_site(const uint32_t *L, uint32_t *R, uint32_t i)
{
    if (L[i] != i)
        return;
    const volatile uint32_t *r = R;
    uint32_t ref = r[i];
    while (ref != r[ref])
        ref = r[ref];
    R[i] = ref;
}

LB_HD void lb_hawick_labeling_site(uint32_t *L, const uint32_t *R, uint32_t i)
{
    L[i] = R[L[i]];
}

#endif
