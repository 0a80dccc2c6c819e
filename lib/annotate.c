/*
 * annotate.c - the Annotate protocol (v3, v4, v5): an incremental decoder
 * for one client connection's byte stream and an encoder that writes the
 * same bytes gator's client library writes.
 *
 * Wire facts (spec v3 plus what real v3/v4/v5 streams show): the setup is
 * "ANNOTATE N\n", u32 LE tid, u32 LE pid, 1 byte don't-mangle; each
 * message is 1 code byte, u32 LE body length, body.  Colours are 4 raw
 * bytes (R, G, B, then ESC or a theme number); strings that end a body
 * have neither length nor NUL; the counter declaration (0x08), track
 * (0x0b), job (0x0c) and view (0x0d) have no timestamp; v4 adds 0x0e job
 * start (view, job, track, time, colour, name), 0x0f set dependencies
 * (view, job, time, primary, count, deps) and 0x10 job stop (view, job,
 * time); in v3/v4 the 0x09 value is a uint32 packed as int32, in v5 a
 * packed int64.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotate.h"
#include "bytes.h"
#include "cpu.h"
#include "packed.h"

#define ANN_SETUP_LEN 20
#define ANN_MAGIC "ANNOTATE "
#define ANN_MAGIC_LEN 9
#define ANN_HDR_LEN 5
/*
 * Bytes the decoder holds at once: one whole message plus a generous
 * slice of the next ones.  A caller feeds a slice whenever next() says
 * APC_END, so this only trips on a caller that feeds without pulling.
 */
#define ANN_PENDING_MAX ((size_t)APC_ANN_BODY_MAX * 2 + 4096)
/* A buffer kept however little it holds (larger ones shrink). */
#define ANN_KEEP_CAP ((size_t)1 << 20)

struct apc_ann_decoder {
	char name[256];
	uint8_t *buf;        /* fed bytes; buf[pos..len) not consumed yet */
	size_t len, cap, pos;
	uint64_t base;       /* stream offset of buf[0] */
	struct apc_ann_budget *budget; /* cap is charged to it, if set */
	uint64_t skip;       /* bytes still to drop after a bad message */
	int setup_done;
	int version;
	int32_t tid, pid;
	uint8_t dont_mangle;
	/* Scratch the last message's pointers refer to. */
	char *text;
	size_t text_cap;
	int32_t *deps;
	size_t deps_cap;
	char *strs;          /* counter title, name, units, description, activity names */
	size_t strs_cap;
	struct apc_activity *acts;
	size_t acts_cap;
	char type[64];
};

/* New decoder; `name` (a file, or "capture: external fd N") heads its errors. */
struct apc_ann_decoder *apc_ann_decoder_new(const char *name)
{
	struct apc_ann_decoder *d = calloc(1, sizeof *d);

	if (!d)
		return NULL;
	snprintf(d->name, sizeof d->name, "%s", name ? name : "");
	return d;
}

void apc_ann_decoder_share(struct apc_ann_decoder *d, struct apc_ann_budget *b)
{
	if (d->budget)
		d->budget->held -= d->cap;
	d->budget = b;
	if (b)
		b->held += d->cap;
}

void apc_ann_decoder_free(struct apc_ann_decoder *d)
{
	if (!d)
		return;
	apc_ann_decoder_share(d, NULL);
	free(d->buf);
	free(d->text);
	free(d->deps);
	free(d->strs);
	free(d->acts);
	free(d);
}

/* Drop up to d->skip bytes of what is buffered (resync after a bad message). */
static void ann_drop_skip(struct apc_ann_decoder *d)
{
	size_t avail = d->len - d->pos;
	size_t k = d->skip < avail ? (size_t)d->skip : avail;

	d->pos += k;
	d->skip -= k;
}

/*
 * Append bytes.  While a bad message is being skipped, its bytes are
 * dropped here rather than buffered.
 */
int apc_ann_decoder_feed(struct apc_ann_decoder *d, const uint8_t *p, size_t n,
			 struct apc_err *err)
{
	size_t pending;

	/* Bytes a pending skip would drop anyway need no buffering. */
	if (d->skip && d->pos == d->len) {
		size_t k = d->skip < n ? (size_t)d->skip : n;
		d->base += d->len + k;
		d->len = d->pos = 0;
		d->skip -= k;
		p += k;
		n -= k;
	}
	if (n == 0)
		return APC_OK;
	/* Compact: keep only the unconsumed tail. */
	if (d->pos) {
		memmove(d->buf, d->buf + d->pos, d->len - d->pos);
		d->base += d->pos;
		d->len -= d->pos;
		d->pos = 0;
	}
	pending = d->len;
	if (n > ANN_PENDING_MAX - pending)
		return apc_err_set(err, APC_EDATA, d->name, (int64_t)(d->base + d->len),
				   "annotate decoder would hold %zu bytes (limit %zu)",
				   pending + n, (size_t)ANN_PENDING_MAX);
	{
		size_t ncap = d->cap ? d->cap : 4096;

		while (ncap < pending + n)
			ncap *= 2;
		/* What a large message grew is given back once it is
		 * consumed: under a shared budget it would stay held. */
		while (ncap > ANN_KEEP_CAP && ncap / 4 >= pending + n)
			ncap /= 2;
		if (ncap > d->cap && d->budget && d->budget->held - d->cap + ncap > d->budget->max)
			return apc_err_set(err, APC_EDATA, d->name, (int64_t)(d->base + d->len),
					   "annotate connections would hold %zu bytes together (limit %zu)",
					   d->budget->held - d->cap + ncap, d->budget->max);
		if (ncap != d->cap) {
			uint8_t *nb = realloc(d->buf, ncap);

			if (!nb && ncap > d->cap)
				return apc_err_set(err, APC_ENOMEM, d->name, APC_NO_OFFSET,
						   "out of memory buffering annotate stream");
			if (nb) {
				if (d->budget)
					d->budget->held = d->budget->held - d->cap + ncap;
				d->buf = nb;
				d->cap = ncap;
			}
		}
	}
	memcpy(d->buf + d->len, p, n);
	d->len += n;
	return APC_OK;
}

