/*
 * ltt.c - the LTT directory-trace reader (Linux Trace Toolkit, 2003-2005):
 * info/system.xml, eventdefs/ *.xml, control/ and cpu/N as a tree (a
 * directory or an archive of one), mapped onto the event model.
 *
 * Decisions the real trace forced (see ../shared/testdata/ltt):
 *   - block sub-second fields: the one public trace's converter wrote
 *     MICROSECONDS into block_start/block_end "nanoseconds" (read as us,
 *     both CPUs agree on 350.795 MHz; read as ns they do not).  Rule:
 *     when every sub-second field of the first block of every CPU file is
 *     below 1,000,000 they are taken as microseconds, otherwise as
 *     nanoseconds.  Genuine nanoseconds pass that test with probability
 *     1e-3 per value (1e-6 for the smallest trace, one CPU, one block).
 *   - time is the ns since the epoch from the block timespecs; that is
 *     the model's monotonic clock, and wall_clock_ns = monotonic_delta =
 *     the earliest block_start.
 * Mapping:
 *   schedchange -> APC_EV_ACTIVITY on "ltt_cpu_activity" (activity 1
 *     "Running", or 0 = idle when the incoming pid is 0; tid = incoming pid; wait from out_state as gator does:
 *     0 running/preempted -> contention, 2 uninterruptible -> I/O, else
 *     other);
 *   process fork/kthread, process_fork -> APC_EV_LINK for the child
 *     (cookie 0, the kernel, for a kernel thread; -1, not known, else);
 *     a pid switched in with no Link yet (running before the trace
 *     began) gets one there, before its activity;
 *   process exit, process_exit -> APC_EV_TASK_EXIT of the current pid;
 *   file_system exec -> APC_EV_THREAD_NAME of the current pid;
 *   control/processes -> names and links at the start;
 *   irq_entry, soft_irq, syscall_entry, trap_entry -> per-CPU incident
 *     counters ltt_irq, ltt_softirq, ltt_syscall, ltt_trap (value 1);
 *   every other event type, including process/file_system events -> an
 *     incident counter "ltt_<facility>_<event>" so nothing disappears;
 *   builtins (facility_load, block_start/end, time_heartbeat) frame the
 *     data and become nothing; info/bookmarks.xml -> APC_ANN_MARKER.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "ltt.h"
#include "map64.h"

#define LTT_MAX_BLOCK (64u << 20)       /* one block in memory per CPU */
#define LTT_MAX_ALL_BLOCKS (1024u << 20)
#define LTT_MAX_XML (16u << 20)
/* Read-ahead per CPU file: whole blocks, about 1 MiB per read() instead
 * of one system call per (often 4 KiB) block; all CPU files together
 * stay within 64 MiB. */
#define LTT_READAHEAD (1u << 20)
#define LTT_READAHEAD_ALL (64u << 20)
/* Events decoded per walker call (never past a block_end), all CPU
 * files together within 4 MiB. */
#define LTT_RUN 128
#define LTT_RUN_ALL (4u << 20)
/* Model events one record can add (ltt_map: a link, exit or name, then
 * its counter). */
#define LTT_MAX_PER_RECORD 2
#define LTT_PID_BITS (1u << 22)

enum ltt_role {
	ROLE_NONE = 0, ROLE_COUNTER, ROLE_SCHED, ROLE_PROCESS, ROLE_FORK, ROLE_EXIT,
	ROLE_FS, ROLE_IRQ, ROLE_SOFTIRQ, ROLE_SYSCALL, ROLE_TRAP /* IRQ.. last: counters only */
};

struct ltt_src {
	struct apc_ltt_cpu w;
	struct apc_stream *s;
	struct apc_err *err;  /* the reader's, for the read callback */
	char name[300];
	const struct apc_ltt_raw *cur; /* the next event (in q) when have */
	int have;
	/* Events decoded ahead by apc_ltt_cpu_run: q[qi..qn) are still to
	 * merge; qst is the walker's status after them, with its error in
	 * qerr (the reader's err must show the failure met first in merge
	 * order, not the first decoded). */
	struct apc_ltt_raw *q;
	size_t qn, qi, qcap;
	int qst;
	struct apc_err qerr;
	int32_t current_pid;  /* from schedchange, for exit/exec */
	/* stat index + 1 of each id below 256 seen so far (0 = not yet):
	 * skips the (cpu, id) hash for almost every event */
	int32_t stat_cache[256];
};

/* Fields a role reads, resolved once per event id (see ltt_refs). */
struct ltt_idrefs {
	struct apc_ltt_fieldref f[2];
};

/* What the reader makes of one event id, for ids below the table's n. */
struct ltt_idinfo {
	uint8_t role;       /* enum ltt_role */
	uint8_t plain;      /* a counter value and nothing else (ctr >= 0) */
	int32_t ctr;        /* counter id, -1 none */
	uint32_t ref_slot;  /* refs index + 1 for role ids, 0 none */
};

struct ltt_mark {
	uint64_t ts;
	int32_t core;
	char *text;
};

struct ltt_proc {
	int32_t pid;
	char *name;
};

struct ltt_priv {
	struct apc_ltt_defs defs;
	struct apc_ltt_arch arch;
	struct apc_ltt_ids ids;         /* n entries: what the eventdefs assign */
	size_t block_size;
	int64_t system_at;              /* offset of <system in info/system.xml */
	int subsec;
	struct ltt_src *src;
	size_t nsrc;
	/* The sources with an event, as a binary min-heap on (time, CPU
	 * file index): the merge's next is heap[0], the one after it its
	 * smaller child, so a trace of many CPUs costs log(CPUs) an event
	 * and not a scan of all of them. */
	struct ltt_src **heap;
	size_t nheap;
	struct ltt_idinfo *idi;         /* ids.n entries; ltt_id() for any id */
	struct ltt_idrefs *refs;
	size_t nrefs;
	uint32_t act_ctr;
	/* stats: counts[src][id] for ids seen, as a sparse list */
	struct apc_ltt_stat *stats;
	size_t nstats, stats_cap;
	int32_t *stat_ix;               /* nsrc * 65536 would be big: hash by (cpu,id) */
	size_t stat_ix_cap;
	struct ltt_mark *marks;
	size_t nmarks, next_mark;
	struct ltt_proc *procs;
	size_t nprocs;
	/* pids given a Link so far: a bit each below LTT_PID_BITS (Linux's
	 * largest pid_max), the rarer others in a map */
	uint64_t *linked_bits;
	struct apc_map64 linked;
	int started, failed;
	uint64_t first_ts;
	/* The first damage found, in a control file or a CPU file: what
	 * came before it in that file is used, every other file is read
	 * whole, and this is the error the run ends with. */
	int damaged;
	struct apc_err dmg_err;
	/* Undefined ids in the CPU files are damage there only when nothing
	 * explains them: no damage before the CPU files were read (a cut
	 * eventdefs file, a damaged control file) and no facility_load of
	 * a facility no eventdefs file describes. */
	int damaged_before_cpus, undescribed_loads;
};

/* ---- small helpers ---------------------------------------------------- */

static long ltt_read_cb(void *ctx, void *buf, size_t n, struct apc_err *err)
{
	struct ltt_src *s = ctx;
	ssize_t r = apc_stream_read(s->s, buf, n, err);

	return (long)r;
}

/* Read member rel whole; name (name_len bytes) gets its name for
 * messages, which names the trace too ("t/info/system.xml",
 * "t.tar:info/system.xml"), as the CPU files' do.  With cut given, a
 * member an archive (or its compression) cuts short is read up to the
 * cut, as a folder's file cut there would be: APC_OK, the damage in
 * *cut (else cleared). */
static int ltt_slurp(struct apc_input *in, const char *rel, uint8_t **buf, size_t *len,
		     char *name, size_t name_len, struct apc_err *err, struct apc_err *cut)
{
	struct apc_stream *s;
	int st = apc_input_open_member(in, rel, &s, err);

	if (cut)
		apc_err_clear(cut);
	if (st)
		return st;
	snprintf(name, name_len, "%s", apc_stream_name(s));
	if (cut) {
		st = apc_stream_slurp_upto(s, LTT_MAX_XML, buf, len, err);
		if (st == APC_EDATA && *buf) {
			*cut = *err;
			apc_err_clear(err);
			st = APC_OK;
		} else if (st < 0) {
			free(*buf);
			*buf = NULL;
		}
	} else {
		st = apc_stream_slurp(s, LTT_MAX_XML, buf, len, err);
	}
	apc_stream_close(s);
	return st;
}

/* An id past the table is unassigned: no role, no counter, no refs. */
static const struct ltt_idinfo ltt_noid = {ROLE_NONE, 0, -1, 0};

