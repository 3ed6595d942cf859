/* Statistics against data whose answers are known by hand. */
#include <criterion/criterion.h>
#include <math.h>

#include "stats.h"

Test(stats, odd_count_median_and_moments)
{
    double x[] = {5, 1, 4, 2, 3};
    kbi_stats s;
    kbi_stats_compute(x, 5, &s);
    cr_expect_eq(s.n, 5);
    cr_expect_float_eq(s.median, 3.0, 1e-12);
    cr_expect_float_eq(s.min, 1.0, 1e-12);
    cr_expect_float_eq(s.max, 5.0, 1e-12);
    cr_expect_float_eq(s.mean, 3.0, 1e-12);
    cr_expect_float_eq(s.stddev, sqrt(2.5), 1e-12); /* sample (n-1) */
    /* Fewer than 6 samples: the interval is [min, max]. */
    cr_expect_float_eq(s.ci_low, 1.0, 1e-12);
    cr_expect_float_eq(s.ci_high, 5.0, 1e-12);
    cr_expect_float_eq(s.noise, 2.0 / 3.0, 1e-12);
    cr_expect_float_eq(x[0], 5.0, 0); /* input untouched */
}

Test(stats, even_count_median)
{
    double x[] = {4, 1, 3, 2};
    cr_expect_float_eq(kbi_median(x, 4), 2.5, 1e-12);
}

Test(stats, median_ci_order_statistics_n100)
{
    /* 1..100: ranks j = floor(50 - 9.8) = 40 and k = ceil(51 + 9.8) = 61. */
    double x[100];
    kbi_stats s;
    for (int i = 0; i < 100; i++)
        x[i] = 100 - i;
    kbi_stats_compute(x, 100, &s);
    cr_expect_float_eq(s.median, 50.5, 1e-12);
    cr_expect_float_eq(s.ci_low, 40.0, 1e-12);
    cr_expect_float_eq(s.ci_high, 61.0, 1e-12);
    cr_expect_float_eq(s.noise, 21.0 / 2.0 / 50.5, 1e-12);
}

Test(stats, ci_contains_median_and_shrinks_with_n)
{
    double small[10], big[1000];
    kbi_stats a, b;
    for (int i = 0; i < 10; i++)
        small[i] = 1.0 + 0.01 * ((i * 7) % 10);
    for (int i = 0; i < 1000; i++)
        big[i] = 1.0 + 0.01 * ((i * 7) % 10);
    kbi_stats_compute(small, 10, &a);
    kbi_stats_compute(big, 1000, &b);
    cr_expect(a.ci_low <= a.median && a.median <= a.ci_high);
    cr_expect(b.ci_high - b.ci_low < a.ci_high - a.ci_low);
}

Test(stats, empty_and_constant)
{
    kbi_stats s;
    double c[] = {2, 2, 2, 2, 2, 2, 2};
    kbi_stats_compute(NULL, 0, &s);
    cr_expect_eq(s.n, 0);
    cr_expect_float_eq(s.median, 0.0, 0);
    kbi_stats_compute(c, 7, &s);
    cr_expect_float_eq(s.stddev, 0.0, 0);
    cr_expect_float_eq(s.noise, 0.0, 0);
}

Test(stats, mann_whitney_separated_samples)
{
    /* Completely separated groups of 10: U = 0, z = (50 - 0.5) / sqrt(175),
     * two-sided p = erfc(z / sqrt 2) ~ 1.8e-4. */
    double a[10], b[10];
    for (int i = 0; i < 10; i++) {
        a[i] = 1.0 + i;
        b[i] = 100.0 + i;
    }
    double p = kbi_mann_whitney_p(a, 10, b, 10);
    cr_expect_float_eq(p, erfc((50.0 - 0.5) / sqrt(175.0) / sqrt(2.0)), 1e-12);
    cr_expect(p < 0.001);
}

Test(stats, mann_whitney_same_distribution)
{
    double a[] = {1, 3, 5, 7, 9, 11}, b[] = {2, 4, 6, 8, 10, 12};
    cr_expect(kbi_mann_whitney_p(a, 6, b, 6) > 0.5);
    cr_expect_float_eq(kbi_mann_whitney_p(a, 1, b, 6), 1.0, 0);
    double t[] = {5, 5, 5}, u[] = {5, 5, 5};
    cr_expect_float_eq(kbi_mann_whitney_p(t, 3, u, 3), 1.0, 0); /* all tied */
}

Test(stats, normal_quantiles)
{
    cr_expect_float_eq(kbi_normal_quantile(0.975), 1.959964, 1e-6);
    cr_expect_float_eq(kbi_normal_quantile(0.5), 0.0, 1e-9);
    cr_expect_float_eq(kbi_normal_quantile(0.025), -1.959964, 1e-6);
}

Test(stats, log_shift_of_round_medians)
{
    double a[8], b[8], flat[] = {2.0, 2.0, 2.0};
    kbi_shift s;
    for (int i = 0; i < 8; i++) {
        a[i] = 1.0 + 0.01 * (i % 4);
        b[i] = 1.1 * a[i];
    }
    cr_assert_eq(kbi_log_shift(a, 8, b, 8, 0.95, &s), 0);
    cr_expect_float_eq(s.est, log(1.1), 1e-12);
    cr_expect(s.lo < log(1.1) && s.lo > log(1.07), "lo %g", s.lo);
    cr_expect(s.hi > log(1.1) && s.hi < log(1.13), "hi %g", s.hi);
    /* One disturbed round barely moves it. */
    b[3] *= 3.0;
    cr_assert_eq(kbi_log_shift(a, 8, b, 8, 0.95, &s), 0);
    cr_expect(fabs(s.est - log(1.1)) < 0.01, "est %g", s.est);
    cr_assert_eq(kbi_log_shift(flat, 3, flat, 3, 0.95, &s), 0);
    cr_expect_eq(s.est, 0.0);
    cr_expect(isinf(s.lo) && isinf(s.hi), "3 against 3 cannot reach 95%%");
    cr_expect_eq(kbi_log_shift(a, 1, b, 4, 0.95, &s), -1, "one value has no spread");
    b[2] = 0.0;
    cr_expect_eq(kbi_log_shift(a, 8, b, 8, 0.95, &s), -1, "a time of 0 has no logarithm");
}
