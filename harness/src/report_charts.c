/* The charts of a report: (a) the rate of every variant at each point,
 * (b) lines against the size axis, (c) speedup against each baseline,
 * (d) the roofline, and one chart per declared metric; drawn through
 * chart.h from the report model. */
#define _XOPEN_SOURCE 700
#include "report_charts.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "report.h"
#include "roofs.h"

/* Past this many parameter points a plugin gets no per-point bar chart (the
 * line chart against the size axis shows them better). */
#define MAX_POINT_CHARTS 24
/* Past this many slices of the other parameters, no line charts. */
#define MAX_SLICES 8

/* A unique stem "<plugin>-<what>[-<detail>]". */
static char *make_stem(kbi_rep_model *m, const char *plugin, const char *what, const char *detail)
{
    char a[128], b[128], stem[300];
    kbi_file_safe(plugin, a, sizeof a);
    kbi_file_safe(detail ? detail : "", b, sizeof b);
    snprintf(stem, sizeof stem, "%s-%s%s%s", a[0] ? a : "plugin", what, b[0] ? "-" : "", b);
    for (int k = 2;; k++) {
        int used = 0;
        for (size_t i = 0; i < m->stems.n && !used; i++)
            used = strcmp(m->stems.s[i], stem) == 0;
        if (!used)
            break;
        snprintf(stem, sizeof stem, "%s-%s%s%s-%d", a[0] ? a : "plugin", what, b[0] ? "-" : "", b,
                 k);
    }
    kbi_strlist_add(&m->stems, stem);
    return kbi_strdup(stem);
}

/* Records a chart's outcome; a hard error (cannot write) is returned. */
static int chart_result(int rc, kbi_rep_chart *ch, char *stem, const char *title,
                        kbi_strlist *notes, const char *err)
{
    ch->stem = stem;
    ch->title = kbi_strdup(title);
    ch->drawn = rc == KBI_OK;
    if (rc == KBI_ERR_INPUT) {
        /* Nothing to draw: a note, not a failure of the report. */
        kbi_strlist_add(notes, err);
        return KBI_OK;
    }
    return rc < 0 ? rc : KBI_OK;
}

static void add_chart_slot(kbi_rep_plugin *p)
{
    p->charts = kbi_xrealloc(p->charts, (p->n_charts + 1) * sizeof *p->charts);
    memset(&p->charts[p->n_charts], 0, sizeof *p->charts);
}

/* The y label of a chart of p's rate (or time per item) in unit. */
static void rate_ylabel(const kbi_rep_plugin *p, const char *unit, kbi_buf *b)
{
    kbi_buf_printf(b, "%s (median%s; bars: %d%% CI of the median)", unit,
                   p->kind == KBI_RATE_TIME_PER_ITEM ? ", lower is better" : "", KBI_CI_PERCENT);
}

/* The words of case c's roof in p's chart ("FP32 FMA peak 63296 GFLOP/s") into roof (its
 * label owned by the caller); value 0 and no label when it has none. */
static void case_roof(const kbi_rep_plugin *p, const kbi_case_result *c, const char *unit,
                      kbi_roof *roof)
{
    const char *name;
    double v;
    roof->value = 0;
    roof->label = NULL;
    if (kbi_rep_roof(p, c, &v, &name)) {
        char num[64];
        kbi_buf b = {0};
        kbi_fmt_sig4(v, num, sizeof num);
        kbi_buf_printf(&b, "%s: %s %s", kbi_roof_label(name), num, unit);
        roof->value = v;
        roof->label = b.data;
    }
}

/* One point's bar chart (a): a bar per row with a case there, under its roof. */
static int chart_one_point(kbi_rep_model *m, kbi_rep_plugin *p, kbi_rep_point *q, const char *unit,
                           kbi_chart_ctx *ctx, char *err)
{
    const kbi_result_set *set = m->set;
    size_t R = p->n_rows, n = 0;
    double *v = kbi_xmalloc(R * sizeof *v), *lo = kbi_xmalloc(R * sizeof *lo),
           *hi = kbi_xmalloc(R * sizeof *hi);
    char **names = kbi_xcalloc(R, sizeof *names);
    int *colors = kbi_xmalloc(R * sizeof *colors);
    kbi_roof *roofs = kbi_xcalloc(R, sizeof *roofs);
    int rc = KBI_OK;
    /* Rows that have a case at this point, in row order. */
    for (size_t r = 0; r < R; r++) {
        size_t ci = q->cell[r];
        const kbi_case_result *c;
        if (ci == KBI_NO_CASE)
            continue;
        c = &set->cases[ci];
        if (!kbi_rep_rate(p, c, &v[n], &lo[n], &hi[n])) {
            kbi_buf b = {0};
            v[n] = lo[n] = hi[n] = NAN;
            kbi_buf_printf(&b, "%s (%s)", p->rows[r].name,
                           c->status == KBI_ST_OK ? "no rate" : kbi_status_name(c->status));
            names[n] = b.data;
        } else {
            names[n] = kbi_strdup(p->rows[r].name);
            case_roof(p, c, unit, &roofs[n]);
        }
        colors[n] = (int)r;
        n++;
    }
    if (n > 0) {
        kbi_buf title = {0}, ylabel = {0};
        char *stem = make_stem(m, p->name, "rate", q->label);
        kbi_bar_chart bc = {0};
        kbi_buf_printf(&title, "%s, %s: %s per variant", p->name, q->label, unit);
        rate_ylabel(p, unit, &ylabel);
        bc.stem = stem;
        bc.title = title.data;
        bc.ylabel = ylabel.data;
        /* One group holding one bar per variant: chart.c labels the
         * bars with the variant names. */
        bc.n_groups = 1;
        bc.groups = (const char *const *)&q->label;
        bc.n_series = n;
        bc.series = (const char *const *)names;
        bc.color = colors;
        bc.value = v;
        bc.low = lo;
        bc.high = hi;
        bc.value_labels = 1;
        bc.roof = roofs;
        rc = kbi_chart_bars(ctx, &bc, err);
        rc = chart_result(rc, &q->bar, stem, title.data, &p->notes, err);
        kbi_buf_free(&title);
        kbi_buf_free(&ylabel);
    }
    for (size_t i = 0; i < n; i++) {
        free(names[i]);
        free((char *)roofs[i].label);
    }
    kbi_free_all(6, names, colors, v, lo, hi, roofs);
    return rc;
}

/* (a) the rate of every variant at each point. */
static int chart_points(kbi_rep_model *m, kbi_rep_plugin *p, kbi_chart_ctx *ctx, char *err)
{
    char ubuf[128];
    const char *unit = kbi_rep_kind_label(m->set, p, ubuf, sizeof ubuf);
    int rc = KBI_OK;
    if (p->kind == KBI_RATE_NONE)
        return KBI_OK;
    if (p->n_points > MAX_POINT_CHARTS) {
        char note[256];
        snprintf(note, sizeof note,
                 "no bar chart per parameter point: %zu points (more than %d); see the line "
                 "chart",
                 p->n_points, MAX_POINT_CHARTS);
        kbi_strlist_add(&p->notes, note);
        return KBI_OK;
    }
    for (size_t k = 0; k < p->n_points && rc == KBI_OK; k++)
        rc = chart_one_point(m, p, &p->points[k], unit, ctx, err);
    return rc;
}

