/*
 * verify.c - the apcverify checks engine.
 *
 * One pass over the data file: each frame's bytes are walked here, field
 * by field, so every packed integer is seen as encoded (truncated,
 * overlong, non-minimal) and every length is checked against what is
 * left.  The same frame then goes through the shared decoder (frame.h) as
 * a cross-check.  captured.xml and events.xml are read with libxml2
 * first, so keys can be checked as they appear.
 *
 * Readings applied where gatord and the spec differ (see DESIGN.md):
 * - timestamps must be in order within a frame and per (frame type,
 *   core), as gatord writes them from separate buffers; a strict
 *   cross-type regression on one core is only a warning;
 * - in a Block Counter frame a key-2 core lasts past later key-0
 *   timestamps (gatord's reading); where the spec's reading (a timestamp
 *   resets the core) would give another core, a warning says so;
 * - Summary first, except that type-11 frames may precede it (gatord 9.x);
 * - gatord 6.8's first Name of a thread (its start time) and a sched
 *   switch stamped before the thread exit ahead of it are warnings;
 * - gatord 6.8's Proc frame times are ordered per (type 11, core) but
 *   not across types: that frame's core is always 0 and names no CPU.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "annotate.h"
#include "bytes.h"
#include "format.h"
#include "frame.h"
#include "input.h"
#include "model.h"
#include "packed.h"
#include "util.h"
#include "verify.h"
#include "xml.h"

const struct apc_vcheck apc_verify_checks[] = {
	{"archive", APC_V_ERROR,
	 "the archive or gzip stream holding the capture is damaged or cut short (also: the "
	 "session.xml or counters.xml it cut short or took)"},
	{"data-file", APC_V_ERROR, "the capture has no 0000000000 data file"},
	{"frame-truncated", APC_V_ERROR,
	 "a frame's length word or body is cut short, or its length is impossible"},
	{"frame-empty", APC_V_WARNING,
	 "a zero-length frame (the protocol's end of sequence) inside the file"},
	{"frame-core", APC_V_ERROR,
	 "a frame header's core field that is negative or beyond the target's core count"},
	{"msg-core", APC_V_ERROR,
	 "a core in a message (Counter, Idle, Annotate, Activity Switch, Block Counter key 2, "
	 "Proc online/offline CPU and perf counter) that is negative or beyond the target's "
	 "core count"},
	{"packed-truncated", APC_V_ERROR,
	 "a frame ends inside a packed integer or before a message's next field"},
	{"perf-chunk", APC_V_ERROR,
	 "a perf data frame that ends inside a chunk's length, or a chunk longer than the rest of "
	 "its frame"},
	{"packed-overlong", APC_V_ERROR, "a packed integer longer than 5/10 bytes or out of range"},
	{"packed-nonminimal", APC_V_WARNING, "a packed integer not in its shortest form"},
	{"string-overrun", APC_V_ERROR,
	 "a string length (or a Proc frame count) that is negative or runs past the end of the "
	 "frame, or a NUL-terminated string without its NUL"},
	{"unknown-frame", APC_V_WARNING, "a frame type neither the spec nor gatord defines"},
	{"unknown-msg", APC_V_WARNING,
	 "a message code the frame type does not define (rest of frame skipped)"},
	{"decode", APC_V_ERROR, "the shared frame decoder rejects a frame this walker accepted"},
	{"canary", APC_V_ERROR, "the Summary's newline canary is not \"1\\n2\\r\\n3\\r4\\n\\r5\""},
	{"summary-first", APC_V_ERROR,
	 "frames before the Summary (a warning when they are all type 11, as gatord 9.x writes)"},
	{"summary-repeated", APC_V_ERROR, "more than one Summary message"},
	{"summary-missing", APC_V_ERROR, "no Summary message"},
	{"ts-frame", APC_V_ERROR, "a timestamp earlier than the previous one in the same frame"},
	{"ts-core", APC_V_ERROR,
	 "a timestamp earlier than the previous one of the same frame type on the same core"},
	{"ts-cross-type", APC_V_WARNING,
	 "a timestamp earlier than the previous message of another frame type on the same core"},
	{"ts-gatord-name", APC_V_WARNING,
	 "a thread's first Name carries its start time, earlier than the Name before it "
	 "(gatord 6.8; at most 1 s plus 500 ppm of its time back)"},
	{"ts-gatord-exit", APC_V_WARNING,
	 "a sched switch stamped just before the thread exit ahead of it (gatord 6.8; at most "
	 "1 s back)"},
	{"ts-before-start", APC_V_WARNING,
	 "a timestamp before the capture's start (a negative frame timestamp, or an annotation "
	 "time before the Summary's monotonic delta)"},
	{"key-undeclared", APC_V_ERROR,
	 "a Counter, Block Counter or Activity Switch key not declared in captured.xml"},
	{"key-mixed", APC_V_ERROR, "one key used in both Counter and Block Counter frames"},
	{"block-no-ts", APC_V_ERROR,
	 "a Block Counter frame whose first message is not key 0 (timestamp)"},
	{"block-core-reading", APC_V_WARNING,
	 "a Block Counter value whose core differs between gatord's and the spec's reading"},
	{"no-data", APC_V_ERROR,
	 "no Activity, Counter or Block Counter message (a warning in perf-mode captures)"},
	{"captured-xml", APC_V_ERROR,
	 "captured.xml missing, cut short, malformed or without a usable counter list"},
	{"captured-key-dup", APC_V_ERROR, "a key above 2 declared twice in captured.xml"},
	{"captured-type", APC_V_WARNING,
	 "a captured.xml counter type that events.xml does not define"},
	{"events-xml", APC_V_ERROR,
	 "events.xml malformed, or cut short or taken away by a damaged archive"},
	{"ext-fd", APC_V_ERROR, "an External frame with a negative or too large fd"},
	{"ext-disconnect", APC_V_WARNING, "an External disconnect for an fd never opened"},
	{"ext-empty", APC_V_WARNING,
	 "an External frame with no fd (a bare [10]) or an fd and no bytes (gatord 6.8 writes both)"},
	{"annotate-setup", APC_V_ERROR,
	 "an annotate stream that does not begin with its setup message"},
	{"annotate-decode", APC_V_ERROR, "an annotate stream message that does not decode"},
	{"annotate-cut", APC_V_WARNING,
	 "an annotate stream still inside a message when the capture ends"},
	{"cookie-reserved", APC_V_WARNING,
	 "cookie 1 (reserved: the End of Message value) in a Cookie Name, Link or Backtrace, or a "
	 "cookie below -1"},
	{"cookie-unnamed", APC_V_WARNING,
	 "a Link or Backtrace cookie (2 or more) that no Cookie Name message names"},
	{NULL, 0, NULL}
};

#define V_TABLE_MAX (1u << 16)      /* bound on tracked (type, core) pairs, tids, keys */
#define V_FD_MAX 65536              /* External fds tracked */
#define V_CANARY_LEN 11

/* ---- a small bounded hash table of 64-bit keys ------------------------ */

struct vslot {
	uint64_t key;
	int used;
	int64_t ts;
	int64_t frame;
	int code;     /* message code of the last message (sched: 1 switch, 2 exit) */
	int type;     /* frame type of the last message (cross-type table) */
};

#define VTAB_HOT 16 /* direct-mapped cache of recent slots */
#define V_KEY_HOT_BITS 8 /* captures declare tens of keys, all in use at once */
#define V_KEY_HOT (1u << V_KEY_HOT_BITS)

struct vtab {
	struct vslot *s;
	size_t cap, n;
	/* Most messages touch the few (type, core) pairs of the last frames:
	 * a hit skips the hash walk.  Cleared when the slots move. */
	struct vslot *hot[VTAB_HOT];
};

static uint64_t vtab_hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return k;
}

static unsigned vtab_hot_index(uint64_t k)
{
	return (unsigned)((k * 0x9e3779b97f4a7c15ULL) >> 60) & (VTAB_HOT - 1);
}

static struct vslot *vtab_get_slow(struct vtab *t, uint64_t key, int *created);

/*
 * The slot for key, created if absent; NULL when the table is at its
 * bound.  A cached slot answers as the table would: slots are never
 * removed, and growing the table on a lookup that finds the key changes
 * nothing a caller sees (the next insertion grows it just the same).
 */
static inline struct vslot *vtab_get(struct vtab *t, uint64_t key, int *created)
{
	unsigned h = vtab_hot_index(key);
	struct vslot *s = t->hot[h];

	if (s && s->key == key) {
		*created = 0;
		return s;
	}
	s = vtab_get_slow(t, key, created);
	if (s)
		t->hot[h] = s;
	return s;
}

static struct vslot *vtab_get_slow(struct vtab *t, uint64_t key, int *created)
{
	size_t i;

	*created = 0;
	if (t->n * 2 >= t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 64;
		struct vslot *ns;

		if (t->n >= V_TABLE_MAX)
			goto lookup_only;
		ns = calloc(ncap, sizeof *ns);
		if (!ns)
			goto lookup_only;
		for (size_t j = 0; j < t->cap; j++) {
			if (!t->s[j].used)
				continue;
			i = vtab_hash(t->s[j].key) & (ncap - 1);
			while (ns[i].used)
				i = (i + 1) & (ncap - 1);
			ns[i] = t->s[j];
		}
		free(t->s);
		t->s = ns;
		t->cap = ncap;
		memset(t->hot, 0, sizeof t->hot);
	}
	i = vtab_hash(key) & (t->cap - 1);
	while (t->s[i].used) {
		if (t->s[i].key == key)
			return &t->s[i];
		i = (i + 1) & (t->cap - 1);
	}
	t->s[i].used = 1;
	t->s[i].key = key;
	t->n++;
	*created = 1;
	return &t->s[i];
lookup_only:
	if (!t->cap)
		return NULL;
	i = vtab_hash(key) & (t->cap - 1);
	while (t->s[i].used) {
		if (t->s[i].key == key)
			return &t->s[i];
		i = (i + 1) & (t->cap - 1);
	}
	return NULL;
}

