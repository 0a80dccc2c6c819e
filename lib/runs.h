/*
 * runs.h - the bookkeeping of a queue kept as sorted runs, shared by the
 * reorder window (lib/reorder.c) and the TPTP reorder queue
 * (formats/tptp_map.c).
 *
 * Items that arrive as a few interleaved streams, each in time order,
 * are kept as sorted runs: an item goes to the run whose last time is
 * the greatest one not after its own, a new run starts when there is
 * none (the fewest runs any split into sorted runs needs), and the next
 * item out is the smallest run head.  The caller stores the runs' items
 * and compares their heads; this keeps the run numbers (0 ..
 * APC_RUNS_MAX-1) twice: by tail time ascending, to find where an item
 * goes, and as a binary heap by head item, to find what comes out.
 *
 * Header-only and inline so that the caller's head comparison, passed
 * as a function, is inlined into the heap walks.
 */
#ifndef APC_RUNS_H
#define APC_RUNS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define APC_RUNS_MAX 64

struct apc_runs {
	uint64_t tail_ts[APC_RUNS_MAX]; /* by run number */
	uint8_t by_tail[APC_RUNS_MAX];  /* live runs, by tail time ascending */
	uint8_t heap[APC_RUNS_MAX];     /* live runs, a heap by head item */
	size_t n;                       /* live runs */
};

/* Is the head of run a before the head of run b? */
typedef int (*apc_runs_less)(const void *ctx, unsigned a, unsigned b);

/*
 * apc_runs_find() : the run an item of time ts goes to (appended: then
 * say so with apc_runs_appended), or -1 when no run's tail is at or
 * before ts (a new run is needed).
 */
static inline int apc_runs_find(const struct apc_runs *q, uint64_t ts)
{
	size_t lo = 0, hi = q->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (q->tail_ts[q->by_tail[mid]] <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? q->by_tail[lo - 1] : -1;
}

/* Run r's tail is now ts (no later than the next run's: the order holds). */
static inline void apc_runs_appended(struct apc_runs *q, unsigned r, uint64_t ts)
{
	q->tail_ts[r] = ts;
}

/*
 * apc_runs_open() : the number of a free run for a first item of time
 * ts, earlier than every tail (apc_runs_find said -1; there are fewer
 * than APC_RUNS_MAX runs).  Store the item, then apc_runs_start().
 */
static inline unsigned apc_runs_open(struct apc_runs *q, uint64_t ts)
{
	uint8_t used[APC_RUNS_MAX] = {0};
	unsigned r;

	/* The runs in use are not always 0..n-1. */
	for (size_t i = 0; i < q->n; i++)
		used[q->by_tail[i]] = 1;
	for (r = 0; used[r]; r++)
		;
	q->tail_ts[r] = ts;
	return r;
}

/* Run r (from apc_runs_open, its first item stored) joins the queue. */
static inline void apc_runs_start(struct apc_runs *q, unsigned r, apc_runs_less less,
				  const void *ctx)
{
	size_t i;

	/* Its tail is the smallest: first in by_tail. */
	memmove(q->by_tail + 1, q->by_tail, q->n);
	q->by_tail[0] = (uint8_t)r;
	i = q->n++;
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!less(ctx, r, q->heap[p]))
			break;
		q->heap[i] = q->heap[p];
		i = p;
	}
	q->heap[i] = (uint8_t)r;
}

/* The run whose head comes out next (the queue has runs). */
static inline unsigned apc_runs_top(const struct apc_runs *q)
{
	return q->heap[0];
}

/* The top run's head changed (it moved on to its next item): restore
 * the heap. */
static inline void apc_runs_down(struct apc_runs *q, apc_runs_less less, const void *ctx)
{
	uint8_t r = q->heap[0];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= q->n)
			break;
		if (c + 1 < q->n && less(ctx, q->heap[c + 1], q->heap[c]))
			c++;
		if (!less(ctx, q->heap[c], r))
			break;
		q->heap[i] = q->heap[c];
		i = c;
	}
	q->heap[i] = r;
}

/* The top run has no items left: it leaves the queue. */
static inline void apc_runs_done(struct apc_runs *q, apc_runs_less less, const void *ctx)
{
	uint8_t r = q->heap[0];
	size_t i;

	for (i = 0; q->by_tail[i] != r; i++)
		;
	memmove(q->by_tail + i, q->by_tail + i + 1, q->n - i - 1);
	q->n--;
	if (q->n) {
		q->heap[0] = q->heap[q->n];
		apc_runs_down(q, less, ctx);
	}
}

#endif
