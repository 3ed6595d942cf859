/* kbench export (export.h): each format checked against its documented schema, restated
 * here from the format's documentation:
 *
 * Google Benchmark JSON (docs/user_guide.md "Output Formats", json_schema_version 1):
 *   {"context": {"date": string, "host_name": string, "executable": string, "num_cpus":
 *                integer, "library_version": string, "library_build_type": string,
 *                "json_schema_version": 1, extra context (--benchmark_context): strings},
 *    "benchmarks": [{"name": string, "run_name": string, "run_type": "iteration" or
 *                    "aggregate", "repetitions": integer, "threads": integer,
 *                    "iterations": integer, "real_time": number, "cpu_time": number,
 *                    "time_unit": "ns"|"us"|"ms"|"s", user counters (bytes_per_second,
 *                    items_per_second, ...): numbers, "label": string}]}
 *   tools/compare.py rejects another json_schema_version and compares entries having
 *   time_unit, real_time and cpu_time; github-action-benchmark's googlecpp takes name,
 *   real_time, time_unit, iterations, cpu_time and threads of every entry.
 * Bencher Metric Format (bencher.dev reference, its JSON schema): an object of benchmarks
 *   (name: at most 1024 characters), each an object of measures (name or slug: at most 64
 *   characters), each an object with "value": number (required), "lower_value" and
 *   "upper_value": numbers (optional).  latency is in nanoseconds, throughput in operations
 *   per second.
 * github-action-benchmark custom tools (README "customBiggerIsBetter/customSmallerIsBetter"):
 *   an array of {"name": string, "unit": string, "value": number, "range": string
 *   (optional), "extra": string (optional)}; the tool (direction) is set per action step. */
#define _XOPEN_SOURCE 700
#include "helpers.h"

#include <criterion/redirect.h>
#include <unistd.h>

#include "resultset.h"

#include "export.h"
#include "synthetic.h"

TestSuite(export, .timeout = 60);

static void make_tmp(void)
{
    make_tmp_named("export");
}

/* The run the tests export: two measured cases with every character ids use ([ ] , = / x .),
 * counts and metrics (lower, higher and no better direction), a failed and a skipped case,
 * and two cases whose ids are longer than Bencher's limit and differ only at the end. */
#define N_CASES 6
static kbi_case_result cases[N_CASES];
static kbi_metric metrics[3] = {
    {"drift", "1", 0.1, 0.01, KB_BETTER_LOWER, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0},
    {"ratio", "1", 2.5, 0.05, KB_BETTER_HIGHER, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0},
    {"count", "1", 3, 0, KB_BETTER_NONE, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0},
};
static char long_params[2][1800], long_text[2][1400];

#define ID0 "fx/tiled_v2/shape=4096x4096x256,perm=[0,2,1,3],alpha=0.5"
#define ID1 "fx/tiled_v2/shape=8x8x8,perm=[1,0,2,3],alpha=1"
#define ID2 "fx/naive/shape=8x8x8,perm=[1,0,2,3],alpha=1"
#define ID3 "fx/host/shape=8x8x8,perm=[1,0,2,3],alpha=1"

