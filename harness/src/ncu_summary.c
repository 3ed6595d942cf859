/* The per-kernel summary of a profiled run (ncu_summary.h): launches grouped
 * by kernel name, their time summed, their metrics averaged. */
#include "ncu_summary.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "format.h"

#define DURATION "gpu__time_duration.sum"

/* One kernel name while the launches are read. */
typedef struct group {
    const char *name;
    size_t first;     /* index of its first launch: the order of ties */
    size_t launches;  /* launches of this name */
    size_t timed;     /* of them, with a duration */
    double total;     /* their summed duration, in unit */
    const char *unit; /* the duration's unit */
    json_t *sums;     /* NAME -> {"value": sum, "unit", "launches": n} */
} group;

static group *group_of(group **groups, size_t *n, const char *name, size_t index)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*groups)[i].name, name) == 0)
            return &(*groups)[i];
    *groups = kbi_xrealloc(*groups, (*n + 1) * sizeof **groups);
    (*groups)[*n] = (group){.name = name, .first = index, .sums = json_object()};
    return &(*groups)[(*n)++];
}

/* Adds the numeric metrics of kernel k into g. */
static void add_launch(group *g, json_t *k)
{
    const char *key;
    json_t *m;
    g->launches++;
    json_object_foreach(json_object_get(k, "metrics"), key, m)
    {
        json_t *v = json_object_get(m, "value"), *s;
        if (!json_is_number(v))
            continue;
        if ((s = json_object_get(g->sums, key)) == NULL) {
            s = json_object();
            json_object_set_new(s, "value", json_real(0));
            json_object_set(s, "unit", json_object_get(m, "unit"));
            json_object_set_new(s, "launches", json_integer(0));
            json_object_set_new(g->sums, key, s);
        }
        json_real_set(json_object_get(s, "value"),
                      json_real_value(json_object_get(s, "value")) + json_number_value(v));
        json_integer_set(json_object_get(s, "launches"),
                         json_integer_value(json_object_get(s, "launches")) + 1);
        if (strcmp(key, DURATION) == 0) {
            g->timed++;
            g->total += json_number_value(v);
            g->unit = json_string_value(json_object_get(m, "unit"));
        }
    }
}

/* Longest total first; groups without a duration last; ties in launch order. */
static int by_total(const void *pa, const void *pb)
{
    const group *a = pa, *b = pb;
    if (a->timed && b->timed && a->total != b->total)
        return a->total > b->total ? -1 : 1;
    if (!a->timed != !b->timed)
        return a->timed ? -1 : 1;
    return a->first < b->first ? -1 : a->first > b->first;
}

/* g as a summary entry; its sums become means. */
static json_t *entry_of(group *g, double grand_total)
{
    json_t *e = json_object(), *d = json_object(), *s;
    const char *key;
    json_object_set_new(e, "name", json_string(g->name));
    json_object_set_new(e, "launches", json_integer((json_int_t)g->launches));
    json_object_set_new(d, "total", g->timed ? json_real(g->total) : json_null());
    json_object_set_new(d, "mean", g->timed ? json_real(g->total / (double)g->timed) : json_null());
    json_object_set_new(d, "unit", g->unit ? json_string(g->unit) : json_null());
    json_object_set_new(e, "duration", d);
    json_object_set_new(
        e, "share", g->timed && grand_total > 0 ? json_real(g->total / grand_total) : json_null());
    json_object_foreach(g->sums, key, s)
    {
        json_t *v = json_object_get(s, "value");
        json_real_set(v, json_real_value(v) /
                             (double)json_integer_value(json_object_get(s, "launches")));
    }
    json_object_set_new(e, "metrics", g->sums);
    g->sums = NULL;
    return e;
}

json_t *kbi_ncu_summarize(json_t *kernels)
{
    group *groups = NULL;
    size_t n = 0, i;
    double grand_total = 0;
    json_t *k, *out = json_array();
    json_array_foreach(kernels, i, k)
    {
        const char *name = json_string_value(json_object_get(k, "name"));
        add_launch(group_of(&groups, &n, name ? name : "?", i), k);
    }
    for (i = 0; i < n; i++)
        grand_total += groups[i].total;
    if (n > 1)
        qsort(groups, n, sizeof *groups, by_total);
    for (i = 0; i < n; i++)
        json_array_append_new(out, entry_of(&groups[i], grand_total));
    free(groups);
    return out;
}

/* ---- the table ---- */

/* Seconds per unit of an ncu duration ("nsecond", "usecond", "ms"), or 0. */
static double seconds_per(const char *unit)
{
    static const struct {
        const char *a, *b;
        double s;
    } units[] = {{"ns", "nsecond", 1e-9},
                 {"us", "usecond", 1e-6},
                 {"ms", "msecond", 1e-3},
                 {"s", "second", 1.0}};
    for (size_t i = 0; unit && i < sizeof units / sizeof *units; i++)
        if (strcmp(unit, units[i].a) == 0 || strcmp(unit, units[i].b) == 0)
            return units[i].s;
    return 0;
}

