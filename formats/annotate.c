/*
 * annotate.c - reader for recorded Annotate streams: one or more files,
 * each the bytes one client connection (one thread) wrote to gatord's
 * annotation socket.  Every message becomes an APC_EV_ANNOTATION event;
 * the streams are merged by timestamp.  Messages without a time of their
 * own (counter declarations, CAM tracks, jobs, views) take the time of
 * the previous message of their stream, so they stay in stream order.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotate.h"
#include "format.h"

#define ANNR_CHUNK 65536
#define ANNR_SCOUT_MAX ((size_t)4 << 20) /* bytes read ahead for a first time */

struct annr_src {
	struct apc_stream *s;        /* owned by the input */
	struct apc_ann_decoder *d;
	struct apc_ann_msg head;     /* the next message to emit, if have_head */
	int have_head;
	int done;
	uint64_t last_ts;            /* time of the last message emitted */
	int linked;                  /* Link for this connection's thread written */
	int any;                     /* a message after the setup was read */
};

struct annr {
	size_t n;
	struct annr_src *src;
	uint8_t *chunk;
	uint64_t kinds[APC_ANN_JOB_STOP + 1]; /* messages read per code; [0] setups */
};

/*
 * What the stream's first bytes are: 2 a setup ("ANNOTATE N\n", N 3..5),
 * 1 a setup cut short (the whole stream is fewer bytes, all of them the
 * setup's: damage in that stream), 0 something else (or nothing).
 */
static int annr_setup_kind(struct apc_stream *s)
{
	static const char magic[] = "ANNOTATE 5\n";
	const uint8_t *p;
	struct apc_err err;
	ssize_t n;

	apc_err_clear(&err);
	n = apc_stream_peek(s, &p, 11, &err);
	if (n <= 0)
		return 0;
	for (ssize_t i = 0; i < n && i < 11; i++)
		if (i == 9 ? p[i] < '3' || p[i] > '5' : p[i] != (uint8_t)magic[i])
			return 0;
	return n >= 11 ? 2 : 1;
}

static int annr_bid(struct apc_input *in)
{
	struct apc_stream *s;

	if (apc_input_is_tree(in) || !(s = apc_input_stream(in)))
		return 0;
	return annr_setup_kind(s) == 2 ? 100 : 0;
}

/* Record damage in stream `src`: the first failure is the run's error,
 * any later one (another stream's) a line of its own in the report. */
static void annr_damage(struct apc_reader *r, struct annr_src *src, const struct apc_err *e)
{
	src->done = 1;
	src->have_head = 0;
	if (!r->damaged) {
		r->err = *e;
		r->damaged = 1;
	} else {
		apc_model_more_damage(r->model, e);
	}
}

static void annr_progress(struct apc_reader *r)
{
	struct annr *a = r->priv;
	uint64_t done = 0, in = 0;

	for (size_t i = 0; i < a->n; i++) {
		int64_t o = apc_stream_raw_offset(a->src[i].s);
		done += o > 0 ? (uint64_t)o : 0;
		in += apc_stream_offset(a->src[i].s);
	}
	r->progress_done = done; /* against the files' sizes */
	r->bytes_in = in;
}

/*
 * Make src->head the stream's next message (setups are taken in
 * passing).  Reads more bytes as the decoder needs them.  Returns APC_OK
 * (head set, or the stream ended or was damaged: see src->done) or
 * APC_EIO/APC_ENOMEM, which end the whole read.
 */
static int annr_fetch(struct apc_reader *r, struct annr_src *src)
{
	struct annr *a = r->priv;
	struct apc_err e;
	int rc;

	src->have_head = 0;
	while (!src->done) {
		ssize_t got;

		apc_err_clear(&e);
		rc = apc_ann_decoder_next(src->d, &src->head, &e);
		if (rc == APC_OK) {
			r->model->records_read++;
			a->kinds[src->head.is_setup ? 0 : src->head.ann.code <= APC_ANN_JOB_STOP
							      ? src->head.ann.code : 0]++;
			if (src->head.is_setup)
				continue;
			src->have_head = 1;
			src->any = 1;
			return APC_OK;
		}
		if (rc == APC_EDATA) {
			/* Stop this stream at its first bad message; the others go on. */
			annr_damage(r, src, &e);
			return APC_OK;
		}
		if (rc != APC_END) {
			r->err = e;
			return rc;
		}
		got = apc_stream_read(src->s, a->chunk, ANNR_CHUNK, &e);
		if (got < 0) {
			r->err = e;
			return e.status < 0 ? e.status : APC_EIO;
		}
		if (got == 0) {
			size_t pend = apc_ann_decoder_pending(src->d);

			src->done = 1;
			if (pend) {
				apc_err_set(&e, APC_EDATA, apc_stream_name(src->s),
					    (int64_t)(apc_stream_offset(src->s) - pend),
					    "annotate stream ends inside a message (%zu bytes pending; truncated?)",
					    pend);
				annr_damage(r, src, &e);
			} else if (!src->any) {
				apc_model_unmapped(r->model,
						   "annotate connections that sent nothing after their setup", 1);
			}
			return APC_OK;
		}
		rc = apc_ann_decoder_feed(src->d, a->chunk, (size_t)got, &e);
		if (rc == APC_EDATA) {
			annr_damage(r, src, &e);
			return APC_OK;
		}
		if (rc != APC_OK) {
			r->err = e;
			return rc;
		}
	}
	return APC_OK;
}

