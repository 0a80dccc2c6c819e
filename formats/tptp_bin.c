/*
 * tptp_bin.c - reader for the TPTP binary trace format (.trcbin, TPTP
 * feature 196713): a 12-byte header, then messages of u16 id, u32 length
 * and attributes in the fixed order of the spec's tables (tptp_map.c has
 * them as tptp_bin_layout()).  Ids up to 1000 are system messages (1:
 * character encoding, 2: CPU frequency), 1001..32767 data messages.
 *
 * Decisions where the spec is open (no real .trcbin file is public):
 * - Magic: the four bytes "0TBF"; "\0TBF" is accepted too (the spec's
 *   "0" may mean a zero byte).
 * - Byte order: the header's endianness byte (0 big, 1 little) applies to
 *   every integer after the magic, including the header's data offset.
 * - Platform byte (0 32-bit, 1 64-bit): informational.  "Long" attributes
 *   are 8 bytes either way (they are jlong/jlocation values, 64-bit on
 *   every JVM); the byte is kept as the attribute tptp.bin.platform.
 * - Message length: the spec does not say whether it counts the 6-byte
 *   header.  The reader decides on the first message: for a message with
 *   a known layout, the attributes parse to a fixed size C, and exactly
 *   one of length == C (header excluded) or length == C + 6 (included)
 *   holds; for an unknown first id, the convention whose next position is
 *   the end of the file or a message with a known id wins (excluded when
 *   both do).  The choice then holds for the whole file.  A later message
 *   whose attributes need more bytes than its length is counted and
 *   skipped by length (if the framing check below lets it).
 * - Bytes after the attributes: the spec fixes each message's attributes
 *   ("constant number and order") and gives every message a length so a
 *   reader can skip it, but nowhere says the two must agree; a newer
 *   writer may append attributes.  Such bytes are legal: skipped by the
 *   length and counted per message kind, so the summary shows that part
 *   of the file was not read.
 * - Framing check.  A length is one word, and one damaged byte of it
 *   (65358 for 78) once made the reader skip 65 KB as "bytes past the
 *   known fields", or read on out of step (ids 0, 29735 ...), exit 0.
 *   No size bound tells a newer writer's fields from damage, but the
 *   messages around do: a message is framed by its length only if the
 *   stream is in step after it.  "In step at X": two messages the reader
 *   knows (id 1, 2 or a spec data id, a length from the least the
 *   layout allows to the limit) follow one another from X by their
 *   lengths, with messages of unknown ids (ids 1..32767, length under
 *   the limit) allowed between them; or the file ends (at X, inside a
 *   header, or inside a known message: a cut, reported when reached).
 *   The check runs only for a message out of the ordinary: its length
 *   is not what its fields take (more, or too few for them), or its id
 *   is unknown (its size unknown); a message whose length matches its
 *   fields, every one in a trace written to the spec, costs nothing.
 *   Then, in order:
 *     1. in step right after its fields (the length aside): the length
 *        is damaged (a writer's added fields are not whole messages the
 *        reader knows): damage at the message ("methodEntry length
 *        65358, but its fields end at 78 ...");
 *     2. in step after its length: the length holds: extra bytes are
 *        skipped and counted, a message too short for its fields or of
 *        an unknown id is skipped and counted, as ever;
 *     3. neither: the stream is out of step there: damage at the
 *        message.
 *   And an id of 0 or past 32767 (the spec's ids are 0..1000 system,
 *   1001..32767 data; 0 is taken as none: zero bytes, a file's unwritten
 *   tail, read as empty "system messages 0") is out of step: damage at
 *   its header.  What the damage ends is kept; no resynchronisation is
 *   tried, as in the other readers.
 * - Time: Timestamp attributes are ticks at the frequency of system
 *   message 2 (8-byte unsigned), counted from the epoch, so
 *   ns = ticks * 1e9 / f (128-bit, exact floor).  A frequency below 1e6 is
 *   taken as MHz (CPUID reports MHz; a real clock is never under 1 MHz).
 *   Without message 2, timestamps are taken as ns; a frequency of 0 (or
 *   a message 2 too short for one) is ignored and counted.  The spec
 *   calls it the CPU's max qualified frequency, a constant of the
 *   machine, with no word of it changing: a later message 2 with another
 *   frequency is ignored (the first holds) and counted; the same one
 *   again is harmless.  A timestamp of 0
 *   (the spec's default for an unused attribute) is no time; one past
 *   2^64 ns (year 2554) is no time either, counted as the XML reader
 *   counts one.
 * - Arrays (monitor stack methods/lines) are counted by the Integer stack
 *   depth before them.  They are not mapped: a non-empty one is counted.
 * - The end: a writer that stops tracing writes traceEnd (1006), then
 *   agentDestroy (1004), as every real trace does (the XML ones in
 *   ../shared/testdata end so too).  A binary trace has no root element
 *   whose missing end tag would tell a cut, as XML's </TRACE> does, so
 *   these are its end tag: a file that had a traceStart and ends, at a
 *   message boundary, with no traceEnd or agentDestroy after the last
 *   traceStart was cut (a killed profiler, a partial copy) and is damage
 *   at the file's end, the messages before it kept.  A stream with no
 *   traceStart at all (a fragment, as a bare XML stream can be) claims
 *   no beginning, so nothing says it is incomplete: its end is the end.
 * - Strings: in the encoding system message 1 names (the spec: "UTF8,
 *   KOI8-R etc"), made UTF-8 with iconv as libxml2 does for an XML
 *   trace's declared encoding (bin_set_encoding()); UTF-8 and ASCII,
 *   and a trace without message 1, are taken as they are.
 * Unknown ids are skipped by their length and counted.
 */
#include <errno.h>
#include <iconv.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cpu.h"
#include "scale.h"
#include "tptp.h"
#include "util.h"

#define TPTP_BIN_MSG_MAX (16u << 20)   /* larger messages are damage */
#define TPTP_BIN_DATA_OFF_MAX (1u << 20)
#define TPTP_BIN_BUF (256u << 10)
/* Bytes readable past the buffer's capacity: a fixed field is read with
 * one 8-byte load whatever its size (bin_field_ld). */
#define TPTP_BIN_SLACK 8

#define TPTP_BIN_FIRST_ID 1001
#define TPTP_BIN_IDS 41         /* 1001..1041: the ids the spec defines */

enum { LEN_UNKNOWN = 0, LEN_EXCLUDES_HEADER, LEN_INCLUDES_HEADER };

