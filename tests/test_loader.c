#define _DEFAULT_SOURCE
/* The loader against real shared objects: the good ones load, each broken
 * one is refused with one line naming its path and the reason, and a
 * refusal does not stop the others. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "knob_variants.h"
#include "loader.h"
#include "roofs.h"

static const char *refusal(const kbi_plugin_set *set, const char *file)
{
    for (size_t i = 0; i < set->n_refused; i++)
        if (strstr(set->refused[i], file))
            return set->refused[i];
    return NULL;
}

Test(loader, fixture_directory)
{
    const char *dirs[] = {KBENCH_TEST_FIXTURES, NULL};
    int req[] = {1};
    kbi_plugin_set set;
    char err[KBI_ERR_SIZE];
    const char *r;
    cr_assert_eq(kbi_plugins_load(dirs, req, &set, err), KBI_OK, "%s", err);
    cr_expect_eq(set.n, 14);
    cr_expect_not_null(kbi_plugins_find(&set, "good"));
    cr_expect_not_null(kbi_plugins_find(&set, "instrumented"), "an ABI 1.4 plugin loads");
    cr_expect_not_null(kbi_plugins_find(&set, "instrumented13"),
                       "an ABI 1.3 plugin with a 1.3 descriptor loads");
    cr_expect_not_null(kbi_plugins_find(&set, "knobs"), "an ABI 1.3 plugin with knobs loads");
    cr_expect_not_null(kbi_plugins_find(&set, "liar"));
    cr_expect_not_null(kbi_plugins_find(&set, "v10"));
    cr_expect_not_null(kbi_plugins_find(&set, "stateful"));
    cr_expect_not_null(kbi_plugins_find(&set, "timed"),
                       "an ABI 1.2 plugin with KB_METRIC_TIMING loads");
    cr_expect_not_null(kbi_plugins_find(&set, "metrics"));
    cr_expect_not_null(kbi_plugins_find(&set, "misbehave"));
    cr_expect_not_null(kbi_plugins_find(&set, "oob"));
    cr_expect_not_null(kbi_plugins_find(&set, "rogue"));
    cr_expect_not_null(kbi_plugins_find(&set, "params11"));
    cr_expect_eq(set.n_refused, 6);
    r = refusal(&set, "libkbench_bad_default.so");
    cr_assert_not_null(r);
    cr_expect(strstr(r, "parameter n: default 'lots' does not parse"), "%s", r);
    r = refusal(&set, "libkbench_short11.so");
    cr_assert_not_null(r);
    cr_expect(strstr(r, "is shorter than ABI 1.1's"), "%s", r);

    r = refusal(&set, "libkbench_wrong_major.so");
    cr_assert_not_null(r);
    cr_expect(strstr(r, "ABI version 2.0, wanted 1.x"), "%s", r);
    r = refusal(&set, "libkbench_newer_minor.so");
    cr_assert_not_null(r);
    cr_expect(strstr(r, "ABI version 1.5 is newer than this kbench's 1.4"), "%s", r);
    r = refusal(&set, "libkbench_short_struct.so");
    cr_assert_not_null(r);
    cr_expect(strstr(r, "descriptor of 16 bytes is shorter than ABI 1.0's"), "%s", r);
    r = refusal(&set, "libkbench_no_entry.so");
    cr_assert_not_null(r);
    cr_expect(strstr(r, "no entry symbol kb_plugin_entry"), "%s", r);
    for (size_t i = 0; i < set.n_refused; i++)
        cr_expect(strncmp(set.refused[i], KBENCH_TEST_FIXTURES, strlen(KBENCH_TEST_FIXTURES)) == 0 &&
                      set.refused[i][strlen(KBENCH_TEST_FIXTURES)] == '/',
                  "a refusal must start with the path: %s", set.refused[i]);
    kbi_plugins_free(&set);
}

Test(loader, descriptor_checks)
{
    const char *dirs[] = {KBENCH_TEST_FIXTURES, NULL};
    int req[] = {1};
    kbi_plugin_set set;
    char err[KBI_ERR_SIZE];
    kb_plugin copy;
    cr_assert_eq(kbi_plugins_load(dirs, req, &set, err), KBI_OK, "%s", err);
    copy = *kbi_plugins_find(&set, "good")->desc;
    cr_expect_eq(kbi_check_abi(&copy, err), KBI_OK, "%s", err);
    copy.verify = NULL;
    cr_expect_eq(kbi_check_abi(&copy, err), KBI_ERR);
    copy = *kbi_plugins_find(&set, "good")->desc;
    copy.n_variants = 0;
    cr_expect_eq(kbi_check_abi(&copy, err), KBI_ERR);
    cr_expect_str_eq(err, "descriptor declares no variants (or a bad parameter table)");
    cr_expect_eq(kbi_check_abi(NULL, err), KBI_ERR);
    kbi_plugins_free(&set);
}

/* Names that would make case ids collide or unreadable are refused when the plugin loads. */
Test(loader, names_that_break_case_ids_are_refused)
{
    const char *dirs[] = {KBENCH_TEST_FIXTURES, NULL};
    int req[] = {1};
    kbi_plugin_set set;
    char err[KBI_ERR_SIZE];
    kb_plugin copy;
    kb_variant two[2];
    kb_param params[2];
    cr_assert_eq(kbi_plugins_load(dirs, req, &set, err), KBI_OK, "%s", err);
    const kb_plugin *good = kbi_plugins_find(&set, "good")->desc;

    copy = *good;
    two[0] = good->variants[0];
    two[1] = good->variants[0];
    copy.variants = two;
    copy.n_variants = 2;
    cr_expect_eq(kbi_check_abi(&copy, err), KBI_ERR);
    cr_expect_str_eq(err, "variant 'sum' is declared twice (their case ids would collide)");

    two[1].name = "a/b";
    cr_expect_eq(kbi_check_abi(&copy, err), KBI_ERR);
    cr_expect(strstr(err, "variant name 'a/b' has characters other than"), "%s", err);
    two[1].name = "two words";
    cr_expect_eq(kbi_check_abi(&copy, err), KBI_ERR);
    two[1].name = "sum.v2-b_c";
    cr_expect_eq(kbi_check_abi(&copy, err), KBI_OK, "%s", err);

    copy = *good;
    copy.name = "my plugin";
    cr_expect_eq(kbi_check_abi(&copy, err), KBI_ERR);
    cr_expect(strstr(err, "plugin name 'my plugin'"), "%s", err);

    copy = *good;
    params[0] = good->params[0];
    params[1] = good->params[0];
    copy.params = params;
    copy.n_params = 2;
    cr_expect_eq(kbi_check_abi(&copy, err), KBI_ERR);
    cr_expect_str_eq(err, "parameter 'n' is declared twice");
    kbi_plugins_free(&set);
}

