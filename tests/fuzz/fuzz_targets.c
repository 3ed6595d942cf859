/* The bodies of the fuzz targets (see fuzz_targets.h).  Plain C against the
 * harness's internal API; no file system, no plugin is loaded: the profile
 * target validates against descriptors built here, shaped like real
 * plugins (every parameter type, choices, fixed dims counts, baselines). */
#define _GNU_SOURCE /* fmemopen */
#include "fuzz_targets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader.h"
#include "ncu.h"
#include "profile.h"
#include "results.h"

/* An invariant of a parser's contract failed: a finding, like a crash. */
#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond);           \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* ---- profiles ---- */

static int nop_init(const kb_case *c, void **s, char *m)
{
    return KB_ERROR;
}
static int nop_counts(void *s, kb_counts *k, char *m)
{
    return KB_ERROR;
}
static int nop_run(void *s, void *st, char *m)
{
    return KB_ERROR;
}
static int nop_verify(void *s, kb_verdict *v, char *m)
{
    return KB_ERROR;
}
static int nop_teardown(void *s, char *m)
{
    return KB_OK;
}

#define NOP_FUNCTIONS                                                                              \
    .init = nop_init, .counts = nop_counts, .run = nop_run, .verify = nop_verify,                  \
    .teardown = nop_teardown

/* Like tests/plugins/good.c: one parameter of each type. */
static const kb_variant good_variants[] = {
    {"sum", "adds n numbers", KB_HOST, KB_VARIANT_BASELINE},
    {"sleep", "sleeps", KB_HOST, 0},
};
static const kb_param good_params[] = {
    {"n", KB_PARAM_INT, "1000", "how many", NULL},
    {"scale", KB_PARAM_FLOAT, "1.5", "a factor", NULL},
    {"mode", KB_PARAM_STRING, "fast", "a word", "fast|slow"},
    {"shape", KB_PARAM_DIMS, "2x3x4", "a shape", "3"},
    {"usec", KB_PARAM_INT, "200", "sleep length", NULL},
};
static const kb_plugin good = {
    .abi_version = KB_ABI_CURRENT,
    .struct_size = sizeof(kb_plugin),
    .name = "good",
    .variants = good_variants,
    .n_variants = 2,
    .params = good_params,
    .n_params = 5,
    NOP_FUNCTIONS,
};

/* Like plugins/sgemm: dims of exactly three, floats, host and device. */
static const kb_variant gemm_variants[] = {
    {"naive", "", KB_DEVICE, 0},
    {"tiled", "", KB_DEVICE, 0},
    {"cublas", "", KB_DEVICE, KB_VARIANT_BASELINE},
    {"host", "", KB_HOST, 0},
};
static const kb_param gemm_params[] = {
    {"shape", KB_PARAM_DIMS, "64x64x64", "MxNxK", "3"}, {"alpha", KB_PARAM_FLOAT, "1.0", "", NULL},
    {"beta", KB_PARAM_FLOAT, "0.5", "", NULL},          {"layout", KB_PARAM_STRING, "nn", "", NULL},
    {"grid", KB_PARAM_DIMS, "8x8", "any count", NULL},
    {"perm", KB_PARAM_INTS, "[0,1,2]", "an order of the shape's axes", "3"},
    {"pad", KB_PARAM_INTS, "[]", "any list", NULL},
};
static const kb_plugin gemm = {
    .abi_version = KB_ABI_CURRENT,
    .struct_size = sizeof(kb_plugin),
    .name = "gemm",
    .variants = gemm_variants,
    .n_variants = 4,
    .params = gemm_params,
    .n_params = 7,
    NOP_FUNCTIONS,
};

/* Like tests/plugins/misbehave.c: no parameters at all. */
static const kb_variant bare_variants[] = {{"ok", "", KB_HOST, 0}, {"hang", "", KB_HOST, 0}};
static const kb_plugin bare = {
    .abi_version = KB_ABI_CURRENT,
    .struct_size = sizeof(kb_plugin),
    .name = "bare",
    .variants = bare_variants,
    .n_variants = 2,
    NOP_FUNCTIONS,
};

