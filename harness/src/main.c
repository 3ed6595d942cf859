/* The kbench command line: one verb per job, each with --help. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baseline.h"
#include "build_info.h"
#include "common.h"
#include "compare.h"
#include "export.h"
#include "history.h"
#include "knob_variants.h"
#include "loader.h"
#include "manifest.h"
#include "ncu.h"
#include "options.h"
#include "report.h"
#include "runner.h"

/* `kbench --help`: this text, then each verb's usage and summary from its own
 * table (kbi_options_collect), then what every verb shares. */
static const char *const usage_head =
    "usage: kbench VERB [OPTIONS]\n"
    "\n"
    "Measures GPU (and CPU) kernels loaded as plugins, verifies every result, and\n"
    "compares variants and runs.\n"
    "\n"
    "verbs:\n";

static const char *const usage_tail =
    "\n"
    "Run `kbench VERB --help` for a verb's options.\n"
    "\n"
    "Plugins are loaded from the folders of --plugins DIR (repeatable, or DIR:DIR),\n"
    "then those of $" KBI_PLUGIN_PATH_ENV " (colon-separated), then the plugins/ folder\n"
    "next to the kbench binary; the first plugin of a name wins.\n"
    "\n"
    "exit codes: 0 ok; 1 a case failed, did not verify, crashed, timed out, or\n"
    "regressed; 2 bad usage or input; 130 interrupted (finished cases are kept).\n";

static const char *const help_list =
    "Lists every plugin found, with its variants (host or device, baseline), its\n"
    "parameters (type, default, help, allowed rank or count), its declared\n"
    "metrics (unit, better direction, bound) and its size axis.  Plugins that\n"
    "cannot be loaded are listed on stderr with the reason.  Runs nothing.\n";

static const char *const help_run =
    "Runs every case of the profile: each in a child process, verified before it\n"
    "is timed, timed until the profile's sample and noise targets are met, and\n"
    "written to OUT/results.jsonl as it ends, with OUT/manifest.json (the run's\n"
    "profile, revision, command, GPU, driver) at the end.  Progress goes to stderr;\n"
    "the path of the results file is printed on stdout at the end.\n";

static const char *const notes_run =
    "exit codes: 0 every case ok or skipped; 1 a case failed, did not verify,\n"
    "crashed or timed out; 2 bad profile, usage, or results not writable;\n"
    "130 interrupted by SIGINT/SIGTERM (the results file is marked incomplete).\n"
    "Two options are kbench's own and left out above: `kbench profile` runs\n"
    "`kbench run --in-process --profile-one-run --filter ID` under ncu (the case in\n"
    "this process, no worker, so the profiler sees its kernels; the profiler opened\n"
    "around one run after the first verify).\n";

/* --plugins, as list and run take it, into dir (char[KBI_PLUGIN_DIRS_MAX]). */
#define PLUGINS_OPTION(dir)                                                                        \
    {                                                                                              \
        .name = "plugins", .short_name = 'p', .kind = KBI_OPT_PLUGINS, .target = dir,              \
        .arg = "DIR",                                                                              \
        .help = "also load plugins from DIR (repeatable; DIR:DIR too), before\n"                   \
                "$" KBI_PLUGIN_PATH_ENV " and the built-in folder"                                 \
    }

static const char *type_name(kb_param_type t)
{
    static const char *const names[] = {"int", "float", "string", "dims", "ints"};
    return (unsigned)t < sizeof names / sizeof *names ? names[t] : "?";
}

static const char *better_name(kb_better b)
{
    static const char *const names[] = {"-", "higher", "lower"};
    return (unsigned)b < sizeof names / sizeof *names ? names[b] : "-";
}

