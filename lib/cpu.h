/*
 * cpu.h - which instruction-set extensions the fast paths may use.
 *
 * Checked once (cached); the environment variable APC_NO_SIMD=1 forces
 * the scalar reference paths everywhere, so a run can be compared with
 * (and benchmarked against) the plain code.
 */
#ifndef APC_CPU_H
#define APC_CPU_H

#define APC_CPU_BMI2 0x1u    /* x86 pdep/pext */
#define APC_CPU_AVX2 0x2u
#define APC_CPU_AVX512 0x4u  /* F, BW, CD, VL and VBMI2 (byte compress) */
#define APC_CPU_NEON 0x8u    /* aarch64 Advanced SIMD */
#define APC_CPU_AVX512VBMI 0x10u /* vpermb, vpmultishiftqb (every VBMI2 CPU has it) */
#define APC_CPU_FAST 0x100u  /* branch-reduced portable code allowed */

/*
 * apc_cpu_features() : APC_CPU_* bits usable on this machine; 0 when
 * APC_NO_SIMD is set to anything but "0" or "".  Thread-safe enough:
 * concurrent first calls compute the same value.
 */
unsigned apc_cpu_features(void);

/* apc_cpu_scalar_forced() : 1 if APC_NO_SIMD asks for the reference paths. */
int apc_cpu_scalar_forced(void);

/* apc_cpu_reset() : forget the cached answer (tests change the env). */
void apc_cpu_reset(void);

#endif
