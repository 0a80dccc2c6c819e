/*
 * fuzz_annotate.c - libFuzzer entry for the annotate target (the code is
 * apc_fuzz_annotate in targets.c, shared with the plain replay driver).
 * Built by `make fuzz` into build/fuzz/fuzz_annotate.
 */
#include "targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return apc_fuzz_annotate(data, size);
}
