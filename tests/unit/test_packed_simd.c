/*
 * test_packed_simd.c - differential tests: every packed-integer variant
 * this CPU runs (portable, BMI2, AVX-512, ...) against the scalar
 * reference, on random values, every length 1-10 with its minimum and
 * maximum and the sign boundaries, and for the decoders on truncated,
 * overlong, non-minimal and random byte input.  Also the writer's
 * single-value apc_pack64_wide() and the APC_NO_SIMD switch.  Inputs
 * are long enough to reach the vector loops (64-byte windows, 16 values
 * a step), and some end at a page edge with nothing mapped after it.
 */
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cpu.h"
#include "packed.h"
#include "t.h"

static uint64_t ts_state = 0x9e3779b97f4a7c15ULL;
static uint64_t ts_rand(void)
{
	ts_state ^= ts_state >> 12;
	ts_state ^= ts_state << 25;
	ts_state ^= ts_state >> 27;
	return ts_state * 2685821657736338717ULL;
}

/* The features of this CPU, whatever APC_NO_SIMD says. */
static unsigned ts_cpu(void)
{
	const char *old = getenv("APC_NO_SIMD");
	char *keep = old ? strdup(old) : NULL;
	unsigned f;

	unsetenv("APC_NO_SIMD");
	apc_cpu_reset();
	f = apc_cpu_features();
	if (keep)
		setenv("APC_NO_SIMD", keep, 1);
	free(keep);
	apc_cpu_reset();
	return f;
}

/* Edge values: for every length 1..10 its min and max, and +-1 around. */
static size_t ts_edges(int64_t *v)
{
	size_t n = 0;

	for (unsigned bytes = 1; bytes <= 10; bytes++) {
		unsigned bits = 7 * bytes - 1; /* magnitude bits that fit */
		int64_t max = bits >= 63 ? INT64_MAX : (int64_t)((1ULL << bits) - 1);
		int64_t min = bits >= 63 ? INT64_MIN : -(int64_t)(1ULL << bits);
		v[n++] = max;
		v[n++] = min;
		v[n++] = max - 1;
		v[n++] = min + 1;
		if (bits < 63) {
			v[n++] = max + 1; /* first value of the next length */
			v[n++] = min - 1;
		}
	}
	v[n++] = 0;
	v[n++] = -1;
	v[n++] = 1;
	return n;
}

/* Random values of random length (1-10 bytes), 5 % negative. */
static void ts_fill(int64_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned bytes = 1 + (unsigned)(ts_rand() % 10);
		unsigned bits = 7 * bytes - 1;
		int64_t x = bits >= 63 ? (int64_t)(ts_rand() >> 1) : (int64_t)(ts_rand() >> (64 - bits));
		if (ts_rand() % 100 < 5)
			x = -x - (int64_t)(ts_rand() & 1);
		v[i] = x;
	}
}

/* Encode v with impl and the reference; compare; then decode both ways. */
static int ts_check_values(const struct apc_packed_impl *im, const int64_t *v, size_t n)
{
	uint8_t *ref = malloc(n * APC_PACKED64_MAX + 1), *got = malloc(n * APC_PACKED64_MAX + 1);
	int64_t *back = malloc((n + 1) * sizeof *back), *rback = malloc((n + 1) * sizeof *rback);
	size_t rlen, glen, used = 0, rused = 0, k, rk;
	int bad = 0;

	if (!ref || !got || !back || !rback) {
		T_FAIL("out of memory");
		bad = 1;
		goto out;
	}
	rlen = apc_pack64_array_scalar(ref, v, n);
	glen = im->pack(got, v, n);
	if (glen != rlen || memcmp(got, ref, rlen) != 0) {
		T_FAIL("%s: encoding of %zu values differs from the reference", im->name, n);
		bad = 1;
	}
	k = im->unpack(ref, rlen, back, n, &used);
	rk = apc_unpack64_array_scalar(ref, rlen, rback, n, &rused);
	if (k != rk || used != rused || k != n || memcmp(back, v, n * sizeof *v) != 0) {
		T_FAIL("%s: decoding %zu values gave %zu (used %zu of %zu)", im->name, n, k, used, rlen);
		bad = 1;
	}
out:
	free(ref);
	free(got);
	free(back);
	free(rback);
	return bad;
}

