/*
 * packed.c - APC packed integers: the scalar reference, and the fast
 * batch variants behind apc_pack64_array() / apc_unpack64_array().
 *
 * The reference is deliberately plain: one byte per iteration.  The fast
 * variants must equal it on every input (tests/unit/test_packed.c and
 * test_packed_simd.c):
 *   portable  8-byte loads and stores, the length from count-leading-zeros
 *             (encode) or count-trailing-zeros of the stop-bit mask
 *             (decode), 7-bit groups moved with three shift/mask steps;
 *   bmi2      the same with pdep/pext moving the groups;
 *   avx512    eight values per vector: lzcnt for the lengths, the groups
 *             spread in every lane, bytes packed with VBMI2 compress.
 * Decoders take the reference path for anything unusual (fewer than 8
 * bytes left, 9-10 byte values, bad encodings), so errors and *used
 * agree by construction.
 */
#include <string.h>

#include "cpu.h"
#include "packed.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define PACKED_X86 1
#include <immintrin.h>
#endif

#if defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define PACKED_LE 1
#endif

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

/* ---- portable fast variant ------------------------------------------- */

#ifdef PACKED_LE
static size_t packed_pack_portable(uint8_t *out, const int64_t *v, size_t count)
{
	size_t n = 0;

	for (size_t i = 0; i < count; i++)
		n += apc_pack64_wide(out + n, v[i]);
	return n;
}

/* The 7-bit groups of the low n bytes of w (bit 7 of each cleared). */
static inline uint64_t packed_gather(uint64_t x)
{
	x = (x & 0x007f007f007f007fULL) | ((x & 0x7f007f007f007f00ULL) >> 1);
	x = (x & 0x00003fff00003fffULL) | ((x & 0x3fff00003fff0000ULL) >> 2);
	x = (x & 0x000000000fffffffULL) | ((x & 0x0fffffff00000000ULL) >> 4);
	return x;
}

/*
 * One 8-byte load yields up to four values: the stop bits (bit 7 clear)
 * mark the last byte of each.  All four are extracted without branches
 * (the ones past the last stop bit are junk, written but not counted),
 * so the loop-carried chain is one load per word and there is no
 * mispredicted branch per value.  out[i..i+4) must exist: the last few
 * values go through the reference.  GATHER turns the bytes of one value
 * (bit 7 cleared) into its 7n-bit two's complement; masks and shifts are
 * taken mod 64 so the junk lanes never shift by 64.
 */
#define PACKED_EXTRACT(GATHER, w, a, b)                                                       \
	__extension__({                                                                       \
		unsigned pe_nb = (b) - (a), pe_sh = (64 - pe_nb / 8 * 7) & 63;                \
		uint64_t pe_x = GATHER(((w) >> ((a) & 63)) & ((2ULL << ((pe_nb - 1) & 63)) - 1)); \
		(int64_t)(pe_x << pe_sh) >> pe_sh;                                            \
	})

#define PACKED_UNPACK_BODY(GATHER)                                                            \
	const uint64_t hb = 1ULL << 63;                                                       \
	size_t pos = 0, i = 0;                                                                \
	while (i < count) {                                                                   \
		uint64_t w, s0, s1, s2, s3;                                                   \
		unsigned e0, e1, e2, e3, end;                                                 \
		if (len - pos < 8 || count - i < 4)                                           \
			goto slow;                                                            \
		memcpy(&w, in + pos, 8);                                                      \
		s0 = ~w & 0x8080808080808080ULL;                                              \
		w &= 0x7f7f7f7f7f7f7f7fULL;                                                   \
		if (!s0) {                                                                    \
			/* 9 or 10 bytes: the 10th holds bit 63 and copies of the sign */    \
			uint8_t b8, b9;                                                       \
			if (len - pos < 10)                                                   \
				goto slow;                                                    \
			b8 = in[pos + 8];                                                     \
			b9 = in[pos + 9];                                                     \
			if (!(b8 & 0x80)) {                                                   \
				uint64_t x9 = GATHER(w) | (uint64_t)b8 << 56;                 \
				out[i++] = (int64_t)(x9 << 1) >> 1;                           \
				pos += 9;                                                     \
				continue;                                                     \
			}                                                                     \
			if (b9 != 0 && b9 != 0x7f)                                            \
				goto slow;                                                    \
			out[i++] = (int64_t)(GATHER(w) | (uint64_t)(b8 & 0x7f) << 56 |      \
					     (uint64_t)(b9 & 1) << 63);                       \
			pos += 10;                                                            \
			continue;                                                             \
		}                                                                             \
		s1 = s0 & (s0 - 1);                                                           \
		s2 = s1 & (s1 - 1);                                                           \
		s3 = s2 & (s2 - 1);                                                           \
		e0 = (unsigned)__builtin_ctzll(s0) + 1;                                       \
		e1 = (unsigned)__builtin_ctzll(s1 | hb) + 1;                                  \
		e2 = (unsigned)__builtin_ctzll(s2 | hb) + 1;                                  \
		e3 = (unsigned)__builtin_ctzll(s3 | hb) + 1;                                  \
		out[i] = PACKED_EXTRACT(GATHER, w, 0u, e0);                                   \
		out[i + 1] = PACKED_EXTRACT(GATHER, w, e0, e1);                               \
		out[i + 2] = PACKED_EXTRACT(GATHER, w, e1, e2);                               \
		out[i + 3] = PACKED_EXTRACT(GATHER, w, e2, e3);                               \
		end = !s1 ? e0 : !s2 ? e1 : !s3 ? e2 : e3;                                    \
		i += 1 + (s1 != 0) + (s2 != 0) + (s3 != 0);                                   \
		pos += end / 8;                                                               \
		continue;                                                                     \
	slow:                                                                                 \
		{                                                                             \
			int k = apc_unpack64(in + pos, len - pos, &out[i]);                   \
			if (k <= 0)                                                           \
				break;                                                        \
			pos += (size_t)k;                                                     \
			i++;                                                                  \
		}                                                                             \
	}                                                                                     \
	*used = pos;                                                                          \
	return i;