size_t apc_ann_decoder_pending(const struct apc_ann_decoder *d)
{
	return d->len - d->pos;
}

static const char *const ann_code_names[] = {
	NULL, "str", "color_str", "channel", "group", "visual", "marker",
	"color_marker", "counter", "counter_value", "activity_switch",
	"cam_track", "cam_job", "cam_view", "job_start", "job_deps", "job_stop",
};

const char *apc_ann_code_name(int code)
{
	if (code > 0 && code < (int)(sizeof ann_code_names / sizeof ann_code_names[0]))
		return ann_code_names[code];
	return "unknown";
}

/* Is `code` a message of protocol `version`? */
static int ann_code_known(int version, int code)
{
	if (code < APC_ANN_STR)
		return 0;
	if (code <= APC_ANN_CAM_VIEW)
		return 1;
	return version >= 4 && code <= APC_ANN_JOB_STOP;
}

/*
 * Does the body of message `code` open with its timestamp?  All before
 * v4's job messages do but the counter declaration and the CAM track, job
 * and view, which have none; the job messages carry theirs further on.
 */
static int ann_time_first(int code)
{
	return code < APC_ANN_JOB_START && code != APC_ANN_COUNTER && code != APC_ANN_CAM_TRACK &&
	       code != APC_ANN_CAM_JOB && code != APC_ANN_CAM_VIEW;
}

/* ---- body parsing ------------------------------------------------------ */

/* A cursor over one body; the first failure names the field. */
struct ann_cur {
	const uint8_t *p;
	size_t n, i;
	const char *bad;   /* field that did not parse, NULL while fine */
};

static int64_t ann_get_p64(struct ann_cur *c, const char *what)
{
	int64_t v = 0;
	int k;

	if (c->bad)
		return 0;
	k = apc_unpack64(c->p + c->i, c->n - c->i, &v);
	if (k <= 0) {
		c->bad = what;
		return 0;
	}
	c->i += (size_t)k;
	return v;
}

/*
 * A 32-bit field.  Clients pack uint32 values as int32 (so -1 is 0x7f);
 * a value in [INT32_MIN, UINT32_MAX] packed as 64 bits is accepted too and
 * folded to 32 bits, anything wider is damage.
 */
static int32_t ann_get_p32(struct ann_cur *c, const char *what)
{
	size_t at = c->i;
	int64_t v = ann_get_p64(c, what);

	if (!c->bad && (v < INT32_MIN || v > (int64_t)UINT32_MAX)) {
		c->i = at;
		c->bad = what;
		return 0;
	}
	return (int32_t)(uint32_t)v;
}

static uint32_t ann_get_color(struct ann_cur *c, const char *what)
{
	const uint8_t *q;

	if (c->bad)
		return 0;
	if (c->n - c->i < 4) {
		c->bad = what;
		return 0;
	}
	q = c->p + c->i;
	c->i += 4;
	return apc_be32(q);
}

/* The message's colour: ann_get_color() into a, which then has one. */
static void ann_take_color(struct ann_cur *c, struct apc_ann *a)
{
	a->color = ann_get_color(c, "colour");
	a->has_color = 1;
}

/* The message's time, a packed int64 (`what` names it in errors). */
static void ann_take_time(struct ann_cur *c, struct apc_ann_msg *m, const char *what)
{
	m->ts = (uint64_t)ann_get_p64(c, what);
	m->has_ts = 1;
}

/* A NUL-terminated string: returns its start and length, skips the NUL. */
static const uint8_t *ann_get_cstr(struct ann_cur *c, const char *what, size_t *len)
{
	const uint8_t *s, *z;

	*len = 0;
	if (c->bad)
		return NULL;
	s = c->p + c->i;
	z = memchr(s, 0, c->n - c->i);
	if (!z) {
		c->bad = what;
		return NULL;
	}
	*len = (size_t)(z - s);
	c->i += *len + 1;
	return s;
}

/* Grow a scratch array so it holds `n` items of `size` bytes. */
static int ann_grow(void **p, size_t *cap, size_t n, size_t size)
{
	void *np;

	if (n <= *cap)
		return APC_OK;
	if (n > SIZE_MAX / size)
		return APC_ENOMEM;
	np = realloc(*p, n * size);
	if (!np)
		return APC_ENOMEM;
	*p = np;
	*cap = n;
	return APC_OK;
}

/* The rest of the body as the message text (copied, NUL added). */
static int ann_take_text(struct apc_ann_decoder *d, struct ann_cur *c, struct apc_ann *a)
{
	size_t n = c->n - c->i;

	if (ann_grow((void **)&d->text, &d->text_cap, n + 1, 1) != APC_OK)
		return APC_ENOMEM;
	memcpy(d->text, c->p + c->i, n);
	d->text[n] = 0;
	a->text = d->text;
	a->text_len = n;
	c->i = c->n;
	return APC_OK;
}

