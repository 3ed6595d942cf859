/* md plugin, host side: the initial lattice, the double-precision host engine (host_pairlist:
 * linked-list cells, a half-shell pair list and Newton's third law; host_layer: the paper's
 * layer matrix H and neighbour matrix W in C, no third law), equilibration, and the double
 * references verify uses (forces and energy by all pairs or through cells, brute-force
 * neighbour sets).  Compiled into the plugin and into tests/test_md.c.
 *
 * Periodic images use the minimum-image rule in every pair test instead of the paper's packed
 * boundary codes: the region holds at least 3 cells of rc + delta per edge, so the nearest
 * image is the only one within range.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>
#include <unistd.h>

#include "kbench/plugin.h"
#include "eos.h"
#include "md.h"

/* ---- configuration and lattice ---------------------------------------------------------- */

int md_config_system(md_config *cfg, const char *sys)
{
    if (strcmp(sys, "lj") == 0) {
        cfg->system = MD_SYS_LJ;
        cfg->temp = 1.2, cfg->rho = 0.38, cfg->rc = 3.0, cfg->delta = 0.8;
    } else if (strcmp(sys, "sp") == 0) {
        cfg->system = MD_SYS_SP;
        cfg->temp = 1.0, cfg->rho = 0.8, cfg->rc = pow(2.0, 1.0 / 6.0), cfg->delta = 0.6;
        cfg->shift = 1.0;
    } else if (strcmp(sys, "ljstd") == 0) {
        cfg->system = MD_SYS_LJSTD;
        cfg->temp = 1.0, cfg->rho = 0.8442, cfg->rc = 2.5, cfg->delta = 0.4;
    } else {
        return -1;
    }
    cfg->dt = 0.005;
    cfg->rescale_every = 20;
    return 0;
}

int md_config_derive(md_config *cfg, char *msg)
{
    double rn = cfg->rc + cfg->delta;
    if (cfg->ne < 1 || cfg->ne > 1290) {
        kb_msgf(msg, "N_e = %d out of range 1..1290 (atom indices are 32-bit)", cfg->ne);
        return -1;
    }
    if (!(cfg->rho > 0) || !(cfg->rc > 0) || !(cfg->delta > 0) || !(cfg->temp > 0) ||
        !(cfg->dt > 0)) {
        kb_msgf(msg, "rho, T, rc, delta and dt must be positive");
        return -1;
    }
    cfg->n = cfg->ne * cfg->ne * cfg->ne;
    /* Rounded to float: the device's region edge, so host, device and references agree. */
    cfg->L = (double)(float)(cfg->ne / cbrt(cfg->rho));
    cfg->G = (int)floor(cfg->L / rn);
    if (cfg->G < 3) {
        kb_msgf(msg, "region edge %.3f holds %d cells of rc+delta = %.3f: need 3 (larger N_e)",
                cfg->L, cfg->G, rn);
        return -1;
    }
    if (cfg->G > 1024)
        cfg->G = 1024;
    cfg->ncell = cfg->G * cfg->G * cfg->G;
    return 0;
}

static uint64_t splitmix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Uniform in [0, 1) from (seed, counter). */
static double uniform01(uint64_t seed, uint64_t k)
{
    return (double)(splitmix64(seed * 0x9E3779B97F4A7C15ull + k) >> 11) * 0x1.0p-53;
}

void md_lattice(const md_config *cfg, uint64_t seed, double *r, double *v)
{
    int ne = cfg->ne, n = cfg->n, i = 0;
    double gap = cfg->L / ne, speed = sqrt(3.0 * cfg->temp), sum[3] = {0, 0, 0};
    for (int z = 0; z < ne; z++)
        for (int y = 0; y < ne; y++)
            for (int x = 0; x < ne; x++, i++) {
                double cz = 2.0 * uniform01(seed, 2 * (uint64_t)i) - 1.0;
                double ph = 2.0 * 3.14159265358979323846 * uniform01(seed, 2 * (uint64_t)i + 1);
                double s = sqrt(1.0 - cz * cz);
                r[3 * i] = (x + 0.5) * gap - 0.5 * cfg->L;
                r[3 * i + 1] = (y + 0.5) * gap - 0.5 * cfg->L;
                r[3 * i + 2] = (z + 0.5) * gap - 0.5 * cfg->L;
                v[3 * i] = speed * s * cos(ph);
                v[3 * i + 1] = speed * s * sin(ph);
                v[3 * i + 2] = speed * cz;
                for (int d = 0; d < 3; d++)
                    sum[d] += v[3 * i + d];
            }
    for (i = 0; i < n; i++)
        for (int d = 0; d < 3; d++)
            v[3 * i + d] -= sum[d] / n;
}

