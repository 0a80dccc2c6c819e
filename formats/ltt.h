/*
 * ltt.h - the Linux Trace Toolkit (2003-2005 directory trace) decoder
 * pieces shared by the reader (ltt.c), the eventdefs compiler
 * (ltt_eventdefs.c), the generator (tools/lttgen.c) and the tests.
 *
 * Layers, bottom up:
 *   - a tolerant parser for the not-quite-XML of eventdefs/ *.xml,
 *     system.xml and bookmarks.xml (unquoted attributes, bare
 *     attributes, stray or missing close tags);
 *   - the eventdefs type language (int, uint, float, string, enum,
 *     array, sequence, struct, union, typeref) compiled once per event
 *     type into a fixed length or a walk;
 *   - a per-CPU tracefile walker that reads one fixed-size block at a
 *     time and yields raw events with 64-bit cycles and nanosecond times.
 * The apc_format glue (bid/open/next/close, mapping to the model, k-way
 * merge of CPUs) is in ltt.c.
 */
#ifndef APC_LTT_H
#define APC_LTT_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "format.h"

/* ---- tolerant XML-ish tree ------------------------------------------- */

struct apc_ltt_xattr {
	char *name, *value; /* value "" for a bare attribute */
};

struct apc_ltt_xnode {
	char *name;                   /* lower-cased element name */
	struct apc_ltt_xattr *attrs;
	size_t nattrs;
	struct apc_ltt_xnode **kids;
	size_t nkids;
	char *text;                   /* concatenated character data, trimmed */
	int64_t offset;               /* byte offset of the start tag */
	void *arena;                  /* the root's only: every node, array and
	                               * string of the tree, freed at once */
	int cut;                      /* APC_LTT_CUT_*: the buffer ends before
	                               * this element's end (OPEN: some of its
	                               * content may be lost) or inside its start
	                               * tag (TAG: attributes may be partial) */
	char *cut_msg;                /* the root's only: "cut short inside ..."
	                               * when the buffer ends too soon, or NULL */
	int64_t cut_off;              /* the root's only: where (the length) */
};

enum { APC_LTT_CUT_NONE = 0, APC_LTT_CUT_OPEN = 1, APC_LTT_CUT_TAG = 2 };

/*
 * apc_ltt_xml_parse() : parse buf into a tree whose root is a synthetic
 * "#doc" node holding the top-level elements.  Never fails on odd
 * markup (unknown close tags are ignored, an element left open is
 * closed by its parent's close tag, leaf types such as <typeref ...>
 * need no "/"); fails only on allocation or nesting deeper than 64.
 * A buffer that ends too soon (elements still open at its end, or a
 * tag, attribute value, comment or declaration it ends inside of) is
 * not a failure either: the tree holds what came before, every element
 * the end cuts is marked (x->cut), and the root's cut_msg says what is
 * cut ("cut short inside the start tag of <event>, in its attribute
 * name="pro" (the file ends before </facility>)"), at cut_off, the
 * length.  Free with apc_ltt_xml_free.
 */
int apc_ltt_xml_parse(const char *buf, size_t len, const char *file,
		      struct apc_ltt_xnode **root, struct apc_err *err);
void apc_ltt_xml_free(struct apc_ltt_xnode *n);
/*
 * apc_ltt_xml_element() : a lone element `name`, a root of its own (free
 * it with apc_ltt_xml_free), or NULL.  apc_ltt_xml_add_attr() gives such
 * a root one more attribute; -1 when out of memory.
 */
struct apc_ltt_xnode *apc_ltt_xml_element(const char *name);
int apc_ltt_xml_add_attr(struct apc_ltt_xnode *x, const char *name, const char *value);
/*
 * apc_ltt_xml_detach() : take kid i of root `doc` out as a root of its own
 * (owning the memory of the whole tree; doc is then freed with nothing
 * to free and must not be used).
 */
