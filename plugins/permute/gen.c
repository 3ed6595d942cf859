/* The permute plugin's seeded generator: block structures for the named presets that mirror
 * the seed's benchmark categories (and the free `custom` one), their inputs, and the
 * double-precision reference with each element's error scale.  Everything here is a pure
 * function of the spec and the seed, so every variant and every worker sees the same tensor. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kbench/plugin.h"
#include "permute.h"

static const char *const preset_names[PM_N_PRESETS] = {
    [PM_ABELIAN_SMALL] = "abelian_small",
    [PM_RECOUPLING_SMALL] = "recoupling_small",
    [PM_MANY_SMALL] = "many_small",
    [PM_LARGE_U] = "large_u",
    [PM_FEW_LARGE] = "few_large",
    [PM_MIXED] = "mixed",
    [PM_DENSE] = "dense",
    [PM_CUSTOM] = "custom",
};

const char *pm_preset_name(pm_preset p)
{
    return p >= 0 && p < PM_N_PRESETS ? preset_names[p] : "?";
}

int pm_preset_of(const char *name, pm_preset *out)
{
    for (int i = 0; i < PM_N_PRESETS; i++)
        if (strcmp(name, preset_names[i]) == 0) {
            *out = (pm_preset)i;
            return KB_OK;
        }
    return KB_BAD_PARAM;
}

int pm_set_perm(const int64_t *v, int n, int *perm, int *n_out, char *msg)
{
    int seen = 0;
    *n_out = 0;
    if (n > PM_MAX_RANK) {
        kb_msgf(msg, "perm has %d entries: expected at most %d", n, PM_MAX_RANK);
        return KB_BAD_PARAM;
    }
    for (int k = 0; k < n; k++) {
        if (v[k] < 0 || v[k] >= n || (seen >> v[k]) & 1) {
            kb_msgf(msg, "perm: not a permutation of 0..%d (entry %d is %lld)", n - 1, k,
                    (long long)v[k]);
            return KB_BAD_PARAM;
        }
        seen |= 1 << v[k];
        perm[k] = (int)v[k];
    }
    *n_out = n;
    return KB_OK;
}

int pm_parse_perm(const char *text, int *perm, int *n, char *msg)
{
    int64_t v[PM_MAX_RANK];
    int count = 0;
    *n = 0;
    if (strcmp(text, "auto") == 0)
        return KB_OK;
    for (const char *c = text; *c; c++) {
        if (*c == ',' || *c == ' ')
            continue;
        if (!isdigit((unsigned char)*c) || count >= PM_MAX_RANK) {
            kb_msgf(msg, "perm = %s: expected auto or up to %d digits, e.g. 1032", text,
                    PM_MAX_RANK);
            return KB_BAD_PARAM;
        }
        v[count++] = *c - '0';
    }
    if (count == 0) {
        kb_msgf(msg, "perm = %s: empty", text);
        return KB_BAD_PARAM;
    }
    return pm_set_perm(v, count, perm, n, msg);
}

/* ---- seeded numbers ------------------------------------------------------------------------ */

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t next(rng *r)
{
    r->s += 0x9E3779B97F4A7C15ull;
    return mix(r->s);
}

/* Uniform integer in [lo, hi]. */
static int uniform(rng *r, int lo, int hi)
{
    if (hi <= lo)
        return lo;
    return lo + (int)(next(r) % (uint64_t)(hi - lo + 1));
}

/* Input value `i` of stream `which`: in [-1, 1) on a 2^-23 grid, so exact in float32 too. */
static double value(uint64_t seed, int which, int64_t i)
{
    uint64_t z = mix(seed * 0x9E3779B97F4A7C15ull + (uint64_t)which * 0xD1B54A32D192ED03ull +
                     (uint64_t)i * 0x94D049BB133111EBull);
    return (double)(z >> 40) * (1.0 / 8388608.0) - 1.0;
}

/* ---- block structures ------------------------------------------------------------------------ */

