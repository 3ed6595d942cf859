/* md plugin, host side: the double-precision host engine (host_pairlist: linked-list cells, a
 * half-shell pair list and Newton's third law; host_layer: the paper's layer matrix H and
 * neighbour matrix W in C, no third law), its steps, rescaling and neighbour sets.  Compiled
 * into the plugin and into tests/test_md.c. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kbench/plugin.h"
#include "cells.h"
#include "eos.h"
#include "md.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The 14 offsets of the half shell (the cell itself first). */
static const int half_shell[14][3] = {{0, 0, 0},  {1, 0, 0},   {1, 1, 0},  {0, 1, 0}, {-1, 1, 0},
                                      {0, 0, 1},  {1, 0, 1},   {1, 1, 1},  {0, 1, 1}, {-1, 1, 1},
                                      {-1, 0, 1}, {-1, -1, 1}, {0, -1, 1}, {1, -1, 1}};

static int build_pairlist(md_host *h)
{
    const md_config *cfg = &h->cfg;
    double rn2 = (cfg->rc + cfg->delta) * (cfg->rc + cfg->delta);
    int n = h->n, G = cfg->G;
    build_cells(cfg, h->r, n, h->q);
    h->npairs = 0;
    for (int c1 = 0; c1 < cfg->ncell; c1++)
        for (int k = 0; k < 14; k++) {
            int c2 = cell_shift(c1, half_shell[k][0], half_shell[k][1], half_shell[k][2], G);
            for (int i = h->q[n + c1]; i >= 0; i = h->q[i])
                for (int j = h->q[n + c2]; j >= 0; j = h->q[j]) {
                    if (c1 == c2 && j <= i)
                        continue;
                    if (dist2(h->r + 3 * i, h->r + 3 * j, cfg->L, NULL) < rn2) {
                        if (h->npairs == h->pair_cap) {
                            size_t cap = h->pair_cap * 2 + 1024;
                            int *pi = realloc(h->pi, cap * sizeof(int));
                            int *pj = pi ? realloc(h->pj, cap * sizeof(int)) : NULL;
                            if (pi)
                                h->pi = pi;
                            if (!pj)
                                return -1;
                            h->pj = pj;
                            h->pair_cap = cap;
                        }
                        h->pi[h->npairs] = i;
                        h->pj[h->npairs++] = j;
                    }
                }
        }
    h->sum_np += 2.0 * (double)h->npairs / n;
    return 0;
}

/* The layer matrix: layers assigned in atom order as published, H[c * lcap + l], then W. */
static int build_layers(md_host *h)
{
    const md_config *cfg = &h->cfg;
    double rn2 = (cfg->rc + cfg->delta) * (cfg->rc + cfg->delta);
    int n = h->n, G = cfg->G, nl = 0;
    long long total = 0;
    memset(h->kc, 0, (size_t)cfg->ncell * sizeof(int));
    for (int i = 0; i < n; i++) {
        int c = cell_of_pos(h->r + 3 * i, cfg);
        h->cell_of[i] = c;
        h->layer_of[i] = h->kc[c]++;
        if (h->kc[c] > nl)
            nl = h->kc[c];
    }
    h->nl = nl;
    if (nl > h->lcap) {
        int *H = realloc(h->H, (size_t)cfg->ncell * (size_t)nl * sizeof(int));
        if (!H)
            return -1;
        h->H = H;
        h->lcap = nl;
    }
    for (int i = 0; i < n; i++)
        h->H[(size_t)h->cell_of[i] * h->lcap + h->layer_of[i]] = i;
    for (;;) {
        int too_many = 0;
        total = 0;
        for (int i = 0; i < n && !too_many; i++) {
            int m = 0, c = h->cell_of[i];
            for (int dz = -1; dz <= 1; dz++)
                for (int dy = -1; dy <= 1; dy++)
                    for (int dx = -1; dx <= 1; dx++) {
                        int c2 = cell_shift(c, dx, dy, dz, G);
                        for (int l = 0; l < h->kc[c2]; l++) {
                            int j = h->H[(size_t)c2 * h->lcap + l];
                            if (j == i || dist2(h->r + 3 * i, h->r + 3 * j, cfg->L, NULL) >= rn2)
                                continue;
                            if (m == h->mcap) {
                                too_many = 1;
                                break;
                            }
                            h->W[(size_t)m * n + i] = j;
                            m++;
                        }
                    }
            h->nn[i] = m;
            total += m;
        }
        if (!too_many)
            break;
        /* A denser spot than sized for: grow W and build again. */
        int mcap = h->mcap + h->mcap / 2 + 8;
        int *W = realloc(h->W, (size_t)mcap * n * sizeof(int));
        if (!W)
            return -1;
        h->W = W;
        h->mcap = mcap;
    }
    h->sum_np += (double)total / n;
    h->sum_nl += nl;
    return 0;
}

