/* Named baselines (baseline.h): the GPU slug, names, `kbench baseline save` and `list`, and
 * `kbench compare NAME RESULTS` finding NAME for the results' GPU. */
#define _XOPEN_SOURCE 700
#include "helpers.h"

#include <criterion/redirect.h>
#include <unistd.h>

#include "baseline.h"
#include "compare.h"
#include "manifest.h"
#include "synthetic.h"

TestSuite(baseline, .timeout = 60);

Test(baseline, gpu_slugs)
{
    static const char *const cases[][2] = {
        {"NVIDIA H200", "h200"},
        {"NVIDIA H100 80GB HBM3", "h100-80gb-hbm3"},
        {"NVIDIA A100-SXM4-80GB", "a100-sxm4-80gb"},
        {"NVIDIA GeForce RTX 4090", "geforce-rtx-4090"},
        {"Tesla V100-SXM2-16GB", "tesla-v100-sxm2-16gb"},
        {"  NVIDIA  H200 NVL ", "h200-nvl"},
        {"NVIDIAX", "nvidiax"},
        {" -- ", ""},
    };
    char slug[64];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        kbi_gpu_slug(cases[i][0], slug, sizeof slug);
        cr_expect_str_eq(slug, cases[i][1], "slug of '%s'", cases[i][0]);
    }
    kbi_gpu_slug("NVIDIA H100 80GB HBM3", slug, 6);
    cr_expect_str_eq(slug, "h100", "cut at the buffer, never ending in '-'");
}

