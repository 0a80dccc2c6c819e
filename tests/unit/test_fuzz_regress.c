/*
 * test_fuzz_regress.c - replays every committed fuzz input (the minimised
 * crashers in fuzz/regress/TARGET/) through the same entry points the libFuzzer
 * binaries use, without libFuzzer; and feeds hand-built hostile inputs
 * (lengths and counts near 2^32 and 2^64, huge declared sizes in tiny
 * files, deep nesting, entity expansion) to the decoders, checking they
 * fail cleanly with an offset, quickly, and without expanding anything.
 *
 * A regression shows as a sanitizer report (make check SANITIZE=1), an
 * abort() from a target's own checks, or an input that takes too long.
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "../../fuzz/targets.c"
#include "t.h"

/* One committed input may take this long (sanitizers included). */
#define REGRESS_MAX_SECONDS 20.0

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *root_dir(void)
{
	const char *r = getenv("APC_ROOT");
	return r && *r ? r : ".";
}

static int read_whole(const char *path, uint8_t **buf, size_t *len)
{
	FILE *f = fopen(path, "rb");
	long n;

	if (!f)
		return -1;
	if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
		fclose(f);
		return -1;
	}
	*buf = malloc((size_t)n + 1);
	if (!*buf || fread(*buf, 1, (size_t)n, f) != (size_t)n) {
		free(*buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	*len = (size_t)n;
	return 0;
}

/*
 * Replay every file of every target folder under `top` (relative to the
 * project root).  Returns the number of inputs run, or -1 if top is
 * absent.  A folder that names no target is a failure (a typo would
 * silently stop replaying its inputs).
 */
static long replay_tree(const char *top)
{
	char dir[1024], path[2048];
	DIR *d, *t;
	struct dirent *e, *f;
	long count = 0;

	snprintf(dir, sizeof dir, "%s/%s", root_dir(), top);
	if (!(d = opendir(dir)))
		return -1;
	while ((e = readdir(d))) {
		int (*fn)(const uint8_t *, size_t);
		char sub[1536];
		if (e->d_name[0] == '.')
			continue;
		fn = apc_fuzz_find(e->d_name);
		if (!fn) {
			T_FAIL("%s/%s does not name a fuzz target", top, e->d_name);
			continue;
		}
		snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
		if (!(t = opendir(sub)))
			continue;
		while ((f = readdir(t))) {
			uint8_t *buf;
			size_t len;
			double t0;
			if (f->d_name[0] == '.')
				continue;
			snprintf(path, sizeof path, "%s/%s", sub, f->d_name);
			if (read_whole(path, &buf, &len) != 0) {
				T_FAIL("cannot read %s", path);
				continue;
			}
			t0 = now_s();
			fn(buf, len);
			if (now_s() - t0 > REGRESS_MAX_SECONDS)
				T_FAIL("%s took %.1f s", path, now_s() - t0);
			free(buf);
			count++;
		}
		closedir(t);
	}
	closedir(d);
	return count;
}

static void test_regress_inputs(void)
{
	long n = replay_tree("fuzz/regress");

	if (n < 0)
		T_SKIP("fuzz/regress is absent");
	/* Crashers are committed with their fixes: there is at least one. */
	T_ASSERT(n > 0);
	printf("# replayed %ld fuzz regression inputs\n", n);
}

/*
 * An APC input whose Block Counter times are negative (before the capture
 * start; fuzz/regress/convert/apc-time-before-start-written-negative):
 * the APC reader keeps them at the start and counts them, so the time
 * span stays sane (it once read 18446563753 s) and nothing relies on the
 * writer's own guard against times past 2^63 ns.
 */
static void test_apc_time_before_start(void)
{
	char path[2048];
	uint8_t *buf = NULL;
	size_t len = 0;
	struct apc_conv_result res;
	uint64_t before = 0, past = 0;

	snprintf(path, sizeof path, "%s/fuzz/regress/convert/apc-time-before-start-written-negative",
		 root_dir());
	if (read_whole(path, &buf, &len) != 0 || len < 2) {
		free(buf);
		T_FAIL("cannot read %s", path);
		return;
	}
	T_EQ_INT(buf[0] % 6, 5); /* the apc entry of apc_fuzz_convert's table */
	/* the input is cut later on: kept up to there */
	T_EQ_INT(fz_convert(fz_tree(buf + 1, len - 1, "cap.apc", fz_apc_members, 3), "apc", 0, &res), APC_EDATA);
	T_ASSERT(res.output[0] != '\0');
	for (size_t i = 0; i < res.model.nunmapped; i++) {
		if (strstr(res.model.unmapped[i].what, "before the capture start"))
			before = res.model.unmapped[i].count;
		if (strstr(res.model.unmapped[i].what, "past 2^63"))
			past = res.model.unmapped[i].count;
	}
	T_EQ_U64(before, 3);
	T_EQ_U64(past, 0);
	T_ASSERT(res.last_ts - res.first_ts < 50000ull * 1000000000ull); /* its times reach 41666 s */
	apc_conv_result_free(&res);
	free(buf);
}

/* Every target runs on nothing, one byte and a lone separator. */
static void test_targets_on_trivial_input(void)
{
	static const char *const names[] = {"barman", "ltt_block", "eventdefs", "tptp_bin",
					    "tptp_xml", "apc", "annotate", "verify", "convert"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		int (*fn)(const uint8_t *, size_t) = apc_fuzz_find(names[i]);
		T_ASSERT(fn != NULL);
		if (!fn)
			continue;
		T_EQ_INT(fn((const uint8_t *)"", 0), 0);
		T_EQ_INT(fn((const uint8_t *)"\0", 1), 0);
		T_EQ_INT(fn((const uint8_t *)FZ_SEP, FZ_SEP_LEN), 0);
	}
	T_ASSERT(apc_fuzz_find("no-such-target") == NULL);
}

/* ---- hostile inputs ------------------------------------------------------ */

static void put32le(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* Read the first frame of a data file made of `n` bytes. */
static int first_frame(const uint8_t *p, size_t n, struct apc_err *err)
{
	const char *path = fz_file(p, n, "hostile0");
	struct apc_stream *s;
	struct apc_frame_reader *fr;
	struct apc_frame f;
	int rc;

	apc_err_clear(err);
	if ((rc = apc_stream_open_path(path, &s, err)) < 0)
		return rc;
	if ((rc = apc_frame_reader_new(s, &fr, err)) == APC_OK) {
		rc = apc_frame_read(fr, &f, err);
		apc_frame_reader_free(fr);
	}
	apc_stream_close(s);
	return rc;
}

/* Frame lengths of 2^31-1, 2^32-1 (negative as int32) and 2^26+1 in a
 * tiny file: refused at offset 0 without reading or allocating them. */
static void test_hostile_frame_lengths(void)
{
	static const uint32_t lens[] = {0x7fffffffu, 0xffffffffu, 0x80000000u, (64u << 20) + 1,
					0xfffffff0u};
	uint8_t buf[16] = {0};
	struct apc_err err;

	for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
		put32le(buf, lens[i]);
		buf[4] = 1; /* a summary frame code, then nothing */
		double t0 = now_s();
		int rc = first_frame(buf, sizeof buf, &err);
		T_EQ_INT(rc, APC_EDATA);
		T_EQ_INT(err.offset, 0);
		T_ASSERT(err.msg[0] != '\0');
		T_ASSERT(now_s() - t0 < 2.0);
	}
	/* A length that fits the limit but not the file: truncated body. */
	put32le(buf, 1000);
	T_EQ_INT(first_frame(buf, sizeof buf, &err), APC_EDATA);
	T_ASSERT(strstr(err.msg, "") != NULL && err.offset >= 0);
}

/* A Name frame whose string length is a packed32 near 2^32, and packed
 * integers that never end (2^64 and beyond): decode errors, not reads
 * past the frame. */
static void test_hostile_packed(void)
{
	/* body: code 3 (name), core 0, message 1 (core name), ts?, then a
	 * string length of 0xffffffff as packed: ff ff ff ff 0f */
	static const uint8_t longstr[] = {0x03, 0x00, 0x01, 0x00, 0xff, 0xff, 0xff, 0xff, 0x0f, 'x'};
	/* body: code 3, then a packed64 of 11 continuation bytes */
	static const uint8_t overlong[] = {0x03, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
					   0x80, 0x80, 0x80, 0x01};
	const uint8_t *bodies[] = {longstr, overlong};
	size_t lens[] = {sizeof longstr, sizeof overlong};

	for (size_t k = 0; k < 2; k++) {
		uint8_t buf[64];
		struct apc_frame f;
		struct apc_msg_iter it;
		struct apc_msg m;
		struct apc_err err;
		int rc = APC_OK, steps = 0;

		memset(&f, 0, sizeof f);
		f.body = bodies[k];
		f.len = (uint32_t)lens[k];
		f.type = 3;
		f.core = -1;
		f.hdr_len = 1;
		memcpy(buf, bodies[k], lens[k]);
		apc_err_clear(&err);
		apc_msg_iter_init(&it, &f, 0);
		while (steps++ < 100 && (rc = apc_msg_next(&it, &m, &err)) == APC_OK)
			;
		/* Damage, with an offset inside the frame: never a field
		 * reaching past the body. */
		T_ASSERT(steps < 100);
		T_EQ_INT(rc, APC_EDATA);
		T_ASSERT(err.offset >= 0 && err.offset <= (int64_t)lens[k]);
		(void)buf;
	}
}

/* Annotate bodies declaring 2^32-1 and 2^31 bytes after a valid setup:
 * refused at once (over APC_ANN_BODY_MAX) with the message's offset,
 * not buffered while waiting for bytes that will never come. */
static void test_hostile_annotate_lengths(void)
{
	static const uint32_t lens[] = {0xffffffffu, 0x80000000u, APC_ANN_BODY_MAX + 1};

	for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
		uint8_t buf[64];
		size_t n = 0;
		struct apc_ann_decoder *d = apc_ann_decoder_new("hostile");
		struct apc_ann_msg m;
		struct apc_err err;
		int rc, sawdata = 0;

		memcpy(buf, "ANNOTATE 4\n", 11);
		n = 11;
		put32le(buf + n, 42);
		put32le(buf + n + 4, 42);
		buf[n + 8] = 0;
		n += 9;
		size_t msg_off = n;
		buf[n++] = APC_ANN_STR;
		put32le(buf + n, lens[i]);
		n += 4;
		memcpy(buf + n, "hi", 2);
		n += 2;
		T_ASSERT(d != NULL);
		if (!d)
			return;
		apc_err_clear(&err);
		T_EQ_INT(apc_ann_decoder_feed(d, buf, n, &err), APC_OK);
		rc = apc_ann_decoder_next(d, &m, &err);
		T_EQ_INT(rc, APC_OK);
		T_ASSERT(m.is_setup);
		for (int k = 0; k < 10 && (rc = apc_ann_decoder_next(d, &m, &err)) == APC_OK; k++)
			sawdata = 1;
		T_EQ_INT(sawdata, 0);
		T_EQ_INT(rc, APC_EDATA);
		T_EQ_INT(err.offset, (int64_t)msg_off);
		apc_ann_decoder_free(d);
	}
}

