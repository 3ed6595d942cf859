/* The references a user compares against (baselines/h200/<folder>/) still match the shipped
 * profiles they were measured from: every case of a reference is a case of its profile
 * today (by full id: every parameter, which is what a reference written before ids named only
 * the problem holds as its id), a reference measured from the whole profile holds every case
 * of it, `compare` pairs each of its cases with a run of the profile today (new ids against
 * its old ones, with no heuristic pairing), and each has a manifest (manifest.json) that lists
 * the runs it holds.  A plugin that renames a parameter, or a profile that gains a case, fails
 * here until the reference is re-measured (or the id change is made readable by compare). */
#define _DEFAULT_SOURCE /* mkstemp */
#include <criterion/criterion.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compare.h"
#include "loader.h"
#include "manifest.h"
#include <dirent.h>
#include <sys/stat.h>

#include "profile.h"
#include "results.h"
#include "resultset.h"
#include "worker.h"

typedef struct reference {
    const char *folder;  /* under baselines/h200 */
    const char *profile; /* under the source folder */
} reference;

static const reference references[] = {
    {"stream", "profiles/stream.ini"},   {"stream-hot", "profiles/stream-hot.ini"},
    {"sgemm", "profiles/sgemm.ini"},     {"sgemm-configs", "profiles/sgemm-configs.ini"},
    {"md", "profiles/md.ini"},           {"labeling", "profiles/labeling.ini"},
    {"permute", "profiles/permute.ini"},
};

/* Whether full_id is that of one of the n cases. */
static int has_case(const kbi_case *cases, size_t n, const char *full_id)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(cases[i].full_id, full_id) == 0)
            return 1;
    return 0;
}

/* Whether the set holds a case of that full id (of any run). */
static int holds(const kbi_result_set *set, const char *full_id)
{
    for (size_t i = 0; i < set->n_cases; i++)
        if (strcmp(kbi_case_full_id(&set->cases[i]), full_id) == 0)
            return 1;
    return 0;
}

/* A results file at path as a run of every case of profile p would begin it today: each case's
 * record (its id, params and params_text as kbench writes them now), skipped, read back into
 * set.  Nothing is measured. */
static void run_today(const kbi_profile *p, kbi_case *cases, size_t n, const char *path,
                      kbi_result_set *set)
{
    kbi_run_ctx ctx = {.profile = p};
    kbi_results_writer w;
    char err[KBI_ERR_SIZE];
    json_t *env = json_object();
    cr_assert_eq(kbi_results_open(&w, path, "today", err), KBI_OK, "%s", err);
    cr_assert_eq(kbi_results_write(&w, "env", env, err), KBI_OK, "%s", err);
    json_decref(env);
    for (size_t i = 0; i < n; i++) {
        kbi_case_result rec;
        json_t *obj;
        kbi_case_record_init(&ctx, &cases[i], &rec);
        kbi_case_record_set_status(&rec, KBI_ST_SKIPPED, "not measured");
        obj = kbi_case_record_json(&rec);
        cr_assert_eq(kbi_results_write(&w, "case", obj, err), KBI_OK, "%s", err);
        json_decref(obj);
        kbi_case_result_free(&rec);
    }
    kbi_results_close(&w);
    cr_assert_eq(kbi_results_load(set, path, err), KBI_OK, "%s", err);
}

/* compare pairs every case of the reference with its case of a run today, by full id or id,
 * never by the heuristic for a parameter only one side has; returns how many it paired. */
static size_t paired_today(const kbi_result_set *ref, const kbi_result_set *today,
                           const char *folder)
{
    kbi_comparison cmp;
    char err[KBI_ERR_SIZE];
    size_t matched = 0;
    cr_assert_eq(kbi_compare_sets(ref, today, NULL, &cmp, err), KBI_OK, "%s", err);
    for (size_t i = 0; i < cmp.n_rows; i++) {
        const kbi_compare_row *row = &cmp.rows[i];
        if (row->base && !row->res)
            cr_expect_fail("%s: compare finds no case of a run today for %s", folder,
                           row->base->id);
        matched += row->base && row->res;
    }
    for (size_t i = 0; i < cmp.n_warnings; i++)
        cr_expect(strstr(cmp.warnings[i], "paired across a parameter") == NULL, "%s: %s", folder,
                  cmp.warnings[i]);
    kbi_comparison_free(&cmp);
    return matched;
}

/* A run of the whole profile as shipped: no filter, one shard, the profile file itself. */
static int whole_profile(const kbi_env_record *e, const char *profile)
{
    json_t *filter = json_object_get(e->json, "filter");
    const char *shard = json_string_value(json_object_get(e->json, "shard"));
    const char *used = json_string_value(json_object_get(e->json, "profile"));
    return (!filter || json_is_null(filter)) && (!shard || strcmp(shard, "1/1") == 0) && used &&
           strcmp(used, profile) == 0;
}

/* Checks baselines/GPU/FOLDER against its profile: its ids, the whole profile's cases, its
 * manifest, and compare's pairing with a run today. */
