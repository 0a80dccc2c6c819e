/*
 * test_model.c - the batch arena: what it hands out stays intact until
 * the next reset, across many chunks, oversized pieces and chunks reused
 * from earlier batches; a batch that a reader overfills keeps its cap;
 * a copied annotation owns what it points to; and counters of one type
 * are one declaration, or several when asked for.
 */
#include <stdlib.h>

#include "model.h"
#include "t.h"

/* Fill a batch's arena with n strings of about `len` bytes (some of them
 * oversized) and check every one is still intact at the end. */
static int fill_and_check(struct apc_batch *b, int n, size_t len, int round)
{
	char **got = calloc((size_t)n, sizeof *got);
	char *want = malloc(len * 4 + 1);
	int bad = 0;

	if (!got || !want) {
		free(got);
		free(want);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		size_t k = i % 50 == 49 ? len * 4 : len; /* now and then past a chunk */
		memset(want, 'a' + (i + round) % 26, k);
		if (!(got[i] = apc_batch_strdup(b, want, k)))
			bad++;
	}
	for (int i = 0; i < n && !bad; i++) {
		size_t k = i % 50 == 49 ? len * 4 : len;
		if (strlen(got[i]) != k || got[i][0] != 'a' + (i + round) % 26 ||
		    got[i][k - 1] != got[i][0] || ((uintptr_t)got[i] & 7))
			bad++;
	}
	free(got);
	free(want);
	return bad;
}

static void arena_survives_resets(void)
{
	struct apc_batch b;

	apc_batch_init(&b, 16);
	for (int round = 0; round < 20; round++) {
		/* 3 MB one round, a few KB the next, 300 KB pieces the third:
		 * more chunks than are kept, and pieces larger than a chunk */
		int n = round % 3 == 0 ? 3000 : round % 3 == 1 ? 4 : 12;
		size_t len = round % 3 == 0 ? 1000 : round % 3 == 1 ? 700 : 300000;
		T_EQ_INT(fill_and_check(&b, n, len, round), 0);
		T_ASSERT(apc_batch_add(&b, APC_EV_COUNTER, (uint64_t)round, 0) != NULL);
		apc_batch_reset(&b);
		T_EQ_INT(b.n, 0);
	}
	apc_batch_free(&b);
	/* free right after init, and after an alloc without reset */
	apc_batch_init(&b, 16);
	apc_batch_free(&b);
	apc_batch_init(&b, 16);
	T_ASSERT(apc_batch_alloc(&b, 10) != NULL);
	apc_batch_free(&b);
}

/*
 * Pieces are 16-aligned and follow each other in a chunk: a zero-byte
 * request takes 16 bytes like a one-byte one, not a chunk of its own.
 */
static void small_allocs_share_a_chunk(void)
{
	struct apc_batch b;
	const size_t sizes[] = {0, 1, 16, 17, 0, 8};
	const size_t steps[] = {16, 16, 16, 32, 16, 16};
	unsigned char *prev = NULL;

	apc_batch_init(&b, 16);
	for (int round = 0; round < 2; round++) {
		for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
			unsigned char *p = apc_batch_alloc(&b, sizes[i]);
			T_ASSERT(p != NULL);
			T_EQ_INT((uintptr_t)p % 16, 0);
			if (i > 0)
				T_ASSERT(p == prev + steps[i - 1]);
			prev = p;
		}
		/* a piece larger than a chunk, then small ones again */
		T_ASSERT(apc_batch_alloc(&b, 1u << 20) != NULL);
		prev = apc_batch_alloc(&b, 3);
		T_ASSERT(prev != NULL && apc_batch_alloc(&b, 3) == prev + 16);
		apc_batch_reset(&b);
	}
	apc_batch_free(&b);
}

/*
 * A reader may add several events past apc_batch_full() (one APC
 * External message can hold thousands of annotations): they all go in,
 * but the batch is full at its cap again after a reset, not at the size
 * it grew to.  It used to double its cap for good, and the APC reader's
 * batches grew to millions of events (1.3 GB of RSS for a 559 MB
 * capture).
 */