/* An ABI 1.4 descriptor must hold 1.4's fields; a 1.3 one of 1.3's length loads. */
Test(loader, abi_1_4_descriptors_are_whole)
{
    const char *dirs[] = {KBENCH_TEST_FIXTURES, NULL};
    int req[] = {1};
    kbi_plugin_set set;
    char err[KBI_ERR_SIZE];
    kb_plugin copy;
    cr_assert_eq(kbi_plugins_load(dirs, req, &set, err), KBI_OK, "%s", err);
    copy = *kbi_plugins_find(&set, "good")->desc;
    copy.abi_version = KB_ABI_VERSION(1, 4);
    copy.struct_size = (uint32_t)offsetof(kb_plugin, instrument);
    cr_expect_eq(kbi_check_abi(&copy, err), KBI_ERR);
    cr_expect(strstr(err, "is shorter than ABI 1.4's"), "%s", err);
    copy.abi_version = KB_ABI_VERSION(1, 3);
    cr_expect_eq(kbi_check_abi(&copy, err), KBI_OK, "%s", err);
    kbi_plugins_free(&set);
}

/* ABI 1.3's knobs and implicit lists name parameters of the plugin, each once; a plugin of
 * 1.2 or before has none (every parameter names the problem), whatever its memory holds there. */
Test(loader, roofs_and_headline_are_checked)
{
    const char *dirs[] = {KBENCH_TEST_FIXTURES, NULL};
    int req[] = {1};
    kbi_plugin_set set;
    char err[KBI_ERR_SIZE], roof[64];
    kb_plugin copy;
    cr_assert_eq(kbi_plugins_load(dirs, req, &set, err), KBI_OK, "%s", err);
    copy = *kbi_plugins_find(&set, "good")->desc;
    copy.roofs = "sum=tf32x3;sleep=memory";
    copy.headline = "time_per_item";
    cr_expect_eq(kbi_check_abi(&copy, err), KBI_OK, "%s", err);
    /* What the worker records for each variant. */
    kbi_roof_of(&copy, "sum", roof, sizeof roof);
    cr_expect_str_eq(roof, "tf32x3");
    kbi_roof_of(&copy, "sleep", roof, sizeof roof);
    cr_expect_str_eq(roof, "memory");
    cr_expect_str_eq(kbi_headline_of(&copy), "time_per_item");
    copy.roofs = "sum=fp16";
    cr_expect_eq(kbi_check_abi(&copy, err), KBI_ERR);
    cr_expect(strstr(err, "roofs gives sum the roof 'fp16', expected fp32, tf32, tf32x3 or "
                          "memory"),
              "%s", err);
    copy.roofs = "quick=fp32";
    cr_expect_eq(kbi_check_abi(&copy, err), KBI_ERR);
    cr_expect(strstr(err, "roofs names 'quick', which is not one of the plugin's variants"), "%s",
              err);
    copy.roofs = "sum=fp32;sum=tf32";
    cr_expect_eq(kbi_check_abi(&copy, err), KBI_ERR);
    cr_expect(strstr(err, "roofs names the variant 'sum' twice"), "%s", err);
    copy.roofs = NULL;
    copy.headline = "ns_per_item";
    cr_expect_eq(kbi_check_abi(&copy, err), KBI_ERR);
    cr_expect(strstr(err, "headline 'ns_per_item' is not a headline, expected rate or "
                          "time_per_item"),
              "%s", err);
    /* Before 1.4 the fields are not there to read: a plugin's own defaults. */
    copy.abi_version = KB_ABI_VERSION(1, 3);
    kbi_roof_of(&copy, "sum", roof, sizeof roof);
    cr_expect_str_eq(roof, "");
    cr_expect_str_eq(kbi_headline_of(&copy), "");
    kbi_plugins_free(&set);
}