/* The x of a point on the size axis `key`: a number, or from dims
 * "AxBxC": the edge when every point is square, else the product. */
static int axis_value(json_t *v, int square, double *x)
{
    if (json_is_number(v)) {
        *x = json_number_value(v);
        return 1;
    }
    if (json_is_array(v)) { /* dims in a version 2 record */
        double prod = 1;
        size_t n = json_array_size(v);
        for (size_t i = 0; i < n; i++) {
            if (!json_is_integer(json_array_get(v, i)))
                return 0;
            prod *= (double)json_integer_value(json_array_get(v, i));
        }
        if (n == 0)
            return 0;
        *x = square ? (double)json_integer_value(json_array_get(v, 0)) : prod;
        return 1;
    }
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        double prod = 1, first = 0;
        int n = 0;
        while (*s) {
            char *end;
            double d;
            if (*s < '0' || *s > '9')
                return 0;
            d = strtod(s, &end);
            if (end == s)
                return 0;
            if (n == 0)
                first = d;
            prod *= d;
            n++;
            s = end;
            if (*s == 'x')
                s++;
            else if (*s)
                return 0;
        }
        if (n == 0)
            return 0;
        *x = square ? first : prod;
        return 1;
    }
    return 0;
}

/* Whether every value of key is dims with all dims equal ("512x512x512"). */
static int all_square(const kbi_result_set *set, const kbi_rep_plugin *p, const char *key)
{
    for (size_t i = 0; i < p->n_points; i++) {
        json_t *v = json_object_get(set->cases[p->points[i].first].params, key);
        const char *s = json_string_value(v);
        const char *x;
        size_t len;
        if (json_is_array(v)) {
            size_t n = json_array_size(v);
            if (n < 2)
                return 0;
            for (size_t d = 1; d < n; d++)
                if (!json_equal(json_array_get(v, d), json_array_get(v, 0)))
                    return 0;
            continue;
        }
        if (!s)
            return 0;
        x = strchr(s, 'x');
        if (!x)
            return 0;
        len = (size_t)(x - s);
        for (const char *q = x; *q; q += len + 1) {
            if (*q != 'x' || strncmp(q + 1, s, len) != 0 ||
                (q[len + 1] != 'x' && q[len + 1] != '\0'))
                return 0;
        }
    }
    return 1;
}

/* Picks the size axis: the first varying parameter whose every value is a
 * number or dims.  Returns its key index or -1. */
static int pick_axis(const kbi_result_set *set, const kbi_rep_plugin *p, int *square)
{
    for (size_t k = 0; k < p->n_keys; k++) {
        int ok = p->varies[k];
        *square = all_square(set, p, p->keys[k]);
        for (size_t i = 0; i < p->n_points && ok; i++) {
            double x;
            ok = axis_value(json_object_get(set->cases[p->points[i].first].params, p->keys[k]),
                            *square, &x);
        }
        if (ok)
            return (int)k;
    }
    return -1;
}

/* The varying parameters of a point other than axis and line (-1: none), as
 * a slice name. */
static char *slice_of(const kbi_result_set *set, const kbi_rep_plugin *p, size_t point, int axis,
                      int line)
{
    kbi_buf b = {0};
    for (size_t k = 0; k < p->n_keys; k++) {
        char t[256];
        if (!p->varies[k] || (int)k == axis || (int)k == line)
            continue;
        kbi_param_text(&set->cases[p->points[point].first], p->keys[k], t, sizeof t);
        kbi_buf_printf(&b, "%s%s=%s", b.len ? ", " : "", p->keys[k], t);
    }
    return b.data ? b.data : kbi_strdup("");
}

/* Whether another point of point i's slice (along axis and line) has another value of axis. */
static int slice_has_two(const kbi_result_set *set, const kbi_rep_plugin *p, int axis, int line,
                         size_t i)
{
    char *sl = slice_of(set, p, i, axis, line), a[256], b[256];
    int two = 0;
    kbi_param_text(&set->cases[p->points[i].first], p->keys[axis], a, sizeof a);
    for (size_t j = 0; j < p->n_points && !two; j++) {
        char *o = slice_of(set, p, j, axis, line);
        kbi_param_text(&set->cases[p->points[j].first], p->keys[axis], b, sizeof b);
        two = strcmp(o, sl) == 0 && strcmp(a, b) != 0;
        free(o);
    }
    free(sl);
    return two;
}

/* The distinct slices of p's points along axis and line (-1: none) into
 * slices; with need_two, only those where axis takes two values or more (a
 * line chart of one point shows nothing the table does not).  Returns 0,
 * with a note saying why there is no `what`, when there are too many to
 * chart. */
static int collect_slices(const kbi_result_set *set, kbi_rep_plugin *p, int axis, int line,
                          int need_two, kbi_strlist *slices, const char *what)
{
    for (size_t i = 0; i < p->n_points; i++) {
        char *sl = slice_of(set, p, i, axis, line);
        if (!kbi_strlist_has(slices, sl) && (!need_two || slice_has_two(set, p, axis, line, i)))
            kbi_strlist_add(slices, sl);
        free(sl);
    }
    if (slices->n > MAX_SLICES) {
        char note[256];
        snprintf(note, sizeof note,
                 "no %s: %zu combinations of the other parameters (more than %d)", what, slices->n,
                 MAX_SLICES);
        kbi_strlist_add(&p->notes, note);
        return 0;
    }
    return 1;
}

typedef struct xy {
    double x, y, lo, hi;
} xy;

static int cmp_xy(const void *a, const void *b)
{
    double d = ((const xy *)a)->x - ((const xy *)b)->x;
    return (d > 0) - (d < 0);
}

/* The x tics of one slice: one per distinct x, labelled as in the case id.
 * Returns how many, filled into tx and tl (p->n_points each at the most). */
static size_t line_tics(const kbi_result_set *set, const kbi_rep_plugin *p, int axis, int square,
                        const char *slice, double *tx, char **tl)
{
    size_t n_tics = 0;
    for (size_t i = 0; i < p->n_points; i++) {
        char *s = slice_of(set, p, i, axis, -1);
        json_t *v = json_object_get(set->cases[p->points[i].first].params, p->keys[axis]);
        double x;
        if (strcmp(s, slice) == 0 && axis_value(v, square, &x)) {
            char t[256];
            size_t k = 0;
            if (json_is_string(v) || json_is_array(v))
                kbi_param_text(&set->cases[p->points[i].first], p->keys[axis], t, sizeof t);
            else
                kbi_fmt_axis(x, t, sizeof t);
            while (k < n_tics && tx[k] != x)
                k++;
            if (k == n_tics) {
                tx[n_tics] = x;
                tl[n_tics++] = kbi_strdup(t);
            } else if (strcmp(tl[k], t) != 0) {
                /* Two shapes of one product share the x: the tic names both. */
                kbi_buf b = {0};
                kbi_buf_printf(&b, "%s / %s", tl[k], t);
                free(tl[k]);
                tl[k] = b.data;
            }
        }
        free(s);
    }
    return n_tics;
}

