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

/* The file name of tmp, read whole. */
static char *slurp_chart(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", tmp, name);
    return slurp(path);
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
    kbi_roof peaks[] = {{67000, "FP32 FMA peak: 67000 GFLOP/s"},
                        {150000, "TF32 tensor-core peak / 3 (3xTF32): 150000 GFLOP/s"}};
    kbi_roofline rl = {.stem = "roof",
                       .title = "sgemm: roofline",
                       .bandwidth_gbs = 4180,
                       .n_peaks = 2,
                       .peaks = peaks,
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
        char *gp = slurp_chart("bars.gp");
        cr_assert(strstr(gp, "set logscale y") != NULL);
        free(gp);
        /* A compute roof per path, each under the memory roof and labelled. */
        gp = slurp_chart("roof.gp");
        cr_expect(strstr(gp, "peak_0 = 67000 ") != NULL, "%s", gp);
        cr_expect(strstr(gp, "peak_1 = 150000 ") != NULL, "%s", gp);
        cr_expect(strstr(gp, "(bandwidth_gbs*x < peak_1 ? bandwidth_gbs*x : peak_1)") != NULL);
        cr_expect(strstr(gp, "'TF32 tensor-core peak / 3 (3xTF32): 150000 GFLOP/s'") != NULL);
        free(gp);
    }
    kbi_chart_free(&ctx);
}

/* The tics line of axis ("set xtics (" or "set ytics (") in gp, copied into out. */
static void tics_line(const char *gp, const char *axis, char *out, size_t n)
{
    const char *p = strstr(gp, axis), *e;
    cr_assert_not_null(p, "no %s in %s", axis, gp);
    e = strchr(p, '\n');
    snprintf(out, n, "%.*s", (int)(e ? e - p : (long)strlen(p)), p);
}

Test(chart, axes_print_readable_numbers, .init = make_tmp, .fini = remove_tmp)
{
    /* A metric chart of millions against sizes in Mi: gnuplot's own tics would print
     * 1.04858e+06 on both axes. */
    kbi_chart_ctx ctx;
    char err[KBI_ERR_SIZE] = "", line[4096], *gp;
    double x[] = {1048576, 4194304, 16777216}, y[] = {1.04858e6, 2.2e6, 3.9e6};
    kbi_line_series one[] = {{.name = "v", .n = 3, .x = x, .y = y}};
    kbi_line_chart lc = {.stem = "big",
                         .title = "t",
                         .xlabel = "n",
                         .ylabel = "y",
                         .n_series = 1,
                         .series = one,
                         .fit_y = 1};
    cr_assert_eq(kbi_chart_init(&ctx, tmp, "", 60, err), KBI_OK);
    cr_assert_eq(kbi_chart_lines(&ctx, &lc, err), KBI_CHART_NOT_DRAWN, "%s", err);
    gp = slurp_chart("big.gp");
    tics_line(gp, "set xtics (", line, sizeof line);
    cr_expect(strstr(line, "'1Mi' 1048576 0") != NULL, "%s", line);
    cr_expect(strstr(line, "'16Mi' 16777216 0") != NULL, "%s", line);
    cr_expect(strstr(line, "e+") == NULL, "%s", line);
    tics_line(gp, "set ytics (", line, sizeof line);
    cr_expect(strstr(line, "'1.5M' 1500000 0") != NULL, "%s", line);
    cr_expect(strstr(line, "e+") == NULL, "%s", line);
    cr_expect(strstr(gp, "set format") == NULL, "tics are labelled here, not by a format");
    free(gp);
    kbi_chart_free(&ctx);
}

