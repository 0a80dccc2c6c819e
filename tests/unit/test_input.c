/*
 * test_input.c - the input layer: plain files, gzip (single, concatenated,
 * corrupt, truncated), directories, tar/tar.gz/zip trees built here with
 * libarchive's writer, unsafe member paths, interleaved members, stdin
 * through a pipe, and the shared LTT example folder.
 */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "input.h"
#include "t.h"

static char tmpdir[256];

/* ------------------------------------------------------------------ */
/* fixtures, all generated from a seed */

struct file {
	const char *name;
	uint8_t *data;
	size_t len;
};

enum { NFILES = 5 };
static struct file tree[NFILES];

static uint64_t rng_state;

static uint64_t rng(void)
{
	return t_rand(&rng_state);
}

/* Half random, half repetitive, so gzip has something to compress. */
static uint8_t *gen(size_t n, uint64_t seed)
{
	uint8_t *p = malloc(n ? n : 1);

	rng_state = seed | 1;
	for (size_t i = 0; i < n; i++)
		p[i] = (i / 4096) % 2 ? (uint8_t)rng() : (uint8_t)(i * 7 + seed);
	return p;
}

static void make_tree(void)
{
	static const char *const names[NFILES] = {
		"info/system.xml", "cpu/0", "cpu/1", "control/facilities", "eventdefs/core.xml",
	};
	static const size_t lens[NFILES] = {300, 3u << 20, 70001, 0, 5000};

	for (int i = 0; i < NFILES; i++) {
		tree[i].name = names[i];
		tree[i].len = lens[i];
		tree[i].data = gen(lens[i], 100 + (uint64_t)i);
	}
	memcpy(tree[0].data, "<?xml version=\"1.0\"?>", 21);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void sorted_names(const char **out)
{
	for (int i = 0; i < NFILES; i++)
		out[i] = tree[i].name;
	qsort(out, NFILES, sizeof *out, cmp_str);
}

static char *tpath(const char *name)
{
	static char buf[8][512];
	static int k;
	char *p = buf[k++ % 8];
	snprintf(p, 512, "%s/%s", tmpdir, name);
	return p;
}

static void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (!f) {
		T_FAIL("cannot create %s", path);
		return;
	}
	if (len && fwrite(data, 1, len, f) != len)
		T_FAIL("short write %s", path);
	fclose(f);
}

static void mkdirs_for(const char *path)
{
	char buf[512];
	snprintf(buf, sizeof buf, "%s", path);
	for (char *p = buf + strlen(tmpdir) + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			mkdir(buf, 0755);
			*p = '/';
		}
}

/* The tree as a folder: DIR/trace/... */
static void make_dir_tree(const char *dir)
{
	char path[512];
	for (int i = 0; i < NFILES; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, tree[i].name);
		mkdirs_for(path);
		write_file(path, tree[i].data, tree[i].len);
	}
}

static void ar_add(struct archive *a, const char *name, const void *data, size_t len, int dir)
{
	struct archive_entry *e = archive_entry_new();
	archive_entry_set_pathname(e, name);
	archive_entry_set_filetype(e, dir ? AE_IFDIR : AE_IFREG);
	archive_entry_set_perm(e, dir ? 0755 : 0644);
	archive_entry_set_size(e, dir ? 0 : (la_int64_t)len);
	archive_entry_set_mtime(e, 1000000000, 0);
	if (archive_write_header(a, e) != ARCHIVE_OK)
		T_FAIL("write header %s: %s", name, archive_error_string(a));
	if (!dir && len && archive_write_data(a, data, len) != (la_ssize_t)len)
		T_FAIL("write data %s: %s", name, archive_error_string(a));
	archive_entry_free(e);
}

/*
 * The compressions read besides gzip, as libarchive writes them here,
 * with a small block size where there is one, so that a cut keeps whole
 * blocks before it.  checked: damage to the data is always found (by a
 * checksum); compress and lzma have none (lzma's decoder finds most
 * damage all the same), and libarchive writes zstd without its optional
 * one (zstd(1) writes it), so bytes flipped in a stored block may go
 * unseen there.
 */
static const struct comp {
	const char *name, *ext;
	int filter;
	const char *opt, *val;
	int checked;
} comps[] = {
	{"bzip2", "bz2", ARCHIVE_FILTER_BZIP2, "compression-level", "1", 1},
	{"xz", "xz", ARCHIVE_FILTER_XZ, NULL, NULL, 1},
	{"lzma", "lzma", ARCHIVE_FILTER_LZMA, NULL, NULL, 0},
	{"lzip", "lz", ARCHIVE_FILTER_LZIP, NULL, NULL, 1},
	{"zstd", "zst", ARCHIVE_FILTER_ZSTD, NULL, NULL, 0},
	{"lz4", "lz4", ARCHIVE_FILTER_LZ4, "block-size", "4", 1},
	{"compress", "Z", ARCHIVE_FILTER_COMPRESS, NULL, NULL, 0},
};
enum { NCOMPS = sizeof comps / sizeof comps[0] };

/* Add c's filter to a writer; 0, with a note, when libarchive cannot here. */
static int comp_filter(struct archive *a, const struct comp *c)
{
	if (archive_write_add_filter(a, c->filter) != ARCHIVE_OK) {
		fprintf(stderr, "  note: libarchive cannot write %s here, not tested: %s\n", c->name,
			archive_error_string(a));
		return 0;
	}
	if (c->opt && archive_write_set_filter_option(a, NULL, c->opt, c->val) != ARCHIVE_OK)
		T_FAIL("%s: option %s: %s", c->name, c->opt, archive_error_string(a));
	/* nothing after the compressed stream */
	archive_write_set_bytes_in_last_block(a, 1);
	return 1;
}

static struct archive *ar_begin(const char *path, const char *kind)
{
	struct archive *a = archive_write_new();
	if (strncmp(kind, "zip", 3) == 0) {
		archive_write_set_format_zip(a);
		/* "zip-store": members stored, not deflated */
		if (kind[3] && archive_write_set_format_option(a, "zip", "compression", "store") !=
				       ARCHIVE_OK)
			T_FAIL("zip store: %s", archive_error_string(a));
	} else if (strcmp(kind, "7z") == 0) {
		archive_write_set_format_7zip(a);
	} else if (strncmp(kind, "cpio", 4) == 0) {
		archive_write_set_format_cpio_newc(a);
		for (int i = 0; i < NCOMPS; i++)
			if (kind[4] == '.' && strcmp(kind + 5, comps[i].ext) == 0 &&
			    !comp_filter(a, &comps[i])) {
				archive_write_free(a);
				return NULL;
			}
	} else {
		archive_write_set_format_pax_restricted(a);
		if (strcmp(kind, "tar.gz") == 0)
			archive_write_add_filter_gzip(a);
		for (int i = 0; i < NCOMPS; i++)
			if (strncmp(kind, "tar.", 4) == 0 && strcmp(kind + 4, comps[i].ext) == 0 &&
			    !comp_filter(a, &comps[i])) {
				archive_write_free(a);
				return NULL;
			}
	}
	if (archive_write_open_filename(a, path) != ARCHIVE_OK)
		T_FAIL("open %s: %s", path, archive_error_string(a));
	return a;
}

static void ar_end(struct archive *a)
{
	archive_write_close(a);
	archive_write_free(a);
}

/* The tree as an archive, every member under `top` (may be ""); 0 if
 * libarchive cannot write that kind here. */
static int make_archive(const char *path, const char *kind, const char *top)
{
	struct archive *a = ar_begin(path, kind);
	char name[512];

	if (!a)
		return 0;
	if (*top)
		ar_add(a, top, NULL, 0, 1);
	for (int i = 0; i < NFILES; i++) {
		snprintf(name, sizeof name, "%s%s", top, tree[i].name);
		ar_add(a, name, tree[i].data, tree[i].len, 0);
	}
	ar_end(a);
	return 1;
}

/* data as one stream compressed with c; 0 if libarchive cannot write it. */
static int write_comp(const char *path, const struct comp *c, const void *data, size_t len)
{
	struct archive *a = archive_write_new();
	struct archive_entry *e = archive_entry_new();
	int ok = comp_filter(a, c);

	if (ok) {
		archive_write_set_format_raw(a);
		if (archive_write_open_filename(a, path) != ARCHIVE_OK)
			T_FAIL("open %s: %s", path, archive_error_string(a));
		archive_entry_set_pathname(e, "data");
		archive_entry_set_filetype(e, AE_IFREG);
		archive_entry_set_size(e, (la_int64_t)len);
		if (archive_write_header(a, e) != ARCHIVE_OK ||
		    archive_write_data(a, data, len) != (la_ssize_t)len)
			T_FAIL("write %s: %s", path, archive_error_string(a));
		archive_write_close(a);
	}
	archive_entry_free(e);
	archive_write_free(a);
	return ok;
}

static void write_gzip(const char *path, const char *mode, const void *data, size_t len)
{
	gzFile g = gzopen(path, mode);
	if (!g) {
		T_FAIL("gzopen %s", path);
		return;
	}
	if (len && gzwrite(g, data, (unsigned)len) != (int)len)
		T_FAIL("gzwrite %s", path);
	gzclose(g);
}

