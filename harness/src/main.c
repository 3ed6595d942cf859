/* The kbench command line: one verb per job, each with --help. */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build_info.h"
#include "common.h"
#include "compare.h"
#include "loader.h"
#include "ncu.h"
#include "report.h"
#include "runner.h"

static const char *const usage_main =
    "usage: kbench VERB [OPTIONS]\n"
    "\n"
    "Measures GPU (and CPU) kernels loaded as plugins, verifies every result, and\n"
    "compares variants and runs.\n"
    "\n"
    "verbs:\n"
    "  list     [--plugins DIR]                      plugins, variants, parameters, defaults\n"
    "  run      PROFILE.ini [--out DIR] [--filter GLOB] [--device N] [--shard I/N]\n"
    "                                                run a profile, write results.jsonl\n"
    "  report   RESULTS... [--out DIR]               report.md + results.csv + charts\n"
    "  compare  BASELINE RESULTS [--threshold X]     per-case verdicts; exit 1 on regression\n"
    "  profile  PROFILE.ini --case ID [-- NCU-ARGS]  one case under Nsight Compute\n"
    "\n"
    "Run `kbench VERB --help` for a verb's options.\n"
    "\n"
    "Plugins are loaded from the folders of --plugins DIR (repeatable, or DIR:DIR),\n"
    "then those of $" KBI_PLUGIN_PATH_ENV " (colon-separated), then the plugins/ folder\n"
    "next to the kbench binary; the first plugin of a name wins.\n"
    "\n"
    "exit codes: 0 ok; 1 a case failed, did not verify, crashed, timed out, or\n"
    "regressed; 2 bad usage or input; 130 interrupted (finished cases are kept).\n";

static const char *const usage_list =
    "usage: kbench list [--plugins DIR]...\n"
    "\n"
    "Lists every plugin found, with its variants (host or device, baseline), its\n"
    "parameters (type, default, help, allowed rank or count), its declared\n"
    "metrics (unit, better direction, bound) and its size axis.  Plugins that\n"
    "cannot be loaded are listed on stderr with the reason.  Runs nothing.\n";

static const char *const usage_run =
    "usage: kbench run PROFILE.ini [OPTIONS]\n"
    "\n"
    "Runs every case of the profile: each in a child process, verified before it\n"
    "is timed, timed until the profile's sample and noise targets are met, and\n"
    "written to OUT/results.jsonl as it ends.  Progress goes to stderr; the path\n"
    "of the results file is printed on stdout at the end.\n"
    "\n"
    "options:\n"
    "  --out DIR        where to write results.jsonl (default results/PROFILE-TIME);\n"
    "                   an existing results.jsonl is never overwritten\n"
    "  --filter GLOB    run only cases whose id matches GLOB, e.g. 'sgemm/cublas/*'\n"
    "  --device N       CUDA device ordinal (overrides [run] device)\n"
    "  --shard I/N      run the I-th of N deterministic slices of the cases (1 <= I <= N)\n"
    "  --plugins DIR    also load plugins from DIR (repeatable; DIR:DIR too), before\n"
    "                   $" KBI_PLUGIN_PATH_ENV " and the built-in folder\n"
    "  --sanitize[=TOOL]  run each device case under compute-sanitizer (memcheck by\n"
    "                   default; racecheck, initcheck, synccheck); its findings make\n"
    "                   the case an error; logs in OUT/sanitize/\n"
    "  --help           this text\n"
    "\n"
    "exit codes: 0 every case ok or skipped; 1 a case failed, did not verify,\n"
    "crashed or timed out; 2 bad profile, usage, or results not writable;\n"
    "130 interrupted by SIGINT/SIGTERM (the results file is marked incomplete).\n";

static const char *type_name(kb_param_type t)
{
    switch (t) {
    case KB_PARAM_INT:
        return "int";
    case KB_PARAM_FLOAT:
        return "float";
    case KB_PARAM_STRING:
        return "string";
    case KB_PARAM_DIMS:
        return "dims";
    case KB_PARAM_INTS:
        return "ints";
    }
    return "?";
}

static const char *better_name(kb_better b)
{
    switch (b) {
    case KB_BETTER_HIGHER:
        return "higher";
    case KB_BETTER_LOWER:
        return "lower";
    case KB_BETTER_NONE:
        break;
    }
    return "-";
}

