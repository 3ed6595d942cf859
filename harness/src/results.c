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
}

/* Parses a case record; returns NULL on success or the name of what was
 * missing or malformed. */
static const char *read_case(kbi_case_result *c, json_t *obj)
{
    json_t *samples, *stats, *counts, *rates, *verify, *metrics, *clocks;
    const char *key;
    json_t *val;
    int st;
    memset(c, 0, sizeof *c);
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
    c->json = json_incref(obj);
    c->status = (kbi_status)st;
    c->run_id = dup_str(obj, "run_id");
    c->id = dup_str(obj, "id");
    c->plugin = dup_str(obj, "plugin");
    c->variant = dup_str(obj, "variant");
    c->target = dup_str(obj, "target");
    c->baseline = dup_str(obj, "baseline");
    c->is_baseline = json_is_true(json_object_get(obj, "is_baseline"));
    c->params = json_incref(json_object_get(obj, "params"));
    if (!c->params)
        c->params = json_object();
    c->params_text = dup_str(obj, "params_text");
    c->message = dup_str(obj, "message");
    c->n_samples = samples ? json_array_size(samples) : 0;
    c->samples = kbi_xcalloc(c->n_samples, sizeof *c->samples);
    for (size_t i = 0; i < c->n_samples; i++) {
        json_t *s = json_array_get(samples, i);
        if (!json_is_number(s))
            return "\"samples\" (an array of seconds)";
        c->samples[i] = json_number_value(s);
    }
    stats = json_object_get(obj, "stats");
    if (stats) {
        c->stats.n = get_count(stats, "n");
        c->stats.median = get_num(stats, "median");
        c->stats.min = get_num(stats, "min");
        c->stats.max = get_num(stats, "max");
        c->stats.mean = get_num(stats, "mean");
        c->stats.stddev = get_num(stats, "stddev");
        c->stats.ci_low = get_num(stats, "ci_low");
        c->stats.ci_high = get_num(stats, "ci_high");
        c->stats.noise = get_num(stats, "noise");
    } else if (c->n_samples) {
        kbi_stats_compute(c->samples, c->n_samples, &c->stats);
    }
    counts = json_object_get(obj, "counts");
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
            kbi_metric *m = &c->metrics[c->n_metrics++];
            m->name = kbi_strdup(key);
            m->value = get_num(val, "value");
            m->unit = dup_str(val, "unit");
        }
    }
    clocks = json_object_get(obj, "clocks");
    c->clock_drop = json_is_true(json_object_get(clocks, "drop"));
    return NULL;
}

static void free_case(kbi_case_result *c)
{
    free(c->source);
    free(c->run_id);
    free(c->id);
    free(c->plugin);
    free(c->variant);
    free(c->target);
    free(c->baseline);
    free(c->params_text);
    free(c->message);
    free(c->samples);
    free(c->item_unit);
    free(c->verify_metric);
    for (size_t i = 0; i < c->n_metrics; i++) {
        free(c->metrics[i].name);
        free(c->metrics[i].unit);
    }
    free(c->metrics);
    json_decref(c->params);
    json_decref(c->json);
}

