/*
 * packbench - throughput of packed-integer encode and decode.
 *
 * For the value mix of real captures (timestamp deltas of 1-4 bytes,
 * counter values of 1-3 bytes, 5% negative, runs of 9-10 byte values),
 * the values per second of the scalar reference, of every fast variant
 * this CPU runs, and of the batch entry points (the variant chosen at
 * run time; APC_NO_SIMD=1 makes that the reference).  All measured in
 * this run, so the ratios hold on a noisy machine.  Median of --runs
 * runs.  Each run codes --values values (default 64 Ki, about what a
 * frame holds, so the data stays in cache as in the writer) --reps
 * times (default 64).  Output: one line per variant, then "packed encode"/"packed
 * decode" lines that scripts/bench.sh reads.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The value mix described in the performance issue. */
static void pb_fill(int64_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t r = pb_rand();
		int64_t x;
		unsigned kind = (unsigned)(r % 100);
		unsigned bytes;
		if (kind < 45)      /* timestamp delta, 1-4 bytes */
			bytes = 1 + (unsigned)((r >> 8) % 4);
		else if (kind < 90) /* counter value, 1-3 bytes */
			bytes = 1 + (unsigned)((r >> 8) % 3);
		else                /* long run: 9-10 bytes */
			bytes = 9 + (unsigned)((r >> 8) % 2);
		/* A value of 7*bytes-1 magnitude bits packs into `bytes` bytes. */
		x = bytes >= 10 ? (int64_t)(pb_rand() >> 1) : (int64_t)(pb_rand() >> (64 - (7 * bytes - 1)));
		if ((r >> 20) % 100 < 5)
			x = -x;
		v[i] = x;
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

/* Median values/s of encode (enc) and decode (dec); 1 on a wrong result. */
static int pb_reps = 64;

static int pb_measure(const struct pb_fns *f, const int64_t *v, int64_t *back, uint8_t *buf,
		      const uint8_t *ref, size_t reflen, size_t n, int runs, double *enc, double *dec)
{
	double te[32], td[32];
	size_t used = 0, len = 0, got = 0;

	for (int r = 0; r < runs; r++) {
		double t = apc_now();
		for (int k = 0; k < pb_reps; k++)
			len = f->pack(buf, v, n);
		te[r] = (double)n * pb_reps / (apc_now() - t);
		if (len != reflen || memcmp(buf, ref, len) != 0)
			return 1;
		t = apc_now();
		for (int k = 0; k < pb_reps; k++)
			got = f->unpack(buf, len, back, n, &used);
		td[r] = (double)n * pb_reps / (apc_now() - t);
		if (got != n)
			return 1;
		if (used != len || memcmp(back, v, n * sizeof *v) != 0)
			return 1;
	}
	*enc = pb_median(te, runs);
	*dec = pb_median(td, runs);
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
	struct pb_fns f;

	for (int i = 1; i < argc; i++) {
		if (strncmp(argv[i], "--runs=", 7) == 0)
			runs = atoi(argv[i] + 7);
		else if (strncmp(argv[i], "--values=", 9) == 0)
			n = (size_t)strtoull(argv[i] + 9, NULL, 10);
		else if (strncmp(argv[i], "--reps=", 7) == 0)
			pb_reps = atoi(argv[i] + 7);
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
	for (size_t k = 0; k < nimpl; k++) {
		double e, d;
		if ((im[k].needs & feat) != im[k].needs)
			continue;
		f.pack = im[k].pack;
		f.unpack = im[k].unpack;
		if (pb_measure(&f, v, back, buf, ref, reflen, n, runs, &e, &d)) {
			fprintf(stderr, "packbench: variant %s disagrees with the reference\n", im[k].name);
			return 1;
		}
		printf("variant %-9s encode %.3f G values/s  decode %.3f G values/s\n", im[k].name, e / 1e9, d / 1e9);
		if (k == 0) {
			enc_ref = e;
			dec_ref = d;
		}
	}
	f.pack = apc_pack64_array;
	f.unpack = apc_unpack64_array;
	if (pb_measure(&f, v, back, buf, ref, reflen, n, runs, &enc_bat, &dec_bat)) {
		fprintf(stderr, "packbench: batch entry points disagree with the reference\n");
		return 1;
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
