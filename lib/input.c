/*
 * input.c - the input layer: files, stdin, compressed streams (zlib,
 * libbz2, liblzma, libarchive's filters), directories and archives
 * (libarchive) behind one stream/tree interface (see input.h).
 *
 * A stream has three layers: a raw source (a file descriptor read with
 * read(2), a plain tar's member read with pread(2) where its header puts
 * it, or another archive member read with archive_read_data), an
 * optional decoder over it, and a look-ahead buffer on top so format
 * bids can peek without consuming.  Every kind of input is decided from
 * its first bytes, never from its name.
 *
 * Damage to an archive ends its listing, not the input: the members
 * before it are kept and the damage is recorded for the commands to
 * report.  A .tar.gz is listed as our decoder gives it, which says where
 * damage lies and checks the stream to its end, and its members are
 * decoded from seek points noted meanwhile.  Other compressed tars (and
 * a damaged .tar.gz: libarchive lists nothing of one whose compressed
 * stream is cut) are decompressed here, as far as they go, into a
 * temporary file, and listed and read from there as a plain tar; where
 * that file finds no room, they are listed as decoded and each member
 * is decoded from the start.
 */
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <bzlib.h>
#include <lzma.h>
#include <zlib.h>

#include "bytes.h"
#include "input.h"
#include "util.h"

/* Bytes peeked at open to decide what an input is (tar magic is at 257). */
#define IN_SNIFF 512
/* Bytes that tell a compression (an lzma header is 13, and a byte of data). */
#define IN_SNIFF_DEC 14
/* Compressed input buffer of the decoders and the archive callbacks. */
#define IN_BUFSZ 65536
/* Bounds on what a tree may hold, so a hostile archive cannot exhaust memory. */
#define IN_MAX_MEMBERS (1u << 20)
#define IN_MAX_NAME 4096
#define IN_MAX_DEPTH 64
/* Largest single read(2)/inflate request, well below SSIZE_MAX and UINT_MAX. */
#define IN_MAX_IO (1u << 30)

/* gzip seek points (see "gzip seek points" below) */
#define IN_GZ_WIN 32768u              /* deflate's history */
#define IN_GZ_SPAN ((uint64_t)256 << 10) /* decoded bytes between noted points */
#define IN_GZ_RING 16u                /* points noted, the latest kept */
#define IN_GZ_SHARE ((uint64_t)1 << 20) /* a member this close to a kept point uses it */
#define IN_GZ_KEEP 64u                /* points kept for members, at most */
/* Memory liblzma may take to decode (xz -9 needs 65 MiB): more is refused. */
#define IN_LZMA_MEMLIMIT (256u << 20)

/*
 * SRC_RANGE is a plain tar's member: its bytes lie at one place in the
 * archive file and are read there with pread(), so a member cut short
 * by the end of the file still gives every byte it has.  A .tar.gz's
 * member is read the same way from a seek point on, and decoded, and so
 * is a zip member the end of the file cuts (see zip_cut_member).
 */
enum stream_src { SRC_FD, SRC_ARCHIVE, SRC_MEM, SRC_RANGE };

/* Compressions a stream is decoded from (see "decoders" below). */
enum dec_kind { DEC_NONE, DEC_GZIP, DEC_BZIP2, DEC_XZ, DEC_LZMA, DEC_LZIP, DEC_ZSTD, DEC_LZ4,
		DEC_COMPRESS,
		DEC_DEFLATE /* raw deflate data: a zip member's (never told by content) */ };

/*
 * What libarchive reads through: pread() on a shared descriptor, or
 * (dec) a compressed archive's stream as our decoder gives it.
 */
struct arc_src {
	int fd;
	int64_t pos;
	int64_t size;
	struct apc_stream *dec;
	uint8_t buf[IN_BUFSZ];
};

/* Where decoding a gzip file can start: a deflate block's first bit. */
struct gz_point {
	uint64_t out;      /* decoded offset of the block */
	int64_t in;        /* file offset of the first whole byte of it */
	int bits;          /* 1-7: the block starts in the byte before, this many bits from its end */
	int hdr;           /* a gzip header starts at in (the file's start): no history */
	unsigned wlen;     /* bytes of history in win */
	uint8_t *win;
};

/* The points a decoder notes while an archive is listed (the last
 * IN_GZ_RING, at least IN_GZ_SPAN apart). */
struct gz_rec {
	int64_t base;      /* file offset of the stream's raw byte 0 */
	struct gz_point ring[IN_GZ_RING];
	unsigned next, n;
	uint64_t last_out;
};

struct apc_stream {
	char *name;
	enum stream_src src;
	int fd;            /* SRC_FD, SRC_RANGE: descriptor (closed on close if own_fd) */
	int own_fd;
	int seekable;      /* regular file: skip may lseek */
	uint64_t raw_pos;  /* bytes taken from the raw source */
	int64_t raw_size;  /* size of the underlying file, or -1 */
	int64_t size;      /* uncompressed size, or -1 */
	uint64_t offset;   /* uncompressed bytes handed to the caller */
	uint64_t produced; /* uncompressed bytes produced by the lower layers */

	/* SRC_RANGE: where the member's data starts in the archive file,
	 * and how many bytes from there are its (raw) */
	int64_t base;
	uint64_t range;

	/* SRC_ARCHIVE */
	struct archive *ar;
	struct arc_src *asrc;

	/* SRC_MEM: a caller's buffer (apc_input_mem_set), read from raw_pos */
	const uint8_t *mem;
	size_t mem_len;

	/* decoder of a compressed stream (enum dec_kind), DEC_NONE if none */
	int dec;
	int dec_member;    /* input fed since the last member (stream) ended */
	int dec_done;
	int raw_eof;       /* the raw source has ended under the decoder */
	uint8_t *zin;      /* compressed input */
	size_t zin_pend;   /* libarchive decoders: bytes of zin not handed over yet */
	z_stream z;        /* DEC_GZIP, DEC_DEFLATE */
	bz_stream bz;      /* DEC_BZIP2 */
	lzma_stream lz;    /* DEC_XZ, DEC_LZMA, DEC_LZIP */
	struct gz_rec *gzr; /* DEC_GZIP: seek points to note, or NULL */
	int gz_raw;        /* DEC_GZIP: started at a seek point, inside a gzip member */
	unsigned gz_skip;  /* DEC_GZIP: trailer bytes still to pass over */
	struct archive *dar; /* DEC_ZSTD, DEC_LZ4, DEC_COMPRESS: libarchive's raw format */
	const uint8_t *dar_blk; /* its last block, dar_left bytes not given out yet */
	size_t dar_left;

	/* look-ahead */
	uint8_t *la;
	size_t la_off, la_len;

	/* a member decoded from a seek point: its decoded bytes still to come */
	int has_left;
	uint64_t left;

	int src_eof;
	int failed;        /* sticky: every later read returns saved */
	struct apc_err saved;
};

struct in_member {
	char *name;    /* relative path as exposed */
	char *orig;    /* archive entry pathname (NULL for directories) */
	uint64_t index;/* entry index in the archive */
	int64_t data_off; /* plain tar: where its data starts in the file, else -1 */
	int64_t size;  /* its size from the header, or -1 */
	int64_t zoff;  /* .tar.gz: where its data starts in the decoded tar, else -1 */
	int zpt;       /* .tar.gz: the seek point to decode it from (index in gzp), or -1 */
	int64_t zlen;  /* zip member cut short, deflated: the data at data_off is
	                * raw deflate, of at most zlen bytes; else -1 */
};

struct apc_input {
	char *path;
	const char *kind;
	char kindbuf[16];          /* a kind made up here: "tar.bz2" */
	int tree;
	struct apc_stream *stream; /* single-stream inputs */
	int is_dir;
	int arc_fd;                /* archives: the (possibly spooled) file */
	int64_t arc_size;
	char *label;               /* prefix of member stream names */
	struct in_member *mem;
	size_t nmem, capmem;
	struct gz_point *gzp;      /* .tar.gz: seek points kept for members */
	size_t ngzp;
	int copied;                /* a compressed archive read from a decoded copy */
	int reread;                /* ... or, with no room for one, each member from its start */
	char reread_why[160];      /* why there was none: the copy's error */
	const char **names;
	size_t skipped;            /* unsafe members left out */
	int is_mem;                /* a folder of in-memory files */
	/* An archive (or the compressed stream around it) damaged or cut short:
	 * the members before the damage are listed, status APC_OK if none. */
	struct apc_err damage;
};

/* ------------------------------------------------------------------ */
/* errors */