static inline const struct ltt_idinfo *ltt_id(const struct ltt_priv *p, uint32_t id)
{
	return id < p->ids.n && p->idi ? &p->idi[id] : &ltt_noid;
}

static const char *role_name(const struct ltt_priv *p, uint16_t id, struct apc_model *m)
{
	const struct ltt_idinfo *ii = ltt_id(p, id);

	switch (ii->role) {
	case ROLE_NONE: return "none (block framing)";
	case ROLE_SCHED: return "activity ltt_cpu_activity";
	case ROLE_IRQ: return "counter ltt_irq";
	case ROLE_SOFTIRQ: return "counter ltt_softirq";
	case ROLE_SYSCALL: return "counter ltt_syscall";
	case ROLE_TRAP: return "counter ltt_trap";
	case ROLE_FORK: return "link";
	case ROLE_EXIT: return "task exit";
	default:
		if (ii->ctr >= 0 && (size_t)ii->ctr < m->ncounters)
			return m->counters[ii->ctr].type;
		return "unmapped";
	}
}

/* Count one raw event under (cpu, id). Open addressing on (cpu, id),
 * behind the source's small cache of recent ids (ltt_stat). */
static __attribute__((noinline)) void ltt_stat_slow(struct apc_reader *r, struct ltt_priv *p,
						    struct ltt_src *src,
						    const struct apc_ltt_raw *ev)
{
	int cpu = ev->cpu;
	/* Only ids below 256 are cached: each has its own entry, and a
	 * source's events are all of one CPU, so a hit needs no compare. */
	int32_t dummy, *slot = ev->id < 256 ? &src->stat_cache[ev->id] : &dummy;
	uint32_t key = ((uint32_t)(cpu + 1) << 16) ^ ev->id;
	size_t cap = p->stat_ix_cap, h;

	if (p->nstats * 2 >= cap) {
		size_t ncap = cap ? cap * 2 : 256;
		int32_t *nix = malloc(ncap * sizeof *nix);
		if (!nix)
			return;
		for (size_t i = 0; i < ncap; i++)
			nix[i] = -1;
		for (size_t i = 0; i < p->nstats; i++) {
			uint32_t k = ((uint32_t)(p->stats[i].cpu + 1) << 16) ^ p->stats[i].id;
			for (h = (k * 2654435761u) & (ncap - 1); nix[h] >= 0; h = (h + 1) & (ncap - 1))
				;
			nix[h] = (int32_t)i;
		}
		free(p->stat_ix);
		p->stat_ix = nix;
		p->stat_ix_cap = cap = ncap;
	}
	for (h = (key * 2654435761u) & (cap - 1); p->stat_ix[h] >= 0; h = (h + 1) & (cap - 1)) {
		struct apc_ltt_stat *s = &p->stats[p->stat_ix[h]];
		if (s->cpu == cpu && s->id == ev->id) {
			s->count++;
			*slot = p->stat_ix[h] + 1;
			return;
		}
	}
	if (p->nstats == p->stats_cap) {
		size_t ncap = p->stats_cap ? p->stats_cap * 2 : 64;
		struct apc_ltt_stat *ns = realloc(p->stats, ncap * sizeof *ns);
		if (!ns)
			return;
		p->stats = ns;
		p->stats_cap = ncap;
	}
	struct apc_ltt_stat *s = &p->stats[p->nstats];
	s->cpu = cpu;
	s->id = ev->id;
	s->facility = ev->fac ? ev->fac->name : "undefined";
	s->event = ev->def ? ev->def->name : "undefined";
	s->count = 1;
	s->became = role_name(p, ev->id, r->model);
	p->stat_ix[h] = (int32_t)p->nstats++;
	*slot = (int32_t)p->nstats;
}

/* The per-event part: a hit in the source's cache of recent ids. */
static inline void ltt_stat(struct apc_reader *r, struct ltt_priv *p, struct ltt_src *src,
			    const struct apc_ltt_raw *ev)
{
	int32_t slot = ev->id < 256 ? src->stat_cache[ev->id] : 0;

	if (slot > 0)
		p->stats[slot - 1].count++;
	else
		ltt_stat_slow(r, p, src, ev);
}

size_t apc_ltt_stats(struct apc_reader *r, struct apc_ltt_stat *out, size_t max)
{
	struct ltt_priv *p = r->priv;

	if (!p)
		return 0;
	for (size_t i = 0; i < p->nstats && i < max; i++) {
		out[i] = p->stats[i];
		out[i].became = role_name(p, p->stats[i].id, r->model);
	}
	return p->nstats;
}

/* ---- bid -------------------------------------------------------------- */

static int ltt_bid(struct apc_input *in)
{
	const char *const *names;
	size_t n;

	if (!apc_input_is_tree(in) || !apc_input_has(in, "info/system.xml"))
		return 0;
	if (apc_input_members(in, &names, &n))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (strncmp(names[i], "cpu/", 4) == 0)
			return 100;
	return 30;
}

/* ---- open ------------------------------------------------------------- */

/* Note damage in one file of the trace: the first is the run's error,
 * any later one (another CPU file) a line of its own in the report. */
static void ltt_damage(struct apc_reader *r, struct ltt_priv *p, const struct apc_err *e)
{
	if (!p->damaged) {
		p->damaged = 1;
		p->dmg_err = *e;
	} else {
		apc_model_more_damage(r->model, e);
	}
}

/*
 * system.xml: libxml2 in recover mode first (the real file is good XML);
 * the spec's own example has unquoted values (cpu=4), which libxml2
 * cannot recover attributes from, so the tolerant parser is the fallback.
 * A file cut short before its <system> start tag ends is damage at the
 * cut (libxml2 would recover a value cut in two: a block size of 819
 * for 8192), which the tolerant parser tells; one cut after that tag has
 * lost nothing read, and is taken.
 */
static int ltt_system(struct apc_reader *r, struct ltt_priv *p, struct apc_ltt_xnode **sys,
		      char *name, size_t name_len)
{
	uint8_t *buf;
	size_t len;
	struct apc_ltt_xnode *root = NULL, *d = NULL;
	struct apc_err perr;
	int st = ltt_slurp(r->inputs[0], "info/system.xml", &buf, &len, name, name_len, &r->err, NULL);

	if (st)
		return st;
	/* where its attributes are, for what is wrong with them */
	p->system_at = 0;
	for (size_t i = 0; i + 7 <= len; i++)
		if (buf[i] == '<' && !strncasecmp((const char *)buf + i + 1, "system", 6)) {
			p->system_at = (int64_t)i;
			break;
		}
	/* Its failure (nesting too deep) is the error only if libxml2
	 * finds no system either, as when it was only the fallback. */
	apc_err_clear(&perr);
	int pst = apc_ltt_xml_parse((const char *)buf, len, name, &d, &perr);
	if (pst == APC_ENOMEM) {
		free(buf);
		r->err = perr;
		return pst;
	}
	if (!pst && d->cut_msg) {
		const struct apc_ltt_xnode *x = apc_ltt_xml_child(d, "system");
		if (!x || x->cut == APC_LTT_CUT_TAG) {
			st = apc_err_set(&r->err, APC_EDATA, name, d->cut_off, "%s", d->cut_msg);
			apc_ltt_xml_free(d);
			free(buf);
			return st;
		}
	}
	xmlDocPtr doc = xmlReadMemory((const char *)buf, (int)len, "system.xml", NULL,
				      XML_PARSE_RECOVER | XML_PARSE_NONET | XML_PARSE_NOERROR |
					      XML_PARSE_NOWARNING);
	xmlNodePtr x = doc ? xmlDocGetRootElement(doc) : NULL;
	if (x && xmlStrcasecmp(x->name, (const xmlChar *)"system") == 0 && x->properties &&
	    xmlHasProp(x, (const xmlChar *)"ltt_block_size")) {
		/* Carry libxml2's view over into the same node shape. */
		root = apc_ltt_xml_element("system");
		for (xmlAttrPtr a = x->properties; root && a; a = a->next) {
			xmlChar *v = xmlNodeListGetString(doc, a->children, 1);
			(void)apc_ltt_xml_add_attr(root, (const char *)a->name, v ? (const char *)v : "");
			xmlFree(v);
		}
	}
	if (doc)
		xmlFreeDoc(doc);
	free(buf);
	if (!root && pst) {
		r->err = perr;
		return pst;
	}
	for (size_t i = 0; !root && i < d->nkids; i++)
		if (strcmp(d->kids[i]->name, "system") == 0)
			root = apc_ltt_xml_detach(d, i);
	apc_ltt_xml_free(d);
	if (!root)
		return apc_err_set(&r->err, APC_EDATA, name, 0, "no <system> element");
	*sys = root;
	return APC_OK;
}

