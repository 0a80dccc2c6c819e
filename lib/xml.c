/*
 * xml.c - a user's XML file read strictly (see xml.h).
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <libxml/parser.h>

#include "verify.h" /* apc_xml_error_msg() */
#include "xml.h"

/* An error libxml2 raised, and how far the parser had read at it. */
struct xml_error {
	int line, fatal;
	long at; /* -1: none */
	char msg[256];
};

/* The first error and the last (the one a fatal error stopped at). */
struct xml_errors {
	struct xml_error first, last;
};

#if LIBXML_VERSION >= 21200
typedef const xmlError *xml_error_t;
#else
typedef xmlError *xml_error_t;
#endif

int apc_xml_warning(int code)
{
	switch (code) {
	case XML_WAR_UNDECLARED_ENTITY:
	case XML_WAR_CATALOG_PI:
	case XML_WAR_UNKNOWN_VERSION:
	case XML_WAR_LANG_VALUE:
	case XML_WAR_NS_URI:
	case XML_WAR_NS_URI_RELATIVE:
	case XML_WAR_SPACE_VALUE:
	case XML_WAR_NS_COLUMN:
	case XML_WAR_ENTITY_REDEFINED:
		return 1;
	default:
		return 0;
	}
}

static void xml_error(void *ctx, xml_error_t e)
{
	xmlParserCtxt *c = ctx;
	struct xml_errors *x = c->_private;

	if (!e || e->level < XML_ERR_ERROR || apc_xml_warning(e->code))
		return;
	x->last.line = e->line;
	x->last.fatal = e->level == XML_ERR_FATAL;
	x->last.at = xmlByteConsumed(c);
	snprintf(x->last.msg, sizeof x->last.msg, "%s", e->message ? e->message : "");
	if (x->first.at < 0)
		x->first = x->last;
}

xmlDoc *apc_xml_read_strict(const void *buf, size_t len, const char *file, int options,
			    struct apc_err *err)
{
	struct xml_errors x = {.first.at = -1, .last.at = -1};
	const struct xml_error *e;
	xmlSAXHandler sax;
	xmlParserCtxt *ctx;
	xmlDoc *doc;
	char why[320];

	/* libxml2 would say "extra content at the end of the document" */
	if (len == 0) {
		apc_err_set(err, APC_EIO, file, APC_NO_OFFSET, "empty file, not XML");
		return NULL;
	}
	if (len > INT_MAX) {
		apc_err_set(err, APC_EIO, file, APC_NO_OFFSET, "too large for an XML file here");
		return NULL;
	}
	/* a push parser: the error handler sees how far it had read */
	memset(&sax, 0, sizeof sax);
	xmlSAXVersion(&sax, 2);
	sax.serror = xml_error;
	if (!(ctx = xmlCreatePushParserCtxt(&sax, NULL, NULL, 0, file))) {
		apc_err_set(err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
		return NULL;
	}
	ctx->_private = &x;
	xmlCtxtUseOptions(ctx, options | XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	xmlParseChunk(ctx, buf, (int)len, 1);
	doc = ctx->myDoc;
	ctx->myDoc = NULL;
	if (x.first.at < 0 && (!ctx->wellFormed || !doc)) {
		/* no error reported, yet no document (out of memory) */
		x.first.at = xmlByteConsumed(ctx);
		snprintf(x.first.msg, sizeof x.first.msg, "not well-formed");
	}
	xmlFreeParserCtxt(ctx);
	/* As apcconv tells captured.xml's: an error libxml2 recovered from
	 * (a namespace error) where it was, else the one it stopped at. */
	e = x.first.at >= 0 && !x.first.fatal ? &x.first : x.last.at >= 0 ? &x.last : &x.first;
	if (e->at >= 0) {
		apc_err_set(err, APC_EIO, file, (size_t)e->at <= len ? e->at : APC_NO_OFFSET, "%s",
			    apc_xml_error_msg(e->line, e->msg, why, sizeof why));
	} else if (doc->intSubset && (doc->intSubset->entities || doc->intSubset->pentities)) {
		apc_err_set(err, APC_EIO, file, APC_NO_OFFSET, "declares XML entities (refused)");
	} else {
		return doc;
	}
	if (doc)
		xmlFreeDoc(doc);
	return NULL;
}
