/*
 * test_scale.c - apc_scale() against the 128-bit product and quotient it
 * replaces: clock rates people use, ratios that reduce and ratios that
 * do not, the edges of 64 bits, and random everything.
 */
#include "scale.h"
#include "t.h"

static uint64_t rs = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

static uint64_t ref(uint64_t v, uint64_t num, uint64_t den)
{
	return (uint64_t)((unsigned __int128)v * num / den);
}

/* Check v and its neighbours around multiples of den; count mismatches. */
static int check(uint64_t num, uint64_t den, uint64_t v)
{
	struct apc_scale s;
	int bad = 0;

	apc_scale_prep(&s, num, den);
	for (int d = -2; d <= 2; d++) {
		uint64_t x = v + (uint64_t)(int64_t)d, out = 0;
		unsigned __int128 full = (unsigned __int128)x * num / den;
		/* the quick way answers only when the quotient fits, and then exactly */
		if (apc_scale_fast(&s, x, &out) && (full > UINT64_MAX || out != (uint64_t)full)) {
			T_FAIL("fast %" PRIu64 " * %" PRIu64 " / %" PRIu64 ": %" PRIu64, x, num, den, out);
			bad++;
		}
		if (!s.wide && full <= UINT64_MAX && !apc_scale_fast(&s, x, &out)) {
			T_FAIL("fast declined %" PRIu64 " * %" PRIu64 " / %" PRIu64, x, num, den);
			bad++;
		}
		if (apc_scale(&s, x) != ref(x, num, den)) {
			if (!bad)
				T_FAIL("%" PRIu64 " * %" PRIu64 " / %" PRIu64 ": %" PRIu64 ", expected %" PRIu64,
				       x, num, den, apc_scale(&s, x), ref(x, num, den));
			bad++;
		}
	}
	return bad;
}

static void clock_rates(void)
{
	/* ticks -> ns at rates real traces use, Hz and MHz */
	static const uint64_t hz[] = {1, 3, 7, 1000, 32768, 1000000, 19200000, 24000000, 100000000,
				      999999937, 1000000000, 1000000007, 2400000000ull,
				      3000000000ull, 3579545ull, 62500000ull, 1ull << 32,
				      (1ull << 63) + 1, UINT64_MAX};
	static const uint64_t at[] = {0, 1, 2, 1000, 1ull << 31, 1ull << 32, 1185890426304424452ull,
				      2846137023130618685ull, 1ull << 62, 1ull << 63, UINT64_MAX - 2};
	int bad = 0;

	for (size_t i = 0; i < sizeof hz / sizeof hz[0]; i++) {
		for (size_t j = 0; j < sizeof at / sizeof at[0]; j++) {
			bad += check(1000000000u, hz[i], at[j]);
			bad += check(hz[i], 1000000000u, at[j]); /* ns -> ticks */
			bad += check(at[j] | 1, hz[i], at[j]);
		}
	}
	T_EQ_INT(bad, 0);
}

static void edges(void)
{
	struct apc_scale s;

	/* num 0, den 1, num == den, powers of two */
	apc_scale_prep(&s, 0, 12345);
	T_EQ_U64(apc_scale(&s, UINT64_MAX), 0);
	apc_scale_prep(&s, 7, 1);
	T_EQ_U64(apc_scale(&s, 3), 21);
	T_EQ_U64(apc_scale(&s, UINT64_MAX), ref(UINT64_MAX, 7, 1)); /* wraps like the reference */
	T_EQ_INT(apc_scale_fast(&s, UINT64_MAX, &(uint64_t){0}), 0); /* 7 * (2^64 - 1) does not fit */
	apc_scale_prep(&s, 5, 5);
	T_EQ_U64(apc_scale(&s, UINT64_MAX), UINT64_MAX);
	apc_scale_prep(&s, 1, 1ull << 63);
	T_EQ_U64(apc_scale(&s, UINT64_MAX), 1);
	T_EQ_U64(apc_scale(&s, (1ull << 63) - 1), 0);
	/* the ratio is reduced: 2.4 GHz ticks to ns is 5/12 */
	apc_scale_prep(&s, 1000000000u, 2400000000ull);
	T_EQ_U64(s.num, 5);
	T_EQ_U64(s.den, 12);
	T_EQ_INT(s.wide, 0);
	/* a ratio whose num * den is past 64 bits takes the wide path */
	apc_scale_prep(&s, UINT64_MAX, UINT64_MAX - 1);
	T_EQ_INT(s.wide, 1);
	T_EQ_U64(apc_scale(&s, 1ull << 40), ref(1ull << 40, UINT64_MAX, UINT64_MAX - 1));
}

static void random_ratios(void)
{
	int bad = 0;

	for (int i = 0; i < 200000 && !bad; i++) {
		/* sizes spread over every bit length */
		uint64_t num = rnd() >> (rnd() % 64), den = rnd() >> (rnd() % 64);
		uint64_t v = rnd() >> (rnd() % 64);
		if (!den)
			den = 1;
		bad += check(num, den, v);
		bad += check(num, den, v / (den ? den : 1) * den);
	}
	T_EQ_INT(bad, 0);
}

void run_tests(void)
{
	T_RUN(clock_rates);
	T_RUN(edges);
	T_RUN(random_ratios);
}
