/*
 * scale.h - floor(v * num / den) for every 64-bit v, exactly, without a
 * division per call.
 *
 * Clock conversions (ticks -> ns) want a 128-bit product and a 128-bit
 * division, which is a library call, or two 64-bit divisions when it is
 * split as v = q*den + r.  apc_scale_prep() reduces num/den and computes
 * a reciprocal of den once; apc_scale() then divides by multiplying,
 * with at most one correction (see apc_scale_div()).
 */
#ifndef APC_SCALE_H
#define APC_SCALE_H

#include <stdint.h>

struct apc_scale {
	uint64_t num, den;  /* reduced: gcd 1; den >= 1 */
	uint64_t inv;       /* floor((2^64 - 1) / den) */
	int wide;           /* num * den does not fit 64 bits: 128-bit path */
};

/* apc_scale_prep() : prepare floor(v * num / den); den must not be 0. */
void apc_scale_prep(struct apc_scale *s, uint64_t num, uint64_t den);

/*
 * n / den for any 64-bit n.  With m = inv, m*den <= 2^64 - 1 < (m+1)*den,
 * so m >= 2^64/den - 1 and n*m / 2^64 >= n/den - n/2^64 > n/den - 1:
 * q = floor(n*m / 2^64) is floor(n/den) or one less.
 */
static inline uint64_t apc_scale_div(const struct apc_scale *s, uint64_t n, uint64_t *rem)
{
	uint64_t q = (uint64_t)(((unsigned __int128)n * s->inv) >> 64);
	uint64_t r = n - q * s->den;

	if (r >= s->den) {
		q++;
		r -= s->den;
	}
	*rem = r;
	return q;
}

/*
 * apc_scale_fast() : floor(v * num / den) into *out and 1, when the
 * quick way applies: num * den fits 64 bits and so does the result.
 * 0 otherwise (*out untouched): the caller takes the 128-bit way.
 */
static inline int apc_scale_fast(const struct apc_scale *s, uint64_t v, uint64_t *out)
{
	uint64_t q, r, hi, lo;

	if (s->wide)
		return 0;
	/* v = q*den + r: v*num/den = q*num + r*num/den, and r*num < den*num
	 * fits 64 bits */
	q = apc_scale_div(s, v, &r);
	lo = apc_scale_div(s, r * s->num, &r);
	return !__builtin_mul_overflow(q, s->num, &hi) && !__builtin_add_overflow(hi, lo, out);
}

/*
 * apc_scale() : floor(v * num / den), exactly; a result past 2^64 is
 * cut to its low 64 bits, as (uint64_t) of the 128-bit quotient is.
 */
static inline uint64_t apc_scale(const struct apc_scale *s, uint64_t v)
{
	uint64_t out;

	if (apc_scale_fast(s, v, &out))
		return out;
	return (uint64_t)((unsigned __int128)v * s->num / s->den);
}

#endif
