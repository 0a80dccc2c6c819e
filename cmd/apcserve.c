/*
 * apcserve - play a gator agent with an existing capture: Streamline (or
 * apcrecord) connects and "captures" it.  Options in, a listening socket,
 * one library call (apc_gator_agent_session) per connection, an exit
 * status.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gator.h"
#include "pipeline.h"
#include "report.h"
#include "util.h"

#define PROG "apcserve"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " [OPTIONS] CAPTURE\n"
		"Serve a capture (an .apc folder or archive, or any input apcconv reads) to\n"
		"Streamline or apcrecord over the gator target-host protocol.\n\n"
		"  -f, --from=FORMAT     the input's format, as apcconv -f (default: detect)\n"
		"      --list-formats    list the input formats and exit\n"
		"  -p, --port=N          port to listen on (default %d; 0 picks a free one)\n"
		"  -l, --listen=ADDR     address to listen on (default 127.0.0.1)\n"
		"      --realtime        pace the frames by their timestamps\n"
		"      --once            exit after serving one capture session\n"
		"      --timeout=SECONDS drop a silent client after this long (default 60)\n"
		"  -q, --quiet           only the listening line and errors\n"
		"  -v, --verbose         log every connection\n"
		"  -h, --help            this help\n"
		"  -V, --version         print the version\n"
		"The chosen address and port are printed on stderr (\"listening on ADDR port N\").\n"
		"An input that is converted first is reported as apcconv reports it (the damage,\n"
		"then the summary line) before the listening line.\n"
		"Exit status: 0 stopped by a signal or --once served; 1 the --once session failed,\n"
		"or the input is damaged and nothing could be converted; 2 usage, capture or\n"
		"socket error (an input no format claims among them).\n",
		APC_GATOR_PORT);
}

static void on_signal(int sig)
{
	(void)sig;
	apc_interrupt();
	apc_pipeline_interrupt();
}

int main(int argc, char **argv)
{
	enum { O_REALTIME = 256, O_ONCE, O_TIMEOUT, O_LIST };
	static const struct option longopts[] = {
		{"from", required_argument, NULL, 'f'},      {"list-formats", no_argument, NULL, O_LIST},
		{"port", required_argument, NULL, 'p'},      {"listen", required_argument, NULL, 'l'},
		{"realtime", no_argument, NULL, O_REALTIME}, {"once", no_argument, NULL, O_ONCE},
		{"timeout", required_argument, NULL, O_TIMEOUT},
		{"quiet", no_argument, NULL, 'q'},           {"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},            {"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	struct apc_gator_serve_opts so = {.listen_fd = -1, .timeout_ms = 60000};
	struct apc_gator_capture *cap;
	struct apc_gator_conv conv = {0};
	struct apc_err err;
	const char *addr = "127.0.0.1";
	char msg[2048];
	unsigned port = APC_GATOR_PORT, bound, timeout_s;
	int c, once = 0, quiet = 0, verbose = 0, lfd, status = 0, rc;

	apc_names_utf8();
	apc_raise_nofile();
	/* getopt's messages start with argv[0]: the name, not the path */
	argv[0] = (char *)PROG;
	while ((c = getopt_long(argc, argv, "f:p:l:qvhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			/* in apcrecord's words for a bad port and count */
			if (apc_parse_uint(optarg, 65535, &port) != 0) {
				fprintf(stderr, PROG ": --port: '%s' is not a port number "
						"(a whole number, at most 65535; 0 picks a free one)\n", optarg);
				return apc_cli_try_help(PROG);
			}
			break;
		case 'l': addr = optarg; break;
		case 'f':
			/* as apcconv refuses it, before the port is taken */
			if (!apc_format_find(optarg)) {
				fprintf(stderr, PROG ": unknown format '%s' (see --list-formats)\n", optarg);
				return 2;
			}
			conv.from = optarg;
			break;
		case O_LIST: apc_report_formats(stdout); return apc_cli_stdout_done(PROG, 0, 0);
		case O_REALTIME: so.realtime = 1; break;
		case O_ONCE: once = 1; break;
		case O_TIMEOUT:
			if (apc_parse_uint(optarg, 86400, &timeout_s) != 0 || timeout_s == 0) {
				fprintf(stderr, PROG ": --timeout: '%s' is not a count of seconds "
						"(a whole number, 1 to 86400)\n", optarg);
				return apc_cli_try_help(PROG);
			}
			so.timeout_ms = (int)timeout_s * 1000;
			break;
		case 'q': quiet = 1; break;
		case 'v': verbose++; break;
		case 'h': usage(stdout); return apc_cli_stdout_done(PROG, 0, 0);
		case 'V': return apc_cli_version(PROG, APC_VERSION);
		default: return apc_cli_try_help(PROG);
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, PROG ": %s (try --help)\n",
			optind >= argc ? "no capture given" : "one capture only");
		return 2;
	}
	/* accept() and the session's waits return at the signal (a closed
	 * terminal's SIGHUP too: the temporary folder goes as well). */
	apc_catch_stop_signals(on_signal);
	signal(SIGPIPE, SIG_IGN);

	/* The port first: one in use fails at once, before a long conversion. */
	if (apc_gator_listen(addr, port, &lfd, &bound, &err) != APC_OK) {
		fprintf(stderr, PROG ": %s\n", apc_err_format(&err, msg, sizeof msg));
		return 2;
	}
	rc = apc_gator_capture_open(argv[optind], &cap, &conv, &err);
	/* What converting the input gave, in apcconv's words: the damage, the summary. */
	if (rc != APC_OK || (conv.ran && conv.status != APC_OK && !quiet))
		fprintf(stderr, PROG ": %s\n",
			apc_err_format(rc != APC_OK ? &err : &conv.err, msg, sizeof msg));
	if (conv.ran && conv.status == APC_EDATA && !quiet)
		apc_report_more_damage(stderr, PROG, &conv.res);
	/* (damage that stopped the run before a format was told too, as
	 * apcconv says it: nothing written, the input as it was told) */
	if (conv.ran && (conv.res.format ? conv.status == APC_OK || conv.status == APC_EDATA
					 : conv.status == APC_EDATA) &&
	    !quiet) {
		apc_report_line(stderr, PROG, argv[optind], &conv.res, conv.seconds);
		if (verbose)
			apc_report_kinds(stderr, PROG, &conv.res);
	}
	if (conv.ran)
		apc_conv_result_free(&conv.res);
	if (rc != APC_OK) {
		close(lfd);
		return rc == APC_EDATA ? 1 : 2;
	}
	so.listen_fd = lfd;
	fprintf(stderr, PROG ": %s: %slistening on %s port %u\n", argv[optind],
		apc_gator_capture_converted(cap) ? "converted, " : "", addr, bound);
	fflush(stderr);

	while (!apc_interrupted()) {
		struct pollfd p = {.fd = lfd, .events = POLLIN};
		struct apc_gator_serve_stats st;
		int n = poll(&p, 1, 500), fd;

		if (n <= 0)
			continue;
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0)
			continue;
		rc = apc_gator_agent_session(cap, fd, &so, &st, &err);
		close(fd);
		if (verbose || (rc != APC_OK && !quiet && st.started))
			fprintf(stderr, PROG ": connection: %llu commands, %llu frames, %llu bytes%s%s%s\n",
				(unsigned long long)st.commands, (unsigned long long)st.frames,
				(unsigned long long)st.bytes, st.ended ? ", end of sequence sent" : "",
				rc != APC_OK ? ": " : "", rc != APC_OK ? apc_err_format(&err, msg, sizeof msg) : "");
		if (once && st.started) {
			status = rc == APC_OK ? 0 : 1;
			break;
		}
	}
	close(lfd);
	apc_gator_capture_close(cap);
	return status;
}
