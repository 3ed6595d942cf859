#define _XOPEN_SOURCE 700
/* One bad plugin file cannot take kbench down: each fixture of tests/plugins/hostile (a
 * constructor that exits, an entry point that crashes or never returns, a descriptor that
 * points at nothing or claims a million variants, a plugin that prints at load, one named
 * like the profile's [run]) is refused in one line naming its path and what it did, every
 * other plugin still loads, and kbench's stdout carries only kbench's output, so
 * `kbench report "$(kbench run p.ini)"` works with all of them on the path. */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "helpers.h"
#include "loader.h"

/* The probe's time limit in these tests: the hanging fixture costs this once. */
#define TEST_LOAD_TIMEOUT "1"

static char hostile[PATH_MAX];

static void setup(void)
{
    make_tmp_named("probe");
    snprintf(hostile, sizeof hostile, "%s/hostile", KBENCH_TEST_FIXTURES);
    setenv(KBI_PLUGIN_LOAD_TIMEOUT_ENV, TEST_LOAD_TIMEOUT, 1);
}

static void teardown_tmp(void)
{
    remove_tmp();
}

static const char *refusal(const kbi_plugin_set *set, const char *file)
{
    for (size_t i = 0; i < set->n_refused; i++)
        if (strstr(set->refused[i], file))
            return set->refused[i];
    return NULL;
}

/* Runs a shell command line; returns its exit status (128 + N for signal N). */
static int sh(const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    int st;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

TestSuite(probe, .init = setup, .fini = teardown_tmp);

Test(probe, each_hostile_file_is_refused_and_the_others_load)
{
    static const struct {
        const char *file, *said;
    } want[] = {
        {"libkbench_entry_segv.so", "refused: crashed (Segmentation fault) in kb_plugin_entry"},
        {"libkbench_entry_hang.so",
         "refused: still loading after " TEST_LOAD_TIMEOUT " s, in kb_plugin_entry"},
        {"libkbench_ctor_exit.so", "refused: called exit(3) in a constructor"},
        {"libkbench_bad_pointer.so", "refused: crashed (Segmentation fault) in reading its "
                                     "descriptor"},
        {"libkbench_huge_variants.so", "refused: descriptor declares 1000000 variants"},
        {"libkbench_loud.so", "refused: printed to stdout while loading (\"loud: hello from a "
                              "constructor\")"},
        {"libkbench_run.so", "refused: plugin name 'run' is the profile's [run] section"},
        {"libkbench_bad_knob_variants.so",
         "refused: knob_variants: 'w' (for knob block) is not a variant of the plugin"},
    };
    const char *dirs[] = {hostile, KBENCH_TEST_FIXTURES, NULL};
    int req[] = {1, 1};
    kbi_plugin_set set;
    char err[KBI_ERR_SIZE];
    double t0 = kbi_now(), took;
    cr_assert_eq(kbi_plugins_load(dirs, req, &set, err), KBI_OK, "%s", err);
    took = kbi_now() - t0;
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        const char *r = refusal(&set, want[i].file);
        cr_assert_not_null(r, "%s was not refused", want[i].file);
        cr_expect(strncmp(r, hostile, strlen(hostile)) == 0 && strchr(r, '\n') == NULL,
                  "one line starting with the path: %s", r);
        cr_expect(strstr(r, want[i].said), "%s: wanted '%s', got: %s", want[i].file, want[i].said,
                  r);
    }
    cr_expect_eq(set.n_refused, sizeof want / sizeof *want + 6,
                 "the 8 hostile files and the 6 broken fixtures, nothing else");
    /* Every other plugin loads: the one that prints only where the probe cannot see it, and
     * the fixtures of the next folder. */
    cr_expect_not_null(kbi_plugins_find(&set, "chatty"));
    cr_expect_not_null(kbi_plugins_find(&set, "good"));
    cr_expect_not_null(kbi_plugins_find(&set, "misbehave"));
    cr_expect_not_null(kbi_plugins_find(&set, "stateful"));
    /* Probes run at once: the hung file costs one time limit, not one per file. */
    cr_expect_lt(took, 4.0, "loading took %.2f s with a %s s limit", took, TEST_LOAD_TIMEOUT);
    kbi_plugins_free(&set);
}