static void build_cases(void)
{
    syn_case(&cases[0], "fx", "tiled_v2",
             "{\"shape\":[4096,4096,256],\"perm\":[0,2,1,3],"
             "\"alpha\":0.5}",
             "shape=4096x4096x256,perm=[0,2,1,3],alpha=0.5", 1.5e-4);
    cases[0].has_counts = 1;
    cases[0].flops = 2.0 * 4096 * 4096 * 256;
    cases[0].bytes = 1e8;
    cases[0].items = 1e6;
    cases[0].item_unit = "elements";
    cases[0].metrics = metrics;
    cases[0].n_metrics = 3;
    syn_case(&cases[1], "fx", "tiled_v2", "{\"shape\":[8,8,8],\"perm\":[1,0,2,3],\"alpha\":1}",
             "shape=8x8x8,perm=[1,0,2,3],alpha=1", 2e-6);
    cases[1].has_counts = 1;
    cases[1].bytes = 4096;
    syn_case(&cases[2], "fx", "naive", "{\"shape\":[8,8,8],\"perm\":[1,0,2,3],\"alpha\":1}",
             "shape=8x8x8,perm=[1,0,2,3],alpha=1", 1e-5);
    syn_fail(&cases[2], KBI_ST_VERIFY_FAILED, "error 0.3 over the tolerance 1e-05");
    syn_case(&cases[3], "fx", "host", "{\"shape\":[8,8,8],\"perm\":[1,0,2,3],\"alpha\":1}",
             "shape=8x8x8,perm=[1,0,2,3],alpha=1", 1e-5);
    syn_fail(&cases[3], KBI_ST_SKIPPED, "no device");
    for (int k = 0; k < 2; k++) {
        /* 50 parameters of 20-character words: ids of 1,300 characters. */
        kbi_buf params = {0}, text = {0};
        for (int p = 0; p < 50; p++) {
            char word[32];
            snprintf(word, sizeof word, "value_%013d%c", p, p == 49 ? (char)('a' + k) : 'x');
            kbi_buf_printf(&params, "%s\"p%02d\":\"%s\"", p ? "," : "{", p, word);
            kbi_buf_printf(&text, "%sp%02d=%s", p ? "," : "", p, word);
        }
        kbi_buf_printf(&params, "}");
        snprintf(long_params[k], sizeof long_params[k], "%s", params.data);
        snprintf(long_text[k], sizeof long_text[k], "%s", text.data);
        kbi_buf_free(&params);
        kbi_buf_free(&text);
        syn_case(&cases[4 + k], "fx", "long", long_params[k], long_text[k], 1e-3);
    }
}

static void setup(void)
{
    char path[300];
    make_tmp();
    build_cases();
    snprintf(path, sizeof path, "%s/run.jsonl", tmp);
    syn_write(path, "NVIDIA H200", "run-1", cases, N_CASES);
}

static void teardown(void)
{
    for (int i = 0; i < N_CASES; i++)
        syn_free(&cases[i]);
    remove_tmp();
}

/* kbench export INPUT --format F [--out OUT] [more...]; returns its exit code. */
static int export_cmd(const char *input, const char *format, const char *out, const char *more1,
                      const char *more2)
{
    char *argv[10];
    int argc = 0;
    argv[argc++] = "export";
    argv[argc++] = (char *)input;
    argv[argc++] = "--format";
    argv[argc++] = (char *)format;
    if (out) {
        argv[argc++] = "--out";
        argv[argc++] = (char *)out;
    }
    if (more1)
        argv[argc++] = (char *)more1;
    if (more2)
        argv[argc++] = (char *)more2;
    argv[argc] = NULL;
    return kbi_cmd_export(argc, argv);
}

/* Exports tmp/run.jsonl as format into tmp/NAME and loads it. */
static json_t *export_run(const char *format, const char *name, const char *more1,
                          const char *more2)
{
    char in[300], out[300];
    json_error_t jerr;
    json_t *j;
    snprintf(in, sizeof in, "%s/run.jsonl", tmp);
    snprintf(out, sizeof out, "%s/%s", tmp, name);
    cr_assert_eq(export_cmd(in, format, out, more1, more2), 0);
    if (strcmp(format, "gab") == 0)
        return NULL;
    j = json_load_file(out, 0, &jerr);
    cr_assert_not_null(j, "%s: %s", out, jerr.text);
    return j;
}

static json_t *load(const char *name)
{
    char path[300];
    json_error_t jerr;
    json_t *j;
    snprintf(path, sizeof path, "%s/%s", tmp, name);
    j = json_load_file(path, 0, &jerr);
    cr_assert_not_null(j, "%s: %s", path, jerr.text);
    return j;
}

/* Whether two figures agree to the 10 significant digits the exports are written with. */
static int near(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b));
}

static const kbi_case_result *measured(int i)
{
    return &cases[i];
}

/* ---- Google Benchmark ---- */

