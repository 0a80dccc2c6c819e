/*
 * map64.h - a map from 64-bit keys to 64-bit values: open addressing,
 * linear probing, at most three quarters full, and backward-shift
 * deletion, so a lookup never meets a tombstone.  The readers and
 * apcdump use it for their id tables (threads, methods, objects,
 * counters, annotation names): a few thousand keys at most, looked up
 * once a record, so lookups are inline here and the rest is in map64.c.
 *
 * A zeroed struct is an empty map; apc_map64_free() makes it one again.
 */
#ifndef APC_MAP64_H
#define APC_MAP64_H

#include <stddef.h>
#include <stdint.h>

struct apc_map64 {
	uint64_t *keys, *vals;
	uint8_t *used;          /* slot i holds keys[i] -> vals[i] */
	size_t cap, n;          /* cap is 0 or a power of two */
};

/* The home slot of k: a 64-bit mix (MurmurHash3's finaliser, first
 * round), so sequential ids spread over the table. */
static inline size_t apc_map64_slot(uint64_t k, size_t cap)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (size_t)k & (cap - 1);
}

/* 1 and *v (when v is not NULL) set if k is in the map, else 0. */
static inline int apc_map64_find(const struct apc_map64 *m, uint64_t k, uint64_t *v)
{
	if (!m->cap)
		return 0;
	for (size_t i = apc_map64_slot(k, m->cap); m->used[i]; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == k) {
			if (v)
				*v = m->vals[i];
			return 1;
		}
	return 0;
}

/*
 * A 64-bit key for a string (and numbers with it): FNV-1a, from
 * APC_HASH_SEED or an earlier result.  Not collision-proof: a map keyed
 * by it checks what it finds (and falls back to a scan on a clash).
 */
#define APC_HASH_SEED 0xcbf29ce484222325ull

static inline uint64_t apc_hash_str(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
	return h;
}

/* The same over n bytes: apc_hash_mem(h, s, strlen(s)) == apc_hash_str(h, s). */
static inline uint64_t apc_hash_mem(uint64_t h, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
	return h;
}

static inline uint64_t apc_hash_u64(uint64_t h, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		h = (h ^ ((v >> (8 * i)) & 0xff)) * 0x100000001b3ull;
	return h;
}

/* Set k to v, adding k if absent: 0, or -1 on allocation failure (the
 * map is then unchanged). */
int apc_map64_put(struct apc_map64 *m, uint64_t k, uint64_t v);

/* Remove k if present. */
void apc_map64_del(struct apc_map64 *m, uint64_t k);

void apc_map64_free(struct apc_map64 *m);

#endif
