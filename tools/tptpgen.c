/*
 * tptpgen.c - a deterministic TPTP trace generator with ground truth.
 *
 * From a seed it simulates a few Java threads calling methods (nested),
 * allocating and freeing objects and running GCs, then writes the trace
 * as TPTP XML (wrapped in <TRACE> or as a bare element stream, optionally
 * cut short) or as binary .trcbin (both message-length conventions, both
 * byte orders, 32/64-bit platform byte, frequency in Hz or MHz).  Thread
 * buffers are interleaved in chunks, so times go backwards between threads
 * in file order as they do in real traces.  The truth file lists what a
 * reader must find: threads, completed calls per thread, inclusive time
 * per method, live heap at the end, allocated bytes, GC count.
 *
 * Options that change the trace's shape (without them the output is
 * what it always was, byte for byte: the bench and the tests rely on it):
 * --no-process leaves processCreate out (the reader then picks a pid of
 * its own); --process-name NAME gives processCreate that Name attribute
 * (the TI profiler gives none); --encoding NAME names the strings'
 * encoding (binary: system message 1; XML: the declaration) instead of
 * UTF-8, the bytes of --process-name being in it; --monitor-stacks makes each thread wait
 * on a monitor before its first call and contend for or wait on one
 * after some calls, and in binary each of those messages carries the
 * thread's stack: its open calls, innermost first, as the spec's depth,
 * method-name and line arrays.  The XML form of a stack (the spec says
 * only that the binary arrays "replace annotations") is not written:
 * XML monitor records carry their attributes only.  The truth then
 * counts the monitor records and those with a non-empty stack.
 *
 * tests/unit/test_tptp.c includes this file with TPTPGEN_NO_MAIN defined
 * and calls tptpgen_write() directly.
 *
 *   tptpgen [--seed N] [--threads N] [--calls N] [--binary] [--bare]
 *           [--big-endian] [--platform32] [--len-incl-header] [--mhz]
 *           [--leave-open] [--no-process] [--process-name NAME]
 *           [--encoding NAME] [--monitor-stacks] [--truncate N]
 *           [--truth FILE] -o OUT
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tptp.h"

#define TPTPGEN_MAX_THREADS 16
#define TPTPGEN_MAX_METHODS 24
#define TPTPGEN_NCLASSES 4
#define TPTPGEN_MAX_DEPTH 12
#define TPTPGEN_PID 4242
#define TPTPGEN_T0_NS 1185890426304424453ull /* the spec's example time */
#define TPTPGEN_FREQ_HZ 2400000000ull

struct tptpgen_opts {
	uint64_t seed;
	int threads, calls;      /* threads, method entries per thread */
	int binary, bare;
	int big_endian, platform32, len_incl_header, freq_mhz;
	int leave_open;          /* no exits for the calls open at the end */
	int no_process;          /* no processCreate */
	const char *process_name; /* processCreate's Name, or NULL for none */
	int monitor_stacks;      /* monitor records (binary: with stacks) */
	const char *encoding;    /* the strings' encoding named, NULL: UTF-8 */
};

struct tptpgen_truth {
	int threads;
	uint64_t entries, exits, open_at_end;
	uint64_t completed[TPTPGEN_MAX_THREADS];
	int nmethods;
	char method_name[TPTPGEN_MAX_METHODS][64]; /* job names "Class.method" */
	uint64_t incl_ns[TPTPGEN_MAX_METHODS], calls[TPTPGEN_MAX_METHODS];
	int64_t live_heap;
	uint64_t alloc_bytes, allocs, frees, gc_count;
	uint64_t first_ns;       /* traceStart time, ns */
	uint64_t records;        /* elements/messages written */
	int64_t pid;             /* processCreate's, 0 without one */
	const char *process_name; /* processCreate's Name, NULL without one */
	uint64_t monitor_events; /* monWait, monWaited, monContendedEnter(ed) */
	uint64_t monitor_stacks; /* ... written with a non-empty stack */
};

/* One simulated event, in its thread's order. */
struct tptpgen_ev {
	int kind, th, method;
	uint64_t ticks, ticket, depth, obj, size;
	uint64_t timeout, owner; /* monitor records */
};

