/*
 * tptp_map.c - TPTP records -> model events, shared by the XML and the
 * binary reader (see tptp.h for the record and the ordering contract).
 *
 * What a user sees in Streamline:
 * - each Java thread: a thread name and a link to the process (its tid is
 *   the TPTP thread id when that fits and was not used before, else a
 *   synthetic one from TPTP_SYNTH_TID up, so a reused id never merges two
 *   threads), and a task exit at its threadEnd;
 * - the process: the pid of processCreate, else the first synthetic id
 *   (above any Linux pid, so it cannot pass for a real one).  No thread
 *   takes the pid as its tid: TPTP thread ids are the profiler's numbers
 *   (often from 1), and a thread with tid == pid would be the process's
 *   main thread in Streamline, carrying the process's own annotations
 *   (GC, JVM markers: connection tid == pid) and naming the process.
 *   That tid is the process's own: at the start it gets a name and a
 *   link like every thread, so its connection is not an unnamed thread.
 *   The name is processCreate's Name when there is one (the spec has
 *   the attribute; the TI profiler and the converters leave it out),
 *   else "java", what a JVM's main thread is called on Linux.  Not the
 *   agentCreate name: that names the profiling agent
 *   ("org.eclipse.tptp.jvmti"), not the program;
 * - method calls: a custom activity map view "Java methods" with one root
 *   track per thread and one child track per call depth under it; every
 *   call is one job named "Class.method" on its depth's track (the
 *   signature is left out: job names stay readable, and overloads share a
 *   colour by class anyway).  "-init-"/"-clinit-" (how converters spell
 *   <init>/<clinit> in XML) are shown as "<init>"/"<clinit>".  Calls still
 *   open at threadEnd or at the end of the input are closed at the last
 *   time seen and counted;
 * - objAlloc/objFree: counters tptp_live_heap (absolute bytes) and
 *   tptp_alloc_rate (delta bytes);
 * - gcStart/gcFinish: a bookmark at the start, and a job on a "GC" track;
 * - monitor events: string annotations on the thread's connection;
 * - heap-dump, aggregate and custom records: counted, not mapped.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "map64.h"
#include "runs.h"
#include "tptp.h"
#include "util.h"

#define TPTP_DEFAULT_WINDOW (5ull * 1000000000ull)
#define TPTP_HEAP_MAX (1u << 19)
#define TPTP_SYNTH_TID 0x40000000
#define TPTP_VIEW_UID 0x5450   /* "TP": any fixed number keeps output deterministic */
#define TPTP_GC_TRACK 1
#define TPTP_TRACK_STRIDE 1024 /* thread i: track (i+1)*stride, depth d: + d */
/* The JVM's image: APC reserves 0 (kernel or idle), -1 (invalid) and 1
 * (it reads as a Backtrace's End of Message), so 2 is the first free. */
#define TPTP_COOKIE 2
#define TPTP_EARLY_MAX 4096    /* records kept waiting for the first time */
#define TPTP_PROCESS_NAME "java" /* the process's name when processCreate gives none */

/* ---- interned strings: names live until the map is freed -------------- */

struct tptp_strpool {
	char **slots;
	size_t cap, n;
};

static uint64_t str_hash(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
	return h;
}

static const char *pool_intern(struct tptp_strpool *p, const char *s, size_t len)
{
	size_t i;

	if ((p->n + 1) * 2 > p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 256;
		char **ns = calloc(cap, sizeof *ns);
		if (!ns)
			return NULL;
		for (size_t k = 0; k < p->cap; k++)
			if (p->slots[k]) {
				size_t j = (size_t)str_hash(p->slots[k], strlen(p->slots[k])) & (cap - 1);
				while (ns[j])
					j = (j + 1) & (cap - 1);
				ns[j] = p->slots[k];
			}
		free(p->slots);
		p->slots = ns;
		p->cap = cap;
	}
	for (i = (size_t)str_hash(s, len) & (p->cap - 1); p->slots[i]; i = (i + 1) & (p->cap - 1))
		if (strncmp(p->slots[i], s, len) == 0 && p->slots[i][len] == '\0')
			return p->slots[i];
	p->slots[i] = malloc(len + 1);
	if (!p->slots[i])
		return NULL;
	memcpy(p->slots[i], s, len);
	p->slots[i][len] = '\0';
	p->n++;
	return p->slots[i];
}

static void pool_free(struct tptp_strpool *p)
{
	for (size_t i = 0; i < p->cap; i++)
		free(p->slots[i]);
	free(p->slots);
	memset(p, 0, sizeof *p);
}

/* ---- state ------------------------------------------------------------- */

/* One outgoing event waiting in the reorder queue (compact: the queue
 * can hold half a million of them).  Counters use `value`, jobs
 * `start`/`dur`/`job`; nothing uses both. */
struct tptp_out {
	uint64_t ts, seq;
	union {
		struct {
			uint64_t start, dur;
		};
		int64_t value;
	};
	const char *text;       /* interned */
	int32_t tid, track, parent;
	union {
		int32_t job;
		uint32_t counter;
	};
	uint32_t color;
	uint16_t type;
	uint8_t code, has_color;
};

/*
 * The reorder queue.  Events arrive as a few interleaved streams that are
 * each already in time order (one per thread: a thread's times only grow),
 * so instead of one big binary heap (19 levels of cache misses per event
 * at half a million events) the queue keeps sorted runs (lib/runs.h).
 * Runs are FIFO lists of fixed chunks, recycled through a free list.
 * Input that would need more than APC_RUNS_MAX runs (times jumping back
 * and forth all the time) spills into a plain binary heap: slower, same
 * order.  The order out is exactly (time, arrival) whatever path an
 * event took.
 */
#define TPTP_CHUNK_EVENTS 64

struct tptp_chunk {
	struct tptp_chunk *next;
	struct tptp_out ev[TPTP_CHUNK_EVENTS];
};

/* Chunks come a 2 MiB slab at a time.  One at a time, each grew the
 * reader thread's malloc heap by a page (8191 mprotect calls for the
 * 100000-call bench input).  A full window is about 30 MiB, all of it
 * fresh memory: faulting it in a page at a time was a third of the
 * binary conversion's time (perf: the stores of chunk_new()'s free list
 * and the kernel's fault path), so each slab is mapped with its pages
 * faulted in by one call (apc_pages_alloc).  Transparent huge pages,
 * tried once, were faster only when runs followed one another: a run on
 * a machine idle for a few seconds (a user's one conversion) found no
 * huge page ready and took 184 ms against 105. */
#define TPTP_SLAB_BYTES ((size_t)2 << 20)
#define TPTP_SLAB_CHUNKS ((TPTP_SLAB_BYTES - sizeof(void *)) / sizeof(struct tptp_chunk))

struct tptp_slab {
	struct tptp_slab *next;
	struct tptp_chunk c[TPTP_SLAB_CHUNKS];
};

struct tptp_run {
	struct tptp_chunk *head, *tail;
	uint32_t hpos, tpos;    /* next to pop in head, next free in tail */
};

struct tptp_call {
	uint32_t method;        /* index in map->methods: the name it began with */
	uint64_t method_id;     /* the id, for its exit: the id may be redefined meanwhile */
	uint64_t ticket;
	int has_ticket, has_method_id;
	uint64_t start;
};

struct tptp_thread {
	uint64_t id;
	int32_t tid;
	int32_t track;
	uint32_t tracks_declared; /* depth tracks 1..n exist */
	const char *name;
	struct tptp_call *stack;
	size_t depth, cap;
	uint64_t last_ts;
};

struct tptp_method {
	uint64_t class_id;
	int has_class;
	const char *name;       /* interned method name */
	const char *job_name;   /* interned "Class.method", made at first call */
	uint32_t color;
};