static int host_build(md_host *h)
{
    double t0 = now_s();
    int rc = h->kind == MD_HOST_PAIRLIST ? build_pairlist(h) : build_layers(h);
    if (rc)
        h->overflow = 1;
    h->builds++;
    h->t_nbr += now_s() - t0;
    return rc;
}

static void host_forces(md_host *h)
{
    const md_config *cfg = &h->cfg;
    double rc2 = cfg->rc * cfg->rc, pe = 0.0, vir = 0.0;
    int n = h->n;
    double t0 = now_s();
    memset(h->a, 0, 3 * (size_t)n * sizeof(double));
    if (h->kind == MD_HOST_PAIRLIST) {
        for (size_t p = 0; p < h->npairs; p++) {
            int i = h->pi[p], j = h->pj[p];
            double d[3], u, fr, r2 = dist2(h->r + 3 * i, h->r + 3 * j, cfg->L, d);
            if (r2 >= rc2)
                continue;
            md_pair(r2, cfg->shift, &u, &fr);
            for (int k = 0; k < 3; k++) {
                h->a[3 * i + k] += fr * d[k];
                h->a[3 * j + k] -= fr * d[k];
            }
            pe += u;
            vir += fr * r2;
        }
    } else {
        for (int i = 0; i < n; i++) {
            double ai[3] = {0, 0, 0}, ui = 0.0, vi = 0.0;
            for (int m = 0; m < h->nn[i]; m++) {
                int j = h->W[(size_t)m * n + i];
                double d[3], u, fr, r2 = dist2(h->r + 3 * i, h->r + 3 * j, cfg->L, d);
                if (r2 >= rc2)
                    continue;
                md_pair(r2, cfg->shift, &u, &fr);
                for (int k = 0; k < 3; k++)
                    ai[k] += fr * d[k];
                ui += u;
                vi += fr * r2;
            }
            for (int k = 0; k < 3; k++)
                h->a[3 * i + k] = ai[k];
            pe += 0.5 * ui; /* each pair is met from both atoms */
            vir += 0.5 * vi;
        }
    }
    h->pe = pe / n;
    h->vir = vir / n;
    h->t_force += now_s() - t0;
}

static void host_properties(md_host *h)
{
    double ke = 0.0, vmax2 = 0.0;
    for (int i = 0; i < h->n; i++) {
        double v2 = h->v[3 * i] * h->v[3 * i] + h->v[3 * i + 1] * h->v[3 * i + 1] +
                    h->v[3 * i + 2] * h->v[3 * i + 2];
        ke += v2;
        if (v2 > vmax2)
            vmax2 = v2;
    }
    h->ke = 0.5 * ke / h->n;
    h->vmax2 = vmax2;
}

void md_host_destroy(md_host *h)
{
    free(h->r);
    free(h->v);
    free(h->a);
    free(h->u);
    free(h->q);
    free(h->pi);
    free(h->pj);
    free(h->cell_of);
    free(h->layer_of);
    free(h->kc);
    free(h->H);
    free(h->W);
    free(h->nn);
    free(h->hist);
    memset(h, 0, sizeof *h);
}

