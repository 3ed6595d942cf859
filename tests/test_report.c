/* Tests of kbench report (report.c and the modules it writes from:
 * resultset.c, report_model.c, report_md.c, report_csv.c, report_charts.c)
 * on fixed results files (tests/data): the CSV and Markdown contents, merging
 * shards, each section's own baseline, the default output folder, and the
 * errors a user sees for bad input (missing file, truncated line, another
 * schema version) with file and line. */
#define _XOPEN_SOURCE 700
#include <criterion/criterion.h>
#include <criterion/redirect.h>

#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format.h"
#include "energy.h"
#include "report.h"
#include "report_model.h"
#include "results.h"
#include "helpers.h"
#include "synthetic.h"

#define DATA KBENCH_TEST_DATA

static void make_tmp(void)
{
    make_tmp_named("report");
}


static void copy_file(const char *from, const char *to)
{
    char *text = slurp(from);
    FILE *f = fopen(to, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    free(text);
}

static void load(kbi_result_set *set, const char *name)
{
    char path[4096], err[KBI_ERR_SIZE];
    snprintf(path, sizeof path, "%s/%s", DATA, name);
    cr_assert_eq(kbi_results_load(set, path, err), KBI_OK, "%s", err);
}

/* Splits one CSV line (RFC 4180) into at most max fields, unquoted, in
 * place.  Returns the number of fields. */
static int csv_split(char *line, char **fields, int max)
{
    int n = 0;
    char *p = line;
    for (;;) {
        char *out = p;
        if (n == max)
            return -1;
        fields[n++] = p;
        if (*p == '"') {
            char *w = p;
            p++;
            for (;;) {
                if (*p == '"' && p[1] == '"') {
                    *w++ = '"';
                    p += 2;
                } else if (*p == '"') {
                    p++;
                    break;
                } else {
                    *w++ = *p++;
                }
            }
            *w = '\0';
            fields[n - 1] = out;
            if (*p != ',')
                return n;
            p++;
        } else {
            char *comma = strchr(p, ',');
            if (!comma)
                return n;
            *comma = '\0';
            p = comma + 1;
        }
    }
}

static int column(char **header, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(header[i], name) == 0)
            return i;
    cr_assert_fail("no column %s", name);
    return -1;
}

Test(report_csv, one_row_per_case_with_the_figures)
{
    kbi_result_set set = {0};
    char *buf = NULL, *line, *save = NULL, *header[128], *row[128];
    size_t len = 0;
    int nh, rows = 0, seen_triad = 0;
    FILE *f = open_memstream(&buf, &len);
    load(&set, "stream_h200.jsonl");
    cr_assert_eq(kbi_report_write_csv(&set, f), KBI_OK);
    fclose(f);
    line = strtok_r(buf, "\n", &save);
    nh = csv_split(line, header, 128);
    cr_assert_gt(nh, 30);
    cr_assert_str_eq(header[0], "id");
    column(header, nh, "param_bytes");
    while ((line = strtok_r(NULL, "\n", &save)) != NULL) {
        int n = csv_split(line, row, 128);
        cr_assert_eq(n, nh, "row %d has %d fields, the header %d", rows + 1, n, nh);
        rows++;
        cr_assert_str_eq(row[column(header, nh, "status")], "ok");
        if (strcmp(row[0], "stream/triad/bytes=1073741824") == 0) {
            double median = atof(row[column(header, nh, "median_s")]);
            double speedup = atof(row[column(header, nh, "speedup")]);
            double gbs = atof(row[column(header, nh, "gbs")]);
            seen_triad = 1;
            cr_assert_str_eq(row[column(header, nh, "param_bytes")], "1073741824");
            cr_assert_str_eq(row[column(header, nh, "baseline")], "memcpy");
            cr_assert(fabs(median - 803.7e-6) < 0.1e-6, "median %g", median);
            /* memcpy's median over triad's, at 1 GiB: 526.3 us / 803.7 us. */
            cr_assert(fabs(speedup - 0.6549) < 0.001, "speedup %g", speedup);
            cr_assert(fabs(gbs - 4008) < 1, "GB/s %g", gbs);
            cr_assert_str_eq(row[column(header, nh, "verify_passed")], "true");
            cr_assert_str_eq(row[column(header, nh, "clock_drop")], "false");
            cr_assert_str_eq(row[column(header, nh, "device")], "NVIDIA H200");
        }
        if (strcmp(row[column(header, nh, "variant")], "memcpy") == 0)
            cr_assert_str_eq(row[column(header, nh, "speedup")], "1");
    }
    cr_assert_eq(rows, 15);
    cr_assert(seen_triad);
    free(buf);
    kbi_results_free(&set);
}

Test(report_csv, failed_cases_keep_their_message_and_quoting)
{
    kbi_result_set set = {0};
    char *buf = NULL, *line, *save = NULL, *header[128], *row[128];
    size_t len = 0;
    int nh, rows = 0, crashed = 0;
    FILE *f = open_memstream(&buf, &len);
    load(&set, "sgemm_h200.jsonl");
    cr_assert_eq(kbi_report_write_csv(&set, f), KBI_OK);
    fclose(f);
    /* Ids hold commas: they must be quoted. */
    cr_assert(strstr(buf, "\"sgemm/naive/shape=1024x1024x1024,alpha=1,beta=0.5\",sgemm,naive,") !=
              NULL);
    line = strtok_r(buf, "\n", &save);
    nh = csv_split(line, header, 128);
    column(header, nh, "metric_registers");
    while ((line = strtok_r(NULL, "\n", &save)) != NULL) {
        cr_assert_eq(csv_split(line, row, 128), nh);
        rows++;
        if (strcmp(row[column(header, nh, "status")], "crashed") == 0) {
            crashed++;
            cr_assert(strstr(row[column(header, nh, "message")], "cudaErrorIllegalAddress"));
            cr_assert_str_eq(row[column(header, nh, "median_s")], "");
            cr_assert_str_eq(row[column(header, nh, "speedup")], "");
        }
        if (strstr(row[0], "sgemm/cublas/shape=4096x4096x4096") == row[0]) {
            cr_assert_str_eq(row[column(header, nh, "clock_drop")], "true");
            cr_assert_str_eq(row[column(header, nh, "sm_end_mhz")], "1755");
        }
    }
    cr_assert_eq(rows, 33, "no case dropped, whatever its status");
    cr_assert_eq(crashed, 1);
    free(buf);
    kbi_results_free(&set);
}

