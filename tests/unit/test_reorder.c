/*
 * test_reorder.c - the reorder window: sorted, stable for equal times,
 * bounded in what it holds, and exact copies of every payload kind.
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "reorder.h"
#include "t.h"

static uint64_t rs = 88172645463325252ULL;
static uint64_t rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

/* Streams each in order, interleaved out of order: the window restores
 * time order, and equal times keep their arrival order. */
static void sorts_and_is_stable(void)
{
	struct apc_reorder *ro = apc_reorder_new(100000);
	struct apc_batch in, out;
	uint64_t t[4] = {0, 0, 0, 0}, late = 0, prev = 0;
	size_t got = 0;
	int32_t last_seq_at_ts = -1;

	apc_batch_init(&in, 64);
	apc_batch_init(&out, 1000000);
	for (int i = 0; i < 20000; i++) {
		int s = (int)(rnd() % 4);
		t[s] += rnd() % 3; /* many equal times */
		struct apc_event *e = apc_batch_add(&in, APC_EV_COUNTER, t[s], s);
		T_ASSERT(e);
		e->u.counter.value = i; /* arrival order */
		T_EQ_INT(apc_reorder_push(ro, e), APC_OK);
		apc_batch_reset(&in);
	}
	T_EQ_INT(apc_reorder_pending(ro), 20000);
	T_EQ_INT(apc_reorder_pop(ro, &out, 1, &late), APC_OK);
	T_EQ_INT(out.n, 20000);
	T_EQ_INT(late, 0);
	for (size_t i = 0; i < out.n; i++, got++) {
		if (out.ev[i].ts < prev)
			T_FAIL("event %zu at %llu after %llu", i, (unsigned long long)out.ev[i].ts,
			       (unsigned long long)prev);
		if (out.ev[i].ts == prev && out.ev[i].u.counter.value < last_seq_at_ts)
			T_FAIL("equal times out of arrival order at %zu", i);
		if (out.ev[i].ts != prev)
			last_seq_at_ts = -1;
		prev = out.ev[i].ts;
		last_seq_at_ts = (int32_t)out.ev[i].u.counter.value;
	}
	T_EQ_INT(got, 20000);
	apc_batch_free(&in);
	apc_batch_free(&out);
	apc_reorder_free(ro);
}

/* Only what exceeds max_events comes out before the end; an event older
 * than one already released is counted late. */
static void bounded_and_late(void)
{
	struct apc_reorder *ro = apc_reorder_new(3);
	struct apc_batch in, out;
	uint64_t late = 0;
	static const uint64_t ts[] = {50, 40, 30, 60, 10, 70};

	apc_batch_init(&in, 8);
	apc_batch_init(&out, 8);
	for (size_t i = 0; i < 6; i++) {
		struct apc_event *e = apc_batch_add(&in, APC_EV_IDLE, ts[i], 0);
		T_EQ_INT(apc_reorder_push(ro, e), APC_OK);
		apc_batch_reset(&in);
		T_EQ_INT(apc_reorder_pop(ro, &out, 0, &late), APC_OK);
		T_ASSERT(apc_reorder_pending(ro) <= 3);
	}
	/* 30 goes out when 60 arrives; 10 arrives after that and, being the
	 * smallest waiting, goes out next: late */
	T_EQ_INT(out.n, 3);
	T_EQ_U64(out.ev[0].ts, 30);
	T_EQ_U64(out.ev[1].ts, 10);
	T_EQ_INT(late, 1);
	T_EQ_INT(apc_reorder_pop(ro, &out, 1, &late), APC_OK);
	T_EQ_INT(out.n, 6);
	T_EQ_INT(apc_reorder_pending(ro), 0);
	apc_batch_free(&in);
	apc_batch_free(&out);
	apc_reorder_free(ro);
}

