/*
 * model.h - the event model between readers and writers.
 *
 * Everything an APC capture can carry, in source-neutral terms.  Readers
 * fill a struct apc_model (metadata, counter declarations) and batches of
 * struct apc_event; writers consume them.  A reader never knows about APC
 * frames; a writer never knows about Barman.
 *
 * Time: every event timestamp is nanoseconds on the capture's monotonic
 * clock (absolute, not zero-based).  The reader converts ticks to ns.
 * meta.monotonic_delta is what the APC writer subtracts to zero-base frame
 * timestamps; annotation timestamps are written absolute, as gator does.
 */
#ifndef APC_MODEL_H
#define APC_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "map64.h"

#define APC_MAX_CORES 4096
#define APC_NO_PID INT32_MIN /* counter value not tied to a process */
#define APC_NO_CORE (-1)

/* ---- capture metadata ------------------------------------------------ */

struct apc_core {
	uint32_t cpuid;     /* e.g. 0x41d03 (implementer<<12 | part) */
	char *name;         /* "Cortex-A53"; NULL if unknown */
	int cluster;        /* -1 if unknown */
};

struct apc_attr {
	char *key, *value;
};

/*
 * An XML element kept as a capture read back wrote it, to be written
 * back: its name, attributes (verbatim) and child elements.  One whose
 * counter is >= 0 stands for that counter's own event: the writer
 * writes the declaration's event in its place.
 */
struct apc_xml_elem {
	char *name;
	size_t nattrs;
	struct apc_attr *attrs;
	size_t nchildren;
	struct apc_xml_elem *children;
	int64_t counter;        /* a counter id, or -1 */
};

struct apc_meta {
	char *target_name;      /* captured.xml target name, Summary attribute */
	uint32_t ncores;
	struct apc_core *cores; /* ncores entries */
	uint64_t wall_clock_ns; /* ns since the epoch at monotonic_delta; 0 unknown */
	uint64_t uptime_ns;     /* Summary uptime; 0 unknown */
	uint64_t monotonic_delta; /* subtracted from frame timestamps */
	uint32_t sample_rate;   /* samples/s, 0 if none */
	int64_t created;        /* captured.xml created (s since epoch), -1 = derive */
	uint32_t protocol;      /* APC protocol the source speaks (0 = ours) */
	size_t nattrs;          /* free key/value attributes (Summary) */
	struct apc_attr *attrs;
	char *source_format;    /* reader name, for the summary */
	/*
	 * What a capture read back (APC input) says of itself that the
	 * writer would otherwise decide: captured.xml's type ("Gator", or
	 * "Perf" for a perf-mode capture, whose perf frames Streamline then
	 * reads as such) and backtrace_processing, and its target cpuid
	 * (gatord writes the highest core's, which names no core).  NULL /
	 * has_target_cpuid 0: the writer's own ("Gator", "none", core 0's).
	 */
	char *capture_type;
	char *backtrace_processing;
	uint32_t target_cpuid;
	int has_target_cpuid;
	/* Further captured.xml <target> attributes, as the source wrote
	 * them: written back verbatim. */
	size_t ntarget_attrs;
	struct apc_attr *target_attrs;
	/* session.xml's attributes, as a capture read back wrote them: the
	 * writer's own settings give way to them, the others follow. */
	size_t nsession_attrs;
	struct apc_attr *session_attrs;
	/*
	 * events.xml as a capture read back wrote it (its root element):
	 * what it says of counters the capture does not use, its counter
	 * and option sets, gatord 9.x's <spe> ... are written back as they
	 * were, with the capture's counters' own events in their places.
	 * NULL: the writer's events.xml describes the counters alone.
	 */
	struct apc_xml_elem *events_xml;
};

/* ---- counter declarations -------------------------------------------- */

enum apc_class {
	APC_CLASS_DELTA = 0,
	APC_CLASS_INCIDENT,
	APC_CLASS_ABSOLUTE,
	APC_CLASS_ACTIVITY
};

enum apc_display {
	APC_DISPLAY_DEFAULT = 0, /* omitted: class default */
	APC_DISPLAY_ACCUMULATE,
	APC_DISPLAY_HERTZ,
	APC_DISPLAY_MAXIMUM,
	APC_DISPLAY_AVERAGE,
	APC_DISPLAY_MINIMUM
};