static int count_of(double base, double scale)
{
    double v = floor(base * scale + 0.5);
    return v < 1.0 ? 1 : v > 1e6 ? 1000000 : (int)v;
}

static int dim_of(double d, double scale, int rank)
{
    double v = floor(d * pow(scale, 1.0 / rank) + 0.5);
    return v < 1.0 ? 1 : (int)v;
}

typedef struct builder {
    pm_block *b;
    int n, cap;
} builder;

static pm_block *add(builder *bl, int rank, const int *perm)
{
    if (bl->n == bl->cap) {
        int cap = bl->cap ? 2 * bl->cap : 64;
        pm_block *nb = realloc(bl->b, (size_t)cap * sizeof *nb);
        if (!nb)
            return NULL;
        bl->b = nb;
        bl->cap = cap;
    }
    pm_block *b = &bl->b[bl->n++];
    memset(b, 0, sizeof *b);
    b->rank = rank;
    for (int k = 0; k < rank; k++)
        b->perm[k] = perm[k];
    b->rows = b->cols = 1;
    return b;
}

static void random_dims(rng *r, pm_block *b, int lo, int hi)
{
    for (int k = 0; k < b->rank; k++)
        b->dims[k] = uniform(r, lo, hi);
}

static void reverse_perm(int *perm, int rank)
{
    for (int k = 0; k < rank; k++)
        perm[k] = rank - 1 - k;
}

/* Preset dense: one unique block, a dense permute of `dims` by `perm`. */
static int build_dense(const pm_spec *s, builder *bl, char *msg)
{
    int perm[PM_MAX_RANK] = {0}, rank = s->n_dims ? s->n_dims : 4;
    if (s->n_perm)
        memcpy(perm, s->perm, sizeof perm);
    else
        reverse_perm(perm, rank);
    if (s->n_perm && s->n_perm != rank) {
        /* A skip: a profile pairing every dims with every perm meets such points. */
        kb_msgf(msg, "perm has %d entries for dims of rank %d", s->n_perm, rank);
        return KB_SKIP;
    }
    pm_block *b = add(bl, rank, perm);
    if (!b)
        return KB_NOMEM;
    for (int k = 0; k < rank; k++)
        b->dims[k] = dim_of(s->n_dims ? s->dims[k] : 48, s->scale, rank);
    return KB_OK;
}

/* Preset custom: n_blocks blocks of `rank` (or of `dims`) by `perm`, random dims, trees and
 * source trees in the spec's ranges. */
static int build_custom(const pm_spec *s, rng *r, builder *bl, char *msg)
{
    int perm[PM_MAX_RANK] = {0}, rank = s->n_dims ? s->n_dims : s->rank;
    if (rank < 1 || rank > PM_MAX_RANK) {
        kb_msgf(msg, "rank = %d: expected 1 to %d", rank, PM_MAX_RANK);
        return KB_BAD_PARAM;
    }
    if (s->n_perm && s->n_perm != rank) {
        kb_msgf(msg, "perm has %d entries for rank %d", s->n_perm, rank);
        return KB_SKIP;
    }
    if ((!s->n_dims && (s->dmin < 1 || s->dmax < s->dmin)) || s->rows_min < 1 ||
        s->rows_max < s->rows_min ||
        (s->cols_max && (s->cols_min < 1 || s->cols_max < s->cols_min)) || s->n_blocks < 1) {
        kb_msgf(msg, "custom: need n_blocks >= 1, 1 <= dmin <= dmax, 1 <= rows_min <= "
                     "rows_max, cols_max 0 or 1 <= cols_min <= cols_max");
        return KB_BAD_PARAM;
    }
    if (s->n_perm)
        memcpy(perm, s->perm, sizeof perm);
    else
        reverse_perm(perm, rank);
    for (int i = 0, n = count_of(s->n_blocks, s->scale); i < n; i++) {
        pm_block *b = add(bl, rank, perm);
        if (!b)
            return KB_NOMEM;
        if (s->n_dims)
            for (int k = 0; k < rank; k++)
                b->dims[k] = s->dims[k];
        else
            random_dims(r, b, s->dmin, s->dmax);
        b->rows = uniform(r, s->rows_min, s->rows_max);
        b->cols = s->cols_max ? uniform(r, s->cols_min, s->cols_max) : b->rows;
    }
    return KB_OK;
}

