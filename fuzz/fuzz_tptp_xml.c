/*
 * fuzz_tptp_xml.c - libFuzzer entry for the tptp_xml target (the code is
 * apc_fuzz_tptp_xml in targets.c, shared with the plain replay driver).
 * Built by `make fuzz` into build/fuzz/fuzz_tptp_xml.
 */
#include "targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return apc_fuzz_tptp_xml(data, size);
}
