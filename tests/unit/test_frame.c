/*
 * test_frame.c - the APC frame reader and message decoder: every frame of
 * the real gatord captures, hand-built frames of every message type
 * (written with apc_buf_*), and damaged input with the offsets it names.
 */
#include <stdlib.h>
#include <unistd.h>

#include "frame.h"
#include "input.h"
#include "packed.h"
#include "t.h"

/* ---- helpers ----------------------------------------------------------- */

static char tmp_path[64];

/* Write raw bytes to a temporary file and open it as a stream. */
static struct apc_stream *stream_of(const uint8_t *p, size_t n)
{
	struct apc_stream *s = NULL;
	struct apc_err e;
	int fd;

	snprintf(tmp_path, sizeof tmp_path, "/tmp/test_frame_XXXXXX");
	fd = mkstemp(tmp_path);
	if (fd < 0)
		return NULL;
	if (write(fd, p, n) != (ssize_t)n) {
		close(fd);
		return NULL;
	}
	close(fd);
	if (apc_stream_open_path(tmp_path, &s, &e) < 0)
		s = NULL;
	unlink(tmp_path);
	return s;
}

/* A frame body under construction. */
struct fb {
	struct apc_buf b;
};

static void p32(struct fb *f, int32_t v)
{
	apc_buf_reserve(&f->b, 10);
	apc_buf_put_packed32(&f->b, v);
}

static void p64(struct fb *f, int64_t v)
{
	apc_buf_reserve(&f->b, 10);
	apc_buf_put_packed64(&f->b, v);
}

static void pstr(struct fb *f, const char *s)
{
	apc_buf_put_string(&f->b, s, strlen(s));
}

static void praw(struct fb *f, const void *p, size_t n)
{
	apc_buf_put_bytes(&f->b, p, n);
}

/* Decoded frame plus messages, read back through the frame reader. */
struct decoded {
	struct apc_stream *s;
	struct apc_frame_reader *fr;
	struct apc_frame f;
	struct apc_msg_iter it;
	struct apc_err e;
	uint8_t *file;
};

/* Wrap body in a length word, read it back as a frame. */
static int decode_start(struct decoded *d, struct fb *f, int clocks)
{
	size_t n = f->b.len;
	int rc;

	memset(d, 0, sizeof *d);
	d->file = malloc(n + 4);
	d->file[0] = (uint8_t)n;
	d->file[1] = (uint8_t)(n >> 8);
	d->file[2] = (uint8_t)(n >> 16);
	d->file[3] = (uint8_t)(n >> 24);
	memcpy(d->file + 4, f->b.p, n);
	apc_buf_free(&f->b);
	d->s = stream_of(d->file, n + 4);
	if (!d->s)
		return APC_EIO;
	apc_err_clear(&d->e);
	apc_frame_reader_new(d->s, &d->fr, &d->e);
	rc = apc_frame_read(d->fr, &d->f, &d->e);
	if (rc == APC_OK)
		apc_msg_iter_init(&d->it, &d->f, clocks);
	return rc;
}

static int next(struct decoded *d, struct apc_msg *m)
{
	return apc_msg_next(&d->it, m, &d->e);
}

static void decode_end(struct decoded *d)
{
	apc_frame_reader_free(d->fr);
	apc_stream_close(d->s);
	free(d->file);
}

static int64_t fi(const struct apc_msg *m, const char *name)
{
	const struct apc_field *f = apc_msg_field(m, name);
	if (!f) {
		T_FAIL("message %s has no field %s", m->name, name);
		return INT64_MIN;
	}
	return f->i;
}

static int fstr_is(const struct apc_msg *m, const char *name, const char *want)
{
	const struct apc_field *f = apc_msg_field(m, name);
	return f && f->len == strlen(want) && memcmp(f->s, want, f->len) == 0;
}

/* ---- real captures ------------------------------------------------------ */

static int read_protocol(const char *dir)
{
	char path[600], buf[4096];
	FILE *f;
	size_t n;
	const char *p;

	snprintf(path, sizeof path, "%s/captured.xml", dir);
	if (!(f = fopen(path, "r")))
		return 0;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strstr(buf, "protocol=\"");
	return p ? atoi(p + 10) : 0;
}

