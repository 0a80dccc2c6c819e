/*
 * gator.h - the Streamline target-host protocol (gator v6.8) over TCP:
 * the codec (magic exchange, 5-byte command/response headers, XML
 * requests and deliveries), both roles (the host side behind apcrecord,
 * the agent side behind apcserve), and the small XML helpers they need.
 *
 * Wire facts (spec "Target-Host Protocol", checked against gatord 6.8):
 * the host sends "VERSION 680\n" and "STREAMLINE\n"; the agent discards
 * every line before STREAMLINE and answers "GATOR 680\n".  Then every
 * command and response is an int8 code and an int32 LE body length.
 * Streamline uses two connections: one for events/counters/defaults and
 * the configuration, one for the session, captured XML and the capture.
 *
 * Every read waits with poll() and a deadline: a peer that stops talking
 * never hangs a caller.  Lengths from the peer are checked against a
 * limit before anything is allocated.  Sockets are written with
 * MSG_NOSIGNAL, so a closed peer is an EPIPE error, never a signal.
 */
#ifndef APC_GATOR_H
#define APC_GATOR_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "pipeline.h"

#define APC_GATOR_PORT 8080
#define APC_GATOR_PROTOCOL 680
/* gatord's artificial limit on a command body. */
#define APC_GATOR_CMD_MAX (1u << 20)
/* Our limit on an XML response (real events.xml files reach 3 MB). */
#define APC_GATOR_XML_MAX (64u << 20)
/* Bytes of lines we read while looking for the magic. */
#define APC_GATOR_MAGIC_MAX 65536

enum apc_gator_cmd {
	APC_GATOR_CMD_REQUEST_XML = 0,
	APC_GATOR_CMD_DELIVER_XML = 1,
	APC_GATOR_CMD_APC_START = 2,
	APC_GATOR_CMD_APC_STOP = 3,
	APC_GATOR_CMD_DISCONNECT = 4,
	APC_GATOR_CMD_PING = 5
};

enum apc_gator_resp {
	APC_GATOR_RESP_XML = 1,
	APC_GATOR_RESP_APC_DATA = 3,
	APC_GATOR_RESP_ACK = 4,
	APC_GATOR_RESP_NAK = 5,
	APC_GATOR_RESP_ERROR = 0xff
};

/* ---- sockets ---------------------------------------------------------- */

/*
 * apc_gator_connect() : TCP connection to host:port within timeout_ms.
 * The fd is non-blocking and close-on-exec.  APC_EIO with err set (file
 * "HOST:PORT", message "cannot connect: connection refused"; file HOST
 * for "cannot resolve: ...").
 */
int apc_gator_connect(const char *host, unsigned port, int timeout_ms, int *fd,
		      struct apc_err *err);
/*
 * apc_gator_listen() : listening socket on addr:port (port 0 picks a free
 * one); *bound gets the port actually used.  APC_EIO with err set as for
 * apc_gator_connect() ("ADDR:PORT", "cannot listen: address already in
 * use").
 */
int apc_gator_listen(const char *addr, unsigned port, int *fd, unsigned *bound,
		     struct apc_err *err);
/*
 * apc_gator_split_hostport() : "HOST", "HOST:PORT", "[V6]:PORT" into
 * host (NUL-terminated, brackets removed) and port (default if absent).
 * Returns 0, or -1 for a malformed address or port.
 */
int apc_gator_split_hostport(const char *s, unsigned def_port, char *host, size_t hostlen,
			     unsigned *port);

/* ---- codec ------------------------------------------------------------- */

/*
 * apc_gator_read() : exactly n bytes within timeout_ms (one deadline for
 * the whole read).  APC_OK; APC_END if the peer closed before the first
 * byte; APC_EIO on a timeout, an error, or a close part-way (err says
 * which).
 */
int apc_gator_read(int fd, void *buf, size_t n, int timeout_ms, struct apc_err *err);
/* apc_gator_write() : all n bytes within timeout_ms; APC_EIO otherwise. */
int apc_gator_write(int fd, const void *buf, size_t n, int timeout_ms, struct apc_err *err);