/* Record a failure on the stream; later reads return it again. */
static int st_fail(struct apc_stream *s, int status, int64_t off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int st_fail(struct apc_stream *s, int status, int64_t off, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	apc_err_vset(&s->saved, status, s->name, off, fmt, ap);
	va_end(ap);
	s->failed = 1;
	return status;
}

static void st_copy_err(const struct apc_stream *s, struct apc_err *err)
{
	if (err)
		*err = s->saved;
}

static int in_nomem(struct apc_err *err)
{
	return apc_err_set(err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
}

/* ------------------------------------------------------------------ */
/* stream construction */

static struct apc_stream *stream_new(const char *name)
{
	struct apc_stream *s = calloc(1, sizeof *s);

	if (!s)
		return NULL;
	s->name = strdup(name);
	if (!s->name) {
		free(s);
		return NULL;
	}
	s->fd = -1;
	s->size = -1;
	s->raw_size = -1;
	apc_err_clear(&s->saved);
	return s;
}

static struct apc_stream *stream_new_fd(int fd, const char *name, int own)
{
	struct apc_stream *s = stream_new(name);
	struct stat st;

	if (!s)
		return NULL;
	s->src = SRC_FD;
	s->fd = fd;
	s->own_fd = own;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		off_t pos = lseek(fd, 0, SEEK_CUR);
		s->seekable = 1;
		s->raw_size = st.st_size;
		/* stdin redirected from a file may not start at 0 */
		s->size = st.st_size - (pos > 0 && pos <= st.st_size ? pos : 0);
	}
	return s;
}

static void gz_rec_free(struct gz_rec *g);

void apc_stream_close(struct apc_stream *s)
{
	if (!s)
		return;
	switch (s->dec) {
	case DEC_NONE: break;
	case DEC_GZIP:
	case DEC_DEFLATE: inflateEnd(&s->z); break;
	case DEC_BZIP2: BZ2_bzDecompressEnd(&s->bz); break;
	case DEC_XZ:
	case DEC_LZMA:
	case DEC_LZIP: lzma_end(&s->lz); break;
	default:
		if (s->dar)
			archive_read_free(s->dar);
		break;
	}
	if (s->ar)
		archive_read_free(s->ar);
	if (s->asrc && s->asrc->fd >= 0)
		close(s->asrc->fd);
	free(s->asrc);
	if (s->own_fd && s->fd >= 0)
		close(s->fd);
	gz_rec_free(s->gzr);
	free(s->zin);
	free(s->la);
	free(s->name);
	free(s);
}

/* libarchive's reason for a failure, lowercased as our messages are. */
static void arc_why(struct archive *a, char *buf, size_t len)
{
	const char *why = a ? archive_error_string(a) : NULL;

	snprintf(buf, len, "%s", why && *why ? why : "unreadable archive data");
	if (buf[0] >= 'A' && buf[0] <= 'Z' && !(buf[1] >= 'A' && buf[1] <= 'Z'))
		buf[0] = (char)(buf[0] - 'A' + 'a');
}

/* ------------------------------------------------------------------ */
/* raw source */

/* A read(2) or pread(2) failed: errno says why; the stream is done. */
static ssize_t raw_failed(struct apc_stream *s)
{
	apc_err_sys(&s->saved, APC_EIO, s->name, "cannot read", errno);
	s->failed = 1;
	return -1;
}

static ssize_t raw_read(struct apc_stream *s, uint8_t *buf, size_t n)
{
	ssize_t r;

	if (n > IN_MAX_IO)
		n = IN_MAX_IO;
	if (s->src == SRC_MEM) {
		size_t left = s->mem_len - (size_t)s->raw_pos;
		r = (ssize_t)(n < left ? n : left);
		if (r)
			memcpy(buf, s->mem + s->raw_pos, (size_t)r);
	} else if (s->src == SRC_FD) {
		do
			r = read(s->fd, buf, n);
		while (r < 0 && errno == EINTR && !apc_interrupted());
		/* After SIGINT/SIGTERM no read may look like the end of the
		 * input: upstream dies with us, and a reader taking that EOF
		 * for a truncated trace would have the damage salvaged. */
		if (apc_interrupted()) {
			st_fail(s, APC_EIO, APC_NO_OFFSET, "cannot read: interrupted");
			return -1;
		}
		if (r < 0)
			return raw_failed(s);
	} else if (s->src == SRC_RANGE) {
		uint64_t left = s->range - s->raw_pos;
		if (n > left)
			n = (size_t)left;
		if (n == 0)
			return 0;
		do
			r = pread(s->fd, buf, n, (off_t)((uint64_t)s->base + s->raw_pos));
		while (r < 0 && errno == EINTR && !apc_interrupted());
		if (r < 0)
			return raw_failed(s);
		/* the header promised more: the archive file is cut short
		 * (a compressed member's end is the decoder's to find) */
		if (r == 0 && !s->dec) {
			st_fail(s, APC_EDATA, (int64_t)s->raw_pos,
				"truncated archive: the member ends after %llu of its %lld bytes",
				(unsigned long long)s->raw_pos, (long long)s->size);
			return -1;
		}
	} else {
		/* A member its header says is empty has nothing to decode:
		 * libarchive's lzma reader of a zip fails on the end marker
		 * alone that Python's zipfile writes for one. */
		la_ssize_t a = s->size == 0 ? 0 : archive_read_data(s->ar, buf, n);
		if (a < 0) {
			char why[200];
			arc_why(s->ar, why, sizeof why);
			st_fail(s, APC_EDATA, (int64_t)s->raw_pos,
				"damaged or truncated archive: the member cannot be read past %llu "
				"bytes (%s)", (unsigned long long)s->raw_pos, why);
			return -1;
		}
		r = a;
	}
	s->raw_pos += (uint64_t)r;
	return r;
}

/* ------------------------------------------------------------------ */
/* decoders of compressed streams */

/*
 * A compressed stream is decoded between its raw source and the
 * look-ahead: gzip with zlib, bzip2 with libbz2, xz, lzma and lzip with
 * liblzma.  Each stops where its data does, so a cut or a corruption
 * keeps every byte decoded before it.  zstd, lz4 and compress (.Z), whose
 * libraries the build does not link (no -dev package needed), go through
 * libarchive's filters and its "raw" format: the zstd filter drops the
 * output buffer it was filling when the data breaks, so there up to
 * 128 KiB before the damage are lost too (lz4 decodes whole blocks
 * anyway; compress data has no end marker nor check, so a cut one
 * looks whole and only what it holds can show the cut).
 *
 * An error's offset is in the decompressed data, as every later error's
 * is; where the compressed data ends or breaks is in the message.
 */

static const struct {
	const char *name; /* in messages, and the kind of a single stream */
	const char *ext;  /* of a compressed archive's kind: "tar.bz2" */
	int filter;       /* libarchive's code for it */
} dec_info[] = {
	[DEC_NONE] = {"", "", ARCHIVE_FILTER_NONE},
	[DEC_GZIP] = {"gzip", "gz", ARCHIVE_FILTER_GZIP},
	[DEC_BZIP2] = {"bzip2", "bz2", ARCHIVE_FILTER_BZIP2},
	[DEC_XZ] = {"xz", "xz", ARCHIVE_FILTER_XZ},
	[DEC_LZMA] = {"lzma", "lzma", ARCHIVE_FILTER_LZMA},
	[DEC_LZIP] = {"lzip", "lz", ARCHIVE_FILTER_LZIP},
	[DEC_ZSTD] = {"zstd", "zst", ARCHIVE_FILTER_ZSTD},
	[DEC_LZ4] = {"lz4", "lz4", ARCHIVE_FILTER_LZ4},
	[DEC_COMPRESS] = {"compress", "Z", ARCHIVE_FILTER_COMPRESS},
	[DEC_DEFLATE] = {"deflate", "", ARCHIVE_FILTER_NONE},
};

/* Decompressed bytes so far, counting `pending` given out in this call. */
static uint64_t dec_at(const struct apc_stream *s, size_t pending)
{
	return s->produced + pending;
}

/* The compressed data ends inside a stream (at `at` decompressed bytes). */
static void dec_cut(struct apc_stream *s, uint64_t at)
{
	st_fail(s, APC_EDATA, (int64_t)at, "truncated %s stream (the compressed data ends at byte %llu)",
		dec_info[s->dec].name, (unsigned long long)s->base + s->raw_pos);
}

/*
 * The decoder found bad data, having taken cpos compressed bytes.  zlib
 * stops at the bad code; the others take input ahead of what they
 * check, so for them the damage lies somewhere before cpos.
 */
static void dec_corrupt(struct apc_stream *s, uint64_t at, uint64_t cpos, const char *why)
{
	st_fail(s, APC_EDATA, (int64_t)at, "%s data corrupt %s compressed byte %llu (%s)",
		dec_info[s->dec].name, s->dec == DEC_GZIP || s->dec == DEC_DEFLATE ? "at" : "before",
		(unsigned long long)cpos, why);
}

/* The next compressed bytes into zin: their count, 0 at the end, -1 on error. */
static ssize_t dec_fill(struct apc_stream *s)
{
	ssize_t r;

	if (s->raw_eof)
		return 0;
	r = raw_read(s, s->zin, IN_BUFSZ);
	if (r == 0)
		s->raw_eof = 1;
	return r;
}

/*
 * gzip seek points.  A member deep in a .tar.gz would be decoded from
 * the file's start each time it is opened: for LTT, whose per-CPU
 * members are read side by side, that is a pass over the archive per
 * CPU.  The listing decodes the whole archive once anyway; meanwhile
 * the decoder notes where deflate blocks start (IN_GZ_SPAN decoded
 * bytes apart at least), each with the 32 KiB of history the block may
 * refer back to, keeping the last IN_GZ_RING.  Each member listed keeps
 * the last such point before its data (up to IN_GZ_KEEP points, shared
 * by members close together), and opening the member decodes from
 * there: zlib's raw inflate, given the bits of the byte the block
 * starts in and the history, then skips to the member's data.
 */
static void gz_rec_free(struct gz_rec *g)
{
	if (!g)
		return;
	free(g->ring[0].win); /* one allocation for all */
	free(g);
}

/* Note seek points while s (a gzip stream over a file) is decoded. */
static void gz_rec_start(struct apc_stream *s)
{
	struct gz_rec *g;
	uint8_t *wins, magic[2];
	off_t pos;

	if (s->dec != DEC_GZIP || s->src != SRC_FD || !s->seekable || s->gzr)
		return;
	pos = lseek(s->fd, 0, SEEK_CUR);
	if (pos < 0 || (uint64_t)pos < s->raw_pos)
		return;
	/* gzip, not zlib: a point past the end of a member skips gzip's
	 * 8-byte trailer */
	if (pread(s->fd, magic, 2, (off_t)((uint64_t)pos - s->raw_pos)) != 2 || magic[0] != 0x1f ||
	    magic[1] != 0x8b)
		return;
	g = calloc(1, sizeof *g);
	wins = malloc((size_t)IN_GZ_RING * IN_GZ_WIN);
	if (!g || !wins) {
		free(g);
		free(wins);
		return; /* no points: members are decoded from the start */
	}
	for (unsigned i = 0; i < IN_GZ_RING; i++)
		g->ring[i].win = wins + (size_t)i * IN_GZ_WIN;
	g->base = (int64_t)((uint64_t)pos - s->raw_pos);
	/* the stream's first byte starts its first gzip member: members
	 * listed before the first point noted decode from there */
	g->ring[0].in = g->base;
	g->ring[0].hdr = 1;
	g->next = g->n = 1;
	s->gzr = g;
}

/* The decoder stands at a block's start, `out` bytes decoded. */
static void gz_note(struct apc_stream *s, uint64_t out)
{
	struct gz_rec *g = s->gzr;
	struct gz_point *p = &g->ring[g->next];
	uInt len = IN_GZ_WIN;

	if (g->n && out - g->last_out < IN_GZ_SPAN)
		return;
	if (inflateGetDictionary(&s->z, p->win, &len) != Z_OK)
		return;
	p->out = out;
	p->in = g->base + (int64_t)(s->raw_pos - s->z.avail_in);
	p->bits = s->z.data_type & 7;
	p->hdr = 0;
	p->wlen = len;
	g->next = (g->next + 1) % IN_GZ_RING;
	if (g->n < IN_GZ_RING)
		g->n++;
	g->last_out = out;
}

/*
 * The kept point to decode a member whose data starts at decoded offset
 * d from: the index in in->gzp, or -1 (decode from the start).
 */
static int gz_keep(struct apc_input *in, const struct gz_rec *g, uint64_t d)
{
	const struct gz_point *best = NULL;
	struct gz_point *k;
	int last = -1;

	for (unsigned i = 0; i < g->n; i++) {
		const struct gz_point *p = &g->ring[i];
		if (p->out <= d && (!best || p->out > best->out))
			best = p;
	}
	/* kept points grow with the listing: the last one is the latest */
	if (in->ngzp && in->gzp[in->ngzp - 1].out <= d)
		last = (int)in->ngzp - 1;
	if (!best || (last >= 0 && (in->gzp[last].out >= best->out ||
				    d - in->gzp[last].out < IN_GZ_SHARE || in->ngzp == IN_GZ_KEEP)))
		return last;
	if (in->ngzp == 0) {
		in->gzp = malloc(IN_GZ_KEEP * sizeof *in->gzp);
		if (!in->gzp)
			return -1;
	}
	k = &in->gzp[in->ngzp];
	*k = *best;
	k->win = malloc(best->wlen ? best->wlen : 1);
	if (!k->win)
		return last;
	memcpy(k->win, best->win, best->wlen);
	return (int)in->ngzp++;
}

static void gz_keep_free(struct apc_input *in)
{
	for (size_t i = 0; i < in->ngzp; i++)
		free(in->gzp[i].win);
	free(in->gzp);
	in->gzp = NULL;
	in->ngzp = 0;
}

/*
 * More input for gzip or bzip2, `pending` bytes given out so far in this
 * call: their count, else 0 at the end (a member cut short is reported)
 * or -1; either ends the decoding.
 */
static ssize_t dec_fill_member(struct apc_stream *s, size_t pending)
{
	ssize_t r = dec_fill(s);

	if (r == 0) {
		if (s->dec_member)
			dec_cut(s, dec_at(s, pending));
		s->dec_done = 1;
	}
	return r;
}

/*
 * Inflate up to n bytes.  Concatenated gzip members are decoded one
 * after another, as gzip(1) does.
 */
static size_t gz_read(struct apc_stream *s, uint8_t *out, size_t n)
{
	s->z.next_out = out;
	s->z.avail_out = (uInt)n;
	while (s->z.avail_out > 0 && !s->dec_done) {
		int ret;

		if (s->z.avail_in == 0) {
			ssize_t r = dec_fill_member(s, n - s->z.avail_out);
			if (r <= 0)
				break;
			s->z.next_in = s->zin;
			s->z.avail_in = (uInt)r;
		}
		if (s->gz_skip) {
			/* a member decoded raw from a seek point ended: its
			 * trailer is not deflate data */
			uInt k = s->z.avail_in < s->gz_skip ? s->z.avail_in : s->gz_skip;
			s->z.next_in += k;
			s->z.avail_in -= k;
			s->gz_skip -= k;
			continue;
		}
		s->dec_member = 1;
		/* Z_BLOCK stops at the next block's start, where a seek point
		 * can be: only when one is due, as it slows inflate down */
		ret = inflate(&s->z, s->gzr && dec_at(s, n - s->z.avail_out) - s->gzr->last_out >= IN_GZ_SPAN
					     ? Z_BLOCK : Z_NO_FLUSH);
		if (ret == Z_STREAM_END && s->dec == DEC_DEFLATE) {
			/* a zip member's data: nothing follows */
			s->dec_member = 0;
			s->dec_done = 1;
			break;
		}
		if (ret == Z_STREAM_END) {
			/* another member may follow; reset and let the loop refill */
			s->dec_member = 0;
			if (s->gz_raw)
				s->gz_skip = 8; /* CRC-32 and size */
			s->gz_raw = 0;
			if (inflateReset2(&s->z, 15 + 32) != Z_OK) {
				st_fail(s, APC_ENOMEM, APC_NO_OFFSET, "cannot reset gzip decoder");
				break;
			}
			continue;
		}
		if (ret == Z_OK && s->gzr && (s->z.data_type & 128) && !(s->z.data_type & 64))
			gz_note(s, dec_at(s, n - s->z.avail_out));
		if (ret == Z_BUF_ERROR && s->z.avail_in == 0)
			continue;
		if (ret == Z_MEM_ERROR) {
			st_fail(s, APC_ENOMEM, APC_NO_OFFSET, "out of memory");
			break;
		}
		if (ret != Z_OK) {
			dec_corrupt(s, dec_at(s, n - s->z.avail_out),
				    (uint64_t)s->base + s->raw_pos - s->z.avail_in,
				    s->z.msg ? s->z.msg : "invalid data");
			break;
		}
	}
	return n - s->z.avail_out;
}

/*
 * bunzip2 up to n bytes.  Concatenated bzip2 streams (pbzip2 writes one
 * per block) are decoded one after another, as bzip2(1) does.
 */
static size_t bz_read(struct apc_stream *s, uint8_t *out, size_t n)
{
	s->bz.next_out = (char *)out;
	s->bz.avail_out = (unsigned)n;
	while (s->bz.avail_out > 0 && !s->dec_done) {
		int ret;

		if (s->bz.avail_in == 0) {
			ssize_t r = dec_fill_member(s, n - s->bz.avail_out);
			if (r <= 0)
				break;
			s->bz.next_in = (char *)s->zin;
			s->bz.avail_in = (unsigned)r;
		}
		s->dec_member = 1;
		ret = BZ2_bzDecompress(&s->bz);
		if (ret == BZ_STREAM_END) {
			/* libbz2 has no reset: a fresh decoder for what follows */
			bz_stream keep = s->bz;
			BZ2_bzDecompressEnd(&s->bz);
			memset(&s->bz, 0, sizeof s->bz);
			if (BZ2_bzDecompressInit(&s->bz, 0, 0) != BZ_OK) {
				st_fail(s, APC_ENOMEM, APC_NO_OFFSET, "out of memory");
				break;
			}
			s->bz.next_in = keep.next_in;
			s->bz.avail_in = keep.avail_in;
			s->bz.next_out = keep.next_out;
			s->bz.avail_out = keep.avail_out;
			s->dec_member = 0;
			continue;
		}
		if (ret == BZ_MEM_ERROR) {
			st_fail(s, APC_ENOMEM, APC_NO_OFFSET, "out of memory");
			break;
		}
		if (ret != BZ_OK) {
			dec_corrupt(s, dec_at(s, n - s->bz.avail_out), s->raw_pos - s->bz.avail_in,
				    ret == BZ_DATA_ERROR_MAGIC ? "not bzip2 data"
				    : ret == BZ_DATA_ERROR ? "data integrity error"
							   : "decoder error");
			break;
		}
	}
	return n - s->bz.avail_out;
}

/* xz(1)'s words for liblzma's errors. */
static const char *lz_why(lzma_ret ret)
{
	switch (ret) {
	case LZMA_FORMAT_ERROR: return "file format not recognized";
	case LZMA_OPTIONS_ERROR: return "unsupported options";
	case LZMA_DATA_ERROR: return "compressed data is corrupt";
	case LZMA_BUF_ERROR: return "unexpected end of input";
	default: return "decoder error";
	}
}

/*
 * Decode up to n bytes of xz or lzip (concatenated streams or members,
 * as xz(1) and lzip(1) do) or lzma (one stream).  liblzma is told where
 * the input ends (LZMA_FINISH), and says a stream is cut by making no
 * more progress.  lzip lets a file end in data of another kind, which
 * lzip(1) itself refuses unless told to ignore it: here it is damage
 * after the data, like anything after a .lzma stream.
 */
static size_t xz_read(struct apc_stream *s, uint8_t *out, size_t n)
{
	s->lz.next_out = out;
	s->lz.avail_out = n;
	while (s->lz.avail_out > 0 && !s->dec_done) {
		size_t in0, out0 = s->lz.avail_out;
		lzma_ret ret;

		if (s->lz.avail_in == 0 && !s->raw_eof) {
			ssize_t r = dec_fill(s);
			if (r < 0)
				break;
			s->lz.next_in = s->zin;
			s->lz.avail_in = (size_t)r;
		}
		in0 = s->lz.avail_in;
		ret = lzma_code(&s->lz, s->raw_eof ? LZMA_FINISH : LZMA_RUN);
		if (ret == LZMA_STREAM_END) {
			s->dec_done = 1;
			/* .lzma holds one stream: what follows it is no part of it */
			if (s->lz.avail_in > 0 || dec_fill(s) > 0)
				dec_corrupt(s, dec_at(s, n - s->lz.avail_out),
					    s->raw_pos - s->lz.avail_in,
					    "data after the end of the stream");
			break;
		}
		if (ret == LZMA_OK || ret == LZMA_BUF_ERROR) {
			if (s->raw_eof && s->lz.avail_in == in0 && s->lz.avail_out == out0) {
				/* all input given and no progress: the stream is cut */
				dec_cut(s, dec_at(s, n - s->lz.avail_out));
				break;
			}
			continue;
		}
		if (ret == LZMA_MEM_ERROR)
			st_fail(s, APC_ENOMEM, APC_NO_OFFSET, "out of memory");
		else if (ret == LZMA_MEMLIMIT_ERROR)
			st_fail(s, APC_EDATA, (int64_t)dec_at(s, n - s->lz.avail_out),
				"%s data needs %llu MiB of memory to decode, more than the %u MiB "
				"allowed", dec_info[s->dec].name,
				(unsigned long long)(lzma_memusage(&s->lz) >> 20), IN_LZMA_MEMLIMIT >> 20);
		else
			dec_corrupt(s, dec_at(s, n - s->lz.avail_out), s->raw_pos - s->lz.avail_in,
				    lz_why(ret));
		break;
	}
	return n - s->lz.avail_out;
}

/* libarchive's read callback under its decoders: the peeked bytes, then the source. */
static la_ssize_t dar_read_cb(struct archive *a, void *cd, const void **out)
{
	struct apc_stream *s = cd;
	ssize_t r;

	*out = s->zin;
	if (s->zin_pend) {
		r = (ssize_t)s->zin_pend;
		s->zin_pend = 0;
		return r;
	}
	r = dec_fill(s);
	if (r < 0) {
		archive_set_error(a, EIO, "%s", s->saved.msg);
		return -1;
	}
	return r;
}

/* Why a libarchive decoder stopped: a read error, a cut, or bad data. */
static void dar_fail(struct apc_stream *s, uint64_t at)
{
	char why[200];
	la_int64_t used;

	if (s->failed) /* the source's own error, already recorded */
		return;
	if (s->raw_eof) {
		dec_cut(s, at);
		return;
	}
	arc_why(s->dar, why, sizeof why);
	used = archive_filter_bytes(s->dar, -1);
	dec_corrupt(s, at, used >= 0 ? (uint64_t)used : s->raw_pos, why);
}

/*
 * Start a libarchive decoder: the one filter (found by libarchive's own
 * bid: archive_read_append_filter() crashes on compress in libarchive
 * 3.6, which reads the header before there is anything to read) with the
 * raw format over it, and the empty one for a stream that decodes to
 * nothing.  A filter that breaks before its first byte leaves the empty
 * format chosen and its error set: that is damage, not an empty stream.
 */
static int dar_open(struct apc_stream *s)
{
	struct archive_entry *e;
	int r, filter = dec_info[s->dec].filter;

	s->dar = archive_read_new();
	if (!s->dar)
		return st_fail(s, APC_ENOMEM, APC_NO_OFFSET, "out of memory");
	r = filter == ARCHIVE_FILTER_ZSTD ? archive_read_support_filter_zstd(s->dar)
	  : filter == ARCHIVE_FILTER_LZ4  ? archive_read_support_filter_lz4(s->dar)
					  : archive_read_support_filter_compress(s->dar);
	if (r < ARCHIVE_WARN) { /* (WARN: through an external program) */
		char why[200];
		arc_why(s->dar, why, sizeof why);
		return st_fail(s, APC_EIO, APC_NO_OFFSET, "cannot decode %s data: %s",
			       dec_info[s->dec].name, why);
	}
	archive_read_support_format_raw(s->dar);
	archive_read_support_format_empty(s->dar);
	archive_read_set_read_callback(s->dar, dar_read_cb);
	archive_read_set_callback_data(s->dar, s);
	if (archive_read_open1(s->dar) != ARCHIVE_OK || archive_errno(s->dar) != 0) {
		dar_fail(s, 0);
		return -1;
	}
	if (archive_filter_count(s->dar) < 2 || archive_filter_code(s->dar, 0) != filter) {
		/* its bid wants more than the magic the sniff saw */
		if (s->raw_eof)
			dec_cut(s, 0);
		else
			dec_corrupt(s, 0, 0, "its header does not hold");
		return -1;
	}
	r = archive_read_next_header(s->dar, &e);
	if (r == ARCHIVE_EOF) {
		s->dec_done = 1;
		return 0;
	}
	if (r < ARCHIVE_WARN) {
		dar_fail(s, 0);
		return -1;
	}
	return 0;
}

/* Up to n bytes from a libarchive decoder, copied out of its own buffers. */
static size_t dar_read(struct apc_stream *s, uint8_t *out, size_t n)
{
	size_t got = 0;

	if (!s->dar && dar_open(s) < 0)
		return 0;
	while (got < n && !s->dec_done) {
		size_t k;

		if (s->dar_left == 0) {
			const void *b;
			size_t len;
			la_int64_t off;
			int r = archive_read_data_block(s->dar, &b, &len, &off);
			if (r == ARCHIVE_EOF) {
				s->dec_done = 1;
				break;
			}
			if (r < ARCHIVE_WARN) {
				dar_fail(s, dec_at(s, got));
				break;
			}
			s->dar_blk = b;
			s->dar_left = len;
			continue;
		}
		k = n - got < s->dar_left ? n - got : s->dar_left;
		memcpy(out + got, s->dar_blk, k);
		s->dar_blk += k;
		s->dar_left -= k;
		got += k;
	}
	return got;
}

/*
 * Decode up to n bytes.  Returns bytes produced; when an error stops
 * decoding after some output, that output is returned and the error
 * (sticky) comes with the next call.
 */
static ssize_t dec_read(struct apc_stream *s, uint8_t *out, size_t n)
{
	size_t got;

	if (n > IN_MAX_IO)
		n = IN_MAX_IO;
	switch (s->dec) {
	case DEC_GZIP:
	case DEC_DEFLATE: got = gz_read(s, out, n); break;
	case DEC_BZIP2: got = bz_read(s, out, n); break;
	case DEC_XZ:
	case DEC_LZMA:
	case DEC_LZIP: got = xz_read(s, out, n); break;
	default: got = dar_read(s, out, n); break;
	}
	if (got == 0 && s->failed)
		return -1;
	return (ssize_t)got;
}

/*
 * Turn a raw stream into a decoded one.  Whatever was peeked so far is
 * compressed input: it moves from the look-ahead into the decoder.
 */
static int dec_start(struct apc_stream *s, int kind, struct apc_err *err)
{
	size_t have = s->la_len - s->la_off;
	int ok;

	s->zin = malloc(IN_BUFSZ > APC_PEEK_MAX ? IN_BUFSZ : APC_PEEK_MAX);
	if (!s->zin)
		return in_nomem(err);
	if (have)
		memcpy(s->zin, s->la + s->la_off, have);
	switch (kind) {
	case DEC_GZIP:
	case DEC_DEFLATE:
		memset(&s->z, 0, sizeof s->z);
		/* 15+32: accept gzip (and zlib) headers, full window; -15:
		 * no header */
		ok = inflateInit2(&s->z, kind == DEC_DEFLATE ? -15 : 15 + 32) == Z_OK;
		s->z.next_in = s->zin;
		s->z.avail_in = (uInt)have;
		break;
	case DEC_BZIP2:
		memset(&s->bz, 0, sizeof s->bz);
		ok = BZ2_bzDecompressInit(&s->bz, 0, 0) == BZ_OK;
		s->bz.next_in = (char *)s->zin;
		s->bz.avail_in = (unsigned)have;
		break;
	case DEC_XZ:
	case DEC_LZMA:
	case DEC_LZIP:
		memset(&s->lz, 0, sizeof s->lz); /* LZMA_STREAM_INIT */
		ok = (kind == DEC_XZ     ? lzma_stream_decoder(&s->lz, IN_LZMA_MEMLIMIT, LZMA_CONCATENATED)
		      : kind == DEC_LZIP ? lzma_lzip_decoder(&s->lz, IN_LZMA_MEMLIMIT, LZMA_CONCATENATED)
					 : lzma_alone_decoder(&s->lz, IN_LZMA_MEMLIMIT)) == LZMA_OK;
		s->lz.next_in = s->zin;
		s->lz.avail_in = have;
		break;
	default: /* libarchive's, opened at the first read */
		ok = 1;
		s->zin_pend = have;
		break;
	}
	if (!ok)
		return in_nomem(err);
	s->dec = kind;
	s->la_off = s->la_len = 0;
	s->size = -1;
	s->src_eof = 0;
	s->produced = 0; /* error offsets count decompressed bytes */
	return APC_OK;
}

/* ------------------------------------------------------------------ */
/* decoded source (below the look-ahead) */

static ssize_t src_read(struct apc_stream *s, uint8_t *buf, size_t n)
{
	ssize_t r;

	if (s->failed)
		return -1;
	if (s->src_eof || n == 0)
		return 0;
	if (s->has_left && n > s->left)
		n = (size_t)s->left;
	r = n == 0 ? 0 : s->dec ? dec_read(s, buf, n) : raw_read(s, buf, n);
	if (r == 0 && s->has_left && s->left > 0 && !s->failed)
		st_fail(s, APC_EDATA, (int64_t)s->produced,
			"truncated archive: the member ends after %llu of its %llu bytes",
			(unsigned long long)s->produced, (unsigned long long)(s->produced + s->left));
	if (r == 0 && !s->failed)
		s->src_eof = 1;
	if (r > 0) {
		s->produced += (uint64_t)r;
		if (s->has_left)
			s->left -= (uint64_t)r;
	}
	return r;
}

static int la_alloc(struct apc_stream *s, struct apc_err *err)
{
	if (!s->la) {
		s->la = malloc(APC_PEEK_MAX);
		if (!s->la)
			return in_nomem(err);
	}
	return APC_OK;
}

/*
 * apc_stream_peek() : see input.h.  Reads ahead into the look-ahead
 * buffer; an error with some bytes already buffered is held back until
 * those bytes have been consumed.
 */
ssize_t apc_stream_peek(struct apc_stream *s, const uint8_t **p, size_t want,
			struct apc_err *err)
{
	size_t avail;

	if (want > APC_PEEK_MAX)
		want = APC_PEEK_MAX;
	if (la_alloc(s, err) < 0)
		return -1;
	avail = s->la_len - s->la_off;
	if (avail < want) {
		if (s->la_off > 0) {
			memmove(s->la, s->la + s->la_off, avail);
			s->la_off = 0;
			s->la_len = avail;
		}
		while (s->la_len < want) {
			ssize_t r = src_read(s, s->la + s->la_len, APC_PEEK_MAX - s->la_len);
			if (r < 0) {
				if (s->la_len == 0) {
					st_copy_err(s, err);
					return -1;
				}
				break;
			}
			if (r == 0)
				break;
			s->la_len += (size_t)r;
		}
		avail = s->la_len - s->la_off;
	}
	*p = s->la + s->la_off;
	return (ssize_t)(avail < want ? avail : want);
}

/*
 * apc_stream_read() : see input.h.  Drains the look-ahead, then reads
 * straight into the caller's buffer.
 */
ssize_t apc_stream_read(struct apc_stream *s, void *buf, size_t n, struct apc_err *err)
{
	uint8_t *out = buf;
	size_t got = 0;

	if (n > SSIZE_MAX)
		n = SSIZE_MAX;
	if (s->la_len > s->la_off) {
		size_t k = s->la_len - s->la_off;
		if (k > n)
			k = n;
		memcpy(out, s->la + s->la_off, k);
		s->la_off += k;
		got = k;
	}
	while (got < n) {
		ssize_t r = src_read(s, out + got, n - got);
		if (r < 0) {
			if (got > 0)
				break; /* the error comes with the next call */
			st_copy_err(s, err);
			return -1;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	s->offset += got;
	return (ssize_t)got;
}

/*
 * apc_stream_skip() : see input.h.  Skipping past the end is an error
 * (APC_EDATA, "cannot skip"), the stream is then at its end.
 */
int apc_stream_skip(struct apc_stream *s, uint64_t n, struct apc_err *err)
{
	uint64_t want = n;

	if (s->la_len > s->la_off) {
		size_t k = s->la_len - s->la_off;
		if (k > n)
			k = (size_t)n;
		s->la_off += k;
		s->offset += k;
		n -= k;
	}
	if (n == 0)
		return APC_OK;
	if (s->src == SRC_FD && !s->dec && s->seekable && !s->failed && s->raw_size >= 0) {
		off_t cur = lseek(s->fd, 0, SEEK_CUR);
		if (cur >= 0) {
			uint64_t left = cur < s->raw_size ? (uint64_t)(s->raw_size - cur) : 0;
			uint64_t k = n < left ? n : left;
			if (lseek(s->fd, (off_t)k, SEEK_CUR) >= 0) {
				s->raw_pos += k;
				s->produced += k;
				s->offset += k;
				n -= k;
				if (n == 0)
					return APC_OK;
				s->src_eof = 1;
			}
		}
	}
	/* not seekable (pipe, compressed, archive member): read and discard */
	if (la_alloc(s, err) < 0)
		return APC_ENOMEM;
	while (n > 0) {
		size_t chunk = n < APC_PEEK_MAX ? (size_t)n : APC_PEEK_MAX;
		ssize_t r = src_read(s, s->la, chunk);
		if (r < 0) {
			st_copy_err(s, err);
			return s->saved.status;
		}
		if (r == 0)
			break;
		s->offset += (uint64_t)r;
		n -= (uint64_t)r;
	}
	s->la_off = s->la_len = 0;
	if (n > 0)
		return apc_err_set(err, APC_EDATA, s->name, (int64_t)s->offset,
				   "cannot skip %llu bytes: the stream ends %llu bytes early",
				   (unsigned long long)want, (unsigned long long)n);
	return APC_OK;
}

int apc_stream_held_error(const struct apc_stream *s, struct apc_err *err)
{
	if (!s->failed)
		return 0;
	st_copy_err(s, err);
	return 1;
}

int apc_stream_check_end(struct apc_stream *s, struct apc_err *err)
{
	if (s->failed || !s->dec) {
		st_copy_err(s, err);
		return s->failed ? s->saved.status : APC_OK;
	}
	/* the look-ahead holds bytes already decoded: only what is below */
	s->la_off = s->la_len = 0;
	while (!s->src_eof && !s->failed) {
		if (la_alloc(s, err) < 0)
			return APC_ENOMEM;
		if (src_read(s, s->la, APC_PEEK_MAX) < 0)
			break;
	}
	st_copy_err(s, err);
	return s->failed ? s->saved.status : APC_OK;
}

const char *apc_stream_name(const struct apc_stream *s)
{
	return s->name;
}

uint64_t apc_stream_offset(const struct apc_stream *s)
{
	return s->offset;
}

int64_t apc_stream_size(const struct apc_stream *s)
{
	return s->size;
}

/* Compressed: bytes taken by the decoder; else what the caller consumed. */
int64_t apc_stream_raw_offset(const struct apc_stream *s)
{
	if (s->src == SRC_ARCHIVE)
		return s->ar ? (int64_t)archive_filter_bytes(s->ar, -1) : -1;
	if (s->src == SRC_RANGE)
		return s->base + (int64_t)s->raw_pos;
	switch (s->dec) {
	case DEC_NONE: break;
	case DEC_GZIP:
	case DEC_DEFLATE: return (int64_t)(s->raw_pos - s->z.avail_in);
	case DEC_BZIP2: return (int64_t)(s->raw_pos - s->bz.avail_in);
	case DEC_XZ:
	case DEC_LZMA:
	case DEC_LZIP: return (int64_t)(s->raw_pos - s->lz.avail_in);
	default: return (int64_t)(s->raw_pos - s->zin_pend);
	}
	return (int64_t)s->offset;
}

int64_t apc_stream_raw_size(const struct apc_stream *s)
{
	return s->raw_size;
}

/*
 * apc_stream_slurp() : see input.h.  Fails with APC_ENOMEM (a limit) if
 * the stream holds more than limit bytes.
 */
int apc_stream_slurp(struct apc_stream *s, size_t limit, uint8_t **buf, size_t *len,
		     struct apc_err *err)
{
	int rc = apc_stream_slurp_upto(s, limit, buf, len, err);

	if (rc < 0) {
		free(*buf);
		*buf = NULL;
		*len = 0;
	}
	return rc;
}

int apc_stream_slurp_upto(struct apc_stream *s, size_t limit, uint8_t **buf, size_t *len,
			  struct apc_err *err)
{
	size_t cap, n = 0;
	uint8_t *b;

	*buf = NULL;
	*len = 0;
	if (s->size >= 0 && (uint64_t)s->size > s->offset + (uint64_t)limit)
		return apc_err_set(err, APC_ENOMEM, s->name, APC_NO_OFFSET,
				   "%lld bytes is more than the %zu bytes allowed",
				   (long long)s->size, limit);
	cap = s->size >= 0 ? (size_t)((uint64_t)s->size - s->offset) + 1 : 4096;
	if (cap > limit + 1)
		cap = limit + 1;
	if (cap < 64)
		cap = 64;
	b = malloc(cap);
	if (!b)
		return in_nomem(err);
	for (;;) {
		ssize_t r;
		if (n + 1 >= cap) {
			size_t ncap = cap * 2;
			uint8_t *nb;
			if (ncap > limit + 2)
				ncap = limit + 2;
			if (ncap <= cap) {
				free(b);
				return apc_err_set(err, APC_ENOMEM, s->name, APC_NO_OFFSET,
						   "more than the %zu bytes allowed", limit);
			}
			nb = realloc(b, ncap);
			if (!nb) {
				free(b);
				return in_nomem(err);
			}
			b = nb;
			cap = ncap;
		}
		r = apc_stream_read(s, b + n, cap - 1 - n, err);
		if (r < 0 && err && err->status == APC_EDATA) {
			/* damage: what came before it is the caller's */
			b[n] = '\0';
			*buf = b;
			*len = n;
			return APC_EDATA;
		}
		if (r < 0) {
			free(b);
			return err ? err->status : APC_EIO;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > limit) {
			free(b);
			return apc_err_set(err, APC_ENOMEM, s->name, APC_NO_OFFSET,
					   "more than the %zu bytes allowed", limit);
		}
	}
	b[n] = '\0';
	*buf = b;
	*len = n;
	return APC_OK;
}

/* ------------------------------------------------------------------ */
/* content sniffing */

/*
 * 1 if p starts with magic m (of mlen bytes), or, for data cut short
 * before its end, with at least min of them: a compressed stream cut in
 * its magic is still told as what it is, and as cut.
 */
static int magic_is(const uint8_t *p, size_t n, const char *m, size_t mlen, size_t min)
{
	return n >= min && memcmp(p, m, n < mlen ? n : mlen) == 0;
}

/*
 * An lzma ("alone") header: no magic, so the writers' habits are
 * checked: properties 0x5d (lc=3 lp=0 pb=2, every tool's default), a
 * dictionary of 2^k or 3 * 2^(k-1) bytes from 4 KiB, a size that is
 * unknown (all ones) or below 2^48, and the first byte of the range
 * coder, which is always 0.
 */
static int sniff_lzma(const uint8_t *p, size_t n)
{
	uint32_t dict;
	int unknown = 1, small;

	if (n < 14 || p[0] != 0x5d || p[13] != 0)
		return 0;
	small = p[11] == 0 && p[12] == 0;
	dict = apc_le32(p + 1);
	for (int i = 5; i < 13; i++)
		unknown &= p[i] == 0xff;
	if (dict < 4096 || !(unknown || small))
		return 0;
	while (!(dict & 1))
		dict >>= 1;
	return dict == 1 || dict == 3;
}

/* The compression the first bytes say the data is in (enum dec_kind). */
static int sniff_dec(const uint8_t *p, size_t n)
{
	if (magic_is(p, n, "\x1f\x8b", 2, 2))
		return DEC_GZIP;
	/* "BZh", the block size, then a block's magic or the end's */
	if (n >= 4 && memcmp(p, "BZh", 3) == 0 && p[3] >= '1' && p[3] <= '9' &&
	    (magic_is(p + 4, n - 4, "\x31\x41\x59\x26\x53\x59", 6, 0) ||
	     magic_is(p + 4, n - 4, "\x17\x72\x45\x38\x50\x90", 6, 0)))
		return DEC_BZIP2;
	if (magic_is(p, n, "\xfd" "7zXZ\0", 6, 3))
		return DEC_XZ;
	/* "LZIP" and the format's version: 1 (lzip 1.4 on) or 0 */
	if (magic_is(p, n, "LZIP", 4, 4) && (n < 5 || p[4] <= 1))
		return DEC_LZIP;
	if (magic_is(p, n, "\x28\xb5\x2f\xfd", 4, 3))
		return DEC_ZSTD;
	/* lz4 frame, and the legacy format lz4 -l writes */
	if (magic_is(p, n, "\x04\x22\x4d\x18", 4, 3) || magic_is(p, n, "\x02\x21\x4c\x18", 4, 4))
		return DEC_LZ4;
	/* compress: its flags byte has bits 5 and 6 clear and 9 to 16 code bits */
	if (n >= 3 && p[0] == 0x1f && p[1] == 0x9d && !(p[2] & 0x60) && (p[2] & 0x1f) >= 9 &&
	    (p[2] & 0x1f) <= 16)
		return DEC_COMPRESS;
	if (sniff_lzma(p, n))
		return DEC_LZMA;
	return DEC_NONE;
}

/* ustar/gnu magic at 257, or (old v7 tar) a header whose checksum holds. */
static int sniff_tar(const uint8_t *p, size_t n)
{
	unsigned long want = 0, sum = 0;
	int digits = 0;
	size_t i = 148;

	if (n < 512)
		return 0;
	if (memcmp(p + 257, "ustar", 5) == 0)
		return 1;
	while (i < 156 && p[i] == ' ')
		i++;
	for (; i < 156 && p[i] >= '0' && p[i] <= '7'; i++, digits++)
		want = want * 8 + (unsigned long)(p[i] - '0');
	if (!digits || p[0] == 0 || (i < 156 && p[i] != ' ' && p[i] != 0))
		return 0;
	for (i = 0; i < 512; i++)
		sum += (i >= 148 && i < 156) ? ' ' : p[i];
	return sum == want;
}

/* Magic numbers of archives libarchive may read (compressions: sniff_dec). */
static int sniff_archive(const uint8_t *p, size_t n)
{
	static const struct { const char *m; size_t n; } magic[] = {
		{"PK\3\4", 4}, {"PK\5\6", 4}, {"PK\7\10", 4},    /* zip */
		{"7z\xbc\xaf\x27\x1c", 6},                        /* 7-zip */
		{"070707", 6}, {"070701", 6}, {"070702", 6},      /* cpio */
		{"\xc7\x71", 2}, {"\x71\xc7", 2},                 /* binary cpio */
	};

	if (sniff_tar(p, n))
		return 1;
	for (size_t i = 0; i < sizeof magic / sizeof magic[0]; i++)
		if (n >= magic[i].n && memcmp(p, magic[i].m, magic[i].n) == 0)
			return 1;
	return 0;
}

/* Value of up to n digits in base 8 or 16, stopping at the first other
 * character (as libarchive reads cpio headers). */
static uint64_t cpio_num(const uint8_t *p, size_t n, unsigned base)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned d;
		if (p[i] >= '0' && p[i] <= '9')
			d = p[i] - '0';
		else if (base == 16 && (p[i] | 0x20) >= 'a' && (p[i] | 0x20) <= 'f')
			d = (p[i] | 0x20) - 'a' + 10;
		else
			break;
		if (d >= base)
			break;
		v = v * base + d;
	}
	return v;
}

/* Whether all n bytes are digits of base 8 or 16: libarchive takes a
 * place as a cpio header only then, so member data that merely quotes a
 * magic is never read as one. */
static int cpio_digits(const uint8_t *p, size_t n, unsigned base)
{
	for (size_t i = 0; i < n; i++) {
		uint8_t c = p[i];
		if (!(c >= '0' && c <= (base == 8 ? '7' : '9')) &&
		    !(base == 16 && (c | 0x20) >= 'a' && (c | 0x20) <= 'f'))
			return 0;
	}
	return 1;
}

/*
 * What the first bytes say an input is.  ARC_MAYBE: a magic number that
 * other data may start with too, so an input libarchive cannot read is
 * taken as plain data.  ARC_TAR (a header whose checksum holds, or the
 * ustar magic), ARC_ZIP (a local file header), ARC_7Z (its 6-byte
 * signature) and ARC_CPIO (an ASCII header: its magic, then digits to
 * its end or the file's): an archive for sure, so one libarchive cannot
 * read is a damaged one and is reported as such.
 */
enum arc_expect { ARC_MAYBE, ARC_TAR, ARC_ZIP, ARC_7Z, ARC_CPIO };

/* An ASCII cpio header ("new" 070701/070702, "odc" 070707), maybe cut. */
static int sniff_cpio(const uint8_t *p, size_t n)
{
	size_t hl;

	if (n < 6 || memcmp(p, "07070", 5) != 0 || (p[5] != '1' && p[5] != '2' && p[5] != '7'))
		return 0;
	hl = p[5] == '7' ? 76 : 110;
	return cpio_digits(p + 6, (n < hl ? n : hl) - 6, p[5] == '7' ? 8 : 16);
}

/*
 * A tar number field: octal digits after optional spaces, then spaces or
 * NULs to its end; or (uid, gid, size: base256) GNU's base-256 form.
 */
static int tar_number(const uint8_t *p, size_t len, int base256, unsigned long *v)
{
	size_t i = 0;
	int digits = 0;

	*v = 0;
	if (base256 && (p[0] == 0x80 || p[0] == 0xff))
		return 1;
	while (i < len && p[i] == ' ')
		i++;
	for (; i < len && p[i] >= '0' && p[i] <= '7'; i++, digits++)
		*v = *v * 8 + (unsigned long)(p[i] - '0');
	for (; i < len; i++)
		if (p[i] != ' ' && p[i] != 0)
			return 0;
	return digits > 0;
}

/*
 * A tar header cut short before its 512 bytes.  With the ustar magic (at
 * 257) there is no doubt.  Without it (a cut before byte 262, or an old
 * v7 header), the 156 bytes up to the checksum are as telling: a name of
 * printable bytes padded with NULs to 100, then mode, uid, gid, size,
 * mtime and checksum, each a well-formed number, and a checksum no less
 * than the sum of the bytes there and no more than the rest could add.
 * Fewer than 156 bytes are too few to tell a tar from other data.
 */
static int sniff_tar_cut(const uint8_t *p, size_t n)
{
	static const struct { unsigned char off, len, b256; } field[] = {
		{100, 8, 0}, {108, 8, 1}, {116, 8, 1}, {124, 12, 1}, {136, 12, 0}, {148, 8, 0},
	};
	unsigned long v = 0, sum = 0;
	size_t i;

	if (n >= 512)
		return 0;
	if (n >= 262 && memcmp(p + 257, "ustar", 5) == 0)
		return 1;
	if (n < 156 || p[0] == 0)
		return 0;
	for (i = 0; i < 100 && p[i]; i++)
		if (p[i] < 0x20 || p[i] == 0x7f)
			return 0;
	for (; i < 100; i++)
		if (p[i])
			return 0;
	for (i = 0; i < sizeof field / sizeof field[0]; i++)
		if (!tar_number(p + field[i].off, field[i].len, field[i].b256, &v))
			return 0;
	/* v: the checksum, the last field */
	for (i = 0; i < n; i++)
		sum += (i >= 148 && i < 156) ? ' ' : p[i];
	if (v < sum || v > sum + 255ul * (512 - n))
		return 0;
	/* from 257: the start of the ustar magic, or a v7 header's NULs */
	if (n > 257 && memcmp(p + 257, "ustar", n - 257 < 5 ? n - 257 : 5) != 0)
		for (i = 257; i < n && i < 263; i++)
			if (p[i])
				return 0;
	return 1;
}

/* How sure the first bytes are that the data is an archive (enum arc_expect). */
static int sniff_expect(const uint8_t *p, size_t n)
{
	if (sniff_tar(p, n) || sniff_tar_cut(p, n))
		return ARC_TAR;
	if (n >= 4 && (memcmp(p, "PK\3\4", 4) == 0 || memcmp(p, "PK\5\6", 4) == 0))
		return ARC_ZIP;
	if (n >= 6 && memcmp(p, "7z\xbc\xaf\x27\x1c", 6) == 0)
		return ARC_7Z;
	if (sniff_cpio(p, n))
		return ARC_CPIO;
	return ARC_MAYBE;
}

/* ------------------------------------------------------------------ */
/* libarchive handles on a descriptor, read with pread() */

static la_ssize_t arc_read_cb(struct archive *a, void *cd, const void **out)
{
	struct arc_src *src = cd;
	ssize_t r;

	if (src->dec) {
		struct apc_err e;
		r = apc_stream_read(src->dec, src->buf, sizeof src->buf, &e);
		if (r < 0) {
			archive_set_error(a, -1, "%s", e.msg);
			return -1;
		}
		*out = src->buf;
		return r;
	}
	/* no further than size: a damaged cpio is listed up to its bad header */
	if (src->pos >= src->size)
		return 0;
	do
		r = pread(src->fd, src->buf,
			  sizeof src->buf < (uint64_t)(src->size - src->pos) ? sizeof src->buf
									   : (size_t)(src->size - src->pos),
			  (off_t)src->pos);
	while (r < 0 && errno == EINTR);
	if (r < 0) {
		archive_set_error(a, errno, "read error: %s", strerror(errno));
		return -1;
	}
	src->pos += r;
	*out = src->buf;
	return r;
}

static la_int64_t arc_skip_cb(struct archive *a, void *cd, la_int64_t req)
{
	struct arc_src *src = cd;
	int64_t left = src->size > src->pos ? src->size - src->pos : 0;

	if (req <= 0)
		return 0;
	if (req > left)
		req = left;
	src->pos += req;
	return req;
}

static la_int64_t arc_seek_cb(struct archive *a, void *cd, la_int64_t off, int whence)
{
	struct arc_src *src = cd;
	int64_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? src->pos : src->size;

	if ((off > 0 && base > INT64_MAX - off) || base + off < 0)
		return ARCHIVE_FATAL;
	src->pos = base + off;
	return src->pos;
}

/*
 * Open a libarchive reader on its own duplicate of fd (so handles are
 * independent), or with dec given, on that decoded stream (no filters:
 * it is decoded already).  Only real archive formats are enabled, never
 * "raw" or "empty", so arbitrary data is not mistaken for an archive.
 * On failure libarchive's reason goes to why (when given).
 */
static struct archive *arc_open(int fd, int64_t size, struct apc_stream *dec,
				struct arc_src **srcp, char *why, size_t whylen)
{
	struct archive *a = archive_read_new();
	struct arc_src *src = calloc(1, sizeof *src);

	*srcp = NULL;
	if (why)
		snprintf(why, whylen, "%s", "out of memory");
	if (!a || !src)
		goto fail;
	src->fd = dec ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (src->fd < 0 && !dec)
		goto fail;
	src->size = size;
	src->dec = dec;
	if (!dec)
		archive_read_support_filter_all(a);
	archive_read_support_format_tar(a);
	archive_read_support_format_zip(a);
	archive_read_support_format_cpio(a);
	archive_read_support_format_7zip(a);
	archive_read_set_read_callback(a, arc_read_cb);
	if (!dec) {
		archive_read_set_skip_callback(a, arc_skip_cb);
		archive_read_set_seek_callback(a, arc_seek_cb);
	}
	archive_read_set_callback_data(a, src);
	if (archive_read_open1(a) != ARCHIVE_OK) {
		if (why)
			arc_why(a, why, whylen);
		goto fail;
	}
	*srcp = src;
	return a;
fail:
	if (a)
		archive_read_free(a);
	if (src && src->fd >= 0)
		close(src->fd);
	free(src);
	return NULL;
}

static void arc_close(struct archive *a, struct arc_src *src)
{
	if (a)
		archive_read_free(a);
	if (src) {
		if (src->fd >= 0)
			close(src->fd);
		free(src);
	}
}

/* base, or with a compression around it "tar.bz2" (kept in in->kindbuf). */
static const char *kind_with(struct apc_input *in, const char *base, int filter)
{
	for (size_t i = 1; filter != ARCHIVE_FILTER_NONE && i < sizeof dec_info / sizeof *dec_info; i++)
		if (dec_info[i].filter == filter) {
			snprintf(in->kindbuf, sizeof in->kindbuf, "%s.%s", base, dec_info[i].ext);
			return in->kindbuf;
		}
	return base;
}

static const char *arc_kind(struct apc_input *in, struct archive *a)
{
	int fmt = archive_format(a) & ARCHIVE_FORMAT_BASE_MASK;
	int filt = archive_filter_count(a) > 1 ? archive_filter_code(a, 0) : ARCHIVE_FILTER_NONE;
	const char *base = fmt == ARCHIVE_FORMAT_ZIP ? "zip"
			 : fmt == ARCHIVE_FORMAT_CPIO ? "cpio"
			 : fmt == ARCHIVE_FORMAT_7ZIP ? "7zip" : "tar";

	return kind_with(in, base, filt);
}

/* ------------------------------------------------------------------ */
/* member names */

/*
 * Normalise an entry path: drop "." and empty components.  Returns 0 with
 * *out set, 1 if the path is absolute or climbs with "..", 2 if nothing
 * is left (the archive's "./" entry).
 */
static int name_normalise(const char *name, char **out)
{
	size_t len = strlen(name), o = 0;
	const char *p = name;
	char *r;

	*out = NULL;
	if (name[0] == '/' || len > IN_MAX_NAME)
		return 1;
	r = malloc(len + 1);
	if (!r)
		return -1;
	while (*p) {
		const char *e = strchr(p, '/');
		size_t k = e ? (size_t)(e - p) : strlen(p);
		if (k == 2 && p[0] == '.' && p[1] == '.') {
			free(r);
			return 1;
		}
		if (k > 0 && !(k == 1 && p[0] == '.')) {
			if (o)
				r[o++] = '/';
			memcpy(r + o, p, k);
			o += k;
		}
		p += k;
		if (*p == '/')
			p++;
	}
	r[o] = '\0';
	if (o == 0) {
		free(r);
		return 2;
	}
	*out = r;
	return 0;
}

static int mem_add(struct apc_input *in, char *name, char *orig, uint64_t index,
		   struct apc_err *err)
{
	if (in->nmem >= IN_MAX_MEMBERS) {
		free(name);
		free(orig);
		return apc_err_set(err, APC_ENOMEM, in->path, APC_NO_OFFSET,
				   "more than %u members", IN_MAX_MEMBERS);
	}
	if (in->nmem == in->capmem) {
		size_t ncap = in->capmem ? in->capmem * 2 : 64;
		struct in_member *m = realloc(in->mem, ncap * sizeof *m);
		if (!m) {
			free(name);
			free(orig);
			return in_nomem(err);
		}
		in->mem = m;
		in->capmem = ncap;
	}
	in->mem[in->nmem].name = name;
	in->mem[in->nmem].orig = orig;
	in->mem[in->nmem].index = index;
	in->mem[in->nmem].data_off = -1;
	in->mem[in->nmem].size = -1;
	in->mem[in->nmem].zoff = -1;
	in->mem[in->nmem].zpt = -1;
	in->mem[in->nmem].zlen = -1;
	in->nmem++;
	return APC_OK;
}

/* Sort by name; on duplicates the later entry wins (tar append semantics). */
static int mem_cmp(const void *a, const void *b)
{
	const struct in_member *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	return x->index < y->index ? -1 : x->index > y->index;
}

static int mem_finish(struct apc_input *in, struct apc_err *err)
{
	size_t w = 0;

	if (in->nmem) /* an empty archive has no array: qsort(NULL) is undefined */
		qsort(in->mem, in->nmem, sizeof *in->mem, mem_cmp);
	for (size_t i = 0; i < in->nmem; i++) {
		if (i + 1 < in->nmem && strcmp(in->mem[i].name, in->mem[i + 1].name) == 0) {
			free(in->mem[i].name);
			free(in->mem[i].orig);
			continue;
		}
		in->mem[w++] = in->mem[i];
	}
	in->nmem = w;
	in->names = malloc((in->nmem ? in->nmem : 1) * sizeof *in->names);
	if (!in->names)
		return in_nomem(err);
	for (size_t i = 0; i < in->nmem; i++)
		in->names[i] = in->mem[i].name;
	return APC_OK;
}

/* While every member sits under one top-level folder, remove that
 * folder: a trace is found however deep the archive holds it alone
 * ("trace/ltt1/cpu/0" from git archive --prefix, "home/me/ltt1/cpu/0"
 * from tar of a full path), as the folder the user means.  Of a damaged
 * archive, one folder only: the members the damage left may all be in
 * one folder of the trace ("ltt1/info/system.xml" alone), which must
 * stay. */
static void mem_strip_top(struct apc_input *in)
{
	for (int level = 0; level == 0 || in->damage.status >= 0; level++) {
		size_t plen;
		const char *slash;

		if (in->nmem == 0)
			return;
		slash = strchr(in->mem[0].name, '/');
		if (!slash)
			return;
		plen = (size_t)(slash - in->mem[0].name) + 1;
		for (size_t i = 1; i < in->nmem; i++)
			if (strncmp(in->mem[i].name, in->mem[0].name, plen) != 0)
				return;
		for (size_t i = 0; i < in->nmem; i++)
			memmove(in->mem[i].name, in->mem[i].name + plen,
				strlen(in->mem[i].name + plen) + 1);
	}
}

/* ------------------------------------------------------------------ */
/* trees: directories */

static int dir_walk(struct apc_input *in, const char *abs, const char *rel, int depth,
		    struct apc_err *err)
{
	DIR *d;
	struct dirent *de;
	int rc = APC_OK;

	if (depth > IN_MAX_DEPTH)
		return apc_err_set(err, APC_EDATA, abs, APC_NO_OFFSET,
				   "directories nested more than %d deep", IN_MAX_DEPTH);
	d = opendir(abs);
	if (!d)
		return apc_err_sys(err, APC_EIO, abs, "cannot open", errno);
	while (rc == APC_OK && (errno = 0, de = readdir(d)) != NULL) {
		struct stat st;
		char *cabs, *crel;
		size_t la = strlen(abs), ln = strlen(de->d_name), lr = strlen(rel);

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (lr + 1 + ln > IN_MAX_NAME)
			continue;
		cabs = malloc(la + ln + 2);
		crel = malloc(lr + ln + 2);
		if (!cabs || !crel) {
			free(cabs);
			free(crel);
			rc = in_nomem(err);
			break;
		}
		sprintf(cabs, "%s%s%s", abs, la && abs[la - 1] == '/' ? "" : "/", de->d_name);
		sprintf(crel, "%s%s%s", rel, lr ? "/" : "", de->d_name);
		if (lstat(cabs, &st) == 0) {
			/* follow symlinks to files, but never into directories (loops) */
			if (S_ISLNK(st.st_mode) && stat(cabs, &st) == 0 && S_ISREG(st.st_mode)) {
				rc = mem_add(in, crel, NULL, 0, err);
				crel = NULL;
			} else if (S_ISREG(st.st_mode)) {
				rc = mem_add(in, crel, NULL, 0, err);
				crel = NULL;
			} else if (S_ISDIR(st.st_mode)) {
				rc = dir_walk(in, cabs, crel, depth + 1, err);
			}
		}
		free(cabs);
		free(crel);
	}
	if (rc == APC_OK && errno != 0 && !de)
		rc = apc_err_sys(err, APC_EIO, abs, "cannot read the directory", errno);
	closedir(d);
	return rc;
}

/* ------------------------------------------------------------------ */
/* trees: archives */

/* The entry listed last, to tell where damage after it lies. */
struct arc_last {
	int have;
	int member;   /* it is in->mem's last */
	int64_t pos;  /* where libarchive stood after its header, or -1 */
	char name[256];
	int64_t off;  /* where its data starts (plain tar), else -1 */
	int64_t size; /* its size from the header, or -1 */
	int64_t hdr;  /* where its header starts */
};

/*
 * Record in in->damage why listing stopped: for a plain tar, where the
 * file ends against what the last header promised; otherwise what
 * libarchive says.  The offset is in the archive file (for a .tar.gz
 * whose compressed stream is intact, in the decompressed tar).
 */
/*
 * A 7z archive lists its members in a header at its end, at the place
 * its first 32 bytes give: one cut short has lost it, and with it every
 * member.  Records that in in->damage; 0 when the file reaches that far
 * (the damage is elsewhere).
 */
static int sevenzip_cut(struct apc_input *in)
{
	uint8_t h[32];
	uint64_t off = 0, len = 0;
	int64_t size = in->arc_size;

	if (size < 32 || pread(in->arc_fd, h, 32, 0) != 32) {
		apc_err_set(&in->damage, APC_EDATA, in->path, size,
			    "truncated 7z archive: it ends inside its signature header (%lld of its 32 "
			    "bytes)", (long long)(size < 32 ? size : 0));
		return 1;
	}
	for (int i = 7; i >= 0; i--) {
		off = off << 8 | h[12 + i];
		len = len << 8 | h[20 + i];
	}
	if (off > (uint64_t)INT64_MAX / 2 || len > (uint64_t)INT64_MAX / 2 ||
	    32 + off + len <= (uint64_t)size)
		return 0;
	apc_err_set(&in->damage, APC_EDATA, in->path, size,
		    "truncated 7z archive: it ends before the header listing its members (bytes "
		    "%llu to %llu), so none can be read", (unsigned long long)(32 + off),
		    (unsigned long long)(32 + off + len));
	return 1;
}

/*
 * Where the header after the last member listed is in an ASCII cpio
 * archive (from that member's own header, as libarchive found it; 0
 * before the first), and *hl its length; -1 when the headers are not
 * ASCII cpio's (binary cpio, a compressed one's listing).
 */
static int64_t cpio_next(struct apc_input *in, const struct arc_last *last, size_t *hl)
{
	uint8_t h[110];
	uint64_t namesz, filesz;
	int64_t q;
	int newc;

	if (pread(in->arc_fd, h, 6, 0) != 6 || !sniff_cpio(h, 6))
		return -1;
	newc = h[5] != '7';
	*hl = newc ? 110 : 76;
	if (!last->have)
		return 0;
	if (last->hdr < 0 || last->hdr > in->arc_size - (int64_t)*hl ||
	    pread(in->arc_fd, h, *hl, (off_t)last->hdr) != (ssize_t)*hl || !sniff_cpio(h, *hl))
		return -1;
	namesz = newc ? cpio_num(h + 94, 8, 16) : cpio_num(h + 59, 6, 8);
	filesz = newc ? cpio_num(h + 54, 8, 16) : cpio_num(h + 65, 11, 8);
	/* (8 hex or 11 octal digits at most: no overflow) */
	q = last->hdr + (int64_t)*hl + (int64_t)namesz;
	if (newc) /* "new" pads the header with its name, and the data, to 4 bytes */
		q = (q + 3) & ~(int64_t)3;
	q += (int64_t)filesz;
	if (newc)
		q = (q + 3) & ~(int64_t)3;
	return q;
}

/*
 * Where an ASCII cpio archive's listing stopped: the header after the
 * last member cut short, or there and unreadable.  0 when the headers
 * are not ASCII cpio's (libarchive's words only, then).
 */
static int cpio_damage(struct apc_input *in, const struct arc_last *last, const char *why)
{
	int64_t size = in->arc_size;
	size_t hl;
	int64_t q = cpio_next(in, last, &hl);

	if (q < 0)
		return 0;
	if (size == q && last->have)
		/* a cut between members: as a tar's (tar_end_check) */
		apc_err_set(&in->damage, APC_EDATA, in->path, size,
			    "truncated cpio archive: it ends after member %s with no TRAILER!!! entry",
			    last->name);
	else if (size - q < (int64_t)hl)
		apc_err_set(&in->damage, APC_EDATA, in->path, size,
			    "truncated cpio archive: it ends inside the member header after %s (%lld of "
			    "its %zu bytes)", last->have ? last->name : "its start",
			    (long long)(size > q ? size - q : 0), hl);
	else
		apc_err_set(&in->damage, APC_EDATA, in->path, q,
			    "damaged cpio archive: the header after %s cannot be read (%s)",
			    last->have ? last->name : "its start", why);
	return 1;
}

static int64_t zip_dir_damage(struct apc_input *in, int *in_dir);

static void arc_damage(struct apc_input *in, struct archive *a, int expect,
		       const struct arc_last *last, const char *why)
{
	const char *kind = in->kind ? in->kind
			 : expect == ARC_ZIP ? "zip"
			 : expect == ARC_7Z ? "7z"
			 : expect == ARC_CPIO ? "cpio" : "tar";
	const char *after = last->have ? last->name : "its start";
	int64_t size = in->arc_size;
	int trunc = strstr(why, "runcated") != NULL ||
		    (a && (int64_t)archive_filter_bytes(a, -1) >= size);

	int fmt = a ? archive_format(a) & ARCHIVE_FORMAT_BASE_MASK : 0;

	if ((expect == ARC_7Z || fmt == ARCHIVE_FORMAT_7ZIP) && sevenzip_cut(in))
		return;
	if ((expect == ARC_CPIO || fmt == ARCHIVE_FORMAT_CPIO) && cpio_damage(in, last, why))
		return;

	if (expect == ARC_TAR && (!last->have || last->off >= 0)) {
		int64_t end = last->have ? last->off + last->size : 0;
		int64_t hdr = (end + 511) & ~(int64_t)511;

		if (last->have && end > size)
			apc_err_set(&in->damage, APC_EDATA, in->path, size,
				    "truncated %s archive: it ends inside the data of %s (%lld of its "
				    "%lld bytes)", kind, last->name, (long long)(size - last->off),
				    (long long)last->size);
		else if (size < hdr)
			apc_err_set(&in->damage, APC_EDATA, in->path, size,
				    "truncated %s archive: it ends in the padding after %s", kind,
				    last->name);
		else if (size < hdr + 512)
			apc_err_set(&in->damage, APC_EDATA, in->path, size,
				    "truncated %s archive: it ends inside the member header after %s "
				    "(%lld of its 512 bytes)", kind, after, (long long)(size - hdr));
		else
			apc_err_set(&in->damage, APC_EDATA, in->path, trunc ? size : hdr,
				    "%s %s archive: the header after %s cannot be read (%s)",
				    trunc ? "truncated" : "damaged", kind, after, why);
		return;
	}
	if (!trunc && (expect == ARC_ZIP || fmt == ARCHIVE_FORMAT_ZIP)) {
		int in_dir = 0;
		int64_t at = zip_dir_damage(in, &in_dir);
		if (at >= 0 && in_dir) {
			apc_err_set(&in->damage, APC_EDATA, in->path, at,
				    "damaged %s archive: its central directory cannot be read (%s)", kind,
				    why);
			return;
		}
		if (at >= 0) {
			apc_err_set(&in->damage, APC_EDATA, in->path, at,
				    "damaged %s archive: the member after %s cannot be read (%s)", kind,
				    after, why);
			return;
		}
	}
	if (trunc)
		apc_err_set(&in->damage, APC_EDATA, in->path, size,
			    "truncated %s archive: it ends inside %s%s (%s)", kind,
			    last->have ? last->name : "its first member header",
			    last->have ? " or the header after it" : "", why);
	else
		apc_err_set(&in->damage, APC_EDATA, in->path, APC_NO_OFFSET,
			    "damaged %s archive: the member after %s cannot be read (%s)", kind, after,
			    why);
}

/*
 * 1 if the last 64 KiB of a zip file hold its end of central directory
 * record: every complete zip has one there (after at most a 64 KiB
 * comment), so a zip without it was cut short.
 */
static int zip_has_end(int fd, int64_t size)
{
	size_t n = size < 22 + 65535 ? (size_t)size : 22 + 65535;
	uint8_t *b = malloc(n ? n : 1);
	int found = 0;

	if (!b)
		return 1; /* cannot tell: do not accuse the file */
	if (pread(fd, b, n, (off_t)(size - (int64_t)n)) == (ssize_t)n)
		for (size_t i = n >= 22 ? n - 22 + 1 : 0; i-- > 0 && !found;)
			found = memcmp(b + i, "PK\5\6", 4) == 0;
	free(b);
	return found;
}

static unsigned zip_u16(const uint8_t *p)
{
	return (unsigned)p[0] | (unsigned)p[1] << 8;
}


static uint64_t zip_u64(const uint8_t *p)
{
	return (uint64_t)apc_le32(p) | (uint64_t)apc_le32(p + 4) << 32;
}

/*
 * Where a zip that libarchive could not list (not cut short: it has its
 * end of central directory record) is damaged, as far as its own
 * records tell: the central directory is walked from the place its end
 * record (or zip64's) gives, and the first entry whose signature or
 * lengths do not hold is the damage (*in_dir set); else the lowest local
 * header an entry points to that does not start with its signature.
 * -1 when neither shows the damage (libarchive's words only, then).
 */
static int64_t zip_dir_damage(struct apc_input *in, int *in_dir)
{
	int64_t size = in->arc_size, bad = -1, e = -1;
	size_t n = size < 22 + 65535 ? (size_t)size : 22 + 65535;
	uint8_t *b = malloc(n ? n : 1), h[56];
	uint64_t entries, doff, p;

	*in_dir = 0;
	if (!b || in->arc_fd < 0)
		goto out;
	if (pread(in->arc_fd, b, n, (off_t)(size - (int64_t)n)) != (ssize_t)n)
		goto out;
	for (size_t i = n >= 22 ? n - 22 + 1 : 0; i-- > 0;)
		if (memcmp(b + i, "PK\5\6", 4) == 0) {
			e = size - (int64_t)n + (int64_t)i;
			memcpy(h, b + i, 22);
			break;
		}
	if (e < 0)
		goto out;
	entries = zip_u16(h + 10);
	doff = apc_le32(h + 16);
	if (entries == 0xffff || doff == UINT32_MAX) {
		/* zip64: its locator just before, giving its own end record */
		uint64_t z;
		if (e < 20 || pread(in->arc_fd, h, 20, (off_t)(e - 20)) != 20 ||
		    memcmp(h, "PK\6\7", 4) != 0)
			goto out;
		z = zip_u64(h + 8);
		if (z > (uint64_t)e || pread(in->arc_fd, h, 56, (off_t)z) != 56 ||
		    memcmp(h, "PK\6\6", 4) != 0)
			goto out;
		entries = zip_u64(h + 32);
		doff = zip_u64(h + 48);
		e = (int64_t)z;
	}
	if (doff > (uint64_t)e) {
		bad = e; /* the end record points past itself */
		*in_dir = 1;
		goto out;
	}
	p = doff;
	for (uint64_t k = 0; k < entries; k++) {
		uint64_t next, lho;
		if (p + 46 > (uint64_t)e || pread(in->arc_fd, h, 46, (off_t)p) != 46 ||
		    memcmp(h, "PK\1\2", 4) != 0) {
			bad = (int64_t)p;
			*in_dir = 1;
			break;
		}
		next = p + 46 + zip_u16(h + 28) + zip_u16(h + 30) + zip_u16(h + 32);
		if (next > (uint64_t)e) {
			bad = (int64_t)p;
			*in_dir = 1;
			break;
		}
		lho = apc_le32(h + 42);
		if (lho != UINT32_MAX && (bad < 0 || (int64_t)lho < bad)) {
			uint8_t l[4];
			if (lho > doff || pread(in->arc_fd, l, 4, (off_t)lho) != 4 ||
			    memcmp(l, "PK\3\4", 4) != 0)
				bad = (int64_t)lho;
		}
		p = next;
	}
out:
	free(b);
	return bad;
}

/*
 * The last member listed of a zip cut short (or damaged), if the cut
 * goes through its data: libarchive's zip reader drops the output it was
 * inflating when the data breaks (up to its 256 KiB buffer, at times
 * more), so such a member is read from its data directly instead
 * (m->data_off; m->zlen bytes of raw deflate at most when deflated),
 * every byte before the cut.  A zip cut short has lost its central
 * directory and is listed as a stream, header after header: libarchive
 * stood at hdr before reading the member's local header (and the data
 * descriptor of the one before, if any), and at data after it, which
 * finds the header, checked by its name.  With its sizes in that
 * header the member is known to be cut (or not:
 * a whole one is left to libarchive, which checks its CRC); with its
 * sizes after its data, a deflated one is read up to its end or the
 * file's (a stored one needs its size).  Encrypted members, zip64 ones
 * and other methods are left to libarchive.
 */
static void zip_cut_member(struct apc_input *in, struct in_member *m, int64_t hdr, int64_t data)
{
	/* a data descriptor before the header: none, or 12 to 24 bytes */
	static const int skip[] = {0, 12, 16, 20, 24};
	uint8_t h[30];
	char name[IN_MAX_NAME];
	size_t n = strlen(m->orig), k;
	unsigned flags, method;
	uint32_t csize, usize;
	int64_t left = in->arc_size - data;

	if (hdr < 0 || n > sizeof name)
		return;
	for (k = 0; k < sizeof skip / sizeof *skip; k++) {
		int64_t at = hdr + skip[k];
		if (pread(in->arc_fd, h, sizeof h, (off_t)at) == (ssize_t)sizeof h &&
		    memcmp(h, "PK\3\4", 4) == 0 && zip_u16(h + 26) == n &&
		    at + 30 + (int64_t)n + zip_u16(h + 28) == data)
			break;
	}
	if (k == sizeof skip / sizeof *skip ||
	    pread(in->arc_fd, name, n, (off_t)(hdr + skip[k] + 30)) != (ssize_t)n ||
	    memcmp(name, m->orig, n) != 0)
		return;
	flags = zip_u16(h + 6);
	method = zip_u16(h + 8);
	csize = apc_le32(h + 18);
	usize = apc_le32(h + 22);
	if ((flags & 1) || (method != 0 && method != 8) || left < 0)
		return;
	if (!(flags & 8)) {
		if (csize == UINT32_MAX || usize == UINT32_MAX || (method == 0 && csize != usize) ||
		    (int64_t)csize <= left)
			return;
		m->size = usize;
	} else if (method == 0 && (m->size < 0 || m->size <= left)) {
		return;
	}
	m->data_off = data;
	if (method == 8)
		m->zlen = flags & 8 ? left : (int64_t)csize;
}

/*
 * A tar whose listing ended (libarchive's ARCHIVE_EOF) with its last
 * member's data (and padding) ending at end, and libarchive now at
 * archive_filter_bytes(a, 0): a tar ends with two zero blocks (GNU tar
 * then pads to its 10 KiB record), which libarchive reads past, but a
 * tar that simply stops at a block boundary is taken as ending there,
 * silently.  That is a cut between members (a copy that stopped at a
 * 512-byte boundary, as some do at 4 KiB), and every member after it is
 * lost: it goes to in->damage.  One zero block alone loses nothing and
 * is let be.  Where libarchive read past end, the bytes it read must be
 * zeros (in a plain tar, where they can be read again): else they were
 * the headers of a member the cut took (a pax or GNU long name header
 * with nothing after it).
 */
static void tar_end_check(struct apc_input *in, struct apc_stream *dec, struct archive *a,
			  const struct arc_last *last, int64_t end)
{
	int64_t after = (int64_t)archive_filter_bytes(a, 0);
	const char *kind = in->kind ? in->kind : "tar";
	uint8_t b[4096];
	int zero = after > end;

	for (int64_t at = end; zero && !dec && at < after;) {
		size_t n = after - at < (int64_t)sizeof b ? (size_t)(after - at) : sizeof b;
		if (pread(in->arc_fd, b, n, (off_t)at) != (ssize_t)n)
			break; /* cannot tell: do not accuse the file */
		for (size_t i = 0; i < n && zero; i++)
			zero = b[i] == 0;
		at += (int64_t)n;
	}
	if (zero)
		return;
	if (after == end)
		apc_err_set(&in->damage, APC_EDATA, in->path, end,
			    "truncated %s archive: it ends after member %s with no end-of-archive "
			    "blocks", kind, last->have ? last->name : "its start");
	else
		apc_err_set(&in->damage, APC_EDATA, in->path, after,
			    "truncated %s archive: it ends inside the headers of the member after %s",
			    kind, last->have ? last->name : "its start");
}

/*
 * List the regular-file members of the archive in in->arc_fd.  Returns
 * APC_OK, 1 if libarchive does not recognise the data as an archive (only
 * when expect is ARC_MAYBE), or a negative status.  Damage stops the
 * listing and is recorded in in->damage: the members before it stay
 * (salvage), and with none listed the input cannot be opened (APC_EDATA,
 * err set to the damage).  With dec given, the archive is read from that
 * decoded stream instead (its members are still read from in->arc_fd).
 */
static int arc_list(struct apc_input *in, struct apc_stream *dec, int expect, struct apc_err *err)
{
	struct arc_src *src;
	char why[200];
	struct archive *a = arc_open(in->arc_fd, in->arc_size, dec, &src, why, sizeof why);
	struct archive_entry *e;
	struct arc_last last = {.have = 0, .member = 0, .pos = -1, .off = -1, .size = -1, .hdr = -1};
	uint64_t index = 0;
	int64_t end = -1;
	int rc = APC_OK;

	if (!a) {
		if (expect == ARC_MAYBE)
			return 1;
		arc_damage(in, NULL, expect, &last, why);
		if (err)
			*err = in->damage;
		return APC_EDATA;
	}
	for (;; index++) {
		int r = ARCHIVE_OK;
		const char *p;
		char *name, *orig;
		int plain;

		/* a tar's last member read past, to know where its data ends */
		if (index > 0 && (archive_format(a) & ARCHIVE_FORMAT_BASE_MASK) == ARCHIVE_FORMAT_TAR) {
			r = archive_read_data_skip(a);
			if (r == ARCHIVE_EOF) {
				archive_set_error(a, EIO, "Premature end-of-file.");
				r = ARCHIVE_FATAL;
			}
			if (r == ARCHIVE_FATAL)
				end = -1;
			else
				end = (int64_t)archive_filter_bytes(a, 0);
		}
		if (r != ARCHIVE_FATAL)
			r = archive_read_next_header(a, &e);
		if (r == ARCHIVE_EOF) {
			if (end >= 0)
				tar_end_check(in, dec, a, &last, end);
			break;
		}
		/* ARCHIVE_RETRY is a header it could not read (a tar's
		 * checksum fails): damage like any other, not a member */
		if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
			if (index == 0 && expect == ARC_MAYBE) {
				rc = 1;
			} else {
				arc_why(a, why, sizeof why);
				arc_damage(in, a, expect, &last, why);
			}
			break;
		}
		if (index == 0)
			in->kind = arc_kind(in, a);
		/* libarchive skips damage in a cpio to the next header it can
		 * find, with a mere warning (and the damage's offset as the
		 * header's): the damage ends the listing */
		if (!dec && (archive_format(a) & ARCHIVE_FORMAT_BASE_MASK) == ARCHIVE_FORMAT_CPIO) {
			uint8_t h[110];
			size_t hl;
			int64_t q = cpio_next(in, &last, &hl);
			if (q >= 0 && (pread(in->arc_fd, h, hl, (off_t)q) != (ssize_t)hl ||
				       !sniff_cpio(h, hl))) {
				arc_why(a, why, sizeof why);
				apc_err_set(&in->damage, APC_EDATA, in->path, q,
					    "damaged cpio archive: the header after %s cannot be read (%s)",
					    last.have ? last.name : "its start", why);
				break;
			}
		}
		/* A plain tar's data follows its header where libarchive now
		 * stands: its members are read from there directly. */
		plain = !dec && (archive_format(a) & ARCHIVE_FORMAT_BASE_MASK) == ARCHIVE_FORMAT_TAR &&
			archive_filter_count(a) == 1 && archive_filter_code(a, 0) == ARCHIVE_FILTER_NONE &&
			archive_entry_sparse_count(e) == 0 && archive_entry_size_is_set(e);
		last.have = 1;
		snprintf(last.name, sizeof last.name, "%s",
			 archive_entry_pathname(e) ? archive_entry_pathname(e) : "a nameless member");
		last.off = plain ? (int64_t)archive_filter_bytes(a, 0) : -1;
		last.size = archive_entry_size_is_set(e) ? (int64_t)archive_entry_size(e) : -1;
		last.hdr = dec ? -1 : (int64_t)archive_read_header_position(a);
		last.pos = dec ? -1 : (int64_t)archive_filter_bytes(a, 0);
		last.member = 0;
		if (archive_entry_filetype(e) != AE_IFREG || archive_entry_hardlink(e))
			continue;
		p = archive_entry_pathname(e);
		if (!p) {
			in->skipped++;
			continue;
		}
		r = name_normalise(p, &name);
		if (r < 0) {
			rc = in_nomem(err);
			break;
		}
		if (r == 1)
			in->skipped++;
		if (r)
			continue;
		orig = strdup(p);
		if (!orig) {
			free(name);
			rc = in_nomem(err);
			break;
		}
		rc = mem_add(in, name, orig, index, err);
		if (rc < 0)
			break;
		in->mem[in->nmem - 1].data_off = last.off;
		in->mem[in->nmem - 1].size = last.size;
		last.member = 1;
		if (dec && dec->gzr && !dec->failed &&
		    (archive_format(a) & ARCHIVE_FORMAT_BASE_MASK) == ARCHIVE_FORMAT_TAR &&
		    archive_entry_sparse_count(e) == 0 && last.size >= 0) {
			/* its data starts where libarchive now stands */
			in->mem[in->nmem - 1].zoff = (int64_t)archive_filter_bytes(a, 0);
			in->mem[in->nmem - 1].zpt =
				gz_keep(in, dec->gzr, (uint64_t)in->mem[in->nmem - 1].zoff);
		}
	}
	if (rc == APC_OK && !in->kind)
		in->kind = arc_kind(in, a);
	if (rc == APC_OK && in->damage.status < 0 && last.member &&
	    (archive_format(a) & ARCHIVE_FORMAT_BASE_MASK) == ARCHIVE_FORMAT_ZIP)
		zip_cut_member(in, &in->mem[in->nmem - 1], last.hdr, last.pos);
	if (rc == APC_OK && in->damage.status == APC_OK &&
	    (archive_format(a) & ARCHIVE_FORMAT_BASE_MASK) == ARCHIVE_FORMAT_ZIP &&
	    !zip_has_end(in->arc_fd, in->arc_size))
		apc_err_set(&in->damage, APC_EDATA, in->path, in->arc_size,
			    "truncated zip archive: it has no end of central directory record");
	arc_close(a, src);
	if (rc == APC_OK && in->damage.status < 0 && in->nmem == 0) {
		if (err)
			*err = in->damage;
		rc = APC_EDATA;
	}
	return rc;
}

