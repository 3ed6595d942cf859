/* kbench profile: the ncu command line it builds (with the launch limits
 * passed through), the CSV reader (against a real ncu capture from the H200),
 * the per-kernel summary of a run of many launches, and a clear error when
 * ncu is absent. */
#define _DEFAULT_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "loader.h"
#include "ncu.h"
#include "ncu_summary.h"
#include "profile.h"

static int index_of(char **argv, const char *s)
{
    for (int i = 0; argv[i]; i++)
        if (strcmp(argv[i], s) == 0)
            return i;
    return -1;
}

Test(ncu, command_line_profiles_one_case)
{
    char *extra[] = {"--cache-control", "all", NULL};
    kbi_ncu_options o = {.ncu = "/opt/ncu",
                         .kbench = "/x/kbench",
                         .profile_path = "p.ini",
                         .case_id = "sgemm/cp_async/shape=64x64x64,alpha=1,beta=0.5",
                         .out_dir = "out",
                         .device = 1,
                         .extra = extra};
    char **v = kbi_ncu_argv(&o);
    int i;
    cr_assert_str_eq(v[0], "/opt/ncu");
    i = index_of(v, "--profile-from-start");
    cr_assert_geq(i, 0);
    cr_expect_str_eq(v[i + 1], "off");
    i = index_of(v, "--target-processes");
    cr_expect_str_eq(v[i + 1], "all");
    i = index_of(v, "--clock-control");
    cr_expect_str_eq(v[i + 1], "none");
    cr_expect_geq(index_of(v, "--nvtx"), 0);
    i = index_of(v, "--nvtx-include");
    cr_expect_str_eq(v[i + 1], "kbench/sgemm/cp_async/shape=64x64x64,alpha=1,beta=0.5/");
    i = index_of(v, "--metrics");
    cr_assert_geq(i, 0);
    cr_expect_str_eq(v[i + 1], kbi_ncu_default_metrics);
    cr_expect(strstr(kbi_ncu_default_metrics, "gpu__time_duration.sum") != NULL);
    i = index_of(v, "--export");
    cr_expect_str_eq(v[i + 1], "out/profile");
    /* Extra ncu arguments come before the program; the program is kbench
     * itself running exactly this case in-process with the profiler opened
     * around one run. */
    cr_expect_lt(index_of(v, "--cache-control"), index_of(v, "/x/kbench"));
    i = index_of(v, "/x/kbench");
    cr_expect_str_eq(v[i + 1], "run");
    cr_expect_str_eq(v[i + 2], "p.ini");
    cr_expect_geq(index_of(v, "--in-process"), 0);
    cr_expect_geq(index_of(v, "--profile-one-run"), 0);
    i = index_of(v, "--filter");
    cr_expect_str_eq(v[i + 1], "sgemm/cp_async/shape=64x64x64,alpha=1,beta=0.5");
    i = index_of(v, "--device");
    cr_expect_str_eq(v[i + 1], "1");
    kbi_ncu_argv_free(v);

    o.set = "full";
    o.case_id = "p/v[1]/x=*";
    v = kbi_ncu_argv(&o);
    cr_expect_lt(index_of(v, "--metrics"), 0);
    i = index_of(v, "--set");
    cr_expect_str_eq(v[i + 1], "full");
    i = index_of(v, "--filter");
    cr_expect_str_eq(v[i + 1], "p/v\\[1\\]/x=\\*", "glob characters in an id are escaped");
    kbi_ncu_argv_free(v);
}

/* argv holds ncu's option flag with value, before the program ncu runs. */
static void expect_ncu_arg(char **argv, const char *flag, const char *value)
{
    int i = index_of(argv, flag);
    cr_assert_geq(i, 0, "%s", flag);
    cr_expect_str_eq(argv[i + 1], value, "%s", flag);
    cr_expect_lt(i, index_of(argv, "/x/kbench"), "%s comes before the program", flag);
}

