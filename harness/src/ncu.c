/* `kbench profile`: one case under Nsight Compute, its CSV read back into
 * profile.json beside the case's results. */
#define _GNU_SOURCE
#include "ncu.h"

#include <errno.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "loader.h"
#include "ncu_summary.h"
#include "options.h"
#include "profile.h"

const char *const kbi_ncu_default_metrics =
    "gpu__time_duration.sum,"
    "sm__throughput.avg.pct_of_peak_sustained_elapsed,"
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed,"
    "dram__bytes.sum,"
    "dram__bytes.sum.per_second,"
    "dram__throughput.avg.pct_of_peak_sustained_elapsed,"
    "sm__warps_active.avg.pct_of_peak_sustained_active,"
    "launch__registers_per_thread,"
    "launch__shared_mem_per_block_static,"
    "launch__shared_mem_per_block_dynamic,"
    "launch__block_size,"
    "launch__grid_size,"
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,"
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,"
    "l1tex__t_sector_hit_rate.pct,"
    "lts__t_sector_hit_rate.pct,"
    "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,"
    "smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio,"
    "smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,"
    "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,"
    "smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,"
    "smsp__average_warps_issue_stalled_membar_per_issue_active.ratio,"
    "smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,"
    "smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio,"
    "smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,"
    "smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,"
    "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio";

/* ---- command line ---- */

char *kbi_ncu_nvtx_filter(const char *case_id)
{
    kbi_buf b = {0};
    kbi_buf_printf(&b, "kbench/%s/", case_id);
    return b.data;
}

static void push(char ***v, size_t *n, const char *s)
{
    *v = kbi_xrealloc(*v, (*n + 2) * sizeof **v);
    (*v)[(*n)++] = kbi_strdup(s);
    (*v)[*n] = NULL;
}

/* ncu's own filters.  The kernel regex is matched (anywhere) in the demangled
 * name, the one ncu's CSV and kbench's tables print; ncu counts --launch-skip
 * and --launch-count over the launches its other filters select (the case's
 * NVTX range, the kernel name) while profiling is on: the one profiled run. */
static void push_limits(char ***v, size_t *n, const kbi_ncu_options *o)
{
    char num[24];
    if (o->kernel_regex) {
        kbi_buf re = {0};
        kbi_buf_printf(&re, "regex:%s", o->kernel_regex);
        push(v, n, "--kernel-name-base");
        push(v, n, "demangled");
        push(v, n, "--kernel-name");
        push(v, n, re.data);
        kbi_buf_free(&re);
    }
    if (o->launch_skip > 0) {
        snprintf(num, sizeof num, "%d", o->launch_skip);
        push(v, n, "--launch-skip");
        push(v, n, num);
    }
    if (o->launch_count > 0) {
        snprintf(num, sizeof num, "%d", o->launch_count);
        push(v, n, "--launch-count");
        push(v, n, num);
    }
}

