/*
 * tptp_xml.c - reader for TPTP XML traces (.trcxml): the element stream
 * the TPTP Java profiler (org.eclipse.tptp.jvmti) writes, wrapped in
 * <TRACE> or bare, possibly cut short.
 *
 * libxml2's push parser with SAX2 callbacks: bytes come from
 * apc_stream_read (gzip is handled there) in 64 KiB chunks, each chunk is
 * parsed, and every child of the root becomes a struct tptp_rec (by
 * attribute name, never by position: options switch attributes off) in
 * a queue that the reader's pull empties before the next chunk is read.
 * No tree is built, so memory stays constant whatever the trace size.
 * SAX2 hands over names interned in the parser's dictionary and values
 * as pointer pairs into its buffer: names are told apart by pointer
 * (a small cache filled by string compare on first sight) and numbers
 * are parsed in place, so the hot path copies nothing but the strings a
 * record keeps.  (This replaced xmlTextReader, which builds and frees a
 * node per element and cost about twice the whole conversion.)
 * No network, no entity substitution, no DTD loading.
 * Attributes are a record's data; what is inside a record (elements,
 * text) or between records (text, entity references) is not mapped and
 * is counted, so that nothing disappears unsaid.
 *
 * A bare element stream (the profiler's own output to a socket or file)
 * has no root: the reader wraps it virtually, feeding "<TRACE>" after the
 * prolog (XML declaration, comments, processing instructions, DOCTYPE)
 * and "</TRACE>" at the end.  The prolog is scanned as a stream, so its
 * length is not limited by what a bid can peek at (libxml2 still limits
 * one comment, PI or DOCTYPE to 10 MB: damage at its start).  A trace
 * that breaks off (truncated file, killed profiler) keeps every element
 * before the break; the cut is reported as damage with its byte offset.
 * A bare stream cut between elements is still well-formed once wrapped:
 * after a traceStart, its missing traceEnd tells the cut.
 * So is damage in the middle (XML that is not well-formed), which is not
 * called a cut: see xml_cut_plausible().
 */
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/SAX2.h>

#include "tptp.h"

#define TPTP_XML_PEEK 4096
#define TPTP_XML_CHUNK 65536
#define TPTP_XML_CACHE 64    /* name-pointer cache slots (power of 2) */

/*
 * The prolog: a byte-order mark, the XML declaration, processing
 * instructions, comments, a DOCTYPE with its internal subset.  It may be
 * any length (a licence in a comment, a generated DTD), longer than a
 * bid can peek at or a buffer should hold, so it is scanned a piece at a
 * time with this state.
 */
enum { PRO_TOP, PRO_LT, PRO_BANG, PRO_PI, PRO_COMMENT, PRO_DOCTYPE, PRO_END };

struct xml_prolog {
	int st;
	int k;            /* PRO_BANG: bytes of want matched; PRO_PI (and a
			   * PI in the subset): the last byte was '?';
			   * PRO_COMMENT (and one in the subset): '-' in a row */
	const char *want; /* PRO_BANG: "--" or "DOCTYPE" */
	int depth;        /* PRO_DOCTYPE: '[' open */
	uint8_t quote;    /* PRO_DOCTYPE: the open quote, or 0 */
	int sub;          /* PRO_DOCTYPE: markup inside the subset, see below */
	int seen;         /* a construct began: this is an XML prolog */
	uint64_t pos;     /* bytes taken as prolog so far */
};

/* What an attribute name means for a record. */
enum xml_attr {
	XA_NONE = 0, XA_TIME, XA_THREAD, XA_METHOD, XA_CLASS, XA_OBJECT, XA_TICKET,
	XA_DEPTH, XA_SIZE, XA_PID, XA_TIMEOUT, XA_OWNER, XA_NAME, XA_SIGNATURE,
	XA_HOSTNAME, XA_KEY, XA_VALUE, XA_GROUP
};

/* The strings a record may carry, as offsets into the arena. */
enum { XS_ELEM, XS_NAME, XS_SIGNATURE, XS_HOSTNAME, XS_KEY, XS_VALUE, XS_GROUP, XS_COUNT };
#define XS_NONE UINT32_MAX

/* One parsed element waiting for the pull. */
struct xml_qrec {
	struct tptp_rec rec;
	uint32_t str[XS_COUNT];
	unsigned bad;          /* 1 << XA_*: values that do not parse, counted
				* at the pull (a record taken back is not) */
	unsigned time_trail;   /* time read up to characters after it */
};

/* Name pointer (from the parser's dictionary) -> code, filled on first
 * sight: dictionary pointers are stable for the parser's life. */
struct xml_cache {
	const xmlChar *key[TPTP_XML_CACHE];
	int val[TPTP_XML_CACHE];
};

struct tptp_xml {
	struct tptp_map *map; /* first: tptp_reader_stats() relies on it */
	struct apc_reader *r;
	struct apc_stream *s;
	xmlParserCtxtPtr ctxt;
	xmlSAXHandler sax;
	/* Virtual wrapping: the prolog, "<TRACE>", the rest of the stream,
	 * "</TRACE>" when the stream is bare. */
	struct xml_prolog prolog;
	int prolog_done, wrapped, tail_done, stream_eof, terminated;
	int64_t inject_at;    /* the file offset where "<TRACE>" went in */
	int64_t injected;     /* its length (0 if not wrapped) */
	int64_t file_fed;     /* bytes of the file fed */
	int io_failed, parse_failed, oom;
	int trace_open;       /* a bare stream's traceStart not yet ended */
	char *chunk;          /* TPTP_XML_CHUNK bytes read from the stream */
	int depth;            /* element depth in the main document */
	/* The last record's start tag: where the parser stood when SAX2
	 * handed it over, to take it back if the tag then fails to end. */
	int64_t start_pos;
	size_t start_q;
	int start_valid, fatal_seen;
	long fatal_pos;       /* input consumed at the first fatal error */
	/* Records of the last chunk, and their strings. */
	struct xml_qrec *q;
	size_t qhead, qn, qcap;
	char *arena;
	size_t alen, acap;
	struct xml_cache attrs, elems;
	/* The record (depth 1) being read: its name, as dictionary
	 * pointers (stable for the parser's life; made a string only for
	 * what it holds that is counted). */
	const xmlChar *rec_prefix, *rec_local;
	int text_counted;     /* the current text node is counted already */
	char xml_msg[256];    /* first libxml2 message (a fatal one wins) */
	int xml_line, xml_code, xml_fatal;
	int failed_at_end;    /* the parse failed once told the input ended */
	int have_pending;     /* damage met in open(), reported by next() */
	int finished;
};