/* --launches, --skip and --kernel reach ncu as its own filters, before the program. */
Test(ncu, command_line_passes_the_launch_limits)
{
    kbi_ncu_options o = {.ncu = "/opt/ncu",
                         .kbench = "/x/kbench",
                         .profile_path = "p.ini",
                         .case_id = "md/sorted/N_e=24",
                         .out_dir = "out",
                         .device = -1,
                         .launch_count = 12,
                         .launch_skip = 90,
                         .kernel_regex = "force|integrate"};
    char **v = kbi_ncu_argv(&o);
    expect_ncu_arg(v, "--launch-count", "12");
    expect_ncu_arg(v, "--launch-skip", "90");
    expect_ncu_arg(v, "--kernel-name", "regex:force|integrate");
    /* Matched against the demangled name, the one the CSV and the summary print. */
    expect_ncu_arg(v, "--kernel-name-base", "demangled");
    cr_expect_lt(index_of(v, "--device"), 0, "no --device for the profile's own");
    kbi_ncu_argv_free(v);

    /* Without limits, none is passed: ncu profiles every launch of the run. */
    o.launch_count = o.launch_skip = 0;
    o.kernel_regex = NULL;
    v = kbi_ncu_argv(&o);
    cr_expect_lt(index_of(v, "--launch-count"), 0);
    cr_expect_lt(index_of(v, "--launch-skip"), 0);
    cr_expect_lt(index_of(v, "--kernel-name"), 0);
    kbi_ncu_argv_free(v);
}

/* A bad limit is a usage error before anything runs (no ncu is needed to say so). */
Test(ncu, bad_limits_are_usage_errors)
{
    const char *bad[] = {"--launches 0", "--launches many", "--skip -1"};
    const char *want[] = {"--launches '0': expected a number of launches, an integer >= 1",
                          "--launches 'many': expected a number of launches, an integer >= 1",
                          "--skip '-1': expected a number of launches, an integer >= 0"};
    for (size_t t = 0; t < sizeof bad / sizeof *bad; t++) {
        char cmd[1024], out[2048] = "";
        FILE *p;
        snprintf(cmd, sizeof cmd, "%s profile p.ini --case x %s 2>&1", KBENCH_TEST_BINARY, bad[t]);
        cr_assert_not_null(p = popen(cmd, "r"));
        fread(out, 1, sizeof out - 1, p);
        cr_expect_eq(WEXITSTATUS(pclose(p)), 2, "%s", bad[t]);
        cr_expect(strstr(out, want[t]) != NULL, "%s: %s", bad[t], out);
    }
}

/* The text of a file under tests/data (static: one at a time). */
static const char *data_file(const char *name, char *path, size_t n)
{
    static char text[1 << 20];
    size_t len;
    FILE *f;
    snprintf(path, n, "%s/%s", KBENCH_TEST_DATA, name);
    f = fopen(path, "rb");
    cr_assert_not_null(f, "%s is part of the test data", path);
    len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = '\0';
    return text;
}

static json_t *entry_named(json_t *summary, const char *prefix)
{
    size_t i;
    json_t *e;
    json_array_foreach(summary, i, e)
    {
        if (strncmp(json_string_value(json_object_get(e, "name")), prefix, strlen(prefix)) == 0)
            return e;
    }
    return NULL;
}

static double mean_of(json_t *e, const char *metric, json_int_t *launches)
{
    json_t *m = json_object_get(json_object_get(e, "metrics"), metric);
    if (launches)
        *launches = json_integer_value(json_object_get(m, "launches"));
    return json_number_value(json_object_get(m, "value"));
}

/* ncu-md-launches.csv has the layout of the real capture (its header, units row and
 * launch columns, a selection of the default metrics) and the launches of two MD
 * steps' worth of loop: a neighbour build, then five times force and integrate, twice
 * (22 launches of 3 kernels).  force takes 10 and 30 us in turn (200 us in all), the
 * builds 80 us each (160), integrate 4 us (40), of 400 us. */
