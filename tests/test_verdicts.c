/* Verdicts a user can trust on a shared machine (issue 15, items 5 and 9):
 * the runner's rounds, compare's round verdict and its detectable change,
 * ten back-to-back runs of an unchanged binary against a real 10% slowdown,
 * and --sanitize runs, whose times are not timings. */
#define _XOPEN_SOURCE 700
#include <criterion/criterion.h>
#include <criterion/redirect.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "results.h"
#include "helpers.h"
#include "synthetic.h"

static void setup(void)
{
    make_tmp_named("verdicts");
}

TestSuite(verdicts, .init = setup, .fini = remove_tmp, .timeout = 300);

/* ---- the runner's rounds ---- */

Test(verdicts, rounds_measure_every_case_once_per_round)
{
    kbi_result_set set = {0};
    int rc = run_profile_text("[run]\nwarmup = 1\nmin_samples = 3\nmax_samples = 3\n"
                              "min_time = 0\nrounds = 4\ncache = hot\n\n"
                              "[good]\nvariants = sum\nn = 100, 200\n\n"
                              "[misbehave]\nvariants = verify_fail\n",
                              &set);
    cr_assert_eq(rc, 1, "the verify_fail case fails the run");
    cr_assert_eq(set.n_cases, 3);
    cr_expect_eq(
        json_integer_value(json_object_get(json_object_get(set.envs[0].json, "run"), "rounds")), 4);
    for (size_t i = 0; i < set.n_cases; i++) {
        const kbi_case_result *c = &set.cases[i];
        if (strcmp(c->plugin, "misbehave") == 0) {
            /* A round that fails ends the case's rounds, with the failing record. */
            cr_expect_eq(c->status, KBI_ST_VERIFY_FAILED);
            cr_expect_eq(c->n_rounds, 0);
            continue;
        }
        cr_expect_eq(c->status, KBI_ST_OK, "%s: %s", c->id, c->message);
        cr_assert_eq(c->n_rounds, 4, "%s: %zu rounds", c->id, c->n_rounds);
        for (size_t r = 0; r < 4; r++) {
            cr_expect_eq(c->rounds[r], 3);
            cr_expect(c->round_medians[r] > 0);
        }
        cr_expect_eq(c->n_samples, 12, "every round's samples are kept");
        cr_expect_eq(c->stats.n, 12, "the statistics are those of every sample");
        cr_expect(c->cpu_wait >= 0 && c->cpu_wait <= 1, "%s: cpu_wait %g", c->id, c->cpu_wait);
    }
    kbi_results_free(&set);
}

/* ---- compare's verdict on synthetic rounds ---- */

static double uniform(unsigned long long *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return ((double)(*s >> 11) + 0.5) / 9007199254740992.0;
}

/* A measured case of `rounds` rounds of 20 samples around `t`: each round
 * is moved as a whole by up to +-round_noise (the machine's load), samples
 * within a round vary by +-0.5%. */
static void synthetic_case(kbi_case_result *c, double t, double round_noise, int rounds,
                           unsigned long long seed)
{
    size_t per[64];
    memset(c, 0, sizeof *c);
    c->status = KBI_ST_OK;
    c->cpu_wait = NAN;
    c->n_samples = (size_t)rounds * 20;
    c->samples = calloc(c->n_samples, sizeof *c->samples);
    for (int r = 0; r < rounds; r++) {
        double shift = 1.0 + round_noise * (2.0 * uniform(&seed) - 1.0);
        per[r] = 20;
        for (int i = 0; i < 20; i++)
            c->samples[r * 20 + i] = t * shift * (1.0 + 0.005 * (2.0 * uniform(&seed) - 1.0));
    }
    kbi_stats_compute(c->samples, c->n_samples, &c->stats);
    cr_assert_eq(kbi_case_result_set_rounds(c, per, (size_t)rounds), 0);
}

static void free_case(kbi_case_result *c)
{
    free(c->samples);
    free(c->rounds);
    free(c->round_medians);
}

Test(verdicts, drift_between_rounds_is_not_a_regression)
{
    /* Two runs of the same code on a loaded machine: each round tight, the
     * rounds moved by the load.  Judged by all samples, the second run looks
     * slower beyond any doubt; by its rounds, it cannot be told apart. */
    kbi_case_result a, b;
    kbi_compare_outcome out;
    int slower = 0;
    for (unsigned long long seed = 1; seed <= 20; seed++) {
        synthetic_case(&a, 1e-3, 0.15, 8, seed);
        synthetic_case(&b, 1.04e-3, 0.15, 8, seed + 1000);
        kbi_compare_case(&a, &b, NULL, &out);
        slower += out.verdict == KBI_VERDICT_SLOWER;
        cr_expect(out.detectable > 0.10, "seed %llu: detectable %g with rounds this noisy", seed,
                  out.detectable);
        cr_expect_eq(out.rounds_base, 8);
        free_case(&a);
        free_case(&b);
    }
    cr_expect_eq(slower, 0, "%d of 20 comparisons called a 4%% drift slower", slower);
}

