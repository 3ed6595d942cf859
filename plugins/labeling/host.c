/* Host side of the labeling plugin (see host.h): the CPU Swendsen-Wang step with union-find
 * labeling, the flood-fill check, the partition comparison, and the statistics. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"

/* pi, spelled out: M_PI is not ISO C. */
#define LB_PI 3.14159265358979323846

double lb_critical_T(int kind, int dim, int q)
{
    if (kind == LB_ISING)
        return dim == 2 ? 2.0 / log(1.0 + sqrt(2.0)) : 4.5115;
    if (kind == LB_POTTS) {
        if (dim == 2)
            return 1.0 / log(1.0 + sqrt((double)q));
        return q == 3 ? 1.0 / 0.550565 : 0.0;
    }
    return dim == 2 ? 0.8935 : 2.2018;
}

void lb_model_setup(lb_model *m, lb_tables *t, int kind, int q, double T)
{
    memset(m, 0, sizeof *m);
    m->kind = kind;
    m->q = kind == LB_ISING ? 2 : q;
    m->T = T;
    /* Ising H = -J sum s s: p = 1 - exp(-2J/T); Potts H = -J sum delta: p = 1 - exp(-J/T). */
    if (kind == LB_ISING)
        m->thr = lb_threshold(2.0 / T);
    else if (kind == LB_POTTS)
        m->thr = lb_threshold(1.0 / T);
    m->k2 = 2.0 / T;
    m->proj = t->proj;
    for (int j = 0; j < 2 * m->q && j < 2 * LB_MAX_Q; j++)
        t->proj[j] = -sin(LB_PI * j / m->q);
    for (int j = 0; j < m->q && j < LB_MAX_Q; j++) {
        t->cos_fix[j] = llround(cos(2.0 * LB_PI * j / m->q) * LB_FIX_SCALE);
        t->sin_fix[j] = llround(sin(2.0 * LB_PI * j / m->q) * LB_FIX_SCALE);
    }
}

void lb_host_init_spins(const lb_lattice *lat, const lb_model *m, uint64_t seed, uint16_t *spins)
{
    for (uint32_t i = 0; i < lat->n; i++)
        spins[i] = lb_initial_spin(m, seed, i);
}

void lb_host_bonds(const lb_lattice *lat, const lb_model *m, uint64_t seed, uint64_t step,
                   const uint16_t *spins, uint8_t *bonds)
{
    const uint32_t k = lb_mirror(m, seed, step);
    for (uint32_t i = 0; i < lat->n; i++)
        bonds[i] = lb_bond_byte(lat, m, seed, step, k, spins, i);
}

/* Root of a, halving the path on the way: links only ever point to smaller sites. */
static uint32_t uf_find(uint32_t *p, uint32_t a)
{
    while (p[a] != a) {
        p[a] = p[p[a]];
        a = p[a];
    }
    return a;
}

uint32_t lb_host_label_uf(const lb_lattice *lat, const uint8_t *bonds, uint32_t *labels)
{
    const int L = lat->L;
    uint32_t clusters = 0;
    for (uint32_t i = 0; i < lat->n; i++)
        labels[i] = i;
    for (uint32_t i = 0; i < lat->n; i++) {
        const uint8_t b = bonds[i];
        if (!b)
            continue;
        int x, y, z;
        lb_coords(L, i, &x, &y, &z);
        for (int d = 0; d < lat->dim; d++) {
            if (!(b & (1u << d)))
                continue;
            uint32_t a = uf_find(labels, i), c = uf_find(labels, lb_neighbor(L, x, y, z, d, 1));
            if (a < c)
                labels[c] = a;
            else if (c < a)
                labels[a] = c;
        }
    }
    /* Increasing order: a site's parent is smaller, so already final. */
    for (uint32_t i = 0; i < lat->n; i++) {
        labels[i] = labels[labels[i]];
        clusters += labels[i] == i;
    }
    return clusters;
}

/* ---- union-find on several threads (the partition check's reference at large L) ---- */