/* The presets.  Sizes follow the seed's categories (PR #616's table); `scale` multiplies the
 * element count (block counts for the many-block presets, dims for the large ones). */
static int build(const pm_spec *s, rng *r, builder *bl, char *msg)
{
    double sc = s->scale;
    switch (s->preset) {
    case PM_ABELIAN_SMALL: { /* Z2/U1 PEPS, D <= 8: rank 5, sectors of 1..4, no recoupling */
        static const int p[] = {2, 3, 4, 0, 1};
        for (int i = 0, n = count_of(32, sc); i < n; i++) {
            pm_block *b = add(bl, 5, p);
            if (!b)
                return KB_NOMEM;
            random_dims(r, b, 1, 4);
        }
        break;
    }
    case PM_RECOUPLING_SMALL: { /* SU2 PEPS D=4 / r4 D=8: U up to 5x5 */
        static const int p[] = {1, 3, 0, 2};
        for (int i = 0, n = count_of(48, sc); i < n; i++) {
            pm_block *b = add(bl, 4, p);
            if (!b)
                return KB_NOMEM;
            random_dims(r, b, 1, 4);
            b->rows = b->cols = uniform(r, 1, 5);
        }
        break;
    }
    case PM_MANY_SMALL: { /* U1/SU2 r6 deg <= 2: thousands of tiny blocks */
        static const int p[] = {2, 0, 4, 1, 5, 3};
        for (int i = 0, n = count_of(1500, sc); i < n; i++) {
            pm_block *b = add(bl, 6, p);
            if (!b)
                return KB_NOMEM;
            random_dims(r, b, 1, 2);
            b->rows = b->cols = uniform(r, 1, 3);
        }
        break;
    }
    case PM_LARGE_U: { /* SU2 r8 / A4 r6: U from 8x8 to 91x91 on sizeable subblocks */
        static const int p[] = {3, 4, 5, 0, 1, 2};
        for (int i = 0, n = count_of(24, sc); i < n; i++) {
            pm_block *b = add(bl, 6, p);
            if (!b)
                return KB_NOMEM;
            random_dims(r, b, 2, 5);
            b->rows = b->cols = i == 0 ? 91 : uniform(r, 8, 91);
        }
        break;
    }
    case PM_FEW_LARGE: { /* a Z2 7264^2 transpose and a dense C^48 rank-4 permute */
        static const int t[] = {1, 0}, p[] = {3, 2, 0, 1};
        pm_block *b = add(bl, 2, t);
        if (!b)
            return KB_NOMEM;
        b->dims[0] = b->dims[1] = dim_of(7264, sc, 2);
        b = add(bl, 4, p);
        if (!b)
            return KB_NOMEM;
        for (int k = 0; k < 4; k++)
            b->dims[k] = dim_of(48, sc, 4);
        break;
    }
    case PM_MIXED: { /* U1 r4 with large and tiny sectors side by side */
        static const int p[] = {1, 2, 3, 0};
        for (int i = 0, n = count_of(8, sc); i < n; i++) {
            pm_block *b = add(bl, 4, p);
            if (!b)
                return KB_NOMEM;
            for (int k = 0; k < 4; k++)
                b->dims[k] = uniform(r, 16, 40);
        }
        for (int i = 0, n = count_of(200, sc); i < n; i++) {
            pm_block *b = add(bl, 4, p);
            if (!b)
                return KB_NOMEM;
            random_dims(r, b, 1, 3);
            b->rows = b->cols = uniform(r, 1, 3);
        }
        break;
    }
    case PM_DENSE:
        return build_dense(s, bl, msg);
    case PM_CUSTOM:
        return build_custom(s, r, bl, msg);
    default:
        kb_msgf(msg, "unknown preset");
        return KB_BAD_PARAM;
    }
    return KB_OK;
}