/* Decode in[0..len) asking for `count`: same count, used and values. */
static int ts_check_bytes(const struct apc_packed_impl *im, const uint8_t *in, size_t len, size_t count)
{
	int64_t a[256], b[256];
	size_t ua = 0, ub = 0, ka, kb;

	if (count > 256)
		count = 256;
	ka = im->unpack(in, len, a, count, &ua);
	kb = apc_unpack64_array_scalar(in, len, b, count, &ub);
	if (ka != kb || ua != ub || memcmp(a, b, ka * sizeof *a) != 0) {
		T_FAIL("%s: on %zu bytes (count %zu) gave %zu values, %zu used; reference %zu, %zu",
		       im->name, len, count, ka, ua, kb, ub);
		return 1;
	}
	return 0;
}

static void ts_each(void (*fn)(const struct apc_packed_impl *))
{
	size_t n;
	const struct apc_packed_impl *im = apc_packed_impls(&n);
	unsigned f = ts_cpu();
	int ran = 0;

	for (size_t i = 1; i < n; i++) {
		if ((im[i].needs & f) != im[i].needs) {
			printf("# skip variant %s: this CPU lacks it\n", im[i].name);
			continue;
		}
		fn(&im[i]);
		ran++;
	}
	if (!ran)
		T_SKIP("no fast variant runs on this CPU");
}

static void edges_one(const struct apc_packed_impl *im)
{
	int64_t e[80], v[4096];
	size_t n = ts_edges(e);

	/* alone, and at every offset of a run (vector lanes and tails) */
	for (size_t i = 0; i < n; i++)
		ts_check_values(im, &e[i], 1);
	ts_check_values(im, e, n);
	for (size_t i = 0; i < 4096; i++)
		v[i] = e[ts_rand() % n];
	ts_check_values(im, v, 4096);
}

static void every_count_one(const struct apc_packed_impl *im)
{
	int64_t v[64];

	/* 0..64 values: every tail length of 8-wide loops, several times */
	for (int rep = 0; rep < 20; rep++) {
		ts_fill(v, 64);
		for (size_t n = 0; n <= 64; n++)
			if (ts_check_values(im, v, n))
				return;
	}
}

static void random_one(const struct apc_packed_impl *im)
{
	size_t n = 100000;
	int64_t *v = malloc(n * sizeof *v);

	if (!v) {
		T_FAIL("out of memory");
		return;
	}
	ts_fill(v, n);
	ts_check_values(im, v, n);
	/* only short values, then only long ones (the two vector paths) */
	for (size_t i = 0; i < n; i++)
		v[i] = (int64_t)(ts_rand() >> (64 - 1 - (ts_rand() % 55))) * ((ts_rand() & 1) ? 1 : -1);
	ts_check_values(im, v, n);
	for (size_t i = 0; i < n; i++)
		v[i] = (int64_t)(ts_rand() | (1ULL << 62)) >> (ts_rand() & 1);
	ts_check_values(im, v, n);
	free(v);
}

static void truncated_one(const struct apc_packed_impl *im)
{
	int64_t v[40];
	uint8_t buf[40 * APC_PACKED64_MAX];
	size_t len;

	for (int rep = 0; rep < 20; rep++) {
		ts_fill(v, 40);
		len = apc_pack64_array_scalar(buf, v, 40);
		/* every prefix, asking for every value and for fewer */
		for (size_t cut = 0; cut <= len; cut++) {
			if (ts_check_bytes(im, buf, cut, 40) || ts_check_bytes(im, buf, cut, 3))
				return;
		}
	}
}

