/*
 * gator.c - the Streamline target-host protocol: codec, host side
 * (apcrecord) and agent side (apcserve).  See gator.h for the contract
 * and DESIGN.md for how a real gatord 6.8 speaks it.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <libxml/tree.h>

#include "bytes.h"
#include "frame.h"
#include "gator.h"
#include "input.h"
#include "pipeline.h"
#include "util.h"
#include "xml.h"

/* ---- small helpers ------------------------------------------------------ */

static int64_t gator_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Set on the host side until APC Start: a request to stop (SIGINT,
 * SIGTERM) then ends any wait at once, as there is no capture to drain.
 */
static int gator_stop_early;

/* A timeout in the unit of the --timeout options: "30 s", "1.5 s", "250 ms". */
static const char *gator_dur(char *buf, size_t len, int ms)
{
	if (ms >= 1000 && ms % 1000 == 0)
		snprintf(buf, len, "%d s", ms / 1000);
	else if (ms >= 1000)
		snprintf(buf, len, "%.1f s", ms / 1000.0);
	else
		snprintf(buf, len, "%d ms", ms);
	return buf;
}

static char *gator_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *gator_printf(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

/* A growable string for building XML. */
struct gator_str {
	char *p;
	size_t len, cap;
	int failed;
};

static void gator_str_add(struct gator_str *s, const char *t, size_t n)
{
	if (s->failed)
		return;
	if (s->len + n + 1 > s->cap) {
		size_t cap = s->cap ? s->cap : 256;
		while (cap < s->len + n + 1)
			cap *= 2;
		char *q = realloc(s->p, cap);
		if (!q) {
			s->failed = 1;
			return;
		}
		s->p = q;
		s->cap = cap;
	}
	memcpy(s->p + s->len, t, n);
	s->len += n;
	s->p[s->len] = 0;
}

static void gator_str_cat(struct gator_str *s, const char *t)
{
	gator_str_add(s, t, strlen(t));
}

/* Attribute values are escaped: names come from users and captures. */
static void gator_str_attr(struct gator_str *s, const char *name, const char *v)
{
	gator_str_cat(s, " ");
	gator_str_cat(s, name);
	gator_str_cat(s, "=\"");
	for (; *v; v++) {
		switch (*v) {
		case '&': gator_str_cat(s, "&amp;"); break;
		case '<': gator_str_cat(s, "&lt;"); break;
		case '>': gator_str_cat(s, "&gt;"); break;
		case '"': gator_str_cat(s, "&quot;"); break;
		default: gator_str_add(s, v, 1);
		}
	}
	gator_str_cat(s, "\"");
}

static char *gator_str_done(struct gator_str *s)
{
	if (s->failed || !s->p) {
		free(s->p);
		return NULL;
	}
	return s->p;
}

/* ---- sockets ---------------------------------------------------------- */

static int gator_set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

int apc_gator_split_hostport(const char *s, unsigned def_port, char *host, size_t hostlen,
			     unsigned *port)
{
	const char *h = s, *colon = NULL;
	size_t hl;

	if (!s || !*s)
		return -1;
	if (*s == '[') {
		const char *rb = strchr(s, ']');
		if (!rb)
			return -1;
		h = s + 1;
		hl = (size_t)(rb - h);
		if (rb[1] == ':')
			colon = rb + 1;
		else if (rb[1])
			return -1;
	} else {
		colon = strrchr(s, ':');
		/* A bare IPv6 address has several colons and no port. */
		if (colon && strchr(s, ':') != colon)
			colon = NULL;
		hl = colon ? (size_t)(colon - s) : strlen(s);
	}
	if (hl == 0 || hl >= hostlen)
		return -1;
	memcpy(host, h, hl);
	host[hl] = 0;
	*port = def_port;
	if (colon) {
		char *end;
		unsigned long v;
		if (!colon[1])
			return -1;
		errno = 0;
		v = strtoul(colon + 1, &end, 10);
		if (*end || errno || v > 65535 || colon[1] == '-' || colon[1] == '+')
			return -1;
		*port = (unsigned)v;
	}
	return 0;
}

/*
 * "HOST:PORT" ("[::1]:PORT" for an IPv6 address) into buf: what the
 * socket's errors name, as a file's name its errors ("PROG: HOST:PORT:
 * cannot connect: connection refused").
 */
static const char *gator_peer(char *buf, size_t len, const char *host, unsigned port)
{
	snprintf(buf, len, strchr(host, ':') ? "[%s]:%u" : "%s:%u", host, port);
	return buf;
}

int apc_gator_connect(const char *host, unsigned port, int timeout_ms, int *fd,
		      struct apc_err *err)
{
	struct addrinfo hints, *res = NULL, *ai;
	char ps[16];
	int rc, last = ECONNREFUSED;
	int64_t deadline = gator_now_ms() + timeout_ms;

	*fd = -1;
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(ps, sizeof ps, "%u", port);
	rc = getaddrinfo(host, ps, &hints, &res);
	if (rc != 0)
		return apc_err_text(err, APC_EIO, host, "cannot resolve", gai_strerror(rc));
	for (ai = res; ai; ai = ai->ai_next) {
		int s = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (s < 0) {
			last = errno;
			continue;
		}
		gator_set_nonblock(s);
		if (connect(s, ai->ai_addr, ai->ai_addrlen) != 0 && errno != EINPROGRESS) {
			last = errno;
			close(s);
			continue;
		}
		for (;;) {
			struct pollfd p = {.fd = s, .events = POLLOUT};
			int64_t left = deadline - gator_now_ms();
			int n = poll(&p, 1, left > 0 ? (int)left : 0);
			if (n < 0 && errno == EINTR && !apc_interrupted())
				continue;
			if (n <= 0) {
				last = n == 0 ? ETIMEDOUT : errno;
				break;
			}
			int soerr = 0;
			socklen_t sl = sizeof soerr;
			if (getsockopt(s, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0)
				soerr = errno;
			last = soerr;
			break;
		}
		if (last == 0) {
			int one = 1;
			setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
			*fd = s;
			break;
		}
		close(s);
	}
	freeaddrinfo(res);
	if (*fd < 0 && apc_interrupted())
		return apc_err_set(err, APC_EIO, NULL, APC_NO_OFFSET, "interrupted");
	if (*fd < 0) {
		char peer[300];
		return apc_err_sys(err, APC_EIO, gator_peer(peer, sizeof peer, host, port),
				   "cannot connect", last);
	}
	return APC_OK;
}

int apc_gator_listen(const char *addr, unsigned port, int *fd, unsigned *bound,
		     struct apc_err *err)
{
	struct addrinfo hints, *res = NULL, *ai;
	char ps[16];
	int rc, last = EADDRNOTAVAIL;

	*fd = -1;
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE;
	snprintf(ps, sizeof ps, "%u", port);
	rc = getaddrinfo(addr, ps, &hints, &res);
	if (rc != 0)
		return apc_err_text(err, APC_EIO, addr ? addr : "*", "cannot resolve", gai_strerror(rc));
	for (ai = res; ai; ai = ai->ai_next) {
		int one = 1, s = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (s < 0) {
			last = errno;
			continue;
		}
		setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
		if (bind(s, ai->ai_addr, ai->ai_addrlen) != 0 || listen(s, 8) != 0) {
			last = errno;
			close(s);
			continue;
		}
		*fd = s;
		break;
	}
	freeaddrinfo(res);
	if (*fd < 0) {
		char at[300];
		return apc_err_sys(err, APC_EIO, gator_peer(at, sizeof at, addr ? addr : "*", port),
				   "cannot listen", last);
	}
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	*bound = port;
	if (getsockname(*fd, (struct sockaddr *)&ss, &sl) == 0) {
		if (ss.ss_family == AF_INET)
			*bound = ntohs(((struct sockaddr_in *)&ss)->sin_port);
		else if (ss.ss_family == AF_INET6)
			*bound = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	}
	return APC_OK;
}

/* ---- codec ------------------------------------------------------------- */

/*
 * Wait for fd to become ready before the deadline.  1 ready, 0 timed out,
 * -1 error, -2 interrupted.  Once a capture runs a signal does not end the
 * wait early: callers check apc_interrupted() between messages, never in
 * the middle of one.  Before it (gator_stop_early) it does.
 */
static int gator_wait(int fd, short events, int64_t deadline)
{
	for (;;) {
		struct pollfd p = {.fd = fd, .events = events};
		int64_t left = deadline - gator_now_ms();
		/* short slices: a signal just before poll() is seen soon */
		int64_t slice = gator_stop_early ? 200 : 1000000;
		int n;

		if (gator_stop_early && apc_interrupted())
			return -2;
		if (left < 0)
			left = 0;
		n = poll(&p, 1, (int)(left > slice ? slice : left));
		if (n > 0)
			return 1;
		if (n == 0) {
			if (gator_now_ms() >= deadline)
				return 0;
			continue;
		}
		if (errno != EINTR)
			return -1;
	}
}

int apc_gator_read(int fd, void *buf, size_t n, int timeout_ms, struct apc_err *err)
{
	uint8_t *p = buf;
	size_t got = 0;
	int64_t deadline = gator_now_ms() + timeout_ms;

	while (got < n) {
		ssize_t k = recv(fd, p + got, n - got, MSG_DONTWAIT);
		if (k > 0) {
			got += (size_t)k;
			continue;
		}
		if (k == 0) {
			if (got == 0)
				return apc_err_set(err, APC_END, NULL, APC_NO_OFFSET,
						   "the peer closed the connection");
			return apc_err_set(err, APC_EIO, NULL, APC_NO_OFFSET,
					   "the peer closed the connection after %zu of %zu bytes",
					   got, n);
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return apc_err_sys(err, APC_EIO, NULL, "cannot read", errno);
		int w = gator_wait(fd, POLLIN, deadline);
		char d[32];
		if (w == -2)
			return apc_err_set(err, APC_EIO, NULL, APC_NO_OFFSET, "interrupted");
		if (w == 0 && got == 0)
			return apc_err_set(err, APC_EIO, NULL, APC_NO_OFFSET,
					   "timed out after %s waiting for the peer",
					   gator_dur(d, sizeof d, timeout_ms));
		if (w == 0)
			return apc_err_set(err, APC_EIO, NULL, APC_NO_OFFSET,
					   "timed out after %s waiting for the peer (%zu of %zu bytes)",
					   gator_dur(d, sizeof d, timeout_ms), got, n);
		if (w < 0)
			return apc_err_sys(err, APC_EIO, NULL, "cannot wait", errno);
	}
	return APC_OK;
}

int apc_gator_write(int fd, const void *buf, size_t n, int timeout_ms, struct apc_err *err)
{
	const uint8_t *p = buf;
	size_t put = 0;
	int64_t deadline = gator_now_ms() + timeout_ms;

	while (put < n) {
		ssize_t k = send(fd, p + put, n - put, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (k > 0) {
			put += (size_t)k;
			continue;
		}
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return apc_err_sys(err, APC_EIO, NULL, "cannot send", errno);
		int w = gator_wait(fd, POLLOUT, deadline);
		char d[32];
		if (w == -2)
			return apc_err_set(err, APC_EIO, NULL, APC_NO_OFFSET, "interrupted");
		if (w == 0)
			return apc_err_set(err, APC_EIO, NULL, APC_NO_OFFSET,
					   "timed out after %s: the peer does not read",
					   gator_dur(d, sizeof d, timeout_ms));
		if (w < 0)
			return apc_err_sys(err, APC_EIO, NULL, "cannot wait", errno);
	}
	return APC_OK;
}

int apc_gator_send(int fd, int code, const void *body, size_t len, int timeout_ms,
		   struct apc_err *err)
{
	uint8_t h[5];
	int rc;

	if (len > INT32_MAX)
		return apc_err_set(err, APC_EIO, NULL, APC_NO_OFFSET, "message of %zu bytes is too long",
				   len);
	h[0] = (uint8_t)code;
	h[1] = (uint8_t)len;
	h[2] = (uint8_t)(len >> 8);
	h[3] = (uint8_t)(len >> 16);
	h[4] = (uint8_t)(len >> 24);
	/* Small messages go out in one segment (one send, one packet). */
	if (len <= 4096) {
		uint8_t one[5 + 4096];
		memcpy(one, h, 5);
		if (len)
			memcpy(one + 5, body, len);
		return apc_gator_write(fd, one, 5 + len, timeout_ms, err);
	}
	rc = apc_gator_write(fd, h, 5, timeout_ms, err);
	if (rc == APC_OK)
		rc = apc_gator_write(fd, body, len, timeout_ms, err);
	return rc;
}

int apc_gator_recv(int fd, struct apc_gator_msg *m, uint32_t max, int timeout_ms,
		   struct apc_err *err)
{
	uint8_t h[5];
	int32_t len;
	int rc;

	m->code = -1;
	m->len = 0;
	m->body = NULL;
	rc = apc_gator_read(fd, h, 5, timeout_ms, err);
	if (rc != APC_OK)
		return rc;
	m->code = h[0];
	len = (int32_t)apc_le32(h + 1);
	if (len < 0 || (uint32_t)len > max)
		return apc_err_set(err, APC_EDATA, NULL, APC_NO_OFFSET,
				   "message code %d: length %" PRId32 " is over the limit of %" PRIu32,
				   m->code, len, max);
	m->len = (uint32_t)len;
	m->body = malloc((size_t)len + 1);
	if (!m->body)
		return apc_err_set(err, APC_ENOMEM, NULL, APC_NO_OFFSET,
				   "cannot allocate %" PRId32 " bytes", len);
	m->body[len] = 0;
	rc = apc_gator_read(fd, m->body, (size_t)len, timeout_ms, err);
	if (rc == APC_END)
		rc = apc_err_set(err, APC_EIO, NULL, APC_NO_OFFSET,
				 "the peer closed the connection after a message header");
	if (rc != APC_OK) {
		free(m->body);
		m->body = NULL;
	}
	return rc;
}

void apc_gator_msg_free(struct apc_gator_msg *m)
{
	free(m->body);
	m->body = NULL;
	m->len = 0;
}

/*
 * Read one line a byte at a time (the bytes after the magic are binary
 * and must stay in the socket).  Lines longer than the buffer are cut;
 * *total counts every byte and the deadline covers the whole exchange
 * (timeout_ms from its start), so a peer cannot talk forever.
 */
static int gator_read_line(int fd, char *line, size_t cap, size_t *total, int64_t deadline,
			   int timeout_ms, struct apc_err *err)
{
	size_t n = 0;

	for (;;) {
		char c;
		int64_t left = deadline - gator_now_ms();
		int rc;

		if (*total >= APC_GATOR_MAGIC_MAX)
			return apc_err_set(err, APC_EDATA, NULL, APC_NO_OFFSET,
					   "no magic in the first %u bytes from the peer",
					   APC_GATOR_MAGIC_MAX);
		if (left <= 0) {
			char d[32];
			return apc_err_set(err, APC_EIO, NULL, APC_NO_OFFSET,
					   "no magic from the peer within %s",
					   gator_dur(d, sizeof d, timeout_ms));
		}
		rc = apc_gator_read(fd, &c, 1, (int)left, err);
		if (rc == APC_EIO && strncmp(err->msg, "timed out", 9) == 0) {
			char d[32];
			return apc_err_set(err, APC_EIO, NULL, APC_NO_OFFSET,
					   "no magic from the peer within %s",
					   gator_dur(d, sizeof d, timeout_ms));
		}
		if (rc == APC_END)
			return apc_err_set(err, APC_EIO, NULL, APC_NO_OFFSET,
					   "the peer closed the connection during the magic exchange");
		if (rc != APC_OK)
			return rc;
		(*total)++;
		if (c == '\n')
			break;
		if (n + 1 < cap)
			line[n++] = c;
	}
	/* CRLF is fine (gatord accepts it). */
	if (n && line[n - 1] == '\r')
		n--;
	line[n] = 0;
	return APC_OK;
}

int apc_gator_magic_host(int fd, int timeout_ms, int *version, struct apc_err *err)
{
	static const char hello[] = "VERSION 680\nSTREAMLINE\n";
	char line[256];
	size_t total = 0;
	int64_t deadline = gator_now_ms() + timeout_ms;
	int rc = apc_gator_write(fd, hello, sizeof hello - 1, timeout_ms, err);

	while (rc == APC_OK) {
		rc = gator_read_line(fd, line, sizeof line, &total, deadline, timeout_ms, err);
		if (rc != APC_OK)
			break;
		if (strncmp(line, "GATOR ", 6) == 0) {
			char *end;
			long v = strtol(line + 6, &end, 10);
			if (end != line + 6 && *end == 0 && v > 0 && v < 1000000) {
				*version = (int)v;
				return APC_OK;
			}
		}
		/* Anything else is discarded, as the spec asks. */
	}
	return rc;
}

int apc_gator_magic_agent(int fd, int timeout_ms, struct apc_err *err)
{
	char line[256];
	size_t total = 0;
	int64_t deadline = gator_now_ms() + timeout_ms;
	int rc;

	for (;;) {
		rc = gator_read_line(fd, line, sizeof line, &total, deadline, timeout_ms, err);
		if (rc != APC_OK)
			return rc;
		if (strcmp(line, "STREAMLINE") == 0)
			return APC_OK;
	}
}

const char *apc_gator_cmd_name(int code, char *buf, size_t len)
{
	static const char *const names[] = {"request XML", "deliver XML", "APC start",
					    "APC stop", "disconnect", "ping"};

	if (code >= 0 && code < 6)
		return names[code];
	snprintf(buf, len, "command %d", code);
	return buf;
}

/* ---- XML ---------------------------------------------------------------- */

void apc_gator_xml_init(struct apc_gator_xml_iter *it, const char *xml, size_t len)
{
	it->p = xml;
	it->end = xml + len;
}

static int gator_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-' || c == ':' || c == '.';
}

int apc_gator_xml_next(struct apc_gator_xml_iter *it, struct apc_gator_xml_elem *e)
{
	while (it->p < it->end) {
		const char *lt = memchr(it->p, '<', (size_t)(it->end - it->p));
		if (!lt || lt + 1 >= it->end) {
			it->p = it->end;
			return 0;
		}
		const char *q = lt + 1;
		if (it->end - q >= 3 && memcmp(q, "!--", 3) == 0) {
			/* Comments may hold '>' and quotes: skip to "-->". */
			const char *c = q + 3;
			while (c + 2 < it->end && memcmp(c, "-->", 3) != 0)
				c++;
			it->p = c + 3 <= it->end ? c + 3 : it->end;
			continue;
		}
		if (!gator_name_char(*q) || *q == '-' || *q == '.') {
			it->p = q;
			continue; /* </x>, <?xml ?>, <!DOCTYPE> */
		}
		const char *ne = q;
		while (ne < it->end && gator_name_char(*ne))
			ne++;
		/* Find the closing '>' outside quoted attribute values. */
		const char *c = ne;
		char quote = 0;
		while (c < it->end && (quote || *c != '>')) {
			if (quote && *c == quote)
				quote = 0;
			else if (!quote && (*c == '"' || *c == '\''))
				quote = *c;
			c++;
		}
		e->name = q;
		e->name_len = (size_t)(ne - q);
		e->attrs = ne;
		e->attrs_len = (size_t)(c - ne);
		it->p = c < it->end ? c + 1 : it->end;
		return 1;
	}
	return 0;
}

int apc_gator_xml_is(const struct apc_gator_xml_elem *e, const char *name)
{
	size_t n = strlen(name);

	return e->name_len == n && memcmp(e->name, name, n) == 0;
}

static void gator_xml_decode(const char *v, size_t n, char *out, size_t outlen)
{
	static const struct { const char *ent; char c; } ents[] = {
		{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''},
	};
	size_t o = 0;

	for (size_t i = 0; i < n && o + 1 < outlen;) {
		size_t k;
		for (k = 0; k < sizeof ents / sizeof ents[0]; k++) {
			size_t el = strlen(ents[k].ent);
			if (n - i >= el && memcmp(v + i, ents[k].ent, el) == 0) {
				out[o++] = ents[k].c;
				i += el;
				break;
			}
		}
		if (k == sizeof ents / sizeof ents[0])
			out[o++] = v[i++];
	}
	if (outlen)
		out[o] = 0;
}

int apc_gator_xml_attr(const struct apc_gator_xml_elem *e, const char *name, char *out,
		       size_t outlen)
{
	const char *p = e->attrs, *end = e->attrs + e->attrs_len;
	size_t nl = strlen(name);

	while (p < end) {
		while (p < end && !gator_name_char(*p))
			p++;
		const char *an = p;
		while (p < end && gator_name_char(*p))
			p++;
		size_t al = (size_t)(p - an);
		while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
			p++;
		if (p >= end || *p != '=')
			continue;
		p++;
		while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
			p++;
		if (p >= end || (*p != '"' && *p != '\''))
			continue;
		char q = *p++;
		const char *v = p;
		while (p < end && *p != q)
			p++;
		if (al == nl && memcmp(an, name, nl) == 0) {
			gator_xml_decode(v, (size_t)(p - v), out, outlen);
			return 1;
		}
		if (p < end)
			p++;
	}
	return 0;
}

void apc_gator_xml_root(const char *xml, size_t len, char *out, size_t outlen)
{
	struct apc_gator_xml_iter it;
	struct apc_gator_xml_elem e;

	if (outlen)
		out[0] = 0;
	apc_gator_xml_init(&it, xml, len);
	if (apc_gator_xml_next(&it, &e) && outlen) {
		size_t n = e.name_len < outlen - 1 ? e.name_len : outlen - 1;
		memcpy(out, e.name, n);
		out[n] = 0;
	}
}

char *apc_gator_request_xml(const char *type)
{
	struct gator_str s = {0};

	gator_str_cat(&s, "<?xml version=\"1.0\" encoding=\"US-ASCII\"?>\n<request");
	gator_str_attr(&s, "type", type);
	gator_str_cat(&s, "/>\n");
	return gator_str_done(&s);
}

char *apc_gator_session_xml(const struct apc_gator_session *o)
{
	struct gator_str s = {0};
	char num[32];

	gator_str_cat(&s, "<?xml version=\"1.0\" encoding=\"US-ASCII\"?>\n<session version=\"1\"");
	gator_str_attr(&s, "call_stack_unwinding", o->call_stack_unwinding ? "yes" : "no");
	gator_str_attr(&s, "parse_debug_info", "no");
	gator_str_attr(&s, "high_resolution", "no");
	gator_str_attr(&s, "buffer_mode", o->buffer_mode ? o->buffer_mode : "streaming");
	gator_str_attr(&s, "sample_rate", o->sample_rate ? o->sample_rate : "normal");
	snprintf(num, sizeof num, "%u", o->duration);
	gator_str_attr(&s, "duration", num);
	if (o->target_host) {
		gator_str_attr(&s, "target_host", o->target_host);
		snprintf(num, sizeof num, "%u", o->target_port);
		gator_str_attr(&s, "target_port", num);
	}
	gator_str_attr(&s, "live_rate", "0");
	gator_str_cat(&s, ">\n</session>\n");
	return gator_str_done(&s);
}

const char *const apc_gator_buffer_modes[] = {"streaming", "large", "medium", "small", NULL};
const char *const apc_gator_sample_rates[] = {"high", "normal", "low", "none", NULL};

int apc_gator_one_of(const char *v, const char *const *set)
{
	for (; *set; set++)
		if (strcmp(v, *set) == 0)
			return 1;
	return 0;
}

/*
 * The three <session> attributes gatord judges, the rules shared by the
 * agent's check (gatord's replies) and the host's (the user's words).
 */
static const char *const gator_session_attrs[] = {"buffer_mode", "sample_rate", "duration", NULL};

/* 0 if attribute gator_session_attrs[i] may be v; a duration to *duration. */
static int gator_session_value(int i, const char *v, unsigned *duration)
{
	char *end;
	unsigned long d;

	if (i == 0)
		return apc_gator_one_of(v, apc_gator_buffer_modes) ? 0 : -1;
	if (i == 1)
		return apc_gator_one_of(v, apc_gator_sample_rates) ? 0 : -1;
	errno = 0;
	d = strtoul(v, &end, 10);
	if (!*v || *end || errno || d > APC_GATOR_DURATION_MAX || v[0] == '-')
		return -1;
	*duration = (unsigned)d;
	return 0;
}

int apc_gator_session_check(const char *xml, size_t len, unsigned *duration, char *why,
			    size_t whylen)
{
	struct apc_gator_xml_iter it;
	struct apc_gator_xml_elem e;
	char v[64];

	*duration = 0;
	apc_gator_xml_init(&it, xml, len);
	while (apc_gator_xml_next(&it, &e)) {
		if (!apc_gator_xml_is(&e, "session"))
			continue;
		for (int i = 0; gator_session_attrs[i]; i++) {
			if (!apc_gator_xml_attr(&e, gator_session_attrs[i], v, sizeof v) ||
			    gator_session_value(i, v, duration) == 0)
				continue;
			/* gatord 6.8's replies, word for word */
			if (i == 0)
				snprintf(why, whylen, "Invalid value for buffer mode in session xml");
			else if (i == 1)
				snprintf(why, whylen, "Invalid sample rate (%s) in session xml", v);
			else
				snprintf(why, whylen, "Invalid duration (%s) in session xml", v);
			return -1;
		}
		return 0;
	}
	snprintf(why, whylen, "Invalid session xml");
	return -1;
}

/* ", " between the items of a NULL-ended set and " or " before the last. */
static void gator_set_words(const char *const *set, char *out, size_t outlen)
{
	size_t n = 0;

	out[0] = 0;
	for (const char *const *p = set; *p && n < outlen; p++)
		n += (size_t)snprintf(out + n, outlen - n, "%s%s", *p,
				      !p[1] ? "" : p[2] ? ", " : " or ");
}

int apc_gator_session_file_check(const char *name, const char *xml, size_t len,
				 unsigned *duration, struct apc_err *err)
{
	xmlDoc *doc;
	xmlNode *root;
	char set[128];
	int rc = APC_OK;

	*duration = 0;
	if (!(doc = apc_xml_read_strict(xml, len, name, 0, err)))
		return err->status;
	if (!(root = xmlDocGetRootElement(doc)) || xmlStrcmp(root->name, BAD_CAST "session")) {
		/* the agent would take it for some other XML and refuse it */
		rc = apc_err_set(err, APC_EIO, name, APC_NO_OFFSET,
				 "not a session XML: the root element is <%s>, not <session>",
				 root ? (const char *)root->name : "");
	}
	for (int i = 0; rc == APC_OK && gator_session_attrs[i]; i++) {
		xmlChar *v = xmlGetProp(root, BAD_CAST gator_session_attrs[i]);

		if (v && gator_session_value(i, (const char *)v, duration) != 0) {
			if (i < 2)
				gator_set_words(i ? apc_gator_sample_rates : apc_gator_buffer_modes, set,
						sizeof set);
			else
				snprintf(set, sizeof set, "a whole number of seconds, 0 to %u",
					 APC_GATOR_DURATION_MAX);
			rc = apc_err_set(err, APC_EIO, name, APC_NO_OFFSET, "line %ld: invalid %s '%s' (%s)",
					 xmlGetLineNo(root), gator_session_attrs[i], (const char *)v, set);
		}
		xmlFree(v);
	}
	xmlFreeDoc(doc);
	return rc;
}

/* The longest NAME[:EVENT] item of a --counters list, its NUL included. */
#define GATOR_COUNTER_MAX 512

/*
 * The EVENT of NAME:EVENT (n bytes at v): decimal or 0x hex, at most 32
 * bits, as gatord reads it.  strtoul() alone would take " 3", "-1"
 * (wrapped), "3x" and octal "010".  1 and *out set if it is one.
 */
static int gator_event_number(const char *v, size_t n, unsigned long *out)
{
	int hex = n > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X');
	size_t digits = n - (hex ? 2 : 0);
	char buf[16];

	if (digits == 0 || digits > (hex ? 8u : 10u))
		return 0;
	for (size_t k = n - digits; k < n; k++)
		if (!(hex ? isxdigit((unsigned char)v[k]) : isdigit((unsigned char)v[k])))
			return 0;
	memcpy(buf, v, n);
	buf[n] = 0;
	*out = strtoul(buf, NULL, hex ? 16 : 10);
	return *out <= 0xffffffffUL;
}

int apc_gator_counters_check(const char *list, char *why, size_t whylen)
{
	const char *p = list;
	unsigned long ev;

	if (!list || !*list) {
		snprintf(why, whylen, "empty counter list (use NAME[:EVENT],...)");
		return -1;
	}
	for (int item = 1;; item++) {
		const char *end = p + strcspn(p, ",");
		size_t l = (size_t)(end - p);
		const char *colon = memchr(p, ':', l);

		/* "a,,b", ",a", "a," and ":3": an item with no name is a slip */
		if (l == 0 || colon == p) {
			snprintf(why, whylen, "empty counter name at item %d (use NAME[:EVENT],...)",
				 item);
			return -1;
		}
		if (l >= GATOR_COUNTER_MAX) {
			snprintf(why, whylen, "item %d is longer than %d bytes", item,
				 GATOR_COUNTER_MAX - 1);
			return -1;
		}
		if (colon && !gator_event_number(colon + 1, (size_t)(end - colon - 1), &ev)) {
			snprintf(why, whylen,
				 "item %d: event '%.*s' is not an event number (0 to 4294967295, decimal or 0x hex)",
				 item, (int)(end - colon - 1), colon + 1);
			return -1;
		}
		if (!*end)
			return 0;
		p = end + 1;
	}
}

char *apc_gator_config_xml(const char *list)
{
	struct gator_str s = {0};
	const char *p = list;
	char why[128];

	/* checked whole first: every item below is well-formed */
	if (!list || apc_gator_counters_check(list, why, sizeof why) != 0)
		return NULL;
	gator_str_cat(&s, "<?xml version=\"1.0\" encoding=\"US-ASCII\"?>\n<configurations revision=\"3\">\n");
	for (;;) {
		const char *end = p + strcspn(p, ",");
		size_t l = (size_t)(end - p);
		char item[GATOR_COUNTER_MAX], *colon;
		unsigned long ev;

		memcpy(item, p, l);
		item[l] = 0;
		gator_str_cat(&s, "  <configuration");
		colon = strchr(item, ':');
		if (colon) {
			char hex[32];

			*colon = 0;
			gator_event_number(colon + 1, strlen(colon + 1), &ev);
			snprintf(hex, sizeof hex, "0x%lx", ev);
			gator_str_attr(&s, "counter", item);
			gator_str_attr(&s, "event", hex);
		} else {
			gator_str_attr(&s, "counter", item);
		}
		gator_str_cat(&s, "/>\n");
		if (!*end)
			break;
		p = end + 1;
	}
	gator_str_cat(&s, "</configurations>\n");
	return gator_str_done(&s);
}

/*
 * Walk the counters of a captured.xml: gatord 6.8 names them with type=,
 * 9.x constants with counter=.  defaults selects configuration XML.
 */
static char *gator_from_captured(const char *captured, size_t len, int defaults)
{
	struct apc_gator_xml_iter it;
	struct apc_gator_xml_elem e;
	struct gator_str s = {0};
	char name[512], ev[64];

	if (defaults)
		gator_str_cat(&s, "<?xml version=\"1.0\" encoding=\"US-ASCII\"?>\n<configurations revision=\"3\">\n");
	else
		gator_str_cat(&s, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<counters>\n");
	apc_gator_xml_init(&it, captured, len);
	while (apc_gator_xml_next(&it, &e)) {
		if (!apc_gator_xml_is(&e, "counter"))
			continue;
		if (!apc_gator_xml_attr(&e, "type", name, sizeof name) &&
		    !apc_gator_xml_attr(&e, "counter", name, sizeof name))
			continue;
		gator_str_cat(&s, defaults ? "  <configuration" : "  <counter");
		gator_str_attr(&s, defaults ? "counter" : "name", name);
		if (defaults && apc_gator_xml_attr(&e, "event", ev, sizeof ev))
			gator_str_attr(&s, "event", ev);
		gator_str_cat(&s, "/>\n");
	}
	gator_str_cat(&s, defaults ? "</configurations>\n" : "</counters>\n");
	return gator_str_done(&s);
}

char *apc_gator_counters_from_captured(const char *captured, size_t len)
{
	return gator_from_captured(captured, len, 0);
}

char *apc_gator_defaults_from_captured(const char *captured, size_t len)
{
	return gator_from_captured(captured, len, 1);
}

/* ---- the host side -------------------------------------------------------- */

/* An NAK or Error from the agent, with its message, as err. */
static int gator_agent_said(const struct apc_gator_msg *m, const char *what, int status,
			    struct apc_err *err)
{
	char text[APC_ERR_MSG / 2];
	size_t n = m->len < sizeof text - 1 ? m->len : sizeof text - 1;

	for (size_t i = 0; i < n; i++)
		text[i] = (m->body[i] >= 0x20 && m->body[i] < 0x7f) ? (char)m->body[i] : ' ';
	text[n] = 0;
	while (n && text[n - 1] == ' ')
		text[--n] = 0;
	if (m->code == APC_GATOR_RESP_NAK)
		return apc_err_set(err, status, NULL, APC_NO_OFFSET, "agent refused %s (NAK): %s",
				   what, n ? text : "no message");
	if (m->code == APC_GATOR_RESP_ERROR)
		return apc_err_set(err, status, NULL, APC_NO_OFFSET, "agent error on %s: %s", what,
				   n ? text : "no message");
	return apc_err_set(err, status, NULL, APC_NO_OFFSET,
			   "unexpected response code %d (%" PRIu32 " bytes) to %s", m->code, m->len,
			   what);
}

/* Send a command and wait for its one response, skipping nothing. */
static int gator_command(int fd, int code, const char *body, size_t len, uint32_t max,
			 int timeout_ms, struct apc_gator_msg *m, struct apc_err *err)
{
	int rc = apc_gator_send(fd, code, body, len, timeout_ms, err);

	if (rc != APC_OK)
		return rc;
	rc = apc_gator_recv(fd, m, max, timeout_ms, err);
	if (rc == APC_END)
		rc = apc_err_set(err, APC_EIO, NULL, APC_NO_OFFSET,
				 "the agent closed the connection instead of answering");
	return rc;
}

/* Request XML of `type`; *xml is malloc'd. */
static int gator_request(int fd, const char *type, int timeout_ms, char **xml, size_t *len,
			 struct apc_err *err)
{
	struct apc_gator_msg m;
	char *req = apc_gator_request_xml(type), what[64];
	int rc;

	if (!req)
		return apc_err_set(err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
	rc = gator_command(fd, APC_GATOR_CMD_REQUEST_XML, req, strlen(req), APC_GATOR_XML_MAX,
			   timeout_ms, &m, err);
	free(req);
	if (rc != APC_OK)
		return rc;
	if (m.code != APC_GATOR_RESP_XML) {
		snprintf(what, sizeof what, "the %s request", type);
		rc = gator_agent_said(&m, what, APC_EIO, err);
		apc_gator_msg_free(&m);
		return rc;
	}
	*xml = (char *)m.body;
	*len = m.len;
	return APC_OK;
}

static int gator_deliver(int fd, const char *xml, size_t len, const char *what, int timeout_ms,
			 struct apc_err *err)
{
	struct apc_gator_msg m;
	int rc = gator_command(fd, APC_GATOR_CMD_DELIVER_XML, xml, len, APC_GATOR_CMD_MAX,
			       timeout_ms, &m, err);

	if (rc != APC_OK)
		return rc;
	if (m.code != APC_GATOR_RESP_ACK)
		rc = gator_agent_said(&m, what, APC_EIO, err);
	apc_gator_msg_free(&m);
	return rc;
}

int apc_gator_host_setup(int fd, const char *config_xml, int timeout_ms, struct apc_gator_setup *s,
			 struct apc_err *err)
{
	int rc;

	memset(s, 0, sizeof *s);
	rc = apc_gator_magic_host(fd, timeout_ms, &s->agent_version, err);
	if (rc == APC_OK)
		rc = gator_request(fd, "events", timeout_ms, &s->events, &s->events_len, err);
	if (rc == APC_OK)
		rc = gator_request(fd, "counters", timeout_ms, &s->counters, &s->counters_len, err);
	if (rc == APC_OK)
		rc = gator_request(fd, "configuration", timeout_ms, &s->configuration,
				   &s->configuration_len, err);
	if (rc == APC_OK)
		rc = gator_request(fd, "defaults", timeout_ms, &s->defaults, &s->defaults_len, err);
	if (rc == APC_OK) {
		const char *c = config_xml ? config_xml : s->defaults;
		rc = gator_deliver(fd, c, strlen(c), "the configuration", timeout_ms, err);
	}
	/* Disconnect has no answer; the agent just closes. */
	if (rc == APC_OK)
		rc = apc_gator_send(fd, APC_GATOR_CMD_DISCONNECT, NULL, 0, timeout_ms, err);
	return rc;
}

void apc_gator_setup_free(struct apc_gator_setup *s)
{
	free(s->events);
	free(s->counters);
	free(s->defaults);
	free(s->configuration);
	memset(s, 0, sizeof *s);
}

int apc_gator_host_capture(int fd, const char *session_xml, size_t session_len, unsigned duration_s,
			   int timeout_ms, int ping_ms, const struct apc_gator_capture_cb *cb,
			   char **captured, size_t *captured_len, struct apc_gator_record_result *r,
			   struct apc_err *err)
{
	int64_t start, last_rx, last_ping, last_progress;
	int rc;

	*captured = NULL;
	*captured_len = 0;
	rc = apc_gator_magic_host(fd, timeout_ms, &r->agent_version, err);
	if (rc == APC_OK)
		rc = gator_deliver(fd, session_xml, session_len, "the session", timeout_ms, err);
	/* gatord 6.8 reads only command headers after APC Start: ask first. */
	if (rc == APC_OK)
		rc = gator_request(fd, "captured", timeout_ms, captured, captured_len, err);
	if (rc == APC_OK)
		rc = apc_gator_send(fd, APC_GATOR_CMD_APC_START, NULL, 0, timeout_ms, err);
	if (rc != APC_OK) {
		/* Nothing was captured yet: whatever went wrong, there is no capture. */
		if (rc != APC_ENOMEM)
			rc = err->status = APC_EIO;
		return rc;
	}
	/* From here a stop request sends APC Stop and drains the capture. */
	gator_stop_early = 0;

	start = last_rx = last_ping = last_progress = gator_now_ms();
	for (;;) {
		int64_t now = gator_now_ms();
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int n;

		if (!r->stopped && (apc_interrupted() ||
				    (duration_s && now - start >= (int64_t)duration_s * 1000))) {
			/* Stop, then keep reading: the agent sends what it has, then End of Sequence. */
			rc = apc_gator_send(fd, APC_GATOR_CMD_APC_STOP, NULL, 0, timeout_ms, err);
			if (rc != APC_OK)
				break;
			r->stopped = 1;
		}
		if (now - last_rx >= timeout_ms) {
			char d[32];
			rc = apc_err_set(err, APC_EIO, NULL, APC_NO_OFFSET,
					 "the agent sent nothing for %s (%" PRIu64 " pings unanswered)",
					 gator_dur(d, sizeof d, timeout_ms), r->pings - r->acks);
			break;
		}
		if (!r->stopped && now - last_rx >= ping_ms && now - last_ping >= ping_ms) {
			rc = apc_gator_send(fd, APC_GATOR_CMD_PING, NULL, 0, timeout_ms, err);
			if (rc != APC_OK)
				break;
			r->pings++;
			last_ping = now;
		}
		if (cb->progress && now - last_progress >= 250) {
			cb->progress(cb->progress_ctx, r->frames, r->bytes);
			last_progress = now;
		}
		n = poll(&p, 1, 100);
		if (n < 0 && errno != EINTR) {
			rc = apc_err_sys(err, APC_EIO, NULL, "cannot wait", errno);
			break;
		}
		if (n <= 0)
			continue;

		struct apc_gator_msg m;
		rc = apc_gator_recv(fd, &m, APC_FRAME_MAX, timeout_ms, err);
		if (rc == APC_END) {
			rc = apc_err_set(err, APC_EIO, NULL, APC_NO_OFFSET,
					 "the agent closed the connection before the end of the capture");
			break;
		}
		if (rc != APC_OK)
			break;
		last_rx = gator_now_ms();
		if (m.code == APC_GATOR_RESP_APC_DATA) {
			if (m.len == 0) {
				apc_gator_msg_free(&m);
				r->ended = 1;
				rc = APC_OK;
				break;
			}
			rc = cb->on_frame(cb->ctx, m.body, m.len, err);
			r->frames++;
			r->bytes += m.len;
			apc_gator_msg_free(&m);
			if (rc != APC_OK)
				break;
			continue;
		}
		if (m.code == APC_GATOR_RESP_ACK) {
			r->acks++;
		} else if (m.code == APC_GATOR_RESP_ERROR) {
			rc = gator_agent_said(&m, "the capture", APC_EIO, err);
			apc_gator_msg_free(&m);
			break;
		}
		/* A NAK or stray XML during the capture is not fatal: carry on. */
		apc_gator_msg_free(&m);
	}
	r->seconds = (double)(gator_now_ms() - start) / 1000.0;
	if (cb->progress)
		cb->progress(cb->progress_ctx, r->frames, r->bytes);
	if (rc == APC_OK)
		return APC_OK;
	/* After APC Start the capture is cut, not missing: the caller keeps it. */
	err->status = APC_EDATA;
	return APC_EDATA;
}

/* ---- the output capture folder ----------------------------------------------- */

struct gator_out {
	char *path;   /* NAME.apc */
	char *tmpdir; /* .NAME.apc.tmp-XXXXXX beside it */
	FILE *data;
	int overwrite;
};

static int gator_eio(struct apc_err *err, const char *file, const char *what)
{
	return apc_err_sys(err, APC_EIO, file, what, errno);
}

static int gator_out_open(struct gator_out *o, const char *out, int overwrite, struct apc_err *err)
{
	struct stat st;
	size_t l = strlen(out);
	const char *slash;
	char *dir;
	int rc;

	memset(o, 0, sizeof *o);
	o->overwrite = overwrite;
	/* apcconv's rules; the frames are stored as they come, into a folder only */
	if (strcmp(out, "-") == 0)
		return apc_err_set(err, APC_EIO, out, APC_NO_OFFSET,
				   "cannot record to stdout: a recording is an .apc folder "
				   "(record to NAME.apc, then apcconv NAME.apc -o - for a tar stream)");
	if (apc_archive_suffix(out, l))
		return apc_err_set(err, APC_EIO, out, APC_NO_OFFSET,
				   "cannot record into an archive: a recording is an .apc folder "
				   "(record to NAME.apc, then apcconv NAME.apc -o %s)", out);
	while (l > 1 && out[l - 1] == '/')
		l--;
	if (apc_dot_name(out, l))
		return apc_err_set(err, APC_EIO, out, APC_NO_OFFSET, "not a usable output name");
	if (l >= 4 && memcmp(out + l - 4, ".apc", 4) == 0)
		o->path = gator_printf("%.*s", (int)l, out);
	else
		o->path = gator_printf("%.*s.apc", (int)l, out);
	if (!o->path)
		return apc_err_set(err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
	if (!overwrite && lstat(o->path, &st) == 0)
		rc = apc_err_set(err, APC_EIO, o->path, APC_NO_OFFSET,
				 "output exists (use --overwrite to replace it)");
	else
		rc = apc_out_replaceable(o->path, 1, err);
	if (rc != APC_OK) {
		free(o->path);
		o->path = NULL;
		return rc;
	}
	slash = strrchr(o->path, '/');
	dir = slash ? gator_printf("%.*s", (int)(slash - o->path), o->path) : strdup(".");
	o->tmpdir = gator_printf("%s/.%.*s.tmp-XXXXXX", dir && *dir ? dir : "/", APC_TMP_NAME_MAX,
				 slash ? slash + 1 : o->path);
	free(dir);
	if (!o->tmpdir || !mkdtemp(o->tmpdir)) {
		rc = o->tmpdir ? gator_eio(err, o->path, "cannot create")
			       : apc_err_set(err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
		free(o->tmpdir);
		free(o->path);
		o->tmpdir = o->path = NULL;
		return rc;
	}
	char *dp = gator_printf("%s/0000000000", o->tmpdir);
	o->data = dp ? fopen(dp, "wb") : NULL;
	if (!o->data) {
		rc = gator_eio(err, o->path, "cannot create");
		free(dp);
		rmdir(o->tmpdir);
		free(o->tmpdir);
		free(o->path);
		o->tmpdir = o->path = NULL;
		return rc;
	}
	free(dp);
	return APC_OK;
}

static int gator_out_frame(void *ctx, const uint8_t *body, uint32_t len, struct apc_err *err)
{
	struct gator_out *o = ctx;
	uint8_t h[4] = {(uint8_t)len, (uint8_t)(len >> 8), (uint8_t)(len >> 16), (uint8_t)(len >> 24)};

	if (fwrite(h, 1, 4, o->data) != 4 || fwrite(body, 1, len, o->data) != len)
		return gator_eio(err, o->path, "cannot write the data file");
	return APC_OK;
}

static int gator_out_file(struct gator_out *o, const char *leaf, const char *text, size_t len,
			  struct apc_err *err)
{
	char *p = gator_printf("%s/%s", o->tmpdir, leaf);
	FILE *f = p ? fopen(p, "wb") : NULL;
	int rc = APC_OK;

	char what[64];

	/* named as the user named the output: "x.apc: captured.xml: cannot write" */
	snprintf(what, sizeof what, "%s: cannot write", leaf);
	if (!f || (len && fwrite(text, 1, len, f) != len))
		rc = gator_eio(err, o->path, what);
	if (f && fclose(f) != 0 && rc == APC_OK)
		rc = gator_eio(err, o->path, what);
	free(p);
	return rc;
}

static void gator_out_abort(struct gator_out *o)
{
	static const char *const leaves[] = {"0000000000", "captured.xml", "events.xml",
					     "session.xml"};

	if (o->data)
		fclose(o->data);
	o->data = NULL;
	if (o->tmpdir) {
		for (size_t i = 0; i < sizeof leaves / sizeof leaves[0]; i++) {
			char *p = gator_printf("%s/%s", o->tmpdir, leaves[i]);
			if (p)
				unlink(p);
			free(p);
		}
		rmdir(o->tmpdir);
	}
	free(o->tmpdir);
	free(o->path);
	o->tmpdir = o->path = NULL;
}

/* Close the data file and move the capture into place, replacing an old
 * capture when asked (and only a capture: apc_out_replaceable). */
static int gator_out_finish(struct gator_out *o, struct apc_err *err)
{
	struct stat st;
	int rc = APC_OK;

	if (fclose(o->data) != 0)
		rc = gator_eio(err, o->path, "cannot write the data file");
	o->data = NULL;
	if (rc == APC_OK && chmod(o->tmpdir, 0755) != 0)
		rc = gator_eio(err, o->path, "cannot set the mode");
	if (rc == APC_OK && o->overwrite && lstat(o->path, &st) == 0 &&
	    (rc = apc_out_replaceable(o->path, 1, err)) == APC_OK && apc_remove_tree(o->path) != 0)
		rc = gator_eio(err, o->path, "cannot replace");
	if (rc == APC_OK && rename(o->tmpdir, o->path) != 0)
		rc = gator_eio(err, o->path, "cannot rename the capture into place");
	if (rc != APC_OK) {
		gator_out_abort(o);
		return rc;
	}
	free(o->tmpdir);
	free(o->path);
	o->tmpdir = o->path = NULL;
	return APC_OK;
}

int apc_gator_list(const char *host, unsigned port, int timeout_ms, char **counters,
		   size_t *counters_len, char **events, size_t *events_len, struct apc_err *err)
{
	int fd, version, rc;

	*counters = *events = NULL;
	rc = apc_gator_connect(host, port, timeout_ms, &fd, err);
	if (rc != APC_OK)
		return rc;
	rc = apc_gator_magic_host(fd, timeout_ms, &version, err);
	if (rc == APC_OK)
		rc = gator_request(fd, "counters", timeout_ms, counters, counters_len, err);
	if (rc == APC_OK)
		rc = gator_request(fd, "events", timeout_ms, events, events_len, err);
	if (rc == APC_OK)
		rc = apc_gator_send(fd, APC_GATOR_CMD_DISCONNECT, NULL, 0, timeout_ms, err);
	close(fd);
	if (rc != APC_OK) {
		free(*counters);
		free(*events);
		*counters = *events = NULL;
		return rc < 0 ? rc : APC_EIO;
	}
	return APC_OK;
}

/* The names of a --counters list that the Counters XML does not offer, "A, B". */
static void gator_unknown_counters(const char *list, const char *xml, size_t len, char *out,
				   size_t outlen)
{
	const char *p = list;
	size_t n = 0;

	out[0] = 0;
	while (*p) {
		const char *e = p + strcspn(p, ","), *colon = memchr(p, ':', (size_t)(e - p));
		size_t k = (size_t)((colon ? colon : e) - p);
		struct apc_gator_xml_iter it;
		struct apc_gator_xml_elem el;
		char name[256];
		int found = 0;

		apc_gator_xml_init(&it, xml ? xml : "", xml ? len : 0);
		while (!found && apc_gator_xml_next(&it, &el))
			found = apc_gator_xml_is(&el, "counter") &&
				apc_gator_xml_attr(&el, "name", name, sizeof name) &&
				strlen(name) == k && strncmp(name, p, k) == 0;
		if (!found && k && n + k + 3 < outlen)
			n += (size_t)snprintf(out + n, outlen - n, "%s%.*s", n ? ", " : "", (int)k, p);
		p = *e ? e + 1 : e;
	}
}

int apc_gator_record(const struct apc_gator_record_opts *o, struct apc_gator_record_result *r,
		     struct apc_err *err)
{
	struct apc_gator_setup setup;
	struct gator_out out;
	struct apc_gator_capture_cb cb;
	struct apc_err cut;
	char *config = NULL, *session = NULL, *captured = NULL;
	size_t session_len, captured_len = 0;
	unsigned duration = o->session.duration;
	int timeout = o->timeout_ms > 0 ? o->timeout_ms : 10000;
	int ping = o->ping_ms > 0 ? o->ping_ms : 1000;
	int fd = -1, rc, cut_rc;

	memset(r, 0, sizeof *r);
	apc_err_clear(err);
	/* the user's input, judged before anything connects, in the user's
	 * words (not the agent's reply to it) */
	if (o->counters) {
		char why[160];
		if (apc_gator_counters_check(o->counters, why, sizeof why) != 0)
			return apc_err_set(err, APC_EIO, "--counters", APC_NO_OFFSET, "%s", why);
		if (!(config = apc_gator_config_xml(o->counters)))
			return apc_err_set(err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
	}
	if (o->session_xml) {
		rc = apc_gator_session_file_check(o->session_name ? o->session_name : "session XML",
						  o->session_xml, o->session_len, &duration, err);
		if (rc != APC_OK) {
			free(config);
			return rc;
		}
		session = malloc(o->session_len + 1);
		if (session) {
			memcpy(session, o->session_xml, o->session_len);
			session[o->session_len] = 0;
		}
		session_len = o->session_len;
	} else {
		session = apc_gator_session_xml(&o->session);
		session_len = session ? strlen(session) : 0;
	}
	if (!session) {
		free(config);
		return apc_err_set(err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
	}
	rc = gator_out_open(&out, o->output, o->overwrite, err);
	if (rc != APC_OK) {
		free(config);
		free(session);
		return rc;
	}

	/* Until APC Start there is nothing to keep: a stop request ends the run. */
	gator_stop_early = 1;
	/* First connection: what the agent offers, and our configuration. */
	rc = apc_gator_connect(o->host, o->port, timeout, &fd, err);
	if (rc == APC_OK) {
		rc = apc_gator_host_setup(fd, config, timeout, &setup, err);
		if (rc == APC_EDATA || rc == APC_END)
			rc = err->status = APC_EIO;
		close(fd);
		fd = -1;
	} else {
		memset(&setup, 0, sizeof setup);
	}
	r->agent_version = setup.agent_version;
	if (rc == APC_OK && o->counters)
		gator_unknown_counters(o->counters, setup.counters, setup.counters_len, r->unknown_counters,
				       sizeof r->unknown_counters);
	if (rc == APC_OK && apc_interrupted())
		rc = apc_err_set(err, APC_EIO, NULL, APC_NO_OFFSET, "interrupted");

	/* Second connection: the capture. */
	memset(&cb, 0, sizeof cb);
	cb.on_frame = gator_out_frame;
	cb.ctx = &out;
	cb.progress = o->progress;
	cb.progress_ctx = o->progress_ctx;
	if (rc == APC_OK)
		rc = apc_gator_connect(o->host, o->port, timeout, &fd, err);
	if (rc == APC_OK) {
		rc = apc_gator_host_capture(fd, session, session_len, duration, timeout, ping, &cb,
					    &captured, &captured_len, r, err);
		close(fd);
	}
	if (rc < 0 && rc != APC_EDATA) {
		gator_out_abort(&out);
		goto done;
	}
	/* Keep what arrived; the cut (if any) is reported after the files. */
	cut_rc = rc;
	cut = *err;
	rc = gator_out_file(&out, "captured.xml", captured ? captured : "", captured_len, err);
	if (rc == APC_OK)
		rc = gator_out_file(&out, "events.xml", setup.events ? setup.events : "",
				    setup.events_len, err);
	if (rc == APC_OK)
		rc = gator_out_file(&out, "session.xml", session, session_len, err);
	snprintf(r->output, sizeof r->output, "%s", out.path);
	if (rc == APC_OK)
		rc = gator_out_finish(&out, err);
	else
		gator_out_abort(&out);
	if (rc != APC_OK) {
		r->output[0] = 0;
	} else if (cut_rc == APC_EDATA) {
		*err = cut;
		rc = APC_EDATA;
	}
done:
	gator_stop_early = 0;
	apc_gator_setup_free(&setup);
	free(captured);
	free(config);
	free(session);
	return rc;
}

/* ---- the agent side ------------------------------------------------------------ */

struct apc_gator_capture {
	struct apc_input *in;
	char *tmpdir;    /* conversion folder, removed at close */
	char *apcpath;   /* the converted capture inside it */
	uint8_t *captured, *events;
	size_t captured_len, events_len;
	char *config;    /* the configuration last delivered (revision 3), or NULL */
};

static int gator_slurp_member(struct apc_input *in, const char *rel, uint8_t **buf, size_t *len,
			      struct apc_err *err)
{
	struct apc_stream *s;
	int rc = apc_input_open_member(in, rel, &s, err);

	if (rc != APC_OK)
		return rc;
	rc = apc_stream_slurp(s, APC_XML_FILE_MAX, buf, len, err);
	apc_stream_close(s);
	return rc;
}

static int gator_is_capture(struct apc_input *in)
{
	return apc_input_is_tree(in) && apc_input_has(in, "0000000000") &&
	       apc_input_has(in, "captured.xml");
}

/*
 * 1 when the capture is one gatord 6.8 could have made (captured.xml's
 * protocol 680 or older, or none given): served as is.  A newer gatord's
 * capture (protocol="950", frames 6.8 does not know) is converted.
 */
static int gator_is_680(struct apc_input *in)
{
	struct apc_gator_xml_iter it;
	struct apc_gator_xml_elem e;
	struct apc_err ignore;
	uint8_t *xml = NULL;
	size_t len = 0;
	char v[32];
	int ok = 1;

	if (gator_slurp_member(in, "captured.xml", &xml, &len, &ignore) != APC_OK)
		return 1; /* reading it later reports the problem */
	apc_gator_xml_init(&it, (const char *)xml, len);
	while (apc_gator_xml_next(&it, &e)) {
		if (!apc_gator_xml_is(&e, "captured"))
			continue;
		if (apc_gator_xml_attr(&e, "protocol", v, sizeof v))
			ok = strtol(v, NULL, 10) <= APC_GATOR_PROTOCOL;
		break;
	}
	free(xml);
	return ok;
}

int apc_gator_capture_open(const char *path, struct apc_gator_capture **out,
			   struct apc_gator_conv *conv, struct apc_err *err)
{
	struct apc_gator_capture *c = calloc(1, sizeof *c);
	struct apc_gator_conv own;
	int rc;

	*out = NULL;
	if (!conv) {
		memset(&own, 0, sizeof own);
		conv = &own;
	}
	conv->ran = 0;
	conv->status = APC_OK;
	if (!c)
		return apc_err_set(err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
	rc = apc_input_open(path, &c->in, err);
	/* -f forcing another format (or none there is) goes to apcconv's
	 * pipeline too, which reads the input as that or says why not */
	if (rc == APC_OK && !(gator_is_capture(c->in) && gator_is_680(c->in) &&
			      (!conv->from || apc_format_find(conv->from) == apc_format_find("apc")))) {
		/* Not a capture: convert it the way apcconv would, privately. */
		struct apc_conv_opts co;
		const char *tmp = getenv("TMPDIR");
		const char *inputs[1] = {path};

		apc_input_close(c->in);
		c->in = NULL;
		c->tmpdir = gator_printf("%s/apcserve-XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!c->tmpdir || !mkdtemp(c->tmpdir)) {
			rc = gator_eio(err, c->tmpdir ? c->tmpdir : "/tmp",
				       "cannot create a temporary folder");
			free(c->tmpdir);
			c->tmpdir = NULL;
		} else {
			memset(&co, 0, sizeof co);
			co.inputs = inputs;
			co.ninputs = 1;
			co.from = conv->from;
			c->apcpath = gator_printf("%s/capture.apc", c->tmpdir);
			co.output = c->apcpath;
			co.write.created = -1;
			double t0 = apc_now();
			rc = apc_convert(&co, &conv->res, err);
			conv->seconds = apc_now() - t0;
			conv->ran = 1;
			conv->status = rc;
			/*
			 * A damaged input still gives a capture of what came before
			 * the damage; damage in the headers gives none: apcconv's
			 * error, not a missing file in our temporary folder.
			 */
			if (rc != APC_OK)
				conv->err = *err;
			if (rc == APC_EDATA && conv->res.output[0])
				rc = APC_OK;
			/* The log names what is served, not our temporary folder. */
			if (conv->res.output[0])
				snprintf(conv->res.output, sizeof conv->res.output, "the served capture");
			if (rc == APC_OK)
				rc = apc_input_open(c->apcpath, &c->in, err);
			if (rc == APC_OK && !gator_is_capture(c->in))
				rc = apc_err_set(err, APC_EDATA, path, APC_NO_OFFSET,
						 "the conversion gave no capture");
		}
	}
	if (rc == APC_OK)
		rc = gator_slurp_member(c->in, "captured.xml", &c->captured, &c->captured_len, err);
	if (rc == APC_OK && apc_input_has(c->in, "events.xml"))
		rc = gator_slurp_member(c->in, "events.xml", &c->events, &c->events_len, err);
	if (rc != APC_OK) {
		apc_gator_capture_close(c);
		return rc;
	}
	*out = c;
	return APC_OK;
}

int apc_gator_capture_converted(const struct apc_gator_capture *c)
{
	return c->tmpdir != NULL;
}

void apc_gator_capture_close(struct apc_gator_capture *c)
{
	if (!c)
		return;
	if (c->in)
		apc_input_close(c->in);
	if (c->apcpath) {
		apc_remove_tree(c->apcpath);
		free(c->apcpath);
	}
	if (c->tmpdir) {
		rmdir(c->tmpdir);
		free(c->tmpdir);
	}
	free(c->captured);
	free(c->events);
	free(c->config);
	free(c);
}

/* Send an Error with a message, as gatord does before closing. */
static int gator_send_error(int fd, int timeout_ms, struct apc_err *err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int gator_send_error(int fd, int timeout_ms, struct apc_err *err, const char *fmt, ...)
{
	char msg[256];
	struct apc_err ignore;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	apc_gator_send(fd, APC_GATOR_RESP_ERROR, msg, strlen(msg), timeout_ms, &ignore);
	return apc_err_set(err, APC_EDATA, NULL, APC_NO_OFFSET, "sent error: %s", msg);
}

static int gator_agent_request(struct apc_gator_capture *c, int fd, const struct apc_gator_msg *m,
			       int timeout_ms, struct apc_err *err)
{
	struct apc_gator_xml_iter it;
	struct apc_gator_xml_elem e;
	char type[64] = "";
	char *gen = NULL;
	const char *xml = NULL;
	size_t len = 0;
	int rc;

	apc_gator_xml_init(&it, (const char *)m->body, m->len);
	while (apc_gator_xml_next(&it, &e))
		if (apc_gator_xml_is(&e, "request")) {
			apc_gator_xml_attr(&e, "type", type, sizeof type);
			break;
		}
	if (strcmp(type, "events") == 0) {
		xml = c->events ? (const char *)c->events : "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<events/>\n";
		len = c->events ? c->events_len : strlen(xml);
	} else if (strcmp(type, "captured") == 0) {
		xml = (const char *)c->captured;
		len = c->captured_len;
	} else if (strcmp(type, "counters") == 0) {
		xml = gen = apc_gator_counters_from_captured((const char *)c->captured, c->captured_len);
	} else if (strcmp(type, "defaults") == 0) {
		xml = gen = apc_gator_defaults_from_captured((const char *)c->captured, c->captured_len);
	} else if (strcmp(type, "configuration") == 0) {
		if (c->config) {
			xml = c->config;
			len = strlen(c->config);
		}
		else
			xml = gen = apc_gator_defaults_from_captured((const char *)c->captured,
								     c->captured_len);
	} else {
		static const char nak[] = "Unknown request";
		return apc_gator_send(fd, APC_GATOR_RESP_NAK, nak, sizeof nak - 1, timeout_ms, err);
	}
	if (!xml)
		return apc_err_set(err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
	if (gen)
		len = strlen(gen);
	rc = apc_gator_send(fd, APC_GATOR_RESP_XML, xml, len, timeout_ms, err);
	free(gen);
	return rc;
}

/* 1: the session goes on; 0: it ended (err set if badly); status in *rc. */
static int gator_agent_deliver(struct apc_gator_capture *c, int fd, const struct apc_gator_msg *m,
			       int timeout_ms, unsigned *duration, struct apc_err *err, int *rc)
{
	char root[64], why[128], rev[16];

	apc_gator_xml_root((const char *)m->body, m->len, root, sizeof root);
	if (strcmp(root, "session") == 0) {
		if (apc_gator_session_check((const char *)m->body, m->len, duration, why,
					    sizeof why) != 0) {
			*rc = gator_send_error(fd, timeout_ms, err, "%s", why);
			return 0;
		}
	} else if (strcmp(root, "configurations") == 0) {
		struct apc_gator_xml_iter it;
		struct apc_gator_xml_elem e;
		apc_gator_xml_init(&it, (const char *)m->body, m->len);
		apc_gator_xml_next(&it, &e);
		/* gatord 6.8 keeps only revision 3; older ones fall back to the defaults. */
		free(c->config);
		c->config = NULL;
		if (apc_gator_xml_attr(&e, "revision", rev, sizeof rev) && strcmp(rev, "3") == 0) {
			c->config = malloc((size_t)m->len + 1);
			if (c->config)
				memcpy(c->config, m->body, (size_t)m->len + 1);
		}
	} else {
		*rc = apc_gator_send(fd, APC_GATOR_RESP_NAK, NULL, 0, timeout_ms, err);
		return *rc == APC_OK;
	}
	*rc = apc_gator_send(fd, APC_GATOR_RESP_ACK, NULL, 0, timeout_ms, err);
	return *rc == APC_OK;
}

/* Turn away a connection that arrives during a capture. */
static void gator_reject(int lfd, int timeout_ms, struct apc_gator_serve_stats *st)
{
	static const char busy[] = "Session already in progress";
	struct apc_err ignore;
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	uint8_t junk[256];

	if (fd < 0)
		return;
	st->rejected++;
	apc_gator_write(fd, APC_GATOR_MAGIC_REPLY, strlen(APC_GATOR_MAGIC_REPLY), timeout_ms, &ignore);
	apc_gator_send(fd, APC_GATOR_RESP_ERROR, busy, sizeof busy - 1, timeout_ms, &ignore);
	/* Half-close and drain a little so unread input does not reset the reply away. */
	shutdown(fd, SHUT_WR);
	for (int i = 0; i < 4 && recv(fd, junk, sizeof junk, MSG_DONTWAIT) > 0; i++)
		;
	close(fd);
}

/* The latest timestamp in a frame, for --realtime; -1 if none. */
static int64_t gator_frame_ts(const struct apc_frame *f)
{
	struct apc_msg_iter it;
	struct apc_msg m;
	struct apc_err e;
	int64_t ts = -1;

	if (f->type == APC_FRAME_SUMMARY || f->type < 0)
		return -1;
	apc_msg_iter_init(&it, f, 0);
	while (apc_msg_next(&it, &m, &e) == APC_OK)
		if (m.has_ts && m.ts > ts)
			ts = m.ts;
	return ts;
}

/*
 * During the capture gatord reads only 5-byte command headers.  Handle
 * the ones waiting on fd (and connections on the listening socket) until
 * `until_ms` (0 = just what is ready now).  Returns 1 to go on, 0 when
 * the capture must end (Stop, Disconnect, peer gone), with *rc set.
 */
static int gator_agent_poll(int fd, const struct apc_gator_serve_opts *o, int64_t until_ms,
			    struct apc_gator_serve_stats *st, int *disconnect, struct apc_err *err,
			    int *rc)
{
	for (;;) {
		struct pollfd p[2] = {{.fd = fd, .events = POLLIN}, {.fd = o->listen_fd, .events = POLLIN}};
		int64_t left = until_ms ? until_ms - gator_now_ms() : 0;
		int n = poll(p, o->listen_fd >= 0 ? 2 : 1, left > 0 ? (int)(left > 100 ? 100 : left) : 0);

		if (n < 0 && errno != EINTR) {
			*rc = apc_err_sys(err, APC_EIO, NULL, "cannot wait", errno);
			return 0;
		}
		if (apc_interrupted()) {
			*rc = APC_OK;
			return 0; /* end the capture cleanly with End of Sequence */
		}
		if (n > 0 && o->listen_fd >= 0 && (p[1].revents & POLLIN))
			gator_reject(o->listen_fd, o->timeout_ms, st);
		if (n > 0 && (p[0].revents & (POLLIN | POLLHUP | POLLERR))) {
			uint8_t h[5];
			int r = apc_gator_read(fd, h, 5, o->timeout_ms, err);
			if (r == APC_END) {
				*rc = apc_err_set(err, APC_EIO, NULL, APC_NO_OFFSET,
						  "streamline closed the connection during the capture");
				*disconnect = 1;
				return 0;
			}
			if (r != APC_OK) {
				*rc = r;
				*disconnect = 1;
				return 0;
			}
			st->commands++;
			if (h[0] == APC_GATOR_CMD_PING) {
				*rc = apc_gator_send(fd, APC_GATOR_RESP_ACK, NULL, 0, o->timeout_ms, err);
				if (*rc != APC_OK) {
					*disconnect = 1;
					return 0;
				}
			} else if (h[0] == APC_GATOR_CMD_APC_STOP) {
				st->stopped = 1;
				*rc = APC_OK;
				return 0;
			} else if (h[0] == APC_GATOR_CMD_DISCONNECT) {
				*rc = APC_OK;
				*disconnect = 1;
				return 0;
			}
			/* Anything else is ignored during a capture, as gatord 6.8 does. */
			continue;
		}
		if (!until_ms || gator_now_ms() >= until_ms)
			return 1;
	}
}

static int gator_agent_stream(struct apc_gator_capture *c, int fd,
			      const struct apc_gator_serve_opts *o, unsigned duration,
			      struct apc_gator_serve_stats *st, struct apc_err *err)
{
	struct apc_stream *s = NULL;
	struct apc_frame_reader *fr = NULL;
	struct apc_frame f;
	int64_t t0 = gator_now_ms(), last_target = 0;
	int rc, disconnect = 0, go = 1;

	rc = apc_input_open_member(c->in, "0000000000", &s, err);
	if (rc == APC_OK)
		rc = apc_frame_reader_new(s, &fr, err);
	if (rc != APC_OK) {
		if (s)
			apc_stream_close(s);
		gator_send_error(fd, o->timeout_ms, err, "Cannot read the capture");
		return APC_EIO;
	}
	while (go) {
		int r = apc_frame_read(fr, &f, err);
		if (r == APC_END)
			break;
		if (r != APC_OK) {
			/* A damaged data file ends the capture where the damage starts. */
			rc = APC_OK;
			break;
		}
		if (f.len == 0)
			continue; /* a zero length would read as End of Sequence */
		int64_t until = 0;
		if (o->realtime) {
			int64_t ts = gator_frame_ts(&f);
			if (ts >= 0) {
				int64_t target = ts / 1000000;
				/* Best effort: never wait more than 10 s for one frame. */
				if (target > last_target + 10000)
					target = last_target + 10000;
				if (target > last_target)
					last_target = target;
				until = t0 + last_target;
			}
		}
		if (duration) {
			int64_t stop_at = t0 + (int64_t)duration * 1000 + 1000;
			if (until > stop_at)
				until = stop_at;
		}
		go = gator_agent_poll(fd, o, until, st, &disconnect, err, &rc);
		if (!go)
			break;
		if (duration && gator_now_ms() >= t0 + (int64_t)duration * 1000 + 1000)
			break; /* the session's duration ends the capture by itself */
		rc = apc_gator_send(fd, APC_GATOR_RESP_APC_DATA, f.body, f.len, o->timeout_ms, err);
		if (rc != APC_OK) {
			disconnect = 1;
			break;
		}
		st->frames++;
		st->bytes += f.len;
	}
	apc_frame_reader_free(fr);
	apc_stream_close(s);
	if (!disconnect) {
		rc = apc_gator_send(fd, APC_GATOR_RESP_APC_DATA, NULL, 0, o->timeout_ms, err);
		if (rc == APC_OK)
			st->ended = 1;
	}
	return rc;
}

int apc_gator_agent_session(struct apc_gator_capture *c, int fd,
			    const struct apc_gator_serve_opts *o, struct apc_gator_serve_stats *st,
			    struct apc_err *err)
{
	unsigned duration = 0;
	int rc;

	memset(st, 0, sizeof *st);
	rc = apc_gator_magic_agent(fd, o->timeout_ms, err);
	if (rc == APC_OK)
		rc = apc_gator_write(fd, APC_GATOR_MAGIC_REPLY, strlen(APC_GATOR_MAGIC_REPLY),
				     o->timeout_ms, err);
	while (rc == APC_OK) {
		struct apc_gator_msg m;
		int r = apc_gator_recv(fd, &m, APC_GATOR_CMD_MAX, o->timeout_ms, err);

		if (r == APC_EDATA) {
			int32_t len = 0;
			/* The header was read: report its length as gatord does. */
			const char *p = strstr(err->msg, "length ");
			if (p)
				len = (int32_t)strtol(p + 7, NULL, 10);
			return gator_send_error(fd, o->timeout_ms, err, "Invalid length received, %" PRId32,
						len);
		}
		if (r == APC_END)
			return apc_err_set(err, APC_EIO, NULL, APC_NO_OFFSET,
					   "streamline closed the connection without a disconnect");
		if (r != APC_OK)
			return r;
		st->commands++;
		switch (m.code) {
		case APC_GATOR_CMD_REQUEST_XML:
			rc = gator_agent_request(c, fd, &m, o->timeout_ms, err);
			break;
		case APC_GATOR_CMD_DELIVER_XML:
			if (!gator_agent_deliver(c, fd, &m, o->timeout_ms, &duration, err, &rc)) {
				apc_gator_msg_free(&m);
				return rc;
			}
			break;
		case APC_GATOR_CMD_APC_START:
			apc_gator_msg_free(&m);
			st->started = 1;
			return gator_agent_stream(c, fd, o, duration, st, err);
		case APC_GATOR_CMD_APC_STOP:
		case APC_GATOR_CMD_DISCONNECT:
			apc_gator_msg_free(&m);
			return APC_OK;
		case APC_GATOR_CMD_PING:
			rc = apc_gator_send(fd, APC_GATOR_RESP_ACK, NULL, 0, o->timeout_ms, err);
			break;
		default:
			/* gatord 6.8 sends an Error and closes (the spec says NAK). */
			rc = gator_send_error(fd, o->timeout_ms, err, "Unknown command type, %d", m.code);
			apc_gator_msg_free(&m);
			return rc;
		}
		apc_gator_msg_free(&m);
	}
	return rc;
}
