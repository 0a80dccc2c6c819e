/*
 * test_dump_fmt.c - the hand-made formatting behind apcdump's output
 * (lib/json.h) against snprintf: decimal and hex of every edge and of
 * millions of random values, padding, hex bytes, and string escaping
 * through a writer small enough to flush in the middle of everything;
 * and the --frame list apcdump's listing is filtered by.
 */
#include <stdlib.h>

#include "dump.h"
#include "frame.h"
#include "json.h"
#include "util.h"
#include "t.h"

/* xorshift64*: a fixed seed, so a failure replays. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

/* A value of random bit length, so short numbers are as common as long. */
static uint64_t rng_value(void)
{
	uint64_t v = rng();
	return v >> (rng() & 63);
}

static int fails; /* stop printing after a few, keep counting */

/* One value through our formatting and through snprintf: kind 'u' is
 * unsigned decimal, 'i' signed decimal, 'x' hex at least width digits. */
static void check_fmt(char kind, uint64_t v, unsigned width)
{
	char got[APC_FMT_MAX + 1], want[32];
	size_t n;
	int wn;

	if (kind == 'u') {
		n = apc_fmt_u64(got, v);
		wn = snprintf(want, sizeof want, "%" PRIu64, v);
	} else if (kind == 'i') {
		n = apc_fmt_i64(got, (int64_t)v);
		wn = snprintf(want, sizeof want, "%" PRId64, (int64_t)v);
	} else {
		n = apc_fmt_x64(got, v, width);
		wn = snprintf(want, sizeof want, "%0*" PRIx64, (int)(width > 16 ? 16 : width), v);
	}
	if (n == (size_t)wn && memcmp(got, want, n) == 0)
		return;
	if (fails++ < 5)
		T_FAIL("%c64 %s (width %u): got %.*s", kind, want, width, (int)n, got);
	t_failed_now = 1;
}

static void check_u64(uint64_t v) { check_fmt('u', v, 0); }
static void check_i64(int64_t v) { check_fmt('i', (uint64_t)v, 0); }
static void check_x64(uint64_t v, unsigned width) { check_fmt('x', v, width); }

static void check_all(uint64_t v)
{
	check_u64(v);
	check_i64((int64_t)v);
	check_x64(v, 0);
	check_x64(v, 2);
	check_x64(v, 8);
}

static void test_edges(void)
{
	uint64_t p = 1;

	fails = 0;
	check_all(0);
	check_all(UINT64_MAX);
	check_all((uint64_t)INT64_MAX);
	check_all((uint64_t)INT64_MIN);
	check_i64(INT64_MIN);
	check_i64(INT64_MIN + 1);
	check_i64(INT64_MAX);
	check_i64(-1);
	/* Each side of every power of ten: where the digit count changes. */
	for (int i = 0; i < 20; i++, p *= 10) {
		check_all(p - 1);
		check_all(p);
		check_all(p + 1);
		check_i64(-(int64_t)(p - 1));
		if (i < 19)
			check_i64(-(int64_t)p);
	}
	/* Each side of every power of two, and their negatives. */
	for (int b = 0; b < 64; b++) {
		uint64_t v = 1ull << b;
		check_all(v - 1);
		check_all(v);
		check_all(v + 1);
		check_all(0 - v);
	}
	/* Hex of every length 1..16, at every width 0..20 (over 16 = 16). */
	for (int digits = 1; digits <= 16; digits++) {
		uint64_t lo = digits == 1 ? 0 : 1ull << (4 * (digits - 1));
		uint64_t hi = digits == 16 ? UINT64_MAX : (1ull << (4 * digits)) - 1;
		for (unsigned w = 0; w <= 20; w++) {
			check_x64(lo, w);
			check_x64(hi, w);
			check_x64(0xa5a5a5a5a5a5a5a5ull & hi, w);
		}
	}
	T_EQ_INT(fails, 0);
}

static void test_random(void)
{
	fails = 0;
	for (long i = 0; i < 3000000; i++) {
		uint64_t v = rng_value();
		check_u64(v);
		check_i64((int64_t)v);
		check_i64(-(int64_t)(v >> 1));
		check_x64(v, (unsigned)(rng() % 18));
	}
	printf("# 3000000 random values, 4 formats each\n");
	T_EQ_INT(fails, 0);
}

/* ---- the writer, through a FILE in memory ------------------------------ */

/* The writer under test and, beside it, what stdio writes for the same
 * calls: both into memory, to be compared at the end. */
struct sink {
	char *mem, *want;
	size_t len, wlen;
	FILE *f, *ref;
	struct apc_wbuf w;
	char buf[APC_WBUF_SLACK]; /* the smallest writer: flushes all the time */
};

/* 0, the test failed, if the memory streams cannot be had. */
static int sink_open(struct sink *s)
{
	s->mem = s->want = NULL;
	s->len = s->wlen = 0;
	s->f = open_memstream(&s->mem, &s->len);
	s->ref = open_memstream(&s->want, &s->wlen);
	T_ASSERT(s->f && s->ref);
	if (!s->f || !s->ref)
		return 0;
	apc_wbuf_init_mem(&s->w, s->f, s->buf, sizeof s->buf);
	return 1;
}

