/* The report model (report_model.h): plugins, rows, points and baselines
 * built from a result set, and the figures of one case (speedup, rates). */
#define _XOPEN_SOURCE 700
#include "report_model.h"

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

static void run_names_init(kbi_run_names *r, const kbi_result_set *set)
{
    int unique = 1;
    r->n = set->n_envs;
    r->name = kbi_xcalloc(r->n ? r->n : 1, sizeof *r->name);
    for (size_t i = 0; i < set->n_envs && unique; i++) {
        if (!set->envs[i].device_name[0])
            unique = 0;
        for (size_t j = 0; j < i && unique; j++)
            if (strcmp(set->envs[i].device_name, set->envs[j].device_name) == 0)
                unique = 0;
    }
    for (size_t i = 0; i < r->n; i++) {
        char b[64];
        snprintf(b, sizeof b, "R%zu", i + 1);
        r->name[i] = kbi_strdup(unique ? set->envs[i].device_name : b);
    }
}

static void run_names_free(kbi_run_names *r)
{
    for (size_t i = 0; i < r->n; i++)
        free(r->name[i]);
    free(r->name);
}

int kbi_case_ok(const kbi_case_result *c)
{
    /* A --sanitize run's times are not timings: no rate, speedup or chart point. */
    return c->status == KBI_ST_OK && c->stats.median > 0 && !kbi_case_not_timing(c);
}

static kbi_rep_plugin *find_plugin(kbi_rep_model *m, const char *name)
{
    for (size_t i = 0; i < m->n_plugins; i++)
        if (strcmp(m->plugins[i].name, name) == 0)
            return &m->plugins[i];
    m->plugins = kbi_xrealloc(m->plugins, (m->n_plugins + 1) * sizeof *m->plugins);
    memset(&m->plugins[m->n_plugins], 0, sizeof *m->plugins);
    m->plugins[m->n_plugins].name = name;
    m->plugins[m->n_plugins].baseline = "";
    return &m->plugins[m->n_plugins++];
}

static size_t find_row(kbi_rep_plugin *p, const char *variant, size_t env)
{
    for (size_t i = 0; i < p->n_rows; i++)
        if (strcmp(p->rows[i].variant, variant) == 0 && p->rows[i].env == env)
            return i;
    return KBI_NO_CASE;
}

/* The name=value part of c's id: what names its problem ("" when the id names none). */
static const char *id_params(const kbi_case_result *c)
{
    const char *rest = strchr(c->id, '/');
    rest = rest ? strchr(rest + 1, '/') : NULL;
    return rest ? rest + 1 : "";
}

static size_t find_point(kbi_rep_plugin *p, const char *params_text)
{
    for (size_t i = 0; i < p->n_points; i++)
        if (strcmp(p->points[i].params_text, params_text) == 0)
            return i;
    return KBI_NO_CASE;
}

static void add_key(kbi_rep_plugin *p, const char *key)
{
    for (size_t i = 0; i < p->n_keys; i++)
        if (strcmp(p->keys[i], key) == 0)
            return;
    p->keys = kbi_xrealloc(p->keys, (p->n_keys + 1) * sizeof *p->keys);
    p->keys[p->n_keys++] = kbi_strdup(key);
}

/* Whether variant is the baseline of some section of the plugin. */
int kbi_rep_is_baseline(const kbi_rep_plugin *p, const char *variant)
{
    for (size_t i = 0; i < p->baselines.n; i++)
        if (strcmp(p->baselines.s[i], variant) == 0)
            return 1;
    return 0;
}

/* Whether the same variant and point appear in more than one run. */
static int detect_multi_run(const kbi_result_set *set, const kbi_rep_plugin *p)
{
    for (size_t a = 0; a < p->n_cases; a++)
        for (size_t b = a + 1; b < p->n_cases; b++) {
            const kbi_case_result *x = &set->cases[p->cases[a]], *y = &set->cases[p->cases[b]];
            if (kbi_results_sweep_of(set, kbi_results_env_index(set, x->env)) !=
                    kbi_results_sweep_of(set, kbi_results_env_index(set, y->env)) &&
                strcmp(x->variant, y->variant) == 0 && strcmp(x->params_text, y->params_text) == 0)
                return 1;
        }
    return 0;
}

