/*
 * pipeline.c - the conversion driver: inputs -> reader -> window -> writer.
 *
 * Readers deliver events in time order per core; the writer keeps that
 * order per core across frame types.  This file only wires them
 * together, applies --begin/--end, and keeps the accounting that the
 * summary line and --stats=json report.
 */
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "pipeline.h"
#include "reorder.h"
#include "util.h"

void apc_pipeline_interrupt(void)
{
	apc_interrupt();
}

/* Strip a trailing '/' and the directory part. */
static const char *base_name(const char *path, char *tmp, size_t len)
{
	size_t n;
	const char *slash;

	snprintf(tmp, len, "%s", path);
	n = strlen(tmp);
	while (n > 1 && tmp[n - 1] == '/')
		tmp[--n] = '\0';
	slash = strrchr(tmp, '/');
	return slash ? slash + 1 : tmp;
}

void apc_default_output(const char *input, char *out, size_t len)
{
	char tmp[4096];
	const char *b;
	char *dot;
	size_t k;

	if (strcmp(input, "-") == 0) {
		snprintf(out, len, "stdin.apc");
		return;
	}
	b = base_name(input, tmp, sizeof tmp);
	if (!strcmp(b, ".") || !strcmp(b, "..") || !strcmp(b, "/")) {
		/* "apcconv ." in a trace's folder: name it after the folder */
		char *real = realpath(input, NULL);
		b = real ? base_name(real, tmp, sizeof tmp) : "/";
		free(real);
		if (!strcmp(b, "/"))
			b = "capture";
	}
	snprintf(out, len, "%s", b);
	/* Peel archive/compression suffixes, then one format extension. */
	while ((k = apc_wrapper_suffix(out, strlen(out))) && strlen(out) > k)
		out[strlen(out) - k] = '\0';
	dot = strrchr(out, '.');
	if (dot && dot != out)
		*dot = '\0';
	if (strlen(out) + 5 < len)
		strcat(out, ".apc");
}

/* Progress: the reader's own figures, else the main stream's.  Read on
 * the reader's thread (the stream is its own), reported on the main one. */
static void progress_figures(struct apc_reader *r, uint64_t *done, uint64_t *total)
{
	*done = r->progress_done;
	*total = r->progress_total;
	if (!*total && r->ninputs == 1 && !apc_input_is_tree(r->inputs[0])) {
		struct apc_stream *s = apc_input_stream(r->inputs[0]);
		int64_t d = s ? apc_stream_raw_offset(s) : -1, t = s ? apc_stream_raw_size(s) : -1;
		if (d >= 0)
			*done = (uint64_t)d;
		if (t > 0)
			*total = (uint64_t)t;
	}
}

/* Bytes in: what the reader took in after decompression, as the readers
 * that count for themselves (Barman, LTT, TPTP binary, APC) report it;
 * the progress line alone goes by the compressed file. */
static uint64_t input_bytes(struct apc_reader *r)
{
	uint64_t sum = 0;

	if (r->bytes_in)
		return r->bytes_in;
	if (r->progress_done)
		return r->progress_done;
	for (size_t i = 0; i < r->ninputs; i++) {
		struct apc_stream *s = apc_input_is_tree(r->inputs[i]) ? NULL : apc_input_stream(r->inputs[i]);
		if (s)
			sum += apc_stream_offset(s);
	}
	return sum;
}

/*
 * What a batch adds to the accounting when nothing is cut: its time
 * range and its events per type.  tally_batch() touches every event
 * once more, so it runs on whichever thread has time to spare: the
 * read-ahead thread while it finds the writing thread behind (Barman:
 * writing is the heavier half), else the writing thread (TPTP, whose
 * reader is the heavier half; LTT goes both ways).  The figures are the
 * same wherever it runs.
 */
struct batch_tally {
	int have;                   /* a timed event: lo, hi are set */
	uint64_t lo, hi;
	uint64_t nread;
	uint64_t count[APC_EV_TYPE_COUNT];
};

