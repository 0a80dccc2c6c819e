/*
 * test_barman.c - the barman reader against ground truth: the real
 * captures in ../shared/testdata/barman (truth written by the harness
 * that ran the real agent) and the fixtures in testdata/barman written
 * by tools/barmangen (truth in the same line format).  Every present
 * record must come out as the events it maps to, with exact
 * timestamps, counter values, annotation texts and PCs.
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "format.h"
#include "input.h"
#include "model.h"
#include "t.h"

/* The reader under test (strong reference: links formats/barman.o). */
extern const struct apc_format apc_format_barman;

/* ---- truth files -------------------------------------------------------- */

#define TR_MAXCNT 64
#define TR_MAXCUST 16

struct tr_rec {
	uint64_t off, blen, ts, pc, value;
	int type, has_pc, ncnt, ncust, atype, entered, reason;
	uint32_t core, task, channel, group, color, gid;
	uint64_t cnt[TR_MAXCNT];
	uint32_t cid[TR_MAXCUST];
	uint64_t cval[TR_MAXCUST];
	char *text;
};

struct tr_map { uint64_t base, len, off, ts; uint32_t task; char name[64]; };

struct truth {
	uint64_t base, mult, div;
	uint32_t ncores;
	uint32_t ncnt[256];
	uint32_t types[256][TR_MAXCNT];
	int tasks_enabled;
	uint32_t ntasks, task_id[64];
	char task_name[64][32];
	uint32_t nmaps;
	struct tr_map maps[16];
	uint64_t present[7];
	uint64_t records_present;
	int64_t expect_err; /* file offset of the expected error, -1 none */
	uint64_t junk, trailing, skipped, uncommitted, pads;
	uint64_t skipped_type[10]; /* SKIPPED records per type (barmangen --extra: 7 to 9) */
	uint64_t data_off, buflen, rd, wr; /* data area file offset, datastore parameters */
	size_t nrec;
	struct tr_rec *recs;
};

static const char *tr_field(const char *line, const char *key)
{
	size_t k = strlen(key);
	const char *p = line;

	while ((p = strstr(p, key)) != NULL) {
		if ((p == line || p[-1] == ' ') && p[k] == '=')
			return p + k + 1;
		p += k;
	}
	return NULL;
}

static uint64_t tr_u64(const char *line, const char *key, uint64_t dflt)
{
	const char *v = tr_field(line, key);
	return v ? strtoull(v, NULL, 0) : dflt;
}

static char *tr_quoted(const char *line, const char *key)
{
	const char *v = tr_field(line, key), *e;
	char *s;

	if (!v || *v != '"')
		return NULL;
	v++;
	e = strrchr(v, '"');
	if (!e || e < v)
		return NULL;
	s = malloc((size_t)(e - v) + 1);
	memcpy(s, v, (size_t)(e - v));
	s[e - v] = 0;
	return s;
}

static size_t tr_list(const char *v, uint64_t *out, size_t max)
{
	size_t n = 0;
	char *end;

	while (v && n < max) {
		out[n++] = strtoull(v, &end, 0);
		if (*end != ',')
			break;
		v = end + 1;
	}
	return n;
}

static int tr_cmp_off(const void *a, const void *b)
{
	const struct tr_rec *x = a, *y = b;
	return x->off < y->off ? -1 : x->off > y->off;
}

static void tr_free(struct truth *t)
{
	for (size_t i = 0; i < t->nrec; i++)
		free(t->recs[i].text);
	free(t->recs);
}

static int tr_load(const char *path, struct truth *t)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0, rcap = 0;

	memset(t, 0, sizeof *t);
	t->expect_err = -1;
	if (!f)
		return -1;
	while (getline(&line, &cap, f) > 0) {
		if (strncmp(line, "H clock ", 8) == 0) {
			t->base = tr_u64(line, "timestamp_base", 0);
			t->mult = tr_u64(line, "timestamp_multiplier", 1);
			t->div = tr_u64(line, "timestamp_divisor", 1);
		} else if (strncmp(line, "H config ", 9) == 0) {
			t->ncores = (uint32_t)tr_u64(line, "max_cores", 0);
			t->tasks_enabled = tr_u64(line, "max_task_infos", 0) > 0;
		} else if (strncmp(line, "H pmu ", 6) == 0) {
			uint64_t v[TR_MAXCNT];
			uint32_t c = (uint32_t)tr_u64(line, "core", 0);
			size_t n = tr_list(tr_field(line, "counter_types"), v, TR_MAXCNT);
			if (c < 256) {
				t->ncnt[c] = (uint32_t)tr_u64(line, "num_counters", 0);
				for (size_t i = 0; i < n; i++)
					t->types[c][i] = (uint32_t)v[i];
			}
		} else if (strncmp(line, "H task ", 7) == 0 && t->ntasks < 64) {
			char *nm = tr_quoted(line, "name");
			t->task_id[t->ntasks] = (uint32_t)tr_u64(line, "task_id", 0);
			snprintf(t->task_name[t->ntasks], 32, "%s", nm ? nm : "");
			free(nm);
			t->ntasks++;
		} else if (strncmp(line, "H mmap ", 7) == 0 && t->nmaps < 16) {
			struct tr_map *m = &t->maps[t->nmaps++];
			char *nm = tr_quoted(line, "name");
			m->base = tr_u64(line, "base_address", 0);
			m->len = tr_u64(line, "length", 0);
			m->off = tr_u64(line, "image_offset", 0);
			m->task = (uint32_t)tr_u64(line, "task_id", 0);
			m->ts = tr_u64(line, "timestamp", 0); /* barmangen: the clock base */
			snprintf(m->name, sizeof m->name, "%s", nm ? nm : "");
			free(nm);
		} else if (strncmp(line, "SUMMARY records_present=", 24) == 0) {
			static const char *names[7] = {"", "SAMPLE", "SAMPLE_WITH_PC", "TASK_SWITCH",
						       "CUSTOM_COUNTER", "ANNOTATION", "HALT_EVENT"};
			t->records_present = tr_u64(line, "SUMMARY records_present", 0);
			t->records_present = strtoull(line + 24, NULL, 0);
			for (int i = 1; i < 7; i++)
				t->present[i] = tr_u64(line, names[i], 0);
		} else if (strncmp(line, "EXPECT ", 7) == 0) {
			t->expect_err = (int64_t)tr_u64(line, "error_offset", (uint64_t)-1);
		} else if (strncmp(line, "FILE ", 5) == 0) {
			t->junk = tr_u64(line, "leading_junk", 0);
			t->trailing = tr_u64(line, "trailing", 0);
			t->data_off = tr_u64(line, "data_area_file_offset", 0);
		} else if (strncmp(line, "H datastore ", 12) == 0) {
			t->buflen = tr_u64(line, "buffer_length", 0);
			t->rd = tr_u64(line, "read_offset", 0);
			t->wr = tr_u64(line, "write_offset", 0);
		} else if (strncmp(line, "SKIPPED ", 8) == 0 && strstr(line, " st=present ")) {
			uint64_t ty = tr_u64(line, "type", 0);
			t->skipped++;
			if (ty < 10)
				t->skipped_type[ty]++;
		} else if (strncmp(line, "UNCOMMITTED ", 12) == 0 && strstr(line, " st=present ")) {
			t->uncommitted++;
		} else if (strncmp(line, "PAD ", 4) == 0 && strstr(line, " st=present ")) {
			t->pads++;
		} else if (strncmp(line, "R ", 2) == 0 && strstr(line, " st=present ")) {
			struct tr_rec *r;
			if (t->nrec == rcap) {
				rcap = rcap ? rcap * 2 : 1024;
				t->recs = realloc(t->recs, rcap * sizeof *t->recs);
			}
			r = &t->recs[t->nrec++];
			memset(r, 0, sizeof *r);
			r->off = tr_u64(line, "off", 0);
			r->blen = tr_u64(line, "blen", 0);
			r->type = (int)tr_u64(line, "type", 0);
			r->core = (uint32_t)tr_u64(line, "core", 0);
			r->ts = tr_u64(line, "ts", 0);
			r->task = (uint32_t)tr_u64(line, "task", 0);
			r->has_pc = tr_field(line, "pc") != NULL;
			r->pc = tr_u64(line, "pc", 0);
			r->ncnt = (int)tr_u64(line, "ncnt", 0);
			{
				uint64_t v[TR_MAXCNT];
				size_t n = tr_list(tr_field(line, "cnt"), v, TR_MAXCNT);
				for (size_t i = 0; i < n; i++)
					r->cnt[i] = v[i];
			}
			r->ncust = (int)tr_u64(line, "ncust", 0);
			if (r->ncust > TR_MAXCUST)
				r->ncust = TR_MAXCUST;
			{
				const char *v = tr_field(line, "cust");
				for (int i = 0; v && i < r->ncust; i++) {
					char *end;
					r->cid[i] = (uint32_t)strtoul(v, &end, 0);
					r->cval[i] = strtoull(end + 1, &end, 0);
					v = *end == ',' ? end + 1 : NULL;
				}
			}
			r->atype = (int)tr_u64(line, "atype", 0);
			r->channel = (uint32_t)tr_u64(line, "channel", 0);
			r->group = (uint32_t)tr_u64(line, "group", 0);
			r->color = (uint32_t)tr_u64(line, "color", 0);
			r->text = tr_quoted(line, "text");
			r->entered = (int)tr_u64(line, "entered", 0);
			r->reason = (int)tr_u64(line, "reason", 0);
			r->gid = (uint32_t)tr_u64(line, "gid", 0);
			r->value = tr_u64(line, "value", 0);
		}
	}
	free(line);
	fclose(f);
	if (t->nrec)
		qsort(t->recs, t->nrec, sizeof *t->recs, tr_cmp_off);
	return 0;
}

/* ---- running the reader -------------------------------------------------- */

struct ev {
	struct apc_event e;
	struct apc_pc pc;
	struct apc_ann ann;
	char *text;
};

