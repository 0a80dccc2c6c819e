/*
 * fuzz_verify.c - libFuzzer entry for the verify target (the code is
 * apc_fuzz_verify in targets.c, shared with the plain replay driver).
 * Built by `make fuzz` into build/fuzz/fuzz_verify.
 */
#include "targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return apc_fuzz_verify(data, size);
}