static void overfilled_batch_keeps_its_cap(void)
{
	struct apc_batch b;

	apc_batch_init(&b, 8);
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 100; i++) {
			struct apc_event *e = apc_batch_add(&b, APC_EV_COUNTER, (uint64_t)i, 0);
			T_ASSERT(e != NULL);
			if (e)
				e->u.counter.value = i;
		}
		T_EQ_INT(b.n, 100);
		for (int i = 0; i < 100; i++)
			T_EQ_INT(b.ev[i].u.counter.value, i);
		T_ASSERT(apc_batch_full(&b));
		apc_batch_reset(&b);
		for (int i = 0; i < 7; i++)
			apc_batch_add(&b, APC_EV_COUNTER, 0, 0);
		T_ASSERT(!apc_batch_full(&b));
		apc_batch_add(&b, APC_EV_COUNTER, 0, 0);
		T_ASSERT(apc_batch_full(&b)); /* at 8, as initialised */
		T_EQ_INT(b.cap, 8);
		apc_batch_reset(&b);
	}
	apc_batch_free(&b);
}

/*
 * A copied annotation's counter declaration owns its further attributes
 * (apc_batch_copy_ann() is how a reader's decoder buffer may be reused
 * before the batch is written): the copy holds the same keys and values
 * in the batch's arena, and outlives the originals.
 */
static void copied_ann_counter_owns_its_xattrs(void)
{
	struct apc_batch b;
	struct apc_counter_decl d = {.type = "c", .event = -1};
	struct apc_ann a = {.code = APC_ANN_COUNTER, .counter = &d};
	struct apc_ann *c;

	apc_batch_init(&b, 8);
	T_ASSERT(apc_attrs_add(&d.xattrs, &d.nxattrs, "derived", "yes") == APC_OK);
	T_ASSERT(apc_attrs_add(&d.xattrs, &d.nxattrs, "proc", NULL) == APC_OK);
	c = apc_batch_copy_ann(&b, &a);
	T_ASSERT(c && c->counter);
	if (c && c->counter) {
		T_EQ_INT(c->counter->nxattrs, 2);
		T_ASSERT(c->counter->xattrs != d.xattrs);
		apc_attrs_free(d.xattrs, d.nxattrs);
		d.xattrs = NULL;
		d.nxattrs = 0;
		T_ASSERT(!strcmp(c->counter->xattrs[0].key, "derived"));
		T_ASSERT(!strcmp(c->counter->xattrs[0].value, "yes"));
		T_ASSERT(!strcmp(c->counter->xattrs[1].key, "proc"));
		T_ASSERT(!strcmp(c->counter->xattrs[1].value, ""));
		T_ASSERT(!strcmp(apc_attrs_get(c->counter->xattrs, 2, "proc"), ""));
		T_ASSERT(!apc_attrs_get(c->counter->xattrs, 2, "advanced"));
	}
	apc_attrs_free(d.xattrs, d.nxattrs);
	apc_batch_free(&b);
}

/*
 * apc_model_add_counter() gives back the declaration a type has;
 * apc_model_add_counter_new() always makes one (a capture that gives a
 * type two keys), which keeps its own id and key, while find and add
 * still give the first.
 */
static void a_type_can_be_declared_twice(void)
{
	struct apc_model m;
	struct apc_counter_decl *d;
	uint32_t first, second;

	apc_model_init(&m);
	d = apc_model_add_counter(&m, "L");
	T_ASSERT(d != NULL);
	if (!d)
		return;
	first = d->id;
	d->key = 0x12;
	T_EQ_INT(apc_model_add_counter(&m, "L")->id, first);
	T_EQ_INT(m.ncounters, 1);
	d = apc_model_add_counter_new(&m, "L");
	T_ASSERT(d != NULL);
	if (d) {
		second = d->id;
		d->key = 0x13;
		T_ASSERT(second != first);
		T_EQ_INT(m.ncounters, 2);
		T_EQ_INT(d->event, -1);
		T_ASSERT(!strcmp(m.counters[second].type, "L"));
		T_ASSERT(m.counters[second].type != m.counters[first].type);
		T_EQ_INT(apc_model_find_counter(&m, "L")->id, first);
		T_EQ_INT(apc_model_add_counter(&m, "L")->id, first);
		T_EQ_INT(m.counters[first].key, 0x12);
		T_EQ_INT(m.counters[second].key, 0x13);
	}
	/* a new type through either is the same */
	d = apc_model_add_counter_new(&m, "M");
	T_ASSERT(d && d->id == 2 && apc_model_find_counter(&m, "M") == d);
	apc_model_free(&m);
}

void run_tests(void)
{
	T_RUN(arena_survives_resets);
	T_RUN(small_allocs_share_a_chunk);
	T_RUN(overfilled_batch_keeps_its_cap);
	T_RUN(copied_ann_counter_owns_its_xattrs);
	T_RUN(a_type_can_be_declared_twice);
}
