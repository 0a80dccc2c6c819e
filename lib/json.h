/*
 * json.h - writing JSON text: string escaping shared by every --json
 * output, so all of them agree on what a string looks like.
 */
#ifndef APC_JSON_H
#define APC_JSON_H

#include <stddef.h>
#include <stdio.h>

/*
 * apc_json_str() : write s[0..len) as a JSON string with quotes.
 * Control characters, quotes and backslashes are escaped; bytes that are
 * not valid UTF-8 become \ufffd so the output always parses.
 */
void apc_json_str(FILE *f, const char *s, size_t len);
/* Same for a NUL-terminated string; NULL is written as null. */
void apc_json_cstr(FILE *f, const char *s);

#endif
