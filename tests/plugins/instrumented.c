/* Fixture: ABI 1.4's instrument entry.  A host plugin whose verify reports `checked` and
 * whose instrument sleeps `sleep_ms`, then reports `phase_us` (a timing) and
 * `verifies_before` (the verify calls that came before it), then returns what `instrument`
 * says: ok, error or skip.  `fail_verify` = 1 makes verify fail.  run() sleeps 0.2 ms, so a
 * sample that held the instrument's sleep would show it.  With $KBENCH_FIXTURE_LOG set,
 * instrument appends "instrument ID PID" so tests can count its calls.
 *
 * instrumented13.c builds this same code as an ABI 1.3 plugin (FIXTURE_ABI_1_3): its
 * descriptor ends before `instrument`, which the harness must then never call. */
#define _POSIX_C_SOURCE 200809L
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fixture_log.h"
#include "kbench/plugin.h"

#ifndef FIXTURE_NAME
#define FIXTURE_NAME "instrumented"
#endif

static const kb_variant variants[] = {
    {"only", "verifies, then is instrumented", KB_HOST, 0},
};

static const kb_param params[] = {
    {"fail_verify", KB_PARAM_INT, "0", "1: verify fails", NULL},
    {"instrument", KB_PARAM_STRING, "ok", "what instrument returns", "ok|error|skip"},
    {"sleep_ms", KB_PARAM_INT, "30", "milliseconds instrument sleeps", NULL},
};

static const kb_metric_def metrics[] = {
    {"checked", "1", KB_BETTER_NONE, 0, 0, 0, "1 when verify ran"},
    {"phase_us", "us", KB_BETTER_LOWER, KB_METRIC_TIMING, 0, 0, "a sub-phase's time, 42 us"},
    {"verifies_before", "1", KB_BETTER_NONE, 0, 0, 0, "verify calls before instrument"},
};

typedef struct state {
    const kb_host *host;
    kb_case_handle *handle;
    int64_t fail_verify, sleep_ms;
    const char *instrument;
    char id[256];
    int ran, verifies;
} state;

static int init(const kb_case *c, void **out, char *msg)
{
    state *s = calloc(1, sizeof *s);
    if (!s)
        return KB_NOMEM;
    if (c->host->param_int(c->params, "fail_verify", &s->fail_verify) ||
        c->host->param_int(c->params, "sleep_ms", &s->sleep_ms) ||
        c->host->param_string(c->params, "instrument", &s->instrument)) {
        kb_msgf(msg, "parameters not delivered");
        free(s);
        return KB_BAD_PARAM;
    }
    s->host = c->host;
    s->handle = c->handle;
    snprintf(s->id, sizeof s->id, "%s", c->id);
    *out = s;
    return KB_OK;
}

static int counts(void *p, kb_counts *k, char *msg)
{
    (void)p;
    (void)msg;
    k->items = 1;
    k->item_unit = "runs";
    return KB_OK;
}

static int run(void *p, void *stream, char *msg)
{
    state *s = p;
    struct timespec ts = {0, 200000};
    (void)stream;
    (void)msg;
    nanosleep(&ts, NULL);
    s->ran = 1;
    return KB_OK;
}

static int verify(void *p, kb_verdict *v, char *msg)
{
    state *s = p;
    (void)msg;
    s->verifies++;
    v->metric = "planned_failures";
    v->error = (double)s->fail_verify;
    v->tolerance = 0;
    v->passed = s->ran && !s->fail_verify;
    return s->host->report(s->handle, "checked", 1.0, 0);
}

static int instrument(void *p, void *stream, char *msg)
{
    state *s = p;
    struct timespec ts = {(time_t)(s->sleep_ms / 1000), (long)(s->sleep_ms % 1000) * 1000000L};
    (void)stream;
    log_line("instrument", s->id);
    nanosleep(&ts, NULL);
    if (s->host->report(s->handle, "phase_us", 42.0, 0.5) != KB_OK ||
        s->host->report(s->handle, "verifies_before", (double)s->verifies, 0) != KB_OK) {
        kb_msgf(msg, "the host refused a declared metric");
        return KB_ERROR;
    }
    if (strcmp(s->instrument, "error") == 0) {
        kb_msgf(msg, "planned instrument failure");
        return KB_ERROR;
    }
    if (strcmp(s->instrument, "skip") == 0) {
        kb_msgf(msg, "planned instrument skip");
        return KB_SKIP;
    }
    return KB_OK;
}

static int teardown(void *p, char *msg)
{
    (void)msg;
    free(p);
    return KB_OK;
}

static const kb_plugin plugin = {
#ifdef FIXTURE_ABI_1_3
    .abi_version = KB_ABI_VERSION(1, 3),
    .struct_size = offsetof(kb_plugin, instrument),
#else
    .abi_version = KB_ABI_CURRENT,
    .struct_size = sizeof(kb_plugin),
#endif
    .name = FIXTURE_NAME,
    .description = "fixture: the instrument entry of ABI 1.4",
    .variants = variants,
    .n_variants = 1,
    .params = params,
    .n_params = sizeof params / sizeof params[0],
    .init = init,
    .counts = counts,
    .run = run,
    .verify = verify,
    .teardown = teardown,
    .metrics = metrics,
    .n_metrics = sizeof metrics / sizeof metrics[0],
    .size_param = "sleep_ms",
    /* Beyond a 1.3 descriptor's struct_size: there the harness must not read it. */
    .instrument = instrument,
};

KB_EXPORT const kb_plugin *kb_plugin_entry(void)
{
    return &plugin;
}
