/* The parent side of `kbench run`: select cases, probe the device, drive
 * worker processes, enforce timeouts, write results, report progress. */
#define _GNU_SOURCE
#include "runner.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <poll.h>
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
#include "env.h"
#include "loader.h"
#include "manifest.h"
#include "profile.h"
#include "results.h"
#include "worker.h"

/* Seconds the env probe may take (context creation and two ceilings). */
#define PROBE_TIMEOUT 120.0

static volatile sig_atomic_t interrupted;
/* A record is being written: a second Ctrl-C then waits for the write to end (exit_pending),
 * so what was finished is on disk whole when kbench exits. */
static volatile sig_atomic_t writing, exit_pending;

/* Where children's stdout and stderr go: OUT/worker.log, so a chatty plugin
 * neither garbles the progress lines nor the results.  -1: inherit stderr. */
static int worker_log_fd = -1;

static void on_signal(int sig)
{
    if (interrupted && writing)
        exit_pending = 1; /* at once, after this record (put_record) */
    else if (interrupted)
        _exit(KBI_EXIT_INTERRUPTED); /* a second Ctrl-C: stop at once */
    interrupted = sig;
}

/* Records written between these two are not cut short by a second Ctrl-C: it exits at
 * end_writes, with all of them on disk. */
static void begin_writes(void)
{
    writing++;
}

static void end_writes(void)
{
    if (--writing == 0 && exit_pending)
        _exit(KBI_EXIT_INTERRUPTED);
}

/* kbi_results_write, which a second Ctrl-C does not cut short. */
static int put_record(kbi_results_writer *w, const char *record, json_t *obj, char *err)
{
    int rc;
    begin_writes();
    rc = kbi_results_write(w, record, obj, err);
    end_writes();
    return rc;
}

int kbi_parse_shard(const char *text, int *index, int *count)
{
    char tail;
    if (!text || sscanf(text, "%d/%d%c", index, count, &tail) != 2 || *count < 1 || *index < 1 ||
        *index > *count)
        return -1;
    return 0;
}

/* A child process with a pipe each way. */
typedef struct child {
    pid_t pid;
    int cmd_fd; /* parent writes */
    int res_fd; /* parent reads */
    const kbi_section *section;
    kbi_buf line; /* bytes read but not yet a full line */
} child;

/* Stops the child (if it still runs) and closes its pipes: also after
 * child_reap, so a crashed worker leaves no descriptor behind. */
static void child_stop(child *ch, int force)
{
    int status;
    if (ch->pid > 0 && !force && ch->cmd_fd >= 0 && write(ch->cmd_fd, "quit\n", 5) == 5) {
        /* Give it a moment to tear down cleanly. */
        for (int i = 0; i < 200; i++) {
            if (waitpid(ch->pid, &status, WNOHANG) == ch->pid) {
                ch->pid = 0;
                break;
            }
            usleep(10000);
        }
    }
    if (ch->pid > 0) {
        kill(ch->pid, SIGKILL);
        while (waitpid(ch->pid, &status, 0) < 0 && errno == EINTR)
            ;
    }
    if (ch->cmd_fd >= 0)
        close(ch->cmd_fd);
    if (ch->res_fd >= 0)
        close(ch->res_fd);
    kbi_buf_free(&ch->line);
    ch->pid = 0;
    ch->cmd_fd = ch->res_fd = -1;
    ch->section = NULL;
}

/* In a child: closes every descriptor but 0, 1, 2 and the two given, so
 * that a plugin writing through a stale descriptor cannot reach the
 * results file (or any other file the parent holds open). */
static void close_inherited_fds(int keep1, int keep2)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    if (!d)
        return;
    while ((e = readdir(d)) != NULL) {
        int fd = atoi(e->d_name);
        if (fd > 2 && fd != keep1 && fd != keep2 && fd != dirfd(d))
            close(fd);
    }
    closedir(d);
}

/* Forks a child running fn(arg, cmd_read_fd, res_write_fd). */
static int child_start(child *ch, int (*fn)(void *, int, int), void *arg, char *err)
{
    int cmd[2], res[2];
    memset(ch, 0, sizeof *ch);
    ch->cmd_fd = ch->res_fd = -1;
    if (pipe(cmd) != 0) {
        kbi_errf(err, "cannot create a pipe: %s", strerror(errno));
        return KBI_ERR;
    }
    if (pipe(res) != 0) {
        kbi_errf(err, "cannot create a pipe: %s", strerror(errno));
        close(cmd[0]);
        close(cmd[1]);
        return KBI_ERR;
    }
    fflush(NULL);
    ch->pid = fork();
    if (ch->pid < 0) {
        kbi_errf(err, "cannot fork a worker: %s", strerror(errno));
        close(cmd[0]), close(cmd[1]), close(res[0]), close(res[1]);
        return KBI_ERR;
    }
    if (ch->pid == 0) {
        /* Own process group: the terminal's Ctrl-C reaches the parent only,
         * which then stops this child.  Die with the parent. */
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGPIPE, SIG_DFL);
        close(cmd[1]);
        close(res[0]);
        /* A plugin printing to stdout must not mix with kbench's output. */
        if (worker_log_fd >= 0) {
            dup2(worker_log_fd, STDOUT_FILENO);
            dup2(worker_log_fd, STDERR_FILENO);
            close(worker_log_fd);
        } else {
            dup2(STDERR_FILENO, STDOUT_FILENO);
        }
        close_inherited_fds(cmd[0], res[1]);
        _exit(fn(arg, cmd[0], res[1]));
    }
    close(cmd[0]);
    close(res[1]);
    ch->cmd_fd = cmd[1];
    ch->res_fd = res[0];
    return KBI_OK;
}

/* Waits for one line from the child until the deadline.  Returns 1 with the
 * line in *out (caller frees), 0 on EOF, -1 on timeout, -2 if interrupted. */
static int child_read_line(child *ch, double deadline, char **out)
{
    for (;;) {
        char *nl = ch->line.data ? memchr(ch->line.data, '\n', ch->line.len) : NULL;
        char chunk[65536];
        struct pollfd pfd = {.fd = ch->res_fd, .events = POLLIN};
        double left;
        ssize_t k;
        int pr;
        if (nl) {
            size_t len = (size_t)(nl - ch->line.data);
            *out = kbi_xmalloc(len + 1);
            memcpy(*out, ch->line.data, len);
            (*out)[len] = '\0';
            memmove(ch->line.data, nl + 1, ch->line.len - len - 1);
            ch->line.len -= len + 1;
            return 1;
        }
        if (interrupted)
            return -2;
        left = deadline - kbi_now();
        if (left <= 0)
            return -1;
        pr = poll(&pfd, 1, left > 1.0 ? 1000 : (int)(left * 1000) + 1);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0)
            continue;
        k = read(ch->res_fd, chunk, sizeof chunk);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return 0;
        kbi_buf_printf(&ch->line, "%.*s", (int)k, chunk);
    }
}

/* Reads a worker's answer to "case K": its record line, after any
 * "prepare"/"prepared" pair, whose time does not count against the case's
 * timeout (prepare has its own: ten times the timeout).  Returns as
 * child_read_line. */
static int read_case_answer(child *ch, const kbi_run_opts *o, char **out)
{
    double deadline = kbi_now() + o->timeout;
    for (;;) {
        int r = child_read_line(ch, deadline, out);
        if (r != 1)
            return r;
        if (strcmp(*out, "prepare") == 0)
            deadline = kbi_now() + 10.0 * o->timeout;
        else if (strcmp(*out, "prepared") == 0)
            deadline = kbi_now() + o->timeout;
        else
            return 1;
        free(*out);
        *out = NULL;
    }
}