/* The line of row r in one slice, sorted by x, into cols[0..3] (x, y, low,
 * high; owned by the caller).  Returns 0 when the row has no point there. */
static int line_of_row(const kbi_result_set *set, const kbi_rep_plugin *p, size_t r, int axis,
                       int square, const char *slice, double **cols, kbi_line_series *series)
{
    xy *pts = kbi_xcalloc(p->n_points, sizeof *pts);
    size_t n = 0;
    for (size_t i = 0; i < p->n_points; i++) {
        size_t ci = p->points[i].cell[r];
        char *s;
        double x;
        xy *e = &pts[n];
        if (ci == KBI_NO_CASE)
            continue;
        s = slice_of(set, p, i, axis, -1);
        if (strcmp(s, slice) == 0 &&
            axis_value(json_object_get(set->cases[ci].params, p->keys[axis]), square, &x) &&
            kbi_rep_rate(p, &set->cases[ci], &e->y, &e->lo, &e->hi)) {
            e->x = x;
            n++;
        }
        free(s);
    }
    if (n > 0) {
        qsort(pts, n, sizeof *pts, cmp_xy);
        for (int c = 0; c < 4; c++)
            cols[c] = kbi_xmalloc(n * sizeof(double));
        for (size_t i = 0; i < n; i++) {
            cols[0][i] = pts[i].x;
            cols[1][i] = pts[i].y;
            cols[2][i] = pts[i].lo;
            cols[3][i] = pts[i].hi;
        }
        *series = (kbi_line_series){
            .name = p->rows[r].name,
            .color = (int)r,
            .dashed = kbi_rep_is_baseline(p, p->rows[r].variant),
            .n = n,
            .x = cols[0],
            .y = cols[1],
            .low = cols[2],
            .high = cols[3],
        };
    }
    free(pts);
    return n > 0;
}

static void axis_label(const kbi_result_set *set, const kbi_rep_plugin *p, int axis, int square,
                       char *out, size_t n)
{
    if (square)
        snprintf(out, n, "%s (edge: every dimension is equal)", p->keys[axis]);
    else if (!json_is_number(json_object_get(set->cases[p->points[0].first].params, p->keys[axis])))
        snprintf(out, n, "%s (plotted at the product of its dimensions)", p->keys[axis]);
    else
        snprintf(out, n, "%s", p->keys[axis]);
}

/* Draws the line chart of one slice (lc: its series and tics). */
static int draw_line_chart(kbi_rep_model *m, kbi_rep_plugin *p, kbi_chart_ctx *ctx, int axis,
                           const char *slice, const char *unit, kbi_line_chart *lc, char *err)
{
    kbi_buf title = {0}, ylabel = {0};
    char *stem = make_stem(m, p->name, "rate-vs", p->keys[axis]);
    int rc;
    if (slice[0]) {
        char *old = stem, sub[300];
        snprintf(sub, sizeof sub, "%s-%s", p->keys[axis], slice);
        stem = make_stem(m, p->name, "rate-vs", sub);
        free(old);
    }
    kbi_buf_printf(&title, "%s: %s against %s%s%s", p->name, unit, p->keys[axis],
                   slice[0] ? ", " : "", slice);
    rate_ylabel(p, unit, &ylabel);
    lc->stem = stem;
    lc->title = title.data;
    lc->ylabel = ylabel.data;
    add_chart_slot(p);
    rc = kbi_chart_lines(ctx, lc, err);
    rc = chart_result(rc, &p->charts[p->n_charts++], stem, title.data, &p->notes, err);
    kbi_buf_free(&title);
    kbi_buf_free(&ylabel);
    return rc;
}

/* The roofs of one slice's cases that are one value across it (a compute peak in a GFLOP/s
 * chart; not a roof that follows each point's counts), as labelled lines into *out (labels
 * owned by the caller).  Returns how many. */
static size_t slice_roofs(const kbi_result_set *set, const kbi_rep_plugin *p, int axis,
                          const char *slice, const char *unit, kbi_roof **out)
{
    const char *names[8];
    double values[8];
    int varies[8];
    size_t n = 0, k = 0;
    for (size_t i = 0; i < p->n_points; i++) {
        char *sl = slice_of(set, p, i, axis, -1);
        int in = strcmp(sl, slice) == 0;
        free(sl);
        for (size_t r = 0; in && r < p->n_rows; r++) {
            size_t ci = p->points[i].cell[r], j = 0;
            const char *name;
            double v;
            if (ci == KBI_NO_CASE || !kbi_case_ok(&set->cases[ci]) ||
                !kbi_rep_roof(p, &set->cases[ci], &v, &name))
                continue;
            while (j < n && strcmp(names[j], name) != 0)
                j++;
            if (j == n && n < 8) {
                names[n] = name;
                values[n] = v;
                varies[n++] = 0;
            } else if (j < n && fabs(values[j] - v) > 1e-9 * v) {
                varies[j] = 1;
            }
        }
    }
    *out = kbi_xcalloc(n ? n : 1, sizeof **out);
    for (size_t j = 0; j < n; j++) {
        char num[64];
        kbi_buf b = {0};
        if (varies[j])
            continue;
        kbi_fmt_sig4(values[j], num, sizeof num);
        kbi_buf_printf(&b, "%s: %s %s", kbi_roof_label(names[j]), num, unit);
        (*out)[k].value = values[j];
        (*out)[k++].label = b.data;
    }
    return k;
}

/* (b) one slice: the rate of every variant against the axis parameter. */
static int chart_line_slice(kbi_rep_model *m, kbi_rep_plugin *p, kbi_chart_ctx *ctx, int axis,
                            int square, const char *slice, const char *unit, char *err)
{
    const kbi_result_set *set = m->set;
    size_t R = p->n_rows, n_series = 0, n_tics;
    kbi_line_series *series = kbi_xcalloc(R, sizeof *series);
    double *tx = kbi_xcalloc(p->n_points, sizeof *tx);
    char **tl = kbi_xcalloc(p->n_points, sizeof *tl);
    double **cols = kbi_xcalloc(R * 4, sizeof *cols);
    char xlabel[300];
    int rc = KBI_OK;
    n_tics = line_tics(set, p, axis, square, slice, tx, tl);
    for (size_t r = 0; r < R; r++)
        n_series += line_of_row(set, p, r, axis, square, slice, &cols[r * 4], &series[n_series]);
    axis_label(set, p, axis, square, xlabel, sizeof xlabel);
    if (n_series > 0 && n_tics >= 2) {
        kbi_line_chart lc = {.xlabel = xlabel, .n_series = n_series, .series = series};
        kbi_roof *roofs = NULL;
        lc.n_roofs = slice_roofs(set, p, axis, slice, unit, &roofs);
        lc.roofs = roofs;
        if (n_tics <= 12) {
            lc.n_xtics = n_tics;
            lc.xtic_values = tx;
            lc.xtic_labels = (const char *const *)tl;
        }
        rc = draw_line_chart(m, p, ctx, axis, slice, unit, &lc, err);
        for (size_t k = 0; k < lc.n_roofs; k++)
            free((char *)roofs[k].label);
        free(roofs);
    }
    for (size_t k = 0; k < R * 4; k++)
        free(cols[k]);
    for (size_t t = 0; t < n_tics; t++)
        free(tl[t]);
    kbi_free_all(4, cols, series, tx, tl);
    return rc;
}

