/*
 * ltt_eventdefs.c - the LTT eventdefs type language and the per-CPU
 * tracefile walker (see ltt.h for the layers).
 *
 * Real eventdefs files are not XML: attributes are unquoted (size=4),
 * some are bare (per_tracefile), the spec's own examples close
 * <typeref ...> with </event>.  So they go through a small tolerant
 * parser here rather than libxml2.  Each event type is compiled once:
 * typerefs and size keywords resolved, and a fixed payload length
 * precomputed where there is one, so the hot walk over millions of
 * events is a table lookup for most of them.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "ltt.h"

#define XML_MAX_DEPTH 64
#define TYPE_MAX_DEPTH 32
/* The walker's first buffer at most (see apc_ltt_cpu_init). */
#define LTT_BUF_FIRST (64u << 10)

/* ---- tolerant XML-ish parser ------------------------------------------ */

/* Elements that never have children, whether or not written with "/>". */
static int xml_is_void(const char *name)
{
	static const char *const v[] = {"int", "uint", "float", "string", "typeref", "label",
					"pointer", "long", "ulong", "size_t", "ssize_t", "off_t",
					"char", "uchar", "short", "ushort", NULL};
	/* First letters before strcmp: this runs for every element, and a
	 * strcmp per entry was a visible share of a fuzzed open. */
	for (size_t i = 0; v[i]; i++)
		if (v[i][0] == name[0] && strcmp(v[i], name) == 0)
			return 1;
	return 0;
}

/*
 * Copy s[0..n) to o with the five predefined entities decoded (at most
 * n bytes, then a NUL); returns the length.  Runs without '&' go by
 * memchr and memcpy: eventdefs text is mostly plain, and a byte-wise
 * loop was most of a fuzzed open.
 */
static size_t xml_decode_into(char *o, const char *s, size_t n)
{
	static const struct { const char *ent; size_t len; char c; } ents[] = {
		{"&lt;", 4, '<'}, {"&gt;", 4, '>'}, {"&amp;", 5, '&'}, {"&quot;", 6, '"'},
		{"&apos;", 6, '\''}};
	size_t i = 0, w = 0;

	while (i < n) {
		const char *amp = memchr(s + i, '&', n - i);
		size_t run = amp ? (size_t)(amp - (s + i)) : n - i;
		memcpy(o + w, s + i, run);
		w += run;
		i += run;
		if (i == n)
			break;
		size_t k;
		for (k = 0; k < 5; k++)
			if (n - i >= ents[k].len && memcmp(s + i, ents[k].ent, ents[k].len) == 0)
				break;
		o[w++] = k < 5 ? ents[k].c : '&';
		i += k < 5 ? ents[k].len : 1;
	}
	o[w] = 0;
	return w;
}

/*
 * The tree's memory: chunks from which nodes, arrays and strings are cut
 * in order, all freed with the root.  A document of a few thousand
 * elements costs a handful of mallocs instead of several per element
 * (under the fuzzer's sanitizers each malloc was most of an element's
 * cost).  Growing an array or a text copies it to a new piece; the old
 * one stays until the end, so a tree holds at most about twice what it
 * uses.
 *
 * Under AddressSanitizer the arena keeps what malloc gave: a chunk is
 * poisoned when made, each piece is unpoisoned to its exact size with a
 * poisoned gap after it, and a piece left behind by a copy is poisoned
 * again, so reading or writing past a piece, or through a stale
 * pointer, is still reported.
 */
#if defined(__has_include)
#if __has_include(<sanitizer/asan_interface.h>)
#include <sanitizer/asan_interface.h>
#endif
#endif
#ifndef ASAN_POISON_MEMORY_REGION
#define ASAN_POISON_MEMORY_REGION(a, n) ((void)(a), (void)(n))
#define ASAN_UNPOISON_MEMORY_REGION(a, n) ((void)(a), (void)(n))
#endif
#if defined(__SANITIZE_ADDRESS__)
#define XML_GAP 16
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define XML_GAP 16
#endif
#endif
#ifndef XML_GAP
#define XML_GAP 0
#endif

struct xml_chunk {
	struct xml_chunk *next;
	size_t used, size;
	max_align_t data[];
};

struct xml_arena {
	struct xml_chunk *head;
	size_t next_size; /* bytes of the next chunk: doubles to 256 KiB */
};

static void *xml_alloc(struct xml_arena *a, size_t n)
{
	struct xml_chunk *c = a->head;
	size_t need = (n + XML_GAP + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);

	if (need < n)
		return NULL;
	if (!c || c->size - c->used < need) {
		size_t size = a->next_size ? a->next_size : 4096;
		if (a->next_size < 256 * 1024)
			a->next_size = size * 2;
		if (size < need)
			size = need;
		if (size > SIZE_MAX - sizeof *c || !(c = malloc(sizeof *c + size)))
			return NULL;
		c->used = 0;
		c->size = size;
		c->next = a->head;
		a->head = c;
		ASAN_POISON_MEMORY_REGION(c->data, size);
	}
	void *p = (char *)c->data + c->used;
	c->used += need;
	ASAN_UNPOISON_MEMORY_REGION(p, n);
	return p;
}

static void xml_arena_free(struct xml_arena *a)
{
	for (struct xml_chunk *c = a->head, *next; c; c = next) {
		next = c->next;
		ASAN_UNPOISON_MEMORY_REGION(c->data, c->size);
		free(c);
	}
	a->head = NULL;
}

static char *xml_dup_decoded(struct xml_arena *a, const char *s, size_t n)
{
	char *d = n < SIZE_MAX ? xml_alloc(a, n + 1) : NULL;

	if (d)
		xml_decode_into(d, s, n);
	return d;
}

static struct apc_ltt_xnode *xml_new(struct xml_arena *a, const char *name, size_t n, int64_t off)
{
	struct apc_ltt_xnode *x = xml_alloc(a, sizeof *x);

	if (!x || !(x->name = n < SIZE_MAX ? xml_alloc(a, n + 1) : NULL))
		return NULL;
	x->attrs = NULL;
	x->nattrs = 0;
	x->kids = NULL;
	x->nkids = 0;
	x->text = NULL;
	x->arena = NULL;
	x->cut = APC_LTT_CUT_NONE;
	x->cut_msg = NULL;
	x->cut_off = 0;
	for (size_t i = 0; i < n; i++)
		x->name[i] = (char)tolower((unsigned char)name[i]);
	x->name[n] = 0;
	x->offset = off;
	return x;
}

/*
 * Arrays of kids and attributes grow by doubling, the capacity implied
 * by the count (a power of two at least n): a facility of n events is
 * log n copies, not n, each of all before it.
 */
static int xml_full(size_t n)
{
	return (n & (n - 1)) == 0; /* 0, 1, 2, 4, ...: no room for one more */
}

/* A copy of the n-element array p with room for twice as many (1 if 0). */
static void *xml_grow(struct xml_arena *a, const void *p, size_t n, size_t elem)
{
	size_t cap = n ? 2 * n : 1;
	void *q = cap > SIZE_MAX / elem ? NULL : xml_alloc(a, cap * elem);

	if (q && n) {
		memcpy(q, p, n * elem);
		ASAN_POISON_MEMORY_REGION(p, n * elem); /* left behind */
	}
	return q;
}

static int xml_add_kid(struct xml_arena *a, struct apc_ltt_xnode *p, struct apc_ltt_xnode *k)
{
	if (xml_full(p->nkids)) {
		struct apc_ltt_xnode **nk = xml_grow(a, p->kids, p->nkids, sizeof *nk);
		if (!nk)
			return -1;
		p->kids = nk;
	}
	p->kids[p->nkids++] = k;
	return 0;
}

/* Append a chunk of character data, decoded, after a space when the
 * node has text already (decoding never lengthens). */
static int xml_add_text(struct xml_arena *a, struct apc_ltt_xnode *p, const char *s, size_t n)
{
	size_t old, k = 0;
	char *t;

	/* Blank space before a node's first text would be trimmed anyway:
	 * skipping it saves a copy for every indented child element. */
	if (!p->text) {
		while (k < n && isspace((unsigned char)s[k]))
			k++;
		if (k == n)
			return 0;
	}
	old = p->text ? strlen(p->text) : 0;
	t = n < SIZE_MAX - 2 - old ? xml_alloc(a, old + n + 2) : NULL;
	if (!t)
		return -1;
	if (old) {
		memcpy(t, p->text, old);
		ASAN_POISON_MEMORY_REGION(p->text, old + 1); /* left behind */
		t[old++] = ' ';
	}
	xml_decode_into(t + old, s, n);
	p->text = t;
	return 0;
}

static void xml_trim(struct apc_ltt_xnode *x)
{
	if (x->text) {
		char *s = x->text, *e;
		while (*s && isspace((unsigned char)*s))
			s++;
		memmove(x->text, s, strlen(s) + 1);
		e = x->text + strlen(x->text);
		while (e > x->text && isspace((unsigned char)e[-1]))
			*--e = 0;
	}
	for (size_t i = 0; i < x->nkids; i++)
		xml_trim(x->kids[i]);
}

/*
 * A name byte: ASCII letters and digits, '_', '-', ':' and '.' (c is an
 * unsigned char).  A bitmap, not a chain of compares: names are most of
 * the bytes of an eventdefs file, and under the fuzzer every compare is
 * a coverage call.
 */
static int xml_isname(int c)
{
	static const uint64_t name_bits[4] = {
		UINT64_C(0x07ff600000000000),  /* '-' '.' '0'-'9' ':' */
		UINT64_C(0x07fffffe87fffffe),  /* 'A'-'Z' '_' 'a'-'z' */
		0, 0};

	return (int)(name_bits[(c >> 6) & 3] >> (c & 63) & 1);
}

/*
 * Parse the attributes of a start tag from *pp; stops at '>' or "/>".
 * *end: 1 after '>', 2 after "/>", 0 when the buffer ends first (the
 * tag is cut short); *attr_cut: the buffer ends inside the last
 * attribute added: 1 in its value (before the closing quote, or the
 * space or '>' that would end it), 2 in or after its name (no '=').
 */
