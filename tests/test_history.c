/* kbench history (history.h): synthetic runs of one profile over five revisions, where one
 * case gets 20% slower at the third: the history names that step and no other, follows cases
 * as compare matches them, orders the runs, copes with cases missing from some runs, exits 1
 * only when the newest step regressed, and refuses bad input with FILE:LINE. */
#define _XOPEN_SOURCE 700
#include "helpers.h"

#include <criterion/redirect.h>
#include <unistd.h>

#include "chart.h"
#include "history.h"
#include "resultset.h"
#include "synthetic.h"

TestSuite(history, .timeout = 60);

#define N_RUNS 5

/* The revision and time of run k (0-based): revisions "1111111...", "2222222...", ... */
static void revision_of(int k, char *out, size_t n)
{
    snprintf(out, n, "%c%c%c%c%c%c%c%c%c%c%c%c", '1' + k, '1' + k, '1' + k, '1' + k, '1' + k,
             '1' + k, '1' + k, '1' + k, '1' + k, '1' + k, '1' + k, '1' + k);
}

/* Writes run k into tmp/rK.jsonl (K from 1): revision `revision` (revision_of when NULL), at
 * hour `hour` of 2026-12-01, with the cases. */
static void write_run_at(int k, const char *revision, int hour, kbi_case_result *cases, size_t n)
{
    char path[300], run_id[64], time[64], rev[32];
    json_t *env;
    revision_of(k, rev, sizeof rev);
    snprintf(path, sizeof path, "%s/r%d.jsonl", tmp, k + 1);
    snprintf(run_id, sizeof run_id, "run-%d", k + 1);
    snprintf(time, sizeof time, "2026-12-01T%02d:00:00Z", hour);
    env =
        json_pack("{s:s,s:s,s:s,s:s,s:{s:s},s:{s:s,s:i}}", "time", time, "host", "testhost",
                  "git_revision", revision ? revision : rev, "profile", "profiles/test.ini",
                  "device", "name", "NVIDIA H200", "cpu", "model", "Test CPU", "logical_cores", 2);
    for (size_t i = 0; i < n; i++)
        cases[i].index = (long)i;
    syn_write_run(path, run_id, env, cases, n);
    json_decref(env);
}

/* A case of plugin fx, variant v, parameter n=1, at t seconds times (1 + k / 1000): every run
 * a little different (0.1%, far under the 2% threshold), so no two runs hold the same
 * samples. */
static void fx_case(kbi_case_result *c, const char *v, double t, int k)
{
    syn_case(c, "fx", v, "{\"n\":1}", "n=1", t * (1 + 0.001 * k));
}

/* Writes the five runs: a and c unchanged, b 20% slower from run 3 on, and b slower again
 * (x1.5) at run `late` (0: never); `drop` (0: none) is a run without c. */
static void write_runs(int late, int drop)
{
    for (int k = 0; k < N_RUNS; k++) {
        kbi_case_result cases[3];
        size_t n = 0;
        double b = 2e-3 * (k >= 2 ? 1.2 : 1.0) * (late && k + 1 >= late ? 1.5 : 1.0);
        fx_case(&cases[n++], "a", 1e-3, k);
        fx_case(&cases[n++], "b", b, k);
        if (k + 1 != drop)
            fx_case(&cases[n++], "c", 5e-4, k);
        write_run_at(k, NULL, 10 + k, cases, n);
        for (size_t i = 0; i < n; i++)
            syn_free(&cases[i]);
    }
}

static void setup(void)
{
    make_tmp_named("history");
}

/* Loads tmp/r1..r5.jsonl (in the order of `files`, "12345" when NULL) and builds the history. */
static void build(kbi_result_set *set, kbi_history *h, kbi_history_order order, const char *files)
{
    char paths[N_RUNS][300], err[KBI_ERR_SIZE] = "";
    const char *inputs[N_RUNS];
    kbi_compare_options opt = {0};
    memset(set, 0, sizeof *set);
    for (int i = 0; i < N_RUNS; i++) {
        snprintf(paths[i], sizeof paths[i], "%s/r%c.jsonl", tmp, files ? files[i] : '1' + i);
        inputs[i] = paths[i];
    }
    cr_assert_eq(kbi_results_load_inputs(set, inputs, N_RUNS, err), KBI_OK, "%s", err);
    cr_assert_eq(kbi_history_build(set, order, &opt, h, err), KBI_OK, "%s", err);
}

