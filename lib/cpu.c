/*
 * cpu.c - cached CPU feature check for the fast paths (see cpu.h).
 */

#include "cpu.h"
#include "util.h"

static unsigned cpu_cached;
static int cpu_known;

int apc_cpu_scalar_forced(void)
{
	return apc_env_flag("APC_NO_SIMD");
}

static unsigned cpu_detect(void)
{
	unsigned f = APC_CPU_FAST;

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
	__builtin_cpu_init();
	if (__builtin_cpu_supports("bmi2"))
		f |= APC_CPU_BMI2;
	if (__builtin_cpu_supports("avx2"))
		f |= APC_CPU_AVX2;
	/* The encoder needs byte compress (VBMI2) and lzcnt on qwords (CD). */
	if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	    __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512vl") &&
	    __builtin_cpu_supports("avx512vbmi2"))
		f |= APC_CPU_AVX512;
	if (__builtin_cpu_supports("avx512vbmi"))
		f |= APC_CPU_AVX512VBMI;
#elif defined(__aarch64__)
	f |= APC_CPU_NEON; /* Advanced SIMD is mandatory on aarch64 */
#endif
	return f;
}

unsigned apc_cpu_features(void)
{
	if (!cpu_known) {
		cpu_cached = apc_cpu_scalar_forced() ? 0 : cpu_detect();
		cpu_known = 1;
	}
	return cpu_cached;
}

void apc_cpu_reset(void)
{
	cpu_known = 0;
}