/* `count` packed32 dependencies into d->deps; count is checked against the body. */
static int ann_take_deps(struct apc_ann_decoder *d, struct ann_cur *c, struct apc_ann *a,
			 int32_t count)
{
	if (c->bad)
		return APC_OK;
	/* Every dependency takes at least one byte. */
	if (count < 0 || (uint64_t)count > c->n - c->i) {
		c->bad = "dependency count";
		return APC_OK;
	}
	if (ann_grow((void **)&d->deps, &d->deps_cap, (size_t)count ? (size_t)count : 1,
		     sizeof *d->deps) != APC_OK)
		return APC_ENOMEM;
	for (int32_t k = 0; k < count; k++)
		d->deps[k] = ann_get_p32(c, "dependency");
	a->ndeps = (uint32_t)count;
	a->deps = d->deps;
	return APC_OK;
}

/* Counter strings go to d->strs, sized to the body up front so they never move. */
static char *ann_put_str(struct apc_ann_decoder *d, size_t *used, const uint8_t *s, size_t n)
{
	char *r = d->strs + *used;

	memcpy(r, s, n);
	r[n] = 0;
	*used += n + 1;
	return r;
}

static enum apc_class ann_class_from_wire(int32_t v, int *ok)
{
	switch (v) {
	case 1: return APC_CLASS_DELTA;
	case 2: return APC_CLASS_ABSOLUTE;
	case 3: return APC_CLASS_ACTIVITY;
	case 4: return APC_CLASS_INCIDENT;
	}
	*ok = 0;
	return APC_CLASS_DELTA;
}

static int32_t ann_class_to_wire(enum apc_class c)
{
	switch (c) {
	case APC_CLASS_DELTA: return 1;
	case APC_CLASS_ABSOLUTE: return 2;
	case APC_CLASS_ACTIVITY: return 3;
	case APC_CLASS_INCIDENT: return 4;
	}
	return 1;
}

static const enum apc_display ann_display_map[] = {
	APC_DISPLAY_DEFAULT, APC_DISPLAY_AVERAGE, APC_DISPLAY_ACCUMULATE,
	APC_DISPLAY_HERTZ, APC_DISPLAY_MAXIMUM, APC_DISPLAY_MINIMUM,
};

static int32_t ann_display_to_wire(enum apc_display v)
{
	for (int32_t i = 0; i < 6; i++)
		if (ann_display_map[i] == v)
			return i;
	return 0;
}

static enum apc_tri ann_tri(int32_t v)
{
	return v ? APC_YES : APC_NO;
}

/*
 * The counter declaration (0x08): 12 packed ints, a colour, the
 * activities (NUL-terminated name, colour), NUL-terminated title, name and
 * units, and the description to the end.  Empty strings become NULL.
 */
static int ann_parse_counter(struct apc_ann_decoder *d, struct ann_cur *c, struct apc_ann_msg *m)
{
	struct apc_counter_decl *k = &m->counter;
	int32_t v[12];
	size_t used = 0, slen;
	const uint8_t *s;
	int ok = 1;
	static const char *const what[12] = {
		"counter key", "per_cpu", "class", "display", "modifier", "series",
		"rendering", "average_selection", "average_cores", "percentage",
		"activity count", "cores",
	};

	for (int i = 0; i < 12; i++)
		v[i] = ann_get_p32(c, what[i]);
	k->key = v[0];
	k->event = -1;
	k->per_cpu = ann_tri(v[1]);
	k->cls = ann_class_from_wire(v[2], &ok);
	if (!ok && !c->bad)
		c->bad = "class";
	if (v[3] >= 0 && v[3] <= 5)
		k->display = ann_display_map[v[3]];
	else if (!c->bad)
		c->bad = "display";
	/* The client divides values by the modifier: multiplier is its inverse. */
	k->multiplier = v[4] ? 1.0 / (double)v[4] : 0.0;
	if (v[5] < 0 || v[5] > 3)
		c->bad = c->bad ? c->bad : "series";
	if (v[6] < 0 || v[6] > 3)
		c->bad = c->bad ? c->bad : "rendering";
	k->series = (enum apc_series)(c->bad ? 0 : v[5]);
	k->render = (enum apc_render)(c->bad ? 0 : v[6]);
	k->average_selection = ann_tri(v[7]);
	k->average_cores = ann_tri(v[8]);
	k->percentage = ann_tri(v[9]);
	k->cores = (uint32_t)v[11];
	k->color = ann_get_color(c, "counter colour");
	k->has_color = 1;
	if (c->bad)
		return APC_OK;
	/* Each activity takes at least 5 bytes (NUL and colour). */
	if (v[10] < 0 || (uint64_t)v[10] > (c->n - c->i) / 5) {
		c->bad = "activity count";
		return APC_OK;
	}
	if (ann_grow((void **)&d->strs, &d->strs_cap, c->n + 8, 1) != APC_OK ||
	    ann_grow((void **)&d->acts, &d->acts_cap, (size_t)v[10] + 1, sizeof *d->acts) != APC_OK)
		return APC_ENOMEM;
	k->nactivities = (size_t)v[10];
	k->activities = k->nactivities ? d->acts : NULL;
	for (size_t i = 0; i < k->nactivities; i++) {
		s = ann_get_cstr(c, "activity name", &slen);
		if (c->bad)
			return APC_OK;
		d->acts[i].name = ann_put_str(d, &used, s, slen);
		d->acts[i].color = ann_get_color(c, "activity colour");
		d->acts[i].has_color = 1;
	}
	s = ann_get_cstr(c, "counter title", &slen);
	if (s)
		k->title = slen ? ann_put_str(d, &used, s, slen) : NULL;
	s = ann_get_cstr(c, "counter name", &slen);
	if (s)
		k->name = slen ? ann_put_str(d, &used, s, slen) : NULL;
	s = ann_get_cstr(c, "counter units", &slen);
	if (s)
		k->units = slen ? ann_put_str(d, &used, s, slen) : NULL;
	if (c->bad)
		return APC_OK;
	slen = c->n - c->i;
	k->description = slen ? ann_put_str(d, &used, c->p + c->i, slen) : NULL;
	c->i = c->n;
	snprintf(d->type, sizeof d->type, "annotate_%" PRId32 "_%" PRId32, d->pid, k->key);
	k->type = d->type;
	m->ann.key = k->key;
	m->ann.color = k->color;
	m->ann.has_color = 1;
	m->ann.counter = k;
	return APC_OK;
}