/*
 * A data layout made ready once per file: the leading fixed-size
 * attributes (every hot message is mostly those) become (offset, size,
 * role) loads with one length check for all of them; the layout from
 * the first string or array count on is walked as before.  Walking the
 * layout string per attribute cost a mispredicted branch each.
 */
#define TPTP_BIN_FIXED_MAX 24

struct bin_field {
	uint16_t off;           /* in the body */
	uint8_t size;
	uint8_t store;          /* BIN_STORE_* */
	uint16_t dest;          /* offsetof the 8-byte member in struct tptp_rec */
	uint16_t has;           /* TPTP_HAS_* it sets */
	uint8_t shift;          /* 64 - 8 * size */
};

/* How a fixed field lands in the record: an 8-byte member (time and
 * pid go in raw and are converted after the loop), or, for a role with
 * no number of its own, through bin_assign(). */
enum { BIN_STORE_U64, BIN_STORE_OTHER };

struct bin_plan {
	const char *lay;        /* NULL: no layout for this id */
	int kind;
	const char *elem;       /* tptp_kind_name(kind) */
	uint16_t fixed_len;     /* bytes of the fixed prefix */
	uint8_t nfields;        /* used fields in it */
	uint8_t has_time, has_pid; /* fields that convert after loading */
	int rest_strings;       /* the rest is this many ignored strings; -1: walk it */
	struct bin_field f[TPTP_BIN_FIXED_MAX];
	const char *rest;       /* layout after the prefix ("" if none) */
};

struct tptp_bin {
	struct tptp_map *map; /* first: tptp_reader_stats() relies on it */
	struct apc_reader *r;
	struct apc_stream *s;
	uint8_t *buf;
	size_t cap, start, end; /* valid bytes buf[start..end) */
	uint64_t base;          /* file offset of buf[0] */
	int eof;
	int big, platform64, len_mode;
	uint64_t freq_hz;
	struct apc_scale to_ns; /* ticks -> ns at freq_hz, when fast */
	uint64_t max_ticks;     /* the last tick count whose ns fit 64 bits */
	int bad_time;           /* the message being read had such a time */
	int stack;              /* ... a monitor stack (not mapped) */
	int fast;               /* fast paths allowed (APC_NO_SIMD unset) */
	int finished, pending_rc;
	int trace_open;         /* a traceStart not yet ended (see the top) */
	iconv_t cd;             /* strings' encoding -> UTF-8; (iconv_t)-1: none wanted */
	char enc[64];           /* the encoding last named (message 1) */
	char *tbuf;             /* the strings of the message being read, in UTF-8 */
	size_t tcap;
	uint64_t nrec;          /* messages read, not yet added to the model */
	uint64_t nsys, nskipped; /* of them: system messages, skipped ones (-v) */
	struct bin_plan plan[TPTP_BIN_IDS]; /* by id - TPTP_BIN_FIRST_ID */
};

/* ---- buffered input ------------------------------------------------------ */

