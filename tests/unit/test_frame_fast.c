/*
 * test_frame_fast.c - the fast paths of lib/frame.c against simple
 * references, on random and damaged input:
 * - apc_frame_unpack32/64() against the scalar apc_unpack32/64();
 * - the read-ahead frame reader against exact reads (frames, bodies,
 *   statuses, error messages and offsets), on plain and gzip streams,
 *   and a gzip stream that fails part-way (the frames before the break);
 * - apc_msg_next() against a small table-driven reference decoder
 *   written here from the layouts, message by message and field by
 *   field, and the status and offset of the first error.
 * Every input comes from a seeded generator; a failure prints the seed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "frame.h"
#include "input.h"
#include "packed.h"
#include "t.h"

/* ---- a seeded generator ---------------------------------------------- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* splitmix64 */
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint32_t rnd_below(uint32_t n)
{
	return n ? (uint32_t)(rnd() % n) : 0;
}

/* A value of a random size class, so every encoded length comes up. */
static int64_t rnd_value(void)
{
	int bits = (int)rnd_below(64) + 1;
	int64_t v = (int64_t)(rnd() >> (64 - bits));

	return rnd_below(2) ? -v : v;
}

/* ---- packed integers ---------------------------------------------------- */

/* A byte that is often a continuation byte, a sign byte or zero. */
static uint8_t rnd_packed_byte(void)
{
	switch (rnd_below(6)) {
	case 0: return 0x80 | (uint8_t)rnd_below(128);
	case 1: return 0xff;
	case 2: return 0x7f;
	case 3: return 0x00;
	case 4: return 0x80;
	default: return (uint8_t)rnd();
	}
}

static void check_unpack(const uint8_t *p, size_t n)
{
	int64_t v64 = 0x5a5a, r64 = 0x5a5a;
	int32_t v32 = 0x5a5a, r32 = 0x5a5a;
	int k, rk;

	k = apc_frame_unpack64(p, n, &v64);
	rk = apc_unpack64(p, n, &r64);
	if (k != rk || v64 != r64)
		T_FAIL("unpack64 of %zu bytes %02x %02x...: %d %lld, reference %d %lld", n,
		       n ? p[0] : 0, n > 1 ? p[1] : 0, k, (long long)v64, rk, (long long)r64);
	k = apc_frame_unpack32(p, n, &v32);
	rk = apc_unpack32(p, n, &r32);
	if (k != rk || v32 != r32)
		T_FAIL("unpack32 of %zu bytes %02x %02x...: %d %ld, reference %d %ld", n,
		       n ? p[0] : 0, n > 1 ? p[1] : 0, k, (long)v32, rk, (long)r32);
}

static void test_unpack_matches_reference(void)
{
	uint8_t b[16];

	/* every 1- and 2-byte input, at every length that cuts it */
	for (unsigned x = 0; x < 65536; x++) {
		b[0] = (uint8_t)x;
		b[1] = (uint8_t)(x >> 8);
		for (size_t n = 0; n <= 2; n++)
			check_unpack(b, n);
	}
	/* random inputs up to 12 bytes, every prefix length, and the
	 * encodings of random values, minimal and padded */
	rng_state = 1;
	for (int i = 0; i < 200000 && !t_failed_now; i++) {
		size_t n = rnd_below(13);
		for (size_t j = 0; j < n; j++)
			b[j] = rnd_packed_byte();
		for (size_t m = 0; m <= n; m++)
			check_unpack(b, m);
	}
	for (int i = 0; i < 200000 && !t_failed_now; i++) {
		int64_t v = rnd_value();
		size_t n = apc_pack64(b, v);
		if (rnd_below(4) == 0 && n < 10) { /* non-minimal: one more sign byte */
			b[n - 1] |= 0x80;
			b[n++] = (v < 0) ? 0x7f : 0x00;
		}
		for (size_t m = 0; m <= n; m++)
			check_unpack(b, m);
	}
}

/* ---- the read-ahead frame reader --------------------------------------- */

/* A data file of random frames, some damaged at the end. */
static size_t gen_data_file(uint8_t *out, size_t cap)
{
	size_t n = 0;
	unsigned frames = rnd_below(60);

	for (unsigned i = 0; i < frames; i++) {
		uint32_t len = rnd_below(8) == 0 ? rnd_below(3000) : rnd_below(40);
		if (n + 4 + len > cap)
			break;
		for (int k = 0; k < 4; k++)
			out[n++] = (uint8_t)(len >> (8 * k));
		for (uint32_t j = 0; j < len; j++)
			out[n++] = (uint8_t)(j == 0 ? rnd_below(17) : j == 1 ? rnd_below(5) : rnd());
	}
	switch (rnd_below(6)) {
	case 0: /* cut anywhere */
		n = rnd_below((uint32_t)n + 1);
		break;
	case 1: { /* an impossible length word */
		static const uint32_t bad[] = {0x80000000u, 0xffffffffu, (64u << 20) + 1, 1000000};
		uint32_t w = bad[rnd_below(4)];
		if (n + 8 <= cap) {
			for (int k = 0; k < 4; k++)
				out[n++] = (uint8_t)(w >> (8 * k));
			out[n++] = 1;
		}
		break;
	}
	case 2: /* a cut-short length word */
		if (n + 3 <= cap)
			for (unsigned k = rnd_below(4); k > 0; k--)
				out[n++] = 7;
		break;
	default:
		break;
	}
	return n;
}

static size_t gzip_of(const uint8_t *in, size_t n, uint8_t *out, size_t cap)
{
	z_stream z;
	size_t len;

	memset(&z, 0, sizeof z);
	if (deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return 0;
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)n;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	if (deflate(&z, Z_FINISH) != Z_STREAM_END) {
		deflateEnd(&z);
		return 0;
	}
	len = z.total_out;
	deflateEnd(&z);
	return len;
}

struct rd_result {
	int rc;
	uint64_t nframes;
	struct apc_err err;
};