static uint64_t vtab_key(int32_t a, int32_t b)
{
	return (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
}

/* ---- state of one verification --------------------------------------- */

/* A warning that may repeat often: the first one, and how many. */
struct vagg {
	uint64_t n;
	int64_t worst;
	struct apc_vproblem first;
};

enum { AGG_NONMIN, AGG_CROSS, AGG_BLOCKCORE, AGG_NAME, AGG_EXIT, AGG_EXTEMPTY, AGG_N };

struct vkey {
	int64_t key;
	uint8_t used;     /* bit 0: Counter frame, bit 1: Block Counter frame */
	uint8_t mixed_reported;
};

struct vfd {
	int open;
	int bad;          /* setup or decode failed: stop feeding */
	uint8_t nhead;    /* bytes of the setup magic checked so far */
	struct apc_ann_decoder *dec;
};

struct verify {
	const char *file;     /* as given */
	/* a run of zero-length frames, told as one (v_empty_flush()) */
	uint64_t empty_run;
	int64_t empty_frame, empty_off, empty_end;
	const char *name;     /* as messages say it: "<stdin>" for "-" */
	int tree, dir;        /* a folder or archive; a folder */
	char member_file[512];/* apc_vproblem.member_file of the last XML problem */
	void (*report)(void *ctx, const struct apc_vproblem *p);
	void *ctx;
	struct apc_vresult *res;

	/* captured.xml */
	int have_captured;
	int local_capture;    /* captured.xml's target says local_capture="yes" (gatord -o) */
	int protocol;         /* 0 if unknown */
	long cores;           /* <target cores>, 0 if not declared */
	struct vkey *keys;
	size_t nkeys;
	struct vkey *key_hot[V_KEY_HOT]; /* recent bsearch() answers */
	struct vtab undeclared;

	/* frame walk */
	int64_t frame;        /* index of the frame being walked */
	uint64_t body_off;    /* file offset of its body */
	int frame_bad;        /* the walker reported an error or unknown code in it */
	uint64_t summaries;
	int summary_clocks;
	int64_t mono_delta;   /* the Summary's monotonic delta (annotation times are absolute) */
	int have_delta;
	int64_t first_non11;  /* first frame before the Summary that is not type 11 */
	int64_t first_non11_off;
	int first_non11_type;
	uint64_t pre_summary; /* frames before the Summary */
	int in_frame_have;
	int64_t in_frame_ts;
	int ts_quiet;         /* update the timestamp state without checking */
	int ts_frame_only;    /* the message's core is bad: order within the frame only */
	struct vtab ts_type;  /* (type, core) -> last */
	struct vtab ts_core;  /* (0, core) -> last, any type */
	struct vtab names;    /* tids named so far */
	struct vtab cookies;  /* code: 1 named, 2 used (first use: frame, ts = offset) */
	struct vfd *fds;
	struct apc_ann_budget ann_budget; /* what their decoders hold together */
	size_t nfds;
	struct vagg agg[AGG_N];
};

static const char *const agg_notes[AGG_N] = {
	"gatord always writes the shortest form",
	"gatord interleaves separate buffers per frame type, so only the order per frame type "
	"and core is required (reading applied); the spec's strict per-core order is not",
	"gatord's reading (a key-2 core lasts past a key-0 timestamp) was applied; the spec's "
	"wording resets the core at each timestamp: repeat key 2 after each key 0 so both "
	"agree",
	"gatord 6.8 stamps a new thread's first Name with its start time; accepted up to 1 s "
	"(plus 500 ppm of the time) back",
	"gatord 6.8 can stamp a sched switch just before the thread exit written ahead of it; "
	"accepted up to 1 s back",
	"gatord 6.8 writes both kinds (the bare one last in a capture); nothing to decode, "
	"accepted",
};

/* "s" after a count other than one. */
static const char *v_s(unsigned long long n)
{
	return n == 1 ? "" : "s";
}

/* A key as messages name it: in hex, as captured.xml declares them, and
 * a negative one (a packed integer may hold it) signed: "key -1", not
 * "key 0xffffffffffffffff".  buf: V_KEY_LEN bytes, e.g. a compound
 * literal (char[V_KEY_LEN]){0}. */
#define V_KEY_LEN 24
static const char *v_keystr(char *buf, long long key)
{
	if (key < 0)
		snprintf(buf, V_KEY_LEN, "%lld", key);
	else
		snprintf(buf, V_KEY_LEN, "0x%llx", (unsigned long long)key);
	return buf;
}

static void v_emit(struct verify *v, struct apc_vproblem *p)
{
	if (p->severity == APC_V_ERROR)
		v->res->errors++;
	else
		v->res->warnings++;
	if (v->report)
		v->report(v->ctx, p);
}

static void v_vfill(struct apc_vproblem *p, int sev, const char *check, int64_t frame,
		    int64_t offset, const char *member, const char *fmt, va_list ap)
{
	p->severity = sev;
	p->check = check;
	p->frame = frame;
	p->offset = offset;
	p->member = member;
	p->member_file = NULL;
	vsnprintf(p->msg, sizeof p->msg, fmt, ap);
}

/* Report a problem at (frame, offset) of the data file, or -1, -1. */
__attribute__((format(printf, 6, 7)))
static void v_prob(struct verify *v, int sev, const char *check, int64_t frame, int64_t offset,
		   const char *fmt, ...)
{
	struct apc_vproblem p;
	va_list ap;

	va_start(ap, fmt);
	v_vfill(&p, sev, check, frame, offset, NULL, fmt, ap);
	va_end(ap);
	v_emit(v, &p);
}

/* An XML member as a file name for messages (apc_vproblem.member_file),
 * or NULL: named as the input layer names members, so a message about
 * it says the file the user can open. */
static const char *v_member_file(struct verify *v, const char *member)
{
	size_t n = strlen(v->name);
	char *sib;

	if (v->tree) {
		snprintf(v->member_file, sizeof v->member_file, "%s%s%s", v->name,
			 !v->dir ? ":" : n && v->name[n - 1] == '/' ? "" : "/", member);
		return v->member_file;
	}
	if (!(sib = apc_data_sibling(v->file, member)))
		return NULL;
	snprintf(v->member_file, sizeof v->member_file, "%s", sib);
	free(sib);
	return v->member_file;
}

/* Report a problem about an XML member (no frame), one that is there:
 * its bytes are at fault, so the message names that file. */
__attribute__((format(printf, 5, 6)))
static void v_xml(struct verify *v, int sev, const char *check, const char *member,
		  const char *fmt, ...)
{
	struct apc_vproblem p;
	va_list ap;

	va_start(ap, fmt);
	v_vfill(&p, sev, check, -1, -1, member, fmt, ap);
	va_end(ap);
	p.member_file = v_member_file(v, member);
	v_emit(v, &p);
}

/* The same for a member that is not there (missing, or taken by an
 * archive's damage): no file to name, so the capture and the member. */
__attribute__((format(printf, 5, 6)))
static void v_xml_absent(struct verify *v, int sev, const char *check, const char *member,
			 const char *fmt, ...)
{
	struct apc_vproblem p;
	va_list ap;

	va_start(ap, fmt);
	v_vfill(&p, sev, check, -1, -1, member, fmt, ap);
	va_end(ap);
	v_emit(v, &p);
}

/* Count a repeatable warning; the first is kept for the end. */
__attribute__((format(printf, 6, 7)))
static void v_agg(struct verify *v, int which, const char *check, int64_t offset, int64_t amount,
		  const char *fmt, ...)
{
	struct vagg *a = &v->agg[which];
	va_list ap;

	if (amount > a->worst)
		a->worst = amount;
	if (a->n++)
		return;
	va_start(ap, fmt);
	v_vfill(&a->first, APC_V_WARNING, check, v->frame, offset, NULL, fmt, ap);
	va_end(ap);
}

/* Print each repeatable warning once: its first occurrence, the count and why. */
static void v_flush_aggs(struct verify *v)
{
	for (int i = 0; i < AGG_N; i++) {
		struct vagg *a = &v->agg[i];
		size_t l;

		if (!a->n)
			continue;
		l = strlen(a->first.msg);
		if (a->n > 1 && (i == AGG_BLOCKCORE || i == AGG_EXTEMPTY))
			snprintf(a->first.msg + l, sizeof a->first.msg - l, " (first of %llu): %s",
				 (unsigned long long)a->n, agg_notes[i]);
		else if (a->n > 1)
			snprintf(a->first.msg + l, sizeof a->first.msg - l,
				 " (first of %llu; %s %lld%s): %s", (unsigned long long)a->n,
				 i == AGG_NONMIN ? "most excess bytes" : "largest step back",
				 (long long)a->worst, i == AGG_NONMIN ? "" : " ns", agg_notes[i]);
		else
			snprintf(a->first.msg + l, sizeof a->first.msg - l, ": %s", agg_notes[i]);
		v_emit(v, &a->first);
	}
}

/* ---- the byte walker --------------------------------------------------- */

/* A read position inside the current frame body. */
struct vcur {
	const uint8_t *b;
	size_t pos, len;
	int quiet;        /* probing (Summary clocks): fail without reporting */
	const char *what; /* what ends at len, as a cut message says: NULL for the
			     frame, or a part of it (a perf data chunk) */
};

static int64_t c_off(const struct verify *v, size_t pos)
{
	return (int64_t)(v->body_off + pos);
}

static int c_fail_trunc(struct verify *v, struct vcur *c, const char *what)
{
	if (!c->quiet) {
		v_prob(v, APC_V_ERROR, "packed-truncated", v->frame, c_off(v, c->pos),
		       "%s ends inside %s (%zu byte%s left)", c->what ? c->what : "frame", what,
		       c->len - c->pos, v_s(c->len - c->pos));
		v->frame_bad = 1;
	}
	return -1;
}

/*
 * Did k bytes encode v where fewer would do?  apc_packed_size64(v) < k,
 * said without its loop: v fits the 7 * (k - 1) bits of a shorter form.
 */
static inline int c_nonminimal(int64_t v, int k)
{
	int64_t lim;

	if (k <= 1)
		return 0;
	lim = (int64_t)1 << (7 * (k - 1) - 1); /* k <= 10: at most 2^62 */
	return v >= -lim && v < lim;
}

/* The rest of c_packed(): a failure or a non-minimal encoding. */
static int c_packed_report(struct verify *v, struct vcur *c, int max, int64_t *out,
			   const char *what, size_t start, int k)
{
	if (k == APC_PACKED_TRUNCATED)
		return c_fail_trunc(v, c, what);
	if (k == APC_PACKED_OVERLONG) {
		if (!c->quiet) {
			v_prob(v, APC_V_ERROR, "packed-overlong", v->frame, c_off(v, start),
			       "%s is an overlong packed%d (over %d bytes or out of range)", what,
			       max == APC_PACKED32_MAX ? 32 : 64, max);
			v->frame_bad = 1;
		}
		return -1;
	}
	if (!c->quiet) {
		size_t want = max == APC_PACKED32_MAX ? apc_packed_size32((int32_t)*out)
						      : apc_packed_size64(*out);
		if ((size_t)k > want)
			v_agg(v, AGG_NONMIN, "packed-nonminimal", c_off(v, start), (int64_t)((size_t)k - want),
			      "%s %lld takes %d bytes where %zu suffice%s", what, (long long)*out, k, want,
			      want == 1 ? "s" : "");
	}
	return 0;
}

/*
 * One packed integer of at most `max` bytes (5 or 10), all checks
 * applied.  Inline for the common case, a minimal encoding that fits;
 * anything to report goes through c_packed_report().
 */
static inline __attribute__((always_inline)) int c_packed(struct verify *v, struct vcur *c,
							  int max, int64_t *out, const char *what)
{
	size_t start = c->pos, n = c->len - c->pos;
	int k;

	if (n == 0)
		return c_fail_trunc(v, c, what);
	if (max == APC_PACKED32_MAX) {
		int32_t x = 0;
		k = apc_frame_unpack32(c->b + start, n, &x);
		*out = x;
	} else {
		k = apc_frame_unpack64(c->b + start, n, out);
	}
	if (k <= 0)
		return c_packed_report(v, c, max, out, what, start, k);
	c->pos += (size_t)k;
	if (__builtin_expect(c_nonminimal(*out, k), 0))
		return c_packed_report(v, c, max, out, what, start, k);
	return 0;
}

static inline __attribute__((always_inline)) int c_p32(struct verify *v, struct vcur *c,
						       int64_t *out, const char *what)
{
	return c_packed(v, c, APC_PACKED32_MAX, out, what);
}

static inline __attribute__((always_inline)) int c_p64(struct verify *v, struct vcur *c,
						       int64_t *out, const char *what)
{
	return c_packed(v, c, APC_PACKED64_MAX, out, what);
}

/* An APC string: packed32 length, then that many bytes. */
static int c_str(struct verify *v, struct vcur *c, const uint8_t **s, size_t *n, const char *what)
{
	size_t at = c->pos;
	int64_t len;

	if (c_p32(v, c, &len, what) < 0)
		return -1;
	if (len < 0 || (uint64_t)len > c->len - c->pos) {
		if (!c->quiet) {
			/* what is left is counted after the length field: the
			 * bytes the string could have had */
			if (len < 0)
				v_prob(v, APC_V_ERROR, "string-overrun", v->frame, c_off(v, at),
				       "%s length %lld is negative", what, (long long)len);
			else
				v_prob(v, APC_V_ERROR, "string-overrun", v->frame, c_off(v, at),
				       "%s length %lld runs past the end of the frame (%zu byte%s "
				       "follow%s the length field)",
				       what, (long long)len, c->len - c->pos, v_s(c->len - c->pos),
				       c->len - c->pos == 1 ? "s" : "");
			v->frame_bad = 1;
		}
		return -1;
	}
	*s = c->b + c->pos;
	*n = (size_t)len;
	c->pos += (size_t)len;
	return 0;
}

/* An unknown code leaves the message's length unknown: skip the rest. */
static void v_unknown_msg(struct verify *v, struct vcur *c, size_t at, int64_t code,
			  const char *frame)
{
	v_prob(v, APC_V_WARNING, "unknown-msg", v->frame, c_off(v, at),
	       "unknown message code %lld in a %s frame (rest of the frame skipped)", (long long)code,
	       frame);
	v->frame_bad = 1;
	c->pos = c->len;
}

/* ---- checks on decoded values ---------------------------------------- */

/* Where a key was used, for key-mixed. */
enum { KEY_COUNTER = 1, KEY_BLOCK = 2, KEY_ACTIVITY = 4 };

static int vkey_cmp(const void *a, const void *b)
{
	const struct vkey *x = a, *y = b;
	return x->key < y->key ? -1 : x->key > y->key;
}

/* Note a key's use in `kind` frames (bits in *used); one key-mixed
 * error per key once it has been in both Counter and Block Counter
 * frames.  This needs nothing from captured.xml. */
static void v_mixed(struct verify *v, uint8_t *used, uint8_t *reported, int kind, int64_t key,
		    int64_t offset)
{
	*used |= (uint8_t)kind;
	if ((*used & (KEY_COUNTER | KEY_BLOCK)) == (KEY_COUNTER | KEY_BLOCK) && !*reported) {
		*reported = 1;
		v_prob(v, APC_V_ERROR, "key-mixed", v->frame, offset,
		       "key %s is used in both Counter and Block Counter frames",
		       v_keystr((char[V_KEY_LEN]){0}, key));
	}
}

static void v_key(struct verify *v, int64_t key, int kind, int64_t offset)
{
	struct vkey probe = {.key = key}, *k = NULL, **hot;

	if (v->have_captured) {
		hot = &v->key_hot[((uint64_t)key * 0x9e3779b97f4a7c15ULL) >> (64 - V_KEY_HOT_BITS)];
		k = *hot;
		if (!k || k->key != key) {
			/* bsearch() answers the same for the same key: cache it */
			k = v->nkeys ? bsearch(&probe, v->keys, v->nkeys, sizeof *k, vkey_cmp) : NULL;
			if (k)
				*hot = k;
		}
	}
	if (!k) {
		/* Undeclared, or no captured.xml to declare it: the use is
		 * kept in the slot (code: used bits, type: reported). */
		int created;
		struct vslot *s = vtab_get(&v->undeclared, (uint64_t)key, &created);
		if (s && created && v->have_captured)
			v_prob(v, APC_V_ERROR, "key-undeclared", v->frame, offset,
			       "%s key %s is not declared in captured.xml",
			       kind == KEY_COUNTER ? "counter" : kind == KEY_BLOCK ? "block counter"
										: "activity switch",
			       v_keystr((char[V_KEY_LEN]){0}, key));
		if (s && kind != KEY_ACTIVITY) {
			uint8_t used = (uint8_t)s->code, reported = (uint8_t)s->type;
			v_mixed(v, &used, &reported, kind, key, offset);
			s->code = used;
			s->type = reported;
		}
		return;
	}
	if (kind == KEY_ACTIVITY)
		return;
	v_mixed(v, &k->used, &k->mixed_reported, kind, key, offset);
}

/* The cores a frame header or a message may name: below captured.xml's
 * <target cores>, else below the most any capture is read with. */
static long v_core_limit(const struct verify *v)
{
	return v->cores ? v->cores : APC_MAX_CORES;
}

/*
 * A core a message names (`what` names the message): 1 if it is below
 * the core count, else 0 after a msg-core error.  Unlike a damaged frame
 * header's core, the message around it is still read: its fields are
 * where they should be, only the core is wrong.
 */
static int v_msg_core(struct verify *v, int64_t core, int64_t offset, const char *what)
{
	if (core >= 0 && core < v_core_limit(v))
		return 1;
	if (core < 0)
		v_prob(v, APC_V_ERROR, "msg-core", v->frame, offset,
		       "%s has core %lld, which is negative", what, (long long)core);
	else if (v->cores)
		v_prob(v, APC_V_ERROR, "msg-core", v->frame, offset,
		       "%s has core %lld, but captured.xml's target has %ld core%s", what,
		       (long long)core, v->cores, v_s((unsigned long long)v->cores));
	else
		v_prob(v, APC_V_ERROR, "msg-core", v->frame, offset,
		       "%s has core %lld, beyond the %d cores any capture is read with", what,
		       (long long)core, APC_MAX_CORES);
	return 0;
}

enum { Q_NONE, Q_NAME, Q_SCHED_SWITCH, Q_SCHED_EXIT };

/*
 * How far back the two gatord 6.8 quirks may step; further is real
 * disorder (ts-frame / ts-core).  Both come from the non-root poller,
 * which scans /proc every 1 or 10 ms plus the scan's own time:
 *  - a new thread's first Name carries its start time, and the thread
 *    is first seen by the scan after it started, so the Name is at most
 *    one scan interval (plus one 10 ms clock tick: /proc gives the start
 *    in ticks) before the Names of that scan;
 *  - a thread exit is stamped with the scan's time and is written among
 *    the sched switches that scan spreads between the previous scan and
 *    this one, so a switch after it is at most one scan interval back.
 * The real captures step back 7.06 ms (first Name) and 5.00 ms (exit,
 * switch), and no two of their sched switch times, which the poller
 * spreads between its scans, are more than 27 ms apart.  1 s is 140
 * times the largest step seen and allows scans delayed by a loaded
 * machine.
 * A start time is also on CLOCK_BOOTTIME, which NTP may slew by up to
 * 500 ppm away from the capture's CLOCK_MONOTONIC_RAW since gatord took
 * their offset at the start: a first Name may be 500 ppm of the time
 * so far further back.  A capture minutes out of order still fails.
 */
/* The limits: APC_TSQ_BACK_NS and APC_TSQ_NAME_DRIFT_DIV (lib/frame.h),
 * shared with apcdump --summary, which tells these quirks apart too. */

/* Why an ordering error is not the quirk its messages look like. */
static const char *v_too_far(int q)
{
	if (q == AGG_NAME)
		return " (too far back for gatord's first-Name start time)";
	if (q == AGG_EXIT)
		return " (too far back for gatord's switch after a thread exit)";
	return "";
}

/* Whether stepping `back` ns is still quirk q (AGG_NAME, AGG_EXIT) at ts. */
static int v_quirk_fits(int q, int64_t back, int64_t ts)
{
	return apc_ts_quirk_accepts(q == AGG_NAME ? APC_TSQ_FIRST_NAME : APC_TSQ_EXIT_SWITCH, back, ts);
}

/* How far ts is before `later` (later > ts), in ns: a capture's times
 * may be any 64-bit values, so the difference is taken unsigned and
 * capped instead of overflowing. */
static int64_t v_before(int64_t later, int64_t ts)
{
	uint64_t d = (uint64_t)later - (uint64_t)ts;

	return d > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)d;
}

