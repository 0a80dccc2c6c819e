/*
 * frame.c - reading the APC data file (0000000000) frame by frame and
 * decoding each frame's messages into named fields.
 *
 * The layouts follow the Gator 6.8 protocol document where real gatord
 * output agrees with it, and gatord where it does not (see DESIGN.md,
 * "What real gatord captures do"): frame types 11, 12, 14 and 15 carry a
 * core field, 9.x Summaries have a fourth clock, and 6.8 frame 11 holds
 * the perf-attribute messages with NUL-terminated strings.
 *
 * Nothing here trusts a length: every packed integer and string is checked
 * against the bytes left in the frame, and a frame body is read in pieces
 * so a damaged length word cannot make us allocate more than the file has.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "frame.h"
#include "packed.h"

/* ---- frame types ------------------------------------------------------ */

static const char *const frame_names[] = {
	[APC_FRAME_SUMMARY] = "summary",
	[APC_FRAME_BACKTRACE] = "backtrace",
	[APC_FRAME_NAME] = "name",
	[APC_FRAME_COUNTER] = "counter",
	[APC_FRAME_BLOCK_COUNTER] = "block_counter",
	[APC_FRAME_ANNOTATE] = "annotate",
	[APC_FRAME_SCHED_TRACE] = "sched_trace",
	[APC_FRAME_IDLE] = "idle",
	[APC_FRAME_EXTERNAL] = "external",
	[APC_FRAME_PROC] = "proc",
	[APC_FRAME_PERF_DATA] = "perf_data",
	[APC_FRAME_ACTIVITY_TRACE] = "activity_trace",
	[APC_FRAME_TYPE_14] = "perf_aux",
	[APC_FRAME_TYPE_15] = "perf_sync",
};

const char *apc_frame_type_name_r(int type, char *buf, size_t len)
{
	if (apc_frame_type_known(type))
		return frame_names[type];
	snprintf(buf, len, "type_%d", type);
	return buf;
}

/* How many "type_N" names apc_frame_type_name() hands out before it
 * reuses a buffer: enough for every name in one message. */
#define FRAME_NAME_RING 8

const char *apc_frame_type_name(int type)
{
	/* "type_N" for every unknown code, negative and large ones too, as
	 * apcdump lists them; per thread, so threads never share a buffer */
	static _Thread_local char ring[FRAME_NAME_RING][APC_FRAME_NAME_MAX];
	static _Thread_local unsigned next;

	if (apc_frame_type_known(type))
		return frame_names[type];
	return apc_frame_type_name_r(type, ring[next++ % FRAME_NAME_RING], APC_FRAME_NAME_MAX);
}

const char *apc_frame_empty_words(uint64_t n, int64_t off, int64_t end, char *buf, size_t len)
{
	if (n == 1)
		snprintf(buf, len, "zero-length frame (the protocol's end of sequence) inside the file");
	else
		snprintf(buf, len,
			 "%" PRIu64 " zero-length frames (the protocol's end of sequence) one after "
			 "another inside the file, to offset 0x%" PRIx64 ": %" PRIu64 " bytes of zeros "
			 "(space never written?)",
			 n, (uint64_t)end, (uint64_t)(end - off));
	return buf;
}

int apc_frame_has_core(int type)
{
	/* The spec's list plus gatord's (frameTypeSendsCpu): perf frames too. */
	switch (type) {
	case APC_FRAME_BACKTRACE:
	case APC_FRAME_NAME:
	case APC_FRAME_BLOCK_COUNTER:
	case APC_FRAME_SCHED_TRACE:
	case APC_FRAME_PROC:
	case APC_FRAME_PERF_DATA:
	case APC_FRAME_TYPE_14:
	case APC_FRAME_TYPE_15:
		return 1;
	default:
		return 0;
	}
}

int apc_frame_type_known(int type)
{
	return type >= 0 && (size_t)type < sizeof frame_names / sizeof frame_names[0] &&
	       frame_names[type] != NULL;
}

/* ---- frame reader ----------------------------------------------------- */

struct apc_frame_reader {
	struct apc_stream *s;
	uint8_t *buf;
	size_t cap;
	uint64_t offset; /* file offset of the next length word */
	uint64_t index;
	/* read-ahead (apc_frame_reader_readahead): bytes [pos, len) of buf
	 * are read from the stream and not yet handed out as frames */
	size_t block;    /* 0: read each frame exactly */
	size_t pos, len;
};

int apc_frame_reader_new(struct apc_stream *s, struct apc_frame_reader **out,
			 struct apc_err *err)
{
	struct apc_frame_reader *fr = calloc(1, sizeof *fr);

