/*
 * input.h - the input layer: a path becomes a stream or a tree.
 *
 * A plain file, stdin ("-"), or a file compressed with gzip, bzip2, xz,
 * lzma, lzip, zstd, lz4 or compress (detected by its magic, not its name)
 * is a single stream, decoded as it is read.  A directory, or a .tar (in any
 * of those compressions), .zip, .cpio or .7z archive (libarchive;
 * detected by content), is a tree of members addressed by relative path
 * ("info/system.xml", "cpu/0").  When every member of an archive sits
 * under one top-level folder (a trace folder or an .apc folder that was
 * archived), that folder is stripped, so a tarball and the directory it
 * came from look the same.  An archive on stdin, and a damaged
 * compressed tar, are spooled to an unlinked temporary file first.
 *
 * An archive cut short or damaged (or whose compressed stream is) keeps
 * the members before the damage, and says where it is
 * (apc_input_damage()); data that starts like a tar or zip is never taken
 * for a plain file.  A compressed stream's damage is an error of the
 * stream, at the decompressed offset where its data stops.
 *
 * Streams are read with read() into the caller's buffer; a small
 * look-ahead (peek) lets format bids see the first bytes.
 */
#ifndef APC_INPUT_H
#define APC_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "err.h"

#define APC_PEEK_MAX 65536

struct apc_input;
struct apc_stream;

/*
 * apc_input_open() : open path ("-" = stdin).  On failure returns a
 * negative status with err set (file "FILE", message "cannot open: no
 * such file or directory"); APC_EDATA when the input is damaged before
 * anything could be read (a compressed stream or archive header cut short).
 */
int apc_input_open(const char *path, struct apc_input **out, struct apc_err *err);
/*
 * apc_input_open_told() : apc_input_open(), and what the input was told
 * to be into kind (apc_input_kind()'s words), also when it fails: an
 * archive damaged before its first member is still "tar" or "tar.xz",
 * so a run stopped there can say so.  "" when nothing was told.
 */
int apc_input_open_told(const char *path, struct apc_input **out, struct apc_err *err, char *kind,
			size_t kindlen);
void apc_input_close(struct apc_input *in);

/* The path as given (for messages). */
const char *apc_input_path(const struct apc_input *in);
/* 1 for directories and archives, 0 for single streams. */
int apc_input_is_tree(const struct apc_input *in);
/* "file", "stdin", "gzip", "bzip2", "directory", "tar", "tar.xz", "zip", ... */
const char *apc_input_kind(const struct apc_input *in);
/*
 * Archive members left out because their path is absolute or climbs out
 * with "..", or is not readable (for a warning); 0 for other inputs.
 */
size_t apc_input_skipped(const struct apc_input *in);
/*
 * apc_input_damage() : for an archive that is damaged or cut short
 * (or whose compressed stream is), why and where, with status APC_EDATA; NULL
 * when it is whole, and for other inputs.  The members before the damage
 * are listed and readable (one cut by it gives its bytes and then an
 * error); those after it are missing.  An archive with no member before
 * the damage is not opened at all: apc_input_open() fails with this
 * error.
 */
const struct apc_err *apc_input_damage(const struct apc_input *in);

/* Single-stream inputs: the stream (owned by the input). NULL for trees. */
struct apc_stream *apc_input_stream(struct apc_input *in);

/*
 * Trees.  apc_input_members() lists member paths (regular files only),
 * sorted, relative to the tree root; the array is owned by the input.
 * apc_input_has() tells if a member exists.  apc_input_open_member()
 * opens one as a stream the caller closes; several may be open at once
 * (each gets its own descriptor on the file or on the archive's decoded
 * copy, or in a .tar.gz read from a file its own decoder, started at a
 * seek point the listing noted near the member's data, or where a copy
 * found no room its own libarchive handle; a zip member cut short is
 * read, and inflated, from its data in the file, to the last byte the
 * cut leaves).
 */
int apc_input_members(struct apc_input *in, const char *const **names, size_t *n);
int apc_input_has(struct apc_input *in, const char *rel);
int apc_input_open_member(struct apc_input *in, const char *rel, struct apc_stream **out,
			  struct apc_err *err);

/* The seek points a .tar.gz's members are decoded from (0 for other
 * inputs): for tests and diagnostics. */
size_t apc_input_seek_points(const struct apc_input *in);

