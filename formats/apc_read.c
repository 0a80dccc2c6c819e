/*
 * apc_read.c - the APC reader: a Streamline capture back into the event
 * model, so `apcconv X.apc -o Y.apc` re-writes a capture (and the other
 * tools share one way of reading captures).
 *
 * Input: an .apc folder or an archive of one (tree with 0000000000 and
 * captured.xml, events.xml optional), or a bare 0000000000 stream (read
 * with the XML beside it, if any; without captured.xml its counters are
 * named after their keys).  Frames are decoded by
 * lib/frame.c; External frames are reassembled per fd and decoded by
 * lib/annotate.c.  Frame types we cannot model (gatord 9.x perf frames)
 * are carried through opaque.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/SAX2.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include "annotate.h"
#include "format.h"
#include "frame.h"
#include "map64.h"
#include "packed.h"
#include "util.h"
#include "verify.h" /* apc_capture_tree_check() */
#include "xml.h"

#define APCR_XML_SLICE (1u << 20)  /* XML fed to libxml2's push parser at a time */
#define APCR_PRE_SUMMARY_MAX 4096  /* frames allowed before the Summary */
#define APCR_PRE_SUMMARY_BYTES (64u << 20) /* and what they may hold together */
#define APCR_MAX_FD 65536          /* External ids we track */
#define APCR_KEEP_MAX 256          /* XML attributes kept verbatim per element */

struct apcr_raw {
	int32_t type, core;
	uint32_t len;
	uint8_t *bytes;
};

struct apcr_key {
	int32_t key;
	uint32_t id1; /* counter id + 1; 0 = empty slot */
};

struct apcr_fd {
	struct apc_ann_decoder *dec;
	int32_t tid, pid;
	uint64_t last_ts;
	int broken; /* decoding failed: the rest of this fd is counted, not decoded */
	int setup;  /* its setup message was read */
	int msgs;   /* messages after it were */
};

struct apcr {
	struct apc_stream *data;   /* 0000000000 */
	int own_data;              /* opened as a member: close it */
	struct apc_frame_reader *fr;
	int summary_clocks;
	/* key -> counter id: an open-addressing hash (keys go up to 2^24,
	 * and an array indexed by key let one big key cost 64 MiB) */
	struct apcr_key *keys;
	size_t keycap, nkeys;
	/* frames read before the Summary, emitted first as raw frames */
	struct apcr_raw *pre;
	size_t npre, pre_next;
	size_t pre_bytes;   /* what pre[] holds */
	/* the frame being decoded (when a batch filled up mid-frame) */
	struct apc_frame frame;
	struct apc_msg_iter it;
	int in_frame;
	struct apcr_fd *fds;
	size_t nfds;
	struct apc_ann_budget ann_budget; /* what their decoders hold together */
	uint64_t delta;
	const char *name;
	/* A bare data file 0000000000: its path, beside which its XML is
	 * (apcr_open_xml); NULL for a folder or archive, and stdin. */
	const char *bare;
	/* XML files read only as far as their damage (apcr_parse_xml): an
	 * error to report once the data is read, when status < 0. */
	struct apc_err xml_damage;
};

static int apcr_bid(struct apc_input *in)
{
	const uint8_t *p;
	ssize_t n;
	struct apc_err err;
	static const uint8_t canary[] = "\x0b" APC_NEWLINE_CANARY;

	if (apc_input_is_tree(in))
		return apc_input_has(in, "0000000000") ? (apc_input_has(in, "captured.xml") ? 100 : 80) : 0;
	n = apc_stream_peek(apc_input_stream(in), &p, APC_PEEK_MAX, &err);
	if (n < 16)
		return 0;
	/* The canary follows the Summary codes in the first frames (after
	 * any gatord 9.x perf-attr frames). */
	if (memmem(p, (size_t)n, canary, sizeof canary - 1))
		return 95;
	return 0;
}

/* ---- XML: captured.xml and events.xml --------------------------------- */

static char *apcr_attr(xmlNode *n, const char *name)
{
	xmlChar *v = xmlGetProp(n, (const xmlChar *)name);
	char *c;

	if (!v)
		return NULL;
	c = strdup((const char *)v);
	xmlFree(v);
	return c;
}

/*
 * v as a whole integer (C syntax: 0x.. hex); 0 if it is not one, and
 * if it does not fit 64 bits (strtoll would clamp it to the nearest
 * end: two different huge events would then match each other).
 */
static int apcr_parse_int(const xmlChar *v, int64_t *out)
{
	char *end;
	long long r;

	if (!v)
		return 0;
	errno = 0;
	r = strtoll((const char *)v, &end, 0);
	if (end == (const char *)v || *end || errno == ERANGE)
		return 0;
	*out = r;
	return 1;
}

/* An integer attribute; dflt when absent or not (all of it) a number. */
static int64_t apcr_attr_int(xmlNode *n, const char *name, int64_t dflt)
{
	xmlChar *v = xmlGetProp(n, (const xmlChar *)name);
	int64_t r;

	if (!apcr_parse_int(v, &r))
		r = dflt;
	xmlFree(v);
	return r;
}

/* Is name one of the NULL-ended list? */
static int apcr_in(const xmlChar *name, const char *const *list)
{
	for (; *list; list++)
		if (!xmlStrcmp(name, (const xmlChar *)*list))
			return 1;
	return 0;
}

/*
 * Count an element or attribute of an XML file that nothing in the model
 * holds, named by its path: "captured.xml /captured/@product",
 * "session.xml /session/image".  Names are XML names (no control
 * characters); a long one is cut.
 */
static void apcr_not_carried(struct apc_model *m, const char *file, const char *path,
			     const xmlChar *name, int attr, const char *why)
{
	char what[256];

	snprintf(what, sizeof what, "%s %.96s/%s%.64s%s", file, path, attr ? "@" : "",
		 (const char *)name, why ? why : "");
	apc_model_unmapped(m, what, 1);
}

/*
 * An integer attribute, dflt when absent; one present but not a number
 * (or not all of one, or past 64 bits) is dflt too, and counted.
 */
static int64_t apcr_num(struct apc_model *m, xmlNode *n, const char *name, int64_t dflt,
			const char *file, const char *path)
{
	xmlChar *v = xmlGetProp(n, (const xmlChar *)name);
	int64_t r;

	if (!v)
		return dflt;
	if (!apcr_parse_int(v, &r)) {
		apcr_not_carried(m, file, path, (const xmlChar *)name, 1, " (not a number)");
		r = dflt;
	}
	xmlFree(v);
	return r;
}

/* The same for a count or size that must fit a uint32 (else 0, counted). */
static uint32_t apcr_u32(struct apc_model *m, xmlNode *n, const char *name, const char *file,
			 const char *path)
{
	int64_t v = apcr_num(m, n, name, 0, file, path);

	if (v < 0 || v > UINT32_MAX) {
		apcr_not_carried(m, file, path, (const xmlChar *)name, 1, " (out of range)");
		return 0;
	}
	return (uint32_t)v;
}

/*
 * Append attribute at of its element (at path in file) to the list,
 * value verbatim.  Past APCR_KEEP_MAX on one element they are counted
 * instead: the writer looks each one up in the element it builds.
 */
static int apcr_keep_attr(struct apc_model *m, struct apc_attr **list, size_t *n, xmlAttr *at,
			  const char *file, const char *path)
{
	xmlChar *v;
	int rc;

	if (*n >= APCR_KEEP_MAX) {
		apcr_not_carried(m, file, path, (const xmlChar *)"*", 1, " (too many to keep)");
		return APC_OK;
	}
	v = xmlNodeListGetString(at->doc, at->children, 1);
	rc = apc_attrs_add(list, n, (const char *)at->name, v ? (const char *)v : "");
	xmlFree(v);
	return rc;
}

/*
 * Open the capture's XML file `name`: the tree's member, or for a bare
 * data file 0000000000 the file beside it (apc_data_sibling, as
 * apcverify and apcdump find it; one that cannot be opened is not
 * there, as for them).  1 with *s, 0 when there is none, or an error
 * (r->err set).
 */
static int apcr_open_xml(struct apc_reader *r, const struct apcr *a, const char *name,
			 struct apc_stream **s)
{
	struct apc_input *in = r->inputs[0];
	struct apc_err e;
	char *path;
	int rc;

	*s = NULL;
	if (apc_input_is_tree(in)) {
		if (!apc_input_has(in, name))
			return 0;
		rc = apc_input_open_member(in, name, s, &r->err);
		return rc < 0 ? rc : 1;
	}
	if (!a->bare || !(path = apc_data_sibling(a->bare, name)))
		return 0;
	rc = apc_stream_open_path(path, s, &e);
	free(path);
	return rc < 0 ? 0 : 1;
}

/* The element the parser made last, and where it was in the input
 * then (its start tag read up to the '>' that should close it); and the
 * first error (of level error or fatal) the parser raised. */
struct apcr_xml_last {
	xmlNode *node;
	long at;
	int err_code, err_line, err_fatal;
	long err_at;            /* -1: no error */
	char err_msg[200];
	int well_formed;        /* no fatal error: then the one libxml2 stopped at is */
	int end_code, end_line;
	long end_at;
	char end_msg[200];
};

static void apcr_xml_start(void *ctx, const xmlChar *localname, const xmlChar *prefix,
			   const xmlChar *uri, int nb_namespaces, const xmlChar **namespaces,
			   int nb_attributes, int nb_defaulted, const xmlChar **attributes)
{
	xmlParserCtxt *c = ctx;
	struct apcr_xml_last *last = c->_private;

	xmlSAX2StartElementNs(ctx, localname, prefix, uri, nb_namespaces, namespaces, nb_attributes,
			      nb_defaulted, attributes);
	last->node = c->node && xmlStrEqual(c->node->name, localname) ? c->node : NULL;
	last->at = xmlByteConsumed(c);
}

#if LIBXML_VERSION >= 21200
typedef const xmlError *apcr_xml_error_t;
#else
typedef xmlError *apcr_xml_error_t;
#endif

static void apcr_xml_error(void *ctx, apcr_xml_error_t e)
{
	xmlParserCtxt *c = ctx;
	struct apcr_xml_last *last = c->_private;

	if (!e || e->level < XML_ERR_ERROR || apc_xml_warning(e->code) || last->err_at >= 0)
		return;
	last->err_code = e->code;
	last->err_line = e->line;
	last->err_fatal = e->level == XML_ERR_FATAL;
	last->err_at = xmlByteConsumed(c);
	apc_err_lower(e->message ? e->message : "parse error", last->err_msg, sizeof last->err_msg);
}

/* One parse of len bytes: the document built (NULL if none), *last
 * what went wrong first. */
static xmlDoc *apcr_xml_pass(const uint8_t *buf, size_t len, const char *name,
			     struct apcr_xml_last *last, struct apc_err *why)
{
	xmlSAXHandler sax;
	xmlParserCtxt *ctx;
	xmlDoc *doc;

