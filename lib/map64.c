/*
 * map64.c - growing and shrinking struct apc_map64 (see map64.h).
 */
#include "map64.h"

#include <stdlib.h>
#include <string.h>

/* Twice the slots, every entry placed again; -1 and m untouched when
 * memory runs out. */
static int map64_grow(struct apc_map64 *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	struct apc_map64 g = {malloc(cap * sizeof *g.keys), malloc(cap * sizeof *g.vals), calloc(cap, 1),
			      cap, m->n};

	if (!g.keys || !g.vals || !g.used) {
		free(g.keys);
		free(g.vals);
		free(g.used);
		return -1;
	}
	for (size_t j = 0; j < m->cap; j++) {
		size_t i;

		if (!m->used[j])
			continue;
		for (i = apc_map64_slot(m->keys[j], cap); g.used[i]; i = (i + 1) & (cap - 1))
			;
		g.used[i] = 1;
		g.keys[i] = m->keys[j];
		g.vals[i] = m->vals[j];
	}
	free(m->keys);
	free(m->vals);
	free(m->used);
	*m = g;
	return 0;
}

int apc_map64_put(struct apc_map64 *m, uint64_t k, uint64_t v)
{
	size_t i;

	if ((m->n + 1) * 4 > m->cap * 3 && map64_grow(m) < 0)
		return -1;
	for (i = apc_map64_slot(k, m->cap); m->used[i]; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == k) {
			m->vals[i] = v;
			return 0;
		}
	m->used[i] = 1;
	m->keys[i] = k;
	m->vals[i] = v;
	m->n++;
	return 0;
}

void apc_map64_del(struct apc_map64 *m, uint64_t k)
{
	size_t i, mask = m->cap - 1;

	if (!m->cap)
		return;
	for (i = apc_map64_slot(k, m->cap); m->used[i]; i = (i + 1) & mask)
		if (m->keys[i] == k)
			break;
	if (!m->used[i])
		return;
	/* Close the hole: an entry further along the run moves into it
	 * when the hole lies between its home slot and where it sits. */
	for (size_t j = (i + 1) & mask; m->used[j]; j = (j + 1) & mask) {
		size_t home = apc_map64_slot(m->keys[j], m->cap);

		if (((j - home) & mask) >= ((j - i) & mask)) {
			m->keys[i] = m->keys[j];
			m->vals[i] = m->vals[j];
			i = j;
		}
	}
	m->used[i] = 0;
	m->n--;
}

void apc_map64_free(struct apc_map64 *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	memset(m, 0, sizeof *m);
}