/* Run `fmt` over the file at path; returns the final status, err set. */
static int read_status(const char *path, const struct apc_format *fmt, struct apc_err *err,
		       struct apc_model *m, uint64_t *maxlen)
{
	struct apc_input *in;
	struct apc_reader r;
	struct apc_batch b;
	int rc;

	*maxlen = 0;
	if ((rc = apc_input_open(path, &in, err)) < 0)
		return rc;
	memset(&r, 0, sizeof r);
	r.fmt = fmt;
	r.inputs = &in;
	r.ninputs = 1;
	r.model = m;
	apc_batch_init(&b, 256);
	rc = fmt->open(&r);
	while (rc >= 0) {
		apc_batch_reset(&b);
		rc = fmt->next(&r, &b);
		for (size_t i = 0; i < b.n; i++)
			if ((b.ev[i].type == APC_EV_THREAD_NAME || b.ev[i].type == APC_EV_COOKIE_NAME) &&
			    b.ev[i].u.name.name && strlen(b.ev[i].u.name.name) > *maxlen)
				*maxlen = strlen(b.ev[i].u.name.name);
		if (rc == APC_END)
			break;
	}
	*err = r.err;
	if (fmt->close)
		fmt->close(&r);
	apc_batch_free(&b);
	apc_input_close(in);
	return rc == APC_END ? APC_OK : rc;
}

