/*
 * test_gator.c - the target-host protocol against scripted peers.  Each
 * test puts the code under test on one end of a socketpair (or a
 * loopback socket) and a forked child on the other, playing Streamline
 * or the agent byte by byte.  Children are bounded by alarm(); every
 * read in the parent has a timeout.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "frame.h"
#include "gator.h"
#include "t.h"
#include "util.h"

#define TMO 3000 /* ms: generous for a loaded machine, short enough to fail fast */

/* ---- fixtures ------------------------------------------------------------ */

static char tmproot[256];

static const char *tmpdir(void)
{
	if (!tmproot[0]) {
		const char *t = getenv("TMPDIR");
		snprintf(tmproot, sizeof tmproot, "%s/test_gator-XXXXXX", t && *t ? t : "/tmp");
		if (!mkdtemp(tmproot))
			tmproot[0] = 0;
	}
	return tmproot;
}

static void write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (f) {
		fwrite(p, 1, n, f);
		fclose(f);
	}
}

static uint8_t *read_file(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	uint8_t *p;
	long l;

	*n = 0;
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	l = ftell(f);
	fseek(f, 0, SEEK_SET);
	p = malloc((size_t)l + 1);
	if (p && fread(p, 1, (size_t)l, f) != (size_t)l) {
		free(p);
		p = NULL;
	}
	fclose(f);
	if (p)
		*n = (size_t)l;
	return p;
}

static const char CAPTURED[] =
	"<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
	"<captured version=\"1\" protocol=\"680\" created=\"1\">\n"
	"  <target name=\"t\" sample_rate=\"1000\" cores=\"1\" cpuid=\"0xd03\"/>\n"
	"  <counters>\n"
	"    <counter key=\"0x3\" type=\"ARMv8_Cortex_A53_cnt0\" event=\"0x8\"/>\n"
	"    <counter key=\"0x4\" type=\"Linux_a&amp;b\"/>\n"
	"    <counter key=\"0x5\" counter=\"ARM_Mali-CONST\" class=\"constant\"/>\n"
	"  </counters>\n</captured>\n";
static const char EVENTS[] = "<?xml version=\"1.0\"?>\n<events>\n"
			     "<category name=\"Cat\"><event counter=\"X\" title=\"T\" name=\"N\"/></category>\n"
			     "</events>\n";

/*
 * The data file: three frames, length words little-endian.  Bodies are
 * [type][core?] then opaque bytes: the agent must pass them through as is.
 */
static const uint8_t DATA[] = {
	0x03, 0x00, 0x00, 0x00, /* frame 0: 3 bytes */
	0x01, 0xaa, 0xbb,       /*   type 1 (summary), two bytes */
	0x02, 0x00, 0x00, 0x00, /* frame 1: 2 bytes */
	0x04, 0x11,             /*   type 4 (counter), one byte */
	0x04, 0x00, 0x00, 0x00, /* frame 2: 4 bytes */
	0x05, 0x00, 0x00, 0x01, /*   type 5 (block counter), core 0, key 0, ts 1 */
};

/* An .apc folder with the fixture files; returns its path (static). */
static const char *make_capture(void)
{
	static char dir[512];
	char p[600];

	snprintf(dir, sizeof dir, "%s/fixture.apc", tmpdir());
	mkdir(dir, 0755);
	snprintf(p, sizeof p, "%s/captured.xml", dir);
	write_file(p, CAPTURED, sizeof CAPTURED - 1);
	snprintf(p, sizeof p, "%s/events.xml", dir);
	write_file(p, EVENTS, sizeof EVENTS - 1);
	snprintf(p, sizeof p, "%s/0000000000", dir);
	write_file(p, DATA, sizeof DATA);
	return dir;
}

/* ---- scripted peers --------------------------------------------------------- */

/*
 * Fork a peer on one end of a socketpair; the parent gets the other end.
 * The child exits 0 when its script went as expected.
 */
static int spawn(int (*peer)(int fd, void *ctx), void *ctx, pid_t *pid)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return -1;
	fflush(NULL);
	*pid = fork();
	if (*pid == 0) {
		close(sv[0]);
		alarm(10);
		_exit(peer(sv[1], ctx));
	}
	close(sv[1]);
	return sv[0];
}

