/*
 * targets.c - the fuzz entry points (see targets.h).  Compiled into each
 * libFuzzer binary (make fuzz) and #included by the plain replay driver
 * tests/unit/test_fuzz_regress.c, so both run the same code.
 *
 * Readers take paths, so each call installs its input as in-memory files
 * (apc_input_mem_set in lib/input.h) under the fake root FZ_ROOT: the
 * readers, verify and dump open them through the ordinary input layer
 * without a byte touching the file system.
 */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libxml/parser.h>

#include "annotate.h"
#include "dump.h"
#include "format.h"
#include "frame.h"
#include "input.h"
#include "ltt.h"
#include "model.h"
#include "pipeline.h"
#include "targets.h"
#include "tptp.h"
#include "verify.h"

extern const struct apc_format apc_format_apc, apc_format_barman, apc_format_annotate;

/* A reader that keeps returning APC_OK without ending is a hang. */
#define FZ_MAX_BATCHES 100000
/* Where the in-memory inputs live (nothing on disk is ever looked at
 * while they are installed). */
#define FZ_ROOT "/apcfuzz"
/* Most members a tree target has. */
#define FZ_MAX_MEMBERS 16

static struct apc_mem_file fz_mem[FZ_MAX_MEMBERS];
static char fz_names[FZ_MAX_MEMBERS][256];

/* Once per process: libxml2 must never print or fetch anything. */
static void fz_init(void)
{
	static int done;

	if (!done) {
		xmlSetGenericErrorFunc(NULL, NULL);
		/* An input that looks like an archive is spooled to a temporary
		 * file (as from a pipe): keep that in memory too when we can. */
		if (!getenv("TMPDIR") && access("/dev/shm", W_OK) == 0)
			setenv("TMPDIR", "/dev/shm", 1);
		done = 1;
	}
}

/* Install data as the one in-memory file FZ_ROOT/leaf; returns its path. */
static const char *fz_file(const uint8_t *data, size_t size, const char *leaf)
{
	fz_init();
	snprintf(fz_names[0], sizeof fz_names[0], "%s/%s", FZ_ROOT, leaf);
	fz_mem[0].path = fz_names[0];
	fz_mem[0].data = data;
	fz_mem[0].len = size;
	apc_input_mem_set(fz_mem, 1);
	return fz_names[0];
}

/*
 * fz_tree() : split data at FZ_SEP and install section i as the file
 * FZ_ROOT/leaf/names[i]; empty sections and sections past the list are
 * left out (the folder exists even with no files).  Returns its path.
 */
static const char *fz_tree(const uint8_t *data, size_t size, const char *leaf,
			   const char *const *names, size_t nnames)
{
	static char root[64];
	size_t i = 0, k = 0;

	fz_init();
	snprintf(root, sizeof root, "%s/%s", FZ_ROOT, leaf);
	/* The folder itself, so it exists even when every section is empty. */
	fz_mem[k].path = root;
	fz_mem[k].data = NULL;
	fz_mem[k].len = 0;
	k++;
	while (i < nnames && k < FZ_MAX_MEMBERS) {
		const uint8_t *sep = memmem(data, size, FZ_SEP, FZ_SEP_LEN);
		size_t n = sep ? (size_t)(sep - data) : size;
		if (n) {
			snprintf(fz_names[k], sizeof fz_names[k], "%s/%s", root, names[i]);
			fz_mem[k].path = fz_names[k];
			fz_mem[k].data = data;
			fz_mem[k].len = n;
			k++;
		}
		i++;
		if (!sep)
			break;
		data = sep + FZ_SEP_LEN;
		size -= n + FZ_SEP_LEN;
	}
	apc_input_mem_set(fz_mem, k);
	return root;
}

/* Touch what an event points to, so a dangling pointer shows under ASan,
 * and check what the writer relies on. */