/* Decode every message; returns frames, fills per-type counts. */
static uint64_t walk_capture(const char *dir, int clocks, uint64_t counts[16], uint64_t *msgs,
			     int *summary_clocks_seen)
{
	char path[600];
	struct apc_stream *s;
	struct apc_frame_reader *fr;
	struct apc_frame f;
	struct apc_msg_iter it;
	struct apc_msg m;
	struct apc_err e;
	uint64_t frames = 0;
	int rc;

	snprintf(path, sizeof path, "%s/0000000000", dir);
	apc_err_clear(&e);
	if (apc_stream_open_path(path, &s, &e) < 0) {
		T_FAIL("cannot open %s: %s", path, e.msg);
		return 0;
	}
	apc_frame_reader_new(s, &fr, &e);
	while ((rc = apc_frame_read(fr, &f, &e)) == APC_OK) {
		frames++;
		if (f.type >= 0 && f.type < 16)
			counts[f.type]++;
		apc_msg_iter_init(&it, &f, clocks);
		while ((rc = apc_msg_next(&it, &m, &e)) == APC_OK) {
			(*msgs)++;
			if (f.type == APC_FRAME_SUMMARY && !strcmp(m.name, "summary")) {
				T_ASSERT(fstr_is(&m, "canary", APC_NEWLINE_CANARY));
				*summary_clocks_seen = apc_msg_field(&m, "clock4") ? 4 : 3;
				/* Later frames decode with what the Summary said. */
				if (!clocks)
					clocks = it.summary_version;
			}
		}
		if (rc != APC_END)
			T_FAIL("%s frame %" PRIu64 " at 0x%" PRIx64 ": %s (offset 0x%" PRIx64 ")", dir,
			       f.index, f.offset, e.msg, (uint64_t)e.offset);
	}
	if (rc != APC_END)
		T_FAIL("%s: frame read failed: %s", dir, e.msg);
	apc_frame_reader_free(fr);
	apc_stream_close(s);
	return frames;
}

static void real_captures(void)
{
	static const char *const names[] = {"v68_nonroot.apc", "v68_sleep.apc", "sleep_counters.apc",
					    "v68_nonroot_annotate.apc"};
	const char *shared = t_shared_testdata();
	char dir[512];

	if (!shared)
		T_SKIP("../shared/testdata is absent");
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		uint64_t counts[16] = {0}, guess_counts[16] = {0}, msgs = 0, guess_msgs = 0, frames;
		int proto, seen = 0, guess_seen = 0;

		snprintf(dir, sizeof dir, "%s/apc/%s", shared, names[i]);
		proto = read_protocol(dir);
		T_ASSERT(proto > 0);
		frames = walk_capture(dir, proto >= 910 ? 4 : 3, counts, &msgs, &seen);
		printf("# %s: protocol %d, %" PRIu64 " frames, %" PRIu64 " messages:", names[i], proto,
		       frames, msgs);
		for (int t = 0; t < 16; t++)
			if (counts[t])
				printf(" %s=%" PRIu64, apc_frame_type_name(t), counts[t]);
		printf("\n");
		T_ASSERT(frames > 0);
		T_EQ_INT(counts[APC_FRAME_SUMMARY], 1);
		T_EQ_INT(seen, proto >= 910 ? 4 : 3);
		/* Guessing the clocks from the bytes agrees with captured.xml. */
		T_EQ_U64(walk_capture(dir, 0, guess_counts, &guess_msgs, &guess_seen), frames);
		T_EQ_INT(guess_seen, seen);
		if (proto < 910)
			T_EQ_U64(guess_msgs, msgs);
	}
}

/* ---- hand-built frames: every message type ------------------------------ */

static void summary_frames(void)
{
	for (int clocks = 3; clocks <= 4; clocks++) {
		for (int guess = 0; guess <= 1; guess++) {
			struct fb f = {0};
			struct decoded d;
			struct apc_msg m;

			p32(&f, APC_FRAME_SUMMARY);
			p32(&f, 1);
			pstr(&f, APC_NEWLINE_CANARY);
			p64(&f, 1700000000000000000LL);
			p64(&f, 123456789);
			p64(&f, 987654321);
			if (clocks == 4)
				p64(&f, 555555555555LL);
			pstr(&f, "uname");
			pstr(&f, "Linux");
			pstr(&f, "nosync");
			pstr(&f, "");
			pstr(&f, "");
			p32(&f, 3);
			p32(&f, 1);
			p32(&f, 0xd03);
			pstr(&f, "Cortex-A53");
			T_EQ_INT(decode_start(&d, &f, guess ? 0 : clocks), APC_OK);
			T_EQ_INT(d.f.type, APC_FRAME_SUMMARY);
			T_EQ_INT(d.f.core, -1);
			T_EQ_INT(next(&d, &m), APC_OK);
			T_EQ_STR(m.name, "summary");
			T_ASSERT(fstr_is(&m, "canary", APC_NEWLINE_CANARY));
			T_EQ_INT(fi(&m, "timestamp"), 1700000000000000000LL);
			T_EQ_INT(fi(&m, "uptime"), 123456789);
			T_EQ_INT(fi(&m, "monotonic_delta"), 987654321);
			if (clocks == 4)
				T_EQ_INT(fi(&m, "clock4"), 555555555555LL);
			else
				T_ASSERT(apc_msg_field(&m, "clock4") == NULL);
			T_EQ_INT(d.it.summary_version, clocks);
			T_ASSERT(fstr_is(&m, "attr_key", "uname"));
			T_ASSERT(fstr_is(&m, "attr_value", "Linux"));
			T_EQ_INT(m.nfields, 1u + (unsigned)clocks + 4u); /* canary, clocks, 2 pairs */
			T_EQ_INT(next(&d, &m), APC_OK);
			T_EQ_STR(m.name, "core_name");
			T_EQ_INT(fi(&m, "core"), 1);
			T_EQ_INT(fi(&m, "cpuid"), 0xd03);
			T_ASSERT(fstr_is(&m, "name", "Cortex-A53"));
			T_EQ_INT(next(&d, &m), APC_END);
			decode_end(&d);
		}
	}
}