/* Payloads are deep copies: the input batch can be overwritten. */
static void payloads_copied(void)
{
	struct apc_reorder *ro = apc_reorder_new(100);
	struct apc_batch in, out;
	struct apc_pc pcs[3] = {{2, 0x10}, {3, 0x20}, {-1, 0x30}};
	int32_t deps[2] = {7, 9};
	uint8_t raw[5] = {1, 2, 3, 4, 5};
	struct apc_ann ann = {0};
	struct apc_event *e;

	apc_batch_init(&in, 8);
	apc_batch_init(&out, 8);
	e = apc_batch_add(&in, APC_EV_THREAD_NAME, 5, 0);
	e->u.name.id = 42;
	e->u.name.name = apc_batch_strdup(&in, "worker", 6);
	e = apc_batch_add(&in, APC_EV_SAMPLE, 4, 1);
	e->u.sample.depth = 3;
	e->u.sample.pcs = pcs;
	e = apc_batch_add(&in, APC_EV_PROC, 3, 0);
	e->u.proc.image = "/bin/app";
	e->u.proc.comm = "app";
	e = apc_batch_add(&in, APC_EV_RAW_FRAME, 2, 0);
	e->u.raw.frame_type = 12;
	e->u.raw.len = 5;
	e->u.raw.bytes = raw;
	ann.code = APC_ANN_CAM_JOB;
	ann.text = "job";
	ann.text_len = 3;
	ann.ndeps = 2;
	ann.deps = deps;
	e = apc_batch_add(&in, APC_EV_ANNOTATION, 1, APC_NO_CORE);
	e->u.ann = &ann;
	for (size_t i = 0; i < in.n; i++)
		T_EQ_INT(apc_reorder_push(ro, &in.ev[i]), APC_OK);
	/* clobber every source */
	apc_batch_free(&in);
	memset(pcs, 0, sizeof pcs);
	memset(deps, 0, sizeof deps);
	memset(raw, 0, sizeof raw);
	ann.text = "xxx";
	T_EQ_INT(apc_reorder_pop(ro, &out, 1, NULL), APC_OK);
	T_EQ_INT(out.n, 5);
	T_EQ_INT(out.ev[0].type, APC_EV_ANNOTATION);
	T_EQ_STR(out.ev[0].u.ann->text, "job");
	T_EQ_INT(out.ev[0].u.ann->deps[1], 9);
	T_EQ_INT(out.ev[1].u.raw.bytes[4], 5);
	T_EQ_STR(out.ev[2].u.proc.image, "/bin/app");
	T_EQ_STR(out.ev[2].u.proc.comm, "app");
	T_EQ_INT(out.ev[3].u.sample.pcs[1].offset, 0x20);
	T_EQ_INT(out.ev[3].u.sample.pcs[2].cookie, -1);
	T_EQ_STR(out.ev[4].u.name.name, "worker");
	apc_batch_free(&out);
	apc_reorder_free(ro);
}

/*
 * Annotations held in the window cost about their size: each once took
 * a default 256 KiB arena chunk of its own, at least a touched page
 * apiece (100000 of them: over 400 MB of RSS; now some 30 MB).
 */
static void annotations_held_cheaply(void)
{
	enum { N = 100000 };
	struct apc_reorder *ro = apc_reorder_new(N + 1);
	struct apc_batch in;
	struct apc_ann a = {.code = APC_ANN_STR, .tid = 1, .pid = 1, .text = "some text", .text_len = 9};
	struct rusage r0, r1;
	long grew_mb;

	apc_batch_init(&in, 64);
	getrusage(RUSAGE_SELF, &r0);
	for (int i = 0; i < N; i++) {
		struct apc_event *e = apc_batch_add(&in, APC_EV_ANNOTATION, (uint64_t)i, 0);
		T_ASSERT(e);
		e->u.ann = &a;
		T_EQ_INT(apc_reorder_push(ro, e), APC_OK);
		apc_batch_reset(&in);
	}
	getrusage(RUSAGE_SELF, &r1);
	grew_mb = (r1.ru_maxrss - r0.ru_maxrss) / 1024;
	printf("# %d annotations held: peak RSS grew %ld MB\n", N, grew_mb);
	T_ASSERT(grew_mb < 200);
	T_EQ_INT(apc_reorder_pending(ro), N);
	apc_reorder_free(ro);
	apc_batch_free(&in);
}