struct tptp_map {
	struct apc_model *model;
	uint64_t window;
	int begun;
	uint64_t trace_start, last_ts, newest, last_emitted;
	int have_trace_start, have_emitted;
	int32_t pid;            /* 0 until processCreate gives one or begin picks one */
	const char *process_name; /* processCreate's name (interned), or NULL */
	uint32_t c_live, c_rate;
	struct tptp_strpool pool;
	struct apc_map64 thread_ids, class_ids, method_ids, objects, used_tids;
	struct tptp_thread *threads;
	size_t nthreads, threads_cap;
	struct tptp_method *methods;
	size_t nmethods, methods_cap;
	size_t noid;            /* the method of entries without an id */
	int have_noid;
	size_t hn;              /* events waiting (runs + spill heap) */
	struct tptp_run runs[APC_RUNS_MAX];
	struct apc_runs rq;     /* which runs are live, in which orders */
	struct tptp_chunk *free_chunks;
	struct tptp_slab *slabs; /* every chunk lives in one of these */
	struct tptp_out *heap;  /* the spill heap */
	size_t hsn, hcap;
	uint64_t seq;
	uint64_t begin_seq;     /* seq after begin's own events: more is data */
	int32_t next_synth_tid, next_job;
	struct tptp_rec *early; /* records waiting for the zero (strings interned) */
	size_t nearly, early_cap;
	int gc_track_declared, gc_open;
	int final_closed;       /* the final drain closed what was open */
	uint64_t gc_start;
	int64_t emit_live;      /* live heap summed in emission (time) order */
	struct tptp_stats st;
};

/* ---- the reorder queue ---------------------------------------------------- */

static int out_less(const struct tptp_out *a, const struct tptp_out *b)
{
	return a->ts < b->ts || (a->ts == b->ts && a->seq < b->seq);
}

static const struct tptp_out *run_head(const struct tptp_map *m, unsigned r)
{
	return &m->runs[r].head->ev[m->runs[r].hpos];
}

static int run_less(const void *ctx, unsigned a, unsigned b)
{
	const struct tptp_map *m = ctx;

	return out_less(run_head(m, a), run_head(m, b));
}

static int spill_push(struct tptp_map *m, const struct tptp_out *o)
{
	size_t i;

	if (m->hsn == m->hcap) {
		size_t cap = m->hcap ? m->hcap * 2 : 1024;
		struct tptp_out *nh = realloc(m->heap, cap * sizeof *nh);
		if (!nh)
			return -1;
		m->heap = nh;
		m->hcap = cap;
	}
	i = m->hsn++;
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!out_less(o, &m->heap[p]))
			break;
		m->heap[i] = m->heap[p];
		i = p;
	}
	m->heap[i] = *o;
	return 0;
}

static void spill_pop(struct tptp_map *m, struct tptp_out *o)
{
	struct tptp_out last;
	size_t i = 0;

	*o = m->heap[0];
	last = m->heap[--m->hsn];
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= m->hsn)
			break;
		if (c + 1 < m->hsn && out_less(&m->heap[c + 1], &m->heap[c]))
			c++;
		if (!out_less(&m->heap[c], &last))
			break;
		m->heap[i] = m->heap[c];
		i = c;
	}
	if (m->hsn)
		m->heap[i] = last;
}

static struct tptp_chunk *chunk_new(struct tptp_map *m)
{
	struct tptp_chunk *c = m->free_chunks;

	if (!c) {
		struct tptp_slab *sl = apc_pages_alloc(sizeof *sl);
		if (!sl)
			return NULL;
		sl->next = m->slabs;
		m->slabs = sl;
		for (size_t i = TPTP_SLAB_CHUNKS; i-- > 0;) {
			sl->c[i].next = c;
			c = &sl->c[i];
		}
	}
	m->free_chunks = c->next;
	c->next = NULL;
	return c;
}

/* Append o to run r, or to a new run when r < 0. */
static int run_append(struct tptp_map *m, int r, const struct tptp_out *o)
{
	struct tptp_run *run;

	if (r < 0) {
		struct tptp_chunk *c = chunk_new(m);
		unsigned nr;
		if (!c)
			return -1;
		nr = apc_runs_open(&m->rq, o->ts);
		run = &m->runs[nr];
		run->head = run->tail = c;
		run->hpos = 0;
		run->tpos = 1;
		c->ev[0] = *o;
		apc_runs_start(&m->rq, nr, run_less, m);
		return 0;
	}
	run = &m->runs[r];
	if (run->tpos == TPTP_CHUNK_EVENTS) {
		struct tptp_chunk *c = chunk_new(m);
		if (!c)
			return -1;
		run->tail->next = c;
		run->tail = c;
		run->tpos = 0;
	}
	run->tail->ev[run->tpos++] = *o;
	apc_runs_appended(&m->rq, (unsigned)r, o->ts);
	return 0;
}

/* Queue o (its seq already set). */
static int queue_push(struct tptp_map *m, const struct tptp_out *o)
{
	int r = apc_runs_find(&m->rq, o->ts);

	if (r < 0 && m->rq.n == APC_RUNS_MAX) {
		if (spill_push(m, o) < 0)
			return -1;
	} else if (run_append(m, r, o) < 0) {
		return -1;
	}
	m->hn++;
	return 0;
}

/* Is the next event out the spill heap's (else a run's)? */
static int queue_from_spill(const struct tptp_map *m)
{
	if (!m->hsn)
		return 0;
	return !m->rq.n || out_less(&m->heap[0], run_head(m, apc_runs_top(&m->rq)));
}

/* The next event out (the queue is not empty). */
static const struct tptp_out *queue_top(const struct tptp_map *m)
{
	return queue_from_spill(m) ? &m->heap[0] : run_head(m, apc_runs_top(&m->rq));
}

static void queue_pop(struct tptp_map *m, struct tptp_out *o)
{
	struct tptp_run *run;
	struct tptp_chunk *c;

	m->hn--;
	if (queue_from_spill(m)) {
		spill_pop(m, o);
		return;
	}
	run = &m->runs[apc_runs_top(&m->rq)];
	*o = run->head->ev[run->hpos++];
	if (run->head == run->tail && run->hpos == run->tpos) {
		/* The run is done: its chunk back to the free list. */
		run->head->next = m->free_chunks;
		m->free_chunks = run->head;
		run->head = run->tail = NULL;
		apc_runs_done(&m->rq, run_less, m);
		return;
	}
	if (run->hpos == TPTP_CHUNK_EVENTS) {
		/* Not the tail chunk (that case is above): a next one exists
		 * and holds at least one event. */
		c = run->head;
		run->head = c->next;
		run->hpos = 0;
		c->next = m->free_chunks;
		m->free_chunks = c;
	}
	apc_runs_down(&m->rq, run_less, m);
}

static void queue_free(struct tptp_map *m)
{
	struct tptp_slab *sl, *n;

	for (sl = m->slabs; sl; sl = n) {
		n = sl->next;
		apc_pages_free(sl, sizeof *sl);
	}
	m->slabs = NULL;
	m->free_chunks = NULL;
	free(m->heap);
}

static int heap_push(struct tptp_map *m, struct tptp_out *o)
{
	/* Nothing may go out before what already went: clamp and count. */
	if (m->have_emitted && o->ts < m->last_emitted) {
		o->ts = m->last_emitted;
		m->st.late++;
		apc_model_unmapped(m->model, "tptp events later than the reorder window (clamped)", 1);
	}
	o->seq = m->seq++;
	if (o->ts > m->newest)
		m->newest = o->ts;
	return queue_push(m, o);
}

/* An event of `type` for `tid` at `ts`, every other field zero. */
static void out_init(struct tptp_out *o, uint64_t ts, uint16_t type, int32_t tid)
{
	memset(o, 0, sizeof *o);
	o->ts = ts;
	o->type = type;
	o->tid = tid;
}

/* A thread's name and its link, both at ts: 0, or -1 when out of memory. */
static int push_thread(struct tptp_map *m, uint64_t ts, int32_t tid, const char *name)
{
	struct tptp_out o;

	out_init(&o, ts, APC_EV_THREAD_NAME, tid);
	o.text = name;
	if (heap_push(m, &o) < 0)
		return -1;
	o.type = APC_EV_LINK;
	return heap_push(m, &o);
}

/* ---- setup ---------------------------------------------------------------- */

static uint32_t decl_counter(struct apc_model *model, const char *type, const char *title,
			     const char *name, const char *desc, enum apc_class cls)
{
	struct apc_counter_decl *d = apc_model_add_counter(model, type);

	if (!d)
		return UINT32_MAX;
	if (apc_strset(&d->title, title) < 0 || apc_strset(&d->name, name) < 0 ||
	    apc_strset(&d->description, desc) < 0 || apc_strset(&d->units, "B") < 0 ||
	    apc_strset(&d->category, "Java heap") < 0)
		return UINT32_MAX;
	d->cls = cls;
	return d->id;
}