static void tally_batch(const struct apc_batch *b, struct batch_tally *t)
{
	uint64_t lo = UINT64_MAX, hi = 0, nread = 0;
	int have = 0;

	memset(t->count, 0, sizeof t->count);
	for (size_t i = 0; i < b->n; i++) {
		const struct apc_event *e = &b->ev[i];
		uint64_t many = 1;
		if (!(e->flags & APC_EVF_NO_TS)) {
			lo = e->ts < lo ? e->ts : lo;
			hi = e->ts > hi ? e->ts : hi;
			have = 1;
		}
		if (e->type == APC_EV_COUNTERS)
			t->count[APC_EV_COUNTER] += many = e->u.counters.n;
		else if (e->type < APC_EV_TYPE_COUNT)
			t->count[e->type]++;
		nread += many;
	}
	/* A CAM job carries its own start and duration (a TPTP method
	 * call, an annotation client's job): the span is theirs too, as
	 * apcdump --summary's is, whether the event has a time (the TPTP
	 * reader puts it at the job's end) or has none (read back from a
	 * capture: it goes where it is).  Looked for only in batches that
	 * have some: tested on every event, it cost Barman 0.45 %. */
	for (size_t i = 0; b->jobs && i < b->n; i++) {
		const struct apc_event *e = &b->ev[i];
		if (e->type == APC_EV_ANNOTATION && e->u.ann && e->u.ann->code == APC_ANN_CAM_JOB) {
			const struct apc_ann *a = e->u.ann;
			uint64_t end = a->duration > UINT64_MAX - a->start ? UINT64_MAX
									   : a->start + a->duration;
			lo = a->start < lo ? a->start : lo;
			hi = end > hi ? end : hi;
			have = 1;
		}
	}
	t->have = have;
	t->lo = lo;
	t->hi = hi;
	t->nread = nread;
}

/* Add a tally to the result, once per batch: the model's per-type
 * counts share a cache line with the records_read that the reader, on
 * its own thread, counts up for every record, so counting into them
 * event by event made the line bounce between the cores. */
static void tally_apply(struct apc_conv_result *res, const struct batch_tally *t)
{
	for (int k = 0; k < APC_EV_TYPE_COUNT; k++)
		res->model.ev_count[k] += t->count[k];
	res->model.events_read += t->nread;
	if (!t->have)
		return;
	if (!res->have_ts || t->lo < res->first_ts)
		res->first_ts = t->lo;
	if (!res->have_ts || t->hi > res->last_ts)
		res->last_ts = t->hi;
	res->have_ts = 1;
}

/*
 * Apply --begin/--end (times in the capture: from `zero`, the model time
 * the writer writes as 0, so the times apcdump lists and Streamline
 * shows) in place,
 * and keep the accounting.  Events without a time of their own (names,
 * declarations) always pass: dropping them would orphan the events that
 * refer to them.  `pre` is the batch's tally when the read-ahead thread
 * made it (only when nothing is cut), else NULL.
 */

/* Names and declarations stay whatever the time window (--begin/--end):
 * what is kept refers to them (a thread's name and link, an image's
 * cookie, an annotation channel's or counter's declaration). */
static int window_keeps(const struct apc_event *e)
{
	switch (e->type) {
	case APC_EV_THREAD_NAME: case APC_EV_COOKIE_NAME: case APC_EV_LINK: case APC_EV_PROC:
		return 1;
	case APC_EV_ANNOTATION:
		if (!e->u.ann)
			return 0;
		switch (e->u.ann->code) {
		case APC_ANN_CHANNEL: case APC_ANN_GROUP: case APC_ANN_COUNTER: case APC_ANN_CAM_TRACK:
		case APC_ANN_CAM_VIEW:
			return 1;
		default:
			return 0;
		}
	default:
		return 0;
	}
}

/* Is model time `when` inside --begin/--end? */
static int window_has(const struct apc_conv_opts *o, uint64_t zero, uint64_t when)
{
	uint64_t rel = when >= zero ? when - zero : 0;

	return !((o->have_begin && rel < o->begin_ns) || (o->have_end && rel >= o->end_ns));
}

struct perf_window {
	const struct apc_conv_opts *o;
	uint64_t zero;
};

/* A perf record's time is CLOCK_MONOTONIC_RAW; the Summary's
 * monotonic_delta is the capture's zero: a model time as it is. */
static int perf_keep(void *ctx, uint64_t t)
{
	const struct perf_window *pw = ctx;

	return window_has(pw->o, pw->zero, t);
}

/*
 * Perf frames carried whole (gatord 6.8 perf mode): learn the events
 * from a Proc frame's perf_attr and perf_keys; read a perf data frame's
 * records, for their times (the span) and, with --begin/--end, to keep
 * only those in the window (rewritten in place).  0 when e is to be
 * dropped (none of its records is left), else 1; -1 out of memory.
 */
