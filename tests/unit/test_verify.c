/*
 * test_verify.c - the apcverify checks engine.  A small valid capture is
 * built by hand (frames from apc_buf_* and packed integers, captured.xml
 * and events.xml as strings) in a temporary folder and must verify with
 * no problem at all; then each check gets exactly its fault injected into
 * that capture, and exactly that check id must fire.  The real gatord
 * captures must have no errors.
 */
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "annotate.h"
#include "frame.h"
#include "packed.h"
#include "t.h"
#include "verify.h"

/* ---- building a capture ------------------------------------------------ */

#define MAX_FRAMES 32

#define MAX_GOT 64

/* The problems a verification reported, in order. */
struct got {
	size_t n;
	const char *check[MAX_GOT];
	int sev[MAX_GOT];
	int64_t frame[MAX_GOT];
	char msg[MAX_GOT][160];
};

struct cap {
	struct apc_buf f[MAX_FRAMES];
	size_t n;
	const char *captured; /* NULL: no captured.xml */
	const char *events;   /* NULL: no events.xml */
	int no_data_file;
	size_t chop;          /* bytes cut off the end of 0000000000 */
	const uint8_t *tail;  /* raw bytes appended to 0000000000 */
	size_t tail_len;
	/* what run() found */
	struct got g;
	struct apc_vresult r;
};

/* Knobs of the valid capture, so a fault can change one thing. */
struct base_opts {
	const char *canary;   /* NULL: the right one */
	int no_summary;
	int name_first;       /* the Name frame before the Summary */
	int perf_first;       /* a type-11 frame before the Summary */
	int no_data_msgs;     /* leave out Activity, Block Counter and Counter */
};

#define CAPTURED_COUNTERS \
	"  <counters>\n" \
	"    <counter key=\"0x10\" type=\"Test_activity\"/>\n" \
	"    <counter key=\"0x11\" type=\"Test_cnt0\"/>\n" \
	"    <counter key=\"0x12\" type=\"Test_memory\"/>\n" \
	"  </counters>\n" \
	"</captured>\n"

/* gatord 6.8 (three clocks in the Summary) */
static const char captured_ok[] =
	"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	"<captured version=\"1\" protocol=\"680\" type=\"Gator\">\n"
	"  <target name=\"test\" cores=\"2\"/>\n" CAPTURED_COUNTERS;

/* gatord 9.x (four clocks in the Summary) */
static const char captured_950[] =
	"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	"<captured version=\"1\" protocol=\"950\" type=\"Gator\">\n"
	"  <target name=\"test\" cores=\"2\"/>\n" CAPTURED_COUNTERS;

static const char events_ok[] =
	"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	"<events>\n"
	"  <counter_set name=\"Test_cnt\" count=\"2\"/>\n"
	"  <category name=\"Test\">\n"
	"    <event counter=\"Test_activity\" title=\"A\" name=\"B\" class=\"activity\"/>\n"
	"    <event counter=\"Test_memory\" title=\"Mem\" name=\"Used\"/>\n"
	"  </category>\n"
	"</events>\n";

/* A compact captured.xml (protocol 680) with key 0x10 and then `rest`. */
#define CAPTURED_680(rest)                                                     \
	"<captured protocol=\"680\"><counters><counter key=\"0x10\" type=\"Test_activity\"/>" \
	rest "</counters></captured>"

static struct apc_buf *fr(struct cap *c)
{
	struct apc_buf *b = &c->f[c->n++];

	if (c->n > MAX_FRAMES)
		abort();
	memset(b, 0, sizeof *b);
	return b;
}

static void p32(struct apc_buf *b, int32_t v)
{
	if (apc_buf_reserve(b, APC_PACKED32_MAX) != APC_OK)
		abort();
	apc_buf_put_packed32(b, v);
}

static void p64(struct apc_buf *b, int64_t v)
{
	if (apc_buf_reserve(b, APC_PACKED64_MAX) != APC_OK)
		abort();
	apc_buf_put_packed64(b, v);
}

static void pstr(struct apc_buf *b, const char *s)
{
	if (apc_buf_put_string(b, s, strlen(s)) != APC_OK)
		abort();
}

static void praw(struct apc_buf *b, const void *p, size_t n)
{
	if (apc_buf_put_bytes(b, p, n) != APC_OK)
		abort();
}

/* Packed integers, one for each letter of fmt: 'i' packs v[i] as 32 bits,
 * 'l' as 64.  A message's fields then fit on one line. */
static void pvals(struct apc_buf *b, const char *fmt, const int64_t *v)
{
	for (size_t i = 0; fmt[i]; i++) {
		if (fmt[i] == 'l')
			p64(b, v[i]);
		else
			p32(b, (int32_t)v[i]);
	}
}

/* A new frame, its type written. */
static struct apc_buf *frame(struct cap *c, int32_t type)
{
	struct apc_buf *b = fr(c);

	p32(b, type);
	return b;
}

static void add_summary(struct cap *c, const char *canary)
{
	struct apc_buf *b = frame(c, APC_FRAME_SUMMARY);
	int v9 = c->captured == captured_950;

	p32(b, 1);
	pstr(b, canary);
	p64(b, 1700000000000000000LL); /* wall clock */
	p64(b, 5000);                   /* uptime */
	p64(b, 1000);                   /* monotonic delta */
	if (v9)
		p64(b, 2000);           /* protocol >= 910: a fourth clock */
	pstr(b, "os");
	pstr(b, "linux");
	pstr(b, "");
	pvals(b, "iii", (const int64_t[]){3, 0, 0xd03}); /* core name */
	pstr(b, "Cortex-A53");
}

/* A Name frame for core, its entries left to the caller. */
static struct apc_buf *name_frame(struct cap *c, int core)
{
	struct apc_buf *b = frame(c, APC_FRAME_NAME);

	p32(b, core);
	return b;
}

/* A thread name entry of a Name frame. */
static void name_thread(struct apc_buf *b, int64_t ts, int tid, const char *name)
{
	pvals(b, "ili", (const int64_t[]){2, ts, tid});
	pstr(b, name);
}

/* A cookie (image) name entry of a Name frame. */
static void name_cookie(struct apc_buf *b, int cookie, const char *image)
{
	pvals(b, "ii", (const int64_t[]){1, cookie});
	pstr(b, image);
}

static void add_name(struct cap *c, int core, int64_t ts, int tid, const char *name)
{
	name_thread(name_frame(c, core), ts, tid, name);
}

/* The base capture's Name frame: cookie 2 (its Link's image), then tid
 * 100's name. */
static void add_base_names(struct cap *c)
{
	struct apc_buf *b = name_frame(c, 0);

	name_cookie(b, 2, "app");
	name_thread(b, 10, 100, "main");
}

static void counter_msg(struct apc_buf *b, int64_t ts, int core, int key, int64_t value)
{
	pvals(b, "liil", (const int64_t[]){ts, core, key, value});
}