/* Why a child ended, once it has closed its pipe. */
static void child_reap(child *ch, kbi_status *st, char *msg, size_t size)
{
    int status = 0;
    pid_t r;
    while ((r = waitpid(ch->pid, &status, 0)) < 0 && errno == EINTR)
        ;
    ch->pid = 0;
    if (r > 0 && WIFSIGNALED(status)) {
        *st = KBI_ST_CRASHED;
        snprintf(msg, size, "worker killed by signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    } else if (r > 0 && WIFEXITED(status)) {
        *st = KBI_ST_CRASHED;
        snprintf(msg, size,
                 "worker exited with status %d in the middle of the case (a plugin must not call "
                 "exit)",
                 WEXITSTATUS(status));
    } else {
        *st = KBI_ST_CRASHED;
        snprintf(msg, size, "worker vanished");
    }
}

/* ---- the env probe ---- */

typedef struct probe_arg {
    const kbi_profile *profile;
    int device;
} probe_arg;

static int probe_main(void *arg, int cmd_fd, int res_fd)
{
    const probe_arg *a = arg;
    json_t *env = kbi_env_probe(a->device, a->profile->run.bandwidth_gbs,
                                a->profile->run.peak_gflops, a->profile->run.tf32_gflops,
                                a->profile->run.energy ? a->profile->run.energy_window : 0);
    char *text = json_dumps(env, JSON_COMPACT);
    FILE *f = fdopen(res_fd, "w");
    (void)cmd_fd;
    if (!f || !text)
        return 3;
    fprintf(f, "%s\n", text);
    fclose(f);
    return 0;
}

static json_t *probe_device(const kbi_profile *profile, int device)
{
    probe_arg a = {profile, device};
    child ch;
    char err[KBI_ERR_SIZE], *line = NULL;
    json_t *env = NULL;
    int r;
    if (child_start(&ch, probe_main, &a, err) != KBI_OK)
        goto fail;
    r = child_read_line(&ch, kbi_now() + PROBE_TIMEOUT, &line);
    if (r == 1)
        env = json_loads(line, 0, NULL);
    if (!env) {
        kbi_status st;
        if (r == -1)
            snprintf(err, sizeof err, "device probe timed out after %.0f s", PROBE_TIMEOUT);
        else if (r == -2)
            snprintf(err, sizeof err, "interrupted");
        else {
            char why[KBI_ERR_SIZE] = "it sent no readable answer";
            if (ch.pid > 0)
                child_reap(&ch, &st, why, sizeof why);
            kbi_errf(err, "device probe failed: %s", why);
        }
    }
    free(line);
    child_stop(&ch, 1);
    if (env)
        return env;
fail:
    env = json_object();
    json_object_set_new(env, "device", json_null());
    json_object_set_new(env, "device_error", json_string(err));
    return env;
}

/* The device list (kbi_env_devices) from a child, so the parent never initialises CUDA. */
static int devices_main(void *arg, int cmd_fd, int res_fd)
{
    json_t *list = kbi_env_devices();
    char *text = json_dumps(list, JSON_COMPACT);
    FILE *f = fdopen(res_fd, "w");
    (void)arg;
    (void)cmd_fd;
    json_decref(list);
    if (!f || !text)
        return 3;
    fprintf(f, "%s\n", text);
    free(text);
    fclose(f);
    return 0;
}

/* ---- compute-sanitizer ---- */

/* Exit code compute-sanitizer is asked to use when it finds errors. */
#define SANITIZER_EXIT 86

/* Reads the case record a child `kbench run` wrote to results_path into
 * out.  Returns 1, or 0 when there is none (out untouched). */
static int read_child_case(const char *results_path, kbi_case_result *out)
{
    kbi_result_set set = {0};
    char err[KBI_ERR_SIZE];
    int found = 0;
    if (kbi_results_load(&set, results_path, err) == KBI_OK && set.n_cases > 0) {
        /* Move the first case out of the set. */
        *out = set.cases[0];
        out->env = NULL;
        memset(&set.cases[0], 0, sizeof set.cases[0]);
        found = 1;
    }
    kbi_results_free(&set);
    return found;
}

/* Counts the errors in a compute-sanitizer log ("ERROR SUMMARY: N errors")
 * and copies its first error line into first (size n). */
static long sanitizer_errors(const char *log_path, char *first, size_t n)
{
    FILE *f = fopen(log_path, "r");
    char line[1024];
    long errors = -1;
    first[0] = '\0';
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f)) {
        char *p = strstr(line, "ERROR SUMMARY:"), *q = strstr(line, "RACECHECK SUMMARY:");
        line[strcspn(line, "\n")] = '\0';
        if (p)
            errors = strtol(p + 14, NULL, 10);
        else if (q && strchr(q, '(')) /* "N hazards displayed (E errors, W warnings)" */
            errors = strtol(strchr(q, '(') + 1, NULL, 10);
        else if (!first[0] && strncmp(line, "========= ", 10) == 0 &&
                 (strstr(line, "Invalid") || strstr(line, "Error") || strstr(line, "hazard") ||
                  strstr(line, "Uninitialized") || strstr(line, "Barrier"))) {
            size_t len = strlen(line + 10);
            len = len < n - 1 ? len : n - 1;
            memcpy(first, line + 10, len);
            first[len] = '\0';
        }
    }
    fclose(f);
    return errors;
}

/* Runs one case under compute-sanitizer into rec; returns 1, or 0 when
 * interrupted (the case is not recorded, rec is not filled): a child execs
 *   compute-sanitizer --tool T --error-exitcode 86 --log-file LOG
 *       kbench run PROFILE --in-process --filter ID --out DIR
 * and the case's record is read back from DIR; the sanitizer's findings
 * turn it into an error.  The sanitizer slows kernels by orders of
 * magnitude, so the case gets ten times the profile's timeout. */
static int run_sanitized(const kbi_run_args *args, const kbi_run_ctx *ctx, const kbi_case *c,
                         const char *out_dir, const char *sanitizer, kbi_case_result *rec)
{
    char dir[4096], log_path[4200], results[4200], exe[4096], first[512], msg[KBI_ERR_SIZE];
    char *filter = kbi_glob_escape(c->id), device[16];
    double deadline = kbi_now() + 10.0 * ctx->profile->run.timeout;
    pid_t pid;
    int status = 0, timed_out = 0;
    long errors;
    snprintf(dir, sizeof dir, "%s/sanitize/case-%zu", out_dir, c->index);
    snprintf(log_path, sizeof log_path, "%s/%s.log", dir, args->sanitize);
    snprintf(results, sizeof results, "%s/results.jsonl", dir);
    snprintf(device, sizeof device, "%d", ctx->profile->run.device);
    kbi_mkdirs(dir, msg);
    unlink(results);
    if (readlink("/proc/self/exe", exe, sizeof exe - 1) <= 0)
        snprintf(exe, sizeof exe, "kbench");
    else
        exe[readlink("/proc/self/exe", exe, sizeof exe - 1)] = '\0';
    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        char tool_arg[64], log_arg[4300], exit_arg[32];
        const char *argv[32];
        int n = 0;
        snprintf(tool_arg, sizeof tool_arg, "--tool=%s", args->sanitize);
        snprintf(log_arg, sizeof log_arg, "--log-file=%s", log_path);
        snprintf(exit_arg, sizeof exit_arg, "--error-exitcode=%d", SANITIZER_EXIT);
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        /* The child's kbench measures no energy: the sanitizer's kernels are not the case's. */
        setenv("KBENCH_UNDER_SANITIZER", args->sanitize, 1);
        if (worker_log_fd >= 0) {
            dup2(worker_log_fd, STDOUT_FILENO);
            dup2(worker_log_fd, STDERR_FILENO);
        }
        argv[n++] = sanitizer;
        argv[n++] = tool_arg;
        argv[n++] = exit_arg;
        argv[n++] = log_arg;
        argv[n++] = exe;
        argv[n++] = "run";
        argv[n++] = args->profile_path;
        argv[n++] = "--in-process";
        argv[n++] = "--filter";
        argv[n++] = filter;
        argv[n++] = "--out";
        argv[n++] = dir;
        argv[n++] = "--device";
        argv[n++] = device;
        if (args->plugins_dir) {
            argv[n++] = "--plugins";
            argv[n++] = args->plugins_dir;
        }
        argv[n] = NULL;
        execv(sanitizer, (char *const *)argv);
        _exit(127);
    }
    free(filter);
    while (pid > 0) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            break;
        if (interrupted || kbi_now() > deadline) {
            timed_out = !interrupted;
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            if (interrupted)
                return 0; /* stopped by the user: the case has no result */
            break;
        }
        usleep(20000);
    }
    if (!read_child_case(results, rec)) {
        kbi_case_record_init(ctx, c, rec);
        kbi_errf(msg, "%s under compute-sanitizer (%s); see %s",
                 timed_out             ? "no result within ten times the timeout"
                 : pid < 0             ? "cannot fork"
                 : WIFSIGNALED(status) ? strsignal(WTERMSIG(status))
                                       : "the case's process produced no record",
                 args->sanitize, log_path);
        kbi_case_record_set_status(rec, timed_out ? KBI_ST_TIMEOUT : KBI_ST_CRASHED, msg);
    }
    errors = sanitizer_errors(log_path, first, sizeof first);
    json_decref(rec->sanitizer);
    rec->sanitizer = json_pack("{s:s, s:I, s:s}", "tool", args->sanitize, "errors",
                               (json_int_t)errors, "log", log_path);
    if (errors > 0 || (WIFEXITED(status) && WEXITSTATUS(status) == SANITIZER_EXIT)) {
        kbi_errf(msg, "compute-sanitizer %s: %ld error%s: %s (log: %s)", args->sanitize, errors,
                 errors == 1 ? "" : "s", first[0] ? first : "see the log", log_path);
        kbi_case_record_set_status(rec, KBI_ST_ERROR, msg);
    } else if (errors < 0 && !timed_out && rec->status != KBI_ST_SKIPPED) {
        kbi_errf(msg, "compute-sanitizer %s left no error summary in %s", args->sanitize, log_path);
        kbi_case_record_set_status(rec, KBI_ST_ERROR, msg);
    }
    return 1;
}

/* ---- the worker ---- */

static int worker_entry(void *arg, int cmd_fd, int res_fd)
{
    return kbi_worker_main(arg, cmd_fd, res_fd);
}

static void format_seconds(double t, char *buf, size_t n)
{
    if (t <= 0)
        snprintf(buf, n, "-");
    else if (t < 1e-6)
        snprintf(buf, n, "%.3g ns", t * 1e9);
    else if (t < 1e-3)
        snprintf(buf, n, "%.4g us", t * 1e6);
    else if (t < 1.0)
        snprintf(buf, n, "%.4g ms", t * 1e3);
    else
        snprintf(buf, n, "%.4g s", t);
}

/* Seconds the run still needs, from how long its first `done` of `total` measurements
 * took; -1 when nothing is known yet or nothing is left. */