int pm_generate_blocks(const pm_spec *spec, uint64_t seed, pm_problem *p, char *msg)
{
    builder bl = {0};
    rng r = {seed ^ 0x5EEDB10C5ull};
    int rc;
    memset(p, 0, sizeof *p);
    p->esize = spec->esize;
    p->alpha = spec->alpha;
    p->beta = spec->beta;
    if (spec->preset != PM_DENSE && spec->preset != PM_CUSTOM && (spec->n_perm || spec->n_dims)) {
        kb_msgf(msg, "perm and dims apply to presets dense and custom only");
        return KB_SKIP;
    }
    if (!(spec->scale > 0.0)) {
        kb_msgf(msg, "scale = %g: expected > 0", spec->scale);
        return KB_BAD_PARAM;
    }
    rc = build(spec, &r, &bl, msg);
    if (rc != KB_OK) {
        if (rc == KB_NOMEM)
            kb_msgf(msg, "out of host memory building the blocks");
        free(bl.b);
        return rc;
    }
    p->blocks = bl.b;
    p->n_blocks = bl.n;
    for (int i = 0; i < bl.n; i++) {
        pm_block *b = &bl.b[i];
        b->n = 1;
        for (int k = 0; k < b->rank; k++)
            b->n *= b->dims[k];
        /* The kernels index within a block in 32-bit integers (as the seed does). */
        if (b->n * (b->rows > b->cols ? b->rows : b->cols) >= ((int64_t)1 << 31)) {
            kb_msgf(msg, "block %d has %lld elements per tree x %d trees: over 2^31", i,
                    (long long)b->n, b->rows > b->cols ? b->rows : b->cols);
            pm_problem_free(p);
            return KB_SKIP;
        }
        b->src_off = p->src_elems;
        b->dst_off = p->dst_elems;
        b->u_off = p->u_elems;
        p->src_elems += b->n * b->cols;
        p->dst_elems += b->n * b->rows;
        p->u_elems += (int64_t)b->rows * b->cols;
    }
    return KB_OK;
}

/* Source stride of each destination axis, and the destination dims. */
static void strides(const pm_block *b, int64_t *sstr, int *ddim)
{
    int64_t st[PM_MAX_RANK], acc = 1;
    for (int q = 0; q < b->rank; q++) {
        st[q] = acc;
        acc *= b->dims[q];
    }
    for (int k = 0; k < b->rank; k++) {
        sstr[k] = st[b->perm[k]];
        ddim[k] = b->dims[b->perm[k]];
    }
}

/* Calls body(e, soff) for every destination element e of one tree in order, with the source
 * offset soff of the same element: an odometer, no division. */
#define PM_FOR_EACH(b, e, soff, ...)                                                               \
    do {                                                                                           \
        int64_t sstr_[PM_MAX_RANK];                                                                \
        int ddim_[PM_MAX_RANK], c_[PM_MAX_RANK] = {0};                                             \
        strides((b), sstr_, ddim_);                                                                \
        int64_t soff = 0;                                                                          \
        for (int64_t e = 0; e < (b)->n; e++) {                                                     \
            __VA_ARGS__;                                                                           \
            for (int k_ = 0; k_ < (b)->rank; k_++) {                                               \
                soff += sstr_[k_];                                                                 \
                if (++c_[k_] < ddim_[k_])                                                          \
                    break;                                                                         \
                soff -= sstr_[k_] * ddim_[k_];                                                     \
                c_[k_] = 0;                                                                        \
            }                                                                                      \
        }                                                                                          \
    } while (0)

/* The reference of destination element e (source offset soff) of every tree of block b, in
 * double, and its error scale. */