/* ---- shared geometry ---------------------------------------------------------------------- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

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
static void build_cells(const md_config *cfg, const double *r, int n, int *q)
{
    for (int c = 0; c < cfg->ncell; c++)
        q[n + c] = -1;
    for (int i = n - 1; i >= 0; i--) {
        int c = n + cell_of_pos(r + 3 * i, cfg);
        q[i] = q[c];
        q[c] = i;
    }
}

/* The 14 offsets of the half shell (the cell itself first). */
static const int half_shell[14][3] = {{0, 0, 0},  {1, 0, 0},   {1, 1, 0},  {0, 1, 0}, {-1, 1, 0},
                                      {0, 0, 1},  {1, 0, 1},   {1, 1, 1},  {0, 1, 1}, {-1, 1, 1},
                                      {-1, 0, 1}, {-1, -1, 1}, {0, -1, 1}, {1, -1, 1}};

static double dist2(const double *a, const double *b, double L, double *d)
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

/* ---- host engine --------------------------------------------------------------------------- */

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

/* ---- equilibration and the point's reference --------------------------------------------- */

void md_point_free(md_point_state *ps)
{
    if (!ps)
        return;
    free(ps->r);
    free(ps->v);
    ps->r = ps->v = NULL;
}

int md_prepare_host(const md_config *cfg, uint64_t seed, md_point_state *ps, char *msg)
{
    md_host h;
    md_config c = *cfg;
    double *r = NULL, *v = NULL;
    int rc = -1, n = cfg->n;
    memset(ps, 0, sizeof *ps);
    ps->cfg = *cfg;
    ps->r = calloc(4 * (size_t)n, sizeof(float));
    ps->v = calloc(4 * (size_t)n, sizeof(float));
    r = malloc(3 * (size_t)n * sizeof(double));
    v = malloc(3 * (size_t)n * sizeof(double));
    if (!ps->r || !ps->v || !r || !v) {
        kb_msgf(msg, "host allocation failed for %d atoms", n);
        goto fail;
    }
    md_lattice(cfg, seed, r, v);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) {
            ps->r[4 * i + k] = (float)r[3 * i + k];
            ps->v[4 * i + k] = (float)v[3 * i + k];
        }
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
    free(r);
    free(v);
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

/* ---- references ------------------------------------------------------------------------- */

static void to_double(const float *r4, int n, double *r)
{
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 3; k++)
            r[3 * i + k] = r4[4 * i + k];
}

void md_ref_allpairs(const md_config *cfg, const float *r4, int n, double *f, double *u,
                     double *vir)
{
    double rc2 = cfg->rc * cfg->rc, pe = 0.0, vs = 0.0;
    memset(f, 0, 3 * (size_t)n * sizeof(double));
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            double d[3], pu, fr, r2;
            d[0] = min_image((double)r4[4 * i] - r4[4 * j], cfg->L);
            d[1] = min_image((double)r4[4 * i + 1] - r4[4 * j + 1], cfg->L);
            d[2] = min_image((double)r4[4 * i + 2] - r4[4 * j + 2], cfg->L);
            r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
            if (r2 >= rc2)
                continue;
            md_pair(r2, cfg->shift, &pu, &fr);
            for (int k = 0; k < 3; k++) {
                f[3 * i + k] += fr * d[k];
                f[3 * j + k] -= fr * d[k];
            }
            pe += pu;
            vs += fr * r2;
        }
    *u = pe / n;
    *vir = vs / n;
}

/* The references through cells below run over the cells in parallel: each job takes a
 * contiguous range of cells c1, writes only the per-atom outputs of the atoms in its cells and
 * keeps its own partial sums, which are added in job order afterwards (the same figures for a
 * given number of jobs).  Verification of a million-atom case is several passes over every
 * atom's 27 cells, which one core takes seconds for; the GPU machine has 16 cores. */
