/*
 * packbench - throughput of packed-integer encode and decode.
 *
 * For the value mix of the performance issue (printed on the first
 * line: timestamp deltas of 1-4 bytes, counter values of 1-3 bytes, 5 %
 * negative, runs of 9-10 byte values; --long=scattered spreads those one
 * by one instead), the values per second of the scalar reference, of
 * every fast variant this CPU runs, of a plain byte-at-a-time loop (the
 * issue's yardstick) and of the batch entry points (the variant chosen
 * at run time; APC_NO_SIMD=1 makes that the reference).  All measured
 * in this run, taking turns, by thread CPU time, so the ratios hold on
 * a shared, noisy machine.  Median of --runs runs.  Each run codes
 * --values values (default 64 Ki, about what a frame holds, so the data
 * stays in cache as in the writer) --reps times (default 64).  Every
 * variant's output is checked against the reference.  Output: "variant"
 * lines, then "packed encode"/"packed decode" lines; scripts/bench.sh
 * reads the "variant" lines.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu.h"
#include "packed.h"
#include "util.h"

static uint64_t pb_state = 0x2545f4914f6cdd1dULL;
static uint64_t pb_rand(void)
{
	pb_state ^= pb_state >> 12;
	pb_state ^= pb_state << 25;
	pb_state ^= pb_state >> 27;
	return pb_state * 2685821657736338717ULL;
}

/*
 * The value mix of the performance issue: 90 % of the values are
 * timestamp deltas of 1-4 bytes or counter values of 1-3 bytes (half
 * each, lengths uniform), 5 % of all values negative; the other 10 %
 * are 9-10 byte values, in runs of 8-56 (whole 64-bit values such as
 * absolute times or addresses come in bursts).  --long=scattered puts
 * them one at a time instead, the worst case for the vector paths.
 */
static int pb_scattered;

static int64_t pb_value(unsigned bytes)
{
	/* A value of 7*bytes-1 magnitude bits packs into `bytes` bytes. */
	int64_t x = bytes >= 10 ? (int64_t)(pb_rand() >> 1) : (int64_t)(pb_rand() >> (64 - (7 * bytes - 1)));

	if (bytes == 9) /* at least 55 bits, else it would be shorter */
		x |= (int64_t)1 << 55;
	if (bytes == 10)
		x |= (int64_t)1 << 62;
	if (pb_rand() % 100 < 5)
		x = -x - 1;
	return x;
}

static void pb_fill(int64_t *v, size_t n)
{
	size_t run = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t r = pb_rand();
		unsigned bytes;

		if (!pb_scattered && !run && r % 320 == 0)
			run = 8 + (size_t)((r >> 16) % 49); /* mean 32: 10 % of values */
		if (run) {
			run--;
			bytes = 9 + (unsigned)((r >> 8) % 2);
		} else if (pb_scattered && r % 10 == 0) {
			bytes = 9 + (unsigned)((r >> 8) % 2);
		} else if ((r >> 40) % 2 == 0) { /* timestamp delta, 1-4 bytes */
			bytes = 1 + (unsigned)((r >> 8) % 4);
		} else {                          /* counter value, 1-3 bytes */
			bytes = 1 + (unsigned)((r >> 8) % 3);
		}
		v[i] = pb_value(bytes);
	}
}

static int pb_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double pb_median(double *t, int n)
{
	qsort(t, (size_t)n, sizeof *t, pb_cmp);
	return t[n / 2];
}

struct pb_fns {
	size_t (*pack)(uint8_t *out, const int64_t *v, size_t count);
	size_t (*unpack)(const uint8_t *in, size_t len, int64_t *out, size_t count, size_t *used);
};

/*
 * The yardstick the performance issue quotes ("a byte-at-a-time loop"):
 * the plainest loops that are still fast, one byte per iteration with
 * no length checks beyond the end of input.  Timed in the same run, so
 * the figures above can be read against how fast this machine is now.
 */
static size_t pb_byte_pack(uint8_t *out, const int64_t *v, size_t count)
{
	uint8_t *p = out;

	for (size_t i = 0; i < count; i++) {
		int64_t x = v[i];
		while ((uint64_t)x + 64 >= 128) { /* not in -64..63 */
			*p++ = (uint8_t)(x | 0x80);
			x >>= 7;
		}
		*p++ = (uint8_t)(x & 0x7f);
	}
	return (size_t)(p - out);
}

static size_t pb_byte_unpack(const uint8_t *in, size_t len, int64_t *out, size_t count, size_t *used)
{
	size_t pos = 0, i;

	for (i = 0; i < count && pos < len; i++) {
		uint64_t r = 0;
		unsigned sh = 0;
		uint8_t b;
		do {
			b = in[pos++];
			r |= (uint64_t)(b & 0x7f) << (sh & 63);
			sh += 7;
		} while ((b & 0x80) && pos < len);
		if (sh < 64 && (b & 0x40))
			r |= ~0ULL << sh;
		out[i] = (int64_t)r;
	}
	*used = pos;
	return i;
}

static int pb_reps = 64;

/*
 * CPU time of this thread: other engineers' jobs on the same two cores
 * deschedule us for whole time slices, and wall-clock time would count
 * those against whichever variant was running.
 */