static double eta(double t0, size_t done, size_t total)
{
    return done > 0 && done < total ? (kbi_now() - t0) / (double)done * (double)(total - done) : -1;
}

/* The widest a progress line gets, in columns: a message that would run past it is cut. */
#define KBI_PROGRESS_COLUMNS 160

/* Columns that the UTF-8 text s takes (one per character). */
static size_t columns(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

/* One progress line per case measured (per round of it, with rounds): one counter over the
 * whole run, the time left at the pace so far, and the case by its label (what varies in its
 * section; the record holds its id).  A message equal to `said` (the reason device cases are
 * skipped, printed once before the cases) is not repeated on every line; a longer one than the
 * line has room for is cut, with "...", at KBI_PROGRESS_COLUMNS (the record keeps it whole). */
static void progress(size_t k, size_t n, double left, const char *who, const char *label,
                     const kbi_case_result *rec, const char *said)
{
    char t[32] = "", eta_text[48] = "";
    const char *msg = rec->message;
    kbi_buf b = {0};
    format_seconds(rec->stats.median, t, sizeof t);
    if (left >= 3600)
        snprintf(eta_text, sizeof eta_text, ", %dh%02dm left", (int)(left / 3600),
                 (int)fmod(left / 60, 60));
    else if (left >= 60)
        snprintf(eta_text, sizeof eta_text, ", %dm%02ds left", (int)(left / 60),
                 (int)fmod(left, 60));
    else if (left >= 0)
        snprintf(eta_text, sizeof eta_text, ", %.0fs left", ceil(left));
    kbi_buf_printf(&b, "[%zu/%zu%s] %s%s%s  %s", k, n, eta_text, who ? who : "", who ? " " : "",
                   label, kbi_status_name(rec->status));
    if (rec->has_stats)
        kbi_buf_printf(&b, "  median %s", t);
    if (rec->gflops > 0)
        kbi_buf_printf(&b, "  %.4g GFLOP/s", rec->gflops);
    if (rec->gbs > 0)
        kbi_buf_printf(&b, "  %.4g GB/s", rec->gbs);
    if (msg && *msg && said && strcmp(msg, said) == 0) {
        kbi_buf_printf(&b, "  (no device: see above)");
    } else if (msg && *msg) {
        /* "  (msg)" within the line's columns: msg cut after a whole character, with "...". */
        size_t used = columns(b.data) + 4, cut = 0;
        if (used + columns(msg) <= KBI_PROGRESS_COLUMNS) {
            kbi_buf_printf(&b, "  (%s)", msg);
        } else {
            size_t room = KBI_PROGRESS_COLUMNS > used + 3 ? KBI_PROGRESS_COLUMNS - used - 3 : 0;
            for (size_t cols = 0; msg[cut] && cols < room; cols++)
                do
                    cut++;
                while (((unsigned char)msg[cut] & 0xc0) == 0x80);
            kbi_buf_printf(&b, "  (%.*s...)", (int)cut, msg);
        }
    }
    fprintf(stderr, "%s\n", b.data);
    kbi_buf_free(&b);
}

static char *default_out_dir(const char *profile_path)
{
    const char *base = strrchr(profile_path, '/');
    char stem[256], stamp[32];
    time_t now = time(NULL);
    struct tm tm;
    kbi_buf b = {0};
    base = base ? base + 1 : profile_path;
    snprintf(stem, sizeof stem, "%s", base);
    if (strrchr(stem, '.'))
        *strrchr(stem, '.') = '\0';
    localtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    kbi_buf_printf(&b, "results/%s-%s", stem, stamp);
    return b.data;
}

typedef struct dev_worker dev_worker;

/* Everything one `kbench run` holds, so its steps below can be read top-down. */
typedef struct run_state {
    const kbi_run_args *args;
    kbi_plugin_set plugins;
    kbi_profile profile;
    kbi_case *all, **sel;
    size_t n_all, n_sel, done, counts[KBI_ST_COUNT];
    int any_device, write_failed;
    int rounds_done; /* rounds every case finished ([run] rounds > 1) */
    double started;  /* when the first case began, for the time left */
    kbi_results_writer w;
    kbi_run_ctx ctx;
    json_t *env;
    child worker;
    char *out_dir;
    char path[4096];
    char sanitizer[4096];
    /* --devices: one worker per device, each case taken once (taken[k]). */
    dev_worker *dw;
    size_t n_dw;
    unsigned char *taken;
    int fake_devices; /* KBENCH_FAKE_DEVICES: devices without CUDA, for tests */
} run_state;

/* Loads the plugins and the profile and selects the cases (--filter, --shard).  Returns 0, or
 * an exit code after saying why on stderr. */
static int select_cases(run_state *rs)
{
    const kbi_run_args *args = rs->args;
    char *dirs[16], err[KBI_ERR_SIZE];
    int required[16], rc = KBI_EXIT_USAGE;
    kbi_buf errors = {0};
    kbi_strlist repeats = {0};
    size_t n_dirs = kbi_plugin_dirs(args->plugins_dir, dirs, required, 15);
    dirs[n_dirs] = NULL;
    if (kbi_plugins_load((const char *const *)dirs, required, &rs->plugins, err) != KBI_OK) {
        fprintf(stderr, "kbench: %s\n", err);
        goto out;
    }
    for (size_t i = 0; i < rs->plugins.n_refused; i++)
        fprintf(stderr, "kbench: %s\n", rs->plugins.refused[i]);
    if (kbi_profile_load(args->profile_path, &rs->plugins, &rs->profile, &errors) != KBI_OK) {
        fputs(errors.data ? errors.data : "kbench: cannot read the profile\n", stderr);
        goto out;
    }
    if (args->device >= 0)
        rs->profile.run.device = args->device;
    kbi_profile_cases_noting(&rs->profile, &rs->all, &rs->n_all, &repeats);
    for (size_t i = 0; i < repeats.n; i++)
        fprintf(stderr, "kbench: warning: %s\n", repeats.s[i]);
    rs->sel = kbi_xcalloc(rs->n_all ? rs->n_all : 1, sizeof *rs->sel);
    for (size_t i = 0; i < rs->n_all; i++) {
        const kbi_case *c = &rs->all[i];
        if (args->filter && !kbi_case_selected(c, args->filter))
            continue;
        if (args->shard_count > 1 &&
            (int)(c->index % (size_t)args->shard_count) != args->shard_index - 1)
            continue;
        rs->sel[rs->n_sel++] = &rs->all[i];
        rs->any_device |= c->section->plugin->desc->variants[c->variant].target == KB_DEVICE;
    }
    if (rs->n_sel == 0) {
        fprintf(stderr, "kbench: %s: no case to run (%zu in the profile%s%s%s)\n",
                args->profile_path, rs->n_all, args->filter ? ", none matching --filter " : "",
                args->filter ? args->filter : "", args->shard_count > 1 ? ", in this shard" : "");
        goto out;
    }
    rc = 0;
out:
    kbi_buf_free(&errors);
    kbi_strlist_free(&repeats);
    for (size_t i = 0; i < n_dirs; i++)
        free(dirs[i]);
    return rc;
}

/* --sanitize: the tool must be known and compute-sanitizer found.  Returns 0 or an exit code. */
static int find_sanitizer(run_state *rs)
{
    static const char *const tools[] = {"memcheck", "racecheck", "initcheck", "synccheck"};
    const char *tool = rs->args->sanitize;
    char err[KBI_ERR_SIZE];
    int known = 0;
    if (!tool)
        return 0;
    for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++)
        known |= strcmp(tool, tools[i]) == 0;
    if (!known) {
        fprintf(stderr,
                "kbench: --sanitize=%s: unknown tool, expected memcheck, racecheck, "
                "initcheck or synccheck\n",
                tool);
        return KBI_EXIT_USAGE;
    }
    if (kbi_find_tool("compute-sanitizer", "KBENCH_COMPUTE_SANITIZER", rs->sanitizer,
                      sizeof rs->sanitizer, err) != KBI_OK) {
        fprintf(stderr, "kbench: %s\n", err);
        return KBI_EXIT_USAGE;
    }
    return 0;
}

/* Makes the output folder and results file (never over an existing one), the worker log, and
 * the signal handling.  Returns 0 or an exit code. */
static int open_output(run_state *rs)
{
    char err[KBI_ERR_SIZE], run_id[64], stamp[32], log_path[4200];
    struct stat st;
    struct sigaction sa;
    rs->out_dir =
        rs->args->out_dir ? kbi_strdup(rs->args->out_dir) : default_out_dir(rs->args->profile_path);
    if (kbi_mkdirs(rs->out_dir, err) != KBI_OK) {
        fprintf(stderr, "kbench: %s\n", err);
        return KBI_EXIT_USAGE;
    }
    snprintf(rs->path, sizeof rs->path, "%s/results.jsonl", rs->out_dir);
    if (stat(rs->path, &st) == 0) {
        fprintf(stderr,
                "kbench: %s already exists; choose another --out or move it away "
                "(results are never overwritten)\n",
                rs->path);
        return KBI_EXIT_USAGE;
    }
    kbi_env_time(stamp, sizeof stamp);
    snprintf(run_id, sizeof run_id, "%s-%ld", stamp, (long)getpid());
    if (kbi_results_open(&rs->w, rs->path, run_id, err) != KBI_OK) {
        fprintf(stderr, "kbench: %s\n", err);
        return KBI_EXIT_USAGE;
    }
    snprintf(log_path, sizeof log_path, "%s/worker.log", rs->out_dir);
    worker_log_fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
    if (worker_log_fd < 0)
        fprintf(stderr, "kbench: warning: %s: %s; worker output goes to stderr\n", log_path,
                strerror(errno));
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    /* Past a file size limit (ulimit -f, a batch system's) a write fails with EFBIG and is
     * reported like a full disk, instead of SIGXFSZ killing the run. */
    signal(SIGXFSZ, SIG_IGN);
    return 0;
}