static void add_row(kbi_rep_model *m, kbi_rep_plugin *p, const char *variant, size_t env)
{
    kbi_rep_row *row;
    p->rows = kbi_xrealloc(p->rows, (p->n_rows + 1) * sizeof *p->rows);
    row = &p->rows[p->n_rows++];
    row->variant = kbi_strdup(variant);
    row->env = env;
    row->run_label = NULL;
    if (p->multi_run) {
        kbi_buf label = {0}, b = {0};
        for (size_t e = 0; env != KBI_NO_CASE && e < m->set->n_envs; e++)
            if (kbi_results_sweep_of(m->set, e) == env)
                kbi_buf_printf(&label, "%s%s", label.len ? "+" : "", m->runs.name[e]);
        row->run_label = label.data ? label.data : kbi_strdup("?");
        kbi_buf_printf(&b, "%s [%s]", variant, row->run_label);
        row->name = b.data;
    } else {
        row->name = kbi_strdup(variant);
    }
}

/* Whether the plugin has a case of variant in run env. */
static int has_case(const kbi_result_set *set, const kbi_rep_plugin *p, const char *variant,
                    size_t env)
{
    for (size_t k = 0; k < p->n_cases; k++) {
        const kbi_case_result *c = &set->cases[p->cases[k]];
        if (strcmp(c->variant, variant) == 0 &&
            kbi_results_sweep_of(set, kbi_results_env_index(set, c->env)) == env)
            return 1;
    }
    return 0;
}

/* Records the baseline one case of point q names. */
static void note_baseline(kbi_rep_plugin *p, kbi_rep_point *q, const char *baseline)
{
    if (!baseline[0])
        return;
    if (!p->baseline[0])
        p->baseline = baseline;
    if (!kbi_rep_is_baseline(p, baseline))
        kbi_strlist_add(&p->baselines, baseline);
    if (!q->baseline[0])
        q->baseline = baseline;
    else if (strcmp(q->baseline, baseline) != 0)
        q->mixed_baseline = 1;
}

static int cmp_double(const void *a, const void *b)
{
    double d = *(const double *)a - *(const double *)b;
    return (d > 0) - (d < 0);
}

/* A plugin whose cases declare the headline "time_per_item" (and count items) charts the time
 * per item, in the unit that shows the middle case with 1 to 3 digits; any other charts its
 * rate (scale 1). */
static void pick_headline(const kbi_result_set *set, kbi_rep_plugin *p)
{
    double *t = kbi_xcalloc(p->n_cases ? p->n_cases : 1, sizeof *t);
    size_t n = 0;
    p->scale = 1;
    p->time_unit = "";
    for (size_t k = 0; k < p->n_cases; k++) {
        const kbi_case_result *c = &set->cases[p->cases[k]];
        if (kbi_case_ok(c) && c->items > 0 && c->headline &&
            strcmp(c->headline, KBI_HEADLINE_TIME_PER_ITEM) == 0)
            t[n++] = c->stats.median / c->items;
    }
    if (n > 0) {
        kbi_time_unit u;
        qsort(t, n, sizeof *t, cmp_double);
        u = kbi_time_unit_for(t[n / 2]);
        p->kind = KBI_RATE_TIME_PER_ITEM;
        p->scale = u.scale;
        p->time_unit = u.name;
    }
    free(t);
}

