/*
 * frame.h - APC frames: reading the 0000000000 file frame by frame and
 * decoding each frame's messages into named fields.
 *
 * Shared by the APC reader (frames -> model), apcdump (listing) and
 * apcverify (checks).  Every length and packed integer is checked against
 * what remains before use; failures carry the file offset.
 */
#ifndef APC_FRAME_H
#define APC_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "input.h"
#include "packed.h"

/* Frame codes (packed32 at the start of each frame). */
enum apc_frame_type {
	APC_FRAME_SUMMARY = 1,
	APC_FRAME_BACKTRACE = 2,
	APC_FRAME_NAME = 3,
	APC_FRAME_COUNTER = 4,
	APC_FRAME_BLOCK_COUNTER = 5,
	APC_FRAME_ANNOTATE = 6,
	APC_FRAME_SCHED_TRACE = 7,
	APC_FRAME_IDLE = 9,
	APC_FRAME_EXTERNAL = 10,
	APC_FRAME_PROC = 11, /* gatord 6.8; perf attrs in 9.x */
	APC_FRAME_PERF_DATA = 12,
	APC_FRAME_ACTIVITY_TRACE = 13,
	APC_FRAME_TYPE_14 = 14,
	APC_FRAME_TYPE_15 = 15
};

/* Largest frame body we accept (gator's are well under 1 MiB). */
#define APC_FRAME_MAX (64u << 20)

#define APC_NEWLINE_CANARY "1\n2\r\n3\r4\n\r5"

/* Room for any frame type's name, "type_-2147483648" and its NUL included. */
#define APC_FRAME_NAME_MAX 24
/*
 * apc_frame_type_name() : a frame type's name ("summary", "block_counter",
 * ...), or "type_N" for any code that is not one (type_8, type_-40,
 * type_200), as apcdump lists it.  A known type's name is static; a
 * "type_N" is in a buffer of the calling thread that lasts for the next
 * 7 calls in that thread (so several may go into one message).
 * apc_frame_type_name_r() : the same, a "type_N" written into buf (len
 * APC_FRAME_NAME_MAX holds any); returns the name.
 */
const char *apc_frame_type_name(int type);
const char *apc_frame_type_name_r(int type, char *buf, size_t len);
/* 1 if frames of this type carry a core field after the type. */
int apc_frame_has_core(int type);
/* 1 for types the spec or real gatord files define. */
int apc_frame_type_known(int type);
/*
 * apc_frame_empty_words() : what apcverify and apcdump say of n
 * zero-length frames one after another from offset off to end (a
 * stretch of zeros reads as one such frame per 4 bytes), into buf;
 * returns buf.
 */
const char *apc_frame_empty_words(uint64_t n, int64_t off, int64_t end, char *buf, size_t len);

/*
 * The two gatord 6.8 timestamp quirks apcverify accepts with a warning
 * (its checks ts-gatord-name and ts-gatord-exit; the reasoning is at
 * the gatord quirks comment in verify.c), for any tool that tells them from real
 * disorder per (frame type, core):
 *  - APC_TSQ_FIRST_NAME: a thread_name whose tid no Name frame named
 *    before, earlier than the Name before it on its core (gatord stamps
 *    a new thread's first Name with its start time);
 *  - APC_TSQ_EXIT_SWITCH: a sched_switch right after a thread_exit on
 *    its core, earlier than that exit (gatord stamps the exit with its
 *    /proc scan's time).
 * apc_ts_quirk_accepts() : 1 if stepping `back` ns (> 0) behind the
 * previous timestamp of its (frame type, core) is still quirk q for a
 * message at ts: at most 1 s, plus 500 ppm of ts for a first Name
 * (CLOCK_BOOTTIME slewed by NTP).  Further back is real disorder.
 */
enum { APC_TSQ_NONE, APC_TSQ_FIRST_NAME, APC_TSQ_EXIT_SWITCH };
#define APC_TSQ_BACK_NS INT64_C(1000000000)
#define APC_TSQ_NAME_DRIFT_DIV 2000 /* 500 ppm */
static inline int apc_ts_quirk_accepts(int q, int64_t back, int64_t ts)
{
	int64_t max = APC_TSQ_BACK_NS;

	if (q == APC_TSQ_NONE)
		return 0;
	if (q == APC_TSQ_FIRST_NAME && ts > 0)
		max += ts / APC_TSQ_NAME_DRIFT_DIV;
	return back <= max;
}

