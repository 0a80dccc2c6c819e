/*
 * tptp_xml.c - reader for TPTP XML traces (.trcxml): the element stream
 * the TPTP Java profiler (org.eclipse.tptp.jvmti) writes, wrapped in
 * <TRACE> or bare, possibly cut short.
 *
 * libxml2's streaming reader (xmlReaderForIO) pulls bytes through
 * apc_stream_read (gzip is handled there), so memory stays constant
 * whatever the trace size: each child of the root is read, turned into a
 * struct tptp_rec by attribute name (options switch attributes off, so
 * never by position) and dropped.  No network, no entity substitution,
 * no DTD loading.
 *
 * A bare element stream (the profiler's own output to a socket or file)
 * has no root: the reader wraps it virtually, feeding "<TRACE>" after any
 * XML declaration and "</TRACE>" at the end.  A trace that breaks off
 * (truncated file, killed profiler) keeps every element before the break;
 * the cut is reported as damage with its byte offset.
 */
#include <stdlib.h>
#include <string.h>

#include <libxml/xmlreader.h>

#include "tptp.h"

#define TPTP_XML_PEEK 4096

struct tptp_xml {
	struct tptp_map *map; /* first: tptp_reader_stats() relies on it */
	struct apc_reader *r;
	struct apc_stream *s;
	xmlTextReaderPtr rd;
	/* Virtual wrapping: head (XML declaration + "<TRACE>") then the
	 * stream, then tail ("</TRACE>") when wrapped. */
	char head[TPTP_XML_PEEK + 16];
	size_t head_len, head_pos;
	int wrapped, tail_done, stream_eof;
	int64_t injected;     /* bytes fed that are not in the file */
	int io_failed;
	char line[65536];      /* stream bytes not yet handed to libxml2 */
	size_t lpos, llen;
	char xml_msg[256];    /* last libxml2 message */
	int xml_line;
	int have_pending;     /* damage met in open(), reported by next() */
	int finished;
};

/* ---- the byte source -------------------------------------------------- */

static int xml_io_read(void *ctx, char *buf, int len)
{
	struct tptp_xml *x = ctx;
	static const char tail[] = "</TRACE>";
	size_t n = 0, want = len > 0 ? (size_t)len : 0;

	if (x->head_pos < x->head_len) {
		n = x->head_len - x->head_pos < want ? x->head_len - x->head_pos : want;
		memcpy(buf, x->head + x->head_pos, n);
		x->head_pos += n;
		return (int)n;
	}
	/* Hand libxml2 one line at a time: its reader parses what one read
	 * returns before asking for more, so an element is delivered as soon
	 * as its line is complete and a cut loses nothing before it. */
	if (x->lpos == x->llen && !x->stream_eof) {
		ssize_t got = apc_stream_read(x->s, x->line, sizeof x->line, &x->r->err);
		if (got < 0) {
			x->io_failed = 1;
			return -1;
		}
		x->lpos = 0;
		x->llen = (size_t)got;
		if (got == 0)
			x->stream_eof = 1;
	}
	if (x->lpos < x->llen) {
		size_t avail = x->llen - x->lpos;
		const char *nl = memchr(x->line + x->lpos, '\n', avail < want ? avail : want);
		n = nl ? (size_t)(nl - (x->line + x->lpos)) + 1 : (avail < want ? avail : want);
		memcpy(buf, x->line + x->lpos, n);
		x->lpos += n;
		return (int)n;
	}
	if (x->wrapped && !x->tail_done && want >= sizeof tail - 1) {
		x->tail_done = 1;
		x->injected += (int64_t)(sizeof tail - 1);
		memcpy(buf, tail, sizeof tail - 1);
		return (int)(sizeof tail - 1);
	}
	return 0;
}

static int xml_io_close(void *ctx)
{
	(void)ctx;
	return 0;
}

/* libxml2 2.12 made the handler's error const. */
#if LIBXML_VERSION >= 21200
#define TPTP_XML_ERR const xmlError *
#else
#define TPTP_XML_ERR xmlErrorPtr
#endif

