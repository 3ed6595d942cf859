/* Counter-based random numbers for the labeling plugin: Philox4x32-10 (Salmon et al., SC'11),
 * written out here so that the host (plain C) and the device (CUDA) compute the very same
 * bits.  A draw is keyed by (seed, step, site, purpose): the host reference and every device
 * variant then draw identical numbers for the same bond or cluster, whatever the thread
 * schedule, and evolve the same lattice from the same seed. */
#ifndef LABELING_RNG_H
#define LABELING_RNG_H

#include <stdint.h>

#if defined(__CUDACC__)
#define LB_HD __host__ __device__ __forceinline__
#else
#define LB_HD static inline
#endif

/* What a draw is for: the fourth counter word, so that the streams never overlap. */
enum { LB_RNG_INIT = 1, LB_RNG_BOND = 2, LB_RNG_FLIP = 3, LB_RNG_MIRROR = 4, LB_RNG_TEST = 5 };

typedef struct lb_u32x4 {
    uint32_t v[4];
} lb_u32x4;

LB_HD uint32_t lb_mulhilo(uint32_t a, uint32_t b, uint32_t *hi)
{
    const uint64_t p = (uint64_t)a * (uint64_t)b;
    *hi = (uint32_t)(p >> 32);
    return (uint32_t)p;
}

/* Four 32-bit words from counter (site, step, purpose) under key seed. */
LB_HD lb_u32x4 lb_philox(uint64_t seed, uint64_t step, uint32_t site, uint32_t purpose)
{
    uint32_t c0 = site, c1 = (uint32_t)step, c2 = (uint32_t)(step >> 32), c3 = purpose;
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
    for (int r = 0; r < 10; r++) {
        uint32_t hi0, hi1;
        const uint32_t lo0 = lb_mulhilo(0xD2511F53u, c0, &hi0);
        const uint32_t lo1 = lb_mulhilo(0xCD9E8D57u, c2, &hi1);
        c0 = hi1 ^ c1 ^ k0;
        c1 = lo1;
        c2 = hi0 ^ c3 ^ k1;
        c3 = lo0;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    lb_u32x4 out = {{c0, c1, c2, c3}};
    return out;
}

/* A uniform integer in [0, n) from one 32-bit word (multiply-shift: no modulo bias worth
 * naming for n <= 1024). */
LB_HD uint32_t lb_below(uint32_t word, uint32_t n)
{
    return (uint32_t)(((uint64_t)word * n) >> 32);
}

#endif /* LABELING_RNG_H */