static void reference_element(pm_problem *p, const pm_block *b, int64_t e, int64_t soff)
{
    for (int i = 0; i < b->rows; i++) {
        double acc = 0.0, mag = 0.0;
        int64_t d = b->dst_off + i * b->n + e;
        for (int j = 0; j < b->cols; j++) {
            double t = pm_get(p->u, p->esize, b->u_off + (int64_t)i * b->cols + j) *
                       pm_get(p->src, p->esize, b->src_off + j * b->n + soff);
            acc += t;
            mag += fabs(t);
        }
        double c = p->beta != 0.0 ? pm_get(p->cin, p->esize, d) : 0.0;
        p->ref[d] = p->alpha * acc + p->beta * c;
        p->mag[d] = (float)(fabs(p->alpha) * mag + fabs(p->beta * c));
    }
}

/* The reference of block b, walked in 32x32 patches of destination axis 0 and the destination
 * axis holding source axis 0, so that the writes and the strided reads both stay in cache (a
 * plain walk of a 7264^2 transpose misses on every read).  Its own loops, not the kernels'
 * index functions, so the reference stays independent of what it checks. */
static void reference_block(pm_problem *p, const pm_block *b)
{
    int64_t sstr[PM_MAX_RANK], dstr[PM_MAX_RANK], acc = 1;
    int ddim[PM_MAX_RANK], step[PM_MAX_RANK], c[PM_MAX_RANK] = {0}, q = 0;
    strides(b, sstr, ddim);
    for (int k = 0; k < b->rank; k++) {
        dstr[k] = acc;
        acc *= ddim[k];
        if (b->perm[k] == 0)
            q = k;
    }
    for (int k = 0; k < b->rank; k++)
        step[k] = k == 0 || k == q ? 32 : 1;
    for (;;) {
        int64_t e0 = 0, s0 = 0;
        for (int k = 0; k < b->rank; k++) {
            e0 += c[k] * dstr[k];
            s0 += c[k] * sstr[k];
        }
        int na = ddim[0] - c[0] < 32 ? ddim[0] - c[0] : 32;
        int nq = q == 0 ? 1 : ddim[q] - c[q] < 32 ? ddim[q] - c[q] : 32;
        for (int iq = 0; iq < nq; iq++)
            for (int ia = 0; ia < na; ia++)
                reference_element(p, b, e0 + ia * dstr[0] + iq * dstr[q],
                                  s0 + ia * sstr[0] + iq * sstr[q]);
        int k = 0;
        for (; k < b->rank; k++) {
            c[k] += step[k];
            if (c[k] < ddim[k])
                break;
            c[k] = 0;
        }
        if (k == b->rank)
            break;
    }
}

int pm_fill(pm_problem *p, uint64_t seed, char *msg)
{
    size_t es = (size_t)p->esize;
    p->src = malloc((size_t)(p->src_elems ? p->src_elems : 1) * es);
    p->cin = malloc((size_t)(p->dst_elems ? p->dst_elems : 1) * es);
    p->u = malloc((size_t)(p->u_elems ? p->u_elems : 1) * es);
    p->ref = malloc((size_t)(p->dst_elems ? p->dst_elems : 1) * sizeof(double));
    p->mag = malloc((size_t)(p->dst_elems ? p->dst_elems : 1) * sizeof(float));
    if (!p->src || !p->cin || !p->u || !p->ref || !p->mag) {
        kb_msgf(msg, "out of host memory for %lld + %lld elements", (long long)p->src_elems,
                (long long)p->dst_elems);
        return KB_NOMEM;
    }
    for (int64_t i = 0; i < p->src_elems; i++)
        pm_set(p->src, p->esize, i, value(seed, 0, i));
    for (int64_t i = 0; i < p->dst_elems; i++)
        pm_set(p->cin, p->esize, i, value(seed, 1, i));
    for (int bi = 0; bi < p->n_blocks; bi++) {
        const pm_block *b = &p->blocks[bi];
        for (int64_t i = 0; i < (int64_t)b->rows * b->cols; i++)
            pm_set(p->u, p->esize, b->u_off + i,
                   pm_is_unique(b) ? 1.0 : value(seed, 2, b->u_off + i));
    }
    for (int bi = 0; bi < p->n_blocks; bi++)
        reference_block(p, &p->blocks[bi]);
    return KB_OK;
}