struct tptpgen_state {
	const struct tptpgen_opts *o;
	struct tptpgen_truth *t;
	uint64_t rng;
	struct tptpgen_ev *ev[TPTPGEN_MAX_THREADS];
	size_t nev[TPTPGEN_MAX_THREADS], cap[TPTPGEN_MAX_THREADS];
	FILE *f;
	int class_defined[TPTPGEN_NCLASSES], method_defined[TPTPGEN_MAX_METHODS];
	int thread_started[TPTPGEN_MAX_THREADS];
	/* Each thread's open calls as written (for monitor stacks), and the
	 * stack the next binary monitor message carries (NULL: none). */
	int wstack[TPTPGEN_MAX_THREADS][TPTPGEN_MAX_DEPTH];
	int wdepth[TPTPGEN_MAX_THREADS];
	const int *mstack;
	int mdepth;
};

static uint64_t tptpgen_rand(struct tptpgen_state *s)
{
	/* xorshift64*: fixed, portable, seedable */
	s->rng ^= s->rng >> 12;
	s->rng ^= s->rng << 25;
	s->rng ^= s->rng >> 27;
	return s->rng * 2685821657736338717ull;
}

static const char *tptpgen_class(int c)
{
	static const char *const names[TPTPGEN_NCLASSES] = {
		"com.example.Main", "com.example.Worker", "java.util.ArrayList", "java.lang.Math"};
	return names[c];
}

/* Method i: class i % NCLASSES; every fifth is a constructor. */
static void tptpgen_method(int i, char *buf, size_t len)
{
	if (i % 5 == 0)
		snprintf(buf, len, "-init-");
	else if (i == 7)
		snprintf(buf, len, "-clinit-");
	else
		snprintf(buf, len, "m%d", i);
}

static void tptpgen_job_name(int i, char *buf, size_t len)
{
	char m[32];
	tptpgen_method(i, m, sizeof m);
	snprintf(buf, len, "%s.%s", tptpgen_class(i % TPTPGEN_NCLASSES),
		 strcmp(m, "-init-") == 0 ? "<init>" : strcmp(m, "-clinit-") == 0 ? "<clinit>" : m);
}

/* ticks -> ns exactly as a reader converts: floor(ticks * 1e9 / f). */
static uint64_t tptpgen_ns(const struct tptpgen_opts *o, uint64_t ticks)
{
	if (!o->binary)
		return ticks;
	return (uint64_t)((unsigned __int128)ticks * 1000000000u / TPTPGEN_FREQ_HZ);
}

static int tptpgen_add(struct tptpgen_state *s, int th, const struct tptpgen_ev *e)
{
	if (s->nev[th] == s->cap[th]) {
		size_t cap = s->cap[th] ? s->cap[th] * 2 : 256;
		struct tptpgen_ev *n = realloc(s->ev[th], cap * sizeof *n);
		if (!n)
			return -1;
		s->ev[th] = n;
		s->cap[th] = cap;
	}
	s->ev[th][s->nev[th]++] = *e;
	return 0;
}

/* A monitor pair at time *now on: wait/waited, or contended
 * enter/entered (the owner another thread).  Monitor records change
 * nothing else of the truth. */
static int tptpgen_monitor(struct tptpgen_state *s, int th, int contended, uint64_t *now)
{
	struct tptpgen_ev e;

	memset(&e, 0, sizeof e);
	e.th = th;
	for (int k = 0; k < 2; k++) {
		*now += 7;
		e.ticks = *now;
		if (contended) {
			e.kind = k ? TPTP_MON_CONTENDED_ENTERED : TPTP_MON_CONTENDED_ENTER;
			e.obj = 9000; /* one lock all threads share */
			e.owner = k ? 0 : (uint64_t)((th + 1) % s->t->threads) + 11;
		} else {
			e.kind = k ? TPTP_MON_WAITED : TPTP_MON_WAIT;
			e.obj = 9100 + (uint64_t)th;
			e.timeout = 1000;
		}
		if (tptpgen_add(s, th, &e) < 0)
			return -1;
	}
	return 0;
}

