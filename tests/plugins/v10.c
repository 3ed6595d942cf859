/* Fixture: a plugin built against ABI 1.0.  Its descriptor ends where 1.0's
 * did (struct_size), and what lies beyond it in memory is garbage the
 * harness must never read: a prepare and a reset that crash if called, and
 * a metrics table that does not exist.  It must load and run unchanged. */
#include <stddef.h>
#include <stdlib.h>

#include "kbench/plugin.h"

static const kb_variant variants[] = {{"sum", "adds n numbers", KB_HOST, 0}};
static const kb_param params[] = {
    {"n", KB_PARAM_INT, "100", "how many numbers", NULL},
    {"shape", KB_PARAM_DIMS, "2x3", "a shape (read through the 1.0 getter)", NULL},
};

typedef struct state {
    int64_t n;
    double sum;
} state;

static int init(const kb_case *c, void **out, char *msg)
{
    state *s = calloc(1, sizeof *s);
    int64_t dims[KB_MAX_DIMS];
    int nd;
    if (!s)
        return KB_NOMEM;
    if (c->host->param_int(c->params, "n", &s->n) ||
        c->host->param_dims(c->params, "shape", dims, &nd) || nd != 2) {
        kb_msgf(msg, "parameters not delivered");
        free(s);
        return KB_BAD_PARAM;
    }
    s->sum = -1;
    c->host->metric("v10_metric", 7.0, "things");
    *out = s;
    return KB_OK;
}

static int counts(void *p, kb_counts *k, char *msg)
{
    k->items = (double)((state *)p)->n;
    k->item_unit = "numbers";
    return KB_OK;
}

static int run(void *p, void *stream, char *msg)
{
    state *s = p;
    s->sum = 0;
    for (int64_t i = 1; i <= s->n; i++)
        s->sum += (double)i;
    return KB_OK;
}

static int verify(void *p, kb_verdict *v, char *msg)
{
    state *s = p;
    double want = 0.5 * (double)s->n * (double)(s->n + 1);
    v->error = s->sum - want;
    v->passed = v->error == 0;
    v->metric = "difference";
    return KB_OK;
}

static int teardown(void *p, char *msg)
{
    free(p);
    return KB_OK;
}

static int crash_prepare(const kb_point *pt, void **shared, char *msg)
{
    abort();
}

static int crash_reset(void *st, void *stream, char *msg)
{
    abort();
}

static const kb_plugin plugin = {
    .abi_version = KB_ABI_VERSION(1, 0),
    .struct_size = offsetof(kb_plugin, prepare),
    .name = "v10",
    .description = "a plugin built against ABI 1.0",
    .variants = variants,
    .n_variants = 1,
    .params = params,
    .n_params = 2,
    .init = init,
    .counts = counts,
    .run = run,
    .verify = verify,
    .teardown = teardown,
    /* Past struct_size: what a 1.0 build would have left as other data. */
    .prepare = crash_prepare,
    .reset = crash_reset,
    .metrics = (const kb_metric_def *)1,
    .n_metrics = 99,
    .size_param = "no such parameter",
};

KB_EXPORT const kb_plugin *kb_plugin_entry(void) { return &plugin; }