/* libxml2 2.12 made the handler's error const. */
#if LIBXML_VERSION >= 21200
#define TPTP_XML_ERR const xmlError *
#else
#define TPTP_XML_ERR xmlErrorPtr
#endif

/* Bytes of (decoded) input the parser has moved past. */
static int64_t xml_pos(xmlParserCtxtPtr ctxt)
{
	xmlParserInputPtr in = ctxt->input;

	return in && in->base && in->cur ? (int64_t)in->consumed + (in->cur - in->base) : -1;
}

/* Structured errors arrive with the parser context as data. */
static void xml_error(void *ctx, TPTP_XML_ERR e)
{
	xmlParserCtxtPtr ctxt = ctx;
	struct tptp_xml *x = ctxt ? ctxt->_private : NULL;
	size_t n;

	if (!x || !e)
		return;
	/* SAX2 reports a start tag once its attributes are read, before it
	 * checks for the closing ">" or "/>": a fatal error with the parser
	 * still where it stood then means the tag never ended (a cut in the
	 * middle of it), so that record is not one. */
	if (e->level == XML_ERR_FATAL && ctxt == x->ctxt && !x->fatal_seen) {
		x->fatal_seen = 1;
		x->fatal_pos = xmlByteConsumed(ctxt);
		if (x->start_valid && x->qn == x->start_q + 1 && xml_pos(ctxt) == x->start_pos)
			x->qn--;
	}
	if (!e->message)
		return;
	/* Keep the first error: later ones are consequences of it.  But
	 * the first fatal one is what ends the parse: an earlier error
	 * that did not (an undefined namespace prefix) is not the reason. */
	if (x->xml_msg[0] && (x->xml_fatal || e->level != XML_ERR_FATAL))
		return;
	/* one line, as the other readers quote libxml2 */
	apc_err_lower(e->message, x->xml_msg, sizeof x->xml_msg);
	n = strlen(x->xml_msg);
	while (n && x->xml_msg[n - 1] == '.')
		x->xml_msg[--n] = '\0';
	x->xml_line = e->line;
	x->xml_code = e->code;
	x->xml_fatal = e->level == XML_ERR_FATAL;
}

/* ---- bidding and wrapping --------------------------------------------- */

/*
 * One byte of a DOCTYPE after "<!DOCTYPE": 1 when it is the '>' that
 * ends it (outside quotes and the internal subset [...], whose
 * declarations, comments and processing instructions may hold '>', ']'
 * and quotes of their own).  sub: 0 plain, 1 after '<', 2 "<!", 3 "<!-",
 * 4 in a comment, 5 in a processing instruction.
 */
static int prolog_doctype(struct xml_prolog *ps, uint8_t c)
{
	switch (ps->sub) {
	case 4:
		if (c == '>' && ps->k >= 2)
			ps->sub = 0;
		else
			ps->k = c == '-' ? ps->k + 1 : 0;
		return 0;
	case 5:
		if (c == '>' && ps->k)
			ps->sub = 0;
		else
			ps->k = c == '?';
		return 0;
	case 1:
		if (c == '!' || c == '?') {
			ps->sub = c == '!' ? 2 : 5;
			ps->k = 0;
			return 0;
		}
		break;
	case 2:
	case 3:
		if (c == '-') {
			ps->sub++;
			ps->k = 0;
			return 0;
		}
		break;
	default:
		break;
	}
	ps->sub = 0;
	if (ps->quote) {
		if (c == ps->quote)
			ps->quote = 0;
	} else if (c == '"' || c == '\'') {
		ps->quote = c;
	} else if (c == '<' && ps->depth) {
		ps->sub = 1;
	} else if (c == '[') {
		ps->depth++;
	} else if (c == ']' && ps->depth) {
		ps->depth--;
	} else if (c == '>' && !ps->depth) {
		return 1;
	}
	return 0;
}

/*
 * Scan p[0..n), the bytes after those taken so far: how many of them
 * are prolog.  ps->st is PRO_END when the byte after those is where the
 * prolog ends (the first element, or anything that is not prolog).  A
 * '<' whose meaning is not in view yet ("<", "<!DOC" at the end of p) is
 * not taken: the next call sees it again with what follows.
 */
