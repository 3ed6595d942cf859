#define _DEFAULT_SOURCE
/* Results files: what the writer puts down, the reader gets back; a cut-off
 * file keeps its complete lines; other schemas are refused with file:line. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <math.h>

#include "results.h"

static char path[64];

static void make_path(void)
{
    int fd;
    strcpy(path, "/tmp/kbench-results-XXXXXX");
    fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
}

static void cleanup(void)
{
    unlink(path);
}

TestSuite(results, .init = make_path, .fini = cleanup);

static json_t *case_record(const char *id, const char *status, double t)
{
    json_t *c = json_pack("{s:s, s:s, s:s, s:s, s:{s:i}, s:s, s:s, s:s}", "id", id, "plugin",
                          "good", "variant", "sum", "target", "host", "params", "n", 8,
                          "params_text", "n=8", "status", status, "message", "");
    json_t *s = json_array();
    for (int i = 0; i < 5; i++)
        json_array_append_new(s, json_real(t * (1.0 + 0.01 * i)));
    json_object_set_new(c, "samples", s);
    json_object_set_new(c, "counts", json_pack("{s:f, s:f, s:f}", "flops", 8.0, "bytes", 64.0,
                                               "items", 8.0));
    json_object_set_new(c, "verify", json_pack("{s:b, s:f, s:f, s:s}", "passed", 1, "error",
                                               0.0, "tolerance", 1e-9, "metric", "abs"));
    json_object_set_new(c, "metrics", json_pack("{s:{s:f, s:s}}", "m", "value", 2.5, "unit", "x"));
    return c;
}

static void write_run(int with_end)
{
    kbi_results_writer w;
    char err[KBI_ERR_SIZE];
    json_t *env = json_pack("{s:{s:s}, s:s, s:{s:f, s:f}}", "device", "name", "Test GPU",
                            "git_revision", "abc", "ceilings", "bandwidth_gbs", 100.0,
                            "peak_gflops", 1000.0);
    cr_assert_eq(kbi_results_open(&w, path, "run1", err), KBI_OK, "%s", err);
    cr_assert_eq(kbi_results_write(&w, "env", env, err), KBI_OK);
    json_decref(env);
    for (int i = 0; i < 3; i++) {
        char id[32];
        snprintf(id, sizeof id, "good/sum/n=%d", i);
        json_t *c = case_record(id, i == 1 ? "verify_failed" : "ok", 1e-3 * (i + 1));
        cr_assert_eq(kbi_results_write(&w, "case", c, err), KBI_OK);
        json_decref(c);
    }
    if (with_end) {
        json_t *e = json_pack("{s:b}", "complete", 1);
        kbi_results_write(&w, "end", e, err);
        json_decref(e);
    }
    kbi_results_close(&w);
}

Test(results, round_trip)
{
    kbi_result_set set = {0};
    char err[KBI_ERR_SIZE];
    write_run(1);
    cr_assert_eq(kbi_results_load(&set, path, err), KBI_OK, "%s", err);
    cr_assert_eq(set.n_envs, 1);
    cr_assert_eq(set.n_cases, 3);
    cr_expect_eq(set.n_warnings, 0);
    cr_expect_str_eq(set.envs[0].device_name, "Test GPU");
    cr_expect(set.envs[0].complete);
    cr_expect_float_eq(set.envs[0].bandwidth_gbs, 100.0, 1e-12);
    const kbi_case_result *c = &set.cases[2];
    cr_expect_str_eq(c->id, "good/sum/n=2");
    cr_expect_eq(c->status, KBI_ST_OK);
    cr_expect_eq(set.cases[1].status, KBI_ST_VERIFY_FAILED);
    cr_expect_eq(c->n_samples, 5);
    cr_expect_float_eq(c->samples[0], 3e-3, 1e-15);
    cr_expect_float_eq(c->stats.median, 3e-3 * 1.02, 1e-15); /* computed when absent */
    cr_expect_float_eq(c->flops, 8.0, 0);
    cr_expect(c->has_verify && c->verify_passed);
    cr_expect_eq(c->n_metrics, 1);
    cr_expect_str_eq(c->metrics[0].name, "m");
    cr_expect_eq(c->env, &set.envs[0]);
    cr_expect(strstr(c->source, ":4") != NULL, "%s", c->source);
    kbi_results_free(&set);
}