static void fz_check_event(const struct apc_model *m, const struct apc_event *e)
{
	volatile size_t sink = 0;

	if (e->type < 1 || e->type >= APC_EV_TYPE_COUNT)
		abort();
	switch (e->type) {
	case APC_EV_COUNTER:
		if (e->u.counter.counter >= m->ncounters)
			abort();
		break;
	case APC_EV_ACTIVITY:
		if (e->u.activity.counter >= m->ncounters)
			abort();
		break;
	case APC_EV_COUNTERS:
		for (uint32_t i = 0; i < e->u.counters.n; i++) {
			if (e->u.counters.ids[i] >= m->ncounters)
				abort();
			sink += (size_t)e->u.counters.values[i];
		}
		break;
	case APC_EV_THREAD_NAME:
	case APC_EV_COOKIE_NAME:
		if (e->u.name.name)
			sink += strlen(e->u.name.name);
		break;
	case APC_EV_PROC:
		if (e->u.proc.image)
			sink += strlen(e->u.proc.image);
		if (e->u.proc.comm)
			sink += strlen(e->u.proc.comm);
		break;
	case APC_EV_SAMPLE:
		for (uint32_t i = 0; i < e->u.sample.depth; i++)
			sink += (size_t)e->u.sample.pcs[i].offset;
		break;
	case APC_EV_ANNOTATION: {
		const struct apc_ann *a = e->u.ann;
		if (!a)
			abort();
		for (size_t i = 0; a->text && i < a->text_len; i++)
			sink += a->text[i];
		for (size_t i = 0; a->data && i < a->data_len; i++)
			sink += a->data[i];
		for (uint32_t i = 0; a->deps && i < a->ndeps; i++)
			sink += (size_t)a->deps[i];
		break;
	}
	case APC_EV_RAW_FRAME:
		for (uint32_t i = 0; i < e->u.raw.len; i++)
			sink += e->u.raw.bytes[i];
		break;
	default:
		break;
	}
	(void)sink;
}

/*
 * fz_read_all() : open `path` as the input of format `fmt` (or of the
 * detected format when fmt is NULL) and pull every batch, as the
 * pipeline does minus the writer.  The batch lives as long as the
 * process, as it does in a pipeline run: freeing its arena every call
 * made each input pay for a fresh 256 KiB mapping under ASan.
 */
static void fz_read_all(const char *path, const struct apc_format *fmt)
{
	static struct apc_batch b;
	static int have_batch;
	struct apc_input *in = NULL;
	struct apc_err err;
	struct apc_model m;
	struct apc_reader r;
	int bid, rc;

	if (apc_input_open(path, &in, &err) < 0)
		return;
	/* Bids only peek.  On a tree every format bids; on a stream only
	 * the target's own: the Barman bid memcmp()s for its magic at every
	 * offset of the 64 KiB look-ahead, which libFuzzer's memcmp hook
	 * made most of each call of the other targets, for edges its own
	 * target covers anyway. */
	if (!fmt || apc_input_is_tree(in)) {
		const struct apc_format *det = apc_format_detect(in, &bid);
		if (!fmt)
			fmt = det;
	} else {
		bid = fmt->bid ? fmt->bid(in) : 0;
	}
	(void)bid;
	if (!fmt) {
		apc_input_close(in);
		return;
	}
	apc_model_init(&m);
	memset(&r, 0, sizeof r);
	r.fmt = fmt;
	r.inputs = &in;
	r.ninputs = 1;
	r.model = &m;
	apc_err_clear(&r.err);
	if (!have_batch) {
		apc_batch_init(&b, 1024);
		have_batch = 1;
	}
	apc_batch_reset(&b);
	rc = fmt->open(&r);
	for (long i = 0; rc >= 0; i++) {
		if (i == FZ_MAX_BATCHES) {
			fprintf(stderr, "apcfuzz: %s reader still going after %d batches\n",
				fmt->name, FZ_MAX_BATCHES);
			abort();
		}
		apc_batch_reset(&b);
		rc = fmt->next(&r, &b);
		for (size_t k = 0; k < b.n; k++)
			fz_check_event(&m, &b.ev[k]);
		if (rc == APC_END)
			break;
	}
	if (fmt->close)
		fmt->close(&r);
	apc_batch_reset(&b);
	apc_model_free(&m);
	apc_input_close(in);
}

/* ---- the targets ------------------------------------------------------ */