typedef struct uf_slab {
    const lb_lattice *lat;
    const uint8_t *bonds;
    uint32_t *parent, *labels;
    uint32_t lo, hi; /* sites [lo, hi): whole rows (2-D) or planes (3-D) */
    int phase;       /* 1: join the bonds inside the slab; 3: labels from the finished forest */
} uf_slab;

/* Root of a, no writes: other threads read the same forest at the same time. */
static uint32_t uf_root(const uint32_t *p, uint32_t a)
{
    while (p[a] != a)
        a = p[a];
    return a;
}

static void *uf_slab_work(void *arg)
{
    const uf_slab *w = arg;
    const lb_lattice *lat = w->lat;
    uint32_t *p = w->parent;
    if (w->phase == 3) {
        /* In increasing order a parent inside the slab is smaller, so already labelled. */
        for (uint32_t i = w->lo; i < w->hi; i++)
            w->labels[i] = p[i] >= w->lo ? (p[i] == i ? i : w->labels[p[i]]) : uf_root(p, i);
        return NULL;
    }
    for (uint32_t i = w->lo; i < w->hi; i++)
        p[i] = i;
    for (uint32_t i = w->lo; i < w->hi; i++) {
        const uint8_t b = w->bonds[i];
        if (!b)
            continue;
        int x, y, z;
        lb_coords(lat->L, i, &x, &y, &z);
        for (int d = 0; d < lat->dim; d++) {
            if (!(b & (1u << d)))
                continue;
            const uint32_t j = lb_neighbor(lat->L, x, y, z, d, 1);
            if (j < w->lo || j >= w->hi)
                continue; /* across the slab border: the join of phase 2 */
            /* Both trees lie inside the slab: no other thread touches them. */
            const uint32_t a = uf_find(p, i), c = uf_find(p, j);
            if (a < c)
                p[c] = a;
            else if (c < a)
                p[a] = c;
        }
    }
    return NULL;
}

uint32_t lb_host_label_uf_threads(const lb_lattice *lat, const uint8_t *bonds, uint32_t *labels,
                                  uint32_t *parent, int threads)
{
    const uint32_t unit = lat->dim == 2 ? (uint32_t)lat->L : (uint32_t)lat->L * (uint32_t)lat->L;
    const int units = lat->L; /* rows or planes */
    uf_slab w[LB_UF_MAX_THREADS];
    pthread_t tid[LB_UF_MAX_THREADS];
    int started[LB_UF_MAX_THREADS];
    uint32_t clusters = 0;
    if (threads > LB_UF_MAX_THREADS)
        threads = LB_UF_MAX_THREADS;
    if (threads > units)
        threads = units;
    if (threads < 2)
        return lb_host_label_uf(lat, bonds, labels);
    for (int t = 0; t < threads; t++) {
        w[t] = (uf_slab){lat,
                         bonds,
                         parent,
                         labels,
                         (uint32_t)((int64_t)units * t / threads) * unit,
                         (uint32_t)((int64_t)units * (t + 1) / threads) * unit,
                         1};
    }
    for (int phase = 1; phase <= 3; phase += 2) {
        for (int t = 0; t < threads; t++) {
            w[t].phase = phase;
            /* A thread that cannot start leaves its slab to this one. */
            started[t] = pthread_create(&tid[t], NULL, uf_slab_work, &w[t]) == 0;
            if (!started[t])
                uf_slab_work(&w[t]);
        }
        for (int t = 0; t < threads; t++)
            if (started[t])
                pthread_join(tid[t], NULL);
        if (phase == 3)
            break;
        /* Phase 2, here alone: the bonds that leave a slab, all in the last direction from
         * its last row or plane (the others wrap inside it), joined as in lb_host_label_uf:
         * every link still points to a smaller site, so the roots are the clusters'
         * smallest sites and phase 3's labels are lb_host_label_uf's. */
        const int d = lat->dim - 1;
        for (int t = 0; t < threads; t++) {
            for (uint32_t i = w[t].hi - unit; i < w[t].hi; i++) {
                if (!(bonds[i] & (1u << d)))
                    continue;
                int x, y, z;
                lb_coords(lat->L, i, &x, &y, &z);
                const uint32_t a = uf_find(parent, i),
                               c = uf_find(parent, lb_neighbor(lat->L, x, y, z, d, 1));
                if (a < c)
                    parent[c] = a;
                else if (c < a)
                    parent[a] = c;
            }
        }
    }
    for (uint32_t i = 0; i < lat->n; i++)
        clusters += labels[i] == i;
    return clusters;
}

