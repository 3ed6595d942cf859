/* The worker's side of ABI 1.1, against fixture plugins: a plugin built
 * against 1.0 runs unchanged; prepare runs once per parameter point per
 * worker, is shared by the point's variants, is recorded apart and is not
 * counted against a case's timeout; a failed prepare fails its point's
 * cases with its message; reset runs before every sample and max_batch caps
 * the batch; declared metrics reach the record with their uncertainty and
 * a metric out of its bound fails the case.  ABI 1.4: instrument runs once, after the
 * last verify and outside the samples, its metrics and time recorded as instrumented; never
 * after a failed verify nor for a 1.3 plugin; a failure is an error that keeps the timing. */
#define _XOPEN_SOURCE 700
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "report.h"

static void setup(void)
{
    make_tmp_named("worker");
}

TestSuite(worker, .init = setup, .fini = remove_tmp, .timeout = 120);

static const char *run_head =
    "[run]\nwarmup = 1\nmin_samples = 3\nmin_time = 0\nmax_noise = 1\ntimeout = 30\n";

/* Runs `body` (after run_head and `cache`) on the fixture plugins with the
 * fixture's log in tmp/log; returns kbench's exit code. */
static int run_fixture(const char *cache, const char *body, int in_process, kbi_result_set *set)
{
    char profile[300], out[300], log[300];
    kbi_run_args a = {.device = -1, .plugins_dir = KBENCH_TEST_FIXTURES, .in_process = in_process};
    FILE *f;
    int rc;
    snprintf(profile, sizeof profile, "%s/p.ini", tmp);
    snprintf(out, sizeof out, "%s/out", tmp);
    snprintf(log, sizeof log, "%s/log", tmp);
    setenv("KBENCH_FIXTURE_LOG", log, 1);
    f = fopen(profile, "w");
    cr_assert_not_null(f);
    fprintf(f, "%scache = %s\n%s", run_head, cache, body);
    fclose(f);
    a.profile_path = profile;
    a.out_dir = out;
    rc = run_and_load(&a, set);
    unsetenv("KBENCH_FIXTURE_LOG");
    return rc;
}

/* Lines of the fixture's log that start with `what` and contain `id`. */
static int log_count(const char *what, const char *id)
{
    char path[300], line[512];
    int n = 0;
    FILE *f;
    snprintf(path, sizeof path, "%s/log", tmp);
    if (!(f = fopen(path, "r")))
        return 0;
    while (fgets(line, sizeof line, f))
        n += strncmp(line, what, strlen(what)) == 0 && line[strlen(what)] == ' ' &&
             strstr(line, id) != NULL;
    fclose(f);
    return n;
}

static const kbi_case_result *find_case(const kbi_result_set *set, const char *id)
{
    for (size_t i = 0; i < set->n_cases; i++)
        if (strcmp(set->cases[i].id, id) == 0)
            return &set->cases[i];
    cr_assert_fail("no case %s", id);
    return NULL;
}

Test(worker, a_plugin_built_against_1_0_runs_unchanged)
{
    kbi_result_set set;
    cr_expect_eq(run_fixture("hot", "[v10]\nn = 10, 1000\nshape = 4x5\n", 0, &set), 0);
    cr_assert_eq(set.n_cases, 2);
    for (size_t i = 0; i < set.n_cases; i++) {
        const kbi_case_result *c = &set.cases[i];
        cr_expect_eq(c->status, KBI_ST_OK, "%s: %s", c->id, c->message);
        cr_expect(c->n_samples >= 3);
        cr_expect_null(json_object_get(c->json, "prepare_s"), "no prepare for a 1.0 plugin");
        cr_expect_not_null(json_object_get(json_object_get(c->json, "metrics"), "v10_metric"));
    }
    kbi_results_free(&set);
}

