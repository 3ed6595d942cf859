#define _DEFAULT_SOURCE
/* Results files: what the writer puts down, the reader gets back; a cut-off
 * file keeps its complete lines; other schemas are refused with file:line. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
    expect_load_error("{\"schema\":\"kbench-results\",\"version\":2,\"record\":\"env\",\"run_id\":\"r\"}\n",
                      ":1: results schema version 2, expected 1 (written by another kbench version)");
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