uint32_t lb_host_label_bfs(const lb_lattice *lat, const uint8_t *bonds, uint32_t *labels,
                           uint32_t *stack)
{
    const int L = lat->L;
    uint32_t clusters = 0;
    for (uint32_t i = 0; i < lat->n; i++)
        labels[i] = UINT32_MAX;
    for (uint32_t i = 0; i < lat->n; i++) {
        if (labels[i] != UINT32_MAX)
            continue;
        /* i is the smallest site not yet reached, so the smallest of its cluster. */
        uint32_t top = 0;
        labels[i] = i;
        stack[top++] = i;
        clusters++;
        while (top) {
            const uint32_t u = stack[--top];
            int x, y, z;
            lb_coords(L, u, &x, &y, &z);
            for (int d = 0; d < lat->dim; d++) {
                const uint32_t up = lb_neighbor(L, x, y, z, d, 1);
                const uint32_t down = lb_neighbor(L, x, y, z, d, 0);
                if ((bonds[u] & (1u << d)) && labels[up] == UINT32_MAX) {
                    labels[up] = i;
                    stack[top++] = up;
                }
                if ((bonds[down] & (1u << d)) && labels[down] == UINT32_MAX) {
                    labels[down] = i;
                    stack[top++] = down;
                }
            }
        }
    }
    return clusters;
}

void lb_host_flip(const lb_lattice *lat, const lb_model *m, uint64_t seed, uint64_t step,
                  uint16_t *spins, const uint32_t *labels)
{
    const uint32_t k = lb_mirror(m, seed, step);
    for (uint32_t i = 0; i < lat->n; i++)
        spins[i] = lb_new_spin(m, seed, step, k, spins[i], labels[i]);
}

void lb_host_sweep(const lb_lattice *lat, const lb_model *m, uint64_t seed, uint64_t step,
                   uint16_t *spins, uint8_t *bonds, uint32_t *labels)
{
    lb_host_bonds(lat, m, seed, step, spins, bonds);
    lb_host_label_uf(lat, bonds, labels);
    lb_host_flip(lat, m, seed, step, spins, labels);
}

/* Bonds of sites [lo, hi) of a random set with threshold thr. */
typedef struct rb_range {
    const lb_lattice *lat;
    uint32_t thr, lo, hi;
    uint64_t seed, tag;
    uint8_t *bonds;
} rb_range;

static void *random_bonds_range(void *arg)
{
    const rb_range *r = arg;
    for (uint32_t i = r->lo; i < r->hi; i++) {
        const lb_u32x4 w = lb_philox(r->seed, r->tag, i, LB_RNG_TEST);
        uint8_t b = 0;
        for (int d = 0; d < r->lat->dim; d++)
            b |= (uint8_t)((w.v[d] < r->thr) << d);
        r->bonds[i] = b;
    }
    return NULL;
}

void lb_random_bonds_threads(const lb_lattice *lat, double p, uint64_t seed, uint64_t tag,
                             uint8_t *bonds, int threads)
{
    const double t = p * 4294967296.0;
    const uint32_t thr = t >= 4294967295.0 ? 0xFFFFFFFFu : (uint32_t)t;
    rb_range r[LB_UF_MAX_THREADS];
    pthread_t tid[LB_UF_MAX_THREADS];
    int started[LB_UF_MAX_THREADS];
    if (threads > LB_UF_MAX_THREADS)
        threads = LB_UF_MAX_THREADS;
    if (threads < 1)
        threads = 1;
    for (int k = 0; k < threads; k++) {
        r[k] = (rb_range){lat,
                          thr,
                          (uint32_t)((uint64_t)lat->n * (uint64_t)k / (uint64_t)threads),
                          (uint32_t)((uint64_t)lat->n * (uint64_t)(k + 1) / (uint64_t)threads),
                          seed,
                          tag,
                          bonds};
        /* The first range, and any whose thread cannot start, on this thread. */
        started[k] = k > 0 && pthread_create(&tid[k], NULL, random_bonds_range, &r[k]) == 0;
    }
    for (int k = 0; k < threads; k++)
        if (!started[k])
            random_bonds_range(&r[k]);
    for (int k = 0; k < threads; k++)
        if (started[k])
            pthread_join(tid[k], NULL);
}