struct run {
	struct apc_model model;
	struct ev *ev;
	size_t n;
	int status;            /* last status: APC_END or an error */
	struct apc_err err;
	int damaged;
};

static void run_free(struct run *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->ev[i].text);
	free(r->ev);
	apc_model_free(&r->model);
}

/* Open path with the barman format and pull every event (copied). */
static int run_reader(const char *path, struct run *out, size_t batch_cap)
{
	struct apc_input *in = NULL;
	struct apc_reader r;
	struct apc_batch b;
	size_t cap = 0;
	int rc;

	memset(out, 0, sizeof *out);
	apc_model_init(&out->model);
	memset(&r, 0, sizeof r);
	apc_err_clear(&r.err);
	if (apc_input_open(path, &in, &r.err) < 0) {
		out->err = r.err;
		return out->status = -1;
	}
	r.fmt = &apc_format_barman;
	r.inputs = &in;
	r.ninputs = 1;
	r.model = &out->model;
	apc_batch_init(&b, batch_cap);
	rc = r.fmt->open(&r);
	while (rc >= 0) {
		apc_batch_reset(&b);
		rc = r.fmt->next(&r, &b);
		for (size_t i = 0; i < b.n; i++) {
			/* a row of counter values (APC_EV_COUNTERS) is checked
			 * value by value, as the events it stands for */
			size_t nv = apc_event_nvalues(&b.ev[i]);
			for (size_t k = 0; k < (nv > 1 ? nv : 1); k++) {
				struct ev *e;
				if (out->n == cap) {
					cap = cap ? cap * 2 : 4096;
					out->ev = realloc(out->ev, cap * sizeof *out->ev);
				}
				e = &out->ev[out->n++];
				memset(e, 0, sizeof *e);
				e->e = apc_event_value(&b.ev[i], k);
				if (e->e.type == APC_EV_SAMPLE && e->e.u.sample.depth) {
					e->pc = e->e.u.sample.pcs[0];
					e->e.u.sample.pcs = NULL;
				}
				if (e->e.type == APC_EV_ANNOTATION) {
					e->ann = *e->e.u.ann;
					e->text = strdup(e->ann.text ? e->ann.text : "");
					e->e.u.ann = NULL;
				}
				if (e->e.type == APC_EV_THREAD_NAME || e->e.type == APC_EV_COOKIE_NAME) {
					e->text = strdup(e->e.u.name.name ? e->e.u.name.name : "");
					e->e.u.name.name = NULL;
				}
			}
		}
		if (rc == APC_END)
			break;
	}
	/* batches stay bounded: the reader stops before the cap it was given */
	if (batch_cap >= 64 && b.cap != batch_cap)
		T_FAIL("batch grew from %zu to %zu events", batch_cap, b.cap);
	out->status = rc;
	out->err = r.err;
	out->damaged = r.damaged;
	r.fmt->close(&r);
	apc_batch_free(&b);
	apc_input_close(in);
	return rc;
}

static uint64_t tr_ns(const struct truth *t, uint64_t ticks)
{
	return (uint64_t)((unsigned __int128)(ticks - t->base) * t->mult / t->div);
}

static const char *cookie_name(const struct run *r, int32_t cookie)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->ev[i].e.type == APC_EV_COOKIE_NAME && r->ev[i].e.u.name.id == cookie)
			return r->ev[i].text;
	return NULL;
}

/* The cookie of task's Link in *cookie; 0 when there is no Link. */
static int link_cookie(const struct run *r, uint32_t task, int32_t *cookie)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->ev[i].e.type == APC_EV_LINK && r->ev[i].e.u.link.tid == (int32_t)task) {
			*cookie = r->ev[i].e.u.link.cookie;
			return 1;
		}
	return 0;
}

/* Custom series counters are the declarations with no event number. */
static uint32_t series_counter(const struct run *r, uint32_t gid)
{
	uint32_t k = 0;
	for (size_t i = 0; i < r->model.ncounters; i++) {
		const struct apc_counter_decl *d = &r->model.counters[i];
		if (d->event == -1 && d->cls != APC_CLASS_ACTIVITY && strncmp(d->type, "Barman_", 7) == 0 &&
		    strstr(d->type, "_ccnt") == NULL) {
			if (k == gid)
				return d->id;
			k++;
		}
	}
	return UINT32_MAX;
}

/*
 * tr_map_at() : the image a PC sampled at tick ts by task resolves to:
 * of the mappings that cover it and were inserted by then, the task's
 * own, else a global one (task 0), else another task's; of equals, the
 * one inserted last.  NULL if none; *later then says whether one that
 * covers it was inserted after ts.
 */
static const struct tr_map *tr_map_at(const struct tr_map *maps, uint32_t n, uint64_t pc, uint32_t task,
				      uint64_t ts, int *later)
{
	const struct tr_map *hit = NULL;
	int best = -1;

	if (later)
		*later = 0;
	for (uint32_t m = 0; m < n; m++) {
		const struct tr_map *mp = &maps[m];
		int score = mp->task == task ? 2 : mp->task == 0 ? 1 : 0;
		if (pc < mp->base || pc - mp->base >= mp->len)
			continue;
		if (mp->ts > ts) {
			if (later)
				*later = 1;
			continue;
		}
		if (score > best || (score == best && mp->ts >= hit->ts)) {
			hit = mp;
			best = score;
		}
	}
	return hit;
}

/*
 * compare() : walk the truth's present records in buffer order against
 * the events.  Returns the number of mismatches (each is reported).
 */
/*
 * What compare() expects of annotation names, kept from the truth apart
 * from the reader's own tables: barman names a channel or group for the
 * whole target, a connection (one per core) needs its own declaration,
 * so a string is preceded by its channel's group's and its channel's
 * names where its core's connection lacks their latest version.
 */
#define TN_MAX 512
struct tnames {
	struct { int kind; uint32_t id, group; const char *text; unsigned gen; } n[TN_MAX];
	struct { uint32_t core; int kind; uint32_t id; unsigned gen; } d[TN_MAX];
	size_t nn, nd;
};

static int tn_find(const struct tnames *tn, int kind, uint32_t id)
{
	for (size_t i = 0; i < tn->nn; i++)
		if (tn->n[i].kind == kind && tn->n[i].id == id)
			return (int)i;
	return -1;
}

/* The version of name i declared on core's connection (0: none). */
static unsigned *tn_decl(struct tnames *tn, uint32_t core, int kind, uint32_t id)
{
	for (size_t i = 0; i < tn->nd; i++)
		if (tn->d[i].core == core && tn->d[i].kind == kind && tn->d[i].id == id)
			return &tn->d[i].gen;
	if (tn->nd == TN_MAX)
		return NULL;
	tn->d[tn->nd].core = core;
	tn->d[tn->nd].kind = kind;
	tn->d[tn->nd].id = id;
	tn->d[tn->nd].gen = 0;
	return &tn->d[tn->nd++].gen;
}

/* A name record (kind 0 channel, 1 group) on core; 0, -1 if full. */
static int tn_set(struct tnames *tn, uint32_t core, int kind, uint32_t id, uint32_t group, const char *text)
{
	int i = tn_find(tn, kind, id);
	unsigned *d;

	if (i < 0) {
		if (tn->nn == TN_MAX)
			return -1;
		i = (int)tn->nn++;
		tn->n[i].kind = kind;
		tn->n[i].id = id;
		tn->n[i].text = NULL;
		tn->n[i].gen = 0;
	}
	if (!tn->n[i].text || strcmp(tn->n[i].text, text) || tn->n[i].group != group) {
		tn->n[i].text = text;
		tn->n[i].group = group;
		tn->n[i].gen++;
	}
	if (!(d = tn_decl(tn, core, kind, id)))
		return -1;
	*d = tn->n[i].gen;
	return 0;
}

