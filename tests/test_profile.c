/* Profiles: parsing, axes, and the exact FILE:LINE message of every kind of
 * bad input, against the fixture plugins. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "loader.h"
#include "profile.h"

static kbi_plugin_set plugins;

static void load_fixtures(void)
{
    const char *dirs[] = {KBENCH_TEST_FIXTURES, NULL};
    int req[] = {1};
    char err[KBI_ERR_SIZE];
    cr_assert_eq(kbi_plugins_load(dirs, req, &plugins, err), KBI_OK, "%s", err);
}

static void unload(void)
{
    kbi_plugins_free(&plugins);
}

TestSuite(profile, .init = load_fixtures, .fini = unload);

/* Parses text; returns the error text (caller frees) or NULL on success. */
static char *parse_errors(const char *text, kbi_profile *p)
{
    kbi_buf errors = {0};
    int rc = kbi_profile_parse("t.ini", text, &plugins, p, &errors);
    if (rc == KBI_OK) {
        kbi_buf_free(&errors);
        return NULL;
    }
    cr_assert_eq(rc, KBI_ERR_INPUT);
    cr_assert_not_null(errors.data);
    return errors.data;
}

static void expect_error(const char *text, const char *want)
{
    kbi_profile p;
    char *got = parse_errors(text, &p);
    cr_assert_not_null(got, "expected an error for:\n%s", text);
    cr_expect_str_eq(got, want);
    free(got);
}

Test(profile, good_profile_and_defaults)
{
    kbi_profile p;
    kbi_case *cases;
    size_t n;
    char *err = parse_errors("[run]\nwarmup = 2\ncache = hot\nseed = 7\ntimeout = 10\n"
                             "[good]\nvariants = sleep, sum\nbaseline = sum\nn = 8, 16\n",
                             &p);
    cr_assert_null(err, "%s", err);
    cr_expect_eq(p.run.warmup, 2);
    cr_expect_eq(p.run.cache, KBI_CACHE_HOT);
    cr_expect_eq(p.run.seed, 7);
    cr_expect_float_eq(p.run.max_time, 5.0, 1e-12); /* timeout / 2 */
    cr_expect_eq(p.run.min_samples, 10);              /* default */
    cr_assert_eq(p.n_sections, 1);
    cr_expect_eq(p.sections[0].n_variants, 2);
    kbi_profile_cases(&p, &cases, &n);
    cr_assert_eq(n, 4);
    /* Points in order, variants in profile order within a point. */
    cr_expect_str_eq(cases[0].id, "good/sleep/n=8,scale=1.5,mode=fast,shape=2x3x4,usec=200");
    cr_expect_str_eq(cases[1].id, "good/sum/n=8,scale=1.5,mode=fast,shape=2x3x4,usec=200");
    cr_expect_str_eq(cases[2].id, "good/sleep/n=16,scale=1.5,mode=fast,shape=2x3x4,usec=200");
    cr_expect_eq(cases[3].index, 3);
    /* The plugin reads its values through the host getters. */
    int64_t v;
    const char *s;
    int64_t dims[KB_MAX_DIMS];
    int nd;
    cr_expect_eq(kbi_param_int(&cases[2].params, "n", &v), KB_OK);
    cr_expect_eq(v, 16);
    cr_expect_eq(kbi_param_string(&cases[2].params, "mode", &s), KB_OK);
    cr_expect_str_eq(s, "fast");
    cr_expect_eq(kbi_param_dims(&cases[2].params, "shape", dims, &nd), KB_OK);
    cr_expect_eq(nd, 3);
    cr_expect_eq(dims[2], 4);
    cr_expect_eq(kbi_param_int(&cases[2].params, "scale", &v), KB_BAD_PARAM); /* wrong type */
    cr_expect_eq(kbi_param_int(&cases[2].params, "nope", &v), KB_BAD_PARAM);
    kbi_cases_free(cases, n);
    kbi_profile_free(&p);
}