struct tptp_map *tptp_map_new(struct apc_model *model, uint64_t window_ns)
{
	struct tptp_map *m = calloc(1, sizeof *m);

	if (!m)
		return NULL;
	m->model = model;
	m->window = window_ns ? window_ns : TPTP_DEFAULT_WINDOW;
	m->next_synth_tid = TPTP_SYNTH_TID;
	m->next_job = 1;
	if (!model->meta.ncores && apc_model_set_cores(model, 1) < 0)
		goto fail;
	m->c_live = decl_counter(model, "tptp_live_heap", "Java heap", "Live heap",
				 "Bytes allocated and not yet freed (objAlloc - objFree)",
				 APC_CLASS_ABSOLUTE);
	m->c_rate = decl_counter(model, "tptp_alloc_rate", "Java heap", "Allocation rate",
				 "Bytes allocated (objAlloc sizes)", APC_CLASS_DELTA);
	if (m->c_live == UINT32_MAX || m->c_rate == UINT32_MAX)
		goto fail;
	return m;
fail:
	free(m);
	return NULL;
}

void tptp_map_free(struct tptp_map *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nthreads; i++)
		free(m->threads[i].stack);
	free(m->threads);
	free(m->methods);
	free(m->early);
	queue_free(m);
	apc_map64_free(&m->thread_ids);
	apc_map64_free(&m->class_ids);
	apc_map64_free(&m->method_ids);
	apc_map64_free(&m->objects);
	apc_map64_free(&m->used_tids);
	pool_free(&m->pool);
	free(m);
}

const struct tptp_stats *tptp_map_stats(const struct tptp_map *m)
{
	return &m->st;
}

size_t tptp_map_pending(const struct tptp_map *m)
{
	return m->hn;
}

const struct tptp_stats *tptp_reader_stats(const struct apc_reader *r)
{
	struct tptp_map *const *mp = r ? r->priv : NULL;

	return mp && *mp ? &(*mp)->st : NULL;
}

int tptp_map_is_header(int kind)
{
	return kind == TPTP_NODE || kind == TPTP_PROCESS_CREATE || kind == TPTP_AGENT_CREATE ||
	       kind == TPTP_TRACE_START || kind == TPTP_OPTION || kind == TPTP_FILTER;
}

static const char *const kind_names[TPTP_KIND_COUNT] = {
	[TPTP_UNKNOWN] = "unknown",
	[TPTP_NODE] = "node",
	[TPTP_PROCESS_CREATE] = "processCreate",
	[TPTP_AGENT_CREATE] = "agentCreate",
	[TPTP_AGENT_DESTROY] = "agentDestroy",
	[TPTP_TRACE_START] = "traceStart",
	[TPTP_TRACE_END] = "traceEnd",
	[TPTP_FILTER] = "filter",
	[TPTP_OPTION] = "option",
	[TPTP_THREAD_START] = "threadStart",
	[TPTP_THREAD_END] = "threadEnd",
	[TPTP_CLASS_DEF] = "classDef",
	[TPTP_METHOD_DEF] = "methodDef",
	[TPTP_OBJ_ALLOC] = "objAlloc",
	[TPTP_METHOD_ENTRY] = "methodEntry",
	[TPTP_METHOD_EXIT] = "methodExit",
	[TPTP_GC_START] = "gcStart",
	[TPTP_OBJ_FREE] = "objFree",
	[TPTP_GC_FINISH] = "gcFinish",
	[TPTP_RUNTIME_INIT_DONE] = "runtimeInitDone",
	[TPTP_RUNTIME_SHUTDOWN] = "runtimeShutdown",
	[TPTP_MON_WAIT] = "monWait",
	[TPTP_MON_WAITED] = "monWaited",
	[TPTP_MON_CONTENDED_ENTER] = "monContendedEnter",
	[TPTP_MON_CONTENDED_ENTERED] = "monContendedEntered",
	[TPTP_AG_METHOD_ENTRY] = "agMethodEntry",
	[TPTP_AG_METHOD_EXIT] = "agMethodExit",
	[TPTP_HD_START] = "hdStart",
	[TPTP_GC_ROOT] = "gcRoot",
	[TPTP_OBJ_REF] = "objRef",
	[TPTP_CUSTOM] = "custom",
	[TPTP_CLASS_UNLOAD] = "classUnload",
};

/* What each kind of record becomes (the mapping in the header comment),
 * for -v and --stats=json. */
static const char *const kind_became[TPTP_KIND_COUNT] = {
	[TPTP_UNKNOWN] = "nothing (counted as not mapped)",
	[TPTP_NODE] = "capture metadata",
	[TPTP_PROCESS_CREATE] = "capture metadata (the process's pid and name)",
	[TPTP_AGENT_CREATE] = "capture metadata",
	[TPTP_AGENT_DESTROY] = "nothing (its time ends open calls)",
	[TPTP_TRACE_START] = "capture metadata (the capture's zero)",
	[TPTP_TRACE_END] = "nothing (its time ends open calls)",
	[TPTP_FILTER] = "capture metadata",
	[TPTP_OPTION] = "capture metadata",
	[TPTP_THREAD_START] = "thread name and link",
	[TPTP_THREAD_END] = "task exit",
	[TPTP_CLASS_DEF] = "names of method jobs",
	[TPTP_METHOD_DEF] = "names of method jobs",
	[TPTP_OBJ_ALLOC] = "counters tptp_live_heap and tptp_alloc_rate",
	[TPTP_METHOD_ENTRY] = "method job start (Java methods view)",
	[TPTP_METHOD_EXIT] = "method job end (Java methods view)",
	[TPTP_GC_START] = "marker and GC job start",
	[TPTP_OBJ_FREE] = "counter tptp_live_heap",
	[TPTP_GC_FINISH] = "GC job end",
	[TPTP_RUNTIME_INIT_DONE] = "marker",
	[TPTP_RUNTIME_SHUTDOWN] = "marker",
	[TPTP_MON_WAIT] = "string annotation",
	[TPTP_MON_WAITED] = "string annotation",
	[TPTP_MON_CONTENDED_ENTER] = "string annotation",
	[TPTP_MON_CONTENDED_ENTERED] = "string annotation",
	[TPTP_AG_METHOD_ENTRY] = "nothing (counted as not mapped)",
	[TPTP_AG_METHOD_EXIT] = "nothing (counted as not mapped)",
	[TPTP_HD_START] = "nothing (counted as not mapped)",
	[TPTP_GC_ROOT] = "nothing (counted as not mapped)",
	[TPTP_OBJ_REF] = "nothing (counted as not mapped)",
	[TPTP_CUSTOM] = "nothing (counted as not mapped)",
	[TPTP_CLASS_UNLOAD] = "nothing (forgets the class name)",
};

void tptp_map_report(struct apc_reader *r)
{
	const struct tptp_stats *st = tptp_reader_stats(r);
	char what[64];

	for (int k = 0; st && k < TPTP_KIND_COUNT; k++) {
		if (!st->kinds[k])
			continue;
		snprintf(what, sizeof what, "tptp %s", k ? kind_names[k] : "unknown element");
		apc_model_count_kind(r->model, what, kind_became[k], st->kinds[k]);
	}
}

int tptp_kind_from_name(const char *name)
{
	for (int k = 1; k < TPTP_KIND_COUNT; k++)
		if (strcmp(kind_names[k], name) == 0)
			return k;
	return TPTP_UNKNOWN;
}

const char *tptp_kind_name(int kind)
{
	return kind > 0 && kind < TPTP_KIND_COUNT ? kind_names[kind] : "unknown";
}

int tptp_parse_time_n(const char *s, size_t len, uint64_t *ns)
{
	const char *e = s + len;
	uint64_t sec = 0, frac = 0;
	int digits = 0, any = 0;

	while (s < e && *s == ' ')
		s++;
	for (; s < e && *s >= '0' && *s <= '9'; s++, any = 1) {
		if (sec > (UINT64_MAX / 1000000000ull - 9) / 10)
			return -1; /* would not fit in ns */
		sec = sec * 10 + (uint64_t)(*s - '0');
	}
	if (s < e && *s == '.') {
		for (s++; s < e && *s >= '0' && *s <= '9'; s++, any = 1)
			if (digits < 9) {
				frac = frac * 10 + (uint64_t)(*s - '0');
				digits++;
			}
	}
	/* Anything after a space is ignored, as it always was, but said:
	 * 1 when more than spaces follow, for the caller to count. */
	if (!any || (s < e && *s != ' '))
		return -1;
	while (s < e && *s == ' ')
		s++;
	for (; digits < 9; digits++)
		frac *= 10;
	*ns = sec * 1000000000ull + frac;
	return s < e;
}