static void bad_input_one(const struct apc_packed_impl *im)
{
	uint8_t buf[64];

	/* overlong: 11 continuation bytes, then a terminator */
	memset(buf, 0x80, sizeof buf);
	buf[11] = 0;
	ts_check_bytes(im, buf, sizeof buf, 8);
	/* a bad 10th byte after valid values, every value of it */
	for (unsigned b9 = 0; b9 < 256; b9++) {
		buf[0] = 0x05;
		buf[1] = 0x7f;
		memset(buf + 2, 0xff, 9);
		buf[11] = (uint8_t)b9;
		memset(buf + 12, 0x01, sizeof buf - 12);
		ts_check_bytes(im, buf, sizeof buf, 40);
		ts_check_bytes(im, buf, 12, 40);
	}
	/* non-minimal encodings are accepted: 80 00, ff 7f, 80 80 80 00 */
	{
		static const uint8_t nm[] = {0x80, 0x00, 0xff, 0x7f, 0x80, 0x80, 0x80, 0x00, 0x3f, 0x40,
					     0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0x01};
		ts_check_bytes(im, nm, sizeof nm, 20);
	}
	/* random bytes, biased towards continuation bits */
	for (int rep = 0; rep < 3000; rep++) {
		for (size_t i = 0; i < sizeof buf; i++) {
			uint64_t r = ts_rand();
			buf[i] = (uint8_t)(r % 4 ? (r >> 8) | 0x80 : r >> 8);
		}
		if (ts_check_bytes(im, buf, (size_t)(ts_rand() % (sizeof buf + 1)), 1 + ts_rand() % 40))
			return;
	}
}

/* 2^k - 1, 2^k, 2^k + 1 and their negations (and -x - 1) for every k
 * (63 * 9 + 3 values):
 * every sign boundary (63/64, -64/-65, ...) around every 7-bit group. */
static size_t ts_bounds(int64_t *v)
{
	size_t n = 0;

	for (unsigned k = 0; k < 63; k++) {
		int64_t p = (int64_t)1 << k;
		const int64_t c[3] = {p - 1, p, p + 1};
		for (int j = 0; j < 3; j++) {
			v[n++] = c[j];
			v[n++] = -c[j];
			v[n++] = -c[j] - 1;
		}
	}
	v[n++] = INT64_MAX;
	v[n++] = INT64_MIN;
	v[n++] = INT64_MIN + 1;
	return n;
}

static void bounds_one(const struct apc_packed_impl *im)
{
	int64_t b[63 * 9 + 3], v[3000];
	size_t n = ts_bounds(b);

	for (size_t i = 0; i < n; i++)
		if (ts_check_values(im, &b[i], 1))
			return;
	ts_check_values(im, b, n);
	/* mostly short values with boundary values dropped in: the 16-wide
	 * steps run, then fall back, at every offset */
	for (int rep = 0; rep < 20; rep++) {
		for (size_t i = 0; i < 3000; i++)
			v[i] = ts_rand() % 8 ? (int64_t)(ts_rand() >> 40) - (1 << 23) : b[ts_rand() % n];
		if (ts_check_values(im, v, 3000))
			return;
	}
}

/* Short values (1-4 bytes, 16 to a window) with a long or bad value at
 * every position of a long input: the vector decoders see it in every
 * lane of both halves and must stop exactly where the reference does. */
