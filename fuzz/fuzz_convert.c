/*
 * fuzz_convert.c - libFuzzer entry for the convert target (the code is
 * apc_fuzz_convert in targets.c, shared with the plain replay driver).
 * Built by `make fuzz` into build/fuzz/fuzz_convert.
 */
#include "targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return apc_fuzz_convert(data, size);
}