Test(verdicts, a_whole_host_run_offset_is_allowed_for)
{
    /* Tight rounds, the whole run 6% off (a shared CPU busier during one
     * run): host timings are not called slower unless the change clears the
     * host drift too; --host-drift 0 (a machine of one's own) calls it. */
    kbi_case_result a, b;
    kbi_compare_outcome out;
    kbi_compare_options own = {0, 0, -1, 0, 0};
    synthetic_case(&a, 1e-3, 0.01, 8, 1);
    synthetic_case(&b, 1.06e-3, 0.01, 8, 2);
    a.timing = b.timing = "host";
    kbi_compare_case(&a, &b, NULL, &out);
    cr_expect_eq(out.verdict, KBI_VERDICT_UNSURE, "%s", out.why);
    cr_expect(out.detectable > 0.2, "detectable %g", out.detectable);
    kbi_compare_case(&a, &b, &own, &out);
    cr_expect_eq(out.verdict, KBI_VERDICT_SLOWER, "%s", out.why);
    {
        /* The option reaches the verdicts of whole sets too. */
        kbi_result_set sa = {.cases = &a, .n_cases = 1}, sb = {.cases = &b, .n_cases = 1};
        kbi_comparison c;
        char err[KBI_ERR_SIZE];
        a.id = b.id = "fx/host/n=1";
        a.params = b.params = json_object();
        cr_assert_eq(kbi_compare_sets(&sa, &sb, &own, &c, err), KBI_OK);
        cr_expect_eq(c.rows[0].out.verdict, KBI_VERDICT_SLOWER, "%s", c.rows[0].out.why);
        kbi_comparison_free(&c);
        cr_assert_eq(kbi_compare_sets(&sa, &sb, NULL, &c, err), KBI_OK);
        cr_expect_eq(c.rows[0].out.verdict, KBI_VERDICT_UNSURE, "%s", c.rows[0].out.why);
        kbi_comparison_free(&c);
        json_decref(a.params);
    }
    free_case(&a);
    free_case(&b);
}

/* One round of 20 samples around t (samples within +-0.5%), for the verdicts without rounds. */
static void one_round_case(kbi_case_result *c, double t, unsigned long long seed)
{
    memset(c, 0, sizeof *c);
    c->status = KBI_ST_OK;
    c->cpu_wait = NAN;
    c->n_samples = 20;
    c->samples = calloc(c->n_samples, sizeof *c->samples);
    for (int i = 0; i < 20; i++)
        c->samples[i] = t * (1.0 + 0.005 * (2.0 * uniform(&seed) - 1.0));
    kbi_stats_compute(c->samples, c->n_samples, &c->stats);
}

/* The verdict of a host case t -> t x ratio whose sides' workers waited wb and wr of their
 * time, in rounds or not, with the host drift given. */
static kbi_compare_outcome waited(double ratio, double wb, double wr, int rounds,
                                  const kbi_compare_options *opt)
{
    kbi_case_result a, b;
    kbi_compare_outcome out;
    if (rounds) {
        synthetic_case(&a, 1e-3, 0.005, 8, 1);
        synthetic_case(&b, 1e-3 * ratio, 0.005, 8, 2);
    } else {
        one_round_case(&a, 1e-3, 1);
        one_round_case(&b, 1e-3 * ratio, 2);
    }
    a.timing = b.timing = "host";
    a.cpu_wait = wb;
    b.cpu_wait = wr;
    kbi_compare_case(&a, &b, opt, &out);
    free_case(&a);
    free_case(&b);
    return out;
}

Test(verdicts, a_cpu_wait_widens_the_interval_and_never_hides_a_large_change)
{
    /* Issue 23: a variant made 10x slower was unsure in every case because a worker waited
     * for a core 12% of its time.  A wait w can explain times up to 1 / (1 - w) slow (12%:
     * 13.6%); a change beyond that is called, one within it is not. */
    kbi_compare_options own = {0, 0, -1, 0, 0};
    kbi_compare_outcome o;
    for (int rounds = 0; rounds < 2; rounds++) {
        const char *how = rounds ? "rounds" : "one round";
        /* 10x under a 12% wait on either side, with the default host drift and without. */
        o = waited(10, 0.01, 0.12, rounds, NULL);
        cr_expect_eq(o.verdict, KBI_VERDICT_SLOWER, "%s: 10x, results waited 12%%: %s", how, o.why);
        o = waited(10, 0.12, 0.01, rounds, NULL);
        cr_expect_eq(o.verdict, KBI_VERDICT_SLOWER, "%s: 10x, baseline waited 12%%: %s", how,
                     o.why);
        o = waited(10, 0.12, 0.12, rounds, &own);
        cr_expect_eq(o.verdict, KBI_VERDICT_SLOWER, "%s: 10x, both waited 12%%: %s", how, o.why);
        o = waited(0.1, 0.12, 0.12, rounds, &own);
        cr_expect_eq(o.verdict, KBI_VERDICT_FASTER, "%s: 10x faster: %s", how, o.why);
        /* 3% under the same wait is what the wait can explain: unsure, saying why. */
        o = waited(1.03, 0.0, 0.12, rounds, &own);
        cr_expect_eq(o.verdict, KBI_VERDICT_UNSURE, "%s: 3%%, results waited 12%%: %s", how, o.why);
        cr_expect_not_null(strstr(o.why, "waited for a core 12%"), "%s", o.why);
        /* The baseline's wait explains a speedup, and hides a slowdown behind "same". */
        o = waited(1 / 1.03, 0.12, 0.01, rounds, &own);
        cr_expect_eq(o.verdict, KBI_VERDICT_UNSURE, "%s: 3%% faster, baseline waited 12%%: %s", how,
                     o.why);
        o = waited(1.0, 0.12, 0.0, rounds, &own);
        cr_expect_eq(o.verdict, KBI_VERDICT_UNSURE, "%s: no change, baseline waited 12%%: %s", how,
                     o.why);
        /* A wait can only make a side read slow: the baseline's cannot explain a slowdown. */
        o = waited(1.10, 0.12, 0.0, rounds, &own);
        cr_expect_eq(o.verdict, KBI_VERDICT_SLOWER, "%s: 10%%, only the baseline waited: %s", how,
                     o.why);
        /* 10% under a 30% wait (up to 43% slow) is unsure; with no wait it is slower. */
        o = waited(1.10, 0.0, 0.30, rounds, &own);
        cr_expect_eq(o.verdict, KBI_VERDICT_UNSURE, "%s: 10%% under 30%%: %s", how, o.why);
        cr_expect_not_null(strstr(o.why, "waited for a core 30%"), "%s", o.why);
        o = waited(1.10, 0.0, 0.0, rounds, &own);
        cr_expect_eq(o.verdict, KBI_VERDICT_SLOWER, "%s: 10%%, no wait: %s", how, o.why);
        /* detectable says how large a change that wait hides. */
        o = waited(1.03, 0.0, 0.12, rounds, &own);
        cr_expect(o.detectable > 0.12 / 0.88, "%s: detectable %g under a 12%% wait", how,
                  o.detectable);
    }
}

