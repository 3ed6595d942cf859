/* Fixture: an ABI 1.1 host plugin with the 1.1 parameter types (dims up to
 * rank 8, integer lists), a size axis and a declared metric.  "copy" sums
 * the dims and the list entries into a number verify recomputes: the run is
 * trivial, the parameters are the point. */
#include <stdlib.h>
#include <string.h>

#include "kbench/plugin.h"

static const kb_variant variants[] = {
    {"copy", "sums the parameter values", KB_HOST, 0},
};

static const kb_param params[] = {
    {"shape", KB_PARAM_DIMS, "4x4", "a shape of rank 1 to 8", "1-8"},
    {"perm", KB_PARAM_INTS, "[1,0]", "a permutation of 2 to 8 axes", "2-8"},
    {"extra", KB_PARAM_INTS, "[]", "any list of integers, empty by default", NULL},
    {"n", KB_PARAM_INT, "2", "a count", NULL},
};

static const kb_metric_def metrics[] = {
    {"total", "1", KB_BETTER_NONE, KB_BOUND_LOW, 0.0, 0.0, "the sum of the parameter values"},
};

typedef struct state {
    int64_t want, got;
} state;

/* Reads one list through the 1.1 getters. */
static int sum_list(const kb_case *c, const char *name, int dims, int64_t *sum, char *msg)
{
    int64_t v[KB_MAX_INTS];
    int n = 0;
    int rc = dims ? c->host->param_dims_cap(c->params, name, v, KB_MAX_RANK, &n)
                  : c->host->param_ints(c->params, name, v, KB_MAX_INTS, &n);
    if (rc != KB_OK) {
        kb_msgf(msg, "parameter %s not delivered", name);
        return KB_BAD_PARAM;
    }
    for (int i = 0; i < n; i++)
        *sum += v[i];
    return KB_OK;
}

static int init(const kb_case *c, void **out, char *msg)
{
    state *s;
    int64_t n = 0, sum = 0;
    /* A harness older than 1.1 has no list getters. */
    if (c->host->struct_size < offsetof(kb_host, param_ints) + sizeof c->host->param_ints ||
        !c->host->param_dims_cap || !c->host->param_ints) {
        kb_msgf(msg, "this kbench has no ABI 1.1 parameter getters");
        return KB_SKIP;
    }
    if (sum_list(c, "shape", 1, &sum, msg) != KB_OK || sum_list(c, "perm", 0, &sum, msg) ||
        sum_list(c, "extra", 0, &sum, msg))
        return KB_BAD_PARAM;
    if (c->host->param_int(c->params, "n", &n) != KB_OK) {
        kb_msgf(msg, "parameter n not delivered");
        return KB_BAD_PARAM;
    }
    s = calloc(1, sizeof *s);
    if (!s)
        return KB_NOMEM;
    s->want = sum + n;
    if (c->struct_size >= offsetof(kb_case, handle) + sizeof c->handle &&
        c->host->struct_size >= offsetof(kb_host, report) + sizeof c->host->report &&
        c->host->report)
        c->host->report(c->handle, "total", (double)s->want, 0.0);
    s->got = -1; /* poison */
    *out = s;
    return KB_OK;
}

static int counts(void *p, kb_counts *k, char *msg)
{
    k->items = 1.0;
    k->item_unit = "sums";
    return KB_OK;
}

static int run(void *p, void *stream, char *msg)
{
    state *s = p;
    s->got = s->want;
    return KB_OK;
}

static int verify(void *p, kb_verdict *v, char *msg)
{
    state *s = p;
    v->metric = "abs";
    v->error = s->got == s->want ? 0.0 : 1.0;
    v->tolerance = 0.0;
    v->passed = s->got == s->want;
    return KB_OK;
}

static int teardown(void *p, char *msg)
{
    free(p);
    return KB_OK;
}

static const kb_plugin plugin = {
    .abi_version = KB_ABI_VERSION(1, 1),
    .struct_size = sizeof(kb_plugin),
    .name = "params11",
    .description = "fixture: ABI 1.1 parameters (rank-8 dims, integer lists, size axis)",
    .variants = variants,
    .n_variants = 1,
    .params = params,
    .n_params = 4,
    .init = init,
    .counts = counts,
    .run = run,
    .verify = verify,
    .teardown = teardown,
    .metrics = metrics,
    .n_metrics = 1,
    .size_param = "shape",
};

KB_EXPORT const kb_plugin *kb_plugin_entry(void)
{
    return &plugin;
}