	*out = NULL;
	if (!fr)
		return apc_err_set(err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
	fr->s = s;
	fr->offset = apc_stream_offset(s);
	*out = fr;
	return APC_OK;
}

void apc_frame_reader_free(struct apc_frame_reader *fr)
{
	if (!fr)
		return;
	free(fr->buf);
	free(fr);
}

/* Make room for `need` bytes in the reader's buffer. */
static int frame_grow(struct apc_frame_reader *fr, size_t need)
{
	size_t ncap;
	uint8_t *nb;

	if (need <= fr->cap)
		return APC_OK;
	ncap = fr->cap ? fr->cap : 4096;
	while (ncap < need)
		ncap *= 2;
	nb = realloc(fr->buf, ncap);
	if (!nb)
		return APC_ENOMEM;
	fr->buf = nb;
	fr->cap = ncap;
	return APC_OK;
}

int apc_frame_reader_readahead(struct apc_frame_reader *fr, size_t block)
{
	if (fr->index || fr->cap)
		return APC_EIO; /* only before the first frame */
	fr->block = block;
	return APC_OK;
}

/*
 * A read of up to `step` bytes, no more than what is left of a stream of
 * known size (at least 4 KiB, in case the file grows): a damaged length
 * word costs no more memory than the file holds.
 */
static size_t frame_step(const struct apc_frame_reader *fr, size_t step)
{
	int64_t size = apc_stream_size(fr->s);

	if (size >= 0) {
		uint64_t at = apc_stream_offset(fr->s);
		uint64_t left = (uint64_t)size > at ? (uint64_t)size - at : 0;
		if (left < 4096)
			left = 4096;
		if (step > left)
			step = (size_t)left;
	}
	return step;
}

/*
 * Read-ahead: make `need` bytes available at buf + pos, reading the
 * stream a block at a time.  Returns what is available (less than need
 * at the end of the stream), or -1 when a read failed with nothing more
 * to give (err set by the stream), or -2 when the buffer could not grow.
 * Nothing is sticky: as with exact reads, the stream itself answers 0 or
 * -1 again when called after its end or a failure.  The buffer grows
 * only by doubling when it is full of bytes that did arrive, and a read
 * is no bigger than what is left of a stream of known size (at least
 * 4 KiB), so a damaged length word costs no more memory than exact
 * reads do.
 */
static ssize_t frame_fill(struct apc_frame_reader *fr, size_t need, struct apc_err *err)
{
	while (fr->len - fr->pos < need) {
		size_t step = frame_step(fr, fr->block), avail = fr->len - fr->pos, n;
		ssize_t got;

		if (fr->cap - fr->len < step) {
			if (fr->pos) { /* keep the unread tail at the start */
				memmove(fr->buf, fr->buf + fr->pos, avail);
				fr->pos = 0;
				fr->len = avail;
			}
			if (fr->cap - fr->len < step && frame_grow(fr, fr->len + step) != APC_OK)
				return -2;
		}
		n = fr->cap - fr->len;
		if (n > fr->block)
			n = fr->block;
		got = apc_stream_read(fr->s, fr->buf + fr->len, n, err);
		if (got < 0)
			return -1;
		if (got == 0)
			break;
		fr->len += (size_t)got;
	}
	return (ssize_t)(fr->len - fr->pos);
}

/*
 * The status of a failed stream read: the stream's own (APC_EDATA for a
 * gzip stream or archive member cut short, whose bytes before the cut
 * were good), else APC_EIO.
 */
static int frame_read_failed(const struct apc_err *err)
{
	return err && err->status < 0 ? err->status : APC_EIO;
}

/* APC_EDATA, err naming frame f: both ways of reading say the same. */
static int frame_bad(struct apc_err *err, const char *name, const struct apc_frame *f,
		     const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int frame_bad(struct apc_err *err, const char *name, const struct apc_frame *f,
		     const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	apc_err_vset(err, APC_EDATA, name, (int64_t)f->offset, fmt, ap);
	va_end(ap);
	apc_err_index(err, "frame", (int64_t)f->index);
	return APC_EDATA;
}

static int frame_word_cut(struct apc_err *err, const char *name, const struct apc_frame *f,
			  ssize_t got)
{
	return frame_bad(err, name, f,
			 "frame length word cut short after %zd of 4 bytes (truncated capture?)", got);
}

/* The length word, little-endian; APC_EDATA when it is negative or over the limit. */
static int frame_len_word(struct apc_err *err, const char *name, const struct apc_frame *f,
			  const uint8_t *lw, int32_t *len)
{
	*len = (int32_t)apc_le32(lw);
	if (*len < 0 || (uint32_t)*len > APC_FRAME_MAX)
		return frame_bad(err, name, f, "frame length %ld is %s", (long)*len,
				 *len < 0 ? "negative" : "over the 64 MiB limit");
	return APC_OK;
}

/* The body ends `left` bytes after the length word. */
static int frame_body_cut(struct apc_err *err, const char *name, const struct apc_frame *f,
			  int32_t len, size_t left)
{
	return frame_bad(err, name, f,
			 "frame length %ld runs past the end of the file, %zu bytes left "
			 "(truncated capture?)", (long)len, left);
}

/* apc_frame_read() with read-ahead: the same frames, errors and offsets. */
static int frame_read_ahead(struct apc_frame_reader *fr, struct apc_frame *f, struct apc_err *err)
{
	const char *name = apc_stream_name(fr->s);
	ssize_t avail = frame_fill(fr, 4, err);
	int32_t len;

	if (avail == -2)
		return apc_err_set(err, APC_ENOMEM, name, (int64_t)f->offset, "out of memory");
	if (avail == -1 && fr->len == fr->pos)
		return frame_read_failed(err);
	if (avail == -1)
		avail = (ssize_t)(fr->len - fr->pos);
	if (avail == 0)
		return APC_END;
	/* exact reads see these bytes and then the end (or a held-back
	 * error, which comes with the next call): a cut-short word */
	if (avail < 4)
		return frame_word_cut(err, name, f, avail);
	if (frame_len_word(err, name, f, fr->buf + fr->pos, &len) != APC_OK) {
		/* exact reads have taken the word: so do we */
		fr->pos += 4;
		return APC_EDATA;
	}
	avail = frame_fill(fr, 4u + (size_t)len, err);
	if (avail == -2)
		return apc_err_set(err, APC_ENOMEM, name, (int64_t)f->offset,
				   "out of memory for a frame of %ld bytes", (long)len);
	if (avail == -1)
		return frame_read_failed(err);
	if ((size_t)avail < 4u + (size_t)len) {
		fr->pos = fr->len;
		return frame_body_cut(err, name, f, len, (size_t)avail - 4);
	}
	f->len = (uint32_t)len;
	{
		static const uint8_t empty[1];
		f->body = len ? fr->buf + fr->pos + 4 : empty;
	}
	fr->pos += 4u + (size_t)len;
	return APC_OK;
}

int apc_frame_read(struct apc_frame_reader *fr, struct apc_frame *f, struct apc_err *err)
{
	const char *name = apc_stream_name(fr->s);
	uint8_t lw[4];
	ssize_t got;
	int32_t len;
	size_t have = 0;
	int k;

	memset(f, 0, sizeof *f);
	f->index = fr->index;
	f->offset = fr->offset;
	f->type = -1;
	f->core = -1;

	if (fr->block) {
		int rc = frame_read_ahead(fr, f, err);
		if (rc != APC_OK)
			return rc;
		len = (int32_t)f->len;
		goto have_body;
	}
	got = apc_stream_read(fr->s, lw, sizeof lw, err);
	if (got < 0)
		return frame_read_failed(err);
	if (got == 0)
		return APC_END;
	if (got < 4)
		return frame_word_cut(err, name, f, got);
	if (frame_len_word(err, name, f, lw, &len) != APC_OK)
		return APC_EDATA;
	/* Read in pieces, growing the buffer as bytes arrive: a bad length
	 * on a short file costs no more memory than the file holds, and a
	 * huge length in a small file does not even cost a 1 MiB buffer. */
	while (have < (size_t)len) {
		size_t want = (size_t)len - have;
		size_t step = frame_step(fr, want < (1u << 20) ? want : (1u << 20));

		if (frame_grow(fr, have + step) != APC_OK)
			return apc_err_set(err, APC_ENOMEM, name, (int64_t)f->offset,
					   "out of memory for a frame of %ld bytes", (long)len);
		got = apc_stream_read(fr->s, fr->buf + have, step, err);
		if (got < 0)
			return frame_read_failed(err);
		if (got == 0)
			return frame_body_cut(err, name, f, len, have);
		have += (size_t)got;
	}
	f->len = (uint32_t)len;
	{
		static const uint8_t empty[1];
		f->body = len ? fr->buf : empty; /* never NULL, even for empty frames */
	}
have_body:
	fr->offset += 4u + (uint64_t)len;
	fr->index++;

	if (len == 0)
		return APC_OK;
	k = apc_frame_unpack32(f->body, f->len, &f->type);
	if (k <= 0) {
		f->type = -1;
		return APC_OK;
	}
	f->hdr_len = (uint32_t)k;
	if (apc_frame_has_core(f->type)) {
		int32_t core;
		int kc = apc_frame_unpack32(f->body + k, f->len - (uint32_t)k, &core);
		if (kc > 0) {
			f->core = core;
			f->hdr_len += (uint32_t)kc;
		}
	}
	return APC_OK;
}

/* ---- message decoding ------------------------------------------------- */

/* A read position inside one frame body, with what errors need. */
struct frame_cur {
	struct apc_msg_iter *it;
	const uint8_t *b;
	size_t pos, end;
	struct apc_err *err;
};

static inline uint64_t cur_off(const struct frame_cur *c, size_t pos)
{
	return c->it->frame->offset + 4u + pos;
}

static int cur_fail(struct frame_cur *c, size_t pos, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int cur_fail(struct frame_cur *c, size_t pos, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	apc_err_vset(c->err, APC_EDATA, NULL, (int64_t)cur_off(c, pos), fmt, ap);
	va_end(ap);
	apc_err_index(c->err, "frame", (int64_t)c->it->frame->index);
	return APC_EDATA;
}

static int cur_packed_fail(struct frame_cur *c, int k, const char *what)
{
	if (k == APC_PACKED_TRUNCATED)
		return cur_fail(c, c->pos, "packed integer for %s runs past the end of the frame",
				what);
	return cur_fail(c, c->pos, "overlong or out-of-range packed integer for %s", what);
}

static inline __attribute__((always_inline)) int cur_i32(struct frame_cur *c, const char *what, int32_t *v)
{
	int k = apc_frame_unpack32(c->b + c->pos, c->end - c->pos, v);
	if (k <= 0) {
		cur_packed_fail(c, k, what);
		return APC_EDATA; /* what it returns, said here for gcc's sake */
	}
	c->pos += (size_t)k;
	return APC_OK;
}

static inline __attribute__((always_inline)) int cur_i64(struct frame_cur *c, const char *what, int64_t *v)
{
	int k = apc_frame_unpack64(c->b + c->pos, c->end - c->pos, v);
	if (k <= 0) {
		cur_packed_fail(c, k, what);
		return APC_EDATA; /* what it returns, said here for gcc's sake */
	}
	c->pos += (size_t)k;
	return APC_OK;
}

/* An APC string: packed32 length, then that many bytes. */
static int cur_str(struct frame_cur *c, const char *what, const uint8_t **s, uint32_t *len)
{
	size_t start = c->pos;
	int32_t n;
	int rc = cur_i32(c, what, &n);

	*s = NULL; /* set on every path: gcc -O3 cannot see that callers check rc */
	*len = 0;
	if (rc)
		return rc;
	if (n < 0 || (size_t)n > c->end - c->pos) {
		/* what the string could have had: the bytes after its length
		 * (as apcverify counts them) */
		size_t left = c->end - c->pos;
		c->pos = start;
		return cur_fail(c, start,
				"string length %ld for %s runs past the end of the frame "
				"(%zu bytes follow the length field)",
				(long)n, what, left);
	}
	*s = c->b + c->pos;
	*len = (uint32_t)n;
	c->pos += (size_t)n;
	return APC_OK;
}

/* A NUL-terminated string (gatord's perf-attribute messages). */
static int cur_cstr(struct frame_cur *c, const char *what, const uint8_t **s, uint32_t *len)
{
	const uint8_t *p = c->b + c->pos;
	const uint8_t *nul = memchr(p, 0, c->end - c->pos);

	*s = NULL;
	*len = 0;
	if (!nul) {
		cur_fail(c, c->pos, "%s has no terminating NUL before the end of the frame", what);
		return APC_EDATA; /* what it returns, said here for gcc's sake */
	}
	*s = p;
	*len = (uint32_t)(nul - p);
	c->pos += (size_t)(nul - p) + 1;
	return APC_OK;
}

/*
 * Append a field.  Member by member, not as a compound literal: that one
 * clears the whole struct first (a `rep stos` per field, which cost more
 * than the decoding).
 */
static inline void msg_str(struct apc_msg *m, const char *name, int kind, const uint8_t *s,
			   uint32_t len, int64_t i)
{
	struct apc_field *fl;

	if (m->nfields >= APC_MSG_MAX_FIELDS)
		return;
	fl = &m->f[m->nfields++];
	fl->name = name;
	fl->kind = (uint8_t)kind;
	fl->i = i;
	fl->s = s;
	fl->len = len;
}

static inline void msg_int(struct apc_msg *m, const char *name, int kind, int64_t v)
{
	msg_str(m, name, kind, NULL, 0, v);
}

/* Read a packed32 and add it as a field. */
static inline int get32(struct frame_cur *c, struct apc_msg *m, const char *name, int kind, int32_t *out)
{
	int32_t v;
	int rc = cur_i32(c, name, &v);
	if (rc)
		return rc;
	msg_int(m, name, kind, v);
	if (out)
		*out = v;
	return APC_OK;
}

static inline int get64(struct frame_cur *c, struct apc_msg *m, const char *name, int kind)
{
	int64_t v;
	int rc = cur_i64(c, name, &v);
	if (rc)
		return rc;
	msg_int(m, name, kind, v);
	return APC_OK;
}

static inline int get_ts(struct frame_cur *c, struct apc_msg *m)
{
	int rc = cur_i64(c, "timestamp", &m->ts);
	if (rc == APC_OK)
		m->has_ts = 1;
	return rc;
}

static inline int get_str(struct frame_cur *c, struct apc_msg *m, const char *name)
{
	const uint8_t *s;
	uint32_t len;
	int rc = cur_str(c, name, &s, &len);
	if (rc)
		return rc;
	msg_str(m, name, APC_F_STR, s, len, 0);
	return APC_OK;
}

static int get_cstr(struct frame_cur *c, struct apc_msg *m, const char *name)
{
	const uint8_t *s;
	uint32_t len;
	int rc = cur_cstr(c, name, &s, &len);
	if (rc)
		return rc;
	msg_str(m, name, APC_F_STR, s, len, 0);
	return APC_OK;
}

static int unknown_code(struct frame_cur *c, size_t at, int32_t code)
{
	c->it->unknown = 1;
	c->it->unknown_pos = at;
	c->it->unknown_code = code;
	return cur_fail(c, at, "unknown message code %ld in a %s frame", (long)code,
			apc_frame_type_name(c->it->frame->type));
}

/* The code that starts a coded frame's message, kept in m->code;
 * inline, as the cur_i32() it replaces was. */
static inline __attribute__((always_inline)) int get_code(struct frame_cur *c, struct apc_msg *m, int32_t *code)
{
	int rc = cur_i32(c, "message code", code);
	if (rc == APC_OK)
		m->code = *code;
	return rc;
}

/* The rest of the frame as one "data" field. */
static void rest_as_data(struct frame_cur *c, struct apc_msg *m)
{
	msg_str(m, "data", APC_F_BYTES, c->b + c->pos, (uint32_t)(c->end - c->pos), 0);
	c->pos = c->end;
}

/*
 * Summary message body after the canary: clocks then attribute pairs.
 * Attributes that do not fit the message continue in "summary_attrs"
 * messages (it->bc_pid counts how many pairs were taken).
 */
static int summary_attrs(struct frame_cur *c, struct apc_msg *m)
{
	for (;;) {
		const uint8_t *k, *v;
		uint32_t kl, vl;
		size_t at = c->pos;
		int rc = cur_str(c, "attribute key", &k, &kl);

		if (rc)
			return rc;
		if (kl == 0) {
			c->it->bc_have_ts = 0; /* attributes done */
			return APC_OK;
		}
		if (m->nfields + 2 > APC_MSG_MAX_FIELDS) {
			c->pos = at; /* continue in the next message */
			c->it->bc_have_ts = 3;
			return APC_OK;
		}
		rc = cur_str(c, "attribute value", &v, &vl);
		if (rc)
			return rc;
		msg_str(m, "attr_key", APC_F_STR, k, kl, 0);
		msg_str(m, "attr_value", APC_F_STR, v, vl, 0);
	}
}

static int summary_body(struct frame_cur *c, struct apc_msg *m, int clocks)
{
	static const char *const clock_names[] = {"timestamp", "uptime", "monotonic_delta",
						  "clock4"};
	int rc;

	rc = get_str(c, m, "canary");
	for (int i = 0; rc == APC_OK && i < clocks; i++)
		rc = get64(c, m, clock_names[i], APC_F_INT);
	if (rc == APC_OK)
		rc = summary_attrs(c, m);
	return rc;
}

static int msg_summary_frame(struct frame_cur *c, struct apc_msg *m)
{
	struct apc_msg_iter *it = c->it;
	size_t at = c->pos;
	int32_t code;
	int rc;

	if (it->bc_have_ts == 3) { /* attributes continued from the last message */
		m->name = "summary_attrs";
		return summary_attrs(c, m);
	}
	if ((rc = get_code(c, m, &code)))
		return rc;
	m->core = -1;
	switch (code) {
	case 1: {
		size_t body = c->pos;
		struct apc_err keep = *c->err;
		m->name = "summary";
		if (it->summary_version == 3 || it->summary_version == 4)
			return summary_body(c, m, it->summary_version);
		/* Unknown protocol: three clocks parse as attributes only when
		 * there are three; a fourth reads as a string length that runs
		 * off the frame or decodes as overlong - or, when it is 0, as
		 * the end of the attributes, which then leaves them to be read
		 * as messages: three only when what follows is the frame's end
		 * or a core name message (code 3). */
		rc = summary_body(c, m, 3);
		int three = rc == APC_OK;
		if (three) {
			size_t after = c->pos;
			int32_t next = 3;
			if (c->pos < c->end && cur_i32(c, "message code", &next) != APC_OK)
				next = -1;
			c->pos = after;
			if (next == 3) {
				*c->err = keep;
				it->summary_version = 3;
				return APC_OK;
			}
		}
		*c->err = keep;
		c->pos = body;
		m->nfields = 0;
		rc = summary_body(c, m, 4);
		if (rc == APC_OK) {
			it->summary_version = 4;
			return APC_OK;
		}
		if (three) {
			/* four clocks do not parse either: three, and what
			 * follows is the next message's problem */
			*c->err = keep;
			c->pos = body;
			m->nfields = 0;
			rc = summary_body(c, m, 3);
			it->summary_version = 3;
		}
		return rc;
	}
	case 3:
		m->name = "core_name";
		if ((rc = get32(c, m, "core", APC_F_INT, NULL)) ||
		    (rc = get32(c, m, "cpuid", APC_F_HEX, NULL)))
			return rc;
		return get_str(c, m, "name");
	default:
		return unknown_code(c, at, code);
	}
}

static int msg_backtrace(struct frame_cur *c, struct apc_msg *m)
{
	size_t start;
	int64_t n = 0;
	int rc;

	m->name = "backtrace";
	if ((rc = get_ts(c, m)) || (rc = get32(c, m, "cookie", APC_F_INT, NULL)) ||
	    (rc = get32(c, m, "pid", APC_F_INT, NULL)) || (rc = get32(c, m, "tid", APC_F_INT, NULL)))
		return rc;
	/* (cookie, offset) pairs up to the End of Message value 1. */
	start = c->pos;
	for (;;) {
		size_t at = c->pos;
		int32_t cookie;
		int64_t off;

		if ((rc = cur_i32(c, "backtrace cookie", &cookie)))
			return rc;
		if (cookie == 1) {
			msg_str(m, "frames", APC_F_PAIRS, c->b + start, (uint32_t)(at - start), n);
			return APC_OK;
		}
		if ((rc = cur_i64(c, "backtrace offset", &off)))
			return rc;
		n++;
	}
}

static int msg_name_frame(struct frame_cur *c, struct apc_msg *m)
{
	size_t at = c->pos;
	int32_t code;
	int rc;

	if ((rc = get_code(c, m, &code)))
		return rc;
	if (code == 1) {
		m->name = "cookie_name";
		if ((rc = get32(c, m, "cookie", APC_F_INT, NULL)))
			return rc;
		return get_str(c, m, "name");
	}
	if (code == 2) {
		m->name = "thread_name";
		if ((rc = get_ts(c, m)) || (rc = get32(c, m, "tid", APC_F_INT, NULL)))
			return rc;
		return get_str(c, m, "name");
	}
	return unknown_code(c, at, code);
}

static int msg_counter(struct frame_cur *c, struct apc_msg *m)
{
	int rc;

	m->name = "counter";
	if ((rc = get_ts(c, m)) || (rc = get32(c, m, "core", APC_F_INT, &m->core)) ||
	    (rc = get32(c, m, "key", APC_F_HEX, NULL)))
		return rc;
	return get64(c, m, "value", APC_F_INT);
}

/*
 * Block counters: key 0 sets the time (and, as gatord does, forgets the
 * pid), key 1 the pid, key 2 the core.  The core lasts past later
 * timestamps, which is how gatord reads it.  Only values become messages.
 */
static int msg_block_counter(struct frame_cur *c, struct apc_msg *m)
{
	struct apc_msg_iter *it = c->it;

	while (c->pos < c->end) {
		size_t at = c->pos;
		int32_t key;
		int64_t v;
		int rc;

		if ((rc = cur_i32(c, "block counter key", &key)) ||
		    (rc = cur_i64(c, "block counter value", &v)))
			return rc;
		if (key == 0) {
			it->bc_ts = v;
			it->bc_have_ts = 1;
			it->bc_pid = 0;
			continue;
		}
		if (key == 1 || key == 2) {
			if (v < INT32_MIN || v > INT32_MAX)
				return cur_fail(c, at, "block counter %s out of range",
						key == 1 ? "pid" : "core");
			if (key == 1)
				it->bc_pid = (int32_t)v;
			else
				it->bc_core = (int32_t)v;
			continue;
		}
		m->name = "block_counter";
		m->offset = cur_off(c, at);
		m->has_ts = it->bc_have_ts;
		m->ts = it->bc_ts;
		m->core = it->bc_core;
		msg_int(m, "core", APC_F_INT, it->bc_core);
		msg_int(m, "pid", APC_F_INT, it->bc_pid);
		msg_int(m, "key", APC_F_HEX, key);
		msg_int(m, "value", APC_F_INT, v);
		return APC_OK;
	}
	return APC_END;
}

static int msg_annotate(struct frame_cur *c, struct apc_msg *m)
{
	int32_t size;
	int rc;

	m->name = "annotate";
	if ((rc = get32(c, m, "core", APC_F_INT, &m->core)) ||
	    (rc = get32(c, m, "tid", APC_F_INT, NULL)) || (rc = get_ts(c, m)) ||
	    (rc = cur_i32(c, "annotation size", &size)))
		return rc;
	if (size < 0 || (size_t)size > c->end - c->pos)
		return cur_fail(c, c->pos, "annotation size runs past the end of the frame%s", "");
	msg_str(m, "data", APC_F_BYTES, c->b + c->pos, (uint32_t)size, 0);
	c->pos += (size_t)size;
	return APC_OK;
}

static int msg_sched(struct frame_cur *c, struct apc_msg *m)
{
	size_t at = c->pos;
	int32_t code;
	int rc;

	if ((rc = get_code(c, m, &code)))
		return rc;
	if (code != 1 && code != 2)
		return unknown_code(c, at, code);
	m->name = code == 1 ? "sched_switch" : "thread_exit";
	if ((rc = get_ts(c, m)) || (rc = get32(c, m, "tid", APC_F_INT, NULL)))
		return rc;
	if (code == 1)
		return get32(c, m, "state", APC_F_INT, NULL);
	return APC_OK;
}

static int msg_idle(struct frame_cur *c, struct apc_msg *m)
{
	int rc;

	m->name = "idle";
	if ((rc = get32(c, m, "state", APC_F_INT, NULL)) || (rc = get_ts(c, m)))
		return rc;
	return get32(c, m, "core", APC_F_INT, &m->core);
}

static int msg_external(struct frame_cur *c, struct apc_msg *m)
{
	int32_t fd;
	int rc;

	m->core = -1;
	if ((rc = cur_i32(c, "external id", &fd)))
		return rc;
	if (fd == -1) {
		m->name = "external_disconnect";
		return get32(c, m, "fd", APC_F_INT, NULL);
	}
	m->name = "external";
	msg_int(m, "fd", APC_F_INT, fd);
	rest_as_data(c, m);
	return APC_OK;
}

static int msg_activity(struct frame_cur *c, struct apc_msg *m)
{
	size_t at = c->pos;
	int32_t code;
	int rc;

	if ((rc = get_code(c, m, &code)))
		return rc;
	switch (code) {
	case 1:
		m->name = "link";
		if ((rc = get_ts(c, m)) || (rc = get32(c, m, "cookie", APC_F_INT, NULL)) ||
		    (rc = get32(c, m, "pid", APC_F_INT, NULL)))
			return rc;
		return get32(c, m, "tid", APC_F_INT, NULL);
	case 2:
		m->name = "activity_switch";
		if ((rc = get_ts(c, m)) || (rc = get32(c, m, "core", APC_F_INT, &m->core)) ||
		    (rc = get32(c, m, "key", APC_F_HEX, NULL)) ||
		    (rc = get32(c, m, "activity", APC_F_INT, NULL)) ||
		    (rc = get32(c, m, "tid", APC_F_INT, NULL)))
			return rc;
		return get32(c, m, "wait_state", APC_F_INT, NULL);
	case 3:
		m->name = "task_exit";
		if ((rc = get_ts(c, m)))
			return rc;
		return get32(c, m, "tid", APC_F_INT, NULL);
	default:
		return unknown_code(c, at, code);
	}
}

/*
 * gatord 6.8 frame 11 (perf attributes; "Proc" in the spec): coded
 * messages.  Code 10 opens a run of (core, key, value) counters ended by
 * core -1; each counter becomes its own message (it->bc_have_ts == 2
 * while inside the run).
 */
static int msg_perf_attrs(struct frame_cur *c, struct apc_msg *m)
{
	struct apc_msg_iter *it = c->it;
	size_t at = c->pos;
	int32_t code, n;
	int rc;

	if (it->bc_have_ts == 2) {
		int32_t core;
		if ((rc = cur_i32(c, "perf counter core", &core)))
			return rc;
		if (core == -1) {
			it->bc_have_ts = 0;
			return 1; /* run over: caller reads the next message */
		}
		m->name = "perf_counter";
		m->code = 10;
		m->has_ts = 1;
		m->ts = it->bc_ts;
		m->core = core;
		msg_int(m, "core", APC_F_INT, core);
		if ((rc = get32(c, m, "key", APC_F_HEX, NULL)))
			return rc;
		return get64(c, m, "value", APC_F_INT);
	}
	if ((rc = get_code(c, m, &code)))
		return rc;
	switch (code) {
	case 1: { /* raw struct perf_event_attr, its size at offset 4, then key */
		const uint8_t *p = c->b + c->pos;
		size_t left = c->end - c->pos;
		uint32_t size;
		m->name = "perf_attr";
		if (left < 8)
			return cur_fail(c, c->pos, "%s runs past the end of the frame",
					"perf_event_attr");
		size = apc_le32(p + 4);
		if (size < 8 || size > left)
			return cur_fail(c, c->pos, "%s size runs past the end of the frame",
					"perf_event_attr");
		msg_int(m, "attr_type", APC_F_INT, apc_le32(p));
		if (size >= 16)
			msg_int(m, "config", APC_F_HEX, (int64_t)apc_le64(p + 8));
		msg_str(m, "attr", APC_F_BYTES, p, size, 0);
		c->pos += size;
		return get32(c, m, "key", APC_F_HEX, NULL);
	}
	case 2: { /* count, then (packed64 id, packed32 key) pairs */
		size_t start;
		m->name = "perf_keys";
		if ((rc = get32(c, m, "count", APC_F_INT, &n)))
			return rc;
		if (n < 0)
			return cur_fail(c, at, "negative %s", "key count");
		start = c->pos;
		for (int32_t i = 0; i < n; i++) {
			int64_t id;
			int32_t key;
			if ((rc = cur_i64(c, "perf id", &id)) || (rc = cur_i32(c, "perf key", &key)))
				return rc;
		}
		msg_str(m, "ids", APC_F_BYTES, c->b + start, (uint32_t)(c->pos - start), n);
		return APC_OK;
	}
	case 3:
		m->name = "perf_format";
		return get_cstr(c, m, "format");
	case 4:
		m->name = "perf_maps";
		if ((rc = get32(c, m, "pid", APC_F_INT, NULL)) ||
		    (rc = get32(c, m, "tid", APC_F_INT, NULL)))
			return rc;
		return get_cstr(c, m, "maps");
	case 5:
		m->name = "proc";
		if ((rc = get32(c, m, "pid", APC_F_INT, NULL)) ||
		    (rc = get32(c, m, "tid", APC_F_INT, NULL)) || (rc = get_cstr(c, m, "image")))
			return rc;
		return get_cstr(c, m, "comm");
	case 6: /* keys, then a raw read() buffer whose length is not written */
		m->name = "perf_keys_old";
		if ((rc = get32(c, m, "count", APC_F_INT, &n)))
			return rc;
		for (int32_t i = 0; i < n; i++)
			if ((rc = cur_i32(c, "perf key", &code)))
				return rc;
		rest_as_data(c, m);
		return APC_OK;
	case 7:
	case 8:
		m->name = code == 7 ? "online_cpu" : "offline_cpu";
		if ((rc = get_ts(c, m)))
			return rc;
		return get32(c, m, "cpu", APC_F_INT, &m->core);
	case 9:
		m->name = "kallsyms";
		return get_cstr(c, m, "kallsyms");
	case 10:
		if ((rc = cur_i64(c, "timestamp", &it->bc_ts)))
			return rc;
		it->bc_have_ts = 2;
		return 1;
	case 11:
		m->name = "header_page";
		return get_cstr(c, m, "text");
	case 12:
		m->name = "header_event";
		return get_cstr(c, m, "text");
	case 13: /* gatord 9.x: a metric's event and how it counts */
		m->name = "metric_event_key";
		if ((rc = get32(c, m, "metric_key", APC_F_HEX, NULL)) ||
		    (rc = get32(c, m, "event_code", APC_F_HEX, NULL)) ||
		    (rc = get32(c, m, "event_key", APC_F_HEX, NULL)))
			return rc;
		return get32(c, m, "event_type", APC_F_INT, NULL);
	case 14: { /* gatord 9.x: the kernel's build id, a counted string */
		const uint8_t *s;
		uint32_t len;
		m->name = "kernel_build_id";
		if ((rc = cur_str(c, "build id", &s, &len)))
			return rc;
		msg_str(m, "build_id", APC_F_BYTES, s, len, 0);
		return APC_OK;
	}
	default:
		return unknown_code(c, at, code);
	}
}

/*
 * gatord's perf data frame (6.8 and 9.x alike): chunks of records copied
 * from one CPU's perf ring buffer, each a 4-byte little-endian byte count
 * and then the records, every 64-bit word of them packed64.  The first
 * chunk's CPU is the frame header's; 6.8 may add chunks of other CPUs,
 * each after its CPU (packed32).  A record's first word is its
 * perf_event_header (type: low 32 bits, misc: next 16, size in bytes:
 * top 16); gatord copies the size rounded up to whole words, at least
 * one.  What the words after it mean depends on the event's
 * perf_event_attr (sample_type): they are listed as they are.
 */
static const char *perf_record_name(uint32_t type)
{
	static const char *const names[] = {
		[1] = "perf_mmap",           [2] = "perf_lost",
		[3] = "perf_comm",           [4] = "perf_exit",
		[5] = "perf_throttle",       [6] = "perf_unthrottle",
		[7] = "perf_fork",           [8] = "perf_read",
		[9] = "perf_sample",         [10] = "perf_mmap2",
		[11] = "perf_aux_record",    [12] = "perf_itrace_start",
		[13] = "perf_lost_samples",  [14] = "perf_switch",
		[15] = "perf_switch_cpu_wide", [16] = "perf_namespaces",
		[17] = "perf_ksymbol",       [18] = "perf_bpf_event",
		[19] = "perf_cgroup",        [20] = "perf_text_poke",
		[21] = "perf_aux_output_hw_id",
	};
	return type < sizeof names / sizeof names[0] && names[type] ? names[type] : "perf_record";
}

static __attribute__((noinline, cold)) int msg_perf_data(struct frame_cur *c, struct apc_msg *m)
{
	size_t at = c->pos, start;
	int64_t h, w;
	int rc;

	if (at == c->it->frame->hdr_len || at == c->it->perf_end) { /* a chunk starts */
		if (at != c->it->frame->hdr_len && (rc = cur_i32(c, "perf data CPU", &c->it->bc_core)))
			return rc;
		size_t p = c->pos;
		if (c->end - p < 4)
			return cur_fail(c, p, "perf data ends inside a chunk's 4-byte length (%zu bytes)",
					c->end - p);
		uint32_t n = apc_le32(c->b + p);
		if (n > c->end - p - 4)
			return cur_fail(c, p, "perf data chunk of %lu bytes, but %zu bytes follow its length",
					(unsigned long)n, c->end - p - 4);
		c->pos = p + 4;
		c->it->perf_start = c->pos;
		c->it->perf_end = c->pos + n;
		return 1;
	}
	m->core = c->it->bc_core;
	/* a record stays inside its chunk */
	size_t end = c->end;
	c->end = c->it->perf_end;
	rc = cur_i64(c, "perf record header", &h);
	c->end = end;
	if (rc)
		return rc;
	uint64_t hw = (uint64_t)h;
	uint32_t type = (uint32_t)hw, size = (uint32_t)(hw >> 48);
	m->name = perf_record_name(type);
	m->code = type <= INT32_MAX ? (int)type : -1;
	if (!strcmp(m->name, "perf_record"))
		msg_int(m, "record_type", APC_F_INT, type);
	msg_int(m, "misc", APC_F_HEX, (int64_t)((hw >> 32) & 0xffff));
	msg_int(m, "size", APC_F_INT, size);
	uint32_t nwords = size > 8 ? (size + 7) / 8 : 1;
	start = c->pos;
	c->end = c->it->perf_end;
	for (uint32_t i = 1; i < nwords && rc == APC_OK; i++)
		rc = cur_i64(c, "perf record word", &w);
	c->end = end;
	if (rc)
		return rc;
	msg_str(m, "words", APC_F_WORDS, c->b + start, (uint32_t)(c->pos - start), nwords - 1);
	return APC_OK;
}

/* gatord 9.x's perf AUX frame (SPE data): the ring buffer's tail, a byte
 * count and the bytes as they are.  (A perf_aux_record in a perf data
 * frame says where such data went.) */
static __attribute__((noinline, cold)) int msg_perf_aux(struct frame_cur *c, struct apc_msg *m)
{
	const uint8_t *s;
	uint32_t len;
	int rc;

	m->name = "perf_aux";
	if ((rc = get64(c, m, "tail", APC_F_INT)) || (rc = cur_str(c, "aux data", &s, &len)))
		return rc;
	msg_str(m, "data", APC_F_BYTES, s, len, 0);
	return APC_OK;
}

/* gatord 9.x's perf sync frame: which thread read the clocks, the
 * architected timer's frequency, and a monotonic-raw time with the
 * timer's count at that moment. */
static __attribute__((noinline, cold)) int msg_perf_sync(struct frame_cur *c, struct apc_msg *m)
{
	int rc;

	m->name = "perf_sync";
	if ((rc = get32(c, m, "pid", APC_F_INT, NULL)) || (rc = get32(c, m, "tid", APC_F_INT, NULL)) ||
	    (rc = get64(c, m, "freq", APC_F_INT)) || (rc = get64(c, m, "monotonic_raw", APC_F_INT)))
		return rc;
	return get64(c, m, "vcnt", APC_F_INT);
}

void apc_msg_iter_init(struct apc_msg_iter *it, const struct apc_frame *f, int summary_clocks)
{
	memset(it, 0, sizeof *it);
	it->frame = f;
	it->pos = f->hdr_len;
	it->bc_core = f->core;
	it->summary_version = summary_clocks;
	/* Frames of 9.x (or of a protocol we were not told) with an
	 * undecodable type, and empty frames, are handled in next(). */
}

/* 1 if the frame is shown as one opaque message. */
static int frame_is_opaque(const struct apc_msg_iter *it)
{
	int t = it->frame->type;

	if (t == APC_FRAME_PROC)
		/* gatord 6.8's messages, and 9.x's (the same codes, 13 and
		 * 14 new); an unknown protocol's opaque */
		return it->summary_version != 3 && it->summary_version != 4;
	return !apc_frame_type_known(t);
}

/*
 * Clear a message for the next decode.  Only the header: the field array
 * is 2 KiB and nothing reads past nfields (clearing it cost more than
 * decoding the message).
 */
static void msg_reset(struct apc_msg *m, const struct apc_frame *f)
{
	m->frame_type = f->type;
	m->name = NULL;
	m->code = -1;
	m->core = f->core;
	m->has_ts = 0;
	m->ts = 0;
	m->offset = 0;
	m->nfields = 0;
}

int apc_msg_next(struct apc_msg_iter *it, struct apc_msg *m, struct apc_err *err)
{
	const struct apc_frame *f = it->frame;
	struct frame_cur c = {.it = it, .b = f->body, .pos = it->pos, .end = f->len, .err = err};
	int rc;

	if (it->done)
		return APC_END;
	msg_reset(m, f);
	if (f->len == 0) {
		it->done = 1;
		return APC_END;
	}
	/* A bad code leaves no header (hdr_len 0); a code that reads as a
	 * negative number is an unknown type, shown opaque below. */
	if (f->type < 0 && f->hdr_len == 0) {
		it->done = 1;
		c.pos = 0;
		return cur_fail(&c, 0, "%s", "bad frame code (overlong or truncated packed integer)");
	}
	if (apc_frame_has_core(f->type) && f->core < 0 && it->pos == f->hdr_len) {
		it->done = 1;
		return cur_fail(&c, f->hdr_len, "%s", "bad core field in the frame header");
	}
	if (frame_is_opaque(it)) {
		it->done = 1;
		m->name = "opaque";
		m->offset = cur_off(&c, c.pos);
		rest_as_data(&c, m);
		return APC_OK;
	}
	for (;;) {
		if (c.pos >= c.end && f->type != APC_FRAME_EXTERNAL) {
			it->done = 1;
			return APC_END;
		}
		if (f->type == APC_FRAME_EXTERNAL && (c.pos > f->hdr_len || c.pos >= c.end)) {
			it->done = 1; /* one message per frame; a bare [10] has none */
			return APC_END;
		}
		m->offset = cur_off(&c, c.pos);
		switch (f->type) {
		case APC_FRAME_SUMMARY: rc = msg_summary_frame(&c, m); break;
		case APC_FRAME_BACKTRACE: rc = msg_backtrace(&c, m); break;
		case APC_FRAME_NAME: rc = msg_name_frame(&c, m); break;
		case APC_FRAME_COUNTER: rc = msg_counter(&c, m); break;
		case APC_FRAME_BLOCK_COUNTER: rc = msg_block_counter(&c, m); break;
		case APC_FRAME_ANNOTATE: rc = msg_annotate(&c, m); break;
		case APC_FRAME_SCHED_TRACE: rc = msg_sched(&c, m); break;
		case APC_FRAME_IDLE: rc = msg_idle(&c, m); break;
		case APC_FRAME_EXTERNAL: rc = msg_external(&c, m); break;
		case APC_FRAME_PROC: rc = msg_perf_attrs(&c, m); break;
		case APC_FRAME_ACTIVITY_TRACE: rc = msg_activity(&c, m); break;
		case APC_FRAME_PERF_DATA: rc = msg_perf_data(&c, m); break;
		case APC_FRAME_TYPE_14: rc = msg_perf_aux(&c, m); break;
		case APC_FRAME_TYPE_15: rc = msg_perf_sync(&c, m); break;
		default: rc = APC_END; break;
		}
		if (rc == 1) { /* consumed framing only; decode the next message */
			msg_reset(m, f);
			continue;
		}
		break;
	}
	it->pos = c.pos;
	if (rc == APC_END || rc < 0)
		it->done = 1;
	return rc;
}

const struct apc_field *apc_msg_field(const struct apc_msg *m, const char *name)
{
	/* Field names are static strings, and a caller's literal is most
	 * often the same object (the linker merges equal literals): try
	 * pointers first; a lookup per field was a strcmp() call per
	 * field before it. */
	for (size_t i = 0; i < m->nfields; i++)
		if (m->f[i].name == name)
			return &m->f[i];
	for (size_t i = 0; i < m->nfields; i++)
		if (m->f[i].name[0] == name[0] && !strcmp(m->f[i].name, name))
			return &m->f[i];
	return NULL;
}