/* A command or response: code and a malloc'd body (NUL-terminated). */
struct apc_gator_msg {
	int code;      /* 0..255 */
	uint32_t len;
	uint8_t *body; /* len bytes + NUL; NULL only after free */
};

/* apc_gator_send() : header (code, int32 LE len) then body. */
int apc_gator_send(int fd, int code, const void *body, size_t len, int timeout_ms,
		   struct apc_err *err);
/*
 * apc_gator_recv() : one command or response.  A length that is negative
 * or over max is APC_EDATA ("length N is over the limit of M") before
 * anything is allocated; the header is consumed, the body is not.
 * APC_END when the peer closed cleanly between messages.
 */
int apc_gator_recv(int fd, struct apc_gator_msg *m, uint32_t max, int timeout_ms,
		   struct apc_err *err);
void apc_gator_msg_free(struct apc_gator_msg *m);

/*
 * apc_gator_magic_host() : the host side of the handshake: send
 * "VERSION 680\nSTREAMLINE\n", then read lines (discarding any we do not
 * recognise) until "GATOR <n>"; *version gets n.
 */
int apc_gator_magic_host(int fd, int timeout_ms, int *version, struct apc_err *err);
/*
 * apc_gator_magic_agent() : the agent side: discard lines (VERSION,
 * junk, CR) until "STREAMLINE".  Does not answer: the caller sends
 * "GATOR 680\n" (APC_GATOR_MAGIC_REPLY).
 */
int apc_gator_magic_agent(int fd, int timeout_ms, struct apc_err *err);
#define APC_GATOR_MAGIC_REPLY "GATOR 680\n"

/* "request XML", "ping", ... for messages; "command N" when unknown. */
const char *apc_gator_cmd_name(int code, char *buf, size_t len);

/* ---- XML ----------------------------------------------------------------
 * A scanner for the flat XML of the protocol: start tags and attributes
 * only (comments, declarations and text are skipped).  Enough for
 * request, session, configurations, counters, captured and events.
 */
struct apc_gator_xml_elem {
	const char *name; /* not NUL-terminated */
	size_t name_len;
	const char *attrs; /* the text between the name and '>' */
	size_t attrs_len;
};
struct apc_gator_xml_iter {
	const char *p, *end;
};
void apc_gator_xml_init(struct apc_gator_xml_iter *it, const char *xml, size_t len);
/* Next start tag; 1 when found, 0 at the end of the text. */
int apc_gator_xml_next(struct apc_gator_xml_iter *it, struct apc_gator_xml_elem *e);
/* 1 if e is named `name`. */
int apc_gator_xml_is(const struct apc_gator_xml_elem *e, const char *name);
/*
 * apc_gator_xml_attr() : the value of attribute `name` with the five
 * predefined entities decoded, NUL-terminated in out (truncated to fit).
 * 1 if present, 0 if not.
 */
int apc_gator_xml_attr(const struct apc_gator_xml_elem *e, const char *name, char *out,
		       size_t outlen);
/* The name of the first element (the root), NUL-terminated; "" if none. */
void apc_gator_xml_root(const char *xml, size_t len, char *out, size_t outlen);

/* A request body: <request type="TYPE"/>.  malloc'd, NULL on failure. */
char *apc_gator_request_xml(const char *type);

/* The longest session duration taken, in seconds: a year (leap). */
#define APC_GATOR_DURATION_MAX (86400u * 366)

/* Session XML options (delivered by the host). */
struct apc_gator_session {
	unsigned duration;       /* seconds, 0 = until stopped */
	const char *sample_rate; /* normal, low, none; NULL = normal */
	const char *buffer_mode; /* streaming, large, medium, small; NULL = streaming */
	int call_stack_unwinding;
	const char *target_host; /* may be NULL */
	unsigned target_port;
};
char *apc_gator_session_xml(const struct apc_gator_session *s);
/* The values gatord accepts for buffer_mode and sample_rate (NULL-ended). */
extern const char *const apc_gator_buffer_modes[];
extern const char *const apc_gator_sample_rates[];
/* 1 if v is one of the NULL-ended set. */
int apc_gator_one_of(const char *v, const char *const *set);
/*
 * apc_gator_session_check() : validate a delivered session XML the way
 * gatord does; *duration gets its duration (0 if absent).  -1 with
 * gatord's reply in why ("Invalid session xml", capitalised: it is sent
 * to the host as gatord sends it).
 */