static char *write_report(const char *const *names, size_t n, kbi_report_options *opt)
{
    kbi_result_set set = {0};
    char err[KBI_ERR_SIZE] = "", out[512], md[600];
    const char *paths[8];
    char storage[8][512];
    for (size_t i = 0; i < n; i++) {
        snprintf(storage[i], sizeof storage[i], "%s/%s", DATA, names[i]);
        paths[i] = storage[i];
    }
    cr_assert_eq(kbi_results_load_inputs(&set, paths, n, err), KBI_OK, "%s", err);
    snprintf(out, sizeof out, "%s/rep", tmp);
    cr_assert_eq(kbi_report_write(&set, out, opt, err), KBI_OK, "%s", err);
    kbi_results_free(&set);
    snprintf(md, sizeof md, "%s/report.md", out);
    return slurp(md);
}

Test(report_md, stream_tables, .init = make_tmp, .fini = remove_tmp)
{
    const char *names[] = {"stream_h200.jsonl"};
    kbi_report_options opt = {.gnuplot = ""};
    char *md = write_report(names, 1, &opt);
    char csv[600];
    struct stat st;
    /* Environment. */
    cr_assert(strstr(md, "## Environment") != NULL);
    cr_assert(strstr(md, "NVIDIA H200 (device 0, CC 9.0, 132 SMs)") != NULL);
    cr_assert(strstr(md, "SM 1980 MHz, memory 3201 MHz") != NULL);
    cr_assert(strstr(md, "driver 13.0, runtime 13.0") != NULL);
    cr_assert(strstr(md, "revision `9f3c2a1e7b44`") != NULL);
    cr_assert(strstr(md, "memory 4180 GB/s, compute 67000 GFLOP/s (measured)") != NULL);
    /* One table per point, the baseline marked, figures in adaptive units. */
    cr_assert(strstr(md, "### bytes=16777216") != NULL);
    cr_assert(strstr(md, "### bytes=1073741824") != NULL);
    cr_assert(strstr(md, "| speedup vs memcpy |") != NULL);
    cr_assert(strstr(md, "| triad | ok | 803.7 µs | 803.1 – 804.3 µs (±0.07%) |") != NULL);
    cr_assert(strstr(md, "| 4008 | 95.9% |") != NULL);
    cr_assert(strstr(md, "| memcpy (baseline) | ok | 526.3 µs |") != NULL);
    cr_assert(strstr(md, "| 1.00× |") != NULL);
    cr_assert(strstr(md, "| 0.65× |") != NULL);
    /* Without gnuplot: said so, and no image embedded. */
    cr_assert(strstr(md, "Charts were not drawn") != NULL);
    cr_assert(strstr(md, "![") == NULL);
    snprintf(csv, sizeof csv, "%s/rep/results.csv", tmp);
    cr_assert_eq(stat(csv, &st), 0);
    cr_assert_gt(st.st_size, 1000);
    free(md);
}

Test(report_md, sgemm_failures_are_listed_not_dropped, .init = make_tmp, .fini = remove_tmp)
{
    const char *names[] = {"sgemm_h200.jsonl"};
    kbi_report_options opt = {.no_charts = 1};
    char *md = write_report(names, 1, &opt);
    cr_assert(strstr(md, "| cp_async | **crashed** |") != NULL);
    cr_assert(strstr(md, "| naive | **timeout** |") != NULL);
    cr_assert(strstr(md, "| tf32x3 | **skipped** |") != NULL);
    cr_assert(strstr(md, "| swizzle | **verify_failed** | 278.9 µs |") != NULL);
    cr_assert(strstr(md, "**✗ 0.0312 > tol 1e-05**") != NULL);
    cr_assert(strstr(md, "Cases of `sgemm` that did not pass (4)") != NULL);
    cr_assert(strstr(md, "K=256 is shorter than the 3xTF32 pipeline (needs K >= 512)") != NULL);
    cr_assert(strstr(md, "an illegal memory access was encountered") != NULL);
    cr_assert(strstr(md, "case exceeded the 60 s timeout") != NULL);
    /* The clock drop, up front and in the row's notes. */
    cr_assert(strstr(md, "⚠ SM clock dropped 1980→1755 MHz") != NULL);
    cr_assert(strstr(md, "The SM clock dropped during 1 case") != NULL);
    /* Rates for flops and bytes, the verify metric, the plugin's metrics. */
    cr_assert(strstr(md, "| GFLOP/s | of peak | GB/s | of bandwidth |") != NULL);
    cr_assert(strstr(md, "verify error (rel_frobenius)") != NULL);
    cr_assert(strstr(md, "| variant | registers (regs/thread) | smem (B/block) |") != NULL);
    cr_assert(strstr(md, "| tf32x3 | 232 | 98304 |") != NULL);
    cr_assert(strstr(md, "| cublas (baseline) | ok | 2.722 ms |") != NULL);
    cr_assert(strstr(md, "turned off") != NULL);
    free(md);
}

Test(report_merge, shards_are_merged_and_speedups_cross_them, .init = make_tmp, .fini = remove_tmp)
{
    kbi_result_set set = {0};
    const char *paths[] = {DATA "/stream_shard1.jsonl", DATA "/stream_shard2.jsonl"};
    char err[KBI_ERR_SIZE] = "";
    size_t n_speedups = 0;
    cr_assert_eq(kbi_results_load_inputs(&set, paths, 2, err), KBI_OK, "%s", err);
    cr_assert_eq(set.n_cases, 15);
    cr_assert_eq(set.n_envs, 2);
    for (size_t i = 0; i < set.n_cases; i++) {
        double sp;
        n_speedups += kbi_report_speedup(&set, i, &sp);
    }
    cr_assert_eq(n_speedups, 15, "memcpy sits in the other shard for some points");
    kbi_results_free(&set);
    {
        const char *names[] = {"stream_shard1.jsonl", "stream_shard2.jsonl"};
        kbi_report_options opt = {.no_charts = 1};
        char *md = write_report(names, 2, &opt);
        const char *p = strstr(md, "### bytes=268435456");
        cr_assert_not_null(p);
        /* Every variant at the point, in one table, without a run column
         * (each case comes from one shard only). */
        cr_assert(strstr(p, "| copy | ok |") && strstr(p, "| triad | ok |") &&
                  strstr(p, "| memcpy (baseline) | ok |"));
        cr_assert(strstr(md, "| R1: ") != NULL && strstr(md, "R2: ") != NULL);
        cr_assert(strstr(md, "| shard | 1/2 | 2/2 |") != NULL);
        free(md);
    }
}

