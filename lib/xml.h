/*
 * xml.h - an XML file a user gives (apcconv --events, apcrecord
 * --session), read whole and strictly: it is well-formed or refused,
 * with where and why.
 */
#ifndef APC_XML_H
#define APC_XML_H

#include <stddef.h>

#include <libxml/tree.h>

#include "err.h"

/*
 * The largest XML file any tool reads (a capture's captured.xml and
 * events.xml, an --events or --session file): one limit, so that a
 * capture apcconv reads apcdump and apcverify read too.  gatord's are
 * at most a few MB (events.xml of every PMU it knows).
 */
#define APC_XML_FILE_MAX (64u << 20)

/*
 * apc_xml_read_strict() : parse the len bytes at buf, the contents of
 * `file` (as messages name it), into a document, or NULL with err set
 * (APC_EIO, naming file; APC_ENOMEM): an empty file; a first error,
 * told where the parser was at it and in apcverify's words ("offset
 * 0x8d: line 6: not well-formed XML: ..."), even one libxml2 recovers
 * from; entity declarations (refused: each attribute read would expand
 * them again).  libxml2's warnings do not refuse a file.  No network, no
 * XML_PARSE_HUGE (its default limits are what stop expansion attacks);
 * `options` adds libxml2 parser options (XML_PARSE_NOBLANKS).
 */
/*
 * apc_xml_warning() : 1 for a libxml2 error code that is a warning by
 * name (XML_WAR_*): libxml2 raises some at the error level (an odd
 * namespace URI) though the document stays well-formed, so no reader
 * here refuses a file for one.
 */
int apc_xml_warning(int code);

xmlDoc *apc_xml_read_strict(const void *buf, size_t len, const char *file, int options,
			    struct apc_err *err);

#endif