struct apc_ltt_xnode *apc_ltt_xml_detach(struct apc_ltt_xnode *doc, size_t i);
/* The value of attribute `name` (case-insensitive), or NULL. */
const char *apc_ltt_xml_attr(const struct apc_ltt_xnode *n, const char *name);
/* The first child element called `name`, or NULL. */
const struct apc_ltt_xnode *apc_ltt_xml_child(const struct apc_ltt_xnode *n, const char *name);

/* ---- the type language ----------------------------------------------- */

enum apc_ltt_kind {
	APC_LTT_INT = 1, APC_LTT_UINT, APC_LTT_FLOAT, APC_LTT_STRING, APC_LTT_ENUM,
	APC_LTT_ARRAY, APC_LTT_SEQUENCE, APC_LTT_STRUCT, APC_LTT_UNION, APC_LTT_TYPEREF
};

struct apc_ltt_label {
	char *name;
	int64_t value;
};

struct apc_ltt_type;

struct apc_ltt_field {
	char *name, *description;
	struct apc_ltt_type *type;
};

struct apc_ltt_type {
	enum apc_ltt_kind kind;
	int size;          /* scalar/enum/length/tag size in bytes once resolved */
	char *size_kw;     /* the size as written ("4", "short", ...) */
	uint32_t count;    /* array length */
	char *ref;         /* typeref target name */
	struct apc_ltt_type *target; /* typeref: resolved named type */
	struct apc_ltt_type *elem;   /* array, sequence */
	struct apc_ltt_field *fields;/* struct, union */
	size_t nfields;
	struct apc_ltt_label *labels;/* enum */
	size_t nlabels;
	int64_t fixed;     /* compiled: byte length if fixed, -1 if variable */
	int64_t offset;    /* byte offset of its element in the eventdefs file */
	/* the compile (apc_ltt_defs.gen) and facility it was last compiled
	 * for: asked again, it is not walked again (a type reached through
	 * many typerefs was compiled once per path: exponential) */
	unsigned compiled_gen;
	const void *compiled_f;
};

struct apc_ltt_named {
	char *name;
	struct apc_ltt_type *type;
};

struct apc_ltt_evdef {
	char *name, *description;
	struct apc_ltt_type *type; /* NULL: no payload */
	int64_t fixed;             /* compiled payload length, -1 variable */
	int lost;                  /* its file is cut short before a type it
	                            * refers to: it keeps its id, undefined */
};

struct apc_ltt_facility {
	char *name, *description;
	struct apc_ltt_evdef *events;
	size_t nevents;
	struct apc_ltt_named *types;
	size_t ntypes;
	uint32_t base;             /* first event id */
	int has_base;
	int loaded;                /* base came from a facility_load */
	uint32_t *more_bases;      /* later loads of this version at other bases */
	size_t nmore;
	char *file;                /* the eventdefs file, for messages */
	int cut;                   /* that file is cut short inside this facility:
	                            * it holds the events and types complete
	                            * before the cut */
};


/* Architecture facts the size keywords depend on (from system.xml). */
struct apc_ltt_arch {
	int int_size, long_size, ptr_size; /* ILP32: 4 4 4, LP64: 4 8 8 ... */
	int big_endian;
};

/* Set arch sizes from an arch_size value ("ILP32", "LP64", ...); -1 unknown. */
int apc_ltt_arch_set(struct apc_ltt_arch *a, const char *arch_size);

struct apc_ltt_defs {
	struct apc_ltt_facility *facs;
	size_t nfacs;
	int cut;                   /* the last apc_ltt_defs_add's APC_EDATA is a
	                            * file cut short, whose whole part is added */
	size_t ncut;               /* facilities with cut set */
	unsigned gen;              /* apc_ltt_defs_compile() calls so far */
};

/*
 * apc_ltt_facility_load() : a facility_load of `name` at `base` (from
 * control/facilities).  Same-named versions take the loads in order
 * (the first load the first definition, ...: the checksum that tells
 * them apart is not computable here); a load past the last version, a
 * reload, adds a base to it.  Returns 0, 1 when no eventdefs file
 * describes the facility (nothing to load), or -1 on allocation failure.
 */