static int compare(const struct truth *t, const struct run *r, const char *what)
{
	struct tnames *tn = calloc(1, sizeof *tn);
	uint64_t counts[7] = {0};
	uint64_t *cum = calloc(256 * TR_MAXCNT, sizeof *cum);
	uint64_t *last_ts = calloc(256, sizeof *last_ts);
	int32_t conn[256] = {0}; /* each core's annotation connection, once named */
	size_t ei = 0;
	int bad = 0;

#define CHECK(c, ...)                                                          \
	do {                                                                   \
		if (!(c)) {                                                    \
			if (bad++ < 8) {                                       \
				fprintf(stderr, "  %s: record off=%llu: ", what, (unsigned long long)tr->off); \
				fprintf(stderr, __VA_ARGS__);                  \
				fputc('\n', stderr);                           \
			}                                                      \
			goto next_rec;                                         \
		}                                                              \
	} while (0)

	/* preamble: names and links, no timestamp */
	while (ei < r->n && (r->ev[ei].e.flags & APC_EVF_NO_TS))
		ei++;
	for (uint32_t i = 0; i < t->ntasks; i++) {
		int found = 0;
		for (size_t k = 0; k < ei; k++)
			if (r->ev[k].e.type == APC_EV_THREAD_NAME && r->ev[k].e.u.name.id == (int32_t)t->task_id[i] &&
			    strcmp(r->ev[k].text, t->task_name[i]) == 0)
				found = 1;
		if (!found && bad++ < 8)
			fprintf(stderr, "  %s: no thread name for task %u\n", what, t->task_id[i]);
	}
	for (size_t ri = 0; ri < t->nrec; ri++) {
		const struct tr_rec *tr = &t->recs[ri];
		uint64_t ns = tr_ns(t, tr->ts);
		const struct apc_event *e;

		counts[tr->type]++;
		switch (tr->type) {
		case 1:
		case 2:
			CHECK(tr->core < 256 && (uint32_t)tr->ncnt == t->ncnt[tr->core], "ncnt %d", tr->ncnt);
			for (int k = 0; k < tr->ncnt; k++) {
				const struct apc_counter_decl *d;
				uint64_t *c = &cum[tr->core * TR_MAXCNT + k];
				CHECK(ei < r->n, "events end early");
				e = &r->ev[ei++].e;
				CHECK(e->type == APC_EV_COUNTER, "type %d, expected counter", e->type);
				CHECK(e->ts == ns, "ts %llu, expected %llu", (unsigned long long)e->ts, (unsigned long long)ns);
				CHECK(e->core == (int32_t)tr->core, "core %d", e->core);
				CHECK(e->u.counter.pid == (t->tasks_enabled ? (int32_t)tr->task : APC_NO_PID), "pid %d", e->u.counter.pid);
				d = &r->model.counters[e->u.counter.counter];
				if (t->types[tr->core][k] == 0xffffffffu)
					CHECK(strstr(d->type, "_ccnt") != NULL, "counter %s for the cycle counter", d->type);
				else
					CHECK(strstr(d->type, "_cnt") && d->event == t->types[tr->core][k],
					      "counter %s event %lld for type 0x%x", d->type, (long long)d->event, t->types[tr->core][k]);
				/* first reading is the baseline (delta 0); then deltas */
				if (!last_ts[tr->core] && !*c && e->u.counter.value == 0)
					*c = tr->cnt[k];
				else
					*c += (uint64_t)e->u.counter.value;
				CHECK(*c == tr->cnt[k], "counter %d cumulative 0x%llx, expected 0x%llx", k,
				      (unsigned long long)*c, (unsigned long long)tr->cnt[k]);
			}
			for (int k = 0; k < tr->ncust; k++) {
				CHECK(ei < r->n, "events end early");
				e = &r->ev[ei++].e;
				CHECK(e->type == APC_EV_COUNTER && e->ts == ns, "custom value event");
				CHECK(e->u.counter.counter == series_counter(r, tr->cid[k]), "custom series counter");
				CHECK((uint64_t)e->u.counter.value == tr->cval[k], "custom value %lld", (long long)e->u.counter.value);
			}
			if (tr->type == 2) {
				const struct ev *x;
				const struct tr_map *hit = NULL;
				CHECK(ei < r->n, "events end early");
				x = &r->ev[ei++];
				CHECK(x->e.type == APC_EV_SAMPLE && x->e.ts == ns, "sample event");
				/* Exec Cookie: the process's image, its Link's, wherever the PC is */
				int32_t lk;
				if (link_cookie(r, tr->task, &lk))
					CHECK(x->e.u.sample.cookie == lk, "task %u sample exec cookie %d, its link's %d",
					      (unsigned)tr->task, x->e.u.sample.cookie, lk);
				hit = tr_map_at(t->maps, t->nmaps, tr->pc, tr->task, tr->ts, NULL);
				if (hit) {
					const char *nm = cookie_name(r, x->pc.cookie);
					CHECK(nm && strcmp(nm, hit->name) == 0, "pc 0x%llx image %s, expected %s",
					      (unsigned long long)tr->pc, nm ? nm : "(none)", hit->name);
					CHECK((uint64_t)x->pc.offset == tr->pc - hit->base + hit->off, "pc offset");
				} else {
					CHECK(x->pc.cookie == -1 && (uint64_t)x->pc.offset == tr->pc, "unmapped pc");
				}
			}
			last_ts[tr->core] = 1;
			break;
		case 3:
			CHECK(ei < r->n, "events end early");
			e = &r->ev[ei++].e;
			CHECK(e->type == APC_EV_ACTIVITY && e->ts == ns && e->core == (int32_t)tr->core, "activity event");
			CHECK(e->u.activity.tid == (int32_t)tr->task, "activity tid %d, expected %u", e->u.activity.tid, tr->task);
			CHECK(e->u.activity.wait == (tr->reason ? APC_WAIT_OTHER : APC_WAIT_CONTENTION), "wait");
			CHECK(e->u.activity.activity == 1, "activity %d, expected 1 (Task)", e->u.activity.activity);
			break;
		case 4:
			CHECK(ei < r->n, "events end early");
			e = &r->ev[ei++].e;
			CHECK(e->type == APC_EV_COUNTER && e->ts == ns, "custom counter event");
			CHECK(e->u.counter.counter == series_counter(r, tr->gid), "custom counter series (gid %u)", tr->gid);
			CHECK((uint64_t)e->u.counter.value == tr->value, "custom value");
			break;
		case 5: {
			const struct ev *x;
			static const int codes[4][2] = {{APC_ANN_STR, APC_ANN_COLOR_STR}, {APC_ANN_MARKER, APC_ANN_COLOR_MARKER},
							{APC_ANN_CHANNEL, APC_ANN_CHANNEL}, {APC_ANN_GROUP, APC_ANN_GROUP}};
			int ci = tr->atype == 0 ? tn_find(tn, 0, tr->channel) : -1;
			CHECK(tr->core < 256, "core %u", tr->core);
			if (!conn[tr->core]) {
				/* the core's first: its connection's name and link */
				char want[40];
				snprintf(want, sizeof want, "Annotations (core %u)", tr->core);
				CHECK(ei + 1 < r->n, "events end early");
				x = &r->ev[ei++];
				CHECK(x->e.type == APC_EV_THREAD_NAME && x->e.ts == ns && strcmp(x->text, want) == 0,
				      "type %d \"%s\", expected the connection's name \"%s\"", x->e.type,
				      x->text ? x->text : "", want);
				conn[tr->core] = x->e.u.name.id;
				x = &r->ev[ei++];
				CHECK(x->e.type == APC_EV_LINK && x->e.ts == ns && x->e.u.link.cookie == -1 &&
				      x->e.u.link.pid == conn[tr->core] && x->e.u.link.tid == conn[tr->core],
				      "the connection's link");
			}
			for (int kind = 1; ci >= 0 && kind >= 0; kind--) {
				/* the group's name, then the channel's, where missing */
				uint32_t id = kind ? tn->n[ci].group : tr->channel;
				int ni = tn_find(tn, kind, id);
				unsigned *d = ni >= 0 ? tn_decl(tn, tr->core, kind, id) : NULL;
				if (ni < 0 || (d && *d == tn->n[ni].gen))
					continue;
				CHECK(d, "too many names for the test's table");
				CHECK(ei < r->n, "events end early");
				x = &r->ev[ei++];
				CHECK(x->e.type == APC_EV_ANNOTATION && x->e.ts == ns && x->e.core == (int32_t)tr->core,
				      "%s name before the string", kind ? "group" : "channel");
				CHECK(x->ann.code == (kind ? APC_ANN_GROUP : APC_ANN_CHANNEL), "code %d, expected the %s name",
				      x->ann.code, kind ? "group" : "channel");
				CHECK(x->ann.group == (int32_t)tn->n[ni].group && (kind || x->ann.channel == (int32_t)id) &&
				      strcmp(x->text, tn->n[ni].text) == 0,
				      "declared %d/%d \"%s\", expected %u/%u \"%s\"", x->ann.channel, x->ann.group, x->text,
				      tr->channel, tn->n[ni].group, tn->n[ni].text);
				*d = tn->n[ni].gen;
			}
			CHECK(ei < r->n, "events end early");
			x = &r->ev[ei++];
			CHECK(x->e.type == APC_EV_ANNOTATION && x->e.ts == ns, "annotation event");
			CHECK(x->ann.tid == conn[tr->core] && x->ann.pid == conn[tr->core],
			      "annotation tid %d pid %d, its connection's %d", x->ann.tid, x->ann.pid, conn[tr->core]);
			CHECK(tr->atype < 4 && x->ann.code == codes[tr->atype][tr->color != 0], "annotation code %d", x->ann.code);
			CHECK(tr->text && strcmp(x->text, tr->text) == 0, "annotation text \"%s\", expected \"%s\"", x->text,
			      tr->text ? tr->text : "");
			CHECK(x->ann.channel == (int32_t)tr->channel && x->ann.group == (int32_t)tr->group, "channel/group");
			/* barman's 0x1bRRGGBB becomes the wire bytes R, G, B, ESC */
			if (tr->color && tr->atype <= 1) {
				uint32_t want = (tr->color >> 16 & 0xff) << 24 | (tr->color >> 8 & 0xff) << 16 |
						(tr->color & 0xff) << 8 | tr->color >> 24;
				CHECK(x->ann.has_color && x->ann.color == want, "color 0x%08x, expected 0x%08x",
				      x->ann.color, want);
			} else {
				CHECK(!x->ann.has_color, "color 0x%08x, expected none", x->ann.color);
			}
			if (tr->atype >= 2)
				CHECK(tn_set(tn, tr->core, tr->atype == 2 ? 0 : 1, tr->atype == 2 ? tr->channel : tr->group,
					     tr->group, tr->text) == 0, "too many names for the test's table");
			break;
		}
		case 6:
			CHECK(ei < r->n, "events end early");
			e = &r->ev[ei++].e;
			CHECK(e->type == APC_EV_IDLE && e->ts == ns && e->core == (int32_t)tr->core, "idle event");
			CHECK(e->u.idle.state == (tr->entered ? 0 : -1), "idle state");
			break;
		default:
			CHECK(0, "unknown truth type %d", tr->type);
		}
	next_rec:;
	}
	if (ei != r->n && bad++ < 8)
		fprintf(stderr, "  %s: %zu events left over\n", what, r->n - ei);
	for (int i = 1; i < 7; i++)
		if (t->records_present && counts[i] != t->present[i] && bad++ < 8)
			fprintf(stderr, "  %s: %llu records of type %d, summary says %llu\n", what,
				(unsigned long long)counts[i], i, (unsigned long long)t->present[i]);
	/* time order per core */
	{
		uint64_t prev[256] = {0};
		for (size_t i = 0; i < r->n; i++) {
			const struct apc_event *x = &r->ev[i].e;
			if (x->core < 0 || x->core >= 256)
				continue;
			if (x->ts < prev[x->core] && bad++ < 8)
				fprintf(stderr, "  %s: event %zu on core %d goes back in time\n", what, i, x->core);
			prev[x->core] = x->ts;
		}
	}
	free(cum);
	free(last_ts);
	free(tn);
#undef CHECK
	return bad;
}