/* More attributes than one message holds continue in summary_attrs. */
static void summary_many_attrs(void)
{
	struct fb f = {0};
	struct decoded d;
	struct apc_msg m;
	int pairs = 0;

	p32(&f, APC_FRAME_SUMMARY);
	p32(&f, 1);
	pstr(&f, APC_NEWLINE_CANARY);
	p64(&f, 1);
	p64(&f, 2);
	p64(&f, 3);
	for (int i = 0; i < 40; i++) {
		char k[16];
		snprintf(k, sizeof k, "k%d", i);
		pstr(&f, k);
		pstr(&f, "v");
	}
	pstr(&f, "");
	T_EQ_INT(decode_start(&d, &f, 3), APC_OK);
	while (next(&d, &m) == APC_OK) {
		for (size_t i = 0; i < m.nfields; i++)
			pairs += !strcmp(m.f[i].name, "attr_key");
		T_ASSERT(!strcmp(m.name, "summary") || !strcmp(m.name, "summary_attrs"));
	}
	T_EQ_INT(pairs, 40);
	T_EQ_INT(d.e.status, APC_OK);
	decode_end(&d);
}

static void name_counter_frames(void)
{
	struct fb f = {0};
	struct decoded d;
	struct apc_msg m;

	p32(&f, APC_FRAME_NAME);
	p32(&f, 2);
	p32(&f, 1);
	p32(&f, 77);
	pstr(&f, "/bin/sh");
	p32(&f, 2);
	p64(&f, 1000);
	p32(&f, 4242);
	pstr(&f, "worker");
	T_EQ_INT(decode_start(&d, &f, 3), APC_OK);
	T_EQ_INT(d.f.core, 2);
	T_EQ_INT(next(&d, &m), APC_OK);
	T_EQ_STR(m.name, "cookie_name");
	T_EQ_INT(m.core, 2);
	T_EQ_INT(fi(&m, "cookie"), 77);
	T_ASSERT(fstr_is(&m, "name", "/bin/sh"));
	T_ASSERT(!m.has_ts);
	T_EQ_INT(next(&d, &m), APC_OK);
	T_EQ_STR(m.name, "thread_name");
	T_ASSERT(m.has_ts);
	T_EQ_INT(m.ts, 1000);
	T_EQ_INT(fi(&m, "tid"), 4242);
	T_ASSERT(fstr_is(&m, "name", "worker"));
	T_EQ_INT(next(&d, &m), APC_END);
	decode_end(&d);

	p32(&f, APC_FRAME_COUNTER);
	p64(&f, 5000);
	p32(&f, 3);
	p32(&f, 0x58);
	p64(&f, -12345678901LL);
	T_EQ_INT(decode_start(&d, &f, 3), APC_OK);
	T_EQ_INT(d.f.core, -1);
	T_EQ_INT(next(&d, &m), APC_OK);
	T_EQ_STR(m.name, "counter");
	T_EQ_INT(m.ts, 5000);
	T_EQ_INT(m.core, 3);
	T_EQ_INT(fi(&m, "key"), 0x58);
	T_EQ_INT(fi(&m, "value"), -12345678901LL);
	T_EQ_INT(next(&d, &m), APC_END);
	decode_end(&d);
}

static void block_counter_frame(void)
{
	struct fb f = {0};
	struct decoded d;
	struct apc_msg m;

	p32(&f, APC_FRAME_BLOCK_COUNTER);
	p32(&f, 1);     /* frame core 1 */
	p32(&f, 0);
	p64(&f, 100);   /* ts 100 */
	p32(&f, 0x10);
	p64(&f, 7);     /* value on core 1, pid 0 */
	p32(&f, 1);
	p64(&f, 555);   /* pid 555 */
	p32(&f, 2);
	p64(&f, 3);     /* core 3 */
	p32(&f, 0x12);
	p64(&f, 8);
	p32(&f, 0);
	p64(&f, 200);   /* new ts: pid forgotten, core kept */
	p32(&f, 0x14);
	p64(&f, 9);
	T_EQ_INT(decode_start(&d, &f, 3), APC_OK);
	T_EQ_INT(next(&d, &m), APC_OK);
	T_EQ_STR(m.name, "block_counter");
	T_EQ_INT(m.ts, 100);
	T_EQ_INT(m.core, 1);
	T_EQ_INT(fi(&m, "pid"), 0);
	T_EQ_INT(fi(&m, "key"), 0x10);
	T_EQ_INT(fi(&m, "value"), 7);
	T_EQ_INT(next(&d, &m), APC_OK);
	T_EQ_INT(m.ts, 100);
	T_EQ_INT(m.core, 3);
	T_EQ_INT(fi(&m, "pid"), 555);
	T_EQ_INT(fi(&m, "key"), 0x12);
	T_EQ_INT(next(&d, &m), APC_OK);
	T_EQ_INT(m.ts, 200);
	T_EQ_INT(m.core, 3);
	T_EQ_INT(fi(&m, "pid"), 0);
	T_EQ_INT(fi(&m, "value"), 9);
	T_EQ_INT(next(&d, &m), APC_END);
	decode_end(&d);
}