static int ltt_eventdefs(struct apc_reader *r, struct ltt_priv *p)
{
	const char *const *names;
	size_t n;
	int st = apc_input_members(r->inputs[0], &names, &n);

	if (st)
		return apc_err_set(&r->err, APC_EIO, apc_input_path(r->inputs[0]), APC_NO_OFFSET,
				   "cannot list the trace members");
	for (size_t i = 0; i < n; i++) {
		uint8_t *buf;
		size_t len;
		char name[300];
		if (strncmp(names[i], "eventdefs/", 10) != 0)
			continue;
		struct apc_err cut;
		if ((st = ltt_slurp(r->inputs[0], names[i], &buf, &len, name, sizeof name, &r->err, &cut)))
			return st;
		st = apc_ltt_defs_add(&p->defs, (const char *)buf, len, name, &r->err);
		free(buf);
		if (cut.status < 0 && (st == APC_OK || (st == APC_EDATA && p->defs.cut))) {
			/* an archive cut it: the archive's damage, which
			 * says so, whatever the part before the cut parses
			 * as; that part is read as a folder's file cut there */
			r->err = cut;
			p->defs.cut = 1;
			st = APC_EDATA;
		}
		if (st == APC_EDATA && p->defs.cut) {
			/* Cut short: damage in that file, as in a CPU file;
			 * the events described before the cut are read, the
			 * others are undefined ids (their blocks skipped). */
			ltt_damage(r, p, &r->err);
			apc_err_clear(&r->err);
			st = APC_OK;
		}
		if (st)
			return st;
	}
	if (!p->defs.nfacs && p->damaged) {
		/* Cut before any facility: nothing can be sized. */
		r->err = p->dmg_err;
		p->damaged = 0;
		return r->err.status;
	}
	if (!p->defs.nfacs)
		return apc_err_set(&r->err, APC_EDATA, apc_input_path(r->inputs[0]), APC_NO_OFFSET,
				   "no eventdefs/*.xml: event sizes are unknown");
	return apc_ltt_defs_compile(&p->defs, &p->arch, &r->err);
}

/* Walk a control file with the given id map, calling fn for each event. */
static int ltt_control(struct apc_reader *r, struct ltt_priv *p, const char *rel,
		       const struct apc_ltt_ids *ids,
		       int (*fn)(struct apc_reader *, struct ltt_priv *, const struct apc_ltt_raw *))
{
	struct ltt_src s;
	struct apc_ltt_raw ev;
	int st;

	if (!apc_input_has(r->inputs[0], rel))
		return APC_OK;
	memset(&s, 0, sizeof s);
	if ((st = apc_input_open_member(r->inputs[0], rel, &s.s, &r->err)))
		return st;
	/* Messages name the trace too, as for the CPU files. */
	snprintf(s.name, sizeof s.name, "%s", apc_stream_name(s.s));
	st = apc_ltt_cpu_init(&s.w, -1, s.name, ltt_read_cb, &s, ids, p->arch.big_endian,
			      p->block_size, &r->err);
	/* What a control file says does not depend on when: the whole
	 * events of a block it ends in count even without block_end. */
	s.w.keep_untimed = 1;
	while (!st && (st = apc_ltt_cpu_next(&s.w, &ev, &r->err)) == APC_OK) {
		r->model->records_read++;
		if (ev.id != APC_LTT_ID_BLOCK_START && ev.id != APC_LTT_ID_BLOCK_END &&
		    ev.id != APC_LTT_ID_HEARTBEAT)
			st = fn(r, p, &ev);
	}
	if (s.w.undefined)
		apc_model_unmapped(r->model, "ltt undefined event id in a control file (rest of its block skipped)",
				   s.w.undefined);
	apc_ltt_cpu_free(&s.w);
	apc_stream_close(s.s);
	if (st == APC_EDATA) {
		ltt_damage(r, p, &r->err);
		apc_err_clear(&r->err);
		return APC_OK;
	}
	return st == APC_END ? APC_OK : st;
}

