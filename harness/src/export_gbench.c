/* `kbench export --format gbench`: Google Benchmark's JSON (json_schema_version 1), as its
 * JSON reporter writes it and its tools/compare.py and github-action-benchmark's `googlecpp`
 * tool read it:
 *
 *   {"context": {"date", "host_name", "executable", "num_cpus", "mhz_per_cpu", "caches",
 *                "load_avg", "library_version", "library_build_type", "json_schema_version",
 *                and extra context as strings: gpu, gpu_driver, ...},
 *    "benchmarks": [{"name", "family_index", "per_family_instance_index", "run_name",
 *                    "run_type": "iteration", "repetitions", "repetition_index", "threads",
 *                    "iterations", "real_time", "cpu_time", "time_unit", counters..., "label"}]}
 *
 * A family is a plugin/variant (Google Benchmark's benchmark function), an instance one of its
 * parameter points.  Extra context fields are strings, as Google Benchmark's own
 * (--benchmark_context) are. */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "export.h"

/* Fields of a benchmark object that a counter must not take. */
static const char *const reserved[] = {"name",
                                       "family_index",
                                       "per_family_instance_index",
                                       "run_name",
                                       "run_type",
                                       "repetitions",
                                       "repetition_index",
                                       "threads",
                                       "iterations",
                                       "real_time",
                                       "cpu_time",
                                       "time_unit",
                                       "label",
                                       "error_occurred",
                                       "error_message",
                                       "skipped",
                                       "skip_message",
                                       "aggregate_name",
                                       "aggregate_unit",
                                       "flops_per_second",
                                       "bytes_per_second",
                                       "items_per_second"};

/* The counter name of metric m: its own, or metric_NAME where that is taken. */
static void counter_name(const kbi_metric *m, char *out, size_t n)
{
    for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++)
        if (strcmp(m->name, reserved[i]) == 0) {
            snprintf(out, n, "metric_%s", m->name);
            return;
        }
    snprintf(out, n, "%s", m->name);
}

/* A string field of env (or of its object `in`), or "" when absent. */
static const char *env_str(const json_t *env, const char *in, const char *key)
{
    const json_t *o = in ? json_object_get(env, in) : env;
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

static void put_string(json_t *o, const char *key, const char *value)
{
    json_object_set_new(o, key, json_string(value));
}

/* A number field as the text Google Benchmark's extra context holds, "" when absent. */
static void put_number_text(json_t *o, const char *key, const json_t *v)
{
    char text[64] = "";
    if (json_is_number(v))
        snprintf(text, sizeof text, "%.10g", json_number_value(v));
    put_string(o, key, text);
}

static json_t *context_of(const kbi_export_set *x)
{
    const kbi_env_record *e = x->set->n_envs ? &x->set->envs[0] : NULL;
    const json_t *env = e ? e->json : NULL;
    const json_t *cpu = json_object_get(env, "cpu");
    json_t *c = json_object();
    char build[32], version[96], runs[32];
    double mhz = json_number_value(json_object_get(cpu, "max_mhz"));
    size_t i;
    snprintf(build, sizeof build, "%s", env_str(env, NULL, "build_type"));
    for (i = 0; build[i]; i++)
        build[i] = (char)tolower((unsigned char)build[i]);
    snprintf(version, sizeof version, "kbench %s", env_str(env, NULL, "kbench_version"));
    snprintf(runs, sizeof runs, "%zu", x->set->n_envs);
    put_string(c, "date", env_str(env, NULL, "time"));
    put_string(c, "host_name", env_str(env, NULL, "host"));
    put_string(c, "executable", "kbench");
    json_object_set_new(c, "num_cpus",
                        json_integer(json_integer_value(json_object_get(cpu, "logical_cores"))));
    json_object_set_new(c, "mhz_per_cpu", json_integer((json_int_t)llround(mhz > 0 ? mhz : 0)));
    json_object_set_new(c, "caches", json_array());
    json_object_set_new(c, "load_avg", json_array());
    put_string(c, "library_version", version);
    put_string(c, "library_build_type", build);
    json_object_set_new(c, "json_schema_version", json_integer(1));
    put_string(c, "gpu", e ? e->device_name : "");
    put_string(c, "gpu_driver", env_str(env, NULL, "driver_version"));
    put_number_text(c, "cuda_runtime", json_object_get(env, "cuda_runtime_version"));
    put_number_text(c, "cuda_driver", json_object_get(env, "cuda_driver_version"));
    put_string(c, "cpu", env_str(env, "cpu", "model"));
    put_string(c, "git_revision", e ? e->git_revision : "");
    put_string(c, "profile", env_str(env, NULL, "profile"));
    put_string(c, "kbench_runs", runs);
    return c;
}

/* The counters and the label of case c into b. */
static void add_counters(json_t *b, const kbi_case_result *c)
{
    kbi_export_rate rates[3];
    size_t n = kbi_export_rates(c, rates);
    kbi_buf label = {0};
    for (size_t i = 0; i < n; i++)
        json_object_set_new(b, rates[i].counter, json_real(rates[i].per_run / c->stats.median));
    kbi_export_metrics ms;
    kbi_export_metrics_of(c, &ms);
    for (size_t i = 0; i < ms.n; i++) {
        const kbi_metric *m = ms.all[i];
        char name[96];
        counter_name(m, name, sizeof name);
        json_object_set_new(b, name, json_real(m->value));
        kbi_buf_printf(&label, "%s%s [%s, %s]", label.len ? "; " : "", name,
                       m->unit[0] ? m->unit : "1",
                       m->better == KB_BETTER_NONE     ? "no better direction"
                       : m->better == KB_BETTER_HIGHER ? "higher is better"
                                                       : "lower is better");
    }
    kbi_export_metrics_free(&ms);
    if (label.len)
        put_string(b, "label", label.data);
    kbi_buf_free(&label);
}

json_t *kbi_export_gbench(const kbi_export_set *x)
{
    json_t *benchmarks = json_array(), *families = json_object(), *instances = json_object();
    for (size_t i = 0; i < x->n; i++) {
        const kbi_case_result *c = x->cases[i];
        json_t *b = json_object(), *family;
        char key[300];
        json_int_t f, instance;
        double t = c->stats.median * x->per_second;
        long batch = c->batch > 0 ? c->batch : 1;
        snprintf(key, sizeof key, "%.140s/%.140s", c->plugin, c->variant);
        family = json_object_get(families, key);
        f = family ? json_integer_value(family) : (json_int_t)json_object_size(families);
        instance = json_integer_value(json_object_get(instances, key));
        json_object_set_new(families, key, json_integer(f));
        json_object_set_new(instances, key, json_integer(instance + 1));
        put_string(b, "name", c->id);
        json_object_set_new(b, "family_index", json_integer(f));
        json_object_set_new(b, "per_family_instance_index", json_integer(instance));
        put_string(b, "run_name", c->id);
        put_string(b, "run_type", "iteration");
        json_object_set_new(b, "repetitions", json_integer(1));
        json_object_set_new(b, "repetition_index", json_integer(0));
        json_object_set_new(b, "threads", json_integer(1));
        json_object_set_new(b, "iterations", json_integer((json_int_t)c->n_samples * batch));
        json_object_set_new(b, "real_time", json_real(t));
        json_object_set_new(b, "cpu_time", json_real(t));
        put_string(b, "time_unit", x->time_unit);
        add_counters(b, c);
        json_array_append_new(benchmarks, b);
    }
    json_decref(families);
    json_decref(instances);
    return json_pack("{s:o,s:o}", "context", context_of(x), "benchmarks", benchmarks);
}