Test(ncu, summary_per_kernel_of_a_many_launch_run)
{
    char path[512], err[KBI_ERR_SIZE];
    json_t *k = kbi_ncu_parse_csv(data_file("ncu-md-launches.csv", path, sizeof path), path, err);
    json_t *sum, *e, *d;
    json_int_t n;
    cr_assert_not_null(k, "%s", err);
    cr_assert_eq(json_array_size(k), 22);
    sum = kbi_ncu_summarize(k);
    cr_assert_eq(json_array_size(sum), 3, "one entry per kernel name");
    /* The longest total first. */
    cr_expect(strncmp(json_string_value(json_object_get(json_array_get(sum, 0), "name")),
                      "void force_kernel", 17) == 0);
    cr_expect(strncmp(json_string_value(json_object_get(json_array_get(sum, 1), "name")),
                      "void build_neighbors", 20) == 0);
    cr_expect(strncmp(json_string_value(json_object_get(json_array_get(sum, 2), "name")),
                      "void integrate_kernel", 21) == 0);

    e = entry_named(sum, "void force_kernel");
    d = json_object_get(e, "duration");
    cr_expect_eq(json_integer_value(json_object_get(e, "launches")), 10);
    cr_expect_float_eq(json_number_value(json_object_get(d, "total")), 200, 1e-9);
    cr_expect_float_eq(json_number_value(json_object_get(d, "mean")), 20, 1e-9);
    cr_expect_str_eq(json_string_value(json_object_get(d, "unit")), "us");
    cr_expect_float_eq(json_number_value(json_object_get(e, "share")), 0.5, 1e-12);
    cr_expect_float_eq(mean_of(e, "sm__throughput.avg.pct_of_peak_sustained_elapsed", &n), 70, 1e-9,
                       "metrics are averaged over the kernel's launches");
    cr_expect_eq(n, 10);
    cr_expect_float_eq(mean_of(e, "launch__registers_per_thread", NULL), 40, 1e-9);

    e = entry_named(sum, "void build_neighbors");
    d = json_object_get(e, "duration");
    cr_expect_eq(json_integer_value(json_object_get(e, "launches")), 2);
    cr_expect_float_eq(json_number_value(json_object_get(d, "mean")), 80, 1e-9);
    cr_expect_float_eq(json_number_value(json_object_get(e, "share")), 0.4, 1e-12);
    cr_expect_float_eq(mean_of(e, "dram__bytes.sum", NULL), 1024, 1e-9,
                       "ncu's thousands separators are read");

    /* A launch whose metric is not a number ("n/a") is left out of that metric's mean. */
    e = entry_named(sum, "void integrate_kernel");
    cr_expect_float_eq(json_number_value(json_object_get(e, "share")), 0.1, 1e-12);
    cr_expect_float_eq(mean_of(e, "dram__bytes.sum", &n), 2.0, 1e-9);
    cr_expect_eq(n, 9);
    json_decref(sum);
    json_decref(k);
}

/* What `kbench profile` prints first: the heading (launches, kernels, kernel time, what
 * limited them) and one row per kernel, the longest first. */
Test(ncu, summary_table_comes_first_and_says_the_limits)
{
    char path[512], err[KBI_ERR_SIZE], *text = NULL, *force, *build, *integrate;
    size_t len = 0;
    json_t *k = kbi_ncu_parse_csv(data_file("ncu-md-launches.csv", path, sizeof path), path, err);
    json_t *sum;
    kbi_ncu_limits limits = {.launch_count = 22, .launch_skip = 5, .kernel_regex = "_kernel|build"};
    const char *heading = "by kernel: 22 launches of 3 kernels, 400.0 µs of kernel time (profiled: "
                          "at most 22 launches of kernels matching /_kernel|build/ after the "
                          "first 5; the run may launch more)\n";
    FILE *f = open_memstream(&text, &len);
    cr_assert_not_null(k, "%s", err);
    sum = kbi_ncu_summarize(k);
    kbi_ncu_print_kernel_table(f, sum, json_array_size(k), &limits);
    fclose(f);
    cr_expect(strncmp(text, heading, strlen(heading)) == 0, "the first line:\n%s", text);
    force = strstr(text, "void force_kernel");
    build = strstr(text, "void build_neighbors");
    integrate = strstr(text, "void integrate_kernel");
    cr_assert(force && build && integrate, "%s", text);
    cr_expect(force < build && build < integrate, "longest total first:\n%s", text);
    /* force's row: its share, total, mean, launches, SM % and registers. */
    cr_expect(strstr(text, "  50.0%   200.0 µs   20.00 µs       10   70.0") != NULL, "%s", text);
    cr_expect(strstr(text, "   40  void force_kernel") != NULL, "%s", text);
    free(text);
    json_decref(sum);
    json_decref(k);
}

