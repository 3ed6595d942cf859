/* Fixture: a plugin that breaks the rules without crashing.  "leak" never
 * frees what it takes (memory in init and in every run, a descriptor in
 * init); "scribble" writes a junk line to every descriptor it can reach,
 * the way a plugin writing through a stale descriptor would.  The run must
 * go on and the results file must stay clean; under KBENCH_SANITIZE,
 * `kbench run --in-process` on "leak" must fail LeakSanitizer's check. */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kbench/plugin.h"

enum { OK, LEAK, SCRIBBLE, N };

static const kb_variant variants[N] = {
    [OK] = {"ok", "does nothing, correctly", KB_HOST, 0},
    [LEAK] = {"leak", "leaks 64 KiB and a descriptor in init, 1 KiB in every run", KB_HOST, 0},
    [SCRIBBLE] = {"scribble", "writes a junk line to descriptors 0 to 63 in run", KB_HOST, 0},
};

typedef struct state {
    int variant;
    int value;
} state;

/* Where leaked blocks are kept from the compiler (not from LeakSanitizer:
 * this is overwritten, so only the last block stays reachable). */
static void *volatile last_leak;

static int init(const kb_case *c, void **out, char *msg)
{
    state *s = calloc(1, sizeof *s);
    if (!s)
        return KB_NOMEM;
    s->variant = c->variant;
    s->value = -1; /* poison */
    if (c->variant == LEAK) {
        char *block = malloc(64 << 10);
        if (block)
            memset(block, 1, 64 << 10);
        last_leak = block;
        last_leak = NULL;
        (void)open("/dev/null", O_RDONLY);
    }
    *out = s;
    return KB_OK;
}

static int counts(void *p, kb_counts *k, char *msg)
{
    k->bytes = 1.0;
    return KB_OK;
}

static int run(void *p, void *stream, char *msg)
{
    state *s = p;
    if (s->variant == LEAK) {
        char *block = malloc(1024);
        if (block)
            memset(block, 2, 1024);
        last_leak = block;
        last_leak = NULL;
    } else if (s->variant == SCRIBBLE) {
        static const char junk[] = "SCRIBBLE from a rogue plugin\n";
        for (int fd = 0; fd < 64; fd++)
            (void)!write(fd, junk, sizeof junk - 1);
    }
    s->value = 1;
    return KB_OK;
}

static int verify(void *p, kb_verdict *v, char *msg)
{
    state *s = p;
    v->metric = "wrong";
    v->error = s->value == 1 ? 0.0 : 1.0;
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
    .name = "rogue",
    .description = "fixture: leaks, and writes junk to every descriptor",
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
