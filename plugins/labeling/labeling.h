/* The labeling plugin's shared definitions: the lattice, the model, and the per-site rules of
 * one Swendsen-Wang step (bond activation, new cluster value) as __host__ __device__ inline
 * functions, so that the host reference and the device kernels apply the same rule to the same
 * random words and evolve bit-identical lattices.  Plain C on the host side.
 *
 * Layout: site i = x + L*(y + L*z) (z = 0 in 2-D); spins are uint16_t (Ising 0/1, Potts and
 * clock 0..q-1); bonds are one byte per site, bit d set when the bond from i to its +d
 * neighbour (periodic) is active; labels are uint32_t, and every labeler leaves each site
 * labelled with the smallest site index of its cluster (links always point to smaller
 * indices), so the per-cluster random draw, keyed by the label, is the same for all. */
#ifndef LABELING_H
#define LABELING_H

#include <math.h>
#include <stdint.h>

#include "rng.h"

typedef enum lb_kind { LB_ISING = 0, LB_POTTS = 1, LB_XY = 2 } lb_kind;

typedef struct lb_lattice {
    int dim;    /* 2 or 3 */
    int L;      /* linear size */
    uint32_t n; /* L^dim sites */
} lb_lattice;

typedef struct lb_model {
    int kind;           /* lb_kind */
    int q;              /* states: 2 (Ising), Potts q, clock q */
    double T;           /* temperature in units of J */
    uint32_t thr;       /* Ising, Potts: a bond is active when its word < thr */
    double k2;          /* clock: 2J/T */
    const double *proj; /* clock: proj[j] = -sin(pi j / q), j < 2q (host or device copy) */
} lb_model;

/* Largest q: Potts histograms and the clock tables. */
#define LB_MAX_Q 1024

/* Fixed-point scale of the clock model's cos/sin sums: exact integer sums, the same in any
 * order on host and device. */
#define LB_FIX_SCALE 4294967296.0

/* The +d or -d neighbour of site i at (x, y, z). */
LB_HD uint32_t lb_neighbor(int L, int x, int y, int z, int d, int up)
{
    if (d == 0)
        x = up ? (x + 1 == L ? 0 : x + 1) : (x == 0 ? L - 1 : x - 1);
    else if (d == 1)
        y = up ? (y + 1 == L ? 0 : y + 1) : (y == 0 ? L - 1 : y - 1);
    else
        z = up ? (z + 1 == L ? 0 : z + 1) : (z == 0 ? L - 1 : z - 1);
    return (uint32_t)x + (uint32_t)L * ((uint32_t)y + (uint32_t)L * (uint32_t)z);
}

LB_HD void lb_coords(int L, uint32_t i, int *x, int *y, int *z)
{
    *x = (int)(i % (uint32_t)L);
    *y = (int)((i / (uint32_t)L) % (uint32_t)L);
    *z = (int)(i / ((uint32_t)L * (uint32_t)L));
}

/* The clock model's mirror of this step: index k of the reflection p -> (k - p) mod q. */
LB_HD uint32_t lb_mirror(const lb_model *m, uint64_t seed, uint64_t step)
{
    return m->kind == LB_XY ? lb_below(lb_philox(seed, step, 0, LB_RNG_MIRROR).v[0], (uint32_t)m->q)
                            : 0u;
}

/* Probability 1 - exp(-x) as a threshold on a 32-bit word.  Host and device exp may differ in
 * the last bit; the threshold then differs only where p * 2^32 lies within ~1e-6 of an integer,
 * and the decision only when the word equals that integer: never in practice. */
LB_HD uint32_t lb_threshold(double x)
{
    const double t = -expm1(-x) * 4294967296.0;
    return t >= 4294967295.0 ? 0xFFFFFFFFu : (uint32_t)t;
}

/* Whether the bond between spins a (site) and b (neighbour) is active, given its word. */
LB_HD int lb_bond_active(const lb_model *m, uint32_t k, unsigned a, unsigned b, uint32_t word)
{
    if (m->kind != LB_XY)
        return a == b && word < m->thr;
    const unsigned q2 = 2u * (unsigned)m->q;
    const double pa = m->proj[(2u * a + q2 - k) % q2], pb = m->proj[(2u * b + q2 - k) % q2];
    const double x = (m->k2 * pa) * pb;
    return x > 0.0 && word < lb_threshold(x);
}

/* The bond byte of site i: bit d for the bond to the +d neighbour. */
LB_HD uint8_t lb_bond_byte(const lb_lattice *lat, const lb_model *m, uint64_t seed, uint64_t step,
                           uint32_t k, const uint16_t *spins, uint32_t i)
{
    int x, y, z;
    lb_coords(lat->L, i, &x, &y, &z);
    const lb_u32x4 w = lb_philox(seed, step, i, LB_RNG_BOND);
    const unsigned s = spins[i];
    uint8_t b = 0;
    for (int d = 0; d < lat->dim; d++)
        if (lb_bond_active(m, k, s, spins[lb_neighbor(lat->L, x, y, z, d, 1)], w.v[d]))
            b |= (uint8_t)(1u << d);
    return b;
}

/* The new value of spin s in the cluster whose label (smallest site) is root. */
LB_HD uint16_t lb_new_spin(const lb_model *m, uint64_t seed, uint64_t step, uint32_t k, unsigned s,
                           uint32_t root)
{
    const uint32_t w = lb_philox(seed, step, root, LB_RNG_FLIP).v[0];
    if (m->kind == LB_ISING)
        return (uint16_t)(w >> 31);
    if (m->kind == LB_POTTS)
        return (uint16_t)lb_below(w, (uint32_t)m->q);
    return (uint16_t)((w >> 31) ? (k + (unsigned)m->q - s) % (unsigned)m->q : s);
}

/* The initial (random, "hot") spin of site i. */
LB_HD uint16_t lb_initial_spin(const lb_model *m, uint64_t seed, uint32_t i)
{
    return (uint16_t)lb_below(lb_philox(seed, 0, i, LB_RNG_INIT).v[0], (uint32_t)m->q);
}

/* Integer sums of one configuration, from which every observable follows (see
 * lb_observe): the same on host and device, bit for bit. */
typedef struct lb_sums {
    int64_t roots;          /* clusters (sites labelled with themselves) */
    int64_t bond;           /* Ising: sum s_i s_j; Potts: sum delta; clock: sum cos * 2^32 */
    int64_t mx;             /* Ising: sum s; clock: sum cos * 2^32 */
    int64_t my;             /* clock: sum sin * 2^32 */
    int64_t bad;            /* spins out of range (0..q-1): an unwritten or corrupt site */
    int64_t hist[LB_MAX_Q]; /* Potts: sites per state */
} lb_sums;

#endif /* LABELING_H */