enum apc_series { APC_SERIES_DEFAULT = 0, APC_SERIES_STACKED, APC_SERIES_OVERLAY, APC_SERIES_LOG10 };
enum apc_render { APC_RENDER_DEFAULT = 0, APC_RENDER_FILLED, APC_RENDER_LINE, APC_RENDER_BAR };

/* Tri-state booleans for optional XML attributes. */
enum apc_tri { APC_UNSET = 0, APC_NO = 1, APC_YES = 2 };

struct apc_activity {
	char *name;
	uint32_t color;   /* 0xZZRRGGBB; has_color says if present */
	int has_color;
};

/*
 * One counter.  `type` is the counter name used in captured.xml (the
 * counter= attribute of events.xml, e.g. "ARMv8_Cortex_A53_cnt0").
 * `category` groups it in events.xml.  Strings are owned by the model.
 */
struct apc_counter_decl {
	uint32_t id;          /* index in model->counters; events refer to it */
	int32_t key;          /* APC key the writer should use; 0 = assign */
	char *type;           /* required */
	char *category;       /* events.xml category name; NULL = "apctools" */
	char *counter_set;    /* e.g. "ARMv8_Cortex_A53_cnt" for PMU sets, or NULL */
	int64_t event;        /* event number, -1 if none */
	char *title, *name, *description, *units;
	enum apc_class cls;
	enum apc_display display;
	enum apc_series series;
	enum apc_render render;
	double multiplier;    /* 0 = omit */
	uint32_t color;  int has_color;
	enum apc_tri per_cpu, average_selection, average_cores, percentage;
	uint32_t cores;       /* activity: number of units (captured.xml: any counter's); 0 = omit */
	uint32_t count;       /* captured.xml count= (event-based sampling period); 0 = omit */
	size_t nactivities;
	struct apc_activity *activities;
	/* Further attributes of its events.xml event that no field above
	 * holds (gatord's derived=, proc=, advanced= ...), as a capture read
	 * back wrote them: written back verbatim. */
	size_t nxattrs;
	struct apc_attr *xattrs;
	/* An event of meta.events_xml describes it, through its counter
	 * set (and option set) and event number, as gatord's events.xml
	 * describes a configured PMU counter: the writer writes that as
	 * kept, and no event of this counter's own (the fields above are
	 * what that event says, for readers of the model). */
	int kept_xml;
	uint64_t values;      /* filled by writers: values written */
};

/* ---- events ---------------------------------------------------------- */

enum apc_ev_type {
	APC_EV_COUNTER = 1,   /* u.counter: core, counter id, value (pid) */
	APC_EV_THREAD_NAME,   /* u.name: tid, name */
	APC_EV_COOKIE_NAME,   /* u.name: cookie (in id), image name */
	APC_EV_LINK,          /* u.link: cookie, pid, tid */
	APC_EV_ACTIVITY,      /* u.activity: core, counter id, activity, tid, wait */
	APC_EV_SCHED_SWITCH,  /* u.sched: core, tid, state (Scheduler Trace) */
	APC_EV_THREAD_EXIT,   /* u.sched: tid (Scheduler Trace exit) */
	APC_EV_TASK_EXIT,     /* u.sched: tid (Activity Trace task exit) */
	APC_EV_IDLE,          /* u.idle: core, state (-1 running, >=0 wfi) */
	APC_EV_SAMPLE,        /* u.sample: core, pid, tid, cookie, call path */
	APC_EV_PROC,          /* u.proc: pid, tid, image, comm */
	APC_EV_ANNOTATION,    /* u.ann: one annotate-protocol message */
	APC_EV_RAW_FRAME,     /* u.raw: a frame kept opaque (apc -> apc) */
	APC_EV_COUNTERS,      /* u.counters: n counter values of one core at one time
	                       * (same meaning and output as n APC_EV_COUNTER events;
	                       * counted as n counter events) */
	APC_EV_TYPE_COUNT
};

/* Scheduler/activity wait states. */
enum apc_wait { APC_WAIT_OTHER = 0, APC_WAIT_CONTENTION = 1, APC_WAIT_IO = 2 };

struct apc_pc {
	int32_t cookie;   /* image cookie (0 kernel, -1 unknown) */
	int64_t offset;   /* offset in the image, or the address */
};