Test(profile, product_of_axes)
{
    kbi_profile p;
    kbi_case *cases;
    size_t n;
    char *err = parse_errors("[good]\nvariants = sum\nn = 1:8:*2\nmode = fast, slow\n"
                             "scale = 0:1:+0.5\n",
                             &p);
    cr_assert_null(err, "%s", err);
    kbi_profile_cases(&p, &cases, &n);
    cr_expect_eq(n, 4 * 2 * 3);
    cr_expect_str_eq(cases[0].id, "good/sum/n=1,scale=0,mode=fast,shape=2x3x4,usec=200");
    cr_expect_str_eq(cases[1].id, "good/sum/n=1,scale=0,mode=slow,shape=2x3x4,usec=200");
    cr_expect_str_eq(cases[2].id, "good/sum/n=1,scale=0.5,mode=fast,shape=2x3x4,usec=200");
    cr_expect_str_eq(cases[23].id, "good/sum/n=8,scale=1,mode=slow,shape=2x3x4,usec=200");
    kbi_cases_free(cases, n);
    kbi_profile_free(&p);
}

Test(profile, ranges_and_suffixes)
{
    char **v;
    size_t n;
    char err[KBI_ERR_SIZE];
    cr_assert_eq(kbi_expand_list("1024:16384:*2", KB_PARAM_INT, &v, &n, err), KBI_OK);
    cr_assert_eq(n, 5);
    cr_expect_str_eq(v[0], "1024");
    cr_expect_str_eq(v[4], "16384");
    kbi_strv_free(v, n);
    cr_assert_eq(kbi_expand_list("0:100:+10", KB_PARAM_INT, &v, &n, err), KBI_OK);
    cr_expect_eq(n, 11);
    kbi_strv_free(v, n);
    cr_assert_eq(kbi_expand_list("1:10:*3, 50", KB_PARAM_INT, &v, &n, err), KBI_OK);
    cr_expect_eq(n, 4); /* 1 3 9 50: the end is not forced in */
    kbi_strv_free(v, n);
    cr_assert_eq(kbi_expand_list("0.1:0.3:+0.1", KB_PARAM_FLOAT, &v, &n, err), KBI_OK);
    cr_expect_eq(n, 3); /* no lost end point to rounding */
    kbi_strv_free(v, n);
    cr_expect_eq(kbi_expand_list("8:1:*2", KB_PARAM_INT, &v, &n, err), KBI_ERR_INPUT);
    cr_expect_eq(kbi_expand_list("1:8:*1", KB_PARAM_INT, &v, &n, err), KBI_ERR_INPUT);
    cr_expect_eq(kbi_expand_list("1:8", KB_PARAM_INT, &v, &n, err), KBI_ERR_INPUT);

    kb_param p = {"bytes", KB_PARAM_INT, "1", "", NULL};
    kbi_value val;
    cr_assert_eq(kbi_value_parse(&p, "256Mi", &val, err), KBI_OK);
    cr_expect_eq(val.i, 256LL << 20);
    cr_expect_str_eq(val.text, "268435456");
    kbi_value_free(&val);
    cr_assert_eq(kbi_value_parse(&p, "2k", &val, err), KBI_OK);
    cr_expect_eq(val.i, 2000);
    kbi_value_free(&val);
}

Test(profile, continuation_lines_extend_a_list)
{
    kbi_profile p;
    char *err = parse_errors("[good]\nvariants = sum\nn = 1, 2,\n    3, 4\n", &p);
    cr_assert_null(err, "%s", err);
    cr_expect_eq(p.sections[0].axes[0].n, 4);
    kbi_profile_free(&p);
}

Test(profile, unknown_section)
{
    expect_error("[run]\n\n[nosuch]\nn = 1\n",
                 "t.ini:3: unknown section [nosuch]: no plugin of that name is loaded, expected "
                 "[run] or a plugin (good, hot, misbehave, oob, rogue, stateful, v10)\n");
}

Test(profile, unknown_key_in_run)
{
    expect_error("[run]\nwarmpu = 3\n",
                 "t.ini:2: unknown key 'warmpu' in [run], expected one of warmup, min_samples, "
                 "max_samples, min_time, max_time, max_noise, timeout, cache, device, seed, "
                 "bandwidth, peak_gflops\n");
}

Test(profile, unknown_key_in_plugin)
{
    expect_error("[good]\nsize = 3\n",
                 "t.ini:2: unknown key 'size' in [good], expected one of: n, scale, mode, shape, "
                 "usec, variants, baseline\n");
}

Test(profile, unknown_variant)
{
    expect_error("[good]\nvariants = sum, fast\n",
                 "t.ini:2: unknown variant 'fast' of good, expected one of: sum, sleep (or all)\n");
}

