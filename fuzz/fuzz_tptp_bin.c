/*
 * fuzz_tptp_bin.c - libFuzzer entry for the tptp_bin target (the code is
 * apc_fuzz_tptp_bin in targets.c, shared with the plain replay driver).
 * Built by `make fuzz` into build/fuzz/fuzz_tptp_bin.
 */
#include "targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return apc_fuzz_tptp_bin(data, size);
}
