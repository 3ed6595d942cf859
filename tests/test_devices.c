/* `kbench run --devices` on the CPU: KBENCH_FAKE_DEVICES=N makes kbench see N devices
 * without CUDA, so host variants are dealt over N workers.  Every case runs exactly once,
 * each record names its device, the per-device files and the merged one agree, a crash on
 * one worker leaves the others running, Ctrl-C marks every file incomplete, and bad
 * --devices are refused.  Also docs/slurm.md's job array, run as written with a fake
 * `sbatch` on host variants: the shards cover the cases once and the report has them all. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "loader.h"
#include "results.h"

static char dir[64];

static void make_dir(void)
{
    strcpy(dir, "/tmp/kbench-devices-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    /* Orphans of kbench come to this process, so a worker left behind is seen. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
}

static void remove_dir(void)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    (void)!system(cmd);
}

TestSuite(devices, .init = make_dir, .fini = remove_dir, .timeout = 240);

#define FAST_RUN "[run]\nwarmup = 0\nmin_samples = 3\nmax_samples = 3\nmin_time = 0\nmax_time = 1\n"

/* Ten host cases over five points (two variants each). */
#define HOST_PROFILE FAST_RUN "[good]\nvariants = sum, sleep\nn = 10, 20, 30, 40, 50\nusec = 10\n"

static void path_in(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", dir, name);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s: %s", path, strerror(errno));
    fputs(text, f);
    fclose(f);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Starts kbench with argv (argv[0] is ignored) in its own process group, KBENCH_FAKE_DEVICES
 * set to fake (unset when NULL), stderr to dir/stderr. */
static pid_t spawn(char **argv, const char *fake)
{
    pid_t pid;
    fflush(NULL);
    pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        char err[128];
        int fd;
        setpgid(0, 0);
        snprintf(err, sizeof err, "%s/stderr", dir);
        fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fd, STDERR_FILENO);
        fd = open("/dev/null", O_WRONLY);
        dup2(fd, STDOUT_FILENO);
        if (fake)
            setenv("KBENCH_FAKE_DEVICES", fake, 1);
        else
            unsetenv("KBENCH_FAKE_DEVICES");
        unsetenv(KBI_PLUGIN_PATH_ENV);
        argv[0] = (char *)KBENCH_TEST_BINARY;
        execv(KBENCH_TEST_BINARY, argv);
        _exit(127);
    }
    return pid;
}

