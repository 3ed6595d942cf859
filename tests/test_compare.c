/* Tests of compare.c: the verdict rules on synthetic samples with known
 * answers, the matching of fixture results files, and the command's exit
 * codes (0 no regression, 1 slower, 2 bad usage or input). */
#define _XOPEN_SOURCE 700
#include <criterion/criterion.h>
#include <criterion/redirect.h>

#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compare.h"
#include "energy.h"
#include "report.h"
#include "results.h"
#include "helpers.h"

#define DATA KBENCH_TEST_DATA

/* ---- synthetic samples ---- */

/* A small deterministic generator, so a test's samples never change. */
static double uniform(unsigned long long *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return ((double)(*s >> 11) + 0.5) / 9007199254740992.0;
}

/* n samples around median m with relative spread sigma (log-normal). */
static double *draw(unsigned long long seed, size_t n, double m, double sigma)
{
    double *x = malloc(n * sizeof *x);
    unsigned long long s = seed;
    for (size_t i = 0; i < n; i++) {
        double u1 = uniform(&s), u2 = uniform(&s);
        double z = sqrt(-2.0 * log(u1)) * cos(2.0 * 3.14159265358979323846 * u2);
        x[i] = m * exp(sigma * z);
    }
    return x;
}

static kbi_compare_outcome compare_draws(double *a, size_t na, double *b, size_t nb)
{
    kbi_stats sa, sb;
    kbi_compare_outcome out;
    kbi_compare_options opt = {0.02, 0.05, 0, 0, 0};
    kbi_stats_compute(a, na, &sa);
    kbi_stats_compute(b, nb, &sb);
    kbi_compare_samples(&sa, a, na, &sb, b, nb, &opt, &out);
    return out;
}

Test(compare_stats, ten_percent_slower_is_slower)
{
    double *a = draw(1, 50, 1e-3, 0.005), *b = draw(2, 50, 1.1e-3, 0.005);
    kbi_compare_outcome o = compare_draws(a, 50, b, 50);
    cr_assert_eq(o.verdict, KBI_VERDICT_SLOWER, "verdict %s (%s)", kbi_verdict_name(o.verdict),
                 o.why);
    cr_assert(fabs(o.ratio - 1.1) < 0.01, "ratio %g, expected about 1.1", o.ratio);
    cr_assert_lt(o.p, 1e-6);
    free(a);
    free(b);
}

Test(compare_stats, ten_percent_faster_is_faster)
{
    double *a = draw(3, 40, 2e-5, 0.005), *b = draw(4, 40, 1.8e-5, 0.005);
    kbi_compare_outcome o = compare_draws(a, 40, b, 40);
    cr_assert_eq(o.verdict, KBI_VERDICT_FASTER, "verdict %s (%s)", kbi_verdict_name(o.verdict),
                 o.why);
    cr_assert(o.ratio < 0.95);
    free(a);
    free(b);
}

Test(compare_stats, two_draws_of_one_distribution_are_same)
{
    double *a = draw(5, 100, 5e-4, 0.004), *b = draw(6, 100, 5e-4, 0.004);
    kbi_compare_outcome o = compare_draws(a, 100, b, 100);
    cr_assert_eq(o.verdict, KBI_VERDICT_SAME, "verdict %s (%s)", kbi_verdict_name(o.verdict),
                 o.why);
    cr_assert(fabs(o.ratio - 1) < 0.005);
    free(a);
    free(b);
}

Test(compare_stats, identical_samples_are_same)
{
    /* Even very noisy: the same measurement on both sides has not changed
     * (`kbench compare X X` must say same). */
    double *a = draw(7, 30, 1e-3, 0.25);
    kbi_compare_outcome o = compare_draws(a, 30, a, 30);
    cr_assert_eq(o.verdict, KBI_VERDICT_SAME);
    cr_assert_eq(o.ratio, 1.0);
    cr_assert_gt(o.noise_base, 0.02);
    free(a);
}

Test(compare_stats, real_change_under_the_threshold_is_same)
{
    /* 1% slower and clearly significant, but the threshold is 2%. */
    double *a = draw(8, 200, 1e-3, 0.002), *b = draw(9, 200, 1.01e-3, 0.002);
    kbi_compare_outcome o = compare_draws(a, 200, b, 200);
    cr_assert_lt(o.p, 0.05, "the test should see the 1%% change (p=%g)", o.p);
    cr_assert_eq(o.verdict, KBI_VERDICT_SAME, "verdict %s (%s)", kbi_verdict_name(o.verdict),
                 o.why);
    free(a);
    free(b);
}

Test(compare_stats, noisy_change_is_unsure)
{
    /* 8% slower on paper, but each sample varies by ~20%: not defensible. */
    double *a = draw(10, 12, 1e-3, 0.2), *b = draw(11, 12, 1.08e-3, 0.2);
    kbi_compare_outcome o = compare_draws(a, 12, b, 12);
    cr_assert_eq(o.verdict, KBI_VERDICT_UNSURE, "verdict %s ratio %g p %g",
                 kbi_verdict_name(o.verdict), o.ratio, o.p);
    cr_assert_neq(o.why[0], '\0', "an unsure verdict must say why");
    free(a);
    free(b);
}

Test(compare_stats, noise_over_threshold_without_change_is_unsure)
{
    /* Medians 1% apart, under the threshold, but each run's median is only
     * known to about ±5%: it cannot show that a 2% change did not happen. */
    double *a = draw(12, 20, 1e-3, 0.15), *b = malloc(20 * sizeof *b);
    kbi_compare_outcome o;
    for (int i = 0; i < 20; i++)
        b[i] = a[i] * 1.01;
    o = compare_draws(a, 20, b, 20);
    cr_assert(fabs(o.ratio - 1.01) < 1e-9);
    cr_assert_gt(o.noise_base, 0.02);
    cr_assert_eq(o.verdict, KBI_VERDICT_UNSURE, "verdict %s", kbi_verdict_name(o.verdict));
    cr_assert(strstr(o.why, "noise") != NULL, "why: %s", o.why);
    free(a);
    free(b);
}

Test(compare_stats, beyond_noise_but_test_cannot_agree_is_unsure)
{
    /* Two tight samples per side: 10% apart and far beyond the noise, but
     * two samples cannot give a Mann-Whitney p under 0.05. */
    double a[] = {1.000e-3, 1.001e-3}, b[] = {1.100e-3, 1.101e-3};
    kbi_compare_outcome o = compare_draws(a, 2, b, 2);
    cr_assert_eq(o.verdict, KBI_VERDICT_UNSURE, "verdict %s", kbi_verdict_name(o.verdict));
    cr_assert_geq(o.p, 0.05);
    cr_assert(strstr(o.why, "test") != NULL, "why: %s", o.why);
}

Test(compare_stats, threshold_changes_the_verdict)
{
    double *a = draw(14, 50, 1e-3, 0.003), *b = draw(15, 50, 1.05e-3, 0.003);
    kbi_stats sa, sb;
    kbi_compare_outcome o;
    kbi_compare_options loose = {0.10, 0.05, 0, 0, 0};
    kbi_stats_compute(a, 50, &sa);
    kbi_stats_compute(b, 50, &sb);
    kbi_compare_samples(&sa, a, 50, &sb, b, 50, &loose, &o);
    cr_assert_eq(o.verdict, KBI_VERDICT_SAME, "5%% under a 10%% threshold: %s",
                 kbi_verdict_name(o.verdict));
    o = compare_draws(a, 50, b, 50);
    cr_assert_eq(o.verdict, KBI_VERDICT_SLOWER);
    free(a);
    free(b);
}

/* ---- statuses and matching ---- */

static kbi_case_result fake_case(kbi_status st, double *samples, size_t n)
{
    kbi_case_result c;
    memset(&c, 0, sizeof c);
    c.id = "p/v/x=1";
    c.status = st;
    c.message = "boom";
    c.samples = samples;
    c.n_samples = n;
    kbi_stats_compute(samples, n, &c.stats);
    return c;
}

Test(compare_case, statuses)
{
    double s[] = {1e-3, 1.01e-3, 0.99e-3, 1e-3, 1.001e-3, 0.999e-3};
    kbi_case_result ok = fake_case(KBI_ST_OK, s, 6), crashed = fake_case(KBI_ST_CRASHED, s, 0),
                    skipped = fake_case(KBI_ST_SKIPPED, s, 0),
                    verify = fake_case(KBI_ST_VERIFY_FAILED, s, 6);
    kbi_compare_outcome o;
    kbi_compare_case(&ok, &crashed, NULL, &o);
    cr_assert_eq(o.verdict, KBI_VERDICT_FAILED);
    cr_assert(strstr(o.why, "crashed") && strstr(o.why, "boom"), "why: %s", o.why);
    kbi_compare_case(&ok, &verify, NULL, &o);
    cr_assert_eq(o.verdict, KBI_VERDICT_FAILED, "a wrong answer is a regression");
    kbi_compare_case(&ok, &skipped, NULL, &o);
    cr_assert_eq(o.verdict, KBI_VERDICT_NOT_MEASURED);
    kbi_compare_case(&crashed, &ok, NULL, &o);
    cr_assert_eq(o.verdict, KBI_VERDICT_NOT_MEASURED);
    kbi_compare_case(&ok, NULL, NULL, &o);
    cr_assert_eq(o.verdict, KBI_VERDICT_ONLY_BASELINE);
    kbi_compare_case(NULL, &ok, NULL, &o);
    cr_assert_eq(o.verdict, KBI_VERDICT_ONLY_RESULTS);
    kbi_compare_case(&ok, &ok, NULL, &o);
    cr_assert_eq(o.verdict, KBI_VERDICT_SAME);
}