	memset(last, 0, sizeof *last);
	last->at = last->err_at = -1;
	memset(&sax, 0, sizeof sax);
	xmlSAXVersion(&sax, 2);
	sax.startElementNs = apcr_xml_start;
	sax.serror = apcr_xml_error;
	if (!(ctx = xmlCreatePushParserCtxt(&sax, NULL, NULL, 0, name))) {
		apc_err_set(why, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
		return NULL;
	}
	ctx->_private = last;
	/* No XML_PARSE_HUGE: libxml2's default limits are what stop entity
	 * expansion attacks while parsing (captures' XML is small). */
	xmlCtxtUseOptions(ctx, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	/* In slices: one chunk over 10 MB is libxml2's "Huge input lookup"
	 * without XML_PARSE_HUGE, though apcdump and apcverify read it. */
	for (size_t off = 0;;) {
		size_t n = len - off < APCR_XML_SLICE ? len - off : APCR_XML_SLICE;
		int end = off + n == len;
		/* what it returns is the last error, a recoverable one too:
		 * after a fatal one libxml2 takes no more */
		xmlParseChunk(ctx, (const char *)buf + off, (int)n, end);
		if (end)
			break;
		off += n;
	}
	doc = ctx->myDoc;
	ctx->myDoc = NULL;
	last->well_formed = ctx->wellFormed;
	if (!ctx->wellFormed) {
		const xmlError *e = xmlCtxtGetLastError(ctx);

		last->end_code = e ? e->code : 0;
		last->end_line = e ? e->line : 0;
		last->end_at = xmlByteConsumed(ctx);
		apc_err_lower(e && e->message ? e->message : "parse error", last->end_msg,
			      sizeof last->end_msg);
		/* A start tag that ends where the input does (or breaks off
		 * between attributes) has its element made all the same,
		 * with the attributes read so far: not kept. */
		if (last->end_code == XML_ERR_GT_REQUIRED && last->node && last->at == last->end_at) {
			xmlUnlinkNode(last->node);
			xmlFreeNode(last->node);
		}
	}
	xmlFreeParserCtxt(ctx);
	return doc;
}

/*
 * Parse len bytes of XML file `name` (stream `file`), keeping what came
 * before the first error: the document holds each element whose start
 * tag was read whole, with what it held up to there, and *why says where
 * the error is, unless it already holds a cause (the file cut short).
 * A fatal error stops libxml2 there; after one it recovers from (a
 * namespace error: an attribute ":name"), the bytes before it are
 * parsed again on their own, so that nothing after it is kept either.
 * Documents that declare entities are refused: gatord never declares
 * any, and each attribute read would expand them again.
 */
static xmlDoc *apcr_xml_doc(const uint8_t *buf, size_t len, const char *name, const char *file,
			    struct apc_err *why)
{
	struct apcr_xml_last last, again;
	xmlDoc *doc = apcr_xml_pass(buf, len, name, &last, why);

	if (last.err_at >= 0 && !last.err_fatal && why->status != APC_ENOMEM) {
		/* recovered from: what came after it is not kept either */
		xmlFreeDoc(doc);
		doc = apcr_xml_pass(buf, (size_t)last.err_at <= len ? (size_t)last.err_at : len, name,
				    &again, why);
		if (why->status == APC_OK)
			apc_err_set(why, APC_EDATA, file,
				    (size_t)last.err_at <= len ? last.err_at : APC_NO_OFFSET,
				    "line %d: not well-formed XML: %s", last.err_line, last.err_msg);
	} else if (!last.well_formed && why->status == APC_OK) {
		apc_err_set(why, APC_EDATA, file,
			    last.end_at >= 0 && (size_t)last.end_at <= len ? last.end_at : APC_NO_OFFSET,
			    "line %d: not well-formed XML: %s", last.end_line, last.end_msg);
	}
	if (doc && doc->intSubset && (doc->intSubset->entities || doc->intSubset->pentities)) {
		if (why->status == APC_OK)
			apc_err_set(why, APC_EDATA, file, APC_NO_OFFSET, "%s declares XML entities (refused)",
				    name);
		xmlFreeDoc(doc);
		doc = NULL;
	}
	return doc;
}

/* Append "; " and more (its file and offset too) to e's message, as
 * much as fits. */
static void apcr_err_join(struct apc_err *e, const struct apc_err *more)
{
	char buf[APC_ERR_MSG];
	size_t k = strlen(e->msg);

	apc_err_format(more, buf, sizeof buf);
	snprintf(e->msg + k, sizeof e->msg - k, "; %s", buf);
}

/* Note the damage of an XML file read as far as it goes, for the end
 * of the run: the first one's file and offset lead, the others are
 * joined to it. */
static void apcr_xml_damaged(struct apcr *a, const struct apc_err *e)
{
	if (a->xml_damage.status < 0)
		apcr_err_join(&a->xml_damage, e);
	else
		a->xml_damage = *e;
}

/*
 * XML file `name` of the capture, parsed; NULL when there is none (an
 * error when required) or on an error (r->err set).  A damaged one (not
 * well-formed, cut short by the archive's damage, declaring entities)
 * is an error when strict (a folder's captured.xml, which declares the
 * keys); else it is read as far as it goes, as if what came after the
 * damage were not there, and the damage is noted in a->xml_damage and
 * reported at the end (apcr_next): a damaged file costs no more than a
 * missing one.
 */
static xmlDoc *apcr_parse_xml(struct apc_reader *r, struct apcr *a, const char *name, int required,
			      int strict)
{
	struct apc_stream *s;
	struct apc_err why;
	uint8_t *buf;
	size_t len;
	xmlDoc *doc;
	int rc = apcr_open_xml(r, a, name, &s);

	if (rc <= 0) {
		if (rc == 0 && required)
			apc_err_set(&r->err, APC_EDATA, apc_input_path(r->inputs[0]), APC_NO_OFFSET,
				    "capture has no %s", name);
		return NULL;
	}
	apc_err_clear(&why);
	rc = apc_stream_slurp_upto(s, APC_XML_FILE_MAX, &buf, &len, &why);
	if (rc < 0 && (rc != APC_EDATA || strict)) {
		r->err = why;
		free(buf); /* damage keeps the bytes before it */
		apc_stream_close(s);
		return NULL;
	}
	doc = apcr_xml_doc(buf, len, name, apc_stream_name(s), &why);
	free(buf);
	apc_stream_close(s);
	if (why.status == APC_ENOMEM || (why.status < 0 && strict)) {
		r->err = why;
		xmlFreeDoc(doc);
		return NULL;
	}
	if (why.status < 0) {
		size_t k = strlen(why.msg);
		int kept = doc && xmlDocGetRootElement(doc);
		snprintf(why.msg + k, sizeof why.msg - k, "; %s",
			 kept ? "kept everything before it" : "nothing before it to keep: read as if absent");
		apcr_xml_damaged(a, &why);
		if (!kept) {
			xmlFreeDoc(doc);
			doc = NULL;
		}
	}
	return doc;
}

/* The slot of key in a table of cap (a power of two) slots: its own or
 * the empty one where it would go. */
static struct apcr_key *apcr_key_slot(struct apcr_key *t, size_t cap, int32_t key)
{
	uint32_t h = (uint32_t)key * 2654435761u;
	size_t i = (h ^ (h >> 16)) & (cap - 1);

	while (t[i].id1 && t[i].key != key)
		i = (i + 1) & (cap - 1);
	return &t[i];
}

/* Counter id + 1 of key, 0 if unknown. */
static uint32_t apcr_key_find(const struct apcr *a, int64_t key)
{
	if (!a->keycap || key < 0 || key >= 1 << 24)
		return 0;
	return apcr_key_slot(a->keys, a->keycap, (int32_t)key)->id1;
}

static int apcr_map_key(struct apcr *a, int32_t key, uint32_t id)
{
	struct apcr_key *k;

	if (key < 0 || key >= 1 << 24)
		return APC_EDATA;
	if ((a->nkeys + 1) * 2 > a->keycap) {
		/* grow at half full, so probes stay short */
		size_t cap = a->keycap ? a->keycap * 2 : 64;
		struct apcr_key *t = calloc(cap, sizeof *t);
		if (!t)
			return APC_ENOMEM;
		for (size_t i = 0; i < a->keycap; i++)
			if (a->keys[i].id1)
				*apcr_key_slot(t, cap, a->keys[i].key) = a->keys[i];
		free(a->keys);
		a->keys = t;
		a->keycap = cap;
	}
	k = apcr_key_slot(a->keys, a->keycap, key);
	if (!k->id1)
		a->nkeys++;
	k->key = key;
	k->id1 = id + 1;
	return APC_OK;
}

/*
 * gatord 9.x describes some counters (its constants) in captured.xml
 * itself, with no event in events.xml: take title, name, description,
 * units and class from there.  Protocol 680 has no constant class: an
 * absolute counter is the nearest, and the change is counted.
 */
static int apcr_captured_decl(struct apc_model *m, struct apc_counter_decl *d, xmlNode *c)
{
	static const char *const classes[] = {"delta", "incident", "absolute", "activity"};
	static const char *const fields[] = {"title", "name", "description", "units"};
	char **dst[] = {&d->title, &d->name, &d->description, &d->units};
	xmlChar *cls;

	for (int i = 0; i < 4; i++) {
		char *v = apcr_attr(c, fields[i]);
		if (!v)
			continue;
		free(*dst[i]);
		*dst[i] = v;
	}
	if (!(cls = xmlGetProp(c, (const xmlChar *)"class")))
		return APC_OK;
	if (!xmlStrcmp(cls, (const xmlChar *)"constant")) {
		d->cls = APC_CLASS_ABSOLUTE;
		apc_model_unmapped(m, "gatord 9.x constant counters (written as absolute)", 1);
	} else {
		int i = 0;
		while (i < 4 && xmlStrcmp(cls, (const xmlChar *)classes[i]))
			i++;
		if (i < 4)
			d->cls = (enum apc_class)i;
		else
			apcr_not_carried(m, "captured.xml", "/captured/counters/counter",
					 (const xmlChar *)"class", 1, " (value not understood)");
	}
	xmlFree(cls);
	return APC_OK;
}

/*
 * The declarations by type and key, hashed: a captured.xml may declare
 * hundreds of thousands, and each is looked up as it is declared (a
 * scan each time took minutes).  A clash of two hashes makes finds scan.
 */
struct apcr_decls {
	struct apc_map64 index; /* hash(type, key) -> counter id + 1 */
	int clash;
};

static uint64_t apcr_decl_hash(const char *type, int64_t key)
{
	return apc_hash_u64(apc_hash_str(APC_HASH_SEED, type), (uint64_t)key);
}

/* The declaration of type with key, NULL if none. */
static struct apc_counter_decl *apcr_find_decl(struct apc_model *m, const struct apcr_decls *x,
					       const char *type, int64_t key)
{
	uint64_t id;

	if (apc_map64_find(&x->index, apcr_decl_hash(type, key), &id) && id - 1 < m->ncounters &&
	    m->counters[id - 1].key == key && !strcmp(m->counters[id - 1].type, type))
		return &m->counters[id - 1];
	if (!x->clash)
		return NULL;
	for (size_t i = 0; i < m->ncounters; i++)
		if (m->counters[i].key == key && !strcmp(m->counters[i].type, type))
			return &m->counters[i];
	return NULL;
}

/* d is declared: index it (no room to index makes finds scan). */
static void apcr_index_decl(struct apcr_decls *x, const struct apc_counter_decl *d)
{
	uint64_t h = apcr_decl_hash(d->type, d->key);

	if (apc_map64_find(&x->index, h, NULL) || apc_map64_put(&x->index, h, (uint64_t)d->id + 1) < 0)
		x->clash = 1;
}

/*
 * captured.xml: the target and the counters with their keys.  What the
 * model holds is taken (type and backtrace_processing, the target's
 * attributes verbatim, each counter's key, type, event, cores and count);
 * anything else is counted by its path: gatord 9.x's product version
 * (our output is protocol 680, written by us), its <process>, <gpus> and
 * SPE entries, a constant's mode.
 */
static int apcr_captured_with(struct apc_reader *r, struct apcr *a, xmlDoc *doc,
			      struct apcr_decls *decls)
{
	static const char *const root_attrs[] = {"version", "created", "protocol", "type",
						  "backtrace_processing", NULL};
	static const char *const target_typed[] = {"name", "sample_rate", "cores", "cpuid", NULL};
	static const char *const counter_attrs[] = {"key", "type", "counter", "event", "cores",
						    "count", "title", "name", "description",
						    "units", "class", NULL};
	static const char *const F = "captured.xml";
	struct apc_model *m = r->model;
	xmlNode *root = xmlDocGetRootElement(doc);
	int seen_target = 0; /* a second <target> is counted, not merged */
	xmlChar *v;

	if (!root || xmlStrcmp(root->name, (const xmlChar *)"captured") != 0) {
		struct apc_err e;
		char *path;

		if (!a->bare)
			return apc_err_set(&r->err, APC_EDATA, apc_input_path(r->inputs[0]), APC_NO_OFFSET,
					   "captured.xml has no <captured> root");
		/* beside a bare data file, which reads without one */
		path = apc_data_sibling(a->bare, "captured.xml");
		apc_err_set(&e, APC_EDATA, path, APC_NO_OFFSET,
			    "captured.xml has no <captured> root: read as if absent");
		free(path);
		apcr_xml_damaged(a, &e);
		return APC_END;
	}
	m->meta.protocol = apcr_u32(m, root, "protocol", F, "/captured");
	/* INT64_MIN: absent, or not a number (counted) */
	m->meta.created = apcr_num(m, root, "created", INT64_MIN, F, "/captured");
	if (m->meta.created < 0 && m->meta.created != INT64_MIN)
		apcr_not_carried(m, F, "/captured", (const xmlChar *)"created", 1, " (out of range)");
	if (m->meta.created < 0)
		m->meta.created = -1; /* the writer's own */
	/* gatord from protocol 910 on writes four clocks in the Summary. */
	a->summary_clocks = m->meta.protocol >= 910 ? 4 : 3;
	free(m->meta.capture_type);
	m->meta.capture_type = apcr_attr(root, "type");
	free(m->meta.backtrace_processing);
	m->meta.backtrace_processing = apcr_attr(root, "backtrace_processing");
	if ((v = xmlGetProp(root, (const xmlChar *)"version"))) {
		if (xmlStrcmp(v, (const xmlChar *)"1")) /* we write version 1 */
			apcr_not_carried(m, F, "/captured", (const xmlChar *)"version", 1, NULL);
		xmlFree(v);
	}
	for (xmlAttr *at = root->properties; at; at = at->next)
		if (!apcr_in(at->name, root_attrs))
			apcr_not_carried(m, F, "/captured", at->name, 1, NULL);
	for (xmlNode *n = root->children; n; n = n->next) {
		if (n->type != XML_ELEMENT_NODE)
			continue;
		if (!xmlStrcmp(n->name, (const xmlChar *)"target") && !seen_target++) {
			char *name = apcr_attr(n, "name");
			/* INT64_MIN: absent, or not a number (counted) */
			int64_t cores = apcr_num(m, n, "cores", INT64_MIN, F, "/captured/target");
			int64_t cpuid = apcr_num(m, n, "cpuid", INT64_MIN, F, "/captured/target");
			free(m->meta.target_name);
			m->meta.target_name = name;
			m->meta.sample_rate = apcr_u32(m, n, "sample_rate", F, "/captured/target");
			/* gatord's cpuid is its highest core's, not every
			 * core's: the Summary's core names give those. */
			if (cpuid >= 0 && cpuid <= UINT32_MAX) {
				m->meta.target_cpuid = (uint32_t)cpuid;
				m->meta.has_target_cpuid = 1;
			} else if (cpuid != INT64_MIN) {
				apcr_not_carried(m, F, "/captured/target", (const xmlChar *)"cpuid", 1,
						 " (out of range)");
			}
			if (cores > 0 && cores <= APC_MAX_CORES) {
				if (apc_model_set_cores(m, (uint32_t)cores) < 0)
					return APC_ENOMEM;
			} else if (cores != INT64_MIN) {
				apcr_not_carried(m, F, "/captured/target", (const xmlChar *)"cores", 1,
						 " (out of range)");
			}
			/* The rest describe the target and the agent that
			 * recorded it (local_capture, supports_live, gatord
			 * 9.x's os, gpu_cores, gatord_build_id ...): kept. */
			for (xmlAttr *at = n->properties; at; at = at->next)
				if (!apcr_in(at->name, target_typed) &&
				    apcr_keep_attr(m, &m->meta.target_attrs, &m->meta.ntarget_attrs, at, F,
						   "/captured/target") < 0)
					return APC_ENOMEM;
			for (xmlNode *c = n->children; c; c = c->next)
				if (c->type == XML_ELEMENT_NODE)
					apcr_not_carried(m, F, "/captured/target", c->name, 0, NULL);
		} else if (!xmlStrcmp(n->name, (const xmlChar *)"counters")) {
			for (xmlAttr *at = n->properties; at; at = at->next)
				apcr_not_carried(m, F, "/captured/counters", at->name, 1, NULL);
			for (xmlNode *c = n->children; c; c = c->next) {
				char *type;
				struct apc_counter_decl *d;
				int64_t key;

				if (c->type != XML_ELEMENT_NODE)
					continue;
				if (xmlStrcmp(c->name, (const xmlChar *)"counter")) {
					/* gatord 9.x's <spe key= id=>: SPE data
					 * lives in perf frames we cannot write */
					apcr_not_carried(m, F, "/captured/counters", c->name, 0, NULL);
					continue;
				}
				type = apcr_attr(c, "type");
				if (!type) /* gatord 9.x constants: counter= instead of type= */
					type = apcr_attr(c, "counter");
				else if (xmlHasProp(c, (const xmlChar *)"counter"))
					apcr_not_carried(m, F, "/captured/counters/counter", (const xmlChar *)"counter",
							 1, " (beside type=)");
				/* INT64_MIN: absent, or not a number (counted) */
				key = apcr_num(m, c, "key", INT64_MIN, F, "/captured/counters/counter");
				if (!type || key < 0 || key > INT32_MAX) {
					if (!type || !xmlHasProp(c, (const xmlChar *)"key"))
						apc_model_unmapped(m, "captured.xml counters without type or key", 1);
					else if (key != INT64_MIN)
						apc_model_unmapped(m, "captured.xml counters with keys out of range", 1);
					free(type);
					continue;
				}
				/* A type given twice is two counters when its keys
				 * differ (each key's values stay its own); with
				 * the same key it is one, said twice. */
				if (apcr_find_decl(m, decls, type, key)) {
					free(type);
					apc_model_unmapped(m, "captured.xml counters declared twice with the same type and key (the second ignored)", 1);
					continue;
				}
				d = apc_model_add_counter_new(m, type);
				free(type);
				if (!d)
					return APC_ENOMEM;
				d->key = (int32_t)key;
				apcr_index_decl(decls, d);
				d->event = apcr_num(m, c, "event", INT64_MIN, F, "/captured/counters/counter");
				if (d->event < 0 && d->event != INT64_MIN)
					apcr_not_carried(m, F, "/captured/counters/counter", (const xmlChar *)"event",
							 1, " (out of range)");
				if (d->event < 0)
					d->event = -1; /* none */
				d->cores = apcr_u32(m, c, "cores", F, "/captured/counters/counter");
				d->count = apcr_u32(m, c, "count", F, "/captured/counters/counter");
				if (apcr_captured_decl(m, d, c) < 0)
					return APC_ENOMEM;
				/* One key, two types: which one its values are
				 * is anyone's guess; the first keeps them. */
				if (apcr_key_find(a, key))
					apc_model_unmapped(m, "captured.xml counters with a key an earlier counter has (its values kept with the first)", 1);
				else if (apcr_map_key(a, (int32_t)key, d->id) < 0)
					apc_model_unmapped(m, "captured.xml counters with keys out of range", 1);
				for (xmlAttr *at = c->properties; at; at = at->next)
					if (!apcr_in(at->name, counter_attrs))
						apcr_not_carried(m, F, "/captured/counters/counter", at->name, 1, NULL);
			}
		} else {
			apcr_not_carried(m, F, "/captured", n->name, 0, NULL);
		}
	}
	return APC_OK;
}

static int apcr_captured(struct apc_reader *r, struct apcr *a, xmlDoc *doc)
{
	struct apcr_decls decls = {0};
	int rc = apcr_captured_with(r, a, doc, &decls);

	apc_map64_free(&decls.index);
	return rc;
}

static const char *const EV_F = "events.xml";
static const char *const EV_PATH = "/events/category/event";

/* A yes/no attribute; a value that is neither is dflt, and counted. */
static enum apc_tri apcr_tri(struct apc_model *m, xmlNode *n, const char *name, enum apc_tri dflt,
			     const char *path)
{
	xmlChar *v = xmlGetProp(n, (const xmlChar *)name);
	enum apc_tri t = dflt;

	if (v) {
		if (!xmlStrcmp(v, (const xmlChar *)"yes") || !xmlStrcmp(v, (const xmlChar *)"true"))
			t = APC_YES;
		else if (!xmlStrcmp(v, (const xmlChar *)"no") || !xmlStrcmp(v, (const xmlChar *)"false"))
			t = APC_NO;
		else
			apcr_not_carried(m, EV_F, path, (const xmlChar *)name, 1, " (value not understood)");
		xmlFree(v);
	}
	return t;
}

/* One of names[1..count-1] (0 when absent); a value not among them is 0,
 * and counted. */
static int apcr_enum(struct apc_model *m, xmlNode *n, const char *name, const char *const *names,
		     int count)
{
	xmlChar *v = xmlGetProp(n, (const xmlChar *)name);
	int r = 0;

	if (!v)
		return 0;
	for (int i = 1; i < count; i++)
		if (names[i] && !xmlStrcmp(v, (const xmlChar *)names[i]))
			r = i;
	if (!r)
		apcr_not_carried(m, EV_F, EV_PATH, (const xmlChar *)name, 1, " (value not understood)");
	xmlFree(v);
	return r;
}

/*
 * A colour attribute of an event (0xZZRRGGBB): 1 and *out when present
 * and a uint32; else 0, and one present but not that is counted under
 * label (activity_colorN for all the numbered ones), not made a colour.
 */
static int apcr_color(struct apc_model *m, xmlNode *ev, const char *name, const char *label,
		      uint32_t *out)
{
	xmlChar *s = xmlGetProp(ev, (const xmlChar *)name);
	int64_t v = 0;
	int ok = apcr_parse_int(s, &v);

	*out = 0;
	if (!s)
		return 0;
	xmlFree(s);
	if (!ok) {
		apcr_not_carried(m, EV_F, EV_PATH, (const xmlChar *)label, 1, " (not a number)");
		return 0;
	}
	if (v < 0 || v > UINT32_MAX) {
		apcr_not_carried(m, EV_F, EV_PATH, (const xmlChar *)label, 1, " (out of range)");
		return 0;
	}
	*out = (uint32_t)v;
	return 1;
}

/* Is name "<prefix>N" with 1 <= N <= max? */
static int apcr_numbered(const xmlChar *name, const char *prefix, size_t max)
{
	size_t n = strlen(prefix), k = 0;
	const char *p = (const char *)name + n;

	if (strncmp((const char *)name, prefix, n) || *p < '1' || *p > '9')
		return 0;
	for (; *p >= '0' && *p <= '9' && k <= max; p++)
		k = k * 10 + (size_t)(*p - '0');
	return !*p && k <= max;
}

/* The event_delta of option_set option opt; 0 if it has none that
 * parses (apcr_check_options counts those). */
static int apcr_option_delta(xmlNode *opt, int64_t *delta)
{
	xmlChar *v = xmlGetProp(opt, (const xmlChar *)"event_delta");
	int ok = apcr_parse_int(v, delta);

	xmlFree(v);
	return ok;
}

/*
 * Fill one declaration from an <event> of events.xml, in category cat
 * (matched through counter set `set` when not by name, perhaps through
 * an option of the event's option_set: see apcr_events).
 * Attributes no field holds (gatord's derived, proc, advanced ...) are
 * kept verbatim in d->xattrs.  What the declaration cannot hold is not
 * counted here: the event itself is kept in events.xml unless the
 * writer writes the declaration in its place (apcr_replaced counts what
 * that loses).
 */
static int apcr_fill_decl(struct apc_model *m, struct apc_counter_decl *d, xmlNode *cat,
			  xmlNode *ev, const char *set)
{
	static const char *const classes[] = {"delta", "incident", "absolute", "activity"};
	static const char *const displays[] = {NULL, "accumulate", "hertz", "maximum", "average", "minimum"};
	static const char *const series[] = {NULL, "stacked", "overlay", "log10"};
	static const char *const renders[] = {NULL, "filled", "line", "bar"};
	static const char *const typed[] = {"counter", "event", "title", "name", "description",
					    "units", "class", "display", "series_composition",
					    "rendering_type", "multiplier", "color", "per_cpu",
					    "average_selection", "average_cores", "percentage",
					    "cores", NULL};
	xmlChar *v;
	char key[32];

	free(d->category);
	d->category = apcr_attr(cat, "name");
	free(d->counter_set);
	d->counter_set = set ? strdup(set) : NULL;
	free(d->title);
	d->title = apcr_attr(ev, "title");
	free(d->name);
	d->name = apcr_attr(ev, "name");
	free(d->description);
	d->description = apcr_attr(ev, "description");
	free(d->units);
	d->units = apcr_attr(ev, "units");
	d->cls = APC_CLASS_DELTA; /* the default, and index 0: apcr_enum's "none" */
	if ((v = xmlGetProp(ev, (const xmlChar *)"class"))) {
		if (xmlStrcmp(v, (const xmlChar *)"delta"))
			d->cls = (enum apc_class)apcr_enum(m, ev, "class", classes, 4);
		xmlFree(v);
	}
	d->display = (enum apc_display)apcr_enum(m, ev, "display", displays, 6);
	d->series = (enum apc_series)apcr_enum(m, ev, "series_composition", series, 4);
	d->render = (enum apc_render)apcr_enum(m, ev, "rendering_type", renders, 4);
	d->multiplier = 0;
	if ((v = xmlGetProp(ev, (const xmlChar *)"multiplier"))) {
		char *end;
		errno = 0;
		d->multiplier = strtod((const char *)v, &end);
		/* strtod clamps what does not fit a double to inf or 0 (and
		 * reads "inf" and "nan"): no multiplier, counted */
		if (end == (char *)v || errno == ERANGE || !isfinite(d->multiplier)) {
			apcr_not_carried(m, EV_F, EV_PATH, (const xmlChar *)"multiplier", 1, " (not a number)");
			d->multiplier = 0;
		} else if (*end) {
			/* "0.001x": kept as read up to the x, as TPTP times
			 * are (a scale off by the default 1 is worse), and
			 * said so */
			apcr_not_carried(m, EV_F, EV_PATH, (const xmlChar *)"multiplier", 1,
					 " (characters after the number; read up to them)");
		}
		xmlFree(v);
	}
	d->has_color = apcr_color(m, ev, "color", "color", &d->color);
	d->per_cpu = apcr_tri(m, ev, "per_cpu", apcr_tri(m, cat, "per_cpu", APC_UNSET, "/events/category"),
			      EV_PATH);
	d->average_selection = apcr_tri(m, ev, "average_selection", APC_UNSET, EV_PATH);
	d->average_cores = apcr_tri(m, ev, "average_cores", APC_UNSET, EV_PATH);
	d->percentage = apcr_tri(m, ev, "percentage", APC_UNSET, EV_PATH);
	/* An activity's units (written to both files); captured.xml's count
	 * is the one configured, when it gives one. */
	if (!d->cores && d->cls == APC_CLASS_ACTIVITY)
		d->cores = apcr_u32(m, ev, "cores", EV_F, EV_PATH);
	for (size_t i = 0; i < d->nactivities; i++)
		free(d->activities[i].name);
	d->nactivities = 0;
	for (int i = 1;; i++) {
		struct apc_activity *na;
		char *name;

		snprintf(key, sizeof key, "activity%d", i);
		name = apcr_attr(ev, key);
		if (!name)
			break;
		na = realloc(d->activities, (d->nactivities + 1) * sizeof *na);
		if (!na) {
			free(name);
			return APC_ENOMEM;
		}
		d->activities = na;
		na[d->nactivities].name = name;
		snprintf(key, sizeof key, "activity_color%d", i);
		na[d->nactivities].has_color = apcr_color(m, ev, key, "activity_colorN",
							  &na[d->nactivities].color);
		d->nactivities++;
	}

	/* The rest, verbatim.  An event= the writer writes from captured.xml
	 * (which configured it) is kept only where captured.xml gave none;
	 * cores only where the writer does not write it (not an activity);
	 * activityN past a gap in the numbering too. */
	apc_attrs_free(d->xattrs, d->nxattrs);
	d->xattrs = NULL;
	d->nxattrs = 0;
	for (xmlAttr *at = ev->properties; at; at = at->next) {
		const xmlChar *an = at->name;
		int keep;

		if (!xmlStrcmp(an, (const xmlChar *)"option_set"))
			continue;
		if (!xmlStrcmp(an, (const xmlChar *)"event"))
			keep = d->event < 0;
		else if (!xmlStrcmp(an, (const xmlChar *)"cores"))
			keep = d->cls != APC_CLASS_ACTIVITY;
		else
			keep = !apcr_in(an, typed) && !apcr_numbered(an, "activity", d->nactivities) &&
			       !apcr_numbered(an, "activity_color", d->nactivities);
		if (keep && apcr_keep_attr(m, &d->xattrs, &d->nxattrs, at, EV_F, EV_PATH) < 0)
			return APC_ENOMEM;
	}
	/* What the category gives its events (the spec: per_cpu, folded
	 * above, and supports_event_based_sampling) goes on the event too;
	 * the category keeps all of its attributes in events.xml. */
	for (xmlAttr *at = cat->properties; at; at = at->next)
		if (!xmlStrcmp(at->name, (const xmlChar *)"supports_event_based_sampling") &&
		    !xmlHasProp(ev, at->name) &&
		    apcr_keep_attr(m, &d->xattrs, &d->nxattrs, at, EV_F, EV_PATH) < 0)
			return APC_ENOMEM;
	return APC_OK;
}

/* Does counter type `type` belong to counter set `set` (set + digits)? */
static int apcr_in_set(const char *type, const char *set)
{
	size_t n = strlen(set);

	if (strncmp(type, set, n) != 0 || !type[n])
		return 0;
	for (const char *p = type + n; *p; p++)
		if (*p < '0' || *p > '9')
			return 0;
	return 1;
}

/* cat's <option_set name=name>, NULL if it has none. */
static xmlNode *apcr_option_set(xmlNode *cat, const xmlChar *name)
{
	for (xmlNode *c = cat->children; c; c = c->next) {
		xmlChar *v;
		int same;

		if (c->type != XML_ELEMENT_NODE || xmlStrcmp(c->name, (const xmlChar *)"option_set"))
			continue;
		v = xmlGetProp(c, (const xmlChar *)"name");
		same = v && !xmlStrcmp(v, name);
		xmlFree(v);
		if (same)
			return c;
	}
	return NULL;
}

/* The option of option set os that makes base event `event` the
 * configured event `want`, NULL if none does. */
static xmlNode *apcr_option(xmlNode *os, int64_t event, int64_t want)
{
	for (xmlNode *o = os ? os->children : NULL; o; o = o->next) {
		int64_t delta, sum;

		if (o->type == XML_ELEMENT_NODE && !xmlStrcmp(o->name, (const xmlChar *)"option") &&
		    apcr_option_delta(o, &delta) && !__builtin_add_overflow(event, delta, &sum) &&
		    sum == want)
			return o;
	}
	return NULL;
}

/*
 * The capture's counters by what an event of events.xml names them by,
 * so that matching its events is not a scan of every counter for each
 * (events.xml has thousands of events, and a captured.xml may declare
 * hundreds of thousands of counters: that took minutes).  An event
 * with counter=X names the declarations of type X: the first
 * (apc_model_find_counter) and then next_type's chain.  One without
 * names the configured counters (event= given) of its category's sets
 * with its event, or with its options' events: the sets a type is in
 * are the type less one or more of its trailing digits, each indexed
 * with the counter's event.  The index gives candidates only (hashes
 * can meet); the matching rules stay apcr_events' own.
 */
struct apcr_cindex {
	uint32_t *next_type;      /* next declaration of the type; UINT32_MAX: none */
	struct apc_map64 by_set;  /* hash(set, event) -> entry + 1, the chain's head */
	uint32_t *ent_counter, *ent_next; /* entry -> counter id, next entry + 1 */
	size_t nent, capent;
	struct apc_map64 sets;    /* hash(set) -> a counter id + 1 in it */
};

static void apcr_cindex_free(struct apcr_cindex *x)
{
	free(x->next_type);
	free(x->ent_counter);
	free(x->ent_next);
	apc_map64_free(&x->by_set);
	apc_map64_free(&x->sets);
	memset(x, 0, sizeof *x);
}

static uint64_t apcr_set_event_hash(uint64_t set_hash, int64_t event)
{
	return apc_hash_u64(set_hash, (uint64_t)event);
}

/* Counter id, in set (hashed h), configured with event: indexed. */
static int apcr_cindex_add(struct apcr_cindex *x, uint64_t h, int64_t event, uint32_t id)
{
	uint64_t k = apcr_set_event_hash(h, event), head = 0, old;

	if (x->nent == x->capent) {
		size_t cap = x->capent ? x->capent * 2 : 64;
		uint32_t *c = realloc(x->ent_counter, cap * sizeof *c), *n;
		if (!c)
			return APC_ENOMEM;
		x->ent_counter = c;
		if (!(n = realloc(x->ent_next, cap * sizeof *n)))
			return APC_ENOMEM;
		x->ent_next = n;
		x->capent = cap;
	}
	apc_map64_find(&x->by_set, k, &head);
	if (apc_map64_put(&x->by_set, k, x->nent + 1) < 0)
		return APC_ENOMEM;
	x->ent_counter[x->nent] = id;
	x->ent_next[x->nent] = (uint32_t)head;
	x->nent++;
	if (!apc_map64_find(&x->sets, h, &old)) {
		if (apc_map64_put(&x->sets, h, (uint64_t)id + 1) < 0)
			return APC_ENOMEM;
	}
	return APC_OK;
}

static int apcr_cindex_build(const struct apc_model *m, struct apcr_cindex *x)
{
	uint32_t *tail;
	size_t n = m->ncounters;

	if (n >= UINT32_MAX)
		return APC_ENOMEM;
	x->next_type = malloc((n ? n : 1) * sizeof *x->next_type);
	tail = malloc((n ? n : 1) * sizeof *tail);
	if (!x->next_type || !tail) {
		free(tail);
		return APC_ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		const struct apc_counter_decl *d = &m->counters[i];
		const struct apc_counter_decl *first =
			apc_model_find_counter((struct apc_model *)m, d->type);
		size_t len = strlen(d->type), k = len;
		uint64_t h;

		x->next_type[i] = tail[i] = UINT32_MAX;
		if (first && first->id != i) {
			uint32_t f = first->id;
			if (tail[f] == UINT32_MAX)
				x->next_type[f] = (uint32_t)i;
			else
				x->next_type[tail[f]] = (uint32_t)i;
			tail[f] = (uint32_t)i;
		}
		if (d->event < 0)
			continue;
		while (k > 0 && d->type[k - 1] >= '0' && d->type[k - 1] <= '9')
			k--;
		/* the sets: type[0, j) for every j from k to len - 1 */
		h = apc_hash_mem(APC_HASH_SEED, d->type, k);
		for (size_t j = k; j < len; j++) {
			if (apcr_cindex_add(x, h, d->event, (uint32_t)i) < 0) {
				free(tail);
				return APC_ENOMEM;
			}
			h = apc_hash_mem(h, d->type + j, 1);
		}
	}
	free(tail);
	return APC_OK;
}

/* Add the counters set's chain for event gives to *c (of *nc, room *cap). */
static int apcr_cindex_collect(const struct apcr_cindex *x, const char *set, int64_t event,
			       uint32_t **c, size_t *nc, size_t *cap)
{
	uint64_t e;

	if (!apc_map64_find(&x->by_set, apcr_set_event_hash(apc_hash_str(APC_HASH_SEED, set), event), &e))
		return APC_OK;
	for (; e; e = x->ent_next[e - 1]) {
		if (*nc == *cap) {
			size_t ncap = *cap ? *cap * 2 : 16;
			uint32_t *t = realloc(*c, ncap * sizeof *t);
			if (!t)
				return APC_ENOMEM;
			*c = t;
			*cap = ncap;
		}
		(*c)[(*nc)++] = x->ent_counter[e - 1];
	}
	return APC_OK;
}

static int apcr_u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/*
 * Is a counter of the capture configured with an event in one of these
 * sets?  Where none is, what is wrong with a category's option sets
 * matters to nobody (it describes no counter, and is kept as it is).
 */
static int apcr_sets_used(const struct apc_model *m, const struct apcr_cindex *x, char *const *sets,
			  int nsets)
{
	for (int s = 0; s < nsets; s++) {
		uint64_t id;
		if (!apc_map64_find(&x->sets, apc_hash_str(APC_HASH_SEED, sets[s]), &id))
			continue;
		if (id - 1 < m->ncounters && apcr_in_set(m->counters[id - 1].type, sets[s]))
			return 1;
		/* another set of the same hash */
		for (size_t i = 0; i < m->ncounters; i++)
			if (m->counters[i].event >= 0 && apcr_in_set(m->counters[i].type, sets[s]))
				return 1;
	}
	return 0;
}

/* Count the options of cat's option sets whose event_delta is missing
 * or no number (gatord 6.8 has a "0x01-a"): no counter can be matched
 * through them. */
static void apcr_check_options(struct apc_model *m, xmlNode *cat)
{
	for (xmlNode *os = cat->children; os; os = os->next) {
		if (os->type != XML_ELEMENT_NODE || xmlStrcmp(os->name, (const xmlChar *)"option_set"))
			continue;
		for (xmlNode *o = os->children; o; o = o->next) {
			int64_t delta;

			if (o->type != XML_ELEMENT_NODE || xmlStrcmp(o->name, (const xmlChar *)"option") ||
			    apcr_option_delta(o, &delta))
				continue;
			apcr_not_carried(m, EV_F, "/events/category/option_set/option",
					 (const xmlChar *)"event_delta", 1,
					 xmlHasProp(o, (const xmlChar *)"event_delta") ? " (not a number)"
										       : " (missing)");
		}
	}
}

/*
 * captured.xml described d (gatord 9.x does so for its constants) and
 * events.xml's event ev describes it too, which the model takes: count
 * each of captured.xml's title, name, description, units and class
 * (one not the default) that ev gives otherwise, or not at all.
 */
static void apcr_overridden(struct apc_model *m, const struct apc_counter_decl *d, xmlNode *ev)
{
	static const char *const fields[] = {"title", "name", "description", "units"};
	const char *const have[] = {d->title, d->name, d->description, d->units};
	xmlChar *v;

	for (int i = 0; i < 4; i++) {
		if (!have[i])
			continue;
		v = xmlGetProp(ev, (const xmlChar *)fields[i]);
		if (!v || xmlStrcmp(v, (const xmlChar *)have[i]))
			apcr_not_carried(m, "captured.xml", "/captured/counters/counter",
					 (const xmlChar *)fields[i], 1,
					 " (events.xml describes the counter otherwise)");
		xmlFree(v);
	}
	v = xmlGetProp(ev, (const xmlChar *)"class");
	if (d->cls != APC_CLASS_DELTA && (!v || xmlStrcmp(v, (const xmlChar *)apc_class_name(d->cls))))
		apcr_not_carried(m, "captured.xml", "/captured/counters/counter", (const xmlChar *)"class", 1,
				 " (events.xml describes the counter otherwise)");
	xmlFree(v);
}

/*
 * Describe the declared counters from events.xml: an <event counter=X>
 * names X directly; an <event event=N> in a category with counter sets
 * describes every counter of those sets configured with event N.  An
 * <event event=N option_set=S> describes the counters of those sets
 * configured with N plus the event_delta of one of S's options (gatord's
 * CCI and other uncore events), not those configured with N itself.
 * described[id] is set for each counter an event describes, and last[id]
 * to the last event that did (which the declaration holds).  Where
 * from_captured[id], captured.xml described the counter first: what of
 * that the event replaces otherwise is counted (apcr_overridden).
 */
/*
 * The counters event ev (of counter= counter, event number event, by
 * option set os when by_option) may describe, in id order, into *c:
 * a superset of those it does (apcr_events tells which).
 */
static int apcr_candidates(const struct apc_model *m, const struct apcr_cindex *x, const char *counter,
			   int64_t event, int by_option, xmlNode *os, char *const *sets, int nsets,
			   uint32_t **c, size_t *nc, size_t *cap)
{
	*nc = 0;
	if (counter) {
		const struct apc_counter_decl *first = apc_model_find_counter((struct apc_model *)m, counter);
		for (uint32_t i = first ? first->id : UINT32_MAX; i != UINT32_MAX; i = x->next_type[i]) {
			if (*nc == *cap) {
				size_t ncap = *cap ? *cap * 2 : 16;
				uint32_t *t = realloc(*c, ncap * sizeof *t);
				if (!t)
					return APC_ENOMEM;
				*c = t;
				*cap = ncap;
			}
			(*c)[(*nc)++] = i;
		}
		return APC_OK;
	}
	if (event < 0)
		return APC_OK;
	for (int s = 0; s < nsets; s++) {
		if (!by_option) {
			if (apcr_cindex_collect(x, sets[s], event, c, nc, cap) < 0)
				return APC_ENOMEM;
			continue;
		}
		for (xmlNode *o = os ? os->children : NULL; o; o = o->next) {
			int64_t delta, sum;
			if (o->type == XML_ELEMENT_NODE && !xmlStrcmp(o->name, (const xmlChar *)"option") &&
			    apcr_option_delta(o, &delta) && !__builtin_add_overflow(event, delta, &sum) &&
			    apcr_cindex_collect(x, sets[s], sum, c, nc, cap) < 0)
				return APC_ENOMEM;
		}
	}
	if (*nc > 1) {
		size_t k = 1;
		qsort(*c, *nc, sizeof **c, apcr_u32_cmp);
		for (size_t i = 1; i < *nc; i++)
			if ((*c)[i] != (*c)[k - 1])
				(*c)[k++] = (*c)[i];
		*nc = k;
	}
	return APC_OK;
}

static int apcr_events(struct apc_model *m, const struct apcr_cindex *x, xmlDoc *doc,
		       unsigned char *described, xmlNode **last, unsigned char *from_captured)
{
	xmlNode *root = xmlDocGetRootElement(doc);
	uint32_t *cand = NULL;
	size_t ncand = 0, candcap = 0;
	int rc = APC_OK;

	if (!root)
		return APC_OK;
	for (xmlNode *cat = root->children; cat; cat = cat->next) {
		char **sets;
		int nsets = 0, used, max = 1;

		if (cat->type != XML_ELEMENT_NODE || xmlStrcmp(cat->name, (const xmlChar *)"category"))
			continue;
		for (xmlNode *c = cat->children; c; c = c->next)
			max += c->type == XML_ELEMENT_NODE && !xmlStrcmp(c->name, (const xmlChar *)"counter_set");
		if (!(sets = malloc((size_t)max * sizeof *sets))) {
			rc = APC_ENOMEM;
			break;
		}
		if ((sets[nsets] = apcr_attr(cat, "counter_set")))
			nsets++;
		for (xmlNode *c = cat->children; c; c = c->next)
			if (c->type == XML_ELEMENT_NODE && !xmlStrcmp(c->name, (const xmlChar *)"counter_set") &&
			    (sets[nsets] = apcr_attr(c, "name")))
				nsets++;
		if ((used = apcr_sets_used(m, x, sets, nsets)))
			apcr_check_options(m, cat);
		for (xmlNode *ev = cat->children; ev; ev = ev->next) {
			char *counter;
			int64_t event;
			xmlChar *osname;
			xmlNode *os = NULL;
			int by_option;

			if (ev->type != XML_ELEMENT_NODE || xmlStrcmp(ev->name, (const xmlChar *)"event"))
				continue;
			counter = apcr_attr(ev, "counter");
			event = apcr_attr_int(ev, "event", -1);
			/* an event= on an event named by counter= is
			 * checked by apcr_replaced */
			if (event < 0 && !counter && used && xmlHasProp(ev, (const xmlChar *)"event"))
				apcr_not_carried(m, EV_F, EV_PATH, (const xmlChar *)"event", 1,
						 apcr_attr_int(ev, "event", 0) < 0 ? " (out of range)"
										    : " (not a number)");
			/* an option_set on an event named by counter= is
			 * counted by apcr_replaced */
			osname = counter ? NULL : xmlGetProp(ev, (const xmlChar *)"option_set");
			by_option = osname != NULL;
			if (osname && !(os = apcr_option_set(cat, osname)) && used)
				apcr_not_carried(m, EV_F, EV_PATH, (const xmlChar *)"option_set", 1,
						 " (no such option_set in its category)");
			xmlFree(osname);
			if (apcr_candidates(m, x, counter, event, by_option, os, sets, nsets, &cand, &ncand,
					    &candcap) < 0)
				rc = APC_ENOMEM;
			for (size_t ci = 0; rc == APC_OK && ci < ncand; ci++) {
				size_t i = cand[ci];
				struct apc_counter_decl *d = &m->counters[i];
				int match = counter ? strcmp(d->type, counter) == 0 : 0;
				const char *set = NULL;
				for (int s = 0; !match && !counter && s < nsets; s++) {
					if (event < 0 || d->event < 0 || !apcr_in_set(d->type, sets[s]))
						continue;
					if (by_option ? apcr_option(os, event, d->event) != NULL
						      : d->event == event) {
						match = 1;
						set = sets[s];
					}
				}
				if (!match)
					continue;
				described[i] = 1;
				last[i] = ev;
				if (from_captured[i]) {
					apcr_overridden(m, d, ev);
					from_captured[i] = 0;
				}
				if (apcr_fill_decl(m, d, cat, ev, set) < 0)
					rc = APC_ENOMEM;
			}
			free(counter);
			if (rc < 0)
				break;
		}
		for (int s = 0; s < nsets; s++)
			free(sets[s]);
		free(sets);
		if (rc < 0)
			break;
	}
	free(cand);
	return rc;
}

/*
 * The writer writes counter id's declaration in place of its events.xml
 * event ev (an <event counter=X>): count what that loses, which the
 * declaration does not hold.  An option_set there (a fixed counter is
 * no family's member), an event= other than the one captured.xml
 * configured (the writer writes that one), child elements.
 */
static void apcr_replaced(struct apc_model *m, const struct apcr_cindex *x, uint32_t id, xmlNode *ev,
			  xmlNode *const *last)
{
	/* ev names a type: what it described is of that type (id first) */
	for (uint32_t i = id; i != UINT32_MAX; i = x->next_type[i])
		if (last[i] == ev && m->counters[i].event >= 0 &&
		    xmlHasProp(ev, (const xmlChar *)"event") &&
		    apcr_attr_int(ev, "event", -1) != m->counters[i].event)
			apcr_not_carried(m, EV_F, EV_PATH, (const xmlChar *)"event", 1, " (not captured.xml's)");
	if (xmlHasProp(ev, (const xmlChar *)"option_set"))
		apcr_not_carried(m, EV_F, EV_PATH, (const xmlChar *)"option_set", 1, NULL);
	for (xmlNode *c = ev->children; c; c = c->next)
		if (c->type == XML_ELEMENT_NODE)
			apcr_not_carried(m, EV_F, EV_PATH, c->name, 0, NULL);
}

#define APCR_XML_DEPTH 256 /* libxml2's own limit without XML_PARSE_HUGE */

/* Is element or attribute name of n in a namespace by a prefix
 * ("x:extra")?  Kept without it, it would be another name. */
static int apcr_prefixed(const xmlNs *ns)
{
	return ns && ns->prefix;
}

/*
 * Copy element n of events.xml (its parent at path) into e: name,
 * attributes, child elements.  An element marked with a counter id + 1
 * (in _private) becomes a stand-in for that counter's event.  Comments
 * and the white space between elements are layout, not kept; text or
 * anything else inside an element is counted, and so are namespace
 * declarations and what is in a namespace by a prefix (gatord's
 * events.xml has neither).
 */
static int apcr_keep_elem(struct apc_model *m, xmlNode *n, struct apc_xml_elem *e, const char *path,
			  int depth)
{
	char sub[256];
	size_t nel = 0;

	e->counter = -1;
	if (n->_private) {
		e->counter = (int64_t)((uintptr_t)n->_private - 1);
		return (e->name = strdup("event")) ? APC_OK : APC_ENOMEM;
	}
	if (!(e->name = strdup((const char *)n->name)))
		return APC_ENOMEM;
	snprintf(sub, sizeof sub, "%s/%s", path, (const char *)n->name);
	for (xmlNs *ns = n->nsDef; ns; ns = ns->next) {
		char decl[80];
		snprintf(decl, sizeof decl, "xmlns%s%.64s", ns->prefix ? ":" : "",
			 ns->prefix ? (const char *)ns->prefix : "");
		apcr_not_carried(m, EV_F, sub, (const xmlChar *)decl, 1, " (namespaces not kept)");
	}
	for (xmlAttr *at = n->properties; at; at = at->next)
		if (apcr_prefixed(at->ns))
			apcr_not_carried(m, EV_F, sub, at->name, 1, " (in a namespace; not kept)");
		else if (apcr_keep_attr(m, &e->attrs, &e->nattrs, at, EV_F, sub) < 0)
			return APC_ENOMEM;
	for (xmlNode *c = n->children; c; c = c->next)
		nel += c->type == XML_ELEMENT_NODE && !apcr_prefixed(c->ns);
	if (nel && depth >= APCR_XML_DEPTH) {
		apcr_not_carried(m, EV_F, sub, (const xmlChar *)"*", 0, " (nested too deep)");
		nel = 0;
	}
	if (nel && !(e->children = calloc(nel, sizeof *e->children)))
		return APC_ENOMEM;
	for (xmlNode *c = n->children; c; c = c->next) {
		if (c->type == XML_ELEMENT_NODE && apcr_prefixed(c->ns)) {
			apcr_not_carried(m, EV_F, sub, c->name, 0, " (in a namespace; not kept)");
		} else if (c->type == XML_ELEMENT_NODE) {
			if (e->nchildren < nel &&
			    apcr_keep_elem(m, c, &e->children[e->nchildren++], sub, depth + 1) < 0)
				return APC_ENOMEM;
		} else if (c->type != XML_COMMENT_NODE && !xmlIsBlankNode(c)) {
			apcr_not_carried(m, EV_F, sub,
					 (const xmlChar *)(c->type == XML_TEXT_NODE ||
							   c->type == XML_CDATA_SECTION_NODE ? "text()" : "node()"),
					 0, NULL);
		}
	}
	return APC_OK;
}

/*
 * Keep events.xml in the model (meta.events_xml) for the writer, with
 * the capture's counters' own events marked where they were: each
 * type's first declaration is written in place of the last
 * <event counter=X> that described it.  A counter an event of a counter
 * set described last is described by that event, kept as it is
 * (kept_xml): that is how gatord describes a configured counter, and
 * Streamline reads it so, option set and all.
 */
static int apcr_keep_events(struct apc_model *m, const struct apcr_cindex *x, xmlDoc *doc,
			    xmlNode **last)
{
	xmlNode *root = xmlDocGetRootElement(doc);
	struct apc_xml_elem *e;
	int rc;

	if (!root)
		return APC_OK;
	for (size_t i = 0; i < m->ncounters; i++) {
		struct apc_counter_decl *d = &m->counters[i];
		int named = last[i] && xmlHasProp(last[i], (const xmlChar *)"counter");

		d->kept_xml = last[i] && !named;
		if (named && apc_model_find_counter(m, d->type)->id == i) {
			last[i]->_private = (void *)(uintptr_t)(i + 1);
			apcr_replaced(m, x, (uint32_t)i, last[i], last);
		}
	}
	if (xmlStrcmp(root->name, (const xmlChar *)"events"))
		apcr_not_carried(m, EV_F, "", root->name, 0, " (root written as events)");
	if (!(e = calloc(1, sizeof *e)))
		return APC_ENOMEM;
	apc_xml_elem_free(m->meta.events_xml);
	free(m->meta.events_xml);
	m->meta.events_xml = e;
	rc = apcr_keep_elem(m, root, e, "", 0);
	for (size_t i = 0; i < m->ncounters; i++)
		if (last[i])
			last[i]->_private = NULL;
	return rc;
}

static int apcr_streq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* Would a and b be written as the same events.xml event (but for the
 * counter name)? */
static int apcr_same_description(const struct apc_counter_decl *a, const struct apc_counter_decl *b)
{
	if (a->event != b->event || !apcr_streq(a->category, b->category) ||
	    !apcr_streq(a->title, b->title) || !apcr_streq(a->name, b->name) ||
	    !apcr_streq(a->description, b->description) || !apcr_streq(a->units, b->units) ||
	    a->cls != b->cls || a->display != b->display || a->series != b->series ||
	    a->render != b->render || a->multiplier != b->multiplier || a->has_color != b->has_color ||
	    (a->has_color && a->color != b->color) || a->per_cpu != b->per_cpu ||
	    a->average_selection != b->average_selection || a->average_cores != b->average_cores ||
	    a->percentage != b->percentage || a->nactivities != b->nactivities ||
	    a->nxattrs != b->nxattrs ||
	    (a->cls == APC_CLASS_ACTIVITY && a->cores != b->cores))
		return 0;
	for (size_t i = 0; i < a->nactivities; i++)
		if (!apcr_streq(a->activities[i].name, b->activities[i].name) ||
		    a->activities[i].has_color != b->activities[i].has_color ||
		    (a->activities[i].has_color && a->activities[i].color != b->activities[i].color))
			return 0;
	for (size_t i = 0; i < a->nxattrs; i++)
		if (strcmp(a->xattrs[i].key, b->xattrs[i].key) || strcmp(a->xattrs[i].value, b->xattrs[i].value))
			return 0;
	return 1;
}

/*
 * A type captured.xml gives several keys keeps each key's counter, and
 * the writer writes one <event counter=X> for the type, by the first:
 * a later one that event describes, described otherwise (configured
 * with another event, or given another title in captured.xml), loses
 * its description: counted.  One that a kept event of events.xml
 * describes (last, when there was an events.xml) keeps that: through
 * its counter set, or an <event counter=X> other than the one the
 * writer writes in its place.
 */
static void apcr_check_same_type(struct apc_model *m, xmlNode *const *last)
{
	for (size_t i = 1; i < m->ncounters; i++) {
		const struct apc_counter_decl *first = apc_model_find_counter(m, m->counters[i].type);
		const struct apc_counter_decl *d = &m->counters[i];
		if (!first || first->id == i)
			continue;
		if (d->kept_xml ||
		    (last && ((last[i] && last[i] != last[first->id]) || (first->kept_xml && !last[i]))))
			continue;
		if (!apcr_same_description(first, d))
			apc_model_unmapped(m,
					   "captured.xml counters of a type already declared under another key, described differently (events.xml gives the first description)",
					   1);
	}
}

/*
 * events.xml, when the capture has one, describes captured.xml's
 * counters, and is kept whole for the writer (apcr_keep_events).  A
 * counter that neither it nor captured.xml itself (gatord 9.x
 * constants) describes is written under its type with the default
 * title: counted, as its title, name and units are lost.
 */
static int apcr_describe(struct apc_reader *r)
{
	struct apc_model *m = r->model;
	size_t n = m->ncounters ? m->ncounters : 1;
	unsigned char *described = calloc(n, 1), *from_captured = calloc(n, 1);
	xmlNode **last = calloc(n, sizeof *last);
	xmlDoc *doc;
	uint64_t bare = 0;
	int rc = APC_OK;

	if (!described || !from_captured || !last) {
		free(described);
		free(from_captured);
		free(last);
		return apc_err_set(&r->err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
	}
	for (size_t i = 0; i < m->ncounters; i++) {
		const struct apc_counter_decl *d = &m->counters[i];
		described[i] = d->title || d->name;
		from_captured[i] = described[i] || d->description || d->units || d->cls != APC_CLASS_DELTA;
	}
	doc = apcr_parse_xml(r, r->priv, "events.xml", 0, 0);
	if (doc) {
		struct apcr_cindex x = {0};
		rc = apcr_cindex_build(m, &x);
		if (rc == APC_OK)
			rc = apcr_events(m, &x, doc, described, last, from_captured);
		if (rc == APC_OK)
			rc = apcr_keep_events(m, &x, doc, last);
		apcr_cindex_free(&x);
	} else if (r->err.status < 0) {
		rc = r->err.status;
	}
	for (size_t i = 0; rc == APC_OK && i < m->ncounters; i++)
		bare += !described[i];
	if (bare)
		apc_model_unmapped(m, "captured.xml counters events.xml does not describe (default title and name)",
				   bare);
	if (rc == APC_OK)
		apcr_check_same_type(m, doc ? last : NULL);
	if (doc)
		xmlFreeDoc(doc);
	free(described);
	free(from_captured);
	free(last);
	return rc;
}

/*
 * session.xml (Streamline's capture settings; gatord writes none into a
 * local capture): its attributes, verbatim.  The images to copy into the
 * capture and the energy probe's settings are elements the model has no
 * place for: counted.
 */
static int apcr_session(struct apc_model *m, xmlDoc *doc)
{
	xmlNode *root = xmlDocGetRootElement(doc);

	if (!root)
		return APC_OK;
	if (xmlStrcmp(root->name, (const xmlChar *)"session")) {
		apcr_not_carried(m, "session.xml", "", root->name, 0, " (not a session)");
		return APC_OK;
	}
	for (xmlAttr *at = root->properties; at; at = at->next)
		if (apcr_keep_attr(m, &m->meta.session_attrs, &m->meta.nsession_attrs, at,
				   "session.xml", "/session") < 0)
			return APC_ENOMEM;
	for (xmlNode *c = root->children; c; c = c->next)
		if (c->type == XML_ELEMENT_NODE)
			apcr_not_carried(m, "session.xml", "/session", c->name, 0, NULL);
	return APC_OK;
}

/*
 * The folder's other files: gatord's counters.xml (the counters the
 * target offered, which a capture does not need), further data files,
 * anything else (Streamline's analysis folders): not carried, counted.
 */
static void apcr_other_files(struct apc_reader *r)
{
	static const char *const ours[] = {"0000000000", "captured.xml", "events.xml", "session.xml", NULL};
	const char *const *names;
	size_t n;

	if (apc_input_members(r->inputs[0], &names, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		size_t digits = strspn(names[i], "0123456789");
		if (apcr_in((const xmlChar *)names[i], ours))
			continue;
		if (!strcmp(names[i], "counters.xml"))
			apc_model_unmapped(r->model, "counters.xml (the counters the target offered; not carried)", 1);
		else if (digits == 10 && !names[i][10])
			apc_model_unmapped(r->model, "data files after 0000000000 (not read)", 1);
		else
			apc_model_unmapped(r->model, "other files in the capture folder (not carried)", 1);
	}
}

/* ---- frames ------------------------------------------------------------ */

static int64_t fval(const struct apc_msg *m, const char *name, int64_t dflt)
{
	const struct apc_field *f = apc_msg_field(m, name);
	return f ? f->i : dflt;
}

static char *fstr(const struct apc_msg *m, const char *name)
{
	const struct apc_field *f = apc_msg_field(m, name);
	char *s;

	if (!f || !f->s)
		return strdup("");
	s = malloc(f->len + 1u);
	if (s) {
		memcpy(s, f->s, f->len);
		s[f->len] = '\0';
	}
	return s;
}

/* The Summary attributes of msg: fields attr_key, attr_value in pairs. */
static int apcr_summary_attrs(struct apc_model *m, const struct apc_msg *msg)
{
	for (size_t i = 0; i + 1 < msg->nfields; i++) {
		char *k, *v;
		int rc;

		if (strcmp(msg->f[i].name, "attr_key") || strcmp(msg->f[i + 1].name, "attr_value"))
			continue;
		k = strndup((const char *)msg->f[i].s, msg->f[i].len);
		v = strndup((const char *)msg->f[i + 1].s, msg->f[i + 1].len);
		rc = k && v ? apc_model_add_attr(m, k, v) : APC_ENOMEM;
		free(k);
		free(v);
		if (rc < 0)
			return rc;
	}
	return APC_OK;
}

static int apcr_summary(struct apc_reader *r, struct apcr *a, const struct apc_frame *f)
{
	struct apc_model *m = r->model;
	struct apc_msg_iter it;
	struct apc_msg msg;
	int rc, seen = 0, more = 0; /* a summary message was read; the attributes after it are its */

	apc_msg_iter_init(&it, f, a->summary_clocks);
	while ((rc = apc_msg_next(&it, &msg, &r->err)) == APC_OK) {
		if (!strcmp(msg.name, "summary") && seen++) {
			/* Its clocks would move every timestamp: the first
			 * is the capture's, as the first Summary frame is. */
			apc_model_unmapped(m, "summary messages after the first (ignored)", 1);
			more = 1;
		} else if (!strcmp(msg.name, "summary")) {
			more = 0;
			m->meta.wall_clock_ns = (uint64_t)fval(&msg, "timestamp", 0);
			m->meta.uptime_ns = (uint64_t)fval(&msg, "uptime", 0);
			m->meta.monotonic_delta = (uint64_t)fval(&msg, "monotonic_delta", 0);
			a->delta = m->meta.monotonic_delta;
			/* A protocol 680 Summary has three clocks: the fourth
			 * of gatord 9.1 on has no place in ours. */
			if (apc_msg_field(&msg, "clock4"))
				apc_model_unmapped(m, "gatord 9.x Summary fourth clock (no place in a protocol 680 Summary)", 1);
			if (apcr_summary_attrs(m, &msg) < 0)
				return APC_ENOMEM;
		} else if (!strcmp(msg.name, "summary_attrs")) {
			/* the attributes a full message had no room for */
			if (!more && apcr_summary_attrs(m, &msg) < 0)
				return APC_ENOMEM;
		} else if (!strcmp(msg.name, "core_name")) {
			int64_t core = fval(&msg, "core", -1);
			if (core < 0 || core >= APC_MAX_CORES) {
				apc_model_unmapped(m, "core names for cores out of range", 1);
				continue;
			}
			if ((uint64_t)core >= m->meta.ncores) {
				/* grow, keeping what we have */
				uint32_t old = m->meta.ncores;
				struct apc_core *c = realloc(m->meta.cores, (size_t)(core + 1) * sizeof *c);
				if (!c)
					return APC_ENOMEM;
				for (uint32_t i = old; i <= (uint32_t)core; i++)
					c[i] = (struct apc_core){.cpuid = 0, .name = NULL, .cluster = -1};
				m->meta.cores = c;
				m->meta.ncores = (uint32_t)core + 1;
			}
			/* named again (a core brought online again?): the
			 * last name is the one kept */
			if (m->meta.cores[core].name)
				apc_model_unmapped(m, "core names given again for a core (the last kept)", 1);
			m->meta.cores[core].cpuid = (uint32_t)fval(&msg, "cpuid", 0);
			free(m->meta.cores[core].name);
			m->meta.cores[core].name = fstr(&msg, "name");
		}
	}
	/* A bare data file has no captured.xml to give its protocol; four
	 * Summary clocks say gatord 9.1 or later (protocol 910 on), whose
	 * perf frames are dropped and counted as from a folder. */
	if (!a->summary_clocks && it.summary_version == 4 && m->meta.protocol < 910)
		m->meta.protocol = 910;
	return rc == APC_END ? APC_OK : rc;
}

/*
 * The capture's XML: a folder's or archive's captured.xml (which it must
 * have), events.xml and session.xml; a bare data file 0000000000 has
 * them beside it or not at all (captured.xml decides: without it the
 * others describe nothing).
 */
static int apcr_xml_files(struct apc_reader *r, struct apcr *a)
{
	int tree = apc_input_is_tree(r->inputs[0]);
	xmlDoc *doc = apcr_parse_xml(r, a, "captured.xml", tree, tree);
	int rc;

	if (!doc)
		return r->err.status < 0 ? r->err.status : tree ? APC_EDATA : APC_OK;
	rc = apcr_captured(r, a, doc);
	xmlFreeDoc(doc);
	if (rc != APC_OK)
		return rc < 0 ? rc : APC_OK; /* APC_END: not one (beside a bare file) */
	rc = apcr_describe(r);
	if (rc < 0)
		return rc;
	doc = apcr_parse_xml(r, a, "session.xml", 0, 0);
	if (doc) {
		rc = apcr_session(r->model, doc);
		xmlFreeDoc(doc);
		return rc;
	}
	return r->err.status < 0 ? r->err.status : APC_OK;
}

static int apcr_open_capture(struct apc_reader *r, struct apcr *a)
{
	struct apc_input *in = r->inputs[0];
	struct apc_frame f;
	int rc;

	a->summary_clocks = 0;
	apc_err_clear(&a->xml_damage);
	/* a folder with neither captured.xml nor 0000000000 (-f apc on the
	 * wrong folder) is the wrong input, in apcdump's and apcverify's words */
	if (apc_input_is_tree(in)) {
		struct apc_err e;

		apc_err_clear(&e);
		if (apc_capture_tree_check(in, apc_input_name(apc_input_path(in)), &e) == APC_EIO) {
			r->err = e;
			return APC_EIO;
		}
	}
	if (!apc_input_is_tree(in))
		a->bare = apc_input_path(in); /* "-" has nothing beside it */
	apc_strset(&r->model->meta.source_format, "apc");
	rc = apcr_xml_files(r, a);
	if (rc < 0)
		return rc;
	if (apc_input_is_tree(in)) {
		apcr_other_files(r);
		rc = apc_input_open_member(in, "0000000000", &a->data, &r->err);
		if (rc < 0)
			return rc;
		a->own_data = 1;
	} else {
		a->data = apc_input_stream(in);
	}
	a->name = apc_stream_name(a->data);
	/* gatord writes each (frame type, core) buffer whole: restore time
	 * order over a window far larger than one buffer's worth. */
	r->reorder_events = 1u << 20;
	if (apc_stream_size(a->data) > 0)
		r->progress_total = (uint64_t)apc_stream_size(a->data);
	rc = apc_frame_reader_new(a->data, &a->fr, &r->err);
	if (rc < 0)
		return rc;
	/* 1 MiB reads rather than two small ones per frame, when the size
	 * is known (as apcverify does, for the same reason). */
	if (apc_stream_size(a->data) >= 0)
		apc_frame_reader_readahead(a->fr, 1u << 20);

	/* Find the Summary; keep any frames before it (gatord 9.x perf attrs). */
	for (;;) {
		rc = apc_frame_read(a->fr, &f, &r->err);
		if (rc == APC_END)
			return apc_err_set(&r->err, APC_EDATA, a->name, (int64_t)apc_stream_offset(a->data),
					   "no summary frame in the capture");
		if (rc < 0)
			return rc;
		if (f.type == APC_FRAME_SUMMARY) {
			rc = apcr_summary(r, a, &f);
			if (rc < 0 && !r->err.file[0]) /* the decoder names no file */
				snprintf(r->err.file, sizeof r->err.file, "%s", apc_stream_name(a->data));
			return rc;
		}
		if (a->npre >= APCR_PRE_SUMMARY_MAX)
			return apc_err_set(&r->err, APC_EDATA, a->name, (int64_t)f.offset,
					   "no summary frame in the first %d frames", APCR_PRE_SUMMARY_MAX);
		struct apcr_raw *np = realloc(a->pre, (a->npre + 1) * sizeof *np);
		if (!np)
			return APC_ENOMEM;
		a->pre = np;
		if (r->model->meta.protocol >= 900) {
			/* gatord 9.x perf-attribute frames: their layout is not the
			 * protocol-680 one our captures declare. */
			apc_model_unmapped(r->model, "gatord 9.x perf frames (not expressible at protocol 680)", 1);
			continue;
		}
		/* kept whole until the Summary: many large ones would be
		 * gigabytes (from a few KB of a compressed capture) */
		if (f.len - f.hdr_len > APCR_PRE_SUMMARY_BYTES - a->pre_bytes)
			return apc_err_set(&r->err, APC_EDATA, a->name, (int64_t)f.offset,
					   "no summary frame in the first %u MiB of frames",
					   APCR_PRE_SUMMARY_BYTES >> 20);
		a->pre_bytes += f.len - f.hdr_len;
		np[a->npre].type = f.type;
		np[a->npre].core = f.core;
		np[a->npre].len = f.len - f.hdr_len;
		np[a->npre].bytes = malloc(f.len ? f.len : 1);
		if (!np[a->npre].bytes)
			return APC_ENOMEM;
		memcpy(np[a->npre].bytes, f.body + f.hdr_len, f.len - f.hdr_len);
		a->npre++;
	}
}

/* The data file's damage and the XML's, in one message: the data's
 * leads (its file and offset are the error's). */
static int apcr_with_xml_damage(struct apc_reader *r, struct apcr *a, int rc)
{
	if (rc == APC_EDATA && a->xml_damage.status < 0) {
		apcr_err_join(&r->err, &a->xml_damage);
		apc_err_clear(&a->xml_damage);
	}
	return rc;
}

static int apcr_open(struct apc_reader *r)
{
	struct apcr *a = calloc(1, sizeof *a);

	if (!a)
		return apc_err_set(&r->err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
	r->priv = a;
	return apcr_with_xml_damage(r, a, apcr_open_capture(r, a));
}

/* The counter id for an APC key, declaring an anonymous one if needed. */
static int apcr_counter(struct apc_reader *r, struct apcr *a, int64_t key, uint32_t *id)
{
	char name[48];
	struct apc_counter_decl *d;
	uint32_t id1 = apcr_key_find(a, key);

	if (id1) {
		*id = id1 - 1;
		return APC_OK;
	}
	if (key < 0 || key >= 1 << 24)
		return APC_EDATA;
	/* Not in captured.xml: keep the values under a name that says so
	 * (a counter of their own, even should captured.xml have used that
	 * name for another key). */
	snprintf(name, sizeof name, "apc_key_0x%llx", (unsigned long long)key);
	d = apc_model_add_counter_new(r->model, name);
	if (!d)
		return APC_ENOMEM;
	d->key = (int32_t)key;
	apc_model_unmapped(r->model, "counter keys not declared in captured.xml", 1);
	if (apcr_map_key(a, (int32_t)key, d->id) < 0)
		return APC_ENOMEM;
	*id = d->id;
	return APC_OK;
}

static struct apcr_fd *apcr_fd(struct apcr *a, int64_t fd)
{
	struct apcr_fd *t;

	if (fd < 0 || !(t = apc_table_grow(a->fds, &a->nfds, sizeof *t, (size_t)fd + 1, APCR_MAX_FD)))
		return NULL;
	a->fds = t;
	return &t[fd];
}

/* Feed External bytes to the fd's annotate decoder; emit what completes. */
/* An fd's stream ends (disconnect or end of capture): a message it
 * left half sent is lost, and counted. */
static void apcr_fd_end(struct apc_reader *r, struct apcr_fd *fd)
{
	if (fd->dec && !fd->broken && apc_ann_decoder_pending(fd->dec))
		apc_model_unmapped(r->model,
				   "annotate messages cut short (fd disconnected or capture ended mid-message)", 1);
	/* The model has annotations, not connections: one that sent only
	 * its setup leaves nothing to write. */
	if (fd->setup && !fd->msgs && !fd->broken)
		apc_model_unmapped(r->model, "annotate connections that sent nothing after their setup", 1);
	fd->setup = fd->msgs = 0;
	if (fd->dec)
		apc_ann_decoder_free(fd->dec);
	fd->dec = NULL;
}

static int apcr_external(struct apc_reader *r, struct apcr *a, struct apc_batch *b,
			 const struct apc_msg *m)
{
	const struct apc_field *data = apc_msg_field(m, "data");
	struct apcr_fd *fd = apcr_fd(a, fval(m, "fd", -1));
	struct apc_ann_msg am;
	struct apc_err e;
	char name[64];
	int rc;

	if (!fd) {
		apc_model_unmapped(r->model, "external frames with ids out of range", 1);
		return APC_OK;
	}
	if (!data || !data->len || fd->broken)
		return APC_OK;
	if (!fd->dec) {
		snprintf(name, sizeof name, "%s: external fd %lld", a->name, (long long)fval(m, "fd", -1));
		fd->dec = apc_ann_decoder_new(name);
		if (!fd->dec)
			return APC_ENOMEM;
		a->ann_budget.max = APC_ANN_HELD_MAX;
		apc_ann_decoder_share(fd->dec, &a->ann_budget);
	}
	if (apc_ann_decoder_feed(fd->dec, data->s, data->len, &e) < 0) {
		fd->broken = 1;
		apc_model_unmapped(r->model, "annotate streams that could not be decoded", 1);
		return APC_OK;
	}
	while ((rc = apc_ann_decoder_next(fd->dec, &am, &e)) != APC_END) {
		struct apc_event *ev;
		struct apc_ann *copy;

		if (rc < 0) {
			apc_model_unmapped(r->model, "annotate messages that could not be decoded", 1);
			continue;
		}
		if (am.is_setup) {
			fd->tid = am.ann.tid;
			fd->pid = am.ann.pid;
			fd->setup = 1;
			continue;
		}
		fd->msgs = 1;
		if (am.has_ts)
			fd->last_ts = am.ts;
		am.ann.tid = fd->tid;
		am.ann.pid = fd->pid;
		copy = apc_batch_copy_ann(b, &am.ann);
		ev = copy ? apc_batch_add(b, APC_EV_ANNOTATION, fd->last_ts, APC_NO_CORE) : NULL;
		if (!ev)
			return APC_ENOMEM;
		if (!am.has_ts)
			ev->flags |= APC_EVF_NO_TS;
		ev->u.ann = copy;
	}
	return APC_OK;
}

static int apcr_pcs(struct apc_batch *b, struct apc_event *ev, const struct apc_field *f)
{
	struct apc_pc *pcs;
	size_t pos = 0;

	if (!f || f->i <= 0)
		return APC_OK;
	pcs = apc_batch_alloc(b, (size_t)f->i * sizeof *pcs);
	if (!pcs)
		return APC_ENOMEM;
	for (int64_t i = 0; i < f->i; i++) {
		int32_t c;
		int64_t o;
		int k = apc_unpack32(f->s + pos, f->len - pos, &c);
		if (k <= 0)
			break;
		pos += (size_t)k;
		k = apc_unpack64(f->s + pos, f->len - pos, &o);
		if (k <= 0)
			break;
		pos += (size_t)k;
		pcs[ev->u.sample.depth].cookie = c;
		pcs[ev->u.sample.depth].offset = o;
		ev->u.sample.depth++;
	}
	ev->u.sample.pcs = pcs;
	return APC_OK;
}

/* Is message name n lit?  The decoder's names are literals, most often
 * the same object as lit (the linker merges equal literals); else the
 * first two bytes settle most of the chain of names a message is tried
 * against ("block_counter" and "backtrace" share the first), without a
 * call. */
static inline int is(const char *n, const char *lit)
{
	return n == lit || (n[0] == lit[0] && n[0] && n[1] == lit[1] && !strcmp(n, lit));
}

/* Map one decoded message to model events. */
static int apcr_message(struct apc_reader *r, struct apcr *a, struct apc_batch *b,
			const struct apc_msg *m)
{
	uint64_t ts = (uint64_t)(m->has_ts ? m->ts : 0) + a->delta;
	struct apc_event *ev = NULL;
	const char *n = m->name;
	uint32_t id;
	int rc;

	/* A time before the capture started (a packed integer is signed)
	 * is kept at the start, where Streamline can show it. */
	if (m->has_ts && m->ts < 0) {
		apc_model_unmapped(r->model, "apc timestamps before the capture start (kept at the start)", 1);
		ts = a->delta;
	}

	if (is(n, "counter") || is(n, "block_counter")) {
		int64_t key = fval(m, "key", -1);
		rc = apcr_counter(r, a, key, &id);
		if (rc == APC_EDATA) {
			apc_model_unmapped(r->model, "counter values with keys out of range", 1);
			return APC_OK;
		}
		if (rc < 0 || !(ev = apc_batch_add(b, APC_EV_COUNTER, ts, m->core)))
			return APC_ENOMEM;
		ev->u.counter.counter = id;
		ev->u.counter.value = fval(m, "value", 0);
		ev->u.counter.pid = (int32_t)fval(m, "pid", APC_NO_PID);
		if (ev->u.counter.pid == 0 && is(n, "block_counter"))
			ev->u.counter.pid = APC_NO_PID;
	} else if (is(n, "thread_name") || is(n, "cookie_name")) {
		int thread = n[0] == 't';
		char *s = fstr(m, "name");
		ev = s ? apc_batch_add(b, thread ? APC_EV_THREAD_NAME : APC_EV_COOKIE_NAME,
				       thread ? ts : a->delta, m->core) : NULL;
		if (ev) {
			ev->u.name.id = (int32_t)fval(m, thread ? "tid" : "cookie", 0);
			ev->u.name.name = apc_batch_strdup(b, s, strlen(s));
			if (!thread)
				ev->flags |= APC_EVF_NO_TS;
		}
		free(s);
		if (!ev || !ev->u.name.name)
			return APC_ENOMEM;
	} else if (is(n, "link")) {
		if (!(ev = apc_batch_add(b, APC_EV_LINK, ts, APC_NO_CORE)))
			return APC_ENOMEM;
		ev->u.link.cookie = (int32_t)fval(m, "cookie", 0);
		ev->u.link.pid = (int32_t)fval(m, "pid", 0);
		ev->u.link.tid = (int32_t)fval(m, "tid", 0);
	} else if (is(n, "activity_switch")) {
		rc = apcr_counter(r, a, fval(m, "key", -1), &id);
		if (rc == APC_EDATA) {
			apc_model_unmapped(r->model, "activity switches with keys out of range", 1);
			return APC_OK;
		}
		if (rc < 0 || !(ev = apc_batch_add(b, APC_EV_ACTIVITY, ts, m->core)))
			return APC_ENOMEM;
		ev->u.activity.counter = id;
		ev->u.activity.activity = (int32_t)fval(m, "activity", 0);
		ev->u.activity.tid = (int32_t)fval(m, "tid", -1);
		ev->u.activity.wait = (int32_t)fval(m, "wait_state", 0);
	} else if (is(n, "task_exit") || is(n, "thread_exit") || is(n, "sched_switch")) {
		int type = is(n, "task_exit") ? APC_EV_TASK_EXIT
				: is(n, "thread_exit") ? APC_EV_THREAD_EXIT : APC_EV_SCHED_SWITCH;
		if (!(ev = apc_batch_add(b, (uint16_t)type, ts, m->core)))
			return APC_ENOMEM;
		ev->u.sched.tid = (int32_t)fval(m, "tid", 0);
		ev->u.sched.state = (int32_t)fval(m, "state", 0);
	} else if (is(n, "idle")) {
		if (!(ev = apc_batch_add(b, APC_EV_IDLE, ts, m->core)))
			return APC_ENOMEM;
		ev->u.idle.state = (int32_t)fval(m, "state", -1);
	} else if (is(n, "backtrace")) {
		if (!(ev = apc_batch_add(b, APC_EV_SAMPLE, ts, m->core)))
			return APC_ENOMEM;
		ev->u.sample.cookie = (int32_t)fval(m, "cookie", 0);
		ev->u.sample.pid = (int32_t)fval(m, "pid", 0);
		ev->u.sample.tid = (int32_t)fval(m, "tid", 0);
		return apcr_pcs(b, ev, apc_msg_field(m, "frames"));
	} else if (is(n, "proc")) {
		char *img = fstr(m, "image"), *comm = fstr(m, "comm");
		ev = img && comm ? apc_batch_add(b, APC_EV_PROC, a->delta, m->core) : NULL;
		if (ev) {
			ev->flags |= APC_EVF_NO_TS;
			ev->u.proc.pid = (int32_t)fval(m, "pid", 0);
			ev->u.proc.tid = (int32_t)fval(m, "tid", 0);
			ev->u.proc.image = apc_batch_strdup(b, img, strlen(img));
			ev->u.proc.comm = apc_batch_strdup(b, comm, strlen(comm));
		}
		free(img);
		free(comm);
		if (!ev)
			return APC_ENOMEM;
	} else if (is(n, "external")) {
		return apcr_external(r, a, b, m);
	} else if (is(n, "external_disconnect")) {
		struct apcr_fd *fd = apcr_fd(a, fval(m, "fd", -1));
		if (fd) {
			apcr_fd_end(r, fd);
			memset(fd, 0, sizeof *fd);
		}
	} else if (is(n, "opaque")) {
		const struct apc_field *f = apc_msg_field(m, "data");
		uint8_t *copy = f && f->len ? apc_batch_alloc(b, f->len) : NULL;
		if (f && f->len && !copy)
			return APC_ENOMEM;
		if (!(ev = apc_batch_add(b, APC_EV_RAW_FRAME, a->delta, APC_NO_CORE)))
			return APC_ENOMEM;
		if (copy)
			memcpy(copy, f->s, f->len);
		ev->flags |= APC_EVF_NO_TS;
		ev->u.raw.frame_type = m->frame_type;
		ev->u.raw.len = f ? f->len : 0;
		ev->u.raw.bytes = copy;
	} else if (is(n, "summary") || is(n, "core_name")) {
		apc_model_unmapped(r->model, "summary frames after the first", 1);
	} else {
		apc_model_unmapped(r->model, "apc messages of other kinds (deprecated annotate frames)", 1);
	}
	return APC_OK;
}

/* Frames whose contents the model does not express: perf data. */
static int apcr_is_perf_frame(int32_t type)
{
	return type == APC_FRAME_PROC || type == APC_FRAME_PERF_DATA || type == APC_FRAME_TYPE_14 ||
	       type == APC_FRAME_TYPE_15;
}

/* The message decoder's error rc ends the input here: name the file
 * (the decoder knows offsets, not files). */
static int apcr_damage(struct apc_reader *r, struct apcr *a, int rc)
{
	r->damaged = 1;
	if (!r->err.file[0])
		snprintf(r->err.file, sizeof r->err.file, "%s", apc_stream_name(a->data));
	return apcr_with_xml_damage(r, a, rc);
}

/*
 * Run the message decoder over the current frame as it will be read in
 * our output (a protocol 680 capture: three Summary clocks, Proc frames
 * decoded): APC_OK, or the decoder's error.
 */
static int apcr_check_frame(struct apcr *a, struct apc_err *err)
{
	struct apc_msg_iter it;
	struct apc_msg m;
	int rc;

	apc_msg_iter_init(&it, &a->frame, 3);
	while ((rc = apc_msg_next(&it, &m, err)) == APC_OK)
		;
	return rc == APC_END ? APC_OK : rc;
}

/*
 * Carry a perf frame through whole (gatord 6.8 perf mode: attributes,
 * maps, comms and samples that only Streamline decodes).  From a 9.x
 * capture they are dropped and counted: our Summary and captured.xml
 * speak protocol 680, and 9.x perf frames mean something else there.
 */
static int apcr_raw_frame(struct apc_reader *r, struct apc_batch *b, const struct apc_frame *f)
{
	struct apcr *a = r->priv;
	struct apc_event *ev;
	uint32_t len = f->len - f->hdr_len;
	uint8_t *copy;

	if (r->model->meta.protocol >= 900) {
		apc_model_unmapped(r->model, "gatord 9.x perf frames (not expressible at protocol 680)", 1);
		return APC_OK;
	}
	copy = apc_batch_alloc(b, len ? len : 1);
	ev = copy ? apc_batch_add(b, APC_EV_RAW_FRAME, a->delta, f->core) : NULL;
	if (!ev)
		return APC_ENOMEM;
	memcpy(copy, f->body + f->hdr_len, len);
	ev->flags |= APC_EVF_NO_TS;
	ev->u.raw.frame_type = f->type;
	ev->u.raw.len = len;
	ev->u.raw.bytes = copy;
	return APC_OK;
}

static int apcr_next(struct apc_reader *r, struct apc_batch *b)
{
	struct apcr *a = r->priv;
	struct apc_msg msg;
	int rc;

	/* Frames read before the Summary go first, as they came. */
	while (a->pre_next < a->npre) {
		struct apcr_raw *p = &a->pre[a->pre_next++];
		if (r->model->meta.protocol >= 900) {
			/* kept before the Summary told a bare file's protocol */
			apc_model_unmapped(r->model, "gatord 9.x perf frames (not expressible at protocol 680)", 1);
			continue;
		}
		struct apc_event *ev = apc_batch_add(b, APC_EV_RAW_FRAME, a->delta, p->core);
		uint8_t *copy = apc_batch_alloc(b, p->len ? p->len : 1);
		if (!ev || !copy)
			return apc_err_set(&r->err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
		memcpy(copy, p->bytes, p->len);
		ev->flags |= APC_EVF_NO_TS;
		ev->u.raw.frame_type = p->type;
		ev->u.raw.len = p->len;
		ev->u.raw.bytes = copy;
	}
	while (!apc_batch_full(b)) {
		if (!a->in_frame) {
			rc = apc_frame_read(a->fr, &a->frame, &r->err);
			if (rc == APC_END) {
				for (size_t i = 0; i < a->nfds; i++)
					apcr_fd_end(r, &a->fds[i]);
				/* Every frame was read: the XML's damage is the
				 * run's (this batch is kept, the capture written). */
				if (a->xml_damage.status < 0) {
					r->err = a->xml_damage;
					apc_err_clear(&a->xml_damage);
					r->damaged = 1;
					return APC_EDATA;
				}
				return b->n ? APC_OK : APC_END;
			}
			if (rc < 0) {
				r->damaged = 1;
				return apcr_with_xml_damage(r, a, rc);
			}
			r->model->records_read++;
			r->progress_done = a->frame.offset + 4 + a->frame.len;
			if (a->frame.type == APC_FRAME_SUMMARY) {
				apc_model_unmapped(r->model, "summary frames after the first", 1);
				continue;
			}
			if (apcr_is_perf_frame(a->frame.type)) {
				/* Copied whole into a protocol 680 capture, it
				 * must decode as one: else it is damage, as a
				 * bad message in any other frame is. */
				if (r->model->meta.protocol < 900 &&
				    (rc = apcr_check_frame(a, &r->err)) < 0)
					return apcr_damage(r, a, rc);
				rc = apcr_raw_frame(r, b, &a->frame);
				if (rc < 0)
					return apc_err_set(&r->err, rc, NULL, APC_NO_OFFSET, "out of memory");
				continue;
			}
			/* Decoding may pause mid-frame when the batch fills:
			 * the body stays valid, as the next frame is read
			 * only once this one is done. */
			apc_msg_iter_init(&a->it, &a->frame, a->summary_clocks);
			a->in_frame = 1;
		}
		while (!apc_batch_full(b)) {
			rc = apc_msg_next(&a->it, &msg, &r->err);
			if (rc == APC_END) {
				a->in_frame = 0;
				break;
			}
			if (rc < 0)
				return apcr_damage(r, a, rc);
			rc = apcr_message(r, a, b, &msg);
			if (rc < 0)
				return apc_err_set(&r->err, rc, NULL, APC_NO_OFFSET, "out of memory");
		}
	}
	return APC_OK;
}

static void apcr_close(struct apc_reader *r)
{
	struct apcr *a = r->priv;

	if (!a)
		return;
	if (a->fr)
		apc_frame_reader_free(a->fr);
	if (a->own_data && a->data)
		apc_stream_close(a->data);
	for (size_t i = 0; i < a->npre; i++)
		free(a->pre[i].bytes);
	free(a->pre);
	for (size_t i = 0; i < a->nfds; i++)
		if (a->fds[i].dec)
			apc_ann_decoder_free(a->fds[i].dec);
	free(a->fds);
	free(a->keys);
	free(a);
	r->priv = NULL;
}

const struct apc_format apc_format_apc = {
	.name = "apc",
	.description = "Arm Streamline capture (gatord 6.x-9.x, apctools)",
	.reads = ".apc folder, archive, 0000000000",
	.bid = apcr_bid,
	.open = apcr_open,
	.next = apcr_next,
	.close = apcr_close,
	.read_ahead = 1,
};