int apc_fuzz_barman(const uint8_t *data, size_t size)
{
	fz_read_all(fz_file(data, size, "barman.bin"), &apc_format_barman);
	return 0;
}

int apc_fuzz_tptp_bin(const uint8_t *data, size_t size)
{
	fz_read_all(fz_file(data, size, "trace.trcbin"), &apc_format_tptp_bin);
	return 0;
}

int apc_fuzz_tptp_xml(const uint8_t *data, size_t size)
{
	fz_read_all(fz_file(data, size, "trace.trcxml"), &apc_format_tptp_xml);
	return 0;
}

/* LTT tree members, in section order: the block files come first so a
 * seed of one plain CPU file still means something. */
static const char *const fz_ltt_members[] = {
	"cpu/0", "info/system.xml", "eventdefs/core.xml", "control/facilities",
	"control/processes", "control/interrupts", "cpu/1", "eventdefs/extra.xml",
	"info/bookmarks.xml",
};

int apc_fuzz_ltt_block(const uint8_t *data, size_t size)
{
	const char *root = fz_tree(data, size, "ltt", fz_ltt_members,
				   sizeof fz_ltt_members / sizeof fz_ltt_members[0]);
	fz_read_all(root, &apc_format_ltt);
	return 0;
}

/*
 * Eventdefs: section 0 is an eventdefs file, section 1 payload bytes
 * every compiled event is sized and searched in; the first byte of
 * section 1 picks the architecture and byte order.  The same text also
 * goes through the tolerant parser alone and through libxml2 with the
 * options the LTT reader uses for system.xml.
 */
int apc_fuzz_eventdefs(const uint8_t *data, size_t size)
{
	static const char *const archs[] = {"ILP32", "LP64", "ILP64", "LLP64"};
	const uint8_t *sep = memmem(data, size, FZ_SEP, FZ_SEP_LEN);
	size_t dlen = sep ? (size_t)(sep - data) : size;
	const uint8_t *pay = sep ? sep + FZ_SEP_LEN : (const uint8_t *)"";
	size_t plen = sep ? size - dlen - FZ_SEP_LEN : 0;
	struct apc_ltt_defs defs = {0};
	struct apc_ltt_arch arch = {0};
	struct apc_ltt_xnode *root;
	struct apc_err err;
	uint8_t mode = plen ? pay[0] : 0;

	/* The tolerant parser alone, for system.xml's lookups; only when the
	 * text names a system (apc_ltt_defs_add below parses every input
	 * again, and parsing was half of each call). */
	if (memmem(data, dlen, "system", 6) &&
	    apc_ltt_xml_parse((const char *)data, dlen, "fuzz.xml", &root, &err) == APC_OK) {
		const struct apc_ltt_xnode *sys = apc_ltt_xml_child(root, "system");
		if (sys) {
			volatile const char *v = apc_ltt_xml_attr(sys, "ltt_block_size");
			(void)v;
		}
		apc_ltt_xml_free(root);
	}
	xmlDocPtr doc = xmlReadMemory((const char *)data, (int)(dlen > 1u << 30 ? 1u << 30 : dlen),
				      "system.xml", NULL,
				      XML_PARSE_RECOVER | XML_PARSE_NONET | XML_PARSE_NOERROR |
					      XML_PARSE_NOWARNING);
	if (doc)
		xmlFreeDoc(doc);

	/* A cut file (most inputs) keeps its whole part: compile that too. */
	int dst = apc_ltt_defs_add(&defs, (const char *)data, dlen, "eventdefs/fuzz.xml", &err);
	if (dst == APC_OK || (dst == APC_EDATA && defs.cut)) {
		if (apc_ltt_arch_set(&arch, archs[mode & 3]))
			apc_ltt_arch_set(&arch, "ILP32");
		arch.big_endian = (mode >> 2) & 1;
		if (apc_ltt_defs_compile(&defs, &arch, &err) == APC_OK) {
			/* The reader's id table (sized by the ids used), not the
			 * 65536-entry map: clearing that was most of each call. */
			struct apc_ltt_ids ids;
			if (apc_ltt_ids_build(&ids, &defs, &err) == APC_OK) {
				for (uint32_t k = 0; k < ids.n; k++)
					if (!ids.ev[k] != !ids.fac[k])
						abort();
				apc_ltt_ids_free(&ids);
			}
			for (size_t f = 0; f < defs.nfacs; f++)
				for (size_t e = 0; e < defs.facs[f].nevents; e++) {
					const struct apc_ltt_evdef *ev = &defs.facs[f].events[e];
					for (size_t off = 0; off < plen && off < 64; off += 7) {
						int64_t n = apc_ltt_payload_len(ev, pay + off, plen - off,
										 arch.big_endian);
						if (n > (int64_t)(plen - off))
							abort();
						if (ev->fixed >= 0 && n >= 0 && n != ev->fixed)
							abort();
						if (ev->type && ev->type->kind == APC_LTT_STRUCT)
							for (size_t k = 0; k < ev->type->nfields; k++) {
								uint64_t u;
								const char *s;
								size_t sl;
								const char *fn = ev->type->fields[k].name;
								if (!fn)
									continue;
								(void)apc_ltt_field_u64(ev, pay + off, plen - off,
										arch.big_endian, fn, &u);
								if (apc_ltt_field_str(ev, pay + off, plen - off,
										arch.big_endian, fn, &s, &sl) == 0 &&
								    (s < (const char *)pay + off ||
								     s + sl > (const char *)pay + plen))
									abort();
							}
					}
				}
		}
	}
	apc_ltt_defs_free(&defs);
	return 0;
}