/*
 * One timestamped message: within the frame, per (type, core), and
 * across types on the core.  q says what kind of message it is, so the
 * gatord 6.8 quirks can be told from real disorder.  core < 0: none.
 * With v->ts_frame_only (a core msg-core rejected) only the order within
 * the frame is checked: a damaged core names no core to order on.
 * A Proc frame's times take no part in the cross-type order: gatord 6.8
 * writes all of them into one buffer whose core is always 0, naming no
 * CPU they happened on, so comparing them with core 0's other frame
 * types would report the interleaving of unrelated streams.
 */
static void v_ts(struct verify *v, int type, int32_t core, int64_t ts, int64_t offset, int q)
{
	struct vslot *s, *x = NULL;
	int created, quirk = 0;
	int cross = core >= 0 && !v->ts_frame_only && type != APC_FRAME_PROC;
	int64_t prev_frame_ts = v->in_frame_ts;
	int had_frame = v->in_frame_have;

	if (ts < 0)
		v_prob(v, APC_V_WARNING, "ts-before-start", v->frame, offset,
		       "%s timestamp %lld is before the capture's start", apc_frame_type_name(type),
		       (long long)ts);

	s = v->ts_frame_only ? NULL : vtab_get(&v->ts_type, vtab_key(type, core), &created);
	if (s && !created) {
		/* the quirks, told by what came before on this (type, core) */
		if (q == Q_NAME)
			quirk = AGG_NAME;
		else if (q == Q_SCHED_SWITCH && s->code == Q_SCHED_EXIT)
			quirk = AGG_EXIT;
	}
	if (v->ts_quiet) {
		/* already reported for this block: resynchronise only */
	} else if (had_frame && ts < prev_frame_ts) {
		int64_t back = v_before(prev_frame_ts, ts);
		if (quirk && v_quirk_fits(quirk, back, ts))
			v_agg(v, quirk, quirk == AGG_NAME ? "ts-gatord-name" : "ts-gatord-exit", offset,
			      back, "timestamp %lld is %lld ns before the previous one in the frame",
			      (long long)ts, (long long)back);
		else
			v_prob(v, APC_V_ERROR, "ts-frame", v->frame, offset,
			       "timestamp %lld is %lld ns before the previous one in the same frame%s",
			       (long long)ts, (long long)back, v_too_far(quirk));
	} else if (s && !created && ts < s->ts) {
		int64_t back = v_before(s->ts, ts);
		if (quirk && v_quirk_fits(quirk, back, ts))
			v_agg(v, quirk, quirk == AGG_NAME ? "ts-gatord-name" : "ts-gatord-exit", offset,
			      back, "timestamp %lld on core %d is %lld ns before frame %lld's",
			      (long long)ts, (int)core, (long long)back, (long long)s->frame);
		else if (type == APC_FRAME_ACTIVITY_TRACE && core < 0)
			/* Links and task exits have no core: ordered among themselves */
			v_prob(v, APC_V_ERROR, "ts-core", v->frame, offset,
			       "activity_trace link or task exit timestamp %lld is %lld ns before "
			       "the one in frame %lld",
			       (long long)ts, (long long)back, (long long)s->frame);
		else
			v_prob(v, APC_V_ERROR, "ts-core", v->frame, offset,
			       "%s timestamp %lld on core %d is %lld ns before the one in frame %lld%s",
			       apc_frame_type_name(type), (long long)ts, (int)core, (long long)back,
			       (long long)s->frame, v_too_far(quirk));
	} else if (cross && !v->ts_quiet &&
		   (x = vtab_get(&v->ts_core, vtab_key(0, core), &created)) && !created &&
		   ts < x->ts) {
		v_agg(v, AGG_CROSS, "ts-cross-type", offset, v_before(x->ts, ts),
		      "%s timestamp %lld on core %d is %lld ns before the %s message in frame %lld",
		      apc_frame_type_name(type), (long long)ts, (int)core, (long long)v_before(x->ts, ts),
		      apc_frame_type_name(x->type), (long long)x->frame);
	}
	v->in_frame_have = 1;
	v->in_frame_ts = ts;
	if (s) {
		s->ts = ts;
		s->frame = v->frame;
		s->code = q;
	}
	if (cross) {
		if (!x)
			x = vtab_get(&v->ts_core, vtab_key(0, core), &created);
		if (x) {
			x->ts = ts;
			x->frame = v->frame;
			x->type = type;
		}
	}
}

/* ---- per frame type ---------------------------------------------------- */

static int summary_attrs(struct verify *v, struct vcur *c)
{
	const uint8_t *s;
	size_t n;

	for (;;) {
		if (c_str(v, c, &s, &n, "attribute key") < 0)
			return -1;
		if (n == 0)
			return 0;
		if (c_str(v, c, &s, &n, "attribute value") < 0)
			return -1;
	}
}

/* Does the Summary parse with `clocks` clocks?  (Quiet probe.) */
static int summary_fits(struct verify *v, const struct vcur *c0, int clocks)
{
	struct vcur c = *c0;
	int64_t x;

	c.quiet = 1;
	for (int i = 0; i < clocks; i++)
		if (c_p64(v, &c, &x, "clock") < 0)
			return 0;
	if (summary_attrs(v, &c) < 0)
		return 0;
	/* what follows must be the end or a core name message */
	if (c.pos == c.len)
		return 1;
	return c_p32(v, &c, &x, "code") == 0 && x == 3;
}

