/*
 * pipeline.h - the conversion driver behind apcconv: open the inputs,
 * pick a format, pull batches from its reader, keep the time window the
 * user asked for, and push the events through the APC writer.
 *
 * Status contract: APC_OK; APC_EDATA when the input is bad: what came
 * before the damage was converted and written, or, when the damage is in
 * the headers, nothing was (res->output is empty) -- either way the
 * caller exits 1, and res->data_err holds the damage;
 * APC_EIO / APC_ENOMEM when nothing was written (the output is removed;
 * the caller exits 2), among them an input no format claims (without
 * -f, detection found none: nothing to convert).  An interrupt
 * (apc_pipeline_interrupt) is APC_EIO.
 */
#ifndef APC_PIPELINE_H
#define APC_PIPELINE_H

#include <stdint.h>

#include "err.h"
#include "format.h"
#include "model.h"
#include "perf.h"
#include "writer.h"

struct apc_conv_opts {
	const char *const *inputs; /* one or more input paths ("-" = stdin) */
	size_t ninputs;
	const char *from;          /* -f/--from, or NULL to detect */
	const char *output;        /* -o, or NULL for the default name */
	struct apc_write_opts write;
	uint64_t begin_ns, end_ns; /* keep events with begin <= t < end, t the time in the capture */
	int have_begin, have_end;
	/* Called about every batch with bytes done and total (0 if unknown). */
	void (*progress)(void *ctx, uint64_t done, uint64_t total);
	void *progress_ctx;
	/* Called (when set) with something the user should know before a
	 * long run, not a problem with the data: why it will be slow. */
	void (*notice)(const char *input, const char *msg);
};

struct apc_conv_result {
	const struct apc_format *format; /* the format used */
	char output[4096];               /* the output path written */
	struct apc_model model;          /* metadata, counters, counts, unmapped */
	struct apc_write_stats wstats;
	uint64_t bytes_in;               /* input bytes consumed */
	uint64_t first_ts, last_ts;      /* time span of the events written */
	uint64_t events_cut;             /* events outside --begin/--end */
	uint64_t window_data;            /* events inside it, names and links aside */
	uint64_t perf_cut;               /* perf records outside it (gatord 6.8 perf mode) */
	struct apc_perf perf;            /* the perf events, to read their records' times */
	int have_ts;
	struct apc_err data_err;         /* the damage, whenever status is APC_EDATA */
	int read_ahead;                  /* the reader ran on a thread of its own */
	char kind[32];                   /* the first input as the input layer told it
					  * ("tar", "tar.gz", "gzip", "file"; "" if not):
					  * what to call it when no format was told */
};

/*
 * apc_convert() : run one conversion.  res is filled (free it with
 * apc_conv_result_free) whatever the outcome; err describes a failure.
 */
int apc_convert(const struct apc_conv_opts *o, struct apc_conv_result *res, struct apc_err *err);
void apc_conv_result_free(struct apc_conv_result *res);

/* Ask a running conversion to stop (async-signal-safe). */
void apc_pipeline_interrupt(void);

/*
 * apc_default_output() : the input's base name with its extensions
 * (.bin, .gz, .tar, ...) replaced by ".apc", in the current directory.
 */
void apc_default_output(const char *input, char *out, size_t len);

#endif