static int window_perf(const struct apc_conv_opts *o, struct apc_conv_result *res,
		       struct apc_event *e, uint64_t zero)
{
	uint8_t *bytes = (uint8_t *)(uintptr_t)e->u.raw.bytes; /* the batch's own copy */

	if (e->u.raw.frame_type == APC_FRAME_PROC) {
		struct apc_frame f = {0, 0, e->u.raw.len, bytes, APC_FRAME_PROC, e->core, 0};
		struct apc_msg_iter it;
		struct apc_msg m;
		struct apc_err err;
		apc_err_clear(&err);
		apc_msg_iter_init(&it, &f, 3);
		while (apc_msg_next(&it, &m, &err) == APC_OK)
			if (apc_perf_learn(&res->perf, &m) < 0)
				return -1;
		return 1;
	}
	if (e->u.raw.frame_type != APC_FRAME_PERF_DATA)
		return 1;
	struct perf_window pw = {o, zero};
	struct apc_perf_cut c = {0};
	if (o->have_begin || o->have_end) {
		c.keep = perf_keep;
		c.ctx = &pw;
	}
	e->u.raw.len = (uint32_t)apc_perf_cut_frame(&res->perf, bytes, e->u.raw.len, e->core, &c);
	res->perf_cut += c.cut;
	if (c.have) {
		if (!res->have_ts || c.lo < res->first_ts)
			res->first_ts = c.lo;
		if (!res->have_ts || c.hi > res->last_ts)
			res->last_ts = c.hi;
		res->have_ts = 1;
		res->window_data += c.kept;
	}
	return c.cut && !c.kept ? 0 : 1;
}

static int window_batch(const struct apc_conv_opts *o, struct apc_conv_result *res,
			struct apc_batch *b, const struct batch_tally *pre, uint64_t zero)
{
	size_t w = 0;

	if (!o->have_begin && !o->have_end) {
		struct batch_tally t;
		if (!pre) {
			tally_batch(b, &t);
			pre = &t;
		}
		tally_apply(res, pre);
		for (size_t i = 0; pre->count[APC_EV_RAW_FRAME] && i < b->n; i++)
			if (b->ev[i].type == APC_EV_RAW_FRAME && window_perf(o, res, &b->ev[i], zero) < 0)
				return APC_ENOMEM;
		return APC_OK;
	}

	for (size_t i = 0; i < b->n; i++) {
		struct apc_event *e = &b->ev[i];
		int timed = !(e->flags & APC_EVF_NO_TS);

		/* a block of n counter values counts as n counter events */
		uint64_t many = e->type == APC_EV_COUNTERS ? e->u.counters.n : 1;

		/* A CAM job is cut by its end, which the TPTP reader
		 * stamps it with and one read back from a capture (no time
		 * of its own) carries; the span takes its start too. */
		uint64_t when = e->ts, lo = e->ts;
		if (e->type == APC_EV_ANNOTATION && e->u.ann && e->u.ann->code == APC_ANN_CAM_JOB) {
			const struct apc_ann *a = e->u.ann;
			when = a->duration > UINT64_MAX - a->start ? UINT64_MAX : a->start + a->duration;
			lo = a->start;
			timed = 1;
		}

		int outside = 0;
		if (e->type == APC_EV_RAW_FRAME) {
			int k = window_perf(o, res, e, zero);
			if (k < 0)
				return APC_ENOMEM;
			if (!k)
				continue;
		}
		if (timed && (o->have_begin || o->have_end)) {
			outside = !window_has(o, zero, when);
			if (outside && !window_keeps(e)) {
				res->events_cut += many;
				continue;
			}
		}
		/* a declaration kept from outside the window does not widen
		 * the span reported */
		if (timed && !outside) {
			if (!res->have_ts || lo < res->first_ts)
				res->first_ts = lo;
			if (!res->have_ts || when > res->last_ts)
				res->last_ts = when;
			res->have_ts = 1;
			if (!window_keeps(e))
				res->window_data += many;
		}
		if (e->type == APC_EV_COUNTERS)
			res->model.ev_count[APC_EV_COUNTER] += many;
		else if (e->type < APC_EV_TYPE_COUNT)
			res->model.ev_count[e->type]++;
		res->model.events_read += many;
		if (w != i)
			b->ev[w] = *e;
		w++;
	}
	b->n = w;
	return APC_OK;
}

