/*
 * report.h - apcconv's end-of-run reports: the one summary line (like
 * perf's) and the --stats=json object for CI.
 */
#ifndef APC_REPORT_H
#define APC_REPORT_H

#include <stdio.h>

#include "pipeline.h"

/* --list-formats (apcconv, apcserve): one line per format of this build. */
void apc_report_formats(FILE *f);

/*
 * apc_report_line() : "INPUT (FORMAT) -> OUTPUT: N bytes in, N events,
 * N frames, N bytes written, span S s[; not mapped: what N, ...]".
 */
void apc_report_line(FILE *f, const char *prog, const char *input, const struct apc_conv_result *r,
		     double seconds);
/*
 * apc_report_more_damage() : "PROG: FILE: [offset 0x...: ]message" for
 * each damaged stream past the first (the run's error, printed by the
 * caller), and how many more there were past those kept.
 */
void apc_report_more_damage(FILE *f, const char *prog, const struct apc_conv_result *r);
/* With -v: one line per kind of source record and what it became. */
void apc_report_kinds(FILE *f, const char *prog, const struct apc_conv_result *r);
/*
 * apc_report_resources() : apcconv -vv's line: wall, user and system
 * time, CPUs busy, peak RSS, and which helper threads ran.
 */
void apc_report_resources(FILE *f, const char *prog, const struct apc_conv_result *r,
			  double seconds);
/* One JSON object with the same figures, the per-type event counts, the
 * unmapped kinds, the damage (if any) and, when status is 2, err: why
 * the run was refused or failed (NULL: none to say). */
void apc_report_json(FILE *f, const char *input, const struct apc_conv_result *r, double seconds,
		     int status, const struct apc_err *err);

#endif
