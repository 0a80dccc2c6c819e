/*
 * reorder.c - the reorder window: waiting events kept as sorted runs.
 *
 * What comes in is a few interleaved streams, each already in time
 * order (gatord writes each (frame type, core) buffer whole), so the
 * window keeps sorted runs rather than one heap of events (lib/runs.h:
 * a few streams give a few runs).  Input needing more than APC_RUNS_MAX
 * runs (times jumping back and forth) spills into a binary heap of
 * single events: slower, same order.  Either way the order out is
 * exactly (time, arrival).
 *
 * A run is a FIFO list of chunks holding each event with its payload
 * (names, PCs, counter rows, annotation text...) copied behind it, so
 * holding an event costs its size and no allocation; chunks go back to
 * a free list as their run's head passes them.  Payloads too large for
 * a chunk, and annotations carrying a counter declaration, get a block
 * of their own.  Memory is bounded by max_events.
 *
 * Chunks are carved from slabs mapped with their pages already faulted
 * in (apc_pages_alloc) and stay on the free list until the end: a full
 * window of the APC reader (a million events, about 100 MB) touched
 * page by page was a fifth of an APC -> APC conversion of a 55 MB
 * capture, one fault per 4 KiB.  Slabs start small (a short input pays
 * for little) and double up to RO_SLAB_MAX.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "reorder.h"
#include "runs.h"
#include "util.h"

#define RO_CHUNK_BYTES ((size_t)64 << 10) /* a chunk, header and all */
#define RO_CHUNK (RO_CHUNK_BYTES - offsetof(struct ro_chunk, mem))
#define RO_SLAB_MIN 4                   /* chunks in the first slab */
#define RO_SLAB_MAX 32                  /* chunks in a slab at most (2 MiB) */
#define RO_INLINE_MAX ((size_t)8 << 10) /* larger payloads: a block of their own */
#define RO_ALIGN 16

/*
 * One waiting event.  In a run it sits in a chunk, its inline payload
 * right behind it; in the spill heap it is a block of its own.
 */
struct ro_entry {
	uint64_t seq;           /* arrival order */
	uint32_t size;          /* bytes this entry takes in its chunk */
	uint32_t pad_;
	void *own;              /* payload block, or a batch (annotation with a counter) */
	struct apc_event ev;
};

struct ro_chunk {
	struct ro_chunk *next;
	size_t used;            /* bytes of mem (RO_CHUNK) in use */
	_Alignas(RO_ALIGN) unsigned char mem[];
};

struct ro_slab {
	struct ro_slab *next;
	void *mem;
	size_t bytes;
};

struct ro_run {
	struct ro_chunk *head, *tail;
	size_t hoff;            /* the head entry's offset in head->mem */
};

struct apc_reorder {
	size_t n, max;          /* waiting; how many may wait */
	uint64_t seq;
	uint64_t last_ts;
	int emitted;
	struct ro_run runs[APC_RUNS_MAX];
	struct apc_runs rq;     /* which runs are live, in which orders */
	struct ro_chunk *spare; /* free chunks */
	struct ro_slab *slabs;  /* where every chunk lives */
	size_t slab_chunks;     /* chunks in the next slab */
	struct ro_entry **heap; /* the spill heap */
	size_t hn, hcap;
};

static size_t ro_up(size_t n)
{
	return (n + RO_ALIGN - 1) & ~(size_t)(RO_ALIGN - 1);
}

struct apc_reorder *apc_reorder_new(size_t max_events)
{
	struct apc_reorder *ro = calloc(1, sizeof *ro);

	if (ro)
		ro->max = max_events ? max_events : 1;
	return ro;
}

size_t apc_reorder_pending(const struct apc_reorder *ro)
{
	return ro->n;
}

static int ro_less(const struct ro_entry *a, const struct ro_entry *b)
{
	return a->ev.ts < b->ev.ts || (a->ev.ts == b->ev.ts && a->seq < b->seq);
}

/* ---- payloads ------------------------------------------------------------ */

/* Bytes an annotation's deep copy takes (without a counter declaration). */
static size_t ro_ann_size(const struct apc_ann *a)
{
	return ro_up(sizeof *a) + ro_up(a->ndeps * sizeof *a->deps) + (a->text ? a->text_len + 1 : 0) +
	       a->data_len;
}