/* The declared metrics (ABI 1.1) of a plugin: name, unit, better, bound, help. */
static void list_metrics(FILE *out, const kb_plugin *d)
{
    if (!KBI_DESC_HAS(d, n_metrics) || !d->metrics || d->n_metrics <= 0)
        return;
    fprintf(out, "  metrics:\n");
    for (int m = 0; m < d->n_metrics; m++) {
        const kb_metric_def *md = &d->metrics[m];
        char bound[96] = "-";
        if ((md->bounds & KB_BOUND_LOW) && (md->bounds & KB_BOUND_HIGH))
            snprintf(bound, sizeof bound, "%g to %g", md->low, md->high);
        else if (md->bounds & KB_BOUND_LOW)
            snprintf(bound, sizeof bound, ">= %g", md->low);
        else if (md->bounds & KB_BOUND_HIGH)
            snprintf(bound, sizeof bound, "<= %g", md->high);
        fprintf(out, "    %-16s %-8s better %-7s bound %-14s %s\n", md->name ? md->name : "?",
                md->unit ? md->unit : "-", better_name(md->better), bound,
                md->help ? md->help : "");
    }
}

/* Prints what a parameter is to case ids: " [implicit]", " [knob]", or " [knob: a, b]" for a
 * knob that applies to those variants only (ABI 1.4's knob_variants); returns its role. */
static kbi_param_role print_role(FILE *out, const kbi_plugin *p, const char *name)
{
    kbi_param_role role = kbi_param_role_of(p, name);
    int *idx;
    size_t n;
    if (role == KBI_ROLE_IMPLICIT)
        fputs(" [implicit]", out);
    if (role != KBI_ROLE_KNOB)
        return role;
    idx = kbi_xcalloc((size_t)p->desc->n_variants, sizeof *idx);
    n = kbi_knob_variants_of(p, name, idx);
    fputs(" [knob", out);
    for (size_t k = 0; n < (size_t)p->desc->n_variants && k < n; k++)
        fprintf(out, "%s%s", k ? ", " : ": ", p->desc->variants[idx[k]].name);
    fputc(']', out);
    free(idx);
    return role;
}

static int cmd_list(int argc, char **argv)
{
    static char plugins_dir[KBI_PLUGIN_DIRS_MAX];
    const kbi_option options[] = {
        PLUGINS_OPTION(plugins_dir),
    };
    const kbi_verb_spec spec = {.verb = "list",
                                .help = help_list,
                                KBI_SPEC_OPTIONS(options),
                                .operands = "no arguments",
                                .summary = "plugins, variants, parameters, defaults"};
    char *dirs[16], err[KBI_ERR_SIZE];
    int required[16], first, parsed;
    size_t n_dirs;
    kbi_plugin_set set;
    FILE *out;
    plugins_dir[0] = '\0';
    if ((parsed = kbi_options_parse(&spec, argc, argv, &first)) != KBI_OPTS_GO_ON)
        return parsed;
    if (kbi_stdout_guard(err) != KBI_OK) {
        fprintf(stderr, "kbench list: %s\n", err);
        return KBI_EXIT_USAGE;
    }
    out = kbi_stdout();
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
        kbi_param_role role;
        int quiet = 0;
        fprintf(out, "%s  (ABI %u.%u, %s)\n", d->name, KB_ABI_MAJOR_OF(d->abi_version),
                KB_ABI_MINOR_OF(d->abi_version), set.items[i].path);
        if (d->description)
            fprintf(out, "  %s\n", d->description);
        fprintf(out, "  variants:\n");
        for (int v = 0; v < d->n_variants; v++)
            fprintf(out, "    %-16s %-6s%s  %s\n", d->variants[v].name,
                    d->variants[v].target == KB_DEVICE ? "device" : "host",
                    d->variants[v].flags & KB_VARIANT_BASELINE ? " (baseline)" : "",
                    d->variants[v].description ? d->variants[v].description : "");
        fprintf(out, "  parameters:\n");
        if (d->n_params == 0)
            fprintf(out, "    (none)\n");
        for (int p = 0; p < d->n_params; p++) {
            const kb_param *pr = &d->params[p];
            fprintf(out, "    %-16s %-6s default %-16s %s", pr->name, type_name(pr->type),
                    pr->default_value ? pr->default_value : "-", pr->help ? pr->help : "");
            if (pr->choices && pr->type == KB_PARAM_STRING)
                fprintf(out, " (one of %s)", pr->choices);
            else if (pr->type == KB_PARAM_DIMS && pr->choices)
                fprintf(out, " (rank %s)", pr->choices);
            else if (pr->type == KB_PARAM_DIMS) /* a 1.0 plugin reads 4 at the most */
                fprintf(out, " (rank 1-%d)",
                        KB_ABI_MINOR_OF(d->abi_version) >= 1 ? KB_MAX_RANK : KB_MAX_DIMS);
            else if (pr->type == KB_PARAM_INTS && pr->choices)
                fprintf(out, " (count %s)", pr->choices);
            else if (pr->type == KB_PARAM_INTS)
                fprintf(out, " (count 0-%d)", KB_MAX_INTS);
            role = print_role(out, &set.items[i], pr->name);
            quiet |= role != KBI_ROLE_PROBLEM;
            fputc('\n', out);
        }
        if (quiet)
            fprintf(out, "    ([knob]: tunes how a variant runs, [knob: a, b]: how those variants "
                         "run, set for no other; [implicit]: its default goes without saying; a "
                         "case id names either only where set away from its default)\n");
        list_metrics(out, d);
        if (KBI_DESC_HAS(d, size_param) && d->size_param)
            fprintf(out, "  size axis: %s\n", d->size_param);
        fputc('\n', out);
    }
    kbi_plugins_free(&set);
    for (size_t i = 0; i < n_dirs; i++)
        free(dirs[i]);
    if (fflush(out) != 0) {
        fprintf(stderr, "kbench list: cannot write the list: %s\n", strerror(errno));
        return KBI_EXIT_USAGE;
    }
    return KBI_EXIT_OK;
}