static void bad_in_long_one(const struct apc_packed_impl *im)
{
	enum { NV = 120 };
	int64_t v[NV];
	uint8_t buf[NV * APC_PACKED64_MAX + 16], bad[NV * APC_PACKED64_MAX + 32];
	size_t len, offs[NV + 1];

	for (size_t i = 0; i < NV; i++)
		v[i] = (int64_t)(ts_rand() >> (64 - 1 - ts_rand() % 27)) * (ts_rand() % 20 ? 1 : -1);
	len = 0;
	for (size_t i = 0; i < NV; i++) {
		offs[i] = len;
		len += apc_pack64(buf + len, v[i]);
	}
	offs[NV] = len;
	for (size_t at = 0; at < NV; at++) {
		static const uint8_t insert[][12] = {
			/* 11 continuation bytes: overlong */
			{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x81, 0x00},
			/* 10 bytes with a bad 10th (02) */
			{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02},
			/* 10 bytes, good (INT64_MIN), and 9 bytes, good */
			{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f},
			{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x3f},
		};
		static const size_t ilen[] = {12, 10, 10, 9};
		for (size_t k = 0; k < 4; k++) {
			size_t o = offs[at], blen = o + ilen[k] + (len - o);
			memcpy(bad, buf, o);
			memcpy(bad + o, insert[k], ilen[k]);
			memcpy(bad + o + ilen[k], buf + o, len - o);
			if (ts_check_bytes(im, bad, blen, 256) || ts_check_bytes(im, bad, blen, at + 1) ||
			    ts_check_bytes(im, bad, o + ilen[k] - 1, 256))
				return;
		}
	}
	/* and every prefix of the clean input, asking for all or 17 values */
	for (size_t cut = 0; cut <= len; cut++)
		if (ts_check_bytes(im, buf, cut, 256) || ts_check_bytes(im, buf, cut, 17))
			return;
}

/*
 * Input that ends at a page edge with an unmapped page after it: a
 * decoder that reads a byte past in + len faults here (and ASan would
 * flag it in any buffer).  Encoded output likewise ends at the edge.
 */
static void page_edge_one(const struct apc_packed_impl *im)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *map = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int64_t v[300], back[300];
	uint8_t enc[300 * APC_PACKED64_MAX];

	/* 10 % of the values 9-10 bytes long, in runs and alone */
	size_t len, used;

	if (map == MAP_FAILED || mprotect(map + pg, pg, PROT_NONE) != 0) {
		T_SKIP("cannot map a guard page");
	}
	for (size_t i = 0; i < 300; i++)
		v[i] = (i >= 240 && i < 280) || ts_rand() % 10 == 0 ? (int64_t)ts_rand()
								      : (int64_t)(ts_rand() >> 45) - (1 << 18);
	len = apc_pack64_array_scalar(enc, v, 300);
	/* every tail length, so the last window ends at the edge in every way */
	for (size_t tail = 0; tail <= len && tail <= 700; tail++) {
		uint8_t *p = map + pg - tail;
		memcpy(p, enc + len - tail, tail);
		if (ts_check_bytes(im, p, tail, 256))
			break;
		/* the same bytes with the last one's stop bit set: truncated */
		if (tail) {
			p[tail - 1] |= 0x80;
			if (ts_check_bytes(im, p, tail, 256))
				break;
		}
	}
	/* all 300 values, input ending exactly at the edge */
	if (len <= pg) {
		memcpy(map + pg - len, enc, len);
		T_EQ_INT(im->unpack(map + pg - len, len, back, 300, &used), 300);
		T_EQ_INT(used, len);
		T_EQ_MEM(back, v, sizeof v);
	}
	/* encoder room ending at the edge: n * 10 bytes and not one more,
	 * for the mix above and for 10-byte values only (output as long as
	 * the room, where a store past it would show) */
	for (int all_long = 0; all_long < 2; all_long++) {
		if (all_long)
			for (size_t i = 0; i < 300; i++)
				v[i] = (int64_t)(ts_rand() | 1ULL << 62) >> (ts_rand() & 1);
		for (size_t n = 1; n <= 120; n++) {
			uint8_t *o = map + pg - n * APC_PACKED64_MAX;
			size_t k = im->pack(o, v + 300 - n, n);
			size_t r = apc_pack64_array_scalar(enc, v + 300 - n, n);
			if (k != r || memcmp(o, enc, r) != 0) {
				T_FAIL("%s: encoding %zu values ending at a page edge differs", im->name, n);
				break;
			}
		}
	}
	munmap(map, 2 * pg);
}

