/* Runs kernels/01_per_element.cu itself on the CPU (permute_per_element_emu, tests/emu): the
 * unique kernel on the abelian blocks and the generic one on the recoupling blocks, which
 * together write the whole tensor, on every preset at small scale and at ranks 7 and 8, float32
 * and float64, beta 0 and not.  Each result is checked as the plugin checks it (pm_check
 * against the double reference within its bound; out starts as NaN, so an element nobody
 * writes fails).  Exit status: 0 when every case verified. */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

#include "kbench/plugin.h"
#include "permute.h"
#include "spec.h"

/* Both kernels on problem s; returns whether the result verified. */
static bool run_case(const pm_spec &s, const char *name, uint64_t seed)
{
    pm_problem p;
    char msg[KB_MSG_SIZE] = "";
    if (pm_generate(&s, seed, &p, msg) != KB_OK) {
        printf("%s: %s\n", name, msg);
        return false;
    }
    const size_t bytes = (size_t)p.dst_elems * p.esize;
    char *out = (char *)malloc(bytes);
    memset(out, 0xff, bytes); /* NaN: an element nobody writes fails */
    int rc = 0;
    long long ctas = 0;
    for (int unique = 0; unique < 2 && rc == 0; unique++) {
        pm_elem_plan e;
        if (pm_plan_elems(&p, unique, &e, msg) != KB_OK) {
            printf("%s: %s\n", name, msg);
            rc = 1;
            break;
        }
        ctas += e.begin[e.n_blocks];
        rc = pm_run_per_element(p.esize, unique, &e, e.blk, e.begin, e.owner, p.src, p.cin, p.u,
                                out, p.alpha, p.beta, NULL);
        pm_elem_plan_free(&e);
    }
    int64_t bad = 0;
    const double err = pm_check(&p, out, &bad);
    printf("%-16s f%d beta %5.2f: %6lld CTAs, err/bound %.3g, %lld bad%s\n", name, 8 * p.esize,
           p.beta, ctas, err, (long long)bad, rc != 0 ? ", launch failed" : "");
    free(out);
    pm_problem_free(&p);
    return rc == 0 && err <= 1.0;
}

int main()
{
    static const double scale[PM_N_PRESETS] = {
        [PM_ABELIAN_SMALL] = 0.1, [PM_RECOUPLING_SMALL] = 0.1, [PM_MANY_SMALL] = 0.02,
        [PM_LARGE_U] = 0.005,     [PM_FEW_LARGE] = 0.0001,     [PM_MIXED] = 0.01,
        [PM_DENSE] = 0.0002,      [PM_CUSTOM] = 1.0,
    };
    int fails = 0, cases = 0;
    char msg[KB_MSG_SIZE] = "";
    for (int esize = 4; esize <= 8; esize += 4)
        for (double beta : {0.0, -0.75}) {
            for (int pr = 0; pr < PM_N_PRESETS; pr++) {
                const pm_spec s = pm_test_spec((pm_preset)pr, esize, 1.5, beta, scale[pr]);
                fails += !run_case(s, pm_preset_name((pm_preset)pr), 5 + pr);
                cases++;
            }
            pm_spec s8, s7;
            if (pm_test_spec_rank8(esize, 1.5, beta, &s8, msg) != KB_OK ||
                pm_test_spec_rank7(esize, 1.5, beta, &s7, msg) != KB_OK) {
                printf("ranks 7 and 8: %s\n", msg);
                return 1;
            }
            fails += !run_case(s8, "dense rank 8", 11);
            fails += !run_case(s7, "custom rank 7", 13);
            cases += 2;
        }
    return emu_summary(fails, cases);
}