static size_t packed_unpack_portable(const uint8_t *in, size_t len, int64_t *out, size_t count,
				     size_t *used)
{
	PACKED_UNPACK_BODY(packed_gather)
}
#endif

/* ---- x86: BMI2 and AVX-512 --------------------------------------------- */

#ifdef PACKED_X86
__attribute__((target("bmi2,lzcnt")))
static size_t packed_pack_bmi2(uint8_t *out, const int64_t *v, size_t count)
{
	size_t pos = 0;

	for (size_t i = 0; i < count; i++) {
		int64_t x = v[i];
		uint64_t u = (uint64_t)(x ^ (x >> 63)) | 1;
		size_t n = (size_t)(71 - _lzcnt_u64(u)) / 7;
		uint64_t w = _pdep_u64((uint64_t)x, 0x7f7f7f7f7f7f7f7fULL);

		/* bzhi keeps all 8 continuation bits for n > 8 */
		w |= _bzhi_u64(0x8080808080808080ULL, (unsigned)(8 * (n - 1)));
		memcpy(out + pos, &w, 8);
		out[pos + 8] = (uint8_t)(((x >> 56) & 0x7f) | (n == 10 ? 0x80 : 0));
		out[pos + 9] = (uint8_t)((x >> 63) & 0x7f);
		pos += n;
	}
	return pos;
}

static inline __attribute__((target("bmi2"))) uint64_t packed_pext(uint64_t x)
{
	return _pext_u64(x, 0x7f7f7f7f7f7f7f7fULL);
}

__attribute__((target("bmi2,bmi")))
static size_t packed_unpack_bmi2(const uint8_t *in, size_t len, int64_t *out, size_t count,
				 size_t *used)
{
	PACKED_UNPACK_BODY(packed_pext)
}

#define PACKED_AVX512 "avx512f,avx512bw,avx512cd,avx512vl,avx512vbmi2,bmi2,popcnt"

/* Spread the low 56 bits of each lane into 8 bytes of 7 bits. */
__attribute__((target(PACKED_AVX512)))
static inline __m512i packed_spread512(__m512i x)
{
	x = _mm512_and_si512(x, _mm512_set1_epi64(0x00ffffffffffffffLL));
	x = _mm512_or_si512(_mm512_and_si512(x, _mm512_set1_epi64(0x000000000fffffffLL)),
			    _mm512_slli_epi64(_mm512_and_si512(x, _mm512_set1_epi64(0x00fffffff0000000LL)), 4));
	x = _mm512_or_si512(_mm512_and_si512(x, _mm512_set1_epi64(0x00003fff00003fffLL)),
			    _mm512_slli_epi64(_mm512_and_si512(x, _mm512_set1_epi64(0x0fffc0000fffc000LL)), 2));
	x = _mm512_or_si512(_mm512_and_si512(x, _mm512_set1_epi64(0x007f007f007f007fLL)),
			    _mm512_slli_epi64(_mm512_and_si512(x, _mm512_set1_epi64(0x3f803f803f803f80LL)), 1));
	return x;
}

/*
 * Eight values per step.  Lengths n = (71 - lzcnt(v ^ v>>63 | 1)) / 7,
 * with x/7 as (x * 37) >> 8, exact for x <= 71.  Groups with no value
 * over 8 bytes: one 8-byte slot per value and one compress.  Otherwise
 * 16-byte slots (the 9th and 10th bytes from v >> 56) and two.
 */
