/* Hover text for a report's charts, read back from the .gp script and the
 * .dat data chart.c wrote beside each SVG: gnuplot's SVG holds shapes, not
 * values, so the values a reader hovers for come from the data the chart
 * was drawn from, named the way the chart names them (series, group or x
 * tic, axis labels). */
#define _XOPEN_SOURCE 700
#include "report_html_tips.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "format.h"

#define MAX_TICS 256
#define GROUP_ROWS 12 /* rows a clause's own hover text lists before "…" */

typedef struct dat_row {
    double x, y, lo, hi;
    char *label; /* the quoted group column, or NULL */
} dat_row;

typedef struct dat_series {
    char *name;
    dat_row *row;
    size_t n;
} dat_series;

typedef struct chart_text {
    char xname[256], yname[256]; /* axis labels, cut before their explanation */
    double tic_x[MAX_TICS];
    char *tic[MAX_TICS];
    size_t n_tics;
    int no_key;
    dat_series *series;
    size_t n_series;
} chart_text;

/* A gnuplot single-quoted string at s ('' is a quote) into out; returns
 * the byte after it, or NULL when s holds none. */
static const char *gp_string(const char *s, char *out, size_t n)
{
    size_t k = 0;
    if (*s != '\'')
        return NULL;
    for (s++; *s; s++) {
        if (*s == '\'' && s[1] != '\'')
            break;
        if (*s == '\'')
            s++;
        if (k + 1 < n)
            out[k++] = *s;
    }
    out[k] = '\0';
    return *s ? s + 1 : NULL;
}

/* An axis label as a name: "GFLOP/s (median; ...)" -> "GFLOP/s",
 * "speedup: median time of ..." -> "speedup". */
static void axis_name(const char *line, char *out, size_t n)
{
    const char *q = strchr(line, '\'');
    char *cut;
    out[0] = '\0';
    if (!q || !gp_string(q, out, n))
        return;
    if ((cut = strstr(out, " (")) != NULL || (cut = strstr(out, ": ")) != NULL)
        *cut = '\0';
}

/* set xtics ('label' x, 'label' x, ...) */
static void read_tics(chart_text *c, const char *s)
{
    char label[256];
    while (c->n_tics < MAX_TICS && (s = strchr(s, '\'')) != NULL &&
           (s = gp_string(s, label, sizeof label))) {
        char *end;
        double x = strtod(s, &end);
        if (end == s)
            break;
        c->tic_x[c->n_tics] = x;
        c->tic[c->n_tics++] = kbi_strdup(label);
        s = end;
    }
}

/* The .dat: "# series I: NAME" opens a block; its rows are x, value, then
 * the columns the header line names (low, high), a quoted group last. */
static void read_data(chart_text *c, char *text)
{
    int col_lo = -1, col_hi = -1, header = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#') {
            unsigned long idx;
            char *name = strstr(line, ": ");
            if (sscanf(line, "# series %lu:", &idx) == 1 && name) {
                c->series = kbi_xrealloc(c->series, (c->n_series + 1) * sizeof *c->series);
                c->series[c->n_series++] = (dat_series){kbi_strdup(name + 2), NULL, 0};
            } else if (++header == 2) { /* "# x value low high group" */
                int k = 0;
                for (char *w = line + 1; *w; k++) {
                    size_t len = strcspn(w += strspn(w, " "), " ");
                    col_lo = len == 3 && strncmp(w, "low", 3) == 0 ? k : col_lo;
                    col_hi = len == 4 && strncmp(w, "high", 4) == 0 ? k : col_hi;
                    w += len;
                }
            }
        } else if (c->n_series) {
            dat_series *sr = &c->series[c->n_series - 1];
            double v[8] = {NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN};
            char *p = line, *end, *q;
            int k = 0;
            for (; k < 8 && (v[k] = strtod(p, &end), end != p); k++)
                p = end;
            if (k < 2)
                continue;
            q = strchr(p, '"');
            sr->row = kbi_xrealloc(sr->row, (sr->n + 1) * sizeof *sr->row);
            sr->row[sr->n++] = (dat_row){v[0], v[1], col_lo >= 0 && col_lo < k ? v[col_lo] : NAN,
                                         col_hi >= 0 && col_hi < k ? v[col_hi] : NAN,
                                         q && strchr(q + 1, '"') ? kbi_strdup(q + 1) : NULL};
            if (sr->row[sr->n - 1].label)
                *strchr(sr->row[sr->n - 1].label, '"') = '\0';
        }
    }
}

