/* The permute checks' problem specs (tests/test_permute.c, the CPU emulations test/emu_*.cpp):
 * a preset at a scale, and for `custom` 5 blocks of rank 3, dims 1-5, 1-6 destination x 1-4
 * source trees; the ranks 7 and 8 that the presets do not reach. */
#ifndef KBENCH_PERMUTE_TEST_SPEC_H
#define KBENCH_PERMUTE_TEST_SPEC_H

#include <string.h>

#include "../permute.h"

static inline pm_spec pm_test_spec(pm_preset preset, int esize, double alpha, double beta,
                                   double scale)
{
    pm_spec s;
    memset(&s, 0, sizeof s);
    s.preset = preset;
    s.esize = esize;
    s.alpha = alpha;
    s.beta = beta;
    s.scale = scale;
    s.n_blocks = 5;
    s.rank = 3;
    s.dmin = 1;
    s.dmax = 5;
    s.rows_min = 1;
    s.rows_max = 6;
    s.cols_min = 1;
    s.cols_max = 4;
    return s;
}

/* Rank 8: a dense 3x4x2x5x3x2x4x3 tensor with its axes swapped in pairs.  KB_OK or
 * pm_set_perm's error. */
static inline int pm_test_spec_rank8(int esize, double alpha, double beta, pm_spec *s, char *msg)
{
    static const int64_t perm[] = {6, 7, 4, 5, 2, 3, 0, 1};
    static const int dims[] = {3, 4, 2, 5, 3, 2, 4, 3};
    *s = pm_test_spec(PM_DENSE, esize, alpha, beta, 1.0);
    s->n_dims = 8;
    memcpy(s->dims, dims, sizeof dims);
    return pm_set_perm(perm, 8, s->perm, &s->n_perm, msg);
}

/* Rank 7: custom, 3 blocks of dims 2x3x5x2x3x2x3 with up to 7 trees (recoupling blocks). */
static inline int pm_test_spec_rank7(int esize, double alpha, double beta, pm_spec *s, char *msg)
{
    static const int64_t perm[] = {3, 0, 6, 1, 5, 2, 4};
    static const int dims[] = {2, 3, 5, 2, 3, 2, 3};
    *s = pm_test_spec(PM_CUSTOM, esize, alpha, beta, 1.0);
    s->n_dims = 7;
    s->n_blocks = 3;
    s->rows_max = 7;
    memcpy(s->dims, dims, sizeof dims);
    return pm_set_perm(perm, 7, s->perm, &s->n_perm, msg);
}

#endif
