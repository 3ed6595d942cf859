/* Fixture: a host plugin whose parameters are of each role a case id knows: `n` names the
 * problem, `block` and `order` are knobs, `density` is implicit (0: n's own), so an id names n
 * always and the others only where a case sets them away from their default.  `order` applies
 * to "sum" only (ABI 1.4's knob_variants): a profile may not set it for "declines".
 * "sum" adds n numbers in blocks; "declines" skips every case with a message longer than a
 * progress line, which kbench must cut. */
#include <stdlib.h>

#include "kbench/plugin.h"

static const kb_variant variants[] = {
    {"sum", "adds n numbers, block at a time", KB_HOST, 0},
    {"declines", "skips, with a long reason", KB_HOST, 0},
};

static const kb_param params[] = {
    {"n", KB_PARAM_INT, "100", "how many numbers (the problem)", NULL},
    {"density", KB_PARAM_FLOAT, "0", "numbers per slot (0: n's own)", NULL},
    {"block", KB_PARAM_INT, "64", "numbers added at a time (a knob)", NULL},
    {"order", KB_PARAM_STRING, "forward", "the order they are added in (a knob)",
     "forward|backward"},
};

typedef struct state {
    int64_t n, block;
    double sum;
} state;

static int init(const kb_case *c, void **out, char *msg)
{
    state *s = calloc(1, sizeof *s);
    if (!s)
        return KB_NOMEM;
    if (c->host->param_int(c->params, "n", &s->n) ||
        c->host->param_int(c->params, "block", &s->block) || s->block < 1) {
        free(s);
        kb_msgf(msg, "parameters not delivered");
        return KB_BAD_PARAM;
    }
    if (c->variant == 1) {
        free(s);
        kb_msgf(msg, "declined: %s",
                "this variant never runs here, and says why at length, with every detail a "
                "person might want later and nobody wants on a progress line: the record keeps "
                "the message whole, the line shows what fits in its columns and no more");
        return KB_SKIP;
    }
    s->sum = -1; /* poison */
    *out = s;
    return KB_OK;
}

static int counts(void *p, kb_counts *k, char *msg)
{
    state *s = p;
    k->flops = (double)s->n;
    return KB_OK;
}

static int run(void *p, void *stream, char *msg)
{
    state *s = p;
    double acc = 0;
    for (int64_t i = 0; i < s->n; i += s->block)
        for (int64_t j = i; j < i + s->block && j < s->n; j++)
            acc += (double)(j + 1);
    s->sum = acc;
    return KB_OK;
}

static int verify(void *p, kb_verdict *v, char *msg)
{
    state *s = p;
    double want = 0.5 * (double)s->n * (double)(s->n + 1);
    v->metric = "abs";
    v->error = s->sum > want ? s->sum - want : want - s->sum;
    v->tolerance = 0;
    v->passed = v->error == 0;
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
    .name = "knobs",
    .description = "fixture: problem, knob and implicit parameters",
    .variants = variants,
    .n_variants = 2,
    .params = params,
    .n_params = 4,
    .init = init,
    .counts = counts,
    .run = run,
    .verify = verify,
    .teardown = teardown,
    .knobs = "block|order",
    .implicit = "density",
    .knob_variants = "order=sum", /* block applies to every variant */
};

KB_EXPORT const kb_plugin *kb_plugin_entry(void)
{
    return &plugin;
}
