/* Profiles: parsing, axes, and the exact FILE:LINE message of every kind of
 * bad input, against the fixture plugins. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* Sections that overlap (md.ini's system-S tables repeat its Table 1 points): each case runs
 * once, where it first appears, and the profile says where the repeat is. */
Test(profile, a_case_repeated_by_another_section_runs_once)
{
    kbi_profile p;
    kbi_case *cases;
    size_t n;
    kbi_strlist notes = {0};
    char *err = parse_errors("[good]\nvariants = sum, sleep\nn = 8, 16\n"
                             "[good.more]\nvariants = sum\nn = 16, 32\n",
                             &p);
    cr_assert_null(err, "%s", err);
    kbi_profile_cases_noting(&p, &cases, &n, &notes);
    cr_assert_eq(n, 5, "4 + 2 cases, one of them twice: %zu", n);
    for (size_t i = 0; i < n; i++) {
        cr_expect_eq(cases[i].index, i, "renumbered");
        for (size_t k = 0; k < i; k++)
            cr_expect_str_neq(cases[i].full_id, cases[k].full_id);
    }
    cr_expect_str_eq(cases[2].section->name, "good", "kept where it first appears");
    cr_expect_str_eq(cases[4].id, "good/sum/n=32,scale=1.5,mode=fast,shape=2x3x4,usec=200");
    cr_assert_eq(notes.n, 1);
    cr_expect_str_eq(notes.s[0],
                     "t.ini:4: [good.more] repeats "
                     "good/sum/n=16,scale=1.5,mode=fast,shape=2x3x4,usec=200, a case of [good] "
                     "(line 1): it runs once, there");
    kbi_strlist_free(&notes);
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

Test(profile, an_inline_comment_on_a_continuation_line_is_a_comment)
{
    kbi_profile p;
    char *err = parse_errors("[good]\nvariants = sum ; the first\nn = 1, 2, ; two\n"
                             "    3, 4 ; an indented line continues the list\n",
                             &p);
    cr_assert_null(err, "%s", err);
    cr_expect_eq(p.sections[0].axes[0].n, 4);
    kbi_profile_free(&p);
}

Test(profile, a_byte_order_mark_hides_nothing)
{
    expect_error("\xEF\xBB\xBF[good]\nvariants = sum\nbogus = 1\n",
                 "t.ini:3: unknown key 'bogus' in [good], expected one of: n, scale, mode, shape, "
                 "usec, variants, baseline, zip\n");
}

/* The profile example in README.md parses as printed. */
Test(profile, the_readme_example_parses)
{
    const char *dirs[] = {KBENCH_TEST_PLUGINS, NULL};
    int req[] = {1};
    kbi_plugin_set real;
    kbi_profile p;
    kbi_buf errors = {0};
    char path[4096], err[KBI_ERR_SIZE], *readme, *start, *end;
    FILE *f;
    long n;
    snprintf(path, sizeof path, "%s/README.md", KBENCH_TEST_SOURCE_DIR);
    cr_assert_not_null(f = fopen(path, "r"));
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    readme = calloc(1, (size_t)n + 1);
    cr_assert_eq(fread(readme, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    cr_assert_not_null(start = strstr(readme, "```ini\n[run]"), "README has a profile example");
    start += strlen("```ini\n");
    cr_assert_not_null(end = strstr(start, "```"));
    *end = '\0';
    cr_assert_eq(kbi_plugins_load(dirs, req, &real, err), KBI_OK, "%s", err);
    cr_expect_eq(kbi_profile_parse("README.md", start, &real, &p, &errors), KBI_OK, "%s",
                 errors.data ? errors.data : "");
    kbi_buf_free(&errors);
    kbi_profile_free(&p);
    kbi_plugins_free(&real);
    free(readme);
}

/* A cross-key error names the line of the key, never "line 0". */
Test(profile, max_samples_below_min_samples_names_its_line)
{
    expect_error("[run]\nmin_samples = 10\nmax_samples = 5\n",
                 "t.ini:3: [run] max_samples 5 is below min_samples 10, expected max >= min\n");
    expect_error("[run]\nmin_samples = 5000\n",
                 "t.ini:2: [run] max_samples 1000 is below min_samples 5000, expected max >= min\n");
}

Test(profile, unknown_section)
{
    expect_error("[run]\n\n[nosuch]\nn = 1\n",
                 "t.ini:3: unknown section [nosuch]: no plugin of that name is loaded, expected "
                 "[run] or a plugin (good, hot, instrumented, instrumented13, knobs, liar, "
                 "metrics, misbehave, oob, params11, rogue, stateful, timed, v10)\n");
}

Test(profile, unknown_key_in_run)
{
    expect_error("[run]\nwarmpu = 3\n",
                 "t.ini:2: unknown key 'warmpu' in [run], expected one of warmup, min_samples, "
                 "max_samples, min_time, max_time, max_noise, rounds, timeout, cache, device, "
                 "seed, bandwidth, peak_gflops, peak_tf32_gflops, energy, energy_window, "
                 "energy_windows\n");
}

Test(profile, unknown_key_in_plugin)
{
    expect_error("[good]\nsize = 3\n",
                 "t.ini:2: unknown key 'size' in [good], expected one of: n, scale, mode, shape, "
                 "usec, variants, baseline, zip\n");
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
                 "t.ini:2: shape: '2x0x3' is not a shape, expected up to 8 positive integers "
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
    expect_error("[good]\nn = 2:100000:+1, 2\n",
                 "t.ini:2: n: value 2 listed twice, expected each once\n");
    /* 100000 values is the most one list holds, ranges and items together. */
    expect_error("[good]\nn = 1:100000:+1, 0\n",
                 "t.ini:2: n: list has more than 100000 values, expected at most 100000\n");
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
    cr_expect_gt(p.run.peak_gflops, 0.0, "ceilings given, so the probe measures nothing");
    cr_expect_gt(p.run.tf32_gflops, 0.0, "ceilings given, so the probe measures nothing");
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

/* Appends to list the path of every .ini file under dir (recursively), relative to the
 * checkout. */
static void ini_files(const char *dir, kbi_strlist *list)
{
    char path[4096];
    struct dirent *e;
    DIR *d;
    snprintf(path, sizeof path, "%s/%s", KBENCH_TEST_SOURCE_DIR, dir);
    if (!(d = opendir(path)))
        return;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        struct stat st;
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s/%s", KBENCH_TEST_SOURCE_DIR, dir, e->d_name);
        if (stat(path, &st) != 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (S_ISDIR(st.st_mode))
            ini_files(path, list);
        else if (len > 4 && strcmp(e->d_name + len - 4, ".ini") == 0)
            kbi_strlist_add(list, path);
    }
    closedir(d);
}

Test(profile, shipped_profiles_parse)
{
    /* Every shipped profile parses against the built plugins (and the hot fixture, for
     * tests/hot): profiles/, the lab profiles (lab/, plugins/NAME/lab), tests/hot.  A knob set
     * for a variant it does not apply to (ABI 1.4) is among what would refuse one.
     * docs/example-plugin/example.ini needs its plugin built: test_docs runs it. */
    const char *dirs[] = {KBENCH_TEST_PLUGINS, KBENCH_TEST_FIXTURES, NULL};
    const char *const folders[] = {"profiles", "lab", "plugins", "tests/hot"};
    int req[] = {1, 1};
    kbi_plugin_set real;
    kbi_strlist files = {0};
    char err[KBI_ERR_SIZE];
    cr_assert_eq(kbi_plugins_load(dirs, req, &real, err), KBI_OK, "%s", err);
    for (size_t i = 0; i < sizeof folders / sizeof *folders; i++)
        ini_files(folders[i], &files);
    cr_expect_geq(files.n, 14, "the shipped profiles were found (%zu)", files.n);
    for (size_t i = 0; i < files.n; i++) {
        char path[4096];
        kbi_profile p;
        kbi_buf errors = {0};
        snprintf(path, sizeof path, "%s/%s", KBENCH_TEST_SOURCE_DIR, files.s[i]);
        cr_expect_eq(kbi_profile_load(path, &real, &p, &errors), KBI_OK, "%s",
                     errors.data ? errors.data : "");
        kbi_buf_free(&errors);
        kbi_profile_free(&p);
    }
    kbi_strlist_free(&files);
    kbi_plugins_free(&real);
}

/* A case id names the problem: every problem parameter, and a knob or implicit parameter only
 * where the case sets it away from its default (set to the default's value, it is left out as
 * if unset); the full id names every parameter, and the label the section, the variant and what
 * takes more than one value in the section. */
Test(profile, an_id_names_the_problem_and_knobs_set_away_from_their_default)
{
    kbi_profile p;
    kbi_case *cases;
    size_t n;
    char *err = parse_errors("[knobs]\nvariants = sum\nn = 10, 20\nblock = 64, 8\n"
                             "[knobs.dense]\nvariants = sum\ndensity = 0.5\norder = forward\n",
                             &p);
    cr_assert_null(err, "%s", err);
    cr_assert_eq(kbi_profile_cases(&p, &cases, &n), KBI_OK);
    cr_assert_eq(n, 5);
    cr_expect_str_eq(cases[0].id, "knobs/sum/n=10");
    cr_expect_str_eq(cases[1].id, "knobs/sum/n=10,block=8");
    cr_expect_str_eq(cases[3].id, "knobs/sum/n=20,block=8");
    cr_expect_str_eq(cases[4].id, "knobs/sum/n=100,density=0.5");
    cr_expect_str_eq(cases[1].full_id, "knobs/sum/n=10,density=0,block=8,order=forward");
    cr_expect_str_eq(cases[4].full_id, "knobs/sum/n=100,density=0.5,block=64,order=forward");
    cr_expect_str_eq(cases[1].label, "knobs/sum/n=10,block=8");
    cr_expect_str_eq(cases[4].label, "knobs.dense/sum");
    /* --filter and --case take the id, the full id (an id before ABI 1.3), or a glob of either. */
    cr_expect(kbi_case_selected(&cases[0], "knobs/sum/n=10"));
    cr_expect(kbi_case_selected(&cases[0], "knobs/sum/n=10,density=0,block=64,order=forward"));
    cr_expect(kbi_case_selected(&cases[0], "*block=64*"));
    cr_expect_not(kbi_case_selected(&cases[1], "*block=64*"));
    cr_expect_not(kbi_case_selected(&cases[0], "knobs/sum/n=1"));
    kbi_cases_free(cases, n);
    kbi_profile_free(&p);
}

/* Every shipped profile names its cases in at most 120 characters (a case id names the problem;
 * a knob only where set away from its default) and labels them for progress lines in at most
 * 80 (what varies in the section), so a progress line fits 160 columns. */
Test(profile, shipped_profiles_name_cases_within_120_characters)
{
    const char *dirs[] = {KBENCH_TEST_PLUGINS, NULL};
    int req[] = {1};
    kbi_plugin_set real;
    char err[KBI_ERR_SIZE], path[4096];
    struct dirent *e;
    DIR *d;
    size_t profiles = 0;
    cr_assert_eq(kbi_plugins_load(dirs, req, &real, err), KBI_OK, "%s", err);
    snprintf(path, sizeof path, "%s/profiles", KBENCH_TEST_SOURCE_DIR);
    cr_assert_not_null(d = opendir(path));
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name), n = 0, id = 0, label = 0;
        kbi_profile p;
        kbi_buf errors = {0};
        kbi_case *cases;
        if (len < 5 || strcmp(e->d_name + len - 4, ".ini") != 0)
            continue;
        snprintf(path, sizeof path, "%s/profiles/%s", KBENCH_TEST_SOURCE_DIR, e->d_name);
        cr_assert_eq(kbi_profile_load(path, &real, &p, &errors), KBI_OK, "%s",
                     errors.data ? errors.data : "");
        kbi_profile_cases(&p, &cases, &n);
        for (size_t i = 0; i < n; i++) {
            if (strlen(cases[i].id) > strlen(cases[id].id))
                id = i;
            if (strlen(cases[i].label) > strlen(cases[label].label))
                label = i;
        }
        cr_expect_leq(strlen(cases[id].id), 120, "%s: %s", e->d_name, cases[id].id);
        cr_expect_leq(strlen(cases[label].label), 80, "%s: %s", e->d_name, cases[label].label);
        kbi_cases_free(cases, n);
        kbi_profile_free(&p);
        kbi_buf_free(&errors);
        profiles++;
    }
    closedir(d);
    cr_expect_geq(profiles, 10, "the shipped profiles were found");
    kbi_plugins_free(&real);
}

/* ---- ABI 1.1 parameters: rank-8 dims, integer lists, zipped axes ---- */

/* The cases of a profile that must parse; caller frees both. */
static void cases_of(const char *text, kbi_profile *p, kbi_case **cases, size_t *n)
{
    char *err = parse_errors(text, p);
    cr_assert_null(err, "%s", err);
    cr_assert_eq(kbi_profile_cases(p, cases, n), KBI_OK);
}

/* ABI 1.4's knob_variants: the fixture's knob `order` applies to `sum` only.  A section that
 * sets it away from its default (any value of its list) while one of its variants is another
 * is refused before anything runs, at the knob's line, naming the value, the variants it
 * applies to, those it does not and where the variants came from; so is a labelled section
 * whose variants default to all, and a zipped axis (every variant runs at every point). */
Test(profile, a_knob_set_for_a_variant_it_does_not_apply_to_is_refused)
{
    expect_error("[knobs]\nvariants = sum, declines\nn = 10\norder = forward, backward\n",
                 "t.ini:4: order = backward applies to sum, not to declines (variants at line "
                 "2), expected only variants it applies to: move declines to a section of its "
                 "own, where order keeps its default (forward)\n");
    expect_error("[run]\nwarmup = 1\n\n[knobs.back]\norder = backward\n",
                 "t.ini:5: order = backward applies to sum, not to declines (variants: all, by "
                 "default), expected only variants it applies to: move declines to a section of "
                 "its own, where order keeps its default (forward)\n");
    expect_error("[knobs]\nvariants = declines, sum\nn = 10, 20\norder = backward, forward\n"
                 "zip = n+order\n",
                 "t.ini:4: order = backward applies to sum, not to declines (variants at line "
                 "2), expected only variants it applies to: move declines to a section of its "
                 "own, where order keeps its default (forward)\n");
}

/* At its default a knob is fine whatever the variants (it is as if unset), as is a knob the
 * plugin does not restrict (`block`), and a knob in a section of the variants it applies to:
 * the split a refused section is told to make runs the same cases, with the same ids.  The
 * section's baseline runs at the knob's values even where it ignores them, as report pairs a
 * case with its baseline at the same parameters; it alone is let off. */
Test(profile, a_knob_at_its_default_or_for_its_own_variants_is_fine)
{
    kbi_profile p;
    kbi_case *cases;
    size_t n;
    cases_of("[knobs]\nvariants = sum, declines\norder = forward\nblock = 8\n"
             "[knobs.back]\nvariants = sum\norder = forward, backward\n",
             &p, &cases, &n);
    cr_assert_eq(n, 4);
    cr_expect_str_eq(cases[0].id, "knobs/sum/n=100,block=8");
    cr_expect_str_eq(cases[1].id, "knobs/declines/n=100,block=8");
    cr_expect_str_eq(cases[2].id, "knobs/sum/n=100");
    cr_expect_str_eq(cases[3].id, "knobs/sum/n=100,order=backward");
    kbi_cases_free(cases, n);
    kbi_profile_free(&p);
    cases_of("[knobs]\nvariants = sum, declines\nbaseline = declines\norder = backward\n", &p,
             &cases, &n);
    cr_assert_eq(n, 2);
    cr_expect_str_eq(cases[1].id, "knobs/declines/n=100,order=backward");
    kbi_cases_free(cases, n);
    kbi_profile_free(&p);
    expect_error("[knobs]\nvariants = sum, declines\nbaseline = sum\norder = backward\n",
                 "t.ini:4: order = backward applies to sum, not to declines (variants at line "
                 "2), expected only variants it applies to: move declines to a section of its "
                 "own, where order keeps its default (forward)\n");
}

Test(profile, rank8_dims_round_trip)
{
    kbi_profile p;
    kbi_case *cases;
    size_t n;
    int64_t dims[KB_MAX_RANK + 1];
    int nd = -1;
    cases_of("[params11]\nshape = 1x2x3x4x5x6x7x8, 0005x01\n", &p, &cases, &n);
    cr_assert_eq(n, 2);
    cr_expect_str_eq(cases[0].id, "params11/copy/shape=1x2x3x4x5x6x7x8,perm=[1,0],extra=[],n=2");
    cr_expect_str_eq(cases[1].id, "params11/copy/shape=5x1,perm=[1,0],extra=[],n=2");
    cr_assert_eq(kbi_param_dims_cap(&cases[0].params, "shape", dims, KB_MAX_RANK, &nd), KB_OK);
    cr_assert_eq(nd, 8);
    for (int i = 0; i < 8; i++)
        cr_expect_eq(dims[i], i + 1);
    /* Too small an array: the count, and nothing written. */
    for (int i = 0; i <= KB_MAX_RANK; i++)
        dims[i] = -7;
    cr_expect_eq(kbi_param_dims_cap(&cases[0].params, "shape", dims, 7, &nd), KB_BAD_PARAM);
    cr_expect_eq(nd, 8);
    for (int i = 0; i <= KB_MAX_RANK; i++)
        cr_expect_eq(dims[i], -7);
    cr_expect_eq(kbi_param_dims_cap(&cases[0].params, "perm", dims, 8, &nd), KB_BAD_PARAM);
    kbi_cases_free(cases, n);
    kbi_profile_free(&p);
    expect_error("[params11]\nshape = 1x1x1x1x1x1x1x1x1\n",
                 "t.ini:2: shape: '1x1x1x1x1x1x1x1x1' is not a shape, expected up to 8 positive "
                 "integers joined by 'x', such as 4096x4096x256\n");
}

Test(profile, rank5_through_the_10_getter_writes_at_most_4)
{
    kbi_profile p;
    kbi_case *cases;
    size_t n;
    int64_t dims[KB_MAX_RANK];
    int nd = -1;
    cases_of("[params11]\nshape = 9x8x7x6x5, 9x8x7x6\n", &p, &cases, &n);
    cr_assert_eq(n, 2);
    for (int i = 0; i < KB_MAX_RANK; i++)
        dims[i] = -7;
    cr_expect_eq(kbi_param_dims(&cases[0].params, "shape", dims, &nd), KB_BAD_PARAM);
    cr_expect_eq(nd, 5);
    for (int i = KB_MAX_DIMS; i < KB_MAX_RANK; i++)
        cr_expect_eq(dims[i], -7, "dims[%d] written past a 1.0 plugin's array", i);
    cr_expect_eq(kbi_param_dims(&cases[1].params, "shape", dims, &nd), KB_OK);
    cr_expect_eq(nd, 4);
    cr_expect_eq(dims[3], 6);
    cr_expect_eq(dims[4], -7);
    kbi_cases_free(cases, n);
    kbi_profile_free(&p);
}

Test(profile, integer_lists)
{
    kbi_profile p;
    kbi_case *cases;
    size_t n;
    int64_t v[KB_MAX_INTS];
    int nv = -1;
    cases_of("[params11]\nperm = [0, 2,1,3], [3,2,1,0]\nextra = [ -5 , 7Ki ],\n    []\n", &p,
             &cases, &n);
    cr_assert_eq(n, 4);
    cr_expect_str_eq(cases[0].id, "params11/copy/shape=4x4,perm=[0,2,1,3],extra=[-5,7168],n=2");
    cr_expect_str_eq(cases[1].id, "params11/copy/shape=4x4,perm=[0,2,1,3],extra=[],n=2");
    cr_expect_str_eq(cases[2].id, "params11/copy/shape=4x4,perm=[3,2,1,0],extra=[-5,7168],n=2");
    cr_assert_eq(kbi_param_ints(&cases[0].params, "perm", v, KB_MAX_INTS, &nv), KB_OK);
    cr_expect_eq(nv, 4);
    cr_expect(v[0] == 0 && v[1] == 2 && v[2] == 1 && v[3] == 3);
    cr_assert_eq(kbi_param_ints(&cases[0].params, "extra", v, 2, &nv), KB_OK);
    cr_expect(nv == 2 && v[0] == -5 && v[1] == 7168);
    cr_expect_eq(kbi_param_ints(&cases[1].params, "extra", NULL, 0, &nv), KB_OK);
    cr_expect_eq(nv, 0);
    v[0] = 99;
    cr_expect_eq(kbi_param_ints(&cases[0].params, "perm", v, 3, &nv), KB_BAD_PARAM);
    cr_expect(nv == 4 && v[0] == 99);
    cr_expect_eq(kbi_param_ints(&cases[0].params, "shape", v, 8, &nv), KB_BAD_PARAM);
    kbi_cases_free(cases, n);
    kbi_profile_free(&p);
}

Test(profile, integer_list_errors)
{
    /* Empty: a list of no integers, refused only where the counts say so. */
    expect_error("[params11]\nperm = []\n",
                 "t.ini:2: perm: '[]' has 0 integers, expected 2 to 8 in brackets\n");
    expect_error("[params11]\nperm = [0,1,2,3,4,5,6,7,8]\n",
                 "t.ini:2: perm: '[0,1,2,3,4,5,6,7,8]' has 9 integers, expected 2 to 8 in "
                 "brackets\n");
    /* Past KB_MAX_INTS. */
    char text[256] = "[params11]\nextra = [0";
    for (int i = 1; i <= KB_MAX_INTS; i++)
        strcat(text, ",0");
    strcat(text, "]\n");
    kbi_profile p;
    char *got = parse_errors(text, &p);
    cr_assert_not_null(got);
    cr_expect(strstr(got, "t.ini:2: extra: '[0,0,") == got && strstr(got, ",0]' has more than 64 "
                                                                       "integers, expected at "
                                                                       "most 64\n"),
              "%s", got);
    free(got);
    expect_error("[params11]\nperm = [0,2,x]\n",
                 "t.ini:2: perm: '[0,2,x]' is not a list of integers, expected e.g. [0,2,1,3]\n");
    expect_error("[params11]\nperm = [[0,1],2]\n",
                 "t.ini:2: perm: '[[0,1],2]' is not a list of integers, expected e.g. "
                 "[0,2,1,3]\n");
    expect_error("[params11]\nperm = [0,1\n",
                 "t.ini:2: perm: '[0,1' is not a list of integers, expected e.g. [0,2,1,3]\n");
    expect_error("[params11]\nperm = [0,1]]\n",
                 "t.ini:2: perm: '[0,1]]' is not a list of integers, expected e.g. [0,2,1,3]\n");
    expect_error("[params11]\nperm = [0,,1]\n",
                 "t.ini:2: perm: '[0,,1]' is not a list of integers, expected e.g. [0,2,1,3]\n");
    expect_error("[params11]\nperm = 0,1\n",
                 "t.ini:2: perm: '0' is not a list of integers, expected e.g. [0,2,1,3]\n"
                 "t.ini:2: perm: '1' is not a list of integers, expected e.g. [0,2,1,3]\n");
    /* Ranges do not apply to lists. */
    expect_error("[params11]\nextra = 1:4:*2\n",
                 "t.ini:2: extra: '1:4:*2' is not a list of integers, expected e.g. "
                 "[0,2,1,3]\n");
    expect_error("[params11]\nperm = [0,1], [0, 1]\n",
                 "t.ini:2: perm: value [0,1] listed twice, expected each once\n");
    expect_error("[params11]\nperm = [0,1],, [1,0]\n",
                 "t.ini:2: perm: empty item in list '[0,1],, [1,0]', expected values separated "
                 "by single commas\n");
}

/* The ids of a profile's cases, joined by newlines (caller frees). */
static char *ids_of(const char *text, size_t *n)
{
    kbi_profile p;
    kbi_case *cases;
    kbi_buf b = {0};
    cases_of(text, &p, &cases, n);
    for (size_t i = 0; i < *n; i++)
        kbi_buf_printf(&b, "%s\n", cases[i].id);
    kbi_cases_free(cases, *n);
    kbi_profile_free(&p);
    return b.data;
}

Test(profile, zip_steps_keys_together)
{
    size_t n;
    char *ids = ids_of("[params11]\nshape = 2x2, 3x3, 4x4\nperm = [0,1], [1,0], [1,0,2]\n", &n);
    cr_expect_eq(n, 9); /* the product */
    free(ids);
    ids = ids_of("[params11]\nshape = 2x2, 3x3, 4x4\nperm = [0,1], [1,0], [1,0,2]\n"
                 "zip = shape + perm\nn = 1, 2\n",
                 &n);
    cr_expect_eq(n, 6);
    cr_expect_str_eq(ids, "params11/copy/shape=2x2,perm=[0,1],extra=[],n=1\n"
                          "params11/copy/shape=2x2,perm=[0,1],extra=[],n=2\n"
                          "params11/copy/shape=3x3,perm=[1,0],extra=[],n=1\n"
                          "params11/copy/shape=3x3,perm=[1,0],extra=[],n=2\n"
                          "params11/copy/shape=4x4,perm=[1,0,2],extra=[],n=1\n"
                          "params11/copy/shape=4x4,perm=[1,0,2],extra=[],n=2\n");
    free(ids);
    /* A group steps at the place of its first key in descriptor order
     * (extra before n), however it is written. */
    ids = ids_of("[params11]\nzip = n+extra\nshape = 2x2, 3x3\nextra = [1], [2]\nn = 1, 2\n", &n);
    cr_expect_eq(n, 4);
    cr_expect_str_eq(ids, "params11/copy/shape=2x2,perm=[1,0],extra=[1],n=1\n"
                          "params11/copy/shape=2x2,perm=[1,0],extra=[2],n=2\n"
                          "params11/copy/shape=3x3,perm=[1,0],extra=[1],n=1\n"
                          "params11/copy/shape=3x3,perm=[1,0],extra=[2],n=2\n");
    free(ids);
    /* Two groups, and a group of three. */
    ids = ids_of("[params11]\nzip = shape+perm, extra+n\nshape = 2x2, 3x3\nperm = [0,1], [1,0]\n"
                 "extra = [1], [2], [3]\nn = 1, 2, 3\n",
                 &n);
    cr_expect_eq(n, 6);
    free(ids);
    ids = ids_of("[params11]\nzip = shape+perm+n\nshape = 2x2, 3x3\nperm = [0,1], [1,0]\n"
                 "n = 5, 6\n",
                 &n);
    cr_expect_str_eq(ids, "params11/copy/shape=2x2,perm=[0,1],extra=[],n=5\n"
                          "params11/copy/shape=3x3,perm=[1,0],extra=[],n=6\n");
    free(ids);
}

Test(profile, zip_errors)
{
    expect_error("[params11]\nshape = 2x2, 3x3\nperm = [0,1]\nzip = shape+perm\n",
                 "t.ini:4: zip: the keys of 'shape+perm' have different numbers of values "
                 "(shape 2, perm 1), expected the same number for each\n");
    expect_error("[params11]\nshape = 2x2, 3x3\nzip = shape+size\n",
                 "t.ini:3: zip: unknown key 'size' in [params11], expected parameters of "
                 "params11: shape, perm, extra, n\n");
    expect_error("[params11]\nshape = 2x2, 3x3\nperm = [0,1], [1,0]\nn = 1, 2\n"
                 "zip = shape+perm, perm+n\n",
                 "t.ini:5: zip: 'perm' is zipped twice, expected each key in one group only\n");
    expect_error("[params11]\nshape = 2x2, 3x3\nzip = shape+shape\n",
                 "t.ini:3: zip: 'shape' is zipped twice, expected each key in one group only\n");
    expect_error("[params11]\nshape = 2x2, 3x3\nzip = shape\n",
                 "t.ini:3: zip: group 'shape' has one key, expected two or more parameters "
                 "joined by '+', such as shape+perm\n");
    expect_error("[params11]\nshape = 2x2, 3x3\nperm = [0,1], [1,0]\nzip = shape+perm\n"
                 "zip = shape+perm\n",
                 "t.ini:5: duplicate key 'zip' in [params11], first set at line 4; expected each "
                 "key once (a list goes in one value)\n");
    expect_error("[params11]\nshape = 2x2, 3x3\nzip = shape+n\n",
                 "t.ini:3: zip: 'n' is not set in [params11], expected a list of values for "
                 "every zipped key\n");
    expect_error("[params11]\nshape = 2x2, 3x3\nperm = [0,1], [1,0]\nzip = shape++perm\n",
                 "t.ini:4: zip: group 'shape++perm' has an empty key, expected parameters "
                 "joined by single '+', such as shape+perm\n");
    expect_error("[params11]\nzip =\n", "t.ini:2: zip: empty list, expected at least one value\n");
    /* A zipped key whose own list is refused is reported once, at its line. */
    expect_error("[params11]\nshape = 2x2, 3y3\nperm = [0,1], [1,0]\nzip = shape+perm\n",
                 "t.ini:2: shape: '3y3' is not a shape, expected up to 8 positive integers "
                 "joined by 'x', such as 4096x4096x256\n");
}

/* ---- a plugin built against ABI 1.0 ---- */

static int v10_init(const kb_case *c, void **s, char *m)
{
    return KB_ERROR;
}
static int v10_counts(void *s, kb_counts *k, char *m)
{
    return KB_ERROR;
}
static int v10_run(void *s, void *st, char *m)
{
    return KB_ERROR;
}
static int v10_verify(void *s, kb_verdict *v, char *m)
{
    return KB_ERROR;
}
static int v10_teardown(void *s, char *m)
{
    return KB_OK;
}
static const kb_variant v10_variants[] = {{"a", "", KB_HOST, 0}, {"b", "", KB_DEVICE, 0}};
static const kb_param v10_params[] = {
    {"n", KB_PARAM_INT, "1Ki", "", NULL},
    {"x", KB_PARAM_FLOAT, "0.25", "", NULL},
    {"mode", KB_PARAM_STRING, "p", "", "p|q"},
    {"shape", KB_PARAM_DIMS, "2x2", "", NULL},
};

/* A set holding one descriptor, as the loader would give it. */
static kbi_plugin_set one_plugin(kbi_plugin *item, const kb_plugin *d)
{
    memset(item, 0, sizeof *item);
    item->path = "v10/libkbench_v10.so";
    item->desc = d;
    item->minor = KB_ABI_MINOR_OF(d->abi_version);
    return (kbi_plugin_set){.items = item, .n = 1};
}

/* A 1.0 descriptor: what a plugin built against the 1.0 plugin.h holds. */
static kb_plugin v10_desc(void)
{
    kb_plugin d = {
        .abi_version = KB_ABI_VERSION(1, 0),
        .struct_size = (uint32_t)(offsetof(kb_plugin, teardown) + sizeof(void (*)(void))),
        .name = "v10",
        .variants = v10_variants,
        .n_variants = 2,
        .params = v10_params,
        .n_params = 4,
        .init = v10_init,
        .counts = v10_counts,
        .run = v10_run,
        .verify = v10_verify,
        .teardown = v10_teardown,
    };
    return d;
}

Test(profile, a_10_profile_keeps_its_case_ids)
{
    kb_plugin d = v10_desc();
    kbi_plugin item;
    kbi_plugin_set set = one_plugin(&item, &d);
    kbi_profile p;
    kbi_buf errors = {0};
    kbi_case *cases;
    size_t n;
    char err[KBI_ERR_SIZE];
    cr_assert_eq(kbi_check_abi(&d, err), KBI_OK, "%s", err);
    cr_assert_eq(kbi_profile_parse("t.ini",
                                   "[v10]\nvariants = b, a\nn = 1:4:*2\nmode = q, p\n"
                                   "shape = 3x4, 1x2x3x4\nx = 0.1:0.2:+0.1\n",
                                   &set, &p, &errors),
                 KBI_OK, "%s", errors.data);
    kbi_profile_cases(&p, &cases, &n);
    cr_assert_eq(n, 2 * 3 * 2 * 2 * 2);
    cr_expect_str_eq(cases[0].id, "v10/b/n=1,x=0.1,mode=q,shape=3x4");
    cr_expect_str_eq(cases[1].id, "v10/a/n=1,x=0.1,mode=q,shape=3x4");
    cr_expect_str_eq(cases[2].id, "v10/b/n=1,x=0.1,mode=q,shape=1x2x3x4");
    cr_expect_str_eq(cases[5].id, "v10/a/n=1,x=0.1,mode=p,shape=3x4");
    cr_expect_str_eq(cases[8].id, "v10/b/n=1,x=0.2,mode=q,shape=3x4");
    cr_expect_str_eq(cases[47].id, "v10/a/n=4,x=0.2,mode=p,shape=1x2x3x4");
    kbi_cases_free(cases, n);
    kbi_profile_free(&p);
    /* Its 4-array cannot take a rank-5 shape: refused at the profile. */
    cr_assert_eq(kbi_profile_parse("t.ini", "[v10]\nshape = 1x2x3x4x5\n", &set, &p, &errors),
                 KBI_ERR_INPUT);
    cr_expect_str_eq(errors.data, "t.ini:2: shape: '1x2x3x4x5' has 5 dimensions, expected at "
                                  "most 4 (the plugin is built for ABI 1.0)\n");
    kbi_buf_free(&errors);
}

Test(profile, loader_knows_the_11_parameter_rules)
{
    kb_plugin d = v10_desc();
    kb_param params[2] = {{"perm", KB_PARAM_INTS, "[0,1]", "", "2"},
                          {"n", KB_PARAM_INT, "1", "", NULL}};
    char err[KBI_ERR_SIZE];
    d.params = params;
    d.n_params = 2;
    /* A list of integers is a 1.1 type. */
    cr_expect_eq(kbi_check_abi(&d, err), KBI_ERR);
    d.abi_version = KB_ABI_VERSION(1, 1);
    d.struct_size = sizeof d;
    cr_expect_eq(kbi_check_abi(&d, err), KBI_OK, "%s", err);
    /* `zip` is a profile key, never a parameter. */
    params[1].name = "zip";
    cr_expect_eq(kbi_check_abi(&d, err), KBI_ERR);
    cr_expect_str_eq(err, "parameter 1 has no name, a reserved name or an unknown type");
}

Test(profile, malformed_count_choices_are_the_plugins_fault)
{
    kb_plugin d = v10_desc();
    kb_param params[1] = {{"shape", KB_PARAM_DIMS, "2x2", "", "2-x"}};
    kbi_plugin item;
    kbi_plugin_set set = one_plugin(&item, &d);
    kbi_profile p;
    kbi_buf errors = {0};
    d.params = params;
    d.n_params = 1;
    cr_assert_eq(kbi_profile_parse("t.ini", "[v10]\n", &set, &p, &errors), KBI_ERR_INPUT);
    cr_expect_str_eq(errors.data,
                     "t.ini:1: plugin v10 (v10/libkbench_v10.so): default of parameter shape: "
                     "parameter shape declares the counts '2-x', expected a count such as 3 or a "
                     "range such as 2-8, within 1 to 8\n");
    kbi_buf_free(&errors);
    const char *bad[] = {"", "0", "9", "3-2", "2-9", " 3", "3 ", "-3", "2-"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        kbi_value v;
        char err[KBI_ERR_SIZE];
        params[0].choices = bad[i];
        cr_expect_eq(kbi_value_parse(&params[0], "2x2", &v, err), KBI_ERR_INPUT, "'%s'", bad[i]);
    }
    params[0].choices = "2-8";
    kbi_value v;
    char err[KBI_ERR_SIZE];
    cr_assert_eq(kbi_value_parse(&params[0], "2x2x2", &v, err), KBI_OK, "%s", err);
    kbi_value_free(&v);
    cr_expect_eq(kbi_value_parse(&params[0], "2", &v, err), KBI_ERR_INPUT);
    cr_expect_str_eq(err, "'2' has 1 dimensions, expected 2 to 8 joined by 'x'");
}

Test(profile, energy_switch_and_windows)
{
    kbi_profile p;
    char *err = parse_errors("[run]\n[good]\nvariants = sum\n", &p);
    cr_assert_null(err, "%s", err);
    cr_expect_eq(p.run.energy, 0, "off by default (about 7 s a device case)");
    cr_expect_eq(p.run.energy_window, 2.0);
    cr_expect_eq(p.run.energy_windows, 3);
    kbi_profile_free(&p);
    err = parse_errors("[run]\nenergy = on\nenergy_window = 0.5\nenergy_windows = 5\n"
                       "[good]\nvariants = sum\n",
                       &p);
    cr_assert_null(err, "%s", err);
    cr_expect_eq(p.run.energy, 1);
    cr_expect_eq(p.run.energy_window, 0.5);
    cr_expect_eq(p.run.energy_windows, 5);
    kbi_profile_free(&p);
    expect_error("[run]\nenergy = yes\n",
                 "t.ini:2: energy = 'yes' is not a switch, expected on or off\n");
    expect_error("[run]\nenergy_window = 0.1\n",
                 "t.ini:2: energy_window = 0.1 is out of range, expected 0.2 to 600\n");
    expect_error("[run]\nenergy_windows = 0\n",
                 "t.ini:2: energy_windows = 0 is out of range, expected 1 to 100\n");
}