/* --shard I/N into the run's arguments. */
static int parse_shard(const char *value, void *target)
{
    kbi_run_args *a = target;
    return kbi_parse_shard(value, &a->shard_index, &a->shard_count);
}

static int cmd_run(int argc, char **argv)
{
    static char plugins_dir[KBI_PLUGIN_DIRS_MAX];
    kbi_run_args a = {.device = -1, .argc = argc, .argv = argv};
    const kbi_option options[] = {
        {.name = "out",
         .short_name = 'o',
         .kind = KBI_OPT_STRING,
         .target = &a.out_dir,
         .arg = "DIR",
         .help = "where to write results.jsonl (default results/PROFILE-TIME);\n"
                 "an existing results.jsonl is never overwritten"},
        {.name = "filter",
         .short_name = 'f',
         .kind = KBI_OPT_STRING,
         .target = &a.filter,
         .arg = "GLOB",
         .help = "run only cases whose id matches GLOB, e.g. 'sgemm/cublas/*'\n"
                 "(or whose full id does: plugin/variant/ and every parameter,\n"
                 "knobs at their defaults too, as ids of results before version 4)"},
        {.name = "device",
         .short_name = 'd',
         .kind = KBI_OPT_INT,
         .target = &a.device,
         .min = 0,
         .max = 1024,
         .expected = "a device ordinal, an integer >= 0",
         .arg = "N",
         .help = "CUDA device ordinal (overrides [run] device)"},
        {.name = "devices",
         .kind = KBI_OPT_STRING,
         .target = &a.devices,
         .arg = "all|I,J,...",
         .help = "run on several GPUs of this node at once, one worker per\n"
                 "device, cases dealt to whichever is idle: OUT/results.jsonl\n"
                 "holds every case (each names its device), OUT/gpuN/results.jsonl\n"
                 "each device's own; not with --device or --sanitize, nor with\n"
                 "[run] rounds > 1 (each case is dealt out once)"},
        {.name = "shard",
         .short_name = 's',
         .kind = KBI_OPT_CUSTOM,
         .target = &a,
         .parse = parse_shard,
         .expected = "I/N with 1 <= I <= N",
         .arg = "I/N",
         .help = "run the I-th of N deterministic slices of the cases (1 <= I <= N)"},
        PLUGINS_OPTION(plugins_dir),
        {.name = "sanitize",
         .kind = KBI_OPT_OPTIONAL,
         .target = &a.sanitize,
         .implicit = "memcheck",
         .arg = "TOOL",
         .help = "run each device case under compute-sanitizer (memcheck by\n"
                 "default; racecheck, initcheck, synccheck); its findings make\n"
                 "the case an error; logs in OUT/sanitize/"},
        {.name = "list",
         .kind = KBI_OPT_FLAG,
         .target = &a.list,
         .help = "print the id of each case it would run (after --filter and\n"
                 "--shard), one a line on stdout, and run nothing"},
        /* kbench's own use: `kbench profile` runs `kbench run` with these under ncu
         * (and compute-sanitizer sees the plugin's kernels in this process). */
        {.name = "in-process",
         .kind = KBI_OPT_FLAG,
         .target = &a.in_process,
         .hidden = 1,
         .help = "run the cases in this process, with no worker"},
        {.name = "profile-one-run",
         .kind = KBI_OPT_FLAG,
         .target = &a.profile_run,
         .hidden = 1,
         .help = "open the profiler (cudaProfilerStart/Stop) around one run of\n"
                 "each device case, after its first verify"},
    };
    const kbi_verb_spec spec = {.verb = "run",
                                .synopsis = "PROFILE.ini",
                                .help = help_run,
                                KBI_SPEC_OPTIONS(options),
                                .min_operands = 1,
                                .max_operands = 1,
                                .operands = "PROFILE.ini",
                                .summary = "run a profile, write results.jsonl",
                                .notes = notes_run};
    int first, parsed;
    char err[KBI_ERR_SIZE];
    plugins_dir[0] = '\0';
    if ((parsed = kbi_options_parse(&spec, argc, argv, &first)) != KBI_OPTS_GO_ON)
        return parsed;
    /* Before any plugin code runs: stdout carries the results path alone, for
     * `kbench report "$(kbench run p.ini)"`. */
    if (kbi_stdout_guard(err) != KBI_OK) {
        fprintf(stderr, "kbench run: %s\n", err);
        return KBI_EXIT_USAGE;
    }
    if (plugins_dir[0])
        a.plugins_dir = plugins_dir;
    if (a.devices && a.device >= 0) {
        fprintf(stderr, "kbench run: --device and --devices name the devices twice; give one\n");
        return KBI_EXIT_USAGE;
    }
    a.profile_path = argv[first];
    return kbi_run(&a);
}
/* Every verb, in the order `kbench --help` lists them. */
static const struct verb {
    const char *name;
    int (*cmd)(int argc, char **argv);
} verbs[] = {
    {"list", cmd_list},
    {"run", cmd_run},
    {"report", kbi_cmd_report},
    {"compare", kbi_cmd_compare},
    {"history", kbi_cmd_history},
    {"export", kbi_cmd_export},
    {"baseline", kbi_cmd_baseline},
    {"profile", kbi_cmd_profile},
    {"manifest", kbi_cmd_manifest},
};