static int xml_attrs(struct xml_arena *ar, struct apc_ltt_xnode *x, const char *b, size_t len, size_t *pp,
		     int *end, int *attr_cut)
{
	size_t i = *pp;

	*end = 0;
	*attr_cut = 0;
	for (;;) {
		while (i < len && isspace((unsigned char)b[i]))
			i++;
		if (i >= len)
			break;
		if (b[i] == '>') {
			*end = 1;
			i++;
			break;
		}
		if (b[i] == '/' && i + 1 < len && b[i + 1] == '>') {
			*end = 2;
			i += 2;
			break;
		}
		if (!xml_isname((unsigned char)b[i])) {
			i++; /* stray character: skip it, stay tolerant */
			continue;
		}
		size_t ns = i;
		while (i < len && xml_isname((unsigned char)b[i]))
			i++;
		size_t ne = i, vs = i, ve = i;
		while (i < len && isspace((unsigned char)b[i]))
			i++;
		if (i < len && b[i] == '=') {
			i++;
			while (i < len && isspace((unsigned char)b[i]))
				i++;
			if (i < len && (b[i] == '"' || b[i] == '\'')) {
				char q = b[i++];
				const char *e = memchr(b + i, q, len - i);
				vs = i;
				i = e ? (size_t)(e - b) : len;
				ve = i;
				if (i < len)
					i++;
				*attr_cut = !e;
			} else {
				vs = i;
				while (i < len && !isspace((unsigned char)b[i]) && b[i] != '>' &&
				       !(b[i] == '/' && i + 1 < len && b[i + 1] == '>'))
					i++;
				ve = i;
				*attr_cut = i >= len;
			}
		} else {
			*attr_cut = i >= len ? 2 : 0; /* a bare name, or "name=" to come */
		}
		if (xml_full(x->nattrs)) {
			struct apc_ltt_xattr *na = xml_grow(ar, x->attrs, x->nattrs, sizeof *na);
			if (!na)
				return -1;
			x->attrs = na;
		}
		struct apc_ltt_xattr *a = &x->attrs[x->nattrs];
		a->name = xml_dup_decoded(ar, b + ns, ne - ns);
		a->value = xml_dup_decoded(ar, b + vs, ve - vs);
		if (!a->name || !a->value)
			return -1;
		for (char *c = a->name; *c; c++)
			*c = (char)tolower((unsigned char)*c);
		x->nattrs++;
	}
	*pp = i;
	return 0;
}

static const char *xml_find(const char *b, size_t len, size_t from, const char *pat)
{
	return from <= len ? memmem(b + from, len - from, pat, strlen(pat)) : NULL;
}

/* Append s[0..n) to buf (of size cap, holding *w bytes) as printable
 * text: at most max bytes of it, "..." after when there is more. */
