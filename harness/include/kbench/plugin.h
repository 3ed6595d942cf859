/* kbench plugin ABI: the one header a workload plugin includes.
 *
 * A plugin is a shared object that exports one symbol, KB_ENTRY_SYMBOL, a
 * function returning a pointer to a constant kb_plugin descriptor.  The
 * descriptor names the plugin, its variants and its parameters, and holds the
 * entry points the harness calls for every case:
 *
 *     init -> counts -> run (verified once, then warm-up and timed samples)
 *          -> verify -> teardown
 *
 * Rules of the boundary (see DESIGN.md and STYLE.md):
 *   - Plain C11; no CUDA header is needed (streams travel as void *).
 *   - Every struct that crosses the boundary starts with its ABI version or
 *     size and only grows at the end; fields added by a later minor version
 *     are marked with a comment naming that version, and the harness reads
 *     them only after checking the plugin's version.
 *   - Host services reach the plugin through the kb_host pointer passed to
 *     init; a plugin never links against harness symbols.
 *   - Every entry point returns a kb_status and may write one line of text
 *     into the caller's message buffer (KB_MSG_SIZE bytes, use kb_msgf).
 *   - Nothing in a plugin calls exit() or abort(), or prints to stdout.
 *
 * A minimal plugin is plugins/stream; tests/plugins/ holds broken ones.
 */
#ifndef KBENCH_PLUGIN_H
#define KBENCH_PLUGIN_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ABI version: the major number changes when an existing field changes
 * meaning or place (the loader refuses another major); the minor number
 * changes when fields are appended (the loader accepts an older minor). */
#define KB_ABI_MAJOR 1
#define KB_ABI_MINOR 0
#define KB_ABI_VERSION(major, minor) (((uint32_t)(major) << 16) | (uint32_t)(minor))
#define KB_ABI_CURRENT KB_ABI_VERSION(KB_ABI_MAJOR, KB_ABI_MINOR)
#define KB_ABI_MAJOR_OF(v) ((uint32_t)(v) >> 16)
#define KB_ABI_MINOR_OF(v) ((uint32_t)(v) & 0xffffu)

/* The one symbol the loader looks up, and its type. */
#define KB_ENTRY_SYMBOL "kb_plugin_entry"
struct kb_plugin;
typedef const struct kb_plugin *(*kb_entry_fn)(void);

/* Export marker for the entry function. */
#if defined(__GNUC__) || defined(__clang__)
#define KB_EXPORT __attribute__((visibility("default")))
#else
#define KB_EXPORT
#endif

/* Status returned by every entry point.  KB_SKIP means "this configuration
 * cannot run here" (no GPU, too little memory, shape not supported): the case
 * is recorded as skipped with the message, which is not a failure. */
typedef enum kb_status {
    KB_OK = 0,
    KB_ERROR = -1,      /* generic failure; the message says what */
    KB_SKIP = -2,       /* cannot run here; the message says why */
    KB_NOMEM = -3,      /* host or device allocation failed */
    KB_CUDA_ERROR = -4, /* a CUDA call failed; the message names it */
    KB_BAD_PARAM = -5   /* a parameter value this plugin cannot take */
} kb_status;

/* Size of the message buffer every entry point receives. */
#define KB_MSG_SIZE 512

/* Write one line into a message buffer of KB_MSG_SIZE bytes. */
static inline void kb_msgf(char *msg, const char *fmt, ...)
{
    va_list ap;
    if (!msg)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, KB_MSG_SIZE, fmt, ap);
    va_end(ap);
}

/* ---- variants ---------------------------------------------------------- */

typedef enum kb_target {
    KB_HOST = 0,  /* runs on the CPU; timed with CLOCK_MONOTONIC, stream is NULL */
    KB_DEVICE = 1 /* enqueues on the harness's CUDA stream; timed with events */
} kb_target;

/* Variant flags. */
#define KB_VARIANT_BASELINE 0x1u /* a reference point such as cublas or memcpy */

typedef struct kb_variant {
    const char *name;        /* identifier used in profiles and case ids */
    const char *description; /* one line for `kbench list` */
    kb_target target;        /* KB_HOST or KB_DEVICE */
    uint32_t flags;          /* KB_VARIANT_* */
} kb_variant;

/* ---- parameters -------------------------------------------------------- */

typedef enum kb_param_type {
    KB_PARAM_INT = 0,    /* 64-bit integer: 4096, 1<<20 written as 1048576 */
    KB_PARAM_FLOAT = 1,  /* double: 1.0, 0.5, 2e-3 */
    KB_PARAM_STRING = 2, /* a word; `choices` may restrict it */
    KB_PARAM_DIMS = 3    /* up to KB_MAX_DIMS integers joined by 'x': 4096x4096x256 */
} kb_param_type;