/*
 * Annotation codes: the annotate protocol's message codes (v3..v5), so a
 * model annotation maps 1:1 to an External-frame message.
 */
enum apc_ann_code {
	APC_ANN_STR = 0x01,
	APC_ANN_COLOR_STR = 0x02,
	APC_ANN_CHANNEL = 0x03,
	APC_ANN_GROUP = 0x04,
	APC_ANN_VISUAL = 0x05,
	APC_ANN_MARKER = 0x06,
	APC_ANN_COLOR_MARKER = 0x07,
	APC_ANN_COUNTER = 0x08,
	APC_ANN_COUNTER_VALUE = 0x09,
	APC_ANN_ACTIVITY_SWITCH = 0x0a,
	APC_ANN_CAM_TRACK = 0x0b,
	APC_ANN_CAM_JOB = 0x0c,
	APC_ANN_CAM_VIEW = 0x0d,
	APC_ANN_JOB_START = 0x0e, /* v4+ */
	APC_ANN_JOB_DEPS = 0x0f,  /* v4+ */
	APC_ANN_JOB_STOP = 0x10   /* v4+ */
};

/*
 * One annotation message.  The source connection (tid, pid) identifies
 * the client thread; the writer gives each connection its own External
 * fd.  Which fields are meaningful depends on code, as in the protocol.
 * For APC_ANN_COUNTER the declaration is in `counter` (title, name,
 * units, description, class, display ... as in struct apc_counter_decl,
 * with counter->key holding the client's key).
 */
struct apc_ann {
	int32_t tid, pid;       /* source connection */
	uint8_t code;           /* enum apc_ann_code */
	uint8_t version;        /* the source stream's annotate version, 0 none */
	uint8_t dont_mangle;    /* the source connection's setup byte */
	uint8_t has_color;
	uint32_t color;         /* the 4 wire bytes R,G,B,T as 0xRRGGBBTT */
	int32_t channel, group; /* STR, COLOR_STR, CHANNEL, GROUP */
	int32_t core, key, activity, act_tid; /* COUNTER_VALUE, ACTIVITY_SWITCH */
	int64_t value;          /* COUNTER_VALUE */
	int32_t view, track, parent, job, primary_dep; /* CAM_* */
	uint64_t start, duration; /* CAM_JOB (ns); JOB_* use the event time */
	uint32_t ndeps;
	const int32_t *deps;
	const char *text;       /* not NUL-terminated on the wire; here it is */
	size_t text_len;
	const uint8_t *data;    /* VISUAL image */
	size_t data_len;
	const struct apc_counter_decl *counter; /* COUNTER */
};

struct apc_event {
	uint64_t ts;        /* ns, capture monotonic clock (absolute) */
	uint16_t type;      /* enum apc_ev_type */
	uint16_t flags;     /* APC_EVF_* */
	int32_t core;       /* APC_NO_CORE where the event has none */
	union {
		struct { uint32_t counter; int32_t pid; int64_t value; } counter;
		struct { int32_t id; const char *name; } name;
		struct { int32_t cookie, pid, tid; } link;
		struct { uint32_t counter; int32_t activity, tid, wait; } activity;
		struct { int32_t tid, state; } sched;
		struct { int32_t state; } idle;
		struct {
			int32_t pid, tid, cookie;
			uint32_t depth;        /* entries in pcs */
			const struct apc_pc *pcs;
		} sample;
		struct { int32_t pid, tid; const char *image, *comm; } proc;
		const struct apc_ann *ann;
		struct { int32_t frame_type; uint32_t len; const uint8_t *bytes; } raw;
		struct {
			int32_t pid;
			uint32_t n;              /* entries in ids and values */
			const uint32_t *ids;     /* counter ids */
			const int64_t *values;
		} counters;
	} u;
};

/*
 * apc_event_nvalues() : how many counter values e carries (n for an
 * APC_EV_COUNTERS row, 1 for APC_EV_COUNTER, 0 otherwise).
 * apc_event_value() : value i (< apc_event_nvalues(e)) of e as a single
 * APC_EV_COUNTER event, for code that wants one value at a time.
 */
size_t apc_event_nvalues(const struct apc_event *e);
struct apc_event apc_event_value(const struct apc_event *e, size_t i);

/* flags */
#define APC_EVF_NO_TS 0x1 /* event has no time of its own (names, decls) */