/* The environment record without a device (no device variant selected). */
static json_t *env_without_device(const kbi_profile *profile)
{
    json_t *env = json_object(), *ceil = json_object();
    json_object_set_new(env, "device", json_null());
    json_object_set_new(env, "device_error", json_string("not probed: no device variant selected"));
    json_object_set_new(ceil, "bandwidth_gbs", json_real(profile->run.bandwidth_gbs));
    json_object_set_new(ceil, "peak_gflops", json_real(profile->run.peak_gflops));
    json_object_set_new(ceil, "tf32_gflops", json_real(profile->run.tf32_gflops));
    json_object_set_new(ceil, "source",
                        json_string(profile->run.bandwidth_gbs > 0 ||
                                            profile->run.peak_gflops > 0 ||
                                            profile->run.tf32_gflops > 0
                                        ? "profile"
                                        : "none"));
    json_object_set_new(env, "ceilings", ceil);
    return env;
}

/* The profile's [run] options, as recorded in the env record. */
static json_t *run_opts_json(const kbi_run_opts *o)
{
    json_t *runj = json_object();
    json_object_set_new(runj, "warmup", json_integer(o->warmup));
    json_object_set_new(runj, "min_samples", json_integer(o->min_samples));
    json_object_set_new(runj, "max_samples", json_integer(o->max_samples));
    json_object_set_new(runj, "min_time", json_real(o->min_time));
    json_object_set_new(runj, "max_time", json_real(o->max_time));
    json_object_set_new(runj, "max_noise", json_real(o->max_noise));
    json_object_set_new(runj, "timeout", json_real(o->timeout));
    json_object_set_new(runj, "cache", json_string(o->cache == KBI_CACHE_HOT ? "hot" : "cold"));
    json_object_set_new(runj, "device", json_integer(o->device));
    json_object_set_new(runj, "seed", json_integer((json_int_t)o->seed));
    json_object_set_new(runj, "rounds", json_integer(o->rounds));
    json_object_set_new(runj, "energy", json_string(o->energy ? "on" : "off"));
    json_object_set_new(runj, "energy_window", json_real(o->energy_window));
    json_object_set_new(runj, "energy_windows", json_integer(o->energy_windows));
    return runj;
}

/* FNV-1a (64 bits) of the bytes of the file at path; *bytes is its size, or -1 when it cannot
 * be read (then the hash is 0). */
static uint64_t file_fnv1a(const char *path, long long *bytes)
{
    uint64_t h = 14695981039346656037ULL;
    unsigned char buf[1 << 16];
    size_t n;
    FILE *f = fopen(path, "rb");
    *bytes = -1;
    if (!f)
        return 0;
    *bytes = 0;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
        for (size_t i = 0; i < n; i++)
            h = (h ^ buf[i]) * 1099511628211ULL;
        *bytes += (long long)n;
    }
    if (ferror(f)) {
        *bytes = -1;
        h = 0;
    }
    fclose(f);
    return h;
}

/* The env record's "plugins": each plugin a selected case runs, in case order, with the file
 * it was loaded from, its size and an FNV-1a hash of its bytes.  git_revision names the
 * harness's build; a plugin may come from another build through --plugins, and this is what
 * tells two builds of one plugin apart in results. */
static json_t *plugins_json(const run_state *rs)
{
    json_t *list = json_array();
    for (size_t i = 0; i < rs->n_sel; i++) {
        const kbi_plugin *p = rs->sel[i]->section->plugin;
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = rs->sel[j]->section->plugin == p;
        if (seen)
            continue;
        long long bytes;
        char hex[17];
        json_t *o = json_object();
        snprintf(hex, sizeof hex, "%016llx", (unsigned long long)file_fnv1a(p->path, &bytes));
        json_object_set_new(o, "name", json_string(p->desc->name));
        json_object_set_new(o, "file", json_string(p->path));
        json_object_set_new(o, "bytes", bytes >= 0 ? json_integer(bytes) : json_null());
        json_object_set_new(o, "fnv1a64", bytes >= 0 ? json_string(hex) : json_null());
        json_array_append_new(list, o);
    }
    return list;
}

/* The env record's fields that do not depend on the device: host, build, profile, options. */
static void env_common(const run_state *rs, json_t *env)
{
    const kbi_run_args *args = rs->args;
    char shard[32];
    kbi_env_host(env, args->argc, args->argv);
    json_object_set_new(env, "profile", json_string(args->profile_path));
    json_object_set_new(env, "run", run_opts_json(&rs->profile.run));
    snprintf(shard, sizeof shard, "%d/%d", args->shard_count > 1 ? args->shard_index : 1,
             args->shard_count > 1 ? args->shard_count : 1);
    json_object_set_new(env, "shard", json_string(shard));
    json_object_set_new(env, "filter", args->filter ? json_string(args->filter) : json_null());
    json_object_set_new(env, "sanitize",
                        args->sanitize ? json_string(args->sanitize) : json_null());
    json_object_set_new(env, "cases", json_integer((json_int_t)rs->n_sel));
    json_object_set_new(env, "plugins", plugins_json(rs));
}

/* Probes the device (in a child), writes the env record, and fills the context the workers
 * share.  Returns 0 or an exit code. */
static int write_env(run_state *rs)
{
    const kbi_run_args *args = rs->args;
    kbi_profile *profile = &rs->profile;
    char err[KBI_ERR_SIZE];
    json_t *ceilings;
    /* Under a sanitizer (here, or in the child it wraps) or ncu, kernels are not timed as
     * they run: no energy windows. */
    if (args->sanitize || args->profile_run || getenv("KBENCH_UNDER_SANITIZER"))
        profile->run.energy = 0;
    if (rs->any_device) {
        fprintf(stderr, "kbench: probing device %d and measuring its ceilings...\n",
                profile->run.device);
        rs->env = args->in_process
                      ? kbi_env_probe(profile->run.device, profile->run.bandwidth_gbs,
                                      profile->run.peak_gflops, profile->run.tf32_gflops,
                                      profile->run.energy ? profile->run.energy_window : 0)
                      : probe_device(profile, profile->run.device);
    } else {
        rs->env = env_without_device(profile);
    }
    env_common(rs, rs->env);
    if (put_record(&rs->w, "env", rs->env, err) != KBI_OK) {
        fprintf(stderr, "kbench: %s\n", err);
        return KBI_EXIT_USAGE;
    }
    ceilings = json_object_get(rs->env, "ceilings");
    rs->ctx.profile = profile;
    rs->ctx.profile_run = args->profile_run;
    rs->ctx.device = profile->run.device;
    rs->ctx.cases = rs->sel;
    rs->ctx.n_cases = rs->n_sel;
    rs->ctx.device_ok = json_is_object(json_object_get(rs->env, "device"));
    rs->ctx.device_error = json_string_value(json_object_get(rs->env, "device_error"));
    rs->ctx.bandwidth_gbs = json_number_value(json_object_get(ceilings, "bandwidth_gbs"));
    rs->ctx.peak_gflops = json_number_value(json_object_get(ceilings, "peak_gflops"));
    if (rs->any_device && !rs->ctx.device_ok)
        fprintf(stderr, "kbench: device variants will be skipped: %s\n",
                rs->ctx.device_error ? rs->ctx.device_error : "no device");
    fprintf(stderr, "kbench: %zu cases; results in %s\n", rs->n_sel, rs->path);
    return 0;
}

/* The record of a case worker ch (run with ctx) did not answer: crashed, timed out, or
 * unreadable (r as child_read_line, 1 for an unreadable line).  Stops the worker. */
static void lost_case_of(const kbi_run_ctx *ctx, child *ch, const kbi_case *c, int r,
                         kbi_case_result *rec)
{
    char msg[KBI_ERR_SIZE];
    kbi_status s = KBI_ST_CRASHED;
    if (r == -1) {
        s = KBI_ST_TIMEOUT;
        snprintf(msg, sizeof msg, "no result within the timeout of %g s; worker killed",
                 ctx->profile->run.timeout);
    } else if (r == 1) {
        snprintf(msg, sizeof msg, "worker sent an unreadable result");
    } else {
        child_reap(ch, &s, msg, sizeof msg);
    }
    child_stop(ch, 1);
    kbi_case_record_init(ctx, c, rec);
    kbi_case_record_set_status(rec, s, msg);
}

static void lost_case(run_state *rs, const kbi_case *c, int r, kbi_case_result *rec)
{
    lost_case_of(&rs->ctx, &rs->worker, c, r, rec);
}

/* Makes ch the worker of c's section: stops a worker of another section, starts one if none
 * runs.  Returns KBI_OK, or KBI_ERR (said on stderr; the run cannot go on). */