#define MD_REF_MAX_JOBS 16

typedef struct ref_job {
    const md_config *cfg;
    const double *r; /* 3 per atom */
    const int *q;    /* linked-list cells */
    int n, c_lo, c_hi;
    double cut2, lo2;  /* the pass's distance window */
    double *f;         /* forces (ref_cells), 3 per atom */
    double *fa;        /* cutoff allowance per atom (ref_cutoff_slack) */
    int *cnt;          /* neighbour counts (ref_neighbor_counts) */
    double s0, s1;     /* partial sums: energy and virial, or the allowance of U */
    long long np;      /* partial count: pairs, entries, or wrong sets */
    const int *W, *nn; /* the matrix under check (check_neighbor_matrix) */
    size_t stride;
    int mcap;
    int *mark, *found; /* mark: this job's own stamp array of n ints */
    char *sure_missing;
} ref_job;

static int ref_jobs(int ncell)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int nj = cores < 1 ? 1 : (cores > MD_REF_MAX_JOBS ? MD_REF_MAX_JOBS : (int)cores);
    return nj > ncell ? (ncell > 0 ? ncell : 1) : nj;
}

/* Runs fn on jobs[0..nj) with the cell ranges split evenly, job 0 in the calling thread; a
 * job whose thread cannot be started runs in the calling thread too. */
static void run_ref_jobs(ref_job *jobs, int nj, void *(*fn)(void *))
{
    pthread_t tid[MD_REF_MAX_JOBS];
    int started[MD_REF_MAX_JOBS] = {0};
    int ncell = jobs[0].cfg->ncell;
    for (int k = 0; k < nj; k++) {
        jobs[k].c_lo = (int)((long long)ncell * k / nj);
        jobs[k].c_hi = (int)((long long)ncell * (k + 1) / nj);
    }
    for (int k = 1; k < nj; k++)
        started[k] = pthread_create(&tid[k], NULL, fn, &jobs[k]) == 0;
    fn(&jobs[0]);
    for (int k = 1; k < nj; k++) {
        if (started[k])
            pthread_join(tid[k], NULL);
        else
            fn(&jobs[k]);
    }
}

/* The job's common part: positions in double and linked-list cells, shared by its jobs. */
static int ref_setup(const md_config *cfg, const float *r4, int n, double **r, int **q)
{
    *r = calloc(3 * (size_t)n, sizeof(double)); /* calloc: quiets -Wmaybe-uninitialized */
    *q = malloc(((size_t)n + (size_t)cfg->ncell) * sizeof(int));
    if (!*r || !*q) {
        free(*r);
        free(*q);
        *r = NULL;
        *q = NULL;
        return -1;
    }
    to_double(r4, n, *r);
    build_cells(cfg, *r, n, *q);
    return 0;
}

static void ref_fill(ref_job *jobs, int nj, const md_config *cfg, const double *r, const int *q,
                     int n, double cut2)
{
    memset(jobs, 0, (size_t)nj * sizeof *jobs);
    for (int k = 0; k < nj; k++) {
        jobs[k].cfg = cfg;
        jobs[k].r = r;
        jobs[k].q = q;
        jobs[k].n = n;
        jobs[k].cut2 = cut2;
    }
}

/* Calls the body for every ordered pair i != j with r2 < cut2 and i in cells c_lo..c_hi-1. */
#define FOR_EACH_NEIGHBOR(jb, ...)                                                                 \
    for (int c1 = (jb)->c_lo; c1 < (jb)->c_hi; c1++)                                               \
        for (int dz = -1; dz <= 1; dz++)                                                           \
            for (int dy = -1; dy <= 1; dy++)                                                       \
                for (int dx = -1; dx <= 1; dx++) {                                                 \
                    int c2 = cell_shift(c1, dx, dy, dz, (jb)->cfg->G);                             \
                    for (int i = (jb)->q[(jb)->n + c1]; i >= 0; i = (jb)->q[i])                    \
                        for (int j = (jb)->q[(jb)->n + c2]; j >= 0; j = (jb)->q[j]) {              \
                            double d[3], r2;                                                       \
                            if (i == j)                                                            \
                                continue;                                                          \
                            r2 = dist2((jb)->r + 3 * i, (jb)->r + 3 * j, (jb)->cfg->L, d);         \
                            if (r2 >= (jb)->cut2)                                                  \
                                continue;                                                          \
                            __VA_ARGS__                                                            \
                        }                                                                          \
                }