/*
 * The stream's earliest timestamp, read ahead: clients often declare
 * counters, tracks and views (messages with no time) before anything
 * else, and a counter value may carry a time of its own earlier than the
 * messages before it (gator_annotate_counter_time_value()).  A throwaway
 * decoder looks through the stream, at most ANNR_SCOUT_MAX bytes (what
 * lies further is clamped to the start when it goes before it, and
 * counted: see annr_next()); the bytes read are then fed to the stream's
 * own decoder, so nothing is read twice and damage is reported by the
 * real pass.  *have is 0 when no time turned up.
 */
static int annr_scout(struct apc_reader *r, struct annr_src *src, uint64_t *ts, int *have)
{
	struct annr *a = r->priv;
	struct apc_ann_decoder *d = apc_ann_decoder_new(apc_stream_name(src->s));
	struct apc_buf raw = {0};
	struct apc_ann_msg m;
	struct apc_err e;
	int rc = APC_OK;

	*have = 0;
	if (!d)
		return apc_err_set(&r->err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
	while (raw.len < ANNR_SCOUT_MAX) {
		ssize_t got;
		int dr;

		apc_err_clear(&e);
		dr = apc_ann_decoder_next(d, &m, &e);
		if (dr == APC_OK) {
			if (m.has_ts && (!*have || m.ts < *ts)) {
				*ts = m.ts;
				*have = 1;
			}
			continue;
		}
		if (dr != APC_END)
			break;
		got = apc_stream_read(src->s, a->chunk, ANNR_CHUNK, &e);
		if (got < 0) {
			r->err = e;
			rc = e.status < 0 ? e.status : APC_EIO;
			break;
		}
		if (got == 0)
			break;
		if (apc_buf_put_bytes(&raw, a->chunk, (size_t)got) != APC_OK) {
			rc = apc_err_set(&r->err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
			break;
		}
		if (apc_ann_decoder_feed(d, a->chunk, (size_t)got, &e) != APC_OK)
			break;
	}
	apc_ann_decoder_free(d);
	if (rc == APC_OK && raw.len) {
		apc_err_clear(&e);
		int fr = apc_ann_decoder_feed(src->d, raw.p, raw.len, &e);
		if (fr == APC_EDATA) {
			annr_damage(r, src, &e);
		} else if (fr != APC_OK) {
			r->err = e;
			rc = fr;
		}
	}
	free(raw.p);
	return rc;
}

static void annr_close(struct apc_reader *r)
{
	struct annr *a = r->priv;

	if (!a)
		return;
	for (size_t i = 0; i < a->n; i++)
		apc_ann_decoder_free(a->src[i].d);
	free(a->src);
	free(a->chunk);
	free(a);
	r->priv = NULL;
}

static int annr_open(struct apc_reader *r)
{
	struct apc_meta *meta = &r->model->meta;
	struct annr *a;
	uint64_t first = 0, total = 0;
	int have_first = 0, rc;

	if (r->ninputs == 0)
		return apc_err_set(&r->err, APC_EIO, NULL, APC_NO_OFFSET, "no annotate stream given");
	a = calloc(1, sizeof *a);
	if (!a)
		return apc_err_set(&r->err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
	r->priv = a;
	a->src = calloc(r->ninputs, sizeof *a->src);
	a->chunk = malloc(ANNR_CHUNK);
	if (!a->src || !a->chunk)
		return apc_err_set(&r->err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
	for (size_t i = 0; i < r->ninputs; i++) {
		struct annr_src *src = &a->src[a->n];
		int64_t sz;

		src->s = apc_input_stream(r->inputs[i]);
		if (!src->s)
			return apc_err_set(&r->err, APC_EIO, apc_input_path(r->inputs[i]), APC_NO_OFFSET,
					   "an annotate stream is a single file, not a %s",
					   apc_input_kind(r->inputs[i]));
		/* Every file is a connection: another format's file (the
		 * format was told by another input) is refused, not read as
		 * a damaged stream; one cut inside its setup is that damage. */
		if (!annr_setup_kind(src->s))
			return apc_err_set(&r->err, APC_EIO, apc_input_path(r->inputs[i]), APC_NO_OFFSET,
					   "not an annotate stream (it does not begin with "
					   "\"ANNOTATE N\\n\"): convert it on its own");
		src->d = apc_ann_decoder_new(apc_stream_name(src->s));
		if (!src->d)
			return apc_err_set(&r->err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
		a->n++;
		sz = apc_stream_raw_size(src->s);
		total += sz > 0 ? (uint64_t)sz : 0;
	}
	r->progress_total = total;
	if (apc_strset(&meta->target_name, "annotate") != APC_OK ||
	    apc_strset(&meta->source_format, "annotate") != APC_OK ||
	    apc_model_set_cores(r->model, 1) != APC_OK)
		return apc_err_set(&r->err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
	/* The earliest timestamp of any stream is the capture start; then
	 * prime every stream. */
	for (size_t i = 0; i < a->n; i++) {
		struct annr_src *src = &a->src[i];
		uint64_t t = 0;
		int have = 0;

		if ((rc = annr_scout(r, src, &t, &have)) < 0)
			return rc;
		if (have && (!have_first || t < first)) {
			first = t;
			have_first = 1;
		}
		if ((rc = annr_fetch(r, src)) < 0)
			return rc;
	}
	meta->monotonic_delta = have_first ? first : 0;
	for (size_t i = 0; i < a->n; i++)
		a->src[i].last_ts = meta->monotonic_delta;
	annr_progress(r);
	return APC_OK;
}

static uint64_t annr_head_ts(const struct annr_src *src)
{
	return src->head.has_ts ? src->head.ts : src->last_ts;
}

static int annr_next(struct apc_reader *r, struct apc_batch *b)
{
	struct annr *a = r->priv;
	int rc;

	while (!apc_batch_full(b)) {
		struct annr_src *best = NULL;
		struct apc_ann *copy;
		struct apc_event *ev;
		uint64_t ts;

		for (size_t i = 0; i < a->n; i++)
			if (a->src[i].have_head &&
			    (!best || annr_head_ts(&a->src[i]) < annr_head_ts(best)))
				best = &a->src[i];
		if (!best)
			break;
		ts = annr_head_ts(best);
		if (ts < r->model->meta.monotonic_delta) {
			/* Before the start, past what annr_scout() looked at:
			 * a capture's times do not go below its start. */
			apc_model_unmapped(r->model,
					   "annotate times before the capture start (clamped to it)", 1);
			ts = r->model->meta.monotonic_delta;
		}
		if (!best->linked) {
			/*
			 * The connection's thread, as an Activity Link: true of the
			 * recording, it lets Streamline place the thread, and it
			 * gives the capture the Activity message a capture needs.
			 * Its cookie is -1, an image not known: 0 would say the
			 * thread runs the kernel, and a client is a user process
			 * whose image the stream does not name (gatord links such
			 * a thread with -1 too).
			 */
			ev = apc_batch_add(b, APC_EV_LINK, ts, APC_NO_CORE);
			if (!ev)
				return apc_err_set(&r->err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
			ev->u.link.cookie = -1;
			ev->u.link.pid = best->head.ann.pid;
			ev->u.link.tid = best->head.ann.tid;
			best->linked = 1;
		}
		copy = apc_batch_copy_ann(b, &best->head.ann);
		ev = copy ? apc_batch_add(b, APC_EV_ANNOTATION, ts, APC_NO_CORE) : NULL;
		if (!ev)
			return apc_err_set(&r->err, APC_ENOMEM, NULL, APC_NO_OFFSET,
					   "out of memory copying an annotation");
		ev->u.ann = copy;
		if (!best->head.has_ts)
			ev->flags |= APC_EVF_NO_TS;
		best->last_ts = ts;
		rc = annr_fetch(r, best);
		if (rc < 0)
			return rc;
	}
	annr_progress(r);
	if (b->n)
		return APC_OK;
	/* Nothing left: report the first damage now that everything else is out. */
	if (r->damaged)
		return r->err.status < 0 ? r->err.status : APC_EDATA;
	return APC_END;
}

/* --stats=json and -v: messages read per code and what each became. */
static void annr_report(struct apc_reader *r)
{
	struct annr *a = r->priv;
	char what[64];

	if (!a)
		return;
	if (a->kinds[0])
		apc_model_count_kind(r->model, "annotate setup",
				     "External connection (and its thread's link)", a->kinds[0]);
	for (int c = 1; c <= APC_ANN_JOB_STOP; c++) {
		if (!a->kinds[c])
			continue;
		snprintf(what, sizeof what, "annotate %s", apc_ann_code_name(c));
		apc_model_count_kind(r->model, what, "annotation (External frame)", a->kinds[c]);
	}
}

const struct apc_format apc_format_annotate = {
	.name = "annotate",
	.description = "recorded Annotate protocol streams (v3, v4, v5), one file per client connection",
	.reads = "file(s)",
	.many_inputs = 1,
	.bid = annr_bid,
	.open = annr_open,
	.next = annr_next,
	.report = annr_report,
	.close = annr_close,
};
