/*
 * packbench - throughput of packed-integer encode and decode.
 *
 * Prints, for the value mix of real captures (timestamp deltas of 1-4
 * bytes, counter values of 1-3 bytes, 5% negative, runs of 9-10 byte
 * values), the values per second of the scalar reference and of the
 * batch entry points, and their ratio: both measured in this run, so the
 * ratio holds on a noisy machine.  Median of --runs runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int main(int argc, char **argv)
{
	size_t n = 4u << 20;
	int runs = 5;
	int64_t *v, *back;
	uint8_t *buf;
	double enc_ref[32], enc_bat[32], dec_ref[32], dec_bat[32];
	size_t len = 0, used;

	for (int i = 1; i < argc; i++) {
		if (strncmp(argv[i], "--runs=", 7) == 0)
			runs = atoi(argv[i] + 7);
		else if (strncmp(argv[i], "--values=", 9) == 0)
			n = (size_t)strtoull(argv[i] + 9, NULL, 10);
	}
	if (runs < 1 || runs > 32)
		runs = 5;
	v = malloc(n * sizeof *v);
	back = malloc(n * sizeof *back);
	buf = malloc(n * APC_PACKED64_MAX);
	if (!v || !back || !buf)
		return 2;
	pb_fill(v, n);
	for (int r = 0; r < runs; r++) {
		double t = apc_now();
		len = 0;
		for (size_t i = 0; i < n; i++)
			len += apc_pack64(buf + len, v[i]);
		enc_ref[r] = (double)n / (apc_now() - t);
		t = apc_now();
		len = apc_pack64_array(buf, v, n);
		enc_bat[r] = (double)n / (apc_now() - t);
		t = apc_now();
		size_t pos = 0;
		for (size_t i = 0; i < n; i++)
			pos += (size_t)apc_unpack64(buf + pos, len - pos, &back[i]);
		dec_ref[r] = (double)n / (apc_now() - t);
		t = apc_now();
		if (apc_unpack64_array(buf, len, back, n, &used) != n || memcmp(back, v, n * sizeof *v)) {
			fprintf(stderr, "packbench: batch decode disagrees with the input\n");
			return 1;
		}
		dec_bat[r] = (double)n / (apc_now() - t);
	}
	printf("packed encode  batch %.3f G values/s  scalar %.3f G values/s  ratio %.2f  (%.2f bytes/value)\n",
	       pb_median(enc_bat, runs) / 1e9, pb_median(enc_ref, runs) / 1e9,
	       pb_median(enc_bat, runs) / pb_median(enc_ref, runs), (double)len / (double)n);
	printf("packed decode  batch %.3f G values/s  scalar %.3f G values/s  ratio %.2f\n",
	       pb_median(dec_bat, runs) / 1e9, pb_median(dec_ref, runs) / 1e9,
	       pb_median(dec_bat, runs) / pb_median(dec_ref, runs));
	free(v);
	free(back);
	free(buf);
	return 0;
}