static void *ref_cells_job(void *arg)
{
    ref_job *jb = arg;
    double shift = jb->cfg->shift;
    FOR_EACH_NEIGHBOR(jb, {
        double pu, fr;
        md_pair(r2, shift, &pu, &fr);
        for (int k = 0; k < 3; k++)
            jb->f[3 * i + k] += fr * d[k];
        jb->s0 += 0.5 * pu;
        jb->s1 += 0.5 * fr * r2;
    })
    return NULL;
}

int md_ref_cells(const md_config *cfg, const float *r4, int n, double *f, double *u, double *vir)
{
    ref_job jobs[MD_REF_MAX_JOBS];
    int nj = ref_jobs(cfg->ncell), *q;
    double pe = 0.0, vs = 0.0, *r;
    if (ref_setup(cfg, r4, n, &r, &q))
        return -1;
    memset(f, 0, 3 * (size_t)n * sizeof(double));
    ref_fill(jobs, nj, cfg, r, q, n, cfg->rc * cfg->rc);
    for (int k = 0; k < nj; k++)
        jobs[k].f = f;
    run_ref_jobs(jobs, nj, ref_cells_job);
    for (int k = 0; k < nj; k++) {
        pe += jobs[k].s0;
        vs += jobs[k].s1;
    }
    *u = pe / n;
    *vir = vs / n;
    free(r);
    free(q);
    return 0;
}

/* Pairs within slack of rc: the float test r2 < rc2 may put them on either side, and the
 * truncated potential jumps there by u(rc) and the force by |f(rc)| rc. */
static void *ref_slack_job(void *arg)
{
    ref_job *jb = arg;
    double shift = jb->cfg->shift;
    FOR_EACH_NEIGHBOR(jb, {
        double pu, fr;
        (void)d;
        if (r2 <= jb->lo2)
            continue;
        md_pair(r2, shift, &pu, &fr);
        jb->fa[i] += fabs(fr) * sqrt(r2);
        jb->s0 += 0.5 * fabs(pu);
        jb->np++;
    })
    return NULL;
}

int md_ref_cutoff_slack(const md_config *cfg, const float *r4, int n, double slack, double *fa,
                        double *ua, long long *pairs)
{
    ref_job jobs[MD_REF_MAX_JOBS];
    double lo = cfg->rc - slack, hi = cfg->rc + slack, *r;
    int nj = ref_jobs(cfg->ncell), *q;
    long long np = 0;
    if (ref_setup(cfg, r4, n, &r, &q))
        return -1;
    memset(fa, 0, (size_t)n * sizeof(double));
    ref_fill(jobs, nj, cfg, r, q, n, hi * hi);
    *ua = 0.0;
    for (int k = 0; k < nj; k++) {
        jobs[k].fa = fa;
        jobs[k].lo2 = lo * lo;
    }
    run_ref_jobs(jobs, nj, ref_slack_job);
    for (int k = 0; k < nj; k++) {
        *ua += jobs[k].s0;
        np += jobs[k].np;
    }
    *ua /= n;
    *pairs = np / 2;
    free(r);
    free(q);
    return 0;
}

static void *ref_count_job(void *arg)
{
    ref_job *jb = arg;
    FOR_EACH_NEIGHBOR(jb, {
        (void)d;
        jb->cnt[i]++;
        jb->np++;
    })
    return NULL;
}

long long md_ref_neighbor_counts(const md_config *cfg, const float *r4, int n, int *cnt)
{
    ref_job jobs[MD_REF_MAX_JOBS];
    double rn = cfg->rc + cfg->delta, *r;
    int nj = ref_jobs(cfg->ncell), *q;
    long long total = 0;
    if (ref_setup(cfg, r4, n, &r, &q))
        return -1;
    memset(cnt, 0, (size_t)n * sizeof(int));
    ref_fill(jobs, nj, cfg, r, q, n, rn * rn);
    for (int k = 0; k < nj; k++)
        jobs[k].cnt = cnt;
    run_ref_jobs(jobs, nj, ref_count_job);
    for (int k = 0; k < nj; k++)
        total += jobs[k].np;
    free(r);
    free(q);
    return total / 2;
}

