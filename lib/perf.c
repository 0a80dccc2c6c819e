/*
 * perf.c - perf records read by their events' attributes (perf.h).
 */
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "err.h"
#include "packed.h"
#include "perf.h"
#include "util.h"

void apc_perf_free(struct apc_perf *p)
{
	free(p->attrs);
	apc_map64_free(&p->attr_map);
	apc_map64_free(&p->id_map);
	memset(p, 0, sizeof *p);
}

int apc_perf_word(struct apc_perf_words *w, uint64_t *v)
{
	int64_t x;
	int k;

	if (!w->n || (k = apc_unpack64(w->p, w->left, &x)) <= 0)
		return 0;
	w->p += k;
	w->left -= (size_t)k;
	w->n--;
	*v = (uint64_t)x;
	return 1;
}

/* An event's attributes (perf_attr: sample_type @24, read_format @32,
 * flags @40 of struct perf_event_attr) and the ids of its instances
 * (perf_keys: each id packed64, then its key packed32). */
int apc_perf_learn(struct apc_perf *p, const struct apc_msg *m)
{
	const struct apc_field *f;

	if (!strcmp(m->name, "perf_attr")) {
		const struct apc_field *key = apc_msg_field(m, "key");
		struct apc_perf_attr *a;
		uint64_t i;
		if (!(f = apc_msg_field(m, "attr")) || !key || f->len < 40)
			return APC_OK;
		if (!apc_map64_find(&p->attr_map, (uint64_t)(uint32_t)key->i, &i)) {
			struct apc_perf_attr *na = apc_table_grow(p->attrs, &p->cattrs, sizeof *na,
								  p->nattrs + 1, SIZE_MAX / sizeof *na);
			if (!na)
				return APC_ENOMEM;
			p->attrs = na;
			i = p->nattrs;
			if (apc_map64_put(&p->attr_map, (uint64_t)(uint32_t)key->i, i) < 0)
				return APC_ENOMEM;
			p->nattrs++;
		}
		a = &p->attrs[i];
		a->sample_type = apc_le64(f->s + 24);
		a->read_format = apc_le64(f->s + 32);
		a->flags = f->len >= 48 ? apc_le64(f->s + 40) : 0;
		return APC_OK;
	}
	if (!strcmp(m->name, "perf_keys")) {
		struct apc_perf_words w;
		if (!(f = apc_msg_field(m, "ids")) || f->i < 0)
			return APC_OK;
		w = (struct apc_perf_words){f->s, f->len, UINT64_MAX};
		for (int64_t i = 0; i < f->i; i++) {
			uint64_t id;
			int32_t key;
			int k;
			if (!apc_perf_word(&w, &id) || (k = apc_unpack32(w.p, w.left, &key)) <= 0)
				break;
			w.p += k;
			w.left -= (size_t)k;
			if (apc_map64_put(&p->id_map, id, (uint32_t)key) < 0)
				return APC_ENOMEM;
		}
	}
	return APC_OK;
}

const struct apc_perf_attr *apc_perf_attr_of(const struct apc_perf *p,
					     const struct apc_field *words, int sample,
					     uint64_t *id)
{
	struct apc_perf_words w = apc_perf_words_of(words);
	uint64_t key, ai, x;

	if (sample) {
		if (!apc_perf_word(&w, id))
			return NULL;
	} else {
		for (*id = 0; apc_perf_word(&w, &x);)
			*id = x;
	}
	if (!apc_map64_find(&p->id_map, *id, &key) || !apc_map64_find(&p->attr_map, key, &ai) ||
	    !(p->attrs[ai].sample_type & APC_PS_IDENTIFIER))
		return NULL;
	return &p->attrs[ai];
}

int apc_perf_sample_head(const struct apc_perf_attr *a, struct apc_perf_words *w,
			 struct apc_perf_head *h)
{
	static const uint64_t bit[] = {APC_PS_IDENTIFIER, APC_PS_IP,	    APC_PS_TID,
				       APC_PS_TIME,	  APC_PS_ADDR,	    APC_PS_ID,
				       APC_PS_STREAM_ID,  APC_PS_CPU,	    APC_PS_PERIOD};
	uint64_t *slot[] = {&h->id, &h->ip, &h->pidtid, &h->time, &h->addr,
			    &h->id, &h->stream_id, &h->cpu, &h->period};

	h->have = 0;
	for (size_t i = 0; i < sizeof bit / sizeof bit[0]; i++) {
		if (!(a->sample_type & bit[i]))
			continue;
		if (!apc_perf_word(w, slot[i]))
			return 0;
		h->have |= bit[i];
	}
	return 1;
}

int apc_perf_sample_tail(const struct apc_perf_attr *a, const struct apc_field *words,
			 struct apc_perf_head *h)
{
	static const uint64_t bit[] = {APC_PS_TID,	 APC_PS_TIME, APC_PS_ID,
				       APC_PS_STREAM_ID, APC_PS_CPU,  APC_PS_IDENTIFIER};
	uint64_t *slot[] = {&h->pidtid, &h->time, &h->id, &h->stream_id, &h->cpu, &h->id};
	struct apc_perf_words w = apc_perf_words_of(words);
	uint64_t n = 0, x;

	h->have = 0;
	if (!(a->flags & APC_PA_SAMPLE_ID_ALL))
		return 0;
	for (size_t i = 0; i < sizeof bit / sizeof bit[0]; i++)
		n += !!(a->sample_type & bit[i]);
	if (n > (uint64_t)words->i)
		return 0;
	for (uint64_t i = n; i < (uint64_t)words->i; i++)
		if (!apc_perf_word(&w, &x))
			return 0;
	for (size_t i = 0; i < sizeof bit / sizeof bit[0]; i++) {
		if (!(a->sample_type & bit[i]))
			continue;
		if (!apc_perf_word(&w, slot[i]))
			return 0;
		h->have |= bit[i];
	}
	return 1;
}