Test(worker, prepare_once_per_point_shared_by_the_variants)
{
    kbi_result_set set;
    cr_expect_eq(run_fixture("cold", "[stateful]\nvariants = a, b\nn = 1, 2, 3\n", 0, &set), 0);
    cr_assert_eq(set.n_cases, 6);
    for (int n = 1; n <= 3; n++) {
        char id[64], ida[96], idb[96];
        snprintf(id, sizeof id, "stateful/n=%d,", n);
        cr_expect_eq(log_count("prepare", id), 1, "one prepare for %s", id);
        cr_expect_eq(log_count("release", id), 1, "one release for %s", id);
        snprintf(ida, sizeof ida,
                 "stateful/a/n=%d,prepare_sleep=0,prepare_fail=0,max_batch=0,drift=0.1", n);
        snprintf(idb, sizeof idb,
                 "stateful/b/n=%d,prepare_sleep=0,prepare_fail=0,max_batch=0,drift=0.1", n);
        const kbi_case_result *a = find_case(&set, ida), *b = find_case(&set, idb);
        cr_expect_eq(a->status, KBI_ST_OK, "%s: %s", a->id, a->message);
        cr_expect_eq(b->status, KBI_ST_OK, "%s: %s", b->id, b->message);
        /* Recorded on the first case of the point only. */
        cr_expect_not_null(json_object_get(a->json, "prepare_s"));
        cr_expect_null(json_object_get(b->json, "prepare_s"));
        for (int k = 0; k < 2; k++) {
            json_t *pv =
                json_object_get(json_object_get((k ? b : a)->json, "metrics"), "prepared_value");
            cr_expect_float_eq(json_number_value(json_object_get(pv, "value")), 1.5 * n, 1e-12);
            cr_expect_float_eq(json_number_value(json_object_get(pv, "uncertainty")), 0, 0);
            cr_expect(json_is_true(json_object_get(pv, "declared")));
        }
    }
    kbi_results_free(&set);
}

Test(worker, prepare_is_not_counted_against_the_timeout)
{
    /* prepare sleeps 1.5 s against a case timeout of 1 s. */
    kbi_result_set set;
    {
        char profile[300], out[300];
        kbi_run_args a = {.device = -1, .plugins_dir = KBENCH_TEST_FIXTURES};
        FILE *f;
        snprintf(profile, sizeof profile, "%s/t.ini", tmp);
        snprintf(out, sizeof out, "%s/out-t", tmp);
        f = fopen(profile, "w");
        fputs("[run]\nwarmup = 0\nmin_samples = 2\nmin_time = 0\ntimeout = 1\n"
              "[stateful]\nvariants = a, b\nprepare_sleep = 1.5\n",
              f);
        fclose(f);
        a.profile_path = profile;
        a.out_dir = out;
        cr_expect_eq(run_and_load(&a, &set), 0);
        cr_assert_eq(set.n_cases, 2);
        cr_expect_eq(set.cases[0].status, KBI_ST_OK, "%s", set.cases[0].message);
        cr_expect_eq(set.cases[1].status, KBI_ST_OK, "%s", set.cases[1].message);
        cr_expect_geq(json_number_value(json_object_get(set.cases[0].json, "prepare_s")), 1.4);
        kbi_results_free(&set);
    }
}

Test(worker, a_failed_prepare_fails_its_point_and_the_next_point_runs)
{
    kbi_result_set set;
    cr_expect_eq(run_fixture("cold", "[stateful]\nvariants = a, b\nn = 1, 2\nprepare_fail = 1, 0\n",
                             0, &set),
                 1);
    cr_assert_eq(set.n_cases, 8);
    for (size_t i = 0; i < set.n_cases; i++) {
        const kbi_case_result *c = &set.cases[i];
        if (strstr(c->id, "prepare_fail=1")) {
            cr_expect_eq(c->status, KBI_ST_ERROR, "%s", c->id);
            cr_expect_str_eq(c->message, "planned prepare failure");
        } else {
            cr_expect_eq(c->status, KBI_ST_OK, "%s: %s", c->id, c->message);
        }
    }
    kbi_results_free(&set);
}

Test(worker, in_process_runs_prepare_once_per_point_and_release_at_the_end)
{
    kbi_result_set set;
    cr_expect_eq(run_fixture("cold", "[stateful]\nvariants = a, b\nn = 4, 5\n", 1, &set), 0);
    cr_assert_eq(set.n_cases, 4);
    cr_expect_eq(log_count("prepare", "stateful/n=4,"), 1);
    cr_expect_eq(log_count("prepare", "stateful/n=5,"), 1);
    cr_expect_eq(log_count("release", "stateful/n=4,"), 1);
    cr_expect_eq(log_count("release", "stateful/n=5,"), 1);
    kbi_results_free(&set);
}