/* ---- tests ---------------------------------------------------------------- */

static uint8_t *slurp(const char *path, size_t *n);

/* Sum of the unmapped counts whose kind contains `what`. */
static uint64_t unmapped(const struct run *r, const char *what)
{
	uint64_t n = 0;
	for (size_t i = 0; i < r->model.nunmapped; i++)
		if (strstr(r->model.unmapped[i].what, what))
			n += r->model.unmapped[i].count;
	return n;
}

static int check_file(const char *bin, const char *truth_path, size_t batch_cap)
{
	struct truth t;
	struct run r;
	int bad;

	if (tr_load(truth_path, &t) < 0) {
		T_FAIL("cannot read %s", truth_path);
		return 1;
	}
	run_reader(bin, &r, batch_cap);
	if (t.expect_err < 0) {
		if (r.status != APC_END) {
			char buf[1024];
			T_FAIL("%s: %s", bin, apc_err_format(&r.err, buf, sizeof buf));
		}
	} else {
		T_ASSERT(r.status < 0);
		T_ASSERT(r.damaged);
		T_EQ_INT(r.err.offset, t.expect_err);
	}
	bad = compare(&t, &r, bin);
	if (bad)
		T_FAIL("%s: %d mismatches against %s", bin, bad, truth_path);
	T_EQ_U64(r.model.records_read >= t.nrec, 1);
	T_EQ_U64(unmapped(&r, "leading bytes"), t.junk);
	T_EQ_U64(unmapped(&r, "trailing bytes after"), t.trailing);
	T_EQ_U64(unmapped(&r, "barman record type"), t.skipped);
	T_EQ_U64(unmapped(&r, "uncommitted"), t.uncommitted);
	run_free(&r);
	tr_free(&t);
	return bad;
}

static void real_capture(const char *base)
{
	const char *dir = t_shared_testdata();
	char bin[512], truth[512];

	if (!dir)
		T_SKIP("../shared/testdata absent");
	snprintf(bin, sizeof bin, "%s/barman/%s.bin", dir, base);
	snprintf(truth, sizeof truth, "%s/barman/%s.truth.txt", dir, base);
	check_file(bin, truth, 4096);
}

static void real_linear64(void) { real_capture("capture1_linear64"); }
static void real_circular64(void) { real_capture("capture2_circular64"); }
static void real_linear32(void) { real_capture("capture4_linear32_armv7"); }

/* Batch size 1 makes every record straddle batches. */
static void real_tiny_batches(void)
{
	const char *dir = t_shared_testdata();
	char bin[512], truth[512];

	if (!dir)
		T_SKIP("../shared/testdata absent");
	snprintf(bin, sizeof bin, "%s/barman/capture2_circular64.bin", dir);
	snprintf(truth, sizeof truth, "%s/barman/capture2_circular64.truth.txt", dir);
	check_file(bin, truth, 1);
}

/* Header metadata and counter naming of the real 64-bit capture. */
static void real_metadata(void)
{
	const char *dir = t_shared_testdata();
	char bin[512];
	struct run r;
	const struct apc_counter_decl *d;

	if (!dir)
		T_SKIP("../shared/testdata absent");
	snprintf(bin, sizeof bin, "%s/barman/capture1_linear64.bin", dir);
	run_reader(bin, &r, 4096);
	T_EQ_INT(r.status, APC_END);
	T_EQ_STR(r.model.meta.target_name, "barman-host-cap1-linear64");
	T_EQ_INT(r.model.meta.ncores, 2);
	T_EQ_U64(r.model.meta.cores[1].cpuid, 0x41d03);
	T_EQ_STR(r.model.meta.cores[0].name, "Cortex-A53");
	T_EQ_INT(r.model.meta.sample_rate, 1000);
	T_EQ_U64(r.model.meta.wall_clock_ns, 1700000000000000000ull);
	d = apc_model_find_counter(&r.model, "ARMv8_Cortex_A53_ccnt");
	T_ASSERT(d && d->event == 0x11 && d->cls == APC_CLASS_DELTA && d->per_cpu == APC_YES);
	d = apc_model_find_counter(&r.model, "ARMv8_Cortex_A53_cnt0");
	T_ASSERT(d && d->event == 0x8 && strcmp(d->category, "Cortex-A53") == 0);
	T_EQ_STR(d ? d->title : NULL, "Instructions (Executed)");
	d = apc_model_find_counter(&r.model, "ARMv8_Cortex_A53_cnt2");
	T_ASSERT(d && d->event == 0x4);
	run_free(&r);

	snprintf(bin, sizeof bin, "%s/barman/capture4_linear32_armv7.bin", dir);
	run_reader(bin, &r, 4096);
	T_EQ_INT(r.status, APC_END);
	T_EQ_U64(r.model.meta.cores[0].cpuid, 0x41c09);
	T_ASSERT(apc_model_find_counter(&r.model, "ARMv7_Cortex_A9_ccnt") != NULL);
	d = apc_model_find_counter(&r.model, "Barman_Sensors_Voltage");
	T_ASSERT(d != NULL);
	if (d) {
		T_EQ_STR(d->title, "Sensors");
		T_EQ_STR(d->units, "mV");
		T_EQ_STR(d->description, "Supply voltage");
		T_EQ_INT(d->cls, APC_CLASS_ABSOLUTE);
		T_EQ_INT(d->display, APC_DISPLAY_AVERAGE);
		T_EQ_INT(d->series, APC_SERIES_OVERLAY);
		T_EQ_INT(d->render, APC_RENDER_LINE);
		T_EQ_U64(d->color, 0xff);
	}
	d = apc_model_find_counter(&r.model, "Barman_Sensors_Events");
	T_ASSERT(d && d->cls == APC_CLASS_INCIDENT && d->display == APC_DISPLAY_ACCUMULATE);
	run_free(&r);
}

/* Every fixture in testdata/barman with a .truth file. */
static void generated_fixtures(void)
{
	char dir[512];
	DIR *d;
	struct dirent *de;
	int n = 0;

	snprintf(dir, sizeof dir, "%s/barman", t_testdata());
	d = opendir(dir);
	if (!d)
		T_SKIP("testdata/barman absent");
	while ((de = readdir(d)) != NULL) {
		char bin[1024], truth[1024];
		size_t k = strlen(de->d_name);
		if (k < 5 || strcmp(de->d_name + k - 4, ".bin") != 0)
			continue;
		snprintf(bin, sizeof bin, "%s/%s", dir, de->d_name);
		snprintf(truth, sizeof truth, "%s/%.*s.truth", dir, (int)(k - 4), de->d_name);
		check_file(bin, truth, 4096);
		check_file(bin, truth, 7);
		n++;
	}
	closedir(d);
	T_ASSERT(n >= 8);
}

/* Detection by bid, and a gzip-compressed dump (a stream that cannot seek). */
static void detect_and_gzip(void)
{
	char bin[512], truth[512], gz[] = "/tmp/test_barman_gz_XXXXXX";
	struct apc_input *in = NULL;
	struct apc_err err;
	const struct apc_format *f;
	uint8_t *data;
	size_t n = 0;
	int bid = 0, fd;
	gzFile g;

	apc_err_clear(&err);
	snprintf(bin, sizeof bin, "%s/barman/le32_junk_trailing.bin", t_testdata());
	T_EQ_INT(apc_input_open(bin, &in, &err), APC_OK);
	f = apc_format_detect(in, &bid);
	T_ASSERT(f == &apc_format_barman);
	T_EQ_INT(bid, 80); /* magic found after leading junk */
	apc_input_close(in);
	snprintf(bin, sizeof bin, "%s/barman/le64_circular_wrap.bin", t_testdata());
	T_EQ_INT(apc_input_open(bin, &in, &err), APC_OK);
	T_EQ_INT(apc_format_barman.bid(in), 100);
	apc_input_close(in);

	data = slurp(bin, &n);
	T_ASSERT(data != NULL);
	fd = mkstemp(gz);
	T_ASSERT(fd >= 0);
	if (!data || fd < 0)
		return;
	g = gzdopen(fd, "wb");
	T_EQ_INT(gzwrite(g, data, (unsigned)n), (int)n);
	gzclose(g);
	snprintf(truth, sizeof truth, "%s/barman/le64_circular_wrap.truth", t_testdata());
	T_EQ_INT(check_file(gz, truth, 100), 0);
	unlink(gz);
	free(data);
}

/* Not barman at all: no magic, no bid. */
static void not_barman(void)
{
	char path[] = "/tmp/test_barman_XXXXXX";
	int fd = mkstemp(path);
	struct apc_input *in = NULL;
	struct apc_err err;
	struct run r;

	T_ASSERT(fd >= 0);
	if (fd < 0)
		return;
	T_ASSERT(write(fd, "hello, this is not a barman dump\n", 33) == 33);
	close(fd);
	apc_err_clear(&err);
	T_EQ_INT(apc_input_open(path, &in, &err), APC_OK);
	T_EQ_INT(apc_format_barman.bid(in), 0);
	apc_input_close(in);
	run_reader(path, &r, 64);
	T_EQ_INT(r.status, APC_EDATA);
	T_ASSERT(strstr(r.err.msg, "magic") != NULL);
	run_free(&r);
	unlink(path);
}

static uint8_t *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b;
	long k;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	k = ftell(f);
	fseek(f, 0, SEEK_SET);
	b = malloc(k > 0 ? (size_t)k : 1);
	*n = fread(b, 1, (size_t)k, f);
	fclose(f);
	return b;
}

/* n bytes to put at file offset at */
struct patch {
	size_t at, n;
	uint8_t b[24];
};

