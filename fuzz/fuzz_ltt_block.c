/*
 * fuzz_ltt_block.c - libFuzzer entry for the ltt_block target (the code is
 * apc_fuzz_ltt_block in targets.c, shared with the plain replay driver).
 * Built by `make fuzz` into build/fuzz/fuzz_ltt_block.
 */
#include "targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return apc_fuzz_ltt_block(data, size);
}
