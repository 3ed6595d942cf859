/* md plugin, host side: a point's initial state (the lattice equilibrated on the host engine,
 * wrapped into the region), its shuffle, and its reference figures (energy, virial, neighbour
 * counts, the fullest cell). */
#include <stdlib.h>
#include <string.h>

#include "kbench/plugin.h"
#include "cells.h"
#include "draws.h"
#include "md.h"

void md_point_free(md_point_state *ps)
{
    if (!ps)
        return;
    free(ps->r);
    free(ps->v);
    ps->r = ps->v = NULL;
}

int md_point_lattice(const md_config *cfg, uint64_t seed, md_point_state *ps, char *msg)
{
    int n = cfg->n, rc = -1;
    double *r = malloc(3 * (size_t)n * sizeof(double)), *v = malloc(3 * (size_t)n * sizeof(double));
    memset(ps, 0, sizeof *ps);
    ps->cfg = *cfg;
    ps->r = calloc(4 * (size_t)n, sizeof(float));
    ps->v = calloc(4 * (size_t)n, sizeof(float));
    if (!ps->r || !ps->v || !r || !v) {
        kb_msgf(msg, "host allocation failed for %d atoms", n);
        md_point_free(ps);
        goto done;
    }
    md_lattice(cfg, seed, r, v);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) {
            ps->r[4 * i + k] = (float)r[3 * i + k];
            ps->v[4 * i + k] = (float)v[3 * i + k];
        }
    rc = 0;
done:
    free(r);
    free(v);
    return rc;
}

int md_prepare_host(const md_config *cfg, uint64_t seed, md_point_state *ps, char *msg)
{
    md_host h;
    md_config c = *cfg;
    int rc = -1, n = cfg->n;
    if (md_point_lattice(cfg, seed, ps, msg))
        return -1;
    c.steps = 1;
    if (md_host_create(&h, &c, MD_HOST_PAIRLIST, ps->r, ps->v, 0, 0, msg))
        goto fail;
    for (int s = 1; s <= cfg->equil; s++) {
        md_host_step(&h);
        if (cfg->rescale_every > 0 && s % cfg->rescale_every == 0)
            md_host_rescale(&h);
    }
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) {
            ps->r[4 * i + k] = (float)wrap(h.r[3 * i + k], cfg->L);
            ps->v[4 * i + k] = (float)h.v[3 * i + k];
        }
    md_host_destroy(&h);
    if (md_point_reference(ps, msg))
        goto fail;
    rc = 0;
fail:
    if (rc)
        md_point_free(ps);
    return rc;
}

void md_point_shuffle(md_point_state *ps, uint64_t seed)
{
    int n = ps->cfg.n;
    for (int i = n - 1; i > 0; i--) { /* Fisher-Yates, counter-based draws: reproducible */
        int j = (int)(uniform01(seed ^ 0x5348554646ull, (uint64_t)i) * (i + 1));
        for (int k = 0; k < 4; k++) {
            float t = ps->r[4 * i + k];
            ps->r[4 * i + k] = ps->r[4 * j + k];
            ps->r[4 * j + k] = t;
            t = ps->v[4 * i + k];
            ps->v[4 * i + k] = ps->v[4 * j + k];
            ps->v[4 * j + k] = t;
        }
    }
}

int md_point_reference(md_point_state *ps, char *msg)
{
    const md_config *cfg = &ps->cfg;
    int n = cfg->n, rc = -1;
    double *f = malloc(3 * (size_t)n * sizeof(double));
    int *cnt = malloc((size_t)n * sizeof(int)), *occ = calloc((size_t)cfg->ncell, sizeof(int));
    double ke = 0.0;
    if (!f || !cnt || !occ || md_ref_cells(cfg, ps->r, n, f, &ps->u0, &ps->vir0)) {
        kb_msgf(msg, "host allocation failed for the reference of %d atoms", n);
        goto fail;
    }
    ps->np0 = md_ref_neighbor_counts(cfg, ps->r, n, cnt);
    if (ps->np0 < 0) {
        kb_msgf(msg, "host allocation failed for the neighbour counts of %d atoms", n);
        goto fail;
    }
    ps->max_nbr = ps->max_occ = 0;
    for (int i = 0; i < n; i++) {
        double p[3] = {ps->r[4 * i], ps->r[4 * i + 1], ps->r[4 * i + 2]};
        int c = cell_of_pos(p, cfg);
        if (++occ[c] > ps->max_occ)
            ps->max_occ = occ[c];
        if (cnt[i] > ps->max_nbr)
            ps->max_nbr = cnt[i];
        for (int k = 0; k < 3; k++)
            ke += (double)ps->v[4 * i + k] * ps->v[4 * i + k];
    }
    ps->ke0 = 0.5 * ke / n;
    rc = 0;
fail:
    free(f);
    free(cnt);
    free(occ);
    return rc;
}