static void sched_activity_idle_frames(void)
{
	struct fb f = {0};
	struct decoded d;
	struct apc_msg m;

	p32(&f, APC_FRAME_SCHED_TRACE);
	p32(&f, 0);
	p32(&f, 1);
	p64(&f, 10);
	p32(&f, 99);
	p32(&f, 2);
	p32(&f, 2);
	p64(&f, 20);
	p32(&f, 99);
	T_EQ_INT(decode_start(&d, &f, 3), APC_OK);
	T_EQ_INT(next(&d, &m), APC_OK);
	T_EQ_STR(m.name, "sched_switch");
	T_EQ_INT(m.ts, 10);
	T_EQ_INT(fi(&m, "tid"), 99);
	T_EQ_INT(fi(&m, "state"), 2);
	T_EQ_INT(next(&d, &m), APC_OK);
	T_EQ_STR(m.name, "thread_exit");
	T_EQ_INT(m.ts, 20);
	T_EQ_INT(next(&d, &m), APC_END);
	decode_end(&d);

	p32(&f, APC_FRAME_ACTIVITY_TRACE);
	p32(&f, 1);
	p64(&f, 1);
	p32(&f, 5);
	p32(&f, 6);
	p32(&f, 7);
	p32(&f, 2);
	p64(&f, 2);
	p32(&f, 1);
	p32(&f, 0x3);
	p32(&f, 4);
	p32(&f, -1);
	p32(&f, 1);
	p32(&f, 3);
	p64(&f, 3);
	p32(&f, 7);
	T_EQ_INT(decode_start(&d, &f, 3), APC_OK);
	T_EQ_INT(next(&d, &m), APC_OK);
	T_EQ_STR(m.name, "link");
	T_EQ_INT(fi(&m, "cookie"), 5);
	T_EQ_INT(fi(&m, "pid"), 6);
	T_EQ_INT(fi(&m, "tid"), 7);
	T_EQ_INT(next(&d, &m), APC_OK);
	T_EQ_STR(m.name, "activity_switch");
	T_EQ_INT(m.core, 1);
	T_EQ_INT(fi(&m, "key"), 3);
	T_EQ_INT(fi(&m, "activity"), 4);
	T_EQ_INT(fi(&m, "tid"), -1);
	T_EQ_INT(fi(&m, "wait_state"), 1);
	T_EQ_INT(next(&d, &m), APC_OK);
	T_EQ_STR(m.name, "task_exit");
	T_EQ_INT(m.ts, 3);
	T_EQ_INT(fi(&m, "tid"), 7);
	T_EQ_INT(next(&d, &m), APC_END);
	decode_end(&d);

	p32(&f, APC_FRAME_IDLE);
	p32(&f, -1);
	p64(&f, 77);
	p32(&f, 2);
	T_EQ_INT(decode_start(&d, &f, 3), APC_OK);
	T_EQ_INT(next(&d, &m), APC_OK);
	T_EQ_STR(m.name, "idle");
	T_EQ_INT(fi(&m, "state"), -1);
	T_EQ_INT(m.ts, 77);
	T_EQ_INT(m.core, 2);
	T_EQ_INT(next(&d, &m), APC_END);
	decode_end(&d);
}

static void backtrace_annotate_frames(void)
{
	struct fb f = {0};
	struct decoded d;
	struct apc_msg m;
	const struct apc_field *fr;
	int32_t c;
	int64_t o;
	int k;

	p32(&f, APC_FRAME_BACKTRACE);
	p32(&f, 0);
	p64(&f, 42);
	p32(&f, 9);
	p32(&f, 100);
	p32(&f, 101);
	p32(&f, 9);
	p64(&f, 0x400123);
	p32(&f, 12);
	p64(&f, 0x7f001000);
	p32(&f, 1); /* End of Message */
	T_EQ_INT(decode_start(&d, &f, 3), APC_OK);
	T_EQ_INT(next(&d, &m), APC_OK);
	T_EQ_STR(m.name, "backtrace");
	T_EQ_INT(m.ts, 42);
	T_EQ_INT(fi(&m, "pid"), 100);
	fr = apc_msg_field(&m, "frames");
	T_ASSERT(fr && fr->kind == APC_F_PAIRS && fr->i == 2);
	if (fr) {
		k = apc_unpack32(fr->s, fr->len, &c);
		T_ASSERT(k > 0);
		T_EQ_INT(c, 9);
		T_ASSERT(apc_unpack64(fr->s + k, fr->len - (size_t)k, &o) > 0);
		T_EQ_INT(o, 0x400123);
	}
	T_EQ_INT(next(&d, &m), APC_END);
	decode_end(&d);

	p32(&f, APC_FRAME_ANNOTATE);
	p32(&f, 1);
	p32(&f, 55);
	p64(&f, 66);
	p32(&f, 3);
	praw(&f, "hi\n", 3);
	T_EQ_INT(decode_start(&d, &f, 3), APC_OK);
	T_EQ_INT(next(&d, &m), APC_OK);
	T_EQ_STR(m.name, "annotate");
	T_EQ_INT(m.core, 1);
	T_EQ_INT(fi(&m, "tid"), 55);
	T_ASSERT(fstr_is(&m, "data", "hi\n"));
	T_EQ_INT(next(&d, &m), APC_END);
	decode_end(&d);
}