int apc_perf_read_walk(struct apc_perf_words *w, uint64_t fmt, uint64_t own,
		       struct apc_perf_read *r)
{
	uint64_t nr = 1, v = 0, id, x;
	int rc;

	if ((fmt & APC_PF_GROUP) ? !apc_perf_word(w, &nr) : !apc_perf_word(w, &v))
		return 0;
	if ((fmt & APC_PF_ENABLED) && !apc_perf_word(w, &r->enabled))
		return 0;
	if ((fmt & APC_PF_RUNNING) && !apc_perf_word(w, &r->running))
		return 0;
	/* each value takes a word: the words bound the loop, not nr */
	for (uint64_t i = 0; i < nr; i++) {
		if ((fmt & APC_PF_GROUP) && !apc_perf_word(w, &v))
			return 0;
		id = own;
		if ((fmt & APC_PF_ID) && !apc_perf_word(w, &id))
			return 0;
		if ((fmt & APC_PF_LOST) && !apc_perf_word(w, &x))
			return 0;
		if ((rc = r->fn(r->ctx, id, v)) < 0)
			return rc;
	}
	return 1;
}

int apc_perf_time(const struct apc_perf *p, const struct apc_msg *m, uint64_t *t)
{
	const struct apc_perf_attr *a;
	struct apc_perf_head h = {0};
	uint64_t id;
	int sample = m->code == APC_PR_SAMPLE;

	/* the words are a record's last field (frame.c msg_perf_data) */
	if (!m->nfields || m->f[m->nfields - 1].kind != APC_F_WORDS)
		return 0;
	const struct apc_field *words = &m->f[m->nfields - 1];
	if (!(a = apc_perf_attr_of(p, words, sample, &id)))
		return 0;
	if (sample) {
		struct apc_perf_words w = apc_perf_words_of(words);
		apc_perf_sample_head(a, &w, &h);
	} else {
		apc_perf_sample_tail(a, words, &h);
	}
	if (!(h.have & APC_PS_TIME))
		return 0;
	*t = h.time;
	return 1;
}

/* Records that happen at a time, as opposed to those describing state. */
static int perf_timed(int type)
{
	switch (type) {
	case APC_PR_SAMPLE: case APC_PR_READ: case APC_PR_SWITCH: case APC_PR_SWITCH_CPU_WIDE:
	case APC_PR_LOST: case APC_PR_LOST_SAMPLES: case APC_PR_THROTTLE: case APC_PR_UNTHROTTLE:
	case APC_PR_AUX: case APC_PR_ITRACE_START:
		return 1;
	default:
		return 0;
	}
}

size_t apc_perf_cut_frame(const struct apc_perf *p, uint8_t *body, size_t len, int32_t core,
			  struct apc_perf_cut *c)
{
	struct apc_frame f = {0, 0, (uint32_t)len, body, APC_FRAME_PERF_DATA, core, 0};
	struct apc_msg_iter it;
	struct apc_msg m;
	struct apc_err err;
	uint64_t cut = 0, kept = 0, lo = UINT64_MAX, hi = 0;
	size_t out = 0, len_at = 0, prev_end = 0, chunk_end = 0;
	int have = 0, started = 0, rc;

	if (len > UINT32_MAX)
		return len;
	/* A frame to cut is decoded once first to be sure it decodes, as
	 * it is rewritten while it is read; one only read needs no such
	 * pass (nothing moves: what it found is dropped at the damage). */
	apc_err_clear(&err);
	if (c->keep) {
		apc_msg_iter_init(&it, &f, 3);
		while ((rc = apc_msg_next(&it, &m, &err)) == APC_OK)
			;
		if (rc != APC_END)
			return len;
	}
	apc_msg_iter_init(&it, &f, 3);
	for (;;) {
		size_t pe0 = it.perf_end;
		if ((rc = apc_msg_next(&it, &m, &err)) != APC_OK)
			break;
		size_t start = prev_end, end = it.pos;
		if (!started || it.perf_end != pe0) {
			/* a chunk starts with this record: the last one's
			 * length, then this one's CPU and length as they were */
			size_t from = started ? chunk_end : 0;
			if (started)
				apc_le32_put(body + len_at, (uint32_t)(out - len_at - 4));
			memmove(body + out, body + from, it.perf_start - from);
			out += it.perf_start - from;
			len_at = out - 4;
			start = it.perf_start;
			chunk_end = it.perf_end;
			started = 1;
		}
		prev_end = end;
		uint64_t t;
		int timed = perf_timed(m.code) && apc_perf_time(p, &m, &t);
		if (timed && c->keep && !c->keep(c->ctx, t)) {
			cut++;
			continue;
		}
		kept++;
		if (timed) {
			lo = t < lo ? t : lo;
			hi = t > hi ? t : hi;
			have = 1;
		}
		if (out != start)
			memmove(body + out, body + start, end - start);
		out += end - start;
	}
	if (rc != APC_END || !started)
		return len; /* damaged (only read, so unchanged), or no record */
	apc_le32_put(body + len_at, (uint32_t)(out - len_at - 4));
	/* chunks with no record after the last that had one, as they were */
	memmove(body + out, body + chunk_end, len - chunk_end);
	out += len - chunk_end;
	c->cut += cut;
	c->kept += kept;
	if (have) {
		c->lo = c->have && c->lo < lo ? c->lo : lo;
		c->hi = c->have && c->hi > hi ? c->hi : hi;
		c->have = 1;
	}
	return out;
}