static void add_counter(struct cap *c, int64_t ts, int core, int key, int64_t value)
{
	counter_msg(frame(c, APC_FRAME_COUNTER), ts, core, key, value);
}

/* A Block Counter frame from (key, value) pairs. */
static void add_block(struct cap *c, int core, const int64_t *kv, size_t npairs)
{
	struct apc_buf *b = frame(c, APC_FRAME_BLOCK_COUNTER);

	p32(b, core);
	for (size_t i = 0; i < npairs; i++)
		pvals(b, "il", kv + 2 * i);
}

/* Scheduler trace messages: (code, ts, tid) triples; switches get state 0. */
static void add_sched(struct cap *c, int core, const int64_t *m, size_t nmsg)
{
	struct apc_buf *b = frame(c, APC_FRAME_SCHED_TRACE);

	p32(b, core);
	for (size_t i = 0; i < nmsg; i++) {
		pvals(b, "ili", m + 3 * i);
		if (m[3 * i] == 1)
			p32(b, 0);
	}
}

/* A frame of `type` whose first field is `first`, then raw bytes. */
static void add_raw(struct cap *c, int32_t type, int first, const void *p, size_t n)
{
	struct apc_buf *b = frame(c, type);

	p32(b, first);
	praw(b, p, n);
}

/* An External frame carrying bytes for fd. */
static void add_external(struct cap *c, int fd, const void *p, size_t n)
{
	add_raw(c, APC_FRAME_EXTERNAL, fd, p, n);
}

static void add_disconnect(struct cap *c, int fd)
{
	pvals(frame(c, APC_FRAME_EXTERNAL), "ii", (const int64_t[]){-1, fd});
}

/* The valid capture, changed by o (NULL: unchanged). */
static void base(struct cap *c, const struct base_opts *o)
{
	static const struct base_opts none;
	struct apc_buf ann = {0};
	struct apc_ann a = {.code = APC_ANN_STR, .text = "hello", .text_len = 5};

	if (!o)
		o = &none;
	memset(c, 0, sizeof *c);
	c->captured = captured_ok;
	c->events = events_ok;
	if (o->perf_first) {
		/* gatord 9.x: a perf-attributes frame first (its kernel's
		 * build id, code 14: 3 bytes) */
		c->captured = captured_950;
		add_raw(c, APC_FRAME_PROC, 0, "\x0e\x03\x01\x02\x03", 5);
	}
	if (o->name_first)
		add_base_names(c);
	if (!o->no_summary)
		add_summary(c, o->canary ? o->canary : APC_NEWLINE_CANARY);
	if (!o->name_first)
		add_base_names(c);
	if (!o->no_data_msgs) {
		const int64_t blk[] = {0, 30, 0x11, 5, 0, 40, 0x11, 6};
		struct apc_buf *b = frame(c, APC_FRAME_ACTIVITY_TRACE);

		pvals(b, "iliii", (const int64_t[]){1, 15, 2, 100, 100});        /* link */
		pvals(b, "iliiiii", (const int64_t[]){2, 20, 0, 0x10, 1, 100, 0}); /* switch */
		add_block(c, 0, blk, 4);
		add_counter(c, 50, 0, 0x12, 7);
	}
	{
		const int64_t s[] = {1, 60, 100};
		add_sched(c, 0, s, 1);
	}
	if (apc_ann_encode_setup(&ann, 4, 100, 100, 0) != APC_OK ||
	    apc_ann_encode(&ann, 4, 1070, &a) != APC_OK)
		abort();
	/* the setup split across two frames, as a client's writes may be */
	add_external(c, 5, ann.p, 4);
	add_external(c, 5, ann.p + 4, ann.len - 4);
	add_disconnect(c, 5);
	apc_buf_free(&ann);
}

static void cap_free(struct cap *c)
{
	for (size_t i = 0; i < c->n; i++)
		apc_buf_free(&c->f[i]);
}

static void put_file(const char *dir, const char *name, const void *p, size_t n)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof path, "%.400s/%.100s", dir, name);
	f = fopen(path, "wb");
	if (!f || (n && fwrite(p, 1, n, f) != n) || fclose(f) != 0)
		abort();
}

/* Write the capture as DIR/x.apc; returns the folder path (static). */
static const char *cap_write(struct cap *c, char *tmp)
{
	static char apc[512];
	struct apc_buf d = {0};

	strcpy(tmp, "/tmp/test_verify-XXXXXX");
	if (!mkdtemp(tmp))
		abort();
	snprintf(apc, sizeof apc, "%.400s/x.apc", tmp);
	if (mkdir(apc, 0755) != 0)
		abort();
	for (size_t i = 0; i < c->n; i++) {
		uint8_t lw[4];
		for (int k = 0; k < 4; k++)
			lw[k] = (uint8_t)(c->f[i].len >> (8 * k));
		praw(&d, lw, 4);
		praw(&d, c->f[i].p, c->f[i].len);
	}
	if (c->tail_len)
		praw(&d, c->tail, c->tail_len);
	if (!c->no_data_file)
		put_file(apc, "0000000000", d.p, d.len - (c->chop < d.len ? c->chop : d.len));
	if (c->captured)
		put_file(apc, "captured.xml", c->captured, strlen(c->captured));
	if (c->events)
		put_file(apc, "events.xml", c->events, strlen(c->events));
	apc_buf_free(&d);
	return apc;
}

static void rm_tree(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[1024];

	if (!d)
		return;
	while ((e = readdir(d))) {
		struct stat st;
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
		if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
			rm_tree(p);
		else
			unlink(p);
	}
	closedir(d);
	rmdir(dir);
}

/* ---- running and collecting ------------------------------------------- */

static void collect(void *ctx, const struct apc_vproblem *p)
{
	struct got *g = ctx;

	if (g->n < MAX_GOT) {
		g->check[g->n] = p->check;
		g->sev[g->n] = p->severity;
		g->frame[g->n] = p->frame;
		snprintf(g->msg[g->n], sizeof g->msg[0], "%.150s", p->msg);
	}
	g->n++;
}

/* Verify the capture or zip at path into g and r; a failure to run at
 * all fails the test. */
static int verify_file(const char *path, struct got *g, struct apc_vresult *r)
{
	struct apc_err err;
	int rc;

	memset(g, 0, sizeof *g);
	rc = apc_verify_path(path, collect, g, r, &err);
	if (rc < 0)
		T_FAIL("apc_verify_path failed: %s", err.msg);
	return rc;
}

/* Write the capture, verify it into c->g and c->r, then free it. */
static int run(struct cap *c)
{
	char tmp[64];
	int rc = verify_file(cap_write(c, tmp), &c->g, &c->r);

	rm_tree(tmp);
	cap_free(c);
	return rc;
}

static void show(const struct got *g)
{
	for (size_t i = 0; i < g->n && i < MAX_GOT; i++)
		fprintf(stderr, "    got [%s] frame %lld: %s\n", g->check[i], (long long)g->frame[i],
			g->msg[i]);
}