/* bin_fill()'s part for when the bytes are not all there yet. */
static ssize_t bin_fill_more(struct tptp_bin *x, size_t n)
{
	if (x->start) {
		memmove(x->buf, x->buf + x->start, x->end - x->start);
		x->base += x->start;
		x->end -= x->start;
		x->start = 0;
	}
	if (n > x->cap) {
		size_t cap = x->cap;
		uint8_t *nb;
		while (cap < n)
			cap *= 2;
		nb = realloc(x->buf, cap + TPTP_BIN_SLACK);
		if (!nb) {
			apc_err_set(&x->r->err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
			return -1;
		}
		memset(nb + cap, 0, TPTP_BIN_SLACK);
		x->buf = nb;
		x->cap = cap;
	}
	while (!x->eof && x->end < n) {
		ssize_t got = apc_stream_read(x->s, x->buf + x->end, x->cap - x->end, &x->r->err);
		if (got < 0)
			return -1;
		if (got == 0)
			x->eof = 1;
		x->end += (size_t)got;
	}
	return (ssize_t)(x->end - x->start < n ? x->end - x->start : n);
}

/* Make n bytes available at buf[start]; returns how many are (< n only at
 * the end of the file), or -1 on an I/O error. */
static inline ssize_t bin_fill(struct tptp_bin *x, size_t n)
{
	if (x->end - x->start >= n)
		return (ssize_t)n;
	return bin_fill_more(x, n);
}

static uint64_t bin_get(const struct tptp_bin *x, const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (x->big ? 8 * (n - 1 - i) : 8 * i);
	return v;
}

/* Fixed-size loads for the attribute walk: memcpy compiles to one load,
 * a byte swap when the file is big-endian (bin_get's per-byte loop was a
 * fifth of the whole conversion). */
static uint64_t bin_ld64(int big, const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return big ? __builtin_bswap64(v) : v;
#else
	return big ? v : __builtin_bswap64(v);
#endif
}

static uint32_t bin_ld32(int big, const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return big ? __builtin_bswap32(v) : v;
#else
	return big ? v : __builtin_bswap32(v);
#endif
}

/* ticks -> ns, floor(v * 1e9 / f) exactly, for v <= max_ticks (the
 * caller checks).  The fast path divides by multiplying (lib/scale.h).
 * The reference: with v = q*f + r it is q*1e9 + floor(r*1e9 / f), all in
 * 64 bits while f < 2^64 / 1e9 (any real clock); the 128-bit division is
 * the rare fallback. */
static uint64_t bin_ticks_ns(const struct tptp_bin *x, uint64_t v)
{
	uint64_t f = x->freq_hz;

	if (!f)
		return v;
	if (x->fast)
		return apc_scale(&x->to_ns, v);
	if (f < UINT64_MAX / 1000000000u) {
		uint64_t q = v / f, r = v % f;
		if (q <= UINT64_MAX / 1000000000u) {
			uint64_t hi = q * 1000000000u, lo = r * 1000000000u / f;
			if (hi <= UINT64_MAX - lo)
				return hi + lo;
		}
	}
	return (uint64_t)((unsigned __int128)v * 1000000000u / f);
}

/* The frequency of system message 2 (0: ticks are ns). */
static void bin_set_freq(struct tptp_bin *x, uint64_t f)
{
	x->freq_hz = f;
	x->max_ticks = UINT64_MAX;
	if (f) {
		/* v * 1e9 / f < 2^64  <=>  v <= (2^64 * f - 1) / 1e9 */
		unsigned __int128 lim = (((unsigned __int128)f << 64) - 1) / 1000000000u;
		if (lim < UINT64_MAX)
			x->max_ticks = (uint64_t)lim;
		apc_scale_prep(&x->to_ns, 1000000000u, f);
	}
}

/* A Timestamp attribute into rec.  0 is the spec's default for an
 * unused attribute: no time, as an XML element without one.  A time past
 * 2^64 ns would wrap (to a plausible but wrong time): the record gets
 * none either, and it is counted as the XML reader counts a time too
 * large for 64 bits. */
static inline void bin_time(struct tptp_bin *x, struct tptp_rec *rec, uint64_t ticks)
{
	if (ticks == 0 || ticks > x->max_ticks) {
		rec->time = 0;
		rec->has &= ~TPTP_HAS_TIME;
		x->bad_time |= ticks != 0;
		return;
	}
	rec->time = bin_ticks_ns(x, ticks);
	rec->has |= TPTP_HAS_TIME;
}

static uint64_t bin_offset(const struct tptp_bin *x)
{
	return x->base + x->start;
}

/* ---- attributes ------------------------------------------------------------ */

/* Store attribute value v (or str) of role `role` in rec. */
static inline void bin_assign(struct tptp_bin *x, struct tptp_rec *rec, char role, uint64_t v,
			      const char *str)
{
	switch (role) {
	case 'T':
		bin_time(x, rec, v);
		break;
	case 'h': rec->thread_id = v; rec->has |= TPTP_HAS_THREAD; break;
	case 'm': rec->method_id = v; rec->has |= TPTP_HAS_METHOD; break;
	case 'c': rec->class_id = v; rec->has |= TPTP_HAS_CLASS; break;
	case 'o': rec->object_id = v; rec->has |= TPTP_HAS_OBJECT; break;
	case 'k': rec->ticket = v; rec->has |= TPTP_HAS_TICKET; break;
	case 'd': rec->depth = v; rec->has |= TPTP_HAS_DEPTH; break;
	case 'z': rec->size = v; rec->has |= TPTP_HAS_SIZE; break;
	case 'p': rec->pid = (int32_t)(uint32_t)v; rec->has |= TPTP_HAS_PID; break;
	case 'w': rec->timeout = v; break;
	case 'O': rec->owner_id = v; break;
	case 'n': rec->name = str; break;
	case 'g': rec->signature = str; break;
	case 'H': rec->hostname = str; break;
	case 'K': rec->key = str; break;
	case 'V': rec->value = str; break;
	case 'G': rec->group = str; break;
	default: break;
	}
}

/*
 * Walk a body by layout.  Fills rec when given; returns the bytes the
 * attributes take, or -1 when they need more than len.
 */
static long bin_parse(struct tptp_bin *x, const char *lay, const uint8_t *p, size_t len,
		      struct tptp_rec *rec)
{
	size_t pos = 0;
	uint64_t count = 0;
	const int big = x->big;

	for (; lay[0] && lay[1]; lay += 2) {
		uint64_t v = 0;
		const char *str = NULL;

		switch (lay[0]) {
		case 'l':
			if (len - pos < 8)
				return -1;
			v = bin_ld64(big, p + pos);
			pos += 8;
			break;
		case 'i':
			if (len - pos < 4)
				return -1;
			v = bin_ld32(big, p + pos);
			pos += 4;
			break;
		case 'b':
			if (len - pos < 1)
				return -1;
			v = p[pos++];
			break;
		case 's':
			if (pos >= len)
				return -1;
			str = (const char *)p + pos;
			if (p[pos] == 0) {
				pos++; /* most strings are empty: no call */
			} else {
				const uint8_t *z = memchr(p + pos, 0, len - pos);
				if (!z)
					return -1;
				pos = (size_t)(z - p) + 1;
			}
			break;
		case 'S':
			if (rec && count)
				x->stack = 1;
			for (uint64_t i = 0; i < count; i++) {
				const uint8_t *z = memchr(p + pos, 0, len - pos);
				if (!z)
					return -1;
				pos = (size_t)(z - p) + 1;
			}
			continue;
		case 'L':
			if (count > (len - pos) / 8)
				return -1;
			pos += (size_t)count * 8;
			continue;
		default:
			break;
		}
		if (lay[1] == 'N')
			count = v;
		if (!rec || lay[1] == '-')
			continue;
		bin_assign(x, rec, lay[1], v, str);
	}
	return (long)pos;
}

/* Prepare the plan of layout lay. */
static void bin_plan_make(struct bin_plan *pl, const char *lay, int kind)
{
	uint16_t off = 0;

	memset(pl, 0, sizeof *pl);
	pl->lay = lay;
	pl->kind = kind;
	pl->elem = tptp_kind_name(kind);
	if (!lay)
		return;
	for (; lay[0] && lay[1]; lay += 2) {
		int size = lay[0] == 'b' ? 1 : lay[0] == 'i' ? 4 : lay[0] == 'l' ? 8 : 0;
		/* An array count is kept by the walk: stop before it. */
		if (!size || lay[1] == 'N' || pl->nfields == TPTP_BIN_FIXED_MAX)
			break;
		if (lay[1] != '-') {
			struct bin_field *f = &pl->f[pl->nfields++];
			f->off = off;
			f->size = (uint8_t)size;
			f->shift = (uint8_t)(64 - 8 * size);
			f->store = BIN_STORE_U64;
			switch (lay[1]) {
			case 'T': f->dest = offsetof(struct tptp_rec, time); f->has = TPTP_HAS_TIME; pl->has_time = 1; break;
			case 'p': f->dest = offsetof(struct tptp_rec, pid); f->has = TPTP_HAS_PID; pl->has_pid = 1; break;
			case 'h': f->dest = offsetof(struct tptp_rec, thread_id); f->has = TPTP_HAS_THREAD; break;
			case 'm': f->dest = offsetof(struct tptp_rec, method_id); f->has = TPTP_HAS_METHOD; break;
			case 'c': f->dest = offsetof(struct tptp_rec, class_id); f->has = TPTP_HAS_CLASS; break;
			case 'o': f->dest = offsetof(struct tptp_rec, object_id); f->has = TPTP_HAS_OBJECT; break;
			case 'k': f->dest = offsetof(struct tptp_rec, ticket); f->has = TPTP_HAS_TICKET; break;
			case 'd': f->dest = offsetof(struct tptp_rec, depth); f->has = TPTP_HAS_DEPTH; break;
			case 'z': f->dest = offsetof(struct tptp_rec, size); f->has = TPTP_HAS_SIZE; break;
			case 'w': f->dest = offsetof(struct tptp_rec, timeout); break;
			case 'O': f->dest = offsetof(struct tptp_rec, owner_id); break;
			default: f->store = BIN_STORE_OTHER; f->has = (uint16_t)lay[1]; break;
			}
		}
		off = (uint16_t)(off + size);
	}
	pl->fixed_len = off;
	pl->rest = lay;
	/* Most layouts end in strings nothing uses: skip them in a loop. */
	pl->rest_strings = 0;
	for (; lay[0] && lay[1]; lay += 2) {
		if (lay[0] != 's' || lay[1] != '-') {
			pl->rest_strings = -1;
			break;
		}
		pl->rest_strings++;
	}
}

/* A fixed field, by one 8-byte load (the buffer has TPTP_BIN_SLACK bytes
 * past its end), cut to the field's size in the file's byte order. */
static inline uint64_t bin_field_ld(int big, const uint8_t *p, const struct bin_field *f)
{
	uint64_t v;

	memcpy(&v, p + f->off, 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return big ? __builtin_bswap64(v) >> f->shift : v & (~0ull >> f->shift);
#else
	return big ? v >> f->shift : __builtin_bswap64(v) & (~0ull >> f->shift);
#endif
}

/* bin_parse() for a record, by plan: the same result and the same
 * failures (a body shorter than the fixed prefix fails in both). */
static long bin_parse_plan(struct tptp_bin *x, const struct bin_plan *pl, const uint8_t *p,
			   size_t len, struct tptp_rec *rec)
{
	long rest;
	const int big = x->big;
	unsigned has = 0;

	if (len < pl->fixed_len)
		return -1;
	for (unsigned i = 0; i < pl->nfields; i++) {
		const struct bin_field *f = &pl->f[i];
		uint64_t v = bin_field_ld(big, p, f);
		if (f->store != BIN_STORE_OTHER) {
			memcpy((char *)rec + f->dest, &v, sizeof v);
			has |= f->has;
		} else {
			bin_assign(x, rec, (char)f->has, v, NULL); /* a role of no number */
		}
	}
	rec->has |= has;
	/* time and pid went in raw: convert them once */
	if (pl->has_time)
		bin_time(x, rec, rec->time);
	if (pl->has_pid)
		rec->pid = (int32_t)(uint32_t)rec->pid;
	if (pl->rest_strings >= 0) {
		size_t pos = pl->fixed_len;
		for (int k = 0; k < pl->rest_strings; k++) {
			const uint8_t *z;
			if (pos >= len)
				return -1;
			if (p[pos] == 0) {
				pos++; /* most strings are empty: no call */
				continue;
			}
			z = memchr(p + pos, 0, len - pos);
			if (!z)
				return -1;
			pos = (size_t)(z - p) + 1;
		}
		return (long)pos;
	}
	rest = bin_parse(x, pl->rest, p + pl->fixed_len, len - pl->fixed_len, rec);
	return rest < 0 ? -1 : (long)pl->fixed_len + rest;
}

/* Fixed size of a message body if the id is known (system 1, 2 or a data
 * layout), -1 if unknown or it does not parse within len. */
static long bin_body_size(struct tptp_bin *x, int id, const uint8_t *p, size_t len)
{
	const char *lay;

	if (id == 1) {
		const uint8_t *z = memchr(p, 0, len);
		return z ? (long)(z - p) + 1 : -1;
	}
	if (id == 2)
		return len >= 8 ? 8 : -1;
	lay = tptp_bin_layout(id, NULL);
	return lay ? bin_parse(x, lay, p, len, NULL) : -1;
}

static int bin_known(int id)
{
	return id == 1 || id == 2 || tptp_bin_layout(id, NULL) != NULL;
}

/* Is there a plausible message (or the end) at buffer offset off? */
static int bin_lands(struct tptp_bin *x, size_t off)
{
	ssize_t n = bin_fill(x, off + 6);

	if (n >= 0 && (size_t)n == off && x->eof)
		return 1;
	if (n < 0 || (size_t)n < off + 6)
		return 0;
	return bin_known((int)bin_get(x, x->buf + x->start + off, 2));
}

/* The spec's message ids: system 0..1000, data 1001..32767.  0 is taken
 * as no id: zero bytes (a file's unwritten tail, a hole) read as a run of
 * "system messages 0" of length 0, and no writer has one. */
#define TPTP_BIN_ID_MAX 32767

static int bin_id_valid(int id)
{
	return id >= 1 && id <= TPTP_BIN_ID_MAX;
}

/* The least body a known message can have: its fixed fields, a NUL per
 * string, empty arrays.  A short frequency message is counted, not
 * damage: 0 for it. */
static size_t bin_min_body(int id)
{
	const char *lay;
	size_t n = 0;

	if (id == 1)
		return 1;
	if (id == 2 || !(lay = tptp_bin_layout(id, NULL)))
		return 0;
	for (; lay[0] && lay[1]; lay += 2)
		n += lay[0] == 'l' ? 8 : lay[0] == 'i' ? 4 : lay[0] == 'b' || lay[0] == 's' ? 1 : 0;
	return n;
}

/* How far a framing check looks: messages, and bytes past its start. */
#define TPTP_BIN_STEP_HOPS 64
#define TPTP_BIN_STEP_LOOK (1u << 20)

/*
 * Is the stream in step at buffer offset off (from buf[start])?  1 when
 * `need` messages the reader knows (a known id with a length from its
 * least body to the limit) follow one another there by their lengths,
 * messages of unknown ids (in the spec's ranges, with a length under
 * the limit) allowed between them; also when the file ends first,
 * exactly or inside a header, or inside a known message (a cut, which
 * the reader reports when it gets there), but with msgs_only only once
 * a known message was read there; and when the look runs out
 * (TPTP_BIN_STEP_HOPS messages, TPTP_BIN_STEP_LOOK bytes) after a known
 * message.  0 otherwise: a header that is not a message's (id 0 or past
 * 32767, a length shorter than the message's fields or over the limit),
 * unknown ids only until the look runs out, or one running past the
 * file's end.  -1 on an I/O failure (r->err set).  The buffer may move:
 * pointers into it go stale.
 */
static int bin_in_step(struct tptp_bin *x, size_t off, int need, int msgs_only)
{
	const size_t limit = off + TPTP_BIN_STEP_LOOK;
	int known = 0, last_known = 1;

	for (int hop = 0; hop < TPTP_BIN_STEP_HOPS && off <= limit; hop++) {
		ssize_t n = bin_fill(x, off + 6);
		uint64_t len, body;
		int id;

		if (n < 0)
			return -1;
		if ((size_t)n < off + 6)
			/* the end: here, inside this header, or inside the
			 * message before it, which must then be a known one;
			 * with msgs_only, only after a known message read */
			return (!msgs_only || known > 0) && ((size_t)n >= off || last_known);
		id = (int)bin_get(x, x->buf + x->start + off, 2);
		len = bin_ld32(x->big, x->buf + x->start + off + 2);
		if (!bin_id_valid(id))
			return 0;
		if (x->len_mode == LEN_INCLUDES_HEADER) {
			if (len < 6)
				return 0;
			body = len - 6;
		} else {
			body = len;
		}
		if (body > TPTP_BIN_MSG_MAX)
			return 0;
		last_known = bin_known(id);
		if (last_known) {
			if (body < bin_min_body(id))
				return 0;
			known++;
			if (--need == 0)
				return 1;
		}
		off += (size_t)(6 + body);
	}
	return known > 0;
}

/*
 * The framing check of the message at buf[start] (file offset off, id,
 * length field len, body bytes after the header), whose fields take
 * `used` bytes of the body: fewer or more than body, -1 if they do not
 * fit in it, -2 if the id is not known.  The rule is at the top of the
 * file.  0: go on by the length; <0: damage (r->err set) or failure.
 */
static int bin_check_frame(struct tptp_bin *x, uint64_t off, int id, const char *what,
			   uint64_t len, uint64_t body, long used)
{
	const uint64_t hdr = x->len_mode == LEN_INCLUDES_HEADER ? 6 : 0;
	long fields = used;
	int in;

	if (fields == -1) {
		/* where the fields end when the length is not believed */
		ssize_t n = bin_fill(x, (size_t)(6 + body) + TPTP_BIN_STEP_LOOK);
		if (n < 0)
			return x->r->err.status < 0 ? x->r->err.status : APC_EIO;
		fields = (size_t)n > 6 ? bin_body_size(x, id, x->buf + x->start + 6, (size_t)n - 6) : -1;
	}
	/* Known messages right after the fields: the length is damaged
	 * (a newer writer's added fields are no such messages).  Not the
	 * file's end alone: a last message with a few bytes added would
	 * end the file inside the "header" after its fields. */
	if (fields >= 0) {
		in = bin_in_step(x, (size_t)(6 + fields), 2, 1);
		if (in < 0)
			return x->r->err.status < 0 ? x->r->err.status : APC_EIO;
		if (in) {
			x->r->damaged = 1;
			return apc_err_set(&x->r->err, APC_EDATA, apc_stream_name(x->s), (int64_t)off,
					   "%s length %llu, but its fields end at %llu and the next "
					   "message follows them (damaged length?); kept everything "
					   "before it", what, (unsigned long long)len,
					   (unsigned long long)((uint64_t)fields + hdr));
		}
	}
	/* Else the length holds if the stream is in step after it. */
	in = bin_in_step(x, (size_t)(6 + body), 2, 0);
	if (in != 0)
		return in < 0 ? (x->r->err.status < 0 ? x->r->err.status : APC_EIO) : 0;
	x->r->damaged = 1;
	if (used == -2)
		return apc_err_set(&x->r->err, APC_EDATA, apc_stream_name(x->s), (int64_t)off,
				   "message id %d (unknown) of length %llu is not followed by another "
				   "message: the stream is out of step here (damaged?); kept everything "
				   "before it", id, (unsigned long long)len);
	return apc_err_set(&x->r->err, APC_EDATA, apc_stream_name(x->s), (int64_t)off,
			   "%s length %llu is not followed by another message, nor are its "
			   "fields: the stream is out of step here (damaged?); kept everything "
			   "before it", what, (unsigned long long)len);
}

/* Decide the length convention on the message at buf[start]. */
static int bin_decide(struct tptp_bin *x, int id, uint64_t len)
{
	ssize_t n;
	long c;

	/* Look at as much of the body as the larger reading needs. */
	n = bin_fill(x, (size_t)(6 + (len > TPTP_BIN_MSG_MAX ? TPTP_BIN_MSG_MAX : len)));
	if (n < 0)
		return -1;
	c = (size_t)n > 6 ? bin_body_size(x, id, x->buf + x->start + 6, (size_t)n - 6) : -1;
	if (c >= 0) {
		if ((uint64_t)c == len)
			return LEN_EXCLUDES_HEADER;
		if ((uint64_t)c + 6 == len)
			return LEN_INCLUDES_HEADER;
	}
	if (len <= TPTP_BIN_MSG_MAX && bin_lands(x, (size_t)(6 + len)))
		return LEN_EXCLUDES_HEADER;
	if (len >= 6 && len <= TPTP_BIN_MSG_MAX && bin_lands(x, (size_t)len))
		return LEN_INCLUDES_HEADER;
	return LEN_EXCLUDES_HEADER;
}

/* A message of kind `what` held bytes past the attributes it is known
 * to have (see the top of the file): skipped, and counted. */
static void bin_extra_bytes(struct tptp_bin *x, const char *what)
{
	char buf[128];

	snprintf(buf, sizeof buf, "tptp binary %s messages with bytes past the known fields (not read)",
		 what ? what : "unknown");
	apc_model_unmapped(x->r->model, buf, 1);
}

/*
 * Read the next message.  1 = a record in *rec (valid until the next
 * call), 2 = a message handled or skipped, 0 = end, <0 = damage/failure.
 */
/*
 * The strings' encoding (system message 1).  UTF-8 and ASCII need
 * nothing; another (ISO-8859-1, KOI8-R, Java's Cp1251 ...) is turned
 * into UTF-8 with iconv, as libxml2 turns an XML trace's encoding into
 * UTF-8, so a binary trace and its XML twin give the same names.  A
 * name iconv does not know leaves the strings as their bytes, counted.
 * Strings are NUL-terminated, so the encoding is one that keeps ASCII
 * as it is (a UTF-16 one could not be written so): a string of ASCII
 * bytes only is left alone.
 */
static void bin_set_encoding(struct tptp_bin *x, const char *enc)
{
	static const char *const plain[] = {"", "UTF-8", "UTF8", "US-ASCII", "ASCII",
					    "ANSI_X3.4-1968"};
	char alt[64];

	/* named again (each message 1 a writer repeats): as it is */
	if (!strcmp(enc, x->enc))
		return;
	snprintf(x->enc, sizeof x->enc, "%s", enc);
	if (x->cd != (iconv_t)-1)
		iconv_close(x->cd);
	x->cd = (iconv_t)-1;
	for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
		if (!strcasecmp(enc, plain[i]))
			return;
	x->cd = iconv_open("UTF-8", enc);
	if (x->cd == (iconv_t)-1) {
		/* Java's names: ISO8859_1 is iconv's ISO8859-1 */
		snprintf(alt, sizeof alt, "%s", enc);
		for (char *c = alt; *c; c++)
			if (*c == '_')
				*c = '-';
		x->cd = iconv_open("UTF-8", alt);
	}
	if (x->cd == (iconv_t)-1) {
		char what[128];
		snprintf(what, sizeof what,
			 "tptp binary encoding %.40s, which iconv does not know (strings kept as bytes)", enc);
		apc_model_unmapped(x->r->model, what, 1);
	}
}

/* A string of rec's in UTF-8, at x->tbuf + *at (room checked); an input
 * byte the encoding has no character for becomes U+FFFD.  Returns 1 if
 * one did. */
static int bin_utf8(struct tptp_bin *x, const char *in, size_t *at)
{
	char *ip = (char *)in, *op = x->tbuf + *at;
	size_t il = strlen(in), ol = x->tcap - *at - 1;
	int bad = 0;

	iconv(x->cd, NULL, NULL, NULL, NULL);
	while (il && iconv(x->cd, &ip, &il, &op, &ol) == (size_t)-1) {
		if (errno == E2BIG || ol < 3)
			break; /* not with 4 bytes out a byte in */
		memcpy(op, "\xef\xbf\xbd", 3);
		op += 3;
		ol -= 3;
		ip++;
		il--;
		bad = 1;
		iconv(x->cd, NULL, NULL, NULL, NULL);
	}
	*op++ = '\0';
	*at = (size_t)(op - x->tbuf);
	return bad;
}

/* rec's strings with bytes past ASCII, into UTF-8 (x->cd is open).
 * They live until the next message: the map copies what it keeps. */
static int bin_transcode(struct tptp_bin *x, struct tptp_rec *rec)
{
	const char **strs[] = {&rec->name, &rec->signature, &rec->hostname, &rec->key, &rec->value,
			       &rec->group};
	size_t need = 0, at = 0, offs[6];
	unsigned wide = 0; /* the strings with a byte past ASCII */
	int bad = 0;

	for (size_t i = 0; i < 6; i++) {
		const unsigned char *u = (const unsigned char *)*strs[i];
		if (!u)
			continue;
		for (; *u; u++)
			if (*u >= 0x80) {
				wide |= 1u << i;
				need += 4 * strlen(*strs[i]) + 1;
				break;
			}
	}
	if (!wide)
		return 0;
	if (need > x->tcap) {
		char *nb = realloc(x->tbuf, need);
		if (!nb)
			return -1;
		x->tbuf = nb;
		x->tcap = need;
	}
	/* every string converted before any pointer moves to tbuf */
	for (size_t i = 0; i < 6; i++)
		if (wide >> i & 1) {
			offs[i] = at;
			bad |= bin_utf8(x, *strs[i], &at);
		}
	for (size_t i = 0; i < 6; i++)
		if (wide >> i & 1)
			*strs[i] = x->tbuf + offs[i];
	if (bad)
		apc_model_unmapped(x->r->model,
				   "tptp binary strings with bytes their encoding has no character for "
				   "(each made U+FFFD)", 1);
	return 0;
}

/* Parse a message body of kind `kind` into rec, afresh: by its plan
 * when it has one, else by its layout.  Returns bin_parse()'s. */
static long bin_parse_msg(struct tptp_bin *x, const struct bin_plan *plan, const char *lay, int kind,
			  const uint8_t *p, uint64_t body, struct tptp_rec *rec)
{
	APC_ZERO(rec);
	rec->kind = kind;
	rec->elem = plan ? plan->elem : tptp_kind_name(kind);
	x->bad_time = 0;
	x->stack = 0;
	return plan ? bin_parse_plan(x, plan, p, (size_t)body, rec) : bin_parse(x, lay, p, (size_t)body, rec);
}

static int bin_next_msg(struct tptp_bin *x, struct tptp_rec *rec)
{
	ssize_t n = bin_fill(x, 6);
	uint64_t off = bin_offset(x), len, body;
	const uint8_t *p;
	const char *lay;
	const struct bin_plan *plan = NULL;
	int id, kind = TPTP_UNKNOWN;
	long used;

	if (n < 0)
		return x->r->err.status < 0 ? x->r->err.status : APC_EIO;
	if (n == 0) {
		if (!x->trace_open)
			return 0;
		x->r->damaged = 1;
		return apc_err_set(&x->r->err, APC_EDATA, apc_stream_name(x->s), (int64_t)off,
				   "the trace ends without its traceEnd (cut short?); kept everything before it");
	}
	if (n < 6) {
		x->r->damaged = 1;
		return apc_err_set(&x->r->err, APC_EDATA, apc_stream_name(x->s), (int64_t)off,
				   "message header cut short (truncated trace?); kept everything before it");
	}
	id = (int)bin_get(x, x->buf + x->start, 2);
	len = bin_ld32(x->big, x->buf + x->start + 2);
	if (!bin_id_valid(id)) {
		x->r->damaged = 1;
		return apc_err_set(&x->r->err, APC_EDATA, apc_stream_name(x->s), (int64_t)off,
				   "message id %d is not one a writer uses (1..%d): the stream is out "
				   "of step here (damaged?); kept everything before it", id, TPTP_BIN_ID_MAX);
	}
	if (x->len_mode == LEN_UNKNOWN) {
		int mode = bin_decide(x, id, len);
		if (mode < 0)
			return x->r->err.status < 0 ? x->r->err.status : APC_EIO;
		x->len_mode = mode;
		apc_model_add_attr(x->r->model, "tptp.bin.length",
				   mode == LEN_INCLUDES_HEADER ? "includes header" : "excludes header");
	}
	if (x->len_mode == LEN_INCLUDES_HEADER) {
		if (len < 6) {
			x->r->damaged = 1;
			return apc_err_set(&x->r->err, APC_EDATA, apc_stream_name(x->s), (int64_t)off,
					   "message %d length %llu is shorter than its header", id,
					   (unsigned long long)len);
		}
		body = len - 6;
	} else {
		body = len;
	}
	if (body > TPTP_BIN_MSG_MAX) {
		x->r->damaged = 1;
		return apc_err_set(&x->r->err, APC_EDATA, apc_stream_name(x->s), (int64_t)off,
				   "message %d length %llu is over the %u-byte limit", id,
				   (unsigned long long)len, TPTP_BIN_MSG_MAX);
	}
	n = bin_fill(x, (size_t)(6 + body));
	if (n < 0)
		return x->r->err.status < 0 ? x->r->err.status : APC_EIO;
	if ((uint64_t)n < 6 + body) {
		long c = bin_body_size(x, id, x->buf + x->start + 6, (size_t)n - 6);
		x->r->damaged = 1;
		/* A cut is the likely reason, unless the attributes end
		 * before the file does and another message follows them:
		 * then the length is what is damaged. */
		if (c >= 0 && (size_t)n >= 6 + (size_t)c + 6 &&
		    bin_known((int)bin_get(x, x->buf + x->start + 6 + c, 2)))
			return apc_err_set(&x->r->err, APC_EDATA, apc_stream_name(x->s), (int64_t)off,
					   "message %d length %llu runs past the end of the file, but "
					   "another message follows its attributes at offset 0x%llx "
					   "(damaged length?); kept everything before it",
					   id, (unsigned long long)len,
					   (unsigned long long)(off + 6 + (uint64_t)c));
		return apc_err_set(&x->r->err, APC_EDATA, apc_stream_name(x->s), (int64_t)off,
				   "message %d of %llu bytes runs past the end of the file "
				   "(truncated trace?); kept everything before it",
				   id, (unsigned long long)body);
	}
	p = x->buf + x->start + 6;
	if (id >= TPTP_BIN_FIRST_ID && id < TPTP_BIN_FIRST_ID + TPTP_BIN_IDS) {
		plan = &x->plan[id - TPTP_BIN_FIRST_ID];
		lay = plan->lay;
		kind = plan->kind;
	} else {
		lay = tptp_bin_layout(id, &kind);
	}
	if (!lay) {
		/* System and unknown messages (rare): framing checked first. */
		const uint8_t *z = id == 1 ? memchr(p, 0, (size_t)body) : NULL;
		long fit = id == 1 ? (z ? (long)(z - p) + 1 : -1) : id == 2 ? (body >= 8 ? 8 : -1) : -2;
		if (fit != (long)body) {
			char what[64];
			int rc;
			snprintf(what, sizeof what, "%s (system message %d)",
				 id == 1 ? "encoding" : "frequency", id);
			rc = bin_check_frame(x, off, id, what, len, body, fit);
			if (rc < 0)
				return rc;
			p = x->buf + x->start + 6;
		}
	}
	x->start += (size_t)(6 + body);
	x->nrec++;

	if (id <= 1000) {
		x->nsys++;
		if (id == 1) {
			/* Character encoding: recorded for the user, and the
			 * strings after it are converted from it (bin_set_encoding). */
			const uint8_t *z = memchr(p, 0, (size_t)body);
			char enc[64];
			size_t k = z ? (size_t)(z - p) : (size_t)body;
			snprintf(enc, sizeof enc, "%.*s", (int)(k < 63 ? k : 63), (const char *)p);
			apc_model_add_attr(x->r->model, "tptp.bin.encoding", enc);
			bin_set_encoding(x, enc);
			if (z && k + 1 < body)
				bin_extra_bytes(x, "encoding");
		} else if (id == 2 && body >= 8) {
			uint64_t f = bin_get(x, p, 8);
			/* 0 is no frequency: times stay as they were taken
			 * (ns, or ticks at an earlier frequency) */
			if (f && f < 1000000)
				f *= 1000000;
			/* One frequency per trace: the CPU's max qualified
			 * one, a property of the machine.  A different one
			 * later would put times on two scales: ignored. */
			if (f && x->freq_hz && f != x->freq_hz)
				apc_model_unmapped(x->r->model,
						   "tptp binary frequency changes mid-trace "
						   "(ignored, the first one holds)", 1);
			else if (f)
				bin_set_freq(x, f);
			else
				apc_model_unmapped(x->r->model, "tptp binary frequencies of 0 (ignored)", 1);
			if (body > 8)
				bin_extra_bytes(x, "frequency");
		} else if (id == 2) {
			apc_model_unmapped(x->r->model,
					   "tptp binary frequency messages shorter than 8 bytes (ignored)", 1);
		} else {
			char what[64];
			snprintf(what, sizeof what, "tptp binary system message %d", id);
			apc_model_unmapped(x->r->model, what, 1);
		}
		return 2;
	}
	if (!lay) {
		char what[64];
		snprintf(what, sizeof what, "tptp binary message id %d (skipped)", id);
		apc_model_unmapped(x->r->model, what, 1);
		x->nskipped++;
		return 2;
	}
	used = bin_parse_msg(x, plan, lay, kind, p, body, rec);
	if ((uint64_t)used != body) {
		/* Framing check (rare: lengths match their fields in every
		 * trace written to the spec).  The message is still in the
		 * buffer: step back onto it; the check may move the buffer,
		 * so the record is parsed again from where it is then. */
		int rc;
		x->start -= (size_t)(6 + body);
		rc = bin_check_frame(x, off, id, rec->elem, len, body, used);
		if (rc < 0) {
			x->nrec--;
			return rc;
		}
		p = x->buf + x->start + 6;
		x->start += (size_t)(6 + body);
		used = bin_parse_msg(x, plan, lay, kind, p, body, rec);
	}
	if (used < 0) {
		apc_model_unmapped(x->r->model, "tptp binary messages shorter than their attributes (skipped)", 1);
		x->nskipped++;
		return 2;
	}
	if ((uint64_t)used < body)
		bin_extra_bytes(x, rec->elem);
	if (x->cd != (iconv_t)-1 && bin_transcode(x, rec) < 0)
		return apc_err_set(&x->r->err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
	/* Counted once the message is one: a skipped one is counted above. */
	if (x->bad_time)
		apc_model_unmapped(x->r->model, "tptp times that do not parse", 1);
	/* The monitor event is mapped; its stack (the XML's annotations,
	 * counted there as elements inside the record) is not. */
	if (x->stack)
		apc_model_unmapped(x->r->model, "tptp monitor stacks", 1);
	if (kind == TPTP_TRACE_START)
		x->trace_open = 1;
	else if (kind == TPTP_TRACE_END || kind == TPTP_AGENT_DESTROY)
		x->trace_open = 0;
	return 1;
}

/* ---- the reader ------------------------------------------------------------ */

/* Messages read and bytes done go to the model once per call, not per
 * message: the main thread works on the model's cache lines meanwhile. */
static void bin_account(struct tptp_bin *x)
{
	x->r->model->records_read += x->nrec;
	x->nrec = 0;
	x->r->progress_done = bin_offset(x);
}

static int tptp_bin_bid(struct apc_input *in)
{
	struct apc_stream *s;
	const uint8_t *p;
	struct apc_err err;

	if (apc_input_is_tree(in) || !(s = apc_input_stream(in)))
		return 0;
	apc_err_clear(&err);
	if (apc_stream_peek(s, &p, TPTP_BIN_HEADER, &err) < TPTP_BIN_HEADER)
		return 0;
	if ((memcmp(p, TPTP_BIN_MAGIC, 4) == 0 || memcmp(p, "\0TBF", 4) == 0) && p[7] <= 1)
		return 100;
	return 0;
}

/* The record source of tptp_map_header() and tptp_map_next(). */
static int bin_pull(void *ctx, struct tptp_rec *rec)
{
	return bin_next_msg(ctx, rec);
}

static int tptp_bin_open(struct apc_reader *r)
{
	struct tptp_bin *x;
	const uint8_t *h;
	uint64_t data_off;
	char ver[16];
	int rc;

	if (r->ninputs < 1 || apc_input_is_tree(r->inputs[0]))
		return apc_err_set(&r->err, APC_EIO, apc_input_path(r->inputs[0]), APC_NO_OFFSET,
				   "tptp binary reads a single file, not a directory or archive");
	x = calloc(1, sizeof *x);
	if (!x)
		return apc_err_set(&r->err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
	r->priv = x;
	x->r = r;
	x->cd = (iconv_t)-1;
	x->fast = (apc_cpu_features() & APC_CPU_FAST) != 0;
	bin_set_freq(x, 0);
	x->s = apc_input_stream(r->inputs[0]);
	/* no larger than a small file (plus a little, so a read sees its
	 * end): the fuzz campaign found the 256 KiB buffer costing more
	 * than parsing small inputs */
	x->cap = TPTP_BIN_BUF;
	if (apc_stream_size(x->s) >= 0 && (uint64_t)apc_stream_size(x->s) < TPTP_BIN_BUF)
		x->cap = (size_t)apc_stream_size(x->s) + 64;
	x->buf = malloc(x->cap + TPTP_BIN_SLACK);
	x->map = tptp_map_new(r->model, r->opts.window_ns);
	if (!x->buf || !x->map)
		return apc_err_set(&r->err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
	memset(x->buf + x->cap, 0, TPTP_BIN_SLACK);
	apc_strset(&r->model->meta.source_format, "tptp-bin");
	for (int i = 0; i < TPTP_BIN_IDS; i++) {
		int kind = TPTP_UNKNOWN;
		const char *lay = tptp_bin_layout(TPTP_BIN_FIRST_ID + i, &kind);
		bin_plan_make(&x->plan[i], lay, kind);
	}
	if (apc_stream_size(x->s) > 0)
		r->progress_total = (uint64_t)apc_stream_size(x->s);

	if (bin_fill(x, TPTP_BIN_HEADER) < TPTP_BIN_HEADER)
		return apc_err_set(&r->err, x->r->err.status < 0 ? x->r->err.status : APC_EDATA,
				   apc_stream_name(x->s), 0, "file is shorter than the 12-byte tptp binary header");
	h = x->buf;
	if (memcmp(h, TPTP_BIN_MAGIC, 4) != 0 && memcmp(h, "\0TBF", 4) != 0)
		return apc_err_set(&r->err, APC_EDATA, apc_stream_name(x->s), 0,
				   "no tptp binary magic (\"0TBF\")");
	if (h[7] > 1)
		return apc_err_set(&r->err, APC_EDATA, apc_stream_name(x->s), 7,
				   "endianness byte %u is neither 0 (big) nor 1 (little)", h[7]);
	x->big = h[7] == 0;
	x->platform64 = h[6] != 0;
	data_off = bin_get(x, h + 8, 4);
	snprintf(ver, sizeof ver, "%u.%u", h[4], h[5]);
	apc_model_add_attr(r->model, "tptp.bin.version", ver);
	apc_model_add_attr(r->model, "tptp.bin.platform", x->platform64 ? "64-bit" : "32-bit");
	apc_model_add_attr(r->model, "tptp.bin.endianness", x->big ? "big" : "little");
	if (data_off < TPTP_BIN_HEADER || data_off > TPTP_BIN_DATA_OFF_MAX)
		return apc_err_set(&r->err, APC_EDATA, apc_stream_name(x->s), 8,
				   "offset to data %llu is outside 12..%u", (unsigned long long)data_off,
				   TPTP_BIN_DATA_OFF_MAX);
	if (bin_fill(x, (size_t)data_off) < (ssize_t)data_off)
		return apc_err_set(&r->err, APC_EDATA, apc_stream_name(x->s), 8,
				   "offset to data %llu is past the end of the file", (unsigned long long)data_off);
	x->start = (size_t)data_off;

	/* Header messages, and the system messages among them. */
	rc = tptp_map_header(x->map, bin_pull, x, &x->finished, &x->pending_rc, &r->err);
	bin_account(x);
	return rc;
}

static int tptp_bin_next(struct apc_reader *r, struct apc_batch *b)
{
	struct tptp_bin *x = r->priv;
	int rc = tptp_map_next(x->map, r, b, bin_pull, x, &x->finished, &x->pending_rc);

	bin_account(x);
	return rc;
}

static void tptp_bin_close(struct apc_reader *r)
{
	struct tptp_bin *x = r->priv;

	if (!x)
		return;
	tptp_map_free(x->map);
	if (x->cd != (iconv_t)-1)
		iconv_close(x->cd);
	free(x->tbuf);
	free(x->buf);
	free(x);
	r->priv = NULL;
}

/* --stats=json and -v: the map's kinds, and the messages that never
 * reached it. */
static void tptp_bin_report(struct apc_reader *r)
{
	struct tptp_bin *x = r->priv;

	tptp_map_report(r);
	if (x && x->nsys)
		apc_model_count_kind(r->model, "tptp binary system message",
				     "capture metadata (encoding, tick frequency)", x->nsys);
	if (x && x->nskipped)
		apc_model_count_kind(r->model, "tptp binary message skipped",
				     "nothing (counted as not mapped)", x->nskipped);
}

const struct apc_format apc_format_tptp_bin = {
	.name = "tptp-bin",
	.description = "TPTP Java profiler binary trace (.trcbin, feature 196713)",
	.reads = "file",
	.bid = tptp_bin_bid,
	.open = tptp_bin_open,
	.next = tptp_bin_next,
	.report = tptp_bin_report,
	.close = tptp_bin_close,
	.read_ahead = 1,
};