static void xml_error(void *ctx, TPTP_XML_ERR e)
{
	struct tptp_xml *x = ctx;
	size_t n;

	if (!e || !e->message)
		return;
	/* Keep the first error: later ones are consequences of it. */
	if (x->xml_msg[0])
		return;
	snprintf(x->xml_msg, sizeof x->xml_msg, "%s", e->message);
	n = strlen(x->xml_msg);
	while (n && (x->xml_msg[n - 1] == '\n' || x->xml_msg[n - 1] == '.'))
		x->xml_msg[--n] = '\0';
	x->xml_line = e->line;
}

/* ---- bidding and wrapping --------------------------------------------- */

static size_t skip_space(const uint8_t *p, size_t n, size_t i)
{
	while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' || p[i] == '\n'))
		i++;
	return i;
}

/* Position after the XML declaration, comments and BOM; 0 if none. */
static size_t skip_prolog(const uint8_t *p, size_t n)
{
	size_t i = 0;

	if (n >= 3 && p[0] == 0xef && p[1] == 0xbb && p[2] == 0xbf)
		i = 3;
	for (;;) {
		i = skip_space(p, n, i);
		if (i + 5 <= n && memcmp(p + i, "<?", 2) == 0) {
			const uint8_t *e = memmem(p + i, n - i, "?>", 2);
			if (!e)
				return i;
			i = (size_t)(e - p) + 2;
		} else if (i + 4 <= n && memcmp(p + i, "<!--", 4) == 0) {
			const uint8_t *e = memmem(p + i, n - i, "-->", 3);
			if (!e)
				return i;
			i = (size_t)(e - p) + 3;
		} else {
			return i;
		}
	}
}

/* The first element's name at p[i] ('<' expected), into name. */
static int first_element(const uint8_t *p, size_t n, size_t i, char *name, size_t len)
{
	size_t k = 0;

	if (i >= n || p[i] != '<')
		return -1;
	for (i++; i < n && k + 1 < len; i++) {
		uint8_t c = p[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == ':' || c == '-' || c == '.'))
			break;
		name[k++] = (char)c;
	}
	name[k] = '\0';
	return k ? 0 : -1;
}

static int tptp_xml_bid(struct apc_input *in)
{
	struct apc_stream *s;
	const uint8_t *p;
	struct apc_err err;
	ssize_t n;
	char name[64];

	if (apc_input_is_tree(in) || !(s = apc_input_stream(in)))
		return 0;
	apc_err_clear(&err);
	n = apc_stream_peek(s, &p, TPTP_XML_PEEK, &err);
	if (n <= 0)
		return 0;
	if (first_element(p, (size_t)n, skip_prolog(p, (size_t)n), name, sizeof name) < 0)
		return 0;
	if (strcmp(name, "TRACE") == 0) {
		/* A TRACE root with TPTP children; an empty TRACE is still ours. */
		return 90;
	}
	return tptp_kind_from_name(name) != TPTP_UNKNOWN ? 90 : 0;
}

/* ---- records -------------------------------------------------------------- */

static int parse_u64(const char *s, uint64_t *v)
{
	uint64_t x = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || x > (UINT64_MAX - 9) / 10)
			return -1;
		x = x * 10 + (uint64_t)(*s - '0');
	}
	*v = x;
	return 0;
}

/* Fill rec from the current element's attributes.  Strings point into
 * libxml2's reader and are valid until the next read. */