/* The declared metrics (ABI 1.1) of a plugin: name, unit, better, bound, help. */
static void list_metrics(const kb_plugin *d)
{
    if (!KBI_DESC_HAS(d, n_metrics) || !d->metrics || d->n_metrics <= 0)
        return;
    printf("  metrics:\n");
    for (int m = 0; m < d->n_metrics; m++) {
        const kb_metric_def *md = &d->metrics[m];
        char bound[96] = "-";
        if ((md->bounds & KB_BOUND_LOW) && (md->bounds & KB_BOUND_HIGH))
            snprintf(bound, sizeof bound, "%g to %g", md->low, md->high);
        else if (md->bounds & KB_BOUND_LOW)
            snprintf(bound, sizeof bound, ">= %g", md->low);
        else if (md->bounds & KB_BOUND_HIGH)
            snprintf(bound, sizeof bound, "<= %g", md->high);
        printf("    %-16s %-8s better %-7s bound %-14s %s\n", md->name ? md->name : "?",
               md->unit ? md->unit : "-", better_name(md->better), bound,
               md->help ? md->help : "");
    }
}

static int cmd_list(int argc, char **argv)
{
    static const struct option opts[] = {{"plugins", required_argument, NULL, 'p'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    static char plugins_dir[KBI_PLUGIN_DIRS_MAX];
    char *dirs[16], err[KBI_ERR_SIZE];
    int required[16], c;
    size_t n_dirs;
    kbi_plugin_set set;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'p') {
            if (kbi_plugin_dirs_add(plugins_dir, sizeof plugins_dir, optarg) != KBI_OK) {
                fprintf(stderr, "kbench list: --plugins: too many folders\n");
                return KBI_EXIT_USAGE;
            }
        } else if (c == 'h') {
            fputs(usage_list, stdout);
            return KBI_EXIT_OK;
        } else {
            fputs(usage_list, stderr);
            return KBI_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "kbench list: unexpected argument '%s'\n%s", argv[optind], usage_list);
        return KBI_EXIT_USAGE;
    }
    n_dirs = kbi_plugin_dirs(plugins_dir[0] ? plugins_dir : NULL, dirs, required, 15);
    dirs[n_dirs] = NULL;
    if (kbi_plugins_load((const char *const *)dirs, required, &set, err) != KBI_OK) {
        fprintf(stderr, "kbench list: %s\n", err);
        for (size_t i = 0; i < n_dirs; i++)
            free(dirs[i]);
        return KBI_EXIT_USAGE;
    }
    for (size_t i = 0; i < set.n_refused; i++)
        fprintf(stderr, "kbench: %s\n", set.refused[i]);
    if (set.n == 0)
        fprintf(stderr, "kbench list: no plugins found in %s\n", n_dirs ? dirs[0] : "(none)");
    for (size_t i = 0; i < set.n; i++) {
        const kb_plugin *d = set.items[i].desc;
        printf("%s  (ABI %u.%u, %s)\n", d->name, KB_ABI_MAJOR_OF(d->abi_version),
               KB_ABI_MINOR_OF(d->abi_version), set.items[i].path);
        if (d->description)
            printf("  %s\n", d->description);
        printf("  variants:\n");
        for (int v = 0; v < d->n_variants; v++)
            printf("    %-16s %-6s%s  %s\n", d->variants[v].name,
                   d->variants[v].target == KB_DEVICE ? "device" : "host",
                   d->variants[v].flags & KB_VARIANT_BASELINE ? " (baseline)" : "",
                   d->variants[v].description ? d->variants[v].description : "");
        printf("  parameters:\n");
        if (d->n_params == 0)
            printf("    (none)\n");
        for (int p = 0; p < d->n_params; p++) {
            const kb_param *pr = &d->params[p];
            printf("    %-16s %-6s default %-16s %s", pr->name, type_name(pr->type),
                   pr->default_value ? pr->default_value : "-", pr->help ? pr->help : "");
            if (pr->choices && pr->type == KB_PARAM_STRING)
                printf(" (one of %s)", pr->choices);
            else if (pr->type == KB_PARAM_DIMS && pr->choices)
                printf(" (rank %s)", pr->choices);
            else if (pr->type == KB_PARAM_DIMS) /* a 1.0 plugin reads 4 at the most */
                printf(" (rank 1-%d)",
                       KB_ABI_MINOR_OF(d->abi_version) >= 1 ? KB_MAX_RANK : KB_MAX_DIMS);
            else if (pr->type == KB_PARAM_INTS && pr->choices)
                printf(" (count %s)", pr->choices);
            else if (pr->type == KB_PARAM_INTS)
                printf(" (count 0-%d)", KB_MAX_INTS);
            putchar('\n');
        }
        list_metrics(d);
        if (KBI_DESC_HAS(d, size_param) && d->size_param)
            printf("  size axis: %s\n", d->size_param);
        putchar('\n');
    }
    kbi_plugins_free(&set);
    for (size_t i = 0; i < n_dirs; i++)
        free(dirs[i]);
    return KBI_EXIT_OK;
}