static void walk_summary(struct verify *v, struct vcur *c)
{
	int first = 1;

	while (c->pos < c->len) {
		size_t at = c->pos;
		int64_t code, x;
		const uint8_t *s;
		size_t n;

		if (c_p32(v, c, &code, "message code") < 0)
			return;
		if (code == 1) {
			int clocks;

			if (++v->summaries > 1)
				v_prob(v, APC_V_ERROR, "summary-repeated", v->frame, c_off(v, at),
				       "another Summary message (the first was earlier)");
			if (c_str(v, c, &s, &n, "newline canary") < 0)
				return;
			if (n != V_CANARY_LEN || memcmp(s, APC_NEWLINE_CANARY, V_CANARY_LEN) != 0)
				v_prob(v, APC_V_ERROR, "canary", v->frame, c_off(v, at),
				       "newline canary is wrong (%zu byte%s; line endings translated in transfer?)",
				       n, v_s(n));
			clocks = v->summary_clocks;
			if (!clocks) {
				/* no protocol known: what fits decides, and the
				 * shared decoder's cross-check then reads it so */
				clocks = summary_fits(v, c, 3) ? 3 : 4;
				v->summary_clocks = clocks;
			}
			for (int i = 0; i < clocks; i++) {
				if (c_p64(v, c, &x, i == 0 ? "wall clock" : i == 1 ? "uptime" :
						    i == 2 ? "monotonic delta" : "fourth clock") < 0)
					return;
				if (i == 2) {
					v->mono_delta = x;
					v->have_delta = 1;
				}
			}
			if (summary_attrs(v, c) < 0)
				return;
		} else if (code == 3) {
			if (first && !v->summaries)
				v_prob(v, APC_V_ERROR, "summary-first", v->frame, c_off(v, at),
				       "the Summary frame does not start with the Summary message");
			if (c_p32(v, c, &x, "core") < 0 || c_p32(v, c, &x, "cpuid") < 0 ||
			    c_str(v, c, &s, &n, "core name") < 0)
				return;
		} else {
			v_unknown_msg(v, c, at, code, "summary");
			return;
		}
		first = 0;
	}
}

/* Cookies: 0 kernel or idle, -1 invalid, 1 reserved (End of Message). */
static void v_cookie_reserved(struct verify *v, int64_t cookie, int64_t offset, const char *where)
{
	if (cookie == 1)
		v_prob(v, APC_V_WARNING, "cookie-reserved", v->frame, offset,
		       "%s cookie 1 is reserved (the End of Message value)", where);
	else if (cookie < -1)
		v_prob(v, APC_V_WARNING, "cookie-reserved", v->frame, offset,
		       "%s cookie %lld is negative (only -1, invalid, is defined)", where,
		       (long long)cookie);
}

/* A cookie named (named) or used; a used one is looked for at the end. */
static void v_cookie(struct verify *v, int64_t cookie, int named, int64_t offset)
{
	struct vslot *s;
	int created;

	if (!named && cookie < 2)
		return;
	if (!(s = vtab_get(&v->cookies, (uint64_t)cookie, &created)))
		return;
	if (!named && !(s->code & 2)) {
		s->frame = v->frame;
		s->ts = offset;
	}
	s->code |= named ? 1 : 2;
}

static void walk_name(struct verify *v, struct vcur *c, int32_t core)
{
	while (c->pos < c->len) {
		size_t at = c->pos;
		int64_t code, x, ts, tid;
		const uint8_t *s;
		size_t n;

		if (c_p32(v, c, &code, "message code") < 0)
			return;
		if (code == 1) {
			if (c_p32(v, c, &x, "cookie") < 0 || c_str(v, c, &s, &n, "cookie name") < 0)
				return;
			v_cookie_reserved(v, x, c_off(v, at), "Cookie Name");
			v_cookie(v, x, 1, c_off(v, at));
		} else if (code == 2) {
			int created;
			if (c_p64(v, c, &ts, "timestamp") < 0 || c_p32(v, c, &tid, "tid") < 0 ||
			    c_str(v, c, &s, &n, "thread name") < 0)
				return;
			/* only a tid's first Name may carry its (earlier) start time */
			/* a thread's first Name may carry its start time; past
			 * the table's bound every thread is taken as new */
			if (!vtab_get(&v->names, (uint64_t)tid, &created))
				created = 1;
			v_ts(v, APC_FRAME_NAME, core, ts, c_off(v, at), created ? Q_NAME : Q_NONE);
		} else {
			v_unknown_msg(v, c, at, code, "name");
			return;
		}
	}
}

static void walk_counter(struct verify *v, struct vcur *c)
{
	while (c->pos < c->len) {
		size_t at = c->pos;
		int64_t ts, core, key, val;

		if (c_p64(v, c, &ts, "timestamp") < 0 || c_p32(v, c, &core, "core") < 0 ||
		    c_p32(v, c, &key, "key") < 0 || c_p64(v, c, &val, "value") < 0)
			return;
		v->res->data_msgs++;
		v_key(v, key, KEY_COUNTER, c_off(v, at));
		v->ts_frame_only = !v_msg_core(v, core, c_off(v, at), "counter message");
		v_ts(v, APC_FRAME_COUNTER, (int32_t)core, ts, c_off(v, at), Q_NONE);
		v->ts_frame_only = 0;
	}
}

static void walk_block(struct verify *v, struct vcur *c, int32_t fcore)
{
	int32_t core_g = fcore, core_s = fcore, done_core = 0;
	int64_t ts = 0, done_ts = 0;
	int have_ts = 0, first = 1, regressed = 0, done = 0;
	int bad_core = 0; /* core_g is a key-2 core msg-core rejected */

	while (c->pos < c->len) {
		size_t at = c->pos;
		int64_t key, val;

		if (c_p32(v, c, &key, "key") < 0 || c_p64(v, c, &val, "value") < 0)
			return;
		if (first && key != 0)
			v_prob(v, APC_V_ERROR, "block-no-ts", v->frame, c_off(v, at),
			       "block counter frame starts with key %s, not key 0 (timestamp)",
			       v_keystr((char[V_KEY_LEN]){0}, key));
		first = 0;
		if (key == 0) {
			ts = val;
			have_ts = 1;
			core_s = fcore;
			/* within-frame order of the timestamps themselves; the
			 * values of a block already reported are not reported again */
			regressed = v->in_frame_have && ts < v->in_frame_ts;
			if (regressed)
				v_prob(v, APC_V_ERROR, "ts-frame", v->frame, c_off(v, at),
				       "timestamp %lld is %lld ns before the previous one in the same frame",
				       (long long)ts, (long long)v_before(v->in_frame_ts, ts));
			v->in_frame_have = 1;
			v->in_frame_ts = ts;
		} else if (key == 1) {
			/* pid: values that follow belong to it; nothing to check */
		} else if (key == 2) {
			/* a packed64 value: the core is checked before it is
			 * narrowed, so a huge one is not read as a small one */
			bad_core = !v_msg_core(v, val, c_off(v, at), "block counter key 2");
			core_g = core_s = (int32_t)val;
		} else {
			v->res->data_msgs++;
			v_key(v, key, KEY_BLOCK, c_off(v, at));
			if (core_g != core_s && !bad_core)
				v_agg(v, AGG_BLOCKCORE, "block-core-reading", c_off(v, at), 0,
				      "key %s after a timestamp is on core %d by gatord's reading, core %d by the spec's",
				      v_keystr((char[V_KEY_LEN]){0}, key), (int)core_g, (int)core_s);
			/* The frame check was done at key 0; per-core checks here.
			 * The values of one sample share core and time: once the
			 * first has stored them, the same v_ts() call again could
			 * find nothing earlier and would store the same, so skip it
			 * (only key 0/2 change them; nothing else here touches the
			 * timestamp tables). */
			/* Values on a core msg-core rejected get no per-core
			 * check: their time was checked in the frame at key 0. */
			if (have_ts && !bad_core && !(done && done_core == core_g && done_ts == ts)) {
				int saved = v->in_frame_have;
				v->in_frame_have = 0;
				v->ts_quiet = regressed;
				v_ts(v, APC_FRAME_BLOCK_COUNTER, core_g, ts, c_off(v, at), Q_NONE);
				v->ts_quiet = 0;
				v->in_frame_have = saved;
				done = 1;
				done_core = core_g;
				done_ts = ts;
			}
		}
	}
}

static void walk_sched(struct verify *v, struct vcur *c, int32_t core)
{
	while (c->pos < c->len) {
		size_t at = c->pos;
		int64_t code, ts, tid, st;

		if (c_p32(v, c, &code, "message code") < 0)
			return;
		if (code != 1 && code != 2) {
			v_unknown_msg(v, c, at, code, "scheduler trace");
			return;
		}
		if (c_p64(v, c, &ts, "timestamp") < 0 || c_p32(v, c, &tid, "tid") < 0)
			return;
		if (code == 1 && c_p32(v, c, &st, "state") < 0)
			return;
		v_ts(v, APC_FRAME_SCHED_TRACE, core, ts, c_off(v, at),
		     code == 1 ? Q_SCHED_SWITCH : Q_SCHED_EXIT);
	}
}

static void walk_activity(struct verify *v, struct vcur *c)
{
	while (c->pos < c->len) {
		size_t at = c->pos;
		int64_t code, ts, x, core = -1, key;

		if (c_p32(v, c, &code, "message code") < 0)
			return;
		if (code < 1 || code > 3) {
			v_unknown_msg(v, c, at, code, "activity");
			return;
		}
		if (c_p64(v, c, &ts, "timestamp") < 0)
			return;
		if (code == 1) {
			int64_t cookie;
			if (c_p32(v, c, &cookie, "cookie") < 0 || c_p32(v, c, &x, "pid") < 0 ||
			    c_p32(v, c, &x, "tid") < 0)
				return;
			v_cookie_reserved(v, cookie, c_off(v, at), "Link");
			v_cookie(v, cookie, 0, c_off(v, at));
		} else if (code == 2) {
			if (c_p32(v, c, &core, "core") < 0 || c_p32(v, c, &key, "key") < 0 ||
			    c_p32(v, c, &x, "activity") < 0 || c_p32(v, c, &x, "tid") < 0 ||
			    c_p32(v, c, &x, "wait state") < 0)
				return;
			v_key(v, key, KEY_ACTIVITY, c_off(v, at));
			v->ts_frame_only = !v_msg_core(v, core, c_off(v, at), "activity switch");
		} else if (c_p32(v, c, &x, "tid") < 0) {
			return;
		}
		v->res->data_msgs++;
		v_ts(v, APC_FRAME_ACTIVITY_TRACE, (int32_t)core, ts, c_off(v, at), Q_NONE);
		v->ts_frame_only = 0;
	}
}

static void walk_backtrace(struct verify *v, struct vcur *c, int32_t core)
{
	while (c->pos < c->len) {
		size_t at = c->pos;
		int64_t ts, x, cookie;

		if (c_p64(v, c, &ts, "timestamp") < 0 || c_p32(v, c, &cookie, "cookie") < 0 ||
		    c_p32(v, c, &x, "pid") < 0 || c_p32(v, c, &x, "tid") < 0)
			return;
		v_cookie_reserved(v, cookie, c_off(v, at), "Backtrace exec");
		v_cookie(v, cookie, 0, c_off(v, at));
		/* (cookie, offset) pairs up to the end-of-message cookie 1 */
		for (;;) {
			if (c_p32(v, c, &cookie, "backtrace cookie") < 0)
				return;
			if (cookie == 1)
				break;
			v_cookie_reserved(v, cookie, c_off(v, at), "Backtrace entry");
			v_cookie(v, cookie, 0, c_off(v, at));
			if (c_p64(v, c, &x, "backtrace offset") < 0)
				return;
		}
		v_ts(v, APC_FRAME_BACKTRACE, core, ts, c_off(v, at), Q_NONE);
	}
}