/* Atom by atom would need the marks of one atom at a time: walk the job's atoms in cell order
 * and stamp W's entries of atom i (in the job's own mark array) just before its brute-force
 * candidates are met.  cut2 and lo2 are the squares of rn + slack and rn - slack. */
static void *ref_check_job(void *arg)
{
    ref_job *jb = arg;
    const md_config *cfg = jb->cfg;
    const int *q = jb->q;
    int n = jb->n;
    for (int c1 = jb->c_lo; c1 < jb->c_hi; c1++)
        for (int i = q[n + c1]; i >= 0; i = q[i]) {
            int m = jb->nn[i];
            if (m < 0 || m > jb->mcap) {
                jb->sure_missing[i] = 1;
                jb->np++;
                continue;
            }
            for (int k = 0; k < m; k++) {
                int j = jb->W[(size_t)k * jb->stride + i];
                if (j < 0 || j >= n || j == i || jb->mark[j] == i)
                    jb->sure_missing[i] = 1; /* out of range or listed twice */
                else
                    jb->mark[j] = i;
            }
            for (int dz = -1; dz <= 1; dz++)
                for (int dy = -1; dy <= 1; dy++)
                    for (int dx = -1; dx <= 1; dx++) {
                        int c2 = cell_shift(c1, dx, dy, dz, cfg->G);
                        for (int j = q[n + c2]; j >= 0; j = q[j]) {
                            double r2;
                            if (j == i)
                                continue;
                            r2 = dist2(jb->r + 3 * i, jb->r + 3 * j, cfg->L, NULL);
                            if (jb->mark[j] == i) {
                                if (r2 < jb->cut2)
                                    jb->found[i]++;
                            } else if (r2 < jb->lo2) {
                                jb->sure_missing[i] = 1;
                            }
                        }
                    }
            if (jb->found[i] != m)
                jb->sure_missing[i] = 1; /* W lists an atom that is not within range */
            jb->np += jb->sure_missing[i];
        }
    return NULL;
}

long long md_check_neighbor_matrix(const md_config *cfg, const float *r4, int n, const int *W,
                                   size_t stride, const int *nn, int mcap, double slack)
{
    ref_job jobs[MD_REF_MAX_JOBS];
    double rn = cfg->rc + cfg->delta, *r = NULL;
    long long bad = -1;
    int nj = ref_jobs(cfg->ncell), *q = NULL, *found = calloc((size_t)n, sizeof(int));
    char *sure_missing = calloc((size_t)n, 1);
    ref_fill(jobs, nj, cfg, NULL, NULL, n, 0.0);
    if (!found || !sure_missing || ref_setup(cfg, r4, n, &r, &q))
        goto fail;
    for (int k = 0; k < nj; k++) {
        jobs[k].r = r;
        jobs[k].q = q;
        jobs[k].cut2 = (rn + slack) * (rn + slack);
        jobs[k].lo2 = (rn - slack) * (rn - slack);
        jobs[k].W = W;
        jobs[k].nn = nn;
        jobs[k].stride = stride;
        jobs[k].mcap = mcap;
        jobs[k].found = found;
        jobs[k].sure_missing = sure_missing;
        if (!(jobs[k].mark = malloc((size_t)n * sizeof(int))))
            goto fail;
        for (int j = 0; j < n; j++)
            jobs[k].mark[j] = -1;
    }
    run_ref_jobs(jobs, nj, ref_check_job);
    bad = 0;
    for (int k = 0; k < nj; k++)
        bad += jobs[k].np;
fail:
    for (int k = 0; k < nj; k++)
        free(jobs[k].mark);
    free(r);
    free(q);
    free(found);
    free(sure_missing);
    return bad;
}

/* ---- summary of a run ----------------------------------------------------------------- */