/*
 * A batch of events with an arena for the strings and arrays they point
 * to.  Reset by the reader at the start of each next(); pointers are valid
 * until the next reset.
 */
struct apc_batch {
	struct apc_event *ev;
	size_t n;
	size_t cap;                    /* full at this many events */
	size_t alloc;                  /* room in ev (can pass cap: see below) */
	struct apc_arena_chunk *arena;
	unsigned char *room;           /* the newest chunk's free bytes */
	size_t room_left;
	struct apc_arena_chunk *spare; /* rewound chunks kept for reuse */
	size_t chunk;                  /* arena chunk size; 0 = the default (256 KiB) */
	/* CAM job annotations in it (their start and duration widen the
	 * span reported): counted by apc_batch_copy_ann(), and by a reader
	 * that builds such an annotation in the batch itself */
	size_t jobs;
};

void apc_batch_init(struct apc_batch *b, size_t cap);
void apc_batch_reset(struct apc_batch *b);
void apc_batch_free(struct apc_batch *b);
/* apc_batch_add()'s out-of-line part: allocate or grow, then append. */
struct apc_event *apc_batch_add_grow(struct apc_batch *b, uint16_t type, uint64_t ts, int32_t core);
/*
 * apc_batch_add() : append an event, zeroed but for type, ts and core;
 * NULL only on allocation failure.  Inline while there is room (every
 * event but a batch's last): readers call it once per event.
 */
static inline struct apc_event *apc_batch_add(struct apc_batch *b, uint16_t type, uint64_t ts,
					      int32_t core)
{
	struct apc_event *e;

	if (b->n >= b->alloc)
		return apc_batch_add_grow(b, type, ts, core);
	e = &b->ev[b->n++];
	__builtin_memset(e, 0, sizeof *e); /* every byte: readers rely on zeroed members */
	e->ts = ts;
	e->type = type;
	e->core = core;
	return e;
}
/* apc_batch_alloc()'s out-of-line part: a new chunk, then the bytes. */
void *apc_batch_alloc_grow(struct apc_batch *b, size_t size);
/*
 * apc_batch_alloc() : size bytes (16-aligned) that live until the batch
 * is reset; NULL only on allocation failure.  Inline while the newest
 * chunk has room: readers call it for most records.
 */
static inline void *apc_batch_alloc(struct apc_batch *b, size_t size)
{
	void *p;

	size = size ? (size + 15) & ~(size_t)15 : 16;
	if (size > b->room_left)
		return apc_batch_alloc_grow(b, size);
	p = b->room;
	b->room += size;
	b->room_left -= size;
	return p;
}
/* Copy bytes (NUL added) into the batch arena. */
static inline char *apc_batch_strdup(struct apc_batch *b, const char *s, size_t len)
{
	char *p = (char *)apc_batch_alloc(b, len + 1);

	if (!p)
		return NULL;
	if (len)
		__builtin_memcpy(p, s, len);
	p[len] = '\0';
	return p;
}
/*
 * apc_batch_copy_ann() : deep-copy an annotation (text, image, deps and
 * counter declaration with its strings) into the batch arena, so it can
 * outlive the decoder buffer it came from.  NULL on allocation failure.
 */
struct apc_ann *apc_batch_copy_ann(struct apc_batch *b, const struct apc_ann *a);
static inline int apc_batch_full(const struct apc_batch *b) { return b->n >= b->cap; }

/* ---- things a reader could not map ------------------------------------ */

#define APC_MAX_UNMAPPED 64

struct apc_unmapped {
	char *what;        /* copied: "barman record type 7", ... */
	uint64_t count;
};

/* What a reader read, per kind of source record, and what it became. */
struct apc_kind {
	char *what;    /* "kernel.schedchange", "barman sample", ... */
	char *became;  /* "activity", "counter ltt_irq", "nothing", ... */
	uint64_t count;
};

/* ---- the model -------------------------------------------------------- */