static size_t prolog_scan(struct xml_prolog *ps, const uint8_t *p, size_t n)
{
	size_t i = 0, lt = 0;

	if (ps->st == PRO_END)
		return 0;
	if (ps->pos == 0 && n >= 3 && p[0] == 0xef && p[1] == 0xbb && p[2] == 0xbf)
		i = 3;
	for (; i < n; i++) {
		uint8_t c = p[i];
		switch (ps->st) {
		case PRO_TOP:
			if (c == ' ' || c == '\t' || c == '\r' || c == '\n')
				break;
			if (c != '<')
				goto end;
			lt = i;
			ps->st = PRO_LT;
			break;
		case PRO_LT:
			if (c == '?') {
				ps->st = PRO_PI;
				ps->k = 0;
				ps->seen = 1;
			} else if (c == '!') {
				ps->st = PRO_BANG;
				ps->k = 0;
			} else {
				i = lt;
				goto end;
			}
			break;
		case PRO_BANG:
			if (ps->k == 0)
				ps->want = c == '-' ? "--" : "DOCTYPE";
			if (c != (uint8_t)ps->want[ps->k]) {
				i = lt;
				goto end;
			}
			if (!ps->want[++ps->k]) {
				ps->seen = 1;
				ps->st = ps->want[0] == '-' ? PRO_COMMENT : PRO_DOCTYPE;
				ps->k = ps->depth = ps->sub = 0;
				ps->quote = 0;
			}
			break;
		case PRO_PI:
			if (c == '>' && ps->k)
				ps->st = PRO_TOP;
			else
				ps->k = c == '?';
			break;
		case PRO_COMMENT:
			if (c == '>' && ps->k >= 2)
				ps->st = PRO_TOP;
			else
				ps->k = c == '-' ? ps->k + 1 : 0;
			break;
		default: /* PRO_DOCTYPE */
			if (prolog_doctype(ps, c))
				ps->st = PRO_TOP;
			break;
		}
	}
	if (ps->st == PRO_LT || ps->st == PRO_BANG) {
		ps->st = PRO_TOP;
		n = lt;
	}
	ps->pos += n;
	return n;
end:
	ps->st = PRO_END;
	ps->pos += i;
	return i;
}

/* The first element's name at p[i] ('<' expected), into name; -1 when
 * there is none, or it does not end within the n bytes ("<TRA" is not
 * "<TRACE"). */
static int first_element(const uint8_t *p, size_t n, size_t i, char *name, size_t len)
{
	size_t k = 0;

	name[0] = '\0';
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
	if (!k || i >= n) {
		name[0] = '\0';
		return -1;
	}
	return 0;
}

/*
 * UTF-16 XML (what a Windows tool may write): a byte-order mark, or
 * "<" and the next character as 16-bit units.  This reader takes bytes
 * (the prolog scan, the offsets it reports are the file's), so it is
 * not read, but told as what it is.  1: little-endian, 2: big, 0: not.
 */
static int xml_utf16(const uint8_t *p, size_t n)
{
	if (n >= 2 && p[0] == 0xff && p[1] == 0xfe)
		return 1;
	if (n >= 2 && p[0] == 0xfe && p[1] == 0xff)
		return 2;
	if (n >= 4 && p[0] == '<' && !p[1] && p[2] && !p[3])
		return 1;
	if (n >= 4 && !p[0] && p[1] == '<' && !p[2] && p[3])
		return 2;
	return 0;
}

/* The ASCII of UTF-16 text p[0..n) (anything else as '?'), for the bid
 * to find the first element in; returns its length. */
static size_t xml_utf16_ascii(const uint8_t *p, size_t n, int order, char *out, size_t cap)
{
	size_t k = 0, i = (n >= 2 && (p[0] == 0xff || p[0] == 0xfe)) ? 2 : 0;

	for (; i + 1 < n && k < cap; i += 2) {
		unsigned u = order == 1 ? p[i] | (unsigned)p[i + 1] << 8 : (unsigned)p[i] << 8 | p[i + 1];
		out[k++] = u && u < 0x80 ? (char)u : '?';
	}
	return k;
}

/*
 * Look at the start of s for the first element's name: 4 KiB first,
 * more (up to APC_PEEK_MAX) while the prolog runs past what is in view.
 * name gets it ("" if none is in view).  Returns 1 when all in view is
 * prolog and there is more (a prolog longer than a peek can see), 0
 * otherwise, -1 on failure (err set).  UTF-16 input: its first element
 * read as ASCII (xml_utf16_ascii()), 0.
 */
static int xml_peek_first(struct apc_stream *s, char *name, size_t len, struct apc_err *err)
{
	size_t want = TPTP_XML_PEEK;
	const uint8_t *head;
	ssize_t got = apc_stream_peek(s, &head, 4, err);
	int order = got > 0 ? xml_utf16(head, (size_t)got) : 0;

	if (order) {
		/* a UTF-16 TPTP trace is claimed, so open() can say why it
		 * is not read */
		char ascii[TPTP_XML_PEEK / 2];
		struct xml_prolog ps;
		size_t k, start;

		got = apc_stream_peek(s, &head, TPTP_XML_PEEK, err);
		if (got < 0)
			return -1;
		k = xml_utf16_ascii(head, (size_t)got, order, ascii, sizeof ascii);
		memset(&ps, 0, sizeof ps);
		start = prolog_scan(&ps, (const uint8_t *)ascii, k);
		name[0] = '\0';
		if (ps.st == PRO_END)
			first_element((const uint8_t *)ascii, k, start, name, len);
		return 0;
	}

	for (;;) {
		struct xml_prolog ps;
		const uint8_t *p;
		ssize_t n = apc_stream_peek(s, &p, want, err);
		size_t start;

		if (n < 0)
			return -1;
		memset(&ps, 0, sizeof ps);
		start = prolog_scan(&ps, p, (size_t)n);
		if (ps.st == PRO_END && first_element(p, (size_t)n, start, name, len) == 0)
			return 0;
		name[0] = '\0';
		if ((size_t)n < want)
			return 0;
		if (want >= APC_PEEK_MAX)
			return ps.st != PRO_END && ps.seen;
		want = want * 4 < APC_PEEK_MAX ? want * 4 : APC_PEEK_MAX;
	}
}

/* The bid for XML whose prolog runs past the peek: no element is in
 * view, but this is the only XML file format (the others have magic
 * numbers or are directories), and open() reads any prolog length. */
#define TPTP_XML_BID_LONG_PROLOG 40

