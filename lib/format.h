/*
 * format.h - the reader interface and the format table.
 *
 * Each input format is one file in formats/ that defines one
 * `const struct apc_format` (as libarchive does with its format
 * descriptors), listed once in formats/table.c.  The driver picks a
 * format by asking each one to bid on the input, then pulls batches of
 * events from it until APC_END.
 */
#ifndef APC_FORMAT_H
#define APC_FORMAT_H

#include "err.h"
#include "input.h"
#include "model.h"

struct apc_reader;

/* Options a reader may honour. */
struct apc_read_opts {
	int verbose;
	uint64_t window_ns; /* reordering window for out-of-order sources */
};

struct apc_format {
	const char *name;        /* "barman", used by -f/--from */
	const char *description; /* one line for --list-formats */
	const char *reads;       /* what it accepts: "file", "directory or archive" */
	int many_inputs;         /* reads every input given (else only one is allowed) */
	/*
	 * bid() : how sure is this format that `in` is its kind?  0 = not
	 * mine, 100 = magic matched.  Only peeks; never consumes input.
	 */
	int (*bid)(struct apc_input *in);
	/*
	 * open() : read headers and fill r->model->meta (cores, clock, target
	 * name) and any counter declarations known up front.  r->priv is the
	 * reader's own state.
	 */
	int (*open)(struct apc_reader *r);
	/*
	 * next() : append events to b (which the driver has reset) in time
	 * order per core.  Returns APC_OK when it added events (b may be
	 * partly filled), APC_END when there are no more, or a negative
	 * status with r->err set; events already in b are valid and will be
	 * kept (salvage), and next() is not called again.
	 */
	int (*next)(struct apc_reader *r, struct apc_batch *b);
	/*
	 * report() : optional; fill r->model->kinds with the records read per
	 * kind and what each became.  Called once before close().
	 */
	void (*report)(struct apc_reader *r);
	/* close() : free r->priv.  Called once, even after failures. */
	void (*close)(struct apc_reader *r);
	/*
	 * read_ahead : 1 when next() may run on a thread of its own, one
	 * batch ahead of the writer (lib/pipeline.c): the events it adds
	 * point only into their batch's arena or into memory that lives
	 * until close(), so an earlier batch stays valid across the next
	 * call; and it changes the model only through the apc_model_*()
	 * functions and fields no writer reads before finish (new counter
	 * declarations, meta, unmapped and record counts).
	 */
	int read_ahead;
};

struct apc_reader {
	const struct apc_format *fmt;
	struct apc_input **inputs; /* inputs[0] is the main input */
	size_t ninputs;            /* >1 only for formats that take several */
	struct apc_model *model;
	struct apc_read_opts opts;
	struct apc_err err;
	void *priv;
	/* Set by readers that know them: bytes consumed / total (progress). */
	uint64_t progress_done, progress_total;
	/* Bytes in (after decompression), where progress_done counts
	 * compressed bytes; 0: progress_done is bytes in. */
	uint64_t bytes_in;
	/* Data damage after which the reader salvaged and stopped. */
	int damaged;
	/*
	 * Set by open() for sources whose streams are each in order but
	 * interleaved out of order (gatord buffers): the driver restores time
	 * order over a window of this many events.  0 = already in order.
	 */
	size_t reorder_events;
};

/* The table of formats present in this build, NULL-terminated
 * (formats/table.c). */
const struct apc_format *const *apc_format_list(void);

const struct apc_format *apc_format_find(const char *name);
/*
 * apc_format_detect() : the format with the highest bid (>0) for `in`,
 * or NULL.  *bid receives the winning bid.
 */
const struct apc_format *apc_format_detect(struct apc_input *in, int *bid);
/*
 * apc_format_foreign() : for the tools that read APC captures only
 * (apcdump, apcverify).  1 when detection takes `in` for another format
 * apcconv converts, with err set (APC_EIO, naming the input): "not an
 * APC capture but barman input: convert it with apcconv first"; else 0.
 * Only peeks, as the bids do.
 */
int apc_format_foreign(struct apc_input *in, struct apc_err *err);

#endif