/*
 * The order out is exactly (time, arrival) whatever path an event took:
 * a few streams (sorted runs), more streams than there can be runs (the
 * spill heap), payloads of every kind including ones too large to sit
 * in a chunk and annotations with a counter declaration.  The reference
 * is a plain scan for the smallest waiting (time, arrival); each event
 * carries its arrival number so the payload can be checked too.
 */
struct ref_ev {
	uint64_t ts;
	uint32_t id;
	int live;
};

static void make_event(struct apc_batch *in, uint32_t id, uint64_t ts, uint8_t *raw,
		       struct apc_pc *pcs, char *text, struct apc_counter_decl *decl)
{
	struct apc_event *e;
	static int64_t vals[4];
	static const uint32_t ids[4] = {3, 4, 5, 6};
	static struct apc_ann a;

	switch (id % 6) {
	case 0:
		e = apc_batch_add(in, APC_EV_COUNTERS, ts, (int32_t)(id % 4));
		for (int k = 0; k < 4; k++)
			vals[k] = (int64_t)id * 10 + k;
		e->u.counters.pid = (int32_t)id;
		e->u.counters.n = 1 + id % 4;
		e->u.counters.ids = ids;
		e->u.counters.values = vals;
		break;
	case 1:
		e = apc_batch_add(in, APC_EV_SAMPLE, ts, 0);
		for (int k = 0; k < 3; k++)
			pcs[k] = (struct apc_pc){(int32_t)id, (int64_t)id * 3 + k};
		e->u.sample.pid = (int32_t)id;
		e->u.sample.depth = 1 + id % 3;
		e->u.sample.pcs = pcs;
		break;
	case 2:
		e = apc_batch_add(in, APC_EV_THREAD_NAME, ts, 0);
		snprintf(text, 64, "thread %u", id);
		e->u.name.id = (int32_t)id;
		e->u.name.name = text;
		break;
	case 3:
		/* every 7th: larger than a whole chunk */
		e = apc_batch_add(in, APC_EV_RAW_FRAME, ts, 1);
		e->u.raw.frame_type = (int32_t)id;
		e->u.raw.len = id % 7 == 0 ? 70000 : 1 + id % 50;
		for (uint32_t k = 0; k < e->u.raw.len; k++)
			raw[k] = (uint8_t)(id + k);
		e->u.raw.bytes = raw;
		break;
	default:
		e = apc_batch_add(in, APC_EV_ANNOTATION, ts, APC_NO_CORE);
		memset(&a, 0, sizeof a);
		snprintf(text, 64, "note %u", id);
		a.code = APC_ANN_STR;
		a.channel = (int32_t)id;
		a.text = text;
		a.text_len = strlen(text);
		if (id % 5 == 0)
			a.counter = decl; /* copied whole, strings and all */
		e->u.ann = &a;
		break;
	}
}