static void external_frames(void)
{
	struct fb f = {0};
	struct decoded d;
	struct apc_msg m;

	p32(&f, APC_FRAME_EXTERNAL);
	p32(&f, 17);
	praw(&f, "ANNOTATE 4\n", 11);
	T_EQ_INT(decode_start(&d, &f, 3), APC_OK);
	T_EQ_INT(next(&d, &m), APC_OK);
	T_EQ_STR(m.name, "external");
	T_EQ_INT(fi(&m, "fd"), 17);
	T_ASSERT(fstr_is(&m, "data", "ANNOTATE 4\n"));
	T_EQ_INT(next(&d, &m), APC_END);
	decode_end(&d);

	p32(&f, APC_FRAME_EXTERNAL);
	p32(&f, -1);
	p32(&f, 17);
	T_EQ_INT(decode_start(&d, &f, 3), APC_OK);
	T_EQ_INT(next(&d, &m), APC_OK);
	T_EQ_STR(m.name, "external_disconnect");
	T_EQ_INT(fi(&m, "fd"), 17);
	T_EQ_INT(next(&d, &m), APC_END);
	decode_end(&d);

	/* gatord 6.8: [10][fd] with no bytes, and a bare [10]. */
	p32(&f, APC_FRAME_EXTERNAL);
	p32(&f, 5);
	T_EQ_INT(decode_start(&d, &f, 3), APC_OK);
	T_EQ_INT(next(&d, &m), APC_OK);
	T_EQ_STR(m.name, "external");
	T_EQ_INT(apc_msg_field(&m, "data")->len, 0);
	T_EQ_INT(next(&d, &m), APC_END);
	decode_end(&d);
	p32(&f, APC_FRAME_EXTERNAL);
	T_EQ_INT(decode_start(&d, &f, 3), APC_OK);
	T_EQ_INT(next(&d, &m), APC_END);
	T_EQ_INT(d.e.status, APC_OK);
	decode_end(&d);
}

static void perf_attr_frames(void)
{
	struct fb f = {0};
	struct decoded d;
	struct apc_msg m;
	uint8_t pea[16] = {1, 0, 0, 0, 16, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0};

	p32(&f, APC_FRAME_PROC);
	p32(&f, 0);
	p32(&f, 1);
	praw(&f, pea, sizeof pea);
	p32(&f, 0x4);
	p32(&f, 2);
	p32(&f, 1);
	p64(&f, 0x7ff);
	p32(&f, 0x4);
	p32(&f, 5);
	p32(&f, 10);
	p32(&f, 11);
	praw(&f, "/bin/app\0app\0", 13);
	p32(&f, 4);
	p32(&f, 10);
	p32(&f, 11);
	praw(&f, "maps\0", 5);
	p32(&f, 7);
	p64(&f, 900);
	p32(&f, 1);
	p32(&f, 10); /* counters run */
	p64(&f, 1000);
	p32(&f, 0);
	p32(&f, 0x20);
	p64(&f, 5);
	p32(&f, 1);
	p32(&f, 0x20);
	p64(&f, 6);
	p32(&f, -1);
	p32(&f, 9);
	praw(&f, "ksyms\0", 6);
	T_EQ_INT(decode_start(&d, &f, 3), APC_OK);
	T_EQ_INT(d.f.core, 0);
	T_EQ_INT(next(&d, &m), APC_OK);
	T_EQ_STR(m.name, "perf_attr");
	T_EQ_INT(fi(&m, "attr_type"), 1);
	T_EQ_INT(fi(&m, "config"), 9);
	T_EQ_INT(fi(&m, "key"), 4);
	T_EQ_INT(next(&d, &m), APC_OK);
	T_EQ_STR(m.name, "perf_keys");
	T_EQ_INT(fi(&m, "count"), 1);
	T_EQ_INT(next(&d, &m), APC_OK);
	T_EQ_STR(m.name, "proc");
	T_EQ_INT(fi(&m, "pid"), 10);
	T_EQ_INT(fi(&m, "tid"), 11);
	T_ASSERT(fstr_is(&m, "image", "/bin/app"));
	T_ASSERT(fstr_is(&m, "comm", "app"));
	T_EQ_INT(next(&d, &m), APC_OK);
	T_EQ_STR(m.name, "perf_maps");
	T_ASSERT(fstr_is(&m, "maps", "maps"));
	T_EQ_INT(next(&d, &m), APC_OK);
	T_EQ_STR(m.name, "online_cpu");
	T_EQ_INT(m.ts, 900);
	T_EQ_INT(fi(&m, "cpu"), 1);
	T_EQ_INT(next(&d, &m), APC_OK);
	T_EQ_STR(m.name, "perf_counter");
	T_EQ_INT(m.ts, 1000);
	T_EQ_INT(m.core, 0);
	T_EQ_INT(fi(&m, "value"), 5);
	T_EQ_INT(next(&d, &m), APC_OK);
	T_EQ_STR(m.name, "perf_counter");
	T_EQ_INT(m.core, 1);
	T_EQ_INT(fi(&m, "value"), 6);
	T_EQ_INT(next(&d, &m), APC_OK);
	T_EQ_STR(m.name, "kallsyms");
	T_EQ_INT(next(&d, &m), APC_END);
	T_EQ_INT(d.e.status, APC_OK);
	decode_end(&d);
}

