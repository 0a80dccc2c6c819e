/*
 * json.c - JSON string escaping.
 */
#include <string.h>

#include "json.h"
#include "util.h"

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
		k = apc_utf8_len(p + i, len - i);
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
