/*
 * test_annotate.c - the Annotate codec against real client streams (v3,
 * v4, v5: decode, match the call list in truth.jsonl, re-encode to the
 * identical bytes), incremental feeding, truncation at every offset,
 * damage (bad magic, unknown code, oversized length, bad bodies) and the
 * "annotate" input format.
 */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "annotate.h"
#include "format.h"
#include "input.h"
#include "t.h"

/* ---- a small JSON reader for truth.jsonl -------------------------------- */

enum jt { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct jv {
	enum jt t;
	long long num;
	char *str;             /* J_STR: UTF-8, NUL-terminated */
	size_t len;            /* J_STR length; J_ARR/J_OBJ item count */
	char **keys;           /* J_OBJ */
	struct jv **items;     /* J_ARR/J_OBJ */
};

static void jv_free(struct jv *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->len && v->items; i++) {
		jv_free(v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->str);
	free(v);
}

static void j_ws(const char **p)
{
	while (**p == ' ' || **p == '\t' || **p == '\n' || **p == '\r')
		(*p)++;
}

static void j_utf8(char *out, size_t *n, unsigned cp)
{
	if (cp < 0x80) {
		out[(*n)++] = (char)cp;
	} else if (cp < 0x800) {
		out[(*n)++] = (char)(0xc0 | cp >> 6);
		out[(*n)++] = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		out[(*n)++] = (char)(0xe0 | cp >> 12);
		out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[(*n)++] = (char)(0x80 | (cp & 0x3f));
	} else {
		out[(*n)++] = (char)(0xf0 | cp >> 18);
		out[(*n)++] = (char)(0x80 | ((cp >> 12) & 0x3f));
		out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[(*n)++] = (char)(0x80 | (cp & 0x3f));
	}
}

static char *j_string(const char **p, size_t *len)
{
	size_t cap = strlen(*p) + 1, n = 0;
	char *s = malloc(cap);

	(*p)++; /* opening quote */
	while (**p && **p != '"') {
		if (**p != '\\') {
			s[n++] = *(*p)++;
			continue;
		}
		(*p)++;
		switch (*(*p)++) {
		case 'n': s[n++] = '\n'; break;
		case 't': s[n++] = '\t'; break;
		case 'r': s[n++] = '\r'; break;
		case 'b': s[n++] = '\b'; break;
		case 'f': s[n++] = '\f'; break;
		case 'u': {
			unsigned cp = (unsigned)strtoul((char[5]){(*p)[0], (*p)[1], (*p)[2], (*p)[3], 0}, NULL, 16);
			*p += 4;
			if (cp >= 0xd800 && cp < 0xdc00 && (*p)[0] == '\\' && (*p)[1] == 'u') {
				unsigned lo = (unsigned)strtoul((char[5]){(*p)[2], (*p)[3], (*p)[4], (*p)[5], 0}, NULL, 16);
				*p += 6;
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			}
			j_utf8(s, &n, cp);
			break;
		}
		default: s[n++] = (*p)[-1]; break;
		}
	}
	if (**p == '"')
		(*p)++;
	s[n] = 0;
	*len = n;
	return s;
}

static struct jv *j_value(const char **p)
{
	struct jv *v = calloc(1, sizeof *v);

	j_ws(p);
	if (**p == '{' || **p == '[') {
		int obj = **p == '{';
		char close = obj ? '}' : ']';
		size_t cap = 0;

		v->t = obj ? J_OBJ : J_ARR;
		(*p)++;
		j_ws(p);
		while (**p && **p != close) {
			if (v->len == cap) {
				cap = cap ? cap * 2 : 8;
				v->items = realloc(v->items, cap * sizeof *v->items);
				if (obj)
					v->keys = realloc(v->keys, cap * sizeof *v->keys);
			}
			if (obj) {
				size_t kl;
				j_ws(p);
				v->keys[v->len] = j_string(p, &kl);
				j_ws(p);
				if (**p == ':')
					(*p)++;
			}
			v->items[v->len++] = j_value(p);
			j_ws(p);
			if (**p == ',')
				(*p)++;
			j_ws(p);
		}
		if (**p)
			(*p)++;
	} else if (**p == '"') {
		v->t = J_STR;
		v->str = j_string(p, &v->len);
	} else if (strncmp(*p, "null", 4) == 0) {
		*p += 4;
	} else if (strncmp(*p, "true", 4) == 0) {
		v->t = J_BOOL;
		v->num = 1;
		*p += 4;
	} else if (strncmp(*p, "false", 5) == 0) {
		v->t = J_BOOL;
		*p += 5;
	} else {
		char *end;
		v->t = J_NUM;
		v->num = strtoll(*p, &end, 10);
		*p = end;
		while (**p && strchr("0123456789.eE+-", **p))
			(*p)++;
	}
	return v;
}

static const struct jv *jget(const struct jv *o, const char *key)
{
	if (!o || o->t != J_OBJ)
		return NULL;
	for (size_t i = 0; i < o->len; i++)
		if (strcmp(o->keys[i], key) == 0)
			return o->items[i];
	return NULL;
}

static long long jnum(const struct jv *o, const char *key)
{
	const struct jv *v = jget(o, key);
	if (v && v->t == J_STR && strncmp(v->str, "0x", 2) == 0)
		return (long long)strtoull(v->str, NULL, 16);
	return v && (v->t == J_NUM || v->t == J_BOOL) ? v->num : -999999;
}

/* A string argument; null counts as "" (the wire cannot tell them apart). */
static const char *jstr(const struct jv *o, const char *key)
{
	const struct jv *v = jget(o, key);
	return v && v->t == J_STR ? v->str : "";
}

/* ---- helpers ------------------------------------------------------------- */

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t cap = 0, n = 0, k;

	if (!f)
		return NULL;
	do {
		if (n == cap) {
			cap = cap ? cap * 2 : 65536;
			buf = realloc(buf, cap + 1);
		}
		k = fread(buf + n, 1, cap - n, f);
		n += k;
	} while (k > 0);
	fclose(f);
	buf[n] = 0;
	*len = n;
	return buf;
}

static char *stream_path(int version, int k)
{
	static char path[512];
	const char *td = t_shared_testdata();

	if (!td)
		return NULL;
	snprintf(path, sizeof path, "%s/annotate/v%d/stream%d.annotate.bin", td, version, k);
	return path;
}

/*
 * gator's colour constants (ANNOTATE_RED = 0x0000ff1b) are a u32 whose low
 * byte is ESC/theme and whose next bytes are R, G, B: on the wire they are
 * R, G, B, T, which we hold as 0xRRGGBBTT.
 */
static uint32_t truth_color(long long c)
{
	uint32_t v = (uint32_t)c;
	return ((v >> 8) & 0xff) << 24 | ((v >> 16) & 0xff) << 16 | ((v >> 24) & 0xff) << 8 | (v & 0xff);
}

/* Decoded messages with private copies of everything they point to. */
struct decoded {
	size_t n, cap;
	struct rec {
		struct apc_ann_msg m;
		char *text;
		uint8_t *data;
		int32_t *deps;
		char *title, *name, *units, *desc, *type;
		char *acts[8];
		uint32_t act_colors[8];
		size_t nacts;
	} *r;
	int errors;
	size_t pending;
};

static char *dupn(const char *s, size_t n)
{
	char *r = malloc(n + 1);
	if (n)
		memcpy(r, s, n);
	r[n] = 0;
	return r;
}

