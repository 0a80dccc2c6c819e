/*
 * packed.c - APC packed integers: the scalar reference, and the fast
 * batch variants behind apc_pack64_array() / apc_unpack64_array().
 *
 * The reference is deliberately plain: one byte per iteration.  The fast
 * variants must equal it on every input (tests/unit/test_packed.c and
 * test_packed_simd.c):
 *   portable  encode: two values per 64-bit word when both fit 4 bytes,
 *             else one, lengths and continuation bits from tables by
 *             count-leading-zeros, 8-byte stores, no branch on length;
 *             decode: up to four values per 8-byte load, ends from
 *             count-trailing-zeros of the stop bits;
 *   bmi2      the portable encoder built with lzcnt/shlx; decode with
 *             pext gathering the groups;
 *   avx512    (F/BW/CD/VL, VBMI, VBMI2) encode: 16 values per step in
 *             32-bit lanes while they fit 4 bytes, else 8 in 64-bit
 *             lanes; lzcnt and vpermb tables for the lengths,
 *             vpmultishiftqb to spread the groups, compress to pack;
 *             decode: Masked VByte style, 16 (or up to 8) values per
 *             64-byte window, vpermb to gather, sign extension by a
 *             shift pair;
 *   neon      (aarch64) two values per vector both ways.
 * Decoders take the reference path for anything unusual (a 9-10 byte
 * value where a variant has no path for it, too little input left for a
 * full load, bad encodings), so errors and *used agree by construction.
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

#if defined(PACKED_LE) && defined(__aarch64__) && defined(__ARM_NEON)
#define PACKED_NEON 1
#include <arm_neon.h>
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
/*
 * Tables indexed by lz = count-leading-zeros of (v ^ v >> 63) | 1, which
 * is 1..63: the length n = (71 - lz) / 7 (1..10) and the continuation
 * bits of the first 8 bytes (bytes 0..min(n, 9) - 2).  A load each
 * instead of a division and a shift by a variable count.
 */
#define PACKED_R8(f, b) f(b), f(b + 1), f(b + 2), f(b + 3), f(b + 4), f(b + 5), f(b + 6), f(b + 7)
#define PACKED_R64(f)                                                                  \
	PACKED_R8(f, 0), PACKED_R8(f, 8), PACKED_R8(f, 16), PACKED_R8(f, 24), PACKED_R8(f, 32), \
		PACKED_R8(f, 40), PACKED_R8(f, 48), PACKED_R8(f, 56)
#define PACKED_LEN(lz) ((71 - (lz)) / 7)
#define PACKED_MIN8(n) ((n) > 8 ? 8 : (n))
#define PACKED_CONT(lz)                                                                \
	((0x8080808080808080ULL >> ((64 - 8 * PACKED_MIN8(PACKED_LEN(lz) - 1)) % 64)) *  \
	 (PACKED_LEN(lz) > 1))
const uint8_t apc_packed_len_lz[64] = {PACKED_R64(PACKED_LEN)};
const uint64_t apc_packed_cont_lz[64] = {PACKED_R64(PACKED_CONT)};

/*
 * Bytes 8 and 9 of a 9- or 10-byte value, indexed by its top byte
 * (v >> 56): bits 56-62 with a continuation bit when the value needs
 * the 10th byte (top byte outside -64..63), then the sign copies.  For
 * shorter values they are junk past the end, as apc_pack64_wide() says.
 */
#define PACKED_HI(t)                                                                   \
	(uint16_t)(((t) & 0x7f) | ((t) >= 64 && (t) < 192 ? 0x80 : 0) | ((t) >= 128 ? 0x7f00 : 0))
#define PACKED_HI64(b) PACKED_R64(PACKED_HI_B##b)
#define PACKED_HI_B0(t) PACKED_HI(t)
#define PACKED_HI_B64(t) PACKED_HI((t) + 64)
#define PACKED_HI_B128(t) PACKED_HI((t) + 128)
#define PACKED_HI_B192(t) PACKED_HI((t) + 192)
const uint16_t apc_packed_hi_top[256] = {PACKED_HI64(0), PACKED_HI64(64), PACKED_HI64(128),
					    PACKED_HI64(192)};

/* One value, any length: see packed_pack_portable(). */
static inline size_t packed_put_portable(uint8_t *out, int64_t x)
{
	return apc_pack64_wide(out, x);
}

/* For a value of 1-4 bytes (28 bits): the length and continuation bits
 * by count-leading-zeros of its 32-bit magnitude (5..31). */