/* Exactly check `id` fired (at least once), with severity sev, and nothing
 * else; id NULL: nothing fired at all. */
static void expect_only(const struct got *g, const char *id, int sev)
{
	int bad = id ? g->n == 0 : g->n != 0;

	for (size_t i = 0; id && i < g->n && i < MAX_GOT; i++)
		if (strcmp(g->check[i], id) != 0 || g->sev[i] != sev)
			bad = 1;
	if (!bad)
		return;
	if (id)
		T_FAIL("expected only [%s] as %s, got %zu problems", id,
		       sev == APC_V_ERROR ? "error" : "warning", g->n);
	else
		T_FAIL("expected no problem, got %zu", g->n);
	show(g);
}

/* run() the capture, then expect_only(); returns how many problems. */
static size_t run_only(struct cap *c, const char *id, int sev)
{
	run(c);
	expect_only(&c->g, id, sev);
	return c->g.n;
}

/* The valid capture changed by o (NULL: none), plus the frames add()
 * appends (NULL: none). */
static void fault(const struct base_opts *o, void (*add)(struct cap *), const char *id, int sev)
{
	struct cap c;

	base(&c, o);
	if (add)
		add(&c);
	run_only(&c, id, sev);
}

static void fault_frames(void (*add)(struct cap *), const char *id, int sev)
{
	fault(NULL, add, id, sev);
}

/* The valid capture with these captured.xml and events.xml (NULL: no such
 * file); returns how many problems. */
static size_t fault_xml(const char *captured, const char *events, const char *id, int sev)
{
	struct cap c;

	base(&c, NULL);
	c.captured = captured;
	c.events = events;
	return run_only(&c, id, sev);
}

/* ---- the valid capture ------------------------------------------------ */

static void valid_capture_is_clean(void)
{
	struct cap c;

	base(&c, NULL);
	T_EQ_INT(run(&c), APC_OK);
	if (c.g.n)
		show(&c.g);
	T_EQ_INT(c.g.n, 0);
	T_EQ_U64(c.r.errors, 0);
	T_EQ_U64(c.r.warnings, 0);
	T_EQ_U64(c.r.frames, 9);
	/* link and switch, two block counter values, one counter */
	T_EQ_U64(c.r.data_msgs, 5);
}

/* ---- one fault per check ----------------------------------------------- */

static void f_canary(void)
{
	fault(&(struct base_opts){.canary = "1\n2\n3\n4\n\n5"}, NULL, "canary", APC_V_ERROR);
}

static void f_summary_first(void)
{
	fault(&(struct base_opts){.name_first = 1}, NULL, "summary-first", APC_V_ERROR);
}

static void f_summary_first_perf(void)
{
	fault(&(struct base_opts){.perf_first = 1}, NULL, "summary-first", APC_V_WARNING);
}

static void add_second_summary(struct cap *c) { add_summary(c, APC_NEWLINE_CANARY); }
static void f_summary_repeated(void) { fault_frames(add_second_summary, "summary-repeated", APC_V_ERROR); }

static void f_summary_missing(void)
{
	fault(&(struct base_opts){.no_summary = 1}, NULL, "summary-missing", APC_V_ERROR);
}

static void f_frame_truncated(void)
{
	struct cap c;

	base(&c, NULL);
	c.chop = 2; /* the disconnect frame loses its last bytes */
	T_EQ_INT(run_only(&c, "frame-truncated", APC_V_ERROR), 1);
	T_EQ_INT(c.g.frame[0], 8);

	/* a length word cut short */
	base(&c, NULL);
	c.tail = (const uint8_t *)"\x05\x00";
	c.tail_len = 2;
	run_only(&c, "frame-truncated", APC_V_ERROR);
	T_EQ_INT(c.g.frame[0], 9);
}

static void add_empty_frame(struct cap *c) { fr(c); }
static void f_frame_empty(void) { fault_frames(add_empty_frame, "frame-empty", APC_V_WARNING); }

/* A Counter message (time 100, core 0, key 0x12) whose value is the raw
 * bytes given. */
static void add_counter_raw(struct cap *c, const void *value, size_t n)
{
	struct apc_buf *b = frame(c, APC_FRAME_COUNTER);

	pvals(b, "lii", (const int64_t[]){100, 0, 0x12});
	praw(b, value, n);
}

/* a Counter message that stops after its key */
static void add_cut_counter(struct cap *c) { add_counter_raw(c, "", 0); }
static void f_packed_truncated(void) { fault_frames(add_cut_counter, "packed-truncated", APC_V_ERROR); }

/* a Counter value of 11 bytes: 10 continuation bytes then 0 */
static void add_overlong(struct cap *c)
{
	add_counter_raw(c, "\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x00", 11);
}
static void f_packed_overlong(void) { fault_frames(add_overlong, "packed-overlong", APC_V_ERROR); }

/* 7 written as 0x87 0x00 instead of 0x07 */
static void add_nonminimal(struct cap *c) { add_counter_raw(c, "\x87\x00", 2); }
static void f_packed_nonminimal(void) { fault_frames(add_nonminimal, "packed-nonminimal", APC_V_WARNING); }

static void add_string_overrun(struct cap *c)
{
	struct apc_buf *b = name_frame(c, 0);

	/* thread 101's name: 100 bytes promised, 3 given */
	pvals(b, "ilii", (const int64_t[]){2, 100, 101, 100});
	praw(b, "abc", 3);
}
static void f_string_overrun(void) { fault_frames(add_string_overrun, "string-overrun", APC_V_ERROR); }

/* a perf data frame on core 0: a chunk of 9 bytes promised, 2 given */
static void add_perf_chunk(struct cap *c)
{
	struct apc_buf *b = frame(c, APC_FRAME_PERF_DATA);

	p32(b, 0);
	praw(b, "\x09\0\0\0\x01\x02", 6);
}
static void f_perf_chunk(void) { fault_frames(add_perf_chunk, "perf-chunk", APC_V_ERROR); }

static void add_type8(struct cap *c) { praw(frame(c, 8), "xyz", 3); }
static void f_unknown_frame(void) { fault_frames(add_type8, "unknown-frame", APC_V_WARNING); }

static void add_sched_code9(struct cap *c)
{
	const int64_t s[] = {9, 100, 100};
	add_sched(c, 0, s, 1);
}
static void f_unknown_msg(void) { fault_frames(add_sched_code9, "unknown-msg", APC_V_WARNING); }

/* a Name frame on core -5, its body an unknown code if it were read */
static void add_bad_core(struct cap *c) { pvals(name_frame(c, -5), "i", (const int64_t[]){9}); }
static void f_frame_core(void) { fault_frames(add_bad_core, "frame-core", APC_V_ERROR); }

/* gatord 6.8 Proc frame messages with times: a CPU online (7) or
 * offline (8), and a run of perf counters (10) ended by core -1. */
static void proc_cpu(struct apc_buf *b, int code, int64_t ts, int cpu)
{
	pvals(b, "ili", (const int64_t[]){code, ts, cpu});
}

