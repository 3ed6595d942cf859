/* results.csv of a report: one row per case with the figures of report.md,
 * for spreadsheets. */
#define _XOPEN_SOURCE 700
#include "report.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "report_model.h"

static void csv_num(FILE *f, double v, int present)
{
    if (present && isfinite(v))
        fprintf(f, "%.10g", v);
}

/* A comma, then the field or the number (csv_num). */
static void next_field(FILE *f, const char *s)
{
    fputc(',', f);
    kbi_csv_field(f, s);
}

static void next_num(FILE *f, double v, int present)
{
    fputc(',', f);
    csv_num(f, v, present);
}

/* The columns that depend on the cases: a parameter or a metric gets a
 * column of its own (for pandas), a declared metric also its uncertainty. */
typedef struct csv_columns {
    kbi_strlist params, metrics;
    int *declared; /* [metric] */
} csv_columns;

static void add_once(kbi_strlist *l, const char *s)
{
    for (size_t k = 0; k < l->n; k++)
        if (strcmp(l->s[k], s) == 0)
            return;
    kbi_strlist_add(l, s);
}

static void columns_of(const kbi_result_set *set, csv_columns *cols)
{
    memset(cols, 0, sizeof *cols);
    for (size_t i = 0; i < set->n_cases; i++) {
        const char *key;
        json_t *val;
        json_object_foreach(set->cases[i].params, key, val)
        {
            (void)val;
            add_once(&cols->params, key);
        }
        for (size_t k = 0; k < set->cases[i].n_metrics; k++)
            add_once(&cols->metrics, set->cases[i].metrics[k].name);
    }
    cols->declared = kbi_xcalloc(cols->metrics.n ? cols->metrics.n : 1, sizeof *cols->declared);
    for (size_t i = 0; i < set->n_cases; i++)
        for (size_t k = 0; k < set->cases[i].n_metrics; k++)
            for (size_t j = 0; j < cols->metrics.n; j++)
                if (set->cases[i].metrics[k].declared &&
                    strcmp(cols->metrics.s[j], set->cases[i].metrics[k].name) == 0)
                    cols->declared[j] = 1;
}

static void columns_free(csv_columns *cols)
{
    kbi_strlist_free(&cols->params);
    kbi_strlist_free(&cols->metrics);
    free(cols->declared);
}

static void write_header(FILE *f, const csv_columns *cols)
{
    char h[300];
    fputs("id,plugin,variant,target,params_text", f);
    for (size_t k = 0; k < cols->params.n; k++) {
        snprintf(h, sizeof h, "param_%s", cols->params.s[k]);
        next_field(f, h);
    }
    fputs(",status,message,n_samples,median_s,ci_low_s,ci_high_s,min_s,max_s,mean_s,stddev_s,"
          "noise,flops,bytes,items,item_unit,gflops,gbs,items_per_s,frac_peak,frac_bandwidth,"
          "baseline,speedup,verify_passed,verify_error,verify_tolerance,verify_metric,"
          "clock_drop,sm_start_mhz,sm_end_mhz,energy_j_per_run,energy_j_per_run_u,"
          "energy_watts,energy_gflop_per_j,energy_gb_per_j,energy_why",
          f);
    for (size_t k = 0; k < cols->metrics.n; k++) {
        snprintf(h, sizeof h, "metric_%s", cols->metrics.s[k]);
        next_field(f, h);
        if (cols->declared[k]) {
            snprintf(h, sizeof h, "metric_%s_uncertainty", cols->metrics.s[k]);
            next_field(f, h);
        }
    }
    fputs(",device,run_id,source\n", f);
}