/* Decode the body of message `code` into m; c->bad names a bad field. */
static int ann_parse_body(struct apc_ann_decoder *d, int code, struct ann_cur *c,
			  struct apc_ann_msg *m)
{
	struct apc_ann *a = &m->ann;
	size_t slen;
	const uint8_t *s;

	if (ann_time_first(code))
		ann_take_time(c, m, "timestamp");
	switch (code) {
	case APC_ANN_STR:
		a->channel = ann_get_p32(c, "channel");
		break;
	case APC_ANN_COLOR_STR:
		a->channel = ann_get_p32(c, "channel");
		ann_take_color(c, a);
		break;
	case APC_ANN_CHANNEL:
		a->channel = ann_get_p32(c, "channel");
		a->group = ann_get_p32(c, "group");
		break;
	case APC_ANN_GROUP:
		a->group = ann_get_p32(c, "group");
		break;
	case APC_ANN_VISUAL:
		s = ann_get_cstr(c, "visual text", &slen);
		if (c->bad)
			return APC_OK;
		/* Text and image both stay in the fed buffer: the text is NUL-terminated there. */
		a->text = (const char *)s;
		a->text_len = slen;
		a->data = c->p + c->i;
		a->data_len = c->n - c->i;
		c->i = c->n;
		return APC_OK;
	case APC_ANN_MARKER:
		break;
	case APC_ANN_COLOR_MARKER:
		ann_take_color(c, a);
		break;
	case APC_ANN_COUNTER:
		return ann_parse_counter(d, c, m);
	case APC_ANN_COUNTER_VALUE: {
		int64_t v;

		a->core = ann_get_p32(c, "core");
		a->key = ann_get_p32(c, "key");
		v = ann_get_p64(c, "value");
		/* v3/v4 clients send a uint32 packed as int32: undo the sign. */
		if (d->version < 5 && v >= INT32_MIN && v <= INT32_MAX)
			v = (int64_t)(uint32_t)(int32_t)v;
		a->value = v;
		return APC_OK;
	}
	case APC_ANN_ACTIVITY_SWITCH:
		a->core = ann_get_p32(c, "core");
		a->key = ann_get_p32(c, "key");
		a->activity = ann_get_p32(c, "activity");
		a->act_tid = ann_get_p32(c, "tid");
		return APC_OK;
	case APC_ANN_CAM_TRACK:
		a->view = ann_get_p32(c, "view");
		a->track = ann_get_p32(c, "track");
		a->parent = ann_get_p32(c, "parent track");
		break;
	case APC_ANN_CAM_JOB:
		a->view = ann_get_p32(c, "view");
		a->job = ann_get_p32(c, "job");
		a->track = ann_get_p32(c, "track");
		a->start = (uint64_t)ann_get_p64(c, "start time");
		a->duration = (uint64_t)ann_get_p64(c, "duration");
		ann_take_color(c, a);
		a->primary_dep = ann_get_p32(c, "primary dependency");
		if (ann_take_deps(d, c, a, ann_get_p32(c, "dependency count")) != APC_OK)
			return APC_ENOMEM;
		break;
	case APC_ANN_CAM_VIEW:
		a->view = ann_get_p32(c, "view");
		break;
	case APC_ANN_JOB_START:
		a->view = ann_get_p32(c, "view");
		a->job = ann_get_p32(c, "job");
		a->track = ann_get_p32(c, "track");
		ann_take_time(c, m, "time");
		ann_take_color(c, a);
		break;
	case APC_ANN_JOB_DEPS:
		a->view = ann_get_p32(c, "view");
		a->job = ann_get_p32(c, "job");
		ann_take_time(c, m, "time");
		a->primary_dep = ann_get_p32(c, "primary dependency");
		return ann_take_deps(d, c, a, ann_get_p32(c, "dependency count"));
	case APC_ANN_JOB_STOP:
		a->view = ann_get_p32(c, "view");
		a->job = ann_get_p32(c, "job");
		ann_take_time(c, m, "time");
		return APC_OK;
	}
	if (c->bad)
		return APC_OK;
	/* Every remaining kind ends with its text. */
	return ann_take_text(d, c, a);
}

static void ann_msg_reset(const struct apc_ann_decoder *d, struct apc_ann_msg *m, uint64_t off)
{
	memset(m, 0, sizeof *m);
	m->version = d->version;
	m->dont_mangle = d->dont_mangle;
	m->offset = off;
	m->ann.tid = d->tid;
	m->ann.pid = d->pid;
	m->ann.version = (uint8_t)d->version;
	m->ann.dont_mangle = d->dont_mangle;
}

