/*
 * test_perf.c - perf records' times from their events' attributes, and
 * the --begin/--end window's cut of a perf data frame (lib/perf.c).
 */
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "err.h"
#include "frame.h"
#include "packed.h"
#include "perf.h"
#include "t.h"

/* Event key 5: sample_type IDENTIFIER | TIME, sample_id_all; id 1 is
 * one of its instances.  Key 6 has no IDENTIFIER (id 2). */
static void learn(struct apc_perf *p)
{
	uint8_t attr[64] = {0}, ids[32];
	struct apc_msg m;
	size_t n = 0;

	memset(&m, 0, sizeof m);
	m.name = "perf_attr";
	attr[24] = 0x04;
	attr[26] = 0x01; /* sample_type 0x10004 */
	attr[42] = 0x04; /* flags: bit 18, sample_id_all */
	m.f[0] = (struct apc_field){"attr", APC_F_BYTES, 0, attr, sizeof attr};
	m.f[1] = (struct apc_field){"key", APC_F_INT, 5, NULL, 0};
	m.nfields = 2;
	T_EQ_INT(apc_perf_learn(p, &m), APC_OK);
	attr[26] = 0; /* key 6: TIME alone */
	m.f[1].i = 6;
	T_EQ_INT(apc_perf_learn(p, &m), APC_OK);
	n += apc_pack64(ids + n, 1);
	n += apc_pack32(ids + n, 5);
	n += apc_pack64(ids + n, 2);
	n += apc_pack32(ids + n, 6);
	memset(&m, 0, sizeof m);
	m.name = "perf_keys";
	m.f[0] = (struct apc_field){"ids", APC_F_BYTES, 2, ids, (uint32_t)n};
	m.nfields = 1;
	T_EQ_INT(apc_perf_learn(p, &m), APC_OK);
}

/* A record: its header word, then its words, all packed64. */
static void rec(struct apc_buf *b, uint32_t type, int n, const int64_t *w)
{
	apc_buf_reserve(b, 10 * (size_t)(n + 1));
	apc_buf_put_packed64(b, (int64_t)((uint64_t)(8 * (n + 1)) << 48 | type));
	for (int i = 0; i < n; i++)
		apc_buf_put_packed64(b, w[i]);
}

static void sample(struct apc_buf *b, int64_t id, int64_t t)
{
	int64_t w[] = {id, t};
	rec(b, APC_PR_SAMPLE, 2, w);
}

/* A context switch: nothing but the sample id fields (time, id). */
static void sw(struct apc_buf *b, int64_t t)
{
	int64_t w[] = {t, 1};
	rec(b, APC_PR_SWITCH, 2, w);
}

/* A comm: pid/tid, the name, then the sample id fields. */
static void comm(struct apc_buf *b, int64_t t)
{
	int64_t w[] = {7 | (int64_t)7 << 32, 0x78, t, 1};
	rec(b, APC_PR_COMM, 4, w);
}

/* A frame body: chunks of CPUs cpu[i] (the first the frame's, not
 * written), each a little-endian length and its records. */
static void body(struct apc_buf *out, int n, const int32_t *cpu, struct apc_buf *chunk)
{
	for (int i = 0; i < n; i++) {
		uint8_t len[4];
		apc_buf_reserve(out, 14 + chunk[i].len);
		if (i)
			apc_buf_put_packed32(out, cpu[i]);
		apc_le32_put(len, (uint32_t)chunk[i].len);
		apc_buf_put_bytes(out, len, 4);
		apc_buf_put_bytes(out, chunk[i].p, chunk[i].len);
	}
}

static uint64_t lo_, hi_;
static int keep(void *ctx, uint64_t t)
{
	(void)ctx;
	return t >= lo_ && t < hi_;
}

static void frees(struct apc_buf *b, int n)
{
	for (int i = 0; i < n; i++)
		apc_buf_free(&b[i]);
}

static void record_times(void)
{
	struct apc_perf p = {0};
	struct apc_buf c = {0};
	struct apc_frame f;
	struct apc_msg_iter it;
	struct apc_msg m;
	struct apc_err err;
	uint64_t t[4] = {0};
	int got[4];

	learn(&p);
	sample(&c, 1, 1000);
	sw(&c, 1100);
	comm(&c, 1200);
	sample(&c, 2, 1300); /* key 6: no IDENTIFIER, so no id, no time */
	struct apc_buf b = {0};
	int32_t cpu0 = 0;
	body(&b, 1, &cpu0, &c);
	f = (struct apc_frame){0, 0, (uint32_t)b.len, b.p, APC_FRAME_PERF_DATA, 0, 0};
	apc_err_clear(&err);
	apc_msg_iter_init(&it, &f, 3);
	for (int i = 0; i < 4; i++) {
		T_EQ_INT(apc_msg_next(&it, &m, &err), APC_OK);
		got[i] = apc_perf_time(&p, &m, &t[i]);
	}
	T_EQ_INT(apc_msg_next(&it, &m, &err), APC_END);
	T_ASSERT(got[0] && got[1] && got[2] && !got[3]);
	T_EQ_U64(t[0], 1000);
	T_EQ_U64(t[1], 1100);
	T_EQ_U64(t[2], 1200);
	apc_buf_free(&c);
	apc_buf_free(&b);
	apc_perf_free(&p);
}