__attribute__((target(PACKED_AVX512)))
static size_t packed_pack_avx512(uint8_t *out, const int64_t *v, size_t count)
{
	const __m512i ones = _mm512_set1_epi64(-1), c80 = _mm512_set1_epi64((long long)0x8080808080808080ULL);
	const __m512i one = _mm512_set1_epi64(1), eight = _mm512_set1_epi64(8), s64 = _mm512_set1_epi64(64);
	const __m512i lo_idx = _mm512_set_epi64(11, 3, 10, 2, 9, 1, 8, 0);
	const __m512i hi_idx = _mm512_set_epi64(15, 7, 14, 6, 13, 5, 12, 4);
	size_t pos = 0, i = 0;

	/* A 64-byte store at pos <= 10 * i stays inside count * 10 bytes
	 * while 11 values remain (the second half-store reaches 10 i + 104). */
	for (; i + 11 <= count; i += 8) {
		__m512i x = _mm512_loadu_si512(v + i);
		__m512i u = _mm512_or_si512(_mm512_xor_si512(x, _mm512_srai_epi64(x, 63)), one);
		__m512i t = _mm512_sub_epi64(_mm512_set1_epi64(71), _mm512_lzcnt_epi64(u));
		__m512i n = _mm512_srli_epi64(_mm512_add_epi64(_mm512_add_epi64(_mm512_slli_epi64(t, 5),
										   _mm512_slli_epi64(t, 2)), t), 8);
		__m512i n1x8 = _mm512_slli_epi64(_mm512_sub_epi64(n, one), 3);
		/* continuation bits on bytes 0..n-2 (all 8 when n > 8:
		 * vpsllvq gives 0 for counts over 63) */
		__m512i lo = _mm512_or_si512(packed_spread512(x),
					     _mm512_andnot_si512(_mm512_sllv_epi64(ones, n1x8), c80));
		__mmask8 big = _mm512_cmpgt_epu64_mask(n, eight);

		if (!big) {
			__m512i keep = _mm512_srlv_epi64(ones, _mm512_sub_epi64(s64, _mm512_slli_epi64(n, 3)));
			__mmask64 k = _mm512_movepi8_mask(keep);
			_mm512_storeu_si512(out + pos, _mm512_maskz_compress_epi8(k, lo));
			pos += (size_t)_mm_popcnt_u64(k);
		} else {
			__m512i hi = packed_spread512(_mm512_srai_epi64(x, 56));
			__m512i nlo = _mm512_min_epu64(n, eight);
			__m512i nhi = _mm512_subs_epu8(n, eight); /* n - 8, or 0 */
			__m512i klo, khi, a, b;
			__mmask64 ka, kb;

			hi = _mm512_mask_or_epi64(hi, _mm512_cmpeq_epu64_mask(n, _mm512_set1_epi64(10)), hi,
						  _mm512_set1_epi64(0x80));
			klo = _mm512_srlv_epi64(ones, _mm512_sub_epi64(s64, _mm512_slli_epi64(nlo, 3)));
			khi = _mm512_srlv_epi64(ones, _mm512_sub_epi64(s64, _mm512_slli_epi64(nhi, 3)));
			a = _mm512_permutex2var_epi64(lo, lo_idx, hi);
			b = _mm512_permutex2var_epi64(lo, hi_idx, hi);
			ka = _mm512_movepi8_mask(_mm512_permutex2var_epi64(klo, lo_idx, khi));
			kb = _mm512_movepi8_mask(_mm512_permutex2var_epi64(klo, hi_idx, khi));
			_mm512_storeu_si512(out + pos, _mm512_maskz_compress_epi8(ka, a));
			pos += (size_t)_mm_popcnt_u64(ka);
			_mm512_storeu_si512(out + pos, _mm512_maskz_compress_epi8(kb, b));
			pos += (size_t)_mm_popcnt_u64(kb);
		}
	}
	for (; i < count; i++)
		pos += apc_pack64_wide(out + pos, v[i]);
	return pos;
}
#endif

/* ---- dispatch ------------------------------------------------------- */

static const struct apc_packed_impl packed_impls[] = {
	{"scalar", 0, apc_pack64_array_scalar, apc_unpack64_array_scalar},
#ifdef PACKED_LE
	{"portable", APC_CPU_FAST, packed_pack_portable, packed_unpack_portable},
#endif
#ifdef PACKED_X86
	{"bmi2", APC_CPU_FAST | APC_CPU_BMI2, packed_pack_bmi2, packed_unpack_bmi2},
	/* no vector decoder yet: BMI2's pext is the fastest we have */
	{"avx512", APC_CPU_FAST | APC_CPU_BMI2 | APC_CPU_AVX512, packed_pack_avx512, packed_unpack_bmi2},
#endif
};

const struct apc_packed_impl *apc_packed_impls(size_t *n)
{
	*n = sizeof packed_impls / sizeof packed_impls[0];
	return packed_impls;
}

/* The last (fastest) variant whose needs the CPU meets; cached. */
static const struct apc_packed_impl *packed_pick(void)
{
	static const struct apc_packed_impl *chosen;

	if (!chosen) {
		unsigned f = apc_cpu_features();
		const struct apc_packed_impl *best = &packed_impls[0];
		for (size_t i = 0; i < sizeof packed_impls / sizeof packed_impls[0]; i++)
			if ((packed_impls[i].needs & f) == packed_impls[i].needs)
				best = &packed_impls[i];
		chosen = best;
	}
	return chosen;
}

const char *apc_packed_impl_name(void)
{
	return packed_pick()->name;
}

size_t apc_pack64_array(uint8_t *out, const int64_t *v, size_t count)
{
	return packed_pick()->pack(out, v, count);
}

size_t apc_unpack64_array(const uint8_t *in, size_t len, int64_t *out,
			  size_t count, size_t *used)
{
	return packed_pick()->unpack(in, len, out, count, used);
}