static int section_worker(run_state *rs, child *ch, const kbi_run_ctx *ctx, const kbi_case *c)
{
    char err[KBI_ERR_SIZE];
    if (ch->pid > 0 && ch->section != c->section)
        child_stop(ch, 0);
    if (ch->pid <= 0) {
        if (child_start(ch, worker_entry, (void *)ctx, err) != KBI_OK) {
            fprintf(stderr, "kbench: %s\n", err);
            rs->write_failed = 1;
            return KBI_ERR;
        }
        ch->section = c->section;
    }
    return KBI_OK;
}

/* Case k of the selection in the section's worker (started or replaced as needed), into rec.
 * Returns 1; 0 with *stop set when the run must end (interrupted, no worker). */
static int worker_case(run_state *rs, size_t k, int *stop, kbi_case_result *rec)
{
    const kbi_case *c = rs->sel[k];
    char cmd[64], *line = NULL;
    int r, have = 0;
    if (section_worker(rs, &rs->worker, &rs->ctx, c) != KBI_OK) {
        *stop = 1;
        return 0;
    }
    snprintf(cmd, sizeof cmd, "case %zu\n", k);
    if (write(rs->worker.cmd_fd, cmd, strlen(cmd)) != (ssize_t)strlen(cmd))
        r = 0;
    else
        r = read_case_answer(&rs->worker, &rs->profile.run, &line);
    if (r == -2) {
        child_stop(&rs->worker, 1);
        *stop = 1;
        return 0;
    }
    if (r == 1) {
        /* The worker's record, read once into the struct. */
        json_t *sent = json_loads(line, 0, NULL);
        have = json_is_object(sent) && kbi_case_record_read(rec, sent, KBI_RESULTS_VERSION) == NULL;
        json_decref(sent);
    }
    free(line);
    if (!have) {
        lost_case(rs, c, r, rec);
        return 1;
    }
    /* After an error the CUDA context may be poisoned: the next case gets a fresh worker. */
    if (rec->status == KBI_ST_ERROR || rec->sticky_error)
        child_stop(&rs->worker, 1);
    return 1;
}

/* Runs case k the way the run asks (sanitized, in-process, skipped without a device, or in a
 * worker) into rec.  Returns 1, or 0 with *stop set (rec not filled). */
static int run_case(run_state *rs, size_t k, int *stop, kbi_case_result *rec)
{
    const kbi_case *c = rs->sel[k];
    const kb_variant *v = &c->section->plugin->desc->variants[c->variant];
    int device = v->target == KB_DEVICE;
    if (rs->args->sanitize && device && rs->ctx.device_ok) {
        if (rs->worker.pid > 0)
            child_stop(&rs->worker, 0); /* the sanitized child needs the device alone */
        if (run_sanitized(rs->args, &rs->ctx, c, rs->out_dir, rs->sanitizer, rec))
            return 1;
        *stop = 1; /* interrupted */
        return 0;
    }
    if (device && !rs->ctx.device_ok) {
        /* Nothing to isolate: record the skip without a worker. */
        kbi_case_record_init(&rs->ctx, c, rec);
        kbi_case_record_set_status(rec, KBI_ST_SKIPPED,
                                   rs->ctx.device_error ? rs->ctx.device_error : "no CUDA device");
        return 1;
    }
    if (rs->args->in_process) {
        kbi_case_execute(&rs->ctx, c, rec);
        return 1;
    }
    return worker_case(rs, k, stop, rec);
}

/* Counts rec, marks it as a --sanitize run's, writes and frees it.  Returns 0, or -1 when the
 * results file cannot be written (the run must end). */
static int write_case(run_state *rs, kbi_case_result *rec)
{
    char err[KBI_ERR_SIZE];
    json_t *obj;
    int rc = 0;
    rs->counts[rec->status < KBI_ST_COUNT ? rec->status : KBI_ST_ERROR]++;
    rs->done++;
    if (rs->args->sanitize) {
        /* Every case of the run, host ones included: report and compare must not take any
         * time of a sanitized run for a timing. */
        free(rec->sanitize);
        rec->sanitize = kbi_strdup(rs->args->sanitize);
    }
    obj = kbi_case_record_json(rec);
    kbi_case_result_free(rec);
    if (put_record(&rs->w, "case", obj, err) != KBI_OK) {
        fprintf(stderr, "kbench: %s\n", err);
        rs->write_failed = 1;
        rc = -1;
    }
    json_decref(obj);
    return rc;
}

/* Nanoseconds process pid has run on a CPU and waited for one (runnable, not running), from
 * /proc/PID/schedstat.  Returns 0, or -1 where the kernel does not say. */
static int cpu_times(pid_t pid, double *ran, double *waited)
{
    char path[64];
    unsigned long long run, wait;
    FILE *f;
    int ok;
    snprintf(path, sizeof path, "/proc/%ld/schedstat", (long)pid);
    f = fopen(path, "r");
    if (!f)
        return -1;
    ok = fscanf(f, "%llu %llu", &run, &wait) == 2;
    fclose(f);
    *ran = (double)run;
    *waited = (double)wait;
    return ok ? 0 : -1;
}

/* run_case, and for a host case run by a worker, the share of its time the worker waited for
 * a CPU (rec->cpu_wait): on a machine whose cores are all taken, a host case's times measure
 * the load, however steady they look. */
static int run_case_watched(run_state *rs, size_t k, int *stop, kbi_case_result *rec)
{
    const kbi_case *c = rs->sel[k];
    pid_t before = rs->worker.pid;
    double ran0 = 0, waited0 = 0, ran1, waited1;
    int host = c->section->plugin->desc->variants[c->variant].target == KB_HOST;
    if (before > 0 && cpu_times(before, &ran0, &waited0) != 0)
        before = -1;
    if (!run_case(rs, k, stop, rec))
        return 0;
    /* A worker started for this case counts from zero; one replaced midway says nothing. */
    if (host && !rs->args->in_process && before >= 0 && rs->worker.pid > 0 &&
        (before == 0 || before == rs->worker.pid) &&
        cpu_times(rs->worker.pid, &ran1, &waited1) == 0 && ran1 - ran0 + waited1 - waited0 > 0)
        rec->cpu_wait = (waited1 - waited0) / (ran1 - ran0 + waited1 - waited0);
    return 1;
}

/* ---- rounds ----
 * With [run] rounds = R > 1 every case is measured R times: the whole selection once per
 * round, so that what else the machine does during the run (other users, clock changes)
 * falls on every case alike and shows as a difference between a case's rounds.  The spread
 * of the round medians is what `compare` judges a change against.  Each round of a case is
 * written as it ends, fsynced like a case record: a "round" record, the round's own case
 * record with its number, which the reader joins into one case (results.h).  So a run cut
 * off mid-rounds (killed, or stopped by a second Ctrl-C) keeps every finished round.  A
 * round that does not end ok ends the case's rounds. */

/* The rounds this run measures: 1 in process (one case under ncu or a sanitizer wants one
 * run) and under --sanitize (its times are not timings, and a sanitized case is slow). */
static int rounds_of(const run_state *rs)
{
    return rs->args->in_process || rs->args->sanitize ? 1 : rs->profile.run.rounds;
}

/* [run] rounds > 1 needs the one-worker path: --devices deals each case out once.  Returns 0
 * or an exit code. */
static int check_rounds(const run_state *rs)
{
    if (rs->n_dw == 0 || rounds_of(rs) <= 1)
        return 0;
    fprintf(stderr,
            "kbench: %s: [run] rounds = %d cannot be used with --devices, which runs each case "
            "once; run on one device, or set rounds = 1\n",
            rs->args->profile_path, rs->profile.run.rounds);
    return KBI_EXIT_USAGE;
}

/* Writes round `round` (from 1) of a case, rec, as it ended, and frees rec.  Returns 0, or
 * -1 when the results file cannot be written (the run must end). */
static int write_round(run_state *rs, kbi_case_result *rec, int round)
{
    char err[KBI_ERR_SIZE];
    json_t *obj = kbi_case_record_json(rec);
    int rc = 0;
    kbi_case_result_free(rec);
    json_object_set_new(obj, "round", json_integer(round));
    if (put_record(&rs->w, "round", obj, err) != KBI_OK) {
        fprintf(stderr, "kbench: %s\n", err);
        rs->write_failed = 1;
        rc = -1;
    }
    json_decref(obj);
    return rc;
}

/* Every selected case in rounds (see above).  The run's counts are of cases, each by the
 * status of its last round. */
