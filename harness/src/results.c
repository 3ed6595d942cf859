/* Results files: writing JSON Lines as cases end, and reading them back for
 * report and compare. */
#define _POSIX_C_SOURCE 200809L
#include "results.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const status_names[KBI_ST_COUNT] = {
    "ok", "verify_failed", "skipped", "error", "crashed", "timeout",
};

const char *kbi_status_name(kbi_status s)
{
    return (unsigned)s < KBI_ST_COUNT ? status_names[s] : "unknown";
}

int kbi_status_parse(const char *name)
{
    for (int i = 0; i < KBI_ST_COUNT; i++)
        if (name && strcmp(name, status_names[i]) == 0)
            return i;
    return -1;
}

int kbi_status_is_failure(kbi_status s)
{
    return s != KBI_ST_OK && s != KBI_ST_SKIPPED;
}

/* ---- writing ---- */

int kbi_results_open(kbi_results_writer *w, const char *path, const char *run_id, char *err)
{
    memset(w, 0, sizeof *w);
    w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (w->fd < 0) {
        kbi_errf(err, "%s: cannot create results file: %s", path, strerror(errno));
        return KBI_ERR_IO;
    }
    w->path = kbi_strdup(path);
    w->run_id = kbi_strdup(run_id);
    return KBI_OK;
}

/* write(2) until done; returns 0, or -1 with errno set. */
static int write_all(int fd, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t k = write(fd, s, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return -1;
        if (k == 0) {
            errno = EIO;
            return -1;
        }
        s += k;
        n -= (size_t)k;
    }
    return 0;
}