static void check_gbench_entry(const json_t *b)
{
    static const char *const units[] = {"ns", "us", "ms", "s"};
    const char *key, *unit = json_string_value(json_object_get(b, "time_unit"));
    int unit_ok = 0;
    json_t *v;
    cr_assert(json_is_string(json_object_get(b, "name")));
    cr_expect_str_eq(json_string_value(json_object_get(b, "run_name")),
                     json_string_value(json_object_get(b, "name")));
    cr_expect_str_eq(json_string_value(json_object_get(b, "run_type")), "iteration");
    cr_expect(json_integer_value(json_object_get(b, "repetitions")) >= 1);
    cr_expect(json_integer_value(json_object_get(b, "threads")) >= 1);
    cr_expect(json_is_integer(json_object_get(b, "iterations")) &&
              json_integer_value(json_object_get(b, "iterations")) > 0);
    cr_expect(json_is_number(json_object_get(b, "real_time")));
    cr_expect(json_is_number(json_object_get(b, "cpu_time")));
    for (size_t i = 0; i < 4; i++)
        unit_ok |= unit && strcmp(unit, units[i]) == 0;
    cr_expect(unit_ok, "time_unit %s", unit ? unit : "(none)");
    /* Everything else is a counter (a number) or the label (a string). */
    json_object_foreach((json_t *)b, key, v)
    {
        if (strcmp(key, "label") == 0 || strcmp(key, "name") == 0 || strcmp(key, "run_name") == 0 ||
            strcmp(key, "run_type") == 0 || strcmp(key, "time_unit") == 0)
            cr_expect(json_is_string(v), "%s", key);
        else
            cr_expect(json_is_number(v), "%s is not a number", key);
    }
}

static const json_t *find_named(const json_t *benchmarks, const char *name)
{
    size_t i;
    json_t *b;
    json_array_foreach(benchmarks, i, b) if (strcmp(json_string_value(json_object_get(b, "name")),
                                                    name) == 0) return b;
    return NULL;
}

Test(export, gbench_follows_google_benchmarks_schema, .init = setup, .fini = teardown)
{
    json_t *j, *ctx, *benchmarks, *v;
    const json_t *b;
    const char *key, *label;
    size_t i;
    cr_redirect_stderr();
    j = export_run("gbench", "gbench.json", NULL, NULL);
    ctx = json_object_get(j, "context");
    cr_assert(json_is_object(ctx));
    cr_expect_eq(json_integer_value(json_object_get(ctx, "json_schema_version")), 1);
    cr_expect_str_eq(json_string_value(json_object_get(ctx, "date")), "2026-12-01T10:00:00Z");
    cr_expect_str_eq(json_string_value(json_object_get(ctx, "host_name")), "testhost");
    cr_expect(json_is_string(json_object_get(ctx, "executable")));
    cr_expect_eq(json_integer_value(json_object_get(ctx, "num_cpus")), 2);
    cr_expect_eq(json_integer_value(json_object_get(ctx, "mhz_per_cpu")), 3000);
    cr_expect_str_eq(json_string_value(json_object_get(ctx, "library_version")), "kbench 0.1.0");
    cr_expect_str_eq(json_string_value(json_object_get(ctx, "library_build_type")), "release");
    cr_expect_str_eq(json_string_value(json_object_get(ctx, "gpu")), "NVIDIA H200");
    cr_expect_str_eq(json_string_value(json_object_get(ctx, "gpu_driver")), "580.159.04");
    json_object_foreach(ctx, key, v)
    {
        if (strcmp(key, "num_cpus") && strcmp(key, "mhz_per_cpu") && strcmp(key, "caches") &&
            strcmp(key, "load_avg") && strcmp(key, "json_schema_version"))
            cr_expect(json_is_string(v), "context %s: extra context is a string", key);
    }
    benchmarks = json_object_get(j, "benchmarks");
    cr_assert(json_is_array(benchmarks));
    /* The measured cases, not the failed or the skipped one. */
    cr_expect_eq(json_array_size(benchmarks), 4);
    json_array_foreach(benchmarks, i, v) check_gbench_entry(v);
    cr_expect_null(find_named(benchmarks, ID2), "a failed case is left out");
    cr_expect_null(find_named(benchmarks, ID3), "a skipped case is left out");
    b = find_named(benchmarks, ID0);
    cr_assert_not_null(b);
    cr_expect_str_eq(json_string_value(json_object_get(b, "time_unit")), "ns");
    cr_expect(
        near(json_number_value(json_object_get(b, "real_time")), measured(0)->stats.median * 1e9));
    cr_expect_eq(json_integer_value(json_object_get(b, "iterations")), SYN_SAMPLES);
    cr_expect(near(json_number_value(json_object_get(b, "bytes_per_second")),
                   1e8 / measured(0)->stats.median));
    cr_expect(near(json_number_value(json_object_get(b, "items_per_second")),
                   1e6 / measured(0)->stats.median));
    cr_expect(near(json_number_value(json_object_get(b, "drift")), 0.1));
    cr_expect(near(json_number_value(json_object_get(b, "ratio")), 2.5));
    label = json_string_value(json_object_get(b, "label"));
    cr_assert_not_null(label);
    cr_expect(strstr(label, "drift [1, lower is better]") != NULL, "%s", label);
    cr_expect(strstr(label, "ratio [1, higher is better]") != NULL, "%s", label);
    /* Two instances of one family (plugin/variant), numbered in order. */
    cr_expect_eq(json_integer_value(json_object_get(b, "family_index")), 0);
    b = find_named(benchmarks, ID1);
    cr_assert_not_null(b);
    cr_expect_eq(json_integer_value(json_object_get(b, "family_index")), 0);
    cr_expect_eq(json_integer_value(json_object_get(b, "per_family_instance_index")), 1);
    cr_expect_null(json_object_get(b, "flops_per_second"), "no flops counted, no counter");
    json_decref(j);
}

