/*
 * test_tptp.c - the TPTP readers (XML and binary) against the real
 * converter output in ../shared/testdata/tptp/ and against traces from
 * tools/tptpgen.c (included here, so the generator and the test share one
 * source) whose ground truth the generator computes as it writes.
 */
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#include "format.h"
#include "input.h"
#include "tptp.h"
#include "t.h"

#define TPTPGEN_NO_MAIN
#include "../../tools/tptpgen.c"

/* What a test sees of one reader run. */
struct run {
	int open_rc, last_rc;
	uint64_t events, jobs, method_jobs, gc_jobs, markers, strs, tracks, views;
	uint64_t thread_names, links, counters, task_exits;
	uint64_t last_exit_ts, last_exit_tid;
	uint64_t out_of_order;      /* events older than the one before */
	uint64_t bad_jobs;          /* start+duration after the event time */
	int64_t last_live;          /* last tptp_live_heap value */
	uint64_t alloc_sum;         /* sum of tptp_alloc_rate values */
	struct tptp_stats st;
	uint64_t open_at_end_unmapped;
	uint64_t first_marker_ts;
	char names[4][64];          /* the first thread names */
	/* Who is who: the first links' (pid, tid), and the connection
	 * (tid, pid) of the first marker and of the first string.
	 * thread_names, names, links and link_* are the threads'; the
	 * process's own tid (== the pid) is counted apart, below. */
	int32_t link_pid[4], link_tid[4];
	uint64_t proc_names, proc_links; /* names and links of tid == pid */
	char proc_name[64];         /* the name given to tid == pid */
	uint64_t proc_name_ts;      /* ... and its time */
	int32_t pid;                /* of the links (-1 without any) */
	/* Every name and link, in order, sorted into the above at the end. */
	struct { int32_t id; uint64_t ts; char name[64]; } all_names[64];
	struct { int32_t pid, tid; } all_links[64];
	size_t nall_names, nall_links;
	int32_t marker_tid, marker_pid, str_tid, str_pid;
	char err[600];
	uint64_t t0;                /* the model's zero (monotonic_delta) */
	uint64_t digest;            /* of every event out, in order */
	uint64_t records_read;      /* the model's count */
	/* The unmapped table, copied before the model goes. */
	struct { char what[96]; uint64_t count; } unm[APC_MAX_UNMAPPED];
	size_t nunm;
	/* Inclusive time per job name (for the generator's truth). */
	struct { char name[64]; uint64_t ns, calls; } per[TPTPGEN_MAX_METHODS];
	size_t nper;
};

static uint64_t unmapped_count(const struct apc_model *m, const char *prefix)
{
	for (size_t i = 0; i < m->nunmapped; i++)
		if (strncmp(m->unmapped[i].what, prefix, strlen(prefix)) == 0)
			return m->unmapped[i].count;
	return 0;
}

/* A count in a run's copy of the unmapped table, by prefix. */
static uint64_t run_unmapped(const struct run *res, const char *prefix)
{
	for (size_t i = 0; i < res->nunm; i++)
		if (strncmp(res->unm[i].what, prefix, strlen(prefix)) == 0)
			return res->unm[i].count;
	return 0;
}

/* Fold one event into h (FNV-1a over the fields a capture shows), so two
 * runs can be compared event for event: the XML and binary parity tests. */
static uint64_t digest_event(uint64_t h, const struct apc_event *e)
{
	char line[512];
	int n;

	switch (e->type) {
	case APC_EV_THREAD_NAME:
	case APC_EV_COOKIE_NAME:
		n = snprintf(line, sizeof line, "%d %llu %d %s", e->type, (unsigned long long)e->ts,
			     (int)e->u.name.id, e->u.name.name);
		break;
	case APC_EV_LINK:
		n = snprintf(line, sizeof line, "%d %llu %d %d", e->type, (unsigned long long)e->ts,
			     (int)e->u.link.pid, (int)e->u.link.tid);
		break;
	case APC_EV_TASK_EXIT:
		n = snprintf(line, sizeof line, "%d %llu %d", e->type, (unsigned long long)e->ts,
			     (int)e->u.sched.tid);
		break;
	case APC_EV_COUNTER:
		n = snprintf(line, sizeof line, "%d %llu %u %lld", e->type, (unsigned long long)e->ts,
			     (unsigned)e->u.counter.counter, (long long)e->u.counter.value);
		break;
	case APC_EV_ANNOTATION:
		n = snprintf(line, sizeof line, "%d %llu %d %d %d %d %llu %llu %.*s", e->type,
			     (unsigned long long)e->ts, e->u.ann->code, (int)e->u.ann->tid,
			     (int)e->u.ann->track, (int)e->u.ann->parent,
			     (unsigned long long)e->u.ann->start, (unsigned long long)e->u.ann->duration,
			     (int)e->u.ann->text_len, e->u.ann->text ? e->u.ann->text : "");
		break;
	default:
		n = snprintf(line, sizeof line, "%d %llu", e->type, (unsigned long long)e->ts);
		break;
	}
	for (int i = 0; i < n && i < (int)sizeof line; i++)
		h = (h ^ (uint8_t)line[i]) * 1099511628211ull;
	return h;
}

static void note_job(struct run *res, const struct apc_ann *a)
{
	size_t i;

	for (i = 0; i < res->nper; i++)
		if (strcmp(res->per[i].name, a->text) == 0)
			break;
	if (i == res->nper) {
		if (res->nper == TPTPGEN_MAX_METHODS)
			return;
		snprintf(res->per[i].name, sizeof res->per[i].name, "%s", a->text);
		res->nper++;
	}
	res->per[i].ns += a->duration;
	res->per[i].calls++;
}

/* Names and links of the process's own tid (every link carries the pid)
 * apart from the threads'. */
static void sort_who(struct run *res)
{
	int32_t pid = res->nall_links ? res->all_links[0].pid : -1;

	res->pid = pid;
	for (size_t i = 0; i < res->nall_links; i++) {
		if (res->all_links[i].pid != pid)
			T_FAIL("links with two pids: %d and %d", (int)pid, (int)res->all_links[i].pid);
		if (res->all_links[i].tid == pid) {
			res->proc_links++;
			continue;
		}
		if (res->links < 4) {
			res->link_pid[res->links] = res->all_links[i].pid;
			res->link_tid[res->links] = res->all_links[i].tid;
		}
		res->links++;
	}
	for (size_t i = 0; i < res->nall_names; i++) {
		if (res->all_names[i].id == pid) {
			res->proc_names++;
			res->proc_name_ts = res->all_names[i].ts;
			snprintf(res->proc_name, sizeof res->proc_name, "%s", res->all_names[i].name);
			continue;
		}
		if (res->thread_names < 4)
			snprintf(res->names[res->thread_names], sizeof res->names[0], "%s",
				 res->all_names[i].name);
		res->thread_names++;
	}
}

/* Run format f over path, counting what comes out. */
static void run_reader(const struct apc_format *f, const char *path, uint64_t window, struct run *res)
{
	struct apc_input *in = NULL;
	struct apc_reader r;
	struct apc_model model;
	struct apc_batch b;
	struct apc_err err;
	uint64_t prev = 0;
	int rc;

	memset(res, 0, sizeof *res);
	res->last_live = -1;
	res->digest = 1469598103934665603ull;
	apc_model_init(&model);
	memset(&r, 0, sizeof r);
	apc_batch_init(&b, 1000);
	rc = apc_input_open(path, &in, &err);
	if (rc < 0) {
		res->open_rc = rc;
		apc_err_format(&err, res->err, sizeof res->err);
		apc_model_free(&model);
		return;
	}
	r.fmt = f;
	r.inputs = &in;
	r.ninputs = 1;
	r.model = &model;
	r.opts.window_ns = window;
	apc_err_clear(&r.err);
	res->open_rc = f->open(&r);
	uint32_t c_live = UINT32_MAX, c_rate = UINT32_MAX;
	if (res->open_rc == APC_OK) {
		struct apc_counter_decl *d = apc_model_find_counter(&model, "tptp_live_heap");
		if (d)
			c_live = d->id;
		d = apc_model_find_counter(&model, "tptp_alloc_rate");
		if (d)
			c_rate = d->id;
		res->t0 = model.meta.monotonic_delta;
		do {
			apc_batch_reset(&b);
			rc = f->next(&r, &b);
			for (size_t i = 0; i < b.n; i++) {
				const struct apc_event *e = &b.ev[i];
				res->events++;
				res->digest = digest_event(res->digest, e);
				if (e->ts < prev)
					res->out_of_order++;
				prev = e->ts;
				switch (e->type) {
				case APC_EV_THREAD_NAME:
					if (res->nall_names == sizeof res->all_names / sizeof res->all_names[0]) {
						T_FAIL("more than 64 thread names: raise the table");
						break;
					}
					res->all_names[res->nall_names].id = e->u.name.id;
					res->all_names[res->nall_names].ts = e->ts;
					snprintf(res->all_names[res->nall_names++].name,
						 sizeof res->all_names[0].name, "%s", e->u.name.name);
					break;
				case APC_EV_LINK:
					if (res->nall_links == sizeof res->all_links / sizeof res->all_links[0]) {
						T_FAIL("more than 64 links: raise the table");
						break;
					}
					res->all_links[res->nall_links].pid = e->u.link.pid;
					res->all_links[res->nall_links++].tid = e->u.link.tid;
					break;
				case APC_EV_TASK_EXIT:
					res->task_exits++;
					res->last_exit_ts = e->ts;
					res->last_exit_tid = (uint64_t)e->u.sched.tid;
					break;
				case APC_EV_COUNTER:
					res->counters++;
					if (e->u.counter.counter == c_live)
						res->last_live = e->u.counter.value;
					if (e->u.counter.counter == c_rate)
						res->alloc_sum += (uint64_t)e->u.counter.value;
					break;
				case APC_EV_ANNOTATION:
					switch (e->u.ann->code) {
					case APC_ANN_CAM_JOB:
						res->jobs++;
						if (e->u.ann->start + e->u.ann->duration > e->ts ||
						    e->u.ann->start < model.meta.monotonic_delta)
							res->bad_jobs++;
						if (e->u.ann->track == 1) {
							res->gc_jobs++;
						} else {
							res->method_jobs++;
							note_job(res, e->u.ann);
						}
						break;
					case APC_ANN_CAM_TRACK: res->tracks++; break;
					case APC_ANN_CAM_VIEW: res->views++; break;
					case APC_ANN_MARKER:
						if (!res->markers++) {
							res->first_marker_ts = e->ts;
							res->marker_tid = e->u.ann->tid;
							res->marker_pid = e->u.ann->pid;
						}
						break;
					case APC_ANN_STR:
						if (!res->strs++) {
							res->str_tid = e->u.ann->tid;
							res->str_pid = e->u.ann->pid;
						}
						break;
					default: break;
					}
					break;
				default:
					break;
				}
			}
		} while (rc == APC_OK);
		res->last_rc = rc;
		sort_who(res);
		if (rc < 0)
			apc_err_format(&r.err, res->err, sizeof res->err);
		if (tptp_reader_stats(&r))
			res->st = *tptp_reader_stats(&r);
		res->open_at_end_unmapped = unmapped_count(&model, "tptp calls still open");
	} else {
		apc_err_format(&r.err, res->err, sizeof res->err);
	}
	res->records_read = model.records_read;
	for (size_t i = 0; i < model.nunmapped && res->nunm < APC_MAX_UNMAPPED; i++, res->nunm++) {
		snprintf(res->unm[res->nunm].what, sizeof res->unm[0].what, "%s", model.unmapped[i].what);
		res->unm[res->nunm].count = model.unmapped[i].count;
	}
	f->close(&r);
	apc_batch_free(&b);
	apc_model_free(&model);
	apc_input_close(in);
}

/* ---- real files: an independent line scan of the XML -------------------- */

struct scan {
	uint64_t counts[TPTP_KIND_COUNT];
	uint64_t pairs, entries;
};

static int attr_u64(const char *line, const char *name, uint64_t *v)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof pat, " %s=\"", name);
	p = strstr(line, pat);
	if (!p)
		return -1;
	*v = strtoull(p + strlen(pat), NULL, 10);
	return 0;
}

/* Count elements, and pair entries with exits by (thread, ticket). */
static int scan_xml(const char *path, struct scan *sc)
{
	FILE *f = fopen(path, "r");
	char line[8192];
	struct { uint64_t thread, ticket; int open; } *ent = NULL;
	size_t nent = 0, cap = 0;

	memset(sc, 0, sizeof *sc);
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f)) {
		char name[64];
		size_t k = 0;
		const char *p = line;
		uint64_t th = 0, tk = 0;

		while (*p == ' ' || *p == '\t')
			p++;
		if (*p != '<' || p[1] == '?' || p[1] == '/')
			continue;
		for (p++; *p && *p != ' ' && *p != '/' && *p != '>' && k + 1 < sizeof name; p++)
			name[k++] = *p;
		name[k] = '\0';
		sc->counts[tptp_kind_from_name(name)]++;
		if (strcmp(name, "methodEntry") == 0) {
			attr_u64(line, "threadIdRef", &th);
			attr_u64(line, "ticket", &tk);
			if (nent == cap) {
				cap = cap ? cap * 2 : 256;
				ent = realloc(ent, cap * sizeof *ent);
			}
			ent[nent].thread = th;
			ent[nent].ticket = tk;
			ent[nent].open = 1;
			nent++;
			sc->entries++;
		} else if (strcmp(name, "methodExit") == 0) {
			attr_u64(line, "threadIdRef", &th);
			attr_u64(line, "ticket", &tk);
			for (size_t i = nent; i > 0; i--)
				if (ent[i - 1].open && ent[i - 1].thread == th && ent[i - 1].ticket == tk) {
					ent[i - 1].open = 0;
					sc->pairs++;
					break;
				}
		}
	}
	free(ent);
	fclose(f);
	return 0;
}

static void real_files(void)
{
	/* The README's table: threadStart, classDef, methodDef, methodEntry, methodExit. */
	static const struct { const char *name; uint64_t n[5]; } table[] = {
		{"basic", {1, 3, 7, 4, 2}},
		{"exception", {1, 7, 14, 11, 9}},
		{"mismatched", {1, 3, 8, 3, 1}},
		{"jag_dmtrace", {1, 30, 101, 2057, 2054}},
	};
	static const int kinds[5] = {TPTP_THREAD_START, TPTP_CLASS_DEF, TPTP_METHOD_DEF,
				     TPTP_METHOD_ENTRY, TPTP_METHOD_EXIT};
	const char *td = t_shared_testdata();
	char path[1024];

	if (!td)
		T_SKIP("../shared/testdata absent");
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
		struct run res;
		struct scan sc;

		snprintf(path, sizeof path, "%s/tptp/%s.trcxml", td, table[i].name);
		if (access(path, R_OK) != 0) {
			printf("  # skip %s: absent\n", path);
			continue;
		}
		T_ASSERT(apc_format_tptp_xml.bid != NULL);
		T_ASSERT(scan_xml(path, &sc) == 0);
		run_reader(&apc_format_tptp_xml, path, 0, &res);
		if (res.open_rc != APC_OK || res.last_rc != APC_END)
			T_FAIL("%s: open %d, last %d: %s", table[i].name, res.open_rc, res.last_rc, res.err);
		for (int k = 0; k < 5; k++) {
			T_EQ_U64(res.st.kinds[kinds[k]], table[i].n[k]);
			T_EQ_U64(sc.counts[kinds[k]], table[i].n[k]);
		}
		/* Every matched pair is one job; every other entry is closed
		 * (by an outer exit or at the end) and is one job too. */
		T_EQ_U64(res.st.calls_matched, sc.pairs);
		T_EQ_U64(res.method_jobs, sc.entries);
		T_EQ_U64(res.st.calls_open_at_end + res.st.calls_unwound, sc.entries - sc.pairs);
		T_EQ_U64(res.open_at_end_unmapped, res.st.calls_open_at_end);
		T_EQ_U64(res.out_of_order, 0);
		T_EQ_U64(res.bad_jobs, 0);
		T_EQ_U64(res.thread_names, table[i].n[0]);
		T_EQ_U64(res.views, 1);
	}
}

