/*
 * packed.h - APC packed integers (signed LEB128, gator's "packed32" and
 * "packed64").
 *
 * A value is split into 7-bit groups, least significant first; bit 7 of a
 * byte says another byte follows.  The last byte's bit 6 is the sign.
 * packed32 takes at most 5 bytes, packed64 at most 10.
 *
 * The single-value functions are the scalar reference: always compiled,
 * always tested.  The batch entry points (arrays in, bytes out and back)
 * are where faster variants slot in; today they call the reference.
 */
#ifndef APC_PACKED_H
#define APC_PACKED_H

#include <stddef.h>
#include <stdint.h>

#define APC_PACKED32_MAX 5
#define APC_PACKED64_MAX 10

/* Decoder results (besides a positive byte count). */
#define APC_PACKED_TRUNCATED 0  /* ran out of input before the last byte */
#define APC_PACKED_OVERLONG (-1) /* more than 5/10 bytes, or out of range */

/* apc_packed_size64() : bytes apc_pack64(v) writes (1..10). */
size_t apc_packed_size64(int64_t v);
size_t apc_packed_size32(int32_t v);

/*
 * apc_pack32/64() : encode v at out (room for 5/10 bytes needed).
 * Returns the number of bytes written.  Always the shortest form.
 */
size_t apc_pack32(uint8_t *out, int32_t v);
size_t apc_pack64(uint8_t *out, int64_t v);

/*
 * apc_unpack32/64() : decode one value from p[0..n).  Returns bytes used
 * (>0), APC_PACKED_TRUNCATED (0) if the input ends inside the value, or
 * APC_PACKED_OVERLONG (-1) if the encoding is longer than 5/10 bytes or
 * its value does not fit 32/64 bits.  Non-minimal encodings of a value
 * that fits (e.g. 80 00 for 0) are accepted; apc_packed_size*() tells a
 * verifier whether an encoding was minimal.
 */
int apc_unpack32(const uint8_t *p, size_t n, int32_t *v);
int apc_unpack64(const uint8_t *p, size_t n, int64_t *v);

/*
 * Batch entry points.  apc_pack64_array() encodes count values into out,
 * which must have room for count * 10 bytes; returns bytes written.
 * apc_unpack64_array() decodes up to count values from in[0..len);
 * stores them in out, sets *used to the bytes consumed, and returns how
 * many values were decoded.  It stops early (returning fewer) at the end
 * of input or at a bad encoding; the caller tells which by trying
 * apc_unpack64() at in + *used.
 */
size_t apc_pack64_array(uint8_t *out, const int64_t *v, size_t count);
size_t apc_unpack64_array(const uint8_t *in, size_t len, int64_t *out,
			  size_t count, size_t *used);

/* The scalar reference implementations behind the batch entry points. */
size_t apc_pack64_array_scalar(uint8_t *out, const int64_t *v, size_t count);
size_t apc_unpack64_array_scalar(const uint8_t *in, size_t len, int64_t *out,
				 size_t count, size_t *used);

#endif