static const char billion_laughs_dtd[] =
	"<?xml version=\"1.0\"?>\n<!DOCTYPE TRACE [\n <!ENTITY lol \"lol\">\n"
	" <!ENTITY lol1 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">\n"
	" <!ENTITY lol2 \"&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;\">\n"
	" <!ENTITY lol3 \"&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;\">\n"
	" <!ENTITY lol4 \"&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;\">\n"
	" <!ENTITY lol5 \"&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;\">\n"
	" <!ENTITY lol6 \"&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;\">\n"
	" <!ENTITY lol7 \"&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;\">\n"
	" <!ENTITY lol8 \"&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;\">\n"
	" <!ENTITY lol9 \"&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;\">\n"
	" <!ENTITY ext SYSTEM \"file:///etc/passwd\">\n"
	"]>\n";

/* TPTP XML with a billion-laughs DTD and an external entity in a thread
 * name: read quickly, nothing expanded (no name near 3*10^9 bytes, no
 * file contents), no crash. */
static void test_hostile_tptp_entities(void)
{
	char doc[8192];
	struct apc_err err;
	struct apc_model m;
	uint64_t maxlen;
	double t0;

	snprintf(doc, sizeof doc,
		 "%s<TRACE>\n<node nodeId=\"1\" hostname=\"h\" time=\"1.0\"/>\n"
		 "<traceStart traceId=\"t\" time=\"1.0\"/>\n"
		 "<threadStart threadId=\"1\" time=\"1.5\" threadName=\"&lol9;\"/>\n"
		 "<threadStart threadId=\"2\" time=\"1.6\" threadName=\"&ext;\"/>\n"
		 "<threadStart threadId=\"3\" time=\"1.7\" threadName=\"ok\"/>\n"
		 "</TRACE>\n", billion_laughs_dtd);
	apc_model_init(&m);
	t0 = now_s();
	int rc = read_status(fz_file((const uint8_t *)doc, strlen(doc), "laughs.trcxml"),
			     &apc_format_tptp_xml, &err, &m, &maxlen);
	T_ASSERT(now_s() - t0 < 5.0);
	T_ASSERT(rc == APC_OK || rc == APC_EDATA);
	T_ASSERT(maxlen < 4096);
	apc_model_free(&m);
	/* The fuzz entry (which checks every event) agrees. */
	T_EQ_INT(apc_fuzz_tptp_xml((const uint8_t *)doc, strlen(doc)), 0);
}