int apc_ltt_facility_load(struct apc_ltt_defs *d, const char *name, size_t n, uint32_t base);

/*
 * apc_ltt_defs_add() : parse one eventdefs file (one or more <facility>
 * elements) and add its facilities to d.  APC_EDATA with err set when
 * the file has no facility or an element is meaningless (unknown type,
 * bad size).  A file cut short (see apc_ltt_xml_parse) is APC_EDATA
 * "cut short inside ..." at its length with d->cut set: each facility
 * whose start tag is whole is added with the events and types whose
 * elements end before the cut (f->cut set; the one cut, and all after
 * it, dropped), maybe none, and d can be used as if the file were
 * whole.  When an element whole before the cut is meaningless, d->cut
 * is 0 and the error is that.
 */
int apc_ltt_defs_add(struct apc_ltt_defs *d, const char *buf, size_t len, const char *file,
		     struct apc_err *err);
/*
 * apc_ltt_defs_compile() : resolve typerefs and size keywords for arch
 * and compute each event's fixed length (or -1).  APC_EDATA on an
 * undefined or recursive typeref or a bad size, named at its file and
 * offset.  While a facility is cut (d->ncut), a typeref to a type no
 * facility defines is taken as lost to the cut: an event that needs it
 * is marked lost (undefined, its id kept), not an error.
 */
int apc_ltt_defs_compile(struct apc_ltt_defs *d, const struct apc_ltt_arch *arch,
			 struct apc_err *err);
void apc_ltt_defs_free(struct apc_ltt_defs *d);

/*
 * apc_ltt_payload_len() : bytes the payload of `ev` occupies at p (at
 * most avail), or -1 when it would run past avail or is malformed (a
 * union tag out of range, a string without NUL).
 */
int64_t apc_ltt_payload_len(const struct apc_ltt_evdef *ev, const uint8_t *p, size_t avail,
			    int big_endian);
/*
 * apc_ltt_field_u64() : the value of top-level integer/enum field `name`
 * of an event payload (walking variable fields before it).  0 on
 * success, -1 if absent or not an integer.
 */
int apc_ltt_field_u64(const struct apc_ltt_evdef *ev, const uint8_t *p, size_t avail,
		      int big_endian, const char *name, uint64_t *out);
/* Same for a string field: *s points into p, *n its length. */
int apc_ltt_field_str(const struct apc_ltt_evdef *ev, const uint8_t *p, size_t avail,
		      int big_endian, const char *name, const char **s, size_t *n);

/*
 * A top-level field resolved once per event type, so the per-event
 * lookup is a bounds check and a load instead of a walk with name
 * compares.  how: APC_LTT_REF_NONE (the lookup can never succeed: no
 * such field, or not of the asked kind), APC_LTT_REF_FIXED (every field
 * before it has a fixed size: it is at `off`), APC_LTT_REF_WALK (a
 * variable field comes first: fall back to apc_ltt_field_u64/_str).
 */
enum { APC_LTT_REF_NONE = 0, APC_LTT_REF_FIXED, APC_LTT_REF_WALK };

struct apc_ltt_fieldref {
	const struct apc_ltt_evdef *ev;
	const char *name;   /* for the walking fallback; must outlive the ref */
	size_t off;         /* byte offset when how == APC_LTT_REF_FIXED */
	int size;           /* integer size in bytes (0 for strings) */
	int how;
};

/*
 * apc_ltt_field_ref() : resolve field `name` of `ev` (compiled defs)
 * for later apc_ltt_ref_u64 (want_str 0) or apc_ltt_ref_str (want_str
 * 1) calls, which then give exactly what apc_ltt_field_u64/_str give.
 */
void apc_ltt_field_ref(struct apc_ltt_fieldref *f, const struct apc_ltt_evdef *ev,
		       const char *name, int want_str);

