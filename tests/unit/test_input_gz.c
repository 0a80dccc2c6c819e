/*
 * test_input_gz.c - members of compressed tars read the fast ways: a
 * .tar.gz's from the seek points the listing notes (every member's
 * bytes exactly as stored, whatever the compression level, with the
 * archive split into several gzip members, with members read side by
 * side, and with more members than points), and a .tar.xz's or
 * .tar.bz2's from a decoded copy, or from the archive's start when the
 * copy finds no room.  The tars and their compression are made here
 * from a seed.
 */
#include <bzlib.h>
#include <errno.h>
#include <lzma.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "input.h"
#include "t.h"

static char tmpdir[256];
static char path[512];

static uint64_t rng_state;

static uint64_t rng(void)
{
	return t_rand(&rng_state);
}

struct member {
	char name[64];
	uint8_t *data;
	size_t len;
};

/*
 * Member data that deflate codes in blocks of every kind: words from a
 * small vocabulary (matches far back in the 32 KiB window), runs of one
 * byte, and stretches of random bytes (stored blocks at high levels).
 */
static void fill(uint8_t *p, size_t n)
{
	static const char *const words[] = {"sched", "irq", "softirq", "timer", "exec", "fork",
					    "0x80001000", "cpu", "[idle]", "Cortex-A53"};
	size_t i = 0;

	while (i < n) {
		uint64_t r = rng();
		size_t k;

		switch (r % 8) {
		case 0: /* a run */
			for (k = 0; k < 1 + (r >> 8) % 300 && i < n; k++)
				p[i++] = (uint8_t)(r >> 20);
			break;
		case 1: /* noise */
			for (k = 0; k < 1 + (r >> 8) % 2000 && i < n; k++)
				p[i++] = (uint8_t)rng();
			break;
		default: {
			const char *w = words[(r >> 8) % 10];
			for (k = 0; w[k] && i < n; k++)
				p[i++] = (uint8_t)w[k];
			if (i < n)
				p[i++] = (uint8_t)" \n,"[(r >> 16) % 3];
		}
		}
	}
}

static void octal(char *field, size_t width, uint64_t v)
{
	snprintf(field, width, "%0*llo", (int)width - 1, (unsigned long long)v);
}

/* A ustar archive of the members: headers, data padded to 512, end. */
static uint8_t *make_tar(const struct member *m, size_t nm, size_t *len)
{
	size_t n = 1024;
	uint8_t *tar, *p;

	for (size_t i = 0; i < nm; i++)
		n += 512 + (m[i].len + 511) / 512 * 512;
	tar = calloc(1, n);
	if (!tar)
		return NULL;
	p = tar;
	for (size_t i = 0; i < nm; i++) {
		char *h = (char *)p;
		unsigned sum = 0;

		snprintf(h, 100, "%s", m[i].name);
		octal(h + 100, 8, 0644);
		octal(h + 108, 8, 0);
		octal(h + 116, 8, 0);
		octal(h + 124, 12, m[i].len);
		octal(h + 136, 12, 1700000000);
		memset(h + 148, ' ', 8);
		h[156] = '0';
		memcpy(h + 257, "ustar", 6);
		memcpy(h + 263, "00", 2);
		for (int k = 0; k < 512; k++)
			sum += p[k];
		snprintf(h + 148, 8, "%06o", sum);
		p += 512;
		memcpy(p, m[i].data, m[i].len);
		p += (m[i].len + 511) / 512 * 512;
	}
	*len = n;
	return tar;
}

/* gzip data as `parts` gzip members, split at even points, to fd. */
static int write_gzip(FILE *f, const uint8_t *data, size_t len, int level, int parts)
{
	size_t cap = compressBound((uLong)len) + 64 * (size_t)parts;
	uint8_t *out = malloc(cap);
	int ok = out != NULL;

	for (int k = 0; k < parts && ok; k++) {
		size_t a = len / (size_t)parts * (size_t)k;
		size_t b = k + 1 == parts ? len : len / (size_t)parts * (size_t)(k + 1);
		z_stream z;

		memset(&z, 0, sizeof z);
		if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
			ok = 0;
			break;
		}
		z.next_in = (Bytef *)(uintptr_t)(data + a);
		z.avail_in = (uInt)(b - a);
		z.next_out = out;
		z.avail_out = (uInt)cap;
		ok = deflate(&z, Z_FINISH) == Z_STREAM_END &&
		     fwrite(out, 1, cap - z.avail_out, f) == cap - z.avail_out;
		deflateEnd(&z);
	}
	free(out);
	return ok;
}