static const kbi_history_track *track_of(const kbi_history *h, const char *id)
{
    for (size_t t = 0; t < h->n_tracks; t++)
        if (strcmp(h->tracks[t].id, id) == 0)
            return &h->tracks[t];
    cr_assert_fail("no track %s", id);
    return NULL;
}

/* Counts the steps of h that compare called anything but same. */
static size_t steps_not_same(const kbi_history *h)
{
    size_t n = 0;
    for (size_t t = 0; t < h->n_tracks; t++)
        for (size_t k = 0; k < h->n_runs; k++)
            n += h->tracks[t].cells[k].judged &&
                 h->tracks[t].cells[k].out.verdict != KBI_VERDICT_SAME;
    return n;
}

/* history.csv (csv) or history.md (without charts) of h, as text (caller frees). */
static char *written(const kbi_history *h, int csv)
{
    char path[300];
    FILE *f;
    snprintf(path, sizeof path, "%s/h.%s", tmp, csv ? "csv" : "md");
    f = fopen(path, "w");
    cr_assert_not_null(f);
    cr_assert_eq(csv ? kbi_history_write_csv(h, f) : kbi_history_write_markdown(h, NULL, f),
                 KBI_OK);
    fclose(f);
    return slurp(path);
}

Test(history, names_the_one_step_that_got_slower, .init = setup, .fini = remove_tmp)
{
    kbi_result_set set;
    kbi_history h;
    const kbi_history_track *b;
    write_runs(0, 0);
    build(&set, &h, KBI_HISTORY_BY_TIME, NULL);
    cr_assert_eq(h.n_runs, N_RUNS);
    cr_assert_eq(h.n_tracks, 3, "a, b and c, each followed over the runs");
    b = track_of(&h, "fx/b/n=1");
    cr_expect_not(b->cells[0].judged, "the first run starts the history");
    cr_expect_eq(b->cells[2].out.verdict, KBI_VERDICT_SLOWER, "%s",
                 kbi_verdict_name(b->cells[2].out.verdict));
    cr_expect_eq(b->cells[2].from, 1, "judged against run 2");
    cr_expect(fabs(b->cells[2].out.ratio - 1.2 * 1.002 / 1.001) < 1e-3, "ratio %g",
              b->cells[2].out.ratio);
    cr_expect_eq(steps_not_same(&h), 1,
                 "the one step is the only change; unchanged cases "
                 "and b's other steps are same");
    cr_expect_eq(h.runs[2].count[KBI_VERDICT_SLOWER], 1);
    cr_expect_eq(h.runs[2].count[KBI_VERDICT_SAME], 2);
    cr_expect_eq(h.exit_code, KBI_EXIT_OK, "the newest step holds no regression");
    cr_expect_str_eq(h.runs[2].label, "3333333");
    kbi_history_free(&h);
    kbi_results_free(&set);
}

/* kbench history ARGS... with its stdout and stderr into *out and *err (callers free). */
static int history_cmd(char **out, char **err, const char *a1, const char *a2, const char *a3)
{
    char *argv[16], outdir[300], paths[N_RUNS][300];
    int argc = 0, rc;
    snprintf(outdir, sizeof outdir, "%s/out", tmp);
    argv[argc++] = "history";
    argv[argc++] = "--out";
    argv[argc++] = outdir;
    for (const char *const *x = (const char *const[]){a1, a2, a3, NULL}; *x; x++)
        argv[argc++] = (char *)*x;
    for (int i = 0; i < N_RUNS; i++) {
        snprintf(paths[i], sizeof paths[i], "%s/r%d.jsonl", tmp, i + 1);
        if (access(paths[i], F_OK) == 0)
            argv[argc++] = paths[i];
    }
    argv[argc] = NULL;
    rc = kbi_cmd_history(argc, argv);
    fflush(stdout);
    fflush(stderr);
    *out = redirected(cr_get_redirected_stdout());
    *err = redirected(cr_get_redirected_stderr());
    return rc;
}

