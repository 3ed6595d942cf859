/* Small helpers shared by the Criterion tests: a scratch folder per test
 * (made by .init, removed with its contents by .fini), reading a whole
 * file, and running a profile through the runner, or the kbench program, with the real
 * plugins.
 * Include after defining _XOPEN_SOURCE 700. */
#ifndef KBENCH_TEST_HELPERS_H
#define KBENCH_TEST_HELPERS_H

#include <criterion/criterion.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "report.h"
#include "results.h"
#include "runner.h"

/* The current test's scratch folder. */
static char tmp[256];

/* Makes /tmp/kbench-test-WHAT-XXXXXX into tmp. */
static inline void make_tmp_named(const char *what)
{
    snprintf(tmp, sizeof tmp, "/tmp/kbench-test-%s-XXXXXX", what);
    cr_assert_not_null(mkdtemp(tmp));
}

static inline int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* Removes tmp and everything in it. */
static inline void remove_tmp(void)
{
    if (tmp[0])
        nftw(tmp, remove_one, 16, FTW_DEPTH | FTW_PHYS);
    tmp[0] = '\0';
}

/* The whole file as a NUL-terminated string (caller frees); fails the test
 * when it cannot be read. */
static inline char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;
    cr_assert_not_null(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)n + 1);
    cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* What the redirected stream f holds so far (caller frees). */
static inline char *redirected(FILE *f)
{
    kbi_buf b = {0};
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk - 1, f)) > 0) {
        chunk[n] = '\0';
        kbi_buf_printf(&b, "%s", chunk);
    }
    return b.data ? b.data : kbi_strdup("");
}

/* kbi_run(a), then its results (a->out_dir/results.jsonl) loaded into *set; returns kbi_run's
 * exit code. */
static inline int run_and_load(kbi_run_args *a, kbi_result_set *set)
{
    char results[4200], err[KBI_ERR_SIZE];
    char *argv[] = {"run", NULL};
    int rc;
    a->argc = 1;
    a->argv = argv;
    rc = kbi_run(a);
    snprintf(results, sizeof results, "%s/results.jsonl", a->out_dir);
    memset(set, 0, sizeof *set);
    cr_assert_eq(kbi_results_load(set, results, err), KBI_OK, "%s", err);
    return rc;
}

/* Runs the profile at `profile` with the real plugins into tmp/out (kbench run) and loads
 * its results into *set; returns kbi_run's exit code. */
static inline int run_profile(const char *profile, kbi_result_set *set)
{
    char out[300];
    kbi_run_args a = {.device = -1, .plugins_dir = KBENCH_TEST_PLUGINS, .profile_path = profile};
    snprintf(out, sizeof out, "%s/out", tmp);
    a.out_dir = out;
    return run_and_load(&a, set);
}

/* Metric `name` of case c, or NULL when the case reported none by that name. */
static inline const kbi_metric *case_metric(const kbi_case_result *c, const char *name)
{
    for (size_t k = 0; k < c->n_metrics; k++)
        if (strcmp(c->metrics[k].name, name) == 0)
            return &c->metrics[k];
    return NULL;
}

/* run_profile on `text`, written to tmp/p.ini first. */
static inline int run_profile_text(const char *text, kbi_result_set *set)
{
    char profile[300];
    FILE *f;
    snprintf(profile, sizeof profile, "%s/p.ini", tmp);
    f = fopen(profile, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    return run_profile(profile, set);
}

/* Runs the kbench program (a process of its own, as a user runs it) on profile text, written
 * to tmp/NAME.ini, into tmp/NAME with the real plugins and the extra arguments `args`, and
 * loads its results into *set.  Returns its exit code (-1: it did not exit). */
static inline int run_binary_text(const char *text, const char *name, const char *args,
                                  kbi_result_set *set)
{
    char profile[300], out[300], results[320], cmd[2000], err[KBI_ERR_SIZE];
    FILE *f;
    int rc;
    snprintf(profile, sizeof profile, "%s/%s.ini", tmp, name);
    f = fopen(profile, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    snprintf(out, sizeof out, "%s/%s", tmp, name);
    snprintf(cmd, sizeof cmd, "%s run %s --out %s --plugins %s %s >/dev/null", KBENCH_TEST_BINARY,
             profile, out, KBENCH_TEST_PLUGINS, args);
    rc = system(cmd);
    snprintf(results, sizeof results, "%s/results.jsonl", out);
    memset(set, 0, sizeof *set);
    cr_assert_eq(kbi_results_load(set, results, err), KBI_OK, "%s", err);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* Reports the results file at path into tmp/rep, charts drawn (draw) or as scripts only;
 * returns report.md (caller frees). */
static inline char *report_of_file(const char *path, int draw)
{
    kbi_result_set set = {0};
    kbi_report_options opt = {.gnuplot = draw ? NULL : ""};
    char out[512], md[600], err[KBI_ERR_SIZE] = "";
    const char *inputs[1] = {path};
    cr_assert_eq(kbi_results_load_inputs(&set, inputs, 1, err), KBI_OK, "%s", err);
    snprintf(out, sizeof out, "%s/rep", tmp);
    cr_assert_eq(kbi_report_write(&set, out, &opt, err), KBI_OK, "%s", err);
    kbi_results_free(&set);
    snprintf(md, sizeof md, "%s/report.md", out);
    return slurp(md);
}

#endif
