/*
 * writer.h - the APC writer: model events -> an .apc capture.
 *
 * Output is a folder NAME.apc (captured.xml, session.xml, events.xml,
 * 0000000000) written into a temporary sibling and renamed into place at
 * apc_writer_finish(), or the same folder as an archive (.zip, .tar,
 * .tar.gz by the output name) or a tar stream on stdout ("-").  A failed
 * or aborted run leaves nothing behind.  A process killed outright
 * (SIGKILL) never leaves a half-written NAME.apc either, but its hidden
 * temporary sibling .NAME.apc.tmp-XXXXXX stays until removed by hand.
 *
 * Frames: Summary first (with core names), then frames bounded in size.
 * Per core, messages appear in time order across all frame types: an open
 * frame is flushed before a frame of another type for the same core
 * takes a message.  Events older than the last one written for their
 * core are moved forward to that time and counted (stats.reordered).
 * Annotations go to External frames, one open per client fd (up to 8 at
 * once), flushed when full or at finish: each annotate message carries
 * its own time, so those frames are not ordered against the others.
 * Output is deterministic: same model and events, same bytes.
 */
#ifndef APC_WRITER_H
#define APC_WRITER_H

#include "err.h"
#include "model.h"

struct apc_write_opts {
	int overwrite;          /* replace an existing output */
	const char *events_file;/* --events=FILE: extra/overriding events.xml */
	int64_t created;        /* captured.xml created=; -1: model or SOURCE_DATE_EPOCH or 0 */
	uint32_t frame_max;     /* flush frames at this body size; 0 = default */
	int annotate_version;   /* External frames' annotate version; 0 = smallest that fits */
	const char *stream_name;/* a tar stream's folder (NAME.apc; NULL: capture.apc) */
};

struct apc_write_stats {
	uint64_t frames;            /* frames written */
	uint64_t bytes;             /* bytes of 0000000000 */
	uint64_t frames_by_type[16];
	uint64_t messages;          /* messages written */
	uint64_t reordered;         /* events moved forward to keep per-core order */
	uint64_t dropped;           /* events the writer could not express (counted per kind in the model) */
	int write_thread;           /* the data file was written from a helper thread */
};

struct apc_writer;

/*
 * apc_writer_open() : prepare output `out`: a folder (".apc" is appended
 * to a name without it; "." and ".." are refused), an archive by its
 * extension in any case (.zip, .tar, .tar.gz/.tgz, .tar.bz2/.tbz2,
 * .tar.xz/.txz), or "-", a tar stream on stdout; an existing device or
 * FIFO (/dev/null) takes that tar stream too.  Fails if it exists,
 * unless overwrite.
 */
int apc_writer_open(const char *out, const struct apc_write_opts *o, struct apc_writer **w,
		    struct apc_err *err);
/* The output path actually used (with .apc added). */
const char *apc_writer_path(const struct apc_writer *w);
/*
 * apc_writer_begin() : the model's metadata is complete; write the
 * Summary and core names.  The model must outlive the writer (counter
 * declarations may still be added until finish).
 */
int apc_writer_begin(struct apc_writer *w, struct apc_model *m, struct apc_err *err);
int apc_writer_write(struct apc_writer *w, const struct apc_batch *b, struct apc_err *err);
/*
 * apc_writer_view() : the model as the reader left it after reading the
 * batches about to be written: how many counters were declared, and
 * meta.monotonic_delta.  A driver whose reader runs ahead on another
 * thread calls it before each write, so the writer never reads what the
 * reader is changing (declarations past ncounters may be half made; the
 * model's counter array itself is only read under model->lock).
 * Without it the writer reads both from the model.  Counter values and
 * what the writer could not express are kept in the writer and added to
 * the model by apc_writer_finish().
 */
void apc_writer_view(struct apc_writer *w, size_t ncounters, uint64_t monotonic_delta);
/* apc_writer_zero() : the model time the writer writes as 0 (the
 * capture's start, where apcdump and Streamline count time from). */
uint64_t apc_writer_zero(const struct apc_writer *w);
/* Flush, write the XML files, and move the capture into place. */
int apc_writer_finish(struct apc_writer *w, struct apc_err *err);
/* Discard everything written (temporary files removed) and free. */
void apc_writer_abort(struct apc_writer *w);
/* Free after finish. */
void apc_writer_free(struct apc_writer *w);
const struct apc_write_stats *apc_writer_stats(const struct apc_writer *w);
/*
 * apc_writer_has_data() : an Activity, Counter or Block Counter message
 * (or a perf data frame, carried over from a perf-mode capture) has been
 * written.  A capture without one is invalid (the spec; apcverify's
 * no-data error): Streamline cannot open it.
 */
int apc_writer_has_data(const struct apc_writer *w);

#endif
