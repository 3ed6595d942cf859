/* The fuzz targets' bodies over their seed corpora and over every input
 * that once crashed one of them (tests/fuzz/regressions/TARGET/), so a fixed
 * parser bug stays fixed in every build, sanitized or not, without clang.
 * A crash, an abort from a broken invariant, or (in the KBENCH_SANITIZE
 * build) any ASan/UBSan finding fails the test. */
#define _DEFAULT_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_targets.h"

typedef int (*target_fn)(const uint8_t *, size_t);

/* Runs fn over every file in DIR; returns how many. */
static size_t replay_dir(const char *dir, target_fn fn)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    size_t n = 0;
    if (!d)
        return 0;
    while ((e = readdir(d)) != NULL) {
        char path[4096];
        FILE *f;
        uint8_t *data;
        long size;
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        f = fopen(path, "rb");
        cr_assert_not_null(f, "%s", path);
        fseek(f, 0, SEEK_END);
        size = ftell(f);
        rewind(f);
        data = malloc((size_t)size + 1);
        cr_assert_eq(fread(data, 1, (size_t)size, f), (size_t)size, "%s", path);
        fclose(f);
        cr_log_info("%s (%ld bytes)", path, size);
        fn(data, (size_t)size);
        free(data);
        n++;
    }
    closedir(d);
    return n;
}

static void replay(const char *target, target_fn fn)
{
    char corpus[4096], regressions[4096];
    snprintf(corpus, sizeof corpus, "%s/corpus/%s", KBENCH_TEST_FUZZ_DIR, target);
    snprintf(regressions, sizeof regressions, "%s/regressions/%s", KBENCH_TEST_FUZZ_DIR, target);
    cr_expect_geq(replay_dir(corpus, fn), 5, "%s: the seed corpus is there", corpus);
    replay_dir(regressions, fn);
}

Test(fuzz_corpus, profile)
{
    replay("profile", kbi_fuzz_profile);
}

Test(fuzz_corpus, results)
{
    replay("results", kbi_fuzz_results);
}

Test(fuzz_corpus, ncu_csv)
{
    replay("ncu_csv", kbi_fuzz_ncu_csv);
}