char **kbi_ncu_argv(const kbi_ncu_options *o)
{
    char **v = NULL, *filter = kbi_ncu_nvtx_filter(o->case_id), *glob = kbi_glob_escape(o->case_id);
    kbi_buf rep = {0};
    size_t n = 0;
    kbi_buf_printf(&rep, "%s/profile", o->out_dir);
    push(&v, &n, o->ncu);
    /* Only what the harness brackets with cudaProfilerStart/Stop (one run
     * after verify and warm-up), only inside the case's NVTX range, in every
     * process, at the clocks the card runs at. */
    push(&v, &n, "--profile-from-start");
    push(&v, &n, "off");
    push(&v, &n, "--target-processes");
    push(&v, &n, "all");
    push(&v, &n, "--clock-control");
    push(&v, &n, "none");
    push(&v, &n, "--nvtx");
    push(&v, &n, "--nvtx-include");
    push(&v, &n, filter);
    push_limits(&v, &n, o);
    if (o->set) {
        push(&v, &n, "--set");
        push(&v, &n, o->set);
    } else {
        push(&v, &n, "--metrics");
        push(&v, &n, o->metrics ? o->metrics : kbi_ncu_default_metrics);
    }
    push(&v, &n, "--export");
    push(&v, &n, rep.data);
    push(&v, &n, "--force-overwrite");
    for (char **e = o->extra; e && *e; e++)
        push(&v, &n, *e);
    push(&v, &n, o->kbench);
    push(&v, &n, "run");
    push(&v, &n, o->profile_path);
    push(&v, &n, "--in-process");
    push(&v, &n, "--profile-one-run");
    push(&v, &n, "--filter");
    push(&v, &n, glob);
    push(&v, &n, "--out");
    push(&v, &n, o->out_dir);
    if (o->plugins_dir) {
        push(&v, &n, "--plugins");
        push(&v, &n, o->plugins_dir);
    }
    if (o->device >= 0) {
        char d[16];
        snprintf(d, sizeof d, "%d", o->device);
        push(&v, &n, "--device");
        push(&v, &n, d);
    }
    free(filter);
    free(glob);
    kbi_buf_free(&rep);
    return v;
}

void kbi_ncu_argv_free(char **argv)
{
    for (char **p = argv; p && *p; p++)
        free(*p);
    free(argv);
}

/* ---- CSV ---- */

/* Splits one CSV record starting at *pos (quotes, doubled quotes, commas
 * and newlines inside quotes).  Returns the fields, or NULL at the end of the
 * text; *bad is set on an unterminated quote. */
static char **csv_record(const char **pos, size_t *n, int *bad)
{
    const char *p = *pos;
    char **fields = NULL;
    kbi_buf f = {0};
    *n = 0;
    *bad = 0;
    if (!*p)
        return NULL;
    for (;;) {
        f.len = 0;
        kbi_buf_printf(&f, "%s", "");
        if (*p == '"') {
            p++;
            for (;;) {
                if (!*p) {
                    *bad = 1;
                    break;
                }
                if (*p == '"' && p[1] == '"') {
                    kbi_buf_printf(&f, "\"");
                    p += 2;
                } else if (*p == '"') {
                    p++;
                    break;
                } else {
                    kbi_buf_printf(&f, "%c", *p++);
                }
            }
        }
        while (*p && *p != ',' && *p != '\n' && *p != '\r')
            kbi_buf_printf(&f, "%c", *p++);
        fields = kbi_xrealloc(fields, (*n + 1) * sizeof *fields);
        fields[(*n)++] = kbi_strdup(f.data);
        if (*p == ',') {
            p++;
            continue;
        }
        if (*p == '\r')
            p++;
        if (*p == '\n')
            p++;
        break;
    }
    kbi_buf_free(&f);
    *pos = p;
    return fields;
}

/* A number as ncu prints it ("1,234.5" or "12.3"), or NAN. */
static double csv_number(const char *s)
{
    char buf[128], *end;
    size_t k = 0;
    double v;
    if (!*s)
        return NAN;
    for (; *s && k + 1 < sizeof buf; s++)
        if (*s != ',')
            buf[k++] = *s;
    buf[k] = '\0';
    errno = 0;
    v = strtod(buf, &end);
    return (*end || end == buf || errno) ? NAN : v;
}