int tptp_parse_time(const char *s, uint64_t *ns)
{
	return tptp_parse_time_n(s, strlen(s), ns);
}

/* ---- binary layouts (spec tables, in order) ---------------------------- */

static const struct {
	int id, kind;
	const char *layout;
} bin_layouts[] = {
	{1001, TPTP_NODE, "s-sHs-i-lT"},
	{1002, TPTP_PROCESS_CREATE, "s-snips-lTs-"},
	{1003, TPTP_AGENT_CREATE, "s-s-sns-lTs-s-"},
	{1004, TPTP_AGENT_DESTROY, "s-lT"},
	{1005, TPTP_TRACE_START, "s-s-lTs-"},
	{1006, TPTP_TRACE_END, "s-lTs-"},
	{1007, TPTP_FILTER, "s-s-s-s-s-s-s-"},
	{1008, TPTP_OPTION, "s-sKsV"},
	{1009, TPTP_THREAD_START, "l-lhlTsGs-l-losns-s-"},
	{1010, TPTP_THREAD_END, "l-lhlTs-s-"},
	{1011, TPTP_CLASS_DEF, "l-l-lTi-s-l-lcs-s-s-l-l-sns-i-i-i-s-s-"},
	{1012, TPTP_METHOD_DEF, "snsgb-b-b-b-s-l-l-s-l-lclms-s-"},
	{1014, TPTP_OBJ_ALLOC, "l-lhlTb-l-lolzl-lml-lcs-s-s-"},
	{1015, TPTP_METHOD_ENTRY, "l-lhlTlmikl-lcl-l-lds-s-"},
	{1016, TPTP_METHOD_EXIT, "l-lhlTikl-lml-l-l-lcs-s-s-"},
	{1023, TPTP_GC_START, "l-l-lTs-s-"},
	{1024, TPTP_OBJ_FREE, "l-l-lTl-lol-l-l-s-s-"},
	{1027, TPTP_GC_FINISH, "l-l-lTl-l-l-s-s-"},
	{1030, TPTP_RUNTIME_INIT_DONE, "l-lhlTs-s-"},
	{1031, TPTP_RUNTIME_SHUTDOWN, "l-lhlTs-s-"},
	{1032, TPTP_MON_WAIT, "lhlTlolwiNS-L-"},
	{1033, TPTP_MON_WAITED, "lhlTlolwiNS-L-"},
	{1034, TPTP_MON_CONTENDED_ENTER, "lhlTlolOiNS-L-"},
	{1035, TPTP_MON_CONTENDED_ENTERED, "lhlTloiNS-L-"},
	{1036, TPTP_AG_METHOD_ENTRY, "lhlml-l-l-l-l-"},
	{1037, TPTP_AG_METHOD_EXIT, "lhlm"},
	{1038, TPTP_HD_START, "l-lTsnl-"},
	{1039, TPTP_GC_ROOT, "lclos-"},
	{1040, TPTP_OBJ_REF, "l-l-l-"},
	{1041, TPTP_CUSTOM, "s-"},
};

const char *tptp_bin_layout(int id, int *kind)
{
	for (size_t i = 0; i < sizeof bin_layouts / sizeof bin_layouts[0]; i++)
		if (bin_layouts[i].id == id) {
			if (kind)
				*kind = bin_layouts[i].kind;
			return bin_layouts[i].layout;
		}
	return NULL;
}

/* ---- metadata ------------------------------------------------------------- */

/* A header record fills the metadata.  0, or -1 on allocation failure. */
static int header_record(struct tptp_map *m, const struct tptp_rec *r)
{
	struct apc_model *model = m->model;
	char num[32];

	switch (r->kind) {
	case TPTP_NODE:
		if (r->hostname && *r->hostname)
			apc_strset(&model->meta.target_name, r->hostname);
		break;
	case TPTP_PROCESS_CREATE:
		if ((r->has & TPTP_HAS_PID) && r->pid > 0 && r->pid <= INT32_MAX) {
			m->pid = (int32_t)r->pid;
			snprintf(num, sizeof num, "%" PRId64, r->pid);
			apc_model_add_attr(model, "tptp.pid", num);
		} else if ((r->has & TPTP_HAS_PID) && r->pid != 0) {
			/* 0 is the binary format's "unused"; a negative pid
			 * or one past 2^31 is no process's: the capture's own
			 * pid is used, as without one (see tptp_map_begin) */
			apc_model_unmapped(model, "tptp processCreate pids out of range (ignored)", 1);
		}
		/* the name names the process whatever its pid */
		if (r->name && *r->name &&
		    !(m->process_name = pool_intern(&m->pool, r->name, strlen(r->name))))
			return -1;
		break;
	case TPTP_AGENT_CREATE:
		if (r->name)
			apc_model_add_attr(model, "tptp.agent", r->name);
		break;
	case TPTP_TRACE_START:
		if ((r->has & TPTP_HAS_TIME) && !m->have_trace_start) {
			m->trace_start = r->time;
			m->have_trace_start = 1;
		}
		break;
	case TPTP_OPTION:
		if (r->key && r->value) {
			char key[256];
			snprintf(key, sizeof key, "tptp.option.%s", r->key);
			apc_model_add_attr(model, key, r->value);
		}
		break;
	case TPTP_FILTER:
		/* the profiler's own class/method filter: nothing to show */
		apc_model_unmapped(model, "tptp filter records (profiler settings, not kept)", 1);
		break;
	default:
		break;
	}
	return 0;
}

static int map_data(struct tptp_map *m, const struct tptp_rec *r, struct apc_err *err);

int tptp_map_begun(const struct tptp_map *m)
{
	return m->begun;
}