static char *dups(const char *s)
{
	return dupn(s ? s : "", s ? strlen(s) : 0);
}

static void keep(struct decoded *dd, const struct apc_ann_msg *m)
{
	struct rec *x;

	if (dd->n == dd->cap) {
		dd->cap = dd->cap ? dd->cap * 2 : 64;
		dd->r = realloc(dd->r, dd->cap * sizeof *dd->r);
	}
	x = &dd->r[dd->n++];
	memset(x, 0, sizeof *x);
	x->m = *m;
	x->text = dupn(m->ann.text ? m->ann.text : "", m->ann.text ? m->ann.text_len : 0);
	x->m.ann.text = x->text;
	x->data = malloc(m->ann.data_len + 1);
	if (m->ann.data_len)
		memcpy(x->data, m->ann.data, m->ann.data_len);
	x->m.ann.data = x->data;
	x->deps = malloc((m->ann.ndeps + 1) * sizeof *x->deps);
	if (m->ann.ndeps)
		memcpy(x->deps, m->ann.deps, m->ann.ndeps * sizeof *x->deps);
	x->m.ann.deps = x->deps;
	x->m.ann.counter = NULL;
	x->m.counter.type = x->m.counter.title = x->m.counter.name = NULL;
	x->m.counter.units = x->m.counter.description = NULL;
	x->m.counter.activities = NULL;
	if (m->ann.counter) {
		const struct apc_counter_decl *k = m->ann.counter;
		x->title = dups(k->title);
		x->name = dups(k->name);
		x->units = dups(k->units);
		x->desc = dups(k->description);
		x->type = dups(k->type);
		x->nacts = k->nactivities < 8 ? k->nactivities : 8;
		for (size_t i = 0; i < x->nacts; i++) {
			x->acts[i] = dups(k->activities[i].name);
			x->act_colors[i] = k->activities[i].color;
		}
	}
}

static void decoded_free(struct decoded *dd)
{
	for (size_t i = 0; i < dd->n; i++) {
		struct rec *x = &dd->r[i];
		free(x->text);
		free(x->data);
		free(x->deps);
		free(x->title);
		free(x->name);
		free(x->units);
		free(x->desc);
		free(x->type);
		for (size_t k = 0; k < x->nacts; k++)
			free(x->acts[k]);
	}
	free(dd->r);
	memset(dd, 0, sizeof *dd);
}

/* Pull every whole message into dd, counting APC_EDATA results. */
static void drain(struct apc_ann_decoder *d, struct decoded *dd)
{
	struct apc_ann_msg m;
	struct apc_err err;
	int rc;

	apc_err_clear(&err);
	while ((rc = apc_ann_decoder_next(d, &m, &err)) != APC_END) {
		if (rc == APC_OK)
			keep(dd, &m);
		else
			dd->errors++;
	}
}

/* Decode p[0..n) fed in slices of `step` bytes (0 = all at once). */
static void decode_bytes(const uint8_t *p, size_t n, size_t step, struct decoded *dd)
{
	struct apc_ann_decoder *d = apc_ann_decoder_new("test");
	struct apc_err err;
	size_t at = 0;

	memset(dd, 0, sizeof *dd);
	apc_err_clear(&err);
	if (!step)
		step = n ? n : 1;
	while (at < n) {
		size_t k = n - at < step ? n - at : step;
		T_EQ_INT(apc_ann_decoder_feed(d, p + at, k, &err), APC_OK);
		at += k;
		drain(d, dd);
	}
	dd->pending = apc_ann_decoder_pending(d);
	apc_ann_decoder_free(d);
}

/* ---- real streams: re-encode to identical bytes ------------------------- */

static void reencode_real_streams(void)
{
	if (!t_shared_testdata())
		T_SKIP("../shared/testdata absent");
	for (int v = 3; v <= 5; v++) {
		for (int k = 1; k <= 3; k++) {
			size_t n;
			uint8_t *bytes = slurp(stream_path(v, k), &n);
			struct decoded dd;
			struct apc_buf b = {0};

			if (!bytes) {
				T_FAIL("cannot read %s", stream_path(v, k));
				continue;
			}
			decode_bytes(bytes, n, 0, &dd);
			T_EQ_INT(dd.errors, 0);
			T_EQ_INT(dd.pending, 0);
			T_ASSERT(dd.n > 3);
			for (size_t i = 0; i < dd.n; i++) {
				const struct apc_ann_msg *m = &dd.r[i].m;
				size_t at = b.len, end = i + 1 < dd.n ? dd.r[i + 1].m.offset : n;
				struct apc_ann a = m->ann;
				struct apc_counter_decl kd;
				struct apc_activity acts[8];

				T_EQ_INT(m->version, v);
				if (m->is_setup) {
					T_EQ_INT(apc_ann_encode_setup(&b, m->version, m->ann.tid, m->ann.pid,
								      (uint8_t)m->dont_mangle), APC_OK);
				} else {
					if (a.code == APC_ANN_COUNTER) {
						/* Rebuild the declaration from the kept copies. */
						memset(&kd, 0, sizeof kd);
						kd = m->counter;
						kd.title = dd.r[i].title[0] ? dd.r[i].title : NULL;
						kd.name = dd.r[i].name[0] ? dd.r[i].name : NULL;
						kd.units = dd.r[i].units[0] ? dd.r[i].units : NULL;
						kd.description = dd.r[i].desc[0] ? dd.r[i].desc : NULL;
						for (size_t j = 0; j < dd.r[i].nacts; j++) {
							acts[j].name = dd.r[i].acts[j];
							acts[j].color = dd.r[i].act_colors[j];
							acts[j].has_color = 1;
						}
						kd.activities = acts;
						a.counter = &kd;
					}
					T_EQ_INT(apc_ann_encode(&b, v, m->ts, &a), APC_OK);
				}
				if (b.len - at != end - m->offset ||
				    memcmp(b.p + at, bytes + m->offset, end - m->offset) != 0)
					T_FAIL("v%d stream%d: message %zu (code 0x%02x at offset %llu) re-encodes differently",
					       v, k, i, m->ann.code, (unsigned long long)m->offset);
			}
			T_EQ_U64(b.len, n);
			if (b.len == n)
				T_EQ_MEM(b.p, bytes, n);
			apc_buf_free(&b);
			decoded_free(&dd);
			free(bytes);
		}
	}
}

/* ---- real streams: decoded messages match the call list ----------------- */