static void make_tmp(void)
{
    make_tmp_named("compare");
}

/* The file src copied to path with each pair of `pairs` (from, to; NULL-terminated) replaced
 * wherever it occurs, pair after pair. */
static void copy_file_replacing(const char *src, const char *path, const char *const *pairs)
{
    char *text = slurp(src);
    FILE *f;
    for (size_t k = 0; pairs[k]; k += 2) {
        kbi_buf b = {0};
        const char *p = text, *q;
        for (; (q = strstr(p, pairs[k])) != NULL; p = q + strlen(pairs[k]))
            kbi_buf_printf(&b, "%.*s%s", (int)(q - p), p, pairs[k + 1]);
        kbi_buf_printf(&b, "%s", p);
        free(text);
        text = b.data;
    }
    f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    free(text);
}

/* DATA/name copied to path with each pair of `pairs` replaced (copy_file_replacing). */
static void copy_replacing_all(const char *name, const char *path, const char *const *pairs)
{
    char src[4096];
    snprintf(src, sizeof src, "%s/%s", DATA, name);
    copy_file_replacing(src, path, pairs);
}

static void copy_replacing(const char *name, const char *path, const char *from, const char *to)
{
    const char *pairs[] = {from, to, NULL};
    copy_replacing_all(name, path, pairs);
}

/* copy_replacing with two substitutions, in order. */
static void copy_replacing2(const char *name, const char *path, const char *from1, const char *to1,
                            const char *from2, const char *to2)
{
    const char *pairs[] = {from1, to1, from2, to2, NULL};
    copy_replacing_all(name, path, pairs);
}

static void load(kbi_result_set *set, const char *name)
{
    char path[4096], err[KBI_ERR_SIZE];
    snprintf(path, sizeof path, "%s/%s", DATA, name);
    cr_assert_eq(kbi_results_load(set, path, err), KBI_OK, "%s", err);
}

Test(compare_sets, file_against_itself_is_all_same)
{
    kbi_result_set a = {0}, b = {0};
    kbi_comparison c;
    load(&a, "stream_h200.jsonl");
    load(&b, "stream_h200.jsonl");
    cr_assert_eq(kbi_compare_sets(&a, &b, NULL, &c, NULL), KBI_OK);
    cr_assert_eq(c.n_rows, 15);
    cr_assert_eq(c.count[KBI_VERDICT_SAME], 15);
    cr_assert_eq(c.n_warnings, 0, "no warning expected, got: %s",
                 c.n_warnings ? c.warnings[0] : "");
    cr_assert_eq(kbi_comparison_exit_code(&c), 0);
    kbi_comparison_free(&c);
    kbi_results_free(&a);
    kbi_results_free(&b);
}

Test(compare_sets, samples_one_and_a_half_times_longer_are_all_slower)
{
    kbi_result_set a = {0}, b = {0};
    kbi_comparison c;
    load(&a, "stream_h200.jsonl");
    load(&b, "stream_h200_slow.jsonl");
    cr_assert_eq(kbi_compare_sets(&a, &b, NULL, &c, NULL), KBI_OK);
    cr_assert_eq(c.count[KBI_VERDICT_SLOWER], 15);
    for (size_t i = 0; i < c.n_rows; i++)
        cr_assert(fabs(c.rows[i].out.ratio - 1.5) < 1e-6, "%s: ratio %g", c.rows[i].base->id,
                  c.rows[i].out.ratio);
    cr_assert_eq(kbi_comparison_exit_code(&c), 1);
    kbi_comparison_free(&c);
    /* The other way round, everything is faster and nothing regressed. */
    cr_assert_eq(kbi_compare_sets(&b, &a, NULL, &c, NULL), KBI_OK);
    cr_assert_eq(c.count[KBI_VERDICT_FASTER], 15);
    cr_assert_eq(kbi_comparison_exit_code(&c), 0);
    kbi_comparison_free(&c);
    kbi_results_free(&a);
    kbi_results_free(&b);
}

Test(compare_sets, independent_rerun_is_same)
{
    kbi_result_set a = {0}, b = {0};
    kbi_comparison c;
    load(&a, "stream_h200.jsonl");
    load(&b, "stream_h200_rerun.jsonl");
    cr_assert_eq(kbi_compare_sets(&a, &b, NULL, &c, NULL), KBI_OK);
    cr_assert_eq(c.count[KBI_VERDICT_SAME], 15, "same: %zu, unsure %zu, slower %zu",
                 c.count[KBI_VERDICT_SAME], c.count[KBI_VERDICT_UNSURE],
                 c.count[KBI_VERDICT_SLOWER]);
    kbi_comparison_free(&c);
    kbi_results_free(&a);
    kbi_results_free(&b);
}

Test(compare_sets, failures_and_skips_in_sgemm)
{
    kbi_result_set a = {0}, b = {0};
    kbi_comparison c;
    load(&a, "sgemm_h200.jsonl");
    load(&b, "sgemm_h200.jsonl");
    cr_assert_eq(kbi_compare_sets(&a, &b, NULL, &c, NULL), KBI_OK);
    cr_assert_eq(c.count[KBI_VERDICT_SAME], 29);
    cr_assert_eq(c.count[KBI_VERDICT_NOT_MEASURED], 4,
                 "timeout, crashed, skipped and verify_failed on both sides");
    cr_assert_eq(kbi_comparison_exit_code(&c), 0);
    /* The clock drop of cublas 4096^3 is called out. */
    cr_assert_eq(c.n_warnings, 1);
    cr_assert(strstr(c.warnings[0], "clock") != NULL, "%s", c.warnings[0]);
    kbi_comparison_free(&c);
    kbi_results_free(&a);
    kbi_results_free(&b);
}

Test(compare_sets, cases_on_one_side_are_listed)
{
    kbi_result_set a = {0}, b = {0};
    kbi_comparison c;
    load(&a, "stream_shard1.jsonl");
    load(&b, "stream_h200.jsonl");
    cr_assert_eq(kbi_compare_sets(&a, &b, NULL, &c, NULL), KBI_OK);
    cr_assert_eq(c.count[KBI_VERDICT_ONLY_RESULTS], 7);
    cr_assert_eq(c.count[KBI_VERDICT_ONLY_BASELINE], 0);
    cr_assert_eq(c.n_rows, 15);
    kbi_comparison_free(&c);
    cr_assert_eq(kbi_compare_sets(&b, &a, NULL, &c, NULL), KBI_OK);
    cr_assert_eq(c.count[KBI_VERDICT_ONLY_BASELINE], 7);
    kbi_comparison_free(&c);
    kbi_results_free(&a);
    kbi_results_free(&b);
}

/* A plugin that gains a parameter changes every case id (ids carry every parameter): the
 * comparison still pairs each case with the one that differs only by the new parameter, says
 * so, and does not pair a case whose shared parameters differ or that has two candidates. */
