/*
 * apcconv - convert Barman, LTT, TPTP, Annotate or APC input into an
 * Arm Streamline .apc capture.  Options in, one call into the library
 * (apc_convert), a summary out, an exit status.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pipeline.h"
#include "report.h"
#include "util.h"

#define PROG "apcconv"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " [OPTIONS] INPUT... [-o OUTPUT]\n"
		"Convert a trace into an Arm Streamline capture (.apc folder or archive).\n\n"
		"  -o, --output=PATH     NAME.apc folder, NAME.apc.zip|.tar|.tar.gz|.tar.bz2|\n"
		"                        .tar.xz|.tar.zst, DIR/ (the default name in DIR),\n"
		"                        or - (tar on stdout)\n"
		"  -f, --from=FORMAT     input format (default: detected; see --list-formats)\n"
		"      --list-formats    list the input formats and exit\n"
		"      --overwrite       replace an existing output\n"
		"      --events=FILE     extra or overriding counter definitions (events.xml)\n"
		"      --begin=TIME      drop events before TIME in the capture (1.5s, 20ms, 300us, ns;\n"
		"                        the times apcdump lists)\n"
		"      --end=TIME        drop events from TIME in the capture\n"
		"      --progress, --no-progress  force progress on stderr on or off\n"
		"      --stats=json      print the run's figures as one JSON object\n"
		"  -q, --quiet           no summary line\n"
		"  -v, --verbose         what each kind of record became; -vv adds time and memory\n"
		"  -h, --help            this help\n"
		"  -V, --version         print the version\n"
		"Exit status: 0 converted; 1 the input is damaged (what came before the\n"
		"damage was converted); 2 usage or I/O error.\n");
}

static void show_notice(const char *input, const char *msg)
{
	fprintf(stderr, PROG ": %s: note: %s\n", apc_input_name(input), msg);
}

static void on_signal(int sig)
{
	(void)sig;
	apc_pipeline_interrupt();
}

static void show_progress(void *ctx, uint64_t done, uint64_t total)
{
	struct apc_progress *p = ctx;
	const char *pre, *end;
	double el, rate;

	if (!apc_progress_due(p, &pre, &end))
		return;
	el = p->last - p->start;
	rate = el > 0 ? (double)done / el : 0;
	if (total) {
		double pct = 100.0 * (double)done / (double)total;
		double eta = rate > 0 ? (double)(total - (done < total ? done : total)) / rate : 0;
		fprintf(stderr, "%s" PROG ": %5.1f%%  %8.1f MB/s  ETA %4.0f s%s", pre, pct, rate / 1e6,
			eta, end);
	} else {
		fprintf(stderr, "%s" PROG ": %10.1f MB  %8.1f MB/s%s", pre, (double)done / 1e6,
			rate / 1e6, end);
	}
}

/*
 * -o DIR/, DIR a folder there is and not a capture (NAME.apc): the
 * capture goes inside it under its default name, as cp and mv put a file
 * into DIR/; DIR/ that is not a folder is refused, as cp refuses it.
 * Else the name as given (the writer adds .apc).  NULL: refused (said).
 */
static const char *output_path(const char *out, const char *input, char *buf, size_t len)
{
	size_t n = strlen(out);
	struct stat st;
	char name[1024];

	if (!n || out[n - 1] != '/')
		return out;
	while (n && out[n - 1] == '/')
		n--;
	if (n >= 4 && !strncasecmp(out + n - 4, ".apc", 4))
		return out; /* a capture named as a folder */
	errno = 0;
	if (stat(out, &st) != 0 || !S_ISDIR(st.st_mode)) {
		char why[128];
		const char *what = "not a folder";

		if (errno == ENOENT)
			what = "no such folder";
		else if (errno && errno != ENOTDIR)
			what = apc_strerror(errno, why, sizeof why);
		fprintf(stderr, PROG ": %s: %s (a name ending in / is a folder to write into)\n", out,
			what);
		return NULL;
	}
	apc_default_output(input, name, sizeof name);
	snprintf(buf, len, "%.*s/%s", (int)n, out, name);
	return buf;
}

/* Whether the capture goes to standard output: "-", or a name for it
 * (/dev/stdout, /dev/fd/1), where --stats=json must not go too. */
