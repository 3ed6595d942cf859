/* The report model: the cases of a result set grouped once into plugins,
 * rows (a variant, in one run) and parameter points, with each point's
 * baseline.  The Markdown, the CSV and the charts are all written from it,
 * so they always show the same figures. */
#ifndef KBENCH_REPORT_MODEL_H
#define KBENCH_REPORT_MODEL_H

#include <stdint.h>

#include "common.h"
#include "resultset.h"

/* Short names of runs: the GPU's name when every run has a different one,
 * else "R1", "R2", ... */
typedef struct kbi_run_names {
    char **name; /* [n_envs] */
    size_t n;
} kbi_run_names;

/* What a plugin's charts show: a rate from its counts, or (its headline "time_per_item") the
 * median time over the items, where lower is better. */
enum kbi_rate_kind {
    KBI_RATE_NONE,
    KBI_RATE_FLOPS,
    KBI_RATE_BYTES,
    KBI_RATE_ITEMS,
    KBI_RATE_TIME_PER_ITEM
};

typedef struct kbi_rep_row { /* a line of a table: one variant, in one run */
    char *variant;
    size_t env;      /* sweep (sweep_of) of its cases; KBI_NO_CASE when runs are not told apart */
    char *run_label; /* "R2", "R2+R3" for shards of one sweep, or the GPU's name */
    char *name;      /* as shown: "cublas" or "cublas [R2]" */
} kbi_rep_row;

typedef struct kbi_rep_chart {
    char *stem, *title;
    int drawn;
} kbi_rep_chart;

typedef struct kbi_rep_point {
    const char *params_text;
    char *label;  /* the parameters that vary across the plugin's points ("n=4, T=2"), for
                     headings, tables and charts; with one point, its id's parameters */
    size_t *cell; /* [row] -> case index or KBI_NO_CASE */
    size_t first; /* a case of this point */
    /* The baseline variant of its cases ("" if none): each profile section
     * names its own, so two points of one plugin may differ. */
    const char *baseline;
    int mixed_baseline; /* its cases name different baselines */
    kbi_rep_chart bar;  /* chart (a), stem NULL if none */
} kbi_rep_point;

typedef struct kbi_rep_plugin {
    const char *name;
    const char *baseline;  /* the first baseline variant of its cases, "" if none */
    kbi_strlist baselines; /* every baseline variant of its cases, in order of first use */
    kbi_rep_row *rows;
    size_t n_rows;
    kbi_rep_point *points;
    size_t n_points;
    size_t *cases; /* every case of the plugin, file order */
    size_t n_cases;
    int multi_run; /* the same variant and point came from several runs */
    int kind;      /* rate charted and used for the axis */
    /* Charted values are kbi_case_rate's times scale, in unit: 1 for a rate; for the time per
     * item the unit that shows most cases with 1 to 3 digits ("ns", scale 1e9). */
    double scale;
    const char *time_unit;
    char **keys;   /* parameter names in order of first appearance */
    size_t n_keys;
    int *varies;           /* [key]: takes more than one value */
    kbi_rep_chart *charts; /* (b) lines, (c) speedup, (d) roofline */
    size_t n_charts;
    kbi_strlist notes; /* why a chart was not made */
} kbi_rep_plugin;

typedef struct kbi_rep_model {
    const kbi_result_set *set;
    kbi_rep_plugin *plugins;
    size_t n_plugins;
    kbi_run_names runs;
    kbi_strlist stems; /* every chart stem used, to keep them unique */
} kbi_rep_model;

/* Groups the cases of set (which must outlive m); kbi_rep_model_free undoes it. */
void kbi_rep_model_build(kbi_rep_model *m, const kbi_result_set *set);
void kbi_rep_model_free(kbi_rep_model *m);

/* Speedup of case i against its baseline variant: the baseline's median
 * over this case's median, the baseline being the ok case of variant
 * cases[i].baseline at the same plugin and params_text, preferably from the
 * same run, else from another shard of the same sweep, else from a run on a
 * GPU of the same name.
 * Returns 1 with *speedup set, 0 when there is no such baseline or case i
 * has no median. */
int kbi_report_speedup(const kbi_result_set *set, size_t i, double *speedup);

/* Whether case c ran and has a median to show as a timing (not a --sanitize
 * run's). */
int kbi_case_ok(const kbi_case_result *c);
/* Whether variant is the baseline of some section of plugin p. */
int kbi_rep_is_baseline(const kbi_rep_plugin *p, const char *variant);
/* The rate of kind (KBI_RATE_*) of case c (seconds per item for KBI_RATE_TIME_PER_ITEM), with
 * the 95% confidence interval of the median carried over (lo <= v <= hi; both v where the
 * record has no interval); 0 if none. */
int kbi_case_rate(const kbi_case_result *c, int kind, double *v, double *lo, double *hi);
/* The same as p charts it: in p's kind, times p->scale. */
int kbi_rep_rate(const kbi_rep_plugin *p, const kbi_case_result *c, double *v, double *lo,
                 double *hi);
/* The roof of case c (its record's, else the one its counts imply: "fp32" for flops, "memory"
 * for bytes; "" for items) in the units p charts, and its name.  Returns 1 with *value > 0,
 * or 0 when the case has no roof or its run recorded no such ceiling. */
int kbi_rep_roof(const kbi_rep_plugin *p, const kbi_case_result *c, double *value,
                 const char **roof);
/* The item unit of the plugin's cases ("atom-steps"), or "items". */
const char *kbi_rep_item_unit(const kbi_result_set *set, const kbi_rep_plugin *p);
/* The unit of p's charted rate ("GB/s", "ns per spin flip"), in buf when it must be built. */
const char *kbi_rep_kind_label(const kbi_result_set *set, const kbi_rep_plugin *p, char *buf,
                               size_t n);

#endif
