/*
 * annotate.h - the external annotation protocol (Annotate v3, v4, v5):
 * decoding a client's byte stream into struct apc_ann messages, and
 * encoding them again (for External frames).
 *
 * A stream starts with the setup message ("ANNOTATE N\n", u32 LE tid,
 * u32 LE pid, 1 don't-mangle byte); then each message is 1 code byte, a
 * u32 LE body length and the body.  The version changes a few bodies
 * (v4 adds 0x0e..0x10; v5 makes the 0x09 value a packed int64).  Bytes
 * may arrive in pieces (an External frame carries any slice of the
 * stream): feed them in order and pull whole messages out.
 */
#ifndef APC_ANNOTATE_H
#define APC_ANNOTATE_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "frame.h"
#include "model.h"

/* Largest message body accepted (visual annotations carry images). */
#define APC_ANN_BODY_MAX (64u << 20)

struct apc_ann_decoder;

/*
 * What the decoders of one capture's connections may buffer together.
 * Each holds up to two of the largest messages; a capture may open
 * thousands of connections, each with a message that never ends (a few
 * KB of bzip2 made gigabytes): past the budget, feeding fails as past a
 * decoder's own limit.  A zeroed budget with max set is empty.
 */
#define APC_ANN_HELD_MAX ((size_t)512 << 20)

struct apc_ann_budget {
	size_t held, max;
};

struct apc_ann_msg {
	int is_setup;         /* setup message: version, tid, pid, dont_mangle */
	int version;          /* 3, 4 or 5 once the setup is seen */
	uint32_t dont_mangle;
	uint64_t offset;      /* offset of the message in the stream */
	int has_ts;
	uint64_t ts;          /* absolute monotonic ns (no delta applied) */
	struct apc_ann ann;   /* code and fields; pointers valid until next call */
	struct apc_counter_decl counter; /* for APC_ANN_COUNTER; ann.counter points here */
};

/* New decoder for one connection; name is used in messages. */
struct apc_ann_decoder *apc_ann_decoder_new(const char *name);
void apc_ann_decoder_free(struct apc_ann_decoder *d);
/* Charge d's buffer to budget b from now on (b outlives d). */
void apc_ann_decoder_share(struct apc_ann_decoder *d, struct apc_ann_budget *b);
/* Append stream bytes. APC_OK or APC_ENOMEM / APC_EDATA (over the limit). */
int apc_ann_decoder_feed(struct apc_ann_decoder *d, const uint8_t *p, size_t n,
			 struct apc_err *err);
/*
 * apc_ann_decoder_next() : the next whole message.  APC_OK, APC_END when
 * more bytes are needed, APC_EDATA when the stream is bad (bad magic,
 * unknown code, a body that does not parse; err has the stream offset).
 * After APC_EDATA the decoder skips that message and can continue.
 */
int apc_ann_decoder_next(struct apc_ann_decoder *d, struct apc_ann_msg *m, struct apc_err *err);
/* Bytes fed but not yet consumed (a partial message at the end). */
size_t apc_ann_decoder_pending(const struct apc_ann_decoder *d);

/* Name of a code: "str", "color_str", "channel", ..., "job_stop". */
const char *apc_ann_code_name(int code);

/*
 * apc_ann_to_msg() : the message as named fields (for apcdump's text and
 * JSON output); m->name is "annotate_<code name>".
 */
void apc_ann_to_msg(const struct apc_ann_msg *a, struct apc_msg *m);

/*
 * Encoding.  apc_ann_encode_setup() appends the setup message;
 * apc_ann_encode() appends one message (code, u32 length, body) of the
 * given version, with timestamp ts where the message has one.
 */
int apc_ann_encode_setup(struct apc_buf *b, int version, int32_t tid, int32_t pid,
			 uint8_t dont_mangle);
int apc_ann_encode(struct apc_buf *b, int version, uint64_t ts, const struct apc_ann *a);

#endif
