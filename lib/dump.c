/*
 * dump.c - apcdump's engine: walk a capture's frames and messages, filter
 * them, print each as a text line or a JSON object, or add them up into a
 * capinfos-style summary.  External frames are reassembled per fd and
 * their Annotate messages listed too.
 *
 * Memory: one frame at a time, plus tables that grow with distinct
 * things only (counter keys, threads, cores, channels, fds).
 *
 * Speed: the listing of a large capture is hundreds of MB of text, so it
 * goes through a 256 KiB apc_wbuf (json.h) with hand-made number
 * formatting instead of fprintf per field; the rare lines (summary,
 * captured.xml) still use stdio.  The buffer is flushed before each
 * problem is reported, so a message follows the lines listed before it.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "annotate.h"
#include "bytes.h"
#include "dump.h"
#include "format.h"
#include "frame.h"
#include "input.h"
#include "json.h"
#include "map64.h"
#include "model.h"
#include "packed.h"
#include "perf.h"
#include "util.h"
#include "verify.h"
#include "xml.h"

#define DUMP_MAX_FD 65536          /* External ids are small fds */
#define DUMP_BYTES_SHOWN 16        /* text: bytes of a BYTES field shown */
#define DUMP_WBUF (256u << 10)     /* listing buffer: a few large writes */

void apc_dump_opts_init(struct apc_dump_opts *o)
{
	memset(o, 0, sizeof *o);
	o->out = stdout;
}

/* "-40", "7", "010" (decimal, as --core reads it): a 32-bit frame code;
 * 0 for anything else, a number past 32 bits included (no wrapping). */
static int frame_code(const char *w, int32_t *code)
{
	const char *digits = w + (*w == '-');
	size_t n = strlen(digits);
	long long v;

	if (!n || strspn(digits, "0123456789") != n)
		return 0;
	while (n > 1 && *digits == '0') /* leading zeros do not count */
		digits++, n--;
	if (n > 10)
		return 0;
	v = strtoll(w, NULL, 10);
	if (v < INT32_MIN || v > INT32_MAX)
		return 0;
	*code = (int32_t)v;
	return 1;
}

/* Select frames of `code` in o. */
static int select_frame_code(struct apc_dump_opts *o, int32_t code, struct apc_err *err)
{
	if (code >= 0 && code < APC_DUMP_TYPES) {
		o->frames[code] = 1;
		return APC_OK;
	}
	for (int i = 0; i < o->nmore_frames; i++)
		if (o->more_frames[i] == code)
			return APC_OK;
	if (o->nmore_frames == APC_DUMP_MORE_TYPES)
		return apc_err_set(err, APC_EIO, NULL, APC_NO_OFFSET,
				   "too many frame types outside 0..%d in the list (at most %d)",
				   APC_DUMP_TYPES - 1, APC_DUMP_MORE_TYPES);
	o->more_frames[o->nmore_frames++] = code;
	return APC_OK;
}

int apc_dump_parse_frames(struct apc_dump_opts *o, const char *list, struct apc_err *err)
{
	const char *p = list;

	/* "" would select every frame, as no --frame does */
	if (!*list)
		return apc_err_set(err, APC_EIO, NULL, APC_NO_OFFSET,
				   "empty frame type list (names or numbers, separated by commas)");
	for (;;) {
		size_t n = strcspn(p, ",");
		char word[32];
		int32_t type = 0;
		int found = 0;

		/* an empty name: ",x", "x,,y", or "x," */
		if (n == 0 || n >= sizeof word)
			return apc_err_set(err, APC_EIO, NULL, APC_NO_OFFSET,
					   "bad frame type list '%s'", list);
		memcpy(word, p, n);
		word[n] = '\0';
		/* Every name the listing gives a frame's type is taken back:
		 * a number, as the summary shows the code, or "type_N" for
		 * an unknown one (negative and large codes too), and "empty"
		 * for a zero-length frame, which has no code. */
		if (frame_code(word, &type) ||
		    (!strncasecmp(word, "type_", 5) && frame_code(word + 5, &type))) {
			found = 1;
		} else if (!strcasecmp(word, "empty")) {
			o->empty_frames = 1;
			o->have_frames = 1;
			goto next;
		} else if (!strcasecmp(word, "perf_attrs")) {
			type = APC_FRAME_PROC;
			found = 1;
		} else {
			/* any case: --frame=Summary is no other type */
			for (int t = 0; t < APC_DUMP_TYPES && !found; t++)
				if (apc_frame_type_known(t) && !strcasecmp(apc_frame_type_name(t), word)) {
					type = t;
					found = 1;
				}
		}
		if (!found)
			return apc_err_set(err, APC_EIO, NULL, APC_NO_OFFSET,
					   "unknown frame type '%s' (names: summary, backtrace, name, "
					   "counter, block_counter, annotate, sched_trace, idle, external, "
					   "proc, perf_data, activity_trace, perf_aux, perf_sync, or a "
					   "number); also type_N, an unknown type, and empty, a "
					   "zero-length frame", word);
		if (select_frame_code(o, type, err) < 0)
			return APC_EIO;
		o->have_frames = 1;
next:
		p += n;
		if (!*p)
			return APC_OK;
		p++; /* the comma */
	}
}

/* ---- tables indexed through a map of their keys --------------------- */

/* The index stored for key, or (size_t)-1. */
static size_t map_get(const struct apc_map64 *m, uint64_t key)
{
	uint64_t v;

	return apc_map64_find(m, key, &v) ? (size_t)v : (size_t)-1;
}

/* Grow a table of `size`-byte entries to hold one more. */
static void *table_add(void **tab, size_t *n, size_t *cap, size_t size)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 16;
		void *nt = realloc(*tab, nc * size);
		if (!nt)
			return NULL;
		*tab = nt;
		*cap = nc;
	}
	memset((char *)*tab + *n * size, 0, size);
	return (char *)*tab + (*n)++ * size;
}