static int ann_next_setup(struct apc_ann_decoder *d, struct apc_ann_msg *m, struct apc_err *err)
{
	const uint8_t *p = d->buf + d->pos;
	size_t avail = d->len - d->pos;
	size_t cmp = avail < ANN_MAGIC_LEN ? avail : ANN_MAGIC_LEN;
	uint64_t off = d->base + d->pos;
	int v;

	/* Say "bad magic" as soon as the bytes seen cannot be it. */
	if (memcmp(p, ANN_MAGIC, cmp) != 0 ||
	    (avail > ANN_MAGIC_LEN + 1 && p[ANN_MAGIC_LEN + 1] != '\n')) {
		/* Resync: treat the setup's 20 bytes as the bad message. */
		d->skip = ANN_SETUP_LEN;
		ann_drop_skip(d);
		d->setup_done = 1;
		d->version = 5;
		return apc_err_set(err, APC_EDATA, d->name, (int64_t)off,
				   "bad annotate magic (expected \"ANNOTATE N\\n\")");
	}
	if (avail < ANN_SETUP_LEN)
		return APC_END;
	v = p[ANN_MAGIC_LEN] - '0';
	d->pos += ANN_SETUP_LEN;
	d->setup_done = 1;
	d->tid = (int32_t)apc_le32(p + 11);
	d->pid = (int32_t)apc_le32(p + 15);
	d->dont_mangle = p[19];
	if (v < 3 || v > 5) {
		/* Decode what follows with the newest rules we know. */
		d->version = 5;
		return apc_err_set(err, APC_EDATA, d->name, (int64_t)off,
				   "unsupported annotate protocol version '%c'", p[ANN_MAGIC_LEN]);
	}
	d->version = v;
	ann_msg_reset(d, m, off);
	m->is_setup = 1;
	return APC_OK;
}

/*
 * The next whole message.  An unknown code or a length over the limit is
 * reported before the body arrives, and the declared length is skipped.
 */
int apc_ann_decoder_next(struct apc_ann_decoder *d, struct apc_ann_msg *m, struct apc_err *err)
{
	const uint8_t *p;
	size_t avail;
	uint64_t off;
	uint32_t blen;
	int code, rc;
	struct ann_cur c;

	if (d->skip)
		ann_drop_skip(d);
	if (d->skip || d->pos == d->len)
		return APC_END;
	if (!d->setup_done)
		return ann_next_setup(d, m, err);
	p = d->buf + d->pos;
	avail = d->len - d->pos;
	off = d->base + d->pos;
	if (avail < ANN_HDR_LEN)
		return APC_END;
	code = p[0];
	blen = apc_le32(p + 1);
	if (!ann_code_known(d->version, code) || blen > APC_ANN_BODY_MAX) {
		/* Resync on the declared length, whatever it is. */
		d->pos += ANN_HDR_LEN;
		d->skip = blen;
		ann_drop_skip(d);
		if (blen > APC_ANN_BODY_MAX && ann_code_known(d->version, code))
			return apc_err_set(err, APC_EDATA, d->name, (int64_t)off,
					   "annotate %s message length %" PRIu32 " is over the limit of %u",
					   apc_ann_code_name(code), blen, APC_ANN_BODY_MAX);
		return apc_err_set(err, APC_EDATA, d->name, (int64_t)off,
				   "unknown annotate v%d message code 0x%02x (length %" PRIu32 ")",
				   d->version, code, blen);
	}
	if (avail - ANN_HDR_LEN < blen)
		return APC_END;
	ann_msg_reset(d, m, off);
	m->ann.code = (uint8_t)code;
	c.p = p + ANN_HDR_LEN;
	c.n = blen;
	c.i = 0;
	c.bad = NULL;
	rc = ann_parse_body(d, code, &c, m);
	d->pos += ANN_HDR_LEN + blen;
	if (rc != APC_OK)
		return apc_err_set(err, rc, d->name, (int64_t)off,
				   "out of memory decoding annotate %s message", apc_ann_code_name(code));
	if (c.bad)
		return apc_err_set(err, APC_EDATA, d->name, (int64_t)off,
				   "annotate %s message (length %" PRIu32 "): bad or truncated %s",
				   apc_ann_code_name(code), blen, c.bad);
	return APC_OK;
}

/* ---- dumping ------------------------------------------------------------ */

/* A new field, cleared; NULL when the message has no room left. */
static struct apc_field *ann_f_new(struct apc_msg *m, const char *name, int kind)
{
	struct apc_field *f;

	if (m->nfields >= APC_MSG_MAX_FIELDS)
		return NULL;
	f = &m->f[m->nfields++];
	memset(f, 0, sizeof *f);
	f->name = name;
	f->kind = (uint8_t)kind;
	return f;
}

static void ann_f_int(struct apc_msg *m, const char *name, int64_t v, int kind)
{
	struct apc_field *f = ann_f_new(m, name, kind);

	if (f)
		f->i = v;
}

static void ann_f_str(struct apc_msg *m, const char *name, const void *s, size_t len, int kind)
{
	struct apc_field *f = ann_f_new(m, name, kind);

	if (!f)
		return;
	f->s = s ? s : (const uint8_t *)"";
	f->len = len > UINT32_MAX ? UINT32_MAX : (uint32_t)len;
	f->i = (int64_t)len;
}

static void ann_f_cstr(struct apc_msg *m, const char *name, const char *s)
{
	ann_f_str(m, name, s, s ? strlen(s) : 0, APC_F_STR);
}

static const char *const ann_dep_names[] = {
	"dep0", "dep1", "dep2", "dep3", "dep4", "dep5", "dep6", "dep7",
	"dep8", "dep9", "dep10", "dep11", "dep12", "dep13", "dep14", "dep15",
};
static const char *const ann_act_names[] = {
	"activity0", "activity1", "activity2", "activity3",
	"activity4", "activity5", "activity6", "activity7",
};

/* Dependencies: the count, then as many as fit in the message. */
static void ann_f_deps(struct apc_msg *m, const struct apc_ann *a)
{
	ann_f_int(m, "deps", a->ndeps, APC_F_INT);
	for (uint32_t i = 0; i < a->ndeps && i < 16 && m->nfields < APC_MSG_MAX_FIELDS; i++)
		ann_f_int(m, ann_dep_names[i], a->deps[i], APC_F_INT);
}

