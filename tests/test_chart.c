/* Tests of chart.c: charts really drawn as PNG (signature checked) and SVG
 * when gnuplot is installed (skipped with a reason when it is not), scripts
 * and data kept beside them, and the failure paths: gnuplot missing, failing
 * with a message, or hanging past the timeout. */
#define _XOPEN_SOURCE 700
#include <criterion/criterion.h>

#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chart.h"
#include "report.h"
#include "results.h"
#include "helpers.h"

#define DATA KBENCH_TEST_DATA

static void make_tmp(void)
{
    make_tmp_named("chart");
}

static void need_gnuplot(void)
{
    char path[1024];
    if (kbi_gnuplot_find(path, sizeof path) != KBI_OK)
        cr_skip_test("gnuplot is not on PATH (install gnuplot-nox to test drawing)");
}

/* Whether path is a PNG: the 8-byte signature and an IHDR chunk. */
static int is_png(const char *path)
{
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    unsigned char head[16];
    FILE *f = fopen(path, "rb");
    size_t n;
    if (!f)
        return 0;
    n = fread(head, 1, sizeof head, f);
    fclose(f);
    return n == sizeof head && memcmp(head, sig, 8) == 0 && memcmp(head + 12, "IHDR", 4) == 0;
}


static void check_drawn(const char *dir, const char *stem)
{
    char path[1024], *svg, *gp;
    snprintf(path, sizeof path, "%s/%s.png", dir, stem);
    cr_assert(is_png(path), "%s is not a PNG", path);
    snprintf(path, sizeof path, "%s/%s.svg", dir, stem);
    svg = slurp(path);
    cr_assert(strstr(svg, "<svg") != NULL, "%s is not an SVG", path);
    free(svg);
    snprintf(path, sizeof path, "%s/%s.gp", dir, stem);
    gp = slurp(path);
    /* The script draws from the kept data file, by a relative name. */
    cr_assert(strstr(gp, "'") && strstr(gp, ".dat' index 0") != NULL, "%s", gp);
    free(gp);
    snprintf(path, sizeof path, "%s/%s.dat", dir, stem);
    cr_assert_eq(access(path, R_OK), 0);
}

static const char *variants[] = {"naive", "smem_tiled", "it's quoted", "cublas"};

