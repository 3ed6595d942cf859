/* The runner against fixture plugins: every kind of failure becomes its
 * status and the run goes on; filters and shards select exactly the right
 * cases; a bad profile stops everything before it runs. */
#define _DEFAULT_SOURCE
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "results.h"
#include "runner.h"

static char dir[64];

static void make_dir(void)
{
    strcpy(dir, "/tmp/kbench-runner-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void remove_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    (void)system(cmd);
}

TestSuite(runner, .init = make_dir, .fini = remove_dir, .timeout = 120);

static void write_file(const char *name, const char *text, char *path, size_t n)
{
    FILE *f;
    snprintf(path, n, "%s/%s", dir, name);
    f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

static int run_profile(const char *profile_text, const char *out, const char *plugins,
                       const char *filter, const char *shard, kbi_result_set *set)
{
    char profile[256], out_dir[256], results[300], err[KBI_ERR_SIZE];
    char *argv[] = {"run", NULL};
    kbi_run_args a = {.device = -1, .argc = 1, .argv = argv};
    int rc;
    write_file("p.ini", profile_text, profile, sizeof profile);
    snprintf(out_dir, sizeof out_dir, "%s/%s", dir, out);
    a.profile_path = profile;
    a.out_dir = out_dir;
    a.plugins_dir = plugins;
    a.filter = filter;
    if (shard)
        cr_assert_eq(kbi_parse_shard(shard, &a.shard_index, &a.shard_count), 0);
    rc = kbi_run(&a);
    if (set) {
        memset(set, 0, sizeof *set);
        snprintf(results, sizeof results, "%s/results.jsonl", out_dir);
        cr_assert_eq(kbi_results_load(set, results, err), KBI_OK, "%s", err);
    }
    return rc;
}

static const kbi_case_result *find(const kbi_result_set *set, const char *id)
{
    for (size_t i = 0; i < set->n_cases; i++)
        if (strcmp(set->cases[i].id, id) == 0)
            return &set->cases[i];
    cr_assert_fail("no case %s in the results", id);
    return NULL;
}

#define FAST_RUN "[run]\nwarmup = 1\nmin_samples = 3\nmin_time = 0\nmax_time = 0.2\ntimeout = 3\n"

Test(runner, every_failure_is_recorded_and_the_run_goes_on)
{
    kbi_result_set set;
    int rc = run_profile(FAST_RUN "[misbehave]\n[good]\nvariants = sum\n", "out",
                         KBENCH_TEST_FIXTURES, NULL, NULL, &set);
    cr_expect_eq(rc, 1, "a failed case makes the run exit 1");
    cr_assert_eq(set.n_cases, 11, "every case has a record");
    struct {
        const char *id;
        kbi_status st;
        const char *msg;
    } want[] = {
        {"misbehave/ok", KBI_ST_OK, NULL},
        {"misbehave/segv", KBI_ST_CRASHED, "signal 11"},
        {"misbehave/hang", KBI_ST_TIMEOUT, "timeout of 3 s"},
        {"misbehave/verify_fail", KBI_ST_VERIFY_FAILED, "before timing"},
        {"misbehave/init_fail", KBI_ST_ERROR, "init failed on purpose"},
        {"misbehave/skip", KBI_ST_SKIPPED, "needs hardware"},
        {"misbehave/exit", KBI_ST_CRASHED, "exited with status 3"},
        {"misbehave/noisy", KBI_ST_OK, NULL},
        {"misbehave/not_repeatable", KBI_ST_VERIFY_FAILED, "not repeatable"},
        {"misbehave/abort", KBI_ST_CRASHED, "signal 6"},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const kbi_case_result *c = find(&set, want[i].id);
        cr_expect_eq(c->status, want[i].st, "%s: got %s (%s)", want[i].id,
                     kbi_status_name(c->status), c->message);
        if (want[i].msg)
            cr_expect(strstr(c->message, want[i].msg) != NULL, "%s: message '%s'", want[i].id,
                      c->message);
    }
    /* The case after all of that still ran normally, in a fresh worker. */
    const kbi_case_result *last = &set.cases[set.n_cases - 1];
    cr_expect_eq(last->status, KBI_ST_OK);
    cr_expect_geq(last->n_samples, 3);
    cr_expect_gt(last->stats.median, 0.0);
    cr_expect_eq(last->n_metrics, 1, "metrics reported through the host service");
    cr_expect(set.envs[0].complete);
    kbi_results_free(&set);
}

Test(runner, noisy_plugin_output_goes_to_the_worker_log)
{
    kbi_result_set set;
    char log[256], buf[4096] = "";
    FILE *f;
    run_profile(FAST_RUN "[misbehave]\nvariants = noisy\n", "noisy", KBENCH_TEST_FIXTURES, NULL,
                NULL, &set);
    cr_expect_eq(set.cases[0].status, KBI_ST_OK);
    snprintf(log, sizeof log, "%s/noisy/worker.log", dir);
    f = fopen(log, "r");
    cr_assert_not_null(f);
    fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    cr_expect(strstr(buf, "noisy plugin writing to stdout") != NULL);
    cr_expect(strstr(buf, "noisy plugin writing to stderr") != NULL);
    kbi_results_free(&set);
}

Test(runner, timing_of_a_known_duration)
{
    kbi_result_set set;
    /* 2 ms sleeps: the median must be at least 2 ms and not far above. */
    run_profile("[run]\nwarmup = 1\nmin_samples = 10\nmin_time = 0.05\ntimeout = 20\n"
                "[good]\nvariants = sleep\nusec = 2000\n",
                "sleep", KBENCH_TEST_FIXTURES, NULL, NULL, &set);
    cr_assert_eq(set.n_cases, 1);
    const kbi_case_result *c = &set.cases[0];
    cr_expect_eq(c->status, KBI_ST_OK, "%s", c->message);
    cr_expect_geq(c->n_samples, 10);
    cr_expect_geq(c->stats.median, 2.0e-3);
    cr_expect_lt(c->stats.median, 2.0e-3 * 1.5);
    cr_expect(c->stats.ci_low <= c->stats.median && c->stats.median <= c->stats.ci_high);
    cr_expect_float_eq(c->gflops, c->flops / c->stats.median / 1e9, 1e-9 * c->gflops + 1e-15);
    kbi_results_free(&set);
}

/* The env record names the file of each plugin the run's cases use (here only good's: the
 * filter leaves metrics' cases out), with its size and an FNV-1a hash of its bytes, so that
 * two builds of one plugin read apart in results. */
Test(runner, env_record_names_each_plugin_file_it_used)
{
    kbi_result_set set;
    run_profile(FAST_RUN "[good]\nvariants = sum\nn = 8\n[metrics]\n", "plugins",
                KBENCH_TEST_FIXTURES, "good/*", NULL, &set);
    cr_assert_gt(set.n_cases, 0);
    json_t *list = json_object_get(set.envs[0].json, "plugins");
    cr_assert_eq(json_array_size(list), 1, "plugins: %zu", json_array_size(list));
    json_t *p = json_array_get(list, 0);
    const char *file = json_string_value(json_object_get(p, "file"));
    struct stat st;
    cr_expect_str_eq(json_string_value(json_object_get(p, "name")), "good");
    cr_assert_not_null(file);
    cr_assert_eq(stat(file, &st), 0, "%s", file);
    cr_expect(strstr(file, "libkbench_good.so") != NULL, "%s", file);
    cr_expect_eq(json_integer_value(json_object_get(p, "bytes")), (json_int_t)st.st_size);
    /* the hash, computed here over the same bytes */
    unsigned long long h = 14695981039346656037ULL;
    int ch;
    char hex[17];
    FILE *f = fopen(file, "rb");
    cr_assert_not_null(f);
    while ((ch = fgetc(f)) != EOF)
        h = (h ^ (unsigned char)ch) * 1099511628211ULL;
    fclose(f);
    snprintf(hex, sizeof hex, "%016llx", h);
    cr_expect_str_eq(json_string_value(json_object_get(p, "fnv1a64")), hex);
    kbi_results_free(&set);
}

Test(runner, filter_and_shards_partition_the_cases)
{
    const char *profile = FAST_RUN "[good]\nvariants = sum\nn = 1:64:*2\n";
    kbi_result_set full, part;
    size_t seen[64] = {0}, total = 0;
    run_profile(profile, "full", KBENCH_TEST_FIXTURES, NULL, NULL, &full);
    cr_assert_eq(full.n_cases, 7);
    for (int s = 1; s <= 3; s++) {
        char shard[8], out[16];
        snprintf(shard, sizeof shard, "%d/3", s);
        snprintf(out, sizeof out, "shard%d", s);
        run_profile(profile, out, KBENCH_TEST_FIXTURES, NULL, shard, &part);
        for (size_t i = 0; i < part.n_cases; i++) {
            for (size_t j = 0; j < full.n_cases; j++)
                if (strcmp(part.cases[i].id, full.cases[j].id) == 0)
                    seen[j]++;
            total++;
        }
        kbi_results_free(&part);
    }
    cr_expect_eq(total, full.n_cases);
    for (size_t j = 0; j < full.n_cases; j++)
        cr_expect_eq(seen[j], 1, "%s in %zu shards", full.cases[j].id, seen[j]);
    run_profile(profile, "filtered", KBENCH_TEST_FIXTURES, "good/sum/n=[13]*", NULL, &part);
    cr_expect_eq(part.n_cases, 3); /* n=1, n=16, n=32 */
    kbi_results_free(&part);
    kbi_results_free(&full);
}

Test(runner, bad_profile_runs_nothing)
{
    struct stat st;
    char out[256];
    int rc =
        run_profile(FAST_RUN "[good]\nn = lots\n", "bad", KBENCH_TEST_FIXTURES, NULL, NULL, NULL);
    cr_expect_eq(rc, 2);
    snprintf(out, sizeof out, "%s/bad/results.jsonl", dir);
    cr_expect_neq(stat(out, &st), 0, "no results file for a bad profile");
}

Test(runner, existing_results_are_never_overwritten)
{
    kbi_result_set set;
    cr_expect_eq(run_profile(FAST_RUN "[good]\nvariants = sum\n", "again", KBENCH_TEST_FIXTURES,
                             NULL, NULL, &set),
                 0);
    cr_expect_eq(run_profile(FAST_RUN "[good]\nvariants = sum\n", "again", KBENCH_TEST_FIXTURES,
                             NULL, NULL, NULL),
                 2);
    kbi_results_free(&set);
}

Test(runner, smoke_profile_host_ok_device_skipped_without_gpu)
{
    kbi_result_set set;
    char path[512], out[256], results[300], err[KBI_ERR_SIZE];
    char *argv[] = {"run", NULL};
    kbi_run_args a = {.device = -1, .argc = 1, .argv = argv, .plugins_dir = KBENCH_TEST_PLUGINS};
    snprintf(path, sizeof path, "%s/profiles/smoke.ini", KBENCH_TEST_SOURCE_DIR);
    snprintf(out, sizeof out, "%s/smoke", dir);
    a.profile_path = path;
    a.out_dir = out;
    cr_expect_eq(kbi_run(&a), 0);
    snprintf(results, sizeof results, "%s/results.jsonl", out);
    memset(&set, 0, sizeof set);
    cr_assert_eq(kbi_results_load(&set, results, err), KBI_OK, "%s", err);
    cr_assert_gt(set.n_cases, 0);
    for (size_t i = 0; i < set.n_cases; i++) {
        const kbi_case_result *c = &set.cases[i];
        cr_expect_str_eq(c->target, "host");
        cr_expect_eq(c->status, KBI_ST_OK, "%s: %s", c->id, c->message);
        cr_expect_gt(c->n_samples, 0);
        cr_expect_gt(c->gbs, 0.0);
        cr_expect(c->has_verify && c->verify_passed);
    }
    kbi_results_free(&set);
}

Test(runner, device_cases_are_skipped_with_a_reason_when_there_is_no_gpu)
{
    kbi_result_set set;
    int rc = run_profile(FAST_RUN "[stream]\nvariants = copy, host_copy\nbytes = 1Mi\n", "dev",
                         KBENCH_TEST_PLUGINS, NULL, NULL, &set);
    const kbi_case_result *dev = find(&set, "stream/copy/bytes=1048576");
    const kbi_case_result *host = find(&set, "stream/host_copy/bytes=1048576");
    cr_expect_eq(host->status, KBI_ST_OK);
    if (set.envs[0].device_name[0]) {
        cr_expect_eq(dev->status, KBI_ST_OK, "with a GPU the device case runs: %s", dev->message);
    } else {
        cr_expect_eq(dev->status, KBI_ST_SKIPPED);
        cr_expect(strstr(dev->message, "no CUDA device") != NULL, "%s", dev->message);
        cr_expect_eq(rc, 0, "skips are not failures");
    }
    kbi_results_free(&set);
}

/* Without a GPU the reason is said once, before the cases, not on every skipped case. */
Test(runner, the_no_device_reason_is_printed_once)
{
    char profile[256], cmd[1200], log[300], line[2048], reason[1024] = "", results[300];
    char err[KBI_ERR_SIZE];
    int lines = 0, reasons = 0, device;
    kbi_result_set set = {0};
    FILE *f;
    write_file("once.ini", FAST_RUN "[stream]\nvariants = copy, triad\nbytes = 1Mi, 2Mi\n", profile,
               sizeof profile);
    snprintf(log, sizeof log, "%s/once.log", dir);
    snprintf(cmd, sizeof cmd, "%s run %s --out %s/once --plugins %s >/dev/null 2>%s",
             KBENCH_TEST_BINARY, profile, dir, KBENCH_TEST_PLUGINS, log);
    cr_assert_eq(system(cmd), 0);
    /* Whether there was a device, from the run's own record rather than from the wording of
     * the line this test reads: a new wording must fail the test, not skip it. */
    snprintf(results, sizeof results, "%s/once/results.jsonl", dir);
    cr_assert_eq(kbi_results_load(&set, results, err), KBI_OK, "%s", err);
    device = set.envs[0].device_name[0] != '\0';
    kbi_results_free(&set);
    if (device)
        cr_skip_test("a device is present: nothing is skipped");
    cr_assert_not_null(f = fopen(log, "r"));
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "kbench: device variants will be skipped: %1000[^\n]", reason) == 1)
            continue;
        lines += strstr(line, "skipped  (no device: see above)") != NULL;
        reasons += reason[0] && strstr(line, reason) != NULL;
    }
    fclose(f);
    cr_assert(reason[0], "no line \"kbench: device variants will be skipped: REASON\" in %s", log);
    cr_expect_eq(lines, 4);
    cr_expect_eq(reasons, 0, "the reason is not repeated on the case lines");
}