static size_t count_of(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

Test(history, prints_the_step_and_writes_the_table_and_csv, .init = setup, .fini = remove_tmp)
{
    char *out, *err, path[300], *md, *csv;
    cr_redirect_stdout();
    cr_redirect_stderr();
    write_runs(0, 0);
    cr_assert_eq(history_cmd(&out, &err, "--no-charts", NULL, NULL), 0, "%s", err);
    cr_expect_eq(count_of(out, "slower: "), 1, "%s", out);
    cr_expect(strstr(out, "slower: fx/b/n=1: 2222222 -> 3333333 (run 2 -> 3): x1.20") != NULL, "%s",
              out);
    cr_expect(strstr(out, "newest step 4444444 -> 5555555: OK: 3 cases judged") != NULL, "%s", out);
    snprintf(path, sizeof path, "%s/out/history.md", tmp);
    md = slurp(path);
    cr_expect_eq(count_of(md, "**slower ×1.20"), 1, "%s", md);
    cr_expect(strstr(md, "| `fx/b/n=1` | 1.999 ms | 2.001 ms same | 2.404 ms **slower ×1.20") !=
                  NULL,
              "%s", md);
    cr_expect(strstr(md, "| r3 `3333333`") != NULL, "a column per run, named by its revision");
    cr_expect(strstr(md, "| r2 → r3 (`2222222` → `3333333`) | **1** | 0 | 0 | 2 | 0 |") != NULL,
              "the steps table counts the step's verdicts: %s", md);
    snprintf(path, sizeof path, "%s/out/history.csv", tmp);
    csv = slurp(path);
    cr_expect_eq(count_of(csv, "\n"), 1 + 3 * N_RUNS, "a header and a row per case and run");
    cr_expect(
        strstr(csv, "fx,fx/b/n=1,fx/b/n=1,3,3333333,333333333333,2026-12-01T12:00:00Z,run-3,ok,") !=
            NULL,
        "%s", csv);
    cr_expect(strstr(csv, ",2,2222222,slower,1.2") != NULL, "%s", csv);
    free(md);
    free(csv);
    free(out);
    free(err);
}

Test(history, exits_1_when_the_newest_step_regressed, .init = setup, .fini = remove_tmp)
{
    char *out, *err;
    cr_redirect_stdout();
    cr_redirect_stderr();
    write_runs(N_RUNS, 0);
    cr_expect_eq(history_cmd(&out, &err, "--no-charts", NULL, NULL), 1, "%s", err);
    cr_expect_eq(count_of(out, "slower: fx/b/n=1"), 2, "both steps: %s", out);
    cr_expect(strstr(out, "4444444 -> 5555555 (run 4 -> 5): x1.50") != NULL, "%s", out);
    cr_expect(strstr(out, "newest step 4444444 -> 5555555: REGRESSION: 1 slower") != NULL, "%s",
              out);
    free(out);
    free(err);
}

Test(history, orders_runs_by_time_whatever_order_they_are_given, .init = setup, .fini = remove_tmp)
{
    kbi_result_set set;
    kbi_history h;
    const kbi_history_track *b;
    write_runs(0, 0);
    build(&set, &h, KBI_HISTORY_BY_TIME, "41532");
    for (int k = 0; k < N_RUNS; k++) {
        char rev[32];
        revision_of(k, rev, sizeof rev);
        cr_expect_str_eq(h.runs[k].revision, rev, "run %d", k + 1);
    }
    b = track_of(&h, "fx/b/n=1");
    cr_expect_eq(b->cells[2].out.verdict, KBI_VERDICT_SLOWER);
    cr_expect_eq(steps_not_same(&h), 1);
    kbi_history_free(&h);
    kbi_results_free(&set);
    /* As given: 4 1 5 3 2, so b steps up at 1 -> 5 and down at 3 -> 2. */
    build(&set, &h, KBI_HISTORY_BY_INPUT, "41532");
    cr_expect_str_eq(h.runs[0].label, "4444444");
    b = track_of(&h, "fx/b/n=1");
    cr_expect_eq(b->cells[1].out.verdict, KBI_VERDICT_FASTER, "4 -> 1");
    cr_expect_eq(b->cells[2].out.verdict, KBI_VERDICT_SLOWER, "1 -> 5");
    cr_expect_eq(b->cells[4].out.verdict, KBI_VERDICT_FASTER, "3 -> 2");
    kbi_history_free(&h);
    kbi_results_free(&set);
}

/* Runs `git ARGS` in folder dir quietly; returns its exit status. */
static int git_in(const char *dir, const char *args)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "cd '%s' && git -c user.name=t -c user.email=t@t %s >/dev/null 2>&1",
             dir, args);
    return system(cmd);
}