/* One frame as read from the data file. */
struct apc_frame {
	uint64_t index;     /* 0-based frame number */
	uint64_t offset;    /* file offset of the frame's int32 length */
	uint32_t len;       /* body length */
	const uint8_t *body;/* len bytes, valid until the next read */
	int32_t type;       /* decoded frame code, or -1 if the body is empty */
	int32_t core;       /* core field, or -1 */
	uint32_t hdr_len;   /* bytes of code (+ core) at the start of body */
};

struct apc_frame_reader;

/* Start reading frames from s (not owned). */
int apc_frame_reader_new(struct apc_stream *s, struct apc_frame_reader **out,
			 struct apc_err *err);
void apc_frame_reader_free(struct apc_frame_reader *fr);
/*
 * apc_frame_read() : the next frame.  APC_OK, APC_END at a clean end of
 * file, APC_EDATA for a truncated length word or body, a negative length
 * or one over APC_FRAME_MAX (err names the offset), and the stream's
 * status when a read fails (APC_EDATA for a cut gzip stream or archive
 * member, APC_EIO for the system's errors).  A bad code/core packed
 * integer is not an error here:
 * f->type = -1 with hdr_len 0 and the verifier reports it (a code that
 * reads, even as a negative number, has hdr_len > 0).
 */
int apc_frame_read(struct apc_frame_reader *fr, struct apc_frame *f, struct apc_err *err);
/*
 * apc_frame_reader_readahead() : from now on read the stream `block`
 * bytes at a time (1 MiB is good) and hand frames out of that buffer,
 * instead of two exact reads per frame.  Frames, statuses, error
 * messages and offsets stay the same, with one exception: a gzip stream
 * that breaks part-way may fail a frame earlier or later, or name another
 * byte count (what zlib gives out before the break depends on the sizes
 * asked for).  The stream's own offset runs ahead of the frames, and a
 * read waits for a whole block (or the end): use it for streams of known
 * size (apc_stream_size() >= 0), not for pipes or live connections.
 * Call it before the first apc_frame_read(); APC_EIO after.
 */
int apc_frame_reader_readahead(struct apc_frame_reader *fr, size_t block);

/* ---- messages -------------------------------------------------------- */

enum apc_field_kind {
	APC_F_INT,    /* i */
	APC_F_HEX,    /* i, shown in hex (keys, cookies, cpuid) */
	APC_F_STR,    /* s, len (not NUL-terminated) */
	APC_F_BYTES,  /* s, len (raw, shown as hex / length) */
	APC_F_PAIRS,  /* s, len: a run of (packed32 cookie, packed64 offset) pairs; i = count */
	APC_F_WORDS,  /* s, len: a run of packed64 words, shown unsigned; i = count */
	APC_F_UHEX,   /* i as an unsigned 64-bit value: hex in text, unsigned in JSON
			 (an address; apcdump's names for a perf record's words) */
	APC_F_IDVALS  /* s, len: a run of (packed64 id, packed64 value) pairs; i = count
			 (apcdump: the values a perf record reads) */
};

/*
 * A message's fields have names unique within it, but for the Summary's
 * attributes: an "attr_key" field then its "attr_value", once per
 * attribute, in the file's order.  apcdump's JSON writes a member per
 * field and gathers those pairs into one "attrs" member; a decoder that
 * repeats another name makes it write a key twice in one object.
 */
struct apc_field {
	const char *name;  /* static */
	uint8_t kind;
	int64_t i;
	const uint8_t *s;
	uint32_t len;
};

#define APC_MSG_MAX_FIELDS 64 /* a gatord 9.x Summary has 12+ attribute pairs */