static void run_rounds(run_state *rs)
{
    int rounds = rounds_of(rs), stop = 0;
    int *last = kbi_xcalloc(rs->n_sel, sizeof *last); /* status of its last round, -1 none */
    size_t total = (size_t)rounds * rs->n_sel, done = 0;
    for (size_t k = 0; k < rs->n_sel; k++)
        last[k] = -1;
    for (int r = 0; r < rounds && !stop && !interrupted; r++) {
        /* Each round in a fresh worker: what a process draws by chance (its core, its memory
         * layout, its device context) then varies between rounds too, instead of moving one
         * run against another unseen. */
        child_stop(&rs->worker, 0);
        for (size_t k = 0; k < rs->n_sel && !stop && !interrupted; k++) {
            kbi_case_result rec;
            char who[32];
            if (last[k] > KBI_ST_OK)
                continue; /* failed or skipped in an earlier round */
            if (!run_case_watched(rs, k, &stop, &rec))
                break;
            last[k] = rec.status;
            done++;
            if (rec.status != KBI_ST_OK)
                total -= (size_t)(rounds - r - 1); /* its later rounds are not run */
            snprintf(who, sizeof who, "round %d/%d", r + 1, rounds);
            progress(done, total, eta(rs->started, done, total), who, rs->sel[k]->label, &rec,
                     rs->ctx.device_ok ? NULL : rs->ctx.device_error);
            if (write_round(rs, &rec, r + 1) != 0)
                stop = 1;
        }
        if (!stop && !interrupted)
            rs->rounds_done = r + 1;
    }
    for (size_t k = 0; k < rs->n_sel; k++) {
        if (last[k] < 0)
            continue;
        rs->counts[last[k] < KBI_ST_COUNT ? last[k] : KBI_ST_ERROR]++;
        rs->done++;
    }
    free(last);
}

/* Every selected case, each record written and flushed as it ends. */
static void run_cases(run_state *rs)
{
    if (rounds_of(rs) > 1)
        run_rounds(rs);
    for (size_t k = 0; rounds_of(rs) <= 1 && k < rs->n_sel && !interrupted; k++) {
        int stop = 0;
        kbi_case_result rec;
        if (!run_case_watched(rs, k, &stop, &rec))
            break;
        progress(k + 1, rs->n_sel, eta(rs->started, k + 1, rs->n_sel), NULL, rs->sel[k]->label,
                 &rec, rs->ctx.device_ok ? NULL : rs->ctx.device_error);
        if (write_case(rs, &rec) != 0 || stop)
            break;
    }
    child_stop(&rs->worker, interrupted != 0);
    if (rs->args->in_process)
        kbi_worker_release_point();
}

/* An end record: complete or not, how many cases of each status (n), and how many failed
 * (into *failed). */
static json_t *end_json(int complete, size_t done, const size_t *n, size_t *failed)
{
    json_t *end = json_object(), *by = json_object();
    *failed = 0;
    json_object_set_new(end, "complete", json_boolean(complete));
    json_object_set_new(end, "cases", json_integer((json_int_t)done));
    for (int s = 0; s < KBI_ST_COUNT; s++) {
        json_object_set_new(by, kbi_status_name((kbi_status)s), json_integer((json_int_t)n[s]));
        if (kbi_status_is_failure((kbi_status)s))
            *failed += n[s];
    }
    json_object_set_new(end, "failed", json_integer((json_int_t)*failed));
    json_object_set_new(end, "by_status", by);
    json_object_set_new(end, "interrupted_by",
                        interrupted ? json_string(interrupted == SIGINT ? "SIGINT" : "SIGTERM")
                                    : json_null());
    return end;
}

/* OUT/manifest.json from the run's own results file (not OUT/gpuN/, which repeat it).  A
 * manifest that cannot be written costs no result: a warning. */
static void write_manifest(const run_state *rs)
{
    char err[KBI_ERR_SIZE], *dir = kbi_strdup(rs->path), *slash = strrchr(dir, '/');
    const char *inputs[1] = {rs->path};
    if (slash)
        *slash = '\0';
    if (kbi_manifest_write(slash ? dir : ".", inputs, 1, err) != KBI_OK)
        fprintf(stderr, "kbench: warning: no manifest written: %s\n", err);
    free(dir);
}

/* The end record and the summary.  Returns the run's exit code. */
static int write_end(run_state *rs)
{
    const size_t *n = rs->counts;
    char err[KBI_ERR_SIZE];
    size_t failed = 0;
    int rounds = rounds_of(rs);
    char of_rounds[64] = "";
    json_t *end =
        end_json(!interrupted && !rs->write_failed && rs->done == rs->n_sel, rs->done, n, &failed);
    if (rounds > 1) {
        /* Rounds every selected case finished (a case that failed ends its own early). */
        json_object_set_new(end, "rounds", json_integer(rounds));
        json_object_set_new(end, "rounds_done", json_integer(rs->rounds_done));
        snprintf(of_rounds, sizeof of_rounds, ", %d of %d rounds", rs->rounds_done, rounds);
    }
    if (!rs->write_failed && put_record(&rs->w, "end", end, err) != KBI_OK) {
        fprintf(stderr, "kbench: %s\n", err);
        rs->write_failed = 1;
    }
    json_decref(end);
    write_manifest(rs);
    fprintf(stderr,
            "kbench: %zu of %zu cases run%s: %zu ok, %zu verify_failed, %zu skipped, %zu "
            "error, %zu crashed, %zu timeout\n",
            rs->done, rs->n_sel, of_rounds, n[KBI_ST_OK], n[KBI_ST_VERIFY_FAILED],
            n[KBI_ST_SKIPPED], n[KBI_ST_ERROR], n[KBI_ST_CRASHED], n[KBI_ST_TIMEOUT]);
    fprintf(stderr, "kbench: results: %s\n", rs->path);
    /* The real stdout: plugin output was moved off it (kbi_stdout_guard). */
    fprintf(kbi_stdout(), "%s\n", rs->path);
    fflush(kbi_stdout());
    if (interrupted) {
        fprintf(stderr, "kbench: interrupted by %s; the results file is marked incomplete\n",
                interrupted == SIGINT ? "SIGINT" : "SIGTERM");
        return KBI_EXIT_INTERRUPTED;
    }
    if (rs->write_failed)
        return KBI_EXIT_USAGE;
    return failed ? KBI_EXIT_FAILED : KBI_EXIT_OK;
}

/* ---- several devices of one node (--devices) ----
 *
 * One worker per device, each with its own ordinal, timeout and results file
 * (OUT/gpuN/results.jsonl: its own env and end records); every record also goes to the
 * merged OUT/results.jsonl, which reads as one run.  The per-device files sit one folder
 * down so that `kbench report OUT` finds the merged file alone and reads no case twice.
 * Cases are dealt as workers become idle, so the last device to finish ends at most one
 * case after the others; the selected list is taken as it is (rounds, shards, filters). */

struct dev_worker {
    int ordinal;     /* CUDA ordinal */
    char name[32];   /* "gpuN", for progress lines and the file's folder */
    json_t *summary; /* {"index","name","uuid","pci_bus_id","nvml_index"} (owned) */
    json_t *env;     /* its env record (owned) */
    kbi_run_ctx ctx; /* the run's context with this device */
    child ch;
    long k;          /* case running, -1 idle */
    long last;       /* case run last, -1 none */
    double deadline; /* of the running case (prepare has its own) */
    kbi_results_writer w;
    char path[4200];
    size_t done, counts[KBI_ST_COUNT];
};

/* Whether cases a and b share their parameter point (the worker prepares it once). */
static int same_point_cases(const kbi_case *a, const kbi_case *b)
{
    if (a->section != b->section)
        return 0;
    for (size_t i = 0; i < a->section->n_axes; i++)
        if (a->values[i] != b->values[i])
            return 0;
    return 1;
}

/* The device list: KBENCH_FAKE_DEVICES=N (tests: N devices without CUDA, so device variants
 * are skipped and host variants dealt over N workers), or what a probe child sees. */
static json_t *list_devices(run_state *rs, char *err)
{
    const char *fake = getenv("KBENCH_FAKE_DEVICES");
    json_t *out = NULL;
    if (fake && *fake) {
        char *end;
        long n = strtol(fake, &end, 10);
        json_t *list = json_array();
        if (*end || n < 1 || n > 64) {
            json_decref(list);
            kbi_errf(err, "KBENCH_FAKE_DEVICES='%s': expected a count from 1 to 64", fake);
            return NULL;
        }
        for (long i = 0; i < n; i++) {
            char name[64], uuid[64], bus[64];
            snprintf(name, sizeof name, "fake device %ld", i);
            snprintf(uuid, sizeof uuid, "GPU-fake-%04ld", i);
            snprintf(bus, sizeof bus, "fake:%02lx:00.0", i);
            json_array_append_new(list, json_pack("{s:I, s:s, s:s, s:s, s:n}", "index",
                                                  (json_int_t)i, "name", name, "uuid", uuid,
                                                  "pci_bus_id", bus, "nvml_index"));
        }
        rs->fake_devices = 1;
        return list;
    } else {
        child ch;
        char *line = NULL;
        int r;
        if (child_start(&ch, devices_main, NULL, err) != KBI_OK)
            return NULL;
        r = child_read_line(&ch, kbi_now() + PROBE_TIMEOUT, &line);
        if (r == 1)
            out = json_loads(line, 0, NULL);
        free(line);
        child_stop(&ch, 1);
        if (!json_is_array(json_object_get(out, "devices"))) {
            kbi_errf(err, "the device probe %s", r == -2 ? "was interrupted" : "failed");
            json_decref(out);
            return NULL;
        }
        if (json_array_size(json_object_get(out, "devices")) == 0) {
            const char *why = json_string_value(json_object_get(out, "device_error"));
            kbi_errf(err, "%s", why ? why : "no CUDA device");
            json_decref(out);
            return NULL;
        }
        json_t *list = json_incref(json_object_get(out, "devices"));
        json_decref(out);
        return list;
    }
}

