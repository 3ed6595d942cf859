/* Test data of the CPU emulations (emu_ladder.cpp for kernels 01-09, emu_warptile.cpp for 10):
 * a fixed-seed generator of uniform [-1, 1) values and column-major matrices laid out to catch
 * out-of-bounds reads. */
#ifndef KBENCH_SGEMM_EMU_DATA_H
#define KBENCH_SGEMM_EMU_DATA_H

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

static uint64_t rng = 0x1234567;
static float uniform()
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((double)(rng >> 40) / 8388608.0 - 1.0);
}

/* A column-major rows x cols matrix with leading dimension ld, allocated to end exactly after
 * its last element (ASan sees a read past it), optionally starting `shift` floats into the
 * allocation (a misaligned base); all NaN when `nan`, random otherwise. */
struct Mat {
    std::vector<float> *store;
    float *p;
    size_t n;
};
static Mat make(int rows, int cols, int ld, int shift, bool nan)
{
    const size_t n = (size_t)ld * (cols - 1) + rows;
    auto *v = new std::vector<float>(n + shift);
    for (auto &x : *v)
        x = nan ? std::numeric_limits<float>::quiet_NaN() : uniform();
    return Mat{v, v->data() + shift, n};
}

#endif
