/* The sgemm plugin's behaviour that needs no GPU: the host variant verifies against its
 * double reference on odd shapes, and the `config` parameter, which only the two tuned
 * device variants have, makes every other variant skip with the reason (so a profile sweeping
 * configurations does not run the same host or ladder case once per index). */
#define _XOPEN_SOURCE 700
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "helpers.h"

static void setup(void)
{
    make_tmp_named("sgemm");
}

TestSuite(sgemm, .init = setup, .fini = remove_tmp);

Test(sgemm, host_verifies_and_config_belongs_to_the_tuned_variants, .timeout = 120)
{
    kbi_result_set set = {0};
    size_t ok = 0, skipped = 0;
    cr_expect_eq(run_profile_text("[run]\nwarmup = 0\nmin_samples = 2\nmin_time = 0\ntimeout = 60\n"
                                  "[sgemm]\nvariants = host\nshape = 1x1x1, 17x9x33, 64x65x7\n"
                                  "beta = 0, 0.5\nconfig = -1, 3\n",
                                  &set),
                 0);
    cr_assert_eq(set.n_cases, 12);
    for (size_t i = 0; i < set.n_cases; i++) {
        const kbi_case_result *c = &set.cases[i];
        if (strstr(c->params_text, ",config=-1")) {
            cr_expect_eq(c->status, KBI_ST_OK, "%s: %s", c->id, c->message);
            cr_expect(c->has_verify && c->verify_passed, "%s", c->id);
            ok += c->status == KBI_ST_OK;
        } else {
            cr_expect_eq(c->status, KBI_ST_SKIPPED, "%s", c->id);
            cr_expect(strstr(c->message, "warptile or tf32x3") != NULL, "%s: %s", c->id,
                      c->message);
            skipped += c->status == KBI_ST_SKIPPED;
        }
    }
    cr_expect_eq(ok, 6);
    cr_expect_eq(skipped, 6);
    kbi_results_free(&set);
}