static int wait_exit(pid_t pid, double seconds)
{
    double end = now() + seconds;
    int status = 0;
    while (waitpid(pid, &status, WNOHANG) == 0) {
        if (now() > end) {
            kill(-pid, SIGKILL);
            waitpid(pid, &status, 0);
            cr_assert_fail("kbench did not end within %g s", seconds);
        }
        usleep(10000);
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Runs `kbench run dir/p.ini --plugins FIXTURES --out dir/out EXTRA...` with fake devices;
 * returns its exit code. */
static int run_fake(const char *fake, const char *profile_text, const char *extra1,
                    const char *extra2)
{
    char profile[128], out[128];
    char *argv[12] = {NULL,    "run", profile, "--plugins", (char *)KBENCH_TEST_FIXTURES,
                      "--out", out};
    int n = 7;
    path_in(profile, sizeof profile, "p.ini");
    path_in(out, sizeof out, "out");
    write_text(profile, profile_text);
    if (extra1)
        argv[n++] = (char *)extra1;
    if (extra2)
        argv[n++] = (char *)extra2;
    argv[n] = NULL;
    return wait_exit(spawn(argv, fake), 120);
}

static kbi_result_set load_ok(const char *path)
{
    kbi_result_set set = {0};
    char err[KBI_ERR_SIZE];
    cr_assert_eq(kbi_results_load(&set, path, err), KBI_OK, "%s", err);
    return set;
}

static json_t *case_json(const kbi_result_set *set, size_t i, const char *key)
{
    return json_object_get(set->cases[i].json, key);
}

/* The last record of a results file (new reference), or NULL. */
static json_t *last_record(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[1 << 16], last[1 << 16] = "";
    if (!f)
        return NULL;
    while (fgets(line, sizeof line, f))
        strcpy(last, line);
    fclose(f);
    return json_loads(last, 0, NULL);
}

/* Checks the merged file against the per-device ones: the same cases, each once, each with
 * the device whose file holds it.  Returns how many devices ran a case. */
static int check_files_agree(int n_devices, size_t expected_cases)
{
    char path[256];
    kbi_result_set merged;
    int used = 0;
    size_t in_devices = 0;
    path_in(path, sizeof path, "out/results.jsonl");
    merged = load_ok(path);
    cr_assert_eq(merged.n_cases, expected_cases, "every case once in the merged file");
    cr_assert_eq(merged.n_envs, 1);
    cr_expect_eq(json_array_size(json_object_get(merged.envs[0].json, "devices")),
                 (size_t)n_devices, "the env record lists every device");
    for (size_t i = 0; i < merged.n_cases; i++) {
        json_t *d = case_json(&merged, i, "device");
        cr_assert(json_is_integer(d), "%s names its device", merged.cases[i].id);
        cr_expect(json_is_string(case_json(&merged, i, "device_uuid")));
        for (size_t j = 0; j < i; j++)
            cr_expect_str_neq(merged.cases[i].id, merged.cases[j].id, "run twice");
    }
    for (int g = 0; g < n_devices; g++) {
        kbi_result_set one;
        char rel[64];
        snprintf(rel, sizeof rel, "out/gpu%d/results.jsonl", g);
        path_in(path, sizeof path, rel);
        one = load_ok(path);
        cr_expect_eq(one.n_envs, 1);
        used += one.n_cases > 0;
        in_devices += one.n_cases;
        for (size_t i = 0; i < one.n_cases; i++) {
            size_t j;
            cr_expect_eq(json_integer_value(case_json(&one, i, "device")), g,
                         "%s in gpu%d's file names device %d", one.cases[i].id, g, g);
            for (j = 0; j < merged.n_cases; j++)
                if (strcmp(merged.cases[j].id, one.cases[i].id) == 0)
                    break;
            cr_assert_lt(j, merged.n_cases, "%s is in the merged file", one.cases[i].id);
            cr_expect_eq(json_integer_value(case_json(&merged, j, "device")), g);
            cr_expect_eq(merged.cases[j].status, one.cases[i].status);
        }
        kbi_results_free(&one);
    }
    cr_expect_eq(in_devices, merged.n_cases, "the device files hold the merged cases, no more");
    kbi_results_free(&merged);
    return used;
}

Test(devices, host_cases_are_dealt_over_every_device_once)
{
    char path[256];
    json_t *end;
    cr_assert_eq(run_fake("3", HOST_PROFILE, "--devices", "all"), KBI_EXIT_OK);
    /* Three idle workers at the start each get a case. */
    cr_expect_eq(check_files_agree(3, 10), 3, "every device ran cases");
    for (int g = 0; g < 3; g++) {
        char rel[64];
        snprintf(rel, sizeof rel, "out/gpu%d/results.jsonl", g);
        path_in(path, sizeof path, rel);
        end = last_record(path);
        cr_assert_not_null(end);
        cr_expect(json_is_true(json_object_get(end, "complete")), "gpu%d complete", g);
        json_decref(end);
    }
}

Test(devices, a_point_stays_on_one_device_while_others_are_free)
{
    /* Five points of two variants on two devices: a device continues the point it prepared,
     * and an idle one takes another point; only at the end of the list, when every case
     * left belongs to a point being run, does an idle device share it (one at the most). */
    char path[256];
    kbi_result_set set;
    size_t split = 0;
    cr_assert_eq(run_fake("2", HOST_PROFILE, "--devices", "all"), KBI_EXIT_OK);
    cr_expect_eq(check_files_agree(2, 10), 2, "both devices ran cases");
    path_in(path, sizeof path, "out/results.jsonl");
    set = load_ok(path);
    for (size_t i = 0; i < set.n_cases; i++)
        for (size_t j = i + 1; j < set.n_cases; j++)
            split += strcmp(set.cases[i].params_text, set.cases[j].params_text) == 0 &&
                     json_integer_value(case_json(&set, i, "device")) !=
                         json_integer_value(case_json(&set, j, "device"));
    cr_expect_leq(split, 1, "%zu points ran on both devices", split);
    kbi_results_free(&set);
}

Test(devices, a_list_of_devices_and_the_selection_as_given)
{
    char path[256];
    kbi_result_set set;
    struct stat st;
    /* Device 1 alone, and half of the cases (--shard): the dealing takes the list as it is. */
    cr_assert_eq(run_fake("3", HOST_PROFILE, "--devices", "1"), KBI_EXIT_OK);
    path_in(path, sizeof path, "out/results.jsonl");
    set = load_ok(path);
    cr_expect_eq(set.n_cases, 10);
    for (size_t i = 0; i < set.n_cases; i++)
        cr_expect_eq(json_integer_value(case_json(&set, i, "device")), 1);
    kbi_results_free(&set);
    path_in(path, sizeof path, "out/gpu0");
    cr_expect_neq(stat(path, &st), 0, "no file for a device not named");
    remove_dir();
    cr_assert_not_null(mkdtemp(strcpy(dir, "/tmp/kbench-devices-XXXXXX")));
    {
        char profile[128], out[128];
        char *argv[] = {NULL,    "run", profile,     "--plugins", (char *)KBENCH_TEST_FIXTURES,
                        "--out", out,   "--devices", "0,2",       "--shard",
                        "2/2",   NULL};
        path_in(profile, sizeof profile, "p.ini");
        path_in(out, sizeof out, "out");
        write_text(profile, HOST_PROFILE);
        cr_assert_eq(wait_exit(spawn(argv, "3"), 120), KBI_EXIT_OK);
        path_in(path, sizeof path, "out/results.jsonl");
        set = load_ok(path);
        cr_expect_eq(set.n_cases, 5, "the shard's cases, once each");
        for (size_t i = 0; i < set.n_cases; i++) {
            long d = (long)json_integer_value(case_json(&set, i, "device"));
            cr_expect(d == 0 || d == 2, "device %ld", d);
            cr_expect_eq(set.cases[i].index % 2, 1, "shard 2/2 holds odd indices");
        }
        kbi_results_free(&set);
    }
}

Test(devices, a_crash_on_one_worker_leaves_the_others_running)
{
    char path[256];
    kbi_result_set set;
    size_t crashed = 0, ok = 0;
    cr_assert_eq(run_fake("2",
                          FAST_RUN "timeout = 30\n[misbehave]\nvariants = segv, ok, exit, noisy, "
                                   "abort\n[good]\nvariants = sum\nn = 10, 20, 30\n",
                          "--devices", "all"),
                 KBI_EXIT_FAILED);
    cr_expect_eq(check_files_agree(2, 8), 2, "both devices ran cases, the crashed worker's too");
    path_in(path, sizeof path, "out/results.jsonl");
    set = load_ok(path);
    for (size_t i = 0; i < set.n_cases; i++) {
        crashed += set.cases[i].status == KBI_ST_CRASHED;
        ok += set.cases[i].status == KBI_ST_OK;
    }
    cr_expect_eq(crashed, 3, "segv, exit and abort crash their worker");
    cr_expect_eq(ok, 5, "every other case ran");
    cr_expect(set.envs[0].complete);
    kbi_results_free(&set);
}

Test(devices, ctrl_c_stops_every_worker_and_marks_every_file_incomplete)
{
    char profile[128], out[128], path[256];
    char *argv[] = {NULL,    "run", profile,     "--plugins", (char *)KBENCH_TEST_FIXTURES,
                    "--out", out,   "--devices", "all",       NULL};
    pid_t pid;
    double t0;
    int rc;
    path_in(profile, sizeof profile, "p.ini");
    path_in(out, sizeof out, "out");
    /* One device hangs in misbehave/hang; the other runs the rest and idles. */
    write_text(profile, FAST_RUN "timeout = 60\n[misbehave]\nvariants = hang\n[good]\nvariants = "
                                 "sum\nn = 10, 20, 30\n");
    pid = spawn(argv, "2");
    path_in(path, sizeof path, "out/results.jsonl");
    t0 = now();
    for (;;) {
        kbi_result_set set = {0};
        char err[KBI_ERR_SIZE];
        size_t n = kbi_results_load(&set, path, err) == KBI_OK ? set.n_cases : 0;
        kbi_results_free(&set);
        if (n == 3)
            break;
        cr_assert_lt(now() - t0, 60.0, "the three quick cases end");
        usleep(20000);
    }
    usleep(100000);
    t0 = now();
    cr_assert_eq(kill(-pid, SIGINT), 0);
    rc = wait_exit(pid, 20);
    cr_expect_lt(now() - t0, 5.0, "the hanging case is stopped, not waited for");
    cr_expect_eq(rc, KBI_EXIT_INTERRUPTED);
    cr_expect_eq(waitpid(-1, NULL, WNOHANG), -1, "no worker left behind (errno %d)", errno);
    for (int g = -1; g < 2; g++) {
        char rel[64];
        json_t *end;
        if (g < 0)
            snprintf(rel, sizeof rel, "out/results.jsonl");
        else
            snprintf(rel, sizeof rel, "out/gpu%d/results.jsonl", g);
        path_in(path, sizeof path, rel);
        end = last_record(path);
        cr_assert_not_null(end, "%s", rel);
        cr_expect_str_eq(json_string_value(json_object_get(end, "record")), "end", "%s", rel);
        cr_expect(json_is_false(json_object_get(end, "complete")), "%s is incomplete", rel);
        cr_expect_str_eq(json_string_value(json_object_get(end, "interrupted_by")), "SIGINT");
        json_decref(end);
    }
}

Test(devices, bad_device_lists_are_refused)
{
    static const char *const bad[] = {"3", "0,0", "x", "0,", "-1", "1,,2"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_expect_eq(run_fake("3", HOST_PROFILE, "--devices", bad[i]), KBI_EXIT_USAGE, "%s",
                     bad[i]);
    cr_expect_eq(run_fake("0", HOST_PROFILE, "--devices", "all"), KBI_EXIT_USAGE,
                 "KBENCH_FAKE_DEVICES=0");
    {
        char profile[128], out[128];
        char *argv[] = {NULL,    "run", profile,     "--plugins", (char *)KBENCH_TEST_FIXTURES,
                        "--out", out,   "--devices", "all",       "--sanitize",
                        NULL};
        char *argv2[] = {NULL,    "run", profile,     "--plugins", (char *)KBENCH_TEST_FIXTURES,
                         "--out", out,   "--devices", "all",       "--device",
                         "0",     NULL};
        path_in(profile, sizeof profile, "p.ini");
        path_in(out, sizeof out, "out2");
        cr_expect_eq(wait_exit(spawn(argv, "2"), 60), KBI_EXIT_USAGE, "with --sanitize");
        cr_expect_eq(wait_exit(spawn(argv2, "2"), 60), KBI_EXIT_USAGE, "with --device");
    }
}

Test(devices, without_devices_a_run_is_as_before)
{
    char path[256];
    kbi_result_set set;
    struct stat st;
    cr_assert_eq(run_fake("3", HOST_PROFILE, NULL, NULL), KBI_EXIT_OK);
    path_in(path, sizeof path, "out/results.jsonl");
    set = load_ok(path);
    cr_expect_eq(set.n_cases, 10);
    for (size_t i = 0; i < set.n_cases; i++)
        cr_expect_null(case_json(&set, i, "device"), "no device field in a one-device run");
    cr_expect_null(json_object_get(set.envs[0].json, "devices"));
    kbi_results_free(&set);
    path_in(path, sizeof path, "out/gpu0");
    cr_expect_neq(stat(path, &st), 0);
}

/* ---- docs/slurm.md, run as written ---- */

/* The body of the first ```bash block of text that contains `marker` (caller frees). */
static char *doc_block(const char *text, const char *marker)
{
    const char *p = text;
    while ((p = strstr(p, "```bash\n")) != NULL) {
        const char *start = p + 8, *end = strstr(start, "```");
        cr_assert_not_null(end, "an unclosed code block in docs/slurm.md");
        if (memmem(start, (size_t)(end - start), marker, strlen(marker)))
            return strndup(start, (size_t)(end - start));
        p = end + 3;
    }
    cr_assert_fail("docs/slurm.md has no bash block with '%s'", marker);
    return NULL;
}

/* A stand-in for Slurm's sbatch: an array job's tasks run one after the other with
 * SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT set (from the script's #SBATCH --array), a
 * --wrap job runs at once; --parsable prints the job id. */
static const char fake_sbatch[] =
    "#!/bin/sh\n"
    "parsable=0; wrap=; script=\n"
    "while [ $# -gt 0 ]; do\n"
    "  case \"$1\" in\n"
    "    --parsable) parsable=1 ;;\n"
    "    --wrap) wrap=$2; shift ;;\n"
    "    --wrap=*) wrap=${1#--wrap=} ;;\n"
    "    --*) ;;\n"
    "    *) script=$1 ;;\n"
    "  esac\n"
    "  shift\n"
    "done\n"
    "if [ -n \"$wrap\" ]; then sh -c \"$wrap\" || exit 1; echo 43; exit 0; fi\n"
    "range=$(sed -n 's/^#SBATCH --array=\\([0-9]*\\)-\\([0-9]*\\).*/\\1 \\2/p' \"$script\")\n"
    "set -- $range\n"
    "for i in $(seq $1 $2); do\n"
    "  SLURM_ARRAY_JOB_ID=42 SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_TASK_COUNT=$(($2 - $1 + 1)) \\\n"
    "    bash \"$script\" > logs/kbench-42_$i.out 2>&1\n"
    "done\n"
    "[ $parsable = 1 ] && echo 42\n"
    "exit 0\n";

Test(devices, the_slurm_job_array_of_docs_slurm_md_covers_every_case_once)
{
    char doc_path[512], path[512], cmd[2048], *doc, *sbatch_script, *submit, *csv;
    kbi_result_set all = {0}, whole;
    int shards = 0;
    snprintf(doc_path, sizeof doc_path, "%s/docs/slurm.md", KBENCH_TEST_SOURCE_DIR);
    {
        FILE *f = fopen(doc_path, "r");
        kbi_buf b = {0};
        char chunk[4096];
        size_t n;
        cr_assert_not_null(f, "%s", doc_path);
        while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
            kbi_buf_printf(&b, "%.*s", (int)n, chunk);
        fclose(f);
        doc = b.data;
    }
    sbatch_script = doc_block(doc, "#SBATCH --array");
    submit = doc_block(doc, "sbatch --parsable");
    path_in(path, sizeof path, "sweep.sbatch");
    write_text(path, sbatch_script);
    path_in(path, sizeof path, "submit.sh");
    write_text(path, submit);
    path_in(path, sizeof path, "bin");
    mkdir(path, 0755);
    path_in(path, sizeof path, "bin/sbatch");
    write_text(path, fake_sbatch);
    chmod(path, 0755);
    path_in(path, sizeof path, "build");
    mkdir(path, 0755);
    path_in(path, sizeof path, "build/kbench");
    cr_assert_eq(symlink(KBENCH_TEST_BINARY, path), 0);
    path_in(path, sizeof path, "host.ini");
    write_text(path, HOST_PROFILE);
    snprintf(cmd, sizeof cmd,
             "cd %s && PATH=%s/bin:$PATH PROFILE=%s/host.ini " KBI_PLUGIN_PATH_ENV
             "=%s bash -e submit.sh > submit.log 2>&1",
             dir, dir, dir, KBENCH_TEST_FIXTURES);
    cr_assert_eq(system(cmd), 0, "the doc's submit commands run (see %s/submit.log)", dir);

    /* Every shard ran (the array's 8 tasks), and together they hold each case once. */
    for (int i = 0; i < 64; i++) {
        struct stat st;
        char rel[64];
        snprintf(rel, sizeof rel, "results/shard-%d/results.jsonl", i);
        path_in(path, sizeof path, rel);
        if (stat(path, &st) != 0)
            break;
        shards++;
        {
            char err[KBI_ERR_SIZE];
            cr_assert_eq(kbi_results_load(&all, path, err), KBI_OK, "%s", err);
        }
    }
    cr_expect_eq(shards, 8, "one shard per array task");
    {
        char *argv[] = {NULL,    "run", path, "--plugins", (char *)KBENCH_TEST_FIXTURES,
                        "--out", NULL,  NULL};
        char out[256];
        path_in(path, sizeof path, "host.ini");
        path_in(out, sizeof out, "whole");
        argv[6] = out;
        cr_assert_eq(wait_exit(spawn(argv, NULL), 120), KBI_EXIT_OK);
        path_in(path, sizeof path, "whole/results.jsonl");
        whole = load_ok(path);
    }
    cr_expect_eq(all.n_cases, whole.n_cases, "the shards hold as many cases as one run");
    for (size_t i = 0; i < whole.n_cases; i++) {
        int seen = 0;
        for (size_t j = 0; j < all.n_cases; j++)
            seen += strcmp(all.cases[j].id, whole.cases[i].id) == 0;
        cr_expect_eq(seen, 1, "%s is in exactly one shard", whole.cases[i].id);
    }
    /* The report job's merged report has every case. */
    path_in(path, sizeof path, "reports/sweep/results.csv");
    {
        FILE *f = fopen(path, "r");
        kbi_buf b = {0};
        char chunk[4096];
        size_t n;
        cr_assert_not_null(f, "the report job wrote %s", path);
        while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
            kbi_buf_printf(&b, "%.*s", (int)n, chunk);
        fclose(f);
        csv = b.data;
    }
    for (size_t i = 0; i < whole.n_cases; i++) {
        char row[1024];
        /* CSV quotes an id that holds commas. */
        snprintf(row, sizeof row, strchr(whole.cases[i].id, ',') ? "\n\"%s\"," : "\n%s,",
                 whole.cases[i].id);
        cr_expect_not_null(strstr(csv, row), "the report lists %s", whole.cases[i].id);
    }
    free(csv);
    kbi_results_free(&all);
    kbi_results_free(&whole);
    free(doc);
    free(sbatch_script);
    free(submit);
}