static void cut_put(char *buf, size_t cap, size_t *w, const char *s, size_t n, size_t max)
{
	for (size_t k = 0; k < n && k < max && *w + 1 < cap; k++) {
		unsigned char c = (unsigned char)s[k];
		buf[(*w)++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	if (n > max)
		for (int k = 0; k < 3 && *w + 1 < cap; k++)
			buf[(*w)++] = '.';
	buf[*w] = 0;
}

static void cut_str(char *buf, size_t cap, size_t *w, const char *s)
{
	cut_put(buf, cap, w, s, strlen(s), cap);
}

/* "<event name="x">", or "<struct>" for an element without a name. */
static void cut_elem(char *buf, size_t cap, size_t *w, const struct apc_ltt_xnode *x)
{
	const char *nm = apc_ltt_xml_attr(x, "name");

	cut_str(buf, cap, w, "<");
	cut_str(buf, cap, w, x->name);
	if (nm) {
		cut_str(buf, cap, w, " name=\"");
		cut_put(buf, cap, w, nm, strlen(nm), 40);
		cut_str(buf, cap, w, "\"");
	}
	cut_str(buf, cap, w, ">");
}

/*
 * The message for a document the buffer ends inside of: what is cut
 * (a tag, a comment, or the content of the open elements), the nearest
 * named element around it, the event or type around that, and the
 * outermost element left open.  tag: the element whose start tag is
 * cut (NULL if none); attr_cut: inside its last attribute; what: the
 * construct cut when it is not an element's (comment, end tag, ...).
 */
static void cut_describe(char *buf, size_t cap, struct apc_ltt_xnode *const *stack, size_t depth,
			 const struct apc_ltt_xnode *tag, int attr_cut, const char *what,
			 const char *raw, size_t rawlen)
{
	const struct apc_ltt_xnode *inner = NULL, *named = NULL, *evt = NULL, *outer;
	size_t w = 0;

	buf[0] = 0;
	cut_str(buf, cap, &w, "cut short inside ");
	if (tag) {
		cut_str(buf, cap, &w, "the start tag of <");
		cut_str(buf, cap, &w, tag->name);
		cut_str(buf, cap, &w, ">");
		if (attr_cut == 1 && tag->nattrs) {
			const struct apc_ltt_xattr *at = &tag->attrs[tag->nattrs - 1];
			cut_str(buf, cap, &w, ", in its attribute ");
			cut_put(buf, cap, &w, at->name, strlen(at->name), 40);
			cut_str(buf, cap, &w, "=\"");
			cut_put(buf, cap, &w, at->value, strlen(at->value), 40);
			cut_str(buf, cap, &w, "\"");
		} else if (attr_cut == 2 && tag->nattrs) {
			const struct apc_ltt_xattr *at = &tag->attrs[tag->nattrs - 1];
			cut_str(buf, cap, &w, ", in an attribute name (\"");
			cut_put(buf, cap, &w, at->name, strlen(at->name), 40);
			cut_str(buf, cap, &w, "\")");
		}
	} else if (what) {
		cut_str(buf, cap, &w, what);
		if (raw) {
			cut_str(buf, cap, &w, " \"");
			cut_put(buf, cap, &w, raw, rawlen, 40);
			cut_str(buf, cap, &w, "\"");
		}
	} else if (depth) {
		inner = stack[depth];
		cut_elem(buf, cap, &w, inner);
	} else {
		cut_str(buf, cap, &w, "the document");
	}
	/* The outermost open element is said last: not as context. */
	for (size_t d = depth; d > 1; d--) {
		const struct apc_ltt_xnode *x = stack[d];
		if (x == inner)
			continue;
		if (!named && apc_ltt_xml_attr(x, "name"))
			named = x;
		if (!evt && (strcmp(x->name, "event") == 0 || strcmp(x->name, "type") == 0))
			evt = x;
	}
	if (inner && apc_ltt_xml_attr(inner, "name"))
		named = inner; /* already said */
	if (named && named != inner) {
		cut_str(buf, cap, &w, tag ? ", in " : " in ");
		cut_elem(buf, cap, &w, named);
	}
	if (evt && evt != named && evt != inner) {
		cut_str(buf, cap, &w, " of ");
		cut_elem(buf, cap, &w, evt);
	}
	outer = depth ? stack[1] : tag && !xml_is_void(tag->name) ? tag : NULL;
	if (outer) {
		cut_str(buf, cap, &w, " (the file ends before </");
		cut_str(buf, cap, &w, outer->name);
		cut_str(buf, cap, &w, ">)");
	}
}

int apc_ltt_xml_parse(const char *b, size_t len, const char *file, struct apc_ltt_xnode **root,
		      struct apc_err *err)
{
	struct apc_ltt_xnode *stack[XML_MAX_DEPTH + 1];
	size_t depth = 0, i = 0;
	struct xml_arena ar = {0};
	struct apc_ltt_xnode *doc = xml_new(&ar, "#doc", 4, 0);
	/* What the buffer ends inside of, when it ends too soon. */
	struct apc_ltt_xnode *cut_tag = NULL;
	int attr_cut = 0;
	const char *cut_what = NULL;
	size_t cut_raw = 0;

	*root = NULL;
	if (!doc) {
		xml_arena_free(&ar);
		return apc_err_set(err, APC_ENOMEM, file, APC_NO_OFFSET, "out of memory");
	}
	stack[0] = doc;
	while (i < len) {
		if (b[i] != '<') {
			/* memchr, not a byte loop: character data is most of a file */
			const char *lt = memchr(b + i, '<', len - i);
			size_t s = i;
			i = lt ? (size_t)(lt - b) : len;
			if (xml_add_text(&ar, stack[depth], b + s, i - s))
				goto nomem;
			continue;
		}
		size_t start = i;
		if (len - i >= 4 && memcmp(b + i, "<!--", 4) == 0) {
			const char *e = xml_find(b, len, i + 4, "-->");
			i = e ? (size_t)(e - b) + 3 : len;
			if (!e) {
				cut_what = "a comment";
				cut_raw = start;
			}
			continue;
		}
		if (i + 1 < len && (b[i + 1] == '?' || b[i + 1] == '!')) {
			const char *e = memchr(b + i, '>', len - i);
			i = e ? (size_t)(e - b) + 1 : len;
			if (!e) {
				cut_what = b[start + 1] == '?' ? "a processing instruction" : "a declaration";
				cut_raw = start;
			}
			continue;
		}
		if (i + 1 < len && b[i + 1] == '/') {
			size_t ns = i + 2, ne = ns;
			while (ne < len && xml_isname((unsigned char)b[ne]))
				ne++;
			const char *e = memchr(b + ne, '>', len - ne);
			i = e ? (size_t)(e - b) + 1 : len;
			if (!e) {
				/* The name may be cut too: close nothing. */
				cut_what = "the end tag";
				cut_raw = start;
				continue;
			}
			/* Close the nearest open element of that name; a close
			 * tag with no open element is a typo of the writer. */
			for (size_t d = depth; d > 0; d--) {
				if (strlen(stack[d]->name) == ne - ns &&
				    strncasecmp(stack[d]->name, b + ns, ne - ns) == 0) {
					depth = d - 1;
					break;
				}
			}
			continue;
		}
		size_t ns = i + 1, ne = ns;
		while (ne < len && xml_isname((unsigned char)b[ne]))
			ne++;
		if (ne == ns) { /* a lone '<' is text */
			if (ns >= len) {
				/* ... but one that ends the buffer starts a tag */
				cut_what = "a tag";
				cut_raw = start;
				i = len;
				continue;
			}
			if (xml_add_text(&ar, stack[depth], b + i, 1))
				goto nomem;
			i++;
			continue;
		}
		struct apc_ltt_xnode *x = xml_new(&ar, b + ns, ne - ns, (int64_t)start);
		int end, acut;
		if (!x)
			goto nomem;
		i = ne;
		if (xml_attrs(&ar, x, b, len, &i, &end, &acut) || xml_add_kid(&ar, stack[depth], x))
			goto nomem;
		if (!end) {
			/* The buffer ends inside this start tag: its
			 * attributes may be cut, and it has no content. */
			x->cut = APC_LTT_CUT_TAG;
			cut_tag = x;
			attr_cut = acut;
			continue;
		}
		if (end == 1 && !xml_is_void(x->name)) {
			if (depth == XML_MAX_DEPTH) {
				xml_arena_free(&ar);
				return apc_err_set(err, APC_EDATA, file, (int64_t)start,
						   "elements nested deeper than %d", XML_MAX_DEPTH);
			}
			stack[++depth] = x;
		}
	}
	if (cut_tag || cut_what || depth) {
		/* Every element left open is cut short: its end, and maybe
		 * some of its content, is not in the buffer. */
		char msg[APC_ERR_MSG - 32];
		cut_describe(msg, sizeof msg, stack, depth, cut_tag, attr_cut, cut_what,
			     cut_what ? b + cut_raw : NULL, cut_what ? len - cut_raw : 0);
		for (size_t d = 1; d <= depth; d++)
			stack[d]->cut = APC_LTT_CUT_OPEN;
		if (!(doc->cut_msg = xml_alloc(&ar, strlen(msg) + 1)))
			goto nomem;
		memcpy(doc->cut_msg, msg, strlen(msg) + 1);
		doc->cut = APC_LTT_CUT_OPEN;
		doc->cut_off = (int64_t)len;
	}
	xml_trim(doc);
	doc->arena = ar.head;
	*root = doc;
	return APC_OK;
nomem:
	xml_arena_free(&ar);
	return apc_err_set(err, APC_ENOMEM, file, APC_NO_OFFSET, "out of memory");
}

/* The arena a root owns, to allocate more in (put it back after). */
static struct xml_arena xml_root_arena(const struct apc_ltt_xnode *x)
{
	struct xml_arena a = {x->arena, 0};

	a.next_size = a.head ? 2 * a.head->size : 0;
	if (a.next_size > 256 * 1024)
		a.next_size = 256 * 1024;
	return a;
}

struct apc_ltt_xnode *apc_ltt_xml_element(const char *name)
{
	struct xml_arena a = {0};
	struct apc_ltt_xnode *x = xml_new(&a, name, strlen(name), 0);

	if (!x) {
		xml_arena_free(&a);
		return NULL;
	}
	x->arena = a.head;
	return x;
}

int apc_ltt_xml_add_attr(struct apc_ltt_xnode *x, const char *name, const char *value)
{
	struct xml_arena a = xml_root_arena(x);
	struct apc_ltt_xattr *na = x->attrs;
	size_t nl = strlen(name), vl = strlen(value);
	int rc = -1;

	if (xml_full(x->nattrs))
		na = xml_grow(&a, x->attrs, x->nattrs, sizeof *na);
	if (na) {
		x->attrs = na;
		na[x->nattrs].name = xml_alloc(&a, nl + 1);
		na[x->nattrs].value = xml_alloc(&a, vl + 1);
		if (na[x->nattrs].name && na[x->nattrs].value) {
			memcpy(na[x->nattrs].name, name, nl + 1);
			memcpy(na[x->nattrs].value, value, vl + 1);
			x->nattrs++;
			rc = 0;
		}
	}
	x->arena = a.head;
	return rc;
}

struct apc_ltt_xnode *apc_ltt_xml_detach(struct apc_ltt_xnode *doc, size_t i)
{
	struct apc_ltt_xnode *k = doc->kids[i];

	k->arena = doc->arena;
	doc->arena = NULL;
	doc->kids[i] = doc->kids[--doc->nkids];
	return k;
}

void apc_ltt_xml_free(struct apc_ltt_xnode *n)
{
	struct xml_arena a = {0};

	/* Only a root owns memory; the root itself is in it. */
	if (!n || !n->arena)
		return;
	a.head = n->arena;
	xml_arena_free(&a);
}

const char *apc_ltt_xml_attr(const struct apc_ltt_xnode *n, const char *name)
{
	for (size_t i = 0; n && i < n->nattrs; i++)
		if (strcasecmp(n->attrs[i].name, name) == 0)
			return n->attrs[i].value;
	return NULL;
}

const struct apc_ltt_xnode *apc_ltt_xml_child(const struct apc_ltt_xnode *n, const char *name)
{
	for (size_t i = 0; n && i < n->nkids; i++)
		if (strcmp(n->kids[i]->name, name) == 0)
			return n->kids[i];
	return NULL;
}

/* ---- types from the tree ---------------------------------------------- */

static void type_free(struct apc_ltt_type *t)
{
	if (!t)
		return;
	free(t->size_kw);
	free(t->ref);
	type_free(t->elem);
	for (size_t i = 0; i < t->nfields; i++) {
		free(t->fields[i].name);
		free(t->fields[i].description);
		type_free(t->fields[i].type);
	}
	free(t->fields);
	for (size_t i = 0; i < t->nlabels; i++)
		free(t->labels[i].name);
	free(t->labels);
	free(t);
}

static char *sdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

static int is_type_elem(const char *n)
{
	static const char *const v[] = {"int", "uint", "float", "string", "enum", "array",
					"sequence", "struct", "union", "typeref", "pointer", "long",
					"ulong", "size_t", "ssize_t", "off_t", "char", "uchar",
					"short", "ushort", NULL};
	for (size_t i = 0; v[i]; i++)
		if (v[i][0] == n[0] && strcmp(v[i], n) == 0)
			return 1;
	return 0;
}

/* The type element inside a field/event/type/array/sequence node. */
static const struct apc_ltt_xnode *type_child(const struct apc_ltt_xnode *n)
{
	for (size_t i = 0; i < n->nkids; i++)
		if (is_type_elem(n->kids[i]->name))
			return n->kids[i];
	return NULL;
}

static struct apc_ltt_type *type_parse(const struct apc_ltt_xnode *x, const char *file,
				       struct apc_err *err);

static int fields_parse(struct apc_ltt_type *t, const struct apc_ltt_xnode *x, const char *file,
			struct apc_err *err)
{
	for (size_t i = 0; i < x->nkids; i++) {
		const struct apc_ltt_xnode *f = x->kids[i], *tc;
		if (strcmp(f->name, "field") != 0)
			continue;
		struct apc_ltt_field *nf = realloc(t->fields, (t->nfields + 1) * sizeof *nf);
		if (!nf)
			return apc_err_set(err, APC_ENOMEM, file, APC_NO_OFFSET, "out of memory");
		t->fields = nf;
		struct apc_ltt_field *fd = &t->fields[t->nfields];
		memset(fd, 0, sizeof *fd);
		t->nfields++;
		const struct apc_ltt_xnode *d = apc_ltt_xml_child(f, "description");
		fd->name = sdup(apc_ltt_xml_attr(f, "name") ? apc_ltt_xml_attr(f, "name") : "");
		fd->description = sdup(d && d->text ? d->text : "");
		tc = type_child(f);
		if (!tc)
			return apc_err_set(err, APC_EDATA, file, f->offset, "field '%s' has no type",
					   fd->name ? fd->name : "");
		fd->type = type_parse(tc, file, err);
		if (!fd->type)
			return err->status;
	}
	return APC_OK;
}

static int labels_parse(struct apc_ltt_type *t, const struct apc_ltt_xnode *x)
{
	int64_t next = 0;

	for (size_t i = 0; i < x->nkids; i++) {
		const struct apc_ltt_xnode *l = x->kids[i];
		const char *nm = apc_ltt_xml_attr(l, "name"), *v = apc_ltt_xml_attr(l, "value");
		if (strcmp(l->name, "label") != 0)
			continue;
		struct apc_ltt_label *nl = realloc(t->labels, (t->nlabels + 1) * sizeof *nl);
		if (!nl)
			return -1;
		t->labels = nl;
		if (v && *v)
			next = strtoll(v, NULL, 0);
		t->labels[t->nlabels].name = sdup(nm ? nm : "");
		t->labels[t->nlabels].value = next;
		/* The next label follows on, wrapping past INT64_MAX (a
		 * value of 2^63 or more reads as INT64_MAX by strtoll). */
		next = (int64_t)((uint64_t)next + 1);
		t->nlabels++;
	}
	/* The spec's older form: labels as words in the element text. */
	if (!t->nlabels && x->text) {
		const char *p = x->text;
		while (*p) {
			while (*p && isspace((unsigned char)*p))
				p++;
			const char *s = p;
			while (*p && !isspace((unsigned char)*p))
				p++;
			if (p == s)
				break;
			struct apc_ltt_label *nl = realloc(t->labels, (t->nlabels + 1) * sizeof *nl);
			if (!nl)
				return -1;
			t->labels = nl;
			t->labels[t->nlabels].name = strndup(s, (size_t)(p - s));
			t->labels[t->nlabels].value = next;
			next = (int64_t)((uint64_t)next + 1);
			t->nlabels++;
		}
	}
	return 0;
}

static struct apc_ltt_type *type_parse(const struct apc_ltt_xnode *x, const char *file,
				       struct apc_err *err)
{
	static const struct { const char *elem; enum apc_ltt_kind kind; const char *size; } alias[] = {
		{"pointer", APC_LTT_UINT, "pointer"}, {"long", APC_LTT_INT, "long"},
		{"ulong", APC_LTT_UINT, "long"},      {"size_t", APC_LTT_UINT, "pointer"},
		{"ssize_t", APC_LTT_INT, "pointer"},  {"off_t", APC_LTT_INT, "long"},
		{"char", APC_LTT_INT, "1"},           {"uchar", APC_LTT_UINT, "1"},
		{"short", APC_LTT_INT, "2"},          {"ushort", APC_LTT_UINT, "2"},
		{"int", APC_LTT_INT, NULL},           {"uint", APC_LTT_UINT, NULL},
		{"float", APC_LTT_FLOAT, NULL},       {"string", APC_LTT_STRING, NULL},
		{"enum", APC_LTT_ENUM, NULL},         {"array", APC_LTT_ARRAY, NULL},
		{"sequence", APC_LTT_SEQUENCE, NULL}, {"struct", APC_LTT_STRUCT, NULL},
		{"union", APC_LTT_UNION, NULL},       {"typeref", APC_LTT_TYPEREF, NULL},
	};
	struct apc_ltt_type *t = calloc(1, sizeof *t);
	size_t k;

	if (!t) {
		apc_err_set(err, APC_ENOMEM, file, APC_NO_OFFSET, "out of memory");
		return NULL;
	}
	t->fixed = -1;
	t->offset = x->offset;
	for (k = 0; k < sizeof alias / sizeof alias[0]; k++)
		if (strcmp(alias[k].elem, x->name) == 0)
			break;
	if (k == sizeof alias / sizeof alias[0]) {
		apc_err_set(err, APC_EDATA, file, x->offset, "unknown type element <%s>", x->name);
		goto fail;
	}
	t->kind = alias[k].kind;
	switch (t->kind) {
	case APC_LTT_INT: case APC_LTT_UINT: case APC_LTT_FLOAT: case APC_LTT_ENUM: {
		const char *sz = alias[k].size ? alias[k].size : apc_ltt_xml_attr(x, "size");
		/* No size: the natural int ("medium"), as the LTT viewer did. */
		t->size_kw = sdup(sz && *sz ? sz : "medium");
		if (t->kind == APC_LTT_ENUM && labels_parse(t, x)) {
			apc_err_set(err, APC_ENOMEM, file, APC_NO_OFFSET, "out of memory");
			goto fail;
		}
		break;
	}
	case APC_LTT_STRING:
		break;
	case APC_LTT_ARRAY: case APC_LTT_SEQUENCE: {
		const struct apc_ltt_xnode *tc = type_child(x);
		if (t->kind == APC_LTT_ARRAY) {
			const char *n = apc_ltt_xml_attr(x, "size");
			char *end;
			unsigned long v = n ? strtoul(n, &end, 0) : 0;
			if (!n || end == n || *end || v > 0xffffffffUL) {
				apc_err_set(err, APC_EDATA, file, x->offset, "array without a valid size");
				goto fail;
			}
			t->count = (uint32_t)v;
		} else {
			const char *n = apc_ltt_xml_attr(x, "lengthsize");
			t->size_kw = sdup(n && *n ? n : "medium");
		}
		if (!tc) {
			apc_err_set(err, APC_EDATA, file, x->offset, "<%s> without an element type", x->name);
			goto fail;
		}
		t->elem = type_parse(tc, file, err);
		if (!t->elem)
			goto fail;
		break;
	}
	case APC_LTT_STRUCT: case APC_LTT_UNION:
		if (t->kind == APC_LTT_UNION) {
			const char *n = apc_ltt_xml_attr(x, "typecodesize");
			t->size_kw = sdup(n && *n ? n : "medium");
		}
		if (fields_parse(t, x, file, err))
			goto fail;
		break;
	case APC_LTT_TYPEREF: {
		const char *n = apc_ltt_xml_attr(x, "name");
		if (!n || !*n) {
			apc_err_set(err, APC_EDATA, file, x->offset, "typeref without a name");
			goto fail;
		}
		t->ref = sdup(n);
		break;
	}
	}
	return t;
fail:
	type_free(t);
	return NULL;
}

/* ---- facilities -------------------------------------------------------- */

static int fac_parse(struct apc_ltt_facility *f, const struct apc_ltt_xnode *x, const char *file,
		     struct apc_err *err)
{
	const struct apc_ltt_xnode *d = apc_ltt_xml_child(x, "description");

	f->name = sdup(apc_ltt_xml_attr(x, "name") ? apc_ltt_xml_attr(x, "name") : "");
	f->description = sdup(d && d->text ? d->text : "");
	f->file = sdup(file);
	if (!f->name || !f->description || !f->file)
		return apc_err_set(err, APC_ENOMEM, file, APC_NO_OFFSET, "out of memory");
	for (size_t i = 0; i < x->nkids; i++) {
		const struct apc_ltt_xnode *e = x->kids[i], *tc;
		const char *nm = apc_ltt_xml_attr(e, "name");
		/* The file ends inside it: its type, even its name, may be
		 * cut (a partial struct would size its events wrongly).  It
		 * is the last element of the file: no id moves without it. */
		if (e->cut)
			continue;
		if (strcmp(e->name, "event") == 0) {
			struct apc_ltt_evdef *ne = realloc(f->events, (f->nevents + 1) * sizeof *ne);
			if (!ne)
				return apc_err_set(err, APC_ENOMEM, file, APC_NO_OFFSET, "out of memory");
			f->events = ne;
			struct apc_ltt_evdef *ev = &f->events[f->nevents++];
			memset(ev, 0, sizeof *ev);
			ev->fixed = -1;
			d = apc_ltt_xml_child(e, "description");
			ev->name = sdup(nm ? nm : "");
			ev->description = sdup(d && d->text ? d->text : "");
			tc = type_child(e);
			if (tc && !(ev->type = type_parse(tc, file, err)))
				return err->status;
		} else if (strcmp(e->name, "type") == 0) {
			struct apc_ltt_named *nt = realloc(f->types, (f->ntypes + 1) * sizeof *nt);
			if (!nt)
				return apc_err_set(err, APC_ENOMEM, file, APC_NO_OFFSET, "out of memory");
			f->types = nt;
			struct apc_ltt_named *t = &f->types[f->ntypes++];
			t->name = sdup(nm ? nm : "");
			t->type = NULL;
			tc = type_child(e);
			if (!tc)
				return apc_err_set(err, APC_EDATA, file, e->offset, "type '%s' has no structure",
						   t->name);
			if (!(t->type = type_parse(tc, file, err)))
				return err->status;
		}
	}
	return APC_OK;
}

int apc_ltt_defs_add(struct apc_ltt_defs *d, const char *buf, size_t len, const char *file,
		     struct apc_err *err)
{
	struct apc_ltt_xnode *root;
	int st = apc_ltt_xml_parse(buf, len, file, &root, err);
	size_t found = 0;

	d->cut = 0;
	if (st)
		return st;
	for (size_t i = 0; i < root->nkids; i++) {
		const struct apc_ltt_xnode *x = root->kids[i];
		/* A facility whose start tag is cut has not even its name. */
		if (strcmp(x->name, "facility") != 0 || x->cut == APC_LTT_CUT_TAG)
			continue;
		struct apc_ltt_facility *nf = realloc(d->facs, (d->nfacs + 1) * sizeof *nf);
		if (!nf) {
			st = apc_err_set(err, APC_ENOMEM, file, APC_NO_OFFSET, "out of memory");
			break;
		}
		d->facs = nf;
		memset(&d->facs[d->nfacs], 0, sizeof d->facs[0]);
		d->nfacs++;
		found++;
		if ((st = fac_parse(&d->facs[d->nfacs - 1], x, file, err)))
			break;
		if (x->cut) {
			d->facs[d->nfacs - 1].cut = 1;
			d->ncut++;
		}
	}
	if (!st && root->cut_msg) {
		/* Damage, not a meaningless file: what came before is kept,
		 * if anything (the caller decides whether to go on). */
		st = apc_err_set(err, APC_EDATA, file, root->cut_off, "%s", root->cut_msg);
		d->cut = 1;
	} else if (!st && !found) {
		/* Well-formed but describing nothing: empty, or cut right
		 * after a comment before its first facility.  Damage at
		 * its end, like a cut: the other files still describe
		 * theirs (with none left, the caller gives up). */
		st = apc_err_set(err, APC_EDATA, file, (int64_t)len,
				 len ? "no <facility> element: the file ends before any (cut short?)"
				     : "empty eventdefs file: no <facility> element (cut short?)");
		d->cut = 1;
	}
	apc_ltt_xml_free(root);
	return st;
}

void apc_ltt_defs_free(struct apc_ltt_defs *d)
{
	for (size_t i = 0; i < d->nfacs; i++) {
		struct apc_ltt_facility *f = &d->facs[i];
		for (size_t k = 0; k < f->nevents; k++) {
			free(f->events[k].name);
			free(f->events[k].description);
			type_free(f->events[k].type);
		}
		for (size_t k = 0; k < f->ntypes; k++) {
			free(f->types[k].name);
			type_free(f->types[k].type);
		}
		free(f->events);
		free(f->types);
		free(f->name);
		free(f->description);
		free(f->more_bases);
		free(f->file);
	}
	free(d->facs);
	d->facs = NULL;
	d->nfacs = 0;
	d->cut = 0;
	d->ncut = 0;
}

/* ---- compile ----------------------------------------------------------- */

int apc_ltt_arch_set(struct apc_ltt_arch *a, const char *s)
{
	static const struct { const char *n; int i, l, p; } t[] = {
		{"ILP32", 4, 4, 4}, {"LP32", 2, 4, 4}, {"LP64", 4, 8, 8}, {"ILP64", 8, 8, 8}};
	for (size_t k = 0; s && k < 4; k++)
		if (strcasecmp(s, t[k].n) == 0) {
			a->int_size = t[k].i;
			a->long_size = t[k].l;
			a->ptr_size = t[k].p;
			return 0;
		}
	return -1;
}

static int size_resolve(const char *kw, const struct apc_ltt_arch *a)
{
	if (!kw)
		return -1;
	if (strcmp(kw, "1") == 0 || strcmp(kw, "2") == 0 || strcmp(kw, "4") == 0 ||
	    strcmp(kw, "8") == 0)
		return kw[0] - '0';
	if (strcasecmp(kw, "short") == 0)
		return 2;
	if (strcasecmp(kw, "medium") == 0)
		return a->int_size;
	if (strcasecmp(kw, "long") == 0)
		return a->long_size;
	if (strcasecmp(kw, "pointer") == 0)
		return a->ptr_size;
	return -1;
}

/* The named type `name`, own's first, else any facility's; *in gets the
 * facility that defines it. */
static struct apc_ltt_type *find_named(const struct apc_ltt_defs *d,
				       const struct apc_ltt_facility *own, const char *name,
				       const struct apc_ltt_facility **in)
{
	*in = own;
	for (size_t k = 0; k < own->ntypes; k++)
		if (strcmp(own->types[k].name, name) == 0)
			return own->types[k].type;
	for (size_t i = 0; i < d->nfacs; i++)
		for (size_t k = 0; k < d->facs[i].ntypes; k++)
			if (strcmp(d->facs[i].types[k].name, name) == 0) {
				*in = &d->facs[i];
				return d->facs[i].types[k].type;
			}
	return NULL;
}

/* Resolve sizes and typerefs under t and return its fixed length (-1
 * variable, -2 error with err set, -3 a typeref to a type lost to a cut
 * file, with err set: see apc_ltt_defs_compile).  Names resolve in f
 * (the event's facility) first; errors name the facility whose file t
 * is in, `in`. */
static int64_t type_compile(struct apc_ltt_type *t, const struct apc_ltt_defs *d,
			    const struct apc_ltt_facility *f, const struct apc_ltt_facility *in,
			    const struct apc_ltt_arch *a, int depth, struct apc_err *err)
{
	int64_t r = -1;
	const struct apc_ltt_facility *tin;

	if (depth > TYPE_MAX_DEPTH) {
		apc_err_set(err, APC_EDATA, in->file, t->offset,
			    "types of facility '%s' nest deeper than %d (recursive typeref?)", in->name,
			    TYPE_MAX_DEPTH);
		return -2;
	}
	/* done already for these names and sizes (only a whole result is
	 * kept: a type still being compiled, recursive, is not) */
	if (t->compiled_gen == d->gen && t->compiled_f == f)
		return t->fixed;
	switch (t->kind) {
	case APC_LTT_INT: case APC_LTT_UINT: case APC_LTT_ENUM: case APC_LTT_FLOAT:
		/* A float's medium and long are C's float and double on every
		 * architecture (the spec's fsize: medium, long, 4 or 8). */
		if (t->kind == APC_LTT_FLOAT && t->size_kw && strcasecmp(t->size_kw, "medium") == 0)
			t->size = 4;
		else if (t->kind == APC_LTT_FLOAT && t->size_kw && strcasecmp(t->size_kw, "long") == 0)
			t->size = 8;
		else
			t->size = size_resolve(t->size_kw, a);
		if (t->size < 1 || (t->kind == APC_LTT_FLOAT && t->size != 4 && t->size != 8)) {
			apc_err_set(err, APC_EDATA, in->file, t->offset,
				    "facility '%s': bad size '%s'", in->name, t->size_kw);
			return -2;
		}
		r = t->size;
		break;
	case APC_LTT_STRING:
		r = -1;
		break;
	case APC_LTT_ARRAY: {
		int64_t e = type_compile(t->elem, d, f, in, a, depth + 1, err);
		if (e < -1)
			return e;
		/* An empty array is fixed (0 bytes) whatever its element:
		 * type_walk() relies on every variable type taking a byte. */
		if (t->count == 0)
			r = 0;
		else
			r = (e >= 0 && (e == 0 || t->count <= (INT64_C(1) << 32) / e)) ? e * t->count : -1;
		break;
	}
	case APC_LTT_SEQUENCE: case APC_LTT_UNION:
		t->size = size_resolve(t->size_kw, a);
		if (t->size < 1) {
			apc_err_set(err, APC_EDATA, in->file, t->offset,
				    "facility '%s': bad length size '%s'", in->name, t->size_kw);
			return -2;
		}
		if (t->kind == APC_LTT_SEQUENCE) {
			int64_t e = type_compile(t->elem, d, f, in, a, depth + 1, err);
			if (e < -1)
				return e;
			r = -1;
			break;
		}
		/* A union whose members all have one length is fixed. */
		r = t->nfields ? 0 : t->size;
		for (size_t i = 0; i < t->nfields; i++) {
			int64_t e = type_compile(t->fields[i].type, d, f, in, a, depth + 1, err);
			if (e < -1)
				return e;
			if (i == 0)
				r = e < 0 ? -1 : e + t->size;
			else if (r < 0 || e < 0 || e + t->size != r)
				r = -1;
		}
		break;
	case APC_LTT_STRUCT:
		r = 0;
		for (size_t i = 0; i < t->nfields; i++) {
			int64_t e = type_compile(t->fields[i].type, d, f, in, a, depth + 1, err);
			if (e < -1)
				return e;
			r = (r < 0 || e < 0) ? -1 : r + e;
		}
		break;
	case APC_LTT_TYPEREF:
		t->target = find_named(d, f, t->ref, &tin);
		if (!t->target) {
			apc_err_set(err, APC_EDATA, in->file, t->offset,
				    "facility '%s': typeref to undefined type '%s'", in->name, t->ref);
			return d->ncut ? -3 : -2;
		}
		r = type_compile(t->target, d, f, tin, a, depth + 1, err);
		if (r < -1)
			return r;
		break;
	}
	t->fixed = r;
	t->compiled_gen = d->gen;
	t->compiled_f = f;
	return r;
}

int apc_ltt_defs_compile(struct apc_ltt_defs *d, const struct apc_ltt_arch *a, struct apc_err *err)
{
	d->gen++; /* what an earlier compile (another arch) left is stale */
	for (size_t i = 0; i < d->nfacs; i++) {
		struct apc_ltt_facility *f = &d->facs[i];
		for (size_t k = 0; k < f->ntypes; k++) {
			int64_t r = type_compile(f->types[k].type, d, f, f, a, 0, err);
			if (r == -2)
				return err->status;
			if (r == -3) /* its events are lost below */
				apc_err_clear(err);
		}
		for (size_t k = 0; k < f->nevents; k++) {
			struct apc_ltt_evdef *e = &f->events[k];
			int64_t r = e->type ? type_compile(e->type, d, f, f, a, 0, err) : 0;
			if (r == -2)
				return err->status;
			if (r == -3) {
				/* Its size is unknown: undefined, as if the cut
				 * had taken it too, but it keeps its id. */
				apc_err_clear(err);
				type_free(e->type);
				e->type = NULL;
				e->lost = 1;
				r = -1;
			}
			e->fixed = r;
		}
	}
	return APC_OK;
}

/* ---- walking payloads -------------------------------------------------- */

static uint64_t rd_uint(const uint8_t *p, int size, int be)
{
	uint64_t v = 0;

	for (int i = 0; i < size; i++)
		v |= (uint64_t)p[be ? size - 1 - i : i] << (8 * i);
	return v;
}

static int64_t type_walk(const struct apc_ltt_type *t, const uint8_t *p, size_t avail, int be)
{
	if (t->fixed >= 0)
		return (uint64_t)t->fixed <= avail ? t->fixed : -1;
	switch (t->kind) {
	case APC_LTT_STRING: {
		const uint8_t *z = memchr(p, 0, avail);
		return z ? z - p + 1 : -1;
	}
	case APC_LTT_TYPEREF:
		return type_walk(t->target, p, avail, be);
	case APC_LTT_ARRAY: case APC_LTT_SEQUENCE: {
		uint64_t n = t->count;
		size_t off = 0;
		if (t->kind == APC_LTT_SEQUENCE) {
			if ((size_t)t->size > avail)
				return -1;
			n = rd_uint(p, t->size, be);
			off = (size_t)t->size;
		}
		if (t->elem->fixed >= 0) {
			uint64_t e = (uint64_t)t->elem->fixed;
			if (e && n > (avail - off) / e)
				return -1;
			return (int64_t)(off + n * e);
		}
		/* Variable elements take at least one byte each. */
		if (n > avail - off)
			return -1;
		for (uint64_t i = 0; i < n; i++) {
			int64_t e = type_walk(t->elem, p + off, avail - off, be);
			if (e < 0)
				return -1;
			off += (size_t)e;
		}
		return (int64_t)off;
	}
	case APC_LTT_STRUCT: {
		size_t off = 0;
		for (size_t i = 0; i < t->nfields; i++) {
			const struct apc_ltt_type *ft = t->fields[i].type;
			/* Fixed fields inline: what the call would return. */
			int64_t e = ft->fixed >= 0 ? ((uint64_t)ft->fixed <= avail - off ? ft->fixed : -1)
						   : type_walk(ft, p + off, avail - off, be);
			if (e < 0)
				return -1;
			off += (size_t)e;
		}
		return (int64_t)off;
	}
	case APC_LTT_UNION: {
		if ((size_t)t->size > avail)
			return -1;
		uint64_t tag = rd_uint(p, t->size, be);
		if (tag >= t->nfields)
			return -1;
		int64_t e = type_walk(t->fields[tag].type, p + t->size, avail - (size_t)t->size, be);
		return e < 0 ? -1 : e + t->size;
	}
	default:
		return -1;
	}
}

int64_t apc_ltt_payload_len(const struct apc_ltt_evdef *ev, const uint8_t *p, size_t avail, int be)
{
	if (ev->fixed >= 0)
		return (uint64_t)ev->fixed <= avail ? ev->fixed : -1;
	if (!ev->type) /* lost to a cut (compiled, a type-less event is fixed) */
		return -1;
	return type_walk(ev->type, p, avail, be);
}

static const struct apc_ltt_type *deref(const struct apc_ltt_type *t)
{
	while (t && t->kind == APC_LTT_TYPEREF)
		t = t->target;
	return t;
}

/* Find top-level field `name`: its type and offset. */
static int field_find(const struct apc_ltt_evdef *ev, const uint8_t *p, size_t avail, int be,
		      const char *name, const struct apc_ltt_type **ft, size_t *off)
{
	const struct apc_ltt_type *t = deref(ev->type);
	size_t o = 0;

	if (!t || t->kind != APC_LTT_STRUCT)
		return -1;
	for (size_t i = 0; i < t->nfields; i++) {
		if (strcmp(t->fields[i].name, name) == 0) {
			*ft = deref(t->fields[i].type);
			*off = o;
			return 0;
		}
		int64_t e = type_walk(t->fields[i].type, p + o, avail - o, be);
		if (e < 0)
			return -1;
		o += (size_t)e;
	}
	return -1;
}

int apc_ltt_field_u64(const struct apc_ltt_evdef *ev, const uint8_t *p, size_t avail, int be,
		      const char *name, uint64_t *out)
{
	const struct apc_ltt_type *ft;
	size_t off;

	if (field_find(ev, p, avail, be, name, &ft, &off))
		return -1;
	if (ft->kind != APC_LTT_INT && ft->kind != APC_LTT_UINT && ft->kind != APC_LTT_ENUM)
		return -1;
	if ((size_t)ft->size > avail - off || ft->size > 8)
		return -1;
	*out = rd_uint(p + off, ft->size, be);
	return 0;
}

int apc_ltt_field_str(const struct apc_ltt_evdef *ev, const uint8_t *p, size_t avail, int be,
		      const char *name, const char **s, size_t *n)
{
	const struct apc_ltt_type *ft;
	size_t off;
	const uint8_t *z;

	if (field_find(ev, p, avail, be, name, &ft, &off) || ft->kind != APC_LTT_STRING)
		return -1;
	z = memchr(p + off, 0, avail - off);
	if (!z)
		return -1;
	*s = (const char *)p + off;
	*n = (size_t)(z - (p + off));
	return 0;
}

/*
 * apc_ltt_field_ref() : see ltt.h.  The offset is the sum of the fixed
 * sizes of the fields before `name`, which is what field_find's walk
 * adds up for such fields; a variable field before it leaves the walk
 * to the slow path.
 */
void apc_ltt_field_ref(struct apc_ltt_fieldref *f, const struct apc_ltt_evdef *ev,
		       const char *name, int want_str)
{
	const struct apc_ltt_type *t = ev ? deref(ev->type) : NULL;
	size_t off = 0;

	memset(f, 0, sizeof *f);
	f->ev = ev;
	f->name = name;
	f->how = APC_LTT_REF_NONE;
	if (!t || t->kind != APC_LTT_STRUCT)
		return;
	for (size_t i = 0; i < t->nfields; i++) {
		if (strcmp(t->fields[i].name, name) == 0) {
			const struct apc_ltt_type *ft = deref(t->fields[i].type);
			if (want_str ? ft->kind != APC_LTT_STRING
				     : (ft->kind != APC_LTT_INT && ft->kind != APC_LTT_UINT &&
					ft->kind != APC_LTT_ENUM) || ft->size > 8 || ft->size < 0) {
				f->how = APC_LTT_REF_NONE;
				return;
			}
			f->size = want_str ? 0 : ft->size;
			f->off = off;
			f->how = f->how == APC_LTT_REF_WALK ? APC_LTT_REF_WALK : APC_LTT_REF_FIXED;
			return;
		}
		if (t->fields[i].type->fixed < 0)
			f->how = APC_LTT_REF_WALK;
		else
			off += (size_t)t->fields[i].type->fixed;
	}
	f->how = APC_LTT_REF_NONE;
}

int apc_ltt_ref_str(const struct apc_ltt_fieldref *f, const uint8_t *p, size_t avail, int be,
		    const char **s, size_t *n)
{
	const uint8_t *z;

	if (f->how == APC_LTT_REF_WALK)
		return apc_ltt_field_str(f->ev, p, avail, be, f->name, s, n);
	if (f->how != APC_LTT_REF_FIXED || f->off > avail)
		return -1;
	z = memchr(p + f->off, 0, avail - f->off);
	if (!z)
		return -1;
	*s = (const char *)p + f->off;
	*n = (size_t)(z - (p + f->off));
	return 0;
}

/* ---- ids --------------------------------------------------------------- */

/* Builtin definitions for ids that no eventdefs file describes. */
static struct apc_ltt_type bi_u4 = {.kind = APC_LTT_UINT, .size = 4, .fixed = 4};
static struct apc_ltt_type bi_u8 = {.kind = APC_LTT_UINT, .size = 8, .fixed = 8};
static struct apc_ltt_type bi_str = {.kind = APC_LTT_STRING, .fixed = -1};
static struct apc_ltt_field bi_fl_fields[] = {
	{"name", "", &bi_str}, {"checksum", "", &bi_u4}, {"base_code", "", &bi_u4}};
static struct apc_ltt_type bi_fl = {.kind = APC_LTT_STRUCT, .fields = bi_fl_fields,
				    .nfields = 3, .fixed = -1};
static struct apc_ltt_field bi_ts_fields[] = {
	{"seconds", "", &bi_u4}, {"nanoseconds", "", &bi_u4}, {"cycle_count", "", &bi_u8}};
static struct apc_ltt_type bi_ts = {.kind = APC_LTT_STRUCT, .fields = bi_ts_fields,
				    .nfields = 3, .fixed = 16};
static struct apc_ltt_field bi_bt_fields[] = {
	{"seconds", "", &bi_u4}, {"nanoseconds", "", &bi_u4}, {"cycle_count", "", &bi_u8},
	{"block_id", "", &bi_u4}};
static struct apc_ltt_type bi_bt = {.kind = APC_LTT_STRUCT, .fields = bi_bt_fields,
				    .nfields = 4, .fixed = 20};
static struct apc_ltt_evdef bi_events[4] = {
	{"facility_load", "Facility used in the trace", &bi_fl, -1, 0},
	{"block_start", "Block start timestamp", &bi_bt, 20, 0},
	{"block_end", "Block end timestamp", &bi_bt, 20, 0},
	{"time_heartbeat", "System time values sent periodically", &bi_ts, 16, 0}};
static struct apc_ltt_facility bi_fac = {.name = "builtin", .description = "Builtin events",
					 .events = bi_events, .nevents = 4, .has_base = 1};

static int builtin_id(uint32_t id)
{
	return id == APC_LTT_ID_FACILITY_LOAD || id == APC_LTT_ID_BLOCK_START ||
	       id == APC_LTT_ID_BLOCK_END || id == APC_LTT_ID_HEARTBEAT;
}

/* A facility that numbers the builtins among its events (2004 on) or
 * around them (2003).  A cut one may have lost block_start: then its
 * facility_load, which 2004 on put first and 2003 did not have, says. */
static int fac_has_builtins(const struct apc_ltt_facility *f)
{
	for (size_t k = 0; k < f->nevents; k++)
		if (strcmp(f->events[k].name, "block_start") == 0 ||
		    (f->cut && strcmp(f->events[k].name, "facility_load") == 0))
			return 1;
	return 0;
}

/*
 * The numbering behind both id tables: give facilities their bases and
 * put each event at its id in fac/ev (first come keeps an id), for ids
 * below cap only; fac/ev NULL just counts.  Returns the highest id
 * assigned + 1 (at least the builtins' 20).  Idempotent: the first call
 * fixes every base, so a count followed by a fill numbers alike.
 */
static uint32_t ids_assign(struct apc_ltt_defs *d, const struct apc_ltt_facility **fac,
			   const struct apc_ltt_evdef **ev, uint32_t cap)
{
	static const uint32_t bids[4] = {APC_LTT_ID_FACILITY_LOAD, APC_LTT_ID_BLOCK_START,
					 APC_LTT_ID_BLOCK_END, APC_LTT_ID_HEARTBEAT};
	uint32_t next = 0, top = APC_LTT_ID_HEARTBEAT + 1;

	if (!ev)
		cap = 0;
	/* "core" first, so it gets base 0 when nothing says otherwise. */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < d->nfacs; i++) {
			struct apc_ltt_facility *f = &d->facs[i];
			int is_core = strcmp(f->name, "core") == 0;
			if ((pass == 0) != is_core)
				continue;
			int own_builtins = fac_has_builtins(f);
			uint32_t id = f->has_base ? f->base : next;
			if (!f->has_base && !own_builtins)
				while (builtin_id(id))
					id++;
			if (!f->has_base) {
				f->base = id;
				f->has_base = 1;
			}
			for (size_t b = 0; b <= f->nmore; b++) {
				if (b)
					id = f->more_bases[b - 1];
				for (size_t k = 0; k < f->nevents; k++) {
					if (!own_builtins)
						while (builtin_id(id))
							id++;
					if (id >= APC_LTT_MAX_IDS)
						break;
					if (id < cap && !ev[id] && !f->events[k].lost) {
						fac[id] = f;
						ev[id] = &f->events[k];
					}
					if (id >= top)
						top = id + 1;
					id++;
				}
				if (id > next)
					next = id;
			}
		}
	}
	for (int k = 0; k < 4; k++)
		if (bids[k] < cap && !ev[bids[k]]) {
			fac[bids[k]] = &bi_fac;
			ev[bids[k]] = &bi_events[k];
		}
	return top;
}