Test(loader, knobs_and_implicit_parameters_are_checked)
{
    const char *dirs[] = {KBENCH_TEST_FIXTURES, NULL};
    int req[] = {1};
    kbi_plugin_set set;
    char err[KBI_ERR_SIZE];
    kb_plugin copy;
    kbi_plugin item;
    cr_assert_eq(kbi_plugins_load(dirs, req, &set, err), KBI_OK, "%s", err);
    copy = *kbi_plugins_find(&set, "good")->desc;
    item = (kbi_plugin){.desc = &copy, .minor = 3};
    copy.knobs = "usec|mode";
    copy.implicit = "scale";
    cr_expect_eq(kbi_check_abi(&copy, err), KBI_OK, "%s", err);
    cr_expect_eq(kbi_param_role_of(&item, "n"), KBI_ROLE_PROBLEM);
    cr_expect_eq(kbi_param_role_of(&item, "mode"), KBI_ROLE_KNOB);
    cr_expect_eq(kbi_param_role_of(&item, "usec"), KBI_ROLE_KNOB);
    cr_expect_eq(kbi_param_role_of(&item, "scale"), KBI_ROLE_IMPLICIT);
    cr_expect_eq(kbi_param_role_of(&item, "use"), KBI_ROLE_PROBLEM, "a prefix is not a name");
    copy.knobs = "usec|bogus";
    cr_expect_eq(kbi_check_abi(&copy, err), KBI_ERR);
    cr_expect(strstr(err, "knobs 'usec|bogus' and implicit 'scale' name something that is not "
                          "a parameter"),
              "%s", err);
    copy.knobs = "usec||mode";
    cr_expect_eq(kbi_check_abi(&copy, err), KBI_ERR, "an empty name is not a parameter");
    copy.knobs = "usec|scale";
    cr_expect_eq(kbi_check_abi(&copy, err), KBI_ERR);
    cr_expect_str_eq(err, "parameter 'scale' is listed 2 times in knobs and implicit: once at "
                          "most");
    copy.knobs = "usec";
    copy.struct_size = (uint32_t)offsetof(kb_plugin, knobs);
    cr_expect_eq(kbi_check_abi(&copy, err), KBI_ERR);
    cr_expect(strstr(err, "is shorter than ABI 1.3's"), "%s", err);
    copy.abi_version = KB_ABI_VERSION(1, 2);
    cr_expect_eq(kbi_check_abi(&copy, err), KBI_OK, "%s", err);
    copy.struct_size = sizeof copy;
    copy.knobs = "bogus";
    cr_expect_eq(kbi_check_abi(&copy, err), KBI_OK, "a 1.2 plugin's knobs are not read: %s", err);
    item.minor = 2;
    copy.knobs = "usec";
    cr_expect_eq(kbi_param_role_of(&item, "usec"), KBI_ROLE_PROBLEM);
    kbi_plugins_free(&set);
}