static const char *ann_class_str(enum apc_class c)
{
	static const char *const n[] = {"delta", "incident", "absolute", "activity"};
	return (unsigned)c < 4 ? n[c] : "?";
}

static const char *ann_display_str(enum apc_display v)
{
	static const char *const n[] = {"default", "accumulate", "hertz", "maximum", "average", "minimum"};
	return (unsigned)v < 6 ? n[v] : "?";
}

static int32_t ann_modifier(double multiplier)
{
	double m;

	if (multiplier == 0.0)
		return 0;
	m = round(1.0 / multiplier);
	if (!(m >= INT32_MIN && m <= INT32_MAX))
		return 0;
	return (int32_t)m;
}

static void ann_counter_fields(struct apc_msg *m, const struct apc_counter_decl *k)
{
	ann_f_int(m, "key", k->key, APC_F_INT);
	ann_f_cstr(m, "title", k->title);
	ann_f_cstr(m, "name", k->name);
	ann_f_cstr(m, "units", k->units);
	ann_f_cstr(m, "description", k->description);
	ann_f_cstr(m, "class", ann_class_str(k->cls));
	ann_f_cstr(m, "display", ann_display_str(k->display));
	ann_f_int(m, "modifier", ann_modifier(k->multiplier), APC_F_INT);
	ann_f_int(m, "per_cpu", k->per_cpu == APC_YES, APC_F_INT);
	ann_f_int(m, "series", k->series, APC_F_INT);
	ann_f_int(m, "rendering", k->render, APC_F_INT);
	ann_f_int(m, "average_selection", k->average_selection == APC_YES, APC_F_INT);
	ann_f_int(m, "average_cores", k->average_cores == APC_YES, APC_F_INT);
	ann_f_int(m, "percentage", k->percentage == APC_YES, APC_F_INT);
	ann_f_int(m, "cores", k->cores, APC_F_INT);
	ann_f_int(m, "color", k->color, APC_F_HEX);
	ann_f_int(m, "activities", (int64_t)k->nactivities, APC_F_INT);
	for (size_t i = 0; i < k->nactivities && i < 8 && m->nfields < APC_MSG_MAX_FIELDS; i++)
		ann_f_cstr(m, ann_act_names[i], k->activities[i].name);
}

/* Named fields; STR/BYTES fields point into `am`, valid as long as it is. */
void apc_ann_to_msg(const struct apc_ann_msg *am, struct apc_msg *m)
{
	const struct apc_ann *a = &am->ann;
	static const char *const names[17] = {
		"annotate_unknown", "annotate_str", "annotate_color_str", "annotate_channel",
		"annotate_group", "annotate_visual", "annotate_marker", "annotate_color_marker",
		"annotate_counter", "annotate_counter_value", "annotate_activity_switch",
		"annotate_cam_track", "annotate_cam_job", "annotate_cam_view",
		"annotate_job_start", "annotate_job_deps", "annotate_job_stop",
	};

	memset(m, 0, sizeof *m);
	m->frame_type = APC_FRAME_EXTERNAL;
	m->core = -1;
	m->offset = am->offset;
	if (am->is_setup) {
		m->name = "annotate_setup";
		m->code = -1;
		ann_f_int(m, "version", am->version, APC_F_INT);
		ann_f_int(m, "tid", a->tid, APC_F_INT);
		ann_f_int(m, "pid", a->pid, APC_F_INT);
		ann_f_int(m, "dont_mangle", am->dont_mangle, APC_F_INT);
		return;
	}
	m->code = a->code;
	m->name = names[a->code <= 16 ? a->code : 0];
	m->has_ts = am->has_ts;
	m->ts = (int64_t)am->ts;
	switch (a->code) {
	case APC_ANN_STR:
		ann_f_int(m, "channel", a->channel, APC_F_INT);
		break;
	case APC_ANN_COLOR_STR:
		ann_f_int(m, "channel", a->channel, APC_F_INT);
		ann_f_int(m, "color", a->color, APC_F_HEX);
		break;
	case APC_ANN_CHANNEL:
		ann_f_int(m, "channel", a->channel, APC_F_INT);
		ann_f_int(m, "group", a->group, APC_F_INT);
		break;
	case APC_ANN_GROUP:
		ann_f_int(m, "group", a->group, APC_F_INT);
		break;
	case APC_ANN_VISUAL:
		ann_f_str(m, "text", a->text, a->text_len, APC_F_STR);
		ann_f_str(m, "data", a->data, a->data_len, APC_F_BYTES);
		return;
	case APC_ANN_COLOR_MARKER:
		ann_f_int(m, "color", a->color, APC_F_HEX);
		break;
	case APC_ANN_COUNTER:
		if (a->counter)
			ann_counter_fields(m, a->counter);
		return;
	case APC_ANN_COUNTER_VALUE:
		ann_f_int(m, "core", a->core, APC_F_INT);
		ann_f_int(m, "key", a->key, APC_F_INT);
		ann_f_int(m, "value", a->value, APC_F_INT);
		return;
	case APC_ANN_ACTIVITY_SWITCH:
		ann_f_int(m, "core", a->core, APC_F_INT);
		ann_f_int(m, "key", a->key, APC_F_INT);
		ann_f_int(m, "activity", a->activity, APC_F_INT);
		ann_f_int(m, "tid", a->act_tid, APC_F_INT);
		return;
	case APC_ANN_CAM_TRACK:
		ann_f_int(m, "view", a->view, APC_F_INT);
		ann_f_int(m, "track", a->track, APC_F_INT);
		ann_f_int(m, "parent", a->parent, APC_F_INT);
		break;
	case APC_ANN_CAM_JOB:
		ann_f_int(m, "view", a->view, APC_F_INT);
		ann_f_int(m, "job", a->job, APC_F_INT);
		ann_f_int(m, "track", a->track, APC_F_INT);
		ann_f_int(m, "start", (int64_t)a->start, APC_F_INT);
		ann_f_int(m, "duration", (int64_t)a->duration, APC_F_INT);
		ann_f_int(m, "color", a->color, APC_F_HEX);
		ann_f_str(m, "text", a->text, a->text_len, APC_F_STR);
		ann_f_int(m, "primary_dep", a->primary_dep, APC_F_INT);
		ann_f_deps(m, a);
		return;
	case APC_ANN_CAM_VIEW:
		ann_f_int(m, "view", a->view, APC_F_INT);
		break;
	case APC_ANN_JOB_START:
		ann_f_int(m, "view", a->view, APC_F_INT);
		ann_f_int(m, "job", a->job, APC_F_INT);
		ann_f_int(m, "track", a->track, APC_F_INT);
		ann_f_int(m, "color", a->color, APC_F_HEX);
		break;
	case APC_ANN_JOB_DEPS:
		ann_f_int(m, "view", a->view, APC_F_INT);
		ann_f_int(m, "job", a->job, APC_F_INT);
		ann_f_int(m, "primary_dep", a->primary_dep, APC_F_INT);
		ann_f_deps(m, a);
		return;
	case APC_ANN_JOB_STOP:
		ann_f_int(m, "view", a->view, APC_F_INT);
		ann_f_int(m, "job", a->job, APC_F_INT);
		return;
	}
	ann_f_str(m, "text", a->text, a->text_len, APC_F_STR);
}