Test(compare_sets, cases_pair_across_a_new_parameter, .init = make_tmp, .fini = remove_tmp)
{
    char path[512], err[KBI_ERR_SIZE];
    kbi_result_set a = {0}, b = {0};
    kbi_comparison c;
    load(&a, "sgemm_h200.jsonl");
    snprintf(path, sizeof path, "%s/new_param.jsonl", tmp);
    copy_replacing2("sgemm_h200.jsonl", path, "beta=0.5\"", "beta=0.5,config=-1\"", "\"beta\":0.5}",
                    "\"beta\":0.5,\"config\":-1}");
    cr_assert_eq(kbi_results_load(&b, path, err), KBI_OK, "%s", err);
    cr_assert_str_eq(b.cases[0].id, "sgemm/naive/shape=1024x1024x1024,alpha=1,beta=0.5,config=-1");
    cr_assert_eq(kbi_compare_sets(&a, &b, NULL, &c, NULL), KBI_OK);
    cr_assert_eq(c.count[KBI_VERDICT_SAME], 29, "same %zu", c.count[KBI_VERDICT_SAME]);
    cr_assert_eq(c.count[KBI_VERDICT_ONLY_BASELINE] + c.count[KBI_VERDICT_ONLY_RESULTS], 0);
    cr_assert(c.n_warnings >= 1 && strstr(c.warnings[c.n_warnings - 1], "paired across"),
              "warning expected");
    kbi_comparison_free(&c);
    /* The other way round (a parameter removed) pairs the same. */
    cr_assert_eq(kbi_compare_sets(&b, &a, NULL, &c, NULL), KBI_OK);
    cr_assert_eq(c.count[KBI_VERDICT_SAME], 29);
    kbi_comparison_free(&c);
    kbi_results_free(&b);
    /* Same parameters but a different shared value: no pairing. */
    copy_replacing2("sgemm_h200.jsonl", path, "beta=0.5\"", "beta=0.25,config=-1\"",
                    "\"beta\":0.5}", "\"beta\":0.25,\"config\":-1}");
    cr_assert_eq(kbi_results_load(&b, path, err), KBI_OK, "%s", err);
    cr_assert_eq(kbi_compare_sets(&a, &b, NULL, &c, NULL), KBI_OK);
    cr_assert_eq(c.count[KBI_VERDICT_SAME], 0);
    cr_assert_eq(c.count[KBI_VERDICT_ONLY_BASELINE], a.n_cases);
    kbi_comparison_free(&c);
    kbi_results_free(&b);
    /* Two candidates (config -1 and 0 of one case): ambiguous, so neither is paired. */
    load(&b, "sgemm_h200.jsonl");
    {
        kbi_result_set two = {0};
        FILE *f;
        char *text, src[600];
        copy_replacing2("sgemm_h200.jsonl", path, "beta=0.5\"", "beta=0.5,config=-1\"",
                        "\"beta\":0.5}", "\"beta\":0.5,\"config\":-1}");
        snprintf(src, sizeof src, "%s.2", path);
        copy_replacing2("sgemm_h200.jsonl", src, "beta=0.5\"", "beta=0.5,config=0\"",
                        "\"beta\":0.5}", "\"beta\":0.5,\"config\":0}");
        text = slurp(src);
        cr_assert_not_null(f = fopen(path, "a"));
        fputs(text, f);
        fclose(f);
        free(text);
        cr_assert_eq(kbi_results_load(&two, path, err), KBI_OK, "%s", err);
        cr_assert_eq(kbi_compare_sets(&b, &two, NULL, &c, NULL), KBI_OK);
        cr_assert_eq(c.count[KBI_VERDICT_SAME], 0, "ambiguous pairs must stay unpaired");
        cr_assert_eq(c.count[KBI_VERDICT_ONLY_BASELINE], b.n_cases);
        kbi_comparison_free(&c);
        kbi_results_free(&two);
    }
    kbi_results_free(&a);
    kbi_results_free(&b);
}

/* Ids name the problem (results version 4): a plugin that gains a knob keeps every case id,
 * so the comparison pairs each case by id, with no warning, where the full ids (every
 * parameter) differ; a record of the older ids (version 1: the id names every parameter)
 * pairs with the newer by full id. */
Test(compare_sets, a_knob_added_at_its_default_pairs_by_id, .init = make_tmp, .fini = remove_tmp)
{
    const char *knob[] = {"\"version\":1,\"record\":\"case\"",
                          "\"version\":4,\"record\":\"case\"",
                          "beta=0.5\",\"status\"",
                          "beta=0.5,config=-1\",\"status\"",
                          "\"beta\":0.5}",
                          "\"beta\":0.5,\"config\":-1}",
                          NULL};
    char path[512], err[KBI_ERR_SIZE];
    kbi_result_set a = {0}, b = {0};
    kbi_comparison c;
    load(&a, "sgemm_h200.jsonl");
    snprintf(path, sizeof path, "%s/knob.jsonl", tmp);
    copy_replacing_all("sgemm_h200.jsonl", path, knob);
    cr_assert_eq(kbi_results_load(&b, path, err), KBI_OK, "%s", err);
    cr_assert_str_eq(b.cases[0].id, "sgemm/naive/shape=1024x1024x1024,alpha=1,beta=0.5");
    cr_assert_str_eq(kbi_case_full_id(&b.cases[0]),
                     "sgemm/naive/shape=1024x1024x1024,alpha=1,beta=0.5,config=-1");
    cr_assert_eq(kbi_compare_sets(&a, &b, NULL, &c, NULL), KBI_OK);
    cr_expect_eq(c.count[KBI_VERDICT_SAME], 29, "same %zu", c.count[KBI_VERDICT_SAME]);
    cr_expect_eq(c.count[KBI_VERDICT_ONLY_BASELINE] + c.count[KBI_VERDICT_ONLY_RESULTS], 0);
    for (size_t i = 0; i < c.n_warnings; i++)
        cr_expect(strstr(c.warnings[i], "paired across") == NULL, "%s", c.warnings[i]);
    kbi_comparison_free(&c);
    kbi_results_free(&a);
    /* The record of the older ids names every parameter: its full id is its id. */
    copy_replacing_all("sgemm_h200.jsonl", path,
                       (const char *[]){"beta=0.5\"", "beta=0.5,config=-1\"", "\"beta\":0.5}",
                                        "\"beta\":0.5,\"config\":-1}", NULL});
    cr_assert_eq(kbi_results_load(&a, path, err), KBI_OK, "%s", err);
    cr_assert_eq(kbi_compare_sets(&a, &b, NULL, &c, NULL), KBI_OK);
    cr_expect_eq(c.count[KBI_VERDICT_SAME], 29, "same %zu", c.count[KBI_VERDICT_SAME]);
    for (size_t i = 0; i < c.n_warnings; i++)
        cr_expect(strstr(c.warnings[i], "paired across") == NULL, "%s", c.warnings[i]);
    kbi_comparison_free(&c);
    kbi_results_free(&a);
    kbi_results_free(&b);
}

/* ---- files, folders and the command ---- */

static int run_compare(const char *a, const char *b, const char *extra1, const char *extra2)
{
    char *argv[8];
    int argc = 0;
    argv[argc++] = "compare";
    argv[argc++] = (char *)a;
    argv[argc++] = (char *)b;
    if (extra1)
        argv[argc++] = (char *)extra1;
    if (extra2)
        argv[argc++] = (char *)extra2;
    argv[argc] = NULL;
    return kbi_cmd_compare(argc, argv);
}

Test(compare_cmd, exit_codes_and_output_file, .init = make_tmp, .fini = remove_tmp)
{
    char out[512], *text;
    snprintf(out, sizeof out, "%s/cmp.md", tmp);
    cr_redirect_stdout();
    cr_redirect_stderr();
    cr_assert_eq(run_compare(DATA "/stream_h200.jsonl", DATA "/stream_h200.jsonl", "--out", out),
                 0);
    text = slurp(out);
    cr_assert(strstr(text, "15 same") != NULL);
    cr_assert(strstr(text, "slower |") == NULL);
    free(text);
    cr_assert_eq(
        run_compare(DATA "/stream_h200.jsonl", DATA "/stream_h200_slow.jsonl", "--out", out), 1);
    text = slurp(out);
    cr_assert(strstr(text, "REGRESSION") != NULL);
    cr_assert(strstr(text, "15 slower") != NULL);
    /* Every case is named slower in the table. */
    {
        int n = 0;
        for (const char *p = text; (p = strstr(p, "| **slower** |")) != NULL; p++)
            n++;
        cr_assert_eq(n, 15);
    }
    free(text);
    /* 50% is under a 60% threshold. */
    cr_assert_eq(run_compare(DATA "/stream_h200.jsonl", DATA "/stream_h200_slow.jsonl",
                             "--threshold", "60%"),
                 0);
}

Test(compare_cmd, bad_usage_and_input_exit_2, .init = make_tmp, .fini = remove_tmp)
{
    char *one[] = {"compare", DATA "/stream_h200.jsonl", NULL};
    char *help[] = {"compare", "--help", NULL};
    cr_redirect_stdout();
    cr_redirect_stderr();
    cr_assert_eq(kbi_cmd_compare(2, one), 2);
    cr_assert_eq(kbi_cmd_compare(2, help), 0);
    cr_assert_eq(run_compare(DATA "/missing.jsonl", DATA "/stream_h200.jsonl", NULL, NULL), 2);
    cr_assert_eq(run_compare(DATA "/stream_h200.jsonl", DATA "/bad_version.jsonl", NULL, NULL), 2);
    cr_assert_eq(
        run_compare(DATA "/stream_h200.jsonl", DATA "/stream_h200.jsonl", "--threshold", "5"), 2,
        "5 is neither a fraction nor a percentage");
    cr_assert_eq(run_compare(DATA "/stream_h200.jsonl", DATA "/stream_h200.jsonl", "--bogus", NULL),
                 2);
    /* Nothing in common: a gate that compares nothing must not pass. */
    cr_assert_eq(run_compare(DATA "/stream_h200.jsonl", DATA "/sgemm_h200.jsonl", NULL, NULL), 2);
    /* A folder without results*.jsonl. */
    cr_assert_eq(run_compare(tmp, DATA "/stream_h200.jsonl", NULL, NULL), 2);
}

