/*
 * t.c - the unit-test harness's runner and main().
 */
#include <stdlib.h>
#include <sys/stat.h>

#include "t.h"

int t_failed_now;
int t_passed, t_failed, t_skipped;
const char *t_skip_reason;

void t_run(const char *name, void (*fn)(void))
{
	t_failed_now = 0;
	t_skip_reason = NULL;
	fn();
	if (t_failed_now) {
		printf("not ok - %s\n", name);
		t_failed++;
	} else if (t_skip_reason) {
		printf("ok - %s # skip %s\n", name, t_skip_reason);
		t_skipped++;
	} else {
		printf("ok - %s\n", name);
		t_passed++;
	}
	fflush(stdout);
}

const char *t_shared_testdata(void)
{
	static const char *const candidates[] = {"../shared/testdata", NULL};
	const char *env = getenv("APC_SHARED_TESTDATA");
	struct stat st;

	if (env && stat(env, &st) == 0 && S_ISDIR(st.st_mode))
		return env;
	for (int i = 0; candidates[i]; i++)
		if (stat(candidates[i], &st) == 0 && S_ISDIR(st.st_mode))
			return candidates[i];
	return NULL;
}

const char *t_testdata(void)
{
	const char *env = getenv("APC_TESTDATA");
	return env ? env : "testdata";
}

void *t_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *p = NULL;
	long n;

	*len = 0;
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (p = malloc((size_t)n + 1)) && fread(p, 1, (size_t)n, f) == (size_t)n) {
		p[n] = 0;
		*len = (size_t)n;
	} else {
		free(p);
		p = NULL;
	}
	fclose(f);
	return p;
}

int main(void)
{
	run_tests();
	printf("%d passed, %d failed, %d skipped\n", t_passed, t_failed, t_skipped);
	return t_failed ? 1 : 0;
}

uint64_t t_rand(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 2685821657736338717ull;
}