/* (b) the rate against the size axis, one line per variant, one chart per
 * slice of the other varying parameters. */
static int chart_lines(kbi_rep_model *m, kbi_rep_plugin *p, kbi_chart_ctx *ctx, char *err)
{
    const kbi_result_set *set = m->set;
    int square = 0, axis, rc = KBI_OK;
    kbi_strlist slices = {0};
    char ubuf[128];
    const char *unit = kbi_rep_kind_label(set, p, ubuf, sizeof ubuf);
    if (p->kind == KBI_RATE_NONE || p->n_points < 2)
        return KBI_OK;
    axis = pick_axis(set, p, &square);
    if (axis < 0) {
        kbi_strlist_add(&p->notes, "no line chart: no parameter with numeric values varies");
        return KBI_OK;
    }
    if (collect_slices(set, p, axis, -1, 1, &slices, "line chart"))
        for (size_t sl = 0; sl < slices.n && rc == KBI_OK; sl++)
            rc = chart_line_slice(m, p, ctx, axis, square, slices.s[sl], unit, err);
    kbi_strlist_free(&slices);
    return rc;
}

/* Past this many characters a group label names values only ("ising, 1024, mcs"), and the
 * axis names their parameters once. */
#define MAX_NAMED_LABEL 30

/* The labels of points idx[0..n) of p naming only the parameters that vary among them (what a
 * chart of just these points tells apart; a point's label names every parameter that varies
 * anywhere in the plugin), into labels (owned by the caller); with one point, its label.  When
 * "k=v, ..." labels would be long, they hold the values only and *axis (owned, else NULL)
 * names the parameters.  Returns what the points share of the rest, "k=v, ..." (owned; ""
 * when nothing), for a title. */
static char *subset_labels(const kbi_result_set *set, const kbi_rep_plugin *p, const size_t *idx,
                           size_t n, char **labels, char **axis)
{
    kbi_buf shared = {0}, names = {0};
    kbi_buf *b = kbi_xcalloc(n ? n : 1, sizeof *b);
    int *varies = kbi_xcalloc(p->n_keys ? p->n_keys : 1, sizeof *varies);
    size_t longest = 0;
    char t[256];
    *axis = NULL;
    for (size_t k = 0; k < p->n_keys && n > 0; k++) {
        char first[256];
        if (!p->varies[k])
            continue;
        kbi_param_text(&set->cases[p->points[idx[0]].first], p->keys[k], first, sizeof first);
        for (size_t i = 1; i < n && !varies[k]; i++) {
            kbi_param_text(&set->cases[p->points[idx[i]].first], p->keys[k], t, sizeof t);
            varies[k] = strcmp(first, t) != 0;
        }
        if (!varies[k])
            kbi_buf_printf(&shared, "%s%s=%s", shared.len ? ", " : "", p->keys[k], first);
        else
            kbi_buf_printf(&names, "%s%s", names.len ? ", " : "", p->keys[k]);
    }
    for (int values_only = 0; values_only < 2; values_only++) {
        for (size_t i = 0; i < n; i++) {
            kbi_buf_free(&b[i]);
            for (size_t k = 0; k < p->n_keys; k++)
                if (varies[k]) {
                    kbi_param_text(&set->cases[p->points[idx[i]].first], p->keys[k], t, sizeof t);
                    kbi_buf_printf(&b[i], "%s%s%s%s", b[i].len ? ", " : "",
                                   values_only ? "" : p->keys[k], values_only ? "" : "=", t);
                }
            if (b[i].len > longest)
                longest = b[i].len;
        }
        if (longest <= MAX_NAMED_LABEL || n <= 1)
            break;
        *axis = kbi_strdup(names.data);
    }
    for (size_t i = 0; i < n; i++)
        labels[i] = b[i].len ? b[i].data : kbi_strdup(p->points[idx[i]].label);
    kbi_buf_free(&names);
    free(b);
    free(varies);
    if (n <= 1) {
        kbi_buf_free(&shared);
        return kbi_strdup("");
    }
    return shared.data ? shared.data : kbi_strdup("");
}

/* The speedup of case ci when it is against baseline variant b. */
static int speedup_vs(const kbi_result_set *set, size_t ci, const char *b, double *sp)
{
    return ci != KBI_NO_CASE && strcmp(set->cases[ci].baseline, b) == 0 &&
           kbi_report_speedup(set, ci, sp);
}

/* (c) the speedup of every variant against baseline variant b, at every
 * point whose cases are measured against b; detail names the chart when
 * the plugin has several baselines (one per profile section). */