static void build_plugin(kbi_rep_model *m, kbi_rep_plugin *p)
{
    const kbi_result_set *set = m->set;
    int any_flops = 0, any_bytes = 0, any_items = 0;
    kbi_strlist variants = {0};
    p->multi_run = detect_multi_run(set, p);
    /* Rows first, so that one variant's runs sit together: variants in the
     * order they first appear, each in its runs in file order. */
    for (size_t k = 0; k < p->n_cases; k++) {
        const char *v = set->cases[p->cases[k]].variant;
        int seen = 0;
        for (size_t i = 0; i < variants.n && !seen; i++)
            seen = strcmp(variants.s[i], v) == 0;
        if (!seen)
            kbi_strlist_add(&variants, v);
    }
    for (size_t i = 0; i < variants.n; i++) {
        if (!p->multi_run) {
            add_row(m, p, variants.s[i], KBI_NO_CASE);
            continue;
        }
        for (size_t e = 0; e < set->n_envs; e++)
            if (kbi_results_sweep_of(set, e) == e && has_case(set, p, variants.s[i], e))
                add_row(m, p, variants.s[i], e);
        if (has_case(set, p, variants.s[i], KBI_NO_CASE))
            add_row(m, p, variants.s[i], KBI_NO_CASE);
    }
    kbi_strlist_free(&variants);
    for (size_t k = 0; k < p->n_cases; k++) {
        const kbi_case_result *c = &set->cases[p->cases[k]];
        size_t env = p->multi_run ? kbi_results_sweep_of(set, kbi_results_env_index(set, c->env))
                                  : KBI_NO_CASE;
        size_t r = find_row(p, c->variant, env), pt;
        const char *key;
        json_t *val;
        pt = find_point(p, c->params_text);
        if (pt == KBI_NO_CASE) {
            kbi_rep_point *q;
            p->points = kbi_xrealloc(p->points, (p->n_points + 1) * sizeof *p->points);
            q = &p->points[p->n_points];
            memset(q, 0, sizeof *q);
            q->params_text = c->params_text;
            q->first = p->cases[k];
            q->baseline = c->baseline;
            q->cell = kbi_xmalloc(p->n_rows * sizeof *q->cell);
            for (size_t i = 0; i < p->n_rows; i++)
                q->cell[i] = KBI_NO_CASE;
            pt = p->n_points++;
        }
        p->points[pt].cell[r] = p->cases[k];
        note_baseline(p, &p->points[pt], c->baseline);
        json_object_foreach(c->params, key, val)
        {
            (void)val;
            add_key(p, key);
        }
        if (kbi_case_ok(c)) {
            any_flops |= c->flops > 0;
            any_bytes |= c->bytes > 0;
            any_items |= c->items > 0;
        }
    }
    /* Chart the rate that the most cases have (stream: bytes, as copy has
     * no flops); on a tie flops, then bytes, then items. */
    p->kind = KBI_RATE_NONE;
    if (any_flops || any_bytes || any_items) {
        size_t best = 0;
        for (int kind = KBI_RATE_FLOPS; kind <= KBI_RATE_ITEMS; kind++) {
            size_t n = 0;
            for (size_t k = 0; k < p->n_cases; k++) {
                const kbi_case_result *c = &set->cases[p->cases[k]];
                double count = kind == KBI_RATE_FLOPS   ? c->flops
                               : kind == KBI_RATE_BYTES ? c->bytes
                                                        : c->items;
                n += kbi_case_ok(c) && count > 0;
            }
            if (n > best) {
                best = n;
                p->kind = kind;
            }
        }
    }
    pick_headline(set, p);
    /* Which parameters vary across the points. */
    p->varies = kbi_xcalloc(p->n_keys ? p->n_keys : 1, sizeof *p->varies);
    for (size_t k = 0; k < p->n_keys; k++) {
        char first[256], t[256];
        kbi_param_text(&set->cases[p->points[0].first], p->keys[k], first, sizeof first);
        for (size_t i = 1; i < p->n_points && !p->varies[k]; i++) {
            kbi_param_text(&set->cases[p->points[i].first], p->keys[k], t, sizeof t);
            p->varies[k] = strcmp(first, t) != 0;
        }
    }
    for (size_t i = 0; i < p->n_points; i++) {
        kbi_buf b = {0};
        for (size_t k = 0; k < p->n_keys; k++) {
            char t[256];
            if (!p->varies[k])
                continue;
            kbi_param_text(&set->cases[p->points[i].first], p->keys[k], t, sizeof t);
            kbi_buf_printf(&b, "%s%s=%s", b.len ? ", " : "", p->keys[k], t);
        }
        if (!b.len) /* one point: what its id names (the problem) */
            kbi_buf_printf(&b, "%s", id_params(&set->cases[p->points[i].first]));
        p->points[i].label = b.data;
    }
}