static void check_against_call(int v, const struct rec *x, const struct jv *call, long long seq)
{
	const struct apc_ann *a = &x->m.ann;
	const struct jv *args = jget(call, "args");
	long long code = jnum(call, "code");
	const char *func = jstr(call, "func");

	if (a->code != code) {
		T_FAIL("v%d seq %lld: decoded code 0x%02x, truth has %lld (%s)", v, seq, a->code, code, func);
		return;
	}
	/* Timestamps lie within the call (or equal the time the call was given). */
	if (x->m.has_ts) {
		const struct jv *t = jget(args, "time");
		if (t) {
			if ((long long)x->m.ts != t->num)
				T_FAIL("v%d seq %lld: ts %llu, call time %lld", v, seq,
				       (unsigned long long)x->m.ts, t->num);
		} else if ((long long)x->m.ts < jnum(call, "t_before") ||
			   (long long)x->m.ts > jnum(call, "t_after")) {
			T_FAIL("v%d seq %lld: ts %llu outside [%lld, %lld]", v, seq,
			       (unsigned long long)x->m.ts, jnum(call, "t_before"), jnum(call, "t_after"));
		}
	}
	switch (a->code) {
	case APC_ANN_STR:
	case APC_ANN_COLOR_STR:
	case APC_ANN_CHANNEL:
	case APC_ANN_GROUP:
	case APC_ANN_MARKER:
	case APC_ANN_COLOR_MARKER:
	case APC_ANN_VISUAL:
		if (strcmp(x->text, jstr(args, "str")) != 0)
			T_FAIL("v%d seq %lld: text \"%.40s\", truth \"%.40s\"", v, seq, x->text, jstr(args, "str"));
		if (a->code <= APC_ANN_CHANNEL && a->channel != jnum(args, "channel"))
			T_FAIL("v%d seq %lld: channel %d, truth %lld", v, seq, a->channel, jnum(args, "channel"));
		if ((a->code == APC_ANN_CHANNEL || a->code == APC_ANN_GROUP) && a->group != jnum(args, "group"))
			T_FAIL("v%d seq %lld: group %d, truth %lld", v, seq, a->group, jnum(args, "group"));
		if ((a->code == APC_ANN_COLOR_STR || a->code == APC_ANN_COLOR_MARKER) &&
		    (!a->has_color || a->color != truth_color(jnum(args, "color"))))
			T_FAIL("v%d seq %lld: colour 0x%08x, truth %s", v, seq, a->color, jstr(args, "color"));
		if (a->code == APC_ANN_VISUAL) {
			T_EQ_INT(a->data_len, jnum(args, "data_length"));
			T_ASSERT(a->data_len >= 8 && memcmp(x->data, "\x89PNG", 4) == 0);
		}
		break;
	case APC_ANN_COUNTER: {
		const struct apc_counter_decl *k = &x->m.counter;
		const struct jv *acts = jget(args, "activities");
		static const int cls[] = {-1, APC_CLASS_DELTA, APC_CLASS_ABSOLUTE, APC_CLASS_ACTIVITY, APC_CLASS_INCIDENT};
		static const int disp[] = {APC_DISPLAY_DEFAULT, APC_DISPLAY_AVERAGE, APC_DISPLAY_ACCUMULATE,
					   APC_DISPLAY_HERTZ, APC_DISPLAY_MAXIMUM, APC_DISPLAY_MINIMUM};
		long long c = jnum(args, "counter_class"), d = jnum(args, "display");

		T_EQ_INT(k->key, jnum(args, "id"));
		T_EQ_INT(a->key, jnum(args, "id"));
		T_EQ_STR(x->title, jstr(args, "title"));
		T_EQ_STR(x->name, jstr(args, "name"));
		T_EQ_STR(x->units, jstr(args, "units"));
		T_EQ_STR(x->desc, jstr(args, "description"));
		T_EQ_INT(k->per_cpu, jnum(args, "per_cpu") ? APC_YES : APC_NO);
		T_ASSERT(c >= 1 && c <= 4 && (int)k->cls == cls[c]);
		T_ASSERT(d >= 0 && d <= 5 && (int)k->display == disp[d]);
		T_ASSERT(k->multiplier * (double)jnum(args, "modifier") > 0.999999 &&
			 k->multiplier * (double)jnum(args, "modifier") < 1.000001);
		T_EQ_INT(k->series, jnum(args, "series_composition"));
		T_EQ_INT(k->render, jnum(args, "rendering_type"));
		T_EQ_INT(k->average_selection, jnum(args, "average_selection") ? APC_YES : APC_NO);
		T_EQ_INT(k->average_cores, jnum(args, "average_cores") ? APC_YES : APC_NO);
		T_EQ_INT(k->percentage, jnum(args, "percentage") ? APC_YES : APC_NO);
		T_EQ_INT(k->cores, jnum(args, "cores"));
		T_EQ_U64(k->color, truth_color(jnum(args, "color")));
		T_ASSERT(x->type && strncmp(x->type, "annotate_", 9) == 0);
		T_EQ_INT(k->nactivities, jnum(args, "activity_count"));
		for (size_t i = 0; acts && i < acts->len && i < x->nacts; i++) {
			T_EQ_STR(x->acts[i], jstr(acts->items[i], "name"));
			T_EQ_U64(x->act_colors[i], truth_color(jnum(acts->items[i], "color")));
		}
		break;
	}
	case APC_ANN_COUNTER_VALUE:
		T_EQ_INT(a->core, jnum(args, "core"));
		T_EQ_INT(a->key, jnum(args, "id"));
		T_EQ_INT(a->value, jnum(args, "value"));
		break;
	case APC_ANN_ACTIVITY_SWITCH:
		T_EQ_INT(a->core, jnum(args, "core"));
		T_EQ_INT(a->key, jnum(args, "id"));
		T_EQ_INT(a->activity, jnum(args, "activity"));
		T_EQ_INT(a->act_tid, jnum(args, "tid"));
		break;
	case APC_ANN_CAM_VIEW:
		T_EQ_INT(a->view, jnum(args, "view_uid"));
		T_EQ_STR(x->text, jstr(args, "name"));
		break;
	case APC_ANN_CAM_TRACK:
		T_EQ_INT(a->view, jnum(args, "view_uid"));
		T_EQ_INT(a->track, jnum(args, "track_uid"));
		T_EQ_INT(a->parent, jnum(args, "parent_track_wire"));
		T_EQ_STR(x->text, jstr(args, "name"));
		break;
	case APC_ANN_CAM_JOB:
	case APC_ANN_JOB_START:
	case APC_ANN_JOB_DEPS:
	case APC_ANN_JOB_STOP: {
		const struct jv *deps = jget(args, "dependencies");

		T_EQ_INT(a->view, jnum(args, "view_uid"));
		T_EQ_INT(a->job, jnum(args, "job_uid"));
		if (a->code == APC_ANN_CAM_JOB || a->code == APC_ANN_JOB_START) {
			T_EQ_STR(x->text, jstr(args, "name"));
			T_EQ_INT(a->track, jnum(args, "track"));
			T_EQ_U64(a->color, truth_color(jnum(args, "color")));
		}
		if (a->code == APC_ANN_CAM_JOB) {
			T_EQ_U64(a->start, (uint64_t)jnum(args, "start_time"));
			T_EQ_U64(a->duration, (uint64_t)jnum(args, "duration"));
			T_ASSERT(!x->m.has_ts);
		} else {
			T_ASSERT(x->m.has_ts);
		}
		if (a->code == APC_ANN_CAM_JOB || a->code == APC_ANN_JOB_DEPS) {
			T_EQ_INT(a->primary_dep, jnum(args, "primary_dependency_wire"));
			T_EQ_INT(a->ndeps, jnum(args, "dependency_count"));
			for (size_t i = 0; deps && i < deps->len && i < a->ndeps; i++)
				T_EQ_INT(x->deps[i], deps->items[i]->num);
		}
		break;
	}
	}
}

