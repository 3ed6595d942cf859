/* The bodies of kbench's libFuzzer targets, one per input format a user
 * (or a cut-off run) can hand kbench: INI profiles (parse and axis
 * expansion), results files (JSON Lines, as report and compare read them)
 * and ncu's CSV.  Each takes any bytes, must never crash, leak or hit
 * undefined behaviour, and aborts when an invariant of the parser's
 * contract does not hold.  fuzz_<target>.c wraps one as
 * LLVMFuzzerTestOneInput; tests/test_fuzz_corpus.c replays the seed
 * corpora and every input that once crashed, in every build. */
#ifndef KBENCH_FUZZ_TARGETS_H
#define KBENCH_FUZZ_TARGETS_H

#include <stddef.h>
#include <stdint.h>

int kbi_fuzz_profile(const uint8_t *data, size_t size);
int kbi_fuzz_results(const uint8_t *data, size_t size);
int kbi_fuzz_ncu_csv(const uint8_t *data, size_t size);

/* Profiles expanding to more cases than this are parsed but not expanded
 * (the expansion is linear in the case count and would only be slow). */
#define KBI_FUZZ_MAX_CASES 20000

#endif