/* Simulate one thread; truth is kept as the events are made. */
static int tptpgen_thread(struct tptpgen_state *s, int th, uint64_t start)
{
	const struct tptpgen_opts *o = s->o;
	struct tptpgen_truth *t = s->t;
	struct { int method; uint64_t ticket, ticks; } stack[TPTPGEN_MAX_DEPTH];
	uint64_t live_obj[64], live_size[64];
	int depth = 0, nlive = 0, entries = 0;
	uint64_t now = start, ticket = 0, step = o->binary ? 12000 : 5000;
	struct tptpgen_ev e;

	/* A wait before any call: a monitor record with an empty stack. */
	if (o->monitor_stacks && tptpgen_monitor(s, th, 0, &now) < 0)
		return -1;
	while (entries < o->calls || (depth > 0 && !o->leave_open)) {
		uint64_t r = tptpgen_rand(s);
		memset(&e, 0, sizeof e);
		e.th = th;
		now += 1 + r % step;
		e.ticks = now;
		r >>= 16;
		if (r % 11 == 0 && nlive < 64) {
			e.kind = TPTP_OBJ_ALLOC;
			e.obj = (uint64_t)(th + 1) * 1000000 + (uint64_t)(t->allocs + 1);
			e.size = 16 + (r >> 8) % 4096;
			live_obj[nlive] = e.obj;
			live_size[nlive++] = e.size;
			t->allocs++;
			t->alloc_bytes += e.size;
			t->live_heap += (int64_t)e.size;
		} else if (r % 13 == 0 && nlive > 0) {
			int k = (int)((r >> 8) % (uint64_t)nlive);
			e.kind = TPTP_OBJ_FREE;
			e.obj = live_obj[k];
			t->live_heap -= (int64_t)live_size[k];
			t->frees++;
			live_obj[k] = live_obj[nlive - 1];
			live_size[k] = live_size[--nlive];
		} else if (th == 0 && r % 97 == 0) {
			e.kind = TPTP_GC_START;
			if (tptpgen_add(s, th, &e) < 0)
				return -1;
			now += 1 + (r >> 8) % step;
			e.kind = TPTP_GC_FINISH;
			e.ticks = now;
			t->gc_count++;
		} else if (depth > 0 && (r % 3 == 0 || entries >= o->calls || depth == TPTPGEN_MAX_DEPTH)) {
			int mi;
			depth--;
			mi = stack[depth].method;
			e.kind = TPTP_METHOD_EXIT;
			e.method = mi;
			e.ticket = stack[depth].ticket;
			t->exits++;
			t->completed[th]++;
			t->calls[mi]++;
			t->incl_ns[mi] += tptpgen_ns(o, now) - tptpgen_ns(o, stack[depth].ticks);
		} else if (entries < o->calls) {
			int mi = (int)((r >> 8) % TPTPGEN_MAX_METHODS);
			e.kind = TPTP_METHOD_ENTRY;
			e.method = mi;
			e.ticket = ticket++;
			e.depth = (uint64_t)depth + 1;
			stack[depth].method = mi;
			stack[depth].ticket = e.ticket;
			stack[depth].ticks = now;
			depth++;
			entries++;
			t->entries++;
		} else {
			continue;
		}
		if (tptpgen_add(s, th, &e) < 0)
			return -1;
		/* Inside some calls: contend for the shared lock, or wait. */
		if (o->monitor_stacks && e.kind == TPTP_METHOD_ENTRY && entries % 2 == 1 &&
		    tptpgen_monitor(s, th, entries % 4 == 1, &now) < 0)
			return -1;
	}
	t->open_at_end += (uint64_t)depth;
	if (!o->leave_open) {
		memset(&e, 0, sizeof e);
		e.kind = TPTP_THREAD_END;
		e.th = th;
		e.ticks = now + 1;
		if (tptpgen_add(s, th, &e) < 0)
			return -1;
	}
	return 0;
}

/* ---- XML ------------------------------------------------------------------ */

static void tptpgen_xtime(struct tptpgen_state *s, uint64_t ns)
{
	fprintf(s->f, "%" PRIu64 ".%09" PRIu64, ns / 1000000000u, ns % 1000000000u);
}

/* s as an XML attribute value. */
static void tptpgen_xstr(FILE *f, const char *s)
{
	for (; *s; s++)
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f); break;
		}
}

/* ---- binary ----------------------------------------------------------------- */

static void tptpgen_put(struct tptpgen_state *s, uint8_t **p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++) {
		int shift = s->o->big_endian ? 8 * (n - 1 - i) : 8 * i;
		*(*p)++ = (uint8_t)(v >> shift);
	}
}

/* Write one binary message for kind with fields from rec, by the shared
 * layout table (roles pick the values; everything else is the default). */