/* The pointer payload of an event: how many bytes its copy takes. */
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
	case APC_EV_ANNOTATION:
		/* one with a counter declaration is copied into a batch */
		return e->u.ann && !e->u.ann->counter ? ro_ann_size(e->u.ann) : 0;
	default:
		return 0;
	}
}

/*
 * Copy e's pointer payload to p (ro_payload(e) bytes, RO_ALIGN-aligned)
 * and point d, a copy of e, at it.  Not for an annotation with a counter
 * declaration (those are copied into a batch).
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
	case APC_EV_ANNOTATION: {
		const struct apc_ann *a = e->u.ann;
		struct apc_ann *c = (struct apc_ann *)(void *)p;
		size_t k = ro_up(sizeof *c);

		if (!a)
			break;
		*c = *a;
		if (a->ndeps && a->deps) {
			memcpy(p + k, a->deps, a->ndeps * sizeof *a->deps);
			c->deps = (const int32_t *)(void *)(p + k);
		}
		k += ro_up(a->ndeps * sizeof *a->deps);
		if (a->text) {
			memcpy(p + k, a->text, a->text_len);
			p[k + a->text_len] = 0;
			c->text = (const char *)p + k;
			k += a->text_len + 1;
		}
		if (a->data_len && a->data) {
			memcpy(p + k, a->data, a->data_len);
			c->data = p + k;
		}
		d->u.ann = c;
		break;
	}
	default:
		break;
	}
}

/* Copy e into x (x->ev and its payload: inline at `inl`, or a block of
 * its own when inl is NULL).  APC_OK or APC_ENOMEM (nothing owned). */
static int ro_fill(struct ro_entry *x, const struct apc_event *e, size_t len, uint8_t *inl)
{
	x->ev = *e;
	x->own = NULL;
	if (e->type == APC_EV_ANNOTATION && e->u.ann && e->u.ann->counter) {
		/* rare: the declaration has strings of its own to copy */
		struct apc_batch *b = malloc(sizeof *b);
		if (!b)
			return APC_ENOMEM;
		apc_batch_init(b, 1);
		b->chunk = 1024;
		x->ev.u.ann = apc_batch_copy_ann(b, e->u.ann);
		if (!x->ev.u.ann) {
			apc_batch_free(b);
			free(b);
			return APC_ENOMEM;
		}
		x->own = b;
		return APC_OK;
	}
	if (!len)
		return APC_OK;
	if (!inl) {
		inl = malloc(len);
		if (!inl)
			return APC_ENOMEM;
		x->own = inl;
	}
	ro_copy_payload(&x->ev, e, inl);
	return APC_OK;
}

/* Release what x owns outside its chunk. */
static void ro_release(struct ro_entry *x)
{
	if (!x->own)
		return;
	if (x->ev.type == APC_EV_ANNOTATION && x->ev.u.ann && x->ev.u.ann->counter)
		apc_batch_free(x->own); /* the batch ro_fill() made */
	free(x->own);
	x->own = NULL;
}

/* ---- runs ------------------------------------------------------------------ */

static void ro_chunk_put(struct apc_reorder *ro, struct ro_chunk *c)
{
	c->next = ro->spare;
	ro->spare = c;
}

/* A new slab's chunks onto the free list.  APC_OK or APC_ENOMEM. */
static int ro_slab_new(struct apc_reorder *ro)
{
	size_t k = ro->slab_chunks ? ro->slab_chunks : RO_SLAB_MIN;
	struct ro_slab *sl = malloc(sizeof *sl);

	if (!sl)
		return APC_ENOMEM;
	sl->bytes = k * RO_CHUNK_BYTES;
	sl->mem = apc_pages_alloc(sl->bytes);
	if (!sl->mem) {
		free(sl);
		return APC_ENOMEM;
	}
	sl->next = ro->slabs;
	ro->slabs = sl;
	ro->slab_chunks = k * 2 > RO_SLAB_MAX ? RO_SLAB_MAX : k * 2;
	while (k-- > 0)
		ro_chunk_put(ro, (struct ro_chunk *)(void *)((unsigned char *)sl->mem + k * RO_CHUNK_BYTES));
	return APC_OK;
}