/* Window, account and write one batch. */
static int emit_batch(const struct apc_conv_opts *o, struct apc_conv_result *res,
		      struct apc_writer *w, struct apc_batch *b, const struct batch_tally *pre,
		      struct apc_err *err)
{
	/* the window is in the capture's times, as the writer makes them */
	if (window_batch(o, res, b, pre, apc_writer_zero(w)) < 0)
		return apc_err_set(err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
	return b->n ? apc_writer_write(w, b, err) : APC_OK;
}

/* Move what the reorder window releases (everything when `all`) to the writer. */
static int drain_reorder(const struct apc_conv_opts *o, struct apc_conv_result *res,
			 struct apc_writer *w, struct apc_reorder *ro, struct apc_batch *out, int all,
			 struct apc_err *err)
{
	size_t before;

	do {
		before = apc_reorder_pending(ro);
		apc_batch_reset(out);
		if (apc_reorder_pop(ro, out, all, NULL) < 0)
			return apc_err_set(err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
		int rc = emit_batch(o, res, w, out, NULL, err);
		if (rc < 0)
			return rc;
	} while (apc_reorder_pending(ro) && apc_reorder_pending(ro) < before);
	return APC_OK;
}

/* ---- reading ahead on a thread of its own ----------------------------- */

/*
 * One batch as next() left it, with what the main thread needs to know
 * about the reader at that moment (it may not look at the reader itself
 * while next() runs on the other thread).
 */
struct rd_slot {
	struct apc_batch b;
	int rc;                     /* next()'s status */
	size_t ncounters;           /* the model after it: apc_writer_view() */
	uint64_t delta;
	uint64_t done, total;       /* progress */
	int tallied;                /* the reader thread filled `tally` */
	struct batch_tally tally;
};

/*
 * With read-ahead, a thread calls next() into the slots in turn, up to
 * RD_SLOTS - 1 batches ahead of the main thread, which windows and
 * writes them in the same order.  Without (APC_NO_THREADS=1, a format
 * that does not allow it, or input from a pipe), the main thread calls
 * next() itself, into slot 0, and nothing else changes.
 *
 * Four slots of 16384 events (LTT, 100 MiB of Barman, TPTP binary;
 * wall time, alternating runs, medians): with two slots of 8192 each
 * thread often waited for the other, since which one is slower changes
 * from batch to batch, and waking a thread on these virtual machines
 * costs tens of microseconds a time.  LTT went from 167 to 135 ms,
 * Barman from 139 to 135; TPTP binary, bound by its reader either way,
 * did not change beyond the noise.  Slots allocate on first use.
 */
#define RD_SLOTS 4
#define RD_BATCH 16384

struct rd_ahead {
	struct apc_reader *r;
	struct rd_slot slot[RD_SLOTS];
	int threaded;
	pthread_t th;
	pthread_mutex_t mu, model_mu;
	pthread_cond_t cv;
	int full[RD_SLOTS];         /* slot k holds a batch not yet taken */
	int stop;                   /* the main thread wants no more */
	int tally_ok;               /* batches are written as they are (nothing cut) */
	int reader_tallies;         /* the reader waited for the writer last (mu) */
};

/* Call next() into s and note the reader's state after it. */
static void rd_fill(struct rd_ahead *ra, struct rd_slot *s, int tally)
{
	struct apc_reader *r = ra->r;

	apc_batch_reset(&s->b);
	s->rc = r->fmt->next(r, &s->b);
	s->tallied = tally;
	if (tally)
		tally_batch(&s->b, &s->tally);
	s->ncounters = r->model->ncounters;
	s->delta = r->model->meta.monotonic_delta;
	progress_figures(r, &s->done, &s->total);
}

static void *rd_main(void *arg)
{
	struct rd_ahead *ra = arg;

	for (int k = 0;; k = (k + 1) % RD_SLOTS) {
		pthread_mutex_lock(&ra->mu);
		if (ra->full[k] && !ra->stop)
			ra->reader_tallies = 1; /* ahead of the writer: take work off it */
		while (ra->full[k] && !ra->stop)
			pthread_cond_wait(&ra->cv, &ra->mu);
		int stop = ra->stop, tally = ra->tally_ok && ra->reader_tallies;
		pthread_mutex_unlock(&ra->mu);
		if (stop)
			break;
		rd_fill(ra, &ra->slot[k], tally);
		pthread_mutex_lock(&ra->mu);
		ra->full[k] = 1;
		pthread_cond_broadcast(&ra->cv);
		pthread_mutex_unlock(&ra->mu);
		if (ra->slot[k].rc != APC_OK)
			break; /* next() is not called again after an end or a failure */
	}
	return NULL;
}

/*
 * Read ahead only from regular files and folders: a read blocked on a
 * quiet pipe would keep the thread (and an interrupted run) waiting.
 */
static int rd_inputs_ok(const struct apc_conv_opts *o)
{
	for (size_t i = 0; i < o->ninputs; i++) {
		struct stat st;
		if (strcmp(o->inputs[i], "-") == 0 || stat(o->inputs[i], &st) != 0 ||
		    !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)))
			return 0;
	}
	return 1;
}

