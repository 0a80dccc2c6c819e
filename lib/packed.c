/*
 * packed.c - scalar reference for APC packed integers.
 *
 * Deliberately plain: one byte per iteration.  Fast variants must equal
 * these on every input (tests/unit/test_packed.c).
 */
#include "packed.h"

size_t apc_pack64(uint8_t *out, int64_t v)
{
	size_t n = 0;

	for (;;) {
		uint8_t b = (uint8_t)(v & 0x7f);
		/* Arithmetic shift: gcc and clang define >> on negative
		 * values as sign-propagating, which LEB128 needs. */
		v >>= 7;
		if ((v == 0 && !(b & 0x40)) || (v == -1 && (b & 0x40))) {
			out[n++] = b;
			return n;
		}
		out[n++] = b | 0x80;
	}
}

size_t apc_pack32(uint8_t *out, int32_t v)
{
	return apc_pack64(out, v);
}

size_t apc_packed_size64(int64_t v)
{
	size_t n = 1;

	/* Each byte holds 7 bits; the last one's bit 6 carries the sign. */
	while (!(v >= -64 && v <= 63)) {
		v >>= 7;
		n++;
	}
	return n;
}

size_t apc_packed_size32(int32_t v)
{
	return apc_packed_size64(v);
}

/* Decode into 64 bits with a byte limit, then range-check for 32. */
static int packed_decode(const uint8_t *p, size_t n, size_t max, int64_t *v)
{
	uint64_t r = 0;
	unsigned shift = 0;
	size_t i;

	for (i = 0; i < max; i++) {
		uint8_t b;

		if (i >= n)
			return APC_PACKED_TRUNCATED;
		b = p[i];
		if (shift < 64)
			r |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			if (shift < 64 && (b & 0x40))
				r |= ~(uint64_t)0 << shift;
			/* The 10th byte of a packed64 holds bit 63 only:
			 * the rest of it must be a copy of the sign. */
			if (max == APC_PACKED64_MAX && i == 9) {
				uint8_t rest = b & 0x7e;
				if (!(rest == 0 || rest == 0x7e) ||
				    ((b & 1) != ((b >> 6) & 1)))
					return APC_PACKED_OVERLONG;
			}
			*v = (int64_t)r;
			return (int)(i + 1);
		}
	}
	return APC_PACKED_OVERLONG;
}

int apc_unpack64(const uint8_t *p, size_t n, int64_t *v)
{
	return packed_decode(p, n, APC_PACKED64_MAX, v);
}

int apc_unpack32(const uint8_t *p, size_t n, int32_t *v)
{
	int64_t w;
	int k = packed_decode(p, n, APC_PACKED32_MAX, &w);

	if (k <= 0)
		return k;
	if (w < INT32_MIN || w > INT32_MAX)
		return APC_PACKED_OVERLONG;
	*v = (int32_t)w;
	return k;
}

size_t apc_pack64_array_scalar(uint8_t *out, const int64_t *v, size_t count)
{
	size_t n = 0;

	for (size_t i = 0; i < count; i++)
		n += apc_pack64(out + n, v[i]);
	return n;
}

size_t apc_unpack64_array_scalar(const uint8_t *in, size_t len, int64_t *out,
				 size_t count, size_t *used)
{
	size_t pos = 0, i;

	for (i = 0; i < count; i++) {
		int k = apc_unpack64(in + pos, len - pos, &out[i]);
		if (k <= 0)
			break;
		pos += (size_t)k;
	}
	*used = pos;
	return i;
}

size_t apc_pack64_array(uint8_t *out, const int64_t *v, size_t count)
{
	return apc_pack64_array_scalar(out, v, count);
}

size_t apc_unpack64_array(const uint8_t *in, size_t len, int64_t *out,
			  size_t count, size_t *used)
{
	return apc_unpack64_array_scalar(in, len, out, count, used);
}
