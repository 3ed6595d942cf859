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

/* Case good/sum/n=N: five samples from t up. */
static json_t *case_record(int n, const char *status, double t)
{
    char id[32], text[16];
    json_t *c;
    snprintf(text, sizeof text, "n=%d", n);
    snprintf(id, sizeof id, "good/sum/%s", text);
    c = json_pack("{s:s, s:s, s:s, s:s, s:{s:i}, s:s, s:s, s:s}", "id", id, "plugin", "good",
                  "variant", "sum", "target", "host", "params", "n", n, "params_text", text,
                  "status", status, "message", "");
    json_t *s = json_array();
    for (int i = 0; i < 5; i++)
        json_array_append_new(s, json_real(t * (1.0 + 0.01 * i)));
    json_object_set_new(c, "samples", s);
    json_object_set_new(c, "counts",
                        json_pack("{s:f, s:f, s:f}", "flops", 8.0, "bytes", 64.0, "items", 8.0));
    json_object_set_new(c, "verify",
                        json_pack("{s:b, s:f, s:f, s:s}", "passed", 1, "error", 0.0, "tolerance",
                                  1e-9, "metric", "abs"));
    json_object_set_new(c, "metrics", json_pack("{s:{s:f, s:s}}", "m", "value", 2.5, "unit", "x"));
    return c;
}