/* ------------------------------------------------------------------ */
/* opening */

/*
 * What a temporary copy leaves free on its file system: the smaller of
 * 1 GiB and a tenth of it.  A few KB of bzip2 decode to gigabytes, and
 * filling TMPDIR to the last byte would fail whatever else writes there.
 */
#define SPOOL_CHECK_EVERY (64u << 20) /* bytes written between checks */

static uint64_t spool_reserve(const struct statvfs *v)
{
	uint64_t total = (uint64_t)v->f_blocks * v->f_frsize;

	return total / 10 < (1ull << 30) ? total / 10 : 1ull << 30;
}

/*
 * Copy the rest of s into an unlinked temporary file; returns its fd.
 * With damage given, damaged data (a cut or corrupt compressed stream) ends
 * the copy instead of failing it: what came before is kept, and the
 * error goes to *damage.
 */
static int spool(struct apc_stream *s, struct apc_err *err, struct apc_err *damage, int *full)
{
	const char *dir = getenv("TMPDIR");
	char *tmpl;
	uint8_t *buf;
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	tmpl = malloc(strlen(dir) + 32);
	buf = malloc(IN_BUFSZ);
	if (!tmpl || !buf) {
		free(tmpl);
		free(buf);
		return in_nomem(err);
	}
	sprintf(tmpl, "%s/apctools-XXXXXX", dir);
	fd = mkostemp(tmpl, O_CLOEXEC);
	if (fd < 0) {
		apc_err_sys(err, APC_EIO, tmpl, "cannot create", errno);
		free(tmpl);
		free(buf);
		return APC_EIO;
	}
	unlink(tmpl);
	/* checked again after half of what is left to the reserve, so
	 * that the copy stops short of it, and at least every 64 MiB */
	for (uint64_t since = 0, next = 0;;) {
		struct apc_err e;
		ssize_t r, w = 0;
		struct statvfs v;

		if (since >= next) {
			uint64_t avail, reserve;

			since = 0;
			next = SPOOL_CHECK_EVERY;
			if (fstatvfs(fd, &v) == 0) {
				avail = (uint64_t)v.f_bavail * v.f_frsize;
				reserve = spool_reserve(&v) + IN_BUFSZ;
				if (avail <= reserve)
					next = 0;
				else if ((avail - reserve) / 2 < next)
					next = (avail - reserve) / 2;
			}
			if (next < IN_BUFSZ) {
				char what[300];
				if (full)
					*full = 1;
				snprintf(what, sizeof what,
					 "cannot copy it into %s: it would leave less than %llu MiB free there",
					 dir, (unsigned long long)(spool_reserve(&v) >> 20));
				if (err)
					apc_err_set(err, APC_EIO, s->name, APC_NO_OFFSET, "%s", what);
				goto fail;
			}
		}
		apc_err_clear(&e);
		r = apc_stream_read(s, buf, IN_BUFSZ, &e);
		if (r < 0 && damage && e.status == APC_EDATA) {
			*damage = e;
			break;
		}
		if (r < 0) {
			if (err)
				*err = e;
			goto fail;
		}
		if (r == 0)
			break;
		while (w < r) {
			ssize_t k = write(fd, buf + w, (size_t)(r - w));
			if (k < 0 && errno == EINTR)
				continue;
			if (k < 0) {
				char what[300];
				if (full && (errno == ENOSPC || errno == EDQUOT || errno == EFBIG))
					*full = 1;
				snprintf(what, sizeof what, "cannot copy it into %s", dir);
				apc_err_sys(err, APC_EIO, s->name, what, errno);
				goto fail;
			}
			w += k;
		}
		since += (uint64_t)r;
	}
	free(tmpl);
	free(buf);
	if (lseek(fd, 0, SEEK_SET) < 0) {
		apc_err_sys(err, APC_EIO, s->name, "cannot rewind its temporary copy", errno);
		close(fd);
		return APC_EIO;
	}
	return fd;
fail:
	close(fd);
	free(tmpl);
	free(buf);
	return err ? (err->status < 0 ? err->status : APC_EIO) : APC_EIO;
}