/* The verdict of a device case t -> t x ratio (one round each) whose sides' SM clocks ran
 * from bs to be and from rs to re MHz (0: not recorded). */
static kbi_compare_outcome clocked(double ratio, double bs, double be, double rs, double re)
{
    kbi_case_result a, b;
    kbi_compare_outcome out;
    one_round_case(&a, 1e-3, 3);
    one_round_case(&b, 1e-3 * ratio, 4);
    a.timing = b.timing = "events";
    a.has_clocks = bs > 0, b.has_clocks = rs > 0;
    a.clock_start_mhz = bs, a.clock_end_mhz = be;
    b.clock_start_mhz = rs, b.clock_end_mhz = re;
    a.clock_drop = be < 0.95 * bs;
    b.clock_drop = re < 0.95 * rs;
    kbi_compare_case(&a, &b, NULL, &out);
    free_case(&a);
    free_case(&b);
    return out;
}

Test(verdicts, a_clock_that_dropped_explains_what_it_can_and_no_more)
{
    /* Issue 23, 2b: sgemm's tf32x3 at 8192^3 runs the H200 down from 1845 to 1725 MHz in a
     * case (power cap).  The clock a case settles at sets most of its samples' speed: a
     * results side that ended at 1660 MHz against the baseline's 1725 may read 3.9% slow. */
    kbi_compare_outcome o = clocked(1.038, 1845, 1725, 1845, 1660);
    cr_expect_neq(o.verdict, KBI_VERDICT_SLOWER, "3.8%% within what the clocks explain: %s", o.why);
    cr_expect_not_null(strstr(o.why, "SM clock dropped and ended at 1725 MHz (baseline) and "
                                     "1660 MHz (results)"),
                       "%s", o.why);
    /* Beyond it: slower, clock or not. */
    o = clocked(1.25, 1845, 1725, 1845, 1660);
    cr_expect_eq(o.verdict, KBI_VERDICT_SLOWER, "25%% beyond the clocks' 3.9%%: %s", o.why);
    /* The same drop on both sides explains nothing: the plain 2% rule. */
    o = clocked(1.038, 1845, 1725, 1845, 1725);
    cr_expect_eq(o.verdict, KBI_VERDICT_SLOWER, "the same clocks explain nothing: %s", o.why);
    o = clocked(1.0, 1845, 1725, 1845, 1725);
    cr_expect_eq(o.verdict, KBI_VERDICT_SAME, "%s", o.why);
    /* A lower clock on the results side cannot explain a speedup, nor a slowdown beyond it. */
    o = clocked(1 / 1.05, 1845, 1725, 1845, 1660);
    cr_expect_eq(o.verdict, KBI_VERDICT_FASTER, "%s", o.why);
    /* One side without clocks (an older record): nothing to explain with. */
    o = clocked(1.038, 0, 0, 1845, 1660);
    cr_expect_eq(o.verdict, KBI_VERDICT_SLOWER, "%s", o.why);
}