/* A 4-byte little-endian length, as gatord's perf data chunks have. */
static void ple32(struct fb *f, uint32_t v)
{
	uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
	apc_buf_reserve(&f->b, 4);
	praw(f, b, 4);
}

/* A perf_event_header as the packed64 word gatord writes. */
static int64_t perf_hdr(uint32_t type, uint16_t misc, uint16_t size)
{
	return (int64_t)((uint64_t)size << 48 | (uint64_t)misc << 32 | type);
}

static void perf_frames(void)
{
	struct fb f = {0}, c1 = {0}, c2 = {0};
	struct decoded d;
	struct apc_msg m;
	const struct apc_field *w;

	/* chunk of CPU 2 (the header's): a switch (40 bytes: 4 words after
	 * the header) and a record of an unknown type whose size, 12, rounds
	 * up to one word more; then, as 6.8 writes, a chunk of CPU 1 with a
	 * sample of size 0 (the header alone) */
	p64(&c1, perf_hdr(14, 0, 40));
	p64(&c1, 0x4a9100004a91);
	p64(&c1, -1); /* 0xffffffffffffffff */
	p64(&c1, 0x18);
	p64(&c1, 0x18);
	p64(&c1, perf_hdr(77, 1, 12));
	p64(&c1, 5);
	p64(&c2, perf_hdr(9, 2, 0));
	p32(&f, APC_FRAME_PERF_DATA);
	p32(&f, 2);
	ple32(&f, (uint32_t)c1.b.len);
	praw(&f, c1.b.p, c1.b.len);
	p32(&f, 1);
	ple32(&f, (uint32_t)c2.b.len);
	praw(&f, c2.b.p, c2.b.len);
	T_EQ_INT(decode_start(&d, &f, 4), APC_OK);
	T_EQ_INT(next(&d, &m), APC_OK);
	T_EQ_STR(m.name, "perf_switch");
	T_EQ_INT(m.code, 14);
	T_EQ_INT(m.core, 2);
	T_EQ_INT(fi(&m, "misc"), 0);
	T_EQ_INT(fi(&m, "size"), 40);
	T_EQ_U64(m.offset, 4u + 2 + 4);
	w = apc_msg_field(&m, "words");
	T_ASSERT(w && w->kind == APC_F_WORDS && w->i == 4);
	T_EQ_INT(next(&d, &m), APC_OK);
	T_EQ_STR(m.name, "perf_record");
	T_EQ_INT(fi(&m, "record_type"), 77);
	T_EQ_INT(fi(&m, "misc"), 1);
	T_EQ_INT(fi(&m, "size"), 12);
	w = apc_msg_field(&m, "words");
	T_ASSERT(w && w->i == 1 && w->len == 1);
	T_EQ_INT(next(&d, &m), APC_OK);
	T_EQ_STR(m.name, "perf_sample");
	T_EQ_INT(m.core, 1);
	T_EQ_INT(fi(&m, "misc"), 2);
	w = apc_msg_field(&m, "words");
	T_ASSERT(w && w->i == 0);
	T_EQ_INT(next(&d, &m), APC_END);
	T_EQ_INT(d.e.status, APC_OK);
	decode_end(&d);

	/* a chunk that says one byte more than the frame holds */
	f.b.len = 0;
	p32(&f, APC_FRAME_PERF_DATA);
	p32(&f, 0);
	ple32(&f, (uint32_t)c1.b.len + 1);
	praw(&f, c1.b.p, c1.b.len);
	T_EQ_INT(decode_start(&d, &f, 4), APC_OK);
	T_EQ_INT(next(&d, &m), APC_EDATA);
	T_EQ_INT(d.e.offset, 4 + 2);
	{
		char want[96];
		snprintf(want, sizeof want, "perf data chunk of %zu bytes, but %zu bytes follow its length",
			 c1.b.len + 1, c1.b.len);
		T_EQ_STR(d.e.msg, want);
	}
	decode_end(&d);

	/* a record whose words run past its chunk (one byte short), though
	 * the frame goes on */
	f.b.len = 0;
	p32(&f, APC_FRAME_PERF_DATA);
	p32(&f, 0);
	ple32(&f, (uint32_t)c1.b.len - 1);
	praw(&f, c1.b.p, c1.b.len);
	T_EQ_INT(decode_start(&d, &f, 4), APC_OK);
	T_EQ_INT(next(&d, &m), APC_OK);
	T_EQ_INT(next(&d, &m), APC_EDATA);
	T_ASSERT(strstr(d.e.msg, "perf record word"));
	T_EQ_INT(d.e.offset, (int64_t)(4 + 2 + 4 + c1.b.len - 1));
	decode_end(&d);

	/* gatord 9.x's AUX (14) and sync (15) frames */
	f.b.len = 0;
	p32(&f, APC_FRAME_TYPE_14);
	p32(&f, 1);
	p64(&f, 4096);
	p32(&f, 3);
	praw(&f, "spe", 3);
	T_EQ_INT(decode_start(&d, &f, 4), APC_OK);
	T_EQ_INT(next(&d, &m), APC_OK);
	T_EQ_STR(m.name, "perf_aux");
	T_EQ_INT(m.core, 1);
	T_EQ_INT(fi(&m, "tail"), 4096);
	T_ASSERT(fstr_is(&m, "data", "spe"));
	T_EQ_INT(next(&d, &m), APC_END);
	decode_end(&d);
	f.b.len = 0;
	p32(&f, APC_FRAME_TYPE_15);
	p32(&f, 0);
	p32(&f, 4242);
	p32(&f, 4243);
	p64(&f, 25000000);
	p64(&f, 123456789012);
	p64(&f, 987654321);
	T_EQ_INT(decode_start(&d, &f, 4), APC_OK);
	T_EQ_INT(next(&d, &m), APC_OK);
	T_EQ_STR(m.name, "perf_sync");
	T_EQ_INT(fi(&m, "pid"), 4242);
	T_EQ_INT(fi(&m, "tid"), 4243);
	T_EQ_INT(fi(&m, "freq"), 25000000);
	T_EQ_INT(fi(&m, "monotonic_raw"), 123456789012);
	T_EQ_INT(fi(&m, "vcnt"), 987654321);
	T_EQ_INT(next(&d, &m), APC_END);
	decode_end(&d);
	apc_buf_free(&f.b);
	apc_buf_free(&c1.b);
	apc_buf_free(&c2.b);
}

