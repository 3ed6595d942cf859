/* Fault injection against the real kbench program: a results file that
 * cannot be written (unwritable folder, disk full mid-run), SIGINT and
 * SIGTERM during a case, the parent killed with SIGKILL, plugins that
 * print, leak, scribble on descriptors or call exit(), and where plugins
 * are loaded from.  In every case the user keeps each finished result, the
 * results file stays valid JSON Lines, and the exit code says what
 * happened.  Under KBENCH_SANITIZE the in-process runs are also checked by
 * LeakSanitizer.
 *
 * kbench runs as a child (fork + exec of KBENCH_TEST_BINARY); signals are
 * sent when the results file holds a given number of complete case lines,
 * while a case that never ends (misbehave/hang) is running, so the timing
 * is deterministic. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "loader.h"
#include "results.h"
#include "runner.h"

static char dir[64];

static void make_dir(void)
{
    strcpy(dir, "/tmp/kbench-faults-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    /* Orphans of a killed kbench come to this process, so a worker left
     * running (or unreaped) is seen. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
}

static void remove_dir(void)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "chmod -R u+w %s 2>/dev/null; rm -rf %s", dir, dir);
    (void)!system(cmd);
}

TestSuite(faults, .init = make_dir, .fini = remove_dir, .timeout = 240);

/* ---- helpers ---- */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

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

/* The whole file as a string (caller frees); "" when it cannot be read. */
static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    kbi_buf b = {0};
    char chunk[4096];
    size_t n;
    kbi_buf_printf(&b, "%s", "");
    if (!f)
        return b.data;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        kbi_buf_printf(&b, "%.*s", (int)n, chunk);
    fclose(f);
    return b.data;
}

typedef struct spawn_opts {
    const char *cwd;         /* NULL: this process's */
    const char *out;         /* stdout file; NULL: /dev/null */
    const char *err;         /* stderr file; NULL: /dev/null */
    long long fsize_limit;   /* RLIMIT_FSIZE in bytes: a disk that fills up (kbench must
                                ignore SIGXFSZ itself and see EFBIG) */
    int own_group;           /* in its own process group, like a shell job */
    const char *plugin_path; /* KBENCH_PLUGIN_PATH; NULL: unset */
    int reports_to_stderr;   /* sanitizer reports on stderr, not where sanitized-run.sh
                                collects them (for a report this test expects) */
} spawn_opts;

static void redirect(int fd, const char *path, int flags)
{
    int f = open(path ? path : "/dev/null", flags, 0644);
    if (f >= 0) {
        dup2(f, fd);
        close(f);
    }
}

/* Starts KBENCH_TEST_BINARY with argv (argv[0] is ignored). */
static pid_t spawn(char **argv, const spawn_opts *o)
{
    pid_t pid;
    fflush(NULL);
    pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        if (o->own_group)
            setpgid(0, 0);
        if (o->cwd && chdir(o->cwd) != 0)
            _exit(126);
        redirect(STDIN_FILENO, NULL, O_RDONLY);
        redirect(STDOUT_FILENO, o->out, O_WRONLY | O_CREAT | O_TRUNC);
        redirect(STDERR_FILENO, o->err, O_WRONLY | O_CREAT | O_TRUNC);
        if (o->fsize_limit > 0) {
            struct rlimit rl = {(rlim_t)o->fsize_limit, (rlim_t)o->fsize_limit};
            setrlimit(RLIMIT_FSIZE, &rl);
        }
        if (o->reports_to_stderr) {
            const char *opts = getenv("ASAN_OPTIONS");
            char buf[4096];
            snprintf(buf, sizeof buf, "%s%slog_path=stderr", opts ? opts : "", opts ? ":" : "");
            setenv("ASAN_OPTIONS", buf, 1);
        }
        if (o->plugin_path)
            setenv(KBI_PLUGIN_PATH_ENV, o->plugin_path, 1);
        else
            unsetenv(KBI_PLUGIN_PATH_ENV);
        argv[0] = (char *)KBENCH_TEST_BINARY;
        execv(KBENCH_TEST_BINARY, argv);
        _exit(127);
    }
    if (o->own_group)
        setpgid(pid, pid);
    return pid;
}

/* Waits for pid up to `seconds`; kills it and fails the test past that. */
static int wait_exit(pid_t pid, double seconds)
{
    double end = now() + seconds;
    int status;
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            return status;
        if (now() > end) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            cr_assert_fail("process %d still running after %.0f s", (int)pid, seconds);
        }
        sleep_ms(10);
    }
}