/* `kbench --help` on f: each verb's usage from its own table. */
static void print_usage(FILE *f)
{
    kbi_buf b = {0};
    kbi_options_collect(&b);
    for (size_t i = 0; i < sizeof verbs / sizeof *verbs; i++) {
        char *argv[] = {(char *)verbs[i].name, NULL};
        verbs[i].cmd(1, argv);
    }
    kbi_options_collect(NULL);
    fprintf(f, "%s%s%s", usage_head, b.data, usage_tail);
    kbi_buf_free(&b);
}

int main(int argc, char **argv)
{
    const char *verb = argc > 1 ? argv[1] : NULL;
    if (!verb) {
        print_usage(stderr);
        return KBI_EXIT_USAGE;
    }
    if (strcmp(verb, "--help") == 0 || strcmp(verb, "-h") == 0 || strcmp(verb, "help") == 0) {
        print_usage(stdout);
        return KBI_EXIT_OK;
    }
    if (strcmp(verb, "--version") == 0) {
        printf("kbench %s (plugin ABI %d.%d)\n", KBENCH_VERSION, KB_ABI_MAJOR, KB_ABI_MINOR);
        return KBI_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof verbs / sizeof *verbs; i++)
        if (strcmp(verb, verbs[i].name) == 0)
            return verbs[i].cmd(argc - 1, argv + 1);
    fprintf(stderr, "kbench: unknown verb '%s'\n", verb);
    print_usage(stderr);
    return KBI_EXIT_USAGE;
}
