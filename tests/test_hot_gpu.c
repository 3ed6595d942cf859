/* Hot timing on a real GPU measures the work as it runs uncaptured, not the
 * CPU's launch rate, nor what a CUDA graph makes of it:
 *  - a ~1 us axpy and cuBLAS SGEMM 256^3 in `cache = hot` are within 5% of
 *    the same work timed by CUDA-graph replay in a separate program
 *    (tests/hot/graph_replay); the blocking-kernel and plain-launch methods
 *    (capture = 0, syncs = 1) are measured too and printed beside them: the
 *    first must not be slower than plain launches;
 *  - one cudaMemcpyAsync of 512 MiB and of 1 GiB (a copy a graph runs ~35%
 *    slower on the H200) is within 3% of the same copies launched on a
 *    stream between events by that program, and at 4.0 TB/s or more;
 *  - a run() of 2000 small kernels (about 2 ms: a batch of one) is
 *    within 5% of graph replay of the same work in batches.
 * Skips without a GPU. */
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

/* Runs `profile_text` with the fixture plugins into tmp/NAME; loads *set. */
static void run_hot(const char *name, const char *profile_text, kbi_result_set *set)
{
    char profile[300], out[300];
    kbi_run_args a = {.device = -1, .plugins_dir = KBENCH_TEST_FIXTURES, .profile_path = profile};
    FILE *f;
    snprintf(profile, sizeof profile, "%s/%s.ini", tmp, name);
    snprintf(out, sizeof out, "%s/%s", tmp, name);
    f = fopen(profile, "w");
    cr_assert_not_null(f);
    fputs(profile_text, f);
    fclose(f);
    a.out_dir = out;
    cr_expect_eq(run_and_load(&a, set), 0);
}

static void print_case(const kbi_case_result *c, double replay_us)
{
    const char *timing = json_string_value(json_object_get(c->json, "timing"));
    double us = c->stats.median * 1e6;
    printf("%-45s %-8s %10.3f us  %8.1f GB/s  replay %10.3f us  ratio %.3f  batch %ld  trial "
           "graph %.4g us stream %.4g us  %s\n",
           c->id, timing ? timing : "?", us, c->bytes / c->stats.median * 1e-9, replay_us,
           us / replay_us, c->batch, c->hot_trial_graph_s * 1e6, c->hot_trial_stream_s * 1e6,
           c->message);
}

Test(hot_gpu, a_memcpy_and_a_run_of_many_kernels_are_timed_as_they_run_uncaptured,
     .timeout = 600)
{
    kbi_result_set set = {0};
    need_gpu();
    run_hot("uncaptured",
            "[run]\ncache = hot\nwarmup = 3\nmin_samples = 10\nmin_time = 0.3\ntimeout = 120\n"
            "[hot.memcpy]\nvariants = memcpy\nn = 134217728, 268435456\n"
            "[hot.many]\nvariants = many\nn = 2000\n",
            &set);
    cr_assert_eq(set.n_cases, 3);
    for (size_t i = 0; i < set.n_cases; i++) {
        const kbi_case_result *c = &set.cases[i];
        char args[64];
        int memcpy_case = strcmp(c->variant, "memcpy") == 0;
        long long n = json_integer_value(json_object_get(c->params, "n"));
        cr_expect_eq(c->status, KBI_ST_OK, "%s: %s", c->id, c->message);
        /* The reference: the copies uncaptured on a stream; the many kernels as a graph
         * replayed in batches of 10 (no launch rate in it). */
        snprintf(args, sizeof args, "%s %lld 10 20", memcpy_case ? "--stream memcpy" : "many", n);
        double replay = graph_replay(args), us = c->stats.median * 1e6;
        cr_assert_gt(replay, 0);
        print_case(c, replay);
        if (memcpy_case) {
            cr_expect_lt(fabs(us / replay - 1.0), 0.03, "%s: hot %.2f us vs stream %.2f us",
                         c->id, us, replay);
            if (speed_guards_apply(c->env ? c->env->device_name : NULL))
                cr_expect_geq(c->bytes / c->stats.median, 4.0e12, "%s: %.0f GB/s", c->id,
                              c->bytes / c->stats.median * 1e-9);
        } else {
            cr_expect_gt(us, 1000.0, "%s: a run of %.1f us is not over a millisecond", c->id, us);
            cr_expect_lt(fabs(us / replay - 1.0), 0.05, "%s: hot %.2f us vs graph replay %.2f us",
                         c->id, us, replay);
        }
    }
    kbi_results_free(&set);
}

Test(hot_gpu, hot_mode_matches_graph_replay_of_the_same_work, .timeout = 600)
{
    kbi_result_set set = {0};
    double replay_axpy, replay_sgemm;
    need_gpu();
    run_hot("kernels",
            "[run]\ncache = hot\nwarmup = 5\nmin_samples = 20\nmin_time = 0.3\ntimeout = 120\n"
            "[hot.axpy]\nvariants = axpy\nn = 65536\ncapture = 1, 0\nsyncs = 0\n"
            "[hot.axpy_launches]\nvariants = axpy\nn = 65536\ncapture = 0\nsyncs = 1\n"
            "[hot.sgemm]\nvariants = sgemm\nn = 256\ncapture = 1, 0\n",
            &set);
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
        print_case(c, replay);
        if (strstr(c->id, "capture=1")) {
            /* The trial keeps the graph unless it is slower than the stream. */
            cr_expect(strcmp(timing, "graph") == 0 || strcmp(timing, "blocked") == 0, "%s: %s",
                      c->id, timing);
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