/* A progress line names a case by what varies in its section (the record keeps the id and
 * every parameter) and fits 160 columns: a message past them is cut, whole in the record. */
Test(runner, progress_lines_show_what_varies_and_fit_160_columns)
{
    char profile[256], cmd[1200], log[300], results[300], line[2048], err[KBI_ERR_SIZE];
    size_t lines = 0, cut = 0;
    kbi_result_set set = {0};
    FILE *f;
    write_file("labels.ini",
               FAST_RUN "[knobs.blocked]\nvariants = sum, declines\nn = 10, 20\nblock = 8\n",
               profile, sizeof profile);
    snprintf(log, sizeof log, "%s/labels.log", dir);
    snprintf(cmd, sizeof cmd, "%s run %s --out %s/labels --plugins %s >/dev/null 2>%s",
             KBENCH_TEST_BINARY, profile, dir, KBENCH_TEST_FIXTURES, log);
    cr_assert_eq(system(cmd), 0);
    cr_assert_not_null(f = fopen(log, "r"));
    while (fgets(line, sizeof line, f)) {
        size_t columns = 0, k, n;
        if (sscanf(line, "[%zu/%zu", &k, &n) != 2)
            continue;
        for (const char *c = line; *c && *c != '\n'; c++)
            columns += ((unsigned char)*c & 0xc0) != 0x80;
        cr_expect_leq(columns, 160, "%zu columns: %s", columns, line);
        cr_expect(strstr(line, k % 2 ? "] knobs.blocked/sum/n=" : "] knobs.blocked/declines/n="),
                  "the section, the variant, what varies: %s", line);
        cr_expect(!strstr(line, "block=8"), "a value the section fixes is not repeated: %s", line);
        cut += strstr(line, "...)\n") != NULL;
        lines++;
    }
    fclose(f);
    cr_expect_eq(lines, 4);
    cr_expect_eq(cut, 2, "the declines cases' long reason is cut");
    snprintf(results, sizeof results, "%s/labels/results.jsonl", dir);
    cr_assert_eq(kbi_results_load(&set, results, err), KBI_OK, "%s", err);
    cr_expect_str_eq(set.cases[0].id, "knobs/sum/n=10,block=8");
    cr_expect_str_eq(set.cases[1].params_text, "n=10,density=0,block=8,order=forward");
    cr_expect(strstr(set.cases[1].message, "no more") != NULL, "kept whole: %s",
              set.cases[1].message);
    kbi_results_free(&set);
}