Test(profile, bad_number)
{
    expect_error("[good]\nn = 12x\n",
                 "t.ini:2: n: '12x' is not an integer, expected digits with an optional k/M/G/T "
                 "or Ki/Mi/Gi/Ti suffix\n");
    expect_error("[run]\nmin_time = fast\n",
                 "t.ini:2: min_time = 'fast' is not a number, expected a number\n");
    expect_error("[run]\nmin_samples = 0\n",
                 "t.ini:2: min_samples = 0 is out of range, expected 1 to 1e+07\n");
}

Test(profile, bad_choice_and_shape)
{
    expect_error("[good]\nmode = medium\n",
                 "t.ini:2: mode: 'medium' is not a choice of mode, expected one of fast|slow\n");
    expect_error("[good]\nshape = 2x3\n",
                 "t.ini:2: shape: '2x3' has 2 dimensions, expected 3 joined by 'x'\n");
    expect_error("[good]\nshape = 2x0x3\n",
                 "t.ini:2: shape: '2x0x3' is not a shape, expected up to 4 positive integers "
                 "joined by 'x', such as 4096x4096x256\n");
}

Test(profile, empty_list_and_item)
{
    expect_error("[good]\nn =\n", "t.ini:2: n: empty list, expected at least one value\n");
    expect_error("[good]\nn = 1,,2\n",
                 "t.ini:2: n: empty item in list '1,,2', expected values separated by single "
                 "commas\n");
}

Test(profile, duplicate_key_and_section)
{
    expect_error("[good]\nn = 1\nscale = 2\nn = 3\n",
                 "t.ini:4: duplicate key 'n' in [good], first set at line 2; expected each key "
                 "once (a list goes in one value)\n");
    expect_error("[run]\nwarmup = 1\n[run]\nseed = 2\n",
                 "t.ini:3: duplicate section [run], first at line 1; expected each section once\n");
}

Test(profile, bad_cache_and_baseline)
{
    expect_error("[run]\ncache = warm\n",
                 "t.ini:2: cache = 'warm' is not a cache mode, expected cold or hot\n");
    expect_error("[good]\nvariants = sleep\nbaseline = sum\n",
                 "t.ini:3: baseline 'sum' is not among the variants of [good], expected it in "
                 "the variants list\n");
}

Test(profile, syntax_error_and_key_outside_section)
{
    expect_error("[run]\nthis line has no equals sign\n",
                 "t.ini:2: cannot read this line, expected [section], key = value, or a comment "
                 "starting with ; or #\n");
    expect_error("n = 3\n[run]\n",
                 "t.ini:1: key 'n' before any section, expected it under [run] or a plugin "
                 "section\n");
}

Test(profile, every_error_is_reported)
{
    kbi_profile p;
    char *got = parse_errors("[run]\nwarmup = x\n[good]\nn = y\nmode = z\n", &p);
    cr_assert_not_null(got);
    cr_expect(strstr(got, "t.ini:2:") && strstr(got, "t.ini:4:") && strstr(got, "t.ini:5:"),
              "%s", got);
    free(got);
}

Test(profile, long_line_is_refused_not_split)
{
    char text[600];
    strcpy(text, "[good]\nn = 1");
    for (int i = 0; i < 100; i++)
        strcat(text, ", 2");
    strcat(text, "\n");
    expect_error(text, "t.ini:2: line is longer than 198 characters, expected a shorter line "
                       "(continue a list on the next line, indented)\n");
}

Test(profile, duplicates_are_reported_in_list_order)
{
    expect_error("[good]\nn = 3, 1k, 2, 1000, 3\n",
                 "t.ini:2: n: value 1000 listed twice, expected each once\n"
                 "t.ini:2: n: value 3 listed twice, expected each once\n");
}

Test(profile, a_long_range_parses_at_once)
{
    /* 100000 values (the most one list may hold): found by the fuzzer to
     * take 15 s (quadratic growth and duplicate check), now linear-ish. */
    kbi_profile p;
    kbi_case *cases;
    size_t n;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    char *got = parse_errors("[good]\nvariants = sum\nn = 1:100000:+1\n", &p);
    cr_assert_null(got, "%s", got);
    kbi_profile_cases(&p, &cases, &n);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    cr_expect_eq(n, 100000);
    cr_expect_lt((double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec), 3.0);
    kbi_cases_free(cases, n);
    kbi_profile_free(&p);
    expect_error("[good]\nn = 1:100000:+1, 1\n",
                 "t.ini:2: n: value 1 listed twice, expected each once\n");
}