/* The same DTD in captured.xml and events.xml of an .apc folder, and in
 * an LTT system.xml and eventdefs file: quick, bounded. */
static void test_hostile_xml_members(void)
{
	char doc[16384];
	double t0;
	int n;

	/* captured.xml / events.xml: section 0 empty data file. */
	n = snprintf(doc, sizeof doc,
		     "%s" FZ_SEP "%s<captured version=\"1\"><target name=\"&lol9;\" cores=\"1\"/>"
		     "</captured>" FZ_SEP "%s<events><counter_set name=\"&lol9;\"/></events>",
		     "\x05\x00\x00\x00\x01\x00\x00\x00\x00", billion_laughs_dtd, billion_laughs_dtd);
	t0 = now_s();
	apc_fuzz_apc((const uint8_t *)doc, (size_t)n);
	apc_fuzz_verify((const uint8_t *)doc, (size_t)n);
	T_ASSERT(now_s() - t0 < 10.0);
	/* LTT: cpu/0 empty, system.xml and core.xml with the DTD. */
	n = snprintf(doc, sizeof doc,
		     "" FZ_SEP "%s<system ltt_block_size=\"&lol9;\" node_name=\"&lol9;\" cpu=\"1\"/>"
		     FZ_SEP "%s<facility name=\"&lol9;\"><event name=\"&lol9;\"/></facility>",
		     billion_laughs_dtd, billion_laughs_dtd);
	t0 = now_s();
	apc_fuzz_ltt_block((const uint8_t *)doc, (size_t)n);
	apc_fuzz_eventdefs((const uint8_t *)doc + FZ_SEP_LEN, (size_t)n - FZ_SEP_LEN);
	T_ASSERT(now_s() - t0 < 10.0);
}