static int tptp_xml_bid(struct apc_input *in)
{
	struct apc_stream *s;
	struct apc_err err;
	char name[64];
	int rc;

	if (apc_input_is_tree(in) || !(s = apc_input_stream(in)))
		return 0;
	apc_err_clear(&err);
	rc = xml_peek_first(s, name, sizeof name, &err);
	if (rc < 0)
		return 0;
	if (rc == 1)
		return TPTP_XML_BID_LONG_PROLOG;
	if (strcmp(name, "TRACE") == 0) {
		/* A TRACE root with TPTP children; an empty TRACE is still ours. */
		return 90;
	}
	return name[0] && tptp_kind_from_name(name) != TPTP_UNKNOWN ? 90 : 0;
}

/* ---- records -------------------------------------------------------------- */

static int parse_u64(const xmlChar *s, const xmlChar *e, uint64_t *v)
{
	uint64_t x = 0;

	if (s == e)
		return -1;
	for (; s < e; s++) {
		if (*s < '0' || *s > '9' || __builtin_mul_overflow(x, 10, &x) ||
		    __builtin_add_overflow(x, (uint64_t)(*s - '0'), &x))
			return -1;
	}
	*v = x;
	return 0;
}

static int xml_attr_code(const char *a)
{
	static const struct {
		const char *name;
		int code;
	} names[] = {
		{"time", XA_TIME},         {"threadIdRef", XA_THREAD},  {"threadId", XA_THREAD},
		{"methodIdRef", XA_METHOD}, {"methodId", XA_METHOD},    {"classIdRef", XA_CLASS},
		{"classId", XA_CLASS},     {"objIdRef", XA_OBJECT},     {"objId", XA_OBJECT},
		{"ticket", XA_TICKET},     {"stackDepth", XA_DEPTH},    {"size", XA_SIZE},
		{"pid", XA_PID},           {"timeout", XA_TIMEOUT},     {"threadOwner", XA_OWNER},
		{"ownerThreadIdRef", XA_OWNER}, {"name", XA_NAME},      {"threadName", XA_NAME},
		{"agentName", XA_NAME},    {"signature", XA_SIGNATURE}, {"hostname", XA_HOSTNAME},
		{"key", XA_KEY},           {"value", XA_VALUE},         {"groupName", XA_GROUP},
	};

	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcmp(a, names[i].name) == 0)
			return names[i].code;
	return XA_NONE;
}

/* The code of dictionary name p: cached by pointer, computed by string
 * compare the first time.  A full cache just stops caching. */
static int xml_cache_get(struct xml_cache *c, const xmlChar *p, int (*code)(const char *))
{
	size_t i = ((uintptr_t)p >> 3) & (TPTP_XML_CACHE - 1);

	for (size_t k = 0; k < TPTP_XML_CACHE; k++, i = (i + 1) & (TPTP_XML_CACHE - 1)) {
		if (c->key[i] == p)
			return c->val[i];
		if (!c->key[i]) {
			c->key[i] = p;
			c->val[i] = code((const char *)p);
			return c->val[i];
		}
	}
	return code((const char *)p);
}

/* Copy len bytes (NUL added) into the arena; offset or XS_NONE. */
static uint32_t xml_keep(struct tptp_xml *x, const void *s, size_t len)
{
	uint32_t off;

	if (len >= UINT32_MAX / 2 || x->alen > UINT32_MAX / 2) {
		x->oom = 1;
		return XS_NONE;
	}
	if (x->alen + len + 1 > x->acap) {
		size_t cap = x->acap ? x->acap : 4096;
		char *na;
		while (cap < x->alen + len + 1)
			cap *= 2;
		na = realloc(x->arena, cap);
		if (!na) {
			x->oom = 1;
			return XS_NONE;
		}
		x->arena = na;
		x->acap = cap;
	}
	off = (uint32_t)x->alen;
	memcpy(x->arena + off, s, len);
	x->arena[off + len] = '\0';
	x->alen += len + 1;
	return off;
}

/* The longest attribute value kept after expanding entity references. */
#define TPTP_XML_VALUE_MAX 65536

/*
 * Keep an attribute value.  Without entity substitution libxml2 hands
 * over "&amp;" and "&#38;" as "&#38;" (for the tree builder to reparse)
 * and has replaced every other character and predefined reference.  A
 * reference to an entity declared in the DOCTYPE's internal subset is
 * left as written ("&name;"): it is replaced by the entity's text here,
 * one level deep (text that itself holds a reference, an external
 * entity, or a value that would grow past TPTP_XML_VALUE_MAX is kept
 * as written and counted).  Substituting in the parser instead
 * (XML_PARSE_NOENT) would also fetch external entities from disk.
 */
static uint32_t xml_keep_value(struct tptp_xml *x, const xmlChar *v, const xmlChar *e)
{
	size_t len = (size_t)(e - v), k = 0;
	uint32_t off;
	char *d;

	if (!memchr(v, '&', len))
		return xml_keep(x, v, len);
	d = malloc(len + 1);
	if (!d) {
		x->oom = 1;
		return XS_NONE;
	}
	for (size_t i = 0; i < len; i++) {
		const xmlChar *semi;
		xmlEntityPtr ent = NULL;
		size_t n = 0;

		if (v[i] != '&') {
			d[k++] = (char)v[i];
			continue;
		}
		if (len - i >= 5 && memcmp(v + i, "&#38;", 5) == 0) {
			d[k++] = '&';
			i += 4;
			continue;
		}
		semi = memchr(v + i, ';', len - i);
		if (semi && (size_t)(semi - v - i) < 256 && x->ctxt && x->ctxt->myDoc) {
			char name[256];
			n = (size_t)(semi - v - i) - 1;
			memcpy(name, v + i + 1, n);
			name[n] = '\0';
			ent = xmlGetDocEntity(x->ctxt->myDoc, (const xmlChar *)name);
		}
		if (ent && ent->etype == XML_INTERNAL_GENERAL_ENTITY && ent->content &&
		    !strchr((const char *)ent->content, '&') &&
		    k + (n = strlen((const char *)ent->content)) + (len - i) <= TPTP_XML_VALUE_MAX) {
			char *nd = realloc(d, k + n + (len - i) + 1);
			if (!nd) {
				free(d);
				x->oom = 1;
				return XS_NONE;
			}
			d = nd;
			memcpy(d + k, ent->content, n);
			k += n;
			i = (size_t)(semi - v);
			continue;
		}
		apc_model_unmapped(x->r->model, "tptp entity references kept as written", 1);
		d[k++] = '&';
	}
	off = xml_keep(x, (const xmlChar *)d, k);
	free(d);
	return off;
}

