/*
 * test_writer.c - the APC writer: a model with two cores, a few counters
 * and every event type is written, then 0000000000 is read back with a
 * small frame parser of our own (packed integers only) and captured.xml
 * with libxml2; archives are read back with libarchive.
 */
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include "annotate.h"
#include "cpu.h"
#include "frame.h"
#include "model.h"
#include "packed.h"
#include "t.h"
#include "verify.h"
#include "writer.h"

#define DELTA 1000000000ull /* monotonic delta of the test model */

/* ---- files ------------------------------------------------------------ */

static char tmproot[256];

static int rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static void rm_tree(const char *p)
{
	nftw(p, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

/* A fresh empty folder for one test; NULL, the test failed, if none. */
static const char *fresh_dir(void)
{
	static char dir[300];

	if (!tmproot[0]) {
		const char *t = getenv("TMPDIR");
		snprintf(tmproot, sizeof tmproot, "%s/test_writer-XXXXXX", t && *t ? t : "/tmp");
		if (!mkdtemp(tmproot)) {
			T_FAIL("cannot make %s", tmproot);
			return NULL;
		}
	}
	static int n;
	snprintf(dir, sizeof dir, "%s/d%d", tmproot, n++);
	if (mkdir(dir, 0755) != 0) {
		T_FAIL("cannot make %s", dir);
		return NULL;
	}
	return dir;
}

/* The file `leaf` in folders a and b: there, not empty, and the same
 * bytes in both. */
static int same_leaf(const char *a, const char *b, const char *leaf)
{
	char pa[600], pb[600];
	size_t na, nb;
	uint8_t *x, *y;
	int same;

	snprintf(pa, sizeof pa, "%s/%s", a, leaf);
	snprintf(pb, sizeof pb, "%s/%s", b, leaf);
	x = t_read_file(pa, &na);
	y = t_read_file(pb, &nb);
	T_ASSERT(x && y && na > 0);
	same = x && y && na == nb && !memcmp(x, y, na);
	free(x);
	free(y);
	return same;
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

/* ---- the model and events --------------------------------------------- */

static void build_model(struct apc_model *m)
{
	struct apc_counter_decl *d;

	apc_model_init(m);
	apc_strset(&m->meta.target_name, "board");
	apc_model_set_cores(m, 2);
	m->meta.cores[0].cpuid = 0x41d03;
	apc_strset(&m->meta.cores[0].name, "Cortex-A53");
	m->meta.cores[1].cpuid = 0x41d07;
	apc_strset(&m->meta.cores[1].name, "Cortex-A57");
	m->meta.wall_clock_ns = 1700000000000000000ull;
	m->meta.uptime_ns = 5000;
	m->meta.monotonic_delta = DELTA;
	m->meta.sample_rate = 1000;
	m->meta.created = 1700000000;
	apc_model_add_attr(m, "uname", "Linux test");
	apc_model_add_attr(m, "PAGESIZE", "4096");

	d = apc_model_add_counter(m, "ARMv8_Cortex_A53_cnt0");
	d->event = 0x11;
	d->per_cpu = APC_YES;
	apc_strset(&d->category, "Cortex-A53");
	apc_strset(&d->title, "Cycles");
	d = apc_model_add_counter(m, "mem_used"); /* wants key 5 */
	d->key = 5;
	d->cls = APC_CLASS_ABSOLUTE;
	d = apc_model_add_counter(m, "also5");    /* wants key 5 too: gets another */
	d->key = 5;
	d = apc_model_add_counter(m, "lowkey");   /* key 1 is reserved: reassigned */
	d->key = 1;
	d = apc_model_add_counter(m, "act");
	d->cls = APC_CLASS_ACTIVITY;
	d->cores = 2;
	d->nactivities = 1;
	d->activities = calloc(1, sizeof *d->activities);
	apc_strset(&d->activities[0].name, "Run");
}

static const struct apc_pc pcs[] = {{5, 0x1000}, {1, 0x2000}, {0, -8}};
static struct apc_ann anns[3];
static char bigtext[5000];
static const uint8_t rawbytes[] = {0xde, 0xad, 0xbe, 0xef};

static struct apc_event *add(struct apc_batch *b, int type, uint64_t ts, int32_t core)
{
	return apc_batch_add(b, (uint16_t)type, DELTA + ts, core);
}

/*
 * Every event type.  Times are zero-based plus DELTA; two events are out
 * of order on their core (expected reordered = 2).
 */
static void fill_batch(struct apc_batch *b)
{
	struct apc_event *e;

	memset(anns, 0, sizeof anns);
	anns[0].tid = 10, anns[0].pid = 10, anns[0].code = APC_ANN_STR, anns[0].text = "hello", anns[0].text_len = 5;
	anns[1].tid = 11, anns[1].pid = 10, anns[1].code = APC_ANN_MARKER, anns[1].text = "mark", anns[1].text_len = 4;
	memset(bigtext, 'x', sizeof bigtext - 1);
	anns[2].tid = 10, anns[2].pid = 10, anns[2].code = APC_ANN_STR, anns[2].text = bigtext,
	anns[2].text_len = sizeof bigtext - 1;

	e = add(b, APC_EV_RAW_FRAME, 0, 1);
	e->flags = APC_EVF_NO_TS;
	e->u.raw.frame_type = 12, e->u.raw.len = sizeof rawbytes, e->u.raw.bytes = rawbytes;
	e = add(b, APC_EV_COOKIE_NAME, 0, 0);
	e->flags = APC_EVF_NO_TS;
	e->u.name.id = 5, e->u.name.name = "/bin/app";
	e = add(b, APC_EV_THREAD_NAME, 100, 0);
	e->u.name.id = 42, e->u.name.name = "worker";
	e = add(b, APC_EV_PROC, 100, 1);
	e->u.proc.pid = 42, e->u.proc.tid = 43, e->u.proc.image = "/bin/app", e->u.proc.comm = "app";
	/* One block on core 0 at t=200 (two counters, then one with a pid). */
	e = add(b, APC_EV_COUNTER, 200, 0);
	e->u.counter.counter = 0, e->u.counter.pid = APC_NO_PID, e->u.counter.value = 7;
	e = add(b, APC_EV_COUNTER, 200, 0);
	e->u.counter.counter = 2, e->u.counter.pid = APC_NO_PID, e->u.counter.value = 8;
	e = add(b, APC_EV_COUNTER, 200, 0);
	e->u.counter.counter = 3, e->u.counter.pid = 42, e->u.counter.value = -9;
	e = add(b, APC_EV_COUNTER, 210, 1);
	e->u.counter.counter = 0, e->u.counter.pid = APC_NO_PID, e->u.counter.value = 70;
	e = add(b, APC_EV_COUNTER, 220, APC_NO_CORE); /* system-wide: core 0 */
	e->u.counter.counter = 1, e->u.counter.pid = APC_NO_PID, e->u.counter.value = 1 << 20;
	e = add(b, APC_EV_LINK, 230, APC_NO_CORE);
	e->u.link.cookie = 5, e->u.link.pid = 42, e->u.link.tid = 43;
	e = add(b, APC_EV_ACTIVITY, 240, 1);
	e->u.activity.counter = 4, e->u.activity.activity = 1, e->u.activity.tid = 43, e->u.activity.wait = 0;
	e = add(b, APC_EV_SCHED_SWITCH, 250, 1);
	e->u.sched.tid = 43, e->u.sched.state = 1;
	e = add(b, APC_EV_SAMPLE, 260, 1);
	e->u.sample.pid = 42, e->u.sample.tid = 43, e->u.sample.cookie = 5, e->u.sample.depth = 3,
	e->u.sample.pcs = pcs;
	e = add(b, APC_EV_ANNOTATION, 270, APC_NO_CORE);
	e->u.ann = &anns[0];
	e = add(b, APC_EV_ANNOTATION, 271, APC_NO_CORE);
	e->u.ann = &anns[1];
	e = add(b, APC_EV_ANNOTATION, 272, APC_NO_CORE);
	e->u.ann = &anns[2];
	e = add(b, APC_EV_IDLE, 280, 0);
	e->u.idle.state = 0;
	e = add(b, APC_EV_SCHED_SWITCH, 150, 1); /* out of order on core 1 (last 260) */
	e->u.sched.tid = 44, e->u.sched.state = 0;
	e = add(b, APC_EV_THREAD_EXIT, 300, 1);
	e->u.sched.tid = 43;
	e = add(b, APC_EV_TASK_EXIT, 310, APC_NO_CORE);
	e->u.sched.tid = 43;
	e = add(b, APC_EV_COUNTER, 290, 0); /* out of order: after the task exit at 310 */
	e->u.counter.counter = 0, e->u.counter.pid = APC_NO_PID, e->u.counter.value = 1;
	e = apc_batch_add(b, APC_EV_COUNTER, 5, 1); /* before the delta: clamps to 0, then moved forward */
	e->u.counter.counter = 0, e->u.counter.pid = APC_NO_PID, e->u.counter.value = 2;
}

#define EXPECTED_REORDERED 3

static int expect_failure; /* the next write_capture() is meant to fail: stay quiet */

/* Write model m and batch b to out; returns the writer status. */
static int write_model(const char *out, const struct apc_write_opts *o, struct apc_model *m,
		       const struct apc_batch *b, struct apc_write_stats *st)
{
	struct apc_writer *w = NULL;
	struct apc_err err;
	int rc;

	apc_err_clear(&err);
	rc = apc_writer_open(out, o, &w, &err);
	if (rc == APC_OK)
		rc = apc_writer_begin(w, m, &err);
	if (rc == APC_OK)
		rc = apc_writer_write(w, b, &err);
	if (rc == APC_OK)
		rc = apc_writer_finish(w, &err);
	if (rc == APC_OK) {
		if (st)
			*st = *apc_writer_stats(w);
		apc_writer_free(w);
	} else {
		char buf[1024];
		if (!expect_failure)
			fprintf(stderr, "  writer: %s\n", apc_err_format(&err, buf, sizeof buf));
		if (w)
			apc_writer_abort(w);
	}
	return rc;
}

/* A test's start: a fresh folder, the path `name` in it in out (512
 * bytes), the test model in m and an empty batch of cap events in b.
 * Returns the folder, or NULL (the test failed) without one. */
static const char *begin_test(char *out, const char *name, struct apc_model *m, struct apc_batch *b,
			      size_t cap)
{
	const char *dir = fresh_dir();

	if (!dir)
		return NULL;
	snprintf(out, 512, "%s/%s", dir, name);
	build_model(m);
	apc_batch_init(b, cap);
	return dir;
}

/* Write the test capture to out; returns the writer status. */
static int write_capture(const char *out, const struct apc_write_opts *o, struct apc_write_stats *st)
{
	struct apc_model m;
	struct apc_batch b;
	int rc;

	build_model(&m);
	apc_batch_init(&b, 64);
	fill_batch(&b);
	rc = write_model(out, o, &m, &b, st);
	apc_batch_free(&b);
	apc_model_free(&m);
	return rc;
}

/* ---- a minimal reader for 0000000000 ---------------------------------- */

struct rd {
	const uint8_t *p;
	size_t n, i;
	int bad;
};

/* The frame does not parse: stop reading it. */
static void rd_fail(struct rd *r)
{
	r->bad = 1;
	r->i = r->n;
}

/* Past a value of k bytes (k <= 0: a bad one); whether it was good. */
static int rd_step(struct rd *r, int k)
{
	if (k <= 0) {
		rd_fail(r);
		return 0;
	}
	r->i += (size_t)k;
	return 1;
}

static int64_t rd64(struct rd *r)
{
	int64_t v = 0;

	return rd_step(r, apc_unpack64(r->p + r->i, r->n - r->i, &v)) ? v : 0;
}

static int32_t rd32(struct rd *r)
{
	int32_t v = 0;

	return rd_step(r, apc_unpack32(r->p + r->i, r->n - r->i, &v)) ? v : 0;
}

/* An APC string; returns a pointer into the frame and its length. */
static const uint8_t *rdstr(struct rd *r, size_t *len)
{
	int32_t n = rd32(r);
	const uint8_t *s = r->p + r->i;

	if (n < 0 || (size_t)n > r->n - r->i) {
		rd_fail(r);
		*len = 0;
		return s;
	}
	r->i += (size_t)n;
	*len = (size_t)n;
	return s;
}

static const char *rdcstr(struct rd *r)
{
	const char *s = (const char *)r->p + r->i;
	const uint8_t *z = memchr(r->p + r->i, 0, r->n - r->i);

	if (!z) {
		rd_fail(r);
		return "";
	}
	r->i = (size_t)(z - r->p) + 1;
	return s;
}

#define MAXKEYS 64
#define MAXFD 16

struct scan {
	int nframes, parse_errors, bad_core, order_errors, canary_ok, summary_first, ncorenames;
	char corename[2][32];
	uint32_t cpuid[2];
	int bc_frames, bc_not_key0, bc_core_mismatch;
	int32_t keys[MAXKEYS];
	int nkeys;
	int n_values, n_thread_names, n_cookie_names, n_links, n_acts, n_task_exits, n_switches,
	    n_exits, n_idles, n_samples, n_procs, n_ext_close, n_raw, sample_ok, proc_ok;
	int64_t first_counter_ts;
	uint64_t last[2], floor;
	uint8_t *ext[MAXFD];
	size_t ext_len[MAXFD];
	uint32_t max_frame;
	int n_ext_frames; /* External frames carrying stream bytes */
};

static void note_key(struct scan *s, int32_t key)
{
	for (int i = 0; i < s->nkeys; i++)
		if (s->keys[i] == key)
			return;
	if (s->nkeys < MAXKEYS)
		s->keys[s->nkeys++] = key;
}

/* Per-core order, as the writer promises: core -1 is every core. */
static void order(struct scan *s, int32_t core, int64_t ts)
{
	uint64_t t = (uint64_t)ts;

	if (core >= 2) {
		s->bad_core++;
		return;
	}
	if (core >= 0) {
		uint64_t min = s->last[core] > s->floor ? s->last[core] : s->floor;
		if (t < min)
			s->order_errors++;
		s->last[core] = t;
	} else {
		for (int c = 0; c < 2; c++)
			if (t < s->last[c] || t < s->floor)
				s->order_errors++;
		s->floor = t;
	}
}

static void scan_summary(struct scan *s, struct rd *r)
{
	size_t n, kn;
	const uint8_t *str;

	if (rd32(r) != 1)
		s->parse_errors++;
	str = rdstr(r, &n);
	s->canary_ok = n == strlen(APC_NEWLINE_CANARY) && !memcmp(str, APC_NEWLINE_CANARY, n);
	rd64(r), rd64(r), rd64(r);
	for (;;) {
		rdstr(r, &kn);
		if (kn == 0 || r->bad)
			break;
		rdstr(r, &n);
	}
	while (r->i < r->n && !r->bad) {
		int32_t code = rd32(r), core, cpuid;
		if (code != 3) {
			s->parse_errors++;
			return;
		}
		core = rd32(r);
		cpuid = rd32(r);
		str = rdstr(r, &n);
		if (core >= 0 && core < 2 && n < 32) {
			memcpy(s->corename[core], str, n);
			s->corename[core][n] = 0;
			s->cpuid[core] = (uint32_t)cpuid;
		}
		s->ncorenames++;
	}
}

static void scan_frame(struct scan *s, const uint8_t *body, uint32_t len)
{
	struct rd r = {body, len, 0, 0};
	int32_t type = rd32(&r), core = -1, c, key;
	size_t n;
	int first = 1;

	if (len > s->max_frame)
		s->max_frame = len;
	if (type == 2 || type == 3 || type == 5 || type == 7 || type == 11 || type == 12) {
		core = rd32(&r);
		if (core < 0 || core >= 2)
			s->bad_core++;
	}
	if (s->nframes == 0)
		s->summary_first = type == 1;
	s->nframes++;
	switch (type) {
	case 1:
		scan_summary(s, &r);
		break;
	case 2:
		while (r.i < r.n && !r.bad) {
			int64_t ts = rd64(&r);
			int32_t cookie = rd32(&r), pid = rd32(&r), tid = rd32(&r), pc = 0;
			order(s, core, ts);
			s->sample_ok = cookie == 5 && pid == 42 && tid == 43;
			while (!r.bad && (c = rd32(&r)) != 1) {
				int64_t off = rd64(&r);
				if (pc < 3 && (c != (pcs[pc].cookie == 1 ? -1 : pcs[pc].cookie) || off != pcs[pc].offset))
					s->sample_ok = 0;
				pc++;
			}
			if (pc != 3)
				s->sample_ok = 0;
			s->n_samples++;
		}
		break;
	case 3:
		while (r.i < r.n && !r.bad) {
			c = rd32(&r);
			if (c == 1) {
				rd32(&r);
				rdstr(&r, &n);
				s->n_cookie_names++;
			} else if (c == 2) {
				order(s, core, rd64(&r));
				rd32(&r);
				rdstr(&r, &n);
				s->n_thread_names++;
			} else {
				s->parse_errors++;
				return;
			}
		}
		break;
	case 5:
		s->bc_frames++;
		while (r.i < r.n && !r.bad) {
			key = rd32(&r);
			int64_t v = rd64(&r);
			if (first && key != 0)
				s->bc_not_key0++;
			first = 0;
			if (key == 0) {
				order(s, core, v);
				if (s->first_counter_ts < 0)
					s->first_counter_ts = v;
			} else if (key == 2) {
				if (v != core)
					s->bc_core_mismatch++;
			} else if (key > 2) {
				note_key(s, key);
				s->n_values++;
			}
		}
		break;
	case 7:
		while (r.i < r.n && !r.bad) {
			c = rd32(&r);
			order(s, core, rd64(&r));
			rd32(&r);
			if (c == 1) {
				rd32(&r);
				s->n_switches++;
			} else if (c == 2) {
				s->n_exits++;
			} else {
				s->parse_errors++;
				return;
			}
		}
		break;
	case 9:
		while (r.i < r.n && !r.bad) {
			rd32(&r);
			int64_t ts = rd64(&r);
			order(s, rd32(&r), ts);
			s->n_idles++;
		}
		break;
	case 10: {
		int32_t fd = rd32(&r);
		if (fd == -1) {
			rd32(&r);
			s->n_ext_close++;
		} else if (fd >= 0 && fd < MAXFD) {
			s->n_ext_frames++;
			uint8_t *np = realloc(s->ext[fd], s->ext_len[fd] + (r.n - r.i) + 1);
			if (np) {
				memcpy(np + s->ext_len[fd], r.p + r.i, r.n - r.i);
				s->ext[fd] = np;
				s->ext_len[fd] += r.n - r.i;
			}
		} else {
			s->parse_errors++;
		}
		r.i = r.n;
		break;
	}
	case 11:
		while (r.i < r.n && !r.bad) {
			int32_t pid, tid;
			if (rd32(&r) != 5) {
				s->parse_errors++;
				return;
			}
			pid = rd32(&r);
			tid = rd32(&r);
			const char *img = rdcstr(&r), *comm = rdcstr(&r);
			s->proc_ok = pid == 42 && tid == 43 && !strcmp(img, "/bin/app") && !strcmp(comm, "app");
			s->n_procs++;
		}
		break;
	case 12:
		/* Kept opaque: the core from the event, then the bytes. */
		s->n_raw += core == 1 && r.n - r.i == sizeof rawbytes && !memcmp(r.p + r.i, rawbytes, sizeof rawbytes);
		r.i = r.n;
		break;
	case 13:
		while (r.i < r.n && !r.bad) {
			c = rd32(&r);
			int64_t ts = rd64(&r);
			if (c == 1) {
				order(s, -1, ts);
				rd32(&r), rd32(&r), rd32(&r);
				s->n_links++;
			} else if (c == 2) {
				core = rd32(&r);
				order(s, core, ts);
				note_key(s, rd32(&r));
				rd32(&r), rd32(&r), rd32(&r);
				s->n_acts++;
			} else if (c == 3) {
				order(s, -1, ts);
				rd32(&r);
				s->n_task_exits++;
			} else {
				s->parse_errors++;
				return;
			}
		}
		break;
	default:
		s->parse_errors++;
	}
	if (r.bad)
		s->parse_errors++;
}

static void scan_data(struct scan *s, const uint8_t *p, size_t n)
{
	size_t i = 0;

	memset(s, 0, sizeof *s);
	s->first_counter_ts = -1;
	while (i < n) {
		uint32_t len;
		if (n - i < 4) {
			s->parse_errors++;
			return;
		}
		len = (uint32_t)p[i] | (uint32_t)p[i + 1] << 8 | (uint32_t)p[i + 2] << 16 | (uint32_t)p[i + 3] << 24;
		i += 4;
		if (len > n - i) {
			s->parse_errors++;
			return;
		}
		scan_frame(s, p + i, len);
		i += len;
	}
}

static void scan_free(struct scan *s)
{
	for (int i = 0; i < MAXFD; i++)
		free(s->ext[i]);
}

static int scan_path(struct scan *s, const char *apc)
{
	char path[512];
	size_t n;
	uint8_t *p;

	snprintf(path, sizeof path, "%s/0000000000", apc);
	if (!(p = t_read_file(path, &n)))
		return -1;
	scan_data(s, p, n);
	free(p);
	return 0;
}

/* Keys declared in captured.xml; -1 if it does not parse. */
static int captured_keys(const char *apc, int32_t *keys, int max, char *created, size_t clen)
{
	char path[512];
	xmlDocPtr doc;
	xmlNodePtr root;
	int n = 0;

	snprintf(path, sizeof path, "%s/captured.xml", apc);
	if (!(doc = xmlReadFile(path, NULL, XML_PARSE_NONET)))
		return -1;
	root = xmlDocGetRootElement(doc);
	xmlChar *cr = xmlGetProp(root, (const xmlChar *)"created");
	snprintf(created, clen, "%s", cr ? (const char *)cr : "");
	xmlFree(cr);
	for (xmlNodePtr c = root->children; c; c = c->next) {
		if (c->type != XML_ELEMENT_NODE || xmlStrcmp(c->name, (const xmlChar *)"counters"))
			continue;
		for (xmlNodePtr k = c->children; k; k = k->next) {
			if (k->type != XML_ELEMENT_NODE)
				continue;
			xmlChar *v = xmlGetProp(k, (const xmlChar *)"key");
			if (v && n < max)
				keys[n++] = (int32_t)strtol((const char *)v, NULL, 16);
			xmlFree(v);
		}
	}
	xmlFreeDoc(doc);
	return n;
}

/* ---- tests ------------------------------------------------------------- */

static void every_event_type(void)
{
	const char *dir = fresh_dir();
	char out[512], created[32];
	struct apc_write_opts o = {.created = -1};
	struct apc_write_stats st;
	struct scan s;
	int32_t keys[MAXKEYS];
	int nk;

	if (!dir)
		return;
	snprintf(out, sizeof out, "%s/cap", dir); /* ".apc" is added */
	T_EQ_INT(write_capture(out, &o, &st), APC_OK);
	snprintf(out, sizeof out, "%s/cap.apc", dir);
	T_EQ_INT(scan_path(&s, out), 0);
	T_EQ_INT(s.parse_errors, 0);
	T_ASSERT(s.summary_first);
	T_ASSERT(s.canary_ok);
	T_EQ_INT(s.ncorenames, 2);
	T_EQ_STR(s.corename[0], "Cortex-A53");
	T_EQ_STR(s.corename[1], "Cortex-A57");
	T_EQ_U64(s.cpuid[1], 0x41d07);
	T_EQ_INT(s.bad_core, 0);
	T_EQ_INT(s.order_errors, 0);
	T_ASSERT(s.bc_frames >= 1);
	T_EQ_INT(s.bc_not_key0, 0);
	T_EQ_INT(s.bc_core_mismatch, 0);
	T_EQ_INT(s.first_counter_ts, 200); /* zero-based by the delta */
	T_EQ_INT(s.n_values, 7);
	T_EQ_INT(s.n_thread_names, 1);
	T_EQ_INT(s.n_cookie_names, 1);
	T_EQ_INT(s.n_links, 1);
	T_EQ_INT(s.n_acts, 1);
	T_EQ_INT(s.n_task_exits, 1);
	T_EQ_INT(s.n_switches, 2);
	T_EQ_INT(s.n_exits, 1);
	T_EQ_INT(s.n_idles, 1);
	T_EQ_INT(s.n_samples, 1);
	T_ASSERT(s.sample_ok);
	T_EQ_INT(s.n_procs, 1);
	T_ASSERT(s.proc_ok);
	T_EQ_INT(s.n_raw, 1);
	T_EQ_INT(s.n_ext_close, 2);
	T_EQ_U64(st.reordered, EXPECTED_REORDERED);
	T_EQ_U64(st.frames, (uint64_t)s.nframes);

	/* Every key used is declared, unique and > 2. */
	nk = captured_keys(out, keys, MAXKEYS, created, sizeof created);
	T_EQ_INT(nk, 5);
	T_EQ_STR(created, "1700000000");
	for (int i = 0; i < nk; i++) {
		T_ASSERT(keys[i] > 2);
		for (int j = 0; j < i; j++)
			T_ASSERT(keys[i] != keys[j]);
	}
	T_EQ_INT(nk > 1 ? keys[1] : 0, 5); /* mem_used kept its own key */
	for (int i = 0; i < s.nkeys; i++) {
		int found = 0;
		for (int j = 0; j < nk; j++)
			found |= keys[j] == s.keys[i];
		if (!found)
			T_FAIL("key 0x%x used but not declared", (unsigned)s.keys[i]);
	}

	/* Annotations: fd 1 (tid 10) and fd 2 (tid 11), each a v4 stream. */
	for (int fd = 1; fd <= 2; fd++) {
		struct apc_ann_decoder *d = apc_ann_decoder_new("test");
		struct apc_ann_msg msg;
		struct apc_err err;
		int nmsg = 0, setup = 0, big = 0;
		T_ASSERT(s.ext_len[fd] > 20);
		if (!d || !s.ext[fd])
			continue;
		T_EQ_MEM(s.ext[fd], "ANNOTATE 4\n", 11);
		T_EQ_INT(apc_ann_decoder_feed(d, s.ext[fd], s.ext_len[fd], &err), APC_OK);
		while (apc_ann_decoder_next(d, &msg, &err) == APC_OK) {
			if (msg.is_setup) {
				setup++;
				T_EQ_INT(msg.version, 4);
				continue;
			}
			nmsg++;
			T_ASSERT(msg.has_ts && msg.ts >= DELTA + 270); /* absolute */
			if (msg.ann.text_len == sizeof bigtext - 1)
				big = !memcmp(msg.ann.text, bigtext, sizeof bigtext - 1);
		}
		T_EQ_INT(setup, 1);
		T_EQ_INT(nmsg, fd == 1 ? 2 : 1);
		if (fd == 1)
			T_ASSERT(big);
		apc_ann_decoder_free(d);
	}
	scan_free(&s);
}

static void same_input_same_bytes(void)
{
	static const char *const leaves[] = {"0000000000", "captured.xml", "events.xml", "session.xml"};
	const char *dir = fresh_dir();
	char a[512], b[512];
	struct apc_write_opts o = {.created = -1};

	if (!dir)
		return;
	snprintf(a, sizeof a, "%s/one.apc", dir);
	snprintf(b, sizeof b, "%s/two.apc", dir);
	T_EQ_INT(write_capture(a, &o, NULL), APC_OK);
	T_EQ_INT(write_capture(b, &o, NULL), APC_OK);
	for (size_t i = 0; i < 4; i++) {
		if (!same_leaf(a, b, leaves[i]))
			T_FAIL("%s differs between two runs", leaves[i]);
	}
}

/* Members of an archive, and whether its 0000000000 equals want. */
static int archive_members(const char *path, const char *prefix, const uint8_t *want, size_t wn, int *same)
{
	struct archive *a = archive_read_new();
	struct archive_entry *e;
	int n = 0;

	*same = 0;
	archive_read_support_format_all(a);
	archive_read_support_filter_all(a);
	if (archive_read_open_filename(a, path, 1 << 16) != ARCHIVE_OK) {
		archive_read_free(a);
		return -1;
	}
	while (archive_read_next_header(a, &e) == ARCHIVE_OK) {
		const char *name = archive_entry_pathname(e);
		char want_name[256];
		static const char *const leaves[] = {"0000000000", "captured.xml", "events.xml", "session.xml"};
		for (int i = 0; i < 4; i++) {
			snprintf(want_name, sizeof want_name, "%s/%s", prefix, leaves[i]);
			if (strcmp(name, want_name))
				continue;
			n++;
			if (i == 0) {
				uint8_t *buf = malloc(wn + 1);
				la_ssize_t k = buf ? archive_read_data(a, buf, wn + 1) : -1;
				*same = k == (la_ssize_t)wn && !memcmp(buf, want, wn);
				free(buf);
			}
		}
	}
	archive_read_free(a);
	return n;
}

static void archives(void)
{
	static const char *const names[] = {"cap.apc.zip", "cap.tar", "cap.tar.gz", "cap.apc.tgz"};
	const char *dir = fresh_dir();
	struct apc_write_opts o = {.created = -1};
	char folder[512], p[600];
	uint8_t *data;
	size_t dn;

	if (!dir)
		return;
	snprintf(folder, sizeof folder, "%s/cap.apc", dir);
	T_EQ_INT(write_capture(folder, &o, NULL), APC_OK);
	snprintf(p, sizeof p, "%s/0000000000", folder);
	data = t_read_file(p, &dn);
	T_ASSERT(data);
	for (size_t i = 0; i < 4 && data; i++) {
		int same = 0;
		char again[600];
		size_t n1, n2;
		snprintf(p, sizeof p, "%s/%s", dir, names[i]);
		T_EQ_INT(write_capture(p, &o, NULL), APC_OK);
		T_EQ_INT(archive_members(p, "cap.apc", data, dn, &same), 4);
		T_ASSERT(same);
		/* Deterministic archives too. */
		snprintf(again, sizeof again, "%s/again", dir);
		mkdir(again, 0755);
		snprintf(again, sizeof again, "%s/again/%s", dir, names[i]);
		T_EQ_INT(write_capture(again, &o, NULL), APC_OK);
		uint8_t *x = t_read_file(p, &n1), *y = t_read_file(again, &n2);
		T_ASSERT(x && y && n1 == n2 && !memcmp(x, y, n1));
		free(x);
		free(y);
	}
	free(data);
	/* Only the outputs are left: no temporary files. */
	T_EQ_INT(count_entries(dir), 6);
}

static void exists_without_overwrite(void)
{
	const char *dir = fresh_dir();
	struct apc_write_opts o = {.created = -1};
	struct apc_writer *w = NULL;
	struct apc_err err;
	char out[512], marker[600];
	struct stat st;
	struct scan s;
	FILE *f;

	if (!dir)
		return;
	snprintf(out, sizeof out, "%s/cap.apc", dir);
	snprintf(marker, sizeof marker, "%s/marker", out);
	T_ASSERT(mkdir(out, 0755) == 0);
	f = fopen(marker, "w");
	T_ASSERT(f);
	if (f)
		fclose(f);
	apc_err_clear(&err);
	T_EQ_INT(apc_writer_open(out, &o, &w, &err), APC_EIO);
	T_ASSERT(w == NULL);
	T_ASSERT(strstr(err.msg, "exists") != NULL);
	T_ASSERT(stat(marker, &st) == 0);
	T_EQ_INT(count_entries(dir), 1);
	T_EQ_INT(count_entries(out), 1);

	/* Overwrite replaces only a capture: a folder of other files stays. */
	o.overwrite = 1;
	apc_err_clear(&err);
	T_EQ_INT(apc_writer_open(out, &o, &w, &err), APC_EIO);
	T_ASSERT(w == NULL);
	T_ASSERT(strstr(err.msg, "is not an .apc capture") != NULL);
	T_ASSERT(stat(marker, &st) == 0);
	/* With a data file in it, it is one: replaced, nothing else stays. */
	snprintf(marker, sizeof marker, "%s/0000000000", out);
	f = fopen(marker, "w");
	T_ASSERT(f);
	if (f)
		fclose(f);
	snprintf(marker, sizeof marker, "%s/marker", out);
	T_EQ_INT(write_capture(out, &o, NULL), APC_OK);
	T_ASSERT(stat(marker, &st) != 0);
	T_EQ_INT(count_entries(out), 4);
	T_EQ_INT(count_entries(dir), 1);
	T_EQ_INT(scan_path(&s, out), 0);
	T_ASSERT(s.canary_ok);
	scan_free(&s);
}

static void abort_leaves_nothing(void)
{
	struct apc_write_opts o = {.created = -1};
	struct apc_writer *w = NULL;
	struct apc_model m;
	struct apc_batch b;
	struct apc_err err;
	char out[512];
	const char *dir;

	dir = begin_test(out, "cap.tar.gz", &m, &b, 64);
	if (!dir)
		return;
	fill_batch(&b);
	T_EQ_INT(apc_writer_open(out, &o, &w, &err), APC_OK);
	if (w) {
		T_EQ_STR(apc_writer_path(w), out);
		T_EQ_INT(apc_writer_begin(w, &m, &err), APC_OK);
		T_EQ_INT(apc_writer_write(w, &b, &err), APC_OK);
		T_EQ_INT(count_entries(dir), 1); /* the temporary folder */
		apc_writer_abort(w);
	}
	T_EQ_INT(count_entries(dir), 0);
	apc_batch_free(&b);
	apc_model_free(&m);
}

/*
 * Many counters with a tiny frame size: frames stay bounded, each Block
 * Counter frame starts a block with key 0, and interleaving cores and
 * frame types keeps per-core order; out-of-order input is counted.
 */
static void bounded_frames_and_reordering(void)
{
	struct apc_write_opts o = {.created = -1, .frame_max = 256};
	struct apc_write_stats st = {0};
	struct apc_model m;
	struct apc_batch b;
	struct apc_err err;
	struct scan s;
	char out[512];
	uint64_t late = 0;
	struct apc_event *e0;
	struct apc_ann_decoder *d;
	struct apc_ann_msg msg;
	int big = 0;

	if (!begin_test(out, "big.apc", &m, &b, 4096))
		return;
	fill_batch(&b); /* for anns[2], the 5000-byte annotation */
	apc_batch_reset(&b);
	e0 = apc_batch_add(&b, APC_EV_ANNOTATION, DELTA + 5, APC_NO_CORE);
	e0->u.ann = &anns[2];
	srand(7);
	for (int i = 0; i < 3000; i++) {
		int core = i % 2;
		uint64_t ts = DELTA + 1000 + (uint64_t)i * 10;
		struct apc_event *e;
		if (i % 97 == 0 && i) {
			ts -= 500; /* behind what core has already written */
			late++;
		}
		if (i % 13 == 0) {
			e = apc_batch_add(&b, APC_EV_SCHED_SWITCH, ts, core);
			e->u.sched.tid = i, e->u.sched.state = 0;
		} else if (i % 17 == 0) {
			e = apc_batch_add(&b, APC_EV_ACTIVITY, ts, core);
			e->u.activity.counter = 4, e->u.activity.activity = 1, e->u.activity.tid = i;
		} else {
			e = apc_batch_add(&b, APC_EV_COUNTER, ts, core);
			e->u.counter.counter = (uint32_t)(rand() % 4), e->u.counter.pid = APC_NO_PID;
			e->u.counter.value = rand();
		}
	}
	T_EQ_INT(write_model(out, &o, &m, &b, &st), APC_OK);
	T_EQ_U64(st.reordered, late);
	T_EQ_INT(scan_path(&s, out), 0);
	T_EQ_INT(s.parse_errors, 0);
	T_EQ_INT(s.order_errors, 0);
	T_EQ_INT(s.bc_not_key0, 0);
	T_ASSERT(s.bc_frames > 10);
	T_ASSERT(s.max_frame < 256 + 64);
	/* The big annotation spans many External frames and reassembles. */
	T_ASSERT(s.ext_len[1] > sizeof bigtext);
	if ((d = apc_ann_decoder_new("test")) && s.ext[1]) {
		T_EQ_INT(apc_ann_decoder_feed(d, s.ext[1], s.ext_len[1], &err), APC_OK);
		while (apc_ann_decoder_next(d, &msg, &err) == APC_OK)
			if (!msg.is_setup && msg.ann.text_len == sizeof bigtext - 1)
				big = !memcmp(msg.ann.text, bigtext, sizeof bigtext - 1);
	}
	apc_ann_decoder_free(d);
	T_ASSERT(big);
	scan_free(&s);
	apc_batch_free(&b);
	apc_model_free(&m);
}

/*
 * Annotation clients taking turns: each fd fills External frames of its
 * own instead of one frame per turn, and every stream still decodes to
 * its messages in order - also past the writer's 8 open External frames
 * (12 clients), where fds share frames and flush each other.
 */
static void annotation_streams_per_fd(void)
{
	enum { ROUNDS = 50 };
	const char *dir = fresh_dir();
	static struct apc_ann turns[12 * ROUNDS];
	static char texts[12 * ROUNDS][32];

	if (!dir)
		return;
	for (int nclients = 8; nclients <= 12; nclients += 4) {
		struct apc_write_opts o = {.created = -1};
		struct apc_writer *w = NULL;
		struct apc_model m;
		struct apc_batch b;
		struct apc_err err;
		struct scan s;
		char out[512];

		snprintf(out, sizeof out, "%s/ann%d.apc", dir, nclients);
		build_model(&m);
		apc_batch_init(&b, 4096);
		for (int i = 0; i < nclients * ROUNDS; i++) {
			struct apc_event *e = apc_batch_add(&b, APC_EV_ANNOTATION, DELTA + 100 + (uint64_t)i, 0);
			struct apc_ann *a = &turns[i];
			memset(a, 0, sizeof *a);
			a->code = APC_ANN_STR;
			a->tid = a->pid = 100 + i % nclients;
			snprintf(texts[i], sizeof texts[i], "client %d message %d", i % nclients, i / nclients);
			a->text = texts[i];
			a->text_len = strlen(texts[i]);
			e->u.ann = a;
		}
		T_EQ_INT(apc_writer_open(out, &o, &w, &err), APC_OK);
		if (!w) {
			apc_batch_free(&b);
			apc_model_free(&m);
			return;
		}
		T_EQ_INT(apc_writer_begin(w, &m, &err), APC_OK);
		T_EQ_INT(apc_writer_write(w, &b, &err), APC_OK);
		T_EQ_INT(apc_writer_finish(w, &err), APC_OK);
		apc_writer_free(w);
		T_EQ_INT(scan_path(&s, out), 0);
		T_EQ_INT(s.parse_errors, 0);
		T_EQ_INT(s.n_ext_close, nclients);
		if (nclients == 8)
			T_EQ_INT(s.n_ext_frames, 8); /* one per fd, not one per turn */
		else
			T_ASSERT(s.n_ext_frames > 12 && s.n_ext_frames <= 8 * ROUNDS + 4);
		for (int fd = 1; fd <= nclients; fd++) {
			struct apc_ann_decoder *d = apc_ann_decoder_new("test");
			struct apc_ann_msg msg;
			int next = 0, setup = 0;
			char want[32];
			if (!d || !s.ext[fd]) {
				T_FAIL("fd %d: no stream", fd);
				apc_ann_decoder_free(d);
				continue;
			}
			T_EQ_INT(apc_ann_decoder_feed(d, s.ext[fd], s.ext_len[fd], &err), APC_OK);
			while (apc_ann_decoder_next(d, &msg, &err) == APC_OK) {
				if (msg.is_setup) {
					setup++;
					T_EQ_INT(msg.ann.tid, 100 + fd - 1);
					continue;
				}
				snprintf(want, sizeof want, "client %d message %d", fd - 1, next++);
				T_ASSERT(msg.ann.text_len == strlen(want) &&
					 !memcmp(msg.ann.text, want, msg.ann.text_len));
			}
			T_EQ_INT(setup, 1);
			T_EQ_INT(next, ROUNDS);
			apc_ann_decoder_free(d);
		}
		scan_free(&s);
		apc_batch_free(&b);
		apc_model_free(&m);
	}
}

static void events_file_merge_and_epoch(void)
{
	const char *dir = fresh_dir();
	struct apc_write_opts o = {.created = -1};
	char out[512], ev[512], path[600];
	const char *xml =
		"<?xml version=\"1.0\"?>\n<events>\n"
		"  <category name=\"Cortex-A53\">\n"
		"    <event counter=\"ARMv8_Cortex_A53_cnt0\" event=\"0x11\" title=\"Theirs\" name=\"Cycles\"/>\n"
		"  </category>\n"
		"  <category name=\"Extra\"><event counter=\"extra_x\" title=\"X\" name=\"Y\"/></category>\n"
		"</events>\n";
	FILE *f;
	size_t n;
	uint8_t *p;

	if (!dir)
		return;
	snprintf(ev, sizeof ev, "%s/events-in.xml", dir);
	f = fopen(ev, "w");
	T_ASSERT(f);
	if (!f)
		return;
	fputs(xml, f);
	fclose(f);
	o.events_file = ev;
	snprintf(out, sizeof out, "%s/cap.apc", dir);
	T_EQ_INT(write_capture(out, &o, NULL), APC_OK);
	snprintf(path, sizeof path, "%s/events.xml", out);
	p = t_read_file(path, &n);
	T_ASSERT(p);
	if (p) {
		p[n] = 0;
		T_ASSERT(strstr((char *)p, "title=\"Theirs\"") != NULL);
		T_ASSERT(strstr((char *)p, "title=\"Cycles\"") == NULL); /* ours was replaced */
		T_ASSERT(strstr((char *)p, "counter=\"extra_x\"") != NULL);
		T_ASSERT(strstr((char *)p, "counter=\"mem_used\"") != NULL);
		T_ASSERT(strstr((char *)p, "activity1=\"Run\"") != NULL);
		free(p);
	}

	/* A missing events file is an I/O error and leaves nothing. */
	o.events_file = "/nonexistent/events.xml";
	snprintf(out, sizeof out, "%s/bad.apc", dir);
	expect_failure = 1;
	T_EQ_INT(write_capture(out, &o, NULL), APC_EIO);
	expect_failure = 0;
	T_EQ_INT(count_entries(dir), 2);
}

static void created_from_source_date_epoch(void)
{
	const char *dir = fresh_dir();
	struct apc_write_opts o = {.created = -1};
	struct apc_model m;
	struct apc_writer *w = NULL;
	struct apc_err err;
	char out[512], created[32];
	int32_t keys[8];

	if (!dir)
		return;
	snprintf(out, sizeof out, "%s/e.apc", dir);
	apc_model_init(&m);
	apc_model_set_cores(&m, 1);
	setenv("SOURCE_DATE_EPOCH", "1234567", 1);
	T_EQ_INT(apc_writer_open(out, &o, &w, &err), APC_OK);
	if (w) {
		T_EQ_INT(apc_writer_begin(w, &m, &err), APC_OK);
		T_EQ_INT(apc_writer_finish(w, &err), APC_OK);
		apc_writer_free(w);
	}
	unsetenv("SOURCE_DATE_EPOCH");
	T_EQ_INT(captured_keys(out, keys, 8, created, sizeof created), 0);
	T_EQ_STR(created, "1234567");
	apc_model_free(&m);

	/* opts.created wins over everything. */
	o.created = 42;
	snprintf(out, sizeof out, "%s/f.apc", dir);
	T_EQ_INT(write_capture(out, &o, NULL), APC_OK);
	T_ASSERT(captured_keys(out, keys, 8, created, sizeof created) >= 0);
	T_EQ_STR(created, "42");
}

/*
 * Rows of counter values (APC_EV_COUNTERS) and the same values as one
 * APC_EV_COUNTER event each give the same bytes: with fast paths on and
 * off, with frames small enough that rows cross a frame's size bound,
 * with a repeated time, a pid change, a core not seen yet, a time that
 * goes back (reordered) and an undeclared counter id in a row.
 */
static int write_rows(const char *out, uint32_t frame_max, int as_rows, struct apc_write_stats *st)
{
	static const uint32_t ids[] = {0, 1, 2, 3};
	static const uint32_t bad[] = {0, 77, 1};
	struct apc_write_opts o = {.created = -1, .frame_max = frame_max};
	struct apc_model m;
	struct apc_batch b;
	int64_t *vals;
	int rc;

	build_model(&m);
	apc_batch_init(&b, 4096);
	for (int i = 0; i < 300; i++) {
		uint64_t ts = 1000 + (uint64_t)(i / 3) * 17 - (i == 200 ? 500 : 0);
		int32_t core = i % 7 == 0 ? 1 : 0, pid = i / 50;
		const uint32_t *id = i == 120 ? bad : ids;
		uint32_t n = i == 120 ? 3 : (uint32_t)(1 + i % 4);
		vals = apc_batch_alloc(&b, n * sizeof *vals);
		for (uint32_t k = 0; k < n; k++)
			vals[k] = (int64_t)((uint64_t)(i * 1000003 + k * 7919) << (i % 33)) * (k % 2 ? -1 : 1);
		if (as_rows) {
			struct apc_event *e = add(&b, APC_EV_COUNTERS, ts, core);
			e->u.counters.pid = pid;
			e->u.counters.n = n;
			e->u.counters.ids = id;
			e->u.counters.values = vals;
		} else {
			for (uint32_t k = 0; k < n; k++) {
				struct apc_event *e = add(&b, APC_EV_COUNTER, ts, core);
				e->u.counter.counter = id[k];
				e->u.counter.pid = pid;
				e->u.counter.value = vals[k];
			}
		}
		if (i == 150) { /* another frame type in between */
			struct apc_event *e = add(&b, APC_EV_IDLE, ts, 0);
			e->u.idle.state = 0;
		}
	}
	rc = write_model(out, &o, &m, &b, st);
	apc_batch_free(&b);
	apc_model_free(&m);
	return rc;
}

static void counter_rows_same_bytes(void)
{
	static const char *const leaves[] = {"0000000000", "captured.xml"};
	static const uint32_t sizes[] = {0, 40, 64, 97, 300};
	const char *dir = fresh_dir();
	const char *old = getenv("APC_NO_SIMD");
	char keep[64] = "";

	if (!dir)
		return;
	if (old)
		snprintf(keep, sizeof keep, "%s", old);
	for (int scalar = 0; scalar < 2; scalar++) {
		if (scalar)
			setenv("APC_NO_SIMD", "1", 1);
		else
			unsetenv("APC_NO_SIMD");
		apc_cpu_reset();
		for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
			char a[512], b[512];
			struct apc_write_stats sa, sb;
			snprintf(a, sizeof a, "%s/rows%d_%zu.apc", dir, scalar, z);
			snprintf(b, sizeof b, "%s/vals%d_%zu.apc", dir, scalar, z);
			T_EQ_INT(write_rows(a, sizes[z], 1, &sa), APC_OK);
			T_EQ_INT(write_rows(b, sizes[z], 0, &sb), APC_OK);
			T_EQ_INT(sa.frames, sb.frames);
			T_EQ_INT(sa.messages, sb.messages);
			T_EQ_INT(sa.reordered, sb.reordered);
			T_EQ_INT(sa.dropped, sb.dropped);
			T_ASSERT(sa.dropped == 1);  /* the undeclared id, in both */
			T_ASSERT(sa.reordered > 0); /* the time that went back */
			if (sizes[z] && sizes[z] < 100)
				T_ASSERT(sa.frames > 20); /* rows crossed frame bounds */
			for (size_t i = 0; i < 2; i++)
				if (!same_leaf(a, b, leaves[i]))
					T_FAIL("%s: rows and single values differ (frame_max %u, scalar %d)",
					       leaves[i], sizes[z], scalar);
		}
	}
	if (old)
		setenv("APC_NO_SIMD", keep, 1);
	else
		unsetenv("APC_NO_SIMD");
	apc_cpu_reset();
}

static void count_errors(void *ctx, const struct apc_vproblem *p)
{
	if (p->severity == APC_V_ERROR) {
		(*(int *)ctx)++;
		printf("# %s: %s\n", p->check, p->msg);
	}
}

/*
 * Event times past 2^63 ns would go out as negative packed timestamps
 * (a damaged APC input once produced them): each is written at the time
 * before it on its core and counted, and the capture verifies.
 */
static void times_past_int64(void)
{
	static const uint64_t ts[] = {DELTA + 100, DELTA + (1ull << 63) + 5, UINT64_MAX, DELTA + 200};
	struct apc_write_opts o = {.created = -1};
	struct apc_model m;
	struct apc_batch b;
	struct apc_err err;
	struct apc_vresult vr = {0};
	char out[512];
	uint64_t past = 0;
	int errors = 0;

	if (!begin_test(out, "past.apc", &m, &b, 64))
		return;
	for (int i = 0; i < 4; i++) {
		struct apc_event *e = apc_batch_add(&b, APC_EV_COUNTER, ts[i], i % 2);
		e->u.counter.counter = 0, e->u.counter.pid = APC_NO_PID, e->u.counter.value = i;
	}
	T_EQ_INT(write_model(out, &o, &m, &b, NULL), APC_OK);
	for (size_t i = 0; i < m.nunmapped; i++)
		if (strstr(m.unmapped[i].what, "past 2^63"))
			past = m.unmapped[i].count;
	T_EQ_U64(past, 2);
	T_EQ_INT(apc_verify_path(out, count_errors, &errors, &vr, &err), APC_OK);
	T_EQ_INT(errors, 0);
	T_EQ_U64(vr.data_msgs, 4);
	apc_batch_free(&b);
	apc_model_free(&m);
}

/*
 * An annotation the encoder rejects (an unknown message code) is counted
 * and leaves no trace in the data file: not even an empty External
 * frame when its connection's frame had just been flushed (fd 9 shares
 * fd 1's open frame and flushes it).
 */
static void rejected_annotation_leaves_no_frame(void)
{
	struct apc_write_opts o = {.created = -1};
	static struct apc_ann rej[10];
	struct apc_model m;
	struct apc_batch b;
	struct scan s;
	char out[512];
	uint64_t rejected = 0;

	if (!begin_test(out, "rejected.apc", &m, &b, 64))
		return;
	for (int i = 0; i < 10; i++) {
		struct apc_event *e = apc_batch_add(&b, APC_EV_ANNOTATION, DELTA + 100 + (uint64_t)i, 0);
		struct apc_ann *a = &rej[i];
		memset(a, 0, sizeof *a);
		a->code = i < 9 ? APC_ANN_STR : 0x30;
		a->tid = a->pid = 100 + (i < 9 ? i : 0);
		a->text = "x";
		a->text_len = 1;
		e->u.ann = a;
	}
	T_EQ_INT(write_model(out, &o, &m, &b, NULL), APC_OK);
	for (size_t i = 0; i < m.nunmapped; i++)
		if (strstr(m.unmapped[i].what, "encoder rejected"))
			rejected = m.unmapped[i].count;
	T_EQ_U64(rejected, 1);
	T_EQ_INT(scan_path(&s, out), 0);
	T_EQ_INT(s.parse_errors, 0);
	T_EQ_INT(s.n_ext_frames, 9); /* one per fd */
	scan_free(&s);
	apc_batch_free(&b);
	apc_model_free(&m);
}

void run_tests(void)
{
	T_RUN(every_event_type);
	T_RUN(same_input_same_bytes);
	T_RUN(archives);
	T_RUN(exists_without_overwrite);
	T_RUN(abort_leaves_nothing);
	T_RUN(bounded_frames_and_reordering);
	T_RUN(times_past_int64);
	T_RUN(annotation_streams_per_fd);
	T_RUN(rejected_annotation_leaves_no_frame);
	T_RUN(events_file_merge_and_epoch);
	T_RUN(created_from_source_date_epoch);
	T_RUN(counter_rows_same_bytes);
	if (tmproot[0])
		rm_tree(tmproot);
}
