/* Results files: writing JSON Lines as cases end, and reading them back for
 * report and compare. */
#define _POSIX_C_SOURCE 200809L
#include "results.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
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
    kbi_results_add_warning(set, buf);
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
    e->tf32_gflops = get_num(ceil, "tf32_gflops");
    e->cpu_model = dup_str(json_object_get(obj, "cpu"), "model");
    e->cpu_signature = dup_str(json_object_get(obj, "cpu"), "signature");
    e->cpu_cores = get_count(json_object_get(obj, "cpu"), "logical_cores");
    e->cpu_max_mhz = get_num(json_object_get(obj, "cpu"), "max_mhz");
    e->cpu_compute_ms =
        get_num(json_object_get(json_object_get(obj, "cpu"), "speed"), "compute_ms");
    e->cpu_memory_gbs =
        get_num(json_object_get(json_object_get(obj, "cpu"), "speed"), "memory_gbs");
    e->idle_watts = get_num(json_object_get(obj, "energy"), "idle_w");
    e->power_limit_watts = get_num(json_object_get(obj, "energy"), "power_limit_w");
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

/* The "energy" object of a case record: the figures, or null ones and why. */
static json_t *energy_json(const kbi_case_energy *e)
{
    static const char *const names[] = {"j_per_run",   "j_per_run_u", "watts",    "watts_u",
                                        "run_s",       "window_s",    "period_s", "flush_j",
                                        "gflop_per_j", "gb_per_j"};
    const double values[] = {e->j_per_run, e->j_per_run_u, e->watts,   e->watts_u,     e->run_s,
                             e->window_s,  e->period_s,    e->flush_j, e->gflop_per_j, e->gb_per_j};
    json_t *o = json_object();
    if (!e->measured) {
        json_object_set_new(o, "j_per_run", json_null());
        json_object_set_new(o, "why", json_string(e->why));
    } else {
        set_reals(o, names, values, sizeof values / sizeof *values);
        json_object_set_new(o, "windows", json_integer(e->windows));
        json_object_set_new(o, "runs", json_integer(e->runs));
    }
    if (isfinite(e->extra_s))
        json_object_set_new(o, "extra_s", json_real(e->extra_s));
    return o;
}

/* Reads a case record's "energy" object o into e; the work per joule is derived again from
 * the counts (kbi_case_energy_derive, after the counts are read). */
static void read_energy(kbi_case_energy *e, json_t *o)
{
    json_t *j = json_object_get(o, "j_per_run");
    const char *why = json_string_value(json_object_get(o, "why"));
    memset(e, 0, sizeof *e);
    e->measured = json_is_number(j) && json_number_value(j) > 0;
    e->j_per_run = get_num_or_nan(o, "j_per_run");
    e->j_per_run_u = get_num_or_nan(o, "j_per_run_u");
    e->watts = get_num_or_nan(o, "watts");
    e->watts_u = get_num_or_nan(o, "watts_u");
    e->run_s = get_num_or_nan(o, "run_s");
    e->window_s = get_num_or_nan(o, "window_s");
    e->period_s = get_num_or_nan(o, "period_s");
    e->flush_j = get_num(o, "flush_j");
    e->extra_s = get_num_or_nan(o, "extra_s");
    e->windows = (long)get_count(o, "windows");
    e->runs = (long long)get_count(o, "runs");
    snprintf(e->why, sizeof e->why, "%s",
             e->measured     ? ""
             : why && why[0] ? why
                             : "no energy figure in the record");
}

/* The "instrumented" object of a case record: the seconds the plugin's instrument entry took,
 * the metrics it reported, its status, and its message where it gave one. */
static json_t *instrumented_json(const kbi_case_result *r)
{
    const kbi_case_instrumented *in = &r->instrumented;
    json_t *o = json_object(), *names = json_array();
    json_object_set_new(o, "wall_s", real_or_null(in->wall_s));
    for (size_t i = 0; i < r->n_metrics; i++)
        if (r->metrics[i].instrumented)
            json_array_append_new(names, json_string(r->metrics[i].name));
    json_object_set_new(o, "metrics", names);
    json_object_set_new(o, "status", json_string(kbi_status_name(in->status)));
    if (in->message[0])
        json_object_set_new(o, "message", json_string(in->message));
    return o;
}

/* Reads a case record's "instrumented" object o (NULL: none) into c, marking the metrics it
 * names (read before).  Returns NULL, or what was malformed. */
static const char *read_instrumented(kbi_case_result *c, json_t *o)
{
    kbi_case_instrumented *in = &c->instrumented;
    json_t *names = json_object_get(o, "metrics"), *name;
    const char *status = json_string_value(json_object_get(o, "status"));
    size_t i;
    memset(in, 0, sizeof *in);
    if (!o)
        return NULL;
    if (!json_is_object(o) || (names && !json_is_array(names)))
        return "\"instrumented\" (an object with \"wall_s\" and \"metrics\", an array of names)";
    in->ran = 1;
    in->wall_s = get_num_or_nan(o, "wall_s");
    in->status =
        status && kbi_status_parse(status) >= 0 ? (kbi_status)kbi_status_parse(status) : KBI_ST_OK;
    snprintf(in->message, sizeof in->message, "%s",
             json_is_string(json_object_get(o, "message"))
                 ? json_string_value(json_object_get(o, "message"))
                 : "");
    json_array_foreach(names, i, name)
    {
        if (!json_is_string(name))
            return "\"instrumented\".\"metrics\" (an array of metric names)";
        for (size_t k = 0; k < c->n_metrics; k++)
            if (strcmp(c->metrics[k].name, json_string_value(name)) == 0)
                c->metrics[k].instrumented = 1;
    }
    return NULL;
}