Test(results, truncated_tail_is_a_warning)
{
    kbi_result_set set = {0};
    char err[KBI_ERR_SIZE];
    FILE *f;
    write_run(0);
    f = fopen(path, "a");
    fputs("{\"schema\":\"kbench-results\",\"version\":1,\"rec", f); /* killed mid-write */
    fclose(f);
    cr_assert_eq(kbi_results_load(&set, path, err), KBI_OK, "%s", err);
    cr_expect_eq(set.n_cases, 3);
    cr_assert_geq(set.n_warnings, 1);
    cr_expect(strstr(set.warnings[0], ":5: truncated last line ignored") != NULL, "%s",
              set.warnings[0]);
    kbi_results_free(&set);
}

Test(results, missing_end_record_warns)
{
    kbi_result_set set = {0};
    char err[KBI_ERR_SIZE];
    write_run(0);
    cr_assert_eq(kbi_results_load(&set, path, err), KBI_OK, "%s", err);
    cr_assert_eq(set.n_warnings, 1);
    cr_expect(strstr(set.warnings[0], "no end record") != NULL, "%s", set.warnings[0]);
    kbi_results_free(&set);
}

static void expect_load_error(const char *content, const char *want_suffix)
{
    kbi_result_set set = {0};
    char err[KBI_ERR_SIZE], want[KBI_ERR_SIZE];
    FILE *f = fopen(path, "w");
    fputs(content, f);
    fclose(f);
    cr_expect_eq(kbi_results_load(&set, path, err), KBI_ERR_INPUT);
    snprintf(want, sizeof want, "%s%s", path, want_suffix);
    cr_expect_str_eq(err, want);
    cr_expect_eq(set.n_cases, 0);
    kbi_results_free(&set);
}

Test(results, bad_inputs_name_file_and_line)
{
    expect_load_error(
        "{\"schema\":\"kbench-results\",\"version\":3,\"record\":\"env\",\"run_id\":\"r\"}\n",
        ":1: results schema version 3, expected 1 to 2 (written by another kbench "
        "version)");
    expect_load_error(
        "{\"schema\":\"kbench-results\",\"version\":0,\"record\":\"env\",\"run_id\":\"r\"}\n",
        ":1: results schema version 0, expected 1 to 2 (written by another kbench "
        "version)");
    expect_load_error("\n{\"hello\":1}\n", ":2: not a kbench results record, expected "
                                           "\"schema\":\"kbench-results\"");
    expect_load_error("{\"schema\":\"kbench-results\",\"version\":1,\"record\":\"case\","
                      "\"run_id\":\"r\",\"id\":\"x\",\"plugin\":\"p\",\"variant\":\"v\","
                      "\"status\":\"fine\"}\n",
                      ":1: case record without a valid \"status\" (ok, verify_failed, skipped, "
                      "error, crashed or timeout)");
    expect_load_error("not json\n{}\n", ":1: not a JSON object ('[' or '{' expected near 'not'), "
                                        "expected one results record per line");
}

Test(results, missing_file)
{
    kbi_result_set set = {0};
    char err[KBI_ERR_SIZE];
    cr_expect_eq(kbi_results_load(&set, "/nonexistent/r.jsonl", err), KBI_ERR_IO);
    cr_expect_str_eq(err, "/nonexistent/r.jsonl: cannot open results file: No such file or "
                          "directory");
}

Test(results, unwritable_path)
{
    kbi_results_writer w;
    char err[KBI_ERR_SIZE];
    cr_expect_eq(kbi_results_open(&w, "/nonexistent/dir/results.jsonl", "r", err), KBI_ERR_IO);
    cr_expect_str_eq(err, "/nonexistent/dir/results.jsonl: cannot create results file: No such "
                          "file or directory");
}

