/* union_find's per-site steps (see 04_union_find.cu).  A tile is TX x TY x TZ sites; thread t
 * of a tile is local site (t % TX, t / TX % TY, t / (TX TY)); the local array s holds local
 * indices, ordered as the global ones, so a local root is its component's smallest site. */
#ifndef LABELING_UNION_FIND_CUH
#define LABELING_UNION_FIND_CUH

#include "sites.h"

typedef struct lb_tile {
    int tx, ty, tz; /* tile extents */
    int bx, by, bz; /* tile coordinates (block index) */
} lb_tile;

/* Global site of local index t, and whether it is on the lattice. */
LB_HD int lb_tile_site(const lb_lattice *lat, const lb_tile *tl, uint32_t t, uint32_t *g)
{
    const int x = tl->bx * tl->tx + (int)(t % (uint32_t)tl->tx);
    const int y = tl->by * tl->ty + (int)((t / (uint32_t)tl->tx) % (uint32_t)tl->ty);
    const int z = tl->bz * tl->tz + (int)(t / (uint32_t)(tl->tx * tl->ty));
    const int L = lat->L;
    *g = (uint32_t)x + (uint32_t)L * ((uint32_t)y + (uint32_t)L * (uint32_t)z);
    return x < L && y < L && z < (lat->dim == 3 ? L : 1);
}

/* Phase 1 (after s[t] = t for the whole tile): the site's bonds inside the tile. */
LB_HD void lb_uf_local_site(const lb_lattice *lat, const lb_tile *tl, const uint8_t *bonds,
                            uint32_t *s, uint32_t t)
{
    uint32_t g;
    if (!lb_tile_site(lat, tl, t, &g))
        return;
    const int lx = (int)(t % (uint32_t)tl->tx),
              ly = (int)((t / (uint32_t)tl->tx) % (uint32_t)tl->ty),
              lz = (int)(t / (uint32_t)(tl->tx * tl->ty));
    const int x = tl->bx * tl->tx + lx, y = tl->by * tl->ty + ly, z = tl->bz * tl->tz + lz;
    const uint8_t b = bonds[g];
    if ((b & 1u) && lx + 1 < tl->tx && x + 1 < lat->L)
        lb_unite(s, t, t + 1);
    if ((b & 2u) && ly + 1 < tl->ty && y + 1 < lat->L)
        lb_unite(s, t, t + (uint32_t)tl->tx);
    if ((b & 4u) && lz + 1 < tl->tz && z + 1 < lat->L)
        lb_unite(s, t, t + (uint32_t)(tl->tx * tl->ty));
}

/* Phase 2 (after the whole tile's phase 1): the global label of the local root. */
LB_HD void lb_uf_write_site(const lb_lattice *lat, const lb_tile *tl, const uint32_t *s,
                            uint32_t *labels, uint32_t t)
{
    uint32_t g, r;
    if (!lb_tile_site(lat, tl, t, &g))
        return;
    lb_tile_site(lat, tl, lb_find(s, t), &r);
    labels[g] = r;
}

/* Phase 3 (after every tile): the bonds leaving a tile (or wrapping around). */
LB_HD void lb_uf_border_site(const lb_lattice *lat, int tx, int ty, int tz, const uint8_t *bonds,
                             uint32_t *labels, uint32_t i)
{
    const uint8_t b = bonds[i];
    if (!b)
        return;
    int x, y, z;
    lb_coords(lat->L, i, &x, &y, &z);
    const int L = lat->L;
    if ((b & 1u) && (x % tx == tx - 1 || x == L - 1))
        lb_unite(labels, i, lb_neighbor(L, x, y, z, 0, 1));
    if ((b & 2u) && (y % ty == ty - 1 || y == L - 1))
        lb_unite(labels, i, lb_neighbor(L, x, y, z, 1, 1));
    if (lat->dim == 3 && (b & 4u) && (z % tz == tz - 1 || z == L - 1))
        lb_unite(labels, i, lb_neighbor(L, x, y, z, 2, 1));
}

#endif