static void check_event(const struct apc_event *e, uint32_t id, struct apc_counter_decl *decl)
{
	char want[64];

	switch (id % 6) {
	case 0:
		T_EQ_INT(e->type, APC_EV_COUNTERS);
		T_EQ_INT(e->u.counters.pid, id);
		T_EQ_INT(e->u.counters.n, 1 + id % 4);
		for (uint32_t k = 0; k < e->u.counters.n; k++) {
			T_EQ_INT(e->u.counters.values[k], (int64_t)id * 10 + k);
			T_EQ_INT(e->u.counters.ids[k], 3 + k);
		}
		break;
	case 1:
		T_EQ_INT(e->type, APC_EV_SAMPLE);
		T_EQ_INT(e->u.sample.depth, 1 + id % 3);
		for (uint32_t k = 0; k < e->u.sample.depth; k++)
			T_EQ_INT(e->u.sample.pcs[k].offset, (int64_t)id * 3 + k);
		break;
	case 2:
		snprintf(want, sizeof want, "thread %u", id);
		T_EQ_INT(e->type, APC_EV_THREAD_NAME);
		T_EQ_STR(e->u.name.name, want);
		break;
	case 3:
		T_EQ_INT(e->type, APC_EV_RAW_FRAME);
		T_EQ_INT(e->u.raw.frame_type, id);
		T_EQ_INT(e->u.raw.len, id % 7 == 0 ? 70000 : 1 + id % 50);
		for (uint32_t k = 0; k < e->u.raw.len; k++)
			if (e->u.raw.bytes[k] != (uint8_t)(id + k)) {
				T_FAIL("raw frame %u byte %u", id, k);
				break;
			}
		break;
	default:
		snprintf(want, sizeof want, "note %u", id);
		T_EQ_INT(e->type, APC_EV_ANNOTATION);
		T_EQ_INT(e->u.ann->channel, id);
		T_EQ_STR(e->u.ann->text, want);
		if (id % 5 == 0) {
			T_ASSERT(e->u.ann->counter && e->u.ann->counter != decl);
			T_EQ_STR(e->u.ann->counter->type, decl->type);
			T_EQ_STR(e->u.ann->counter->title, decl->title);
		} else {
			T_ASSERT(!e->u.ann->counter);
		}
		break;
	}
}

static uint32_t event_id(const struct apc_event *e)
{
	switch (e->type) {
	case APC_EV_COUNTERS: return (uint32_t)e->u.counters.pid;
	case APC_EV_SAMPLE: return (uint32_t)e->u.sample.pid;
	case APC_EV_THREAD_NAME: return (uint32_t)e->u.name.id;
	case APC_EV_RAW_FRAME: return (uint32_t)e->u.raw.frame_type;
	default: return (uint32_t)e->u.ann->channel;
	}
}