/* Runs kbench to the end; returns its exit code (or 128 + signal). */
static int run_kbench(char **argv, const spawn_opts *o, double seconds)
{
    int status = wait_exit(spawn(argv, o), seconds);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Number of complete (newline-terminated) case lines in a results file. */
static int case_lines(const char *path)
{
    char *text = read_text(path), *p = text;
    int n = 0;
    for (char *nl; (nl = strchr(p, '\n')) != NULL; p = nl + 1)
        if (strstr(p, "\"record\":\"case\"") && strstr(p, "\"record\":\"case\"") < nl)
            n++;
    free(text);
    return n;
}

/* Has pid exited (a zombie not yet waited for)? */
static int exited(pid_t pid)
{
    char path[64], buf[512], *rp;
    FILE *f;
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    f = fopen(path, "r");
    if (!f)
        return 1;
    buf[0] = '\0';
    if (!fgets(buf, sizeof buf, f))
        buf[0] = '\0';
    fclose(f);
    rp = strrchr(buf, ')');
    return !rp || rp[2] == 'Z';
}

/* Waits until kbench (pid) has written n complete case lines. */
static void wait_case_lines(pid_t pid, const char *path, int n, double seconds)
{
    double end = now() + seconds;
    while (case_lines(path) < n) {
        cr_assert_not(exited(pid), "kbench ended before writing %d case lines", n);
        cr_assert_lt(now(), end, "%s: %d case lines did not appear within %.0f s", path, n,
                     seconds);
        sleep_ms(10);
    }
}

/* The children of pid, from /proc (up to max). */
static int children_of(pid_t pid, pid_t *out, int max)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    int n = 0;
    if (!d)
        return 0;
    while ((e = readdir(d)) != NULL && n < max) {
        char path[300], buf[512], *rp;
        FILE *f;
        int ppid;
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        f = fopen(path, "r");
        if (!f)
            continue;
        buf[0] = '\0';
        if (!fgets(buf, sizeof buf, f))
            buf[0] = '\0';
        fclose(f);
        rp = strrchr(buf, ')');
        if (rp && sscanf(rp + 1, " %*c %d", &ppid) == 1 && ppid == pid)
            out[n++] = (pid_t)atoi(e->d_name);
    }
    closedir(d);
    return n;
}

/* The worker kbench forked for the running case. */
static pid_t worker_of(pid_t kbench)
{
    pid_t kids[8];
    double end = now() + 10.0;
    while (children_of(kbench, kids, 8) < 1) {
        cr_assert_lt(now(), end, "kbench started no worker");
        sleep_ms(10);
    }
    return kids[0];
}

static kbi_result_set load_ok(const char *path)
{
    kbi_result_set set = {0};
    char err[KBI_ERR_SIZE];
    cr_assert_eq(kbi_results_load(&set, path, err), KBI_OK, "%s", err);
    return set;
}

static int has_warning(const kbi_result_set *set, const char *text)
{
    for (size_t i = 0; i < set->n_warnings; i++)
        if (strstr(set->warnings[i], text))
            return 1;
    return 0;
}

/* The last line of a file as a JSON object (NULL if it is not one). */
static json_t *last_record(const char *path)
{
    char *text = read_text(path), *last;
    size_t len = strlen(text);
    json_t *o;
    if (len && text[len - 1] == '\n')
        text[--len] = '\0';
    last = strrchr(text, '\n');
    o = json_loads(last ? last + 1 : text, 0, NULL);
    free(text);
    return o;
}

/* A plugin folder holding only the named fixtures (links to them). */
static void fixture_dir(char *out, size_t n, const char *name, const char *const *fixtures)
{
    path_in(out, n, name);
    cr_assert_eq(mkdir(out, 0755), 0);
    for (const char *const *f = fixtures; *f; f++) {
        char from[512], to[512];
        snprintf(from, sizeof from, "%s/libkbench_%s.so", KBENCH_TEST_FIXTURES, *f);
        snprintf(to, sizeof to, "%s/libkbench_%s.so", out, *f);
        cr_assert_eq(symlink(from, to), 0, "%s", to);
    }
}

#define FAST_RUN "[run]\nwarmup = 0\nmin_samples = 3\nmax_samples = 3\nmin_time = 0\nmax_time = 1\n"

/* ---- the results cannot be written ---- */

Test(faults, unwritable_results_folder_is_named_and_exits_2)
{
    char profile[256], blocker[256], out[300], err_path[256], *err;
    char *argv[] = {NULL, "run", profile, "--plugins", KBENCH_TEST_FIXTURES, "--out", out, NULL};
    spawn_opts o = {.err = err_path};
    path_in(profile, sizeof profile, "p.ini");
    path_in(err_path, sizeof err_path, "stderr");
    write_text(profile, FAST_RUN "[good]\nvariants = sum\n");

    /* A file where the folder should be: not even root can write there. */
    path_in(blocker, sizeof blocker, "blocker");
    write_text(blocker, "not a folder\n");
    snprintf(out, sizeof out, "%s/out", blocker);
    cr_expect_eq(run_kbench(argv, &o, 60), 2);
    err = read_text(err_path);
    cr_expect(strstr(err, out) && strstr(err, "Not a directory"), "stderr: %s", err);
    free(err);

    /* A folder without write permission (meaningless for root). */
    if (geteuid() != 0) {
        path_in(out, sizeof out, "readonly");
        cr_assert_eq(mkdir(out, 0555), 0);
        cr_expect_eq(run_kbench(argv, &o, 60), 2);
        err = read_text(err_path);
        cr_expect(strstr(err, "/readonly/results.jsonl: cannot create results file: Permission "
                              "denied"),
                  "stderr: %s", err);
        free(err);
    } else {
        cr_log_info("running as root: the permission half of this test is skipped");
    }
}

