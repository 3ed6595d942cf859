/* INI profiles: the [run] section (how to measure), one section per plugin
 * (which variants, which parameter points), and the expansion of list-valued
 * keys into the product of axes (zipped groups stepping together) that makes
 * the case list. */
#ifndef KBENCH_PROFILE_H
#define KBENCH_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "kbench/plugin.h"
#include "common.h"
#include "loader.h"

typedef enum kbi_cache { KBI_CACHE_COLD = 0, KBI_CACHE_HOT = 1 } kbi_cache;

typedef struct kbi_run_opts {
    int warmup;          /* untimed runs before the first sample */
    int min_samples;     /* at least this many samples */
    int max_samples;     /* at most this many */
    double min_time;     /* seconds of timed work per case, at least */
    double max_time;     /* stop sampling past this many seconds (timeout/2 if 0) */
    double max_noise;    /* stop once the median's relative noise is under this */
    double timeout;      /* seconds per case before it is killed */
    kbi_cache cache;     /* cold: flush L2 before each sample; hot: batches */
    int device;          /* CUDA device ordinal */
    uint64_t seed;       /* passed to every case's init */
    double bandwidth_gbs; /* memory ceiling in GB/s; 0: measure it */
    double peak_gflops;   /* compute ceiling in GFLOP/s; 0: measure it */
    double tf32_gflops;   /* TF32 tensor-core ceiling in GFLOP/s; 0: measure it */
    int rounds;           /* measure every case this many times, interleaved over the run */
    int energy;           /* measure each device case's energy (energy.h); on by default */
    double energy_window; /* least seconds of one energy window */
    int energy_windows;   /* windows per case */
} kbi_run_opts;

/* Defaults of [run]. */
void kbi_run_opts_default(kbi_run_opts *o);

/* One parsed parameter value. */
typedef struct kbi_value {
    kb_param_type type;
    int64_t i;
    double f;
    int n_dims;
    int64_t dims[KB_MAX_RANK];
    int n_ints;
    int64_t *ints; /* KB_PARAM_INTS, n_ints long; on the heap, not inline, so that
                      each of a 100000-value list's values stays small */
    char *text; /* canonical text, as it appears in case ids; the string for STRING */
} kbi_value;

/* Parses one value of the given parameter from text.  Returns KBI_OK or
 * KBI_ERR_INPUT with err saying what was expected (no file:line prefix). */
int kbi_value_parse(const kb_param *param, const char *text, kbi_value *out, char *err);
void kbi_value_free(kbi_value *v);

/* The values one parameter takes: a list of one is a fixed value. */
typedef struct kbi_axis {
    const kb_param *param;
    kbi_value *values;
    size_t n;
    int line; /* where it was set; 0 for the plugin's default */
    kbi_param_role role; /* a knob or implicit one is named in ids only away from its default */
    char *default_text;  /* the default's canonical text */
} kbi_axis;

typedef struct kbi_section {
    char *name;
    int line;
    const kbi_plugin *plugin;
    int *variants; /* indices into plugin->desc->variants, profile order */
    size_t n_variants;
    int baseline; /* variant index, or -1 */
    kbi_axis *axes; /* one per plugin parameter, descriptor order */
    size_t n_axes;
    int *zip;  /* per axis: the zip group it steps with (0, 1, ...), or -1 alone */
    int n_zip; /* groups in the section's `zip` key */
} kbi_section;

/* Points of a section: the product of its steps (an axis alone or a zipped
 * group), saturated at KBI_MAX_CASES + 1 so huge lists cannot wrap it. */
size_t kbi_section_points(const kbi_section *sec);

typedef struct kbi_profile {
    char *path;
    kbi_run_opts run;
    kbi_section *sections;
    size_t n_sections;
} kbi_profile;

/* Reads a profile.  Every error found is reported, one per line, as
 * "FILE:LINE: what was wrong, what was expected" into *errors (caller frees
 * errors->data).  Returns KBI_OK, KBI_ERR_IO (unreadable file) or
 * KBI_ERR_INPUT (one or more errors). */
int kbi_profile_load(const char *path, const kbi_plugin_set *plugins, kbi_profile *out,
                     kbi_buf *errors);