void lb_random_bonds(const lb_lattice *lat, double p, uint64_t seed, uint64_t tag, uint8_t *bonds)
{
    lb_random_bonds_threads(lat, p, seed, tag, bonds, 1);
}

void lb_host_sums(const lb_lattice *lat, const lb_model *m, const lb_tables *t,
                  const uint16_t *spins, const uint32_t *labels, lb_sums *s)
{
    const int L = lat->L, q = m->q;
    memset(s, 0, sizeof *s);
    for (uint32_t i = 0; i < lat->n; i++) {
        const unsigned a = spins[i];
        int x, y, z;
        if (a >= (unsigned)q) {
            s->bad++;
            continue;
        }
        lb_coords(L, i, &x, &y, &z);
        if (labels)
            s->roots += labels[i] == i;
        for (int d = 0; d < lat->dim; d++) {
            const unsigned b = spins[lb_neighbor(L, x, y, z, d, 1)] % (unsigned)q;
            if (m->kind == LB_ISING)
                s->bond += a == b ? 1 : -1;
            else if (m->kind == LB_POTTS)
                s->bond += a == b;
            else
                s->bond += t->cos_fix[(a + (unsigned)q - b) % (unsigned)q];
        }
        if (m->kind == LB_ISING) {
            s->mx += a ? 1 : -1;
        } else if (m->kind == LB_POTTS) {
            s->hist[a]++;
        } else {
            s->mx += t->cos_fix[a];
            s->my += t->sin_fix[a];
        }
    }
}

uint64_t lb_partition_mismatches(uint32_t n, const uint32_t *a, const uint32_t *b, uint32_t *map,
                                 uint32_t *rev)
{
    uint64_t bad = 0;
    /* Every labeler here labels a cluster by its smallest site, so a correct b is a's copy:
     * then only the range check is left (a memcmp and a scan, a tenth of the time of the
     * renaming below at 2^28 sites).  Anything else is counted up to renaming. */
    if (memcmp(a, b, (size_t)n * sizeof *a) == 0) {
        for (uint32_t i = 0; i < n; i++)
            bad += a[i] >= n;
        return bad;
    }
    for (uint32_t i = 0; i < n; i++)
        map[i] = rev[i] = UINT32_MAX;
    for (uint32_t i = 0; i < n; i++) {
        const uint32_t la = a[i], lc = b[i];
        if (la >= n || lc >= n) {
            bad++;
            continue;
        }
        if (map[la] == UINT32_MAX && rev[lc] == UINT32_MAX) {
            map[la] = lc;
            rev[lc] = la;
        } else if (map[la] != lc || rev[lc] != la) {
            bad++;
        }
    }
    return bad;
}

void lb_observe(const lb_lattice *lat, const lb_model *m, const lb_sums *s,
                double obs[LB_OBS_COUNT])
{
    const double n = (double)lat->n;
    double m2;
    if (m->kind == LB_ISING) {
        m2 = ((double)s->mx / n) * ((double)s->mx / n);
        obs[LB_OBS_E] = -(double)s->bond / n;
    } else if (m->kind == LB_POTTS) {
        double f2 = 0.0;
        for (int k = 0; k < m->q; k++)
            f2 += ((double)s->hist[k] / n) * ((double)s->hist[k] / n);
        m2 = (m->q * f2 - 1.0) / (m->q - 1.0);
        obs[LB_OBS_E] = -(double)s->bond / n;
    } else {
        const double mx = (double)s->mx / LB_FIX_SCALE / n, my = (double)s->my / LB_FIX_SCALE / n;
        m2 = mx * mx + my * my;
        obs[LB_OBS_E] = -(double)s->bond / LB_FIX_SCALE / n;
    }
    obs[LB_OBS_M2] = m2;
    obs[LB_OBS_M4] = m2 * m2;
    obs[LB_OBS_E2] = obs[LB_OBS_E] * obs[LB_OBS_E];
    obs[LB_OBS_CLUSTERS] = (double)s->roots;
}