Test(results, full_disk_is_reported)
{
    kbi_results_writer w;
    char err[KBI_ERR_SIZE];
    json_t *o = json_object();
    if (access("/dev/full", W_OK) != 0)
        cr_skip_test("no /dev/full on this machine");
    cr_assert_eq(kbi_results_open(&w, "/dev/full", "r", err), KBI_OK, "%s", err);
    cr_expect_eq(kbi_results_write(&w, "env", o, err), KBI_ERR_IO);
    cr_expect(strstr(err, "/dev/full: cannot write results: No space left on device") != NULL,
              "%s", err);
    kbi_results_close(&w);
    json_decref(o);
}

/* ---- the case record: one struct, written and read back alike ---- */

/* Loads `text` (whole results lines) through the reader. */
static void load_text(kbi_result_set *set, const char *text)
{
    char err[KBI_ERR_SIZE] = "";
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    cr_assert_eq(kbi_results_load(set, path, err), KBI_OK, "%s", err);
}

Test(results, version_1_metrics_read_as_undeclared)
{
    kbi_result_set set = {0};
    load_text(&set, "{\"schema\":\"kbench-results\",\"version\":1,\"record\":\"case\",\"run_id\":"
                    "\"r\",\"id\":\"p/v/shape=2x3\",\"plugin\":\"p\",\"variant\":\"v\",\"status\":"
                    "\"ok\",\"params\":{\"shape\":\"2x3\"},\"samples\":[1e-3],"
                    "\"metrics\":{\"drift\":{\"value\":0.5,\"unit\":\"1\"}}}\n");
    cr_assert_eq(set.n_cases, 1);
    const kbi_case_result *c = &set.cases[0];
    cr_expect_eq(c->version, 1);
    cr_expect_str_eq(json_string_value(json_object_get(c->params, "shape")), "2x3");
    cr_assert_eq(c->n_metrics, 1);
    cr_expect_float_eq(c->metrics[0].value, 0.5, 0);
    cr_expect_str_eq(c->metrics[0].unit, "1");
    cr_expect(isnan(c->metrics[0].uncertainty));
    cr_expect_eq(c->metrics[0].better, KB_BETTER_NONE);
    cr_expect_eq(c->metrics[0].bounds, 0u);
    cr_expect_not(c->metrics[0].declared);
    cr_expect(c->metrics[0].in_bound);
    cr_expect_str_eq(c->timing, "");
    cr_expect(isnan(c->prepare_s));
    kbi_results_free(&set);
}

Test(results, version_2_metrics_are_typed)
{
    kbi_result_set set = {0};
    load_text(&set,
              "{\"schema\":\"kbench-results\",\"version\":2,\"record\":\"case\",\"run_id\":\"r\","
              "\"id\":\"p/v/L=8\",\"plugin\":\"p\",\"variant\":\"v\",\"status\":\"verify_failed\","
              "\"params\":{\"L\":8,\"shape\":[2,3,4]},\"size_param\":\"L\",\"timing\":\"graph\","
              "\"prepare_s\":1.25,\"samples\":[],\"metrics\":{"
              "\"energy_drift\":{\"value\":3e-4,\"uncertainty\":3e-7,\"unit\":\"1\",\"better\":"
              "\"lower\",\"low\":null,\"high\":2e-4,\"declared\":true,\"in_bound\":false},"
              "\"rate\":{\"value\":7,\"uncertainty\":null,\"unit\":\"1/ns\",\"better\":\"higher\","
              "\"low\":1,\"high\":null,\"declared\":true},"
              "\"count\":{\"value\":3,\"uncertainty\":0,\"unit\":\"\",\"better\":\"none\","
              "\"low\":null,\"high\":null,\"declared\":true,\"in_bound\":true}}}\n");
    cr_assert_eq(set.n_cases, 1);
    const kbi_case_result *c = &set.cases[0];
    cr_expect_str_eq(c->size_param, "L");
    cr_expect_str_eq(c->timing, "graph");
    cr_expect_float_eq(c->prepare_s, 1.25, 0);
    cr_expect_eq(json_array_size(json_object_get(c->params, "shape")), 3);
    cr_assert_eq(c->n_metrics, 3);
    const kbi_metric *d = &c->metrics[0], *r = &c->metrics[1], *n = &c->metrics[2];
    cr_expect_str_eq(d->name, "energy_drift");
    cr_expect_float_eq(d->uncertainty, 3e-7, 0);
    cr_expect_eq(d->better, KB_BETTER_LOWER);
    cr_expect_eq(d->bounds, KB_BOUND_HIGH);
    cr_expect_float_eq(d->high, 2e-4, 0);
    cr_expect(d->declared);
    cr_expect_not(d->in_bound);
    cr_expect(isnan(r->uncertainty));
    cr_expect_eq(r->better, KB_BETTER_HIGHER);
    cr_expect_eq(r->bounds, KB_BOUND_LOW);
    cr_expect(r->in_bound, "no in_bound field: judged from the bound (7 >= 1)");
    cr_expect_eq(n->uncertainty, 0.0);
    cr_expect_eq(n->better, KB_BETTER_NONE);
    kbi_results_free(&set);
}