Test(chart, close_x_labels_are_slanted_or_thinned, .init = make_tmp, .fini = remove_tmp)
{
    /* sgemm's shapes at their products: 4096x4096x256 and 2048x2048x2048 are a factor 2
     * apart on a log axis, too close for level labels. */
    kbi_chart_ctx ctx;
    char err[KBI_ERR_SIZE] = "", line[4096], *gp;
    double x[] = {1073741824.0, 4294967296.0, 8589934592.0, 68719476736.0, 549755813888.0},
           y[] = {1, 2, 3, 4, 5};
    const char *labels[] = {"1024x1024x1024", "4096x4096x256", "2048x2048x2048", "4096x4096x4096",
                            "8192x8192x8192"};
    kbi_line_series one[] = {{.name = "v", .n = 5, .x = x, .y = y}};
    kbi_line_chart lc = {.stem = "shapes",
                         .title = "t",
                         .n_series = 1,
                         .series = one,
                         .n_xtics = 5,
                         .xtic_values = x,
                         .xtic_labels = labels};
    cr_assert_eq(kbi_chart_init(&ctx, tmp, "", 60, err), KBI_OK);
    cr_assert_eq(kbi_chart_lines(&ctx, &lc, err), KBI_CHART_NOT_DRAWN, "%s", err);
    gp = slurp_chart("shapes.gp");
    tics_line(gp, "set xtics (", line, sizeof line);
    cr_expect(strstr(line, "rotate by 45 right") != NULL, "%s", line);
    cr_expect(strstr(line, "'4096x4096x256' 4.2949673e+09") != NULL, "every label kept: %s", line);
    free(gp);
    /* Two labels a few pixels apart: even upright they would touch, so one is left blank. */
    x[2] = 4.4e9;
    lc.stem = "touching";
    cr_assert_eq(kbi_chart_lines(&ctx, &lc, err), KBI_CHART_NOT_DRAWN, "%s", err);
    gp = slurp_chart("touching.gp");
    tics_line(gp, "set xtics (", line, sizeof line);
    cr_expect(strstr(line, "rotate by 90 right") != NULL, "%s", line);
    cr_expect(strstr(line, "'' 4.4e+09") != NULL, "%s", line);
    cr_expect(strstr(line, "'4096x4096x256' 4.2949673e+09") != NULL, "%s", line);
    free(gp);
    /* Short labels far apart stay level. */
    labels[0] = "1Gi";
    labels[1] = "4Gi";
    labels[2] = "8Gi";
    labels[3] = "64Gi";
    labels[4] = "512Gi";
    x[2] = 8589934592.0;
    lc.stem = "level";
    cr_assert_eq(kbi_chart_lines(&ctx, &lc, err), KBI_CHART_NOT_DRAWN, "%s", err);
    gp = slurp_chart("level.gp");
    tics_line(gp, "set xtics (", line, sizeof line);
    cr_expect(strstr(line, "rotate") == NULL, "%s", line);
    free(gp);
    kbi_chart_free(&ctx);
}