/* A number attribute (code a) into *u, or a mark in q->bad if it is
 * not a decimal number that fits in 64 bits: 1 if it is. */
static int xml_number(struct xml_qrec *q, int a, const xmlChar *v, const xmlChar *e, uint64_t *u)
{
	if (parse_u64(v, e, u) == 0)
		return 1;
	q->bad |= 1u << a;
	return 0;
}

/* Fill q from the element's attributes (SAX2 layout: localname, prefix,
 * URI, value, end; five pointers each).  Later attributes win, as they
 * did when the reader walked them in document order.  A number that
 * does not parse leaves its field unset, as if absent, and is counted. */
static void xml_read_attrs(struct tptp_xml *x, struct xml_qrec *q, int nattr,
			   const xmlChar **at)
{
	struct tptp_rec *rec = &q->rec;

	for (int i = 0; i < nattr; i++, at += 5) {
		const xmlChar *v = at[3], *e = at[4];
		uint64_t u;
		int a;

		/* A prefixed name ("p:time") is none of ours. */
		if (at[1] || !v || !e)
			continue;
		switch ((a = xml_cache_get(&x->attrs, at[0], xml_attr_code))) {
		case XA_TIME:
			switch (tptp_parse_time_n((const char *)v, (size_t)(e - v), &rec->time)) {
			case 1:
				q->time_trail = 1;
				/* fall through */
			case 0:
				rec->has |= TPTP_HAS_TIME;
				break;
			default:
				q->bad |= 1u << a;
			}
			break;
		case XA_THREAD:
			if (xml_number(q, a, v, e, &rec->thread_id))
				rec->has |= TPTP_HAS_THREAD;
			break;
		case XA_METHOD:
			if (xml_number(q, a, v, e, &rec->method_id))
				rec->has |= TPTP_HAS_METHOD;
			break;
		case XA_CLASS:
			if (xml_number(q, a, v, e, &rec->class_id))
				rec->has |= TPTP_HAS_CLASS;
			break;
		case XA_OBJECT:
			if (xml_number(q, a, v, e, &rec->object_id))
				rec->has |= TPTP_HAS_OBJECT;
			break;
		case XA_TICKET:
			if (xml_number(q, a, v, e, &rec->ticket))
				rec->has |= TPTP_HAS_TICKET;
			break;
		case XA_DEPTH:
			if (xml_number(q, a, v, e, &rec->depth))
				rec->has |= TPTP_HAS_DEPTH;
			break;
		case XA_SIZE:
			if (xml_number(q, a, v, e, &rec->size))
				rec->has |= TPTP_HAS_SIZE;
			break;
		case XA_PID:
			/* One past int64 is out of range like any pid above
			 * 2^31: the map says so (INT64_MAX stands for it). */
			if (xml_number(q, a, v, e, &u)) {
				rec->pid = u <= INT64_MAX ? (int64_t)u : INT64_MAX;
				rec->has |= TPTP_HAS_PID;
			}
			break;
		case XA_TIMEOUT:
			xml_number(q, a, v, e, &rec->timeout);
			break;
		case XA_OWNER:
			xml_number(q, a, v, e, &rec->owner_id);
			break;
		case XA_NAME:
			q->str[XS_NAME] = xml_keep_value(x, v, e);
			break;
		case XA_SIGNATURE:
			q->str[XS_SIGNATURE] = xml_keep_value(x, v, e);
			break;
		case XA_HOSTNAME:
			q->str[XS_HOSTNAME] = xml_keep_value(x, v, e);
			break;
		case XA_KEY:
			q->str[XS_KEY] = xml_keep_value(x, v, e);
			break;
		case XA_VALUE:
			q->str[XS_VALUE] = xml_keep_value(x, v, e);
			break;
		case XA_GROUP:
			q->str[XS_GROUP] = xml_keep_value(x, v, e);
			break;
		default:
			break;
		}
	}
}

/* "prefix:local" or "local" into buf. */
static void xml_qname(char *buf, size_t len, const xmlChar *prefix, const xmlChar *local)
{
	if (prefix)
		snprintf(buf, len, "%s:%s", (const char *)prefix, (const char *)local);
	else
		snprintf(buf, len, "%s", (const char *)local);
}

/*
 * Content the records do not map: elements inside a record (the XML
 * form of the monitor stacks, which the binary format carries as
 * arrays, or a writer's own detail), text and CDATA inside or between
 * records, and entity references in content (not expanded, so elements
 * in an entity's text never become records).  Each is counted; a text
 * node once, however many pieces the parser hands it over in.
 */
static void xml_nested(struct tptp_xml *x, const xmlChar *prefix, const xmlChar *local)
{
	char name[64], rec[64], what[160];

	xml_qname(name, sizeof name, prefix, local);
	xml_qname(rec, sizeof rec, x->rec_prefix, x->rec_local);
	snprintf(what, sizeof what, "tptp <%s> inside <%s>", name, rec);
	apc_model_unmapped(x->r->model, what, 1);
}