Test(report_merge, same_case_twice_is_read_once, .init = make_tmp, .fini = remove_tmp)
{
    kbi_result_set set = {0};
    char copy[512], err[KBI_ERR_SIZE];
    const char *paths[3];
    snprintf(copy, sizeof copy, "%s/results-copy.jsonl", tmp);
    copy_file(DATA "/stream_h200.jsonl", copy);
    paths[0] = DATA "/stream_h200.jsonl";
    paths[1] = DATA "/../data/stream_h200.jsonl"; /* the same file by another name */
    paths[2] = copy;                              /* a copy: same run, same ids */
    cr_assert_eq(kbi_results_load_inputs(&set, paths, 3, err), KBI_OK, "%s", err);
    cr_assert_eq(set.n_cases, 15);
    cr_assert_eq(set.n_warnings, 15, "one warning per duplicate case of the copy");
    cr_assert(strstr(set.warnings[0], "already read from") != NULL, "%s", set.warnings[0]);
    kbi_results_free(&set);
}

Test(report_merge, several_gpus_get_a_run_column, .init = make_tmp, .fini = remove_tmp)
{
    kbi_result_set set = {0};
    char path[1024], err[KBI_ERR_SIZE], out[512], *text, *md;
    const char *paths[2];
    FILE *f;
    kbi_report_options opt = {.no_charts = 1};
    /* The rerun, as if measured on an A100. */
    text = slurp(DATA "/stream_h200_rerun.jsonl");
    snprintf(path, sizeof path, "%s/a100.jsonl", tmp);
    f = fopen(path, "w");
    for (char *p = text, *q; *p; p = q + 11) {
        q = strstr(p, "NVIDIA H200");
        if (!q) {
            fputs(p, f);
            break;
        }
        fwrite(p, 1, (size_t)(q - p), f);
        fputs("NVIDIA A100", f);
    }
    fclose(f);
    free(text);
    paths[0] = DATA "/stream_h200.jsonl";
    paths[1] = path;
    cr_assert_eq(kbi_results_load_inputs(&set, paths, 2, err), KBI_OK, "%s", err);
    snprintf(out, sizeof out, "%s/rep", tmp);
    cr_assert_eq(kbi_report_write(&set, out, &opt, err), KBI_OK, "%s", err);
    kbi_results_free(&set);
    snprintf(path, sizeof path, "%s/report.md", out);
    md = slurp(path);
    cr_assert(strstr(md, "| variant | run | status |") != NULL);
    cr_assert(strstr(md, "| triad | NVIDIA A100 | ok |") != NULL);
    cr_assert(strstr(md, "| triad | NVIDIA H200 | ok |") != NULL);
    free(md);
}

Test(report_dirs, default_output_folder, .init = make_tmp, .fini = remove_tmp)
{
    char out[1024], dir[512], file[600];
    kbi_report_default_dir("results/stream_run.jsonl", out, sizeof out);
    cr_assert_str_eq(out, "reports/stream_run");
    kbi_report_default_dir(DATA "/stream_h200.jsonl", out, sizeof out);
    cr_assert_str_eq(out, "reports/stream_h200");
    snprintf(dir, sizeof dir, "%s/sweep/shard-3", tmp);
    cr_assert_eq(kbi_mkdirs(dir, NULL), KBI_OK);
    snprintf(file, sizeof file, "%s/results.jsonl", dir);
    copy_file(DATA "/stream_shard1.jsonl", file);
    kbi_report_default_dir(file, out, sizeof out);
    cr_assert_str_eq(out, "reports/sweep", "a shard is named after its sweep");
    snprintf(dir, sizeof dir, "%s/sweep/", tmp);
    kbi_report_default_dir(dir, out, sizeof out);
    cr_assert_str_eq(out, "reports/sweep");
    snprintf(dir, sizeof dir, "%s/h200-stream", tmp);
    cr_assert_eq(kbi_mkdirs(dir, NULL), KBI_OK);
    snprintf(file, sizeof file, "%s/results.jsonl", dir);
    copy_file(DATA "/stream_h200.jsonl", file);
    kbi_report_default_dir(file, out, sizeof out);
    cr_assert_str_eq(out, "reports/h200-stream");
}

Test(report_format, durations)
{
    char b[64];
    kbi_format_duration(1.5e-9, b, sizeof b);
    cr_assert_str_eq(b, "1.500 ns");
    kbi_format_duration(12.5e-6, b, sizeof b);
    cr_assert_str_eq(b, "12.50 µs");
    kbi_format_duration(0.25, b, sizeof b);
    cr_assert_str_eq(b, "250.0 ms");
    kbi_format_duration(3, b, sizeof b);
    cr_assert_str_eq(b, "3.000 s");
    kbi_format_duration(1234.0, b, sizeof b);
    cr_assert_str_eq(b, "1234 s");
}

/* ---- bad input: clear errors with file and line ---- */

static int load_err(const char *name, char *err)
{
    kbi_result_set set = {0};
    char path[4096];
    int rc;
    snprintf(path, sizeof path, "%s/%s", DATA, name);
    rc = kbi_results_load(&set, path, err);
    cr_assert_eq(set.n_cases, 0, "a file with an error adds nothing");
    cr_assert_eq(set.n_envs, 0, "a file with an error adds nothing");
    kbi_results_free(&set);
    return rc;
}

Test(report_input, missing_file)
{
    char err[KBI_ERR_SIZE] = "";
    cr_assert_eq(load_err("no_such_file.jsonl", err), KBI_ERR_IO);
    cr_assert(strstr(err, "no_such_file.jsonl: cannot open results file: No such file") != NULL,
              "%s", err);
}

Test(report_input, truncated_line_in_the_middle)
{
    char err[KBI_ERR_SIZE] = "";
    cr_assert_eq(load_err("bad_truncated_line.jsonl", err), KBI_ERR_INPUT);
    cr_assert(strstr(err, "bad_truncated_line.jsonl:3: not a JSON object") != NULL, "%s", err);
    cr_assert(strstr(err, "expected one results record per line") != NULL, "%s", err);
}

