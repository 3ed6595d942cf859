/* kbench plugin ABI: the one header a workload plugin includes.
 *
 * A plugin is a shared object that exports one symbol, KB_ENTRY_SYMBOL, a
 * function returning a pointer to a constant kb_plugin descriptor.  The
 * descriptor names the plugin, its variants and its parameters, and holds the
 * entry points the harness calls for every case:
 *
 *     [prepare, once per parameter point, shared by its variants]   (1.1)
 *     init -> counts -> run (verified once, then warm-up and timed samples,
 *          [reset before each sample] (1.1)) -> verify -> [instrument] (1.4)
 *          -> teardown
 *     [release, once the point's last variant is torn down]          (1.1)
 *
 * Rules of the boundary (docs/design.md tells the whole story):
 *   - Plain C11; no CUDA header is needed (streams travel as void *).
 *   - Every struct that crosses the boundary starts with its ABI version or
 *     size and only grows at the end; fields added by a later minor version
 *     are marked with a comment naming that version, and the harness reads
 *     them only after checking the plugin's version.
 *   - Host services reach the plugin through the kb_host pointer passed to
 *     init; a plugin never links against harness symbols.
 *   - Every entry point returns an int, KB_OK or another kb_status value, and
 *     may write one line of text into the caller's message buffer
 *     (KB_MSG_SIZE bytes, use kb_msgf).
 *   - Nothing in a plugin calls exit() or abort(), or prints to stdout.
 *
 * A complete minimal plugin is docs/example-plugin/example.c (docs/plugin.md);
 * plugins/stream is the template with device variants; tests/plugins/ holds
 * broken ones.
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
#define KB_ABI_MINOR 4
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
    KB_PARAM_DIMS = 3,   /* up to KB_MAX_RANK integers joined by 'x': 4096x4096x256 */
    /* ABI 1.1 */
    KB_PARAM_INTS = 4    /* a list of up to KB_MAX_INTS integers in brackets: [0,2,1,3] */
} kb_param_type;

/* The most values kb_host.param_dims (1.0) writes; a 1.0 plugin's array is
 * this long.  Dims of higher rank are read with param_dims_cap (1.1). */
#define KB_MAX_DIMS 4
/* ABI 1.1: the highest rank a KB_PARAM_DIMS value may have, and the longest
 * KB_PARAM_INTS list. */
#define KB_MAX_RANK 8
#define KB_MAX_INTS 64

typedef struct kb_param {
    const char *name;          /* key in the plugin's profile section */
    kb_param_type type;        /* how the value is parsed */
    const char *default_value; /* as written in a profile; parsed like one */
    const char *help;          /* one line for `kbench list` */
    const char *choices;       /* KB_PARAM_STRING: "a|b|c", or NULL for any word;
                                  KB_PARAM_DIMS, KB_PARAM_INTS (1.1): the exact count,
                                  e.g. "3", or a range of counts, e.g. "2-8", or NULL */
} kb_param;
/* kb_param and kb_variant are array elements: they never grow.  What later
 * versions say about them sits in the descriptor (see size_param, knobs). */

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

    /* ABI 1.1: how run() may be repeated.  The harness zeroes the struct
     * before counts(), so a 1.0 plugin gets the defaults (0). */
    int max_batch;      /* most runs in one sample: 0 any number, 1 one run per
                           sample (a state that must be reset between samples) */
    uint32_t run_flags; /* KB_RUN_* below */
} kb_counts;

/* run_flags (ABI 1.1).  In hot mode the harness times a batch of runs as the
 * GPU sees them: it captures the batch into a CUDA graph and replays it;
 * where capture fails it queues the batch behind a kernel that holds the
 * stream until every launch is enqueued; else it times plain launches.  The
 * record says which ("timing": graph, blocked, launches).  A graph replays
 * the work exactly as run() enqueued it during capture, so a run() whose
 * work depends on host state that changes from call to call (a step counter
 * passed by value, a ping-pong index kept on the host) must say NO_CAPTURE. */
#define KB_RUN_NO_CAPTURE 0x1u /* never capture run() into a graph */
#define KB_RUN_SYNCS 0x2u      /* run() waits on the device (reads back a flag, calls a
                                  synchronising API): plain launches only */