static int fac_named(const struct apc_ltt_facility *f, const char *name, size_t n)
{
	return strlen(f->name) == n && memcmp(f->name, name, n) == 0;
}

int apc_ltt_facility_load(struct apc_ltt_defs *d, const char *name, size_t n, uint32_t base)
{
	struct apc_ltt_facility *last = NULL;

	for (size_t i = 0; i < d->nfacs; i++) {
		struct apc_ltt_facility *f = &d->facs[i];
		if (!fac_named(f, name, n) || !f->loaded)
			continue;
		if (f->base == base)
			return 0; /* the same load again */
		for (size_t k = 0; k < f->nmore; k++)
			if (f->more_bases[k] == base)
				return 0;
	}
	for (size_t i = 0; i < d->nfacs; i++) {
		struct apc_ltt_facility *f = &d->facs[i];
		if (!fac_named(f, name, n))
			continue;
		if (!f->loaded) {
			f->base = base;
			f->has_base = 1;
			f->loaded = 1;
			return 0;
		}
		last = f;
	}
	if (!last)
		return 1; /* a facility the eventdefs do not describe */
	uint32_t *nb = realloc(last->more_bases, (last->nmore + 1) * sizeof *nb);
	if (!nb)
		return -1;
	last->more_bases = nb;
	last->more_bases[last->nmore++] = base;
	return 0;
}

