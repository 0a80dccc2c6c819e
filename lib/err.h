/*
 * err.h - status codes and error messages with file/offset context.
 *
 * The library never prints.  Every call that can fail fills a struct
 * apc_err; commands print it as "PROG: FILE: offset 0x1a2b: message".
 */
#ifndef APC_ERR_H
#define APC_ERR_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* Status codes.  Negative values are failures. */
enum apc_status {
	APC_OK = 0,     /* success */
	APC_END = 1,    /* no more data (reader next(), iterators) */
	APC_EDATA = -1, /* the input is damaged or not of the expected form */
	APC_EIO = -2,   /* I/O error, missing file, usage error */
	APC_ENOMEM = -3 /* allocation failed or a limit was hit */
};

#define APC_ERR_MSG 512
#define APC_NO_OFFSET INT64_MIN
#define APC_NO_INDEX INT64_MIN

struct apc_err {
	int status;            /* enum apc_status of the first failure */
	int64_t offset;        /* byte offset in file, or APC_NO_OFFSET */
	int64_t index;         /* frame/record index, or APC_NO_INDEX */
	const char *index_name;/* "frame", "record", ... (static string) */
	char file[256];        /* file the offset refers to ("" if none) */
	char msg[APC_ERR_MSG]; /* lowercase, no full stop */
};

/* Reset to APC_OK with no message. */
void apc_err_clear(struct apc_err *e);
/* apc_err_sys() : an error from errno for `file`: "what: message", the
 * system's message lowercased.  Returns status. */
int apc_err_sys(struct apc_err *e, int status, const char *file, const char *what, int errnum);
/* apc_err_text() : the same for a message that is not an errno's
 * (gai_strerror()). */
int apc_err_text(struct apc_err *e, int status, const char *file, const char *what,
		 const char *text);
/*
 * apc_err_lower() : a system's or a library's message (strerror(),
 * libarchive's, libxml2's) as messages here are, on one line (lines
 * joined by "; "), lowercase unless it starts with an acronym, into
 * buf; returns buf.  apc_strerror() : errnum's message so.
 * Every message that quotes one goes through these.
 */
const char *apc_err_lower(const char *text, char *buf, size_t len);
const char *apc_strerror(int errnum, char *buf, size_t len);

/*
 * apc_err_set() : record a failure.  file may be NULL, offset may be
 * APC_NO_OFFSET.  Returns status so callers can "return apc_err_set(...)".
 * The first failure wins only when e->status is already negative and
 * keep_first is set by apc_err_set_first(); plain set always overwrites.
 */
int apc_err_set(struct apc_err *e, int status, const char *file, int64_t offset,
		const char *fmt, ...) __attribute__((format(printf, 5, 6)));
int apc_err_vset(struct apc_err *e, int status, const char *file, int64_t offset,
		 const char *fmt, va_list ap);

/* Attach a frame/record index to the current message. */
void apc_err_index(struct apc_err *e, const char *what, int64_t index);

/*
 * apc_err_format() : "FILE: offset 0x1a2b: record 12: message" into buf.
 * Returns buf.
 */
const char *apc_err_format(const struct apc_err *e, char *buf, size_t len);

#endif