/*
 * variants() : a copy of the fixture src in a new temporary file (its
 * name into path, a mkstemp template): the first len bytes, with the
 * np patches applied.  Returns 0, or -1 (reported).
 */
static int variants(const char *src, char *path, size_t len, const struct patch *pt, size_t np)
{
	size_t size = 0;
	uint8_t *buf = slurp(src, &size);
	int fd = mkstemp(path), ok = buf && fd >= 0 && len <= size;

	for (size_t i = 0; ok && i < np; i++)
		if (pt[i].n > sizeof pt[i].b || pt[i].at + pt[i].n > len)
			ok = 0;
	if (!ok) {
		T_FAIL("cannot make a variant of %s", src);
		free(buf);
		if (fd >= 0) {
			close(fd);
			unlink(path);
		}
		return -1;
	}
	for (size_t i = 0; i < np; i++)
		memcpy(buf + pt[i].at, pt[i].b, pt[i].n);
	ok = write(fd, buf, len) == (ssize_t)len;
	close(fd);
	free(buf);
	if (!ok) {
		T_FAIL("cannot write %s", path);
		unlink(path);
		return -1;
	}
	return 0;
}

static void put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> 8 * i);
}

/* One patch: n bytes of buf at file offset at. */
static int variant(const char *src, char *path, size_t len, size_t at, const void *bytes, size_t n)
{
	struct patch pt = {at, n, {0}};

	if (n > sizeof pt.b)
		return -1;
	memcpy(pt.b, bytes, n);
	return variants(src, path, len, &pt, 1);
}

/* The first annotation event whose text is `text`, or NULL. */
static const struct ev *find_ann(const struct run *r, const char *text)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->ev[i].e.type == APC_EV_ANNOTATION && strcmp(r->ev[i].text, text) == 0)
			return &r->ev[i];
	return NULL;
}

/*
 * Annotation colours: barman stores 0x1bRRGGBB (BM_ANNOTATE_COLOR_RGB in
 * gator's barman-api-public.h; the spec says 0x00RRGGBB), the model
 * the wire bytes R, G, B, tag as 0xRRGGBBTT (a real gatord capture
 * shows ANNOTATE_RED as 0xff00001b).  One marker of le64_linear_v3 (little-endian, 64-bit,
 * with tasks) gets each colour in turn.
 */
static void annotation_colors(void)
{
	static const struct {
		uint32_t in, out;
		uint64_t odd; /* counted as an unknown tag */
	} cases[] = {
		{0x1bff0000, 0xff00001b, 0}, /* BM_ANNOTATE_COLOR_RED */
		{0x1b0000ff, 0x0000ff1b, 0}, /* BM_ANNOTATE_COLOR_BLUE */
		{0x1b123456, 0x1234561b, 0},
		{0x00ff0000, 0xff00001b, 0}, /* the spec's 0x00RRGGBB */
		{0x00000001, 0x0000011b, 0},
		{0x03000000, 0x00000003, 1}, /* an unknown tag: kept, and counted */
		{0, 0, 0},                   /* cyclic: no colour */
	};
	char src[512], truth[512];
	const struct tr_rec *tr = NULL;
	struct truth t;
	size_t at;

	snprintf(src, sizeof src, "%s/barman/le64_linear_v3.bin", t_testdata());
	snprintf(truth, sizeof truth, "%s/barman/le64_linear_v3.truth", t_testdata());
	T_ASSERT(tr_load(truth, &t) == 0);
	for (size_t i = 0; i < t.nrec && !tr; i++)
		if (t.recs[i].type == 5 && t.recs[i].atype == 1 && t.recs[i].color)
			tr = &t.recs[i];
	T_ASSERT(tr != NULL);
	if (!tr) {
		tr_free(&t);
		return;
	}
	/* length word, type/core/time, task, data length, channel, group */
	at = (size_t)(t.data_off + tr->off + 8 + 16 + 4 + 8 + 8);
	{
		size_t n = 0;
		uint8_t *orig = slurp(src, &n), want[4];
		put_le(want, tr->color, 4);
		T_ASSERT(orig && at + 4 <= n && memcmp(orig + at, want, 4) == 0);
		free(orig);
	}
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		char path[] = "/tmp/test_barman_col_XXXXXX";
		uint8_t w[4];
		const struct ev *x;
		struct run r;

		put_le(w, cases[k].in, 4);
		if (variant(src, path, (size_t)(t.data_off + t.buflen), at, w, 4) < 0)
			break;
		run_reader(path, &r, 256);
		T_EQ_INT(r.status, APC_END);
		x = find_ann(&r, tr->text);
		T_ASSERT(x != NULL);
		if (x) {
			T_EQ_INT(x->ann.code, cases[k].in ? APC_ANN_COLOR_MARKER : APC_ANN_MARKER);
			T_EQ_INT(x->ann.has_color, cases[k].in != 0);
			T_EQ_U64(x->ann.color, cases[k].out);
		}
		T_EQ_U64(unmapped(&r, "tag byte"), cases[k].odd);
		run_free(&r);
		unlink(path);
	}
	tr_free(&t);
}

/*
 * Hostile datastore parameters (the header's last 40 bytes: length,
 * write, read, total): offsets whose sum with the data area's file
 * offset wraps past 2^64 would land in the header and decode its bytes
 * as records.  They must fail at the datastore's offset, with nothing
 * decoded; a length that just fits is still read.
 */
static void hostile_datastore_offsets(void)
{
	static const char *const names[] = {"le64_linear_v3", "le64_circular_wrap"};
	const uint64_t M = UINT64_MAX;

	for (size_t f = 0; f < sizeof names / sizeof names[0]; f++) {
		char src[512], truth[512];
		struct truth t;
		uint64_t ds, fit;

		snprintf(src, sizeof src, "%s/barman/%s.bin", t_testdata(), names[f]);
		snprintf(truth, sizeof truth, "%s/barman/%s.truth", t_testdata(), names[f]);
		T_ASSERT(tr_load(truth, &t) == 0);
		ds = t.data_off - 40; /* both fixtures: no junk, the header 8-aligned */
		fit = (uint64_t)INT64_MAX - t.data_off;
		{
			size_t n = 0;
			uint8_t *orig = slurp(src, &n), want[24];
			put_le(want, t.buflen, 8);
			put_le(want + 8, t.wr, 8);
			put_le(want + 16, t.rd, 8);
			T_ASSERT(orig && ds + 24 <= n && memcmp(orig + ds, want, 24) == 0);
			free(orig);
		}
		const struct {
			uint64_t len, wr, rd;
			int ok;
		} cases[] = {
			{M, M - 1000 + 56, M - 1000, 0}, /* the read offset wraps into the header */
			{M - 100, 56, 0, 0},             /* the end of the data area wraps */
			{fit + 1, 56, 0, 0},             /* one past the largest file offset */
			{fit, t.wr, t.rd, 1},            /* fits: the records are read */
		};
		for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
			char path[] = "/tmp/test_barman_ovf_XXXXXX";
			uint8_t w[24];
			struct run r;
			int failed = t_failed_now;

			t_failed_now = 0;
			put_le(w, cases[k].len, 8);
			put_le(w + 8, cases[k].wr, 8);
			put_le(w + 16, cases[k].rd, 8);
			if (variant(src, path, (size_t)(t.data_off + t.buflen), (size_t)ds, w, 24) < 0)
				break;
			run_reader(path, &r, 256);
			if (!cases[k].ok) {
				T_EQ_INT(r.status, APC_EDATA);
				T_EQ_INT(r.err.offset, (int64_t)ds);
				T_ASSERT(strstr(r.err.msg, "out of range") != NULL);
				T_EQ_U64(r.n, 0);
				T_EQ_U64(r.model.records_read, 0);
				T_EQ_U64(unmapped(&r, "trailing bytes"), 0);
			} else if (f == 0) {
				/* linear: every record, as the unchanged file */
				T_EQ_INT(r.status, APC_END);
				T_EQ_U64(r.model.records_read >= t.nrec, 1);
			} else {
				/* circular: other offsets modulo the new length;
				 * whatever is read, nothing comes from outside */
				T_ASSERT(r.status == APC_END || r.status < 0);
				if (r.status < 0 && r.err.offset != APC_NO_OFFSET)
					T_ASSERT(r.err.offset >= (int64_t)t.data_off);
			}
			if (t_failed_now)
				fprintf(stderr, "  (%s, case %zu)\n", names[f], k);
			t_failed_now |= failed;
			run_free(&r);
			unlink(path);
		}
		tr_free(&t);
	}
}

/*
 * PMU readings of ~0 (BM_ARM_PMU_INVALID_COUNTER_VALUE in gator's
 * barman: "the counter was not read") put into samples of
 * le64_linear_v3 (little-endian, 64-bit, tasks and custom series;
 * core 0 has one counter, core 1 five, so both the per-value and the
 * per-row decoding meet them).  Such a reading gives no event and is
 * counted; the slot's next valid reading is diffed against its last
 * valid one (the first valid one is the baseline, 0).
 */