Test(export, gbench_time_unit_scales_the_times, .init = setup, .fini = teardown)
{
    json_t *j;
    const json_t *b;
    cr_redirect_stderr();
    j = export_run("gbench", "us.json", "--time-unit", "us");
    b = find_named(json_object_get(j, "benchmarks"), ID0);
    cr_assert_not_null(b);
    cr_expect_str_eq(json_string_value(json_object_get(b, "time_unit")), "us");
    cr_expect(
        near(json_number_value(json_object_get(b, "real_time")), measured(0)->stats.median * 1e6));
    json_decref(j);
}

/* ---- Bencher ---- */

static void check_measure(const char *bench, const char *name, const json_t *m)
{
    json_t *value = json_object_get(m, "value"), *lo = json_object_get(m, "lower_value");
    json_t *hi = json_object_get(m, "upper_value");
    const char *key;
    json_t *v;
    cr_expect(strlen(name) <= 64, "measure name %s over 64 characters", name);
    cr_assert(json_is_number(value), "%s %s: value is required", bench, name);
    cr_expect((lo == NULL) == (hi == NULL), "%s %s: both bounds or none", bench, name);
    if (lo) {
        cr_expect(json_is_number(lo) && json_is_number(hi));
        cr_expect(json_number_value(lo) <= json_number_value(value) &&
                      json_number_value(value) <= json_number_value(hi),
                  "%s %s: lower <= value <= upper", bench, name);
    }
    json_object_foreach((json_t *)m, key, v) cr_expect(
        !strcmp(key, "value") || !strcmp(key, "lower_value") || !strcmp(key, "upper_value"),
        "%s %s: no other field than value, lower_value, upper_value: %s", bench, name, key);
}

Test(export, bmf_follows_bencher_metric_format, .init = setup, .fini = teardown)
{
    json_t *j, *bench, *m, *latency;
    const char *name, *mname;
    const kbi_case_result *c = measured(0);
    size_t longs = 0;
    cr_redirect_stderr();
    j = export_run("bmf", "bmf.json", NULL, NULL);
    cr_assert(json_is_object(j));
    cr_expect_eq(json_object_size(j), 4, "the measured cases");
    json_object_foreach(j, name, bench)
    {
        cr_expect(strlen(name) <= KBI_BMF_NAME_MAX, "benchmark name of %zu characters",
                  strlen(name));
        cr_assert(json_is_object(bench));
        cr_assert_not_null(json_object_get(bench, "latency"), "%s has a latency", name);
        json_object_foreach(bench, mname, m) check_measure(name, mname, m);
        if (strncmp(name, "fx/long/", 8) == 0) {
            longs++;
            cr_expect_eq(strlen(name), KBI_BMF_NAME_MAX, "shortened to the limit");
        }
    }
    cr_expect_eq(longs, 2, "two long ids stay two names");
    cr_expect_null(json_object_get(j, ID2));
    bench = json_object_get(j, ID0);
    cr_assert_not_null(bench);
    latency = json_object_get(bench, "latency");
    cr_expect(near(json_number_value(json_object_get(latency, "value")), c->stats.median * 1e9));
    cr_expect(
        near(json_number_value(json_object_get(latency, "lower_value")), c->stats.ci_low * 1e9));
    cr_expect(
        near(json_number_value(json_object_get(latency, "upper_value")), c->stats.ci_high * 1e9));
    cr_expect(c->stats.ci_low < c->stats.median && c->stats.median < c->stats.ci_high,
              "the fixture has an interval");
    m = json_object_get(bench, "throughput");
    cr_expect(near(json_number_value(json_object_get(m, "value")), 1e6 / c->stats.median));
    cr_expect(near(json_number_value(json_object_get(m, "lower_value")), 1e6 / c->stats.ci_high));
    m = json_object_get(bench, "gflops");
    cr_expect(near(json_number_value(json_object_get(m, "value")),
                   2.0 * 4096 * 4096 * 256 / c->stats.median * 1e-9));
    cr_expect_not_null(json_object_get(bench, "gbs"));
    m = json_object_get(bench, "drift");
    cr_assert_not_null(m, "declared metrics are measures");
    cr_expect(near(json_number_value(json_object_get(m, "value")), 0.1));
    cr_expect(
        near(json_number_value(json_object_get(m, "upper_value")), 0.1 + 1.959963984540054 * 0.01));
    m = json_object_get(bench, "count");
    cr_expect(near(json_number_value(json_object_get(m, "lower_value")), 3),
              "an exact figure's bounds are itself");
    cr_expect_null(json_object_get(json_object_get(j, ID1), "gflops"), "no flops, no gflops");
    json_decref(j);
}