Test(report_input, truncated_last_line_is_a_warning)
{
    kbi_result_set set = {0};
    char err[KBI_ERR_SIZE] = "";
    int truncated = 0;
    cr_assert_eq(kbi_results_load(&set, DATA "/truncated_tail.jsonl", err), KBI_OK, "%s", err);
    cr_assert_eq(set.n_cases, 2);
    for (size_t i = 0; i < set.n_warnings; i++)
        truncated |= strstr(set.warnings[i], "truncated_tail.jsonl:4: truncated") != NULL;
    cr_assert(truncated);
    kbi_results_free(&set);
}

Test(report_input, another_schema_version)
{
    char err[KBI_ERR_SIZE] = "";
    cr_assert_eq(load_err("bad_version.jsonl", err), KBI_ERR_INPUT);
    cr_assert(strstr(err, "bad_version.jsonl:1: results schema version 99, expected 1 to 5") !=
                  NULL,
              "%s", err);
}

Test(report_input, bad_status)
{
    char err[KBI_ERR_SIZE] = "";
    cr_assert_eq(load_err("bad_status.jsonl", err), KBI_ERR_INPUT);
    cr_assert(strstr(err, "bad_status.jsonl:3: case record without a valid \"status\"") != NULL,
              "%s", err);
}

Test(report_input, an_error_leaves_earlier_files_intact)
{
    kbi_result_set set = {0};
    const char *paths[] = {DATA "/stream_h200.jsonl", DATA "/bad_version.jsonl"};
    char err[KBI_ERR_SIZE] = "";
    cr_assert_eq(kbi_results_load_inputs(&set, paths, 2, err), KBI_ERR_INPUT);
    cr_assert_eq(set.n_cases, 15);
    cr_assert_eq(set.n_envs, 1);
    kbi_results_free(&set);
}

Test(report_cmd, exit_codes, .init = make_tmp, .fini = remove_tmp)
{
    char out[512], md[600];
    char *ok[] = {"report", DATA "/stream_h200.jsonl", "--out", out, "--no-charts", NULL};
    char *missing[] = {"report", DATA "/nope.jsonl", NULL};
    char *trunc[] = {"report", DATA "/bad_truncated_line.jsonl", "--out", out, NULL};
    char *none[] = {"report", NULL};
    char *help[] = {"report", "--help", NULL};
    char *bogus[] = {"report", "--bogus", DATA "/stream_h200.jsonl", NULL};
    struct stat st;
    snprintf(out, sizeof out, "%s/cmd", tmp);
    cr_redirect_stdout();
    cr_redirect_stderr();
    cr_assert_eq(kbi_cmd_report(5, ok), 0);
    snprintf(md, sizeof md, "%s/report.md", out);
    cr_assert_eq(stat(md, &st), 0);
    cr_assert_eq(kbi_cmd_report(2, missing), 2);
    cr_assert_eq(kbi_cmd_report(4, trunc), 2);
    cr_assert_eq(kbi_cmd_report(1, none), 2);
    cr_assert_eq(kbi_cmd_report(2, help), 0);
    cr_assert_eq(kbi_cmd_report(3, bogus), 2);
}

Test(report_cmd, error_names_file_and_line_on_stderr)
{
    char *trunc[] = {"report", DATA "/bad_truncated_line.jsonl", NULL};
    char text[2048] = "";
    FILE *f;
    size_t n;
    cr_redirect_stderr();
    cr_assert_eq(kbi_cmd_report(2, trunc), 2);
    fflush(stderr);
    f = cr_get_redirected_stderr();
    n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    cr_assert(strncmp(text, "kbench report: " DATA "/bad_truncated_line.jsonl:3: not a JSON",
                      strlen("kbench report: " DATA "/bad_truncated_line.jsonl:3: not a JSON")) ==
                  0,
              "stderr: %s", text);
}

Test(report_merge, shards_of_one_sweep_are_one_run_beside_a_rerun, .init = make_tmp,
     .fini = remove_tmp)
{
    const char *names[] = {"stream_shard1.jsonl", "stream_shard2.jsonl", "stream_h200_rerun.jsonl"};
    kbi_report_options opt = {.no_charts = 1};
    char *md = write_report(names, 3, &opt);
    /* The two shards make one row per variant; the rerun its own. */
    cr_assert(strstr(md, "| triad | R1+R2 | ok |") != NULL);
    cr_assert(strstr(md, "| triad | R3 | ok |") != NULL);
    cr_assert(strstr(md, "| memcpy (baseline) | R1+R2 | ok |") != NULL);
    free(md);
}

/* ---- declared metrics (results version 2) ---- */

/* Writes tmp/lab.jsonl: a sweep over L (the size parameter) and T with
 * dims and an integer list as arrays, a moment ratio (no direction) and an
 * energy drift (lower is better, bound <= 3e-4) with uncertainties; the
 * drift of L=16, T=2.4 lies outside its bound.  vary_t 0: T is fixed. */
static void write_lab(char *path, size_t n, int vary_t)
{
    static double samples[] = {1e-3, 1.01e-3, 0.99e-3};
    static const int Ls[] = {8, 16};
    static const double Ts[] = {2.2, 2.3, 2.4};
    kbi_results_writer w;
    char err[KBI_ERR_SIZE];
    json_t *env = json_pack("{s:n}", "device"), *end = json_pack("{s:b}", "complete", 1);
    snprintf(path, n, "%s/lab.jsonl", tmp);
    cr_assert_eq(kbi_results_open(&w, path, "r1", err), KBI_OK, "%s", err);
    cr_assert_eq(kbi_results_write(&w, "env", env, err), KBI_OK, "%s", err);
    for (int li = 0; li < 2; li++)
        for (int ti = 0; ti < (vary_t ? 3 : 1); ti++) {
            int L = Ls[li];
            double T = Ts[ti];
            char id[128], text[96];
            int oob = L == 16 && ti == 2;
            kbi_metric m[2] = {
                {"moment_ratio", "1", 1.2 - 0.1 * ti * L / 8.0, 0.01, KB_BETTER_NONE, 0, 0, 0, 1, 1,
                 0, 0, 0, 0, 0},
                {"energy_drift", "1", oob ? 4e-4 : 1e-5 * L, 1e-6, KB_BETTER_LOWER, KB_BOUND_HIGH,
                 0, 3e-4, 1, !oob, 0, 0, 0, 0, 0},
            };
            kbi_case_result c;
            json_t *rec;
            memset(&c, 0, sizeof c);
            snprintf(text, sizeof text, "L=%d,T=%g,perm=[0,2,1],shape=4x4", L, T);
            snprintf(id, sizeof id, "lab/hostuf/%s", text);
            c.index = li * 3 + ti;
            c.id = id;
            c.plugin = "lab";
            c.variant = "hostuf";
            c.target = "host";
            c.baseline = "";
            c.params = json_pack("{s:i, s:f, s:[i,i,i], s:[i,i]}", "L", L, "T", T, "perm", 0, 2, 1,
                                 "shape", 4, 4);
            c.params_text = text;
            c.size_param = "L";
            c.status = oob ? KBI_ST_VERIFY_FAILED : KBI_ST_OK;
            c.message = oob ? "metric energy_drift 0.0004 above its bound 0.0003" : "";
            c.prepare_s = c.wall_s = NAN;
            c.samples = samples;
            c.n_samples = 3;
            c.has_stats = 1;
            kbi_stats_compute(samples, 3, &c.stats);
            c.has_counts = 1;
            c.items = L * L;
            c.item_unit = "spin flips";
            c.items_per_s = c.items / c.stats.median;
            c.metrics = m;
            c.n_metrics = 2;
            rec = kbi_case_record_json(&c);
            cr_assert_eq(kbi_results_write(&w, "case", rec, err), KBI_OK, "%s", err);
            json_decref(rec);
            json_decref(c.params);
        }
    cr_assert_eq(kbi_results_write(&w, "end", end, err), KBI_OK, "%s", err);
    kbi_results_close(&w);
    json_decref(env);
    json_decref(end);
}