static void tptpgen_msg(struct tptpgen_state *s, int id, const struct tptp_rec *rec)
{
	uint8_t body[4096], *p = body, hdr[6], *h = hdr;
	const char *lay = tptp_bin_layout(id, NULL);
	uint64_t len;

	for (; lay && lay[0] && lay[1]; lay += 2) {
		uint64_t v = 0;
		const char *str = NULL;
		switch (lay[1]) {
		case 'T': v = rec->time; break;
		case 'h': v = rec->thread_id; break;
		case 'm': v = rec->method_id; break;
		case 'c': v = rec->class_id; break;
		case 'o': v = rec->object_id; break;
		case 'k': v = rec->ticket; break;
		case 'd': v = rec->depth; break;
		case 'z': v = rec->size; break;
		case 'p': v = (uint64_t)rec->pid; break;
		case 'w': v = rec->timeout; break;
		case 'O': v = rec->owner_id; break;
		case 'N': v = s->mstack ? (uint64_t)s->mdepth : 0; break;
		case 'n': str = rec->name; break;
		case 'g': str = rec->signature; break;
		case 'H': str = rec->hostname; break;
		case 'K': str = rec->key; break;
		case 'V': str = rec->value; break;
		case 'G': str = rec->group; break;
		default: break;
		}
		switch (lay[0]) {
		case 'b': tptpgen_put(s, &p, v, 1); break;
		case 'i': tptpgen_put(s, &p, v, 4); break;
		case 'l': tptpgen_put(s, &p, v, 8); break;
		case 's': {
			size_t n = str ? strlen(str) : 0;
			memcpy(p, str ? str : "", n);
			p += n;
			*p++ = 0;
			break;
		}
		case 'S': /* the stack's method names (none without a stack) */
			for (int k = 0; s->mstack && k < s->mdepth; k++) {
				char jn[64];
				tptpgen_job_name(s->mstack[k], jn, sizeof jn);
				memcpy(p, jn, strlen(jn) + 1);
				p += strlen(jn) + 1;
			}
			break;
		case 'L': /* and their line numbers */
			for (int k = 0; s->mstack && k < s->mdepth; k++)
				tptpgen_put(s, &p, 10 * (uint64_t)(s->mstack[k] + 1), 8);
			break;
		default: break;
		}
	}
	len = (uint64_t)(p - body) + (s->o->len_incl_header ? 6 : 0);
	tptpgen_put(s, &h, (uint64_t)id, 2);
	tptpgen_put(s, &h, len, 4);
	fwrite(hdr, 1, 6, s->f);
	fwrite(body, 1, (size_t)(p - body), s->f);
	s->t->records++;
}

/* ---- one record, either encoding --------------------------------------------- */