int kbi_results_write(kbi_results_writer *w, const char *record, json_t *obj, char *err)
{
    json_t *line = json_object();
    char *text;
    size_t len;
    off_t start;
    int rc = KBI_OK;
    json_object_set_new(line, "schema", json_string(KBI_RESULTS_SCHEMA));
    json_object_set_new(line, "version", json_integer(KBI_RESULTS_VERSION));
    json_object_set_new(line, "record", json_string(record));
    json_object_set_new(line, "run_id", json_string(w->run_id));
    json_object_update(line, obj);
    text = json_dumps(line, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
    json_decref(line);
    if (!text) {
        kbi_errf(err, "%s: cannot encode a %s record", w->path, record);
        return KBI_ERR;
    }
    /* One write of the whole line, newline included: a reader (or a kill)
     * never sees half of it on a local file system.  On failure the part
     * that did land is cut off again. */
    len = strlen(text);
    text[len] = '\n';
    start = lseek(w->fd, 0, SEEK_CUR);
    if (write_all(w->fd, text, len + 1) != 0 || fsync(w->fd) != 0) {
        int e = errno;
        kbi_errf(err, "%s: cannot write results: %s", w->path, strerror(e));
        if (start >= 0 && ftruncate(w->fd, start) == 0)
            lseek(w->fd, start, SEEK_SET);
        rc = KBI_ERR_IO;
    }
    free(text);
    return rc;
}

void kbi_results_close(kbi_results_writer *w)
{
    if (w->path && w->fd >= 0)
        close(w->fd);
    free(w->path);
    free(w->run_id);
    memset(w, 0, sizeof *w);
    w->fd = -1;
}

/* ---- reading ---- */

static char *dup_str(json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return kbi_strdup(s ? s : "");
}

static double get_num(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    return json_is_number(v) ? json_number_value(v) : 0.0;
}

/* A count (stats "n"): a non-negative number that fits, else 0.  A cast of
 * a negative or huge double to size_t is undefined (found by fuzzing). */
static size_t get_count(json_t *obj, const char *key)
{
    double v = get_num(obj, key);
    return v >= 0.0 && v < 9007199254740992.0 ? (size_t)v : 0;
}

static void add_warning(kbi_result_set *set, const char *fmt, const char *a, long b)
{
    char buf[KBI_ERR_SIZE];
    snprintf(buf, sizeof buf, fmt, a, b);
    set->warnings = kbi_xrealloc(set->warnings, (set->n_warnings + 1) * sizeof *set->warnings);
    set->warnings[set->n_warnings++] = kbi_strdup(buf);
}

static kbi_env_record *find_env(kbi_result_set *set, const char *run_id)
{
    for (size_t i = 0; i < set->n_envs; i++)
        if (strcmp(set->envs[i].run_id, run_id) == 0)
            return &set->envs[i];
    return NULL;
}

static void read_env(kbi_env_record *e, json_t *obj, const char *source)
{
    json_t *dev = json_object_get(obj, "device");
    json_t *ceil = json_object_get(obj, "ceilings");
    memset(e, 0, sizeof *e);
    e->run_id = dup_str(obj, "run_id");
    e->source = kbi_strdup(source);
    e->json = json_incref(obj);
    e->device_name = dup_str(dev, "name");
    e->git_revision = dup_str(obj, "git_revision");
    e->sm_clock_mhz = get_num(dev, "sm_clock_mhz");
    e->bandwidth_gbs = get_num(ceil, "bandwidth_gbs");
    e->peak_gflops = get_num(ceil, "peak_gflops");
    e->cpu_model = dup_str(json_object_get(obj, "cpu"), "model");
    e->cpu_signature = dup_str(json_object_get(obj, "cpu"), "signature");
    e->cpu_cores = get_count(json_object_get(obj, "cpu"), "logical_cores");
    e->cpu_max_mhz = get_num(json_object_get(obj, "cpu"), "max_mhz");
}

/* ---- the case record ---- */

kbi_status kbi_status_of_code(int code)
{
    return code == KB_SKIP ? KBI_ST_SKIPPED : KBI_ST_ERROR;
}

const char *kbi_better_name(kb_better b)
{
    return b == KB_BETTER_HIGHER ? "higher" : b == KB_BETTER_LOWER ? "lower" : "none";
}

int kbi_metric_within(const kbi_metric *m, double value)
{
    if (!m->bounds)
        return 1;
    if (isnan(value))
        return 0;
    if ((m->bounds & KB_BOUND_LOW) && value < m->low)
        return 0;
    if ((m->bounds & KB_BOUND_HIGH) && value > m->high)
        return 0;
    return 1;
}

/* A JSON number for v, or null when v is not finite (JSON has no NaN). */
static json_t *real_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* Sets names[i] to values[i] (null where not finite) for i < n. */
static void set_reals(json_t *o, const char *const *names, const double *values, size_t n)
{
    for (size_t i = 0; i < n; i++)
        json_object_set_new(o, names[i], real_or_null(values[i]));
}

/* A number, or NAN when absent or null. */
static double get_num_or_nan(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static json_t *metric_json(const kbi_metric *m)
{
    json_t *o = json_object();
    json_object_set_new(o, "value", real_or_null(m->value));
    json_object_set_new(o, "uncertainty", real_or_null(m->uncertainty));
    json_object_set_new(o, "unit", json_string(m->unit ? m->unit : ""));
    json_object_set_new(o, "better", json_string(kbi_better_name(m->better)));
    json_object_set_new(o, "low", m->bounds & KB_BOUND_LOW ? real_or_null(m->low) : json_null());
    json_object_set_new(o, "high", m->bounds & KB_BOUND_HIGH ? real_or_null(m->high) : json_null());
    json_object_set_new(o, "declared", json_boolean(m->declared));
    json_object_set_new(o, "in_bound", json_boolean(m->in_bound));
    if (m->timing)
        json_object_set_new(o, "timing", json_true());
    return o;
}

/* Reads metric `name` of a record of schema `version` into m. */
static void read_metric(kbi_metric *m, const char *name, json_t *val, int version)
{
    const char *better = json_string_value(json_object_get(val, "better"));
    json_t *in_bound = json_object_get(val, "in_bound");
    memset(m, 0, sizeof *m);
    m->name = kbi_strdup(name);
    m->unit = dup_str(val, "unit");
    m->value = get_num_or_nan(val, "value");
    m->uncertainty = NAN;
    m->better = KB_BETTER_NONE;
    m->in_bound = 1;
    if (version < 2)
        return; /* {"value", "unit"} only */
    m->uncertainty = get_num_or_nan(val, "uncertainty");
    if (better && strcmp(better, "higher") == 0)
        m->better = KB_BETTER_HIGHER;
    else if (better && strcmp(better, "lower") == 0)
        m->better = KB_BETTER_LOWER;
    if (json_is_number(json_object_get(val, "low"))) {
        m->bounds |= KB_BOUND_LOW;
        m->low = get_num(val, "low");
    }
    if (json_is_number(json_object_get(val, "high"))) {
        m->bounds |= KB_BOUND_HIGH;
        m->high = get_num(val, "high");
    }
    m->declared = json_is_true(json_object_get(val, "declared"));
    m->timing = json_is_true(json_object_get(val, "timing"));
    /* A record that does not say is judged here, so a bound still holds. */
    m->in_bound =
        json_is_boolean(in_bound) ? json_is_true(in_bound) : kbi_metric_within(m, m->value);
}

static void free_metric(kbi_metric *m)
{
    free(m->name);
    free(m->unit);
}

void kbi_case_result_set_metric(kbi_case_result *r, const kbi_metric *m)
{
    kbi_metric *to = NULL;
    for (size_t i = 0; i < r->n_metrics && !to; i++)
        if (strcmp(r->metrics[i].name, m->name) == 0)
            to = &r->metrics[i];
    if (to) {
        free_metric(to);
    } else {
        r->metrics = kbi_xrealloc(r->metrics, (r->n_metrics + 1) * sizeof *r->metrics);
        to = &r->metrics[r->n_metrics++];
    }
    *to = *m;
    to->name = kbi_strdup(m->name);
    to->unit = kbi_strdup(m->unit ? m->unit : "");
}

static void set_str(json_t *o, const char *key, const char *v)
{
    json_object_set_new(o, key, json_string(v ? v : ""));
}

json_t *kbi_case_record_json(const kbi_case_result *r)
{
    json_t *rec = json_object(), *arr = json_array(), *mets = json_object();
    if (r->index >= 0)
        json_object_set_new(rec, "index", json_integer(r->index));
    set_str(rec, "id", r->id);
    set_str(rec, "plugin", r->plugin);
    set_str(rec, "variant", r->variant);
    set_str(rec, "target", r->target);
    json_object_set_new(rec, "is_baseline", json_boolean(r->is_baseline));
    set_str(rec, "baseline", r->baseline);
    json_object_set_new(rec, "params", r->params ? json_deep_copy(r->params) : json_object());
    set_str(rec, "params_text", r->params_text);
    if (r->size_param && r->size_param[0])
        set_str(rec, "size_param", r->size_param);
    if (r->cache && r->cache[0])
        set_str(rec, "cache", r->cache);
    if (r->time && r->time[0])
        set_str(rec, "time", r->time);
    set_str(rec, "status", kbi_status_name(r->status));
    set_str(rec, "message", r->message);
    if (r->has_counts) {
        json_t *o = json_object();
        static const char *const count_names[] = {"flops", "bytes", "items"};
        const double count_values[] = {r->flops, r->bytes, r->items};
        set_reals(o, count_names, count_values, 3);
        json_object_set_new(o, "item_unit",
                            r->item_unit && r->item_unit[0] ? json_string(r->item_unit)
                                                            : json_null());
        json_object_set_new(rec, "counts", o);
    }
    if (r->has_verify) {
        json_t *o = json_object();
        json_object_set_new(o, "passed", json_boolean(r->verify_passed));
        json_object_set_new(o, "error", real_or_null(r->verify_error));
        json_object_set_new(o, "tolerance", real_or_null(r->verify_tolerance));
        set_str(o, "metric", r->verify_metric);
        json_object_set_new(rec, "verify", o);
    } else {
        json_object_set_new(rec, "verify", json_null());
    }
    for (size_t i = 0; i < r->n_samples; i++)
        json_array_append_new(arr, json_real(r->samples[i]));
    json_object_set_new(rec, "samples", arr);
    if (r->batch > 0)
        json_object_set_new(rec, "batch", json_integer(r->batch));
    if (r->timing && r->timing[0])
        set_str(rec, "timing", r->timing);
    if (r->hot_trial_graph_s > 0 && r->hot_trial_stream_s > 0) {
        json_t *t = json_object();
        json_object_set_new(t, "graph_s", json_real(r->hot_trial_graph_s));
        json_object_set_new(t, "stream_s", json_real(r->hot_trial_stream_s));
        json_object_set_new(rec, "hot_trial", t);
    }
    if (isfinite(r->prepare_s))
        json_object_set_new(rec, "prepare_s", json_real(r->prepare_s));
    if (r->has_stats) {
        json_t *o = json_object(), *q = json_object();
        static const char *const stat_names[] = {"median", "min",    "max",     "mean",
                                                 "stddev", "ci_low", "ci_high", "noise"};
        static const char *const rate_names[] = {"gflops", "gbs", "items_per_s", "frac_bandwidth",
                                                 "frac_peak"};
        const double stat_values[] = {r->stats.median,  r->stats.min,    r->stats.max,
                                      r->stats.mean,    r->stats.stddev, r->stats.ci_low,
                                      r->stats.ci_high, r->stats.noise};
        const double rate_values[] = {r->gflops, r->gbs, r->items_per_s, r->frac_bandwidth,
                                      r->frac_peak};
        json_object_set_new(o, "n", json_integer((json_int_t)r->stats.n));
        set_reals(o, stat_names, stat_values, 8);
        json_object_set_new(rec, "stats", o);
        set_reals(q, rate_names, rate_values, 5);
        json_object_set_new(rec, "rates", q);
    }
    for (size_t i = 0; i < r->n_metrics; i++)
        json_object_set_new(mets, r->metrics[i].name, metric_json(&r->metrics[i]));
    json_object_set_new(rec, "metrics", mets);
    if (r->has_clocks) {
        static const char *const clock_names[] = {"sm_start_mhz", "sm_end_mhz"};
        const double clock_values[] = {r->clock_start_mhz, r->clock_end_mhz};
        json_t *o = json_object();
        set_reals(o, clock_names, clock_values, 2);
        json_object_set_new(o, "throttle_reasons", json_integer(r->throttle_reasons));
        json_object_set_new(o, "drop", json_boolean(r->clock_drop));
        json_object_set_new(rec, "clocks", o);
    }
    if (r->sticky_error)
        json_object_set_new(rec, "sticky_error", json_true());
    if (r->sanitizer)
        json_object_set_new(rec, "sanitizer", json_deep_copy(r->sanitizer));
    if (isfinite(r->wall_s))
        json_object_set_new(rec, "wall_s", json_real(r->wall_s));
    if (r->sanitize && r->sanitize[0])
        set_str(rec, "sanitize", r->sanitize);
    if (isfinite(r->cpu_wait))
        json_object_set_new(rec, "cpu_wait", json_real(r->cpu_wait));
    if (r->n_rounds > 1) {
        json_t *o = json_array();
        for (size_t i = 0; i < r->n_rounds; i++)
            json_array_append_new(o, json_integer((json_int_t)r->rounds[i]));
        json_object_set_new(rec, "rounds", o);
    }
    return rec;
}

/* An integer field, or `otherwise` when absent or not an integer. */
static long get_long(json_t *obj, const char *key, long otherwise)
{
    json_t *v = json_object_get(obj, key);
    return json_is_integer(v) ? (long)json_integer_value(v) : otherwise;
}

int kbi_case_result_set_rounds(kbi_case_result *r, const size_t *per_round, size_t n)
{
    size_t total = 0, at = 0;
    for (size_t i = 0; i < n; i++) {
        if (per_round[i] == 0 || per_round[i] > r->n_samples)
            return -1;
        total += per_round[i];
    }
    if (n < 2 || total != r->n_samples)
        return -1;
    free(r->rounds);
    free(r->round_medians);
    r->rounds = kbi_xcalloc(n, sizeof *r->rounds);
    r->round_medians = kbi_xcalloc(n, sizeof *r->round_medians);
    memcpy(r->rounds, per_round, n * sizeof *per_round);
    r->n_rounds = n;
    for (size_t i = 0; i < n; i++) {
        r->round_medians[i] = kbi_median(r->samples + at, per_round[i]);
        at += per_round[i];
    }
    return 0;
}

void kbi_case_result_derive(kbi_case_result *r, double bandwidth_gbs, double peak_gflops)
{
    kbi_stats_compute(r->samples, r->n_samples, &r->stats);
    r->has_stats = r->n_samples > 0;
    if (!r->has_counts || !(r->stats.median > 0))
        return;
    r->gflops = r->flops / r->stats.median / 1e9;
    r->gbs = r->bytes / r->stats.median / 1e9;
    r->items_per_s = r->items / r->stats.median;
    r->frac_bandwidth = bandwidth_gbs > 0 ? r->gbs / bandwidth_gbs : 0;
    r->frac_peak = peak_gflops > 0 ? r->gflops / peak_gflops : 0;
}

int kbi_case_not_timing(const kbi_case_result *c)
{
    const char *env_tool =
        c->env ? json_string_value(json_object_get(c->env->json, "sanitize")) : NULL;
    return (c->sanitize && c->sanitize[0]) || c->sanitizer || (env_tool && env_tool[0]);
}

/* Whether two stored figures differ by more than the 10 significant digits
 * a results file keeps. */
static int figure_differs(double stored, double computed)
{
    if (isnan(stored) || isnan(computed))
        return isnan(stored) != isnan(computed);
    return fabs(stored - computed) > 1e-6 * fmax(fabs(stored), fabs(computed));
}

/* The statistics of c come from its samples, never from the record's
 * "stats": a record edited by hand or by a faulty tool cannot make report
 * or compare quote a figure the samples do not support.  When the stored
 * figures disagree, c->stats_note says which (kbi_results_read warns).
 * Rates are derived again from the counts and the samples' median. */
static void stats_from_samples(kbi_case_result *c, json_t *stored)
{
    static const char *const names[] = {"median", "min",    "max",     "mean",
                                        "stddev", "ci_low", "ci_high", "noise"};
    double computed[8];
    json_t *n_json = json_object_get(stored, "n");
    kbi_stats_compute(c->samples, c->n_samples, &c->stats);
    computed[0] = c->stats.median;
    computed[1] = c->stats.min;
    computed[2] = c->stats.max;
    computed[3] = c->stats.mean;
    computed[4] = c->stats.stddev;
    computed[5] = c->stats.ci_low;
    computed[6] = c->stats.ci_high;
    computed[7] = c->stats.noise;
    if (json_is_object(stored)) {
        if (!json_is_number(n_json) || json_number_value(n_json) != (double)c->n_samples) {
            snprintf(c->stats_note, sizeof c->stats_note,
                     "stored stats.n %.6g disagrees with the %zu samples; the "
                     "statistics are computed from the samples",
                     json_is_number(n_json) ? json_number_value(n_json) : NAN, c->n_samples);
        } else {
            for (size_t i = 0; i < 8 && !c->stats_note[0]; i++) {
                json_t *v = json_object_get(stored, names[i]);
                double s = json_is_number(v) ? json_number_value(v) : NAN;
                if (figure_differs(s, computed[i]))
                    snprintf(c->stats_note, sizeof c->stats_note,
                             "stored stats.%s %.6g disagrees with the samples' %.6g; the "
                             "statistics are computed from the samples",
                             names[i], s, computed[i]);
            }
        }
    }
    if (c->has_counts && c->stats.median > 0) {
        double old_gbs = c->gbs, old_gflops = c->gflops;
        c->gflops = c->flops / c->stats.median / 1e9;
        c->gbs = c->bytes / c->stats.median / 1e9;
        c->items_per_s = c->items / c->stats.median;
        /* Fractions of the ceilings keep their ceiling (kbi_results_read
         * takes it from the env record when there is one). */
        c->frac_bandwidth =
            old_gbs > 0 && isfinite(c->frac_bandwidth) ? c->frac_bandwidth * c->gbs / old_gbs : 0;
        c->frac_peak =
            old_gflops > 0 && isfinite(c->frac_peak) ? c->frac_peak * c->gflops / old_gflops : 0;
    }
}

/* A stored figure without samples to check it against: absurd values
 * (negative, not finite) are dropped rather than shown. */
static double sane_figure(json_t *stats, const char *key)
{
    double v = get_num(stats, key);
    return isfinite(v) && v >= 0 ? v : 0.0;
}

/* Reads "rounds" (samples per round); a list that does not add up to the
 * samples is ignored, with a note. */
static void read_rounds(kbi_case_result *c, json_t *rounds)
{
    size_t n = json_array_size(rounds), *per;
    if (!json_is_array(rounds) || n == 0)
        return;
    per = kbi_xcalloc(n, sizeof *per);
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_array_get(rounds, i);
        per[i] =
            json_is_integer(v) && json_integer_value(v) > 0 ? (size_t)json_integer_value(v) : 0;
    }
    if (n > 1 && kbi_case_result_set_rounds(c, per, n) != 0 && !c->stats_note[0])
        snprintf(c->stats_note, sizeof c->stats_note,
                 "\"rounds\" does not add up to the %zu samples; rounds ignored", c->n_samples);
    free(per);
}

/* The string fields of a case record, read alike ("" when absent). */
static const struct {
    const char *key;
    size_t offset;
} string_fields[] = {
#define KBI_STRING_FIELD(name) {#name, offsetof(kbi_case_result, name)}
    KBI_STRING_FIELD(run_id),     KBI_STRING_FIELD(id),         KBI_STRING_FIELD(plugin),
    KBI_STRING_FIELD(variant),    KBI_STRING_FIELD(target),     KBI_STRING_FIELD(baseline),
    KBI_STRING_FIELD(params_text), KBI_STRING_FIELD(size_param), KBI_STRING_FIELD(message),
    KBI_STRING_FIELD(cache),      KBI_STRING_FIELD(timing),     KBI_STRING_FIELD(time),
#undef KBI_STRING_FIELD
};

/* Parses a case record; returns NULL on success or the name of what was
 * missing or malformed.  On failure c may hold part of the record (the
 * caller frees it). */
static const char *read_case(kbi_case_result *c, json_t *obj, int version)
{
    json_t *samples, *stats, *counts, *rates, *verify, *metrics, *clocks, *params;
    const char *key;
    json_t *val;
    int st;
    memset(c, 0, sizeof *c);
    c->prepare_s = c->wall_s = c->cpu_wait = NAN;
    if (!json_is_string(json_object_get(obj, "id")))
        return "\"id\" (a string)";
    if (!json_is_string(json_object_get(obj, "plugin")))
        return "\"plugin\" (a string)";
    if (!json_is_string(json_object_get(obj, "variant")))
        return "\"variant\" (a string)";
    st = kbi_status_parse(json_string_value(json_object_get(obj, "status")));
    if (st < 0)
        return "\"status\" (ok, verify_failed, skipped, error, crashed or timeout)";
    samples = json_object_get(obj, "samples");
    if (samples && !json_is_array(samples))
        return "\"samples\" (an array of seconds)";
    params = json_object_get(obj, "params");
    if (params && !json_is_object(params))
        return "\"params\" (an object)";
    c->json = json_incref(obj);
    c->version = version;
    c->status = (kbi_status)st;
    c->index = get_long(obj, "index", -1);
    c->source = kbi_strdup("");
    for (size_t i = 0; i < sizeof string_fields / sizeof *string_fields; i++)
        *(char **)((char *)c + string_fields[i].offset) = dup_str(obj, string_fields[i].key);
    c->is_baseline = json_is_true(json_object_get(obj, "is_baseline"));
    c->params = params ? json_incref(params) : json_object();
    c->batch = get_long(obj, "batch", 0);
    if (json_is_object(json_object_get(obj, "hot_trial"))) {
        json_t *t = json_object_get(obj, "hot_trial");
        c->hot_trial_graph_s = get_num(t, "graph_s");
        c->hot_trial_stream_s = get_num(t, "stream_s");
    }
    c->prepare_s = get_num_or_nan(obj, "prepare_s");
    c->wall_s = get_num_or_nan(obj, "wall_s");
    c->sticky_error = json_is_true(json_object_get(obj, "sticky_error"));
    c->sanitize = dup_str(obj, "sanitize");
    c->cpu_wait = get_num_or_nan(obj, "cpu_wait");
    if (json_is_object(json_object_get(obj, "sanitizer")))
        c->sanitizer = json_incref(json_object_get(obj, "sanitizer"));
    c->n_samples = samples ? json_array_size(samples) : 0;
    c->samples = kbi_xcalloc(c->n_samples, sizeof *c->samples);
    for (size_t i = 0; i < c->n_samples; i++) {
        json_t *s = json_array_get(samples, i);
        if (!json_is_number(s))
            return "\"samples\" (an array of seconds)";
        c->samples[i] = json_number_value(s);
    }
    stats = json_object_get(obj, "stats");
    c->has_stats = json_is_object(stats);
    if (c->has_stats && !c->n_samples) {
        c->stats.n = get_count(stats, "n");
        c->stats.median = sane_figure(stats, "median");
        c->stats.min = sane_figure(stats, "min");
        c->stats.max = sane_figure(stats, "max");
        c->stats.mean = sane_figure(stats, "mean");
        c->stats.stddev = sane_figure(stats, "stddev");
        c->stats.ci_low = sane_figure(stats, "ci_low");
        c->stats.ci_high = sane_figure(stats, "ci_high");
        c->stats.noise = sane_figure(stats, "noise");
        if (c->stats.n > 0)
            snprintf(c->stats_note, sizeof c->stats_note,
                     "stats (n = %zu) without the samples to check them against", c->stats.n);
    }
    counts = json_object_get(obj, "counts");
    c->has_counts = json_is_object(counts);
    c->flops = get_num(counts, "flops");
    c->bytes = get_num(counts, "bytes");
    c->items = get_num(counts, "items");
    c->item_unit = dup_str(counts, "item_unit");
    rates = json_object_get(obj, "rates");
    c->gflops = get_num(rates, "gflops");
    c->gbs = get_num(rates, "gbs");
    c->items_per_s = get_num(rates, "items_per_s");
    c->frac_bandwidth = get_num(rates, "frac_bandwidth");
    c->frac_peak = get_num(rates, "frac_peak");
    verify = json_object_get(obj, "verify");
    if (json_is_object(verify)) {
        c->has_verify = 1;
        c->verify_passed = json_is_true(json_object_get(verify, "passed"));
        c->verify_error = get_num(verify, "error");
        c->verify_tolerance = get_num(verify, "tolerance");
        c->verify_metric = dup_str(verify, "metric");
    } else {
        c->verify_metric = kbi_strdup("");
    }
    metrics = json_object_get(obj, "metrics");
    if (json_is_object(metrics)) {
        c->metrics = kbi_xcalloc(json_object_size(metrics), sizeof *c->metrics);
        json_object_foreach(metrics, key, val)
        {
            if (!json_is_object(val))
                return "\"metrics\" (name -> an object with \"value\")";
            read_metric(&c->metrics[c->n_metrics++], key, val, version);
        }
    }
    clocks = json_object_get(obj, "clocks");
    if (json_is_object(clocks)) {
        c->has_clocks = 1;
        c->clock_start_mhz = get_num(clocks, "sm_start_mhz");
        c->clock_end_mhz = get_num(clocks, "sm_end_mhz");
        c->throttle_reasons = get_long(clocks, "throttle_reasons", 0);
        c->clock_drop = json_is_true(json_object_get(clocks, "drop"));
    }
    /* After counts and rates: the rates are derived again. */
    if (c->n_samples)
        stats_from_samples(c, stats);
    read_rounds(c, json_object_get(obj, "rounds"));
    return NULL;
}

void kbi_case_result_free(kbi_case_result *c)
{
    free(c->source);
    free(c->run_id);
    free(c->id);
    free(c->plugin);
    free(c->variant);
    free(c->target);
    free(c->baseline);
    free(c->params_text);
    free(c->size_param);
    free(c->message);
    free(c->cache);
    free(c->timing);
    free(c->time);
    free(c->samples);
    free(c->item_unit);
    free(c->verify_metric);
    free(c->sanitize);
    free(c->rounds);
    free(c->round_medians);
    for (size_t i = 0; i < c->n_metrics; i++)
        free_metric(&c->metrics[i]);
    free(c->metrics);
    json_decref(c->params);
    json_decref(c->sanitizer);
    json_decref(c->json);
    memset(c, 0, sizeof *c);
}

const char *kbi_case_record_read(kbi_case_result *r, json_t *obj, int version)
{
    const char *missing = read_case(r, obj, version);
    if (missing)
        kbi_case_result_free(r);
    return missing;
}

static void free_env(kbi_env_record *e)
{
    free(e->run_id);
    free(e->source);
    free(e->device_name);
    free(e->git_revision);
    free(e->cpu_model);
    free(e->cpu_signature);
    json_decref(e->json);
}

/* Reads one line of any length; returns its length or -1 at end of file.
 * *had_newline tells whether the line was terminated. */
static long read_line(FILE *f, kbi_buf *b, int *had_newline)
{
    int ch;
    b->len = 0;
    *had_newline = 0;
    while ((ch = fgetc(f)) != EOF) {
        if (ch == '\n') {
            *had_newline = 1;
            break;
        }
        if (b->len + 2 > b->cap) {
            b->cap = b->cap ? b->cap * 2 : 4096;
            b->data = kbi_xrealloc(b->data, b->cap);
        }
        b->data[b->len++] = (char)ch;
    }
    if (ch == EOF && b->len == 0)
        return -1;
    if (!b->data)
        b->data = kbi_xmalloc(1);
    b->data[b->len] = '\0';
    return (long)b->len;
}

/* Quotes c's rates as fractions of its run's ceilings (env record). */
static void quote_ceilings(kbi_case_result *c)
{
    const kbi_env_record *e = c->env;
    if (!e || !c->has_counts || !(c->stats.median > 0))
        return;
    if (e->bandwidth_gbs > 0)
        c->frac_bandwidth = c->gbs / e->bandwidth_gbs;
    if (e->peak_gflops > 0)
        c->frac_peak = c->gflops / e->peak_gflops;
}

int kbi_results_load(kbi_result_set *set, const char *path, char *err)
{
    FILE *f = fopen(path, "r");
    int rc;
    if (!f) {
        kbi_errf(err, "%s: cannot open results file: %s", path, strerror(errno));
        return KBI_ERR_IO;
    }
    rc = kbi_results_read(set, f, path, err);
    fclose(f);
    return rc;
}

/* The kind of results record obj is ("env", "case", "end", ...) and its
 * schema version, or NULL with err set when it is not a record this kbench
 * reads. */
static const char *record_kind(json_t *obj, const char *path, long lineno, json_int_t *version,
                               char *err)
{
    const char *schema = json_string_value(json_object_get(obj, "schema")), *record;
    if (!json_is_object(obj) || !schema || strcmp(schema, KBI_RESULTS_SCHEMA) != 0) {
        kbi_errf(err, "%s:%ld: not a kbench results record, expected \"schema\":\"%s\"", path,
                 lineno, KBI_RESULTS_SCHEMA);
        return NULL;
    }
    if (!json_is_integer(json_object_get(obj, "version"))) {
        kbi_errf(err, "%s:%ld: results record without an integer \"version\", expected %d", path,
                 lineno, KBI_RESULTS_VERSION);
        return NULL;
    }
    *version = json_integer_value(json_object_get(obj, "version"));
    if (*version < KBI_RESULTS_OLDEST_VERSION || *version > KBI_RESULTS_VERSION) {
        kbi_errf(err,
                 "%s:%ld: results schema version %lld, expected %d to %d (written by another "
                 "kbench version)",
                 path, lineno, (long long)*version, KBI_RESULTS_OLDEST_VERSION,
                 KBI_RESULTS_VERSION);
        return NULL;
    }
    record = json_string_value(json_object_get(obj, "record"));
    if (!json_is_string(json_object_get(obj, "run_id")) || !record) {
        kbi_errf(err, "%s:%ld: record without \"record\" or \"run_id\"", path, lineno);
        return NULL;
    }
    return record;
}

/* Adds record obj (of kind record) at path:lineno to set; *saw_end is set
 * by an end record.  Returns KBI_OK or KBI_ERR_INPUT with err set. */
static int take_record(kbi_result_set *set, json_t *obj, const char *record, json_int_t version,
                       const char *path, long lineno, int *saw_end, char *err)
{
    char where[KBI_ERR_SIZE];
    snprintf(where, sizeof where, "%s:%ld", path, lineno);
    if (strcmp(record, "env") == 0) {
        set->envs = kbi_xrealloc(set->envs, (set->n_envs + 1) * sizeof *set->envs);
        read_env(&set->envs[set->n_envs++], obj, where);
    } else if (strcmp(record, "case") == 0) {
        kbi_case_result c;
        const char *missing = kbi_case_record_read(&c, obj, (int)version);
        if (missing) {
            kbi_errf(err, "%s: case record without a valid %s", where, missing);
            return KBI_ERR_INPUT;
        }
        free(c.source);
        c.source = kbi_strdup(where);
        if (c.stats_note[0]) {
            char note[KBI_ERR_SIZE];
            snprintf(note, sizeof note, "%.700s: %s", where, c.stats_note);
            kbi_results_add_warning(set, note);
        }
        set->cases = kbi_xrealloc(set->cases, (set->n_cases + 1) * sizeof *set->cases);
        set->cases[set->n_cases++] = c;
    } else if (strcmp(record, "end") == 0) {
        kbi_env_record *e = find_env(set, json_string_value(json_object_get(obj, "run_id")));
        *saw_end = 1;
        if (e)
            e->complete = json_is_true(json_object_get(obj, "complete"));
        if (!json_is_true(json_object_get(obj, "complete")))
            add_warning(set, "%s:%ld: the run was interrupted; its results are partial", path,
                        lineno);
    } else {
        kbi_errf(err, "%s: unknown record \"%s\", expected env, case or end", where, record);
        return KBI_ERR_INPUT;
    }
    return KBI_OK;
}

int kbi_results_read(kbi_result_set *set, FILE *f, const char *path, char *err)
{
    kbi_buf line = {0};
    long lineno = 0;
    size_t n_cases_before = set->n_cases, n_envs_before = set->n_envs,
           n_warnings_before = set->n_warnings;
    int had_newline, rc = KBI_OK, saw_end = 0;
    while (rc == KBI_OK && read_line(f, &line, &had_newline) >= 0) {
        json_error_t jerr;
        json_t *obj;
        const char *record;
        json_int_t version = 0;
        lineno++;
        if (kbi_trim(line.data)[0] == '\0')
            continue;
        obj = json_loads(line.data, 0, &jerr);
        if (!obj && !had_newline) {
            add_warning(set, "%s:%ld: truncated last line ignored (the run was cut off)", path,
                        lineno);
            break;
        }
        if (!obj) {
            kbi_errf(err, "%s:%ld: not a JSON object (%s), expected one results record per line",
                     path, lineno, jerr.text);
            rc = KBI_ERR_INPUT;
            break;
        }
        record = record_kind(obj, path, lineno, &version, err);
        rc = record ? take_record(set, obj, record, version, path, lineno, &saw_end, err)
                    : KBI_ERR_INPUT;
        json_decref(obj);
    }
    if (ferror(f) && rc == KBI_OK) {
        kbi_errf(err, "%s: read error: %s", path, strerror(errno));
        rc = KBI_ERR_IO;
    }
    kbi_buf_free(&line);
    if (rc == KBI_OK && !saw_end && lineno > 0)
        add_warning(set, "%s:%ld: no end record: the run did not finish; results are partial", path,
                    lineno);
    if (rc != KBI_OK) {
        /* Leave the set as it was before this file: its cases, its env
         * records (cases of earlier files may not point at them) and its
         * warnings. */
        while (set->n_cases > n_cases_before)
            kbi_case_result_free(&set->cases[--set->n_cases]);
        while (set->n_envs > n_envs_before)
            free_env(&set->envs[--set->n_envs]);
        while (set->n_warnings > n_warnings_before)
            free(set->warnings[--set->n_warnings]);
    }
    /* Every case: the env array may have moved. */
    for (size_t i = 0; i < set->n_cases; i++)
        set->cases[i].env = find_env(set, set->cases[i].run_id);
    for (size_t i = n_cases_before; i < set->n_cases; i++)
        quote_ceilings(&set->cases[i]);
    return rc;
}

void kbi_results_free(kbi_result_set *set)
{
    for (size_t i = 0; i < set->n_cases; i++)
        kbi_case_result_free(&set->cases[i]);
    for (size_t i = 0; i < set->n_envs; i++)
        free_env(&set->envs[i]);
    for (size_t i = 0; i < set->n_warnings; i++)
        free(set->warnings[i]);
    free(set->cases);
    free(set->envs);
    free(set->warnings);
    json_decref(set->profiles);
    memset(set, 0, sizeof *set);
}

void kbi_results_drop_case(kbi_result_set *set, size_t i)
{
    if (i >= set->n_cases)
        return;
    kbi_case_result_free(&set->cases[i]);
    memmove(&set->cases[i], &set->cases[i + 1], (set->n_cases - i - 1) * sizeof *set->cases);
    set->n_cases--;
}

void kbi_results_add_warning(kbi_result_set *set, const char *text)
{
    set->warnings = kbi_xrealloc(set->warnings, (set->n_warnings + 1) * sizeof *set->warnings);
    set->warnings[set->n_warnings++] = kbi_strdup(text);
}