static char *text_of(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    CHECK(text != NULL);
    memcpy(text, data, size);
    text[size] = '\0';
    return text;
}

int kbi_fuzz_profile(const uint8_t *data, size_t size)
{
    kbi_plugin items[] = {
        {.path = "fuzz/libkbench_good.so", .desc = &good},
        {.path = "fuzz/libkbench_gemm.so", .desc = &gemm},
        {.path = "fuzz/libkbench_bare.so", .desc = &bare},
    };
    kbi_plugin_set plugins = {.items = items, .n = 3};
    kbi_profile p;
    kbi_buf errors = {0};
    char *text = text_of(data, size); /* a profile with a NUL is refused before parsing */
    int rc = kbi_profile_parse("fuzz.ini", text, &plugins, &p, &errors);
    if (rc != KBI_OK) {
        /* Every refusal says where and why. */
        CHECK(rc == KBI_ERR_INPUT);
        CHECK(errors.data && strncmp(errors.data, "fuzz.ini:", 9) == 0);
        CHECK(p.n_sections == 0 && p.sections == NULL);
    } else {
        size_t total = 0, n = 0;
        kbi_case *cases = NULL;
        CHECK(errors.data == NULL);
        CHECK(p.run.min_samples <= p.run.max_samples && p.run.timeout > 0);
        for (size_t s = 0; s < p.n_sections; s++) {
            size_t points = 1;
            const kbi_section *sec = &p.sections[s];
            CHECK(sec->n_variants > 0);
            for (size_t a = 0; a < sec->n_axes; a++) {
                CHECK(sec->axes[a].n > 0);
                /* Zipped keys step together: as many values each. */
                for (size_t b = 0; sec->zip && sec->zip[a] >= 0 && b < a; b++)
                    CHECK(sec->zip[b] != sec->zip[a] || sec->axes[b].n == sec->axes[a].n);
            }
            points = kbi_section_points(sec);
            CHECK(points <= KBI_MAX_CASES);
            total += points > KBI_FUZZ_MAX_CASES ? KBI_FUZZ_MAX_CASES + 1
                                                 : points * sec->n_variants;
        }
        if (total <= KBI_FUZZ_MAX_CASES) {
            kbi_strlist repeats = {0};
            CHECK(kbi_profile_cases_noting(&p, &cases, &n, &repeats) == KBI_OK);
            /* Each case once: a repeat (one note each) is left out. */
            CHECK(n + repeats.n == total);
            kbi_strlist_free(&repeats);
            for (size_t i = 1; i < n && n <= 256; i++)
                for (size_t k = 0; k < i; k++)
                    CHECK(strcmp(cases[i].full_id, cases[k].full_id) != 0);
            for (size_t i = 0; i < n; i++) {
                const kbi_case *c = &cases[i];
                const kb_plugin *d = c->section->plugin->desc;
                CHECK(c->index == i);
                CHECK(strncmp(c->id, d->name, strlen(d->name)) == 0);
                /* What the plugin reads back through kb_host. */
                for (int k = 0; k < c->params.n; k++) {
                    const kb_param *def = &c->params.defs[k];
                    int64_t iv, dims[KB_MAX_RANK], ints[KB_MAX_INTS];
                    double fv;
                    const char *sv;
                    int nd;
                    switch (def->type) {
                    case KB_PARAM_INT:
                        CHECK(kbi_param_int(&c->params, def->name, &iv) == KB_OK);
                        break;
                    case KB_PARAM_FLOAT:
                        CHECK(kbi_param_float(&c->params, def->name, &fv) == KB_OK);
                        break;
                    case KB_PARAM_STRING:
                        CHECK(kbi_param_string(&c->params, def->name, &sv) == KB_OK);
                        CHECK(strstr(c->id, sv) != NULL);
                        break;
                    case KB_PARAM_DIMS:
                        CHECK(kbi_param_dims_cap(&c->params, def->name, dims, KB_MAX_RANK,
                                                 &nd) == KB_OK);
                        CHECK(nd >= 1 && nd <= KB_MAX_RANK);
                        for (int j = 0; j < nd; j++)
                            CHECK(dims[j] > 0);
                        /* The 1.0 getter never writes past a 4-array. */
                        CHECK((kbi_param_dims(&c->params, def->name, dims, &nd) == KB_OK) ==
                              (nd <= KB_MAX_DIMS));
                        break;
                    case KB_PARAM_INTS:
                        CHECK(kbi_param_ints(&c->params, def->name, ints, KB_MAX_INTS, &nd) ==
                              KB_OK);
                        CHECK(nd >= 0 && nd <= KB_MAX_INTS);
                        CHECK(strstr(c->id, c->values[k]->text) != NULL);
                        break;
                    }
                }
            }
            kbi_cases_free(cases, n);
        }
        kbi_profile_free(&p);
    }
    kbi_buf_free(&errors);
    free(text);
    return 0;
}