Test(worker, reset_before_every_sample_and_max_batch_caps_the_batch)
{
    kbi_result_set set;
    /* Hot mode grows the batch until a sample takes a millisecond: far past
     * 3 runs of this fixture, so only max_batch keeps it there; verify
     * fails if more runs than max_batch happened since the last reset. */
    cr_expect_eq(run_fixture("hot", "[stateful]\nvariants = a\nmax_batch = 0, 1, 3\n", 0, &set), 0);
    cr_assert_eq(set.n_cases, 3);
    for (size_t i = 0; i < set.n_cases; i++) {
        const kbi_case_result *c = &set.cases[i];
        json_t *resets = json_object_get(json_object_get(c->json, "metrics"), "resets");
        json_int_t batch = json_integer_value(json_object_get(c->json, "batch"));
        cr_expect_eq(c->status, KBI_ST_OK, "%s: %s", c->id, c->message);
        cr_expect_str_eq(json_string_value(json_object_get(c->json, "timing")), "host");
        /* One reset before the verified run, each warm-up and each sample. */
        cr_expect_geq(json_number_value(json_object_get(resets, "value")), c->n_samples + 2, "%s",
                      c->id);
        if (strstr(c->id, "max_batch=1,"))
            cr_expect_eq(batch, 1, "%s", c->id);
        else if (strstr(c->id, "max_batch=3,"))
            cr_expect_eq(batch, 3, "%s", c->id);
        else
            cr_expect_gt(batch, 3, "%s", c->id);
    }
    kbi_results_free(&set);
}

Test(worker, a_metric_out_of_its_bound_fails_the_case)
{
    kbi_result_set set;
    cr_expect_eq(run_fixture("cold", "[stateful]\nvariants = a\ndrift = 0.5, 2\n", 0, &set), 1);
    cr_assert_eq(set.n_cases, 2);
    cr_expect_eq(set.cases[0].status, KBI_ST_OK, "%s", set.cases[0].message);
    cr_expect_eq(set.cases[1].status, KBI_ST_VERIFY_FAILED);
    cr_expect(strstr(set.cases[1].message, "metric drift = 2 is outside its bound [-inf, 1]"), "%s",
              set.cases[1].message);
    {
        json_t *d = json_object_get(json_object_get(set.cases[1].json, "metrics"), "drift");
        cr_expect(json_is_false(json_object_get(d, "in_bound")));
        cr_expect_float_eq(json_number_value(json_object_get(d, "uncertainty")), 0.01, 1e-12);
        cr_expect_str_eq(json_string_value(json_object_get(d, "better")), "lower");
    }
    kbi_results_free(&set);
}

/* ---- ABI 1.4: instrument ---- */

/* The names in case c's "instrumented" metrics list, joined by ','; "" when none. */
static void instrumented_names(const kbi_case_result *c, char *out, size_t size)
{
    json_t *names = json_object_get(json_object_get(c->json, "instrumented"), "metrics"), *name;
    size_t i, len = 0;
    out[0] = '\0';
    json_array_foreach(names, i, name) len +=
        (size_t)snprintf(out + len, size - len, "%s%s", i ? "," : "", json_string_value(name));
}

Test(worker, instrument_runs_once_after_the_last_verify_and_outside_the_samples)
{
    kbi_result_set set;
    const kbi_case_result *c;
    json_t *in;
    char names[256];
    cr_expect_eq(run_fixture("cold", "[instrumented]\nsleep_ms = 400\n", 0, &set), 0);
    cr_assert_eq(set.n_cases, 1);
    c = &set.cases[0];
    cr_expect_eq(c->status, KBI_ST_OK, "%s", c->message);
    cr_expect_eq(log_count("instrument", "instrumented/only/"), 1, "called once");
    /* After the verify that followed the timed runs: both verifies came before it. */
    cr_expect_float_eq(case_metric(c, "verifies_before")->value, 2.0, 0);
    in = json_object_get(c->json, "instrumented");
    cr_assert(json_is_object(in), "the record has \"instrumented\"");
    cr_expect_str_eq(json_string_value(json_object_get(in, "status")), "ok");
    cr_expect_geq(json_number_value(json_object_get(in, "wall_s")), 0.4);
    instrumented_names(c, names, sizeof names);
    cr_expect_str_eq(names, "phase_us,verifies_before", "verify's metric is not instrumented");
    cr_expect(case_metric(c, "phase_us")->instrumented);
    cr_expect_not(case_metric(c, "checked")->instrumented);
    cr_expect_float_eq(case_metric(c, "phase_us")->uncertainty, 0.5, 1e-12);
    /* Its 400 ms sleep is in no sample (a run sleeps 0.2 ms; on a loaded 2-core machine a
     * sample of it was seen at 27 ms) but in the case's wall time. */
    cr_expect_lt(c->stats.max, 0.2, "max sample %g s", c->stats.max);
    cr_expect_geq(c->wall_s, 0.4);
    kbi_results_free(&set);
}