static void decode_matches_truth(void)
{
	const char *td = t_shared_testdata();

	if (!td)
		T_SKIP("../shared/testdata absent");
	for (int v = 3; v <= 5; v++) {
		char path[512];
		size_t n, matched = 0, calls = 0;
		uint8_t *text;
		struct jv *lines[256];
		size_t nlines = 0;

		snprintf(path, sizeof path, "%s/annotate/v%d/truth.jsonl", td, v);
		text = slurp(path, &n);
		if (!text) {
			T_FAIL("cannot read %s", path);
			continue;
		}
		for (char *line = (char *)text; *line && nlines < 256;) {
			char *nl = strchr(line, '\n');
			const char *q = line;
			if (nl)
				*nl = 0;
			if (*line)
				lines[nlines++] = j_value(&q);
			line = nl ? nl + 1 : line + strlen(line);
		}
		for (int k = 1; k <= 3; k++) {
			size_t blen, ci = 0;
			uint8_t *bytes = slurp(stream_path(v, k), &blen);
			struct decoded dd;
			int32_t tid;

			if (!bytes) {
				T_FAIL("cannot read %s", stream_path(v, k));
				continue;
			}
			decode_bytes(bytes, blen, 0, &dd);
			T_ASSERT(dd.n > 0 && dd.r[0].m.is_setup);
			if (dd.n == 0) {
				free(bytes);
				continue;
			}
			tid = dd.r[0].m.ann.tid;
			T_EQ_INT(dd.r[0].m.version, v);
			/* The calls of this thread, in order, that send a message. */
			for (size_t i = 1; i < dd.n; i++) {
				const struct jv *call = NULL;
				while (ci < nlines) {
					const struct jv *c = lines[ci++];
					if (jnum(c, "tid") == tid && jget(c, "code") && jnum(c, "code") != 0) {
						call = c;
						break;
					}
				}
				if (!call) {
					T_FAIL("v%d stream%d: message %zu has no call in the truth", v, k, i);
					break;
				}
				T_EQ_INT(dd.r[i].m.ann.tid, tid);
				check_against_call(v, &dd.r[i], call, jnum(call, "seq"));
				matched++;
			}
			/* And no call of this thread is left without its message. */
			while (ci < nlines) {
				const struct jv *c = lines[ci++];
				if (jnum(c, "tid") == tid && jget(c, "code") && jnum(c, "code") != 0)
					T_FAIL("v%d stream%d: call seq %lld has no message", v, k, jnum(c, "seq"));
			}
			decoded_free(&dd);
			free(bytes);
		}
		for (size_t i = 0; i < nlines; i++)
			if (jget(lines[i], "code") && jnum(lines[i], "code") != 0)
				calls++;
		T_EQ_INT(matched, calls);
		for (size_t i = 0; i < nlines; i++)
			jv_free(lines[i]);
		free(text);
	}
}

/* ---- incremental feeding ------------------------------------------------ */

static int same_message(const struct rec *x, const struct rec *y)
{
	return x->m.offset == y->m.offset && x->m.ann.code == y->m.ann.code &&
	       x->m.ts == y->m.ts && x->m.has_ts == y->m.has_ts &&
	       strcmp(x->text, y->text) == 0 && x->m.ann.data_len == y->m.ann.data_len &&
	       memcmp(x->data, y->data, x->m.ann.data_len) == 0 &&
	       x->m.ann.value == y->m.ann.value && x->m.ann.ndeps == y->m.ann.ndeps;
}

static void feed_in_slices(void)
{
	size_t n;
	uint8_t *bytes;
	struct decoded whole, sliced;
	static const size_t steps[] = {1, 2, 3, 7, 64, 4096};

	if (!t_shared_testdata())
		T_SKIP("../shared/testdata absent");
	bytes = slurp(stream_path(5, 1), &n);
	T_ASSERT(bytes != NULL);
	if (!bytes)
		return;
	decode_bytes(bytes, n, 0, &whole);
	for (size_t s = 0; s < sizeof steps / sizeof steps[0]; s++) {
		decode_bytes(bytes, n, steps[s], &sliced);
		T_EQ_INT(sliced.n, whole.n);
		T_EQ_INT(sliced.errors, 0);
		T_EQ_INT(sliced.pending, 0);
		for (size_t i = 0; i < sliced.n && i < whole.n; i++)
			if (!same_message(&sliced.r[i], &whole.r[i]))
				T_FAIL("step %zu: message %zu differs", steps[s], i);
		decoded_free(&sliced);
	}
	/* Uneven slices from a seeded generator. */
	{
		struct apc_ann_decoder *d = apc_ann_decoder_new("slices");
		struct apc_err err;
		uint32_t seed = 12345;
		size_t at = 0;

		memset(&sliced, 0, sizeof sliced);
		while (at < n) {
			size_t k;
			seed = seed * 1103515245u + 12345u;
			k = 1 + (seed >> 16) % 700;
			if (k > n - at)
				k = n - at;
			T_EQ_INT(apc_ann_decoder_feed(d, bytes + at, k, &err), APC_OK);
			at += k;
			drain(d, &sliced);
		}
		T_EQ_INT(sliced.n, whole.n);
		for (size_t i = 0; i < sliced.n && i < whole.n; i++)
			if (!same_message(&sliced.r[i], &whole.r[i]))
				T_FAIL("random slices: message %zu differs", i);
		apc_ann_decoder_free(d);
		decoded_free(&sliced);
	}
	decoded_free(&whole);
	free(bytes);
}

/* ---- generated streams: truncation and damage --------------------------- */

/* A small v4 stream made by the encoder: setup + one message of each kind. */
static void build_small_stream(struct apc_buf *b, size_t *ends, size_t *nends)
{
	static const int32_t deps[] = {10, -1, 100000};
	static struct apc_activity acts[] = {{(char *)"Idle", 0xbbbbbb1b, 1}, {(char *)"Busy", 0xff00001b, 1}};
	struct apc_counter_decl k;
	struct apc_ann a;
	uint64_t ts = 2893496773945ULL;

	*nends = 0;
	apc_ann_encode_setup(b, 4, 24278, 24277, 0);
	ends[(*nends)++] = b->len;
	for (int code = APC_ANN_STR; code <= APC_ANN_JOB_STOP; code++) {
		memset(&a, 0, sizeof a);
		a.code = (uint8_t)code;
		a.channel = 64;
		a.group = 2;
		a.color = 0x12345678;
		a.text = "hi";
		a.text_len = 2;
		a.data = (const uint8_t *)"\x89PNG";
		a.data_len = 4;
		a.core = 1;
		a.key = 7;
		a.value = 3000000000LL;
		a.activity = 2;
		a.act_tid = 24278;
		a.view = 1;
		a.track = 3;
		a.parent = -1;
		a.job = 20;
		a.start = ts;
		a.duration = 1000000;
		a.primary_dep = -1;
		a.ndeps = 3;
		a.deps = deps;
		if (code == APC_ANN_COUNTER) {
			memset(&k, 0, sizeof k);
			k.key = 5;
			k.title = (char *)"Driver";
			k.name = (char *)"activity_counter";
			k.description = (char *)"three states";
			k.cls = APC_CLASS_ACTIVITY;
			k.display = APC_DISPLAY_ACCUMULATE;
			k.multiplier = 0.001;
			k.render = APC_RENDER_BAR;
			k.per_cpu = APC_YES;
			k.cores = 2;
			k.color = 0xffffff1b;
			k.has_color = 1;
			k.nactivities = 2;
			k.activities = acts;
			a.counter = &k;
		}
		T_EQ_INT(apc_ann_encode(b, 4, ts + (uint64_t)code, &a), APC_OK);
		ends[(*nends)++] = b->len;
	}
}