static int input_set_tree(struct apc_input *in, const char *label, struct apc_err *err)
{
	int rc;

	in->tree = 1;
	in->label = strdup(label);
	if (!in->label)
		return in_nomem(err);
	rc = mem_finish(in, err);
	return rc;
}

/*
 * libarchive reads a cpio member's name in one read-ahead, allocating the
 * declared size first: a 111-byte file declaring a 858 MB name cost a
 * 1 GiB malloc.  It also resynchronises on damage, taking the next
 * "070701" anywhere in the file as a header.  So when fd starts as a
 * "new" (070701/070702) or "odc" (070707) cpio archive, every place
 * libarchive could take for a header (the magic, then hex or octal
 * digits to the header's end) is read as one, and the first whose name
 * or data runs past the end of the file is where libarchive must stop:
 * *limit becomes its offset and *cut says why (status APC_EDATA), so the
 * members before it are listed and it is the damage.  (Binary cpio
 * sizes are 16 bits; compressed archives are checked in their decoded
 * copy.)  APC_OK, or APC_ENOMEM.
 */
static int arc_cpio_check(int fd, uint64_t size, const char *label, struct apc_err *cut,
			  uint64_t *limit)
{
	enum { CHUNK = 65536, HDR = 110 };
	uint8_t *buf;
	uint64_t base = 0;
	int rc = APC_OK;
	ssize_t r;

	{
		uint8_t m[6];
		if (pread(fd, m, 6, 0) != 6 || memcmp(m, "07070", 5) != 0 ||
		    (m[5] != '1' && m[5] != '2' && m[5] != '7'))
			return APC_OK;
	}
	if (!(buf = malloc(CHUNK + HDR)))
		return in_nomem(cut);
	while (rc == APC_OK && base < size && (r = pread(fd, buf, CHUNK + HDR, (off_t)base)) > 0) {
		size_t n = (size_t)r;
		for (size_t i = 0; i < CHUNK && i + 6 <= n; i++) {
			const uint8_t *h = buf + i;
			int newc = h[5] == '1' || h[5] == '2';
			size_t hl = newc ? 110 : 76;
			uint64_t at = base + i, namesz, filesz, left, npad;

			if (h[0] != '0' || memcmp(h, "07070", 5) != 0 || (!newc && h[5] != '7') ||
			    n - i < hl || !cpio_digits(h, hl, newc ? 16 : 8))
				continue;
			namesz = newc ? cpio_num(h + 94, 8, 16) : cpio_num(h + 59, 6, 8);
			filesz = newc ? cpio_num(h + 54, 8, 16) : cpio_num(h + 65, 11, 8);
			left = size - at - hl;
			/* "new" pads header + name to 4 bytes */
			npad = newc ? ((hl + namesz + 3) & ~(uint64_t)3) - hl : namesz;
			if (namesz > left) {
				rc = apc_err_set(cut, APC_EDATA, label, (int64_t)at,
						 "cpio header: a name of %llu bytes runs past the end of "
						 "the archive", (unsigned long long)namesz);
			} else if (filesz > left - (npad < left ? npad : left)) {
				/* its name is there: say which member is cut */
				char name[128] = "";
				size_t k = namesz < sizeof name ? (size_t)namesz : 0;
				if (k && pread(fd, name, k, (off_t)(at + hl)) == (ssize_t)k &&
				    name[k - 1] == '\0') {
					for (size_t j = 0; j + 1 < k; j++)
						if (name[j] < ' ' || name[j] > '~')
							name[0] = '\0';
				} else {
					name[0] = '\0';
				}
				rc = apc_err_set(cut, APC_EDATA, label, (int64_t)at,
						 "cpio header%s%s: %llu bytes of data run past the end of "
						 "the archive (%llu are there)", *name ? " of " : "", name,
						 (unsigned long long)filesz,
						 (unsigned long long)(left > npad ? left - npad : 0));
			}
			if (rc != APC_OK) {
				*limit = at;
				break;
			}
		}
		base += CHUNK;
	}
	free(buf);
	return APC_OK;
}