/* 100000 nested elements: the tolerant LTT parser refuses past its
 * documented depth; libxml2 (TPTP, captured.xml) stops at its own limit. */
static void test_hostile_deep_nesting(void)
{
	const size_t depth = 100000;
	char *doc = malloc(depth * 15 + 64);
	size_t n = 0;
	struct apc_ltt_xnode *root;
	struct apc_err err;
	double t0;

	T_ASSERT(doc != NULL);
	if (!doc)
		return;
	n += (size_t)sprintf(doc, "<TRACE>");
	for (size_t i = 0; i < depth; i++) {
		memcpy(doc + n, "<a>", 3);
		n += 3;
	}
	for (size_t i = 0; i < depth; i++) {
		memcpy(doc + n, "</a>", 4);
		n += 4;
	}
	n += (size_t)sprintf(doc + n, "</TRACE>");
	t0 = now_s();
	apc_err_clear(&err);
	int rc = apc_ltt_xml_parse(doc, n, "deep.xml", &root, &err);
	T_ASSERT(rc < 0);
	if (rc == APC_OK)
		apc_ltt_xml_free(root);
	else
		T_ASSERT(strstr(err.msg, "deep") || strstr(err.msg, "nest") || strstr(err.msg, "depth"));
	apc_fuzz_tptp_xml((const uint8_t *)doc, n);
	apc_fuzz_eventdefs((const uint8_t *)doc, n);
	T_ASSERT(now_s() - t0 < 20.0);
	free(doc);
}

/* ---- the in-memory input the targets run on ---------------------------- */

/* Everything a stream gives, as one buffer (NULL on error). */
static uint8_t *stream_all(struct apc_stream *s, size_t *n)
{
	uint8_t *b;
	struct apc_err err;

	if (apc_stream_slurp(s, 1 << 20, &b, n, &err) < 0)
		return NULL;
	return b;
}

/* apc_input_mem_set: files are streams with their bytes and size, folders
 * list what lies under them (sorted, relative), empty folders exist,
 * other paths do not, and members open by their relative path. */