/* .apc folder members, in section order. */
static const char *const fz_apc_members[] = {"0000000000", "captured.xml", "events.xml"};

/* Frames of the data file at path, each decoded into messages with the
 * Summary read as having `clocks` clocks (0 = guess, as apcdump does). */
static void fz_frames(const char *path, int clocks)
{
	struct apc_stream *s;
	struct apc_frame_reader *fr;
	struct apc_frame f;
	struct apc_err err;

	if (apc_stream_open_path(path, &s, &err) < 0)
		return;
	if (apc_frame_reader_new(s, &fr, &err) == APC_OK) {
		while (apc_frame_read(fr, &f, &err) == APC_OK) {
			struct apc_msg_iter it;
			struct apc_msg m;
			int rc;
			apc_msg_iter_init(&it, &f, clocks);
			for (int k = 0; k < 100000; k++) {
				rc = apc_msg_next(&it, &m, &err);
				if (rc == APC_END)
					break;
				if (rc != APC_OK)
					continue; /* the iterator skips the rest of the frame */
				if (m.nfields > APC_MSG_MAX_FIELDS)
					abort();
				for (size_t i = 0; i < m.nfields; i++)
					if (m.f[i].kind != APC_F_INT && m.f[i].kind != APC_F_HEX &&
					    m.f[i].len && (m.f[i].s < f.body ||
							   m.f[i].s + m.f[i].len > f.body + f.len))
						abort();
			}
		}
		apc_frame_reader_free(fr);
	}
	apc_stream_close(s);
}

/*
 * APC: the frame reader and message decoder over the data section (the
 * Summary's clock count guessed for even sizes, 4 for odd), then
 * the APC reader: on the whole folder (0000000000, captured.xml,
 * events.xml) when there is a separator, else on a bare 0000000000.
 * (Reading a folder's data section again as a bare file ran the same
 * frame code a second time; inputs without a separator cover bare.)
 */
int apc_fuzz_apc(const uint8_t *data, size_t size)
{
	const uint8_t *sep = memmem(data, size, FZ_SEP, FZ_SEP_LEN);
	const char *bare = fz_file(data, sep ? (size_t)(sep - data) : size, "0000000000");

	/* One decoding pass, guessing the clocks or told four by the size's
	 * parity: both passes for every input were most of the time. */
	fz_frames(bare, size & 1 ? 4 : 0);
	if (sep)
		fz_read_all(fz_tree(data, size, "cap.apc", fz_apc_members, 3), &apc_format_apc);
	else
		fz_read_all(bare, &apc_format_apc);
	return 0;
}

/*
 * Annotate: the decoder fed in slices (the first byte sets the slice
 * size, as External frames cut the stream anywhere), each message turned
 * into fields and encoded again; then the Annotate reader on the bytes.
 */