static char *dup_bytes(const void *s, size_t n)
{
	char *d = malloc(n + 1);
	if (d) {
		if (n)
			memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

/* *dst = a copy of s (NULL for none). */
static int set_opt(char **dst, const char *s)
{
	free(*dst);
	*dst = s ? dup_bytes(s, strlen(s)) : NULL;
	return s && !*dst ? APC_ENOMEM : APC_OK;
}

/* ---- per-input state --------------------------------------------------- */

struct sum_counter { int32_t key; int declared; uint64_t values; char *name; };
/* A counter an annotate stream declares, one per process and key (as
 * the decoder names them: annotate_PID_KEY), with its values and
 * activity switches. */
struct sum_acounter {
	int32_t pid, key;
	int declared;
	uint64_t values, switches;
	char *title, *name;
};
struct sum_thread { int32_t tid; uint64_t msgs; char *name; };
struct sum_core { int32_t core; int named; int32_t cpuid; uint64_t msgs; char *name; };
/* Annotation channels and groups are a connection's own (channel 1 of
 * one thread is not channel 1 of another): one per connection, known by
 * the tid and pid of its setup message, and channel or group. */
struct sum_chan {
	int32_t tid, pid, channel, group;
	uint64_t count;
	char *name;
};
struct sum_group { int32_t tid, pid, group; char *name; };
/* An annotate connection (a client thread) and what it sent. */
struct sum_conn {
	int32_t tid, pid;
	int version;
	uint64_t msgs, strs, markers, jobs;
	const char *name; /* its thread's, borrowed when printing */
};
struct sum_kind { const char *ptr; char *name; uint64_t n; };
/* A row of the summary's frame types: a code, or one of the two rows
 * of frames without one (FTYPE_BAD_CODE, FTYPE_EMPTY). */
struct sum_ftype { int32_t code; uint64_t frames, msgs; };
struct sum_order {
	int64_t last;
	int last_exit; /* the last message was a thread_exit (sched_trace) */
};

struct dump_fd {
	struct apc_ann_decoder *dec;
	int broken;
};

/* A field name as it goes before the value: ' name=' or ',"name":'. */
#define DUMP_KEYS_BITS 7
#define DUMP_KEYS (1 << DUMP_KEYS_BITS) /* cache slots (field names are a few dozen) */
#define DUMP_KEY_MAX 40  /* longer names take the slow path */
/* What JSON does with a field other than write it as its own member. */
enum {
	DUMP_KEY_PLAIN,
	DUMP_KEY_CORE,      /* "core": JSON lists it once, as the message's */
	DUMP_KEY_ATTR_KEY,  /* a Summary attribute pair: JSON gathers them */
	DUMP_KEY_ATTR_VALUE /*   all into one "attrs" member (json_attrs()) */
};
struct dump_key {
	const char *name; /* the field's static name; NULL = empty slot */
	uint8_t len;
	uint8_t role;     /* DUMP_KEY_* */
	char s[DUMP_KEY_MAX + 10];
};

/* A number as last formatted: consecutive messages repeat their frame's
 * index and offset, and a counter row repeats its time for every value
 * (formatting was a fifth of apcdump's time). */
struct dump_num {
	uint64_t v;
	uint8_t len, valid;
	char s[APC_FMT_MAX + 8]; /* room for the text index's padding */
};

/* What reading a perf record takes from its event's perf_event_attr:
 * the fields a sample has, the layout of its read values, and its flag
 * bits (sample_id_all: other records end with the sample's id fields). */
struct dump {
	const struct apc_dump_opts *o;
	const char *path;   /* as given: what --json's "file" holds */
	const char *name;   /* as messages and headers say it ("<stdin>" for "-") */
	const char *dname;  /* data stream name, for messages */
	int status;         /* worst so far */
	struct apc_err io_error; /* the first problem that made it APC_EIO */
	/* A bare stream that detection takes for another format apcconv
	 * converts: said instead of a bad first frame. */
	int foreign;
	struct apc_err foreign_err;
	uint64_t lines;     /* listed */
	int stop;
	/* captured.xml */
	xmlDoc *doc;
	int protocol;       /* 0 if unknown */
	int clocks;         /* Summary clocks: 3, 4 or 0 (guess) */
	int64_t delta;      /* Summary monotonic delta (annotate times are absolute) */
	/* What the summary says of the capture beside its frames, as
	 * capinfos does: the Summary's timestamp (wall-clock ns since the
	 * epoch; 0 = not given), its uname attribute, captured.xml's
	 * created and <target> name (NULL when not there), and the size of
	 * the input as given (fsize < 0: not known, as of a pipe). */
	int have_wall;
	int64_t wall_ns;
	char *uname, *created, *target_name;
	int64_t fsize;
	size_t fsize_files; /* of a folder: its files summed */
	const char *fkind;  /* apc_input_kind(): "directory", "tar.gz", ... */
	/* External reassembly */
	struct dump_fd *fds;
	struct apc_ann_budget ann_budget; /* what their decoders hold together */
	size_t nfds;
	/* summary */
	/* By frame type, each code on its own row as the listing names it
	 * (an unknown one too): codes 0..APC_DUMP_TYPES-1 here, then
	 * [FTYPE_BAD_CODE] frames whose code does not read, [FTYPE_EMPTY]
	 * zero-length frames (the end-of-sequence marker, or zero bytes);
	 * other codes in xtypes.  fr_row: the current frame's row. */
	struct sum_ftype ftypes[APC_DUMP_TYPES + 2];
	struct sum_ftype *xtypes; size_t nxtypes, cxtypes; struct apc_map64 xtype_map;
	struct sum_ftype *fr_row;
	size_t nneg;        /* of xtypes (sorted), those below 0 */
	uint64_t nframes, nmsgs, bytes, errors;
	uint64_t warnings;  /* what apcverify only warns of: not problems */
	struct sum_kind *kinds; size_t nkinds, ckinds;
	struct sum_counter *ctrs; size_t nctrs, cctrs; struct apc_map64 ctr_map;
	struct sum_acounter *actrs; size_t nactrs, cactrs; struct apc_map64 actr_map;
	struct sum_thread *thr; size_t nthr, cthr; struct apc_map64 thr_map;
	struct sum_core *cores; size_t ncores, ccores; struct apc_map64 core_map;
	struct sum_chan *chans; size_t nchans, cchans; struct apc_map64 chan_map;
	struct sum_group *grps; size_t ngrps, cgrps; struct apc_map64 grp_map;
	struct sum_conn *conns; size_t nconns, cconns; struct apc_map64 conn_map;
	struct sum_order *ord; size_t nord, cord; struct apc_map64 ord_map;
	struct sum_order *xord; size_t nxord, cxord; struct apc_map64 xord_map;
	/* perf mode: each event's attributes by its key, the key of each
	 * event id (both learnt while listing too: apc_perf_learn()), and the
	 * counter values read from perf records */
	struct apc_perf perf;
	uint64_t perf_values;
	uint64_t perf_lost, perf_lost_recs; /* records the kernel lost, as lost records say */
	char pstr[4096]; /* a perf record's comm or file name (perf_str()), as listed */
	uint8_t pvals[4096]; /* the values it reads (perf_val()), as listed */
	int have_ts;
	int64_t first_ts, last_ts;
	/* the same without thread names and links at time 0 */
	int have_dts;
	int64_t first_dts, last_dts;
	uint64_t regressions;
	int64_t first_regression; /* message offset, or -1 */
	/* Steps back across frame types on a core, by apcverify's rule
	 * (ts-cross-type): how many, the first's offset (or -1), the
	 * largest in ns.  x_fr_*: the frame's own times, as v_ts() keeps
	 * them. */
	uint64_t x_regressions;
	int64_t first_x_regression, x_largest;
	int x_fr_have, x_fr_quiet;
	int64_t x_fr_ts;
	size_t x_bc_pos;    /* a Block Counter frame's body read up to here */
	/* The frame's header core is negative or past <target cores>:
	 * apcverify reads none of its messages (frame-core), so they take
	 * no part in the order. */
	int fr_unread;
	long target_cores;  /* captured.xml's <target cores>, 0 if not said */
	int xml_unread;     /* captured.xml is there but could not be read */
	/* a run of zero-length frames, warned of once (dump_empty_flush()) */
	uint64_t empty_run;
	int64_t empty_frame, empty_off, empty_end;
	/* Of the regressions, the gatord 6.8 quirks apcverify accepts with
	 * a warning (ts-gatord-name, ts-gatord-exit), per APC_TSQ_ kind;
	 * and where the first other one is. */
	uint64_t quirks[3];
	int64_t first_other_regression;
	struct apc_map64 name_tids; /* tids a Name frame's thread_name named */
	/* Annotation times step back per fd: not counted as disorder (a
	 * client gives its own times; apcverify checks none of them). */
	uint64_t ann_regressions;
	int64_t first_ann_regression;
	/* The listing's writer (p is NULL for --summary and --xml). */
	struct apc_wbuf w;
	struct dump_key keys[DUMP_KEYS];
	struct dump_num n_index, n_foff, n_ts;
	char tname[APC_FRAME_NAME_MAX]; /* dump_frame_name()'s "type_N" */
};

/*
 * 1 when msg already starts by naming the input ("NAME: ..."), so the
 * name is not put before it again.  A whole "NAME: " prefix: an input
 * named "empty" or "emp" is not named by "empty capture: ...".
 */
static int names_itself(const char *msg, const char *name)
{
	size_t n = strlen(name);

	return n && !strncmp(msg, name, n) && msg[n] == ':' && msg[n + 1] == ' ';
}

static void dump_problem(struct dump *d, struct apc_err *e)
{
	/* The lines before the problem come out before its message. */
	if (d->w.p && d->w.len) {
		apc_wbuf_flush(&d->w);
		fflush(d->o->out);
	}
	if (!e->file[0] && !names_itself(e->msg, d->name))
		snprintf(e->file, sizeof e->file, "%s", d->dname ? d->dname : d->name);
	if (e->status == APC_EDATA || e->status == APC_OK) {
		d->errors++;
		if (d->status == APC_OK)
			d->status = APC_EDATA;
	} else {
		if (d->status != APC_EIO)
			d->io_error = *e;
		d->status = APC_EIO;
	}
	if (d->o->report)
		d->o->report(d->o->report_ctx, e);
}

/*
 * Something apcverify only warns of (an unknown message code): told as a
 * problem is, e->msg starting "warning: " and e->status APC_OK, but
 * counted apart and no problem for the exit status.
 */
static void dump_warning(struct dump *d, struct apc_err *e)
{
	if (d->w.p && d->w.len) {
		apc_wbuf_flush(&d->w);
		fflush(d->o->out);
	}
	if (!e->file[0])
		snprintf(e->file, sizeof e->file, "%s", d->dname ? d->dname : d->name);
	e->status = APC_OK;
	d->warnings++;
	if (d->o->report)
		d->o->report(d->o->report_ctx, e);
}

static void dump_oom(struct dump *d)
{
	struct apc_err e;
	apc_err_set(&e, APC_ENOMEM, d->name, APC_NO_OFFSET, "out of memory");
	dump_problem(d, &e);
	d->stop = 1;
}

/* ---- captured.xml ------------------------------------------------------ */

static xmlChar *xml_attr(xmlNode *n, const char *name)
{
	return xmlGetProp(n, (const xmlChar *)name);
}

/*
 * captured.xml: the tree's member, or the one beside a bare data file
 * 0000000000 (apc_data_sibling: apcconv and apcverify read the same;
 * one there that cannot be opened is not there, as for them).
 */
static int dump_load_xml(struct dump *d, struct apc_input *in)
{
	struct apc_stream *s;
	struct apc_err e;
	uint8_t *buf;
	size_t len;
	xmlNode *root;
	xmlChar *v;
	xmlParserCtxt *ctx;
	const xmlError *xe;
	/* what a problem with it names: the file itself, as the input
	 * layer names a member ("x.apc/captured.xml", "x.zip:captured.xml") */
	char where[sizeof e.file];

	apc_err_clear(&e);
	snprintf(where, sizeof where, "%s", d->name);
	if (!apc_input_is_tree(in)) {
		char *path = apc_data_sibling(d->path, "captured.xml");
		int rc = path ? apc_stream_open_path(path, &s, &e) : APC_EIO;
		if (path)
			snprintf(where, sizeof where, "%s", path);
		free(path);
		if (rc < 0)
			return APC_OK;
	} else if (!apc_input_has(in, "captured.xml")) {
		return APC_OK;
	} else if (apc_input_open_member(in, "captured.xml", &s, &e) < 0) {
		d->xml_unread = 1;
		dump_problem(d, &e);
		return APC_EIO;
	} else {
		snprintf(where, sizeof where, "%s", apc_stream_name(s));
	}
	if (apc_stream_slurp(s, APC_XML_FILE_MAX, &buf, &len, &e) < 0) {
		apc_stream_close(s);
		d->xml_unread = 1;
		dump_problem(d, &e);
		/* told: over the limit is no out-of-memory to tell again */
		return APC_EIO;
	}
	apc_stream_close(s);
	if (!(ctx = xmlNewParserCtxt())) {
		free(buf);
		return APC_ENOMEM;
	}
	d->doc = xmlCtxtReadMemory(ctx, (const char *)buf, (int)len, "captured.xml", NULL,
				   XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	free(buf);
	xe = xmlCtxtGetLastError(ctx);
	/* As apcverify: only errors (not libxml2's warnings) reject it,
	 * and the message says where and why. */
	if (!d->doc ||
	    (xe && xe->code != XML_ERR_OK && xe->level >= XML_ERR_ERROR && !apc_xml_warning(xe->code)) ||
	    !(root = xmlDocGetRootElement(d->doc))) {
		char why[320];

		/* in apcverify's and apcconv's words */
		if (xe && xe->code != XML_ERR_OK)
			apc_xml_error_msg(xe->line, xe->message, why, sizeof why);
		else
			snprintf(why, sizeof why, "not well-formed XML: no root element");
		apc_err_set(&e, APC_EDATA, where, APC_NO_OFFSET, "%s", why);
		xmlFreeParserCtxt(ctx);
		if (d->doc)
			xmlFreeDoc(d->doc);
		d->doc = NULL;
		d->xml_unread = 1;
		dump_problem(d, &e);
		return APC_EDATA;
	}
	xmlFreeParserCtxt(ctx);
	if ((v = xml_attr(root, "protocol"))) {
		d->protocol = atoi((const char *)v);
		xmlFree(v);
	}
	if ((v = xml_attr(root, "created"))) {
		int rc = set_opt(&d->created, (const char *)v);
		xmlFree(v);
		if (rc < 0)
			return APC_ENOMEM;
	}
	/* The first target's name, for the summary; and the target's core
	 * count, the cores a message may name, read as apcverify reads it
	 * (its frame-core and msg-core bound). */
	int seen_target = 0;
	for (xmlNode *n = root->children; n; n = n->next) {
		char *end;
		long cores;
		int rc;

		if (n->type != XML_ELEMENT_NODE || xmlStrcmp(n->name, (const xmlChar *)"target"))
			continue;
		if (!seen_target && (v = xml_attr(n, "name"))) {
			rc = set_opt(&d->target_name, (const char *)v);
			xmlFree(v);
			if (rc < 0)
				return APC_ENOMEM;
		}
		seen_target = 1;
		if (!(v = xml_attr(n, "cores")))
			continue;
		cores = strtol((const char *)v, &end, 10);
		if (*v && !*end && cores > 0 && cores <= APC_MAX_CORES)
			d->target_cores = cores;
		xmlFree(v);
		break;
	}
	/* Counters: key -> name (type= in 6.8 captures, counter= for some). */
	for (xmlNode *n = root->children; n; n = n->next) {
		if (n->type != XML_ELEMENT_NODE || xmlStrcmp(n->name, (const xmlChar *)"counters"))
			continue;
		for (xmlNode *c = n->children; c; c = c->next) {
			xmlChar *key, *name;
			struct sum_counter *sc;
			long k;

			if (c->type != XML_ELEMENT_NODE)
				continue;
			key = xml_attr(c, "key");
			name = xml_attr(c, "type");
			if (!name)
				name = xml_attr(c, "counter");
			k = key ? strtol((const char *)key, NULL, 0) : -1;
			if (key && k >= 0 && k <= INT32_MAX && map_get(&d->ctr_map, (uint64_t)k) == (size_t)-1) {
				sc = table_add((void **)&d->ctrs, &d->nctrs, &d->cctrs, sizeof *sc);
				if (!sc || apc_map64_put(&d->ctr_map, (uint64_t)k, d->nctrs - 1) < 0) {
					xmlFree(key);
					xmlFree(name);
					return APC_ENOMEM;
				}
				sc->key = (int32_t)k;
				sc->declared = 1;
				sc->name = name ? dup_bytes(name, strlen((const char *)name)) : NULL;
			}
			xmlFree(key);
			xmlFree(name);
		}
	}
	return APC_OK;
}

/*
 * "element.attribute" for --xml, by qualified names (a:x and b:x are two
 * attributes), the root element as "captured" whatever its name.
 * Returns the key's length as snprintf() counts it (cut at len - 1).
 */
static int xml_key(char *buf, size_t len, const xmlNode *n, const xmlNode *root,
		   const xmlAttr *a)
{
	const char *ep = n != root && n->ns && n->ns->prefix ? (const char *)n->ns->prefix : NULL;
	const char *ap = a->ns && a->ns->prefix ? (const char *)a->ns->prefix : NULL;

	return snprintf(buf, len, "%s%s%s.%s%s%s", ep ? ep : "", ep ? ":" : "",
			n == root ? "captured" : (const char *)n->name, ap ? ap : "", ap ? ":" : "",
			(const char *)a->name);
}

/*
 * --xml JSON: ,"key": once per object.  Another writer's captured.xml
 * may hold an element twice (two <target>s), and two long keys may agree
 * in the 127 bytes kept: a key already in the object gets "#2", "#3", ...
 * in the order met.  No XML name holds '#', so a suffixed key is never
 * another element.attribute one.  seen counts the keys by a 64-bit
 * (FNV-1a) hash: two keys of one hash only cost a suffix not needed.
 */
static void xml_json_key(struct dump *d, struct apc_map64 *seen, const char *key)
{
	FILE *f = d->o->out;
	uint64_t h = apc_hash_str(APC_HASH_SEED, key), n = 0;

	apc_map64_find(seen, h, &n);
	if (apc_map64_put(seen, h, n + 1) < 0)
		dump_oom(d);
	fputc(',', f);
	if (n) {
		char k[160]; /* a 127-byte key, '#' and 20 digits */
		snprintf(k, sizeof k, "%s#%" PRIu64, key, n + 1);
		apc_json_cstr(f, k);
	} else {
		apc_json_cstr(f, key);
	}
	fputc(':', f);
}

/* readelf-style "key: value" lines (or one JSON object) for captured.xml. */
static void dump_print_xml(struct dump *d)
{
	FILE *f = d->o->out;
	xmlNode *root = xmlDocGetRootElement(d->doc);
	struct apc_map64 seen = {0}; /* JSON keys written */
	int first = 1;
	char key[128];

	if (d->o->json) {
		fputs("{\"file\":", f);
		apc_json_cstr(f, d->path);
	} else {
		fprintf(f, "%s: captured.xml\n", d->name);
	}
	/* One column for the values: as wide as the longest key needs
	 * (captured.backtrace_processing: is 30), at least 28. */
	int width = 28;
	for (xmlNode *n = root; n; n = n == root ? root->children : n->next) {
		if (n->type != XML_ELEMENT_NODE || !xmlStrcmp(n->name, (const xmlChar *)"counters"))
			continue;
		for (xmlAttr *a = n->properties; a; a = a->next) {
			int kl = xml_key(key, sizeof key, n, root, a) + 1;
			if (kl > width && kl < 127)
				width = kl;
		}
	}
	/* Root attributes, then each child element's attributes. */
	for (xmlNode *n = root; n; n = n == root ? root->children : n->next) {
		if (n->type != XML_ELEMENT_NODE || !xmlStrcmp(n->name, (const xmlChar *)"counters"))
			continue;
		for (xmlAttr *a = n->properties; a; a = a->next) {
			xmlChar *v = xmlNodeListGetString(d->doc, a->children, 1);
			const char *vs = v ? (const char *)v : "";
			size_t kl = (size_t)xml_key(key, sizeof key, n, root, a);

			if (d->o->json) {
				xml_json_key(d, &seen, key);
				apc_json_cstr(f, vs);
			} else {
				if (kl + 1 < sizeof key) /* a cut key has no colon, as before */
					memcpy(key + kl, ":", 2);
				fprintf(f, "  %-*s %s\n", width, key, vs);
			}
			xmlFree(v);
		}
	}
	apc_map64_free(&seen);
	if (d->o->json)
		fputs(",\"counters\":[", f);
	else
		fprintf(f, "  %-*s %zu\n", width, "counters:", d->nctrs);
	for (size_t i = 0; i < d->nctrs; i++) {
		const char *nm = d->ctrs[i].name ? d->ctrs[i].name : "";
		if (d->o->json) {
			fprintf(f, "%s{\"key\":%" PRId32 ",\"name\":", first ? "" : ",", d->ctrs[i].key);
			apc_json_cstr(f, nm);
			fputc('}', f);
			first = 0;
		} else {
			fprintf(f, "    key 0x%-6" PRIx32 " %s\n", (uint32_t)d->ctrs[i].key, nm);
		}
	}
	if (d->o->json)
		fputs("]}\n", f);
}

/* ---- printing one message ---------------------------------------------- */

/* Length of a valid UTF-8 sequence at p (2..4), or 0. */
static size_t utf8_seq(const uint8_t *p, size_t n)
{
	size_t len;
	uint32_t cp;

	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		len = 2;
		cp = p[0] & 0x1f;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		len = 3;
		cp = p[0] & 0x0f;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		len = 4;
		cp = p[0] & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* 1 for bytes that stand for themselves in a text-mode string. */
static int text_plain(unsigned c)
{
	return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
}

/* A quoted string with C escapes; valid UTF-8 passes through.  Runs of
 * plain bytes go in with one copy. */
static void text_wstr(struct apc_wbuf *w, const uint8_t *s, size_t n)
{
	static const char xd[] = "0123456789abcdef";

	apc_wbuf_putc(w, '"');
	for (size_t i = 0; i < n;) {
		size_t j = i;
		uint8_t c;
		char *o;

		while (j < n && text_plain(s[j]))
			j++;
		apc_wbuf_put(w, s + i, j - i);
		if (j == n)
			break;
		i = j;
		c = s[i];
		o = apc_wbuf_room(w, 8);
		if (c == '"' || c == '\\') {
			o[0] = '\\';
			o[1] = (char)c;
		} else if (c == '\n') {
			memcpy(o, "\\n", 2);
		} else if (c == '\r') {
			memcpy(o, "\\r", 2);
		} else if (c == '\t') {
			memcpy(o, "\\t", 2);
		} else if (c >= 0x80 && (j = utf8_seq(s + i, n - i)) != 0) {
			memcpy(o, s + i, j);
			w->len += j;
			i += j;
			continue;
		} else {
			/* Other control bytes, DEL and bytes that are not UTF-8. */
			o[0] = '\\';
			o[1] = 'x';
			o[2] = xd[c >> 4];
			o[3] = xd[c & 15];
			w->len += 2;
		}
		w->len += 2;
		i++;
	}
	apc_wbuf_putc(w, '"');
}

/* text_wstr() straight to a FILE, for the summary. */
static void text_str(FILE *f, const uint8_t *s, size_t n)
{
	char buf[256];
	struct apc_wbuf w;

	apc_wbuf_init_mem(&w, f, buf, sizeof buf);
	text_wstr(&w, s, n);
	apc_wbuf_flush(&w);
}

/* Walk a PAIRS field: (packed32 cookie, packed64 offset) * count. */
static void pairs_print(struct apc_wbuf *w, const struct apc_field *fl, int json)
{
	size_t pos = 0;

	apc_wbuf_putc(w, '[');
	for (int64_t i = 0; i < fl->i; i++) {
		int32_t c;
		int64_t o;
		int k = apc_unpack32(fl->s + pos, fl->len - pos, &c);
		if (k <= 0)
			break;
		pos += (size_t)k;
		if ((k = apc_unpack64(fl->s + pos, fl->len - pos, &o)) <= 0)
			break;
		pos += (size_t)k;
		if (i)
			apc_wbuf_putc(w, ',');
		if (json) {
			apc_wbuf_putc(w, '[');
			apc_wbuf_i64(w, c);
			apc_wbuf_putc(w, ',');
			apc_wbuf_i64(w, o);
			apc_wbuf_putc(w, ']');
		} else {
			apc_wbuf_i64(w, c);
			apc_wbuf_put(w, ":0x", 3);
			apc_wbuf_x64(w, (uint64_t)o, 0);
		}
	}
	apc_wbuf_putc(w, ']');
}

/* The values a perf record reads, each with its event's id: id:value in
 * the text (the id in hex, as perf_keys' ids show), [id,value] in JSON. */
static void idvals_print(struct apc_wbuf *w, const struct apc_field *fl, int json)
{
	size_t pos = 0;

	apc_wbuf_putc(w, '[');
	for (int64_t i = 0; i < fl->i; i++) {
		int64_t id, v;
		int k = apc_unpack64(fl->s + pos, fl->len - pos, &id);
		if (k <= 0)
			break;
		pos += (size_t)k;
		if ((k = apc_unpack64(fl->s + pos, fl->len - pos, &v)) <= 0)
			break;
		pos += (size_t)k;
		if (i)
			apc_wbuf_putc(w, ',');
		if (json)
			apc_wbuf_putc(w, '[');
		else
			apc_wbuf_put(w, "0x", 2);
		if (json)
			apc_wbuf_u64(w, (uint64_t)id);
		else
			apc_wbuf_x64(w, (uint64_t)id, 0);
		apc_wbuf_putc(w, json ? ',' : ':');
		apc_wbuf_u64(w, (uint64_t)v);
		if (json)
			apc_wbuf_putc(w, ']');
	}
	apc_wbuf_putc(w, ']');
}

/* A perf record's words: unsigned, in hex as text, decimal in JSON. */
static void words_print(struct apc_wbuf *w, const struct apc_field *fl, int json)
{
	size_t pos = 0;

	apc_wbuf_putc(w, '[');
	for (int64_t i = 0; i < fl->i; i++) {
		int64_t v;
		int k = apc_unpack64(fl->s + pos, fl->len - pos, &v);
		if (k <= 0)
			break;
		pos += (size_t)k;
		if (i)
			apc_wbuf_putc(w, ',');
		if (json) {
			apc_wbuf_u64(w, (uint64_t)v);
		} else {
			apc_wbuf_put(w, "0x", 2);
			apc_wbuf_x64(w, (uint64_t)v, 0);
		}
	}
	apc_wbuf_putc(w, ']');
}

static int reserved_json_key(const char *n)
{
	/* the members print_json() writes itself: a field of that name
	 * would be a second one */
	static const char *const r[] = {"file", "frame", "offset", "frame_offset", "type",
					"core", "msg", "code", "ts", "raw", "attrs", NULL};
	for (int i = 0; r[i]; i++)
		if (!strcmp(n, r[i]))
			return 1;
	return 0;
}

/* A field's DUMP_KEY_* role, by its name (frame.h: the attribute pairs
 * are the only fields a message may have more than once). */
static uint8_t key_role(const char *name)
{
	if (!strcmp(name, "core"))
		return DUMP_KEY_CORE;
	if (!strcmp(name, "attr_key"))
		return DUMP_KEY_ATTR_KEY;
	if (!strcmp(name, "attr_value"))
		return DUMP_KEY_ATTR_VALUE;
	return DUMP_KEY_PLAIN;
}

/*
 * The cached prefix of field `name`, or NULL for a name too long or one
 * with bytes to escape.  Keyed by the pointer: apc_field names are
 * static strings (frame.h), so the bytes behind a pointer never change;
 * this spares the per-field strlen, reserved-name test and escaping.
 */
static const struct dump_key *dump_key(struct dump *d, const char *name)
{
	/* every bit of the pointer: names shorter than 8 bytes lie side
	 * by side in .rodata, so name >> 3 put two in one slot */
	struct dump_key *k = &d->keys[(uint64_t)(uintptr_t)name * 0x9e3779b97f4a7c15u >>
				      (64 - DUMP_KEYS_BITS)];
	size_t n, at = 0;

	if (k->name == name)
		return k;
	n = strlen(name);
	if (n > DUMP_KEY_MAX)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (!text_plain((unsigned char)name[i]))
			return NULL;
	if (d->o->json) {
		k->s[at++] = ',';
		k->s[at++] = '"';
		if (reserved_json_key(name)) {
			memcpy(k->s + at, "field_", 6);
			at += 6;
		}
		memcpy(k->s + at, name, n);
		at += n;
		k->s[at++] = '"';
		k->s[at++] = ':';
	} else {
		k->s[at++] = ' ';
		memcpy(k->s + at, name, n);
		at += n;
		k->s[at++] = '=';
	}
	k->len = (uint8_t)at;
	k->role = key_role(name);
	k->name = name;
	return k;
}

/* ,"name": for a name dump_key() does not cache. */
static void json_key_slow(struct apc_wbuf *w, const char *name)
{
	apc_wbuf_putc(w, ',');
	if (reserved_json_key(name)) {
		char k[64];
		int kn = snprintf(k, sizeof k, "field_%s", name);
		apc_json_wstr(w, k, kn < 0 ? 0 : (size_t)kn < sizeof k ? (size_t)kn : sizeof k - 1);
	} else {
		apc_json_wstr(w, name, strlen(name));
	}
	apc_wbuf_putc(w, ':');
}

/* A literal into the writer. */
#define W_LIT(w, s) apc_wbuf_put((w), (s), sizeof(s) - 1)

/*
 * v in decimal (signed when `sign`), right-aligned in `width` columns
 * (at most 8), formatted again only when it differs from last time.  A
 * cache serves one kind of number: within a run (text or JSON, never
 * both) its callers pass the same sign and width every time.
 */
static inline void dump_num(struct apc_wbuf *w, struct dump_num *c, uint64_t v, int sign,
			    unsigned width)
{
	if (!c->valid || c->v != v) {
		char tmp[APC_FMT_MAX];
		size_t n = sign ? apc_fmt_i64(tmp, (int64_t)v) : apc_fmt_u64(tmp, v);
		size_t pad = n < width ? width - n : 0;

		memset(c->s, ' ', pad);
		memcpy(c->s + pad, tmp, n);
		c->len = (uint8_t)(pad + n);
		c->v = v;
		c->valid = 1;
	}
	apc_wbuf_put(w, c->s, c->len);
}

/* A frame's type as the listing shows it: "type_N" for every unknown
 * code, as apcverify's messages name it, and "empty" for a zero-length
 * frame, which has no code (its type -1 would be taken for code -1).
 * The summary's rows and --frame use the same names. */
static const char *dump_frame_name(struct dump *d, const struct apc_frame *fr)
{
	if (fr->len == 0)
		return "empty";
	return apc_frame_type_name_r(fr->type, d->tname, sizeof d->tname);
}

/* An attribute's key or value, null when frame.c gave none (it always does). */
static void json_attr_str(struct apc_wbuf *w, const struct apc_field *fl)
{
	if (fl)
		apc_json_wstr(w, (const char *)fl->s, fl->len);
	else
		W_LIT(w, "null");
}

/*
 * The Summary's attributes (the attr_key, attr_value pairs of a summary
 * or summary_attrs message) as one member, in the file's order:
 *   ,"attrs":[{"key":"uname","value":"Linux ..."},{"key":"PAGESIZE",...}]
 * A member per field would repeat "attr_key" and "attr_value" in one
 * object, of which jq and Python's json keep only the last.  Not an
 * object keyed by attribute name either: a file may give a key twice,
 * and the order is the writer's.  {"key","value"} objects are jq's own
 * entries: `.attrs | from_entries` makes that object when the keys are
 * unique, and `.attrs[] | select(.key == "uname") | .value` finds one.
 */
static void json_attrs(struct apc_wbuf *w, const struct apc_msg *m)
{
	int first = 1;

	W_LIT(w, ",\"attrs\":[");
	for (size_t i = 0; i < m->nfields; i++) {
		const struct apc_field *k = NULL, *v = NULL;

		switch (key_role(m->f[i].name)) {
		case DUMP_KEY_ATTR_KEY:
			k = &m->f[i];
			if (i + 1 < m->nfields && key_role(m->f[i + 1].name) == DUMP_KEY_ATTR_VALUE)
				v = &m->f[++i];
			break;
		case DUMP_KEY_ATTR_VALUE:
			v = &m->f[i];
			break;
		default:
			continue;
		}
		if (!first)
			apc_wbuf_putc(w, ',');
		first = 0;
		W_LIT(w, "{\"key\":");
		json_attr_str(w, k);
		W_LIT(w, ",\"value\":");
		json_attr_str(w, v);
		apc_wbuf_putc(w, '}');
	}
	apc_wbuf_putc(w, ']');
}

static void print_json(struct dump *d, const struct apc_frame *fr, const struct apc_msg *m,
		       int first_of_frame)
{
	struct apc_wbuf *w = &d->w;
	int attrs = 0; /* json_attrs() has written them */

	if (d->o->name_inputs) {
		W_LIT(w, "{\"file\":");
		apc_json_wstr(w, d->path, strlen(d->path));
		W_LIT(w, ",\"frame\":");
	} else {
		W_LIT(w, "{\"frame\":");
	}
	dump_num(w, &d->n_index, fr->index, 0, 0);
	W_LIT(w, ",\"offset\":");
	apc_wbuf_u64(w, m->offset);
	W_LIT(w, ",\"frame_offset\":");
	dump_num(w, &d->n_foff, fr->offset, 0, 0);
	W_LIT(w, ",\"type\":\"");
	apc_wbuf_puts(w, dump_frame_name(d, fr));
	apc_wbuf_putc(w, '"');
	if (m->core >= 0) {
		W_LIT(w, ",\"core\":");
		apc_wbuf_i64(w, m->core);
	}
	W_LIT(w, ",\"msg\":");
	if (m->name)
		apc_json_wstr(w, m->name, strlen(m->name));
	else
		W_LIT(w, "null");
	if (m->code >= 0) {
		W_LIT(w, ",\"code\":");
		apc_wbuf_i64(w, m->code);
	}
	if (m->has_ts) {
		W_LIT(w, ",\"ts\":");
		dump_num(w, &d->n_ts, (uint64_t)m->ts, 1, 0);
	}
	for (size_t i = 0; i < m->nfields; i++) {
		const struct apc_field *fl = &m->f[i];
		const struct dump_key *k = dump_key(d, fl->name);

		if (k) {
			if (k->role == DUMP_KEY_CORE && m->core >= 0)
				continue; /* already the "core" member */
			if (k->role >= DUMP_KEY_ATTR_KEY) {
				if (!attrs)
					json_attrs(w, m); /* all pairs, at the first */
				attrs = 1;
				continue;
			}
			apc_wbuf_put(w, k->s, k->len);
		} else if (!strcmp(fl->name, "core") && m->core >= 0) {
			continue;
		} else {
			json_key_slow(w, fl->name);
		}
		switch (fl->kind) {
		case APC_F_STR: apc_json_wstr(w, (const char *)fl->s, fl->len); break;
		case APC_F_BYTES:
			apc_wbuf_putc(w, '"');
			apc_wbuf_hex_bytes(w, fl->s, fl->len);
			apc_wbuf_putc(w, '"');
			break;
		case APC_F_PAIRS: pairs_print(w, fl, 1); break;
		case APC_F_WORDS: words_print(w, fl, 1); break;
		case APC_F_IDVALS: idvals_print(w, fl, 1); break;
		case APC_F_UHEX: apc_wbuf_u64(w, (uint64_t)fl->i); break;
		default: apc_wbuf_i64(w, fl->i); break;
		}
	}
	/* A Summary with no attributes has "attrs" too, empty: the same
	 * shape for jq whatever the file holds. */
	if (!attrs && m->frame_type == APC_FRAME_SUMMARY && m->name && !strcmp(m->name, "summary"))
		W_LIT(w, ",\"attrs\":[]");
	if (d->o->hex && first_of_frame) {
		W_LIT(w, ",\"raw\":\"");
		apc_wbuf_hex_bytes(w, fr->body, fr->len);
		apc_wbuf_putc(w, '"');
	}
	W_LIT(w, "}\n");
}

static void print_text(struct dump *d, const struct apc_frame *fr, const struct apc_msg *m)
{
	struct apc_wbuf *w = &d->w;
	const char *tn = dump_frame_name(d, fr);
	const char *mn = m->name ? m->name : "(null)"; /* what printf showed */
	char core[APC_FMT_MAX] = "-";
	size_t corelen = 1;
	char *o;

	if (m->core >= 0)
		corelen = apc_fmt_i64(core, m->core);
	/* "%6" PRIu64 " 0x%08" PRIx64 " %-14s %3s %-16s" */
	dump_num(w, &d->n_index, fr->index, 0, 6);
	o = apc_wbuf_room(w, 19);
	memcpy(o, " 0x", 3);
	w->len += 3 + apc_fmt_x64(o + 3, m->offset, 8);
	apc_wbuf_putc(w, ' ');
	apc_wbuf_pad(w, tn, strlen(tn), 14, 0);
	apc_wbuf_putc(w, ' ');
	apc_wbuf_pad(w, core, corelen, 3, 1);
	apc_wbuf_putc(w, ' ');
	apc_wbuf_pad(w, mn, strlen(mn), 16, 0);
	if (m->has_ts) {
		W_LIT(w, " ts=");
		dump_num(w, &d->n_ts, (uint64_t)m->ts, 1, 0);
	}
	for (size_t i = 0; i < m->nfields; i++) {
		const struct apc_field *fl = &m->f[i];
		const struct dump_key *k = dump_key(d, fl->name);
		size_t shown;

		if (k) {
			apc_wbuf_put(w, k->s, k->len);
		} else {
			apc_wbuf_putc(w, ' ');
			apc_wbuf_puts(w, fl->name);
			apc_wbuf_putc(w, '=');
		}
		switch (fl->kind) {
		case APC_F_STR: text_wstr(w, fl->s, fl->len); break;
		case APC_F_BYTES:
			shown = d->o->verbose || fl->len <= DUMP_BYTES_SHOWN ? fl->len : DUMP_BYTES_SHOWN;
			apc_wbuf_putc(w, '<');
			apc_wbuf_u64(w, fl->len);
			W_LIT(w, " bytes");
			if (shown) {
				apc_wbuf_putc(w, ' ');
				apc_wbuf_hex_bytes(w, fl->s, shown);
				if (shown < fl->len)
					W_LIT(w, "...");
			}
			apc_wbuf_putc(w, '>');
			break;
		case APC_F_PAIRS: pairs_print(w, fl, 0); break;
		case APC_F_WORDS: words_print(w, fl, 0); break;
		case APC_F_IDVALS: idvals_print(w, fl, 0); break;
		case APC_F_HEX:
		case APC_F_UHEX:
			W_LIT(w, "0x");
			apc_wbuf_x64(w, (uint64_t)fl->i, 0);
			break;
		default: apc_wbuf_i64(w, fl->i); break;
		}
	}
	apc_wbuf_putc(w, '\n');
}

/* xxd-style lines for the whole frame, length word included. */
static void print_hex(struct dump *d, const struct apc_frame *fr)
{
	static const char xd[] = "0123456789abcdef";
	struct apc_wbuf *w = &d->w;
	uint8_t lw[4] = {(uint8_t)fr->len, (uint8_t)(fr->len >> 8), (uint8_t)(fr->len >> 16),
			 (uint8_t)(fr->len >> 24)};
	size_t total = 4u + fr->len;

	for (size_t row = 0; row < total; row += 16) {
		size_t n = total - row < 16 ? total - row : 16;
		/* "        %08" PRIx64 ": " then 16 cells and the characters:
		 * at most 8 + 16 + 2 + 40 + 1 + 16 + 1 bytes. */
		char *o = apc_wbuf_room(w, 84), *p = o;

		memset(p, ' ', 8);
		p += 8;
		p += apc_fmt_x64(p, fr->offset + row, 8);
		*p++ = ':';
		*p++ = ' ';
		for (size_t i = 0; i < 16; i++) {
			if (i < n) {
				size_t at = row + i;
				uint8_t c = at < 4 ? lw[at] : fr->body[at - 4];
				*p++ = xd[c >> 4];
				*p++ = xd[c & 15];
			} else {
				*p++ = ' ';
				*p++ = ' ';
			}
			if (i & 1)
				*p++ = ' ';
		}
		*p++ = ' ';
		for (size_t i = 0; i < n; i++) {
			size_t at = row + i;
			uint8_t c = at < 4 ? lw[at] : fr->body[at - 4];
			*p++ = c >= 0x20 && c < 0x7f ? (char)c : '.';
		}
		*p++ = '\n';
		w->len += (size_t)(p - o);
	}
}

/* ---- summary accumulation ---------------------------------------------- */

static struct sum_counter *sum_counter(struct dump *d, int32_t key)
{
	size_t i = map_get(&d->ctr_map, (uint64_t)(uint32_t)key);
	struct sum_counter *c;

	if (i != (size_t)-1)
		return &d->ctrs[i];
	c = table_add((void **)&d->ctrs, &d->nctrs, &d->cctrs, sizeof *c);
	if (!c || apc_map64_put(&d->ctr_map, (uint64_t)(uint32_t)key, d->nctrs - 1) < 0)
		return NULL;
	c->key = key;
	return c;
}

static struct sum_core *sum_core(struct dump *d, int32_t core)
{
	size_t i = map_get(&d->core_map, (uint64_t)(uint32_t)core);
	struct sum_core *c;

	if (i != (size_t)-1)
		return &d->cores[i];
	c = table_add((void **)&d->cores, &d->ncores, &d->ccores, sizeof *c);
	if (!c || apc_map64_put(&d->core_map, (uint64_t)(uint32_t)core, d->ncores - 1) < 0)
		return NULL;
	c->core = core;
	return c;
}

static int set_name(char **dst, const uint8_t *s, size_t n)
{
	char *nn = dup_bytes(s, n);
	if (!nn)
		return APC_ENOMEM;
	free(*dst);
	*dst = nn;
	return APC_OK;
}

/* The thread of a message's tid field, added when new (NULL when out
 * of memory). */
static struct sum_thread *sum_thread(struct dump *d, const struct apc_field *tid)
{
	struct sum_thread *th;
	size_t i;

	if ((i = map_get(&d->thr_map, (uint64_t)tid->i)) != (size_t)-1)
		return &d->thr[i];
	th = table_add((void **)&d->thr, &d->nthr, &d->cthr, sizeof *th);
	if (!th || apc_map64_put(&d->thr_map, (uint64_t)tid->i, d->nthr - 1) < 0)
		return NULL;
	th->tid = (int32_t)tid->i;
	return th;
}

/* The entry for key in a table of `size`-byte entries indexed through
 * map, added (zeroed, *fresh set) when new; NULL when out of memory. */
static void *table_slot(struct apc_map64 *map, void **tab, size_t *n, size_t *cap, size_t size,
			uint64_t key, int *fresh)
{
	size_t i = map_get(map, key);
	void *o;

	*fresh = 0;
	if (i != (size_t)-1)
		return (char *)*tab + i * size;
	o = table_add(tab, n, cap, size);
	if (!o || apc_map64_put(map, key, *n - 1) < 0)
		return NULL;
	*fresh = 1;
	return o;
}

/* Last ts in an order table; returns the slot to update. */
static struct sum_order *order_slot(struct apc_map64 *map, struct sum_order **tab, size_t *n,
				    size_t *cap, uint64_t key, int *fresh)
{
	return table_slot(map, (void **)tab, n, cap, sizeof **tab, key, fresh);
}

static int sum_kind(struct dump *d, const char *name)
{
	struct sum_kind *k;

	for (size_t i = 0; i < d->nkinds; i++)
		if (d->kinds[i].ptr == name || !strcmp(d->kinds[i].name, name)) {
			d->kinds[i].n++;
			return APC_OK;
		}
	k = table_add((void **)&d->kinds, &d->nkinds, &d->ckinds, sizeof *k);
	if (!k || !(k->name = dup_bytes(name, strlen(name))))
		return APC_ENOMEM;
	k->ptr = name;
	k->n = 1;
	return APC_OK;
}

/* Widen the capture's time range to ts, and the data's when `data`. */
static void sum_time(struct dump *d, int64_t ts, int data)
{
	if (!d->have_ts || ts < d->first_ts)
		d->first_ts = ts;
	if (!d->have_ts || ts > d->last_ts)
		d->last_ts = ts;
	d->have_ts = 1;
	if (!data)
		return;
	if (!d->have_dts || ts < d->first_dts)
		d->first_dts = ts;
	if (!d->have_dts || ts > d->last_dts)
		d->last_dts = ts;
	d->have_dts = 1;
}

static int64_t dump_msg_core(const struct apc_msg *m);

/* Kinds written at time 0 for what is known before the data. */
static int dump_untimed_kind(const struct apc_msg *m)
{
	return (m->frame_type == APC_FRAME_NAME && !strcmp(m->name, "thread_name")) ||
	       (m->frame_type == APC_FRAME_ACTIVITY_TRACE && !strcmp(m->name, "link"));
}

/* How far ts is before `later` (later > ts), in ns, capped rather than
 * overflowing, as apcverify's v_before(). */
static int64_t dump_before(int64_t later, int64_t ts)
{
	uint64_t diff = (uint64_t)later - (uint64_t)ts;

	return diff > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)diff;
}

/*
 * Per core across frame types, by apcverify's rule (v_ts() in verify.c;
 * its ts-cross-type warning), so the two count the same: a message steps
 * back when its time is before the message just before it on its core,
 * of any frame type, and the step is not already one within its frame
 * (ts-frame) or per frame type and core (ts-core, type_back: what the
 * caller found).  Not against the latest time so far on the core: after
 * one frame type's buffer runs ahead, every message of the others would
 * count.  Frames whose messages apcverify orders on no core take no
 * part: External (annotations), and gatord 6.8's Proc frames (their
 * core is always 0 and names no CPU).  Neither do messages whose core is
 * negative or past captured.xml's <target cores> (apcverify's msg-core).
 * A Block Counter frame's time is checked within the frame where key 0
 * sets it, each key 0 against the one before; once one steps back there,
 * the values after it are not checked again.  The decoder hands out the
 * values only, so the key 0s before each are read here (sum_bc_times()).
 */
static void sum_bc_times(struct dump *d, const struct apc_frame *fr, const struct apc_msg *m)
{
	size_t end = (size_t)(m->offset - (fr->offset + 4u)); /* the value's key */
	size_t pos = d->x_bc_pos > fr->hdr_len ? d->x_bc_pos : fr->hdr_len;

	/* the decoder read these pairs before this value: they decode */
	while (pos < end && end <= fr->len) {
		int32_t key;
		int64_t val;
		int k = apc_frame_unpack32(fr->body + pos, end - pos, &key);
		if (k <= 0)
			break;
		pos += (size_t)k;
		if ((k = apc_frame_unpack64(fr->body + pos, end - pos, &val)) <= 0)
			break;
		pos += (size_t)k;
		if (key == 0) {
			d->x_fr_quiet = d->x_fr_have && val < d->x_fr_ts;
			d->x_fr_have = 1;
			d->x_fr_ts = val;
		}
	}
	d->x_bc_pos = end;
}

static int sum_cross(struct dump *d, const struct apc_frame *fr, int t, const struct apc_msg *m,
		     int type_back)
{
	struct sum_order *o;
	int frame_back, fresh;
	long limit = d->target_cores ? d->target_cores : APC_MAX_CORES;

	if (t == APC_FRAME_EXTERNAL || t == APC_FRAME_PROC)
		return APC_OK;
	if (t == APC_FRAME_BLOCK_COUNTER) {
		sum_bc_times(d, fr, m);
		frame_back = d->x_fr_quiet;
	} else {
		frame_back = d->x_fr_have && m->ts < d->x_fr_ts;
		d->x_fr_have = 1;
		d->x_fr_ts = m->ts;
	}
	if (m->core < 0 || m->core >= limit)
		return APC_OK;
	o = order_slot(&d->xord_map, &d->xord, &d->nxord, &d->cxord, (uint64_t)(uint32_t)m->core,
		       &fresh);
	if (!o)
		return APC_ENOMEM;
	if (!fresh && !frame_back && !type_back && m->ts < o->last) {
		int64_t back = dump_before(o->last, m->ts);
		if (!d->x_regressions)
			d->first_x_regression = (int64_t)m->offset;
		d->x_regressions++;
		if (back > d->x_largest)
			d->x_largest = back;
	}
	o->last = m->ts;
	return APC_OK;
}

#define FTYPE_BAD_CODE APC_DUMP_TYPES
#define FTYPE_EMPTY (APC_DUMP_TYPES + 1)

/* A frame's row in the summary's frame types, added when new (NULL when
 * out of memory): its code's, whatever the code (an unknown type is
 * listed by its own name, so it is counted under it), else "bad_code"
 * or "empty". */
static struct sum_ftype *sum_ftype(struct dump *d, const struct apc_frame *fr)
{
	struct sum_ftype *r;
	int fresh;

	if (fr->len == 0)
		return &d->ftypes[FTYPE_EMPTY];
	if (fr->hdr_len == 0) /* no code read: apc_msg_next() says so */
		return &d->ftypes[FTYPE_BAD_CODE];
	if (fr->type >= 0 && fr->type < APC_DUMP_TYPES)
		return &d->ftypes[fr->type];
	r = table_slot(&d->xtype_map, (void **)&d->xtypes, &d->nxtypes, &d->cxtypes, sizeof *r,
		       (uint64_t)(uint32_t)fr->type, &fresh);
	if (r)
		r->code = fr->type;
	return r;
}

static int sum_perf(struct dump *d, const struct apc_msg *m);

static int sum_msg(struct dump *d, const struct apc_frame *fr, const struct apc_msg *m)
{
	int t = fr->type;
	const struct apc_field *fl;
	int fresh;

	d->nmsgs++;
	d->fr_row->msgs++;
	if (sum_kind(d, m->name) < 0)
		return APC_ENOMEM;
	/* per core, the messages --core=N lists: a core_name, an
	 * annotation's counter value or activity switch by the core named */
	int64_t mc = dump_msg_core(m);
	if (mc >= 0 && mc <= INT32_MAX) {
		struct sum_core *c = sum_core(d, (int32_t)mc);
		if (!c)
			return APC_ENOMEM;
		c->msgs++;
	}
	/* A thread's name and link at time 0 may be what was known before
	 * the data (gatord's first scan of /proc, the names apcconv writes
	 * for a Barman trace, which has no time for them): the data span
	 * leaves them out. */
	if (m->has_ts)
		sum_time(d, m->ts, m->ts != 0 || !dump_untimed_kind(m));
	/* The order: not in a frame apcverify does not read (its frame-core),
	 * nor of perf records, whose times apcverify does not check (each
	 * CPU's ring buffer in the order the kernel wrote it) */
	if (m->has_ts && !d->fr_unread && t != APC_FRAME_PERF_DATA) {
		struct sum_order *o;
		/* Per (frame type, core): what gatord promises.  External
		 * frames have no core: their annotations are one stream per
		 * fd (a connection per thread), and fds interleave. */
		int32_t lane = m->core;
		int ann = 0;
		/* gatord 6.8's Proc frame: one buffer (the frame's core) whose
		 * online/offline messages name the CPU that changed state, not
		 * where they were written; apcverify orders them per frame core */
		if (t == APC_FRAME_PROC)
			lane = fr->core;
		if (t == APC_FRAME_EXTERNAL && (fl = apc_msg_field(m, "fd")) && fl->i >= INT32_MIN &&
		    fl->i <= INT32_MAX) {
			lane = (int32_t)fl->i;
			ann = 1;
		}
		/* which gatord 6.8 quirk a step back here would be, by
		 * apcverify's rules (v_ts() in verify.c) */
		int q = APC_TSQ_NONE, is_exit = 0;
		if (t == APC_FRAME_NAME && !strcmp(m->name, "thread_name") &&
		    (fl = apc_msg_field(m, "tid"))) {
			/* as apcverify's table: past 65536 tids every one is new */
			if (d->name_tids.n >= 65536 || !apc_map64_find(&d->name_tids, (uint64_t)fl->i, NULL)) {
				q = APC_TSQ_FIRST_NAME;
				if (d->name_tids.n < 65536 &&
				    apc_map64_put(&d->name_tids, (uint64_t)fl->i, 1) < 0)
					return APC_ENOMEM;
			}
		} else if (t == APC_FRAME_SCHED_TRACE) {
			is_exit = !strcmp(m->name, "thread_exit");
		}
		o = order_slot(&d->ord_map, &d->ord, &d->nord, &d->cord,
			       (uint64_t)(uint32_t)t << 32 | (uint32_t)lane, &fresh);
		if (!o)
			return APC_ENOMEM;
		if (t == APC_FRAME_SCHED_TRACE && !fresh && o->last_exit &&
		    !strcmp(m->name, "sched_switch"))
			q = APC_TSQ_EXIT_SWITCH;
		if (!fresh && m->ts < o->last) {
			if (ann) {
				/* an annotation, whose time its client gives
				 * (gator_annotate_counter_time_value takes any) */
				if (!d->ann_regressions)
					d->first_ann_regression = (int64_t)m->offset;
				d->ann_regressions++;
			} else {
				if (!d->regressions)
					d->first_regression = (int64_t)m->offset;
				d->regressions++;
				if (apc_ts_quirk_accepts(q, dump_before(o->last, m->ts), m->ts))
					d->quirks[q]++;
				else if (d->first_other_regression < 0)
					d->first_other_regression = (int64_t)m->offset;
			}
		}
		int type_back = !fresh && m->ts < o->last;
		o->last = m->ts;
		o->last_exit = is_exit;
		if (sum_cross(d, fr, t, m, type_back) < 0)
			return APC_ENOMEM;
	}
	/* (block counter messages, most of a capture, have no tid) */
	const struct apc_field *tid =
		m->frame_type != APC_FRAME_BLOCK_COUNTER ? apc_msg_field(m, "tid") : NULL;
	if (tid) {
		struct sum_thread *th = sum_thread(d, tid);
		if (!th)
			return APC_ENOMEM;
		th->msgs++;
	}
	if (!strcmp(m->name, "counter") || !strcmp(m->name, "block_counter") ||
	    !strcmp(m->name, "perf_counter") || !strcmp(m->name, "activity_switch")) {
		struct sum_counter *c;
		if ((fl = apc_msg_field(m, "key")) && fl->i >= INT32_MIN && fl->i <= INT32_MAX) {
			if (!(c = sum_counter(d, (int32_t)fl->i)))
				return APC_ENOMEM;
			c->values++;
		}
	} else if (m->name[0] == 'p' && !strncmp(m->name, "perf_", 5) &&
		   strcmp(m->name, "perf_comm")) {
		if (sum_perf(d, m) < 0)
			return APC_ENOMEM;
	} else if (!strcmp(m->name, "thread_name") || !strcmp(m->name, "proc") ||
		   !strcmp(m->name, "perf_comm")) {
		const struct apc_field *nm = apc_msg_field(m, m->name[0] == 't' ? "name" : "comm");
		struct sum_thread *th;
		if (nm && tid && (th = sum_thread(d, tid)) &&
		    set_name(&th->name, nm->s, nm->len) < 0)
			return APC_ENOMEM;
	} else if (!strcmp(m->name, "core_name")) {
		const struct apc_field *core = apc_msg_field(m, "core");
		const struct apc_field *nm = apc_msg_field(m, "name");
		const struct apc_field *cpuid = apc_msg_field(m, "cpuid");
		struct sum_core *c;
		if (core && core->i >= 0 && core->i <= INT32_MAX && nm && cpuid) {
			if (!(c = sum_core(d, (int32_t)core->i)) ||
			    set_name(&c->name, nm->s, nm->len) < 0)
				return APC_ENOMEM;
			c->named = 1;
			c->cpuid = (int32_t)cpuid->i;
		}
	}
	return APC_OK;
}

/* ---- perf counter values ---------------------------------------------- */

/* A value of the event with this id: one more value of its key. */
static int sum_perf_value(void *ctx, uint64_t id, uint64_t v)
{
	struct dump *d = ctx;
	uint64_t key;
	struct sum_counter *c;

	(void)v;
	if (!apc_map64_find(&d->perf.id_map, id, &key))
		return APC_OK;
	if (!(c = sum_counter(d, (int32_t)(uint32_t)key)))
		return APC_ENOMEM;
	c->values++;
	d->perf_values++;
	return APC_OK;
}

/* A read_format block's values count for their events' keys. */
static int sum_perf_read(struct dump *d, struct apc_perf_words *w, uint64_t fmt, uint64_t own)
{
	struct apc_perf_read r = {0, 0, sum_perf_value, d};
	int rc = apc_perf_read_walk(w, fmt, own, &r);

	return rc < 0 ? rc : APC_OK;
}

/*
 * Perf mode: the counters' values are in perf records.  An event's
 * attributes (perf_attr: its sample_type and read_format) and the ids
 * of its per-CPU instances (perf_keys) say how to read them: a sample's
 * first word is its event's id when the sample_type has IDENTIFIER
 * (gatord sets it), its read values come after the fields the
 * sample_type puts before them; a read record (the values of a counting
 * event) is the pid and tid word, the values, and the id last when the
 * sample_type has IDENTIFIER.  Records of events not declared, and
 * samples without an id first, are not counted.
 */
static int sum_perf(struct dump *d, const struct apc_msg *m)
{
	const struct apc_field *f;
	const struct apc_perf_attr *a;
	struct apc_perf_head h;
	uint64_t id, x;

	if (!strcmp(m->name, "perf_lost") || !strcmp(m->name, "perf_lost_samples")) {
		if ((f = apc_msg_field(m, "lost"))) {
			d->perf_lost += (uint64_t)f->i;
			d->perf_lost_recs++;
		}
		return APC_OK;
	}
	int sample = !strcmp(m->name, "perf_sample");
	if ((!sample && strcmp(m->name, "perf_read")) || !(f = apc_msg_field(m, "words")) ||
	    !(a = apc_perf_attr_of(&d->perf, f, sample, &id)))
		return APC_OK;
	struct apc_perf_words w = apc_perf_words_of(f);
	if (!sample) {
		if (!apc_perf_word(&w, &x)) /* pid, tid */
			return APC_OK;
		return sum_perf_read(d, &w, a->read_format, id);
	}
	if (!(a->sample_type & APC_PS_READ) || !apc_perf_sample_head(a, &w, &h))
		return APC_OK;
	return sum_perf_read(d, &w, a->read_format, id);
}

/* Append a field the caller names; a message has room (frame.h). */
static void perf_field(struct apc_msg *m, const char *name, uint8_t kind, uint64_t v)
{
	if (m->nfields < APC_MSG_MAX_FIELDS)
		m->f[m->nfields++] = (struct apc_field){name, kind, (int64_t)v, NULL, 0};
}

/* The NUL-terminated string a record holds from word `from` on (a comm,
 * a file name), into d->pstr; NULL when the words end first. */
static const char *perf_str(struct dump *d, const struct apc_field *f, uint64_t from, size_t *len)
{
	struct apc_perf_words w = apc_perf_words_of(f);
	uint64_t x;
	size_t n = 0;

	for (uint64_t i = 0; i < from; i++)
		if (!apc_perf_word(&w, &x))
			return NULL;
	while (apc_perf_word(&w, &x)) {
		for (int b = 0; b < 8; b++, x >>= 8) {
			if (!(x & 0xff)) {
				*len = n;
				return d->pstr;
			}
			if (n == sizeof d->pstr)
				return NULL;
			d->pstr[n++] = (char)(x & 0xff);
		}
	}
	return NULL;
}

/* The values a record reads, as (packed64 id, packed64 value) pairs in
 * d->pvals while they fit. */
struct perf_vals {
	struct dump *d;
	size_t len;
	uint64_t n;
	int full;
};

static int perf_val(void *ctx, uint64_t id, uint64_t v)
{
	struct perf_vals *pv = ctx;

	if (sizeof pv->d->pvals - pv->len < 20) {
		pv->full = 1;
		return 0;
	}
	pv->len += apc_pack64(pv->d->pvals + pv->len, (int64_t)id);
	pv->len += apc_pack64(pv->d->pvals + pv->len, (int64_t)v);
	pv->n++;
	return 0;
}

/* The first `n` words of a record's body. */
static int perf_words(const struct apc_field *f, uint64_t *v, int n)
{
	struct apc_perf_words w = apc_perf_words_of(f);

	for (int i = 0; i < n; i++)
		if (!apc_perf_word(&w, &v[i]))
			return 0;
	return 1;
}

/* A field a record's own layout names, kept until the record's fields
 * are put in order. */
struct perf_extra {
	const char *name;
	uint8_t kind;
	uint64_t v;
};

/*
 * Name what a perf record's words hold.  A record's own fields are its
 * type's (mmap, mmap2, comm, fork, exit, read, lost, aux, itrace_start,
 * lost_samples, switch_cpu_wide: the task's pid and tid, a fork's or
 * exit's parent, the mapping and its file, the new comm, what was lost).
 * The rest hangs on the record's event, found by its id: a sample's
 * fields before its read values, what a sample or read record reads,
 * and the sample id fields other records end with (sample_id_all).  They
 * go before the words, which stay whole, and the record's time, on the
 * perf clock (CLOCK_MONOTONIC_RAW, as the Summary's monotonic_delta and
 * annotations), becomes its timestamp.
 */
static void perf_name(struct dump *d, struct apc_msg *m)
{
	struct apc_perf_head h = {0};
	uint64_t id, v[4], pidtid = 0, ptid = 0;
	const struct apc_perf_attr *a;
	const char *str = NULL, *str_name = NULL;
	size_t str_len = 0;
	int body_tid = 0, fork = 0, map = 0, read = 0, nx = 0;
	struct perf_extra x[3];
	struct perf_vals pv = {d, 0, 0, 0};
	struct apc_perf_read rd = {0, 0, perf_val, &pv};

	/* a record's words are its last field, after misc and size: room
	 * for the twenty or so named here (frame.h) */
	if (!m->nfields || m->nfields > 4 || m->f[m->nfields - 1].kind != APC_F_WORDS)
		return;
	struct apc_field words = m->f[m->nfields - 1];
	int sample = !strcmp(m->name, "perf_sample");
	a = apc_perf_attr_of(&d->perf, &words, sample, &id);
	if (sample) {
		struct apc_perf_words w = apc_perf_words_of(&words);
		if (!a)
			return; /* nothing in a sample is known without its event */
		if (apc_perf_sample_head(a, &w, &h) && (a->sample_type & APC_PS_READ))
			read = apc_perf_read_walk(&w, a->read_format, h.id, &rd) > 0;
	} else {
		if (a)
			apc_perf_sample_tail(a, &words, &h);
		switch (m->code) {
		case APC_PR_MMAP:
		case APC_PR_MMAP2:
			if ((map = perf_words(&words, v, 4))) {
				pidtid = v[0];
				body_tid = 1;
				str = perf_str(d, &words, m->code == APC_PR_MMAP ? 4 : 8, &str_len);
				str_name = "filename";
			}
			break;
		case APC_PR_COMM:
			if ((body_tid = perf_words(&words, v, 1))) {
				pidtid = v[0];
				str = perf_str(d, &words, 1, &str_len);
				str_name = "comm";
			}
			break;
		case APC_PR_FORK:
		case APC_PR_EXIT:
			/* u32 pid, ppid; u32 tid, ptid */
			if ((fork = body_tid = perf_words(&words, v, 2))) {
				pidtid = (v[0] & 0xffffffffu) | v[1] << 32;
				ptid = v[0] >> 32 | (v[1] & 0xffffffff00000000u);
			}
			break;
		case APC_PR_READ: {
			struct apc_perf_words w = apc_perf_words_of(&words);
			/* the values need the event's read_format, and their
			 * own event's id from the sample id fields */
			if ((body_tid = apc_perf_word(&w, &pidtid)) && (h.have & (APC_PS_IDENTIFIER | APC_PS_ID)))
				read = apc_perf_read_walk(&w, a->read_format, h.id, &rd) > 0;
			break;
		}
		case APC_PR_LOST: /* u64 id, lost */
			if (perf_words(&words, v, 2))
				x[nx++] = (struct perf_extra){"lost", APC_F_INT, v[1]};
			break;
		case APC_PR_LOST_SAMPLES: /* u64 lost */
			if (perf_words(&words, v, 1))
				x[nx++] = (struct perf_extra){"lost", APC_F_INT, v[0]};
			break;
		case APC_PR_AUX: /* u64 aux_offset, aux_size, flags */
			if (perf_words(&words, v, 3)) {
				x[nx++] = (struct perf_extra){"aux_offset", APC_F_UHEX, v[0]};
				x[nx++] = (struct perf_extra){"aux_size", APC_F_INT, v[1]};
				x[nx++] = (struct perf_extra){"flags", APC_F_UHEX, v[2]};
			}
			break;
		case APC_PR_ITRACE_START: /* u32 pid, tid */
			if ((body_tid = perf_words(&words, v, 1)))
				pidtid = v[0];
			break;
		case APC_PR_SWITCH_CPU_WIDE: /* u32 next_prev_pid, next_prev_tid */
			if (perf_words(&words, v, 1)) {
				x[nx++] = (struct perf_extra){"next_prev_pid", APC_F_INT, (uint32_t)v[0]};
				x[nx++] = (struct perf_extra){"next_prev_tid", APC_F_INT, v[0] >> 32};
			}
			break;
		}
	}
	if (!body_tid)
		pidtid = h.pidtid;
	m->nfields--;
	if (h.have & (APC_PS_IDENTIFIER | APC_PS_ID))
		perf_field(m, "id", APC_F_UHEX, h.id);
	if (body_tid || (h.have & APC_PS_TID)) {
		perf_field(m, "pid", APC_F_INT, (uint32_t)pidtid);
		perf_field(m, "tid", APC_F_INT, pidtid >> 32);
	}
	if (fork) {
		perf_field(m, "ppid", APC_F_INT, (uint32_t)ptid);
		perf_field(m, "ptid", APC_F_INT, ptid >> 32);
	}
	if (h.have & APC_PS_IP)
		perf_field(m, "ip", APC_F_UHEX, h.ip);
	if (h.have & APC_PS_ADDR)
		perf_field(m, "addr", APC_F_UHEX, h.addr);
	if (map) {
		perf_field(m, "addr", APC_F_UHEX, v[1]);
		perf_field(m, "len", APC_F_UHEX, v[2]);
		perf_field(m, "pgoff", APC_F_UHEX, v[3]);
	}
	if (str && m->nfields < APC_MSG_MAX_FIELDS)
		m->f[m->nfields++] = (struct apc_field){str_name, APC_F_STR, 0, (const uint8_t *)str,
							(uint32_t)str_len};
	for (int i = 0; i < nx; i++)
		perf_field(m, x[i].name, x[i].kind, x[i].v);
	if (h.have & APC_PS_STREAM_ID)
		perf_field(m, "stream_id", APC_F_UHEX, h.stream_id);
	if (h.have & APC_PS_CPU)
		perf_field(m, "cpu", APC_F_INT, (uint32_t)h.cpu);
	if (h.have & APC_PS_PERIOD)
		perf_field(m, "period", APC_F_INT, h.period);
	if (read) {
		if (a->read_format & APC_PF_ENABLED)
			perf_field(m, "enabled", APC_F_INT, rd.enabled);
		if (a->read_format & APC_PF_RUNNING)
			perf_field(m, "running", APC_F_INT, rd.running);
		if (!pv.full && m->nfields < APC_MSG_MAX_FIELDS)
			m->f[m->nfields++] = (struct apc_field){"values", APC_F_IDVALS, (int64_t)pv.n,
								d->pvals, (uint32_t)pv.len};
	}
	m->f[m->nfields++] = words;
	if (h.have & APC_PS_TIME) {
		m->ts = (int64_t)(h.time - (uint64_t)d->delta);
		m->has_ts = 1;
	}
}

/* An annotate counter's declaration, value or activity switch. */
static int sum_ann_counter(struct dump *d, const struct apc_ann *n)
{
	uint64_t k = (uint64_t)(uint32_t)n->pid << 32 | (uint32_t)n->key;
	size_t i = map_get(&d->actr_map, k);
	struct sum_acounter *c;

	if (i == (size_t)-1) {
		c = table_add((void **)&d->actrs, &d->nactrs, &d->cactrs, sizeof *c);
		if (!c || apc_map64_put(&d->actr_map, k, d->nactrs - 1) < 0)
			return APC_ENOMEM;
		c->pid = n->pid;
		c->key = n->key;
	} else {
		c = &d->actrs[i];
	}
	if (n->code == APC_ANN_COUNTER_VALUE) {
		c->values++;
	} else if (n->code == APC_ANN_ACTIVITY_SWITCH) {
		c->switches++;
	} else {
		/* declared again: the last declaration is the one kept */
		c->declared = 1;
		if (n->counter && (set_opt(&c->title, n->counter->title) < 0 ||
				   set_opt(&c->name, n->counter->name) < 0))
			return APC_ENOMEM;
	}
	return APC_OK;
}

/* Annotation channels (and the annotations on them) and annotate
 * counters for the summary. */
static int sum_ann(struct dump *d, const struct apc_ann_msg *a)
{
	const struct apc_ann *n = &a->ann;
	/* A connection is its (pid, tid): a tid reused by another process
	 * is another connection.  Its channels and groups are keyed by the
	 * connection's entry, then their number. */
	uint64_t conn;
	struct sum_conn *k;
	struct sum_chan *c;
	struct sum_group *g;
	int fresh;

	k = table_slot(&d->conn_map, (void **)&d->conns, &d->nconns, &d->cconns, sizeof *k,
		       (uint64_t)(uint32_t)n->pid << 32 | (uint32_t)n->tid, &fresh);
	if (!k)
		return APC_ENOMEM;
	conn = (uint64_t)(k - d->conns) << 32;
	k->tid = n->tid;
	k->pid = n->pid;
	k->version = a->version;
	if (a->is_setup)
		return APC_OK;
	k->msgs++;
	if (n->code == APC_ANN_MARKER || n->code == APC_ANN_COLOR_MARKER)
		k->markers++;
	else if (n->code == APC_ANN_CAM_JOB || n->code == APC_ANN_JOB_START)
		k->jobs++;
	else if (n->code == APC_ANN_STR || n->code == APC_ANN_COLOR_STR)
		k->strs++;
	/* A CAM job carries its own start and duration (a v4 one has no
	 * message time at all; apcconv times the job's event at its end):
	 * both are in the capture's time range.  Absolute, as message
	 * times are; shown on the capture's clock. */
	if (n->code == APC_ANN_CAM_JOB) {
		sum_time(d, (int64_t)(n->start - (uint64_t)d->delta), 1);
		sum_time(d, (int64_t)(n->start + n->duration - (uint64_t)d->delta), 1);
	}
	if (n->code == APC_ANN_COUNTER || n->code == APC_ANN_COUNTER_VALUE ||
	    n->code == APC_ANN_ACTIVITY_SWITCH)
		return sum_ann_counter(d, n);
	if (n->code == APC_ANN_GROUP) {
		g = table_slot(&d->grp_map, (void **)&d->grps, &d->ngrps, &d->cgrps, sizeof *g,
			       conn | (uint32_t)n->group, &fresh);
		if (!g)
			return APC_ENOMEM;
		g->tid = n->tid;
		g->pid = n->pid;
		g->group = n->group;
		return set_name(&g->name, (const uint8_t *)(n->text ? n->text : ""),
				n->text ? n->text_len : 0);
	}
	if (n->code != APC_ANN_CHANNEL && n->code != APC_ANN_STR && n->code != APC_ANN_COLOR_STR)
		return APC_OK;
	c = table_slot(&d->chan_map, (void **)&d->chans, &d->nchans, &d->cchans, sizeof *c,
		       conn | (uint32_t)n->channel, &fresh);
	if (!c)
		return APC_ENOMEM;
	c->tid = n->tid;
	c->pid = n->pid;
	c->channel = n->channel;
	if (n->code == APC_ANN_CHANNEL) {
		c->group = n->group;
		if (set_name(&c->name, (const uint8_t *)(n->text ? n->text : ""),
			     n->text ? n->text_len : 0) < 0)
			return APC_ENOMEM;
	} else {
		c->count++;
	}
	return APC_OK;
}

/* ---- filtering and output ---------------------------------------------- */

/*
 * The core --core selects a message by: the frame's core or the one the
 * message sets (m->core), else its own "core" field - a core name, an
 * annotation's counter value or activity switch.  Those keep m->core -1
 * (the JSON member "core" and the summary's per-core order are about
 * where a message is, not the core it names), so the field is read here.
 */
static int64_t dump_msg_core(const struct apc_msg *m)
{
	const struct apc_field *fl;

	/* A Proc frame's core is a placeholder (gatord always writes 0):
	 * its messages are on no core, but an online_cpu or offline_cpu
	 * names the CPU that changed state, and a perf_counter the core
	 * its value is of. */
	if (m->frame_type == APC_FRAME_PROC) {
		if (!(fl = apc_msg_field(m, "cpu")))
			fl = apc_msg_field(m, "core");
		return fl && fl->kind == APC_F_INT ? fl->i : -1;
	}
	if (m->core >= 0)
		return m->core;
	fl = apc_msg_field(m, "core");
	return fl && fl->kind == APC_F_INT ? fl->i : -1;
}

/* 1 when --frame names the frame's type (as dump_frame_name() does). */
static int frame_wanted(const struct apc_dump_opts *o, const struct apc_frame *fr)
{
	if (fr->len == 0)
		return o->empty_frames;
	if (fr->type >= 0 && fr->type < APC_DUMP_TYPES)
		return o->frames[fr->type];
	for (int i = 0; i < o->nmore_frames; i++)
		if (o->more_frames[i] == fr->type)
			return 1;
	return 0;
}

static int dump_wanted(const struct dump *d, const struct apc_frame *fr, const struct apc_msg *m)
{
	const struct apc_dump_opts *o = d->o;

	if (o->have_frames && !frame_wanted(o, fr))
		return 0;
	if (o->have_core && dump_msg_core(m) != o->core)
		return 0;
	if (!o->have_begin && !o->have_end)
		return 1;
	int64_t t = m->ts;
	int timed = m->has_ts;
	/* A CAM job is in the window by its end, as apcconv keeps it (a
	 * v4 one has no time of its own); its start is already on the
	 * capture's clock (dump_external). */
	if (m->code == APC_ANN_CAM_JOB && m->frame_type == APC_FRAME_EXTERNAL &&
	    !strcmp(m->name, "annotate_cam_job")) {
		const struct apc_field *st = apc_msg_field(m, "start");
		const struct apc_field *du = apc_msg_field(m, "duration");
		if (st && du) {
			t = (int64_t)((uint64_t)st->i + (uint64_t)du->i);
			timed = 1;
		}
	}
	if (!timed)
		return 0;
	if (o->have_begin && t < o->begin)
		return 0;
	if (o->have_end && t > o->end)
		return 0;
	return 1;
}

/* One message: summary or listing.  Returns 1 if it was listed. */
static int dump_emit(struct dump *d, const struct apc_frame *fr, const struct apc_msg *m,
		     int first_of_frame)
{
	if (d->o->summary) {
		if (sum_msg(d, fr, m) < 0)
			dump_oom(d);
		return 0;
	}
	if (d->stop || !dump_wanted(d, fr, m))
		return 0;
	if (d->o->json)
		print_json(d, fr, m, first_of_frame);
	else
		print_text(d, fr, m);
	d->lines++;
	if (d->o->count && d->lines >= d->o->count)
		d->stop = 1;
	return 1;
}

static struct dump_fd *dump_fd(struct dump *d, int64_t fd)
{
	struct dump_fd *t;

	if (fd < 0 || !(t = apc_table_grow(d->fds, &d->nfds, sizeof *t, (size_t)fd + 1, DUMP_MAX_FD)))
		return NULL;
	d->fds = t;
	return &t[fd];
}

/*
 * An annotate decoder's problem, said as a file's are: the data file and
 * the External message's file offset in the FILE: offset 0x...: slot
 * (the number apcverify gives as frame N @0x...), then the fd and the
 * offset inside that fd's reassembled stream, labelled as such.
 */
static void dump_ann_problem(struct dump *d, const struct apc_frame *fr,
			     const struct apc_msg *ext, int64_t fd, struct apc_err *e)
{
	struct apc_err o;

	if (e->status != APC_EDATA) {
		dump_problem(d, e);
		return;
	}
	if (e->offset != APC_NO_OFFSET)
		apc_err_set(&o, APC_EDATA, NULL, (int64_t)ext->offset,
			    "external fd %" PRId64 ", stream offset 0x%" PRIx64 ": %s", fd,
			    (uint64_t)e->offset, e->msg);
	else
		apc_err_set(&o, APC_EDATA, NULL, (int64_t)ext->offset, "external fd %" PRId64 ": %s",
			    fd, e->msg);
	apc_err_index(&o, "frame", (int64_t)fr->index);
	dump_problem(d, &o);
}

/* Field `name` of an annotation, an absolute client time, put on the
 * capture's clock as its message time is (unsigned: wraps, never traps). */
static void dump_ann_clock(struct apc_msg *m, const char *name, int64_t delta)
{
	for (size_t i = 0; i < m->nfields; i++)
		if (!strcmp(m->f[i].name, name))
			m->f[i].i = (int64_t)((uint64_t)m->f[i].i - (uint64_t)delta);
}

/* Feed an External message's bytes to its fd's decoder; list what completes. */
static int dump_external(struct dump *d, const struct apc_frame *fr, const struct apc_msg *ext,
			 int *listed)
{
	const struct apc_field *fdf = apc_msg_field(ext, "fd");
	const struct apc_field *data = apc_msg_field(ext, "data");
	struct dump_fd *fd;
	struct apc_ann_msg am;
	struct apc_err e;
	int rc;

	if (!fdf)
		return APC_OK;
	if (!strcmp(ext->name, "external_disconnect")) {
		if ((fd = dump_fd(d, fdf->i)) != NULL) {
			size_t left = fd->dec && !fd->broken ? apc_ann_decoder_pending(fd->dec) : 0;

			/* A message cut by its connection's end cannot be
			 * decoded (apcverify's annotate-decode); a capture
			 * that stops inside one is only stopped. */
			if (left) {
				apc_err_set(&e, APC_EDATA, NULL, (int64_t)ext->offset,
					    "external fd %" PRId64 " disconnects inside an annotate "
					    "message (%zu byte%s pending)",
					    fdf->i, left, left == 1 ? "" : "s");
				apc_err_index(&e, "frame", (int64_t)fr->index);
				dump_problem(d, &e);
			}
			apc_ann_decoder_free(fd->dec);
			memset(fd, 0, sizeof *fd);
		} else {
			/* as apcverify's ext-fd */
			apc_err_set(&e, APC_EDATA, NULL, (int64_t)ext->offset,
				    "disconnect for fd %" PRId64 ", which is out of range", fdf->i);
			apc_err_index(&e, "frame", (int64_t)fr->index);
			dump_problem(d, &e);
		}
		return APC_OK;
	}
	if (!data || !data->len)
		return APC_OK;
	if (!(fd = dump_fd(d, fdf->i))) {
		apc_err_set(&e, APC_EDATA, NULL, (int64_t)ext->offset,
			    "external fd %" PRId64 " is out of range", fdf->i);
		apc_err_index(&e, "frame", (int64_t)fr->index);
		dump_problem(d, &e);
		return APC_OK;
	}
	if (fd->broken)
		return APC_OK;
	apc_err_clear(&e);
	if (!fd->dec) {
		char name[300];
		snprintf(name, sizeof name, "%s: external fd %" PRId64, d->dname, fdf->i);
		if (!(fd->dec = apc_ann_decoder_new(name)))
			return APC_ENOMEM;
		d->ann_budget.max = APC_ANN_HELD_MAX;
		apc_ann_decoder_share(fd->dec, &d->ann_budget);
	}
	if (apc_ann_decoder_feed(fd->dec, data->s, data->len, &e) < 0) {
		fd->broken = 1;
		dump_ann_problem(d, fr, ext, fdf->i, &e);
		return APC_OK;
	}
	while ((rc = apc_ann_decoder_next(fd->dec, &am, &e)) != APC_END) {
		struct apc_msg m;

		if (rc < 0) {
			if (rc != APC_EDATA) {
				fd->broken = 1;
				dump_ann_problem(d, fr, ext, fdf->i, &e);
				break;
			}
			dump_ann_problem(d, fr, ext, fdf->i, &e);
			apc_err_clear(&e);
			continue;
		}
		if (d->o->summary && sum_ann(d, &am) < 0)
			return APC_ENOMEM;
		memset(&m, 0, sizeof m);
		apc_ann_to_msg(&am, &m);
		m.frame_type = fr->type;
		m.offset = ext->offset;
		m.core = -1;
		m.code = am.is_setup ? -1 : am.ann.code;
		m.has_ts = am.has_ts;
		/* Annotate times are absolute; show them on the capture's clock. */
		m.ts = am.has_ts ? (int64_t)(am.ts - (uint64_t)d->delta) : 0;
		/* A CAM job's start is such a time too (the summary's span
		 * already takes it so): on the same clock as the ts= around
		 * it, or a user could not place the job among them. */
		if (am.ann.code == APC_ANN_CAM_JOB && !am.is_setup)
			dump_ann_clock(&m, "start", d->delta);
		if (!m.name)
			m.name = "annotate";
		/* Which connection (External id) it came on, first: messages of
		 * several threads interleave. */
		if (m.nfields < APC_MSG_MAX_FIELDS) {
			memmove(&m.f[1], &m.f[0], m.nfields * sizeof m.f[0]);
			m.f[0] = (struct apc_field){.name = "fd", .kind = APC_F_INT, .i = fdf->i};
			m.nfields++;
		}
		*listed |= dump_emit(d, fr, &m, !*listed);
	}
	return APC_OK;
}

/* The bytes of a frame from body offset pos on, as one opaque message
 * with code `code` (-1: none): from an unknown message code on, or what
 * follows an External disconnect. */
static void msg_rest(struct apc_msg *m, const struct apc_frame *fr, size_t pos, int code)
{
	memset(m, 0, sizeof *m);
	m->frame_type = fr->type;
	m->name = "opaque";
	m->code = code;
	m->core = fr->core;
	m->offset = fr->offset + 4u + pos;
	m->nfields = 1;
	m->f[0] = (struct apc_field){.name = "data", .kind = APC_F_BYTES,
				     .s = fr->body + pos,
				     .len = (uint32_t)(fr->len - pos)};
}

/* The Summary's uname attribute, if the message (a summary or
 * summary_attrs) gives it: the target's kernel.  The last one given,
 * as jq's from_entries keeps it. */
static int summary_uname(struct dump *d, const struct apc_msg *m)
{
	for (size_t i = 0; i + 1 < m->nfields; i++) {
		const struct apc_field *k = &m->f[i], *v = &m->f[i + 1];

		if (key_role(k->name) == DUMP_KEY_ATTR_KEY && key_role(v->name) == DUMP_KEY_ATTR_VALUE &&
		    k->len == 5 && !memcmp(k->s, "uname", 5) && set_name(&d->uname, v->s, v->len) < 0)
			return APC_ENOMEM;
	}
	return APC_OK;
}

/* All messages of one frame. */
static void dump_frame(struct dump *d, const struct apc_frame *fr)
{
	struct apc_msg_iter it;
	struct apc_msg m;
	struct apc_err e;
	uint64_t n = 0;
	int listed = 0, rc;
	int disconnect = 0; /* the frame's message was a disconnect of a valid fd */

	if (!(d->fr_row = sum_ftype(d, fr))) {
		dump_oom(d);
		return;
	}
	d->nframes++;
	d->fr_row->frames++;
	d->bytes += 4u + fr->len;
	/* the frame's own times start afresh (sum_cross()) */
	d->x_fr_have = d->x_fr_quiet = 0;
	d->x_bc_pos = 0;
	d->fr_unread = apc_frame_has_core(fr->type) &&
		       (fr->core < 0 || fr->core >= (d->target_cores ? d->target_cores : APC_MAX_CORES));
	apc_err_clear(&e);
	apc_msg_iter_init(&it, fr, d->clocks);
	while ((rc = apc_msg_next(&it, &m, &e)) == APC_OK) {
		/* A frame shown opaque (gatord 9.x's frame 11, types 12, 14,
		 * 15 and unknown ones) that is its header alone holds no
		 * message, as a Block Counter frame of its header alone: it
		 * gets the "empty" line below, not "opaque data=<0 bytes>"
		 * at an offset past the frame.  (The decoder hands it out as
		 * its last message: the loop ends after it.) */
		if (fr->hdr_len >= fr->len && !strcmp(m.name, "opaque"))
			continue;
		n++;
		if (m.frame_type == APC_FRAME_SUMMARY && !strcmp(m.name, "summary")) {
			const struct apc_field *fl = apc_msg_field(&m, "monotonic_delta");
			d->delta = fl ? fl->i : 0;
			fl = apc_msg_field(&m, "timestamp");
			d->wall_ns = fl ? fl->i : 0;
			d->have_wall = d->wall_ns != 0;
		}
		if (m.frame_type == APC_FRAME_SUMMARY && !strncmp(m.name, "summary", 7) &&
		    summary_uname(d, &m) < 0) {
			dump_oom(d);
			return;
		}
		if (m.name[0] == 'p' && !strncmp(m.name, "perf_", 5)) {
			if (apc_perf_learn(&d->perf, &m) < 0) {
				dump_oom(d);
				return;
			}
			if (m.frame_type == APC_FRAME_PERF_DATA)
				perf_name(d, &m);
		}
		listed |= dump_emit(d, fr, &m, !listed);
		if (m.name[0] != 'e') /* (most messages: two strcmp() calls spared) */
			continue;
		int dis = !strcmp(m.name, "external_disconnect");
		if (dis) {
			const struct apc_field *fd = apc_msg_field(&m, "fd");
			disconnect = fd && fd->i >= 0 && fd->i < DUMP_MAX_FD;
		}
		if ((dis || !strcmp(m.name, "external")) && dump_external(d, fr, &m, &listed) < 0) {
			dump_oom(d);
			return;
		}
	}
	if (rc == APC_END && disconnect && it.pos < fr->len) {
		/* A disconnect message is the frame's only one: the decoder
		 * stops after it.  apcverify warns of what follows
		 * ([unknown-msg]); so does this, in its words, listing
		 * those bytes as one opaque message. */
		struct apc_err w;
		size_t left = fr->len - it.pos;
		apc_err_set(&w, APC_OK, NULL, (int64_t)(fr->offset + 4u + it.pos),
			    "warning: %zu byte%s after a disconnect message", left, left == 1 ? "" : "s");
		apc_err_index(&w, "frame", (int64_t)fr->index);
		dump_warning(d, &w);
		msg_rest(&m, fr, it.pos, -1);
		n++;
		listed |= dump_emit(d, fr, &m, !listed);
	}
	if (rc == APC_EDATA && it.unknown) {
		/* An unknown message code leaves the message's length
		 * unknown.  apcverify warns and skips the rest of the frame
		 * ([unknown-msg]); so does this, listing those bytes (the
		 * code's first) as one opaque message. */
		struct apc_err w;
		apc_err_set(&w, APC_OK, NULL, e.offset, "warning: %s (rest of the frame skipped)",
			    e.msg);
		w.index = e.index;
		w.index_name = e.index_name;
		dump_warning(d, &w);
		msg_rest(&m, fr, it.unknown_pos, it.unknown_code);
		n++;
		listed |= dump_emit(d, fr, &m, !listed);
	} else if (rc < 0) {
		dump_problem(d, &e);
	}
	/* The guess made on a Summary holds for the rest of the file. */
	if (fr->type == APC_FRAME_SUMMARY && !d->clocks && it.summary_version)
		d->clocks = it.summary_version;
	if (n == 0 && rc == APC_END) {
		/* A frame with no messages still gets a line, so nothing hides. */
		memset(&m, 0, sizeof m);
		m.frame_type = fr->type;
		m.name = "empty";
		m.code = -1;
		m.core = fr->core;
		/* In the frame, never past it (the end of a frame that is
		 * all header is the next frame's length word): the bytes
		 * after the header when there are some (a Block Counter
		 * frame of key 0 only), else the body, else - a zero-length
		 * frame has none - its length word. */
		if (fr->hdr_len < fr->len)
			m.offset = fr->offset + 4u + fr->hdr_len;
		else if (fr->len)
			m.offset = fr->offset + 4u;
		else
			m.offset = fr->offset;
		listed |= dump_emit(d, fr, &m, 1);
	}
	if (listed && d->o->hex && !d->o->json)
		print_hex(d, fr);
}

/* ---- the summary report ------------------------------------------------ */

static int cmp_counter(const void *a, const void *b)
{
	const struct sum_counter *x = a, *y = b;
	return (x->key > y->key) - (x->key < y->key);
}

static int cmp_acounter(const void *a, const void *b)
{
	const struct sum_acounter *x = a, *y = b;
	if (x->pid != y->pid)
		return (x->pid > y->pid) - (x->pid < y->pid);
	return (x->key > y->key) - (x->key < y->key);
}

static int cmp_thread(const void *a, const void *b)
{
	const struct sum_thread *x = a, *y = b;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

static int cmp_core(const void *a, const void *b)
{
	const struct sum_core *x = a, *y = b;
	return (x->core > y->core) - (x->core < y->core);
}

/* Per connection (pid, tid), then by number. */
#define CMP3(x, y, a, b, c)                                                                    \
	((x)->a != (y)->a   ? ((x)->a > (y)->a) - ((x)->a < (y)->a)                             \
	 : (x)->b != (y)->b ? ((x)->b > (y)->b) - ((x)->b < (y)->b)                             \
			    : ((x)->c > (y)->c) - ((x)->c < (y)->c))

static int cmp_chan(const void *a, const void *b)
{
	const struct sum_chan *x = a, *y = b;
	return CMP3(x, y, pid, tid, channel);
}

static int cmp_group(const void *a, const void *b)
{
	const struct sum_group *x = a, *y = b;
	return CMP3(x, y, pid, tid, group);
}

static int cmp_conn(const void *a, const void *b)
{
	const struct sum_conn *x = a, *y = b;
	return CMP3(x, y, pid, tid, tid);
}

static int cmp_ftype(const void *a, const void *b)
{
	const struct sum_ftype *x = a, *y = b;
	return (x->code > y->code) - (x->code < y->code);
}

/*
 * Row i of the summary's frame types in the order shown, NULL past the
 * last: by code, an unknown one among the known (xtypes sorted, d->nneg
 * of them below 0), then the frames without a code.
 */
static const struct sum_ftype *ftype_row(const struct dump *d, size_t i)
{
	if (i < d->nneg)
		return &d->xtypes[i];
	i -= d->nneg;
	if (i < APC_DUMP_TYPES)
		return &d->ftypes[i];
	i -= APC_DUMP_TYPES;
	if (i < d->nxtypes - d->nneg)
		return &d->xtypes[d->nneg + i];
	i -= d->nxtypes - d->nneg;
	return i < 2 ? &d->ftypes[FTYPE_BAD_CODE + i] : NULL;
}

/* A row's name: the frames' type as the listing names it. */
static const char *ftype_name(struct dump *d, const struct sum_ftype *r)
{
	if (r == &d->ftypes[FTYPE_EMPTY])
		return "empty";
	if (r == &d->ftypes[FTYPE_BAD_CODE])
		return "bad_code";
	return apc_frame_type_name_r(r->code, d->tname, sizeof d->tname);
}

/*
 * ns since the epoch as UTC ISO-8601, "2026-11-22T12:58:25.105057563Z"
 * (whole seconds, "...:25Z", when frac is 0); "" when the time cannot
 * be placed (a year past what gmtime_r() takes).
 */
static const char *iso_utc(char *buf, size_t len, int64_t ns, int frac)
{
	int64_t sec = ns / 1000000000, rem = ns % 1000000000;
	struct tm tm;
	time_t t;
	size_t n;

	if (rem < 0) { /* before 1970: floor, so the fraction counts up */
		rem += 1000000000;
		sec--;
	}
	t = (time_t)sec;
	buf[0] = '\0';
	if ((int64_t)t != sec || !gmtime_r(&t, &tm) ||
	    !(n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm)))
		return buf;
	if (frac)
		snprintf(buf + n, len - n, ".%09" PRId64 "Z", rem);
	else
		snprintf(buf + n, len - n, "Z");
	return buf;
}

/* captured.xml's created (gatord: seconds since the epoch, in decimal)
 * as UTC ISO-8601, or "" when it is not such a number. */
static const char *created_utc(char *buf, size_t len, const char *created)
{
	char *end;
	long long sec;

	buf[0] = '\0';
	if (!created || !*created || strspn(created, "0123456789") != strlen(created))
		return buf;
	sec = strtoll(created, &end, 10);
	if (sec > INT64_MAX / 1000000000)
		return buf;
	return iso_utc(buf, len, (int64_t)sec * 1000000000, 0);
}

/* What the rates count over: the time span in ns, 0 when there is none. */
static uint64_t sum_span(const struct dump *d)
{
	return d->have_ts ? (uint64_t)d->last_ts - (uint64_t)d->first_ts : 0;
}

static void json_key(FILE *f, int *first, const char *k)
{
	if (!*first)
		putc(',', f);
	*first = 0;
	apc_json_cstr(f, k);
	putc(':', f);
}

/* num / den to three places, or null when den is 0 (no span, no frames). */
static void json_ratio(FILE *f, double num, uint64_t den)
{
	if (den)
		fprintf(f, "%.3f", num / (double)den);
	else
		fputs("null", f);
}

/* ,"key":offset, or null for -1 (none). */
static void json_offset(FILE *f, int *first, const char *k, int64_t off)
{
	json_key(f, first, k);
	if (off >= 0)
		fprintf(f, "%" PRId64, off);
	else
		fputs("null", f);
}

static void summary_json(struct dump *d)
{
	FILE *f = d->o->out;
	const struct sum_ftype *r;
	uint64_t span = sum_span(d);
	char when[64];
	int first = 1, inner;

	putc('{', f);
	json_key(f, &first, "file");
	apc_json_cstr(f, d->path);
	json_key(f, &first, "protocol");
	fprintf(f, "%d", d->protocol);
	json_key(f, &first, "summary_clocks");
	fprintf(f, "%d", d->clocks);
	json_key(f, &first, "frames");
	fprintf(f, "%" PRIu64, d->nframes);
	json_key(f, &first, "messages");
	fprintf(f, "%" PRIu64, d->nmsgs);
	json_key(f, &first, "bytes");
	fprintf(f, "%" PRIu64, d->bytes);
	/* the input as given, beside the data file's bytes */
	json_key(f, &first, "file_size");
	if (d->fsize >= 0)
		fprintf(f, "%" PRId64, d->fsize);
	else
		fputs("null", f);
	json_key(f, &first, "file_kind");
	apc_json_cstr(f, d->fkind);
	json_key(f, &first, "folder_files");
	if (d->fkind && !strcmp(d->fkind, "directory") && d->fsize >= 0)
		fprintf(f, "%zu", d->fsize_files);
	else
		fputs("null", f);
	json_key(f, &first, "frame_types");
	putc('{', f);
	inner = 1;
	for (size_t i = 0; (r = ftype_row(d, i)); i++) {
		if (!r->frames)
			continue;
		json_key(f, &inner, ftype_name(d, r));
		fprintf(f, "{\"frames\":%" PRIu64 ",\"messages\":%" PRIu64 "}", r->frames,
			r->msgs);
	}
	putc('}', f);
	json_key(f, &first, "message_kinds");
	putc('{', f);
	inner = 1;
	for (size_t i = 0; i < d->nkinds; i++) {
		json_key(f, &inner, d->kinds[i].name);
		fprintf(f, "%" PRIu64, d->kinds[i].n);
	}
	putc('}', f);
	json_key(f, &first, "counters");
	putc('[', f);
	for (size_t i = 0; i < d->nctrs; i++) {
		fprintf(f, "%s{\"key\":%" PRId32 ",\"name\":", i ? "," : "", d->ctrs[i].key);
		apc_json_cstr(f, d->ctrs[i].name);
		fprintf(f, ",\"declared\":%s,\"values\":%" PRIu64 "}",
			d->ctrs[i].declared ? "true" : "false", d->ctrs[i].values);
	}
	putc(']', f);
	json_key(f, &first, "perf_values");
	fprintf(f, "%" PRIu64, d->perf_values);
	json_key(f, &first, "perf_lost");
	fprintf(f, "%" PRIu64, d->perf_lost);
	json_key(f, &first, "perf_lost_records");
	fprintf(f, "%" PRIu64, d->perf_lost_recs);
	json_key(f, &first, "annotate_counters");
	putc('[', f);
	for (size_t i = 0; i < d->nactrs; i++) {
		const struct sum_acounter *c = &d->actrs[i];
		fprintf(f, "%s{\"pid\":%" PRId32 ",\"key\":%" PRId32 ",\"title\":", i ? "," : "", c->pid,
			c->key);
		apc_json_cstr(f, c->title);
		fputs(",\"name\":", f);
		apc_json_cstr(f, c->name);
		fprintf(f, ",\"declared\":%s,\"values\":%" PRIu64 ",\"activity_switches\":%" PRIu64 "}",
			c->declared ? "true" : "false", c->values, c->switches);
	}
	putc(']', f);
	json_key(f, &first, "channels");
	putc('[', f);
	for (size_t i = 0; i < d->nchans; i++) {
		const struct sum_chan *c = &d->chans[i];
		fprintf(f, "%s{\"tid\":%" PRId32 ",\"pid\":%" PRId32 ",\"channel\":%" PRId32
			   ",\"group\":%" PRId32 ",\"name\":",
			i ? "," : "", c->tid, c->pid, c->channel, c->group);
		apc_json_cstr(f, c->name);
		fprintf(f, ",\"annotations\":%" PRIu64 "}", c->count);
	}
	putc(']', f);
	json_key(f, &first, "groups");
	putc('[', f);
	for (size_t i = 0; i < d->ngrps; i++) {
		const struct sum_group *g = &d->grps[i];
		fprintf(f, "%s{\"tid\":%" PRId32 ",\"pid\":%" PRId32 ",\"group\":%" PRId32 ",\"name\":",
			i ? "," : "", g->tid, g->pid, g->group);
		apc_json_cstr(f, g->name);
		putc('}', f);
	}
	putc(']', f);
	json_key(f, &first, "annotate_connections");
	putc('[', f);
	for (size_t i = 0; i < d->nconns; i++) {
		const struct sum_conn *k = &d->conns[i];
		fprintf(f, "%s{\"tid\":%" PRId32 ",\"pid\":%" PRId32 ",\"thread\":", i ? "," : "",
			k->tid, k->pid);
		apc_json_cstr(f, k->name);
		fprintf(f, ",\"version\":%d,\"messages\":%" PRIu64 ",\"annotations\":%" PRIu64
			   ",\"markers\":%" PRIu64 ",\"jobs\":%" PRIu64 "}",
			k->version, k->msgs, k->strs, k->markers, k->jobs);
	}
	putc(']', f);
	json_key(f, &first, "cores");
	putc('[', f);
	for (size_t i = 0; i < d->ncores; i++) {
		fprintf(f, "%s{\"core\":%" PRId32 ",\"messages\":%" PRIu64, i ? "," : "",
			d->cores[i].core, d->cores[i].msgs);
		if (d->cores[i].named) {
			fprintf(f, ",\"cpuid\":%" PRId32 ",\"name\":", d->cores[i].cpuid);
			apc_json_cstr(f, d->cores[i].name);
		}
		putc('}', f);
	}
	putc(']', f);
	json_key(f, &first, "threads");
	putc('[', f);
	for (size_t i = 0; i < d->nthr; i++) {
		fprintf(f, "%s{\"tid\":%" PRId32 ",\"messages\":%" PRIu64 ",\"name\":", i ? "," : "",
			d->thr[i].tid, d->thr[i].msgs);
		if (d->thr[i].name)
			apc_json_cstr(f, d->thr[i].name);
		else
			fputs("null", f);
		putc('}', f);
	}
	putc(']', f);
	/* the wall clock: the Summary's timestamp, captured.xml's created */
	json_key(f, &first, "capture_start_ns");
	if (d->have_wall)
		fprintf(f, "%" PRId64, d->wall_ns);
	else
		fputs("null", f);
	json_key(f, &first, "capture_start");
	apc_json_cstr(f, d->have_wall && *iso_utc(when, sizeof when, d->wall_ns, 1) ? when : NULL);
	json_key(f, &first, "created");
	apc_json_cstr(f, d->created);
	json_key(f, &first, "created_utc");
	apc_json_cstr(f, *created_utc(when, sizeof when, d->created) ? when : NULL);
	if (d->have_ts) {
		json_key(f, &first, "first_ts");
		fprintf(f, "%" PRId64, d->first_ts);
		json_key(f, &first, "last_ts");
		fprintf(f, "%" PRId64, d->last_ts);
	}
	if (d->have_dts) {
		json_key(f, &first, "data_first_ts");
		fprintf(f, "%" PRId64, d->first_dts);
		json_key(f, &first, "data_last_ts");
		fprintf(f, "%" PRId64, d->last_dts);
	}
	/* capinfos's rates: over the whole span (null without one) */
	json_key(f, &first, "data_byte_rate");
	json_ratio(f, (double)d->bytes * 1e9, span);
	json_key(f, &first, "average_frame_size");
	json_ratio(f, (double)d->bytes, d->nframes);
	json_key(f, &first, "message_rate");
	json_ratio(f, (double)d->nmsgs * 1e9, span);
	json_key(f, &first, "in_order");
	fputs(d->regressions ? "false" : "true", f);
	json_key(f, &first, "regressions");
	fprintf(f, "%" PRIu64, d->regressions);
	json_key(f, &first, "annotation_regressions");
	fprintf(f, "%" PRIu64, d->ann_regressions);
	/* as apcverify's ts-cross-type: its count and largest step back */
	json_key(f, &first, "cross_type_regressions");
	fprintf(f, "%" PRIu64, d->x_regressions);
	json_key(f, &first, "cross_type_largest_step_back");
	fprintf(f, "%" PRId64, d->x_largest);
	/* of "regressions", the gatord 6.8 quirks apcverify accepts with a warning */
	json_key(f, &first, "gatord_quirk_regressions");
	fprintf(f, "%" PRIu64, d->quirks[APC_TSQ_FIRST_NAME] + d->quirks[APC_TSQ_EXIT_SWITCH]);
	/* what the text's lines say beside the counts: which quirks, and
	 * where the first of each kind of step back is (null: none) */
	json_key(f, &first, "gatord_quirks");
	fprintf(f, "{\"first_thread_name\":%" PRIu64 ",\"switch_after_exit\":%" PRIu64 "}",
		d->quirks[APC_TSQ_FIRST_NAME], d->quirks[APC_TSQ_EXIT_SWITCH]);
	json_offset(f, &first, "first_regression_offset", d->first_regression);
	json_offset(f, &first, "first_other_regression_offset", d->first_other_regression);
	json_offset(f, &first, "first_annotation_regression_offset", d->first_ann_regression);
	json_offset(f, &first, "first_cross_type_regression_offset", d->first_x_regression);
	/* the target, as captured.xml and the Summary name it */
	json_key(f, &first, "target_name");
	apc_json_cstr(f, d->target_name);
	json_key(f, &first, "target_cores");
	if (d->target_cores)
		fprintf(f, "%ld", d->target_cores);
	else
		fputs("null", f);
	json_key(f, &first, "uname");
	apc_json_cstr(f, d->uname);
	json_key(f, &first, "errors");
	fprintf(f, "%" PRIu64, d->errors);
	json_key(f, &first, "warnings");
	fprintf(f, "%" PRIu64, d->warnings);
	/* why the capture could not be opened or read, as apcverify says */
	json_key(f, &first, "io_error");
	if (d->status == APC_EIO)
		apc_json_cstr(f, d->io_error.msg);
	else
		fputs("null", f);
	fputs("}\n", f);
}

/* The noun after a count: "1 value", "2 values". */
static const char *noun(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* A counter key as the text shows it: hex, as captured.xml declares
 * them, a negative one (the data may hold it) signed, in `width`
 * columns. */
static void text_key(FILE *f, int32_t key, int width)
{
	if (key < 0)
		fprintf(f, "key %-*" PRId32, width, key);
	else
		fprintf(f, "key 0x%-*" PRIx32, width - 2, (uint32_t)key);
}

static void summary_text(struct dump *d)
{
	FILE *f = d->o->out;
	const struct sum_ftype *r;
	char when[64];
	uint64_t with_values = 0;

	fprintf(f, "File:                %s\n", d->name);
	if (d->protocol)
		fprintf(f, "Protocol:            %d\n", d->protocol);
	else
		fprintf(f, "Protocol:            unknown (%s)\n",
			d->xml_unread ? "captured.xml could not be read" : "no captured.xml");
	fprintf(f, "Summary clocks:      %d\n", d->clocks);
	fprintf(f, "Frames:              %" PRIu64 "\n", d->nframes);
	fprintf(f, "Messages:            %" PRIu64 "\n", d->nmsgs);
	/* capinfos's "File size" before its "Data size" */
	if (d->fsize < 0)
		fprintf(f, "File size:           unknown (%s)\n",
			!strcmp(d->path, "-") ? "standard input is not a file" : "cannot stat it");
	else if (d->fkind && !strcmp(d->fkind, "directory"))
		fprintf(f, "File size:           %" PRId64 " bytes (folder, %zu %s)\n", d->fsize,
			d->fsize_files, noun(d->fsize_files, "file", "files"));
	else
		fprintf(f, "File size:           %" PRId64 " bytes (%s)\n", d->fsize,
			d->fkind ? d->fkind : "file");
	fprintf(f, "Bytes:               %" PRIu64 "\n", d->bytes);
	fprintf(f, "Frame types:\n");
	for (size_t i = 0; (r = ftype_row(d, i)); i++) {
		if (!r->frames)
			continue;
		if (r < d->ftypes + FTYPE_BAD_CODE || r >= d->ftypes + FTYPE_EMPTY + 1)
			fprintf(f, "  %3" PRId32 " %-16s", r->code, ftype_name(d, r));
		else
			fprintf(f, "    %c %-16s", r == d->ftypes + FTYPE_BAD_CODE ? '?' : '-',
				ftype_name(d, r));
		fprintf(f, " %10" PRIu64 " %s %10" PRIu64 " %s\n", r->frames,
			noun(r->frames, "frame ", "frames"), r->msgs,
			noun(r->msgs, "message", "messages"));
	}
	fprintf(f, "Message kinds:\n");
	for (size_t i = 0; i < d->nkinds; i++)
		fprintf(f, "  %-28s %10" PRIu64 "\n", d->kinds[i].name, d->kinds[i].n);
	for (size_t i = 0; i < d->nctrs; i++)
		with_values += d->ctrs[i].values != 0;
	/* Perf-mode captures carry perf counters' values in perf records
	 * (sum_perf() reads them): say how many, so that "0 values" of a
	 * counter reads as none found there. */
	uint64_t perf = d->ftypes[APC_FRAME_PERF_DATA].frames;
	fprintf(f, "Counters:            %zu (%" PRIu64 " with values", d->nctrs, with_values);
	if (perf)
		fprintf(f, "; %" PRIu64 " %s read from the records of %" PRIu64 " perf data frame%s",
			d->perf_values, noun(d->perf_values, "value", "values"), perf,
			perf == 1 ? "" : "s");
	fputs(")\n", f);
	for (size_t i = 0; i < d->nctrs; i++) {
		fputs("  ", f);
		text_key(f, d->ctrs[i].key, 8);
		fprintf(f, " %-40s %10" PRIu64 " %s%s\n",
			d->ctrs[i].name ? d->ctrs[i].name : "(unnamed)", d->ctrs[i].values,
			noun(d->ctrs[i].values, "value", "values"),
			d->ctrs[i].declared ? "" : "  (not in captured.xml)");
	}
	/* what the kernel could not put in its ring buffers: samples and
	 * records missing from the perf data, which its lost records count */
	if (d->perf_lost_recs)
		fprintf(f, "Perf records lost:   %" PRIu64 " (as %" PRIu64 " lost record%s say%s)\n",
			d->perf_lost, d->perf_lost_recs, d->perf_lost_recs == 1 ? "" : "s",
			d->perf_lost_recs == 1 ? "s" : "");
	with_values = 0;
	for (size_t i = 0; i < d->nactrs; i++)
		with_values += d->actrs[i].values || d->actrs[i].switches;
	fprintf(f, "Annotate counters:   %zu (%" PRIu64 " with values or activity switches)\n", d->nactrs,
		with_values);
	for (size_t i = 0; i < d->nactrs; i++) {
		const struct sum_acounter *c = &d->actrs[i];
		fprintf(f, "  annotate pid %-7" PRId32 " key %-6" PRId32 " ", c->pid, c->key);
		if (c->declared) {
			text_str(f, (const uint8_t *)(c->title ? c->title : ""), c->title ? strlen(c->title) : 0);
			putc(' ', f);
			text_str(f, (const uint8_t *)(c->name ? c->name : ""), c->name ? strlen(c->name) : 0);
		} else {
			fputs("(not declared)", f);
		}
		fprintf(f, " %" PRIu64 " %s", c->values, noun(c->values, "value", "values"));
		if (c->switches)
			fprintf(f, ", %" PRIu64 " %s", c->switches,
				noun(c->switches, "activity switch", "activity switches"));
		putc('\n', f);
	}
	fprintf(f, "Annotation channels: %zu\n", d->nchans);
	for (size_t i = 0; i < d->nchans; i++) {
		const struct sum_chan *c = &d->chans[i];
		fprintf(f, "  tid %-8" PRId32 " pid %-8" PRId32 " channel %-6" PRId32 " group %-6" PRId32
			   " ",
			c->tid, c->pid, c->channel, c->group);
		if (c->name)
			text_str(f, (const uint8_t *)c->name, strlen(c->name));
		else
			fputs("(unnamed)", f);
		fprintf(f, " %" PRIu64 " %s\n", c->count, noun(c->count, "annotation", "annotations"));
	}
	fprintf(f, "Annotation groups:   %zu\n", d->ngrps);
	for (size_t i = 0; i < d->ngrps; i++) {
		const struct sum_group *g = &d->grps[i];
		fprintf(f, "  tid %-8" PRId32 " pid %-8" PRId32 " group %-6" PRId32 " ", g->tid, g->pid,
			g->group);
		text_str(f, (const uint8_t *)g->name, strlen(g->name));
		putc('\n', f);
	}
	fprintf(f, "Annotate connections: %zu\n", d->nconns);
	for (size_t i = 0; i < d->nconns; i++) {
		const struct sum_conn *k = &d->conns[i];
		fprintf(f, "  tid %-8" PRId32 " pid %-8" PRId32 " v%d %8" PRIu64 " %s %8" PRIu64
			   " %s %6" PRIu64 " %s %8" PRIu64 " %s  ",
			k->tid, k->pid, k->version, k->msgs, noun(k->msgs, "message ", "messages"),
			k->strs, noun(k->strs, "annotation ", "annotations"), k->markers,
			noun(k->markers, "marker ", "markers"), k->jobs, noun(k->jobs, "job ", "jobs"));
		if (k->name)
			text_str(f, (const uint8_t *)k->name, strlen(k->name));
		else
			fputs("(no name)", f);
		putc('\n', f);
	}
	fprintf(f, "Cores:               %zu\n", d->ncores);
	for (size_t i = 0; i < d->ncores; i++) {
		fprintf(f, "  core %-4" PRId32 " %10" PRIu64 " %s", d->cores[i].core,
			d->cores[i].msgs, noun(d->cores[i].msgs, "message", "messages"));
		if (d->cores[i].named) {
			fprintf(f, "%s  cpuid 0x%" PRIx32 " ", d->cores[i].msgs == 1 ? " " : "",
				(uint32_t)d->cores[i].cpuid);
			text_str(f, (const uint8_t *)d->cores[i].name, strlen(d->cores[i].name));
		}
		putc('\n', f);
	}
	size_t named = 0;
	for (size_t i = 0; i < d->nthr; i++)
		named += d->thr[i].name != NULL;
	fprintf(f, "Threads:             %zu (%zu named)\n", d->nthr, named);
	for (size_t i = 0; i < d->nthr; i++) {
		fprintf(f, "  tid %-8" PRId32 " %10" PRIu64 " %s  ", d->thr[i].tid, d->thr[i].msgs,
			noun(d->thr[i].msgs, "message ", "messages"));
		if (d->thr[i].name)
			text_str(f, (const uint8_t *)d->thr[i].name, strlen(d->thr[i].name));
		else
			fputs("(no name)", f);
		putc('\n', f);
	}
	/* the wall clock the zero-based times count from */
	if (d->have_wall && *iso_utc(when, sizeof when, d->wall_ns, 1))
		fprintf(f, "Capture start:       %s (the Summary's timestamp)\n", when);
	else if (d->have_wall)
		fprintf(f, "Capture start:       %" PRId64 " ns since the epoch (the Summary's timestamp)\n",
			d->wall_ns);
	else
		fprintf(f, "Capture start:       unknown (no Summary timestamp)\n");
	if (d->created && *created_utc(when, sizeof when, d->created))
		fprintf(f, "Created:             %s (captured.xml)\n", when);
	else if (d->created) {
		fputs("Created:             ", f);
		text_str(f, (const uint8_t *)d->created, strlen(d->created));
		fputs(" (captured.xml)\n", f);
	}
	if (d->have_ts) {
		/* last >= first (the extremes), so the difference fits in
		 * 64 unsigned bits even when it does not fit signed ones (a
		 * damaged capture's times may be anything). */
		uint64_t span = (uint64_t)d->last_ts - (uint64_t)d->first_ts;
		fprintf(f, "First timestamp:     %" PRId64 " ns\n", d->first_ts);
		fprintf(f, "Last timestamp:      %" PRId64 " ns\n", d->last_ts);
		fprintf(f, "Time span:           %" PRIu64 ".%09" PRIu64 " s", span / 1000000000,
			span % 1000000000);
		/* the data's span, apcconv's for a Barman trace */
		if (d->have_dts && (d->first_dts != d->first_ts || d->last_dts != d->last_ts)) {
			span = (uint64_t)d->last_dts - (uint64_t)d->first_dts;
			fprintf(f, " (%" PRIu64 ".%09" PRIu64 " s from %" PRId64
				   " ns, without thread names and links at 0)",
				span / 1000000000, span % 1000000000, d->first_dts);
		}
		putc('\n', f);
	} else {
		fprintf(f, "Time span:           no timestamps\n");
	}
	/* capinfos's rates, in its order, over the whole span */
	uint64_t span = sum_span(d);
	if (span)
		fprintf(f, "Data byte rate:      %.3f bytes/s\n", (double)d->bytes * 1e9 / (double)span);
	else
		fprintf(f, "Data byte rate:      unknown (no time span)\n");
	if (d->nframes)
		fprintf(f, "Average frame size:  %.3f bytes\n", (double)d->bytes / (double)d->nframes);
	else
		fprintf(f, "Average frame size:  unknown (no frames)\n");
	if (span)
		fprintf(f, "Message rate:        %.3f messages/s\n", (double)d->nmsgs * 1e9 / (double)span);
	else
		fprintf(f, "Message rate:        unknown (no time span)\n");
	if (d->regressions) {
		uint64_t nq = d->quirks[APC_TSQ_FIRST_NAME] + d->quirks[APC_TSQ_EXIT_SWITCH];
		fprintf(f, "Timestamps in order: no (%" PRIu64 " %s per frame type and core, "
			   "first at offset 0x%" PRIx64, d->regressions,
			noun(d->regressions, "regression", "regressions"), (uint64_t)d->first_regression);
		/* which of them apcverify accepts (a warning each) */
		if (nq == d->regressions)
			fprintf(f, "; %s gatord 6.8 %s apcverify accepts: ", nq == 1 ? "a" : "all",
				noun(nq, "quirk", "quirks"));
		else if (nq)
			fprintf(f, "; %" PRIu64 " of them %sgatord 6.8 %s apcverify accepts (", nq,
				nq == 1 ? "a " : "", noun(nq, "quirk", "quirks"));
		if (nq)
			fprintf(f, "%" PRIu64 " first thread %s, %" PRIu64 " %s after an exit",
				d->quirks[APC_TSQ_FIRST_NAME],
				noun(d->quirks[APC_TSQ_FIRST_NAME], "name", "names"),
				d->quirks[APC_TSQ_EXIT_SWITCH],
				noun(d->quirks[APC_TSQ_EXIT_SWITCH], "switch", "switches"));
		if (nq && nq < d->regressions)
			fprintf(f, "), the first other at offset 0x%" PRIx64,
				(uint64_t)d->first_other_regression);
		fputs(")\n", f);
	} else
		fprintf(f, "Timestamps in order: yes (per frame type and core)\n");
	if (d->ann_regressions)
		fprintf(f, "Annotation times:    %" PRIu64 " %s back per fd, first at offset 0x%" PRIx64
			   " (client times, not disorder)\n", d->ann_regressions,
			noun(d->ann_regressions, "step", "steps"), (uint64_t)d->first_ann_regression);
	else
		fprintf(f, "Annotation times:    in order per fd\n");
	/* apcverify's [ts-cross-type] count ("first of N") and largest step */
	if (d->x_regressions)
		fprintf(f, "Across frame types:  %" PRIu64 " %s back per core, first at offset 0x%" PRIx64
			   ", largest %" PRId64 " ns (apcverify warns of them, ts-cross-type: gatord "
			   "writes each frame type from its own buffer)\n",
			d->x_regressions, noun(d->x_regressions, "step", "steps"),
			(uint64_t)d->first_x_regression, d->x_largest);
	else
		fprintf(f, "Across frame types:  0 steps back per core\n");
	/* capinfos's capture hardware and OS: the target */
	if (d->target_name) {
		fputs("Target:              ", f);
		text_str(f, (const uint8_t *)d->target_name, strlen(d->target_name));
		if (d->target_cores)
			fprintf(f, ", %ld %s", d->target_cores, noun((uint64_t)d->target_cores, "core", "cores"));
		fputs(" (captured.xml)\n", f);
	} else if (d->target_cores) {
		fprintf(f, "Target:              unnamed, %ld %s (captured.xml)\n", d->target_cores,
			noun((uint64_t)d->target_cores, "core", "cores"));
	} else {
		fprintf(f, "Target:              unknown (%s)\n",
			d->doc	       ? "captured.xml does not name it"
			: d->xml_unread ? "captured.xml could not be read"
					: "no captured.xml");
	}
	if (d->uname) {
		fputs("Target uname:        ", f);
		text_str(f, (const uint8_t *)d->uname, strlen(d->uname));
		fputs(" (the Summary's uname)\n", f);
	}
	/* JSON's io_error: what stopped a part of the capture being read */
	if (d->status == APC_EIO) {
		char line[sizeof d->io_error.file + sizeof d->io_error.msg + 64];
		fprintf(f, "Not read:            %s\n", apc_err_format(&d->io_error, line, sizeof line));
	}
	fprintf(f, "Problems:            %" PRIu64 "\n", d->errors);
	fprintf(f, "Warnings:            %" PRIu64 "\n", d->warnings);
}

static void summary_print(struct dump *d)
{
	/* Tables may be empty (NULL), which qsort must not see. */
	if (d->nxtypes > 1)
		qsort(d->xtypes, d->nxtypes, sizeof *d->xtypes, cmp_ftype);
	while (d->nneg < d->nxtypes && d->xtypes[d->nneg].code < 0)
		d->nneg++;
	if (d->nctrs > 1)
		qsort(d->ctrs, d->nctrs, sizeof *d->ctrs, cmp_counter);
	if (d->nactrs > 1)
		qsort(d->actrs, d->nactrs, sizeof *d->actrs, cmp_acounter);
	/* (names looked up through the thread map before it is sorted) */
	for (size_t i = 0; i < d->nconns; i++) {
		size_t t = map_get(&d->thr_map, (uint64_t)d->conns[i].tid);
		d->conns[i].name = t != (size_t)-1 ? d->thr[t].name : NULL;
	}
	if (d->nthr > 1)
		qsort(d->thr, d->nthr, sizeof *d->thr, cmp_thread);
	if (d->ncores > 1)
		qsort(d->cores, d->ncores, sizeof *d->cores, cmp_core);
	if (d->nchans > 1)
		qsort(d->chans, d->nchans, sizeof *d->chans, cmp_chan);
	if (d->ngrps > 1)
		qsort(d->grps, d->ngrps, sizeof *d->grps, cmp_group);
	if (d->nconns > 1)
		qsort(d->conns, d->nconns, sizeof *d->conns, cmp_conn);
	if (d->o->json)
		summary_json(d);
	else
		summary_text(d);
}

/* ---- driver ------------------------------------------------------------ */

static void dump_free(struct dump *d)
{
	for (size_t i = 0; i < d->nfds; i++)
		apc_ann_decoder_free(d->fds[i].dec);
	free(d->fds);
	for (size_t i = 0; i < d->nkinds; i++)
		free(d->kinds[i].name);
	free(d->kinds);
	for (size_t i = 0; i < d->nctrs; i++)
		free(d->ctrs[i].name);
	free(d->ctrs);
	for (size_t i = 0; i < d->nactrs; i++) {
		free(d->actrs[i].title);
		free(d->actrs[i].name);
	}
	free(d->actrs);
	for (size_t i = 0; i < d->nthr; i++)
		free(d->thr[i].name);
	free(d->thr);
	for (size_t i = 0; i < d->ncores; i++)
		free(d->cores[i].name);
	free(d->cores);
	for (size_t i = 0; i < d->nchans; i++)
		free(d->chans[i].name);
	free(d->chans);
	for (size_t i = 0; i < d->ngrps; i++)
		free(d->grps[i].name);
	free(d->grps);
	free(d->conns);
	free(d->xtypes);
	free(d->uname);
	free(d->created);
	free(d->target_name);
	free(d->ord);
	free(d->xord);
	apc_map64_free(&d->ctr_map);
	apc_perf_free(&d->perf);
	apc_map64_free(&d->actr_map);
	apc_map64_free(&d->thr_map);
	apc_map64_free(&d->core_map);
	apc_map64_free(&d->chan_map);
	apc_map64_free(&d->grp_map);
	apc_map64_free(&d->conn_map);
	apc_map64_free(&d->ord_map);
	apc_map64_free(&d->xtype_map);
	apc_map64_free(&d->xord_map);
	apc_map64_free(&d->name_tids);
	if (d->doc)
		xmlFreeDoc(d->doc);
}

/* Which capture the lines that follow are of, as head(1) says it. */
static void dump_name_line(struct dump *d)
{
	W_LIT(&d->w, "==> ");
	apc_wbuf_puts(&d->w, d->name);
	W_LIT(&d->w, " <==\n");
}

/*
 * Zero-length frames one after another get one warning, as apcverify's
 * frame-empty, after the run's lines (a stretch of zeros in a data file
 * lists as one "empty" line per 4 bytes, and the listing alone exited 0
 * without a word).  Not when the listing stopped part way (-c): the run
 * may go on.
 */
static void dump_empty_flush(struct dump *d)
{
	struct apc_err w;
	char words[256];

	if (!d->empty_run || d->stop)
		return;
	apc_err_set(&w, APC_OK, NULL, d->empty_off, "warning: %s",
		    apc_frame_empty_words(d->empty_run, d->empty_off, d->empty_end, words,
					  sizeof words));
	apc_err_index(&w, "frame", d->empty_frame);
	dump_warning(d, &w);
	d->empty_run = 0;
}

static void dump_frames(struct dump *d, struct apc_stream *s)
{
	struct apc_frame_reader *fr;
	struct apc_frame f;
	struct apc_err e;
	int rc;

	apc_err_clear(&e);
	if (apc_frame_reader_new(s, &fr, &e) < 0) {
		dump_problem(d, &e);
		return;
	}
	/* 1 MiB reads, not two per frame, when the size is known (as
	 * apcverify does; see apc_frame_reader_readahead for why not on
	 * pipes and gzip streams). */
	if (apc_stream_size(s) >= 0)
		apc_frame_reader_readahead(fr, 1u << 20);
	for (uint64_t n = 0; !d->stop; n++) {
		rc = apc_frame_read(fr, &f, &e);
		/* The first frame already bad, in bytes apcconv would
		 * convert: that, not what their first word makes as a frame
		 * length, is what the user needs to hear (and no name line:
		 * nothing of it is a capture's listing). */
		if (n == 0 && rc == APC_EDATA && d->foreign)
			e = d->foreign_err;
		else if (n == 0 && d->w.p && d->o->name_inputs && !d->o->json)
			dump_name_line(d);
		if (rc != APC_OK || f.len != 0)
			dump_empty_flush(d);
		if (rc == APC_END)
			break;
		if (rc < 0) {
			/* A bad length word leaves nothing to resynchronise on. */
			dump_problem(d, &e);
			break;
		}
		if (f.len == 0) {
			if (!d->empty_run) {
				d->empty_frame = (int64_t)f.index;
				d->empty_off = (int64_t)f.offset;
			}
			d->empty_run++;
			d->empty_end = (int64_t)f.offset + 4;
		}
		dump_frame(d, &f);
	}
	apc_frame_reader_free(fr);
}

/*
 * The size of the input as given, as capinfos's "File size": a file's or
 * archive's own (compressed, as it is on disk), a folder's files summed,
 * standard input's when it is a file; not known (-1) for a pipe, or
 * when a stat fails (the listing reads it all the same).
 */
static int dump_file_size(struct dump *d, struct apc_input *in)
{
	struct stat st;

	d->fsize = -1;
	d->fkind = apc_input_kind(in);
	if (!strcmp(d->path, "-")) {
		if (fstat(STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode))
			d->fsize = st.st_size;
		return APC_OK;
	}
	if (stat(d->path, &st) < 0)
		return APC_OK;
	if (!S_ISDIR(st.st_mode)) {
		d->fsize = st.st_size;
		return APC_OK;
	}
	const char *const *names;
	size_t n, plen = strlen(d->path);
	int64_t sum = 0;

	if (apc_input_members(in, &names, &n) < 0)
		return APC_OK;
	for (size_t i = 0; i < n; i++) {
		char *p = malloc(plen + strlen(names[i]) + 2);

		if (!p)
			return APC_ENOMEM;
		sprintf(p, "%s/%s", d->path, names[i]);
		if (stat(p, &st) == 0 && S_ISREG(st.st_mode)) {
			sum += st.st_size;
			d->fsize_files++;
		}
		free(p);
	}
	d->fsize = sum;
	return APC_OK;
}

/* The capture's archive is damaged: one problem, named by the archive. */
static void dump_damage(struct dump *d, const struct apc_input *in)
{
	struct apc_err e = *apc_input_damage(in);

	dump_problem(d, &e);
}

int apc_dump_path(const char *path, const struct apc_dump_opts *o)
{
	struct dump d;
	struct apc_input *in = NULL;
	struct apc_stream *s = NULL;
	struct apc_err e;
	int own = 0;

	memset(&d, 0, sizeof d);
	d.o = o;
	d.fsize = -1;
	d.path = path;
	/* as apcconv and the input layer name it */
	d.name = strcmp(path, "-") ? path : "<stdin>";
	d.first_regression = -1;
	d.first_other_regression = -1;
	d.first_ann_regression = -1;
	d.first_x_regression = -1;
	for (int t = 0; t < APC_DUMP_TYPES; t++)
		d.ftypes[t].code = t;
	apc_err_clear(&e);
	if (apc_input_open(path, &in, &e) < 0) {
		/* Name the input once: the message may already say it
		 * ("<stdin>" for -, as every message of the three tools) */
		if (!e.file[0] && !names_itself(e.msg, path))
			snprintf(e.file, sizeof e.file, "%s", d.name);
		e.status = e.status == APC_EDATA ? APC_EDATA : APC_EIO;
		dump_problem(&d, &e);
		goto out;
	}
	if (o->summary && dump_file_size(&d, in) < 0) {
		dump_oom(&d);
		goto out;
	}
	if (apc_input_is_tree(in)) {
		/* a trace folder or archive (LTT) rather than a capture */
		if (!apc_input_has(in, "0000000000") && !apc_input_damage(in) &&
		    apc_format_foreign(in, &e)) {
			dump_problem(&d, &e);
			goto out;
		}
		/* some other folder: the wrong argument (exit 2), told
		 * alone, as apcverify tells it */
		if (apc_capture_tree_check(in, d.name, &e) == APC_EIO) {
			dump_problem(&d, &e);
			goto out;
		}
		if (dump_load_xml(&d, in) == APC_ENOMEM) {
			dump_oom(&d);
			goto out;
		}
		if (o->xml) {
			if (d.doc) {
				dump_print_xml(&d);
				if (apc_input_damage(in))
					dump_damage(&d, in);
			} else if (apc_input_damage(in)) {
				dump_damage(&d, in); /* it went with the damage */
			} else if (d.status == APC_OK) {
				/* (one that is there but malformed is said already) */
				apc_err_set(&e, APC_EIO, d.name, APC_NO_OFFSET, "no captured.xml in the capture");
				dump_problem(&d, &e);
			}
			goto out;
		}
		if (!apc_input_has(in, "0000000000")) {
			if (apc_input_damage(in)) {
				dump_damage(&d, in);
				goto out;
			}
			/* a capture that lost its data file: damage, as
			 * apcverify's data-file check says it */
			apc_capture_tree_check(in, d.name, &e);
			dump_problem(&d, &e);
			goto out;
		}
		if (apc_input_open_member(in, "0000000000", &s, &e) < 0) {
			dump_problem(&d, &e);
			goto out;
		}
		own = 1;
	} else {
		/* Only peeks: the frames are read from the start all the same. */
		d.foreign = apc_format_foreign(in, &d.foreign_err);
		if (dump_load_xml(&d, in) == APC_ENOMEM) {
			dump_oom(&d);
			goto out;
		}
		if (o->xml) {
			if (d.doc) {
				dump_print_xml(&d);
			} else if (d.status == APC_OK && d.foreign) {
				dump_problem(&d, &d.foreign_err);
			} else if (d.status == APC_OK) {
				apc_err_set(&e, APC_EIO, d.name, APC_NO_OFFSET,
					    "no captured.xml beside the bare data file");
				dump_problem(&d, &e);
			}
			goto out;
		}
		s = apc_input_stream(in);
	}
	d.dname = apc_stream_name(s);
	if (!o->summary && apc_wbuf_init(&d.w, o->out, DUMP_WBUF) < 0) {
		dump_oom(&d);
		goto out;
	}
	/* Protocol 910 added a fourth clock to the Summary; without
	 * captured.xml the frame decoder guesses from the bytes. */
	d.clocks = d.protocol ? (d.protocol >= 910 ? 4 : 3) : 0;
	dump_frames(&d, s);
	/* after the listing, whose end the damage may be */
	if (apc_input_damage(in))
		dump_damage(&d, in);
	/* No frame and nothing else to blame: an empty data file is no
	 * capture, and an empty listing (or a summary of zeros) that exits 0
	 * would pass it off as one. */
	if (d.nframes == 0 && d.status == APC_OK) {
		apc_err_set(&e, APC_EDATA, NULL, APC_NO_OFFSET,
			    "empty capture: the data file has no frames");
		dump_problem(&d, &e);
	}
out:
	/* A summary of what was read, the frames read whatever else failed
	 * (captured.xml too large to read, a read error part way); for a
	 * capture whose data could not be opened or read, JSON still gives its
	 * object (with io_error), so a script gets one per input, while
	 * text leaves it to the message. */
	if (o->summary && (d.status != APC_EIO || o->json || d.nframes > 0))
		summary_print(&d);
	if (own)
		apc_stream_close(s);
	apc_input_close(in);
	dump_free(&d);
	apc_wbuf_free(&d.w);
	fflush(o->out);
	return d.status;
}