static int chart_speedup_vs(kbi_rep_model *m, kbi_rep_plugin *p, kbi_chart_ctx *ctx, const char *b,
                            const char *detail, char *err)
{
    const kbi_result_set *set = m->set;
    size_t R = p->n_rows, G = p->n_points, n_series = 0, n_groups = 0;
    double *v;
    const char **series, **groups;
    int *colors, rc = KBI_OK, any = 0;
    char *shared, *xlabel;
    size_t *row_of;
    size_t *point_of;
    series = kbi_xcalloc(R, sizeof *series);
    groups = kbi_xcalloc(G, sizeof *groups);
    colors = kbi_xcalloc(R, sizeof *colors);
    row_of = kbi_xcalloc(R, sizeof *row_of);
    point_of = kbi_xcalloc(G, sizeof *point_of);
    /* Only the variants and points that have a speedup (host variants
     * without a baseline, or a point whose baseline failed, have none). */
    for (size_t r = 0; r < R; r++) {
        int has = 0;
        if (strcmp(p->rows[r].variant, b) == 0)
            continue;
        for (size_t g = 0; g < G && !has; g++) {
            double sp;
            size_t ci = p->points[g].cell[r];
            has = speedup_vs(set, ci, b, &sp);
        }
        if (!has)
            continue;
        row_of[n_series] = r;
        series[n_series] = p->rows[r].name;
        colors[n_series] = (int)r;
        n_series++;
    }
    for (size_t g = 0; g < G; g++) {
        int has = 0;
        for (size_t s = 0; s < n_series && !has; s++) {
            double sp;
            size_t ci = p->points[g].cell[row_of[s]];
            has = speedup_vs(set, ci, b, &sp);
        }
        if (has)
            point_of[n_groups++] = g;
    }
    G = n_groups;
    v = kbi_xmalloc((G ? G : 1) * (n_series ? n_series : 1) * sizeof *v);
    shared = subset_labels(set, p, point_of, G, (char **)groups, &xlabel);
    for (size_t g = 0; g < G; g++) {
        const kbi_rep_point *q = &p->points[point_of[g]];
        for (size_t s = 0; s < n_series; s++) {
            size_t ci = q->cell[row_of[s]];
            double sp;
            v[g * n_series + s] = NAN;
            if (speedup_vs(set, ci, b, &sp)) {
                v[g * n_series + s] = sp;
                any = 1;
            }
        }
    }
    if (n_series > 0 && any) {
        kbi_buf title = {0}, ylabel = {0}, ref = {0};
        char *stem = make_stem(m, p->name, "speedup", detail);
        kbi_bar_chart bc = {0};
        kbi_buf_printf(&title, "%s: speedup against %s", p->name, b);
        if (shared[0]) /* what every point of the chart shares, when it is short */
            kbi_buf_printf(&title, strlen(shared) <= 100 ? " (%s)" : " (%.97s...)", shared);
        kbi_buf_printf(&ylabel, "speedup: median time of %s / of the variant", b);
        kbi_buf_printf(&ref, "%s = 1", b);
        bc.stem = stem;
        bc.title = title.data;
        bc.ylabel = ylabel.data;
        bc.n_groups = G;
        bc.groups = groups;
        bc.n_series = n_series;
        bc.series = series;
        bc.color = colors;
        bc.value = v;
        bc.reference = 1.0;
        bc.reference_label = ref.data;
        bc.value_labels = G * n_series <= 10;
        bc.xlabel = xlabel;
        add_chart_slot(p);
        rc = kbi_chart_bars(ctx, &bc, err);
        rc = chart_result(rc, &p->charts[p->n_charts++], stem, title.data, &p->notes, err);
        kbi_buf_free(&title);
        kbi_buf_free(&ylabel);
        kbi_buf_free(&ref);
    }
    for (size_t g = 0; g < G; g++)
        free((char *)groups[g]);
    kbi_free_all(8, v, series, groups, colors, row_of, point_of, shared, xlabel);
    return rc;
}

/* (c) for each baseline of the plugin: one chart when it has one (as
 * "<plugin>-speedup"), else one per baseline, named after it. */
static int chart_speedup(kbi_rep_model *m, kbi_rep_plugin *p, kbi_chart_ctx *ctx, char *err)
{
    int rc = KBI_OK;
    if (p->n_rows < 2)
        return KBI_OK;
    for (size_t i = 0; i < p->baselines.n && rc == KBI_OK; i++)
        rc = chart_speedup_vs(m, p, ctx, p->baselines.s[i],
                              p->baselines.n > 1 ? p->baselines.s[i] : NULL, err);
    return rc;
}

/* The compute roof of a case in the roofline: the path its record names, FP32 FMA when it
 * names none (or only the memory roof, which the roofline always draws). */
static const char *compute_path(const kbi_case_result *c)
{
    return c->roof && kbi_roof_known(c->roof) && strcmp(c->roof, "memory") != 0 ? c->roof : "fp32";
}

/* The peaks of the compute paths the roofline's variants use, from env's ceilings, into
 * peaks (labels owned by the caller); a path the run has no ceiling for is a note.  Returns
 * how many. */
static size_t roofline_peaks(const kbi_env_record *env, const kbi_strlist *paths, kbi_roof *peaks,
                             size_t max, kbi_strlist *notes)
{
    size_t n = 0;
    for (size_t i = 0; i < paths->n && n < max; i++) {
        const char *path = paths->s[i];
        double v = !env                          ? 0
                   : strcmp(path, "tf32") == 0   ? env->tf32_gflops
                   : strcmp(path, "tf32x3") == 0 ? env->tf32_gflops / 3
                                                 : env->peak_gflops;
        kbi_buf b = {0};
        if (!(v > 0)) {
            kbi_buf_printf(&b, "the roofline has no %s roof: the run recorded no such ceiling",
                           kbi_roof_label(path));
            kbi_strlist_add(notes, b.data);
            kbi_buf_free(&b);
            continue;
        }
        kbi_buf_printf(&b, "%s: %.0f GFLOP/s", kbi_roof_label(path), v);
        peaks[n].value = v;
        peaks[n++].label = b.data;
    }
    return n;
}

static int same_ceilings(const kbi_env_record *a, const kbi_env_record *b)
{
    return a->bandwidth_gbs == b->bandwidth_gbs && a->peak_gflops == b->peak_gflops &&
           a->tf32_gflops == b->tf32_gflops;
}

/* (d) the roofline of the cases that count both flops and bytes, under the
 * ceilings of the run (measured, or from the profile). */
