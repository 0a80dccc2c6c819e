/*
 * reorder.c - a min-heap of deep-copied events keyed by (time, arrival).
 *
 * Each waiting event owns one malloc'd block holding the event and
 * everything it points to; popping copies it into the output batch's
 * arena and frees the block.  Memory is bounded by max_events.
 */
#include <stdlib.h>
#include <string.h>

#include "reorder.h"

struct ro_item {
	uint64_t ts, seq;
	struct apc_event *ev; /* owned block */
};

struct apc_reorder {
	struct ro_item *heap;
	size_t n, cap, max;
	uint64_t seq;
	uint64_t last_ts;
	int emitted;
};

struct apc_reorder *apc_reorder_new(size_t max_events)
{
	struct apc_reorder *ro = calloc(1, sizeof *ro);

	if (ro)
		ro->max = max_events ? max_events : 1;
	return ro;
}

/*
 * Copy an event into one block (event, then payload).  Annotations are
 * the exception: they are copied through a scratch batch-free path by
 * apc_batch_copy_ann at pop time, so here they get a private batch.
 */
struct ro_block {
	struct apc_event ev;
	struct apc_batch ann; /* owns the annotation copy, if any */
	uint8_t payload[];
};

void apc_reorder_free(struct apc_reorder *ro)
{
	if (!ro)
		return;
	for (size_t i = 0; i < ro->n; i++) {
		/* events still held: each is the head of its block */
		struct ro_block *b = (struct ro_block *)(void *)ro->heap[i].ev;
		apc_batch_free(&b->ann);
		free(b);
	}
	free(ro->heap);
	free(ro);
}

size_t apc_reorder_pending(const struct apc_reorder *ro)
{
	return ro->n;
}

static int ro_less(const struct ro_item *a, const struct ro_item *b)
{
	return a->ts < b->ts || (a->ts == b->ts && a->seq < b->seq);
}

/* The pointer payload of an event: where it is and how long. */
static size_t ro_payload(const struct apc_event *e)
{
	switch (e->type) {
	case APC_EV_THREAD_NAME:
	case APC_EV_COOKIE_NAME:
		return e->u.name.name ? strlen(e->u.name.name) + 1 : 0;
	case APC_EV_SAMPLE:
		return e->u.sample.depth * sizeof *e->u.sample.pcs;
	case APC_EV_PROC:
		return (e->u.proc.image ? strlen(e->u.proc.image) + 1 : 0) +
		       (e->u.proc.comm ? strlen(e->u.proc.comm) + 1 : 0);
	case APC_EV_RAW_FRAME:
		return e->u.raw.len;
	case APC_EV_COUNTERS:
		return e->u.counters.n * (sizeof *e->u.counters.values + sizeof *e->u.counters.ids);
	default:
		return 0;
	}
}

/*
 * Copy e's pointer payload to p (ro_payload(e) bytes) and point d, a copy
 * of e, at it.  Annotations are not handled here (they own a batch).
 */
static void ro_copy_payload(struct apc_event *d, const struct apc_event *e, uint8_t *p)
{
	switch (e->type) {
	case APC_EV_THREAD_NAME:
	case APC_EV_COOKIE_NAME:
		if (e->u.name.name) {
			memcpy(p, e->u.name.name, strlen(e->u.name.name) + 1);
			d->u.name.name = (const char *)p;
		}
		break;
	case APC_EV_SAMPLE:
		if (e->u.sample.depth)
			memcpy(p, e->u.sample.pcs, e->u.sample.depth * sizeof *e->u.sample.pcs);
		d->u.sample.pcs = (const struct apc_pc *)(void *)p;
		break;
	case APC_EV_PROC: {
		size_t k = 0;
		if (e->u.proc.image) {
			k = strlen(e->u.proc.image) + 1;
			memcpy(p, e->u.proc.image, k);
			d->u.proc.image = (const char *)p;
		}
		if (e->u.proc.comm) {
			memcpy(p + k, e->u.proc.comm, strlen(e->u.proc.comm) + 1);
			d->u.proc.comm = (const char *)p + k;
		}
		break;
	}
	case APC_EV_RAW_FRAME:
		if (e->u.raw.len)
			memcpy(p, e->u.raw.bytes, e->u.raw.len);
		d->u.raw.bytes = p;
		break;
	case APC_EV_COUNTERS: {
		/* values first: they need the 8-byte alignment p has */
		size_t nv = e->u.counters.n * sizeof *e->u.counters.values;
		if (e->u.counters.n) {
			memcpy(p, e->u.counters.values, nv);
			memcpy(p + nv, e->u.counters.ids, e->u.counters.n * sizeof *e->u.counters.ids);
		}
		d->u.counters.values = (const int64_t *)(void *)p;
		d->u.counters.ids = (const uint32_t *)(void *)(p + nv);
		break;
	}
	default:
		break;
	}
}

