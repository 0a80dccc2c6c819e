/*
 * test_util.c - apc_table_grow(): the fd-indexed tables of apcdump,
 * apcverify and the APC reader grow through it.
 */
#include <stdint.h>
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

void run_tests(void)
{
	T_RUN(climbing_index_doubles);
	T_RUN(jumps_and_bounds);
}