/* Flush the writer: what it wrote must be stdio's, byte for byte. */
static void sink_check(struct sink *s)
{
	apc_wbuf_free(&s->w);
	fclose(s->f);
	fclose(s->ref);
	T_EQ_U64(s->len, s->wlen);
	T_ASSERT(s->len == s->wlen && memcmp(s->mem, s->want, s->wlen) == 0);
	free(s->mem);
	free(s->want);
}

static void test_writer_numbers(void)
{
	struct sink s;
	FILE *wf;

	if (!sink_open(&s))
		return;
	wf = s.ref; /* stdio's side of each call */
	for (int i = 0; i < 200000; i++) {
		uint64_t v = rng_value();
		unsigned width = (unsigned)(rng() % 30);
		switch (i % 6) {
		case 0: apc_wbuf_u64(&s.w, v); fprintf(wf, "%" PRIu64, v); break;
		case 1: apc_wbuf_i64(&s.w, (int64_t)v); fprintf(wf, "%" PRId64, (int64_t)v); break;
		case 2:
			apc_wbuf_x64(&s.w, v, width % 17);
			fprintf(wf, "%0*" PRIx64, (int)(width % 17), v);
			break;
		case 3: {
			char t[APC_FMT_MAX];
			apc_wbuf_pad(&s.w, t, apc_fmt_u64(t, v), width, 1);
			fprintf(wf, "%*" PRIu64, (int)width, v);
			break;
		}
		case 4: apc_wbuf_putc(&s.w, (char)('a' + i % 26)); fputc('a' + i % 26, wf); break;
		default: apc_wbuf_puts(&s.w, " x=0x"); fputs(" x=0x", wf); break;
		}
	}
	sink_check(&s);
}