/* Forget the members listed. */
static void input_drop_members(struct apc_input *in)
{
	for (size_t i = 0; i < in->nmem; i++) {
		free(in->mem[i].name);
		free(in->mem[i].orig);
	}
	in->nmem = 0;
	in->skipped = 0;
	gz_keep_free(in);
}

/* Forget a listing (members, damage), to list the archive another way. */
static void input_reset_tree(struct apc_input *in)
{
	input_drop_members(in);
	free(in->names);
	in->names = NULL;
	free(in->label);
	in->label = NULL;
	in->tree = 0;
	in->kind = NULL;
	if (in->arc_fd >= 0)
		close(in->arc_fd);
	in->arc_fd = -1;
	apc_err_clear(&in->damage);
}

/*
 * Try fd as an archive; 0 = it is one (tree set up, in->damage set if it
 * is damaged), 1 = not an archive (only when expect is ARC_MAYBE), or a
 * negative status (a damaged archive with nothing before the damage:
 * err and in->damage say why).  dec: see arc_list().
 */
static int input_try_archive(struct apc_input *in, int fd, const char *label, int expect,
			     struct apc_stream *dec, struct apc_err *err)
{
	struct stat st;
	struct apc_err cut;
	uint64_t limit = 0;
	int rc;

	if (fstat(fd, &st) != 0)
		return 1;
	in->arc_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (in->arc_fd < 0)
		return apc_err_sys(err, APC_EIO, label, "cannot open", errno);
	in->arc_size = st.st_size;
	/* (a compressed archive's data is not there to check) */
	apc_err_clear(&cut);
	rc = dec ? APC_OK : arc_cpio_check(fd, (uint64_t)st.st_size, label, &cut, &limit);
	if (rc < 0 && err)
		*err = cut;
	if (rc == APC_OK && cut.status < 0) {
		/* libarchive sees the archive up to the bad header, which
		 * is the damage */
		in->arc_size = (int64_t)limit;
		rc = arc_list(in, dec, ARC_CPIO, err);
		if (rc == APC_OK || rc == APC_EDATA) {
			in->damage = cut;
			rc = in->nmem ? APC_OK : APC_EDATA;
		}
	} else if (rc == APC_OK) {
		rc = arc_list(in, dec, expect, err);
	}
	if (in->damage.status < 0) {
		/* named as its members are ("<stdin>" for "-") */
		snprintf(in->damage.file, sizeof in->damage.file, "%s", label);
		if (rc < 0 && err)
			*err = in->damage;
	}
	if (rc == APC_OK) {
		mem_strip_top(in);
		return input_set_tree(in, label, err);
	}
	/* an archive for sure, damaged before its first member: still
	 * told as what it is (apc_input_open_told()) */
	if (rc < 0 && !in->kind)
		in->kind = expect == ARC_TAR ? "tar" : expect == ARC_ZIP ? "zip"
			 : expect == ARC_7Z ? "7zip" : expect == ARC_CPIO ? "cpio" : NULL;
	input_drop_members(in);
	close(in->arc_fd);
	in->arc_fd = -1;
	return rc;
}