#define PACKED_LEN32(lz) ((39 - (lz)) / 7)
#define PACKED_MIN4(n) ((n) > 4 ? 4 : (n))
#define PACKED_CONT32(lz) ((uint32_t)(0x808080u >> ((24 - 8 * (PACKED_MIN4(PACKED_LEN32(lz)) - 1)) % 32)) * \
			   (PACKED_LEN32(lz) > 1))
/* Indexed by the top bit's index 31 - lz (one bsr on x86, no xor). */
#define PACKED_LEN32B(b) PACKED_LEN32(31 - (b))
#define PACKED_CONT32B(b) PACKED_CONT32(31 - (b))
static const uint8_t packed_len_b32[32] = {PACKED_R8(PACKED_LEN32B, 0), PACKED_R8(PACKED_LEN32B, 8),
					   PACKED_R8(PACKED_LEN32B, 16), PACKED_R8(PACKED_LEN32B, 24)};
static const uint32_t packed_cont_b32[32] = {PACKED_R8(PACKED_CONT32B, 0), PACKED_R8(PACKED_CONT32B, 8),
					     PACKED_R8(PACKED_CONT32B, 16), PACKED_R8(PACKED_CONT32B, 24)};

/*
 * Two values per step when both fit 4 bytes (most timestamp deltas and
 * counter values): their 28-bit groups share one 64-bit word, so one
 * spread serves both, then two 8-byte stores.  Anything longer takes the
 * one-value path, which has no branch on the length.  Every store
 * writes at most 10 bytes from the value's start; the caller gives
 * count * 10 bytes of room.
 */
static inline __attribute__((always_inline)) size_t packed_pack_pairs(uint8_t *out, const int64_t *v,
									size_t count)
{
	const uint64_t lim = (uint64_t)1 << 27;
	size_t pos = 0, i = 0;

	for (; i + 2 <= count; i += 2) {
		int64_t a = v[i], b = v[i + 1];
		uint32_t a32 = (uint32_t)a, b32 = (uint32_t)b;
		unsigned la, lb;
		uint64_t w;

		if ((((uint64_t)a + lim) | ((uint64_t)b + lim)) >> 28) {
			pos += packed_put_portable(out + pos, a);
			pos += packed_put_portable(out + pos, b);
			continue;
		}
		la = 31 ^ (unsigned)__builtin_clz((a32 ^ (uint32_t)(a >> 31)) | 1);
		lb = 31 ^ (unsigned)__builtin_clz((b32 ^ (uint32_t)(b >> 31)) | 1);
		w = (a32 & 0x0fffffffu) | (uint64_t)(b32 & 0x0fffffffu) << 32;
		w += (w & 0x0fffc0000fffc000ULL) * 3;
		w += w & 0x3f803f803f803f80ULL;
		w |= packed_cont_b32[la] | (uint64_t)packed_cont_b32[lb] << 32;
		memcpy(out + pos, &w, 8);
		pos += packed_len_b32[la];
		w >>= 32;
		memcpy(out + pos, &w, 8);
		pos += packed_len_b32[lb];
	}
	if (i < count)
		pos += packed_put_portable(out + pos, v[i]);
	return pos;
}

static size_t packed_pack_portable(uint8_t *out, const int64_t *v, size_t count)
{
	return packed_pack_pairs(out, v, count);
}


/* 1 << (7n - 1), n = 1..8: an n-byte value's sign bit, for the sign
 * extension (x ^ b) - b of its 7n bits. */
static const uint64_t packed_sign_n[9] = {
	0, 1ULL << 6, 1ULL << 13, 1ULL << 20, 1ULL << 27, 1ULL << 34, 1ULL << 41, 1ULL << 48, 1ULL << 55,
};

/*
 * Two values per 8-byte load when both end inside it (most of the
 * time: the common ones are 1-4 bytes), else one.  The stop bits (bit 7
 * clear) give the ends by count-trailing-zeros; a mask cuts each value
 * out; GATHER joins its 7-bit groups (bit 7 already cleared); the sign
 * extension is a table lookup and two operations.  Two values per load
 * halves the chain from one load to the next (its address depends on
 * the lengths just decoded).  A 9-10 byte value is decoded in place;
 * anything else unusual (bad encodings, under 8 bytes left) goes to the
 * reference, one value.
 */