/* Read every frame of `path` (in the memory set), exact or with read-ahead. */
static void read_all(const char *path, size_t block, struct apc_frame *frames, uint8_t **bodies,
		     size_t max, struct rd_result *r)
{
	struct apc_stream *s;
	struct apc_frame_reader *fr;
	struct apc_frame f;

	memset(r, 0, sizeof *r);
	apc_err_clear(&r->err);
	if (apc_stream_open_path(path, &s, &r->err) < 0) {
		r->rc = -100;
		return;
	}
	if (apc_frame_reader_new(s, &fr, &r->err) < 0) {
		apc_stream_close(s);
		r->rc = -101;
		return;
	}
	if (block)
		T_EQ_INT(apc_frame_reader_readahead(fr, block), APC_OK);
	while ((r->rc = apc_frame_read(fr, &f, &r->err)) == APC_OK) {
		if (r->nframes < max) {
			frames[r->nframes] = f;
			bodies[r->nframes] = malloc(f.len + 1);
			memcpy(bodies[r->nframes], f.body, f.len);
		}
		r->nframes++;
	}
	/* once at the end, the reader stays there */
	if (r->rc == APC_END)
		T_EQ_INT(apc_frame_read(fr, &f, &r->err), APC_END);
	apc_frame_reader_free(fr);
	apc_stream_close(s);
}

#define RD_MAX 128

/*
 * Frames, statuses and errors of both readers.  `exact` 0: a gzip
 * stream that breaks part-way, where zlib's output before the break
 * depends on how it was asked for (see frame.h): the frames both give
 * must agree, and both must fail.
 */
static void compare_readers(const char *path, size_t block, uint64_t seed, int exact)
{
	static struct apc_frame fa[RD_MAX], fb[RD_MAX];
	static uint8_t *ba[RD_MAX], *bb[RD_MAX];
	struct rd_result ra, rb;

	read_all(path, 0, fa, ba, RD_MAX, &ra);
	read_all(path, block, fb, bb, RD_MAX, &rb);
	if (!exact && (ra.rc >= 0) != (rb.rc >= 0))
		T_FAIL("seed %llu %s block %zu: status %d, exact reads %d", (unsigned long long)seed,
		       path, block, rb.rc, ra.rc);
	if (exact && (ra.rc != rb.rc || ra.nframes != rb.nframes))
		T_FAIL("seed %llu %s block %zu: status %d after %llu frames, exact reads %d after %llu",
		       (unsigned long long)seed, path, block, rb.rc, (unsigned long long)rb.nframes,
		       ra.rc, (unsigned long long)ra.nframes);
	if (exact && ra.rc < 0 && rb.rc == ra.rc &&
	    (ra.err.status != rb.err.status || ra.err.offset != rb.err.offset ||
	     ra.err.index != rb.err.index || strcmp(ra.err.file, rb.err.file) != 0 ||
	     strcmp(ra.err.msg, rb.err.msg) != 0))
		T_FAIL("seed %llu %s block %zu: error \"%s\" @%lld, exact reads \"%s\" @%lld",
		       (unsigned long long)seed, path, block, rb.err.msg, (long long)rb.err.offset,
		       ra.err.msg, (long long)ra.err.offset);
	for (uint64_t i = 0; i < ra.nframes && i < rb.nframes && i < RD_MAX; i++) {
		const struct apc_frame *x = &fa[i], *y = &fb[i];
		if (x->index != y->index || x->offset != y->offset || x->len != y->len ||
		    x->type != y->type || x->core != y->core || x->hdr_len != y->hdr_len ||
		    memcmp(ba[i], bb[i], x->len) != 0) {
			T_FAIL("seed %llu %s block %zu: frame %llu differs", (unsigned long long)seed,
			       path, block, (unsigned long long)i);
			break;
		}
	}
	for (uint64_t i = 0; i < RD_MAX; i++) {
		if (i < ra.nframes)
			free(ba[i]);
		if (i < rb.nframes)
			free(bb[i]);
	}
}

static void test_readahead_matches_exact_reads(void)
{
	static uint8_t data[200000], gz[220000];
	static const size_t blocks[] = {1, 3, 64, 4096, 1u << 20};

	for (uint64_t seed = 1; seed <= 400 && !t_failed_now; seed++) {
		size_t n, zn, bn;
		struct apc_mem_file files[3];

		rng_state = seed * 7919;
		n = gen_data_file(data, sizeof data);
		zn = gzip_of(data, n, gz, sizeof gz / 2);
		T_ASSERT(zn > 0);
		/* a second copy of the gzip stream, broken part-way: the
		 * stream gives some bytes, then fails */
		memcpy(gz + sizeof gz / 2, gz, zn);
		bn = zn;
		if (zn > 30) {
			size_t at = 20 + rnd_below((uint32_t)zn - 30);
			if (rnd_below(2))
				memset(gz + sizeof gz / 2 + at, 0xff, zn - at > 8 ? 8 : zn - at);
			else
				bn = at; /* ends early */
		}
		files[0] = (struct apc_mem_file){"plain", data, n};
		files[1] = (struct apc_mem_file){"zipped", gz, zn};
		files[2] = (struct apc_mem_file){"broken", gz + sizeof gz / 2, bn};
		apc_input_mem_set(files, 3);
		for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; b++) {
			compare_readers("plain", blocks[b], seed, 1);
			compare_readers("zipped", blocks[b], seed, 1);
			compare_readers("broken", blocks[b], seed, 0);
		}
		apc_input_mem_set(NULL, 0);
	}
}