/*
 * A compressed archive decoded by our own decoder into a temporary file,
 * then listed: damage to the compressed stream (a cut download) ends the
 * archive there, and the members before it are kept.  The stream's
 * damage is the cause, so it leads in->damage.  *sp becomes the stream
 * over the copy.
 */
static int input_from_spool(struct apc_input *in, struct apc_stream **sp, int expect,
			    struct apc_err *err, int *full)
{
	struct apc_err dd;
	struct apc_stream *t;
	int fd, rc, dec = (*sp)->dec;

	apc_err_clear(&dd);
	fd = spool(*sp, err, &dd, full);
	if (fd < 0)
		return fd;
	t = stream_new_fd(fd, (*sp)->name, 1);
	if (!t) {
		close(fd);
		return in_nomem(err);
	}
	apc_stream_close(*sp);
	*sp = t;
	rc = input_try_archive(in, fd, t->name, expect, NULL, err);
	if (dd.status < 0) {
		if (in->damage.status < 0) {
			/* "truncated gzip stream (...); truncated tar archive: ..." */
			size_t k = strlen(dd.msg), j = strlen(in->damage.msg);
			if (k + 2 < sizeof dd.msg) {
				memcpy(dd.msg + k, "; ", 2);
				k += 2;
				if (j > sizeof dd.msg - 1 - k)
					j = sizeof dd.msg - 1 - k;
				memcpy(dd.msg + k, in->damage.msg, j);
				dd.msg[k + j] = '\0';
			}
		}
		in->damage = dd;
		if (rc < 0 && err)
			*err = dd;
	}
	if (in->kind)
		in->kind = kind_with(in, in->kind, dec_info[dec].filter);
	if (rc == APC_OK)
		in->copied = 1;
	return rc;
}