static int chart_roofline(kbi_rep_model *m, kbi_rep_plugin *p, kbi_chart_ctx *ctx, char *err)
{
    const kbi_result_set *set = m->set;
    size_t R = p->n_rows, n_series = 0;
    kbi_line_series *series;
    double **cols;
    const kbi_env_record *env = NULL;
    kbi_strlist paths = {0};
    int rc = KBI_OK, mixed = 0, any_flops = 0;
    for (size_t k = 0; k < p->n_cases && !any_flops; k++) {
        const kbi_case_result *c = &set->cases[p->cases[k]];
        any_flops = kbi_case_ok(c) && c->flops > 0 && c->bytes > 0;
        env = c->env;
    }
    if (!any_flops)
        return KBI_OK;
    if (!env || (env->bandwidth_gbs <= 0 && env->peak_gflops <= 0)) {
        kbi_strlist_add(&p->notes,
                        "no roofline: the run recorded no ceilings (neither measured nor "
                        "set in the profile)");
        return KBI_OK;
    }
    env = NULL;
    series = kbi_xcalloc(R, sizeof *series);
    cols = kbi_xcalloc(R * 2, sizeof *cols);
    for (size_t r = 0; r < R; r++) {
        size_t n = 0;
        cols[r * 2] = kbi_xmalloc(p->n_points * sizeof(double));
        cols[r * 2 + 1] = kbi_xmalloc(p->n_points * sizeof(double));
        for (size_t i = 0; i < p->n_points; i++) {
            size_t ci = p->points[i].cell[r];
            const kbi_case_result *c;
            double g, lo, hi;
            if (ci == KBI_NO_CASE)
                continue;
            c = &set->cases[ci];
            if (c->flops <= 0 || c->bytes <= 0 || !kbi_case_rate(c, KBI_RATE_FLOPS, &g, &lo, &hi))
                continue;
            if (!env)
                env = c->env;
            else if (c->env && (c->env->bandwidth_gbs > 0 || c->env->peak_gflops > 0) &&
                     !same_ceilings(c->env, env))
                mixed = 1;
            if (!kbi_strlist_has(&paths, compute_path(c)))
                kbi_strlist_add(&paths, compute_path(c));
            cols[r * 2][n] = c->flops / c->bytes;
            cols[r * 2 + 1][n] = g;
            n++;
        }
        if (n == 0)
            continue;
        series[n_series++] = (kbi_line_series){.name = p->rows[r].name,
                                               .color = (int)r,
                                               .n = n,
                                               .x = cols[r * 2],
                                               .y = cols[r * 2 + 1]};
    }
    if (n_series > 0) {
        kbi_buf title = {0};
        char *stem = make_stem(m, p->name, "roofline", NULL);
        kbi_roofline rl = {0};
        kbi_roof peaks[4] = {{0}};
        const char *src = env ? kbi_jstr(env->json, "ceilings", "source") : "";
        kbi_buf_printf(&title, "%s: roofline%s%s", p->name,
                       env && env->device_name[0] ? " on " : "", env ? env->device_name : "");
        rl.stem = stem;
        rl.title = title.data;
        rl.bandwidth_gbs = env ? env->bandwidth_gbs : 0;
        rl.n_peaks = roofline_peaks(env, &paths, peaks, 4, &p->notes);
        rl.peaks = peaks;
        rl.ceiling_source = src;
        rl.n_series = n_series;
        rl.series = series;
        if (mixed)
            kbi_strlist_add(&p->notes, "the roofline draws the ceilings of the first run; the runs "
                                       "merged here measured different ceilings");
        add_chart_slot(p);
        rc = kbi_chart_roofline(ctx, &rl, err);
        rc = chart_result(rc, &p->charts[p->n_charts++], stem, title.data, &p->notes, err);
        kbi_buf_free(&title);
        for (size_t i = 0; i < rl.n_peaks; i++)
            free((char *)peaks[i].label);
    }
    for (size_t r = 0; r < R * 2; r++)
        free(cols[r]);
    free(cols);
    free(series);
    kbi_strlist_free(&paths);
    return rc;
}

/* (e) the plugin's rate against the board's mean power, one point per case whose energy was
 * measured, one colour per variant: a point's rate over its power is its work per joule, so
 * a variant up and to the left is the more efficient one. */
static int chart_energy(kbi_rep_model *m, kbi_rep_plugin *p, kbi_chart_ctx *ctx, char *err)
{
    const kbi_result_set *set = m->set;
    size_t R = p->n_rows, n_series = 0;
    kbi_line_series *series;
    double **cols;
    char ubuf[128];
    /* A rate even where the plugin's headline is a time per item: rate over power is work
     * per joule. */
    kbi_rep_plugin rated = *p;
    const char *unit;
    if (rated.kind == KBI_RATE_TIME_PER_ITEM) {
        rated.kind = KBI_RATE_ITEMS;
        rated.scale = 1;
    }
    unit = kbi_rep_kind_label(set, &rated, ubuf, sizeof ubuf);
    int rc = KBI_OK;
    if (p->kind == KBI_RATE_NONE)
        return KBI_OK;
    series = kbi_xcalloc(R, sizeof *series);
    cols = kbi_xcalloc(R * 4, sizeof *cols);
    for (size_t r = 0; r < R; r++) {
        size_t n = 0;
        for (int k = 0; k < 4; k++)
            cols[r * 4 + k] = kbi_xmalloc((p->n_points + 1) * sizeof(double));
        for (size_t i = 0; i < p->n_points; i++) {
            size_t ci = p->points[i].cell[r];
            const kbi_case_result *c;
            double v, lo, hi;
            if (ci == KBI_NO_CASE)
                continue;
            c = &set->cases[ci];
            if (!c->has_energy || !c->energy.measured || !kbi_rep_rate(&rated, c, &v, &lo, &hi))
                continue;
            cols[r * 4][n] = c->energy.watts;
            cols[r * 4 + 1][n] = v;
            cols[r * 4 + 2][n] = lo;
            cols[r * 4 + 3][n] = hi;
            n++;
        }
        if (n > 0)
            series[n_series++] = (kbi_line_series){.name = p->rows[r].name,
                                                   .color = (int)r,
                                                   .n = n,
                                                   .x = cols[r * 4],
                                                   .y = cols[r * 4 + 1],
                                                   .low = cols[r * 4 + 2],
                                                   .high = cols[r * 4 + 3]};
    }
    if (n_series > 0) {
        kbi_buf title = {0}, ylabel = {0};
        char *stem = make_stem(m, p->name, "power", NULL);
        kbi_line_chart lc = {0};
        kbi_buf_printf(&title, "%s: %s against the board's power (rate / power = work per joule)",
                       p->name, unit);
        rate_ylabel(&rated, unit, &ylabel);
        lc.stem = stem;
        lc.title = title.data;
        lc.xlabel = "mean board power in the energy windows (W)";
        lc.ylabel = ylabel.data;
        lc.n_series = n_series;
        lc.series = series;
        lc.points_only = 1;
        add_chart_slot(p);
        rc = kbi_chart_lines(ctx, &lc, err);
        rc = chart_result(rc, &p->charts[p->n_charts++], stem, title.data, &p->notes, err);
        kbi_buf_free(&title);
        kbi_buf_free(&ylabel);
    }
    for (size_t r = 0; r < R * 4; r++)
        free(cols[r]);
    free(cols);
    free(series);
    return rc;
}

/* Whether key k varies and has a numeric value (a number or dims) at
 * every point of p. */
static int numeric_axis(const kbi_result_set *set, const kbi_rep_plugin *p, size_t k, int *square)
{
    int ok = p->varies[k];
    *square = all_square(set, p, p->keys[k]);
    for (size_t i = 0; i < p->n_points && ok; i++) {
        double x;
        ok = axis_value(json_object_get(set->cases[p->points[i].first].params, p->keys[k]), *square,
                        &x);
    }
    return ok;
}

/* Picks the axes of the metric charts: x, and the parameter drawn as one
 * line per value (-1: none).  With a size parameter (the record's
 * size_param) and another numeric axis varying, x is the other one and the
 * lines are sizes (a moment ratio against T, one line per L); else x is
 * the size parameter, or the first numeric axis, and the lines are the next
 * numeric axis.  Returns 0 when no numeric parameter varies. */
static int metric_axes(const kbi_result_set *set, const kbi_rep_plugin *p, int *x, int *line,
                       int *square)
{
    int size = -1, first = -1, second = -1, sq;
    const char *size_param = "";
    for (size_t k = 0; k < p->n_cases && !size_param[0]; k++)
        size_param = set->cases[p->cases[k]].size_param;
    for (size_t k = 0; k < p->n_keys; k++) {
        if (!numeric_axis(set, p, k, &sq))
            continue;
        if (strcmp(p->keys[k], size_param) == 0)
            size = (int)k;
        else if (first < 0)
            first = (int)k;
        else if (second < 0)
            second = (int)k;
    }
    if (size >= 0 && first >= 0) {
        *x = first;
        *line = size;
    } else if (size >= 0) {
        *x = size;
        *line = -1;
    } else if (first >= 0) {
        *x = first;
        *line = second;
    } else {
        return 0;
    }
    numeric_axis(set, p, (size_t)*x, square);
    return 1;
}