Test(verdicts, a_device_case_paced_by_the_host_is_judged_like_a_host_case)
{
    /* Issue 23, 2b: md's layer_matrix runs a host pass inside run() (KB_RUN_SYNCS); unchanged
     * code read 2-16% slower on another lease's CPU. */
    kbi_case_result a, b;
    kbi_compare_outcome o;
    kbi_compare_options own = {0, 0, -1, 0, 0};
    one_round_case(&a, 1e-3, 5);
    one_round_case(&b, 1.08e-3, 6);
    a.timing = b.timing = "events";
    kbi_compare_case(&a, &b, NULL, &o);
    cr_expect_eq(o.verdict, KBI_VERDICT_SLOWER, "not paced by the host: 8%% is slower: %s", o.why);
    b.host_paced = 1;
    kbi_compare_case(&a, &b, NULL, &o);
    cr_expect_neq(o.verdict, KBI_VERDICT_SLOWER, "paced by the host: within the drift: %s",
                  o.why);
    kbi_compare_case(&a, &b, &own, &o);
    cr_expect_eq(o.verdict, KBI_VERDICT_SLOWER, "--host-drift 0: slower again: %s", o.why);
    for (size_t k = 0; k < b.n_samples; k++)
        b.samples[k] *= 2;
    kbi_stats_compute(b.samples, b.n_samples, &b.stats);
    kbi_compare_case(&a, &b, NULL, &o);
    cr_expect_eq(o.verdict, KBI_VERDICT_SLOWER, "2x is beyond any drift: %s", o.why);
    /* On different CPUs: not comparable, as a host time is. */
    {
        kbi_env_record ea = {0}, eb = {0};
        json_t *rec;
        kbi_case_result back;
        ea.cpu_model = "AMD EPYC 9654";
        eb.cpu_model = "Intel(R) Xeon(R) Platinum 8480+";
        a.env = &ea, b.env = &eb;
        kbi_compare_case(&a, &b, NULL, &o);
        cr_expect_eq(o.verdict, KBI_VERDICT_NOT_COMPARABLE, "%s", o.why);
        /* The same CPU model on a host whose probe runs 1.5x slower (issue 23: two leases of
         * one VM type ran host code 1.3-4.8x apart): not comparable either. */
        eb.cpu_model = ea.cpu_model;
        ea.cpu_compute_ms = 3.0, ea.cpu_memory_gbs = 10.0;
        eb.cpu_compute_ms = 4.5, eb.cpu_memory_gbs = 10.0;
        kbi_compare_case(&a, &b, NULL, &o);
        cr_expect_eq(o.verdict, KBI_VERDICT_NOT_COMPARABLE, "%s", o.why);
        cr_expect_not_null(strstr(o.why, "hosts of different speed"), "%s", o.why);
        eb.cpu_compute_ms = 3.0, eb.cpu_memory_gbs = 6.0;
        kbi_compare_case(&a, &b, NULL, &o);
        cr_expect_eq(o.verdict, KBI_VERDICT_NOT_COMPARABLE, "memory alone: %s", o.why);
        eb.cpu_compute_ms = 3.15, eb.cpu_memory_gbs = 8.5;
        kbi_compare_case(&a, &b, NULL, &o);
        cr_expect_eq(o.verdict, KBI_VERDICT_SLOWER,
                     "compute 5%%, memory 18%% apart: one host, 2x slower: %s", o.why);
        eb.cpu_compute_ms = 0;
        kbi_compare_case(&a, &b, NULL, &o);
        cr_expect_eq(o.verdict, KBI_VERDICT_SLOWER, "one side without a probe: %s", o.why);
        a.env = b.env = NULL;
        /* The record keeps it. */
        b.id = "fx/dev/n=1", b.plugin = "fx", b.variant = "dev", b.target = "device";
        b.baseline = b.message = b.params_text = b.size_param = b.cache = "";
        b.params = json_object();
        rec = kbi_case_record_json(&b);
        cr_expect(json_is_true(json_object_get(rec, "host_paced")));
        cr_assert_null(kbi_case_record_read(&back, rec, KBI_RESULTS_VERSION));
        cr_expect(back.host_paced);
        kbi_case_result_free(&back);
        json_decref(rec);
        json_decref(b.params);
    }
    free_case(&a);
    free_case(&b);
}

Test(verdicts, a_real_slowdown_over_quiet_rounds_is_slower)
{
    kbi_case_result a, b;
    kbi_compare_outcome out;
    for (unsigned long long seed = 1; seed <= 20; seed++) {
        synthetic_case(&a, 1e-3, 0.005, 8, seed);
        synthetic_case(&b, 1.1e-3, 0.005, 8, seed + 1000);
        kbi_compare_case(&a, &b, NULL, &out);
        cr_expect(out.detectable < 0.10, "seed %llu: detectable %g", seed, out.detectable);
        cr_expect_eq(out.verdict, KBI_VERDICT_SLOWER, "seed %llu: %s (%s)", seed,
                     kbi_verdict_name(out.verdict), out.why);
        cr_expect(fabs(out.ratio - 1.1) < 0.02, "ratio %g", out.ratio);
        /* And the same code twice over quiet rounds is the same. */
        kbi_compare_case(&a, &a, NULL, &out);
        cr_expect_eq(out.verdict, KBI_VERDICT_SAME);
        free_case(&b);
        synthetic_case(&b, 1e-3, 0.005, 8, seed + 2000);
        kbi_compare_case(&a, &b, NULL, &out);
        cr_expect_neq(out.verdict, KBI_VERDICT_SLOWER, "seed %llu: %s", seed, out.why);
        cr_expect_neq(out.verdict, KBI_VERDICT_FASTER, "seed %llu: %s", seed, out.why);
        free_case(&a);
        free_case(&b);
    }
}

/* ---- ten runs of an unchanged binary on this machine ---- */

#define RUNS 10
#define SLOW_RUNS 2

static const char *const ten_runs_profile =
    "[run]\nwarmup = 2\nmin_samples = 7\nmax_samples = 7\nmin_time = 0\nrounds = 10\n"
    "cache = hot\ntimeout = 60\n\n[good]\nvariants = sum\nn = 2000, 20000\n";