/* Read a stream to its end in chunks of `chunk` bytes. */
static uint8_t *drain(struct apc_stream *s, size_t chunk, size_t *len, struct apc_err *err)
{
	size_t cap = 1 << 16, n = 0;
	uint8_t *p = malloc(cap);
	for (;;) {
		ssize_t r;
		if (n + chunk > cap) {
			cap = (n + chunk) * 2;
			p = realloc(p, cap);
		}
		r = apc_stream_read(s, p + n, chunk, err);
		if (r < 0) {
			*len = n;
			free(p);
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	*len = n;
	return p;
}

/*
 * Read s to its end in reads of `chunk` bytes, at most cap in all: the
 * bytes, how many, and the error that ends it (r is -1 then).
 */
static uint8_t *drain_err(struct apc_stream *s, size_t chunk, size_t cap, size_t *len, ssize_t *r,
			  struct apc_err *err)
{
	uint8_t *buf = malloc(cap);

	*len = 0;
	*r = 0;
	apc_err_clear(err);
	while (*len + chunk <= cap && (*r = apc_stream_read(s, buf + *len, chunk, err)) > 0)
		*len += (size_t)*r;
	return buf;
}

/* got (freed here) is exactly the n bytes at want. */
static void same_bytes(uint8_t *got, size_t len, const uint8_t *want, size_t n)
{
	T_ASSERT(got != NULL);
	T_EQ_INT(len, n);
	if (got && len == n)
		T_EQ_MEM(got, want, n);
	free(got);
}

/* The first n bytes of d written as `name` and opened; NULL, the test
 * failed, if it would not open. */
static struct apc_input *open_copy(const char *name, const void *d, size_t n)
{
	struct apc_input *in = NULL;
	struct apc_err err;

	write_file(tpath(name), d, n);
	if (apc_input_open(tpath(name), &in, &err) != APC_OK)
		T_FAIL("cannot open %s: %s", name, err.msg);
	return in;
}

/* The same, for a copy that must not open: APC_EDATA, err says why. */
static void copy_refused(const char *name, const void *d, size_t n, struct apc_err *err)
{
	struct apc_input *in = (struct apc_input *)1;

	write_file(tpath(name), d, n);
	T_EQ_INT(apc_input_open(tpath(name), &in, err), APC_EDATA);
	T_ASSERT(in == NULL);
}

/* got starts with the k bytes at want (what came before damage is sound). */
static void starts_with(const uint8_t *got, size_t len, const uint8_t *want, size_t k)
{
	T_ASSERT(len >= k);
	if (len >= k)
		T_EQ_MEM(got, want, k);
}

/* data gzipped as `name` (in tmpdir); the compressed bytes, malloc'd. */
static uint8_t *gzip_bytes(const char *name, const void *data, size_t n, size_t *zlen)
{
	write_gzip(tpath(name), "wb", data, n);
	return t_read_file(tpath(name), zlen);
}

/* Damage compressed data in its middle: n bytes from `at` flipped. */
static void flip(uint8_t *z, size_t at, size_t n)
{
	for (size_t k = at; k < at + n; k++)
		z[k] ^= 0x5a;
}

/* ------------------------------------------------------------------ */
/* single streams */

static void plain_file_read_peek_skip(void)
{
	const char *path = tpath("plain.bin");
	size_t n = 300000;
	uint8_t *data = gen(n, 1), buf[64];
	struct apc_input *in;
	struct apc_stream *s;
	struct apc_err err;
	const uint8_t *p;

	write_file(path, data, n);
	T_EQ_INT(apc_input_open(path, &in, &err), APC_OK);
	if (!in) {
		free(data);
		return;
	}
	T_EQ_STR(apc_input_kind(in), "file");
	T_EQ_INT(apc_input_is_tree(in), 0);
	T_EQ_STR(apc_input_path(in), path);
	s = apc_input_stream(in);
	T_ASSERT(s != NULL);
	T_EQ_STR(apc_stream_name(s), path);
	T_EQ_INT(apc_stream_size(s), n);
	T_EQ_INT(apc_stream_raw_size(s), n);
	/* peeking consumes nothing */
	T_EQ_INT(apc_stream_peek(s, &p, 16, &err), 16);
	T_EQ_MEM(p, data, 16);
	T_EQ_INT(apc_stream_offset(s), 0);
	T_EQ_INT(apc_stream_peek(s, &p, 8, &err), 8);
	T_EQ_MEM(p, data, 8);
	T_EQ_INT(apc_stream_read(s, buf, 10, &err), 10);
	T_EQ_MEM(buf, data, 10);
	T_EQ_INT(apc_stream_offset(s), 10);
	/* a peek after a partial read sees the following bytes */
	T_EQ_INT(apc_stream_peek(s, &p, 20, &err), 20);
	T_EQ_MEM(p, data + 10, 20);
	/* skip across the look-ahead and into the file (lseek) */
	T_EQ_INT(apc_stream_skip(s, 150000, &err), APC_OK);
	T_EQ_INT(apc_stream_offset(s), 150010);
	T_EQ_INT(apc_stream_raw_offset(s), 150010);
	T_EQ_INT(apc_stream_read(s, buf, 64, &err), 64);
	T_EQ_MEM(buf, data + 150010, 64);
	/* a peek larger than the maximum is clamped */
	T_EQ_INT(apc_stream_peek(s, &p, APC_PEEK_MAX + 100, &err), APC_PEEK_MAX);
	T_EQ_MEM(p, data + 150074, APC_PEEK_MAX);
	/* skipping past the end fails and says so */
	T_EQ_INT(apc_stream_skip(s, n, &err), APC_EDATA);
	T_ASSERT(strstr(err.msg, "cannot skip") != NULL);
	T_EQ_INT(apc_stream_offset(s), n);
	T_EQ_INT(apc_stream_read(s, buf, 64, &err), 0);
	apc_input_close(in);
	free(data);
}

/* Empty and random binary files are plain streams, never archives. */
static void empty_and_binary_are_plain(void)
{
	const char *pe = tpath("empty.bin"), *pb = tpath("random.bin");
	uint8_t *data = gen(10000, 77);
	struct apc_input *in;
	struct apc_err err;
	uint8_t buf[16];
	const uint8_t *p;

	write_file(pe, "", 0);
	T_EQ_INT(apc_input_open(pe, &in, &err), APC_OK);
	if (in) {
		T_EQ_STR(apc_input_kind(in), "file");
		T_EQ_INT(apc_stream_peek(apc_input_stream(in), &p, 4, &err), 0);
		T_EQ_INT(apc_stream_read(apc_input_stream(in), buf, 16, &err), 0);
		apc_input_close(in);
	}
	/* 1024 zero bytes: what an empty tar is, but nothing libarchive should list */
	memset(data, 0, 1024);
	write_file(pb, data, 10000);
	T_EQ_INT(apc_input_open(pb, &in, &err), APC_OK);
	if (in) {
		T_EQ_STR(apc_input_kind(in), "file");
		T_EQ_INT(apc_input_is_tree(in), 0);
		apc_input_close(in);
	}
	free(data);
}

static void gzip_file_reads_back(void)
{
	const char *path = tpath("one.gz");
	size_t n = 500000, len, zlen;
	uint8_t *data = gen(n, 2), *got, *z;
	struct apc_input *in;
	struct apc_stream *s;
	struct apc_err err;
	const uint8_t *p;

	write_gzip(path, "wb6", data, n);
	T_EQ_INT(apc_input_open(path, &in, &err), APC_OK);
	if (!in) {
		free(data);
		return;
	}
	T_EQ_STR(apc_input_kind(in), "gzip");
	s = apc_input_stream(in);
	T_EQ_INT(apc_stream_size(s), -1);
	T_EQ_INT(apc_stream_peek(s, &p, 100, &err), 100);
	T_EQ_MEM(p, data, 100);
	got = drain(s, 10007, &len, &err);
	same_bytes(got, len, data, n);
	T_EQ_INT(apc_stream_offset(s), n);
	z = t_read_file(path, &zlen);
	/* progress reaches the compressed file's size */
	T_EQ_INT(apc_stream_raw_offset(s), zlen);
	T_EQ_INT(apc_stream_raw_size(s), zlen);
	free(z);
	apc_input_close(in);

	/* apc_stream_open_path() gunzips too */
	T_EQ_INT(apc_stream_open_path(path, &s, &err), APC_OK);
	if (s) {
		T_EQ_INT(apc_stream_skip(s, 1000, &err), APC_OK);
		got = drain(s, 4096, &len, &err);
		same_bytes(got, len, data + 1000, n - 1000);
		apc_stream_close(s);
	}
	free(data);
}

static void gzip_concatenated_members(void)
{
	const char *path = tpath("cat.gz");
	size_t n1 = 100000, n2 = 33333, len;
	uint8_t *a = gen(n1, 3), *b = gen(n2, 4), *got;
	struct apc_input *in;
	struct apc_err err;

	write_gzip(path, "wb", a, n1);
	write_gzip(path, "ab", b, n2); /* a second gzip member after the first */
	T_EQ_INT(apc_input_open(path, &in, &err), APC_OK);
	if (in) {
		got = drain(apc_input_stream(in), 3000, &len, &err);
		T_EQ_INT(len, n1 + n2);
		if (got && len == n1 + n2) {
			T_EQ_MEM(got, a, n1);
			T_EQ_MEM(got + n1, b, n2);
		}
		free(got);
		apc_input_close(in);
	}
	free(a);
	free(b);
}

static void gzip_corrupt_is_edata(void)
{
	size_t n = 300000, zlen, len;
	uint8_t *data = gen(n, 5), *z = gzip_bytes("good.gz", data, n, &zlen), *got;
	struct apc_input *in;
	struct apc_err err;
	ssize_t r;

	flip(z, zlen / 2, 64); /* the middle of the deflate data */
	in = open_copy("bad.gz", z, zlen);
	if (in) {
		/* damaged deflate data may decode to more than n bytes of garbage */
		got = drain_err(apc_input_stream(in), 4096, 4 * n, &len, &r, &err);
		T_EQ_INT(r, -1);
		T_EQ_INT(err.status, APC_EDATA);
		T_EQ_STR(err.file, tpath("bad.gz"));
		T_ASSERT(strstr(err.msg, "gzip data corrupt at compressed byte ") != NULL);
		/* the offset counts the decompressed bytes, as later errors' do */
		T_EQ_INT(err.offset, (int64_t)len);
		/* what came before the damage (half way) was delivered and is right */
		starts_with(got, len, data, n / 4);
		free(got);
		apc_input_close(in);
	}
	free(z);
	free(data);
}

static void gzip_truncated_is_edata(void)
{
	size_t n = 300000, zlen, have;
	uint8_t *data = gen(n, 6), *z = gzip_bytes("good2.gz", data, n, &zlen), *got;
	struct apc_input *in = open_copy("trunc.gz", z, zlen / 2);
	struct apc_err err;
	ssize_t r;

	if (in) {
		struct apc_stream *s = apc_input_stream(in);
		char want[64];

		got = drain_err(s, 1000, n + 1000, &have, &r, &err);
		T_EQ_INT(r, -1);
		T_EQ_INT(err.status, APC_EDATA);
		T_ASSERT(strstr(err.msg, "truncated gzip stream") != NULL);
		T_ASSERT(have > 0 && have < n);
		T_EQ_INT(err.offset, (int64_t)have);
		snprintf(want, sizeof want, "ends at byte %zu)", zlen / 2);
		T_ASSERT(strstr(err.msg, want) != NULL);
		T_EQ_MEM(got, data, have);
		/* the failure is sticky */
		T_EQ_INT(apc_stream_read(s, got, 10, &err), -1);
		free(got);
		apc_input_close(in);
	}
	free(z);
	free(data);
}

/* A cut the look-ahead already met is told before its bytes are read. */
static void gzip_cut_error_held(void)
{
	size_t n = 3000, zlen;
	uint8_t *data = gen(n, 7), *z = gzip_bytes("small.gz", data, n, &zlen);
	struct apc_input *in;
	struct apc_err err;
	const uint8_t *p;

	T_EQ_INT(apc_input_open(tpath("small.gz"), &in, &err), APC_OK);
	if (in) {
		T_EQ_INT(apc_stream_peek(apc_input_stream(in), &p, APC_PEEK_MAX, &err), (ssize_t)n);
		T_EQ_INT(apc_stream_held_error(apc_input_stream(in), &err), 0);
		apc_input_close(in);
	}
	in = open_copy("smallcut.gz", z, zlen - 3); /* the trailer cut: every byte there */
	if (in) {
		struct apc_stream *s = apc_input_stream(in);
		T_EQ_INT(apc_stream_peek(s, &p, APC_PEEK_MAX, &err), (ssize_t)n);
		apc_err_clear(&err);
		T_EQ_INT(apc_stream_held_error(s, &err), 1);
		T_EQ_INT(err.status, APC_EDATA);
		T_ASSERT(strstr(err.msg, "truncated gzip stream") != NULL);
		apc_input_close(in);
	}
	free(z);
	free(data);
}

/*
 * Every other compression, whole: read back byte for byte, as one stream
 * named by its compression, and through apc_stream_open_path() (which
 * --events=FILE uses) too.
 */
/* Run one() for every compression in comps, on the same 3 MiB from seed. */
static void each_comp(uint64_t seed, void (*one)(const struct comp *c, const uint8_t *data, size_t n))
{
	size_t n = 3u << 20;
	uint8_t *data = gen(n, seed);

	for (int i = 0; i < NCOMPS; i++)
		one(&comps[i], data, n);
	free(data);
}

static void read_back_whole(const struct comp *c, const uint8_t *data, size_t n)
{
	char name[32];
	struct apc_input *in;
	struct apc_stream *s;
	struct apc_err err;
	size_t len;
	uint8_t *got;

	snprintf(name, sizeof name, "whole.%s", c->ext);
	if (!write_comp(tpath(name), c, data, n))
		return;
	T_EQ_INT(apc_input_open(tpath(name), &in, &err), APC_OK);
	if (!in) {
		T_FAIL("%s: %s", c->name, err.msg);
		return;
	}
	T_EQ_STR(apc_input_kind(in), c->name);
	T_EQ_INT(apc_input_is_tree(in), 0);
	T_ASSERT(apc_input_damage(in) == NULL);
	got = drain(apc_input_stream(in), 7777, &len, &err);
	same_bytes(got, len, data, n);
	apc_input_close(in);
	T_EQ_INT(apc_stream_open_path(tpath(name), &s, &err), APC_OK);
	if (s) {
		got = drain(s, 65536, &len, &err);
		same_bytes(got, len, data, n);
		apc_stream_close(s);
	}
}
static void compressed_files_read_back(void) { each_comp(21, read_back_whole); }

/*
 * data compressed with c, then cut to two thirds (cut) or with 16 bytes
 * flipped half way, written as cut.EXT or bad.EXT and opened.  NULL when
 * libarchive cannot write c here, or (the test failed) it would not open.
 * *zlen: the compressed length before the damage.
 */
static struct apc_input *open_comp_damaged(const struct comp *c, const uint8_t *data, size_t n,
					   int cut, size_t *zlen)
{
	char name[32];
	uint8_t *z;
	struct apc_input *in;

	snprintf(name, sizeof name, "z.%s", c->ext);
	if (!write_comp(tpath(name), c, data, n))
		return NULL;
	z = t_read_file(tpath(name), zlen);
	if (!z)
		return NULL;
	if (!cut)
		flip(z, *zlen / 2, 16);
	snprintf(name, sizeof name, "%s.%s", cut ? "cut" : "bad", c->ext);
	in = open_copy(name, z, cut ? *zlen * 2 / 3 : *zlen);
	free(z);
	return in;
}

/*
 * Cut at two thirds: every byte before the cut's block is delivered and
 * right, then "truncated X stream" with the decompressed offset where the
 * data stops and the compressed size.  compress (.Z) has no end marker:
 * a cut one reads as a shorter stream.
 */
static void read_cut(const struct comp *c, const uint8_t *data, size_t n)
{
	char cut[32], want[128];
	struct apc_err err;
	size_t zlen, len;
	ssize_t r;
	struct apc_input *in = open_comp_damaged(c, data, n, 1, &zlen);
	uint8_t *got;

	if (!in)
		return;
	T_EQ_STR(apc_input_kind(in), c->name);
	got = drain_err(apc_input_stream(in), 1000, n + 1000, &len, &r, &err);
	T_ASSERT(len > n / 3 && len < n);
	if (len < n)
		T_EQ_MEM(got, data, len);
	if (c->filter == ARCHIVE_FILTER_COMPRESS) {
		T_EQ_INT(r, 0);
	} else {
		T_EQ_INT(r, -1);
		T_EQ_INT(err.status, APC_EDATA);
		snprintf(cut, sizeof cut, "cut.%s", c->ext);
		T_EQ_STR(err.file, tpath(cut));
		T_EQ_INT(err.offset, (int64_t)len);
		snprintf(want, sizeof want, "truncated %s stream (the compressed data ends at byte %zu)",
			 c->name, zlen * 2 / 3);
		T_EQ_STR(err.msg, want);
	}
	free(got);
	apc_input_close(in);
}
static void compressed_files_cut_keep_what_came_before(void) { each_comp(22, read_cut); }

/*
 * Bytes flipped in the middle: the bytes decoded before the damage is
 * found, then "X data corrupt", no crash and no hang.  (A check at the
 * end of a block finds damage only there, so the last bytes delivered
 * may hold it; the first quarter is sound.)  Without a checksum, damage
 * may go unseen; the read still ends.
 */
static void read_corrupt(const struct comp *c, const uint8_t *data, size_t n)
{
	size_t zlen, len;
	struct apc_input *in = open_comp_damaged(c, data, n, 0, &zlen);
	struct apc_err err;
	char want[64];
	uint8_t *got;
	ssize_t r;

	if (!in)
		return;
	/* damaged data may decode to more than n bytes of garbage */
	got = drain_err(apc_input_stream(in), 1000, 2 * n, &len, &r, &err);
	if (r != -1 && c->checked)
		T_FAIL("%s: the damage was not found", c->name);
	T_ASSERT(r == -1 || r == 0);
	if (r == -1) {
		T_EQ_INT(err.status, APC_EDATA);
		T_EQ_INT(err.offset, (int64_t)len);
		snprintf(want, sizeof want, "%s data corrupt before compressed byte ", c->name);
		if (strncmp(err.msg, want, strlen(want)) != 0)
			T_FAIL("%s: %s", c->name, err.msg);
	}
	starts_with(got, len, data, n / 4);
	free(got);
	apc_input_close(in);
}
static void compressed_files_corrupt_is_edata(void) { each_comp(23, read_corrupt); }

static void missing_file_names_path(void)
{
	struct apc_input *in = (struct apc_input *)1;
	struct apc_stream *s = (struct apc_stream *)1;
	struct apc_err err;
	const char *path = tpath("no-such-trace.bin");

	T_EQ_INT(apc_input_open(path, &in, &err), APC_EIO);
	T_ASSERT(in == NULL);
	/* PROG: FILE: message, lowercase */
	T_EQ_STR(err.file, path);
	T_EQ_STR(err.msg, "cannot open: no such file or directory");
	T_EQ_INT(apc_stream_open_path(path, &s, &err), APC_EIO);
	T_ASSERT(s == NULL);
	T_EQ_STR(err.file, path);
}

static void slurp_limit(void)
{
	const char *path = tpath("slurp.txt");
	struct apc_stream *s;
	struct apc_err err;
	uint8_t *buf;
	size_t len;

	write_file(path, "hello, world", 12);
	T_EQ_INT(apc_stream_open_path(path, &s, &err), APC_OK);
	T_EQ_INT(apc_stream_slurp(s, 12, &buf, &len, &err), APC_OK);
	T_EQ_INT(len, 12);
	T_EQ_STR((char *)buf, "hello, world");
	free(buf);
	apc_stream_close(s);
	T_EQ_INT(apc_stream_open_path(path, &s, &err), APC_OK);
	T_EQ_INT(apc_stream_slurp(s, 11, &buf, &len, &err), APC_ENOMEM);
	T_ASSERT(buf == NULL);
	apc_stream_close(s);
	/* size unknown (gzip): the limit is found while reading */
	write_gzip(tpath("slurp.gz"), "wb", "hello, world", 12);
	T_EQ_INT(apc_stream_open_path(tpath("slurp.gz"), &s, &err), APC_OK);
	T_EQ_INT(apc_stream_slurp(s, 11, &buf, &len, &err), APC_ENOMEM);
	apc_stream_close(s);
	T_EQ_INT(apc_stream_open_path(tpath("slurp.gz"), &s, &err), APC_OK);
	T_EQ_INT(apc_stream_slurp(s, 12, &buf, &len, &err), APC_OK);
	T_EQ_INT(len, 12);
	if (buf)
		T_EQ_STR((char *)buf, "hello, world");
	free(buf);
	apc_stream_close(s);
}

/* ------------------------------------------------------------------ */
/* trees */

/* Members equal the generated tree, and every member reads back. */
static void check_tree(struct apc_input *in, size_t chunk)
{
	const char *const *names;
	const char *want[NFILES];
	size_t n, len;
	struct apc_err err;

	sorted_names(want);
	T_EQ_INT(apc_input_is_tree(in), 1);
	T_ASSERT(apc_input_stream(in) == NULL);
	T_EQ_INT(apc_input_members(in, &names, &n), APC_OK);
	T_EQ_INT(n, NFILES);
	for (size_t i = 0; i < n && i < NFILES; i++)
		T_EQ_STR(names[i], want[i]);
	T_EQ_INT(apc_input_has(in, "cpu/0"), 1);
	T_EQ_INT(apc_input_has(in, "cpu"), 0);
	T_EQ_INT(apc_input_has(in, "trace/cpu/0"), 0);
	for (int i = 0; i < NFILES; i++) {
		struct apc_stream *s;
		uint8_t *got;
		T_EQ_INT(apc_input_open_member(in, tree[i].name, &s, &err), APC_OK);
		if (!s)
			continue;
		T_EQ_INT(apc_stream_size(s), tree[i].len);
		T_ASSERT(strstr(apc_stream_name(s), tree[i].name) != NULL);
		got = drain(s, chunk, &len, &err);
		T_ASSERT(got != NULL);
		T_EQ_INT(len, tree[i].len);
		if (got && len == tree[i].len && len)
			T_EQ_MEM(got, tree[i].data, len);
		free(got);
		apc_stream_close(s);
	}
	{
		struct apc_stream *s = (struct apc_stream *)1;
		T_ASSERT(apc_input_open_member(in, "cpu/9", &s, &err) < 0);
		T_ASSERT(s == NULL);
	}
}

static void directory_tree(void)
{
	struct apc_input *in;
	struct apc_err err;
	struct apc_stream *s;
	const char *dir = tpath("dirtree");

	T_EQ_INT(apc_input_open(dir, &in, &err), APC_OK);
	if (!in)
		return;
	T_EQ_STR(apc_input_kind(in), "directory");
	check_tree(in, 65536);
	T_EQ_INT(apc_input_open_member(in, "info/system.xml", &s, &err), APC_OK);
	if (s) {
		char want[512];
		snprintf(want, sizeof want, "%s/info/system.xml", dir);
		T_EQ_STR(apc_stream_name(s), want);
		apc_stream_close(s);
	}
	apc_input_close(in);
}

static void archive_case(const char *file, const char *kind, const char *top)
{
	struct apc_input *in;
	struct apc_err err;
	struct apc_stream *s;
	const char *path = tpath(file);
	char want[600];

	make_archive(path, kind, top);
	T_EQ_INT(apc_input_open(path, &in, &err), APC_OK);
	if (!in) {
		T_FAIL("%s: %s", file, err.msg);
		return;
	}
	T_EQ_STR(apc_input_kind(in), kind);
	T_EQ_INT(apc_input_skipped(in), 0);
	check_tree(in, 1000);
	T_EQ_INT(apc_input_open_member(in, "cpu/1", &s, &err), APC_OK);
	if (s) {
		snprintf(want, sizeof want, "%s:cpu/1", path);
		T_EQ_STR(apc_stream_name(s), want);
		apc_stream_close(s);
	}
	apc_input_close(in);
}

static void tar_tree(void)
{
	archive_case("t.tar", "tar", "smp_example/");
	archive_case("flat.tar", "tar", "");
}

static void tar_gz_tree(void)
{
	archive_case("t.tar.gz", "tar.gz", "smp_example/");
	archive_case("dot.tgz", "tar.gz", "./trace/");
}

static void zip_tree(void)
{
	archive_case("t.zip", "zip", "smp_example/");
	archive_case("flat.zip", "zip", "");
}

/* Member paths that would land outside the tree are never exposed. */
static void tar_unsafe_members(void)
{
	const char *path = tpath("evil.tar");
	struct archive *a = ar_begin(path, "tar");
	struct apc_input *in;
	struct apc_err err;
	const char *const *names;
	size_t n;

	ar_add(a, "top/a", "A", 1, 0);
	ar_add(a, "../evil", "E", 1, 0);
	ar_add(a, "/abs", "X", 1, 0);
	ar_add(a, "top/../../evil2", "E", 1, 0);
	ar_add(a, "top/./b", "B", 1, 0);
	ar_end(a);
	T_EQ_INT(apc_input_open(path, &in, &err), APC_OK);
	if (!in)
		return;
	T_EQ_INT(apc_input_members(in, &names, &n), APC_OK);
	T_EQ_INT(apc_input_skipped(in), 3);
	T_EQ_INT(n, 2);
	if (n == 2) {
		/* only the safe ones, and then all under "top/", which is stripped */
		T_EQ_STR(names[0], "a");
		T_EQ_STR(names[1], "b");
	}
	for (size_t i = 0; i < n; i++)
		T_ASSERT(!strstr(names[i], "evil") && !strstr(names[i], "abs"));
	T_EQ_INT(apc_input_has(in, "../evil"), 0);
	T_EQ_INT(apc_input_has(in, "/abs"), 0);
	{
		struct apc_stream *s;
		uint8_t c = 0;
		T_EQ_INT(apc_input_open_member(in, "b", &s, &err), APC_OK);
		if (s) {
			T_EQ_INT(apc_stream_read(s, &c, 1, &err), 1);
			T_EQ_INT(c, 'B');
			apc_stream_close(s);
		}
	}
	apc_input_close(in);
}

/* Read a whole member; *status gets the status of the read that ended it. */
static uint8_t *drain_member(struct apc_input *in, const char *rel, size_t cap, size_t *len,
			     struct apc_err *err, int *status)
{
	struct apc_stream *s;
	uint8_t *buf = malloc(cap ? cap : 1);
	ssize_t r = 0;

	*len = 0;
	*status = APC_OK;
	if (apc_input_open_member(in, rel, &s, err) != APC_OK) {
		T_FAIL("cannot open member %s: %s", rel, err->msg);
		free(buf);
		return NULL;
	}
	apc_err_clear(err);
	while (*len < cap && (r = apc_stream_read(s, buf + *len, cap - *len < 7777 ? cap - *len : 7777,
						  err)) > 0)
		*len += (size_t)r;
	if (r < 0)
		*status = err->status;
	apc_stream_close(s);
	return buf;
}

/* Member rel reads back whole: tree[i]'s bytes. */
static void member_whole(struct apc_input *in, const char *rel, int i)
{
	struct apc_err err;
	size_t got;
	int st;
	uint8_t *b = drain_member(in, rel, tree[i].len + 1, &got, &err, &st);

	T_EQ_INT(st, APC_OK);
	same_bytes(b, got, tree[i].data, tree[i].len);
}

/* Member rel (tree[i]) is cut: the bytes it gives are right, then
 * APC_EDATA, told in err.  Returns how many it gave. */
static size_t member_cut(struct apc_input *in, const char *rel, int i, struct apc_err *err)
{
	size_t got;
	int st;
	uint8_t *b = drain_member(in, rel, tree[i].len, &got, err, &st);

	T_EQ_INT(st, APC_EDATA);
	T_ASSERT(got > 0 && got < tree[i].len);
	if (b && got)
		T_EQ_MEM(b, tree[i].data, got);
	free(b);
	return got;
}

/* The input lists n members, and not `gone`. */
static void members_are(struct apc_input *in, size_t n, const char *gone)
{
	const char *const *names;
	size_t got;

	T_EQ_INT(apc_input_members(in, &names, &got), APC_OK);
	T_EQ_INT(got, n);
	T_EQ_INT(apc_input_has(in, gone), 0);
}

/* The input's damage, which must be there, as APC_EDATA. */
static const struct apc_err *damaged(struct apc_input *in)
{
	const struct apc_err *dmg = apc_input_damage(in);

	T_ASSERT(dmg != NULL);
	if (dmg)
		T_EQ_INT(dmg->status, APC_EDATA);
	return dmg;
}

/*
 * A tar cut off inside a member: the members before the cut are whole,
 * the cut one gives every byte it has and then says it is cut short, and
 * the input says where the archive ends.
 */
static void truncated_tar_keeps_members(void)
{
	size_t len, got;
	uint8_t *d = t_read_file(tpath("t.tar"), &len);
	struct apc_input *in;
	struct apc_err err;
	const struct apc_err *dmg;

	T_ASSERT(d != NULL && len > 1000000);
	if (!d)
		return;
	in = open_copy("cut.tar", d, 1000000);
	free(d);
	if (!in)
		return;
	T_EQ_STR(apc_input_kind(in), "tar");
	dmg = damaged(in);
	if (dmg) {
		T_EQ_STR(dmg->file, tpath("cut.tar"));
		T_EQ_INT(dmg->offset, 1000000);
		T_ASSERT(strstr(dmg->msg, "truncated tar archive: it ends inside the data of "
					  "smp_example/cpu/0 (") != NULL);
	}
	/* info/system.xml came first, cpu/0 is cut, the rest is gone */
	members_are(in, 2, "cpu/1");
	member_whole(in, "info/system.xml", 0);
	got = member_cut(in, "cpu/0", 1, &err);
	T_ASSERT(got > 900000 && got < 1000000);
	T_EQ_INT(err.offset, (int64_t)got);
	T_ASSERT(strstr(err.msg, "truncated archive: the member ends after") != NULL);
	apc_input_close(in);

	/* the same through a pipe, spooled first */
	{
		int p[2], saved = dup(STDIN_FILENO);
		pid_t pid;
		T_ASSERT(pipe(p) == 0);
		pid = fork();
		if (pid == 0) {
			size_t l;
			uint8_t *x = t_read_file(tpath("cut.tar"), &l);
			close(p[0]);
			if (x && write(p[1], x, l) != (ssize_t)l)
				_exit(1);
			_exit(0);
		}
		close(p[1]);
		dup2(p[0], STDIN_FILENO);
		close(p[0]);
		T_EQ_INT(apc_input_open("-", &in, &err), APC_OK);
		if (in) {
			dmg = apc_input_damage(in);
			T_ASSERT(dmg != NULL && dmg->offset == 1000000);
			if (dmg)
				T_EQ_STR(dmg->file, "<stdin>");
			apc_input_close(in);
		}
		waitpid(pid, NULL, 0);
		dup2(saved, STDIN_FILENO);
		close(saved);
	}
}

/* Offset of the tar header naming `name` in d (walking the headers), or -1. */
static long tar_header_at(const uint8_t *d, size_t len, const char *name)
{
	size_t off = 0;

	while (off + 512 <= len && d[off]) {
		unsigned long long size = strtoull((const char *)d + off + 124, NULL, 8);
		if (strncmp((const char *)d + off, name, 100) == 0)
			return (long)off;
		off += 512 + ((size + 511) & ~511ULL);
	}
	return -1;
}

/*
 * A tar with one header damaged in the middle (its checksum fails):
 * libarchive says ARCHIVE_RETRY there, which is damage, not a member.
 * The members before it are kept and the damage is told where it is.
 */
static void tar_bad_header_is_damage(void)
{
	size_t len;
	uint8_t *d = t_read_file(tpath("t.tar"), &len);
	long at = d ? tar_header_at(d, len, "smp_example/cpu/1") : -1;
	struct apc_input *in;
	const struct apc_err *dmg;

	T_ASSERT(at > 0);
	if (at <= 0) {
		free(d);
		return;
	}
	d[at + 20] ^= 0x55; /* in its name: the checksum no longer holds */
	in = open_copy("badhdr.tar", d, len);
	free(d);
	if (!in)
		return;
	dmg = damaged(in);
	if (dmg) {
		T_EQ_INT(dmg->offset, at);
		T_ASSERT(strstr(dmg->msg, "damaged tar archive: the header after smp_example/cpu/0 "
					  "cannot be read") != NULL);
	}
	members_are(in, 2, "eventdefs/core.xml");
	member_whole(in, "cpu/0", 1);
	apc_input_close(in);
}

/*
 * A tar cut at a member boundary, without its end-of-archive blocks:
 * libarchive says nothing (ARCHIVE_EOF), but the lost members are
 * damage, at the cut.  With no regular member before it, not opened.
 * One zero block after the last member loses nothing: whole.
 */
static void tar_cut_at_member_boundary(void)
{
	size_t len;
	uint8_t *d = t_read_file(tpath("t.tar"), &len);
	long at = d ? tar_header_at(d, len, "smp_example/cpu/1") : -1;
	struct apc_input *in;
	struct apc_err err;
	const struct apc_err *dmg;

	T_ASSERT(at > 0 && at % 512 == 0);
	if (at <= 0) {
		free(d);
		return;
	}
	in = open_copy("bound.tar", d, (size_t)at);
	if (in) {
		dmg = damaged(in);
		if (dmg) {
			T_EQ_STR(dmg->file, tpath("bound.tar"));
			T_EQ_INT(dmg->offset, at);
			T_EQ_STR(dmg->msg, "truncated tar archive: it ends after member "
					   "smp_example/cpu/0 with no end-of-archive blocks");
		}
		members_are(in, 2, "cpu/1");
		member_whole(in, "cpu/0", 1);
		apc_input_close(in);
	}
	/* after the top folder's header alone */
	copy_refused("bound0.tar", d, 512, &err);
	T_EQ_INT(err.offset, 512);
	T_EQ_STR(err.msg, "truncated tar archive: it ends after member smp_example/ with no "
			  "end-of-archive blocks");
	/* the whole tar, and with one of its two zero blocks */
	{
		size_t end = len;
		while (end >= 512 && !d[end - 512] && !memcmp(d + end - 512, d + end - 511, 511))
			end -= 512;
		for (size_t k = 0; k < 2; k++) {
			in = open_copy("whole.tar", d, k ? end + 512 : len);
			if (in) {
				T_ASSERT(apc_input_damage(in) == NULL);
				apc_input_close(in);
			}
		}
		in = open_copy("bound1.tar", d, end);
		if (in) {
			T_ASSERT(apc_input_damage(in) != NULL);
			apc_input_close(in);
		}
	}
	free(d);
}

/* A tar whose first header is cut short has nothing to keep: not opened. */
static void tar_header_cut_is_edata(void)
{
	size_t len;
	uint8_t *d = t_read_file(tpath("t.tar"), &len);
	struct apc_input *in;
	struct apc_err err;

	if (!d)
		return;
	copy_refused("hcut.tar", d, 300, &err);
	T_EQ_STR(err.file, tpath("hcut.tar"));
	T_EQ_INT(err.offset, 300);
	T_ASSERT(strstr(err.msg, "truncated tar archive: it ends inside the member header after "
				 "its start (300 of its 512 bytes)") != NULL);
	/* before the ustar magic at 257 (or in it): told by the header's
	 * numbers and checksum, from the 156 bytes that end the checksum */
	for (size_t k = 0; k < 5; k++) {
		static const size_t cut[] = {156, 200, 257, 258, 261};
		char want[100];
		copy_refused("hcut.tar", d, cut[k], &err);
		T_EQ_INT(err.offset, (int64_t)cut[k]);
		snprintf(want, sizeof want, "(%zu of its 512 bytes)", cut[k]);
		if (!strstr(err.msg, want))
			T_FAIL("cut at %zu: %s", cut[k], err.msg);
	}
	/* fewer: a name and a few numbers could be anything */
	in = open_copy("hcut.tar", d, 155);
	if (in) {
		T_EQ_STR(apc_input_kind(in), "file");
		apc_input_close(in);
	}
	/* a checksum below the sum of the bytes there is no tar header's */
	memcpy(d + 148, "000001\0 ", 8);
	in = open_copy("hcut.tar", d, 200);
	if (in) {
		T_EQ_STR(apc_input_kind(in), "file");
		apc_input_close(in);
	}
	free(d);
}

/*
 * A .tar.gz whose gzip stream is cut: libarchive lists none of it, so it
 * is decompressed here, and the members before the cut are kept.  The
 * gzip stream's cut is the cause, named first.
 */
static void truncated_tar_gz_keeps_members(void)
{
	size_t len;
	uint8_t *d = t_read_file(tpath("t.tar.gz"), &len);
	struct apc_input *in;
	struct apc_err err;
	const struct apc_err *dmg;

	T_ASSERT(d != NULL);
	if (!d)
		return;
	in = open_copy("cut.tar.gz", d, len / 2);
	if (in) {
		T_EQ_STR(apc_input_kind(in), "tar.gz");
		dmg = damaged(in);
		if (dmg) {
			char want[128];
			T_EQ_STR(dmg->file, tpath("cut.tar.gz"));
			T_ASSERT(dmg->offset > 0);
			snprintf(want, sizeof want, "truncated gzip stream (the compressed data ends at "
				 "byte %zu); truncated tar archive: ", len / 2);
			T_ASSERT(strncmp(dmg->msg, want, strlen(want)) == 0);
		}
		member_whole(in, "info/system.xml", 0);
		member_cut(in, "cpu/0", 1, &err);
		apc_input_close(in);
	}
	/* cut in its 10-byte header: nothing at all, and it says why */
	copy_refused("hcut.tar.gz", d, 5, &err);
	T_EQ_STR(err.file, tpath("hcut.tar.gz"));
	T_ASSERT(strstr(err.msg, "truncated gzip stream (the compressed data ends at byte 5)") != NULL);
	/* only the 8-byte trailer cut: every member whole, still damaged */
	in = open_copy("tcut.tar.gz", d, len - 3);
	if (in) {
		T_ASSERT(apc_input_damage(in) != NULL);
		member_whole(in, "eventdefs/core.xml", 4);
		apc_input_close(in);
	}
	free(d);
}

/*
 * A tar in each other compression: whole, it is listed and read like the
 * .tar.gz; cut, or with bytes flipped in the middle, the members before
 * the damage are kept and the stream's damage leads the message, as for
 * gzip.  Damaged only in the stream's last bytes (its check, its end),
 * every member is whole and the damage is still told: libarchive, which
 * reads the members, never looks past the tar's end, so it is decoded
 * here to the end first.  gzip is in the last test too: libarchive does
 * not check gzip's CRC.
 */
static void compressed_tars(void)
{
	for (int i = -1; i < NCOMPS; i++) {
		const struct comp *c = i < 0 ? NULL : &comps[i];
		const char *cname = c ? c->name : "gzip";
		char kind[16], name[32], cut[32], want[256];
		struct apc_input *in;
		struct apc_err err;
		const struct apc_err *dmg;
		size_t zlen;
		uint8_t *z;

		snprintf(kind, sizeof kind, "tar.%s", c ? c->ext : "gz");
		snprintf(name, sizeof name, "tc.%s", kind);
		if (!make_archive(tpath(name), kind, "smp_example/"))
			continue;
		z = t_read_file(tpath(name), &zlen);
		if (c) {
			T_EQ_INT(apc_input_open(tpath(name), &in, &err), APC_OK);
			if (in) {
				T_EQ_STR(apc_input_kind(in), kind);
				T_ASSERT(apc_input_damage(in) == NULL);
				check_tree(in, 3000);
				apc_input_close(in);
			}
			/* cut half way: in cpu/0 (3 MiB, after system.xml) */
			snprintf(cut, sizeof cut, "cut.%s", kind);
			in = open_copy(cut, z, zlen / 2);
			if (in) {
				T_EQ_STR(apc_input_kind(in), kind);
				dmg = damaged(in);
				if (dmg) {
					T_EQ_STR(dmg->file, tpath(cut));
					/* (compress has no end: only the tar is seen cut) */
					if (c->filter == ARCHIVE_FILTER_COMPRESS)
						want[0] = '\0';
					else
						snprintf(want, sizeof want,
							 "truncated %s stream (the compressed data ends at "
							 "byte %zu); ", cname, zlen / 2);
					snprintf(want + strlen(want), sizeof want - strlen(want),
						 "truncated tar archive: it ends inside the data of "
						 "smp_example/cpu/0 (");
					if (strncmp(dmg->msg, want, strlen(want)) != 0)
						T_FAIL("%s: %s", cname, dmg->msg);
				}
				member_whole(in, "info/system.xml", 0);
				member_cut(in, "cpu/0", 1, &err);
				apc_input_close(in);
			}
			/* bytes flipped half way */
			flip(z, zlen / 2, 16);
			snprintf(cut, sizeof cut, "bad.%s", kind);
			in = open_copy(cut, z, zlen);
			flip(z, zlen / 2, 16);
			if (in) {
				dmg = apc_input_damage(in);
				if (!dmg && c->checked)
					T_FAIL("%s: damage half way not found", cname);
				snprintf(want, sizeof want, "%s data corrupt before compressed byte ",
					 cname);
				if (dmg && c->checked && strncmp(dmg->msg, want, strlen(want)) != 0)
					T_FAIL("%s: %s", cname, dmg->msg);
				member_whole(in, "info/system.xml", 0);
				apc_input_close(in);
			}
		}
		/* the last byte's first bit flipped: gzip's size, xz's footer
		 * magic, the checksum of the others (bzip2's last bits are
		 * padding, its first is the CRC's) */
		if (c && !c->checked) {
			free(z);
			continue;
		}
		z[zlen - 1] ^= 0x80;
		snprintf(cut, sizeof cut, "end.%s", kind);
		in = open_copy(cut, z, zlen);
		if (in) {
			if (!apc_input_damage(in))
				T_FAIL("%s: damage in the last byte not found", cname);
			member_whole(in, "eventdefs/core.xml", 4);
			apc_input_close(in);
		}
		free(z);
	}
}

/* A zip cut in a member, or only in its central directory. */
static void truncated_zip_is_damaged(void)
{
	size_t len;
	uint8_t *d = t_read_file(tpath("t.zip"), &len);
	struct apc_input *in;
	struct apc_err err;
	const struct apc_err *dmg;

	if (!d)
		return;
	in = open_copy("cut.zip", d, len / 2);
	if (in) {
		dmg = damaged(in);
		T_ASSERT(dmg != NULL && strstr(dmg->msg, "truncated zip archive: ") != NULL);
		if (dmg)
			T_EQ_INT(dmg->offset, (int64_t)(len / 2));
		apc_input_close(in);
	}
	/* without its end of central directory record (the last 22 bytes) */
	in = open_copy("cdcut.zip", d, len - 22);
	if (in) {
		dmg = damaged(in);
		if (dmg)
			T_EQ_STR(dmg->msg,
				 "truncated zip archive: it has no end of central directory record");
		member_whole(in, "cpu/1", 2);
		apc_input_close(in);
	}
	/* cut inside its first local header */
	copy_refused("hcut.zip", d, 20, &err);
	T_ASSERT(strstr(err.msg, "truncated zip archive: it ends inside its first member header") !=
		 NULL);
	free(d);
}

/* Where the data of zip member `name` starts in d (after its local
 * header), or 0. */
static size_t zip_data_at(const uint8_t *d, size_t len, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i + 30 + n <= len; i++)
		if (memcmp(d + i, "PK\3\4", 4) == 0 && (d[i + 26] | d[i + 27] << 8) == (int)n &&
		    memcmp(d + i + 30, name, n) == 0)
			return i + 30 + n + (size_t)(d[i + 28] | d[i + 29] << 8);
	return 0;
}

/*
 * A zip cut inside a member's data: the member gives every byte its data
 * before the cut holds (libarchive's zip reader, which drops what it was
 * inflating, gave less), then says it is cut; a stored one gives every
 * byte there.
 */
static void truncated_zip_member_keeps_every_byte(void)
{
	size_t len, data, cut, got;
	uint8_t *d = t_read_file(tpath("t.zip"), &len), *want;
	struct apc_input *in;
	struct apc_err err;
	z_stream z;

	if (!d)
		return;
	data = zip_data_at(d, len, "smp_example/cpu/0");
	cut = len / 2;
	T_ASSERT(data > 0 && data < cut);
	/* what inflating the data before the cut gives */
	want = malloc(tree[1].len);
	memset(&z, 0, sizeof z);
	T_EQ_INT(inflateInit2(&z, -15), Z_OK);
	z.next_in = d + data;
	z.avail_in = (uInt)(cut - data);
	z.next_out = want;
	z.avail_out = (uInt)tree[1].len;
	T_EQ_INT(inflate(&z, Z_SYNC_FLUSH), Z_OK);
	inflateEnd(&z);
	T_ASSERT(z.total_out > 1000000 && z.total_out < tree[1].len);
	in = open_copy("mcut.zip", d, cut);
	if (in) {
		T_ASSERT(apc_input_damage(in) != NULL);
		member_whole(in, "info/system.xml", 0);
		got = member_cut(in, "cpu/0", 1, &err);
		T_EQ_U64(got, z.total_out);
		T_EQ_INT(err.offset, (int64_t)got);
		T_ASSERT(strstr(err.msg, "truncated deflate stream (the compressed data ends at byte ") !=
			 NULL);
		apc_input_close(in);
	}
	free(want);
	free(d);

	/* stored */
	T_ASSERT(make_archive(tpath("st.zip"), "zip-store", ""));
	d = t_read_file(tpath("st.zip"), &len);
	if (!d)
		return;
	data = zip_data_at(d, len, "cpu/0");
	T_ASSERT(data > 0 && data < len / 2);
	in = open_copy("scut.zip", d, len / 2);
	if (in) {
		got = member_cut(in, "cpu/0", 1, &err);
		T_EQ_U64(got, len / 2 - data);
		T_ASSERT(strstr(err.msg, "truncated archive: the member ends after") != NULL);
		apc_input_close(in);
	}
	free(d);
}

/* Offset of the "new" cpio header naming `name` in d, or -1. */
static long cpio_header_at(const uint8_t *d, size_t len, const char *name)
{
	size_t off = 0;

	while (off + 110 <= len && memcmp(d + off, "070701", 6) == 0) {
		char f[9] = "";
		unsigned long namesz, filesz;
		memcpy(f, d + off + 94, 8);
		namesz = strtoul(f, NULL, 16);
		memcpy(f, d + off + 54, 8);
		filesz = strtoul(f, NULL, 16);
		if (off + 110 + namesz <= len && strcmp((const char *)d + off + 110, name) == 0)
			return (long)off;
		off = ((off + 110 + namesz + 3) & ~(size_t)3) + ((filesz + 3) & ~(size_t)3);
	}
	return -1;
}

/*
 * A cpio cut short or damaged: the members before the damage are kept.
 * One whose data the cut goes through is left out (libarchive is shown
 * the archive up to its header, which it must not read: see
 * arc_cpio_check()), and the damage names it; a header cut short, or
 * one whose magic is damaged (libarchive would skip to the next header
 * it finds, with a mere warning), ends the listing there.
 */
static void cpio_damage_keeps_members(void)
{
	size_t len;
	uint8_t *d;
	struct apc_input *in;
	struct apc_err err;
	const struct apc_err *dmg;
	long c0, c1;
	char want[200];

	T_ASSERT(make_archive(tpath("t.cpio"), "cpio", "smp_example/"));
	T_EQ_INT(apc_input_open(tpath("t.cpio"), &in, &err), APC_OK);
	if (in) {
		T_EQ_STR(apc_input_kind(in), "cpio");
		T_ASSERT(apc_input_damage(in) == NULL);
		check_tree(in, 4000);
		apc_input_close(in);
	}
	d = t_read_file(tpath("t.cpio"), &len);
	c0 = d ? cpio_header_at(d, len, "smp_example/cpu/0") : -1;
	c1 = d ? cpio_header_at(d, len, "smp_example/cpu/1") : -1;
	T_ASSERT(c0 > 0 && c1 > c0);
	if (c0 <= 0 || c1 <= c0) {
		free(d);
		return;
	}
	/* cut in cpu/0's data: system.xml only, the cut named */
	in = open_copy("cut.cpio", d, (size_t)c0 + 1000000);
	if (in) {
		dmg = damaged(in);
		if (dmg) {
			T_EQ_INT(dmg->offset, c0);
			snprintf(want, sizeof want, "cpio header of smp_example/cpu/0: %zu bytes of data "
				 "run past the end of the archive (", tree[1].len);
			T_ASSERT(strncmp(dmg->msg, want, strlen(want)) == 0);
		}
		members_are(in, 1, "cpu/0");
		member_whole(in, "info/system.xml", 0);
		apc_input_close(in);
	}
	/* cut 50 bytes into cpu/1's header */
	in = open_copy("hcut.cpio", d, (size_t)c1 + 50);
	if (in) {
		dmg = damaged(in);
		if (dmg) {
			T_EQ_INT(dmg->offset, c1 + 50);
			T_EQ_STR(dmg->msg, "truncated cpio archive: it ends inside the member header "
					   "after smp_example/cpu/0 (50 of its 110 bytes)");
		}
		members_are(in, 2, "cpu/1");
		member_whole(in, "cpu/0", 1);
		apc_input_close(in);
	}
	/* cpu/1's magic damaged, the rest whole */
	d[c1 + 5] = 'Z';
	in = open_copy("bad.cpio", d, len);
	if (in) {
		dmg = damaged(in);
		if (dmg) {
			T_EQ_INT(dmg->offset, c1);
			T_ASSERT(strncmp(dmg->msg, "damaged cpio archive: the header after "
						   "smp_example/cpu/0 cannot be read (", 72) == 0);
		}
		members_are(in, 2, "eventdefs/core.xml");
		apc_input_close(in);
	}
	free(d);
	/* compressed, cut: the stream's cut first, then the cpio's */
	if (make_archive(tpath("t.cpio.xz"), "cpio.xz", "smp_example/")) {
		d = t_read_file(tpath("t.cpio.xz"), &len);
		in = open_copy("cut.cpio.xz", d, len / 2);
		if (in) {
			T_EQ_STR(apc_input_kind(in), "cpio.xz");
			dmg = apc_input_damage(in);
			snprintf(want, sizeof want, "truncated xz stream (the compressed data ends at "
				 "byte %zu); cpio header of smp_example/cpu/0: ", len / 2);
			T_ASSERT(dmg && strncmp(dmg->msg, want, strlen(want)) == 0);
			apc_input_close(in);
		}
		free(d);
	}
}

/*
 * A 7z lists its members in a header at its end: cut, it has none left,
 * and says so with where that header was.  Bytes flipped in its packed
 * data: listed, and the member they are in fails to read (no crash).
 */
static void sevenzip_damage(void)
{
	size_t len, got;
	uint8_t *d, *b;
	struct apc_input *in = (struct apc_input *)1;
	struct apc_err err;
	int st, failed = 0;

	T_ASSERT(make_archive(tpath("t.7z"), "7z", "smp_example/"));
	T_EQ_INT(apc_input_open(tpath("t.7z"), &in, &err), APC_OK);
	if (in) {
		T_EQ_STR(apc_input_kind(in), "7zip");
		check_tree(in, 4000);
		apc_input_close(in);
	}
	d = t_read_file(tpath("t.7z"), &len);
	if (!d)
		return;
	copy_refused("cut.7z", d, len / 2, &err);
	T_EQ_STR(err.file, tpath("cut.7z"));
	T_EQ_INT(err.offset, (int64_t)(len / 2));
	T_ASSERT(strncmp(err.msg, "truncated 7z archive: it ends before the header listing its "
				  "members (bytes ", 72) == 0);
	copy_refused("hcut.7z", d, 20, &err);
	T_EQ_STR(err.msg, "truncated 7z archive: it ends inside its signature header (20 of its 32 "
			  "bytes)");
	flip(d, len / 2, 16);
	in = open_copy("bad.7z", d, len);
	free(d);
	if (in) {
		for (int i = 0; i < NFILES; i++) {
			b = drain_member(in, tree[i].name, tree[i].len + 1, &got, &err, &st);
			if (st != APC_OK) {
				T_EQ_INT(st, APC_EDATA);
				failed++;
			}
			free(b);
		}
		T_ASSERT(failed > 0);
		apc_input_close(in);
	}
}

/* Two members of one tar.gz open at once, read in alternation. */
static void two_members_interleaved(void)
{
	const char *path = tpath("t.tar.gz");
	struct apc_input *in;
	struct apc_stream *s0, *s1;
	struct apc_err err;
	uint8_t *b0 = malloc(tree[1].len), *b1 = malloc(tree[2].len);
	size_t n0 = 0, n1 = 0;
	const uint8_t *p;

	T_EQ_INT(apc_input_open(path, &in, &err), APC_OK);
	if (!in)
		goto out;
	T_EQ_INT(apc_input_open_member(in, "cpu/0", &s0, &err), APC_OK);
	T_EQ_INT(apc_input_open_member(in, "cpu/1", &s1, &err), APC_OK);
	if (s0 && s1) {
		T_EQ_INT(apc_stream_peek(s1, &p, 10, &err), 10);
		T_EQ_MEM(p, tree[2].data, 10);
		for (;;) {
			ssize_t r0 = apc_stream_read(s0, b0 + n0, tree[1].len - n0 < 4093 ? tree[1].len - n0 : 4093, &err);
			ssize_t r1 = apc_stream_read(s1, b1 + n1, tree[2].len - n1 < 511 ? tree[2].len - n1 : 511, &err);
			T_ASSERT(r0 >= 0 && r1 >= 0);
			if (r0 <= 0 && r1 <= 0)
				break;
			n0 += (size_t)(r0 > 0 ? r0 : 0);
			n1 += (size_t)(r1 > 0 ? r1 : 0);
		}
		T_EQ_INT(n0, tree[1].len);
		T_EQ_INT(n1, tree[2].len);
		if (n0 == tree[1].len)
			T_EQ_MEM(b0, tree[1].data, n0);
		if (n1 == tree[2].len)
			T_EQ_MEM(b1, tree[2].data, n1);
	}
	apc_stream_close(s0);
	apc_stream_close(s1);
	apc_input_close(in);
out:
	free(b0);
	free(b1);
}

/* A 3 MiB member read 777 bytes at a time, with skips, from tar.gz and zip. */
static void large_member_small_chunks(void)
{
	static const char *const files[] = {"t.tar.gz", "t.zip", "t.tar"};

	for (int f = 0; f < 3; f++) {
		struct apc_input *in;
		struct apc_stream *s;
		struct apc_err err;
		uint8_t *got;
		size_t len;

		T_EQ_INT(apc_input_open(tpath(files[f]), &in, &err), APC_OK);
		if (!in)
			continue;
		T_EQ_INT(apc_input_open_member(in, "cpu/0", &s, &err), APC_OK);
		if (s) {
			got = drain(s, 777, &len, &err);
			same_bytes(got, len, tree[1].data, tree[1].len);
			apc_stream_close(s);
		}
		T_EQ_INT(apc_input_open_member(in, "cpu/0", &s, &err), APC_OK);
		if (s) {
			uint8_t buf[100];
			T_EQ_INT(apc_stream_skip(s, 2000000, &err), APC_OK);
			T_EQ_INT(apc_stream_read(s, buf, 100, &err), 100);
			T_EQ_MEM(buf, tree[1].data + 2000000, 100);
			T_EQ_INT(apc_stream_skip(s, tree[1].len, &err), APC_EDATA);
			apc_stream_close(s);
		}
		apc_input_close(in);
	}
}

/* ------------------------------------------------------------------ */
/* stdin through a pipe */

/* apc_input_open("-") with stdin fed from `path` through a pipe (not seekable). */
static struct apc_input *open_stdin_pipe(const char *path, struct apc_err *err, int *rc)
{
	int fds[2];
	pid_t pid;
	struct apc_input *in = NULL;

	if (pipe(fds) != 0) {
		T_FAIL("pipe");
		return NULL;
	}
	pid = fork();
	if (pid == 0) {
		size_t len;
		uint8_t *d = t_read_file(path, &len);
		size_t w = 0;
		close(fds[0]);
		while (d && w < len) {
			ssize_t k = write(fds[1], d + w, len - w);
			if (k <= 0)
				break;
			w += (size_t)k;
		}
		_exit(0);
	}
	close(fds[1]);
	dup2(fds[0], STDIN_FILENO);
	close(fds[0]);
	*rc = apc_input_open("-", &in, err);
	return in;
}

static void restore_stdin(int saved)
{
	dup2(saved, STDIN_FILENO);
	close(saved);
	while (waitpid(-1, NULL, 0) > 0)
		;
}

static void stdin_tar_is_spooled(void)
{
	static const char *const files[] = {"t.tar", "t.tar.gz"};
	static const char *const kinds[] = {"tar", "tar.gz"};

	for (int i = 0; i < 2; i++) {
		int saved = dup(STDIN_FILENO), rc;
		struct apc_err err;
		struct apc_input *in = open_stdin_pipe(tpath(files[i]), &err, &rc);
		T_EQ_INT(rc, APC_OK);
		if (in) {
			struct apc_stream *s;
			T_EQ_STR(apc_input_kind(in), kinds[i]);
			check_tree(in, 5000);
			T_EQ_INT(apc_input_open_member(in, "cpu/1", &s, &err), APC_OK);
			if (s) {
				T_EQ_STR(apc_stream_name(s), "<stdin>:cpu/1");
				apc_stream_close(s);
			}
			apc_input_close(in);
		}
		restore_stdin(saved);
	}
}

static void stdin_plain_and_gzip_stream(void)
{
	size_t n = 200000, len;
	uint8_t *data = gen(n, 9), *got;
	static const char *const kinds[] = {"stdin", "gzip"};

	write_file(tpath("plain2.bin"), data, n);
	write_gzip(tpath("plain2.gz"), "wb", data, n);
	for (int i = 0; i < 2; i++) {
		int saved = dup(STDIN_FILENO), rc;
		struct apc_err err;
		struct apc_input *in = open_stdin_pipe(tpath(i ? "plain2.gz" : "plain2.bin"), &err, &rc);
		T_EQ_INT(rc, APC_OK);
		if (in) {
			T_EQ_STR(apc_input_kind(in), kinds[i]);
			T_EQ_INT(apc_input_is_tree(in), 0);
			/* a pipe cannot lseek: skip reads and discards */
			T_EQ_INT(apc_stream_skip(apc_input_stream(in), 5, &err), APC_OK);
			got = drain(apc_input_stream(in), 3333, &len, &err);
			same_bytes(got, len, data + 5, n - 5);
			apc_input_close(in);
		}
		restore_stdin(saved);
	}
	free(data);
}

/* ------------------------------------------------------------------ */

/* stdin on a terminal is refused, for trees and single streams alike. */
static void stdin_terminal_refused(void)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY), sl, saved;
	struct apc_input *in = (struct apc_input *)1;
	struct apc_stream *s = (struct apc_stream *)1;
	struct apc_err err;

	if (m < 0 || grantpt(m) != 0 || unlockpt(m) != 0)
		T_SKIP("no pseudo-terminal available");
	sl = open(ptsname(m), O_RDWR | O_NOCTTY);
	if (sl < 0) {
		close(m);
		T_SKIP("cannot open the pseudo-terminal");
	}
	saved = dup(STDIN_FILENO);
	dup2(sl, STDIN_FILENO);
	T_EQ_INT(apc_input_open("-", &in, &err), APC_EIO);
	T_ASSERT(in == NULL);
	T_EQ_STR(err.msg, "refusing to read binary data from a terminal");
	T_EQ_INT(apc_stream_open_path("-", &s, &err), APC_EIO);
	T_ASSERT(s == NULL);
	dup2(saved, STDIN_FILENO);
	close(saved);
	close(sl);
	close(m);
}