static struct ro_chunk *ro_chunk_new(struct apc_reorder *ro)
{
	struct ro_chunk *c;

	if (!ro->spare && ro_slab_new(ro) < 0)
		return NULL;
	c = ro->spare;
	ro->spare = c->next;
	c->next = NULL;
	c->used = 0;
	return c;
}

static struct ro_entry *run_head(const struct apc_reorder *ro, unsigned r)
{
	return (struct ro_entry *)(void *)(ro->runs[r].head->mem + ro->runs[r].hoff);
}

static int run_less(const void *ctx, unsigned a, unsigned b)
{
	const struct apc_reorder *ro = ctx;

	return ro_less(run_head(ro, a), run_head(ro, b));
}

/* Room for `size` bytes at the tail of a run (a new chunk if need be). */
static struct ro_entry *run_room(struct apc_reorder *ro, struct ro_run *run, size_t size)
{
	struct ro_entry *x;

	if (run->tail->used + size > RO_CHUNK) {
		struct ro_chunk *c = ro_chunk_new(ro);
		if (!c)
			return NULL;
		run->tail->next = c;
		run->tail = c;
	}
	x = (struct ro_entry *)(void *)(run->tail->mem + run->tail->used);
	run->tail->used += size;
	return x;
}

/* ---- the spill heap --------------------------------------------------------- */

static int spill_push(struct apc_reorder *ro, struct ro_entry *x)
{
	size_t i;

	if (ro->hn == ro->hcap) {
		size_t cap = ro->hcap ? ro->hcap * 2 : 1024;
		struct ro_entry **nh = realloc(ro->heap, cap * sizeof *nh);
		if (!nh)
			return APC_ENOMEM;
		ro->heap = nh;
		ro->hcap = cap;
	}
	i = ro->hn++;
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!ro_less(x, ro->heap[p]))
			break;
		ro->heap[i] = ro->heap[p];
		i = p;
	}
	ro->heap[i] = x;
	return APC_OK;
}

static struct ro_entry *spill_pop(struct apc_reorder *ro)
{
	struct ro_entry *top = ro->heap[0], *last = ro->heap[--ro->hn];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= ro->hn)
			break;
		if (c + 1 < ro->hn && ro_less(ro->heap[c + 1], ro->heap[c]))
			c++;
		if (!ro_less(ro->heap[c], last))
			break;
		ro->heap[i] = ro->heap[c];
		i = c;
	}
	if (ro->hn)
		ro->heap[i] = last;
	return top;
}

/* ---- push / pop ---------------------------------------------------------------- */

int apc_reorder_push(struct apc_reorder *ro, const struct apc_event *e)
{
	size_t len = ro_payload(e), size;
	int inl = len <= RO_INLINE_MAX, r = apc_runs_find(&ro->rq, e->ts);
	struct ro_entry *x;
	struct ro_chunk *c = NULL;

	size = ro_up(sizeof *x) + (inl ? ro_up(len) : 0);
	if (r >= 0) {
		struct ro_run *run = &ro->runs[r];
		x = run_room(ro, run, size);
		if (!x)
			return APC_ENOMEM;
		if (ro_fill(x, e, len, inl ? (uint8_t *)x + ro_up(sizeof *x) : NULL) < 0) {
			run->tail->used -= size; /* the room goes back */
			return APC_ENOMEM;
		}
		apc_runs_appended(&ro->rq, (unsigned)r, e->ts);
	} else if (ro->rq.n < APC_RUNS_MAX) {
		c = ro_chunk_new(ro);
		if (!c)
			return APC_ENOMEM;
		x = (struct ro_entry *)(void *)c->mem;
		if (ro_fill(x, e, len, inl ? (uint8_t *)x + ro_up(sizeof *x) : NULL) < 0) {
			ro_chunk_put(ro, c);
			return APC_ENOMEM;
		}
		c->used = size;
	} else {
		x = malloc(ro_up(sizeof *x) + (inl ? len : 0));
		if (!x)
			return APC_ENOMEM;
		if (ro_fill(x, e, len, inl ? (uint8_t *)x + ro_up(sizeof *x) : NULL) < 0) {
			free(x);
			return APC_ENOMEM;
		}
	}
	x->seq = ro->seq++;
	x->size = (uint32_t)size;
	if (c) {
		unsigned nr = apc_runs_open(&ro->rq, e->ts);
		ro->runs[nr].head = ro->runs[nr].tail = c;
		ro->runs[nr].hoff = 0;
		apc_runs_start(&ro->rq, nr, run_less, ro);
	} else if (r < 0 && spill_push(ro, x) < 0) {
		ro_release(x);
		free(x);
		return APC_ENOMEM;
	}
	ro->n++;
	return APC_OK;
}

