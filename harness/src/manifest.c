/* A results folder's manifest: see manifest.h. */
#define _GNU_SOURCE
#include "manifest.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jsonfile.h"
#include "loader.h"
#include "options.h"
#include "profile.h"
#include "resultset.h"

/* "DIR/sub/results.jsonl:1" -> "sub/results.jsonl" (the env record's file, relative to dir). */
static char *file_of(const char *source, const char *dir)
{
    size_t n = strlen(dir), len;
    const char *colon = strrchr(source, ':');
    char *s;
    while (n > 1 && dir[n - 1] == '/')
        n--; /* "DIR/" as given on the command line */
    if (strncmp(source, dir, n) == 0 && source[n] == '/')
        for (source += n; *source == '/'; source++)
            ;
    len = colon && colon > source ? (size_t)(colon - source) : strlen(source);
    s = kbi_xcalloc(len + 1, 1);
    memcpy(s, source, len);
    return s;
}

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

/* r[key] = a copy of v, or null where the env record had none. */
static void put(json_t *r, const char *key, const json_t *v)
{
    json_object_set_new(r, key, v ? json_deep_copy(v) : json_null());
}

static size_t cases_of(const kbi_result_set *set, const char *run_id)
{
    size_t n = 0;
    for (size_t i = 0; i < set->n_cases; i++)
        n += strcmp(set->cases[i].run_id, run_id) == 0;
    return n;
}

json_t *kbi_manifest_of(const kbi_result_set *set, const char *dir)
{
    json_t *runs = json_array();
    for (size_t i = 0; i < set->n_envs; i++) {
        const kbi_env_record *e = &set->envs[i];
        json_t *j = e->json, *r = json_object();
        const char *argv = json_string_value(json_object_get(j, "argv"));
        kbi_buf cmd = {0};
        char *file = file_of(e->source, dir);
        kbi_buf_printf(&cmd, "kbench %s", argv ? argv : "");
        json_object_set_new(r, "file", json_string(file));
        json_object_set_new(r, "run_id", json_string(e->run_id));
        put(r, "profile", json_object_get(j, "profile"));
        put(r, "filter", json_object_get(j, "filter"));
        put(r, "shard", json_object_get(j, "shard"));
        json_object_set_new(r, "git_revision", json_string(e->git_revision));
        json_object_set_new(r, "command", json_string(cmd.data));
        put(r, "date", json_object_get(j, "time"));
        json_object_set_new(r, "gpu", str_or_null(e->device_name[0] ? e->device_name : NULL));
        put(r, "driver", json_object_get(j, "driver_version"));
        put(r, "cuda_runtime", json_object_get(j, "cuda_runtime_version"));
        put(r, "kbench_version", json_object_get(j, "kbench_version"));
        json_object_set_new(r, "cases", json_integer((json_int_t)cases_of(set, e->run_id)));
        json_object_set_new(r, "complete", json_boolean(e->complete));
        json_array_append_new(runs, r);
        kbi_buf_free(&cmd);
        free(file);
    }
    return json_pack("{s:s,s:i,s:o}", "schema", "kbench-manifest", "version", 1, "runs", runs);
}

int kbi_manifest_write(const char *dir, const char *const *inputs, size_t n_inputs, char *err)
{
    kbi_result_set set = {0};
    kbi_buf path = {0};
    json_t *m;
    int rc = kbi_results_load_inputs(&set, inputs, n_inputs, err);
    if (rc != KBI_OK)
        return rc;
    m = kbi_manifest_of(&set, dir);
    kbi_buf_printf(&path, "%s/" KBI_MANIFEST_FILE, dir);
    rc = kbi_json_write_file(m, path.data, 1, err);
    json_decref(m);
    kbi_buf_free(&path);
    kbi_results_free(&set);
    return rc;
}

json_t *kbi_manifest_read(const char *dir, char *why, size_t n)
{
    kbi_buf path = {0};
    json_error_t jerr;
    json_t *m;
    const char *schema;
    why[0] = '\0';
    kbi_buf_printf(&path, "%s/" KBI_MANIFEST_FILE, dir);
    if (access(path.data, F_OK) != 0) {
        kbi_buf_free(&path);
        return NULL;
    }
    m = json_load_file(path.data, 0, &jerr);
    schema = json_string_value(json_object_get(m, "schema"));
    if (!m || !schema || strcmp(schema, "kbench-manifest") != 0 ||
        !json_is_array(json_object_get(m, "runs"))) {
        snprintf(why, n, "%s:%d: not a kbench manifest (%s); ignored", path.data, m ? 1 : jerr.line,
                 m ? "expected schema kbench-manifest with runs" : jerr.text);
        json_decref(m);
        m = NULL;
    }
    kbi_buf_free(&path);
    return m;
}