/* ABI 1.2: run()'s time follows the host CPU: it holds a host pass, or it launches more
 * small kernels than the GPU can hide behind its own work.  KB_RUN_SYNCS implies it (the
 * host's turn is inside the timed interval).  The record says so ("host_paced"), and
 * `compare` judges such a case like a host-timed one: it allows for a shared CPU and calls
 * it not comparable across different CPUs. */
#define KB_RUN_HOST_PACED 0x4u

/* The outcome of verify(). */
typedef struct kb_verdict {
    int passed;         /* nonzero when the output matches the reference */
    double error;       /* the error figure (e.g. relative Frobenius error) */
    double tolerance;   /* the bound it was held to */
    const char *metric; /* what `error` is, e.g. "rel_frobenius", "mismatches" */
} kb_verdict;

/* ---- declared metrics (ABI 1.1) ------------------------------------------ */

/* Which direction of a metric is better; `compare` calls a move in the worse
 * direction, beyond both runs' uncertainties, a regression. */
typedef enum kb_better {
    KB_BETTER_NONE = 0,   /* neither: a move is shown, never a regression */
    KB_BETTER_HIGHER = 1, /* e.g. spin flips per ns */
    KB_BETTER_LOWER = 2   /* e.g. energy drift, ns per atom-step */
} kb_better;

/* Bound flags of kb_metric_def. */
#define KB_BOUND_LOW 0x1u  /* value must be >= low */
#define KB_BOUND_HIGH 0x2u /* value must be <= high */
/* ABI 1.2: a flag of kb_metric_def.bounds (kb_metric_def is an array element and never
 * grows).  The metric is derived from a timing (us per call, a ratio of two times, ns per
 * spin flip, a fraction of the time): it moves from run to run as the case's time does, by
 * more than its within-run uncertainty says, so `compare` judges it like a time (a move must
 * also clear the threshold and what the runs' drift and CPU load can explain).  Without it a
 * metric is a result (an energy drift, a moment ratio) judged by its uncertainties alone. */
#define KB_METRIC_TIMING 0x100u

/* A metric the plugin reports for its cases: a result in its own right (an
 * energy drift, a moment ratio, neighbors per atom), or a figure derived from a
 * timing (KB_METRIC_TIMING).  `compare` judges a move against both runs'
 * uncertainties; a value outside its bound fails the case. */
typedef struct kb_metric_def {
    const char *name;   /* identifier: letters, digits, '_' */
    const char *unit;   /* e.g. "ns", "1" for a plain number */
    kb_better better;   /* which direction is better */
    uint32_t bounds;    /* KB_BOUND_*; ABI 1.2: | KB_METRIC_TIMING */
    double low, high;   /* the bound, where the flags say so */
    const char *help;   /* one line for `kbench list` */
} kb_metric_def;

/* Opaque: the case (or point) a reported value belongs to. */
typedef struct kb_case_handle kb_case_handle;

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

    /* ABI 1.1 */

    /* Writes up to `cap` values into dims and their count into n; a value of
     * more than `cap` values is KB_BAD_PARAM (n still tells how many). */
    int (*param_dims_cap)(const kb_params *params, const char *name, int64_t *dims, int cap,
                          int *n);
    /* The same for a KB_PARAM_INTS value. */
    int (*param_ints)(const kb_params *params, const char *name, int64_t *values, int cap,
                      int *n);
    /* Reports a declared metric of the case `h` (kb_case.handle): its value
     * and its standard uncertainty (one standard error; 0 for an exact
     * figure such as a count; NAN when unknown).  May be called from init,
     * run, verify, instrument (1.4) or teardown; the last value reported wins.  Returns KB_OK,
     * or KB_BAD_PARAM for a name the descriptor does not declare. */
    int (*report)(kb_case_handle *h, const char *name, double value, double uncertainty);
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

    /* ABI 1.1 */
    void *shared;             /* what prepare() made for this point; NULL without prepare */
    kb_case_handle *handle;   /* for host->report; valid until teardown() returns */
} kb_case;