Test(ncu, csv_reader_synthetic)
{
    const char *csv = "==PROF== Connected to process 1\n"
                      "\"ID\",\"Process ID\",\"Kernel Name\",\"Block Size\",\"Grid Size\","
                      "\"gpu__time_duration.sum\",\"dram__bytes.sum\",\"launch__registers_per_thread\"\n"
                      "\"\",\"\",\"\",\"\",\"\",\"nsecond\",\"Mbyte\",\"register/thread\"\n"
                      "\"0\",\"42\",\"void k<(int)1>(float*, int)\",\"(256, 1, 1)\",\"(1024, 1, 1)\","
                      "\"1,234.5\",\"3.25\",\"32\"\n"
                      "\"1\",\"42\",\"other\",\"(128, 1, 1)\",\"(8, 1, 1)\",\"10\",\"n/a\",\"40\"\n";
    char err[KBI_ERR_SIZE];
    json_t *k = kbi_ncu_parse_csv(csv, "t.csv", err);
    cr_assert_not_null(k, "%s", err);
    cr_assert_eq(json_array_size(k), 2);
    json_t *k0 = json_array_get(k, 0), *m = json_object_get(k0, "metrics");
    cr_expect_str_eq(json_string_value(json_object_get(k0, "name")), "void k<(int)1>(float*, int)");
    cr_expect_str_eq(json_string_value(json_object_get(k0, "grid")), "(1024, 1, 1)");
    json_t *d = json_object_get(m, "gpu__time_duration.sum");
    cr_expect_float_eq(json_number_value(json_object_get(d, "value")), 1234.5, 1e-9);
    cr_expect_str_eq(json_string_value(json_object_get(d, "unit")), "nsecond");
    cr_expect_null(json_object_get(m, "Process ID"), "only metrics go under metrics");
    json_t *na = json_object_get(json_object_get(json_array_get(k, 1), "metrics"), "dram__bytes.sum");
    cr_expect_str_eq(json_string_value(json_object_get(na, "value")), "n/a");
    json_decref(k);
}

Test(ncu, csv_reader_errors)
{
    char err[KBI_ERR_SIZE];
    cr_expect_null(kbi_ncu_parse_csv("no csv here\n", "t.csv", err));
    cr_expect_str_eq(err, "t.csv: no CSV header row (\"ID\",...) found, expected ncu --csv --page "
                          "raw output");
    cr_expect_null(kbi_ncu_parse_csv("\"ID\",\"a__b\"\n\"0\",\"1\",\"2\"\n", "t.csv", err));
    cr_expect_str_eq(err, "t.csv:2: 3 fields, expected 2 as in the header");
    cr_expect_null(kbi_ncu_parse_csv("\"ID\",\"a__b\"\n\"0\",\"1\n", "t.csv", err));
    cr_expect_str_eq(err, "t.csv:2: unterminated quoted field");
}

Test(ncu, real_capture_from_the_h200)
{
    char path[512], err[KBI_ERR_SIZE];
    FILE *f;
    snprintf(path, sizeof path, "%s/ncu-h200-triad.csv", KBENCH_TEST_DATA);
    f = fopen(path, "rb");
    cr_assert_not_null(f, "the captured ncu CSV %s is part of the test data", path);
    static char text[1 << 20];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    json_t *k = kbi_ncu_parse_csv(text, path, err);
    cr_assert_not_null(k, "%s", err);
    cr_assert_geq(json_array_size(k), 1);
    json_t *m = json_object_get(json_array_get(k, 0), "metrics");
    const char *want[] = {"gpu__time_duration.sum", "dram__bytes.sum",
                          "sm__warps_active.avg.pct_of_peak_sustained_active",
                          "launch__registers_per_thread"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        json_t *v = json_object_get(json_object_get(m, want[i]), "value");
        cr_expect(json_is_number(v), "%s is a number in the real capture", want[i]);
    }
    /* A triad over 3 x 256 MiB moves about 805 MB through DRAM. */
    json_t *bytes = json_object_get(m, "dram__bytes.sum");
    double v = json_number_value(json_object_get(bytes, "value"));
    const char *unit = json_string_value(json_object_get(bytes, "unit"));
    double mb = strcmp(unit, "Gbyte") == 0 ? v * 1e3 : strcmp(unit, "Mbyte") == 0 ? v : v / 1e6;
    cr_expect(mb > 700 && mb < 900, "dram bytes %g %s", v, unit);
    /* A bandwidth-bound kernel waits on global loads above all else. */
    char reasons[3][64];
    double stalls[3];
    size_t n_stalls = kbi_ncu_top_stalls(json_array_get(k, 0), reasons, stalls, 3);
    cr_assert_eq(n_stalls, 3);
    cr_expect_str_eq(reasons[0], "long_scoreboard");
    cr_expect(stalls[0] >= stalls[1] && stalls[1] >= stalls[2], "largest first");
    json_decref(k);
}

