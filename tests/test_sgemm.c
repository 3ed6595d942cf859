/* The sgemm plugin's behaviour that needs no GPU: the host variant verifies against its
 * double reference on odd shapes, and the `config` parameter, which only the two tuned
 * device variants have (knob_variants), is refused at profile load for any other variant (so a
 * profile sweeping configurations does not run the same host or ladder case once per index). */
#define _XOPEN_SOURCE 700
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "helpers.h"
#include "loader.h"
#include "profile.h"

static void setup(void)
{
    make_tmp_named("sgemm");
}

TestSuite(sgemm, .init = setup, .fini = remove_tmp);

Test(sgemm, host_verifies_and_config_belongs_to_the_tuned_variants, .timeout = 120)
{
    const char *dirs[] = {KBENCH_TEST_PLUGINS, NULL};
    int req[] = {1};
    kbi_result_set set = {0};
    kbi_plugin_set real;
    kbi_profile p;
    kbi_buf errors = {0};
    char err[KBI_ERR_SIZE];
    cr_expect_eq(
        run_profile_text(
            "[run]\nwarmup = 0\nmin_samples = 2\nmin_time = 0\nmax_time = 0.05\ntimeout = 60\n"
            "[sgemm]\nvariants = host\nshape = 1x1x1, 17x9x33, 64x65x7\n"
            "beta = 0, 0.5\n",
            &set),
        0);
    cr_assert_eq(set.n_cases, 6);
    for (size_t i = 0; i < set.n_cases; i++) {
        const kbi_case_result *c = &set.cases[i];
        cr_expect_eq(c->status, KBI_ST_OK, "%s: %s", c->id, c->message);
        cr_expect(c->has_verify && c->verify_passed, "%s", c->id);
    }
    kbi_results_free(&set);
    cr_assert_eq(kbi_plugins_load(dirs, req, &real, err), KBI_OK, "%s", err);
    cr_expect_eq(kbi_profile_parse("p.ini", "[sgemm]\nvariants = host, warptile\nconfig = -1, 3\n",
                                   &real, &p, &errors),
                 KBI_ERR_INPUT);
    cr_expect_str_eq(errors.data ? errors.data : "",
                     "p.ini:3: config = 3 applies to warptile and tf32x3, not to host (variants at "
                     "line 2), expected only variants it applies to: move host to a section of its "
                     "own, where config keeps its default (-1)\n");
    kbi_buf_free(&errors);
    kbi_plugins_free(&real);
}
