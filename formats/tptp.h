/*
 * tptp.h - what the two TPTP readers (XML and binary .trcbin) share: one
 * source-neutral record per TPTP element/message, and the mapping state
 * that turns records into model events (threads, classes, methods,
 * objects, open-call stacks) and restores time order.
 *
 * Both readers decode their input into struct tptp_rec and hand it to
 * tptp_map_record(); the map owns everything after that.  Record strings
 * only need to live for the call: the map copies (interns) what it keeps.
 *
 * Ordering.  TPTP writers flush per-thread buffers, and converters stamp
 * each thread with its own CPU clock, so times are monotonic per thread
 * but go backwards between threads in file order.  The map keeps a
 * bounded reordering window: outgoing events wait in a queue ordered by
 * (time, arrival) and leave once they are older than the newest time seen
 * minus the window (default 5 s of trace time, apc_read_opts.window_ns
 * overrides), or when the queue holds TPTP_HEAP_MAX events.  An event that
 * arrives older than one already emitted is clamped to that time and
 * counted ("tptp events later than the reorder window").  Everything goes
 * to core 0: TPTP does not say which CPU ran a thread.
 */
#ifndef APC_TPTP_H
#define APC_TPTP_H

#include <stddef.h>
#include <stdint.h>

#include "format.h"
#include "model.h"

/* Element kinds; the binary message id is 1000 + the number in the
 * comment where the spec assigns one. */
enum tptp_kind {
	TPTP_UNKNOWN = 0,
	TPTP_NODE,            /* 1001 */
	TPTP_PROCESS_CREATE,  /* 1002 */
	TPTP_AGENT_CREATE,    /* 1003 */
	TPTP_AGENT_DESTROY,   /* 1004 */
	TPTP_TRACE_START,     /* 1005 */
	TPTP_TRACE_END,       /* 1006 */
	TPTP_FILTER,          /* 1007 */
	TPTP_OPTION,          /* 1008 */
	TPTP_THREAD_START,    /* 1009 */
	TPTP_THREAD_END,      /* 1010 */
	TPTP_CLASS_DEF,       /* 1011 */
	TPTP_METHOD_DEF,      /* 1012 */
	TPTP_OBJ_ALLOC,       /* 1014 */
	TPTP_METHOD_ENTRY,    /* 1015 */
	TPTP_METHOD_EXIT,     /* 1016 */
	TPTP_GC_START,        /* 1023 */
	TPTP_OBJ_FREE,        /* 1024 */
	TPTP_GC_FINISH,       /* 1027 */
	TPTP_RUNTIME_INIT_DONE, /* 1030 */
	TPTP_RUNTIME_SHUTDOWN,  /* 1031 */
	TPTP_MON_WAIT,        /* 1032 */
	TPTP_MON_WAITED,      /* 1033 */
	TPTP_MON_CONTENDED_ENTER,   /* 1034 */
	TPTP_MON_CONTENDED_ENTERED, /* 1035 */
	TPTP_AG_METHOD_ENTRY, /* 1036 */
	TPTP_AG_METHOD_EXIT,  /* 1037 */
	TPTP_HD_START,        /* 1038 */
	TPTP_GC_ROOT,         /* 1039 */
	TPTP_OBJ_REF,         /* 1040 */
	TPTP_CUSTOM,          /* 1041 */
	TPTP_CLASS_UNLOAD,    /* XML only */
	TPTP_KIND_COUNT
};

/* Presence bits for the numeric fields of a record. */
#define TPTP_HAS_TIME   0x001u
#define TPTP_HAS_THREAD 0x002u
#define TPTP_HAS_METHOD 0x004u
#define TPTP_HAS_CLASS  0x008u
#define TPTP_HAS_OBJECT 0x010u
#define TPTP_HAS_TICKET 0x020u
#define TPTP_HAS_DEPTH  0x040u
#define TPTP_HAS_SIZE   0x080u
#define TPTP_HAS_PID    0x100u

/*
 * One element/message.  `time` is ns since the epoch (the XML reader
 * parses "seconds.nanoseconds" exactly; the binary reader converts ticks).
 * Strings may be NULL; they are valid only during tptp_map_record().
 */
struct tptp_rec {
	int kind;               /* enum tptp_kind */
	const char *elem;       /* element name (for unknown ones) */
	unsigned has;           /* TPTP_HAS_* */
	uint64_t time;
	uint64_t thread_id, method_id, class_id, object_id, owner_id;
	uint64_t ticket, depth, size, timeout;
	int64_t pid;
	const char *name;       /* class/method/thread/agent name, hd name */
	const char *signature;  /* methodDef */
	const char *hostname;   /* node */
	const char *key, *value;/* option */
	const char *group;      /* threadStart group name */
};

struct tptp_map;

/* Statistics the tests and the summary use. */
struct tptp_stats {
	uint64_t records;          /* records fed */
	uint64_t kinds[TPTP_KIND_COUNT];
	uint64_t jobs;             /* CAM jobs emitted (calls, incl. forced) */
	uint64_t calls_matched;    /* entry/exit pairs */
	uint64_t calls_open_at_end;/* closed at the last time */
	uint64_t calls_unwound;    /* closed by an exit of an outer call */
	uint64_t exits_unmatched;  /* exit without a matching entry */
	uint64_t late;             /* clamped: older than the window allows */
	uint64_t gc_count;         /* gcStart..gcFinish pairs */
	int64_t live_heap;         /* bytes, after the last record */
	uint64_t threads;          /* threadStart seen (incl. reuse) */
};

/*
 * tptp_map_new() : mapping state for one input, attached to model m
 * (declares the heap counters and one core).  window_ns 0 = default.
 * NULL on allocation failure.
 */