static void xml_text(void *ctx, const xmlChar *ch, int len)
{
	xmlParserCtxtPtr ctxt = ctx;
	struct tptp_xml *x = ctxt->_private;
	char rec[64], what[160];
	int i;

	if (!x || ctxt != x->ctxt || x->depth < 1 || x->text_counted)
		return;
	for (i = 0; i < len; i++)
		if (ch[i] != ' ' && ch[i] != '\t' && ch[i] != '\r' && ch[i] != '\n')
			break;
	if (i == len)
		return; /* layout between and inside records */
	x->text_counted = 1;
	if (x->depth == 1) {
		snprintf(what, sizeof what, "tptp text between records");
	} else {
		xml_qname(rec, sizeof rec, x->rec_prefix, x->rec_local);
		snprintf(what, sizeof what, "tptp text inside <%s>", rec);
	}
	apc_model_unmapped(x->r->model, what, 1);
}

static void xml_reference(void *ctx, const xmlChar *name)
{
	xmlParserCtxtPtr ctxt = ctx;
	struct tptp_xml *x = ctxt->_private;

	(void)name;
	if (x && ctxt == x->ctxt && x->depth >= 1)
		apc_model_unmapped(x->r->model,
				   "tptp entity references in element content (not expanded)", 1);
}

static void xml_start(void *ctx, const xmlChar *local, const xmlChar *prefix, const xmlChar *uri,
		      int nns, const xmlChar **ns, int nattr, int ndefaulted, const xmlChar **at)
{
	xmlParserCtxtPtr ctxt = ctx;
	struct tptp_xml *x = ctxt->_private;
	struct xml_qrec *q;
	int depth;

	(void)uri;
	(void)nns;
	(void)ns;
	/* Elements inside entity replacement text are parsed (for their
	 * well-formedness) on a temporary context: not part of the stream. */
	if (!x || ctxt != x->ctxt)
		return;
	depth = x->depth++;
	x->start_valid = 0;
	x->text_counted = 0;
	if (depth == 0) {
		if (prefix || strcmp((const char *)local, "TRACE") != 0)
			apc_model_unmapped(x->r->model, "tptp xml root is not TRACE (read anyway)", 1);
		return;
	}
	if (depth > 1) {
		xml_nested(x, prefix, local);
		return;
	}
	x->rec_prefix = prefix;
	x->rec_local = local;
	if (x->oom)
		return;
	if (x->qn == x->qcap) {
		size_t cap = x->qcap ? x->qcap * 2 : 256;
		struct xml_qrec *nq = realloc(x->q, cap * sizeof *nq);
		if (!nq) {
			x->oom = 1;
			xmlStopParser(ctxt);
			return;
		}
		x->q = nq;
		x->qcap = cap;
	}
	x->start_q = x->qn;
	x->start_pos = xml_pos(ctxt);
	x->start_valid = 1;
	q = &x->q[x->qn++];
	memset(q, 0, sizeof *q);
	for (int i = 0; i < XS_COUNT; i++)
		q->str[i] = XS_NONE;
	q->rec.kind = prefix ? TPTP_UNKNOWN : xml_cache_get(&x->elems, local, tptp_kind_from_name);
	if (q->rec.kind == TPTP_UNKNOWN) {
		/* Only unknown elements need their (qualified) name. */
		if (prefix) {
			size_t pl = strlen((const char *)prefix), ll = strlen((const char *)local);
			char *qn = malloc(pl + ll + 2);
			if (qn) {
				memcpy(qn, prefix, pl);
				qn[pl] = ':';
				memcpy(qn + pl + 1, local, ll + 1);
				q->str[XS_ELEM] = xml_keep(x, qn, pl + ll + 1);
				free(qn);
			}
		} else {
			q->str[XS_ELEM] = xml_keep(x, local, strlen((const char *)local));
		}
		return;
	}
	/* Defaulted attributes (from a DTD) come last; the tree the old
	 * reader walked left them out, and so do we. */
	xml_read_attrs(x, q, nattr - ndefaulted, at);
	if (x->oom)
		xmlStopParser(ctxt);
}

static void xml_end(void *ctx, const xmlChar *local, const xmlChar *prefix, const xmlChar *uri)
{
	xmlParserCtxtPtr ctxt = ctx;
	struct tptp_xml *x = ctxt->_private;

	(void)local;
	(void)prefix;
	(void)uri;
	if (x && ctxt == x->ctxt && x->depth > 0) {
		x->depth--;
		x->text_counted = 0;
	}
}

/*
 * The prolog's next piece (any length: see struct xml_prolog), fed as it
 * comes; at its end, "<TRACE>" unless the first element is TRACE.  0 with
 * the parser's return code in *rc, or -1 on an I/O failure (r->err set).
 */
static int xml_feed_prolog(struct tptp_xml *x, int *rc)
{
	static const char head[] = "<TRACE>";
	const uint8_t *p;
	ssize_t n = apc_stream_peek(x->s, &p, TPTP_XML_CHUNK, &x->r->err);
	size_t k;
	char name[64];

	*rc = 0;
	if (n < 0)
		return -1;
	k = prolog_scan(&x->prolog, p, (size_t)n);
	if (k) {
		ssize_t got = apc_stream_read(x->s, x->chunk, k, &x->r->err);
		if (got < 0)
			return -1;
		x->file_fed += got;
		*rc = xmlParseChunk(x->ctxt, x->chunk, (int)got, 0);
		if (*rc != 0 || !x->ctxt->wellFormed)
			return 0;
	}
	/* The end: the first element (or what is not prolog) is next, or
	 * the file ended.  (A full view taken whole is more prolog.) */
	if (x->prolog.st != PRO_END && (size_t)n == TPTP_XML_CHUNK && k)
		return 0;
	x->prolog_done = 1;
	n = apc_stream_peek(x->s, &p, sizeof name + 1, &x->r->err);
	if (n < 0)
		return -1;
	if (first_element(p, (size_t)n, 0, name, sizeof name) == 0 && strcmp(name, "TRACE") == 0)
		return 0; /* a root of its own */
	x->wrapped = 1;
	x->inject_at = x->file_fed;
	x->injected = (int64_t)sizeof head - 1;
	*rc = xmlParseChunk(x->ctxt, head, (int)(sizeof head - 1), 0);
	return 0;
}