json_t *kbi_ncu_parse_csv(const char *text, const char *name, char *err)
{
    const char *pos = text;
    char **header = NULL, **units = NULL, **row;
    size_t nh = 0, nu = 0, nr;
    int line = 0, bad;
    json_t *kernels = json_array();

    /* Skip ncu's own "==PROF==" chatter before the header. */
    while ((row = csv_record(&pos, &nr, &bad)) != NULL) {
        line++;
        if (nr > 1 && strcmp(row[0], "ID") == 0) {
            header = row;
            nh = nr;
            break;
        }
        kbi_strv_free(row, nr);
    }
    if (!header) {
        kbi_errf(err,
                 "%s: no CSV header row (\"ID\",...) found, expected ncu --csv --page raw "
                 "output",
                 name);
        json_decref(kernels);
        return NULL;
    }
    while ((row = csv_record(&pos, &nr, &bad)) != NULL) {
        json_t *k, *metrics;
        line++;
        if (bad) {
            kbi_errf(err, "%s:%d: unterminated quoted field", name, line);
            kbi_strv_free(row, nr);
            goto fail;
        }
        if (nr == 1 && !row[0][0]) { /* blank line */
            kbi_strv_free(row, nr);
            continue;
        }
        if (nr != nh) {
            kbi_errf(err, "%s:%d: %zu fields, expected %zu as in the header", name, line, nr, nh);
            kbi_strv_free(row, nr);
            goto fail;
        }
        if (!units && !row[0][0]) { /* the units row: no ID */
            units = row;
            nu = nr;
            continue;
        }
        k = json_object();
        metrics = json_object();
        json_object_set_new(k, "id", json_string(row[0]));
        for (size_t i = 0; i < nh; i++) {
            double v;
            json_t *m;
            if (strcmp(header[i], "Kernel Name") == 0)
                json_object_set_new(k, "name", json_string(row[i]));
            else if (strcmp(header[i], "Block Size") == 0)
                json_object_set_new(k, "block", json_string(row[i]));
            else if (strcmp(header[i], "Grid Size") == 0)
                json_object_set_new(k, "grid", json_string(row[i]));
            if (!strstr(header[i], "__") || strncmp(header[i], "device__attribute", 17) == 0)
                continue; /* not a metric: launch facts, or the device's attributes */
            v = csv_number(row[i]);
            m = json_object();
            json_object_set_new(m, "value", isnan(v) ? json_string(row[i]) : json_real(v));
            json_object_set_new(m, "unit", json_string(units && i < nu ? units[i] : ""));
            json_object_set_new(metrics, header[i], m);
        }
        json_object_set_new(k, "metrics", metrics);
        json_array_append_new(kernels, k);
        kbi_strv_free(row, nr);
    }
    kbi_strv_free(header, nh);
    if (units)
        kbi_strv_free(units, nu);
    return kernels;
fail:
    kbi_strv_free(header, nh);
    if (units)
        kbi_strv_free(units, nu);
    json_decref(kernels);
    return NULL;
}

/* ---- running it ---- */

static const char *const help =
    "Runs one case of the profile under Nsight Compute (ncu): profiling is off\n"
    "until the case has verified and warmed up, then exactly one run() is\n"
    "profiled, inside the case's NVTX range.  Writes OUT/results.jsonl (the\n"
    "case's timing), OUT/ncu.csv and OUT/profile.json (the metrics, one entry per\n"
    "kernel launch the run made, and a summary per kernel name), and prints the\n"
    "summary first (launches, total and mean duration, share of the profiled\n"
    "time, metrics averaged per kernel), then each launch; `kbench report\n"
    "OUT/results.jsonl` shows them beside the timing.\n"
    "\n"
    "What it costs: ncu replays every profiled launch once per pass its metrics\n"
    "need (the default set takes several), serialised, so the time grows with\n"
    "the launches of one run().  A run of many kernels is slow to profile: one md\n"
    "case of 100 steps (about 900 launches) took 279 s under ncu on an H200.\n"
    "--launches N (with --skip and --kernel) profiles a sample of the launches.\n";

static const char *const notes =
    "ncu is found through $KBENCH_NCU, PATH, $CUDA_HOME/bin or /usr/local/cuda/bin.\n"
    "exit codes: 0 profiled; 1 ncu or the case failed; 2 bad usage or input.\n";

/* Runs argv with stdout and stderr into log_path; returns the exit status
 * (or -1 when it could not start). */
