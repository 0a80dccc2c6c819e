/*
 * test_packed.c - the scalar reference for packed integers against every
 * example and table row of the spec, round trips, and bad encodings.
 */
#include <stdlib.h>

#include "packed.h"
#include "t.h"

static void check64(int64_t v, const uint8_t *want, size_t n)
{
	uint8_t buf[16];
	int64_t back = 0;
	size_t k = apc_pack64(buf, v);

	if (k != n || memcmp(buf, want, n) != 0)
		T_FAIL("pack64(%" PRId64 ") gave %zu bytes, expected %zu", v, k, n);
	T_EQ_INT(apc_packed_size64(v), n);
	T_EQ_INT(apc_unpack64(want, n, &back), (int)n);
	T_EQ_INT(back, v);
}

static void spec_examples(void)
{
	static const uint8_t a[] = {0xCD, 0x9A, 0x1A};
	static const uint8_t b[] = {0xBA, 0xB2, 0xA5, 0xA2, 0xCE, 0xFA, 0xFF, 0xFA, 0xBD, 0x7F};
	uint8_t buf[8];
	int32_t v32;

	check64(429389, a, 3);
	check64(-4758616141418899142LL, b, 10);
	T_EQ_INT(apc_pack32(buf, 429389), 3);
	T_EQ_MEM(buf, a, 3);
	T_EQ_INT(apc_unpack32(a, 3, &v32), 3);
	T_EQ_INT(v32, 429389);
}

/*
 * Every row of the spec's tables: (bits, last value, byte count).  The
 * bit patterns say the last byte is 01XXXXXX for the negative boundary
 * and 00XXXXXX for the positive one, and one more value on either side
 * needs one more byte.
 */