int apc_fuzz_annotate(const uint8_t *data, size_t size)
{
	struct apc_ann_decoder *d = apc_ann_decoder_new("fuzz");
	size_t step = size ? (size_t)data[0] % 61 + 1 : 1;
	struct apc_err err;

	if (!d)
		abort();
	for (size_t pos = 0; pos < size; pos += step) {
		size_t n = size - pos < step ? size - pos : step;
		if (apc_ann_decoder_feed(d, data + pos, n, &err) != APC_OK)
			break;
		for (int k = 0; k < 100000; k++) {
			struct apc_ann_msg m;
			struct apc_msg fm;
			struct apc_buf b = {0};
			int rc = apc_ann_decoder_next(d, &m, &err);
			if (rc == APC_END)
				break;
			if (rc != APC_OK)
				continue;
			apc_ann_to_msg(&m, &fm);
			if (!m.is_setup && m.version >= 3 && m.version <= 5)
				(void)apc_ann_encode(&b, m.version, m.ts, &m.ann);
			apc_buf_free(&b);
		}
		if (apc_ann_decoder_pending(d) > size)
			abort();
	}
	apc_ann_decoder_free(d);
	fz_read_all(fz_file(data, size, "client.ann"), &apc_format_annotate);
	return 0;
}

static void fz_vreport(void *ctx, const struct apc_vproblem *p)
{
	volatile size_t n = strlen(p->msg) + strlen(p->check);
	(void)ctx;
	(void)n;
}

static void fz_dreport(void *ctx, const struct apc_err *e)
{
	(void)ctx;
	(void)e;
}

/*
 * Verify the capture, then dump it in one of the three modes (text with
 * hex, JSON, JSON summary), picked by `mode`: every mode for every input
 * tripled the time for edges the other inputs reach anyway.
 */
static void fz_verify_dump(const char *path, unsigned mode)
{
	static FILE *null;
	struct apc_vresult res;
	struct apc_err err;
	struct apc_dump_opts o;

	if (!null && !(null = fopen("/dev/null", "w")))
		abort();
	memset(&res, 0, sizeof res);
	(void)apc_verify_path(path, fz_vreport, NULL, &res, &err);
	apc_dump_opts_init(&o);
	o.out = null;
	o.report = fz_dreport;
	o.json = mode == 1;
	o.summary = mode == 2;
	o.hex = mode == 0;
	(void)apc_dump_path(path, &o);
}

/* apcverify (and apcdump) on the whole folder when the input has a
 * separator, else on the data as a bare file; the input's size modulo 3
 * picks the dump mode, so a replayed input takes the same one. */
int apc_fuzz_verify(const uint8_t *data, size_t size)
{
	const uint8_t *sep = memmem(data, size, FZ_SEP, FZ_SEP_LEN);
	unsigned mode = (unsigned)(size % 3);

	if (sep)
		fz_verify_dump(fz_tree(data, size, "v.apc", fz_apc_members, 3), mode);
	else
		fz_verify_dump(fz_file(data, size, "0000000000"), mode);
	return 0;
}

/* ---- convert: reader, writer and verifier together -------------------- */

/* A problem in a capture our own writer made: print it, to abort after. */
static void fz_convert_report(void *ctx, const struct apc_vproblem *p)
{
	const char *fmt = ctx;

	if (p->severity == APC_V_ERROR)
		fprintf(stderr, "apcfuzz: %s input gave a capture with error %s (frame %lld, %s offset %lld): %s\n",
			fmt, p->check, (long long)p->frame, p->member ? p->member : "data",
			(long long)p->offset, p->msg);
}

static char fz_dir[256];

static int fz_rm_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void fz_out_dir_remove(void)
{
	(void)nftw(fz_dir, fz_rm_cb, 8, FTW_DEPTH | FTW_PHYS);
}

/* Where converted captures go: a folder of this process's own, in
 * memory when /dev/shm is there (fz_init points TMPDIR at it), removed
 * when the process exits. */