Test(chart, bars_lines_and_roofline_are_drawn, .init = make_tmp, .fini = remove_tmp)
{
    kbi_chart_ctx ctx;
    char err[KBI_ERR_SIZE] = "";
    const char *groups[] = {"shape=1024x1024x1024", "shape=4096x4096x4096"};
    double v[] = {480, 5200, 19000, 33000, 520, NAN, 31000, 50500};
    double lo[] = {470, 5100, 18800, 32500, 510, NAN, 30500, 50000};
    double hi[] = {490, 5300, 19100, 33300, 530, NAN, 31100, 50800};
    double x[] = {1024, 4096}, y0[] = {480, 520}, y1[] = {33000, 50500};
    double ai[] = {170, 683};
    kbi_line_series lines[] = {
        {.name = "naive", .color = 0, .n = 2, .x = x, .y = y0},
        {.name = "cublas", .color = 3, .dashed = 1, .n = 2, .x = x, .y = y1},
    };
    kbi_line_series points[] = {
        {.name = "naive", .color = 0, .n = 2, .x = ai, .y = y0},
        {.name = "cublas", .color = 3, .n = 2, .x = ai, .y = y1},
    };
    kbi_bar_chart bars = {.stem = "bars",
                          .title = "sgemm: GFLOP/s",
                          .ylabel = "GFLOP/s",
                          .n_groups = 2,
                          .groups = groups,
                          .n_series = 4,
                          .series = variants,
                          .value = v,
                          .low = lo,
                          .high = hi,
                          .value_labels = 1};
    kbi_line_chart lc = {.stem = "lines",
                         .title = "sgemm: GFLOP/s against n",
                         .xlabel = "n",
                         .ylabel = "GFLOP/s",
                         .n_series = 2,
                         .series = lines};
    kbi_roofline rl = {.stem = "roof",
                       .title = "sgemm: roofline",
                       .bandwidth_gbs = 4180,
                       .peak_gflops = 67000,
                       .ceiling_source = "measured",
                       .n_series = 2,
                       .series = points};
    need_gnuplot();
    cr_assert_eq(kbi_chart_init(&ctx, tmp, NULL, 60, err), KBI_OK, "%s", err);
    cr_assert_not_null(ctx.gnuplot, "%s", ctx.why_not);
    cr_assert_eq(kbi_chart_bars(&ctx, &bars, err), KBI_OK, "%s / %s", err,
                 ctx.n_warnings ? ctx.warnings[0] : "");
    cr_assert_eq(kbi_chart_lines(&ctx, &lc, err), KBI_OK, "%s / %s", err,
                 ctx.n_warnings ? ctx.warnings[0] : "");
    cr_assert_eq(kbi_chart_roofline(&ctx, &rl, err), KBI_OK, "%s / %s", err,
                 ctx.n_warnings ? ctx.warnings[0] : "");
    cr_assert_eq(ctx.n_warnings, 0, "%s", ctx.n_warnings ? ctx.warnings[0] : "");
    cr_assert_eq(ctx.n_drawn, 3);
    check_drawn(tmp, "bars");
    check_drawn(tmp, "lines");
    check_drawn(tmp, "roof");
    {
        /* Values spanning two decades: a log axis. */
        char path[1024], *gp;
        snprintf(path, sizeof path, "%s/bars.gp", tmp);
        gp = slurp(path);
        cr_assert(strstr(gp, "set logscale y") != NULL);
        free(gp);
    }
    kbi_chart_free(&ctx);
}

Test(chart, empty_chart_is_an_input_error, .init = make_tmp, .fini = remove_tmp)
{
    kbi_chart_ctx ctx;
    char err[KBI_ERR_SIZE] = "";
    double v[] = {NAN};
    const char *one[] = {"a"};
    kbi_bar_chart bars = {.stem = "empty",
                          .title = "t",
                          .n_groups = 1,
                          .groups = one,
                          .n_series = 1,
                          .series = one,
                          .value = v};
    cr_assert_eq(kbi_chart_init(&ctx, tmp, "", 60, err), KBI_OK);
    cr_assert_eq(kbi_chart_bars(&ctx, &bars, err), KBI_ERR_INPUT);
    cr_assert(strstr(err, "empty") != NULL, "%s", err);
    kbi_chart_free(&ctx);
}

Test(chart, missing_gnuplot_keeps_the_scripts, .init = make_tmp, .fini = remove_tmp)
{
    kbi_chart_ctx ctx;
    char err[KBI_ERR_SIZE] = "", path[1024];
    double v[] = {1, 2};
    const char *g[] = {"p"}, *s[] = {"a", "b"};
    kbi_bar_chart bars = {.stem = "b",
                          .title = "t",
                          .ylabel = "y",
                          .n_groups = 1,
                          .groups = g,
                          .n_series = 2,
                          .series = s,
                          .value = v};
    cr_assert_eq(kbi_chart_init(&ctx, tmp, "/nonexistent/gnuplot", 60, err), KBI_OK);
    cr_assert_null(ctx.gnuplot);
    cr_assert(strstr(ctx.why_not, "/nonexistent/gnuplot is not an executable") != NULL, "%s",
              ctx.why_not);
    cr_assert_eq(kbi_chart_bars(&ctx, &bars, err), KBI_CHART_NOT_DRAWN);
    snprintf(path, sizeof path, "%s/b.gp", tmp);
    cr_assert_eq(access(path, R_OK), 0);
    snprintf(path, sizeof path, "%s/b.png", tmp);
    cr_assert_neq(access(path, F_OK), 0);
    kbi_chart_free(&ctx);
}