/* ABI 1.4's knob_variants, "knob=variant|variant;...", names the plugin's own knobs and
 * variants, each knob once and each of its variants once; a knob it does not name applies to
 * every variant.  Anything else refuses the plugin, saying which item is wrong; a 1.3 plugin's
 * memory there is never read. */
Test(loader, knob_variants_are_checked)
{
    static const struct {
        const char *text, *said;
    } bad[] = {
        {"order", "knob_variants: item 'order' is not knob=variant|variant (expected "
                  "\"knob=variant|variant;knob=variant|...\")"},
        {"order=", "knob_variants: item 'order=' is not knob=variant|variant (expected "
                   "\"knob=variant|variant;knob=variant|...\")"},
        {"=sum", "knob_variants: item '=sum' is not knob=variant|variant (expected "
                 "\"knob=variant|variant;knob=variant|...\")"},
        {"order=sum=declines", "knob_variants: item 'order=sum=declines' is not "
                               "knob=variant|variant (expected "
                               "\"knob=variant|variant;knob=variant|...\")"},
        {";order=sum", "knob_variants: item '' is not knob=variant|variant (expected "
                       "\"knob=variant|variant;knob=variant|...\")"},
        {"order=sum;", "knob_variants ends in ';', expected \"knob=variant|variant\" after it"},
        {"n=sum", "knob_variants: 'n' is not one of the plugin's knobs (knobs: block|order), "
                  "expected knob=variant|variant of its knobs"},
        {"density=sum", "knob_variants: 'density' is not one of the plugin's knobs (knobs: "
                        "block|order), expected knob=variant|variant of its knobs"},
        {"orde=sum", "knob_variants: 'orde' is not one of the plugin's knobs (knobs: "
                     "block|order), expected knob=variant|variant of its knobs"},
        {"order=su", "knob_variants: 'su' (for knob order) is not a variant of the plugin, "
                     "expected knob=variant|variant of its variants"},
        {"order=sum||declines", "knob_variants: '' (for knob order) is not a variant of the "
                                "plugin, expected knob=variant|variant of its variants"},
        {"order=sum|declines|sum", "knob_variants: variant sum is listed twice for knob order: "
                                   "once at most"},
        {"order=sum;block=sum;order=declines", "knob_variants: knob order is named twice: once "
                                               "at most"},
    };
    const char *dirs[] = {KBENCH_TEST_FIXTURES, NULL};
    int req[] = {1};
    kbi_plugin_set set;
    char err[KBI_ERR_SIZE];
    kb_plugin copy;
    kbi_plugin item;
    cr_assert_eq(kbi_plugins_load(dirs, req, &set, err), KBI_OK, "%s", err);
    copy = *kbi_plugins_find(&set, "knobs")->desc;
    item = (kbi_plugin){.desc = &copy, .minor = 4};
    cr_assert_str_eq(copy.knob_variants, "order=sum");
    cr_expect_eq(kbi_check_abi(&copy, err), KBI_OK, "%s", err);
    cr_expect(kbi_knob_applies(&item, "order", 0), "order applies to sum");
    cr_expect_not(kbi_knob_applies(&item, "order", 1), "order does not apply to declines");
    cr_expect(kbi_knob_applies(&item, "block", 1), "a knob not named applies to every variant");
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        copy.knob_variants = bad[i].text;
        cr_expect_eq(kbi_check_abi(&copy, err), KBI_ERR, "'%s' was not refused", bad[i].text);
        cr_expect_str_eq(err, bad[i].said, "'%s'", bad[i].text);
    }
    copy.knob_variants = "block=declines|sum;order=sum";
    cr_expect_eq(kbi_check_abi(&copy, err), KBI_OK, "%s", err);
    cr_expect_not(kbi_knob_applies(&item, "order", 1));
    copy.knob_variants = "";
    cr_expect_eq(kbi_check_abi(&copy, err), KBI_OK, "an empty text names no knob: %s", err);
    cr_expect(kbi_knob_applies(&item, "order", 1));
    copy.knob_variants = "bogus";
    copy.abi_version = KB_ABI_VERSION(1, 3);
    item.minor = 3;
    cr_expect_eq(kbi_check_abi(&copy, err), KBI_OK, "a 1.3 plugin's knob_variants is not read");
    cr_expect(kbi_knob_applies(&item, "order", 1));
    kbi_plugins_free(&set);
}

