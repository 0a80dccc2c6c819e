/*
 * buf.c - a growable byte buffer with packed-integer appends, used by the
 * APC writer, the annotate encoder and the test generators.
 */
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "packed.h"

int apc_buf_grow(struct apc_buf *b, size_t more)
{
	size_t need = b->len + more, ncap;
	uint8_t *np;

	if (need < b->len)
		return APC_ENOMEM;
	if (need <= b->cap)
		return APC_OK;
	ncap = b->cap ? b->cap : 256;
	while (ncap < need)
		ncap *= 2;
	np = realloc(b->p, ncap);
	if (!np)
		return APC_ENOMEM;
	b->p = np;
	b->cap = ncap;
	return APC_OK;
}

void apc_buf_free(struct apc_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

size_t apc_buf_put_packed32(struct apc_buf *b, int32_t v)
{
	size_t n = apc_pack32(b->p + b->len, v);
	b->len += n;
	return n;
}

size_t apc_buf_put_packed64(struct apc_buf *b, int64_t v)
{
	size_t n = apc_pack64(b->p + b->len, v);
	b->len += n;
	return n;
}

int apc_buf_put_string(struct apc_buf *b, const char *s, size_t n)
{
	if (n > INT32_MAX || apc_buf_reserve(b, APC_PACKED32_MAX + n) != APC_OK)
		return APC_ENOMEM;
	apc_buf_put_packed32(b, (int32_t)n);
	return apc_buf_put_bytes(b, s, n);
}
