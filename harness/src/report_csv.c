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

/* Writes s as one CSV field (RFC 4180 quoting when needed). */
static void csv_field(FILE *f, const char *s)
{
    if (!s)
        s = "";
    if (strpbrk(s, ",\"\n\r") == NULL) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void csv_num(FILE *f, double v, int present)
{
    if (present && isfinite(v))
        fprintf(f, "%.10g", v);
}

int kbi_report_write_csv(const kbi_result_set *set, FILE *f)
{
    kbi_strlist params = {0}, metrics = {0};
    int *declared;
    /* Parameters and metrics become columns of their own, for pandas. */
    for (size_t i = 0; i < set->n_cases; i++) {
        const char *key;
        json_t *val;
        json_object_foreach(set->cases[i].params, key, val)
        {
            int seen = 0;
            (void)val;
            for (size_t k = 0; k < params.n && !seen; k++)
                seen = strcmp(params.s[k], key) == 0;
            if (!seen)
                kbi_strlist_add(&params, key);
        }
        for (size_t k = 0; k < set->cases[i].n_metrics; k++) {
            int seen = 0;
            for (size_t j = 0; j < metrics.n && !seen; j++)
                seen = strcmp(metrics.s[j], set->cases[i].metrics[k].name) == 0;
            if (!seen)
                kbi_strlist_add(&metrics, set->cases[i].metrics[k].name);
        }
    }
    /* A declared metric also gets its uncertainty column. */
    declared = kbi_xcalloc(metrics.n ? metrics.n : 1, sizeof *declared);
    for (size_t i = 0; i < set->n_cases; i++)
        for (size_t k = 0; k < set->cases[i].n_metrics; k++)
            for (size_t j = 0; j < metrics.n; j++)
                if (set->cases[i].metrics[k].declared &&
                    strcmp(metrics.s[j], set->cases[i].metrics[k].name) == 0)
                    declared[j] = 1;
    fputs("id,plugin,variant,target,params_text", f);
    for (size_t k = 0; k < params.n; k++) {
        char h[300];
        snprintf(h, sizeof h, "param_%s", params.s[k]);
        fputc(',', f);
        csv_field(f, h);
    }
    fputs(",status,message,n_samples,median_s,ci_low_s,ci_high_s,min_s,max_s,mean_s,stddev_s,"
          "noise,flops,bytes,items,item_unit,gflops,gbs,items_per_s,frac_peak,frac_bandwidth,"
          "baseline,speedup,verify_passed,verify_error,verify_tolerance,verify_metric,"
          "clock_drop,sm_start_mhz,sm_end_mhz",
          f);
    for (size_t k = 0; k < metrics.n; k++) {
        char h[300];
        snprintf(h, sizeof h, "metric_%s", metrics.s[k]);
        fputc(',', f);
        csv_field(f, h);
        if (declared[k]) {
            snprintf(h, sizeof h, "metric_%s_uncertainty", metrics.s[k]);
            fputc(',', f);
            csv_field(f, h);
        }
    }
    fputs(",device,run_id,source\n", f);
    for (size_t i = 0; i < set->n_cases; i++) {
        const kbi_case_result *c = &set->cases[i];
        int has_stats = c->stats.n > 0 || c->stats.median > 0, present;
        double sp = 0;
        int has_sp = kbi_report_speedup(set, i, &sp);
        json_t *clocks = json_object_get(c->json, "clocks");
        csv_field(f, c->id);
        fputc(',', f);
        csv_field(f, c->plugin);
        fputc(',', f);
        csv_field(f, c->variant);
        fputc(',', f);
        csv_field(f, c->target);
        fputc(',', f);
        csv_field(f, c->params_text);
        for (size_t k = 0; k < params.n; k++) {
            char t[256];
            json_t *v = json_object_get(c->params, params.s[k]);
            fputc(',', f);
            if (v) {
                kbi_param_text(c, params.s[k], t, sizeof t);
                csv_field(f, t);
            }
        }
        fputc(',', f);
        csv_field(f, kbi_status_name(c->status));
        fputc(',', f);
        csv_field(f, c->message);
        fprintf(f, ",%zu,", c->n_samples);
        csv_num(f, c->stats.median, has_stats);
        fputc(',', f);
        csv_num(f, c->stats.ci_low, has_stats);
        fputc(',', f);
        csv_num(f, c->stats.ci_high, has_stats);
        fputc(',', f);
        csv_num(f, c->stats.min, has_stats);
        fputc(',', f);
        csv_num(f, c->stats.max, has_stats);
        fputc(',', f);
        csv_num(f, c->stats.mean, has_stats);
        fputc(',', f);
        csv_num(f, c->stats.stddev, has_stats);
        fputc(',', f);
        csv_num(f, c->stats.noise, has_stats);
        fputc(',', f);
        csv_num(f, c->flops, json_object_get(c->json, "counts") != NULL);
        fputc(',', f);
        csv_num(f, c->bytes, json_object_get(c->json, "counts") != NULL);
        fputc(',', f);
        csv_num(f, c->items, json_object_get(c->json, "counts") != NULL);
        fputc(',', f);
        csv_field(f, c->item_unit);
        fputc(',', f);
        csv_num(f, c->gflops, c->flops > 0 && kbi_case_ok(c));
        fputc(',', f);
        csv_num(f, c->gbs, c->bytes > 0 && kbi_case_ok(c));
        fputc(',', f);
        csv_num(f, c->items_per_s, c->items > 0 && kbi_case_ok(c));
        fputc(',', f);
        csv_num(f, c->frac_peak, c->flops > 0 && kbi_case_ok(c) && c->frac_peak > 0);
        fputc(',', f);
        csv_num(f, c->frac_bandwidth, c->bytes > 0 && kbi_case_ok(c) && c->frac_bandwidth > 0);
        fputc(',', f);
        csv_field(f, c->baseline);
        fputc(',', f);
        csv_num(f, sp, has_sp);
        fputc(',', f);
        if (c->has_verify)
            fputs(c->verify_passed ? "true" : "false", f);
        fputc(',', f);
        csv_num(f, c->verify_error, c->has_verify);
        fputc(',', f);
        csv_num(f, c->verify_tolerance, c->has_verify);
        fputc(',', f);
        csv_field(f, c->verify_metric);
        fprintf(f, ",%s,", c->clock_drop ? "true" : "false");
        {
            /* jnum sets `present`: call it before reading the flag. */
            double mhz = kbi_jnum(clocks, "sm_start_mhz", NULL, &present);
            csv_num(f, mhz, present);
            fputc(',', f);
            mhz = kbi_jnum(clocks, "sm_end_mhz", NULL, &present);
            csv_num(f, mhz, present);
        }
        for (size_t k = 0; k < metrics.n; k++) {
            const kbi_metric *x = kbi_find_metric(c, metrics.s[k]);
            fputc(',', f);
            if (x)
                csv_num(f, x->value, isfinite(x->value));
            if (declared[k]) {
                fputc(',', f);
                if (x)
                    csv_num(f, x->uncertainty, isfinite(x->uncertainty));
            }
        }
        fputc(',', f);
        csv_field(f, c->env ? c->env->device_name : "");
        fputc(',', f);
        csv_field(f, c->run_id);
        fputc(',', f);
        csv_field(f, c->source);
        fputc('\n', f);
    }
    kbi_strlist_free(&params);
    kbi_strlist_free(&metrics);
    free(declared);
    return ferror(f) ? KBI_ERR_IO : KBI_OK;
}