void kbi_rep_model_build(kbi_rep_model *m, const kbi_result_set *set)
{
    memset(m, 0, sizeof *m);
    m->set = set;
    run_names_init(&m->runs, set);
    for (size_t i = 0; i < set->n_cases; i++) {
        kbi_rep_plugin *p = find_plugin(m, set->cases[i].plugin);
        p->cases = kbi_xrealloc(p->cases, (p->n_cases + 1) * sizeof *p->cases);
        p->cases[p->n_cases++] = i;
    }
    for (size_t i = 0; i < m->n_plugins; i++)
        build_plugin(m, &m->plugins[i]);
}

static void chart_free(kbi_rep_chart *c)
{
    free(c->stem);
    free(c->title);
}

void kbi_rep_model_free(kbi_rep_model *m)
{
    for (size_t i = 0; i < m->n_plugins; i++) {
        kbi_rep_plugin *p = &m->plugins[i];
        for (size_t r = 0; r < p->n_rows; r++) {
            free(p->rows[r].variant);
            free(p->rows[r].run_label);
            free(p->rows[r].name);
        }
        for (size_t k = 0; k < p->n_points; k++) {
            free(p->points[k].label);
            free(p->points[k].cell);
            chart_free(&p->points[k].bar);
        }
        for (size_t k = 0; k < p->n_keys; k++)
            free(p->keys[k]);
        for (size_t k = 0; k < p->n_charts; k++)
            chart_free(&p->charts[k]);
        kbi_free_all(6, p->rows, p->points, p->cases, p->keys, p->varies, p->charts);
        kbi_strlist_free(&p->notes);
        kbi_strlist_free(&p->baselines);
    }
    free(m->plugins);
    run_names_free(&m->runs);
    kbi_strlist_free(&m->stems);
    memset(m, 0, sizeof *m);
}

int kbi_report_speedup(const kbi_result_set *set, size_t i, double *speedup)
{
    const kbi_case_result *c = &set->cases[i], *best = NULL;
    if (!kbi_case_ok(c) || !c->baseline[0])
        return 0;
    for (size_t k = 0; k < set->n_cases; k++) {
        const kbi_case_result *b = &set->cases[k];
        if (!kbi_case_ok(b) || strcmp(b->variant, c->baseline) != 0 ||
            strcmp(b->plugin, c->plugin) != 0 || strcmp(b->params_text, c->params_text) != 0)
            continue;
        /* The same run is best, then another shard of the same sweep, then
         * any run on a GPU of the same name. */
        if (strcmp(b->run_id, c->run_id) == 0) {
            best = b;
            break;
        }
        if (b->env && c->env &&
            kbi_results_sweep_of(set, kbi_results_env_index(set, b->env)) ==
                kbi_results_sweep_of(set, kbi_results_env_index(set, c->env))) {
            best = b;
        } else if (!best && b->env && c->env && b->env->device_name[0] &&
                   strcmp(b->env->device_name, c->env->device_name) == 0) {
            best = b;
        }
    }
    if (!best)
        return 0;
    *speedup = best->stats.median / c->stats.median;
    return 1;
}

/* The rate of one kind from a case: the value from the record, or derived
 * from the counts when the record has none.  low/high: the rates at the
 * ends of the confidence interval of the median (the slowest end is the
 * low rate), so one stray sample does not stretch them. */
int kbi_case_rate(const kbi_case_result *c, int kind, double *v, double *lo, double *hi)
{
    double work, rate;
    const kbi_stats *st = &c->stats;
    int ci = st->ci_low > 0 && st->ci_high >= st->ci_low;
    if (!kbi_case_ok(c))
        return 0;
    switch (kind) {
    case KBI_RATE_FLOPS:
        work = c->flops / 1e9;
        rate = c->gflops;
        break;
    case KBI_RATE_BYTES:
        work = c->bytes / 1e9;
        rate = c->gbs;
        break;
    case KBI_RATE_ITEMS:
        work = c->items;
        rate = c->items_per_s;
        break;
    case KBI_RATE_TIME_PER_ITEM:
        if (c->items <= 0)
            return 0;
        *v = st->median / c->items;
        *lo = ci ? st->ci_low / c->items : *v;
        *hi = ci ? st->ci_high / c->items : *v;
        return 1;
    default:
        return 0;
    }
    if (work <= 0)
        return 0;
    if (rate <= 0)
        rate = work / st->median;
    *v = rate;
    *lo = ci ? rate * st->median / st->ci_high : rate;
    *hi = ci ? rate * st->median / st->ci_low : rate;
    return 1;
}