/* ---- results ---- */

static void check_set(const kbi_result_set *set)
{
    for (size_t i = 0; i < set->n_cases; i++) {
        const kbi_case_result *c = &set->cases[i];
        CHECK(c->id && c->plugin && c->variant && c->source && c->params && c->json);
        CHECK((unsigned)c->status < KBI_ST_COUNT);
        CHECK(c->n_samples == 0 || c->samples != NULL);
        CHECK(!c->env || (c->env >= set->envs && c->env < set->envs + set->n_envs));
        for (size_t k = 0; k < c->n_metrics; k++)
            CHECK(c->metrics[k].name && c->metrics[k].unit);
    }
    /* Each warning names its line, or sums up the warnings of one kind past the first few. */
    for (size_t i = 0; i < set->n_warnings; i++)
        CHECK(set->warnings[i] && (strncmp(set->warnings[i], "fuzz.jsonl:", 11) == 0 ||
                                   strncmp(set->warnings[i], "\u2026 and ", 8) == 0));
}

static int read_into(kbi_result_set *set, const uint8_t *data, size_t size)
{
    char err[KBI_ERR_SIZE] = "";
    /* fmemopen refuses an empty buffer on older C libraries. */
    static const uint8_t nothing[1] = {0};
    FILE *f = fmemopen((void *)(size ? data : nothing), size ? size : 1, "r");
    int rc;
    CHECK(f != NULL);
    if (!size)
        (void)fgetc(f);
    rc = kbi_results_read(set, f, "fuzz.jsonl", err);
    fclose(f);
    CHECK(rc == KBI_OK || rc == KBI_ERR_INPUT || rc == KBI_ERR_IO);
    if (rc != KBI_OK)
        CHECK(strncmp(err, "fuzz.jsonl", 10) == 0);
    return rc;
}

/* A second view of the same bytes, past JSON syntax: byte 0 picks a field
 * of a valid env, case or end record, the rest is that field's value (any
 * JSON).  Type confusion in every field is reached at once, instead of
 * through mutations that keep a whole line valid JSON. */