typedef struct metric_line { /* one line of a metric chart: a variant at one value of `line` */
    size_t row;
    char *label; /* the line parameter's value, "" without one */
    double at;   /* its numeric value, for ordering */
    size_t n;
    double *x, *y, *lo, *hi;
} metric_line;

static int cmp_metric_line(const void *a, const void *b)
{
    const metric_line *p = a, *q = b;
    if (p->row != q->row)
        return p->row < q->row ? -1 : 1;
    return (p->at > q->at) - (p->at < q->at);
}

/* The lines of one metric chart being gathered. */
typedef struct metric_lines {
    metric_line *l;
    size_t n, n_points;
    const kbi_metric *decl; /* the metric as declared, for its unit and bound */
} metric_lines;

/* The line of row r at line value label, added when new. */
static metric_line *line_for(metric_lines *ls, size_t r, const char *label, double at,
                             size_t n_points)
{
    metric_line *l;
    for (size_t k = 0; k < ls->n; k++)
        if (ls->l[k].row == r && strcmp(ls->l[k].label, label) == 0)
            return &ls->l[k];
    ls->l = kbi_xrealloc(ls->l, (ls->n + 1) * sizeof *ls->l);
    l = &ls->l[ls->n++];
    memset(l, 0, sizeof *l);
    l->row = r;
    l->label = kbi_strdup(label);
    l->at = at;
    l->x = kbi_xcalloc(n_points, sizeof *l->x);
    l->y = kbi_xcalloc(n_points, sizeof *l->y);
    l->lo = kbi_xcalloc(n_points, sizeof *l->lo);
    l->hi = kbi_xcalloc(n_points, sizeof *l->hi);
    return l;
}

/* Adds metric name of case ci (row r) to its line, when it has a value. */
static void add_metric_point(const kbi_result_set *set, const kbi_rep_plugin *p, size_t ci,
                             size_t r, const char *name, int x, int line, int square,
                             metric_lines *ls)
{
    const kbi_case_result *c = &set->cases[ci];
    const kbi_metric *mt = kbi_find_metric(c, name);
    char label[256] = "";
    double xv, at = 0, u;
    metric_line *l;
    /* Every case that reported a value, including one that failed its
     * bound: the chart shows where it went. */
    if (!mt || !isfinite(mt->value) ||
        !axis_value(json_object_get(c->params, p->keys[x]), square, &xv))
        return;
    if (!ls->decl || (!ls->decl->declared && mt->declared))
        ls->decl = mt;
    if (line >= 0) {
        kbi_param_text(c, p->keys[line], label, sizeof label);
        axis_value(json_object_get(c->params, p->keys[line]), 0, &at);
    }
    l = line_for(ls, r, label, at, p->n_points);
    u = isfinite(mt->uncertainty) ? mt->uncertainty : 0;
    l->x[l->n] = xv;
    l->y[l->n] = mt->value;
    l->lo[l->n] = mt->value - u;
    l->hi[l->n] = mt->value + u;
    l->n++;
    ls->n_points++;
}

/* Line l as chart series number k, its points sorted by x. */
static kbi_line_series metric_series(const kbi_rep_plugin *p, metric_line *l, size_t k, int line)
{
    kbi_buf nm = {0};
    /* Insertion sort: a handful of points. */
    for (size_t i = 1; i < l->n; i++)
        for (size_t j = i; j > 0 && l->x[j - 1] > l->x[j]; j--) {
            double *cols[] = {l->x, l->y, l->lo, l->hi};
            for (int c = 0; c < 4; c++) {
                double t = cols[c][j];
                cols[c][j] = cols[c][j - 1];
                cols[c][j - 1] = t;
            }
        }
    if (p->n_rows > 1 || line < 0)
        kbi_buf_printf(&nm, "%s", p->rows[l->row].name);
    if (line >= 0)
        kbi_buf_printf(&nm, "%s%s=%s", nm.len ? ", " : "", p->keys[line], l->label);
    return (kbi_line_series){
        .name = nm.data,
        .color = (int)k,
        .n = l->n,
        .x = l->x,
        .y = l->y,
        .low = l->lo,
        .high = l->hi,
    };
}

/* Draws the chart of metric name from its series. */
static int draw_metric_chart(kbi_rep_model *m, kbi_rep_plugin *p, kbi_chart_ctx *ctx,
                             const char *name, int x, int line, int square, const char *slice,
                             const kbi_metric *decl, kbi_line_chart *lc, char *err)
{
    kbi_buf title = {0}, ylabel = {0}, detail = {0};
    char *stem, xlabel[300], bound_label[64];
    int rc;
    kbi_buf_printf(&detail, "%s-vs-%s%s%s", name, p->keys[x], slice[0] ? "-" : "", slice);
    stem = make_stem(m, p->name, "metric", detail.data);
    kbi_buf_printf(&title, "%s: %s against %s", p->name, name, p->keys[x]);
    if (line >= 0)
        kbi_buf_printf(&title, ", one line per %s", p->keys[line]);
    if (slice[0])
        kbi_buf_printf(&title, " (%s)", slice);
    kbi_buf_printf(&ylabel, "%s", name);
    if (decl->unit[0] && strcmp(decl->unit, "1") != 0)
        kbi_buf_printf(&ylabel, " (%s)", decl->unit);
    kbi_buf_printf(&ylabel, "; bars: ± 1 standard uncertainty");
    if (square)
        snprintf(xlabel, sizeof xlabel, "%s (edge: every dimension is equal)", p->keys[x]);
    else
        snprintf(xlabel, sizeof xlabel, "%s", p->keys[x]);
    lc->stem = stem;
    lc->title = title.data;
    lc->xlabel = xlabel;
    lc->ylabel = ylabel.data;
    lc->fit_y = 1;
    if ((decl->bounds & KB_BOUND_HIGH) && decl->high > 0) {
        snprintf(bound_label, sizeof bound_label, "bound: ≤ %.4g", decl->high);
        lc->reference = decl->high;
        lc->reference_label = bound_label;
    }
    add_chart_slot(p);
    rc = kbi_chart_lines(ctx, lc, err);
    rc = chart_result(rc, &p->charts[p->n_charts++], stem, title.data, &p->notes, err);
    kbi_buf_free(&title);
    kbi_buf_free(&ylabel);
    kbi_buf_free(&detail);
    return rc;
}

/* The x tics of a metric chart: one at each x a point has, labelled as the rate charts label
 * sizes (1Mi); none (0: gnuplot's own, made readable) past max distinct values. */