int tptp_map_begin(struct tptp_map *m, uint64_t first_time, struct apc_err *err)
{
	struct apc_meta *meta = &m->model->meta;
	uint64_t t0 = m->have_trace_start ? m->trace_start : first_time;
	const char *name;
	struct tptp_out o;

	if (m->begun)
		return APC_OK;
	m->begun = 1;
	/* The pid is final now (later header records are not applied):
	 * keep thread tids off it. */
	if (!m->pid)
		m->pid = m->next_synth_tid++;
	if (apc_map64_put(&m->used_tids, (uint64_t)m->pid, 1) < 0)
		return apc_err_set(err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
	meta->wall_clock_ns = t0;
	meta->monotonic_delta = t0;
	if (meta->created < 0)
		meta->created = (int64_t)(t0 / 1000000000ull);
	if (!meta->target_name)
		apc_strset(&meta->target_name, "java");
	m->last_ts = m->newest = t0;

	out_init(&o, t0, APC_EV_COOKIE_NAME, 0);
	o.text = pool_intern(&m->pool, "java", 4);
	if (o.text)
		heap_push(m, &o);
	/* The process's own tid (the connection of its annotations): named
	 * and linked like a thread's, or Streamline shows it unnamed. */
	name = m->process_name ? m->process_name
			       : pool_intern(&m->pool, TPTP_PROCESS_NAME, strlen(TPTP_PROCESS_NAME));
	if (!name || push_thread(m, t0, m->pid, name) < 0)
		return apc_err_set(err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
	out_init(&o, t0, APC_EV_ANNOTATION, m->pid);
	o.code = APC_ANN_CAM_VIEW;
	o.text = pool_intern(&m->pool, "Java methods", 12);
	if (o.text)
		heap_push(m, &o);
	/* Nothing above is the trace's: without anything after it, the
	 * process's link is not written (see tptp_map_drain()). */
	m->begin_seq = m->seq;

	/* The records that waited for a time: theirs is t0 now. */
	for (size_t i = 0; i < m->nearly; i++) {
		int rc = map_data(m, &m->early[i], err);
		if (rc < 0)
			return rc;
	}
	free(m->early);
	m->early = NULL;
	m->nearly = m->early_cap = 0;
	return APC_OK;
}

/* Kinds whose records become events, which need a time. */
static int makes_events(int kind)
{
	switch (kind) {
	case TPTP_THREAD_START: case TPTP_THREAD_END: case TPTP_METHOD_ENTRY: case TPTP_METHOD_EXIT:
	case TPTP_OBJ_ALLOC: case TPTP_OBJ_FREE: case TPTP_GC_START: case TPTP_GC_FINISH:
	case TPTP_MON_WAIT: case TPTP_MON_WAITED: case TPTP_MON_CONTENDED_ENTER:
	case TPTP_MON_CONTENDED_ENTERED: case TPTP_RUNTIME_INIT_DONE: case TPTP_RUNTIME_SHUTDOWN:
		return 1;
	default:
		return 0;
	}
}

/* Keep a copy of r (its strings interned) until the zero is known.
 * 0, or -1 on allocation failure. */
static int early_keep(struct tptp_map *m, const struct tptp_rec *r)
{
	struct tptp_rec *e;

	e = apc_table_grow(m->early, &m->early_cap, sizeof *e, m->nearly + 1, TPTP_EARLY_MAX);
	if (!e)
		return -1;
	m->early = e;
	e = &m->early[m->nearly];
	*e = *r;
	{
		const char **strs[] = {&e->elem, &e->name, &e->signature, &e->hostname, &e->key,
				       &e->value, &e->group};
		for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
			if (*strs[i] && !(*strs[i] = pool_intern(&m->pool, *strs[i], strlen(*strs[i]))))
				return -1;
	}
	m->nearly++;
	return 0;
}

/* ---- mapping ------------------------------------------------------------------ */

static int map_nomem(struct apc_err *err)
{
	return apc_err_set(err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory mapping tptp records");
}

/* The event time of a record: its own, else the thread's or the last one;
 * never before the trace start (the model's zero). */
static uint64_t rec_time(struct tptp_map *m, const struct tptp_rec *r, struct tptp_thread *th)
{
	uint64_t t;

	if (r->has & TPTP_HAS_TIME)
		t = r->time;
	else
		t = th ? th->last_ts : m->last_ts;
	if (t < m->model->meta.monotonic_delta) {
		apc_model_unmapped(m->model, "tptp times before the trace start (clamped)", 1);
		t = m->model->meta.monotonic_delta;
	}
	if (t > m->last_ts)
		m->last_ts = t;
	if (th && t > th->last_ts)
		th->last_ts = t;
	return t;
}

static int push_ann(struct tptp_map *m, uint64_t ts, uint8_t code, int32_t tid, const char *text)
{
	struct tptp_out o;

	out_init(&o, ts, APC_EV_ANNOTATION, tid);
	o.code = code;
	o.text = text ? pool_intern(&m->pool, text, strlen(text)) : NULL;
	if (text && !o.text)
		return -1;
	return heap_push(m, &o);
}

static int push_track(struct tptp_map *m, uint64_t ts, int32_t tid, int32_t track, int32_t parent,
		      const char *name)
{
	struct tptp_out o;

	out_init(&o, ts, APC_EV_ANNOTATION, tid);
	o.code = APC_ANN_CAM_TRACK;
	o.track = track;
	o.parent = parent;
	o.text = pool_intern(&m->pool, name, strlen(name));
	return o.text ? heap_push(m, &o) : -1;
}

static int push_job(struct tptp_map *m, uint64_t end, uint64_t start, int32_t tid, int32_t track,
		    const char *name, uint32_t color)
{
	struct tptp_out o;

	out_init(&o, end, APC_EV_ANNOTATION, tid);
	o.code = APC_ANN_CAM_JOB;
	o.track = track;
	o.start = start;
	o.dur = end >= start ? end - start : 0;
	o.job = m->next_job;
	m->next_job = m->next_job == INT32_MAX ? 1 : m->next_job + 1;
	o.text = name;
	o.color = color;
	o.has_color = 1;
	m->st.jobs++;
	return heap_push(m, &o);
}

static int push_counter(struct tptp_map *m, uint64_t ts, uint32_t counter, int64_t value)
{
	struct tptp_out o;

	out_init(&o, ts, APC_EV_COUNTER, 0);
	o.counter = counter;
	o.value = value;
	return heap_push(m, &o);
}

/* A thread by TPTP id; created (and counted) when used without
 * threadStart, so its calls still show. */
static struct tptp_thread *thread_get(struct tptp_map *m, uint64_t id, int create, uint64_t ts,
				      const char *name)
{
	uint64_t idx;
	struct tptp_thread *th;
	char buf[64];
	int32_t tid;

	if (!create && apc_map64_find(&m->thread_ids, id, &idx))
		return &m->threads[idx];
	if (m->nthreads == m->threads_cap) {
		size_t cap = m->threads_cap ? m->threads_cap * 2 : 16;
		struct tptp_thread *nt = realloc(m->threads, cap * sizeof *nt);
		if (!nt)
			return NULL;
		m->threads = nt;
		m->threads_cap = cap;
	}
	/* The TPTP id when it fits and is fresh: users can match it with the
	 * profiler's views; otherwise a synthetic one. */
	if (id > 0 && id < TPTP_SYNTH_TID && !apc_map64_find(&m->used_tids, id, NULL)) {
		tid = (int32_t)id;
	} else {
		tid = m->next_synth_tid < INT32_MAX ? m->next_synth_tid++ : INT32_MAX;
		/* The tid shown is not the TPTP id: say so, by reason. */
		apc_model_unmapped(m->model,
				   id == 0 ? "tptp thread ids of 0 or none (given synthetic tids)"
				   : id >= TPTP_SYNTH_TID
					   ? "tptp thread ids of 2^30 or more (given synthetic tids)"
					   : "tptp thread ids reused or equal to the pid (given synthetic tids)",
				   1);
	}
	if (apc_map64_put(&m->used_tids, (uint64_t)tid, 1) < 0 ||
	    apc_map64_put(&m->thread_ids, id, m->nthreads) < 0)
		return NULL;
	th = &m->threads[m->nthreads];
	memset(th, 0, sizeof *th);
	th->id = id;
	th->tid = tid;
	th->last_ts = ts;
	th->track = (int32_t)((m->nthreads + 1) % (INT32_MAX / TPTP_TRACK_STRIDE)) * TPTP_TRACK_STRIDE;
	m->nthreads++;
	m->st.threads++;
	if (!name || !*name) {
		snprintf(buf, sizeof buf, "thread %" PRIu64, id);
		name = buf;
	}
	th->name = pool_intern(&m->pool, name, strlen(name));
	if (!th->name)
		return NULL;
	if (push_thread(m, ts, tid, th->name) < 0)
		return NULL;
	snprintf(buf, sizeof buf, "%s (%d)", th->name, (int)tid);
	if (push_track(m, ts, tid, th->track, -1, buf) < 0)
		return NULL;
	return th;
}

static struct tptp_thread *thread_use(struct tptp_map *m, const struct tptp_rec *r)
{
	uint64_t idx;
	uint64_t id = (r->has & TPTP_HAS_THREAD) ? r->thread_id : 0;

	if (apc_map64_find(&m->thread_ids, id, &idx))
		return &m->threads[idx];
	apc_model_unmapped(m->model, "tptp threads used before threadStart (named by id)", 1);
	return thread_get(m, id, 1, (r->has & TPTP_HAS_TIME) ? r->time : m->last_ts, NULL);
}

/* Converters write <init>/<clinit> as -init-/-clinit- (XML-safe). */
static const char *java_method_name(const char *n)
{
	if (strcmp(n, "-init-") == 0)
		return "<init>";
	if (strcmp(n, "-clinit-") == 0)
		return "<clinit>";
	return n;
}

static uint32_t class_color(const char *cls)
{
	uint64_t h = str_hash(cls, strlen(cls));
	/* Mid-range RGB so text stays readable; T byte 0x1b = plain RGB. */
	uint32_t r = 64 + (uint32_t)(h & 0x7f), g = 64 + (uint32_t)((h >> 8) & 0x7f),
		 b = 64 + (uint32_t)((h >> 16) & 0x7f);
	return r << 24 | g << 16 | b << 8 | 0x1b;
}

/* A new, zeroed method entry (pointers into m->methods last until the
 * next one is added); NULL on allocation failure. */
static struct tptp_method *method_add(struct tptp_map *m)
{
	struct tptp_method *me;

	/* calls hold a method's index as 32 bits */
	me = apc_table_grow(m->methods, &m->methods_cap, sizeof *me, m->nmethods + 1, UINT32_MAX);
	if (!me)
		return NULL;
	m->methods = me;
	me = &m->methods[m->nmethods++];
	memset(me, 0, sizeof *me);
	return me;
}

#define TPTP_NOID_NAME "(unknown method)"

/* The method's job name and colour, resolved at its first call (classes
 * may be defined after the method in lazy writers). */
static struct tptp_method *method_get(struct tptp_map *m, const struct tptp_rec *r)
{
	uint64_t idx;
	struct tptp_method *me;
	char buf[1024];
	const char *cls = NULL;

	if (!(r->has & TPTP_HAS_METHOD)) {
		/* XML that left the id out (binary always has one): a call
		 * of some method, shown under one name of its own.  Taking
		 * it as id 0 would rename the calls of a real method 0. */
		apc_model_unmapped(m->model, "tptp methodEntry without a method id (named " TPTP_NOID_NAME ")", 1);
		if (!m->have_noid) {
			if (!(me = method_add(m)))
				return NULL;
			me->name = me->job_name = pool_intern(&m->pool, TPTP_NOID_NAME, strlen(TPTP_NOID_NAME));
			me->color = class_color("");
			if (!me->name)
				return NULL;
			m->noid = (size_t)(me - m->methods);
			m->have_noid = 1;
		}
		return &m->methods[m->noid];
	}
	if (!apc_map64_find(&m->method_ids, r->method_id, &idx)) {
		/* Undefined method: give it a placeholder definition. */
		snprintf(buf, sizeof buf, "method%" PRIu64, r->method_id);
		apc_model_unmapped(m->model, "tptp calls of undefined methods (named by id)", 1);
		if (!(me = method_add(m)))
			return NULL;
		idx = (uint64_t)(me - m->methods);
		me->name = pool_intern(&m->pool, buf, strlen(buf));
		if (!me->name || apc_map64_put(&m->method_ids, r->method_id, idx) < 0)
			return NULL;
	}
	me = &m->methods[idx];
	if (me->job_name)
		return me;
	{
		uint64_t cv;
		uint64_t cid = me->has_class ? me->class_id : r->class_id;
		int have = me->has_class || (r->has & TPTP_HAS_CLASS);
		if (have && apc_map64_find(&m->class_ids, cid, &cv))
			cls = (const char *)(uintptr_t)cv;
	}
	if (cls)
		snprintf(buf, sizeof buf, "%s.%s", cls, java_method_name(me->name));
	else
		snprintf(buf, sizeof buf, "%s", java_method_name(me->name));
	me->job_name = pool_intern(&m->pool, buf, strlen(buf));
	me->color = class_color(cls ? cls : "");
	return me->job_name ? me : NULL;
}

static int32_t depth_track(struct tptp_thread *th, size_t depth)
{
	size_t d = depth < TPTP_TRACK_STRIDE - 1 ? depth : TPTP_TRACK_STRIDE - 1;
	return th->track + (int32_t)d;
}

/* Close the call at stack position pos (0-based) at time t. */
static int close_call(struct tptp_map *m, struct tptp_thread *th, size_t pos, uint64_t t)
{
	struct tptp_call *c = &th->stack[pos];
	struct tptp_method *me = &m->methods[c->method];

	return push_job(m, t, c->start, th->tid, depth_track(th, pos + 1), me->job_name, me->color);
}

static int close_all(struct tptp_map *m, struct tptp_thread *th, uint64_t t)
{
	while (th->depth) {
		th->depth--;
		if (close_call(m, th, th->depth, t < th->stack[th->depth].start ? th->stack[th->depth].start : t) < 0)
			return -1;
		m->st.calls_open_at_end++;
		apc_model_unmapped(m->model, "tptp calls still open at the end (closed at the last time)", 1);
	}
	return 0;
}

static int method_entry(struct tptp_map *m, const struct tptp_rec *r)
{
	struct tptp_thread *th = thread_use(m, r);
	struct tptp_method *me;
	struct tptp_call *c;
	uint64_t t;

	if (!th)
		return -1;
	t = rec_time(m, r, th);
	me = method_get(m, r);
	if (!me)
		return -1;
	if (th->depth == th->cap) {
		size_t cap = th->cap ? th->cap * 2 : 16;
		struct tptp_call *ns;
		if (cap > (1u << 16)) {
			/* Runaway recursion without exits (JVM stacks stop well
			 * before this): keep memory bounded. */
			apc_model_unmapped(m->model, "tptp calls deeper than 65536 (dropped)", 1);
			return 0;
		}
		ns = realloc(th->stack, cap * sizeof *ns);
		if (!ns)
			return -1;
		th->stack = ns;
		th->cap = cap;
	}
	c = &th->stack[th->depth++];
	c->method = (uint32_t)(me - m->methods);
	c->method_id = r->method_id;
	c->has_method_id = !!(r->has & TPTP_HAS_METHOD);
	c->ticket = r->ticket;
	c->has_ticket = (r->has & TPTP_HAS_TICKET) && r->ticket != 0; /* see method_exit() */
	c->start = t;
	if (th->depth > th->tracks_declared && th->depth < TPTP_TRACK_STRIDE) {
		char buf[32];
		snprintf(buf, sizeof buf, "depth %zu", th->depth);
		th->tracks_declared = (uint32_t)th->depth;
		if (push_track(m, t, th->tid, depth_track(th, th->depth), th->track, buf) < 0)
			return -1;
	}
	return 0;
}

static int method_exit(struct tptp_map *m, const struct tptp_rec *r)
{
	struct tptp_thread *th = thread_use(m, r);
	uint64_t t;
	size_t k;
	int by_ticket, by_method;

	if (!th)
		return -1;
	t = rec_time(m, r, th);
	/*
	 * Match by ticket when the trace has tickets (TICKET option), else by
	 * method id; search down the stack so a missed exit (exception
	 * unwinding) does not desynchronise everything above it.
	 * A .trcbin carries every attribute, the unused ones as 0 (the
	 * spec's default), so there 0 cannot tell "no ticket" from "ticket
	 * 0".  A ticket 0 is taken as none in XML too, or the same events
	 * would pair differently from the two inputs; the converters' XML
	 * gives ticket 0 to a thread's first call, which its method id
	 * matches as well.  The spec also marks methodExit's Method ID
	 * unused: 0 there is none, unless a method 0 is defined.
	 */
	by_ticket = (r->has & TPTP_HAS_TICKET) && r->ticket != 0;
	by_method = (r->has & TPTP_HAS_METHOD) &&
		    (r->method_id != 0 || apc_map64_find(&m->method_ids, 0, NULL));
	for (k = th->depth; k > 0; k--) {
		struct tptp_call *c = &th->stack[k - 1];
		if (by_ticket && c->has_ticket) {
			if (c->ticket == r->ticket)
				break;
		} else if (by_method) {
			if (c->has_method_id && c->method_id == r->method_id)
				break;
		} else {
			break; /* nothing to match on: the innermost call */
		}
	}
	if (k == 0) {
		m->st.exits_unmatched++;
		apc_model_unmapped(m->model, "tptp method exits without a matching entry", 1);
		return 0;
	}
	while (th->depth > k) {
		th->depth--;
		if (close_call(m, th, th->depth, t) < 0)
			return -1;
		m->st.calls_unwound++;
		apc_model_unmapped(m->model, "tptp calls left without exit (closed by an outer exit)", 1);
	}
	th->depth--;
	m->st.calls_matched++;
	return close_call(m, th, th->depth, t);
}

static int obj_alloc(struct tptp_map *m, const struct tptp_rec *r)
{
	uint64_t t = rec_time(m, r, NULL), old, old_live = 0;
	uint64_t size = (r->has & TPTP_HAS_SIZE) ? r->size : 0;

	if (size > INT64_MAX / 4) {
		/* Nonsense size (no heap is an exabyte): do not poison the
		 * counters, but say so. */
		apc_model_unmapped(m->model, "tptp objAlloc sizes too large (taken as 0)", 1);
		size = 0;
	}
	if (r->has & TPTP_HAS_OBJECT) {
		if (apc_map64_find(&m->objects, r->object_id, &old)) {
			apc_model_unmapped(m->model, "tptp objAlloc of a live object id (old one freed)", 1);
			m->st.live_heap -= (int64_t)old;
			old_live = old;
		}
		if (apc_map64_put(&m->objects, r->object_id, size) < 0)
			return -1;
	}
	m->st.live_heap += (int64_t)size;
	if (push_counter(m, t, m->c_rate, (int64_t)size) < 0)
		return -1;
	/* The live-heap event carries the change: the absolute value is
	 * summed at emission, in time order, not in file order. */
	return push_counter(m, t, m->c_live, (int64_t)size - (int64_t)old_live);
}

static int obj_free(struct tptp_map *m, const struct tptp_rec *r)
{
	uint64_t t = rec_time(m, r, NULL), size;

	if (!(r->has & TPTP_HAS_OBJECT) || !apc_map64_find(&m->objects, r->object_id, &size)) {
		apc_model_unmapped(m->model, "tptp objFree of an unknown object", 1);
		return 0;
	}
	apc_map64_del(&m->objects, r->object_id);
	m->st.live_heap -= (int64_t)size;
	return push_counter(m, t, m->c_live, -(int64_t)size);
}

/* The open GC as one job on the GC track, ending at t. */
static int gc_close(struct tptp_map *m, uint64_t t)
{
	m->gc_open = 0;
	m->st.gc_count++;
	return push_job(m, t, m->gc_start, m->pid, TPTP_GC_TRACK, pool_intern(&m->pool, "GC", 2),
			0xc0404000u | 0x1b);
}

static int gc_event(struct tptp_map *m, const struct tptp_rec *r)
{
	uint64_t t = rec_time(m, r, NULL);

	if (r->kind == TPTP_GC_START) {
		if (!m->gc_track_declared) {
			if (push_track(m, t, m->pid, TPTP_GC_TRACK, -1, "GC") < 0)
				return -1;
			m->gc_track_declared = 1;
		}
		if (m->gc_open) {
			/* A lost gcFinish: the open GC ends where the next one
			 * starts (one GC track holds one job at a time). */
			apc_model_unmapped(m->model, "tptp gcStart without gcFinish (closed at the next gcStart)", 1);
			if (gc_close(m, t) < 0)
				return -1;
		}
		m->gc_open = 1;
		m->gc_start = t;
		return push_ann(m, t, APC_ANN_MARKER, m->pid, "GC start");
	}
	if (!m->gc_open) {
		apc_model_unmapped(m->model, "tptp gcFinish without gcStart", 1);
		return 0;
	}
	return gc_close(m, t);
}

static int monitor_event(struct tptp_map *m, const struct tptp_rec *r)
{
	struct tptp_thread *th = thread_use(m, r);
	char buf[160];
	uint64_t t;

	if (!th)
		return -1;
	t = rec_time(m, r, th);
	switch (r->kind) {
	case TPTP_MON_WAIT:
		snprintf(buf, sizeof buf, "monitor wait: object %" PRIu64 ", timeout %" PRIu64,
			 r->object_id, r->timeout);
		break;
	case TPTP_MON_WAITED:
		snprintf(buf, sizeof buf, "monitor waited: object %" PRIu64, r->object_id);
		break;
	case TPTP_MON_CONTENDED_ENTER:
		snprintf(buf, sizeof buf, "monitor contended enter: object %" PRIu64 ", owner thread %" PRIu64,
			 r->object_id, r->owner_id);
		break;
	default:
		snprintf(buf, sizeof buf, "monitor contended entered: object %" PRIu64, r->object_id);
		break;
	}
	return push_ann(m, t, APC_ANN_STR, th->tid, buf);
}

int tptp_map_record(struct tptp_map *m, const struct tptp_rec *r, struct apc_err *err)
{
	m->st.records++;
	if (r->kind >= 0 && r->kind < TPTP_KIND_COUNT)
		m->st.kinds[r->kind]++;
	if (tptp_map_is_header(r->kind)) {
		if (!m->begun) {
			if (header_record(m, r) < 0)
				return map_nomem(err);
		} else {
			/* The writer has the metadata by now (the summary goes
			 * out first), and a pid or a zero that changed midway
			 * would split the capture: count it, change nothing. */
			char what[96];
			snprintf(what, sizeof what, "tptp %s after the first data record (ignored)",
				 tptp_kind_name(r->kind));
			apc_model_unmapped(m->model, what, 1);
		}
		return APC_OK;
	}
	if (!m->begun) {
		/*
		 * The zero is the traceStart time, else the first time seen.
		 * Records before that which would become events wait for it
		 * (a zero of 0 for want of a time would put the capture in
		 * 1970); definitions need no time and are mapped at once.
		 * A trace with no times at all (TIMESTAMPS off) is held up
		 * for TPTP_EARLY_MAX records only, then starts at 0.
		 */
		if (m->have_trace_start || (r->has & TPTP_HAS_TIME)) {
			int rc = tptp_map_begin(m, (r->has & TPTP_HAS_TIME) ? r->time : 0, err);
			if (rc < 0)
				return rc;
		} else if (m->nearly < TPTP_EARLY_MAX && (m->nearly || makes_events(r->kind))) {
			return early_keep(m, r) < 0 ? map_nomem(err) : APC_OK;
		} else if (m->nearly) {
			int rc = tptp_map_begin(m, 0, err);
			if (rc < 0)
				return rc;
		}
	}
	return map_data(m, r, err);
}

/* A thread ends at t: its open calls close, then its task ends in
 * Streamline's view too (same time, later arrival).  0 or -1. */
static int thread_end(struct tptp_map *m, struct tptp_thread *th, uint64_t t)
{
	struct tptp_out o;

	if (close_all(m, th, t) < 0)
		return -1;
	out_init(&o, t, APC_EV_TASK_EXIT, th->tid);
	return heap_push(m, &o);
}

/* One data record, once the zero is known (or for a definition, which
 * needs none). */
static int map_data(struct tptp_map *m, const struct tptp_rec *r, struct apc_err *err)
{
	int rc = 0;
	uint64_t idx;

	switch (r->kind) {
	case TPTP_THREAD_START: {
		uint64_t t = rec_time(m, r, NULL);
		uint64_t id = (r->has & TPTP_HAS_THREAD) ? r->thread_id : 0;
		if (apc_map64_find(&m->thread_ids, id, &idx)) {
			/* Started again without threadEnd: the old thread ends
			 * here, and a new one begins. */
			if (thread_end(m, &m->threads[idx], t) < 0)
				return map_nomem(err);
			apc_model_unmapped(m->model, "tptp threadStart of a live thread id (old one ended)", 1);
		}
		rc = thread_get(m, id, 1, t, r->name) ? 0 : -1;
		break;
	}
	case TPTP_THREAD_END: {
		uint64_t id = (r->has & TPTP_HAS_THREAD) ? r->thread_id : 0;
		if (!apc_map64_find(&m->thread_ids, id, &idx)) {
			apc_model_unmapped(m->model, "tptp threadEnd of an unknown thread", 1);
			break;
		}
		rc = thread_end(m, &m->threads[idx], rec_time(m, r, &m->threads[idx]));
		/* The id may be reused by a later threadStart. */
		apc_map64_del(&m->thread_ids, id);
		break;
	}
	case TPTP_CLASS_DEF:
		if ((r->has & TPTP_HAS_CLASS) && r->name) {
			const char *n = pool_intern(&m->pool, r->name, strlen(r->name));
			if (!n || apc_map64_put(&m->class_ids, r->class_id, (uint64_t)(uintptr_t)n) < 0)
				rc = -1;
		} else {
			apc_model_unmapped(m->model, "tptp classDef without a class id or name (ignored)", 1);
		}
		if (r->has & TPTP_HAS_TIME)
			rec_time(m, r, NULL);
		break;
	case TPTP_CLASS_UNLOAD:
		if (r->has & TPTP_HAS_CLASS)
			apc_map64_del(&m->class_ids, r->class_id);
		break;
	case TPTP_METHOD_DEF: {
		struct tptp_method *me;
		if (!(r->has & TPTP_HAS_METHOD)) {
			apc_model_unmapped(m->model, "tptp methodDef without a method id (ignored)", 1);
			break;
		}
		/* Always a new entry: a redefined id must not rename the jobs
		 * of calls still open under the old definition. */
		me = method_add(m);
		if (!me)
			return map_nomem(err);
		me->class_id = r->class_id;
		me->has_class = !!(r->has & TPTP_HAS_CLASS);
		me->name = pool_intern(&m->pool, r->name ? r->name : "?", r->name ? strlen(r->name) : 1);
		if (!me->name || apc_map64_put(&m->method_ids, r->method_id, (uint64_t)(me - m->methods)) < 0)
			return map_nomem(err);
		break;
	}
	case TPTP_METHOD_ENTRY:
		rc = method_entry(m, r);
		break;
	case TPTP_METHOD_EXIT:
		rc = method_exit(m, r);
		break;
	case TPTP_OBJ_ALLOC:
		rc = obj_alloc(m, r);
		break;
	case TPTP_OBJ_FREE:
		rc = obj_free(m, r);
		break;
	case TPTP_GC_START:
	case TPTP_GC_FINISH:
		rc = gc_event(m, r);
		break;
	case TPTP_MON_WAIT:
	case TPTP_MON_WAITED:
	case TPTP_MON_CONTENDED_ENTER:
	case TPTP_MON_CONTENDED_ENTERED:
		rc = monitor_event(m, r);
		break;
	case TPTP_RUNTIME_INIT_DONE:
		rc = push_ann(m, rec_time(m, r, NULL), APC_ANN_MARKER, m->pid, "JVM init done");
		break;
	case TPTP_RUNTIME_SHUTDOWN:
		rc = push_ann(m, rec_time(m, r, NULL), APC_ANN_MARKER, m->pid, "JVM shutdown");
		break;
	case TPTP_TRACE_END:
	case TPTP_AGENT_DESTROY:
		if (r->has & TPTP_HAS_TIME)
			rec_time(m, r, NULL);
		break;
	case TPTP_HD_START:
	case TPTP_GC_ROOT:
	case TPTP_OBJ_REF:
		apc_model_unmapped(m->model, "tptp heap dump records", 1);
		break;
	case TPTP_AG_METHOD_ENTRY:
	case TPTP_AG_METHOD_EXIT:
		apc_model_unmapped(m->model, "tptp aggregate method records", 1);
		break;
	case TPTP_CUSTOM:
		apc_model_unmapped(m->model, "tptp custom records", 1);
		break;
	default: {
		char what[96];
		snprintf(what, sizeof what, "tptp element %.60s", r->elem ? r->elem : "(unknown)");
		apc_model_unmapped(m->model, what, 1);
		break;
	}
	}
	return rc < 0 ? map_nomem(err) : APC_OK;
}

/* ---- output ---------------------------------------------------------------------- */

static int emit(struct tptp_map *m, struct apc_batch *b, const struct tptp_out *o)
{
	struct apc_event *e = apc_batch_add(b, o->type, o->ts,
					    o->type == APC_EV_COUNTER ? 0 : APC_NO_CORE);
	struct apc_ann *a;

	if (!e)
		return -1;
	switch (o->type) {
	case APC_EV_COUNTER:
		e->u.counter.counter = o->counter;
		e->u.counter.pid = m->pid;
		e->u.counter.value = o->value;
		if (o->counter == m->c_live) {
			m->emit_live += o->value;
			e->u.counter.value = m->emit_live;
		}
		break;
	case APC_EV_THREAD_NAME:
		e->u.name.id = o->tid;
		e->u.name.name = apc_batch_strdup(b, o->text, strlen(o->text));
		if (!e->u.name.name)
			return -1;
		break;
	case APC_EV_COOKIE_NAME:
		e->u.name.id = TPTP_COOKIE;
		e->u.name.name = apc_batch_strdup(b, o->text, strlen(o->text));
		if (!e->u.name.name)
			return -1;
		break;
	case APC_EV_LINK:
		e->u.link.cookie = TPTP_COOKIE;
		e->u.link.pid = m->pid;
		e->u.link.tid = o->tid;
		break;
	case APC_EV_TASK_EXIT:
		e->u.sched.tid = o->tid;
		break;
	case APC_EV_ANNOTATION:
		/* The text is interned: it lives until close, so the event
		 * can point at it (no copy per job). */
		a = apc_batch_alloc(b, sizeof *a);
		if (!a)
			return -1;
		APC_ZERO(a);
		a->tid = o->tid;
		a->pid = m->pid;
		a->code = o->code;
		a->view = TPTP_VIEW_UID;
		a->track = o->track;
		a->parent = o->parent;
		a->job = o->job;
		a->primary_dep = -1;
		a->start = o->start;
		a->duration = o->dur;
		a->has_color = o->has_color;
		a->color = o->color;
		a->text = o->text ? o->text : "";
		a->text_len = strlen(a->text);
		e->u.ann = a;
		b->jobs += a->code == APC_ANN_CAM_JOB;
		break;
	default:
		break;
	}
	m->last_emitted = o->ts;
	m->have_emitted = 1;
	return 0;
}

long tptp_map_drain(struct tptp_map *m, struct apc_batch *b, int final)
{
	long n = 0;
	struct tptp_out o;

	if (final && !m->final_closed) {
		m->final_closed = 1;
		for (size_t i = 0; i < m->nthreads; i++)
			if (close_all(m, &m->threads[i], m->last_ts) < 0)
				return -1;
		if (m->gc_open) {
			apc_model_unmapped(m->model, "tptp gcStart without gcFinish (closed at the last time)", 1);
			if (gc_close(m, m->last_ts) < 0)
				return -1;
		}
	}
	while (m->hn) {
		if (apc_batch_full(b))
			break;
		if (!final) {
			const struct tptp_out *top = queue_top(m);
			int old = (m->newest >= m->window && top->ts <= m->newest - m->window) ||
				  m->hn > TPTP_HEAP_MAX;
			if (!old)
				break;
		}
		queue_pop(m, &o);
		/* The process's own link is there for the trace's events;
		 * with none (an empty or header-only trace) it would be the
		 * capture's only thread activity, and a capture of nothing
		 * the trace holds: left out, nothing is written. */
		if (o.type == APC_EV_LINK && o.seq < m->begin_seq && m->seq == m->begin_seq)
			continue;
		if (emit(m, b, &o) < 0)
			return -1;
		n++;
	}
	return n;
}

int tptp_map_header(struct tptp_map *map, int (*pull)(void *ctx, struct tptp_rec *rec), void *ctx,
		    int *finished, int *pending, struct apc_err *err)
{
	struct tptp_rec rec;
	int rc;

	do {
		rc = pull(ctx, &rec);
		if (rc == 2)
			continue;
		if (rc <= 0)
			break;
		int mrc = tptp_map_record(map, &rec, err);
		if (mrc < 0)
			return mrc;
	} while (!tptp_map_begun(map));
	if (rc < 0 && rc != APC_EDATA)
		return rc;
	if (rc <= 0) {
		/* Only a header, no time (or a break before one). */
		int mrc = tptp_map_begin(map, 0, err);
		if (mrc < 0)
			return mrc;
		*finished = 1;
		*pending = rc; /* APC_EDATA to report at next() */
	}
	return APC_OK;
}

int tptp_map_next(struct tptp_map *map, struct apc_reader *r, struct apc_batch *b,
		  int (*pull)(void *ctx, struct tptp_rec *rec), void *ctx, int *finished,
		  int *pending)
{
	struct tptp_rec rec;
	int rc;

	if (*finished) {
		if (tptp_map_drain(map, b, 1) < 0)
			return apc_err_set(&r->err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
		if (map->hn)
			return APC_OK; /* more next time */
		if (*pending < 0) {
			rc = *pending;
			*pending = 0;
			return rc;
		}
		return b->n ? APC_OK : APC_END;
	}
	for (;;) {
		if (tptp_map_drain(map, b, 0) < 0)
			return apc_err_set(&r->err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
		if (apc_batch_full(b))
			return APC_OK;
		rc = pull(ctx, &rec);
		if (rc == 2)
			continue;
		if (rc == 1) {
			rc = tptp_map_record(map, &rec, &r->err);
			if (rc < 0)
				return rc;
			continue;
		}
		/* End or damage: everything still waiting goes out, batch by
		 * batch; the damage is reported after the last of it. */
		*finished = 1;
		if (tptp_map_drain(map, b, 1) < 0)
			return apc_err_set(&r->err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
		if (map->hn) {
			if (rc < 0)
				*pending = rc;
			return APC_OK;
		}
		if (rc < 0)
			return rc;
		return b->n ? APC_OK : APC_END;
	}
}