Test(ncu, absent_ncu_is_a_clear_error)
{
    char cmd[1024], out[2048] = "";
    FILE *p;
    snprintf(cmd, sizeof cmd,
             "cd /tmp && env PATH=/nonexistent CUDA_HOME=/nonexistent KBENCH_NCU= %s profile "
             "%s/profiles/stream.ini --plugins %s --case 'stream/triad/bytes=268435456,"
             "blocks_per_sm=0' --out /tmp/kbench-ncu-absent 2>&1",
             KBENCH_TEST_BINARY, KBENCH_TEST_SOURCE_DIR, KBENCH_TEST_PLUGINS);
    p = popen(cmd, "r");
    cr_assert_not_null(p);
    fread(out, 1, sizeof out - 1, p);
    int status = pclose(p);
    if (access("/usr/local/cuda/bin/ncu", X_OK) == 0)
        cr_skip_test("ncu is installed at /usr/local/cuda/bin here");
    cr_expect_eq(WEXITSTATUS(status), 2);
    cr_expect(strstr(out, "ncu not found: looked in $KBENCH_NCU, PATH, $CUDA_HOME/bin and "
                          "/usr/local/cuda/bin") != NULL,
              "%s", out);
}

Test(ncu, report_shows_the_profile_beside_the_timing)
{
    char cmd[1024], path[300], *md;
    FILE *f;
    long n;
    snprintf(cmd, sizeof cmd, "rm -rf /tmp/kbench-ncu-report && %s report %s/profile-h200 --out "
                              "/tmp/kbench-ncu-report --no-charts >/dev/null 2>&1",
             KBENCH_TEST_BINARY, KBENCH_TEST_DATA);
    cr_assert_eq(system(cmd), 0);
    snprintf(path, sizeof path, "/tmp/kbench-ncu-report/report.md");
    f = fopen(path, "r");
    cr_assert_not_null(f);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    rewind(f);
    md = calloc(1, (size_t)n + 1);
    fread(md, 1, (size_t)n, f);
    fclose(f);
    cr_expect(strstr(md, "### Nsight Compute: `stream/triad/bytes=268435456,blocks_per_sm=0`") !=
                  NULL,
              "the profile table is in the report");
    cr_expect(strstr(md, "stream_kernel") != NULL, "one row per kernel, named");
    cr_expect(strstr(md, "long_scoreboard") != NULL, "top stall reasons");
    free(md);
}

/* The example id in `kbench profile --help` is a case of profiles/sgemm.ini, so a user who
 * copies it profiles something. */
Test(ncu, the_help_example_id_names_a_real_case)
{
    char cmd[4200], line[512], id[400] = "", path[4200], err[KBI_ERR_SIZE];
    const char *dirs[] = {KBENCH_TEST_PLUGINS, NULL};
    int req[] = {1}, found = 0;
    kbi_plugin_set plugins;
    kbi_profile prof;
    kbi_buf errors = {0};
    kbi_case *cases;
    size_t n;
    FILE *p;
    snprintf(cmd, sizeof cmd, "%s profile --help", KBENCH_TEST_BINARY);
    cr_assert_not_null(p = popen(cmd, "r"));
    while (fgets(line, sizeof line, p))
        if (!id[0])
            sscanf(line, " '%399[^']'", id);
    pclose(p);
    cr_assert(id[0], "no example id in profile --help");
    snprintf(path, sizeof path, "%s/profiles/sgemm.ini", KBENCH_TEST_SOURCE_DIR);
    cr_assert_eq(kbi_plugins_load(dirs, req, &plugins, err), KBI_OK, "%s", err);
    cr_assert_eq(kbi_profile_load(path, &plugins, &prof, &errors), KBI_OK, "%s", errors.data);
    kbi_profile_cases(&prof, &cases, &n);
    for (size_t i = 0; i < n; i++)
        found += strcmp(cases[i].id, id) == 0;
    cr_expect_eq(found, 1, "%s is not a case of profiles/sgemm.ini", id);
    kbi_cases_free(cases, n);
    kbi_profile_free(&prof);
    kbi_plugins_free(&plugins);
}