static struct member *make_members(size_t nm, size_t small, size_t big)
{
	struct member *m = calloc(nm, sizeof *m);

	for (size_t i = 0; m && i < nm; i++) {
		snprintf(m[i].name, sizeof m[i].name, "part%03zu.bin", i);
		/* sizes mix: empty, tiny, past a block, several MiB */
		m[i].len = i % 5 == 1 ? 0 : i % 3 == 0 ? big + (size_t)(rng() % 4096) : (size_t)(rng() % small);
		m[i].data = malloc(m[i].len ? m[i].len : 1);
		if (!m[i].data)
			return NULL;
		fill(m[i].data, m[i].len);
	}
	return m;
}

static void free_members(struct member *m, size_t nm)
{
	for (size_t i = 0; m && i < nm; i++)
		free(m[i].data);
	free(m);
}

/* Write the members as a .tar.gz at `path`. */
static int write_archive(const struct member *m, size_t nm, int level, int parts)
{
	size_t tl;
	uint8_t *tar = make_tar(m, nm, &tl);
	FILE *f = tar ? fopen(path, "wb") : NULL;
	int ok = f && write_gzip(f, tar, tl, level, parts);

	if (f && fclose(f) != 0)
		ok = 0;
	free(tar);
	return ok;
}

/* Read the whole member in chunks of `chunk`; compare to want. */
static int member_is(struct apc_input *in, const struct member *want, size_t chunk)
{
	struct apc_stream *s;
	struct apc_err err;
	uint8_t *buf = malloc(chunk);
	size_t got = 0;
	int same = 1;
	ssize_t r;

	if (!buf || apc_input_open_member(in, want->name, &s, &err) != APC_OK) {
		T_FAIL("cannot open %s: %s", want->name, buf ? err.msg : "no memory");
		free(buf);
		return 0;
	}
	T_EQ_INT(apc_stream_size(s), (long long)want->len);
	while ((r = apc_stream_read(s, buf, chunk, &err)) > 0) {
		if (got + (size_t)r > want->len || memcmp(buf, want->data + got, (size_t)r) != 0)
			same = 0;
		got += (size_t)r;
	}
	if (r < 0)
		T_FAIL("%s: %s", want->name, err.msg);
	T_EQ_U64(apc_stream_offset(s), want->len);
	apc_stream_close(s);
	free(buf);
	if (!same || got != want->len)
		T_FAIL("%s: %zu bytes read, %s", want->name, got, same ? "all equal" : "differ");
	return same && got == want->len && r == 0;
}

/* The tar of the members, xz- or bzip2-compressed, at `path`. */
static int write_other(const struct member *m, size_t nm, int xz)
{
	size_t tl, cap, ol = 0;
	uint8_t *tar = make_tar(m, nm, &tl), *out;
	FILE *f;
	int ok;

	if (!tar)
		return 0;
	cap = tl + tl / 50 + 4096;
	out = malloc(cap);
	if (!out) {
		free(tar);
		return 0;
	}
	if (xz) {
		ok = lzma_easy_buffer_encode(1, LZMA_CHECK_CRC64, NULL, tar, tl, out, &ol, cap) == LZMA_OK;
	} else {
		unsigned int bl = (unsigned int)cap;
		ok = BZ2_bzBuffToBuffCompress((char *)out, &bl, (char *)tar, (unsigned int)tl, 1, 0, 0) ==
		     BZ_OK;
		ol = bl;
	}
	f = ok ? fopen(path, "wb") : NULL;
	ok = f && fwrite(out, 1, ol, f) == ol;
	if (f && fclose(f) != 0)
		ok = 0;
	free(out);
	free(tar);
	return ok;
}

/* Every member whole, in reverse order; the input then closed. */
static void all_members(struct apc_input *in, const struct member *m, size_t nm)
{
	int ok = 1;

	for (size_t i = nm; i-- > 0 && ok;)
		ok = member_is(in, &m[i], 65536 + i);
	apc_input_close(in);
}

/* A .tar.xz and a .tar.bz2 are decoded once into a copy, and their
 * members read from it; a .tar.gz is not copied. */