void apc_ltt_idmap_build(struct apc_ltt_idmap *m, struct apc_ltt_defs *d)
{
	memset(m, 0, sizeof *m);
	ids_assign(d, m->fac, m->ev, APC_LTT_MAX_IDS);
}

/*
 * apc_ltt_ids_build() : see ltt.h.  Counting first costs one walk of
 * the definitions; the table is then exactly as long as the ids used.
 */
int apc_ltt_ids_build(struct apc_ltt_ids *t, struct apc_ltt_defs *d, struct apc_err *err)
{
	uint32_t n = ids_assign(d, NULL, NULL, 0);

	memset(t, 0, sizeof *t);
	t->fac = calloc(n, sizeof *t->fac);
	t->ev = calloc(n, sizeof *t->ev);
	if (!t->fac || !t->ev) {
		apc_ltt_ids_free(t);
		return apc_err_set(err, APC_ENOMEM, NULL, APC_NO_OFFSET,
				   "cannot allocate an id table of %u entries", n);
	}
	t->n = ids_assign(d, t->fac, t->ev, n);
	return APC_OK;
}

void apc_ltt_ids_free(struct apc_ltt_ids *t)
{
	free(t->fac);
	free(t->ev);
	memset(t, 0, sizeof *t);
}

/* ---- time -------------------------------------------------------------- */

