/*
 * json.c - JSON string escaping.
 */
#include <string.h>

#include "json.h"

/* Length of the valid UTF-8 sequence at p (1..4), or 0 if invalid. */
static size_t json_utf8_len(const unsigned char *p, size_t n)
{
	unsigned c = p[0];
	size_t len, i;
	unsigned cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	/* Reject overlong forms, surrogates and values past U+10FFFF. */
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

void apc_json_str(FILE *f, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	putc('"', f);
	while (i < len) {
		unsigned c = p[i];
		size_t k;

		switch (c) {
		case '"': fputs("\\\"", f); i++; continue;
		case '\\': fputs("\\\\", f); i++; continue;
		case '\n': fputs("\\n", f); i++; continue;
		case '\r': fputs("\\r", f); i++; continue;
		case '\t': fputs("\\t", f); i++; continue;
		default: break;
		}
		if (c < 0x20 || c == 0x7f) {
			fprintf(f, "\\u%04x", c);
			i++;
			continue;
		}
		k = json_utf8_len(p + i, len - i);
		if (k == 0) {
			fputs("\\ufffd", f);
			i++;
			continue;
		}
		fwrite(p + i, 1, k, f);
		i += k;
	}
	putc('"', f);
}

void apc_json_cstr(FILE *f, const char *s)
{
	if (!s)
		fputs("null", f);
	else
		apc_json_str(f, s, strlen(s));
}
