/*
 * apcrecord - record a capture from a gator agent over the target-host
 * protocol, as Streamline would, into an .apc folder.  Options in, one
 * call into the library (apc_gator_record), a summary out, an exit status.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gator.h"
#include "input.h"
#include "util.h"

#define PROG "apcrecord"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " [OPTIONS] HOST[:PORT] -o OUTPUT.apc\n"
		"Record a capture from a gator agent (default port %d) into an .apc folder.\n\n"
		"  -o, --output=PATH       the capture folder (.apc added if missing)\n"
		"      --overwrite         replace an existing output\n"
		"  -d, --duration=SECONDS  stop after this long (default: until the agent ends)\n"
		"      --sample-rate=RATE  high, normal, low or none (default normal)\n"
		"      --buffer-mode=MODE  streaming, large, medium or small (default streaming)\n"
		"      --call-stack-unwinding  ask for call stacks\n"
		"      --session=FILE      deliver this session XML instead\n"
		"      --counters=LIST     NAME[:EVENT],... to enable (default: the agent's defaults)\n"
		"      --list-counters     print the counters and events the agent offers and exit\n"
		"      --timeout=SECONDS   give up on a silent agent after this long (default 10)\n"
		"      --progress, --no-progress  force progress on stderr on or off\n"
		"  -q, --quiet             no summary line\n"
		"  -v, --verbose           also a line on how the session went (agent's protocol,\n"
		"                          pings, how it ended)\n"
		"  -h, --help              this help\n"
		"  -V, --version           print the version\n"
		"Exit status: 0 recorded; 1 the capture was cut short (what arrived is kept);\n"
		"2 usage, connection or I/O error (nothing written).\n",
		APC_GATOR_PORT);
}

static void on_signal(int sig)
{
	(void)sig;
	apc_interrupt();
}

static void show_progress(void *ctx, uint64_t frames, uint64_t bytes)
{
	struct apc_progress *p = ctx;
	const char *pre, *end;

	if (apc_progress_due(p, &pre, &end))
		fprintf(stderr, "%s" PROG ": %10.3f MB  %8llu frames  %6.1f s%s", pre,
			(double)bytes / 1e6, (unsigned long long)frames, p->last - p->start, end);
}

/* --sample-rate and --buffer-mode take what the agent would accept. */
static int check_value(const char *opt, const char *v, const char *const *set)
{
	if (apc_gator_one_of(v, set))
		return 0;
	fprintf(stderr, PROG ": invalid %s '%s' (", opt, v);
	for (const char *const *p = set; *p; p++)
		fprintf(stderr, "%s%s", *p, p[1] ? (p[2] ? ", " : " or ") : ")\n");
	return -1;
}

/*
 * The port of HOST:PORT or [V6]:PORT when it is there to blame (the rest
 * of the address has the form apc_gator_split_hostport() takes), else
 * NULL.
 */
static const char *port_part(const char *a)
{
	const char *colon;

	if (*a == '[') {
		const char *rb = strchr(a, ']');
		colon = rb && rb > a + 1 && rb[1] == ':' ? rb + 1 : NULL;
	} else {
		colon = strchr(a, ':');
		/* a bare IPv6 address has several colons and no port */
		if (colon && (colon == a || strchr(colon + 1, ':')))
			colon = NULL;
	}
	return colon ? colon + 1 : NULL;
}

/*
 * -v: how the session went, from what apc_gator_record() counted: which
 * protocol the agent spoke, whether it answered the pings, and how the
 * data ended (the agent's End of Sequence, or a cut).  What to look at
 * first when a capture is shorter than expected.
 */
static void print_session(const char *agent, const struct apc_gator_record_result *r)
{
	if (!r->agent_version) {
		fprintf(stderr, PROG ": %s: no agent answered the magic exchange\n", agent);
		return;
	}
	fprintf(stderr, PROG ": %s: agent protocol %d; %llu ping%s, %llu answered; %s%s\n", agent,
		r->agent_version, (unsigned long long)r->pings, r->pings == 1 ? "" : "s",
		(unsigned long long)r->acks, r->stopped ? "APC Stop sent, " : "",
		r->ended ? "the agent ended the data (End of Sequence)"
			 : "no End of Sequence from the agent");
}

/*
 * PROG: FILE: message.  The agent's address is the FILE unless the error
 * names one of its own (the output, or the address as connected).
 */