/* Where a row sits, as the chart names it: its group, its x tic's label,
 * else the x axis' name and value. */
static void row_where(const chart_text *c, const dat_row *r, kbi_buf *b)
{
    char x[64];
    if (r->label) {
        kbi_buf_printf(b, "%s", r->label);
        return;
    }
    for (size_t i = 0; i < c->n_tics; i++)
        if (fabs(c->tic_x[i] - r->x) <= 1e-9 * fabs(r->x)) {
            kbi_buf_printf(b, "%s", c->tic[i]);
            return;
        }
    snprintf(x, sizeof x, "%.4g", r->x);
    kbi_buf_printf(b, "%s%s%s", c->xname, c->xname[0] ? " " : "", x);
}

/* The row's value, after the y axis' name when named; with its interval
 * when interval is set and it has one. */
static void row_value(const chart_text *c, const dat_row *r, int named, int interval, kbi_buf *b)
{
    char y[64], lo[64], hi[64];
    kbi_fmt_sig4(r->y, y, sizeof y);
    kbi_buf_printf(b, "%s%s%s", named ? c->yname : "", named && c->yname[0] ? " " : "", y);
    if (interval && isfinite(r->lo) && isfinite(r->hi) && (r->lo != r->y || r->hi != r->y)) {
        kbi_fmt_sig4(r->lo, lo, sizeof lo);
        kbi_fmt_sig4(r->hi, hi, sizeof hi);
        kbi_buf_printf(b, " (%s – %s)", lo, hi);
    }
}

/* The texts of a clause that draws series s: one per row it draws, and
 * the whole series in short. */
static void clause_texts(const chart_text *c, const dat_series *s, kbi_clause_tips *t)
{
    kbi_buf all = {0};
    size_t listed = 0;
    t->series = kbi_strdup(s->name);
    t->point = kbi_xcalloc(s->n, sizeof *t->point);
    kbi_buf_printf(&all, "%s%s%s%s:", s->name, c->yname[0] ? " (" : "", c->yname,
                   c->yname[0] ? ")" : "");
    for (size_t i = 0; i < s->n; i++) {
        kbi_buf one = {0};
        if (!isfinite(s->row[i].x) || !isfinite(s->row[i].y))
            continue; /* gnuplot draws nothing for it */
        kbi_buf_printf(&one, "%s, ", s->name);
        row_where(c, &s->row[i], &one);
        kbi_buf_printf(&one, ": ");
        row_value(c, &s->row[i], 1, 1, &one);
        t->point[t->n_points++] = one.data;
        if (listed++ == GROUP_ROWS) {
            kbi_buf_printf(&all, " …");
        } else if (listed <= GROUP_ROWS) {
            kbi_buf_printf(&all, "%s ", listed > 1 ? ";" : "");
            row_where(c, &s->row[i], &all);
            kbi_buf_printf(&all, " ");
            row_value(c, &s->row[i], 0, 0, &all);
        }
    }
    t->group = all.data;
}

/* Whether the comma at s ends a plot clause: it ends the line (one clause a
 * line, as chart.c writes them) or a file name or expression follows; not
 * within a clause's own pairs ("offset 0,0.8"). */
static int ends_clause(const char *s)
{
    s += 1 + strspn(s + 1, " \t");
    return *s == '\n' || *s == '\'' || *s == '"' || *s == '(';
}

/* The clauses of the plot command (its lines joined by newlines), split at
 * the commas that end them, outside parentheses and quotes; each gets its
 * series' texts, or its own title. */