static void stream_open_path_on_directory(void)
{
	struct apc_stream *s = (struct apc_stream *)1;
	struct apc_err err;

	T_EQ_INT(apc_stream_open_path(tpath("dirtree"), &s, &err), APC_EIO);
	T_ASSERT(s == NULL);
	T_ASSERT(strstr(err.file, "dirtree") != NULL);
	T_EQ_STR(err.msg, "cannot read: is a directory");
}

static void shared_ltt_folder(void)
{
	const char *td = t_shared_testdata();
	char path[512];
	struct apc_input *in;
	struct apc_err err;
	struct stat st;

	if (!td)
		T_SKIP("../shared/testdata not present");
	snprintf(path, sizeof path, "%s/ltt/smp_example", td);
	if (stat(path, &st) != 0)
		T_SKIP("ltt/smp_example not present");
	T_EQ_INT(apc_input_open(path, &in, &err), APC_OK);
	if (!in)
		return;
	T_EQ_STR(apc_input_kind(in), "directory");
	T_EQ_INT(apc_input_has(in, "info/system.xml"), 1);
	T_EQ_INT(apc_input_has(in, "cpu/0"), 1);
	T_EQ_INT(apc_input_has(in, "control/facilities"), 1);
	apc_input_close(in);
}

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(p);
}

