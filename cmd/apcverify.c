/*
 * apcverify - check Arm Streamline captures: one call into the checks
 * engine (lib/verify.c) per capture, problems on stdout as text or JSON,
 * usage and I/O errors on stderr, an exit status for CI.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "util.h"
#include "verify.h"

#define PROG "apcverify"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " [OPTIONS] CAPTURE...\n"
		"Check Arm Streamline captures (.apc folders, archives of them, bare\n"
		"0000000000 files, or - for stdin).\n\n"
		"  -j, --json            one JSON object per capture\n"
		"      --max-errors=N    list at most N errors per capture (all are counted)\n"
		"      --strict          warnings fail too\n"
		"      --list-checks     list the check ids and exit\n"
		"  -q, --quiet           print nothing; exit status only\n"
		"  -v, --verbose         also list the checks' readings on stderr\n"
		"  -h, --help            this help\n"
		"  -V, --version         print the version\n"
		"Exit status: 0 no problems; 1 a capture has errors (or warnings with\n"
		"--strict); 2 usage or I/O error.\n");
}

struct out {
	const char *file;
	int json, quiet;
	long max_errors;     /* -1: no limit */
	uint64_t listed_errors;
	uint64_t nlisted;
	int stopped;         /* the limit was hit: keep counting, stop listing */
};

static void on_problem(void *ctx, const struct apc_vproblem *p)
{
	struct out *o = ctx;
	const char *sev = p->severity == APC_V_ERROR ? "error" : "warning";

	if (o->quiet)
		return;
	/* The limit is on errors: warnings go on being listed. */
	if (o->max_errors >= 0 && p->severity == APC_V_ERROR &&
	    o->listed_errors >= (uint64_t)o->max_errors) {
		o->stopped = 1;
		return;
	}
	if (p->severity == APC_V_ERROR)
		o->listed_errors++;
	if (o->json) {
		printf("%s{\"frame\":", o->nlisted ? "," : "");
		if (p->frame >= 0)
			printf("%" PRId64 ",\"offset\":%" PRId64, p->frame, p->offset);
		else
			printf("null,\"offset\":null");
		printf(",\"member\":");
		apc_json_cstr(stdout, p->member);
		printf(",\"severity\":\"%s\",\"check\":\"%s\",\"message\":", sev, p->check);
		apc_json_cstr(stdout, p->msg);
		putchar('}');
	} else if (p->frame >= 0) {
		printf("%s: frame %" PRId64 " @0x%" PRIx64 ": %s: %s [%s]\n", o->file, p->frame,
		       (uint64_t)p->offset, sev, p->msg, p->check);
	} else if (p->member_file) {
		/* the file at fault, as apcdump and apcconv name it */
		printf("%s: %s: %s [%s]\n", p->member_file, sev, p->msg, p->check);
	} else if (p->member) {
		printf("%s: %s: %s: %s [%s]\n", o->file, p->member, sev, p->msg, p->check);
	} else {
		printf("%s: %s: %s [%s]\n", o->file, sev, p->msg, p->check);
	}
	o->nlisted++;
}

