/* `kbench profile`: one case under Nsight Compute, its CSV read back into
 * profile.json beside the case's results. */
#define _GNU_SOURCE
#include "ncu.h"

#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "loader.h"
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
        kbi_errf(err, "%s: no CSV header row (\"ID\",...) found, expected ncu --csv --page raw "
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

static const char *const usage =
    "usage: kbench profile PROFILE.ini --case ID [OPTIONS] [-- EXTRA-NCU-ARGS]\n"
    "\n"
    "Runs one case of the profile under Nsight Compute (ncu): profiling is off\n"
    "until the case has verified and warmed up, then exactly one run() is\n"
    "profiled, inside the case's NVTX range.  Writes OUT/results.jsonl (the\n"
    "case's timing), OUT/ncu.csv and OUT/profile.json (the metrics, one entry per\n"
    "kernel the run launched), and prints the key figures; `kbench report\n"
    "OUT/results.jsonl` shows them beside the timing.\n"
    "\n"
    "options:\n"
    "  --case ID        the case id (or a glob matching exactly one), as `kbench run`\n"
    "                   prints it, e.g.\n"
    "                   'sgemm/cp_async/shape=4096x4096x4096,alpha=1,beta=0.5,config=-1'\n"
    "  --metrics LIST   comma-separated ncu metrics instead of the default set\n"
    "  --set NAME       an ncu section set (e.g. detailed, full) instead of metrics\n"
    "  --keep-report    keep OUT/profile.ncu-rep for the Nsight Compute GUI\n"
    "  --out DIR        output folder (default results/profile-TIME)\n"
    "  --device N       CUDA device ordinal\n"
    "  --plugins DIR    also load plugins from DIR (repeatable; DIR:DIR too)\n"
    "  --help           this text\n"
    "\n"
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

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    kbi_buf b = {0};
    char chunk[8192];
    size_t n;
    if (!f)
        return NULL;
    kbi_buf_printf(&b, "%s", "");
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        kbi_buf_printf(&b, "%.*s", (int)n, chunk);
    fclose(f);
    return b.data;
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

/* Prints the key figures of each kernel, with its three largest stall
 * reasons. */
static void print_summary(json_t *kernels)
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
        printf("kernel %s: %s\n", json_string_value(json_object_get(k, "id")),
               name ? name : "?");
        {
            const char *smem_unit = json_string_value(json_object_get(
                json_object_get(metrics, "launch__shared_mem_per_block_static"), "unit"));
            printf("  grid %s  block %s  registers/thread %.0f  static smem %.4g %s\n",
                   json_string_value(json_object_get(k, "grid")),
                   json_string_value(json_object_get(k, "block")),
                   metric(k, "launch__registers_per_thread"),
                   metric(k, "launch__shared_mem_per_block_static"),
                   smem_unit ? smem_unit : "");
        }
        printf("  duration %.4g %s  SM %.1f%%  memory %.1f%% of peak  DRAM %.1f%% (%.4g %s)\n",
               metric(k, "gpu__time_duration.sum"),
               json_string_value(json_object_get(
                   json_object_get(metrics, "gpu__time_duration.sum"), "unit")),
               metric(k, "sm__throughput.avg.pct_of_peak_sustained_elapsed"),
               metric(k, "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"),
               metric(k, "dram__throughput.avg.pct_of_peak_sustained_elapsed"),
               metric(k, "dram__bytes.sum.per_second"),
               json_string_value(json_object_get(
                   json_object_get(metrics, "dram__bytes.sum.per_second"), "unit")));
        printf("  occupancy %.1f%%  L1 hit %.1f%%  L2 hit %.1f%%  smem bank conflicts ld %.0f st "
               "%.0f\n",
               metric(k, "sm__warps_active.avg.pct_of_peak_sustained_active"),
               metric(k, "l1tex__t_sector_hit_rate.pct"), metric(k, "lts__t_sector_hit_rate.pct"),
               metric(k, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"),
               metric(k, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"));
        n_top = kbi_ncu_top_stalls(k, reasons, top, 3);
        if (n_top) {
            printf("  top stalls:");
            for (size_t t = 0; t < n_top; t++)
                printf(" %s %.2f", reasons[t], top[t]);
            printf(" (warps per issue)\n");
        }
    }
}

/* Finds the single case matching id (exactly, or as a glob). */
static const kbi_case *find_case(const kbi_case *cases, size_t n, const char *id)
{
    const kbi_case *hit = NULL;
    size_t matches = 0;
    for (size_t i = 0; i < n; i++)
        if (strcmp(cases[i].id, id) == 0)
            return &cases[i];
    for (size_t i = 0; i < n; i++)
        if (fnmatch(id, cases[i].id, 0) == 0) {
            if (matches++ < 10)
                fprintf(stderr, "  matches: %s\n", cases[i].id);
            hit = &cases[i];
        }
    if (matches == 1)
        return hit;
    fprintf(stderr, "kbench profile: --case '%s' matches %zu cases, expected exactly one%s\n", id,
            matches, matches == 0 ? " (kbench run prints the ids)" : "");
    return NULL;
}

int kbi_cmd_profile(int argc, char **argv)
{
    static const struct option opts[] = {{"case", required_argument, NULL, 'c'},
                                         {"metrics", required_argument, NULL, 'm'},
                                         {"set", required_argument, NULL, 's'},
                                         {"keep-report", no_argument, NULL, 'k'},
                                         {"out", required_argument, NULL, 'o'},
                                         {"device", required_argument, NULL, 'd'},
                                         {"plugins", required_argument, NULL, 'p'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    static char plugins_dir[KBI_PLUGIN_DIRS_MAX];
    kbi_ncu_options o = {.device = -1};
    const char *case_arg = NULL;
    int keep = 0, c, rc = KBI_EXIT_USAGE, status;
    char ncu[4096], exe[4096], err[KBI_ERR_SIZE], *dirs[16], path[4300], csv_path[4300],
        log_path[4300], rep[4300];
    int required[16];
    size_t n_dirs = 0, n_cases = 0;
    kbi_plugin_set plugins = {0};
    kbi_profile profile = {0};
    kbi_case *cases = NULL;
    const kbi_case *target;
    kbi_buf errors = {0}, out_default = {0};
    char **child = NULL, *csv = NULL;
    json_t *kernels = NULL, *doc = NULL;
    ssize_t len;

    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'c':
            case_arg = optarg;
            break;
        case 'm':
            o.metrics = optarg;
            break;
        case 's':
            o.set = optarg;
            break;
        case 'k':
            keep = 1;
            break;
        case 'o':
            o.out_dir = optarg;
            break;
        case 'd':
            o.device = atoi(optarg);
            break;
        case 'p':
            if (kbi_plugin_dirs_add(plugins_dir, sizeof plugins_dir, optarg) != KBI_OK) {
                fprintf(stderr, "kbench profile: --plugins: too many folders\n");
                return KBI_EXIT_USAGE;
            }
            o.plugins_dir = plugins_dir;
            break;
        case 'h':
            fputs(usage, stdout);
            return KBI_EXIT_OK;
        default:
            fputs(usage, stderr);
            return KBI_EXIT_USAGE;
        }
    }
    if (optind >= argc || !case_arg) {
        fprintf(stderr, "kbench profile: %s\n%s",
                optind >= argc ? "missing PROFILE.ini" : "missing --case ID", usage);
        return KBI_EXIT_USAGE;
    }
    if (o.metrics && o.set) {
        fprintf(stderr, "kbench profile: give --metrics or --set, not both\n");
        return KBI_EXIT_USAGE;
    }
    o.profile_path = argv[optind++];
    o.extra = argv + optind; /* after "--" (getopt stops there) */

    n_dirs = kbi_plugin_dirs(o.plugins_dir, dirs, required, 15);
    dirs[n_dirs] = NULL;
    if (kbi_plugins_load((const char *const *)dirs, required, &plugins, err) != KBI_OK) {
        fprintf(stderr, "kbench profile: %s\n", err);
        goto out;
    }
    if (kbi_profile_load(o.profile_path, &plugins, &profile, &errors) != KBI_OK) {
        fputs(errors.data ? errors.data : "kbench profile: cannot read the profile\n", stderr);
        goto out;
    }
    kbi_profile_cases(&profile, &cases, &n_cases);
    target = find_case(cases, n_cases, case_arg);
    if (!target)
        goto out;
    o.case_id = target->id;
    if (target->section->plugin->desc->variants[target->variant].target != KB_DEVICE) {
        fprintf(stderr, "kbench profile: %s is a host variant; Nsight Compute profiles GPU "
                        "kernels only\n",
                target->id);
        goto out;
    }
    if (kbi_find_tool("ncu", "KBENCH_NCU", ncu, sizeof ncu, err) != KBI_OK) {
        fprintf(stderr, "kbench profile: %s\n", err);
        goto out;
    }
    o.ncu = ncu;
    len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0) {
        fprintf(stderr, "kbench profile: cannot find the kbench executable: %s\n",
                strerror(errno));
        goto out;
    }
    exe[len] = '\0';
    o.kbench = exe;
    if (!o.out_dir) {
        char stamp[32];
        time_t now = time(NULL);
        struct tm tm;
        localtime_r(&now, &tm);
        strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
        kbi_buf_printf(&out_default, "results/profile-%s", stamp);
        o.out_dir = out_default.data;
    }
    if (kbi_mkdirs(o.out_dir, err) != KBI_OK) {
        fprintf(stderr, "kbench profile: %s\n", err);
        goto out;
    }
    snprintf(path, sizeof path, "%s/results.jsonl", o.out_dir);
    if (access(path, F_OK) == 0) {
        fprintf(stderr, "kbench profile: %s already exists; choose another --out\n", path);
        goto out;
    }
    snprintf(log_path, sizeof log_path, "%s/ncu.log", o.out_dir);
    snprintf(csv_path, sizeof csv_path, "%s/ncu.csv", o.out_dir);
    snprintf(rep, sizeof rep, "%s/profile.ncu-rep", o.out_dir);

    child = kbi_ncu_argv(&o);
    {
        FILE *log = fopen(log_path, "w");
        if (log) {
            for (char **a = child; *a; a++)
                fprintf(log, "%s'%s'", a == child ? "$ " : " ", *a);
            fputc('\n', log);
            fclose(log);
        }
    }
    fprintf(stderr, "kbench profile: %s under ncu (log: %s)\n", target->id, log_path);
    status = run_logged(child, log_path, NULL);
    rc = KBI_EXIT_FAILED;
    if (status != 0 || access(rep, F_OK) != 0) {
        fprintf(stderr, "kbench profile: ncu exited with status %d%s; see %s\n", status,
                access(rep, F_OK) != 0 ? " and wrote no report" : "", log_path);
        goto out;
    }
    kbi_ncu_argv_free(child);
    child = NULL;
    {
        /* Read the report back as CSV: one row per profiled kernel. */
        const char *import[] = {ncu, "--import", rep, "--csv", "--page", "raw", NULL};
        status = run_logged((char **)import, log_path, csv_path);
    }
    csv = read_file(csv_path);
    if (status != 0 || !csv) {
        fprintf(stderr, "kbench profile: ncu --import failed (status %d); see %s\n", status,
                log_path);
        goto out;
    }
    kernels = kbi_ncu_parse_csv(csv, csv_path, err);
    if (!kernels) {
        fprintf(stderr, "kbench profile: %s\n", err);
        goto out;
    }
    if (json_array_size(kernels) == 0) {
        fprintf(stderr, "kbench profile: ncu profiled no kernel of %s (a device variant that "
                        "launches nothing, or the NVTX filter did not match); see %s\n",
                target->id, log_path);
        goto out;
    }
    doc = json_object();
    json_object_set_new(doc, "schema", json_string(KBI_PROFILE_SCHEMA));
    json_object_set_new(doc, "version", json_integer(KBI_PROFILE_VERSION));
    json_object_set_new(doc, "case", json_string(target->id));
    json_object_set_new(doc, "results", json_string("results.jsonl"));
    json_object_set_new(doc, "ncu", json_string(ncu));
    {
        char *filter = kbi_ncu_nvtx_filter(target->id);
        json_object_set_new(doc, "nvtx_filter", json_string(filter));
        free(filter);
    }
    json_object_set_new(doc, "report", keep ? json_string(rep) : json_null());
    json_object_set_new(doc, "kernels", json_incref(kernels));
    snprintf(path, sizeof path, "%s/profile.json", o.out_dir);
    if (json_dump_file(doc, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0) {
        fprintf(stderr, "kbench profile: cannot write %s\n", path);
        goto out;
    }
    printf("%s: %zu kernel%s profiled\n", target->id, json_array_size(kernels),
           json_array_size(kernels) == 1 ? "" : "s");
    print_summary(kernels);
    printf("profile: %s\n", path);
    if (keep)
        printf("ncu report: %s (open it in the Nsight Compute GUI)\n", rep);
    else
        unlink(rep);
    rc = KBI_EXIT_OK;

out:
    kbi_ncu_argv_free(child);
    free(csv);
    json_decref(kernels);
    json_decref(doc);
    if (cases)
        kbi_cases_free(cases, n_cases);
    kbi_profile_free(&profile);
    kbi_plugins_free(&plugins);
    kbi_buf_free(&errors);
    kbi_buf_free(&out_default);
    for (size_t i = 0; i < n_dirs; i++)
        free(dirs[i]);
    return rc;
}
