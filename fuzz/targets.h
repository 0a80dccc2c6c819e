/*
 * targets.h - the fuzz entry points, one per reader.  Each takes the
 * fuzzer's bytes, runs them through the library the way the commands
 * would, and returns 0.  A bug shows up as a sanitizer report or an
 * abort(), never as a return value.  fuzz/fuzz_NAME.c wraps one of them
 * for libFuzzer; tests/unit/test_fuzz_regress.c replays committed
 * inputs through them without libFuzzer.
 *
 * Multi-file targets (LTT trees, .apc folders) split their input into
 * sections at the marker FZ_SEP; section i becomes member i of the
 * target's fixed list of member names (see targets.c).
 */
#ifndef APC_FUZZ_TARGETS_H
#define APC_FUZZ_TARGETS_H

#include <stddef.h>
#include <stdint.h>

#define FZ_SEP "@@@\n"
#define FZ_SEP_LEN 4

int apc_fuzz_barman(const uint8_t *data, size_t size);
int apc_fuzz_ltt_block(const uint8_t *data, size_t size);
int apc_fuzz_eventdefs(const uint8_t *data, size_t size);
int apc_fuzz_tptp_bin(const uint8_t *data, size_t size);
int apc_fuzz_tptp_xml(const uint8_t *data, size_t size);
int apc_fuzz_apc(const uint8_t *data, size_t size);
int apc_fuzz_annotate(const uint8_t *data, size_t size);
int apc_fuzz_verify(const uint8_t *data, size_t size);
int apc_fuzz_convert(const uint8_t *data, size_t size);

/* Name -> entry point ("barman", "ltt_block", ...); NULL if unknown. */
int (*apc_fuzz_find(const char *name))(const uint8_t *, size_t);

#endif