/* Adds a worker for the device `summary` describes (an element of list_devices's list). */
static void add_worker(run_state *rs, json_t *summary)
{
    dev_worker *w = &rs->dw[rs->n_dw++];
    w->summary = json_incref(summary);
    w->ordinal = (int)json_integer_value(json_object_get(summary, "index"));
    snprintf(w->name, sizeof w->name, "gpu%d", w->ordinal);
    w->ch = (child){.pid = 0, .cmd_fd = -1, .res_fd = -1};
    w->w.fd = -1;
    w->k = w->last = -1;
}

/* --devices all|I,J,...: one worker per named device, in the order given.  Returns 0 or an
 * exit code after saying why. */
static int resolve_devices(run_state *rs)
{
    const char *spec = rs->args->devices;
    char err[KBI_ERR_SIZE];
    json_t *list;
    size_t n;
    if (!spec)
        return 0;
    if (rs->args->sanitize || rs->args->in_process) {
        /* compute-sanitizer and ncu wrap one process running one device's cases; a sanitized
         * sweep over several GPUs is several runs with --device and --shard. */
        fprintf(stderr,
                "kbench run: --devices cannot be combined with %s: it wraps a single "
                "process on one device; run one --device per shard instead\n",
                rs->args->sanitize ? "--sanitize" : "--in-process");
        return KBI_EXIT_USAGE;
    }
    list = list_devices(rs, err);
    if (!list) {
        fprintf(stderr, "kbench run: --devices %s: %s\n", spec, err);
        return KBI_EXIT_USAGE;
    }
    n = json_array_size(list);
    rs->dw = kbi_xcalloc(n, sizeof *rs->dw);
    if (strcmp(spec, "all") == 0) {
        for (size_t i = 0; i < n; i++)
            add_worker(rs, json_array_get(list, i));
    } else {
        const char *p = spec;
        while (*p) {
            char *end;
            long d = strtol(p, &end, 10);
            int dup = 0;
            if (end == p || d < 0 || (*end && *end != ',') || (*end && !end[1]) || (size_t)d >= n) {
                fprintf(stderr,
                        "kbench run: --devices '%s': expected 'all' or CUDA ordinals like 0,1,3 "
                        "below %zu (the devices this process sees)\n",
                        spec, n);
                json_decref(list);
                return KBI_EXIT_USAGE;
            }
            for (size_t i = 0; i < rs->n_dw; i++)
                dup |= json_integer_value(json_object_get(rs->dw[i].summary, "index")) == d;
            if (dup || rs->n_dw >= n) {
                fprintf(stderr, "kbench run: --devices '%s': device %ld named twice\n", spec, d);
                json_decref(list);
                return KBI_EXIT_USAGE;
            }
            add_worker(rs, json_array_get(list, (size_t)d));
            p = *end ? end + 1 : end;
        }
    }
    json_decref(list);
    rs->taken = kbi_xcalloc(rs->n_sel ? rs->n_sel : 1, 1);
    return 0;
}

/* Opens OUT/gpuN/results.jsonl for every device (after open_output made OUT). */
static int open_device_outputs(run_state *rs)
{
    char err[KBI_ERR_SIZE], dir[4100], run_id[128];
    const char *merged = rs->w.run_id;
    for (size_t i = 0; i < rs->n_dw; i++) {
        dev_worker *w = &rs->dw[i];
        snprintf(dir, sizeof dir, "%.4000s/%s", rs->out_dir, w->name);
        snprintf(w->path, sizeof w->path, "%s/results.jsonl", dir);
        snprintf(run_id, sizeof run_id, "%s-%s", merged ? merged : "run", w->name);
        if (kbi_mkdirs(dir, err) != KBI_OK ||
            kbi_results_open(&w->w, w->path, run_id, err) != KBI_OK) {
            fprintf(stderr, "kbench: %s\n", err);
            return KBI_EXIT_USAGE;
        }
    }
    return 0;
}

/* Probes every device (ceilings too, one after the other so that they do not load each
 * other's host), writes each device's env record and the merged one, and gives every worker
 * its context.  Returns 0 or an exit code. */
static int write_env_multi(run_state *rs)
{
    kbi_profile *profile = &rs->profile;
    char err[KBI_ERR_SIZE], why[KBI_ERR_SIZE];
    json_t *devices = json_array();
    int rc = 0;
    for (size_t i = 0; i < rs->n_dw && rc == 0; i++) {
        dev_worker *w = &rs->dw[i];
        json_t *dev, *ceilings, *summary = json_deep_copy(w->summary);
        if (rs->any_device && !rs->fake_devices) {
            fprintf(stderr, "kbench: probing device %d and measuring its ceilings...\n",
                    w->ordinal);
            w->env = probe_device(profile, w->ordinal);
        } else {
            w->env = env_without_device(profile);
            if (rs->fake_devices) {
                snprintf(why, sizeof why,
                         "fake device (KBENCH_FAKE_DEVICES): device variants "
                         "are skipped");
                json_object_set_new(w->env, "device_error", json_string(why));
            }
        }
        dev = json_object_get(w->env, "device");
        if (json_is_object(dev) && !json_object_get(dev, "uuid"))
            json_object_set(dev, "uuid", json_object_get(w->summary, "uuid"));
        if (json_is_object(dev))
            json_object_set(dev, "nvml_index", json_object_get(w->summary, "nvml_index"));
        env_common(rs, w->env);
        ceilings = json_object_get(w->env, "ceilings");
        json_object_set(summary, "ceilings", ceilings);
        json_object_set_new(summary, "results", json_pack("s+", w->name, "/results.jsonl"));
        json_array_append(devices, summary);
        json_object_set_new(w->env, "devices", json_pack("[o]", summary));
        w->ctx = (kbi_run_ctx){
            .profile = profile,
            .cases = rs->sel,
            .n_cases = rs->n_sel,
            .bandwidth_gbs = json_number_value(json_object_get(ceilings, "bandwidth_gbs")),
            .peak_gflops = json_number_value(json_object_get(ceilings, "peak_gflops")),
            .device_ok = json_is_object(dev),
            .device_error = json_string_value(json_object_get(w->env, "device_error")),
            .profile_run = rs->args->profile_run,
            .device = w->ordinal,
        };
        if (rs->any_device && !w->ctx.device_ok)
            fprintf(stderr, "kbench: %s: device variants will be skipped: %s\n", w->name,
                    w->ctx.device_error ? w->ctx.device_error : "no device");
        if (put_record(&w->w, "env", w->env, err) != KBI_OK) {
            fprintf(stderr, "kbench: %s\n", err);
            rc = KBI_EXIT_USAGE;
        }
    }
    if (rc == 0) {
        /* The merged env reads like a single run's: the first device's record (its name in
         * report's environment table), with every device listed. */
        rs->env = json_deep_copy(rs->dw[0].env);
        json_object_set(rs->env, "devices", devices);
        if (put_record(&rs->w, "env", rs->env, err) != KBI_OK) {
            fprintf(stderr, "kbench: %s\n", err);
            rc = KBI_EXIT_USAGE;
        }
        rs->ctx = rs->dw[0].ctx;
        fprintf(stderr, "kbench: %zu cases over %zu devices; results in %s (merged) and %s/gpuN/\n",
                rs->n_sel, rs->n_dw, rs->path, rs->out_dir);
    }
    json_decref(devices);
    return rc;
}

/* Writes case k's record for worker w to the merged and w's file, counts it, says so. */
static void finish_multi(run_state *rs, dev_worker *w, size_t k, kbi_case_result *rec)
{
    char err[KBI_ERR_SIZE];
    json_t *obj;
    kbi_status s = rec->status < KBI_ST_COUNT ? rec->status : KBI_ST_ERROR;
    rs->counts[s]++;
    w->counts[s]++;
    rs->done++;
    w->done++;
    progress(rs->done, rs->n_sel, eta(rs->started, rs->done, rs->n_sel), w->name, rs->sel[k]->label,
             rec, w->ctx.device_ok ? NULL : w->ctx.device_error);
    obj = kbi_case_record_json(rec);
    json_object_set_new(obj, "device", json_integer(w->ordinal));
    json_object_set(obj, "device_uuid", json_object_get(w->summary, "uuid"));
    begin_writes(); /* both files, or a second Ctrl-C leaves them disagreeing */
    if (put_record(&w->w, "case", obj, err) != KBI_OK ||
        put_record(&rs->w, "case", obj, err) != KBI_OK) {
        fprintf(stderr, "kbench: %s\n", err);
        rs->write_failed = 1;
    }
    json_decref(obj);
    end_writes();
    /* After an error the CUDA context may be poisoned: the next case gets a fresh worker. */
    if (w->ch.pid > 0 && (rec->status == KBI_ST_ERROR || rec->sticky_error))
        child_stop(&w->ch, 1);
    kbi_case_result_free(rec);
    w->last = (long)k;
    w->k = -1;
}

/* Whether worker w should take case c: a device case goes to a worker whose device failed
 * its probe (to be recorded skipped) only when no device passed it. */
static int can_take(const run_state *rs, const dev_worker *w, const kbi_case *c)
{
    if (w->ctx.device_ok || c->section->plugin->desc->variants[c->variant].target != KB_DEVICE)
        return 1;
    for (size_t i = 0; i < rs->n_dw; i++)
        if (rs->dw[i].ctx.device_ok)
            return 0;
    return 1;
}