static void proc_counter(struct apc_buf *b, int64_t ts, int core)
{
	pvals(b, "ilil", (const int64_t[]){10, ts, core, 0x11});
	pvals(b, "li", (const int64_t[]){3, -1});
}

/* Proc frames on core 0, in order as gatord writes them: nothing to say */
static void add_proc_in_order(struct cap *c)
{
	struct apc_buf *b = frame(c, APC_FRAME_PROC);

	p32(b, 0);
	proc_counter(b, 100, 0);
	proc_counter(b, 100, 1);
	b = frame(c, APC_FRAME_PROC);
	p32(b, 0);
	proc_cpu(b, 8, 110, 1);
	proc_cpu(b, 7, 120, 1);
	proc_counter(b, 120, 1);
}
static void proc_in_order(void) { fault_frames(add_proc_in_order, NULL, 0); }

/* a CPU online at 100, then perf counters at 90 in the same Proc frame */
static void add_ts_frame_proc(struct cap *c)
{
	struct apc_buf *b = frame(c, APC_FRAME_PROC);

	p32(b, 0);
	proc_cpu(b, 7, 100, 1);
	proc_counter(b, 90, 1);
}
static void f_ts_frame_proc(void) { fault_frames(add_ts_frame_proc, "ts-frame", APC_V_ERROR); }

/* Proc frames on core 0: a CPU offline at 100, then one online at 90 */
static void add_ts_core_proc(struct cap *c)
{
	struct apc_buf *b = frame(c, APC_FRAME_PROC);

	p32(b, 0);
	proc_cpu(b, 8, 100, 1);
	b = frame(c, APC_FRAME_PROC);
	p32(b, 0);
	proc_cpu(b, 7, 90, 1);
}
static void f_ts_core_proc(void) { fault_frames(add_ts_core_proc, "ts-core", APC_V_ERROR); }

static void add_ts_frame(struct cap *c)
{
	struct apc_buf *b = frame(c, APC_FRAME_COUNTER);

	counter_msg(b, 100, 1, 0x12, 1);
	counter_msg(b, 90, 0, 0x12, 2); /* back in the same frame (other core: no per-core issue) */
}
static void f_ts_frame(void) { fault_frames(add_ts_frame, "ts-frame", APC_V_ERROR); }

static void add_ts_block_frame(struct cap *c)
{
	const int64_t blk[] = {0, 100, 0x11, 1, 0, 90, 0x11, 2};
	add_block(c, 0, blk, 4);
}
static void f_ts_frame_block(void) { fault_frames(add_ts_block_frame, "ts-frame", APC_V_ERROR); }

static void add_ts_core(struct cap *c) { add_counter(c, 45, 0, 0x12, 8); }

/* Message cores: the base capture's target has 2 cores (0 and 1). */
static void add_counter_core2(struct cap *c) { add_counter(c, 100, 2, 0x12, 8); }
static void f_msg_core(void) { fault_frames(add_counter_core2, "msg-core", APC_V_ERROR); }

/* key 2 naming core -3; the value after it is still read (key-undeclared
 * would fire for an undeclared key) */
static void add_block_key2_neg(struct cap *c)
{
	const int64_t blk[] = {0, 100, 2, -3, 0x11, 1};
	add_block(c, 0, blk, 3);
}
static void f_msg_core_block(void) { fault_frames(add_block_key2_neg, "msg-core", APC_V_ERROR); }

static void add_idle_core9(struct cap *c)
{
	pvals(frame(c, APC_FRAME_IDLE), "ili", (const int64_t[]){1, 100, 9});
}
static void f_msg_core_idle(void) { fault_frames(add_idle_core9, "msg-core", APC_V_ERROR); }

static void add_switch_core_neg(struct cap *c)
{
	pvals(frame(c, APC_FRAME_ACTIVITY_TRACE), "iliiiii",
	      (const int64_t[]){2, 100, -1, 0x10, 1, 100, 0});
}
static void f_msg_core_switch(void) { fault_frames(add_switch_core_neg, "msg-core", APC_V_ERROR); }

/* an Annotate frame (core, tid, ts, size, bytes) on core 2 */
static void add_annotate_core2(struct cap *c)
{
	struct apc_buf *b = frame(c, APC_FRAME_ANNOTATE);

	pvals(b, "iili", (const int64_t[]){2, 100, 100, 2});
	praw(b, "hi", 2);
}
static void f_msg_core_annotate(void) { fault_frames(add_annotate_core2, "msg-core", APC_V_ERROR); }

static void add_proc_cores(struct cap *c)
{
	struct apc_buf *b = frame(c, APC_FRAME_PROC);

	p32(b, 0);
	proc_cpu(b, 7, 100, 2);   /* online CPU 2 */
	proc_counter(b, 100, -2); /* -1 ends the run: -2 is a core */
}
static void f_msg_core_proc(void)
{
	struct cap c;

	base(&c, NULL);
	add_proc_cores(&c);
	T_EQ_U64(run_only(&c, "msg-core", APC_V_ERROR), 2);
}

/* Counters on a core msg-core rejects are not ordered on it: core 9 at
 * 100, then at 90 in a later frame, is two msg-core errors, no ts-core. */
static void add_bad_core_back(struct cap *c)
{
	add_counter(c, 100, 9, 0x12, 1);
	add_counter(c, 90, 9, 0x12, 2);
}
static void f_msg_core_not_ordered(void)
{
	struct cap c;

	base(&c, NULL);
	add_bad_core_back(&c);
	T_EQ_U64(run_only(&c, "msg-core", APC_V_ERROR), 2);
}

/* ... but within the frame the order still holds: one msg-core, one ts-frame */
static void msg_core_frame_order(void)
{
	struct cap c;
	struct apc_buf *b;

	base(&c, NULL);
	b = frame(&c, APC_FRAME_COUNTER);
	counter_msg(b, 100, 0, 0x12, 1);
	counter_msg(b, 90, 9, 0x12, 2);
	run(&c);
	T_EQ_U64(c.g.n, 2);
	if (c.g.n == 2) {
		T_ASSERT(!strcmp(c.g.check[0], "msg-core"));
		T_ASSERT(!strcmp(c.g.check[1], "ts-frame"));
	}
}
static void f_ts_core(void) { fault_frames(add_ts_core, "ts-core", APC_V_ERROR); }

/* an Idle message on core 0 before the sched switch at 60 */
static void add_ts_cross(struct cap *c)
{
	pvals(frame(c, APC_FRAME_IDLE), "ili", (const int64_t[]){-1, 55, 0});
}
static void f_ts_cross_type(void) { fault_frames(add_ts_cross, "ts-cross-type", APC_V_WARNING); }

static void add_name_start(struct cap *c) { add_name(c, 0, 5, 101, "worker"); }
static void f_ts_gatord_name(void) { fault_frames(add_name_start, "ts-gatord-name", APC_V_WARNING); }