Test(history, orders_runs_by_revision_in_the_git_history, .init = setup, .fini = remove_tmp)
{
    char repo[320], revs[N_RUNS][64], cwd[4096], err[KBI_ERR_SIZE] = "";
    kbi_result_set set;
    kbi_history h;
    kbi_compare_options opt = {0};
    FILE *p;
    snprintf(repo, sizeof repo, "%s/repo", tmp);
    cr_assert_eq(mkdir(repo, 0755), 0);
    if (git_in(repo, "init -q") != 0)
        cr_skip_test("git is not available here");
    for (int k = 0; k < N_RUNS; k++) {
        char cmd[600];
        cr_assert_eq(git_in(repo, "commit -q --allow-empty -m step"), 0);
        snprintf(cmd, sizeof cmd, "git -C '%s' rev-parse HEAD", repo);
        p = popen(cmd, "r");
        cr_assert(p && fgets(revs[k], sizeof revs[k], p));
        pclose(p);
        revs[k][12] = '\0'; /* kbench records 12 digits */
    }
    /* Measured in the order 3 1 5 2 4 of the commits (a bisection, say). */
    for (int k = 0; k < N_RUNS; k++) {
        static const int hour[N_RUNS] = {11, 13, 10, 14, 12};
        kbi_case_result c;
        fx_case(&c, "b", 2e-3 * (k >= 2 ? 1.2 : 1.0), k);
        write_run_at(k, revs[k], hour[k], &c, 1);
        syn_free(&c);
    }
    memset(&set, 0, sizeof set);
    {
        char paths[N_RUNS][300];
        const char *inputs[N_RUNS];
        for (int i = 0; i < N_RUNS; i++) {
            snprintf(paths[i], sizeof paths[i], "%s/r%d.jsonl", tmp, i + 1);
            inputs[i] = paths[i];
        }
        cr_assert_eq(kbi_results_load_inputs(&set, inputs, N_RUNS, err), KBI_OK, "%s", err);
    }
    cr_assert_not_null(getcwd(cwd, sizeof cwd));
    cr_assert_eq(chdir(repo), 0);
    cr_expect_eq(kbi_history_build(&set, KBI_HISTORY_BY_REVISION, &opt, &h, err), KBI_OK, "%s",
                 err);
    cr_assert_eq(chdir(cwd), 0);
    for (int k = 0; k < N_RUNS; k++)
        cr_expect_str_eq(h.runs[k].revision, revs[k], "commit order, not time order (run %d)",
                         k + 1);
    cr_expect_eq(track_of(&h, "fx/b/n=1")->cells[2].out.verdict, KBI_VERDICT_SLOWER);
    kbi_history_free(&h);
    /* Outside the checkout the revisions are unknown: an error naming the run's env record. */
    cr_assert_eq(chdir("/"), 0);
    cr_expect_eq(kbi_history_build(&set, KBI_HISTORY_BY_REVISION, &opt, &h, err), KBI_ERR_INPUT);
    cr_assert_eq(chdir(cwd), 0);
    cr_expect(strstr(err, "git rev-list HEAD") != NULL, "%s", err);
    kbi_history_free(&h);
    kbi_results_free(&set);
}

Test(history, judges_a_case_missing_from_a_run_against_its_last_run, .init = setup,
     .fini = remove_tmp)
{
    kbi_result_set set;
    kbi_history h;
    const kbi_history_track *c;
    char *md;
    write_runs(0, 3);
    build(&set, &h, KBI_HISTORY_BY_TIME, NULL);
    cr_assert_eq(h.n_tracks, 3, "c is one case, though run 3 lacks it");
    c = track_of(&h, "fx/c/n=1");
    cr_expect_null(c->cells[2].c);
    cr_expect(c->cells[3].judged);
    cr_expect_eq(c->cells[3].from, 1, "run 4 is judged against run 2");
    cr_expect_eq(c->cells[3].out.verdict, KBI_VERDICT_SAME);
    cr_expect_eq(h.runs[2].count[KBI_VERDICT_ONLY_BASELINE], 1, "missing in run 3");
    md = written(&h, 0);
    cr_expect(
        strstr(md, "| `fx/c/n=1` | 499.8 µs | 500.2 µs same | — | 501.2 µs same (since r2) |") !=
            NULL,
        "%s", md);
    free(md);
    kbi_history_free(&h);
    kbi_results_free(&set);
}

/* Rewrites tmp/rK.jsonl (K from 1) as measured on GPU model gpu instead of the H200. */
static void move_run_to_gpu(int k, const char *gpu)
{
    char path[300], *text, *at;
    const char *from = "\"NVIDIA H200\"";
    FILE *f;
    snprintf(path, sizeof path, "%s/r%d.jsonl", tmp, k);
    text = slurp(path);
    at = strstr(text, from);
    cr_assert_not_null(at, "%s names the H200", path);
    f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "%.*s\"%s\"%s", (int)(at - text), text, gpu, at + strlen(from));
    fclose(f);
    free(text);
}