static void t_xz_bz2_copied(void)
{
	struct member *m;
	struct apc_input *in = NULL;
	struct apc_err err;

	rng_state = 0x5eed0005;
	m = make_members(7, 50000, 1 << 20);
	T_ASSERT(m != NULL);
	if (!m)
		return;
	for (int xz = 0; xz < 2; xz++) {
		T_ASSERT(write_other(m, 7, xz));
		if (apc_input_open(path, &in, &err) != APC_OK) {
			T_FAIL("open: %s", err.msg);
			continue;
		}
		T_EQ_STR(apc_input_kind(in), xz ? "tar.xz" : "tar.bz2");
		T_EQ_INT(apc_input_decoded_copy(in), 1);
		T_EQ_INT(apc_input_rereads(in), 0);
		T_ASSERT(apc_input_damage(in) == NULL);
		all_members(in, m, 7);
	}
	T_ASSERT(write_archive(m, 7, 6, 1));
	if (apc_input_open(path, &in, &err) == APC_OK) {
		T_EQ_INT(apc_input_decoded_copy(in), 0);
		apc_input_close(in);
	}
	free_members(m, 7);
}

/* No room for the copy (files limited to 64 KiB): the archive is listed
 * as decoded and each member decoded from the start, as exact. */
static void t_no_room_for_copy(void)
{
	struct member *m;
	struct apc_input *in = NULL;
	struct apc_err err;
	struct rlimit old, lim;
	void (*was)(int);

	rng_state = 0x5eed0006;
	m = make_members(4, 50000, 300000);
	T_ASSERT(m && write_other(m, 4, 1));
	T_ASSERT(getrlimit(RLIMIT_FSIZE, &old) == 0);
	if (!m || t_failed_now)
		goto out;
	lim = old;
	lim.rlim_cur = 65536;
	was = signal(SIGXFSZ, SIG_IGN); /* a write past the limit fails with EFBIG */
	T_ASSERT(setrlimit(RLIMIT_FSIZE, &lim) == 0);
	if (apc_input_open(path, &in, &err) != APC_OK)
		T_FAIL("open: %s", err.msg);
	setrlimit(RLIMIT_FSIZE, &old);
	signal(SIGXFSZ, was);
	if (!in)
		goto out;
	T_EQ_STR(apc_input_kind(in), "tar.xz");
	T_EQ_INT(apc_input_decoded_copy(in), 0);
	T_EQ_INT(apc_input_rereads(in), 1); /* apcconv says so: the slow way */
	all_members(in, m, 4);
out:
	free_members(m, 4);
}

static void check_all(const struct member *m, size_t nm, int level, int parts, size_t min_points)
{
	struct apc_input *in = NULL;
	struct apc_err err;
	int ok = 1;

	T_ASSERT(write_archive(m, nm, level, parts));
	if (apc_input_open(path, &in, &err) != APC_OK) {
		T_FAIL("open: %s", err.msg);
		return;
	}
	T_EQ_STR(apc_input_kind(in), "tar.gz");
	T_ASSERT(apc_input_damage(in) == NULL);
	T_ASSERT(apc_input_seek_points(in) >= min_points);
	/* last first, so no member is helped by one read before it */
	for (size_t i = nm; i-- > 0 && ok;)
		ok = member_is(in, &m[i], 65536 + i);
	apc_input_close(in);
}

/* Several MiB at level 1, 6 and 9 and as 3 gzip members: exact bytes,
 * and points kept (one per big member at least). */
static void t_levels_and_parts(void)
{
	static const int levels[] = {1, 6, 9};
	struct member *m;

	rng_state = 0x5eed0001;
	m = make_members(12, 70000, 1 << 20);
	T_ASSERT(m != NULL);
	if (!m)
		return;
	for (size_t l = 0; l < 3; l++)
		check_all(m, 12, levels[l], 1, 4);
	check_all(m, 12, 6, 3, 4);
	check_all(m, 12, 9, 7, 4);
	free_members(m, 12);
}