struct tptp_map *tptp_map_new(struct apc_model *m, uint64_t window_ns);
void tptp_map_free(struct tptp_map *map);

/* tptp_map_is_header() : 1 for kinds that come before the data and fill
 * the capture metadata (node, processCreate, agentCreate, traceStart,
 * option, filter). */
int tptp_map_is_header(int kind);

/*
 * tptp_map_begin() : the header is over: fix meta.wall_clock_ns and
 * meta.monotonic_delta (traceStart time, else `first_time`) and map the
 * records that waited for them.  tptp_map_record() calls it at the first
 * data record when there was a traceStart, else at the first record with
 * a time; records before that only fill metadata, define ids or wait.
 * Readers feed records from open() until tptp_map_begun(), the writer
 * needing the metadata before the first event, and call it themselves
 * (first_time 0) when the input ends before.  APC_OK, or APC_ENOMEM
 * with err set.
 */
int tptp_map_begin(struct tptp_map *map, uint64_t first_time, struct apc_err *err);
int tptp_map_begun(const struct tptp_map *map);

/*
 * tptp_map_record() : map one record.  Events go to the reorder heap.
 * APC_OK, or APC_ENOMEM with err set.
 */
int tptp_map_record(struct tptp_map *map, const struct tptp_rec *rec, struct apc_err *err);

/*
 * tptp_map_drain() : move events that are ready (older than the window)
 * into b, until b is full.  With `final`, first (once) close the calls
 * still open (at the last time seen), then move everything, as much as
 * fits in b: call again while tptp_map_pending() is not 0 (a batch per
 * call keeps memory flat when half a million events wait at the end).
 * Returns the number of events added, or -1 on allocation failure.
 */
long tptp_map_drain(struct tptp_map *map, struct apc_batch *b, int final);

/*
 * tptp_map_next() : the next() both TPTP readers share.  Pulls records
 * with pull(ctx, rec) -- 1 a record, 2 nothing this time, 0 the end, <0
 * damage (r->err set) -- through the map until b is full; at the end or
 * the damage everything still waiting is drained, and the damage is
 * returned once the events before it are out.  *finished and *pending
 * are the reader's state (a reader that failed in open() sets them).
 */
int tptp_map_next(struct tptp_map *map, struct apc_reader *r, struct apc_batch *b,
		  int (*pull)(void *ctx, struct tptp_rec *rec), void *ctx, int *finished,
		  int *pending);

/*
 * tptp_map_header() : what both TPTP readers' open() does once the file
 * checks pass: pull records (as for tptp_map_next()) through the map
 * until it has begun, so the writer has its metadata before the first
 * event.  An input that ends or breaks first is still a capture: the map
 * begins at 0, *finished is set and *pending keeps the damage for
 * next().  APC_OK, or a failure other than damage (err set).
 */
int tptp_map_header(struct tptp_map *map, int (*pull)(void *ctx, struct tptp_rec *rec), void *ctx,
		    int *finished, int *pending, struct apc_err *err);

/* Events waiting in the heap. */
size_t tptp_map_pending(const struct tptp_map *map);

const struct tptp_stats *tptp_map_stats(const struct tptp_map *map);

/*
 * tptp_map_report() : the .report of both TPTP readers (-v, --stats=json):
 * the records the map was fed, per kind, and what each kind became.
 */
void tptp_map_report(struct apc_reader *r);

/* tptp_kind_from_name() : element name -> kind (TPTP_UNKNOWN if none). */
int tptp_kind_from_name(const char *name);
const char *tptp_kind_name(int kind);

/* tptp_parse_time() : "1185890426.304424453" -> ns since the epoch,
 * exactly (integer arithmetic; fewer than 9 fraction digits are scaled,
 * more are truncated).  0 on success, -1 if not a time; 1 when the
 * number is followed by a space and more characters: read up to them,
 * the caller counts it.  Spaces before or after the number are fine. */
int tptp_parse_time(const char *s, uint64_t *ns);
/* tptp_parse_time_n() : the same on len bytes that need no NUL (XML
 * attribute values arrive as pointer pairs into the parser's buffer). */
int tptp_parse_time_n(const char *s, size_t len, uint64_t *ns);

/*
 * tptp_reader_stats() : the statistics of an open TPTP reader (XML or
 * binary); both keep their map pointer first in r->priv.  NULL if the
 * reader is not open.
 */
const struct tptp_stats *tptp_reader_stats(const struct apc_reader *r);

/*
 * tptp_bin_layout() : the attribute order of binary data message `id`
 * (1001..1041) as the spec's tables give it, after the 6-byte header, as
 * (type, role) character pairs; NULL for ids the spec does not define.
 * *kind receives the element kind.
 *   types: 'b' byte, 'i' int32, 'l' int64 ("Long"), 's' NUL-terminated
 *          string, 'S' string array and 'L' int64 array, both counted by
 *          the preceding field with role 'N' (monitor stack depth).
 *   roles: '-' unused, 'T' time, 'h' thread, 'm' method, 'c' class,
 *          'o' object, 'k' ticket, 'd' depth, 'z' size, 'p' pid,
 *          'w' timeout, 'O' owner thread, 'n' name, 'g' signature,
 *          'H' hostname, 'K' key, 'V' value, 'G' group, 'N' array count.
 * The generator writes with the same table the reader reads with.
 */
const char *tptp_bin_layout(int id, int *kind);

/* The binary header magic, "0TBF" (Trace Binary Format). */
#define TPTP_BIN_MAGIC "0TBF"
#define TPTP_BIN_HEADER 12

extern const struct apc_format apc_format_tptp_xml;
extern const struct apc_format apc_format_tptp_bin;

#endif