void kbi_case_energy_derive(kbi_case_energy *e, double flops, double bytes)
{
    int ok = e->measured && e->j_per_run > 0;
    e->gflop_per_j = ok && flops > 0 ? flops / e->j_per_run / 1e9 : 0;
    e->gb_per_j = ok && bytes > 0 ? bytes / e->j_per_run / 1e9 : 0;
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
    if (r->headline && r->headline[0])
        set_str(rec, "headline", r->headline);
    if (r->roof && r->roof[0])
        set_str(rec, "roof", r->roof);
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
    if (r->host_paced)
        json_object_set_new(rec, "host_paced", json_true());
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
    if (r->has_energy)
        json_object_set_new(rec, "energy", energy_json(&r->energy));
    if (r->instrumented.ran)
        json_object_set_new(rec, "instrumented", instrumented_json(r));
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

int kbi_verdict_passed(int plugin_passed, double error, double tolerance, char *note, size_t n)
{
    int judged = !isnan(error) && !isnan(tolerance);
    note[0] = '\0';
    if (plugin_passed && judged && !(error <= tolerance)) {
        snprintf(note, n, "the plugin said passed, but its error %.6g exceeds its tolerance %.6g",
                 error, tolerance);
        return 0;
    }
    return plugin_passed != 0;
}

/* Whether a stored figure differs from the one computed from the samples by
 * more than rounding explains: the file keeps 10 significant digits of
 * each figure and of each sample, and `slack` is how far the samples'
 * rounding can move this figure (a spread of nearly equal samples moves by
 * far more, relatively, than the samples do). */
static int figure_differs(double stored, double computed, double slack)
{
    if (isnan(stored) || isnan(computed))
        return isnan(stored) != isnan(computed);
    return fabs(stored - computed) > 1e-6 * fmax(fabs(stored), fabs(computed)) + slack;
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
    double computed[8], slack[8] = {0};
    json_t *n_json = json_object_get(stored, "n");
    kbi_stats_compute(c->samples, c->n_samples, &c->stats);
    /* Each sample is off by up to 5e-10 of itself: the standard deviation
     * by as much of the largest, the noise (half the interval over the
     * median) by as much of largest over median. */
    slack[4] = 2e-9 * fabs(c->stats.max);
    slack[7] = c->stats.median > 0 ? 2e-9 * fabs(c->stats.max) / c->stats.median : 0;
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
                if (figure_differs(s, computed[i], slack[i]))
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

/* A case's full id from its parts (caller frees): plugin/variant/params_text, or a copy of
 * id when params_text is empty. */
static char *full_id_of(const char *plugin, const char *variant, const char *params_text,
                        const char *id)
{
    kbi_buf b = {0};
    if (!params_text || !params_text[0])
        return kbi_strdup(id);
    kbi_buf_printf(&b, "%s/%s/%s", plugin, variant, params_text);
    return b.data;
}

const char *kbi_case_full_id(const kbi_case_result *c)
{
    return c->full_id ? c->full_id : c->id;
}

/* The string fields of a case record, read alike ("" when absent). */
static const struct {
    const char *key;
    size_t offset;
} string_fields[] = {
#define KBI_STRING_FIELD(name)                                                                     \
    {                                                                                              \
#name, offsetof(kbi_case_result, name)                                                     \
    }
    KBI_STRING_FIELD(run_id),      KBI_STRING_FIELD(id),         KBI_STRING_FIELD(plugin),
    KBI_STRING_FIELD(variant),     KBI_STRING_FIELD(target),     KBI_STRING_FIELD(baseline),
    KBI_STRING_FIELD(params_text), KBI_STRING_FIELD(size_param), KBI_STRING_FIELD(message),
    KBI_STRING_FIELD(cache),       KBI_STRING_FIELD(timing),     KBI_STRING_FIELD(time),
    KBI_STRING_FIELD(headline),    KBI_STRING_FIELD(roof),
#undef KBI_STRING_FIELD
};

/* Reads a case record's "verify" (an object, or null: not verified) into c, after its status
 * and message. */
static void read_verify(kbi_case_result *c, json_t *verify)
{
    if (json_is_object(verify)) {
        c->has_verify = 1;
        /* NAN where the plugin gave no figure (null), as it gave it: read back as 0, a
         * missing tolerance would become a bound that every error exceeds. */
        c->verify_error = get_num_or_nan(verify, "error");
        c->verify_tolerance = get_num_or_nan(verify, "tolerance");
        c->verify_metric = dup_str(verify, "metric");
        /* The verdict is judged again from its figures (a record edited, or
         * written before kbench judged them, cannot pass an error over its
         * tolerance); such a case reads as failed. */
        c->verify_passed =
            kbi_verdict_passed(json_is_true(json_object_get(verify, "passed")), c->verify_error,
                               c->verify_tolerance, c->verify_note, sizeof c->verify_note);
        if (c->verify_note[0] && c->status == KBI_ST_OK) {
            char msg[KBI_ERR_SIZE];
            snprintf(msg, sizeof msg, "verification failed: %s", c->verify_note);
            c->status = KBI_ST_VERIFY_FAILED;
            free(c->message);
            c->message = kbi_strdup(msg);
        }
    } else {
        c->verify_metric = kbi_strdup("");
    }
}

/* Reads a case record's "metrics" and "instrumented" (which marks some of them) into c.
 * Returns NULL, or what was malformed. */
static const char *read_metrics(kbi_case_result *c, json_t *obj, int version)
{
    json_t *metrics = json_object_get(obj, "metrics"), *val;
    const char *key;
    if (json_is_object(metrics)) {
        c->metrics = kbi_xcalloc(json_object_size(metrics), sizeof *c->metrics);
        json_object_foreach(metrics, key, val)
        {
            if (!json_is_object(val))
                return "\"metrics\" (name -> an object with \"value\")";
            read_metric(&c->metrics[c->n_metrics++], key, val, version);
        }
    }
    return read_instrumented(c, json_object_get(obj, "instrumented"));
}

/* Parses a case record; returns NULL on success or the name of what was
 * missing or malformed.  On failure c may hold part of the record (the
 * caller frees it). */
static const char *read_case(kbi_case_result *c, json_t *obj, int version)
{
    json_t *samples, *stats, *counts, *rates, *clocks, *params;
    const char *bad;
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
    c->full_id = full_id_of(c->plugin, c->variant, c->params_text, c->id);
    c->is_baseline = json_is_true(json_object_get(obj, "is_baseline"));
    c->params = params ? json_incref(params) : json_object();
    c->batch = get_long(obj, "batch", 0);
    c->host_paced = json_is_true(json_object_get(obj, "host_paced"));
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
    read_verify(c, json_object_get(obj, "verify"));
    if ((bad = read_metrics(c, obj, version)))
        return bad;
    clocks = json_object_get(obj, "clocks");
    if (json_is_object(clocks)) {
        c->has_clocks = 1;
        c->clock_start_mhz = get_num(clocks, "sm_start_mhz");
        c->clock_end_mhz = get_num(clocks, "sm_end_mhz");
        c->throttle_reasons = get_long(clocks, "throttle_reasons", 0);
        c->clock_drop = json_is_true(json_object_get(clocks, "drop"));
    }
    if (json_is_object(json_object_get(obj, "energy"))) {
        c->has_energy = 1;
        read_energy(&c->energy, json_object_get(obj, "energy"));
        kbi_case_energy_derive(&c->energy, c->flops, c->bytes);
    }
    /* After counts and rates: the rates are derived again. */
    if (c->n_samples)
        stats_from_samples(c, stats);
    read_rounds(c, json_object_get(obj, "rounds"));
    return NULL;
}

/* ---- what cannot be a measurement ---- */

/* The integers of an axis value however it is written ("2x3x4", "[0,2,1]",
 * or a JSON array of them), into out (at most max); returns how many, or -1
 * when text holds anything else. */
static int value_ints(const char *text, long long *out, int max)
{
    int n = 0, bracket = text[0] == '[';
    const char *p = text + bracket;
    char sep = bracket ? ',' : 'x';
    if (bracket && p[0] == ']')
        return p[1] ? -1 : 0;
    for (;;) {
        char *end;
        long long v;
        while (*p == ' ')
            p++;
        v = strtoll(p, &end, 10);
        if (end == p || n >= max)
            return -1;
        out[n++] = v;
        for (p = end; *p == ' '; p++)
            ;
        if (*p != sep)
            break;
        p++;
    }
    if (bracket && *p++ != ']')
        return -1;
    return *p ? -1 : n;
}

/* Whether an id's text for one parameter says what the record's params hold for it. */
static int value_matches(json_t *v, const char *text)
{
    char *end;
    if (json_is_string(v))
        return strcmp(json_string_value(v), text) == 0;
    if (json_is_integer(v)) {
        double d = strtod(text, &end);
        return end != text && !*end && d == (double)json_integer_value(v);
    }
    if (json_is_real(v)) {
        double d = strtod(text, &end), x = json_real_value(v);
        /* The record keeps 10 significant digits; the id the profile's text. */
        return end != text && !*end && fabs(d - x) <= 1e-9 * fmax(fabs(d), fabs(x));
    }
    if (json_is_array(v)) {
        long long ints[64];
        int n = value_ints(text, ints, 64);
        if (n != (int)json_array_size(v))
            return 0;
        for (int i = 0; i < n; i++)
            if (!json_is_integer(json_array_get(v, (size_t)i)) ||
                json_integer_value(json_array_get(v, (size_t)i)) != ints[i])
                return 0;
        return 1;
    }
    return 0;
}

/* The length of the name=value entry of a parameter text at *p (entries are split at commas
 * outside brackets), moving *p past it and its comma; 0 at the end of the text. */
static size_t next_entry(const char **p)
{
    const char *start = *p, *end = start;
    int depth = 0;
    if (!*start)
        return 0;
    for (; *end && !(*end == ',' && depth == 0); end++)
        depth += *end == '[' ? 1 : *end == ']' ? -1 : 0;
    *p = *end ? end + 1 : end;
    return (size_t)(end - start);
}

/* Whether every entry of `some` is an entry of `all`, in the same order. */
static int entries_within(const char *some, const char *all)
{
    while (*some) {
        const char *e = some, *a;
        size_t len = next_entry(&some), alen;
        do {
            a = all;
            alen = next_entry(&all);
        } while (alen && !(alen == len && strncmp(a, e, len) == 0));
        if (!alen)
            return 0;
    }
    return 1;
}

/* NULL when c's id is plugin/variant[/name=value,...] saying what its params hold, and its
 * params_text names exactly them (the full id, plugin/variant/params_text, is what compare
 * matches cases by, so a text that says another problem would pair unlike cases); else what
 * is wrong, in why.  Before version 4 the id names every parameter; from 4 it names the
 * problem (kbi_param_role), so its entries are some of params_text's. */
static const char *id_mismatch(const kbi_case_result *c, json_t *obj, char *why, size_t n)
{
    size_t lp = strlen(c->plugin), lv = strlen(c->variant), named = 0;
    const char *rest = c->id + lp + 1 + lv, *text;
    json_t *params = json_object_get(obj, "params");
    if (strncmp(c->id, c->plugin, lp) != 0 || c->id[lp] != '/' ||
        strncmp(c->id + lp + 1, c->variant, lv) != 0 || (*rest && *rest != '/')) {
        snprintf(why, n, "id \"%.200s\" is not plugin/variant \"%.100s/%.100s\"...", c->id,
                 c->plugin, c->variant);
        return why;
    }
    if (!json_is_object(params))
        return NULL; /* nothing to hold the rest against */
    if (*rest)
        rest++;
    if (c->version < 4 && c->params_text[0] && strcmp(rest, c->params_text) != 0) {
        snprintf(why, n, "id \"%.200s\" does not end in its params_text \"%.200s\"", c->id,
                 c->params_text);
        return why;
    }
    if (c->version >= 4 && !entries_within(rest, c->params_text)) {
        snprintf(why, n, "id \"%.200s\" names what its params_text \"%.200s\" does not", c->id,
                 c->params_text);
        return why;
    }
    /* Each name=value entry of the text that names every parameter against params. */
    for (text = c->version < 4 ? rest : c->params_text; *text;) {
        char name[256], value[512];
        const char *entry = text, *eq;
        size_t len = next_entry(&text);
        json_t *v;
        eq = memchr(entry, '=', len);
        if (!eq || (size_t)(eq - entry) >= sizeof name) {
            named = (size_t)-1; /* not an entry: said below */
            break;
        }
        snprintf(name, sizeof name, "%.*s", (int)(eq - entry), entry);
        snprintf(value, sizeof value, "%.*s", (int)(entry + len - eq - 1), eq + 1);
        v = json_object_get(params, name);
        if (!v || !value_matches(v, value)) {
            snprintf(why, n, "%s \"%.200s\" says %.100s=%.100s, its params %s",
                     c->version < 4 ? "id" : "params_text", c->version < 4 ? c->id : c->params_text,
                     name, value, v ? "hold another value" : "do not name it");
            return why;
        }
        named++;
    }
    if (named != json_object_size(params)) {
        snprintf(why, n, "%s \"%.200s\" does not name each of its %zu params once",
                 c->version < 4 ? "id" : "params_text", c->version < 4 ? c->id : c->params_text,
                 json_object_size(params));
        return why;
    }
    return NULL;
}

/* NULL when record obj, read into c, can be a measurement; else what it
 * cannot be, in why (size n).  A timing is positive seconds: an ok case has
 * samples, not all zero, and no sample is negative; the work of one run is
 * non-negative numbers (null where unknown). */
static const char *implausible(const kbi_case_result *c, json_t *obj, char *why, size_t n)
{
    static const char *const count_names[] = {"flops", "bytes", "items"};
    json_t *counts = json_object_get(obj, "counts");
    int any_positive = 0;
    for (size_t i = 0; i < c->n_samples; i++) {
        if (c->samples[i] < 0) {
            snprintf(why, n, "sample %zu is %.6g s, expected a time of zero or more", i + 1,
                     c->samples[i]);
            return why;
        }
        any_positive |= c->samples[i] > 0;
    }
    if (c->status == KBI_ST_OK && !any_positive) {
        snprintf(why, n, "status ok with %s, expected the samples of a measurement",
                 c->n_samples ? "only zero samples" : "no samples");
        return why;
    }
    if (counts && !json_is_object(counts) && !json_is_null(counts)) {
        snprintf(why, n, "\"counts\" is not an object, expected flops, bytes and items");
        return why;
    }
    for (size_t i = 0; json_is_object(counts) && i < 3; i++) {
        json_t *v = json_object_get(counts, count_names[i]);
        if (v && !json_is_null(v) && !(json_is_number(v) && json_number_value(v) >= 0)) {
            char *text = json_dumps(v, JSON_ENCODE_ANY);
            snprintf(why, n, "counts.%s is %.100s, expected a number of zero or more (or null)",
                     count_names[i], text ? text : "?");
            free(text);
            return why;
        }
    }
    return id_mismatch(c, obj, why, n);
}

void kbi_case_result_free(kbi_case_result *c)
{
    free(c->source);
    free(c->run_id);
    free(c->id);
    free(c->full_id);
    free(c->plugin);
    free(c->variant);
    free(c->target);
    free(c->baseline);
    free(c->params_text);
    free(c->size_param);
    free(c->headline);
    free(c->roof);
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

static void summarise_kind(kbi_result_set *set, const kbi_warning_kind *k);

/* What reading one file keeps from line to line. */
typedef struct read_state {
    size_t first_case; /* set->cases[first_case..] came from this file */
    json_t *by_round;  /* "run_id id" -> index in set->cases of a case read from round records */
    json_t *ended_at;  /* run_id -> set->n_cases at its last end record (files joined by cat) */
    int saw_end;
} read_state;

/* Joins round record r's metrics into c's (see kbi_metric.rounds): each metric both have
 * becomes the mean of the rounds' values so far, within its bound only if every round's was. */
static void join_round_metrics(kbi_case_result *c, const kbi_case_result *r)
{
    for (size_t i = 0; i < c->n_metrics; i++) {
        kbi_metric *m = &c->metrics[i];
        const kbi_metric *x = NULL;
        double delta, n, spread;
        for (size_t k = 0; k < r->n_metrics && !x; k++)
            if (strcmp(r->metrics[k].name, m->name) == 0)
                x = &r->metrics[k];
        if (!x)
            continue;
        if (m->rounds == 0) {
            m->rounds = 1;
            m->m2 = 0;
            m->u2 = m->uncertainty * m->uncertainty;
        }
        n = (double)++m->rounds;
        delta = x->value - m->value;
        m->value += delta / n;
        m->m2 += delta * (x->value - m->value);
        m->u2 += x->uncertainty * x->uncertainty; /* NAN stays NAN: unknown */
        spread = sqrt(m->m2 / (n - 1) / n);
        m->uncertainty = isnan(m->u2) ? NAN : fmax(sqrt(m->u2) / n, spread);
        m->in_bound = m->in_bound && x->in_bound;
        m->instrumented |= x->instrumented;
    }
}

/* Round r's energy joined into its case c's: the mean of the rounds' figures, each weighed
 * by its windows, with the uncertainty of such a mean of independent figures; where only one
 * side is measured, its figures. */
static void join_energy(kbi_case_result *c, const kbi_case_result *r)
{
    kbi_case_energy *a = &c->energy;
    const kbi_case_energy *b = &r->energy;
    double wa, wb,
        extra = (isfinite(a->extra_s) ? a->extra_s : 0) + (isfinite(b->extra_s) ? b->extra_s : 0);
    if (!c->has_energy || (!a->measured && b->measured)) {
        c->has_energy = 1;
        *a = *b;
    } else if (a->measured && b->measured) {
        wa = (double)a->windows;
        wb = (double)b->windows;
#define KBI_JOIN(f) a->f = (wa * a->f + wb * b->f) / (wa + wb)
#define KBI_JOIN_U(f) a->f = sqrt(pow(wa * a->f, 2) + pow(wb * b->f, 2)) / (wa + wb)
        KBI_JOIN_U(j_per_run_u);
        KBI_JOIN_U(watts_u);
        KBI_JOIN(j_per_run);
        KBI_JOIN(watts);
        KBI_JOIN(run_s);
        KBI_JOIN(window_s);
        KBI_JOIN(period_s);
        KBI_JOIN(flush_j);
#undef KBI_JOIN
#undef KBI_JOIN_U
        a->windows += b->windows;
        a->runs += b->runs;
    }
    a->extra_s = extra;
    kbi_case_energy_derive(a, c->flops, c->bytes);
}

/* Adds round record r (of a case read from round records already) to that case c, whose
 * rounds_read rounds came before: its samples are appended (the statistics and rates are
 * those of every round's samples), or, when the round did not end ok, it replaces the case
 * (a failed round ends a case's rounds, as the runner stops measuring it).  Takes r over. */
static void join_round(kbi_case_result *c, kbi_case_result *r, long round)
{
    size_t n = c->n_rounds ? c->n_rounds : 1, *per = kbi_xcalloc(n + 1, sizeof *per);
    double wait = c->cpu_wait;
    if (r->status != KBI_ST_OK) {
        char msg[KBI_ERR_SIZE];
        snprintf(msg, sizeof msg, "round %ld: %.900s", round, r->message);
        free(r->message);
        r->message = kbi_strdup(msg);
        kbi_case_result_free(c);
        *c = *r;
        c->rounds_read = (size_t)round;
        free(per);
        return;
    }
    if (c->n_rounds)
        memcpy(per, c->rounds, n * sizeof *per);
    else
        per[0] = c->n_samples;
    per[n] = r->n_samples;
    c->samples = kbi_xrealloc(c->samples, (c->n_samples + r->n_samples + 1) * sizeof *c->samples);
    memcpy(c->samples + c->n_samples, r->samples, r->n_samples * sizeof *r->samples);
    c->n_samples += r->n_samples;
    kbi_case_result_derive(c, 0, 0); /* fractions of the ceilings: quote_ceilings */
    kbi_case_result_set_rounds(c, per, n + 1);
    c->rounds_read = (size_t)round;
    /* The worst wait of any round is what the case's times may measure. */
    c->cpu_wait = isnan(wait) || r->cpu_wait > wait ? r->cpu_wait : wait;
    if (isfinite(c->wall_s) && isfinite(r->wall_s))
        c->wall_s += r->wall_s;
    if (r->has_clocks) {
        c->clock_end_mhz = r->clock_end_mhz;
        c->clock_drop |= r->clock_drop;
        c->throttle_reasons |= r->throttle_reasons;
    }
    c->sticky_error |= r->sticky_error;
    join_round_metrics(c, r);
    if (r->has_energy)
        join_energy(c, r);
    /* Each round's instrument ran apart: their times add up; a round that skipped says why. */
    if (r->instrumented.ran) {
        double before = c->instrumented.ran ? c->instrumented.wall_s : 0;
        if (!c->instrumented.ran || c->instrumented.status == KBI_ST_OK)
            c->instrumented = r->instrumented;
        c->instrumented.wall_s = before + r->instrumented.wall_s;
    }
    if (!c->stats_note[0])
        memcpy(c->stats_note, r->stats_note, sizeof c->stats_note);
    free(per);
    kbi_case_result_free(r);
}

/* Adds round record r (read from obj at `where`) to set: round 1 makes its case, each later
 * one joins it (join_round).  Takes r over.  Returns KBI_OK, or KBI_ERR_INPUT with err set
 * when the round is not the next of its case. */
static int take_round(kbi_result_set *set, read_state *st, kbi_case_result *r, json_t *obj,
                      const char *where, char *err)
{
    json_t *num = json_object_get(obj, "round"), *at;
    long round = json_is_integer(num) ? (long)json_integer_value(num) : 0;
    kbi_buf key = {0};
    kbi_case_result *c;
    int rc = KBI_ERR_INPUT;
    kbi_buf_printf(&key, "%s %s", r->run_id, r->id);
    at = json_object_get(st->by_round, key.data);
    c = at ? &set->cases[json_integer_value(at)] : NULL;
    if (round < 1)
        kbi_errf(err, "%s: round record without a valid \"round\", expected its number from 1",
                 where);
    else if (!c && round != 1)
        kbi_errf(err, "%s: round %ld of case %s comes first, expected round 1", where, round,
                 r->id);
    else if (c && (long)c->rounds_read + 1 != round)
        kbi_errf(err, "%s: round %ld of case %s follows its round %zu, expected round %zu", where,
                 round, r->id, c->rounds_read, c->rounds_read + 1);
    else if (c && c->status != KBI_ST_OK)
        kbi_errf(err, "%s: round %ld of case %s after its round %zu ended it (%s)", where, round,
                 r->id, c->rounds_read, kbi_status_name(c->status));
    else
        rc = KBI_OK;
    if (rc != KBI_OK) {
        kbi_case_result_free(r);
    } else if (c) {
        join_round(c, r, round);
    } else {
        r->rounds_read = 1;
        json_object_set_new(st->by_round, key.data, json_integer((json_int_t)set->n_cases));
        set->cases = kbi_xrealloc(set->cases, (set->n_cases + 1) * sizeof *set->cases);
        set->cases[set->n_cases++] = *r;
    }
    kbi_buf_free(&key);
    return rc;
}

/* The cases of run `run_id` read from this file since its last end record. */
static size_t cases_of_run(const kbi_result_set *set, const read_state *st, const char *run_id)
{
    json_t *from = json_object_get(st->ended_at, run_id);
    size_t n = 0;
    for (size_t i = from ? (size_t)json_integer_value(from) : st->first_case; i < set->n_cases; i++)
        n += strcmp(set->cases[i].run_id, run_id) == 0;
    return n;
}

/* Checks an end record against the file: its count of cases is what the run wrote (since the
 * run's previous end record: files joined with cat), so a file holding another number was
 * cut or edited after the run ended, and what it holds is not what the run measured.  Refused
 * rather than read as partial: a CI job comparing it would miss the lost cases.  Returns KBI_OK or
 * KBI_ERR_INPUT with err set. */
static int check_end(const kbi_result_set *set, const read_state *st, json_t *obj,
                     const char *where, char *err)
{
    json_t *cases = json_object_get(obj, "cases");
    const char *run_id = json_string_value(json_object_get(obj, "run_id"));
    size_t held = cases_of_run(set, st, run_id);
    json_object_set_new(st->ended_at, run_id, json_integer((json_int_t)set->n_cases));
    if (!cases)
        return KBI_OK; /* an end record written without the count */
    if (!json_is_integer(cases) || json_integer_value(cases) < 0) {
        kbi_errf(err, "%s: end record with \"cases\" not a count, expected the run's cases", where);
        return KBI_ERR_INPUT;
    }
    if ((size_t)json_integer_value(cases) != held) {
        kbi_errf(err,
                 "%s: the end record counts %lld cases of run %s, the file holds %zu: it was "
                 "cut or edited after the run ended (remove the end record to read what is left "
                 "as an interrupted run)",
                 where, (long long)json_integer_value(cases), run_id, held);
        return KBI_ERR_INPUT;
    }
    return KBI_OK;
}

/* Adds record obj (of kind record) at path:lineno to set.  Returns KBI_OK or KBI_ERR_INPUT
 * with err set. */
static int take_record(kbi_result_set *set, read_state *st, json_t *obj, const char *record,
                       json_int_t version, const char *path, long lineno, char *err)
{
    char where[KBI_ERR_SIZE], why[KBI_ERR_SIZE];
    int round = strcmp(record, "round") == 0;
    snprintf(where, sizeof where, "%s:%ld", path, lineno);
    if (strcmp(record, "env") == 0) {
        set->envs = kbi_xrealloc(set->envs, (set->n_envs + 1) * sizeof *set->envs);
        read_env(&set->envs[set->n_envs++], obj, where);
    } else if (strcmp(record, "case") == 0 || (round && version >= 3)) {
        kbi_case_result c;
        const char *missing = kbi_case_record_read(&c, obj, (int)version);
        if (missing) {
            kbi_errf(err, "%s: %s record without a valid %s", where, record, missing);
            return KBI_ERR_INPUT;
        }
        if (implausible(&c, obj, why, sizeof why)) {
            kbi_errf(err, "%s: case %.300s cannot be a measurement: %s", where, c.id, why);
            kbi_case_result_free(&c);
            return KBI_ERR_INPUT;
        }
        free(c.source);
        c.source = kbi_strdup(where);
        if (c.stats_note[0]) {
            snprintf(why, sizeof why, "%.700s: %s", where, c.stats_note);
            kbi_results_warn(set, "stored statistics that disagree with the samples", why);
        }
        if (c.verify_note[0]) {
            snprintf(why, sizeof why, "%.500s: case %.200s: %.224s; read as verify_failed", where,
                     c.id, c.verify_note);
            kbi_results_warn(set, "verdicts the figures contradict", why);
        }
        if (round)
            return take_round(set, st, &c, obj, where, err);
        set->cases = kbi_xrealloc(set->cases, (set->n_cases + 1) * sizeof *set->cases);
        set->cases[set->n_cases++] = c;
    } else if (strcmp(record, "end") == 0) {
        kbi_env_record *e = find_env(set, json_string_value(json_object_get(obj, "run_id")));
        if (check_end(set, st, obj, where, err) != KBI_OK)
            return KBI_ERR_INPUT;
        st->saw_end = 1;
        if (e)
            e->complete = json_is_true(json_object_get(obj, "complete"));
        if (!json_is_true(json_object_get(obj, "complete")))
            add_warning(set, "%s:%ld: the run was interrupted; its results are partial", path,
                        lineno);
    } else {
        kbi_errf(err, "%s: unknown record \"%s\", expected env, case%s or end", where, record,
                 version >= 3 ? ", round" : "");
        return KBI_ERR_INPUT;
    }
    return KBI_OK;
}

/* [run] rounds of c's run (its env record), 0 when it measured no rounds or does not say. */
static size_t planned_rounds(const kbi_case_result *c)
{
    json_t *r = c->env ? json_object_get(json_object_get(c->env->json, "run"), "rounds") : NULL;
    return json_is_integer(r) && json_integer_value(r) > 1 ? (size_t)json_integer_value(r) : 0;
}

/* Each case's rounds (read and planned), and one warning per run of this file whose measured
 * cases have fewer rounds than it planned (the run was cut off mid-rounds), saying how many
 * cases have how many. */
static void count_rounds(kbi_result_set *set, size_t first, const char *path)
{
    for (size_t i = first; i < set->n_cases; i++) {
        kbi_case_result *c = &set->cases[i];
        c->rounds_planned = planned_rounds(c);
        if (!c->rounds_read)
            c->rounds_read = c->n_rounds ? c->n_rounds : c->rounds_planned && c->n_samples;
    }
    for (size_t i = first; i < set->n_cases; i++) {
        const kbi_case_result *c = &set->cases[i];
        size_t planned = c->rounds_planned, *by = NULL, short_cases = 0;
        kbi_buf text = {0};
        int first_of_run = 1;
        if (!planned)
            continue;
        for (size_t j = first; j < i && first_of_run; j++)
            first_of_run = strcmp(set->cases[j].run_id, c->run_id) != 0;
        if (!first_of_run)
            continue;
        by = kbi_xcalloc(planned + 1, sizeof *by); /* by[r]: ok cases with r rounds */
        for (size_t j = i; j < set->n_cases; j++) {
            const kbi_case_result *d = &set->cases[j];
            if (strcmp(d->run_id, c->run_id) == 0 && d->status == KBI_ST_OK)
                by[d->rounds_read < planned ? d->rounds_read : planned]++;
        }
        for (size_t r = 0; r < planned; r++)
            short_cases += by[r];
        if (short_cases) {
            kbi_buf_printf(&text, "%s: run %s measured fewer rounds than its %zu:", path, c->run_id,
                           planned);
            for (size_t r = planned + 1; r-- > 0;)
                if (by[r])
                    kbi_buf_printf(&text, " %zu case%s with %zu of %zu rounds,", by[r],
                                   by[r] == 1 ? "" : "s", r, planned);
            text.data[text.len - 1] = '\0';
            kbi_results_add_warning(set, text.data);
        }
        kbi_buf_free(&text);
        free(by);
    }
}

int kbi_results_read(kbi_result_set *set, FILE *f, const char *path, char *err)
{
    kbi_buf line = {0};
    long lineno = 0;
    size_t n_cases_before = set->n_cases, n_envs_before = set->n_envs,
           n_warnings_before = set->n_warnings, n_kinds_before = set->n_warning_kinds;
    size_t *counts_before = kbi_xcalloc(n_kinds_before + 1, sizeof *counts_before);
    read_state st = {
        .first_case = set->n_cases, .by_round = json_object(), .ended_at = json_object()};
    int had_newline, rc = KBI_OK;
    for (size_t i = 0; i < n_kinds_before; i++)
        counts_before[i] = set->warning_kinds[i].count;
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
        rc =
            record ? take_record(set, &st, obj, record, version, path, lineno, err) : KBI_ERR_INPUT;
        json_decref(obj);
    }
    if (ferror(f) && rc == KBI_OK) {
        kbi_errf(err, "%s: read error: %s", path, strerror(errno));
        rc = KBI_ERR_IO;
    }
    kbi_buf_free(&line);
    json_decref(st.by_round);
    json_decref(st.ended_at);
    if (rc == KBI_OK && !st.saw_end && lineno > 0)
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
        set->n_warning_kinds = n_kinds_before;
        for (size_t i = 0; i < n_kinds_before; i++) {
            kbi_warning_kind *k = &set->warning_kinds[i];
            k->count = counts_before[i];
            if (k->summary != SIZE_MAX && k->summary >= set->n_warnings)
                k->summary = SIZE_MAX;
            else if (k->summary != SIZE_MAX)
                summarise_kind(set, k);
        }
    }
    free(counts_before);
    /* Every case: the env array may have moved. */
    for (size_t i = 0; i < set->n_cases; i++)
        set->cases[i].env = find_env(set, set->cases[i].run_id);
    for (size_t i = n_cases_before; i < set->n_cases; i++)
        quote_ceilings(&set->cases[i]);
    if (rc == KBI_OK)
        count_rounds(set, n_cases_before, path);
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
    free(set->warning_kinds);
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

/* n with a comma between each group of three digits ("49,990"). */
static void format_count(size_t n, char *out, size_t size)
{
    char digits[32];
    size_t len = (size_t)snprintf(digits, sizeof digits, "%zu", n), at = 0;
    for (size_t i = 0; i < len && at + 2 < size; i++) {
        if (i > 0 && (len - i) % 3 == 0)
            out[at++] = ',';
        out[at++] = digits[i];
    }
    out[at] = '\0';
}

/* Writes k's "... and N more like it" line (k->summary). */
static void summarise_kind(kbi_result_set *set, const kbi_warning_kind *k)
{
    char n[32], line[KBI_ERR_SIZE];
    format_count(k->count - KBI_WARNINGS_PER_KIND, n, sizeof n);
    snprintf(line, sizeof line, "\u2026 and %s more like it (%s)", n, k->kind);
    free(set->warnings[k->summary]);
    set->warnings[k->summary] = kbi_strdup(line);
}

void kbi_results_warn(kbi_result_set *set, const char *kind, const char *text)
{
    kbi_warning_kind *k = NULL;
    for (size_t i = 0; i < set->n_warning_kinds && !k; i++)
        if (strcmp(set->warning_kinds[i].kind, kind) == 0)
            k = &set->warning_kinds[i];
    if (!k) {
        set->warning_kinds = kbi_xrealloc(set->warning_kinds,
                                          (set->n_warning_kinds + 1) * sizeof *set->warning_kinds);
        k = &set->warning_kinds[set->n_warning_kinds++];
        *k = (kbi_warning_kind){kind, 0, SIZE_MAX};
    }
    if (++k->count <= KBI_WARNINGS_PER_KIND) {
        kbi_results_add_warning(set, text);
        return;
    }
    if (k->summary == SIZE_MAX) {
        k->summary = set->n_warnings;
        kbi_results_add_warning(set, "");
    }
    summarise_kind(set, k);
}