/* From status to the rates: the timing and the counts of case c. */
static void write_figures(FILE *f, const kbi_case_result *c)
{
    int has_stats = c->stats.n > 0 || c->stats.median > 0, ok = kbi_case_ok(c);
    int counted = json_object_get(c->json, "counts") != NULL;
    next_field(f, kbi_status_name(c->status));
    next_field(f, c->message);
    fprintf(f, ",%zu", c->n_samples);
    next_num(f, c->stats.median, has_stats);
    next_num(f, c->stats.ci_low, has_stats);
    next_num(f, c->stats.ci_high, has_stats);
    next_num(f, c->stats.min, has_stats);
    next_num(f, c->stats.max, has_stats);
    next_num(f, c->stats.mean, has_stats);
    next_num(f, c->stats.stddev, has_stats);
    next_num(f, c->stats.noise, has_stats);
    next_num(f, c->flops, counted);
    next_num(f, c->bytes, counted);
    next_num(f, c->items, counted);
    next_field(f, c->item_unit);
    next_num(f, c->gflops, c->flops > 0 && ok);
    next_num(f, c->gbs, c->bytes > 0 && ok);
    next_num(f, c->items_per_s, c->items > 0 && ok);
    next_num(f, c->frac_peak, c->flops > 0 && ok && c->frac_peak > 0);
    next_num(f, c->frac_bandwidth, c->bytes > 0 && ok && c->frac_bandwidth > 0);
}

/* The energy per run, its uncertainty, the power, the work per joule, or why not measured. */
static void write_energy(FILE *f, const kbi_case_result *c)
{
    const kbi_case_energy *e = &c->energy;
    int ok = c->has_energy && e->measured && kbi_case_ok(c);
    next_num(f, e->j_per_run, ok);
    next_num(f, e->j_per_run_u, ok && isfinite(e->j_per_run_u));
    next_num(f, e->watts, ok);
    next_num(f, e->gflop_per_j, ok && e->gflop_per_j > 0);
    next_num(f, e->gb_per_j, ok && e->gb_per_j > 0);
    next_field(f, c->has_energy && !e->measured ? e->why : "");
}

/* From the baseline to the clocks and the energy. */
static void write_checks(FILE *f, const kbi_result_set *set, size_t i)
{
    const kbi_case_result *c = &set->cases[i];
    json_t *clocks = json_object_get(c->json, "clocks");
    double sp = 0, mhz;
    int has_sp = kbi_report_speedup(set, i, &sp), present;
    next_field(f, c->baseline);
    next_num(f, sp, has_sp);
    fputc(',', f);
    if (c->has_verify)
        fputs(c->verify_passed ? "true" : "false", f);
    next_num(f, c->verify_error, c->has_verify);
    next_num(f, c->verify_tolerance, c->has_verify);
    next_field(f, c->verify_metric);
    fprintf(f, ",%s", c->clock_drop ? "true" : "false");
    /* jnum sets `present`: call it before reading the flag. */
    mhz = kbi_jnum(clocks, "sm_start_mhz", NULL, &present);
    next_num(f, mhz, present);
    mhz = kbi_jnum(clocks, "sm_end_mhz", NULL, &present);
    next_num(f, mhz, present);
    write_energy(f, c);
}

static void write_row(FILE *f, const kbi_result_set *set, size_t i, const csv_columns *cols)
{
    const kbi_case_result *c = &set->cases[i];
    kbi_csv_field(f, c->id);
    next_field(f, c->plugin);
    next_field(f, c->variant);
    next_field(f, c->target);
    next_field(f, c->params_text);
    for (size_t k = 0; k < cols->params.n; k++) {
        char t[256];
        fputc(',', f);
        if (json_object_get(c->params, cols->params.s[k])) {
            kbi_param_text(c, cols->params.s[k], t, sizeof t);
            kbi_csv_field(f, t);
        }
    }
    write_figures(f, c);
    write_checks(f, set, i);
    for (size_t k = 0; k < cols->metrics.n; k++) {
        const kbi_metric *x = kbi_find_metric(c, cols->metrics.s[k]);
        fputc(',', f);
        if (x)
            csv_num(f, x->value, isfinite(x->value));
        if (cols->declared[k]) {
            fputc(',', f);
            if (x)
                csv_num(f, x->uncertainty, isfinite(x->uncertainty));
        }
    }
    next_field(f, c->env ? c->env->device_name : "");
    next_field(f, c->run_id);
    next_field(f, c->source);
    fputc('\n', f);
}

int kbi_report_write_csv(const kbi_result_set *set, FILE *f)
{
    csv_columns cols;
    columns_of(set, &cols);
    write_header(f, &cols);
    for (size_t i = 0; i < set->n_cases; i++)
        write_row(f, set, i, &cols);
    columns_free(&cols);
    return ferror(f) ? KBI_ERR_IO : KBI_OK;
}