/* The newest run on another GPU model, where b reads 1.5x slower: a step to another GPU is not
 * a regression (compare's rule), unless --across-gpus. */
Test(history, a_step_to_another_gpu_model_is_not_a_regression, .init = setup, .fini = remove_tmp)
{
    char *out, *err, path[300], *md;
    cr_redirect_stdout();
    cr_redirect_stderr();
    write_runs(N_RUNS, 0);
    move_run_to_gpu(N_RUNS, "NVIDIA H100 80GB HBM3");
    cr_expect_eq(history_cmd(&out, &err, "--no-charts", NULL, NULL), 0, "%s", err);
    cr_expect(strstr(out, "newest step 4444444 -> 5555555: UNSURE: 3 of 3 cases could not be "
                          "judged") != NULL,
              "%s", out);
    cr_expect_eq(count_of(out, "slower: fx/b/n=1"), 1, "only the step of run 3: %s", out);
    snprintf(path, sizeof path, "%s/out/history.md", tmp);
    md = slurp(path);
    cr_expect(strstr(md, "| `fx/b/n=1` | 1.999 ms | 2.001 ms same | 2.404 ms **slower ×1.201** | "
                         "2.406 ms same | 3.613 ms not comparable |") != NULL,
              "%s", md);
    cr_expect(strstr(md, "different GPUs: baseline NVIDIA H200, results NVIDIA H100 80GB HBM3") !=
                  NULL,
              "%s", md);
    free(md);
    free(out);
    free(err);
    cr_expect_eq(history_cmd(&out, &err, "--no-charts", "--fail-on-unsure", NULL), 1, "%s", err);
    free(out);
    free(err);
    cr_expect_eq(history_cmd(&out, &err, "--no-charts", "--across-gpus", NULL), 1, "%s", err);
    cr_expect(strstr(out, "4444444 -> 5555555 (run 4 -> 5): x1.50") != NULL, "%s", out);
    free(out);
    free(err);
}

/* Two cases whose ids changed between runs as kbench's ids did: e's id named a knob at its
 * default before version 4 (its full id is the same); f's plugin gained a parameter. */
Test(history, follows_cases_whose_ids_changed_as_compare_pairs_them, .init = setup,
     .fini = remove_tmp)
{
    kbi_result_set set;
    kbi_history h;
    for (int k = 0; k < N_RUNS; k++) {
        kbi_case_result cases[2];
        syn_case(&cases[0], "fx", "e", "{\"n\":2,\"knob\":4}", "n=2,knob=4", 1e-3 * (1 + 1e-3 * k));
        if (k >= 2) { /* ids name the problem: the knob at its default is left out */
            free(cases[0].id);
            cases[0].id = kbi_strdup("fx/e/n=2");
        }
        if (k < 3)
            syn_case(&cases[1], "fx", "f", "{\"n\":2}", "n=2", 3e-3 * (1 + 1e-3 * k));
        else
            syn_case(&cases[1], "fx", "f", "{\"n\":2,\"mode\":0}", "n=2,mode=0",
                     3e-3 * (1 + 1e-3 * k) * (k == 4 ? 1.3 : 1.0));
        write_run_at(k, NULL, 10 + k, cases, 2);
        syn_free(&cases[0]);
        syn_free(&cases[1]);
    }
    build(&set, &h, KBI_HISTORY_BY_TIME, NULL);
    cr_expect_eq(h.n_tracks, 2, "each case one track over all runs");
    cr_expect_eq(track_of(&h, "fx/e/n=2")->cells[2].out.verdict, KBI_VERDICT_SAME);
    cr_expect_eq(track_of(&h, "fx/f/n=2,mode=0")->cells[3].out.verdict, KBI_VERDICT_SAME,
                 "paired across the parameter it gained");
    cr_expect_eq(track_of(&h, "fx/f/n=2,mode=0")->cells[4].out.verdict, KBI_VERDICT_SLOWER);
    cr_expect_eq(steps_not_same(&h), 1);
    {
        /* The CSV names each row by the case's newest id, and by its id in that run. */
        char *csv = written(&h, 1);
        cr_expect(strstr(csv, "\nfx,fx/e/n=2,\"fx/e/n=2,knob=4\",1,") != NULL, "%s", csv);
        cr_expect(strstr(csv, "\nfx,fx/e/n=2,fx/e/n=2,3,") != NULL, "%s", csv);
        free(csv);
    }
    kbi_history_free(&h);
    kbi_results_free(&set);
}

