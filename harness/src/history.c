/* `kbench history`: the runs of a result set in order, each case followed from run to run by
 * compare's matching and each step judged by compare's rule (history.h says how).  This file
 * builds the history and holds the verb; history_md.c writes it, history_chart.c draws it. */
#define _XOPEN_SOURCE 700
#include "history.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "options.h"

/* ---- runs ---- */

/* The sweep (kbi_results_sweep_of) of case c's run. */
static size_t sweep_of_case(const kbi_result_set *set, const kbi_case_result *c)
{
    return kbi_results_sweep_of(set, kbi_results_env_index(set, c->env));
}

/* Fills run r's view with the env records and cases of sweep s (shallow copies). */
static void fill_view(const kbi_result_set *set, size_t s, kbi_history_run *r)
{
    kbi_result_set *v = &r->view;
    v->envs = kbi_xcalloc(set->n_envs + 1, sizeof *v->envs);
    v->cases = kbi_xcalloc(set->n_cases + 1, sizeof *v->cases);
    for (size_t e = 0; e < set->n_envs; e++)
        if (kbi_results_sweep_of(set, e) == s)
            v->envs[v->n_envs++] = set->envs[e];
    for (size_t i = 0; i < set->n_cases; i++)
        if (sweep_of_case(set, &set->cases[i]) == s)
            v->cases[v->n_cases++] = set->cases[i];
    r->env = &set->envs[s];
    r->revision = r->env->git_revision ? r->env->git_revision : "";
    r->time = kbi_jstr(r->env->json, "time", NULL);
    if (!r->time)
        r->time = "";
}

/* One run per sweep that holds a case, in the order of their env records.  Returns KBI_OK, or
 * KBI_ERR_INPUT for a case without an env record. */
static int group_runs(const kbi_result_set *set, kbi_history *h, char *err)
{
    unsigned char *has_cases = kbi_xcalloc(set->n_envs + 1, 1);
    for (size_t i = 0; i < set->n_cases; i++) {
        const kbi_case_result *c = &set->cases[i];
        if (!c->env) {
            kbi_errf(err,
                     "%s: case %.300s of run %.100s has no env record, expected the run's env "
                     "record before its cases (history orders runs by it)",
                     c->source, c->id, c->run_id);
            free(has_cases);
            return KBI_ERR_INPUT;
        }
        has_cases[sweep_of_case(set, c)] = 1;
    }
    h->runs = kbi_xcalloc(set->n_envs + 1, sizeof *h->runs);
    for (size_t e = 0; e < set->n_envs; e++)
        if (has_cases[e])
            fill_view(set, e, &h->runs[h->n_runs++]);
    free(has_cases);
    return KBI_OK;
}

/* The revisions of `git rev-list HEAD` in the current folder, newest first, into revs.
 * Returns KBI_OK, or KBI_ERR_INPUT with err set when git fails (not a checkout). */
static int git_revisions(kbi_strlist *revs, char *err)
{
    FILE *p = popen("git rev-list HEAD 2>/dev/null", "r");
    char line[128];
    int status;
    if (!p) {
        kbi_errf(err, "--order revision: cannot run git: %s", strerror(errno));
        return KBI_ERR_INPUT;
    }
    while (fgets(line, sizeof line, p))
        kbi_strlist_add(revs, kbi_trim(line));
    status = pclose(p);
    if (status != 0 || revs->n == 0) {
        kbi_errf(err, "--order revision: `git rev-list HEAD` failed in the current folder, "
                      "expected a git checkout holding the runs' revisions (or --order time)");
        return KBI_ERR_INPUT;
    }
    return KBI_OK;
}

/* The position of run r's revision in revs (newest first) counted from the oldest, into
 * *pos.  Returns KBI_OK, or KBI_ERR_INPUT when the run names none or git does not know it. */
static int revision_position(const kbi_history_run *r, const kbi_strlist *revs, long *pos,
                             char *err)
{
    size_t len = strspn(r->revision, "0123456789abcdef");
    /* A prefix this short could name several commits; kbench records 12 digits. */
    if (len < 7) {
        kbi_errf(err,
                 "%s: run %.100s records no git revision (\"%.60s\"), expected one for "
                 "--order revision (or --order time)",
                 r->env->source, r->env->run_id, r->revision);
        return KBI_ERR_INPUT;
    }
    for (size_t i = 0; i < revs->n; i++)
        if (strncmp(revs->s[i], r->revision, len) == 0) {
            *pos = (long)(revs->n - 1 - i);
            return KBI_OK;
        }
    kbi_errf(err,
             "%s: run %.100s was built from revision %.60s, which is not in the history of HEAD "
             "here, expected a revision of `git rev-list HEAD` (or --order time)",
             r->env->source, r->env->run_id, r->revision);
    return KBI_ERR_INPUT;
}