static void tptpgen_emit(struct tptpgen_state *s, int kind, const struct tptp_rec *r)
{
	static const int ids[TPTP_KIND_COUNT] = {
		[TPTP_NODE] = 1001, [TPTP_PROCESS_CREATE] = 1002, [TPTP_AGENT_CREATE] = 1003,
		[TPTP_AGENT_DESTROY] = 1004, [TPTP_TRACE_START] = 1005, [TPTP_TRACE_END] = 1006,
		[TPTP_OPTION] = 1008, [TPTP_THREAD_START] = 1009, [TPTP_THREAD_END] = 1010,
		[TPTP_CLASS_DEF] = 1011, [TPTP_METHOD_DEF] = 1012, [TPTP_OBJ_ALLOC] = 1014,
		[TPTP_METHOD_ENTRY] = 1015, [TPTP_METHOD_EXIT] = 1016, [TPTP_GC_START] = 1023,
		[TPTP_OBJ_FREE] = 1024, [TPTP_GC_FINISH] = 1027,
		[TPTP_MON_WAIT] = 1032, [TPTP_MON_WAITED] = 1033, [TPTP_MON_CONTENDED_ENTER] = 1034,
		[TPTP_MON_CONTENDED_ENTERED] = 1035,
	};
	FILE *f = s->f;

	if (s->o->binary) {
		tptpgen_msg(s, ids[kind], r);
		return;
	}
	s->t->records++;
	fprintf(f, "<%s", tptp_kind_name(kind));
	switch (kind) {
	case TPTP_NODE:
		fprintf(f, " nodeId=\"\" hostname=\"%s\" ipaddress=\"127.0.0.1\" timezone=\"0\"", r->hostname);
		break;
	case TPTP_PROCESS_CREATE:
		fputs(" processId=\"p1\"", f);
		if (r->name) {
			fputs(" name=\"", f);
			tptpgen_xstr(f, r->name);
			fputc('"', f);
		}
		fprintf(f, " pid=\"%" PRId64 "\" nodeIdRef=\"\"", r->pid);
		break;
	case TPTP_AGENT_CREATE:
		fprintf(f, " agentId=\"a1\" version=\"2.000\" processIdRef=\"p1\" agentName=\"%s\""
			   " agentType=\"Profiler\"", r->name);
		break;
	case TPTP_TRACE_START:
		fprintf(f, " traceId=\"t1\" agentIdRef=\"a1\"");
		break;
	case TPTP_AGENT_DESTROY:
		fprintf(f, " agentIdRef=\"a1\"");
		break;
	case TPTP_OPTION:
		fprintf(f, " key=\"%s\" value=\"%s\"", r->key, r->value);
		break;
	case TPTP_THREAD_START:
		fprintf(f, " threadId=\"%" PRIu64 "\"", r->thread_id);
		break;
	case TPTP_CLASS_DEF:
		fprintf(f, " name=\"%s\" classId=\"%" PRIu64 "\"", r->name, r->class_id);
		break;
	case TPTP_METHOD_DEF:
		fprintf(f, " name=\"%s\" signature=\"%s\" methodId=\"%" PRIu64 "\" classIdRef=\"%" PRIu64 "\"",
			r->name, r->signature, r->method_id, r->class_id);
		break;
	case TPTP_METHOD_ENTRY:
	case TPTP_METHOD_EXIT:
	case TPTP_THREAD_END:
	case TPTP_OBJ_ALLOC:
	case TPTP_MON_WAIT:
	case TPTP_MON_WAITED:
	case TPTP_MON_CONTENDED_ENTER:
	case TPTP_MON_CONTENDED_ENTERED:
		fprintf(f, " threadIdRef=\"%" PRIu64 "\"", r->thread_id);
		break;
	default:
		break;
	}
	/* methodExit puts time last, as the real converter does. */
	if ((r->has & TPTP_HAS_TIME) && kind != TPTP_METHOD_EXIT) {
		fputs(" time=\"", f);
		tptpgen_xtime(s, r->time);
		fputc('"', f);
	}
	switch (kind) {
	case TPTP_THREAD_START:
		fprintf(f, " threadName=\"%s\"", r->name);
		break;
	case TPTP_METHOD_ENTRY:
		fprintf(f, " methodIdRef=\"%" PRIu64 "\" classIdRef=\"%" PRIu64 "\" ticket=\"%" PRIu64
			   "\" stackDepth=\"%" PRIu64 "\"", r->method_id, r->class_id, r->ticket, r->depth);
		break;
	case TPTP_METHOD_EXIT:
		fprintf(f, " methodIdRef=\"%" PRIu64 "\" classIdRef=\"%" PRIu64 "\" ticket=\"%" PRIu64
			   "\" time=\"", r->method_id, r->class_id, r->ticket);
		tptpgen_xtime(s, r->time);
		fputc('"', f);
		break;
	case TPTP_OBJ_ALLOC:
		fprintf(f, " isArray=\"0\" objId=\"%" PRIu64 "\" size=\"%" PRIu64 "\"", r->object_id, r->size);
		break;
	case TPTP_OBJ_FREE:
		fprintf(f, " objIdRef=\"%" PRIu64 "\"", r->object_id);
		break;
	case TPTP_MON_WAIT:
	case TPTP_MON_WAITED:
		fprintf(f, " objIdRef=\"%" PRIu64 "\" timeout=\"%" PRIu64 "\"", r->object_id, r->timeout);
		break;
	case TPTP_MON_CONTENDED_ENTER:
		fprintf(f, " objIdRef=\"%" PRIu64 "\" threadOwner=\"%" PRIu64 "\"", r->object_id, r->owner_id);
		break;
	case TPTP_MON_CONTENDED_ENTERED:
		fprintf(f, " objIdRef=\"%" PRIu64 "\"", r->object_id);
		break;
	default:
		break;
	}
	fputs("/>\n", f);
}

