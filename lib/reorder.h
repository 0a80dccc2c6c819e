/*
 * reorder.h - restore time order across a bounded window of events.
 *
 * Some sources interleave streams that are each in order but not in
 * order with each other (gatord writes each buffer of a (frame type,
 * core) whole, so a scheduler buffer can hold seconds of events that
 * precede counters already written).  The pipeline pushes their events
 * here; they come out sorted by time (stable for equal times) once more
 * than `max_events` wait or the input ends.  Events are deep-copied, so
 * the batch they came from can be reused.
 */
#ifndef APC_REORDER_H
#define APC_REORDER_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

struct apc_reorder;

struct apc_reorder *apc_reorder_new(size_t max_events);
void apc_reorder_free(struct apc_reorder *ro);

/* Copy e in.  APC_OK or APC_ENOMEM. */
int apc_reorder_push(struct apc_reorder *ro, const struct apc_event *e);

/*
 * apc_reorder_pop() : move events that are due into out (appended, their
 * strings copied into out's arena): those beyond max_events, or all of
 * them when `all` is set.  Stops when out is full.  Returns APC_OK, or
 * APC_ENOMEM.  *late counts events that came out earlier than an event
 * already emitted (the window was too small for them).
 */
int apc_reorder_pop(struct apc_reorder *ro, struct apc_batch *out, int all, uint64_t *late);

/* Events waiting. */
size_t apc_reorder_pending(const struct apc_reorder *ro);

#endif