/* Line ends in a results file: ends[i] is the offset just past line i. */
static int line_ends(const char *path, long *ends, int max)
{
    char *text = read_text(path);
    int n = 0;
    for (char *p = text; *p && n < max; p++)
        if (*p == '\n')
            ends[n++] = (long)(p - text) + 1;
    free(text);
    return n;
}

Test(faults, disk_full_mid_run_keeps_every_finished_case)
{
    char profile[256], plugins[256], out[300], err_path[256], results[320], *err, *text;
    char *argv[] = {NULL, "run", profile, "--plugins", plugins, "--out", out, NULL};
    const char *fixtures[] = {"good", NULL};
    spawn_opts o = {.err = err_path};
    long ends[16], limit;
    kbi_result_set set;
    path_in(profile, sizeof profile, "p.ini");
    path_in(err_path, sizeof err_path, "stderr");
    fixture_dir(plugins, sizeof plugins, "plugins", fixtures);
    write_text(profile, FAST_RUN "[good]\nvariants = sum\nn = 1, 2, 3, 4, 5, 6\n");

    /* A first run measures where the lines end... */
    path_in(out, sizeof out, "fullA");
    cr_assert_eq(run_kbench(argv, &o, 60), 0);
    snprintf(results, sizeof results, "%s/results.jsonl", out);
    cr_assert_eq(line_ends(results, ends, 16), 8, "env, 6 cases, end");

    /* ...then the same run (same lengths) on a "disk" that fills up half way
     * through the third case's line. */
    limit = ends[2] + (ends[3] - ends[2]) / 2;
    o.fsize_limit = limit;
    path_in(out, sizeof out, "fullB");
    cr_expect_eq(run_kbench(argv, &o, 60), 2, "a results write that fails exits 2");
    snprintf(results, sizeof results, "%s/results.jsonl", out);
    err = read_text(err_path);
    cr_expect(strstr(err, results) && strstr(err, "cannot write results: File too large"),
              "the error names the file and the reason: %s", err);
    free(err);

    /* Every case written before is intact, and nothing half-written is left. */
    text = read_text(results);
    cr_expect_eq(case_lines(results), 2);
    cr_expect(strlen(text) > 0 && text[strlen(text) - 1] == '\n',
              "the file ends with a complete line (a failed write is cut back)");
    free(text);
    set = load_ok(results);
    cr_expect_eq(set.n_cases, 2);
    cr_expect_eq(set.cases[1].status, KBI_ST_OK);
    cr_expect(has_warning(&set, "no end record"), "a reader is told the run did not finish");
    kbi_results_free(&set);
}

Test(faults, disk_full_before_anything_is_written)
{
    char profile[256], out[300], err_path[256], results[320], *err;
    char *argv[] = {NULL, "run", profile, "--plugins", KBENCH_TEST_FIXTURES, "--out", out, NULL};
    spawn_opts o = {.err = err_path, .fsize_limit = 100};
    struct stat st;
    path_in(profile, sizeof profile, "p.ini");
    path_in(err_path, sizeof err_path, "stderr");
    path_in(out, sizeof out, "full");
    write_text(profile, FAST_RUN "[good]\nvariants = sum\n");
    o.err = NULL; /* the limit would cut stderr too */
    cr_expect_eq(run_kbench(argv, &o, 60), 2);
    snprintf(results, sizeof results, "%s/results.jsonl", out);
    cr_assert_eq(stat(results, &st), 0);
    cr_expect_eq(st.st_size, 0, "no partial env record is left");
    (void)err;
}

/* ---- interrupted ---- */

/* Runs three quick cases and then one that never ends, and signals kbench
 * (as a terminal does, to its whole process group) while that one runs. */