/* Definitions go out lazily, just before first use, as real writers do. */
static void tptpgen_define(struct tptpgen_state *s, int th, int mi, uint64_t ticks)
{
	struct tptp_rec r;
	char name[32];
	int c = mi % TPTPGEN_NCLASSES;

	memset(&r, 0, sizeof r);
	r.time = ticks;
	r.has = TPTP_HAS_TIME;
	if (!s->thread_started[th]) {
		snprintf(name, sizeof name, "Worker-%d", th);
		s->thread_started[th] = 1;
		r.thread_id = (uint64_t)th + 11;
		r.name = name;
		tptpgen_emit(s, TPTP_THREAD_START, &r);
	}
	if (mi < 0)
		return;
	if (!s->class_defined[c]) {
		s->class_defined[c] = 1;
		r.class_id = (uint64_t)c + 100;
		r.name = tptpgen_class(c);
		tptpgen_emit(s, TPTP_CLASS_DEF, &r);
	}
	if (!s->method_defined[mi]) {
		s->method_defined[mi] = 1;
		tptpgen_method(mi, name, sizeof name);
		r.has = 0;
		r.method_id = (uint64_t)mi + 500;
		r.class_id = (uint64_t)c + 100;
		r.name = name;
		r.signature = "()V";
		tptpgen_emit(s, TPTP_METHOD_DEF, &r);
	}
}

static void tptpgen_write_ev(struct tptpgen_state *s, const struct tptpgen_ev *e)
{
	struct tptp_rec r;
	int c = e->method % TPTPGEN_NCLASSES;

	tptpgen_define(s, e->th, (e->kind == TPTP_METHOD_ENTRY || e->kind == TPTP_METHOD_EXIT) ? e->method : -1,
		       e->ticks);
	memset(&r, 0, sizeof r);
	r.has = TPTP_HAS_TIME;
	r.time = e->ticks;
	r.thread_id = (uint64_t)e->th + 11;
	r.method_id = (uint64_t)e->method + 500;
	r.class_id = (uint64_t)c + 100;
	r.ticket = e->ticket;
	r.depth = e->depth;
	r.object_id = e->obj;
	r.size = e->size;
	r.timeout = e->timeout;
	r.owner_id = e->owner;
	switch (e->kind) {
	case TPTP_METHOD_ENTRY:
		if (s->wdepth[e->th] < TPTPGEN_MAX_DEPTH)
			s->wstack[e->th][s->wdepth[e->th]++] = e->method;
		break;
	case TPTP_METHOD_EXIT:
		if (s->wdepth[e->th] > 0)
			s->wdepth[e->th]--;
		break;
	case TPTP_MON_WAIT:
	case TPTP_MON_WAITED:
	case TPTP_MON_CONTENDED_ENTER:
	case TPTP_MON_CONTENDED_ENTERED: {
		/* the stack, innermost call first */
		int st[TPTPGEN_MAX_DEPTH], d = s->wdepth[e->th];
		for (int k = 0; k < d; k++)
			st[k] = s->wstack[e->th][d - 1 - k];
		s->t->monitor_events++;
		if (s->o->binary && d > 0)
			s->t->monitor_stacks++;
		s->mstack = st;
		s->mdepth = d;
		tptpgen_emit(s, e->kind, &r);
		s->mstack = NULL;
		s->mdepth = 0;
		return;
	}
	default:
		break;
	}
	tptpgen_emit(s, e->kind, &r);
}

/*
 * tptpgen_write() : simulate with o and write the trace to f; truth is
 * filled.  0 on success, -1 on allocation failure.
 */