static void test_mem_input(void)
{
	static const uint8_t gz_hi[] = {0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
					0x03, 0xcb, 0xc8, 0x04, 0x00, 0xac, 0x2a, 0x93, 0xd8,
					0x02, 0x00, 0x00, 0x00}; /* gzip of "hi" */
	const struct apc_mem_file files[] = {
		{"/m/t/info/system.xml", (const uint8_t *)"<system/>", 9},
		{"/m/t/cpu/0", (const uint8_t *)"\1\2\3", 3},
		{"/m/plain", (const uint8_t *)"hello", 5},
		{"/m/z.gz", gz_hi, sizeof gz_hi},
		{"/m/empty", NULL, 0},
	};
	struct apc_input *in;
	struct apc_stream *s;
	struct apc_err err;
	const char *const *names;
	uint8_t *b;
	size_t n;

	apc_input_mem_set(files, sizeof files / sizeof files[0]);
	/* a file */
	T_EQ_INT(apc_input_open("/m/plain", &in, &err), APC_OK);
	T_EQ_INT(apc_input_is_tree(in), 0);
	s = apc_input_stream(in);
	T_EQ_INT(apc_stream_size(s), 5);
	b = stream_all(s, &n);
	T_ASSERT(b && n == 5 && memcmp(b, "hello", 5) == 0);
	free(b);
	apc_input_close(in);
	/* gzip is detected as for a file on disk */
	T_EQ_INT(apc_input_open("/m/z.gz", &in, &err), APC_OK);
	T_EQ_STR(apc_input_kind(in), "gzip");
	b = stream_all(apc_input_stream(in), &n);
	T_ASSERT(b && n == 2 && memcmp(b, "hi", 2) == 0);
	free(b);
	apc_input_close(in);
	T_EQ_INT(apc_stream_open_path("/m/z.gz", &s, &err), APC_OK);
	b = stream_all(s, &n);
	T_ASSERT(b && n == 2 && memcmp(b, "hi", 2) == 0);
	free(b);
	apc_stream_close(s);
	/* a folder (trailing slash too), sorted members, one opened */
	T_EQ_INT(apc_input_open("/m/t/", &in, &err), APC_OK);
	T_EQ_INT(apc_input_is_tree(in), 1);
	T_EQ_INT(apc_input_members(in, &names, &n), APC_OK);
	T_EQ_INT(n, 2);
	if (n == 2) {
		T_EQ_STR(names[0], "cpu/0");
		T_EQ_STR(names[1], "info/system.xml");
	}
	T_ASSERT(apc_input_has(in, "cpu/0") && !apc_input_has(in, "cpu"));
	T_EQ_INT(apc_input_open_member(in, "info/system.xml", &s, &err), APC_OK);
	T_EQ_STR(apc_stream_name(s), "/m/t/info/system.xml");
	b = stream_all(s, &n);
	T_ASSERT(b && n == 9 && memcmp(b, "<system/>", 9) == 0);
	free(b);
	apc_stream_close(s);
	T_ASSERT(apc_input_open_member(in, "cpu/1", &s, &err) < 0);
	apc_input_close(in);
	/* an empty folder exists and has no members */
	T_EQ_INT(apc_input_open("/m/empty", &in, &err), APC_OK);
	T_EQ_INT(apc_input_members(in, &names, &n), APC_OK);
	T_EQ_INT(n, 0);
	apc_input_close(in);
	/* nothing else does, on disk or not */
	T_ASSERT(apc_input_open("/m/nope", &in, &err) < 0);
	T_ASSERT(strstr(err.msg, "no such file") != NULL);
	T_ASSERT(apc_stream_open_path("/m/t", &s, &err) < 0);
	T_ASSERT(apc_stream_open_path("/etc/hostname", &s, &err) < 0);
	apc_input_mem_set(NULL, 0);
	/* removed: the file system is back */
	T_EQ_INT(apc_input_open(".", &in, &err), APC_OK);
	apc_input_close(in);
}

/*
 * A cpio header declaring a name (or data) longer than the archive:
 * libarchive would malloc the declared size (1 GiB for the fuzzer's
 * 111-byte file, fuzz/regress/tptp_xml/cpio-name-size-1gib-malloc)
 * before finding the file short.  Refused first, with the header's offset.
 */
