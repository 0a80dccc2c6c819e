/*
 * model.c - the event model's containers: batches with an arena for the
 * strings they point to, and the model's counter and attribute tables.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

/*
 * Arena chunks of the standard size are kept across resets (up to
 * ARENA_KEEP of them) and reused: freeing them let malloc give the
 * memory back to the system and fault it in again for the next batch,
 * a tenth of the TPTP reader's time.
 */
struct apc_arena_chunk {
	struct apc_arena_chunk *next;
	size_t cap;
	unsigned char data[]; /* the newest chunk's free part: batch->room */
};

#define ARENA_CHUNK (256u * 1024)
#define ARENA_KEEP 8

/* No events and no memory, what init starts from and free goes back to;
 * the capacity and the chunk size stay as they are. */
static void batch_empty(struct apc_batch *b)
{
	b->ev = NULL;
	b->n = 0;
	b->alloc = 0;
	b->arena = NULL;
	b->room = NULL;
	b->room_left = 0;
	b->spare = NULL;
	b->jobs = 0;
}

static void chunks_free(struct apc_arena_chunk *c)
{
	struct apc_arena_chunk *next;

	for (; c; c = next) {
		next = c->next;
		free(c);
	}
}

void apc_batch_init(struct apc_batch *b, size_t cap)
{
	batch_empty(b);
	b->cap = cap ? cap : 4096;
	b->chunk = 0;
}

void apc_batch_reset(struct apc_batch *b)
{
	struct apc_arena_chunk *c, *next;

	size_t kept = 0, std = b->chunk ? b->chunk : ARENA_CHUNK;

	b->n = 0;
	b->jobs = 0;
	for (c = b->spare; c; c = c->next)
		kept++;
	/* Standard chunks go back to the spare list; oversized ones, and
	 * any past ARENA_KEEP, are freed so one huge batch does not pin
	 * memory for the whole run. */
	for (c = b->arena; c; c = next) {
		next = c->next;
		if (c->cap == std && kept < ARENA_KEEP) {
			c->next = b->spare;
			b->spare = c;
			kept++;
		} else {
			free(c);
		}
	}
	b->arena = NULL;
	b->room = NULL;
	b->room_left = 0;
}

void apc_batch_free(struct apc_batch *b)
{
	chunks_free(b->arena);
	chunks_free(b->spare);
	free(b->ev);
	batch_empty(b);
}

/* apc_batch_add() when the batch is unallocated or full. */
struct apc_event *apc_batch_add_grow(struct apc_batch *b, uint16_t type, uint64_t ts, int32_t core)
{
	struct apc_event *e;

	if (!b->ev) {
		b->ev = malloc(b->cap * sizeof *b->ev);
		if (!b->ev)
			return NULL;
		b->alloc = b->cap;
	}
	if (b->n >= b->alloc) {
		/* Readers should stop at apc_batch_full(); growing keeps a
		 * reader that adds several events per record (or an External
		 * message's worth of annotations) correct.  The room grows,
		 * the cap does not: a batch that once overflowed must not be
		 * filled to its new size every time after (the APC reader's
		 * batches grew that way to millions of events). */
		size_t nalloc = b->alloc * 2;
		struct apc_event *ne = realloc(b->ev, nalloc * sizeof *ne);
		if (!ne)
			return NULL;
		b->ev = ne;
		b->alloc = nalloc;
	}
	e = &b->ev[b->n++];
	memset(e, 0, sizeof *e);
	e->type = type;
	e->ts = ts;
	e->core = core;
	return e;
}

/* apc_batch_alloc() when the newest chunk lacks room (size is rounded):
 * take a spare chunk or a new one, then the bytes from its start. */
void *apc_batch_alloc_grow(struct apc_batch *b, size_t size)
{
	size_t std = b->chunk ? b->chunk : ARENA_CHUNK;
	struct apc_arena_chunk *nc = b->spare;

	if (nc && size <= nc->cap) {
		b->spare = nc->next;
	} else {
		size_t cap = size > std ? size : std;
		if (!(nc = malloc(sizeof *nc + cap)))
			return NULL;
		nc->cap = cap;
	}
	/* Newest chunk is at the head. */
	nc->next = b->arena;
	b->arena = nc;
	b->room = nc->data + size;
	b->room_left = nc->cap - size;
	return nc->data;
}

void apc_model_init(struct apc_model *m)
{
	memset(m, 0, sizeof *m);
	m->meta.created = -1;
}