void run_tests(void)
{
	const char *base = getenv("TMPDIR");

	snprintf(tmpdir, sizeof tmpdir, "%s/test_input-XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		exit(2);
	}
	make_tree();
	make_dir_tree(tpath("dirtree"));

	T_RUN(plain_file_read_peek_skip);
	T_RUN(empty_and_binary_are_plain);
	T_RUN(gzip_file_reads_back);
	T_RUN(gzip_concatenated_members);
	T_RUN(gzip_corrupt_is_edata);
	T_RUN(gzip_truncated_is_edata);
	T_RUN(gzip_cut_error_held);
	T_RUN(compressed_files_read_back);
	T_RUN(compressed_files_cut_keep_what_came_before);
	T_RUN(compressed_files_corrupt_is_edata);
	T_RUN(missing_file_names_path);
	T_RUN(slurp_limit);
	T_RUN(directory_tree);
	T_RUN(tar_tree);
	T_RUN(tar_gz_tree);
	T_RUN(zip_tree);
	T_RUN(tar_unsafe_members);
	T_RUN(truncated_tar_keeps_members);
	T_RUN(tar_header_cut_is_edata);
	T_RUN(tar_bad_header_is_damage);
	T_RUN(tar_cut_at_member_boundary);
	T_RUN(truncated_tar_gz_keeps_members);
	T_RUN(compressed_tars);
	T_RUN(cpio_damage_keeps_members);
	T_RUN(sevenzip_damage);
	T_RUN(truncated_zip_is_damaged);
	T_RUN(truncated_zip_member_keeps_every_byte);
	T_RUN(two_members_interleaved);
	T_RUN(large_member_small_chunks);
	T_RUN(stdin_tar_is_spooled);
	T_RUN(stdin_plain_and_gzip_stream);
	T_RUN(stdin_terminal_refused);
	T_RUN(stream_open_path_on_directory);
	T_RUN(shared_ltt_folder);

	nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	for (int i = 0; i < NFILES; i++)
		free(tree[i].data);
}
