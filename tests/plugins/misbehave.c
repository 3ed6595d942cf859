/* Fixture: one variant per way a plugin can go wrong at run time.  The
 * runner must record each with its status and go on to the next case. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kbench/plugin.h"

enum { OK, SEGV, HANG, VERIFY_FAIL, INIT_FAIL, SKIP, EXIT, NOISY, NOT_REPEATABLE, ABORT, N };

static const kb_variant variants[N] = {
    [OK] = {"ok", "does nothing, correctly", KB_HOST, 0},
    [SEGV] = {"segv", "writes through a NULL pointer in run", KB_HOST, 0},
    [HANG] = {"hang", "never returns from run", KB_HOST, 0},
    [VERIFY_FAIL] = {"verify_fail", "verify reports a wrong answer", KB_HOST, 0},
    [INIT_FAIL] = {"init_fail", "init fails with a message", KB_HOST, 0},
    [SKIP] = {"skip", "init says it cannot run here", KB_HOST, 0},
    [EXIT] = {"exit", "calls exit(3) in run", KB_HOST, 0},
    [NOISY] = {"noisy", "prints to stdout and stderr in every call", KB_HOST, 0},
    [NOT_REPEATABLE] = {"not_repeatable", "right on the first run only", KB_HOST, 0},
    [ABORT] = {"abort", "calls abort() in verify", KB_HOST, 0},
};

typedef struct state {
    int variant;
    long runs;
    int value;
} state;

static int init(const kb_case *c, void **out, char *msg)
{
    state *s;
    if (c->variant == INIT_FAIL) {
        kb_msgf(msg, "init failed on purpose");
        return KB_ERROR;
    }
    if (c->variant == SKIP) {
        kb_msgf(msg, "needs hardware this machine lacks");
        return KB_SKIP;
    }
    s = calloc(1, sizeof *s);
    s->variant = c->variant;
    s->value = -1; /* poison */
    if (c->variant == NOISY) {
        printf("noisy plugin writing to stdout\n");
        fflush(stdout);
        fprintf(stderr, "noisy plugin writing to stderr\n");
    }
    *out = s;
    return KB_OK;
}

static int counts(void *p, kb_counts *k, char *msg)
{
    k->bytes = 1.0;
    return KB_OK;
}

/* The deliberate NULL write, out of the sanitizers' sight in a
 * KBENCH_SANITIZE build (UBSan would report it and exit instead of the
 * worker dying of SIGSEGV, which is what this fixture is for). */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((no_sanitize("address", "undefined")))
#endif
static void write_through_null(void)
{
    *(volatile int *)(uintptr_t)0 = 1;
}

static int run(void *p, void *stream, char *msg)
{
    state *s = p;
    s->runs++;
    switch (s->variant) {
    case SEGV:
        write_through_null();
        break;
    case HANG:
        for (;;)
            pause();
    case EXIT:
        exit(3);
    case NOISY:
        printf("run %ld\n", s->runs);
        fflush(stdout);
        break;
    default:
        break;
    }
    s->value = s->variant == NOT_REPEATABLE && s->runs > 1 ? 0 : 1;
    return KB_OK;
}

static int verify(void *p, kb_verdict *v, char *msg)
{
    state *s = p;
    if (s->variant == ABORT)
        abort();
    v->metric = "wrong";
    v->error = s->value == 1 && s->variant != VERIFY_FAIL ? 0.0 : 1.0;
    v->tolerance = 0.0;
    v->passed = v->error == 0.0;
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
    .name = "misbehave",
    .description = "fixture: crashes, hangs, exits, fails",
    .variants = variants,
    .n_variants = N,
    .init = init,
    .counts = counts,
    .run = run,
    .verify = verify,
    .teardown = teardown,
};

KB_EXPORT const kb_plugin *kb_plugin_entry(void)
{
    return &plugin;
}