static void print_err(const char *agent, const struct apc_err *err, const char *tail)
{
	char msg[2048];

	apc_err_format(err, msg, sizeof msg);
	if (err->file[0])
		fprintf(stderr, PROG ": %s%s\n", msg, tail);
	else
		fprintf(stderr, PROG ": %s: %s%s\n", agent, msg, tail);
}

/* Print the counter names and each event of the Events XML, one a line. */
static void list_counters(const char *counters, size_t clen, const char *events, size_t elen)
{
	struct apc_gator_xml_iter it;
	struct apc_gator_xml_elem e;
	char name[256], title[256], cat[256] = "", ev[64];

	printf("Counters:\n");
	apc_gator_xml_init(&it, counters, clen);
	while (apc_gator_xml_next(&it, &e))
		if (apc_gator_xml_is(&e, "counter") && apc_gator_xml_attr(&e, "name", name, sizeof name))
			printf("  %s\n", name);
	printf("Events:\n");
	apc_gator_xml_init(&it, events, elen);
	while (apc_gator_xml_next(&it, &e)) {
		if (apc_gator_xml_is(&e, "category")) {
			if (!apc_gator_xml_attr(&e, "name", cat, sizeof cat))
				cat[0] = 0;
			continue;
		}
		if (!apc_gator_xml_is(&e, "event"))
			continue;
		if (!apc_gator_xml_attr(&e, "title", title, sizeof title))
			title[0] = 0;
		if (!apc_gator_xml_attr(&e, "name", name, sizeof name))
			name[0] = 0;
		printf("  %s: %s: %s", cat, title, name);
		if (apc_gator_xml_attr(&e, "counter", ev, sizeof ev))
			printf("  counter=%s", ev);
		if (apc_gator_xml_attr(&e, "event", ev, sizeof ev))
			printf("  event=%s", ev);
		putchar('\n');
	}
}