Test(report_metrics, table_shows_uncertainty_unit_direction_and_bound, .init = make_tmp,
     .fini = remove_tmp)
{
    char path[512], out[512], md_path[600], csv_path[600], *md, *csv;
    const char *inputs[1];
    kbi_result_set set = {0};
    kbi_report_options opt = {.no_charts = 1};
    char err[KBI_ERR_SIZE] = "";
    write_lab(path, sizeof path, 1);
    inputs[0] = path;
    cr_assert_eq(kbi_results_load_inputs(&set, inputs, 1, err), KBI_OK, "%s", err);
    snprintf(out, sizeof out, "%s/rep", tmp);
    cr_assert_eq(kbi_report_write(&set, out, &opt, err), KBI_OK, "%s", err);
    kbi_results_free(&set);
    snprintf(md_path, sizeof md_path, "%s/report.md", out);
    snprintf(csv_path, sizeof csv_path, "%s/results.csv", out);
    md = slurp(md_path);
    cr_expect(strstr(md, "### Metrics of `lab`") != NULL, "%s", md);
    cr_expect(strstr(md, "| case | variant | moment_ratio | energy_drift (lower is better; ≤ "
                         "0.0003) |") != NULL,
              "%s", md);
    cr_expect(strstr(md, "| L=8, T=2.2 | hostuf | 1.2 ± 0.01 | 8e-05 ± 1e-06 |") != NULL, "%s", md);
    cr_expect(strstr(md, "| L=16, T=2.4 | hostuf | 0.8 ± 0.01 | **0.0004 ± 1e-06 ✗** |") != NULL,
              "%s", md);
    cr_expect(strstr(md, "outside its declared bound (1)") != NULL);
    /* A heading names what varies; what every case shares is said once, dims and integer
     * lists given as arrays spelled as the profile spells them. */
    cr_expect(strstr(md, "### L=8, T=2.2\n") != NULL, "%s", md);
    cr_expect(strstr(md, "Every case has perm=[0,2,1], shape=4x4; each heading names what "
                         "varies.") != NULL,
              "%s", md);
    free(md);
    csv = slurp(csv_path);
    cr_expect(strstr(csv, ",metric_moment_ratio,metric_moment_ratio_uncertainty,"
                          "metric_energy_drift,metric_energy_drift_uncertainty,") != NULL,
              "%s", csv);
    cr_expect(strstr(csv, ",8,2.2,\"[0,2,1]\",4x4,ok,") != NULL, "%s", csv);
    cr_expect(strstr(csv, ",1.2,0.01,8e-05,1e-06,") != NULL, "%s", csv);
    free(csv);
}

Test(report_metrics, version_1_metrics_keep_their_table, .init = make_tmp, .fini = remove_tmp)
{
    const char *names[] = {"sgemm_h200.jsonl"};
    kbi_report_options opt = {.no_charts = 1};
    char *md = write_report(names, 1, &opt);
    cr_expect(strstr(md, "### Metrics of `sgemm`") != NULL);
    cr_expect(strstr(md, "| registers (regs/thread) | smem (B/block) |") != NULL);
    cr_expect(strstr(md, "outside its declared bound") == NULL, "no bound, nothing out of it");
    cr_expect(strstr(md, " ✗** |") == NULL);
    free(md);
}

/* The text of report.md from `heading` up to the next heading of its level. */
static char *section_of(const char *md, const char *heading)
{
    const char *a = strstr(md, heading), *b;
    char *s;
    cr_assert_not_null(a, "no %s in report.md", heading);
    b = strstr(a + strlen(heading), "\n#");
    s = strndup(a, b ? (size_t)(b - a) : strlen(a));
    cr_assert_not_null(s);
    return s;
}

/* Two profile sections of one plugin with their own baselines (as
 * profiles/default.ini's [stream], baseline memcpy, and [stream.host],
 * baseline host_copy; the host cases are H200 figures renamed): each table,
 * each chart and the summary name the baseline the figures are against. */