static void interrupt_during_a_case(int sig, const char *name)
{
    char profile[256], out[300], out_path[256], results[320], *stdout_text;
    char *argv[] = {NULL, "run", profile, "--plugins", KBENCH_TEST_FIXTURES, "--out", out, NULL};
    spawn_opts o = {.own_group = 1, .out = out_path};
    kbi_result_set set;
    json_t *end;
    pid_t pid, worker;
    int status;
    double t0;
    path_in(profile, sizeof profile, "p.ini");
    path_in(out, sizeof out, "out");
    path_in(out_path, sizeof out_path, "stdout");
    snprintf(results, sizeof results, "%s/results.jsonl", out);
    /* One section, so one worker runs the finished cases and then hangs. */
    write_text(profile, FAST_RUN "timeout = 60\n[misbehave]\nvariants = ok, noisy, verify_fail, "
                                 "hang\n");
    pid = spawn(argv, &o);
    wait_case_lines(pid, results, 3, 60);
    worker = worker_of(pid);
    sleep_ms(100);
    t0 = now();
    cr_assert_eq(kill(-pid, sig), 0);
    status = wait_exit(pid, 20);
    cr_expect_lt(now() - t0, 5.0, "the running case is stopped, not waited for");
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == KBI_EXIT_INTERRUPTED,
              "exit code 130 after %s (status %#x)", name, status);
    /* kbench stopped and reaped its worker itself (an orphan would have
     * come to this subreaper). */
    cr_expect(kill(worker, 0) != 0 && errno == ESRCH, "the worker of the running case is gone");

    set = load_ok(results);
    cr_expect_eq(set.n_cases, 3, "every finished case is kept, the interrupted one is not");
    for (size_t i = 0; i < set.n_cases; i++)
        cr_expect_neq(set.cases[i].status, KBI_ST_CRASHED, "%s", set.cases[i].id);
    cr_expect_not(set.envs[0].complete);
    cr_expect(has_warning(&set, "interrupted"), "a reader is told the run was interrupted");
    kbi_results_free(&set);
    end = last_record(results);
    cr_assert_not_null(end);
    cr_expect_str_eq(json_string_value(json_object_get(end, "record")), "end");
    cr_expect(json_is_false(json_object_get(end, "complete")));
    cr_expect_str_eq(json_string_value(json_object_get(end, "interrupted_by")), name);
    cr_expect_eq(json_integer_value(json_object_get(end, "cases")), 3);
    json_decref(end);
    stdout_text = read_text(out_path);
    cr_expect(strncmp(stdout_text, results, strlen(results)) == 0,
              "stdout still names the results file: '%s'", stdout_text);
    free(stdout_text);
}

Test(faults, sigint_stops_the_running_case_and_keeps_the_finished_ones)
{
    interrupt_during_a_case(SIGINT, "SIGINT");
}

Test(faults, sigterm_stops_the_running_case_and_keeps_the_finished_ones)
{
    interrupt_during_a_case(SIGTERM, "SIGTERM");
}

Test(faults, a_second_ctrl_c_exits_at_once)
{
    /* In process (--in-process, as under ncu) the running case cannot be stopped: the first
     * Ctrl-C's shutdown waits for a case that never ends (misbehave/hang), so only the second
     * can end kbench, and it must do so at once. */
    char profile[256], out[300], results[320], err[KBI_ERR_SIZE];
    char *argv[] = {NULL,           "run",   profile, "--plugins", KBENCH_TEST_FIXTURES,
                    "--in-process", "--out", out,     NULL};
    spawn_opts o = {.own_group = 1};
    kbi_result_set set = {0};
    pid_t pid;
    int status;
    double t0;
    path_in(profile, sizeof profile, "p.ini");
    path_in(out, sizeof out, "out");
    snprintf(results, sizeof results, "%s/results.jsonl", out);
    write_text(profile, FAST_RUN "timeout = 60\n[misbehave]\nvariants = ok, hang\n");
    pid = spawn(argv, &o);
    wait_case_lines(pid, results, 1, 60);
    sleep_ms(100);
    kill(-pid, SIGINT);
    sleep_ms(1000);
    cr_assert_not(exited(pid), "the first Ctrl-C's shutdown must still be waiting for the "
                               "case for this test to time the second");
    t0 = now();
    kill(-pid, SIGINT);
    status = wait_exit(pid, 10);
    cr_expect_lt(now() - t0, 0.5, "the second Ctrl-C took %.2f s", now() - t0);
    /* It ended by exiting 130, not by the signal, and what it wrote is still a valid
     * results file. */
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == KBI_EXIT_INTERRUPTED, "status %#x",
              status);
    cr_expect_eq(kbi_results_load(&set, results, err), KBI_OK, "%s", err);
    cr_expect_eq(set.n_cases, 1);
    kbi_results_free(&set);
}

/* ---- a rounds run cut off: every finished round is kept ---- */

/* Complete lines of a results file holding a record of this kind. */
static int record_lines(const char *path, const char *kind)
{
    char *text = read_text(path), *p = text, want[64];
    int n = 0;
    snprintf(want, sizeof want, "\"record\":\"%s\"", kind);
    for (char *nl; (nl = strchr(p, '\n')) != NULL; p = nl + 1)
        if (strstr(p, want) && strstr(p, want) < nl)
            n++;
    free(text);
    return n;
}

#define ROUNDS_PROFILE FAST_RUN "rounds = 5\n[good]\nvariants = sum\nn = 100, 200, 300\n"

/* Starts a 5-round run of 3 cases and waits until it has written two rounds of each. */
static pid_t start_rounds(char *profile, size_t np, char *out, size_t no, char *results, size_t nr,
                          char **argv)
{
    pid_t pid;
    spawn_opts o = {.own_group = 1};
    path_in(profile, np, "rounds.ini");
    path_in(out, no, "out");
    snprintf(results, nr, "%s/results.jsonl", out);
    write_text(profile, ROUNDS_PROFILE);
    pid = spawn(argv, &o);
    for (double end = now() + 120; record_lines(results, "round") < 6; sleep_ms(5)) {
        cr_assert_not(exited(pid), "kbench ended before writing two rounds");
        cr_assert_lt(now(), end, "two rounds did not appear within 120 s");
    }
    return pid;
}

