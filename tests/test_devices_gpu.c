/* `kbench run --devices all` on a machine with two or more GPUs: a small stream profile
 * dealt over every GPU and the same profile on GPU 0 alone give the same case set, every
 * GPU is named by UUID and PCI bus id and runs cases, and each case's median on its GPU
 * agrees with GPU 0's within the two medians' confidence intervals (plus 2% for the spread
 * between two boards of one model).  Skips with the reason on fewer than two GPUs. */
#define _XOPEN_SOURCE 700
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpu.h"
#include "helpers.h"

static void setup(void)
{
    make_tmp_named("devices-gpu");
}

TestSuite(devices_gpu, .init = setup, .fini = remove_tmp);

/* How many CUDA devices this machine has, asked in a child (the test process must not hold
 * a CUDA context: the runner forks workers). */
static int gpu_count(void)
{
    int fd[2], count = 0;
    pid_t pid;
    if (pipe(fd) != 0)
        return 0;
    pid = fork();
    if (pid == 0) {
        if (cudaGetDeviceCount(&count) != cudaSuccess)
            count = 0;
        (void)!write(fd[1], &count, sizeof count);
        _exit(0);
    }
    close(fd[1]);
    if (read(fd[0], &count, sizeof count) != (ssize_t)sizeof count)
        count = 0;
    close(fd[0]);
    waitpid(pid, NULL, 0);
    return count;
}

static const char profile_text[] =
    "[run]\nwarmup = 2\nmin_samples = 20\nmin_time = 0.2\nmax_noise = 0.01\ntimeout = 120\n"
    "[stream]\nvariants = copy, triad, memcpy\nbaseline = memcpy\nbytes = 256Mi, 1Gi\n"
    "[stream.host]\nvariants = host_copy\nbytes = 16Mi\n";

/* Runs the profile with the kbench program into tmp/NAME, with --devices DEVICES or on
 * device 0; loads the results.  Returns the exit code. */
static int run_into(const char *name, const char *devices, kbi_result_set *set)
{
    char args[200];
    snprintf(args, sizeof args, "%s%s", devices ? "--devices " : "--device 0",
             devices ? devices : "");
    return run_binary_text(profile_text, name, args, set);
}

Test(devices_gpu, all_gpus_give_the_cases_and_medians_of_one, .timeout = 900)
{
    kbi_result_set multi = {0}, one = {0};
    json_t *devices;
    int n, used[64] = {0}, n_used = 0;
    need_gpu(); /* none at all: the common rule (a skip; a failure under KBENCH_REQUIRE_GPU=1) */
    n = gpu_count();
    if (n < 2)
        cr_skip_test("%d CUDA device(s) here; this test needs two or more (a multi-GPU "
                     "machine)",
                     n);
    cr_assert_eq(run_into("all", "all", &multi), 0);
    cr_assert_eq(run_into("one", NULL, &one), 0);
    devices = json_object_get(multi.envs[0].json, "devices");
    cr_assert_eq(json_array_size(devices), (size_t)n, "the env record lists every GPU");
    for (size_t i = 0; i < json_array_size(devices); i++) {
        json_t *d = json_array_get(devices, i);
        const char *uuid = json_string_value(json_object_get(d, "uuid"));
        cr_expect(uuid && strncmp(uuid, "GPU-", 4) == 0, "GPU %zu has a UUID", i);
        cr_expect(json_string_value(json_object_get(d, "pci_bus_id"))[0] != '\0');
        printf("device %zu: %s %s %s nvml %lld\n", i, json_string_value(json_object_get(d, "name")),
               uuid, json_string_value(json_object_get(d, "pci_bus_id")),
               (long long)json_integer_value(json_object_get(d, "nvml_index")));
        for (size_t j = 0; j < i; j++)
            cr_expect_str_neq(
                uuid, json_string_value(json_object_get(json_array_get(devices, j), "uuid")));
    }
    cr_assert_eq(multi.n_cases, one.n_cases, "the same number of cases");
    for (size_t i = 0; i < multi.n_cases; i++) {
        const kbi_case_result *m = &multi.cases[i], *o = NULL;
        long d = (long)json_integer_value(json_object_get(m->json, "device"));
        double tol;
        cr_expect_eq(m->status, KBI_ST_OK, "%s: %s", m->id, m->message);
        if (d >= 0 && d < 64 && !used[d]++)
            n_used++;
        for (size_t j = 0; j < one.n_cases; j++)
            if (strcmp(one.cases[j].id, m->id) == 0)
                o = &one.cases[j];
        cr_assert_not_null(o, "%s ran on one GPU too", m->id);
        if (strcmp(m->target, "device") != 0 || !m->has_stats || !o->has_stats)
            continue;
        /* Half-widths of both medians' 95% intervals, three times, and 2% for two boards. */
        tol =
            3.0 * (m->stats.ci_high - m->stats.ci_low + o->stats.ci_high - o->stats.ci_low) / 2.0 +
            0.02 * fmin(m->stats.median, o->stats.median);
        printf("%-50s gpu%ld %10.4g s  gpu0 alone %10.4g s  (%+.2f%%)\n", m->id, d, m->stats.median,
               o->stats.median, 100.0 * (m->stats.median / o->stats.median - 1.0));
        cr_expect_leq(fabs(m->stats.median - o->stats.median), tol,
                      "%s: median %g s on gpu%ld, %g s on gpu0 alone", m->id, m->stats.median, d,
                      o->stats.median);
    }
    cr_expect_geq(n_used, 2, "the cases were dealt over several GPUs");
    kbi_results_free(&multi);
    kbi_results_free(&one);
}