static void invalid_pmu_readings(void)
{
	/* core, index among that core's samples, slot */
	static const struct { uint32_t core, nth; int slot; } marks[] = {
		{1, 0, 1},                  /* before any valid reading of the slot */
		{1, 5, 2},
		{1, 8, 4}, {1, 9, 4},       /* two in a row */
		{1, 12, 0}, {1, 12, 3},     /* two slots of one sample */
		{0, 3, 0},
		{0, 4, 0},
	};
	enum { NMARK = sizeof marks / sizeof marks[0] };
	char src[512], truth[512], path[] = "/tmp/test_barman_inv_XXXXXX";
	const struct tr_rec *rec[NMARK] = {0};
	struct patch pt[NMARK];
	struct truth t;
	struct run r;
	size_t n = 0;
	uint8_t *orig;

	snprintf(src, sizeof src, "%s/barman/le64_linear_v3.bin", t_testdata());
	snprintf(truth, sizeof truth, "%s/barman/le64_linear_v3.truth", t_testdata());
	T_ASSERT(tr_load(truth, &t) == 0);
	orig = slurp(src, &n);
	T_ASSERT(orig != NULL);
	for (int m = 0; m < NMARK && orig; m++) {
		uint32_t seen = 0;
		for (size_t i = 0; i < t.nrec && !rec[m]; i++)
			if ((t.recs[i].type == 1 || t.recs[i].type == 2) && t.recs[i].core == marks[m].core &&
			    seen++ == marks[m].nth)
				rec[m] = &t.recs[i];
		T_ASSERT(rec[m] != NULL);
		if (!rec[m])
			break;
		/* length word, type/core/time, task, custom count, PC */
		pt[m].at = (size_t)(t.data_off + rec[m]->off + 8 + 16 + 4 + 4 + (rec[m]->type == 2 ? 8 : 0) +
				    8 * (size_t)marks[m].slot);
		pt[m].n = 8;
		put_le(pt[m].b, rec[m]->cnt[marks[m].slot], 8);
		T_ASSERT(pt[m].at + 8 <= n && memcmp(orig + pt[m].at, pt[m].b, 8) == 0);
		memset(pt[m].b, 0xff, 8);
	}
	free(orig);
	if (t_failed_now || variants(src, path, n, pt, NMARK) < 0) {
		tr_free(&t);
		return;
	}
	run_reader(path, &r, 256);
	T_EQ_INT(r.status, APC_END);
	T_EQ_U64(unmapped(&r, "marked invalid"), NMARK);
	/* per core, the PMU counter events in order against the truth's
	 * readings with the marked ones left out */
	for (uint32_t core = 0; core < 2; core++) {
		uint64_t last[TR_MAXCNT];
		size_t ei = 0;
		int bad = 0;

		memset(last, 0xff, sizeof last);
		for (size_t i = 0; i < t.nrec && !bad; i++) {
			const struct tr_rec *tr = &t.recs[i];
			if ((tr->type != 1 && tr->type != 2) || tr->core != core)
				continue;
			for (int k = 0; k < tr->ncnt && !bad; k++) {
				const struct apc_event *e = NULL;
				int64_t want;
				int marked = 0;
				for (int m = 0; m < NMARK; m++)
					marked |= rec[m] == tr && marks[m].slot == k;
				if (marked)
					continue;
				want = last[k] == UINT64_MAX ? 0 : (int64_t)(tr->cnt[k] - last[k]);
				last[k] = tr->cnt[k];
				/* the next PMU counter event of this core */
				for (; ei < r.n && !e; ei++) {
					const struct apc_event *x = &r.ev[ei].e;
					if (x->type == APC_EV_COUNTER && x->core == (int32_t)core &&
					    strncmp(r.model.counters[x->u.counter.counter].type, "Barman_", 7) != 0)
						e = x;
				}
				if (!e) {
					T_FAIL("core %u record off=%llu slot %d: no event", core, (unsigned long long)tr->off, k);
					bad = 1;
				} else if (e->ts != tr_ns(&t, tr->ts) || e->u.counter.value != want) {
					T_FAIL("core %u record off=%llu slot %d: value %lld at %llu ns, expected %lld at %llu ns",
					       core, (unsigned long long)tr->off, k, (long long)e->u.counter.value,
					       (unsigned long long)e->ts, (long long)want, (unsigned long long)tr_ns(&t, tr->ts));
					bad = 1;
				}
			}
		}
		for (; ei < r.n && !bad; ei++) {
			const struct apc_event *x = &r.ev[ei].e;
			if (x->type == APC_EV_COUNTER && x->core == (int32_t)core &&
			    strncmp(r.model.counters[x->u.counter.counter].type, "Barman_", 7) != 0) {
				T_FAIL("core %u: PMU counter events left over", core);
				bad = 1;
			}
		}
	}
	run_free(&r);
	unlink(path);
	tr_free(&t);
}

/*
 * cut_circular() : the wrapped circular dump src cut to `cut` bytes.
 * The buffer's start (the newer piece) comes first in the file, the
 * older piece after it; the reader decodes the older piece first.
 * Every record wholly inside the file must come out, in time order:
 * the older piece's up to the cut, then the whole newer piece even
 * though the older one ended early; and the loss must be reported at
 * an offset between the last whole record and the cut.
 */
static void cut_circular(const char *src, const char *truth_path, uint64_t cut)
{
	char path[] = "/tmp/test_barman_cut_XXXXXX";
	struct truth t;
	uint64_t newer = 0, last_end = 0;
	size_t keep = 0;

	if (tr_load(truth_path, &t) < 0) {
		T_FAIL("cannot read %s", truth_path);
		return;
	}
	T_ASSERT(t.buflen > 0 && t.wr - t.rd > t.buflen - t.rd % t.buflen); /* wrapped */
	for (size_t i = 0; i < t.nrec; i++) {
		struct tr_rec *tr = &t.recs[i];
		uint64_t at = t.data_off + tr->off % t.buflen;
		if (at + tr->blen <= cut) {
			newer += at < t.data_off + t.rd % t.buflen;
			if (at + tr->blen > last_end && at >= t.data_off + t.rd % t.buflen)
				last_end = at + tr->blen;
			t.recs[keep++] = *tr;
		} else {
			free(tr->text);
		}
	}
	t.nrec = keep;
	t.records_present = 0; /* the summary counts the whole buffer */
	T_ASSERT(newer > 0);   /* the newer piece must be in the test */
	if (variants(src, path, (size_t)cut, NULL, 0) == 0) {
		for (int pass = 0; pass < 2; pass++) {
			struct run r;
			char what[600];
			int bad;

			run_reader(path, &r, pass ? 7 : 256);
			snprintf(what, sizeof what, "%s cut at %llu", src, (unsigned long long)cut);
			T_ASSERT(r.status < 0 && r.damaged);
			if (r.err.offset < (int64_t)(last_end ? last_end : t.data_off) || r.err.offset > (int64_t)cut)
				T_FAIL("%s: error at %lld: %s", what, (long long)r.err.offset, r.err.msg);
			bad = compare(&t, &r, what);
			if (bad)
				T_FAIL("%s: %d mismatches", what, bad);
			run_free(&r);
		}
		unlink(path);
	}
	tr_free(&t);
}

/* Cuts in the older piece (after the newer one in the file), at and
 * off record boundaries, and in the newer piece (the older one gone). */
static void circular_cut(void)
{
	char src[512], truth[512];
	struct truth t;

	snprintf(src, sizeof src, "%s/barman/le64_circular_wrap.bin", t_testdata());
	snprintf(truth, sizeof truth, "%s/barman/le64_circular_wrap.truth", t_testdata());
	T_ASSERT(tr_load(truth, &t) == 0);
	{
		uint64_t older = t.data_off + t.rd % t.buflen, end = t.data_off + t.buflen;
		const uint64_t cuts[] = {older + 1, older + (end - older) / 2, older + (end - older) / 2 + 3, end - 1,
					 t.data_off + 100};
		for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++)
			cut_circular(src, truth, cuts[i]);
		/* at a record boundary: the first older record's end */
		for (size_t i = 0; i < t.nrec; i++)
			if (t.data_off + t.recs[i].off % t.buflen >= older + 400) {
				cut_circular(src, truth, t.data_off + t.recs[i].off % t.buflen);
				break;
			}
	}
	tr_free(&t);
}

/* The real circular capture cut as the review found it: at 10000 (in
 * the older piece) and at 4000 (in the newer piece). */
static void real_circular_cut(void)
{
	const char *dir = t_shared_testdata();
	char bin[512], truth[512];

	if (!dir)
		T_SKIP("../shared/testdata absent");
	snprintf(bin, sizeof bin, "%s/barman/capture2_circular64.bin", dir);
	snprintf(truth, sizeof truth, "%s/barman/capture2_circular64.truth.txt", dir);
	cut_circular(bin, truth, 10000);
	cut_circular(bin, truth, 4000);
}

/*
 * circular_uncommitted_in() : src (a wrapped circular dump, 64-bit
 * little-endian) with the padding bit set in the length words of
 * present records nth_older (in the older piece, from the read
 * position to the end of the buffer) and nth_newer (in the newer
 * piece, at the buffer's start).  The agent pads only up to the wrap
 * point, so those two are records it had not committed: each counted
 * as such, skipped by its length, and every other record decoded.
 * The real padding at the wrap point is no record and no loss.
 */
static void circular_uncommitted_in(const char *src, const char *truth_path, size_t nth_older,
				    size_t nth_newer)
{
	char path[] = "/tmp/test_barman_unc_XXXXXX";
	struct truth t;
	struct patch pt[2];
	size_t older = 0, newer = 0, keep = 0, np = 0, n = 0;
	uint64_t wrap;
	uint8_t *orig;
	struct run r;
	int bad;

	if (tr_load(truth_path, &t) < 0) {
		T_FAIL("cannot read %s", truth_path);
		return;
	}
	T_ASSERT(t.pads >= 1); /* the test needs the wrap point's padding */
	wrap = t.rd - t.rd % t.buflen + t.buflen;
	T_ASSERT(t.wr > wrap);
	orig = slurp(src, &n);
	T_ASSERT(orig != NULL);
	for (size_t i = 0; orig && i < t.nrec; i++) {
		struct tr_rec *tr = &t.recs[i];
		int hit = tr->off < wrap ? older++ == nth_older : newer++ == nth_newer;
		if (hit && np < 2) {
			pt[np].at = (size_t)(t.data_off + tr->off % t.buflen);
			pt[np].n = 8;
			memcpy(pt[np].b, orig + pt[np].at, 8);
			T_ASSERT(!(pt[np].b[7] & 0x80)); /* committed in the original */
			pt[np].b[7] |= 0x80;
			np++;
			free(tr->text);
		} else {
			t.recs[keep++] = *tr;
		}
	}
	free(orig);
	t.nrec = keep;
	t.records_present = 0; /* the summary counts the two as records */
	T_EQ_INT(np, 2);
	if (np == 2 && variants(src, path, n, pt, np) == 0) {
		run_reader(path, &r, 256);
		T_EQ_INT(r.status, APC_END);
		T_EQ_U64(unmapped(&r, "uncommitted"), 2);
		T_EQ_U64(r.model.records_read, t.nrec + t.skipped);
		bad = compare(&t, &r, path);
		if (bad)
			T_FAIL("%s: %d mismatches", src, bad);
		run_free(&r);
		unlink(path);
	}
	tr_free(&t);
}