int main(int argc, char **argv)
{
	enum { O_OVERWRITE = 256, O_RATE, O_MODE, O_CSU, O_SESSION, O_COUNTERS, O_LIST, O_TIMEOUT,
	       O_PROGRESS, O_NOPROGRESS };
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},     {"overwrite", no_argument, NULL, O_OVERWRITE},
		{"duration", required_argument, NULL, 'd'},   {"sample-rate", required_argument, NULL, O_RATE},
		{"buffer-mode", required_argument, NULL, O_MODE},
		{"call-stack-unwinding", no_argument, NULL, O_CSU},
		{"session", required_argument, NULL, O_SESSION},
		{"counters", required_argument, NULL, O_COUNTERS},
		{"list-counters", no_argument, NULL, O_LIST}, {"timeout", required_argument, NULL, O_TIMEOUT},
		{"progress", no_argument, NULL, O_PROGRESS},  {"no-progress", no_argument, NULL, O_NOPROGRESS},
		{"quiet", no_argument, NULL, 'q'},            {"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},          {NULL, 0, NULL, 0},
	};
	struct apc_gator_record_opts o = {0};
	struct apc_gator_record_result r;
	struct apc_err err;
	struct apc_progress prog = {0};
	char host[256], msg[2048];
	const char *session_file = NULL;
	uint8_t *session_buf = NULL;
	unsigned timeout_s = 10;
	int c, quiet = 0, verbose = 0, list = 0, progress = -1, rc, status;

	apc_names_utf8();
	/* getopt's messages start with argv[0]: the name, not the path */
	argv[0] = (char *)PROG;
	while ((c = getopt_long(argc, argv, "o:d:qvhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': o.output = optarg; break;
		case O_OVERWRITE: o.overwrite = 1; break;
		case 'd':
			/* in apcdump's and apcverify's words for a bad count */
			if (apc_parse_uint(optarg, APC_GATOR_DURATION_MAX, &o.session.duration) != 0) {
				fprintf(stderr, PROG ": --duration: '%s' is not a count of seconds "
						"(a whole number, 0 to %u; 0: until the agent ends)\n",
					optarg, APC_GATOR_DURATION_MAX);
				return apc_cli_try_help(PROG);
			}
			break;
		case O_RATE:
			if (check_value("sample rate", optarg, apc_gator_sample_rates) != 0)
				return apc_cli_try_help(PROG);
			o.session.sample_rate = optarg;
			break;
		case O_MODE:
			if (check_value("buffer mode", optarg, apc_gator_buffer_modes) != 0)
				return apc_cli_try_help(PROG);
			o.session.buffer_mode = optarg;
			break;
		case O_CSU: o.session.call_stack_unwinding = 1; break;
		case O_SESSION: session_file = optarg; break;
		case O_COUNTERS:
			/* a slip in the list is the user's, said before connecting */
			if (apc_gator_counters_check(optarg, msg, sizeof msg) != 0) {
				fprintf(stderr, PROG ": --counters: %s\n", msg);
				return apc_cli_try_help(PROG);
			}
			o.counters = optarg;
			break;
		case O_LIST: list = 1; break;
		case O_TIMEOUT:
			if (apc_parse_uint(optarg, 86400, &timeout_s) != 0 || timeout_s == 0) {
				fprintf(stderr, PROG ": --timeout: '%s' is not a count of seconds "
						"(a whole number, 1 to 86400)\n", optarg);
				return apc_cli_try_help(PROG);
			}
			break;
		case O_PROGRESS: progress = 1; break;
		case O_NOPROGRESS: progress = 0; break;
		case 'q': quiet = 1; break;
		case 'v': verbose++; break;
		case 'h': usage(stdout); return apc_cli_stdout_done(PROG, 0, 0);
		case 'V': return apc_cli_version(PROG, APC_VERSION);
		default: return apc_cli_try_help(PROG);
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, PROG ": %s (try --help)\n",
			optind >= argc ? "no agent address given" : "one agent address only");
		return 2;
	}
	if (apc_gator_split_hostport(argv[optind], APC_GATOR_PORT, host, sizeof host, &o.port) != 0) {
		const char *port = port_part(argv[optind]);

		/* a bad port in the words of a bad count; else the form */
		if (port)
			fprintf(stderr, PROG ": %s: '%s' is not a port number (a whole number, at most 65535)\n",
				argv[optind], port);
		else
			fprintf(stderr, PROG ": %s: invalid address (use HOST[:PORT])\n", argv[optind]);
		return apc_cli_try_help(PROG);
	}
	o.host = host;
	o.timeout_ms = (int)timeout_s * 1000;
	signal(SIGPIPE, SIG_IGN);

	if (list) {
		char *counters, *events;
		size_t cl, el;
		rc = apc_gator_list(host, o.port, o.timeout_ms, &counters, &cl, &events, &el, &err);
		if (rc != APC_OK) {
			print_err(argv[optind], &err, "");
			return 2;
		}
		list_counters(counters, cl, events, el);
		free(counters);
		free(events);
		return 0;
	}
	if (!o.output) {
		fprintf(stderr, PROG ": no output given (-o OUTPUT.apc)\n");
		return 2;
	}
	if (session_file) {
		struct apc_stream *s;
		size_t len;
		if (apc_stream_open_path(session_file, &s, &err) != APC_OK ||
		    apc_stream_slurp(s, APC_GATOR_CMD_MAX, &session_buf, &len, &err) != APC_OK) {
			fprintf(stderr, PROG ": %s\n", apc_err_format(&err, msg, sizeof msg));
			return 2;
		}
		apc_stream_close(s);
		o.session_xml = (const char *)session_buf;
		o.session_len = len;
		/* its faults name it, not the agent: apc_gator_record() checks it first */
		o.session_name = session_file;
	}
	o.session.target_host = host;
	o.session.target_port = o.port;

	if (apc_progress_wanted(progress, quiet)) {
		apc_progress_init(&prog);
		o.progress = show_progress;
		o.progress_ctx = &prog;
	}
	/* The first ^C sends APC Stop and drains; a wait returns at it. */
	apc_catch_stop_signals(on_signal);

	rc = apc_gator_record(&o, &r, &err);
	apc_progress_clear(&prog);
	if (r.unknown_counters[0])
		fprintf(stderr, PROG ": %s: warning: the agent does not offer %s (see --list-counters)\n",
			argv[optind], r.unknown_counters);
	status = rc == APC_OK ? 0 : rc == APC_EDATA ? 1 : 2;
	if (rc != APC_OK)
		print_err(argv[optind], &err,
			  rc == APC_EDATA ? " (the capture is cut short; what arrived was kept)" : "");
	if (status != 2 && !quiet)
		fprintf(stderr, PROG ": %s: %llu frames, %llu bytes in %.1f s%s -> %s\n", argv[optind],
			(unsigned long long)r.frames, (unsigned long long)r.bytes, r.seconds,
			r.stopped ? " (stopped)" : "", r.output);
	if (verbose && !quiet)
		print_session(argv[optind], &r);
	free(session_buf);
	return status;
}