static int reap(pid_t pid)
{
	int st = 0;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 100 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

static int put(int fd, const void *p, size_t n)
{
	struct apc_err e;
	return apc_gator_write(fd, p, n, TMO, &e) == APC_OK ? 0 : 1;
}

static int resp(int fd, int code, const char *body)
{
	struct apc_err e;
	return apc_gator_send(fd, code, body, body ? strlen(body) : 0, TMO, &e) == APC_OK ? 0 : 1;
}

/* Read one command; 0 if its code is `code` (and its body holds `has`). */
static int expect(int fd, int code, const char *has)
{
	struct apc_gator_msg m;
	struct apc_err e;
	int ok;

	if (apc_gator_recv(fd, &m, APC_GATOR_XML_MAX, TMO, &e) != APC_OK)
		return 1;
	ok = m.code == code && (!has || strstr((const char *)m.body, has));
	apc_gator_msg_free(&m);
	return ok ? 0 : 1;
}

/* The agent's half of the magic: wait for STREAMLINE, answer GATOR 680. */
static int agent_magic(int fd)
{
	struct apc_err e;
	if (apc_gator_magic_agent(fd, TMO, &e) != APC_OK)
		return 1;
	return put(fd, "GATOR 680\n", 10);
}

static int frame_sink(void *ctx, const uint8_t *body, uint32_t len, struct apc_err *err)
{
	struct apc_buf *b = ctx;
	(void)err;
	if (apc_buf_reserve(b, len) != 0)
		return APC_ENOMEM;
	apc_buf_put_bytes(b, body, len);
	return APC_OK;
}

/* ---- codec ---------------------------------------------------------------------- */

static void header_bytes(void)
{
	int sv[2];
	uint8_t got[16];
	struct apc_err e;
	/* code 1, length 3 as int32 LE, body "abc" */
	static const uint8_t want[] = {0x01, 0x03, 0x00, 0x00, 0x00, 'a', 'b', 'c'};
	struct apc_gator_msg m;

	T_ASSERT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	T_EQ_INT(apc_gator_send(sv[0], 1, "abc", 3, TMO, &e), APC_OK);
	T_EQ_INT(apc_gator_read(sv[1], got, sizeof want, TMO, &e), APC_OK);
	T_EQ_MEM(got, want, sizeof want);
	/* And back: a 300-byte body has length bytes 2c 01 00 00. */
	char body[300];
	memset(body, 'x', sizeof body);
	T_EQ_INT(apc_gator_send(sv[1], APC_GATOR_RESP_XML, body, sizeof body, TMO, &e), APC_OK);
	T_EQ_INT(apc_gator_recv(sv[0], &m, 1000, TMO, &e), APC_OK);
	T_EQ_INT(m.code, APC_GATOR_RESP_XML);
	T_EQ_INT(m.len, 300);
	T_EQ_INT(m.body[300], 0);
	apc_gator_msg_free(&m);
	close(sv[1]);
	/* A clean close between messages is APC_END, not an error. */
	T_EQ_INT(apc_gator_recv(sv[0], &m, 1000, TMO, &e), APC_END);
	close(sv[0]);
}

static void oversized_lengths(void)
{
	int sv[2];
	struct apc_err e;
	struct apc_gator_msg m;
	static const uint8_t big[] = {0x03, 0x01, 0x00, 0x10, 0x00};   /* 1 MiB + 1 */
	static const uint8_t neg[] = {0x03, 0x00, 0x00, 0x00, 0x80};   /* INT32_MIN */
	static const uint8_t fits[] = {0x04, 0x00, 0x00, 0x00, 0x00};  /* ACK, empty */

	T_ASSERT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	T_ASSERT(write(sv[1], big, 5) == 5);
	T_EQ_INT(apc_gator_recv(sv[0], &m, APC_GATOR_CMD_MAX, TMO, &e), APC_EDATA);
	T_ASSERT(strstr(e.msg, "1048577") != NULL);
	T_ASSERT(m.body == NULL);
	T_ASSERT(write(sv[1], neg, 5) == 5);
	T_EQ_INT(apc_gator_recv(sv[0], &m, APC_GATOR_CMD_MAX, TMO, &e), APC_EDATA);
	T_ASSERT(strstr(e.msg, "-2147483648") != NULL);
	T_ASSERT(write(sv[1], fits, 5) == 5);
	T_EQ_INT(apc_gator_recv(sv[0], &m, APC_GATOR_CMD_MAX, TMO, &e), APC_OK);
	T_EQ_INT(m.code, APC_GATOR_RESP_ACK);
	apc_gator_msg_free(&m);
	close(sv[0]);
	close(sv[1]);
}

static void read_timeout(void)
{
	int sv[2];
	struct apc_err e;
	uint8_t b[5];
	double t0, dt;

	T_ASSERT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	/* Two bytes of a five-byte header, then silence. */
	T_ASSERT(write(sv[1], "\x03\x01", 2) == 2);
	t0 = apc_now();
	T_EQ_INT(apc_gator_read(sv[0], b, 5, 300, &e), APC_EIO);
	dt = apc_now() - t0;
	T_ASSERT(dt >= 0.25 && dt < 2.0);
	T_ASSERT(strstr(e.msg, "timed out") != NULL);
	T_ASSERT(strstr(e.msg, "2 of 5") != NULL);
	/* A close part-way through is an error too, not an end. */
	T_ASSERT(write(sv[1], "\x03", 1) == 1);
	close(sv[1]);
	T_EQ_INT(apc_gator_read(sv[0], b, 5, 300, &e), APC_EIO);
	T_ASSERT(strstr(e.msg, "closed") != NULL);
	close(sv[0]);
}

static void magic_host_discards_junk(void)
{
	int sv[2];
	struct apc_err e;
	int v = 0;
	char got[32] = {0};
	static const char junk[] = "hello\r\nVERSION 999\nGATOR x\nGATOR\n\nGATOR 680\r\n\x04";

	T_ASSERT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	T_ASSERT(write(sv[1], junk, sizeof junk - 1) == (ssize_t)(sizeof junk - 1));
	T_EQ_INT(apc_gator_magic_host(sv[0], TMO, &v, &e), APC_OK);
	T_EQ_INT(v, 680);
	/* What we said: exactly the two lines of the spec. */
	T_EQ_INT(read(sv[1], got, sizeof got - 1), 23);
	T_EQ_STR(got, "VERSION 680\nSTREAMLINE\n");
	/* The byte after the magic stays in the socket. */
	uint8_t b = 0;
	T_EQ_INT(apc_gator_read(sv[0], &b, 1, TMO, &e), APC_OK);
	T_EQ_INT(b, 0x04);
	close(sv[0]);
	close(sv[1]);
}

static int endless_junk(int fd, void *ctx)
{
	char line[100];
	(void)ctx;
	memset(line, 'j', sizeof line);
	line[99] = '\n';
	/* More junk than the magic limit; the host must give up, not loop. */
	for (int i = 0; i < 1000; i++)
		if (put(fd, line, sizeof line))
			break;
	return 0;
}

static void magic_host_gives_up(void)
{
	struct apc_err e;
	pid_t pid;
	int v = 0, fd = spawn(endless_junk, NULL, &pid);

	T_EQ_INT(apc_gator_magic_host(fd, TMO, &v, &e), APC_EDATA);
	T_ASSERT(strstr(e.msg, "no magic") != NULL);
	close(fd);
	reap(pid);

	/* A peer that closes during the magic. */
	int sv[2];
	T_ASSERT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	T_ASSERT(write(sv[1], "GATO", 4) == 4);
	shutdown(sv[1], SHUT_WR);
	T_EQ_INT(apc_gator_magic_host(sv[0], TMO, &v, &e), APC_EIO);
	T_ASSERT(strstr(e.msg, "magic") != NULL);
	close(sv[0]);
	close(sv[1]);
}

static void magic_agent(void)
{
	int sv[2];
	struct apc_err e;
	struct apc_gator_msg m;
	static const char in[] = "junk\r\nVERSION 680\r\nSTREAMLINE\r\n\x05\x00\x00\x00\x00";

	T_ASSERT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	T_ASSERT(write(sv[1], in, sizeof in - 1) == (ssize_t)(sizeof in - 1));
	T_EQ_INT(apc_gator_magic_agent(sv[0], TMO, &e), APC_OK);
	T_EQ_INT(apc_gator_recv(sv[0], &m, APC_GATOR_CMD_MAX, TMO, &e), APC_OK);
	T_EQ_INT(m.code, APC_GATOR_CMD_PING);
	apc_gator_msg_free(&m);
	/* Silence instead of STREAMLINE: a timeout, bounded. */
	T_ASSERT(write(sv[1], "VERSION 680\n", 12) == 12);
	double t0 = apc_now();
	T_EQ_INT(apc_gator_magic_agent(sv[0], 200, &e), APC_EIO);
	T_ASSERT(apc_now() - t0 < 2.0);
	close(sv[0]);
	close(sv[1]);
}

/* ---- XML helpers ------------------------------------------------------------------ */

static void xml_helpers(void)
{
	char *s, host[64], why[128];
	unsigned port, d;

	s = apc_gator_counters_from_captured(CAPTURED, sizeof CAPTURED - 1);
	T_ASSERT(s && strstr(s, "<counter name=\"ARMv8_Cortex_A53_cnt0\"/>"));
	T_ASSERT(s && strstr(s, "<counter name=\"Linux_a&amp;b\"/>"));
	T_ASSERT(s && strstr(s, "<counter name=\"ARM_Mali-CONST\"/>"));
	free(s);
	s = apc_gator_defaults_from_captured(CAPTURED, sizeof CAPTURED - 1);
	T_ASSERT(s && strstr(s, "<configurations revision=\"3\">"));
	T_ASSERT(s && strstr(s, "<configuration counter=\"ARMv8_Cortex_A53_cnt0\" event=\"0x8\"/>"));
	free(s);
	s = apc_gator_config_xml("A_cnt0:0x11,B");
	T_ASSERT(s && strstr(s, "<configuration counter=\"A_cnt0\" event=\"0x11\"/>"));
	T_ASSERT(s && strstr(s, "<configuration counter=\"B\"/>"));
	free(s);
	T_ASSERT(apc_gator_config_xml("") == NULL);
	T_ASSERT(apc_gator_config_xml("A,,B") == NULL);
	T_ASSERT(apc_gator_config_xml("A:zz") == NULL);

	struct apc_gator_session so = {.duration = 7, .sample_rate = "low"};
	s = apc_gator_session_xml(&so);
	T_EQ_INT(apc_gator_session_check(s, strlen(s), &d, why, sizeof why), 0);
	T_EQ_INT(d, 7);
	T_ASSERT(strstr(s, "sample_rate=\"low\"") != NULL);
	free(s);
	static const char bad1[] = "<session duration=\"-3\"/>";
	static const char bad2[] = "<session buffer_mode=\"huge\"/>";
	T_EQ_INT(apc_gator_session_check(bad1, sizeof bad1 - 1, &d, why, sizeof why), -1);
	T_ASSERT(strstr(why, "duration") != NULL);
	T_EQ_INT(apc_gator_session_check(bad2, sizeof bad2 - 1, &d, why, sizeof why), -1);
	T_EQ_INT(apc_gator_session_check("<other/>", 8, &d, why, sizeof why), -1);

	/* Comments with '>' and quotes do not confuse the scanner. */
	static const char tricky[] = "<?xml version='1.0'?><!-- <request type=\"no\"> -->"
				     "<request a='x>y' type = \"ca&lt;p\" />";
	struct apc_gator_xml_iter it;
	struct apc_gator_xml_elem e;
	char v[32];
	apc_gator_xml_init(&it, tricky, sizeof tricky - 1);
	T_EQ_INT(apc_gator_xml_next(&it, &e), 1);
	T_ASSERT(apc_gator_xml_is(&e, "request"));
	T_EQ_INT(apc_gator_xml_attr(&e, "type", v, sizeof v), 1);
	T_EQ_STR(v, "ca<p");
	T_EQ_INT(apc_gator_xml_attr(&e, "a", v, sizeof v), 1);
	T_EQ_STR(v, "x>y");
	T_EQ_INT(apc_gator_xml_attr(&e, "nope", v, sizeof v), 0);
	T_EQ_INT(apc_gator_xml_next(&it, &e), 0);

	T_EQ_INT(apc_gator_split_hostport("board", 8080, host, sizeof host, &port), 0);
	T_EQ_STR(host, "board");
	T_EQ_INT(port, 8080);
	T_EQ_INT(apc_gator_split_hostport("10.0.0.2:5000", 8080, host, sizeof host, &port), 0);
	T_EQ_STR(host, "10.0.0.2");
	T_EQ_INT(port, 5000);
	T_EQ_INT(apc_gator_split_hostport("[::1]:81", 8080, host, sizeof host, &port), 0);
	T_EQ_STR(host, "::1");
	T_EQ_INT(port, 81);
	T_EQ_INT(apc_gator_split_hostport("::1", 8080, host, sizeof host, &port), 0);
	T_EQ_STR(host, "::1");
	T_EQ_INT(apc_gator_split_hostport("h:70000", 8080, host, sizeof host, &port), -1);
	T_EQ_INT(apc_gator_split_hostport("h:", 8080, host, sizeof host, &port), -1);
	T_EQ_INT(apc_gator_split_hostport(":80", 8080, host, sizeof host, &port), -1);
}

/* ---- the agent side, driven by a scripted Streamline ------------------------------- */

struct agent_run {
	const char *capture;
	int rc;
};

static int run_agent(int fd, void *ctx)
{
	struct agent_run *a = ctx;
	struct apc_gator_capture *c;
	struct apc_gator_serve_opts o = {.timeout_ms = TMO, .listen_fd = -1};
	struct apc_gator_serve_stats st;
	struct apc_err e;
	int rc;

	if (apc_gator_capture_open(a->capture, &c, NULL, &e) != APC_OK)
		return 90;
	rc = apc_gator_agent_session(c, fd, &o, &st, &e);
	apc_gator_capture_close(c);
	/* Exit code tells the parent how the session ended. */
	return rc == APC_OK ? (st.ended ? 10 : 11) : rc == APC_EDATA ? 20 : 30;
}

/* Send a command as Streamline and read the response. */
static int ask(int fd, int code, const char *body, struct apc_gator_msg *m)
{
	struct apc_err e;
	int rc = apc_gator_send(fd, code, body, body ? strlen(body) : 0, TMO, &e);
	if (rc == APC_OK)
		rc = apc_gator_recv(fd, m, APC_GATOR_XML_MAX, TMO, &e);
	return rc;
}

static int streamline_magic(int fd)
{
	struct apc_err e;
	int v = 0;
	return apc_gator_magic_host(fd, TMO, &v, &e) == APC_OK && v == 680;
}

static void agent_full_session(void)
{
	struct agent_run a = {.capture = make_capture()};
	struct apc_gator_msg m;
	struct apc_err e;
	pid_t pid;
	int fd = spawn(run_agent, &a, &pid);
	char *req;

	T_ASSERT(streamline_magic(fd));
	req = apc_gator_request_xml("events");
	T_EQ_INT(ask(fd, APC_GATOR_CMD_REQUEST_XML, req, &m), APC_OK);
	free(req);
	T_EQ_INT(m.code, APC_GATOR_RESP_XML);
	T_EQ_INT(m.len, sizeof EVENTS - 1);
	T_EQ_MEM(m.body, EVENTS, sizeof EVENTS - 1);
	apc_gator_msg_free(&m);

	req = apc_gator_request_xml("counters");
	T_EQ_INT(ask(fd, APC_GATOR_CMD_REQUEST_XML, req, &m), APC_OK);
	free(req);
	T_EQ_INT(m.code, APC_GATOR_RESP_XML);
	T_ASSERT(strstr((char *)m.body, "<counter name=\"ARMv8_Cortex_A53_cnt0\"/>") != NULL);
	apc_gator_msg_free(&m);

	req = apc_gator_request_xml("defaults");
	T_EQ_INT(ask(fd, APC_GATOR_CMD_REQUEST_XML, req, &m), APC_OK);
	free(req);
	T_EQ_INT(m.code, APC_GATOR_RESP_XML);
	T_ASSERT(strstr((char *)m.body, "revision=\"3\"") != NULL);
	apc_gator_msg_free(&m);

	/* Unknown request type: NAK with gatord's message, the session goes on. */
	req = apc_gator_request_xml("bogus");
	T_EQ_INT(ask(fd, APC_GATOR_CMD_REQUEST_XML, req, &m), APC_OK);
	free(req);
	T_EQ_INT(m.code, APC_GATOR_RESP_NAK);
	T_EQ_STR((char *)m.body, "Unknown request");
	apc_gator_msg_free(&m);

	/* A configuration of revision 3 is kept and given back. */
	char *cfg = apc_gator_config_xml("Only_this");
	T_EQ_INT(ask(fd, APC_GATOR_CMD_DELIVER_XML, cfg, &m), APC_OK);
	T_EQ_INT(m.code, APC_GATOR_RESP_ACK);
	apc_gator_msg_free(&m);
	req = apc_gator_request_xml("configuration");
	T_EQ_INT(ask(fd, APC_GATOR_CMD_REQUEST_XML, req, &m), APC_OK);
	T_EQ_STR((char *)m.body, cfg);
	apc_gator_msg_free(&m);
	free(cfg);
	/* Revision 2 is ACKed and replaced by the defaults. */
	T_EQ_INT(ask(fd, APC_GATOR_CMD_DELIVER_XML,
		     "<configurations revision=\"2\"><configuration counter=\"Old\"/></configurations>", &m),
		 APC_OK);
	T_EQ_INT(m.code, APC_GATOR_RESP_ACK);
	apc_gator_msg_free(&m);
	T_EQ_INT(ask(fd, APC_GATOR_CMD_REQUEST_XML, req, &m), APC_OK);
	T_ASSERT(strstr((char *)m.body, "Old") == NULL);
	T_ASSERT(strstr((char *)m.body, "ARMv8_Cortex_A53_cnt0") != NULL);
	apc_gator_msg_free(&m);
	free(req);

	/* Unknown XML delivered: NAK. */
	T_EQ_INT(ask(fd, APC_GATOR_CMD_DELIVER_XML, "<foo/>", &m), APC_OK);
	T_EQ_INT(m.code, APC_GATOR_RESP_NAK);
	apc_gator_msg_free(&m);
	T_EQ_INT(ask(fd, APC_GATOR_CMD_DELIVER_XML, "<session version=\"1\" duration=\"0\"/>", &m), APC_OK);
	T_EQ_INT(m.code, APC_GATOR_RESP_ACK);
	apc_gator_msg_free(&m);
	T_EQ_INT(ask(fd, APC_GATOR_CMD_PING, NULL, &m), APC_OK);
	T_EQ_INT(m.code, APC_GATOR_RESP_ACK);
	apc_gator_msg_free(&m);
	req = apc_gator_request_xml("captured");
	T_EQ_INT(ask(fd, APC_GATOR_CMD_REQUEST_XML, req, &m), APC_OK);
	free(req);
	T_EQ_INT(m.len, sizeof CAPTURED - 1);
	T_EQ_MEM(m.body, CAPTURED, sizeof CAPTURED - 1);
	apc_gator_msg_free(&m);

	/* APC Start: the three frames as APC data, then End of Sequence. */
	T_EQ_INT(apc_gator_send(fd, APC_GATOR_CMD_APC_START, NULL, 0, TMO, &e), APC_OK);
	size_t off = 0;
	for (int i = 0; i < 3; i++) {
		T_EQ_INT(apc_gator_recv(fd, &m, APC_GATOR_XML_MAX, TMO, &e), APC_OK);
		T_EQ_INT(m.code, APC_GATOR_RESP_APC_DATA);
		uint32_t len = DATA[off];
		T_EQ_INT(m.len, len);
		T_EQ_MEM(m.body, DATA + off + 4, len);
		off += 4 + len;
		apc_gator_msg_free(&m);
	}
	T_EQ_INT(apc_gator_recv(fd, &m, APC_GATOR_XML_MAX, TMO, &e), APC_OK);
	T_EQ_INT(m.code, APC_GATOR_RESP_APC_DATA);
	T_EQ_INT(m.len, 0);
	apc_gator_msg_free(&m);
	close(fd);
	T_EQ_INT(reap(pid), 10);
}

static void agent_unknown_command(void)
{
	struct agent_run a = {.capture = make_capture()};
	struct apc_gator_msg m;
	pid_t pid;
	int fd = spawn(run_agent, &a, &pid);

	T_ASSERT(streamline_magic(fd));
	/* Command 7 before Start: Error (as gatord 6.8 does) and the agent closes. */
	T_EQ_INT(ask(fd, 7, NULL, &m), APC_OK);
	T_EQ_INT(m.code, APC_GATOR_RESP_ERROR);
	T_EQ_STR((char *)m.body, "Unknown command type, 7");
	apc_gator_msg_free(&m);
	close(fd);
	T_EQ_INT(reap(pid), 20);
}

static void agent_oversized_command(void)
{
	struct agent_run a = {.capture = make_capture()};
	struct apc_gator_msg m;
	struct apc_err e;
	pid_t pid;
	int fd = spawn(run_agent, &a, &pid);
	/* Deliver XML of 2 MiB: only the header is sent; the agent must not wait for the body. */
	static const uint8_t hdr[] = {0x01, 0x00, 0x00, 0x20, 0x00};

	T_ASSERT(streamline_magic(fd));
	T_EQ_INT(put(fd, hdr, 5), 0);
	T_EQ_INT(apc_gator_recv(fd, &m, APC_GATOR_XML_MAX, TMO, &e), APC_OK);
	T_EQ_INT(m.code, APC_GATOR_RESP_ERROR);
	T_EQ_STR((char *)m.body, "Invalid length received, 2097152");
	apc_gator_msg_free(&m);
	close(fd);
	T_EQ_INT(reap(pid), 20);
}

static void agent_bad_session_and_stop(void)
{
	struct agent_run a = {.capture = make_capture()};
	struct apc_gator_msg m;
	struct apc_err e;
	pid_t pid;
	int fd = spawn(run_agent, &a, &pid);

	T_ASSERT(streamline_magic(fd));
	T_EQ_INT(ask(fd, APC_GATOR_CMD_DELIVER_XML, "<session duration=\"soon\"/>", &m), APC_OK);
	T_EQ_INT(m.code, APC_GATOR_RESP_ERROR);
	T_ASSERT(strstr((char *)m.body, "duration") != NULL);
	apc_gator_msg_free(&m);
	close(fd);
	T_EQ_INT(reap(pid), 20);

	/* Start, then Stop at once: End of Sequence still arrives, last. */
	fd = spawn(run_agent, &a, &pid);
	T_ASSERT(streamline_magic(fd));
	static const uint8_t start_stop[] = {0x02, 0, 0, 0, 0, 0x05, 0, 0, 0, 0, 0x03, 0, 0, 0, 0};
	T_EQ_INT(put(fd, start_stop, sizeof start_stop), 0);
	int eos = 0, acks = 0, frames = 0;
	while (apc_gator_recv(fd, &m, APC_GATOR_XML_MAX, TMO, &e) == APC_OK) {
		if (m.code == APC_GATOR_RESP_APC_DATA && m.len == 0)
			eos++;
		else if (m.code == APC_GATOR_RESP_APC_DATA)
			frames += !eos;
		else if (m.code == APC_GATOR_RESP_ACK)
			acks++;
		apc_gator_msg_free(&m);
	}
	T_EQ_INT(eos, 1);
	T_ASSERT(frames <= 3);
	T_ASSERT(acks <= 1);
	close(fd);
	T_EQ_INT(reap(pid), 10);

	/* Streamline goes away without a word: the agent notices, no hang. */
	fd = spawn(run_agent, &a, &pid);
	T_ASSERT(streamline_magic(fd));
	close(fd);
	T_EQ_INT(reap(pid), 30);
}

/* ---- the host side, against a scripted agent -------------------------------------- */

enum agent_script { S_ERROR_MID, S_SILENT, S_PING, S_CLOSE_MID, S_NAK_DEFAULTS };

static int scripted_agent(int fd, void *ctx)
{
	enum agent_script s = *(enum agent_script *)ctx;
	int bad = 0;

	bad |= agent_magic(fd);
	if (s == S_NAK_DEFAULTS) {
		bad |= expect(fd, 0, "events") || resp(fd, 1, "<events/>");
		bad |= expect(fd, 0, "counters") || resp(fd, 1, "<counters/>");
		bad |= expect(fd, 0, "configuration") || resp(fd, 1, "<configurations/>");
		bad |= expect(fd, 0, "defaults") || resp(fd, 5, "no defaults here");
		return bad;
	}
	bad |= expect(fd, 1, "<session");
	bad |= resp(fd, 4, NULL);
	bad |= expect(fd, 0, "captured");
	bad |= resp(fd, 1, CAPTURED);
	bad |= expect(fd, 2, NULL);
	bad |= resp(fd, 3, "\x01\x02");
	switch (s) {
	case S_ERROR_MID:
		bad |= resp(fd, 3, "\x04\x05\x06");
		bad |= resp(fd, 0xff, "Boom: out of buffer");
		sleep(1);
		break;
	case S_SILENT:
		/* Keep the socket open and say nothing: only the timeout ends this. */
		sleep(5);
		break;
	case S_PING:
		bad |= expect(fd, 5, NULL);
		bad |= resp(fd, 4, NULL);
		bad |= resp(fd, 3, "\x07");
		bad |= resp(fd, 3, NULL);
		break;
	case S_CLOSE_MID:
	case S_NAK_DEFAULTS:
		break;
	}
	return bad;
}

struct host_run {
	struct apc_buf frames;
	struct apc_gator_record_result r;
	struct apc_err e;
	int rc;
	double secs;
	int peer;
};

static void host_run(enum agent_script s, int timeout_ms, int ping_ms, struct host_run *h)
{
	static const char session[] = "<session version=\"1\" duration=\"0\"/>";
	struct apc_gator_capture_cb cb = {.on_frame = frame_sink};
	char *captured = NULL;
	size_t clen = 0;
	pid_t pid;
	int fd;

	memset(h, 0, sizeof *h);
	cb.ctx = &h->frames;
	fd = spawn(scripted_agent, &s, &pid);
	double t0 = apc_now();
	h->rc = apc_gator_host_capture(fd, session, sizeof session - 1, 0, timeout_ms, ping_ms, &cb,
				       &captured, &clen, &h->r, &h->e);
	h->secs = apc_now() - t0;
	if (h->rc != APC_EIO)
		T_EQ_MEM(captured, CAPTURED, sizeof CAPTURED - 1);
	free(captured);
	close(fd);
	if (s == S_SILENT)
		kill(pid, SIGKILL); /* it would otherwise sleep on */
	h->peer = reap(pid);
}

static void host_error_mid_capture(void)
{
	struct host_run h;

	host_run(S_ERROR_MID, TMO, 1000, &h);
	T_EQ_INT(h.rc, APC_EDATA);
	T_EQ_INT(h.r.frames, 2);
	T_EQ_INT(h.frames.len, 5);
	T_EQ_MEM(h.frames.p, "\x01\x02\x04\x05\x06", 5);
	T_ASSERT(strstr(h.e.msg, "Boom: out of buffer") != NULL);
	T_EQ_INT(h.r.ended, 0);
	apc_buf_free(&h.frames);
}

static void host_silent_agent(void)
{
	struct host_run h;

	host_run(S_SILENT, 600, 100, &h);
	T_EQ_INT(h.rc, APC_EDATA);
	T_EQ_INT(h.r.frames, 1);
	T_ASSERT(h.r.pings >= 2);
	T_EQ_INT(h.r.acks, 0);
	T_ASSERT(strstr(h.e.msg, "sent nothing") != NULL);
	T_ASSERT(h.secs >= 0.5 && h.secs < 3.0);
	apc_buf_free(&h.frames);
}

static void host_ping_acked(void)
{
	struct host_run h;

	host_run(S_PING, TMO, 100, &h);
	T_EQ_INT(h.rc, APC_OK);
	T_EQ_INT(h.r.ended, 1);
	T_EQ_INT(h.r.frames, 2);
	T_ASSERT(h.r.pings >= 1);
	T_EQ_INT(h.r.acks, 1);
	T_EQ_INT(h.peer, 0);
	apc_buf_free(&h.frames);
}

static void host_connection_lost(void)
{
	struct host_run h;

	host_run(S_CLOSE_MID, TMO, 1000, &h);
	T_EQ_INT(h.rc, APC_EDATA);
	T_EQ_INT(h.r.frames, 1);
	T_ASSERT(strstr(h.e.msg, "closed") != NULL);
	T_EQ_INT(h.peer, 0);
	apc_buf_free(&h.frames);
}

static void host_setup_nak(void)
{
	enum agent_script s = S_NAK_DEFAULTS;
	struct apc_gator_setup setup;
	struct apc_err e;
	pid_t pid;
	int fd = spawn(scripted_agent, &s, &pid);

	T_EQ_INT(apc_gator_host_setup(fd, NULL, TMO, &setup, &e), APC_EIO);
	T_ASSERT(strstr(e.msg, "NAK") != NULL);
	T_ASSERT(strstr(e.msg, "no defaults here") != NULL);
	T_ASSERT(setup.events && strcmp(setup.events, "<events/>") == 0);
	apc_gator_setup_free(&setup);
	close(fd);
	T_EQ_INT(reap(pid), 0);
}

/* ---- both sides, over loopback TCP, through apc_gator_record ------------------------ */

static void record_over_loopback(void)
{
	struct apc_gator_record_opts o = {0};
	struct apc_gator_record_result r;
	struct apc_err e;
	const char *cap = make_capture();
	char out[600], p[700];
	unsigned port;
	int lfd;
	pid_t pid;

	T_EQ_INT(apc_gator_listen("127.0.0.1", 0, &lfd, &port, &e), APC_OK);
	T_ASSERT(port > 0);
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		struct apc_gator_capture *c;
		struct apc_gator_serve_opts so = {.timeout_ms = TMO, .listen_fd = lfd};
		struct apc_gator_serve_stats st;
		int ended = 0;
		alarm(10);
		if (apc_gator_capture_open(cap, &c, NULL, &e) != APC_OK)
			_exit(90);
		/* Two connections, as Streamline makes them. */
		for (int i = 0; i < 2; i++) {
			int fd = accept(lfd, NULL, NULL);
			if (fd < 0)
				_exit(91);
			apc_gator_agent_session(c, fd, &so, &st, &e);
			ended += st.ended;
			close(fd);
		}
		apc_gator_capture_close(c);
		_exit(ended == 1 ? 0 : 92);
	}
	close(lfd);
	snprintf(out, sizeof out, "%s/rec", tmpdir());
	o.host = "127.0.0.1";
	o.port = port;
	o.output = out;
	o.timeout_ms = TMO;
	o.counters = "ARMv8_Cortex_A53_cnt0:0x8";
	T_EQ_INT(apc_gator_record(&o, &r, &e), APC_OK);
	T_EQ_INT(reap(pid), 0);
	T_EQ_INT(r.frames, 3);
	T_EQ_INT(r.agent_version, 680);
	snprintf(p, sizeof p, "%s/rec.apc", tmpdir());
	T_EQ_STR(r.output, p);
	size_t n;
	snprintf(p, sizeof p, "%s/rec.apc/0000000000", tmpdir());
	uint8_t *d = read_file(p, &n);
	T_EQ_INT(n, sizeof DATA);
	if (d && n == sizeof DATA)
		T_EQ_MEM(d, DATA, sizeof DATA);
	free(d);
	snprintf(p, sizeof p, "%s/rec.apc/events.xml", tmpdir());
	d = read_file(p, &n);
	T_EQ_INT(n, sizeof EVENTS - 1);
	free(d);
	/* The output exists now: a second run refuses before connecting. */
	o.port = 1;
	T_EQ_INT(apc_gator_record(&o, &r, &e), APC_EIO);
	T_ASSERT(strstr(e.msg, "exists") != NULL);
	/* Nobody listening: APC_EIO and nothing written. */
	snprintf(out, sizeof out, "%s/none", tmpdir());
	T_EQ_INT(apc_gator_record(&o, &r, &e), APC_EIO);
	snprintf(p, sizeof p, "%s/none.apc", tmpdir());
	T_ASSERT(access(p, F_OK) != 0);
}

static void cleanup(void)
{
	char cmd[600];
	if (tmproot[0] && strstr(tmproot, "test_gator-")) {
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmproot);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", tmproot);
	}
}

void run_tests(void)
{
	signal(SIGPIPE, SIG_IGN);
	T_RUN(header_bytes);
	T_RUN(oversized_lengths);
	T_RUN(read_timeout);
	T_RUN(magic_host_discards_junk);
	T_RUN(magic_host_gives_up);
	T_RUN(magic_agent);
	T_RUN(xml_helpers);
	T_RUN(agent_full_session);
	T_RUN(agent_unknown_command);
	T_RUN(agent_oversized_command);
	T_RUN(agent_bad_session_and_stop);
	T_RUN(host_error_mid_capture);
	T_RUN(host_silent_agent);
	T_RUN(host_ping_acked);
	T_RUN(host_connection_lost);
	T_RUN(host_setup_nak);
	T_RUN(record_over_loopback);
	cleanup();
}
