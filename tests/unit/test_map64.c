/*
 * test_map64.c - struct apc_map64 against a plain array of the same
 * entries, through random puts, overwrites and deletions.
 */
#include <stdlib.h>

#include "map64.h"
#include "t.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next_rand(void)
{
	return t_rand(&rng);
}

/* Keys drawn from a universe of `nkeys`, with 0 and UINT64_MAX in it. */
static uint64_t key_of(unsigned i)
{
	if (i == 0)
		return 0;
	if (i == 1)
		return UINT64_MAX;
	return (uint64_t)i * 0x10001ull;
}

/* Every key of the universe answers as the reference says, and n is the
 * number of keys present. */
static int same_as(const struct apc_map64 *m, const uint64_t *ref, const uint8_t *in, unsigned nkeys)
{
	size_t n = 0;

	for (unsigned i = 0; i < nkeys; i++) {
		uint64_t v = 12345;
		int found = apc_map64_find(m, key_of(i), &v);

		if (found != in[i] || (found && v != ref[i]) || (!found && v != 12345))
			return 0;
		n += in[i];
	}
	return m->n == n;
}

static void random_ops(unsigned nkeys, unsigned ops, int del_pct)
{
	struct apc_map64 m = {0};
	uint64_t *ref = calloc(nkeys, sizeof *ref);
	uint8_t *in = calloc(nkeys, 1);
	int ok = 1;

	T_ASSERT(ref && in);
	if (!ref || !in)
		goto out;
	for (unsigned op = 0; op < ops && ok; op++) {
		unsigned i = (unsigned)(next_rand() % nkeys);

		if ((int)(next_rand() % 100) < del_pct) {
			apc_map64_del(&m, key_of(i));
			in[i] = 0;
		} else {
			uint64_t v = next_rand();

			T_EQ_INT(apc_map64_put(&m, key_of(i), v), 0);
			ref[i] = v;
			in[i] = 1;
		}
		if (op % 97 == 0 || op + 1 == ops)
			ok = same_as(&m, ref, in, nkeys);
	}
	T_ASSERT(ok);
	T_ASSERT(m.n * 4 <= m.cap * 3);
out:
	apc_map64_free(&m);
	T_EQ_INT(m.cap, 0);
	free(ref);
	free(in);
}

static void t_empty(void)
{
	struct apc_map64 m = {0};
	uint64_t v = 7;

	T_EQ_INT(apc_map64_find(&m, 0, &v), 0);
	T_EQ_INT(apc_map64_find(&m, UINT64_MAX, NULL), 0);
	T_EQ_U64(v, 7);
	apc_map64_del(&m, 3); /* deleting from an empty map is harmless */
	T_EQ_INT(m.n, 0);
	apc_map64_free(&m);
}

static void t_put_overwrite(void)
{
	struct apc_map64 m = {0};
	uint64_t v = 0;

	T_EQ_INT(apc_map64_put(&m, 42, 1), 0);
	T_EQ_INT(apc_map64_put(&m, 42, 2), 0);
	T_EQ_INT(m.n, 1);
	T_EQ_INT(apc_map64_find(&m, 42, &v), 1);
	T_EQ_U64(v, 2);
	T_EQ_INT(apc_map64_put(&m, 0, 0), 0); /* key 0 and value 0 are ordinary */
	T_EQ_INT(apc_map64_find(&m, 0, &v), 1);
	T_EQ_U64(v, 0);
	apc_map64_del(&m, 42);
	T_EQ_INT(apc_map64_find(&m, 42, NULL), 0);
	T_EQ_INT(apc_map64_find(&m, 0, NULL), 1);
	T_EQ_INT(m.n, 1);
	apc_map64_free(&m);
}

/* Keys sharing one home slot make a run; deleting from its middle must
 * keep the rest of the run reachable (the backward shift). */
static void t_delete_in_run(void)
{
	struct apc_map64 m = {0};
	uint64_t same[8];
	unsigned n = 0;

	T_EQ_INT(apc_map64_put(&m, 1, 1), 0); /* makes the table: cap 64 */
	apc_map64_del(&m, 1);
	for (uint64_t k = 2; n < 8 && k < 1000000; k++)
		if (apc_map64_slot(k, m.cap) == apc_map64_slot(2, m.cap))
			same[n++] = k;
	T_EQ_INT(n, 8);
	for (unsigned i = 0; i < n; i++)
		T_EQ_INT(apc_map64_put(&m, same[i], same[i] + 1), 0);
	T_EQ_INT(m.cap, 64); /* still one run in one table */
	apc_map64_del(&m, same[3]);
	apc_map64_del(&m, same[0]);
	for (unsigned i = 0; i < n; i++) {
		uint64_t v = 0;
		int want = i != 0 && i != 3;

		T_EQ_INT(apc_map64_find(&m, same[i], &v), want);
		if (want)
			T_EQ_U64(v, same[i] + 1);
	}
	T_EQ_INT(m.n, 6);
	apc_map64_free(&m);
}

static void t_random_small(void) { random_ops(40, 20000, 30); }
static void t_random_grow(void) { random_ops(5000, 60000, 10); }
static void t_random_churn(void) { random_ops(700, 80000, 50); }

void run_tests(void)
{
	T_RUN(t_empty);
	T_RUN(t_put_overwrite);
	T_RUN(t_delete_in_run);
	T_RUN(t_random_small);
	T_RUN(t_random_grow);
	T_RUN(t_random_churn);
}
