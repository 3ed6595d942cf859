/* Fault injection that needs a GPU (skips with the reason without one):
 * device memory exhausted by a size too large for the card is an error
 * with CUDA's message and costs that case only; a Ctrl-C while a case runs
 * under compute-sanitizer records nothing for that case. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gpu.h"
#include "results.h"

static char dir[64];

static void setup(void)
{
    strcpy(dir, "/tmp/kbench-faults-gpu-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    (void)!system(cmd);
}

TestSuite(faults_gpu, .init = setup, .fini = teardown, .timeout = 600);

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

/* Starts kbench with argv (argv[0] is set here), stdout and stderr into
 * files in dir, and `env` ("NAME=VALUE" or NULL) added. */
static pid_t spawn(char **argv, const char *env)
{
    pid_t pid;
    fflush(NULL);
    pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        char out[128], err[128];
        setpgid(0, 0);
        snprintf(out, sizeof out, "%s/stdout", dir);
        snprintf(err, sizeof err, "%s/stderr", dir);
        if (!freopen(out, "w", stdout) || !freopen(err, "w", stderr))
            _exit(126);
        if (env)
            putenv((char *)env);
        argv[0] = (char *)KBENCH_TEST_BINARY;
        execv(KBENCH_TEST_BINARY, argv);
        _exit(127);
    }
    return pid;
}

static int wait_status(pid_t pid, double seconds)
{
    int status;
    for (double t = 0; t < seconds; t += 0.01) {
        if (waitpid(pid, &status, WNOHANG) == pid)
            return status;
        usleep(10000);
    }
    kill(-pid, SIGKILL);
    waitpid(pid, &status, 0);
    cr_assert_fail("kbench still running after %.0f s", seconds);
    return status;
}

Test(faults_gpu, device_memory_exhausted_is_an_error_and_the_next_case_runs)
{
    char profile[128], out[128], results[160], err[KBI_ERR_SIZE];
    char *argv[] = {NULL, "run", profile, "--out", out, NULL};
    kbi_result_set set = {0};
    int status;
    need_gpu();
    snprintf(profile, sizeof profile, "%s/oom.ini", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(results, sizeof results, "%s/results.jsonl", out);
    /* 1 TiB per array: more than any GPU holds.  Then a small case, which
     * must run normally in a fresh worker. */
    write_text(profile, "[run]\nwarmup = 1\nmin_samples = 5\nmin_time = 0\ntimeout = 120\n"
                        "bandwidth = 4800\npeak_gflops = 67000\n"
                        "[stream]\nvariants = copy, triad\nbytes = 1Ti, 4Mi\n");
    status = wait_status(spawn(argv, NULL), 300);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 1, "a failed case exits 1: %#x", status);
    cr_assert_eq(kbi_results_load(&set, results, err), KBI_OK, "%s", err);
    cr_assert_eq(set.n_cases, 4);
    for (size_t i = 0; i < set.n_cases; i++) {
        const kbi_case_result *c = &set.cases[i];
        if (strstr(c->params_text, "bytes=1099511627776,")) {
            cr_expect_eq(c->status, KBI_ST_ERROR, "%s: %s", c->id, kbi_status_name(c->status));
            cr_expect(strstr(c->message, "cudaErrorMemoryAllocation") != NULL,
                      "%s: CUDA's own message: %s", c->id, c->message);
            cr_expect_eq(c->n_samples, 0, "nothing is timed");
        } else {
            cr_expect_eq(c->status, KBI_ST_OK, "%s after an out-of-memory case: %s", c->id,
                         c->message);
            cr_expect(c->has_verify && c->verify_passed, "%s", c->id);
            cr_expect_gt(c->gbs, 0.0);
        }
    }
    kbi_results_free(&set);
}

Test(faults_gpu, ctrl_c_during_a_sanitized_case_records_nothing_for_it)
{
    /* A stand-in for compute-sanitizer that never finishes: the case is
     * still running when the user presses Ctrl-C. */
    char profile[128], out[128], results[160], fake[128], env[200], err[KBI_ERR_SIZE];
    char *argv[] = {NULL,         "run",   profile, "--plugins", KBENCH_TEST_FIXTURES,
                    "--sanitize", "--out", out,     NULL};
    kbi_result_set set = {0};
    struct stat st;
    pid_t pid;
    int status;
    need_gpu();
    snprintf(profile, sizeof profile, "%s/p.ini", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(results, sizeof results, "%s/results.jsonl", out);
    snprintf(fake, sizeof fake, "%s/fake-sanitizer", dir);
    write_text(fake, "#!/bin/sh\nexec sleep 600\n");
    chmod(fake, 0755);
    snprintf(env, sizeof env, "KBENCH_COMPUTE_SANITIZER=%s", fake);
    write_text(profile, "[run]\nwarmup = 0\nmin_samples = 1\nmin_time = 0\ntimeout = 60\n"
                        "bandwidth = 4800\npeak_gflops = 67000\n[oob]\nvariants = ok\n");
    pid = spawn(argv, env);
    {
        char case_dir[200];
        snprintf(case_dir, sizeof case_dir, "%s/sanitize/case-0", out);
        for (int i = 0; i < 6000 && stat(case_dir, &st) != 0; i++)
            usleep(10000);
        cr_assert_eq(stat(case_dir, &st), 0, "the sanitized case started");
    }
    usleep(500000);
    kill(pid, SIGINT);
    status = wait_status(pid, 20);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 130, "status %#x", status);
    cr_assert_eq(kbi_results_load(&set, results, err), KBI_OK, "%s", err);
    cr_expect_eq(set.n_cases, 0, "the interrupted case is not recorded as crashed");
    cr_expect_not(set.envs[0].complete);
    kbi_results_free(&set);
}