/* Verify one capture; 0 ok, 1 problems, 2 could not read it. */
static int verify_one(const char *path, int json, int quiet, int strict, long max_errors)
{
	/* messages name stdin as apcconv does; JSON's "file" is the
	 * argument as given, as apcconv's --stats=json "input" is */
	const char *name = strcmp(path, "-") ? path : "<stdin>";
	struct out o = {.file = name, .json = json, .quiet = quiet, .max_errors = max_errors};
	struct apc_vresult r;
	struct apc_err err;
	char buf[APC_ERR_MSG + 300];
	int rc, bad;

	if (json && !quiet) {
		printf("{\"file\":");
		apc_json_cstr(stdout, path);
		printf(",\"problems\":[");
	}
	rc = apc_verify_path(path, on_problem, &o, &r, &err);
	bad = r.errors || (strict && r.warnings);
	if (rc < 0 && !quiet)
		fprintf(stderr, PROG ": %s\n", apc_err_format(&err, buf, sizeof buf));
	if (!quiet) {
		if (json) {
			printf("],\"ok\":%s,\"frames\":%" PRIu64 ",\"errors\":%" PRIu64
			       ",\"warnings\":%" PRIu64 ",\"perf_mode\":%s,\"io_error\":",
			       !bad && rc >= 0 ? "true" : "false", r.frames, r.errors, r.warnings,
			       r.perf_mode ? "true" : "false");
			if (rc < 0)
				apc_json_cstr(stdout, err.msg);
			else
				printf("null");
			printf("}\n");
		} else if (rc >= 0) {
			if (o.stopped)
				printf("%s: listing stopped after %ld error%s\n", name, max_errors,
				       max_errors == 1 ? "" : "s");
			if (!bad && !r.warnings)
				printf("%s: ok (%" PRIu64 " frame%s)\n", name, r.frames,
				       r.frames == 1 ? "" : "s");
			else if (!bad)
				printf("%s: ok (%" PRIu64 " frame%s, %" PRIu64 " warning%s)\n", name,
				       r.frames, r.frames == 1 ? "" : "s", r.warnings,
				       r.warnings == 1 ? "" : "s");
			else
				printf("%s: %" PRIu64 " error%s, %" PRIu64 " warning%s\n", name,
				       r.errors, r.errors == 1 ? "" : "s", r.warnings,
				       r.warnings == 1 ? "" : "s");
		}
	}
	if (rc < 0)
		return 2;
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	enum { OPT_MAX = 256, OPT_STRICT, OPT_LIST };
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{"max-errors", required_argument, NULL, OPT_MAX},
		{"strict", no_argument, NULL, OPT_STRICT},
		{"list-checks", no_argument, NULL, OPT_LIST},
		{"quiet", no_argument, NULL, 'q'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	int json = 0, quiet = 0, strict = 0, verbose = 0, c, status = 0;
	int ncaps = 0, nok = 0;
	long max_errors = -1;
	char *end;

	apc_names_utf8();
	/* getopt's messages start with argv[0]: the name, not the path */
	argv[0] = (char *)PROG;
	while ((c = getopt_long(argc, argv, "jqvhV", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = 1; break;
		case OPT_STRICT: strict = 1; break;
		case OPT_MAX:
			errno = 0;
			max_errors = strtol(optarg, &end, 10);
			/* in apcdump's words for its counts, with the same
			 * hint as the other usage errors here */
			if (!*optarg || *end || max_errors < 0) {
				fprintf(stderr, PROG ": --max-errors: '%s' is not a count "
						"(a whole number, 0 or more)\n", optarg);
				return apc_cli_try_help(PROG);
			}
			if (errno == ERANGE) { /* strtol() gave LONG_MAX: not what was asked */
				fprintf(stderr, PROG ": --max-errors: '%s' is out of range (at most %ld)\n",
					optarg, LONG_MAX);
				return apc_cli_try_help(PROG);
			}
			break;
		case OPT_LIST:
			for (const struct apc_vcheck *k = apc_verify_checks; k->id; k++)
				printf("%-20s %-8s %s\n", k->id,
				       k->severity == APC_V_ERROR ? "error" : "warning", k->what);
			return apc_cli_stdout_done(PROG, 0, 0);
		case 'q': quiet = 1; break;
		case 'v': verbose++; break;
		case 'h': usage(stdout); return apc_cli_stdout_done(PROG, 0, 0);
		case 'V': return apc_cli_version(PROG, APC_VERSION);
		default: return apc_cli_try_help(PROG);
		}
	}
	if (optind >= argc) {
		fprintf(stderr, PROG ": no capture given (try --help)\n");
		return 2;
	}
	if (apc_cli_stdin_twice(PROG, argv + optind, (size_t)(argc - optind)))
		return 2;
	apc_size_limit_errors();
	if (verbose && !quiet)
		fprintf(stderr, PROG ": readings: timestamps in order within a frame and per "
				"(frame type, core); block counter key-2 core lasts past key 0 "
				"(gatord); type-11 frames may precede the Summary\n");
	for (int i = optind; i < argc; i++) {
		int r;

		ncaps++;
		if (apc_cli_refuse_tty(PROG, argv[i], quiet)) {
			status = 2;
			continue;
		}
		r = verify_one(argv[i], json, quiet, strict, max_errors);
		if (r == 0)
			nok++;
		if (r > status)
			status = r;
	}
	/* many captures: the count at the end, as a CI log's last line
	 * (one capture's own line says it all) */
	if (ncaps > 1 && !json && !quiet)
		printf("%d captures: %d ok, %d failed\n", ncaps, nok, ncaps - nok);
	return apc_cli_stdout_done(PROG, status, quiet);
}