/* ---- encoding ----------------------------------------------------------- */

/*
 * Packed integers of a message body.  Unless APC_NO_SIMD forces the
 * reference, apc_pack64_wide() writes them with one 8-byte store instead
 * of a byte loop (same bytes, an int32 packs as its int64 value), so
 * each reserves the 10 bytes that store may touch.
 */
static int ann_put_p64(struct apc_buf *b, int64_t v)
{
	static int fast = -1;

	if (apc_buf_reserve(b, APC_PACKED64_MAX) != APC_OK)
		return APC_ENOMEM;
	if (fast < 0)
		fast = !apc_cpu_scalar_forced();
	if (fast)
		b->len += apc_pack64_wide(b->p + b->len, v);
	else
		apc_buf_put_packed64(b, v);
	return APC_OK;
}

static int ann_put_p32(struct apc_buf *b, int32_t v)
{
	return ann_put_p64(b, v);
}

static int ann_put_color(struct apc_buf *b, uint32_t c)
{
	uint8_t q[4] = {(uint8_t)(c >> 24), (uint8_t)(c >> 16), (uint8_t)(c >> 8), (uint8_t)c};
	return apc_buf_put_bytes(b, q, 4);
}

/* A string and its NUL (NULL is the empty string). */
static int ann_put_cstr(struct apc_buf *b, const char *s)
{
	if (s && apc_buf_put_bytes(b, s, strlen(s)) != APC_OK)
		return APC_ENOMEM;
	return apc_buf_put_bytes(b, "", 1);
}

static int ann_put_text(struct apc_buf *b, const struct apc_ann *a)
{
	return a->text ? apc_buf_put_bytes(b, a->text, a->text_len) : APC_OK;
}

static int ann_put_deps(struct apc_buf *b, const struct apc_ann *a)
{
	int rc = ann_put_p32(b, a->primary_dep);

	rc |= ann_put_p32(b, (int32_t)a->ndeps);
	for (uint32_t i = 0; i < a->ndeps && a->deps; i++)
		rc |= ann_put_p32(b, a->deps[i]);
	return rc ? APC_ENOMEM : APC_OK;
}

static int ann_put_counter(struct apc_buf *b, const struct apc_counter_decl *k)
{
	int rc = 0;
	int32_t v[12] = {
		k->key, k->per_cpu == APC_YES, ann_class_to_wire(k->cls),
		ann_display_to_wire(k->display), ann_modifier(k->multiplier),
		(int32_t)k->series, (int32_t)k->render, k->average_selection == APC_YES,
		k->average_cores == APC_YES, k->percentage == APC_YES,
		(int32_t)k->nactivities, (int32_t)k->cores,
	};

	for (int i = 0; i < 12; i++)
		rc |= ann_put_p32(b, v[i]);
	rc |= ann_put_color(b, k->has_color ? k->color : 0);
	for (size_t i = 0; i < k->nactivities; i++) {
		rc |= ann_put_cstr(b, k->activities[i].name);
		rc |= ann_put_color(b, k->activities[i].has_color ? k->activities[i].color : 0);
	}
	rc |= ann_put_cstr(b, k->title);
	rc |= ann_put_cstr(b, k->name);
	rc |= ann_put_cstr(b, k->units);
	if (k->description)
		rc |= apc_buf_put_bytes(b, k->description, strlen(k->description));
	return rc ? APC_ENOMEM : APC_OK;
}

int apc_ann_encode_setup(struct apc_buf *b, int version, int32_t tid, int32_t pid,
			 uint8_t dont_mangle)
{
	uint8_t s[ANN_SETUP_LEN];
	uint32_t t = (uint32_t)tid, p = (uint32_t)pid;

	if (version < 3 || version > 5)
		return APC_EDATA;
	memcpy(s, "ANNOTATE 3\n", 11);
	s[ANN_MAGIC_LEN] = (uint8_t)('0' + version);
	for (int i = 0; i < 4; i++) {
		s[11 + i] = (uint8_t)(t >> (8 * i));
		s[15 + i] = (uint8_t)(p >> (8 * i));
	}
	s[19] = dont_mangle;
	return apc_buf_put_bytes(b, s, sizeof s);
}