static int tptpgen_write(FILE *f, const struct tptpgen_opts *o, struct tptpgen_truth *t)
{
	struct tptpgen_state s;
	size_t pos[TPTPGEN_MAX_THREADS] = {0};
	uint64_t t0 = o->binary ? (uint64_t)((unsigned __int128)TPTPGEN_T0_NS * TPTPGEN_FREQ_HZ / 1000000000u)
				: TPTPGEN_T0_NS;
	uint64_t last = t0;
	struct tptp_rec r;
	int rc = 0, nth = o->threads < 1 ? 1 : o->threads > TPTPGEN_MAX_THREADS ? TPTPGEN_MAX_THREADS : o->threads;

	memset(&s, 0, sizeof s);
	memset(t, 0, sizeof *t);
	s.o = o;
	s.t = t;
	s.f = f;
	s.rng = o->seed * 0x9e3779b97f4a7c15ull + 1;
	t->threads = nth;
	t->nmethods = TPTPGEN_MAX_METHODS;
	t->first_ns = tptpgen_ns(o, t0);
	for (int i = 0; i < TPTPGEN_MAX_METHODS; i++)
		tptpgen_job_name(i, t->method_name[i], sizeof t->method_name[i]);
	for (int th = 0; th < nth && rc == 0; th++)
		rc = tptpgen_thread(&s, th, t0 + (uint64_t)th * 1000);
	if (rc < 0)
		goto out;

	if (o->binary) {
		uint8_t h[TPTP_BIN_HEADER], *p = h + 8;
		const char *enc = o->encoding ? o->encoding : "UTF-8";
		size_t nenc = strlen(enc) + 1;
		uint8_t m[128], *q = m;
		memcpy(h, TPTP_BIN_MAGIC, 4);
		h[4] = 1; /* version 1.0 */
		h[5] = 0;
		h[6] = o->platform32 ? 0 : 1;
		h[7] = o->big_endian ? 0 : 1;
		tptpgen_put(&s, &p, TPTP_BIN_HEADER, 4);
		fwrite(h, 1, sizeof h, f);
		/* system messages: encoding (1), CPU frequency (2) */
		tptpgen_put(&s, &q, 1, 2);
		tptpgen_put(&s, &q, nenc + (o->len_incl_header ? 6 : 0), 4);
		memcpy(q, enc, nenc);
		q += nenc;
		tptpgen_put(&s, &q, 2, 2);
		tptpgen_put(&s, &q, 8 + (o->len_incl_header ? 6 : 0), 4);
		tptpgen_put(&s, &q, o->freq_mhz ? TPTPGEN_FREQ_HZ / 1000000 : TPTPGEN_FREQ_HZ, 8);
		fwrite(m, 1, (size_t)(q - m), f);
	} else {
		if (!o->bare)
			fprintf(f, "<?xml version=\"1.0\" encoding=\"%s\"?>\n<TRACE>\n",
				o->encoding ? o->encoding : "utf-8");
	}
	memset(&r, 0, sizeof r);
	r.has = TPTP_HAS_TIME | TPTP_HAS_PID;
	r.time = t0;
	r.hostname = "gen-host";
	r.pid = TPTPGEN_PID;
	tptpgen_emit(&s, TPTP_NODE, &r);
	if (!o->no_process) {
		r.name = o->process_name; /* NULL by default: the TI profiler gives none */
		tptpgen_emit(&s, TPTP_PROCESS_CREATE, &r);
		t->pid = TPTPGEN_PID;
		t->process_name = o->process_name;
	}
	r.name = "org.eclipse.tptp.jvmti";
	tptpgen_emit(&s, TPTP_AGENT_CREATE, &r);
	tptpgen_emit(&s, TPTP_TRACE_START, &r);
	r.key = "TICKET";
	r.value = "true";
	tptpgen_emit(&s, TPTP_OPTION, &r);

	/* Interleave thread buffers in chunks of 1..40 events. */
	for (;;) {
		int left = 0;
		for (int th = 0; th < nth; th++) {
			size_t chunk = 1 + tptpgen_rand(&s) % 40;
			for (; chunk && pos[th] < s.nev[th]; chunk--, pos[th]++) {
				const struct tptpgen_ev *e = &s.ev[th][pos[th]];
				tptpgen_write_ev(&s, e);
				if (e->ticks > last)
					last = e->ticks;
			}
			left |= pos[th] < s.nev[th];
		}
		if (!left)
			break;
	}
	memset(&r, 0, sizeof r);
	r.has = TPTP_HAS_TIME;
	r.time = last;
	tptpgen_emit(&s, TPTP_TRACE_END, &r);
	tptpgen_emit(&s, TPTP_AGENT_DESTROY, &r);
	if (!o->binary && !o->bare)
		fputs("</TRACE>\n", f);
out:
	for (int th = 0; th < TPTPGEN_MAX_THREADS; th++)
		free(s.ev[th]);
	return rc;
}