#define PACKED_UNPACK_BODY(GATHER)                                                            \
	size_t pos = 0, i = 0;                                                                \
	while (i < count) {                                                                   \
		uint64_t w, s, s1, x0;                                                        \
		unsigned e0, n0;                                                              \
		if (len - pos < 8)                                                            \
			goto slow;                                                            \
		memcpy(&w, in + pos, 8);                                                      \
		s = ~w & 0x8080808080808080ULL;                                               \
		w &= 0x7f7f7f7f7f7f7f7fULL;                                                   \
		if (!s) {                                                                     \
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
		e0 = (unsigned)__builtin_ctzll(s); /* 8 n0 - 1 */                           \
		n0 = (e0 >> 3) + 1;                                                           \
		x0 = GATHER(w & (~0ULL >> (63 - e0)));                                        \
		out[i] = (int64_t)((x0 ^ packed_sign_n[n0]) - packed_sign_n[n0]);             \
		s1 = s & (s - 1);                                                             \
		if (s1 && count - i >= 2) {                                                   \
			unsigned e1 = (unsigned)__builtin_ctzll(s1), n1 = (e1 >> 3) + 1 - n0; \
			uint64_t x1 = GATHER((w & (~0ULL >> (63 - e1))) >> (8 * n0));         \
			out[i + 1] = (int64_t)((x1 ^ packed_sign_n[n1]) - packed_sign_n[n1]); \
			i += 2;                                                               \
			pos += n0 + n1;                                                       \
			continue;                                                             \
		}                                                                             \
		i++;                                                                          \
		pos += n0;                                                                    \
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
	PACKED_UNPACK_BODY(apc_packed_gather)
}
#endif

/* ---- x86: BMI2 and AVX-512 --------------------------------------------- */

#ifdef PACKED_X86
/* The portable pair encoder built with lzcnt and BMI2's flag-free
 * shifts (pdep per value was slower than one spread per two values). */
__attribute__((target("bmi2,lzcnt")))
static size_t packed_pack_bmi2(uint8_t *out, const int64_t *v, size_t count)
{
	return packed_pack_pairs(out, v, count);
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

#define PACKED_AVX512 "avx512f,avx512bw,avx512cd,avx512vl,avx512vbmi,avx512vbmi2,bmi,bmi2,popcnt"

/*
 * Byte tables for vpermb, indexed by lz (encoder) or by the length n
 * (decoder).  Shift counts for vpsrlvq on all-ones: 64 - 8k keeps the
 * low k bytes (64 gives none).  Encoder: keep of the first 8 bytes
 * (min(n, 8) bytes), their continuation bits (min(n - 1, 8)), keep of
 * bytes 8-9 (n - 8), and the continuation bit of byte 8 (n == 10).
 * Decoder: the sign-extension shift 64 - 7n (none for 10 bytes).
 * Entry 0 of tk, tc, tk32 and ts is 0, and no index is 0 there (lz >= 1
 * as v ^ v >> 63 has its top bit clear; n >= 1), so a lookup needs no
 * mask: the lane's upper index bytes are 0 and fetch that 0.
 */
#define PACKED_TK(lz) (64 - 8 * PACKED_MIN8(PACKED_LEN(lz)))
#define PACKED_TC(lz) (64 - 8 * PACKED_MIN8(PACKED_LEN(lz) - 1))
#define PACKED_TH(lz) (PACKED_LEN(lz) > 8 ? 64 - 8 * (PACKED_LEN(lz) - 8) : 64)
#define PACKED_THC(lz) (PACKED_LEN(lz) == 10 ? 0x80 : 0)
#define PACKED_TS(n) ((n) >= 1 && (n) <= 9 ? 64 - 7 * ((n) % 10) : 0)
#define PACKED_IOTA(j) (j)
static const uint8_t packed_tk[64] = {PACKED_R64(PACKED_TK)};
static const uint8_t packed_tc[64] = {PACKED_R64(PACKED_TC)};
static const uint8_t packed_th[64] = {PACKED_R64(PACKED_TH)};
static const uint8_t packed_thc[64] = {PACKED_R64(PACKED_THC)};
static const uint8_t packed_ts[64] = {PACKED_R64(PACKED_TS)};
static const uint8_t packed_iota[64] = {PACKED_R64(PACKED_IOTA)};
/* keep shift for a 1-4 byte value in a 32-bit lane, by its lzcnt (5..31) */
#define PACKED_TK32(lz) ((lz) >= 5 && (lz) < 32 ? 32 - 8 * PACKED_MIN4(PACKED_LEN32(lz)) : 0)
static const uint8_t packed_tk32[64] = {PACKED_R64(PACKED_TK32)};

/* Byte 0 of every 64-bit lane (table lookups write only there). */
#define PACKED_B0 ((__mmask64)0x0101010101010101ULL)

/* Constants of the AVX-512 encoder, set once per call. */
struct packed_enc512 {
	__m512i ones, one, c7f, eight, tk, tc, th, thc, groups, hgroups, lo_idx, hi_idx;
};

/*
 * The values of x in `lanes` (the low ones; the others must be 0)
 * packed at out; returns the bytes written (at most 80, but the stores
 * reach up to 104 bytes past out: 40 + 64).  lz =
 * lzcnt(v ^ v >> 63 | 1) gives, through the tables above, which bytes
 * each value keeps and where its continuation bits go (the kept bytes
 * but the last: the keep mask shifted down a byte); vpmultishiftqb
 * spreads the low 56 bits into 7-bit groups in one instruction; VBMI2
 * compress packs the kept bytes.  With a 9-10 byte value among them,
 * or when the caller asks (`wide`), each value gets a 16-byte slot,
 * bytes 8-9 from its top byte, and there are two compresses.
 */
__attribute__((target(PACKED_AVX512)))
static inline size_t packed_pack8_avx512(const struct packed_enc512 *c, uint8_t *out, __m512i x, int wide,
					 __mmask8 lanes)
{
	/* (x ^ x >> 63) | 1: ternary-logic table 0xbe is (a ^ b) | c */
	__m512i lz = _mm512_lzcnt_epi64(_mm512_ternarylogic_epi64(x, _mm512_srai_epi64(x, 63), c->one, 0xbe));
	__m512i keep = _mm512_srlv_epi64(c->ones, _mm512_permutexvar_epi8(lz, c->tk));
	__m512i ms = _mm512_multishift_epi64_epi8(c->groups, x);
	__m512i cont, lo, hkeep, hcont, hi, a, b;
	__mmask64 ka, kb;
	size_t n;

	if (lanes != 0xff) /* fewer than eight: the others keep no byte */
		keep = _mm512_maskz_mov_epi64(lanes, keep);
	if (!wide && !_mm512_cmple_epu64_mask(lz, c->eight)) { /* every n <= 8 */
		__mmask64 k = _mm512_movepi8_mask(keep);
		/* 0xe4 is (a & c) | (b & ~c): the groups, and 0x80 where cont */
		lo = _mm512_ternarylogic_epi64(ms, _mm512_srli_epi64(keep, 8), c->c7f, 0xe4);
		_mm512_storeu_si512(out, _mm512_maskz_compress_epi8(k, lo));
		return (size_t)_mm_popcnt_u64(k);
	}
	cont = _mm512_srlv_epi64(c->ones, _mm512_permutexvar_epi8(lz, c->tc));
	lo = _mm512_ternarylogic_epi64(ms, cont, c->c7f, 0xe4);
	hkeep = _mm512_srlv_epi64(c->ones, _mm512_maskz_permutexvar_epi8(PACKED_B0, lz, c->th));
	hcont = _mm512_maskz_permutexvar_epi8(PACKED_B0, lz, c->thc);
	/* bytes 8 and 9 from the top byte, sign-extended */
	hi = _mm512_ternarylogic_epi64(_mm512_multishift_epi64_epi8(c->hgroups, _mm512_srai_epi64(x, 56)), hcont,
				       c->c7f, 0xe4);
	a = _mm512_permutex2var_epi64(lo, c->lo_idx, hi);
	b = _mm512_permutex2var_epi64(lo, c->hi_idx, hi);
	ka = _mm512_movepi8_mask(_mm512_permutex2var_epi64(keep, c->lo_idx, hkeep));
	kb = _mm512_movepi8_mask(_mm512_permutex2var_epi64(keep, c->hi_idx, hkeep));
	_mm512_storeu_si512(out, _mm512_maskz_compress_epi8(ka, a));
	n = (size_t)_mm_popcnt_u64(ka);
	_mm512_storeu_si512(out + n, _mm512_maskz_compress_epi8(kb, b));
	return n + (size_t)_mm_popcnt_u64(kb);
}

/*
 * Sixteen values per step while they all fit 4 bytes (most timestamp
 * deltas and counter values): the same as packed_pack8_avx512() in
 * 32-bit lanes, one compress for all sixteen.  Otherwise each half of
 * eight in 16-byte slots without looking whether it needs them: near a
 * long value the two layouts alternate too irregularly to predict, and
 * a mispredicted branch costs more than the wider layout (2.1 -> 2.3-2.8
 * G values/s in packbench with runs of long values, 1.2 -> 1.4 with
 * them scattered).
 */
__attribute__((target(PACKED_AVX512)))
static size_t packed_pack_avx512(uint8_t *out, const int64_t *v, size_t count)
{
	struct packed_enc512 c;
	const __m512i tk32 = _mm512_loadu_si512(packed_tk32);
	const __m512i groups32 = _mm512_set1_epi64(0x352e2720150e0700LL); /* two 32-bit lanes */
	const __m512i even32 = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
	const __m512i bias = _mm512_set1_epi64(1 << 27), not28 = _mm512_set1_epi64(~(long long)0x0fffffff);
	const __m512i one32 = _mm512_set1_epi32(1), ones32 = _mm512_set1_epi32(-1);
	const size_t room = count * APC_PACKED64_MAX;
	size_t pos = 0, i = 0;

	c.ones = _mm512_set1_epi64(-1);
	c.one = _mm512_set1_epi64(1);
	c.c7f = _mm512_set1_epi8(0x7f);
	c.eight = _mm512_set1_epi64(8);
	c.tk = _mm512_loadu_si512(packed_tk);
	c.tc = _mm512_loadu_si512(packed_tc);
	c.th = _mm512_loadu_si512(packed_th);
	c.thc = _mm512_loadu_si512(packed_thc);
	/* multishift controls: byte j takes bits 7j..7j+7 (then masked to 7) */
	c.groups = _mm512_set1_epi64(0x312a231c150e0700LL);
	c.hgroups = _mm512_set1_epi64(0x0700);
	c.lo_idx = _mm512_set_epi64(11, 3, 10, 2, 9, 1, 8, 0);
	c.hi_idx = _mm512_set_epi64(15, 7, 14, 6, 13, 5, 12, 4);
	/*
	 * Room is count * 10 bytes, and values average about 3, so the
	 * full-width stores fit until close to the end: a step of eight
	 * reaches pos + 104, two of them pos + 184, the 16-wide step pos + 64.
	 */
	while (i + 16 <= count && room - pos >= 184) {
		__m512i x = _mm512_loadu_si512(v + i), x1 = _mm512_loadu_si512(v + i + 8);
		/* all 16 in -2^27 .. 2^27 - 1 */
		__m512i t = _mm512_or_si512(_mm512_add_epi64(x, bias), _mm512_add_epi64(x1, bias));

		if (!_mm512_test_epi64_mask(t, not28)) {
			__m512i d = _mm512_permutex2var_epi32(x, even32, x1), lz, keep, ms;
			__mmask64 k;

			lz = _mm512_lzcnt_epi32(_mm512_ternarylogic_epi32(d, _mm512_srai_epi32(d, 31), one32, 0xbe));
			keep = _mm512_srlv_epi32(ones32, _mm512_permutexvar_epi8(lz, tk32));
			ms = _mm512_ternarylogic_epi64(_mm512_multishift_epi64_epi8(groups32, d),
						       _mm512_srli_epi32(keep, 8), c.c7f, 0xe4);
			k = _mm512_movepi8_mask(keep);
			_mm512_storeu_si512(out + pos, _mm512_maskz_compress_epi8(k, ms));
			pos += (size_t)_mm_popcnt_u64(k);
		} else {
			pos += packed_pack8_avx512(&c, out + pos, x, 1, 0xff);
			pos += packed_pack8_avx512(&c, out + pos, x1, 1, 0xff);
		}
		i += 16;
	}
	for (; i + 8 <= count && room - pos >= 104; i += 8)
		pos += packed_pack8_avx512(&c, out + pos, _mm512_loadu_si512(v + i), 0, 0xff);
	/* the last one to seven in one masked step (short arrays, such as
	 * the writer's counter rows, are mostly tail) */
	if (i < count && room - pos >= 104) {
		__mmask8 lanes = (__mmask8)((1u << (count - i)) - 1);
		pos += packed_pack8_avx512(&c, out + pos, _mm512_maskz_loadu_epi64(lanes, v + i), 0, lanes);
		i = count;
	}
	for (; i < count; i++)
		pos += apc_pack64_wide(out + pos, v[i]);
	return pos;
}

/* Constants of the AVX-512 decoder, loaded once per call. */
struct packed_dec512 {
	__m512i iota, ts, bpos, bcast, c7f, one, mul1, mul2, lo28, eightb, eight, ten, m7f;
};

/*
 * Eight values of the window w into 64-bit lanes, given each one's end
 * e_j and the previous end prev_j (both byte offsets in w).  Lanes not
 * in `lanes` are junk.  Sets *bad when a lane in `lanes` is longer than
 * 10 bytes or has a bad 10th byte: the caller then takes the reference.
 */
__attribute__((target(PACKED_AVX512)))
static inline __m512i packed_lanes512(const struct packed_dec512 *c, __m512i w, __m512i e, __m512i prev,
				      __mmask8 lanes, unsigned *bad)
{
	__m512i n = _mm512_sub_epi64(e, prev);
	__m512i nb = _mm512_shuffle_epi8(n, c->bcast); /* n_j in every byte of lane j */
	__m512i idx = _mm512_add_epi8(_mm512_shuffle_epi8(_mm512_add_epi64(prev, c->one), c->bcast), c->bpos);
	__m512i x = _mm512_maskz_permutexvar_epi8(_mm512_cmplt_epu8_mask(c->bpos, nb), idx, w), sh;

	/* 8 x 7 bits -> 4 x 14 -> 2 x 28 -> 56 */
	x = _mm512_maddubs_epi16(c->mul1, _mm512_and_si512(x, c->c7f));
	x = _mm512_madd_epi16(x, c->mul2);
	x = _mm512_ternarylogic_epi64(x, _mm512_srli_epi64(x, 4), c->lo28, 0xe4);
	if (_mm512_cmpgt_epu64_mask(n, c->eight) & lanes) {
		__m512i hi, b9;
		if (_mm512_cmpgt_epu64_mask(n, c->ten) & lanes) {
			*bad = 1;
			return x;
		}
		hi = _mm512_maskz_permutexvar_epi8(_mm512_cmplt_epu8_mask(c->bpos, _mm512_subs_epu8(nb, c->eightb)),
						   _mm512_add_epi8(idx, c->eightb), w);
		/* the 10th byte must be 00 or 7f (bit 63 and its copies) */
		b9 = _mm512_srli_epi64(hi, 8);
		if (_mm512_cmpneq_epu64_mask(b9, _mm512_setzero_si512()) & _mm512_cmpneq_epu64_mask(b9, c->m7f) &
		    lanes)
			*bad = 1;
		x = _mm512_or_si512(x, _mm512_slli_epi64(_mm512_and_si512(hi, c->c7f), 56));
		x = _mm512_or_si512(x, _mm512_slli_epi64(b9, 63));
	}
	sh = _mm512_permutexvar_epi8(n, c->ts); /* 64 - 7n */
	return _mm512_srav_epi64(_mm512_sllv_epi64(x, sh), sh);
}

/*
 * In the manner of Masked VByte: the stop bits (bit 7 clear) of a
 * 64-byte window give each value's end; the end offsets, compressed out
 * of 0..63, give starts and lengths; vpermb moves each value's bytes
 * into its own 64-bit lane; two multiply-adds join the 7-bit groups; a
 * shift pair sign-extends from bit 7n - 1.  Sixteen values per window
 * when it holds them (one load and one mask per 16 keeps the chain from
 * one window to the next short), else up to eight.  Near the end of
 * input the window is a masked load (no byte past in + len is touched)
 * and stop bits past the end do not count.  A value over 10 bytes or a
 * bad 10th byte goes to the reference, one value, so results and *used
 * match it exactly.
 */
__attribute__((target(PACKED_AVX512)))
static size_t packed_unpack_avx512(const uint8_t *in, size_t len, int64_t *out, size_t count,
				   size_t *used)
{
	struct packed_dec512 c;
	const __m512i minus1 = _mm512_set1_epi64(-1);
	size_t pos = 0, i = 0;

	c.iota = _mm512_loadu_si512(packed_iota);
	c.ts = _mm512_loadu_si512(packed_ts);
	c.bpos = _mm512_set1_epi64(0x0706050403020100LL);
	/* vpshufb: every byte of a 64-bit lane takes that lane's byte 0 */
	c.bcast = _mm512_set_epi64(0x0808080808080808LL, 0, 0x0808080808080808LL, 0, 0x0808080808080808LL, 0,
				   0x0808080808080808LL, 0);
	c.c7f = _mm512_set1_epi8(0x7f);
	c.one = _mm512_set1_epi64(1);
	c.mul1 = _mm512_set1_epi16((short)0x8001); /* bytes 1, 128 */
	c.mul2 = _mm512_set1_epi32(0x40000001);   /* words 1, 1 << 14 */
	c.lo28 = _mm512_set1_epi64(0x0fffffff);
	c.eightb = _mm512_set1_epi8(8);
	c.eight = _mm512_set1_epi64(8);
	c.ten = _mm512_set1_epi64(10);
	c.m7f = _mm512_set1_epi64(0x7f);
	while (i < count) {
		size_t rem = len - pos;
		__m512i w, e, x;
		__m128i ends;
		uint64_t s;
		unsigned m, last, bad = 0;
		__mmask8 lanes;

		if (rem >= 64) {
			w = _mm512_loadu_si512(in + pos);
			s = ~(uint64_t)_mm512_movepi8_mask(w);
		} else {
			uint64_t lim = _bzhi_u64(~0ULL, (unsigned)rem);
			w = _mm512_maskz_loadu_epi8(lim, in + pos);
			s = ~(uint64_t)_mm512_movepi8_mask(w) & lim;
		}
		ends = _mm512_castsi512_si128(_mm512_maskz_compress_epi8(s, c.iota));
		e = _mm512_cvtepu8_epi64(ends);
		if (count - i >= 16 && (s >> 15) && (last = (unsigned)_tzcnt_u64(_pdep_u64(1ULL << 15, s))) < 64) {
			__m512i e2 = _mm512_cvtepu8_epi64(_mm_srli_si128(ends, 8));
			__m512i x2 = packed_lanes512(&c, w, e2, _mm512_alignr_epi64(e2, e, 7), 0xff, &bad);

			x = packed_lanes512(&c, w, e, _mm512_alignr_epi64(e, minus1, 7), 0xff, &bad);
			if (!bad) {
				_mm512_storeu_si512(out + i, x);
				_mm512_storeu_si512(out + i + 8, x2);
				i += 16;
				pos += last + 1;
				continue;
			}
			bad = 0;
		}
		m = (unsigned)_mm_popcnt_u64(s);
		m = m > 8 ? 8 : m;
		m = count - i < m ? (unsigned)(count - i) : m;
		if (!m)
			goto one;
		last = (unsigned)_tzcnt_u64(_pdep_u64(1ULL << (m - 1), s));
		lanes = (__mmask8)((1u << m) - 1);
		x = packed_lanes512(&c, w, e, _mm512_alignr_epi64(e, minus1, 7), lanes, &bad);
		if (bad)
			goto one;
		_mm512_mask_storeu_epi64(out + i, lanes, x);
		i += m;
		pos += last + 1;
		continue;
	one:
		{
			int k = apc_unpack64(in + pos, rem, &out[i]);
			if (k <= 0)
				break;
			pos += (size_t)k;
			i++;
		}
	}
	*used = pos;
	return i;
}
#endif

/* ---- aarch64: NEON ------------------------------------------------- */

#ifdef PACKED_NEON
/*
 * Two values per step: their low 56 bits spread into 7-bit groups in
 * one vector (three shift-and-mask steps for both lanes), the lengths
 * and continuation bits from the portable tables (clz is one
 * instruction here), each lane stored at its own offset, bytes 8-9 as
 * in the portable variant.
 */
static size_t packed_pack_neon(uint8_t *out, const int64_t *v, size_t count)
{
	const uint64x2_t m56 = vdupq_n_u64(0x00ffffffffffffffULL);
	const uint64x2_t a1 = vdupq_n_u64(0x000000000fffffffULL), b1 = vdupq_n_u64(0x0fffffff00000000ULL);
	const uint64x2_t a2 = vdupq_n_u64(0x00003fff00003fffULL), b2 = vdupq_n_u64(0x3fff00003fff0000ULL);
	const uint64x2_t a3 = vdupq_n_u64(0x007f007f007f007fULL), b3 = vdupq_n_u64(0x7f007f007f007f00ULL);
	size_t pos = 0, i = 0;

	for (; i + 2 <= count; i += 2) {
		int64_t x0 = v[i], x1 = v[i + 1];
		unsigned l0 = (unsigned)__builtin_clzll((uint64_t)(x0 ^ (x0 >> 63)) | 1);
		unsigned l1 = (unsigned)__builtin_clzll((uint64_t)(x1 ^ (x1 >> 63)) | 1);
		uint16_t h0 = apc_packed_hi_top[(uint64_t)x0 >> 56], h1 = apc_packed_hi_top[(uint64_t)x1 >> 56];
		uint64x2_t x = vandq_u64(vreinterpretq_u64_s64(vld1q_s64(v + i)), m56);

		x = vorrq_u64(vandq_u64(x, a1), vandq_u64(vshlq_n_u64(x, 4), b1));
		x = vorrq_u64(vandq_u64(x, a2), vandq_u64(vshlq_n_u64(x, 2), b2));
		x = vorrq_u64(vandq_u64(x, a3), vandq_u64(vshlq_n_u64(x, 1), b3));
		x = vorrq_u64(x, vcombine_u64(vcreate_u64(apc_packed_cont_lz[l0]), vcreate_u64(apc_packed_cont_lz[l1])));
		vst1_u8(out + pos, vreinterpret_u8_u64(vget_low_u64(x)));
		memcpy(out + pos + 8, &h0, 2);
		pos += apc_packed_len_lz[l0];
		vst1_u8(out + pos, vreinterpret_u8_u64(vget_high_u64(x)));
		memcpy(out + pos + 8, &h1, 2);
		pos += apc_packed_len_lz[l1];
	}
	if (i < count)
		pos += packed_put_portable(out + pos, v[i]);
	return pos;
}

/*
 * Two values per 16-byte window when both are 1-8 bytes: the stop bits
 * (narrowed to a nibble mask, 4 bits a byte) give both ends, one TBL
 * moves each value's bytes into its own lane (index 0xff, past a
 * value's length, gives 0), bit-select steps join the 7-bit groups, a
 * shift pair sign-extends.  Anything else (under 16 bytes left, a 9-10
 * byte or bad value) takes the reference for one value.
 */
static size_t packed_unpack_neon(const uint8_t *in, size_t len, int64_t *out, size_t count, size_t *used)
{
	static const uint8_t lane_pos[16] = {0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7};
	const uint8x16_t iota = vld1q_u8(lane_pos), c7f = vdupq_n_u8(0x7f);
	size_t pos = 0, i = 0;

	while (i < count) {
		uint8x16_t w, idx;
		uint16x8_t x16;
		uint32x4_t x32;
		uint64x2_t x64;
		int64x2_t sh;
		uint64_t m;
		unsigned e0, e1, n0, n1;

		if (len - pos < 16 || count - i < 2)
			goto one;
		w = vld1q_u8(in + pos);
		m = vget_lane_u64(vreinterpret_u64_u8(vshrn_n_u16(
					  vreinterpretq_u16_u8(vcgezq_s8(vreinterpretq_s8_u8(w))), 4)),
				  0) &
		    0x8888888888888888ULL;
		if (!m)
			goto one;
		e0 = (unsigned)__builtin_ctzll(m) >> 2;
		m &= m - 1;
		if (!m)
			goto one;
		e1 = (unsigned)__builtin_ctzll(m) >> 2;
		n0 = e0 + 1;
		n1 = e1 - e0;
		if (n0 > 8 || n1 > 8)
			goto one;
		idx = vaddq_u8(iota, vcombine_u8(vdup_n_u8(0), vdup_n_u8((uint8_t)n0)));
		idx = vorrq_u8(idx, vmvnq_u8(vcltq_u8(iota, vcombine_u8(vdup_n_u8((uint8_t)n0),
									  vdup_n_u8((uint8_t)n1)))));
		x16 = vreinterpretq_u16_u8(vandq_u8(vqtbl1q_u8(w, idx), c7f));
		x16 = vbslq_u16(vdupq_n_u16(0x007f), x16, vshrq_n_u16(x16, 1));
		x32 = vreinterpretq_u32_u16(x16);
		x32 = vbslq_u32(vdupq_n_u32(0x3fff), x32, vshrq_n_u32(x32, 2));
		x64 = vreinterpretq_u64_u32(x32);
		x64 = vbslq_u64(vdupq_n_u64(0x0fffffff), x64, vshrq_n_u64(x64, 4));
		sh = vcombine_s64(vcreate_s64(64 - 7 * n0), vcreate_s64(64 - 7 * n1));
		vst1q_s64(out + i, vshlq_s64(vshlq_s64(vreinterpretq_s64_u64(x64), sh), vnegq_s64(sh)));
		i += 2;
		pos += e1 + 1;
		continue;
	one:
		{
			int k = apc_unpack64(in + pos, len - pos, &out[i]);
			if (k <= 0)
				break;
			pos += (size_t)k;
			i++;
		}
	}
	*used = pos;
	return i;
}
#endif

/* ---- dispatch ------------------------------------------------------- */

static const struct apc_packed_impl packed_impls[] = {
	{"scalar", 0, apc_pack64_array_scalar, apc_unpack64_array_scalar},
#ifdef PACKED_LE
	{"portable", APC_CPU_FAST, packed_pack_portable, packed_unpack_portable},
#endif
#ifdef PACKED_NEON
	{"neon", APC_CPU_FAST | APC_CPU_NEON, packed_pack_neon, packed_unpack_neon},
#endif
#ifdef PACKED_X86
	{"bmi2", APC_CPU_FAST | APC_CPU_BMI2, packed_pack_bmi2, packed_unpack_bmi2},
	{"avx512", APC_CPU_FAST | APC_CPU_BMI2 | APC_CPU_AVX512 | APC_CPU_AVX512VBMI, packed_pack_avx512,
	 packed_unpack_avx512},
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