static void test_cpio_sizes_past_end(void)
{
	/* "new" cpio: magic, 11 fields of 8 hex digits, namesize, check */
	char h[4 * 110 + 64];
	struct apc_input *in;
	struct apc_err err;
	int n;

	for (int k = 0; k < 4; k++) {
		/* k = 0: name of 0x33333333 bytes; 1: data of 0x7fffffff bytes
		 * after a short name; 2: a sound member then a bad one at 112;
		 * 3: a damaged first header, and a bad one at 111 that libarchive
		 * would resynchronise on (fuzz/regress/barman/cpio-resync-...) */
		if (k == 3) {
			memset(h, 'z', 111);
			memcpy(h, "070701", 6);
			n = 111 + snprintf(h + 111, sizeof h - 111, "070701%048X%08X%032X%08X%08X%s",
					   0, 0, 0, 0xdeadbeefu, 0, "a");
			h[n++] = 0;
			goto check;
		}
		unsigned namesz = k == 0 ? 0x33333333u : 2, filesz = k == 1 ? 0x7fffffffu : 0;
		n = snprintf(h, sizeof h, "070701%048X%08X%032X%08X%08X%s", 0, k == 2 ? 0 : filesz, 0,
			     namesz, 0, "a");
		if (k == 2) /* 110 + "a\0" = 112, padded to 112: then the bad one */
			n += snprintf(h + n, sizeof h - (size_t)n, "%c%s%048X%08X%032X%08X%08X", 0,
				      "070701", 0, 0, 0, 0x40000000u, 0);
		else
			h[n++] = 0;
check:
		apc_err_clear(&err);
		T_ASSERT(apc_input_open(fz_file((const uint8_t *)h, (size_t)n, "x.cpio"), &in, &err) <
			 0);
		T_EQ_INT(err.status, APC_EDATA);
		T_ASSERT(strstr(err.msg, "cpio header") != NULL);
		T_EQ_INT(err.offset, k == 2 ? 112 : k == 3 ? 111 : 0);
	}
	/* A sound archive with one member still opens as a tree, though the
	 * member's 112 bytes of data quote a magic with a huge name size
	 * where a header has it: not all digits, so libarchive never reads
	 * it as a header, and neither may the check. */
	n = snprintf(h, sizeof h, "070701%08X%08X%032X%08X%032X%08X%08X%s", 0, 0100644, 0, 112, 0, 2,
		     0, "a"); /* ino, mode (a regular file), 4 fields, size, 4 fields, name */
	n += snprintf(h + n, sizeof h - (size_t)n, "%c%s", 0, "07070");
	n += snprintf(h + n, sizeof h - (size_t)n, "1 quoted:%-80s%08X%-10s", "", 0x7fffffffu, "");
	T_EQ_INT(n, 112 + 112);
	n += snprintf(h + n, sizeof h - (size_t)n, "070701%048X%08X%032X%08X%08X%s", 0, 0, 0, 11, 0,
		      "TRAILER!!!");
	memset(h + n, 0, 4); /* the name's NUL, then 110 + 11 padded to 124 */
	n += 4;
	T_EQ_INT(apc_input_open(fz_file((const uint8_t *)h, (size_t)n, "ok.cpio"), &in, &err), APC_OK);
	if (in) {
		T_EQ_INT(apc_input_is_tree(in), 1);
		T_ASSERT(apc_input_has(in, "a"));
		apc_input_close(in);
	}
}

/* ---- APC counter keys ------------------------------------------------------ */

/* gator's signed LEB128 ("packed") integers. */
static size_t pack_int(uint8_t *p, int64_t v)
{
	size_t n = 0;

	for (;;) {
		uint8_t b = (uint8_t)(v & 0x7f);
		v >>= 7;
		if ((v == 0 && !(b & 0x40)) || (v == -1 && (b & 0x40))) {
			p[n++] = b;
			return n;
		}
		p[n++] = b | 0x80;
	}
}

/* Append a frame (int32 length, then body) to buf at *n. */
static void put_frame(uint8_t *buf, size_t *n, const uint8_t *body, size_t len)
{
	put32le(buf + *n, (uint32_t)len);
	memcpy(buf + *n + 4, body, len);
	*n += 4 + len;
}

/*
 * Counters declared in captured.xml at keys spread over 0..2^24 and a
 * Block Counter frame with a value for each, plus keys nobody declared:
 * every value lands on the counter of its key.  Keys used to index an
 * array grown to key + 64 at each new key, so this capture meant ~170
 * reallocations of up to 64 MiB; the reader now hashes them.
 */