int apc_reorder_push(struct apc_reorder *ro, const struct apc_event *e)
{
	size_t len = ro_payload(e);
	struct ro_block *b = malloc(sizeof *b + (len ? len : 1));
	uint8_t *p;

	if (!b)
		return APC_ENOMEM;
	b->ev = *e;
	apc_batch_init(&b->ann, 1);
	/* Chunks the size of what they hold: a default 256 KiB chunk for
	 * each annotation in a window of up to a million events took 1.8
	 * GB of RSS and 6 s for a 23 MB capture. */
	b->ann.chunk = 64;
	p = b->payload;
	switch (e->type) {
	case APC_EV_ANNOTATION:
		b->ev.u.ann = e->u.ann ? apc_batch_copy_ann(&b->ann, e->u.ann) : NULL;
		if (e->u.ann && !b->ev.u.ann) {
			apc_batch_free(&b->ann);
			free(b);
			return APC_ENOMEM;
		}
		break;
	default:
		ro_copy_payload(&b->ev, e, p);
		break;
	}
	if (ro->n == ro->cap) {
		size_t ncap = ro->cap ? ro->cap * 2 : 1024;
		struct ro_item *nh = realloc(ro->heap, ncap * sizeof *nh);
		if (!nh) {
			apc_batch_free(&b->ann);
			free(b);
			return APC_ENOMEM;
		}
		ro->heap = nh;
		ro->cap = ncap;
	}
	/* sift up */
	struct ro_item it = {e->ts, ro->seq++, &b->ev};
	size_t i = ro->n++;
	while (i > 0) {
		size_t parent = (i - 1) / 2;
		if (!ro_less(&it, &ro->heap[parent]))
			break;
		ro->heap[i] = ro->heap[parent];
		i = parent;
	}
	ro->heap[i] = it;
	return APC_OK;
}

static struct ro_item ro_take(struct apc_reorder *ro)
{
	struct ro_item top = ro->heap[0], last = ro->heap[--ro->n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= ro->n)
			break;
		if (c + 1 < ro->n && ro_less(&ro->heap[c + 1], &ro->heap[c]))
			c++;
		if (!ro_less(&ro->heap[c], &last))
			break;
		ro->heap[i] = ro->heap[c];
		i = c;
	}
	if (ro->n)
		ro->heap[i] = last;
	return top;
}

/* Copy an owned event into the batch (payload into its arena). */
static int ro_emit(struct apc_batch *out, const struct apc_event *src)
{
	struct apc_event *e = apc_batch_add(out, src->type, src->ts, src->core);
	size_t len = ro_payload(src);
	uint8_t *p;

	if (!e)
		return APC_ENOMEM;
	*e = *src;
	if (src->type == APC_EV_ANNOTATION) {
		e->u.ann = src->u.ann ? apc_batch_copy_ann(out, src->u.ann) : NULL;
		return src->u.ann && !e->u.ann ? APC_ENOMEM : APC_OK;
	}
	if (!len)
		return APC_OK;
	p = apc_batch_alloc(out, len);
	if (!p)
		return APC_ENOMEM;
	ro_copy_payload(e, src, p);
	return APC_OK;
}

int apc_reorder_pop(struct apc_reorder *ro, struct apc_batch *out, int all, uint64_t *late)
{
	while (ro->n && (all || ro->n > ro->max) && !apc_batch_full(out)) {
		struct ro_item it = ro_take(ro);
		struct ro_block *b = (struct ro_block *)(void *)it.ev;
		int rc;

		if (ro->emitted && it.ts < ro->last_ts && late)
			(*late)++;
		if (!ro->emitted || it.ts > ro->last_ts)
			ro->last_ts = it.ts;
		ro->emitted = 1;
		rc = ro_emit(out, &b->ev);
		apc_batch_free(&b->ann);
		free(b);
		if (rc < 0)
			return rc;
	}
	return APC_OK;
}
