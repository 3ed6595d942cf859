/* The charts of `kbench history`, drawn with chart.c's line charts: per case, its median time
 * with its 95% interval against the runs, each step compare called slower or faster marked by
 * a point of its own; per plugin, the cases that changed, each relative to its first run. */
#define _XOPEN_SOURCE 700
#include "history.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "chart.h"
#include "format.h"

/* Palette indices (chart.c's tab10): a slower step red, a faster one green. */
#define COLOR_MEDIAN 0
#define COLOR_FASTER 2
#define COLOR_SLOWER 3

/* Whether track tr has a step compare called slower or faster. */
static int track_changed(const kbi_history *h, const kbi_history_track *tr)
{
    for (size_t k = 1; k < h->n_runs; k++) {
        kbi_verdict v = tr->cells[k].out.verdict;
        if (tr->cells[k].judged && (v == KBI_VERDICT_SLOWER || v == KBI_VERDICT_FASTER))
            return 1;
    }
    return 0;
}

/* The median of a cell, NAN where the run has none. */
static double cell_median(const kbi_history_cell *cell)
{
    return cell->c && cell->c->status == KBI_ST_OK && cell->c->stats.median > 0
               ? cell->c->stats.median
               : NAN;
}

void kbi_history_chart_stem(const kbi_history *h, size_t t, char *out, size_t n)
{
    const kbi_history_track *tr = &h->tracks[t];
    const char *rest = tr->id;
    char plugin[96], what[96];
    if (strncmp(rest, tr->plugin, strlen(tr->plugin)) == 0 && rest[strlen(tr->plugin)] == '/')
        rest += strlen(tr->plugin) + 1;
    kbi_file_safe(tr->plugin, plugin, sizeof plugin);
    kbi_file_safe(rest, what, sizeof what);
    /* The number keeps two ids that agree in their first 80 safe characters apart. */
    snprintf(out, n, "history-%s-%03zu-%s", plugin, t + 1, what);
}

/* The x axis every chart shares: run k at x = n + k, so the axis spans less than a decade
 * and kbi_chart_lines keeps it linear; the tics name the runs. */
typedef struct run_axis {
    double *x;
    char **labels;
} run_axis;

static void axis_init(const kbi_history *h, run_axis *a)
{
    a->x = kbi_xcalloc(h->n_runs, sizeof *a->x);
    a->labels = kbi_xcalloc(h->n_runs, sizeof *a->labels);
    for (size_t k = 0; k < h->n_runs; k++) {
        kbi_buf b = {0};
        a->x[k] = (double)(h->n_runs + k);
        kbi_buf_printf(&b, "r%zu %s", k + 1, h->runs[k].label);
        a->labels[k] = b.data;
    }
}

static void axis_free(const kbi_history *h, run_axis *a)
{
    for (size_t k = 0; k < h->n_runs; k++)
        free(a->labels[k]);
    free(a->labels);
    free(a->x);
}

static const char *const order_words[] = {"time", "revision", "input"};

/* The chart of track t: its medians and intervals, and a point per slower or faster step. */
static int case_chart(kbi_chart_ctx *ctx, const kbi_history *h, size_t t, const run_axis *a,
                      char *err)
{
    const kbi_history_track *tr = &h->tracks[t];
    size_t n = h->n_runs, n_series = 1;
    double *y = kbi_xcalloc(3 * n, sizeof *y), *lo = y + n, *hi = y + 2 * n, top = 0;
    kbi_line_series *series = kbi_xcalloc(n + 1, sizeof *series);
    char **names = kbi_xcalloc(n + 1, sizeof *names), stem[256], title[512], ylabel[96];
    kbi_time_unit unit;
    int rc;
    for (size_t k = 0; k < n; k++)
        top = fmax(top, isfinite(cell_median(&tr->cells[k])) ? cell_median(&tr->cells[k]) : 0);
    unit = kbi_time_unit_for(top);
    for (size_t k = 0; k < n; k++) {
        const kbi_history_cell *cell = &tr->cells[k];
        y[k] = cell_median(cell) * unit.scale;
        lo[k] = isfinite(y[k]) ? cell->c->stats.ci_low * unit.scale : NAN;
        hi[k] = isfinite(y[k]) ? cell->c->stats.ci_high * unit.scale : NAN;
    }
    series[0] = (kbi_line_series){"median, 95% interval", COLOR_MEDIAN, 0, n, a->x, y, lo, hi};
    for (size_t k = 1; k < n; k++) {
        const kbi_history_cell *cell = &tr->cells[k];
        kbi_verdict v = cell->out.verdict;
        kbi_buf b = {0};
        if (!cell->judged || (v != KBI_VERDICT_SLOWER && v != KBI_VERDICT_FASTER) ||
            !isfinite(y[k]))
            continue;
        kbi_buf_printf(&b, "%s x%.3f, r%zu -> r%zu", kbi_verdict_name(v), cell->out.ratio,
                       cell->from + 1, k + 1);
        names[n_series] = b.data;
        series[n_series++] =
            (kbi_line_series){b.data,   v == KBI_VERDICT_SLOWER ? COLOR_SLOWER : COLOR_FASTER,
                              0,        1,
                              &a->x[k], &y[k],
                              NULL,     NULL};
    }
    kbi_history_chart_stem(h, t, stem, sizeof stem);
    snprintf(title, sizeof title, "%.400s", tr->id);
    snprintf(ylabel, sizeof ylabel, "median time (%s)", unit.name);
    {
        char xlabel[96];
        snprintf(xlabel, sizeof xlabel, "run and revision, ordered by %s", order_words[h->order]);
        kbi_line_chart c = {.stem = stem,
                            .title = title,
                            .xlabel = xlabel,
                            .ylabel = ylabel,
                            .n_series = n_series,
                            .series = series,
                            .n_xtics = n,
                            .xtic_values = a->x,
                            .xtic_labels = (const char *const *)a->labels,
                            .fit_y = 1};
        rc = kbi_chart_lines(ctx, &c, err);
    }
    for (size_t s = 0; s < n_series; s++)
        free(names[s]);
    free(names);
    free(series);
    free(y);
    return rc;
}