/* The next case for idle worker w, or -1: the next case of the point it just ran (prepared
 * there already), else the first case not taken whose point no other worker is running,
 * else (at the end of the list) the first case not taken. */
static long next_case(run_state *rs, const dev_worker *w)
{
    long any = -1;
    if (w->last >= 0 && (size_t)w->last + 1 < rs->n_sel && !rs->taken[w->last + 1] &&
        same_point_cases(rs->sel[w->last], rs->sel[w->last + 1]) &&
        can_take(rs, w, rs->sel[w->last + 1]))
        return w->last + 1;
    for (size_t k = 0; k < rs->n_sel; k++) {
        int busy = 0;
        if (rs->taken[k] || !can_take(rs, w, rs->sel[k]))
            continue;
        if (any < 0)
            any = (long)k;
        for (size_t i = 0; i < rs->n_dw && !busy; i++)
            busy = &rs->dw[i] != w && rs->dw[i].k >= 0 &&
                   same_point_cases(rs->sel[rs->dw[i].k], rs->sel[k]);
        if (!busy)
            return (long)k;
    }
    return any;
}

/* Gives case k to worker w: records a device case at once when w has no device, else sends
 * it to w's worker (started or replaced as needed).  Returns 0, or -1 when the run must stop
 * (no worker can be started). */
static int deal(run_state *rs, dev_worker *w, size_t k)
{
    const kbi_case *c = rs->sel[k];
    char cmd[64];
    kbi_case_result rec;
    rs->taken[k] = 1;
    if (c->section->plugin->desc->variants[c->variant].target == KB_DEVICE && !w->ctx.device_ok) {
        kbi_case_record_init(&w->ctx, c, &rec);
        kbi_case_record_set_status(&rec, KBI_ST_SKIPPED,
                                   w->ctx.device_error ? w->ctx.device_error : "no CUDA device");
        finish_multi(rs, w, k, &rec);
        return 0;
    }
    if (section_worker(rs, &w->ch, &w->ctx, c) != KBI_OK) {
        rs->taken[k] = 0;
        return -1;
    }
    w->k = (long)k;
    w->deadline = kbi_now() + rs->profile.run.timeout;
    snprintf(cmd, sizeof cmd, "case %zu\n", k);
    if (write(w->ch.cmd_fd, cmd, strlen(cmd)) != (ssize_t)strlen(cmd)) {
        lost_case_of(&w->ctx, &w->ch, c, 0, &rec);
        finish_multi(rs, w, k, &rec);
    }
    return 0;
}

/* Handles the complete lines worker w has sent: prepare/prepared move its deadline (as
 * read_case_answer does), a record ends its case. */
static void take_lines(run_state *rs, dev_worker *w)
{
    char *nl;
    while (w->k >= 0 && w->ch.line.data && (nl = memchr(w->ch.line.data, '\n', w->ch.line.len))) {
        size_t len = (size_t)(nl - w->ch.line.data), k = (size_t)w->k;
        char *line = kbi_xmalloc(len + 1);
        kbi_case_result rec;
        memcpy(line, w->ch.line.data, len);
        line[len] = '\0';
        memmove(w->ch.line.data, nl + 1, w->ch.line.len - len - 1);
        w->ch.line.len -= len + 1;
        if (strcmp(line, "prepare") == 0) {
            w->deadline = kbi_now() + 10.0 * rs->profile.run.timeout;
        } else if (strcmp(line, "prepared") == 0) {
            w->deadline = kbi_now() + rs->profile.run.timeout;
        } else {
            json_t *sent = json_loads(line, 0, NULL);
            int have = json_is_object(sent) &&
                       kbi_case_record_read(&rec, sent, KBI_RESULTS_VERSION) == NULL;
            json_decref(sent);
            if (!have)
                lost_case_of(&w->ctx, &w->ch, rs->sel[k], 1, &rec);
            finish_multi(rs, w, k, &rec);
        }
        free(line);
    }
}

/* Every selected case over the devices' workers, each record written as it ends. */
static void run_cases_multi(run_state *rs)
{
    struct pollfd *pfd = kbi_xcalloc(rs->n_dw, sizeof *pfd);
    size_t *who = kbi_xcalloc(rs->n_dw, sizeof *who);
    int stop = 0;
    while (!interrupted && !rs->write_failed) {
        size_t n = 0;
        double wait = 1.0;
        int pr;
        /* Every idle worker gets work. */
        for (size_t i = 0; i < rs->n_dw && !stop; i++) {
            long k;
            while (!stop && !rs->write_failed && rs->dw[i].k < 0 &&
                   (k = next_case(rs, &rs->dw[i])) >= 0)
                stop = deal(rs, &rs->dw[i], (size_t)k) != 0;
        }
        for (size_t i = 0; i < rs->n_dw; i++) {
            if (rs->dw[i].k < 0)
                continue;
            pfd[n] = (struct pollfd){.fd = rs->dw[i].ch.res_fd, .events = POLLIN};
            who[n++] = i;
            if (rs->dw[i].deadline - kbi_now() < wait)
                wait = rs->dw[i].deadline - kbi_now();
        }
        if (n == 0 || rs->write_failed)
            break; /* every case dealt and answered, or no worker to run one */
        pr = poll(pfd, n, wait > 0 ? (int)(wait * 1000) + 1 : 0);
        if (pr < 0 && errno != EINTR)
            break;
        for (size_t j = 0; j < n && !interrupted; j++) {
            dev_worker *w = &rs->dw[who[j]];
            kbi_case_result rec;
            if (pr > 0 && (pfd[j].revents & (POLLIN | POLLHUP | POLLERR))) {
                char chunk[65536];
                ssize_t got = read(w->ch.res_fd, chunk, sizeof chunk);
                if (got > 0) {
                    kbi_buf_printf(&w->ch.line, "%.*s", (int)got, chunk);
                    take_lines(rs, w);
                } else if (got == 0 || errno != EINTR) {
                    take_lines(rs, w);
                    if (w->k >= 0) { /* the worker ended in the middle of the case */
                        size_t k = (size_t)w->k;
                        lost_case_of(&w->ctx, &w->ch, rs->sel[k], 0, &rec);
                        finish_multi(rs, w, k, &rec);
                    }
                    continue;
                }
            }
            if (w->k >= 0 && kbi_now() > w->deadline) {
                size_t k = (size_t)w->k;
                lost_case_of(&w->ctx, &w->ch, rs->sel[k], -1, &rec);
                finish_multi(rs, w, k, &rec);
            }
        }
    }
    /* Ctrl-C stops every worker at once; otherwise they end cleanly. */
    for (size_t i = 0; i < rs->n_dw; i++)
        child_stop(&rs->dw[i].ch, interrupted != 0);
    free(pfd);
    free(who);
}

/* Each device's end record: its own counts; complete only when the whole run is. */
static void write_ends_multi(run_state *rs)
{
    char err[KBI_ERR_SIZE];
    int complete = !interrupted && !rs->write_failed && rs->done == rs->n_sel;
    for (size_t i = 0; i < rs->n_dw; i++) {
        dev_worker *w = &rs->dw[i];
        size_t failed;
        json_t *end = end_json(complete, w->done, w->counts, &failed);
        if (w->w.fd >= 0 && put_record(&w->w, "end", end, err) != KBI_OK) {
            fprintf(stderr, "kbench: %s\n", err);
            rs->write_failed = 1;
        }
        json_decref(end);
    }
}

static void free_devices(run_state *rs)
{
    for (size_t i = 0; i < rs->n_dw; i++) {
        dev_worker *w = &rs->dw[i];
        child_stop(&w->ch, 1);
        kbi_results_close(&w->w);
        json_decref(w->summary);
        json_decref(w->env);
    }
    free(rs->dw);
    free(rs->taken);
}

int kbi_run(const kbi_run_args *args)
{
    run_state rs = {.args = args, .worker = {.pid = 0, .cmd_fd = -1, .res_fd = -1}};
    int rc = select_cases(&rs);
    if (!rc && args->list) {
        for (size_t i = 0; i < rs.n_sel; i++)
            fprintf(kbi_stdout(), "%s\n", rs.sel[i]->id);
        rc = fflush(kbi_stdout()) == 0 ? 0 : KBI_EXIT_USAGE;
        goto out;
    }
    if (!rc)
        rc = resolve_devices(&rs);
    if (!rc)
        rc = check_rounds(&rs);
    if (!rc)
        rc = find_sanitizer(&rs);
    if (!rc)
        rc = open_output(&rs);
    if (!rc && rs.n_dw)
        rc = open_device_outputs(&rs);
    if (!rc)
        rc = rs.n_dw ? write_env_multi(&rs) : write_env(&rs);
    rs.started = kbi_now();
    if (!rc && rs.n_dw) {
        run_cases_multi(&rs);
        write_ends_multi(&rs);
        rc = write_end(&rs);
    } else if (!rc) {
        run_cases(&rs);
        rc = write_end(&rs);
    }
out:
    free_devices(&rs);
    if (worker_log_fd >= 0) {
        close(worker_log_fd);
        worker_log_fd = -1;
    }
    kbi_results_close(&rs.w);
    json_decref(rs.env);
    free(rs.sel);
    if (rs.all)
        kbi_cases_free(rs.all, rs.n_all);
    kbi_profile_free(&rs.profile);
    kbi_plugins_free(&rs.plugins);
    free(rs.out_dir);
    return rc;
}