static void test_readahead_only_before_the_first_frame(void)
{
	static const uint8_t data[] = {1, 0, 0, 0, 4, 2, 0, 0, 0, 9, 9};
	struct apc_mem_file file = {"d", data, sizeof data};
	struct apc_stream *s;
	struct apc_frame_reader *fr;
	struct apc_frame f;
	struct apc_err e;

	apc_input_mem_set(&file, 1);
	T_EQ_INT(apc_stream_open_path("d", &s, &e), APC_OK);
	T_EQ_INT(apc_frame_reader_new(s, &fr, &e), APC_OK);
	T_EQ_INT(apc_frame_reader_readahead(fr, 4096), APC_OK);
	T_EQ_INT(apc_frame_read(fr, &f, &e), APC_OK);
	T_EQ_INT(f.type, APC_FRAME_COUNTER);
	T_EQ_INT(apc_frame_reader_readahead(fr, 8), APC_EIO);
	T_EQ_INT(apc_frame_read(fr, &f, &e), APC_OK);
	T_EQ_INT(f.len, 2);
	T_EQ_INT(f.offset, 5);
	T_EQ_INT(apc_frame_read(fr, &f, &e), APC_END);
	apc_frame_reader_free(fr);
	apc_stream_close(s);
	apc_input_mem_set(NULL, 0);
}

/* ---- the reference message decoder ------------------------------------ */

/*
 * Layouts of the fixed messages: one op per field.  t: packed64
 * timestamp (no field); i/x: packed32 int/hex field; c: packed32 core
 * field that is also the message's core; I: packed64 int field; s: APC
 * string; z: NUL-terminated string.
 */
struct ref_layout {
	int type, code;
	const char *name, *ops;
	const char *fields[6];
};

static const struct ref_layout ref_layouts[] = {
	{3, 1, "cookie_name", "is", {"cookie", "name"}},
	{3, 2, "thread_name", "tis", {"tid", "name"}},
	{4, -1, "counter", "tcxI", {"core", "key", "value"}},
	{7, 1, "sched_switch", "tii", {"tid", "state"}},
	{7, 2, "thread_exit", "ti", {"tid"}},
	{9, -1, "idle", "itc", {"state", "core"}},
	{13, 1, "link", "tiii", {"cookie", "pid", "tid"}},
	{13, 2, "activity_switch", "tcxiii", {"core", "key", "activity", "tid", "wait_state"}},
	{13, 3, "task_exit", "ti", {"tid"}},
	{1, 3, "core_name", "ixs", {"core", "cpuid", "name"}},
	{11, 3, "perf_format", "z", {"format"}},
	{11, 4, "perf_maps", "iiz", {"pid", "tid", "maps"}},
	{11, 5, "proc", "iizz", {"pid", "tid", "image", "comm"}},
	{11, 7, "online_cpu", "tc", {"cpu"}},
	{11, 8, "offline_cpu", "tc", {"cpu"}},
	{11, 9, "kallsyms", "z", {"kallsyms"}},
	{11, 11, "header_page", "z", {"text"}},
	{11, 12, "header_event", "z", {"text"}},
	{11, 13, "metric_event_key", "xxxi", {"metric_key", "event_code", "event_key", "event_type"}},
};

struct ref {
	const struct apc_frame *f;
	size_t pos;
	int clocks;      /* Summary clocks, 0 unknown */
	int bc_state;    /* 0, 2 in a perf counter run, 3 Summary attributes continue */
	int32_t bc_core, bc_pid;
	int64_t bc_ts;
	int bc_have_ts;
	size_t perf_end; /* frame 12: where the current chunk ends */
	int64_t err_off; /* file offset of the failure */
};

static int ref_fail(struct ref *r, size_t pos)
{
	r->err_off = (int64_t)(r->f->offset + 4 + pos);
	return APC_EDATA;
}

static int ref_p32(struct ref *r, int32_t *v)
{
	int k = apc_unpack32(r->f->body + r->pos, r->f->len - r->pos, v);
	if (k <= 0)
		return ref_fail(r, r->pos);
	r->pos += (size_t)k;
	return APC_OK;
}

static int ref_p64(struct ref *r, int64_t *v)
{
	int k = apc_unpack64(r->f->body + r->pos, r->f->len - r->pos, v);
	if (k <= 0)
		return ref_fail(r, r->pos);
	r->pos += (size_t)k;
	return APC_OK;
}

static void ref_field(struct apc_msg *m, const char *name, int kind, int64_t i, const uint8_t *s,
		      uint32_t len)
{
	if (m->nfields < APC_MSG_MAX_FIELDS)
		m->f[m->nfields++] = (struct apc_field){name, (uint8_t)kind, i, s, len};
}

static int ref_str(struct ref *r, const uint8_t **s, uint32_t *len)
{
	size_t at = r->pos;
	int32_t n;

	if (ref_p32(r, &n))
		return APC_EDATA;
	if (n < 0 || (size_t)n > r->f->len - r->pos)
		return ref_fail(r, at);
	*s = r->f->body + r->pos;
	*len = (uint32_t)n;
	r->pos += (size_t)n;
	return APC_OK;
}

static int ref_ops(struct ref *r, struct apc_msg *m, const char *ops, const char *const *names)
{
	for (; *ops; ops++) {
		/* 't' has no name: read one only for the ops that make a field */
		const char *name = *ops == 't' ? NULL : *names;
		int32_t v32;
		int64_t v64;
		const uint8_t *s, *nul;
		uint32_t len;

		switch (*ops) {
		case 't':
			if (ref_p64(r, &m->ts))
				return APC_EDATA;
			m->has_ts = 1;
			continue; /* no field, no name used */
		case 'i':
		case 'x':
		case 'c':
			if (ref_p32(r, &v32))
				return APC_EDATA;
			ref_field(m, name, *ops == 'x' ? APC_F_HEX : APC_F_INT, v32, NULL, 0);
			if (*ops == 'c')
				m->core = v32;
			break;
		case 'I':
			if (ref_p64(r, &v64))
				return APC_EDATA;
			ref_field(m, name, APC_F_INT, v64, NULL, 0);
			break;
		case 's':
			if (ref_str(r, &s, &len))
				return APC_EDATA;
			ref_field(m, name, APC_F_STR, 0, s, len);
			break;
		case 'z':
			s = r->f->body + r->pos;
			nul = memchr(s, 0, r->f->len - r->pos);
			if (!nul)
				return ref_fail(r, r->pos);
			ref_field(m, name, APC_F_STR, 0, s, (uint32_t)(nul - s));
			r->pos += (size_t)(nul - s) + 1;
			break;
		}
		names++;
	}
	return APC_OK;
}