static void rd_init(struct rd_ahead *ra, struct apc_reader *r)
{
	memset(ra, 0, sizeof *ra);
	ra->r = r;
	for (int k = 0; k < RD_SLOTS; k++)
		apc_batch_init(&ra->slot[k].b, RD_BATCH);
}

/* Start the thread when allowed; without it everything runs here. */
static void rd_start(struct rd_ahead *ra, const struct apc_conv_opts *o)
{
	sigset_t all, old;
	int rc;

	if (!ra->r->fmt->read_ahead || !apc_threads_allowed() || !rd_inputs_ok(o))
		return;
	if (pthread_mutex_init(&ra->mu, NULL) != 0)
		return;
	if (pthread_mutex_init(&ra->model_mu, NULL) != 0) {
		pthread_mutex_destroy(&ra->mu);
		return;
	}
	if (pthread_cond_init(&ra->cv, NULL) != 0) {
		pthread_mutex_destroy(&ra->model_mu);
		pthread_mutex_destroy(&ra->mu);
		return;
	}
	ra->r->model->lock = &ra->model_mu;
	/* The stop signals (INT, TERM, HUP) stay with the main thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&ra->th, NULL, rd_main, ra);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		ra->r->model->lock = NULL;
		pthread_cond_destroy(&ra->cv);
		pthread_mutex_destroy(&ra->model_mu);
		pthread_mutex_destroy(&ra->mu);
		return;
	}
	ra->threaded = 1;
}

/*
 * The next batch, in order (slot k), or NULL when interrupted while
 * waiting for it.  Without the thread, next() runs here.
 */
static struct rd_slot *rd_take(struct rd_ahead *ra, int k)
{
	if (!ra->threaded) {
		rd_fill(ra, &ra->slot[0], 0);
		return &ra->slot[0];
	}
	pthread_mutex_lock(&ra->mu);
	if (!ra->full[k])
		ra->reader_tallies = 0; /* waiting for the reader: keep the work here */
	while (!ra->full[k]) {
		/* wake now and then to notice SIGINT/SIGTERM */
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 50 * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		if (apc_interrupted()) {
			pthread_mutex_unlock(&ra->mu);
			return NULL;
		}
		pthread_cond_timedwait(&ra->cv, &ra->mu, &until);
	}
	pthread_mutex_unlock(&ra->mu);
	return &ra->slot[k];
}

/* Slot k is written: the thread may fill it again. */
static void rd_give_back(struct rd_ahead *ra, int k)
{
	if (!ra->threaded)
		return;
	pthread_mutex_lock(&ra->mu);
	ra->full[k] = 0;
	pthread_cond_broadcast(&ra->cv);
	pthread_mutex_unlock(&ra->mu);
}

/* Stop the thread (it finishes the next() it is in) and free. */
static void rd_finish(struct rd_ahead *ra)
{
	if (ra->threaded) {
		pthread_mutex_lock(&ra->mu);
		ra->stop = 1;
		pthread_cond_broadcast(&ra->cv);
		pthread_mutex_unlock(&ra->mu);
		pthread_join(ra->th, NULL);
		ra->r->model->lock = NULL;
		pthread_cond_destroy(&ra->cv);
		pthread_mutex_destroy(&ra->model_mu);
		pthread_mutex_destroy(&ra->mu);
		ra->threaded = 0;
	}
	for (int k = 0; k < RD_SLOTS; k++)
		apc_batch_free(&ra->slot[k].b);
}

/*
 * The damage of the first input that is a damaged archive (or .tar.gz
 * with a cut gzip stream), or NULL.  It is the cause of what its readers
 * then find missing or cut short, so it is what the run reports.
 */
static const struct apc_err *inputs_damage(struct apc_input *const *inputs, size_t n)
{
	for (size_t i = 0; inputs && i < n; i++) {
		const struct apc_err *d = inputs[i] ? apc_input_damage(inputs[i]) : NULL;
		if (d)
			return d;
	}
	return NULL;
}

/*
 * The damage of a single-stream input's compressed stream (cut or
 * corrupt), into *held; 0 if none.  A reader stopping at a short read
 * ("file ends after 36") never asks for the error its decoder holds, and
 * one done before the damage never meets it: with to_end, what the
 * readers left unread is decoded to the stream's end to find it.
 */
static int inputs_held(struct apc_input *const *inputs, size_t n, int to_end,
		       struct apc_err *held)
{
	for (size_t i = 0; inputs && i < n; i++) {
		struct apc_stream *s = inputs[i] ? apc_input_stream(inputs[i]) : NULL;
		if (!s)
			continue;
		if (to_end ? apc_stream_check_end(s, held) == APC_EDATA
			   : apc_stream_held_error(s, held) && held->status == APC_EDATA)
			return 1;
	}
	return 0;
}

/* "CAUSE; EFFECT" in cause's message, as much of it as fits. */
static void drop_more_damage(struct apc_model *m)
{
	m->nmore_damage = 0;
	m->more_damage_total = 0;
}

static void err_join(struct apc_err *cause, const char *effect)
{
	size_t k = strlen(cause->msg), j = strlen(effect);

	if (k + 2 >= sizeof cause->msg)
		return;
	memcpy(cause->msg + k, "; ", 2);
	k += 2;
	if (j > sizeof cause->msg - 1 - k)
		j = sizeof cause->msg - 1 - k;
	memcpy(cause->msg + k, effect, j);
	cause->msg[k + j] = '\0';
}

int apc_convert(const struct apc_conv_opts *o, struct apc_conv_result *res, struct apc_err *err)
{
	struct apc_reorder *ro = NULL;
	struct apc_batch ob;
	struct apc_input **inputs = NULL;
	struct apc_reader r;
	struct apc_writer *w = NULL;
	struct rd_ahead ra;
	const struct apc_format *fmt;
	const struct apc_err *damage = NULL;
	char outbuf[4096];
	int rc, read_rc = APC_OK, opened = 0, reading = 0;

	memset(res, 0, sizeof *res);
	apc_model_init(&res->model);
	apc_err_clear(&res->data_err);
	apc_err_clear(err);
	memset(&r, 0, sizeof r);
	rd_init(&ra, &r);
	apc_batch_init(&ob, 8192);

	if (o->ninputs == 0)
		return apc_err_set(err, APC_EIO, NULL, APC_NO_OFFSET, "no input given");
	inputs = calloc(o->ninputs, sizeof *inputs);
	if (!inputs)
		return apc_err_set(err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
	for (size_t i = 0; i < o->ninputs; i++) {
		rc = i ? apc_input_open(o->inputs[i], &inputs[i], err)
		       : apc_input_open_told(o->inputs[i], &inputs[i], err, res->kind, sizeof res->kind);
		if (rc < 0) {
			/* damage before anything could be read: the format is
			 * still known when it was given */
			if (rc == APC_EDATA && o->from)
				res->format = apc_format_find(o->from);
			goto out;
		}
		if (o->notice && apc_input_rereads(inputs[i])) {
			const char *tmp = getenv("TMPDIR"), *why = apc_input_reread_why(inputs[i]);
			char msg[512];
			snprintf(msg, sizeof msg,
				 "cannot keep a decoded copy of the archive in %s (%s): each member is "
				 "decoded from the archive's start, which is slow (point TMPDIR at a "
				 "folder with room)",
				 tmp && *tmp ? tmp : "/tmp", *why ? why : "no room, or past the file size limit");
			o->notice(o->inputs[i], msg);
		}
	}
	damage = inputs_damage(inputs, o->ninputs);

	if (o->from) {
		fmt = apc_format_find(o->from);
		if (!fmt) {
			rc = apc_err_set(err, APC_EIO, NULL, APC_NO_OFFSET,
					 "unknown format '%s' (see --list-formats)", o->from);
			goto out;
		}
	} else {
		int bid = 0;
		fmt = apc_format_detect(inputs[0], &bid);
		if (!fmt && damage) {
			*err = *damage;
			rc = APC_EDATA;
			goto out;
		}
		/* a gzip stream cut (or a read failing) within the bytes the
		 * bids looked at: that, not an unknown format, went wrong */
		if (!fmt && apc_input_stream(inputs[0]) &&
		    apc_stream_held_error(apc_input_stream(inputs[0]), err) && err->status < 0) {
			rc = err->status;
			goto out;
		}
		/* A first input no format claims (an annotate stream cut
		 * inside its setup): the next one that a format claims may
		 * tell one that reads several inputs, whose reader then
		 * judges the first as it does every input. */
		for (size_t i = 1; !fmt && i < o->ninputs; i++) {
			const struct apc_format *f = apc_format_detect(inputs[i], &bid);
			if (f) {
				if (f->many_inputs)
					fmt = f;
				break;
			}
		}
		/* nothing was converted: the user is to say what it is */
		if (!fmt) {
			rc = apc_err_set(err, APC_EIO, apc_input_name(o->inputs[0]), APC_NO_OFFSET,
					 "cannot tell the input format (try -f FORMAT; see --list-formats)");
			goto out;
		}
	}
	res->format = fmt;
	if (o->ninputs > 1 && !fmt->many_inputs) {
		/* the reader would read the first and drop the rest */
		rc = apc_err_set(err, APC_EIO, NULL, APC_NO_OFFSET,
				 "%s input is one %s: %zu inputs given (convert them one by one)", fmt->name,
				 fmt->reads, o->ninputs);
		goto out;
	}

	r.fmt = fmt;
	r.inputs = inputs;
	r.ninputs = o->ninputs;
	r.model = &res->model;
	apc_err_clear(&r.err);
	rc = fmt->open(&r);
	opened = 1;
	if (rc < 0) {
		*err = r.err;
		if (err->status >= 0)
			apc_err_set(err, rc, o->inputs[0], APC_NO_OFFSET, "cannot read %s input", fmt->name);
		err->status = rc;
		/* a member the reader needs was lost to the damage */
		if (rc == APC_EDATA && damage)
			*err = *damage;
		goto out;
	}
	if (!res->model.meta.source_format)
		apc_strset(&res->model.meta.source_format, fmt->name);

	{
		/* a tar stream (-o -, a device or FIFO): its folder is named
		 * as the default output */
		struct apc_write_opts wo = o->write;
		char folder[1024];

		apc_default_output(o->inputs[0], folder, sizeof folder);
		wo.stream_name = folder;
		snprintf(outbuf, sizeof outbuf, "%s", o->output ? o->output : folder);
		rc = apc_writer_open(outbuf, &wo, &w, err);
	}
	if (rc < 0)
		goto out;
	snprintf(res->output, sizeof res->output, "%s", apc_writer_path(w));
	rc = apc_writer_begin(w, &res->model, err);
	if (rc < 0)
		goto out;
	if (r.reorder_events) {
		ro = apc_reorder_new(r.reorder_events);
		if (!ro) {
			rc = apc_err_set(err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
			goto out;
		}
	}

	ra.tally_ok = !ro && !o->have_begin && !o->have_end;
	reading = 1;
	rd_start(&ra, o);
	res->read_ahead = ra.threaded;
	for (int k = 0;; k = (k + 1) % RD_SLOTS) {
		struct rd_slot *sl;

		if (apc_interrupted()) {
			rc = apc_err_set(err, APC_EIO, NULL, APC_NO_OFFSET, "interrupted");
			goto out;
		}
		sl = rd_take(&ra, k);
		/* An end of input seen after SIGINT/SIGTERM is ours, not a
		 * truncated trace to salvage. */
		if (!sl || apc_interrupted()) {
			rc = apc_err_set(err, APC_EIO, NULL, APC_NO_OFFSET, "interrupted");
			goto out;
		}
		read_rc = sl->rc;
		apc_writer_view(w, sl->ncounters, sl->delta);
		if (ro) {
			for (size_t i = 0; i < sl->b.n; i++)
				if (apc_reorder_push(ro, &sl->b.ev[i]) < 0) {
					rc = apc_err_set(err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
					goto out;
				}
			rc = drain_reorder(o, res, w, ro, &ob, read_rc != APC_OK, err);
		} else {
			rc = emit_batch(o, res, w, &sl->b, sl->tallied ? &sl->tally : NULL, err);
		}
		if (rc < 0)
			goto out;
		if (o->progress)
			o->progress(o->progress_ctx, sl->done, sl->total);
		rd_give_back(&ra, k);
		if (read_rc == APC_END)
			break;
		if (read_rc < 0) {
			if (read_rc != APC_EDATA) {
				*err = r.err;
				err->status = read_rc;
				rc = read_rc;
				goto out;
			}
			/* Damage: keep what came before it. */
			res->data_err = damage ? *damage : r.err;
			res->data_err.status = APC_EDATA;
			break;
		}
	}
	/* Every member there was read whole: the loss is still reported. */
	if (read_rc == APC_END && damage) {
		res->data_err = *damage;
		read_rc = APC_EDATA;
	}
	rd_finish(&ra); /* the reader is done with the model */
	/* A compressed input's own damage is the cause of what its reader
	 * found cut short, and is damage even where the reader found none. */
	if (!damage && (read_rc == APC_END || read_rc == APC_EDATA)) {
		struct apc_err held;
		if (inputs_held(inputs, o->ninputs, read_rc == APC_END, &held)) {
			if (read_rc == APC_EDATA && strcmp(held.msg, res->data_err.msg) != 0)
				err_join(&held, res->data_err.msg);
			res->data_err = held;
			read_rc = APC_EDATA;
			drop_more_damage(&res->model);
		}
	}
	/* Where the archive's or compressed stream's damage is the run's,
	 * what the reader found in the members it cut (one cut short, the
	 * ones after it missing) are its effects, as the reader's first
	 * damage is: not problems of their own. */
	if (damage && read_rc == APC_EDATA)
		drop_more_damage(&res->model);
	/* Not one Activity, Counter or Block Counter message (nor perf
	 * samples): the capture would be one Streamline cannot open, so
	 * none is written, and the run exits 1.  Nor is one when the
	 * --begin/--end window keeps nothing but names and links (which
	 * are kept from outside it): it would show nothing. */
	if (!apc_writer_has_data(w) ||
	    ((o->have_begin || o->have_end) && !res->window_data)) {
		if (read_rc == APC_EDATA)
			*err = res->data_err;
		else if (o->have_begin || o->have_end)
			apc_err_set(err, APC_EDATA, o->inputs[0], APC_NO_OFFSET,
				    "nothing to convert in the --begin/--end window (%" PRIu64
				    " event%s outside it)",
				    res->events_cut, res->events_cut == 1 ? "" : "s");
		else
			apc_err_set(err, APC_EDATA, o->inputs[0], APC_NO_OFFSET,
				    "no counter values, samples or thread activity to convert: "
				    "Streamline cannot open a capture without any");
		rc = APC_EDATA;
		goto out;
	}
	rc = apc_writer_finish(w, err);
	if (rc < 0)
		goto out;
	res->wstats = *apc_writer_stats(w);
	apc_writer_free(w);
	w = NULL;
	rc = read_rc == APC_EDATA ? APC_EDATA : APC_OK;
	if (rc == APC_EDATA)
		*err = res->data_err;

out:
	/* Damage that stopped the run before (or instead of) any output is
	 * the damage too: --stats=json reports it as such. */
	if (rc == APC_EDATA && res->data_err.status >= 0)
		res->data_err = *err;
	rd_finish(&ra);
	if (w) {
		apc_writer_abort(w);
		res->output[0] = '\0'; /* nothing was written */
	}
	/* Refused before the first batch (the output exists or cannot be
	 * made; the reader could not start): no data was taken in, whatever
	 * the input layer read ahead or the reader's open() peeked at.  The
	 * reader's own damage in open() is where it stopped, as after any
	 * damage. */
	res->bytes_in = opened && (reading || rc == APC_EDATA) ? input_bytes(&r) : 0;
	if (opened && fmt->report)
		fmt->report(&r);
	if (opened && fmt->close)
		fmt->close(&r);
	for (size_t i = 0; inputs && i < o->ninputs; i++)
		if (inputs[i])
			apc_input_close(inputs[i]);
	free(inputs);
	apc_reorder_free(ro);
	apc_batch_free(&ob);
	return rc;
}

void apc_conv_result_free(struct apc_conv_result *res)
{
	apc_model_free(&res->model);
	apc_perf_free(&res->perf);
}