/* A case of every kind, built as the worker builds one. */
static void build_case(kbi_case_result *c, kbi_status st)
{
    static double samples[] = {1e-3, 1.1e-3, 0.9e-3};
    memset(c, 0, sizeof *c);
    c->index = 4;
    c->id = "fx/metrics/L=8,perm=[0,2,1],shape=2x3x4";
    c->plugin = "fx";
    c->variant = "metrics";
    c->target = "host";
    c->baseline = "";
    c->params = json_pack("{s:i, s:[i,i,i], s:[i,i,i], s:f}", "L", 8, "perm", 0, 2, 1, "shape", 2,
                          3, 4, "T", 2.269);
    c->params_text = "L=8,perm=[0,2,1],shape=2x3x4";
    c->size_param = "L";
    c->status = st;
    c->message = st == KBI_ST_OK ? "" : "what happened";
    c->cache = "cold";
    c->time = "2026-12-01T08:00:00Z";
    c->prepare_s = NAN;
    c->wall_s = 0.5;
    if (st == KBI_ST_OK || st == KBI_ST_VERIFY_FAILED) {
        static kbi_metric m[2] = {
            {"drift", "1", 0.1, 0.01, KB_BETTER_LOWER, KB_BOUND_HIGH, 0, 1.0, 1, 1},
            {"count", "", 3, 0, KB_BETTER_NONE, 0, 0, 0, 1, 1},
        };
        c->timing = "host";
        c->batch = 1;
        c->prepare_s = 0.25;
        c->samples = samples;
        c->n_samples = 3;
        c->has_stats = 1;
        kbi_stats_compute(samples, 3, &c->stats);
        c->gflops = 8e-6;
        c->has_counts = 1;
        c->flops = 8;
        c->item_unit = "spins";
        c->items = 64;
        c->items_per_s = 64 / 1e-3; /* rates follow from the counts and the median */
        c->has_verify = 1;
        c->verify_passed = st == KBI_ST_OK;
        c->verify_error = 0.5;
        c->verify_tolerance = 1;
        c->verify_metric = "abs";
        c->metrics = m;
        c->n_metrics = 2;
        c->has_clocks = 1;
        c->clock_start_mhz = 1980;
        c->clock_end_mhz = 1700;
        c->throttle_reasons = 4;
        c->clock_drop = 1;
    }
    if (st == KBI_ST_CRASHED)
        c->sanitizer = json_pack("{s:s, s:i, s:s}", "tool", "memcheck", "errors", 2, "log", "x");
    if (st == KBI_ST_ERROR)
        c->sticky_error = 1;
}

