/* Hot timing on a real GPU measures the kernels, not the CPU's launch rate:
 * a ~1 us axpy and cuBLAS SGEMM 256^3 in `cache = hot` are within 5% of the
 * same work timed by CUDA-graph replay in a separate program
 * (tests/hot/graph_replay).  The blocking-kernel and plain-launch methods
 * (capture = 0, syncs = 1) are measured too and printed beside them: the
 * first must not be slower than plain launches.  Skips without a GPU. */
#define _XOPEN_SOURCE 700
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "helpers.h"

static void setup(void)
{
    make_tmp_named("hot-gpu");
}

TestSuite(hot_gpu, .init = setup, .fini = remove_tmp);

/* graph_replay's microseconds per run for `args`. */
static double graph_replay(const char *args)
{
    char cmd[1024], line[256];
    double us = -1;
    FILE *p;
    snprintf(cmd, sizeof cmd, "%s %s", KBENCH_TEST_GRAPH_REPLAY, args);
    p = popen(cmd, "r");
    cr_assert_not_null(p);
    while (fgets(line, sizeof line, p))
        sscanf(line, "us_per_run %lf", &us);
    cr_expect_eq(pclose(p), 0, "%s failed", cmd);
    return us;
}

Test(hot_gpu, hot_mode_matches_graph_replay_of_the_same_work, .timeout = 600)
{
    kbi_result_set set = {0};
    char profile[300], out[300], results[320], err[KBI_ERR_SIZE];
    char *argv[] = {"run", NULL};
    kbi_run_args a = {.device = -1, .argc = 1, .argv = argv, .plugins_dir = KBENCH_TEST_FIXTURES};
    double replay_axpy, replay_sgemm;
    FILE *f;
    need_gpu();
    snprintf(profile, sizeof profile, "%s/hot.ini", tmp);
    snprintf(out, sizeof out, "%s/out", tmp);
    f = fopen(profile, "w");
    cr_assert_not_null(f);
    fputs("[run]\ncache = hot\nwarmup = 5\nmin_samples = 20\nmin_time = 0.3\ntimeout = 120\n"
          "[hot.axpy]\nvariants = axpy\nn = 65536\ncapture = 1, 0\nsyncs = 0\n"
          "[hot.axpy_launches]\nvariants = axpy\nn = 65536\ncapture = 0\nsyncs = 1\n"
          "[hot.sgemm]\nvariants = sgemm\nn = 256\ncapture = 1, 0\n",
          f);
    fclose(f);
    a.profile_path = profile;
    a.out_dir = out;
    cr_expect_eq(kbi_run(&a), 0);
    snprintf(results, sizeof results, "%s/results.jsonl", out);
    cr_assert_eq(kbi_results_load(&set, results, err), KBI_OK, "%s", err);
    cr_assert_eq(set.n_cases, 5);
    replay_axpy = graph_replay("axpy 65536");
    replay_sgemm = graph_replay("sgemm 256");
    cr_assert_gt(replay_axpy, 0);
    cr_assert_gt(replay_sgemm, 0);
    double blocked = 0, launches = 0;
    for (size_t i = 0; i < set.n_cases; i++) {
        const kbi_case_result *c = &set.cases[i];
        const char *timing = json_string_value(json_object_get(c->json, "timing"));
        double us = c->stats.median * 1e6;
        double replay = strcmp(c->variant, "sgemm") == 0 ? replay_sgemm : replay_axpy;
        cr_expect_eq(c->status, KBI_ST_OK, "%s: %s", c->id, c->message);
        printf("%-55s %-8s %8.3f us  graph_replay %8.3f us  ratio %.3f  batch %lld\n", c->id,
               timing ? timing : "?", us, replay, us / replay,
               (long long)json_integer_value(json_object_get(c->json, "batch")));
        if (strstr(c->id, "capture=1")) {
            cr_expect_str_eq(timing, "graph", "%s", c->id);
            cr_expect_lt(fabs(us / replay - 1.0), 0.05, "%s: hot %.3f us vs graph replay %.3f us",
                         c->id, us, replay);
        } else if (strstr(c->id, "syncs=1")) {
            cr_expect_str_eq(timing, "launches", "%s", c->id);
            launches = us;
        } else {
            cr_expect_str_eq(timing, "blocked", "%s", c->id);
            if (strcmp(c->variant, "axpy") == 0)
                blocked = us;
        }
    }
    cr_expect_leq(blocked, 1.05 * launches, "blocked %.3f us vs plain launches %.3f us", blocked,
                  launches);
    kbi_results_free(&set);
}