static int is_stdout(const char *out)
{
	struct stat a, b;

	if (!strcmp(out, "-"))
		return 1;
	return stat(out, &a) == 0 && fstat(STDOUT_FILENO, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

int main(int argc, char **argv)
{
	enum { O_LIST = 256, O_OVERWRITE, O_EVENTS, O_BEGIN, O_END, O_PROGRESS, O_NOPROGRESS, O_STATS };
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},   {"from", required_argument, NULL, 'f'},
		{"list-formats", no_argument, NULL, O_LIST}, {"overwrite", no_argument, NULL, O_OVERWRITE},
		{"events", required_argument, NULL, O_EVENTS}, {"begin", required_argument, NULL, O_BEGIN},
		{"end", required_argument, NULL, O_END},     {"progress", no_argument, NULL, O_PROGRESS},
		{"no-progress", no_argument, NULL, O_NOPROGRESS}, {"stats", required_argument, NULL, O_STATS},
		{"quiet", no_argument, NULL, 'q'},           {"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},            {"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	struct apc_conv_opts o = {0};
	struct apc_conv_result res;
	struct apc_err err;
	struct apc_progress prog = {0};
	int c, quiet = 0, verbose = 0, progress = -1, stats_json = 0, rc, status;
	char msg[2048], outbuf[4096], why[160];
	double t0;

	o.write.created = -1;
	apc_names_utf8();
	apc_raise_nofile();
	/* getopt's messages start with argv[0]: the name, not the path */
	argv[0] = (char *)PROG;
	while ((c = getopt_long(argc, argv, "o:f:qvhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': o.output = optarg; break;
		case 'f': o.from = optarg; break;
		case O_LIST: apc_report_formats(stdout); return apc_cli_stdout_done(PROG, 0, 0);
		case O_OVERWRITE: o.write.overwrite = 1; break;
		case O_EVENTS: o.write.events_file = optarg; break;
		case O_BEGIN:
		case O_END: {
			uint64_t ns;
			const char *opt = c == O_BEGIN ? "--begin" : "--end";
			/* rounded to the nearest ns, said as apcdump says it */
			if ((rc = apc_parse_time_ns(optarg, &ns)) != 0) {
				fprintf(stderr, PROG ": %s\n", apc_time_error(msg, sizeof msg, opt, optarg, rc));
				return apc_cli_try_help(PROG);
			}
			if (c == O_BEGIN) { o.begin_ns = ns; o.have_begin = 1; }
			else { o.end_ns = ns; o.have_end = 1; }
			break;
		}
		case O_PROGRESS: progress = 1; break;
		case O_NOPROGRESS: progress = 0; break;
		case O_STATS:
			if (strcmp(optarg, "json") != 0) {
				fprintf(stderr, PROG ": --stats takes 'json'\n");
				return apc_cli_try_help(PROG);
			}
			stats_json = 1;
			break;
		case 'q': quiet = 1; break;
		case 'v': verbose++; break;
		case 'h': usage(stdout); return apc_cli_stdout_done(PROG, 0, 0);
		case 'V': return apc_cli_version(PROG, APC_VERSION);
		default: return apc_cli_try_help(PROG);
		}
	}
	if (optind >= argc) {
		fprintf(stderr, PROG ": no input given (try --help)\n");
		return 2;
	}
	/* without --begin the window starts at the capture's start, time 0 */
	if (o.have_end && o.end_ns <= (o.have_begin ? o.begin_ns : 0)) {
		fprintf(stderr, PROG ": --end must come after %s (an empty window keeps nothing)\n",
			o.have_begin ? "--begin" : "time 0, the capture's start");
		return 2;
	}
	o.inputs = (const char *const *)argv + optind;
	o.ninputs = (size_t)(argc - optind);
	int events_stdin = o.write.events_file && strcmp(o.write.events_file, "-") == 0;
	int input_stdin = 0;
	for (size_t i = 0; i < o.ninputs; i++) {
		if (!*o.inputs[i]) {
			fprintf(stderr, PROG ": an input name is empty\n");
			return 2;
		}
		input_stdin |= strcmp(o.inputs[i], "-") == 0;
	}
	if (apc_cli_stdin_twice(PROG, argv + optind, o.ninputs))
		return 2;
	if (events_stdin && input_stdin) {
		fprintf(stderr, PROG ": standard input (-) given as --events=- and as an input: it "
				"can be read once\n");
		return 2;
	}
	for (size_t i = 0; i < o.ninputs; i++)
		if (apc_cli_refuse_tty(PROG, o.inputs[i], 0))
			return 2;
	if (events_stdin && isatty(STDIN_FILENO)) {
		fprintf(stderr, PROG ": <stdin>: refusing to read the events file from a terminal\n");
		return 2;
	}
	if (o.output && !(o.output = output_path(o.output, o.inputs[0], outbuf, sizeof outbuf)))
		return 2;

	if (!quiet)
		o.notice = show_notice;
	if (apc_progress_wanted(progress, quiet)) {
		apc_progress_init(&prog);
		o.progress = show_progress;
		o.progress_ctx = &prog;
	}
	/* A read blocked on a quiet pipe returns at the signal. */
	apc_catch_stop_signals(on_signal);
	signal(SIGPIPE, SIG_IGN);
	apc_size_limit_errors();

	t0 = apc_now();
	rc = apc_convert(&o, &res, &err);
	apc_progress_clear(&prog);
	status = rc == APC_OK ? 0 : rc == APC_EDATA ? 1 : 2;
	if (rc < 0) {
		/* A closed pipe downstream ends the run quietly. */
		if (!(rc == APC_EIO && strstr(err.msg, apc_strerror(EPIPE, why, sizeof why))))
			fprintf(stderr, PROG ": %s\n", apc_err_format(&err, msg, sizeof msg));
		if (rc == APC_EDATA)
			apc_report_more_damage(stderr, PROG, &res);
	}
	if (status != 2 && !quiet && res.format) {
		apc_report_line(stderr, PROG, o.inputs[0], &res, apc_now() - t0);
		if (verbose)
			apc_report_kinds(stderr, PROG, &res);
		if (verbose > 1)
			apc_report_resources(stderr, PROG, &res, apc_now() - t0);
	} else if (status == 1 && !quiet) {
		/* Damage stopped the run before a format was told (an
		 * archive or compressed stream cut before the members or
		 * bytes that tell it): the summary all the same, nothing
		 * written, the input named as what it was told to be. */
		apc_report_line(stderr, PROG, o.inputs[0], &res, apc_now() - t0);
	}
	if (stats_json) {
		FILE *out = o.output && is_stdout(o.output) ? stderr : stdout;
		apc_report_json(out, o.inputs[0], &res, apc_now() - t0, status, &err);
	}
	apc_conv_result_free(&res);
	/* --stats=json went there: a full disk fails the run */
	return apc_cli_stdout_done(PROG, status, 0);
}