static void decl_free(struct apc_counter_decl *d)
{
	free(d->type);
	free(d->category);
	free(d->counter_set);
	free(d->title);
	free(d->name);
	free(d->description);
	free(d->units);
	for (size_t i = 0; i < d->nactivities; i++)
		free(d->activities[i].name);
	free(d->activities);
	apc_attrs_free(d->xattrs, d->nxattrs);
}

void apc_model_free(struct apc_model *m)
{
	for (uint32_t i = 0; m->meta.cores && i < m->meta.ncores; i++)
		free(m->meta.cores[i].name);
	free(m->meta.cores);
	apc_attrs_free(m->meta.attrs, m->meta.nattrs);
	apc_attrs_free(m->meta.target_attrs, m->meta.ntarget_attrs);
	apc_attrs_free(m->meta.session_attrs, m->meta.nsession_attrs);
	apc_xml_elem_free(m->meta.events_xml);
	free(m->meta.events_xml);
	free(m->meta.target_name);
	free(m->meta.source_format);
	free(m->meta.capture_type);
	free(m->meta.backtrace_processing);
	for (size_t i = 0; i < m->ncounters; i++)
		decl_free(&m->counters[i]);
	free(m->counters);
	apc_map64_free(&m->counter_index);
	for (size_t i = 0; i < m->nunmapped; i++)
		free(m->unmapped[i].what);
	for (size_t i = 0; i < m->nkinds; i++) {
		free(m->kinds[i].what);
		free(m->kinds[i].became);
	}
	free(m->kinds);
	free(m->more_damage);
	apc_model_init(m);
}

void apc_model_more_damage(struct apc_model *m, const struct apc_err *e)
{
	m->more_damage_total++;
	if (m->nmore_damage >= APC_MAX_MORE_DAMAGE)
		return;
	if (!m->more_damage && !(m->more_damage = calloc(APC_MAX_MORE_DAMAGE, sizeof *m->more_damage)))
		return;
	m->more_damage[m->nmore_damage++] = *e;
}

int apc_strset(char **dst, const char *src)
{
	char *c = NULL;

	if (src) {
		c = strdup(src);
		if (!c)
			return APC_ENOMEM;
	}
	free(*dst);
	*dst = c;
	return APC_OK;
}

struct apc_counter_decl *apc_model_find_counter(struct apc_model *m, const char *type)
{
	uint64_t id;

	/* Hashed: a hostile input declares hundreds of thousands (a Barman
	 * PMU table, an LTT eventdefs file, a captured.xml), each looked up
	 * as it is declared; a scan each time was quadratic (minutes). */
	if (apc_map64_find(&m->counter_index, apc_hash_str(APC_HASH_SEED, type), &id) &&
	    id - 1 < m->ncounters && strcmp(m->counters[id - 1].type, type) == 0)
		return &m->counters[id - 1];
	if (!m->counter_index_clash)
		return NULL;
	for (size_t i = 0; i < m->ncounters; i++)
		if (strcmp(m->counters[i].type, type) == 0)
			return &m->counters[i];
	return NULL;
}

struct apc_counter_decl *apc_model_add_counter(struct apc_model *m, const char *type)
{
	struct apc_counter_decl *d = apc_model_find_counter(m, type);

	return d ? d : apc_model_add_counter_new(m, type);
}

struct apc_counter_decl *apc_model_add_counter_new(struct apc_model *m, const char *type)
{
	struct apc_counter_decl *d;
	char *t;

	if (!(t = strdup(type)))
		return NULL;
	if (m->lock)
		pthread_mutex_lock(m->lock);
	if (m->ncounters == m->counters_cap) {
		size_t ncap = m->counters_cap ? m->counters_cap * 2 : 16;
		struct apc_counter_decl *nc = realloc(m->counters, ncap * sizeof *nc);
		if (!nc) {
			if (m->lock)
				pthread_mutex_unlock(m->lock);
			free(t);
			return NULL;
		}
		m->counters = nc;
		m->counters_cap = ncap;
	}
	{
		/* the first of a type keeps the index slot (find returns the
		 * first); a second type of one hash makes finds scan */
		uint64_t h = apc_hash_str(APC_HASH_SEED, t), old;
		if (apc_map64_find(&m->counter_index, h, &old))
			m->counter_index_clash |= strcmp(m->counters[old - 1].type, t) != 0;
		else if (apc_map64_put(&m->counter_index, h, m->ncounters + 1) < 0)
			m->counter_index_clash = 1; /* no room to index it: scan */
	}
	d = &m->counters[m->ncounters];
	memset(d, 0, sizeof *d);
	d->type = t;
	d->id = (uint32_t)m->ncounters;
	d->event = -1;
	m->ncounters++;
	if (m->lock)
		pthread_mutex_unlock(m->lock);
	return d;
}