/* A duration of ncu's unit as a person reads it ("12.50 µs"); "—" when absent. */
static void fmt_duration(json_t *v, const char *unit, char *out, size_t n)
{
    double s = seconds_per(unit);
    if (!json_is_number(v))
        snprintf(out, n, "—");
    else if (s > 0)
        kbi_format_duration(json_number_value(v) * s, out, n);
    else
        snprintf(out, n, "%.4g %s", json_number_value(v), unit ? unit : "");
}

/* The mean of metric name in summary entry e, formatted with fmt, or "—". */
static void fmt_mean(json_t *e, const char *name, const char *fmt, char *out, size_t n)
{
    json_t *v = json_object_get(json_object_get(json_object_get(e, "metrics"), name), "value");
    if (json_is_number(v))
        snprintf(out, n, fmt, json_number_value(v));
    else
        snprintf(out, n, "—");
}

/* The first line: what was profiled and what limited it. */
static void print_heading(FILE *out, json_t *summary, size_t n_launches,
                          const kbi_ncu_limits *limits)
{
    double total = 0, s = 0;
    size_t i;
    json_t *e;
    json_array_foreach(summary, i, e)
    {
        json_t *d = json_object_get(e, "duration");
        const char *unit = json_string_value(json_object_get(d, "unit"));
        if (json_is_number(json_object_get(d, "total")) && (s = seconds_per(unit)) > 0)
            total += json_number_value(json_object_get(d, "total")) * s;
    }
    fprintf(out, "by kernel: %zu launch%s of %zu kernel%s", n_launches, n_launches == 1 ? "" : "es",
            json_array_size(summary), json_array_size(summary) == 1 ? "" : "s");
    if (total > 0) {
        char t[64];
        kbi_format_duration(total, t, sizeof t);
        fprintf(out, ", %s of kernel time", t);
    }
    if (limits && (limits->launch_count || limits->launch_skip || limits->kernel_regex)) {
        if (limits->launch_count)
            fprintf(out, " (profiled: at most %d launch%s", limits->launch_count,
                    limits->launch_count == 1 ? "" : "es");
        else
            fprintf(out, " (profiled: the launches");
        if (limits->kernel_regex)
            fprintf(out, " of kernels matching /%s/", limits->kernel_regex);
        if (limits->launch_skip)
            fprintf(out, " after the first %d", limits->launch_skip);
        fprintf(out, "; the run may launch more)");
    }
    fputc('\n', out);
}

/* s right-aligned in width columns (counted in characters, not UTF-8 bytes: "µs", "—"). */
static void put_cell(FILE *out, const char *s, int width)
{
    int chars = 0;
    for (const char *p = s; *p; p++)
        chars += ((unsigned char)*p & 0xC0) != 0x80;
    fprintf(out, " %*s%s", width > chars ? width - chars : 0, "", s);
}

void kbi_ncu_print_kernel_table(FILE *out, json_t *summary, size_t n_launches,
                                const kbi_ncu_limits *limits)
{
    static const struct {
        const char *heading, *metric, *fmt;
        int width;
    } columns[] = {
        {"SM%", "sm__throughput.avg.pct_of_peak_sustained_elapsed", "%.1f", 6},
        {"mem%", "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "%.1f", 6},
        {"DRAM%", "dram__throughput.avg.pct_of_peak_sustained_elapsed", "%.1f", 6},
        {"occ%", "sm__warps_active.avg.pct_of_peak_sustained_active", "%.1f", 6},
        {"regs", "launch__registers_per_thread", "%.0f", 5},
    };
    const size_t n_columns = sizeof columns / sizeof *columns;
    size_t i;
    json_t *e;
    print_heading(out, summary, n_launches, limits);
    fputs(" ", out);
    put_cell(out, "share", 6);
    put_cell(out, "total", 10);
    put_cell(out, "mean", 10);
    put_cell(out, "launches", 8);
    for (size_t c = 0; c < n_columns; c++)
        put_cell(out, columns[c].heading, columns[c].width);
    fputs("  kernel\n", out);
    json_array_foreach(summary, i, e)
    {
        json_t *d = json_object_get(e, "duration"), *share = json_object_get(e, "share");
        const char *unit = json_string_value(json_object_get(d, "unit"));
        char cell[64];
        fputs(" ", out);
        if (json_is_number(share))
            snprintf(cell, sizeof cell, "%.1f%%", 100 * json_number_value(share));
        else
            snprintf(cell, sizeof cell, "—");
        put_cell(out, cell, 6);
        fmt_duration(json_object_get(d, "total"), unit, cell, sizeof cell);
        put_cell(out, cell, 10);
        fmt_duration(json_object_get(d, "mean"), unit, cell, sizeof cell);
        put_cell(out, cell, 10);
        snprintf(cell, sizeof cell, "%lld",
                 (long long)json_integer_value(json_object_get(e, "launches")));
        put_cell(out, cell, 8);
        for (size_t c = 0; c < n_columns; c++) {
            fmt_mean(e, columns[c].metric, columns[c].fmt, cell, sizeof cell);
            put_cell(out, cell, columns[c].width);
        }
        fprintf(out, "  %s\n", json_string_value(json_object_get(e, "name")));
    }
}