uint64_t apc_ltt_interp(uint64_t c, uint64_t t0, uint64_t c0, uint64_t t1, uint64_t c1)
{
	unsigned __int128 q;

	if (c1 <= c0 || t1 < t0 || c < c0)
		return t0;
	q = (unsigned __int128)(c - c0) * (t1 - t0) / (c1 - c0);
	if (q > UINT64_MAX - t0)
		return UINT64_MAX;
	return t0 + (uint64_t)q;
}

/*
 * apc_ltt_interp_prep() : see ltt.h.  The one 128-bit division per
 * block computes the reciprocal: (2^128 - 1) - 2^64 * dn is ~dn in the
 * high word and all ones in the low one, and its quotient by dn is
 * below 2^64 because dn >= 2^63.
 */
void apc_ltt_interp_prep(struct apc_ltt_interp_k *k, uint64_t t0, uint64_t c0, uint64_t t1,
			 uint64_t c1)
{
	memset(k, 0, sizeof *k);
	k->t0 = t0;
	k->c0 = c0;
	k->t1 = t1;
	k->c1 = c1;
	if (c1 <= c0 || t1 < t0) {
		k->flat = 1;
		return;
	}
	k->dt = t1 - t0;
	k->dc = c1 - c0;
	k->sh = __builtin_clzll(k->dc);
	k->dn = k->dc << k->sh;
	k->v = (uint64_t)(((unsigned __int128)~k->dn << 64 | UINT64_MAX) / k->dn);
}

/* ---- the per-CPU walker ------------------------------------------------ */

