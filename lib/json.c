/*
 * json.c - the buffered text writer, decimal and hex formatting, and
 * JSON string escaping.
 */
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "util.h"

/* "00".."99": two decimal digits per division halves the divisions. */
static const char json_dig2[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

static const char json_xdig[] = "0123456789abcdef";

/* Powers of ten, for counting digits. */
static const uint64_t json_p10[20] = {
	1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
	100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
	10000000000000ull, 100000000000000ull, 1000000000000000ull, 10000000000000000ull,
	100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull,
};

size_t apc_fmt_u64(char *dst, uint64_t v)
{
	/* Digits: log10 from the bit length (1233/4096 ~ log10 2), then one
	 * comparison.  v | 1 makes 0 one digit and moves no other count,
	 * since every power of ten from 10 on is even. */
	unsigned t = ((64u - (unsigned)__builtin_clzll(v | 1)) * 1233u) >> 12;
	size_t n = t + ((v | 1) >= json_p10[t]);
	char *p = dst + n;

	/* Backwards from the last digit: eight at a time in 32-bit
	 * arithmetic (cheaper than 64-bit), then two at a time. */
	while (v >= 100000000) {
		uint32_t lo = (uint32_t)(v % 100000000);
		v /= 100000000;
		for (int k = 0; k < 4; k++) {
			p -= 2;
			memcpy(p, json_dig2 + 2 * (lo % 100), 2);
			lo /= 100;
		}
	}
	{
		uint32_t u = (uint32_t)v;
		while (u >= 100) {
			p -= 2;
			memcpy(p, json_dig2 + 2 * (u % 100), 2);
			u /= 100;
		}
		if (u >= 10)
			memcpy(p - 2, json_dig2 + 2 * u, 2);
		else
			p[-1] = (char)('0' + u);
	}
	return n;
}

size_t apc_fmt_i64(char *dst, int64_t v)
{
	if (v >= 0)
		return apc_fmt_u64(dst, (uint64_t)v);
	/* Negate in unsigned arithmetic: -INT64_MIN does not fit. */
	dst[0] = '-';
	return 1 + apc_fmt_u64(dst + 1, 0 - (uint64_t)v);
}

size_t apc_fmt_x64(char *dst, uint64_t v, unsigned width)
{
	/* Digits from the bit length: v | 1 makes 0 one digit. */
	size_t n = (67u - (unsigned)__builtin_clzll(v | 1)) / 4;

	if (width > 16)
		width = 16;
	if (n < width)
		n = width;
	for (size_t i = n; i-- > 0; v >>= 4)
		dst[i] = json_xdig[v & 15];
	return n;
}

/* ---- the writer ---------------------------------------------------------- */

int apc_wbuf_init(struct apc_wbuf *w, FILE *f, size_t cap)
{
	if (cap < APC_WBUF_SLACK)
		cap = APC_WBUF_SLACK;
	memset(w, 0, sizeof *w);
	if (!(w->p = malloc(cap)))
		return -1;
	w->cap = cap;
	w->f = f;
	w->own = 1;
	return 0;
}

void apc_wbuf_init_mem(struct apc_wbuf *w, FILE *f, char *storage, size_t cap)
{
	memset(w, 0, sizeof *w);
	w->p = storage;
	w->cap = cap;
	w->f = f;
}

int apc_wbuf_flush(struct apc_wbuf *w)
{
	size_t n = w->len;

	/* The bytes are dropped on error, as fprintf drops them: the FILE
	 * keeps the error for whoever checks ferror() at the end. */
	w->len = 0;
	if (n && fwrite(w->p, 1, n, w->f) != n)
		return -1;
	return 0;
}

void apc_wbuf_free(struct apc_wbuf *w)
{
	if (!w->p)
		return;
	apc_wbuf_flush(w);
	if (w->own)
		free(w->p);
	memset(w, 0, sizeof *w);
}

void apc_wbuf_put_slow(struct apc_wbuf *w, const void *s, size_t n)
{
	const char *c = s;

	while (n) {
		size_t k = w->cap - w->len;

		if (!k) {
			apc_wbuf_flush(w);
			k = w->cap;
		}
		if (k > n)
			k = n;
		memcpy(w->p + w->len, c, k);
		w->len += k;
		c += k;
		n -= k;
	}
}

void apc_wbuf_pad_slow(struct apc_wbuf *w, const char *s, size_t n, unsigned width, int right)
{
	size_t pad = n < width ? width - n : 0;

	if (!right)
		apc_wbuf_put(w, s, n);
	while (pad) {
		size_t k = pad < APC_WBUF_SLACK ? pad : APC_WBUF_SLACK;
		memset(apc_wbuf_room(w, k), ' ', k);
		w->len += k;
		pad -= k;
	}
	if (right)
		apc_wbuf_put(w, s, n);
}

void apc_wbuf_hex_bytes(struct apc_wbuf *w, const uint8_t *s, size_t n)
{
	while (n) {
		size_t room = (w->cap - w->len) / 2, k;
		char *o;

		if (!room) {
			apc_wbuf_flush(w);
			room = w->cap / 2;
		}
		k = n < room ? n : room;
		o = w->p + w->len;
		for (size_t i = 0; i < k; i++) {
			o[2 * i] = json_xdig[s[i] >> 4];
			o[2 * i + 1] = json_xdig[s[i] & 15];
		}
		w->len += 2 * k;
		s += k;
		n -= k;
	}
}

/* ---- JSON strings -------------------------------------------------------- */

/* 1 for bytes that stand for themselves in a JSON string. */
static int json_plain(unsigned c)
{
	return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
}

void apc_json_wstr(struct apc_wbuf *w, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	apc_wbuf_putc(w, '"');
	while (i < len) {
		size_t j = i;
		unsigned c;
		char *o;

		/* A run of plain bytes goes in with one copy. */
		while (j < len && json_plain(p[j]))
			j++;
		apc_wbuf_put(w, p + i, j - i);
		if (j == len)
			break;
		i = j;
		c = p[i];
		o = apc_wbuf_room(w, 8);
		switch (c) {
		case '"': memcpy(o, "\\\"", 2); w->len += 2; i++; continue;
		case '\\': memcpy(o, "\\\\", 2); w->len += 2; i++; continue;
		case '\n': memcpy(o, "\\n", 2); w->len += 2; i++; continue;
		case '\r': memcpy(o, "\\r", 2); w->len += 2; i++; continue;
		case '\t': memcpy(o, "\\t", 2); w->len += 2; i++; continue;
		default: break;
		}
		if (c < 0x20 || c == 0x7f) {
			memcpy(o, "\\u00", 4);
			o[4] = json_xdig[c >> 4];
			o[5] = json_xdig[c & 15];
			w->len += 6;
			i++;
			continue;
		}
		/* Here c >= 0x80: copy a valid sequence, replace a bad byte. */
		j = apc_utf8_len(p + i, len - i);
		if (j == 0) {
			memcpy(o, "\\ufffd", 6);
			w->len += 6;
			i++;
			continue;
		}
		memcpy(o, p + i, j);
		w->len += j;
		i += j;
	}
	apc_wbuf_putc(w, '"');
}

void apc_json_str(FILE *f, const char *s, size_t len)
{
	char buf[512];
	struct apc_wbuf w;

	apc_wbuf_init_mem(&w, f, buf, sizeof buf);
	apc_json_wstr(&w, s, len);
	apc_wbuf_flush(&w);
}

void apc_json_cstr(FILE *f, const char *s)
{
	if (!s)
		fputs("null", f);
	else
		apc_json_str(f, s, strlen(s));
}