Test(chart, each_bar_under_its_own_roof, .init = make_tmp, .fini = remove_tmp)
{
    kbi_chart_ctx ctx;
    char err[KBI_ERR_SIZE] = "", *gp;
    const char *g[] = {"shape=4096x4096x4096"}, *s[] = {"naive", "cublas", "tf32x3"};
    double v[] = {498, 50895, 103230};
    kbi_roof roofs[] = {{63296, "FP32 FMA peak: 63296 GFLOP/s"},
                        {63296, "FP32 FMA peak: 63296 GFLOP/s"},
                        {150000, "TF32 tensor-core peak / 3 (3xTF32): 150000 GFLOP/s"}};
    kbi_bar_chart bars = {.stem = "roofs",
                          .title = "t",
                          .ylabel = "GFLOP/s",
                          .n_groups = 1,
                          .groups = g,
                          .n_series = 3,
                          .series = s,
                          .value = v,
                          .roof = roofs};
    cr_assert_eq(kbi_chart_init(&ctx, tmp, "", 60, err), KBI_OK);
    cr_assert_eq(kbi_chart_bars(&ctx, &bars, err), KBI_CHART_NOT_DRAWN, "%s", err);
    gp = slurp_chart("roofs.gp");
    /* naive and cublas share one segment at the FP32 peak; tf32x3 has its own, higher. */
    cr_expect(strstr(gp, "set arrow from first -0.350000, first 63296 to first 1.350000, first "
                         "63296 nohead") != NULL,
              "%s", gp);
    cr_expect(strstr(gp, "set arrow from first 1.650000, first 150000 to first 2.350000, first "
                         "150000 nohead") != NULL,
              "%s", gp);
    cr_expect(strstr(strstr(gp, "'FP32 FMA peak: 63296 GFLOP/s'") + 1,
                     "'FP32 FMA peak: 63296 GFLOP/s'") == NULL,
              "each roof is labelled once");
    cr_expect(strstr(gp, "set label 'TF32 tensor-core peak / 3 (3xTF32): 150000 GFLOP/s'") != NULL);
    cr_expect(strstr(gp, "set yrange [") && strtod(strstr(gp, "set yrange [") + 12, NULL) < 498);
    {
        /* the range reaches the highest roof */
        const char *r = strchr(strstr(gp, "set yrange ["), ':');
        cr_expect(strtod(r + 1, NULL) > 150000, "%s", r);
    }
    free(gp);
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

/* Opens tmp/NAME as a results file of a run without a device. */
static void open_lab(kbi_results_writer *w, char *path, size_t n, const char *name)
{
    char err[KBI_ERR_SIZE];
    json_t *env = json_pack("{s:n}", "device");
    snprintf(path, n, "%s/%s", tmp, name);
    cr_assert_eq(kbi_results_open(w, path, "r1", err), KBI_OK, "%s", err);
    cr_assert_eq(kbi_results_write(w, "env", env, err), KBI_OK, "%s", err);
    json_decref(env);
}

/* Writes case lab/hostuf/TEXT (params: its JSON, taken) with a declared moment ratio of
 * value +- u; the size parameter is L. */
static void write_lab_case(kbi_results_writer *w, json_t *params, const char *text, double value,
                           double u)
{
    static double samples[] = {1e-3, 1.01e-3, 0.99e-3};
    char id[128], err[KBI_ERR_SIZE];
    kbi_metric m = {"moment_ratio", "1", value, u, KB_BETTER_NONE, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0};
    kbi_case_result c;
    json_t *rec;
    memset(&c, 0, sizeof c);
    snprintf(id, sizeof id, "lab/hostuf/%s", text);
    c.index = -1;
    c.id = id;
    c.plugin = "lab";
    c.variant = "hostuf";
    c.target = "host";
    c.baseline = "";
    c.params = params;
    c.params_text = (char *)text;
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
    cr_assert_eq(kbi_results_write(w, "case", rec, err), KBI_OK, "%s", err);
    json_decref(rec);
    json_decref(params);
}

/* Writes tmp/lab.jsonl: a moment ratio (declared, with an uncertainty)
 * over L (the size parameter) and, when vary_t, over T too. */
static void write_lab(char *path, size_t n, int vary_t)
{
    kbi_results_writer w;
    open_lab(&w, path, n, "lab.jsonl");
    for (int L = 8; L <= 32; L *= 2)
        for (int ti = 0; ti < (vary_t ? 3 : 1); ti++) {
            double T = 2.2 + 0.1 * ti;
            char text[96];
            snprintf(text, sizeof text, "L=%d,T=%g", L, T);
            write_lab_case(&w, json_pack("{s:i, s:f}", "L", L, "T", T), text, 1.2 - 0.01 * ti * L,
                           0.005 * L);
        }
    kbi_results_close(&w);
}

/* Writes the report of tmp/lab.jsonl into tmp/rep; returns report.md. */
static char *report_lab(int vary_t, int draw)
{
    char path[512];
    write_lab(path, sizeof path, vary_t);
    return report_of_file(path, draw);
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

/* Writes tmp/lab2.jsonl: a moment ratio of two models whose q follows the model (0 for a, 3
 * for b, as q is for the Ising and Potts models), at L = 8 and, when vary_l, 16. */
static void write_models(char *path, size_t n, int vary_l)
{
    kbi_results_writer w;
    open_lab(&w, path, n, "lab2.jsonl");
    for (int model = 0; model < 2; model++)
        for (int L = 8; L <= (vary_l ? 16 : 8); L *= 2) {
            const char *name = model ? "b" : "a";
            char text[96];
            snprintf(text, sizeof text, "model=%s,L=%d,q=%d", name, L, model ? 3 : 0);
            write_lab_case(&w,
                           json_pack("{s:s, s:i, s:i}", "model", name, "L", L, "q", model ? 3 : 0),
                           text, 1.1 + 0.01 * L, 0.01);
        }
    kbi_results_close(&w);
}

/* The report of tmp/lab2.jsonl (scripts only) in tmp/rep; returns report.md. */
static char *report_models(int vary_l)
{
    char path[512];
    write_models(path, sizeof path, vary_l);
    return report_of_file(path, 0);
}

Test(chart, no_metric_chart_of_one_point_per_line, .init = make_tmp, .fini = remove_tmp)
{
    /* q varies over the plugin but not within a model: against q every chart would be one
     * point, which the table already shows. */
    char *md = report_models(0);
    cr_expect(strstr(md, "lab-metric-") == NULL, "%s", md);
    cr_expect(strstr(md, "2 metric charts not drawn: every line would be one point (the tables "
                         "show the values)") != NULL,
              "%s", md);
    free(md);
}

Test(chart, a_metric_that_stays_put_on_x_is_drawn_against_the_size, .init = make_tmp,
     .fini = remove_tmp)
{
    /* Against q with a line per L, each line would be one point: drawn against L instead. */
    char *md = report_models(1), path[600], *d;
    cr_expect(strstr(md, "metric chart") == NULL, "%s", md);
    snprintf(path, sizeof path, "%s/rep/charts/lab-metric-moment_ratio-vs-q-model_a.dat", tmp);
    cr_expect_neq(access(path, F_OK), 0, "no chart against q");
    snprintf(path, sizeof path, "%s/rep/charts/lab-metric-moment_ratio-vs-L-model_b.gp", tmp);
    cr_expect_eq(access(path, F_OK), 0, "one chart per model");
    snprintf(path, sizeof path, "%s/rep/charts/lab-metric-moment_ratio-vs-L-model_a.dat", tmp);
    d = slurp(path);
    cr_expect(strstr(d, "# series 0: hostuf\n8 1.18 1.17 1.19\n16 1.26 1.25 1.27\n") != NULL, "%s",
              d);
    free(d);
    free(md);
}