Test(results, case_record_round_trip_for_every_status)
{
    for (int st = 0; st < KBI_ST_COUNT; st++) {
        kbi_case_result built, read;
        json_t *a, *b;
        const char *missing;
        char *ta, *tb;
        build_case(&built, (kbi_status)st);
        a = kbi_case_record_json(&built);
        missing = kbi_case_record_read(&read, a, KBI_RESULTS_VERSION);
        cr_assert_null(missing, "%s: %s", kbi_status_name((kbi_status)st), missing);
        b = kbi_case_record_json(&read);
        ta = json_dumps(a, JSON_SORT_KEYS);
        tb = json_dumps(b, JSON_SORT_KEYS);
        cr_expect(json_equal(a, b), "%s:\n%s\n%s", kbi_status_name((kbi_status)st), ta, tb);
        /* What the struct holds, not just the text. */
        cr_expect_eq(read.status, (kbi_status)st);
        cr_expect_eq(read.n_samples, built.n_samples);
        cr_expect_eq(read.n_metrics, built.n_metrics);
        cr_expect_str_eq(read.size_param, "L");
        cr_expect(json_is_array(json_object_get(json_object_get(a, "params"), "shape")),
                  "dims are written as an array of integers");
        cr_expect(json_is_integer(
            json_array_get(json_object_get(json_object_get(a, "params"), "perm"), 1)));
        if (st == KBI_ST_OK) {
            cr_expect_str_eq(read.timing, "host");
            cr_expect_float_eq(read.prepare_s, 0.25, 0);
            cr_expect_float_eq(read.metrics[0].high, 1.0, 0);
            cr_expect_eq(read.metrics[0].better, KB_BETTER_LOWER);
            cr_expect_eq(read.metrics[1].uncertainty, 0.0);
        } else if (st != KBI_ST_VERIFY_FAILED) {
            cr_expect_eq(json_array_size(json_object_get(a, "samples")), 0);
            cr_expect_null(json_object_get(a, "stats"));
            cr_expect_null(json_object_get(a, "prepare_s"));
        }
        free(ta);
        free(tb);
        json_decref(a);
        json_decref(b);
        kbi_case_result_free(&read);
        json_decref(built.params);
        json_decref(built.sanitizer);
    }
}

Test(results, unknown_uncertainty_and_nan_value_become_null)
{
    kbi_case_result c, back;
    kbi_metric m = {"x", "s", NAN, NAN, KB_BETTER_HIGHER, 0, 0, 0, 1, 1};
    json_t *j, *mj;
    build_case(&c, KBI_ST_SKIPPED);
    c.metrics = &m;
    c.n_metrics = 1;
    j = kbi_case_record_json(&c);
    mj = json_object_get(json_object_get(j, "metrics"), "x");
    cr_assert(json_is_object(mj));
    cr_expect(json_is_null(json_object_get(mj, "value")));
    cr_expect(json_is_null(json_object_get(mj, "uncertainty")));
    cr_expect_str_eq(json_string_value(json_object_get(mj, "better")), "higher");
    cr_assert_null(kbi_case_record_read(&back, j, 2));
    cr_expect(isnan(back.metrics[0].value));
    cr_expect(isnan(back.metrics[0].uncertainty));
    kbi_case_result_free(&back);
    json_decref(j);
    json_decref(c.params);
}

Test(results, written_record_is_read_from_a_file)
{
    kbi_case_result c;
    kbi_results_writer w;
    kbi_result_set set = {0};
    char err[KBI_ERR_SIZE];
    json_t *j;
    build_case(&c, KBI_ST_OK);
    j = kbi_case_record_json(&c);
    cr_assert_eq(kbi_results_open(&w, path, "run1", err), KBI_OK, "%s", err);
    cr_assert_eq(kbi_results_write(&w, "case", j, err), KBI_OK, "%s", err);
    kbi_results_close(&w);
    json_decref(j);
    json_decref(c.params);
    cr_assert_eq(kbi_results_load(&set, path, err), KBI_OK, "%s", err);
    cr_assert_eq(set.n_cases, 1);
    cr_expect_eq(set.cases[0].version, KBI_RESULTS_VERSION);
    cr_expect_str_eq(set.cases[0].run_id, "run1");
    cr_expect_str_eq(set.cases[0].metrics[0].name, "drift");
    kbi_results_free(&set);
}

Test(results, status_of_plugin_codes)
{
    cr_expect_eq(kbi_status_of_code(KB_SKIP), KBI_ST_SKIPPED);
    cr_expect_eq(kbi_status_of_code(KB_ERROR), KBI_ST_ERROR);
    cr_expect_eq(kbi_status_of_code(KB_CUDA_ERROR), KBI_ST_ERROR);
    cr_expect_eq(kbi_status_of_code(KB_BAD_PARAM), KBI_ST_ERROR);
}

