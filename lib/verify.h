/*
 * verify.h - the checks behind apcverify: framing, packed integers,
 * ordering and cross-references of one capture, each problem reported
 * with a stable check id, a severity, and the frame and file offset.
 *
 * The engine walks the data file's bytes itself (a verifier must see the
 * raw encodings, e.g. non-minimal packed integers, and must not share the
 * decoder's mistakes), then asks the shared decoder (frame.h) to decode
 * the same frame, so the two are checked against each other.
 */
#ifndef APC_VERIFY_H
#define APC_VERIFY_H

#include <stdint.h>

#include "err.h"

enum apc_vsev {
	APC_V_WARNING = 1,
	APC_V_ERROR = 2
};

/* One problem.  Valid only during the report callback. */
struct apc_vproblem {
	int severity;         /* enum apc_vsev */
	const char *check;    /* stable id, e.g. "ts-core" (static) */
	int64_t frame;        /* 0-based frame index, or -1 */
	int64_t offset;       /* file offset in `member`, or -1 */
	const char *member;   /* "captured.xml", "events.xml", or NULL for the data */
	/* The member as messages name the file: "x.apc/captured.xml",
	 * "x.zip:captured.xml" (as the input layer names members), the
	 * file beside a bare data file; NULL when member is, or when
	 * there is no such file to name (a member that is missing or that
	 * an archive's damage took; beside a bare data file not called
	 * 0000000000). */
	const char *member_file;
	char msg[APC_ERR_MSG];/* lowercase, no full stop */
};

/* The table of checks, for the man page, --help and tests. */
struct apc_vcheck {
	const char *id;
	int severity;         /* usual severity; some have a softer variant */
	const char *what;
};
/* Terminated by an entry whose id is NULL. */
extern const struct apc_vcheck apc_verify_checks[];

/* Totals for one capture. */
struct apc_vresult {
	uint64_t frames;      /* frames read */
	uint64_t data_msgs;   /* Activity, Counter and Block Counter messages */
	uint64_t errors;
	uint64_t warnings;
	int perf_mode;        /* captured.xml type="Perf" or perf frames seen */
};

/*
 * apc_verify_path() : run every check on the capture at path (an .apc
 * folder, an archive of one, a bare 0000000000 file, or "-").  Each
 * problem is passed to report(ctx, p) as it is found (quirk warnings
 * that can repeat many times are summarised once, at the end).  Returns
 * APC_OK when the capture could be read to the end, whatever it
 * contained; a negative status (err set) when it could not be opened or
 * read (problems reported before that still count in *res).
 */
int apc_verify_path(const char *path,
		    void (*report)(void *ctx, const struct apc_vproblem *p), void *ctx,
		    struct apc_vresult *res, struct apc_err *err);

/*
 * apc_capture_tree_check() : whether a folder or archive (a tree input)
 * is a capture, the one rule apcverify and apcdump share.  APC_OK when
 * it has a 0000000000 data file.  APC_EIO (a usage error: wrong input)
 * when it has neither captured.xml nor 0000000000 and is not a damaged
 * archive: "not an .apc capture (no captured.xml, no 0000000000 data
 * file)".  APC_EDATA (a damaged capture) otherwise: "0000000000 is a
 * directory, not a data file", or "no 0000000000 data file in the
 * capture".  err->file is name (the input as messages say it).
 */
struct apc_input;
int apc_capture_tree_check(struct apc_input *in, const char *name, struct apc_err *err);

/*
 * apc_xml_error_msg() : libxml2's message for an XML file that is not
 * well-formed, as every tool words it: "line N: not well-formed XML:
 * WHY", WHY lowercased, its first line, without the " line N" libxml2
 * ends some messages with when that repeats N (one naming another line,
 * where the unclosed tag opened, is kept).  Into buf; returns buf.
 */
const char *apc_xml_error_msg(int line, const char *libxml_msg, char *buf, size_t len);

#endif