int apc_model_set_cores(struct apc_model *m, uint32_t ncores)
{
	struct apc_core *c;

	if (ncores > APC_MAX_CORES)
		return APC_EDATA;
	c = calloc(ncores ? ncores : 1, sizeof *c);
	if (!c)
		return APC_ENOMEM;
	for (uint32_t i = 0; m->meta.cores && i < m->meta.ncores; i++)
		free(m->meta.cores[i].name);
	free(m->meta.cores);
	for (uint32_t i = 0; i < ncores; i++)
		c[i].cluster = -1;
	m->meta.cores = c;
	m->meta.ncores = ncores;
	return APC_OK;
}

int apc_attrs_add(struct apc_attr **list, size_t *n, const char *key, const char *value)
{
	struct apc_attr *na = realloc(*list, (*n + 1) * sizeof *na);

	if (!na)
		return APC_ENOMEM;
	*list = na;
	na[*n].key = strdup(key);
	na[*n].value = strdup(value ? value : "");
	if (!na[*n].key || !na[*n].value) {
		free(na[*n].key);
		free(na[*n].value);
		return APC_ENOMEM;
	}
	(*n)++;
	return APC_OK;
}

const char *apc_attrs_get(const struct apc_attr *list, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(list[i].key, key))
			return list[i].value;
	return NULL;
}

void apc_attrs_free(struct apc_attr *list, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(list[i].key);
		free(list[i].value);
	}
	free(list);
}

void apc_xml_elem_free(struct apc_xml_elem *e)
{
	if (!e)
		return;
	free(e->name);
	apc_attrs_free(e->attrs, e->nattrs);
	for (size_t i = 0; i < e->nchildren; i++)
		apc_xml_elem_free(&e->children[i]);
	free(e->children);
	e->name = NULL;
	e->attrs = NULL;
	e->children = NULL;
	e->nattrs = e->nchildren = 0;
}

int apc_model_add_attr(struct apc_model *m, const char *key, const char *value)
{
	return apc_attrs_add(&m->meta.attrs, &m->meta.nattrs, key, value);
}

void apc_model_unmapped(struct apc_model *m, const char *what, uint64_t n)
{
	size_t i;

	for (i = 0; i < m->nunmapped; i++)
		if (strcmp(m->unmapped[i].what, what) == 0) {
			m->unmapped[i].count += n;
			return;
		}
	if (m->nunmapped == APC_MAX_UNMAPPED - 1) {
		/* Last slot collects everything else. */
		what = "other";
		for (i = 0; i < m->nunmapped; i++)
			if (strcmp(m->unmapped[i].what, what) == 0) {
				m->unmapped[i].count += n;
				return;
			}
	}
	if (m->nunmapped >= APC_MAX_UNMAPPED)
		return;
	m->unmapped[m->nunmapped].what = strdup(what);
	if (!m->unmapped[m->nunmapped].what)
		return;
	m->unmapped[m->nunmapped].count = n;
	m->nunmapped++;
}

const char *apc_class_name(enum apc_class c)
{
	static const char *const names[] = {"delta", "incident", "absolute", "activity"};
	return (unsigned)c < 4 ? names[c] : "delta";
}

const char *apc_display_name(enum apc_display d)
{
	static const char *const names[] = {NULL, "accumulate", "hertz", "maximum", "average", "minimum"};
	return (unsigned)d < 6 ? names[d] : NULL;
}

size_t apc_event_nvalues(const struct apc_event *e)
{
	return e->type == APC_EV_COUNTERS ? e->u.counters.n : e->type == APC_EV_COUNTER;
}

struct apc_event apc_event_value(const struct apc_event *e, size_t i)
{
	struct apc_event one;

	if (e->type != APC_EV_COUNTERS)
		return *e;
	one = (struct apc_event){.ts = e->ts, .type = APC_EV_COUNTER, .flags = e->flags, .core = e->core,
				 .u.counter = {.counter = e->u.counters.ids[i], .pid = e->u.counters.pid,
					       .value = e->u.counters.values[i]}};
	return one;
}