/* Writes env (may be NULL) and the case records to path, with an end record. */
static void write_records(json_t *env, json_t **cases, int n)
{
    kbi_results_writer w;
    char err[KBI_ERR_SIZE];
    json_t *e = json_pack("{s:b}", "complete", 1);
    cr_assert_eq(kbi_results_open(&w, path, "run1", err), KBI_OK, "%s", err);
    if (env)
        cr_assert_eq(kbi_results_write(&w, "env", env, err), KBI_OK, "%s", err);
    for (int i = 0; i < n; i++)
        cr_assert_eq(kbi_results_write(&w, "case", cases[i], err), KBI_OK, "%s", err);
    kbi_results_write(&w, "end", e, err);
    json_decref(e);
    kbi_results_close(&w);
}

/* Whether a warning of set contains every one of the given texts. */
static int warned(const kbi_result_set *set, const char *a, const char *b)
{
    for (size_t i = 0; i < set->n_warnings; i++)
        if (strstr(set->warnings[i], a) && (!b || strstr(set->warnings[i], b)))
            return 1;
    return 0;
}

Test(results, samples_overrule_stored_stats)
{
    /* Issue 15, item 4: a median multiplied by 1000, a negative n, an absurd
     * median and made-up rates; the samples say otherwise. */
    kbi_result_set set = {0};
    char err[KBI_ERR_SIZE], where[128];
    json_t *env = json_pack("{s:{s:f, s:f}}", "ceilings", "bandwidth_gbs", 100.0, "peak_gflops",
                            1000.0);
    json_t *cases[3];
    for (int i = 0; i < 3; i++) {
        cases[i] = case_record(i == 0 ? "a" : i == 1 ? "b" : "c", "ok", 1e-3);
        json_object_set_new(cases[i], "stats",
                            json_pack("{s:i, s:f, s:f, s:f}", "n", 5, "median", 1.02e-3, "min",
                                      1e-3, "max", 1.04e-3));
        json_object_set_new(cases[i], "rates", json_pack("{s:f, s:f}", "gflops", 1e6,
                                                         "frac_bandwidth", 123.0));
    }
    json_object_set_new(json_object_get(cases[0], "stats"), "median", json_real(1.02));
    json_object_set_new(json_object_get(cases[1], "stats"), "n", json_integer(-5));
    json_object_set_new(json_object_get(cases[2], "stats"), "median", json_real(1e308));
    write_records(env, cases, 3);
    json_decref(env);
    for (int i = 0; i < 3; i++)
        json_decref(cases[i]);
    cr_assert_eq(kbi_results_load(&set, path, err), KBI_OK, "%s", err);
    cr_assert_eq(set.n_cases, 3);
    for (int i = 0; i < 3; i++) {
        const kbi_case_result *c = &set.cases[i];
        cr_expect_eq(c->stats.n, 5, "%s: n = %zu", c->id, c->stats.n);
        cr_expect_float_eq(c->stats.median, 1.02e-3, 1e-12, "%s: median %g", c->id,
                           c->stats.median);
        cr_expect_float_eq(c->gflops, 8.0 / 1.02e-3 / 1e9, 1e-12, "%s: gflops %g", c->id,
                           c->gflops);
        cr_expect_float_eq(c->frac_bandwidth, 64.0 / 1.02e-3 / 1e9 / 100.0, 1e-12,
                           "%s: frac_bandwidth %g", c->id, c->frac_bandwidth);
    }
    /* Lines 2, 3, 4 (the env record is line 1), each named with the field. */
    snprintf(where, sizeof where, "%s:2:", path);
    cr_expect(warned(&set, where, "stats.median 1.02 "), "no warning for %s", where);
    snprintf(where, sizeof where, "%s:3:", path);
    cr_expect(warned(&set, where, "stats.n -5 "), "no warning for %s", where);
    snprintf(where, sizeof where, "%s:4:", path);
    cr_expect(warned(&set, where, "stats.median 1e+308"), "no warning for %s", where);
    kbi_results_free(&set);
}