/*
 * One message.  `name` is the message type name used by apcdump and the
 * JSON schema ("summary", "core_name", "cookie_name", "thread_name",
 * "counter", "block_counter", "backtrace", "sched_switch",
 * "thread_exit", "link", "activity_switch", "task_exit", "idle",
 * "external", "external_disconnect", "proc", "annotate", "opaque").
 */
struct apc_msg {
	int frame_type;
	const char *name;
	int code;           /* message code within the frame, -1 if none */
	int32_t core;       /* message core (frame core, or its own field), -1 */
	int has_ts;
	int64_t ts;         /* as written (zero-based ns) */
	uint64_t offset;    /* file offset of the message's first byte */
	size_t nfields;
	struct apc_field f[APC_MSG_MAX_FIELDS]; /* entries past nfields are stale */
};

/* Iterates the messages of one frame. */
struct apc_msg_iter {
	const struct apc_frame *frame;
	size_t pos;          /* offset in body */
	int32_t bc_core;     /* block counter state: current core, pid, ts
				(bc_core: a perf data chunk's CPU too) */
	int32_t bc_pid;
	int64_t bc_ts;
	int bc_have_ts;
	int summary_version; /* 0 unknown; clocks in the Summary (3 or 4) */
	size_t perf_end;     /* where a perf data frame's chunk ends (body offset) */
	size_t perf_start;   /* and where they start (after the chunk's length) */
	int done;
	/* Set when apc_msg_next() stopped at a message code the frame type
	 * does not define: the code's offset in body, and the code.
	 * apcverify only warns of one ([unknown-msg]), so apcdump does. */
	int unknown;
	size_t unknown_pos;
	int32_t unknown_code;
};

/*
 * apc_msg_iter_init() : start on frame f.  summary_clocks is 3 for
 * protocols < 910 and 4 from 910 on (gatord 9.x Summary); pass 0 to guess
 * from the data.
 */
void apc_msg_iter_init(struct apc_msg_iter *it, const struct apc_frame *f, int summary_clocks);
/*
 * apc_msg_next() : decode the next message.  APC_OK, APC_END at the end
 * of the frame, APC_EDATA for an overlong or truncated packed integer or
 * string, or an unknown message code (err names the offset; the rest of
 * the frame is skipped; it->unknown tells an unknown code apart).  Frames of types 11 (v9 perf attrs), 12, 14, 15
 * yield one "opaque" message with the body as bytes.
 */
int apc_msg_next(struct apc_msg_iter *it, struct apc_msg *m, struct apc_err *err);

/*
 * apc_frame_unpack32/64() : apc_unpack32/64() for hot loops (the
 * message decoder, the verifier's walker): the same return value and
 * *v as the reference on every input, but inline: a one-byte value
 * (keys, cores, small values) at once, a longer one from one 8-byte
 * load while 8 bytes are left (little-endian GCC/Clang), else one loop
 * with one bound.  What that loop does not settle (a truncated or
 * 10-byte packed64) goes to the reference in packed.c.  test_frame_fast
 * checks both against the reference on random and exhaustive short
 * inputs.
 */