/* Bin count and size for n records: at most LB_BINS bins, the remainder dropped. */
static size_t bins_of(size_t n, size_t *size)
{
    const size_t nb = n < LB_BINS ? n : LB_BINS;
    *size = nb ? n / nb : 0;
    return nb;
}

lb_estimate lb_mean_error(const double *x, size_t n)
{
    lb_estimate e = {NAN, NAN};
    size_t bs, nb = bins_of(n, &bs);
    double bm[LB_BINS], sum = 0.0, ss = 0.0;
    if (!nb)
        return e;
    for (size_t b = 0; b < nb; b++) {
        bm[b] = 0.0;
        for (size_t i = 0; i < bs; i++)
            bm[b] += x[b * bs + i];
        bm[b] /= (double)bs;
        sum += bm[b];
    }
    e.value = sum / (double)nb;
    for (size_t b = 0; b < nb; b++)
        ss += (bm[b] - e.value) * (bm[b] - e.value);
    e.error = nb > 1 ? sqrt(ss / ((double)nb * (double)(nb - 1))) : NAN;
    return e;
}

/* Specific heat per spin and moment ratio from averages of m2, m4, e, e2. */
static void derived(const lb_lattice *lat, const lb_model *m, const double *avg, double *c,
                    double *u)
{
    *c = (double)lat->n * (avg[LB_OBS_E2] - avg[LB_OBS_E] * avg[LB_OBS_E]) / (m->T * m->T);
    *u = avg[LB_OBS_M4] / (avg[LB_OBS_M2] * avg[LB_OBS_M2]);
}

void lb_analyse(const lb_lattice *lat, const lb_model *m, const double *obs, size_t n,
                lb_results *r)
{
    size_t bs, nb = bins_of(n, &bs);
    double bm[LB_BINS][LB_OBS_COUNT], tot[LB_OBS_COUNT] = {0}, col[LB_BINS];
    lb_estimate *direct[LB_OBS_COUNT] = {&r->m2, &r->m4, &r->energy, NULL, &r->clusters};
    for (int k = 0; k < LB_OBS_COUNT; k++) {
        for (size_t b = 0; b < nb; b++) {
            double s = 0.0;
            for (size_t i = 0; i < bs; i++)
                s += obs[(b * bs + i) * LB_OBS_COUNT + k];
            bm[b][k] = s / (double)bs;
            col[b] = bm[b][k];
            tot[k] += bm[b][k];
        }
        if (direct[k])
            *direct[k] = lb_mean_error(col, nb);
    }
    r->specific_heat.value = r->moment_ratio.value = NAN;
    r->specific_heat.error = r->moment_ratio.error = NAN;
    if (!nb)
        return;
    double avg[LB_OBS_COUNT];
    for (int k = 0; k < LB_OBS_COUNT; k++)
        avg[k] = tot[k] / (double)nb;
    derived(lat, m, avg, &r->specific_heat.value, &r->moment_ratio.value);
    if (nb < 2)
        return;
    /* Jackknife over the bins: leave one bin out, the spread of the estimates. */
    double cj[LB_BINS], uj[LB_BINS], cm = 0.0, um = 0.0, sc = 0.0, su = 0.0;
    for (size_t b = 0; b < nb; b++) {
        double a[LB_OBS_COUNT];
        for (int k = 0; k < LB_OBS_COUNT; k++)
            a[k] = (tot[k] - bm[b][k]) / (double)(nb - 1);
        derived(lat, m, a, &cj[b], &uj[b]);
        cm += cj[b] / (double)nb;
        um += uj[b] / (double)nb;
    }
    for (size_t b = 0; b < nb; b++) {
        sc += (cj[b] - cm) * (cj[b] - cm);
        su += (uj[b] - um) * (uj[b] - um);
    }
    r->specific_heat.error = sqrt((double)(nb - 1) / (double)nb * sc);
    r->moment_ratio.error = sqrt((double)(nb - 1) / (double)nb * su);
}
