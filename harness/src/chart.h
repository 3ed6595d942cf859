/* Charts for `kbench report`: writes gnuplot data (.dat) and scripts (.gp)
 * side by side in one folder and runs gnuplot on each script to draw a PNG
 * (pngcairo) and an SVG.  The scripts are kept so a user can restyle a chart
 * and redraw it with `gnuplot NAME.gp` from that folder.
 *
 * Three kinds of chart cover the report: grouped bars with error bars, lines
 * against a numeric axis, and a roofline.  This module knows nothing of
 * results; report_charts.c turns cases into these descriptions. */
#ifndef KBENCH_CHART_H
#define KBENCH_CHART_H

#include <stddef.h>

#include "common.h"

/* Returns of the kbi_chart_* drawing functions besides KBI_OK (drawn) and
 * negative errors: the scripts were written but no image was drawn (gnuplot
 * absent, failed or timed out; the context holds the reason). */
#define KBI_CHART_NOT_DRAWN 1

/* Where charts go and how they are drawn. */
typedef struct kbi_chart_ctx {
    char *dir;       /* folder of .dat, .gp, .png, .svg */
    char *gnuplot;   /* executable, or NULL when charts are not drawn */
    char *why_not;   /* why not drawn ("" when gnuplot is there) */
    double timeout;  /* seconds one gnuplot run may take */
    char **warnings; /* one per chart that failed to draw */
    size_t n_warnings;
    size_t n_drawn;
} kbi_chart_ctx;

/* Looks for an executable "gnuplot" in each folder of $PATH.  Returns KBI_OK
 * with its path in out (size n), or KBI_ERR. */
int kbi_gnuplot_find(char *out, size_t n);

/* Creates dir (mkdir -p) and fills ctx.  gnuplot: the program to run; NULL
 * looks in $KBENCH_GNUPLOT then on PATH; "" draws nothing (scripts only).
 * timeout: seconds per chart, 0 for the default (60).  Returns KBI_OK or
 * KBI_ERR_IO with err set. */
int kbi_chart_init(kbi_chart_ctx *ctx, const char *dir, const char *gnuplot, double timeout,
                   char *err);
void kbi_chart_free(kbi_chart_ctx *ctx);

/* A roof: the ceiling a series is drawn against, as a dashed line with its label ("FP32 FMA
 * peak 63296 GFLOP/s").  A value of 0 (or NAN) is no roof. */
typedef struct kbi_roof {
    double value;
    const char *label;
} kbi_roof;

/* Grouped bars: n_groups positions on x (e.g. parameter points), each with
 * one bar per series (e.g. variants).  With one group the bars are labelled
 * by series under the x axis and no key is drawn.  Values are indexed
 * [group * n_series + series]; NAN marks a missing bar.  low/high (may be
 * NULL) are error bar ends.  The y axis turns logarithmic when the values
 * span more than two decades. */
typedef struct kbi_bar_chart {
    const char *stem; /* file names: stem.dat, stem.gp, stem.png, stem.svg */
    const char *title;
    const char *ylabel;
    size_t n_groups;
    const char *const *groups;
    size_t n_series;
    const char *const *series;
    const int *color; /* palette index per series, or NULL for the series index */
    const double *value, *low, *high;
    double reference; /* > 0: a dashed horizontal line at this y (speedup 1) */
    const char *reference_label;
    int value_labels; /* print each value above its bar */
    /* Appended: the roof of each bar, indexed like value (NULL: none), drawn as a dashed
     * segment over the bar; neighbouring bars of one group under the same roof share one
     * segment, labelled once. */
    const kbi_roof *roof;
    const char *xlabel; /* appended: what the groups' labels are (NULL: none) */
} kbi_bar_chart;

/* Lines against a numeric x axis: one line per series, points at (x, y)
 * with optional error bars [low, high].  Axes turn logarithmic when they
 * span more than a decade.  xtic_values/xtic_labels (may be NULL) put
 * labelled tics at those x values instead of gnuplot's own. */
typedef struct kbi_line_series {
    const char *name;
    int color; /* palette index */
    int dashed;
    size_t n;
    const double *x, *y, *low, *high; /* low/high may be NULL */
} kbi_line_series;

typedef struct kbi_line_chart {
    const char *stem, *title, *xlabel, *ylabel;
    size_t n_series;
    const kbi_line_series *series;
    size_t n_xtics;
    const double *xtic_values;
    const char *const *xtic_labels;
    double reference; /* > 0: a dashed horizontal line at this y */
    const char *reference_label;
    int fit_y; /* nonzero: the y range fits the values (which may be negative or far
                  from 0) instead of starting at 0; log only when all are positive */
    int points_only; /* appended: points with their error bars, no lines (a scatter) */
    /* Appended: dashed horizontal lines across the plot, each labelled at its right end (the
     * roofs the series are drawn against). */
    size_t n_roofs;
    const kbi_roof *roofs;
} kbi_line_chart;

/* Roofline: achieved GFLOP/s against arithmetic intensity (FLOP/byte) on
 * log-log axes, one point series per variant, under the memory roof
 * (bandwidth_gbs * intensity) and one compute roof per hardware path the
 * variants use (peaks, GFLOP/s: the FP32 FMA peak, a third of the TF32
 * tensor-core peak for 3xTF32, ...), each labelled on the chart.  A ceiling
 * of 0 is not drawn. */
typedef struct kbi_roofline {
    const char *stem, *title;
    double bandwidth_gbs;
    size_t n_peaks;
    const kbi_roof *peaks;
    const char *ceiling_source; /* "measured", "profile", ... for the key */
    size_t n_series;
    const kbi_line_series *series; /* x: FLOP/byte, y: GFLOP/s */
} kbi_roofline;

/* Each writes stem.dat and stem.gp in ctx->dir and, when gnuplot is there,
 * draws stem.png and stem.svg.  Returns KBI_OK (drawn), KBI_CHART_NOT_DRAWN
 * (scripts only; a failure is added to ctx->warnings), or KBI_ERR_IO /
 * KBI_ERR_INPUT with err set when a file cannot be written or the
 * description is empty. */
int kbi_chart_bars(kbi_chart_ctx *ctx, const kbi_bar_chart *chart, char *err);
int kbi_chart_lines(kbi_chart_ctx *ctx, const kbi_line_chart *chart, char *err);
int kbi_chart_roofline(kbi_chart_ctx *ctx, const kbi_roofline *chart, char *err);

/* Runs gnuplot on script (a path relative to ctx->dir) with ctx->timeout.
 * Returns KBI_OK, or KBI_ERR with err holding the exit status and the tail
 * of gnuplot's stderr. */
int kbi_chart_run_gnuplot(const kbi_chart_ctx *ctx, const char *script, char *err);

/* Colour of palette index i, "#rrggbb" (the palette repeats). */
const char *kbi_chart_color(int i);

#endif