static void order_like_a_scan(int nstreams, size_t window, int jitter)
{
	enum { N = 6000 };
	struct apc_reorder *ro = apc_reorder_new(window);
	struct ref_ev *ref = calloc(N, sizeof *ref);
	uint64_t *t = calloc((size_t)nstreams, sizeof *t), late = 0, ref_late = 0, ref_last = 0;
	uint8_t *raw = malloc(70000);
	struct apc_pc pcs[3];
	char text[64], type[] = "custom_x", title[] = "X";
	struct apc_counter_decl decl = {.id = 9, .type = type, .title = title};
	struct apc_batch in, out;
	size_t nref = 0, held = 0, got = 0;
	int ref_emitted = 0;

	T_ASSERT(ro && ref && t && raw);
	/* streams far apart in time: each its own run, and past 64 of
	 * them the spill heap */
	for (int s = 0; s < nstreams; s++)
		t[s] = (uint64_t)(nstreams - s) * 100000;
	apc_batch_init(&in, 8);
	apc_batch_init(&out, 64);
	for (uint32_t id = 0; id < N; id++) {
		int s = (int)(rnd() % (uint64_t)nstreams);
		/* each stream in order (equal times common), the streams
		 * interleaved; with jitter, some times step back a little */
		t[s] += rnd() % 4;
		uint64_t ts = t[s];
		if (jitter && rnd() % 8 == 0)
			ts = ts > 20 ? ts - rnd() % 20 : 0;
		make_event(&in, id, ts, raw, pcs, text, &decl);
		T_EQ_INT(apc_reorder_push(ro, &in.ev[0]), APC_OK);
		apc_batch_reset(&in);
		memset(raw, 0xee, 70000); /* the copy must not care */
		ref[nref++] = (struct ref_ev){ts, id, 1};
		held++;
		/* pop what is due, small batches at a time */
		for (;;) {
			apc_batch_reset(&out);
			T_EQ_INT(apc_reorder_pop(ro, &out, 0, &late), APC_OK);
			for (size_t i = 0; i < out.n; i++) {
				/* the reference: smallest (time, arrival) waiting */
				size_t best = SIZE_MAX;
				for (size_t k = 0; k < nref; k++)
					if (ref[k].live && (best == SIZE_MAX || ref[k].ts < ref[best].ts))
						best = k;
				ref[best].live = 0;
				held--;
				if (ref_emitted && ref[best].ts < ref_last)
					ref_late++;
				if (!ref_emitted || ref[best].ts > ref_last)
					ref_last = ref[best].ts;
				ref_emitted = 1;
				T_EQ_U64(out.ev[i].ts, ref[best].ts);
				T_EQ_INT(event_id(&out.ev[i]), ref[best].id);
				check_event(&out.ev[i], ref[best].id, &decl);
				got++;
			}
			if (out.n < out.cap)
				break;
		}
		T_EQ_INT(apc_reorder_pending(ro), held);
		T_ASSERT(held <= window);
		if (t_failed_now)
			break;
	}
	/* the rest, at the end */
	for (;;) {
		apc_batch_reset(&out);
		T_EQ_INT(apc_reorder_pop(ro, &out, 1, &late), APC_OK);
		if (!out.n)
			break;
		for (size_t i = 0; i < out.n && !t_failed_now; i++) {
			size_t best = SIZE_MAX;
			for (size_t k = 0; k < nref; k++)
				if (ref[k].live && (best == SIZE_MAX || ref[k].ts < ref[best].ts))
					best = k;
			ref[best].live = 0;
			T_EQ_U64(out.ev[i].ts, ref[best].ts);
			T_EQ_INT(event_id(&out.ev[i]), ref[best].id);
			check_event(&out.ev[i], ref[best].id, &decl);
			got++;
		}
	}
	T_EQ_INT(got, N);
	T_EQ_INT(late, ref_late);
	printf("# %d streams, window %zu%s: %llu late\n", nstreams, window, jitter ? ", jitter" : "",
	       (unsigned long long)late);
	apc_batch_free(&in);
	apc_batch_free(&out);
	apc_reorder_free(ro);
	free(ref);
	free(t);
	free(raw);
}

static void order_few_streams(void) { order_like_a_scan(3, 500, 0); }
static void order_many_streams(void) { order_like_a_scan(200, 3000, 0); }
static void order_with_jitter(void) { order_like_a_scan(5, 100, 1); }

/* Freed while it still holds events of every kind, on every path: the
 * sanitizer build finds any leak. */
static void freed_while_holding(void)
{
	struct apc_reorder *ro = apc_reorder_new(1u << 20);
	uint8_t *raw = malloc(70000);
	struct apc_pc pcs[3];
	char text[64], type[] = "custom_x", title[] = "X";
	struct apc_counter_decl decl = {.id = 9, .type = type, .title = title};
	struct apc_batch in;

	T_ASSERT(ro && raw);
	apc_batch_init(&in, 8);
	for (uint32_t id = 0; id < 3000; id++) {
		/* descending times, 100 streams: runs fill up, then spill */
		make_event(&in, id, 1000000 - (uint64_t)id * 7 + id % 100, raw, pcs, text, &decl);
		T_EQ_INT(apc_reorder_push(ro, &in.ev[0]), APC_OK);
		apc_batch_reset(&in);
	}
	T_EQ_INT(apc_reorder_pending(ro), 3000);
	apc_reorder_free(ro);
	apc_batch_free(&in);
	free(raw);
}

void run_tests(void)
{
	T_RUN(sorts_and_is_stable);
	T_RUN(bounded_and_late);
	T_RUN(payloads_copied);
	T_RUN(annotations_held_cheaply);
	T_RUN(order_few_streams);
	T_RUN(order_many_streams);
	T_RUN(order_with_jitter);
	T_RUN(freed_while_holding);
}