Test(results, stats_that_agree_raise_no_warning)
{
    kbi_case_result c;
    kbi_result_set set = {0};
    char err[KBI_ERR_SIZE];
    json_t *rec;
    build_case(&c, KBI_ST_OK);
    rec = kbi_case_record_json(&c);
    json_decref(c.params);
    write_records(NULL, &rec, 1);
    json_decref(rec);
    cr_assert_eq(kbi_results_load(&set, path, err), KBI_OK, "%s", err);
    for (size_t i = 0; i < set.n_warnings; i++)
        cr_expect_null(strstr(set.warnings[i], "stats"), "%s", set.warnings[i]);
    kbi_results_free(&set);
}

Test(results, stats_without_samples_drop_absurd_values)
{
    kbi_result_set set = {0};
    char err[KBI_ERR_SIZE];
    json_t *rec = case_record("a", "ok", 1e-3);
    json_object_del(rec, "samples");
    json_object_set_new(rec, "stats", json_pack("{s:i, s:f, s:f}", "n", -5, "median", -1.0,
                                                "max", 1e308));
    write_records(NULL, &rec, 1);
    json_decref(rec);
    cr_assert_eq(kbi_results_load(&set, path, err), KBI_OK, "%s", err);
    cr_expect_eq(set.cases[0].stats.n, 0);
    cr_expect_eq(set.cases[0].stats.median, 0.0);
    kbi_results_free(&set);
}

Test(results, rounds_give_round_medians)
{
    kbi_result_set set = {0};
    char err[KBI_ERR_SIZE];
    json_t *good = case_record("a", "ok", 1e-3), *bad = case_record("b", "ok", 1e-3);
    json_t *recs[2] = {good, bad};
    /* Samples are t * (1, 1.01, 1.02, 1.03, 1.04): rounds of 2 and 3. */
    json_object_set_new(good, "rounds", json_pack("[i, i]", 2, 3));
    json_object_set_new(bad, "rounds", json_pack("[i, i]", 2, 4));
    write_records(NULL, recs, 2);
    json_decref(good);
    json_decref(bad);
    cr_assert_eq(kbi_results_load(&set, path, err), KBI_OK, "%s", err);
    cr_assert_eq(set.cases[0].n_rounds, 2);
    cr_expect_eq(set.cases[0].rounds[1], 3);
    cr_expect_float_eq(set.cases[0].round_medians[0], 1.005e-3, 1e-12);
    cr_expect_float_eq(set.cases[0].round_medians[1], 1.03e-3, 1e-12);
    cr_expect_eq(set.cases[1].n_rounds, 0, "rounds that do not add up are ignored");
    cr_expect(warned(&set, "rounds", "does not add up"));
    /* They are written back as read. */
    json_t *j = kbi_case_record_json(&set.cases[0]);
    json_t *want = json_pack("[i, i]", 2, 3);
    cr_expect(json_equal(json_object_get(j, "rounds"), want));
    json_decref(want);
    json_decref(j);
    kbi_results_free(&set);
}

Test(results, sanitized_runs_are_not_timings)
{
    kbi_result_set set = {0};
    char err[KBI_ERR_SIZE];
    json_t *env = json_pack("{s:s}", "sanitize", "racecheck");
    json_t *marked = case_record("a", "ok", 1e-3), *plain = case_record("b", "ok", 1e-3);
    json_t *recs[2] = {marked, plain};
    json_object_set_new(marked, "sanitize", json_string("memcheck"));
    /* A case record says it itself ... */
    write_records(NULL, recs, 2);
    cr_assert_eq(kbi_results_load(&set, path, err), KBI_OK, "%s", err);
    cr_expect_str_eq(set.cases[0].sanitize, "memcheck");
    cr_expect(kbi_case_not_timing(&set.cases[0]));
    cr_expect_not(kbi_case_not_timing(&set.cases[1]));
    json_t *j = kbi_case_record_json(&set.cases[0]);
    cr_expect_str_eq(json_string_value(json_object_get(j, "sanitize")), "memcheck");
    json_decref(j);
    kbi_results_free(&set);
    /* ... and an older file's env record says it for all its cases. */
    write_records(env, recs, 2);
    cr_assert_eq(kbi_results_load(&set, path, err), KBI_OK, "%s", err);
    cr_expect(kbi_case_not_timing(&set.cases[1]));
    kbi_results_free(&set);
    json_decref(env);
    json_decref(marked);
    json_decref(plain);
}