Test(worker, instrument_is_not_called_when_verify_fails)
{
    kbi_result_set set;
    cr_expect_eq(run_fixture("cold", "[instrumented]\nfail_verify = 1\n", 0, &set), 1);
    cr_assert_eq(set.n_cases, 1);
    cr_expect_eq(set.cases[0].status, KBI_ST_VERIFY_FAILED, "%s", set.cases[0].message);
    cr_expect_eq(log_count("instrument", "instrumented/only/"), 0);
    cr_expect_null(json_object_get(set.cases[0].json, "instrumented"));
    cr_expect_null(case_metric(&set.cases[0], "phase_us"));
    kbi_results_free(&set);
}

/* A failing instrument makes the case an error that keeps what was measured: the samples,
 * their statistics, the passed verdict, and the metrics instrument reported before it
 * failed; the message names instrument and the median.  A skip leaves the case ok. */
Test(worker, a_failed_instrument_is_an_error_that_keeps_the_timing_and_a_skip_is_ok)
{
    kbi_result_set set;
    cr_expect_eq(
        run_fixture("cold", "[instrumented]\ninstrument = error, skip\nsleep_ms = 0\n", 0, &set),
        1);
    cr_assert_eq(set.n_cases, 2);
    for (size_t i = 0; i < set.n_cases; i++) {
        const kbi_case_result *c = &set.cases[i];
        json_t *in = json_object_get(c->json, "instrumented");
        char names[256];
        cr_expect_geq(c->n_samples, 3, "%s", c->id);
        cr_expect(c->has_stats && c->stats.median > 0, "%s", c->id);
        cr_expect(c->has_verify && c->verify_passed, "%s", c->id);
        instrumented_names(c, names, sizeof names);
        cr_expect_str_eq(names, "phase_us,verifies_before", "%s", c->id);
        if (strstr(c->id, "instrument=error")) {
            cr_expect_eq(c->status, KBI_ST_ERROR);
            cr_expect(strstr(c->message, "instrument failed after the case verified and was "
                                         "timed (median "),
                      "%s", c->message);
            cr_expect(strstr(c->message, ": planned instrument failure"), "%s", c->message);
            cr_expect_str_eq(json_string_value(json_object_get(in, "status")), "error");
            cr_expect_eq(c->instrumented.status, KBI_ST_ERROR);
        } else {
            cr_expect_eq(c->status, KBI_ST_OK, "%s: %s", c->id, c->message);
            cr_expect_str_eq(json_string_value(json_object_get(in, "status")), "skipped");
            cr_expect_str_eq(c->instrumented.message, "planned instrument skip");
        }
    }
    kbi_results_free(&set);
}

Test(worker, a_plugin_built_against_1_3_runs_unchanged_without_instrument)
{
    kbi_result_set set;
    cr_expect_eq(run_fixture("hot", "[instrumented13]\n", 0, &set), 0);
    cr_assert_eq(set.n_cases, 1);
    cr_expect_eq(set.cases[0].status, KBI_ST_OK, "%s", set.cases[0].message);
    cr_expect_geq(set.cases[0].n_samples, 3);
    cr_expect_not_null(case_metric(&set.cases[0], "checked"));
    cr_expect_eq(log_count("instrument", "instrumented13/"), 0,
                 "a 1.3 plugin is never instrumented");
    cr_expect_null(json_object_get(set.cases[0].json, "instrumented"));
    cr_expect_not(set.cases[0].instrumented.ran);
    kbi_results_free(&set);
}

/* report.md marks the metrics an instrument reported, and says what the mark means. */
Test(worker, the_report_marks_instrumented_metrics)
{
    kbi_result_set set;
    kbi_report_options opt = {.no_charts = 1};
    char out[300], path[340], err[KBI_ERR_SIZE], *md;
    cr_expect_eq(run_fixture("cold", "[instrumented]\nsleep_ms = 0\n", 0, &set), 0);
    snprintf(out, sizeof out, "%s/report", tmp);
    cr_assert_eq(kbi_report_write(&set, out, &opt, err), KBI_OK, "%s", err);
    snprintf(path, sizeof path, "%s/report.md", out);
    md = slurp(path);
    cr_expect(strstr(md, "| phase_us (us; lower is better; *instrumented*) |"), "%s", md);
    cr_expect(strstr(md, "| checked |"), "verify's metric is not marked:\n%s", md);
    cr_expect(strstr(md, "*instrumented*: measured by the plugin's instrument step"), "%s", md);
    free(md);
    kbi_results_free(&set);
}