Test(report_md, each_section_names_its_own_baseline, .init = make_tmp, .fini = remove_tmp)
{
    const char *names[] = {"stream_two_baselines.jsonl"};
    kbi_report_options opt = {.gnuplot = ""};
    char *md = write_report(names, 1, &opt), *dev, *host, *gp, path[600];
    dev = section_of(md, "### bytes=16777216");
    host = section_of(md, "### bytes=268435456");
    cr_assert(strstr(dev, "| speedup vs memcpy |") != NULL, "%s", dev);
    cr_assert(strstr(dev, "| memcpy (baseline) |") != NULL, "%s", dev);
    cr_assert(strstr(dev, "| 0.77× |") != NULL, "%s", dev);
    cr_assert(strstr(host, "| speedup vs host_copy |") != NULL, "%s", host);
    cr_assert(strstr(host, "memcpy") == NULL, "%s", host);
    cr_assert(strstr(host, "| host_copy (baseline) |") != NULL, "%s", host);
    cr_assert(strstr(host, "| 0.68× |") != NULL, "%s", host);
    cr_assert(strstr(md, "baseline variants `memcpy`, `host_copy`") != NULL);
    /* One speedup chart per baseline, each saying which is 1. */
    snprintf(path, sizeof path, "%s/rep/charts/stream-speedup-host_copy.gp", tmp);
    gp = slurp(path);
    cr_assert(strstr(gp, "'host_copy = 1'") != NULL, "%s", gp);
    cr_assert(strstr(gp, "memcpy") == NULL, "%s", gp);
    free(gp);
    snprintf(path, sizeof path, "%s/rep/charts/stream-speedup-memcpy.gp", tmp);
    gp = slurp(path);
    cr_assert(strstr(gp, "'memcpy = 1'") != NULL, "%s", gp);
    cr_assert(strstr(gp, "host_") == NULL, "%s", gp);
    free(gp);
    free(dev);
    free(host);
    free(md);
}

/* ---- what the samples say, and what is not a timing ---- */

/* The report of DATA/name with the first `from` replaced by `to` (written
 * to tmp/in.jsonl first). */
static char *report_of_edited(const char *name, const char *from, const char *to)
{
    char src[600], in[600], out[600], md[640], err[KBI_ERR_SIZE] = "";
    kbi_report_options opt = {.gnuplot = ""};
    kbi_result_set set = {0};
    const char *paths[1] = {in};
    char *text, *at;
    FILE *f;
    snprintf(src, sizeof src, "%s/%s", DATA, name);
    snprintf(in, sizeof in, "%s/in.jsonl", tmp);
    text = slurp(src);
    at = strstr(text, from);
    cr_assert_not_null(at, "%s not in %s", from, name);
    f = fopen(in, "w");
    cr_assert_not_null(f);
    fwrite(text, 1, (size_t)(at - text), f);
    fputs(to, f);
    fputs(at + strlen(from), f);
    fclose(f);
    free(text);
    cr_assert_eq(kbi_results_load_inputs(&set, paths, 1, err), KBI_OK, "%s", err);
    snprintf(out, sizeof out, "%s/rep", tmp);
    cr_assert_eq(kbi_report_write(&set, out, &opt, err), KBI_OK, "%s", err);
    kbi_results_free(&set);
    snprintf(md, sizeof md, "%s/report.md", out);
    return slurp(md);
}

Test(report_md, stored_stats_do_not_overrule_the_samples, .init = make_tmp, .fini = remove_tmp)
{
    /* Issue 15, item 4: the first case's stored median multiplied by 1000. */
    char *md = report_of_edited("stream_h200.jsonl", "\"median\":1.267003203e-05",
                                "\"median\":1.267003203e-02");
    cr_expect_not_null(strstr(md, "| copy | ok | 12.67 µs |"), "the samples' median is shown");
    cr_expect_null(strstr(md, "12.67 ms"), "the stored median is not");
    cr_expect_not_null(strstr(md, "in.jsonl:2: stored stats.median"), "warned with file:line");
    free(md);
}

Test(report_md, a_sanitized_run_is_not_timings, .init = make_tmp, .fini = remove_tmp)
{
    /* Issue 15, item 9: an env record saying --sanitize (older files' case
     * records do not say it themselves). */
    char *md = report_of_edited("stream_h200.jsonl", "\"record\":\"env\",",
                                "\"record\":\"env\",\"sanitize\":\"memcheck\",");
    cr_expect_not_null(strstr(md, "**Not timings:** 15 cases come from a `--sanitize` run"));
    cr_expect_not_null(strstr(md, "| triad | ok | not a timing (803.7 µs under a sanitizer) |"));
    cr_expect_null(strstr(md, "| 4008 |"), "no rate from a sanitized time");
    cr_expect_null(strstr(md, "| 0.65× |"), "no speedup from a sanitized time");
    free(md);
}

Test(report_format, absurd_durations_stay_short)
{
    char b[64];
    kbi_format_duration(1e308, b, sizeof b);
    cr_expect_str_eq(b, "1e+308 s");
    kbi_format_duration(2.5e7, b, sizeof b);
    cr_expect_str_eq(b, "2.5e+07 s");
}

Test(report_md, energy_columns_env_row_and_power_chart, .init = make_tmp, .fini = remove_tmp)
{
    kbi_result_set set = {0};
    kbi_report_options opt = {.gnuplot = ""};
    char err[KBI_ERR_SIZE] = "", out[512], path[600], *md, *csv;
    kbi_env_record *e;
    size_t measured = 0;
    struct stat st;
    load(&set, "stream_h200.jsonl");
    e = &set.envs[0];
    json_object_set_new(json_object_get(e->json, "run"), "energy", json_string("on"));
    json_object_set_new(json_object_get(e->json, "run"), "energy_window", json_real(2));
    json_object_set_new(json_object_get(e->json, "run"), "energy_windows", json_integer(3));
    json_object_set_new(e->json, "energy",
                        json_pack("{s:b, s:f, s:f, s:f}", "counter", 1, "idle_w", 81.5, "period_s",
                                  0.1, "power_limit_w", 700.0));
    e->idle_watts = 81.5;
    e->power_limit_watts = 700;
    for (size_t i = 0; i < set.n_cases; i++) {
        kbi_case_result *c = &set.cases[i];
        if (c->status != KBI_ST_OK || strcmp(c->target, "device") != 0)
            continue;
        c->has_energy = 1;
        if (strcmp(c->variant, "triad") == 0) {
            kbi_energy_not_measured(&c->energy, "window too short to measure: test");
            continue;
        }
        c->energy = (kbi_case_energy){.measured = 1,
                                      .j_per_run = 2.5e-3 * (double)(i + 1),
                                      .j_per_run_u = 2.5e-5 * (double)(i + 1),
                                      .watts = 612,
                                      .windows = 3};
        kbi_case_energy_derive(&c->energy, c->flops, c->bytes);
        measured++;
    }
    cr_assert_gt(measured, 0);
    snprintf(out, sizeof out, "%s/rep", tmp);
    cr_assert_eq(kbi_report_write(&set, out, &opt, err), KBI_OK, "%s", err);
    kbi_results_free(&set);
    snprintf(path, sizeof path, "%s/report.md", out);
    md = slurp(path);
    cr_expect(strstr(md, "| energy | idle 81.5 W, limit 700 W, counter steps every 0.1 s; 3 "
                         "windows of ≥ 2 s per case |") != NULL,
              "%s", md);
    cr_expect(strstr(md, "| energy per run | power | GFLOP/J | GB/J | notes |") != NULL, "%s", md);
    /* copy at the first point: 2.5 mJ a run, 33.5 MB a run (of 16 MiB arrays) over it. */
    cr_expect(strstr(md, "| exact | 2.500 mJ ± 1.0% | 612 W | — | 13.42 |") != NULL, "%s", md);
    cr_expect(strstr(md, "| not measured | — | — | — | energy: window too short to measure: "
                         "test") != NULL,
              "%s", md);
    free(md);
    snprintf(path, sizeof path, "%s/results.csv", out);
    csv = slurp(path);
    cr_expect(strstr(csv, ",energy_j_per_run,energy_j_per_run_u,energy_watts,") != NULL);
    cr_expect(strstr(csv, "window too short to measure: test") != NULL);
    free(csv);
    /* The rate against the power: scripts are written even without gnuplot. */
    snprintf(path, sizeof path, "%s/charts/stream-power.gp", out);
    cr_expect_eq(stat(path, &st), 0, "%s", path);
}

