/* kernels/10_warptile.cu for sgemm_warptile_emu (tests/emu), with test hooks in the same
 * translation unit, so that the anonymous-namespace configurations are visible: split-K
 * launches of every tile configuration, not only of the two that kConfigs lists with split-K,
 * so that each tile shape and K tile size is checked with several splits and a K tail in the
 * last one. */
#include "10_warptile.cu" /* rewritten for the emulation (tests/emu/rewrite.cmake) */

namespace
{
/* The split count launch<Cfg, Split::kAll> picks (the same computation), to show it in the log. */
template <class Cfg> int emu_splits(int M, int N, int K)
{
    const int tiles = CEIL_DIV(M, Cfg::BM) * CEIL_DIV(N, Cfg::BN);
    const int ktiles = CEIL_DIV(K, Cfg::BK);
    const int s = choose_splits(tiles, ktiles, Cfg::BK, sgemm_sm_count(), Cfg::MIN_BLOCKS);
    return CEIL_DIV(ktiles, CEIL_DIV(ktiles, s));
}
struct EmuSplitEntry {
    const char *name;
    cudaError_t (*fn)(const SgemmArgs &);
    int (*splits)(int, int, int);
};
#define EMU_SPLITK(name, Cfg) {name, launch<Cfg, Split::kAll>, emu_splits<Cfg>}
const EmuSplitEntry kEmuSplitK[] = {
    EMU_SPLITK("128x128x16_s3_8w+splitk", Cfg128x128s3),
    EMU_SPLITK("128x128x16_s4_8w+splitk", Cfg128x128s4),
    EMU_SPLITK("128x256x16_s3_16w+splitk", Cfg128x256s3),
    EMU_SPLITK("256x128x16_s3_16w+splitk", Cfg256x128s3),
    EMU_SPLITK("64x128x16_s3_4w+splitk", Cfg64x128s3),
    EMU_SPLITK("128x64x16_s3_4w+splitk", Cfg128x64s3),
    EMU_SPLITK("64x64x16_s4_2w+splitk", Cfg64x64s4),
    EMU_SPLITK("128x128x32_s3_8w+splitk", Cfg128x128x32s3),
    EMU_SPLITK("128x64x32_s3_4w+splitk", Cfg128x64x32s3),
    EMU_SPLITK("256x128x32_s3_16w+splitk", Cfg256x128x32s3),
    EMU_SPLITK("256x128x16_s4_8w_w64+splitk", Cfg256x128s4w64),
    EMU_SPLITK("128x256x16_s4_8w_w64+splitk", Cfg128x256s4w64),
};
#undef EMU_SPLITK
} // namespace

extern "C" int emu_warptile_splitk_count(void)
{
    return (int)(sizeof(kEmuSplitK) / sizeof(kEmuSplitK[0]));
}

extern "C" const char *emu_warptile_splitk_name(int idx)
{
    return kEmuSplitK[idx].name;
}

extern "C" int emu_warptile_splitk_splits(int idx, int M, int N, int K)
{
    return kEmuSplitK[idx].splits(M, N, K);
}

extern "C" cudaError_t emu_warptile_splitk(int idx, int M, int N, int K, float alpha,
                                           const float *A, int lda, const float *B, int ldb,
                                           float beta, const float *C0, float *C, int ldc)
{
    const SgemmArgs a = {M, N, K, alpha, A, lda, B, ldb, beta, C0, C, ldc, 0};
    return kEmuSplitK[idx].fn(a);
}