Test(history, charts_mark_the_slower_step_of_the_case_that_changed, .init = setup,
     .fini = remove_tmp)
{
    char *out, *err, path[400], *dat, *md, gnuplot[4096];
    cr_redirect_stdout();
    cr_redirect_stderr();
    write_runs(0, 0);
    cr_assert_eq(history_cmd(&out, &err, "--gnuplot", "", NULL), 0, "%s", err);
    /* Scripts and data are written with or without gnuplot (--gnuplot '': scripts only). */
    snprintf(path, sizeof path, "%s/out/charts/history-fx-002-b_n_1.dat", tmp);
    dat = slurp(path);
    cr_expect_eq(count_of(dat, "# series "), 2, "the medians and the one slower step: %s", dat);
    cr_expect(strstr(dat, "slower x1.20") != NULL, "%s", dat);
    free(dat);
    snprintf(path, sizeof path, "%s/out/charts/history-fx-001-a_n_1.dat", tmp);
    dat = slurp(path);
    cr_expect_eq(count_of(dat, "# series "), 1, "an unchanged case has no mark: %s", dat);
    free(dat);
    snprintf(path, sizeof path, "%s/out/charts/history-fx-changed.dat", tmp);
    dat = slurp(path);
    cr_expect_eq(count_of(dat, "# series "), 1, "only b changed: %s", dat);
    free(dat);
    snprintf(path, sizeof path, "%s/out/history.md", tmp);
    md = slurp(path);
    cr_expect(strstr(md, "(charts/history-fx-changed.png)") != NULL, "%s", md);
    cr_expect(strstr(md, "[png](charts/history-fx-002-b_n_1.png)") != NULL, "%s", md);
    free(md);
    free(out);
    free(err);
    if (kbi_gnuplot_find(gnuplot, sizeof gnuplot) != KBI_OK)
        cr_skip_test("gnuplot is not installed: the images were not drawn");
    cr_assert_eq(history_cmd(&out, &err, NULL, NULL, NULL), 0, "%s", err);
    cr_expect(strstr(out, "and 4 charts") != NULL, "three cases and the plugin's: %s", out);
    snprintf(path, sizeof path, "%s/out/charts/history-fx-002-b_n_1.png", tmp);
    cr_expect_eq(access(path, R_OK), 0, "%s", path);
    snprintf(path, sizeof path, "%s/out/charts/history-fx-002-b_n_1.svg", tmp);
    cr_expect_eq(access(path, R_OK), 0, "%s", path);
    free(out);
    free(err);
}

Test(history, refuses_bad_input_with_file_and_line, .init = setup, .fini = remove_tmp)
{
    char *out, *err, path[300];
    FILE *f;
    cr_redirect_stdout();
    cr_redirect_stderr();
    write_runs(0, 0);
    /* A line that is not JSON in the middle of run 3. */
    snprintf(path, sizeof path, "%s/r3.jsonl", tmp);
    {
        char *text = slurp(path), *nl = strchr(text, '\n');
        f = fopen(path, "w");
        fwrite(text, 1, (size_t)(nl - text) + 1, f);
        fputs("{\"schema\": not json\n", f);
        fputs(nl + 1, f);
        fclose(f);
        free(text);
    }
    cr_expect_eq(history_cmd(&out, &err, "--no-charts", NULL, NULL), 2);
    cr_expect(strstr(err, "r3.jsonl:2:") != NULL, "%s", err);
    free(out);
    free(err);
    cr_expect_eq(history_cmd(&out, &err, "--order", "bogus", NULL), 2);
    cr_expect(strstr(err, "time, revision or input") != NULL, "%s", err);
    free(out);
    free(err);
    /* One run is no history. */
    for (int k = 2; k <= N_RUNS; k++) {
        snprintf(path, sizeof path, "%s/r%d.jsonl", tmp, k);
        cr_assert_eq(remove(path), 0);
    }
    cr_expect_eq(history_cmd(&out, &err, "--no-charts", NULL, NULL), 2);
    cr_expect(strstr(err, "r1.jsonl:1: 1 run, expected the runs of at least two revisions") != NULL,
              "%s", err);
    free(out);
    free(err);
}