/* Summary attributes: pairs up to an empty key, split when the message is full. */
static int ref_attrs(struct ref *r, struct apc_msg *m)
{
	for (;;) {
		const uint8_t *k, *v;
		uint32_t kl, vl;
		size_t at = r->pos;

		if (ref_str(r, &k, &kl))
			return APC_EDATA;
		if (kl == 0) {
			r->bc_state = 0;
			return APC_OK;
		}
		if (m->nfields + 2 > APC_MSG_MAX_FIELDS) {
			r->pos = at;
			r->bc_state = 3;
			return APC_OK;
		}
		if (ref_str(r, &v, &vl))
			return APC_EDATA;
		ref_field(m, "attr_key", APC_F_STR, 0, k, kl);
		ref_field(m, "attr_value", APC_F_STR, 0, v, vl);
	}
}

static int ref_summary(struct ref *r, struct apc_msg *m, int clocks)
{
	static const char *const clock_names[] = {"timestamp", "uptime", "monotonic_delta",
						  "clock4"};
	const uint8_t *s;
	uint32_t len;
	int64_t v;

	if (ref_str(r, &s, &len))
		return APC_EDATA;
	ref_field(m, "canary", APC_F_STR, 0, s, len);
	for (int i = 0; i < clocks; i++) {
		if (ref_p64(r, &v))
			return APC_EDATA;
		ref_field(m, clock_names[i], APC_F_INT, v, NULL, 0);
	}
	return ref_attrs(r, m);
}

static const struct ref_layout *ref_find(int type, int code)
{
	for (size_t i = 0; i < sizeof ref_layouts / sizeof ref_layouts[0]; i++)
		if (ref_layouts[i].type == type && ref_layouts[i].code == code)
			return &ref_layouts[i];
	return NULL;
}