/* The bid: real files 90, other text 0. */
static void bids(void)
{
	const char *td = t_shared_testdata();
	char path[1024];
	struct apc_input *in;
	struct apc_err err;

	if (!td)
		T_SKIP("../shared/testdata absent");
	snprintf(path, sizeof path, "%s/tptp/basic.trcxml", td);
	if (apc_input_open(path, &in, &err) < 0)
		T_SKIP("basic.trcxml absent");
	T_EQ_INT(apc_format_tptp_xml.bid(in), 90);
	T_EQ_INT(apc_format_tptp_bin.bid(in), 0);
	apc_input_close(in);
}

static void parse_times(void)
{
	uint64_t ns = 0;

	T_EQ_INT(tptp_parse_time("1185890426.304424453", &ns), 0);
	T_EQ_U64(ns, 1185890426304424453ull);
	T_EQ_INT(tptp_parse_time("1374703971.214759", &ns), 0);
	T_EQ_U64(ns, 1374703971214759000ull);
	T_EQ_INT(tptp_parse_time("12", &ns), 0);
	T_EQ_U64(ns, 12000000000ull);
	T_EQ_INT(tptp_parse_time("1.1234567891", &ns), 0); /* 10th digit truncated */
	T_EQ_U64(ns, 1123456789ull);
	T_EQ_INT(tptp_parse_time("abc", &ns), -1);
	T_EQ_INT(tptp_parse_time("1.5x", &ns), -1);
	T_EQ_INT(tptp_parse_time("99999999999999999999", &ns), -1);
	/* The length-bounded form reads only len bytes (no NUL needed). */
	T_EQ_INT(tptp_parse_time_n("1.5xyz", 3, &ns), 0);
	T_EQ_U64(ns, 1500000000ull);
	T_EQ_INT(tptp_parse_time_n("1.5xyz", 4, &ns), -1);
	/* After a space: read up to it, and said (1) when more than spaces
	 * follow, for the reader to count. */
	T_EQ_INT(tptp_parse_time_n(" 12 junk", 8, &ns), 1);
	T_EQ_U64(ns, 12000000000ull);
	T_EQ_INT(tptp_parse_time_n(" 13  ", 5, &ns), 0);
	T_EQ_U64(ns, 13000000000ull);
	T_EQ_INT(tptp_parse_time_n("7", 0, &ns), -1);
}

/* ---- generated traces against the generator's truth --------------------- */

/* A new temporary file, its name in path: its descriptor, or -1 (the
 * test failed). */
static int tmp_file(char *path, size_t len)
{
	int fd;

	snprintf(path, len, "/tmp/test_tptp_XXXXXX");
	fd = mkstemp(path);
	T_ASSERT(fd >= 0);
	return fd;
}

/* Write a generated trace to a temporary file (cut at `cut` bytes if >= 0);
 * path receives its name.  Returns the full length. */
static long gen_file(const struct tptpgen_opts *o, struct tptpgen_truth *t, long cut, char *path,
		     size_t len, char **copy)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *mem = open_memstream(&buf, &n);
	int fd;
	long full;

	snprintf(path, len, "/tmp/test_tptp_XXXXXX");
	if (!mem || tptpgen_write(mem, o, t) < 0 || fclose(mem) != 0)
		return -1;
	full = (long)n;
	if (cut >= 0 && (size_t)cut < n)
		n = (size_t)cut;
	fd = mkstemp(path);
	if (fd < 0 || write(fd, buf, n) != (ssize_t)n) {
		free(buf);
		return -1;
	}
	close(fd);
	if (copy)
		*copy = buf;
	else
		free(buf);
	return full;
}

/* Compare one reader run with the generator's truth (complete trace). */
static void check_truth(const struct run *res, const struct tptpgen_truth *t, const char *what)
{
	if (res->open_rc != APC_OK || res->last_rc != APC_END)
		T_FAIL("%s: open %d, last %d: %s", what, res->open_rc, res->last_rc, res->err);
	T_EQ_U64(res->thread_names, (uint64_t)t->threads);
	/* the process's own tid: named and linked; its pid processCreate's,
	 * else the first synthetic id */
	T_EQ_U64(res->proc_names, 1);
	T_EQ_U64(res->proc_links, 1);
	T_EQ_STR(res->proc_name, t->process_name ? t->process_name : "java");
	T_EQ_U64(res->proc_name_ts, res->t0);
	T_EQ_INT(res->pid, t->pid ? (int32_t)t->pid : 0x40000000);
	/* every monitor record a string on its thread's connection; the
	 * stacks of the binary ones counted, the empty ones not */
	T_EQ_U64(res->strs, t->monitor_events);
	T_EQ_U64(res->st.kinds[TPTP_MON_WAIT] + res->st.kinds[TPTP_MON_WAITED] +
			 res->st.kinds[TPTP_MON_CONTENDED_ENTER] + res->st.kinds[TPTP_MON_CONTENDED_ENTERED],
		 t->monitor_events);
	T_EQ_U64(run_unmapped(res, "tptp monitor stacks"), t->monitor_stacks);
	T_EQ_U64(res->method_jobs, t->entries);
	T_EQ_U64(res->st.calls_matched, t->exits);
	T_EQ_U64(res->st.calls_open_at_end, t->open_at_end);
	T_EQ_U64(res->st.exits_unmatched, 0);
	T_EQ_U64(res->gc_jobs, t->gc_count);
	T_EQ_U64(res->markers, t->gc_count);
	T_EQ_U64(res->alloc_sum, t->alloc_bytes);
	if (t->allocs)
		T_EQ_INT(res->last_live, t->live_heap);
	T_EQ_U64(res->st.live_heap, (uint64_t)t->live_heap);
	T_EQ_U64(res->out_of_order, 0);
	T_EQ_U64(res->bad_jobs, 0);
	T_EQ_U64(res->st.late, 0);
	T_EQ_U64(res->st.records, t->records);
	if (t->open_at_end)
		return; /* forced closes add time the truth does not have */
	/* Several method ids may share a job name (overloads, <init>):
	 * compare the sums per name. */
	for (int i = 0; i < t->nmethods; i++) {
		uint64_t ns = 0, calls = 0, tns = 0, tcalls = 0;
		for (size_t k = 0; k < res->nper; k++)
			if (strcmp(res->per[k].name, t->method_name[i]) == 0) {
				ns = res->per[k].ns;
				calls = res->per[k].calls;
			}
		for (int j = 0; j < t->nmethods; j++)
			if (strcmp(t->method_name[j], t->method_name[i]) == 0) {
				tns += t->incl_ns[j];
				tcalls += t->calls[j];
			}
		if (ns != tns || calls != tcalls)
			T_FAIL("%s: %s: %llu ns in %llu calls, truth %llu ns in %llu calls", what,
			       t->method_name[i], (unsigned long long)ns, (unsigned long long)calls,
			       (unsigned long long)tns, (unsigned long long)tcalls);
	}
}

/* Generate a trace to a temporary file, run reader f over it, remove it.
 * -1 (the test failed) if it could not be written. */
static int run_gen(const struct tptpgen_opts *o, struct tptpgen_truth *t, const struct apc_format *f,
		   uint64_t window, struct run *res)
{
	char path[64];

	if (gen_file(o, t, -1, path, sizeof path, NULL) < 0) {
		T_FAIL("cannot write a generated trace");
		return -1;
	}
	run_reader(f, path, window, res);
	unlink(path);
	return 0;
}

static void gen_xml(void)
{
	for (int bare = 0; bare <= 1; bare++)
		for (uint64_t seed = 1; seed <= 4; seed++) {
			struct tptpgen_opts o = {.seed = seed, .threads = (int)seed + 1, .calls = 400, .bare = bare};
			struct tptpgen_truth t;
			struct run res;
			char what[64];

			if (run_gen(&o, &t, &apc_format_tptp_xml, 0, &res) < 0)
				return;
			snprintf(what, sizeof what, "xml seed %llu bare %d", (unsigned long long)seed, bare);
			check_truth(&res, &t, what);
			T_ASSERT(t.entries >= 400 && t.allocs > 0 && t.frees > 0);
		}
}

static void gen_bin(void)
{
	for (int v = 0; v < 16; v++) {
		struct tptpgen_opts o = {.seed = 10 + (uint64_t)v, .threads = 3, .calls = 300, .binary = 1,
					 .big_endian = v & 1, .len_incl_header = (v >> 1) & 1,
					 .platform32 = (v >> 2) & 1, .freq_mhz = (v >> 3) & 1};
		struct tptpgen_truth t;
		struct run res;
		struct apc_input *in;
		struct apc_err err;
		char path[64], what[96];

		if (gen_file(&o, &t, -1, path, sizeof path, NULL) < 0) {
			T_FAIL("cannot write a generated trace");
			return;
		}
		snprintf(what, sizeof what, "bin be %d incl %d p32 %d mhz %d", o.big_endian,
			 o.len_incl_header, o.platform32, o.freq_mhz);
		if (apc_input_open(path, &in, &err) == 0) {
			T_EQ_INT(apc_format_tptp_bin.bid(in), 100);
			T_EQ_INT(apc_format_tptp_xml.bid(in), 0);
			apc_input_close(in);
		}
		run_reader(&apc_format_tptp_bin, path, 0, &res);
		check_truth(&res, &t, what);
		unlink(path);
	}
}

/*
 * The generator's trace shapes: without processCreate, with a process
 * name, with monitor records (binary: with stacks, some empty), and all
 * at once; both encodings, against the truth.
 */
static void gen_shapes(void)
{
	for (int binary = 0; binary <= 1; binary++)
		for (int shape = 0; shape < 4; shape++) {
			struct tptpgen_opts o = {.seed = 21 + (uint64_t)shape, .threads = 3, .calls = 150,
						 .binary = binary};
			const struct apc_format *f = binary ? &apc_format_tptp_bin : &apc_format_tptp_xml;
			struct tptpgen_truth t;
			struct run res;
			char what[64];

			o.no_process = shape == 0 || shape == 3;
			o.process_name = shape == 1 || shape == 3 ? "JVM <main> & co" : NULL;
			o.monitor_stacks = shape >= 2;
			if (run_gen(&o, &t, f, 0, &res) < 0)
				return;
			snprintf(what, sizeof what, "shape %d binary %d", shape, binary);
			check_truth(&res, &t, what);
			T_EQ_U64(res.st.kinds[TPTP_PROCESS_CREATE], !o.no_process);
			if (o.no_process) /* a name needs a processCreate to carry it */
				T_EQ_STR(res.proc_name, "java");
			if (o.monitor_stacks) {
				/* a wait per thread before its first call (empty
				 * stack), more inside calls */
				T_ASSERT(t.monitor_events > 2 * (uint64_t)t.threads);
				if (binary)
					T_ASSERT(t.monitor_stacks > 0 &&
						 t.monitor_stacks == t.monitor_events - 2 * (uint64_t)t.threads);
				else
					T_EQ_U64(t.monitor_stacks, 0); /* no XML form */
			} else {
				T_EQ_U64(t.monitor_events, 0);
			}
		}
}

/* Calls left open at the end are closed, counted and still one job each. */
static void gen_open_at_end(void)
{
	for (int binary = 0; binary <= 1; binary++) {
		struct tptpgen_opts o = {.seed = 7, .threads = 4, .calls = 250, .binary = binary,
					 .leave_open = 1};
		struct tptpgen_truth t;
		struct run res;

		if (run_gen(&o, &t, binary ? &apc_format_tptp_bin : &apc_format_tptp_xml, 0, &res) < 0)
			return;
		T_ASSERT(t.open_at_end > 0);
		check_truth(&res, &t, binary ? "open bin" : "open xml");
		T_EQ_U64(res.open_at_end_unmapped, t.open_at_end);
	}
}

