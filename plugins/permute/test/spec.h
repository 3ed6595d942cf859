/* The permute checks' problem spec (tests/test_permute.c, test/emu_tiled.cpp,
 * test/emu_fused.cpp): a preset at a scale, and for `custom` 5 blocks of rank 3, dims 1-5,
 * 1-6 destination x 1-4 source trees. */
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

#endif