Test(baseline, names)
{
    static const char *const good[] = {"sgemm", "labeling/2d", "stream-hot", "v1.2_x"};
    static const char *const bad[] = {"",       "/abs", "a//b", "a/", "../x",
                                      "a/../b", ".",    "a b",  "a;b"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
        cr_expect(kbi_baseline_name_ok(good[i]), "%s", good[i]);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        cr_expect_not(kbi_baseline_name_ok(bad[i]), "'%s'", bad[i]);
    /* An existing path is a path, never a name. */
    cr_expect_not(kbi_baseline_is_name("/tmp"));
    cr_expect(kbi_baseline_is_name("no-such-baseline-here"));
}

static char root[400], run_a[400], run_b[400], no_gpu[400];

/* Two runs on the H200 (two cases, then one of them again) and one that names no GPU. */
static void setup(void)
{
    kbi_case_result c[2];
    make_tmp_named("baseline");
    snprintf(root, sizeof root, "%s/baselines", tmp);
    snprintf(run_a, sizeof run_a, "%s/a/results.jsonl", tmp);
    snprintf(run_b, sizeof run_b, "%s/b/results.jsonl", tmp);
    snprintf(no_gpu, sizeof no_gpu, "%s/cpu/results.jsonl", tmp);
    for (int i = 0; i < 3; i++) {
        char dir[420];
        snprintf(dir, sizeof dir, "%s/%s", tmp, i == 0 ? "a" : i == 1 ? "b" : "cpu");
        cr_assert_eq(mkdir(dir, 0755), 0);
    }
    syn_case(&c[0], "fx", "tiled", "{\"n\":8}", "n=8", 1e-4);
    syn_case(&c[1], "fx", "tiled", "{\"n\":16}", "n=16", 4e-4);
    syn_write(run_a, "NVIDIA H200", "run-a", c, 2);
    syn_write(run_b, "NVIDIA H200", "run-b", &c[1], 1);
    syn_write(no_gpu, NULL, "run-c", c, 1);
    syn_free(&c[0]);
    syn_free(&c[1]);
}

/* kbench baseline ARGS... --baselines root; returns its exit code. */
static int baseline_cmd(const char *a, const char *b, const char *c, const char *d)
{
    char *argv[10];
    int argc = 0;
    argv[argc++] = "baseline";
    argv[argc++] = "--baselines";
    argv[argc++] = root;
    argv[argc++] = (char *)a;
    if (b)
        argv[argc++] = (char *)b;
    if (c)
        argv[argc++] = (char *)c;
    if (d)
        argv[argc++] = (char *)d;
    argv[argc] = NULL;
    return kbi_cmd_baseline(argc, argv);
}

/* Expects files a and b to hold the same bytes. */
static void expect_same_file(const char *a, const char *b, const char *what)
{
    char *x = slurp(a), *y = slurp(b);
    cr_expect_str_eq(x, y, "%s", what);
    free(x);
    free(y);
}

Test(baseline, save_files_the_run_under_its_gpu_with_a_manifest, .init = setup, .fini = remove_tmp)
{
    char dir[500], file[520], why[KBI_ERR_SIZE], *out, *err;
    json_t *m, *run;
    cr_redirect_stdout();
    cr_redirect_stderr();
    cr_assert_eq(baseline_cmd("save", "ref", run_a, NULL), 0);
    snprintf(dir, sizeof dir, "%s/h200/ref", root);
    snprintf(file, sizeof file, "%s/results.jsonl", dir);
    expect_same_file(file, run_a, "the results are copied unchanged");
    m = kbi_manifest_read(dir, why, sizeof why);
    cr_assert_not_null(m, "no manifest: %s", why);
    cr_assert_eq(json_array_size(json_object_get(m, "runs")), 1);
    run = json_array_get(json_object_get(m, "runs"), 0);
    cr_expect_str_eq(json_string_value(json_object_get(run, "gpu")), "NVIDIA H200");
    cr_expect_str_eq(json_string_value(json_object_get(run, "file")), "results.jsonl");
    cr_expect_str_eq(json_string_value(json_object_get(run, "profile")), "profiles/test.ini");
    cr_expect_eq(json_integer_value(json_object_get(run, "cases")), 2);
    json_decref(m);
    /* Never over a baseline without --force; with it, the old results go. */
    cr_expect_eq(baseline_cmd("save", "ref", run_b, NULL), 2);
    cr_expect_eq(baseline_cmd("save", "ref", run_a, run_b), 2);
    cr_expect_eq(baseline_cmd("save", "--force", "ref", run_b), 0);
    expect_same_file(file, run_b, "--force replaced the results");
    /* Several files: each its own results-NNN.jsonl, all in the manifest. */
    cr_expect_eq(baseline_cmd("save", "both/parts", run_a, run_b), 0);
    snprintf(dir, sizeof dir, "%s/h200/both/parts", root);
    snprintf(file, sizeof file, "%s/results-002.jsonl", dir);
    cr_expect_eq(access(file, F_OK), 0, "%s", file);
    m = kbi_manifest_read(dir, why, sizeof why);
    cr_assert_not_null(m, "%s", why);
    cr_expect_eq(json_array_size(json_object_get(m, "runs")), 2);
    json_decref(m);
    /* Results of no GPU go nowhere unless --gpu says where; a bad name or slug is refused;
     * results inside the baseline already are refused (nothing to copy). */
    cr_expect_eq(baseline_cmd("save", "cpu-ref", no_gpu, NULL), 2);
    cr_expect_eq(baseline_cmd("save", "--gpu", "ci-box", "cpu-ref"), 2, "no RESULTS");
    {
        char *argv[] = {"baseline", "--baselines", root,   "--gpu", "ci-box",
                        "save",     "cpu-ref",     no_gpu, NULL};
        cr_expect_eq(kbi_cmd_baseline(8, argv), 0);
        snprintf(file, sizeof file, "%s/ci-box/cpu-ref/results.jsonl", root);
        cr_expect_eq(access(file, F_OK), 0, "%s", file);
    }
    cr_expect_eq(baseline_cmd("save", "../up", run_a, NULL), 2);
    snprintf(file, sizeof file, "%s/h200/ref/results.jsonl", root);
    cr_expect_eq(baseline_cmd("save", "--force", "ref", file), 2);
    fflush(stdout);
    fflush(stderr);
    out = redirected(cr_get_redirected_stdout());
    err = redirected(cr_get_redirected_stderr());
    cr_expect(strstr(out, "/baselines/h200/ref\n") != NULL, "save prints the folder: %s", out);
    cr_expect(strstr(err, "holds a baseline already (") != NULL, "%s", err);
    cr_expect(strstr(err, "--force replaces it") != NULL, "%s", err);
    cr_expect(strstr(err, "the run names no GPU") != NULL, "%s", err);
    cr_expect(strstr(err, "bad NAME '../up'") != NULL, "%s", err);
    cr_expect(strstr(err, "lies in") != NULL, "%s", err);
    free(out);
    free(err);
}

Test(baseline, list_shows_each_baseline_by_gpu, .init = setup, .fini = remove_tmp)
{
    char *out, *err;
    cr_redirect_stdout();
    cr_redirect_stderr();
    cr_assert_eq(baseline_cmd("list", NULL, NULL, NULL), 0, "nothing yet is no error");
    cr_assert_eq(baseline_cmd("save", "sgemm", run_a, NULL), 0);
    cr_assert_eq(baseline_cmd("save", "labeling/2d", run_b, NULL), 0);
    {
        /* A reference of two runs (two profiles, two revisions) under a longer GPU slug. */
        char dir[500], file[520];
        FILE *f;
        snprintf(dir, sizeof dir, "%s/h100-80gb-hbm3", root);
        cr_assert_eq(mkdir(dir, 0755), 0);
        snprintf(dir, sizeof dir, "%s/h100-80gb-hbm3/parts", root);
        cr_assert_eq(mkdir(dir, 0755), 0);
        snprintf(file, sizeof file, "%s/manifest.json", dir);
        cr_assert_not_null(f = fopen(file, "w"));
        fputs("{\"schema\":\"kbench-manifest\",\"version\":1,\"runs\":["
              "{\"profile\":\"p1.ini\",\"git_revision\":\"aaaaaaaaaaaa\",\"cases\":2,"
              "\"date\":\"2026-12-01T10:00:00Z\"},"
              "{\"profile\":\"p2.ini\",\"git_revision\":\"bbbbbbbbbbbb\",\"cases\":1,"
              "\"date\":\"2026-12-02T10:00:00Z\"}]}\n",
              f);
        cr_assert_eq(fclose(f), 0);
    }
    fflush(stdout);
    free(redirected(cr_get_redirected_stdout()));
    cr_assert_eq(baseline_cmd("list", NULL, NULL, NULL), 0);
    cr_expect_eq(baseline_cmd("list", "extra", NULL, NULL), 2);
    cr_expect_eq(baseline_cmd("remove", "sgemm", NULL, NULL), 2);
    fflush(stdout);
    fflush(stderr);
    out = redirected(cr_get_redirected_stdout());
    err = redirected(cr_get_redirected_stderr());
    cr_expect(strstr(err, "no baselines") != NULL, "%s", err);
    cr_expect(strstr(out, "gpu ") == out, "a heading first: %s", out);
    /* name, profile, revision, date, cases, runs: each column as wide as its widest cell;
     * several runs show their first profile and revision and how many more */
    cr_expect(strstr(out, "h100-80gb-hbm3 parts       p1.ini +1         aaaaaaaaaaaa +1 "
                          "2026-12-02T10:00:00Z     3    2\n") != NULL,
              "%s", out);
    cr_expect(strstr(out, "h200           labeling/2d profiles/test.ini 0123456789ab    "
                          "2026-12-01T10:00:00Z     1    1\n") != NULL,
              "%s", out);
    cr_expect(strstr(out, "h200           sgemm       profiles/test.ini") != NULL, "aligned: %s",
              out);
    cr_expect(strstr(out, "labeling/2d") < strstr(out, "sgemm"), "by name");
    free(out);
    free(err);
}

Test(baseline, compare_finds_a_name_for_the_results_gpu, .init = setup, .fini = remove_tmp)
{
    char *err, expect[600];
    char *by_name[] = {"compare", "--baselines", root, "ref", run_a, NULL};
    char *unknown[] = {"compare", "--baselines", root, "nosuch", run_a, NULL};
    char *cpu[] = {"compare", "--baselines", root, "ref", no_gpu, NULL};
    cr_redirect_stdout();
    cr_redirect_stderr();
    cr_assert_eq(baseline_cmd("save", "ref", run_a, NULL), 0);
    cr_expect_eq(kbi_cmd_compare(5, by_name), 0, "the same run: OK");
    cr_expect_eq(kbi_cmd_compare(5, unknown), 2);
    cr_expect_eq(kbi_cmd_compare(5, cpu), 2, "results of no GPU name no baseline");
    {
        /* $KBENCH_BASELINES stands for --baselines. */
        char *env_named[] = {"compare", "ref", run_a, NULL};
        setenv(KBI_BASELINES_ENV, root, 1);
        cr_expect_eq(kbi_cmd_compare(3, env_named), 0);
        unsetenv(KBI_BASELINES_ENV);
    }
    fflush(stderr);
    err = redirected(cr_get_redirected_stderr());
    snprintf(expect, sizeof expect,
             "kbench compare: baseline ref for the results' GPU (NVIDIA H200): %s/h200/ref\n",
             root);
    cr_expect(strstr(err, expect) != NULL, "says which it used: %s", err);
    cr_expect(strstr(err, "no baseline of that name for the results' GPU (NVIDIA H200)") != NULL,
              "%s", err);
    cr_expect(strstr(err, "h200 has ref") != NULL, "lists what there is: %s", err);
    cr_expect(strstr(err, "the run names no GPU") != NULL, "%s", err);
    free(err);
}