int apc_gator_session_check(const char *xml, size_t len, unsigned *duration, char *why,
			    size_t whylen);
/*
 * apc_gator_session_file_check() : the host's check of a session XML a
 * user gives (apcrecord --session=FILE) before anything connects, with
 * the same value rules as the agent's, stricter on the form: well-formed
 * XML (libxml2) whose root is <session>.  APC_EIO with err naming `name`
 * as the XML errors of captured.xml are named ("offset 0x48: line 4:
 * not well-formed XML: ..."); a bad value at the line the <session>
 * start tag ends on ("line 3: invalid sample_rate 'x' (...)").
 * *duration gets the duration (0 if absent).
 */
int apc_gator_session_file_check(const char *name, const char *xml, size_t len,
				 unsigned *duration, struct apc_err *err);
/*
 * apc_gator_counters_check() : 0 if list is a --counters list
 * apc_gator_config_xml() takes: comma-separated NAME or NAME:EVENT items,
 * none empty, EVENT decimal or 0x hex of at most 32 bits.  Else -1 and
 * the first fault in why, naming its item from 1 ("empty counter name at
 * item 2 ...").
 */
int apc_gator_counters_check(const char *list, char *why, size_t whylen);
/*
 * apc_gator_config_xml() : configuration XML, revision 3, one entry per
 * item of a list apc_gator_counters_check() takes.  NULL if it does not
 * take it, or out of memory.
 */
char *apc_gator_config_xml(const char *list);
/* Counters XML (<counter name=TYPE/>) for the counters of a captured.xml. */
char *apc_gator_counters_from_captured(const char *captured, size_t len);
/* Default configuration XML (revision 3) for the counters of a captured.xml. */
char *apc_gator_defaults_from_captured(const char *captured, size_t len);

/* ---- the host side (apcrecord) ------------------------------------------- */

struct apc_gator_record_opts {
	const char *host;
	unsigned port;
	const char *output;        /* NAME.apc folder */
	int overwrite;
	int timeout_ms;            /* every read; default 10 s */
	int ping_ms;               /* ping after this much silence; default 1 s */
	const char *counters;      /* --counters list, or NULL for the agent's defaults */
	struct apc_gator_session session; /* used when session_xml is NULL */
	const char *session_xml;   /* --session=FILE contents, or NULL */
	size_t session_len;
	const char *session_name;  /* the FILE, as errors name it; NULL: "session XML" */
	/* Called after each frame and about every ping interval. */
	void (*progress)(void *ctx, uint64_t frames, uint64_t bytes);
	void *progress_ctx;
};

struct apc_gator_record_result {
	char output[4096];    /* the capture written, "" if none */
	int agent_version;    /* n of "GATOR n" */
	uint64_t frames, bytes;
	uint64_t pings, acks;
	int stopped;          /* we sent APC Stop (duration, interrupt) */
	int ended;            /* End of Sequence received */
	double seconds;       /* from APC Start to the end */
	char unknown_counters[1024]; /* --counters names the agent does not offer, "A, B" */
};

/*
 * apc_gator_record() : run both connections and write the capture.
 * APC_OK: End of Sequence received and the capture written.  APC_EDATA:
 * the capture was cut (connection lost, Error, timeout after APC Start)
 * and what arrived was written; err says what happened.  APC_EIO: nothing
 * written (a bad counter list or session XML, told before connecting and
 * named as the user gave it; connection refused, an agent Error or NAK
 * before the capture, output exists).  apc_interrupted() makes it send APC Stop and drain.
 */
int apc_gator_record(const struct apc_gator_record_opts *o, struct apc_gator_record_result *r,
		     struct apc_err *err);

/*
 * apc_gator_list() : fetch the Counters and Events XML (malloc'd, caller
 * frees) on one connection, then Disconnect.
 */
int apc_gator_list(const char *host, unsigned port, int timeout_ms, char **counters,
		   size_t *counters_len, char **events, size_t *events_len, struct apc_err *err);