static void read_clauses(const chart_text *c, const char *plot, kbi_chart_tips *t)
{
    int depth = 0;
    char quote = 0;
    for (const char *s = plot, *start = plot;; s++) {
        if (quote && *s == quote)
            quote = 0;
        else if (!quote && (*s == '\'' || *s == '"'))
            quote = *s;
        else if (!quote)
            depth += *s == '(' ? 1 : *s == ')' ? -1 : 0;
        if (*s && (quote || depth || *s != ',' || !ends_clause(s)))
            continue;
        {
            kbi_buf clause = {0};
            kbi_clause_tips *k;
            const char *idx, *title;
            char name[256] = "";
            kbi_buf_printf(&clause, "%.*s", (int)(s - start), start);
            t->clause = kbi_xrealloc(t->clause, (t->n_clauses + 1) * sizeof *t->clause);
            k = memset(&t->clause[t->n_clauses++], 0, sizeof *t->clause);
            idx = strstr(clause.data, " index ");
            title = strstr(clause.data, " title '");
            if (title)
                gp_string(title + 7, name, sizeof name);
            k->keyed = !c->no_key && name[0];
            if (idx && (size_t)atoi(idx + 7) < c->n_series)
                clause_texts(c, &c->series[atoi(idx + 7)], k);
            else if (name[0])
                k->series = kbi_strdup(name);
            kbi_buf_free(&clause);
        }
        if (!*s)
            break;
        start = s + 1;
    }
}

/* The script: axis names, x tics, whether there is a key, and the plot
 * command into plot, its continuation lines joined by newlines. */
static void read_script(chart_text *c, char *text, kbi_buf *plot)
{
    int in_plot = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        size_t len = strlen(line);
        int more = len && line[len - 1] == '\\';
        if (in_plot || strncmp(line, "plot ", 5) == 0) {
            size_t skip = in_plot ? 0 : 5;
            kbi_buf_printf(plot, "%.*s\n", (int)(len - skip - (size_t)more), line + skip);
            in_plot = more;
        } else if (strncmp(line, "set xlabel ", 11) == 0) {
            axis_name(line, c->xname, sizeof c->xname);
        } else if (strncmp(line, "set ylabel ", 11) == 0) {
            axis_name(line, c->yname, sizeof c->yname);
        } else if (strncmp(line, "set xtics (", 11) == 0) {
            read_tics(c, line + 10);
        } else if (strcmp(line, "unset key") == 0) {
            c->no_key = 1;
        }
    }
}

void kbi_chart_tips_read(kbi_chart_tips *t, const char *dir, const char *stem)
{
    chart_text c = {0};
    kbi_buf plot = {0};
    char path[PATH_MAX], *gp = NULL, *dat = NULL;
    memset(t, 0, sizeof *t);
    snprintf(path, sizeof path, "%s/%s.dat", dir, stem);
    if ((dat = kbi_read_text(path)) != NULL)
        read_data(&c, dat);
    snprintf(path, sizeof path, "%s/%s.gp", dir, stem);
    if ((gp = kbi_read_text(path)) != NULL)
        read_script(&c, gp, &plot);
    if (plot.data)
        read_clauses(&c, plot.data, t);
    for (size_t i = 0; i < c.n_series; i++) {
        for (size_t k = 0; k < c.series[i].n; k++)
            free(c.series[i].row[k].label);
        kbi_free_all(2, c.series[i].row, c.series[i].name);
    }
    for (size_t i = 0; i < c.n_tics; i++)
        free(c.tic[i]);
    kbi_free_all(3, c.series, gp, dat);
    kbi_buf_free(&plot);
}

void kbi_chart_tips_free(kbi_chart_tips *t)
{
    for (size_t i = 0; i < t->n_clauses; i++) {
        kbi_clause_tips *k = &t->clause[i];
        for (size_t j = 0; j < k->n_points; j++)
            free(k->point[j]);
        kbi_free_all(3, k->point, k->series, k->group);
    }
    free(t->clause);
    memset(t, 0, sizeof *t);
}