typedef struct run_key {
    long pos;         /* revision or input position; 0 for time order */
    const char *time; /* "" for input order */
    size_t index;     /* input position: the last tie-break, so the sort is stable */
} run_key;

static int cmp_key(const void *a, const void *b)
{
    const run_key *x = a, *y = b;
    int t;
    if (x->pos != y->pos)
        return x->pos < y->pos ? -1 : 1;
    if ((t = strcmp(x->time, y->time)) != 0)
        return t;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Puts h's runs (in input order) in `order`.  Returns KBI_OK or KBI_ERR_INPUT. */
static int order_runs(kbi_history *h, kbi_history_order order, char *err)
{
    run_key *keys = kbi_xcalloc(h->n_runs, sizeof *keys);
    kbi_history_run *sorted = kbi_xcalloc(h->n_runs, sizeof *sorted);
    kbi_strlist revs = {0};
    int rc = KBI_OK;
    if (order == KBI_HISTORY_BY_REVISION)
        rc = git_revisions(&revs, err);
    for (size_t i = 0; i < h->n_runs && rc == KBI_OK; i++) {
        keys[i].index = i;
        keys[i].time = order == KBI_HISTORY_BY_INPUT ? "" : h->runs[i].time;
        if (order == KBI_HISTORY_BY_REVISION)
            rc = revision_position(&h->runs[i], &revs, &keys[i].pos, err);
        else if (order == KBI_HISTORY_BY_INPUT)
            keys[i].pos = (long)i;
    }
    if (rc == KBI_OK) {
        qsort(keys, h->n_runs, sizeof *keys, cmp_key);
        for (size_t i = 0; i < h->n_runs; i++)
            sorted[i] = h->runs[keys[i].index];
        memcpy(h->runs, sorted, h->n_runs * sizeof *sorted);
    }
    kbi_strlist_free(&revs);
    free(keys);
    free(sorted);
    return rc;
}

/* Each run's label: its revision in short ("8ef6958", "aa8baf8-dirty"), or "run N" without
 * one; a label already taken gets " (2)", " (3)", ...  Warns of runs without a time, of
 * several profiles. */
static void label_runs(kbi_history *h)
{
    const char *profile0 = kbi_jstr(h->runs[0].env->json, "profile", NULL);
    for (size_t i = 0; i < h->n_runs; i++) {
        kbi_history_run *r = &h->runs[i];
        const char *profile = kbi_jstr(r->env->json, "profile", NULL);
        size_t len = strspn(r->revision, "0123456789abcdef"), same = 1;
        char base[32];
        if (len >= 7)
            snprintf(base, sizeof base, "%.7s%s", r->revision,
                     strstr(r->revision, "dirty") ? "-dirty" : "");
        else
            snprintf(base, sizeof base, "run %zu", i + 1);
        for (size_t j = 0; j < i; j++)
            same +=
                strncmp(h->runs[j].label, base, strlen(base)) == 0 &&
                (h->runs[j].label[strlen(base)] == '\0' || h->runs[j].label[strlen(base)] == ' ');
        if (same > 1)
            snprintf(r->label, sizeof r->label, "%s (%zu)", base, same);
        else
            snprintf(r->label, sizeof r->label, "%s", base);
        if (!r->time[0]) {
            char w[KBI_ERR_SIZE];
            snprintf(w, sizeof w, "%s: run %s records no time%s", r->env->source, r->env->run_id,
                     h->order == KBI_HISTORY_BY_TIME ? "; it is ordered first" : "");
            kbi_strlist_add(&h->warnings, w);
        }
        if (profile0 && profile && strcmp(profile0, profile) != 0) {
            char w[KBI_ERR_SIZE];
            snprintf(w, sizeof w, "runs of different profiles: %.300s (run %s) and %.300s (run %s)",
                     profile0, h->runs[0].label, profile, r->label);
            kbi_strlist_add(&h->warnings, w);
            profile0 = profile; /* say each change once */
        }
    }
}

/* ---- steps ---- */

/* The cases a step compares run k against: each track's latest record in the runs before k
 * (shallow copies into base, with the env records of those runs), its track in track[] and
 * its run in from[]. */
static void previous_records(const kbi_history *h, size_t k, kbi_result_set *base, size_t *track,
                             size_t *from)
{
    unsigned char *used = kbi_xcalloc(k + 1, 1);
    size_t n_envs = 0;
    memset(base, 0, sizeof *base);
    base->cases = kbi_xcalloc(h->n_tracks + 1, sizeof *base->cases);
    for (size_t t = 0; t < h->n_tracks; t++)
        for (size_t j = k; j-- > 0;)
            if (h->tracks[t].cells[j].c) {
                track[base->n_cases] = t;
                from[base->n_cases] = j;
                base->cases[base->n_cases++] = *h->tracks[t].cells[j].c;
                used[j] = 1;
                break;
            }
    for (size_t j = 0; j < k; j++)
        n_envs += used[j] ? h->runs[j].view.n_envs : 0;
    base->envs = kbi_xcalloc(n_envs + 1, sizeof *base->envs);
    for (size_t j = 0; j < k; j++)
        for (size_t e = 0; used[j] && e < h->runs[j].view.n_envs; e++)
            base->envs[base->n_envs++] = h->runs[j].view.envs[e];
    free(used);
}

static kbi_history_track *new_track(kbi_history *h, const kbi_case_result *c)
{
    kbi_history_track *t;
    h->tracks = kbi_xrealloc(h->tracks, (h->n_tracks + 1) * sizeof *h->tracks);
    t = &h->tracks[h->n_tracks++];
    t->plugin = c->plugin;
    t->id = c->id;
    t->cells = kbi_xcalloc(h->n_runs, sizeof *t->cells);
    return t;
}

/* Compare's warnings of the step into run r, but the one that says the revisions differ
 * (every step of a history does). */
static void keep_warnings(const kbi_comparison *cmp, kbi_history_run *r)
{
    for (size_t i = 0; i < cmp->n_warnings; i++)
        if (strncmp(cmp->warnings[i], "different revisions:", 20) != 0)
            kbi_strlist_add(&r->warnings, cmp->warnings[i]);
}

/* Judges the step into run k with compare's matching and rule; the first run (k = 0) only
 * starts the tracks. */
static int judge_step(kbi_history *h, size_t k, char *err)
{
    kbi_result_set base;
    kbi_comparison cmp;
    size_t *track = kbi_xcalloc(h->n_tracks + 1, sizeof *track);
    size_t *from = kbi_xcalloc(h->n_tracks + 1, sizeof *from);
    int rc;
    previous_records(h, k, &base, track, from);
    rc = kbi_compare_sets(&base, &h->runs[k].view, &h->opt, &cmp, err);
    if (rc != KBI_OK)
        goto done;
    for (size_t i = 0; i < cmp.n_rows; i++) {
        const kbi_compare_row *row = &cmp.rows[i];
        kbi_history_track *t;
        kbi_history_cell *cell;
        if (!row->res)
            continue; /* not in this run */
        if (row->base) {
            size_t b = (size_t)(row->base - base.cases);
            t = &h->tracks[track[b]];
            cell = &t->cells[k];
            cell->judged = 1;
            cell->from = from[b];
            cell->out = row->out;
        } else {
            t = new_track(h, row->res);
            cell = &t->cells[k];
        }
        cell->c = row->res;
        t->id = row->res->id;
    }
    if (k > 0) {
        memcpy(h->runs[k].count, cmp.count, sizeof cmp.count);
        h->runs[k].matched = cmp.matched;
        h->runs[k].unjudged = cmp.unjudged;
        h->runs[k].regressed = kbi_comparison_regressed(&cmp);
        keep_warnings(&cmp, &h->runs[k]);
    }
    if (k + 1 == h->n_runs)
        h->exit_code = kbi_comparison_exit_code(&cmp);
    kbi_comparison_free(&cmp);
done:
    free(base.cases);
    free(base.envs);
    free(track);
    free(from);
    return rc;
}

int kbi_history_build(const kbi_result_set *set, kbi_history_order order,
                      const kbi_compare_options *opt, kbi_history *h, char *err)
{
    int rc;
    memset(h, 0, sizeof *h);
    h->opt = *opt;
    h->order = order;
    rc = group_runs(set, h, err);
    if (rc == KBI_OK && h->n_runs < 2) {
        kbi_errf(err,
                 "%s: %zu run%s, expected the runs of at least two revisions (a run is what "
                 "one env record names)",
                 set->n_envs ? set->envs[0].source : "the results", h->n_runs,
                 h->n_runs == 1 ? "" : "s");
        rc = KBI_ERR_INPUT;
    }
    if (rc == KBI_OK)
        rc = order_runs(h, order, err);
    if (rc == KBI_OK)
        label_runs(h);
    for (size_t k = 0; rc == KBI_OK && k < h->n_runs; k++)
        rc = judge_step(h, k, err);
    return rc;
}

void kbi_history_free(kbi_history *h)
{
    for (size_t i = 0; i < h->n_runs; i++) {
        free(h->runs[i].view.envs);
        free(h->runs[i].view.cases);
        kbi_strlist_free(&h->runs[i].warnings);
    }
    free(h->runs);
    for (size_t t = 0; t < h->n_tracks; t++)
        free(h->tracks[t].cells);
    free(h->tracks);
    kbi_strlist_free(&h->warnings);
    memset(h, 0, sizeof *h);
}

/* ---- command line ---- */

static const char history_help[] =
    "Follows each case over the runs in RESULTS (files or folders, read as report\n"
    "reads them; a run is what one env record names, shards of a sweep are one run),\n"
    "in order, and judges every step between consecutive runs by compare's own rule\n"
    "(kbench compare --help): slower, faster, same or unsure.  A case missing from a\n"
    "run is judged, where it comes back, against the last run that measured it.\n"
    "Cases are matched as compare matches them, so results written before ids named\n"
    "only the problem follow on from those written after.  Writes OUT/history.md (a\n"
    "table per plugin: a row per case, a column per run with its median and the\n"
    "step's verdict), OUT/history.csv and OUT/charts/ (per case, its median and 95%\n"
    "interval against the runs, slower and faster steps marked); prints each slower\n"
    "or failed step on stdout.\n";

static const char history_notes[] =
    "--order time: by the env record's time (default).  revision: by the position of\n"
    "each run's git_revision in `git rev-list HEAD` run in the current folder, ties by\n"
    "time (every revision must be in that history).  input: as RESULTS name them.\n"
    "A step between runs on different GPU models leaves device-timed cases not\n"
    "comparable (another GPU is not a regression), unless --across-gpus.\n"
    "Exit status: 0 the newest step holds no regression, 1 it does (a case slower or\n"
    "failed, or a metric worse or out of bound, as compare calls them; with\n"
    "--fail-on-unsure also a case it could not judge), 2 bad usage or input (fewer\n"
    "than two runs, a case without an env record, a revision git does not know).\n";

static int parse_order(const char *value, void *target)
{
    kbi_history_order *o = target;
    if (strcmp(value, "time") == 0)
        *o = KBI_HISTORY_BY_TIME;
    else if (strcmp(value, "revision") == 0)
        *o = KBI_HISTORY_BY_REVISION;
    else if (strcmp(value, "input") == 0)
        *o = KBI_HISTORY_BY_INPUT;
    else
        return -1;
    return 0;
}

typedef struct history_args {
    const char *out, *gnuplot;
    int no_charts;
    kbi_history_order order;
} history_args;

/* Writes one file of the history into dir.  Returns KBI_OK or KBI_ERR_IO (said on stderr). */
static int write_one(const kbi_history *h, const char *dir, const char *name, int csv,
                     const char *charts)
{
    char path[PATH_MAX];
    FILE *f;
    int rc;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "kbench history: %s: cannot create: %s\n", path, strerror(errno));
        return KBI_ERR_IO;
    }
    rc = csv ? kbi_history_write_csv(h, f) : kbi_history_write_markdown(h, charts, f);
    if (fclose(f) != 0 || rc != KBI_OK) {
        fprintf(stderr, "kbench history: %s: cannot write: %s\n", path, strerror(errno));
        return KBI_ERR_IO;
    }
    return KBI_OK;
}

