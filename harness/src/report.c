/* `kbench report`: loads the inputs (resultset.c), builds the model once
 * (report_model.c), then writes the charts (report_charts.c), report.md
 * (report_md.c), results.csv (report_csv.c) and report.html (report_html.c,
 * from report.md's text) from it. */
#define _XOPEN_SOURCE 700
#include "report.h"

#include <errno.h>
#include <stdint.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "options.h"
#include "report_charts.h"
#include "report_html.h"
#include "report_md.h"
#include "report_model.h"
#include "resultset.h"

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

void kbi_report_default_dir(const char *input, char *out, size_t n)
{
    char buf[PATH_MAX], name[PATH_MAX] = "";
    struct stat st;
    size_t len;
    snprintf(buf, sizeof buf, "%s", input);
    /* Trailing slashes would make the base name empty. */
    len = strlen(buf);
    while (len > 1 && buf[len - 1] == '/')
        buf[--len] = '\0';
    if (stat(buf, &st) == 0 && S_ISDIR(st.st_mode)) {
        char rp[PATH_MAX];
        snprintf(name, sizeof name, "%s", base_name(realpath(buf, rp) ? rp : buf));
    } else if (kbi_is_results_name(base_name(buf))) {
        char rp[PATH_MAX], *slash;
        if (!realpath(buf, rp))
            snprintf(rp, sizeof rp, "%s", buf);
        slash = strrchr(rp, '/');
        if (slash) {
            *slash = '\0';
            /* results/shard-3/results.jsonl: the sweep is named by results/. */
            if (strncmp(base_name(rp), "shard-", 6) == 0 && (slash = strrchr(rp, '/')) != NULL)
                *slash = '\0';
            snprintf(name, sizeof name, "%s", base_name(rp));
        }
    } else {
        char *dot;
        snprintf(name, sizeof name, "%s", base_name(buf));
        dot = strrchr(name, '.');
        if (dot && dot != name)
            *dot = '\0';
    }
    if (!name[0] || strcmp(name, ".") == 0 || strcmp(name, "..") == 0 || strcmp(name, "/") == 0)
        snprintf(name, sizeof name, "report");
    snprintf(out, n, "reports/%s", name);
}

static int open_out(const char *dir, const char *name, FILE **f, char *path, size_t n, char *err)
{
    if ((size_t)snprintf(path, n, "%s/%s", dir, name) >= n) {
        kbi_errf(err, "%s/%s: path too long", dir, name);
        return KBI_ERR_IO;
    }
    *f = fopen(path, "w");
    if (!*f) {
        kbi_errf(err, "%s: cannot create: %s", path, strerror(errno));
        return KBI_ERR_IO;
    }
    return KBI_OK;
}

static int close_out(FILE *f, const char *path, int rc, char *err)
{
    if (fclose(f) != 0 && rc == KBI_OK)
        rc = KBI_ERR_IO;
    if (rc == KBI_ERR_IO)
        kbi_errf(err, "%s: cannot write: %s", path, strerror(errno ? errno : EIO));
    return rc;
}

/* The text of a `kbench compare --out` file into *text (caller frees).
 * Returns KBI_OK, or KBI_ERR_INPUT with err set. */
static int read_comparison(const char *path, char **text, char *err)
{
    static const char first[] = "# kbench compare\n";
    if ((*text = kbi_read_text(path)) == NULL) {
        kbi_errf(err, "%s: cannot read: %s", path, strerror(errno));
        return KBI_ERR_INPUT;
    }
    if (strncmp(*text, first, sizeof first - 1) != 0) {
        kbi_errf(err,
                 "%s:1: not what `kbench compare --out` writes: expected its first line "
                 "'# kbench compare'",
                 path);
        free(*text);
        *text = NULL;
        return KBI_ERR_INPUT;
    }
    return KBI_OK;
}

/* report.md's text into *md (caller frees): the report, then the
 * comparison when there is one. */
static void compose_markdown(const kbi_rep_model *m, const char *title, const kbi_chart_ctx *ctx,
                             const kbi_report_options *opt, const char *comparison, char **md)
{
    size_t len;
    FILE *f = open_memstream(md, &len);
    if (!f) {
        fputs("kbench: out of memory\n", stderr);
        abort();
    }
    kbi_report_write_markdown(f, m, title, ctx, !opt->no_charts);
    if (comparison)
        kbi_report_write_comparison(f, opt->compare, comparison);
    fclose(f);
}