/* Feed the parser its next piece of input: the prolog, then a chunk of
 * the stream, then the tail, then the end.  0 = fed, 1 = nothing left,
 * -1 = I/O failure (r->err set). */
static int xml_feed(struct tptp_xml *x)
{
	static const char tail[] = "</TRACE>";
	int rc;

	if (x->terminated)
		return 1;
	if (!x->prolog_done) {
		if (xml_feed_prolog(x, &rc) < 0) {
			x->io_failed = 1;
			return -1;
		}
		goto check;
	}
	if (!x->stream_eof) {
		ssize_t got = apc_stream_read(x->s, x->chunk, TPTP_XML_CHUNK, &x->r->err);
		if (got < 0) {
			x->io_failed = 1;
			return -1;
		}
		if (got > 0) {
			x->file_fed += got;
			rc = xmlParseChunk(x->ctxt, x->chunk, (int)got, 0);
			goto check;
		}
		x->stream_eof = 1;
	}
	if (x->wrapped && !x->tail_done) {
		x->tail_done = 1;
		rc = xmlParseChunk(x->ctxt, tail, (int)(sizeof tail - 1), 0);
		goto check;
	}
	x->terminated = 1;
	rc = xmlParseChunk(x->ctxt, NULL, 0, 1);
check:
	/* Like the text reader: any error code or a lost well-formedness
	 * ends the stream (what came before it is kept). */
	if (rc != 0 || !x->ctxt->wellFormed) {
		x->parse_failed = 1;
		x->failed_at_end = x->stream_eof;
		x->terminated = 1;
	}
	return 0;
}

/* Bytes from the end of the file within which a parse error may be a
 * cut: a character cut in the middle is up to 4 bytes of UTF-8. */
#define TPTP_XML_NEAR_END 4

/*
 * Is a cut (a truncated file, a killed profiler) a plausible reason for
 * the parse error at file offset off?  Only then does the message say
 * so: an error in the middle of the file is damage there.  Plausible
 * when the parser took everything before the end without fault and
 * failed only once told the input had ended (an element, comment or
 * the root left open: libxml2 waits for more of them until then), when
 * libxml2 says so itself (a construct not finished), or when the error
 * is at the very end of the file.
 */
static int xml_cut_plausible(struct tptp_xml *x, int64_t off)
{
	const uint8_t *p;
	struct apc_err err;

	if (x->failed_at_end)
		return 1;
	switch (x->xml_code) {
	case XML_ERR_TAG_NOT_FINISHED:
	case XML_ERR_COMMENT_NOT_FINISHED:
	case XML_ERR_PI_NOT_FINISHED:
	case XML_ERR_CDATA_NOT_FINISHED:
	case XML_ERR_DOCTYPE_NOT_FINISHED:
		return 1;
	default:
		break;
	}
	if (x->file_fed - off > TPTP_XML_NEAR_END)
		return 0;
	/* At the end of what was fed: is that the end of the file? */
	apc_err_clear(&err);
	return x->stream_eof || apc_stream_peek(x->s, &p, 1, &err) == 0;
}

/* Count a record's attribute values that do not parse (bits 1 << XA_*). */
static void xml_count_bad(struct tptp_xml *x, unsigned bad)
{
	static const char *const what[] = {
		[XA_TIME] = "tptp times that do not parse",
		[XA_THREAD] = "tptp thread ids that do not parse (ignored)",
		[XA_METHOD] = "tptp method ids that do not parse (ignored)",
		[XA_CLASS] = "tptp class ids that do not parse (ignored)",
		[XA_OBJECT] = "tptp object ids that do not parse (ignored)",
		[XA_TICKET] = "tptp tickets that do not parse (ignored)",
		[XA_DEPTH] = "tptp stack depths that do not parse (ignored)",
		[XA_SIZE] = "tptp sizes that do not parse (ignored)",
		[XA_PID] = "tptp pids that do not parse (ignored)",
		[XA_TIMEOUT] = "tptp timeouts that do not parse (ignored)",
		[XA_OWNER] = "tptp owner thread ids that do not parse (ignored)",
	};

	for (unsigned a = 0; a < sizeof what / sizeof what[0]; a++)
		if ((bad & (1u << a)) && what[a])
			apc_model_unmapped(x->r->model, what[a], 1);
}

/*
 * Read the next top-level element into rec.  1 = got one, 0 = end of
 * input, <0 = damage or I/O failure (r->err set).
 */