/*
 * The two connections, for tests against a scripted peer: fd is an open
 * stream socket, the magic not yet exchanged.  setup fetches events,
 * counters, defaults and configuration, delivers the configuration
 * (config_xml, or the defaults when NULL) and sends Disconnect.
 */
struct apc_gator_setup {
	char *events, *counters, *defaults, *configuration;
	size_t events_len, counters_len, defaults_len, configuration_len;
	int agent_version;
};
int apc_gator_host_setup(int fd, const char *config_xml, int timeout_ms, struct apc_gator_setup *s,
			 struct apc_err *err);
void apc_gator_setup_free(struct apc_gator_setup *s);

/*
 * apc_gator_host_capture() : on a fresh connection: magic, deliver the
 * session, request captured XML (*captured, malloc'd), APC Start, then
 * hand each APC data body to on_frame until End of Sequence.  Stops with
 * APC Stop after duration_s (0 = never) or on apc_interrupted().  Status
 * as apc_gator_record(), except APC_EDATA may come with r->frames == 0.
 */
struct apc_gator_capture_cb {
	int (*on_frame)(void *ctx, const uint8_t *body, uint32_t len, struct apc_err *err);
	void *ctx;
	void (*progress)(void *ctx, uint64_t frames, uint64_t bytes);
	void *progress_ctx;
};
int apc_gator_host_capture(int fd, const char *session_xml, size_t session_len, unsigned duration_s,
			   int timeout_ms, int ping_ms, const struct apc_gator_capture_cb *cb,
			   char **captured, size_t *captured_len, struct apc_gator_record_result *r,
			   struct apc_err *err);

/* ---- the agent side (apcserve) --------------------------------------------- */

struct apc_gator_capture;

/* What converting the input gave, for the log (as apcconv reports it). */
struct apc_gator_conv {
	const char *from;           /* -f/--from, or NULL to detect */
	int ran;                    /* a conversion ran: free res with apc_conv_result_free */
	int status;                 /* apc_convert()'s status */
	struct apc_err err;         /* its error (apcconv's message) when status != APC_OK */
	double seconds;
	struct apc_conv_result res;
};

/*
 * apc_gator_capture_open() : the capture an agent plays.  An .apc folder
 * or archive of gatord 6.8 (protocol 680 or older) is used as is, unless
 * conv->from names another format; any other input apcconv reads, a
 * newer gatord's capture included, is converted into a private temporary
 * folder first (removed by close), as conv->from forces if set: a format
 * the input is not fails as apcconv fails.
 * conv (may be NULL) reports the conversion.  When nothing converts the
 * status and err are apcconv's (APC_EDATA for damage, APC_EIO for an
 * input no format claims), never naming the temporary folder.
 */
int apc_gator_capture_open(const char *path, struct apc_gator_capture **out,
			   struct apc_gator_conv *conv, struct apc_err *err);
void apc_gator_capture_close(struct apc_gator_capture *c);
/* 1 if the capture was converted on the fly. */
int apc_gator_capture_converted(const struct apc_gator_capture *c);

struct apc_gator_serve_opts {
	int realtime;   /* pace frames by their timestamps */
	int timeout_ms; /* waiting for a command before APC Start; writes */
	int listen_fd;  /* to turn away connections during a capture; -1 = none */
};

struct apc_gator_serve_stats {
	uint64_t frames, bytes; /* APC data sent */
	uint64_t commands;      /* commands handled */
	uint64_t rejected;      /* connections turned away during the capture */
	int started;            /* APC Start received */
	int ended;              /* End of Sequence sent */
	int stopped;            /* APC Stop received */
};

/*
 * apc_gator_agent_session() : serve one connection on fd (not closed
 * here).  APC_OK when it ended the normal way (Disconnect, End of
 * Sequence sent, APC Stop before Start); APC_EDATA when the peer broke
 * the protocol and got an Error; APC_EIO when it went away or timed out.
 */
int apc_gator_agent_session(struct apc_gator_capture *c, int fd,
			    const struct apc_gator_serve_opts *o, struct apc_gator_serve_stats *st,
			    struct apc_err *err);

#endif
