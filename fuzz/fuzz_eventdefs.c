/*
 * fuzz_eventdefs.c - libFuzzer entry for the eventdefs target (the code is
 * apc_fuzz_eventdefs in targets.c, shared with the plain replay driver).
 * Built by `make fuzz` into build/fuzz/fuzz_eventdefs.
 */
#include "targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return apc_fuzz_eventdefs(data, size);
}