static void synthetic_roundtrip(void)
{
	struct apc_buf b = {0}, again = {0};
	size_t ends[32], nends;
	struct decoded dd;

	build_small_stream(&b, ends, &nends);
	decode_bytes(b.p, b.len, 0, &dd);
	T_EQ_INT(dd.errors, 0);
	T_EQ_INT(dd.n, nends);
	for (size_t i = 1; i < dd.n; i++) {
		const struct rec *x = &dd.r[i];
		const struct apc_ann *a = &x->m.ann;
		int code = (int)i;

		T_EQ_INT(a->code, code);
		T_EQ_INT(a->tid, 24278);
		T_EQ_INT(a->pid, 24277);
		T_EQ_INT(x->m.has_ts, code != 8 && code != 11 && code != 12 && code != 13);
		if (x->m.has_ts)
			T_EQ_U64(x->m.ts, 2893496773945ULL + (uint64_t)code);
		if (code == APC_ANN_COUNTER_VALUE)
			T_EQ_INT(a->value, 3000000000LL);
		if (code == APC_ANN_CAM_JOB || code == APC_ANN_JOB_DEPS) {
			T_EQ_INT(a->ndeps, 3);
			T_EQ_INT(x->deps[1], -1);
			T_EQ_INT(x->deps[2], 100000);
		}
		if (code == APC_ANN_COUNTER) {
			T_EQ_STR(x->title, "Driver");
			T_EQ_STR(x->acts[1], "Busy");
			T_EQ_U64(x->act_colors[1], 0xff00001b);
			T_EQ_INT(x->m.counter.cls, APC_CLASS_ACTIVITY);
			T_EQ_INT(x->m.counter.cores, 2);
		}
		if (code == APC_ANN_VISUAL) {
			T_EQ_STR(x->text, "hi");
			T_EQ_INT(a->data_len, 4);
		}
		if (a->has_color && code != APC_ANN_COUNTER)
			T_EQ_U64(a->color, 0x12345678);
	}
	/* Colour bytes are R, G, B, T in that order. */
	T_ASSERT(memmem(b.p, b.len, "\x12\x34\x56\x78hi", 6) != NULL);
	/* v3 has no job start/deps/stop, v5 packs the value as 64 bits. */
	{
		struct apc_ann a;
		memset(&a, 0, sizeof a);
		a.code = APC_ANN_JOB_STOP;
		T_EQ_INT(apc_ann_encode(&again, 3, 1, &a), APC_EDATA);
		T_EQ_INT(again.len, 0);
		a.code = APC_ANN_COUNTER_VALUE;
		a.value = 3000000000LL;
		T_EQ_INT(apc_ann_encode(&again, 5, 0, &a), APC_OK);
		/* code, length 8, ts 0, core 0, key 0, 3000000000 as packed64 */
		T_EQ_MEM(again.p, "\x09\x08\x00\x00\x00\x00\x00\x00\x80\xbc\xc1\x96\x0b", 13);
		again.len = 0;
		T_EQ_INT(apc_ann_encode(&again, 4, 0, &a), APC_OK);
		T_EQ_MEM(again.p, "\x09\x08\x00\x00\x00\x00\x00\x00\x80\xbc\xc1\x96\x7b", 13);
	}
	decoded_free(&dd);
	apc_buf_free(&b);
	apc_buf_free(&again);
}

static void truncation_every_offset(void)
{
	struct apc_buf b = {0};
	size_t ends[32], nends;

	build_small_stream(&b, ends, &nends);
	for (size_t cut = 0; cut <= b.len; cut++) {
		struct decoded dd;
		size_t whole = 0, last_end = 0;

		for (size_t i = 0; i < nends; i++)
			if (ends[i] <= cut) {
				whole++;
				last_end = ends[i];
			}
		decode_bytes(b.p, cut, 0, &dd);
		if (dd.n != whole || dd.errors || dd.pending != cut - last_end)
			T_FAIL("cut %zu: %zu messages (want %zu), %d errors, %zu pending (want %zu)",
			       cut, dd.n, whole, dd.errors, dd.pending, cut - last_end);
		decoded_free(&dd);
	}
	apc_buf_free(&b);
}

/* Feed bytes, then return the next status and message. */
static int next_of(struct apc_ann_decoder *d, struct apc_ann_msg *m, struct apc_err *err)
{
	apc_err_clear(err);
	return apc_ann_decoder_next(d, m, err);
}

static void bad_magic(void)
{
	struct apc_buf b = {0};
	struct apc_ann a;
	struct apc_ann_decoder *d = apc_ann_decoder_new("bad.bin");
	struct apc_ann_msg m;
	struct apc_err err;

	apc_err_clear(&err);
	apc_ann_encode_setup(&b, 4, 1, 2, 0);
	b.p[3] = 'X'; /* "ANNXTATE 4\n" */
	memset(&a, 0, sizeof a);
	a.code = APC_ANN_MARKER;
	a.text = "after";
	a.text_len = 5;
	apc_ann_encode(&b, 4, 77, &a);
	/* The first 4 bytes already say it is not the magic. */
	apc_ann_decoder_feed(d, b.p, 4, &err);
	T_EQ_INT(next_of(d, &m, &err), APC_EDATA);
	T_EQ_INT(err.offset, 0);
	T_EQ_STR(err.file, "bad.bin");
	T_ASSERT(strstr(err.msg, "magic") != NULL);
	apc_ann_decoder_feed(d, b.p + 4, b.len - 4, &err);
	/* Resynced after the 20 setup bytes: the marker decodes. */
	T_EQ_INT(next_of(d, &m, &err), APC_OK);
	T_EQ_INT(m.ann.code, APC_ANN_MARKER);
	T_EQ_INT(m.offset, 20);
	T_EQ_U64(m.ts, 77);
	T_EQ_INT(next_of(d, &m, &err), APC_END);
	apc_ann_decoder_free(d);

	/* An unknown version number. */
	d = apc_ann_decoder_new("v9.bin");
	b.p[3] = 'O';
	b.p[9] = '9';
	apc_ann_decoder_feed(d, b.p, b.len, &err);
	T_EQ_INT(next_of(d, &m, &err), APC_EDATA);
	T_ASSERT(strstr(err.msg, "version") != NULL);
	T_EQ_INT(next_of(d, &m, &err), APC_OK);
	T_EQ_INT(m.ann.code, APC_ANN_MARKER);
	apc_ann_decoder_free(d);
	apc_buf_free(&b);
}

/*
 * Decoders sharing a budget: each connection's unfinished message is
 * buffered until the budget is spent, then feeding fails with the
 * stream offset; what a freed decoder held is given back, and a buffer
 * a large message grew shrinks once it is consumed.
 */