static void walk_idle(struct verify *v, struct vcur *c)
{
	while (c->pos < c->len) {
		size_t at = c->pos;
		int64_t st, ts, core;

		if (c_p32(v, c, &st, "state") < 0 || c_p64(v, c, &ts, "timestamp") < 0 ||
		    c_p32(v, c, &core, "core") < 0)
			return;
		v->ts_frame_only = !v_msg_core(v, core, c_off(v, at), "idle message");
		v_ts(v, APC_FRAME_IDLE, (int32_t)core, ts, c_off(v, at), Q_NONE);
		v->ts_frame_only = 0;
	}
}

/*
 * gatord's perf data (frame 12, lib/frame.c has the layout): chunks of one
 * CPU's ring-buffer records, a 4-byte length each; every record's words
 * (as many as its header's size says) stay inside its chunk.  What the
 * words mean hangs on the perf attributes and is not checked.
 */
static __attribute__((noinline, cold)) void walk_perf_data(struct verify *v, struct vcur *c)
{
	int first = 1;

	while (c->pos < c->len) {
		int64_t cpu, h, w;
		size_t at = c->pos;

		if (!first) {
			if (c_p32(v, c, &cpu, "perf data CPU") < 0)
				return;
			if (!v_msg_core(v, cpu, c_off(v, at), "perf data chunk"))
				v->frame_bad = 1;
		}
		first = 0;
		at = c->pos;
		if (c->len - at < 4) {
			v_prob(v, APC_V_ERROR, "perf-chunk", v->frame, c_off(v, at),
			       "frame ends inside a perf data chunk's 4-byte length (%zu byte%s left)",
			       c->len - at, v_s(c->len - at));
			v->frame_bad = 1;
			return;
		}
		uint32_t n = apc_le32(c->b + at);
		c->pos += 4;
		if (n > c->len - c->pos) {
			v_prob(v, APC_V_ERROR, "perf-chunk", v->frame, c_off(v, at),
			       "perf data chunk of %lu bytes runs past the end of the frame (%zu byte%s "
			       "follow%s its length)",
			       (unsigned long)n, c->len - c->pos, v_s(c->len - c->pos),
			       c->len - c->pos == 1 ? "s" : "");
			v->frame_bad = 1;
			return;
		}
		struct vcur k = {.b = c->b, .pos = c->pos, .len = c->pos + n, .quiet = c->quiet,
				 .what = "perf data chunk"};
		while (k.pos < k.len) {
			if (c_p64(v, &k, &h, "a perf record header") < 0)
				return;
			uint32_t size = (uint32_t)((uint64_t)h >> 48);
			for (uint32_t i = 1, nw = size > 8 ? (size + 7) / 8 : 1; i < nw; i++)
				if (c_p64(v, &k, &w, "a perf record word") < 0)
					return;
		}
		c->pos = k.len;
	}
}

/* gatord 9.x's perf AUX data (frame 14) and clock sync (frame 15). */
static __attribute__((noinline, cold)) void walk_perf_aux(struct verify *v, struct vcur *c)
{
	while (c->pos < c->len) {
		int64_t tail;
		const uint8_t *s;
		size_t n;

		if (c_p64(v, c, &tail, "aux tail") < 0 || c_str(v, c, &s, &n, "aux data") < 0)
			return;
	}
}

static __attribute__((noinline, cold)) void walk_perf_sync(struct verify *v, struct vcur *c)
{
	while (c->pos < c->len) {
		int64_t x;

		if (c_p32(v, c, &x, "pid") < 0 || c_p32(v, c, &x, "tid") < 0 ||
		    c_p64(v, c, &x, "freq") < 0 || c_p64(v, c, &x, "monotonic_raw") < 0 ||
		    c_p64(v, c, &x, "vcnt") < 0)
			return;
	}
}

static void walk_annotate(struct verify *v, struct vcur *c)
{
	while (c->pos < c->len) {
		size_t at = c->pos;
		int64_t core, tid, ts, size;

		if (c_p32(v, c, &core, "core") < 0 || c_p32(v, c, &tid, "tid") < 0 ||
		    c_p64(v, c, &ts, "timestamp") < 0 || c_p32(v, c, &size, "size") < 0)
			return;
		if (size < 0 || (uint64_t)size > c->len - c->pos) {
			v_prob(v, APC_V_ERROR, "string-overrun", v->frame, c_off(v, at),
			       "annotation size %lld runs past the end of the frame", (long long)size);
			v->frame_bad = 1;
			return;
		}
		c->pos += (size_t)size;
		v->ts_frame_only = !v_msg_core(v, core, c_off(v, at), "annotation");
		v_ts(v, APC_FRAME_ANNOTATE, (int32_t)core, ts, c_off(v, at), Q_NONE);
		v->ts_frame_only = 0;
	}
}

/* A NUL-terminated string, as gatord 6.8's Proc frame messages write them. */
static int c_cstr(struct verify *v, struct vcur *c, const char *what)
{
	const uint8_t *nul = memchr(c->b + c->pos, 0, c->len - c->pos);

	if (!nul) {
		v_prob(v, APC_V_ERROR, "string-overrun", v->frame, c_off(v, c->pos),
		       "%s has no terminating NUL before the end of the frame (%zu byte%s left)",
		       what, c->len - c->pos, v_s(c->len - c->pos));
		v->frame_bad = 1;
		return -1;
	}
	c->pos = (size_t)(nul - c->b) + 1;
	return 0;
}

/* A count of entries that follow (Proc frame key lists): never negative. */
static int c_count(struct verify *v, struct vcur *c, int64_t *n, const char *what)
{
	size_t at = c->pos;

	if (c_p32(v, c, n, what) < 0)
		return -1;
	if (*n < 0) {
		v_prob(v, APC_V_ERROR, "string-overrun", v->frame, c_off(v, at),
		       "%s %lld is negative", what, (long long)*n);
		v->frame_bad = 1;
		return -1;
	}
	return 0;
}

/*
 * gatord 6.8's Proc frame (type 11): coded messages with NUL-terminated
 * strings (the spec's Comm message is code 5), as the shared decoder
 * reads them.  9.x writes perf attributes here that neither reads: the
 * caller walks only a capture known to be 6.8 (three Summary clocks).
 *
 * Codes 7 and 8 (a CPU online, offline) and 10 (perf counter values)
 * carry a timestamp.  gatord 6.8 writes them all into its one attributes
 * buffer (the frame's core, 0), from its perf source thread, with the
 * time it woke up on CLOCK_MONOTONIC_RAW; the other thread writing that
 * buffer (maps, kallsyms) writes no times.  So they are ordered as any
 * frame's messages are: within the frame and per (type 11, frame core),
 * no quirk to allow.  The CPU of 7 and 8 is the CPU that changed state,
 * not where the message came from, and code 10's values share its one
 * time: both are range-checked (msg-core), not ordered on their own.
 */
static void walk_proc(struct verify *v, struct vcur *c, int32_t fcore)
{
	while (c->pos < c->len) {
		size_t at = c->pos;
		int64_t code, x, n, ts;

		if (c_p32(v, c, &code, "message code") < 0)
			return;
		switch (code) {
		case 1: { /* a raw struct perf_event_attr (its size at byte 4), then key */
			const uint8_t *p = c->b + c->pos;
			size_t left = c->len - c->pos;
			uint32_t size;

			if (left < 8) {
				c_fail_trunc(v, c, "a perf_event_attr's type and size");
				return;
			}
			size = apc_le32(p + 4);
			if (size < 8 || size > left) {
				if (size < 8)
					v_prob(v, APC_V_ERROR, "string-overrun", v->frame, c_off(v, c->pos),
					       "perf_event_attr size %lu is less than its 8-byte type and size",
					       (unsigned long)size);
				else
					v_prob(v, APC_V_ERROR, "string-overrun", v->frame, c_off(v, c->pos),
					       "perf_event_attr size %lu runs past the end of the frame "
					       "(%zu byte%s left)", (unsigned long)size, left, v_s(left));
				v->frame_bad = 1;
				return;
			}
			c->pos += size;
			if (c_p32(v, c, &x, "perf key") < 0)
				return;
			break;
		}
		case 2: /* count, then (packed64 id, packed32 key) pairs */
			if (c_count(v, c, &n, "perf id count") < 0)
				return;
			for (int64_t i = 0; i < n; i++)
				if (c_p64(v, c, &x, "perf id") < 0 || c_p32(v, c, &x, "perf key") < 0)
					return;
			break;
		case 3:
			if (c_cstr(v, c, "perf format") < 0)
				return;
			break;
		case 4:
			if (c_p32(v, c, &x, "pid") < 0 || c_p32(v, c, &x, "tid") < 0 ||
			    c_cstr(v, c, "perf maps") < 0)
				return;
			break;
		case 5: /* Comm */
			if (c_p32(v, c, &x, "pid") < 0 || c_p32(v, c, &x, "tid") < 0 ||
			    c_cstr(v, c, "image") < 0 || c_cstr(v, c, "comm") < 0)
				return;
			break;
		case 6: /* keys, then a raw read() buffer to the end of the frame */
			if (c_count(v, c, &n, "perf key count") < 0)
				return;
			for (int64_t i = 0; i < n; i++)
				if (c_p32(v, c, &x, "perf key") < 0)
					return;
			c->pos = c->len;
			break;
		case 7:
		case 8:
			if (c_p64(v, c, &ts, "timestamp") < 0 || c_p32(v, c, &x, "cpu") < 0)
				return;
			v_msg_core(v, x, c_off(v, at),
				   code == 7 ? "online cpu message" : "offline cpu message");
			v_ts(v, APC_FRAME_PROC, fcore, ts, c_off(v, at), Q_NONE);
			break;
		case 9:
			if (c_cstr(v, c, "kallsyms") < 0)
				return;
			break;
		case 10: /* timestamp, then (core, key, value) up to core -1 or the frame's end */
			if (c_p64(v, c, &ts, "timestamp") < 0)
				return;
			v_ts(v, APC_FRAME_PROC, fcore, ts, c_off(v, at), Q_NONE);
			while (c->pos < c->len) {
				size_t vat = c->pos;

				if (c_p32(v, c, &x, "perf counter core") < 0)
					return;
				if (x == -1)
					break;
				v_msg_core(v, x, c_off(v, vat), "perf counter");
				if (c_p32(v, c, &x, "perf counter key") < 0 ||
				    c_p64(v, c, &x, "perf counter value") < 0)
					return;
			}
			break;
		case 11:
		case 12:
			if (c_cstr(v, c, code == 11 ? "header_page" : "header_event") < 0)
				return;
			break;
		case 13: /* gatord 9.x metric event key: four packed32 */
			for (int i = 0; i < 4; i++)
				if (c_p32(v, c, &x, "metric event key field") < 0)
					return;
			break;
		case 14: { /* gatord 9.x kernel build id: a counted string */
			const uint8_t *s;
			size_t len;
			if (c_str(v, c, &s, &len, "kernel build id") < 0)
				return;
			break;
		}
		default:
			v_unknown_msg(v, c, at, code, "proc");
			return;
		}
	}
}

/* ---- External frames: annotate streams per fd ------------------------- */

static struct vfd *v_fd(struct verify *v, int64_t fd)
{
	struct vfd *t;

	if (fd < 0 || !(t = apc_table_grow(v->fds, &v->nfds, sizeof *t, (size_t)fd + 1, V_FD_MAX)))
		return NULL;
	v->fds = t;
	return &t[fd];
}

static void v_fd_close(struct vfd *f)
{
	if (f->dec)
		apc_ann_decoder_free(f->dec);
	memset(f, 0, sizeof *f);
}