static void read_one_field(const uint8_t *data, size_t size)
{
    static const struct {
        const char *record, *field;
    } fields[] = {
        {"case", "samples"}, {"case", "stats"},   {"case", "counts"},      {"case", "rates"},
        {"case", "verify"},  {"case", "metrics"}, {"case", "clocks"},      {"case", "params"},
        {"case", "id"},      {"case", "status"},  {"case", "is_baseline"}, {"case", "message"},
        {"case", "run_id"},  {"case", "version"}, {"case", "plugin"},      {"case", "target"},
        {"env", "device"},   {"env", "ceilings"}, {"env", "run_id"},       {"env", "git_revision"},
        {"end", "complete"}, {"end", "run_id"},   {"case", "record"},      {"case", "schema"},
    };
    const size_t n_fields = sizeof fields / sizeof fields[0];
    json_t *value, *env, *rec, *end;
    kbi_result_set set = {0};
    kbi_buf text = {0};
    char *line;
    if (size < 1)
        return;
    value = json_loadb((const char *)data + 1, size - 1, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    if (!value)
        return;
    env = json_pack("{s:s, s:i, s:s, s:s, s:{s:s, s:f}, s:{s:f, s:f}}", "schema",
                    KBI_RESULTS_SCHEMA, "version", KBI_RESULTS_VERSION, "record", "env", "run_id",
                    "r", "device", "name", "GPU", "sm_clock_mhz", 1980.0, "ceilings",
                    "bandwidth_gbs", 4800.0, "peak_gflops", 67000.0);
    rec = json_pack("{s:s, s:i, s:s, s:s, s:s, s:s, s:s, s:s, s:[f, f, f]}", "schema",
                    KBI_RESULTS_SCHEMA, "version", KBI_RESULTS_VERSION, "record", "case", "run_id",
                    "r", "id", "p/v/n=1", "plugin", "p", "variant", "v", "status", "ok", "samples",
                    1e-3, 2e-3, 3e-3);
    end = json_pack("{s:s, s:i, s:s, s:s, s:b}", "schema", KBI_RESULTS_SCHEMA, "version",
                    KBI_RESULTS_VERSION, "record", "end", "run_id", "r", "complete", 1);
    {
        size_t k = data[0] % n_fields;
        json_t *target = strcmp(fields[k].record, "env") == 0   ? env
                         : strcmp(fields[k].record, "end") == 0 ? end
                                                                : rec;
        json_object_set(target, fields[k].field, value);
    }
    json_decref(value);
    for (json_t **r = (json_t *[]){env, rec, end, NULL}; *r; r++) {
        line = json_dumps(*r, JSON_COMPACT | JSON_ENCODE_ANY);
        if (line)
            kbi_buf_printf(&text, "%s\n", line);
        free(line);
        json_decref(*r);
    }
    if (text.data) {
        read_into(&set, (const uint8_t *)text.data, text.len);
        check_set(&set);
        kbi_results_free(&set);
    }
    kbi_buf_free(&text);
}

int kbi_fuzz_results(const uint8_t *data, size_t size)
{
    kbi_result_set set = {0};
    size_t n_cases, n_envs, n_warnings;
    int rc;
    read_one_field(data, size);
    rc = read_into(&set, data, size);
    if (rc != KBI_OK)
        CHECK(set.n_cases == 0 && set.n_envs == 0 && set.n_warnings == 0);
    check_set(&set);
    /* The same file again into the same set, as report and compare merge
     * several files: a refused file leaves the set as it was. */
    n_cases = set.n_cases;
    n_envs = set.n_envs;
    n_warnings = set.n_warnings;
    rc = read_into(&set, data, size);
    if (rc != KBI_OK)
        CHECK(set.n_cases == n_cases && set.n_envs == n_envs && set.n_warnings == n_warnings);
    else
        CHECK(set.n_cases == 2 * n_cases && set.n_envs == 2 * n_envs);
    check_set(&set);
    if (set.n_cases > 0) {
        kbi_results_drop_case(&set, set.n_cases / 2);
        check_set(&set);
    }
    kbi_results_free(&set);
    return 0;
}

/* ---- ncu CSV ---- */

int kbi_fuzz_ncu_csv(const uint8_t *data, size_t size)
{
    char err[KBI_ERR_SIZE] = "", *text = text_of(data, size);
    json_t *kernels = kbi_ncu_parse_csv(text, "fuzz.csv", err);
    if (!kernels) {
        CHECK(strncmp(err, "fuzz.csv", 8) == 0);
    } else {
        size_t i;
        json_t *k;
        CHECK(json_is_array(kernels));
        json_array_foreach(kernels, i, k)
        {
            CHECK(json_is_object(k));
            CHECK(json_is_object(json_object_get(k, "metrics")));
        }
        json_decref(kernels);
    }
    free(text);
    return 0;
}