static void test_apc_sparse_counter_keys(void)
{
	enum { NKEYS = 170 };
	static const char canary[] = APC_NEWLINE_CANARY;
	size_t cap = 64 + NKEYS * 80, xn = 0, dn = 0, bn = 0;
	char *xml = malloc(cap);
	uint8_t *data = malloc(NKEYS * 24 + 256), *body = malloc(NKEYS * 24 + 64);
	struct apc_err err;
	struct apc_model m;
	struct apc_input *in;
	struct apc_reader r;
	struct apc_batch b;
	int rc, seen = 0, wrong = 0, undeclared = 0;
	double t0;

	T_ASSERT(xml && data && body);
	if (!xml || !data || !body)
		goto out;
	xn += (size_t)snprintf(xml + xn, cap - xn,
			       "<captured version=\"1\" protocol=\"900\"><counters>");
	for (int i = 0; i < NKEYS; i++)
		xn += (size_t)snprintf(xml + xn, cap - xn, "<counter key=\"0x%x\" type=\"c%d\"/>",
				       (unsigned)(3 + i * 98689), i);
	xn += (size_t)snprintf(xml + xn, cap - xn, "</counters></captured>");
	/* Summary: frame code 1, message 1, canary, three clocks, no attributes. */
	bn = pack_int(body, 1);
	bn += pack_int(body + bn, 1);
	bn += pack_int(body + bn, (int64_t)strlen(canary));
	memcpy(body + bn, canary, strlen(canary));
	bn += strlen(canary);
	for (int i = 0; i < 4; i++)
		body[bn++] = 0; /* timestamp, uptime, monotonic delta, end of attributes */
	put_frame(data, &dn, body, bn);
	/* Block counters on core 0: time 5, then key/value pairs. */
	bn = pack_int(body, APC_FRAME_BLOCK_COUNTER);
	bn += pack_int(body + bn, 0);
	bn += pack_int(body + bn, 0);
	bn += pack_int(body + bn, 5);
	for (int i = 0; i < NKEYS; i++) {
		bn += pack_int(body + bn, 3 + (int64_t)i * 98689);
		bn += pack_int(body + bn, i);
	}
	bn += pack_int(body + bn, 0xfffffe); /* not in captured.xml */
	bn += pack_int(body + bn, 7);
	put_frame(data, &dn, body, bn);

	const uint8_t *joined;
	uint8_t *all = malloc(dn + xn + 8);
	T_ASSERT(all != NULL);
	if (!all)
		goto out;
	memcpy(all, data, dn);
	memcpy(all + dn, FZ_SEP, FZ_SEP_LEN);
	memcpy(all + dn + FZ_SEP_LEN, xml, xn);
	joined = all;
	const char *path = fz_tree(joined, dn + FZ_SEP_LEN + xn, "keys.apc", fz_apc_members, 3);

	t0 = now_s();
	apc_model_init(&m);
	T_EQ_INT(apc_input_open(path, &in, &err), APC_OK);
	memset(&r, 0, sizeof r);
	r.fmt = &apc_format_apc;
	r.inputs = &in;
	r.ninputs = 1;
	r.model = &m;
	apc_batch_init(&b, 4096);
	rc = apc_format_apc.open(&r);
	while (rc >= 0) {
		apc_batch_reset(&b);
		rc = apc_format_apc.next(&r, &b);
		for (size_t k = 0; k < b.n; k++) {
			const struct apc_counter_decl *d;
			if (b.ev[k].type != APC_EV_COUNTER)
				continue;
			d = &m.counters[b.ev[k].u.counter.counter];
			if (d->key == 0xfffffe) {
				undeclared++;
				wrong += b.ev[k].u.counter.value != 7;
				continue;
			}
			/* value i belongs to the counter c<i> at key 3 + i * 98689 */
			char want[16];
			snprintf(want, sizeof want, "c%lld", (long long)b.ev[k].u.counter.value);
			wrong += strcmp(d->type, want) != 0 ||
				 d->key != (int32_t)(3 + b.ev[k].u.counter.value * 98689);
			seen++;
		}
		if (rc == APC_END)
			break;
	}
	T_EQ_INT(rc, APC_END);
	T_EQ_INT(seen, NKEYS);
	T_EQ_INT(undeclared, 1);
	T_EQ_INT(wrong, 0);
	T_ASSERT(now_s() - t0 < 5.0);
	apc_format_apc.close(&r);
	apc_batch_free(&b);
	apc_model_free(&m);
	apc_input_close(in);
	free(all);
out:
	free(xml);
	free(data);
	free(body);
}

void run_tests(void)
{
	T_RUN(test_targets_on_trivial_input);
	T_RUN(test_regress_inputs);
	T_RUN(test_apc_time_before_start);
	T_RUN(test_hostile_frame_lengths);
	T_RUN(test_hostile_packed);
	T_RUN(test_hostile_annotate_lengths);
	T_RUN(test_hostile_tptp_entities);
	T_RUN(test_hostile_xml_members);
	T_RUN(test_hostile_deep_nesting);
	T_RUN(test_mem_input);
	T_RUN(test_cpio_sizes_past_end);
	T_RUN(test_apc_sparse_counter_keys);
}