static void walk_external(struct verify *v, struct vcur *c)
{
	static const char magic[] = "ANNOTATE ";
	size_t at = c->pos;
	int64_t fd;
	struct vfd *f;
	const uint8_t *p;
	size_t n;

	if (c->pos == c->len) {
		v_agg(v, AGG_EXTEMPTY, "ext-empty", c_off(v, at), 0,
		      "an External frame with no fd (a bare [10])");
		return;
	}
	if (c_p32(v, c, &fd, "fd") < 0)
		return;
	if (fd == -1) {
		if (c_p32(v, c, &fd, "disconnected fd") < 0)
			return;
		f = v_fd(v, fd);
		if (!f) {
			v_prob(v, APC_V_ERROR, "ext-fd", v->frame, c_off(v, at),
			       "disconnect for fd %lld, which is out of range", (long long)fd);
			return;
		}
		if (!f->open)
			v_prob(v, APC_V_WARNING, "ext-disconnect", v->frame, c_off(v, at),
			       "disconnect for fd %lld, which was never opened", (long long)fd);
		else if (!f->bad && f->dec && apc_ann_decoder_pending(f->dec))
			v_prob(v, APC_V_ERROR, "annotate-decode", v->frame, c_off(v, at),
			       "fd %lld disconnects inside a message (%zu byte%s pending)", (long long)fd,
			       apc_ann_decoder_pending(f->dec), v_s(apc_ann_decoder_pending(f->dec)));
		v_fd_close(f);
		if (c->pos < c->len)
			v_prob(v, APC_V_WARNING, "unknown-msg", v->frame, c_off(v, c->pos),
			       "%zu byte%s after a disconnect message", c->len - c->pos,
			       v_s(c->len - c->pos));
		return;
	}
	f = v_fd(v, fd);
	if (!f) {
		v_prob(v, APC_V_ERROR, "ext-fd", v->frame, c_off(v, at), "external fd %lld is out of range",
		       (long long)fd);
		return;
	}
	p = c->b + c->pos;
	n = c->len - c->pos;
	c->pos = c->len;
	if (n == 0) {
		v_agg(v, AGG_EXTEMPTY, "ext-empty", c_off(v, at), 0,
		      "an External frame for fd %lld with no bytes", (long long)fd);
		return;
	}
	if (!f->open) {
		f->open = 1;
		f->dec = apc_ann_decoder_new(v->name);
		if (!f->dec) {
			f->bad = 1;
			return;
		}
		v->ann_budget.max = APC_ANN_HELD_MAX;
		apc_ann_decoder_share(f->dec, &v->ann_budget);
	}
	if (f->bad)
		return;
	/* the setup magic, "ANNOTATE N\n" for a version N of 3-5, may
	 * itself be split across frames */
	for (size_t i = 0; f->nhead < sizeof magic + 1 && i < n; i++, f->nhead++) {
		int ok = f->nhead < sizeof magic - 1 ? p[i] == (uint8_t)magic[f->nhead]
			 : f->nhead == sizeof magic - 1 ? p[i] >= '3' && p[i] <= '5'
							 : p[i] == '\n';
		if (!ok && f->nhead == sizeof magic - 1 && p[i] >= '0' && p[i] <= '9') {
			/* the setup itself, of a version not known (as apcdump says) */
			v_prob(v, APC_V_ERROR, "annotate-setup", v->frame, c_off(v, at),
			       "annotate stream on fd %lld: unsupported annotate protocol version "
			       "'%c'", (long long)fd, p[i]);
			f->bad = 1;
			return;
		}
		if (!ok) {
			v_prob(v, APC_V_ERROR, "annotate-setup", v->frame, c_off(v, at),
			       "annotate stream on fd %lld does not begin with \"ANNOTATE N\\n\"",
			       (long long)fd);
			f->bad = 1;
			return;
		}
	}
	{
		struct apc_err e;
		struct apc_ann_msg m;
		int rc;

		apc_err_clear(&e);
		if (apc_ann_decoder_feed(f->dec, p, n, &e) < 0) {
			v_prob(v, APC_V_ERROR, "annotate-decode", v->frame, c_off(v, at),
			       "annotate stream on fd %lld: %s", (long long)fd, e.msg);
			f->bad = 1;
			return;
		}
		while ((rc = apc_ann_decoder_next(f->dec, &m, &e)) == APC_OK)
			if (m.has_ts && v->have_delta && v->mono_delta >= 0 &&
			    m.ts < (uint64_t)v->mono_delta)
				v_prob(v, APC_V_WARNING, "ts-before-start", v->frame, c_off(v, at),
				       "annotate %s on fd %lld, stream offset 0x%llx: time %llu is "
				       "%llu ns before the capture's start",
				       apc_ann_code_name(m.ann.code), (long long)fd,
				       (unsigned long long)m.offset, (unsigned long long)m.ts,
				       (unsigned long long)((uint64_t)v->mono_delta - m.ts));
		if (rc < 0) {
			v_prob(v, APC_V_ERROR, "annotate-decode", v->frame, c_off(v, at),
			       "annotate stream on fd %lld, stream offset 0x%llx: %s", (long long)fd,
			       (unsigned long long)(e.offset == APC_NO_OFFSET ? 0 : e.offset), e.msg);
			f->bad = 1;
		}
	}
}

/* ---- one frame --------------------------------------------------------- */

static int type_known(int64_t t)
{
	return t >= 1 && t <= 15 && t != 8;
}

static void v_crosscheck(struct verify *v, const struct apc_frame *f)
{
	struct apc_msg_iter it;
	struct apc_msg m;
	struct apc_err e;
	int rc;

	apc_err_clear(&e);
	apc_msg_iter_init(&it, f, v->summary_clocks);
	while ((rc = apc_msg_next(&it, &m, &e)) == APC_OK)
		;
	if (rc < 0 && rc != APC_ENOMEM)
		v_prob(v, APC_V_ERROR, "decode", v->frame,
		       e.offset == APC_NO_OFFSET ? (int64_t)f->offset : e.offset,
		       "the shared frame decoder rejects this frame: %s", e.msg);
}

/*
 * Zero-length frames one after another are told once, at the first: a
 * data file's stretch of zero bytes (space a writer reserved and never
 * filled, a hole) reads as one such frame per 4 bytes, and was a
 * warning line each (25 million for 100 MB of zeros).
 */
static void v_empty_flush(struct verify *v)
{
	int64_t keep = v->frame;
	char words[256];

	if (!v->empty_run)
		return;
	v->frame = v->empty_frame;
	v_prob(v, APC_V_WARNING, "frame-empty", v->frame, v->empty_off, "%s",
	       apc_frame_empty_words(v->empty_run, v->empty_off, v->empty_end, words,
				     sizeof words));
	v->frame = keep;
	v->empty_run = 0;
}

static void v_frame(struct verify *v, const struct apc_frame *f)
{
	struct vcur c = {.b = f->body, .len = f->len};
	int64_t type, core = -1;

	v->res->frames++;
	if (f->len == 0) {
		if (!v->empty_run) {
			v->empty_frame = (int64_t)f->index;
			v->empty_off = (int64_t)f->offset;
		}
		v->empty_run++;
		v->empty_end = (int64_t)f->offset + 4;
		return;
	}
	v_empty_flush(v);
	v->frame = (int64_t)f->index;
	v->body_off = f->offset + 4;
	v->frame_bad = 0;
	v->in_frame_have = 0;
	if (c_p32(v, &c, &type, "frame type") < 0)
		return;
	if (!type_known(type)) {
		v_prob(v, APC_V_WARNING, "unknown-frame", v->frame, (int64_t)f->offset,
		       "unknown frame type %lld (%u byte%s skipped)", (long long)type, f->len,
		       v_s(f->len));
		return;
	}
	if (type == APC_FRAME_PERF_DATA)
		v->res->perf_mode = 1;
	/* Summary position */
	/* Summary position: told when the Summary comes (if it never does,
	 * summary-missing says all there is to say) */
	if (type != APC_FRAME_SUMMARY && !v->summaries) {
		v->pre_summary++;
		if (type != APC_FRAME_PROC && v->first_non11 < 0) {
			v->first_non11 = v->frame;
			v->first_non11_off = (int64_t)f->offset;
			v->first_non11_type = (int)type;
		}
	} else if (type == APC_FRAME_SUMMARY && !v->summaries && v->pre_summary) {
		if (v->first_non11 >= 0)
			v_prob(v, APC_V_ERROR, "summary-first", v->first_non11, v->first_non11_off,
			       "%s frame before the Summary (which is frame %lld)",
			       apc_frame_type_name(v->first_non11_type), (long long)v->frame);
		else
			v_prob(v, APC_V_WARNING, "summary-first", v->frame, (int64_t)f->offset,
			       "the Summary follows %llu type-11 frame%s: gatord 9.x writes its perf "
			       "attributes first; the spec only recommends the Summary first",
			       (unsigned long long)v->pre_summary, v_s(v->pre_summary));
	}
	if (apc_frame_has_core((int)type)) {
		size_t at = c.pos;

		if (c_p32(v, &c, &core, "frame core") < 0)
			return;
		/* A core is an index below the target's core count
		 * (captured.xml's <target cores>, else the most a capture is
		 * read with): anything else is a damaged header, and what
		 * follows it is not read as messages. */
		if (core < 0 || core >= v_core_limit(v)) {
			if (core < 0)
				v_prob(v, APC_V_ERROR, "frame-core", v->frame, c_off(v, at),
				       "%s frame header has core %lld, which is negative "
				       "(the frame's messages are not read)",
				       apc_frame_type_name((int)type), (long long)core);
			else if (v->cores)
				v_prob(v, APC_V_ERROR, "frame-core", v->frame, c_off(v, at),
				       "%s frame header has core %lld, but captured.xml's target has "
				       "%ld core%s (the frame's messages are not read)",
				       apc_frame_type_name((int)type), (long long)core, v->cores,
				       v_s((unsigned long long)v->cores));
			else
				v_prob(v, APC_V_ERROR, "frame-core", v->frame, c_off(v, at),
				       "%s frame header has core %lld, beyond the %d cores any capture "
				       "is read with (the frame's messages are not read)",
				       apc_frame_type_name((int)type), (long long)core, APC_MAX_CORES);
			return;
		}
	}

	switch (type) {
	case APC_FRAME_SUMMARY: walk_summary(v, &c); break;
	case APC_FRAME_BACKTRACE: walk_backtrace(v, &c, (int32_t)core); break;
	case APC_FRAME_NAME: walk_name(v, &c, (int32_t)core); break;
	case APC_FRAME_COUNTER: walk_counter(v, &c); break;
	case APC_FRAME_BLOCK_COUNTER: walk_block(v, &c, (int32_t)core); break;
	case APC_FRAME_ANNOTATE: walk_annotate(v, &c); break;
	case APC_FRAME_SCHED_TRACE: walk_sched(v, &c, (int32_t)core); break;
	case APC_FRAME_IDLE: walk_idle(v, &c); break;
	case APC_FRAME_EXTERNAL: walk_external(v, &c); break;
	case APC_FRAME_ACTIVITY_TRACE: walk_activity(v, &c); break;
	case APC_FRAME_PROC:
		/* gatord 6.8's and 9.x's messages; an unknown protocol's
		 * opaque, as the shared decoder takes it */
		if (v->summary_clocks == 3 || v->summary_clocks == 4)
			walk_proc(v, &c, (int32_t)core);
		break;
	case APC_FRAME_PERF_DATA: walk_perf_data(v, &c); break;
	case APC_FRAME_TYPE_14: walk_perf_aux(v, &c); break;
	case APC_FRAME_TYPE_15: walk_perf_sync(v, &c); break;
	default: break;
	}
	if (!v->frame_bad)
		v_crosscheck(v, f);
}

/* ---- XML ---------------------------------------------------------------- */

const char *apc_xml_error_msg(int line, const char *libxml_msg, char *buf, size_t len)
{
	char why[256], tail[32];
	size_t n, k;

	apc_err_lower(libxml_msg ? libxml_msg : "not well-formed", why, sizeof why);
	/* "couldn't find end of Start Tag name line 3" at line 3: the
	 * line is said once, in front */
	k = (size_t)snprintf(tail, sizeof tail, " line %d", line);
	n = strlen(why);
	if (k < sizeof tail && n > k && !strcmp(why + n - k, tail))
		why[n - k] = '\0';
	snprintf(buf, len, "line %d: not well-formed XML: %s", line, why);
	return buf;
}

/* A tree whose 0000000000 is a folder: its members under it, or (an
 * empty one) what the file system says. */