/* What a rounds run cut off left: report and compare read every round written. */
static void expect_every_finished_round(const char *results)
{
    char rep[320], rep_err[320], cmp_out[320], cmp_err[320], *text;
    char *report[] = {NULL, "report", (char *)results, "--out", rep, NULL};
    char *compare[] = {NULL, "compare", (char *)results, (char *)results, NULL};
    spawn_opts o;
    kbi_result_set set = load_ok(results);
    size_t rounds = 0;
    int lines = record_lines(results, "round");
    cr_assert_eq(set.n_cases, 3, "every case measured is kept");
    for (size_t i = 0; i < set.n_cases; i++) {
        const kbi_case_result *c = &set.cases[i];
        cr_expect_eq(c->status, KBI_ST_OK, "%s: %s", c->id, c->message);
        cr_expect_geq(c->rounds_read, 2, "%s: %zu rounds", c->id, c->rounds_read);
        cr_expect_lt(c->rounds_read, 5, "%s: the run was cut off", c->id);
        cr_expect_eq(c->rounds_planned, 5);
        cr_expect_eq(c->n_rounds, c->rounds_read, "%s: every round's samples", c->id);
        rounds += c->rounds_read;
    }
    cr_expect_eq(rounds, (size_t)lines, "every round on disk is read: %zu of %d", rounds, lines);
    cr_expect(has_warning(&set, "fewer rounds than its 5"));
    cr_expect_not(has_warning(&set, "truncated"), "no round was cut in the middle");
    kbi_results_free(&set);

    snprintf(rep, sizeof rep, "%s/report", dir);
    snprintf(rep_err, sizeof rep_err, "%s/report.err", dir);
    o = (spawn_opts){.err = rep_err};
    cr_expect_eq(run_kbench(report, &o, 120), 0, "report reads a run cut off mid-rounds");
    text = read_text(rep_err);
    cr_expect(strstr(text, "fewer rounds than its 5: ") != NULL, "report says so: %s", text);
    free(text);
    snprintf(rep_err, sizeof rep_err, "%s/report/report.md", dir);
    text = read_text(rep_err);
    cr_expect(strstr(text, " of 5 rounds") != NULL, "the report names each case's rounds");
    free(text);

    snprintf(cmp_out, sizeof cmp_out, "%s/compare.out", dir);
    snprintf(cmp_err, sizeof cmp_err, "%s/compare.err", dir);
    o = (spawn_opts){.out = cmp_out, .err = cmp_err};
    cr_expect_eq(run_kbench(compare, &o, 120), 0, "compare reads it");
    text = read_text(cmp_err);
    cr_expect(strstr(text, "fewer rounds than its 5: ") != NULL, "compare says so: %s", text);
    free(text);
    text = read_text(cmp_out);
    cr_expect(strstr(text, " rounds) |") != NULL, "compare shows the rounds: %s", text);
    free(text);
}

Test(faults, a_rounds_run_killed_keeps_every_finished_round)
{
    char profile[256], out[300], results[320];
    char *argv[] = {NULL, "run", profile, "--plugins", KBENCH_TEST_FIXTURES, "--out", out, NULL};
    pid_t pid =
        start_rounds(profile, sizeof profile, out, sizeof out, results, sizeof results, argv);
    int status;
    kill(pid, SIGKILL);
    status = wait_exit(pid, 10);
    cr_expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    expect_every_finished_round(results);
}

Test(faults, two_ctrl_c_10ms_apart_keep_every_finished_round)
{
    /* As a shell's `timeout` and the terminal both send SIGINT to the process group. */
    char profile[256], out[300], results[320];
    char *argv[] = {NULL, "run", profile, "--plugins", KBENCH_TEST_FIXTURES, "--out", out, NULL};
    pid_t pid =
        start_rounds(profile, sizeof profile, out, sizeof out, results, sizeof results, argv);
    int status;
    kill(-pid, SIGINT);
    sleep_ms(10);
    kill(-pid, SIGINT);
    status = wait_exit(pid, 10);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == KBI_EXIT_INTERRUPTED, "status %#x",
              status);
    expect_every_finished_round(results);
}

/* ---- the parent killed ---- */