static int cmd_run(int argc, char **argv)
{
    static const struct option opts[] = {{"out", required_argument, NULL, 'o'},
                                         {"filter", required_argument, NULL, 'f'},
                                         {"device", required_argument, NULL, 'd'},
                                         {"shard", required_argument, NULL, 's'},
                                         {"plugins", required_argument, NULL, 'p'},
                                         {"sanitize", optional_argument, NULL, 'S'},
                                         {"help", no_argument, NULL, 'h'},
                                         /* Internal: used by `kbench profile`. */
                                         {"in-process", no_argument, NULL, 'I'},
                                         {"profile-one-run", no_argument, NULL, 'P'},
                                         {NULL, 0, NULL, 0}};
    static char plugins_dir[KBI_PLUGIN_DIRS_MAX];
    kbi_run_args a = {.device = -1, .argc = argc, .argv = argv};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "ho:f:d:s:p:", opts, NULL)) != -1) {
        switch (c) {
        case 'o':
            a.out_dir = optarg;
            break;
        case 'f':
            a.filter = optarg;
            break;
        case 'd': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end || end == optarg || v < 0 || v > 1024) {
                fprintf(stderr, "kbench run: --device '%s' is not a device ordinal, expected an "
                                "integer >= 0\n",
                        optarg);
                return KBI_EXIT_USAGE;
            }
            a.device = (int)v;
            break;
        }
        case 's':
            if (kbi_parse_shard(optarg, &a.shard_index, &a.shard_count) != 0) {
                fprintf(stderr, "kbench run: --shard '%s' is not a shard, expected I/N with "
                                "1 <= I <= N\n",
                        optarg);
                return KBI_EXIT_USAGE;
            }
            break;
        case 'p':
            if (kbi_plugin_dirs_add(plugins_dir, sizeof plugins_dir, optarg) != KBI_OK) {
                fprintf(stderr, "kbench run: --plugins: too many folders\n");
                return KBI_EXIT_USAGE;
            }
            a.plugins_dir = plugins_dir;
            break;
        case 'S':
            a.sanitize = optarg ? optarg : "memcheck";
            break;
        case 'I':
            a.in_process = 1;
            break;
        case 'P':
            a.profile_run = 1;
            break;
        case 'h':
            fputs(usage_run, stdout);
            return KBI_EXIT_OK;
        default:
            fputs(usage_run, stderr);
            return KBI_EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "kbench run: %s\n%s",
                optind >= argc ? "missing PROFILE.ini" : "expected exactly one profile",
                usage_run);
        return KBI_EXIT_USAGE;
    }
    a.profile_path = argv[optind];
    return kbi_run(&a);
}

int main(int argc, char **argv)
{
    const char *verb = argc > 1 ? argv[1] : NULL;
    if (!verb) {
        fputs(usage_main, stderr);
        return KBI_EXIT_USAGE;
    }
    if (strcmp(verb, "--help") == 0 || strcmp(verb, "-h") == 0 || strcmp(verb, "help") == 0) {
        fputs(usage_main, stdout);
        return KBI_EXIT_OK;
    }
    if (strcmp(verb, "--version") == 0) {
        printf("kbench %s (plugin ABI %d.%d)\n", KBENCH_VERSION, KB_ABI_MAJOR, KB_ABI_MINOR);
        return KBI_EXIT_OK;
    }
    if (strcmp(verb, "list") == 0)
        return cmd_list(argc - 1, argv + 1);
    if (strcmp(verb, "run") == 0)
        return cmd_run(argc - 1, argv + 1);
    if (strcmp(verb, "report") == 0)
        return kbi_cmd_report(argc - 1, argv + 1);
    if (strcmp(verb, "compare") == 0)
        return kbi_cmd_compare(argc - 1, argv + 1);
    if (strcmp(verb, "profile") == 0)
        return kbi_cmd_profile(argc - 1, argv + 1);
    fprintf(stderr, "kbench: unknown verb '%s'\n%s", verb, usage_main);
    return KBI_EXIT_USAGE;
}