static void free_env(kbi_env_record *e)
{
    free(e->run_id);
    free(e->source);
    free(e->device_name);
    free(e->git_revision);
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

int kbi_results_read(kbi_result_set *set, FILE *f, const char *path, char *err)
{
    kbi_buf line = {0};
    long lineno = 0;
    size_t n_cases_before = set->n_cases, n_envs_before = set->n_envs,
           n_warnings_before = set->n_warnings;
    int had_newline, rc = KBI_OK, saw_end = 0;
    while (read_line(f, &line, &had_newline) >= 0) {
        json_error_t jerr;
        json_t *obj;
        const char *record, *schema;
        lineno++;
        if (kbi_trim(line.data)[0] == '\0')
            continue;
        obj = json_loads(line.data, 0, &jerr);
        if (!obj) {
            int at_end = !had_newline;
            if (at_end) {
                add_warning(set, "%s:%ld: truncated last line ignored (the run was cut off)",
                            path, lineno);
                break;
            }
            kbi_errf(err, "%s:%ld: not a JSON object (%s), expected one results record per line",
                     path, lineno, jerr.text);
            rc = KBI_ERR_INPUT;
            break;
        }
        schema = json_string_value(json_object_get(obj, "schema"));
        if (!json_is_object(obj) || !schema || strcmp(schema, KBI_RESULTS_SCHEMA) != 0) {
            kbi_errf(err, "%s:%ld: not a kbench results record, expected \"schema\":\"%s\"",
                     path, lineno, KBI_RESULTS_SCHEMA);
            json_decref(obj);
            rc = KBI_ERR_INPUT;
            break;
        }
        if (!json_is_integer(json_object_get(obj, "version"))) {
            kbi_errf(err, "%s:%ld: results record without an integer \"version\", expected %d",
                     path, lineno, KBI_RESULTS_VERSION);
            json_decref(obj);
            rc = KBI_ERR_INPUT;
            break;
        }
        if (json_integer_value(json_object_get(obj, "version")) != KBI_RESULTS_VERSION) {
            kbi_errf(err,
                     "%s:%ld: results schema version %lld, expected %d (written by another "
                     "kbench version)",
                     path, lineno, (long long)json_integer_value(json_object_get(obj, "version")),
                     KBI_RESULTS_VERSION);
            json_decref(obj);
            rc = KBI_ERR_INPUT;
            break;
        }
        record = json_string_value(json_object_get(obj, "record"));
        if (!json_is_string(json_object_get(obj, "run_id")) || !record) {
            kbi_errf(err, "%s:%ld: record without \"record\" or \"run_id\"", path, lineno);
            json_decref(obj);
            rc = KBI_ERR_INPUT;
            break;
        }
        if (strcmp(record, "env") == 0) {
            char where[KBI_ERR_SIZE];
            snprintf(where, sizeof where, "%s:%ld", path, lineno);
            set->envs = kbi_xrealloc(set->envs, (set->n_envs + 1) * sizeof *set->envs);
            read_env(&set->envs[set->n_envs++], obj, where);
        } else if (strcmp(record, "case") == 0) {
            kbi_case_result c;
            const char *missing = read_case(&c, obj);
            if (missing) {
                kbi_errf(err, "%s:%ld: case record without a valid %s", path, lineno, missing);
                if (c.json)
                    free_case(&c);
                json_decref(obj);
                rc = KBI_ERR_INPUT;
                break;
            }
            char where[KBI_ERR_SIZE];
            snprintf(where, sizeof where, "%s:%ld", path, lineno);
            c.source = kbi_strdup(where);
            set->cases = kbi_xrealloc(set->cases, (set->n_cases + 1) * sizeof *set->cases);
            set->cases[set->n_cases++] = c;
        } else if (strcmp(record, "end") == 0) {
            kbi_env_record *e = find_env(set, json_string_value(json_object_get(obj, "run_id")));
            saw_end = 1;
            if (e)
                e->complete = json_is_true(json_object_get(obj, "complete"));
            if (!json_is_true(json_object_get(obj, "complete")))
                add_warning(set, "%s:%ld: the run was interrupted; its results are partial",
                            path, lineno);
        } else {
            kbi_errf(err, "%s:%ld: unknown record \"%s\", expected env, case or end", path,
                     lineno, record);
            json_decref(obj);
            rc = KBI_ERR_INPUT;
            break;
        }
        json_decref(obj);
    }
    if (ferror(f) && rc == KBI_OK) {
        kbi_errf(err, "%s: read error: %s", path, strerror(errno));
        rc = KBI_ERR_IO;
    }
    kbi_buf_free(&line);
    if (rc == KBI_OK && !saw_end && lineno > 0)
        add_warning(set, "%s:%ld: no end record: the run did not finish; results are partial",
                    path, lineno);
    if (rc != KBI_OK) {
        /* Leave the set as it was before this file: its cases, its env
         * records (cases of earlier files may not point at them) and its
         * warnings. */
        while (set->n_cases > n_cases_before)
            free_case(&set->cases[--set->n_cases]);
        while (set->n_envs > n_envs_before)
            free_env(&set->envs[--set->n_envs]);
        while (set->n_warnings > n_warnings_before)
            free(set->warnings[--set->n_warnings]);
    }
    for (size_t i = 0; i < set->n_cases; i++)
        set->cases[i].env = find_env(set, set->cases[i].run_id);
    return rc;
}

void kbi_results_free(kbi_result_set *set)
{
    for (size_t i = 0; i < set->n_cases; i++)
        free_case(&set->cases[i]);
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
    free_case(&set->cases[i]);
    memmove(&set->cases[i], &set->cases[i + 1], (set->n_cases - i - 1) * sizeof *set->cases);
    set->n_cases--;
}

void kbi_results_add_warning(kbi_result_set *set, const char *text)
{
    set->warnings = kbi_xrealloc(set->warnings, (set->n_warnings + 1) * sizeof *set->warnings);
    set->warnings[set->n_warnings++] = kbi_strdup(text);
}