/* Complete records before byte `cut` (XML: one element per line). */
static uint64_t xml_records_before(const char *buf, long cut)
{
	uint64_t n = 0;
	const char *p = buf, *end = buf + cut, *nl;

	while (p < end && (nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		if (nl - p >= 2 && nl[-1] == '>' && nl[-2] == '/')
			n++;
		p = nl + 1;
	}
	/* A last element complete up to its "/>" but without the newline. */
	if (end - p >= 2 && end[-1] == '>' && end[-2] == '/')
		n++;
	return n;
}

/* A cut file keeps every element before the cut and says where it broke. */
static void gen_truncated(void)
{
	struct tptpgen_opts o = {.seed = 3, .threads = 3, .calls = 200};
	struct tptpgen_truth t;

	for (int k = 1; k <= 9; k++) {
		struct run res;
		char path[64], *buf = NULL;
		long full = gen_file(&o, &t, 0, path, sizeof path, &buf), cut;

		unlink(path);
		if (full < 0) {
			T_FAIL("cannot write a generated trace");
			return;
		}
		cut = full * k / 10 + k; /* mid-line for most k */
		free(buf);
		buf = NULL;
		gen_file(&o, &t, cut, path, sizeof path, &buf);
		run_reader(&apc_format_tptp_xml, path, 0, &res);
		T_EQ_INT(res.open_rc, APC_OK);
		T_EQ_INT(res.last_rc, APC_EDATA);
		T_ASSERT(strstr(res.err, "truncated") != NULL);
		T_EQ_U64(res.st.records, xml_records_before(buf, cut) - 0);
		T_EQ_U64(res.out_of_order, 0);
		T_EQ_U64(res.bad_jobs, 0);
		T_EQ_U64(res.method_jobs, res.st.kinds[TPTP_METHOD_ENTRY]);
		free(buf);
		unlink(path);
	}
	/* Binary: cut inside a message. */
	o.binary = 1;
	for (int k = 1; k <= 5; k++) {
		struct run res;
		char path[64];
		long full = gen_file(&o, &t, 0, path, sizeof path, NULL);

		unlink(path);
		gen_file(&o, &t, full * k / 6 + 3, path, sizeof path, NULL);
		run_reader(&apc_format_tptp_bin, path, 0, &res);
		T_EQ_INT(res.open_rc, APC_OK);
		T_EQ_INT(res.last_rc, APC_EDATA);
		T_ASSERT(strstr(res.err, "truncated") != NULL);
		T_ASSERT(res.st.records > 0 && res.st.records < t.records);
		T_EQ_U64(res.out_of_order, 0);
		unlink(path);
	}
}

/* A window too small for the interleaving: late events are clamped and
 * counted, and what comes out is still in order. */
static void small_window(void)
{
	struct tptpgen_opts o = {.seed = 5, .threads = 4, .calls = 300};
	struct tptpgen_truth t;
	struct run res;

	if (run_gen(&o, &t, &apc_format_tptp_xml, 1, &res) < 0)
		return;
	T_EQ_INT(res.last_rc, APC_END);
	T_ASSERT(res.st.late > 0);
	T_EQ_U64(res.out_of_order, 0);
	T_EQ_U64(res.method_jobs, t.entries);
}

/* ---- hand-made binary traces ------------------------------------------ */

/* A binary trace written byte by byte. */
struct bin {
	uint8_t b[256];
	size_t n;
};

/* The 12-byte header: little-endian, lengths without the message header. */
static void bin_start(struct bin *w)
{
	static const uint8_t head[] = {'0', 'T', 'B', 'F', 1, 0, 1, 1, 12, 0, 0, 0};

	memcpy(w->b, head, sizeof head);
	w->n = sizeof head;
}

static void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* A message: its 6-byte header (16-bit id, 32-bit body length), then len
 * zero bytes of body, which it returns for the caller to fill. */
static uint8_t *bin_msg(struct bin *w, unsigned id, size_t len)
{
	uint8_t *p = w->b + w->n;

	if (w->n + 6 + len > sizeof w->b)
		abort();
	p[0] = (uint8_t)id;
	p[1] = (uint8_t)(id >> 8);
	for (int i = 0; i < 4; i++)
		p[2 + i] = (uint8_t)(len >> (8 * i));
	memset(p + 6, 0, len);
	w->n += 6 + len;
	return p + 6;
}

/* System message 2: the tick frequency, after which times are ticks. */
static void bin_freq(struct bin *w, uint64_t hz)
{
	put_le64(bin_msg(w, 2, 8), hz);
}

/* gcStart (1023): l-l-lTs-s- = 3 x 8 + 2 = 26 bytes, its time at 16,
 * and `extra` bytes more; returns the body. */
static uint8_t *bin_gc_start(struct bin *w, uint64_t ticks, size_t extra)
{
	uint8_t *p = bin_msg(w, 1023, 26 + extra);

	put_le64(p + 16, ticks);
	return p;
}

/* Run the binary reader on the bytes (a temporary file, then removed). */
static void run_bin_bytes(const struct bin *w, struct run *res)
{
	char path[64];
	int fd = tmp_file(path, sizeof path);

	T_ASSERT(fd >= 0 && write(fd, w->b, w->n) == (ssize_t)w->n);
	if (fd >= 0)
		close(fd);
	run_reader(&apc_format_tptp_bin, path, 0, res);
	unlink(path);
}

/* Hand-made binary: an unknown data id is skipped by its length, and a
 * bad endianness byte is refused. */
static void bin_unknown_and_bad(void)
{
	struct bin w;
	struct run res;

	bin_start(&w);
	/* id 2000 (unknown), length 3 (header excluded), 3 body bytes */
	memcpy(bin_msg(&w, 2000, 3), "\xaa\xbb\xcc", 3);
	bin_gc_start(&w, 0x10, 0); /* time 0x10 ns (no frequency message) */
	run_bin_bytes(&w, &res);
	T_EQ_INT(res.open_rc, APC_OK);
	T_EQ_INT(res.last_rc, APC_END);
	T_EQ_U64(res.st.kinds[TPTP_GC_START], 1);
	T_EQ_U64(res.markers, 1);
	T_EQ_U64(res.gc_jobs, 1); /* closed at the end */
	w.b[7] = 2;
	run_bin_bytes(&w, &res);
	T_EQ_INT(res.open_rc, APC_EDATA);
	T_ASSERT(strstr(res.err, "endianness") != NULL);
}

/* gzip is the input layer's job: the reader sees the same trace. */
static void gzip_input(void)
{
	struct tptpgen_opts o = {.seed = 9, .threads = 2, .calls = 200};
	struct tptpgen_truth t;
	struct run res;
	char path[64], gz[80], *buf = NULL;
	long full = gen_file(&o, &t, -1, path, sizeof path, &buf);
	gzFile g;

	T_ASSERT(full > 0);
	snprintf(gz, sizeof gz, "%s.gz", path);
	g = gzopen(gz, "wb");
	T_ASSERT(g != NULL);
	if (!g)
		return;
	T_EQ_INT(gzwrite(g, buf, (unsigned)full), full);
	gzclose(g);
	free(buf);
	run_reader(&apc_format_tptp_xml, gz, 0, &res);
	check_truth(&res, &t, "gzip");
	unlink(path);
	unlink(gz);
}

/* Damaged input (random byte changes, deterministic) never crashes or
 * hangs either reader; run under SANITIZE=1 this is a small fuzz pass. */
static void mutated_inputs(void)
{
	for (int binary = 0; binary <= 1; binary++) {
		struct tptpgen_opts o = {.seed = 4, .threads = 2, .calls = 60, .binary = binary};
		struct tptpgen_truth t;
		char path[64], *buf = NULL;
		long full = gen_file(&o, &t, -1, path, sizeof path, &buf);
		uint64_t rng = 12345;

		T_ASSERT(full > 0);
		if (full <= 0)
			return;
		for (int it = 0; it < 150; it++) {
			char *m = malloc((size_t)full);
			struct run res;
			FILE *f;

			memcpy(m, buf, (size_t)full);
			for (int k = 0; k < 1 + it % 8; k++) {
				rng = rng * 6364136223846793005ull + 1442695040888963407ull;
				/* Past the magic: damage the body, not the bid. */
				m[12 + (rng >> 33) % (uint64_t)(full - 12)] = (char)(rng >> 13);
			}
			f = fopen(path, "wb");
			fwrite(m, 1, (size_t)(full - (it % 3 == 0 ? it : 0)), f);
			fclose(f);
			run_reader(binary ? &apc_format_tptp_bin : &apc_format_tptp_xml, path, 0, &res);
			T_ASSERT(res.last_rc == APC_END || res.last_rc < 0 || res.open_rc < 0);
			T_EQ_U64(res.out_of_order, 0);
			free(m);
		}
		free(buf);
		unlink(path);
	}
}

/* The truth file names what a reader must find. */
static void truth_file(void)
{
	struct tptpgen_opts o = {.seed = 2, .threads = 2, .calls = 50};
	struct tptpgen_truth t;
	char path[64], *text = NULL;
	size_t n = 0;
	FILE *mem;

	T_ASSERT(gen_file(&o, &t, -1, path, sizeof path, NULL) > 0);
	unlink(path);
	mem = open_memstream(&text, &n);
	tptpgen_write_truth(mem, &t);
	fclose(mem);
	T_ASSERT(strstr(text, "threads 2\n") != NULL);
	T_ASSERT(strstr(text, "live_heap ") != NULL);
	T_ASSERT(strstr(text, "completed_calls thread 12 ") != NULL);
	free(text);
}

/* ---- the reorder queue, against a plain sorted list ------------------- */

/* One event of the reference: what tptp_map.c's queue must reproduce. */
struct ref_ev {
	uint64_t ts, seq;
	int64_t value;
};

/* The reference model of tptp.h's ordering contract, done the slow and
 * obvious way: a sorted array, clamping, the window and the cap. */
struct ref_q {
	struct ref_ev *ev;
	size_t n;
	uint64_t seq, newest, last_emitted;
	int have_emitted;
};

static void ref_push(struct ref_q *q, uint64_t ts, int64_t value)
{
	size_t i;

	if (q->have_emitted && ts < q->last_emitted)
		ts = q->last_emitted;
	if (ts > q->newest)
		q->newest = ts;
	for (i = q->n; i > 0 && q->ev[i - 1].ts > ts; i--)
		q->ev[i] = q->ev[i - 1];
	q->ev[i].ts = ts;
	q->ev[i].seq = q->seq++;
	q->ev[i].value = value;
	q->n++;
}

/* Emit what is ready (all with `final`) into out[]; returns how many. */
static size_t ref_drain(struct ref_q *q, uint64_t window, size_t cap_max, int final,
			struct ref_ev *out)
{
	size_t k = 0;

	while (q->n) {
		int ready = final || (q->newest >= window && q->ev[0].ts <= q->newest - window) ||
			    q->n > cap_max;
		if (!ready)
			break;
		out[k++] = q->ev[0];
		q->last_emitted = q->ev[0].ts;
		q->have_emitted = 1;
		memmove(q->ev, q->ev + 1, (q->n - 1) * sizeof *q->ev);
		q->n--;
	}
	return k;
}

/*
 * Feed objAlloc records whose times come as `streams` interleaved
 * ascending streams, each starting below all the others (so each needs a
 * run of its own: more than the queue keeps, the rest spill into its
 * heap), with equal times across pairs of streams (ties go by arrival).
 * The allocation-rate events must come out exactly as the reference
 * orders them, through non-final drains after every record and final
 * drains in small batches.
 */
static void reorder_against_reference(uint64_t window, int streams, int per_stream)
{
	struct apc_model model;
	struct tptp_map *map;
	struct apc_batch b;
	struct apc_err b_err;
	struct ref_q q = {0};
	struct ref_ev *want, *got;
	size_t nwant = 0, ngot = 0, total = (size_t)streams * (size_t)per_stream;
	const uint64_t t0 = 1000000000ull;
	uint32_t c_rate;
	int guard = 0;

	apc_model_init(&model);
	map = tptp_map_new(&model, window);
	T_ASSERT(map != NULL);
	if (!map)
		return;
	c_rate = apc_model_find_counter(&model, "tptp_alloc_rate")->id;
	q.ev = calloc(total * 2 + 8, sizeof *q.ev);
	want = calloc(total * 2 + 8, sizeof *want);
	got = calloc(total * 2 + 8, sizeof *got);
	apc_batch_init(&b, 97);
	T_EQ_INT(tptp_map_begin(map, t0, &b_err), APC_OK);
	/* tptp_map_begin queues four events at t0: the cookie, the
	 * process's name and link, the view. */
	for (int i = 0; i < 4; i++)
		ref_push(&q, t0, -1);
	for (int j = 0; j < per_stream; j++)
		for (int s = 0; s < streams; s++) {
			struct tptp_rec rec;
			struct apc_err err;
			uint64_t size = (uint64_t)j * (uint64_t)streams + (uint64_t)s + 1;
			memset(&rec, 0, sizeof rec);
			rec.kind = TPTP_OBJ_ALLOC;
			rec.has = TPTP_HAS_TIME | TPTP_HAS_SIZE;
			rec.time = t0 + 1000000 + (uint64_t)((streams - 1 - s) / 2) * 7 + (uint64_t)j * 1000;
			rec.size = size;
			T_EQ_INT(tptp_map_record(map, &rec, &err), APC_OK);
			ref_push(&q, rec.time, (int64_t)size); /* rate */
			ref_push(&q, rec.time, -1);            /* live */
			apc_batch_reset(&b);
			b.cap = 1u << 20; /* non-final drains are not the batching under test */
			T_ASSERT(tptp_map_drain(map, &b, 0) >= 0);
			for (size_t i = 0; i < b.n; i++)
				if (b.ev[i].type == APC_EV_COUNTER && b.ev[i].u.counter.counter == c_rate)
					got[ngot++] = (struct ref_ev){b.ev[i].ts, 0, b.ev[i].u.counter.value};
			nwant += ref_drain(&q, window, 1u << 19, 0, want + nwant);
			T_EQ_U64(tptp_map_pending(map), q.n);
		}
	/* Final: a batch at a time, until nothing waits. */
	b.cap = 97;
	do {
		apc_batch_reset(&b);
		T_ASSERT(tptp_map_drain(map, &b, 1) >= 0);
		T_ASSERT(b.n <= 97);
		for (size_t i = 0; i < b.n; i++)
			if (b.ev[i].type == APC_EV_COUNTER && b.ev[i].u.counter.counter == c_rate)
				got[ngot++] = (struct ref_ev){b.ev[i].ts, 0, b.ev[i].u.counter.value};
	} while (tptp_map_pending(map) && ++guard < 100000);
	nwant += ref_drain(&q, window, 1u << 19, 1, want + nwant);
	{
		size_t k = 0, bad = 0;
		for (size_t i = 0; i < nwant; i++) {
			if (want[i].value < 0)
				continue; /* live-heap and setup events */
			if (k < ngot && (got[k].ts != want[i].ts || got[k].value != want[i].value))
				bad++;
			k++;
		}
		T_EQ_U64(k, total);
		T_EQ_U64(ngot, total);
		T_EQ_U64(bad, 0);
	}
	tptp_map_free(map);
	apc_batch_free(&b);
	apc_model_free(&model);
	free(q.ev);
	free(want);
	free(got);
}

static void reorder_queue(void)
{
	/* Everything waits for the end; 150 streams need more runs than
	 * the queue keeps. */
	reorder_against_reference(1000000000000ull, 150, 40);
	/* A window of a few records: events leave while others arrive,
	 * runs empty and start again, late ones are clamped. */
	reorder_against_reference(2500, 150, 40);
	/* A handful of streams: the common case, all in runs. */
	reorder_against_reference(20000, 4, 1500);
}

/* ---- XML details the SAX reader must get right ------------------------ */

static void write_text(char *path, size_t len, const char *text)
{
	int fd = tmp_file(path, len);

	if (fd < 0)
		return;
	T_ASSERT(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
}

/* A hand-made binary trace: the 12-byte header (little-endian, length
 * without the message header), no frequency message (times are ns), then
 * one message per record, written by the generator's writer.  A trace
 * whose records start one (traceStart) and do not end it gets a traceEnd
 * without a time last: the binary form of the "</TRACE>" the XML texts
 * beside them end with (without it the binary reader, rightly, calls the
 * trace cut short). */
static void write_bin_freq(char *path, size_t len, uint64_t freq, const struct tptp_rec *recs,
			   size_t n);

static void write_bin(char *path, size_t len, const struct tptp_rec *recs, size_t n)
{
	write_bin_freq(path, len, 0, recs, n);
}

/* The same with system message 2 (frequency freq) first, if not 0:
 * record times are then ticks. */
static void write_bin_freq(char *path, size_t len, uint64_t freq, const struct tptp_rec *recs,
			   size_t n)
{
	struct tptpgen_opts o = {.binary = 1};
	struct tptpgen_truth t;
	struct tptpgen_state s;
	struct bin w;
	int fd = tmp_file(path, len), open = 0;

	if (fd < 0)
		return;
	memset(&s, 0, sizeof s);
	memset(&t, 0, sizeof t);
	s.o = &o;
	s.t = &t;
	s.f = fdopen(fd, "wb");
	T_ASSERT(s.f != NULL);
	if (!s.f)
		return;
	bin_start(&w);
	if (freq)
		bin_freq(&w, freq);
	fwrite(w.b, 1, w.n, s.f);
	for (size_t i = 0; i < n; i++) {
		int id, kind = TPTP_UNKNOWN;
		for (id = 1001; id <= 1041; id++)
			if (tptp_bin_layout(id, &kind) && kind == recs[i].kind)
				break;
		T_ASSERT(id <= 1041);
		tptpgen_msg(&s, id, &recs[i]);
		if (recs[i].kind == TPTP_TRACE_START)
			open = 1;
		else if (recs[i].kind == TPTP_TRACE_END || recs[i].kind == TPTP_AGENT_DESTROY)
			open = 0;
	}
	if (open) {
		static const struct tptp_rec end = {.kind = TPTP_TRACE_END};
		tptpgen_msg(&s, 1006, &end);
	}
	T_ASSERT(fclose(s.f) == 0);
}

/* Run the XML reader on text (a temporary file), then remove the file. */
static void run_xml_text(const char *text, struct run *res)
{
	char path[64];

	write_text(path, sizeof path, text);
	run_reader(&apc_format_tptp_xml, path, 0, res);
	unlink(path);
}

/* The same for the binary reader on recs. */
static void run_bin_recs(const struct tptp_rec *recs, size_t n, struct run *res)
{
	char path[64];

	write_bin(path, sizeof path, recs, n);
	run_reader(&apc_format_tptp_bin, path, 0, res);
	unlink(path);
}

/* The XML reader on text into res[0], the binary one on recs into res[1]:
 * both read to the end and give the same events. */
static void run_both(const char *text, const struct tptp_rec *recs, size_t n, struct run res[2])
{
	run_xml_text(text, &res[0]);
	run_bin_recs(recs, n, &res[1]);
	for (int i = 0; i < 2; i++)
		T_EQ_INT(res[i].last_rc, APC_END);
	T_EQ_U64(res[0].digest, res[1].digest);
}

#define S_NS 1000000000ull
#define NRECS(a) (sizeof (a) / sizeof (a)[0])

/* A cut inside a start tag, after whole attributes, is not an element
 * (libxml2's SAX2 hands the tag over before it sees its end). */
static void xml_cut_in_tag(void)
{
	static const char *const tails[] = {"", "/", " ", " stackDepth=\"1\"", " stackDepth="};
	for (size_t i = 0; i < sizeof tails / sizeof tails[0]; i++) {
		char text[512];
		struct run res;

		snprintf(text, sizeof text,
			 "<TRACE>\n<threadStart threadId=\"1\" time=\"1.0\" threadName=\"main\"/>\n"
			 "<methodDef name=\"run\" methodId=\"5\"/>\n"
			 "<methodEntry threadIdRef=\"1\" time=\"1.5\" methodIdRef=\"5\"/>\n"
			 "<methodEntry threadIdRef=\"1\" time=\"1.6\" methodIdRef=\"5\"%s",
			 tails[i]);
		run_xml_text(text, &res);
		T_EQ_INT(res.open_rc, APC_OK);
		T_EQ_INT(res.last_rc, APC_EDATA);
		T_EQ_U64(res.st.kinds[TPTP_METHOD_ENTRY], 1);
		T_EQ_U64(res.method_jobs, 1);
		T_ASSERT(strstr(res.err, "offset 0x") != NULL);
	}
}

/* Names by local name and prefix, references in values, normalised
 * white space, later attributes winning, nested elements ignored. */
static void xml_names_and_values(void)
{
	struct run res;

	run_xml_text("<?xml version=\"1.0\"?>\n"
		     "<TRACE xmlns:p=\"urn:p\">\n"
		     "<threadStart threadId=\"1\" time=\"1.5\" threadName=\"A&amp;B &#67;&#38;\nD\"/>\n"
		     "<p:threadStart threadId=\"2\" time=\"1.6\" threadName=\"P\"/>\n"
		     "<threadStart threadId=\"3\" time=\"1.6\" p:threadName=\"Q\" threadName=\"R\"/>\n"
		     "<threadStart xmlns=\"urn:d\" threadId=\"4\" time=\"1.7\" threadName=\"S\">"
		     "<threadStart threadId=\"5\" time=\"1.7\" threadName=\"nested\"/></threadStart>\n"
		     "<classDef name=\"a.B\" classId=\"9\" time=\"x1\"/>\n"
		     "<weird time=\"2\"/>\n"
		     "</TRACE>\n", &res);
	T_EQ_INT(res.last_rc, APC_END);
	T_EQ_U64(res.thread_names, 3);
	T_EQ_STR(res.names[0], "A&B C& D");
	T_EQ_STR(res.names[1], "R");
	T_EQ_STR(res.names[2], "S");
	T_EQ_U64(res.st.kinds[TPTP_THREAD_START], 3);
	T_EQ_U64(res.st.kinds[TPTP_UNKNOWN], 2);
	T_EQ_U64(res.st.kinds[TPTP_CLASS_DEF], 1);
	/* The unmapped table names the qualified element and the bad time. */
	T_EQ_U64(run_unmapped(&res, "tptp element p:threadStart"), 1);
	T_EQ_U64(run_unmapped(&res, "tptp element weird"), 1);
	T_EQ_U64(run_unmapped(&res, "tptp times that do not parse"), 1);
	T_EQ_U64(res.records_read, 6);
}

/* ---- binary: ticks to ns ------------------------------------------------ */

/* floor(ticks * 1e9 / f) exactly, as 128-bit arithmetic gives it (and
 * truncated to 64 bits when it overflows, as it always was). */
static void bin_tick_times(void)
{
	static const struct { uint64_t f, ticks; } cases[] = {
		{2400000000ull, 2846137022330618687ull}, /* 2.4 GHz, 2007 */
		{2400000000ull, 11},
		{2400000000ull, UINT64_MAX},
		{1000000ull, 1ull << 63},               /* past 2^64 ns: no time */
		{3000000007ull, 123456789012345678ull},
		{1000000000ull, 987654321987654321ull},
		{18446744073ull, UINT64_MAX - 5},      /* f past the 64-bit path */
		{100000000000ull, UINT64_MAX - 5},     /* and r * 1e9 past 64 bits */
	};

	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		struct bin w;
		struct run res;
		unsigned __int128 ns = (unsigned __int128)cases[c].ticks * 1000000000u / cases[c].f;
		/* A time past 2^64 ns is none (counted): the gcStart takes the
		 * last time, here the zero, as nothing else has a time. */
		uint64_t want = ns > UINT64_MAX ? 0 : (uint64_t)ns;

		bin_start(&w);
		bin_freq(&w, cases[c].f);
		bin_gc_start(&w, cases[c].ticks, 0);
		run_bin_bytes(&w, &res);
		T_EQ_INT(res.last_rc, APC_END);
		T_EQ_U64(res.markers, 1);
		T_EQ_U64(res.first_marker_ts, want);
		T_EQ_U64(run_unmapped(&res, "tptp times that do not parse"), ns > UINT64_MAX);
	}
}

/* Header records after the first data record cannot change what the
 * writer already has: each is counted, in both readers. */
static void late_header_records(void)
{
	static const struct tptp_rec recs[] = {
		{.kind = TPTP_TRACE_START, .has = TPTP_HAS_TIME, .time = 100 * S_NS},
		{.kind = TPTP_THREAD_START, .has = TPTP_HAS_TIME | TPTP_HAS_THREAD, .time = 100 * S_NS,
		 .thread_id = 5, .name = "main"},
		{.kind = TPTP_PROCESS_CREATE, .has = TPTP_HAS_TIME | TPTP_HAS_PID, .time = 100 * S_NS + 1,
		 .pid = 777},
		{.kind = TPTP_NODE, .has = TPTP_HAS_TIME, .time = 100 * S_NS + 1, .hostname = "myhost"},
		{.kind = TPTP_OPTION, .key = "TICKET", .value = "true"},
		{.kind = TPTP_TRACE_START, .has = TPTP_HAS_TIME, .time = 200 * S_NS},
	};
	struct run res[2];

	run_both("<TRACE>\n<traceStart time=\"100.0\"/>\n"
		 "<threadStart threadId=\"5\" time=\"100.0\" threadName=\"main\"/>\n"
		 "<processCreate pid=\"777\" time=\"100.000000001\"/>\n"
		 "<node hostname=\"myhost\" time=\"100.000000001\"/>\n"
		 "<option key=\"TICKET\" value=\"true\"/>\n"
		 "<traceStart time=\"200.0\"/>\n</TRACE>\n", recs, NRECS(recs), res);
	for (int i = 0; i < 2; i++) {
		T_EQ_U64(res[i].t0, 100 * S_NS);
		T_EQ_U64(run_unmapped(&res[i], "tptp processCreate after the first data record"), 1);
		T_EQ_U64(run_unmapped(&res[i], "tptp node after the first data record"), 1);
		T_EQ_U64(run_unmapped(&res[i], "tptp option after the first data record"), 1);
		T_EQ_U64(run_unmapped(&res[i], "tptp traceStart after the first data record"), 1);
	}
}

/* An objAlloc size too large to be real is taken as 0 (the heap
 * counters stay sane), and counted. */
static void huge_alloc_size(void)
{
	struct run res;

	run_xml_text("<TRACE>\n<traceStart time=\"100.0\"/>\n"
		     "<threadStart threadId=\"1\" time=\"100.0\" threadName=\"main\"/>\n"
		     "<objAlloc threadIdRef=\"1\" time=\"100.1\" objId=\"5\" size=\"3000000000000000000\"/>\n"
		     "<objAlloc threadIdRef=\"1\" time=\"100.2\" objId=\"6\" size=\"64\"/>\n"
		     "</TRACE>\n", &res);
	T_EQ_INT(res.last_rc, APC_END);
	T_EQ_U64(res.alloc_sum, 64);
	T_EQ_INT(res.last_live, 64);
	T_EQ_U64(run_unmapped(&res, "tptp objAlloc sizes too large"), 1);
}

/* A gcStart while a GC is open closes that GC there (one job each) and
 * is counted, as a gcStart left open at the end is. */
static void gc_start_twice(void)
{
	struct run res;

	run_xml_text("<TRACE>\n<traceStart time=\"100.0\"/>\n"
		     "<gcStart time=\"100.1\"/>\n<gcStart time=\"100.2\"/>\n"
		     "<gcFinish time=\"100.3\"/>\n</TRACE>\n", &res);
	T_EQ_INT(res.last_rc, APC_END);
	T_EQ_U64(res.markers, 2);
	T_EQ_U64(res.gc_jobs, 2);
	T_EQ_U64(res.st.gc_count, 2);
	T_EQ_U64(run_unmapped(&res, "tptp gcStart without gcFinish (closed at the next gcStart)"), 1);
}

/* A binary time past 2^64 ns does not wrap: the record has no time (it
 * takes the last one) and the time is counted, as the XML reader does
 * with a time too large for 64 bits. */
static void bin_time_overflow(void)
{
	const uint64_t t0 = 1000000000ull; /* ticks at 1 MHz: 1000 s */
	const uint64_t bad = (uint64_t)((((unsigned __int128)1 << 64) + 1000000000000ull + 5 * S_NS) / 1000);
	const struct tptp_rec recs[] = {
		{.kind = TPTP_TRACE_START, .has = TPTP_HAS_TIME, .time = t0},
		{.kind = TPTP_THREAD_START, .has = TPTP_HAS_TIME | TPTP_HAS_THREAD, .time = t0,
		 .thread_id = 1, .name = "main"},
		{.kind = TPTP_GC_START, .has = TPTP_HAS_TIME, .time = bad},
		{.kind = TPTP_GC_FINISH, .has = TPTP_HAS_TIME, .time = t0 + 2000},
	};
	char path[64];
	struct run res;

	write_bin_freq(path, sizeof path, 1000000, recs, NRECS(recs));
	run_reader(&apc_format_tptp_bin, path, 0, &res);
	unlink(path);
	T_EQ_INT(res.last_rc, APC_END);
	T_EQ_U64(res.markers, 1);
	T_EQ_U64(res.first_marker_ts, 1000 * S_NS);
	T_EQ_U64(res.gc_jobs, 1);
	T_EQ_U64(run_unmapped(&res, "tptp times that do not parse"), 1);
	T_EQ_U64(res.out_of_order, 0);

	run_xml_text("<TRACE>\n<traceStart time=\"1000.0\"/>\n"
		     "<threadStart threadId=\"1\" time=\"1000.0\" threadName=\"main\"/>\n"
		     "<gcStart time=\"18446745073.709551616\"/>\n<gcFinish time=\"1000.000002\"/>\n"
		     "</TRACE>\n", &res);
	T_EQ_INT(res.last_rc, APC_END);
	T_EQ_U64(res.first_marker_ts, 1000 * S_NS);
	T_EQ_U64(run_unmapped(&res, "tptp times that do not parse"), 1);
}

/* Calls per job name in a run (0 if none). */
static uint64_t run_calls(const struct run *res, const char *name)
{
	for (size_t i = 0; i < res->nper; i++)
		if (strcmp(res->per[i].name, name) == 0)
			return res->per[i].calls;
	return 0;
}

/* A methodEntry without a method id is a call of an unknown method: it
 * must not take over the definition of method id 0. */
static void entry_without_method_id(void)
{
	struct run res;

	run_xml_text("<TRACE>\n<traceStart time=\"100.0\"/>\n"
		     "<threadStart threadId=\"1\" time=\"100.0\" threadName=\"main\"/>\n"
		     "<classDef name=\"A\" classId=\"1\" time=\"100.0\"/>\n"
		     "<methodDef name=\"zero\" methodId=\"0\" classIdRef=\"1\"/>\n"
		     "<methodEntry threadIdRef=\"1\" time=\"100.1\" ticket=\"1\"/>\n"
		     "<methodExit threadIdRef=\"1\" ticket=\"1\" time=\"100.2\"/>\n"
		     "<methodEntry threadIdRef=\"1\" time=\"100.3\" methodIdRef=\"0\" ticket=\"2\"/>\n"
		     "<methodExit threadIdRef=\"1\" methodIdRef=\"0\" ticket=\"2\" time=\"100.4\"/>\n"
		     "<methodEntry threadIdRef=\"1\" time=\"100.5\" ticket=\"3\"/>\n"
		     "<methodExit threadIdRef=\"1\" ticket=\"3\" time=\"100.6\"/>\n"
		     "</TRACE>\n", &res);
	T_EQ_INT(res.last_rc, APC_END);
	T_EQ_U64(res.st.calls_matched, 3);
	T_EQ_U64(run_calls(&res, "A.zero"), 1);
	T_EQ_U64(run_calls(&res, "(unknown method)"), 2);
	T_EQ_U64(run_unmapped(&res, "tptp methodEntry without a method id"), 2);
	T_EQ_U64(run_unmapped(&res, "tptp calls of undefined methods"), 0);
}

/* Definitions that define nothing, and the profiler's filter records,
 * are counted, not passed over. */
static void defs_and_filters_counted(void)
{
	struct run res;

	run_xml_text("<TRACE>\n<traceStart time=\"100.0\"/>\n"
		     "<filter pattern=\"java.*\" mode=\"EXCLUDE\"/>\n"
		     "<threadStart threadId=\"1\" time=\"100.0\" threadName=\"main\"/>\n"
		     "<classDef classId=\"1\" time=\"100.0\"/>\n"
		     "<classDef name=\"A\" classId=\"2\" time=\"100.0\"/>\n"
		     "<methodDef name=\"run\" classIdRef=\"2\"/>\n"
		     "<methodDef name=\"go\" methodId=\"3\" classIdRef=\"2\"/>\n"
		     "<methodEntry threadIdRef=\"1\" time=\"100.1\" methodIdRef=\"3\" ticket=\"1\"/>\n"
		     "<methodExit threadIdRef=\"1\" methodIdRef=\"3\" ticket=\"1\" time=\"100.2\"/>\n"
		     "</TRACE>\n", &res);
	T_EQ_INT(res.last_rc, APC_END);
	T_EQ_U64(run_calls(&res, "A.go"), 1);
	T_EQ_U64(run_unmapped(&res, "tptp filter records"), 1);
	T_EQ_U64(run_unmapped(&res, "tptp classDef without a class id or name"), 1);
	T_EQ_U64(run_unmapped(&res, "tptp methodDef without a method id"), 1);
}

/* Without traceStart the capture starts at the first record with a
 * time, even when records without one come before it: their events
 * take that time.  Both readers. */
static void zero_at_first_time(void)
{
	const uint64_t t = 1374703971214762000ull;
	const struct tptp_rec recs[] = {
		{.kind = TPTP_METHOD_DEF, .has = TPTP_HAS_METHOD | TPTP_HAS_CLASS, .method_id = 1,
		 .class_id = 2, .name = "run", .signature = "()V"},
		{.kind = TPTP_THREAD_START, .has = TPTP_HAS_THREAD, .thread_id = 12, .name = "early"},
		{.kind = TPTP_CLASS_DEF, .has = TPTP_HAS_TIME | TPTP_HAS_CLASS, .time = t, .class_id = 2,
		 .name = "Foo"},
		{.kind = TPTP_THREAD_START, .has = TPTP_HAS_TIME | TPTP_HAS_THREAD, .time = t,
		 .thread_id = 11, .name = "main"},
		{.kind = TPTP_METHOD_ENTRY, .has = TPTP_HAS_TIME | TPTP_HAS_THREAD | TPTP_HAS_METHOD |
		 TPTP_HAS_TICKET, .time = t + 13000, .thread_id = 11, .method_id = 1, .ticket = 1},
		{.kind = TPTP_METHOD_EXIT, .has = TPTP_HAS_TIME | TPTP_HAS_THREAD | TPTP_HAS_METHOD |
		 TPTP_HAS_TICKET, .time = t + 20000, .thread_id = 11, .method_id = 1, .ticket = 1},
	};
	struct run res[2];

	run_both("<methodDef name=\"run\" signature=\"()V\" methodId=\"1\" classIdRef=\"2\"/>\n"
		 "<threadStart threadId=\"12\" threadName=\"early\"/>\n"
		 "<classDef name=\"Foo\" classId=\"2\" time=\"1374703971.214762000\"/>\n"
		 "<threadStart threadId=\"11\" time=\"1374703971.214762000\" threadName=\"main\"/>\n"
		 "<methodEntry threadIdRef=\"11\" time=\"1374703971.214775000\" methodIdRef=\"1\" ticket=\"1\"/>\n"
		 "<methodExit threadIdRef=\"11\" methodIdRef=\"1\" ticket=\"1\" time=\"1374703971.214782000\"/>\n",
		 recs, NRECS(recs), res);
	for (int i = 0; i < 2; i++) {
		T_EQ_U64(res[i].t0, t);
		T_EQ_U64(res[i].thread_names, 2);
		T_EQ_STR(res[i].names[0], "early");
		T_EQ_U64(run_calls(&res[i], "Foo.run"), 1);
		T_EQ_U64(res[i].bad_jobs, 0);
		T_EQ_U64(res[i].out_of_order, 0);
	}
}

/* Records of a methodEntry/methodExit for the binary tests. */
#define CALL_REC(k, tm, m, tk) \
	{.kind = (k), .has = TPTP_HAS_TIME | TPTP_HAS_THREAD | TPTP_HAS_METHOD | TPTP_HAS_TICKET, \
	 .time = (tm), .thread_id = 1, .method_id = (m), .ticket = (tk)}

/* Without tickets, exits match by method id.  A .trcbin always has a
 * Ticket field, 0 when unused (the spec's default): that 0 must not
 * pair every exit with the innermost call, or the same events give
 * another capture than as XML without tickets. */
static void exits_without_tickets(void)
{
	const struct tptp_rec recs[] = {
		{.kind = TPTP_TRACE_START, .has = TPTP_HAS_TIME, .time = 100 * S_NS},
		{.kind = TPTP_THREAD_START, .has = TPTP_HAS_TIME | TPTP_HAS_THREAD, .time = 100 * S_NS,
		 .thread_id = 1, .name = "main"},
		{.kind = TPTP_CLASS_DEF, .has = TPTP_HAS_TIME | TPTP_HAS_CLASS, .time = 100 * S_NS,
		 .class_id = 1, .name = "A"},
		{.kind = TPTP_METHOD_DEF, .has = TPTP_HAS_METHOD | TPTP_HAS_CLASS, .method_id = 1,
		 .class_id = 1, .name = "outer"},
		{.kind = TPTP_METHOD_DEF, .has = TPTP_HAS_METHOD | TPTP_HAS_CLASS, .method_id = 2,
		 .class_id = 1, .name = "thrower"},
		{.kind = TPTP_METHOD_DEF, .has = TPTP_HAS_METHOD | TPTP_HAS_CLASS, .method_id = 3,
		 .class_id = 1, .name = "after"},
		CALL_REC(TPTP_METHOD_ENTRY, 100 * S_NS + 100000000, 1, 0),
		CALL_REC(TPTP_METHOD_ENTRY, 100 * S_NS + 200000000, 2, 0),
		CALL_REC(TPTP_METHOD_EXIT, 100 * S_NS + 400000000, 1, 0),
		CALL_REC(TPTP_METHOD_ENTRY, 100 * S_NS + 500000000, 3, 0),
		CALL_REC(TPTP_METHOD_EXIT, 100 * S_NS + 600000000, 3, 0),
		{.kind = TPTP_THREAD_END, .has = TPTP_HAS_TIME | TPTP_HAS_THREAD, .time = 101 * S_NS,
		 .thread_id = 1},
	};
	struct run res[2];

	run_both("<TRACE>\n<traceStart time=\"100.0\"/>\n"
		 "<threadStart threadId=\"1\" time=\"100.0\" threadName=\"main\"/>\n"
		 "<classDef name=\"A\" classId=\"1\" time=\"100.0\"/>\n"
		 "<methodDef name=\"outer\" methodId=\"1\" classIdRef=\"1\"/>\n"
		 "<methodDef name=\"thrower\" methodId=\"2\" classIdRef=\"1\"/>\n"
		 "<methodDef name=\"after\" methodId=\"3\" classIdRef=\"1\"/>\n"
		 "<methodEntry threadIdRef=\"1\" time=\"100.1\" methodIdRef=\"1\"/>\n"
		 "<methodEntry threadIdRef=\"1\" time=\"100.2\" methodIdRef=\"2\"/>\n"
		 "<methodExit threadIdRef=\"1\" time=\"100.4\" methodIdRef=\"1\"/>\n"
		 "<methodEntry threadIdRef=\"1\" time=\"100.5\" methodIdRef=\"3\"/>\n"
		 "<methodExit threadIdRef=\"1\" time=\"100.6\" methodIdRef=\"3\"/>\n"
		 "<threadEnd threadIdRef=\"1\" time=\"101.0\"/>\n</TRACE>\n",
		 recs, NRECS(recs), res);
	for (int i = 0; i < 2; i++) {
		T_EQ_U64(res[i].st.calls_matched, 2);
		T_EQ_U64(res[i].st.calls_unwound, 1);
		T_EQ_U64(res[i].st.exits_unmatched, 0);
		T_EQ_U64(res[i].st.calls_open_at_end, 0);
	}
}

/* A .trcbin writer that leaves both Ticket and the exit's Method ID
 * unused (the spec's table marks the latter unused) writes 0 in both:
 * with no method 0 defined there is nothing to match on, and each exit
 * closes the innermost call, as an XML exit with neither does. */
static void exits_with_nothing_to_match(void)
{
	const struct tptp_rec recs[] = {
		{.kind = TPTP_TRACE_START, .has = TPTP_HAS_TIME, .time = 100 * S_NS},
		{.kind = TPTP_METHOD_DEF, .has = TPTP_HAS_METHOD, .method_id = 1, .name = "a"},
		{.kind = TPTP_METHOD_DEF, .has = TPTP_HAS_METHOD, .method_id = 2, .name = "b"},
		CALL_REC(TPTP_METHOD_ENTRY, 100 * S_NS + 1000, 1, 0),
		CALL_REC(TPTP_METHOD_ENTRY, 100 * S_NS + 2000, 2, 0),
		CALL_REC(TPTP_METHOD_EXIT, 100 * S_NS + 3000, 0, 0),
		CALL_REC(TPTP_METHOD_EXIT, 100 * S_NS + 4000, 0, 0),
	};
	struct run res[2];

	run_both("<TRACE>\n<traceStart time=\"100.0\"/>\n"
		 "<methodDef name=\"a\" methodId=\"1\"/>\n<methodDef name=\"b\" methodId=\"2\"/>\n"
		 "<methodEntry threadIdRef=\"1\" time=\"100.000001\" methodIdRef=\"1\"/>\n"
		 "<methodEntry threadIdRef=\"1\" time=\"100.000002\" methodIdRef=\"2\"/>\n"
		 "<methodExit threadIdRef=\"1\" time=\"100.000003\"/>\n"
		 "<methodExit threadIdRef=\"1\" time=\"100.000004\"/>\n</TRACE>\n",
		 recs, NRECS(recs), res);
	for (int i = 0; i < 2; i++) {
		T_EQ_U64(res[i].st.calls_matched, 2);
		T_EQ_U64(res[i].st.exits_unmatched, 0);
		T_EQ_U64(res[i].st.calls_unwound, 0);
		T_EQ_U64(res[i].per[0].ns + res[i].per[1].ns, 3000 + 1000); /* a, b */
	}
}

/* A method id defined again while a call of it is open: its exit still
 * closes that call, which keeps the name it had when it began. */
static void method_redefined_while_open(void)
{
	struct run res;

	run_xml_text("<TRACE>\n<traceStart time=\"100.0\"/>\n"
		     "<threadStart threadId=\"1\" time=\"100.0\" threadName=\"main\"/>\n"
		     "<classDef name=\"A\" classId=\"1\" time=\"100.0\"/>\n"
		     "<methodDef name=\"outer\" methodId=\"1\" classIdRef=\"1\"/>\n"
		     "<methodDef name=\"inner\" methodId=\"2\" classIdRef=\"1\"/>\n"
		     "<methodEntry threadIdRef=\"1\" time=\"100.1\" methodIdRef=\"1\"/>\n"
		     "<methodEntry threadIdRef=\"1\" time=\"100.2\" methodIdRef=\"2\"/>\n"
		     "<methodDef name=\"again\" methodId=\"2\" classIdRef=\"1\"/>\n"
		     "<methodExit threadIdRef=\"1\" methodIdRef=\"2\" time=\"100.3\"/>\n"
		     "<methodEntry threadIdRef=\"1\" time=\"100.35\" methodIdRef=\"2\"/>\n"
		     "<methodExit threadIdRef=\"1\" methodIdRef=\"2\" time=\"100.36\"/>\n"
		     "<methodExit threadIdRef=\"1\" methodIdRef=\"1\" time=\"100.4\"/>\n"
		     "<threadEnd threadIdRef=\"1\" time=\"100.5\"/>\n</TRACE>\n", &res);
	T_EQ_INT(res.last_rc, APC_END);
	T_EQ_U64(res.st.calls_matched, 3);
	T_EQ_U64(res.st.exits_unmatched, 0);
	T_EQ_U64(res.st.calls_unwound, 0);
	T_EQ_U64(run_calls(&res, "A.inner"), 1);
	T_EQ_U64(run_calls(&res, "A.again"), 1);
	T_EQ_U64(run_calls(&res, "A.outer"), 1);
}

/* A cut in the last element is reported at the end of the file, for a
 * bare element stream as for a wrapped one: the "</TRACE>" the reader
 * adds to a bare stream is not in the file. */
static void xml_cut_offset_bare(void)
{
	static const char *const heads[] = {"<TRACE>\n", "<?xml version=\"1.0\"?>\n", ""};

	for (size_t i = 0; i < sizeof heads / sizeof heads[0]; i++) {
		char text[512], want[64];
		struct run res;

		snprintf(text, sizeof text,
			 "%s<traceStart time=\"100.0\"/>\n"
			 "<threadStart threadId=\"1\" time=\"100.0\" threadName=\"main\"/>\n"
			 "<threadStart threadId=\"2\" time=\"100.1\" threadName=\"two\"/>\n"
			 "<threadStart threadId=\"3\" ti", heads[i]);
		snprintf(want, sizeof want, "offset 0x%zx:", strlen(text));
		run_xml_text(text, &res);
		T_EQ_INT(res.last_rc, APC_EDATA);
		T_EQ_U64(res.thread_names, 2);
		if (!strstr(res.err, want))
			T_FAIL("head %zu: want \"%s\" in \"%s\"", i, want, res.err);
	}
}

/* threadEnd ends the thread's task in the capture (after closing its
 * open calls), as a process exit does for LTT; both readers. */
static void thread_end_exits(void)
{
	const struct tptp_rec recs[] = {
		{.kind = TPTP_TRACE_START, .has = TPTP_HAS_TIME, .time = 100 * S_NS},
		{.kind = TPTP_THREAD_START, .has = TPTP_HAS_TIME | TPTP_HAS_THREAD, .time = 100 * S_NS,
		 .thread_id = 7, .name = "worker"},
		{.kind = TPTP_METHOD_DEF, .has = TPTP_HAS_METHOD, .method_id = 1, .name = "run"},
		CALL_REC(TPTP_METHOD_ENTRY, 100 * S_NS + 1000, 1, 0),
		{.kind = TPTP_THREAD_END, .has = TPTP_HAS_TIME | TPTP_HAS_THREAD, .time = 100 * S_NS + 5000,
		 .thread_id = 7},
	};
	struct tptp_rec brecs[NRECS(recs)];
	struct run res[2];

	memcpy(brecs, recs, sizeof recs);
	brecs[3].thread_id = 7;
	run_both("<TRACE>\n<traceStart time=\"100.0\"/>\n"
		 "<threadStart threadId=\"7\" time=\"100.0\" threadName=\"worker\"/>\n"
		 "<methodDef name=\"run\" methodId=\"1\"/>\n"
		 "<methodEntry threadIdRef=\"7\" time=\"100.000001\" methodIdRef=\"1\"/>\n"
		 "<threadEnd threadIdRef=\"7\" time=\"100.000005\"/>\n</TRACE>\n",
		 brecs, NRECS(brecs), res);
	for (int i = 0; i < 2; i++) {
		T_EQ_U64(res[i].task_exits, 1);
		T_EQ_U64(res[i].last_exit_tid, 7);
		T_EQ_U64(res[i].last_exit_ts, 100 * S_NS + 5000);
		T_EQ_U64(res[i].method_jobs, 1);
		T_EQ_U64(res[i].st.calls_open_at_end, 1);
		T_EQ_U64(res[i].out_of_order, 0);
	}
}

/* A threadStart of a live id ends the old thread (its calls, then its
 * task) before the new one begins. */
static void thread_restart_exits(void)
{
	struct run res;

	run_xml_text("<TRACE>\n<traceStart time=\"100.0\"/>\n"
		     "<threadStart threadId=\"7\" time=\"100.0\" threadName=\"first\"/>\n"
		     "<methodDef name=\"run\" methodId=\"1\"/>\n"
		     "<methodEntry threadIdRef=\"7\" time=\"100.000001\" methodIdRef=\"1\"/>\n"
		     "<threadStart threadId=\"7\" time=\"100.000005\" threadName=\"second\"/>\n"
		     "</TRACE>\n", &res);
	T_EQ_INT(res.last_rc, APC_END);
	T_EQ_U64(res.task_exits, 1);
	T_EQ_U64(res.last_exit_ts, 100 * S_NS + 5000);
	T_EQ_U64(res.method_jobs, 1);
	T_EQ_U64(run_unmapped(&res, "tptp threadStart of a live thread id"), 1);
}

/* A long comment (a licence) before the first element: the reader is
 * still chosen, and a bare stream is still wrapped after it. */
static void xml_long_prolog(void)
{
	for (int bare = 0; bare <= 1; bare++) {
		size_t k;
		char *text = malloc(20000 + 512), path[64];
		struct apc_input *in;
		struct apc_err err;
		struct run res;

		T_ASSERT(text != NULL);
		if (!text)
			return;
		k = (size_t)snprintf(text, 64, "<?xml version=\"1.0\"?>\n<!-- ");
		/* past the 4 KiB the reader once looked at */
		for (; k < (bare ? 8192u : 20000u); k++)
			text[k] = "licence "[k % 8];
		/* (a bare stream's traceEnd tells its end, as </TRACE> does) */
		snprintf(text + k, 512, " -->\n%s<traceStart time=\"100.0\"/>\n"
			 "<threadStart threadId=\"1\" time=\"100.0\" threadName=\"main\"/>\n"
			 "<traceEnd time=\"100.0\"/>\n%s",
			 bare ? "" : "<TRACE>\n", bare ? "" : "</TRACE>\n");
		write_text(path, sizeof path, text);
		T_ASSERT(apc_input_open(path, &in, &err) == 0);
		T_EQ_INT(apc_format_tptp_xml.bid(in), 90);
		apc_input_close(in);
		run_reader(&apc_format_tptp_xml, path, 0, &res);
		T_EQ_INT(res.last_rc, APC_END);
		T_EQ_U64(res.thread_names, 1);
		T_EQ_U64(res.t0, 100 * S_NS);
		unlink(path);
		free(text);
	}
}

/*
 * The process and its threads stay apart in the capture.  A tid equal to
 * the pid makes that thread the process's main thread in Streamline (in
 * Linux terms the thread group leader), and puts the process's own
 * annotations (GC, JVM markers) on that thread's connection.  TPTP thread
 * ids are the profiler's numbers, not the OS's: the first one is often 1.
 * Without a processCreate the pid is one no thread id maps to; with one,
 * a thread whose id happens to be the pid gets a number of its own.
 */
static void process_and_threads_apart(void)
{
	static const struct tptp_rec recs[] = {
		{.kind = TPTP_PROCESS_CREATE, .has = TPTP_HAS_TIME | TPTP_HAS_PID, .time = 100 * S_NS,
		 .pid = 5},
		{.kind = TPTP_TRACE_START, .has = TPTP_HAS_TIME, .time = 100 * S_NS},
		{.kind = TPTP_THREAD_START, .has = TPTP_HAS_TIME | TPTP_HAS_THREAD, .time = 100 * S_NS,
		 .thread_id = 5, .name = "main"},
		{.kind = TPTP_THREAD_START, .has = TPTP_HAS_TIME | TPTP_HAS_THREAD, .time = 100 * S_NS,
		 .thread_id = 6, .name = "worker"},
		{.kind = TPTP_MON_WAIT, .has = TPTP_HAS_TIME | TPTP_HAS_THREAD | TPTP_HAS_OBJECT,
		 .time = 100 * S_NS + 1000, .thread_id = 5, .object_id = 9},
		{.kind = TPTP_GC_START, .has = TPTP_HAS_TIME, .time = 100 * S_NS + 2000},
		{.kind = TPTP_GC_FINISH, .has = TPTP_HAS_TIME, .time = 100 * S_NS + 3000},
	};
	struct run res[3];
	struct tptpgen_opts o = {.seed = 4, .threads = 2, .calls = 100, .no_process = 1,
				 .monitor_stacks = 1};
	struct tptpgen_truth t;

	/* No pid in the trace (tptpgen --no-process), thread ids 11 and 12;
	 * thread 11 waits on a monitor first, thread 0 runs the GCs. */
	if (run_gen(&o, &t, &apc_format_tptp_xml, 0, &res[0]) < 0)
		return;
	T_ASSERT(t.gc_count > 0 && t.monitor_events > 0);
	T_EQ_INT(res[0].last_rc, APC_END);
	T_EQ_U64(res[0].links, 2);
	T_EQ_INT(res[0].link_tid[0], 11); /* the profiler's thread numbers stay */
	T_EQ_INT(res[0].link_tid[1], 12);
	T_ASSERT(res[0].link_pid[0] != 11 && res[0].link_pid[0] != 12);
	T_EQ_INT(res[0].link_pid[1], res[0].link_pid[0]);
	/* the GC marker is the process's; the monitor wait thread 11's */
	T_EQ_INT(res[0].marker_pid, res[0].link_pid[0]);
	T_EQ_INT(res[0].marker_tid, res[0].link_pid[0]);
	T_EQ_INT(res[0].str_tid, 11);
	T_EQ_INT(res[0].str_pid, res[0].link_pid[0]);

	/* pid 5, and a thread whose id is 5: both readers alike. */
	run_both("<TRACE>\n<processCreate pid=\"5\" time=\"100.0\"/>\n"
		 "<traceStart time=\"100.0\"/>\n"
		 "<threadStart threadId=\"5\" time=\"100.0\" threadName=\"main\"/>\n"
		 "<threadStart threadId=\"6\" time=\"100.0\" threadName=\"worker\"/>\n"
		 "<monWait threadIdRef=\"5\" time=\"100.000001\" objIdRef=\"9\"/>\n"
		 "<gcStart time=\"100.000002\"/>\n<gcFinish time=\"100.000003\"/>\n"
		 "</TRACE>\n", recs, NRECS(recs), &res[1]);
	for (int i = 1; i < 3; i++) {
		T_EQ_U64(res[i].links, 2);
		T_EQ_INT(res[i].link_pid[0], 5);
		T_EQ_INT(res[i].link_pid[1], 5);
		T_ASSERT(res[i].link_tid[0] != 5);
		T_EQ_INT(res[i].link_tid[1], 6);
		T_EQ_INT(res[i].marker_tid, 5);
		T_EQ_INT(res[i].str_tid, res[i].link_tid[0]);
		T_EQ_INT(res[i].str_pid, 5);
	}
}

/*
 * The process's own tid (== the pid) carries its annotations (the GC and
 * JVM markers, the view): it is named and linked at the start like every
 * thread, or Streamline shows an unnamed thread.  The name is
 * processCreate's, else "java"; both readers alike.  A processCreate too
 * late to give the pid gives no name either (it is counted).
 */
static void process_named(void)
{
	static const struct tptp_rec recs[] = {
		{.kind = TPTP_PROCESS_CREATE, .has = TPTP_HAS_TIME | TPTP_HAS_PID, .time = 100 * S_NS,
		 .pid = 5, .name = "MyApp"},
		{.kind = TPTP_TRACE_START, .has = TPTP_HAS_TIME, .time = 100 * S_NS},
		{.kind = TPTP_THREAD_START, .has = TPTP_HAS_TIME | TPTP_HAS_THREAD, .time = 100 * S_NS + 10,
		 .thread_id = 1, .name = "main"},
		{.kind = TPTP_GC_START, .has = TPTP_HAS_TIME, .time = 100 * S_NS + 2000},
		{.kind = TPTP_GC_FINISH, .has = TPTP_HAS_TIME, .time = 100 * S_NS + 3000},
	};
	struct run res[5];

	/* processCreate with a name (and pid 5): XML and binary */
	run_both("<TRACE>\n<processCreate processId=\"p\" name=\"MyApp\" pid=\"5\" time=\"100.0\"/>\n"
		 "<traceStart time=\"100.0\"/>\n"
		 "<threadStart threadId=\"1\" time=\"100.00000001\" threadName=\"main\"/>\n"
		 "<gcStart time=\"100.000002\"/>\n<gcFinish time=\"100.000003\"/>\n"
		 "</TRACE>\n", recs, NRECS(recs), res);
	for (int i = 0; i < 2; i++) {
		T_EQ_INT(res[i].pid, 5);
		T_EQ_U64(res[i].proc_names, 1);
		T_EQ_U64(res[i].proc_links, 1);
		T_EQ_STR(res[i].proc_name, "MyApp");
		T_EQ_U64(res[i].proc_name_ts, 100 * S_NS);
		/* the GC marker is on that connection */
		T_EQ_INT(res[i].marker_tid, 5);
		T_EQ_U64(res[i].thread_names, 1);
		T_EQ_STR(res[i].names[0], "main");
	}

	/* No processCreate: a synthetic pid, named "java" */
	run_xml_text("<TRACE>\n<traceStart time=\"100.0\"/>\n"
		     "<threadStart threadId=\"1\" time=\"100.00000001\" threadName=\"main\"/>\n"
		     "</TRACE>\n", &res[2]);
	/* A processCreate without a name, and one whose pid is not used:
	 * the name still names the process. */
	run_xml_text("<TRACE>\n<processCreate pid=\"5\" time=\"100.0\"/>\n"
		     "<threadStart threadId=\"1\" time=\"100.0\" threadName=\"main\"/>\n"
		     "</TRACE>\n", &res[3]);
	run_xml_text("<TRACE>\n<processCreate name=\"neg\" pid=\"-5\" time=\"100.0\"/>\n"
		     "<threadStart threadId=\"1\" time=\"100.0\" threadName=\"main\"/>\n"
		     "</TRACE>\n", &res[4]);
	T_EQ_INT(res[2].pid, 0x40000000);
	T_EQ_STR(res[2].proc_name, "java");
	T_EQ_INT(res[3].pid, 5);
	T_EQ_STR(res[3].proc_name, "java");
	T_EQ_INT(res[4].pid, 0x40000000);
	T_EQ_STR(res[4].proc_name, "neg");
	for (int i = 2; i < 5; i++) {
		T_EQ_INT(res[i].last_rc, APC_END);
		T_EQ_U64(res[i].proc_names, 1);
		T_EQ_U64(res[i].proc_links, 1);
		T_EQ_U64(res[i].proc_name_ts, 100 * S_NS);
		T_EQ_U64(res[i].thread_names, 1);
	}

	/* Too late for the pid, too late for the name. */
	run_xml_text("<TRACE>\n<traceStart time=\"100.0\"/>\n"
		     "<threadStart threadId=\"1\" time=\"100.0\" threadName=\"main\"/>\n"
		     "<processCreate name=\"late\" pid=\"5\" time=\"100.0\"/>\n"
		     "</TRACE>\n", &res[0]);
	T_EQ_INT(res[0].last_rc, APC_END);
	T_EQ_STR(res[0].proc_name, "java");
	T_EQ_U64(run_unmapped(&res[0], "tptp processCreate after the first data record"), 1);
}

/*
 * What sits inside records, or between them, is not mapped: elements
 * (the XML form of the monitor stacks the binary format carries as
 * arrays, or anything a writer adds), text, CDATA, and references to
 * entities in content (not expanded: their elements are not records).
 * Each is counted, and the records around them are still mapped.
 */
static void xml_nested_counted(void)
{
	struct run res;

	run_xml_text("<?xml version=\"1.0\"?>\n"
		     "<!DOCTYPE TRACE [ <!ENTITY recs \"<threadStart threadId='9' time='100.0'/>\"> ]>\n"
		     "<TRACE>\n<traceStart time=\"100.0\"/>\n"
		     "<threadStart threadId=\"7\" time=\"100.0\" threadName=\"main\"/>\n"
		     "<methodDef name=\"run\" methodId=\"1\"/>\n"
		     "<methodEntry threadIdRef=\"7\" time=\"100.000001\" methodIdRef=\"1\">"
		     "<annotation name=\"a\"><value>1</value></annotation>"
		     "<annotation name=\"b\"/>some text</methodEntry>\n"
		     "<methodExit threadIdRef=\"7\" time=\"100.000002\" methodIdRef=\"1\"/>\n"
		     "&recs;\njunk between\n"
		     "<monWait threadIdRef=\"7\" time=\"100.000003\" objIdRef=\"5\">"
		     "<![CDATA[stack]]></monWait>\n"
		     "<x:ext xmlns:x=\"urn:x\"><x:inner/></x:ext>\n"
		     "</TRACE>\n", &res);
	T_EQ_INT(res.last_rc, APC_END);
	T_EQ_U64(res.thread_names, 1);
	T_EQ_U64(res.method_jobs, 1);
	T_EQ_U64(res.strs, 1);
	T_EQ_U64(run_unmapped(&res, "tptp <annotation> inside <methodEntry>"), 2);
	T_EQ_U64(run_unmapped(&res, "tptp <value> inside <methodEntry>"), 1);
	/* "1" in <value>, and "some text" */
	T_EQ_U64(run_unmapped(&res, "tptp text inside <methodEntry>"), 2);
	T_EQ_U64(run_unmapped(&res, "tptp text inside <monWait>"), 1);
	T_EQ_U64(run_unmapped(&res, "tptp text between records"), 1);
	T_EQ_U64(run_unmapped(&res, "tptp entity references in element content"), 1);
	T_EQ_U64(run_unmapped(&res, "tptp element x:ext"), 1);
	T_EQ_U64(run_unmapped(&res, "tptp <x:inner> inside <x:ext>"), 1);
}

/*
 * A monitor record's stack (binary: a depth, then that many method names
 * and line numbers, in place of the XML's annotations) is not mapped: a
 * record that carries one is counted; one with an empty stack is not.
 * tptpgen's thread waits once before its first call (empty stacks), then
 * contends for a lock inside its first call (a stack of one).
 */
static void bin_monitor_stack_counted(void)
{
	struct tptpgen_opts o = {.seed = 1, .threads = 1, .calls = 2, .binary = 1, .monitor_stacks = 1};
	struct tptpgen_truth t;
	struct run res;

	if (run_gen(&o, &t, &apc_format_tptp_bin, 0, &res) < 0)
		return;
	T_EQ_INT(res.last_rc, APC_END);
	T_EQ_U64(t.monitor_events, 4);
	T_EQ_U64(t.monitor_stacks, 2);
	T_EQ_U64(res.st.kinds[TPTP_MON_WAIT], 1);
	T_EQ_U64(res.st.kinds[TPTP_MON_WAITED], 1);
	T_EQ_U64(res.st.kinds[TPTP_MON_CONTENDED_ENTER], 1);
	T_EQ_U64(res.st.kinds[TPTP_MON_CONTENDED_ENTERED], 1);
	T_EQ_U64(res.strs, 4);
	T_EQ_U64(run_unmapped(&res, "tptp monitor stacks"), 2);
	/* the stacks are read past, not taken for damage or extra bytes */
	T_EQ_U64(run_unmapped(&res, "tptp binary monWait messages with bytes past"), 0);
	T_EQ_U64(run_unmapped(&res, "tptp binary monContendedEnter messages with bytes past"), 0);
	T_EQ_U64(run_unmapped(&res, "tptp binary messages shorter"), 0);
}

/*
 * A prolog longer than the 64 KiB a bid can look at: one long comment,
 * many short ones, a long processing instruction, a DOCTYPE whose
 * internal subset is long (with an entity an attribute uses).  The reader
 * is still chosen by content, reads the prolog as a stream (no limit of
 * its own) and wraps a bare stream after it; a cut after it is reported
 * at the file's own offset.
 */
static void xml_prolog_past_lookahead(void)
{
	static const char *const kinds[] = {"comment", "comments", "pi", "doctype"};
	const size_t big = APC_PEEK_MAX + 5000;

	for (size_t kind = 0; kind < sizeof kinds / sizeof kinds[0]; kind++) {
		for (int bare = 0; bare <= 1; bare++) {
			for (int cut = 0; cut <= 1; cut++) {
				char *text = malloc(big + 1024), path[64], want[64];
				size_t k;
				struct apc_input *in;
				struct apc_err err;
				const struct apc_format *f;
				struct run res;
				int bid = 0;

				T_ASSERT(text != NULL);
				if (!text)
					return;
				k = (size_t)sprintf(text, "<?xml version=\"1.0\"?>\n");
				if (kind == 0) {
					k += (size_t)sprintf(text + k, "<!-- ");
					for (; k < big; k++)
						text[k] = "licence "[k % 8];
					k += (size_t)sprintf(text + k, " -->\n");
				} else if (kind == 1) {
					while (k < big)
						k += (size_t)sprintf(text + k, "<!-- line %zu of the licence -->\n", k);
				} else if (kind == 2) {
					k += (size_t)sprintf(text + k, "<?generator ");
					for (; k < big; k++)
						text[k] = "a > b ? "[k % 8];
					k += (size_t)sprintf(text + k, "?>\n");
				} else {
					k += (size_t)sprintf(text + k, "<!DOCTYPE TRACE [\n <!ENTITY h \"host]>\">\n <!-- ");
					for (; k < big; k++)
						text[k] = "> ] [ ' "[k % 8];
					/* (no quote in the PI: libxml2 2.9's push
					 * parser takes it for one in the subset) */
					k += (size_t)sprintf(text + k, " -->\n <?pi a > b ?>\n]>\n");
				}
				k += (size_t)sprintf(text + k,
						     "%s<node hostname=\"%s\"/>\n<traceStart time=\"100.0\"/>\n"
						     "<threadStart threadId=\"1\" time=\"100.0\" threadName=\"a\"/>\n"
						     "<threadStart threadId=\"2\" time=\"100.1\" threadName=\"b\"/>\n",
						     bare ? "" : "<TRACE>\n", kind == 3 ? "&h;" : "h");
				if (cut)
					k += (size_t)sprintf(text + k, "<threadStart threadId=\"3\" ti");
				else
					k += (size_t)sprintf(text + k, "<traceEnd time=\"100.1\"/>\n%s",
							     bare ? "" : "</TRACE>\n");
				write_text(path, sizeof path, text);
				T_ASSERT(apc_input_open(path, &in, &err) == 0);
				f = apc_format_detect(in, &bid);
				if (f != &apc_format_tptp_xml)
					T_FAIL("%s bare %d cut %d: detected as %s", kinds[kind], bare, cut,
					       f ? f->name : "nothing");
				apc_input_close(in);
				run_reader(&apc_format_tptp_xml, path, 0, &res);
				T_EQ_INT(res.last_rc, cut ? APC_EDATA : APC_END);
				T_EQ_U64(res.thread_names, 2);
				T_EQ_U64(res.t0, 100 * S_NS);
				T_EQ_U64(run_unmapped(&res, "tptp xml root is not TRACE"), 0);
				if (cut) {
					snprintf(want, sizeof want, "offset 0x%zx:", k);
					if (!strstr(res.err, want))
						T_FAIL("%s bare %d: want \"%s\" in \"%s\"", kinds[kind], bare,
						       want, res.err);
				}
				unlink(path);
				free(text);
			}
		}
	}
}

/* The offset an error message names, or -1. */
static long err_offset(const char *err)
{
	const char *p = strstr(err, "offset 0x");

	return p ? strtol(p + 9, NULL, 16) : -1;
}

/*
 * A parse error carries "(truncated trace?)" only where a cut is
 * plausible: the file breaks off inside an element, wrapped or bare.
 * Damage in the middle of the file (a double hyphen in a comment, a
 * mismatched tag, a control character, a stray '<', a repeated
 * attribute, an undeclared entity) is reported as not well-formed at
 * its offset, without the hint, keeping what came before it: in a small
 * file (one chunk, whose end the parser sees) and past the first chunks
 * of a large one.
 */
static void xml_damage_not_a_cut(void)
{
	static const char *const damage[] = {
		"<!-- a -- b -->", "<foo></bar>", "<x a=\"\x01\"/>", "<<", "<x a=\"1\" a=\"2\"/>",
		"&bogus;",
	};
	const char *rest = "<threadStart threadId=\"2\" time=\"100.1\" threadName=\"two\"/>\n"
			   "<threadStart threadId=\"3\" time=\"100.2\" threadName=\"three\"/>\n";

	for (int bare = 0; bare <= 1; bare++) {
		char head[256], text[1024];
		size_t k;
		struct run res;

		k = (size_t)snprintf(head, sizeof head,
				     "%s<traceStart time=\"100.0\"/>\n"
				     "<threadStart threadId=\"1\" time=\"100.0\" threadName=\"main\"/>\n",
				     bare ? "" : "<TRACE>\n");
		for (size_t d = 0; d < sizeof damage / sizeof damage[0]; d++) {
			long off;

			snprintf(text, sizeof text, "%s%s\n%s%s", head, damage[d], rest,
				 bare ? "" : "</TRACE>\n");
			run_xml_text(text, &res);
			off = err_offset(res.err);
			T_EQ_INT(res.last_rc, APC_EDATA);
			T_EQ_U64(res.thread_names, 1);
			if (strstr(res.err, "truncated") || !strstr(res.err, "not well-formed") ||
			    off < (long)k || off > (long)(k + strlen(damage[d])))
				T_FAIL("bare %d damage \"%s\": %s", bare, damage[d], res.err);
		}
		/* The same file cut inside the element after the first. */
		snprintf(text, sizeof text, "%s<threadStart threadId=\"2\" ti", head);
		run_xml_text(text, &res);
		T_EQ_INT(res.last_rc, APC_EDATA);
		T_EQ_U64(res.thread_names, 1);
		if (!strstr(res.err, "(truncated trace?)") || err_offset(res.err) != (long)strlen(text))
			T_FAIL("bare %d cut: %s", bare, res.err);
	}
	/* A large trace, damaged past its first chunks. */
	for (int bare = 0; bare <= 1; bare++) {
		struct tptpgen_opts o = {.seed = 3, .threads = 3, .calls = 600, .bare = bare};
		struct tptpgen_truth t;
		struct run res;
		char path[64], *buf = NULL, *nl;
		long full = gen_file(&o, &t, -1, path, sizeof path, &buf), at;
		FILE *f;

		unlink(path);
		T_ASSERT(full > 200000);
		if (full <= 200000) {
			free(buf);
			return;
		}
		nl = memchr(buf + 150000, '\n', (size_t)full - 150000);
		T_ASSERT(nl != NULL);
		if (!nl) {
			free(buf);
			return;
		}
		at = nl + 1 - buf;
		f = fopen(path, "wb");
		T_ASSERT(f != NULL);
		if (!f) {
			free(buf);
			return;
		}
		fwrite(buf, 1, (size_t)at, f);
		fputs("<!-- x -- y -->\n", f);
		fwrite(buf + at, 1, (size_t)(full - at), f);
		fclose(f);
		run_reader(&apc_format_tptp_xml, path, 0, &res);
		unlink(path);
		T_EQ_INT(res.last_rc, APC_EDATA);
		T_EQ_U64(res.st.records, xml_records_before(buf, at));
		if (strstr(res.err, "truncated") || err_offset(res.err) < at ||
		    err_offset(res.err) > at + 15)
			T_FAIL("large bare %d: %s", bare, res.err);
		free(buf);
	}
}

/*
 * The message names the error that ended the parse: an earlier one that
 * did not (an undeclared namespace prefix, which libxml2 reports and
 * reads on past) is not why the file breaks off.
 */
static void xml_reason_is_the_fatal_error(void)
{
	const char *text = "<TRACE>\n<traceStart time=\"100.0\"/>\n"
			   "<p:threadStart threadId=\"9\" time=\"100.0\"/>\n"
			   "<threadStart threadId=\"1\" time=\"100.0\" threadName=\"main\"/>\n"
			   "<threadStart threadId=\"2\" time=\"100.1\" thr";
	struct run res;

	run_xml_text(text, &res);
	T_EQ_INT(res.last_rc, APC_EDATA);
	T_EQ_U64(res.thread_names, 1);
	if (!strstr(res.err, "(truncated trace?)") || strstr(res.err, "amespace") ||
	    !strstr(res.err, "line 5:") || err_offset(res.err) != (long)strlen(text))
		T_FAIL("%s", res.err);
}

/*
 * Binary: a message that runs past the end of the file is a cut
 * ("(truncated trace?)"), unless its attributes end before the file
 * does and another message follows them: then it is a damaged length,
 * said so at the message's offset.
 */
static void bin_damaged_length_not_a_cut(void)
{
	const struct tptp_rec recs[] = {
		{.kind = TPTP_TRACE_START, .has = TPTP_HAS_TIME, .time = 100 * S_NS},
		{.kind = TPTP_THREAD_START, .has = TPTP_HAS_TIME | TPTP_HAS_THREAD, .time = 100 * S_NS,
		 .thread_id = 1, .name = "main"},
		{.kind = TPTP_GC_START, .has = TPTP_HAS_TIME, .time = 100 * S_NS + 1000},
		{.kind = TPTP_GC_FINISH, .has = TPTP_HAS_TIME, .time = 100 * S_NS + 2000},
		{.kind = TPTP_GC_START, .has = TPTP_HAS_TIME, .time = 100 * S_NS + 3000},
		{.kind = TPTP_GC_FINISH, .has = TPTP_HAS_TIME, .time = 100 * S_NS + 4000},
	};
	char path[64], want[64];
	uint8_t f[1024];
	size_t n, pos = 12, third = 0;
	struct run res;
	FILE *fp;

	write_bin(path, sizeof path, recs, NRECS(recs));
	fp = fopen(path, "rb");
	T_ASSERT(fp != NULL);
	if (!fp)
		return;
	n = fread(f, 1, sizeof f, fp);
	fclose(fp);
	T_ASSERT(n > 12 && n < sizeof f);
	for (int i = 0; i < 2; i++) /* to the third message */
		pos += 6 + (size_t)(f[pos + 2] | f[pos + 3] << 8);
	third = pos;
	/* Its length 0x10000: past the end, though its attributes are whole
	 * and the fourth message follows them. */
	f[third + 2] = 0; f[third + 3] = 0; f[third + 4] = 1; f[third + 5] = 0;
	fp = fopen(path, "wb");
	T_ASSERT(fp != NULL && fwrite(f, 1, n, fp) == n);
	fclose(fp);
	run_reader(&apc_format_tptp_bin, path, 0, &res);
	T_EQ_INT(res.last_rc, APC_EDATA);
	T_EQ_U64(res.thread_names, 1);
	T_EQ_U64(res.markers, 0);
	snprintf(want, sizeof want, "offset 0x%zx:", third);
	if (strstr(res.err, "truncated") || !strstr(res.err, "damaged length") ||
	    !strstr(res.err, want))
		T_FAIL("damaged length: %s", res.err);
	/* The length put back, the file cut inside the fifth message. */
	f[third + 2] = 26; f[third + 4] = 0;
	pos = third;
	for (int i = 0; i < 2; i++)
		pos += 6 + (size_t)(f[pos + 2] | f[pos + 3] << 8);
	fp = fopen(path, "wb");
	T_ASSERT(fp != NULL && fwrite(f, 1, pos + 20, fp) == pos + 20);
	fclose(fp);
	run_reader(&apc_format_tptp_bin, path, 0, &res);
	unlink(path);
	T_EQ_INT(res.last_rc, APC_EDATA);
	T_EQ_U64(res.markers, 1);
	snprintf(want, sizeof want, "offset 0x%zx:", pos);
	if (!strstr(res.err, "(truncated trace?)") || !strstr(res.err, want))
		T_FAIL("cut: %s", res.err);
}

/*
 * Bytes a message holds past its known attributes (a newer writer's
 * additions: the spec gives every message a length to skip by) are
 * skipped and counted per message kind; the message itself and those
 * after it are read as usual.
 */
static void bin_extra_bytes_counted(void)
{
	struct bin w;
	struct run res;

	bin_start(&w);
	/* frequency 1 GHz (ticks are ns), with 4 bytes more */
	put_le64(bin_msg(&w, 2, 12), 1000000000);
	/* gcStart (1023) at 100 s, and 1 ns later, with 5 bytes more each */
	for (int i = 0; i < 2; i++)
		memset(bin_gc_start(&w, 100 * S_NS + (uint64_t)i, 5) + 26, 0xee, 5);
	/* gcFinish (1027), exact: l-l-lTl-l-l-s-s- = 48 + 2 bytes */
	put_le64(bin_msg(&w, 1027, 50) + 16, 100 * S_NS + 0x10);
	run_bin_bytes(&w, &res);
	T_EQ_INT(res.last_rc, APC_END);
	T_EQ_U64(res.st.kinds[TPTP_GC_START], 2);
	T_EQ_U64(res.st.kinds[TPTP_GC_FINISH], 1);
	T_EQ_U64(res.markers, 2);
	T_EQ_U64(res.t0, 100 * S_NS);
	T_EQ_U64(run_unmapped(&res, "tptp binary gcStart messages with bytes past the known fields"), 2);
	T_EQ_U64(run_unmapped(&res, "tptp binary frequency messages with bytes past the known fields"), 1);
	T_EQ_U64(run_unmapped(&res, "tptp binary gcFinish messages with bytes past"), 0);
}

/*
 * Numbers that do not parse (not decimal, negative, past 64 bits, empty)
 * are taken as absent, as before, and now counted per attribute; a pid
 * out of range (negative, past 2^31) is counted and the capture's own
 * pid used, in both readers.  The records themselves are still mapped.
 */
static void xml_bad_numbers_counted(void)
{
	static const struct tptp_rec recs[] = {
		{.kind = TPTP_PROCESS_CREATE, .has = TPTP_HAS_TIME | TPTP_HAS_PID, .time = 100 * S_NS,
		 .pid = (int64_t)0xfffffffful},
		{.kind = TPTP_TRACE_START, .has = TPTP_HAS_TIME, .time = 100 * S_NS},
		{.kind = TPTP_THREAD_START, .has = TPTP_HAS_TIME | TPTP_HAS_THREAD, .time = 100 * S_NS,
		 .thread_id = 1, .name = "main"},
	};
	static const char *const pids[] = {"3000000000", "-5", "18446744073709551615"};
	struct run res;

	run_xml_text("<TRACE>\n<traceStart time=\"100.0\"/>\n"
		     "<threadStart threadId=\"1\" time=\"100.0\" threadName=\"main\"/>\n"
		     "<threadStart threadId=\"x2\" time=\"100.0\" threadName=\"two\"/>\n"
		     "<classDef name=\"A\" classId=\"99999999999999999999999\" time=\"100.0\"/>\n"
		     "<methodDef name=\"run\" methodId=\"1\" classIdRef=\"\"/>\n"
		     "<methodEntry threadIdRef=\"1\" time=\"100.1\" methodIdRef=\"-3\" ticket=\"1e3\""
		     " stackDepth=\"one\"/>\n"
		     "<methodExit threadIdRef=\"1\" time=\"100.2\" methodIdRef=\"1\" ticket=\" 7\"/>\n"
		     "<objAlloc threadIdRef=\"1\" time=\"100.3\" objId=\"0x10\" size=\"12kb\"/>\n"
		     "<monWait threadIdRef=\"1\" time=\"100.4\" objIdRef=\"5\" timeout=\"soon\"/>\n"
		     "<monContendedEnter threadIdRef=\"1\" time=\"100.5\" objIdRef=\"5\""
		     " threadOwner=\"?\"/>\n"
		     "</TRACE>\n", &res);
	T_EQ_INT(res.last_rc, APC_END);
	T_EQ_U64(res.st.records, 10);
	T_EQ_U64(res.thread_names, 2);
	T_EQ_U64(res.method_jobs, 1);
	T_EQ_U64(run_unmapped(&res, "tptp thread ids that do not parse"), 1);
	T_EQ_U64(run_unmapped(&res, "tptp class ids that do not parse"), 2);
	T_EQ_U64(run_unmapped(&res, "tptp method ids that do not parse"), 1);
	T_EQ_U64(run_unmapped(&res, "tptp tickets that do not parse"), 2);
	T_EQ_U64(run_unmapped(&res, "tptp stack depths that do not parse"), 1);
	T_EQ_U64(run_unmapped(&res, "tptp object ids that do not parse"), 1);
	T_EQ_U64(run_unmapped(&res, "tptp sizes that do not parse"), 1);
	T_EQ_U64(run_unmapped(&res, "tptp timeouts that do not parse"), 1);
	T_EQ_U64(run_unmapped(&res, "tptp owner thread ids that do not parse"), 1);
	T_EQ_U64(run_unmapped(&res, "tptp times that do not parse"), 0);

	for (size_t i = 0; i < sizeof pids / sizeof pids[0]; i++) {
		char text[512];

		snprintf(text, sizeof text,
			 "<TRACE>\n<processCreate pid=\"%s\" time=\"100.0\"/>\n"
			 "<traceStart time=\"100.0\"/>\n"
			 "<threadStart threadId=\"1\" time=\"100.0\" threadName=\"main\"/>\n</TRACE>\n",
			 pids[i]);
		run_xml_text(text, &res);
		T_EQ_INT(res.last_rc, APC_END);
		T_EQ_U64(res.links, 1);
		T_ASSERT(res.link_pid[0] >= 0x40000000);
		T_EQ_U64(run_unmapped(&res, "tptp processCreate pids out of range"), i != 1);
		T_EQ_U64(run_unmapped(&res, "tptp pids that do not parse"), i == 1);
	}
	run_bin_recs(recs, NRECS(recs), &res);
	T_EQ_INT(res.last_rc, APC_END);
	T_EQ_U64(res.links, 1);
	T_ASSERT(res.link_pid[0] >= 0x40000000);
	T_EQ_U64(run_unmapped(&res, "tptp processCreate pids out of range"), 1);
}

/* A frequency message of 0, or too short for a frequency, sets none:
 * ignored (times stay ns) and counted. */
static void bin_bad_frequency_counted(void)
{
	for (int shortmsg = 0; shortmsg <= 1; shortmsg++) {
		struct bin w;
		struct run res;

		bin_start(&w);
		bin_msg(&w, 2, shortmsg ? 4 : 8); /* frequency 0, or too short */
		bin_gc_start(&w, 0x1000, 0);
		run_bin_bytes(&w, &res);
		T_EQ_INT(res.last_rc, APC_END);
		T_EQ_U64(res.markers, 1);
		T_EQ_U64(res.t0, 0x1000);
		T_EQ_U64(run_unmapped(&res, "tptp binary frequencies of 0"), !shortmsg);
		T_EQ_U64(run_unmapped(&res, "tptp binary frequency messages shorter than 8 bytes"),
			 shortmsg);
	}
}

/* A second frequency message that differs, after data, is ignored and
 * counted: times stay on the first one's scale (at 4 GHz the second
 * gcStart would fall before the first and be clamped).  The same
 * frequency again (1000 MHz is 1 GHz) changes nothing and is not counted. */
static void bin_frequency_change_counted(void)
{
	static const uint64_t second[] = {4000000000ull, 1000};

	for (int i = 0; i < 2; i++) {
		struct bin w;
		struct run res;

		bin_start(&w);
		bin_freq(&w, 1000000000ull);
		bin_gc_start(&w, 0x1000, 0); /* between the two */
		bin_freq(&w, second[i]);
		bin_gc_start(&w, 0x3000, 0);
		run_bin_bytes(&w, &res);
		T_EQ_INT(res.last_rc, APC_END);
		T_EQ_U64(res.markers, 2);
		T_EQ_U64(res.t0, 0x1000);
		T_EQ_U64(run_unmapped(&res, "tptp times before the trace start"), 0);
		T_EQ_U64(run_unmapped(&res, "tptp binary frequency changes mid-trace "
					    "(ignored, the first one holds)"), i == 0);
	}
}

/* Thread ids that cannot be the tid (0 or none, 2^30 or more, reused, the
 * pid) get synthetic tids, counted by reason; a fresh small one is kept. */
static void synthetic_tids_counted(void)
{
	struct run res;

	run_xml_text("<TRACE>\n<processCreate pid=\"42\" time=\"100.0\"/>\n"
		     "<traceStart time=\"100.0\"/>\n"
		     "<threadStart threadId=\"1\" time=\"100.0\" threadName=\"main\"/>\n"
		     "<threadStart threadId=\"0\" time=\"100.0\" threadName=\"zero\"/>\n"
		     "<threadStart threadId=\"1073741824\" time=\"100.0\" threadName=\"big\"/>\n"
		     "<threadStart threadId=\"42\" time=\"100.0\" threadName=\"pid\"/>\n"
		     "<threadEnd threadIdRef=\"1\" time=\"100.1\"/>\n"
		     "<threadStart threadId=\"1\" time=\"100.2\" threadName=\"again\"/>\n"
		     "<gcStart time=\"100.3\"/>\n"
		     "</TRACE>\n", &res);
	T_EQ_INT(res.last_rc, APC_END);
	T_EQ_U64(res.thread_names, 5);
	T_EQ_U64(run_unmapped(&res, "tptp thread ids of 0 or none (given synthetic tids)"), 1);
	T_EQ_U64(run_unmapped(&res, "tptp thread ids of 2^30 or more (given synthetic tids)"), 1);
	T_EQ_U64(run_unmapped(&res, "tptp thread ids reused or equal to the pid (given synthetic tids)"),
		 2);
}

/* A time with characters after a space is read up to them, as it always
 * was, and counted; spaces around the number alone are not counted. */
static void xml_time_trailing_counted(void)
{
	struct run res;

	run_xml_text("<TRACE>\n<traceStart time=\"100.0\"/>\n"
		     "<gcStart time=\"100.5 junk\"/>\n<gcFinish time=\" 100.7 \"/>\n"
		     "<gcStart time=\"101.0 \"/>\n<gcFinish time=\"101.5 1 2\"/>\n"
		     "</TRACE>\n", &res);
	T_EQ_INT(res.last_rc, APC_END);
	T_EQ_U64(res.st.gc_count, 2);
	T_EQ_U64(res.first_marker_ts, 100 * S_NS + S_NS / 2);
	T_EQ_U64(run_unmapped(&res, "tptp times that do not parse"), 0);
	T_EQ_U64(run_unmapped(&res, "tptp times with characters after the number (read up to them)"),
		 2);
}

/*
 * A binary trace cut at a message boundary: from its traceStart up to
 * its traceEnd, the end is damage at the cut ("without its traceEnd"),
 * every message before it read; before the traceStart (a header, no
 * trace begun) and after the traceEnd the end is the end.
 */
static void bin_cut_at_message_boundary(void)
{
	struct tptpgen_opts o = {.seed = 3, .threads = 3, .calls = 60, .binary = 1};
	struct tptpgen_truth t;
	char path[64], *buf = NULL;
	long full = gen_file(&o, &t, -1, path, sizeof path, &buf);
	size_t pos = TPTP_BIN_HEADER, nmsg = 0, tried = 0;
	int started = 0, ended = 0;

	unlink(path);
	if (full < 0 || !buf) {
		T_FAIL("cannot write a generated trace");
		free(buf);
		return;
	}
	while (pos + 6 <= (size_t)full) {
		const uint8_t *m = (const uint8_t *)buf + pos;
		unsigned id = m[0] | m[1] << 8;
		size_t len = m[2] | m[3] << 8 | (size_t)m[4] << 16 | (size_t)m[5] << 24;
		struct run res;

		pos += 6 + len;
		if (id > 1000)
			nmsg++;
		started |= id == 1005;
		ended |= id == 1006;
		/* every boundary near the start and the end, every 7th between */
		if (nmsg > 12 && nmsg % 7 && pos + 200 < (size_t)full)
			continue;
		tried++;
		gen_file(&o, &t, (long)pos, path, sizeof path, NULL);
		run_reader(&apc_format_tptp_bin, path, 0, &res);
		unlink(path);
		T_EQ_U64(res.st.records, nmsg);
		if (started && !ended) {
			T_EQ_INT(res.last_rc, APC_EDATA);
			T_EQ_INT(err_offset(res.err), (long)pos);
			if (!strstr(res.err, "the trace ends without its traceEnd (cut short?)"))
				T_FAIL("cut at %zu: %s", pos, res.err);
		} else {
			T_EQ_INT(res.last_rc, APC_END);
		}
	}
	T_ASSERT(started && ended && tried > 20);
	free(buf);
}

/*
 * A damaged message length, in every encoding: each length byte of
 * messages 3..40 flipped is damage at that message's offset (not bytes
 * skipped as a newer writer's fields, nor the stream read out of step),
 * and every message before it is read.
 */
static void bin_length_flips_found(void)
{
	for (int v = 0; v < 4; v++) {
		struct tptpgen_opts o = {.seed = 9, .threads = 2, .calls = 40, .binary = 1,
					 .big_endian = v & 1, .len_incl_header = v >> 1};
		struct tptpgen_truth t;
		char path[64], *buf = NULL;
		long full = gen_file(&o, &t, -1, path, sizeof path, &buf);
		size_t pos = TPTP_BIN_HEADER;
		uint64_t before = 0;

		unlink(path);
		if (full < 0 || !buf) {
			T_FAIL("cannot write a generated trace");
			free(buf);
			return;
		}
		for (int k = 0; k < 40 && pos + 6 <= (size_t)full; k++) {
			uint8_t *m = (uint8_t *)buf + pos;
			unsigned id = o.big_endian ? (unsigned)(m[0] << 8 | m[1]) : (unsigned)(m[0] | m[1] << 8);
			uint64_t len = 0;

			for (int i = 0; i < 4; i++)
				len |= (uint64_t)m[2 + i] << (o.big_endian ? 8 * (3 - i) : 8 * i);
			for (int b = 2; k >= 2 && b < 6; b++) {
				struct run res;
				FILE *f;

				m[b] ^= 0xff;
				f = fopen(path, "wb");
				T_ASSERT(f && fwrite(buf, 1, (size_t)full, f) == (size_t)full);
				if (f)
					fclose(f);
				m[b] ^= 0xff;
				run_reader(&apc_format_tptp_bin, path, 0, &res);
				unlink(path);
				T_EQ_INT(res.last_rc, APC_EDATA);
				T_EQ_U64(res.st.records, before);
				if (err_offset(res.err) != (long)pos)
					T_FAIL("v %d message %d at %zu byte %d: %s", v, k + 1, pos, b, res.err);
			}
			if (id > 1000)
				before++;
			pos += (size_t)len + (o.len_incl_header ? 0 : 6);
		}
		free(buf);
	}
}

void run_tests(void)
{
	T_RUN(parse_times);
	T_RUN(bids);
	T_RUN(real_files);
	T_RUN(gen_xml);
	T_RUN(gen_bin);
	T_RUN(gen_open_at_end);
	T_RUN(gen_shapes);
	T_RUN(gen_truncated);
	T_RUN(small_window);
	T_RUN(bin_unknown_and_bad);
	T_RUN(gzip_input);
	T_RUN(truth_file);
	T_RUN(mutated_inputs);
	T_RUN(reorder_queue);
	T_RUN(xml_cut_in_tag);
	T_RUN(xml_names_and_values);
	T_RUN(bin_tick_times);
	T_RUN(late_header_records);
	T_RUN(huge_alloc_size);
	T_RUN(gc_start_twice);
	T_RUN(bin_time_overflow);
	T_RUN(entry_without_method_id);
	T_RUN(defs_and_filters_counted);
	T_RUN(zero_at_first_time);
	T_RUN(exits_without_tickets);
	T_RUN(exits_with_nothing_to_match);
	T_RUN(method_redefined_while_open);
	T_RUN(xml_cut_offset_bare);
	T_RUN(thread_end_exits);
	T_RUN(thread_restart_exits);
	T_RUN(xml_long_prolog);
	T_RUN(process_and_threads_apart);
	T_RUN(process_named);
	T_RUN(xml_nested_counted);
	T_RUN(bin_monitor_stack_counted);
	T_RUN(xml_prolog_past_lookahead);
	T_RUN(xml_damage_not_a_cut);
	T_RUN(xml_reason_is_the_fatal_error);
	T_RUN(bin_damaged_length_not_a_cut);
	T_RUN(bin_extra_bytes_counted);
	T_RUN(xml_bad_numbers_counted);
	T_RUN(bin_bad_frequency_counted);
	T_RUN(xml_time_trailing_counted);
	T_RUN(bin_frequency_change_counted);
	T_RUN(synthetic_tids_counted);
	T_RUN(bin_cut_at_message_boundary);
	T_RUN(bin_length_flips_found);
}