/* run --list prints the ids of the cases a run would measure (after --filter), one a line on
 * stdout, and measures nothing: no results folder is made. */
Test(runner, list_prints_the_selected_ids_and_runs_nothing)
{
    char profile[256], cmd[1200], out[300], line[512], ids[1024] = "";
    struct stat st;
    FILE *p;
    write_file("list.ini",
               FAST_RUN "[knobs]\nvariants = sum, declines\nn = 10, 20\nblock = 64, 8\n", profile,
               sizeof profile);
    snprintf(out, sizeof out, "%s/list-out", dir);
    snprintf(cmd, sizeof cmd, "%s run %s --list --filter 'knobs/sum/*' --out %s --plugins %s",
             KBENCH_TEST_BINARY, profile, out, KBENCH_TEST_FIXTURES);
    cr_assert_not_null(p = popen(cmd, "r"));
    while (fgets(line, sizeof line, p))
        strncat(ids, line, sizeof ids - strlen(ids) - 1);
    cr_expect_eq(pclose(p), 0);
    cr_expect_str_eq(ids, "knobs/sum/n=10\nknobs/sum/n=10,block=8\nknobs/sum/n=20\n"
                          "knobs/sum/n=20,block=8\n");
    cr_expect_neq(stat(out, &st), 0, "nothing was run: %s exists", out);
}