Test(chart, not_on_path, .init = make_tmp, .fini = remove_tmp)
{
    char *old = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
    char found[1024];
    kbi_chart_ctx ctx;
    char err[KBI_ERR_SIZE] = "";
    unsetenv("KBENCH_GNUPLOT");
    setenv("PATH", tmp, 1);
    cr_assert_neq(kbi_gnuplot_find(found, sizeof found), KBI_OK);
    cr_assert_eq(kbi_chart_init(&ctx, tmp, NULL, 60, err), KBI_OK);
    cr_assert_null(ctx.gnuplot);
    cr_assert(strstr(ctx.why_not, "not found on PATH") != NULL, "%s", ctx.why_not);
    kbi_chart_free(&ctx);
    if (old) {
        setenv("PATH", old, 1);
        free(old);
    }
}

static void fake_gnuplot(const char *path, const char *body)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "#!/bin/sh\n%s\n", body);
    fclose(f);
    chmod(path, 0755);
}

Test(chart, failing_gnuplot_is_a_warning_with_its_message, .init = make_tmp, .fini = remove_tmp)
{
    kbi_chart_ctx ctx;
    char err[KBI_ERR_SIZE] = "", fake[1024];
    double v[] = {1, 2};
    const char *g[] = {"p"}, *s[] = {"a", "b"};
    kbi_bar_chart bars = {.stem = "b",
                          .title = "t",
                          .ylabel = "y",
                          .n_groups = 1,
                          .groups = g,
                          .n_series = 2,
                          .series = s,
                          .value = v};
    snprintf(fake, sizeof fake, "%s/fake-gnuplot", tmp);
    fake_gnuplot(fake, "echo \"line 7: unknown terminal type 'pngcairo'\" >&2\nexit 1");
    cr_assert_eq(kbi_chart_init(&ctx, tmp, fake, 60, err), KBI_OK);
    cr_assert_eq(kbi_chart_bars(&ctx, &bars, err), KBI_CHART_NOT_DRAWN);
    cr_assert_eq(ctx.n_warnings, 1);
    cr_assert(strstr(ctx.warnings[0], "chart b: gnuplot b.gp failed (exit status 1): line 7: "
                                      "unknown terminal type") != NULL,
              "%s", ctx.warnings[0]);
    kbi_chart_free(&ctx);
}

Test(chart, hanging_gnuplot_is_stopped, .init = make_tmp, .fini = remove_tmp)
{
    kbi_chart_ctx ctx;
    char err[KBI_ERR_SIZE] = "", fake[1024];
    double v[] = {1, 2}, t0;
    const char *g[] = {"p"}, *s[] = {"a", "b"};
    kbi_bar_chart bars = {.stem = "b",
                          .title = "t",
                          .ylabel = "y",
                          .n_groups = 1,
                          .groups = g,
                          .n_series = 2,
                          .series = s,
                          .value = v};
    snprintf(fake, sizeof fake, "%s/slow-gnuplot", tmp);
    fake_gnuplot(fake, "exec sleep 30");
    cr_assert_eq(kbi_chart_init(&ctx, tmp, fake, 0.3, err), KBI_OK);
    t0 = kbi_now();
    cr_assert_eq(kbi_chart_bars(&ctx, &bars, err), KBI_CHART_NOT_DRAWN);
    cr_assert_lt(kbi_now() - t0, 5.0);
    cr_assert_eq(ctx.n_warnings, 1);
    cr_assert(strstr(ctx.warnings[0], "took more than 0.3 s and was stopped") != NULL, "%s",
              ctx.warnings[0]);
    kbi_chart_free(&ctx);
}