int apc_ltt_cpu_init(struct apc_ltt_cpu *c, int cpu, const char *name, apc_ltt_read_fn read,
		     void *ctx, const struct apc_ltt_ids *ids, int big_endian, size_t block_size,
		     struct apc_err *err)
{
	memset(c, 0, sizeof *c);
	c->cpu = cpu;
	c->name = name;
	c->read = read;
	c->ctx = ctx;
	c->ids = *ids;
	c->big_endian = big_endian;
	c->block_size = block_size;
	if (block_size < 2 * (APC_LTT_HDR + APC_LTT_BLOCK_EV) + 4)
		return apc_err_set(err, APC_EDATA, name, APC_NO_OFFSET,
				   "block size %zu is too small for block_start and block_end", block_size);
	/* A first buffer of at most LTT_BUF_FIRST: cpu_refill grows it as
	 * the file turns out to hold the bytes, so a short file with 1 MB
	 * blocks (the real trace's size) costs its length, not 1 MB. */
	c->buf_want = block_size;
	c->buf_cap = block_size < LTT_BUF_FIRST ? block_size : LTT_BUF_FIRST;
	c->buf = malloc(c->buf_cap);
	if (!c->buf)
		return apc_err_set(err, APC_ENOMEM, name, APC_NO_OFFSET,
				   "cannot allocate a block of %zu bytes", c->buf_cap);
	c->block = c->buf;
	return APC_OK;
}

void apc_ltt_cpu_free(struct apc_ltt_cpu *c)
{
	free(c->buf);
	c->buf = c->block = NULL;
}

int apc_ltt_cpu_readahead(struct apc_ltt_cpu *c, size_t bytes, struct apc_err *err)
{
	size_t cap = bytes / c->block_size * c->block_size;

	(void)err; /* the buffer grows in cpu_refill, as bytes arrive */
	if (cap < c->block_size)
		cap = c->block_size;
	if (c->buf_len || c->have_block || !c->buf)
		return APC_OK;
	c->buf_want = cap;
	return APC_OK;
}

/*
 * Top the read-ahead buffer up with as many bytes as fit, keeping the
 * unread tail (less than a block).  A read failure once whole blocks are
 * in hand is kept in read_st (err already says what failed) and returned
 * when the walker comes back for more, so the blocks before the failure
 * are walked first, as they were with one read per block.  Damaged data
 * (APC_EDATA: an archive member cut short) is kept there with any bytes
 * before it, whole blocks or not: those are the file's last, as at the
 * end of a file cut short.
 */
static int cpu_refill(struct apc_ltt_cpu *c, struct apc_err *err)
{
	size_t keep = c->buf_len - c->buf_pos;

	if (c->read_st) {
		/* damaged data ends there: the part of a block before
		 * it is the file's last (apc_ltt_cpu_load cuts it) */
		if (c->read_st == APC_EDATA && c->buf_len > c->buf_pos)
			return APC_OK;
		*err = c->read_err;
		return c->read_st;
	}
	if (keep && c->buf_pos)
		memmove(c->buf, c->buf + c->buf_pos, keep);
	c->buf_pos = 0;
	c->buf_len = keep;
	while (c->buf_len < c->buf_want) {
		if (c->buf_len == c->buf_cap) {
			/* Full and the file goes on: double, up to buf_want. */
			size_t ncap = c->buf_cap > c->buf_want / 2 ? c->buf_want : 2 * c->buf_cap;
			uint8_t *nb = realloc(c->buf, ncap);
			if (!nb)
				return apc_err_set(err, APC_ENOMEM, c->name, APC_NO_OFFSET,
						   "cannot allocate %zu bytes of read-ahead", ncap);
			c->buf = c->block = nb;
			c->buf_cap = ncap;
		}
		long r = c->read(c->ctx, c->buf + c->buf_len, c->buf_cap - c->buf_len, err);
		if (r < 0) {
			int st = err->status < 0 ? err->status : APC_EIO;
			if (c->buf_len >= c->block_size || (st == APC_EDATA && c->buf_len > 0)) {
				c->read_st = st;
				c->read_err = *err;
				break;
			}
			return st;
		}
		if (r == 0)
			break;
		c->buf_len += (size_t)r;
	}
	return APC_OK;
}

/* Is there a block_end event at off? */
static int cpu_end_at(const struct apc_ltt_cpu *c, uint64_t off)
{
	return off >= APC_LTT_HDR + APC_LTT_BLOCK_EV &&
	       off + APC_LTT_HDR + APC_LTT_BLOCK_EV <= c->block_size - 4 &&
	       rd_uint(c->block + off, 2, c->big_endian) == APC_LTT_ID_BLOCK_END;
}

/*
 * The file ends `got` bytes into the current block (0 < got <
 * block_size): keep what can be timed (see apc_ltt_cpu_load in ltt.h).
 * Walks from block_start with the event sizes, as far as whole events
 * go; an undefined id ends the walk as it ends a block's.
 */
static int cpu_cut(struct apc_ltt_cpu *c, size_t got, struct apc_err *err)
{
	const uint8_t *b = c->block;
	int be = c->big_endian, found = 0;
	size_t pos = APC_LTT_HDR + APC_LTT_BLOCK_EV;
	uint64_t n = 0;

	c->cut_off = c->block_off + got;
	c->cut_st = apc_err_set(&c->cut_err, APC_EDATA, c->name, (int64_t)c->cut_off,
				"truncated block: %zu of %zu bytes (trace cut short?)", got,
				c->block_size);
	if (c->read_st == APC_EDATA)
		c->cut_err = c->read_err; /* what ended the data: say that */
	if (got < pos || rd_uint(b, 2, be) != APC_LTT_ID_BLOCK_START) {
		*err = c->cut_err;
		return c->cut_st;
	}
	/* A time the trace had, even if nothing in the block gets it. */
	const uint8_t *s = b + APC_LTT_HDR;
	c->bs_s = (uint32_t)rd_uint(s, 4, be);
	c->bs_sub = (uint32_t)rd_uint(s + 4, 4, be);
	c->bs_cyc = rd_uint(s + 8, 8, be);
	c->cut_start = 1;
	uint32_t bid = (uint32_t)rd_uint(b + APC_LTT_HDR + 16, 4, be);
	while (pos + APC_LTT_HDR <= got) {
		uint16_t id = (uint16_t)rd_uint(b + pos, 2, be);
		const struct apc_ltt_evdef *def = apc_ltt_ids_ev(&c->ids, id);
		if (id == APC_LTT_ID_BLOCK_END) {
			/* whole, where a trailer could point, and of this block */
			found = pos + APC_LTT_HDR + APC_LTT_BLOCK_EV <= got &&
				pos + APC_LTT_HDR + APC_LTT_BLOCK_EV <= c->block_size - 4 &&
				(uint32_t)rd_uint(b + pos + APC_LTT_HDR + 16, 4, be) == bid;
			break;
		}
		if (!def) {
			/* as in a whole block: nothing after it can be found */
			if (!c->have_undef) {
				c->have_undef = 1;
				c->undef_id = id;
				c->undef_off = c->block_off + pos;
			}
			c->undefined++;
			c->skipped++;
			break;
		}
		if (id == APC_LTT_ID_BLOCK_START)
			break;
		int64_t len = apc_ltt_payload_len(def, b + pos + APC_LTT_HDR, got - pos - APC_LTT_HDR, be);
		if (len < 0)
			break; /* the event the cut goes through (or a malformed one) */
		pos += APC_LTT_HDR + (size_t)len;
		n++;
	}
	if (!found && !c->keep_untimed) {
		c->untimed += n;
		*err = c->cut_err;
		return c->cut_st;
	}
	const uint8_t *e = found ? b + pos + APC_LTT_HDR : s;
	/* without block_end the block ends where it starts: one time, t0 */
	c->be_s = (uint32_t)rd_uint(e, 4, be);
	c->be_sub = (uint32_t)rd_uint(e + 4, 4, be);
	c->be_cyc = rd_uint(e + 8, 8, be);
	c->end_pos = pos;
	c->cut_noend = !found;
	c->pos = 0;
	c->have_block = 1;
	c->nblocks++;
	return APC_OK;
}

int apc_ltt_cpu_load(struct apc_ltt_cpu *c, struct apc_err *err)
{
	size_t got;
	const uint8_t *b;
	int be = c->big_endian;

	if (c->cut_st) {
		/* the block the file ends in is behind us: nothing follows */
		c->have_block = 0;
		*err = c->cut_err;
		return c->cut_st;
	}
	if (c->have_block) {
		c->block_off += c->block_size;
		c->buf_pos += c->block_size;
	}
	c->have_block = 0;
	if (c->buf_len - c->buf_pos < c->block_size) {
		int st = cpu_refill(c, err);
		if (st)
			return st;
	}
	got = c->buf_len - c->buf_pos;
	if (got > c->block_size)
		got = c->block_size;
	b = c->block = c->buf + c->buf_pos;
	if (got == 0) {
		c->done = 1;
		return APC_END;
	}
	if (got < c->block_size)
		return cpu_cut(c, got, err);
	if (rd_uint(b, 2, be) != APC_LTT_ID_BLOCK_START)
		return apc_err_set(err, APC_EDATA, c->name, (int64_t)c->block_off,
				   "block does not begin with block_start (id %u; wrong block size or endianness?)",
				   (unsigned)rd_uint(b, 2, be));
	/*
	 * The trailer: before August 2004 the LTT writers stored the room
	 * left after block_end (so block_end sits at block_size - trailer);
	 * later ones store block_end's offset.  Take the meaning under which
	 * a block_end event is found; if both fit, the one whose block id
	 * matches block_start's.
	 */
	uint32_t tr = (uint32_t)rd_uint(b + c->block_size - 4, 4, be);
	uint64_t old_off = tr <= c->block_size ? c->block_size - tr : 0, new_off = tr;
	int old_ok = cpu_end_at(c, old_off), new_ok = cpu_end_at(c, new_off);
	if (old_ok && new_ok && old_off != new_off) {
		uint32_t id0 = (uint32_t)rd_uint(b + APC_LTT_HDR + 16, 4, be);
		if ((uint32_t)rd_uint(b + new_off + APC_LTT_HDR + 16, 4, be) == id0 &&
		    (uint32_t)rd_uint(b + old_off + APC_LTT_HDR + 16, 4, be) != id0)
			old_ok = 0;
	}
	if (old_ok) {
		c->end_pos = (size_t)old_off;
		c->trailer = APC_LTT_TRAILER_OLD;
	} else if (new_ok) {
		c->end_pos = (size_t)new_off;
		c->trailer = APC_LTT_TRAILER_NEW;
	} else {
		return apc_err_set(err, APC_EDATA, c->name, (int64_t)(c->block_off + c->block_size - 4),
				   "block trailer %u points at no block_end under either meaning", tr);
	}
	const uint8_t *s = b + APC_LTT_HDR, *e = b + c->end_pos + APC_LTT_HDR;
	c->bs_s = (uint32_t)rd_uint(s, 4, be);
	c->bs_sub = (uint32_t)rd_uint(s + 4, 4, be);
	c->bs_cyc = rd_uint(s + 8, 8, be);
	c->be_s = (uint32_t)rd_uint(e, 4, be);
	c->be_sub = (uint32_t)rd_uint(e + 4, 4, be);
	c->be_cyc = rd_uint(e + 8, 8, be);
	c->pos = 0;
	c->have_block = 1;
	c->nblocks++;
	return APC_OK;
}