static void read_attrs(struct tptp_xml *x, struct tptp_rec *rec)
{
	xmlTextReaderPtr rd = x->rd;

	while (xmlTextReaderMoveToNextAttribute(rd) == 1) {
		const char *a = (const char *)xmlTextReaderConstName(rd);
		const char *v = (const char *)xmlTextReaderConstValue(rd);
		uint64_t u;

		if (!a || !v)
			continue;
		if (strcmp(a, "time") == 0) {
			if (tptp_parse_time(v, &rec->time) == 0)
				rec->has |= TPTP_HAS_TIME;
			else
				apc_model_unmapped(x->r->model, "tptp times that do not parse", 1);
		} else if (strcmp(a, "threadIdRef") == 0 || strcmp(a, "threadId") == 0) {
			if (parse_u64(v, &rec->thread_id) == 0)
				rec->has |= TPTP_HAS_THREAD;
		} else if (strcmp(a, "methodIdRef") == 0 || strcmp(a, "methodId") == 0) {
			if (parse_u64(v, &rec->method_id) == 0)
				rec->has |= TPTP_HAS_METHOD;
		} else if (strcmp(a, "classIdRef") == 0 || strcmp(a, "classId") == 0) {
			if (parse_u64(v, &rec->class_id) == 0)
				rec->has |= TPTP_HAS_CLASS;
		} else if (strcmp(a, "objIdRef") == 0 || strcmp(a, "objId") == 0) {
			if (parse_u64(v, &rec->object_id) == 0)
				rec->has |= TPTP_HAS_OBJECT;
		} else if (strcmp(a, "ticket") == 0) {
			if (parse_u64(v, &rec->ticket) == 0)
				rec->has |= TPTP_HAS_TICKET;
		} else if (strcmp(a, "stackDepth") == 0) {
			if (parse_u64(v, &rec->depth) == 0)
				rec->has |= TPTP_HAS_DEPTH;
		} else if (strcmp(a, "size") == 0) {
			if (parse_u64(v, &rec->size) == 0)
				rec->has |= TPTP_HAS_SIZE;
		} else if (strcmp(a, "pid") == 0) {
			if (parse_u64(v, &u) == 0 && u <= INT64_MAX) {
				rec->pid = (int64_t)u;
				rec->has |= TPTP_HAS_PID;
			}
		} else if (strcmp(a, "timeout") == 0) {
			parse_u64(v, &rec->timeout);
		} else if (strcmp(a, "threadOwner") == 0 || strcmp(a, "ownerThreadIdRef") == 0) {
			parse_u64(v, &rec->owner_id);
		} else if (strcmp(a, "name") == 0 || strcmp(a, "threadName") == 0 ||
			   strcmp(a, "agentName") == 0) {
			rec->name = v;
		} else if (strcmp(a, "signature") == 0) {
			rec->signature = v;
		} else if (strcmp(a, "hostname") == 0) {
			rec->hostname = v;
		} else if (strcmp(a, "key") == 0) {
			rec->key = v;
		} else if (strcmp(a, "value") == 0) {
			rec->value = v;
		} else if (strcmp(a, "groupName") == 0) {
			rec->group = v;
		}
	}
	xmlTextReaderMoveToElement(rd);
}

/*
 * Read the next top-level element into rec.  1 = got one, 0 = end of
 * input, <0 = damage or I/O failure (r->err set).
 */
static int next_record(struct tptp_xml *x, struct tptp_rec *rec)
{
	int ret;

	while ((ret = xmlTextReaderRead(x->rd)) == 1) {
		if (xmlTextReaderNodeType(x->rd) != XML_READER_TYPE_ELEMENT)
			continue;
		if (xmlTextReaderDepth(x->rd) == 0) {
			const char *root = (const char *)xmlTextReaderConstName(x->rd);
			if (root && strcmp(root, "TRACE") != 0)
				apc_model_unmapped(x->r->model, "tptp xml root is not TRACE (read anyway)", 1);
			continue;
		}
		if (xmlTextReaderDepth(x->rd) != 1)
			continue; /* annotations and other nested detail */
		memset(rec, 0, sizeof *rec);
		rec->elem = (const char *)xmlTextReaderConstName(x->rd);
		rec->kind = rec->elem ? tptp_kind_from_name(rec->elem) : TPTP_UNKNOWN;
		x->r->model->records_read++;
		if (rec->kind != TPTP_UNKNOWN)
			read_attrs(x, rec);
		return 1;
	}
	if (ret == 0)
		return 0;
	if (x->io_failed)
		return x->r->err.status < 0 ? x->r->err.status : APC_EIO;
	{
		long consumed = xmlTextReaderByteConsumed(x->rd);
		/* head holds file bytes (the declaration) plus what we
		 * injected; only the injected part is not in the file. */
		int64_t off = (int64_t)consumed - x->injected;
		if (off < 0)
			off = 0;
		x->r->damaged = 1;
		return apc_err_set(&x->r->err, APC_EDATA, apc_stream_name(x->s), off,
				   "xml breaks off at line %d: %s (truncated trace?); "
				   "kept everything before it",
				   x->xml_line, x->xml_msg[0] ? x->xml_msg : "parse error");
	}
}

/* ---- the reader --------------------------------------------------------------- */