/* The whole report with gnuplot: every chart kind drawn and embedded. */
Test(chart, report_draws_and_embeds_every_chart, .init = make_tmp, .fini = remove_tmp)
{
    kbi_result_set set = {0};
    const char *paths[] = {DATA "/sgemm_h200.jsonl", DATA "/stream_h200.jsonl"};
    static const char *const stems[] = {
        "sgemm-rate-shape_4096x4096x256",
        "sgemm-rate-vs-shape",
        "sgemm-speedup",
        "sgemm-roofline",
        "stream-rate-vs-bytes",
        "stream-rate-bytes_16777216",
    };
    char err[KBI_ERR_SIZE] = "", out[512], charts[600], path[1024], *md;
    need_gnuplot();
    cr_assert_eq(kbi_results_load_inputs(&set, paths, 2, err), KBI_OK, "%s", err);
    snprintf(out, sizeof out, "%s/rep", tmp);
    cr_assert_eq(kbi_report_write(&set, out, NULL, err), KBI_OK, "%s", err);
    kbi_results_free(&set);
    snprintf(charts, sizeof charts, "%s/charts", out);
    snprintf(path, sizeof path, "%s/report.md", out);
    md = slurp(path);
    cr_assert(strstr(md, "Charts were not drawn") == NULL);
    cr_assert(strstr(md, "## Warnings") == NULL, "gnuplot warned: %s", strstr(md, "## Warn"));
    for (size_t i = 0; i < sizeof stems / sizeof stems[0]; i++) {
        char embed[300];
        check_drawn(charts, stems[i]);
        snprintf(embed, sizeof embed, "](charts/%s.png)", stems[i]);
        cr_assert(strstr(md, embed) != NULL, "%s is not embedded", stems[i]);
    }
    free(md);
}

Test(chart, report_without_gnuplot_says_why, .init = make_tmp, .fini = remove_tmp)
{
    kbi_result_set set = {0};
    const char *paths[] = {DATA "/stream_h200.jsonl"};
    kbi_report_options opt = {.gnuplot = "/nonexistent/gnuplot"};
    char err[KBI_ERR_SIZE] = "", out[512], path[1024], *md;
    cr_assert_eq(kbi_results_load_inputs(&set, paths, 1, err), KBI_OK, "%s", err);
    snprintf(out, sizeof out, "%s/rep", tmp);
    cr_assert_eq(kbi_report_write(&set, out, &opt, err), KBI_OK, "%s", err);
    kbi_results_free(&set);
    snprintf(path, sizeof path, "%s/report.md", out);
    md = slurp(path);
    cr_assert(strstr(md, "**Charts were not drawn**: /nonexistent/gnuplot is not an "
                         "executable file") != NULL);
    cr_assert(strstr(md, "![") == NULL);
    snprintf(path, sizeof path, "%s/charts/stream-rate-vs-bytes.gp", out);
    cr_assert_eq(access(path, R_OK), 0, "the scripts are kept to draw later");
    free(md);
}

/* ---- metric charts ---- */

/* Writes tmp/lab.jsonl: a moment ratio (declared, with an uncertainty)
 * over L (the size parameter) and, when vary_t, over T too. */
static void write_lab(char *path, size_t n, int vary_t)
{
    static double samples[] = {1e-3, 1.01e-3, 0.99e-3};
    kbi_results_writer w;
    char err[KBI_ERR_SIZE];
    json_t *env = json_pack("{s:n}", "device");
    snprintf(path, n, "%s/lab.jsonl", tmp);
    cr_assert_eq(kbi_results_open(&w, path, "r1", err), KBI_OK, "%s", err);
    cr_assert_eq(kbi_results_write(&w, "env", env, err), KBI_OK, "%s", err);
    json_decref(env);
    for (int L = 8; L <= 32; L *= 2)
        for (int ti = 0; ti < (vary_t ? 3 : 1); ti++) {
            double T = 2.2 + 0.1 * ti;
            char id[128], text[96];
            kbi_metric m = {
                "moment_ratio", "1", 1.2 - 0.01 * ti * L, 0.005 * L, KB_BETTER_NONE, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0};
            kbi_case_result c;
            json_t *rec;
            memset(&c, 0, sizeof c);
            snprintf(text, sizeof text, "L=%d,T=%g", L, T);
            snprintf(id, sizeof id, "lab/hostuf/%s", text);
            c.index = -1;
            c.id = id;
            c.plugin = "lab";
            c.variant = "hostuf";
            c.target = "host";
            c.baseline = "";
            c.params = json_pack("{s:i, s:f}", "L", L, "T", T);
            c.params_text = text;
            c.size_param = "L";
            c.status = KBI_ST_OK;
            c.message = "";
            c.prepare_s = c.wall_s = NAN;
            c.samples = samples;
            c.n_samples = 3;
            c.has_stats = 1;
            kbi_stats_compute(samples, 3, &c.stats);
            c.metrics = &m;
            c.n_metrics = 1;
            rec = kbi_case_record_json(&c);
            cr_assert_eq(kbi_results_write(&w, "case", rec, err), KBI_OK, "%s", err);
            json_decref(rec);
            json_decref(c.params);
        }
    kbi_results_close(&w);
}

