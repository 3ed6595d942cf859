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
        lb_unite_jump(s, t, t + 1);
    if ((b & 2u) && ly + 1 < tl->ty && y + 1 < lat->L)
        lb_unite_jump(s, t, t + (uint32_t)tl->tx);
    if ((b & 4u) && lz + 1 < tl->tz && z + 1 < lat->L)
        lb_unite_jump(s, t, t + (uint32_t)(tl->tx * tl->ty));
}

/* Phase 2 (after the whole tile's phase 1): the global label of the local root. */
LB_HD void lb_uf_write_site(const lb_lattice *lat, const lb_tile *tl, uint32_t *s, uint32_t *labels,
                            uint32_t t)
{
    uint32_t g, r;
    if (!lb_tile_site(lat, tl, t, &g))
        return;
    lb_tile_site(lat, tl, lb_find_jump(s, t), &r);
    labels[g] = r;
}

/* Lanes of a tile in phase 3: the largest face (2-D 32x8 tiles: the +y face, 32 sites;
 * 3-D 8x8x4: the +z face, 64). */
LB_HD int lb_uf_face_lanes(int dim, int tx, int ty, int tz)
{
    const int fx = ty * tz, fy = tx * tz, fz = dim == 3 ? tx * ty : 0;
    const int m = fx > fy ? fx : fy;
    return m > fz ? m : fz;
}

/* Phase 3 (after every tile): lane j of tile (bx, by, bz) joins the bonds that leave the tile
 * from site j of each of its +x, +y (and +z) faces: the last column, row (plane) of the tile,
 * or of the lattice in a partial tile, where the bond wraps around.  Exactly the bonds that
 * phase 1 left out; only the face sites are read (5/32 of the sites in 2-D, 1/4 in 3-D). */
LB_HD void lb_uf_face_site(const lb_lattice *lat, int tx, int ty, int tz, int bx, int by, int bz,
                           int j, const uint8_t *bonds, uint32_t *labels)
{
    const int L = lat->L, zmax = lat->dim == 3 ? L : 1;
    const int x0 = bx * tx, y0 = by * ty, z0 = bz * tz;
    const int xf = x0 + tx - 1 < L - 1 ? x0 + tx - 1 : L - 1;
    const int yf = y0 + ty - 1 < L - 1 ? y0 + ty - 1 : L - 1;
    const int zf = z0 + tz - 1 < L - 1 ? z0 + tz - 1 : L - 1;
    int x, y, z;
    if (j < ty * tz) { /* +x face */
        y = y0 + j % ty;
        z = z0 + j / ty;
        if (y < L && z < zmax) {
            const uint32_t i =
                (uint32_t)xf + (uint32_t)L * ((uint32_t)y + (uint32_t)L * (uint32_t)z);
            if (bonds[i] & 1u)
                lb_unite_jump(labels, i, lb_neighbor(L, xf, y, z, 0, 1));
        }
    }
    if (j < tx * tz) { /* +y face */
        x = x0 + j % tx;
        z = z0 + j / tx;
        if (x < L && z < zmax) {
            const uint32_t i =
                (uint32_t)x + (uint32_t)L * ((uint32_t)yf + (uint32_t)L * (uint32_t)z);
            if (bonds[i] & 2u)
                lb_unite_jump(labels, i, lb_neighbor(L, x, yf, z, 1, 1));
        }
    }
    if (lat->dim == 3 && j < tx * ty) { /* +z face */
        x = x0 + j % tx;
        y = y0 + j / tx;
        if (x < L && y < L) {
            const uint32_t i =
                (uint32_t)x + (uint32_t)L * ((uint32_t)y + (uint32_t)L * (uint32_t)zf);
            if (bonds[i] & 4u)
                lb_unite_jump(labels, i, lb_neighbor(L, x, y, zf, 2, 1));
        }
    }
}

#endif