static int next_record(struct tptp_xml *x, struct tptp_rec *rec)
{
	while (x->qhead == x->qn) {
		x->qhead = x->qn = 0;
		x->alen = 0;
		if (x->oom)
			return apc_err_set(&x->r->err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
		if (x->parse_failed) {
			long consumed = xmlByteConsumed(x->ctxt);
			/* Some errors halt the parser, which drops its buffer and
			 * with it the position: then the one taken at the error. */
			if (consumed < x->fatal_pos)
				consumed = x->fatal_pos;
			/* What the parser consumed includes the "<TRACE>" put
			 * in at inject_at, which is not in the file: a position
			 * in it is inject_at.  A position in the "</TRACE>"
			 * after a bare stream is the file's end (the parser may
			 * fail before it or in it: which, only the position
			 * tells). */
			int64_t off = (int64_t)consumed;
			if (x->injected && off > x->inject_at) {
				off -= x->injected;
				if (off < x->inject_at)
					off = x->inject_at;
			}
			if (off < 0)
				off = 0;
			if (off > x->file_fed)
				off = x->file_fed;
			x->parse_failed = 0;
			x->r->damaged = 1;
			/* bytes in: up to the damage, not what was read ahead */
			x->r->bytes_in = (uint64_t)off;
			if (xml_cut_plausible(x, off))
				return apc_err_set(&x->r->err, APC_EDATA, apc_stream_name(x->s), off,
						   "xml breaks off at line %d: %s (truncated trace?); "
						   "kept everything before it",
						   x->xml_line, x->xml_msg[0] ? x->xml_msg : "parse error");
			return apc_err_set(&x->r->err, APC_EDATA, apc_stream_name(x->s), off,
					   "line %d: not well-formed XML: %s; kept everything before it",
					   x->xml_line, x->xml_msg[0] ? x->xml_msg : "parse error");
		}
		switch (xml_feed(x)) {
		case 1:
			/* A bare stream has no </TRACE> to tell its end: its
			 * traceEnd (or agentDestroy) does, as in a binary
			 * file, so one that had a traceStart and stops
			 * without either was cut short, if at an element's
			 * end. */
			if (!x->trace_open)
				return 0;
			x->r->damaged = 1;
			return apc_err_set(&x->r->err, APC_EDATA, apc_stream_name(x->s), x->file_fed,
					   "the trace ends without its traceEnd (cut short?); kept everything before it");
		case -1:
			return x->r->err.status < 0 ? x->r->err.status : APC_EIO;
		default:
			break;
		}
	}
	{
		struct xml_qrec *q = &x->q[x->qhead++];
		const char *strs[XS_COUNT];

		for (int i = 0; i < XS_COUNT; i++)
			strs[i] = q->str[i] == XS_NONE ? NULL : x->arena + q->str[i];
		*rec = q->rec;
		if (x->wrapped && rec->kind == TPTP_TRACE_START)
			x->trace_open = 1;
		else if (rec->kind == TPTP_TRACE_END || rec->kind == TPTP_AGENT_DESTROY)
			x->trace_open = 0;
		rec->elem = rec->kind == TPTP_UNKNOWN ? strs[XS_ELEM] : tptp_kind_name(rec->kind);
		rec->name = strs[XS_NAME];
		rec->signature = strs[XS_SIGNATURE];
		rec->hostname = strs[XS_HOSTNAME];
		rec->key = strs[XS_KEY];
		rec->value = strs[XS_VALUE];
		rec->group = strs[XS_GROUP];
		x->r->model->records_read++;
		if (q->bad)
			xml_count_bad(x, q->bad);
		if (q->time_trail)
			apc_model_unmapped(x->r->model,
					   "tptp times with characters after the number (read up to them)", 1);
		return 1;
	}
}

/* ---- the reader --------------------------------------------------------------- */

/* The record source of tptp_map_header() and tptp_map_next(). */
static int xml_pull(void *ctx, struct tptp_rec *rec)
{
	return next_record(ctx, rec);
}

static int tptp_xml_open(struct apc_reader *r)
{
	struct tptp_xml *x;

	if (r->ninputs < 1 || apc_input_is_tree(r->inputs[0]))
		return apc_err_set(&r->err, APC_EIO, apc_input_path(r->inputs[0]), APC_NO_OFFSET,
				   "tptp xml reads a single file, not a directory or archive");
	x = calloc(1, sizeof *x);
	if (!x)
		return apc_err_set(&r->err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
	r->priv = x;
	x->r = r;
	x->s = apc_input_stream(r->inputs[0]);
	{
		const uint8_t *p;
		ssize_t n = apc_stream_peek(x->s, &p, 4, &r->err);
		int order = n > 0 ? xml_utf16(p, (size_t)n) : 0;
		if (n < 0)
			return r->err.status;
		if (order)
			return apc_err_set(&r->err, APC_EDATA, apc_stream_name(x->s), 0,
					   "UTF-16 (%s-endian) XML, which is not read here: convert it to "
					   "UTF-8 first (iconv -f UTF-16%s -t UTF-8; an encoding its "
					   "<?xml?> line names must then say UTF-8)",
					   order == 1 ? "little" : "big", order == 1 ? "LE" : "BE");
	}
	x->map = tptp_map_new(r->model, r->opts.window_ns);
	x->chunk = malloc(TPTP_XML_CHUNK);
	if (!x->map || !x->chunk)
		return apc_err_set(&r->err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
	apc_strset(&r->model->meta.source_format, "tptp-xml");

	/* The SAX2 defaults keep entity declarations (so references in
	 * attribute values resolve, with libxml2's amplification limits);
	 * everything that would build a tree is switched off. */
	xmlSAXVersion(&x->sax, 2);
	x->sax.startElementNs = xml_start;
	x->sax.endElementNs = xml_end;
	x->sax.startElement = NULL;
	x->sax.endElement = NULL;
	/* Text, CDATA and entity references are not records: counted
	 * (xml_text, xml_reference), never kept. */
	x->sax.characters = xml_text;
	x->sax.ignorableWhitespace = xml_text;
	x->sax.cdataBlock = xml_text;
	x->sax.comment = NULL;
	x->sax.processingInstruction = NULL;
	x->sax.reference = xml_reference;
	x->sax.serror = xml_error;
	x->ctxt = xmlCreatePushParserCtxt(&x->sax, NULL, NULL, 0, apc_stream_name(x->s));
	if (!x->ctxt)
		return apc_err_set(&r->err, APC_ENOMEM, NULL, APC_NO_OFFSET,
				   "cannot start the xml parser");
	x->ctxt->_private = x;
	xmlCtxtUseOptions(x->ctxt, XML_PARSE_NONET | XML_PARSE_NOWARNING | XML_PARSE_NOERROR |
					   XML_PARSE_COMPACT);

	/* The header: node, process, agent, traceStart, options. */
	return tptp_map_header(x->map, xml_pull, x, &x->finished, &x->have_pending, &r->err);
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
	if (x->ctxt) {
		if (x->ctxt->myDoc)
			xmlFreeDoc(x->ctxt->myDoc);
		xmlFreeParserCtxt(x->ctxt);
	}
	tptp_map_free(x->map);
	free(x->chunk);
	free(x->q);
	free(x->arena);
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
	.report = tptp_map_report,
	.close = tptp_xml_close,
	.read_ahead = 1,
};