static int tptp_xml_open(struct apc_reader *r)
{
	struct tptp_xml *x;
	const uint8_t *p;
	ssize_t n;
	size_t start;
	char name[64];
	struct tptp_rec rec;
	int rc;

	if (r->ninputs < 1 || apc_input_is_tree(r->inputs[0]))
		return apc_err_set(&r->err, APC_EIO, apc_input_path(r->inputs[0]), APC_NO_OFFSET,
				   "tptp xml reads a single file, not a directory or archive");
	x = calloc(1, sizeof *x);
	if (!x)
		return apc_err_set(&r->err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
	r->priv = x;
	x->r = r;
	x->s = apc_input_stream(r->inputs[0]);
	x->map = tptp_map_new(r->model, r->opts.window_ns);
	if (!x->map)
		return apc_err_set(&r->err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
	apc_strset(&r->model->meta.source_format, "tptp-xml");

	/* Decide on virtual wrapping from the first bytes. */
	n = apc_stream_peek(x->s, &p, TPTP_XML_PEEK, &r->err);
	if (n < 0)
		return r->err.status < 0 ? r->err.status : APC_EIO;
	start = skip_prolog(p, (size_t)n);
	if (first_element(p, (size_t)n, start, name, sizeof name) == 0 && strcmp(name, "TRACE") == 0) {
		x->wrapped = 0;
	} else {
		/* Move the declaration into head so "<TRACE>" comes after it. */
		size_t decl = start;
		ssize_t got;
		if (decl > TPTP_XML_PEEK)
			decl = TPTP_XML_PEEK;
		got = decl ? apc_stream_read(x->s, x->head, decl, &r->err) : 0;
		if (got < 0)
			return r->err.status < 0 ? r->err.status : APC_EIO;
		memcpy(x->head + got, "<TRACE>", 7);
		x->head_len = (size_t)got + 7;
		x->injected = 7;
		x->wrapped = 1;
	}

	x->rd = xmlReaderForIO(xml_io_read, xml_io_close, x, apc_stream_name(x->s), NULL,
			       XML_PARSE_NONET | XML_PARSE_NOWARNING | XML_PARSE_NOERROR |
				       XML_PARSE_COMPACT);
	if (!x->rd)
		return apc_err_set(&r->err, APC_ENOMEM, NULL, APC_NO_OFFSET,
				   "cannot start the xml reader");
	xmlTextReaderSetStructuredErrorHandler(x->rd, xml_error, x);

	/* The header (node, process, agent, traceStart, options) fills the
	 * metadata the writer needs before the first event. */
	for (;;) {
		rc = next_record(x, &rec);
		if (rc <= 0)
			break;
		if (!tptp_map_is_header(rec.kind)) {
			tptp_map_begin(x->map, (rec.has & TPTP_HAS_TIME) ? rec.time : 0);
			int mrc = tptp_map_record(x->map, &rec, &r->err);
			if (mrc < 0)
				return mrc;
			break;
		}
		tptp_map_record(x->map, &rec, &r->err);
	}
	if (rc < 0 && rc != APC_EDATA)
		return rc;
	if (rc <= 0) {
		/* Only a header (or a break inside it): still a capture. */
		tptp_map_begin(x->map, 0);
		x->finished = 1;
		x->have_pending = rc; /* APC_EDATA to report at next() */
	}
	return APC_OK;
}

/* tptp_map_next()'s record source. */
static int xml_pull(void *ctx, struct tptp_rec *rec)
{
	return next_record(ctx, rec);
}

static int tptp_xml_next(struct apc_reader *r, struct apc_batch *b)
{
	struct tptp_xml *x = r->priv;

	return tptp_map_next(x->map, r, b, xml_pull, x, &x->finished, &x->have_pending);
}

static void tptp_xml_close(struct apc_reader *r)
{
	struct tptp_xml *x = r->priv;

	if (!x)
		return;
	if (x->rd)
		xmlFreeTextReader(x->rd);
	tptp_map_free(x->map);
	free(x);
	r->priv = NULL;
}

const struct apc_format apc_format_tptp_xml = {
	.name = "tptp-xml",
	.description = "TPTP Java profiler XML trace (.trcxml), wrapped or bare, gzip ok",
	.reads = "file",
	.bid = tptp_xml_bid,
	.open = tptp_xml_open,
	.next = tptp_xml_next,
	.close = tptp_xml_close,
};