/* Two members open at once, read in turns, as the LTT reader does. */
static void t_side_by_side(void)
{
	struct member *m;
	struct apc_input *in = NULL;
	struct apc_stream *a = NULL, *b = NULL;
	struct apc_err err;
	size_t ga = 0, gb = 0;
	uint8_t buf[3000];
	int same = 1;

	rng_state = 0x5eed0002;
	m = make_members(4, 1000, 3 << 20);
	T_ASSERT(m && write_archive(m, 4, 6, 1));
	if (!m || apc_input_open(path, &in, &err) != APC_OK)
		goto out;
	T_EQ_INT(apc_input_open_member(in, m[0].name, &a, &err), APC_OK);
	T_EQ_INT(apc_input_open_member(in, m[3].name, &b, &err), APC_OK);
	while (a && b && (ga < m[0].len || gb < m[3].len)) {
		ssize_t r = apc_stream_read(a, buf, sizeof buf, &err);
		if (r > 0 && memcmp(buf, m[0].data + ga, (size_t)r) != 0)
			same = 0;
		ga += r > 0 ? (size_t)r : 0;
		r = apc_stream_read(b, buf, 1 + gb % sizeof buf, &err);
		if (r > 0 && memcmp(buf, m[3].data + gb, (size_t)r) != 0)
			same = 0;
		gb += r > 0 ? (size_t)r : 0;
		if (r <= 0 && gb < m[3].len)
			break;
	}
	T_ASSERT(same);
	T_EQ_U64(ga, m[0].len);
	T_EQ_U64(gb, m[3].len);
	T_ASSERT(apc_input_seek_points(in) >= 2);
out:
	apc_stream_close(a);
	apc_stream_close(b);
	apc_input_close(in);
	free_members(m, 4);
}

/* More members than points may be kept: members share points, and
 * every one still reads exactly. */
static void t_many_members(void)
{
	struct member *m;
	struct apc_input *in = NULL;
	struct apc_err err;
	int ok = 1;

	rng_state = 0x5eed0003;
	m = make_members(300, 60000, 200000);
	T_ASSERT(m && write_archive(m, 300, 6, 1));
	if (!m || apc_input_open(path, &in, &err) != APC_OK)
		goto out;
	T_ASSERT(apc_input_seek_points(in) > 8);
	T_ASSERT(apc_input_seek_points(in) <= 64);
	for (size_t i = 300; i-- > 0 && ok;)
		ok = member_is(in, &m[i], 4096);
out:
	apc_input_close(in);
	free_members(m, 300);
}

/* The archive cut after it was listed: the member's read ends in an
 * error naming it, never in short data taken for whole. */
static void t_cut_after_listing(void)
{
	struct member *m;
	struct apc_input *in = NULL;
	struct apc_stream *s = NULL;
	struct apc_err err;
	struct stat st;
	uint8_t buf[65536];
	char want[128];
	ssize_t r;
	size_t got = 0;

	rng_state = 0x5eed0004;
	m = make_members(4, 1000, 2 << 20);
	T_ASSERT(m && write_archive(m, 4, 6, 1));
	if (!m || apc_input_open(path, &in, &err) != APC_OK)
		goto out;
	T_ASSERT(stat(path, &st) == 0 && truncate(path, st.st_size / 5 * 4) == 0);
	T_EQ_INT(apc_input_open_member(in, m[3].name, &s, &err), APC_OK);
	while (s && (r = apc_stream_read(s, buf, sizeof buf, &err)) > 0)
		got += (size_t)r;
	T_ASSERT(s && r < 0);
	T_ASSERT(got < m[3].len);
	T_EQ_INT(err.status, APC_EDATA);
	T_ASSERT(strstr(err.file, "part003.bin") != NULL);
	/* where the file now ends, as an offset in the file */
	snprintf(want, sizeof want, "truncated gzip stream (the compressed data ends at byte %lld)",
		 (long long)(st.st_size / 5 * 4));
	T_EQ_STR(err.msg, want);
out:
	apc_stream_close(s);
	apc_input_close(in);
	free_members(m, 4);
}

void run_tests(void)
{
	const char *base = getenv("TMPDIR");

	snprintf(tmpdir, sizeof tmpdir, "%s/test_input_gz-XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(tmpdir)) {
		fprintf(stderr, "cannot make %s: %s\n", tmpdir, strerror(errno));
		return;
	}
	snprintf(path, sizeof path, "%s/a.tar.gz", tmpdir);
	T_RUN(t_levels_and_parts);
	T_RUN(t_side_by_side);
	T_RUN(t_many_members);
	T_RUN(t_cut_after_listing);
	T_RUN(t_xz_bz2_copied);
	T_RUN(t_no_room_for_copy);
	unlink(path);
	rmdir(tmpdir);
}