static int run_logged(char **argv, const char *log_path, const char *stdout_path)
{
    pid_t pid;
    int status;
    fflush(NULL);
    pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        FILE *log = fopen(log_path, "a");
        FILE *out = stdout_path ? fopen(stdout_path, "w") : log;
        if (log)
            dup2(fileno(log), STDERR_FILENO);
        if (out)
            dup2(fileno(out), STDOUT_FILENO);
        execv(argv[0], argv);
        fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

double kbi_ncu_metric(json_t *kernel, const char *name, const char **unit)
{
    json_t *m = json_object_get(json_object_get(kernel, "metrics"), name);
    json_t *v = json_object_get(m, "value");
    if (unit)
        *unit = json_string_value(json_object_get(m, "unit"));
    return json_is_number(v) ? json_number_value(v) : NAN;
}

size_t kbi_ncu_top_stalls(json_t *kernel, char reasons[][64], double *values, size_t n)
{
    const char *key, *names[8];
    json_t *val;
    size_t found = 0;
    if (n > 8)
        n = 8;
    json_object_foreach(json_object_get(kernel, "metrics"), key, val)
    {
        double v = kbi_ncu_metric(kernel, key, NULL);
        size_t t;
        if (!strstr(key, "issue_stalled_") || isnan(v))
            continue;
        for (t = found; t > 0 && v > values[t - 1]; t--)
            if (t < n) {
                values[t] = values[t - 1];
                names[t] = names[t - 1];
            }
        if (t < n) {
            values[t] = v;
            names[t] = key;
            if (found < n)
                found++;
        }
    }
    for (size_t t = 0; t < found; t++) {
        const char *p = strstr(names[t], "issue_stalled_") + 14;
        const char *e = strstr(p, "_per_issue");
        snprintf(reasons[t], 64, "%.*s", (int)(e ? e - p : (long)strlen(p)), p);
    }
    return found;
}

#define metric(k, name) kbi_ncu_metric((k), (name), NULL)

/* Prints the key figures of each launch, with its three largest stall
 * reasons. */
static void print_launches(FILE *out, json_t *kernels)
{
    size_t i;
    json_t *k;
    json_array_foreach(kernels, i, k)
    {
        const char *name = json_string_value(json_object_get(k, "name"));
        json_t *metrics = json_object_get(k, "metrics");
        char reasons[3][64];
        double top[3];
        size_t n_top;
        fprintf(out, "kernel %s: %s\n", json_string_value(json_object_get(k, "id")),
                name ? name : "?");
        {
            const char *smem_unit = json_string_value(json_object_get(
                json_object_get(metrics, "launch__shared_mem_per_block_static"), "unit"));
            fprintf(out, "  grid %s  block %s  registers/thread %.0f  static smem %.4g %s\n",
                    json_string_value(json_object_get(k, "grid")),
                    json_string_value(json_object_get(k, "block")),
                    metric(k, "launch__registers_per_thread"),
                    metric(k, "launch__shared_mem_per_block_static"), smem_unit ? smem_unit : "");
        }
        fprintf(out,
                "  duration %.4g %s  SM %.1f%%  memory %.1f%% of peak  DRAM %.1f%% (%.4g %s)\n",
                metric(k, "gpu__time_duration.sum"),
                json_string_value(
                    json_object_get(json_object_get(metrics, "gpu__time_duration.sum"), "unit")),
                metric(k, "sm__throughput.avg.pct_of_peak_sustained_elapsed"),
                metric(k, "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"),
                metric(k, "dram__throughput.avg.pct_of_peak_sustained_elapsed"),
                metric(k, "dram__bytes.sum.per_second"),
                json_string_value(json_object_get(
                    json_object_get(metrics, "dram__bytes.sum.per_second"), "unit")));
        fprintf(out,
                "  occupancy %.1f%%  L1 hit %.1f%%  L2 hit %.1f%%  smem bank conflicts ld %.0f st "
                "%.0f\n",
                metric(k, "sm__warps_active.avg.pct_of_peak_sustained_active"),
                metric(k, "l1tex__t_sector_hit_rate.pct"), metric(k, "lts__t_sector_hit_rate.pct"),
                metric(k, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"),
                metric(k, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"));
        n_top = kbi_ncu_top_stalls(k, reasons, top, 3);
        if (n_top) {
            fprintf(out, "  top stalls:");
            for (size_t t = 0; t < n_top; t++)
                fprintf(out, " %s %.2f", reasons[t], top[t]);
            fprintf(out, " (warps per issue)\n");
        }
    }
}

/* Finds the single case matching id (its id or full id exactly, or as a glob). */
static const kbi_case *find_case(const kbi_case *cases, size_t n, const char *id)
{
    const kbi_case *hit = NULL;
    size_t matches = 0;
    for (size_t i = 0; i < n; i++)
        if (strcmp(cases[i].id, id) == 0 || strcmp(cases[i].full_id, id) == 0)
            return &cases[i];
    for (size_t i = 0; i < n; i++)
        if (kbi_case_selected(&cases[i], id)) {
            if (matches++ < 10)
                fprintf(stderr, "  matches: %s\n", cases[i].id);
            hit = &cases[i];
        }
    if (matches == 1)
        return hit;
    fprintf(stderr, "kbench profile: --case '%s' matches %zu cases, expected exactly one%s\n", id,
            matches, matches == 0 ? " (kbench run PROFILE --list prints the ids)" : "");
    return NULL;
}

/* What one `kbench profile` works with: its options, the case, the tools
 * and the files it writes. */
typedef struct profile_job {
    kbi_ncu_options o;
    const char *case_arg;
    int keep;
    char plugins_dir[KBI_PLUGIN_DIRS_MAX];
    char ncu[4096], exe[4096];
    char results[4300], csv_path[4300], log_path[4300], rep[4300];
    kbi_buf out_default;
    const char *case_id;
} profile_job;

/* The command line into j.  Returns KBI_OPTS_GO_ON or the exit code. */
static int profile_options(profile_job *j, int argc, char **argv)
{
    const kbi_option options[] = {
        {.name = "case",
         .kind = KBI_OPT_STRING,
         .target = &j->case_arg,
         .required = 1,
         .expected = "the id of one case (kbench run prints them)",
         .arg = "ID",
         .help = "the case id (or its full id, or a glob matching exactly one),\n"
                 "as `kbench run PROFILE --list` prints it, e.g.\n"
                 "'sgemm/cp_async/shape=4096x4096x4096,alpha=1,beta=0.5'"},
        {.name = "launches",
         .kind = KBI_OPT_INT,
         .target = &j->o.launch_count,
         .min = 1,
         .max = 1000000000,
         .expected = "a number of launches, an integer >= 1",
         .arg = "N",
         .help = "profile at most N kernel launches of the run (ncu --launch-count)"},
        {.name = "skip",
         .kind = KBI_OPT_INT,
         .target = &j->o.launch_skip,
         .min = 0,
         .max = 1000000000,
         .expected = "a number of launches, an integer >= 0",
         .arg = "N",
         .help = "first let N launches of the run go by unprofiled (ncu\n"
                 "--launch-skip): --skip 100 --launches 10 profiles ten launches\n"
                 "from further into the run"},
        {.name = "kernel",
         .kind = KBI_OPT_STRING,
         .target = &j->o.kernel_regex,
         .arg = "REGEX",
         .help = "profile only launches of kernels whose demangled name (as the\n"
                 "summary prints it) holds a match of REGEX (ncu --kernel-name\n"
                 "regex:REGEX --kernel-name-base demangled); --skip and\n"
                 "--launches then count those launches alone"},
        {.name = "metrics",
         .kind = KBI_OPT_STRING,
         .target = &j->o.metrics,
         .arg = "LIST",
         .help = "comma-separated ncu metrics instead of the default set"},
        {.name = "set",
         .kind = KBI_OPT_STRING,
         .target = &j->o.set,
         .arg = "NAME",
         .help = "an ncu section set (e.g. detailed, full) instead of metrics"},
        {.name = "keep-report",
         .kind = KBI_OPT_FLAG,
         .target = &j->keep,
         .help = "keep OUT/profile.ncu-rep for the Nsight Compute GUI"},
        {.name = "out",
         .kind = KBI_OPT_STRING,
         .target = &j->o.out_dir,
         .arg = "DIR",
         .help = "output folder (default results/profile-TIME)"},
        {.name = "device",
         .kind = KBI_OPT_INT,
         .target = &j->o.device,
         .min = 0,
         .max = 1024,
         .expected = "a device ordinal, an integer >= 0",
         .arg = "N",
         .help = "CUDA device ordinal"},
        {.name = "plugins",
         .kind = KBI_OPT_PLUGINS,
         .target = j->plugins_dir,
         .arg = "DIR",
         .help = "also load plugins from DIR (repeatable; DIR:DIR too)"},
    };
    /* Operands: the profile, then (after "--") ncu's own arguments. */
    const kbi_verb_spec spec = {.verb = "profile",
                                .synopsis = "PROFILE.ini",
                                .help = help,
                                KBI_SPEC_OPTIONS(options),
                                .min_operands = 1,
                                .max_operands = SIZE_MAX,
                                .operands = "PROFILE.ini",
                                .summary = "one case under Nsight Compute",
                                .notes = notes,
                                .trailer = "[-- NCU-ARGS]"};
    int first, parsed;
    if ((parsed = kbi_options_parse(&spec, argc, argv, &first)) != KBI_OPTS_GO_ON)
        return parsed;
    if (j->plugins_dir[0])
        j->o.plugins_dir = j->plugins_dir;
    if (j->o.metrics && j->o.set) {
        fprintf(stderr, "kbench profile: give --metrics or --set, not both\n");
        return KBI_EXIT_USAGE;
    }
    j->o.profile_path = argv[first];
    j->o.extra = argv + first + 1; /* after "--" (the parser stops there) */
    return KBI_OPTS_GO_ON;
}

/* Loads the plugins and the profile and finds the one device case to
 * profile; its id goes into j.  Returns KBI_OK or KBI_ERR (said on stderr). */
static int profile_find_case(profile_job *j)
{
    char err[KBI_ERR_SIZE], *dirs[16];
    int required[16], rc = KBI_ERR;
    size_t n_dirs, n_cases = 0;
    kbi_plugin_set plugins = {0};
    kbi_profile profile = {0};
    kbi_case *cases = NULL;
    const kbi_case *target;
    kbi_buf errors = {0};
    n_dirs = kbi_plugin_dirs(j->o.plugins_dir, dirs, required, 15);
    dirs[n_dirs] = NULL;
    if (kbi_plugins_load((const char *const *)dirs, required, &plugins, err) != KBI_OK) {
        fprintf(stderr, "kbench profile: %s\n", err);
        goto out;
    }
    if (kbi_profile_load(j->o.profile_path, &plugins, &profile, &errors) != KBI_OK) {
        fputs(errors.data ? errors.data : "kbench profile: cannot read the profile\n", stderr);
        goto out;
    }
    kbi_profile_cases(&profile, &cases, &n_cases);
    target = find_case(cases, n_cases, j->case_arg);
    if (!target)
        goto out;
    if (target->section->plugin->desc->variants[target->variant].target != KB_DEVICE) {
        fprintf(stderr,
                "kbench profile: %s is a host variant; Nsight Compute profiles GPU "
                "kernels only\n",
                target->id);
        goto out;
    }
    j->case_id = kbi_strdup(target->id);
    rc = KBI_OK;
out:
    if (cases)
        kbi_cases_free(cases, n_cases);
    kbi_profile_free(&profile);
    kbi_plugins_free(&plugins);
    kbi_buf_free(&errors);
    for (size_t i = 0; i < n_dirs; i++)
        free(dirs[i]);
    return rc;
}

/* Finds ncu and this executable, and makes the output folder.  Returns
 * KBI_OK or KBI_ERR (said on stderr). */
static int profile_prepare(profile_job *j)
{
    char err[KBI_ERR_SIZE];
    ssize_t len;
    if (kbi_find_tool("ncu", "KBENCH_NCU", j->ncu, sizeof j->ncu, err) != KBI_OK) {
        fprintf(stderr, "kbench profile: %s\n", err);
        return KBI_ERR;
    }
    j->o.ncu = j->ncu;
    len = readlink("/proc/self/exe", j->exe, sizeof j->exe - 1);
    if (len <= 0) {
        fprintf(stderr, "kbench profile: cannot find the kbench executable: %s\n", strerror(errno));
        return KBI_ERR;
    }
    j->exe[len] = '\0';
    j->o.kbench = j->exe;
    if (!j->o.out_dir) {
        char stamp[32];
        time_t now = time(NULL);
        struct tm tm;
        localtime_r(&now, &tm);
        strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
        kbi_buf_printf(&j->out_default, "results/profile-%s", stamp);
        j->o.out_dir = j->out_default.data;
    }
    if (kbi_mkdirs(j->o.out_dir, err) != KBI_OK) {
        fprintf(stderr, "kbench profile: %s\n", err);
        return KBI_ERR;
    }
    snprintf(j->results, sizeof j->results, "%s/results.jsonl", j->o.out_dir);
    if (access(j->results, F_OK) == 0) {
        fprintf(stderr, "kbench profile: %s already exists; choose another --out\n", j->results);
        return KBI_ERR;
    }
    snprintf(j->log_path, sizeof j->log_path, "%s/ncu.log", j->o.out_dir);
    snprintf(j->csv_path, sizeof j->csv_path, "%s/ncu.csv", j->o.out_dir);
    snprintf(j->rep, sizeof j->rep, "%s/profile.ncu-rep", j->o.out_dir);
    return KBI_OK;
}

/* Runs the case under ncu, then reads its report back as CSV: one entry
 * per profiled kernel.  Returns the kernels, or NULL (said on stderr). */
static json_t *profile_run_ncu(profile_job *j)
{
    char **child = kbi_ncu_argv(&j->o), *csv = NULL, err[KBI_ERR_SIZE];
    const char *import[] = {j->ncu, "--import", j->rep, "--csv", "--page", "raw", NULL};
    json_t *kernels = NULL;
    FILE *log = fopen(j->log_path, "w");
    int status;
    if (log) {
        for (char **a = child; *a; a++)
            fprintf(log, "%s'%s'", a == child ? "$ " : " ", *a);
        fputc('\n', log);
        fclose(log);
    }
    fprintf(stderr, "kbench profile: %s under ncu (log: %s)\n", j->case_id, j->log_path);
    status = run_logged(child, j->log_path, NULL);
    kbi_ncu_argv_free(child);
    if (status != 0 || access(j->rep, F_OK) != 0) {
        fprintf(stderr, "kbench profile: ncu exited with status %d%s; see %s\n", status,
                access(j->rep, F_OK) != 0 ? " and wrote no report" : "", j->log_path);
        return NULL;
    }
    status = run_logged((char **)import, j->log_path, j->csv_path);
    csv = kbi_read_text(j->csv_path);
    if (status != 0 || !csv) {
        fprintf(stderr, "kbench profile: ncu --import failed (status %d); see %s\n", status,
                j->log_path);
    } else if ((kernels = kbi_ncu_parse_csv(csv, j->csv_path, err)) == NULL) {
        fprintf(stderr, "kbench profile: %s\n", err);
    } else if (json_array_size(kernels) == 0) {
        fprintf(stderr,
                "kbench profile: ncu profiled no kernel of %s (a device variant that "
                "launches nothing, or the NVTX filter did not match); see %s\n",
                j->case_id, j->log_path);
        json_decref(kernels);
        kernels = NULL;
    }
    free(csv);
    return kernels;
}

/* Writes OUT/profile.json: the case, the tools, what limited the launches,
 * the summary per kernel name and every launch. */
static int profile_write_json(const profile_job *j, json_t *kernels, json_t *summary, char *path,
                              size_t n)
{
    json_t *doc = json_object(), *limits = json_object();
    char *filter = kbi_ncu_nvtx_filter(j->case_id);
    int rc;
    json_object_set_new(doc, "schema", json_string(KBI_PROFILE_SCHEMA));
    json_object_set_new(doc, "version", json_integer(KBI_PROFILE_VERSION));
    json_object_set_new(doc, "case", json_string(j->case_id));
    json_object_set_new(doc, "results", json_string("results.jsonl"));
    json_object_set_new(doc, "ncu", json_string(j->ncu));
    json_object_set_new(doc, "nvtx_filter", json_string(filter));
    free(filter);
    json_object_set_new(doc, "report", j->keep ? json_string(j->rep) : json_null());
    json_object_set_new(limits, "launch_count",
                        j->o.launch_count ? json_integer(j->o.launch_count) : json_null());
    json_object_set_new(limits, "launch_skip", json_integer(j->o.launch_skip));
    json_object_set_new(limits, "kernel_regex",
                        j->o.kernel_regex ? json_string(j->o.kernel_regex) : json_null());
    json_object_set_new(doc, "limits", limits);
    json_object_set_new(doc, "summary", json_incref(summary));
    json_object_set_new(doc, "kernels", json_incref(kernels));
    snprintf(path, n, "%s/profile.json", j->o.out_dir);
    rc = json_dump_file(doc, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER) == 0 ? KBI_OK : KBI_ERR;
    if (rc != KBI_OK)
        fprintf(stderr, "kbench profile: cannot write %s\n", path);
    json_decref(doc);
    return rc;
}

int kbi_cmd_profile(int argc, char **argv)
{
    profile_job *j = kbi_xcalloc(1, sizeof *j);
    json_t *kernels = NULL, *summary = NULL;
    char path[4400], err[KBI_ERR_SIZE];
    kbi_ncu_limits limits;
    FILE *dest;
    int rc;
    j->o.device = -1;
    rc = profile_options(j, argc, argv);
    if (rc != KBI_OPTS_GO_ON)
        goto out;
    rc = KBI_EXIT_USAGE;
    /* Before any plugin code runs: stdout carries kbench's summary alone. */
    if (kbi_stdout_guard(err) != KBI_OK) {
        fprintf(stderr, "kbench profile: %s\n", err);
        goto out;
    }
    dest = kbi_stdout();
    if (profile_find_case(j) != KBI_OK || profile_prepare(j) != KBI_OK)
        goto out;
    j->o.case_id = j->case_id;
    rc = KBI_EXIT_FAILED;
    kernels = profile_run_ncu(j);
    if (!kernels)
        goto out;
    summary = kbi_ncu_summarize(kernels);
    limits = (kbi_ncu_limits){j->o.launch_count, j->o.launch_skip, j->o.kernel_regex};
    if (profile_write_json(j, kernels, summary, path, sizeof path) != KBI_OK)
        goto out;
    fprintf(dest, "%s: %zu kernel launch%s profiled\n", j->case_id, json_array_size(kernels),
            json_array_size(kernels) == 1 ? "" : "es");
    kbi_ncu_print_kernel_table(dest, summary, json_array_size(kernels), &limits);
    fprintf(dest, "launches:\n");
    print_launches(dest, kernels);
    fprintf(dest, "profile: %s\n", path);
    if (j->keep)
        fprintf(dest, "ncu report: %s (open it in the Nsight Compute GUI)\n", j->rep);
    else
        unlink(j->rep);
    rc = KBI_EXIT_OK;
out:
    json_decref(kernels);
    json_decref(summary);
    kbi_buf_free(&j->out_default);
    free((char *)j->case_id);
    free(j);
    return rc;
}
