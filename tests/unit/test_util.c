/*
 * test_util.c - apc_table_grow(): the fd-indexed tables of apcdump,
 * apcverify and the APC reader grow through it; apc_parse_time_ns(),
 * the --begin/--end times of apcconv and apcdump.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t.h"
#include "util.h"

struct slot {
	uint64_t a;
	int32_t b;
};

/* Indexes climbing one at a time: every element reads zero until it is
 * written, what was written stays, and the table doubles (a few dozen
 * moves for 65536 slots, not one every 16). */
static void climbing_index_doubles(void)
{
	struct slot *t = NULL;
	size_t n = 0, grows = 0;

	for (size_t i = 0; i < 65536; i++) {
		size_t before = n;
		struct slot *g = apc_table_grow(t, &n, sizeof *t, i + 1, 65536);
		T_ASSERT(g != NULL);
		if (!g)
			break;
		t = g;
		if (n != before) {
			grows++;
			T_ASSERT(n >= 2 * before);
			for (size_t k = before; k < n; k++)
				T_ASSERT(t[k].a == 0 && t[k].b == 0);
		}
		T_ASSERT(i < n);
		t[i].a = i * 3;
		t[i].b = (int32_t)i;
	}
	T_EQ_INT(n, 65536);
	T_ASSERT(grows <= 13);
	for (size_t i = 0; i < 65536; i++)
		T_ASSERT(t[i].a == i * 3 && t[i].b == (int32_t)i);
	free(t);
}

/* A jump straight to a large index, the bound, and a table big enough. */
static void jumps_and_bounds(void)
{
	struct slot *t = NULL, *g;
	size_t n = 0;

	t = apc_table_grow(t, &n, sizeof *t, 1000, 65536);
	T_ASSERT(t != NULL && n >= 1000);
	t[999].b = 7;
	g = apc_table_grow(t, &n, sizeof *t, 500, 65536);
	T_ASSERT(g == t); /* already large enough: unchanged */
	size_t keep = n;
	T_ASSERT(apc_table_grow(t, &n, sizeof *t, 65537, 65536) == NULL);
	T_EQ_INT(n, keep); /* refused: untouched */
	T_EQ_INT(t[999].b, 7);
	g = apc_table_grow(t, &n, sizeof *t, 65536, 65536);
	T_ASSERT(g != NULL && n == 65536);
	if (g)
		t = g;
	T_EQ_INT(t[999].b, 7);
	T_ASSERT(t[65535].a == 0);
	free(t);
	/* a size that would overflow is refused, not wrapped */
	n = 0;
	T_ASSERT(apc_table_grow(NULL, &n, SIZE_MAX / 2, 4, SIZE_MAX) == NULL);
	T_EQ_INT(n, 0);
}

/* A time that parses, and to what. */
static void time_is(const char *s, uint64_t want)
{
	uint64_t ns = 12345;
	int rc = apc_parse_time_ns(s, &ns);
	if (rc != 0)
		T_FAIL("'%s': rc %d", s, rc);
	else if (ns != want)
		T_FAIL("'%s': %llu, not %llu", s, (unsigned long long)ns, (unsigned long long)want);
}

/* One that does not: rc -1 (not a time) or -2 (too large), nothing stored. */
static void time_fails(const char *s, int want)
{
	uint64_t ns = 12345;
	int rc = apc_parse_time_ns(s, &ns);
	if (rc != want || ns != 12345)
		T_FAIL("'%s': rc %d (want %d), ns %llu", s, rc, want, (unsigned long long)ns);
}

static void parse_times(void)
{
	time_is("0", 0);
	time_is("1500", 1500);
	time_is("7ns", 7);
	time_is("3us", 3000);
	time_is("20ms", 20000000);
	time_is("1.5s", 1500000000);
	time_is(".5s", 500000000);
	time_is("2.s", 2000000000);
	time_is("0001s", 1000000000);
	/* finer than a nanosecond: the nearest, half up, not cut down */
	time_is("5.0129215ms", 5012922);
	time_is("5.0129214ms", 5012921);
	time_is("5.01292149999ms", 5012921);
	time_is("1.5", 2);
	time_is("1.4ns", 1);
	time_is("0.5ns", 1);
	time_is("0.4999us", 500);
	time_is("0.0004999us", 0);
	time_is("1.0000000005s", 1000000001);
	time_is("1.9999999995s", 2000000000);
	/* the largest a capture holds, and no more */
	time_is("9223372036854775807", INT64_MAX);
	time_is("9223372036.854775807s", INT64_MAX);
	time_is("9223372036.8547758074s", INT64_MAX);
	time_fails("9223372036.8547758075s", -2);
	time_fails("9223372036854775808", -2);
	time_fails("9223372036.854775808s", -2);
	time_fails("99999999999s", -2);
	time_fails("18446744073709551615", -2);
	time_fails("18446744073709551616", -2);
	time_fails("99999999999999999999999999999999999999999999999ms", -2);
	/* not a time */
	time_fails("", -1);
	time_fails(".", -1);
	time_fails(".s", -1);
	time_fails("soon", -1);
	time_fails("-5", -1);
	time_fails("+5", -1);
	time_fails("5 s", -1);
	time_fails("5sec", -1);
	time_fails("5m", -1);
	time_fails("1.2.3", -1);
	time_fails("99999999999999999999999999999x", -1);
}

static void time_errors(void)
{
	char buf[200];

	T_EQ_STR(apc_time_error(buf, sizeof buf, "--begin", "soon", -1),
		 "bad --begin time 'soon' (e.g. 1500, 1.5s, 20ms, 3us)");
	T_EQ_STR(apc_time_error(buf, sizeof buf, "--end", "99999999999s", -2),
		 "--end time '99999999999s' is too large (at most 9223372036.854775807s)");
}

void run_tests(void)
{
	T_RUN(climbing_index_doubles);
	T_RUN(jumps_and_bounds);
	T_RUN(parse_times);
	T_RUN(time_errors);
}