/* apc_ltt_load() : an unsigned integer of `size` (0..8) bytes at p. */
static inline uint64_t apc_ltt_load(const uint8_t *p, int size, int big_endian)
{
	uint64_t v = 0;

	if (size == 4 && !big_endian) /* the common field, as one load */
		return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
		       (uint64_t)p[3] << 24;
	for (int i = 0; i < size; i++)
		v |= (uint64_t)p[big_endian ? size - 1 - i : i] << (8 * i);
	return v;
}

/* apc_ltt_ref_u64() : apc_ltt_field_u64 through a resolved ref. */
static inline int apc_ltt_ref_u64(const struct apc_ltt_fieldref *f, const uint8_t *p,
				  size_t avail, int big_endian, uint64_t *out)
{
	if (f->how == APC_LTT_REF_FIXED) {
		if (f->off > avail || (size_t)f->size > avail - f->off)
			return -1;
		*out = apc_ltt_load(p + f->off, f->size, big_endian);
		return 0;
	}
	if (f->how == APC_LTT_REF_WALK)
		return apc_ltt_field_u64(f->ev, p, avail, big_endian, f->name, out);
	return -1;
}

/* apc_ltt_ref_str() : apc_ltt_field_str through a resolved ref. */
int apc_ltt_ref_str(const struct apc_ltt_fieldref *f, const uint8_t *p, size_t avail,
		    int big_endian, const char **s, size_t *n);

/* ---- event ids ------------------------------------------------------- */

#define APC_LTT_ID_FACILITY_LOAD 0
#define APC_LTT_ID_BLOCK_START 17
#define APC_LTT_ID_BLOCK_END 18
#define APC_LTT_ID_HEARTBEAT 19
#define APC_LTT_HDR 6          /* u16 id, u32 low 32 bits of the cycle count */
#define APC_LTT_BLOCK_EV 20    /* block_start/end payload: s, ns, cycles, id */
#define APC_LTT_MAX_IDS 65536

/* id -> (facility, event) for every id, 1 MiB: for callers that want a
 * flat table (the eventdefs fuzz target); the reader uses apc_ltt_ids. */
struct apc_ltt_idmap {
	const struct apc_ltt_facility *fac[APC_LTT_MAX_IDS];
	const struct apc_ltt_evdef *ev[APC_LTT_MAX_IDS];
};

/*
 * The id table a walker reads, sized by what the definitions use: ids
 * below n through fac/ev (n entries each), every id from n up as
 * (NULL, rest).  A trace's own table has rest NULL, so those ids are
 * undefined exactly as unassigned ids below n are; the reader's table
 * for control/processes and control/interrupts is a 20-entry overlay
 * with rest set.  Opening a trace costs the ids it assigns, not 65536
 * (still up to 65536 when a facility's base is near the top).
 */
struct apc_ltt_ids {
	const struct apc_ltt_facility **fac;
	const struct apc_ltt_evdef **ev;
	uint32_t n;
	const struct apc_ltt_evdef *rest;
};

/* apc_ltt_ids_fac() / apc_ltt_ids_ev() : the entry of any id. */
static inline const struct apc_ltt_facility *apc_ltt_ids_fac(const struct apc_ltt_ids *t,
							     uint32_t id)
{
	return id < t->n ? t->fac[id] : NULL;
}

static inline const struct apc_ltt_evdef *apc_ltt_ids_ev(const struct apc_ltt_ids *t, uint32_t id)
{
	return id < t->n ? t->ev[id] : t->rest;
}

/*
 * apc_ltt_idmap_build() : give each facility a base when it has none
 * (control/facilities was empty): "core" gets 0 and its events are
 * numbered in file order (which puts facility_load at 0 and
 * block_start/end/time_heartbeat at 17/18/19 in the 2004 core.xml);
 * a facility without those builtins (2003) is numbered around the
 * builtin ids.  Other facilities follow, in the order they were added.
 */