/*
 * Read s to its end; APC_OK, or the error that ends it (err set).  A
 * compressed stream's end and its check (gzip's CRC, lz4's checksum)
 * come after the archive it holds ends, so the listing never reads them.
 */
static int stream_drain(struct apc_stream *s, struct apc_err *err)
{
	uint8_t *buf = malloc(IN_BUFSZ);
	struct apc_err e;
	ssize_t r;

	if (!buf)
		return in_nomem(err);
	apc_err_clear(&e);
	while ((r = apc_stream_read(s, buf, IN_BUFSZ, &e)) > 0)
		;
	free(buf);
	if (r == 0)
		return APC_OK;
	if (err)
		*err = e;
	return e.status < 0 ? e.status : APC_EIO;
}

/*
 * Start decoding s's file again from the start: a new stream over the
 * same descriptor, which s gives up.  NULL with err set on failure.
 */
static struct apc_stream *stream_restart(struct apc_stream *s, struct apc_err *err)
{
	struct apc_stream *t;
	int fd = s->fd, own = s->own_fd, dec = s->dec;

	if (lseek(fd, -(off_t)s->raw_pos, SEEK_CUR) < 0) {
		apc_err_sys(err, APC_EIO, s->name, "cannot read it again", errno);
		apc_stream_close(s);
		return NULL;
	}
	t = stream_new_fd(fd, s->name, own);
	s->own_fd = 0;
	apc_stream_close(s);
	if (!t) {
		if (own)
			close(fd);
		in_nomem(err);
		return NULL;
	}
	if (dec_start(t, dec, err) < 0) {
		apc_stream_close(t);
		return NULL;
	}
	return t;
}

/*
 * A compressed stream (s, decoding from its start) holding an archive.
 * A .tar.gz from a file is listed as our decoder gives it, which finds
 * damage where it is and checks the stream to its end, and its members
 * are decoded from seek points noted while listing: no copy is made.
 * Any other, and a damaged one, is listed from a decoded copy; a tar
 * from a file that has no room for its copy is listed as decoded, and
 * its members read with libarchive's own decoder, each from the start.
 */
static int input_compressed_archive(struct apc_input *in, struct apc_stream *s, int expect,
				    struct apc_err *err)
{
	int rc, filter = dec_info[s->dec].filter;

	if (s->seekable && expect == ARC_TAR && s->dec != DEC_GZIP) {
		/* Only gzip's members can be decoded from within (seek points):
		 * others would be decoded from the start for each member, once
		 * per CPU file for LTT, so the archive is decoded once into a
		 * temporary file and its members read from there, when there
		 * is room for it. */
		int full = 0;

		rc = input_from_spool(in, &s, expect, err, &full);
		if (!full) {
			apc_stream_close(s);
			return rc;
		}
		if (err) {
			/* "cannot copy it into DIR: REASON": the reason */
			const char *why = strrchr(err->msg, ':');
			snprintf(in->reread_why, sizeof in->reread_why, "%.*s",
				 (int)sizeof in->reread_why - 1, why ? why + 2 : err->msg);
			apc_err_clear(err);
		}
		s = stream_restart(s, err);
		if (!s)
			return err && err->status < 0 ? err->status : APC_EIO;
		in->reread = 1;
	}
	if (s->seekable && expect == ARC_TAR) {
		gz_rec_start(s);
		rc = input_try_archive(in, s->fd, s->name, expect, s, err);
		if (rc == APC_OK && in->damage.status == APC_OK) {
			rc = stream_drain(s, err);
			if (rc == APC_OK) {
				in->kind = kind_with(in, in->kind, filter);
				apc_stream_close(s);
				return APC_OK;
			}
			/* with the stream damaged past the archive's end,
			 * libarchive may fail to read the last members */
		}
		if (rc < 0 && rc != APC_EDATA) {
			input_reset_tree(in);
			apc_stream_close(s);
			return rc;
		}
		input_reset_tree(in);
		if (err)
			apc_err_clear(err);
		s = stream_restart(s, err);
		if (!s)
			return err && err->status < 0 ? err->status : APC_EIO;
	}
	rc = input_from_spool(in, &s, expect, err, NULL);
	apc_stream_close(s);
	return rc;
}

/*
 * Decide what the data behind fd is.  The stream s (over fd, nothing
 * consumed) becomes the input's stream unless the data is an archive.
 */
static int input_from_stream(struct apc_input *in, struct apc_stream *s, const char *plain_kind,
			     struct apc_err *err)
{
	const uint8_t *p;
	ssize_t n = apc_stream_peek(s, &p, IN_SNIFF, err);
	int rc, expect, dec;

	if (n < 0)
		goto fail;
	dec = sniff_dec(p, (size_t)n);
	if (dec != DEC_NONE) {
		rc = dec_start(s, dec, err);
		if (rc < 0)
			goto fail;
		n = apc_stream_peek(s, &p, IN_SNIFF, err);
		if (n < 0) {
			in->kind = dec_info[dec].name; /* cut in its first bytes */
			goto fail;
		}
		expect = sniff_expect(p, (size_t)n);
		if (expect != ARC_MAYBE)
			return input_compressed_archive(in, s, expect, err);
		in->kind = dec_info[dec].name;
		in->stream = s;
		return APC_OK;
	}
	expect = sniff_expect(p, (size_t)n);
	if (expect != ARC_MAYBE || sniff_archive(p, (size_t)n)) {
		if (!s->seekable) {
			int fd = spool(s, err, NULL, NULL);
			if (fd < 0)
				goto fail;
			struct apc_stream *t = stream_new_fd(fd, s->name, 1);
			apc_stream_close(s);
			s = t;
			if (!s) {
				close(fd);
				return in_nomem(err);
			}
		}
		rc = input_try_archive(in, s->fd, s->name, expect, NULL, err);
		if (rc < 0)
			goto fail;
		if (rc == APC_OK) {
			apc_stream_close(s);
			return APC_OK;
		}
	}
	in->kind = plain_kind;
	in->stream = s;
	return APC_OK;
fail:
	apc_stream_close(s);
	return err && err->status < 0 ? err->status : APC_EIO;
}

/* ------------------------------------------------------------------ */
/* in-memory files (apc_input_mem_set) */

static const struct apc_mem_file *memfs;
static size_t memfs_n;

/* apc_input_mem_set() : see input.h. */
void apc_input_mem_set(const struct apc_mem_file *files, size_t n)
{
	memfs = n ? files : NULL;
	memfs_n = files ? n : 0;
}

static const struct apc_mem_file *memfs_find(const char *path)
{
	for (size_t i = 0; i < memfs_n; i++)
		if (memfs[i].data && strcmp(memfs[i].path, path) == 0)
			return &memfs[i];
	return NULL;
}

/* Length of path without trailing slashes ("cap.apc/" names cap.apc). */
static size_t memfs_dirlen(const char *path)
{
	size_t n = strlen(path);

	while (n > 1 && path[n - 1] == '/')
		n--;
	return n;
}

/* 1 if path[0..n) is a folder: declared as one, or with a file under it. */
static int memfs_is_dir(const char *path, size_t n)
{
	for (size_t i = 0; i < memfs_n; i++)
		if (strncmp(memfs[i].path, path, n) == 0 &&
		    (memfs[i].path[n] == '/' || (!memfs[i].data && memfs[i].path[n] == '\0')))
			return 1;
	return 0;
}

