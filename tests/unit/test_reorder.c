/*
 * test_reorder.c - the reorder window: sorted, stable for equal times,
 * bounded in what it holds, and exact copies of every payload kind.
 */
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

void run_tests(void)
{
	T_RUN(sorts_and_is_stable);
	T_RUN(bounded_and_late);
	T_RUN(payloads_copied);
	T_RUN(annotations_held_cheaply);
}