static void circular_uncommitted(void)
{
	const char *dir = t_shared_testdata();
	char src[512], truth[512];

	snprintf(src, sizeof src, "%s/barman/le64_circular_wrap.bin", t_testdata());
	snprintf(truth, sizeof truth, "%s/barman/le64_circular_wrap.truth", t_testdata());
	circular_uncommitted_in(src, truth, 3, 1);
	if (!dir)
		return;
	snprintf(src, sizeof src, "%s/barman/capture2_circular64.bin", dir);
	snprintf(truth, sizeof truth, "%s/barman/capture2_circular64.truth.txt", dir);
	circular_uncommitted_in(src, truth, 4, 30);
}

/* The header offset of the mmap entry with this base and length (64-bit
 * little-endian), or 0. */
static size_t find_map(const uint8_t *h, size_t n, uint64_t base, uint64_t len)
{
	uint8_t want[16];

	put_le(want, base, 8);
	put_le(want + 8, len, 8);
	for (size_t i = 12; i + 16 <= n; i++)
		if (memcmp(h + i, want, 16) == 0)
			return i - 12; /* timestamp, task id, then the base */
	return 0;
}

/*
 * A mapping's timestamp is when it was inserted (the spec; the real
 * capture4 inserts libextra.so at tick 391740 and samples it only
 * after).  le64_linear_v3 with libextra.so's entry changed: (a)
 * inserted at its third sample, so the two before it fall in no image
 * (kept as raw PCs and counted); (b) inserted at firmware.axf's range,
 * global, in mid-capture: the image loaded there later, which the
 * samples after it resolve to, those before it still firmware.axf.
 */
static void mmap_insertion_time(void)
{
	char src[512], truth[512];
	struct truth t;
	size_t n = 0, at0, at1;
	uint8_t *orig;

	snprintf(src, sizeof src, "%s/barman/le64_linear_v3.bin", t_testdata());
	snprintf(truth, sizeof truth, "%s/barman/le64_linear_v3.truth", t_testdata());
	T_ASSERT(tr_load(truth, &t) == 0);
	orig = slurp(src, &n);
	T_ASSERT(orig != NULL && t.nmaps == 2 && t.data_off <= n);
	if (!orig || t.nmaps != 2 || t.data_off > n) {
		free(orig);
		tr_free(&t);
		return;
	}
	at0 = find_map(orig, (size_t)t.data_off, t.maps[0].base, t.maps[0].len);
	at1 = find_map(orig, (size_t)t.data_off, t.maps[1].base, t.maps[1].len);
	T_ASSERT(at0 && at1 && strcmp(t.maps[1].name, "libextra.so") == 0);
	for (int c = 0; c < 2 && at0 && at1; c++) {
		const struct tr_map *m = &t.maps[c ? 0 : 1]; /* the range libextra.so gets */
		struct tr_map maps[2];
		uint64_t when = 0, want_early = 0;
		uint32_t hits = 0;
		char path[] = "/tmp/test_barman_mmap_XXXXXX";
		struct patch pt[2];
		struct run r;
		size_t ei = 0;
		int later;

		memcpy(maps, t.maps, sizeof maps);
		for (size_t i = 0; i < t.nrec && !when; i++)
			if (t.recs[i].type == 2 && t.recs[i].pc - m->base < m->len && ++hits == (c ? 6u : 3u))
				when = t.recs[i].ts;
		T_ASSERT(when != 0);
		maps[1].ts = when;
		if (c) {
			maps[1].base = maps[0].base;
			maps[1].len = maps[0].len;
			maps[1].task = 0;
		}
		/* entry 1: timestamp, task, base; then its length */
		pt[0].at = at1;
		pt[0].n = 20;
		put_le(pt[0].b, maps[1].ts, 8);
		put_le(pt[0].b + 8, maps[1].task, 4);
		put_le(pt[0].b + 12, maps[1].base, 8);
		pt[1].at = at1 + 20;
		pt[1].n = 8;
		put_le(pt[1].b, maps[1].len, 8);
		if (variants(src, path, n, pt, 2) < 0)
			break;
		run_reader(path, &r, 256);
		T_EQ_INT(r.status, APC_END);
		for (size_t i = 0; i < t.nrec; i++) {
			const struct tr_rec *tr = &t.recs[i];
			const struct tr_map *hit;
			const struct ev *x = NULL;
			if (tr->type != 2)
				continue;
			hit = tr_map_at(maps, 2, tr->pc, tr->task, tr->ts, &later);
			want_early += !hit && later;
			for (; ei < r.n && !x; ei++)
				if (r.ev[ei].e.type == APC_EV_SAMPLE)
					x = &r.ev[ei];
			if (!x) {
				T_FAIL("case %d: no sample for record off=%llu", c, (unsigned long long)tr->off);
				break;
			}
			if (hit) {
				const char *nm = cookie_name(&r, x->pc.cookie);
				if (!nm || strcmp(nm, hit->name) != 0 || (uint64_t)x->pc.offset != tr->pc - hit->base + hit->off)
					T_FAIL("case %d: record off=%llu pc 0x%llx at %llu: %s+0x%llx, expected %s+0x%llx", c,
					       (unsigned long long)tr->off, (unsigned long long)tr->pc, (unsigned long long)tr->ts,
					       nm ? nm : "(none)", (unsigned long long)x->pc.offset, hit->name,
					       (unsigned long long)(tr->pc - hit->base + hit->off));
			} else if (x->pc.cookie != -1 || (uint64_t)x->pc.offset != tr->pc) {
				T_FAIL("case %d: record off=%llu pc 0x%llx at %llu: cookie %d, expected none", c,
				       (unsigned long long)tr->off, (unsigned long long)tr->pc, (unsigned long long)tr->ts,
				       x->pc.cookie);
			}
		}
		T_EQ_U64(want_early, c ? 0 : 2);
		T_EQ_U64(unmapped(&r, "before their image was mapped"), want_early);
		run_free(&r);
		unlink(path);
	}
	free(orig);
	tr_free(&t);
}

/*
 * untimed_in() : src with the timestamps of the present records
 * numbered in marks[0..nmark) (in buffer order) set to ~0, which the
 * reader reads as "no time of its own": such a record takes the time
 * of the record before it, and at the start, where there is none, the
 * time of the first record with one, so that neither the span nor the
 * origin of --begin moves to a time no record had.  Each is counted.
 * A record stamped 0 is different: a time, before the clock base when
 * the base is above 0.
 */
static void untimed_in(const char *src, const char *truth_path, int ptr, const size_t *marks, size_t nmark)
{
	char path[] = "/tmp/test_barman_ts_XXXXXX";
	struct truth t;
	struct patch pt[8];
	size_t n = 0;
	uint8_t *orig;
	struct run r;
	uint64_t first = UINT64_MAX;
	int bad;

	if (tr_load(truth_path, &t) < 0 || nmark > 8) {
		T_FAIL("cannot read %s", truth_path);
		return;
	}
	orig = slurp(src, &n);
	T_ASSERT(orig != NULL);
	for (size_t k = 0; orig && k < nmark; k++) {
		const struct tr_rec *tr = &t.recs[marks[k]];
		pt[k].at = (size_t)(t.data_off + tr->off % t.buflen) + (size_t)ptr + 8;
		pt[k].n = 8;
		put_le(pt[k].b, tr->ts, 8);
		T_ASSERT(memcmp(orig + pt[k].at, pt[k].b, 8) == 0);
		memset(pt[k].b, 0xff, 8);
	}
	free(orig);
	/* what the truth becomes: the time before, or the first one after */
	for (size_t i = 0; i < t.nrec; i++) {
		int marked = 0;
		for (size_t k = 0; k < nmark; k++)
			marked |= marks[k] == i;
		if (!marked) {
			if (first == UINT64_MAX)
				first = i;
			continue;
		}
		if (i > 0 && first != UINT64_MAX)
			t.recs[i].ts = t.recs[i - 1].ts;
	}
	for (size_t i = 0; i < first && first < t.nrec; i++)
		t.recs[i].ts = t.recs[first].ts;
	if (variants(src, path, n, pt, nmark) == 0) {
		run_reader(path, &r, 256);
		T_EQ_INT(r.status, APC_END);
		T_EQ_U64(unmapped(&r, "stamped ~0"), nmark);
		T_EQ_U64(unmapped(&r, "capture start"), 0);
		T_EQ_U64(unmapped(&r, "before the clock base"), 0);
		bad = compare(&t, &r, path);
		if (bad)
			T_FAIL("%s: %d mismatches", src, bad);
		for (size_t i = 0; i < r.n; i++)
			if (!(r.ev[i].e.flags & APC_EVF_NO_TS) && r.ev[i].e.ts < tr_ns(&t, t.recs[first].ts)) {
				T_FAIL("%s: event %zu at %llu ns, before the first record's time", src, i,
				       (unsigned long long)r.ev[i].e.ts);
				break;
			}
		run_free(&r);
		unlink(path);
	}
	tr_free(&t);
}