/* A stream over f's bytes; NULL when out of memory. */
static struct apc_stream *memfs_stream(const struct apc_mem_file *f, const char *name)
{
	struct apc_stream *s = stream_new(name);

	if (!s)
		return NULL;
	s->src = SRC_MEM;
	s->mem = f->data;
	s->mem_len = f->len;
	s->size = s->raw_size = (int64_t)f->len;
	return s;
}

/* The message open(2) would give for a path that is not there. */
static int memfs_enoent(const char *path, struct apc_err *err)
{
	return apc_err_sys(err, APC_EIO, path, "cannot open", ENOENT);
}

/*
 * apc_input_open() over the in-memory set: a file becomes a stream
 * (compressions and archives detected as for a pipe), a folder a tree of the
 * files under it.
 */
static int memfs_open_input(struct apc_input *in, const char *path, struct apc_err *err)
{
	const struct apc_mem_file *f = memfs_find(path);
	size_t dl = memfs_dirlen(path);
	int rc;

	if (f) {
		struct apc_stream *s = memfs_stream(f, path);
		if (!s)
			return in_nomem(err);
		return input_from_stream(in, s, "file", err);
	}
	if (!memfs_is_dir(path, dl))
		return memfs_enoent(path, err);
	in->is_mem = in->is_dir = 1;
	in->kind = "directory";
	for (size_t i = 0; i < memfs_n; i++) {
		const char *p = memfs[i].path;
		char *name;
		if (!memfs[i].data || strncmp(p, path, dl) != 0 || p[dl] != '/')
			continue;
		if (!(name = strdup(p + dl + 1)))
			return in_nomem(err);
		rc = mem_add(in, name, NULL, 0, err);
		if (rc < 0)
			return rc;
	}
	in->label = strndup(path, dl);
	in->tree = 1;
	if (!in->label)
		return in_nomem(err);
	return mem_finish(in, err);
}

/*
 * apc_stream_open_path()'s end: s into *out, decoded when its data
 * starts with a compression's magic; closed on failure.
 */
static int stream_open_dec(struct apc_stream *s, struct apc_stream **out, struct apc_err *err)
{
	const uint8_t *p;
	ssize_t n = apc_stream_peek(s, &p, IN_SNIFF_DEC, err);
	int rc, dec;

	if (n < 0) {
		apc_stream_close(s);
		return err ? err->status : APC_EIO;
	}
	dec = sniff_dec(p, (size_t)n);
	if (dec != DEC_NONE && (rc = dec_start(s, dec, err)) < 0) {
		apc_stream_close(s);
		return rc;
	}
	*out = s;
	return APC_OK;
}

/* apc_stream_open_path() over the in-memory set. */
static int memfs_open_stream(const char *path, struct apc_stream **out, struct apc_err *err)
{
	const struct apc_mem_file *f = memfs_find(path);
	struct apc_stream *s;

	if (!f) {
		if (memfs_is_dir(path, memfs_dirlen(path)))
			return apc_err_sys(err, APC_EIO, path, "cannot read", EISDIR);
		return memfs_enoent(path, err);
	}
	if (!(s = memfs_stream(f, path)))
		return in_nomem(err);
	return stream_open_dec(s, out, err);
}

static int stdin_check(struct apc_err *err)
{
	if (isatty(STDIN_FILENO))
		return apc_err_set(err, APC_EIO, "<stdin>", APC_NO_OFFSET,
				   "refusing to read binary data from a terminal");
	return APC_OK;
}

static int open_file(const char *path, int *fd, struct stat *st, struct apc_err *err)
{
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0 || fstat(*fd, st) != 0) {
		int e = errno;
		if (*fd >= 0)
			close(*fd);
		return apc_err_sys(err, APC_EIO, path, "cannot open", e);
	}
	return APC_OK;
}

/*
 * apc_input_open() : see input.h.  Directories and archives become
 * trees; everything else is one stream, decoded if it is compressed.
 */
int apc_input_open(const char *path, struct apc_input **out, struct apc_err *err)
{
	return apc_input_open_told(path, out, err, NULL, 0);
}

int apc_input_open_told(const char *path, struct apc_input **out, struct apc_err *err, char *kind,
			size_t kindlen)
{
	struct apc_input *in = calloc(1, sizeof *in);
	struct apc_stream *s;
	int rc, fd;
	struct stat st;

	*out = NULL;
	if (kind && kindlen)
		kind[0] = '\0';
	if (err)
		apc_err_clear(err);
	if (!in)
		return in_nomem(err);
	in->arc_fd = -1;
	apc_err_clear(&in->damage);
	in->path = strdup(path);
	if (!in->path) {
		free(in);
		return in_nomem(err);
	}
	if (memfs_n) {
		rc = memfs_open_input(in, path, err);
		if (rc < 0)
			goto fail;
		goto done;
	}
	if (strcmp(path, "-") == 0) {
		rc = stdin_check(err);
		if (rc < 0)
			goto fail;
		s = stream_new_fd(STDIN_FILENO, "<stdin>", 0);
		if (!s) {
			rc = in_nomem(err);
			goto fail;
		}
		rc = input_from_stream(in, s, "stdin", err);
		if (rc < 0)
			goto fail;
		goto done;
	}
	rc = open_file(path, &fd, &st, err);
	if (rc < 0)
		goto fail;
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		in->is_dir = 1;
		in->kind = "directory";
		rc = dir_walk(in, path, "", 0, err);
		if (rc == APC_OK)
			rc = input_set_tree(in, path, err);
		if (rc < 0)
			goto fail;
		goto done;
	}
	s = stream_new_fd(fd, path, 1);
	if (!s) {
		close(fd);
		rc = in_nomem(err);
		goto fail;
	}
	rc = input_from_stream(in, s, "file", err);
	if (rc < 0)
		goto fail;
done:
	*out = in;
	if (kind && kindlen)
		snprintf(kind, kindlen, "%s", in->kind ? in->kind : "");
	return APC_OK;
fail:
	if (kind && kindlen)
		snprintf(kind, kindlen, "%s", in->kind ? in->kind : "");
	apc_input_close(in);
	return rc;
}

void apc_input_close(struct apc_input *in)
{
	if (!in)
		return;
	apc_stream_close(in->stream);
	input_drop_members(in);
	free(in->mem);
	free(in->names);
	if (in->arc_fd >= 0)
		close(in->arc_fd);
	free(in->label);
	free(in->path);
	free(in);
}

size_t apc_input_seek_points(const struct apc_input *in)
{
	return in->ngzp;
}

int apc_input_decoded_copy(const struct apc_input *in)
{
	return in->copied;
}

int apc_input_rereads(const struct apc_input *in)
{
	return in->reread;
}

const char *apc_input_reread_why(const struct apc_input *in)
{
	return in->reread_why;
}

const char *apc_input_path(const struct apc_input *in)
{
	return in->path;
}

int apc_input_is_tree(const struct apc_input *in)
{
	return in->tree;
}

const char *apc_input_kind(const struct apc_input *in)
{
	return in->kind;
}

size_t apc_input_skipped(const struct apc_input *in)
{
	return in->skipped;
}

const struct apc_err *apc_input_damage(const struct apc_input *in)
{
	return in->damage.status < 0 ? &in->damage : NULL;
}

struct apc_stream *apc_input_stream(struct apc_input *in)
{
	return in->tree ? NULL : in->stream;
}

int apc_input_members(struct apc_input *in, const char *const **names, size_t *n)
{
	if (!in->tree) {
		*names = NULL;
		*n = 0;
		return APC_EIO;
	}
	*names = in->names;
	*n = in->nmem;
	return APC_OK;
}

static const struct in_member *mem_find(const struct apc_input *in, const char *rel)
{
	size_t lo = 0, hi = in->nmem;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(rel, in->mem[mid].name);
		if (c == 0)
			return &in->mem[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

int apc_input_has(struct apc_input *in, const char *rel)
{
	return in->tree && mem_find(in, rel) != NULL;
}

/*
 * apc_input_open_member() : see input.h.  Directory members are opened
 * as files; archive members get a fresh libarchive handle that scans to
 * the member, so any number can be read at once.
 */
/*
 * s (new, named) reads `range` bytes of the archive file from `base`, on
 * a descriptor of its own; closed on failure.
 */
static int range_open(struct apc_input *in, struct apc_stream *s, int64_t base, uint64_t range,
		      struct apc_err *err)
{
	s->src = SRC_RANGE;
	s->base = base;
	s->range = range;
	s->raw_size = in->arc_size;
	s->own_fd = 1;
	s->fd = fcntl(in->arc_fd, F_DUPFD_CLOEXEC, 0);
	if (s->fd < 0) {
		int rc = apc_err_sys(err, APC_EIO, s->name, "cannot open", errno);
		apc_stream_close(s);
		return rc;
	}
	return APC_OK;
}

/*
 * s (new, named) becomes a .tar.gz member's data, decoded from its seek
 * point; closed on failure.
 */
static int gz_open_member(struct apc_input *in, const struct in_member *m, struct apc_stream *s,
			  struct apc_stream **out, struct apc_err *err)
{
	const struct gz_point *p = &in->gzp[m->zpt];
	int64_t base = p->in - (p->bits ? 1 : 0);
	uint8_t ch = 0;
	int rc;

	if ((rc = range_open(in, s, base, in->arc_size > base ? (uint64_t)(in->arc_size - base) : 0,
			     err)) < 0)
		return rc;
	if (p->bits) {
		/* the block's first bits are the top of the byte before */
		if (pread(s->fd, &ch, 1, (off_t)s->base) != 1) {
			rc = apc_err_sys(err, APC_EIO, s->name, "cannot read", errno);
			goto fail;
		}
		s->raw_pos = 1;
	}
	if ((rc = dec_start(s, DEC_GZIP, err)) < 0)
		goto fail;
	if (!p->hdr && (inflateReset2(&s->z, -15) != Z_OK ||
	    (p->bits && inflatePrime(&s->z, p->bits, ch >> (8 - p->bits)) != Z_OK) ||
	    (p->wlen && inflateSetDictionary(&s->z, p->win, p->wlen) != Z_OK))) {
		rc = apc_err_set(err, APC_ENOMEM, s->name, APC_NO_OFFSET, "cannot start gzip decoder");
		goto fail;
	}
	s->gz_raw = !p->hdr;
	if ((rc = apc_stream_skip(s, (uint64_t)m->zoff - p->out, err)) < 0)
		goto fail;
	/* offsets count from the member's first byte, as for other members */
	s->offset = 0;
	s->produced = 0;
	s->size = m->size;
	s->has_left = 1;
	s->left = (uint64_t)m->size;
	*out = s;
	return APC_OK;
fail:
	apc_stream_close(s);
	return rc;
}

/*
 * s (new, named) becomes a deflated zip member's data, inflated from
 * where it starts in the file (zip_cut_member); closed on failure.
 */
static int zip_open_member(struct apc_input *in, const struct in_member *m, struct apc_stream *s,
			   struct apc_stream **out, struct apc_err *err)
{
	int rc;

	if ((rc = range_open(in, s, m->data_off, (uint64_t)m->zlen, err)) < 0)
		return rc;
	if ((rc = dec_start(s, DEC_DEFLATE, err)) < 0) {
		apc_stream_close(s);
		return rc;
	}
	/* its size is known unless it follows the data (-1: up to the
	 * deflate data's end) */
	s->size = m->size;
	s->has_left = m->size >= 0;
	s->left = m->size >= 0 ? (uint64_t)m->size : 0;
	*out = s;
	return APC_OK;
}

int apc_input_open_member(struct apc_input *in, const char *rel, struct apc_stream **out,
			  struct apc_err *err)
{
	const struct in_member *m;
	struct apc_stream *s;
	char *name;
	size_t ll, lr;

	*out = NULL;
	if (!in->tree)
		return apc_err_set(err, APC_EIO, in->path, APC_NO_OFFSET, "not a folder or archive");
	m = mem_find(in, rel);
	if (!m)
		return apc_err_set(err, APC_EIO, in->path, APC_NO_OFFSET, "no member %s", rel);
	ll = strlen(in->label);
	lr = strlen(m->name);
	name = malloc(ll + lr + 2);
	if (!name)
		return in_nomem(err);
	if (in->is_dir)
		sprintf(name, "%s%s%s", in->label, ll && in->label[ll - 1] == '/' ? "" : "/", m->name);
	else
		sprintf(name, "%s:%s", in->label, m->name);

	if (in->is_mem) {
		const struct apc_mem_file *f = memfs_find(name);
		s = f ? memfs_stream(f, name) : NULL;
		free(name);
		if (!s)
			return f ? in_nomem(err)
				 : apc_err_set(err, APC_EIO, in->path, APC_NO_OFFSET,
					       "no member %s", rel);
		*out = s;
		return APC_OK;
	}
	if (in->is_dir) {
		int fd;
		struct stat st;
		int rc = open_file(name, &fd, &st, err);
		if (rc < 0) {
			free(name);
			return rc;
		}
		s = stream_new_fd(fd, name, 1);
		free(name);
		if (!s) {
			close(fd);
			return in_nomem(err);
		}
		*out = s;
		return APC_OK;
	}

	s = stream_new(name);
	free(name);
	if (!s)
		return in_nomem(err);
	if (m->data_off >= 0 && m->zlen >= 0)
		return zip_open_member(in, m, s, out, err);
	if (m->data_off >= 0) {
		/* plain tar (or a stored zip member cut short): straight
		 * from the file, no scan to the member */
		int rc = range_open(in, s, m->data_off, (uint64_t)m->size, err);
		if (rc < 0)
			return rc;
		s->size = m->size;
		*out = s;
		return APC_OK;
	}
	if (m->zpt >= 0)
		return gz_open_member(in, m, s, out, err);
	s->src = SRC_ARCHIVE;
	s->raw_size = in->arc_size;
	s->ar = arc_open(in->arc_fd, in->arc_size, NULL, &s->asrc, NULL, 0);
	if (!s->ar) {
		apc_err_set(err, APC_EIO, s->name, APC_NO_OFFSET, "cannot reopen archive");
		apc_stream_close(s);
		return APC_EIO;
	}
	for (uint64_t i = 0;; i++) {
		struct archive_entry *e;
		int r = archive_read_next_header(s->ar, &e);
		if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
			const char *why = r == ARCHIVE_EOF ? "member not found" : archive_error_string(s->ar);
			apc_err_set(err, APC_EDATA, s->name, APC_NO_OFFSET, "cannot find member: %s",
				    why ? why : "archive error");
			apc_stream_close(s);
			return APC_EDATA;
		}
		if (i < m->index)
			continue;
		if (!archive_entry_pathname(e) || strcmp(archive_entry_pathname(e), m->orig) != 0) {
			apc_err_set(err, APC_EDATA, s->name, APC_NO_OFFSET,
				    "archive changed since it was opened");
			apc_stream_close(s);
			return APC_EDATA;
		}
		if (archive_entry_size_is_set(e))
			s->size = archive_entry_size(e);
		break;
	}
	*out = s;
	return APC_OK;
}

/*
 * apc_stream_open_path() : see input.h.  One stream, decoded when the
 * data starts with a compression's magic; archives are not looked into.
 */
int apc_stream_open_path(const char *path, struct apc_stream **out, struct apc_err *err)
{
	struct apc_stream *s;
	int rc, fd = STDIN_FILENO;
	struct stat st;
	int is_stdin = strcmp(path, "-") == 0;

	*out = NULL;
	if (memfs_n)
		return memfs_open_stream(path, out, err);
	if (is_stdin) {
		rc = stdin_check(err);
		if (rc < 0)
			return rc;
	} else {
		rc = open_file(path, &fd, &st, err);
		if (rc < 0)
			return rc;
		if (S_ISDIR(st.st_mode)) {
			close(fd);
			return apc_err_sys(err, APC_EIO, path, "cannot read", EISDIR);
		}
	}
	s = stream_new_fd(fd, is_stdin ? "<stdin>" : path, !is_stdin);
	if (!s) {
		if (!is_stdin)
			close(fd);
		return in_nomem(err);
	}
	return stream_open_dec(s, out, err);
}