static int ltt_on_facility(struct apc_reader *r, struct ltt_priv *p, const struct apc_ltt_raw *ev)
{
	const char *name;
	size_t n;
	uint64_t base;

	if (ev->id != APC_LTT_ID_FACILITY_LOAD || !ev->def) {
		apc_model_unmapped(r->model, "ltt control/facilities event other than facility_load (ignored)", 1);
		return APC_OK;
	}
	if (apc_ltt_field_str(ev->def, ev->payload, ev->len, p->arch.big_endian, "name", &name, &n) ||
	    apc_ltt_field_u64(ev->def, ev->payload, ev->len, p->arch.big_endian, "base_code", &base)) {
		apc_model_unmapped(r->model, "ltt facility_load without a name or base_code (ignored)", 1);
		return APC_OK;
	}
	if (base >= APC_LTT_MAX_IDS) {
		apc_model_unmapped(r->model, "ltt facility_load with base_code over 65535 (ignored)", 1);
		return APC_OK;
	}
	int got = apc_ltt_facility_load(&p->defs, name, n, (uint32_t)base);
	if (got < 0)
		return apc_err_set(&r->err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
	if (got > 0) {
		p->undescribed_loads++;
		apc_model_unmapped(r->model,
				   "ltt facility_load of a facility no eventdefs file describes (its events stay undefined)",
				   1);
	}
	return APC_OK;
}

/* The spec's control/processes event: name, pid, ppid, ... */
static struct apc_ltt_type ctl_u4 = {.kind = APC_LTT_UINT, .size = 4, .fixed = 4};
static struct apc_ltt_type ctl_str = {.kind = APC_LTT_STRING, .fixed = -1};
static struct apc_ltt_field ctl_proc_fields[] = {
	{"name", "", &ctl_str},  {"pid", "", &ctl_u4},   {"ppid", "", &ctl_u4},
	{"tracer_pid", "", &ctl_u4}, {"uid", "", &ctl_u4}, {"euid", "", &ctl_u4},
	{"suid", "", &ctl_u4},   {"fsuid", "", &ctl_u4}, {"gid", "", &ctl_u4},
	{"egid", "", &ctl_u4},   {"sgid", "", &ctl_u4},  {"fsgid", "", &ctl_u4},
	{"state", "", &ctl_u4}};
static struct apc_ltt_type ctl_proc = {.kind = APC_LTT_STRUCT, .fields = ctl_proc_fields,
				       .nfields = 13, .fixed = -1};
static struct apc_ltt_evdef ctl_proc_ev = {"process", "Existing process", &ctl_proc, -1, 0};
static struct apc_ltt_field ctl_irq_fields[] = {
	{"number", "", &ctl_u4}, {"count", "", &ctl_u4}, {"controller", "", &ctl_str},
	{"name", "", &ctl_str}};
static struct apc_ltt_type ctl_irq = {.kind = APC_LTT_STRUCT, .fields = ctl_irq_fields,
				      .nfields = 4, .fixed = -1};
static struct apc_ltt_evdef ctl_irq_ev = {"interrupt", "Interrupt request number assignment",
					  &ctl_irq, -1, 0};

static int ltt_on_process(struct apc_reader *r, struct ltt_priv *p, const struct apc_ltt_raw *ev)
{
	const char *name;
	size_t n;
	uint64_t pid;

	if (apc_ltt_field_str(ev->def, ev->payload, ev->len, p->arch.big_endian, "name", &name, &n) ||
	    apc_ltt_field_u64(ev->def, ev->payload, ev->len, p->arch.big_endian, "pid", &pid)) {
		apc_model_unmapped(r->model, "ltt control/processes entry without a name or pid (ignored)", 1);
		return APC_OK;
	}
	struct ltt_proc *np = realloc(p->procs, (p->nprocs + 1) * sizeof *np);
	if (!np)
		return apc_err_set(&r->err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
	p->procs = np;
	np[p->nprocs].pid = (int32_t)pid;
	np[p->nprocs].name = strndup(name, n);
	if (!np[p->nprocs].name)
		return apc_err_set(&r->err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
	p->nprocs++;
	return APC_OK;
}

static int ltt_on_interrupt(struct apc_reader *r, struct ltt_priv *p, const struct apc_ltt_raw *ev)
{
	(void)p;
	(void)ev;
	apc_model_unmapped(r->model, "ltt control/interrupts entry (irq names not used)", 1);
	return APC_OK;
}

/* "12.000345" seconds -> ns, exactly. */
static int ltt_parse_secs(const char *s, uint64_t *ns)
{
	uint64_t sec = 0, frac = 0;
	int digits = 0;

	if (!s || !*s)
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (sec > UINT64_MAX / 10 / 1000000000u)
			return -1;
		sec = sec * 10 + (uint64_t)(*s - '0');
	}
	if (*s == '.')
		for (s++; *s >= '0' && *s <= '9'; s++)
			if (digits < 9) {
				frac = frac * 10 + (uint64_t)(*s - '0');
				digits++;
			}
	if (*s)
		return -1;
	while (digits++ < 9)
		frac *= 10;
	*ns = sec * 1000000000u + frac;
	return 0;
}

static int ltt_mark_cmp(const void *a, const void *b)
{
	const struct ltt_mark *x = a, *y = b;

	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/*
 * info/bookmarks.xml: <location name= cpu= time= | start_time= end_time=
 * | cycle= | start_cycle=>text</location>.  Times are seconds on the
 * trace clock; cycles go through the linear fit of that CPU's first
 * block (extrapolated), which is all that is known before walking.
 */
static int ltt_bookmarks(struct apc_reader *r, struct ltt_priv *p)
{
	uint8_t *buf;
	size_t len;
	struct apc_ltt_xnode *d;
	int st;

	if (!apc_input_has(r->inputs[0], "info/bookmarks.xml"))
		return APC_OK;
	char name[300];
	struct apc_err cut;
	if ((st = ltt_slurp(r->inputs[0], "info/bookmarks.xml", &buf, &len, name, sizeof name,
			    &r->err, &cut)))
		return st;
	st = apc_ltt_xml_parse((const char *)buf, len, name, &d, &r->err);
	free(buf);
	if (st)
		return st;
	if (cut.status < 0) {
		/* an archive cut it: its damage; the bookmarks whole
		 * before the cut are placed, as from a folder's file */
		ltt_damage(r, p, &cut);
	} else if (d->cut_msg) {
		/* The bookmarks whole before the cut are placed. */
		struct apc_err e;
		apc_err_set(&e, APC_EDATA, name, d->cut_off, "%s", d->cut_msg);
		ltt_damage(r, p, &e);
	} else if (!apc_ltt_xml_child(d, "bookmarks")) {
		/* whole but holding none: empty, or cut right after a
		 * comment, as an eventdefs file with no facility is */
		struct apc_err e;
		apc_err_set(&e, APC_EDATA, name, (int64_t)len,
			    len ? "no <bookmarks> element: the file ends before it (cut short?)"
				: "empty file: no <bookmarks> element (cut short?)");
		ltt_damage(r, p, &e);
	}
	const struct apc_ltt_xnode *bm = apc_ltt_xml_child(d, "bookmarks");
	for (size_t i = 0; bm && i < bm->nkids; i++) {
		const struct apc_ltt_xnode *l = bm->kids[i];
		const char *t = apc_ltt_xml_attr(l, "time"), *cy = apc_ltt_xml_attr(l, "cycle");
		const char *cpu = apc_ltt_xml_attr(l, "cpu"), *nm = apc_ltt_xml_attr(l, "name");
		uint64_t ts = 0;
		int core = cpu ? atoi(cpu) : -1;
		if (strcmp(l->name, "location") != 0 || l->cut == APC_LTT_CUT_TAG)
			continue;
		if (!t)
			t = apc_ltt_xml_attr(l, "start_time");
		if (!cy)
			cy = apc_ltt_xml_attr(l, "start_cycle");
		int ok = t ? ltt_parse_secs(t, &ts) == 0 : 0;
		if (!ok && cy) {
			const struct ltt_src *s = NULL;
			for (size_t k = 0; k < p->nsrc; k++)
				if (p->src[k].w.cpu == (core < 0 ? 0 : core) || (!s && core < 0))
					s = &p->src[k];
			char *end;
			uint64_t c = strtoull(cy, &end, 10);
			/* the fit needs the block's block_end: not of an
			 * empty file, nor of a first block cut before it */
			if (s && s->w.have_block && end != cy && !*end) {
				ts = apc_ltt_interp(c, s->w.t0, s->w.bs_cyc, s->w.t1, s->w.be_cyc);
				ok = 1;
			}
		}
		if (!ok) {
			apc_model_unmapped(r->model, "ltt bookmark without a usable time", 1);
			continue;
		}
		if (ts < p->first_ts) {
			/* before the capture's zero: it would show at no time */
			apc_model_unmapped(r->model, "ltt bookmarks before the trace's first block (moved to its start)", 1);
			ts = p->first_ts;
		}
		struct ltt_mark *nmk = realloc(p->marks, (p->nmarks + 1) * sizeof *nmk);
		if (!nmk) {
			st = apc_err_set(&r->err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
			break;
		}
		p->marks = nmk;
		size_t tl = (nm ? strlen(nm) : 0) + (l->text ? strlen(l->text) : 0) + 3;
		char *text = malloc(tl);
		if (!text) {
			st = apc_err_set(&r->err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
			break;
		}
		snprintf(text, tl, "%s%s%s", nm ? nm : "", nm && l->text && *l->text ? ": " : "",
			 l->text ? l->text : "");
		nmk[p->nmarks].ts = ts;
		nmk[p->nmarks].core = core;
		nmk[p->nmarks].text = text;
		p->nmarks++;
	}
	apc_ltt_xml_free(d);
	if (p->nmarks)
		qsort(p->marks, p->nmarks, sizeof *p->marks, ltt_mark_cmp);
	return st;
}

static void ltt_declare(struct apc_reader *r, struct ltt_priv *p)
{
	struct apc_model *m = r->model;
	static const struct { const char *ev, *type, *name; enum ltt_role role; } fixed[] = {
		{"irq_entry", "ltt_irq", "IRQ", ROLE_IRQ},
		{"soft_irq", "ltt_softirq", "Soft IRQ", ROLE_SOFTIRQ},
		{"syscall_entry", "ltt_syscall", "System call", ROLE_SYSCALL},
		{"trap_entry", "ltt_trap", "Trap", ROLE_TRAP}};
	struct apc_counter_decl *d = apc_model_add_counter(m, "ltt_cpu_activity");

	if (d) {
		d->cls = APC_CLASS_ACTIVITY;
		d->per_cpu = APC_YES;
		d->cores = m->meta.ncores;
		apc_strset(&d->title, "LTT");
		apc_strset(&d->name, "CPU Activity");
		apc_strset(&d->description, "Which process each CPU ran, from LTT schedchange events");
		d->activities = calloc(1, sizeof *d->activities);
		if (d->activities) {
			d->nactivities = 1;
			apc_strset(&d->activities[0].name, "Running");
		}
		p->act_ctr = d->id;
	}
	for (uint32_t id = 0; id < p->ids.n; id++) {
		const struct apc_ltt_evdef *e = p->ids.ev[id];
		const struct apc_ltt_facility *f = p->ids.fac[id];
		struct ltt_idinfo *ii = &p->idi[id];
		char type[256];
		ii->ctr = -1;
		ii->role = ROLE_NONE;
		ii->plain = 0;
		ii->ref_slot = 0;
		if (!e)
			continue;
		if (id == APC_LTT_ID_FACILITY_LOAD || id == APC_LTT_ID_BLOCK_START ||
		    id == APC_LTT_ID_BLOCK_END || id == APC_LTT_ID_HEARTBEAT)
			continue;
		ii->role = ROLE_COUNTER;
		int core = strcmp(f->name, "core") == 0;
		if (core && strcmp(e->name, "schedchange") == 0) {
			ii->role = ROLE_SCHED;
			continue;
		}
		if (core && (strcmp(e->name, "process_fork") == 0 || strcmp(e->name, "process_exit") == 0)) {
			ii->role = e->name[8] == 'f' ? ROLE_FORK : ROLE_EXIT;
			continue;
		}
		const char *title = f->name, *name = e->name;
		size_t k;
		for (k = 0; core && k < 4; k++)
			if (strcmp(e->name, fixed[k].ev) == 0)
				break;
		if (core && k < 4) {
			ii->role = fixed[k].role;
			snprintf(type, sizeof type, "%s", fixed[k].type);
			title = "LTT";
			name = fixed[k].name;
		} else {
			if (core && strcmp(e->name, "process") == 0)
				ii->role = ROLE_PROCESS;
			if (core && strcmp(e->name, "file_system") == 0)
				ii->role = ROLE_FS;
			snprintf(type, sizeof type, "ltt_%s_%s", f->name, e->name);
		}
		d = apc_model_find_counter(m, type);
		if (!d) {
			d = apc_model_add_counter(m, type);
			if (!d)
				continue;
			d->cls = APC_CLASS_INCIDENT;
			d->per_cpu = APC_YES;
			apc_strset(&d->category, "LTT");
			apc_strset(&d->title, title);
			apc_strset(&d->name, name);
			apc_strset(&d->description, e->description);
		}
		ii->ctr = (int32_t)d->id;
		ii->plain = ii->role == ROLE_COUNTER || ii->role >= ROLE_IRQ;
	}
}

/*
 * Resolve the fields each role reads (ltt_map) once per event id, so an
 * event costs a bounds check and a load, not a walk with string
 * compares.  The refs give what apc_ltt_field_u64/_str give.
 */
static int ltt_refs(struct apc_reader *r, struct ltt_priv *p)
{
	static const struct { uint8_t role; const char *f[2]; int str[2]; } want[] = {
		{ROLE_SCHED, {"in", "out_state"}, {0, 0}},
		{ROLE_FORK, {"child_pid", NULL}, {0, 0}},
		{ROLE_PROCESS, {"event_sub_id", "event_data1"}, {0, 0}},
		{ROLE_FS, {"event_sub_id", "file_name"}, {0, 1}}};

	for (uint32_t id = 0; id < p->ids.n; id++) {
		size_t k;
		p->idi[id].ref_slot = 0;
		for (k = 0; k < sizeof want / sizeof want[0]; k++)
			if (want[k].role == p->idi[id].role)
				break;
		if (k == sizeof want / sizeof want[0] || !p->ids.ev[id])
			continue;
		struct ltt_idrefs *nr = realloc(p->refs, (p->nrefs + 1) * sizeof *nr);
		if (!nr)
			return apc_err_set(&r->err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
		p->refs = nr;
		for (int j = 0; j < 2; j++)
			apc_ltt_field_ref(&nr[p->nrefs].f[j], p->ids.ev[id], want[k].f[j] ? want[k].f[j] : "",
					  want[k].str[j]);
		p->idi[id].ref_slot = (uint32_t)++p->nrefs;
	}
	return APC_OK;
}

/*
 * CPUs with no events at all: one info/system.xml declares (cpu="N":
 * tracefiles cpu/0 to cpu/N-1) with no tracefile, or a tracefile with
 * no byte (a tracefile is blocks framed by block_start and block_end:
 * an empty one lost its data).  The format leaves the numbers of unused
 * CPU slots out, which cannot be told from a lost file: both are damage
 * (the lowest CPU named, with how many in all), and counted, so none
 * goes unreported behind other damage.  APC_OK or APC_ENOMEM.
 */
static int ltt_lost_cpus(struct apc_reader *r, struct ltt_priv *p, unsigned long declared)
{
	uint8_t *have;
	uint64_t missing = 0, empty = 0;
	long first = -1;               /* the lowest CPU with no events */
	const char *first_name = NULL; /* its tracefile, if it has one */
	struct apc_err e;
	unsigned long told = declared; /* what system.xml says, for the message */

	_Static_assert(APC_MAX_CORES == 4096, "the message below says 4096");

	if (declared > APC_MAX_CORES)
		declared = APC_MAX_CORES;
	if (!(have = calloc(declared ? declared : 1, 1)))
		return apc_err_set(&r->err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
	for (size_t i = 0; i < p->nsrc; i++) {
		const struct ltt_src *s = &p->src[i];
		if ((unsigned long)s->w.cpu < declared)
			have[s->w.cpu] = 1;
		if (s->w.done && !s->w.nblocks) {
			empty++;
			if (first < 0 || s->w.cpu < first) {
				first = s->w.cpu;
				first_name = s->name;
			}
		}
	}
	for (unsigned long cpu = 0; cpu < declared; cpu++)
		if (!have[cpu]) {
			missing++;
			if (first < 0 || (long)cpu < first) {
				first = (long)cpu;
				first_name = NULL;
			}
		}
	free(have);
	if (first < 0)
		return APC_OK;
	if (first_name)
		apc_err_set(&e, APC_EDATA, first_name, APC_NO_OFFSET,
			    "empty tracefile: the capture has no events of CPU %ld", first);
	else
		apc_err_set(&e, APC_EDATA, apc_input_path(r->inputs[0]), APC_NO_OFFSET,
			    "no cpu/%ld tracefile, though info/system.xml declares %lu CPUs%s: the capture "
			    "has no events of CPU %ld", first, told,
			    told > declared ? " (the first 4096 looked for)" : "", first);
	if (missing + empty > 1) {
		size_t k = strlen(e.msg);
		snprintf(e.msg + k, sizeof e.msg - k, " (%llu CPU tracefiles missing or empty in all)",
			 (unsigned long long)(missing + empty));
	}
	ltt_damage(r, p, &e);
	if (missing)
		apc_model_unmapped(r->model, "ltt CPU tracefiles info/system.xml declares that are "
				   "missing (no events of their CPU)", missing);
	if (empty)
		apc_model_unmapped(r->model, "ltt CPU tracefiles that are empty (no events of their CPU)",
				   empty);
	return APC_OK;
}

/*
 * The summary's "uname", the attribute Streamline shows for the target's
 * system: gatord writes uname(2)'s sysname, nodename, release, version
 * and machine, then "GNU/Linux".  system.xml holds the same fields, from
 * uname(1), and the operating system's own name in place of the last.
 * Fields the trace lacks are left out; none at all, no attribute.
 */
static void ltt_uname(struct apc_model *m, const struct apc_ltt_xnode *sys)
{
	static const char *const field[] = {"kernel_name", "node_name", "kernel_release",
					    "kernel_version", "machine", "operating_system"};
	char buf[1024];
	size_t len = 0;

	for (size_t i = 0; i < sizeof field / sizeof field[0]; i++) {
		const char *v = apc_ltt_xml_attr(sys, field[i]);
		if (!v || !*v)
			continue;
		int k = snprintf(buf + len, sizeof buf - len, "%s%s", len ? " " : "", v);
		if (k < 0 || (size_t)k >= sizeof buf - len) {
			buf[len] = '\0'; /* the fields that fit whole (uname's are 65 bytes) */
			break;
		}
		len += (size_t)k;
	}
	if (len)
		apc_model_add_attr(m, "uname", buf);
}

static int ltt_open(struct apc_reader *r)
{
	struct apc_input *in = r->inputs[0];
	struct ltt_priv *p = calloc(1, sizeof *p);
	struct apc_ltt_xnode *sys = NULL;
	const char *const *names;
	size_t n;
	int st;

	if (!p)
		return apc_err_set(&r->err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
	r->priv = p;
	if (!apc_input_is_tree(in))
		return apc_err_set(&r->err, APC_EIO, apc_input_path(in), APC_NO_OFFSET,
				   "an LTT trace is a directory (or an archive of one)");
	char sysname[300];
	if ((st = ltt_system(r, p, &sys, sysname, sizeof sysname)))
		return st;
	const char *v = apc_ltt_xml_attr(sys, "endian");
	p->arch.big_endian = v && (strcasestr(v, "big") != NULL);
	if (apc_ltt_arch_set(&p->arch, apc_ltt_xml_attr(sys, "arch_size")))
		apc_ltt_arch_set(&p->arch, "ILP32"); /* the only size LTT 2003-5 ran on */
	v = apc_ltt_xml_attr(sys, "ltt_block_size");
	unsigned long bs = v ? strtoul(v, NULL, 10) : 0;
	if (bs < 64 || bs > LTT_MAX_BLOCK) {
		/* v points into sys: format the message before freeing it. */
		st = apc_err_set(&r->err, APC_EDATA, sysname, p->system_at,
				 "<system> ltt_block_size '%s' is missing or not in 64..%u", v ? v : "",
				 LTT_MAX_BLOCK);
		apc_ltt_xml_free(sys);
		return st;
	}
	p->block_size = bs;
	v = apc_ltt_xml_attr(sys, "cpu");
	/* the CPUs the trace declares: cpu/0 to cpu/N-1 (0: not said) */
	unsigned long declared = v ? strtoul(v, NULL, 10) : 0;
	unsigned long ncpu = v ? declared : 1;
	/* Target name: host name and kernel, as uname would show them. */
	const char *host = apc_ltt_xml_attr(sys, "node_name"), *rel = apc_ltt_xml_attr(sys, "kernel_release");
	char tn[512];
	snprintf(tn, sizeof tn, "%s%s%s%s", host ? host : "LTT trace", rel ? " (Linux " : "",
		 rel ? rel : "", rel ? ")" : "");
	apc_strset(&r->model->meta.target_name, tn);
	ltt_uname(r->model, sys);
	static const char *const keep[] = {"kernel_name", "kernel_release", "kernel_version",
					   "machine", "arch_size", "endian", "ltt_major_version",
					   "ltt_minor_version", NULL};
	for (size_t i = 0; keep[i]; i++)
		if ((v = apc_ltt_xml_attr(sys, keep[i])))
			apc_model_add_attr(r->model, keep[i], v);
	apc_ltt_xml_free(sys);

	if ((st = ltt_eventdefs(r, p)))
		return st;
	if ((st = apc_ltt_ids_build(&p->ids, &p->defs, &r->err)))
		return st;
	/* control/facilities may move facility bases; then renumber. */
	st = ltt_control(r, p, "control/facilities", &p->ids, ltt_on_facility);
	if (!st) {
		apc_ltt_ids_free(&p->ids);
		st = apc_ltt_ids_build(&p->ids, &p->defs, &r->err);
	}
	/* control/processes and interrupts: every non-builtin id is the
	 * spec's process / interrupt description.  An overlay of the
	 * builtins (all below 20, and the table always holds them) with
	 * everything else, to 65535, as `rest`. */
	const struct apc_ltt_facility *cfac[APC_LTT_ID_HEARTBEAT + 1];
	const struct apc_ltt_evdef *cev[APC_LTT_ID_HEARTBEAT + 1];
	struct apc_ltt_ids ctl = {cfac, cev, APC_LTT_ID_HEARTBEAT + 1, &ctl_proc_ev};
	for (uint32_t id = 0; !st && id < ctl.n; id++) {
		int bi = id == APC_LTT_ID_FACILITY_LOAD || id == APC_LTT_ID_BLOCK_START ||
			 id == APC_LTT_ID_BLOCK_END || id == APC_LTT_ID_HEARTBEAT;
		cfac[id] = bi ? apc_ltt_ids_fac(&p->ids, id) : NULL;
		cev[id] = bi ? apc_ltt_ids_ev(&p->ids, id) : &ctl_proc_ev;
	}
	if (!st)
		st = ltt_control(r, p, "control/processes", &ctl, ltt_on_process);
	for (uint32_t id = 0; !st && id < ctl.n; id++)
		if (cev[id] == &ctl_proc_ev)
			cev[id] = &ctl_irq_ev;
	ctl.rest = &ctl_irq_ev;
	if (!st)
		st = ltt_control(r, p, "control/interrupts", &ctl, ltt_on_interrupt);
	if (st)
		return st;

	/* The CPU files, "cpu/N". */
	if (apc_input_members(in, &names, &n))
		return apc_err_set(&r->err, APC_EIO, apc_input_path(in), APC_NO_OFFSET,
				   "cannot list the trace members");
	p->src = calloc(n ? n : 1, sizeof *p->src);
	if (!p->src)
		return apc_err_set(&r->err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
	for (size_t i = 0; i < n; i++) {
		const char *nm = names[i];
		char *end;
		if (strncmp(nm, "cpu/", 4) != 0 || nm[4] < '0' || nm[4] > '9')
			continue;
		unsigned long cpu = strtoul(nm + 4, &end, 10);
		if (*end || cpu >= APC_MAX_CORES)
			continue;
		if ((p->nsrc + 1) * p->block_size > LTT_MAX_ALL_BLOCKS)
			return apc_err_set(&r->err, APC_ENOMEM, nm, APC_NO_OFFSET,
					   "%zu CPU files of %zu-byte blocks exceed the memory limit",
					   p->nsrc + 1, p->block_size);
		struct ltt_src *s = &p->src[p->nsrc];
		snprintf(s->name, sizeof s->name, "%s", nm);
		s->current_pid = -1;
		if ((st = apc_input_open_member(in, nm, &s->s, &r->err)))
			return st;
		/* Messages name the trace too ("trace.tar:cpu/0"), not just the member. */
		snprintf(s->name, sizeof s->name, "%s", apc_stream_name(s->s));
		p->nsrc++;
		if ((st = apc_ltt_cpu_init(&s->w, (int)cpu, s->name, ltt_read_cb, s, &p->ids,
					   p->arch.big_endian, p->block_size, &r->err)))
			return st;
		if (cpu + 1 > ncpu)
			ncpu = cpu + 1;
		int64_t sz = apc_stream_size(s->s);
		if (sz > 0)
			r->progress_total += (uint64_t)sz;
	}
	if (!p->nsrc)
		return apc_err_set(&r->err, APC_EDATA, apc_input_path(in), APC_NO_OFFSET,
				   "no cpu/N tracefiles in the trace");
	if (ncpu > APC_MAX_CORES)
		ncpu = APC_MAX_CORES;
	if ((st = apc_model_set_cores(r->model, (uint32_t)ncpu)))
		return apc_err_set(&r->err, st, NULL, APC_NO_OFFSET, "out of memory");

	size_t ra = LTT_READAHEAD_ALL / p->nsrc;
	if (ra > LTT_READAHEAD)
		ra = LTT_READAHEAD;
	size_t qcap = LTT_RUN_ALL / p->nsrc / sizeof(struct apc_ltt_raw);
	if (qcap > LTT_RUN)
		qcap = LTT_RUN;
	if (qcap < 8)
		qcap = 8;
	for (size_t i = 0; i < p->nsrc; i++) {
		if ((st = apc_ltt_cpu_readahead(&p->src[i].w, ra, &r->err)))
			return st;
		p->src[i].qcap = qcap;
		if (!(p->src[i].q = malloc(qcap * sizeof *p->src[i].q)))
			return apc_err_set(&r->err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
	}

	/* First blocks: the microsecond decision and the start time. */
	int all_small = 1, any = 0;
	for (size_t i = 0; i < p->nsrc; i++) {
		struct ltt_src *s = &p->src[i];
		st = apc_ltt_cpu_load(&s->w, &r->err);
		if (st == APC_END)
			continue;
		if (st == APC_EDATA) {
			/* Damage in the first block ends this CPU file only,
			 * as anywhere else in it: the others are converted. */
			ltt_damage(r, p, &r->err);
			apc_err_clear(&r->err);
			s->qst = APC_END;
			/* A block cut before its block_end still has its
			 * block_start: a time the trace had (the start), and
			 * a sub-second field of a first block. */
			if (!s->w.cut_start)
				continue;
		} else if (st) {
			return st;
		}
		any = 1;
		if (s->w.bs_sub >= 1000000 || (s->w.have_block && s->w.be_sub >= 1000000))
			all_small = 0;
	}
	if ((st = ltt_lost_cpus(r, p, declared)))
		return st;
	p->subsec = any && all_small ? APC_LTT_SUBSEC_US : APC_LTT_SUBSEC_NS;
	uint64_t first = UINT64_MAX;
	for (size_t i = 0; i < p->nsrc; i++) {
		struct ltt_src *s = &p->src[i];
		s->w.subsec = p->subsec;
		if (s->w.have_block || s->w.cut_start) {
			uint64_t t0 = apc_ltt_timespec_ns(s->w.bs_s, s->w.bs_sub, p->subsec);
			s->w.t0 = t0;
			if (s->w.have_block)
				s->w.t1 = apc_ltt_timespec_ns(s->w.be_s, s->w.be_sub, p->subsec);
			if (t0 < first)
				first = t0;
		}
	}
	if (first == UINT64_MAX)
		first = 0;
	p->first_ts = first;
	r->model->meta.wall_clock_ns = first;
	r->model->meta.monotonic_delta = first;
	r->model->meta.sample_rate = 0;
	apc_strset(&r->model->meta.source_format, "ltt");
	apc_model_add_attr(r->model, "ltt_subsecond_unit",
			   p->subsec == APC_LTT_SUBSEC_US ? "us" : "ns");
	if (!(p->idi = calloc(p->ids.n, sizeof *p->idi)))
		return apc_err_set(&r->err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
	ltt_declare(r, p);
	if ((st = ltt_refs(r, p)))
		return st;
	return ltt_bookmarks(r, p);
}

/* ---- next ------------------------------------------------------------- */

/* a before b in the merge: earlier, or as early from a lower CPU file */
static inline int ltt_before(const struct ltt_src *a, const struct ltt_src *b)
{
	return a->cur->ts < b->cur->ts || (a->cur->ts == b->cur->ts && a < b);
}

/* Move heap[i] down to its place. */
static inline void ltt_heap_down(struct ltt_priv *p, size_t i)
{
	struct ltt_src *x = p->heap[i];

	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= p->nheap)
			break;
		if (c + 1 < p->nheap && ltt_before(p->heap[c + 1], p->heap[c]))
			c++;
		if (!ltt_before(p->heap[c], x))
			break;
		p->heap[i] = p->heap[c];
		i = c;
	}
	p->heap[i] = x;
}

/* heap[0]'s next event is later now, or it has none left. */
static inline void ltt_heap_top_moved(struct ltt_priv *p)
{
	if (!p->heap[0]->have)
		p->heap[0] = p->heap[--p->nheap];
	if (p->nheap)
		ltt_heap_down(p, 0);
}

static inline int ltt_advance(struct apc_reader *r, struct ltt_priv *p, struct ltt_src *s)
{
	if (s->qi == s->qn && s->qst == APC_OK) {
		s->qn = apc_ltt_cpu_run(&s->w, s->q, s->qcap, &s->qst, &s->qerr);
		s->qi = 0;
	}
	s->have = s->qi < s->qn;
	if (s->have) {
		s->cur = &s->q[s->qi++];
		return APC_OK;
	}
	if (s->qst == APC_END)
		return APC_OK;
	if (s->qst == APC_EDATA) {
		/* This CPU ends at its damage; the others go on. */
		ltt_damage(r, p, &s->qerr);
		s->qst = APC_END;
		return APC_OK;
	}
	r->err = s->qerr;
	return s->qst;
}

static int32_t ltt_wait(uint64_t out_state)
{
	if (out_state == 0)
		return APC_WAIT_CONTENTION; /* preempted while runnable */
	if (out_state == 2)
		return APC_WAIT_IO;         /* TASK_UNINTERRUPTIBLE */
	return APC_WAIT_OTHER;
}

/*
 * A Link for pid (LTT has no thread groups: pid and tid are the same).
 * Its cookie is the process image's: 0 says the kernel or idle, right
 * for the idle task and a kernel thread (kernel != 0), and -1 an image
 * not known, which is what LTT leaves a forked or listed process.  The
 * pid is remembered, so a task first seen switched in gets its Link
 * then (tasks running before the trace began and missing from
 * control/processes, which is empty in the one real trace).
 */
static int ltt_linked(const struct ltt_priv *p, int32_t pid)
{
	if ((uint32_t)pid < LTT_PID_BITS)
		return p->linked_bits && (p->linked_bits[(uint32_t)pid / 64] >> ((uint32_t)pid % 64) & 1);
	return apc_map64_find(&p->linked, (uint64_t)(uint32_t)pid, NULL);
}

static int ltt_link(struct ltt_priv *p, struct apc_batch *b, uint64_t ts, int core, int32_t pid,
		    int kernel)
{
	struct apc_event *e;

	if ((uint32_t)pid < LTT_PID_BITS) {
		/* 512 KiB of address space; only the pages pids touch are used */
		if (!p->linked_bits && !(p->linked_bits = calloc(LTT_PID_BITS / 64, sizeof *p->linked_bits)))
			return -1;
		p->linked_bits[(uint32_t)pid / 64] |= 1ull << ((uint32_t)pid % 64);
	} else if (apc_map64_put(&p->linked, (uint64_t)(uint32_t)pid, 1) < 0) {
		return -1;
	}
	if (!(e = apc_batch_add(b, APC_EV_LINK, ts, core)))
		return -1;
	e->u.link.cookie = kernel || pid == 0 ? 0 : -1;
	e->u.link.pid = pid;
	e->u.link.tid = pid;
	return 0;
}

/* One occurrence of the event as a value of counter ctr; 0 or -1. */
static inline int ltt_count(struct apc_batch *b, const struct apc_ltt_raw *ev, int core, int32_t ctr)
{
	struct apc_event *e = apc_batch_add(b, APC_EV_COUNTER, ev->ts, core);

	if (!e)
		return -1;
	e->u.counter.counter = (uint32_t)ctr;
	e->u.counter.pid = APC_NO_PID;
	e->u.counter.value = 1;
	return 0;
}

/* Map one raw event; returns 0 or -1 on allocation failure. */
static int ltt_map(struct apc_reader *r, struct ltt_priv *p, struct ltt_src *s,
		   const struct apc_ltt_raw *ev, struct apc_batch *b)
{
	int be = p->arch.big_endian, core = ev->cpu;
	uint64_t v = 0, v1 = 0;
	struct apc_event *e;
	const struct ltt_idinfo *ii = ltt_id(p, ev->id);
	uint8_t role = ii->role;
	const struct apc_ltt_fieldref *f = NULL;

	ltt_stat(r, p, s, ev); /* the caller counts the record */
	if (ii->plain)
		return ltt_count(b, ev, core, ii->ctr); /* most events: one branch */
	if (role == ROLE_NONE)
		return 0;
	if (role == ROLE_COUNTER || role >= ROLE_IRQ)
		goto counter; /* most events: nothing but their counter */
	if (ii->ref_slot)
		f = p->refs[ii->ref_slot - 1].f;
	if (role == ROLE_SCHED) {
		if (!f || apc_ltt_ref_u64(&f[0], ev->payload, ev->len, be, &v)) {
			apc_model_unmapped(r->model, "ltt schedchange without an 'in' field", 1);
			return 0;
		}
		if (apc_ltt_ref_u64(&f[1], ev->payload, ev->len, be, &v1))
			v1 = 1;
		s->current_pid = (int32_t)v;
		if (!ltt_linked(p, (int32_t)v) && ltt_link(p, b, ev->ts, core, (int32_t)v, 0))
			return -1;
		if (!(e = apc_batch_add(b, APC_EV_ACTIVITY, ev->ts, core)))
			return -1;
		e->u.activity.counter = p->act_ctr;
		/* activity1 "Running"; the swapper (pid 0) is idle */
		e->u.activity.activity = v ? 1 : 0;
		e->u.activity.tid = (int32_t)v;
		e->u.activity.wait = ltt_wait(v1);
		return 0;
	}
	if (role == ROLE_FORK) {
		if (f && !apc_ltt_ref_u64(&f[0], ev->payload, ev->len, be, &v))
			return ltt_link(p, b, ev->ts, core, (int32_t)v, 0);
		apc_model_unmapped(r->model, "ltt process_fork without a readable child_pid", 1);
		return 0;
	}
	if (role == ROLE_EXIT) {
		if (s->current_pid < 0) {
			/* the exiting task is the CPU's current one: unknown yet */
			apc_model_unmapped(r->model, "ltt process_exit before its CPU's first schedchange", 1);
			return 0;
		}
		if (!(e = apc_batch_add(b, APC_EV_TASK_EXIT, ev->ts, core)))
			return -1;
		e->u.sched.tid = s->current_pid;
		return 0;
	}
	if (role == ROLE_PROCESS && f && !apc_ltt_ref_u64(&f[0], ev->payload, ev->len, be, &v)) {
		/* TRACE_EV_PROCESS_KTHREAD 1 / FORK 2: data1 is the new pid;
		 * EXIT 3 is the current process. */
		if ((v == 1 || v == 2) &&
		    !apc_ltt_ref_u64(&f[1], ev->payload, ev->len, be, &v1) &&
		    ltt_link(p, b, ev->ts, core, (int32_t)v1, v == 1))
			return -1;
		if (v == 3 && s->current_pid >= 0) {
			if (!(e = apc_batch_add(b, APC_EV_TASK_EXIT, ev->ts, core)))
				return -1;
			e->u.sched.tid = s->current_pid;
		}
	}
	if (role == ROLE_FS && s->current_pid >= 0 && f &&
	    !apc_ltt_ref_u64(&f[0], ev->payload, ev->len, be, &v) && v == 3) {
		const char *nm;
		size_t n;
		if (!apc_ltt_ref_str(&f[1], ev->payload, ev->len, be, &nm, &n) && n) {
			const char *slash = memrchr(nm, '/', n);
			if (slash && (size_t)(slash + 1 - nm) < n) {
				n -= (size_t)(slash + 1 - nm);
				nm = slash + 1;
			}
			if (!(e = apc_batch_add(b, APC_EV_THREAD_NAME, ev->ts, core)))
				return -1;
			e->u.name.id = s->current_pid;
			if (!(e->u.name.name = apc_batch_strdup(b, nm, n)))
				return -1;
		}
	}
counter:
	return ii->ctr < 0 ? 0 : ltt_count(b, ev, core, ii->ctr);
}

/* Report the blocks cut short at an undefined id, and the events of a
 * block cut before its block_end, once, at the end (or at the damage
 * that ends the read). */
static void ltt_report_undefined(struct apc_reader *r, struct ltt_priv *p)
{
	for (size_t i = 0; i < p->nsrc; i++) {
		struct apc_ltt_cpu *w = &p->src[i].w;
		if (w->undefined && w->have_undef == 1 && !p->damaged_before_cpus &&
		    !p->undescribed_loads) {
			/* Nothing explains it: a damaged event header, or an
			 * eventdefs file the trace should have come with. */
			struct apc_err e;
			w->have_undef = 2; /* told once */
			apc_err_set(&e, APC_EDATA, w->name, (int64_t)w->undef_off,
				    "event id %u is described by no eventdefs file (a damaged event "
				    "header, or eventdefs that lack it?): the rest of its block is "
				    "skipped, and of %" PRIu64 " block%s in all in this file",
				    w->undef_id, w->undefined, w->undefined == 1 ? "" : "s");
			ltt_damage(r, p, &e);
		}
		if (w->undefined) {
			apc_model_unmapped(r->model, "ltt undefined event id (rest of its block skipped)",
					   w->undefined);
			w->undefined = 0;
		}
		if (w->untimed) {
			apc_model_unmapped(r->model,
					   "ltt events of a block cut before its block_end (no time: dropped)",
					   w->untimed);
			w->untimed = 0;
		}
	}
}

/* Bytes read so far: the blocks taken from every CPU file, and the
 * bytes of a block a file ends in once it is met. */
static void ltt_progress(struct apc_reader *r, const struct ltt_priv *p)
{
	r->progress_done = 0;
	for (size_t i = 0; i < p->nsrc; i++) {
		const struct apc_ltt_cpu *w = &p->src[i].w;
		r->progress_done += w->cut_st ? w->cut_off
					      : w->block_off + (w->have_block ? p->block_size : 0);
	}
}

static int ltt_next(struct apc_reader *r, struct apc_batch *b)
{
	struct ltt_priv *p = r->priv;
	uint64_t nrec = 0;
	int st;

	if (p->failed)
		return APC_END;
	if (!p->started) {
		p->started = 1;
		p->damaged_before_cpus = p->damaged;
		for (size_t i = 0; i < p->nprocs; i++) {
			struct apc_event *e = apc_batch_add(b, APC_EV_THREAD_NAME, p->first_ts, APC_NO_CORE);
			if (!e)
				goto nomem;
			e->flags = APC_EVF_NO_TS;
			e->u.name.id = p->procs[i].pid;
			e->u.name.name = apc_batch_strdup(b, p->procs[i].name, strlen(p->procs[i].name));
			if (!e->u.name.name || ltt_link(p, b, p->first_ts, APC_NO_CORE, p->procs[i].pid, 0))
				goto nomem;
			b->ev[b->n - 1].flags = APC_EVF_NO_TS;
		}
		for (size_t i = 0; i < p->nsrc; i++)
			if ((st = ltt_advance(r, p, &p->src[i])))
				goto fail;
		if (!(p->heap = malloc((p->nsrc ? p->nsrc : 1) * sizeof *p->heap)))
			goto nomem;
		for (size_t i = 0; i < p->nsrc; i++)
			if (p->src[i].have)
				p->heap[p->nheap++] = &p->src[i];
		for (size_t i = p->nheap / 2; i-- > 0;)
			ltt_heap_down(p, i);
	}
	/* Stop while a whole record still fits: one that overflowed the
	 * batch made apc_batch_add double it, every batch, and the 8192
	 * events the driver asked for became 131072 (5 MiB, out of cache). */
	while (b->n + LTT_MAX_PER_RECORD <= b->cap || !b->n) {
		/* k-way merge by time; ties go to the lower CPU file */
		struct ltt_src *best = p->nheap ? p->heap[0] : NULL;
		if (p->next_mark < p->nmarks && (!best || p->marks[p->next_mark].ts <= best->cur->ts)) {
			const struct ltt_mark *m = &p->marks[p->next_mark++];
			struct apc_ann a;
			memset(&a, 0, sizeof a);
			a.code = APC_ANN_MARKER;
			a.text = m->text;
			a.text_len = strlen(m->text);
			a.tid = a.pid = 0;
			struct apc_event *e = apc_batch_add(b, APC_EV_ANNOTATION, m->ts,
							    m->core >= 0 ? m->core : APC_NO_CORE);
			if (!e || !(e->u.ann = apc_batch_copy_ann(b, &a)))
				goto nomem;
			r->model->records_read++;
			continue;
		}
		if (!best)
			break;
		/* best keeps the lead while its next event is before every
		 * other file's (or level with a later file's) and before the
		 * next bookmark: take such runs without scanning again. */
		uint64_t lim_lt = UINT64_MAX, lim_le = UINT64_MAX;
		if (p->nheap > 1) {
			/* the next in the merge after best: its smaller child */
			const struct ltt_src *o = p->heap[1];
			if (p->nheap > 2 && ltt_before(p->heap[2], o))
				o = p->heap[2];
			if (o < best)
				lim_lt = o->cur->ts;
			else
				lim_le = o->cur->ts;
		}
		if (p->next_mark < p->nmarks && p->marks[p->next_mark].ts < lim_lt)
			lim_lt = p->marks[p->next_mark].ts;
		for (const struct apc_ltt_raw *cur = best->cur;;) {
			/* records_read is counted here, not through r->model
			 * in ltt_map: a store per event to a line the main
			 * thread also writes */
			nrec++;
			if (ltt_map(r, p, best, cur, b))
				goto nomem;
			/* the next decoded event without ltt_advance's stores */
			if (best->qi < best->qn) {
				cur = best->cur = &best->q[best->qi++];
			} else {
				st = ltt_advance(r, p, best);
				if (st || !best->have) {
					ltt_heap_top_moved(p);
					if (st)
						goto fail;
					break;
				}
				cur = best->cur;
			}
			if (b->n + LTT_MAX_PER_RECORD > b->cap || cur->ts >= lim_lt || cur->ts > lim_le) {
				ltt_heap_top_moved(p);
				break;
			}
		}
	}
	r->model->records_read += nrec;
	ltt_progress(r, p);
	if (p->nheap)
		return APC_OK;
	if (p->next_mark < p->nmarks)
		return APC_OK;
	ltt_report_undefined(r, p);
	if (p->damaged) {
		/* Everything readable is converted: now report the damage. */
		r->err = p->dmg_err;
		p->failed = 1;
		r->damaged = 1;
		return APC_EDATA;
	}
	return b->n ? APC_OK : APC_END;
nomem:
	st = apc_err_set(&r->err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
fail:
	r->model->records_read += nrec;
	ltt_progress(r, p);
	ltt_report_undefined(r, p); /* the blocks skipped before the damage */
	p->failed = 1;
	r->damaged = st == APC_EDATA;
	return st;
}

static void ltt_close(struct apc_reader *r)
{
	struct ltt_priv *p = r->priv;

	if (!p)
		return;
	for (size_t i = 0; i < p->nsrc; i++) {
		apc_ltt_cpu_free(&p->src[i].w);
		free(p->src[i].q);
		if (p->src[i].s)
			apc_stream_close(p->src[i].s);
	}
	free(p->src);
	free(p->heap);
	for (size_t i = 0; i < p->nmarks; i++)
		free(p->marks[i].text);
	free(p->marks);
	for (size_t i = 0; i < p->nprocs; i++)
		free(p->procs[i].name);
	free(p->procs);
	free(p->linked_bits);
	apc_map64_free(&p->linked);
	free(p->stats);
	free(p->stat_ix);
	free(p->refs);
	free(p->idi);
	apc_ltt_ids_free(&p->ids);
	apc_ltt_defs_free(&p->defs);
	free(p);
	r->priv = NULL;
}


/* --stats=json and -v: events read per (facility, event type), all CPUs. */
static void ltt_report(struct apc_reader *r)
{
	struct apc_ltt_stat *st;
	size_t n = apc_ltt_stats(r, NULL, 0);
	char what[256];

	if (!n || !(st = calloc(n, sizeof *st)))
		return;
	n = apc_ltt_stats(r, st, n);
	for (size_t i = 0; i < n; i++) {
		snprintf(what, sizeof what, "%s.%s", st[i].facility ? st[i].facility : "?",
			 st[i].event ? st[i].event : "?");
		const char *became = st[i].became ? st[i].became : "nothing";
		char buf[300];
		/* the per-type incident counters are named bare by role_name() */
		if (apc_model_find_counter(r->model, became)) {
			snprintf(buf, sizeof buf, "counter %s", became);
			became = buf;
		}
		apc_model_count_kind(r->model, what, became, st[i].count);
	}
	free(st);
}

const struct apc_format apc_format_ltt = {
	.name = "ltt",
	.description = "Linux Trace Toolkit directory trace (2003-2005: system.xml, eventdefs, cpu/N)",
	.reads = "directory or archive",
	.bid = ltt_bid,
	.open = ltt_open,
	.next = ltt_next,
	.report = ltt_report,
	.close = ltt_close,
	.read_ahead = 1,
};