/* 1 if a compressed archive's members are read from a decoded copy in
 * TMPDIR (a damaged archive, one from a pipe, or one compressed other
 * than with gzip where there was room), else 0: for tests and
 * diagnostics. */
int apc_input_decoded_copy(const struct apc_input *in);

/* 1 if a compressed tar (not gzip) is read with each member decoded
 * from the archive's start, TMPDIR having had no room for a decoded
 * copy: slower by about a decode of the archive per member read. */
int apc_input_rereads(const struct apc_input *in);
/* Why (the copy's error: "cannot copy it into /tmp: ..."), or "". */
const char *apc_input_reread_why(const struct apc_input *in);

/*
 * Open a single file as a stream directly (its compression detected), e.g. for
 * --events=FILE.  "-" is stdin.
 */
int apc_stream_open_path(const char *path, struct apc_stream **out, struct apc_err *err);
void apc_stream_close(struct apc_stream *s);

/*
 * apc_stream_peek() : make up to `want` (<= APC_PEEK_MAX) bytes visible
 * at *p without consuming them.  Returns how many are available (fewer at
 * end of input), or -1 on read error (err set).
 */
ssize_t apc_stream_peek(struct apc_stream *s, const uint8_t **p, size_t want,
			struct apc_err *err);

/*
 * apc_stream_read() : read up to n bytes, looping over short reads.
 * Returns bytes read (0 at end), or -1 with err set.
 */
ssize_t apc_stream_read(struct apc_stream *s, void *buf, size_t n, struct apc_err *err);

/* Skip n bytes forward (reads and discards, or lseek for plain files). */
int apc_stream_skip(struct apc_stream *s, uint64_t n, struct apc_err *err);

/*
 * apc_stream_held_error() : 1 with err set when a read has already met
 * an error that is held back until the bytes before it are consumed (a
 * compressed stream cut inside what a peek looked at), else 0.
 */
int apc_stream_held_error(const struct apc_stream *s, struct apc_err *err);

/*
 * apc_stream_check_end() : for a compressed stream whose reader is done
 * with it, decode what it left unread to the end of the compressed data,
 * so a cut or a checksum there is found; APC_OK, or the stream's error
 * (also one already held).  Plain streams: only a held error.
 */
int apc_stream_check_end(struct apc_stream *s, struct apc_err *err);

/* Name for messages: "trace.tar.gz:cpu/0" for members, else the path. */
const char *apc_stream_name(const struct apc_stream *s);
/* Uncompressed bytes consumed so far (the offset errors refer to). */
uint64_t apc_stream_offset(const struct apc_stream *s);
/* Uncompressed size if known (plain files, archive members), else -1. */
int64_t apc_stream_size(const struct apc_stream *s);
/* Bytes of the underlying file consumed (for progress); -1 if unknown. */
int64_t apc_stream_raw_offset(const struct apc_stream *s);
/* Size of the underlying file (for progress); -1 if unknown. */
int64_t apc_stream_raw_size(const struct apc_stream *s);

/*
 * apc_stream_slurp() : read a whole (small) stream into a malloc'd,
 * NUL-terminated buffer, refusing more than `limit` bytes.
 * apc_stream_slurp_upto() : the same, but when the stream is damaged
 * (APC_EDATA: an archive member cut short) the bytes before the damage
 * are in *buf (the caller frees it) as well as the error.
 */
int apc_stream_slurp(struct apc_stream *s, size_t limit, uint8_t **buf, size_t *len,
		     struct apc_err *err);
int apc_stream_slurp_upto(struct apc_stream *s, size_t limit, uint8_t **buf, size_t *len,
			  struct apc_err *err);

/*
 * In-memory files, so fuzzers and tests need no file system.  While a
 * set is installed (n > 0), apc_input_open(), apc_input_open_member()
 * and apc_stream_open_path() look every path up in it and nowhere else:
 * a file's path gives a stream over its bytes (compressions and archives
 * detected as for a pipe), a path that prefixes others at a '/'
 * ("cap.apc" for "cap.apc/captured.xml") a folder tree, anything else
 * "No such file or directory".  An entry with data NULL is a folder
 * (so an empty one can exist).  The array and the bytes are borrowed
 * until the set is replaced; apc_input_mem_set(NULL, 0) removes it.
 * Process-wide and not thread-safe.
 */
struct apc_mem_file {
	const char *path;
	const uint8_t *data;
	size_t len;
};
void apc_input_mem_set(const struct apc_mem_file *files, size_t n);

#endif