static void shared_budget(void)
{
	struct apc_ann_budget bud = {0, 3u << 20};
	struct apc_ann_decoder *d[3];
	struct apc_buf b = {0};
	struct apc_ann_msg m;
	struct apc_err err;
	static uint8_t chunk[900 * 1024];
	/* a string message promising 60 MiB, of which chunk is a slice */
	static const uint8_t hdr[] = {0x01, 0x00, 0x00, 0xc0, 0x03};

	apc_ann_encode_setup(&b, 3, 1, 2, 1);
	apc_buf_put_bytes(&b, hdr, sizeof hdr);
	for (int i = 0; i < 3; i++) {
		d[i] = apc_ann_decoder_new("fd");
		apc_ann_decoder_share(d[i], &bud);
		apc_err_clear(&err);
		T_EQ_INT(apc_ann_decoder_feed(d[i], b.p, b.len, &err), APC_OK);
		T_EQ_INT(next_of(d[i], &m, &err), APC_OK); /* the setup */
		T_EQ_INT(next_of(d[i], &m, &err), APC_END);
	}
	/* 900 KiB each grows a buffer to 1 MiB: two fit in 3 MiB with
	 * their first 4 KiB, the third does not */
	T_EQ_INT(apc_ann_decoder_feed(d[0], chunk, sizeof chunk, &err), APC_OK);
	T_EQ_INT(apc_ann_decoder_feed(d[1], chunk, sizeof chunk, &err), APC_OK);
	T_EQ_INT(bud.held, (2u << 20) + 4096);
	T_EQ_INT(apc_ann_decoder_feed(d[1], chunk, sizeof chunk, &err), APC_EDATA);
	T_ASSERT(strstr(err.msg, "annotate connections would hold") != NULL);
	T_EQ_INT(err.offset, (int64_t)(b.len + sizeof chunk));
	T_EQ_INT(bud.held, (2u << 20) + 4096);
	/* one connection gone: the third's slice fits */
	apc_ann_decoder_free(d[0]);
	T_EQ_INT(bud.held, (1u << 20) + 4096);
	apc_err_clear(&err);
	T_EQ_INT(apc_ann_decoder_feed(d[2], chunk, sizeof chunk, &err), APC_OK);
	T_EQ_INT(bud.held, 2u << 20);
	apc_ann_decoder_free(d[1]);
	apc_ann_decoder_free(d[2]);
	T_EQ_INT(bud.held, 0);

	/* a 2 MiB message, whole, then small ones: the buffer shrinks */
	{
		struct apc_ann a;
		static char text[2u << 20];
		struct apc_ann_decoder *e = apc_ann_decoder_new("big");

		apc_ann_decoder_share(e, &bud);
		bud.max = 64u << 20;
		memset(text, 'x', sizeof text);
		memset(&a, 0, sizeof a);
		a.code = APC_ANN_STR;
		a.text = text;
		a.text_len = sizeof text;
		b.len = 0;
		apc_ann_encode_setup(&b, 3, 1, 2, 1);
		apc_ann_encode(&b, 3, 5, &a);
		T_EQ_INT(apc_ann_decoder_feed(e, b.p, b.len, &err), APC_OK);
		T_ASSERT(bud.held > sizeof text);
		T_EQ_INT(next_of(e, &m, &err), APC_OK);
		T_EQ_INT(next_of(e, &m, &err), APC_OK);
		T_EQ_INT(m.ann.text_len, sizeof text);
		T_EQ_INT(next_of(e, &m, &err), APC_END);
		a.text = "small";
		a.text_len = 5;
		b.len = 0;
		apc_ann_encode(&b, 3, 6, &a);
		T_EQ_INT(apc_ann_decoder_feed(e, b.p, b.len, &err), APC_OK);
		T_EQ_INT(bud.held, 1u << 20);
		T_EQ_INT(next_of(e, &m, &err), APC_OK);
		T_EQ_STR(m.ann.text, "small");
		apc_ann_decoder_free(e);
		T_EQ_INT(bud.held, 0);
	}
	apc_buf_free(&b);
}

static void unknown_code_and_oversized(void)
{
	struct apc_buf b = {0};
	struct apc_ann a;
	struct apc_ann_decoder *d;
	struct apc_ann_msg m;
	struct apc_err err;
	size_t bad_at, big_at;
	/* code 0x42, length 3, 3 body bytes */
	static const uint8_t unknown[] = {0x42, 3, 0, 0, 0, 0xaa, 0xbb, 0xcc};
	/* code 0x01, length 0x7ffffff0: over APC_ANN_BODY_MAX */
	static const uint8_t big[] = {0x01, 0xf0, 0xff, 0xff, 0x7f};

	apc_err_clear(&err);
	apc_ann_encode_setup(&b, 3, 1, 2, 1);
	memset(&a, 0, sizeof a);
	a.code = APC_ANN_STR;
	a.text = "one";
	a.text_len = 3;
	apc_ann_encode(&b, 3, 5, &a);
	bad_at = b.len;
	apc_buf_put_bytes(&b, unknown, sizeof unknown);
	/* A v4-only code in a v3 stream is unknown too. */
	apc_buf_put_bytes(&b, "\x10\x03\x00\x00\x00\x01\x14\x00", 8);
	a.text = "two";
	apc_ann_encode(&b, 3, 6, &a);
	big_at = b.len;
	apc_buf_put_bytes(&b, big, sizeof big);

	d = apc_ann_decoder_new("u.bin");
	apc_ann_decoder_feed(d, b.p, b.len, &err);
	T_EQ_INT(next_of(d, &m, &err), APC_OK);
	T_ASSERT(m.is_setup);
	T_EQ_INT(m.dont_mangle, 1);
	T_EQ_INT(next_of(d, &m, &err), APC_OK);
	T_EQ_STR(m.ann.text, "one");
	T_EQ_INT(next_of(d, &m, &err), APC_EDATA);
	T_EQ_INT(err.offset, (int64_t)bad_at);
	T_ASSERT(strstr(err.msg, "0x42") != NULL);
	T_EQ_INT(next_of(d, &m, &err), APC_EDATA);
	T_EQ_INT(err.offset, (int64_t)bad_at + 8);
	T_EQ_INT(next_of(d, &m, &err), APC_OK);
	T_EQ_STR(m.ann.text, "two");
	T_EQ_U64(m.ts, 6);
	T_EQ_INT(next_of(d, &m, &err), APC_EDATA);
	T_EQ_INT(err.offset, (int64_t)big_at);
	T_ASSERT(strstr(err.msg, "limit") != NULL);
	/* The decoder now drops the declared length: later bytes vanish, no growth. */
	T_EQ_INT(next_of(d, &m, &err), APC_END);
	T_EQ_INT(apc_ann_decoder_pending(d), 0);
	{
		uint8_t junk[4096];
		memset(junk, 0x01, sizeof junk);
		for (int i = 0; i < 64; i++)
			T_EQ_INT(apc_ann_decoder_feed(d, junk, sizeof junk, &err), APC_OK);
		T_EQ_INT(next_of(d, &m, &err), APC_END);
		T_EQ_INT(apc_ann_decoder_pending(d), 0);
	}
	apc_ann_decoder_free(d);
	apc_buf_free(&b);
}