void apc_ltt_idmap_build(struct apc_ltt_idmap *m, struct apc_ltt_defs *d);
/*
 * apc_ltt_ids_build() : the same numbering as apc_ltt_idmap_build (same
 * bases, same entries) into a table of n = highest assigned id + 1
 * entries (at least the builtins' 20), rest NULL.  Replaces whatever t
 * held without freeing it.  APC_OK or APC_ENOMEM (t left empty).  Free
 * with apc_ltt_ids_free.
 */
int apc_ltt_ids_build(struct apc_ltt_ids *t, struct apc_ltt_defs *d, struct apc_err *err);
void apc_ltt_ids_free(struct apc_ltt_ids *t);

/* ---- time ------------------------------------------------------------ */

/*
 * apc_ltt_interp() : ns time of cycle count c in a block that starts at
 * (t0 ns, c0 cycles) and ends at (t1, c1): t0 + floor((c - c0) *
 * (t1 - t0) / (c1 - c0)), 128-bit exact, the LTT viewer's linear
 * interpolation.  Degenerate blocks (c1 <= c0 or t1 < t0) give t0.
 */
uint64_t apc_ltt_interp(uint64_t c, uint64_t t0, uint64_t c0, uint64_t t1, uint64_t c1);

/*
 * The same interpolation with the per-block work done once: the walker
 * calls it for every event, and a 128-bit division (__udivti3) per event
 * was a visible share of a conversion.  floor(x * dt / dc) is the
 * 128-by-64-bit division with a precomputed reciprocal of Moller and
 * Granlund ("Improved division by invariant integers", 2011, algorithm
 * 4): two multiplications and a correction, exact whenever the quotient
 * fits in 64 bits (tests compare it with apc_ltt_interp over edge and
 * random values).  A larger quotient (only far outside the block)
 * takes apc_ltt_interp.
 */
struct apc_ltt_interp_k {
	uint64_t t0, c0, t1, c1;
	uint64_t dt, dc;
	uint64_t dn, v;     /* dc << sh (top bit set); floor((2^128-1)/dn) - 2^64 */
	int sh;
	int flat;           /* degenerate block (c1 <= c0 or t1 < t0): always t0 */
};

/* apc_ltt_interp_prep() : the constants of the block (t0, c0)..(t1, c1). */
void apc_ltt_interp_prep(struct apc_ltt_interp_k *k, uint64_t t0, uint64_t c0, uint64_t t1,
			 uint64_t c1);

/* apc_ltt_interp_at() : apc_ltt_interp(c, t0, c0, t1, c1) for k's block. */
static inline uint64_t apc_ltt_interp_at(const struct apc_ltt_interp_k *k, uint64_t c)
{
	unsigned __int128 n, p;
	uint64_t n1, n0, u1, u0, q1, q0, r;

	if (k->flat || c < k->c0)
		return k->t0;
	n = (unsigned __int128)(c - k->c0) * k->dt;
	n1 = (uint64_t)(n >> 64);
	n0 = (uint64_t)n;
	if (n1 >= k->dc) /* quotient >= 2^64 */
		return apc_ltt_interp(c, k->t0, k->c0, k->t1, k->c1);
	/* Normalise: u = n << sh; n1 < dc keeps u below dn * 2^64. */
	u1 = n1 << k->sh | (n0 >> 1) >> (63 - k->sh); /* no shift by 64 when sh = 0 */
	u0 = n0 << k->sh;
	p = (unsigned __int128)k->v * u1 + ((unsigned __int128)u1 << 64 | u0);
	q1 = (uint64_t)(p >> 64) + 1;
	q0 = (uint64_t)p;
	r = u0 - q1 * k->dn;
	if (r > q0) {
		q1--;
		r += k->dn;
	}
	if (r >= k->dn)
		q1++;
	return q1 > UINT64_MAX - k->t0 ? UINT64_MAX : k->t0 + q1;
}

/* ---- per-CPU tracefile walker ---------------------------------------- */

/* Read up to n bytes; returns bytes read (0 at end) or -1 with err set. */
typedef long (*apc_ltt_read_fn)(void *ctx, void *buf, size_t n, struct apc_err *err);