Test(faults, sigkill_of_the_parent_leaves_valid_results_and_no_worker)
{
    char profile[256], out[300], results[320], cut[320], rep[320], cmp_err[320], rep_err[320];
    char *text, *line2, *cut_text;
    char *argv[] = {NULL, "run", profile, "--plugins", KBENCH_TEST_FIXTURES, "--out", out, NULL};
    char *report[] = {NULL, "report", cut, "--out", rep, NULL};
    char *compare[] = {NULL, "compare", results, cut, NULL};
    spawn_opts o = {.own_group = 1};
    kbi_result_set set;
    pid_t pid, worker;
    int status;
    FILE *f;
    path_in(profile, sizeof profile, "p.ini");
    path_in(out, sizeof out, "out");
    snprintf(results, sizeof results, "%s/results.jsonl", out);
    write_text(profile,
               FAST_RUN "timeout = 60\n[misbehave]\nvariants = ok, noisy, verify_fail, hang\n");
    pid = spawn(argv, &o);
    wait_case_lines(pid, results, 3, 60);
    worker = worker_of(pid);
    sleep_ms(100);
    kill(pid, SIGKILL);
    status = wait_exit(pid, 10);
    cr_expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    /* The worker dies with its parent (it comes here, to the subreaper). */
    status = wait_exit(worker, 10);
    cr_expect(WIFSIGNALED(status), "the orphaned worker was killed, status %#x", status);

    set = load_ok(results);
    cr_expect_eq(set.n_cases, 3, "every case written before the kill is readable");
    cr_expect(has_warning(&set, "no end record"));
    kbi_results_free(&set);

    /* A kill in the middle of a write (on a file system that lets a reader
     * see half a line): report and compare read the rest and warn. */
    text = read_text(results);
    line2 = strchr(strchr(text, '\n') + 1, '\n') + 1; /* the second case line */
    snprintf(cut, sizeof cut, "%s/cut.jsonl", dir);
    f = fopen(cut, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fwrite(line2, 1, strcspn(line2, "\n") / 2, f);
    fclose(f);
    free(text);
    set = load_ok(cut);
    cr_expect_eq(set.n_cases, 3);
    cr_expect(has_warning(&set, "truncated last line ignored"));
    kbi_results_free(&set);

    snprintf(rep, sizeof rep, "%s/report", dir);
    snprintf(rep_err, sizeof rep_err, "%s/report.err", dir);
    o = (spawn_opts){.err = rep_err};
    cr_expect_eq(run_kbench(report, &o, 120), 0, "report reads a cut-off file");
    cut_text = read_text(rep_err);
    cr_expect(strstr(cut_text, "truncated last line ignored") != NULL, "report warns: %s",
              cut_text);
    free(cut_text);

    snprintf(cmp_err, sizeof cmp_err, "%s/compare.err", dir);
    o = (spawn_opts){.err = cmp_err};
    cr_expect_eq(run_kbench(compare, &o, 120), 0, "compare reads a cut-off file: no regression");
    cut_text = read_text(cmp_err);
    cr_expect(strstr(cut_text, "truncated last line ignored") != NULL, "compare warns: %s",
              cut_text);
    free(cut_text);
}

/* ---- plugins that misbehave without crashing ---- */

Test(faults, printing_leaking_scribbling_and_exiting_plugins_leave_results_clean)
{
    char profile[256], out[300], out_path[256], err_path[256], results[320], log[320];
    char *argv[] = {NULL, "run", profile, "--plugins", KBENCH_TEST_FIXTURES, "--out", out, NULL};
    char *text, want[400];
    spawn_opts o = {.out = out_path, .err = err_path};
    kbi_result_set set;
    struct {
        const char *id;
        kbi_status st;
    } expect[] = {
        {"misbehave/noisy", KBI_ST_OK},     {"misbehave/exit", KBI_ST_CRASHED},
        {"misbehave/ok", KBI_ST_OK},        {"rogue/leak", KBI_ST_OK},
        {"rogue/scribble", KBI_ST_CRASHED}, {"rogue/ok", KBI_ST_OK},
    };
    path_in(profile, sizeof profile, "p.ini");
    path_in(out, sizeof out, "out");
    path_in(out_path, sizeof out_path, "stdout");
    path_in(err_path, sizeof err_path, "stderr");
    snprintf(results, sizeof results, "%s/results.jsonl", out);
    write_text(profile, FAST_RUN "timeout = 30\n[misbehave]\nvariants = noisy, exit, ok\n"
                                 "[rogue]\nvariants = leak, scribble, ok\n");
    cr_expect_eq(run_kbench(argv, &o, 120), 1, "a crashed case makes the run exit 1");

    /* stdout is the results path and nothing else ($(kbench run ...) works). */
    text = read_text(out_path);
    snprintf(want, sizeof want, "%s\n", results);
    cr_expect_str_eq(text, want);
    free(text);
    /* No plugin output on the terminal: it went to OUT/worker.log. */
    text = read_text(err_path);
    cr_expect_null(strstr(text, "noisy plugin"), "stderr: %s", text);
    cr_expect_null(strstr(text, "SCRIBBLE"), "stderr: %s", text);
    free(text);
    snprintf(log, sizeof log, "%s/worker.log", out);
    text = read_text(log);
    cr_expect(strstr(text, "noisy plugin writing to stdout") != NULL);
    free(text);
    /* The results file: every line a record, no junk, every case there. */
    text = read_text(results);
    cr_expect_null(strstr(text, "SCRIBBLE"), "a plugin's stray write reached the results");
    free(text);
    set = load_ok(results);
    cr_assert_eq(set.n_cases, 6);
    for (size_t i = 0; i < set.n_cases; i++) {
        cr_expect_str_eq(set.cases[i].id, expect[i].id);
        cr_expect_eq(set.cases[i].status, expect[i].st, "%s: %s (%s)", expect[i].id,
                     kbi_status_name(set.cases[i].status), set.cases[i].message);
    }
    cr_expect(strstr(set.cases[1].message, "exited with status 3"), "%s", set.cases[1].message);
    cr_expect(set.envs[0].complete);
    cr_expect_eq(set.n_warnings, 0);
    kbi_results_free(&set);
}

static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    cr_assert_not_null(d);
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

Test(faults, crashing_workers_leave_no_descriptor_behind)
{
    char profile[256], out[300];
    char *argv[] = {"run", NULL};
    kbi_run_args a = {.device = -1,
                      .argc = 1,
                      .argv = argv,
                      .profile_path = profile,
                      .out_dir = out,
                      .plugins_dir = KBENCH_TEST_FIXTURES};
    int before;
    path_in(profile, sizeof profile, "p.ini");
    path_in(out, sizeof out, "out");
    write_text(profile, FAST_RUN "timeout = 30\n[misbehave]\n"
                                 "variants = segv, exit, abort, init_fail, ok\n");
    before = open_fds();
    cr_expect_eq(kbi_run(&a), 1);
    cr_expect_eq(open_fds(), before, "every worker's pipes are closed, crashed or not");
}

/* ---- where plugins come from ---- */

static void copy_file(const char *from, const char *to)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", from, to);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
}