Test(profile, too_many_cases_are_refused)
{
    /* 100000^4 would wrap the case count; past KBI_MAX_CASES is an error. */
    expect_error("[good]\nn = 1:100000:+1\nusec = 1:100000:+1\n",
                 "t.ini:1: [good] takes the profile past 1000000 cases, expected fewer values "
                 "in its lists (or a --filter on a smaller profile)\n");
    expect_error("[good]\nvariants = sum\nn = 1:1000:+1\n"
                 "[good.more]\nvariants = sum\nn = 1:1000:+1\nusec = 1:1000:+1\n",
                 "t.ini:4: [good.more] takes the profile past 1000000 cases, expected fewer "
                 "values in its lists (or a --filter on a smaller profile)\n");
}

Test(profile, sanitize_profile_covers_every_device_variant)
{
    /* profiles/sanitize.ini (kbench run --sanitize) runs every device
     * variant of every plugin at small, odd sizes. */
    const char *dirs[] = {KBENCH_TEST_PLUGINS, NULL};
    int req[] = {1};
    kbi_plugin_set real;
    kbi_profile p;
    kbi_buf errors = {0};
    kbi_case *cases;
    size_t n;
    char err[KBI_ERR_SIZE], path[4096];
    cr_assert_eq(kbi_plugins_load(dirs, req, &real, err), KBI_OK, "%s", err);
    snprintf(path, sizeof path, "%s/profiles/sanitize.ini", KBENCH_TEST_SOURCE_DIR);
    cr_assert_eq(kbi_profile_load(path, &real, &p, &errors), KBI_OK, "%s",
                 errors.data ? errors.data : "");
    kbi_profile_cases(&p, &cases, &n);
    for (size_t i = 0; i < real.n; i++) {
        const kb_plugin *d = real.items[i].desc;
        for (int v = 0; v < d->n_variants; v++) {
            size_t seen = 0;
            if (d->variants[v].target != KB_DEVICE)
                continue;
            for (size_t k = 0; k < n; k++)
                seen += cases[k].section->plugin->desc == d && cases[k].variant == v;
            cr_expect_geq(seen, 2, "%s/%s: no small cases in sanitize.ini", d->name,
                          d->variants[v].name);
        }
    }
    cr_expect_lt(p.run.timeout, 121.0, "the sanitizer multiplies it by ten");
    cr_expect_gt(p.run.bandwidth_gbs, 0.0, "ceilings given, so the probe measures nothing");
    kbi_cases_free(cases, n);
    kbi_profile_free(&p);
    kbi_buf_free(&errors);
    kbi_plugins_free(&real);
}

Test(profile, missing_file)
{
    kbi_profile p;
    kbi_buf errors = {0};
    cr_expect_eq(kbi_profile_load("/nonexistent/x.ini", &plugins, &p, &errors), KBI_ERR_IO);
    cr_expect_str_eq(errors.data, "/nonexistent/x.ini: cannot open profile: No such file or "
                                  "directory\n");
    kbi_buf_free(&errors);
}

Test(profile, shipped_profiles_parse)
{
    /* Every profile in profiles/ must parse against the built plugins. */
    const char *dirs[] = {KBENCH_TEST_PLUGINS, NULL};
    int req[] = {1};
    const char *names[] = {"smoke.ini", "default.ini", "stream.ini"};
    kbi_plugin_set real;
    char err[KBI_ERR_SIZE];
    cr_assert_eq(kbi_plugins_load(dirs, req, &real, err), KBI_OK, "%s", err);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[4096];
        kbi_profile p;
        kbi_buf errors = {0};
        snprintf(path, sizeof path, "%s/profiles/%s", KBENCH_TEST_SOURCE_DIR, names[i]);
        cr_expect_eq(kbi_profile_load(path, &real, &p, &errors), KBI_OK, "%s",
                     errors.data ? errors.data : "");
        kbi_buf_free(&errors);
        kbi_profile_free(&p);
    }
    kbi_plugins_free(&real);
}