static void write_run(int with_end)
{
    kbi_results_writer w;
    char err[KBI_ERR_SIZE];
    json_t *env =
        json_pack("{s:{s:s}, s:s, s:{s:f, s:f}}", "device", "name", "Test GPU", "git_revision",
                  "abc", "ceilings", "bandwidth_gbs", 100.0, "peak_gflops", 1000.0);
    cr_assert_eq(kbi_results_open(&w, path, "run1", err), KBI_OK, "%s", err);
    cr_assert_eq(kbi_results_write(&w, "env", env, err), KBI_OK);
    json_decref(env);
    for (int i = 0; i < 3; i++) {
        json_t *c = case_record(i, i == 1 ? "verify_failed" : "ok", 1e-3 * (i + 1));
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
    /* Written before kbench recorded them: no headline, no roof, no TF32 ceiling. */
    cr_expect_str_eq(c->headline, "");
    cr_expect_str_eq(c->roof, "");
    cr_expect_eq(set.envs[0].tf32_gflops, 0.0);
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
        "{\"schema\":\"kbench-results\",\"version\":6,\"record\":\"env\",\"run_id\":\"r\"}\n",
        ":1: results schema version 6, expected 1 to 5 (written by another kbench "
        "version)");
    expect_load_error(
        "{\"schema\":\"kbench-results\",\"version\":0,\"record\":\"env\",\"run_id\":\"r\"}\n",
        ":1: results schema version 0, expected 1 to 5 (written by another kbench "
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
    cr_expect(strstr(err, "/dev/full: cannot write results: No space left on device") != NULL, "%s",
              err);
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
              "\"id\":\"p/v/"
              "L=8,shape=2x3x4\",\"plugin\":\"p\",\"variant\":\"v\",\"status\":\"verify_failed\","
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
    c->id = "fx/metrics/L=8,perm=[0,2,1],shape=2x3x4,T=2.269";
    c->plugin = "fx";
    c->variant = "metrics";
    c->target = "host";
    c->baseline = "";
    c->params = json_pack("{s:i, s:[i,i,i], s:[i,i,i], s:f}", "L", 8, "perm", 0, 2, 1, "shape", 2,
                          3, 4, "T", 2.269);
    c->params_text = "L=8,perm=[0,2,1],shape=2x3x4,T=2.269";
    c->size_param = "L";
    c->headline = "time_per_item";
    c->roof = "tf32x3";
    c->status = st;
    c->message = st == KBI_ST_OK ? "" : "what happened";
    c->cache = "cold";
    c->time = "2026-12-01T08:00:00Z";
    c->prepare_s = NAN;
    c->wall_s = 0.5;
    if (st == KBI_ST_OK || st == KBI_ST_VERIFY_FAILED) {
        static kbi_metric m[2] = {
            {"drift", "1", 0.1, 0.01, KB_BETTER_LOWER, KB_BOUND_HIGH, 0, 1.0, 1, 1, 0, 0, 0, 0, 0},
            {"count", "", 3, 0, KB_BETTER_NONE, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0},
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
        cr_expect_str_eq(read.headline, "time_per_item");
        cr_expect_str_eq(read.roof, "tf32x3");
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
    kbi_metric m = {"x", "s", NAN, NAN, KB_BETTER_HIGHER, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0};
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
    json_t *env =
        json_pack("{s:{s:f, s:f}}", "ceilings", "bandwidth_gbs", 100.0, "peak_gflops", 1000.0);
    json_t *cases[3];
    for (int i = 0; i < 3; i++) {
        cases[i] = case_record(i, "ok", 1e-3);
        json_object_set_new(cases[i], "stats",
                            json_pack("{s:i, s:f, s:f, s:f}", "n", 5, "median", 1.02e-3, "min",
                                      1e-3, "max", 1.04e-3));
        json_object_set_new(cases[i], "rates",
                            json_pack("{s:f, s:f}", "gflops", 1e6, "frac_bandwidth", 123.0));
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

/* A case built as the worker builds one (with these samples, if any), written and read back,
 * raises no warning about its stats. */
static void expect_stats_agree(double *samples, size_t n)
{
    kbi_case_result c;
    kbi_result_set set = {0};
    char err[KBI_ERR_SIZE];
    json_t *rec;
    build_case(&c, KBI_ST_OK);
    if (samples) {
        c.samples = samples;
        c.n_samples = n;
        kbi_stats_compute(samples, n, &c.stats);
    }
    rec = kbi_case_record_json(&c);
    json_decref(c.params);
    write_records(NULL, &rec, 1);
    json_decref(rec);
    cr_assert_eq(kbi_results_load(&set, path, err), KBI_OK, "%s", err);
    for (size_t i = 0; i < set.n_warnings; i++)
        cr_expect_null(strstr(set.warnings[i], "stats"), "%s", set.warnings[i]);
    kbi_results_free(&set);
}

Test(results, stats_that_agree_raise_no_warning)
{
    expect_stats_agree(NULL, 0);
}

Test(results, stats_without_samples_drop_absurd_values)
{
    kbi_result_set set = {0};
    char err[KBI_ERR_SIZE];
    json_t *rec = case_record(0, "verify_failed", 1e-3); /* ok without samples is refused */
    json_object_del(rec, "samples");
    json_object_set_new(rec, "stats",
                        json_pack("{s:i, s:f, s:f}", "n", -5, "median", -1.0, "max", 1e308));
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
    json_t *good = case_record(0, "ok", 1e-3), *bad = case_record(1, "ok", 1e-3);
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
    json_t *marked = case_record(0, "ok", 1e-3), *plain = case_record(1, "ok", 1e-3);
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

/* ---- round records: every finished round on disk as it ends ---- */

/* One results line: rec (taken over) as a record of kind `record`, version 3, run "run1". */
static void put_line(FILE *f, const char *record, json_t *rec)
{
    char *text;
    json_object_set_new(rec, "schema", json_string(KBI_RESULTS_SCHEMA));
    if (!json_object_get(rec, "version")) /* a test may write an older version's record */
        json_object_set_new(rec, "version", json_integer(KBI_RESULTS_VERSION));
    json_object_set_new(rec, "record", json_string(record));
    json_object_set_new(rec, "run_id", json_string("run1"));
    text = json_dumps(rec, JSON_COMPACT);
    fprintf(f, "%s\n", text);
    free(text);
    json_decref(rec);
}

/* Round `round` of case good/sum/n=N: five samples from t up. */
static json_t *round_record(int n, int round, const char *status, double t)
{
    json_t *r = case_record(n, status, t);
    json_object_set_new(r, "round", json_integer(round));
    return r;
}

static FILE *open_run(int rounds)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    put_line(f, "env", json_pack("{s:{s:i}}", "run", "rounds", rounds));
    return f;
}

Test(results, round_records_join_into_one_case_per_round_read)
{
    /* A run of 5 rounds killed in its third: cases 0 and 1 have two rounds, case 2 one. */
    kbi_result_set set = {0};
    char err[KBI_ERR_SIZE];
    FILE *f = open_run(5);
    for (int r = 1; r <= 2; r++)
        for (int n = 0; n < 3; n++)
            if (r == 1 || n < 2)
                put_line(f, "round", round_record(n, r, "ok", 1e-3 * r));
    fclose(f);
    cr_assert_eq(kbi_results_load(&set, path, err), KBI_OK, "%s", err);
    cr_assert_eq(set.n_cases, 3);
    for (int n = 0; n < 2; n++) {
        const kbi_case_result *c = &set.cases[n];
        cr_expect_eq(c->rounds_read, 2);
        cr_expect_eq(c->rounds_planned, 5);
        cr_expect_eq(c->n_samples, 10, "every round's samples");
        cr_assert_eq(c->n_rounds, 2);
        cr_expect_eq(c->rounds[0], 5);
        cr_expect_float_eq(c->round_medians[0], 1.02e-3, 1e-12);
        cr_expect_float_eq(c->round_medians[1], 2.04e-3, 1e-12);
        cr_expect_eq(c->stats.n, 10, "the statistics are those of every round");
        cr_expect(c->gflops > 0);
    }
    cr_expect_eq(set.cases[2].rounds_read, 1);
    cr_expect_eq(set.cases[2].n_rounds, 0, "one round is no rounds to judge by");
    cr_expect_eq(set.cases[2].n_samples, 5);
    cr_expect(warned(&set, "fewer rounds than its 5",
                     "2 cases with 2 of 5 rounds, 1 case with 1 of "
                     "5 rounds"),
              "%s", set.n_warnings ? set.warnings[0] : "no warning");
    cr_expect(warned(&set, "no end record", NULL));
    kbi_results_free(&set);
}

Test(results, a_metric_read_from_rounds_is_their_mean_with_their_spread)
{
    /* Issue 23: permute's copy_ratio, timed once per worker, read 0.994, 1.014 and 1.011 in
     * one run's three rounds (each +-0.001): judged from round 1 alone, an unchanged build
     * read 2.3% worse at 19 combined uncertainties. */
    static const double value[3] = {0.994, 1.014, 1.011}, u[3] = {0.0006, 0.0007, 0.0018};
    kbi_result_set set = {0};
    char err[KBI_ERR_SIZE];
    double mean = (value[0] + value[1] + value[2]) / 3, ss = 0;
    FILE *f = open_run(3);
    for (int r = 0; r < 3; r++) {
        json_t *rec = round_record(0, r + 1, "ok", 1e-3);
        json_object_set_new(rec, "metrics",
                            json_pack("{s:{s:f, s:f, s:s, s:s, s:b}, s:{s:f, s:f, s:s, s:s, s:b}}",
                                      "copy_ratio", "value", value[r], "uncertainty", u[r], "unit",
                                      "1", "better", "lower", "declared", 1, "launches", "value",
                                      1.0, "uncertainty", 0.0, "unit", "1", "better", "none",
                                      "declared", 1));
        put_line(f, "round", rec);
    }
    fclose(f);
    for (int r = 0; r < 3; r++)
        ss += (value[r] - mean) * (value[r] - mean);
    cr_assert_eq(kbi_results_load(&set, path, err), KBI_OK, "%s", err);
    cr_assert_eq(set.n_cases, 1);
    for (size_t i = 0; i < set.cases[0].n_metrics; i++) {
        const kbi_metric *m = &set.cases[0].metrics[i];
        cr_expect_eq(m->rounds, 3, "%s", m->name);
        if (strcmp(m->name, "copy_ratio") == 0) {
            cr_expect_float_eq(m->value, mean, 1e-12, "the mean of the rounds: %g", m->value);
            cr_expect_float_eq(m->uncertainty, sqrt(ss / 2 / 3), 1e-12,
                               "the rounds' standard error, above their own: %g", m->uncertainty);
        } else {
            cr_expect_eq(m->value, 1.0);
            cr_expect_eq(m->uncertainty, 0.0, "an exact value stays exact");
        }
    }
    cr_expect_eq(set.cases[0].n_metrics, 2);
    kbi_results_free(&set);
}

Test(results, a_failed_round_ends_the_case_with_its_record)
{
    kbi_result_set set = {0};
    char err[KBI_ERR_SIZE];
    json_t *e = json_pack("{s:b, s:i}", "complete", 1, "cases", 1);
    FILE *f = open_run(3);
    put_line(f, "round", round_record(0, 1, "ok", 1e-3));
    put_line(f, "round", round_record(0, 2, "verify_failed", 1e-3));
    put_line(f, "end", e);
    fclose(f);
    cr_assert_eq(kbi_results_load(&set, path, err), KBI_OK, "%s", err);
    cr_assert_eq(set.n_cases, 1);
    cr_expect_eq(set.cases[0].status, KBI_ST_VERIFY_FAILED);
    cr_expect(strncmp(set.cases[0].message, "round 2: ", 9) == 0, "%s", set.cases[0].message);
    cr_expect_not(warned(&set, "fewer rounds", NULL), "a failed case is not a cut-off one");
    kbi_results_free(&set);
}

/* Loads the file; it must be refused with FILE:LINE and the text. */
static void expect_refused(int line, const char *text)
{
    kbi_result_set set = {0};
    char err[KBI_ERR_SIZE], where[128];
    cr_expect_eq(kbi_results_load(&set, path, err), KBI_ERR_INPUT, "accepted; wanted %s", text);
    snprintf(where, sizeof where, "%s:%d: ", path, line);
    cr_expect(strncmp(err, where, strlen(where)) == 0 && strstr(err, text), "%s\nwanted %s%s", err,
              where, text);
    cr_expect_eq(set.n_cases, 0);
    kbi_results_free(&set);
}

Test(results, rounds_out_of_order_are_refused)
{
    FILE *f = open_run(3);
    put_line(f, "round", round_record(0, 2, "ok", 1e-3));
    fclose(f);
    expect_refused(2, "round 2 of case good/sum/n=0 comes first, expected round 1");
    f = open_run(3);
    put_line(f, "round", round_record(0, 1, "ok", 1e-3));
    put_line(f, "round", round_record(0, 1, "ok", 1e-3));
    fclose(f);
    expect_refused(3, "round 1 of case good/sum/n=0 follows its round 1, expected round 2");
    f = open_run(3);
    put_line(f, "round", round_record(0, 1, "error", 1e-3));
    put_line(f, "round", round_record(0, 2, "ok", 1e-3));
    fclose(f);
    expect_refused(3, "after its round 1 ended it (error)");
    f = open_run(3);
    put_line(f, "round", case_record(0, "ok", 1e-3));
    fclose(f);
    expect_refused(2, "round record without a valid \"round\"");
}

/* ---- what cannot be a measurement is refused ---- */

/* A file of one case record, rec (taken over), after an env record. */
static void write_one(json_t *rec)
{
    FILE *f = open_run(1);
    put_line(f, "case", rec);
    fclose(f);
}

Test(results, ok_without_a_measurement_is_refused)
{
    json_t *r = case_record(0, "ok", 1e-3);
    json_object_set_new(r, "samples", json_array());
    write_one(r);
    expect_refused(2, "case good/sum/n=0 cannot be a measurement: status ok with no samples");
    r = case_record(0, "ok", 1e-3);
    json_object_set_new(r, "samples", json_pack("[f, f, f]", 0.0, 0.0, 0.0));
    write_one(r);
    expect_refused(2, "status ok with only zero samples");
    r = case_record(0, "ok", 1e-3);
    json_object_del(r, "samples");
    json_object_set_new(r, "stats", json_pack("{s:i, s:f}", "n", 5, "median", 1e-3));
    write_one(r);
    expect_refused(2, "status ok with no samples");
}

Test(results, negative_samples_are_refused)
{
    json_t *r = case_record(0, "ok", 1e-3);
    json_array_set_new(json_object_get(r, "samples"), 3, json_real(-2e-3));
    write_one(r);
    expect_refused(2, "sample 4 is -0.002 s, expected a time of zero or more");
}

Test(results, counts_must_be_numbers_of_zero_or_more)
{
    json_t *r = case_record(0, "ok", 1e-3);
    json_object_set_new(json_object_get(r, "counts"), "bytes", json_string("lots"));
    write_one(r);
    expect_refused(2, "counts.bytes is \"lots\", expected a number of zero or more (or null)");
    r = case_record(0, "ok", 1e-3);
    json_object_set_new(json_object_get(r, "counts"), "flops", json_real(-8));
    write_one(r);
    expect_refused(2, "counts.flops is -8.0, expected a number");
    /* null: not known (a count that was not finite), accepted */
    r = case_record(0, "ok", 1e-3);
    json_object_set_new(json_object_get(r, "counts"), "flops", json_null());
    write_one(r);
    {
        kbi_result_set set = {0};
        char err[KBI_ERR_SIZE];
        cr_expect_eq(kbi_results_load(&set, path, err), KBI_OK, "%s", err);
        kbi_results_free(&set);
    }
}

Test(results, an_id_that_is_not_its_plugin_variant_and_params_is_refused)
{
    json_t *r = case_record(0, "ok", 1e-3);
    json_object_set_new(r, "id", json_string("good/other/n=0"));
    write_one(r);
    expect_refused(2, "id \"good/other/n=0\" is not plugin/variant \"good/sum\"");
    r = case_record(0, "ok", 1e-3);
    json_object_set_new(r, "id", json_string("good/sum/n=1"));
    json_object_set_new(r, "params_text", json_string("n=1"));
    write_one(r);
    expect_refused(2, "params_text \"n=1\" says n=1, its params hold another value");
    r = case_record(0, "ok", 1e-3);
    json_object_set_new(r, "params_text", json_string("n=0,m=2"));
    write_one(r);
    expect_refused(2, "params_text \"n=0,m=2\" says m=2, its params do not name it");
    r = case_record(0, "ok", 1e-3);
    json_object_set_new(json_object_get(r, "params"), "m", json_integer(2));
    write_one(r);
    expect_refused(2, "params_text \"n=0\" does not name each of its 2 params once");
    /* From version 4 the id names some of params_text's entries, never another one. */
    r = case_record(0, "ok", 1e-3);
    json_object_set_new(r, "id", json_string("good/sum/n=1"));
    write_one(r);
    expect_refused(2, "id \"good/sum/n=1\" names what its params_text \"n=0\" does not");
    r = case_record(0, "ok", 1e-3);
    json_object_set_new(r, "id", json_string("good/sum/n=0,n=0"));
    write_one(r);
    expect_refused(2, "id \"good/sum/n=0,n=0\" names what its params_text");
    /* Every way a value is written matches: dims and lists as arrays, reals to 10 digits. */
    r = case_record(0, "ok", 1e-3);
    json_object_set_new(r, "id",
                        json_string("good/sum/n=0,shape=2x3x4,perm=[0,2,1],T=0.1234567890123"));
    json_object_set_new(r, "params_text",
                        json_string("n=0,shape=2x3x4,perm=[0,2,1],T=0.1234567890123"));
    json_object_set_new(r, "params",
                        json_pack("{s:i, s:[i,i,i], s:[i,i,i], s:f}", "n", 0, "shape", 2, 3, 4,
                                  "perm", 0, 2, 1, "T", 0.1234567890));
    write_one(r);
    {
        kbi_result_set set = {0};
        char err[KBI_ERR_SIZE];
        cr_expect_eq(kbi_results_load(&set, path, err), KBI_OK, "%s", err);
        kbi_results_free(&set);
    }
}

/* Version 4: an id that leaves out a parameter (a knob at its default) is read, with the full
 * id (every parameter) beside it; up to version 3 an id named every parameter. */
Test(results, an_id_names_the_problem_and_the_full_id_every_parameter)
{
    kbi_result_set set = {0};
    char err[KBI_ERR_SIZE];
    json_t *r = case_record(0, "ok", 1e-3);
    json_object_set_new(json_object_get(r, "params"), "m", json_integer(2));
    json_object_set_new(r, "params_text", json_string("n=0,m=2"));
    write_one(r);
    cr_assert_eq(kbi_results_load(&set, path, err), KBI_OK, "%s", err);
    cr_expect_str_eq(set.cases[0].id, "good/sum/n=0");
    cr_expect_str_eq(kbi_case_full_id(&set.cases[0]), "good/sum/n=0,m=2");
    kbi_results_free(&set);
    r = case_record(0, "ok", 1e-3);
    json_object_set_new(json_object_get(r, "params"), "m", json_integer(2));
    json_object_set_new(r, "params_text", json_string("n=0,m=2"));
    json_object_set_new(r, "version", json_integer(3));
    write_one(r);
    expect_refused(2, "id \"good/sum/n=0\" does not end in its params_text \"n=0,m=2\"");
    r = case_record(0, "ok", 1e-3);
    json_object_set_new(json_object_get(r, "params"), "m", json_integer(2));
    json_object_set_new(r, "version", json_integer(3));
    write_one(r);
    expect_refused(2, "id \"good/sum/n=0\" does not name each of its 2 params once");
    r = case_record(0, "ok", 1e-3);
    json_object_set_new(r, "version", json_integer(3));
    write_one(r);
    cr_assert_eq(kbi_results_load(&set, path, err), KBI_OK, "%s", err);
    cr_expect_str_eq(kbi_case_full_id(&set.cases[0]), "good/sum/n=0");
    kbi_results_free(&set);
}

Test(results, an_end_record_must_count_the_cases_the_file_holds)
{
    FILE *f = open_run(1);
    for (int n = 0; n < 8; n++)
        put_line(f, "case", case_record(n, "ok", 1e-3));
    put_line(f, "end", json_pack("{s:b, s:i}", "complete", 1, "cases", 999));
    fclose(f);
    expect_refused(10, "the end record counts 999 cases of run run1, the file holds 8");
    f = open_run(1);
    for (int n = 0; n < 8; n++)
        put_line(f, "case", case_record(n, "ok", 1e-3));
    put_line(f, "end", json_pack("{s:b, s:i}", "complete", 1, "cases", 8));
    fclose(f);
    {
        kbi_result_set set = {0};
        char err[KBI_ERR_SIZE];
        cr_expect_eq(kbi_results_load(&set, path, err), KBI_OK, "%s", err);
        cr_expect_eq(set.n_cases, 8);
        kbi_results_free(&set);
    }
}

Test(results, a_pass_over_the_tolerance_reads_as_failed)
{
    kbi_result_set set = {0};
    char err[KBI_ERR_SIZE];
    json_t *r = case_record(0, "ok", 1e-3);
    json_object_set_new(r, "verify",
                        json_pack("{s:b, s:f, s:f, s:s}", "passed", 1, "error", 10.0, "tolerance",
                                  1.0, "metric", "abs"));
    write_one(r);
    cr_assert_eq(kbi_results_load(&set, path, err), KBI_OK, "%s", err);
    cr_expect_eq(set.cases[0].status, KBI_ST_VERIFY_FAILED);
    cr_expect_not(set.cases[0].verify_passed);
    cr_expect(strstr(set.cases[0].message, "error 10 exceeds its tolerance 1"), "%s",
              set.cases[0].message);
    cr_expect(
        warned(&set, ":2: case good/sum/n=0: the plugin said passed", "read as verify_failed"));
    kbi_results_free(&set);
}

Test(results, the_verdict_is_judged_from_its_figures)
{
    char note[224];
    cr_expect_not(kbi_verdict_passed(1, 10, 1, note, sizeof note));
    cr_expect(strstr(note, "error 10 exceeds its tolerance 1"), "%s", note);
    cr_expect(kbi_verdict_passed(1, 1, 1, note, sizeof note));
    cr_expect_str_eq(note, "");
    cr_expect(kbi_verdict_passed(1, 5, NAN, note, sizeof note), "no tolerance: the plugin's word");
    cr_expect(kbi_verdict_passed(1, NAN, 1, note, sizeof note), "an error that is no number");
    cr_expect_not(kbi_verdict_passed(0, 0, 1, note, sizeof note),
                  "a plugin's failure is never turned into a pass");
}

/* ---- warnings stay readable ---- */

Test(results, stats_equal_within_rounding_raise_no_warning)
{
    /* Samples of full precision whose spread is tiny: the noise computed from their 10-digit
     * copies differs in its 6th digit from the stored one, which is no disagreement. */
    double samples[40];
    for (int i = 0; i < 40; i++)
        samples[i] = 2.170523456789e-3 * (1 + 2e-5 * sin(i * 1.7));
    expect_stats_agree(samples, 40);
}

Test(results, the_committed_sgemm_reference_reads_without_a_warning)
{
    kbi_result_set set = {0};
    char file[4096], err[KBI_ERR_SIZE];
    snprintf(file, sizeof file, "%s/baselines/h200/sgemm/results.jsonl", KBENCH_TEST_SOURCE_DIR);
    cr_assert_eq(kbi_results_load(&set, file, err), KBI_OK, "%s", err);
    cr_expect_eq(set.n_warnings, 0, "first: %s", set.n_warnings ? set.warnings[0] : "");
    kbi_results_free(&set);
}

Test(results, repeated_warnings_are_summarised)
{
    kbi_result_set set = {0};
    char err[KBI_ERR_SIZE];
    FILE *f = open_run(1);
    for (int n = 0; n < 2000; n++) {
        json_t *r = case_record(n, "ok", 1e-3);
        json_object_set_new(r, "stats", json_pack("{s:i, s:f}", "n", 5, "median", 1.0));
        put_line(f, "case", r);
    }
    put_line(f, "end", json_pack("{s:b, s:i}", "complete", 1, "cases", 2000));
    fclose(f);
    cr_assert_eq(kbi_results_load(&set, path, err), KBI_OK, "%s", err);
    cr_expect_eq(set.n_warnings, KBI_WARNINGS_PER_KIND + 1, "%zu warnings", set.n_warnings);
    cr_expect(strstr(set.warnings[0], ":2: stored stats.median 1 disagrees"), "%s",
              set.warnings[0]);
    cr_expect(warned(&set, "\u2026 and 1,995 more like it (stored statistics", NULL), "%s",
              set.warnings[set.n_warnings - 1]);
    kbi_results_free(&set);
}

/* ---- energy (version 4) ---- */

Test(results, energy_round_trip_and_work_per_joule)
{
    kbi_case_result a, b;
    json_t *rec = case_record(4, "ok", 1e-3), *back;
    cr_assert_null(kbi_case_record_read(&a, rec, KBI_RESULTS_VERSION));
    a.has_energy = 1;
    a.energy = (kbi_case_energy){.measured = 1,
                                 .j_per_run = 0.5,
                                 .j_per_run_u = 0.01,
                                 .watts = 500,
                                 .watts_u = 5,
                                 .run_s = 1e-3,
                                 .window_s = 2.05,
                                 .period_s = 0.1,
                                 .extra_s = 6.5,
                                 .windows = 3,
                                 .runs = 6000,
                                 .gflop_per_j = 123 /* not believed: derived on reading */};
    back = kbi_case_record_json(&a);
    cr_assert_null(kbi_case_record_read(&b, back, KBI_RESULTS_VERSION));
    cr_assert(b.has_energy && b.energy.measured);
    cr_expect_eq(b.energy.j_per_run, 0.5);
    cr_expect_eq(b.energy.j_per_run_u, 0.01);
    cr_expect_eq(b.energy.watts, 500);
    cr_expect_eq(b.energy.windows, 3);
    cr_expect_eq(b.energy.runs, 6000);
    cr_expect_eq(b.energy.extra_s, 6.5);
    /* 8 flops and 64 bytes a run over 0.5 J. */
    cr_expect(fabs(b.energy.gflop_per_j - 16e-9) < 1e-18, "%g", b.energy.gflop_per_j);
    cr_expect(fabs(b.energy.gb_per_j - 128e-9) < 1e-18, "%g", b.energy.gb_per_j);
    kbi_case_result_free(&b);
    json_decref(back);
    /* Not measured: null figures and the reason. */
    a.energy = (kbi_case_energy){.measured = 0, .j_per_run = NAN, .extra_s = NAN};
    snprintf(a.energy.why, sizeof a.energy.why, "this GPU has no energy counter");
    back = kbi_case_record_json(&a);
    cr_expect(json_is_null(json_object_get(json_object_get(back, "energy"), "j_per_run")));
    cr_assert_null(kbi_case_record_read(&b, back, KBI_RESULTS_VERSION));
    cr_expect(b.has_energy && !b.energy.measured);
    cr_expect_str_eq(b.energy.why, "this GPU has no energy counter");
    cr_expect_eq(b.energy.gflop_per_j, 0);
    kbi_case_result_free(&b);
    json_decref(back);
    /* Without energy (energy off, a host case, versions 1 to 3): no field at all. */
    a.has_energy = 0;
    back = kbi_case_record_json(&a);
    cr_expect_null(json_object_get(back, "energy"));
    json_decref(back);
    kbi_case_result_free(&a);
    json_decref(rec);
}

Test(results, energy_of_rounds_is_their_mean)
{
    kbi_result_set set = {0};
    char err[KBI_ERR_SIZE];
    FILE *f = open_run(2);
    for (int r = 1; r <= 2; r++) {
        json_t *rec = round_record(1, r, "ok", 1e-3);
        json_object_set_new(rec, "energy",
                            json_pack("{s:f, s:f, s:f, s:f, s:i, s:i}", "j_per_run",
                                      r == 1 ? 1.0 : 2.0, "j_per_run_u", 0.1, "watts",
                                      r == 1 ? 400.0 : 600.0, "watts_u", 1.0, "windows", 3, "runs",
                                      100));
        put_line(f, "round", rec);
    }
    fclose(f);
    cr_assert_eq(kbi_results_load(&set, path, err), KBI_OK, "%s", err);
    cr_assert_eq(set.n_cases, 1);
    cr_assert(set.cases[0].has_energy && set.cases[0].energy.measured);
    cr_expect(fabs(set.cases[0].energy.j_per_run - 1.5) < 1e-12);
    cr_expect(fabs(set.cases[0].energy.watts - 500) < 1e-9);
    cr_expect(fabs(set.cases[0].energy.j_per_run_u - 0.1 / sqrt(2)) < 1e-12, "%g",
              set.cases[0].energy.j_per_run_u);
    cr_expect_eq(set.cases[0].energy.windows, 6);
    cr_expect_eq(set.cases[0].energy.runs, 200);
    kbi_results_free(&set);
}

/* ---- instrumented (version 5) ---- */

/* The "instrumented" object round-trips: its time, status and message, and which metrics it
 * reported; a record without it (every record before version 5) reads with none. */
Test(results, instrumented_round_trips_and_older_records_read_unchanged)
{
    kbi_case_result built, read, old;
    kbi_metric m[2];
    json_t *a, *names, *back, *v4 = case_record(4, "ok", 1e-3);
    build_case(&built, KBI_ST_OK);
    memcpy(m, built.metrics, sizeof m);
    m[0].instrumented = 1; /* drift: reported by instrument; count: by verify */
    built.metrics = m;
    built.instrumented =
        (kbi_case_instrumented){.ran = 1, .wall_s = 0.25, .status = KBI_ST_SKIPPED};
    snprintf(built.instrumented.message, sizeof built.instrumented.message, "no graph here");
    a = kbi_case_record_json(&built);
    names = json_object_get(json_object_get(a, "instrumented"), "metrics");
    cr_assert_eq(json_array_size(names), 1);
    cr_expect_str_eq(json_string_value(json_array_get(names, 0)), "drift");
    cr_assert_null(kbi_case_record_read(&read, a, KBI_RESULTS_VERSION));
    cr_expect(read.instrumented.ran);
    cr_expect_float_eq(read.instrumented.wall_s, 0.25, 0);
    cr_expect_eq(read.instrumented.status, KBI_ST_SKIPPED);
    cr_expect_str_eq(read.instrumented.message, "no graph here");
    cr_expect(read.metrics[0].instrumented && !read.metrics[1].instrumented);
    cr_assert_null(kbi_case_record_read(&old, v4, 4));
    cr_expect_not(old.instrumented.ran);
    cr_expect_not(old.metrics[0].instrumented);
    back = kbi_case_record_json(&old);
    cr_expect_null(json_object_get(back, "instrumented"));
    json_decref(back);
    kbi_case_result_free(&read);
    kbi_case_result_free(&old);
    json_decref(a);
    json_decref(v4);
    json_decref(built.params);
}

Test(results, a_malformed_instrumented_object_is_refused)
{
    kbi_case_result r;
    json_t *rec = case_record(1, "ok", 1e-3);
    json_object_set_new(rec, "instrumented", json_pack("{s:f, s:i}", "wall_s", 0.1, "metrics", 3));
    cr_expect(strstr(kbi_case_record_read(&r, rec, KBI_RESULTS_VERSION), "\"instrumented\""));
    json_object_set_new(rec, "instrumented", json_pack("{s:[i]}", "metrics", 3));
    cr_expect(strstr(kbi_case_record_read(&r, rec, KBI_RESULTS_VERSION), "metric names"));
    json_decref(rec);
}

Test(results, instrumented_rounds_add_their_times)
{
    kbi_result_set set = {0};
    char err[KBI_ERR_SIZE];
    FILE *f = open_run(2);
    for (int r = 1; r <= 2; r++) {
        json_t *rec = round_record(0, r, "ok", 1e-3);
        json_object_set_new(
            rec, "instrumented",
            json_pack("{s:f, s:[s], s:s}", "wall_s", 0.1 * r, "metrics", "m", "status", "ok"));
        put_line(f, "round", rec);
    }
    fclose(f);
    cr_assert_eq(kbi_results_load(&set, path, err), KBI_OK, "%s", err);
    cr_assert_eq(set.n_cases, 1);
    cr_expect(set.cases[0].instrumented.ran);
    cr_expect_float_eq(set.cases[0].instrumented.wall_s, 0.3, 1e-12);
    cr_expect(set.cases[0].metrics[0].instrumented, "m stays marked");
    kbi_results_free(&set);
}