static double pb_now(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return apc_now();
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * One timed sample of f: values/s of encode (*enc) and decode (*dec),
 * pb_reps passes over the same n values each; 1 on a wrong result.
 */
static int pb_sample(const struct pb_fns *f, const int64_t *v, int64_t *back, uint8_t *buf,
		     const uint8_t *ref, size_t reflen, size_t n, double *enc, double *dec)
{
	size_t used = 0, len = 0, got = 0;
	double t = pb_now();

	for (int k = 0; k < pb_reps; k++)
		len = f->pack(buf, v, n);
	*enc = (double)n * pb_reps / (pb_now() - t);
	if (len != reflen || memcmp(buf, ref, len) != 0)
		return 1;
	t = pb_now();
	for (int k = 0; k < pb_reps; k++)
		got = f->unpack(buf, len, back, n, &used);
	*dec = (double)n * pb_reps / (pb_now() - t);
	if (got != n || used != len || memcmp(back, v, n * sizeof *v) != 0)
		return 1;
	return 0;
}

int main(int argc, char **argv)
{
	size_t n = 64u << 10, nimpl, reflen = 0;
	int runs = 5;
	int64_t *v, *back;
	uint8_t *buf, *ref;
	double enc_ref = 0, dec_ref = 0, enc_bat = 0, dec_bat = 0;
	const struct apc_packed_impl *im = apc_packed_impls(&nimpl);
	unsigned feat;

	for (int i = 1; i < argc; i++) {
		if (strncmp(argv[i], "--runs=", 7) == 0)
			runs = atoi(argv[i] + 7);
		else if (strncmp(argv[i], "--values=", 9) == 0)
			n = (size_t)strtoull(argv[i] + 9, NULL, 10);
		else if (strncmp(argv[i], "--reps=", 7) == 0)
			pb_reps = atoi(argv[i] + 7);
		else if (strcmp(argv[i], "--long=scattered") == 0)
			pb_scattered = 1;
	}
	if (pb_reps < 1)
		pb_reps = 1;
	if (runs < 1 || runs > 32)
		runs = 5;
	if (n < 1)
		n = 1;
	v = malloc(n * sizeof *v);
	back = malloc(n * sizeof *back);
	buf = malloc(n * APC_PACKED64_MAX);
	ref = malloc(n * APC_PACKED64_MAX);
	if (!v || !back || !buf || !ref)
		return 2;
	pb_fill(v, n);
	for (size_t i = 0; i < n; i++)
		reflen += apc_pack64(ref + reflen, v[i]);
	{
		size_t hist[11] = {0}, neg = 0;
		for (size_t i = 0; i < n; i++) {
			hist[apc_packed_size64(v[i])]++;
			neg += v[i] < 0;
		}
		printf("mix: %zu values x %d reps, %.2f bytes/value, %.1f %% negative, by length 1-10:",
		       n, pb_reps, (double)reflen / (double)n, 100.0 * (double)neg / (double)n);
		for (int b = 1; b <= 10; b++)
			printf(" %.1f", 100.0 * (double)hist[b] / (double)n);
		printf(" %%; 9-10 byte values %s\n", pb_scattered ? "scattered one by one" : "in runs of 8-56");
		printf("timing: thread CPU time, median of %d runs, variants interleaved\n", runs);
	}
	memset(buf, 0, n * APC_PACKED64_MAX); /* fault the pages in before timing */
	/* Which variants to show: by the CPU, ignoring APC_NO_SIMD. */
	feat = apc_cpu_features();
	if (!feat) {
		apc_cpu_reset();
		setenv("APC_NO_SIMD", "0", 1);
		unsigned all = apc_cpu_features();
		setenv("APC_NO_SIMD", "1", 1);
		apc_cpu_reset();
		feat = all;
	}
	/*
	 * The variants take turns within each run (the batch entry points
	 * last), so a burst of load from other processes hits them all
	 * alike; each figure is the median of its runs.
	 */
	{
		struct pb_fns fns[18];
		const char *names[18];
		double te[18][32], td[18][32];
		size_t nf = 0;

		for (size_t k = 0; k < nimpl && nf < 15; k++) {
			if ((im[k].needs & feat) != im[k].needs)
				continue;
			fns[nf].pack = im[k].pack;
			fns[nf].unpack = im[k].unpack;
			names[nf++] = im[k].name;
		}
		fns[nf].pack = pb_byte_pack;
		fns[nf].unpack = pb_byte_unpack;
		names[nf++] = "byteloop";
		fns[nf].pack = apc_pack64_array;
		fns[nf].unpack = apc_unpack64_array;
		names[nf++] = "batch";
		for (int r = 0; r < runs; r++)
			for (size_t k = 0; k < nf; k++)
				if (pb_sample(&fns[k], v, back, buf, ref, reflen, n, &te[k][r], &td[k][r])) {
					fprintf(stderr, "packbench: %s disagrees with the reference\n", names[k]);
					return 1;
				}
		for (size_t k = 0; k < nf; k++) {
			double e = pb_median(te[k], runs), d = pb_median(td[k], runs);
			if (k + 1 == nf) {
				enc_bat = e;
				dec_bat = d;
				break;
			}
			if (k + 2 == nf) {
				printf("calibration byteloop encode %.3f G values/s  decode %.3f G values/s"
				       "  (plain byte-at-a-time loops; the issue quotes 0.13-0.15 for this machine)\n",
				       e / 1e9, d / 1e9);
				continue;
			}
			printf("variant %-9s encode %.3f G values/s  decode %.3f G values/s\n", names[k], e / 1e9,
			       d / 1e9);
			if (k == 0) {
				enc_ref = e;
				dec_ref = d;
			}
		}
	}
	printf("packed encode  batch %.3f G values/s  scalar %.3f G values/s  ratio %.2f  (%.2f bytes/value, %s)\n",
	       enc_bat / 1e9, enc_ref / 1e9, enc_bat / enc_ref, (double)reflen / (double)n, apc_packed_impl_name());
	printf("packed decode  batch %.3f G values/s  scalar %.3f G values/s  ratio %.2f\n",
	       dec_bat / 1e9, dec_ref / 1e9, dec_bat / dec_ref);
	free(v);
	free(back);
	free(buf);
	free(ref);
	return 0;
}