static void check_reference(kbi_plugin_set *plugins, const char *gpu, const reference *ref)
{
    char err[KBI_ERR_SIZE], path[4096];
    {
        kbi_profile p;
        kbi_buf errors = {0};
        kbi_case *cases = NULL;
        size_t n = 0, missing = 0;
        kbi_result_set set = {0};
        const char *inputs[1];
        snprintf(path, sizeof path, "%s/%s", KBENCH_TEST_SOURCE_DIR, ref->profile);
        cr_assert_eq(kbi_profile_load(path, plugins, &p, &errors), KBI_OK, "%s: %s", path,
                     errors.data ? errors.data : "");
        cr_assert_eq(kbi_profile_cases(&p, &cases, &n), KBI_OK, "%s", path);
        snprintf(path, sizeof path, "%s/baselines/%s/%s", KBENCH_TEST_SOURCE_DIR, gpu, ref->folder);
        inputs[0] = path;
        cr_assert_eq(kbi_results_load_inputs(&set, inputs, 1, err), KBI_OK, "%s", err);
        cr_assert_gt(set.n_cases, 0, "%s: no cases", path);
        for (size_t i = 0; i < set.n_cases; i++)
            cr_expect(has_case(cases, n, kbi_case_full_id(&set.cases[i])),
                      "baselines/%s/%s holds %s, which %s no longer has: re-measure the "
                      "reference (or keep the id)",
                      gpu, ref->folder, set.cases[i].id, ref->profile);
        /* A reference of the whole profile holds every case of it. */
        for (size_t e = 0; e < set.n_envs; e++) {
            if (!whole_profile(&set.envs[e], ref->profile))
                continue;
            for (size_t i = 0; i < n; i++)
                if (!holds(&set, cases[i].full_id) && missing++ < 5)
                    cr_expect_fail("baselines/%s/%s (a run of the whole %s) lacks %s: the "
                                   "profile gained it; re-measure the reference",
                                   gpu, ref->folder, ref->profile, cases[i].id);
            break;
        }
        cr_expect_eq(missing, 0, "%s: %zu cases of the profile missing", ref->folder, missing);
        /* Its manifest (kbench manifest) lists each run the folder holds, with its cases. */
        {
            char why[KBI_ERR_SIZE] = "";
            json_t *m = kbi_manifest_read(path, why, sizeof why);
            json_int_t listed = 0;
            size_t k;
            json_t *run;
            cr_expect_not_null(m,
                               "baselines/%s/%s has no manifest.json (%s): run `kbench "
                               "manifest baselines/%s/%s`",
                               gpu, ref->folder, why, gpu, ref->folder);
            json_array_foreach(json_object_get(m, "runs"), k, run) listed +=
                json_integer_value(json_object_get(run, "cases"));
            cr_expect(m == NULL || json_array_size(json_object_get(m, "runs")) == set.n_envs,
                      "baselines/%s/%s: its manifest lists %zu runs, the folder holds %zu", gpu,
                      ref->folder, json_array_size(json_object_get(m, "runs")), set.n_envs);
            cr_expect(m == NULL || (size_t)listed == set.n_cases,
                      "baselines/%s/%s: its manifest lists %lld cases, the folder holds %zu", gpu,
                      ref->folder, (long long)listed, set.n_cases);
            json_decref(m);
        }
        /* compare of the reference against a run of its profile today pairs every case. */
        {
            kbi_result_set today = {0};
            char file[] = "/tmp/kbench-baselines-XXXXXX";
            int fd = mkstemp(file);
            cr_assert(fd >= 0);
            close(fd);
            run_today(&p, cases, n, file, &today);
            cr_expect_eq(paired_today(&set, &today, path), set.n_cases,
                         "baselines/%s/%s: compare pairs every case with a run today", gpu,
                         ref->folder);
            kbi_results_free(&today);
            unlink(file);
        }
        kbi_results_free(&set);
        kbi_cases_free(cases, n);
        kbi_profile_free(&p);
        kbi_buf_free(&errors);
    }
}

/* Every reference of baselines/h200 (all of them must be there) and of any other GPU's folder
 * (those it has). */
Test(baselines, every_reference_matches_its_profile)
{
    const char *dirs[] = {KBENCH_TEST_PLUGINS, NULL};
    int req[] = {1};
    kbi_plugin_set plugins;
    char err[KBI_ERR_SIZE], root[4096];
    DIR *d;
    struct dirent *ent;
    cr_assert_eq(kbi_plugins_load(dirs, req, &plugins, err), KBI_OK, "%s", err);
    snprintf(root, sizeof root, "%s/baselines", KBENCH_TEST_SOURCE_DIR);
    d = opendir(root);
    cr_assert_not_null(d, "%s", root);
    while ((ent = readdir(d)) != NULL) {
        struct stat st;
        char gpu_dir[4400], folder[8800];
        snprintf(gpu_dir, sizeof gpu_dir, "%s/%s", root, ent->d_name);
        if (ent->d_name[0] == '.' || stat(gpu_dir, &st) != 0 || !S_ISDIR(st.st_mode))
            continue;
        for (size_t r = 0; r < sizeof references / sizeof *references; r++) {
            snprintf(folder, sizeof folder, "%s/%s", gpu_dir, references[r].folder);
            if (strcmp(ent->d_name, "h200") == 0 || stat(folder, &st) == 0)
                check_reference(&plugins, ent->d_name, &references[r]);
        }
    }
    closedir(d);
    kbi_plugins_free(&plugins);
}