/* Past the bound of the names table (V_TABLE_MAX, 65536 tids) a new
 * thread's first Name is still taken as first: one Name frame of 65600
 * threads, then one more stamped with its start time. */
static void add_many_names(struct cap *c)
{
	struct apc_buf *b = name_frame(c, 0);

	for (int i = 0; i < 65600; i++)
		name_thread(b, 100 + i, 1000 + i, "t");
	add_name(c, 0, 50, 999999, "late");
}
static void f_ts_gatord_name_many(void) { fault_frames(add_many_names, "ts-gatord-name", APC_V_WARNING); }

static void add_name_again(struct cap *c) { add_name(c, 0, 5, 100, "renamed"); }
static void f_ts_name_not_first(void) { fault_frames(add_name_again, "ts-core", APC_V_ERROR); }

static void add_exit_switch(struct cap *c)
{
	const int64_t s[] = {2, 70, 100, 1, 65, 101};
	add_sched(c, 0, s, 2);
}
static void f_ts_gatord_exit(void) { fault_frames(add_exit_switch, "ts-gatord-exit", APC_V_WARNING); }

/*
 * How far the two quirks may step back (lib/verify.c, V_QUIRK_BACK_NS):
 * the real captures step back 7 ms (first Name) and 5 ms (exit, switch);
 * 1 s is allowed, plus 500 ppm of the time so far for a first Name.
 * Further back is real disorder.  Tid 100's second Name (not a first
 * one) moves the core's last Name time forward first.
 */
#define S_NS INT64_C(1000000000)

static void add_name_far(struct cap *c)
{
	add_name(c, 0, 200 * S_NS, 100, "main2");
	add_name(c, 0, 80 * S_NS, 101, "worker"); /* two minutes back */
}
static void f_ts_gatord_name_far(void) { fault_frames(add_name_far, "ts-core", APC_V_ERROR); }

static void add_name_far_frame(struct cap *c)
{
	struct apc_buf *b = name_frame(c, 0);

	name_thread(b, 200 * S_NS, 100, "main2");
	name_thread(b, 80 * S_NS, 101, "worker");
}
static void f_ts_gatord_name_far_frame(void)
{
	fault_frames(add_name_far_frame, "ts-frame", APC_V_ERROR);
}

static void add_name_near(struct cap *c)
{
	add_name(c, 0, 2 * S_NS, 100, "main2");
	add_name(c, 0, 1100000000, 101, "worker"); /* 900 ms back */
}
static void f_ts_gatord_name_near(void) { fault_frames(add_name_near, "ts-gatord-name", APC_V_WARNING); }

/* Four hours in, 5 s back is within 1 s + 500 ppm of 4 h (8.2 s). */
static void add_name_drift(struct cap *c)
{
	add_name(c, 0, (4 * 3600 + 5) * S_NS, 100, "main2");
	add_name(c, 0, 4 * 3600 * S_NS, 101, "worker");
}
static void f_ts_gatord_name_drift(void) { fault_frames(add_name_drift, "ts-gatord-name", APC_V_WARNING); }

static void add_exit_switch_far(struct cap *c)
{
	const int64_t s[] = {2, 200 * S_NS, 100, 1, 80 * S_NS, 101};
	add_sched(c, 0, s, 2);
}
static void f_ts_gatord_exit_far(void) { fault_frames(add_exit_switch_far, "ts-frame", APC_V_ERROR); }

static void add_exit_switch_far_core(struct cap *c)
{
	const int64_t e[] = {2, 200 * S_NS, 100};
	const int64_t s[] = {1, 80 * S_NS, 101};
	add_sched(c, 0, e, 1);
	add_sched(c, 0, s, 1);
}
static void f_ts_gatord_exit_far_core(void)
{
	fault_frames(add_exit_switch_far_core, "ts-core", APC_V_ERROR);
}

static void add_exit_switch_near(struct cap *c)
{
	const int64_t s[] = {2, 2 * S_NS, 100, 1, 1100000000, 101};
	add_sched(c, 0, s, 2);
}
static void f_ts_gatord_exit_near(void) { fault_frames(add_exit_switch_near, "ts-gatord-exit", APC_V_WARNING); }

static void add_switch_switch(struct cap *c)
{
	const int64_t s[] = {1, 70, 100, 1, 65, 101};
	add_sched(c, 0, s, 2);
}
static void f_ts_sched_real(void) { fault_frames(add_switch_switch, "ts-frame", APC_V_ERROR); }

static void add_undeclared(struct cap *c) { add_counter(c, 100, 0, 0x99, 1); }
static void f_key_undeclared(void) { fault_frames(add_undeclared, "key-undeclared", APC_V_ERROR); }

static void add_mixed(struct cap *c) { add_counter(c, 100, 0, 0x11, 1); }
static void f_key_mixed(void) { fault_frames(add_mixed, "key-mixed", APC_V_ERROR); }

/* An XML 1.1 captured.xml is well-formed (libxml2 only warns): no
 * problem at all. */
static void captured_xml_11(void)
{
	static const char v11[] = "<?xml version=\"1.1\"?>\n"
				  "<captured version=\"1\" protocol=\"680\" type=\"Gator\">\n"
				  "  <target name=\"test\" cores=\"2\"/>\n" CAPTURED_COUNTERS;

	fault_xml(v11, events_ok, NULL, 0);
}

/* key-mixed needs nothing from captured.xml: found without one too. */
static void key_mixed_without_captured(void)
{
	struct cap c;
	int mixed = 0, captured = 0;

	base(&c, NULL);
	add_mixed(&c);
	c.captured = NULL;
	run(&c);
	for (size_t i = 0; i < c.g.n && i < MAX_GOT; i++) {
		mixed += !strcmp(c.g.check[i], "key-mixed") && c.g.sev[i] == APC_V_ERROR;
		captured += !strcmp(c.g.check[i], "captured-xml");
	}
	T_EQ_INT(mixed, 1);
	T_EQ_INT(captured, 1);
	T_EQ_U64(c.g.n, 2);
}

static void add_block_no_ts(struct cap *c)
{
	const int64_t blk[] = {0x11, 9, 0, 100, 0x11, 10};
	add_block(c, 0, blk, 3);
}
static void f_block_no_ts(void) { fault_frames(add_block_no_ts, "block-no-ts", APC_V_ERROR); }

static void add_block_core(struct cap *c)
{
	/* key 2 moves to core 1; after the next key 0, gatord stays on 1 */
	const int64_t blk[] = {0, 100, 2, 1, 0x11, 1, 0, 110, 0x11, 2};
	add_block(c, 0, blk, 5);
}
static void f_block_core_reading(void) { fault_frames(add_block_core, "block-core-reading", APC_V_WARNING); }

