/* md plugin, host side: the periodic geometry the host engine and the references share:
 * minimum-image distances, wrapping into [-L/2, L/2), and the linked-list cells of side
 * L / G.  Periodic images use the minimum-image rule in every pair test instead of the paper's
 * packed boundary codes: the region holds at least 3 cells of rc + delta per edge, so the
 * nearest image is the only one within range. */
#ifndef KBENCH_MD_CELLS_H
#define KBENCH_MD_CELLS_H

#include "md.h"

static inline double min_image(double d, double L)
{
    if (d >= 0.5 * L)
        d -= L;
    else if (d < -0.5 * L)
        d += L;
    return d;
}

static inline double wrap(double x, double L)
{
    if (x >= 0.5 * L)
        x -= L;
    else if (x < -0.5 * L)
        x += L;
    return x;
}

/* Cell coordinate of x in [-L/2, L/2). */
static inline int cell1(double x, const md_config *cfg)
{
    int c = (int)((x + 0.5 * cfg->L) * (cfg->G / cfg->L));
    return c < 0 ? 0 : (c >= cfg->G ? cfg->G - 1 : c);
}

static inline int cell_of_pos(const double *p, const md_config *cfg)
{
    return (cell1(p[2], cfg) * cfg->G + cell1(p[1], cfg)) * cfg->G + cell1(p[0], cfg);
}

/* Scalar index of the cell at offset (dx, dy, dz) from cell c, periodic. */
static inline int cell_shift(int c, int dx, int dy, int dz, int G)
{
    int x = c % G, y = (c / G) % G, z = c / (G * G);
    x = (x + dx + G) % G;
    y = (y + dy + G) % G;
    z = (z + dz + G) % G;
    return (z * G + y) * G + x;
}

/* Linked-list cells: q[n + c] heads cell c, q[i] the next atom or -1. */
static inline void build_cells(const md_config *cfg, const double *r, int n, int *q)
{
    for (int c = 0; c < cfg->ncell; c++)
        q[n + c] = -1;
    for (int i = n - 1; i >= 0; i--) {
        int c = n + cell_of_pos(r + 3 * i, cfg);
        q[i] = q[c];
        q[c] = i;
    }
}

static inline double dist2(const double *a, const double *b, double L, double *d)
{
    double dx = min_image(a[0] - b[0], L), dy = min_image(a[1] - b[1], L),
           dz = min_image(a[2] - b[2], L);
    if (d) {
        d[0] = dx;
        d[1] = dy;
        d[2] = dz;
    }
    return dx * dx + dy * dy + dz * dz;
}

#endif