/* What prepare() is told about a parameter point (ABI 1.1). */
typedef struct kb_point {
    uint32_t struct_size;     /* sizeof(kb_point) of the harness */
    const kb_host *host;
    const kb_params *params;  /* the point's parameter values */
    uint64_t seed;            /* as kb_case.seed */
    int device;               /* CUDA device ordinal, already current; -1 when no
                                 device variant runs at this point or no device
                                 is usable (prepare must not touch CUDA then) */
    void *stream;             /* the harness's stream when device >= 0, else NULL */
    const char *id;           /* "plugin/name=value,...": the case id less the variant */
} kb_point;

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

    /* ABI 1.1 (every entry optional: NULL) */

    /* Per-point setup shared by every variant at the point (an equilibrated
     * liquid, a thermalised lattice, a double-precision reference): called
     * once per point per worker process before the first init there, timed
     * apart (recorded as prepare_s, never in a sample nor against a case's
     * timeout).  On failure frees what it took and leaves *shared NULL;
     * every case at the point then gets its status and message. */
    int (*prepare)(const kb_point *pt, void **shared, char *msg);
    /* Frees what prepare made, after the point's last teardown. */
    int (*release)(void *shared, char *msg);

    /* Untimed, before each timed sample (and before the first, verified,
     * run): puts the state back where a sample starts (a stored bond
     * configuration, a saved lattice).  Device work goes on `stream`; the
     * harness waits for it before timing. */
    int (*reset)(void *state, void *stream, char *msg);

    /* Declared metrics, reported through kb_host.report. */
    const kb_metric_def *metrics;
    int n_metrics;

    /* Name of the parameter charts use as the size axis (e.g. "L", "shape"),
     * or NULL: the first parameter with more than one value in a profile. */
    const char *size_param;

    /* ABI 1.3: what a case id leaves out, so that it names the problem a case measures.
     * Each is a list of parameter names, "name|name|..." (NULL: none); a case id names a
     * parameter of either list only where the case sets it away from its default (the
     * results record keeps every parameter).  Every other parameter is named always. */
    const char *knobs;    /* how a variant runs, not what it computes: threads per block, a
                             tile length, a planner's choice, a fill pipeline */
    const char *implicit; /* parameters of the problem whose default goes without saying: it
                             stands for what the others imply (0: the system's density), or
                             the parameter applies only to some values of another (a count
                             only preset=custom reads) */

    /* ABI 1.4 (every field optional: NULL) */

    /* Instrumented measurements, apart from the timed samples and from verify(): the time
     * of a sub-phase (a neighbor-list build against the force pass, labeling alone inside a
     * Monte Carlo step), a figure only an instrumented run can give.  Called once per case,
     * after the verify() that follows the timed runs, when it passed, and before teardown()
     * (and before the energy windows), on the harness's stream (NULL for a host variant),
     * never inside a sample nor against the case's samples; its time counts against the
     * case's timeout.  The state is the one that verify() left.  It reports declared metrics
     * through host->report; the record names the metrics it reported and the seconds it took
     * ("instrumented"), so a reader knows which figures come from an instrumented run.
     * KB_SKIP ("cannot instrument here") leaves the case ok with the reason recorded; any
     * other failure makes the case an error whose samples and verdict stay in the record.
     * verify() only verifies. */
    int (*instrument)(void *state, void *stream, char *msg);

    /* Which variants each knob applies to: "knob=variant|variant;knob=variant|..." (a knob
     * not named applies to every variant).  A profile section that sets a knob away from its
     * default while its variants include one the knob does not apply to is refused at load
     * with FILE:LINE, naming the knob, that variant and the variants it applies to.  The
     * section's baseline alone may be such a variant (reports pair a case with its baseline at
     * the same parameters): a variant ignores a knob that does not apply to it. */
    const char *knob_variants;

    /* The roof each variant's rate is drawn against in charts, where it is not the one its
     * counts imply (the FP32 FMA peak for flops, the copy bandwidth for bytes):
     * "variant=roof;variant=roof", roof one of "fp32" (FP32 FMA peak), "tf32" (the TF32
     * tensor-core peak), "tf32x3" (a third of it: three TF32 products stand for one fp32
     * product), "memory" (the copy bandwidth). */
    const char *roofs;

    /* The plugin's headline figure as its source quotes it, for the report's rate chart:
     * NULL or "rate" (GFLOP/s, GB/s or items/s from the counts), or "time_per_item" (the
     * median time over the counts' items: ns per spin flip, us per atom-step; lower is
     * better). */
    const char *headline;
} kb_plugin;

#ifdef __cplusplus
}
#endif

#endif /* KBENCH_PLUGIN_H */
