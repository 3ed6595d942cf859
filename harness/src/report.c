/* `kbench report`: report.md, results.csv and the charts of one or more
 * results files.  The cases are grouped into a small model (plugin -> rows
 * of variants x parameter points) once; the Markdown, the CSV and the charts
 * are all written from it, so they always show the same figures. */
#define _XOPEN_SOURCE 700
#include "report.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "chart.h"
#include "ncu.h"

#define NO_CASE SIZE_MAX
/* Past this many parameter points a plugin gets no per-point bar chart (the
 * line chart against the size axis shows them better). */
#define MAX_POINT_CHARTS 24
/* Past this many slices of the other parameters, no line charts. */
#define MAX_SLICES 8
/* How deep a results folder is searched for results*.jsonl. */
#define MAX_DIR_DEPTH 3

/* ------------------------------------------------------------------ */
/* Loading inputs                                                      */
/* ------------------------------------------------------------------ */

typedef struct str_list {
    char **s;
    size_t n;
} str_list;

static void list_add(str_list *l, const char *s)
{
    l->s = kbi_xrealloc(l->s, (l->n + 1) * sizeof *l->s);
    l->s[l->n++] = kbi_strdup(s);
}

static void list_free(str_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->s[i]);
    free(l->s);
    l->s = NULL;
    l->n = 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int is_results_name(const char *name)
{
    size_t n = strlen(name);
    return strncmp(name, "results", 7) == 0 && n >= 13 && strcmp(name + n - 6, ".jsonl") == 0;
}

/* Adds the results*.jsonl files of dir; only when dir holds none, those of
 * its subfolders (depth levels further down), each by the same rule.  So a
 * run's folder gives its own results.jsonl and not the per-case files a
 * --sanitize run keeps below it, while a folder of shard-N folders gives
 * every shard. */
static int collect_dir(const char *dir, int depth, str_list *out, char *err)
{
    DIR *d = opendir(dir);
    struct dirent *ent;
    str_list subdirs = {0};
    size_t before = out->n;
    int rc = KBI_OK;
    if (!d) {
        kbi_errf(err, "%s: cannot read folder: %s", dir, strerror(errno));
        return KBI_ERR_IO;
    }
    while ((ent = readdir(d)) != NULL) {
        char path[PATH_MAX];
        struct stat st;
        if (ent->d_name[0] == '.')
            continue;
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, ent->d_name) >= sizeof path)
            continue;
        if (stat(path, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode) && depth > 0)
            list_add(&subdirs, path);
        else if (S_ISREG(st.st_mode) && is_results_name(ent->d_name))
            list_add(out, path);
    }
    closedir(d);
    if (out->n == before) {
        if (subdirs.n > 1) /* qsort of a NULL, empty list is undefined */
            qsort(subdirs.s, subdirs.n, sizeof *subdirs.s, cmp_str);
        for (size_t i = 0; i < subdirs.n && rc == KBI_OK; i++)
            rc = collect_dir(subdirs.s[i], depth - 1, out, err);
    }
    list_free(&subdirs);
    return rc;
}

/* Drops the later of two cases with the same run and id (a file merged
 * twice under two names, or a copy), with a warning naming both lines. */
static void drop_duplicates(kbi_result_set *set, size_t from)
{
    for (size_t i = from; i < set->n_cases;) {
        size_t j;
        for (j = 0; j < i; j++)
            if (strcmp(set->cases[j].id, set->cases[i].id) == 0 &&
                strcmp(set->cases[j].run_id, set->cases[i].run_id) == 0)
                break;
        if (j < i) {
            char w[KBI_ERR_SIZE];
            snprintf(w, sizeof w, "%s: case %s of run %s was already read from %s; ignored",
                     set->cases[i].source, set->cases[i].id, set->cases[i].run_id,
                     set->cases[j].source);
            kbi_results_add_warning(set, w);
            kbi_results_drop_case(set, i);
        } else {
            i++;
        }
    }
}

/* Picks up the profile.json that `kbench profile` writes beside a results
 * file; a malformed one is a warning, not an error. */
static void load_profile_beside(kbi_result_set *set, const char *results_path)
{
    char path[PATH_MAX];
    const char *slash = strrchr(results_path, '/');
    json_error_t jerr;
    json_t *doc;
    if (slash)
        snprintf(path, sizeof path, "%.*s/profile.json", (int)(slash - results_path),
                 results_path);
    else
        snprintf(path, sizeof path, "profile.json");
    if (access(path, F_OK) != 0)
        return;
    doc = json_load_file(path, 0, &jerr);
    if (!doc || !json_is_array(json_object_get(doc, "kernels")) ||
        !json_is_string(json_object_get(doc, "case")) ||
        !json_is_string(json_object_get(doc, "schema")) ||
        strcmp(json_string_value(json_object_get(doc, "schema")), "kbench-profile") != 0) {
        char msg[KBI_ERR_SIZE];
        kbi_errf(msg, "%s:%d: not a kbench profile document (%s); ignored", path,
                 doc ? 1 : jerr.line,
                 doc ? "expected schema kbench-profile with case and kernels" : jerr.text);
        kbi_results_add_warning(set, msg);
        json_decref(doc);
        return;
    }
    json_object_set_new(doc, "source", json_string(path));
    if (!set->profiles)
        set->profiles = json_array();
    json_array_append_new(set->profiles, doc);
}

int kbi_results_load_inputs(kbi_result_set *set, const char *const *inputs, size_t n_inputs,
                            char *err)
{
    str_list files = {0}, real = {0};
    size_t first_case = set->n_cases;
    int rc = KBI_OK;
    for (size_t i = 0; i < n_inputs; i++) {
        struct stat st;
        if (stat(inputs[i], &st) != 0) {
            kbi_errf(err, "%s: cannot open results: %s", inputs[i], strerror(errno));
            rc = KBI_ERR_IO;
            goto done;
        }
        if (S_ISDIR(st.st_mode)) {
            str_list found = {0};
            rc = collect_dir(inputs[i], MAX_DIR_DEPTH, &found, err);
            if (rc == KBI_OK && found.n == 0) {
                kbi_errf(err,
                         "%s: no results*.jsonl file in this folder, expected the --out "
                         "folder of a kbench run",
                         inputs[i]);
                rc = KBI_ERR_INPUT;
            }
            if (rc == KBI_OK) {
                qsort(found.s, found.n, sizeof *found.s, cmp_str);
                for (size_t k = 0; k < found.n; k++)
                    list_add(&files, found.s[k]);
            }
            list_free(&found);
            if (rc != KBI_OK)
                goto done;
        } else {
            list_add(&files, inputs[i]);
        }
    }
    for (size_t i = 0; i < files.n; i++) {
        char rp[PATH_MAX];
        int seen = 0;
        if (!realpath(files.s[i], rp))
            snprintf(rp, sizeof rp, "%s", files.s[i]);
        for (size_t k = 0; k < real.n && !seen; k++)
            seen = strcmp(real.s[k], rp) == 0;
        if (seen)
            continue;
        list_add(&real, rp);
        rc = kbi_results_load(set, files.s[i], err);
        if (rc != KBI_OK)
            goto done;
        load_profile_beside(set, files.s[i]);
    }
    drop_duplicates(set, first_case);
done:
    list_free(&files);
    list_free(&real);
    return rc;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

void kbi_report_default_dir(const char *input, char *out, size_t n)
{
    char buf[PATH_MAX], name[PATH_MAX] = "";
    struct stat st;
    size_t len;
    snprintf(buf, sizeof buf, "%s", input);
    /* Trailing slashes would make the base name empty. */
    len = strlen(buf);
    while (len > 1 && buf[len - 1] == '/')
        buf[--len] = '\0';
    if (stat(buf, &st) == 0 && S_ISDIR(st.st_mode)) {
        char rp[PATH_MAX];
        snprintf(name, sizeof name, "%s", base_name(realpath(buf, rp) ? rp : buf));
    } else if (is_results_name(base_name(buf))) {
        char rp[PATH_MAX], *slash;
        if (!realpath(buf, rp))
            snprintf(rp, sizeof rp, "%s", buf);
        slash = strrchr(rp, '/');
        if (slash) {
            *slash = '\0';
            /* results/shard-3/results.jsonl: the sweep is named by results/. */
            if (strncmp(base_name(rp), "shard-", 6) == 0 && (slash = strrchr(rp, '/')) != NULL)
                *slash = '\0';
            snprintf(name, sizeof name, "%s", base_name(rp));
        }
    } else {
        char *dot;
        snprintf(name, sizeof name, "%s", base_name(buf));
        dot = strrchr(name, '.');
        if (dot && dot != name)
            *dot = '\0';
    }
    if (!name[0] || strcmp(name, ".") == 0 || strcmp(name, "..") == 0 || strcmp(name, "/") == 0)
        snprintf(name, sizeof name, "report");
    snprintf(out, n, "reports/%s", name);
}

/* ------------------------------------------------------------------ */
/* Formatting                                                          */
/* ------------------------------------------------------------------ */

typedef struct time_unit {
    double scale;
    const char *name;
} time_unit;

static time_unit unit_for(double seconds)
{
    double a = fabs(seconds);
    if (a < 1e-6)
        return (time_unit){1e9, "ns"};
    if (a < 1e-3)
        return (time_unit){1e6, "µs"};
    if (a < 1.0)
        return (time_unit){1e3, "ms"};
    return (time_unit){1.0, "s"};
}

/* Four significant digits without an exponent for the usual magnitudes. */
static void fmt_sig4(double v, char *out, size_t n)
{
    double a = fabs(v);
    if (a >= 1000)
        snprintf(out, n, "%.0f", v);
    else if (a >= 100)
        snprintf(out, n, "%.1f", v);
    else if (a >= 10)
        snprintf(out, n, "%.2f", v);
    else if (a >= 0.01 || a == 0)
        snprintf(out, n, "%.3f", v);
    else
        snprintf(out, n, "%.3g", v);
}

void kbi_format_duration(double seconds, char *out, size_t n)
{
    time_unit u = unit_for(seconds);
    char num[64];
    if (!isfinite(seconds)) {
        snprintf(out, n, "—");
        return;
    }
    fmt_sig4(seconds * u.scale, num, sizeof num);
    snprintf(out, n, "%s %s", num, u.name);
}

/* Items per second with an SI prefix: "1.234 G". */
static void fmt_si(double v, char *out, size_t n)
{
    static const char *const prefix[] = {"", "k", "M", "G", "T", "P", "E"};
    int p = 0;
    char num[64];
    while (fabs(v) >= 1000 && p < 6) {
        v /= 1000;
        p++;
    }
    fmt_sig4(v, num, sizeof num);
    snprintf(out, n, "%s%s%s", num, p ? " " : "", prefix[p]);
}

/* A number as a parameter value: integers without a decimal point. */
static void fmt_number(double v, char *out, size_t n)
{
    if (fabs(v) < 1e15 && v == floor(v))
        snprintf(out, n, "%.0f", v);
    else
        snprintf(out, n, "%.10g", v);
}

/* A tic label for an axis value: 16777216 -> "16Mi", 1000 -> "1000". */
static void fmt_axis(double v, char *out, size_t n)
{
    static const char *const bin[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi"};
    int p = 0;
    if (v == floor(v) && v >= 1024) {
        double w = v;
        while (w >= 1024 && fmod(w, 1024) == 0 && p < 5) {
            w /= 1024;
            p++;
        }
        if (p > 0) {
            snprintf(out, n, "%.0f%s", w, bin[p]);
            return;
        }
    }
    if (v == floor(v) && fabs(v) < 1e7)
        snprintf(out, n, "%.0f", v);
    else
        snprintf(out, n, "%.3g", v);
}

/* Writes s into a Markdown table cell: pipes escaped, line breaks flattened. */
static void md_cell(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '|')
            fputs("\\|", f);
        else if (*s == '\n' || *s == '\r')
            fputc(' ', f);
        else if (*s == '<')
            fputs("&lt;", f);
        else
            fputc(*s, f);
    }
}

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

/* The text of one parameter value as it appears in a case id.  An array
 * (dims or an integer list, results version 2) is taken from the case's
 * params_text, which spells it as the profile did ("2x3x4", "[0,2,1]");
 * without one it is written as dims. */
static void param_text_of(const kbi_case_result *c, const char *key, char *out, size_t n);

static void param_text(json_t *v, char *out, size_t n)
{
    if (json_is_array(v)) {
        size_t len = 0;
        out[0] = '\0';
        for (size_t i = 0; i < json_array_size(v) && len < n; i++) {
            int k = snprintf(out + len, n - len, "%s%lld", i ? "x" : "",
                             (long long)json_integer_value(json_array_get(v, i)));
            len += k > 0 ? (size_t)k : 0;
        }
    } else if (json_is_string(v))
        snprintf(out, n, "%s", json_string_value(v));
    else if (json_is_number(v))
        fmt_number(json_number_value(v), out, n);
    else if (json_is_true(v) || json_is_false(v))
        snprintf(out, n, "%s", json_is_true(v) ? "true" : "false");
    else
        snprintf(out, n, "%s", "");
}