enum apc_ltt_subsec { APC_LTT_SUBSEC_AUTO = 0, APC_LTT_SUBSEC_NS, APC_LTT_SUBSEC_US };
enum apc_ltt_trailer { APC_LTT_TRAILER_OLD = 1, APC_LTT_TRAILER_NEW = 2 };

struct apc_ltt_raw {
	int cpu;
	uint16_t id;
	uint32_t hdr32;         /* the header's low 32 bits of the cycle count */
	uint64_t cycles;        /* extended to 64 bits */
	uint64_t ts;            /* ns since the epoch (interpolated) */
	uint64_t offset;        /* file offset of the event header */
	const uint8_t *payload; /* valid until the next call */
	size_t len;
	const struct apc_ltt_facility *fac; /* NULL for unknown ids */
	const struct apc_ltt_evdef *def;
};

struct apc_ltt_cpu {
	int cpu;
	const char *name;       /* for messages */
	apc_ltt_read_fn read;
	void *ctx;
	struct apc_ltt_ids ids;  /* a copy: the arrays must outlive the walker */
	int big_endian;
	int subsec;             /* enum apc_ltt_subsec, decided before walking */
	size_t block_size;
	uint8_t *block;         /* the current block (inside buf) */
	uint8_t *buf;           /* read-ahead: whole blocks read in one call */
	size_t buf_cap, buf_len, buf_pos; /* buf_pos: offset of `block` in buf */
	size_t buf_want;        /* what buf grows to as the file has the bytes */
	int read_st;            /* a read failure held back until buf is used up */
	struct apc_err read_err;/* and its message */
	struct apc_ltt_interp_k ik; /* the current block's time constants */
	uint64_t block_off;     /* file offset of the current block */
	uint64_t nblocks;
	int have_block;
	size_t pos, end_pos;    /* next event, block_end offset */
	int trailer;            /* meaning seen in the last block */
	uint32_t bs_s, bs_sub, be_s, be_sub; /* raw block timespecs */
	uint64_t bs_cyc, be_cyc, t0, t1;
	uint64_t cyc;           /* last extended cycle count */
	uint64_t last_ts;
	uint64_t wraps;         /* low-32 wraps seen */
	uint64_t skipped;       /* events lost to undecodable ids */
	uint64_t undefined;     /* undefined ids met */
	uint64_t undef_off;     /* the first one's file offset (when undefined was ever > 0) */
	uint16_t undef_id;      /* and its id */
	int have_undef;
	int done;
	/* The file ends inside a block (see apc_ltt_cpu_load). */
	int keep_untimed;       /* set by the caller: walk such a block's
	                         * events at block_start's time (control
	                         * files) instead of counting them in untimed */
	int cut_st;             /* APC_EDATA once the cut is met: the status
	                         * once what is kept of the block is walked */
	struct apc_err cut_err; /* and its message */
	uint64_t cut_off;       /* file offset of the cut (the file's length) */
	int cut_start;          /* the cut block's block_start is whole: bs_s,
	                         * bs_sub and bs_cyc are its, even when its
	                         * events are dropped */
	int cut_noend;          /* the current block is cut before block_end:
	                         * its end_pos is after its last whole event */
	uint64_t untimed;       /* events dropped: their block was cut before
	                         * its block_end, which gives them their time */
};

/*
 * apc_ltt_cpu_init() : set up a walker; the caller sets subsec (AUTO is
 * read as ns) before the first apc_ltt_cpu_next.  Allocates one block
 * or 64 KiB, whichever is less; the buffer grows (to a block, or the
 * read-ahead) only as the file delivers the bytes to fill it.
 */
int apc_ltt_cpu_init(struct apc_ltt_cpu *c, int cpu, const char *name, apc_ltt_read_fn read,
		     void *ctx, const struct apc_ltt_ids *ids, int big_endian, size_t block_size,
		     struct apc_err *err);