int kbi_rep_rate(const kbi_rep_plugin *p, const kbi_case_result *c, double *v, double *lo,
                 double *hi)
{
    if (!kbi_case_rate(c, p->kind, v, lo, hi))
        return 0;
    *v *= p->scale;
    *lo *= p->scale;
    *hi *= p->scale;
    return 1;
}

/* The least seconds one run of case c can take on roof: its flops at the roof's compute peak,
 * or its bytes at the copy bandwidth; 0 when c has no such count or its run no such
 * ceiling. */
static double roof_seconds(const kbi_case_result *c, const char *roof)
{
    const kbi_env_record *e = c->env;
    double gflops = 0;
    if (!e)
        return 0;
    if (strcmp(roof, "memory") == 0)
        return c->bytes > 0 && e->bandwidth_gbs > 0 ? c->bytes / (e->bandwidth_gbs * 1e9) : 0;
    if (strcmp(roof, "fp32") == 0)
        gflops = e->peak_gflops;
    else if (strcmp(roof, "tf32") == 0)
        gflops = e->tf32_gflops;
    else if (strcmp(roof, "tf32x3") == 0)
        gflops = e->tf32_gflops / 3; /* three TF32 products stand for one fp32 product */
    return c->flops > 0 && gflops > 0 ? c->flops / (gflops * 1e9) : 0;
}

int kbi_rep_roof(const kbi_rep_plugin *p, const kbi_case_result *c, double *value,
                 const char **roof)
{
    double t;
    *roof = c->roof && kbi_roof_known(c->roof) ? c->roof
            : p->kind == KBI_RATE_FLOPS        ? "fp32"
            : p->kind == KBI_RATE_BYTES        ? "memory"
                                               : "";
    t = (*roof)[0] ? roof_seconds(c, *roof) : 0;
    if (t <= 0)
        return 0;
    switch (p->kind) {
    case KBI_RATE_FLOPS:
        *value = c->flops / t / 1e9;
        break;
    case KBI_RATE_BYTES:
        *value = c->bytes / t / 1e9;
        break;
    case KBI_RATE_ITEMS:
        *value = c->items / t;
        break;
    case KBI_RATE_TIME_PER_ITEM:
        *value = t / c->items * p->scale;
        break;
    default:
        return 0;
    }
    return *value > 0 && isfinite(*value);
}

/* The item unit of the plugin's cases ("atom-steps"), or "items". */
const char *kbi_rep_item_unit(const kbi_result_set *set, const kbi_rep_plugin *p)
{
    for (size_t i = 0; i < p->n_cases; i++)
        if (set->cases[p->cases[i]].item_unit[0])
            return set->cases[p->cases[i]].item_unit;
    return "items";
}

const char *kbi_rep_kind_label(const kbi_result_set *set, const kbi_rep_plugin *p, char *buf,
                               size_t n)
{
    switch (p->kind) {
    case KBI_RATE_FLOPS:
        return "GFLOP/s";
    case KBI_RATE_BYTES:
        return "GB/s";
    case KBI_RATE_ITEMS:
        snprintf(buf, n, "%s/s", kbi_rep_item_unit(set, p));
        return buf;
    case KBI_RATE_TIME_PER_ITEM: {
        /* "spin flips" -> "ns per spin flip" */
        const char *u = kbi_rep_item_unit(set, p);
        size_t len = strlen(u);
        int plural = len > 1 && u[len - 1] == 's' && u[len - 2] != 's';
        snprintf(buf, n, "%s per %.*s", p->time_unit, (int)(plural ? len - 1 : len), u);
        return buf;
    }
    default:
        return "";
    }
}