static int data_is_dir(struct apc_input *in)
{
	const char *const *names;
	const char *kind = apc_input_kind(in), *path = apc_input_path(in);
	size_t n;
	struct stat st;
	char *p;
	int dir;

	if (apc_input_members(in, &names, &n) == APC_OK)
		for (size_t i = 0; i < n; i++)
			if (!strncmp(names[i], "0000000000/", 11))
				return 1;
	if (!kind || strcmp(kind, "directory") || !(p = malloc(strlen(path) + 12)))
		return 0;
	sprintf(p, "%s/0000000000", path);
	dir = stat(p, &st) == 0 && S_ISDIR(st.st_mode);
	free(p);
	return dir;
}

int apc_capture_tree_check(struct apc_input *in, const char *name, struct apc_err *err)
{
	if (apc_input_has(in, "0000000000"))
		return APC_OK;
	if (data_is_dir(in))
		return apc_err_set(err, APC_EDATA, name, APC_NO_OFFSET,
				   "0000000000 is a directory, not a data file");
	/* a folder with neither is some other folder (the wrong argument),
	 * one with captured.xml a capture that lost its data; an archive
	 * the damage cut short may have lost both */
	if (!apc_input_has(in, "captured.xml") && !apc_input_damage(in))
		return apc_err_set(err, APC_EIO, name, APC_NO_OFFSET,
				   "not an .apc capture (no captured.xml, no 0000000000 data file)");
	return apc_err_set(err, APC_EDATA, name, APC_NO_OFFSET, "no 0000000000 data file in the capture");
}

