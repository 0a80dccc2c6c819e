/*
 * t.h - a tiny unit-test harness.  Each test file defines
 * `void run_tests(void)` calling T_RUN(fn) for each test; a check that
 * fails marks the current test failed and prints where.  Output lines:
 * "ok - name" / "not ok - name", then "N passed, N failed", which
 * tests/run.sh adds up.
 */
#ifndef T_H
#define T_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

extern int t_failed_now;
extern int t_passed, t_failed, t_skipped;
extern const char *t_skip_reason;

void run_tests(void);

#define T_FAIL(...)                                                            \
	do {                                                                   \
		fprintf(stderr, "  %s:%d: ", __FILE__, __LINE__);              \
		fprintf(stderr, __VA_ARGS__);                                  \
		fputc('\n', stderr);                                           \
		t_failed_now = 1;                                              \
	} while (0)

#define T_ASSERT(c)                                                            \
	do {                                                                   \
		if (!(c))                                                      \
			T_FAIL("assertion failed: %s", #c);                    \
	} while (0)

#define T_EQ_INT(a, b)                                                         \
	do {                                                                   \
		long long t_a = (long long)(a), t_b = (long long)(b);          \
		if (t_a != t_b)                                                \
			T_FAIL("%s == %lld, expected %s == %lld", #a, t_a, #b, t_b); \
	} while (0)

#define T_EQ_U64(a, b)                                                         \
	do {                                                                   \
		unsigned long long t_a = (unsigned long long)(a),              \
				   t_b = (unsigned long long)(b);              \
		if (t_a != t_b)                                                \
			T_FAIL("%s == %llu (0x%llx), expected %llu (0x%llx)", #a, t_a, t_a, t_b, t_b); \
	} while (0)

#define T_EQ_STR(a, b)                                                         \
	do {                                                                   \
		const char *t_a = (a), *t_b = (b);                             \
		if (!t_a || !t_b || strcmp(t_a, t_b) != 0)                     \
			T_FAIL("%s == \"%s\", expected \"%s\"", #a, t_a ? t_a : "(null)", t_b ? t_b : "(null)"); \
	} while (0)

#define T_EQ_MEM(a, b, n)                                                      \
	do {                                                                   \
		if (memcmp((a), (b), (n)) != 0)                                \
			T_FAIL("%s differs from %s", #a, #b);                  \
	} while (0)

/* Skip the current test, visibly, e.g. when ../shared/testdata is absent. */
#define T_SKIP(why)                                                            \
	do {                                                                   \
		t_skip_reason = (why);                                         \
		return;                                                        \
	} while (0)

void t_run(const char *name, void (*fn)(void));
#define T_RUN(fn) t_run(#fn, fn)

/* Path of the shared real-file test data, or NULL if absent. */
const char *t_shared_testdata(void);
/* Path of the project's testdata/ folder. */
const char *t_testdata(void);

/* The whole of file `path`, malloc'd with a NUL after it so a text file
 * reads as a string; its length in *len (0 if it cannot be read, and
 * NULL is returned). */
void *t_read_file(const char *path, size_t *len);

/* xorshift64*: the next number from *state (not 0), so a test's data
 * comes out the same for the same seed. */
uint64_t t_rand(uint64_t *state);

#endif