/* ---- github-action-benchmark ---- */

static void check_gab_array(const json_t *a, const char *file)
{
    size_t i;
    json_t *e;
    cr_assert(json_is_array(a), "%s is an array", file);
    json_array_foreach(a, i, e)
    {
        const char *key;
        json_t *v;
        cr_expect(json_is_string(json_object_get(e, "name")), "%s[%zu].name", file, i);
        cr_expect(json_is_string(json_object_get(e, "unit")), "%s[%zu].unit", file, i);
        cr_expect(json_is_number(json_object_get(e, "value")), "%s[%zu].value", file, i);
        json_object_foreach(e, key, v)
        {
            cr_expect(!strcmp(key, "name") || !strcmp(key, "unit") || !strcmp(key, "value") ||
                          !strcmp(key, "range") || !strcmp(key, "extra"),
                      "%s[%zu]: unknown field %s", file, i, key);
            if (!strcmp(key, "range") || !strcmp(key, "extra"))
                cr_expect(json_is_string(v), "%s[%zu].%s is a string", file, i, key);
        }
    }
}

static const json_t *entry_named(const json_t *a, const char *name)
{
    size_t i;
    json_t *e;
    json_array_foreach(a, i, e) if (strcmp(json_string_value(json_object_get(e, "name")), name) ==
                                    0) return e;
    return NULL;
}

Test(export, gab_writes_times_and_rates_as_two_custom_arrays, .init = setup, .fini = teardown)
{
    json_t *times, *rates;
    const json_t *e;
    const kbi_case_result *c = measured(0);
    char range[64];
    cr_redirect_stderr();
    export_run("gab", "ci", NULL, NULL);
    times = load("ci-times.json");
    rates = load("ci-rates.json");
    check_gab_array(times, "ci-times.json");
    check_gab_array(rates, "ci-rates.json");
    /* Times: each measured case, and the metric where lower is better. */
    cr_expect_eq(json_array_size(times), 5);
    e = entry_named(times, ID0);
    cr_assert_not_null(e);
    cr_expect(near(json_number_value(json_object_get(e, "value")), c->stats.median * 1e9));
    cr_expect_str_eq(json_string_value(json_object_get(e, "unit")), "ns");
    snprintf(range, sizeof range, "\u00b1 %.4g", (c->stats.ci_high - c->stats.ci_low) / 2 * 1e9);
    cr_expect_str_eq(json_string_value(json_object_get(e, "range")), range);
    cr_expect_not_null(entry_named(times, ID0 " (drift)"));
    cr_expect_null(entry_named(times, ID0 " (ratio)"), "higher is better: the rates file");
    cr_expect_null(entry_named(times, ID2), "a failed case is left out");
    /* Rates: GFLOP/s, GB/s and items/s where counted, and the metric where higher is better;
     * a metric of no direction in neither. */
    e = entry_named(rates, ID0 " (GFLOP/s)");
    cr_assert_not_null(e);
    cr_expect_str_eq(json_string_value(json_object_get(e, "unit")), "GFLOP/s");
    cr_expect_not_null(entry_named(rates, ID0 " (GB/s)"));
    cr_expect_not_null(entry_named(rates, ID0 " (elements/s)"));
    cr_expect_not_null(entry_named(rates, ID0 " (ratio)"));
    cr_expect_not_null(entry_named(rates, ID1 " (GB/s)"));
    cr_expect_null(entry_named(rates, ID1 " (GFLOP/s)"));
    cr_expect_null(entry_named(rates, ID0 " (count)"));
    cr_expect_null(entry_named(times, ID0 " (count)"));
    cr_expect_eq(json_array_size(rates), 3 + 1 + 1 + 0);
    json_decref(times);
    json_decref(rates);
}

