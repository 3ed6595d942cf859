/* libFuzzer target: the reader of ncu's `--csv --page raw` output. */
#include "fuzz_targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return kbi_fuzz_ncu_csv(data, size);
}
