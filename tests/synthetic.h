/* Synthetic results files for the tests of verbs that read them (export, baseline): an env
 * record naming a GPU, case records written from kbi_case_result by the harness's own writer,
 * and an end record.  Include after helpers.h. */
#ifndef KBENCH_TEST_SYNTHETIC_H
#define KBENCH_TEST_SYNTHETIC_H

#include <math.h>

#include "results.h"
#include "stats.h"

/* Samples per synthetic case. */
#define SYN_SAMPLES 12

/* Case c: plugin/variant/params_text with params (JSON text, parsed), status ok, SYN_SAMPLES
 * host-timed samples spread +-0.6% around t seconds; no counts, no metrics.  Free with
 * syn_free. */
static inline void syn_case(kbi_case_result *c, const char *plugin, const char *variant,
                            const char *params, const char *params_text, double t)
{
    kbi_buf id = {0};
    memset(c, 0, sizeof *c);
    kbi_buf_printf(&id, "%s/%s/%s", plugin, variant, params_text);
    c->id = id.data;
    c->plugin = (char *)plugin;
    c->variant = (char *)variant;
    c->target = "device";
    c->baseline = "";
    c->params = json_loads(params, 0, NULL);
    cr_assert_not_null(c->params, "bad params %s", params);
    c->params_text = (char *)params_text;
    c->size_param = "";
    c->message = "";
    c->timing = "events";
    c->cache = "cold";
    c->item_unit = "";
    c->batch = 1;
    c->prepare_s = c->wall_s = c->cpu_wait = NAN;
    c->samples = kbi_xcalloc(SYN_SAMPLES, sizeof *c->samples);
    c->n_samples = SYN_SAMPLES;
    for (int i = 0; i < SYN_SAMPLES; i++)
        c->samples[i] = t * (1 + 0.001 * (i - SYN_SAMPLES / 2));
    c->has_stats = 1;
    kbi_stats_compute(c->samples, c->n_samples, &c->stats);
}

/* c as a case that did not run to a measurement: status, message, no samples. */
static inline void syn_fail(kbi_case_result *c, kbi_status status, const char *message)
{
    c->status = status;
    c->message = (char *)message;
    free(c->samples);
    c->samples = NULL;
    c->n_samples = 0;
    c->has_stats = 0;
    memset(&c->stats, 0, sizeof c->stats);
}

static inline void syn_free(kbi_case_result *c)
{
    free(c->id);
    free(c->samples);
    json_decref(c->params);
}

/* Writes a run to path: the env record env, the cases, an end record. */
static inline void syn_write_run(const char *path, const char *run_id, json_t *env,
                                 kbi_case_result *cases, size_t n)
{
    kbi_results_writer w;
    char err[KBI_ERR_SIZE];
    json_t *end = json_pack("{s:b,s:i}", "complete", 1, "cases", (int)n);
    cr_assert_eq(kbi_results_open(&w, path, run_id, err), KBI_OK, "%s", err);
    cr_assert_eq(kbi_results_write(&w, "env", env, err), KBI_OK, "%s", err);
    for (size_t i = 0; i < n; i++) {
        json_t *rec = kbi_case_record_json(&cases[i]);
        cr_assert_eq(kbi_results_write(&w, "case", rec, err), KBI_OK, "%s", err);
        json_decref(rec);
    }
    cr_assert_eq(kbi_results_write(&w, "end", end, err), KBI_OK, "%s", err);
    kbi_results_close(&w);
    json_decref(end);
}

/* syn_write_run of cases, numbered in order, with an env record of GPU gpu (no device for
 * NULL) on a 2-core host. */
static inline void syn_write(const char *path, const char *gpu, const char *run_id,
                             kbi_case_result *cases, size_t n)
{
    json_t *env =
        json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:i,s:{s:s,s:i,s:f}}", "time", "2026-12-01T10:00:00Z",
                  "host", "testhost", "kbench_version", "0.1.0", "git_revision", "0123456789abcdef",
                  "build_type", "Release", "profile", "profiles/test.ini", "cuda_runtime_version",
                  13000, "cpu", "model", "Test CPU", "logical_cores", 2, "max_mhz", 3000.0);
    json_object_set_new(env, "device", gpu ? json_pack("{s:s}", "name", gpu) : json_null());
    json_object_set_new(env, "driver_version", json_string("580.159.04"));
    for (size_t i = 0; i < n; i++)
        cases[i].index = (long)i;
    syn_write_run(path, run_id, env, cases, n);
    json_decref(env);
}

#endif
