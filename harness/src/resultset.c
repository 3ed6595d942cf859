/* Result sets read from several inputs: results files and the folders that
 * hold them (shards of one sweep, runs on several GPUs), merged, with a case
 * read twice kept once; and which run and sweep a case came from.  results.c
 * reads one file; this is what `report` and `compare` both need on top. */
#define _XOPEN_SOURCE 700
#include "resultset.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format.h"

/* How deep a results folder is searched for results*.jsonl. */
#define MAX_DIR_DEPTH 3

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int kbi_is_results_name(const char *name)
{
    size_t n = strlen(name);
    return strncmp(name, "results", 7) == 0 && n >= 13 && strcmp(name + n - 6, ".jsonl") == 0;
}

/* Adds the results*.jsonl files of dir; only when dir holds none, those of
 * its subfolders (depth levels further down), each by the same rule.  So a
 * run's folder gives its own results.jsonl and not the per-case files a
 * --sanitize run keeps below it, while a folder of shard-N folders gives
 * every shard. */
static int collect_dir(const char *dir, int depth, kbi_strlist *out, char *err)
{
    DIR *d = opendir(dir);
    struct dirent *ent;
    kbi_strlist subdirs = {0};
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
            kbi_strlist_add(&subdirs, path);
        else if (S_ISREG(st.st_mode) && kbi_is_results_name(ent->d_name))
            kbi_strlist_add(out, path);
    }
    closedir(d);
    if (out->n == before) {
        if (subdirs.n > 1) /* qsort of a NULL, empty list is undefined */
            qsort(subdirs.s, subdirs.n, sizeof *subdirs.s, cmp_str);
        for (size_t i = 0; i < subdirs.n && rc == KBI_OK; i++)
            rc = collect_dir(subdirs.s[i], depth - 1, out, err);
    }
    kbi_strlist_free(&subdirs);
    return rc;
}

/* Drops the later of two cases with the same run and full id (a file merged
 * twice under two names, or a copy), with a warning naming both lines. */
static void drop_duplicates(kbi_result_set *set, size_t from)
{
    for (size_t i = from; i < set->n_cases;) {
        size_t j;
        for (j = 0; j < i; j++)
            if (strcmp(kbi_case_full_id(&set->cases[j]), kbi_case_full_id(&set->cases[i])) == 0 &&
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
        snprintf(path, sizeof path, "%.*s/profile.json", (int)(slash - results_path), results_path);
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
    kbi_strlist files = {0}, real = {0};
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
            kbi_strlist found = {0};
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
                    kbi_strlist_add(&files, found.s[k]);
            }
            kbi_strlist_free(&found);
            if (rc != KBI_OK)
                goto done;
        } else {
            kbi_strlist_add(&files, inputs[i]);
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
        kbi_strlist_add(&real, rp);
        rc = kbi_results_load(set, files.s[i], err);
        if (rc != KBI_OK)
            goto done;
        load_profile_beside(set, files.s[i]);
    }
    drop_duplicates(set, first_case);
done:
    kbi_strlist_free(&files);
    kbi_strlist_free(&real);
    return rc;
}

size_t kbi_results_env_index(const kbi_result_set *set, const kbi_env_record *e)
{
    return e ? (size_t)(e - set->envs) : KBI_NO_CASE;
}

/* Shards "k/N" of one sweep: the same N > 1 and different k, on GPUs of the
 * same name, from the same profile and revision. */
static int same_sweep(const kbi_env_record *a, const kbi_env_record *b)
{
    int ka = 0, na = 0, kb = 0, nb = 0;
    if (sscanf(kbi_jstr(a->json, "shard", NULL), "%d/%d", &ka, &na) != 2 ||
        sscanf(kbi_jstr(b->json, "shard", NULL), "%d/%d", &kb, &nb) != 2)
        return 0;
    return na > 1 && na == nb && ka != kb && strcmp(a->device_name, b->device_name) == 0 &&
           strcmp(a->git_revision, b->git_revision) == 0 &&
           strcmp(kbi_jstr(a->json, "profile", NULL), kbi_jstr(b->json, "profile", NULL)) == 0;
}

/* The sweep run `env` belongs to, named by its first run in file order
 * (env itself when it is not a shard); KBI_NO_CASE stays KBI_NO_CASE. */
size_t kbi_results_sweep_of(const kbi_result_set *set, size_t env)
{
    if (env == KBI_NO_CASE)
        return KBI_NO_CASE;
    for (size_t j = 0; j < env; j++)
        if (same_sweep(&set->envs[j], &set->envs[env]))
            return kbi_results_sweep_of(set, j);
    return env;
}