/* ---- energy ---- */

#define IDE "fx/copy/bytes=1000000000"

/* Exports a run of one copy case whose energy was measured (0.15 J per run at 600 W, 1 GB a
 * run: 6.67 GB/J) and one whose energy could not be, as format into tmp/energy-NAME. */
static void export_energy(const char *format, const char *name)
{
    char in[300], out[300];
    kbi_case_result c[2];
    syn_case(&c[0], "fx", "copy", "{\"bytes\":1000000000}", "bytes=1000000000", 2.5e-4);
    c[0].has_counts = 1;
    c[0].bytes = 1e9;
    c[0].has_energy = 1;
    c[0].energy = (kbi_case_energy){.measured = 1,
                                    .j_per_run = 0.15,
                                    .j_per_run_u = 0.003,
                                    .watts = 600,
                                    .watts_u = 2,
                                    .run_s = 2.5e-4,
                                    .window_s = 2,
                                    .period_s = 0.1,
                                    .windows = 3,
                                    .runs = 24000};
    syn_case(&c[1], "fx", "copy", "{\"bytes\":4096}", "bytes=4096", 2e-6);
    c[1].has_energy = 1;
    snprintf(c[1].energy.why, sizeof c[1].energy.why, "the windows were too short");
    snprintf(in, sizeof in, "%s/energy.jsonl", tmp);
    syn_write(in, "NVIDIA H200", "run-e", c, 2);
    syn_free(&c[0]);
    syn_free(&c[1]);
    snprintf(out, sizeof out, "%s/energy-%s", tmp, name);
    cr_assert_eq(export_cmd(in, format, out, NULL, NULL), 0);
}

/* The energy of the timed work goes along in every format, named as results.csv names it:
 * joules per run (lower is better), watts (no direction: in gbench and bmf, in neither gab
 * file) and GB per joule (higher is better); a case whose energy was not measured has none. */
Test(export, energy_goes_along_in_every_format, .init = setup, .fini = teardown)
{
    json_t *j, *times, *rates;
    const json_t *b, *m;
    cr_redirect_stderr();
    export_energy("gbench", "gbench.json");
    j = load("energy-gbench.json");
    b = find_named(json_object_get(j, "benchmarks"), IDE);
    cr_assert_not_null(b);
    check_gbench_entry(b);
    cr_expect(near(json_number_value(json_object_get(b, "energy_j_per_run")), 0.15));
    cr_expect(near(json_number_value(json_object_get(b, "energy_watts")), 600));
    cr_expect(near(json_number_value(json_object_get(b, "energy_gb_per_j")), 1.0 / 0.15));
    cr_expect_null(json_object_get(b, "energy_gflop_per_j"), "no flops counted");
    b = find_named(json_object_get(j, "benchmarks"), "fx/copy/bytes=4096");
    cr_assert_not_null(b);
    cr_expect_null(json_object_get(b, "energy_j_per_run"), "not measured: not written");
    json_decref(j);

    export_energy("bmf", "bmf.json");
    j = load("energy-bmf.json");
    m = json_object_get(json_object_get(j, IDE), "energy_j_per_run");
    cr_assert_not_null(m);
    cr_expect(near(json_number_value(json_object_get(m, "value")), 0.15));
    cr_expect(near(json_number_value(json_object_get(m, "lower_value")),
                   0.15 - 1.959963984540054 * 0.003));
    cr_expect(near(json_number_value(json_object_get(m, "upper_value")),
                   0.15 + 1.959963984540054 * 0.003));
    cr_expect_not_null(json_object_get(json_object_get(j, IDE), "energy_gb_per_j"));
    cr_expect_null(json_object_get(json_object_get(j, "fx/copy/bytes=4096"), "energy_watts"));
    json_decref(j);

    export_energy("gab", "gab");
    times = load("energy-gab-times.json");
    rates = load("energy-gab-rates.json");
    check_gab_array(times, "energy-gab-times.json");
    check_gab_array(rates, "energy-gab-rates.json");
    b = entry_named(times, IDE " (energy_j_per_run)");
    cr_assert_not_null(b);
    cr_expect_str_eq(json_string_value(json_object_get(b, "unit")), "J");
    cr_expect(strstr(json_string_value(json_object_get(b, "extra")), "energy of the timed work"));
    cr_expect_not_null(entry_named(rates, IDE " (energy_gb_per_j)"));
    cr_expect_null(entry_named(times, IDE " (energy_watts)"));
    cr_expect_null(entry_named(rates, IDE " (energy_watts)"));
    json_decref(times);
    json_decref(rates);
}

