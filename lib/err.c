/*
 * err.c - building and formatting error messages (never printed here).
 */
#include <stdio.h>
#include <string.h>

#include "err.h"

void apc_err_clear(struct apc_err *e)
{
	e->status = APC_OK;
	e->offset = APC_NO_OFFSET;
	e->index = APC_NO_INDEX;
	e->index_name = NULL;
	e->file[0] = '\0';
	e->msg[0] = '\0';
}

int apc_err_vset(struct apc_err *e, int status, const char *file, int64_t offset,
		 const char *fmt, va_list ap)
{
	e->status = status;
	e->offset = offset;
	e->index = APC_NO_INDEX;
	e->index_name = NULL;
	snprintf(e->file, sizeof e->file, "%s", file ? file : "");
	vsnprintf(e->msg, sizeof e->msg, fmt, ap);
	return status;
}

int apc_err_set(struct apc_err *e, int status, const char *file, int64_t offset,
		const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	apc_err_vset(e, status, file, offset, fmt, ap);
	va_end(ap);
	return status;
}

const char *apc_err_lower(const char *text, char *buf, size_t len)
{
	if (len == 0)
		return "";
	snprintf(buf, len, "%s", text ? text : "unknown error");
	/* libxml2's end in a newline, and a few have a second line (the
	 * bytes that are not UTF-8): one line, joined by "; " */
	for (size_t n = strlen(buf); n && (buf[n - 1] == '\n' || buf[n - 1] == ' '); )
		buf[--n] = '\0';
	for (char *nl; (nl = strchr(buf, '\n'));) {
		size_t rest = strlen(nl + 1);
		if ((size_t)(nl - buf) + 2 + rest + 1 > len) {
			*nl = '\0';
			break;
		}
		memmove(nl + 2, nl + 1, rest + 1);
		nl[0] = ';';
		nl[1] = ' ';
	}
	/* "No such file or directory": messages here are lowercase (but
	 * not an acronym such as "EOF") */
	if (buf[0] >= 'A' && buf[0] <= 'Z' && !(buf[1] >= 'A' && buf[1] <= 'Z'))
		buf[0] = (char)(buf[0] - 'A' + 'a');
	return buf;
}

const char *apc_strerror(int errnum, char *buf, size_t len)
{
	return apc_err_lower(strerror(errnum), buf, len);
}

int apc_err_text(struct apc_err *e, int status, const char *file, const char *what,
		 const char *text)
{
	char m[160];

	return apc_err_set(e, status, file, APC_NO_OFFSET, "%s: %s", what,
			   apc_err_lower(text, m, sizeof m));
}

int apc_err_sys(struct apc_err *e, int status, const char *file, const char *what, int errnum)
{
	return apc_err_text(e, status, file, what, strerror(errnum));
}

void apc_err_index(struct apc_err *e, const char *what, int64_t index)
{
	e->index_name = what;
	e->index = index;
}

const char *apc_err_format(const struct apc_err *e, char *buf, size_t len)
{
	size_t n = 0;

	if (len == 0)
		return buf;
	buf[0] = '\0';
#define APPEND(...)                                                            \
	do {                                                                   \
		if (n < len) {                                                 \
			int k = snprintf(buf + n, len - n, __VA_ARGS__);       \
			if (k > 0)                                             \
				n += (size_t)k;                                \
		}                                                              \
	} while (0)
	if (e->file[0])
		APPEND("%s: ", e->file);
	if (e->offset != APC_NO_OFFSET)
		APPEND("offset 0x%llx: ", (unsigned long long)e->offset);
	if (e->index != APC_NO_INDEX && e->index_name)
		APPEND("%s %lld: ", e->index_name, (long long)e->index);
	APPEND("%s", e->msg[0] ? e->msg : "unknown error");
#undef APPEND
	return buf;
}