/* libkbench_a.so whose descriptor says 'b' is refused, saying what to rename. */
Test(loader, a_file_named_after_another_plugin_is_refused)
{
    char dir[] = "/tmp/kbench-name-XXXXXX", cmd[512];
    const char *dirs[] = {dir, NULL};
    int req[] = {1};
    kbi_plugin_set set;
    char err[KBI_ERR_SIZE];
    const char *r;
    cr_assert_not_null(mkdtemp(dir));
    chmod(dir, 0755);
    snprintf(cmd, sizeof cmd, "cp %s/libkbench_good.so %s/libkbench_other.so", KBENCH_TEST_FIXTURES,
             dir);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(kbi_plugins_load(dirs, req, &set, err), KBI_OK, "%s", err);
    cr_expect_eq(set.n, 0);
    r = refusal(&set, "libkbench_other.so");
    cr_assert_not_null(r);
    cr_expect(strstr(r, "refused: the file holds plugin 'good': rename it libkbench_good.so"), "%s",
              r);
    kbi_plugins_free(&set);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_expect_eq(system(cmd), 0);
}

Test(loader, missing_directories)
{
    const char *dirs[] = {"/nonexistent/plugins", NULL};
    int req[] = {1}, opt[] = {0};
    kbi_plugin_set set;
    char err[KBI_ERR_SIZE];
    cr_expect_eq(kbi_plugins_load(dirs, req, &set, err), KBI_ERR_INPUT);
    cr_expect_str_eq(err, "/nonexistent/plugins: cannot read plugin directory: No such file or "
                          "directory");
    /* The default folder is optional: its absence is no error. */
    cr_expect_eq(kbi_plugins_load(dirs, opt, &set, err), KBI_OK);
    cr_expect_eq(set.n, 0);
    kbi_plugins_free(&set);
}

