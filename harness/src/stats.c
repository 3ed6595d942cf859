/* Sample statistics for timings. */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

static double *sorted_copy(const double *x, size_t n)
{
    double *s = kbi_xmalloc(n * sizeof *s);
    memcpy(s, x, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_double);
    return s;
}

static double median_sorted(const double *s, size_t n)
{
    return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

double kbi_median(const double *x, size_t n)
{
    double *s, m;
    if (n == 0)
        return 0.0;
    s = sorted_copy(x, n);
    m = median_sorted(s, n);
    free(s);
    return m;
}

void kbi_stats_compute(const double *x, size_t n, kbi_stats *out)
{
    double *s, sum = 0.0, ss = 0.0;
    memset(out, 0, sizeof *out);
    out->n = n;
    if (n == 0)
        return;
    s = sorted_copy(x, n);
    for (size_t i = 0; i < n; i++)
        sum += s[i];
    out->mean = sum / (double)n;
    for (size_t i = 0; i < n; i++)
        ss += (s[i] - out->mean) * (s[i] - out->mean);
    out->stddev = n > 1 ? sqrt(ss / (double)(n - 1)) : 0.0;
    out->min = s[0];
    out->max = s[n - 1];
    out->median = median_sorted(s, n);
    if (n < 6) {
        out->ci_low = s[0];
        out->ci_high = s[n - 1];
    } else {
        /* Ranks j and k (1-based) bracketing the median with 95% coverage:
         * the binomial(n, 1/2) normal approximation. */
        double half = 1.959964 * sqrt((double)n) / 2.0;
        long j = (long)floor((double)n / 2.0 - half);
        long k = (long)ceil(1.0 + (double)n / 2.0 + half);
        if (j < 1)
            j = 1;
        if (k > (long)n)
            k = (long)n;
        out->ci_low = s[j - 1];
        out->ci_high = s[k - 1];
    }
    out->noise = out->median > 0.0 ? (out->ci_high - out->ci_low) / 2.0 / out->median : 0.0;
    free(s);
}

typedef struct ranked {
    double v;
    int group;
} ranked;

static int cmp_ranked(const void *pa, const void *pb)
{
    const ranked *a = pa, *b = pb;
    return (a->v > b->v) - (a->v < b->v);
}

double kbi_mann_whitney_p(const double *a, size_t na, const double *b, size_t nb)
{
    size_t n = na + nb;
    ranked *r;
    double rank_sum_a = 0.0, tie_term = 0.0, u, mu, sigma2, z;
    if (na < 2 || nb < 2)
        return 1.0;
    r = kbi_xmalloc(n * sizeof *r);
    for (size_t i = 0; i < na; i++)
        r[i] = (ranked){a[i], 0};
    for (size_t i = 0; i < nb; i++)
        r[na + i] = (ranked){b[i], 1};
    qsort(r, n, sizeof *r, cmp_ranked);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j + 1 < n && r[j + 1].v == r[i].v)
            j++;
        double avg = 0.5 * ((double)i + (double)j) + 1.0; /* ranks are 1-based */
        double t = (double)(j - i + 1);
        tie_term += t * t * t - t;
        for (size_t k = i; k <= j; k++)
            if (r[k].group == 0)
                rank_sum_a += avg;
        i = j + 1;
    }
    free(r);
    u = rank_sum_a - (double)na * ((double)na + 1.0) / 2.0;
    mu = (double)na * (double)nb / 2.0;
    sigma2 = (double)na * (double)nb / 12.0 *
             (((double)n + 1.0) - tie_term / ((double)n * ((double)n - 1.0)));
    if (sigma2 <= 0.0)
        return 1.0;
    z = (fabs(u - mu) - 0.5) / sqrt(sigma2);
    if (z < 0.0)
        z = 0.0;
    return erfc(z / sqrt(2.0));
}

/* By bisection on erfc: plenty fast for a few calls per case, and exact to
 * double precision. */
double kbi_normal_quantile(double p)
{
    double lo = -40.0, hi = 40.0;
    for (int i = 0; i < 200; i++) {
        double mid = 0.5 * (lo + hi);
        if (0.5 * erfc(-mid / sqrt(2.0)) < p)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

/* The median of |ln x - median(ln x)| over both sides, each side about its
 * own median (values already checked positive). */
static double pooled_mad(const double *a, size_t na, const double *b, size_t nb)
{
    double *r = kbi_xmalloc((na + nb) * sizeof *r), *l, mad;
    const double *x[2] = {a, b};
    size_t n[2] = {na, nb}, k = 0;
    for (int side = 0; side < 2; side++) {
        double med;
        l = kbi_xmalloc(n[side] * sizeof *l);
        for (size_t i = 0; i < n[side]; i++)
            l[i] = log(x[side][i]);
        med = kbi_median(l, n[side]);
        for (size_t i = 0; i < n[side]; i++)
            r[k++] = fabs(l[i] - med);
        free(l);
    }
    mad = kbi_median(r, k);
    free(r);
    return mad;
}

int kbi_log_shift(const double *a, size_t na, const double *b, size_t nb, double conf,
                  kbi_shift *out)
{
    size_t m = na * nb, k = 0;
    double *d, half;
    long r;
    if (na < 2 || nb < 2)
        return -1;
    for (size_t i = 0; i < na; i++)
        if (!(a[i] > 0) || !isfinite(a[i]))
            return -1;
    for (size_t j = 0; j < nb; j++)
        if (!(b[j] > 0) || !isfinite(b[j]))
            return -1;
    d = kbi_xmalloc(m * sizeof *d);
    for (size_t i = 0; i < na; i++)
        for (size_t j = 0; j < nb; j++)
            d[k++] = log(b[j]) - log(a[i]);
    qsort(d, m, sizeof *d, cmp_double);
    out->est = median_sorted(d, m);
    /* The r-th smallest and r-th largest difference bound the shift with
     * the confidence asked: r from the null distribution of U. */
    half = kbi_normal_quantile(0.5 + conf / 2.0) *
           sqrt((double)na * (double)nb * ((double)(na + nb) + 1.0) / 12.0);
    r = (long)floor((double)m / 2.0 - half);
    out->lo = r >= 1 ? d[r - 1] : -INFINITY;
    out->hi = r >= 1 ? d[m - (size_t)r] : INFINITY;
    free(d);
    out->spread = pooled_mad(a, na, b, nb) * 1.4826;
    return 0;
}