/* The charts, then history.md and history.csv, into a->out.  Returns KBI_OK or an error said
 * on stderr. */
static int write_outputs(const kbi_history *h, const history_args *a)
{
    char err[KBI_ERR_SIZE], charts[PATH_MAX];
    kbi_strlist warnings = {0};
    size_t drawn = 0;
    int rc = kbi_mkdirs(a->out, err);
    if (rc == KBI_OK && !a->no_charts) {
        snprintf(charts, sizeof charts, "%s/charts", a->out);
        rc = kbi_history_write_charts(h, charts, a->gnuplot, &warnings, &drawn, err);
    }
    if (rc != KBI_OK) {
        fprintf(stderr, "kbench history: %s\n", err);
        kbi_strlist_free(&warnings);
        return rc;
    }
    for (size_t i = 0; i < warnings.n; i++)
        fprintf(stderr, "kbench history: warning: %s\n", warnings.s[i]);
    kbi_strlist_free(&warnings);
    rc = write_one(h, a->out, "history.md", 0, a->no_charts ? NULL : "charts");
    if (rc == KBI_OK)
        rc = write_one(h, a->out, "history.csv", 1, NULL);
    if (rc == KBI_OK)
        printf("kbench history: wrote %s/history.md, %s/history.csv and %zu charts (%zu runs, "
               "%zu cases)\n",
               a->out, a->out, drawn, h->n_runs, h->n_tracks);
    return rc;
}