Test(loader, first_directory_wins_and_duplicates_are_noted)
{
    const char *dirs[] = {KBENCH_TEST_FIXTURES, KBENCH_TEST_FIXTURES, NULL};
    int req[] = {1, 1};
    kbi_plugin_set set;
    char err[KBI_ERR_SIZE];
    cr_assert_eq(kbi_plugins_load(dirs, req, &set, err), KBI_OK, "%s", err);
    cr_expect_eq(set.n, 14);
    cr_expect_not_null(refusal(&set, "already loaded"));
    kbi_plugins_free(&set);
}

Test(loader, plugin_dirs_order)
{
    char *dirs[8];
    int req[8];
    size_t n;
    setenv(KBI_PLUGIN_PATH_ENV, "/a:/b::/cli", 1);
    /* --plugins first (a repeated one arrives joined by ':'), then the environment, then the
     * built-in folder, which they add to rather than replace; each folder once. */
    n = kbi_plugin_dirs("/cli:/cli2", dirs, req, 8);
    cr_assert_eq(n, 5);
    cr_expect_str_eq(dirs[0], "/cli");
    cr_expect_str_eq(dirs[1], "/cli2");
    cr_expect_str_eq(dirs[2], "/a");
    cr_expect_str_eq(dirs[3], "/b");
    cr_expect(strstr(dirs[4], "/plugins") != NULL);
    cr_expect_eq(req[0] + req[1] + req[2] + req[3], 4);
    cr_expect_eq(req[4], 0, "the built-in folder may be missing");
    for (size_t i = 0; i < n; i++)
        free(dirs[i]);
    unsetenv(KBI_PLUGIN_PATH_ENV);
    n = kbi_plugin_dirs(NULL, dirs, req, 8);
    cr_assert_eq(n, 1);
    cr_expect(strstr(dirs[0], "/plugins") != NULL);
    cr_expect_eq(req[0], 0);
    free(dirs[0]);
}

Test(loader, repeated_plugins_options_join)
{
    char list[KBI_PLUGIN_DIRS_MAX] = "", big[KBI_PLUGIN_DIRS_MAX];
    cr_expect_eq(kbi_plugin_dirs_add(list, sizeof list, "/x"), KBI_OK);
    cr_expect_eq(kbi_plugin_dirs_add(list, sizeof list, "/y:/z"), KBI_OK);
    cr_expect_str_eq(list, "/x:/y:/z");
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    cr_expect_eq(kbi_plugin_dirs_add(list, sizeof list, big), KBI_ERR);
    cr_expect_str_eq(list, "/x:/y:/z", "unchanged when it does not fit");
}

Test(loader, world_writable_directory_warns)
{
    char dir[] = "/tmp/kbench-ww-XXXXXX";
    const char *dirs[] = {dir, NULL};
    int req[] = {1};
    kbi_plugin_set set;
    char err[KBI_ERR_SIZE];
    cr_assert_not_null(mkdtemp(dir));
    chmod(dir, 0777);
    cr_assert_eq(kbi_plugins_load(dirs, req, &set, err), KBI_OK);
    cr_expect_not_null(refusal(&set, "world-writable"));
    kbi_plugins_free(&set);
    /* The sticky bit (as on /tmp) stops deleting, not planting. */
    chmod(dir, 01777);
    cr_assert_eq(kbi_plugins_load(dirs, req, &set, err), KBI_OK);
    cr_expect_not_null(refusal(&set, "world-writable"), "a sticky world-writable directory warns");
    kbi_plugins_free(&set);
    chmod(dir, 0755);
    cr_assert_eq(kbi_plugins_load(dirs, req, &set, err), KBI_OK);
    cr_expect_null(refusal(&set, "world-writable"));
    kbi_plugins_free(&set);
    rmdir(dir);
}