/* Bodies that do not parse: each is an error at its offset, then decoding goes on. */
static void bad_bodies(void)
{
	static const struct { const char *what; uint8_t code; uint8_t len; const char *body; } cases[] = {
		{"truncated packed timestamp", 0x01, 2, "\x80\x80"},
		{"colour cut short", 0x02, 3, "\x01\x00\xff"},
		{"visual without NUL", 0x05, 4, "\x01" "abc"},
		{"value overlong", 0x09, 13, "\x01\x00\x01\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80"},
		{"dependency count past the end", 0x0c, 14, "\x01\x01\x01\x01\x01\x00\x00\x00\x00\x7f\x40\x00\x00\x00"},
		{"counter class 9", 0x08, 16, "\x01\x00\x09\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"},
		{"counter activity count too big", 0x08, 16, "\x01\x00\x03\x01\x01\x00\x00\x00\x00\x00\x3f\x00\x00\x00\x00\x00"},
		{"counter title without NUL", 0x08, 18, "\x01\x00\x01\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" "ab"},
		{"32-bit field too wide", 0x04, 7, "\x01\x80\x80\x80\x80\x80\x01"},
	};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct apc_buf b = {0};
		struct apc_ann a;
		struct apc_ann_decoder *d = apc_ann_decoder_new("b.bin");
		struct apc_ann_msg m;
		struct apc_err err;
		uint8_t hdr[5] = {cases[i].code, cases[i].len, 0, 0, 0};

		apc_ann_encode_setup(&b, 4, 1, 2, 0);
		apc_buf_put_bytes(&b, hdr, 5);
		apc_buf_put_bytes(&b, cases[i].body, cases[i].len);
		memset(&a, 0, sizeof a);
		a.code = APC_ANN_MARKER;
		apc_ann_encode(&b, 4, 9, &a);
		apc_ann_decoder_feed(d, b.p, b.len, &err);
		T_EQ_INT(next_of(d, &m, &err), APC_OK);
		if (next_of(d, &m, &err) != APC_EDATA || err.offset != 20)
			T_FAIL("%s: not reported at offset 20 (%s)", cases[i].what, err.msg);
		if (next_of(d, &m, &err) != APC_OK || m.ann.code != APC_ANN_MARKER)
			T_FAIL("%s: no resync to the next message", cases[i].what);
		apc_ann_decoder_free(d);
		apc_buf_free(&b);
	}
}

/*
 * Seeded random damage (byte flips, cuts) to real and generated streams:
 * decoding always ends, never holds more than it was fed, and every error
 * names an offset inside the stream.
 */
static void random_damage(void)
{
	struct apc_buf b = {0};
	size_t ends[32], nends;
	uint32_t seed = 0xc0ffee;
	uint8_t *copy;

	build_small_stream(&b, ends, &nends);
	copy = malloc(b.len);
	for (int iter = 0; iter < 3000; iter++) {
		struct apc_ann_decoder *d = apc_ann_decoder_new("r");
		struct apc_ann_msg m;
		struct apc_err err;
		size_t len = b.len, msgs = 0, errs = 0, at = 0;
		int rc;

		memcpy(copy, b.p, b.len);
		for (int f = 0; f < 1 + iter % 4; f++) {
			seed = seed * 1103515245u + 12345u;
			copy[(seed >> 8) % len] ^= (uint8_t)(1u << ((seed >> 4) % 8));
		}
		seed = seed * 1103515245u + 12345u;
		if (iter & 1)
			len -= (seed >> 8) % len;
		apc_err_clear(&err);
		while (at < len) {
			size_t k = 1 + (size_t)((seed >> 12) % 37);
			if (k > len - at)
				k = len - at;
			T_EQ_INT(apc_ann_decoder_feed(d, copy + at, k, &err), APC_OK);
			at += k;
			while ((rc = apc_ann_decoder_next(d, &m, &err)) != APC_END) {
				if (rc == APC_OK) {
					msgs++;
					if (m.ann.text)
						T_EQ_INT(strlen(m.ann.text) <= m.ann.text_len, 1);
				} else {
					errs++;
					if (err.offset < 0 || (uint64_t)err.offset >= at)
						T_FAIL("iteration %d: error offset %lld outside the %zu bytes fed",
						       iter, (long long)err.offset, at);
				}
				if (msgs + errs > len)
					break;
			}
			T_ASSERT(apc_ann_decoder_pending(d) <= at);
		}
		/* Every message or error consumed at least 5 bytes. */
		T_ASSERT((msgs + errs) * 5 <= len + 20);
		apc_ann_decoder_free(d);
	}
	free(copy);
	apc_buf_free(&b);
}

static void msg_fields(void)
{
	struct apc_buf b = {0};
	size_t ends[32], nends;
	struct apc_ann_decoder *d = apc_ann_decoder_new("f");
	struct apc_ann_msg m;
	struct apc_msg out;
	struct apc_err err;
	const struct apc_field *f;
	int seen = 0;

	build_small_stream(&b, ends, &nends);
	apc_ann_decoder_feed(d, b.p, b.len, &err);
	while (next_of(d, &m, &err) == APC_OK) {
		apc_ann_to_msg(&m, &out);
		if (m.is_setup) {
			T_EQ_STR(out.name, "annotate_setup");
			f = apc_msg_field(&out, "pid");
			T_ASSERT(f && f->i == 24277);
			f = apc_msg_field(&out, "version");
			T_ASSERT(f && f->i == 4);
			seen++;
			continue;
		}
		T_EQ_INT(out.has_ts, m.has_ts);
		T_EQ_INT(out.code, m.ann.code);
		switch (m.ann.code) {
		case APC_ANN_COLOR_STR:
			T_EQ_STR(out.name, "annotate_color_str");
			f = apc_msg_field(&out, "color");
			T_ASSERT(f && f->kind == APC_F_HEX && f->i == 0x12345678);
			f = apc_msg_field(&out, "text");
			T_ASSERT(f && f->kind == APC_F_STR && f->len == 2 && memcmp(f->s, "hi", 2) == 0);
			seen++;
			break;
		case APC_ANN_CAM_JOB:
			T_EQ_STR(out.name, "annotate_cam_job");
			f = apc_msg_field(&out, "deps");
			T_ASSERT(f && f->i == 3);
			f = apc_msg_field(&out, "dep2");
			T_ASSERT(f && f->i == 100000);
			f = apc_msg_field(&out, "duration");
			T_ASSERT(f && f->i == 1000000);
			seen++;
			break;
		case APC_ANN_COUNTER:
			T_EQ_STR(out.name, "annotate_counter");
			f = apc_msg_field(&out, "class");
			T_ASSERT(f && f->len == 8 && memcmp(f->s, "activity", 8) == 0);
			f = apc_msg_field(&out, "modifier");
			T_ASSERT(f && f->i == 1000);
			f = apc_msg_field(&out, "activity1");
			T_ASSERT(f && f->len == 4 && memcmp(f->s, "Busy", 4) == 0);
			seen++;
			break;
		case APC_ANN_VISUAL:
			f = apc_msg_field(&out, "data");
			T_ASSERT(f && f->kind == APC_F_BYTES && f->len == 4);
			seen++;
			break;
		}
		T_ASSERT(out.nfields > 0 && out.nfields <= APC_MSG_MAX_FIELDS);
	}
	T_EQ_INT(seen, 5);
	T_EQ_STR(apc_ann_code_name(APC_ANN_JOB_DEPS), "job_deps");
	/* Every message name is "annotate_" and its code name. */
	for (int code = APC_ANN_STR; code <= APC_ANN_JOB_STOP; code++) {
		char want[64];
		memset(&m, 0, sizeof m);
		m.ann.code = (uint8_t)code;
		apc_ann_to_msg(&m, &out);
		snprintf(want, sizeof want, "annotate_%s", apc_ann_code_name(code));
		T_EQ_STR(out.name, want);
	}
	T_EQ_STR(apc_ann_code_name(0x42), "unknown");
	apc_ann_decoder_free(d);
	apc_buf_free(&b);
}

/* ---- the "annotate" input format ---------------------------------------- */

