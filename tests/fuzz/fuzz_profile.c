/* libFuzzer target: INI profile parsing, validation and axis expansion. */
#include "fuzz_targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return kbi_fuzz_profile(data, size);
}