static void tptpgen_write_truth(FILE *f, const struct tptpgen_truth *t)
{
	fprintf(f, "threads %d\nentries %" PRIu64 "\nexits %" PRIu64 "\nopen_at_end %" PRIu64 "\n",
		t->threads, t->entries, t->exits, t->open_at_end);
	for (int i = 0; i < t->threads; i++)
		fprintf(f, "completed_calls thread %d %" PRIu64 "\n", i + 11, t->completed[i]);
	for (int i = 0; i < t->nmethods; i++)
		if (t->calls[i])
			fprintf(f, "inclusive_ns %s %" PRIu64 " calls %" PRIu64 "\n", t->method_name[i],
				t->incl_ns[i], t->calls[i]);
	fprintf(f, "live_heap %" PRId64 "\nalloc_bytes %" PRIu64 "\nallocs %" PRIu64 "\nfrees %" PRIu64
		   "\ngc_count %" PRIu64 "\nrecords %" PRIu64 "\n",
		t->live_heap, t->alloc_bytes, t->allocs, t->frees, t->gc_count, t->records);
	if (t->monitor_events)
		fprintf(f, "monitor_events %" PRIu64 "\nmonitor_stacks %" PRIu64 "\n", t->monitor_events,
			t->monitor_stacks);
}

#ifndef TPTPGEN_NO_MAIN
static void tptpgen_usage(void)
{
	fputs("usage: tptpgen [--seed N] [--threads N] [--calls N] [--binary] [--bare]\n"
	      "               [--big-endian] [--platform32] [--len-incl-header] [--mhz]\n"
	      "               [--leave-open] [--no-process] [--process-name NAME]\n"
	      "               [--encoding NAME] [--monitor-stacks] [--truncate N]\n"
	      "               [--truth FILE] -o OUT\n", stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	struct tptpgen_opts o = {.seed = 1, .threads = 3, .calls = 200};
	struct tptpgen_truth t;
	const char *out = NULL, *truth = NULL;
	long long trunc = -1;
	char *buf = NULL;
	size_t len = 0;
	FILE *mem, *f;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--seed") == 0 && i + 1 < argc)
			o.seed = strtoull(argv[++i], NULL, 0);
		else if (strcmp(a, "--threads") == 0 && i + 1 < argc)
			o.threads = atoi(argv[++i]);
		else if (strcmp(a, "--calls") == 0 && i + 1 < argc)
			o.calls = atoi(argv[++i]);
		else if (strcmp(a, "--truncate") == 0 && i + 1 < argc)
			trunc = atoll(argv[++i]);
		else if (strcmp(a, "--truth") == 0 && i + 1 < argc)
			truth = argv[++i];
		else if (strcmp(a, "-o") == 0 && i + 1 < argc)
			out = argv[++i];
		else if (strcmp(a, "--binary") == 0)
			o.binary = 1;
		else if (strcmp(a, "--bare") == 0)
			o.bare = 1;
		else if (strcmp(a, "--big-endian") == 0)
			o.big_endian = 1;
		else if (strcmp(a, "--platform32") == 0)
			o.platform32 = 1;
		else if (strcmp(a, "--len-incl-header") == 0)
			o.len_incl_header = 1;
		else if (strcmp(a, "--mhz") == 0)
			o.freq_mhz = 1;
		else if (strcmp(a, "--leave-open") == 0)
			o.leave_open = 1;
		else if (strcmp(a, "--no-process") == 0)
			o.no_process = 1;
		else if (strcmp(a, "--process-name") == 0 && i + 1 < argc)
			o.process_name = argv[++i];
		else if (strcmp(a, "--encoding") == 0 && i + 1 < argc && strlen(argv[i + 1]) < 64)
			o.encoding = argv[++i];
		else if (strcmp(a, "--monitor-stacks") == 0)
			o.monitor_stacks = 1;
		else
			tptpgen_usage();
	}
	if (!out)
		tptpgen_usage();
	mem = open_memstream(&buf, &len);
	if (!mem || tptpgen_write(mem, &o, &t) < 0 || fclose(mem) != 0) {
		fprintf(stderr, "tptpgen: out of memory\n");
		return 2;
	}
	if (trunc >= 0 && (size_t)trunc < len)
		len = (size_t)trunc;
	f = strcmp(out, "-") == 0 ? stdout : fopen(out, "wb");
	if (!f || fwrite(buf, 1, len, f) != len || (f != stdout && fclose(f) != 0)) {
		fprintf(stderr, "tptpgen: %s: cannot write\n", out);
		return 2;
	}
	free(buf);
	if (truth) {
		f = fopen(truth, "w");
		if (!f) {
			fprintf(stderr, "tptpgen: %s: cannot write\n", truth);
			return 2;
		}
		tptpgen_write_truth(f, &t);
		fclose(f);
	}
	return 0;
}
#endif
