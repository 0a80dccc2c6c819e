/*
 * bytes.h - fixed-width integers stored in byte arrays: frame length
 * words, perf chunk lengths, perf_event_attr fields, archive headers.
 * Built a byte at a time, so they read the same on any host and need
 * no alignment; gcc and clang make one load of them where that is so.
 */
#ifndef APC_BYTES_H
#define APC_BYTES_H

#include <stdint.h>

static inline uint32_t apc_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t apc_le64(const uint8_t *p)
{
	return (uint64_t)apc_le32(p) | (uint64_t)apc_le32(p + 4) << 32;
}

static inline void apc_le32_put(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static inline uint32_t apc_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

#endif
