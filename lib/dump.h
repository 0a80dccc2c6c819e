/*
 * dump.h - the engine behind apcdump: list a capture's messages as text
 * or JSON Lines, print captured.xml as key: value lines, or summarise a
 * capture (frames and messages per type, counters, channels, cores,
 * threads, time span and order).
 *
 * The listing goes to opts->out; problems go to opts->report one by one
 * (the library never prints them itself), so a command decides how they
 * look and keeps going.
 */
#ifndef APC_DUMP_H
#define APC_DUMP_H

#include <stdint.h>
#include <stdio.h>

#include "err.h"

/* Frame codes kept in a table (0..APC_DUMP_TYPES-1); a --frame list
 * may name up to APC_DUMP_MORE_TYPES codes outside it too (an unknown
 * type is any 32-bit code the frame's packed integer holds). */
#define APC_DUMP_TYPES 128
#define APC_DUMP_MORE_TYPES 16

struct apc_dump_opts {
	FILE *out;
	int json;        /* JSON Lines (listing) or one object (summary, xml) */
	int summary;     /* --summary instead of the listing */
	int xml;         /* captured.xml header instead of the listing */
	int hex;         /* xxd-style bytes after each listed frame */
	int verbose;     /* text: show whole byte fields, not the first 16 */
	int have_frames; /* list only frame types set in frames[] */
	uint8_t frames[APC_DUMP_TYPES];
	int32_t more_frames[APC_DUMP_MORE_TYPES]; /* codes outside frames[] */
	int nmore_frames;
	int empty_frames; /* zero-length frames, which have no code ("empty") */
	int have_core;
	int32_t core;
	int have_begin, have_end; /* ns, zero-based as written */
	int64_t begin, end;
	uint64_t count;  /* stop after this many lines per input; 0 = all */
	/* Several inputs: the listing names each one, text with a line
	 * "==> FILE <==" before its lines, JSON with a "file" member first
	 * in each object. */
	int name_inputs;
	/* Called for each problem found (data or I/O); may be NULL.  Also
	 * for each warning (what apcverify only warns of: an unknown
	 * message code), which comes with e->status APC_OK and a message
	 * starting "warning: ", and makes no problem of the capture. */
	void (*report)(void *ctx, const struct apc_err *e);
	void *report_ctx;
};

/* Defaults: text to stdout, no filters. */
void apc_dump_opts_init(struct apc_dump_opts *o);

/*
 * apc_dump_parse_frames() : "summary,5,block_counter" -> o->frames.
 * Names are those the listing gives a frame's type: apc_frame_type_name()
 * (also "perf_attrs" for 11), "type_N" for any code N, "empty" for a
 * zero-length frame; numbers (negative ones too) are frame codes.
 * APC_OK, or APC_EIO with err set for a name that is not a frame type.
 */
int apc_dump_parse_frames(struct apc_dump_opts *o, const char *list, struct apc_err *err);

/*
 * apc_dump_path() : dump one capture (.apc folder, archive of one, bare
 * 0000000000 file, or "-").  Returns APC_OK, APC_EDATA if the data had
 * problems (each reported, listing continues where it can), or APC_EIO
 * when the input could not be opened or read.
 */
int apc_dump_path(const char *path, const struct apc_dump_opts *o);

#endif