/* ---- the reference against its profile today ---- */

static const char *field(const json_t *run, const char *key)
{
    const char *s = json_string_value(json_object_get(run, key));
    return s ? s : "";
}

/* "profiles/sgemm.ini (--filter 'G', shard 1/2) at REV, DATE, GPU, driver D" */
static void describe(const json_t *run, kbi_buf *b)
{
    const char *filter = json_string_value(json_object_get(run, "filter"));
    const char *shard = json_string_value(json_object_get(run, "shard"));
    kbi_buf_printf(b, "%s", field(run, "profile"));
    if (filter)
        kbi_buf_printf(b, " --filter '%s'", filter);
    if (shard && strcmp(shard, "1/1") != 0)
        kbi_buf_printf(b, " --shard %s", shard);
    kbi_buf_printf(b, " at %.12s, %s, %s, driver %s (%s, %lld cases)", field(run, "git_revision"),
                   field(run, "date"), field(run, "gpu")[0] ? field(run, "gpu") : "no GPU",
                   field(run, "driver")[0] ? field(run, "driver") : "none", field(run, "file"),
                   (long long)json_integer_value(json_object_get(run, "cases")));
}

/* The plugins as kbench finds them; *loaded says whether they are there already. */
static int load_plugins(kbi_plugin_set *set, int *loaded, const char *plugin_dirs, char *err)
{
    char *dirs[16];
    int required[16], rc;
    size_t n;
    if (*loaded)
        return KBI_OK;
    n = kbi_plugin_dirs(plugin_dirs, dirs, required, 15);
    dirs[n] = NULL;
    rc = kbi_plugins_load((const char *const *)dirs, required, set, err);
    for (size_t i = 0; i < n; i++)
        free(dirs[i]);
    *loaded = rc == KBI_OK;
    return rc;
}

/* Checks one run of the reference against the cases its profile (already loaded) expands to
 * today, within its filter; the lacking direction only for a run of every shard. */
static void check_run(const json_t *run, const kbi_result_set *ref, const kbi_case *cases, size_t n,
                      kbi_strlist *warnings)
{
    const char *run_id = field(run, "run_id"), *profile = field(run, "profile");
    const char *filter = json_string_value(json_object_get(run, "filter"));
    const char *shard = json_string_value(json_object_get(run, "shard"));
    json_t *want = json_object(), *held = json_object();
    size_t stale = 0, lacking = 0;
    const char *stale_id = NULL, *lacking_id = NULL;
    char w[KBI_ERR_SIZE];
    /* Keyed by full id (every parameter): a reference of results before version 4 names them all in its ids. */
    for (size_t i = 0; i < n; i++)
        if (!filter || kbi_case_selected(&cases[i], filter))
            json_object_set_new(want, cases[i].full_id, json_true());
    for (size_t i = 0; i < ref->n_cases; i++) {
        const kbi_case_result *c = &ref->cases[i];
        if (strcmp(c->run_id, run_id) != 0)
            continue;
        json_object_set_new(held, kbi_case_full_id(c), json_true());
        if (!json_object_get(want, kbi_case_full_id(c)) && stale++ == 0)
            stale_id = c->id;
    }
    if (!shard || strcmp(shard, "1/1") == 0)
        for (size_t i = 0; i < n; i++)
            if (json_object_get(want, cases[i].full_id) &&
                !json_object_get(held, cases[i].full_id) && lacking++ == 0)
                lacking_id = cases[i].id;
    if (lacking) {
        snprintf(w, sizeof w,
                 "the reference (%.60s) lacks %zu case%s that %.200s expands to today (e.g. "
                 "%.300s): the profile gained them; re-measure the reference",
                 field(run, "file"), lacking, lacking == 1 ? "" : "s", profile, lacking_id);
        kbi_strlist_add(warnings, w);
    }
    if (stale) {
        snprintf(w, sizeof w,
                 "%zu case%s of the reference (%.60s) %s no longer in %.200s (e.g. %.300s): the "
                 "profile or a plugin changed; re-measure the reference",
                 stale, stale == 1 ? "" : "s", field(run, "file"), stale == 1 ? "is" : "are",
                 profile, stale_id);
        kbi_strlist_add(warnings, w);
    }
    json_decref(want);
    json_decref(held);
}

