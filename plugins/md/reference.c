/* md plugin, host side: the double references verify uses: forces and energy by all pairs or
 * through cells, the cutoff's allowance, neighbour counts and the check of a neighbour matrix
 * against the brute-force sets, the passes through cells run on every core (pthreads). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cells.h"
#include "eos.h"
#include "md.h"

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