/* Runs the profile `text` into tmp/NAME and loads it. */
static void run_text_into(const char *name, const char *text, kbi_result_set *set)
{
    char profile[300], out[300], results[320], err[KBI_ERR_SIZE];
    char *argv[] = {"run", NULL};
    kbi_run_args a = {.device = -1, .argc = 1, .argv = argv, .plugins_dir = KBENCH_TEST_PLUGINS};
    FILE *f;
    snprintf(profile, sizeof profile, "%s/p.ini", tmp);
    f = fopen(profile, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    snprintf(out, sizeof out, "%s/%s", tmp, name);
    a.profile_path = profile;
    a.out_dir = out;
    cr_assert_eq(kbi_run(&a), 0, "%s", name);
    snprintf(results, sizeof results, "%s/results.jsonl", out);
    cr_assert_eq(kbi_results_load(set, results, err), KBI_OK, "%s", err);
}

static void run_into(const char *name, kbi_result_set *set)
{
    run_text_into(name, ten_runs_profile, set);
}

Test(verdicts, ten_unchanged_runs_are_never_slower_and_ten_percent_is_seen)
{
    kbi_result_set runs[RUNS] = {{0}}, slow[SLOW_RUNS] = {{0}};
    size_t count[KBI_VERDICT_COUNT] = {0}, called = 0, too_noisy = 0, faster_slow = 0, waited = 0,
           slow_pairs = 0;
    double det_min = INFINITY, det_max = 0, max_wait = 0;
    char name[32];
    /* The 10% half is judged with no host drift: the fixture's host cases would otherwise
     * carry the 25% default, which no 10% change can clear (detectable >= 27.5%), and the
     * half would assert nothing.  The unchanged half keeps the default a user on a shared
     * machine gets. */
    kbi_compare_options no_drift = {0, 0, -1, 0, 0};
    if (KBENCH_TEST_SANITIZE)
        cr_skip_test("an ASan build's times move by half from run to run with its allocator's "
                     "state; these figures are the release build's");
    for (int i = 0; i < RUNS; i++) {
        snprintf(name, sizeof name, "run%d", i);
        run_into(name, &runs[i]);
    }
    /* The same binary made to do 10% more work: the same case ids. */
    setenv("KBENCH_FIXTURE_EXTRA_WORK", "10", 1);
    for (int i = 0; i < SLOW_RUNS; i++) {
        snprintf(name, sizeof name, "slow%d", i);
        run_into(name, &slow[i]);
    }
    unsetenv("KBENCH_FIXTURE_EXTRA_WORK");
    /* Every ordered pair of unchanged runs: never slower. */
    for (int i = 0; i < RUNS; i++)
        for (int j = 0; j < RUNS; j++) {
            kbi_comparison c;
            char err[KBI_ERR_SIZE];
            if (i == j)
                continue;
            cr_assert_eq(kbi_compare_sets(&runs[i], &runs[j], NULL, &c, err), KBI_OK);
            for (size_t r = 0; r < c.n_rows; r++) {
                kbi_compare_outcome *o = &c.rows[r].out;
                count[o->verdict]++;
                waited += strstr(o->why, "waited for a core") != NULL;
                cr_expect_neq(o->verdict, KBI_VERDICT_SLOWER, "run%d -> run%d: %s: %s", i, j,
                              c.rows[r].base->id, o->why);
                if (o->detectable < det_min)
                    det_min = o->detectable;
                if (o->detectable > det_max)
                    det_max = o->detectable;
            }
            kbi_comparison_free(&c);
        }
    /* Each unchanged run against each slow one: slower wherever the runs
     * could detect 10%, and never faster. */
    for (int i = 0; i < RUNS; i++)
        for (int j = 0; j < SLOW_RUNS; j++) {
            kbi_comparison c;
            char err[KBI_ERR_SIZE];
            cr_assert_eq(kbi_compare_sets(&runs[i], &slow[j], &no_drift, &c, err), KBI_OK);
            for (size_t r = 0; r < c.n_rows; r++) {
                kbi_compare_outcome *o = &c.rows[r].out;
                cr_assert(o->rounds_base == 10 && o->rounds_results == 10, "%s",
                          c.rows[r].base->id);
                max_wait = fmax(max_wait, fmax(c.rows[r].base->cpu_wait, c.rows[r].res->cpu_wait));
                faster_slow += o->verdict == KBI_VERDICT_FASTER;
                /* n = 2000 runs ~2 us, where the fixed cost of a run dilutes the extra 10%
                 * of the loop to +2-5%: only the 20 us case carries the whole 10%. */
                if (!strstr(c.rows[r].base->id, "n=20000,"))
                    continue;
                slow_pairs++;
                called += o->verdict == KBI_VERDICT_SLOWER;
                if (o->detectable < 0.10)
                    cr_expect_eq(o->verdict, KBI_VERDICT_SLOWER,
                                 "run%d -> slow%d: %s: detectable %.1f%% but %s (%s)", i, j,
                                 c.rows[r].base->id, 100 * o->detectable,
                                 kbi_verdict_name(o->verdict), o->why);
                else
                    too_noisy++;
            }
            kbi_comparison_free(&c);
        }
    cr_expect_eq(faster_slow, 0, "a 10%% slowdown called faster");
    /* And it is seen where the runs can see it: on a quiet machine every comparison resolves
     * 10% (detectable < 10%) and each of those must say slower (above).  Where none could,
     * the workers must have waited for a core (on this 2-core machine shared with three
     * builds they waited up to 66%, and 0 to 16 of 40 were called); a compare blind to 10%
     * with the machine quiet fails here. */
    cr_expect(too_noisy < slow_pairs || max_wait > 0.05,
              "no comparison resolved a 10%% slowdown (%zu of %zu slower), and no worker waited "
              "for a core more than 5%% (the largest wait %.1f%%)",
              called, slow_pairs, 100 * max_wait);
    /* The figures, for the record (ctest -V shows them). */
    fprintf(stderr,
            "ten runs: %zu unchanged comparisons: %zu same, %zu unsure (%zu of them with a CPU "
            "wait), %zu faster, %zu slower; detectable %.1f%%..%.1f%%; 10%% slowdown without host "
            "drift: %zu of %zu slower, %zu with detectable over 10%%\n",
            count[KBI_VERDICT_SAME] + count[KBI_VERDICT_UNSURE] + count[KBI_VERDICT_FASTER] +
                count[KBI_VERDICT_SLOWER],
            count[KBI_VERDICT_SAME], count[KBI_VERDICT_UNSURE], waited, count[KBI_VERDICT_FASTER],
            count[KBI_VERDICT_SLOWER], 100 * det_min, 100 * det_max, called, slow_pairs, too_noisy);
    for (int i = 0; i < RUNS; i++)
        kbi_results_free(&runs[i]);
    for (int i = 0; i < SLOW_RUNS; i++)
        kbi_results_free(&slow[i]);
}

/* ---- --sanitize runs are not timings ---- */

Test(verdicts, a_sanitized_run_is_marked_and_refused_as_timings)
{
    static const char profile_text[] = "[run]\nwarmup = 1\nmin_samples = 3\nmax_samples = 3\n"
                                       "min_time = 0\n\n[good]\nvariants = sum\nn = 100\n";
    char profile[300], plain[300], sanitized[300], err[KBI_ERR_SIZE], path[340];
    char *argv[] = {"run", NULL};
    kbi_run_args a = {.device = -1, .argc = 1, .argv = argv, .plugins_dir = KBENCH_TEST_PLUGINS};
    kbi_result_set base = {0}, res = {0};
    kbi_comparison c;
    FILE *f;
    snprintf(profile, sizeof profile, "%s/p.ini", tmp);
    f = fopen(profile, "w");
    cr_assert_not_null(f);
    fputs(profile_text, f);
    fclose(f);
    snprintf(plain, sizeof plain, "%s/plain", tmp);
    snprintf(sanitized, sizeof sanitized, "%s/sanitized", tmp);
    a.profile_path = profile;
    a.out_dir = plain;
    cr_assert_eq(kbi_run(&a), 0);
    /* Host cases run as they are; the run is still a --sanitize run, and a
     * stand-in for compute-sanitizer is enough to start it. */
    setenv("KBENCH_COMPUTE_SANITIZER", "/bin/true", 1);
    a.out_dir = sanitized;
    a.sanitize = "memcheck";
    cr_assert_eq(kbi_run(&a), 0);
    unsetenv("KBENCH_COMPUTE_SANITIZER");
    snprintf(path, sizeof path, "%s/results.jsonl", plain);
    cr_assert_eq(kbi_results_load(&base, path, err), KBI_OK, "%s", err);
    snprintf(path, sizeof path, "%s/results.jsonl", sanitized);
    cr_assert_eq(kbi_results_load(&res, path, err), KBI_OK, "%s", err);
    cr_assert_eq(res.n_cases, 1);
    cr_expect_str_eq(res.cases[0].sanitize, "memcheck", "the case record says it");
    cr_expect(kbi_case_not_timing(&res.cases[0]));
    cr_expect_not(kbi_case_not_timing(&base.cases[0]));
    /* Either side: no timing verdict, exit 2. */
    cr_assert_eq(kbi_compare_sets(&base, &res, NULL, &c, err), KBI_OK);
    cr_expect_eq(c.rows[0].out.verdict, KBI_VERDICT_NOT_MEASURED);
    cr_expect_not_null(strstr(c.rows[0].out.why, "--sanitize"), "%s", c.rows[0].out.why);
    cr_expect_eq(kbi_comparison_exit_code(&c), KBI_EXIT_USAGE);
    kbi_comparison_free(&c);
    cr_assert_eq(kbi_compare_sets(&res, &base, NULL, &c, err), KBI_OK);
    cr_expect_eq(c.rows[0].out.verdict, KBI_VERDICT_NOT_MEASURED);
    cr_expect_eq(kbi_comparison_exit_code(&c), KBI_EXIT_USAGE);
    kbi_comparison_free(&c);
    {
        char *cmp_argv[] = {"compare", plain, sanitized, NULL};
        cr_expect_eq(kbi_cmd_compare(3, cmp_argv), KBI_EXIT_USAGE);
    }
    kbi_results_free(&base);
    kbi_results_free(&res);
}

/* ---- the headline: OK only when every case was judged ---- */

/* Writes cases (synthetic, host-timed) to tmp/NAME.jsonl under an env record naming cpu_model
 * (NULL: none, as kbench before 1.2 wrote); the path into path. */
static void write_cases(const char *name, kbi_case_result *cases, size_t n, const char *cpu_model,
                        char *path, size_t len)
{
    json_t *env = json_pack("{s:n}", "device");
    if (cpu_model)
        json_object_set_new(env, "cpu",
                            json_pack("{s:s,s:s,s:i}", "model", cpu_model, "signature",
                                      "family 25 model 1 stepping 1", "logical_cores", 2));
    snprintf(path, len, "%s/%s.jsonl", tmp, name);
    syn_write_run(path, "r1", env, cases, n);
    json_decref(env);
}

/* A host case fx/host/n=N of 8 quiet rounds around t whose worker waited `wait`. */
static void named_case(kbi_case_result *c, int n, double t, double wait, unsigned long long seed)
{
    static char ids[4][32], texts[4][16];
    synthetic_case(c, t, 0.005, 8, seed);
    snprintf(ids[n], sizeof ids[n], "fx/host/n=%d", n);
    snprintf(texts[n], sizeof texts[n], "n=%d", n);
    c->index = n;
    c->id = ids[n];
    c->plugin = "fx";
    c->variant = "host";
    c->target = "host";
    c->baseline = "";
    c->params = json_pack("{s:i}", "n", n);
    c->params_text = texts[n];
    c->size_param = "n";
    c->message = "";
    c->timing = "host";
    c->cache = "hot";
    c->prepare_s = c->wall_s = NAN;
    c->has_stats = 1;
    c->cpu_wait = wait;
}

static void free_named(kbi_case_result *c)
{
    json_decref(c->params);
    free_case(c);
}

/* kbench compare BASE RES [EXTRA] with stdout into tmp/out.md; the exit code, the text into
 * *text (caller frees). */
static int compare_cmd(const char *base, const char *res, const char *extra, char **text)
{
    char out[300];
    char *argv[] = {"compare", (char *)base, (char *)res, "--out", out, (char *)extra, NULL};
    int rc;
    snprintf(out, sizeof out, "%s/out.md", tmp);
    rc = kbi_cmd_compare(extra ? 6 : 5, argv);
    *text = slurp(out);
    return rc;
}

Test(verdicts, a_comparison_that_could_not_judge_is_not_ok)
{
    /* Two cases 3% slower while the results' workers waited 12% for a core: unsure, both. */
    kbi_case_result a[2], b[2];
    char base[300], res[300], same[300], *text;
    for (int i = 0; i < 2; i++) {
        named_case(&a[i], i, 1e-3, 0.0, 10 + i);
        named_case(&b[i], i, 1.03e-3, 0.12, 20 + i);
    }
    write_cases("base", a, 2, "AMD EPYC", base, sizeof base);
    write_cases("res", b, 2, "AMD EPYC", res, sizeof res);
    cr_redirect_stdout();
    cr_redirect_stderr();
    cr_expect_eq(compare_cmd(base, res, "--host-drift=0", &text), 0, "unsure passes by default");
    cr_expect_not_null(strstr(text, "**UNSURE: 2 of 2 cases could not be judged**"), "%s", text);
    cr_expect_null(strstr(text, "**OK**"), "%s", text);
    free(text);
    {
        char *argv[] = {"compare", base, res, "--host-drift=0", "--fail-on-unsure", NULL};
        cr_expect_eq(kbi_cmd_compare(5, argv), 1, "--fail-on-unsure: a blind gate fails");
    }
    /* Judged on every case: OK, and --fail-on-unsure passes. */
    write_cases("same", a, 2, "AMD EPYC", same, sizeof same);
    cr_expect_eq(compare_cmd(base, same, "--fail-on-unsure", &text), 0);
    cr_expect_not_null(strstr(text, "**OK**: 2 cases matched, 2 same"), "%s", text);
    free(text);
    /* One judged slower (10x, under the same wait) beside one unsure: a regression. */
    for (size_t k = 0; k < b[1].n_samples; k++)
        b[1].samples[k] *= 10;
    kbi_stats_compute(b[1].samples, b[1].n_samples, &b[1].stats);
    {
        size_t per[8] = {20, 20, 20, 20, 20, 20, 20, 20};
        cr_assert_eq(kbi_case_result_set_rounds(&b[1], per, 8), 0);
    }
    write_cases("res10", b, 2, "AMD EPYC", res, sizeof res);
    cr_expect_eq(compare_cmd(base, res, NULL, &text), 1);
    cr_expect_not_null(strstr(text, "**REGRESSION**"), "%s", text);
    cr_expect_not_null(strstr(text, "1 slower"), "%s", text);
    free(text);
    for (int i = 0; i < 2; i++) {
        free_named(&a[i]);
        free_named(&b[i]);
    }
}

/* ---- unchanged code against its reference on another CPU (issue 23, item 2b) ---- */

/* tmp/NAME.jsonl: the results file at src with every "model":"..." of its env's cpu replaced
 * by model. */
static void with_cpu(const char *src, const char *name, const char *model, char *path, size_t n)
{
    char *text = slurp(src), *p = strstr(text, "\"cpu\":");
    FILE *f;
    cr_assert_not_null(p, "the env record names the CPU");
    p = strstr(p, "\"model\":\"");
    cr_assert_not_null(p);
    p += strlen("\"model\":\"");
    snprintf(path, n, "%s/%s.jsonl", tmp, name);
    f = fopen(path, "w");
    cr_assert_not_null(f);
    fwrite(text, 1, (size_t)(p - text), f);
    fputs(model, f);
    fputs(strchr(p, '"'), f);
    fclose(f);
    free(text);
}

Test(verdicts, unchanged_code_on_another_cpu_says_so)
{
    /* Both causes of issue 23's false regressions against an unchanged reference: a host case
     * measured on another CPU, and a metric derived from a timing judged by its within-run
     * uncertainty alone. */
    static const char profile[] = "[run]\nwarmup = 1\nmin_samples = 5\nmax_samples = 5\n"
                                  "min_time = 0\nrounds = 3\ncache = hot\n\n"
                                  "[good]\nvariants = sum\nn = 2000\n\n[timed]\n";
    kbi_result_set ref = {0}, fresh = {0}, other = {0};
    kbi_comparison c;
    char err[KBI_ERR_SIZE], fresh_path[300], other_path[300], model[256] = "";
    const kbi_compare_row *sum = NULL, *timed = NULL;
    run_text_into("ref", profile, &ref);
    /* The env record names this machine's CPU, as /proc/cpuinfo does. */
    cr_assert_eq(ref.n_envs, 1);
    cr_expect(ref.envs[0].cpu_cores >= 1, "%zu cores", ref.envs[0].cpu_cores);
    cr_expect(ref.envs[0].cpu_model[0] != '\0', "no CPU model in the env record");
    cr_expect(ref.envs[0].cpu_compute_ms > 0 && ref.envs[0].cpu_memory_gbs > 0,
              "the host speed probe: %g ms, %g GB/s", ref.envs[0].cpu_compute_ms,
              ref.envs[0].cpu_memory_gbs);
    {
        FILE *f = fopen("/proc/cpuinfo", "r");
        char line[512];
        while (f && fgets(line, sizeof line, f))
            if (strncmp(line, "model name", 10) == 0 && strchr(line, ':')) {
                snprintf(model, sizeof model, "%s", strchr(line, ':') + 2);
                model[strcspn(model, "\n")] = '\0';
                break;
            }
        if (f)
            fclose(f);
        if (model[0])
            cr_expect_str_eq(ref.envs[0].cpu_model, model);
    }
    /* The same code again, its timing-derived figure 1.9% up at 4.7 combined uncertainties
     * (permute's self_us in issue 23), and a physics figure moved as much. */
    setenv("KBENCH_FIXTURE_TIMED_SHIFT", "0.019", 1);
    run_text_into("fresh", profile, &fresh);
    unsetenv("KBENCH_FIXTURE_TIMED_SHIFT");
    /* The same host: the two runs' host speed probes are made equal.  Measured, they differ
     * by up to 1.3x on this 2-core machine while other suites run beside this one (19.7
     * against 30.2 GB/s; 2.45 against 3.22 ms), and compare then rightly calls the host
     * case not comparable; the threshold has its own test
     * (a_device_case_paced_by_the_host_is_judged_like_a_host_case). */
    cr_assert_eq(fresh.n_envs, 1);
    fresh.envs[0].cpu_compute_ms = ref.envs[0].cpu_compute_ms;
    fresh.envs[0].cpu_memory_gbs = ref.envs[0].cpu_memory_gbs;
    for (size_t i = 0; i < fresh.n_cases; i++) {
        const kbi_metric *m = case_metric(&fresh.cases[i], "self_us");
        if (m)
            cr_expect(m->timing, "the record says self_us is a timing");
    }
    cr_assert_eq(kbi_compare_sets(&ref, &fresh, NULL, &c, err), KBI_OK);
    for (size_t i = 0; i < c.n_rows; i++) {
        if (strcmp(c.rows[i].base->plugin, "timed") == 0)
            timed = &c.rows[i];
        else
            sum = &c.rows[i];
    }
    cr_assert(sum && timed && timed->n_metrics == 2);
    for (size_t j = 0; j < 2; j++) {
        const kbi_metric_outcome *o = &timed->metrics[j];
        if (strcmp(o->name, "self_us") == 0)
            cr_expect_eq(o->verdict, KBI_MV_SAME,
                         "a timing 1.9%% up, within the threshold: %s (%s)",
                         kbi_metric_verdict_name(o->verdict), o->why);
        else
            cr_expect_eq(o->verdict, KBI_MV_WORSE,
                         "a physics result keeps the 3-uncertainty rule: %s (%s)",
                         kbi_metric_verdict_name(o->verdict), o->why);
    }
    cr_expect_neq(sum->out.verdict, KBI_VERDICT_NOT_COMPARABLE, "the same CPU: %s",
                  sum->out.why);
    cr_expect_neq(sum->out.verdict, KBI_VERDICT_SLOWER, "%s", sum->out.why);
    kbi_comparison_free(&c);
    /* The reference's run, as if measured on another CPU: not comparable, never slower. */
    snprintf(fresh_path, sizeof fresh_path, "%s/ref/results.jsonl", tmp);
    with_cpu(fresh_path, "other", "Intel(R) Xeon(R) Platinum 8480+", other_path, sizeof other_path);
    cr_assert_eq(kbi_results_load(&other, other_path, err), KBI_OK, "%s", err);
    cr_assert_eq(kbi_compare_sets(&other, &fresh, NULL, &c, err), KBI_OK);
    for (size_t i = 0; i < c.n_rows; i++) {
        const kbi_compare_row *r = &c.rows[i];
        cr_expect_eq(r->out.verdict, KBI_VERDICT_NOT_COMPARABLE, "%s: %s (%s)", r->base->id,
                     kbi_verdict_name(r->out.verdict), r->out.why);
        cr_expect_not_null(strstr(r->out.why, "measured on different CPUs (Intel(R) Xeon(R) "
                                              "Platinum 8480+"),
                           "%s", r->out.why);
        for (size_t j = 0; j < r->n_metrics; j++)
            if (strcmp(r->metrics[j].name, "self_us") == 0)
                cr_expect_eq(r->metrics[j].verdict, KBI_MV_UNSURE, "%s", r->metrics[j].why);
    }
    cr_expect_eq(c.count[KBI_VERDICT_SLOWER], 0);
    cr_expect_eq(c.unjudged, c.matched, "not comparable is not judged");
    kbi_comparison_free(&c);
    kbi_results_free(&ref);
    kbi_results_free(&fresh);
    kbi_results_free(&other);
}
