/* `kbench export --format bmf`: Bencher Metric Format, as `bencher run --adapter json` reads
 * it: an object of benchmarks by name, each an object of measures by name or slug, each
 * {"value", "lower_value", "upper_value"} (value required):
 *
 *   {"sgemm/cublas/shape=...": {"latency": {"value": 1.2e5, "lower_value": ..., ...},
 *                               "gflops": {...}, "throughput": {...}}}
 *
 * latency (ns) and throughput (operations per second) are the measures every Bencher project
 * has; gflops, gbs and the declared metrics are made by Bencher on first use.  A measure has
 * no direction in Bencher: its threshold's boundary gives it (upper for lower-is-better), so
 * the note this writer adds names each measure's direction. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "export.h"

/* z for a two-sided 95% interval: a metric's bounds are value +/- Z95 standard errors, as wide
 * as the median's confidence interval. */
#define Z95 1.959963984540054

/* {"value", "lower_value", "upper_value"}, the bounds where they are numbers. */
static json_t *measure(double value, double low, double high)
{
    json_t *m = json_pack("{s:f}", "value", value);
    if (isfinite(low) && isfinite(high)) {
        json_object_set_new(m, "lower_value", json_real(low));
        json_object_set_new(m, "upper_value", json_real(high));
    }
    return m;
}

/* 64-bit FNV-1a of s: the tail of a shortened name, so two ids stay two names. */
static uint64_t fnv1a(const char *s)
{
    uint64_t h = 14695981039346656037ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* Bencher's name of case id c into out (size > KBI_BMF_NAME_MAX): the id, or, past the limit,
 * its first 1007 characters, '~' and 16 hex digits of its hash (a note says so). */
static void bench_name(kbi_export_set *x, const char *id, char *out)
{
    size_t len = strlen(id), keep = KBI_BMF_NAME_MAX - 17;
    char note[KBI_ERR_SIZE];
    if (len <= KBI_BMF_NAME_MAX) {
        memcpy(out, id, len + 1);
        return;
    }
    while (keep > 0 && ((unsigned char)id[keep] & 0xC0) == 0x80)
        keep--; /* not inside a UTF-8 character */
    snprintf(out, KBI_BMF_NAME_MAX + 1, "%.*s~%016llx", (int)keep, id,
             (unsigned long long)fnv1a(id));
    snprintf(note, sizeof note, "case id of %zu characters shortened to Bencher's %d: %.200s...",
             len, KBI_BMF_NAME_MAX, out);
    kbi_strlist_add(&x->notes, note);
}

/* Whether a declared metric's name is one of the measures written for every case. */
static int builtin_measure(const char *name)
{
    static const char *const names[] = {"latency", "throughput", "gflops", "gbs"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(name, names[i]) == 0)
            return 1;
    return 0;
}

/* Adds the metrics of c (declared, energy) to bench; records each measure's direction in dirs. */
static void add_metrics(json_t *bench, const kbi_case_result *c, json_t *dirs)
{
    kbi_export_metrics ms;
    kbi_export_metrics_of(c, &ms);
    for (size_t i = 0; i < ms.n; i++) {
        const kbi_metric *m = ms.all[i];
        char name[96], dir[160];
        double u = m->uncertainty;
        snprintf(name, sizeof name, "%s%.64s", builtin_measure(m->name) ? "metric-" : "", m->name);
        json_object_set_new(bench, name,
                            isfinite(u) ? measure(m->value, m->value - Z95 * u, m->value + Z95 * u)
                                        : measure(m->value, NAN, NAN));
        snprintf(dir, sizeof dir, "%s (%.40s, %s)", name, m->unit[0] ? m->unit : "1",
                 m->better == KB_BETTER_NONE     ? "no better direction"
                 : m->better == KB_BETTER_HIGHER ? "higher is better"
                                                 : "lower is better");
        json_object_set_new(dirs, dir, json_true());
    }
    kbi_export_metrics_free(&ms);
}

/* The note naming every measure written and which way is better. */
static void direction_note(kbi_export_set *x, json_t *dirs)
{
    kbi_buf b = {0};
    const char *key;
    json_t *v;
    kbi_buf_printf(&b, "Bencher measures: latency (ns, lower is better: threshold with an upper "
                       "boundary)");
    json_object_foreach(dirs, key, v)
    {
        (void)v;
        kbi_buf_printf(&b, ", %s", key);
    }
    kbi_strlist_add(&x->notes, b.data);
    kbi_buf_free(&b);
}

json_t *kbi_export_bmf(kbi_export_set *x)
{
    json_t *out = json_object(), *dirs = json_object();
    char name[KBI_BMF_NAME_MAX + 1];
    for (size_t i = 0; i < x->n; i++) {
        const kbi_case_result *c = x->cases[i];
        json_t *bench = json_object();
        kbi_export_rate rates[3];
        size_t n = kbi_export_rates(c, rates);
        json_object_set_new(
            bench, "latency",
            measure(c->stats.median * 1e9, c->stats.ci_low * 1e9, c->stats.ci_high * 1e9));
        for (size_t r = 0; r < n; r++) {
            double value, low, high;
            char dir[160];
            kbi_export_rate_values(c, &rates[r], &value, &low, &high);
            json_object_set_new(bench, rates[r].measure, measure(value, low, high));
            snprintf(dir, sizeof dir, "%s (%s, higher is better: a lower boundary)",
                     rates[r].measure,
                     strcmp(rates[r].measure, "throughput") == 0 ? "operations/s" : rates[r].unit);
            json_object_set_new(dirs, dir, json_true());
        }
        add_metrics(bench, c, dirs);
        bench_name(x, c->id, name);
        json_object_set_new(out, name, bench);
    }
    direction_note(x, dirs);
    json_decref(dirs);
    return out;
}