static void f_no_data(void)
{
	static const struct base_opts o = {.no_data_msgs = 1};
	struct cap c;

	fault(&o, NULL, "no-data", APC_V_ERROR);
	/* the same in a perf-mode capture is only a warning */
	base(&c, &o);
	c.captured = "<captured version=\"1\" protocol=\"680\" type=\"Perf\"><counters/></captured>";
	run_only(&c, "no-data", APC_V_WARNING);
	T_ASSERT(c.r.perf_mode);
}

static void f_captured_xml(void)
{
	/* none, not well-formed, a key that is no number */
	static const char *const bad[] = {
		NULL, "<captured><counters><counter key=\"0x10\"></counters></captured>",
		"<captured><counters><counter key=\"0x10\"/><counter key=\"0x11\"/>"
		"<counter key=\"0x12\"/><counter key=\"banana\"/></counters></captured>"};

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		fault_xml(bad[i], events_ok, "captured-xml", APC_V_ERROR);
}

static void f_captured_key_dup(void)
{
	static const char dup[] = CAPTURED_680(
		"<counter key=\"0x11\" type=\"Test_cnt0\"/><counter key=\"0x12\" type=\"Test_memory\"/>"
		"<counter key=\"0x12\" type=\"Test_memory\"/>");

	T_EQ_INT(fault_xml(dup, events_ok, "captured-key-dup", APC_V_ERROR), 1);
}

static void f_captured_type(void)
{
	static const char nowhere[] = CAPTURED_680(
		"<counter key=\"0x11\" type=\"Test_cnt1\"/><counter key=\"0x12\" type=\"Nowhere\"/>");

	T_EQ_INT(fault_xml(nowhere, events_ok, "captured-type", APC_V_WARNING), 1);
	/* without events.xml the types are not checked */
	fault_xml(nowhere, NULL, NULL, 0);
}

static void f_events_xml(void)
{
	fault_xml(captured_ok, "<events><event counter=\"x\"></events>", "events-xml", APC_V_ERROR);
}

static void add_bad_fd(struct cap *c) { add_external(c, 70000, "ANNOTATE 4\n", 11); }
static void f_ext_fd(void) { fault_frames(add_bad_fd, "ext-fd", APC_V_ERROR); }

static void add_stray_disconnect(struct cap *c) { add_disconnect(c, 9); }
static void f_ext_disconnect(void) { fault_frames(add_stray_disconnect, "ext-disconnect", APC_V_WARNING); }

/* gatord 6.8's empty External frames: a bare [10], an fd with no bytes,
 * and a bare one again.  One warning, the first told with the count. */
static void f_ext_empty(void)
{
	struct cap c;

	base(&c, NULL);
	frame(&c, APC_FRAME_EXTERNAL);
	add_external(&c, 6, "", 0);
	frame(&c, APC_FRAME_EXTERNAL);
	run_only(&c, "ext-empty", APC_V_WARNING);
	T_ASSERT(c.g.n == 1 && c.g.frame[0] == 9);
	T_ASSERT(strstr(c.g.msg[0], "an External frame with no fd (a bare [10]) (first of 3)") == c.g.msg[0]);
	/* only the fd with no bytes */
	base(&c, NULL);
	add_external(&c, 6, "", 0);
	run_only(&c, "ext-empty", APC_V_WARNING);
	T_ASSERT(c.g.n == 1 && strstr(c.g.msg[0], "an External frame for fd 6 with no bytes: gatord 6.8") == c.g.msg[0]);
}

static void add_no_setup(struct cap *c) { add_external(c, 6, "\x01\x05\x00\x00\x00hello", 10); }
static void f_annotate_setup(void) { fault_frames(add_no_setup, "annotate-setup", APC_V_ERROR); }

/* The right prefix, then a version there is no such protocol of. */
static void add_setup_version_9(struct cap *c)
{
	add_external(c, 6, "ANNOTATE 9\n\x07\0\0\0\x07\0\0\0\0", 20);
}
static void f_annotate_setup_version(void)
{
	fault_frames(add_setup_version_9, "annotate-setup", APC_V_ERROR);
}

/* A valid annotate setup on fd 6, then the 7 raw bytes of one message. */
static void add_setup_then(struct cap *c, const char *msg7)
{
	struct apc_buf b = {0};

	if (apc_ann_encode_setup(&b, 4, 7, 7, 0) != APC_OK)
		abort();
	praw(&b, msg7, 7);
	add_external(c, 6, b.p, b.len);
	apc_buf_free(&b);
}

/* code 0x7e does not exist */
static void add_bad_annotation(struct cap *c) { add_setup_then(c, "\x7e\x02\x00\x00\x00\x00\x00"); }
static void f_annotate_decode(void) { fault_frames(add_bad_annotation, "annotate-decode", APC_V_ERROR); }

/* A string annotation that promises 20 bytes of body and sends 2. */
static void add_cut_annotation(struct cap *c) { add_setup_then(c, "\x01\x14\x00\x00\x00\x05\x00"); }
static void f_annotate_cut(void) { fault_frames(add_cut_annotation, "annotate-cut", APC_V_WARNING); }

/* Cookie 1 is reserved (it ends a Backtrace); cookies below -1 mean nothing. */
static void add_cookie_one(struct cap *c) { name_cookie(name_frame(c, 0), 1, "reserved"); }
static void f_cookie_reserved(void) { fault_frames(add_cookie_one, "cookie-reserved", APC_V_WARNING); }

/* A Backtrace in image 9, which nothing names (its exec cookie 2 is named):
 * core, time, cookie, pid, tid, then the one entry (image, address) and
 * the end. */
static void add_unnamed_image(struct cap *c)
{
	pvals(frame(c, APC_FRAME_BACKTRACE), "iliiiili",
	      (const int64_t[]){0, 70, 2, 100, 100, 9, 0x100, 1});
}
static void f_cookie_unnamed(void) { fault_frames(add_unnamed_image, "cookie-unnamed", APC_V_WARNING); }

static void f_data_file(void)
{
	struct cap c;

	base(&c, NULL);
	c.no_data_file = 1;
	run_only(&c, "data-file", APC_V_ERROR);
}

/* A folder with neither captured.xml nor 0000000000 is no capture: the
 * wrong input (APC_EIO, as apcdump says it), not a capture with a
 * data-file error; nothing is reported as a problem of it. */
static void not_a_capture(void)
{
	struct cap c;
	struct got g = {0};
	struct apc_vresult r;
	struct apc_err err;
	char tmp[64];
	const char *apc;

	base(&c, NULL);
	c.no_data_file = 1;
	c.captured = NULL;
	c.events = NULL;
	apc = cap_write(&c, tmp);
	T_EQ_INT(apc_verify_path(apc, collect, &g, &r, &err), APC_EIO);
	T_EQ_STR(err.msg, "not an .apc capture (no captured.xml, no 0000000000 data file)");
	T_EQ_STR(err.file, apc);
	T_EQ_U64(g.n, 0);
	rm_tree(tmp);
	cap_free(&c);
}