static void spec_table_rows(void)
{
	static const struct { int64_t v; size_t n; } rows64[] = {
		{INT64_MIN, 10}, {-4611686018427387904LL, 9}, {-36028797018963968LL, 8},
		{-281474976710656LL, 7}, {-2199023255552LL, 6}, {-17179869184LL, 5},
		{-134217728LL, 4}, {-1048576LL, 3}, {-8192, 2}, {-64, 1}, {63, 1}, {8191, 2},
		{1048575, 3}, {134217727, 4}, {17179869183LL, 5}, {2199023255551LL, 6},
		{281474976710655LL, 7}, {36028797018963967LL, 8}, {4611686018427387903LL, 9},
		{INT64_MAX, 10},
	};
	static const struct { int32_t v; size_t n; } rows32[] = {
		{INT32_MIN, 5}, {-134217728, 4}, {-1048576, 3}, {-8192, 2}, {-64, 1},
		{63, 1}, {8191, 2}, {1048575, 3}, {134217727, 4}, {INT32_MAX, 5},
	};
	uint8_t buf[16];

	for (size_t i = 0; i < sizeof rows64 / sizeof rows64[0]; i++) {
		int64_t v = rows64[i].v, back;
		size_t n = apc_pack64(buf, v);
		T_EQ_INT(n, rows64[i].n);
		/* every byte but the last has the continuation bit */
		for (size_t j = 0; j + 1 < n; j++)
			T_ASSERT(buf[j] & 0x80);
		T_ASSERT(!(buf[n - 1] & 0x80));
		/* sign bit of the last group */
		T_EQ_INT(!!(buf[n - 1] & 0x40), v < 0);
		T_EQ_INT(apc_unpack64(buf, n, &back), (int)n);
		T_EQ_INT(back, v);
		/* one step further out needs one more byte (except at the ends) */
		if (v != INT64_MIN && v != INT64_MAX)
			T_EQ_INT(apc_packed_size64(v < 0 ? v - 1 : v + 1), n + 1);
	}
	/* The 10-byte forms are exactly as the table draws them. */
	apc_pack64(buf, INT64_MIN);
	T_EQ_INT(buf[9], 0x7f);
	apc_pack64(buf, INT64_MAX);
	T_EQ_INT(buf[9], 0x00);
	for (size_t i = 0; i < sizeof rows32 / sizeof rows32[0]; i++) {
		int32_t v = rows32[i].v, back;
		size_t n = apc_pack32(buf, v);
		T_EQ_INT(n, rows32[i].n);
		T_EQ_INT(apc_unpack32(buf, n, &back), (int)n);
		T_EQ_INT(back, v);
	}
	apc_pack32(buf, INT32_MIN);
	T_EQ_INT(buf[4] & 0x78, 0x78); /* 01111XXX */
	apc_pack32(buf, INT32_MAX);
	T_EQ_INT(buf[4] & 0x78, 0x00); /* 00000XXX */
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd(void)
{
	/* xorshift64*: deterministic, no libc rand() differences */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

static void random_round_trips(void)
{
	uint8_t buf[16];

	for (int i = 0; i < 200000; i++) {
		/* spread over all lengths: shift a random value right */
		int64_t v = (int64_t)rnd() >> (rnd() % 64);
		int64_t back;
		size_t n = apc_pack64(buf, v);
		int k = apc_unpack64(buf, n, &back);
		if (k != (int)n || back != v) {
			T_FAIL("round trip of %" PRId64 " failed", v);
			return;
		}
		int32_t w = (int32_t)v, wb;
		n = apc_pack32(buf, w);
		if (apc_unpack32(buf, n, &wb) != (int)n || wb != w) {
			T_FAIL("round trip32 of %d failed", w);
			return;
		}
	}
}

static void batch_equals_single(void)
{
	int64_t v[1000], back[1000];
	uint8_t buf[10000], one[16];
	size_t pos = 0, used = 0;

	for (int i = 0; i < 1000; i++)
		v[i] = (int64_t)rnd() >> (rnd() % 64);
	size_t n = apc_pack64_array(buf, v, 1000);
	for (int i = 0; i < 1000; i++) {
		size_t k = apc_pack64(one, v[i]);
		T_EQ_MEM(buf + pos, one, k);
		pos += k;
	}
	T_EQ_INT(n, pos);
	T_EQ_INT(apc_unpack64_array(buf, n, back, 1000, &used), 1000);
	T_EQ_INT(used, n);
	T_EQ_MEM(back, v, sizeof v);
	/* stops early on truncation */
	T_EQ_INT(apc_unpack64_array(buf, n - 1, back, 1000, &used), 999);
}

static void truncated_and_overlong(void)
{
	static const uint8_t trunc[] = {0xCD, 0x9A};
	static const uint8_t over32[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x00};
	static const uint8_t over64[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
					 0x80, 0x80, 0x80, 0x80, 0x00};
	static const uint8_t range32[] = {0xff, 0xff, 0xff, 0xff, 0x0f}; /* 2^32-1 */
	static const uint8_t bad10[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
					0x80, 0x80, 0x80, 0x02}; /* bits past 63 */
	static const uint8_t nonmin[] = {0x80, 0x00}; /* 0 in two bytes */
	int64_t v;
	int32_t w;

	T_EQ_INT(apc_unpack64(trunc, 2, &v), APC_PACKED_TRUNCATED);
	T_EQ_INT(apc_unpack64(trunc, 0, &v), APC_PACKED_TRUNCATED);
	T_EQ_INT(apc_unpack32(over32, sizeof over32, &w), APC_PACKED_OVERLONG);
	T_EQ_INT(apc_unpack64(over64, sizeof over64, &v), APC_PACKED_OVERLONG);
	T_EQ_INT(apc_unpack32(range32, sizeof range32, &w), APC_PACKED_OVERLONG);
	T_EQ_INT(apc_unpack64(range32, sizeof range32, &v), 5);
	T_EQ_INT(v, 0xffffffffLL);
	T_EQ_INT(apc_unpack64(bad10, sizeof bad10, &v), APC_PACKED_OVERLONG);
	/* accepted but not minimal: the verifier compares sizes */
	T_EQ_INT(apc_unpack64(nonmin, 2, &v), 2);
	T_EQ_INT(v, 0);
	T_ASSERT(apc_packed_size64(v) < 2);
}

void run_tests(void)
{
	T_RUN(spec_examples);
	T_RUN(spec_table_rows);
	T_RUN(random_round_trips);
	T_RUN(batch_equals_single);
	T_RUN(truncated_and_overlong);
}