struct apc_model {
	struct apc_meta meta;
	struct apc_counter_decl *counters;
	size_t ncounters, counters_cap;
	/* counters by a hash of their type: id + 1 (apc_model_find_counter) */
	struct apc_map64 counter_index;
	int counter_index_clash;          /* two types share a hash: scan too */
	/* Statistics filled in by readers and writers. */
	uint64_t events_read;             /* all events handed to the pipeline */
	uint64_t ev_count[APC_EV_TYPE_COUNT];
	uint64_t records_read;            /* source records/messages read */
	struct apc_unmapped unmapped[APC_MAX_UNMAPPED]; /* skipped, per kind */
	size_t nunmapped;
	uint64_t bytes_in;
	struct apc_kind *kinds;           /* records read per kind (optional) */
	size_t nkinds;
	/* Damage beyond the run's first (which the driver reports), from
	 * readers of several streams, each damaged on its own: the first
	 * APC_MAX_MORE_DAMAGE kept, all counted. */
	struct apc_err *more_damage;
	size_t nmore_damage;
	uint64_t more_damage_total;
	/*
	 * A pthread_mutex_t, set by a driver whose reader runs on its own
	 * thread (lib/pipeline.c): apc_model_add_counter() holds it while it
	 * may move the counter array, and the writer while it reads that
	 * array.  NULL: one thread, no locking.
	 */
	void *lock;
};

void apc_model_init(struct apc_model *m);
void apc_model_free(struct apc_model *m);

/*
 * apc_model_add_counter() : declare a counter named `type`.  Returns the
 * new declaration (zeroed except id, type, event = -1, key = 0) or the
 * existing one with that type.  NULL on allocation failure.  The pointer
 * is valid until the next add; keep the id, not the pointer.
 */
struct apc_counter_decl *apc_model_add_counter(struct apc_model *m, const char *type);
/*
 * apc_model_add_counter_new() : the same, but always a new declaration,
 * even where one has that type already: a capture read back can give
 * one type several keys, each with values of its own.  The model then
 * holds several counters of that type, each with its own id (the APC
 * writer declares each in captured.xml and describes the type once in
 * events.xml, by the first); apc_model_find_counter() finds the first.
 */
struct apc_counter_decl *apc_model_add_counter_new(struct apc_model *m, const char *type);
struct apc_counter_decl *apc_model_find_counter(struct apc_model *m, const char *type);

/* Set the core count (allocates cores[]); returns APC_OK or APC_ENOMEM. */
int apc_model_set_cores(struct apc_model *m, uint32_t ncores);
int apc_model_add_attr(struct apc_model *m, const char *key, const char *value);
/*
 * apc_attrs_add() : append a copy of key=value (NULL value: "") to the
 * list *list of *n entries; APC_OK or APC_ENOMEM (list unchanged).
 * apc_attrs_get() : the value of key in the list, NULL if absent.
 * apc_attrs_free() : free the list's strings and the list.
 */
int apc_attrs_add(struct apc_attr **list, size_t *n, const char *key, const char *value);
const char *apc_attrs_get(const struct apc_attr *list, size_t n, const char *key);
void apc_attrs_free(struct apc_attr *list, size_t n);
/* apc_xml_elem_free() : free e's strings and children, and e's own
 * arrays (not e itself); NULL is fine. */
void apc_xml_elem_free(struct apc_xml_elem *e);

/*
 * apc_model_unmapped() : count `n` things of kind `what` (copied) that could not be mapped.
 * Never fails: past
 * APC_MAX_UNMAPPED kinds they are counted under "other".
 */
void apc_model_unmapped(struct apc_model *m, const char *what, uint64_t n);

/*
 * apc_model_more_damage() : note damage in one stream of a reader of
 * several (an LTT CPU file, an annotate stream) after the first damage
 * the reader reports: each is then a line of its own in apcconv's
 * report (CLI.md: one line per problem), not lost behind the first.
 * Never fails: past APC_MAX_MORE_DAMAGE, or out of memory, it is only
 * counted.
 */
#define APC_MAX_MORE_DAMAGE 16
void apc_model_more_damage(struct apc_model *m, const struct apc_err *e);

/*
 * apc_model_count_kind() : add n records of kind `what` that became
 * `became` (both copied; same what+became accumulate).  APC_OK or
 * APC_ENOMEM.
 */
int apc_model_count_kind(struct apc_model *m, const char *what, const char *became, uint64_t n);

/* Replace *dst with a copy of src (NULL allowed); APC_OK or APC_ENOMEM. */
int apc_strset(char **dst, const char *src);

/* Names for enums, used by XML writers and dumps. */
const char *apc_class_name(enum apc_class c);
const char *apc_display_name(enum apc_display d);
const char *apc_ev_type_name(int type);

#endif