static void untimed_records(void)
{
	const char *dir = t_shared_testdata();
	char src[512], truth[512];
	static const size_t lead2[] = {0, 1, 10}, lead1[] = {0};

	/* the clock base far below the first record's time */
	snprintf(src, sizeof src, "%s/barman/demo.bin", t_testdata());
	snprintf(truth, sizeof truth, "%s/barman/demo.truth", t_testdata());
	untimed_in(src, truth, 8, lead2, 3);
	if (!dir)
		return;
	/* the real circular capture: base 0, the first record 4.96 ms in */
	snprintf(src, sizeof src, "%s/barman/capture2_circular64.bin", dir);
	snprintf(truth, sizeof truth, "%s/barman/capture2_circular64.truth.txt", dir);
	untimed_in(src, truth, 8, lead1, 1);
}

/*
 * No record with a time at all (every one of le32_linear_v1 stamped
 * ~0): they are placed at the capture start, the clock base, and
 * counted as such.
 */
static void untimed_all(void)
{
	char src[512], truth[512], path[] = "/tmp/test_barman_ts0_XXXXXX";
	struct truth t;
	size_t n = 0;
	uint8_t *buf;
	struct run r;
	FILE *f;
	int fd;

	snprintf(src, sizeof src, "%s/barman/le32_linear_v1.bin", t_testdata());
	snprintf(truth, sizeof truth, "%s/barman/le32_linear_v1.truth", t_testdata());
	T_ASSERT(tr_load(truth, &t) == 0);
	buf = slurp(src, &n);
	T_ASSERT(buf != NULL && t.nrec > 10);
	fd = mkstemp(path);
	T_ASSERT(fd >= 0);
	if (!buf || fd < 0) {
		free(buf);
		tr_free(&t);
		return;
	}
	close(fd);
	for (size_t i = 0; i < t.nrec; i++)
		memset(buf + t.data_off + t.recs[i].off + 4 + 8, 0xff, 8);
	f = fopen(path, "wb");
	T_ASSERT(f && fwrite(buf, 1, n, f) == n);
	if (f)
		fclose(f);
	run_reader(path, &r, 256);
	T_EQ_INT(r.status, APC_END);
	T_EQ_U64(unmapped(&r, "capture start"), t.nrec);
	T_EQ_U64(unmapped(&r, "before the clock base"), 0);
	for (size_t i = 0; i < r.n; i++)
		if (r.ev[i].e.ts != 0) {
			T_FAIL("event %zu at %llu ns, not at the capture start", i, (unsigned long long)r.ev[i].e.ts);
			break;
		}
	run_free(&r);
	unlink(path);
	free(buf);
	tr_free(&t);
}

/*
 * A record stamped before the clock base (demo's first, a sample in
 * firmware.axf, stamped 0) is placed at the capture start and counted;
 * the mappings made at the start (at the base) hold for it there.
 */
static void before_base_keeps_image(void)
{
	char src[512], truth[512], path[] = "/tmp/test_barman_base_XXXXXX";
	const struct tr_rec *tr;
	const struct tr_map *hit;
	uint8_t zero[8] = {0};
	struct truth t;
	struct run r;

	snprintf(src, sizeof src, "%s/barman/demo.bin", t_testdata());
	snprintf(truth, sizeof truth, "%s/barman/demo.truth", t_testdata());
	T_ASSERT(tr_load(truth, &t) == 0);
	tr = &t.recs[0];
	hit = tr_map_at(t.maps, t.nmaps, tr->pc, tr->task, tr->ts, NULL);
	T_ASSERT(tr->type == 2 && hit != NULL);
	if (!hit || variant(src, path, (size_t)(t.data_off + t.buflen), (size_t)(t.data_off + tr->off + 16), zero, 8) < 0) {
		tr_free(&t);
		return;
	}
	run_reader(path, &r, 256);
	T_EQ_INT(r.status, APC_END);
	T_EQ_U64(unmapped(&r, "before the clock base"), 1);
	T_EQ_U64(unmapped(&r, "before their image was mapped"), 0);
	for (size_t i = 0; i < r.n; i++)
		if (r.ev[i].e.type == APC_EV_SAMPLE) {
			const char *nm = cookie_name(&r, r.ev[i].pc.cookie);
			T_EQ_U64(r.ev[i].e.ts, 0);
			T_EQ_STR(nm ? nm : "(none)", hit->name);
			T_EQ_U64(r.ev[i].pc.offset, tr->pc - hit->base + hit->off);
			break;
		}
	run_free(&r);
	unlink(path);
	tr_free(&t);
}

/*
 * unknown_types_in() : src with the 5th present record of types 5 and
 * 6 retyped 7 and 8.  The spec knows types 1 to 6 only and the real v3
 * captures hold no others: a record of another type is skipped by its
 * block length, gives no event, and is counted under its number; the
 * records after it decode as before.
 */
static void unknown_types_in(const char *src, const char *truth_path)
{
	char path[] = "/tmp/test_barman_type_XXXXXX";
	struct truth t;
	struct patch pt[2];
	size_t keep = 0, np = 0, seen[2] = {0, 0};
	struct run r;
	int bad;

	if (tr_load(truth_path, &t) < 0) {
		T_FAIL("cannot read %s", truth_path);
		return;
	}
	for (size_t i = 0; i < t.nrec; i++) {
		struct tr_rec *tr = &t.recs[i];
		int k = tr->type - 5;
		if ((k == 0 || k == 1) && seen[k]++ == 4 && np < 2) {
			pt[np].at = (size_t)(t.data_off + tr->off % t.buflen) + 8; /* 64-bit length word */
			pt[np].n = 4;
			put_le(pt[np].b, (uint64_t)tr->type + 2, 4);
			np++;
			free(tr->text);
		} else {
			t.recs[keep++] = *tr;
		}
	}
	t.nrec = keep;
	t.records_present = 0;
	T_EQ_INT(np, 2);
	if (np == 2 && variants(src, path, (size_t)(t.data_off + t.buflen), pt, 2) == 0) {
		run_reader(path, &r, 256);
		T_EQ_INT(r.status, APC_END);
		T_EQ_U64(unmapped(&r, "barman record type 7"), 1 + t.skipped_type[7]);
		T_EQ_U64(unmapped(&r, "barman record type 8"), 1 + t.skipped_type[8]);
		T_EQ_U64(r.model.records_read, t.nrec + t.skipped + 2);
		bad = compare(&t, &r, path);
		if (bad)
			T_FAIL("%s: %d mismatches", src, bad);
		run_free(&r);
		unlink(path);
	}
	tr_free(&t);
}

static void unknown_record_types(void)
{
	const char *dir = t_shared_testdata();
	char src[512], truth[512];

	snprintf(src, sizeof src, "%s/barman/le64_linear_v3.bin", t_testdata());
	snprintf(truth, sizeof truth, "%s/barman/le64_linear_v3.truth", t_testdata());
	unknown_types_in(src, truth);
	if (!dir)
		return;
	snprintf(src, sizeof src, "%s/barman/capture1_linear64.bin", dir);
	snprintf(truth, sizeof truth, "%s/barman/capture1_linear64.truth.txt", dir);
	unknown_types_in(src, truth);
}

/*
 * Damaged copies of the fixtures (bytes flipped in the header and the
 * data, every truncation length on a stride): the reader must stop
 * cleanly, never crash or hang, and a failure must carry an offset
 * inside the file.
 */
static void mutated_inputs(void)
{
	static const char *names[] = {"le64_linear_v3", "be32_circular", "le64_circular_wrap", "le32_custom_charts"};
	char path[] = "/tmp/test_barman_mut_XXXXXX";
	uint64_t seed = 12345;
	int fd = mkstemp(path);
	int runs = 0;

	T_ASSERT(fd >= 0);
	if (fd < 0)
		return;
	close(fd);
	for (size_t f = 0; f < sizeof names / sizeof names[0]; f++) {
		char src[512];
		size_t n = 0;
		uint8_t *orig, *buf;

		snprintf(src, sizeof src, "%s/barman/%s.bin", t_testdata(), names[f]);
		orig = slurp(src, &n);
		if (!orig) {
			T_FAIL("cannot read %s", src);
			continue;
		}
		buf = malloc(n);
		for (int it = 0; it < 120; it++) {
			struct run r;
			size_t len = n;
			FILE *o;

			memcpy(buf, orig, n);
			if (it < 40) {
				len = (size_t)it * (n / 40); /* truncations */
			} else {
				for (int k = 0; k < 1 + it % 4; k++) {
					seed = seed * 6364136223846793005ull + 1442695040888963407ull;
					/* half the hits in the header, half anywhere */
					size_t at = (size_t)(seed >> 33) % (k % 2 ? n : (n < 2048 ? n : 2048));
					buf[at] ^= (uint8_t)(1u << ((seed >> 20) & 7));
				}
			}
			o = fopen(path, "wb");
			fwrite(buf, 1, len, o);
			fclose(o);
			run_reader(path, &r, 256);
			T_ASSERT(r.status == APC_END || r.status < 0);
			if (r.status < 0 && r.err.offset != APC_NO_OFFSET)
				if (!(r.err.offset >= 0 && (uint64_t)r.err.offset <= len))
					T_FAIL("%s it %d: offset %lld len %zu: %s", names[f], it, (long long)r.err.offset, len, r.err.msg);
			run_free(&r);
			runs++;
		}
		free(buf);
		free(orig);
	}
	unlink(path);
	T_EQ_INT(runs, 480);
}

void run_tests(void)
{
	T_RUN(real_linear64);
	T_RUN(real_circular64);
	T_RUN(real_linear32);
	T_RUN(real_tiny_batches);
	T_RUN(real_metadata);
	T_RUN(generated_fixtures);
	T_RUN(detect_and_gzip);
	T_RUN(not_barman);
	T_RUN(mutated_inputs);
	T_RUN(annotation_colors);
	T_RUN(hostile_datastore_offsets);
	T_RUN(invalid_pmu_readings);
	T_RUN(circular_cut);
	T_RUN(real_circular_cut);
	T_RUN(circular_uncommitted);
	T_RUN(mmap_insertion_time);
	T_RUN(untimed_records);
	T_RUN(untimed_all);
	T_RUN(before_base_keeps_image);
	T_RUN(unknown_record_types);
}