#define KB_MAX_DIMS 4

typedef struct kb_param {
    const char *name;          /* key in the plugin's profile section */
    kb_param_type type;        /* how the value is parsed */
    const char *default_value; /* as written in a profile; parsed like one */
    const char *help;          /* one line for `kbench list` */
    const char *choices;       /* KB_PARAM_STRING: "a|b|c", or NULL for any word;
                                  KB_PARAM_DIMS: the exact count, e.g. "3", or NULL */
} kb_param;

/* Opaque handle to one case's parameter values; read through kb_host. */
typedef struct kb_params kb_params;

/* ---- what the plugin reports back --------------------------------------- */

/* The work of one run(): the harness derives GFLOP/s, GB/s and items/s from
 * these and the median time.  A figure that does not apply is 0. */
typedef struct kb_counts {
    double flops;          /* floating-point operations of one run */
    double bytes;          /* bytes that must move to/from memory at the least */
    double items;          /* domain units of one run (atom-steps, spin flips) */
    const char *item_unit; /* name of the unit, e.g. "atom-steps"; NULL if none */
} kb_counts;

/* The outcome of verify(). */
typedef struct kb_verdict {
    int passed;         /* nonzero when the output matches the reference */
    double error;       /* the error figure (e.g. relative Frobenius error) */
    double tolerance;   /* the bound it was held to */
    const char *metric; /* what `error` is, e.g. "rel_frobenius", "mismatches" */
} kb_verdict;

/* ---- host services ------------------------------------------------------ */

/* Services the harness offers a plugin.  Passed to init(); valid until
 * teardown() returns.  Getters return KB_OK, or KB_BAD_PARAM when the name is
 * not a parameter of that type. */
typedef struct kb_host {
    uint32_t abi_version; /* KB_ABI_CURRENT of the harness */
    uint32_t struct_size; /* sizeof(kb_host) of the harness */

    int (*param_int)(const kb_params *params, const char *name, int64_t *out);
    int (*param_float)(const kb_params *params, const char *name, double *out);
    int (*param_string)(const kb_params *params, const char *name, const char **out);
    /* Writes up to KB_MAX_DIMS values into dims and their count into n. */
    int (*param_dims)(const kb_params *params, const char *name, int64_t *dims, int *n);

    /* Attach a named figure to the current case's result (e.g. "energy_drift",
     * "neighbors_per_atom"); shown in reports beside the timing. */
    void (*metric)(const char *name, double value, const char *unit);

    /* Diagnostic text to stderr, prefixed with the plugin and case. */
    void (*log)(const char *fmt, ...);
} kb_host;

/* What init() is told about the case. */
typedef struct kb_case {
    uint32_t struct_size;     /* sizeof(kb_case) of the harness */
    const kb_host *host;      /* services; see above */
    const kb_params *params;  /* this case's parameter values */
    int variant;              /* index into kb_plugin.variants */
    uint64_t seed;            /* seed for the inputs ([run] seed) */
    int device;               /* CUDA device ordinal, already current */
    const char *id;           /* the case id, e.g. "stream/triad/bytes=1073741824" */
} kb_case;

/* ---- the descriptor ------------------------------------------------------ */

typedef struct kb_plugin {
    uint32_t abi_version; /* KB_ABI_CURRENT when built */
    uint32_t struct_size; /* sizeof(kb_plugin) when built */

    const char *name;        /* matches the profile section, e.g. "sgemm" */
    const char *description; /* one line for `kbench list` */
    const kb_variant *variants;
    int n_variants;
    const kb_param *params;
    int n_params;

    /* Allocate and fill inputs (seeded, never all zeros), poison outputs so
     * an unwritten element fails verify, build what the variant needs.  Not
     * timed.  On failure frees everything it took and leaves *state NULL. */
    int (*init)(const kb_case *c, void **state, char *msg);

    /* The work of one run(); called after init, before any run. */
    int (*counts)(void *state, kb_counts *out, char *msg);

    /* One repetition of the work.  Device variants enqueue on `stream` (a
     * cudaStream_t) and must not synchronise it; host variants get NULL and
     * compute before returning.  Repeatable: any number of runs leaves a
     * verifiable result. */
    int (*run)(void *state, void *stream, char *msg);

    /* Compare the output of the latest run with the plugin's reference.  The
     * harness synchronises the device first.  Returns KB_OK when the check
     * could be made (passed or not) and fills *out. */
    int (*verify)(void *state, kb_verdict *out, char *msg);

    /* Free everything init took; state may be mid-case after a failure. */
    int (*teardown)(void *state, char *msg);

    /* Fields added in later minor versions go below, each group marked with
     * the version that added it. */
} kb_plugin;

#ifdef __cplusplus
}
#endif

#endif /* KBENCH_PLUGIN_H */