/* ---- what the charts show (report_charts.c) ---- */

/* Writes cases to tmp/in.jsonl under an env record with these ceilings (0: none recorded) and
 * reports them into tmp/rep, scripts only (no gnuplot needed); returns report.md. */
static char *report_cases(kbi_case_result *cases, size_t n, double bandwidth, double peak,
                          double tf32)
{
    char path[512];
    json_t *env =
        json_pack("{s:{s:s}, s:{s:f, s:f, s:s}}", "device", "name", "Test GPU", "ceilings",
                  "bandwidth_gbs", bandwidth, "peak_gflops", peak, "source", "measured");
    if (tf32 > 0)
        json_object_set_new(json_object_get(env, "ceilings"), "tf32_gflops", json_real(tf32));
    snprintf(path, sizeof path, "%s/in.jsonl", tmp);
    for (size_t i = 0; i < n; i++)
        cases[i].index = (long)i;
    syn_write_run(path, "r1", env, cases, n);
    json_decref(env);
    return report_of_file(path, 0);
}

/* A chart file of the report in tmp/rep/charts. */
static char *chart_file(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/rep/charts/%s", tmp, name);
    return slurp(path);
}

/* The value, low and high of bar (data line) k of a bar chart's .dat. */
static void bar_of(const char *dat, int k, double *v, double *lo, double *hi)
{
    const char *p = dat;
    for (int i = 0; i <= k; i++) {
        do {
            p = strchr(p, '\n');
            cr_assert_not_null(p, "no bar %d in %s", k, dat);
            p++;
        } while (*p == '#' || *p == '\n');
    }
    cr_assert_eq(sscanf(p, "%*f %lf %lf %lf", v, lo, hi), 3, "%s", p);
}

/* A case of plugin p: variant v at n (params {"n": n}) taking t seconds per run, counting
 * flops, bytes and items; syn_free it. */
static void counted_case(kbi_case_result *c, const char *variant, int n, double t, double flops,
                         double bytes, double items)
{
    char params[64], text[32];
    snprintf(params, sizeof params, "{\"n\": %d}", n);
    snprintf(text, sizeof text, "n=%d", n);
    syn_case(c, "p", variant, params, text, t);
    c->params_text = strdup(text);
    c->has_counts = 1;
    c->flops = flops;
    c->bytes = bytes;
    c->items = items;
    c->item_unit = "spin flips";
    c->headline = "";
    c->roof = "";
}

static void counted_free(kbi_case_result *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(c[i].params_text);
        syn_free(&c[i]);
    }
}

Test(report_charts, bars_span_the_ci_of_the_median_not_one_outlier, .init = make_tmp,
     .fini = remove_tmp)
{
    kbi_case_result c[2];
    char *md, *dat, *gp;
    double v, lo, hi;
    counted_case(&c[0], "a", 1, 1e-3, 1e9, 0, 0);
    counted_case(&c[1], "b", 1, 2e-3, 1e9, 0, 0);
    /* One sample 100 times slower: min-max bars would reach down to 1% of the bar. */
    c[0].samples[0] = 0.1;
    kbi_stats_compute(c[0].samples, c[0].n_samples, &c[0].stats);
    md = report_cases(c, 2, 0, 0, 0);
    dat = chart_file("p-rate-n_1.dat");
    gp = chart_file("p-rate-n_1.gp");
    bar_of(dat, 0, &v, &lo, &hi);
    cr_expect(fabs(v - 1e9 / c[0].stats.median / 1e9) < 1e-6 * v, "%g", v);
    cr_expect_float_eq(lo, v * c[0].stats.median / c[0].stats.ci_high, 1e-6 * v);
    cr_expect_float_eq(hi, v * c[0].stats.median / c[0].stats.ci_low, 1e-6 * v);
    cr_expect(lo > 0.99 * v && hi < 1.01 * v, "bar %g from %g to %g", v, lo, hi);
    cr_expect(strstr(gp, "set ylabel 'GFLOP/s (median; bars: 95% CI of the median)'") != NULL, "%s",
              gp);
    counted_free(c, 2);
    kbi_free_all(3, md, dat, gp);
}

Test(report_charts, a_time_per_item_headline_charts_ns_per_item, .init = make_tmp,
     .fini = remove_tmp)
{
    kbi_case_result c[4];
    char *md, *dat, *gp;
    double v, lo, hi;
    /* 1e6 spin flips per run: 1 ms is 1 ns per spin flip. */
    counted_case(&c[0], "a", 1, 1e-3, 0, 4e6, 1e6);
    counted_case(&c[1], "b", 1, 2e-3, 0, 4e6, 1e6);
    counted_case(&c[2], "a", 2, 2e-3, 0, 8e6, 2e6);
    counted_case(&c[3], "b", 2, 5e-3, 0, 8e6, 2e6);
    for (int i = 0; i < 4; i++)
        c[i].headline = "time_per_item";
    md = report_cases(c, 4, 4000, 0, 0);
    cr_expect(strstr(md, "charts show ns per spin flip") != NULL, "%s", md);
    dat = chart_file("p-rate-n_1.dat");
    gp = chart_file("p-rate-n_1.gp");
    bar_of(dat, 0, &v, &lo, &hi);
    cr_expect(fabs(v - 1.0) < 0.01, "a: %g ns per spin flip", v);
    cr_expect(lo <= v && v <= hi && lo > 0.99, "%g %g %g", lo, v, hi);
    bar_of(dat, 1, &v, &lo, &hi);
    cr_expect(fabs(v - 2.0) < 0.02, "b: %g ns per spin flip", v);
    cr_expect(strstr(gp, "set ylabel 'ns per spin flip (median, lower is better; bars: 95% CI "
                         "of the median)'") != NULL,
              "%s", gp);
    cr_expect(strstr(gp, "GB/s") == NULL, "no roof of another quantity: %s", gp);
    free(dat);
    free(gp);
    /* The line against n in the same unit: b at n=2 is 2.5 ns per spin flip. */
    dat = chart_file("p-rate-vs-n.dat");
    cr_expect(strstr(dat, "\n2 2.49875 ") != NULL, "%s", dat);
    counted_free(c, 4);
    kbi_free_all(2, md, dat);
}

