/* A results folder's manifest (manifest.h): `kbench run` writes it, `kbench manifest DIR`
 * rewrites it, and compare names the reference from it and warns when the profile a run was
 * measured from has gained or lost cases since. */
#define _DEFAULT_SOURCE
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "manifest.h"
#include "resultset.h"
#include "runner.h"

static char dir[64];

static void make_dir(void)
{
    strcpy(dir, "/tmp/kbench-manifest-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void remove_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    (void)system(cmd);
}

TestSuite(manifest, .init = make_dir, .fini = remove_dir, .timeout = 120);

#define PROFILE                                                                                    \
    "[run]\nwarmup = 1\nmin_samples = 3\nmin_time = 0\nmax_time = 0.1\ntimeout = 5\n"              \
    "[good]\nvariants = sum\nn = "

static void write_profile(const char *path, const char *n_values)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "%s%s\n", PROFILE, n_values);
    fclose(f);
}

/* Runs the profile at `profile` into dir/NAME; the output folder into out. */
static void run_into(const char *profile, const char *name, char *out, size_t n)
{
    char *argv[] = {"run", NULL};
    kbi_run_args a = {.device = -1, .argc = 1, .argv = argv};
    snprintf(out, n, "%s/%s", dir, name);
    a.profile_path = profile;
    a.out_dir = out;
    a.plugins_dir = KBENCH_TEST_FIXTURES;
    cr_assert_eq(kbi_run(&a), 0);
}

Test(manifest, run_writes_it_and_compare_warns_when_the_profile_moved_on)
{
    char profile[128], out[128], why[KBI_ERR_SIZE];
    kbi_result_set ref = {0};
    kbi_comparison c = {0};
    const char *inputs[1];
    json_t *m, *run;
    cr_redirect_stdout();
    cr_redirect_stderr();
    snprintf(profile, sizeof profile, "%s/p.ini", dir);
    write_profile(profile, "8, 16");
    run_into(profile, "out", out, sizeof out);
    m = kbi_manifest_read(out, why, sizeof why);
    cr_assert_not_null(m, "kbench run wrote no manifest: %s", why);
    cr_assert_eq(json_array_size(json_object_get(m, "runs")), 1);
    run = json_array_get(json_object_get(m, "runs"), 0);
    cr_expect_str_eq(json_string_value(json_object_get(run, "file")), "results.jsonl");
    cr_expect_str_eq(json_string_value(json_object_get(run, "profile")), profile);
    cr_expect_eq(json_integer_value(json_object_get(run, "cases")), 2);
    cr_expect(json_is_true(json_object_get(run, "complete")));
    cr_expect_not_null(json_string_value(json_object_get(run, "git_revision")));
    cr_expect_not_null(strstr(json_string_value(json_object_get(run, "command")), "kbench run"));
    json_decref(m);

    inputs[0] = out;
    cr_assert_eq(kbi_results_load_inputs(&ref, inputs, 1, why), KBI_OK, "%s", why);
    /* The profile as measured: the reference is named, no warning about it. */
    setenv("KBENCH_PLUGIN_PATH", KBENCH_TEST_FIXTURES, 1);
    kbi_compare_use_manifest(&c, out, &ref);
    cr_assert_eq(c.reference.n, 1);
    cr_expect_not_null(strstr(c.reference.s[0], profile), "%s", c.reference.s[0]);
    cr_expect_not_null(strstr(c.reference.s[0], "2 cases"), "%s", c.reference.s[0]);
    cr_expect_eq(c.n_warnings, 0, "%s", c.n_warnings ? c.warnings[0] : "");
    kbi_comparison_free(&c);
    /* The profile gained a case and lost one: both said. */
    write_profile(profile, "16, 32");
    kbi_compare_use_manifest(&c, out, &ref);
    cr_assert_eq(c.n_warnings, 2);
    cr_expect_not_null(strstr(c.warnings[0], "lacks 1 case that"), "%s", c.warnings[0]);
    cr_expect_not_null(strstr(c.warnings[0], "good/sum/n=32"), "%s", c.warnings[0]);
    cr_expect_not_null(strstr(c.warnings[1], "1 case of the reference (results.jsonl) is no "
                                             "longer in"),
                       "%s", c.warnings[1]);
    cr_expect_not_null(strstr(c.warnings[1], "good/sum/n=8"), "%s", c.warnings[1]);
    kbi_comparison_free(&c);
    /* A profile that no longer loads is said too; one that is gone is named as not checked. */
    write_profile(profile, "lots");
    kbi_compare_use_manifest(&c, out, &ref);
    cr_assert_eq(c.n_warnings, 1);
    cr_expect_not_null(strstr(c.warnings[0], "no longer loads"), "%s", c.warnings[0]);
    kbi_comparison_free(&c);
    remove(profile);
    kbi_compare_use_manifest(&c, out, &ref);
    cr_expect_eq(c.n_warnings, 0);
    cr_assert_eq(c.reference.n, 1);
    cr_expect_not_null(strstr(c.reference.s[0], "not checked"), "%s", c.reference.s[0]);
    kbi_comparison_free(&c);
    kbi_results_free(&ref);
}

Test(manifest, the_verb_writes_one_for_a_folder_of_runs)
{
    char profile[128], out[128], why[KBI_ERR_SIZE], cmd[1024], part[160];
    json_t *m;
    cr_redirect_stdout();
    cr_redirect_stderr();
    snprintf(profile, sizeof profile, "%s/p.ini", dir);
    write_profile(profile, "8");
    /* Two runs, the parts of a reference, in one folder: its manifest lists both. */
    run_into(profile, "ref/part1", out, sizeof out);
    run_into(profile, "ref/part2", out, sizeof out);
    snprintf(part, sizeof part, "%s/ref/", dir); /* as a shell completes it */
    {
        char *argv[] = {"manifest", part, NULL};
        cr_assert_eq(kbi_cmd_manifest(2, argv), 0);
        char *none[] = {"manifest", "/nonexistent-folder", NULL};
        cr_expect_eq(kbi_cmd_manifest(2, none), 2);
    }
    m = kbi_manifest_read(part, why, sizeof why);
    cr_assert_not_null(m, "%s", why);
    cr_assert_eq(json_array_size(json_object_get(m, "runs")), 2);
    cr_expect_str_eq(
        json_string_value(json_object_get(json_array_get(json_object_get(m, "runs"), 0), "file")),
        "part1/results.jsonl");
    json_decref(m);
    /* A file that is not a manifest is a warning, not a silent default. */
    snprintf(cmd, sizeof cmd, "echo '{\"schema\":\"other\"}' > %s/ref/manifest.json", dir);
    cr_assert_eq(system(cmd), 0);
    cr_expect_null(kbi_manifest_read(part, why, sizeof why));
    cr_expect_not_null(strstr(why, "not a kbench manifest"), "%s", why);
}