static void opaque_frames(void)
{
	static const int types[] = {APC_FRAME_PROC, 8, 40};
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
		struct fb f = {0};
		struct decoded d;
		struct apc_msg m;
		int core = apc_frame_has_core(types[i]);

		p32(&f, types[i]);
		if (core)
			p32(&f, 3);
		praw(&f, "\x01\x02\x03", 3);
		/* Frame 11 is opaque when the protocol is not known (0
		 * clocks: no captured.xml); 6.8's and 9.x's decode. */
		T_EQ_INT(decode_start(&d, &f, types[i] == APC_FRAME_PROC ? 0 : 4), APC_OK);
		T_EQ_INT(d.f.core, core ? 3 : -1);
		T_EQ_INT(next(&d, &m), APC_OK);
		T_EQ_STR(m.name, "opaque");
		T_ASSERT(fstr_is(&m, "data", "\x01\x02\x03"));
		T_EQ_U64(m.offset, 4u + d.f.hdr_len);
		T_EQ_INT(next(&d, &m), APC_END);
		decode_end(&d);
	}
	T_EQ_STR(apc_frame_type_name(40), "type_40");
	/* every unknown code by its number, as apcdump lists it */
	T_EQ_STR(apc_frame_type_name(8), "type_8");
	T_EQ_STR(apc_frame_type_name(0), "type_0");
	T_EQ_STR(apc_frame_type_name(-40), "type_-40");
	T_EQ_STR(apc_frame_type_name(200), "type_200");
	T_EQ_STR(apc_frame_type_name(INT32_MIN), "type_-2147483648");
	T_EQ_STR(apc_frame_type_name(INT32_MAX), "type_2147483647");
	T_EQ_STR(apc_frame_type_name(APC_FRAME_NAME), "name");
	{
		/* two in one message stay apart */
		const char *a = apc_frame_type_name(128), *b = apc_frame_type_name(-1);
		char buf[APC_FRAME_NAME_MAX];
		T_EQ_STR(a, "type_128");
		T_EQ_STR(b, "type_-1");
		T_EQ_STR(apc_frame_type_name_r(-7, buf, sizeof buf), "type_-7");
		T_EQ_STR(buf, "type_-7");
		T_EQ_STR(apc_frame_type_name_r(APC_FRAME_SUMMARY, buf, sizeof buf), "summary");
	}
	T_ASSERT(!apc_frame_type_known(8));
	T_ASSERT(apc_frame_type_known(APC_FRAME_TYPE_15));
}

/* ---- damaged input ------------------------------------------------------ */