/* A verify that says passed while its error is over its tolerance fails the case: kbench
 * judges the figures too, and says the plugin disagreed. */
Test(runner, a_pass_over_the_tolerance_is_a_verify_failure)
{
    kbi_result_set set;
    int rc = run_profile(FAST_RUN "[liar]\nvariants = passes\n", "liar", KBENCH_TEST_FIXTURES, NULL,
                         NULL, &set);
    const kbi_case_result *c = find(&set, "liar/passes");
    cr_expect_eq(rc, 1, "a failed case makes the run exit 1");
    cr_expect_eq(c->status, KBI_ST_VERIFY_FAILED, "%s: %s", kbi_status_name(c->status), c->message);
    cr_expect_not(c->verify_passed);
    cr_expect(strstr(c->message, "abs 10 exceeds tolerance 1 (the plugin said it passed)"), "%s",
              c->message);
    kbi_results_free(&set);
}

/* Rounds: one progress counter over every round with the time left, a summary that counts
 * rounds, and every round written as a record of its own as it ends. */
Test(runner, rounds_count_in_one_counter_and_in_the_summary)
{
    char profile[256], cmd[1200], log[300], results[300], line[2048], err[KBI_ERR_SIZE];
    size_t seen = 0, left = 0, summary = 0, records = 0;
    kbi_result_set set = {0};
    FILE *f;
    write_file("rounds.ini",
               FAST_RUN "rounds = 3\n[good]\nvariants = sum\nn = 100, 200\n[misbehave]\n"
                        "variants = verify_fail\n",
               profile, sizeof profile);
    snprintf(log, sizeof log, "%s/rounds.log", dir);
    snprintf(cmd, sizeof cmd, "%s run %s --out %s/rounds --plugins %s >/dev/null 2>%s",
             KBENCH_TEST_BINARY, profile, dir, KBENCH_TEST_FIXTURES, log);
    cr_assert_eq(system(cmd) >> 8, 1, "the verify_fail case fails the run");
    cr_assert_not_null(f = fopen(log, "r"));
    while (fgets(line, sizeof line, f)) {
        size_t k, n;
        if (sscanf(line, "[%zu/%zu", &k, &n) == 2) {
            /* 3 cases in 3 rounds, less the 2 rounds verify_fail no longer runs */
            cr_expect_eq(k, seen + 1, "one counter over the rounds: %s", line);
            cr_expect_eq(n, k < 3 ? 9 : 7, "out of every round's cases: %s", line);
            seen = k;
            left += strstr(line, " left] ") != NULL;
        }
        summary += strstr(line, "kbench: 3 of 3 cases run, 3 of 3 rounds: 2 ok, 1 "
                                "verify_failed") != NULL;
    }
    fclose(f);
    cr_expect_eq(seen, 7);
    cr_expect_geq(left, 5, "the time left is shown while it is known");
    cr_expect_eq(summary, 1, "the summary counts the rounds");
    snprintf(results, sizeof results, "%s/rounds/results.jsonl", dir);
    cr_assert_not_null(f = fopen(results, "r"));
    while (fgets(line, sizeof line, f))
        records += strstr(line, "\"record\":\"round\"") != NULL;
    fclose(f);
    cr_expect_eq(records, 7, "a record per round of each case");
    cr_assert_eq(kbi_results_load(&set, results, err), KBI_OK, "%s", err);
    cr_expect_eq(set.n_cases, 3);
    cr_expect_eq(set.n_warnings, 0, "%s", set.n_warnings ? set.warnings[0] : "");
    kbi_results_free(&set);
}