/* Parse a member; NULL (problem reported) if malformed. */
static xmlDoc *v_parse(struct verify *v, const uint8_t *buf, size_t len, const char *member,
		       const char *check)
{
	xmlParserCtxt *ctx = xmlNewParserCtxt();
	xmlDoc *doc;

	if (!ctx)
		return NULL;
	/* No XML_PARSE_HUGE: libxml2's default limits are what stop entity
	 * expansion attacks while parsing (captures' XML is small). */
	doc = xmlCtxtReadMemory(ctx, (const char *)buf, (int)len, member, NULL,
				XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	const xmlError *xe = xmlCtxtGetLastError(ctx);
	/* libxml2 warnings (XML 1.1, a namespace URI it finds odd) leave
	 * a well-formed document: only errors reject it. */
	if (!doc || (xe && xe->code != XML_ERR_OK && xe->level >= XML_ERR_ERROR &&
		     !apc_xml_warning(xe->code))) {
		char why[320];

		v_xml(v, APC_V_ERROR, check, member, "%s",
		      apc_xml_error_msg(xe ? xe->line : 0, xe ? xe->message : NULL, why, sizeof why));
		if (doc)
			xmlFreeDoc(doc);
		doc = NULL;
	} else if (doc->intSubset && (doc->intSubset->entities || doc->intSubset->pentities)) {
		/* Captures never declare entities, and every attribute
		 * read would expand them again. */
		v_xml(v, APC_V_ERROR, check, member, "declares XML entities (refused)");
		xmlFreeDoc(doc);
		doc = NULL;
	}
	xmlFreeParserCtxt(ctx);
	return doc;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Collect every `counter` attribute of <event> and `name` of <counter_set>. */
static void events_collect(xmlNode *n, char ***ev, size_t *nev, char ***sets, size_t *nsets)
{
	for (; n; n = n->next) {
		if (n->type != XML_ELEMENT_NODE)
			continue;
		int is_event = !xmlStrcmp(n->name, BAD_CAST "event");
		int is_set = !xmlStrcmp(n->name, BAD_CAST "counter_set") ||
			     !xmlStrcmp(n->name, BAD_CAST "category");
		xmlChar *a = is_event ? xmlGetProp(n, BAD_CAST "counter")
				      : is_set ? xmlGetProp(n, BAD_CAST(n->name[2] == 'u' ? "name" : "counter_set"))
					       : NULL;
		if (a) {
			char ***arr = is_event ? ev : sets;
			size_t *cnt = is_event ? nev : nsets;
			char **na = realloc(*arr, (*cnt + 1) * sizeof *na);
			char *d = strdup((const char *)a);
			if (na && d) {
				*arr = na;
				na[(*cnt)++] = d;
			} else {
				if (na)
					*arr = na;
				free(d);
			}
			xmlFree(a);
		}
		events_collect(n->children, ev, nev, sets, nsets);
	}
}

/* Is `type` a counter events.xml defines (an event, or set name + number)? */
static int events_has(char **ev, size_t nev, char **sets, size_t nsets, const char *type)
{
	if (nev && bsearch(&type, ev, nev, sizeof *ev, str_cmp))
		return 1;
	for (size_t i = 0; i < nsets; i++) {
		size_t l = strlen(sets[i]);
		const char *r = type + l;
		if (strncmp(type, sets[i], l) != 0 || !*r)
			continue;
		while (*r >= '0' && *r <= '9')
			r++;
		if (!*r)
			return 1;
	}
	return 0;
}

static int v_slurp(struct apc_input *in, const char *member, uint8_t **buf, size_t *len,
		   struct apc_err *err)
{
	struct apc_stream *s;
	int rc = apc_input_open_member(in, member, &s, err);

	if (rc < 0)
		return rc;
	rc = apc_stream_slurp(s, APC_XML_FILE_MAX, buf, len, err);
	apc_stream_close(s);
	return rc;
}

/* What an XML file the archive's damage took away leaves undone. */
static const char *v_xml_needed_by(const char *member)
{
	if (!strcmp(member, "captured.xml"))
		return "key-undeclared, captured-key-dup and captured-type cannot run; frame-core "
		       "and msg-core allow 4096 cores, not the target's";
	if (!strcmp(member, "events.xml"))
		return "captured-type cannot run";
	return "no check needs it";
}

/*
 * An XML member the archive's damage cut short: a problem of the
 * capture (its check's), not a failure to read it, with the checks it
 * leaves undone.  Returns 1.
 */
static int v_xml_cut(struct verify *v, const char *member, const char *check, struct apc_err *err)
{
	if (err->offset != APC_NO_OFFSET)
		v_xml(v, APC_V_ERROR, check, member, "offset 0x%llx: %s (not checked; %s)",
		      (unsigned long long)err->offset, err->msg, v_xml_needed_by(member));
	else
		v_xml(v, APC_V_ERROR, check, member, "%s (not checked; %s)", err->msg,
		      v_xml_needed_by(member));
	apc_err_clear(err);
	return 1;
}

/*
 * An XML file a capture has, not among the members before the archive's
 * damage: taken by it (the [archive] problem says where), and what that
 * leaves undone, under the check of that file.
 */
static void v_xml_lost(struct verify *v, const char *member, const char *check)
{
	v_xml_absent(v, APC_V_ERROR, check, member,
		     "%s is missing from what the damage left of the archive: %s", member,
	      v_xml_needed_by(member));
}

/* captured.xml: keys, protocol, perf mode; events.xml types. */
static int v_xml_files(struct verify *v, const uint8_t *cap, size_t caplen, const uint8_t *evs,
		       size_t evlen)
{
	xmlDoc *doc = v_parse(v, cap, caplen, "captured.xml", "captured-xml");
	xmlNode *root, *n, *k;
	char **ev = NULL, **sets = NULL;
	size_t nev = 0, nsets = 0;
	xmlDoc *edoc = NULL;

	if (!doc)
		return APC_OK;
	root = xmlDocGetRootElement(doc);
	if (!root || xmlStrcmp(root->name, BAD_CAST "captured")) {
		v_xml(v, APC_V_ERROR, "captured-xml", "captured.xml", "root element is not <captured>");
		xmlFreeDoc(doc);
		return APC_OK;
	}
	v->have_captured = 1;
	{
		xmlChar *a = xmlGetProp(root, BAD_CAST "protocol");
		if (a) {
			v->protocol = atoi((const char *)a);
			xmlFree(a);
		}
		a = xmlGetProp(root, BAD_CAST "type");
		if (a) {
			if (!xmlStrcmp(a, BAD_CAST "Perf"))
				v->res->perf_mode = 1;
			xmlFree(a);
		}
	}
	/* the target's core count bounds the frame headers' core fields */
	for (n = root->children; n; n = n->next) {
		xmlChar *a;
		char *end;
		long cores;

		if (n->type != XML_ELEMENT_NODE || xmlStrcmp(n->name, BAD_CAST "target"))
			continue;
		/* gatord's own captures have counters.xml, not session.xml */
		if ((a = xmlGetProp(n, BAD_CAST "local_capture"))) {
			v->local_capture = !xmlStrcmp(a, BAD_CAST "yes");
			xmlFree(a);
		}
		if (!(a = xmlGetProp(n, BAD_CAST "cores")))
			continue;
		cores = strtol((const char *)a, &end, 10);
		if (*a && !*end && cores > 0 && cores <= APC_MAX_CORES)
			v->cores = cores;
		xmlFree(a);
		break;
	}
	if (v->protocol > 0)
		v->summary_clocks = v->protocol >= 910 ? 4 : 3;
	if (evs) {
		edoc = v_parse(v, evs, evlen, "events.xml", "events-xml");
		if (edoc) {
			events_collect(xmlDocGetRootElement(edoc), &ev, &nev, &sets, &nsets);
			if (ev)
				qsort(ev, nev, sizeof *ev, str_cmp);
		}
	}
	for (n = root->children; n; n = n->next) {
		if (n->type != XML_ELEMENT_NODE || xmlStrcmp(n->name, BAD_CAST "counters"))
			continue;
		for (k = n->children; k; k = k->next) {
			xmlChar *ks, *ts;
			char *end;
			long long key;

			if (k->type != XML_ELEMENT_NODE || xmlStrcmp(k->name, BAD_CAST "counter"))
				continue;
			ks = xmlGetProp(k, BAD_CAST "key");
			key = ks ? strtoll((const char *)ks, &end, 0) : 0;
			if (!ks || !*ks || *end) {
				v_xml(v, APC_V_ERROR, "captured-xml", "captured.xml",
				      "line %ld: counter has %s key", (long)xmlGetLineNo(k),
				      ks ? "a malformed" : "no");
				xmlFree(ks);
				continue;
			}
			xmlFree(ks);
			/* keys 0-2 are the Block Counter timestamp, pid and core:
			 * a counter's key is above 2 (apc(5)); one that is not
			 * declares nothing, so its uses are undeclared */
			if (key <= 2) {
				v_xml(v, APC_V_ERROR, "captured-xml", "captured.xml",
				      "line %ld: counter key %s is %s (keys are above 2; 0-2 are the "
				      "block counter timestamp, pid and core)",
				      (long)xmlGetLineNo(k), v_keystr((char[V_KEY_LEN]){0}, key),
				      key < 0 ? "negative" : "reserved");
				continue;
			}
			struct vkey *nk = realloc(v->keys, (v->nkeys + 1) * sizeof *nk);
			if (!nk)
				break;
			v->keys = nk;
			nk[v->nkeys++] = (struct vkey){.key = key};
			ts = xmlGetProp(k, BAD_CAST "type");
			if (ts && edoc && !events_has(ev, nev, sets, nsets, (const char *)ts))
				v_xml(v, APC_V_WARNING, "captured-type", "captured.xml",
				      "line %ld: counter type \"%s\" (key %s) is not defined in events.xml",
				      (long)xmlGetLineNo(k), (const char *)ts,
				      v_keystr((char[V_KEY_LEN]){0}, key));
			xmlFree(ts);
		}
	}
	if (v->nkeys)
		qsort(v->keys, v->nkeys, sizeof *v->keys, vkey_cmp);
	for (size_t i = 1; i < v->nkeys; i++)
		if (v->keys[i].key == v->keys[i - 1].key &&
		    (i < 2 || v->keys[i - 2].key != v->keys[i].key))
			v_xml(v, APC_V_ERROR, "captured-key-dup", "captured.xml",
			      "key %s is declared more than once",
			      v_keystr((char[V_KEY_LEN]){0}, v->keys[i].key));
	for (size_t i = 0; i < nev; i++)
		free(ev[i]);
	for (size_t i = 0; i < nsets; i++)
		free(sets[i]);
	free(ev);
	free(sets);
	if (edoc)
		xmlFreeDoc(edoc);
	xmlFreeDoc(doc);
	return APC_OK;
}

/* ---- driver -------------------------------------------------------------- */

/*
 * The capture's archive (or its gzip stream) is damaged: one problem,
 * with the offset in the archive; what the damage cut short or left out
 * is reported by the checks that miss it.
 */
static void v_damage(struct verify *v, const struct apc_err *d)
{
	if (d->offset != APC_NO_OFFSET)
		v_prob(v, APC_V_ERROR, "archive", -1, -1, "offset 0x%llx: %s",
		       (unsigned long long)d->offset, d->msg);
	else
		v_prob(v, APC_V_ERROR, "archive", -1, -1, "%s", d->msg);
}

static int v_reader_new(struct apc_stream *s, struct apc_frame_reader **fr, struct apc_err *err)
{
	int rc = apc_frame_reader_new(s, fr, err);

	if (rc < 0)
		return rc;
	/* The data file is read to its end: 1 MiB reads, not two small
	 * ones per frame (the syscalls cost more than the checks).  Only
	 * when its size is known (a file, an archive member): a gzip stream
	 * that breaks counts the bytes before the break by how its output
	 * was asked for, and that count is in the message. */
	if (apc_stream_size(s) >= 0)
		apc_frame_reader_readahead(*fr, 1u << 20);
	return APC_OK;
}

/* One frame read: its status, the frame, and what went wrong. */
struct vread {
	int rc;
	struct apc_frame f;
	struct apc_err e;
};

static void v_read(struct apc_frame_reader *fr, struct vread *r)
{
	apc_err_clear(&r->e);
	r->rc = apc_frame_read(fr, &r->f, &r->e);
}

/* The frame walk; `first`, when not NULL, is its first read, done
 * already (before the XML files were read). */
static int v_data(struct verify *v, struct apc_frame_reader *fr, const struct vread *first,
		  struct apc_err *err)
{
	struct vread r;

	for (;;) {
		if (first) {
			r = *first;
			first = NULL;
		} else {
			v_read(fr, &r);
		}
		if (r.rc != APC_OK)
			v_empty_flush(v);
		if (r.rc == APC_END)
			return APC_OK;
		if (r.rc == APC_EDATA) {
			v->frame = (int64_t)r.f.index;
			v_prob(v, APC_V_ERROR, "frame-truncated", (int64_t)r.f.index,
			       r.e.offset == APC_NO_OFFSET ? (int64_t)r.f.offset : r.e.offset, "%s",
			       r.e.msg);
			return APC_OK;
		}
		if (r.rc < 0) {
			*err = r.e;
			return r.rc;
		}
		v_frame(v, &r.f);
	}
}

static int vslot_key_cmp(const void *a, const void *b)
{
	int64_t x = (int64_t)(*(const struct vslot *const *)a)->key;
	int64_t y = (int64_t)(*(const struct vslot *const *)b)->key;

	return (x > y) - (x < y);
}

/* The checks that need the whole file. */
static void v_finish(struct verify *v)
{
	v->frame = -1;
	v_flush_aggs(v);
	/* A disconnect inside a message is an error; the capture ending
	 * inside one (stopped while a client was sending) only a warning. */
	for (size_t i = 0; i < v->nfds; i++)
		if (v->fds[i].open && !v->fds[i].bad && v->fds[i].dec &&
		    apc_ann_decoder_pending(v->fds[i].dec))
			v_prob(v, APC_V_WARNING, "annotate-cut", -1, -1,
			       "fd %zu ends inside a message at the end of the capture (%zu byte%s pending)",
			       i, apc_ann_decoder_pending(v->fds[i].dec),
			       v_s(apc_ann_decoder_pending(v->fds[i].dec)));
	/* Cookies used and never named, by cookie (the table's order is
	 * its hash's); a table at its bound has stopped taking cookies. */
	const struct vslot **un = calloc(v->cookies.n ? v->cookies.n : 1, sizeof *un);
	size_t nun = 0;
	for (size_t i = 0; un && i < v->cookies.cap; i++)
		if (v->cookies.s[i].used && v->cookies.s[i].code == 2)
			un[nun++] = &v->cookies.s[i];
	if (nun > 1)
		qsort(un, nun, sizeof *un, vslot_key_cmp);
	for (size_t i = 0; i < nun; i++)
		v_prob(v, APC_V_WARNING, "cookie-unnamed", un[i]->frame, un[i]->ts,
		       "cookie %lld is used but no Cookie Name names it (Streamline shows no image)",
		       (long long)(int64_t)un[i]->key);
	free(un);
	if (!v->summaries)
		v_prob(v, APC_V_ERROR, "summary-missing", -1, -1, "no Summary message in %llu frame%s",
		       (unsigned long long)v->res->frames, v_s(v->res->frames));
	if (!v->res->data_msgs) {
		if (v->res->perf_mode)
			v_prob(v, APC_V_WARNING, "no-data", -1, -1,
			       "no Activity, Counter or Block Counter message: accepted for a perf-mode "
			       "capture, whose samples are in perf frames 11 and 12");
		else
			v_prob(v, APC_V_ERROR, "no-data", -1, -1,
			       "no Activity, Counter or Block Counter message (Streamline needs at least one)");
	}
}

/* A bare data file 0000000000: look for captured.xml and events.xml
 * beside it (apc_data_sibling, as apcconv and apcdump do). */
static void v_sibling(const char *path, const char *name, uint8_t **buf, size_t *len)
{
	char *p = apc_data_sibling(path, name);
	struct apc_stream *s;
	struct apc_err e;

	*buf = NULL;
	*len = 0;
	if (!p)
		return;
	apc_err_clear(&e);
	if (apc_stream_open_path(p, &s, &e) == APC_OK) {
		if (apc_stream_slurp(s, APC_XML_FILE_MAX, buf, len, &e) < 0)
			*buf = NULL;
		apc_stream_close(s);
	}
	free(p);
}

int apc_verify_path(const char *path,
		    void (*report)(void *ctx, const struct apc_vproblem *p), void *ctx,
		    struct apc_vresult *res, struct apc_err *err)
{
	struct verify v;
	struct apc_input *in = NULL;
	struct apc_stream *data = NULL;
	struct apc_frame_reader *fr = NULL;
	struct vread first, *held = NULL;
	uint8_t *cap = NULL, *evs = NULL;
	size_t caplen = 0, evlen = 0;
	int rc, tree, cap_cut = 0;

	memset(res, 0, sizeof *res);
	memset(&v, 0, sizeof v);
	v.file = path;
	/* as apcconv and the input layer name it */
	v.name = strcmp(path, "-") ? path : "<stdin>";
	v.report = report;
	v.ctx = ctx;
	v.res = res;
	v.frame = -1;
	v.first_non11 = -1;
	apc_err_clear(err);

	rc = apc_input_open(path, &in, err);
	if (rc == APC_EDATA) {
		/* damaged before anything could be read: a problem with the
		 * capture, not a failure to read it */
		v_damage(&v, err);
		apc_err_clear(err);
		return APC_OK;
	}
	if (rc < 0)
		return rc;
	tree = apc_input_is_tree(in);
	v.tree = tree;
	v.dir = tree && apc_input_kind(in) && !strcmp(apc_input_kind(in), "directory");
	/* a trace folder or archive (LTT) rather than a capture */
	if (tree && !apc_input_has(in, "0000000000") && !apc_input_damage(in) &&
	    apc_format_foreign(in, err)) {
		rc = err->status;
		goto out;
	}
	/* a folder that is no capture at all is the wrong argument (exit
	 * 2, as apcdump); one that lost its data file is checked below */
	if (tree && apc_capture_tree_check(in, v.name, err) == APC_EIO) {
		rc = err->status;
		goto out;
	}
	apc_err_clear(err);
	if (!tree) {
		struct apc_err foreign;

		/* A first frame already bad, in bytes apcconv would convert
		 * (a Barman dump, a TPTP trace): say that, not what their
		 * first word makes as a frame length.  That frame is read
		 * here, before the XML checks report anything, so this
		 * message is the only one. */
		data = apc_input_stream(in);
		if (apc_format_foreign(in, &foreign)) {
			if ((rc = v_reader_new(data, &fr, err)) < 0)
				goto out;
			v_read(fr, &first);
			held = &first;
			if (first.rc == APC_EDATA) {
				*err = foreign;
				rc = err->status;
				goto out;
			}
		}
	}
	if (apc_input_damage(in))
		v_damage(&v, apc_input_damage(in));
	if (tree) {
		if (apc_capture_tree_check(in, v.name, err) < 0) {
			v_prob(&v, APC_V_ERROR, "data-file", -1, -1, "%s", err->msg);
			apc_err_clear(err);
			goto out;
		}
		if (apc_input_has(in, "captured.xml")) {
			rc = v_slurp(in, "captured.xml", &cap, &caplen, err);
			if (rc == APC_EDATA)
				cap_cut = v_xml_cut(&v, "captured.xml", "captured-xml", err);
			else if (rc < 0)
				goto out;
		}
		if (apc_input_has(in, "events.xml")) {
			rc = v_slurp(in, "events.xml", &evs, &evlen, err);
			if (rc == APC_EDATA)
				v_xml_cut(&v, "events.xml", "events-xml", err);
			else if (rc < 0)
				goto out;
		}
	} else {
		v_sibling(path, "captured.xml", &cap, &caplen);
		if (cap)
			v_sibling(path, "events.xml", &evs, &evlen);
	}
	if (cap)
		v_xml_files(&v, cap, caplen, evs, evlen);
	else if (tree && !cap_cut && apc_input_damage(in))
		v_xml_lost(&v, "captured.xml", "captured-xml");
	else if (tree && !cap_cut)
		v_xml_absent(&v, APC_V_ERROR, "captured-xml", "captured.xml",
			     "captured.xml is missing (keys cannot be checked)");
	else if (!tree)
		v_xml_absent(&v, APC_V_WARNING, "captured-xml", "captured.xml",
			     "no captured.xml beside a bare data file: key declarations not checked");
	/* the other XML files a capture has that the damage took, in the
	 * order they are written */
	if (tree && apc_input_damage(in)) {
		/* session.xml, or counters.xml where captured.xml says gatord
		 * wrote the capture, is read by no check: only a cut or a
		 * loss is told; without captured.xml, either will do */
		const char *set = !v.have_captured ? NULL : v.local_capture ? "counters.xml" : "session.xml";

		if (!apc_input_has(in, "events.xml"))
			v_xml_lost(&v, "events.xml", "events-xml");
		if (!set && !apc_input_has(in, "session.xml") && !apc_input_has(in, "counters.xml"))
			v_xml_absent(&v, APC_V_ERROR, "archive", "session.xml",
				     "neither session.xml nor counters.xml (gatord's) is in what the "
				     "damage left of the archive: no check needs them");
		else if (set && !apc_input_has(in, set))
			v_xml_lost(&v, set, "archive");
		for (int i = 0; i < 2; i++) {
			const char *m = i ? "counters.xml" : "session.xml";
			uint8_t *b = NULL;
			size_t blen = 0;

			if (!apc_input_has(in, m))
				continue;
			/* read only to tell a cut: nothing else of it matters */
			if (v_slurp(in, m, &b, &blen, err) == APC_EDATA)
				v_xml_cut(&v, m, "archive", err);
			free(b);
			apc_err_clear(err);
		}
	}

	if (tree) {
		rc = apc_input_open_member(in, "0000000000", &data, err);
		if (rc < 0)
			goto out;
	}
	if (!fr && (rc = v_reader_new(data, &fr, err)) < 0)
		goto out;
	rc = v_data(&v, fr, held, err);
	if (rc >= 0)
		v_finish(&v);
out:
	apc_frame_reader_free(fr);
	if (tree && data)
		apc_stream_close(data);
	for (size_t i = 0; i < v.nfds; i++)
		v_fd_close(&v.fds[i]);
	free(v.fds);
	free(v.keys);
	free(v.undeclared.s);
	free(v.cookies.s);
	free(v.ts_type.s);
	free(v.ts_core.s);
	free(v.names.s);
	free(cap);
	free(evs);
	apc_input_close(in);
	return rc < 0 ? rc : APC_OK;
}