static size_t metric_tics(const metric_lines *ls, double *tx, char **tl, size_t max)
{
    size_t n = 0;
    for (size_t k = 0; k < ls->n; k++)
        for (size_t i = 0; i < ls->l[k].n; i++) {
            size_t t = 0;
            while (t < n && tx[t] != ls->l[k].x[i])
                t++;
            if (t < n)
                continue;
            if (n == max) {
                for (size_t j = 0; j < n; j++)
                    free(tl[j]);
                return 0;
            }
            tx[n++] = ls->l[k].x[i];
        }
    for (size_t t = 0; t < n; t++) {
        char b[64];
        kbi_fmt_axis(tx[t], b, sizeof b);
        tl[t] = kbi_strdup(b);
    }
    return n;
}

/* Gathers metric `name` of the points of one slice (the points whose parameters other than fx
 * and fline read `slice`) into ls, at x, one line per value of `line` (-1: per variant).
 * Returns whether some line has two points or more. */
static int gather_metric(const kbi_result_set *set, const kbi_rep_plugin *p, const char *name,
                         int fx, int fline, const char *slice, int x, int line, int square,
                         metric_lines *ls)
{
    int two = 0;
    for (size_t i = 0; i < p->n_points; i++) {
        char *sl = slice_of(set, p, i, fx, fline);
        int in = strcmp(sl, slice) == 0;
        free(sl);
        for (size_t r = 0; in && r < p->n_rows; r++)
            if (p->points[i].cell[r] != KBI_NO_CASE)
                add_metric_point(set, p, p->points[i].cell[r], r, name, x, line, square, ls);
    }
    for (size_t k = 0; k < ls->n && !two; k++)
        two = ls->l[k].n >= 2;
    return two;
}

static void free_metric_lines(metric_lines *ls)
{
    for (size_t k = 0; k < ls->n; k++) {
        free(ls->l[k].label);
        free(ls->l[k].x);
        free(ls->l[k].y);
        free(ls->l[k].lo);
        free(ls->l[k].hi);
    }
    free(ls->l);
    memset(ls, 0, sizeof *ls);
}

/* One chart of metric `name` for the points of one slice, when one of its lines has two
 * points or more.  Where x does not vary in the slice (every line one point: q is 0 for every
 * Ising case) the chart is drawn against the line parameter instead, one line per variant;
 * where that gives no line of two points either, nothing is drawn and *one_point_lines says
 * so (the table shows the values). */
static int chart_one_metric(kbi_rep_model *m, kbi_rep_plugin *p, kbi_chart_ctx *ctx,
                            const char *name, int x, int line, int square, const char *slice,
                            int *one_point_lines, char *err)
{
    const kbi_result_set *set = m->set;
    metric_lines ls = {0};
    int rc = KBI_OK, fx = x, fline = line;
    int two = gather_metric(set, p, name, fx, fline, slice, x, line, square, &ls);
    if (!two && line >= 0 && numeric_axis(set, p, (size_t)line, &square)) {
        free_metric_lines(&ls);
        x = line;
        line = -1;
        two = gather_metric(set, p, name, fx, fline, slice, x, line, square, &ls);
    }
    *one_point_lines = ls.n > 0 && !two;
    if (two) {
        kbi_line_series *series = kbi_xcalloc(ls.n, sizeof *series);
        kbi_line_chart lc = {.n_series = ls.n, .series = series};
        double tx[12];
        char *tl[12];
        qsort(ls.l, ls.n, sizeof *ls.l, cmp_metric_line);
        for (size_t k = 0; k < ls.n; k++)
            series[k] = metric_series(p, &ls.l[k], k, line);
        lc.n_xtics = metric_tics(&ls, tx, tl, 12);
        lc.xtic_values = tx;
        lc.xtic_labels = (const char *const *)tl;
        rc = draw_metric_chart(m, p, ctx, name, x, line, square, slice, ls.decl, &lc, err);
        for (size_t k = 0; k < ls.n; k++)
            free((char *)series[k].name);
        for (size_t t = 0; t < lc.n_xtics; t++)
            free(tl[t]);
        free(series);
    }
    free_metric_lines(&ls);
    return rc;
}

/* (e) each declared metric against a numeric parameter (metric_axes), one
 * line per value of another, error bars from the uncertainty; one chart per
 * combination of the other varying parameters. */
static int chart_metrics(kbi_rep_model *m, kbi_rep_plugin *p, kbi_chart_ctx *ctx, char *err)
{
    const kbi_result_set *set = m->set;
    kbi_strlist names = {0}, slices = {0};
    int x, line, square, rc = KBI_OK;
    size_t n_single = 0;
    for (size_t k = 0; k < p->n_cases; k++) {
        const kbi_case_result *c = &set->cases[p->cases[k]];
        for (size_t j = 0; j < c->n_metrics; j++) {
            int seen = 0;
            if (!c->metrics[j].declared)
                continue;
            for (size_t i = 0; i < names.n && !seen; i++)
                seen = strcmp(names.s[i], c->metrics[j].name) == 0;
            if (!seen)
                kbi_strlist_add(&names, c->metrics[j].name);
        }
    }
    if (!names.n || p->n_points < 2)
        goto done;
    if (!metric_axes(set, p, &x, &line, &square)) {
        kbi_strlist_add(&p->notes, "no metric chart: no parameter with numeric values varies");
        goto done;
    }
    if (!collect_slices(set, p, x, line, 0, &slices, "metric chart"))
        goto done;
    for (size_t i = 0; i < names.n && rc == KBI_OK; i++)
        for (size_t sl = 0; sl < slices.n && rc == KBI_OK; sl++) {
            int single = 0;
            rc = chart_one_metric(m, p, ctx, names.s[i], x, line, square, slices.s[sl], &single,
                                  err);
            n_single += single;
        }
    if (n_single > 0) {
        char note[256];
        snprintf(note, sizeof note,
                 "%zu metric chart%s not drawn: every line would be one point (the tables show "
                 "the values)",
                 n_single, n_single == 1 ? "" : "s");
        kbi_strlist_add(&p->notes, note);
    }
done:
    kbi_strlist_free(&names);
    kbi_strlist_free(&slices);
    return rc;
}

int kbi_report_draw_charts(kbi_rep_model *m, kbi_chart_ctx *ctx, char *err)
{
    for (size_t i = 0; i < m->n_plugins; i++) {
        kbi_rep_plugin *p = &m->plugins[i];
        int rc = chart_lines(m, p, ctx, err);
        if (rc == KBI_OK)
            rc = chart_speedup(m, p, ctx, err);
        if (rc == KBI_OK)
            rc = chart_roofline(m, p, ctx, err);
        if (rc == KBI_OK)
            rc = chart_energy(m, p, ctx, err);
        if (rc == KBI_OK)
            rc = chart_points(m, p, ctx, err);
        if (rc == KBI_OK)
            rc = chart_metrics(m, p, ctx, err);
        if (rc != KBI_OK)
            return rc;
    }
    return KBI_OK;
}