/* Counts and lengths a real plugin never reaches are refused before the tables are read. */
Test(probe, descriptor_limits)
{
    const char *dirs[] = {KBENCH_TEST_FIXTURES, NULL};
    int req[] = {1};
    kbi_plugin_set set;
    char err[KBI_ERR_SIZE], long_name[KBI_DESC_MAX_NAME + 2], long_text[KBI_DESC_MAX_TEXT + 2];
    kb_plugin copy;
    kb_variant v;
    kb_param p;
    cr_assert_eq(kbi_plugins_load(dirs, req, &set, err), KBI_OK, "%s", err);
    const kb_plugin *good = kbi_plugins_find(&set, "good")->desc;
    memset(long_name, 'a', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    memset(long_text, 'b', sizeof long_text - 1);
    long_text[sizeof long_text - 1] = '\0';

    copy = *good;
    copy.n_variants = 1000000;
    cr_expect_eq(kbi_check_abi(&copy, err), KBI_ERR);
    cr_expect(strstr(err, "declares 1000000 variants"), "%s", err);
    copy = *good;
    copy.n_params = KBI_DESC_MAX_PARAMS + 1;
    cr_expect_eq(kbi_check_abi(&copy, err), KBI_ERR);
    cr_expect(strstr(err, "parameters"), "%s", err);

    copy = *good;
    copy.name = long_name;
    cr_expect_eq(kbi_check_abi(&copy, err), KBI_ERR);
    cr_expect(strstr(err, "plugin name or description is longer"), "%s", err);
    copy = *good;
    v = good->variants[0];
    v.name = long_name;
    copy.variants = &v;
    copy.n_variants = 1;
    cr_expect_eq(kbi_check_abi(&copy, err), KBI_ERR);
    cr_expect(strstr(err, "variant 0: name or description longer"), "%s", err);
    v.name = "ok";
    v.description = long_text;
    cr_expect_eq(kbi_check_abi(&copy, err), KBI_ERR);
    copy = *good;
    p = good->params[0];
    p.help = long_text;
    copy.params = &p;
    copy.n_params = 1;
    cr_expect_eq(kbi_check_abi(&copy, err), KBI_ERR);
    cr_expect(strstr(err, "parameter 0:"), "%s", err);
    /* At the limits, still a plugin. */
    long_name[KBI_DESC_MAX_NAME] = '\0';
    copy = *good;
    copy.name = long_name;
    cr_expect_eq(kbi_check_abi(&copy, err), KBI_OK, "%s", err);

    copy = *good;
    copy.name = "run";
    cr_expect_eq(kbi_check_abi(&copy, err), KBI_ERR);
    cr_expect(strstr(err, "plugin name 'run' is the profile's [run] section"), "%s", err);
    kbi_plugins_free(&set);
}

/* A plugin built for another machine says so (glibc's own answer is "No such file or
 * directory"). */
Test(probe, wrong_architecture_is_named)
{
    char path[PATH_MAX + 64];
    const char *dirs[] = {tmp, NULL};
    int req[] = {1};
    kbi_plugin_set set;
    char err[KBI_ERR_SIZE];
    const char *r;
    FILE *f;
    chmod(tmp, 0755);
    cr_assert_eq(sh("cp '%s/libkbench_good.so' '%s/libkbench_good.so'", KBENCH_TEST_FIXTURES, tmp),
                 0);
    /* e_machine (byte 18, little-endian here) from x86-64 to aarch64 (183). */
    snprintf(path, sizeof path, "%s/libkbench_good.so", tmp);
    f = fopen(path, "r+b");
    cr_assert_not_null(f);
    fseek(f, 18, SEEK_SET);
    fputc(183, f);
    fputc(0, f);
    fclose(f);
    cr_assert_eq(kbi_plugins_load(dirs, req, &set, err), KBI_OK, "%s", err);
    cr_expect_eq(set.n, 0);
    r = refusal(&set, "libkbench_good.so");
    cr_assert_not_null(r);
    cr_expect(strstr(r, "cannot load: wrong architecture: the file is built for aarch64 (64-bit)"),
              "%s", r);
    kbi_plugins_free(&set);
}

/* The CLI with every hostile fixture on $KBENCH_PLUGIN_PATH: list and run succeed, their
 * stdout holds kbench's output alone, the README's idiom works, and what the chatty plugin
 * printed in its case (without a newline) is in OUT/worker.log. */
Test(probe, list_run_and_report_of_run_pass_with_hostile_plugins_on_the_path)
{
    char env[2 * PATH_MAX + 128], want[PATH_MAX + 64], path[PATH_MAX + 64];
    const char *kb = KBENCH_TEST_BINARY;
    char *text;
    FILE *f;
    snprintf(env, sizeof env, "KBENCH_PLUGIN_PATH='%s:%s'", hostile, KBENCH_TEST_FIXTURES);
    snprintf(path, sizeof path, "%s/p.ini", tmp);
    f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("[run]\nwarmup = 1\nmin_samples = 3\nmin_time = 0\nmax_time = 0.2\ntimeout = 5\n"
          "[good]\nvariants = sum\nn = 100\n[chatty]\nvariants = talk\n",
          f);
    fclose(f);

    cr_assert_eq(sh("cd '%s' && %s '%s' list >list.out 2>list.err", tmp, env, kb), 0);
    snprintf(path, sizeof path, "%s/list.out", tmp);
    text = slurp(path);
    cr_expect(strstr(text, "\ngood  (ABI 1.") || strncmp(text, "good  (ABI 1.", 13) == 0, "%s",
              text);
    cr_expect(strstr(text, "chatty  (ABI 1."), "%s", text);
    cr_expect_null(strstr(text, "chatty:"), "plugin output on list's stdout: %s", text);
    cr_expect_null(strstr(text, "loud:"), "plugin output on list's stdout: %s", text);
    free(text);
    snprintf(path, sizeof path, "%s/list.err", tmp);
    text = slurp(path);
    cr_expect(strstr(text, "libkbench_entry_segv.so: refused: crashed"), "%s", text);
    cr_expect(strstr(text, "libkbench_ctor_exit.so: refused: called exit(3)"), "%s", text);
    free(text);

    /* stdout is the results path and nothing else. */
    cr_assert_eq(sh("cd '%s' && %s '%s' run p.ini --out one >run.out 2>run.err", tmp, env, kb), 0);
    snprintf(path, sizeof path, "%s/run.out", tmp);
    text = slurp(path);
    cr_expect_str_eq(text, "one/results.jsonl\n");
    free(text);
    snprintf(path, sizeof path, "%s/one/worker.log", tmp);
    text = slurp(path);
    cr_expect(strstr(text, "chatty: init of chatty/talk"), "worker.log: %s", text);
    free(text);

    /* The README's idiom. */
    cr_expect_eq(sh("cd '%s' && %s sh -c '\"$0\" report \"$(\"$0\" run p.ini --out two)\" --out "
                    "rep' '%s' >idiom.out 2>idiom.err",
                    tmp, env, kb),
                 0);
    snprintf(want, sizeof want, "%s/rep/report.md", tmp);
    cr_expect_eq(access(want, R_OK), 0, "no report: %s", want);
}