const char *apc_ev_type_name(int type)
{
	static const char *const names[APC_EV_TYPE_COUNT] = {
		[APC_EV_COUNTER] = "counter",         [APC_EV_THREAD_NAME] = "thread_name",
		[APC_EV_COOKIE_NAME] = "cookie_name", [APC_EV_LINK] = "link",
		[APC_EV_ACTIVITY] = "activity",       [APC_EV_SCHED_SWITCH] = "sched_switch",
		[APC_EV_THREAD_EXIT] = "thread_exit", [APC_EV_TASK_EXIT] = "task_exit",
		[APC_EV_IDLE] = "idle",               [APC_EV_SAMPLE] = "sample",
		[APC_EV_PROC] = "proc",               [APC_EV_ANNOTATION] = "annotation",
		[APC_EV_RAW_FRAME] = "raw_frame",     [APC_EV_COUNTERS] = "counters",
	};
	if (type > 0 && type < APC_EV_TYPE_COUNT && names[type])
		return names[type];
	return "unknown";
}

static char *batch_copy_str(struct apc_batch *b, const char *s, int *fail)
{
	char *c;

	if (!s)
		return NULL;
	c = apc_batch_strdup(b, s, strlen(s));
	if (!c)
		*fail = 1;
	return c;
}

struct apc_ann *apc_batch_copy_ann(struct apc_batch *b, const struct apc_ann *a)
{
	struct apc_ann *c = apc_batch_alloc(b, sizeof *c);
	int fail = 0;

	if (!c)
		return NULL;
	*c = *a;
	b->jobs += a->code == APC_ANN_CAM_JOB;
	if (a->text) {
		char *t = apc_batch_strdup(b, a->text, a->text_len);
		fail |= !t;
		c->text = t;
	}
	if (a->data && a->data_len) {
		uint8_t *d = apc_batch_alloc(b, a->data_len);
		fail |= !d;
		if (d)
			memcpy(d, a->data, a->data_len);
		c->data = d;
	}
	if (a->deps && a->ndeps) {
		int32_t *d = apc_batch_alloc(b, a->ndeps * sizeof *d);
		fail |= !d;
		if (d)
			memcpy(d, a->deps, a->ndeps * sizeof *d);
		c->deps = d;
	}
	if (a->counter) {
		struct apc_counter_decl *d = apc_batch_alloc(b, sizeof *d);
		if (!d)
			return NULL;
		*d = *a->counter;
		d->type = batch_copy_str(b, a->counter->type, &fail);
		d->category = batch_copy_str(b, a->counter->category, &fail);
		d->counter_set = batch_copy_str(b, a->counter->counter_set, &fail);
		d->title = batch_copy_str(b, a->counter->title, &fail);
		d->name = batch_copy_str(b, a->counter->name, &fail);
		d->description = batch_copy_str(b, a->counter->description, &fail);
		d->units = batch_copy_str(b, a->counter->units, &fail);
		if (a->counter->nactivities) {
			d->activities = apc_batch_alloc(b, a->counter->nactivities * sizeof *d->activities);
			if (!d->activities)
				return NULL;
			for (size_t i = 0; i < a->counter->nactivities; i++) {
				d->activities[i] = a->counter->activities[i];
				d->activities[i].name = batch_copy_str(b, a->counter->activities[i].name, &fail);
			}
		}
		if (a->counter->nxattrs) {
			d->xattrs = apc_batch_alloc(b, a->counter->nxattrs * sizeof *d->xattrs);
			if (!d->xattrs)
				return NULL;
			for (size_t i = 0; i < a->counter->nxattrs; i++) {
				d->xattrs[i].key = batch_copy_str(b, a->counter->xattrs[i].key, &fail);
				d->xattrs[i].value = batch_copy_str(b, a->counter->xattrs[i].value, &fail);
			}
		}
		c->counter = d;
	}
	return fail ? NULL : c;
}

int apc_model_count_kind(struct apc_model *m, const char *what, const char *became, uint64_t n)
{
	struct apc_kind *k;

	for (size_t i = 0; i < m->nkinds; i++)
		if (!strcmp(m->kinds[i].what, what) && !strcmp(m->kinds[i].became, became)) {
			m->kinds[i].count += n;
			return APC_OK;
		}
	k = realloc(m->kinds, (m->nkinds + 1) * sizeof *k);
	if (!k)
		return APC_ENOMEM;
	m->kinds = k;
	k += m->nkinds;
	k->what = strdup(what);
	k->became = strdup(became);
	if (!k->what || !k->became) {
		free(k->what);
		free(k->became);
		return APC_ENOMEM;
	}
	k->count = n;
	m->nkinds++;
	return APC_OK;
}
