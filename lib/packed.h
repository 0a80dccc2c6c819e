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
 * dispatch, once, to the fastest variant this CPU runs (lib/cpu.h;
 * APC_NO_SIMD=1 forces the reference).  Every variant gives the same
 * bytes, values, counts and *used as the reference on every input.
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

/*
 * One implementation of the batch entry points.  `needs` is the set of
 * APC_CPU_* bits (lib/cpu.h) it requires; 0 for the reference.
 */
struct apc_packed_impl {
	const char *name;
	unsigned needs;
	size_t (*pack)(uint8_t *out, const int64_t *v, size_t count);
	size_t (*unpack)(const uint8_t *in, size_t len, int64_t *out, size_t count, size_t *used);
};

/* apc_packed_impls() : every compiled-in variant, reference first. */
const struct apc_packed_impl *apc_packed_impls(size_t *n);
/* apc_packed_impl_name() : the variant the batch entry points use. */
const char *apc_packed_impl_name(void);

/* Tables behind apc_pack64_wide(), in packed.c: by count-leading-zeros
 * of the magnitude (v ^ v >> 63) | 1, the length and the continuation
 * bits of bytes 0-7; by the top byte (v >> 56), bytes 8 and 9. */
extern const uint8_t apc_packed_len_lz[64];
extern const uint64_t apc_packed_cont_lz[64];
extern const uint16_t apc_packed_hi_top[256];

/*
 * apc_packed_spread() : the low 56 bits of x as eight 7-bit groups, one
 * per byte.  Each step moves the upper half of every field up by adding
 * a multiple of it (x + (h << s) - h): three operations a step and no
 * variable shift.
 */
static inline uint64_t apc_packed_spread(uint64_t x)
{
	x &= 0x00ffffffffffffffULL;
	x += (x & 0x00fffffff0000000ULL) * 15;
	x += (x & 0x0fffc0000fffc000ULL) * 3;
	x += x & 0x3f803f803f803f80ULL;
	return x;
}

/* apc_packed_gather() : the 7-bit groups in x's eight bytes (bit 7 of
 * each clear) joined into 56 bits: the inverse of apc_packed_spread(). */
static inline uint64_t apc_packed_gather(uint64_t x)
{
	x = (x & 0x007f007f007f007fULL) | ((x & 0x7f007f007f007f00ULL) >> 1);
	x = (x & 0x00003fff00003fffULL) | ((x & 0x3fff00003fff0000ULL) >> 2);
	x = (x & 0x000000000fffffffULL) | ((x & 0x0fffffff00000000ULL) >> 4);
	return x;
}

/*
 * apc_pack64_wide() : apc_pack64() without the byte loop (one 8-byte
 * and one 2-byte store, count-leading-zeros and tables for the length).
 * Same bytes and return value, but it always writes 10 bytes: out needs
 * room for 10, as for apc_pack64(), and bytes past the returned count
 * are clobbered.
 */
static inline size_t apc_pack64_wide(uint8_t *out, int64_t v)
{
#if defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	unsigned lz = (unsigned)__builtin_clzll((uint64_t)(v ^ (v >> 63)) | 1);
	uint64_t w = apc_packed_spread((uint64_t)v) | apc_packed_cont_lz[lz];
	uint16_t hi = apc_packed_hi_top[(uint64_t)v >> 56];

	__builtin_memcpy(out, &w, 8);
	__builtin_memcpy(out + 8, &hi, 2);
	return apc_packed_len_lz[lz];
#else
	return apc_pack64(out, v);
#endif
}

/*
 * apc_pack64_small() : apc_pack64_wide() for values that are almost
 * always 0..63 (counter keys, cores), which are their own one-byte
 * encoding: one store behind a branch that predicts well.
 */
static inline size_t apc_pack64_small(uint8_t *out, int64_t v)
{
	if ((uint64_t)v < 64) {
		*out = (uint8_t)v;
		return 1;
	}
	return apc_pack64_wide(out, v);
}

#endif