static void param_text_of(const kbi_case_result *c, const char *key, char *out, size_t n)
{
    json_t *v = json_object_get(c->params, key);
    size_t klen = strlen(key);
    if (json_is_array(v)) {
        /* "name=value" at the top level of params_text: commas inside
         * brackets belong to an integer list. */
        const char *t = c->params_text;
        int depth = 0, at_start = 1;
        for (; *t; t++) {
            if (at_start && strncmp(t, key, klen) == 0 && t[klen] == '=') {
                const char *e = t + klen + 1, *v0 = e;
                int d = 0;
                for (; *e && !(d == 0 && *e == ','); e++)
                    d += *e == '[' ? 1 : *e == ']' ? -1 : 0;
                snprintf(out, n, "%.*s", (int)(e - v0), v0);
                return;
            }
            depth += *t == '[' ? 1 : *t == ']' ? -1 : 0;
            at_start = depth == 0 && *t == ',';
        }
    }
    param_text(v, out, n);
}

/* "value ± uncertainty" of a metric, the uncertainty when known and not 0. */
static void fmt_metric(const kbi_metric *m, char *out, size_t n)
{
    if (isnan(m->value))
        snprintf(out, n, "no value");
    else if (isfinite(m->uncertainty) && m->uncertainty > 0)
        snprintf(out, n, "%.6g ± %.2g", m->value, m->uncertainty);
    else
        snprintf(out, n, "%.6g", m->value);
}

/* The metric of case c named name, or NULL. */
static const kbi_metric *find_metric(const kbi_case_result *c, const char *name)
{
    for (size_t k = 0; k < c->n_metrics; k++)
        if (strcmp(c->metrics[k].name, name) == 0)
            return &c->metrics[k];
    return NULL;
}

/* File-name-safe form of s: letters, digits, '.', '-', '_' only. */
static void sanitize(const char *s, char *out, size_t n)
{
    size_t o = 0;
    int last_us = 0;
    for (; *s && o + 1 < n && o < 80; s++) {
        char c = *s;
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '.' || c == '-';
        if (ok) {
            out[o++] = c;
            last_us = 0;
        } else if (!last_us && o > 0) {
            out[o++] = '_';
            last_us = 1;
        }
    }
    while (o > 0 && out[o - 1] == '_')
        o--;
    out[o] = '\0';
}

/* ------------------------------------------------------------------ */
/* Environment records                                                 */
/* ------------------------------------------------------------------ */

static json_t *jpath(json_t *obj, const char *a, const char *b)
{
    json_t *v = json_object_get(obj, a);
    return b ? json_object_get(v, b) : v;
}

static const char *jstr(json_t *obj, const char *a, const char *b)
{
    const char *s = json_string_value(jpath(obj, a, b));
    return s ? s : "";
}

static double jnum(json_t *obj, const char *a, const char *b, int *present)
{
    json_t *v = jpath(obj, a, b);
    if (present)
        *present = json_is_number(v);
    return json_is_number(v) ? json_number_value(v) : 0.0;
}

/* 13000 -> "13.0", 12040 -> "12.4". */
static void fmt_cuda_version(double v, char *out, size_t n)
{
    long x = (long)v;
    if (x <= 0)
        snprintf(out, n, "?");
    else
        snprintf(out, n, "%ld.%ld", x / 1000, (x % 1000) / 10);
}

static size_t env_index(const kbi_result_set *set, const kbi_env_record *e)
{
    return e ? (size_t)(e - set->envs) : NO_CASE;
}

/* Shards "k/N" of one sweep: the same N > 1 and different k, on GPUs of the
 * same name, from the same profile and revision. */
static int same_sweep(const kbi_env_record *a, const kbi_env_record *b)
{
    int ka = 0, na = 0, kb = 0, nb = 0;
    if (sscanf(jstr(a->json, "shard", NULL), "%d/%d", &ka, &na) != 2 ||
        sscanf(jstr(b->json, "shard", NULL), "%d/%d", &kb, &nb) != 2)
        return 0;
    return na > 1 && na == nb && ka != kb && strcmp(a->device_name, b->device_name) == 0 &&
           strcmp(a->git_revision, b->git_revision) == 0 &&
           strcmp(jstr(a->json, "profile", NULL), jstr(b->json, "profile", NULL)) == 0;
}

/* The sweep run `env` belongs to, named by its first run in file order
 * (env itself when it is not a shard); NO_CASE stays NO_CASE. */
static size_t sweep_of(const kbi_result_set *set, size_t env)
{
    if (env == NO_CASE)
        return NO_CASE;
    for (size_t j = 0; j < env; j++)
        if (same_sweep(&set->envs[j], &set->envs[env]))
            return sweep_of(set, j);
    return env;
}

/* Short names of runs: the GPU's name when every run has a different one,
 * else "R1", "R2", ... */
typedef struct run_names {
    char **name; /* [n_envs] */
    size_t n;
} run_names;

static void run_names_init(run_names *r, const kbi_result_set *set)
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

static void run_names_free(run_names *r)
{
    for (size_t i = 0; i < r->n; i++)
        free(r->name[i]);
    free(r->name);
}

/* ------------------------------------------------------------------ */
/* The model                                                           */
/* ------------------------------------------------------------------ */

enum rate_kind { RATE_NONE, RATE_FLOPS, RATE_BYTES, RATE_ITEMS };

typedef struct rep_row { /* a line of a table: one variant, in one run */
    char *variant;
    size_t env;      /* sweep (sweep_of) of its cases; NO_CASE when runs are not told apart */
    char *run_label; /* "R2", "R2+R3" for shards of one sweep, or the GPU's name */
    char *name;      /* as shown: "cublas" or "cublas [R2]" */
} rep_row;

typedef struct rep_chart {
    char *stem, *title;
    int drawn;
} rep_chart;

typedef struct rep_point {
    const char *params_text;
    char *label;   /* the varying parameters only, for charts */
    size_t *cell;  /* [row] -> case index or NO_CASE */
    size_t first;  /* a case of this point */
    rep_chart bar; /* chart (a), stem NULL if none */
} rep_point;

typedef struct rep_plugin {
    const char *name;
    const char *baseline; /* the profile's baseline variant, "" if none */
    rep_row *rows;
    size_t n_rows;
    rep_point *points;
    size_t n_points;
    size_t *cases; /* every case of the plugin, file order */
    size_t n_cases;
    int multi_run; /* the same variant and point came from several runs */
    int kind;      /* rate charted and used for the axis */
    char **keys;   /* parameter names in order of first appearance */
    size_t n_keys;
    int *varies;       /* [key]: takes more than one value */
    rep_chart *charts; /* (b) lines, (c) speedup, (d) roofline */
    size_t n_charts;
    str_list notes; /* why a chart was not made */
} rep_plugin;

typedef struct rep_model {
    const kbi_result_set *set;
    rep_plugin *plugins;
    size_t n_plugins;
    run_names runs;
    str_list stems; /* every chart stem used, to keep them unique */
} rep_model;

static int case_ok(const kbi_case_result *c)
{
    return c->status == KBI_ST_OK && c->stats.median > 0;
}

static rep_plugin *find_plugin(rep_model *m, const char *name)
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

static size_t find_row(rep_plugin *p, const char *variant, size_t env)
{
    for (size_t i = 0; i < p->n_rows; i++)
        if (strcmp(p->rows[i].variant, variant) == 0 && p->rows[i].env == env)
            return i;
    return NO_CASE;
}

static size_t find_point(rep_plugin *p, const char *params_text)
{
    for (size_t i = 0; i < p->n_points; i++)
        if (strcmp(p->points[i].params_text, params_text) == 0)
            return i;
    return NO_CASE;
}

static void add_key(rep_plugin *p, const char *key)
{
    for (size_t i = 0; i < p->n_keys; i++)
        if (strcmp(p->keys[i], key) == 0)
            return;
    p->keys = kbi_xrealloc(p->keys, (p->n_keys + 1) * sizeof *p->keys);
    p->keys[p->n_keys++] = kbi_strdup(key);
}

/* Whether the same variant and point appear in more than one run. */
static int detect_multi_run(const kbi_result_set *set, const rep_plugin *p)
{
    for (size_t a = 0; a < p->n_cases; a++)
        for (size_t b = a + 1; b < p->n_cases; b++) {
            const kbi_case_result *x = &set->cases[p->cases[a]], *y = &set->cases[p->cases[b]];
            if (sweep_of(set, env_index(set, x->env)) != sweep_of(set, env_index(set, y->env)) &&
                strcmp(x->variant, y->variant) == 0 && strcmp(x->params_text, y->params_text) == 0)
                return 1;
        }
    return 0;
}

static void add_row(rep_model *m, rep_plugin *p, const char *variant, size_t env)
{
    rep_row *row;
    p->rows = kbi_xrealloc(p->rows, (p->n_rows + 1) * sizeof *p->rows);
    row = &p->rows[p->n_rows++];
    row->variant = kbi_strdup(variant);
    row->env = env;
    row->run_label = NULL;
    if (p->multi_run) {
        kbi_buf label = {0}, b = {0};
        for (size_t e = 0; env != NO_CASE && e < m->set->n_envs; e++)
            if (sweep_of(m->set, e) == env)
                kbi_buf_printf(&label, "%s%s", label.len ? "+" : "", m->runs.name[e]);
        row->run_label = label.data ? label.data : kbi_strdup("?");
        kbi_buf_printf(&b, "%s [%s]", variant, row->run_label);
        row->name = b.data;
    } else {
        row->name = kbi_strdup(variant);
    }
}

/* Whether the plugin has a case of variant in run env. */
static int has_case(const kbi_result_set *set, const rep_plugin *p, const char *variant, size_t env)
{
    for (size_t k = 0; k < p->n_cases; k++) {
        const kbi_case_result *c = &set->cases[p->cases[k]];
        if (strcmp(c->variant, variant) == 0 && sweep_of(set, env_index(set, c->env)) == env)
            return 1;
    }
    return 0;
}

static void build_plugin(rep_model *m, rep_plugin *p)
{
    const kbi_result_set *set = m->set;
    int any_flops = 0, any_bytes = 0, any_items = 0;
    str_list variants = {0};
    p->multi_run = detect_multi_run(set, p);
    /* Rows first, so that one variant's runs sit together: variants in the
     * order they first appear, each in its runs in file order. */
    for (size_t k = 0; k < p->n_cases; k++) {
        const char *v = set->cases[p->cases[k]].variant;
        int seen = 0;
        for (size_t i = 0; i < variants.n && !seen; i++)
            seen = strcmp(variants.s[i], v) == 0;
        if (!seen)
            list_add(&variants, v);
    }
    for (size_t i = 0; i < variants.n; i++) {
        if (!p->multi_run) {
            add_row(m, p, variants.s[i], NO_CASE);
            continue;
        }
        for (size_t e = 0; e < set->n_envs; e++)
            if (sweep_of(set, e) == e && has_case(set, p, variants.s[i], e))
                add_row(m, p, variants.s[i], e);
        if (has_case(set, p, variants.s[i], NO_CASE))
            add_row(m, p, variants.s[i], NO_CASE);
    }
    list_free(&variants);
    for (size_t k = 0; k < p->n_cases; k++) {
        const kbi_case_result *c = &set->cases[p->cases[k]];
        size_t env = p->multi_run ? sweep_of(set, env_index(set, c->env)) : NO_CASE;
        size_t r = find_row(p, c->variant, env), pt;
        const char *key;
        json_t *val;
        pt = find_point(p, c->params_text);
        if (pt == NO_CASE) {
            rep_point *q;
            p->points = kbi_xrealloc(p->points, (p->n_points + 1) * sizeof *p->points);
            q = &p->points[p->n_points];
            memset(q, 0, sizeof *q);
            q->params_text = c->params_text;
            q->first = p->cases[k];
            q->cell = kbi_xmalloc(p->n_rows * sizeof *q->cell);
            for (size_t i = 0; i < p->n_rows; i++)
                q->cell[i] = NO_CASE;
            pt = p->n_points++;
        }
        p->points[pt].cell[r] = p->cases[k];
        if (!p->baseline[0] && c->baseline[0])
            p->baseline = c->baseline;
        json_object_foreach(c->params, key, val)
        {
            (void)val;
            add_key(p, key);
        }
        if (case_ok(c)) {
            any_flops |= c->flops > 0;
            any_bytes |= c->bytes > 0;
            any_items |= c->items > 0;
        }
    }
    /* Chart the rate that the most cases have (stream: bytes, as copy has
     * no flops); on a tie flops, then bytes, then items. */
    p->kind = RATE_NONE;
    if (any_flops || any_bytes || any_items) {
        size_t best = 0;
        for (int kind = RATE_FLOPS; kind <= RATE_ITEMS; kind++) {
            size_t n = 0;
            for (size_t k = 0; k < p->n_cases; k++) {
                const kbi_case_result *c = &set->cases[p->cases[k]];
                double count = kind == RATE_FLOPS   ? c->flops
                               : kind == RATE_BYTES ? c->bytes
                                                    : c->items;
                n += case_ok(c) && count > 0;
            }
            if (n > best) {
                best = n;
                p->kind = kind;
            }
        }
    }
    /* Which parameters vary across the points. */
    p->varies = kbi_xcalloc(p->n_keys ? p->n_keys : 1, sizeof *p->varies);
    for (size_t k = 0; k < p->n_keys; k++) {
        char first[256], t[256];
        param_text_of(&set->cases[p->points[0].first], p->keys[k], first, sizeof first);
        for (size_t i = 1; i < p->n_points && !p->varies[k]; i++) {
            param_text_of(&set->cases[p->points[i].first], p->keys[k], t, sizeof t);
            p->varies[k] = strcmp(first, t) != 0;
        }
    }
    for (size_t i = 0; i < p->n_points; i++) {
        kbi_buf b = {0};
        for (size_t k = 0; k < p->n_keys; k++) {
            char t[256];
            if (!p->varies[k])
                continue;
            param_text_of(&set->cases[p->points[i].first], p->keys[k], t, sizeof t);
            kbi_buf_printf(&b, "%s%s=%s", b.len ? ", " : "", p->keys[k], t);
        }
        p->points[i].label = b.len ? b.data : kbi_strdup(p->points[i].params_text);
        if (!b.len)
            kbi_buf_free(&b);
    }
}

