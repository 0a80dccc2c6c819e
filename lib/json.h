/*
 * json.h - writing text fast: a buffered writer (struct apc_wbuf) with
 * hand-made decimal and hex formatting, and the JSON string escaping
 * shared by every --json output, so all of them agree on what a string
 * looks like.
 *
 * Why not stdio: apcdump prints hundreds of megabytes of small fields,
 * and printf's format parsing per field cost more than decoding the
 * capture.  The writer appends into one large buffer and hands it to
 * the FILE in whole blocks; formatting writes straight into the buffer.
 */
#ifndef APC_JSON_H
#define APC_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/*
 * apc_json_str() : write s[0..len) as a JSON string with quotes.
 * Control characters, quotes and backslashes are escaped; bytes that are
 * not valid UTF-8 become \ufffd so the output always parses.
 */
void apc_json_str(FILE *f, const char *s, size_t len);
/* Same for a NUL-terminated string; NULL is written as null. */
void apc_json_cstr(FILE *f, const char *s);

/* ---- number formatting -------------------------------------------------- */

/* Longest output of the formatters below (20 digits, or '-' and 19). */
#define APC_FMT_MAX 20

/*
 * apc_fmt_u64() / apc_fmt_i64() : v in decimal at dst (no NUL), as
 * "%" PRIu64 / "%" PRId64 would print it.  Return the length (<= 20).
 */
size_t apc_fmt_u64(char *dst, uint64_t v);
size_t apc_fmt_i64(char *dst, int64_t v);
/*
 * apc_fmt_x64() : v in lowercase hex at dst (no NUL, no 0x), zero-padded
 * to width digits like "%0*" PRIx64; width over 16 is taken as 16.
 * Returns the length (<= 16).
 */
size_t apc_fmt_x64(char *dst, uint64_t v, unsigned width);

/* ---- the buffered writer ------------------------------------------------ */

/* Room a caller may ask of apc_wbuf_room() at once. */
#define APC_WBUF_SLACK 128

struct apc_wbuf {
	char *p;      /* buffer */
	size_t len;   /* bytes waiting in it */
	size_t cap;   /* its size, >= APC_WBUF_SLACK */
	FILE *f;      /* where full blocks go */
	int own;      /* p came from malloc */
};

/*
 * apc_wbuf_init() : a writer to f with a cap-byte buffer from malloc
 * (at least APC_WBUF_SLACK).  Returns 0, or -1 when out of memory.
 * apc_wbuf_init_mem() uses the caller's storage instead (cap >= SLACK).
 */
int apc_wbuf_init(struct apc_wbuf *w, FILE *f, size_t cap);
void apc_wbuf_init_mem(struct apc_wbuf *w, FILE *f, char *storage, size_t cap);
/*
 * apc_wbuf_flush() : hand what waits to the FILE (fwrite of the whole
 * block; it does not fflush the FILE).  Returns 0, or -1 on a write
 * error, which also stays in ferror(f) as with fprintf.
 */
int apc_wbuf_flush(struct apc_wbuf *w);
/* Flush, then free the buffer if it is ours. */
void apc_wbuf_free(struct apc_wbuf *w);
/* Append n bytes of any size (large runs go through in blocks). */
void apc_wbuf_put_slow(struct apc_wbuf *w, const void *s, size_t n);

/*
 * apc_wbuf_room() : a pointer to at least n (<= APC_WBUF_SLACK) free
 * bytes; write there, then add what was used to w->len.
 */
static inline char *apc_wbuf_room(struct apc_wbuf *w, size_t n)
{
	if (w->cap - w->len < n)
		apc_wbuf_flush(w);
	return w->p + w->len;
}

static inline void apc_wbuf_put(struct apc_wbuf *w, const void *s, size_t n)
{
	if (n <= w->cap - w->len) {
		memcpy(w->p + w->len, s, n);
		w->len += n;
	} else {
		apc_wbuf_put_slow(w, s, n);
	}
}

static inline void apc_wbuf_putc(struct apc_wbuf *w, char c)
{
	if (w->len == w->cap)
		apc_wbuf_flush(w);
	w->p[w->len++] = c;
}

/* A NUL-terminated string as it is. */
static inline void apc_wbuf_puts(struct apc_wbuf *w, const char *s)
{
	apc_wbuf_put(w, s, strlen(s));
}

static inline void apc_wbuf_u64(struct apc_wbuf *w, uint64_t v)
{
	w->len += apc_fmt_u64(apc_wbuf_room(w, APC_FMT_MAX), v);
}

static inline void apc_wbuf_i64(struct apc_wbuf *w, int64_t v)
{
	w->len += apc_fmt_i64(apc_wbuf_room(w, APC_FMT_MAX), v);
}

/* "%0*" PRIx64 with width <= 16. */
static inline void apc_wbuf_x64(struct apc_wbuf *w, uint64_t v, unsigned width)
{
	w->len += apc_fmt_x64(apc_wbuf_room(w, 16), v, width);
}

/*
 * apc_wbuf_pad() : s[0..n) padded with spaces to width, like "%*s"
 * (right = 1, spaces first) or "%-*s" (right = 0); never cut.
 */
void apc_wbuf_pad_slow(struct apc_wbuf *w, const char *s, size_t n, unsigned width, int right);
static inline void apc_wbuf_pad(struct apc_wbuf *w, const char *s, size_t n, unsigned width,
				int right)
{
	size_t pad = n < width ? width - n : 0;
	char *o;

	/* The usual case, a short name in a short column: one room check. */
	if (n + pad > APC_WBUF_SLACK) {
		apc_wbuf_pad_slow(w, s, n, width, right);
		return;
	}
	o = apc_wbuf_room(w, n + pad);
	if (right) {
		memset(o, ' ', pad);
		memcpy(o + pad, s, n);
	} else {
		memcpy(o, s, n);
		memset(o + n, ' ', pad);
	}
	w->len += n + pad;
}

/* Bytes as two lowercase hex digits each ("%02x" per byte). */
void apc_wbuf_hex_bytes(struct apc_wbuf *w, const uint8_t *s, size_t n);
/* apc_json_str() into a writer. */
void apc_json_wstr(struct apc_wbuf *w, const char *s, size_t len);

#endif
