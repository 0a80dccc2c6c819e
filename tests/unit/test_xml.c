/*
 * test_xml.c - the strict reader of a user's XML file (lib/xml.c) and the
 * --counters list check (lib/gator.c): where and why each is refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gator.h"
#include "t.h"
#include "xml.h"

/* The message apc_xml_read_strict() leaves for xml ("" if it parses). */
static const char *strict(const char *xml, char *buf, size_t len)
{
	struct apc_err e;
	xmlDoc *doc;

	apc_err_clear(&e);
	doc = apc_xml_read_strict(xml, strlen(xml), "f.xml", 0, &e);
	if (doc) {
		xmlFreeDoc(doc);
		snprintf(buf, len, "%s", e.status == APC_OK ? "" : "doc and an error");
		return buf;
	}
	apc_err_format(&e, buf, len);
	return buf;
}

static void xml_strict_reasons(void)
{
	char b[600];

	T_EQ_STR(strict("<session a=\"1\"/>", b, sizeof b), "");
	/* libxml2's warnings (an odd namespace URI) do not refuse it */
	T_EQ_STR(strict("<s xmlns:a=\"not a uri\"/>", b, sizeof b), "");
	T_EQ_STR(strict("", b, sizeof b), "f.xml: empty file, not XML");
	T_EQ_STR(strict("<!DOCTYPE s [<!ENTITY a \"x\">]><s/>", b, sizeof b),
		 "f.xml: declares XML entities (refused)");
	/* recovered from: the first error, where it was, nothing after it */
	T_EQ_STR(strict("<s>\n<a:b/>\n</t>", b, sizeof b),
		 "f.xml: offset 0x8: line 2: not well-formed XML: namespace prefix a on b is not defined");
	/* fatal: where the parser stopped */
	T_EQ_STR(strict("<s>\n<x>\n</s>\n", b, sizeof b),
		 "f.xml: offset 0xc: line 3: not well-formed XML: opening and ending tag mismatch: x line 2 and s");
}

static void xml_strict_options(void)
{
	struct apc_err e;
	xmlDoc *doc;
	const char *x = "<e>\n  <c/>\n</e>";

	apc_err_clear(&e);
	doc = apc_xml_read_strict(x, strlen(x), "f.xml", XML_PARSE_NOBLANKS, &e);
	T_ASSERT(doc != NULL);
	if (doc) {
		xmlNode *r = xmlDocGetRootElement(doc);
		/* no blank text node before <c/> */
		T_ASSERT(r && r->children && r->children->type == XML_ELEMENT_NODE);
		xmlFreeDoc(doc);
	}
}

static void counters_check(void)
{
	static const struct {
		const char *list, *why; /* why NULL: taken */
	} c[] = {
		{"a", NULL},
		{"a,b:3,c:0x1F,d:4294967295", NULL},
		{"", "empty counter list (use NAME[:EVENT],...)"},
		{"a,,b", "empty counter name at item 2 (use NAME[:EVENT],...)"},
		{"a,", "empty counter name at item 2 (use NAME[:EVENT],...)"},
		{":3", "empty counter name at item 1 (use NAME[:EVENT],...)"},
		{"a:-1", "item 1: event '-1' is not an event number (0 to 4294967295, decimal or 0x hex)"},
		{"a,b:4294967296", "item 2: event '4294967296' is not an event number (0 to 4294967295, decimal or 0x hex)"},
		{"a: 3", "item 1: event ' 3' is not an event number (0 to 4294967295, decimal or 0x hex)"},
		{"a:0x", "item 1: event '0x' is not an event number (0 to 4294967295, decimal or 0x hex)"},
	};
	char why[256];

	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		int rc = apc_gator_counters_check(c[i].list, why, sizeof why);
		if (!c[i].why) {
			T_EQ_INT(rc, 0);
			char *xml = apc_gator_config_xml(c[i].list);
			T_ASSERT(xml != NULL);
			free(xml);
		} else {
			T_EQ_INT(rc, -1);
			T_EQ_STR(why, c[i].why);
			T_ASSERT(apc_gator_config_xml(c[i].list) == NULL);
		}
	}
	/* octal-looking is decimal, as gatord reads it */
	char *xml = apc_gator_config_xml("a:010");
	T_ASSERT(xml && strstr(xml, "event=\"0xa\""));
	free(xml);
}

void run_tests(void)
{
	T_RUN(xml_strict_reasons);
	T_RUN(xml_strict_options);
	T_RUN(counters_check);
}