/* The chart of plugin's cases that changed, each median over its first one; not drawn when
 * none changed. */
static int plugin_chart(kbi_chart_ctx *ctx, const kbi_history *h, const char *plugin,
                        const run_axis *a, char *err)
{
    size_t n = h->n_runs, n_series = 0;
    kbi_line_series *series = kbi_xcalloc(h->n_tracks + 1, sizeof *series);
    double *y = kbi_xcalloc(h->n_tracks * n + 1, sizeof *y);
    char stem[160], safe[96], title[256];
    int rc = KBI_OK;
    for (size_t t = 0; t < h->n_tracks; t++) {
        const kbi_history_track *tr = &h->tracks[t];
        double first = NAN, *row = y + n_series * n;
        const char *name = tr->id;
        if (strcmp(tr->plugin, plugin) != 0 || !track_changed(h, tr))
            continue;
        for (size_t k = 0; k < n; k++) {
            if (isnan(first))
                first = cell_median(&tr->cells[k]);
            row[k] = cell_median(&tr->cells[k]) / first;
        }
        if (strncmp(name, plugin, strlen(plugin)) == 0 && name[strlen(plugin)] == '/')
            name += strlen(plugin) + 1;
        series[n_series] = (kbi_line_series){name, (int)n_series, 0, n, a->x, row, NULL, NULL};
        n_series++;
    }
    kbi_file_safe(plugin, safe, sizeof safe);
    snprintf(stem, sizeof stem, "history-%s-changed", safe);
    snprintf(title, sizeof title, "%.100s: cases with a slower or faster step", plugin);
    if (n_series) {
        char xlabel[96];
        snprintf(xlabel, sizeof xlabel, "run and revision, ordered by %s", order_words[h->order]);
        kbi_line_chart c = {.stem = stem,
                            .title = title,
                            .xlabel = xlabel,
                            .ylabel = "median time / its first run's",
                            .n_series = n_series,
                            .series = series,
                            .n_xtics = n,
                            .xtic_values = a->x,
                            .xtic_labels = (const char *const *)a->labels,
                            .reference = 1,
                            .reference_label = "first run",
                            .fit_y = 1};
        rc = kbi_chart_lines(ctx, &c, err);
    }
    free(series);
    free(y);
    return rc;
}

int kbi_history_plugin_changed(const kbi_history *h, const char *plugin)
{
    for (size_t t = 0; t < h->n_tracks; t++)
        if (strcmp(h->tracks[t].plugin, plugin) == 0 && track_changed(h, &h->tracks[t]))
            return 1;
    return 0;
}

/* Whether track tr has a median in some run (a chart has a point to draw). */
static int track_measured(const kbi_history *h, const kbi_history_track *tr)
{
    for (size_t k = 0; k < h->n_runs; k++)
        if (isfinite(cell_median(&tr->cells[k])))
            return 1;
    return 0;
}

int kbi_history_write_charts(const kbi_history *h, const char *dir, const char *gnuplot,
                             kbi_strlist *warnings, size_t *n_drawn, char *err)
{
    kbi_chart_ctx ctx;
    run_axis a;
    int rc = kbi_chart_init(&ctx, dir, gnuplot, 0, err);
    if (rc != KBI_OK)
        return rc;
    axis_init(h, &a);
    for (size_t t = 0; t < h->n_tracks && rc >= KBI_OK; t++) {
        int first = 1;
        for (size_t p = 0; p < t && first; p++)
            first = strcmp(h->tracks[p].plugin, h->tracks[t].plugin) != 0;
        if (first)
            rc = plugin_chart(&ctx, h, h->tracks[t].plugin, &a, err);
        if (rc >= KBI_OK && track_measured(h, &h->tracks[t]))
            rc = case_chart(&ctx, h, t, &a, err);
    }
    if (ctx.why_not && ctx.why_not[0])
        kbi_strlist_add(warnings, ctx.why_not);
    for (size_t i = 0; i < ctx.n_warnings; i++)
        kbi_strlist_add(warnings, ctx.warnings[i]);
    *n_drawn = ctx.n_drawn;
    axis_free(h, &a);
    kbi_chart_free(&ctx);
    return rc >= KBI_OK ? KBI_OK : rc;
}