void kbi_manifest_check(const json_t *manifest, const kbi_result_set *ref, const char *plugin_dirs,
                        kbi_strlist *about, kbi_strlist *warnings)
{
    kbi_plugin_set plugins = {0};
    int loaded = 0, broken = 0;
    size_t i;
    json_t *run;
    json_array_foreach(json_object_get(manifest, "runs"), i, run)
    {
        const char *profile = field(run, "profile");
        kbi_buf line = {0};
        char err[KBI_ERR_SIZE], w[KBI_ERR_SIZE];
        describe(run, &line);
        if (!profile[0] || access(profile, R_OK) != 0) {
            kbi_buf_printf(&line, "; its profile is not here, so not checked against it");
        } else if (broken || load_plugins(&plugins, &loaded, plugin_dirs, err) != KBI_OK) {
            if (!broken)
                snprintf(w, sizeof w, "the reference cannot be checked against its profile: %.900s",
                         err);
            if (!broken)
                kbi_strlist_add(warnings, w);
            broken = 1;
        } else {
            kbi_profile p;
            kbi_buf errors = {0};
            kbi_case *cases = NULL;
            size_t n = 0;
            if (kbi_profile_load(profile, &plugins, &p, &errors) != KBI_OK) {
                snprintf(w, sizeof w,
                         "%.200s no longer loads, so the reference cannot be checked against "
                         "it: %.700s",
                         profile, errors.data ? errors.data : "");
                kbi_strlist_add(warnings, w);
            } else {
                if (kbi_profile_cases(&p, &cases, &n) == KBI_OK)
                    check_run(run, ref, cases, n, warnings);
                kbi_cases_free(cases, n);
                kbi_profile_free(&p);
            }
            kbi_buf_free(&errors);
        }
        kbi_strlist_add(about, line.data);
        kbi_buf_free(&line);
    }
    if (loaded)
        kbi_plugins_free(&plugins);
}

/* ---- kbench manifest DIR ---- */

static const char *const manifest_help =
    "Writes DIR/" KBI_MANIFEST_FILE ", the manifest of a results folder: for each run it holds\n"
    "(every results*.jsonl under DIR, as report and compare read it), the profile,\n"
    "filter and shard, the git revision, the command, the date, the GPU, the driver,\n"
    "the CUDA runtime, the kbench version, its case count and whether it ended.\n"
    "`kbench run` writes one into its --out folder; run this for a reference made of\n"
    "several runs (a profile run in parts), or one measured before kbench wrote\n"
    "manifests.  `kbench compare DIR RESULTS` then names the reference it used and warns\n"
    "when a profile has gained or lost cases since the reference was measured.\n"
    "Prints one line per run.\n";

static const char *const manifest_notes =
    "exit codes: 0 written; 2 DIR holds no results, or the file cannot be written.\n";

int kbi_cmd_manifest(int argc, char **argv)
{
    const kbi_verb_spec spec = {.verb = "manifest",
                                .synopsis = "DIR",
                                .help = manifest_help,
                                .min_operands = 1,
                                .max_operands = 1,
                                .operands = "DIR (a results folder)",
                                .summary = "write DIR/manifest.json: a reference's profile, "
                                           "revision, command, GPU",
                                .notes = manifest_notes};
    char err[KBI_ERR_SIZE], why[KBI_ERR_SIZE];
    int first, parsed;
    json_t *m, *run;
    size_t i;
    if ((parsed = kbi_options_parse(&spec, argc, argv, &first)) != KBI_OPTS_GO_ON)
        return parsed;
    if (kbi_manifest_write(argv[first], (const char *const *)&argv[first], 1, err) != KBI_OK) {
        fprintf(stderr, "kbench manifest: %s\n", err);
        return KBI_EXIT_USAGE;
    }
    m = kbi_manifest_read(argv[first], why, sizeof why);
    json_array_foreach(json_object_get(m, "runs"), i, run)
    {
        kbi_buf line = {0};
        describe(run, &line);
        printf("%s\n", line.data);
        kbi_buf_free(&line);
    }
    fprintf(stderr, "kbench manifest: wrote %s/" KBI_MANIFEST_FILE "\n", argv[first]);
    json_decref(m);
    return KBI_EXIT_OK;
}
