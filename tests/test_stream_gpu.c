/* The stream plugin on a real GPU: every device variant verifies and the
 * best one reaches most of the device's copy bandwidth.  Skips with the
 * reason where there is no device. */
#define _DEFAULT_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpu.h"
#include "results.h"
#include "runner.h"

Test(stream_gpu, device_variants_verify_and_reach_the_roof, .timeout = 600)
{
    char why[512], dir[] = "/tmp/kbench-gpu-XXXXXX", profile[300], out[300], results[320];
    char err[KBI_ERR_SIZE];
    char *argv[] = {"run", NULL};
    kbi_run_args a = {.device = -1, .argc = 1, .argv = argv, .plugins_dir = KBENCH_TEST_PLUGINS};
    kbi_result_set set = {0};
    FILE *f;
    double best = 0.0, memcpy_gbs = 0.0;
    if (!have_gpu(why, sizeof why))
        cr_skip_test("%s", why);
    cr_assert_not_null(mkdtemp(dir));
    snprintf(profile, sizeof profile, "%s/p.ini", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    f = fopen(profile, "w");
    fputs("[run]\nwarmup = 2\nmin_samples = 10\nmin_time = 0.1\ntimeout = 120\n"
          "[stream]\nvariants = copy, scale, add, triad, memcpy\nbytes = 1Gi, 1000004\n",
          f);
    fclose(f);
    a.profile_path = profile;
    a.out_dir = out;
    cr_expect_eq(kbi_run(&a), 0);
    snprintf(results, sizeof results, "%s/results.jsonl", out);
    cr_assert_eq(kbi_results_load(&set, results, err), KBI_OK, "%s", err);
    cr_assert_eq(set.n_cases, 10);
    for (size_t i = 0; i < set.n_cases; i++) {
        const kbi_case_result *c = &set.cases[i];
        cr_expect_eq(c->status, KBI_ST_OK, "%s: %s", c->id, c->message);
        cr_expect(c->has_verify && c->verify_passed, "%s", c->id);
        if (strstr(c->id, "bytes=1073741824,")) {
            printf("%-40s %8.1f GB/s\n", c->id, c->gbs);
            if (strcmp(c->variant, "memcpy") == 0)
                memcpy_gbs = c->gbs;
            else if (c->gbs > best)
                best = c->gbs;
        }
    }
    cr_expect_gt(set.envs[0].bandwidth_gbs, 0.0, "the probe measured the copy bandwidth");
    cr_expect_geq(best, 0.85 * memcpy_gbs, "best kernel %.1f GB/s vs memcpy %.1f GB/s", best,
                  memcpy_gbs);
    kbi_results_free(&set);
    snprintf(results, sizeof results, "rm -rf %s", dir);
    (void)!system(results);
}