int kbi_report_write(const kbi_result_set *set, const char *outdir, const kbi_report_options *opt,
                     char *err)
{
    static const char *const files[] = {"report.md", "results.csv", "report.html"};
    kbi_report_options defaults = {0};
    kbi_rep_model m;
    kbi_chart_ctx ctx = {0};
    int have_ctx = 0, rc;
    char path[PATH_MAX], charts[PATH_MAX], name[PATH_MAX], *comparison = NULL, *md = NULL;
    const char *title;
    FILE *f = NULL;
    if (!opt)
        opt = &defaults;
    if (set->n_cases == 0) {
        kbi_errf(err, "no case in the results, expected at least one case record");
        return KBI_ERR_INPUT;
    }
    if (opt->compare && (rc = read_comparison(opt->compare, &comparison, err)) != KBI_OK)
        return rc;
    rc = kbi_mkdirs(outdir, err);
    if (rc != KBI_OK) {
        free(comparison);
        return rc;
    }
    {
        /* The folder's name, trailing slashes ignored. */
        size_t len;
        snprintf(name, sizeof name, "%s", outdir);
        len = strlen(name);
        while (len > 1 && name[len - 1] == '/')
            name[--len] = '\0';
        title = opt->title && *opt->title ? opt->title : base_name(name);
        if (!*title || strcmp(title, ".") == 0)
            title = "report";
    }
    kbi_rep_model_build(&m, set);
    snprintf(charts, sizeof charts, "%s/charts", outdir);
    if (!opt->no_charts) {
        rc = kbi_chart_init(&ctx, charts, opt->gnuplot, opt->gnuplot_timeout, err);
        if (rc != KBI_OK)
            goto fail;
        have_ctx = 1;
        rc = kbi_report_draw_charts(&m, &ctx, err);
        if (rc != KBI_OK)
            goto fail;
    }
    compose_markdown(&m, title, have_ctx ? &ctx : NULL, opt, comparison, &md);
    for (int which = 0; which < 3; which++) {
        /* Each file opened, written and closed, its errors named. */
        rc = open_out(outdir, files[which], &f, path, sizeof path, err);
        if (rc != KBI_OK)
            goto fail;
        errno = 0;
        if (which == 0)
            rc = fputs(md, f) < 0 ? KBI_ERR_IO : KBI_OK;
        else if (which == 1)
            rc = kbi_report_write_csv(set, f);
        else
            rc = kbi_report_write_html(f, md, title, have_ctx ? charts : NULL);
        rc = close_out(f, path, rc, err);
        if (rc != KBI_OK)
            goto fail;
    }
fail:
    if (have_ctx)
        kbi_chart_free(&ctx);
    kbi_rep_model_free(&m);
    kbi_free_all(2, comparison, md);
    return rc;
}

static const char report_help[] =
    "Writes report.md, results.csv, report.html and gnuplot charts (PNG, SVG, with\n"
    "their .gp scripts and .dat data in charts/) for one or more results files.\n"
    "report.html is report.md as one self-contained page (charts inline, tables\n"
    "sorted and filtered in the browser, nothing fetched).  Each RESULTS is a\n"
    "results file or a folder holding results*.jsonl files (searched three levels\n"
    "deep); several are merged (shards of one sweep, runs on several GPUs).\n";

static const char report_notes[] =
    "Without gnuplot the report is still written and says why charts are missing.\n"
    "Exit status: 0 written, 2 bad usage or unreadable/invalid results.\n";

int kbi_cmd_report(int argc, char **argv)
{
    kbi_report_options opt = {0};
    kbi_result_set set = {0};
    const char *out = NULL;
    const kbi_option options[] = {
        {.name = "out",
         .short_name = 'o',
         .kind = KBI_OPT_STRING,
         .target = &out,
         .arg = "DIR",
         .help = "where to write (default reports/<name>, name from the\n"
                 "first RESULTS: its folder, or the file's stem)"},
        {.name = "title",
         .short_name = 't',
         .kind = KBI_OPT_STRING,
         .target = &opt.title,
         .arg = "TEXT",
         .help = "heading of the report (default: the folder's name)"},
        {.name = "no-charts",
         .kind = KBI_OPT_FLAG,
         .target = &opt.no_charts,
         .help = "write no charts"},
        {.name = "compare",
         .kind = KBI_OPT_STRING,
         .target = &opt.compare,
         .arg = "FILE",
         .help = "a `kbench compare --out` file: its verdicts go into\n"
                 "the report (and report.html's verdict filter)"},
        {.name = "gnuplot",
         .kind = KBI_OPT_STRING,
         .target = &opt.gnuplot,
         .arg = "PATH",
         .help = "gnuplot to run (default $KBENCH_GNUPLOT, else PATH)"},
    };
    const kbi_verb_spec spec = {.verb = "report",
                                .synopsis = "RESULTS...",
                                .help = report_help,
                                KBI_SPEC_OPTIONS(options),
                                .min_operands = 1,
                                .max_operands = SIZE_MAX,
                                .operands = "one or more results files or folders",
                                .summary = "report.md + report.html + results.csv + charts",
                                .notes = report_notes};
    char outdir[PATH_MAX], err[KBI_ERR_SIZE] = "";
    int rc, first, parsed, code = KBI_EXIT_USAGE;
    if ((parsed = kbi_options_parse(&spec, argc, argv, &first)) != KBI_OPTS_GO_ON)
        return parsed;
    rc = kbi_results_load_inputs(&set, (const char *const *)&argv[first], (size_t)(argc - first),
                                 err);
    if (rc != KBI_OK) {
        fprintf(stderr, "kbench report: %s\n", err);
        goto done;
    }
    if (set.n_cases == 0) {
        fprintf(stderr, "kbench report: %s: no case records, expected the results of a run\n",
                argv[first]);
        goto done;
    }
    if (out)
        snprintf(outdir, sizeof outdir, "%s", out);
    else
        kbi_report_default_dir(argv[first], outdir, sizeof outdir);
    for (size_t i = 0; i < set.n_warnings; i++)
        fprintf(stderr, "kbench report: warning: %s\n", set.warnings[i]);
    rc = kbi_report_write(&set, outdir, &opt, err);
    if (rc != KBI_OK) {
        fprintf(stderr, "kbench report: %s\n", err);
        goto done;
    }
    printf("kbench report: wrote %s/report.md, %s/report.html and %s/results.csv (%zu cases)\n",
           outdir, outdir, outdir, set.n_cases);
    code = KBI_EXIT_OK;
done:
    kbi_results_free(&set);
    return code;
}