extern const struct apc_format apc_format_annotate;

struct opened {
	struct apc_input *in[3];
	struct apc_reader r;
	struct apc_model model;
};

static int open_reader(struct opened *o, char *const *paths, size_t n)
{
	struct apc_err err;

	memset(o, 0, sizeof *o);
	apc_model_init(&o->model);
	apc_err_clear(&o->r.err);
	for (size_t i = 0; i < n; i++)
		if (apc_input_open(paths[i], &o->in[i], &err) != APC_OK)
			return -1;
	o->r.fmt = &apc_format_annotate;
	o->r.inputs = o->in;
	o->r.ninputs = n;
	o->r.model = &o->model;
	return apc_format_annotate.open(&o->r);
}

static void close_reader(struct opened *o)
{
	apc_format_annotate.close(&o->r);
	for (size_t i = 0; i < 3; i++)
		if (o->in[i])
			apc_input_close(o->in[i]);
	apc_model_free(&o->model);
}

/* Read all events; returns the final status, counts events and checks order. */
static int read_all(struct opened *o, size_t *nev, size_t *by_code, int *ordered)
{
	struct apc_batch b;
	uint64_t last = 0;
	int rc;

	*nev = 0;
	*ordered = 1;
	apc_batch_init(&b, 16);
	for (;;) {
		apc_batch_reset(&b);
		rc = apc_format_annotate.next(&o->r, &b);
		for (size_t i = 0; i < b.n; i++) {
			const struct apc_event *e = &b.ev[i];
			if (e->type != APC_EV_ANNOTATION || !e->u.ann)
				continue;
			(*nev)++;
			by_code[e->u.ann->code & 31]++;
			if (e->ts < last)
				*ordered = 0;
			last = e->ts;
			if (e->u.ann->code == APC_ANN_COUNTER &&
			    (!e->u.ann->counter || !e->u.ann->counter->name))
				*ordered = 0;
		}
		if (rc != APC_OK)
			break;
	}
	apc_batch_free(&b);
	return rc;
}

static void format_reads_streams(void)
{
	char *paths[3];
	struct opened o;
	size_t nev, by_code[32] = {0}, want = 0, want_code[32] = {0};
	uint64_t want_delta = 0;
	int ordered;
	struct apc_input *in;
	struct apc_err err;

	if (!t_shared_testdata())
		T_SKIP("../shared/testdata absent");
	/* What the codec itself finds, to compare with. */
	for (int k = 1; k <= 3; k++) {
		size_t n;
		uint8_t *bytes = slurp(stream_path(4, k), &n);
		struct decoded dd;

		T_ASSERT(bytes != NULL);
		if (!bytes)
			return;
		decode_bytes(bytes, n, 0, &dd);
		for (size_t i = 0; i < dd.n; i++)
			if (!dd.r[i].m.is_setup) {
				want++;
				want_code[dd.r[i].m.ann.code]++;
			}
		/* The first message of each stream here carries a time. */
		if (dd.n > 1 && dd.r[1].m.has_ts && (!want_delta || dd.r[1].m.ts < want_delta))
			want_delta = dd.r[1].m.ts;
		decoded_free(&dd);
		free(bytes);
		paths[k - 1] = strdup(stream_path(4, k));
	}
	T_EQ_INT(apc_input_open(paths[0], &in, &err), APC_OK);
	if (in) {
		T_EQ_INT(apc_format_annotate.bid(in), 100);
		apc_input_close(in);
	}
	T_EQ_INT(open_reader(&o, paths, 3), APC_OK);
	T_EQ_STR(o.model.meta.target_name, "annotate");
	T_EQ_STR(o.model.meta.source_format, "annotate");
	T_EQ_INT(o.model.meta.ncores, 1);
	/* The earliest first timestamp of the three streams. */
	T_ASSERT(want_delta != 0);
	T_EQ_U64(o.model.meta.monotonic_delta, want_delta);
	T_EQ_INT(read_all(&o, &nev, by_code, &ordered), APC_END);
	T_EQ_INT(nev, want);
	T_ASSERT(ordered);
	for (int c = 1; c <= 16; c++)
		T_EQ_INT(by_code[c], want_code[c]);
	T_EQ_INT(o.r.damaged, 0);
	close_reader(&o);
	for (int k = 0; k < 3; k++)
		free(paths[k]);
}

static void format_salvages_damage(void)
{
	char tmp[] = "/tmp/test_annotate_XXXXXX";
	char *paths[2];
	struct opened o;
	size_t n, nev, by_code[32] = {0}, cut;
	uint8_t *bytes;
	int fd, ordered, rc;
	struct decoded dd;
	size_t whole = 0;
	struct apc_input *in;
	struct apc_err err;
	FILE *f;

	if (!t_shared_testdata())
		T_SKIP("../shared/testdata absent");
	/* The first 2000 bytes of the v5 main stream: cut inside a message. */
	bytes = slurp(stream_path(5, 1), &n);
	T_ASSERT(bytes != NULL && n > 2000);
	if (!bytes)
		return;
	cut = 2000;
	decode_bytes(bytes, cut, 0, &dd);
	for (size_t i = 0; i < dd.n; i++)
		whole += !dd.r[i].m.is_setup;
	T_ASSERT(dd.pending > 0);
	fd = mkstemp(tmp);
	T_ASSERT(fd >= 0);
	f = fdopen(fd, "wb");
	fwrite(bytes, 1, cut, f);
	fclose(f);
	paths[0] = tmp;
	paths[1] = strdup(stream_path(5, 3));
	T_EQ_INT(open_reader(&o, paths, 2), APC_OK);
	rc = read_all(&o, &nev, by_code, &ordered);
	T_ASSERT(rc < 0);
	T_ASSERT(o.r.damaged);
	T_ASSERT(strstr(o.r.err.file, "test_annotate_") != NULL);
	T_EQ_INT(o.r.err.offset, (int64_t)(cut - dd.pending));
	/* All whole messages of the cut stream, and the other stream's, came out. */
	T_ASSERT(nev >= whole);
	T_ASSERT(ordered);
	close_reader(&o);
	/* A v5 stream bids 100; an unknown version does not. */
	T_EQ_INT(apc_input_open(paths[1], &in, &err), APC_OK);
	if (in) {
		T_EQ_INT(apc_format_annotate.bid(in), 100);
		apc_input_close(in);
	}
	f = fopen(tmp, "wb");
	fputs("ANNOTATE 7\nxxxxxxxxxxxx", f);
	fclose(f);
	T_EQ_INT(apc_input_open(tmp, &in, &err), APC_OK);
	if (in) {
		T_EQ_INT(apc_format_annotate.bid(in), 0);
		apc_input_close(in);
	}
	unlink(tmp);
	free(paths[1]);
	decoded_free(&dd);
	free(bytes);
}

void run_tests(void)
{
	T_RUN(reencode_real_streams);
	T_RUN(decode_matches_truth);
	T_RUN(feed_in_slices);
	T_RUN(synthetic_roundtrip);
	T_RUN(truncation_every_offset);
	T_RUN(bad_magic);
	T_RUN(unknown_code_and_oversized);
	T_RUN(shared_budget);
	T_RUN(bad_bodies);
	T_RUN(random_damage);
	T_RUN(msg_fields);
	T_RUN(format_reads_streams);
	T_RUN(format_salvages_damage);
}