Test(report_charts, each_variant_is_drawn_under_the_roof_of_its_path, .init = make_tmp,
     .fini = remove_tmp)
{
    kbi_case_result c[4];
    char *md, *gp;
    /* 1e12 flops over 1e9 bytes per run: fp at 50 TFLOP/s, t3 (3xTF32) at 100. */
    counted_case(&c[0], "fp", 1, 0.02, 1e12, 1e9, 0);
    counted_case(&c[1], "t3", 1, 0.01, 1e12, 1e9, 0);
    counted_case(&c[2], "fp", 2, 0.02, 1e12, 1e9, 0);
    counted_case(&c[3], "t3", 2, 0.01, 1e12, 1e9, 0);
    c[1].roof = c[3].roof = "tf32x3";
    md = report_cases(c, 4, 4000, 60000, 450000);
    gp = chart_file("p-rate-n_1.gp");
    cr_expect(strstr(gp, "set label 'FP32 FMA peak: 60000 GFLOP/s'") != NULL, "%s", gp);
    cr_expect(strstr(gp, "set label 'TF32 tensor-core peak / 3 (3xTF32): 150000 GFLOP/s'") != NULL,
              "%s", gp);
    cr_expect(strstr(gp, "set arrow from first -0.350000, first 60000 to first 0.350000, first "
                         "60000 nohead") != NULL,
              "fp's roof over fp's bar: %s", gp);
    cr_expect(strstr(gp, "set arrow from first 0.650000, first 150000 to first 1.350000, first "
                         "150000 nohead") != NULL,
              "t3's roof over t3's bar: %s", gp);
    free(gp);
    gp = chart_file("p-rate-vs-n.gp");
    cr_expect(strstr(gp, "set arrow from graph 0, first 60000 to graph 1, first 60000") != NULL,
              "%s", gp);
    cr_expect(strstr(gp, "set arrow from graph 0, first 150000 to graph 1, first 150000") != NULL,
              "%s", gp);
    free(gp);
    gp = chart_file("p-roofline.gp");
    cr_expect(strstr(gp, "peak_0 = 60000 ") != NULL, "%s", gp);
    cr_expect(strstr(gp, "peak_1 = 150000 ") != NULL, "%s", gp);
    free(gp);
    free(md);
    /* A run that recorded no TF32 peak (before kbench measured it): no roof for t3, and the
     * report says why. */
    md = report_cases(c, 4, 4000, 60000, 0);
    gp = chart_file("p-rate-n_1.gp");
    cr_expect(strstr(gp, "150000") == NULL && strstr(gp, "TF32") == NULL, "%s", gp);
    cr_expect(strstr(md, "the roofline has no TF32 tensor-core peak / 3 (3xTF32) roof: the run "
                         "recorded no such ceiling") != NULL,
              "%s", md);
    counted_free(c, 4);
    kbi_free_all(2, md, gp);
}

Test(report_charts, an_older_results_file_reports_rates_under_the_fp32_roof, .init = make_tmp,
     .fini = remove_tmp)
{
    /* Version 1, written before headlines, roofs and the TF32 ceiling: tf32x3 is drawn
     * against the FP32 roof its counts imply, as kbench did then. */
    kbi_result_set set = {0};
    kbi_report_options opt = {.gnuplot = ""};
    const char *paths[] = {DATA "/sgemm_h200.jsonl"};
    char err[KBI_ERR_SIZE] = "", out[512], *md, *gp;
    cr_assert_eq(kbi_results_load_inputs(&set, paths, 1, err), KBI_OK, "%s", err);
    snprintf(out, sizeof out, "%s/rep", tmp);
    cr_assert_eq(kbi_report_write(&set, out, &opt, err), KBI_OK, "%s", err);
    kbi_results_free(&set);
    md = slurp(strcat(out, "/report.md"));
    cr_expect(strstr(md, "charts show GFLOP/s") != NULL);
    gp = chart_file("sgemm-rate-shape_4096x4096x256.gp");
    cr_expect(strstr(gp, "set label 'FP32 FMA peak: ") != NULL, "%s", gp);
    cr_expect(strstr(gp, "TF32") == NULL, "%s", gp);
    free(gp);
    gp = chart_file("sgemm-roofline.gp");
    cr_expect(strstr(gp, "peak_0 = ") != NULL && strstr(gp, "peak_1") == NULL, "%s", gp);
    kbi_free_all(2, md, gp);
}

Test(report_format, tic_labels_have_no_exponent_for_the_usual_magnitudes)
{
    static const struct {
        double v, step, top;
        const char *want;
    } cases[] = {
        {1048576, 0, 0, "1.05M"},   {1.5e6, 5e5, 2e6, "1.5M"},
        {2e6, 5e5, 2e6, "2.0M"},    {100000, 100000, 100000, "100k"},
        {5000, 1000, 8000, "5000"}, {0.25, 0.05, 0.3, "0.25"},
        {0, 0.05, 0.3, "0"},        {-1.4125, 0.0005, 1.4145, "-1.4125"},
        {2e-5, 1e-5, 5e-5, "2e-5"}, {1e-4, 0, 0, "1e-4"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[64];
        kbi_fmt_tic(cases[i].v, cases[i].step, cases[i].top, out, sizeof out);
        cr_expect_str_eq(out, cases[i].want, "%g (step %g, top %g)", cases[i].v, cases[i].step,
                         cases[i].top);
    }
}