Test(compare_cmd, folders_of_shards_are_merged, .init = make_tmp, .fini = remove_tmp)
{
    char dir[512], path[600];
    snprintf(dir, sizeof dir, "%s/shard-0", tmp);
    mkdir(dir, 0777);
    snprintf(path, sizeof path, "%s/results.jsonl", dir);
    copy_replacing("stream_shard1.jsonl", path, NULL, NULL);
    snprintf(dir, sizeof dir, "%s/shard-1", tmp);
    mkdir(dir, 0777);
    snprintf(path, sizeof path, "%s/results.jsonl", dir);
    copy_replacing("stream_shard2.jsonl", path, NULL, NULL);
    cr_redirect_stdout();
    cr_assert_eq(run_compare(DATA "/stream_h200.jsonl", tmp, NULL, NULL), 0);
    {
        kbi_result_set a = {0}, b = {0};
        kbi_comparison c;
        const char *in = tmp;
        char err[KBI_ERR_SIZE] = "";
        load(&a, "stream_h200.jsonl");
        cr_assert_eq(kbi_results_load_inputs(&b, &in, 1, err), KBI_OK, "%s", err);
        cr_assert_eq(b.n_cases, 15);
        kbi_compare_sets(&a, &b, NULL, &c, NULL);
        cr_assert_eq(c.count[KBI_VERDICT_ONLY_BASELINE] + c.count[KBI_VERDICT_ONLY_RESULTS], 0);
        kbi_comparison_free(&c);
        kbi_results_free(&a);
        kbi_results_free(&b);
    }
}

Test(compare_cmd, warns_about_another_gpu_and_clock, .init = make_tmp, .fini = remove_tmp)
{
    char path[512];
    kbi_result_set a = {0}, b = {0};
    kbi_comparison c;
    char err[KBI_ERR_SIZE] = "";
    int gpu = 0, clock = 0;
    snprintf(path, sizeof path, "%s/a100.jsonl", tmp);
    copy_replacing("stream_h200_rerun.jsonl", path, "\"NVIDIA H200\",\"sm_count\":132",
                   "\"NVIDIA A100-SXM4-80GB\",\"sm_count\":108");
    load(&a, "stream_h200.jsonl");
    cr_assert_eq(kbi_results_load(&b, path, err), KBI_OK, "%s", err);
    kbi_compare_sets(&a, &b, NULL, &c, NULL);
    for (size_t i = 0; i < c.n_warnings; i++) {
        gpu |= strstr(c.warnings[i], "different GPUs") != NULL &&
               strstr(c.warnings[i], "A100") != NULL;
        clock |= strstr(c.warnings[i], "clock") != NULL;
    }
    cr_assert(gpu, "expected a warning naming both GPUs");
    cr_assert(!clock, "the clocks are the same");
    kbi_comparison_free(&c);
    kbi_results_free(&b);
    copy_replacing("stream_h200_rerun.jsonl", path, "\"sm_clock_mhz\":1980",
                   "\"sm_clock_mhz\":1410");
    cr_assert_eq(kbi_results_load(&b, path, err), KBI_OK, "%s", err);
    kbi_compare_sets(&a, &b, NULL, &c, NULL);
    for (size_t i = 0; i < c.n_warnings; i++)
        clock |= strstr(c.warnings[i], "different SM clocks") != NULL &&
                 strstr(c.warnings[i], "1410") != NULL;
    cr_assert(clock, "expected a warning about the SM clocks");
    kbi_comparison_free(&c);
    kbi_results_free(&b);
    copy_replacing("stream_h200_rerun.jsonl", path, "\"git_revision\":\"9f3c2a1e7b44\"",
                   "\"git_revision\":\"0badc0ffee11\"");
    cr_assert_eq(kbi_results_load(&b, path, err), KBI_OK, "%s", err);
    kbi_compare_sets(&a, &b, NULL, &c, NULL);
    cr_assert_eq(c.n_warnings, 2, "the revisions, and cases judged from one round");
    cr_assert(strstr(c.warnings[1], "one round per side") != NULL, "%s", c.warnings[1]);
    cr_assert(strstr(c.warnings[0], "different revisions: baseline 9f3c2a1e7b44, results "
                                    "0badc0ffee11") != NULL,
              "%s", c.warnings[0]);
    kbi_comparison_free(&c);
    kbi_results_free(&a);
    kbi_results_free(&b);
}

/* One kbench revision, two builds of a plugin (one loaded through --plugins): the env records'
 * plugin files differ, and compare says so, naming the plugin and both hashes; the same file on
 * both sides, or another revision (already a warning), says nothing more. */
Test(compare_cmd, warns_about_another_build_of_a_plugin, .init = make_tmp, .fini = remove_tmp)
{
    char pa[512], pb[512], pc[512], err[KBI_ERR_SIZE] = "";
    kbi_result_set a = {0}, b = {0};
    kbi_comparison c;
    const char *rev = "\"git_revision\":\"9f3c2a1e7b44\"";
    const char *with_a = "\"git_revision\":\"9f3c2a1e7b44\",\"plugins\":[{\"name\":\"stream\","
                         "\"file\":\"a/libkbench_stream.so\",\"bytes\":100,"
                         "\"fnv1a64\":\"00000000000000aa\"}]";
    const char *with_b = "\"git_revision\":\"9f3c2a1e7b44\",\"plugins\":[{\"name\":\"stream\","
                         "\"file\":\"b/libkbench_stream.so\",\"bytes\":104,"
                         "\"fnv1a64\":\"00000000000000bb\"}]";
    snprintf(pa, sizeof pa, "%s/a.jsonl", tmp);
    snprintf(pb, sizeof pb, "%s/b.jsonl", tmp);
    snprintf(pc, sizeof pc, "%s/c.jsonl", tmp);
    copy_replacing("stream_h200.jsonl", pa, rev, with_a);
    copy_replacing("stream_h200_rerun.jsonl", pb, rev, with_b);
    copy_replacing("stream_h200_rerun.jsonl", pc, rev, with_a);
    cr_assert_eq(kbi_results_load(&a, pa, err), KBI_OK, "%s", err);
    cr_assert_eq(kbi_results_load(&b, pb, err), KBI_OK, "%s", err);
    cr_assert_eq(kbi_compare_sets(&a, &b, NULL, &c, err), KBI_OK, "%s", err);
    int said = 0;
    for (size_t i = 0; i < c.n_warnings; i++)
        said += strstr(c.warnings[i], "different builds of plugin stream") != NULL &&
                strstr(c.warnings[i], "00000000000000aa") != NULL &&
                strstr(c.warnings[i], "00000000000000bb") != NULL;
    cr_expect_eq(said, 1, "one warning naming the plugin and both files");
    kbi_comparison_free(&c);
    kbi_results_free(&b);
    cr_assert_eq(kbi_results_load(&b, pc, err), KBI_OK, "%s", err);
    cr_assert_eq(kbi_compare_sets(&a, &b, NULL, &c, err), KBI_OK, "%s", err);
    for (size_t i = 0; i < c.n_warnings; i++)
        cr_expect(strstr(c.warnings[i], "builds of plugin") == NULL, "same file: %s",
                  c.warnings[i]);
    kbi_comparison_free(&c);
    kbi_results_free(&a);
    kbi_results_free(&b);
}

/* The real program, when the build has made it: the acceptance checks of
 * the issue, through main.c. */