/* Is the next event out the spill heap's (else a run's)? */
static int ro_from_spill(const struct apc_reorder *ro)
{
	if (!ro->hn)
		return 0;
	return !ro->rq.n || ro_less(ro->heap[0], run_head(ro, apc_runs_top(&ro->rq)));
}

/* After the head of the top run went out: step past it. */
static void run_advance(struct apc_reorder *ro)
{
	struct ro_run *run = &ro->runs[apc_runs_top(&ro->rq)];
	struct ro_entry *x = (struct ro_entry *)(void *)(run->head->mem + run->hoff);

	run->hoff += x->size;
	/* Past the end of a chunk, on to the next (an ENOMEM mid-push can
	 * leave an empty one at the tail). */
	while (run->hoff >= run->head->used && run->head != run->tail) {
		struct ro_chunk *c = run->head;
		run->head = c->next;
		run->hoff = 0;
		ro_chunk_put(ro, c);
	}
	if (run->hoff < run->head->used) {
		apc_runs_down(&ro->rq, run_less, ro);
		return;
	}
	/* The run is done: its chunk back to the free list. */
	ro_chunk_put(ro, run->head);
	run->head = run->tail = NULL;
	apc_runs_done(&ro->rq, run_less, ro);
}

/* Copy a waiting event into the batch (payload into its arena). */
static int ro_emit(struct apc_batch *out, const struct apc_event *src)
{
	struct apc_event *e = apc_batch_add(out, src->type, src->ts, src->core);
	size_t len;
	uint8_t *p;

	if (!e)
		return APC_ENOMEM;
	*e = *src;
	if (src->type == APC_EV_ANNOTATION) {
		e->u.ann = src->u.ann ? apc_batch_copy_ann(out, src->u.ann) : NULL;
		return src->u.ann && !e->u.ann ? APC_ENOMEM : APC_OK;
	}
	len = ro_payload(src);
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
		int spill = ro_from_spill(ro);
		struct ro_entry *x = spill ? ro->heap[0] : run_head(ro, apc_runs_top(&ro->rq));
		int rc;

		if (ro->emitted && x->ev.ts < ro->last_ts && late)
			(*late)++;
		if (!ro->emitted || x->ev.ts > ro->last_ts)
			ro->last_ts = x->ev.ts;
		ro->emitted = 1;
		rc = ro_emit(out, &x->ev);
		if (rc < 0)
			return rc; /* x stays first in line */
		ro_release(x);
		ro->n--;
		if (spill)
			free(spill_pop(ro));
		else
			run_advance(ro);
	}
	return APC_OK;
}

void apc_reorder_free(struct apc_reorder *ro)
{
	struct ro_chunk *c, *next;

	if (!ro)
		return;
	for (size_t i = 0; i < ro->rq.n; i++) {
		struct ro_run *run = &ro->runs[ro->rq.by_tail[i]];
		for (c = run->head; c; c = next) {
			size_t off = c == run->head ? run->hoff : 0;
			next = c->next;
			while (off < c->used) {
				struct ro_entry *x = (struct ro_entry *)(void *)(c->mem + off);
				off += x->size;
				ro_release(x);
			}
		}
	}
	for (size_t i = 0; i < ro->hn; i++) {
		ro_release(ro->heap[i]);
		free(ro->heap[i]);
	}
	for (struct ro_slab *sl = ro->slabs, *n; sl; sl = n) {
		n = sl->next;
		apc_pages_free(sl->mem, sl->bytes);
		free(sl);
	}
	free(ro->heap);
	free(ro);
}