int md_host_create(md_host *h, const md_config *cfg, int kind, const float *r4, const float *v4,
                   int lcap, int mcap, char *msg)
{
    int n = cfg->n;
    memset(h, 0, sizeof *h);
    h->cfg = *cfg;
    h->kind = kind;
    h->n = n;
    h->hist_cap = cfg->steps > 0 ? cfg->steps : 1;
    h->r = malloc(3 * (size_t)n * sizeof(double));
    h->v = malloc(3 * (size_t)n * sizeof(double));
    h->a = malloc(3 * (size_t)n * sizeof(double));
    h->q = malloc(((size_t)n + (size_t)cfg->ncell) * sizeof(int));
    h->hist = calloc(3 * (size_t)h->hist_cap, sizeof(double));
    if (!h->r || !h->v || !h->a || !h->q || !h->hist)
        goto nomem;
    if (kind == MD_HOST_LAYER) {
        h->lcap = lcap > 0 ? lcap : 8;
        h->mcap = mcap > 0 ? mcap : 32;
        h->cell_of = malloc((size_t)n * sizeof(int));
        h->layer_of = malloc((size_t)n * sizeof(int));
        h->kc = malloc((size_t)cfg->ncell * sizeof(int));
        h->H = malloc((size_t)cfg->ncell * (size_t)h->lcap * sizeof(int));
        h->W = malloc((size_t)h->mcap * (size_t)n * sizeof(int));
        h->nn = malloc((size_t)n * sizeof(int));
        if (!h->cell_of || !h->layer_of || !h->kc || !h->H || !h->W || !h->nn)
            goto nomem;
    }
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) {
            h->r[3 * i + k] = r4[4 * i + k];
            h->v[3 * i + k] = v4[4 * i + k];
        }
    if (host_build(h))
        goto nomem;
    host_forces(h);
    host_properties(h);
    return 0;
nomem:
    kb_msgf(msg, "host allocation failed for %d atoms", n);
    md_host_destroy(h);
    return -1;
}

void md_host_rebuild_now(md_host *h)
{
    host_build(h);
    host_forces(h);
    h->disp = 0.0;
    h->rebuild = 0;
}

void md_host_step(md_host *h)
{
    const md_config *cfg = &h->cfg;
    double dt = cfg->dt, t0 = now_s();
    int n = h->n;
    for (int i = 0; i < 3 * n; i++) {
        h->v[i] += 0.5 * dt * h->a[i];
        h->r[i] = wrap(h->r[i] + dt * h->v[i], cfg->L);
    }
    if (h->rebuild) {
        host_build(h);
        h->rebuilds++;
        h->sum_nu += (double)h->steps_since_rebuild;
        h->steps_since_rebuild = 0;
        h->rebuild = 0;
        h->disp = 0.0;
    }
    host_forces(h);
    for (int i = 0; i < 3 * n; i++)
        h->v[i] += 0.5 * dt * h->a[i];
    host_properties(h);
    h->disp += sqrt(h->vmax2) * dt;
    if (h->disp > 0.5 * cfg->delta)
        h->rebuild = 1;
    {
        double *e = h->hist + 3 * (h->steps_done % h->hist_cap);
        e[0] = h->ke;
        e[1] = h->pe;
        e[2] = h->vir;
    }
    h->steps_done++;
    h->steps_since_rebuild++;
    h->t_total += now_s() - t0;
}

void md_host_rescale(md_host *h)
{
    double f = sqrt(1.5 * h->cfg.temp / h->ke);
    for (int i = 0; i < 3 * h->n; i++)
        h->v[i] *= f;
    h->ke *= f * f;
}

int md_host_neighbors(const md_host *h, int i, int *out, int cap)
{
    int m = 0;
    if (h->kind == MD_HOST_LAYER) {
        for (; m < h->nn[i]; m++)
            if (m < cap)
                out[m] = h->W[(size_t)m * h->n + i];
        return m;
    }
    for (size_t p = 0; p < h->npairs; p++) {
        int j = h->pi[p] == i ? h->pj[p] : (h->pj[p] == i ? h->pi[p] : -1);
        if (j >= 0) {
            if (m < cap)
                out[m] = j;
            m++;
        }
    }
    return m;
}