/* Block times under the sub-second reading (decided by the caller). */
static void cpu_block_times(struct apc_ltt_cpu *c)
{
	int sub = c->subsec == APC_LTT_SUBSEC_US ? APC_LTT_SUBSEC_US : APC_LTT_SUBSEC_NS;

	c->t0 = apc_ltt_timespec_ns(c->bs_s, c->bs_sub, sub);
	c->t1 = apc_ltt_timespec_ns(c->be_s, c->be_sub, sub);
	apc_ltt_interp_prep(&c->ik, c->t0, c->bs_cyc, c->t1, c->be_cyc);
}

/* Whether a value of the trace's byte order (be: big-endian) needs a
 * swap on this host. */
static inline int cpu_swap(int be)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return !be;
#else
	return be;
#endif
}

/* Event header loads: one unaligned load (memcpy) and a swap if needed. */
static inline uint16_t cpu_ld16(const uint8_t *p, int be)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return cpu_swap(be) ? __builtin_bswap16(v) : v;
}

static inline uint32_t cpu_ld32(const uint8_t *p, int be)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return cpu_swap(be) ? __builtin_bswap32(v) : v;
}

static inline __attribute__((always_inline)) void
cpu_fill(struct apc_ltt_cpu *c, struct apc_ltt_raw *ev, size_t pos, uint16_t id, uint32_t hdr32,
	 uint64_t cyc, uint64_t ts, size_t len)
{
	ev->cpu = c->cpu;
	ev->id = id;
	ev->hdr32 = hdr32;
	ev->cycles = cyc;
	/* Per-CPU time never runs backwards, even across odd blocks. */
	if (ts < c->last_ts)
		ts = c->last_ts;
	c->last_ts = ts;
	ev->ts = ts;
	ev->offset = c->block_off + pos;
	ev->payload = c->block + pos + APC_LTT_HDR;
	ev->len = len;
	ev->fac = apc_ltt_ids_fac(&c->ids, id);
	ev->def = apc_ltt_ids_ev(&c->ids, id);
}

/*
 * One step of the walk: the body of apc_ltt_cpu_next, inlined into it
 * and into apc_ltt_cpu_run (one copy of the logic for both).
 */
static inline __attribute__((always_inline)) int
cpu_step(struct apc_ltt_cpu *c, struct apc_ltt_raw *ev, struct apc_err *err)
{
	int be = c->big_endian;

	for (;;) {
		if (c->done)
			return APC_END;
		if (!c->have_block || c->pos > c->end_pos) {
			int st = apc_ltt_cpu_load(c, err);
			if (st)
				return st;
		}
		if (c->pos == c->end_pos && c->cut_noend) {
			/* a cut block's last whole event is behind: the cut */
			c->pos = c->end_pos + 1;
			continue;
		}
		const uint8_t *p = c->block + c->pos;
		uint32_t hdr32 = cpu_ld32(p + 2, be);
		if (c->pos == 0) {
			cpu_block_times(c);
			/* The count restarts from block_start's full 64-bit
			 * payload, not its header (which is a little later). */
			c->cyc = c->bs_cyc;
			cpu_fill(c, ev, 0, APC_LTT_ID_BLOCK_START, hdr32, c->bs_cyc, c->t0,
				 APC_LTT_BLOCK_EV);
			c->pos = APC_LTT_HDR + APC_LTT_BLOCK_EV;
			return APC_OK;
		}
		if (c->pos == c->end_pos) {
			/* Events after a wrap that went unseen would put our
			 * count below block_end's; count the wraps it implies. */
			if (c->be_cyc > c->cyc)
				c->wraps += (c->be_cyc - c->cyc) >> 32;
			c->cyc = c->be_cyc;
			cpu_fill(c, ev, c->pos, APC_LTT_ID_BLOCK_END, hdr32, c->be_cyc, c->t1,
				 APC_LTT_BLOCK_EV);
			c->pos = c->end_pos + 1; /* load the next block next time */
			return APC_OK;
		}
		if (c->pos + APC_LTT_HDR > c->end_pos)
			return apc_err_set(err, APC_EDATA, c->name, (int64_t)(c->block_off + c->pos),
					   "event header runs past block_end at offset %zu", c->end_pos);
		uint16_t id = cpu_ld16(p, be);
		const struct apc_ltt_evdef *def = apc_ltt_ids_ev(&c->ids, id);
		/* Extend the low 32 bits: the count only goes forward, so a
		 * smaller value means it wrapped (heartbeats guarantee an event
		 * at least once per wrap period). */
		uint64_t cyc = (c->cyc & ~(uint64_t)0xffffffff) | hdr32;
		if (cyc < c->cyc) {
			cyc += UINT64_C(1) << 32;
			c->wraps++;
		}
		if (!def) {
			/* No definition, no size: nothing after it can be found. */
			if (!c->have_undef) {
				c->have_undef = 1;
				c->undef_id = id;
				c->undef_off = c->block_off + c->pos;
			}
			c->undefined++;
			c->skipped++;
			c->pos = c->end_pos;
			continue;
		}
		if (id == APC_LTT_ID_BLOCK_START || id == APC_LTT_ID_BLOCK_END)
			return apc_err_set(err, APC_EDATA, c->name, (int64_t)(c->block_off + c->pos),
					   "%s inside a block (event sizes do not match the trace?)",
					   def->name);
		size_t avail = c->end_pos - c->pos - APC_LTT_HDR;
		int64_t len = apc_ltt_payload_len(def, p + APC_LTT_HDR, avail, be);
		if (len < 0)
			return apc_err_set(err, APC_EDATA, c->name, (int64_t)(c->block_off + c->pos),
					   "event %s (id %u) runs past block_end at offset %zu or is malformed",
					   def->name, id, c->end_pos);
		c->cyc = cyc;
		cpu_fill(c, ev, c->pos, id, hdr32, cyc,
			 apc_ltt_interp_at(&c->ik, cyc), (size_t)len);
		c->pos += APC_LTT_HDR + (size_t)len;
		return APC_OK;
	}
}

int apc_ltt_cpu_next(struct apc_ltt_cpu *c, struct apc_ltt_raw *ev, struct apc_err *err)
{
	return cpu_step(c, ev, err);
}

/*
 * The lean loop of apc_ltt_cpu_run over plain events strictly inside the
 * current block, built twice with the byte order fixed (be is a
 * constant in each copy).  Returns the new count of events in out.
 */
static inline __attribute__((always_inline)) size_t
cpu_lean(struct apc_ltt_cpu *c, struct apc_ltt_raw *out, size_t n, size_t max, int be)
{
	/* ids from nids up are (NULL, rest): one compare, taken rarely */
	const struct apc_ltt_evdef *const *defs = c->ids.ev;
	const struct apc_ltt_facility *const *facs = c->ids.fac;
	const struct apc_ltt_evdef *rest = c->ids.rest;
	uint32_t nids = c->ids.n;
	const uint8_t *blk = c->block;
	size_t pos = c->pos, end = c->end_pos;
	uint64_t cyc = c->cyc, last = c->last_ts, wraps = c->wraps;

	while (n < max && pos + APC_LTT_HDR <= end) {
		const uint8_t *p = blk + pos;
		uint16_t id = cpu_ld16(p, be);
		const struct apc_ltt_evdef *def = id < nids ? defs[id] : rest;
		if (!def || id == APC_LTT_ID_BLOCK_START || id == APC_LTT_ID_BLOCK_END)
			break;
		size_t avail = end - pos - APC_LTT_HDR;
		int64_t len = def->fixed >= 0
				      ? ((uint64_t)def->fixed <= avail ? def->fixed : -1)
				      : type_walk(def->type, p + APC_LTT_HDR, avail, be);
		if (len < 0)
			break;
		uint32_t hdr32 = cpu_ld32(p + 2, be);
		uint64_t ecyc = (cyc & ~(uint64_t)0xffffffff) | hdr32;
		if (ecyc < cyc) {
			ecyc += UINT64_C(1) << 32;
			wraps++;
		}
		cyc = ecyc;
		uint64_t ts = apc_ltt_interp_at(&c->ik, ecyc);
		if (ts < last)
			ts = last;
		last = ts;
		struct apc_ltt_raw *ev = &out[n++];
		ev->cpu = c->cpu;
		ev->id = id;
		ev->hdr32 = hdr32;
		ev->cycles = ecyc;
		ev->ts = ts;
		ev->offset = c->block_off + pos;
		ev->payload = p + APC_LTT_HDR;
		ev->len = (size_t)len;
		ev->fac = id < nids ? facs[id] : NULL;
		ev->def = def;
		pos += APC_LTT_HDR + (size_t)len;
	}
	c->pos = pos;
	c->cyc = cyc;
	c->last_ts = last;
	c->wraps = wraps;
	return n;
}

/*
 * apc_ltt_cpu_run() : see ltt.h.  Events strictly inside a block take a
 * lean loop with the walker's state in locals; everything else (block
 * start and end, loading, undefined ids, damage) goes through cpu_step,
 * which is also where the lean loop leaves off whenever an event is not
 * plain, so errors and counters come out exactly as from
 * apc_ltt_cpu_next.
 */
size_t apc_ltt_cpu_run(struct apc_ltt_cpu *c, struct apc_ltt_raw *out, size_t max, int *st,
		       struct apc_err *err)
{
	size_t n = 0;

	*st = APC_OK;
	while (n < max) {
		if (c->have_block && c->pos > 0 && c->pos < c->end_pos && !c->done) {
			n = c->big_endian ? cpu_lean(c, out, n, max, 1) : cpu_lean(c, out, n, max, 0);
			if (n == max)
				break;
		}
		int r = cpu_step(c, &out[n], err);
		if (r != APC_OK) {
			*st = r;
			break;
		}
		/* The next block may be read over this one's bytes. */
		if (out[n++].id == APC_LTT_ID_BLOCK_END)
			break;
	}
	return n;
}