static int run_binary(const char *args)
{
    char cmd[4096];
    int st;
    snprintf(cmd, sizeof cmd, "'%s' %s >/dev/null 2>&1", KBENCH_TEST_BINARY, args);
    st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The runs of stream_h200.jsonl (base) and stream_h200_slow.jsonl (res, every case 1.5x slower)
 * into tmp, each measured on GPU model gpu_b / gpu_r on a board of its own (the UUIDs and PCI
 * bus ids differ, as two leases' boards do); every case a host variant when host. */
static void two_boards(const char *gpu_b, const char *gpu_r, int host, char *base, char *res,
                       size_t n)
{
    char b[300], r[300];
    const char *pairs[] = {"\"NVIDIA H200\",\"sm_count\":132", b,
                           host ? "\"target\":\"device\"" : NULL, "\"target\":\"host\"", NULL};
    snprintf(base, n, "%s/base.jsonl", tmp);
    snprintf(res, n, "%s/res.jsonl", tmp);
    snprintf(b, sizeof b,
             "\"%s\",\"pci_bus_id\":\"0000:00:06.0\",\"uuid\":\"GPU-392e4df2-b17e-930b-8284-"
             "2cb739bab8a5\",\"sm_count\":132",
             gpu_b);
    snprintf(r, sizeof r,
             "\"%s\",\"pci_bus_id\":\"0000:00:07.0\",\"uuid\":\"GPU-5a0f19c3-77d2-4e21-b0a4-"
             "9e13c6f2d801\",\"sm_count\":132",
             gpu_r);
    copy_replacing_all("stream_h200.jsonl", base, pairs);
    pairs[1] = r;
    copy_replacing_all("stream_h200_slow.jsonl", res, pairs);
}

/* kbi_compare_sets of the two files, with --across-gpus when across. */
static void compare_files(const char *base, const char *res, int across, kbi_result_set *a,
                          kbi_result_set *b, kbi_comparison *c)
{
    char err[KBI_ERR_SIZE] = "";
    kbi_compare_options opt = {0, 0, 0, 0, across};
    cr_assert_eq(kbi_results_load(a, base, err), KBI_OK, "%s", err);
    cr_assert_eq(kbi_results_load(b, res, err), KBI_OK, "%s", err);
    cr_assert_eq(kbi_compare_sets(a, b, &opt, c, err), KBI_OK, "%s", err);
}

static int has_warning(const kbi_comparison *c, const char *text)
{
    for (size_t i = 0; i < c->n_warnings; i++)
        if (strstr(c->warnings[i], text))
            return 1;
    return 0;
}

/* Runs on the H200 and on gpu (host: every case a host variant), every case 1.5x slower: each
 * is judged slower, and compare warns of different GPUs only where the models differ. */
static void expect_judged(const char *gpu, int host)
{
    char base[300], res[300];
    kbi_result_set a = {0}, b = {0};
    kbi_comparison c;
    two_boards("NVIDIA H200", gpu, host, base, res, sizeof base);
    compare_files(base, res, 0, &a, &b, &c);
    cr_expect_eq(c.count[KBI_VERDICT_SLOWER], 15, "%s: %zu slower", gpu,
                 c.count[KBI_VERDICT_SLOWER]);
    cr_expect_eq(c.count[KBI_VERDICT_NOT_COMPARABLE], 0);
    cr_expect_eq(has_warning(&c, "different GPUs"), strcmp(gpu, "NVIDIA H200") != 0);
    cr_expect_eq(kbi_comparison_exit_code(&c), 1);
    kbi_comparison_free(&c);
    kbi_results_free(&a);
    kbi_results_free(&b);
}

Test(compare_gpus, two_boards_of_one_model_are_judged, .init = make_tmp, .fini = remove_tmp)
{
    expect_judged("NVIDIA H200", 0);
}

/* Host variants: the GPU does not time them (they follow the CPU). */
Test(compare_gpus, host_cases_on_another_gpu_are_judged, .init = make_tmp, .fini = remove_tmp)
{
    expect_judged("NVIDIA H100 80GB HBM3", 1);
}

Test(compare_gpus, device_cases_on_another_gpu_model_are_not_comparable, .init = make_tmp,
     .fini = remove_tmp)
{
    char base[300], res[300];
    kbi_result_set a = {0}, b = {0};
    kbi_comparison c;
    two_boards("NVIDIA H200", "NVIDIA H100 80GB HBM3", 0, base, res, sizeof base);
    compare_files(base, res, 0, &a, &b, &c);
    cr_expect_eq(c.count[KBI_VERDICT_SLOWER], 0, "a slower GPU is not a regression");
    cr_assert_eq(c.count[KBI_VERDICT_NOT_COMPARABLE], 15);
    for (size_t i = 0; i < c.n_rows; i++) {
        const kbi_compare_outcome *o = &c.rows[i].out;
        cr_expect(strstr(o->why, "measured on different GPUs (NVIDIA H200 vs NVIDIA H100 80GB "
                                 "HBM3)") != NULL,
                  "%s", o->why);
        cr_expect(fabs(o->ratio - 1.5) < 1e-6, "the ratio is still shown: %g", o->ratio);
    }
    cr_expect_eq(c.unjudged, c.matched, "not comparable is not judged");
    cr_expect_not(kbi_comparison_regressed(&c));
    cr_expect_eq(kbi_comparison_exit_code(&c), 0);
    c.opt.fail_on_unsure = 1;
    cr_expect_eq(kbi_comparison_exit_code(&c), 1, "--fail-on-unsure: a case not judged");
    cr_expect(has_warning(&c, "15 device-timed cases were measured on different GPUs: not "
                              "comparable"));
    kbi_comparison_free(&c);
    kbi_results_free(&a);
    kbi_results_free(&b);
    /* --across-gpus: judged as before, with the warnings that the GPUs differ. */
    compare_files(base, res, 1, &a, &b, &c);
    cr_expect_eq(c.count[KBI_VERDICT_SLOWER], 15);
    cr_expect_eq(c.count[KBI_VERDICT_NOT_COMPARABLE], 0);
    cr_expect(has_warning(&c, "different GPUs: baseline NVIDIA H200, results NVIDIA H100 80GB "
                              "HBM3"));
    cr_expect(has_warning(&c, "--across-gpus: 15 device-timed cases"));
    cr_expect_eq(kbi_comparison_exit_code(&c), 1);
    kbi_comparison_free(&c);
    kbi_results_free(&a);
    kbi_results_free(&b);
}

Test(compare_gpus, the_command_says_unsure_and_shows_the_numbers, .init = make_tmp,
     .fini = remove_tmp)
{
    char base[300], res[300], out[300], *text, *err;
    two_boards("NVIDIA H200", "NVIDIA H100 80GB HBM3", 0, base, res, sizeof base);
    snprintf(out, sizeof out, "%s/cmp.md", tmp);
    cr_redirect_stdout();
    cr_redirect_stderr();
    cr_expect_eq(run_compare(base, res, "--out", out), 0, "another GPU is not a regression");
    text = slurp(out);
    cr_expect(strstr(text, "**UNSURE: 15 of 15 cases could not be judged**: 15 cases matched, 15 "
                           "not comparable.") != NULL,
              "%s", text);
    cr_expect(strstr(text, "| 1.500 | +50.00% |") != NULL, "both times and the ratio: %s", text);
    cr_expect(strstr(text, "| not comparable | measured on different GPUs (NVIDIA H200 vs "
                           "NVIDIA H100 80GB HBM3) |") != NULL,
              "%s", text);
    free(text);
    cr_expect_eq(run_compare(base, res, "--fail-on-unsure", NULL), 1);
    {
        char *argv[] = {"compare", base, res, "--across-gpus", "--out", out, NULL};
        cr_expect_eq(kbi_cmd_compare(6, argv), 1, "judged across GPUs: 1.5x is slower");
    }
    text = slurp(out);
    cr_expect(strstr(text, "**REGRESSION**: 15 cases matched, 15 slower.") != NULL, "%s", text);
    cr_expect(strstr(text, "different GPUs: baseline NVIDIA H200") != NULL, "%s", text);
    free(text);
    fflush(stderr);
    err = redirected(cr_get_redirected_stderr());
    cr_expect(strstr(err, "warning: different GPUs") != NULL, "%s", err);
    free(err);
}

Test(compare_binary, compare_x_x_is_0_and_slower_copy_is_1)
{
    if (access(KBENCH_TEST_BINARY, X_OK) != 0)
        cr_skip_test("%s is not built", KBENCH_TEST_BINARY);
    cr_assert_eq(run_binary("compare " DATA "/sgemm_h200.jsonl " DATA "/sgemm_h200.jsonl"), 0);
    cr_assert_eq(run_binary("compare " DATA "/stream_h200.jsonl " DATA "/stream_h200_slow.jsonl"),
                 1);
    cr_assert_eq(run_binary("compare " DATA "/stream_h200.jsonl"), 2);
    cr_assert_eq(run_binary("compare --help"), 0);
}

/* ---- declared metrics ---- */

static kbi_metric metric(const char *name, double v, double u, kb_better better)
{
    kbi_metric m = {(char *)name, "1", v, u, better, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0};
    return m;
}

Test(compare_metric, a_timing_is_judged_like_a_time_and_physics_by_its_uncertainties)
{
    /* Issue 23: permute's self_us, 1.0832 +- 0.0031 -> 1.1035 +- 0.0045 us on unchanged code,
     * 5.6 combined uncertainties, was "worse".  A timing moves between runs as times do. */
    kbi_metric_outcome o;
    kbi_metric a = metric("self_us", 1.0832, 0.0031, KB_BETTER_LOWER),
               b = metric("self_us", 1.1035, 0.0045, KB_BETTER_LOWER);
    kbi_compare_metric(&a, &b, &o);
    cr_expect_eq(o.verdict, KBI_MV_WORSE, "no timing flag: a result, 3 uncertainties: %s", o.why);
    a.timing = b.timing = 1;
    kbi_compare_metric(&a, &b, &o);
    cr_expect_eq(o.verdict, KBI_MV_SAME, "+1.9%% is within the 2%% threshold: %s", o.why);
    /* Over the threshold but within what the case's runs may drift: unsure. */
    b.value = 1.0832 * 1.05;
    kbi_compare_metric_in_case(&a, &b, 0.02, 0.08, &o);
    cr_expect_eq(o.verdict, KBI_MV_UNSURE, "%s", o.why);
    kbi_compare_metric(&a, &b, &o);
    cr_expect_eq(o.verdict, KBI_MV_WORSE, "5%% beyond a 2%% allowance: %s", o.why);
    /* Beyond the drift and the uncertainties: worse, and better the other way. */
    b.value = 1.0832 * 1.3;
    kbi_compare_metric_in_case(&a, &b, 0.02, 0.08, &o);
    cr_expect_eq(o.verdict, KBI_MV_WORSE, "%s", o.why);
    kbi_compare_metric_in_case(&b, &a, 0.02, 0.08, &o);
    cr_expect_eq(o.verdict, KBI_MV_BETTER, "%s", o.why);
    /* Beyond the drift but not the uncertainties: unsure. */
    b.uncertainty = 0.2;
    kbi_compare_metric_in_case(&a, &b, 0.02, 0.08, &o);
    cr_expect_eq(o.verdict, KBI_MV_UNSURE, "%s", o.why);
    /* The results' declaration rules: an older baseline did not say it is a timing. */
    a.timing = 0;
    b.value = 1.1035;
    b.uncertainty = 0.0045;
    kbi_compare_metric(&a, &b, &o);
    cr_expect_eq(o.verdict, KBI_MV_SAME, "%s", o.why);
}

Test(compare_metric, verdicts_by_direction_and_uncertainty)
{
    kbi_metric_outcome o;
    kbi_metric a = metric("drift", 0.1, 0.01, KB_BETTER_LOWER), b;
    b = metric("drift", 0.6, 0.01, KB_BETTER_LOWER);
    kbi_compare_metric(&a, &b, &o);
    cr_expect_eq(o.verdict, KBI_MV_WORSE, "up by 35 sigma, lower is better: %s", o.why);
    cr_expect_float_eq(o.change, 0.5, 1e-12);
    cr_expect_float_eq(o.sigma, sqrt(2) * 0.01, 1e-12);
    kbi_compare_metric(&b, &a, &o);
    cr_expect_eq(o.verdict, KBI_MV_BETTER);
    /* 0.04 < 3 * sqrt(2) * 0.01 = 0.0424: within noise, either way. */
    b = metric("drift", 0.14, 0.01, KB_BETTER_LOWER);
    kbi_compare_metric(&a, &b, &o);
    cr_expect_eq(o.verdict, KBI_MV_SAME, "%s", o.why);
    b = metric("drift", 0.143, 0.01, KB_BETTER_LOWER);
    kbi_compare_metric(&a, &b, &o);
    cr_expect_eq(o.verdict, KBI_MV_WORSE, "0.043 > 0.0424: %s", o.why);
    /* Higher is better: a drop is worse. */
    a = metric("rate", 10, 0.01, KB_BETTER_HIGHER);
    b = metric("rate", 9.5, 0.01, KB_BETTER_HIGHER);
    kbi_compare_metric(&a, &b, &o);
    cr_expect_eq(o.verdict, KBI_MV_WORSE);
    kbi_compare_metric(&b, &a, &o);
    cr_expect_eq(o.verdict, KBI_MV_BETTER);
    /* No direction: changed, never worse. */
    a = metric("count", 3, 0, KB_BETTER_NONE);
    b = metric("count", 4, 0, KB_BETTER_NONE);
    kbi_compare_metric(&a, &b, &o);
    cr_expect_eq(o.verdict, KBI_MV_CHANGED);
    /* Exact values: any move in the bad direction counts. */
    a = metric("n", 3, 0, KB_BETTER_LOWER);
    b = metric("n", 3.000001, 0, KB_BETTER_LOWER);
    kbi_compare_metric(&a, &b, &o);
    cr_expect_eq(o.verdict, KBI_MV_WORSE);
    kbi_compare_metric(&a, &a, &o);
    cr_expect_eq(o.verdict, KBI_MV_SAME);
    /* Unknown uncertainty: unsure, unless the values are equal. */
    a = metric("m", 1, NAN, KB_BETTER_LOWER);
    b = metric("m", 2, 0.1, KB_BETTER_LOWER);
    kbi_compare_metric(&a, &b, &o);
    cr_expect_eq(o.verdict, KBI_MV_UNSURE);
    cr_expect(strstr(o.why, "baseline") != NULL, "%s", o.why);
    b = metric("m", 1, NAN, KB_BETTER_LOWER);
    kbi_compare_metric(&a, &b, &o);
    cr_expect_eq(o.verdict, KBI_MV_SAME);
    /* ... and no direction with no uncertainty (sgemm's tuned_config): changed, not unsure. */
    a = metric("tuned_config", 5, NAN, KB_BETTER_NONE);
    b = metric("tuned_config", 15, NAN, KB_BETTER_NONE);
    kbi_compare_metric(&a, &b, &o);
    cr_expect_eq(o.verdict, KBI_MV_CHANGED, "%s", o.why);
    /* One side only. */
    kbi_compare_metric(NULL, &b, &o);
    cr_expect_eq(o.verdict, KBI_MV_NEW);
    kbi_compare_metric(&b, NULL, &o);
    cr_expect_eq(o.verdict, KBI_MV_GONE);
}

Test(compare_metric, out_of_bound_is_flagged_on_the_results_side)
{
    kbi_metric_outcome o;
    kbi_metric a = metric("drift", 0.1, 0.01, KB_BETTER_LOWER), b;
    a.bounds = KB_BOUND_HIGH;
    a.high = 1.0;
    b = a;
    b.value = 1.2;
    b.in_bound = 0;
    kbi_compare_metric(&a, &b, &o);
    cr_expect(o.out_of_bound);
    cr_expect(strstr(o.why, "above its bound 1") != NULL, "%s", o.why);
    /* A record without in_bound: the bound still decides. */
    b.in_bound = 1;
    kbi_compare_metric(&a, &b, &o);
    cr_expect(o.out_of_bound);
    /* A baseline out of bound is not the results' failure. */
    kbi_compare_metric(&b, &a, &o);
    cr_expect_not(o.out_of_bound);
    cr_expect_eq(o.verdict, KBI_MV_BETTER);
    /* Only in the results, out of bound: still flagged. */
    kbi_compare_metric(NULL, &b, &o);
    cr_expect(o.out_of_bound);
    b.bounds = KB_BOUND_LOW;
    b.low = 2;
    kbi_compare_metric(NULL, &b, &o);
    cr_expect(o.out_of_bound);
    cr_expect(strstr(o.why, "below its bound 2") != NULL, "%s", o.why);
}

/* Writes tmp/NAME.jsonl (its path into path): an env record without a device, case c, and a
 * complete end record; frees c's params. */
static void write_one_case(const char *name, kbi_case_result *c, char *path, size_t n)
{
    kbi_results_writer w;
    char err[KBI_ERR_SIZE];
    json_t *env = json_pack("{s:n}", "device"), *rec = kbi_case_record_json(c),
           *end = json_pack("{s:b}", "complete", 1);
    snprintf(path, n, "%s/%s.jsonl", tmp, name);
    cr_assert_eq(kbi_results_open(&w, path, "r1", err), KBI_OK, "%s", err);
    cr_assert_eq(kbi_results_write(&w, "env", env, err), KBI_OK, "%s", err);
    cr_assert_eq(kbi_results_write(&w, "case", rec, err), KBI_OK, "%s", err);
    cr_assert_eq(kbi_results_write(&w, "end", end, err), KBI_OK, "%s", err);
    kbi_results_close(&w);
    json_decref(env);
    json_decref(rec);
    json_decref(end);
    json_decref(c->params);
}

/* Writes a results file at tmp/NAME.jsonl with one case of the metrics
 * fixture reporting drift = 0.1 + shift, rate = 10 - shift (uncertainty
 * noise) and count; `status` as the worker would set it.  The samples are
 * the same in every file, so only the metrics move. */
static void write_metrics_run(const char *name, double shift, double noise, double count,
                              kbi_status status, char *path, size_t n)
{
    static double samples[] = {2e-4, 2.01e-4, 1.99e-4, 2e-4, 2.02e-4, 1.98e-4};
    kbi_metric m[3] = {
        {"drift", "1", 0.1 + shift, noise, KB_BETTER_LOWER, KB_BOUND_HIGH, 0, 1.0, 1, 1, 0, 0, 0, 0,
         0},
        {"rate", "1/s", 10 - shift, noise, KB_BETTER_HIGHER, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0},
        {"count", "1", count, 0, KB_BETTER_NONE, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0},
    };
    kbi_case_result c;
    m[0].in_bound = kbi_metric_within(&m[0], m[0].value);
    memset(&c, 0, sizeof c);
    c.index = 0;
    c.id = "metrics/report/noise=0.01";
    c.plugin = "metrics";
    c.variant = "report";
    c.target = "host";
    c.baseline = "";
    c.params = json_pack("{s:f}", "noise", 0.01);
    c.params_text = "noise=0.01";
    c.size_param = "shift";
    c.status = status;
    c.message = status == KBI_ST_OK ? "" : "metric drift out of bound";
    c.timing = "host";
    c.prepare_s = NAN;
    c.wall_s = NAN;
    c.samples = samples;
    c.n_samples = 6;
    c.has_stats = 1;
    kbi_stats_compute(samples, 6, &c.stats);
    c.metrics = m;
    c.n_metrics = 3;
    write_one_case(name, &c, path, n);
}

Test(compare_metrics_cmd, within_noise_is_0_beyond_it_in_the_bad_direction_is_1, .init = make_tmp,
     .fini = remove_tmp)
{
    char base[512], same[512], noise[512], worse[512], better[512], count[512], out[512];
    char *text;
    write_metrics_run("base", 0, 0.01, 3, KBI_ST_OK, base, sizeof base);
    write_metrics_run("same", 0, 0.01, 3, KBI_ST_OK, same, sizeof same);
    write_metrics_run("noise", 0.02, 0.01, 3, KBI_ST_OK, noise, sizeof noise);
    write_metrics_run("worse", 0.5, 0.01, 3, KBI_ST_OK, worse, sizeof worse);
    write_metrics_run("better", -0.05, 0.01, 3, KBI_ST_OK, better, sizeof better);
    write_metrics_run("count", 0, 0.01, 4, KBI_ST_OK, count, sizeof count);
    snprintf(out, sizeof out, "%s/cmp.md", tmp);
    cr_redirect_stdout();
    cr_redirect_stderr();
    cr_expect_eq(run_compare(base, same, NULL, NULL), 0);
    cr_expect_eq(run_compare(base, noise, "--out", out), 0, "a move within 3 sigma");
    text = slurp(out);
    cr_expect(strstr(text, "| `metrics/report/noise=0.01` | drift | 0.1 ± 0.01 | 0.12 ± 0.01 |") !=
                  NULL,
              "%s", text);
    cr_expect(strstr(text, "| same |") != NULL);
    free(text);
    cr_expect_eq(run_compare(base, worse, "--out", out), 1, "drift up 0.5, rate down 0.5");
    text = slurp(out);
    cr_expect(strstr(text, "REGRESSION") != NULL);
    cr_expect(strstr(text, "2 metrics worse") != NULL, "%s", text);
    cr_expect(strstr(text, "Worse: `metrics/report/noise=0.01` drift, `metrics/report/noise=0.01` "
                           "rate") != NULL,
              "%s", text);
    cr_expect(strstr(text, "| **worse** |") != NULL);
    free(text);
    cr_expect_eq(run_compare(base, better, NULL, NULL), 0, "both moved the good way");
    cr_expect_eq(run_compare(worse, base, NULL, NULL), 0, "the reverse move is better");
    cr_expect_eq(run_compare(base, count, "--out", out), 0, "no direction: never a regression");
    text = slurp(out);
    cr_expect(strstr(text, "| changed |") != NULL, "%s", text);
    free(text);
}

Test(compare_metrics_cmd, out_of_bound_is_1, .init = make_tmp, .fini = remove_tmp)
{
    char base[512], oob[512], out[512];
    char *text;
    kbi_result_set a = {0}, b = {0};
    kbi_comparison cmp;
    char err[KBI_ERR_SIZE];
    write_metrics_run("base", 0, 0.01, 3, KBI_ST_OK, base, sizeof base);
    /* drift 1.05 > 1; the worker also fails the case. */
    write_metrics_run("oob", 0.95, 0.5, 3, KBI_ST_VERIFY_FAILED, oob, sizeof oob);
    snprintf(out, sizeof out, "%s/cmp.md", tmp);
    cr_assert_eq(kbi_results_load(&a, base, err), KBI_OK, "%s", err);
    cr_assert_eq(kbi_results_load(&b, oob, err), KBI_OK, "%s", err);
    cr_assert_eq(kbi_compare_sets(&a, &b, NULL, &cmp, err), KBI_OK);
    cr_expect_eq(cmp.out_of_bound, 1);
    cr_expect_eq(cmp.metric_count[KBI_MV_WORSE], 0, "0.95 is within 3 * 0.5");
    cr_expect_eq(kbi_comparison_exit_code(&cmp), 1);
    kbi_comparison_free(&cmp);
    /* The same file on both sides: nothing moved, yet the bound fails it. */
    cr_assert_eq(kbi_compare_sets(&b, &b, NULL, &cmp, err), KBI_OK);
    cr_expect_eq(cmp.count[KBI_VERDICT_FAILED], 0);
    cr_expect_eq(cmp.out_of_bound, 1);
    cr_expect_eq(kbi_comparison_exit_code(&cmp), 1);
    kbi_comparison_free(&cmp);
    kbi_results_free(&a);
    kbi_results_free(&b);
    cr_redirect_stdout();
    cr_redirect_stderr();
    cr_expect_eq(run_compare(base, oob, "--out", out), 1);
    text = slurp(out);
    cr_expect(strstr(text, "1 metric out of bound") != NULL, "%s", text);
    cr_expect(strstr(text, "Out of bound: `metrics/report/noise=0.01` drift") != NULL, "%s", text);
    cr_expect(strstr(text, "1.05 is above its bound 1") != NULL, "%s", text);
    cr_expect(strstr(text, "≤ 1") != NULL, "%s", text);
    free(text);
}

Test(compare_metrics_cmd, version_1_metrics_never_fail, .init = make_tmp, .fini = remove_tmp)
{
    kbi_result_set a = {0};
    kbi_comparison cmp;
    char err[KBI_ERR_SIZE];
    /* sgemm_h200.jsonl is a version 1 file; compared with itself. */
    cr_assert_eq(kbi_results_load(&a, DATA "/stream_h200.jsonl", err), KBI_OK, "%s", err);
    cr_assert_eq(kbi_compare_sets(&a, &a, NULL, &cmp, err), KBI_OK);
    cr_expect_eq(cmp.metric_count[KBI_MV_WORSE] + cmp.out_of_bound, 0);
    kbi_comparison_free(&cmp);
    kbi_results_free(&a);
}

/* ---- end to end: kbench run on the metrics fixture, then compare ---- */

/* Runs the metrics fixture into tmp/NAME (kbench run) with its values
 * moved by `shift` (the case id stays the same) and returns the results
 * file's path in path. */
static void run_metrics_fixture(const char *name, const char *shift, char *path, size_t n)
{
    char profile[400], out[400], err[KBI_ERR_SIZE];
    char *argv[] = {"run", NULL};
    kbi_run_args a = {.device = -1, .argc = 1, .argv = argv, .plugins_dir = KBENCH_TEST_FIXTURES};
    kbi_result_set set = {0};
    FILE *f;
    snprintf(profile, sizeof profile, "%s/%s.ini", tmp, name);
    f = fopen(profile, "w");
    cr_assert_not_null(f);
    fputs("[run]\nwarmup = 1\nmin_samples = 5\nmin_time = 0.001\ntimeout = 30\n\n"
          "[metrics]\nshift = 0\n",
          f);
    fclose(f);
    snprintf(out, sizeof out, "%s/%s", tmp, name);
    a.profile_path = profile;
    a.out_dir = out;
    /* The same case id on every run; the fixture's values move. */
    setenv("KBENCH_FIXTURE_METRICS_SHIFT", shift, 1);
    kbi_run(&a);
    unsetenv("KBENCH_FIXTURE_METRICS_SHIFT");
    snprintf(path, n, "%s/results.jsonl", out);
    cr_assert_eq(kbi_results_load(&set, path, err), KBI_OK, "%s", err);
    cr_assert_eq(set.n_cases, 1);
    /* The worker recorded the declared metrics through host->report (a
     * 1.0 host would have left them undeclared, without uncertainty). */
    cr_assert_eq(set.cases[0].n_metrics, 3);
    cr_assert_str_eq(set.cases[0].metrics[0].name, "drift");
    cr_assert(set.cases[0].metrics[0].declared);
    cr_assert_float_eq(set.cases[0].metrics[0].uncertainty, 0.01, 1e-15);
    cr_assert_eq(set.cases[0].metrics[0].better, KB_BETTER_LOWER);
    cr_assert_eq(set.cases[0].metrics[0].bounds, KB_BOUND_HIGH);
    cr_assert_eq(set.cases[0].metrics[2].uncertainty, 0.0);
    kbi_results_free(&set);
}

/* Compares two results files: expects `worse` metrics worse and
 * `out_of_bound` out of bound, and kbench compare's exit code to be 1
 * exactly when a metric failed or a time regressed. */
static void expect_metric_verdict(const char *a, const char *b, size_t worse, size_t out_of_bound,
                                  const char *what)
{
    kbi_result_set sa = {0}, sb = {0};
    kbi_comparison cmp;
    char err[KBI_ERR_SIZE];
    int timing_failed;
    cr_assert_eq(kbi_results_load(&sa, a, err), KBI_OK, "%s", err);
    cr_assert_eq(kbi_results_load(&sb, b, err), KBI_OK, "%s", err);
    cr_assert_eq(kbi_compare_sets(&sa, &sb, NULL, &cmp, err), KBI_OK);
    cr_expect_eq(cmp.metric_count[KBI_MV_WORSE], worse, "%s: %zu worse", what,
                 cmp.metric_count[KBI_MV_WORSE]);
    cr_expect_eq(cmp.out_of_bound, out_of_bound, "%s: %zu out of bound", what, cmp.out_of_bound);
    timing_failed = cmp.count[KBI_VERDICT_SLOWER] || cmp.count[KBI_VERDICT_FAILED];
    kbi_comparison_free(&cmp);
    kbi_results_free(&sa);
    kbi_results_free(&sb);
    cr_expect_eq(run_compare(a, b, NULL, NULL), worse || out_of_bound || timing_failed ? 1 : 0,
                 "%s", what);
}

Test(compare_metrics_e2e, fixture_runs_compare_by_their_metrics, .init = make_tmp,
     .fini = remove_tmp, .timeout = 300)
{
    char base[512], again[512], worse[512], oob[512];
    kbi_result_set set = {0};
    char err[KBI_ERR_SIZE];
    run_metrics_fixture("base", "0", base, sizeof base);
    run_metrics_fixture("again", "0", again, sizeof again);
    run_metrics_fixture("worse", "0.5", worse, sizeof worse);
    run_metrics_fixture("oob", "1.0", oob, sizeof oob);
    /* The bound fails the case itself. */
    cr_assert_eq(kbi_results_load(&set, oob, err), KBI_OK, "%s", err);
    cr_expect_eq(set.cases[0].status, KBI_ST_VERIFY_FAILED, "%s", set.cases[0].message);
    cr_expect(strstr(set.cases[0].message, "drift") != NULL, "%s", set.cases[0].message);
    kbi_results_free(&set);
    cr_redirect_stdout();
    cr_redirect_stderr();
    /* Times of a sleeping fixture on a loaded machine may move either way;
     * the metrics decide here, so a timing verdict is allowed for. */
    expect_metric_verdict(base, again, 0, 0, "same metrics");
    expect_metric_verdict(base, worse, 2, 0, "drift +0.5, rate -0.5");
    expect_metric_verdict(worse, base, 0, 0, "the way back is better");
    expect_metric_verdict(base, oob, 2, 1, "drift 1.1 > 1, rate 8.9 < 10");
}

Test(compare_sets, dims_as_string_and_as_array_pair_across_a_new_parameter, .init = make_tmp,
     .fini = remove_tmp)
{
    /* A version 1 baseline wrote shape as "4x4"; the new run writes [4,4]
     * and has a parameter more, so the ids differ. */
    static const char *base_text =
        "{\"schema\":\"kbench-results\",\"version\":1,\"record\":\"case\",\"run_id\":\"a\","
        "\"id\":\"p/v/shape=4x4\",\"plugin\":\"p\",\"variant\":\"v\",\"status\":\"ok\","
        "\"params\":{\"shape\":\"4x4\"},\"samples\":[1e-3,1e-3,1e-3]}\n";
    static const char *res_text =
        "{\"schema\":\"kbench-results\",\"version\":2,\"record\":\"case\",\"run_id\":\"b\","
        "\"id\":\"p/v/shape=4x4,mode=x\",\"plugin\":\"p\",\"variant\":\"v\",\"status\":\"ok\","
        "\"params\":{\"shape\":[4,4],\"mode\":\"x\"},\"samples\":[1e-3,1e-3,1e-3]}\n";
    char pa[512], pb[512], err[KBI_ERR_SIZE];
    kbi_result_set a = {0}, b = {0};
    kbi_comparison cmp;
    FILE *f;
    snprintf(pa, sizeof pa, "%s/a.jsonl", tmp);
    snprintf(pb, sizeof pb, "%s/b.jsonl", tmp);
    f = fopen(pa, "w");
    fputs(base_text, f);
    fclose(f);
    f = fopen(pb, "w");
    fputs(res_text, f);
    fclose(f);
    cr_assert_eq(kbi_results_load(&a, pa, err), KBI_OK, "%s", err);
    cr_assert_eq(kbi_results_load(&b, pb, err), KBI_OK, "%s", err);
    cr_assert_eq(kbi_compare_sets(&a, &b, NULL, &cmp, err), KBI_OK);
    cr_assert_eq(cmp.n_rows, 1);
    cr_expect_not_null(cmp.rows[0].res, "paired across the new parameter");
    kbi_comparison_free(&cmp);
    kbi_results_free(&a);
    kbi_results_free(&b);
}

/* Writes tmp/NAME.jsonl: one device case with the same samples in every file and energy
 * j_per_run ± u joules (measured when j > 0, else not, with a reason). */
static void write_energy_run(const char *name, double j, double u, char *path, size_t n)
{
    static double samples[] = {2e-3, 2.01e-3, 1.99e-3, 2e-3, 2.02e-3, 1.98e-3};
    kbi_case_result c;
    memset(&c, 0, sizeof c);
    c.index = 0;
    c.id = "stream/copy/n=1024";
    c.plugin = "stream";
    c.variant = "copy";
    c.target = "device";
    c.baseline = "";
    c.params = json_pack("{s:i}", "n", 1024);
    c.params_text = "n=1024";
    c.status = KBI_ST_OK;
    c.message = "";
    c.timing = "graph";
    c.prepare_s = c.wall_s = c.cpu_wait = NAN;
    c.samples = samples;
    c.n_samples = 6;
    c.has_stats = 1;
    kbi_stats_compute(samples, 6, &c.stats);
    c.has_energy = 1;
    c.energy = (kbi_case_energy){.measured = j > 0,
                                 .j_per_run = j,
                                 .j_per_run_u = u,
                                 .watts = j / 2e-3,
                                 .watts_u = u / 2e-3,
                                 .run_s = 2e-3,
                                 .window_s = 2,
                                 .period_s = 0.1,
                                 .extra_s = 7,
                                 .windows = 3,
                                 .runs = 3000};
    if (j <= 0)
        kbi_energy_not_measured(&c.energy, "this GPU has no energy counter");
    write_one_case(name, &c, path, n);
}

Test(compare_energy_cmd, energy_per_run_is_judged_like_a_timing, .init = make_tmp,
     .fini = remove_tmp)
{
    char base[512], same[512], within[512], worse[512], better[512], none[512], out[512];
    char *text;
    write_energy_run("base", 1.0, 0.005, base, sizeof base);
    write_energy_run("same", 1.01, 0.005, same, sizeof same);
    write_energy_run("within", 1.015, 0.02, within, sizeof within);
    write_energy_run("worse", 1.2, 0.005, worse, sizeof worse);
    write_energy_run("better", 0.8, 0.005, better, sizeof better);
    write_energy_run("none", 0, 0, none, sizeof none);
    snprintf(out, sizeof out, "%s/cmp.md", tmp);
    cr_redirect_stdout();
    cr_redirect_stderr();
    cr_expect_eq(run_compare(base, same, "--out", out), 0, "1%% is within the threshold");
    text = slurp(out);
    cr_expect(strstr(text, "| `stream/copy/n=1024` | " KBI_COMPARE_ENERGY_NAME " | 1 ± 0.005 J | "
                           "1.01 ± 0.005 J |") != NULL,
              "%s", text);
    free(text);
    cr_expect_eq(run_compare(base, within, NULL, NULL), 0);
    cr_expect_eq(run_compare(base, worse, "--out", out), 1, "20%% more energy per run");
    text = slurp(out);
    cr_expect(strstr(text, "REGRESSION") != NULL, "%s", text);
    cr_expect(strstr(text, "Worse: `stream/copy/n=1024` " KBI_COMPARE_ENERGY_NAME) != NULL, "%s",
              text);
    free(text);
    cr_expect_eq(run_compare(base, better, NULL, NULL), 0, "less energy is better");
    cr_expect_eq(run_compare(worse, base, NULL, NULL), 0);
    /* A side without an energy figure gives no energy verdict. */
    cr_expect_eq(run_compare(base, none, "--out", out), 0);
    text = slurp(out);
    cr_expect(strstr(text, KBI_COMPARE_ENERGY_NAME " |") == NULL, "%s", text);
    free(text);
}

Test(compare_energy_cmd, energy_on_another_gpu_model_is_unsure, .init = make_tmp,
     .fini = remove_tmp)
{
    char base[512], worse[512], base_gpu[512], worse_gpu[512], out[512];
    const char *h200[] = {"\"device\":null", "\"device\":{\"name\":\"NVIDIA H200\"}", NULL};
    const char *h100[] = {"\"device\":null", "\"device\":{\"name\":\"NVIDIA H100 80GB HBM3\"}",
                          NULL};
    char *text;
    write_energy_run("base", 1.0, 0.005, base, sizeof base);
    write_energy_run("worse", 1.2, 0.005, worse, sizeof worse);
    snprintf(base_gpu, sizeof base_gpu, "%s/base-h200.jsonl", tmp);
    snprintf(worse_gpu, sizeof worse_gpu, "%s/worse-h100.jsonl", tmp);
    copy_file_replacing(base, base_gpu, h200);
    copy_file_replacing(worse, worse_gpu, h100);
    snprintf(out, sizeof out, "%s/cmp.md", tmp);
    cr_redirect_stdout();
    cr_redirect_stderr();
    /* 20% more energy per run on another GPU: the GPU's, not a regression. */
    cr_expect_eq(run_compare(base_gpu, worse_gpu, "--out", out), 0);
    text = slurp(out);
    cr_expect(strstr(text, "| unsure | a timing, measured on different GPUs |") != NULL, "%s",
              text);
    cr_expect(strstr(text, "REGRESSION") == NULL, "%s", text);
    free(text);
    cr_expect_eq(run_compare(base_gpu, worse_gpu, "--across-gpus", NULL), 1,
                 "judged across GPUs, the energy is worse");
}