#if defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/*
 * With 8 bytes to read: the value ends at the first byte with bit 7
 * clear (count-trailing-zeros of the stop bits); its 7-bit groups are
 * joined (apc_packed_gather) and sign-extended from bit
 * 7k - 1 by a shift pair.  Returns k (1..8), or 0 when all 8 bytes
 * continue (the caller's loop settles that).  One 7-byte timestamp
 * took seven turns of the byte loop.
 */
static inline int apc_frame_unpack_w8(const uint8_t *p, int64_t *v)
{
	uint64_t w, stop, x;
	unsigned k, sh;

	__builtin_memcpy(&w, p, 8);
	stop = ~w & 0x8080808080808080ULL;
	if (!stop)
		return 0;
	k = ((unsigned)__builtin_ctzll(stop) >> 3) + 1;
	x = apc_packed_gather(w & 0x7f7f7f7f7f7f7f7fULL);
	sh = 64 - 7 * k; /* 8..57: the groups past the value's are shifted out */
	*v = (int64_t)(x << sh) >> sh;
	return (int)k;
}
#define APC_FRAME_UNPACK_W8 1
#endif

static inline int apc_frame_unpack64(const uint8_t *p, size_t n, int64_t *v)
{
	/* bytes 1..9 need no range check: the shifts stay below 64 */
	size_t lim = n < APC_PACKED64_MAX - 1 ? n : APC_PACKED64_MAX - 1;
	uint64_t r = 0;

#ifdef APC_FRAME_UNPACK_W8
	if (n && !(p[0] & 0x80)) { /* keys and small values: one byte */
		*v = (int64_t)((uint64_t)p[0] << 57) >> 57;
		return 1;
	}
	if (n >= 8) {
		int64_t t; /* a local: through v, gcc kept it in memory (2 % more instructions) */
		int k = apc_frame_unpack_w8(p, &t);
		if (k) {
			*v = t;
			return k;
		}
	}
#endif
	for (unsigned i = 0; i < lim; i++) {
		uint8_t b = p[i];
		r |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			if (b & 0x40)
				r |= ~(uint64_t)0 << (7 * i + 7);
			*v = (int64_t)r;
			return (int)i + 1;
		}
	}
	return apc_unpack64(p, n, v); /* truncated, or a 10th byte */
}

static inline int apc_frame_unpack32(const uint8_t *p, size_t n, int32_t *v)
{
	size_t lim = n < APC_PACKED32_MAX ? n : APC_PACKED32_MAX;
	uint64_t r = 0;

#ifdef APC_FRAME_UNPACK_W8
	if (n && !(p[0] & 0x80)) {
		*v = (int32_t)((uint32_t)p[0] << 25) >> 25;
		return 1;
	}
	if (n >= 8) {
		int64_t w;
		int k = apc_frame_unpack_w8(p, &w);
		/* past 5 bytes (or none of 8 ends) is overlong for a packed32 */
		if (!k || k > APC_PACKED32_MAX || w < INT32_MIN || w > INT32_MAX)
			return APC_PACKED_OVERLONG;
		*v = (int32_t)w;
		return k;
	}
#endif
	for (unsigned i = 0; i < lim; i++) {
		uint8_t b = p[i];
		r |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			int64_t w;
			if (b & 0x40)
				r |= ~(uint64_t)0 << (7 * i + 7);
			w = (int64_t)r;
			if (w < INT32_MIN || w > INT32_MAX)
				return APC_PACKED_OVERLONG;
			*v = (int32_t)w;
			return (int)i + 1;
		}
	}
	return lim == APC_PACKED32_MAX ? APC_PACKED_OVERLONG : APC_PACKED_TRUNCATED;
}

/* Find a field by name; NULL if absent. */
const struct apc_field *apc_msg_field(const struct apc_msg *m, const char *name);

/* ---- encoding (used by the APC writer and test generators) ------------ */

/* A growable byte buffer. */
struct apc_buf {
	uint8_t *p;
	size_t len, cap;
};
/* apc_buf_reserve()'s out-of-line part: grow to hold `more` bytes more. */
int apc_buf_grow(struct apc_buf *b, size_t more);
/* Room for `more` bytes past len: APC_OK, or APC_ENOMEM.  Inline, since
 * the writer asks for every message and the room is nearly always there. */
static inline int apc_buf_reserve(struct apc_buf *b, size_t more)
{
	return more <= b->cap - b->len ? APC_OK : apc_buf_grow(b, more);
}
void apc_buf_free(struct apc_buf *b);
/* Append helpers; they assume apc_buf_reserve() made room (10 bytes per packed). */
size_t apc_buf_put_packed32(struct apc_buf *b, int32_t v);
size_t apc_buf_put_packed64(struct apc_buf *b, int64_t v);
static inline int apc_buf_put_bytes(struct apc_buf *b, const void *p, size_t n)
{
	if (apc_buf_reserve(b, n) != APC_OK)
		return APC_ENOMEM;
	if (n)
		__builtin_memcpy(b->p + b->len, p, n);
	b->len += n;
	return APC_OK;
}
/* packed32 length then bytes (the APC "string" type). */
int apc_buf_put_string(struct apc_buf *b, const char *s, size_t n);

#endif
