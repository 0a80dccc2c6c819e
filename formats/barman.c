/*
 * barman.c - reader for raw buffer dumps of Arm's bare-metal agent
 * (barman), protocol versions 1 to 3, into the event model.
 *
 * A dump is one header (a C struct whose layout depends on the target's
 * pointer size and on compile-time constants stored inside it) followed
 * by a data area of length-prefixed records, linear or circular.  The
 * header is read whole; the data area is streamed through a window so a
 * 1 GiB linear dump needs no more than the window.  A wrapped circular
 * buffer is read in two pieces: the piece at the start of the buffer
 * (the newest records) is kept in memory while the stream moves on to
 * the older piece, which is decoded first.  Damage in the older piece
 * loses the rest of that piece only: the newer piece is still decoded
 * (after it, so the output stays in time order) and the damage is
 * reported at the end.
 *
 * Facts of real files (see ../shared/testdata/barman): every header
 * struct is packed except the string table, the u32 counts and the
 * datastore parameters, which are 8-aligned; circular offsets are
 * absolute and only grow; a committed record's length word has the top
 * bit clear, padding and uncommitted blocks have it set; padding is
 * found only at a circular buffer's wrap point.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "format.h"
#include "map64.h"
#include "scale.h"
#include "util.h"

#define BM_MAGIC_LEN 8
#define BM_FIXED_LEN 92          /* bytes up to the string table */
#define BM_HEADER_MAX (64u << 20)
#define BM_SCAN_MAX (256u << 20) /* leading junk we are willing to skip */
#define BM_WINDOW (1u << 20)
#define BM_RECORD_MAX (64u << 20)
#define BM_STASH_MAX (1ull << 30)
#define BM_LEAD_SCAN (BM_WINDOW / 4) /* how far to look for the first time */
#define BM_CYCLE_TYPE 0xffffffffu
/* What barman's PMU drivers return for a counter they did not read
 * (BM_ARM_PMU_INVALID_COUNTER_VALUE); it is stored like a reading. */
#define BM_INVALID_READING UINT64_MAX

enum { BM_LINEAR = 1, BM_CIRCULAR = 2 };

/* Record types (barman-protocol.c enum bm_protocol_record_types). */
enum {
	BM_REC_SAMPLE = 1,
	BM_REC_SAMPLE_PC = 2,
	BM_REC_TASK_SWITCH = 3,
	BM_REC_CUSTOM = 4,
	BM_REC_ANNOTATION = 5,
	BM_REC_HALT = 6,
	BM_REC_V3_LAST = 9
};

/* One row of the core table: MIDR part number -> gator's names. */
struct barman_part {
	uint16_t part;
	const char *name;   /* core name, events.xml category */
	const char *pmu;    /* gator counter prefix */
	uint32_t ccnt_event;
};

static const struct barman_part barman_parts[] = {
	{0xc05, "Cortex-A5", "ARMv7_Cortex_A5", 0xff},
	{0xc07, "Cortex-A7", "ARMv7_Cortex_A7", 0xff},
	{0xc08, "Cortex-A8", "ARMv7_Cortex_A8", 0xff},
	{0xc09, "Cortex-A9", "ARMv7_Cortex_A9", 0xff},
	{0xc0d, "Cortex-A17", "ARMv7_Cortex_A17", 0xff},
	{0xc0e, "Cortex-A17", "ARMv7_Cortex_A17", 0xff},
	{0xc0f, "Cortex-A15", "ARMv7_Cortex_A15", 0xff},
	{0xd01, "Cortex-A32", "ARMv8_Cortex_A32", 0x11},
	{0xd03, "Cortex-A53", "ARMv8_Cortex_A53", 0x11},
	{0xd04, "Cortex-A35", "ARMv8_Cortex_A35", 0x11},
	{0xd05, "Cortex-A55", "ARMv8_Cortex_A55", 0x11},
	{0xd07, "Cortex-A57", "ARMv8_Cortex_A57", 0x11},
	{0xd08, "Cortex-A72", "ARMv8_Cortex_A72", 0x11},
	{0xd09, "Cortex-A73", "ARMv8_Cortex_A73", 0x11},
	{0xd0a, "Cortex-A75", "ARMv8_Cortex_A75", 0x11},
	{0xd0b, "Cortex-A76", "ARMv8_Cortex_A76", 0x11},
	{0xd0d, "Cortex-A77", "ARMv8_Cortex_A77", 0x11},
	{0xd41, "Cortex-A78", "ARMv8_Cortex_A78", 0x11},
};

/* Architectural PMU events common to ARMv7 and ARMv8 (gator's titles). */
struct barman_event {
	uint32_t event;
	const char *title, *name, *units;
};

static const struct barman_event barman_events[] = {
	{0x00, "Instructions (Executed)", "Increment PMSWINC Register", "instructions"},
	{0x01, "L1 Instruction Cache", "Refill", NULL},
	{0x02, "L1 Instruction TLB", "Refill", NULL},
	{0x03, "L1 Data Cache", "Refill", NULL},
	{0x04, "L1 Data Cache", "Access", NULL},
	{0x05, "L1 Data TLB", "Refill", NULL},
	{0x06, "Instructions (Executed)", "Load", "instructions"},
	{0x07, "Instructions (Executed)", "Store", "instructions"},
	{0x08, "Instructions (Executed)", "All", "instructions"},
	{0x09, "Exceptions", "Taken", "exceptions"},
	{0x0a, "Instructions (Executed)", "Exception Returns", "instructions"},
	{0x0b, "Instructions (Executed)", "Write to CONTEXTIDR", "instructions"},
	{0x0c, "Instructions (Executed)", "Write to PC", "instructions"},
	{0x0d, "Instructions (Executed)", "Branch (Immediate)", "instructions"},
	{0x0e, "Instructions (Executed)", "Branch (Return)", "instructions"},
	{0x0f, "Instructions (Executed)", "Unaligned Load/Store", "instructions"},
	{0x10, "Branch Predictor", "Mispredictions", NULL},
	{0x11, "Cycles", "CPU Cycles", "cycles"},
	{0x12, "Branch Predictor", "Possible Predictions", NULL},
	{0x13, "Memory", "Access", NULL},
	{0x14, "L1 Instruction Cache", "Access", NULL},
	{0x15, "L1 Data Cache", "Write-back", NULL},
	{0x16, "L2 Data Cache", "Access", NULL},
	{0x17, "L2 Data Cache", "Refill", NULL},
	{0x18, "L2 Data Cache", "Write-back", NULL},
	{0x19, "Bus", "Access", NULL},
	{0x1a, "Errors", "Memory", NULL},
	{0x1d, "Cycles", "Bus Cycles", "cycles"},
};

struct barman_core {
	uint32_t midr, ncnt;
	uint32_t *types;     /* ncnt configured event types */
	uint32_t *ids;       /* model counter id per slot */
	uint64_t *last;      /* last valid reading per slot, BM_INVALID_READING before one */
	int primed;          /* every slot of last[] holds a valid reading */
};

struct barman_task {
	uint32_t id;
	uint64_t ts;
	const char *name;    /* points into the string table copy */
};

struct barman_map {
	uint64_t base, len, off;
	uint64_t ts;         /* when it was inserted (ticks; 0 without task infos) */
	uint32_t task;
	int32_t cookie;
	const char *image;
};

struct barman_series {
	uint32_t chart, local, counter;
	int sampled;
};

/*
 * Annotation channel and group names.  Barman names a channel or a group
 * once, for the whole target; the annotate protocol's names belong to
 * the connection (the thread) that sent them ("Channels and groups are
 * defined per thread", gator's streamline_annotate.h).  Annotations go
 * out on one connection per core, so a name declared on one core's is
 * declared again on another core's before that core's first string on
 * the channel, and again after a rename (gen counts the versions).
 */
enum { BM_NAME_CHANNEL = 0, BM_NAME_GROUP = 1 };

struct barman_name {
	uint32_t id, group;  /* channel or group id; a channel's group */
	uint32_t gen;        /* bumped whenever text or group changes */
	char *text;
	size_t len, cap;     /* text's length and allocated size */
};

/* A piece of the data area to decode: file range, or memory (stash). */
struct barman_seg {
	uint64_t file_off, len;
	uint64_t logical;    /* datastore offset of its first byte */
	int in_stash;
};

struct barman {
	uint64_t rec_count[BM_REC_HALT + 1]; /* records read per mapped type, for report() */
	struct apc_stream *s;
	const char *name;
	int swap, ptr;       /* byte swap needed; pointer size 4 or 8 */
	uint32_t version, store;
	uint64_t t_base, t_mult, t_div;
	uint64_t last_ts;    /* ticks of the last record with a time */
	int have_ts;         /* last_ts is set */
	int lead_start;      /* ... to the capture start, no record having a time */
	struct apc_scale to_ns; /* the fast path's t_mult / t_div (lib/scale.h) */
	int fast;            /* fast paths allowed (APC_NO_SIMD unset) */
	uint32_t max_cores, max_tasks, max_mmaps, max_pmu, max_str, ncustom, ncharts;
	/* PMU counter names (barman_declare_pmu): the r-th prefix_cntN slot of
	 * an event, and how many slots a prefix has, by hash */
	struct apc_map64 pmu_slot, pmu_nslots;

	char *strtab;        /* NUL-terminated copy */
	uint32_t strtab_len;
	struct barman_core *cores;
	struct barman_task *tasks;
	uint32_t ntasks;
	int32_t ann_tid;     /* core 0's annotation connection; core N's is ann_tid + N */
	uint64_t ann_named[APC_MAX_CORES / 64]; /* the cores whose connection is named */
	struct barman_map *maps;
	uint32_t nmaps;
	uint32_t exec_task;  /* the task whose process cookie is exec_cookie */
	int32_t exec_cookie; /* (a one-entry cache of barman_task_cookie) */
	int have_exec;
	struct barman_series *series;
	uint32_t act_counter;
	int32_t ncookies;
	struct barman_name *names; /* channel and group names, in order of first sight */
	size_t nnames, names_cap;
	struct apc_map64 name_at;  /* (kind, id) -> index + 1 in names */
	struct apc_map64 declared; /* (core, kind, id) -> gen declared on that core's connection */

	/* stream window: win[0..win_len) holds file bytes from win_abs */
	uint8_t *win;
	size_t win_cap, win_pos, win_len;
	uint64_t win_abs;
	int eof;
	/* Set when the stream broke after good bytes (a cut .gz): read
	 * as the end of the file, and reported if nothing else is. */
	struct apc_err cut;
	struct apc_err hdr;	/* a header inconsistency, told at the end */

	uint8_t *stash;
	int stash_cut;       /* the file ended inside the stashed piece */
	struct apc_err held; /* damage in the older piece, reported after the newer one */
	int holding;
	struct barman_seg seg[2];
	int nseg, cur;
	uint64_t seg_done;   /* bytes of the current segment consumed */
	uint64_t data_off;   /* file offset of the data area */
	uint64_t buflen;     /* the data store's length */
	int started, finished;
	size_t maxev;        /* most events one record can produce */
};