static void model_build(rep_model *m, const kbi_result_set *set)
{
    memset(m, 0, sizeof *m);
    m->set = set;
    run_names_init(&m->runs, set);
    for (size_t i = 0; i < set->n_cases; i++) {
        rep_plugin *p = find_plugin(m, set->cases[i].plugin);
        p->cases = kbi_xrealloc(p->cases, (p->n_cases + 1) * sizeof *p->cases);
        p->cases[p->n_cases++] = i;
    }
    for (size_t i = 0; i < m->n_plugins; i++)
        build_plugin(m, &m->plugins[i]);
}

static void chart_free(rep_chart *c)
{
    free(c->stem);
    free(c->title);
}

static void model_free(rep_model *m)
{
    for (size_t i = 0; i < m->n_plugins; i++) {
        rep_plugin *p = &m->plugins[i];
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
        free(p->rows);
        free(p->points);
        free(p->cases);
        free(p->keys);
        free(p->varies);
        free(p->charts);
        list_free(&p->notes);
    }
    free(m->plugins);
    run_names_free(&m->runs);
    list_free(&m->stems);
    memset(m, 0, sizeof *m);
}

/* ------------------------------------------------------------------ */
/* Figures of one case                                                 */
/* ------------------------------------------------------------------ */

int kbi_report_speedup(const kbi_result_set *set, size_t i, double *speedup)
{
    const kbi_case_result *c = &set->cases[i], *best = NULL;
    if (!case_ok(c) || !c->baseline[0])
        return 0;
    for (size_t k = 0; k < set->n_cases; k++) {
        const kbi_case_result *b = &set->cases[k];
        if (!case_ok(b) || strcmp(b->variant, c->baseline) != 0 ||
            strcmp(b->plugin, c->plugin) != 0 || strcmp(b->params_text, c->params_text) != 0)
            continue;
        /* The same run is best, then another shard of the same sweep, then
         * any run on a GPU of the same name. */
        if (strcmp(b->run_id, c->run_id) == 0) {
            best = b;
            break;
        }
        if (b->env && c->env &&
            sweep_of(set, env_index(set, b->env)) == sweep_of(set, env_index(set, c->env))) {
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
 * slowest and the fastest sample. */
static int case_rate(const kbi_case_result *c, int kind, double *v, double *lo, double *hi)
{
    double work, rate;
    if (!case_ok(c))
        return 0;
    switch (kind) {
    case RATE_FLOPS:
        work = c->flops / 1e9;
        rate = c->gflops;
        break;
    case RATE_BYTES:
        work = c->bytes / 1e9;
        rate = c->gbs;
        break;
    case RATE_ITEMS:
        work = c->items;
        rate = c->items_per_s;
        break;
    default:
        return 0;
    }
    if (work <= 0)
        return 0;
    if (rate <= 0)
        rate = work / c->stats.median;
    *v = rate;
    *lo = c->stats.max > 0 ? rate * c->stats.median / c->stats.max : rate;
    *hi = c->stats.min > 0 ? rate * c->stats.median / c->stats.min : rate;
    return 1;
}

/* The item unit of the plugin's cases ("atom-steps"), or "items". */
static const char *item_unit(const kbi_result_set *set, const rep_plugin *p)
{
    for (size_t i = 0; i < p->n_cases; i++)
        if (set->cases[p->cases[i]].item_unit[0])
            return set->cases[p->cases[i]].item_unit;
    return "items";
}

/* ------------------------------------------------------------------ */
/* Charts                                                              */
/* ------------------------------------------------------------------ */

/* A unique stem "<plugin>-<what>[-<detail>]". */
static char *make_stem(rep_model *m, const char *plugin, const char *what, const char *detail)
{
    char a[128], b[128], stem[300];
    sanitize(plugin, a, sizeof a);
    sanitize(detail ? detail : "", b, sizeof b);
    snprintf(stem, sizeof stem, "%s-%s%s%s", a[0] ? a : "plugin", what, b[0] ? "-" : "", b);
    for (int k = 2;; k++) {
        int used = 0;
        for (size_t i = 0; i < m->stems.n && !used; i++)
            used = strcmp(m->stems.s[i], stem) == 0;
        if (!used)
            break;
        snprintf(stem, sizeof stem, "%s-%s%s%s-%d", a[0] ? a : "plugin", what, b[0] ? "-" : "", b,
                 k);
    }
    list_add(&m->stems, stem);
    return kbi_strdup(stem);
}

static const char *kind_label(const kbi_result_set *set, const rep_plugin *p, char *buf, size_t n)
{
    switch (p->kind) {
    case RATE_FLOPS:
        return "GFLOP/s";
    case RATE_BYTES:
        return "GB/s";
    case RATE_ITEMS:
        snprintf(buf, n, "%s/s", item_unit(set, p));
        return buf;
    default:
        return "";
    }
}

/* Records a chart's outcome; a hard error (cannot write) is returned. */
static int chart_result(int rc, rep_chart *ch, char *stem, const char *title, str_list *notes,
                        const char *err)
{
    ch->stem = stem;
    ch->title = kbi_strdup(title);
    ch->drawn = rc == KBI_OK;
    if (rc == KBI_ERR_INPUT) {
        /* Nothing to draw: a note, not a failure of the report. */
        list_add(notes, err);
        return KBI_OK;
    }
    return rc < 0 ? rc : KBI_OK;
}

static void add_chart_slot(rep_plugin *p)
{
    p->charts = kbi_xrealloc(p->charts, (p->n_charts + 1) * sizeof *p->charts);
    memset(&p->charts[p->n_charts], 0, sizeof *p->charts);
}

/* (a) the rate of every variant at each point. */
static int chart_points(rep_model *m, rep_plugin *p, kbi_chart_ctx *ctx, char *err)
{
    const kbi_result_set *set = m->set;
    char ubuf[128];
    const char *unit = kind_label(set, p, ubuf, sizeof ubuf);
    size_t R = p->n_rows;
    if (p->kind == RATE_NONE)
        return KBI_OK;
    if (p->n_points > MAX_POINT_CHARTS) {
        char note[256];
        snprintf(note, sizeof note,
                 "no bar chart per parameter point: %zu points (more than %d); see the line "
                 "chart",
                 p->n_points, MAX_POINT_CHARTS);
        list_add(&p->notes, note);
        return KBI_OK;
    }
    for (size_t k = 0; k < p->n_points; k++) {
        rep_point *q = &p->points[k];
        double *v = kbi_xmalloc(R * sizeof *v), *lo = kbi_xmalloc(R * sizeof *lo),
               *hi = kbi_xmalloc(R * sizeof *hi);
        char **names = kbi_xcalloc(R, sizeof *names);
        int *colors = kbi_xmalloc(R * sizeof *colors);
        size_t n = 0;
        int rc = KBI_OK;
        /* Rows that have a case at this point, in row order. */
        for (size_t r = 0; r < R; r++) {
            size_t ci = q->cell[r];
            const kbi_case_result *c;
            if (ci == NO_CASE)
                continue;
            c = &set->cases[ci];
            if (!case_rate(c, p->kind, &v[n], &lo[n], &hi[n])) {
                kbi_buf b = {0};
                v[n] = lo[n] = hi[n] = NAN;
                kbi_buf_printf(&b, "%s (%s)", p->rows[r].name,
                               c->status == KBI_ST_OK ? "no rate" : kbi_status_name(c->status));
                names[n] = b.data;
            } else {
                names[n] = kbi_strdup(p->rows[r].name);
            }
            colors[n] = (int)r;
            n++;
        }
        if (n > 0) {
            kbi_buf title = {0}, ylabel = {0};
            char *stem = make_stem(m, p->name, "rate", q->label);
            kbi_bar_chart bc = {0};
            /* The run's ceiling for this rate, as a dashed line. */
            const kbi_env_record *env = set->cases[q->first].env;
            double ceiling = !env                    ? 0
                             : p->kind == RATE_BYTES ? env->bandwidth_gbs
                             : p->kind == RATE_FLOPS ? env->peak_gflops
                                                     : 0;
            kbi_buf_printf(&title, "%s, %s: %s per variant", p->name, q->label, unit);
            if (ceiling > 0) {
                kbi_buf_printf(&title, " (dashed: ceiling %.0f %s)", ceiling, unit);
                bc.reference = ceiling;
            }
            kbi_buf_printf(&ylabel, "%s (median; bars: slowest to fastest sample)", unit);
            bc.stem = stem;
            bc.title = title.data;
            bc.ylabel = ylabel.data;
            /* One group holding one bar per variant: chart.c labels the
             * bars with the variant names. */
            bc.n_groups = 1;
            bc.groups = &q->params_text;
            bc.n_series = n;
            bc.series = (const char *const *)names;
            bc.color = colors;
            bc.value = v;
            bc.low = lo;
            bc.high = hi;
            bc.value_labels = 1;
            rc = kbi_chart_bars(ctx, &bc, err);
            rc = chart_result(rc, &q->bar, stem, title.data, &p->notes, err);
            kbi_buf_free(&title);
            kbi_buf_free(&ylabel);
        }
        for (size_t i = 0; i < n; i++)
            free(names[i]);
        free(names);
        free(colors);
        free(v);
        free(lo);
        free(hi);
        if (rc != KBI_OK)
            return rc;
    }
    return KBI_OK;
}

/* The x of a point on the size axis `key`: a number, or from dims
 * "AxBxC": the edge when every point is square, else the product. */
static int axis_value(json_t *v, int square, double *x)
{
    if (json_is_number(v)) {
        *x = json_number_value(v);
        return 1;
    }
    if (json_is_array(v)) { /* dims in a version 2 record */
        double prod = 1;
        size_t n = json_array_size(v);
        for (size_t i = 0; i < n; i++) {
            if (!json_is_integer(json_array_get(v, i)))
                return 0;
            prod *= (double)json_integer_value(json_array_get(v, i));
        }
        if (n == 0)
            return 0;
        *x = square ? (double)json_integer_value(json_array_get(v, 0)) : prod;
        return 1;
    }
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        double prod = 1, first = 0;
        int n = 0;
        while (*s) {
            char *end;
            double d;
            if (*s < '0' || *s > '9')
                return 0;
            d = strtod(s, &end);
            if (end == s)
                return 0;
            if (n == 0)
                first = d;
            prod *= d;
            n++;
            s = end;
            if (*s == 'x')
                s++;
            else if (*s)
                return 0;
        }
        if (n == 0)
            return 0;
        *x = square ? first : prod;
        return 1;
    }
    return 0;
}

/* Whether every value of key is dims with all dims equal ("512x512x512"). */
static int all_square(const kbi_result_set *set, const rep_plugin *p, const char *key)
{
    for (size_t i = 0; i < p->n_points; i++) {
        json_t *v = json_object_get(set->cases[p->points[i].first].params, key);
        const char *s = json_string_value(v);
        const char *x;
        size_t len;
        if (json_is_array(v)) {
            size_t n = json_array_size(v);
            if (n < 2)
                return 0;
            for (size_t d = 1; d < n; d++)
                if (!json_equal(json_array_get(v, d), json_array_get(v, 0)))
                    return 0;
            continue;
        }
        if (!s)
            return 0;
        x = strchr(s, 'x');
        if (!x)
            return 0;
        len = (size_t)(x - s);
        for (const char *q = x; *q; q += len + 1) {
            if (*q != 'x' || strncmp(q + 1, s, len) != 0 ||
                (q[len + 1] != 'x' && q[len + 1] != '\0'))
                return 0;
        }
    }
    return 1;
}

/* Picks the size axis: the first varying parameter whose every value is a
 * number or dims.  Returns its key index or -1. */
static int pick_axis(const kbi_result_set *set, const rep_plugin *p, int *square)
{
    for (size_t k = 0; k < p->n_keys; k++) {
        int ok = p->varies[k];
        *square = all_square(set, p, p->keys[k]);
        for (size_t i = 0; i < p->n_points && ok; i++) {
            double x;
            ok = axis_value(json_object_get(set->cases[p->points[i].first].params, p->keys[k]),
                            *square, &x);
        }
        if (ok)
            return (int)k;
    }
    return -1;
}

/* The other varying parameters of a point, as a slice name. */
static char *slice_of(const kbi_result_set *set, const rep_plugin *p, size_t point, int axis)
{
    kbi_buf b = {0};
    for (size_t k = 0; k < p->n_keys; k++) {
        char t[256];
        if (!p->varies[k] || (int)k == axis)
            continue;
        param_text_of(&set->cases[p->points[point].first], p->keys[k], t, sizeof t);
        kbi_buf_printf(&b, "%s%s=%s", b.len ? ", " : "", p->keys[k], t);
    }
    return b.data ? b.data : kbi_strdup("");
}

typedef struct xy {
    double x, y, lo, hi;
} xy;

static int cmp_xy(const void *a, const void *b)
{
    double d = ((const xy *)a)->x - ((const xy *)b)->x;
    return (d > 0) - (d < 0);
}

/* (b) the rate against the size axis, one line per variant (per slice of
 * the other varying parameters). */
static int chart_lines(rep_model *m, rep_plugin *p, kbi_chart_ctx *ctx, char *err)
{
    const kbi_result_set *set = m->set;
    int square = 0, axis, rc = KBI_OK;
    str_list slices = {0};
    char ubuf[128];
    const char *unit = kind_label(set, p, ubuf, sizeof ubuf);
    if (p->kind == RATE_NONE || p->n_points < 2)
        return KBI_OK;
    axis = pick_axis(set, p, &square);
    if (axis < 0) {
        list_add(&p->notes, "no line chart: no parameter with numeric values varies");
        return KBI_OK;
    }
    for (size_t i = 0; i < p->n_points; i++) {
        char *s = slice_of(set, p, i, axis);
        int seen = 0;
        for (size_t k = 0; k < slices.n && !seen; k++)
            seen = strcmp(slices.s[k], s) == 0;
        if (!seen)
            list_add(&slices, s);
        free(s);
    }
    if (slices.n > MAX_SLICES) {
        char note[256];
        snprintf(note, sizeof note,
                 "no line chart: %zu combinations of the other parameters "
                 "(more than %d)",
                 slices.n, MAX_SLICES);
        list_add(&p->notes, note);
        list_free(&slices);
        return KBI_OK;
    }
    for (size_t sl = 0; sl < slices.n && rc == KBI_OK; sl++) {
        size_t R = p->n_rows, n_series = 0, n_tics = 0;
        kbi_line_series *series = kbi_xcalloc(R, sizeof *series);
        xy **pts = kbi_xcalloc(R, sizeof *pts);
        double *tx = kbi_xcalloc(p->n_points, sizeof *tx);
        char **tl = kbi_xcalloc(p->n_points, sizeof *tl);
        double **cols = kbi_xcalloc(R * 4, sizeof *cols);
        char xlabel[300];
        /* The tics: one per distinct x of the slice, labelled as in the id. */
        for (size_t i = 0; i < p->n_points; i++) {
            char *s = slice_of(set, p, i, axis);
            json_t *v = json_object_get(set->cases[p->points[i].first].params, p->keys[axis]);
            double x;
            int dup = 0;
            if (strcmp(s, slices.s[sl]) == 0 && axis_value(v, square, &x)) {
                for (size_t t = 0; t < n_tics && !dup; t++)
                    dup = tx[t] == x;
                if (!dup) {
                    char t[256];
                    if (json_is_string(v) || json_is_array(v))
                        param_text_of(&set->cases[p->points[i].first], p->keys[axis], t, sizeof t);
                    else
                        fmt_axis(x, t, sizeof t);
                    tx[n_tics] = x;
                    tl[n_tics++] = kbi_strdup(t);
                }
            }
            free(s);
        }
        for (size_t r = 0; r < R; r++) {
            size_t n = 0;
            pts[r] = kbi_xcalloc(p->n_points, sizeof *pts[r]);
            for (size_t i = 0; i < p->n_points; i++) {
                size_t ci = p->points[i].cell[r];
                char *s;
                double x;
                xy *e = &pts[r][n];
                if (ci == NO_CASE)
                    continue;
                s = slice_of(set, p, i, axis);
                if (strcmp(s, slices.s[sl]) == 0 &&
                    axis_value(json_object_get(set->cases[ci].params, p->keys[axis]), square, &x) &&
                    case_rate(&set->cases[ci], p->kind, &e->y, &e->lo, &e->hi)) {
                    e->x = x;
                    n++;
                }
                free(s);
            }
            if (n == 0)
                continue;
            qsort(pts[r], n, sizeof *pts[r], cmp_xy);
            for (int c = 0; c < 4; c++)
                cols[r * 4 + c] = kbi_xmalloc(n * sizeof(double));
            for (size_t i = 0; i < n; i++) {
                cols[r * 4 + 0][i] = pts[r][i].x;
                cols[r * 4 + 1][i] = pts[r][i].y;
                cols[r * 4 + 2][i] = pts[r][i].lo;
                cols[r * 4 + 3][i] = pts[r][i].hi;
            }
            series[n_series] = (kbi_line_series){
                .name = p->rows[r].name,
                .color = (int)r,
                .dashed = strcmp(p->rows[r].variant, p->baseline) == 0,
                .n = n,
                .x = cols[r * 4 + 0],
                .y = cols[r * 4 + 1],
                .low = cols[r * 4 + 2],
                .high = cols[r * 4 + 3],
            };
            n_series++;
        }
        if (square)
            snprintf(xlabel, sizeof xlabel, "%s (edge: every dimension is equal)", p->keys[axis]);
        else if (!json_is_number(
                     json_object_get(set->cases[p->points[0].first].params, p->keys[axis])))
            snprintf(xlabel, sizeof xlabel, "%s (plotted at the product of its dimensions)",
                     p->keys[axis]);
        else
            snprintf(xlabel, sizeof xlabel, "%s", p->keys[axis]);
        if (n_series > 0 && n_tics >= 2) {
            kbi_buf title = {0}, ylabel = {0};
            char *stem = make_stem(m, p->name, "rate-vs", p->keys[axis]);
            kbi_line_chart lc = {0};
            if (slices.s[sl][0]) {
                char *old = stem, sub[300];
                snprintf(sub, sizeof sub, "%s-%s", p->keys[axis], slices.s[sl]);
                stem = make_stem(m, p->name, "rate-vs", sub);
                free(old);
            }
            kbi_buf_printf(&title, "%s: %s against %s%s%s", p->name, unit, p->keys[axis],
                           slices.s[sl][0] ? ", " : "", slices.s[sl]);
            kbi_buf_printf(&ylabel, "%s (median; bars: slowest to fastest sample)", unit);
            lc.stem = stem;
            lc.title = title.data;
            lc.xlabel = xlabel;
            lc.ylabel = ylabel.data;
            lc.n_series = n_series;
            lc.series = series;
            if (n_tics <= 12) {
                lc.n_xtics = n_tics;
                lc.xtic_values = tx;
                lc.xtic_labels = (const char *const *)tl;
            }
            add_chart_slot(p);
            rc = kbi_chart_lines(ctx, &lc, err);
            rc = chart_result(rc, &p->charts[p->n_charts++], stem, title.data, &p->notes, err);
            kbi_buf_free(&title);
            kbi_buf_free(&ylabel);
        }
        for (size_t r = 0; r < R; r++) {
            free(pts[r]);
            for (int c = 0; c < 4; c++)
                free(cols[r * 4 + c]);
        }
        for (size_t t = 0; t < n_tics; t++)
            free(tl[t]);
        free(cols);
        free(pts);
        free(series);
        free(tx);
        free(tl);
    }
    list_free(&slices);
    return rc;
}

/* (c) the speedup of every variant against the baseline, at every point. */
static int chart_speedup(rep_model *m, rep_plugin *p, kbi_chart_ctx *ctx, char *err)
{
    const kbi_result_set *set = m->set;
    size_t R = p->n_rows, G = p->n_points, n_series = 0, n_groups = 0;
    double *v;
    const char **series, **groups;
    int *colors, rc = KBI_OK, any = 0;
    size_t *row_of;
    if (!p->baseline[0] || R < 2)
        return KBI_OK;
    size_t *point_of;
    series = kbi_xcalloc(R, sizeof *series);
    groups = kbi_xcalloc(G, sizeof *groups);
    colors = kbi_xcalloc(R, sizeof *colors);
    row_of = kbi_xcalloc(R, sizeof *row_of);
    point_of = kbi_xcalloc(G, sizeof *point_of);
    /* Only the variants and points that have a speedup (host variants
     * without a baseline, or a point whose baseline failed, have none). */
    for (size_t r = 0; r < R; r++) {
        int has = 0;
        if (strcmp(p->rows[r].variant, p->baseline) == 0)
            continue;
        for (size_t g = 0; g < G && !has; g++) {
            double sp;
            size_t ci = p->points[g].cell[r];
            has = ci != NO_CASE && kbi_report_speedup(set, ci, &sp);
        }
        if (!has)
            continue;
        row_of[n_series] = r;
        series[n_series] = p->rows[r].name;
        colors[n_series] = (int)r;
        n_series++;
    }
    for (size_t g = 0; g < G; g++) {
        int has = 0;
        for (size_t s = 0; s < n_series && !has; s++) {
            double sp;
            size_t ci = p->points[g].cell[row_of[s]];
            has = ci != NO_CASE && kbi_report_speedup(set, ci, &sp);
        }
        if (has)
            point_of[n_groups++] = g;
    }
    G = n_groups;
    v = kbi_xmalloc((G ? G : 1) * (n_series ? n_series : 1) * sizeof *v);
    for (size_t g = 0; g < G; g++) {
        const rep_point *q = &p->points[point_of[g]];
        groups[g] = q->label;
        for (size_t s = 0; s < n_series; s++) {
            size_t ci = q->cell[row_of[s]];
            double sp;
            v[g * n_series + s] = NAN;
            if (ci != NO_CASE && kbi_report_speedup(set, ci, &sp)) {
                v[g * n_series + s] = sp;
                any = 1;
            }
        }
    }
    if (n_series > 0 && any) {
        kbi_buf title = {0}, ylabel = {0}, ref = {0};
        char *stem = make_stem(m, p->name, "speedup", NULL);
        kbi_bar_chart bc = {0};
        kbi_buf_printf(&title, "%s: speedup against %s", p->name, p->baseline);
        kbi_buf_printf(&ylabel, "speedup: median time of %s / of the variant", p->baseline);
        kbi_buf_printf(&ref, "%s = 1", p->baseline);
        bc.stem = stem;
        bc.title = title.data;
        bc.ylabel = ylabel.data;
        bc.n_groups = G;
        bc.groups = groups;
        bc.n_series = n_series;
        bc.series = series;
        bc.color = colors;
        bc.value = v;
        bc.reference = 1.0;
        bc.reference_label = ref.data;
        bc.value_labels = G * n_series <= 10;
        add_chart_slot(p);
        rc = kbi_chart_bars(ctx, &bc, err);
        rc = chart_result(rc, &p->charts[p->n_charts++], stem, title.data, &p->notes, err);
        kbi_buf_free(&title);
        kbi_buf_free(&ylabel);
        kbi_buf_free(&ref);
    }
    free(v);
    free(series);
    free(groups);
    free(colors);
    free(row_of);
    free(point_of);
    return rc;
}

/* (d) the roofline of the cases that count both flops and bytes, under the
 * ceilings of the run (measured, or from the profile). */
static int chart_roofline(rep_model *m, rep_plugin *p, kbi_chart_ctx *ctx, char *err)
{
    const kbi_result_set *set = m->set;
    size_t R = p->n_rows, n_series = 0;
    kbi_line_series *series;
    double **cols;
    const kbi_env_record *env = NULL;
    int rc = KBI_OK, mixed = 0, any_flops = 0;
    for (size_t k = 0; k < p->n_cases && !any_flops; k++) {
        const kbi_case_result *c = &set->cases[p->cases[k]];
        any_flops = case_ok(c) && c->flops > 0 && c->bytes > 0;
        env = c->env;
    }
    if (!any_flops)
        return KBI_OK;
    if (!env || (env->bandwidth_gbs <= 0 && env->peak_gflops <= 0)) {
        list_add(&p->notes, "no roofline: the run recorded no ceilings (neither measured nor "
                            "set in the profile)");
        return KBI_OK;
    }
    env = NULL;
    series = kbi_xcalloc(R, sizeof *series);
    cols = kbi_xcalloc(R * 2, sizeof *cols);
    for (size_t r = 0; r < R; r++) {
        size_t n = 0;
        cols[r * 2] = kbi_xmalloc(p->n_points * sizeof(double));
        cols[r * 2 + 1] = kbi_xmalloc(p->n_points * sizeof(double));
        for (size_t i = 0; i < p->n_points; i++) {
            size_t ci = p->points[i].cell[r];
            const kbi_case_result *c;
            double g, lo, hi;
            if (ci == NO_CASE)
                continue;
            c = &set->cases[ci];
            if (c->flops <= 0 || c->bytes <= 0 || !case_rate(c, RATE_FLOPS, &g, &lo, &hi))
                continue;
            if (!env)
                env = c->env;
            else if (c->env && (c->env->bandwidth_gbs > 0 || c->env->peak_gflops > 0) &&
                     (c->env->bandwidth_gbs != env->bandwidth_gbs ||
                      c->env->peak_gflops != env->peak_gflops))
                mixed = 1;
            cols[r * 2][n] = c->flops / c->bytes;
            cols[r * 2 + 1][n] = g;
            n++;
        }
        if (n == 0)
            continue;
        series[n_series++] = (kbi_line_series){.name = p->rows[r].name,
                                               .color = (int)r,
                                               .n = n,
                                               .x = cols[r * 2],
                                               .y = cols[r * 2 + 1]};
    }
    if (n_series > 0) {
        kbi_buf title = {0};
        char *stem = make_stem(m, p->name, "roofline", NULL);
        kbi_roofline rl = {0};
        const char *src = env ? jstr(env->json, "ceilings", "source") : "";
        kbi_buf_printf(&title, "%s: roofline%s%s", p->name,
                       env && env->device_name[0] ? " on " : "", env ? env->device_name : "");
        rl.stem = stem;
        rl.title = title.data;
        rl.bandwidth_gbs = env ? env->bandwidth_gbs : 0;
        rl.peak_gflops = env ? env->peak_gflops : 0;
        rl.ceiling_source = src;
        rl.n_series = n_series;
        rl.series = series;
        if (mixed)
            list_add(&p->notes, "the roofline draws the ceilings of the first run; the runs "
                                "merged here measured different ceilings");
        add_chart_slot(p);
        rc = kbi_chart_roofline(ctx, &rl, err);
        rc = chart_result(rc, &p->charts[p->n_charts++], stem, title.data, &p->notes, err);
        kbi_buf_free(&title);
    }
    for (size_t r = 0; r < R * 2; r++)
        free(cols[r]);
    free(cols);
    free(series);
    return rc;
}

/* Whether key k varies and has a numeric value (a number or dims) at
 * every point of p. */
static int numeric_axis(const kbi_result_set *set, const rep_plugin *p, size_t k, int *square)
{
    int ok = p->varies[k];
    *square = all_square(set, p, p->keys[k]);
    for (size_t i = 0; i < p->n_points && ok; i++) {
        double x;
        ok = axis_value(json_object_get(set->cases[p->points[i].first].params, p->keys[k]), *square,
                        &x);
    }
    return ok;
}

/* Picks the axes of the metric charts: x, and the parameter drawn as one
 * line per value (-1: none).  With a size parameter (the record's
 * size_param) and another numeric axis varying, x is the other one and the
 * lines are sizes (a moment ratio against T, one line per L); else x is
 * the size parameter, or the first numeric axis, and the lines are the next
 * numeric axis.  Returns 0 when no numeric parameter varies. */
static int metric_axes(const kbi_result_set *set, const rep_plugin *p, int *x, int *line,
                       int *square)
{
    int size = -1, first = -1, second = -1, sq;
    const char *size_param = "";
    for (size_t k = 0; k < p->n_cases && !size_param[0]; k++)
        size_param = set->cases[p->cases[k]].size_param;
    for (size_t k = 0; k < p->n_keys; k++) {
        if (!numeric_axis(set, p, k, &sq))
            continue;
        if (strcmp(p->keys[k], size_param) == 0)
            size = (int)k;
        else if (first < 0)
            first = (int)k;
        else if (second < 0)
            second = (int)k;
    }
    if (size >= 0 && first >= 0) {
        *x = first;
        *line = size;
    } else if (size >= 0) {
        *x = size;
        *line = -1;
    } else if (first >= 0) {
        *x = first;
        *line = second;
    } else {
        return 0;
    }
    numeric_axis(set, p, (size_t)*x, square);
    return 1;
}

/* The varying parameters of a point other than x and line, as a slice name. */
static char *metric_slice(const kbi_result_set *set, const rep_plugin *p, size_t point, int x,
                          int line)
{
    kbi_buf b = {0};
    for (size_t k = 0; k < p->n_keys; k++) {
        char t[256];
        if (!p->varies[k] || (int)k == x || (int)k == line)
            continue;
        param_text_of(&set->cases[p->points[point].first], p->keys[k], t, sizeof t);
        kbi_buf_printf(&b, "%s%s=%s", b.len ? ", " : "", p->keys[k], t);
    }
    return b.data ? b.data : kbi_strdup("");
}

typedef struct metric_line { /* one line of a metric chart: a variant at one value of `line` */
    size_t row;
    char *label; /* the line parameter's value, "" without one */
    double at;   /* its numeric value, for ordering */
    size_t n;
    double *x, *y, *lo, *hi;
} metric_line;

static int cmp_metric_line(const void *a, const void *b)
{
    const metric_line *p = a, *q = b;
    if (p->row != q->row)
        return p->row < q->row ? -1 : 1;
    return (p->at > q->at) - (p->at < q->at);
}

/* One chart of metric `name` for the points of one slice. */
static int chart_one_metric(rep_model *m, rep_plugin *p, kbi_chart_ctx *ctx, const char *name,
                            int x, int line, int square, const char *slice, char *err)
{
    const kbi_result_set *set = m->set;
    metric_line *lines = NULL;
    size_t n_lines = 0, n_points = 0;
    const kbi_metric *decl = NULL;
    kbi_line_series *series;
    int rc = KBI_OK;
    for (size_t i = 0; i < p->n_points; i++) {
        char *sl = metric_slice(set, p, i, x, line);
        int in = strcmp(sl, slice) == 0;
        free(sl);
        if (!in)
            continue;
        for (size_t r = 0; r < p->n_rows; r++) {
            size_t ci = p->points[i].cell[r];
            const kbi_case_result *c;
            const kbi_metric *mt;
            char label[256] = "";
            double xv, at = 0;
            metric_line *l = NULL;
            if (ci == NO_CASE)
                continue;
            c = &set->cases[ci];
            mt = find_metric(c, name);
            /* Every case that reported a value, including one that failed
             * its bound: the chart shows where it went. */
            if (!mt || !isfinite(mt->value) ||
                !axis_value(json_object_get(c->params, p->keys[x]), square, &xv))
                continue;
            if (!decl || (!decl->declared && mt->declared))
                decl = mt;
            if (line >= 0) {
                json_t *lv = json_object_get(c->params, p->keys[line]);
                param_text_of(c, p->keys[line], label, sizeof label);
                axis_value(lv, 0, &at);
            }
            for (size_t k = 0; k < n_lines && !l; k++)
                if (lines[k].row == r && strcmp(lines[k].label, label) == 0)
                    l = &lines[k];
            if (!l) {
                lines = kbi_xrealloc(lines, (n_lines + 1) * sizeof *lines);
                l = &lines[n_lines++];
                memset(l, 0, sizeof *l);
                l->row = r;
                l->label = kbi_strdup(label);
                l->at = at;
                l->x = kbi_xcalloc(p->n_points, sizeof *l->x);
                l->y = kbi_xcalloc(p->n_points, sizeof *l->y);
                l->lo = kbi_xcalloc(p->n_points, sizeof *l->lo);
                l->hi = kbi_xcalloc(p->n_points, sizeof *l->hi);
            }
            {
                double u = isfinite(mt->uncertainty) ? mt->uncertainty : 0;
                l->x[l->n] = xv;
                l->y[l->n] = mt->value;
                l->lo[l->n] = mt->value - u;
                l->hi[l->n] = mt->value + u;
                l->n++;
                n_points++;
            }
        }
    }
    if (n_lines == 0 || n_points < 2)
        goto done;
    qsort(lines, n_lines, sizeof *lines, cmp_metric_line);
    series = kbi_xcalloc(n_lines, sizeof *series);
    for (size_t k = 0; k < n_lines; k++) {
        metric_line *l = &lines[k];
        kbi_buf nm = {0};
        /* Sort each line's points by x (insertion: a handful of points). */
        for (size_t i = 1; i < l->n; i++)
            for (size_t j = i; j > 0 && l->x[j - 1] > l->x[j]; j--) {
                double *cols[] = {l->x, l->y, l->lo, l->hi};
                for (int c = 0; c < 4; c++) {
                    double t = cols[c][j];
                    cols[c][j] = cols[c][j - 1];
                    cols[c][j - 1] = t;
                }
            }
        if (p->n_rows > 1 || line < 0)
            kbi_buf_printf(&nm, "%s", p->rows[l->row].name);
        if (line >= 0)
            kbi_buf_printf(&nm, "%s%s=%s", nm.len ? ", " : "", p->keys[line], l->label);
        series[k] = (kbi_line_series){
            .name = nm.data,
            .color = (int)k,
            .n = l->n,
            .x = l->x,
            .y = l->y,
            .low = l->lo,
            .high = l->hi,
        };
    }
    {
        kbi_buf title = {0}, ylabel = {0}, detail = {0};
        kbi_line_chart lc = {0};
        char *stem;
        char xlabel[300], bound_label[64];
        kbi_buf_printf(&detail, "%s-vs-%s%s%s", name, p->keys[x], slice[0] ? "-" : "", slice);
        stem = make_stem(m, p->name, "metric", detail.data);
        kbi_buf_printf(&title, "%s: %s against %s", p->name, name, p->keys[x]);
        if (line >= 0)
            kbi_buf_printf(&title, ", one line per %s", p->keys[line]);
        if (slice[0])
            kbi_buf_printf(&title, " (%s)", slice);
        kbi_buf_printf(&ylabel, "%s", name);
        if (decl->unit[0] && strcmp(decl->unit, "1") != 0)
            kbi_buf_printf(&ylabel, " (%s)", decl->unit);
        kbi_buf_printf(&ylabel, "; bars: ± 1 standard uncertainty");
        if (square)
            snprintf(xlabel, sizeof xlabel, "%s (edge: every dimension is equal)", p->keys[x]);
        else
            snprintf(xlabel, sizeof xlabel, "%s", p->keys[x]);
        lc.stem = stem;
        lc.title = title.data;
        lc.xlabel = xlabel;
        lc.ylabel = ylabel.data;
        lc.n_series = n_lines;
        lc.series = series;
        lc.fit_y = 1;
        if ((decl->bounds & KB_BOUND_HIGH) && decl->high > 0) {
            snprintf(bound_label, sizeof bound_label, "bound: ≤ %.4g", decl->high);
            lc.reference = decl->high;
            lc.reference_label = bound_label;
        }
        add_chart_slot(p);
        rc = kbi_chart_lines(ctx, &lc, err);
        rc = chart_result(rc, &p->charts[p->n_charts++], stem, title.data, &p->notes, err);
        kbi_buf_free(&title);
        kbi_buf_free(&ylabel);
        kbi_buf_free(&detail);
    }
    for (size_t k = 0; k < n_lines; k++)
        free((char *)series[k].name);
    free(series);
done:
    for (size_t k = 0; k < n_lines; k++) {
        free(lines[k].label);
        free(lines[k].x);
        free(lines[k].y);
        free(lines[k].lo);
        free(lines[k].hi);
    }
    free(lines);
    return rc;
}

/* (e) each declared metric against a numeric parameter (metric_axes), one
 * line per value of another, error bars from the uncertainty; one chart per
 * combination of the other varying parameters. */
static int chart_metrics(rep_model *m, rep_plugin *p, kbi_chart_ctx *ctx, char *err)
{
    const kbi_result_set *set = m->set;
    str_list names = {0}, slices = {0};
    int x, line, square, rc = KBI_OK;
    for (size_t k = 0; k < p->n_cases; k++) {
        const kbi_case_result *c = &set->cases[p->cases[k]];
        for (size_t j = 0; j < c->n_metrics; j++) {
            int seen = 0;
            if (!c->metrics[j].declared)
                continue;
            for (size_t i = 0; i < names.n && !seen; i++)
                seen = strcmp(names.s[i], c->metrics[j].name) == 0;
            if (!seen)
                list_add(&names, c->metrics[j].name);
        }
    }
    if (!names.n || p->n_points < 2)
        goto done;
    if (!metric_axes(set, p, &x, &line, &square)) {
        list_add(&p->notes, "no metric chart: no parameter with numeric values varies");
        goto done;
    }
    for (size_t i = 0; i < p->n_points; i++) {
        char *sl = metric_slice(set, p, i, x, line);
        int seen = 0;
        for (size_t k = 0; k < slices.n && !seen; k++)
            seen = strcmp(slices.s[k], sl) == 0;
        if (!seen)
            list_add(&slices, sl);
        free(sl);
    }
    if (slices.n > MAX_SLICES) {
        char note[256];
        snprintf(note, sizeof note,
                 "no metric chart: %zu combinations of the other parameters (more than %d)",
                 slices.n, MAX_SLICES);
        list_add(&p->notes, note);
        goto done;
    }
    for (size_t i = 0; i < names.n && rc == KBI_OK; i++)
        for (size_t sl = 0; sl < slices.n && rc == KBI_OK; sl++)
            rc = chart_one_metric(m, p, ctx, names.s[i], x, line, square, slices.s[sl], err);
done:
    list_free(&names);
    list_free(&slices);
    return rc;
}

static int draw_charts(rep_model *m, kbi_chart_ctx *ctx, char *err)
{
    for (size_t i = 0; i < m->n_plugins; i++) {
        rep_plugin *p = &m->plugins[i];
        int rc = chart_lines(m, p, ctx, err);
        if (rc == KBI_OK)
            rc = chart_speedup(m, p, ctx, err);
        if (rc == KBI_OK)
            rc = chart_roofline(m, p, ctx, err);
        if (rc == KBI_OK)
            rc = chart_points(m, p, ctx, err);
        if (rc == KBI_OK)
            rc = chart_metrics(m, p, ctx, err);
        if (rc != KBI_OK)
            return rc;
    }
    return KBI_OK;
}

/* ------------------------------------------------------------------ */
/* CSV                                                                 */
/* ------------------------------------------------------------------ */

int kbi_report_write_csv(const kbi_result_set *set, FILE *f)
{
    str_list params = {0}, metrics = {0};
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
                list_add(&params, key);
        }
        for (size_t k = 0; k < set->cases[i].n_metrics; k++) {
            int seen = 0;
            for (size_t j = 0; j < metrics.n && !seen; j++)
                seen = strcmp(metrics.s[j], set->cases[i].metrics[k].name) == 0;
            if (!seen)
                list_add(&metrics, set->cases[i].metrics[k].name);
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
                param_text_of(c, params.s[k], t, sizeof t);
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
        csv_num(f, c->gflops, c->flops > 0 && case_ok(c));
        fputc(',', f);
        csv_num(f, c->gbs, c->bytes > 0 && case_ok(c));
        fputc(',', f);
        csv_num(f, c->items_per_s, c->items > 0 && case_ok(c));
        fputc(',', f);
        csv_num(f, c->frac_peak, c->flops > 0 && case_ok(c) && c->frac_peak > 0);
        fputc(',', f);
        csv_num(f, c->frac_bandwidth, c->bytes > 0 && case_ok(c) && c->frac_bandwidth > 0);
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
            double mhz = jnum(clocks, "sm_start_mhz", NULL, &present);
            csv_num(f, mhz, present);
            fputc(',', f);
            mhz = jnum(clocks, "sm_end_mhz", NULL, &present);
            csv_num(f, mhz, present);
        }
        for (size_t k = 0; k < metrics.n; k++) {
            const kbi_metric *x = find_metric(c, metrics.s[k]);
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
    list_free(&params);
    list_free(&metrics);
    free(declared);
    return ferror(f) ? KBI_ERR_IO : KBI_OK;
}

/* ------------------------------------------------------------------ */
/* Markdown                                                            */
/* ------------------------------------------------------------------ */

static void md_env_row(FILE *f, const char *label, const kbi_result_set *set,
                       void (*cell)(FILE *, const kbi_env_record *))
{
    fprintf(f, "| %s |", label);
    for (size_t i = 0; i < set->n_envs; i++) {
        fputc(' ', f);
        cell(f, &set->envs[i]);
        fputs(" |", f);
    }
    fputc('\n', f);
}

static void env_run_id(FILE *f, const kbi_env_record *e)
{
    fprintf(f, "`%s`", e->run_id);
}
static void env_time(FILE *f, const kbi_env_record *e)
{
    md_cell(f, jstr(e->json, "time", NULL));
}
static void env_host(FILE *f, const kbi_env_record *e)
{
    md_cell(f, jstr(e->json, "host", NULL));
}
static void env_gpu(FILE *f, const kbi_env_record *e)
{
    json_t *dev = json_object_get(e->json, "device");
    int has;
    double v;
    if (!json_is_object(dev)) {
        fputs("**none**: ", f);
        md_cell(f, jstr(e->json, "device_error", NULL));
        return;
    }
    md_cell(f, jstr(dev, "name", NULL));
    fputs(" (", f);
    v = jnum(dev, "index", NULL, &has);
    if (has)
        fprintf(f, "device %.0f", v);
    if (jstr(dev, "cc", NULL)[0])
        fprintf(f, ", CC %s", jstr(dev, "cc", NULL));
    v = jnum(dev, "sm_count", NULL, &has);
    if (has)
        fprintf(f, ", %.0f SMs", v);
    fputs(")", f);
}
static void env_memory(FILE *f, const kbi_env_record *e)
{
    json_t *dev = json_object_get(e->json, "device");
    int a, b;
    double mem = jnum(dev, "memory_bytes", NULL, &a), l2 = jnum(dev, "l2_bytes", NULL, &b);
    if (a)
        fprintf(f, "%.1f GiB", mem / (1024.0 * 1024 * 1024));
    if (b)
        fprintf(f, "%sL2 %.1f MiB", a ? ", " : "", l2 / (1024.0 * 1024));
    if (!a && !b)
        fputs("—", f);
}
static void env_clocks(FILE *f, const kbi_env_record *e)
{
    json_t *dev = json_object_get(e->json, "device");
    int a, b, c;
    double sm = jnum(dev, "sm_clock_mhz", NULL, &a), mem = jnum(dev, "mem_clock_mhz", NULL, &b);
    double loaded = jnum(dev, "sm_clock_loaded_mhz", NULL, &c);
    /* 0 means NVML could not say. */
    a = a && sm > 0;
    b = b && mem > 0;
    if (a)
        fprintf(f, "SM %.0f MHz", sm);
    if (a && c && loaded > 0 && loaded != sm)
        fprintf(f, " (%.0f MHz under load)", loaded);
    if (b)
        fprintf(f, "%smemory %.0f MHz", a ? ", " : "", mem);
    if (!a && !b)
        fputs("—", f);
    if (json_is_false(json_object_get(e->json, "nvml")))
        fputs(" (no NVML: clocks not watched)", f);
}
static void env_cuda(FILE *f, const kbi_env_record *e)
{
    char d[32], r[32];
    int a, b;
    fmt_cuda_version(jnum(e->json, "cuda_driver_version", NULL, &a), d, sizeof d);
    fmt_cuda_version(jnum(e->json, "cuda_runtime_version", NULL, &b), r, sizeof r);
    if (!a && !b) {
        fputs("—", f);
        return;
    }
    fprintf(f, "driver %s", a ? d : "?");
    if (jstr(e->json, "driver_version", NULL)[0]) {
        fputs(" (", f);
        md_cell(f, jstr(e->json, "driver_version", NULL));
        fputs(")", f);
    }
    fprintf(f, ", runtime %s", b ? r : "?");
}
static void env_build(FILE *f, const kbi_env_record *e)
{
    fprintf(f, "kbench %s, revision `", jstr(e->json, "kbench_version", NULL));
    md_cell(f, e->git_revision[0] ? e->git_revision : "unknown");
    fputs("`, ", f);
    md_cell(f, jstr(e->json, "build_type", NULL));
    if (jstr(e->json, "cuda_architectures", NULL)[0]) {
        fputs(", archs ", f);
        md_cell(f, jstr(e->json, "cuda_architectures", NULL));
    }
}
static void env_compiler(FILE *f, const kbi_env_record *e)
{
    char flags[512];
    md_cell(f, jstr(e->json, "compiler", NULL));
    snprintf(flags, sizeof flags, "%s", jstr(e->json, "c_flags", NULL));
    if (kbi_trim(flags)[0]) {
        fputs(", flags `", f);
        md_cell(f, kbi_trim(flags));
        fputs("`", f);
    }
}
static void env_command(FILE *f, const kbi_env_record *e)
{
    const char *argv = jstr(e->json, "argv", NULL);
    if (argv[0]) {
        fputs("`", f);
        md_cell(f, argv);
        fputs("`", f);
    }
}
static void env_settings(FILE *f, const kbi_env_record *e)
{
    json_t *run = json_object_get(e->json, "run");
    fprintf(f,
            "cache %s, warm-up %.0f, %.0f–%.0f samples, min time %g s, max noise %g%%, "
            "timeout %g s",
            jstr(run, "cache", NULL), jnum(run, "warmup", NULL, NULL),
            jnum(run, "min_samples", NULL, NULL), jnum(run, "max_samples", NULL, NULL),
            jnum(run, "min_time", NULL, NULL), 100 * jnum(run, "max_noise", NULL, NULL),
            jnum(run, "timeout", NULL, NULL));
}
static void env_shard(FILE *f, const kbi_env_record *e)
{
    const char *filter = jstr(e->json, "filter", NULL);
    md_cell(f, jstr(e->json, "shard", NULL)[0] ? jstr(e->json, "shard", NULL) : "1/1");
    if (filter[0]) {
        fputs(", filter `", f);
        md_cell(f, filter);
        fputs("`", f);
    }
}
static void env_ceilings(FILE *f, const kbi_env_record *e)
{
    const char *src = jstr(e->json, "ceilings", "source");
    if (e->bandwidth_gbs <= 0 && e->peak_gflops <= 0)
        fputs("none", f);
    if (e->bandwidth_gbs > 0)
        fprintf(f, "memory %.0f GB/s", e->bandwidth_gbs);
    if (e->peak_gflops > 0)
        fprintf(f, "%scompute %.0f GFLOP/s", e->bandwidth_gbs > 0 ? ", " : "", e->peak_gflops);
    if (src[0] && strcmp(src, "none") != 0)
        fprintf(f, " (%s)", src);
    /* Why a ceiling could not be measured. */
    if (jstr(e->json, "ceilings", "bandwidth_error")[0]) {
        fputs("; memory: ", f);
        md_cell(f, jstr(e->json, "ceilings", "bandwidth_error"));
    }
    if (jstr(e->json, "ceilings", "peak_error")[0]) {
        fputs("; compute: ", f);
        md_cell(f, jstr(e->json, "ceilings", "peak_error"));
    }
}
static void env_complete(FILE *f, const kbi_env_record *e)
{
    fputs(e->complete ? "yes" : "**no**: interrupted or still running; results are partial", f);
}

static void write_environment(FILE *f, const rep_model *m)
{
    const kbi_result_set *set = m->set;
    fputs("## Environment\n\n", f);
    if (set->n_envs == 0) {
        fputs("No environment record was found: the results files hold cases only.\n\n", f);
        return;
    }
    fputs("| |", f);
    for (size_t i = 0; i < set->n_envs; i++) {
        fputc(' ', f);
        if (set->n_envs > 1)
            fprintf(f, "%s: ", m->runs.name[i]);
        md_cell(f, set->envs[i].source);
        fputs(" |", f);
    }
    fputs("\n|---|", f);
    for (size_t i = 0; i < set->n_envs; i++)
        fputs("---|", f);
    fputc('\n', f);
    md_env_row(f, "run", set, env_run_id);
    md_env_row(f, "time", set, env_time);
    md_env_row(f, "host", set, env_host);
    md_env_row(f, "GPU", set, env_gpu);
    md_env_row(f, "memory", set, env_memory);
    md_env_row(f, "clocks", set, env_clocks);
    md_env_row(f, "CUDA", set, env_cuda);
    md_env_row(f, "build", set, env_build);
    md_env_row(f, "compiler", set, env_compiler);
    md_env_row(f, "command", set, env_command);
    md_env_row(f, "measurement", set, env_settings);
    md_env_row(f, "shard", set, env_shard);
    md_env_row(f, "ceilings", set, env_ceilings);
    md_env_row(f, "complete", set, env_complete);
    fputc('\n', f);
}

static void write_summary(FILE *f, const rep_model *m)
{
    const kbi_result_set *set = m->set;
    fputs("## Summary\n\n| plugin | cases |", f);
    for (int s = 0; s < KBI_ST_COUNT; s++)
        fprintf(f, " %s |", kbi_status_name((kbi_status)s));
    fputs("\n|---|---:|", f);
    for (int s = 0; s < KBI_ST_COUNT; s++)
        fputs("---:|", f);
    fputc('\n', f);
    for (size_t i = 0; i < m->n_plugins; i++) {
        const rep_plugin *p = &m->plugins[i];
        size_t count[KBI_ST_COUNT] = {0};
        for (size_t k = 0; k < p->n_cases; k++)
            count[set->cases[p->cases[k]].status]++;
        fprintf(f, "| [%s](#plugin-%s) | %zu |", p->name, p->name, p->n_cases);
        for (int s = 0; s < KBI_ST_COUNT; s++)
            fprintf(f, s == KBI_ST_OK || !count[s] ? " %zu |" : " **%zu** |", count[s]);
        fputc('\n', f);
    }
    fputc('\n', f);
}

static void md_image(FILE *f, const rep_chart *c)
{
    if (!c->stem || !c->drawn)
        return;
    fputs("![", f);
    md_cell(f, c->title);
    fprintf(f, "](charts/%s.png)\n\n", c->stem);
    fprintf(f,
            "<sub>[SVG](charts/%s.svg) · [data](charts/%s.dat) · "
            "[gnuplot script](charts/%s.gp)</sub>\n\n",
            c->stem, c->stem, c->stem);
}

/* Columns shown at one point: only the rates that some case there has. */
typedef struct point_cols {
    int flops, bytes, items, verify, run;
    int frac_peak, frac_bandwidth; /* some case has the fraction (ceilings known) */
    const char *item_unit;         /* of the first case that counts items */
    const char *verify_metric;     /* when every case uses one, else NULL */
} point_cols;

static point_cols columns_of(const kbi_result_set *set, const rep_plugin *p, const rep_point *q)
{
    point_cols pc = {0};
    int metric_set = 0;
    for (size_t r = 0; r < p->n_rows; r++) {
        const kbi_case_result *c;
        if (q->cell[r] == NO_CASE)
            continue;
        c = &set->cases[q->cell[r]];
        pc.flops |= c->flops > 0;
        pc.bytes |= c->bytes > 0;
        pc.items |= c->items > 0;
        pc.frac_peak |= c->flops > 0 && c->frac_peak > 0;
        pc.frac_bandwidth |= c->bytes > 0 && c->frac_bandwidth > 0;
        if (!pc.item_unit && c->items > 0 && c->item_unit[0])
            pc.item_unit = c->item_unit;
        if (c->has_verify) {
            pc.verify = 1;
            if (!metric_set) {
                pc.verify_metric = c->verify_metric;
                metric_set = 1;
            } else if (pc.verify_metric && strcmp(pc.verify_metric, c->verify_metric) != 0) {
                pc.verify_metric = NULL;
            }
        }
    }
    pc.run = p->multi_run;
    return pc;
}

/* A fraction of a ceiling as a table cell; "<0.1%" rather than "0.0%". */
static void md_fraction(FILE *f, double frac)
{
    if (frac < 0.001)
        fputs(" | <0.1%", f);
    else
        fprintf(f, " | %.1f%%", 100 * frac);
}

static void fmt_rate(double v, char *out, size_t n)
{
    fmt_sig4(v, out, n);
}

static void write_case_row(FILE *f, const rep_model *m, const rep_plugin *p, size_t row, size_t ci,
                           const point_cols *pc)
{
    const kbi_result_set *set = m->set;
    const kbi_case_result *c = &set->cases[ci];
    int ok = case_ok(c), timed = c->stats.median > 0;
    char buf[128], buf2[128];
    double sp;
    json_t *clocks = json_object_get(c->json, "clocks");
    json_t *run = c->env ? json_object_get(c->env->json, "run") : NULL;
    fputs("| ", f);
    md_cell(f, p->rows[row].variant);
    if (strcmp(p->rows[row].variant, p->baseline) == 0)
        fputs(" (baseline)", f);
    if (pc->run)
        fprintf(f, " | %s", p->rows[row].run_label ? p->rows[row].run_label : "?");
    fprintf(f, c->status == KBI_ST_OK ? " | %s" : " | **%s**", kbi_status_name(c->status));
    /* Timing: also for verify_failed cases, which were timed. */
    if (timed) {
        time_unit u = unit_for(c->stats.median);
        char lo[64], hi[64];
        kbi_format_duration(c->stats.median, buf, sizeof buf);
        fmt_sig4(c->stats.ci_low * u.scale, lo, sizeof lo);
        fmt_sig4(c->stats.ci_high * u.scale, hi, sizeof hi);
        fprintf(f,
                c->stats.noise < 0.01 ? " | %s | %s – %s %s (±%.2f%%)"
                                      : " | %s | %s – %s %s (±%.1f%%)",
                buf, lo, hi, u.name, 100 * c->stats.noise);
    } else {
        fputs(" | — | —", f);
    }
    if (pc->flops) {
        double v, lo, hi;
        if (ok && c->flops > 0 && case_rate(c, RATE_FLOPS, &v, &lo, &hi)) {
            fmt_rate(v, buf, sizeof buf);
            fprintf(f, " | %s", buf);
        } else {
            fputs(" | —", f);
        }
        if (pc->frac_peak) {
            if (ok && c->flops > 0 && c->frac_peak > 0)
                md_fraction(f, c->frac_peak);
            else
                fputs(" | —", f);
        }
    }
    if (pc->bytes) {
        double v, lo, hi;
        if (ok && c->bytes > 0 && case_rate(c, RATE_BYTES, &v, &lo, &hi)) {
            fmt_rate(v, buf, sizeof buf);
            fprintf(f, " | %s", buf);
        } else {
            fputs(" | —", f);
        }
        if (pc->frac_bandwidth) {
            if (ok && c->bytes > 0 && c->frac_bandwidth > 0)
                md_fraction(f, c->frac_bandwidth);
            else
                fputs(" | —", f);
        }
    }
    if (pc->items) {
        double v, lo, hi;
        if (ok && c->items > 0 && case_rate(c, RATE_ITEMS, &v, &lo, &hi)) {
            fmt_si(v, buf, sizeof buf);
            fprintf(f, " | %s", buf);
            /* The header names the unit; say it here only when it differs. */
            if (pc->item_unit && c->item_unit[0] && strcmp(c->item_unit, pc->item_unit) != 0)
                fprintf(f, " %s/s", c->item_unit);
        } else {
            fputs(" | —", f);
        }
    }
    if (p->baseline[0]) {
        if (kbi_report_speedup(set, ci, &sp))
            fprintf(f, " | %.2f×", sp);
        else
            fputs(" | —", f);
    }
    if (pc->verify) {
        if (!c->has_verify) {
            fputs(c->status == KBI_ST_OK ? " | not verified" : " | —", f);
        } else {
            snprintf(buf, sizeof buf, "%.3g", c->verify_error);
            snprintf(buf2, sizeof buf2, "%.3g", c->verify_tolerance);
            if (c->verify_error == 0 && c->verify_tolerance == 0) {
                fprintf(f, c->verify_passed ? " | exact" : " | **✗ mismatch**");
            } else {
                fprintf(f, c->verify_passed ? " | %s (tol %s)" : " | **✗ %s > tol %s**", buf, buf2);
                if (!pc->verify_metric && c->verify_metric[0])
                    fprintf(f, " %s", c->verify_metric);
            }
        }
    }
    /* Notes: what a reader must not miss about this number. */
    fputs(" | ", f);
    {
        int first = 1;
        if (c->clock_drop) {
            int a, b;
            double s0 = jnum(clocks, "sm_start_mhz", NULL, &a);
            double s1 = jnum(clocks, "sm_end_mhz", NULL, &b);
            if (a && b)
                fprintf(f, "⚠ SM clock dropped %.0f→%.0f MHz", s0, s1);
            else
                fputs("⚠ SM clock dropped", f);
            first = 0;
        }
        if (timed && run) {
            double max_noise = jnum(run, "max_noise", NULL, NULL);
            if (max_noise > 0 && c->stats.noise > max_noise) {
                fprintf(f, "%snoisy: ±%.1f%% > %.1f%%", first ? "" : "; ", 100 * c->stats.noise,
                        100 * max_noise);
                first = 0;
            }
            if (c->stats.n < (size_t)jnum(run, "min_samples", NULL, NULL)) {
                fprintf(f, "%sonly %zu samples", first ? "" : "; ", c->stats.n);
                first = 0;
            }
        }
        if (c->status != KBI_ST_OK && c->message[0]) {
            char shortmsg[100];
            snprintf(shortmsg, sizeof shortmsg, "%s", c->message);
            if (strlen(c->message) >= sizeof shortmsg)
                memcpy(shortmsg + sizeof shortmsg - 4, "...", 4);
            if (!first)
                fputs("; ", f);
            md_cell(f, shortmsg);
        }
    }
    fputs(" |\n", f);
}

static void write_point(FILE *f, const rep_model *m, const rep_plugin *p, const rep_point *q)
{
    const kbi_result_set *set = m->set;
    point_cols pc = columns_of(set, p, q);
    fputs("### ", f);
    md_cell(f, q->params_text);
    fputs("\n\n| variant |", f);
    if (pc.run)
        fputs(" run |", f);
    fputs(" status | median | 95% CI of median |", f);
    if (pc.flops)
        fputs(pc.frac_peak ? " GFLOP/s | of peak |" : " GFLOP/s |", f);
    if (pc.bytes)
        fputs(pc.frac_bandwidth ? " GB/s | of bandwidth |" : " GB/s |", f);
    if (pc.items) {
        fputs(" ", f);
        md_cell(f, pc.item_unit ? pc.item_unit : "items");
        fputs("/s |", f);
    }
    if (p->baseline[0]) {
        fputs(" speedup vs ", f);
        md_cell(f, p->baseline);
        fputs(" |", f);
    }
    if (pc.verify) {
        fputs(" verify error", f);
        if (pc.verify_metric && pc.verify_metric[0]) {
            fputs(" (", f);
            md_cell(f, pc.verify_metric);
            fputs(")", f);
        }
        fputs(" |", f);
    }
    fputs(" notes |\n|---|", f);
    if (pc.run)
        fputs("---|", f);
    fputs("---|---:|---|", f);
    if (pc.flops)
        fputs(pc.frac_peak ? "---:|---:|" : "---:|", f);
    if (pc.bytes)
        fputs(pc.frac_bandwidth ? "---:|---:|" : "---:|", f);
    if (pc.items)
        fputs("---:|", f);
    if (p->baseline[0])
        fputs("---:|", f);
    if (pc.verify)
        fputs("---|", f);
    fputs("---|\n", f);
    for (size_t r = 0; r < p->n_rows; r++)
        if (q->cell[r] != NO_CASE)
            write_case_row(f, m, p, r, q->cell[r], &pc);
    fputc('\n', f);
    md_image(f, &q->bar);
}

static void md_metric(FILE *f, double v, const char *fmt, const char *suffix)
{
    if (isnan(v)) {
        fputs(" — |", f);
        return;
    }
    fputc(' ', f);
    fprintf(f, fmt, v);
    fprintf(f, "%s |", suffix ? suffix : "");
}

/* Nsight Compute figures of the plugin's profiled cases (`kbench profile`):
 * one row per kernel the profiled run launched, with its three largest
 * stall reasons. */
static void write_profiles(FILE *f, const kbi_result_set *set, const char *plugin)
{
    size_t i, len = strlen(plugin);
    json_t *doc;
    json_array_foreach(set->profiles, i, doc)
    {
        const char *id = json_string_value(json_object_get(doc, "case"));
        json_t *kernels = json_object_get(doc, "kernels"), *k;
        size_t j;
        if (strncmp(id, plugin, len) != 0 || id[len] != '/')
            continue;
        fputs("### Nsight Compute: `", f);
        md_cell(f, id);
        fputs("`\n\nOne profiled run (`kbench profile`, ", f);
        md_cell(f, json_string_value(json_object_get(doc, "source")));
        fputs("); stalls are warps per issued instruction.\n\n", f);
        fputs("| kernel | grid | block | duration | SM % | memory % | DRAM % | DRAM bytes | "
              "occupancy % | regs/thread | smem/block | bank conflicts ld / st | L1 hit % | "
              "L2 hit % | top stalls |\n",
              f);
        fputs("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n", f);
        json_array_foreach(kernels, j, k)
        {
            const char *unit;
            double v, w, top[3];
            char reasons[3][64];
            size_t n_top;
            fputs("| ", f); /* md_cell escapes < and |, so no code span here */
            md_cell(f, json_string_value(json_object_get(k, "name")));
            fputs(" | ", f);
            md_cell(f, json_string_value(json_object_get(k, "grid")));
            fputs(" | ", f);
            md_cell(f, json_string_value(json_object_get(k, "block")));
            fputs(" |", f);
            v = kbi_ncu_metric(k, "gpu__time_duration.sum", &unit);
            md_metric(f, v, "%.4g ", unit);
            md_metric(f, kbi_ncu_metric(k, "sm__throughput.avg.pct_of_peak_sustained_elapsed", NULL),
                      "%.1f", NULL);
            md_metric(f,
                      kbi_ncu_metric(
                          k, "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
                          NULL),
                      "%.1f", NULL);
            md_metric(f,
                      kbi_ncu_metric(k, "dram__throughput.avg.pct_of_peak_sustained_elapsed", NULL),
                      "%.1f", NULL);
            v = kbi_ncu_metric(k, "dram__bytes.sum", &unit);
            md_metric(f, v, "%.4g ", unit);
            md_metric(f,
                      kbi_ncu_metric(k, "sm__warps_active.avg.pct_of_peak_sustained_active", NULL),
                      "%.1f", NULL);
            md_metric(f, kbi_ncu_metric(k, "launch__registers_per_thread", NULL), "%.0f", NULL);
            /* Static + dynamic, each in the unit ncu chose (byte or Kbyte). */
            v = kbi_ncu_metric(k, "launch__shared_mem_per_block_static", &unit);
            v = isnan(v) ? 0 : v * (unit && strncmp(unit, "Kbyte", 5) == 0 ? 1e3 : 1);
            w = kbi_ncu_metric(k, "launch__shared_mem_per_block_dynamic", &unit);
            w = isnan(w) ? 0 : w * (unit && strncmp(unit, "Kbyte", 5) == 0 ? 1e3 : 1);
            md_metric(f, v + w, "%.0f", " B");
            v = kbi_ncu_metric(k, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", NULL);
            w = kbi_ncu_metric(k, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", NULL);
            if (isnan(v) && isnan(w))
                fputs(" — |", f);
            else
                fprintf(f, " %.0f / %.0f |", v, w);
            md_metric(f, kbi_ncu_metric(k, "l1tex__t_sector_hit_rate.pct", NULL), "%.1f", NULL);
            md_metric(f, kbi_ncu_metric(k, "lts__t_sector_hit_rate.pct", NULL), "%.1f", NULL);
            n_top = kbi_ncu_top_stalls(k, reasons, top, 3);
            for (size_t t = 0; t < n_top; t++)
                fprintf(f, "%s%s %.2f", t ? ", " : " ", reasons[t], top[t]);
            fputs(" |\n", f);
        }
        fputc('\n', f);
    }
}

/* The metrics of every case of p, one row per case (point, then variant),
 * one column per metric: its value ± its standard uncertainty, in bold with
 * ✗ where it lies outside its declared bound. */
static void write_metrics_table(FILE *f, const rep_model *m, const rep_plugin *p)
{
    const kbi_result_set *set = m->set;
    str_list names = {0};
    const kbi_metric **decl;
    size_t n_oob = 0;
    for (size_t k = 0; k < p->n_cases; k++) {
        const kbi_case_result *c = &set->cases[p->cases[k]];
        for (size_t j = 0; j < c->n_metrics; j++) {
            int seen = 0;
            for (size_t i = 0; i < names.n && !seen; i++)
                seen = strcmp(names.s[i], c->metrics[j].name) == 0;
            if (!seen)
                list_add(&names, c->metrics[j].name);
        }
    }
    if (!names.n)
        return;
    /* The heading of a column comes from a case that declares the metric. */
    decl = kbi_xcalloc(names.n, sizeof *decl);
    for (size_t k = 0; k < p->n_cases; k++) {
        const kbi_case_result *c = &set->cases[p->cases[k]];
        for (size_t i = 0; i < names.n; i++) {
            const kbi_metric *x = find_metric(c, names.s[i]);
            if (x && (!decl[i] || (!decl[i]->declared && x->declared)))
                decl[i] = x;
            n_oob += x && !(x->in_bound && kbi_metric_within(x, x->value));
        }
    }
    fprintf(f, "### Metrics of `%s`\n\n", p->name);
    fputs("Values the plugin reported, ± one standard uncertainty where it gave one", f);
    if (n_oob)
        fprintf(f, "; **✗** marks a value outside its declared bound (%zu)", n_oob);
    fputs(".\n\n| case | variant |", f);
    for (size_t i = 0; i < names.n; i++) {
        const kbi_metric *d = decl[i];
        int any = 0;
        fputc(' ', f);
        md_cell(f, names.s[i]);
        if (d->unit[0] && strcmp(d->unit, "1") != 0) {
            fputs(" (", f);
            md_cell(f, d->unit);
            any = 1;
        }
        if (d->better != KB_BETTER_NONE) {
            fprintf(f, "%s%s is better", any ? "; " : " (", kbi_better_name(d->better));
            any = 1;
        }
        if (d->bounds & KB_BOUND_LOW) {
            fprintf(f, "%s≥ %.4g", any ? "; " : " (", d->low);
            any = 1;
        }
        if (d->bounds & KB_BOUND_HIGH) {
            fprintf(f, "%s≤ %.4g", any ? "; " : " (", d->high);
            any = 1;
        }
        fputs(any ? ") |" : " |", f);
    }
    fputs("\n|---|---|", f);
    for (size_t i = 0; i < names.n; i++)
        fputs("---:|", f);
    fputc('\n', f);
    for (size_t q = 0; q < p->n_points; q++) {
        for (size_t r = 0; r < p->n_rows; r++) {
            size_t ci = p->points[q].cell[r];
            const kbi_case_result *c;
            if (ci == NO_CASE || set->cases[ci].n_metrics == 0)
                continue;
            c = &set->cases[ci];
            fputs("| ", f);
            md_cell(f, p->points[q].label);
            fputs(" | ", f);
            md_cell(f, p->rows[r].name);
            fputs(" |", f);
            for (size_t i = 0; i < names.n; i++) {
                const kbi_metric *x = find_metric(c, names.s[i]);
                char v[96];
                if (!x) {
                    fputs(" — |", f);
                    continue;
                }
                fmt_metric(x, v, sizeof v);
                fprintf(f, x->in_bound && kbi_metric_within(x, x->value) ? " %s |" : " **%s ✗** |",
                        v);
            }
            fputc('\n', f);
        }
    }
    fputc('\n', f);
    free(decl);
    list_free(&names);
}

static void write_plugin(FILE *f, const rep_model *m, const rep_plugin *p)
{
    const kbi_result_set *set = m->set;
    size_t n_bad = 0;
    char ubuf[128];
    fprintf(f, "<a id=\"plugin-%s\"></a>\n\n## Plugin `%s`\n\n", p->name, p->name);
    fprintf(f, "%zu cases at %zu parameter points, %zu variants", p->n_cases, p->n_points,
            p->n_rows);
    if (p->baseline[0]) {
        fputs("; baseline variant `", f);
        md_cell(f, p->baseline);
        fputs("` (speedup = its median time / the variant's)", f);
    }
    if (p->kind != RATE_NONE)
        fprintf(f, "; charts show %s", kind_label(set, p, ubuf, sizeof ubuf));
    fputs(". Charts show cases whose status is ok.\n\n", f);
    for (size_t i = 0; i < p->notes.n; i++) {
        fputs("- Note: ", f);
        md_cell(f, p->notes.s[i]);
        fputc('\n', f);
    }
    if (p->notes.n)
        fputc('\n', f);
    for (size_t i = 0; i < p->n_charts; i++)
        md_image(f, &p->charts[i]);
    write_metrics_table(f, m, p);
    for (size_t k = 0; k < p->n_points; k++)
        write_point(f, m, p, &p->points[k]);
    if (set->profiles)
        write_profiles(f, set, p->name);
    for (size_t k = 0; k < p->n_cases; k++)
        n_bad += set->cases[p->cases[k]].status != KBI_ST_OK;
    if (n_bad) {
        fprintf(f, "### Cases of `%s` that did not pass (%zu)\n\n", p->name, n_bad);
        fputs("| case | status | message | record |\n|---|---|---|---|\n", f);
        for (size_t k = 0; k < p->n_cases; k++) {
            const kbi_case_result *c = &set->cases[p->cases[k]];
            if (c->status == KBI_ST_OK)
                continue;
            fputs("| `", f);
            md_cell(f, c->id);
            fprintf(f, "` | **%s** | ", kbi_status_name(c->status));
            md_cell(f, c->message[0] ? c->message : "(no message)");
            fputs(" | ", f);
            md_cell(f, c->source);
            fputs(" |\n", f);
        }
        fputc('\n', f);
    }
}

static int write_markdown(FILE *f, const rep_model *m, const char *title, const kbi_chart_ctx *ctx,
                          int charts_requested)
{
    const kbi_result_set *set = m->set;
    char now[64];
    time_t t = time(NULL);
    struct tm tm;
    size_t n_warn = set->n_warnings + (ctx ? ctx->n_warnings : 0);
    strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
    fputs("# kbench report: ", f);
    md_cell(f, title);
    fprintf(f, "\n\nWritten %s by kbench report from %zu case%s of %zu run%s.\n\n", now,
            set->n_cases, set->n_cases == 1 ? "" : "s", set->n_envs, set->n_envs == 1 ? "" : "s");
    fputs("Times are medians of every sample; the interval is the 95% confidence interval of "
          "the median (order statistics) and ± its half-width relative to the median. Rates "
          "come from the median and the plugin's counts; fractions are of the run's "
          "ceilings.\n\n",
          f);
    if (!charts_requested) {
        fputs("> Charts were not drawn: they were turned off (--no-charts).\n\n", f);
    } else if (ctx && !ctx->gnuplot) {
        fputs("> **Charts were not drawn**: ", f);
        md_cell(f, ctx->why_not);
        fputs(". Their data and gnuplot scripts are in `charts/`; run `gnuplot NAME.gp` there "
              "to draw them.\n\n",
              f);
    }
    if (n_warn) {
        fputs("## Warnings\n\n", f);
        for (size_t i = 0; i < set->n_warnings; i++) {
            fputs("- ", f);
            md_cell(f, set->warnings[i]);
            fputc('\n', f);
        }
        for (size_t i = 0; ctx && i < ctx->n_warnings; i++) {
            fputs("- ", f);
            md_cell(f, ctx->warnings[i]);
            fputc('\n', f);
        }
        fputc('\n', f);
    }
    {
        /* Clock drops are easy to miss in big tables: list them up front. */
        size_t drops = 0;
        for (size_t i = 0; i < set->n_cases; i++)
            drops += set->cases[i].clock_drop != 0;
        if (drops) {
            fprintf(f,
                    "> ⚠ The SM clock dropped during %zu case%s (thermal or power "
                    "throttling); their times are flagged in the notes:",
                    drops, drops == 1 ? "" : "s");
            for (size_t i = 0; i < set->n_cases; i++)
                if (set->cases[i].clock_drop) {
                    fputs(" `", f);
                    md_cell(f, set->cases[i].id);
                    fputs("`", f);
                }
            fputs("\n\n", f);
        }
    }
    write_environment(f, m);
    write_summary(f, m);
    for (size_t i = 0; i < m->n_plugins; i++)
        write_plugin(f, m, &m->plugins[i]);
    return ferror(f) ? KBI_ERR_IO : KBI_OK;
}

/* ------------------------------------------------------------------ */
/* Orchestration                                                       */
/* ------------------------------------------------------------------ */

static int open_out(const char *dir, const char *name, FILE **f, char *path, size_t n, char *err)
{
    if ((size_t)snprintf(path, n, "%s/%s", dir, name) >= n) {
        kbi_errf(err, "%s/%s: path too long", dir, name);
        return KBI_ERR_IO;
    }
    *f = fopen(path, "w");
    if (!*f) {
        kbi_errf(err, "%s: cannot create: %s", path, strerror(errno));
        return KBI_ERR_IO;
    }
    return KBI_OK;
}

static int close_out(FILE *f, const char *path, int rc, char *err)
{
    if (fclose(f) != 0 && rc == KBI_OK)
        rc = KBI_ERR_IO;
    if (rc == KBI_ERR_IO)
        kbi_errf(err, "%s: cannot write: %s", path, strerror(errno ? errno : EIO));
    return rc;
}

int kbi_report_write(const kbi_result_set *set, const char *outdir, const kbi_report_options *opt,
                     char *err)
{
    kbi_report_options defaults = {0};
    rep_model m;
    kbi_chart_ctx ctx = {0};
    int have_ctx = 0, rc;
    char path[PATH_MAX], charts[PATH_MAX], name[PATH_MAX];
    const char *title;
    FILE *f = NULL;
    if (!opt)
        opt = &defaults;
    if (set->n_cases == 0) {
        kbi_errf(err, "no case in the results, expected at least one case record");
        return KBI_ERR_INPUT;
    }
    rc = kbi_mkdirs(outdir, err);
    if (rc != KBI_OK)
        return rc;
    {
        /* The folder's name, trailing slashes ignored. */
        size_t len;
        snprintf(name, sizeof name, "%s", outdir);
        len = strlen(name);
        while (len > 1 && name[len - 1] == '/')
            name[--len] = '\0';
        title = opt->title && *opt->title ? opt->title : base_name(name);
        if (!*title || strcmp(title, ".") == 0)
            title = "report";
    }
    model_build(&m, set);
    if (!opt->no_charts) {
        snprintf(charts, sizeof charts, "%s/charts", outdir);
        rc = kbi_chart_init(&ctx, charts, opt->gnuplot, opt->gnuplot_timeout, err);
        if (rc != KBI_OK)
            goto fail;
        have_ctx = 1;
        rc = draw_charts(&m, &ctx, err);
        if (rc != KBI_OK)
            goto fail;
    }
    rc = open_out(outdir, "report.md", &f, path, sizeof path, err);
    if (rc != KBI_OK)
        goto fail;
    errno = 0;
    rc = write_markdown(f, &m, title, have_ctx ? &ctx : NULL, !opt->no_charts);
    rc = close_out(f, path, rc, err);
    if (rc != KBI_OK)
        goto fail;
    rc = open_out(outdir, "results.csv", &f, path, sizeof path, err);
    if (rc != KBI_OK)
        goto fail;
    errno = 0;
    rc = kbi_report_write_csv(set, f);
    rc = close_out(f, path, rc, err);
fail:
    if (have_ctx)
        kbi_chart_free(&ctx);
    model_free(&m);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Command line                                                        */
/* ------------------------------------------------------------------ */

static void report_usage(FILE *f)
{
    fputs("usage: kbench report RESULTS... [--out DIR] [--title TEXT] [--no-charts]\n"
          "\n"
          "Writes report.md, results.csv and gnuplot charts (PNG, SVG, with their .gp\n"
          "scripts and .dat data in charts/) for one or more results files.  Each RESULTS\n"
          "is a results file or a folder holding results*.jsonl files (searched three\n"
          "levels deep); several are merged (shards of one sweep, runs on several GPUs).\n"
          "\n"
          "  -o, --out DIR      where to write (default reports/<name>, name from the\n"
          "                     first RESULTS: its folder, or the file's stem)\n"
          "  -t, --title TEXT   heading of the report (default: the folder's name)\n"
          "      --no-charts    write no charts\n"
          "      --gnuplot PATH gnuplot to run (default $KBENCH_GNUPLOT, else PATH)\n"
          "  -h, --help         this text\n"
          "\n"
          "Without gnuplot the report is still written and says why charts are missing.\n"
          "Exit status: 0 written, 2 bad usage or unreadable/invalid results.\n",
          f);
}

int kbi_cmd_report(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"out", required_argument, NULL, 'o'}, {"title", required_argument, NULL, 't'},
        {"no-charts", no_argument, NULL, 'C'}, {"gnuplot", required_argument, NULL, 'g'},
        {"help", no_argument, NULL, 'h'},      {NULL, 0, NULL, 0},
    };
    kbi_report_options opt = {0};
    kbi_result_set set = {0};
    const char *out = NULL;
    char outdir[PATH_MAX], err[KBI_ERR_SIZE] = "";
    int c, rc, code = KBI_EXIT_USAGE;
    /* Reset getopt: the command may be run more than once in a process. */
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:t:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o':
            out = optarg;
            break;
        case 't':
            opt.title = optarg;
            break;
        case 'C':
            opt.no_charts = 1;
            break;
        case 'g':
            opt.gnuplot = optarg;
            break;
        case 'h':
            report_usage(stdout);
            return KBI_EXIT_OK;
        default:
            if (optopt && optopt != '?' && strchr("ot", optopt))
                fprintf(stderr, "kbench report: option -%c needs a value\n", optopt);
            else
                fprintf(stderr, "kbench report: unknown option '%s'\n", argv[optind - 1]);
            fputs("usage: kbench report RESULTS... [--out DIR] (see kbench report --help)\n",
                  stderr);
            return KBI_EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        fputs("kbench report: no results given, expected one or more results files or "
              "folders\nusage: kbench report RESULTS... [--out DIR] (see kbench report "
              "--help)\n",
              stderr);
        return KBI_EXIT_USAGE;
    }
    rc = kbi_results_load_inputs(&set, (const char *const *)&argv[optind], (size_t)(argc - optind),
                                 err);
    if (rc != KBI_OK) {
        fprintf(stderr, "kbench report: %s\n", err);
        goto done;
    }
    if (set.n_cases == 0) {
        fprintf(stderr, "kbench report: %s: no case records, expected the results of a run\n",
                argv[optind]);
        goto done;
    }
    if (out)
        snprintf(outdir, sizeof outdir, "%s", out);
    else
        kbi_report_default_dir(argv[optind], outdir, sizeof outdir);
    for (size_t i = 0; i < set.n_warnings; i++)
        fprintf(stderr, "kbench report: warning: %s\n", set.warnings[i]);
    rc = kbi_report_write(&set, outdir, &opt, err);
    if (rc != KBI_OK) {
        fprintf(stderr, "kbench report: %s\n", err);
        goto done;
    }
    printf("kbench report: wrote %s/report.md and %s/results.csv (%zu cases)\n", outdir, outdir,
           set.n_cases);
    code = KBI_EXIT_OK;
done:
    kbi_results_free(&set);
    return code;
}