void apc_ltt_cpu_free(struct apc_ltt_cpu *c);
/*
 * apc_ltt_cpu_readahead() : read up to `bytes` (rounded down to whole
 * blocks, at least one) per read call instead of one block.  Call
 * before the first apc_ltt_cpu_load.  Events, errors and their offsets
 * are the same as with one block per call: a read failure after whole
 * blocks is reported once those blocks are walked.  APC_OK: the
 * buffer grows to that size only as the file fills it, so a failed
 * allocation is APC_ENOMEM from apc_ltt_cpu_load instead.
 */
int apc_ltt_cpu_readahead(struct apc_ltt_cpu *c, size_t bytes, struct apc_err *err);
/*
 * apc_ltt_cpu_load() : read the next block (called by _next as needed,
 * and by the reader at open to look at the first block's timestamps).
 * APC_OK, APC_END at end of file, or APC_EDATA/APC_EIO.
 *
 * A file that ends inside a block (a trace cut short) is APC_EDATA
 * "truncated block" at the cut, after what can be kept of that block:
 * its times are interpolated between block_start and block_end, so
 *   - if the walk from block_start reaches block_end before the cut
 *     (only padding and the trailer are lost), the block is whole: it
 *     is loaded and walked, and the next load gives the cut;
 *   - otherwise no event of the block has a time known to be right
 *     (heartbeats, in the real trace and in lttgen's, carry a cycle count
 *     and no time; another block's rate is a guess): its whole events
 *     are counted in c->untimed and the cut is given at once, or, with
 *     c->keep_untimed, the block is loaded with every event at
 *     block_start's time and no block_end, and the cut follows them.
 * Once met, the cut is what every later load gives.  A read that fails
 * with APC_EDATA (an archive member cut short, or its compressed data
 * broken) ends the file's bytes there just the same: what came before
 * is kept as above, and the error given is the read's, not "truncated
 * block" (at a block boundary, once the blocks before it are walked).
 */
int apc_ltt_cpu_load(struct apc_ltt_cpu *c, struct apc_err *err);
/*
 * apc_ltt_cpu_next() : the next raw event (builtins included), time in
 * ns.  APC_OK, APC_END, or a negative status with err set (the file
 * offset of the damage in err).  An id with no definition cannot be
 * sized: the rest of its block is skipped (counted in c->skipped) and
 * walking resumes at block_end.
 */
int apc_ltt_cpu_next(struct apc_ltt_cpu *c, struct apc_ltt_raw *ev, struct apc_err *err);
/*
 * apc_ltt_cpu_run() : up to max events of apc_ltt_cpu_next in one call,
 * stopping after a block_end (payload pointers stay valid until the
 * next call).  Returns how many; *st is APC_OK, or the status the next
 * apc_ltt_cpu_next would have given (APC_END, or a failure with err
 * set) once the returned events are used.
 */
size_t apc_ltt_cpu_run(struct apc_ltt_cpu *c, struct apc_ltt_raw *out, size_t max, int *st,
		       struct apc_err *err);

/* The time of a block timespec under a sub-second reading. */
static inline uint64_t apc_ltt_timespec_ns(uint32_t s, uint32_t sub, int subsec)
{
	return (uint64_t)s * 1000000000u + (uint64_t)sub * (subsec == APC_LTT_SUBSEC_US ? 1000u : 1u);
}

/* ---- reader statistics ----------------------------------------------- */

struct apc_ltt_stat {
	int cpu;                 /* -1 for control files / bookmarks */
	const char *facility;    /* "builtin" for ids without a definition */
	const char *event;
	uint16_t id;
	uint64_t count;
	const char *became;      /* "activity", "counter ltt_irq", "none", ... */
};

/*
 * apc_ltt_stats() : per (cpu, event type) counts of what an open LTT
 * reader has read so far and what each became; fills up to max entries
 * and returns how many there are in all.  Strings live as long as r.
 */
size_t apc_ltt_stats(struct apc_reader *r, struct apc_ltt_stat *out, size_t max);

extern const struct apc_format apc_format_ltt;

#endif