static void truncated_frames(void)
{
	/* frame 0: fine (2 bytes); frame 1 at 6: length word cut short. */
	static const uint8_t short_len[] = {2, 0, 0, 0, 5, 0, 9, 0};
	/* frame 1 at 6 says 100 bytes, 3 follow. */
	static const uint8_t short_body[] = {2, 0, 0, 0, 5, 0, 100, 0, 0, 0, 1, 2, 3};
	static const uint8_t negative[] = {0xff, 0xff, 0xff, 0xff, 1};
	static const uint8_t huge[] = {0, 0, 0, 0x7f};
	static const struct { const uint8_t *p; size_t n; uint64_t off; const char *what; } cases[] = {
		{short_len, sizeof short_len, 6, "cut short"},
		{short_body, sizeof short_body, 6, "runs past the end"},
		{negative, sizeof negative, 0, "negative"},
		{huge, sizeof huge, 0, "limit"},
	};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct apc_stream *s = stream_of(cases[i].p, cases[i].n);
		struct apc_frame_reader *fr;
		struct apc_frame f;
		struct apc_err e;
		int rc;

		T_ASSERT(s != NULL);
		if (!s)
			continue;
		apc_err_clear(&e);
		apc_frame_reader_new(s, &fr, &e);
		while ((rc = apc_frame_read(fr, &f, &e)) == APC_OK)
			;
		T_EQ_INT(rc, APC_EDATA);
		T_EQ_U64(e.offset, cases[i].off);
		if (!strstr(e.msg, cases[i].what))
			T_FAIL("case %zu: message \"%s\" lacks \"%s\"", i, e.msg, cases[i].what);
		apc_frame_reader_free(fr);
		apc_stream_close(s);
	}
}

static void bad_messages(void)
{
	struct fb f = {0};
	struct decoded d;
	struct apc_msg m;
	static const uint8_t overlong[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00};

	/* Name frame: cookie name whose packed cookie is overlong (at 7). */
	p32(&f, APC_FRAME_NAME);
	p32(&f, 0);
	p32(&f, 1);
	praw(&f, overlong, sizeof overlong);
	T_EQ_INT(decode_start(&d, &f, 3), APC_OK);
	T_EQ_INT(next(&d, &m), APC_EDATA);
	T_EQ_U64(d.e.offset, 4 + 3);
	T_ASSERT(strstr(d.e.msg, "overlong") != NULL);
	T_EQ_INT(next(&d, &m), APC_END);
	decode_end(&d);

	/* String length past the end of the frame (length byte at 4+3+1). */
	p32(&f, APC_FRAME_NAME);
	p32(&f, 0);
	p32(&f, 1);
	p32(&f, 5);
	p32(&f, 50);
	praw(&f, "abc", 3);
	T_EQ_INT(decode_start(&d, &f, 3), APC_OK);
	T_EQ_INT(next(&d, &m), APC_EDATA);
	T_EQ_U64(d.e.offset, 4 + 4);
	T_ASSERT(strstr(d.e.msg, "string length 50") != NULL);
	decode_end(&d);

	/* Truncated packed value: counter value byte with continuation bit. */
	p32(&f, APC_FRAME_COUNTER);
	p64(&f, 1);
	p32(&f, 0);
	p32(&f, 4);
	praw(&f, "\x85", 1);
	T_EQ_INT(decode_start(&d, &f, 3), APC_OK);
	T_EQ_INT(next(&d, &m), APC_EDATA);
	T_EQ_U64(d.e.offset, 4 + 4);
	T_ASSERT(strstr(d.e.msg, "runs past the end") != NULL);
	T_ASSERT(!d.it.unknown);
	decode_end(&d);

	/* Unknown message code in a Scheduler Trace frame. */
	p32(&f, APC_FRAME_SCHED_TRACE);
	p32(&f, 0);
	p32(&f, 9);
	T_EQ_INT(decode_start(&d, &f, 3), APC_OK);
	T_EQ_INT(next(&d, &m), APC_EDATA);
	T_EQ_U64(d.e.offset, 4 + 2);
	T_ASSERT(strstr(d.e.msg, "unknown message code 9") != NULL);
	/* told apart from damage, for apcdump's warning */
	T_ASSERT(d.it.unknown);
	T_EQ_U64(d.it.unknown_pos, 2);
	T_EQ_INT(d.it.unknown_code, 9);
	decode_end(&d);

	/* Overlong frame code: type -1, decoding says so at the body start. */
	praw(&f, overlong, sizeof overlong);
	T_EQ_INT(decode_start(&d, &f, 3), APC_OK);
	T_EQ_INT(d.f.type, -1);
	T_EQ_INT(next(&d, &m), APC_EDATA);
	T_EQ_U64(d.e.offset, 4);
	decode_end(&d);

	/* Block counter core that does not fit 32 bits. */
	p32(&f, APC_FRAME_BLOCK_COUNTER);
	p32(&f, 0);
	p32(&f, 2);
	p64(&f, 1LL << 40);
	T_EQ_INT(decode_start(&d, &f, 3), APC_OK);
	T_EQ_INT(next(&d, &m), APC_EDATA);
	T_EQ_U64(d.e.offset, 4 + 2);
	decode_end(&d);
}

void run_tests(void)
{
	T_RUN(real_captures);
	T_RUN(summary_frames);
	T_RUN(summary_many_attrs);
	T_RUN(name_counter_frames);
	T_RUN(block_counter_frame);
	T_RUN(sched_activity_idle_frames);
	T_RUN(backtrace_annotate_frames);
	T_RUN(external_frames);
	T_RUN(perf_attr_frames);
	T_RUN(opaque_frames);
	T_RUN(perf_frames);
	T_RUN(truncated_frames);
	T_RUN(bad_messages);
}