static void mean_err(const double *x, int n, int stride, double *mean, double *err)
{
    int nb = n >= 10 ? 10 : n, per = n / (nb > 0 ? nb : 1);
    double s = 0.0, bm[10], bs = 0.0, bss = 0.0;
    for (int i = 0; i < n; i++)
        s += x[(size_t)i * stride];
    *mean = n > 0 ? s / n : 0.0;
    *err = 0.0;
    if (nb < 2 || per < 1)
        return;
    for (int b = 0; b < nb; b++) {
        bm[b] = 0.0;
        for (int i = b * per; i < (b + 1) * per; i++)
            bm[b] += x[(size_t)i * stride];
        bm[b] /= per;
        bs += bm[b];
    }
    bs /= nb;
    for (int b = 0; b < nb; b++)
        bss += (bm[b] - bs) * (bm[b] - bs);
    *err = sqrt(bss / (nb - 1) / nb);
}

void md_summarize(const md_config *cfg, const double *hist, int steps, md_summary *s)
{
    double *e = malloc((size_t)(steps > 0 ? steps : 1) * 2 * sizeof(double));
    int w = steps / 20 > 0 ? steps / 20 : 1;
    double first = 0.0, last = 0.0, scale;
    memset(s, 0, sizeof *s);
    if (!e || steps < 1) {
        free(e);
        return;
    }
    for (int t = 0; t < steps; t++) {
        e[2 * t] = hist[3 * t] + hist[3 * t + 1];
        e[2 * t + 1] = cfg->rho * (2.0 * hist[3 * t] + hist[3 * t + 2]) / 3.0;
    }
    mean_err(e, steps, 2, &s->e_mean, &s->e_err);
    mean_err(e + 1, steps, 2, &s->p_mean, &s->p_err);
    mean_err(hist, steps, 3, &s->ke_mean, &s->ke_err);
    mean_err(hist + 1, steps, 3, &s->pe_mean, &s->pe_err);
    for (int t = 0; t < w; t++) {
        first += e[2 * t];
        last += e[2 * (steps - 1 - t)];
    }
    scale = fabs(s->e_mean) > s->ke_mean ? fabs(s->e_mean) : s->ke_mean;
    /* NaN energies (a blown-up run) give a NaN drift, which fails every bound. */
    s->drift = scale > 0 || isnan(scale) ? fabs(last - first) / w / scale : 0.0;
    free(e);
}

int md_eos_compare(const md_config *cfg, const double *hist, int steps, md_eos_cmp *c)
{
    double kn = 2.0 * cfg->n / (3.0 * (cfg->n - 1.0)), h = 1e-4, ke, ke_err;
    double *d = NULL;
    md_ljts e, lo, hi;
    memset(c, 0, sizeof *c);
    if (steps < 1)
        return 0;
    mean_err(hist, steps, 3, &ke, &ke_err);
    c->T = kn * ke;
    c->T_err = kn * ke_err;
    if (cfg->system == MD_SYS_SP || fabs(cfg->rc - MD_LJTS_RC) > 1e-9 ||
        !md_ljts_applies(c->T, cfg->rho))
        return 0;
    if (!(d = malloc(2 * (size_t)steps * sizeof(double))))
        return -1;
    c->applies = 1;
    c->energy = cfg->shift != 0;
    md_ljts_eval(c->T, cfg->rho, &e);
    md_ljts_eval(c->T - h, cfg->rho, &lo);
    md_ljts_eval(c->T + h, cfg->rho, &hi);
    c->p_ref = e.p;
    c->u_ref = e.u_res;
    c->p_ref_err = fabs(hi.p - lo.p) / (2 * h) * c->T_err;
    c->u_ref_err = fabs(hi.u_res - lo.u_res) / (2 * h) * c->T_err;
    for (int t = 0; t < steps; t++) {
        double p = cfg->rho * (2.0 * hist[3 * t] + hist[3 * t + 2]) / 3.0;
        md_ljts_eval(kn * hist[3 * t], cfg->rho, &e);
        d[2 * t] = p - e.p;
        d[2 * t + 1] = hist[3 * t + 1] - e.u_res;
    }
    mean_err(d, steps, 2, &c->dp, &c->dp_err);
    mean_err(d + 1, steps, 2, &c->du, &c->du_err);
    free(d);
    return 0;
}