/* Writes the report of tmp/lab.jsonl into tmp/rep; returns report.md. */
static char *report_lab(int vary_t, int draw)
{
    kbi_result_set set = {0};
    kbi_report_options opt = {.gnuplot = draw ? NULL : ""};
    char path[512], out[512], md[600], err[KBI_ERR_SIZE] = "";
    const char *inputs[1] = {path};
    write_lab(path, sizeof path, vary_t);
    cr_assert_eq(kbi_results_load_inputs(&set, inputs, 1, err), KBI_OK, "%s", err);
    snprintf(out, sizeof out, "%s/rep", tmp);
    cr_assert_eq(kbi_report_write(&set, out, &opt, err), KBI_OK, "%s", err);
    kbi_results_free(&set);
    snprintf(md, sizeof md, "%s/report.md", out);
    return slurp(md);
}

Test(chart, metric_against_t_one_line_per_size, .init = make_tmp, .fini = remove_tmp)
{
    char dat[600], gp[600], *md, *d, *g;
    need_gnuplot();
    md = report_lab(1, 1);
    cr_assert(strstr(md, "](charts/lab-metric-moment_ratio-vs-T.png)") != NULL, "%s", md);
    cr_expect(strstr(md, "lab-metric-moment_ratio-vs-L") == NULL, "x is T, not the size");
    snprintf(dat, sizeof dat, "%s/rep/charts", tmp);
    check_drawn(dat, "lab-metric-moment_ratio-vs-T");
    snprintf(dat, sizeof dat, "%s/rep/charts/lab-metric-moment_ratio-vs-T.dat", tmp);
    snprintf(gp, sizeof gp, "%s/rep/charts/lab-metric-moment_ratio-vs-T.gp", tmp);
    d = slurp(dat);
    g = slurp(gp);
    /* One line per L, points at T with bars of ± the uncertainty. */
    cr_expect(strstr(d, "# series 0: L=8\n2.2 1.2 1.16 1.24\n2.3 1.12 1.08 1.16\n") != NULL, "%s",
              d);
    cr_expect(strstr(d, "# series 2: L=32\n2.2 1.2 1.04 1.36\n") != NULL, "%s", d);
    cr_expect(strstr(g, "title 'L=16'") != NULL);
    cr_expect(strstr(g, "one line per L") != NULL);
    cr_expect(strstr(g, "set yrange [0:") == NULL, "the y range fits the data");
    free(d);
    free(g);
    free(md);
}

Test(chart, metric_against_the_size_when_only_it_varies, .init = make_tmp, .fini = remove_tmp)
{
    char dat[600], *md, *d;
    md = report_lab(0, 0); /* scripts and data only */
    snprintf(dat, sizeof dat, "%s/rep/charts/lab-metric-moment_ratio-vs-L.dat", tmp);
    d = slurp(dat);
    cr_expect(strstr(d, "# series 0: hostuf\n8 1.2 1.16 1.24\n16 1.2 1.12 1.28\n32 1.2 1.04 "
                        "1.36\n") != NULL,
              "%s", d);
    free(d);
    free(md);
}