/* A 0000000000 that is a folder is a damaged capture, said so. */
static void data_file_is_dir(void)
{
	struct cap c;
	char tmp[64], sub[600];
	const char *apc;

	base(&c, NULL);
	c.no_data_file = 1;
	apc = cap_write(&c, tmp);
	snprintf(sub, sizeof sub, "%s/0000000000", apc);
	T_ASSERT(mkdir(sub, 0755) == 0);
	verify_file(apc, &c.g, &c.r);
	expect_only(&c.g, "data-file", APC_V_ERROR);
	T_EQ_STR(c.g.msg[0], "0000000000 is a directory, not a data file");
	rm_tree(tmp);
	cap_free(&c);
}

/* libxml2's message as every tool words it: the line once, in front. */
static void xml_error_words(void)
{
	char b[200];

	T_EQ_STR(apc_xml_error_msg(3, "Couldn't find end of Start Tag target line 3\n", b, sizeof b),
		 "line 3: not well-formed XML: couldn't find end of Start Tag target");
	/* another line (where the tag opened) is kept */
	T_EQ_STR(apc_xml_error_msg(5, "Premature end of data in tag counters line 4\n", b, sizeof b),
		 "line 5: not well-formed XML: premature end of data in tag counters line 4");
	/* " line 3" is not the end of " line 13" */
	T_EQ_STR(apc_xml_error_msg(3, "tag x line 13", b, sizeof b),
		 "line 3: not well-formed XML: tag x line 13");
	T_EQ_STR(apc_xml_error_msg(1, "Document is empty\n", b, sizeof b),
		 "line 1: not well-formed XML: document is empty");
	T_EQ_STR(apc_xml_error_msg(0, NULL, b, sizeof b), "line 0: not well-formed XML: not well-formed");
}

/* A problem of an XML file that is there names that file; one that is
 * missing has none to name. */
struct member_files {
	char file[4][600];
	size_t n;
};

static void collect_member_file(void *ctx, const struct apc_vproblem *p)
{
	struct member_files *m = ctx;

	if (m->n < 4)
		snprintf(m->file[m->n], sizeof m->file[0], "%s", p->member_file ? p->member_file : "(null)");
	m->n++;
}

static void member_file_named(void)
{
	struct cap c;
	struct member_files m = {0};
	struct apc_vresult r;
	struct apc_err err;
	char tmp[64], want[600];
	const char *apc;

	base(&c, NULL);
	c.captured = "<?xml version=\"1.0\"?>\n<captured>\n<counters></counterz>\n</captured>\n";
	apc = cap_write(&c, tmp);
	T_EQ_INT(apc_verify_path(apc, collect_member_file, &m, &r, &err), APC_OK);
	snprintf(want, sizeof want, "%s/captured.xml", apc);
	T_ASSERT(m.n >= 1);
	T_EQ_STR(m.file[0], want);
	rm_tree(tmp);
	cap_free(&c);

	memset(&m, 0, sizeof m);
	base(&c, NULL);
	c.captured = NULL;
	apc = cap_write(&c, tmp);
	T_EQ_INT(apc_verify_path(apc, collect_member_file, &m, &r, &err), APC_OK);
	T_EQ_U64(m.n, 1);
	T_EQ_STR(m.file[0], "(null)");
	rm_tree(tmp);
	cap_free(&c);
}

/*
 * The capture folder zipped as x.apc.zip beside it, cut to its first
 * `keep` bytes, or without its last `drop` ones; returns its path (static).
 */
static const char *zip_capture(const char *apc, const char *tmp, size_t keep, size_t drop)
{
	static const char *const names[] = {"0000000000", "captured.xml", "events.xml", "session.xml"};
	static char zip[512];
	struct archive *a = archive_write_new();
	uint8_t *z;
	size_t len;

	snprintf(zip, sizeof zip, "%.400s/x.apc.zip", tmp);
	archive_write_set_format_zip(a);
	if (archive_write_open_filename(a, zip) != ARCHIVE_OK)
		abort();
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		char path[512], name[64];
		struct archive_entry *e = archive_entry_new();
		uint8_t *d;
		size_t n;

		snprintf(path, sizeof path, "%.400s/%s", apc, names[i]);
		snprintf(name, sizeof name, "x.apc/%s", names[i]);
		if (!(d = t_read_file(path, &n)))
			abort();
		archive_entry_set_pathname(e, name);
		archive_entry_set_filetype(e, AE_IFREG);
		archive_entry_set_perm(e, 0644);
		archive_entry_set_size(e, (la_int64_t)n);
		if (archive_write_header(a, e) != ARCHIVE_OK ||
		    archive_write_data(a, d, n) != (la_ssize_t)n)
			abort();
		archive_entry_free(e);
		free(d);
	}
	archive_write_close(a);
	archive_write_free(a);
	/* cut it */
	if (!(z = t_read_file(zip, &len)))
		abort();
	if (keep > len)
		keep = len;
	if (drop)
		keep = drop < len ? len - drop : 0;
	put_file(tmp, "x.apc.zip", z, keep);
	free(z);
	return zip;
}

/*
 * archive: a zipped capture without its end of central directory record
 * (the last 22 bytes) has every member whole, and only that problem; one
 * cut inside its first header has nothing to check, and that is a
 * problem with the capture (exit 1), not a failure to read it.
 */
static void f_archive(void)
{
	struct cap c;
	char tmp[64];
	const char *apc;

	base(&c, NULL);
	apc = cap_write(&c, tmp);
	cap_free(&c);
	/* whole, as its captured.xml (no local_capture) says: a session.xml */
	put_file(apc, "session.xml", "<session version=\"1\"/>\n", 23);
	T_EQ_INT(verify_file(zip_capture(apc, tmp, 0, 22), &c.g, &c.r), APC_OK);
	expect_only(&c.g, "archive", APC_V_ERROR);
	T_ASSERT(c.g.n == 1 && strstr(c.g.msg[0], "offset 0x") == c.g.msg[0] &&
		 strstr(c.g.msg[0], ": truncated zip archive: it has no end of central directory "
				    "record") != NULL);
	T_ASSERT(c.r.frames > 0);

	T_EQ_INT(verify_file(zip_capture(apc, tmp, 20, 0), &c.g, &c.r), APC_OK);
	expect_only(&c.g, "archive", APC_V_ERROR);
	T_ASSERT(c.g.n == 1 && strstr(c.g.msg[0], "offset 0x14: truncated zip archive: it ends inside "
						  "its first member header") != NULL);
	T_EQ_INT(c.r.errors, 1);
	rm_tree(tmp);
}

/*
 * Every check in the table has a test above (keep this list in step),
 * except "decode": it fires only when the shared decoder and this walker
 * disagree, which no valid-by-the-walker fault can provoke on purpose.
 */