/* Cut the chunks in[0..n) (CPUs 0, 1, 2) to [lo_, hi_) and want the
 * chunks want[0..n), `cut` records dropped and `kept` kept; the cut's
 * figures in *out.  Frees the chunks. */
static void cut_case(const struct apc_perf *p, int n, struct apc_buf *in, struct apc_buf *want,
		     uint64_t cut, uint64_t kept, struct apc_perf_cut *out)
{
	static const int32_t cpu[3] = {0, 1, 2};
	struct apc_buf b = {0}, w = {0};
	struct apc_perf_cut c = {keep, NULL, 0, 0, 0, 0, 0};

	body(&b, n, cpu, in);
	body(&w, n, cpu, want);
	T_EQ_U64(apc_perf_cut_frame(p, b.p, b.len, 0, &c), w.len);
	T_EQ_MEM(b.p, w.p, w.len);
	T_EQ_U64(c.cut, cut);
	T_EQ_U64(c.kept, kept);
	*out = c;
	frees(in, n);
	frees(want, n);
	apc_buf_free(&b);
	apc_buf_free(&w);
}

static void cut_frame(void)
{
	struct apc_perf p = {0};
	struct apc_buf in[3] = {{0}}, want[3] = {{0}};
	struct apc_perf_cut c;

	learn(&p);
	lo_ = 120;
	hi_ = 350;
	/* CPU 0: samples at 100 and 300 around a comm at 50; CPU 1: a
	 * sample at 150, a switch at 400; CPU 2: no record.  In [120,
	 * 350) the comm stays whatever its time. */
	sample(&in[0], 1, 100);
	comm(&in[0], 50);
	sample(&in[0], 1, 300);
	sample(&in[1], 1, 150);
	sw(&in[1], 400);
	comm(&want[0], 50);
	sample(&want[0], 1, 300);
	sample(&want[1], 1, 150);
	cut_case(&p, 3, in, want, 2, 3, &c);
	/* the comm is outside: it does not widen the span */
	T_ASSERT(c.have && c.lo == 150 && c.hi == 300);

	/* the first chunk emptied: its length 0, the next as before */
	sample(&in[0], 1, 100);
	sw(&in[0], 110);
	sample(&in[1], 1, 200);
	sample(&want[1], 1, 200);
	cut_case(&p, 2, in, want, 2, 1, &c);

	/* everything out: chunks left empty, nothing kept */
	sample(&in[0], 1, 10);
	sample(&in[1], 1, 20);
	cut_case(&p, 2, in, want, 2, 0, &c);
	T_ASSERT(!c.have);
	apc_perf_free(&p);
}

static void cut_leaves_alone(void)
{
	struct apc_perf p = {0};
	struct apc_buf in = {0}, b = {0};
	struct apc_perf_cut c = {keep, NULL, 0, 0, 0, 0, 0};
	int32_t cpu0 = 0;
	uint8_t *copy;

	learn(&p);
	lo_ = 120;
	hi_ = 350;
	sample(&in, 1, 100);
	sample(&in, 1, 200);
	body(&b, 1, &cpu0, &in);
	copy = malloc(b.len);
	T_ASSERT(copy);
	if (!copy)
		return;
	memcpy(copy, b.p, b.len);
	/* without keep: read for the span, not rewritten */
	c.keep = NULL;
	T_EQ_U64(apc_perf_cut_frame(&p, b.p, b.len, 0, &c), b.len);
	T_EQ_MEM(b.p, copy, b.len);
	T_ASSERT(c.have && c.lo == 100 && c.hi == 200 && c.kept == 2 && !c.cut);
	/* a chunk whose length runs past the body does not decode: left
	 * as it is, counted neither way */
	memset(&c, 0, sizeof c);
	c.keep = keep;
	apc_le32_put(b.p, (uint32_t)b.len);
	memcpy(copy, b.p, b.len);
	T_EQ_U64(apc_perf_cut_frame(&p, b.p, b.len, 0, &c), b.len);
	T_EQ_MEM(b.p, copy, b.len);
	T_ASSERT(!c.cut && !c.kept);
	/* a record cut short likewise */
	apc_le32_put(b.p, (uint32_t)in.len);
	T_EQ_U64(apc_perf_cut_frame(&p, b.p, b.len - 1, 0, &c), b.len - 1);
	T_ASSERT(!c.cut && !c.kept);
	free(copy);
	apc_buf_free(&in);
	apc_buf_free(&b);
	apc_perf_free(&p);
}

void run_tests(void)
{
	T_RUN(record_times);
	T_RUN(cut_frame);
	T_RUN(cut_leaves_alone);
}