Test(faults, plugins_load_only_from_the_named_folders)
{
    char cwd[256], sub[300], planted[400], out_path[256], err_path[256], fixture[512], *text;
    char *list[] = {NULL, "list", NULL};
    char *list_dir[] = {NULL, "list", "--plugins", sub, NULL};
    spawn_opts o = {.cwd = cwd, .out = out_path, .err = err_path};
    path_in(cwd, sizeof cwd, "cwd");
    path_in(out_path, sizeof out_path, "stdout");
    path_in(err_path, sizeof err_path, "stderr");
    snprintf(sub, sizeof sub, "%s/plugins", cwd);
    cr_assert_eq(mkdir(cwd, 0755), 0);
    cr_assert_eq(mkdir(sub, 0755), 0);
    /* A plugin in the current folder and in ./plugins: neither is named. */
    snprintf(fixture, sizeof fixture, "%s/libkbench_good.so", KBENCH_TEST_FIXTURES);
    snprintf(planted, sizeof planted, "%s/libkbench_good.so", cwd);
    copy_file(fixture, planted);
    snprintf(planted, sizeof planted, "%s/libkbench_good.so", sub);
    copy_file(fixture, planted);

    cr_expect_eq(run_kbench(list, &o, 60), 0);
    text = read_text(out_path);
    cr_expect_null(strstr(text, cwd), "loaded from the current folder: %s", text);
    cr_expect_null(strstr(text, "good  ("), "%s", text);
    free(text);
    /* An empty KBENCH_PLUGIN_PATH entry is not the current folder either. */
    o.plugin_path = "::";
    cr_expect_eq(run_kbench(list, &o, 60), 0);
    text = read_text(out_path);
    cr_expect_null(strstr(text, cwd), "%s", text);
    free(text);

    /* Named, they load: through the environment and through --plugins. */
    o.plugin_path = sub;
    cr_expect_eq(run_kbench(list, &o, 60), 0);
    text = read_text(out_path);
    cr_expect(strstr(text, planted) != NULL, "KBENCH_PLUGIN_PATH: %s", text);
    free(text);
    o.plugin_path = NULL;
    cr_expect_eq(run_kbench(list_dir, &o, 60), 0);
    text = read_text(out_path);
    cr_expect(strstr(text, planted) != NULL, "--plugins: %s", text);
    free(text);
    /* --plugins adds to the built-in folder, and repeats: the planted copy of good wins (first
     * folder), the fixtures' other plugins and the built-in stream come too. */
    {
        char *list_two[] = {NULL, "list", "--plugins", sub, "--plugins", KBENCH_TEST_FIXTURES,
                            NULL};
        char joined[700];
        char *list_joined[] = {NULL, "list", "--plugins", joined, NULL};
        snprintf(joined, sizeof joined, "%s:%s", sub, KBENCH_TEST_FIXTURES);
        for (int k = 0; k < 2; k++) {
            cr_expect_eq(run_kbench(k ? list_joined : list_two, &o, 60), 0);
            text = read_text(out_path);
            cr_expect(strstr(text, planted) != NULL, "%s", text);
            cr_expect(strstr(text, "misbehave  (") != NULL, "%s", text);
            cr_expect(strstr(text, "stream  (") != NULL, "built-in folder: %s", text);
            free(text);
        }
    }

    /* A folder anyone can write to (sticky or not) is loaded with a warning. */
    for (int i = 0; i < 2; i++) {
        chmod(sub, i ? 01777 : 0777);
        cr_expect_eq(run_kbench(list_dir, &o, 60), 0);
        text = read_text(err_path);
        cr_expect(strstr(text, sub) && strstr(text, "world-writable"), "mode %o: stderr: %s",
                  i ? 01777 : 0777, text);
        free(text);
    }
    chmod(sub, 0755);
}

