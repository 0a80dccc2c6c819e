/*
 * fuzz_barman.c - libFuzzer entry for the barman target (the code is
 * apc_fuzz_barman in targets.c, shared with the plain replay driver).
 * Built by `make fuzz` into build/fuzz/fuzz_barman.
 */
#include "targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return apc_fuzz_barman(data, size);
}
