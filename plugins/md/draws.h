/* md plugin, host side: counter-based uniform draws (splitmix64 of seed and counter), so the
 * lattice's velocities and a point's shuffle are the same for a seed whatever the order of the
 * draws. */
#ifndef KBENCH_MD_DRAWS_H
#define KBENCH_MD_DRAWS_H

#include <stdint.h>

static inline uint64_t splitmix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Uniform in [0, 1) from (seed, counter). */
static inline double uniform01(uint64_t seed, uint64_t k)
{
    return (double)(splitmix64(seed * 0x9E3779B97F4A7C15ull + k) >> 11) * 0x1.0p-53;
}

#endif
