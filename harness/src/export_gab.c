/* `kbench export --format gab`: github-action-benchmark's custom tools read an array of
 *   {"name": string, "value": number, "unit": string, "range": string (optional),
 *    "extra": string (optional, shown in the chart's tooltip)}
 * and take the better direction from the action step's tool, so a run is two files: times
 * (customSmallerIsBetter) and rates (customBiggerIsBetter).  A declared metric goes with the
 * file of its better direction; a metric with none is left out of both (either tool would
 * call one of its moves a regression). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>

#include "export.h"

/* One entry; range "± h" where h is a number. */
static json_t *entry(const char *name, double value, const char *unit, double h, const char *extra)
{
    json_t *e = json_pack("{s:s,s:f,s:s}", "name", name, "value", value, "unit", unit);
    char range[64];
    if (isfinite(h)) {
        snprintf(range, sizeof range, "\u00b1 %.4g", h);
        json_object_set_new(e, "range", json_string(range));
    }
    json_object_set_new(e, "extra", json_string(extra));
    return e;
}

/* How case c was measured, for the tooltip. */
static void measured(const kbi_case_result *c, const kbi_export_set *x, kbi_buf *b)
{
    kbi_buf_printf(b, "median of %zu samples", c->stats.n);
    if (c->n_rounds > 1)
        kbi_buf_printf(b, " in %zu rounds", c->n_rounds);
    kbi_buf_printf(b, "; 95%% CI of the median %.6g to %.6g %s", c->stats.ci_low * x->per_second,
                   c->stats.ci_high * x->per_second, x->time_unit);
    if (c->timing[0])
        kbi_buf_printf(b, "\ntiming: %s, cache %s", c->timing, c->cache[0] ? c->cache : "?");
    if (c->env && c->env->device_name[0])
        kbi_buf_printf(b, "\nGPU: %s", c->env->device_name);
    if (c->env && c->env->git_revision[0])
        kbi_buf_printf(b, "\nrevision: %.12s", c->env->git_revision);
}

/* The metrics of c (declared, energy) whose better direction is `better`, into a. */
static void add_metrics(json_t *a, const kbi_case_result *c, kb_better better)
{
    kbi_export_metrics ms;
    kbi_export_metrics_of(c, &ms);
    for (size_t i = 0; i < ms.n; i++) {
        const kbi_metric *m = ms.all[i];
        kbi_buf name = {0}, extra = {0};
        if (m->better != better)
            continue;
        kbi_buf_printf(&name, "%s (%s)", c->id, m->name);
        kbi_buf_printf(&extra, "%s, %s is better; range: one standard error",
                       m >= ms.energy && m < ms.energy + KBI_EXPORT_ENERGY_MAX
                           ? "energy of the timed work"
                           : "metric",
                       better == KB_BETTER_HIGHER ? "higher" : "lower");
        json_array_append_new(
            a, entry(name.data, m->value, m->unit[0] ? m->unit : "1", m->uncertainty, extra.data));
        kbi_buf_free(&name);
        kbi_buf_free(&extra);
    }
    kbi_export_metrics_free(&ms);
}

json_t *kbi_export_gab(const kbi_export_set *x, int rates)
{
    json_t *a = json_array();
    for (size_t i = 0; i < x->n; i++) {
        const kbi_case_result *c = x->cases[i];
        kbi_buf extra = {0};
        measured(c, x, &extra);
        if (!rates) {
            json_array_append_new(a, entry(c->id, c->stats.median * x->per_second, x->time_unit,
                                           (c->stats.ci_high - c->stats.ci_low) / 2 * x->per_second,
                                           extra.data));
            add_metrics(a, c, KB_BETTER_LOWER);
        } else {
            kbi_export_rate r[3];
            size_t n = kbi_export_rates(c, r);
            for (size_t k = 0; k < n; k++) {
                kbi_buf name = {0};
                double value, low, high;
                kbi_export_rate_values(c, &r[k], &value, &low, &high);
                kbi_buf_printf(&name, "%s (%s)", c->id, r[k].unit);
                json_array_append_new(
                    a, entry(name.data, value, r[k].unit, (high - low) / 2, extra.data));
                kbi_buf_free(&name);
            }
            add_metrics(a, c, KB_BETTER_HIGHER);
        }
        kbi_buf_free(&extra);
    }
    return a;
}
