/* Fixture: every ABI 1.1 entry.  prepare makes a per-point value shared by
 * the variants' init; reset runs before each sample; counts caps the batch
 * (max_batch); verify fails when more runs happened since the last reset
 * than max_batch allows; declared metrics are reported through the case's
 * handle.  With $KBENCH_FIXTURE_LOG set, prepare, release and init append a
 * line each ("prepare ID PID") so tests can count them per worker. */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fixture_log.h"
#include "kbench/plugin.h"

static const kb_variant variants[] = {
    {"a", "the first variant", KB_HOST, KB_VARIANT_BASELINE},
    {"b", "the second variant", KB_HOST, 0},
};

static const kb_param params[] = {
    {"n", KB_PARAM_INT, "10", "the point's size", NULL},
    {"prepare_sleep", KB_PARAM_FLOAT, "0", "seconds prepare sleeps", NULL},
    {"prepare_fail", KB_PARAM_INT, "0", "1: prepare fails", NULL},
    {"max_batch", KB_PARAM_INT, "0", "most runs per sample (0: any)", NULL},
    {"drift", KB_PARAM_FLOAT, "0.1", "the value reported as the drift metric", NULL},
};

static const kb_metric_def metrics[] = {
    {"resets", "1", KB_BETTER_NONE, 0, 0, 0, "resets seen by the case"},
    {"drift", "1", KB_BETTER_LOWER, KB_BOUND_HIGH, 0, 1.0, "a drift that must stay under 1"},
    {"prepared_value", "1", KB_BETTER_NONE, 0, 0, 0, "the value prepare made (1.5 n)"},
};

typedef struct shared {
    double value;
    char id[256];
} shared;

typedef struct state {
    const kb_host *host;
    kb_case_handle *handle;
    const shared *sh;
    int64_t max_batch, runs_since_reset, resets;
    double drift, acc;
} state;

static int prepare(const kb_point *pt, void **out, char *msg)
{
    shared *sh;
    int64_t n, fail;
    double sleep_s;
    *out = NULL;
    if (pt->host->param_int(pt->params, "n", &n) ||
        pt->host->param_int(pt->params, "prepare_fail", &fail) ||
        pt->host->param_float(pt->params, "prepare_sleep", &sleep_s)) {
        kb_msgf(msg, "parameters not delivered to prepare");
        return KB_BAD_PARAM;
    }
    log_line("prepare", pt->id);
    if (sleep_s > 0) {
        struct timespec ts = {(time_t)sleep_s, (long)(fmod(sleep_s, 1.0) * 1e9)};
        nanosleep(&ts, NULL);
    }
    if (fail) {
        kb_msgf(msg, "planned prepare failure");
        return KB_ERROR;
    }
    if (!(sh = calloc(1, sizeof *sh)))
        return KB_NOMEM;
    sh->value = 1.5 * (double)n;
    snprintf(sh->id, sizeof sh->id, "%s", pt->id);
    *out = sh;
    return KB_OK;
}

static int release(void *p, char *msg)
{
    shared *sh = p;
    log_line("release", sh->id);
    free(sh);
    return KB_OK;
}

static int init(const kb_case *c, void **out, char *msg)
{
    state *s;
    if (c->struct_size < offsetof(kb_case, handle) + sizeof c->handle || !c->shared) {
        kb_msgf(msg, "init got no shared state from prepare");
        return KB_ERROR;
    }
    if (!(s = calloc(1, sizeof *s)))
        return KB_NOMEM;
    s->host = c->host;
    s->handle = c->handle;
    s->sh = c->shared;
    if (c->host->param_int(c->params, "max_batch", &s->max_batch) ||
        c->host->param_float(c->params, "drift", &s->drift)) {
        free(s);
        kb_msgf(msg, "parameters not delivered");
        return KB_BAD_PARAM;
    }
    log_line("init", c->id);
    *out = s;
    return KB_OK;
}

static int counts(void *p, kb_counts *k, char *msg)
{
    state *s = p;
    k->items = 1;
    k->item_unit = "steps";
    k->max_batch = (int)s->max_batch;
    return KB_OK;
}

static int reset(void *p, void *stream, char *msg)
{
    state *s = p;
    s->runs_since_reset = 0;
    s->resets++;
    return KB_OK;
}

static int run(void *p, void *stream, char *msg)
{
    state *s = p;
    s->runs_since_reset++;
    for (int i = 0; i < 1000; i++)
        s->acc += s->sh->value * 1e-9;
    return KB_OK;
}

static int verify(void *p, kb_verdict *v, char *msg)
{
    state *s = p;
    v->metric = "runs_since_reset";
    v->error = (double)s->runs_since_reset;
    /* No limit without a max_batch: no tolerance (NaN) for kbench to judge the error by. */
    v->tolerance = s->max_batch ? (double)s->max_batch : NAN;
    v->passed = s->runs_since_reset >= 1 && (s->max_batch == 0 || s->runs_since_reset <= s->max_batch);
    s->host->report(s->handle, "resets", (double)s->resets, 0);
    s->host->report(s->handle, "drift", s->drift, 0.01);
    s->host->report(s->handle, "prepared_value", s->sh->value, 0);
    if (s->host->report(s->handle, "undeclared", 1.0, 0) != KB_BAD_PARAM) {
        kb_msgf(msg, "an undeclared metric was accepted");
        return KB_ERROR;
    }
    return KB_OK;
}

static int teardown(void *p, char *msg)
{
    free(p);
    return KB_OK;
}

static const kb_plugin plugin = {
    .abi_version = KB_ABI_CURRENT,
    .struct_size = sizeof(kb_plugin),
    .name = "stateful",
    .description = "every ABI 1.1 entry point",
    .variants = variants,
    .n_variants = 2,
    .params = params,
    .n_params = sizeof params / sizeof params[0],
    .init = init,
    .counts = counts,
    .run = run,
    .verify = verify,
    .teardown = teardown,
    .prepare = prepare,
    .release = release,
    .reset = reset,
    .metrics = metrics,
    .n_metrics = sizeof metrics / sizeof metrics[0],
    .size_param = "n",
};

KB_EXPORT const kb_plugin *kb_plugin_entry(void) { return &plugin; }