/* ---- inputs, notes, exit codes ---- */

Test(export, several_files_merge_and_a_repeated_id_takes_the_later_record, .init = setup,
     .fini = teardown)
{
    kbi_case_result again;
    kbi_result_set set = {0};
    kbi_export_set x;
    char first[300], second[300], err[KBI_ERR_SIZE];
    const char *inputs[2];
    int repeated = 0, failed = 0;
    snprintf(second, sizeof second, "%s/second.jsonl", tmp);
    syn_case(&again, "fx", "tiled_v2", "{\"shape\":[8,8,8],\"perm\":[1,0,2,3],\"alpha\":1}",
             "shape=8x8x8,perm=[1,0,2,3],alpha=1", 4e-6);
    syn_write(second, "NVIDIA H200", "run-2", &again, 1);
    syn_free(&again);
    snprintf(first, sizeof first, "%s/run.jsonl", tmp);
    inputs[0] = first;
    inputs[1] = second;
    cr_assert_eq(kbi_results_load_inputs(&set, inputs, 2, err), KBI_OK, "%s", err);
    cr_assert_eq(kbi_export_select(&set, "ns", &x, err), KBI_OK, "%s", err);
    cr_expect_eq(x.n, 4, "the measured cases of both files, ID1 once");
    for (size_t i = 0; i < x.n; i++)
        if (strcmp(x.cases[i]->id, ID1) == 0)
            cr_expect(fabs(x.cases[i]->stats.median - 4e-6) < 1e-8, "the later record");
    for (size_t i = 0; i < x.notes.n; i++) {
        repeated += strstr(x.notes.s[i], "is read twice") != NULL;
        failed += strstr(x.notes.s[i], "left out " ID2 ": verify_failed: error 0.3") != NULL;
        failed += strstr(x.notes.s[i], "left out " ID3 ": skipped: no device") != NULL;
    }
    cr_expect_eq(repeated, 1);
    cr_expect_eq(failed, 2, "each case left out is named with its status and message");
    kbi_export_set_free(&x);
    kbi_results_free(&set);
}

Test(export, exit_codes, .init = setup, .fini = teardown)
{
    char in[300], out[300], failed[300];
    kbi_case_result bad;
    cr_redirect_stderr();
    snprintf(in, sizeof in, "%s/run.jsonl", tmp);
    snprintf(out, sizeof out, "%s/x.json", tmp);
    cr_expect_eq(export_cmd(in, "csv", out, NULL, NULL), 2, "unknown format");
    cr_expect_eq(export_cmd(in, "gab", NULL, NULL, NULL), 2, "gab needs --out PREFIX");
    cr_expect_eq(export_cmd(in, "gbench", out, "--time-unit", "min"), 2);
    cr_expect_eq(export_cmd("/nonexistent/results.jsonl", "bmf", out, NULL, NULL), 2);
    {
        char *argv[] = {"export", in, NULL};
        cr_expect_eq(kbi_cmd_export(2, argv), 2, "--format is required");
    }
    /* Nothing measured: nothing written, exit 1. */
    snprintf(failed, sizeof failed, "%s/failed.jsonl", tmp);
    syn_case(&bad, "fx", "naive", "{\"n\":1}", "n=1", 1e-5);
    syn_fail(&bad, KBI_ST_CRASHED, "Segmentation fault");
    syn_write(failed, "NVIDIA H200", "run-3", &bad, 1);
    syn_free(&bad);
    remove(out);
    cr_expect_eq(export_cmd(failed, "gbench", out, NULL, NULL), 1);
    cr_expect_neq(access(out, F_OK), 0, "nothing written");
}