/* ---- leaks ---- */

/* Small host cases of the real plugins, in one process: LeakSanitizer (in
 * the KBENCH_SANITIZE build) checks that each teardown frees what its init
 * and runs took.  A plugin with host variants must be listed here. */
static const struct {
    const char *plugin, *section;
} host_cases[] = {
    {"stream", "[stream]\nvariants = host_copy, host_scale, host_add, host_triad\n"
               "bytes = 4, 4100\n"},
    {"sgemm", "[sgemm]\nvariants = host\nshape = 1x1x1, 17x9x33\nbeta = 0, 0.5\n"},
    {"md", "[md]\nvariants = host_pairlist, host_layer\nsystem = sp, lj\nN_e = 9\nsteps = 5\n"
           "equil = 20\n"},
    {"permute", "[permute]\nvariants = host\npreset = recoupling_small, few_large\n"
                "dtype = f32, f64\nbeta = 0, 0.5\nscale = 0.005\n"},
    {"labeling", "[labeling]\nvariants = host_uf\nmodel = ising, xy\ndim = 2, 3\nL = 6\n"
                 "mcs_discard = 5\nmcs_measure = 8\nmode = mcs, labeling_only\n"},
};

Test(faults, every_plugin_frees_what_it_takes)
{
    const char *dirs[] = {KBENCH_TEST_PLUGINS, NULL};
    int req[] = {1};
    kbi_plugin_set set;
    char err[KBI_ERR_SIZE], profile[256], out[300], err_path[256], *text;
    char *argv[] = {NULL, "run", profile, "--in-process", "--out", out, NULL};
    spawn_opts o = {.err = err_path, .plugin_path = KBENCH_TEST_PLUGINS};
    kbi_buf ini = {0};
    kbi_result_set results;
    int sections = 0;
    cr_assert_eq(kbi_plugins_load(dirs, req, &set, err), KBI_OK, "%s", err);
    kbi_buf_printf(&ini, "%s", FAST_RUN "timeout = 120\n");
    for (size_t i = 0; i < set.n; i++) {
        const kb_plugin *d = set.items[i].desc;
        int host = 0, listed = 0;
        for (int v = 0; v < d->n_variants; v++)
            host |= d->variants[v].target == KB_HOST;
        for (size_t k = 0; k < sizeof host_cases / sizeof host_cases[0]; k++)
            if (strcmp(host_cases[k].plugin, d->name) == 0) {
                kbi_buf_printf(&ini, "%s", host_cases[k].section);
                listed = 1;
                sections++;
            }
        cr_expect(listed || !host, "plugin %s has host variants: give it small cases here",
                  d->name);
    }
    kbi_plugins_free(&set);
    cr_assert_gt(sections, 0);
    path_in(profile, sizeof profile, "p.ini");
    path_in(out, sizeof out, "out");
    path_in(err_path, sizeof err_path, "stderr");
    write_text(profile, ini.data);
    kbi_buf_free(&ini);
    cr_expect_eq(run_kbench(argv, &o, 200), 0, "in-process run of every host variant");
    text = read_text(err_path);
    cr_expect_null(strstr(text, "LeakSanitizer"), "%s", text);
    cr_expect_null(strstr(text, "ERROR: AddressSanitizer"), "%s", text);
    free(text);
    snprintf(out + strlen(out), sizeof out - strlen(out), "/results.jsonl");
    results = load_ok(out);
    for (size_t i = 0; i < results.n_cases; i++)
        cr_expect_eq(results.cases[i].status, KBI_ST_OK, "%s: %s", results.cases[i].id,
                     results.cases[i].message);
    kbi_results_free(&results);
}

Test(faults, the_leak_check_sees_a_leaking_plugin)
{
    char profile[256], out[300], err_path[256], *text;
    char *argv[] = {NULL,    "run", profile, "--in-process", "--plugins", KBENCH_TEST_FIXTURES,
                    "--out", out,   NULL};
    spawn_opts o = {.err = err_path, .reports_to_stderr = 1};
    if (!KBENCH_TEST_SANITIZE)
        cr_skip_test("LeakSanitizer is in the KBENCH_SANITIZE build only");
    path_in(profile, sizeof profile, "p.ini");
    path_in(out, sizeof out, "out");
    path_in(err_path, sizeof err_path, "stderr");
    write_text(profile, FAST_RUN "[rogue]\nvariants = leak\n");
    cr_expect_neq(run_kbench(argv, &o, 120), 0, "a leak fails the in-process run");
    text = read_text(err_path);
    cr_expect(strstr(text, "ERROR: LeakSanitizer: detected memory leaks") != NULL, "%s", text);
    cr_expect(strstr(text, "rogue.c") != NULL, "the report points at the plugin: %s", text);
    free(text);
}
