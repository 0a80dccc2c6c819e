/*
 * test_owrite.c - lib/owrite.h, the data file's writes on a helper
 * thread: bytes land in order whatever mix of buffer submits and direct
 * writes, with and without the thread (APC_NO_THREADS=1), and a failed
 * write is reported by the next call that waits, then by every call.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include "owrite.h"
#include "t.h"

static uint64_t rng_state = 0x243f6a8885a308d3ull;

static uint32_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t)((rng_state * 0x2545f4914f6cdd1dull) >> 32);
}

/* CPUs this process may run on: with one, writes stay synchronous. */
static int ncpus(void)
{
	cpu_set_t s;

	return sched_getaffinity(0, sizeof s, &s) == 0 ? CPU_COUNT(&s) : 1;
}

/* Write a few MiB through an owrite as random submits and direct writes
 * and check the file holds exactly the bytes in order. */
static void roundtrip(int threads)
{
	char path[] = "/tmp/apc-owrite-XXXXXX";
	int fd = mkstemp(path);
	const size_t bufsz = 4096, total = 3u << 20;
	uint8_t *want = malloc(total), *got = malloc(total + 1);
	size_t at = 0;
	struct apc_owrite *o;

	T_ASSERT(fd >= 0 && want && got);
	if (fd < 0 || !want || !got)
		goto out;
	for (size_t i = 0; i < total; i++)
		want[i] = (uint8_t)rng();
	setenv("APC_NO_THREADS", threads ? "0" : "1", 1);
	o = apc_owrite_new(fd, bufsz);
	unsetenv("APC_NO_THREADS");
	T_ASSERT(o != NULL);
	if (!o)
		goto out;
	T_EQ_INT(apc_owrite_threaded(o), threads && ncpus() > 1);
	while (at < total) {
		size_t n = rng() % (bufsz + 1), left = total - at;
		if (n > left)
			n = left;
		if (rng() % 8 == 0) {
			/* a piece bigger than a buffer goes straight out */
			n = bufsz + rng() % (3 * bufsz);
			if (n > left)
				n = left;
			T_EQ_INT(apc_owrite_direct(o, want + at, n), 0);
		} else {
			memcpy(apc_owrite_buf(o), want + at, n);
			T_EQ_INT(apc_owrite_submit(o, n), 0);
		}
		at += n;
	}
	T_EQ_INT(apc_owrite_drain(o), 0);
	apc_owrite_free(o);
	T_EQ_U64(lseek(fd, 0, SEEK_END), total);
	T_EQ_INT(pread(fd, got, total + 1, 0), (long long)total);
	T_EQ_MEM(got, want, total);
out:
	if (fd >= 0)
		close(fd);
	unlink(path);
	free(want);
	free(got);
}

static void test_roundtrip_threaded(void)
{
	roundtrip(1);
}

static void test_roundtrip_synchronous(void)
{
	roundtrip(0);
}

/* /dev/full refuses every write with ENOSPC: the failure surfaces at the
 * latest at drain, and sticks. */
static void full_disk(int threads)
{
	int fd = open("/dev/full", O_WRONLY);
	struct apc_owrite *o;
	int rc;

	if (fd < 0)
		T_SKIP("no /dev/full");
	setenv("APC_NO_THREADS", threads ? "0" : "1", 1);
	o = apc_owrite_new(fd, 1024);
	unsetenv("APC_NO_THREADS");
	T_ASSERT(o != NULL);
	if (!o) {
		close(fd);
		return;
	}
	memset(apc_owrite_buf(o), 'x', 1024);
	rc = apc_owrite_submit(o, 1024);
	if (apc_owrite_threaded(o))
		T_EQ_INT(rc, 0); /* not written yet: the helper has it */
	else
		T_EQ_INT(rc, -1);
	errno = 0;
	T_EQ_INT(apc_owrite_drain(o), -1);
	T_EQ_INT(errno, ENOSPC);
	/* sticky: later calls fail the same way without writing */
	errno = 0;
	T_EQ_INT(apc_owrite_submit(o, 10), -1);
	T_EQ_INT(errno, ENOSPC);
	errno = 0;
	T_EQ_INT(apc_owrite_direct(o, "abc", 3), -1);
	T_EQ_INT(errno, ENOSPC);
	apc_owrite_free(o);
	close(fd);
}

static void test_full_disk_threaded(void)
{
	full_disk(1);
}

static void test_full_disk_synchronous(void)
{
	full_disk(0);
}

/* A bad descriptor fails with EBADF; a zero-length submit writes nothing
 * and succeeds. */
static void test_bad_fd_and_empty(void)
{
	struct apc_owrite *o = apc_owrite_new(-1, 64);

	T_ASSERT(o != NULL);
	if (!o)
		return;
	T_EQ_INT(apc_owrite_submit(o, 0), 0);
	T_EQ_INT(apc_owrite_drain(o), 0);
	T_EQ_INT(apc_owrite_submit(o, 5), 0 - !apc_owrite_threaded(o));
	errno = 0;
	T_EQ_INT(apc_owrite_drain(o), -1);
	T_EQ_INT(errno, EBADF);
	apc_owrite_free(o);
}

/* Freed with a write in flight and never drained: the helper finishes
 * it and stops (no leak, no use after free under ASan). */
static void test_free_in_flight(void)
{
	char path[] = "/tmp/apc-owrite-XXXXXX";
	int fd = mkstemp(path);
	struct apc_owrite *o = fd >= 0 ? apc_owrite_new(fd, 1 << 20) : NULL;

	T_ASSERT(o != NULL);
	if (o) {
		memset(apc_owrite_buf(o), 'y', 1 << 20);
		T_EQ_INT(apc_owrite_submit(o, 1 << 20), 0);
		apc_owrite_free(o);
		T_EQ_U64(lseek(fd, 0, SEEK_END), 1u << 20);
	}
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
}

void run_tests(void)
{
	T_RUN(test_roundtrip_threaded);
	T_RUN(test_roundtrip_synchronous);
	T_RUN(test_full_disk_threaded);
	T_RUN(test_full_disk_synchronous);
	T_RUN(test_bad_fd_and_empty);
	T_RUN(test_free_in_flight);
}