static void edges(void) { ts_each(edges_one); }
static void bounds(void) { ts_each(bounds_one); }
static void bad_in_long(void) { ts_each(bad_in_long_one); }
static void page_edge(void) { ts_each(page_edge_one); }
static void every_count(void) { ts_each(every_count_one); }
static void random_values(void) { ts_each(random_one); }
static void truncated(void) { ts_each(truncated_one); }
static void bad_input(void) { ts_each(bad_input_one); }

/* The single-value writer helper equals apc_pack64() on every edge and at random. */
static void pack_wide(void)
{
	int64_t e[80];
	size_t n = ts_edges(e);
	uint8_t a[16], b[16];

	for (size_t i = 0; i < n + 100000; i++) {
		int64_t v;
		size_t ka, kb;
		if (i < n) {
			v = e[i];
		} else {
			ts_fill(&v, 1);
		}
		ka = apc_pack64(a, v);
		kb = apc_pack64_wide(b, v);
		if (ka != kb || memcmp(a, b, ka) != 0) {
			T_FAIL("apc_pack64_wide(%" PRId64 ") differs from apc_pack64()", v);
			return;
		}
	}
}

/* APC_NO_SIMD=1 turns every fast path off; unset or "0" leaves them on. */
static void no_simd_env(void)
{
	const char *old = getenv("APC_NO_SIMD");
	char *keep = old ? strdup(old) : NULL;

	setenv("APC_NO_SIMD", "1", 1);
	apc_cpu_reset();
	T_EQ_INT(apc_cpu_scalar_forced(), 1);
	T_EQ_INT(apc_cpu_features(), 0);
	setenv("APC_NO_SIMD", "0", 1);
	apc_cpu_reset();
	T_EQ_INT(apc_cpu_scalar_forced(), 0);
	T_ASSERT(apc_cpu_features() & APC_CPU_FAST);
	unsetenv("APC_NO_SIMD");
	apc_cpu_reset();
	T_ASSERT(apc_cpu_features() & APC_CPU_FAST);
	if (keep)
		setenv("APC_NO_SIMD", keep, 1);
	free(keep);
	apc_cpu_reset();
}

/* The batch entry points equal the reference, whichever variant they chose. */
static void batch_entry(void)
{
	size_t n;
	const struct apc_packed_impl *im = apc_packed_impls(&n);
	struct apc_packed_impl batch = {"batch", 0, apc_pack64_array, apc_unpack64_array};
	int64_t v[3000];

	T_EQ_STR(im[0].name, "scalar");
	T_ASSERT(apc_packed_impl_name() != NULL);
	ts_fill(v, 3000);
	ts_check_values(&batch, v, 3000);
}

/*
 * The variants this target must have compiled in: a missing one means a
 * preprocessor test went wrong and its differential tests never ran
 * (make check-cross runs this file for aarch64 under qemu-user).
 */
static void variants_built(void)
{
	size_t n;
	const struct apc_packed_impl *im = apc_packed_impls(&n);
	const char *want = NULL;
	int found = 0;

#if defined(__aarch64__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	want = "neon";
#elif defined(__x86_64__)
	want = "portable";
#endif
	printf("# variants:");
	for (size_t i = 0; i < n; i++) {
		printf(" %s", im[i].name);
		if (want && strcmp(im[i].name, want) == 0)
			found = 1;
	}
	printf("; in use: %s\n", apc_packed_impl_name());
	if (!want)
		T_SKIP("no variant is expected on this target beyond the reference");
	if (!found)
		T_FAIL("variant %s is not compiled in", want);
}

void run_tests(void)
{
	T_RUN(variants_built);
	T_RUN(edges);
	T_RUN(every_count);
	T_RUN(random_values);
	T_RUN(truncated);
	T_RUN(bad_input);
	T_RUN(bounds);
	T_RUN(bad_in_long);
	T_RUN(page_edge);
	T_RUN(pack_wide);
	T_RUN(no_simd_env);
	T_RUN(batch_entry);
}
