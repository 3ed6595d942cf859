/* libFuzzer target: the results (JSON Lines) reader behind report and
 * compare. */
#include "fuzz_targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return kbi_fuzz_results(data, size);
}