int kbi_cmd_history(int argc, char **argv)
{
    kbi_compare_options opt = {KBI_COMPARE_THRESHOLD, KBI_COMPARE_ALPHA, KBI_COMPARE_HOST_DRIFT, 0,
                               0};
    history_args a = {.out = "reports/history", .order = KBI_HISTORY_BY_TIME};
    kbi_result_set set = {0};
    kbi_history h = {0};
    const kbi_option own[] = {
        {.name = "out",
         .short_name = 'o',
         .kind = KBI_OPT_STRING,
         .target = &a.out,
         .arg = "DIR",
         .help = "where to write history.md, history.csv and charts/\n"
                 "(default reports/history)"},
        {.name = "order",
         .kind = KBI_OPT_CUSTOM,
         .target = &a.order,
         .parse = parse_order,
         .expected = "time, revision or input",
         .arg = "time|revision|input",
         .help = "the runs' order (default time; see below)"},
        {.name = "no-charts",
         .kind = KBI_OPT_FLAG,
         .target = &a.no_charts,
         .help = "draw no charts"},
        {.name = "gnuplot",
         .kind = KBI_OPT_STRING,
         .target = &a.gnuplot,
         .arg = "PATH",
         .help = "gnuplot to run (default $KBENCH_GNUPLOT, else PATH)"},
    };
    kbi_option options[sizeof own / sizeof *own + KBI_COMPARE_RULE_OPTIONS];
    const kbi_verb_spec spec = {
        .verb = "history",
        .synopsis = "RESULTS...",
        .help = history_help,
        KBI_SPEC_OPTIONS(options),
        .min_operands = 1,
        .max_operands = SIZE_MAX,
        .operands = "the results files or folders of two or more runs",
        .summary = "each case over runs of revisions; steps judged as compare does",
        .notes = history_notes};
    char err[KBI_ERR_SIZE] = "";
    int first, parsed, code = KBI_EXIT_USAGE;
    memcpy(options, own, sizeof own);
    kbi_compare_rule_options(&opt, options + sizeof own / sizeof *own);
    if ((parsed = kbi_options_parse(&spec, argc, argv, &first)) != KBI_OPTS_GO_ON)
        return parsed;
    if (kbi_results_load_inputs(&set, (const char *const *)&argv[first], (size_t)(argc - first),
                                err) != KBI_OK) {
        fprintf(stderr, "kbench history: %s\n", err);
        goto done;
    }
    for (size_t i = 0; i < set.n_warnings; i++)
        fprintf(stderr, "kbench history: warning: %s\n", set.warnings[i]);
    if (kbi_history_build(&set, a.order, &opt, &h, err) != KBI_OK) {
        fprintf(stderr, "kbench history: %s\n", err);
        goto done;
    }
    for (size_t i = 0; i < h.warnings.n; i++)
        fprintf(stderr, "kbench history: warning: %s\n", h.warnings.s[i]);
    if (write_outputs(&h, &a) != KBI_OK)
        goto done;
    kbi_history_write_summary(&h, stdout);
    code = h.exit_code;
    if (code == KBI_EXIT_USAGE)
        fprintf(stderr, "kbench history: a side of the newest step is a --sanitize run: its "
                        "times are not timings, so that step has no timing verdict\n");
done:
    kbi_history_free(&h);
    kbi_results_free(&set);
    return code;
}