int pm_generate(const pm_spec *spec, uint64_t seed, pm_problem *out, char *msg)
{
    int rc = pm_generate_blocks(spec, seed, out, msg);
    if (rc != KB_OK)
        return rc;
    rc = pm_fill(out, seed, msg);
    if (rc != KB_OK)
        pm_problem_free(out);
    return rc;
}

void pm_problem_free(pm_problem *p)
{
    if (!p)
        return;
    free(p->blocks);
    free(p->src);
    free(p->cin);
    free(p->u);
    free(p->ref);
    free(p->mag);
    memset(p, 0, sizeof *p);
}

/* ---- the host variant and the check ---------------------------------------------------------- */

#define PM_HOST_APPLY(T)                                                                           \
    do {                                                                                           \
        const T *src = p->src, *cin = p->cin, *u = p->u;                                           \
        T *o = out, alpha = (T)p->alpha, beta = (T)p->beta;                                        \
        for (int bi = 0; bi < p->n_blocks; bi++) {                                                 \
            const pm_block *b = &p->blocks[bi];                                                    \
            const T *ub = u + b->u_off, *sb = src + b->src_off;                                    \
            PM_FOR_EACH(b, e, soff, {                                                              \
                for (int i = 0; i < b->rows; i++) {                                                \
                    T acc = 0;                                                                     \
                    int64_t d = b->dst_off + i * b->n + e;                                         \
                    if (pm_is_unique(b))                                                           \
                        acc = sb[soff];                                                            \
                    else                                                                           \
                        for (int j = 0; j < b->cols; j++)                                          \
                            acc += ub[(int64_t)i * b->cols + j] * sb[j * b->n + soff];             \
                    o[d] = beta != 0 ? alpha * acc + beta * cin[d] : alpha * acc;                  \
                }                                                                                  \
            });                                                                                    \
        }                                                                                          \
    } while (0)

void pm_host_apply(const pm_problem *p, void *out)
{
    if (p->esize == 4)
        PM_HOST_APPLY(float);
    else
        PM_HOST_APPLY(double);
}

/* The bound of an element of block b, in units of its magnitude: a sum of cols products
 * rounds at most cols times per term (gamma_cols, any order, so cuBLAS's too), the alpha
 * product once, the beta term twice (product and sum, where not fused); an abelian block
 * rounds only where alpha != 1 or beta != 0 and is exact otherwise.  A float64 result is
 * held against a double reference that rounds as often, hence twice the figure. */
static double bound_units(const pm_problem *p, const pm_block *b)
{
    double u = p->esize == 4 ? ldexp(1.0, -24) : ldexp(1.0, -53);
    double k = (pm_is_unique(b) ? (p->alpha != 1.0) : b->cols + 1.0) + 2.0 * (p->beta != 0.0);
    if (p->esize == 8)
        k *= 2.0;
    return k * u * 1.0001;
}

double pm_check(const pm_problem *p, const void *out, int64_t *bad)
{
    double worst = 0.0;
    int64_t nbad = 0;
    for (int bi = 0; bi < p->n_blocks; bi++) {
        const pm_block *b = &p->blocks[bi];
        double units = bound_units(p, b);
        for (int64_t d = b->dst_off; d < b->dst_off + (int64_t)b->rows * b->n; d++) {
            double err = fabs(pm_get(out, p->esize, d) - p->ref[d]), bound = units * p->mag[d], r;
            if (!(err <= 1e300))
                r = INFINITY; /* NaN: an unwritten element */
            else if (err == 0.0)
                r = 0.0;
            else
                r = bound > 0.0 ? err / bound : INFINITY;
            if (r > 1.0)
                nbad++;
            if (r > worst)
                worst = r;
        }
    }
    if (bad)
        *bad = nbad;
    return worst;
}
