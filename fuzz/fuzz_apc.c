/*
 * fuzz_apc.c - libFuzzer entry for the apc target (the code is
 * apc_fuzz_apc in targets.c, shared with the plain replay driver).
 * Built by `make fuzz` into build/fuzz/fuzz_apc.
 */
#include "targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return apc_fuzz_apc(data, size);
}