/* Same, from a string; `name` stands for the file in messages. */
int kbi_profile_parse(const char *name, const char *text, const kbi_plugin_set *plugins,
                      kbi_profile *out, kbi_buf *errors);

void kbi_profile_free(kbi_profile *p);

/* The parameter values of one case, as the plugin reads them (kb_params is
 * opaque to plugins). */
struct kb_params {
    const kb_param *defs;
    const kbi_value *const *values; /* one per def */
    int n;
};

/* One case: a variant at one point of the section's axes. */
typedef struct kbi_case {
    size_t index; /* position in the full (unfiltered, unsharded) case list */
    const kbi_section *section;
    int variant;
    const kbi_value **values; /* one per axis */
    struct kb_params params;
    /* plugin/variant/name=value,...: the problem parameters, and each knob or implicit
     * parameter (kbi_param_role) that the case sets away from its default */
    char *id;
    char *full_id; /* plugin/variant/ and every parameter: what ids were before ABI 1.3 */
    /* What a person reads in a progress line: section/variant/ and the parameters that take
     * more than one value in the section (section/variant alone when none does). */
    char *label;
} kbi_case;

/* Whether case c is selected by pattern: equal to its id or full id, or a glob (fnmatch)
 * matching either, so that a pattern written for ids before ABI 1.3 still selects it. */
int kbi_case_selected(const kbi_case *c, const char *pattern);

/* The most cases a profile may expand to (all sections together); a
 * profile past it is refused by kbi_profile_parse, naming the section. */
#define KBI_MAX_CASES 1000000

/* Expands every section into its cases: for each point of the product of
 * the steps (first slowest; a zipped group steps at the place of its first
 * key in descriptor order), each variant in profile order.  A case that an
 * earlier section already holds (the same full id) is left out: each case
 * runs once. */
int kbi_profile_cases(const kbi_profile *p, kbi_case **cases, size_t *n);
/* The same, adding to notes (when not NULL) a "FILE:LINE: ..." line for each
 * repeat left out (kbi_cases_drop_repeats). */
int kbi_profile_cases_noting(const kbi_profile *p, kbi_case **cases, size_t *n, kbi_strlist *notes);
void kbi_cases_free(kbi_case *cases, size_t n);
void kbi_case_clear(kbi_case *c); /* frees what one case holds, not the case itself */

/* Drops each case of cases[0..n) whose full id an earlier one has, compacting
 * the array and renumbering `index`; returns how many are kept.  With notes,
 * adds "PATH:LINE: [section] repeats ID, a case of [first] (line N): ..." for
 * each one dropped (case_repeats.c). */
size_t kbi_cases_drop_repeats(kbi_case *cases, size_t n, const char *path, kbi_strlist *notes);

/* Expands one list (comma separated; numeric ranges "a:b:*k" and "a:b:+k",
 * inclusive of b when reached; for KB_PARAM_INTS a comma inside brackets
 * does not split) into at most 100000 items.  Returns KBI_OK or
 * KBI_ERR_INPUT with err set. */
int kbi_expand_list(const char *text, kb_param_type type, char ***items, size_t *n, char *err);
void kbi_strv_free(char **v, size_t n);

/* kb_host parameter getters over a case's kb_params.  Each returns KB_OK, or
 * KB_BAD_PARAM when the name is not a parameter of that type.  The list
 * getters write nothing into the array when the value has more than fits
 * (KB_MAX_DIMS for the 1.0 kbi_param_dims, `cap` for the others) and return
 * KB_BAD_PARAM with *n set to the value's real count. */
int kbi_param_int(const kb_params *params, const char *name, int64_t *out);
int kbi_param_float(const kb_params *params, const char *name, double *out);
int kbi_param_string(const kb_params *params, const char *name, const char **out);
int kbi_param_dims(const kb_params *params, const char *name, int64_t *dims, int *n);
int kbi_param_dims_cap(const kb_params *params, const char *name, int64_t *dims, int cap, int *n);
int kbi_param_ints(const kb_params *params, const char *name, int64_t *values, int cap, int *n);
#endif