static void every_check_is_tested(void)
{
	static const char *const tested[] = {
		"archive", "data-file", "frame-truncated", "frame-empty", "frame-core", "msg-core",
		"packed-truncated", "perf-chunk",
		"packed-overlong", "packed-nonminimal", "string-overrun", "unknown-frame",
		"unknown-msg", "canary", "summary-first", "summary-repeated",
		"summary-missing", "ts-frame", "ts-core", "ts-cross-type", "ts-gatord-name",
		"ts-gatord-exit", "key-undeclared", "key-mixed", "block-no-ts",
		"block-core-reading", "no-data", "captured-xml", "captured-key-dup",
		"captured-type", "events-xml", "ext-fd", "ext-disconnect", "ext-empty", "annotate-setup",
		"annotate-decode", "annotate-cut", "cookie-reserved", "cookie-unnamed", "ts-before-start",
		NULL};
	size_t n = 0;

	for (const struct apc_vcheck *k = apc_verify_checks; k->id; k++, n++) {
		int found = 0;
		for (size_t i = 0; tested[i]; i++)
			found |= !strcmp(tested[i], k->id);
		if (!found && strcmp(k->id, "decode") != 0)
			T_FAIL("check %s has no test", k->id);
	}
	T_EQ_INT(n, sizeof tested / sizeof tested[0]); /* the NULL stands for "decode" */
}

/* ---- hostile input --------------------------------------------------------- */

/* Random bytes after a valid start: never a crash, always some problem. */
static void random_garbage(void)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL;

	for (int round = 0; round < 40; round++) {
		struct cap c;
		uint8_t junk[300];
		size_t n = 1 + (size_t)(round * 7) % sizeof junk;

		for (size_t i = 0; i < n; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			junk[i] = (uint8_t)x;
		}
		/* a frame header claiming the junk, so it is walked, not just cut */
		base(&c, NULL);
		praw(fr(&c), junk, n);
		T_EQ_INT(run(&c), APC_OK);
		T_EQ_U64(c.r.frames, 10);
	}
}

/*
 * Counter messages on 200000 different cores, with no <target cores>:
 * those below the 4096 a capture is read with are ordered per core, the
 * rest are msg-core errors that add nothing to the per-core tables, and
 * the walk still reads every message.
 */
static void many_cores_bounded(void)
{
	struct cap c;
	struct apc_buf *b;

	base(&c, NULL);
	c.captured = CAPTURED_680("<counter key=\"0x11\" type=\"Test_cnt0\"/>"
				  "<counter key=\"0x12\" type=\"Test_memory\"/>");
	b = frame(&c, APC_FRAME_COUNTER);
	for (int32_t core = 0; core < 200000; core++)
		counter_msg(b, 100, core, 0x12, core);
	T_EQ_INT(run(&c), APC_OK);
	T_EQ_U64(c.g.n, 200000 - APC_MAX_CORES);
	T_EQ_U64(c.r.errors, 200000 - APC_MAX_CORES);
	T_ASSERT(!strcmp(c.g.check[0], "msg-core"));
	T_EQ_U64(c.r.data_msgs, 5 + 200000);
}

/* ---- real captures ------------------------------------------------------- */

static void real_captures_have_no_errors(void)
{
	static const char *const names[] = {"v68_nonroot.apc", "v68_nonroot_annotate.apc",
					    "v68_sleep.apc", "sleep_counters.apc"};
	const char *root = t_shared_testdata();

	if (!root)
		T_SKIP("../shared/testdata is absent");
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		char path[512];
		struct got g;
		struct apc_vresult r;

		snprintf(path, sizeof path, "%s/apc/%s", root, names[i]);
		T_EQ_INT(verify_file(path, &g, &r), APC_OK);
		if (r.errors) {
			T_FAIL("%s has %llu errors", names[i], (unsigned long long)r.errors);
			show(&g);
		}
		T_ASSERT(r.frames > 0);
		/* each warning says why it is accepted */
		for (size_t k = 0; k < g.n && k < MAX_GOT; k++)
			T_ASSERT(g.sev[k] == APC_V_WARNING);
	}
}

void run_tests(void)
{
	T_RUN(valid_capture_is_clean);
	T_RUN(f_canary);
	T_RUN(f_summary_first);
	T_RUN(f_summary_first_perf);
	T_RUN(f_summary_repeated);
	T_RUN(f_summary_missing);
	T_RUN(f_frame_truncated);
	T_RUN(f_frame_empty);
	T_RUN(f_packed_truncated);
	T_RUN(f_packed_overlong);
	T_RUN(f_packed_nonminimal);
	T_RUN(f_string_overrun);
	T_RUN(f_perf_chunk);
	T_RUN(f_unknown_frame);
	T_RUN(f_unknown_msg);
	T_RUN(f_frame_core);
	T_RUN(f_msg_core);
	T_RUN(f_msg_core_block);
	T_RUN(f_msg_core_idle);
	T_RUN(f_msg_core_switch);
	T_RUN(f_msg_core_annotate);
	T_RUN(f_msg_core_proc);
	T_RUN(f_msg_core_not_ordered);
	T_RUN(msg_core_frame_order);
	T_RUN(proc_in_order);
	T_RUN(f_ts_frame_proc);
	T_RUN(f_ts_core_proc);
	T_RUN(f_ts_frame);
	T_RUN(f_ts_frame_block);
	T_RUN(f_ts_core);
	T_RUN(f_ts_cross_type);
	T_RUN(f_ts_gatord_name);
	T_RUN(f_ts_name_not_first);
	T_RUN(f_ts_gatord_name_many);
	T_RUN(f_ts_gatord_exit);
	T_RUN(f_ts_gatord_name_far);
	T_RUN(f_ts_gatord_name_far_frame);
	T_RUN(f_ts_gatord_name_near);
	T_RUN(f_ts_gatord_name_drift);
	T_RUN(f_ts_gatord_exit_far);
	T_RUN(f_ts_gatord_exit_far_core);
	T_RUN(f_ts_gatord_exit_near);
	T_RUN(f_ts_sched_real);
	T_RUN(f_key_undeclared);
	T_RUN(f_key_mixed);
	T_RUN(f_block_no_ts);
	T_RUN(f_block_core_reading);
	T_RUN(f_no_data);
	T_RUN(f_captured_xml);
	T_RUN(f_captured_key_dup);
	T_RUN(f_captured_type);
	T_RUN(f_events_xml);
	T_RUN(f_ext_fd);
	T_RUN(f_ext_disconnect);
	T_RUN(f_ext_empty);
	T_RUN(f_annotate_setup);
	T_RUN(f_annotate_setup_version);
	T_RUN(f_annotate_decode);
	T_RUN(f_annotate_cut);
	T_RUN(f_cookie_reserved);
	T_RUN(f_cookie_unnamed);
	T_RUN(f_data_file);
	T_RUN(not_a_capture);
	T_RUN(data_file_is_dir);
	T_RUN(xml_error_words);
	T_RUN(member_file_named);
	T_RUN(f_archive);
	T_RUN(every_check_is_tested);
	T_RUN(key_mixed_without_captured);
	T_RUN(captured_xml_11);
	T_RUN(random_garbage);
	T_RUN(many_cores_bounded);
	T_RUN(real_captures_have_no_errors);
}
