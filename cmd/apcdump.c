/*
 * apcdump - list the frames and messages of Arm Streamline captures, or
 * summarise them.  Options in, lib/dump.c does the work, status out.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump.h"
#include "err.h"
#include "util.h"

static int quiet;

static void usage(FILE *f)
{
	fputs("usage: apcdump [OPTIONS] CAPTURE...\n"
	      "List the frames and messages of Streamline captures (.apc folders,\n"
	      "archives of them, bare 0000000000 files, or - for stdin).\n"
	      "\n"
	      "  -j, --json           JSON Lines (one object per message; --summary: one per input)\n"
	      "      --summary        frames, messages, sizes, counters, channels, cores, threads,\n"
	      "                       times, rates and target, as capinfos(1)\n"
	      "      --xml            captured.xml as key: value lines\n"
	      "  -x, --hex            add the raw bytes of each listed frame\n"
	      "      --frame=TYPE,... only these frame types (names or numbers)\n"
	      "      --core=N         only messages of core N\n"
	      "      --begin=TIME     only messages at or after TIME (ns; or s, ms, us suffix)\n"
	      "      --end=TIME       only messages at or before TIME\n"
	      "  -c, --count=N        stop after N listed messages per input\n"
	      "  -q, --quiet          no error messages, only the exit status\n"
	      "  -v, --verbose        show whole byte fields\n"
	      "  -h, --help           this help\n"
	      "  -V, --version        version\n"
	      "\n"
	      "Exit status: 0 ok, 1 the data has problems, 2 usage or I/O error.\n",
	      f);
}

static void report(void *ctx, const struct apc_err *e)
{
	char buf[APC_ERR_MSG + 600];

	(void)ctx;
	if (!quiet)
		fprintf(stderr, "apcdump: %s\n", apc_err_format(e, buf, sizeof buf));
}

static int bad_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "apcdump: ");
	fprintf(stderr, fmt, arg);
	fputs("\nTry 'apcdump --help' for more information.\n", stderr);
	return 2;
}

/* A --begin/--end time, or the usage error apcconv gives for it too. */
static int parse_time(const char *opt, const char *arg, int64_t *out)
{
	char why[512];
	uint64_t ns;
	int rc = apc_parse_time_ns(arg, &ns);

	if (rc < 0)
		return bad_usage("%s", apc_time_error(why, sizeof why, opt, arg, rc));
	*out = (int64_t)ns; /* at most INT64_MAX */
	return 0;
}

int main(int argc, char **argv)
{
	enum { OPT_SUMMARY = 256, OPT_XML, OPT_FRAME, OPT_CORE, OPT_BEGIN, OPT_END };
	static const struct option longopts[] = {
		{"json", no_argument, NULL, 'j'},
		{"summary", no_argument, NULL, OPT_SUMMARY},
		{"xml", no_argument, NULL, OPT_XML},
		{"hex", no_argument, NULL, 'x'},
		{"frame", required_argument, NULL, OPT_FRAME},
		{"core", required_argument, NULL, OPT_CORE},
		{"begin", required_argument, NULL, OPT_BEGIN},
		{"end", required_argument, NULL, OPT_END},
		{"count", required_argument, NULL, 'c'},
		{"quiet", no_argument, NULL, 'q'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	struct apc_dump_opts o;
	struct apc_err e;
	int c, rc, status = 0;
	char *end;

	apc_dump_opts_init(&o);
	o.report = report;
	apc_names_utf8();
	/* getopt's messages start with argv[0]: the name, not the path */
	argv[0] = (char *)"apcdump";
	while ((c = getopt_long(argc, argv, "jxc:qvhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'j': o.json = 1; break;
		case OPT_SUMMARY: o.summary = 1; break;
		case OPT_XML: o.xml = 1; break;
		case 'x': o.hex = 1; break;
		case OPT_FRAME:
			if (apc_dump_parse_frames(&o, optarg, &e) < 0)
				return bad_usage("%s", e.msg);
			break;
		case OPT_CORE: {
			long v = strtol(optarg, &end, 10); /* 010 is core 10, not 8 */
			if (!*optarg || *end || v < 0 || v > INT32_MAX)
				return bad_usage("--core: '%s' is not a core number (a whole number, 0 or more)",
						 optarg);
			o.have_core = 1;
			o.core = (int32_t)v;
			break;
		}
		case OPT_BEGIN:
			if (parse_time("--begin", optarg, &o.begin))
				return 2;
			o.have_begin = 1;
			break;
		case OPT_END:
			if (parse_time("--end", optarg, &o.end))
				return 2;
			o.have_end = 1;
			break;
		case 'c': {
			unsigned long long v = strtoull(optarg, &end, 10);
			/* the words of apcverify's --max-errors */
			if (!*optarg || *end || *optarg == '-' || v == 0)
				return bad_usage("--count: '%s' is not a count (a whole number, 1 or more)",
						 optarg);
			o.count = v;
			break;
		}
		case 'q': quiet = 1; break;
		case 'v': o.verbose++; break;
		case 'h': usage(stdout); return apc_cli_stdout_done("apcdump", 0, 0);
		case 'V': return apc_cli_version("apcdump", APC_VERSION);
		default: return apc_cli_try_help("apcdump");
		}
	}
	if (optind >= argc) {
		/* one line, as apcverify says it */
		fputs("apcdump: no capture given (try --help)\n", stderr);
		return 2;
	}
	if (apc_cli_stdin_twice("apcdump", argv + optind, (size_t)(argc - optind)))
		return 2;
	if (o.summary && o.xml)
		return bad_usage("%s", "--summary and --xml do not go together");
	if (o.summary || o.xml) {
		/* what narrows or adds to the listing would be ignored */
		const char *opt = o.have_frames ? "--frame" : o.have_core ? "--core"
				: o.have_begin ? "--begin" : o.have_end ? "--end"
				: o.count ? "-c/--count" : o.hex ? "-x/--hex" : NULL;
		if (opt) {
			char why[128];
			snprintf(why, sizeof why, "%s has no effect with %s (it is for the listing)", opt,
				 o.summary ? "--summary" : "--xml");
			return bad_usage("%s", why);
		}
	}
	/* the window holds both ends: --begin=1ms --end=1ms is one instant */
	if (o.have_begin && o.have_end && o.end < o.begin)
		return bad_usage("%s", "--end is before --begin (an empty window lists nothing)");
	/* as head(1) and grep(1) do: name each input only when there are several */
	o.name_inputs = argc - optind > 1;
	apc_size_limit_errors();
	for (int i = optind; i < argc; i++) {
		rc = apc_dump_path(argv[i], &o);
		if (rc == APC_EIO || rc == APC_ENOMEM)
			status = 2;
		else if (rc < 0 && status == 0)
			status = 1;
	}
	return apc_cli_stdout_done("apcdump", status, quiet);
}