/*
 * Room for one more record in the batch?  apc_batch_add() makes room
 * past the cap, but stop while the largest record still fits under it:
 * batches stay the size the driver asked for.
 */
static int barman_room(const struct barman *b, const struct apc_batch *bt)
{
	return bt->n == 0 || bt->n + b->maxev <= bt->cap;
}

/* ---- byte access ------------------------------------------------------ */

static uint32_t barman_u32(const struct barman *b, const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return b->swap ? __builtin_bswap32(v) : v;
}

static uint64_t barman_u64(const struct barman *b, const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return b->swap ? __builtin_bswap64(v) : v;
}

static uint64_t barman_uptr(const struct barman *b, const uint8_t *p)
{
	return b->ptr == 8 ? barman_u64(b, p) : barman_u32(b, p);
}

static uint64_t barman_align(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/*
 * barman_magic() : 1 if p[0..8) is one of the four magics; sets the
 * pointer size and whether the file is big-endian.
 */
static int barman_magic(const uint8_t *p, int *ptr, int *big)
{
	if (memcmp(p, "BARMAN", 6) == 0 && (memcmp(p + 6, "32", 2) == 0 || memcmp(p + 6, "64", 2) == 0)) {
		*big = 1;
		*ptr = p[6] == '3' ? 4 : 8;
		return 1;
	}
	if (memcmp(p + 2, "NAMRAB", 6) == 0 && (memcmp(p, "23", 2) == 0 || memcmp(p, "46", 2) == 0)) {
		*big = 0;
		*ptr = p[1] == '3' ? 4 : 8;
		return 1;
	}
	return 0;
}

static int barman_host_big(void)
{
	return __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__;
}

/* ---- clock ------------------------------------------------------------ */

/*
 * ns = (t - base) * mult / div with a 128-bit product so that every
 * 64-bit tick converts exactly.  Ticks before the base clamp to 0 and a
 * result past 2^64 clamps to the maximum; both are counted.
 */
static uint64_t barman_ns(struct apc_reader *r, struct barman *b, uint64_t t)
{
	unsigned __int128 v;

	if (t < b->t_base) {
		apc_model_unmapped(r->model, "barman timestamps before the clock base (clamped to 0)", 1);
		return 0;
	}
	/* Fast paths, same result: a 1:1 clock, or the quotient by
	 * multiplication with a reciprocal (the 128-bit division is a
	 * library call, and even a 64-bit one was a tenth of the decoding). */
	if (b->fast) {
		uint64_t d = t - b->t_base, ns;
		if (b->t_mult == b->t_div)
			return d;
		if (apc_scale_fast(&b->to_ns, d, &ns))
			return ns;
	}
	v = (unsigned __int128)(t - b->t_base) * b->t_mult / b->t_div;
	if (v > UINT64_MAX) {
		apc_model_unmapped(r->model, "barman timestamps past 2^64 ns (clamped)", 1);
		return UINT64_MAX;
	}
	return (uint64_t)v;
}

/* ---- stream window ---------------------------------------------------- */

/*
 * barman_want() : make at least n bytes visible from win_pos, reading
 * more as needed.  Returns the bytes visible (fewer only at end of
 * input), or -1 with r->err set.
 */
static ssize_t barman_want(struct apc_reader *r, struct barman *b, size_t n)
{
	size_t have = b->win_len - b->win_pos;

	if (have >= n || b->eof)
		return (ssize_t)have;
	if (b->win_pos > 0) {
		memmove(b->win, b->win + b->win_pos, have);
		b->win_abs += b->win_pos;
		b->win_pos = 0;
		b->win_len = have;
	}
	if (n > b->win_cap) {
		size_t ncap = n < BM_WINDOW ? BM_WINDOW : n;
		int64_t size = apc_stream_size(b->s);

		/* No larger than the rest of a file of known size (plus a
		 * byte, so the last read sees the end): a small input costs
		 * no 1 MiB allocation. */
		if (size >= 0 && (uint64_t)size >= b->win_abs && (uint64_t)size - b->win_abs + 1 < ncap)
			ncap = (size_t)((uint64_t)size - b->win_abs + 1);
		if (ncap <= b->win_cap)
			ncap = b->win_cap + 1;
		uint8_t *nw = realloc(b->win, ncap);
		if (!nw)
			return apc_err_set(&r->err, APC_ENOMEM, b->name, (int64_t)b->win_abs,
					   "cannot allocate %zu bytes", ncap), -1;
		b->win = nw;
		b->win_cap = ncap;
	}
	while (b->win_len < n && !b->eof) {
		ssize_t k = apc_stream_read(b->s, b->win + b->win_len, b->win_cap - b->win_len, &r->err);
		if (k < 0 && r->err.status == APC_EDATA) {
			/* damaged compressed data: what came before it is the
			 * dump, decoded as a dump cut there would be */
			b->cut = r->err;
			apc_err_clear(&r->err);
			k = 0;
		}
		if (k < 0)
			return -1;
		if (k == 0)
			b->eof = 1;
		b->win_len += (size_t)k;
	}
	return (ssize_t)(b->win_len - b->win_pos);
}

/*
 * Move forward to absolute file offset abs (never backwards).  When the
 * file ends first, the window stays at the end of the file, so the
 * decoder reports where the file really ends.
 */
static int barman_seek(struct apc_reader *r, struct barman *b, uint64_t abs)
{
	uint64_t gap;

	if (abs <= b->win_abs + b->win_len) {
		b->win_pos = (size_t)(abs - b->win_abs);
		return APC_OK;
	}
	gap = abs - (b->win_abs + b->win_len);
	b->win_abs += b->win_len;
	b->win_pos = b->win_len = 0;
	if (b->eof)
		return APC_OK;
	if (apc_stream_skip(b->s, gap, &r->err) < 0) {
		apc_err_clear(&r->err);
		b->eof = 1;
		b->win_abs = apc_stream_offset(b->s);
		return APC_OK;
	}
	b->win_abs = abs;
	return APC_OK;
}

/* ---- header ----------------------------------------------------------- */

static const char *barman_str(const struct barman *b, uint32_t ptr)
{
	if (ptr >= b->strtab_len)
		return NULL;
	return b->strtab + ptr;
}

static const struct barman_part *barman_part_find(uint32_t midr)
{
	uint32_t impl = midr >> 24, part = (midr >> 4) & 0xfff;

	if (impl != 0x41)
		return NULL;
	for (size_t i = 0; i < sizeof barman_parts / sizeof barman_parts[0]; i++)
		if (barman_parts[i].part == part)
			return &barman_parts[i];
	return NULL;
}

static const struct barman_event *barman_event_find(uint32_t ev)
{
	for (size_t i = 0; i < sizeof barman_events / sizeof barman_events[0]; i++)
		if (barman_events[i].event == ev)
			return &barman_events[i];
	return NULL;
}

static int barman_nomem(struct apc_reader *r, struct barman *b)
{
	return apc_err_set(&r->err, APC_ENOMEM, b->name, APC_NO_OFFSET, "out of memory");
}

/*
 * Declare the PMU counters of one core: the cycle counter as
 * PREFIX_ccnt, the others PREFIX_cntN.  Cores of one type share
 * declarations; a slot whose event differs from every declaration of
 * that type so far gets the next free cntN.
 */
/* barman_pmu_slot()'s keys: a PMU name prefix with two numbers. */
static uint64_t barman_pmu_key(const char *prefix, uint64_t a, uint64_t b)
{
	return apc_hash_u64(apc_hash_u64(apc_hash_str(APC_HASH_SEED, prefix), a), b);
}

/*
 * The name of core counter k (event ev, not the cycle counter) into
 * type: prefix_cntN, N the lowest slot of that event this core has not
 * taken yet, else a new one.  The r-th counter of an event on a core
 * takes the event's r-th slot, so the slots are found by (prefix, ev, r)
 * in an index, with the names checked; a scan of every slot (the
 * answer whenever the index cannot give it) made a header of many
 * cores of many counters quadratic in both (minutes for 64 x 256).
 */
static int barman_pmu_slot(struct apc_reader *r, struct barman *b, const struct barman_core *c,
			   uint32_t k, const char *prefix, char *type, size_t len)
{
	uint32_t ev = c->types[k], occ = 0;
	uint64_t n, kslot = 0, knext = barman_pmu_key(prefix, UINT64_MAX, UINT64_MAX);
	struct apc_counter_decl *d;

	for (uint32_t j = 0; j < k; j++)
		occ += c->types[j] == ev;
	kslot = barman_pmu_key(prefix, ev, occ);
	if (apc_map64_find(&b->pmu_slot, kslot, &n)) {
		snprintf(type, len, "%s_cnt%" PRIu64, prefix, n);
		d = apc_model_find_counter(r->model, type);
		if (d && d->event == (int64_t)ev)
			return APC_OK;
	} else {
		if (!apc_map64_find(&b->pmu_nslots, knext, &n))
			n = 0;
		snprintf(type, len, "%s_cnt%" PRIu64, prefix, n);
		if (!apc_model_find_counter(r->model, type)) {
			if (apc_map64_put(&b->pmu_slot, kslot, n) < 0 ||
			    apc_map64_put(&b->pmu_nslots, knext, n + 1) < 0)
				return APC_ENOMEM;
			return APC_OK;
		}
	}
	/* the index does not know (a hash shared by two keys): scan */
	for (n = 0;; n++) {
		int used = 0;
		snprintf(type, len, "%s_cnt%" PRIu64, prefix, n);
		d = apc_model_find_counter(r->model, type);
		if (!d)
			return APC_OK;
		for (uint32_t j = 0; j < k; j++)
			if (c->ids[j] == d->id)
				used = 1;
		if (!used && d->event == (int64_t)ev)
			return APC_OK;
	}
}

static int barman_declare_pmu(struct apc_reader *r, struct barman *b, uint32_t core)
{
	struct barman_core *c = &b->cores[core];
	const struct barman_part *part = barman_part_find(c->midr);
	char prefix[64], cat[64], type[96];
	uint32_t cpuid = ((c->midr >> 12) & 0xff000) | ((c->midr >> 4) & 0xfff);

	if (part) {
		snprintf(prefix, sizeof prefix, "%s", part->pmu);
		snprintf(cat, sizeof cat, "%s", part->name);
	} else {
		snprintf(prefix, sizeof prefix, "Barman_0x%05x", cpuid);
		snprintf(cat, sizeof cat, "CPU 0x%05x", cpuid);
	}
	for (uint32_t k = 0; k < c->ncnt; k++) {
		uint32_t ev = c->types[k];
		struct apc_counter_decl *d = NULL;
		int64_t event = ev != BM_CYCLE_TYPE ? (int64_t)ev : part ? (int64_t)part->ccnt_event : -1;

		if (ev == BM_CYCLE_TYPE)
			snprintf(type, sizeof type, "%s_ccnt", prefix);
		else if (barman_pmu_slot(r, b, c, k, prefix, type, sizeof type) < 0)
			return barman_nomem(r, b);
		d = apc_model_add_counter(r->model, type);
		if (!d)
			return barman_nomem(r, b);
		c->ids[k] = d->id;
		if (d->title)
			continue; /* declared by an earlier core */
		{
			const struct barman_event *e = barman_event_find(ev == BM_CYCLE_TYPE ? 0x11 : ev);
			char ename[32];
			snprintf(ename, sizeof ename, "Event 0x%x", ev);
			if (apc_strset(&d->title, e ? e->title : "PMU") < 0 ||
			    apc_strset(&d->name, e ? e->name : ename) < 0 ||
			    apc_strset(&d->category, cat) < 0)
				return barman_nomem(r, b);
			if (e && e->units && apc_strset(&d->units, e->units) < 0)
				return barman_nomem(r, b);
			snprintf(type, sizeof type, "%s_cnt", prefix);
			if (apc_strset(&d->counter_set, type) < 0)
				return barman_nomem(r, b);
		}
		d->event = event;
		d->cls = APC_CLASS_DELTA;
		d->per_cpu = APC_YES;
	}
	return APC_OK;
}

/* Counter type names must be identifiers: keep [A-Za-z0-9_]. */
static void barman_ident(char *dst, size_t n, const char *src)
{
	size_t k = 0;

	for (; src && *src && k + 1 < n; src++)
		dst[k++] = ((*src >= 'a' && *src <= 'z') || (*src >= 'A' && *src <= 'Z') ||
			    (*src >= '0' && *src <= '9')) ? *src : '_';
	dst[k] = 0;
}

static int barman_declare_custom(struct apc_reader *r, struct barman *b, const uint8_t *h,
				 uint64_t charts_off, uint64_t series_off)
{
	uint32_t *nlocal = calloc(b->ncharts, sizeof *nlocal);

	if (!nlocal)
		return barman_nomem(r, b);
	for (uint32_t i = 0; i < b->ncustom; i++) {
		const uint8_t *p = h + series_off + 31ull * i;
		uint32_t chart = barman_u32(b, p);
		const uint8_t *cp;
		const char *cname, *sname;
		char type[160], a[64], s[64];
		struct apc_counter_decl *d;
		double mult;
		uint64_t mbits;
		uint8_t cflags;

		if (chart >= b->ncharts) {
			free(nlocal);
			return apc_err_set(&r->err, APC_EDATA, b->name, (int64_t)(series_off + 31ull * i),
					   "custom series %u names chart %u of %u", i, chart, b->ncharts);
		}
		cp = h + charts_off + 7ull * chart;
		cname = barman_str(b, barman_u32(b, cp));
		sname = barman_str(b, barman_u32(b, p + 4));
		b->series[i].chart = chart;
		b->series[i].local = nlocal[chart]++;
		b->series[i].sampled = p[30] & 1;
		barman_ident(a, sizeof a, cname);
		barman_ident(s, sizeof s, sname);
		snprintf(type, sizeof type, "Barman_%s_%s", a, s);
		if (apc_model_find_counter(r->model, type))
			snprintf(type, sizeof type, "Barman_%s_%s_%u", a, s, i);
		d = apc_model_add_counter(r->model, type);
		if (!d)
			goto nomem;
		b->series[i].counter = d->id;
		if (apc_strset(&d->title, cname ? cname : "Custom") < 0 ||
		    apc_strset(&d->name, sname ? sname : "Series") < 0 ||
		    apc_strset(&d->category, cname ? cname : "Custom") < 0 ||
		    apc_strset(&d->units, barman_str(b, barman_u32(b, p + 8))) < 0 ||
		    apc_strset(&d->description, barman_str(b, barman_u32(b, p + 12))) < 0)
			goto nomem;
		d->color = barman_u32(b, p + 16);
		d->has_color = 1;
		mbits = barman_u64(b, p + 20);
		memcpy(&mult, &mbits, 8);
		d->multiplier = mult;
		d->cls = p[28] == 2 ? APC_CLASS_INCIDENT : p[28] == 3 ? APC_CLASS_ABSOLUTE : APC_CLASS_DELTA;
		switch (p[29]) {
		case 1: d->display = APC_DISPLAY_ACCUMULATE; break;
		case 2: d->display = APC_DISPLAY_AVERAGE; break;
		case 3: d->display = APC_DISPLAY_HERTZ; break;
		case 4: d->display = APC_DISPLAY_MAXIMUM; break;
		case 5: d->display = APC_DISPLAY_MINIMUM; break;
		default: d->display = APC_DISPLAY_DEFAULT; break;
		}
		d->series = cp[4] == 1 ? APC_SERIES_STACKED : cp[4] == 2 ? APC_SERIES_OVERLAY
			  : cp[4] == 3 ? APC_SERIES_LOG10 : APC_SERIES_DEFAULT;
		d->render = cp[5] == 1 ? APC_RENDER_FILLED : cp[5] == 2 ? APC_RENDER_LINE
			  : cp[5] == 3 ? APC_RENDER_BAR : APC_RENDER_DEFAULT;
		cflags = cp[6];
		d->average_selection = cflags & 1 ? APC_YES : APC_NO;
		d->average_cores = cflags & 2 ? APC_YES : APC_NO;
		d->percentage = cflags & 4 ? APC_YES : APC_NO;
		d->per_cpu = cflags & 8 ? APC_YES : APC_NO;
	}
	free(nlocal);
	return APC_OK;
nomem:
	free(nlocal);
	return barman_nomem(r, b);
}

/*
 * Header offsets, computed the way the target's compiler lays the
 * struct out: everything packed except the string table and the u32
 * counts (4-aligned) and the datastore parameters (8-aligned, 40 bytes
 * on 32- and 64-bit targets alike).
 */
struct barman_layout {
	uint64_t pmu, pmu_size, ntask, task, nmmap, mmap, mmap_size, ncharts, charts, series, ds, size;
};

static void barman_layout(const struct barman *b, uint32_t ncharts, struct barman_layout *l)
{
	uint64_t off = BM_FIXED_LEN + barman_align(4ull + b->max_str, 4);

	memset(l, 0, sizeof *l);
	l->pmu = off;
	l->pmu_size = (b->ptr == 8 ? 28u : 24u) + 4ull * b->max_pmu;
	off += l->pmu_size * b->max_cores;
	if (b->max_tasks > 0) {
		l->ntask = off = barman_align(off, 4);
		l->task = off += 4;
		off += 16ull * b->max_tasks;
	}
	if (b->max_mmaps > 0) {
		l->nmmap = off = barman_align(off, 4);
		l->mmap = off += 4;
		l->mmap_size = (b->max_tasks > 0 ? 12u : 0u) + 3u * (unsigned)b->ptr + 4u;
		off += l->mmap_size * b->max_mmaps;
	}
	if (b->ncustom > 0) {
		l->ncharts = off = barman_align(off, 4);
		l->charts = off += 4;
		l->series = off += 7ull * ncharts;
		off += 31ull * b->ncustom;
	}
	l->ds = barman_align(off, 8);
	l->size = l->ds + 40;
}

static int barman_parse_header(struct apc_reader *r, struct barman *b, const uint8_t *h,
			       uint32_t hl, uint64_t junk)
{
	struct barman_layout l;
	struct apc_meta *m = &r->model->meta;
	int64_t base = (int64_t)junk;
	uint32_t ncharts = 0;

	b->t_base = barman_u64(b, h + 60);
	b->t_mult = barman_u64(b, h + 68);
	b->t_div = barman_u64(b, h + 76);
	if (b->t_div == 0 || b->t_mult == 0)
		return apc_err_set(&r->err, APC_EDATA, b->name, base + 68,
				   "clock multiplier and divisor must not be zero");
	/* Same quotients with the fraction reduced, and more of them fit
	 * the 64-bit paths in barman_ns(). */
	{
		uint64_t x = b->t_mult, y = b->t_div;
		while (y) {
			uint64_t z = x % y;
			x = y;
			y = z;
		}
		b->t_mult /= x;
		b->t_div /= x;
	}
	apc_scale_prep(&b->to_ns, b->t_mult, b->t_div);
	b->strtab_len = barman_u32(b, h + 92);
	if (b->strtab_len > b->max_str)
		return apc_err_set(&r->err, APC_EDATA, b->name, base + 92,
				   "string table length %u exceeds its size %u", b->strtab_len, b->max_str);
	b->strtab = malloc((size_t)b->strtab_len + 1);
	if (!b->strtab)
		return barman_nomem(r, b);
	memcpy(b->strtab, h + 96, b->strtab_len);
	b->strtab[b->strtab_len] = 0;

	barman_layout(b, 0, &l);
	if (b->ncustom > 0) {
		if (l.ncharts + 4 > hl)
			return apc_err_set(&r->err, APC_EDATA, b->name, base + 12,
					   "header length %u is too short for the configuration", hl);
		ncharts = barman_u32(b, h + l.ncharts);
		if (ncharts == 0 || ncharts > b->ncustom)
			return apc_err_set(&r->err, APC_EDATA, b->name, base + (int64_t)l.ncharts,
					   "%u custom charts for %u series", ncharts, b->ncustom);
		barman_layout(b, ncharts, &l);
	}
	if (l.size != hl)
		return apc_err_set(&r->err, APC_EDATA, b->name, base + 12,
				   "header length %u does not match the layout of its configuration (%llu bytes)",
				   hl, (unsigned long long)l.size);
	b->ncharts = ncharts;

	/* metadata */
	if (apc_model_set_cores(r->model, b->max_cores) < 0)
		return barman_nomem(r, b);
	if (apc_strset(&m->target_name, barman_str(b, barman_u32(b, h + 20))) < 0 ||
	    apc_strset(&m->source_format, "barman") < 0)
		return barman_nomem(r, b);
	m->sample_rate = barman_u32(b, h + 32);
	m->wall_clock_ns = barman_u64(b, h + 84);
	m->monotonic_delta = 0;
	m->protocol = b->version;
	b->cores = calloc(b->max_cores, sizeof *b->cores);
	if (!b->cores)
		return barman_nomem(r, b);
	for (uint32_t c = 0; c < b->max_cores; c++) {
		const uint8_t *p = h + l.pmu + l.pmu_size * c;
		const uint8_t *tp = p + (b->ptr == 8 ? 28 : 24);
		struct barman_core *bc = &b->cores[c];
		const struct barman_part *part;

		bc->midr = barman_u32(b, p + 8);
		bc->ncnt = barman_u32(b, p + (b->ptr == 8 ? 24 : 20));
		if (bc->ncnt > b->max_pmu)
			return apc_err_set(&r->err, APC_EDATA, b->name, base + (int64_t)(p - h),
					   "core %u has %u counters, more than the maximum %u", c, bc->ncnt,
					   b->max_pmu);
		m->cores[c].cpuid = ((bc->midr >> 12) & 0xff000) | ((bc->midr >> 4) & 0xfff);
		m->cores[c].cluster = bc->midr ? (int)barman_u32(b, p + (b->ptr == 8 ? 20 : 16)) : -1;
		part = barman_part_find(bc->midr);
		if (part && apc_strset(&m->cores[c].name, part->name) < 0)
			return barman_nomem(r, b);
		if (bc->ncnt == 0)
			continue;
		bc->types = malloc(bc->ncnt * sizeof *bc->types);
		bc->ids = malloc(bc->ncnt * sizeof *bc->ids);
		bc->last = malloc(bc->ncnt * sizeof *bc->last);
		if (!bc->types || !bc->ids || !bc->last)
			return barman_nomem(r, b);
		for (uint32_t k = 0; k < bc->ncnt; k++) {
			bc->types[k] = barman_u32(b, tp + 4ull * k);
			bc->last[k] = BM_INVALID_READING;
		}
		if (barman_declare_pmu(r, b, c) < 0)
			return r->err.status;
		if (bc->ncnt > b->maxev)
			b->maxev = bc->ncnt;
	}

	if (b->max_tasks > 0) {
		uint32_t n = barman_u32(b, h + l.ntask);
		struct apc_counter_decl *d;

		if (n > b->max_tasks)
			return apc_err_set(&r->err, APC_EDATA, b->name, base + (int64_t)l.ntask,
					   "%u task entries, more than the maximum %u", n, b->max_tasks);
		b->tasks = calloc(n ? n : 1, sizeof *b->tasks);
		if (!b->tasks)
			return barman_nomem(r, b);
		for (uint32_t i = 0; i < n; i++) {
			const uint8_t *p = h + l.task + 16ull * i;
			b->tasks[i].ts = barman_u64(b, p);
			b->tasks[i].id = barman_u32(b, p + 8);
			b->tasks[i].name = barman_str(b, barman_u32(b, p + 12));
			/* Annotation connections take tids past every task's,
			 * so Streamline shows no task's name on them. */
			if (b->tasks[i].id < (uint32_t)INT32_MAX - APC_MAX_CORES &&
			    (int32_t)b->tasks[i].id >= b->ann_tid)
				b->ann_tid = (int32_t)b->tasks[i].id + 1;
		}
		b->ntasks = n;
		d = apc_model_add_counter(r->model, "Barman_task_activity");
		if (!d)
			return barman_nomem(r, b);
		b->act_counter = d->id;
		d->cls = APC_CLASS_ACTIVITY;
		d->per_cpu = APC_YES;
		d->cores = b->max_cores;
		if (apc_strset(&d->title, "Tasks") < 0 || apc_strset(&d->name, "Task") < 0 ||
		    apc_strset(&d->category, "Barman") < 0 ||
		    apc_strset(&d->description, "Task switches recorded by barman") < 0)
			return barman_nomem(r, b);
		d->activities = calloc(1, sizeof *d->activities);
		if (!d->activities || apc_strset(&d->activities[0].name, "Task") < 0)
			return barman_nomem(r, b);
		d->nactivities = 1;
	}
	if (b->max_mmaps > 0) {
		uint32_t n = barman_u32(b, h + l.nmmap);
		uint64_t f = b->max_tasks > 0 ? 12 : 0;

		if (n > b->max_mmaps)
			return apc_err_set(&r->err, APC_EDATA, b->name, base + (int64_t)l.nmmap,
					   "%u mmap entries, more than the maximum %u", n, b->max_mmaps);
		b->maps = calloc(n ? n : 1, sizeof *b->maps);
		if (!b->maps)
			return barman_nomem(r, b);
		for (uint32_t i = 0; i < n; i++) {
			const uint8_t *p = h + l.mmap + l.mmap_size * i;
			struct barman_map *mp = &b->maps[i];
			mp->ts = f ? barman_u64(b, p) : 0;
			mp->task = f ? barman_u32(b, p + 8) : 0;
			mp->base = barman_uptr(b, p + f);
			mp->len = barman_uptr(b, p + f + (uint64_t)b->ptr);
			mp->off = barman_uptr(b, p + f + 2ull * (uint64_t)b->ptr);
			mp->image = barman_str(b, barman_u32(b, p + f + 3ull * (uint64_t)b->ptr));
			if (!mp->image)
				mp->image = "";
			/* one cookie per image name */
			mp->cookie = 0;
			for (uint32_t j = 0; j < i; j++)
				if (strcmp(b->maps[j].image, mp->image) == 0)
					mp->cookie = b->maps[j].cookie;
			/* APC reserves cookies 0 (kernel), 1 (end of a call
			 * path) and -1 (invalid): images count from 2. */
			if (!mp->cookie)
				mp->cookie = 2 + b->ncookies++;
		}
		b->nmaps = n;
	}
	if (b->ncustom > 0) {
		b->series = calloc(b->ncustom, sizeof *b->series);
		if (!b->series)
			return barman_nomem(r, b);
		if (barman_declare_custom(r, b, h, l.charts, l.series) < 0)
			return r->err.status;
	}

	b->maxev += b->ncustom + 1; /* counters, sampled series, the PC sample */
	if (b->maxev < 5)
		b->maxev = 5; /* an annotation: its connection's name and link, a group
			       * and a channel name, its string */

	/* datastore */
	{
		const uint8_t *p = h + l.ds;
		uint64_t buflen = barman_u64(b, p), wr = barman_u64(b, p + 8), rd = barman_u64(b, p + 16);
		uint64_t total = barman_u64(b, p + 24);
		int64_t dso = base + (int64_t)l.ds;

		b->data_off = junk + barman_align(hl, 8);
		b->buflen = buflen;
		/* Every datastore offset becomes data_off + offset, a file
		 * position: a length that carries that past the largest one
		 * is no buffer of a file, and the sum must not wrap into the
		 * header (whose bytes would then be read as records). */
		if (buflen > (uint64_t)INT64_MAX - b->data_off)
			return apc_err_set(&r->err, APC_EDATA, b->name, dso,
					   "%s data store offsets out of range (read %llu, write %llu, length %llu past the largest file offset)",
					   b->store == BM_LINEAR ? "linear" : "circular", (unsigned long long)rd,
					   (unsigned long long)wr, (unsigned long long)buflen);
		if (b->store == BM_LINEAR) {
			if (rd > wr || wr > buflen)
				return apc_err_set(&r->err, APC_EDATA, b->name, dso,
						   "linear data store offsets out of range (read %llu, write %llu, length %llu)",
						   (unsigned long long)rd, (unsigned long long)wr,
						   (unsigned long long)buflen);
			b->seg[0] = (struct barman_seg){b->data_off + rd, wr - rd, rd, 0};
			b->nseg = wr > rd;
			/* A linear store stops at its end, so the bytes it
			 * took, total_written, are the bytes up to the write
			 * offset (from the read offset, which should be 0).
			 * A header that says otherwise has one of the two
			 * wrong, and either way records may be lost past the
			 * write offset: the records up to it are converted,
			 * then the run ends with this.  A total of 0 is a
			 * writer that does not keep it. */
			if (total != 0 && total != wr && total != wr - rd)
				apc_err_set(&b->hdr, APC_EDATA, b->name, dso + 8,
					    "linear data store write offset %llu, but total_written says %llu bytes were written: %s",
					    (unsigned long long)wr, (unsigned long long)total,
					    total > wr ? "records past the write offset are not read"
						       : "the header disagrees with itself (the records up to the write offset are read)");
		} else {
			uint64_t start, len, first;

			if (buflen == 0)
				return apc_err_set(&r->err, APC_EDATA, b->name, dso, "circular data store of length 0");
			if (wr >= rd && wr - rd <= buflen) {
				/* absolute offsets (barman's own), or modular ones not wrapped */
				len = wr - rd;
				if (len == 0 && rd < buflen && wr < buflen && total >= buflen && total > 0)
					len = buflen; /* modular offsets, exactly full */
			} else if (rd < buflen && wr < buflen) {
				len = buflen - rd + wr; /* modular offsets, wrapped */
			} else {
				return apc_err_set(&r->err, APC_EDATA, b->name, dso,
						   "circular data store offsets out of range (read %llu, write %llu, length %llu)",
						   (unsigned long long)rd, (unsigned long long)wr,
						   (unsigned long long)buflen);
			}
			start = rd % buflen;
			first = buflen - start < len ? buflen - start : len;
			b->nseg = 0;
			if (first > 0)
				b->seg[b->nseg++] = (struct barman_seg){b->data_off + start, first, rd, 0};
			if (len > first) {
				if (len - first > BM_STASH_MAX)
					return apc_err_set(&r->err, APC_ENOMEM, b->name, dso,
							   "circular buffer too large to reorder (%llu bytes)",
							   (unsigned long long)(len - first));
				b->seg[b->nseg++] = (struct barman_seg){b->data_off, len - first, rd + first, 1};
			}
		}
		{
			int64_t size = apc_stream_size(b->s);
			uint64_t end = b->data_off + buflen;
			if (size >= 0 && (uint64_t)size > end)
				apc_model_unmapped(r->model, "trailing bytes after the barman data area",
						   (uint64_t)size - end);
		}
	}
	return APC_OK;
}

/* ---- open ------------------------------------------------------------- */

static int barman_bid(struct apc_input *in)
{
	struct apc_stream *s = apc_input_stream(in);
	struct apc_err err;
	const uint8_t *p;
	ssize_t n;
	int ptr, big;

	if (!s)
		return 0;
	apc_err_clear(&err);
	n = apc_stream_peek(s, &p, APC_PEEK_MAX, &err);
	for (ssize_t i = 0; i + 16 <= n; i++) {
		/* every magic has 'B' at 0 or 'N' at 2: skip the rest cheaply */
		if ((p[i] == 'B' || p[i + 2] == 'N') && barman_magic(p + i, &ptr, &big)) {
			uint32_t v;
			memcpy(&v, p + i + 8, 4);
			if (big != barman_host_big())
				v = __builtin_bswap32(v);
			if (v >= 1 && v <= 3)
				return i == 0 ? 100 : 80;
		}
	}
	return 0;
}

/*
 * barman_open() : find the magic (skipping leading junk), read the whole
 * header, declare counters and plan the data pieces.
 */
static int barman_open(struct apc_reader *r)
{
	struct barman *b = calloc(1, sizeof *b);
	uint64_t junk = 0;
	const uint8_t *h;
	uint32_t hl;
	int big = 0;
	ssize_t n;

	if (!b)
		return apc_err_set(&r->err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
	r->priv = b;
	apc_err_clear(&b->cut);
	apc_err_clear(&b->hdr);
	b->fast = (apc_cpu_features() & APC_CPU_FAST) != 0;
	b->ann_tid = 1;
	b->s = apc_input_stream(r->inputs[0]);
	if (!b->s)
		return apc_err_set(&r->err, APC_EIO, apc_input_path(r->inputs[0]), APC_NO_OFFSET,
				   "barman input must be a single file");
	b->name = apc_stream_name(b->s);

	/* scan for the magic */
	for (;;) {
		n = barman_want(r, b, BM_WINDOW);
		if (n < 0)
			return r->err.status;
		for (ssize_t i = 0; i + BM_MAGIC_LEN <= n; i++) {
			const uint8_t *q = b->win + b->win_pos + i;
			if ((q[0] == 'B' || q[2] == 'N') && barman_magic(q, &b->ptr, &big)) {
				b->win_pos += (size_t)i;
				junk = b->win_abs + b->win_pos;
				goto found;
			}
		}
		if (b->eof || b->win_abs + b->win_len > BM_SCAN_MAX)
			return apc_err_set(&r->err, APC_EDATA, b->name, 0, "no barman magic (BARMAN32 or BARMAN64) found");
		b->win_pos = b->win_len - (BM_MAGIC_LEN - 1);
	}
found:
	if (junk)
		apc_model_unmapped(r->model, "leading bytes before the barman magic", junk);
	b->swap = big != barman_host_big();
	n = barman_want(r, b, BM_FIXED_LEN + 4);
	if (n < 0)
		return r->err.status;
	if (n < BM_FIXED_LEN + 4)
		return apc_err_set(&r->err, APC_EDATA, b->name, (int64_t)junk,
				   "file ends inside the barman header (%zd bytes)", n);
	h = b->win + b->win_pos;
	b->version = barman_u32(b, h + 8);
	hl = barman_u32(b, h + 12);
	b->store = barman_u32(b, h + 16);
	b->max_cores = barman_u32(b, h + 36);
	b->max_tasks = barman_u32(b, h + 40);
	b->max_mmaps = barman_u32(b, h + 44);
	b->max_pmu = barman_u32(b, h + 48);
	b->max_str = barman_u32(b, h + 52);
	b->ncustom = barman_u32(b, h + 56);
	if (b->version < 1 || b->version > 3)
		return apc_err_set(&r->err, APC_EDATA, b->name, (int64_t)junk + 8,
				   "unsupported barman protocol version %u", b->version);
	if (b->store != BM_LINEAR && b->store != BM_CIRCULAR)
		return apc_err_set(&r->err, APC_EDATA, b->name, (int64_t)junk + 16,
				   "unknown data store type %u", b->store);
	if (b->max_cores == 0 || b->max_cores > APC_MAX_CORES || b->max_pmu > 256 ||
	    b->max_str > (16u << 20) || b->max_tasks > (1u << 20) || b->max_mmaps > (1u << 20) ||
	    b->ncustom > (1u << 16))
		return apc_err_set(&r->err, APC_EDATA, b->name, (int64_t)junk + 36,
				   "implausible configuration (cores %u, counters %u, string table %u, tasks %u, mmaps %u, custom %u)",
				   b->max_cores, b->max_pmu, b->max_str, b->max_tasks, b->max_mmaps, b->ncustom);
	if (hl < BM_FIXED_LEN + 4 || hl > BM_HEADER_MAX)
		return apc_err_set(&r->err, APC_EDATA, b->name, (int64_t)junk + 12,
				   "implausible header length %u", hl);
	{
		/* the layout bounds the header before we read (and hold) it */
		struct barman_layout l;
		barman_layout(b, 0, &l);
		if (b->ncustom == 0 ? l.size != hl : hl < l.size || hl > l.size + 7ull * b->ncustom + 8)
			return apc_err_set(&r->err, APC_EDATA, b->name, (int64_t)junk + 12,
					   "header length %u does not match the layout of its configuration (%llu bytes)",
					   hl, (unsigned long long)l.size);
	}
	n = barman_want(r, b, hl);
	if (n < 0)
		return r->err.status;
	if ((uint64_t)n < hl)
		return apc_err_set(&r->err, APC_EDATA, b->name, (int64_t)junk,
				   "file ends inside the barman header (%zd of %u bytes)", n, hl);
	if (barman_parse_header(r, b, b->win + b->win_pos, hl, junk) < 0)
		return r->err.status;
	b->win_pos += hl;
	for (int i = 0; i < b->nseg; i++)
		r->progress_total += b->seg[i].len;
	return APC_OK;
}

/* ---- records ---------------------------------------------------------- */

/*
 * barman_fit() : a block longer than its record needs.  The agent
 * rounds a block up to a whole number of length words, so less than
 * one word of slack is its padding; more is bytes no field covers,
 * such as records swallowed by a length word gone wrong, and is
 * counted rather than passed over in silence.
 */
static void barman_fit(struct apc_reader *r, const struct barman *b, uint64_t need, uint64_t len)
{
	if (len - need >= (uint64_t)b->ptr)
		apc_model_unmapped(r->model, "barman record bytes past the record's content (not read)", len - need);
}

static int barman_short(struct apc_reader *r, struct barman *b, uint64_t off, uint32_t type,
			uint64_t need, uint64_t have)
{
	r->damaged = 1;
	return apc_err_set(&r->err, APC_EDATA, b->name, (int64_t)off,
			   "record type %u needs %llu bytes, its block has %llu", type,
			   (unsigned long long)need, (unsigned long long)have);
}

/*
 * The cookie of a task's process image, its Link's and its samples' Exec
 * Cookie: the image last mapped for the task, else the first global one
 * (task 0), else -1.  Mappings' times do not matter: a Link has none.
 */
static int32_t barman_task_cookie(const struct barman *b, uint32_t task)
{
	int32_t own = -1, global = -1;

	for (uint32_t j = 0; j < b->nmaps; j++) {
		if (task && b->maps[j].task == task)
			own = b->maps[j].cookie;
		else if (b->maps[j].task == 0 && global < 0)
			global = b->maps[j].cookie;
	}
	return own >= 0 ? own : global;
}

static int32_t barman_pid(const struct barman *b, uint32_t task)
{
	return b->max_tasks > 0 ? (int32_t)task : APC_NO_PID;
}

static int barman_counter(struct apc_batch *bt, uint64_t ts, int32_t core, uint32_t id,
			  int32_t pid, int64_t v)
{
	struct apc_event *e = apc_batch_add(bt, APC_EV_COUNTER, ts, core);

	if (!e)
		return -1;
	e->u.counter.counter = id;
	e->u.counter.pid = pid;
	e->u.counter.value = v;
	return 0;
}

/*
 * A sample: PMU readings are cumulative counter values; APC delta
 * counters want increments, so each reading becomes the difference from
 * the previous reading of that core's slot (the first reading of a
 * slot gives 0: it is the baseline).  A reading the driver marked
 * invalid (the counter was not read) is no value at all: it gives no
 * event, and the slot's next valid reading is diffed against the last
 * valid one, so the increments still add up.
 */
static int barman_sample(struct apc_reader *r, struct barman *b, const uint8_t *p, uint64_t len,
			 uint64_t off, uint32_t type, uint32_t core, uint64_t t, uint64_t ts,
			 struct apc_batch *bt)
{
	uint64_t q = 16, need;
	uint32_t task = 0, ncust = 0, pcsz = type == BM_REC_SAMPLE_PC ? (uint32_t)b->ptr : 0;
	struct barman_core *c;
	uint64_t pc = 0;
	int invalid = 0;

	if (core >= b->max_cores) {
		r->damaged = 1;
		return apc_err_set(&r->err, APC_EDATA, b->name, (int64_t)off,
				   "sample for core %u of %u", core, b->max_cores);
	}
	c = &b->cores[core];
	need = 16 + (b->max_tasks ? 4 : 0) + (b->ncustom ? 4 : 0);
	if (len < need)
		return barman_short(r, b, off, type, need, len);
	if (b->max_tasks)
		task = barman_u32(b, p + q), q += 4;
	if (b->ncustom)
		ncust = barman_u32(b, p + q), q += 4;
	need = q + pcsz + 8ull * c->ncnt + 12ull * ncust;
	if (len < need)
		return barman_short(r, b, off, type, need, len);
	barman_fit(r, b, need, len);
	if (pcsz)
		pc = barman_uptr(b, p + q), q += pcsz;
	/* A row with an invalid reading goes value by value (below), which
	 * leaves that slot out; the row loop notices one as it goes and
	 * undoes its updates of last[] (all-ones reads the same in either
	 * byte order). */
	if (b->fast && c->ncnt > 1) {
		/* One event for the whole row: the writer packs it as one
		 * Block Counter group (same bytes as one event per value). */
		int64_t *vals = apc_batch_alloc(bt, c->ncnt * sizeof *vals);

		if (!vals)
			return barman_nomem(r, b);
		/* Locals: a store to the byte-sized flag would make the
		 * compiler reload every field of c and b per value. */
		const uint32_t n = c->ncnt;
		const uint8_t *src = p + q;
		uint64_t *last = c->last, any = 0;
		if (c->primed && !b->swap) {
			for (uint32_t k = 0; k < n; k++) {
				uint64_t v;
				memcpy(&v, src + 8 * k, 8);
				any |= v == BM_INVALID_READING;
				vals[k] = (int64_t)(v - last[k]);
				last[k] = v;
			}
			if (any) /* put last[] back: old = v - (v - old) */
				for (uint32_t k = 0; k < n; k++)
					last[k] -= (uint64_t)vals[k];
		} else {
			for (uint32_t k = 0; k < n; k++)
				any |= barman_u64(b, src + 8 * k) == BM_INVALID_READING;
			for (uint32_t k = 0; !any && k < n; k++) {
				uint64_t v = barman_u64(b, src + 8 * k);
				vals[k] = last[k] != BM_INVALID_READING ? (int64_t)(v - last[k]) : 0;
				last[k] = v;
			}
			if (!any)
				c->primed = 1; /* every slot holds a valid reading */
		}
		invalid = any != 0;
		if (!invalid) {
			struct apc_event *e = apc_batch_add(bt, APC_EV_COUNTERS, ts, (int32_t)core);
			if (!e)
				return barman_nomem(r, b);
			q += 8ull * n;
			e->u.counters.pid = barman_pid(b, task);
			e->u.counters.n = c->ncnt;
			e->u.counters.ids = c->ids;
			e->u.counters.values = vals;
		}
	}
	if (invalid || !(b->fast && c->ncnt > 1)) {
		int primed = 1;
		for (uint32_t k = 0; k < c->ncnt; k++, q += 8) {
			uint64_t v = barman_u64(b, p + q);
			int64_t d;
			if (v == BM_INVALID_READING) {
				apc_model_unmapped(r->model, "barman counter readings marked invalid (not read)", 1);
				primed &= c->last[k] != BM_INVALID_READING;
				continue;
			}
			d = c->last[k] != BM_INVALID_READING ? (int64_t)(v - c->last[k]) : 0;
			c->last[k] = v;
			if (barman_counter(bt, ts, (int32_t)core, c->ids[k], barman_pid(b, task), d) < 0)
				return barman_nomem(r, b);
		}
		c->primed = primed;
	}
	for (uint32_t k = 0; k < ncust; k++, q += 12) {
		uint32_t id = barman_u32(b, p + q);
		if (id >= b->ncustom) {
			apc_model_unmapped(r->model, "barman sampled custom values with a bad series index", 1);
			continue;
		}
		if (barman_counter(bt, ts, (int32_t)core, b->series[id].counter, barman_pid(b, task),
				   (int64_t)barman_u64(b, p + q + 4)) < 0)
			return barman_nomem(r, b);
	}
	if (pcsz) {
		struct apc_event *e = apc_batch_add(bt, APC_EV_SAMPLE, ts, (int32_t)core);
		struct apc_pc *pcs = apc_batch_alloc(bt, sizeof *pcs);
		const struct barman_map *hit = NULL;
		int best = -1, later = 0;

		if (!e || !pcs)
			return barman_nomem(r, b);
		/* A mapping holds from when it was inserted.  Of those that
		 * cover the PC by the sample's time: the task's own, else a
		 * global one (task 0), else another task's (real captures
		 * sample tasks in images mapped for others); of equals, the
		 * one inserted last, the image loaded there most recently. */
		for (uint32_t i = 0; i < b->nmaps; i++) {
			const struct barman_map *mp = &b->maps[i];
			int score = mp->task == task ? 2 : mp->task == 0 ? 1 : 0;
			if (pc < mp->base || pc - mp->base >= mp->len)
				continue;
			if (mp->ts > t) {
				later = 1;
				continue;
			}
			if (score > best || (score == best && mp->ts >= hit->ts)) {
				hit = mp;
				best = score;
			}
		}
		if (!hit && later)
			apc_model_unmapped(r->model, "barman PC samples taken before their image was mapped (no image)", 1);
		pcs->cookie = hit ? hit->cookie : -1;
		pcs->offset = hit ? (int64_t)(pc - hit->base + hit->off) : (int64_t)pc;
		e->u.sample.pid = e->u.sample.tid = (int32_t)task;
		/* Exec Cookie: the process's image, as its Link says; the PC's
		 * own image (a library, another task's) is the entry's. */
		if (!b->have_exec || b->exec_task != task) {
			b->exec_task = task;
			b->exec_cookie = barman_task_cookie(b, task);
			b->have_exec = 1;
		}
		e->u.sample.cookie = b->exec_cookie;
		e->u.sample.depth = 1;
		e->u.sample.pcs = pcs;
	}
	return APC_OK;
}

/* Custom counter value: the id is the series index within its chart. */
static int barman_custom(struct apc_reader *r, struct barman *b, const uint8_t *p, uint64_t len,
			 uint64_t off, uint32_t core, uint64_t ts, struct apc_batch *bt)
{
	uint64_t q = 16, need = 16 + (b->max_tasks ? 4 : 0) + 12;
	uint32_t task = 0, id, hit = UINT32_MAX, nhit = 0;

	if (len < need)
		return barman_short(r, b, off, BM_REC_CUSTOM, need, len);
	barman_fit(r, b, need, len);
	if (b->ncustom == 0) {
		apc_model_unmapped(r->model, "barman custom counter records without custom series", 1);
		return APC_OK;
	}
	if (b->max_tasks)
		task = barman_u32(b, p + q), q += 4;
	id = barman_u32(b, p + q);
	for (uint32_t i = 0; i < b->ncustom; i++) {
		if (!b->series[i].sampled && b->series[i].local == id) {
			if (!nhit)
				hit = i;
			nhit++;
		}
	}
	if (nhit > 1)
		apc_model_unmapped(r->model, "barman custom counter records with an ambiguous series index (first chart used)", 1);
	if (!nhit && id < b->ncustom)
		hit = id; /* older writers: a global index */
	if (hit == UINT32_MAX) {
		apc_model_unmapped(r->model, "barman custom counter records with a bad series index", 1);
		return APC_OK;
	}
	if (core >= b->max_cores) {
		/* written as any other core's it would be core 0's value */
		apc_model_unmapped(r->model, "barman custom counter values on a core past the header's core count (dropped)", 1);
		return APC_OK;
	}
	if (barman_counter(bt, ts, (int32_t)core, b->series[hit].counter, barman_pid(b, task),
			   (int64_t)barman_u64(b, p + q + 4)) < 0)
		return barman_nomem(r, b);
	return APC_OK;
}

/*
 * barman_color() : a barman annotation colour (not 0) in the model's
 * form.  Barman keeps the tag byte on top: BM_ANNOTATE_COLOR_RGB() in
 * gator's barman gives 0x1bRRGGBB (ESC, then RGB), as real dumps show,
 * and the spec documents the same RGB with a 0 tag.  The model holds the
 * wire bytes R, G, B, tag as 0xRRGGBBTT, which is what gator's own
 * clients send, so the tag byte moves from the top to the bottom, and
 * the spec's 0 becomes ESC (plain RGB).  Barman defines no other tag:
 * one is kept as it is and counted.
 */
static uint32_t barman_color(struct apc_reader *r, uint32_t c)
{
	uint32_t tag = c >> 24;

	if (tag == 0)
		tag = 0x1b;
	else if (tag != 0x1b)
		apc_model_unmapped(r->model, "barman annotation colours with an unknown tag byte (kept)", 1);
	return c << 8 | tag;
}

/* The value stored for k; 0 when absent (no value stored is 0). */
static uint32_t bm64_get(const struct apc_map64 *m, uint64_t k)
{
	uint64_t v;

	return apc_map64_find(m, k, &v) ? (uint32_t)v : 0;
}

static uint64_t barman_name_key(int kind, uint32_t id)
{
	return (uint64_t)kind << 32 | id;
}

static uint64_t barman_decl_key(uint32_t core, int kind, uint32_t id)
{
	return (uint64_t)core << 33 | barman_name_key(kind, id);
}

/*
 * A channel's (kind BM_NAME_CHANNEL, in its group) or a group's name,
 * as a record on `core` declares it: kept for the other cores'
 * connections, and declared on this core's.  0, or -1 on allocation
 * failure.
 */
static int barman_name_set(struct barman *b, uint32_t core, int kind, uint32_t id, uint32_t group,
			   const uint8_t *text, size_t len)
{
	uint32_t at = bm64_get(&b->name_at, barman_name_key(kind, id));
	struct barman_name *n;

	if (!at) {
		struct barman_name *nn = b->names;
		if (b->nnames == b->names_cap) {
			size_t cap = b->names_cap ? b->names_cap * 2 : 16;
			if (!(nn = realloc(b->names, cap * sizeof *nn)))
				return -1;
			b->names = nn;
			b->names_cap = cap;
		}
		if (b->nnames >= UINT32_MAX - 1 ||
		    apc_map64_put(&b->name_at, barman_name_key(kind, id), (uint32_t)b->nnames + 1) < 0)
			return -1;
		n = &b->names[b->nnames++];
		memset(n, 0, sizeof *n);
		n->id = id;
	} else {
		n = &b->names[at - 1];
	}
	if (!n->text || n->len != len || n->group != group || memcmp(n->text, text, len) != 0) {
		/* renamed: in place when it fits (a channel renamed per
		 * record must not cost an allocation each time) */
		if (!n->text || len + 1 > n->cap) {
			size_t cap = len + 1 > 32 ? len + 1 : 32;
			char *t = malloc(cap);
			if (!t)
				return -1;
			free(n->text);
			n->text = t;
			n->cap = cap;
		}
		if (len)
			memcpy(n->text, text, len);
		n->text[len] = '\0';
		n->len = len;
		n->group = group;
		n->gen = n->gen == UINT32_MAX ? 1 : n->gen + 1;
	}
	return apc_map64_put(&b->declared, barman_decl_key(core, kind, id), n->gen);
}

/*
 * Declare name (kind, id), names[at - 1] (none: at 0), on core's
 * connection `conn` at ts, unless its latest version is declared there
 * already.  APC_OK, or an error.
 */
static int barman_name_declare_at(struct apc_reader *r, struct barman *b, uint32_t core, int32_t conn,
				  int kind, uint32_t id, uint32_t at, uint64_t ts, struct apc_batch *bt)
{
	const struct barman_name *n;
	struct apc_ann *a;
	struct apc_event *e;

	if (!at)
		return APC_OK;
	n = &b->names[at - 1];
	if (bm64_get(&b->declared, barman_decl_key(core, kind, id)) == n->gen)
		return APC_OK;
	a = apc_batch_alloc(bt, sizeof *a);
	if (!a)
		return barman_nomem(r, b);
	APC_ZERO(a);
	a->tid = a->pid = conn;
	if (kind == BM_NAME_CHANNEL) {
		a->code = APC_ANN_CHANNEL;
		a->channel = (int32_t)id;
		a->group = (int32_t)n->group;
	} else {
		a->code = APC_ANN_GROUP;
		a->group = (int32_t)id;
	}
	a->text = apc_batch_strdup(bt, n->text, n->len);
	a->text_len = n->len;
	e = apc_batch_add(bt, APC_EV_ANNOTATION, ts, core < b->max_cores ? (int32_t)core : APC_NO_CORE);
	if (!e || !a->text || apc_map64_put(&b->declared, barman_decl_key(core, kind, id), n->gen) < 0)
		return barman_nomem(r, b);
	e->u.ann = a;
	return APC_OK;
}

/* Before a string on `channel` from core's connection: the channel's
 * group's name and its own, where that connection lacks them. */
static int barman_channel_use(struct apc_reader *r, struct barman *b, uint32_t core, int32_t conn,
			      uint32_t channel, uint64_t ts, struct apc_batch *bt)
{
	uint32_t at = bm64_get(&b->name_at, barman_name_key(BM_NAME_CHANNEL, channel)), group;
	int rc;

	if (!at)
		return APC_OK;
	group = b->names[at - 1].group;
	if ((rc = barman_name_declare_at(r, b, core, conn, BM_NAME_GROUP, group,
					 bm64_get(&b->name_at, barman_name_key(BM_NAME_GROUP, group)), ts,
					 bt)) < 0)
		return rc;
	return barman_name_declare_at(r, b, core, conn, BM_NAME_CHANNEL, channel, at, ts, bt);
}

/*
 * The annotation connection of a core, at its first annotation: a name
 * and a link like a task's, so that Streamline shows "Annotations (core
 * N)" where it would show an unnamed thread.  It is its own process
 * (pid = tid, as gator's annotation clients on a bare-metal target
 * have no process to join); no image is known for it.
 */
static int barman_name_conn(struct apc_reader *r, struct barman *b, uint32_t core, int32_t conn,
			    uint64_t ts, struct apc_batch *bt)
{
	char nm[40];
	int n = snprintf(nm, sizeof nm, "Annotations (core %u)", core);
	struct apc_event *e = apc_batch_add(bt, APC_EV_THREAD_NAME, ts, APC_NO_CORE);

	if (!e)
		return barman_nomem(r, b);
	e->u.name.id = conn;
	e->u.name.name = apc_batch_strdup(bt, nm, (size_t)n);
	if (!e->u.name.name)
		return barman_nomem(r, b);
	e = apc_batch_add(bt, APC_EV_LINK, ts, APC_NO_CORE);
	if (!e)
		return barman_nomem(r, b);
	e->u.link.cookie = -1;
	e->u.link.pid = e->u.link.tid = conn;
	b->ann_named[core / 64] |= 1ull << (core % 64);
	return APC_OK;
}

static int barman_annotation(struct apc_reader *r, struct barman *b, const uint8_t *p, uint64_t len,
			     uint64_t off, uint32_t core, uint64_t ts, struct apc_batch *bt)
{
	uint64_t q = 16 + (b->max_tasks ? 4 : 0), need = q + (uint64_t)b->ptr + 13, dlen;
	struct apc_ann *a;
	struct apc_event *e;
	uint32_t color;
	uint8_t atype;
	const uint8_t *data;
	/* one client connection per core, as the agent's records carry */
	int32_t conn = core < b->max_cores ? b->ann_tid + (int32_t)core : 0;

	if (len < need)
		return barman_short(r, b, off, BM_REC_ANNOTATION, need, len);
	dlen = barman_uptr(b, p + q);
	q += (uint64_t)b->ptr;
	if (dlen > len - need)
		return barman_short(r, b, off, BM_REC_ANNOTATION, need + dlen, len);
	barman_fit(r, b, need + dlen, len);
	atype = p[q + 12];
	color = barman_u32(b, p + q + 8);
	data = p + need;
	while (dlen > 0 && data[dlen - 1] == 0)
		dlen--; /* the agent stores the terminating NUL */
	a = apc_batch_alloc(bt, sizeof *a);
	if (!a)
		return barman_nomem(r, b);
	APC_ZERO(a);
	a->tid = a->pid = conn;
	a->channel = (int32_t)barman_u32(b, p + q);
	a->group = (int32_t)barman_u32(b, p + q + 4);
	switch (atype) {
	case 0: a->code = color ? APC_ANN_COLOR_STR : APC_ANN_STR; break;
	case 1: a->code = color ? APC_ANN_COLOR_MARKER : APC_ANN_MARKER; break;
	case 2: a->code = APC_ANN_CHANNEL; break;
	case 3: a->code = APC_ANN_GROUP; break;
	default:
		apc_model_unmapped(r->model, "barman annotations of unknown type", 1);
		return APC_OK;
	}
	/* 0 = cyclic colour (none); names of channels and groups have none */
	if (color && atype <= 1) {
		a->has_color = 1;
		a->color = barman_color(r, color);
	}
	a->text = apc_batch_strdup(bt, (const char *)data, (size_t)dlen);
	a->text_len = (size_t)dlen;
	if (core < b->max_cores && !(b->ann_named[core / 64] >> (core % 64) & 1) &&
	    barman_name_conn(r, b, core, conn, ts, bt) < 0)
		return r->err.status;
	/* Names are the target's, a connection's are its own: see
	 * struct barman_name. */
	if (atype >= 2) {
		if (barman_name_set(b, core, atype == 2 ? BM_NAME_CHANNEL : BM_NAME_GROUP,
				    atype == 2 ? (uint32_t)a->channel : (uint32_t)a->group,
				    (uint32_t)a->group, data, (size_t)dlen) < 0)
			return barman_nomem(r, b);
	} else if (atype == 0) {
		int rc = barman_channel_use(r, b, core, conn, (uint32_t)a->channel, ts, bt);
		if (rc < 0)
			return rc;
	}
	e = apc_batch_add(bt, APC_EV_ANNOTATION, ts, core < b->max_cores ? (int32_t)core : APC_NO_CORE);
	if (!e || !a->text)
		return barman_nomem(r, b);
	e->u.ann = a;
	return APC_OK;
}

/* Thread names, cookie names and links, once, before any record. */
static int barman_preamble(struct apc_reader *r, struct barman *b, struct apc_batch *bt)
{
	for (uint32_t i = 0; i < b->nmaps; i++) {
		int first = 1;
		for (uint32_t j = 0; j < i; j++)
			if (b->maps[j].cookie == b->maps[i].cookie)
				first = 0;
		if (first) {
			struct apc_event *e = apc_batch_add(bt, APC_EV_COOKIE_NAME, 0, APC_NO_CORE);
			if (!e)
				return barman_nomem(r, b);
			e->flags = APC_EVF_NO_TS;
			e->u.name.id = b->maps[i].cookie;
			e->u.name.name = apc_batch_strdup(bt, b->maps[i].image, strlen(b->maps[i].image));
		}
	}
	for (uint32_t i = 0; i < b->ntasks; i++) {
		struct apc_event *e = apc_batch_add(bt, APC_EV_THREAD_NAME, 0, APC_NO_CORE);
		const char *nm = b->tasks[i].name ? b->tasks[i].name : "";

		if (!e)
			return barman_nomem(r, b);
		e->flags = APC_EVF_NO_TS;
		e->u.name.id = (int32_t)b->tasks[i].id;
		e->u.name.name = apc_batch_strdup(bt, nm, strlen(nm));
		e = apc_batch_add(bt, APC_EV_LINK, 0, APC_NO_CORE);
		if (!e)
			return barman_nomem(r, b);
		e->flags = APC_EVF_NO_TS;
		e->u.link.cookie = barman_task_cookie(b, b->tasks[i].id);
		e->u.link.pid = e->u.link.tid = (int32_t)b->tasks[i].id;
	}
	return APC_OK;
}

/*
 * barman_record() : decode the record body p[0..len) whose length word
 * is at file offset off.
 */
static int barman_record(struct apc_reader *r, struct barman *b, const uint8_t *p, uint64_t len,
			 uint64_t off, struct apc_batch *bt)
{
	uint32_t type, core;
	uint64_t t, ts;
	struct apc_event *e;

	if (len < 16)
		return barman_short(r, b, off, len >= 4 ? barman_u32(b, p) : 0, 16, len);
	type = barman_u32(b, p);
	core = barman_u32(b, p + 4);
	t = barman_u64(b, p + 8);
	if (t == UINT64_MAX) {
		/* "use the last timestamp" (barman_decode() sets one
		 * before the first record with a time, see there) */
		t = b->last_ts;
		apc_model_unmapped(r->model, b->lead_start
				   ? "barman records stamped ~0 with no record time to take (placed at the capture start)"
				   : "barman records stamped ~0 (given the time of the record before them or, at the start, after them)",
				   1);
	} else {
		b->last_ts = t;
		b->have_ts = 1;
		b->lead_start = 0;
	}
	r->model->records_read++;
	if (type < BM_REC_SAMPLE || type > BM_REC_HALT) {
		char what[64];
		snprintf(what, sizeof what, "barman record type %u", type);
		apc_model_unmapped(r->model, what, 1);
		return APC_OK;
	}
	ts = barman_ns(r, b, t);
	b->rec_count[type]++;
	switch (type) {
	case BM_REC_SAMPLE:
	case BM_REC_SAMPLE_PC:
		/* a time before the base is placed at the capture start,
		 * where the mappings made at the start hold */
		return barman_sample(r, b, p, len, off, type, core, t < b->t_base ? b->t_base : t, ts, bt);
	case BM_REC_TASK_SWITCH:
		if (len < 21)
			return barman_short(r, b, off, type, 21, len);
		barman_fit(r, b, 21, len);
		if (b->max_tasks == 0) {
			apc_model_unmapped(r->model, "barman task switches without a task table", 1);
			return APC_OK;
		}
		if (core >= b->max_cores) {
			/* a core without a core field would be core 0 */
			apc_model_unmapped(r->model, "barman task switches on a core past the header's core count (dropped)", 1);
			return APC_OK;
		}
		e = apc_batch_add(bt, APC_EV_ACTIVITY, ts, (int32_t)core);
		if (!e)
			return barman_nomem(r, b);
		e->u.activity.counter = b->act_counter;
		/* Activity 1 is the counter's one activity ("Task"); 0 would
		 * mean idle. */
		e->u.activity.activity = 1;
		e->u.activity.tid = (int32_t)barman_u32(b, p + 16);
		/* reason 0: the previous task was preempted (contention);
		 * reason 1: it blocked on some event, which barman does not
		 * say is I/O, so "waiting on other". */
		e->u.activity.wait = p[20] == 0 ? APC_WAIT_CONTENTION : APC_WAIT_OTHER;
		return APC_OK;
	case BM_REC_CUSTOM:
		return barman_custom(r, b, p, len, off, core, ts, bt);
	case BM_REC_ANNOTATION:
		return barman_annotation(r, b, p, len, off, core, ts, bt);
	default: /* BM_REC_HALT */
		if (len < 17)
			return barman_short(r, b, off, type, 17, len);
		barman_fit(r, b, 17, len);
		e = apc_batch_add(bt, APC_EV_IDLE, ts, core < b->max_cores ? (int32_t)core : APC_NO_CORE);
		if (!e)
			return barman_nomem(r, b);
		e->u.idle.state = p[16] ? 0 : -1;
		return APC_OK;
	}
}

/*
 * barman_lead_time() : the time of the first record with one, from the
 * block at p on; p[0..n) is visible, rest bytes are left in the
 * segment, all says whether n covers them.  Returns 1 with *t set; 0 if
 * none is visible yet and more bytes may come; -1 if there is none
 * before the segment ends, a damaged block (reported when the decoder
 * gets there) or BM_LEAD_SCAN bytes.
 */
static int barman_lead_time(const struct barman *b, const uint8_t *p, size_t n, uint64_t rest, int all,
			    uint64_t *t)
{
	uint64_t pad_bit = b->ptr == 8 ? 1ull << 63 : 1ull << 31, ptr = (uint64_t)b->ptr;
	size_t pos = 0;

	while (pos < BM_LEAD_SCAN) {
		uint64_t w, len;

		if (rest - pos < ptr)
			return -1;
		if (n - pos < ptr)
			return all ? -1 : 0;
		w = barman_uptr(b, p + pos);
		len = w & ~pad_bit;
		if (len > rest - pos - ptr)
			return -1;
		if (n - pos - ptr < len)
			return all ? -1 : 0;
		if (!(w & pad_bit) && len >= 16) {
			uint64_t v = barman_u64(b, p + pos + ptr + 8);
			if (v != UINT64_MAX) {
				*t = v;
				return 1;
			}
		}
		pos += (size_t)(ptr + len);
	}
	return -1;
}

/*
 * barman_decode() : decode records from p[0..n), the bytes of the
 * current segment from seg_done on (file offset abs).  `all` says
 * whether p holds the rest of the segment.  Advances *used over whole
 * blocks; stops when the batch is full, when a block is incomplete and
 * more bytes may come, or on damage (r->err set, negative return).
 */
static int barman_decode(struct apc_reader *r, struct barman *b, const uint8_t *p, size_t n,
			 uint64_t abs, int all, struct apc_batch *bt, size_t *used)
{
	const struct barman_seg *sg = &b->seg[b->cur];
	uint64_t left_in_seg = sg->len - b->seg_done;
	size_t pos = 0;
	uint64_t pad_bit = b->ptr == 8 ? 1ull << 63 : 1ull << 31;

	while (barman_room(b, bt)) {
		uint64_t rest = left_in_seg - pos, w, len;

		if (rest == 0)
			break;
		if (rest < (uint64_t)b->ptr) {
			if (n - pos < rest)
				break; /* wait for the bytes (or report truncation) */
			/* a circular buffer's tail too short for a length is padding */
			if (b->store == BM_LINEAR)
				apc_model_unmapped(r->model, "barman trailing bytes too short for a record length", rest);
			pos += (size_t)rest;
			break;
		}
		if (n - pos < (size_t)b->ptr)
			break;
		w = barman_uptr(b, p + pos);
		len = w & ~pad_bit;
		if (len > rest - (uint64_t)b->ptr) {
			r->damaged = 1;
			*used = pos;
			return apc_err_set(&r->err, APC_EDATA, b->name, (int64_t)(abs + pos),
					   "block length %llu runs past the end of the data (%llu bytes left)",
					   (unsigned long long)len, (unsigned long long)(rest - (uint64_t)b->ptr));
		}
		if (len > BM_RECORD_MAX) {
			r->damaged = 1;
			*used = pos;
			return apc_err_set(&r->err, APC_ENOMEM, b->name, (int64_t)(abs + pos),
					   "block of %llu bytes is too large", (unsigned long long)len);
		}
		if (n - pos < (size_t)b->ptr + len) {
			if (all) {
				r->damaged = 1;
				*used = pos;
				return apc_err_set(&r->err, APC_EDATA, b->name, (int64_t)(abs + pos),
						   "data area truncated: block of %llu bytes, file ends after %zu",
						   (unsigned long long)len, n - pos - (size_t)b->ptr);
			}
			break;
		}
		if (w & pad_bit) {
			/* The agent pads only up to the wrap point of a
			 * circular buffer, when the next block does not fit
			 * before it (so did every padding block of the real
			 * circular capture); a block with the bit set
			 * anywhere else is a record it had not committed
			 * when the buffer was dumped. */
			uint64_t end = abs + pos + (uint64_t)b->ptr + len, wrap = b->data_off + b->buflen;
			if (b->store == BM_LINEAR || end > wrap || wrap - end >= (uint64_t)b->ptr)
				apc_model_unmapped(r->model, "barman uncommitted records (padding bit set)", 1);
		} else if (len == 0) {
			r->damaged = 1;
			*used = pos;
			return apc_err_set(&r->err, APC_EDATA, b->name, (int64_t)(abs + pos), "empty record block");
		} else {
			/* A record stamped ~0 takes the time of the record
			 * before it; before the first record with a time
			 * there is none, and tick 0 (or the clock base)
			 * would stretch the span back to the capture start
			 * and move the origin of --begin: it takes the time
			 * of the first record after it with one.  Only with
			 * none near is it placed at the capture start. */
			if (!b->have_ts && len >= 16 && barman_u64(b, p + pos + b->ptr + 8) == UINT64_MAX) {
				int k = barman_lead_time(b, p + pos, n - pos, rest, all, &b->last_ts);
				if (k == 0)
					break; /* wait for the bytes */
				if (k < 0) {
					b->last_ts = b->t_base;
					b->lead_start = 1;
				}
				b->have_ts = 1;
			}
			if (barman_record(r, b, p + pos + b->ptr, len, abs + pos, bt) < 0) {
				*used = pos;
				return r->err.status;
			}
		}
		pos += (size_t)b->ptr + (size_t)len;
	}
	*used = pos;
	return APC_OK;
}

/* ---- next / close ----------------------------------------------------- */

/* Read the stashed piece (start of the buffer) before moving on. */
static int barman_fill_stash(struct apc_reader *r, struct barman *b)
{
	const struct barman_seg *sg = &b->seg[b->nseg - 1];
	uint64_t got = 0;
	size_t cap = sg->len < BM_WINDOW ? (size_t)sg->len + 1 : BM_WINDOW;

	if (!sg->in_stash || b->stash)
		return APC_OK;
	/* The header's length is a claim: the stash grows with the bytes
	 * that really come, so a tiny file declaring a 1 GiB buffer costs
	 * no 1 GiB allocation. */
	b->stash = malloc(cap);
	if (!b->stash)
		return barman_nomem(r, b);
	if (barman_seek(r, b, sg->file_off) < 0)
		return r->err.status;
	while (got < sg->len) {
		ssize_t n = barman_want(r, b, 1);
		size_t k;
		if (n < 0)
			return r->err.status;
		if (n == 0)
			break;
		k = (size_t)n < sg->len - got ? (size_t)n : (size_t)(sg->len - got);
		if (got + k > cap) {
			size_t ncap = cap;
			uint8_t *ns;
			while (ncap < got + k)
				ncap = ncap < sg->len / 2 ? ncap * 2 : (size_t)sg->len;
			if (!(ns = realloc(b->stash, ncap)))
				return barman_nomem(r, b);
			b->stash = ns;
			cap = ncap;
		}
		memcpy(b->stash + got, b->win + b->win_pos, k);
		b->win_pos += k;
		got += k;
	}
	if (got < sg->len) {
		/* The file ends before the older piece even starts: decoding
		 * it fails at once, and that failure (held, see below) is the
		 * report; the stash ends early. */
		b->stash_cut = 1;
		b->seg[b->nseg - 1].len = got;
	}
	return APC_OK;
}

/*
 * Damage met in the older piece of a wrapped circular buffer: keep the
 * error for the end and go on to the newer piece, which is intact in
 * memory.  The message gains the range given up.
 */
static void barman_hold(struct apc_reader *r, struct barman *b)
{
	const struct barman_seg *sg = &b->seg[b->cur];
	size_t k = strlen(r->err.msg);

	b->held = r->err;
	b->holding = 1;
	snprintf(b->held.msg + k, sizeof b->held.msg - k,
		 "; records lost up to the wrap point at offset %llu, the newer ones from offset %llu kept%s",
		 (unsigned long long)(sg->file_off + sg->len), (unsigned long long)b->seg[b->cur + 1].file_off,
		 b->stash_cut ? " up to the end of the file" : "");
	apc_err_clear(&r->err);
	b->cur++;
	b->seg_done = 0;
}

static int barman_next(struct apc_reader *r, struct apc_batch *bt)
{
	struct barman *b = r->priv;

	if (b->finished)
		return APC_END;
	if (!b->started) {
		b->started = 1;
		if (barman_preamble(r, b, bt) < 0)
			return r->err.status;
		if (b->nseg > 0 && barman_fill_stash(r, b) < 0)
			return r->err.status;
		if (b->nseg > 0 && !b->seg[0].in_stash && barman_seek(r, b, b->seg[0].file_off) < 0)
			return r->err.status;
	}
	while (barman_room(b, bt)) {
		const struct barman_seg *sg;
		size_t used = 0;
		int rc, was_damaged, damage;

		if (b->cur >= b->nseg) {
			b->finished = 1;
			if (b->holding) {
				r->err = b->held;
				return r->err.status;
			}
			if (b->cut.status < 0) {
				/* every record was there: the damage is past them */
				r->damaged = 1;
				r->err = b->cut;
				if (b->hdr.status < 0)
					apc_model_more_damage(r->model, &b->hdr);
				return r->err.status;
			}
			if (b->hdr.status < 0) {
				r->damaged = 1;
				r->err = b->hdr;
				return r->err.status;
			}
			break;
		}
		sg = &b->seg[b->cur];
		if (b->seg_done == sg->len) {
			b->cur++;
			b->seg_done = 0;
			continue;
		}
		was_damaged = r->damaged;
		r->damaged = 0;
		if (sg->in_stash) {
			rc = barman_decode(r, b, b->stash + b->seg_done, (size_t)(sg->len - b->seg_done),
					   sg->file_off + b->seg_done, 1, bt, &used);
		} else {
			uint64_t left = sg->len - b->seg_done;
			size_t have = b->win_len - b->win_pos;
			ssize_t n;

			if (have < left && have < BM_WINDOW / 2 && !b->eof) {
				n = barman_want(r, b, left < BM_WINDOW ? (size_t)left : BM_WINDOW);
				if (n < 0)
					return r->err.status;
				have = (size_t)n;
			}
			if (have > left)
				have = (size_t)left;
			rc = barman_decode(r, b, b->win + b->win_pos, have, sg->file_off + b->seg_done,
					   have == left || b->eof, bt, &used);
			b->win_pos += used;
			if (rc == APC_OK && used == 0 && barman_room(b, bt)) {
				/* no whole block visible: at the end, or one longer than the window */
				uint64_t need = (uint64_t)b->ptr;
				if (have >= (size_t)b->ptr)
					need += barman_uptr(b, b->win + b->win_pos) &
						(b->ptr == 8 ? ~(1ull << 63) : 0x7fffffffull);
				if (b->eof) {
					uint64_t at = sg->file_off + b->seg_done, end = b->win_abs + b->win_len;
					r->damaged = 1;
					rc = apc_err_set(&r->err, APC_EDATA, b->name, (int64_t)(end < at ? end : at),
							 "data area truncated: the file ends at %llu, the data store runs to %llu",
							 (unsigned long long)end, (unsigned long long)(sg->file_off + sg->len));
				} else if (barman_want(r, b, need > have ? (size_t)need : have + 1) < 0) {
					return r->err.status;
				}
			}
		}
		damage = r->damaged;
		r->damaged |= was_damaged;
		b->seg_done += used;
		r->progress_done += used;
		if (rc < 0 && damage && !sg->in_stash && b->cur + 1 < b->nseg && b->seg[b->cur + 1].in_stash) {
			barman_hold(r, b);
			continue;
		}
		if (rc < 0) {
			b->finished = 1;
			if (b->holding && damage) {
				/* the first damage met, in the older piece, is the
				 * run's; the newer piece's a line of its own */
				apc_model_more_damage(r->model, &r->err);
				r->err = b->held;
			}
			if (b->hdr.status < 0)
				apc_model_more_damage(r->model, &b->hdr);
			return r->err.status;
		}
	}
	return bt->n > 0 || !b->finished ? APC_OK : APC_END;
}

static void barman_close(struct apc_reader *r)
{
	struct barman *b = r->priv;

	if (!b)
		return;
	if (b->cores)
		for (uint32_t c = 0; c < b->max_cores; c++) {
			free(b->cores[c].types);
			free(b->cores[c].ids);
			free(b->cores[c].last);
		}
	free(b->cores);
	free(b->tasks);
	free(b->maps);
	free(b->series);
	for (size_t i = 0; i < b->nnames; i++)
		free(b->names[i].text);
	free(b->names);
	apc_map64_free(&b->name_at);
	apc_map64_free(&b->declared);
	apc_map64_free(&b->pmu_slot);
	apc_map64_free(&b->pmu_nslots);
	free(b->strtab);
	free(b->win);
	free(b->stash);
	free(b);
	r->priv = NULL;
}

/* --stats=json and -v: records read per type and what each became. */
static void barman_report(struct apc_reader *r)
{
	static const char *const kinds[][2] = {
		[BM_REC_SAMPLE] = {"barman sample", "PMU and custom counter values (Block Counter)"},
		[BM_REC_SAMPLE_PC] = {"barman sample with PC", "counter values and a call-path sample"},
		[BM_REC_TASK_SWITCH] = {"barman task switch", "activity Barman_task_activity"},
		[BM_REC_CUSTOM] = {"barman custom counter value", "custom chart counter value"},
		[BM_REC_ANNOTATION] = {"barman annotation", "annotation (External frame)"},
		[BM_REC_HALT] = {"barman halting event", "idle"},
	};
	struct barman *b = r->priv;

	if (!b)
		return;
	for (int t = BM_REC_SAMPLE; t <= BM_REC_HALT; t++)
		if (b->rec_count[t])
			apc_model_count_kind(r->model, kinds[t][0], kinds[t][1], b->rec_count[t]);
}

const struct apc_format apc_format_barman = {
	.name = "barman",
	.description = "Arm bare-metal agent (barman) buffer dump, protocol 1-3",
	.reads = "file",
	.bid = barman_bid,
	.open = barman_open,
	.next = barman_next,
	.report = barman_report,
	.close = barman_close,
	.read_ahead = 1,
};