static int ann_encode_body(struct apc_buf *b, int version, uint64_t ts, const struct apc_ann *a)
{
	int rc = 0;
	int code = a->code;

	if (ann_time_first(code))
		rc |= ann_put_p64(b, (int64_t)ts);
	switch (code) {
	case APC_ANN_STR:
		rc |= ann_put_p32(b, a->channel);
		break;
	case APC_ANN_COLOR_STR:
		rc |= ann_put_p32(b, a->channel);
		rc |= ann_put_color(b, a->color);
		break;
	case APC_ANN_CHANNEL:
		rc |= ann_put_p32(b, a->channel);
		rc |= ann_put_p32(b, a->group);
		break;
	case APC_ANN_GROUP:
		rc |= ann_put_p32(b, a->group);
		break;
	case APC_ANN_VISUAL:
		rc |= ann_put_text(b, a);
		rc |= apc_buf_put_bytes(b, "", 1);
		if (a->data)
			rc |= apc_buf_put_bytes(b, a->data, a->data_len);
		return rc ? APC_ENOMEM : APC_OK;
	case APC_ANN_MARKER:
		break;
	case APC_ANN_COLOR_MARKER:
		rc |= ann_put_color(b, a->color);
		break;
	case APC_ANN_COUNTER:
		if (!a->counter)
			return APC_EDATA;
		return ann_put_counter(b, a->counter);
	case APC_ANN_COUNTER_VALUE:
		rc |= ann_put_p32(b, a->core);
		rc |= ann_put_p32(b, a->key);
		/* v3/v4: a uint32 packed as int32 (the inverse of the decoder);
		 * a value outside it would read back as another number. */
		if (version < 5 && (a->value < 0 || a->value > (int64_t)UINT32_MAX))
			return APC_EDATA;
		if (version < 5)
			rc |= ann_put_p32(b, (int32_t)(uint32_t)a->value);
		else
			rc |= ann_put_p64(b, a->value);
		return rc ? APC_ENOMEM : APC_OK;
	case APC_ANN_ACTIVITY_SWITCH:
		rc |= ann_put_p32(b, a->core);
		rc |= ann_put_p32(b, a->key);
		rc |= ann_put_p32(b, a->activity);
		rc |= ann_put_p32(b, a->act_tid);
		return rc ? APC_ENOMEM : APC_OK;
	case APC_ANN_CAM_TRACK:
		rc |= ann_put_p32(b, a->view);
		rc |= ann_put_p32(b, a->track);
		rc |= ann_put_p32(b, a->parent);
		break;
	case APC_ANN_CAM_JOB:
		rc |= ann_put_p32(b, a->view);
		rc |= ann_put_p32(b, a->job);
		rc |= ann_put_p32(b, a->track);
		rc |= ann_put_p64(b, (int64_t)a->start);
		rc |= ann_put_p64(b, (int64_t)a->duration);
		rc |= ann_put_color(b, a->color);
		rc |= ann_put_deps(b, a);
		break;
	case APC_ANN_CAM_VIEW:
		rc |= ann_put_p32(b, a->view);
		break;
	case APC_ANN_JOB_START:
		rc |= ann_put_p32(b, a->view);
		rc |= ann_put_p32(b, a->job);
		rc |= ann_put_p32(b, a->track);
		rc |= ann_put_p64(b, (int64_t)ts);
		rc |= ann_put_color(b, a->color);
		break;
	case APC_ANN_JOB_DEPS:
		rc |= ann_put_p32(b, a->view);
		rc |= ann_put_p32(b, a->job);
		rc |= ann_put_p64(b, (int64_t)ts);
		rc |= ann_put_deps(b, a);
		return rc ? APC_ENOMEM : APC_OK;
	case APC_ANN_JOB_STOP:
		rc |= ann_put_p32(b, a->view);
		rc |= ann_put_p32(b, a->job);
		rc |= ann_put_p64(b, (int64_t)ts);
		return rc ? APC_ENOMEM : APC_OK;
	}
	rc |= ann_put_text(b, a);
	return rc ? APC_ENOMEM : APC_OK;
}

/*
 * One message, byte for byte as gator's client writes it.  APC_EDATA for a
 * code the version lacks, a counter without its declaration, or a body
 * over APC_ANN_BODY_MAX; nothing is appended then.
 */
int apc_ann_encode(struct apc_buf *b, int version, uint64_t ts, const struct apc_ann *a)
{
	size_t at = b->len, blen;
	uint8_t hdr[ANN_HDR_LEN] = {a->code, 0, 0, 0, 0};
	int rc;

	if (version < 3 || version > 5 || !ann_code_known(version, a->code))
		return APC_EDATA;
	if (apc_buf_put_bytes(b, hdr, sizeof hdr) != APC_OK)
		return APC_ENOMEM;
	rc = ann_encode_body(b, version, ts, a);
	blen = b->len - at - ANN_HDR_LEN;
	if (rc == APC_OK && blen > APC_ANN_BODY_MAX)
		rc = APC_EDATA;
	if (rc != APC_OK) {
		b->len = at; /* leave no half message behind */
		return rc;
	}
	for (int i = 0; i < 4; i++)
		b->p[at + 1 + i] = (uint8_t)(blen >> (8 * i));
	return APC_OK;
}