/* One message of frame f at r->pos (not Annotate); 1: framing only, go on. */
static int ref_one(struct ref *r, struct apc_msg *m)
{
	const struct apc_frame *f = r->f;
	const struct ref_layout *l;
	size_t at = r->pos;
	int32_t code = -1, n;
	int64_t v;

	switch (f->type) {
	case 4:
	case 9:
		l = ref_find(f->type, -1);
		m->name = l->name;
		return ref_ops(r, m, l->ops, l->fields);
	case 2: {
		size_t start;
		int64_t pairs = 0;
		m->name = "backtrace";
		if (ref_ops(r, m, "tiii", (const char *const[]){"cookie", "pid", "tid"}))
			return APC_EDATA;
		start = r->pos;
		for (;;) {
			size_t here = r->pos;
			if (ref_p32(r, &n))
				return APC_EDATA;
			if (n == 1) {
				ref_field(m, "frames", APC_F_PAIRS, pairs, f->body + start,
					  (uint32_t)(here - start));
				return APC_OK;
			}
			if (ref_p64(r, &v))
				return APC_EDATA;
			pairs++;
		}
	}
	case 5:
		while (r->pos < f->len) {
			size_t here = r->pos;
			int32_t key;
			if (ref_p32(r, &key) || ref_p64(r, &v))
				return APC_EDATA;
			if (key == 0) {
				r->bc_ts = v;
				r->bc_have_ts = 1;
				r->bc_pid = 0;
			} else if (key == 1 || key == 2) {
				if (v < INT32_MIN || v > INT32_MAX)
					return ref_fail(r, here);
				if (key == 1)
					r->bc_pid = (int32_t)v;
				else
					r->bc_core = (int32_t)v;
			} else {
				m->name = "block_counter";
				m->offset = f->offset + 4 + here;
				m->has_ts = r->bc_have_ts;
				m->ts = r->bc_ts;
				m->core = r->bc_core;
				ref_field(m, "core", APC_F_INT, r->bc_core, NULL, 0);
				ref_field(m, "pid", APC_F_INT, r->bc_pid, NULL, 0);
				ref_field(m, "key", APC_F_HEX, key, NULL, 0);
				ref_field(m, "value", APC_F_INT, v, NULL, 0);
				return APC_OK;
			}
		}
		return APC_END;
	case 10:
		m->core = -1;
		if (ref_p32(r, &n))
			return APC_EDATA;
		if (n == -1) {
			m->name = "external_disconnect";
			return ref_ops(r, m, "i", (const char *const[]){"fd"});
		}
		m->name = "external";
		ref_field(m, "fd", APC_F_INT, n, NULL, 0);
		ref_field(m, "data", APC_F_BYTES, 0, f->body + r->pos, (uint32_t)(f->len - r->pos));
		r->pos = f->len;
		return APC_OK;
	case 14: {
		const uint8_t *d;
		uint32_t len;
		m->name = "perf_aux";
		if (ref_ops(r, m, "I", (const char *const[]){"tail"}) || ref_str(r, &d, &len))
			return APC_EDATA;
		ref_field(m, "data", APC_F_BYTES, 0, d, len);
		return APC_OK;
	}
	case 15:
		m->name = "perf_sync";
		return ref_ops(r, m, "iiIII",
			       (const char *const[]){"pid", "tid", "freq", "monotonic_raw", "vcnt"});
	default:
		break;
	}
	/* coded frames: 1, 3, 7, 11, 13 */
	if (f->type == 11 && r->bc_state == 2) {
		int32_t core;
		if (ref_p32(r, &core))
			return APC_EDATA;
		if (core == -1) {
			r->bc_state = 0;
			return 1;
		}
		m->name = "perf_counter";
		m->code = 10;
		m->has_ts = 1;
		m->ts = r->bc_ts;
		m->core = core;
		ref_field(m, "core", APC_F_INT, core, NULL, 0);
		return ref_ops(r, m, "xI", (const char *const[]){"key", "value"});
	}
	if (f->type == 1 && r->bc_state == 3) {
		m->name = "summary_attrs";
		return ref_attrs(r, m);
	}
	if (ref_p32(r, &code))
		return APC_EDATA;
	m->code = code;
	if (f->type == 1) {
		m->core = -1;
		if (code == 1) {
			size_t body = r->pos;
			int rc;
			m->name = "summary";
			if (r->clocks)
				return ref_summary(r, m, r->clocks);
			/* three clocks when they parse and what follows is
			 * the end or a core name (code 3); else four when
			 * they parse; else three again */
			rc = ref_summary(r, m, 3);
			int three = rc == APC_OK;
			if (three) {
				size_t after = r->pos;
				int32_t next = 3;
				if (r->pos < f->len && ref_p32(r, &next))
					next = -1;
				r->pos = after;
				if (next == 3) {
					r->clocks = 3;
					return APC_OK;
				}
			}
			r->pos = body;
			m->nfields = 0;
			rc = ref_summary(r, m, 4);
			if (rc == APC_OK) {
				r->clocks = 4;
				return APC_OK;
			}
			if (three) {
				r->pos = body;
				m->nfields = 0;
				rc = ref_summary(r, m, 3);
				r->clocks = 3;
			}
			return rc;
		}
	}
	if (f->type == 11) {
		const uint8_t *p = f->body + r->pos;
		size_t left = f->len - r->pos;
		uint32_t size;
		size_t start;
		switch (code) {
		case 1:
			m->name = "perf_attr";
			if (left < 8)
				return ref_fail(r, r->pos);
			size = (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 |
			       (uint32_t)p[7] << 24;
			if (size < 8 || size > left)
				return ref_fail(r, r->pos);
			ref_field(m, "attr_type", APC_F_INT,
				  (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
					  (uint32_t)p[3] << 24, NULL, 0);
			if (size >= 16) {
				uint64_t cfg = 0;
				for (int i = 7; i >= 0; i--)
					cfg = cfg << 8 | p[8 + i];
				ref_field(m, "config", APC_F_HEX, (int64_t)cfg, NULL, 0);
			}
			ref_field(m, "attr", APC_F_BYTES, 0, p, size);
			r->pos += size;
			return ref_ops(r, m, "x", (const char *const[]){"key"});
		case 2:
			m->name = "perf_keys";
			if (ref_ops(r, m, "i", (const char *const[]){"count"}))
				return APC_EDATA;
			n = (int32_t)m->f[m->nfields - 1].i;
			if (n < 0)
				return ref_fail(r, at);
			start = r->pos;
			for (int32_t i = 0; i < n; i++) {
				int32_t key;
				if (ref_p64(r, &v) || ref_p32(r, &key))
					return APC_EDATA;
			}
			ref_field(m, "ids", APC_F_BYTES, n, f->body + start, (uint32_t)(r->pos - start));
			return APC_OK;
		case 6:
			m->name = "perf_keys_old";
			if (ref_ops(r, m, "i", (const char *const[]){"count"}))
				return APC_EDATA;
			n = (int32_t)m->f[m->nfields - 1].i;
			for (int32_t i = 0; i < n; i++)
				if (ref_p32(r, &code))
					return APC_EDATA;
			ref_field(m, "data", APC_F_BYTES, 0, f->body + r->pos,
				  (uint32_t)(f->len - r->pos));
			r->pos = f->len;
			return APC_OK;
		case 10:
			if (ref_p64(r, &r->bc_ts))
				return APC_EDATA;
			r->bc_state = 2;
			return 1;
		case 14: { /* packed32 length, then the bytes */
			int32_t len;
			size_t lat = r->pos; /* a bad length fails at its start */
			m->name = "kernel_build_id";
			if (ref_p32(r, &len))
				return APC_EDATA;
			if (len < 0 || (size_t)len > f->len - r->pos)
				return ref_fail(r, lat);
			ref_field(m, "build_id", APC_F_BYTES, 0, f->body + r->pos, (uint32_t)len);
			r->pos += (size_t)len;
			return APC_OK;
		}
		default:
			break;
		}
	}
	l = ref_find(f->type, code);
	if (!l)
		return ref_fail(r, at);
	m->name = l->name;
	return ref_ops(r, m, l->ops, l->fields);
}

/* Annotate frames (type 6) have a size-prefixed payload: decoded here. */
static int ref_annotate(struct ref *r, struct apc_msg *m)
{
	int32_t size;

	m->name = "annotate";
	if (ref_ops(r, m, "cit", (const char *const[]){"core", "tid"}) || ref_p32(r, &size))
		return APC_EDATA;
	if (size < 0 || (size_t)size > r->f->len - r->pos)
		return ref_fail(r, r->pos);
	ref_field(m, "data", APC_F_BYTES, 0, r->f->body + r->pos, (uint32_t)size);
	r->pos += (size_t)size;
	return APC_OK;
}

/* Perf record types 1-21 by name (linux/perf_event.h), in order. */
static const char ref_perf_names[] =
	" mmap lost comm exit throttle unthrottle fork read sample mmap2 aux_record itrace_start"
	" lost_samples switch switch_cpu_wide namespaces ksymbol bpf_event cgroup text_poke"
	" aux_output_hw_id";

/* "perf_" and the record type's name, or NULL past the list. */
static const char *ref_perf_name(uint32_t type)
{
	static char names[32][32];
	const char *p = ref_perf_names;

	if (type == 0 || type >= 32)
		return NULL;
	for (uint32_t k = 1; k < type; k++) {
		p = strchr(p + 1, ' ');
		if (!p)
			return NULL;
	}
	size_t n = strcspn(p + 1, " ");
	snprintf(names[type], sizeof names[type], "perf_%.*s", (int)n, p + 1);
	return names[type];
}

/* 12: chunks (4-byte little-endian length; then a packed32 CPU before
 * each one after the first) of records: a header word, then the words
 * its size (top 16 bits) rounds up to, each a packed64 in the chunk. */
static int ref_perf(struct ref *r, struct apc_msg *m)
{
	const struct apc_frame *f = r->f;
	const uint8_t *b = f->body;
	int64_t h, w;
	size_t start;

	if (r->pos == f->hdr_len || r->pos == r->perf_end) {
		if (r->pos != f->hdr_len && ref_p32(r, &r->bc_core))
			return APC_EDATA;
		if (f->len - r->pos < 4)
			return ref_fail(r, r->pos);
		uint32_t n = b[r->pos] + 256u * (b[r->pos + 1] + 256u * (b[r->pos + 2] + 256u * b[r->pos + 3]));
		if (n > f->len - r->pos - 4)
			return ref_fail(r, r->pos);
		r->pos += 4;
		r->perf_end = r->pos + n;
		return 1;
	}
	m->core = r->bc_core;
	int k = apc_unpack64(b + r->pos, r->perf_end - r->pos, &h);
	if (k <= 0)
		return ref_fail(r, r->pos);
	r->pos += (size_t)k;
	uint32_t type = (uint32_t)((uint64_t)h & 0xffffffffu);
	uint32_t size = (uint32_t)((uint64_t)h >> 48);
	const char *name = ref_perf_name(type);
	m->name = name ? name : "perf_record";
	m->code = type > INT32_MAX ? -1 : (int)type;
	if (!name)
		ref_field(m, "record_type", APC_F_INT, type, NULL, 0);
	ref_field(m, "misc", APC_F_HEX, (int64_t)(((uint64_t)h >> 32) & 0xffff), NULL, 0);
	ref_field(m, "size", APC_F_INT, size, NULL, 0);
	start = r->pos;
	int64_t nw = 0;
	while (nw * 8 + 8 < size) {
		k = apc_unpack64(b + r->pos, r->perf_end - r->pos, &w);
		if (k <= 0)
			return ref_fail(r, r->pos);
		r->pos += (size_t)k;
		nw++;
	}
	ref_field(m, "words", APC_F_WORDS, nw, b + start, (uint32_t)(r->pos - start));
	return APC_OK;
}

static void ref_reset(struct apc_msg *m, const struct apc_frame *f)
{
	memset(m, 0, sizeof *m);
	m->frame_type = f->type;
	m->code = -1;
	m->core = f->core;
}

static int ref_opaque(int type, int clocks)
{
	if (type == 11)
		return clocks != 3 && clocks != 4; /* gatord 6.8 and 9.x decode alike */
	return !apc_frame_type_known(type);
}

/*
 * Decode frame f into msgs[] (at most max); the status that ended it
 * (APC_END or APC_EDATA with *err_off).  clocks as for apc_msg_iter_init().
 */
static int ref_decode(const struct apc_frame *f, int clocks, struct apc_msg *msgs, size_t max,
		      size_t *count, int64_t *err_off)
{
	struct ref r = {.f = f, .pos = f->hdr_len, .clocks = clocks, .bc_core = f->core};
	int rc;

	*count = 0;
	if (f->len == 0)
		return APC_END;
	if (f->type < 0 && f->hdr_len == 0) { /* a code that reads, negative too, is a type */
		*err_off = (int64_t)f->offset + 4;
		return APC_EDATA;
	}
	if (apc_frame_has_core(f->type) && f->core < 0) {
		*err_off = (int64_t)(f->offset + 4 + f->hdr_len);
		return APC_EDATA;
	}
	if (ref_opaque(f->type, clocks)) {
		struct apc_msg *m = &msgs[(*count)++];
		ref_reset(m, f);
		m->name = "opaque";
		m->offset = f->offset + 4 + r.pos;
		ref_field(m, "data", APC_F_BYTES, 0, f->body + r.pos, (uint32_t)(f->len - r.pos));
		return APC_END;
	}
	while (*count < max) {
		struct apc_msg *m = &msgs[*count];

		ref_reset(m, f);
		if (f->type == 10 ? (r.pos > f->hdr_len || r.pos >= f->len) : r.pos >= f->len)
			return APC_END;
		m->offset = f->offset + 4 + r.pos;
		rc = f->type == 6 ? ref_annotate(&r, m) : f->type == 12 ? ref_perf(&r, m) : ref_one(&r, m);
		if (rc == 1)
			continue;
		if (rc == APC_END)
			return APC_END;
		if (rc < 0) {
			*err_off = r.err_off;
			return rc;
		}
		(*count)++;
	}
	return APC_END;
}

/* ---- random frames ------------------------------------------------------ */

static void put32(struct apc_buf *b, int32_t v)
{
	apc_buf_reserve(b, 10);
	if (rnd_below(40) == 0) { /* a non-minimal encoding now and then */
		uint8_t t[10];
		size_t n = apc_pack64(t, v);
		if (n < 5) {
			t[n - 1] |= 0x80;
			t[n++] = v < 0 ? 0x7f : 0x00;
		}
		apc_buf_put_bytes(b, t, n);
		return;
	}
	apc_buf_put_packed32(b, v);
}

static void put64(struct apc_buf *b, int64_t v)
{
	apc_buf_reserve(b, 10);
	apc_buf_put_packed64(b, v);
}

static void put_str(struct apc_buf *b, const char *s)
{
	apc_buf_reserve(b, 16);
	apc_buf_put_string(b, s, strlen(s));
}

static int32_t small(void)
{
	return rnd_below(10) == 0 ? (int32_t)rnd_value() : (int32_t)rnd_below(20);
}

/* A frame body of type t: plausible messages, sometimes noise. */
static void gen_body(struct apc_buf *b, int t)
{
	static const int types_with_core[] = {2, 3, 5, 7, 11, 12, 14, 15};
	unsigned msgs = 1 + rnd_below(5);

	put32(b, t);
	for (size_t i = 0; i < sizeof types_with_core / sizeof types_with_core[0]; i++)
		if (types_with_core[i] == t)
			put32(b, small());
	for (unsigned i = 0; i < msgs; i++) {
		int code = (int)rnd_below(14);
		switch (t) {
		case 1:
			if (rnd_below(2)) {
				put32(b, 1);
				put_str(b, APC_NEWLINE_CANARY);
				for (unsigned k = 3 + rnd_below(2); k > 0; k--)
					put64(b, rnd_value());
				for (unsigned k = rnd_below(3) ? rnd_below(4) : 40; k > 0; k--) {
					put_str(b, "key");
					put_str(b, "value");
				}
				put_str(b, "");
			} else {
				put32(b, 3);
				put32(b, small());
				put32(b, (int32_t)rnd());
				put_str(b, "Cortex-A53");
			}
			break;
		case 2:
			put64(b, rnd_value());
			for (int k = 0; k < 3; k++)
				put32(b, small());
			for (unsigned k = rnd_below(4); k > 0; k--) {
				put32(b, 2 + (int32_t)rnd_below(100));
				put64(b, rnd_value());
			}
			put32(b, 1);
			break;
		case 5:
			put32(b, 0);
			put64(b, rnd_value());
			for (unsigned k = rnd_below(5); k > 0; k--) {
				int32_t key = rnd_below(4) == 0 ? (int32_t)rnd_below(3) : small();
				put32(b, key);
				put64(b, rnd_below(20) ? (int64_t)rnd_below(8) : rnd_value());
			}
			break;
		case 6: {
			int32_t size = (int32_t)rnd_below(6);
			put32(b, small());
			put32(b, small());
			put64(b, rnd_value());
			put32(b, rnd_below(20) ? size : size + 50);
			apc_buf_reserve(b, (size_t)size);
			for (int32_t k = 0; k < size; k++)
				b->p[b->len++] = (uint8_t)rnd();
			break;
		}
		case 10:
			put32(b, rnd_below(5) ? small() : -1);
			put_str(b, "ANNOTATE 4\n");
			return;
		case 12: { /* a chunk of records; a CPU before each after the first */
			struct apc_buf c = {0};
			if (i)
				put32(b, small());
			for (unsigned k = rnd_below(4); k > 0; k--) {
				uint64_t size = rnd_below(8) ? 8 * (1 + rnd_below(6)) : rnd_below(60);
				uint64_t type = rnd_below(10) ? rnd_below(24) : rnd();
				put64(&c, (int64_t)((type & 0xffffffffu) | (uint64_t)rnd_below(3) << 32 | size << 48));
				for (uint64_t w = 8; w < size; w += 8)
					put64(&c, rnd_below(3) ? (int64_t)rnd_below(300) : (int64_t)rnd());
			}
			uint32_t n = (uint32_t)c.len;
			if (rnd_below(15) == 0)
				n += rnd_below(3) ? 1 : (uint32_t)-1;
			apc_buf_reserve(b, 4 + c.len);
			for (int k = 0; k < 4; k++)
				b->p[b->len++] = (uint8_t)(n >> (8 * k));
			apc_buf_put_bytes(b, c.p, c.len);
			apc_buf_free(&c);
			break;
		}
		case 14:
			put64(b, rnd_value());
			put_str(b, rnd_below(2) ? "spe" : "");
			break;
		case 15:
			put32(b, small());
			put32(b, small());
			for (int k = 0; k < 3; k++)
				put64(b, rnd_value());
			break;
		case 11:
			code = 1 + (int)rnd_below(12);
			put32(b, code);
			if (code == 1) {
				uint8_t attr[24] = {1, 0, 0, 0, 24, 0, 0, 0, 7};
				apc_buf_reserve(b, sizeof attr);
				apc_buf_put_bytes(b, attr, sizeof attr);
				put32(b, small());
			} else if (code == 2 || code == 6) {
				put32(b, 2);
				for (int k = 0; k < 2; k++) {
					if (code == 2)
						put64(b, rnd_value());
					put32(b, small());
				}
			} else if (code == 10) {
				put64(b, rnd_value());
				for (unsigned k = rnd_below(3); k > 0; k--) {
					put32(b, small());
					put32(b, small());
					put64(b, rnd_value());
				}
				put32(b, -1);
			} else {
				if (code == 7 || code == 8)
					put64(b, rnd_value());
				for (unsigned k = rnd_below(3); k > 0; k--)
					put32(b, small());
				apc_buf_reserve(b, 8);
				apc_buf_put_bytes(b, "text", 5);
			}
			break;
		default: /* the fixed layouts, by their ops */
			for (size_t li = 0; li < sizeof ref_layouts / sizeof ref_layouts[0]; li++) {
				const struct ref_layout *l = &ref_layouts[(li + (size_t)code) %
									 (sizeof ref_layouts / sizeof ref_layouts[0])];
				if (l->type != t)
					continue;
				if (l->code >= 0)
					put32(b, rnd_below(30) ? l->code : code);
				for (const char *op = l->ops; *op; op++) {
					if (*op == 't' || *op == 'I')
						put64(b, rnd_value());
					else if (*op == 's')
						put_str(b, "name");
					else if (*op == 'z') {
						apc_buf_reserve(b, 8);
						apc_buf_put_bytes(b, "abc", 4);
					} else
						put32(b, small());
				}
				break;
			}
			break;
		}
	}
}

/* Damage: cut the body, flip bits, or splice in bytes of packed-integer noise. */
static void damage(struct apc_buf *b)
{
	switch (rnd_below(8)) {
	case 0:
		b->len = rnd_below((uint32_t)b->len + 1);
		break;
	case 1:
	case 2:
		for (unsigned k = 1 + rnd_below(3); k > 0 && b->len; k--)
			b->p[rnd_below((uint32_t)b->len)] ^= (uint8_t)(1u << rnd_below(8));
		break;
	case 3:
		for (unsigned k = 1 + rnd_below(12); k > 0 && b->len; k--)
			b->p[rnd_below((uint32_t)b->len)] = rnd_packed_byte();
		break;
	default:
		break;
	}
}

static int fields_equal(const struct apc_field *a, const struct apc_field *b)
{
	return strcmp(a->name, b->name) == 0 && a->kind == b->kind && a->i == b->i &&
	       a->len == b->len && (a->len == 0 || a->s == b->s) &&
	       (a->kind == APC_F_INT || a->kind == APC_F_HEX || a->s == b->s);
}

#define REF_MAX 256

static void check_frame(const uint8_t *file, size_t n, int clocks, uint64_t seed)
{
	static struct apc_msg want[REF_MAX];
	struct apc_mem_file mf = {"frame", file, n};
	struct apc_stream *s;
	struct apc_frame_reader *fr;
	struct apc_frame f;
	struct apc_msg_iter it;
	struct apc_msg m;
	struct apc_err e;
	size_t count = 0, got = 0;
	int64_t want_off = -1;
	int want_rc, rc;

	apc_input_mem_set(&mf, 1);
	apc_err_clear(&e);
	if (apc_stream_open_path("frame", &s, &e) < 0 || apc_frame_reader_new(s, &fr, &e) < 0) {
		T_FAIL("cannot open the test frame");
		return;
	}
	if (apc_frame_read(fr, &f, &e) != APC_OK) {
		T_FAIL("seed %llu: the frame does not read", (unsigned long long)seed);
		goto out;
	}
	want_rc = ref_decode(&f, clocks, want, REF_MAX, &count, &want_off);
	apc_msg_iter_init(&it, &f, clocks);
	/* stale fields from a previous message must not matter */
	memset(&m, 0xa5, sizeof m);
	while ((rc = apc_msg_next(&it, &m, &e)) == APC_OK) {
		const struct apc_msg *w = &want[got];
		int same;

		if (got >= count) {
			T_FAIL("seed %llu type %d: message %zu (%s) that the reference does not have",
			       (unsigned long long)seed, f.type, got, m.name);
			goto out;
		}
		same = m.frame_type == w->frame_type && m.name && w->name &&
		       !strcmp(m.name, w->name) && m.code == w->code && m.core == w->core &&
		       m.has_ts == w->has_ts && (!m.has_ts || m.ts == w->ts) &&
		       m.offset == w->offset && m.nfields == w->nfields;
		for (size_t i = 0; same && i < m.nfields; i++)
			same = fields_equal(&m.f[i], &w->f[i]);
		if (!same) {
			T_FAIL("seed %llu type %d clocks %d: message %zu is %s (%zu fields, code %d, "
			       "core %d, offset %llu), reference %s (%zu fields, code %d, core %d, "
			       "offset %llu)", (unsigned long long)seed, f.type, clocks, got,
			       m.name ? m.name : "?", m.nfields, m.code, (int)m.core,
			       (unsigned long long)m.offset, w->name ? w->name : "?", w->nfields,
			       w->code, (int)w->core, (unsigned long long)w->offset);
			goto out;
		}
		got++;
	}
	if (got != count || rc != want_rc || (rc < 0 && e.offset != want_off)) {
		T_FAIL("seed %llu type %d clocks %d: %zu messages then %d @%lld (%s), reference %zu "
		       "then %d @%lld", (unsigned long long)seed, f.type, clocks, got, rc,
		       (long long)e.offset, e.msg, count, want_rc, (long long)want_off);
		goto out;
	}
	/* the iterator stays at its end */
	T_EQ_INT(apc_msg_next(&it, &m, &e), APC_END);
out:
	apc_frame_reader_free(fr);
	apc_stream_close(s);
	apc_input_mem_set(NULL, 0);
}

static void test_msg_next_matches_reference(void)
{
	static const int types[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 99};
	struct apc_buf b = {0};
	uint64_t runs = 0;

	for (uint64_t seed = 1; seed <= 60000 && !t_failed_now; seed++) {
		int t = types[seed % (sizeof types / sizeof types[0])];
		uint8_t *file;

		rng_state = seed;
		b.len = 0;
		gen_body(&b, t);
		if (seed % 3 == 0)
			damage(&b);
		file = malloc(b.len + 4);
		for (int k = 0; k < 4; k++)
			file[k] = (uint8_t)(b.len >> (8 * k));
		memcpy(file + 4, b.p, b.len);
		for (int clocks = 0; clocks <= 4; clocks++)
			if (clocks != 1 && clocks != 2)
				check_frame(file, b.len + 4, clocks, seed);
		free(file);
		runs++;
	}
	apc_buf_free(&b);
	T_ASSERT(runs > 0);
}

/* The reference must see what the decoder sees: one known frame, by hand. */
static void test_reference_on_a_known_frame(void)
{
	/* Block Counter frame, core 1: key 0 ts 100, key 0x11 = 5, key 2 core 3, key 0x12 = -1 */
	static const uint8_t file[] = {11, 0, 0, 0, 5, 1, 0, 0xe4, 0x00, 0x11, 5, 2, 3, 0x12, 0x7f, 0};
	struct apc_frame f = {.offset = 0, .len = 11, .body = file + 4, .type = 5, .core = 1,
			      .hdr_len = 2};
	struct apc_msg msgs[4];
	size_t n = 0;
	int64_t off = -1;

	/* 0xe4 0x00 is a non-minimal 100; the last byte is beyond len */
	T_EQ_INT(ref_decode(&f, 3, msgs, 4, &n, &off), APC_END);
	T_EQ_INT(n, 2);
	T_EQ_STR(msgs[0].name, "block_counter");
	T_EQ_INT(msgs[0].ts, 100);
	T_EQ_INT(msgs[0].core, 1);
	T_EQ_INT(msgs[0].f[3].i, 5);
	T_EQ_INT(msgs[0].offset, 9);
	T_EQ_INT(msgs[1].core, 3);
	T_EQ_INT(msgs[1].f[2].i, 0x12);
	T_EQ_INT(msgs[1].f[3].i, -1);
	check_frame(file, 15, 3, 0);
}

void run_tests(void)
{
	T_RUN(test_unpack_matches_reference);
	T_RUN(test_readahead_matches_exact_reads);
	T_RUN(test_readahead_only_before_the_first_frame);
	T_RUN(test_reference_on_a_known_frame);
	T_RUN(test_msg_next_matches_reference);
}