static const char *fz_out_dir(void)
{
	if (!fz_dir[0]) {
		const char *tmp = getenv("TMPDIR");
		snprintf(fz_dir, sizeof fz_dir, "%s/apcfuzz.XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(fz_dir))
			abort();
		atexit(fz_out_dir_remove);
	}
	return fz_dir;
}

/*
 * fz_convert() : convert the installed in-memory input `in` of format
 * `name` into out.apc in fz_out_dir(), as apcconv --overwrite does, and
 * take the in-memory files away.  res is filled (free it); returns the
 * status of apc_convert().
 */
static int fz_convert(const char *in, const char *name, int window, struct apc_conv_result *res)
{
	struct apc_conv_opts o;
	struct apc_err err;
	char out[300];
	int rc;

	snprintf(out, sizeof out, "%s/out.apc", fz_out_dir());
	memset(&o, 0, sizeof o);
	o.inputs = &in;
	o.ninputs = 1;
	o.from = name;
	o.output = out;
	o.write.overwrite = 1;
	o.write.created = -1;
	if (window) {
		/* --begin 1us --end 1ms: inputs' times start near 0 */
		o.have_begin = o.have_end = 1;
		o.begin_ns = 1000;
		o.end_ns = 1000000;
	}
	memset(res, 0, sizeof *res);
	rc = apc_convert(&o, res, &err);
	apc_input_mem_set(NULL, 0);
	return rc;
}

/*
 * apcconv end to end.  The first byte picks the input format (modulo
 * the table) and whether --begin/--end cut (the next bit of its value
 * divided by the table's size); the rest is that format's input, laid
 * out as for its own target (trees split at FZ_SEP).  The conversion
 * runs as apcconv runs it - read-ahead and write-behind threads, the
 * writer, the output folder - and whenever it leaves a capture,
 * apcverify must find no error in it: whatever a reader lets through,
 * the writer has to turn into a valid capture.
 */
int apc_fuzz_convert(const uint8_t *data, size_t size)
{
	static const char *const names[] = {"barman", "tptp-bin", "tptp-xml", "annotate", "ltt", "apc"};
	struct apc_conv_result res;
	struct apc_vresult vr;
	struct apc_err err;
	const char *in, *name;
	int rc;

	if (size < 1)
		return 0;
	name = names[data[0] % (sizeof names / sizeof names[0])];
	int window = (data[0] / (sizeof names / sizeof names[0])) & 1;
	data++;
	size--;
	if (strcmp(name, "ltt") == 0)
		in = fz_tree(data, size, "ltt", fz_ltt_members, sizeof fz_ltt_members / sizeof fz_ltt_members[0]);
	else if (strcmp(name, "apc") == 0 && memmem(data, size, FZ_SEP, FZ_SEP_LEN))
		in = fz_tree(data, size, "cap.apc", fz_apc_members, 3);
	else
		in = fz_file(data, size, strcmp(name, "apc") == 0 ? "0000000000" : "input");
	rc = fz_convert(in, name, window, &res);
	if ((rc == APC_OK || rc == APC_EDATA) && res.output[0]) {
		memset(&vr, 0, sizeof vr);
		if (apc_verify_path(res.output, fz_convert_report, (void *)name, &vr, &err) < 0) {
			fprintf(stderr, "apcfuzz: cannot verify %s: %s\n", res.output, err.msg);
			abort();
		}
		if (vr.errors)
			abort();
	}
	apc_conv_result_free(&res);
	return 0;
}

int (*apc_fuzz_find(const char *name))(const uint8_t *, size_t)
{
	static const struct {
		const char *name;
		int (*fn)(const uint8_t *, size_t);
	} t[] = {
		{"barman", apc_fuzz_barman},       {"ltt_block", apc_fuzz_ltt_block},
		{"eventdefs", apc_fuzz_eventdefs}, {"tptp_bin", apc_fuzz_tptp_bin},
		{"tptp_xml", apc_fuzz_tptp_xml},   {"apc", apc_fuzz_apc},
		{"annotate", apc_fuzz_annotate},   {"verify", apc_fuzz_verify},
		{"convert", apc_fuzz_convert},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		if (strcmp(t[i].name, name) == 0)
			return t[i].fn;
	return NULL;
}
