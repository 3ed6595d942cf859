/* Sample statistics: the figures quoted for every case, and the tests that
 * `compare` uses to call a difference real. */
#ifndef KBENCH_STATS_H
#define KBENCH_STATS_H

#include <stddef.h>

/* The confidence level of ci_low/ci_high in percent (stats.c brackets the median with the
 * normal quantile 1.959964), for the words of tables and charts. */
#define KBI_CI_PERCENT 95

typedef struct kbi_stats {
    size_t n;
    double median; /* the quoted figure */
    double min, max, mean;
    double stddev;  /* sample standard deviation (n - 1) */
    double ci_low;  /* 95% confidence interval of the median, from order */
    double ci_high; /* statistics (distribution-free) */
    double noise;   /* relative noise: half the CI width over the median */
} kbi_stats;

/* Fills *out from x[0..n) (x is not modified).  n == 0 gives all zeros.
 * With fewer than 6 samples the CI is [min, max]. */
void kbi_stats_compute(const double *x, size_t n, kbi_stats *out);

/* Median of x[0..n) (x is not modified); 0 for n == 0. */
double kbi_median(const double *x, size_t n);

/* Two-sided Mann-Whitney U test of a against b, normal approximation with
 * tie and continuity corrections.  Returns the p-value (1 when either side
 * has fewer than 2 samples or every value is tied). */
double kbi_mann_whitney_p(const double *a, size_t na, const double *b, size_t nb);

/* The p-quantile (0 < p < 1) of the standard normal distribution. */
double kbi_normal_quantile(double p);

/* The shift between two sets of replicate measurements, on a log scale. */
typedef struct kbi_shift {
    double est;    /* Hodges-Lehmann: the median of every ln b[j] - ln a[i], so
                      exp(est) is the typical ratio b / a */
    double lo, hi; /* its distribution-free confidence interval; -/+INFINITY
                      when the sets are too small for the confidence asked */
    double spread; /* how far one replicate strays: the pooled median absolute
                      deviation of each side's ln values from its median,
                      scaled to a standard deviation (x 1.4826) */
} kbi_shift;

/* The shift of b against a (e.g. the round medians of a case in two runs)
 * with a confidence interval at level conf (e.g. 0.95) from the order
 * statistics of the pairwise differences (the Mann-Whitney interval,
 * normal approximation).  Median-based, so one disturbed round moves it
 * little.  Returns 0, or -1 when a side has fewer than 2 values or a
 * value is not positive and finite. */
int kbi_log_shift(const double *a, size_t na, const double *b, size_t nb, double conf,
                  kbi_shift *out);

#endif