static void test_writer_pad_and_bytes(void)
{
	static const char *const words[] = {"", "-", "12", "name", "block_counter",
					    "annotate_color_marker_long_enough"};
	char big[300];
	struct sink s;
	uint8_t bytes[1000];
	FILE *wf;

	if (!sink_open(&s))
		return;
	wf = s.ref; /* stdio's side of each call */
	memset(big, 'q', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	for (size_t i = 0; i < sizeof bytes; i++)
		bytes[i] = (uint8_t)rng();
	for (unsigned width = 0; width < 300; width += 7) {
		for (size_t k = 0; k < sizeof words / sizeof words[0]; k++) {
			const char *wd = words[k];
			apc_wbuf_pad(&s.w, wd, strlen(wd), width, 0);
			apc_wbuf_pad(&s.w, wd, strlen(wd), width, 1);
			fprintf(wf, "%-*s%*s", (int)width, wd, (int)width, wd);
		}
		/* Longer than the writer's buffer: the slow path. */
		apc_wbuf_pad(&s.w, big, width, width + 150, width & 1);
		fprintf(wf, width & 1 ? "%*.*s" : "%-*.*s", (int)width + 150, (int)width, big);
		apc_wbuf_hex_bytes(&s.w, bytes, width * 3);
		for (unsigned i = 0; i < width * 3; i++)
			fprintf(wf, "%02x", bytes[i]);
		apc_wbuf_put(&s.w, bytes, width);
		fwrite(bytes, 1, width, wf);
	}
	sink_check(&s);
}

/* The escaping rules one byte at a time, as stdio wrote them before. */
static void json_reference(FILE *f, const uint8_t *p, size_t len)
{
	putc('"', f);
	for (size_t i = 0; i < len;) {
		unsigned c = p[i];
		size_t k;

		if (c == '"' || c == '\\') {
			fprintf(f, "\\%c", c);
		} else if (c == '\n') {
			fputs("\\n", f);
		} else if (c == '\r') {
			fputs("\\r", f);
		} else if (c == '\t') {
			fputs("\\t", f);
		} else if (c < 0x20 || c == 0x7f) {
			fprintf(f, "\\u%04x", c);
		} else if ((k = apc_utf8_len(p + i, len - i)) == 0) {
			fputs("\\ufffd", f);
		} else {
			fwrite(p + i, 1, k, f);
			i += k;
			continue;
		}
		i++;
	}
	putc('"', f);
}

static void test_json_strings(void)
{
	static const char *const toks[] = {"\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xc3\xa9", "\"",
					   "\\", "\t", "\n", "\r", "\x7f", "\x01", "\xed\xa0\x80",
					   "\xc0\xaf", "\xf4\x90\x80\x80", "\xe0\x80\xaf",
					   "plain text run ", "ab"};
	char *got2 = NULL;
	size_t g2len = 0;
	FILE *g2 = open_memstream(&got2, &g2len);
	struct sink s;
	uint8_t str[400];

	T_ASSERT(g2);
	if (!g2 || !sink_open(&s))
		return;
	for (int i = 0; i < 20000; i++) {
		size_t n = 0, want_len = rng() % 300;
		while (n < want_len) {
			if (rng() % 5 == 0) {
				str[n++] = (uint8_t)rng();
			} else {
				const char *t = toks[rng() % (sizeof toks / sizeof toks[0])];
				size_t tl = strlen(t);
				if (n + tl > sizeof str)
					break;
				memcpy(str + n, t, tl);
				n += tl;
			}
		}
		/* Sometimes cut the last sequence short. */
		if (n && rng() % 4 == 0)
			n--;
		apc_json_wstr(&s.w, (const char *)str, n);
		apc_json_str(g2, (const char *)str, n);
		json_reference(s.ref, str, n);
	}
	/* the FILE writer too writes the reference */
	fclose(g2);
	fflush(s.ref);
	T_ASSERT(g2len == s.wlen && memcmp(got2, s.want, s.wlen) == 0);
	free(got2);
	sink_check(&s);
}

/* A write error stays in the FILE, as it did with fprintf. */
static void test_write_error(void)
{
	FILE *f = fopen("/dev/full", "w");
	struct apc_wbuf w;

	if (!f)
		T_SKIP("no /dev/full");
	setvbuf(f, NULL, _IONBF, 0); /* so each fwrite reaches the device */
	T_EQ_INT(apc_wbuf_init(&w, f, 4096), 0);
	for (int i = 0; i < 10000; i++)
		apc_wbuf_u64(&w, (uint64_t)i);
	T_EQ_INT(apc_wbuf_flush(&w), -1);
	T_EQ_INT(w.len, 0);
	apc_wbuf_free(&w);
	T_ASSERT(ferror(f));
	fclose(f);
}

/* --frame names in any case select the same types as in lower case;
 * a misspelt one is still refused. */
static void test_frame_names_any_case(void)
{
	struct apc_dump_opts lower, mixed;
	struct apc_err e;

	apc_dump_opts_init(&lower);
	apc_dump_opts_init(&mixed);
	T_EQ_INT(apc_dump_parse_frames(&lower, "summary,block_counter,perf_attrs,5", &e), APC_OK);
	T_EQ_INT(apc_dump_parse_frames(&mixed, "SUMMARY,Block_Counter,Perf_Attrs,5", &e), APC_OK);
	T_ASSERT(memcmp(lower.frames, mixed.frames, sizeof lower.frames) == 0);
	T_ASSERT(mixed.frames[APC_FRAME_PROC]);
	T_EQ_INT(apc_dump_parse_frames(&mixed, "Summery", &e), APC_EIO);
}

/* Every name the listing gives a frame's type is taken back by --frame:
 * "type_N" and N for any 32-bit code (negative too), "empty" for a
 * zero-length frame; a code past 32 bits is no type, and codes outside
 * the table are kept up to APC_DUMP_MORE_TYPES of them. */
static void test_frame_names_as_listed(void)
{
	struct apc_dump_opts o;
	struct apc_err e;
	char list[APC_DUMP_MORE_TYPES * 8 + 8];
	size_t at = 0;

	apc_dump_opts_init(&o);
	T_EQ_INT(apc_dump_parse_frames(&o, "-40,type_200,TYPE_8,empty,007", &e), APC_OK);
	T_ASSERT(o.have_frames && o.empty_frames);
	T_ASSERT(o.frames[8] && o.frames[7]);
	T_EQ_INT(o.nmore_frames, 2);
	T_EQ_INT(o.more_frames[0], -40);
	T_EQ_INT(o.more_frames[1], 200);
	/* the same code twice is kept once */
	T_EQ_INT(apc_dump_parse_frames(&o, "type_-40", &e), APC_OK);
	T_EQ_INT(o.nmore_frames, 2);
	apc_dump_opts_init(&o);
	T_EQ_INT(apc_dump_parse_frames(&o, "-2147483648,2147483647", &e), APC_OK);
	T_EQ_INT(o.more_frames[0], INT32_MIN);
	T_EQ_INT(o.more_frames[1], INT32_MAX);
	static const char *const bad[] = {"2147483648", "-2147483649", "4294967297", "type_",
					  "type_x", "-", "--1", "+5", "type_+5", NULL};
	for (int i = 0; bad[i]; i++) {
		apc_dump_opts_init(&o);
		T_EQ_INT(apc_dump_parse_frames(&o, bad[i], &e), APC_EIO);
	}
	/* one more code outside the table than it keeps */
	for (int i = 0; i <= APC_DUMP_MORE_TYPES; i++)
		at += (size_t)snprintf(list + at, sizeof list - at, "%s%d", i ? "," : "", 1000 + i);
	apc_dump_opts_init(&o);
	T_EQ_INT(apc_dump_parse_frames(&o, list, &e), APC_EIO);
	T_ASSERT(strstr(e.msg, "too many frame types") != NULL);
}

void run_tests(void)
{
	T_RUN(test_edges);
	T_RUN(test_random);
	T_RUN(test_writer_numbers);
	T_RUN(test_writer_pad_and_bytes);
	T_RUN(test_json_strings);
	T_RUN(test_write_error);
	T_RUN(test_frame_names_any_case);
	T_RUN(test_frame_names_as_listed);
}
