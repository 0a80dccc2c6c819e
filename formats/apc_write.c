/*
 * apc_write.c - the APC writer: model events -> an .apc capture (a folder,
 * a .zip/.tar/.tar.gz archive of one, or a tar stream on stdout).
 *
 * Frames follow gatord 6.8 (protocol 680): the Summary frame first with
 * the core names after the summary message; Block Counter frames for
 * counters (key 2 repeated after every key 0, so both readings of the
 * core rule agree); Name, Scheduler Trace, Backtrace and Proc frames per
 * core; Activity Trace and Idle frames without a core field; External
 * frames for annotations, one fd per client connection.
 *
 * Ordering: per core, messages leave in time order across all frame
 * types.  Each core has at most one open frame; a message of another type
 * for that core flushes it first.  Activity Trace and Idle frames have no
 * core field: those holding messages of one core (activity switches,
 * idle) are kept with that core's frames; those holding links and task
 * exits touch every core, so opening one flushes all per-core frames and
 * a per-core message flushes it.
 * External frames carry absolute annotation times and are exempt.
 *
 * The folder is built in a temporary directory and moved (or archived)
 * into place only at finish, so a failed run leaves nothing behind.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include "annotate.h"
#include "cpu.h"
#include "frame.h"
#include "input.h"
#include "map64.h"
#include "owrite.h"
#include "packed.h"
#include "util.h"
#include "writer.h"
#include "xml.h"

#define APCW_FRAME_DEFAULT (64u << 10) /* flush frames at 64 KiB, like gator's buffers */
#define APCW_FRAME_LIMIT (1u << 20)    /* largest frame_max accepted */
#define APCW_OBUF (1u << 20)           /* data-file write buffer */
#define APCW_STR_MAX (64u << 10)       /* longest name/image string written */
#define APCW_DEPTH_MAX 4096            /* longest call path written */
#define APCW_PROTOCOL 680
#define APCW_ANN_VERSION 4             /* see apcw_annotation() */
/*
 * External frames open at once.  Annotate streams are not ordered
 * against other frames (each message has its own time), so each fd
 * fills a frame of its own instead of flushing whenever the fd changes:
 * annotations of two clients taking turns made one frame per message
 * or two.  Fds share the slots round-robin, which bounds the memory.
 */
#define APCW_EXT_OPEN 8
#define APCW_MAX_FD 65535 /* External fds given out: 1 to this */

enum apcw_kind { APCW_DIR, APCW_ZIP, APCW_TAR, APCW_TGZ, APCW_TBZ2, APCW_TXZ, APCW_TZST, APCW_STDOUT };

/* An open frame: a body being filled, and the Block Counter state. */
struct apcw_open {
	struct apc_buf b;
	int type;        /* frame type, 0 when none is open */
	int32_t core;    /* core field (per-core frames), or External fd */
	int bc_have;     /* a block is open: bc_ts, bc_pid are valid */
	uint64_t bc_ts;
	int32_t bc_pid;
	uint32_t pos;    /* index in w->open_list (per-core frames) */
};

/* An annotation client connection and its External fd. */
struct apcw_conn {
	int32_t tid, pid, fd;
	int version;       /* its setup's annotate version */
};

struct apc_writer {
	struct apc_write_opts o;
	enum apcw_kind kind;
	xmlDocPtr events_doc; /* --events=FILE, read when the writer opens */
	char *path;       /* final output ("-" for stdout) */
	char *name;       /* the capture folder name, NAME.apc */
	char *tmpdir;     /* temporary folder holding the capture files */
	char *datapath;   /* tmpdir/0000000000 */
	char *partpath;   /* temporary archive file, when writing one */
	char *where;      /* what errors about the files name: path, or TMPDIR's
			     folder for a tar stream on stdout */
	int datafd;
	int streamfd;     /* the tar stream's: stdout, or a device or FIFO named by -o */
	struct apc_owrite *ow; /* the data file's writes, on a helper thread */
	uint8_t *obuf;          /* its buffer being filled (apc_owrite_buf) */
	size_t olen;
	uint32_t frame_max;
	int ann_version;
	int64_t created;
	struct apc_model *m;
	int begun;
	/* apc_writer_view(): the model as of the batches being written */
	int view_set;
	size_t view_n;
	uint64_t view_delta;
	/* kept here, added to the model by finish (see apc_writer_view) */
	uint64_t *vals;        /* values written per counter id, nkeys of them */
	struct apc_model um;   /* only its unmapped list: what the writer dropped */

	/* per-core open frames and order state, grown to the highest core */
	struct apcw_open *slot;
	uint64_t *last;   /* last timestamp written per core */
	uint32_t nslots;
	uint32_t *open_list;
	uint32_t nopen;
	uint32_t max_core; /* highest core + 1 seen */
	uint64_t floor;   /* every core's last time is at least this */
	uint64_t tmax;    /* highest time written on any core */
	struct apcw_open glob; /* the open Activity Trace / Idle frame */
	/* open External frames (core = fd), fd f in ext[(f - 1) % APCW_EXT_OPEN] */
	struct apcw_open ext[APCW_EXT_OPEN];

	/* counter keys: keys[id], and the sorted set of keys in use */
	int32_t *keys;
	size_t nkeys;
	int32_t *taken;
	size_t ntaken, taken_cap;
	int32_t next_key;

	/* annotation connections, hashed by (tid, pid) */
	struct apcw_conn *conns;
	size_t nconns, conns_cap;
	struct apc_map64 cmap; /* (tid, pid) -> index + 1 into conns, = fd */
	size_t next_reuse;     /* the conn whose fd a new one takes when all are taken */

	struct apc_buf scratch;
	struct apc_write_stats st;
	int fast;         /* fast paths allowed (APC_NO_SIMD unset) */
	int has_data;      /* a Counter, Block Counter, Activity or perf data frame is written */
};

/* ---- small helpers --------------------------------------------------- */

static char *apcw_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = malloc(n);

	if (p)
		memcpy(p, s, n);
	return p;
}

static char *apcw_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *apcw_printf(const char *fmt, ...)
{
	va_list ap;
	int n;
	char *p;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !(p = malloc((size_t)n + 1)))
		return NULL;
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}

/* Whether s ends with suffix, in any case: a name's extension
 * (X.APC.ZIP is a zip as x.apc.zip is). */
static int apcw_ends(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	return n >= k && strncasecmp(s + n - k, suffix, k) == 0;
}

/* The directory part of path ("." if none), newly allocated. */
static char *apcw_dirname(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return apcw_strdup(".");
	if (slash == path)
		return apcw_strdup("/");
	return apcw_printf("%.*s", (int)(slash - path), path);
}

static const char *apcw_basename(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static int apcw_eio(struct apc_err *err, const char *path, const char *what)
{
	return apc_err_sys(err, APC_EIO, path, what, errno);
}

/* fd moved to 3 or above (closing the original), or -1 with errno. */
static int apcw_fd_up(int fd)
{
	int up = fcntl(fd, F_DUPFD_CLOEXEC, 3), e = errno;

	close(fd);
	errno = e;
	return up;
}

/* Whether -o names a device or FIFO there is: a tar stream goes into it.
 * So does anything but a folder under /dev: /dev/stdout is a regular
 * file when stdout is redirected to one, and a capture folder
 * /dev/stdout.apc is never what was meant. */
static int apcw_stream_target(const char *out)
{
	struct stat st;

	if (stat(out, &st) != 0)
		return 0;
	return S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) ||
	       (!strncmp(out, "/dev/", 5) && !S_ISDIR(st.st_mode));
}

/*
 * An I/O error (errno) about the output, named as the user named it: the
 * output path, not the temporary folder or file it is built in (a name
 * that means nothing to them and is gone after the run), then the member
 * concerned, if any: "big.apc: 0000000000: cannot write: no space left
 * on device".  A tar stream on stdout is built in TMPDIR: that is named.
 */
static int apcw_out_eio(const struct apc_writer *w, struct apc_err *err, const char *member,
			const char *what)
{
	int e = errno;
	char m[256];

	if (member)
		snprintf(m, sizeof m, "%s: %s", member, what);
	else
		snprintf(m, sizeof m, "%s", what);
	return apc_err_sys(err, APC_EIO, w->where, m, e);
}

/* write(2) all of p, retrying short writes and interrupts. */
static int apcw_write_all(int fd, const void *p, size_t n)
{
	const uint8_t *c = p;

	while (n) {
		ssize_t k = write(fd, c, n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (k == 0) {
			errno = EIO;
			return -1;
		}
		c += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Write a whole file (XML) into the temporary folder. */
static int apcw_write_file(struct apc_writer *w, const char *leaf, const void *p, size_t n,
			   struct apc_err *err)
{
	char *path = apcw_printf("%s/%s", w->tmpdir, leaf);
	int fd, rc = APC_OK;

	if (!path)
		return apc_err_set(err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		rc = apcw_out_eio(w, err, leaf, "cannot create");
	else if (apcw_write_all(fd, p, n) != 0)
		rc = apcw_out_eio(w, err, leaf, "cannot write");
	if (fd >= 0 && close(fd) != 0 && rc == APC_OK)
		rc = apcw_out_eio(w, err, leaf, "cannot write");
	free(path);
	return rc;
}

/* ---- the data file ---------------------------------------------------- */

static int apcw_flush_obuf(struct apc_writer *w, struct apc_err *err)
{
	if (w->olen && apc_owrite_submit(w->ow, w->olen) != 0)
		return apcw_out_eio(w, err, "0000000000", "cannot write");
	w->obuf = apc_owrite_buf(w->ow);
	w->olen = 0;
	return APC_OK;
}

/*
 * Append one frame (length word + body) to the data file.  `known` is
 * the frame's type when the caller knows it (saves decoding it for the
 * statistics), else -1.
 */
static int apcw_emit_typed(struct apc_writer *w, const uint8_t *body, size_t len, int32_t known,
			   struct apc_err *err)
{
	uint8_t hdr[4];
	int32_t type = known;

	if (len > INT32_MAX)
		return apc_err_set(err, APC_EIO, w->where, APC_NO_OFFSET,
				   "0000000000: frame of %zu bytes is too large", len);
	hdr[0] = (uint8_t)len;
	hdr[1] = (uint8_t)(len >> 8);
	hdr[2] = (uint8_t)(len >> 16);
	hdr[3] = (uint8_t)(len >> 24);
	if (w->olen + 4 + len > APCW_OBUF) {
		if (apcw_flush_obuf(w, err) < 0)
			return APC_EIO;
	}
	if (4 + len > APCW_OBUF) {
		if (apc_owrite_direct(w->ow, hdr, 4) != 0 || apc_owrite_direct(w->ow, body, len) != 0)
			return apcw_out_eio(w, err, "0000000000", "cannot write");
	} else {
		memcpy(w->obuf + w->olen, hdr, 4);
		if (len)
			memcpy(w->obuf + w->olen + 4, body, len);
		w->olen += 4 + len;
	}
	w->st.frames++;
	w->st.bytes += 4 + len;
	if (known < 0 && !(len && apc_unpack32(body, len, &type) > 0))
		type = -1;
	if (type >= 0 && type < 16)
		w->st.frames_by_type[type]++;
	return APC_OK;
}

static int apcw_emit(struct apc_writer *w, const uint8_t *body, size_t len, struct apc_err *err)
{
	return apcw_emit_typed(w, body, len, -1, err);
}

/* ---- open frames ------------------------------------------------------ */

/*
 * Packed-integer appends for the hot message kinds.  With fast paths on
 * they use apc_pack64_wide(), which writes 10 bytes whatever the value
 * needs: callers reserve 10 bytes per integer (apcw_frame() adds 10 of
 * slack for the last one).  Same bytes either way.
 */
static inline void apcw_put(const struct apc_writer *w, struct apc_buf *b, int64_t v)
{
	if (w->fast)
		b->len += apc_pack64_wide(b->p + b->len, v);
	else
		apc_buf_put_packed64(b, v);
}

static int apcw_flush(struct apc_writer *w, struct apcw_open *s, struct apc_err *err)
{
	int rc;

	if (!s->type)
		return APC_OK;
	rc = apcw_emit_typed(w, s->b.p, s->b.len, s->type, err);
	s->type = 0;
	s->b.len = 0;
	s->bc_have = 0;
	if (s != &w->glob && (s < w->ext || s >= w->ext + APCW_EXT_OPEN)) {
		/* Swap-remove from the list of open per-core frames. */
		uint32_t last = w->open_list[--w->nopen];
		w->open_list[s->pos] = last;
		w->slot[last].pos = s->pos;
	}
	return rc;
}

static int apcw_flush_cores(struct apc_writer *w, struct apc_err *err)
{
	while (w->nopen) {
		if (apcw_flush(w, &w->slot[w->open_list[0]], err) < 0)
			return APC_EIO;
	}
	return APC_OK;
}

/* Make room for per-core state up to `core`. */
static int apcw_grow_cores(struct apc_writer *w, uint32_t core)
{
	uint32_t n = w->nslots ? w->nslots : 8;
	struct apcw_open *ns;
	uint64_t *nl;
	uint32_t *no;

	if (core < w->nslots)
		return APC_OK;
	while (n <= core)
		n *= 2;
	if (n > APC_MAX_CORES)
		n = APC_MAX_CORES;
	ns = realloc(w->slot, n * sizeof *ns);
	if (!ns)
		return APC_ENOMEM;
	w->slot = ns;
	nl = realloc(w->last, n * sizeof *nl);
	if (!nl)
		return APC_ENOMEM;
	w->last = nl;
	no = realloc(w->open_list, n * sizeof *no);
	if (!no)
		return APC_ENOMEM;
	w->open_list = no;
	memset(ns + w->nslots, 0, (n - w->nslots) * sizeof *ns);
	memset(nl + w->nslots, 0, (n - w->nslots) * sizeof *nl);
	w->nslots = n;
	return APC_OK;
}

/*
 * apcw_frame() : the open frame of `type` that the next message for
 * `core` goes into (core -1 for the core-less Activity Trace and Idle
 * frames), after flushing whatever would put it out of order.  Reserves
 * `room` bytes in it.
 */
static struct apcw_open *apcw_frame(struct apc_writer *w, int type, int32_t core, size_t room,
				    struct apc_err *err)
{
	struct apcw_open *s;

	if (core < 0) {
		if (w->glob.type && w->glob.type != type && apcw_flush(w, &w->glob, err) < 0)
			return NULL;
		if (apcw_flush_cores(w, err) < 0)
			return NULL;
		s = &w->glob;
	} else {
		if (w->glob.type && apcw_flush(w, &w->glob, err) < 0)
			return NULL;
		s = &w->slot[core];
		if (s->type && s->type != type && apcw_flush(w, s, err) < 0)
			return NULL;
	}
	if (apc_buf_reserve(&s->b, room + 2 * APC_PACKED32_MAX) != APC_OK) {
		apc_err_set(err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
		return NULL;
	}
	if (!s->type) {
		s->type = type;
		s->core = core;
		s->b.len = 0;
		/* Only a message about to go in opens a frame. */
		if (type == APC_FRAME_COUNTER || type == APC_FRAME_BLOCK_COUNTER ||
		    type == APC_FRAME_ACTIVITY_TRACE)
			w->has_data = 1;
		s->bc_have = 0;
		apcw_put(w, &s->b, type);
		if (core >= 0) {
			/* Activity Trace and Idle frames have no core field, but
			 * one whose messages are all for one core is kept with
			 * that core's frames, so it flushes only that core. */
			if (apc_frame_has_core(type))
				apcw_put(w, &s->b, core);
			s->pos = w->nopen;
			w->open_list[w->nopen++] = (uint32_t)core;
		}
	}
	return s;
}

/* After a message: flush the frame once it reaches the size bound. */
static int apcw_done(struct apc_writer *w, struct apcw_open *s, struct apc_err *err)
{
	w->st.messages++;
	if (s->b.len >= w->frame_max)
		return apcw_flush(w, s, err);
	return APC_OK;
}

/* ---- ordering ------------------------------------------------------- */

/*
 * apcw_time() : the zero-based time for an event on `core` (-1: a
 * message with no core, which must follow every core), moved forward
 * if it would go back in time.  Events without a time of their own take
 * the current time of their core.  Inline everywhere (GCC kept it a
 * call): it runs once per message.
 */
static inline __attribute__((always_inline)) uint64_t
apcw_time(struct apc_writer *w, const struct apc_event *ev, int32_t core)
{
	uint64_t d = apc_writer_zero(w);
	uint64_t t = ev->ts > d ? ev->ts - d : 0;
	uint64_t min;

	min = core >= 0 ? (w->last[core] > w->floor ? w->last[core] : w->floor) : w->tmax;
	if (ev->flags & APC_EVF_NO_TS)
		t = min;
	/* Past 2^63 ns a packed timestamp would read as negative. */
	if (t > (uint64_t)INT64_MAX) {
		apc_model_unmapped(&w->um, "event times past 2^63 ns (written at the time before)", 1);
		t = min;
	}
	if (t < min) {
		t = min;
		w->st.reordered++;
	}
	if (core >= 0)
		w->last[core] = t;
	else
		w->floor = t;
	if (t > w->tmax)
		w->tmax = t;
	return t;
}

/* The core an event is written for; -1 (and counted) if unusable. */
static int32_t apcw_core(struct apc_writer *w, const struct apc_event *ev)
{
	int32_t c = ev->core == APC_NO_CORE ? 0 : ev->core;

	if (c < 0 || c >= APC_MAX_CORES) {
		apc_model_unmapped(&w->um, "events with a core out of range", 1);
		w->st.dropped++;
		return -1;
	}
	if (apcw_grow_cores(w, (uint32_t)c) != APC_OK)
		return -2;
	if ((uint32_t)c + 1 > w->max_core)
		w->max_core = (uint32_t)c + 1;
	return c;
}

/* ---- counter keys ---------------------------------------------------- */

static size_t apcw_taken_pos(const struct apc_writer *w, int32_t key)
{
	size_t lo = 0, hi = w->ntaken;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (w->taken[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int apcw_is_taken(const struct apc_writer *w, int32_t key)
{
	size_t i = apcw_taken_pos(w, key);

	return i < w->ntaken && w->taken[i] == key;
}

static int apcw_take(struct apc_writer *w, int32_t key)
{
	size_t i = apcw_taken_pos(w, key);

	if (w->ntaken == w->taken_cap) {
		size_t n = w->taken_cap ? w->taken_cap * 2 : 64;
		int32_t *nt = realloc(w->taken, n * sizeof *nt);
		if (!nt)
			return APC_ENOMEM;
		w->taken = nt;
		w->taken_cap = n;
	}
	memmove(w->taken + i + 1, w->taken + i, (w->ntaken - i) * sizeof *w->taken);
	w->taken[i] = key;
	w->ntaken++;
	return APC_OK;
}

/* Counters the writer may look at: the view's, else the model's. */
static size_t apcw_ncounters(const struct apc_writer *w)
{
	return w->view_set ? w->view_n : w->m->ncounters;
}

static int apcw_grow_keys(struct apc_writer *w)
{
	size_t n = apcw_ncounters(w);
	int32_t *nk;
	uint64_t *nv;

	if (n <= w->nkeys)
		return APC_OK;
	nk = realloc(w->keys, n * sizeof *nk);
	if (!nk)
		return APC_ENOMEM;
	memset(nk + w->nkeys, 0, (n - w->nkeys) * sizeof *nk);
	w->keys = nk;
	nv = realloc(w->vals, n * sizeof *nv);
	if (!nv)
		return APC_ENOMEM;
	memset(nv + w->nkeys, 0, (n - w->nkeys) * sizeof *nv);
	w->vals = nv;
	w->nkeys = n;
	return APC_OK;
}

/*
 * apcw_assign_keys() : give every declaration without a key one.  First
 * the declarations whose own key (> 2) is free keep it, then the rest
 * get the lowest free keys from 3 up, both in declaration order.
 */
static int apcw_assign_keys(struct apc_writer *w)
{
	if (apcw_grow_keys(w) != APC_OK)
		return APC_ENOMEM;
	for (size_t i = 0; i < w->nkeys; i++) {
		int32_t k;
		if (w->keys[i])
			continue;
		/* a reader on another thread may be moving the array */
		if (w->m->lock)
			pthread_mutex_lock(w->m->lock);
		k = w->m->counters[i].key;
		if (w->m->lock)
			pthread_mutex_unlock(w->m->lock);
		if (k <= 2 || apcw_is_taken(w, k))
			continue;
		if (apcw_take(w, k) != APC_OK)
			return APC_ENOMEM;
		w->keys[i] = k;
	}
	for (size_t i = 0; i < w->nkeys; i++) {
		if (w->keys[i])
			continue;
		while (apcw_is_taken(w, w->next_key)) {
			if (w->next_key == INT32_MAX)
				return APC_ENOMEM;
			w->next_key++;
		}
		if (apcw_take(w, w->next_key) != APC_OK)
			return APC_ENOMEM;
		w->keys[i] = w->next_key;
	}
	return APC_OK;
}

/* The key of counter `id`, assigning keys to new declarations; 0 if bad. */
static int32_t apcw_key(struct apc_writer *w, uint32_t id, int *oom)
{
	if (id < w->nkeys && w->keys[id])
		return w->keys[id];
	if (id >= apcw_ncounters(w))
		return 0;
	if (apcw_assign_keys(w) != APC_OK) {
		*oom = 1;
		return 0;
	}
	return w->keys[id];
}

/* ---- events -> messages ---------------------------------------------- */

static size_t apcw_slen(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	return n > APCW_STR_MAX ? APCW_STR_MAX : n;
}

static void apcw_put_str(struct apc_buf *b, const char *s, size_t n)
{
	/* Room was reserved by the caller: apc_buf_put_string cannot fail. */
	(void)apc_buf_put_string(b, s ? s : "", n);
}

static int apcw_oom(struct apc_err *err)
{
	return apc_err_set(err, APC_ENOMEM, NULL, APC_NO_OFFSET, "out of memory");
}

static int apcw_counter(struct apc_writer *w, const struct apc_event *ev, struct apc_err *err)
{
	int oom = 0;
	int32_t key = apcw_key(w, ev->u.counter.counter, &oom);
	int32_t core = apcw_core(w, ev), pid = ev->u.counter.pid;
	struct apcw_open *s;
	uint64_t t;

	if (oom || core == -2)
		return apcw_oom(err);
	if (!key || core < 0) {
		if (!key) {
			apc_model_unmapped(&w->um, "counter values of undeclared counters", 1);
			w->st.dropped++;
		}
		return APC_OK;
	}
	t = apcw_time(w, ev, core);
	if (!(s = apcw_frame(w, APC_FRAME_BLOCK_COUNTER, core, 8 * APC_PACKED64_MAX, err)))
		return err->status;
	/* A new time starts a block: key 0 time, key 2 core (which the
	 * spec says a time resets and gatord keeps: write both readings). */
	if (!s->bc_have || s->bc_ts != t) {
		apcw_put(w, &s->b, 0);
		apcw_put(w, &s->b, (int64_t)t);
		apcw_put(w, &s->b, 2);
		apcw_put(w, &s->b, core);
		s->bc_have = 1;
		s->bc_ts = t;
		s->bc_pid = APC_NO_PID;
	}
	if (pid != s->bc_pid) {
		apcw_put(w, &s->b, 1);
		apcw_put(w, &s->b, pid == APC_NO_PID ? 0 : pid);
		s->bc_pid = pid;
	}
	apcw_put(w, &s->b, key);
	apcw_put(w, &s->b, ev->u.counter.value);
	w->vals[ev->u.counter.counter]++;
	return apcw_done(w, s, err);
}

/*
 * apcw_counter_fast() : apcw_counter() for the common case, same bytes:
 * a declared counter with a key and a core already seen.  The frame
 * is only looked for (apcw_frame()) when the core's Block Counter frame
 * is not the open one or lacks room.  Packed integers go straight into the frame body with
 * apc_pack64_wide() (10 bytes of room each).  Anything else (and
 * APC_NO_SIMD=1) takes apcw_counter().
 */
static inline __attribute__((always_inline)) int
apcw_counter_fast(struct apc_writer *w, const struct apc_event *ev, struct apc_err *err)
{
	uint32_t id = ev->u.counter.counter;
	int32_t core = ev->core == APC_NO_CORE ? 0 : ev->core, pid = ev->u.counter.pid, key;
	struct apcw_open *s;
	uint8_t *p;
	uint64_t t;

	if (id >= w->nkeys || !(key = w->keys[id]) || core < 0 ||
	    (uint32_t)core >= w->max_core)
		return apcw_counter(w, ev, err);
	t = apcw_time(w, ev, core);
	s = &w->slot[core];
	if (w->glob.type || s->type != APC_FRAME_BLOCK_COUNTER || s->b.cap - s->b.len < 8 * APC_PACKED64_MAX) {
		if (!(s = apcw_frame(w, APC_FRAME_BLOCK_COUNTER, core, 8 * APC_PACKED64_MAX, err)))
			return err->status;
	}
	p = s->b.p + s->b.len;
	if (!s->bc_have || s->bc_ts != t) {
		*p++ = 0;
		p += apc_pack64_wide(p, (int64_t)t);
		*p++ = 2;
		p += apc_pack64_small(p, core);
		s->bc_have = 1;
		s->bc_ts = t;
		s->bc_pid = APC_NO_PID;
	}
	if (pid != s->bc_pid) {
		*p++ = 1;
		p += apc_pack64_wide(p, pid == APC_NO_PID ? 0 : pid);
		s->bc_pid = pid;
	}
	p += apc_pack64_small(p, key);
	p += apc_pack64_wide(p, ev->u.counter.value);
	s->b.len = (size_t)(p - s->b.p);
	w->vals[id]++;
	return apcw_done(w, s, err);
}

#define APCW_ROW_MAX 64 /* longest counter row packed in one call */

/*
 * apcw_counters() : a row of counter values of one core at one time
 * (APC_EV_COUNTERS), same bytes as one APC_EV_COUNTER event per value.
 * The common case - fast paths on, every counter keyed, a core already
 * seen, and a frame that cannot reach its size bound inside the row -
 * builds the whole group (key 0 time, key 2 core, key 1 pid when it
 * changes, then key/value pairs) as one array and packs it with the
 * batch encoder.  Anything else goes value by value.
 */
static int apcw_counters(struct apc_writer *w, const struct apc_event *ev, struct apc_err *err)
{
	const uint32_t n = ev->u.counters.n, *ids = ev->u.counters.ids;
	const int64_t *vals = ev->u.counters.values;
	int32_t core = ev->core == APC_NO_CORE ? 0 : ev->core, pid = ev->u.counters.pid;
	int64_t row[6 + 2 * APCW_ROW_MAX], *q = row;
	size_t room = (6 + 2 * (size_t)n) * APC_PACKED64_MAX;
	struct apcw_open *s = NULL;
	int fast = w->fast && n <= APCW_ROW_MAX && core >= 0 && (uint32_t)core < w->max_core;
	uint64_t t;

	for (uint32_t i = 0; fast && i < n; i++)
		fast = ids[i] < w->nkeys && w->keys[ids[i]];
	if (fast) {
		s = &w->slot[core];
		if (w->glob.type || s->type != APC_FRAME_BLOCK_COUNTER || s->b.cap - s->b.len < room) {
			if (!(s = apcw_frame(w, APC_FRAME_BLOCK_COUNTER, core, room, err)))
				return err->status;
		}
		fast = s->b.len + room < w->frame_max;
	}
	if (!fast) {
		for (uint32_t i = 0; i < n; i++) {
			struct apc_event one = apc_event_value(ev, i);
			int rc = w->fast ? apcw_counter_fast(w, &one, err) : apcw_counter(w, &one, err);
			if (rc < 0)
				return rc;
		}
		return APC_OK;
	}
	t = apcw_time(w, ev, core);
	if (!s->bc_have || s->bc_ts != t) {
		*q++ = 0;
		*q++ = (int64_t)t;
		*q++ = 2;
		*q++ = core;
		s->bc_have = 1;
		s->bc_ts = t;
		s->bc_pid = APC_NO_PID;
	}
	if (pid != s->bc_pid) {
		*q++ = 1;
		*q++ = pid == APC_NO_PID ? 0 : pid;
		s->bc_pid = pid;
	}
	for (uint32_t i = 0; i < n; i++) {
		*q++ = w->keys[ids[i]];
		*q++ = vals[i];
		w->vals[ids[i]]++;
	}
	s->b.len += apc_pack64_array(s->b.p + s->b.len, row, (size_t)(q - row));
	/* the row stays below frame_max (checked above): no flush due */
	w->st.messages += n;
	return APC_OK;
}

static int apcw_name(struct apc_writer *w, const struct apc_event *ev, struct apc_err *err)
{
	int32_t core = apcw_core(w, ev);
	size_t n = apcw_slen(ev->u.name.name);
	struct apcw_open *s;
	uint64_t t = 0;

	if (core == -2)
		return apcw_oom(err);
	if (core < 0)
		return APC_OK;
	if (ev->type == APC_EV_THREAD_NAME)
		t = apcw_time(w, ev, core);
	if (!(s = apcw_frame(w, APC_FRAME_NAME, core, 4 * APC_PACKED64_MAX + n, err)))
		return err->status;
	if (ev->type == APC_EV_THREAD_NAME) {
		apc_buf_put_packed32(&s->b, 2);
		apc_buf_put_packed64(&s->b, (int64_t)t);
	} else {
		/* Cookie names have no time. */
		apc_buf_put_packed32(&s->b, 1);
	}
	apc_buf_put_packed32(&s->b, ev->u.name.id);
	apcw_put_str(&s->b, ev->u.name.name, n);
	return apcw_done(w, s, err);
}

static int apcw_sched(struct apc_writer *w, const struct apc_event *ev, struct apc_err *err)
{
	int32_t core = apcw_core(w, ev);
	struct apcw_open *s;
	uint64_t t;
	int sw = ev->type == APC_EV_SCHED_SWITCH;

	if (core == -2)
		return apcw_oom(err);
	if (core < 0)
		return APC_OK;
	t = apcw_time(w, ev, core);
	if (!(s = apcw_frame(w, APC_FRAME_SCHED_TRACE, core, 4 * APC_PACKED64_MAX, err)))
		return err->status;
	apcw_put(w, &s->b, sw ? 1 : 2);
	apcw_put(w, &s->b, (int64_t)t);
	apcw_put(w, &s->b, ev->u.sched.tid);
	if (sw)
		apcw_put(w, &s->b, ev->u.sched.state);
	return apcw_done(w, s, err);
}

/* Link, activity switch and task exit: Activity Trace frames (no core field). */
static int apcw_activity(struct apc_writer *w, const struct apc_event *ev, struct apc_err *err)
{
	struct apcw_open *s;
	uint64_t t;
	int32_t key = 0, core = -1;
	int oom = 0;

	if (ev->type == APC_EV_ACTIVITY) {
		key = apcw_key(w, ev->u.activity.counter, &oom);
		if (oom)
			return apcw_oom(err);
		if (!key) {
			apc_model_unmapped(&w->um, "activity switches of undeclared counters", 1);
			w->st.dropped++;
			return APC_OK;
		}
		if ((core = apcw_core(w, ev)) == -2)
			return apcw_oom(err);
		if (core < 0)
			return APC_OK;
	}
	/* A switch is ordered on its own core; links and exits on all. */
	t = apcw_time(w, ev, core);
	if (!(s = apcw_frame(w, APC_FRAME_ACTIVITY_TRACE, core, 8 * APC_PACKED64_MAX, err)))
		return err->status;
	switch (ev->type) {
	case APC_EV_LINK:
		apcw_put(w, &s->b, 1);
		apcw_put(w, &s->b, (int64_t)t);
		apcw_put(w, &s->b, ev->u.link.cookie);
		apcw_put(w, &s->b, ev->u.link.pid);
		apcw_put(w, &s->b, ev->u.link.tid);
		break;
	case APC_EV_ACTIVITY:
		apcw_put(w, &s->b, 2);
		apcw_put(w, &s->b, (int64_t)t);
		apcw_put(w, &s->b, core);
		apcw_put(w, &s->b, key);
		apcw_put(w, &s->b, ev->u.activity.activity);
		apcw_put(w, &s->b, ev->u.activity.tid);
		apcw_put(w, &s->b, ev->u.activity.wait);
		w->vals[ev->u.activity.counter]++;
		break;
	default: /* APC_EV_TASK_EXIT */
		apcw_put(w, &s->b, 3);
		apcw_put(w, &s->b, (int64_t)t);
		apcw_put(w, &s->b, ev->u.sched.tid);
		break;
	}
	return apcw_done(w, s, err);
}

static int apcw_idle(struct apc_writer *w, const struct apc_event *ev, struct apc_err *err)
{
	struct apcw_open *s;
	int32_t core;
	uint64_t t;

	if (ev->core == APC_NO_CORE) {
		apc_model_unmapped(&w->um, "idle events without a core", 1);
		w->st.dropped++;
		return APC_OK;
	}
	if ((core = apcw_core(w, ev)) == -2)
		return apcw_oom(err);
	if (core < 0)
		return APC_OK;
	t = apcw_time(w, ev, core);
	if (!(s = apcw_frame(w, APC_FRAME_IDLE, core, 4 * APC_PACKED64_MAX, err)))
		return err->status;
	/* The Idle message has no code: state, time, core. */
	apcw_put(w, &s->b, ev->u.idle.state);
	apcw_put(w, &s->b, (int64_t)t);
	apcw_put(w, &s->b, core);
	return apcw_done(w, s, err);
}

static int apcw_sample(struct apc_writer *w, const struct apc_event *ev, struct apc_err *err)
{
	uint32_t depth = ev->u.sample.depth;
	int32_t core = apcw_core(w, ev);
	struct apcw_open *s;
	uint64_t t;

	if (core == -2)
		return apcw_oom(err);
	if (core < 0)
		return APC_OK;
	if (!ev->u.sample.pcs)
		depth = 0;
	if (depth > APCW_DEPTH_MAX)
		depth = APCW_DEPTH_MAX;
	t = apcw_time(w, ev, core);
	if (!(s = apcw_frame(w, APC_FRAME_BACKTRACE, core,
			     5 * APC_PACKED64_MAX + (size_t)depth * (APC_PACKED32_MAX + APC_PACKED64_MAX), err)))
		return err->status;
	apcw_put(w, &s->b, (int64_t)t);
	apcw_put(w, &s->b, ev->u.sample.cookie);
	apcw_put(w, &s->b, ev->u.sample.pid);
	apcw_put(w, &s->b, ev->u.sample.tid);
	for (uint32_t i = 0; i < depth; i++) {
		int32_t c = ev->u.sample.pcs[i].cookie;
		/* Cookie 1 would read as End of Message: write it as invalid. */
		apcw_put(w, &s->b, c == 1 ? -1 : c);
		apcw_put(w, &s->b, ev->u.sample.pcs[i].offset);
	}
	apcw_put(w, &s->b, 1); /* End of Message */
	return apcw_done(w, s, err);
}

/*
 * Proc frames as gatord 6.8 writes them: code 5 (comm), pid, tid, then
 * the image and the thread name as NUL-terminated strings (not the
 * spec's length-prefixed strings).  No timestamp.
 */
static int apcw_proc(struct apc_writer *w, const struct apc_event *ev, struct apc_err *err)
{
	int32_t core = apcw_core(w, ev);
	const char *img = ev->u.proc.image ? ev->u.proc.image : "";
	const char *comm = ev->u.proc.comm ? ev->u.proc.comm : "";
	size_t ni = apcw_slen(img), nc = apcw_slen(comm);
	struct apcw_open *s;
	static const uint8_t nul = 0;

	if (core == -2)
		return apcw_oom(err);
	if (core < 0)
		return APC_OK;
	if (!(s = apcw_frame(w, APC_FRAME_PROC, core, 3 * APC_PACKED32_MAX + ni + nc + 2, err)))
		return err->status;
	apc_buf_put_packed32(&s->b, 5);
	apc_buf_put_packed32(&s->b, ev->u.proc.pid);
	apc_buf_put_packed32(&s->b, ev->u.proc.tid);
	(void)apc_buf_put_bytes(&s->b, img, ni);
	(void)apc_buf_put_bytes(&s->b, &nul, 1);
	(void)apc_buf_put_bytes(&s->b, comm, nc);
	(void)apc_buf_put_bytes(&s->b, &nul, 1);
	return apcw_done(w, s, err);
}

/* The open External frame of fd, opened (with room for frame_max
 * bytes) if it is not, which *opened (when not NULL) says; NULL after
 * an error. */
static struct apcw_open *apcw_ext_open(struct apc_writer *w, int32_t fd, int *opened,
				       struct apc_err *err)
{
	struct apcw_open *s = &w->ext[(uint32_t)(fd - 1) % APCW_EXT_OPEN];

	if (s->type && s->core != fd && apcw_flush(w, s, err) < 0)
		return NULL;
	if (opened)
		*opened = !s->type;
	if (!s->type) {
		if (apc_buf_reserve(&s->b, w->frame_max + 2 * APC_PACKED32_MAX) != APC_OK) {
			apcw_oom(err);
			return NULL;
		}
		s->type = APC_FRAME_EXTERNAL;
		s->core = fd;
		s->b.len = 0;
		apc_buf_put_packed32(&s->b, APC_FRAME_EXTERNAL);
		apc_buf_put_packed32(&s->b, fd);
	}
	return s;
}

/* Append stream bytes for External fd, split across frames at frame_max. */
static int apcw_ext_bytes(struct apc_writer *w, int32_t fd, const uint8_t *p, size_t n,
			  struct apc_err *err)
{
	while (n) {
		struct apcw_open *s = apcw_ext_open(w, fd, NULL, err);
		size_t room;
		if (!s)
			return err->status;
		room = s->b.len < w->frame_max ? w->frame_max - s->b.len : 0;
		if (room > n)
			room = n;
		if (apc_buf_put_bytes(&s->b, p, room) != APC_OK)
			return apcw_oom(err);
		p += room;
		n -= room;
		if (s->b.len >= w->frame_max && apcw_flush(w, s, err) < 0)
			return APC_EIO;
	}
	return APC_OK;
}

static uint64_t apcw_conn_key(int32_t tid, int32_t pid)
{
	return (uint64_t)(uint32_t)tid << 32 | (uint32_t)pid;
}

/*
 * Close connection c: its open External frame out, then the disconnect
 * ([-1][fd]), as gatord writes when a client goes away.
 */
static int apcw_conn_close(struct apc_writer *w, const struct apcw_conn *c, struct apc_err *err)
{
	struct apcw_open *s = &w->ext[(uint32_t)(c->fd - 1) % APCW_EXT_OPEN];
	uint8_t body[3 * APC_PACKED32_MAX];
	size_t n;
	int rc;

	if (s->type && s->core == c->fd && (rc = apcw_flush(w, s, err)) < 0)
		return rc;
	n = apc_pack32(body, APC_FRAME_EXTERNAL);
	n += apc_pack32(body + n, -1);
	n += apc_pack32(body + n, c->fd);
	return apcw_emit(w, body, n, err);
}

/*
 * The connection for (tid, pid) in *c, created on first sight (*is_new)
 * with fds from 1 in order of first appearance.  Readers track fds up
 * to APCW_MAX_FD (gatord's are a process's socket fds, small): with
 * every one taken (a Java trace of more threads than that), a new
 * connection takes the fd of the next in turn, closed first; a client
 * heard from again after that opens a new connection, setup and all.
 */
static int apcw_conn(struct apc_writer *w, int32_t tid, int32_t pid, struct apcw_conn **c, int *is_new,
		     struct apc_err *err)
{
	uint64_t key = apcw_conn_key(tid, pid), i;
	struct apcw_conn *nc;
	int rc;

	*is_new = 0;
	if (apc_map64_find(&w->cmap, key, &i)) {
		*c = &w->conns[i - 1];
		return APC_OK;
	}
	if (w->nconns >= APCW_MAX_FD) {
		nc = &w->conns[w->next_reuse];
		w->next_reuse = (w->next_reuse + 1) % APCW_MAX_FD;
		if ((rc = apcw_conn_close(w, nc, err)) < 0)
			return rc;
		apc_map64_del(&w->cmap, apcw_conn_key(nc->tid, nc->pid));
	} else {
		if (w->nconns == w->conns_cap) {
			size_t cap = w->conns_cap ? w->conns_cap * 2 : 16;
			if (!(nc = realloc(w->conns, cap * sizeof *nc)))
				return apcw_oom(err);
			w->conns = nc;
			w->conns_cap = cap;
		}
		nc = &w->conns[w->nconns];
		nc->fd = (int32_t)++w->nconns;
	}
	if (apc_map64_put(&w->cmap, key, (uint64_t)nc->fd) < 0)
		return apcw_oom(err);
	nc->tid = tid;
	nc->pid = pid;
	*c = nc;
	*is_new = 1;
	return APC_OK;
}

/*
 * Annotations: each client connection (tid, pid) gets an External fd;
 * its stream starts with the setup message.  The version is fixed when
 * the first message of a connection is written, before the rest of the
 * stream is known: the version of the stream that message came from
 * (3, 4 or 5), else 4 (gatord 6.8's, and enough for every code
 * including 0x0e-0x10) for annotations of other formats, unless the
 * writer's options fix it.  Keeping 5 keeps signed 64-bit counter
 * values; keeping 3 changes no bytes of a message (v4 only adds codes
 * 0x0e-0x10, which a v3 stream cannot hold) but keeps the capture
 * saying which client wrote it.  The setup keeps the source's
 * don't-mangle byte.  Annotation timestamps are absolute, as clients
 * send them.
 */
static int apcw_annotation(struct apc_writer *w, const struct apc_event *ev, struct apc_err *err)
{
	const struct apc_ann *a = ev->u.ann;
	struct apcw_conn *c = NULL;
	int is_new, rc;

	if (!a) {
		w->st.dropped++;
		return APC_OK;
	}
	if ((rc = apcw_conn(w, a->tid, a->pid, &c, &is_new, err)) < 0)
		return rc;
	if (is_new)
		c->version = !w->o.annotate_version && a->version >= 3 && a->version <= 5
				     ? a->version : w->ann_version;
	if (c->version < 4 && a->code >= APC_ANN_JOB_START) {
		apc_model_unmapped(&w->um, "annotations newer than the annotate version", 1);
		w->st.dropped++;
		return APC_OK;
	}
	w->scratch.len = 0;
	if (is_new) {
		if (apc_ann_encode_setup(&w->scratch, c->version, a->tid, a->pid, a->dont_mangle) != APC_OK)
			return apcw_oom(err);
		if ((rc = apcw_ext_bytes(w, c->fd, w->scratch.p, w->scratch.len, err)) < 0)
			return rc;
		w->scratch.len = 0;
	}
	/* Encoded straight into the fd's frame; what runs past frame_max
	 * moves on to the next frames, as apcw_ext_bytes() splits bytes. */
	int opened;
	struct apcw_open *s = apcw_ext_open(w, c->fd, &opened, err);
	if (!s)
		return err->status;
	rc = apc_ann_encode(&s->b, c->version, ev->ts, a);
	if (rc == APC_ENOMEM)
		return apcw_oom(err);
	if (rc != APC_OK) {
		if (opened)
			s->type = 0; /* no frame for a message that is not written */
		apc_model_unmapped(&w->um, "annotations the encoder rejected", 1);
		w->st.dropped++;
		return APC_OK;
	}
	w->st.messages++;
	if (s->b.len < w->frame_max)
		return APC_OK;
	size_t over = s->b.len - w->frame_max;
	if (apc_buf_put_bytes(&w->scratch, s->b.p + w->frame_max, over) != APC_OK)
		return apcw_oom(err);
	s->b.len = w->frame_max;
	if (apcw_flush(w, s, err) < 0)
		return APC_EIO;
	return apcw_ext_bytes(w, c->fd, w->scratch.p, w->scratch.len, err);
}

/*
 * A frame kept opaque: [type][core][bytes], a frame of its own.  The
 * bytes are the body after the frame header (as lib/frame.c splits it);
 * the core is written for types that have one, 0 when the event has none.
 */
static int apcw_raw(struct apc_writer *w, const struct apc_event *ev, struct apc_err *err)
{
	w->scratch.len = 0;
	if (apc_buf_reserve(&w->scratch, 2 * APC_PACKED32_MAX) != APC_OK)
		return apcw_oom(err);
	apc_buf_put_packed32(&w->scratch, ev->u.raw.frame_type);
	if (apc_frame_has_core(ev->u.raw.frame_type)) {
		/* its core counts in captured.xml's <target cores>, as any
		 * event's does (apcverify's frame-core); one out of range
		 * is dropped and counted */
		int32_t c = apcw_core(w, ev);
		if (c == -2)
			return apcw_oom(err);
		if (c < 0)
			return APC_OK;
		apc_buf_put_packed32(&w->scratch, c);
	}
	if (ev->u.raw.len && (!ev->u.raw.bytes ||
			      apc_buf_put_bytes(&w->scratch, ev->u.raw.bytes, ev->u.raw.len) != APC_OK))
		return ev->u.raw.bytes ? apcw_oom(err) : APC_OK;
	w->st.messages++;
	/* Data carried over whole (an empty frame has none), or perf-mode
	 * samples (apcverify accepts a capture whose samples are all in perf
	 * data frames). */
	switch (ev->u.raw.frame_type) {
	case APC_FRAME_COUNTER:
	case APC_FRAME_BLOCK_COUNTER:
	case APC_FRAME_ACTIVITY_TRACE:
		if (ev->u.raw.len)
			w->has_data = 1;
		break;
	case APC_FRAME_PERF_DATA: w->has_data = 1; break;
	default: break;
	}
	return apcw_emit(w, w->scratch.p, w->scratch.len, err);
}

/* ---- open / begin / write ------------------------------------------- */

static int apcw_load_events(struct apc_writer *w, struct apc_err *err);

static void apcw_free(struct apc_writer *w)
{
	if (!w)
		return;
	apc_owrite_free(w->ow); /* its helper first: it may be writing to datafd */
	if (w->datafd >= 0)
		close(w->datafd);
	for (uint32_t i = 0; i < w->nslots; i++)
		apc_buf_free(&w->slot[i].b);
	apc_buf_free(&w->glob.b);
	for (int i = 0; i < APCW_EXT_OPEN; i++)
		apc_buf_free(&w->ext[i].b);
	apc_buf_free(&w->scratch);
	free(w->slot);
	free(w->last);
	free(w->open_list);
	free(w->keys);
	free(w->vals);
	apc_model_free(&w->um);
	if (w->events_doc)
		xmlFreeDoc(w->events_doc);
	free(w->taken);
	free(w->conns);
	apc_map64_free(&w->cmap);
	if (w->streamfd != STDOUT_FILENO)
		close(w->streamfd);
	free(w->path);
	free(w->name);
	free(w->tmpdir);
	free(w->datapath);
	free(w->partpath);
	free(w->where);
	free(w);
}

static int64_t apcw_created(const struct apc_writer *w, const struct apc_model *m)
{
	const char *e = getenv("SOURCE_DATE_EPOCH");

	if (w->o.created >= 0)
		return w->o.created;
	if (m->meta.created >= 0)
		return m->meta.created;
	/* the input's own wall clock (a Barman or LTT header's), in s */
	if (m->meta.wall_clock_ns)
		return (int64_t)(m->meta.wall_clock_ns / 1000000000u);
	if (e && *e) {
		char *end;
		errno = 0;
		long long v = strtoll(e, &end, 10);
		if (!errno && !*end && v >= 0)
			return v;
	}
	return 0;
}

int apc_writer_open(const char *out, const struct apc_write_opts *o, struct apc_writer **wp,
		    struct apc_err *err)
{
	struct apc_writer *w;
	char *dir = NULL;
	const char *base;
	struct stat st;

	*wp = NULL;
	if (!out || !*out)
		return apc_err_set(err, APC_EIO, NULL, APC_NO_OFFSET, "no output name given");
	if ((w = calloc(1, sizeof *w)))
		apc_model_init(&w->um);
	if (!w)
		return apcw_oom(err);
	w->datafd = -1;
	w->streamfd = STDOUT_FILENO;
	if (o)
		w->o = *o;
	else
		w->o.created = -1;
	w->frame_max = w->o.frame_max ? w->o.frame_max : APCW_FRAME_DEFAULT;
	w->fast = (apc_cpu_features() & APC_CPU_FAST) != 0;
	if (w->frame_max < 64)
		w->frame_max = 64;
	if (w->frame_max > APCW_FRAME_LIMIT)
		w->frame_max = APCW_FRAME_LIMIT;
	w->ann_version = w->o.annotate_version ? w->o.annotate_version : APCW_ANN_VERSION;
	if (w->ann_version < 3 || w->ann_version > 5) {
		apcw_free(w);
		return apc_err_set(err, APC_EIO, NULL, APC_NO_OFFSET,
				   "annotate version %d is not one of 3, 4, 5", w->o.annotate_version);
	}
	w->next_key = 3;
	if (w->o.events_file) {
		int rc = apcw_load_events(w, err);
		if (rc < 0) {
			apcw_free(w);
			return rc;
		}
	}

	if (strcmp(out, "-") == 0 || apcw_stream_target(out)) {
		const char *tmp = getenv("TMPDIR");
		/* -o /dev/null, a FIFO: the tar stream goes there, as for
		 * "-" (cp and tar write into them too); never below fd 3, so
		 * a closed stdin's 0 cannot be taken for it */
		if (strcmp(out, "-") != 0) {
			int fd = open(out, O_WRONLY | O_CLOEXEC);
			if (fd < 0 || (fd < 3 && (fd = apcw_fd_up(fd)) < 0)) {
				int rc = apcw_eio(err, out, "cannot open");
				apcw_free(w);
				return rc;
			}
			w->streamfd = fd;
		}
		if (isatty(w->streamfd)) {
			apcw_free(w);
			return apc_err_set(err, APC_EIO, w->streamfd == STDOUT_FILENO ? NULL : out,
					   APC_NO_OFFSET,
					   "refusing to write a tar stream to a terminal (redirect it or use -o FILE)");
		}
		w->kind = APCW_STDOUT;
		w->path = apcw_strdup(out);
		w->name = apcw_strdup(w->o.stream_name && *w->o.stream_name ? w->o.stream_name : "capture.apc");
		w->tmpdir = apcw_printf("%s/apcconv-XXXXXX", tmp && *tmp ? tmp : "/tmp");
		w->where = tmp && *tmp ? apcw_printf("%s (TMPDIR)", tmp) : apcw_strdup("/tmp");
	} else {
		size_t n = strlen(out), k = apc_archive_suffix(out, n);
		/* the archive extensions are apc_archive_suffix()'s; which
		 * archive each one means follows from its last letters */
		w->kind = !k                              ? APCW_DIR
			  : apcw_ends(out, n, ".zip")     ? APCW_ZIP
			  : apcw_ends(out, n, "gz")       ? APCW_TGZ
			  : apcw_ends(out, n, "bz2")      ? APCW_TBZ2
			  : apcw_ends(out, n, "xz")       ? APCW_TXZ
			  : apcw_ends(out, n, "zst")      ? APCW_TZST
							  : APCW_TAR;
		if (w->kind == APCW_DIR) {
			while (n > 1 && out[n - 1] == '/')
				n--;
			/* "..", "x/." name a folder there is: no capture name */
			if (apc_dot_name(out, n)) {
				apc_err_set(err, APC_EIO, out, APC_NO_OFFSET, "not a usable output name");
				apcw_free(w);
				return APC_EIO;
			}
			/* a.7z, a.gz: an archive that cannot be written, not a
			 * folder "a.7z.apc" the user did not ask for */
			if ((k = apc_wrapper_suffix(out, n))) {
				apc_err_set(err, APC_EIO, out, APC_NO_OFFSET,
					    "cannot write a %.*s archive (a capture is written as a folder "
					    "NAME.apc, or as .zip, .tar, .tar.gz, .tar.bz2, .tar.xz or "
					    ".tar.zst)",
					    (int)k, out + n - k);
				apcw_free(w);
				return APC_EIO;
			}
			w->path = apcw_printf("%.*s%s", (int)n, out, apcw_ends(out, n, ".apc") ? "" : ".apc");
			if (w->path)
				w->name = apcw_strdup(apcw_basename(w->path));
		} else {
			w->path = apcw_strdup(out);
			base = apcw_basename(out);
			n = strlen(base) - k;
			if (n == 0)
				w->name = apcw_strdup("capture.apc");
			else
				w->name = apcw_printf("%.*s%s", (int)n, base,
						      apcw_ends(base, n, ".apc") ? "" : ".apc");
		}
		if (w->path && w->name && (!*w->name || !strcmp(w->name, ".apc") ||
					   !strcmp(w->name, "..apc"))) {
			apc_err_set(err, APC_EIO, out, APC_NO_OFFSET, "not a usable output name");
			apcw_free(w);
			return APC_EIO;
		}
		if (w->path && lstat(w->path, &st) == 0 && !w->o.overwrite) {
			apc_err_set(err, APC_EIO, w->path, APC_NO_OFFSET,
				    "output exists (use --overwrite to replace it)");
			apcw_free(w);
			return APC_EIO;
		}
		if (w->path && apc_out_replaceable(w->path, w->kind == APCW_DIR, err) != APC_OK) {
			apcw_free(w);
			return APC_EIO;
		}
		dir = w->path ? apcw_dirname(w->path) : NULL;
		if (dir)
			w->tmpdir = apcw_printf("%s/.%.*s.tmp-XXXXXX", dir, APC_TMP_NAME_MAX, apcw_basename(w->path));
		free(dir);
		w->where = w->path ? apcw_strdup(w->path) : NULL;
	}
	if (!w->path || !w->name || !w->tmpdir || !w->where) {
		apcw_free(w);
		return apcw_oom(err);
	}
	if (!mkdtemp(w->tmpdir)) {
		/* the capture is built beside the output (or in TMPDIR) */
		int rc = apcw_out_eio(w, err, NULL,
				      w->kind == APCW_STDOUT ? "cannot create a temporary folder"
							     : "cannot create");
		free(w->tmpdir);
		w->tmpdir = NULL;
		apcw_free(w);
		return rc;
	}
	if (!(w->datapath = apcw_printf("%s/0000000000", w->tmpdir))) {
		apc_writer_abort(w);
		return apcw_oom(err);
	}
	w->datafd = open(w->datapath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (w->datafd < 0) {
		int rc = apcw_out_eio(w, err, "0000000000", "cannot create");
		apc_writer_abort(w);
		return rc;
	}
	if (!(w->ow = apc_owrite_new(w->datafd, APCW_OBUF))) {
		apc_writer_abort(w);
		return apcw_oom(err);
	}
	w->obuf = apc_owrite_buf(w->ow);
	w->st.write_thread = apc_owrite_threaded(w->ow);
	*wp = w;
	return APC_OK;
}

const char *apc_writer_path(const struct apc_writer *w)
{
	return w->path;
}

const struct apc_write_stats *apc_writer_stats(const struct apc_writer *w)
{
	return &w->st;
}

/*
 * The Summary frame: the summary message (canary, wall clock, uptime,
 * monotonic delta, attributes ended by an empty key), then one core-name
 * message per known core, in the same frame as gatord 6.8 does (both go
 * to its summary buffer before it is committed).
 */
int apc_writer_begin(struct apc_writer *w, struct apc_model *m, struct apc_err *err)
{
	const struct apc_meta *me = &m->meta;
	struct apc_buf *b = &w->scratch;
	size_t room = 64 + sizeof APC_NEWLINE_CANARY;

	w->m = m;
	w->created = apcw_created(w, m);
	if (apcw_grow_cores(w, me->ncores ? me->ncores - 1 : 0) != APC_OK)
		return apcw_oom(err);
	w->max_core = me->ncores;
	if (apcw_assign_keys(w) != APC_OK)
		return apcw_oom(err);
	for (size_t i = 0; i < me->nattrs; i++)
		room += 2 * (APC_PACKED32_MAX + apcw_slen(me->attrs[i].key) + apcw_slen(me->attrs[i].value));
	for (uint32_t i = 0; i < me->ncores && me->cores; i++)
		room += 3 * APC_PACKED32_MAX + APC_PACKED32_MAX + apcw_slen(me->cores[i].name);
	b->len = 0;
	if (apc_buf_reserve(b, room) != APC_OK)
		return apcw_oom(err);
	apc_buf_put_packed32(b, APC_FRAME_SUMMARY);
	apc_buf_put_packed32(b, 1);
	apcw_put_str(b, APC_NEWLINE_CANARY, sizeof APC_NEWLINE_CANARY - 1);
	apc_buf_put_packed64(b, (int64_t)me->wall_clock_ns);
	apc_buf_put_packed64(b, (int64_t)me->uptime_ns);
	apc_buf_put_packed64(b, (int64_t)me->monotonic_delta);
	for (size_t i = 0; i < me->nattrs; i++) {
		const char *k = me->attrs[i].key, *v = me->attrs[i].value;
		if (!k || !*k)
			continue; /* an empty key would end the list */
		apcw_put_str(b, k, apcw_slen(k));
		apcw_put_str(b, v, apcw_slen(v));
	}
	apcw_put_str(b, "", 0);
	w->st.messages++;
	for (uint32_t i = 0; i < me->ncores && me->cores; i++) {
		const struct apc_core *c = &me->cores[i];
		/* gatord names only cores whose cpuid it knows. */
		if (!c->name && (c->cpuid == 0 || c->cpuid == UINT32_MAX))
			continue;
		apc_buf_put_packed32(b, 3);
		apc_buf_put_packed32(b, (int32_t)i);
		apc_buf_put_packed32(b, (int32_t)c->cpuid);
		apcw_put_str(b, c->name ? c->name : "unknown", c->name ? apcw_slen(c->name) : 7);
		w->st.messages++;
	}
	w->begun = 1;
	return apcw_emit(w, b->p, b->len, err);
}

int apc_writer_write(struct apc_writer *w, const struct apc_batch *b, struct apc_err *err)
{
	int rc = APC_OK;

	if (!w->begun)
		return apc_err_set(err, APC_EIO, NULL, APC_NO_OFFSET, "writer used before begin");
	for (size_t i = 0; i < b->n && rc >= 0; i++) {
		const struct apc_event *ev = &b->ev[i];
		switch (ev->type) {
		case APC_EV_COUNTER: rc = w->fast ? apcw_counter_fast(w, ev, err) : apcw_counter(w, ev, err); break;
		case APC_EV_THREAD_NAME:
		case APC_EV_COOKIE_NAME: rc = apcw_name(w, ev, err); break;
		case APC_EV_LINK:
		case APC_EV_ACTIVITY:
		case APC_EV_TASK_EXIT: rc = apcw_activity(w, ev, err); break;
		case APC_EV_SCHED_SWITCH:
		case APC_EV_THREAD_EXIT: rc = apcw_sched(w, ev, err); break;
		case APC_EV_IDLE: rc = apcw_idle(w, ev, err); break;
		case APC_EV_SAMPLE: rc = apcw_sample(w, ev, err); break;
		case APC_EV_PROC: rc = apcw_proc(w, ev, err); break;
		case APC_EV_ANNOTATION: rc = apcw_annotation(w, ev, err); break;
		case APC_EV_RAW_FRAME: rc = apcw_raw(w, ev, err); break;
		case APC_EV_COUNTERS: rc = apcw_counters(w, ev, err); break;
		default:
			apc_model_unmapped(&w->um, "events of unknown type", 1);
			w->st.dropped++;
			break;
		}
	}
	return rc < 0 ? rc : APC_OK;
}

/*
 * A failed archive write, naming the archive (or stdout) and the member
 * being written, if any.  libarchive's message for a failed write is a
 * bare "Write error": say what errno said, so a full disk is named and a
 * closed pipe downstream is recognisable (apcconv ends quietly on EPIPE).
 */
static int apcw_arc_err(const struct apc_writer *w, struct archive *a, const char *member,
			struct apc_err *err)
{
	const char *s = archive_error_string(a);
	const char *file = !strcmp(w->path, "-") ? "stdout" : w->path;
	int e = archive_errno(a);
	char what[256];

	if (member)
		snprintf(what, sizeof what, "%s: cannot write", member);
	else
		snprintf(what, sizeof what, "cannot write");
	if (e == EPIPE || (e > 0 && !strcmp(s ? s : "", "Write error")))
		return apc_err_sys(err, APC_EIO, file, what, e);
	return apc_err_text(err, APC_EIO, file, what, s);
}

/* ---- XML ------------------------------------------------------------ */

/*
 * Strings come from the input (a damaged Barman string table, a trace's
 * names) and may hold bytes no XML document can: invalid UTF-8 and
 * control characters become U+FFFD, so the XML always parses.
 */
static void apcw_prop(xmlNodePtr n, const char *name, const char *v)
{
	const unsigned char *p = (const unsigned char *)v;
	size_t len, i = 0, o = 0;
	char *clean, small[256];

	if (!v)
		return;
	len = strlen(v);
	/* most values are short: a kept events.xml has some 80,000 */
	clean = len * 3 + 1 <= sizeof small ? small : malloc(len * 3 + 1);
	if (!clean)
		return;
	while (i < len) {
		size_t k = apc_utf8_len(p + i, len - i);
		int bad = k == 0 || (k == 1 && p[i] < 0x20 && p[i] != '\t' && p[i] != '\n' && p[i] != '\r') ||
			  (k == 3 && p[i] == 0xef && p[i + 1] == 0xbf && p[i + 2] >= 0xbe);
		if (bad) {
			memcpy(clean + o, "\xef\xbf\xbd", 3);
			o += 3;
			i += k ? k : 1;
		} else {
			memcpy(clean + o, p + i, k);
			o += k;
			i += k;
		}
	}
	clean[o] = '\0';
	xmlNewProp(n, (const xmlChar *)name, (const xmlChar *)clean);
	if (clean != small)
		free(clean);
}

static void apcw_propf(xmlNodePtr n, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void apcw_propf(xmlNodePtr n, const char *name, const char *fmt, ...)
{
	char buf[64];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	xmlNewProp(n, (const xmlChar *)name, (const xmlChar *)buf);
}

static const char *apcw_tri(enum apc_tri t)
{
	return t == APC_YES ? "yes" : t == APC_NO ? "no" : NULL;
}

/*
 * Ctrl-C or SIGTERM while the XML files are built: with a million
 * counters that takes seconds after the data file is done, and the run
 * went on to write them all and exit 0.  Checked every APCW_STOP_EVERY
 * counters and between the files; the failed run removes its folder.
 */
#define APCW_STOP_EVERY 4096
static int apcw_stopped(struct apc_err *err)
{
	return apc_interrupted() ? apc_err_set(err, APC_EIO, NULL, APC_NO_OFFSET, "interrupted") : 0;
}

/* Serialise doc (UTF-8, indented) into the temporary folder. */
static int apcw_save(struct apc_writer *w, xmlDocPtr doc, const char *leaf, struct apc_err *err)
{
	xmlChar *mem = NULL;
	int size = 0, rc;

	xmlDocDumpFormatMemoryEnc(doc, &mem, &size, "UTF-8", 1);
	if (!mem)
		return apcw_oom(err);
	if ((rc = apcw_stopped(err)) < 0) {
		xmlFree(mem);
		return rc;
	}
	rc = apcw_write_file(w, leaf, mem, (size_t)size, err);
	xmlFree(mem);
	return rc;
}

static int apcw_captured(struct apc_writer *w, struct apc_err *err)
{
	const struct apc_model *m = w->m;
	xmlDocPtr doc = xmlNewDoc((const xmlChar *)"1.0");
	xmlNodePtr root, t, cs;
	uint32_t cores = m->meta.ncores > w->max_core ? m->meta.ncores : w->max_core;
	int rc;

	if (!doc)
		return apcw_oom(err);
	root = xmlNewNode(NULL, (const xmlChar *)"captured");
	xmlDocSetRootElement(doc, root);
	apcw_prop(root, "version", "1");
	apcw_propf(root, "created", "%lld", (long long)w->created);
	apcw_propf(root, "protocol", "%d", APCW_PROTOCOL);
	apcw_prop(root, "backtrace_processing",
		  m->meta.backtrace_processing ? m->meta.backtrace_processing : "none");
	apcw_prop(root, "type", m->meta.capture_type ? m->meta.capture_type : "Gator");
	t = xmlNewChild(root, NULL, (const xmlChar *)"target", NULL);
	apcw_prop(t, "name", m->meta.target_name ? m->meta.target_name : "unknown");
	apcw_propf(t, "sample_rate", "%u", m->meta.sample_rate);
	apcw_propf(t, "cores", "%u", cores ? cores : 1);
	apcw_propf(t, "cpuid", "0x%x", m->meta.has_target_cpuid ? m->meta.target_cpuid
				     : m->meta.ncores && m->meta.cores ? m->meta.cores[0].cpuid : 0);
	if (!apc_attrs_get(m->meta.target_attrs, m->meta.ntarget_attrs, "supports_live"))
		apcw_prop(t, "supports_live", "no");
	/* The rest as a capture read back gave them (gatord's local_capture,
	 * os ...); never one written above twice. */
	for (size_t i = 0; i < m->meta.ntarget_attrs; i++)
		if (!xmlHasProp(t, (const xmlChar *)m->meta.target_attrs[i].key))
			apcw_prop(t, m->meta.target_attrs[i].key, m->meta.target_attrs[i].value);
	cs = xmlNewChild(root, NULL, (const xmlChar *)"counters", NULL);
	for (size_t i = 0; i < m->ncounters; i++) {
		const struct apc_counter_decl *d = &m->counters[i];
		if (i % APCW_STOP_EVERY == APCW_STOP_EVERY - 1 && (rc = apcw_stopped(err)) < 0) {
			xmlFreeDoc(doc);
			return rc;
		}
		xmlNodePtr c = xmlNewChild(cs, NULL, (const xmlChar *)"counter", NULL);
		apcw_propf(c, "key", "0x%x", (unsigned)w->keys[i]);
		apcw_prop(c, "type", d->type);
		if (d->event >= 0)
			apcw_propf(c, "event", "0x%llx", (unsigned long long)d->event);
		if (d->count)
			apcw_propf(c, "count", "%u", d->count);
		/* gatord writes a configured counter's cores whatever its class */
		if (d->cores)
			apcw_propf(c, "cores", "%u", d->cores);
	}
	rc = apcw_save(w, doc, "captured.xml", err);
	xmlFreeDoc(doc);
	return rc;
}

/*
 * session.xml: the settings Streamline delivered.  Ours are fixed (no
 * call stacks, streaming, the sample rate as a rate name); a capture read
 * back keeps its own, and any others it had follow.
 */
static int apcw_session(struct apc_writer *w, struct apc_err *err)
{
	const struct apc_meta *me = &w->m->meta;
	uint32_t r = me->sample_rate;
	/* gatord's rates: normal ~1000/s, low ~100/s. */
	const char *const ours[][2] = {
		{"version", "1"}, {"call_stack_unwinding", "no"}, {"parse_debug_info", "no"},
		{"high_resolution", "no"}, {"buffer_mode", "streaming"},
		{"sample_rate", r >= 500 ? "normal" : r ? "low" : "none"}, {"duration", "0"},
		{"target_host", ""}, {"target_port", "8080"}, {"live_rate", "0"},
	};
	xmlDocPtr doc = xmlNewDoc((const xmlChar *)"1.0");
	xmlNodePtr s;
	int rc;

	if (!doc)
		return apcw_oom(err);
	s = xmlNewNode(NULL, (const xmlChar *)"session");
	xmlDocSetRootElement(doc, s);
	for (size_t i = 0; i < sizeof ours / sizeof ours[0]; i++) {
		const char *v = apc_attrs_get(me->session_attrs, me->nsession_attrs, ours[i][0]);
		apcw_prop(s, ours[i][0], v ? v : ours[i][1]);
	}
	for (size_t i = 0; i < me->nsession_attrs; i++)
		if (!xmlHasProp(s, (const xmlChar *)me->session_attrs[i].key))
			apcw_prop(s, me->session_attrs[i].key, me->session_attrs[i].value);
	rc = apcw_save(w, doc, "session.xml", err);
	xmlFreeDoc(doc);
	return rc;
}

static void apcw_double(xmlNodePtr n, const char *name, double v)
{
	char buf[40];

	/* Shortest form that reads back as the same double. */
	snprintf(buf, sizeof buf, "%.15g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, sizeof buf, "%.17g", v);
	apcw_prop(n, name, buf);
}

static xmlNodePtr apcw_find_child(xmlNodePtr parent, const char *elem, const char *name)
{
	for (xmlNodePtr c = parent->children; c; c = c->next) {
		if (c->type != XML_ELEMENT_NODE || xmlStrcmp(c->name, (const xmlChar *)elem))
			continue;
		xmlChar *v = xmlGetProp(c, (const xmlChar *)"name");
		int same = v && !xmlStrcmp(v, (const xmlChar *)name);
		xmlFree(v);
		if (same)
			return c;
	}
	return NULL;
}

/*
 * The categories under events.xml's root by name, for the counters
 * written into them: one scan of the root per counter was quadratic
 * when a capture read back declares hundreds of thousands.  Filled from
 * the root's children on first use (the first of a name, as
 * apcw_find_child finds); a name whose hash another has is scanned for.
 */
struct apcw_cats {
	struct apc_map64 index; /* hash(name) -> node */
	int filled;
	int partial;            /* a name not indexed: one not found is scanned for */
};

static void apcw_cats_put(struct apcw_cats *x, const char *name, xmlNodePtr c)
{
	uint64_t h = apc_hash_str(APC_HASH_SEED, name);

	if (apc_map64_find(&x->index, h, NULL) || apc_map64_put(&x->index, h, (uint64_t)(uintptr_t)c) < 0)
		x->partial = 1;
}

static xmlNodePtr apcw_category(struct apcw_cats *x, xmlNodePtr root, const char *name)
{
	uint64_t v;

	if (!x->filled) {
		for (xmlNodePtr c = root->children; c; c = c->next) {
			xmlChar *n;
			if (c->type != XML_ELEMENT_NODE || xmlStrcmp(c->name, (const xmlChar *)"category") ||
			    !(n = xmlGetProp(c, (const xmlChar *)"name")))
				continue;
			apcw_cats_put(x, (const char *)n, c);
			xmlFree(n);
		}
		x->filled = 1;
	}
	if (apc_map64_find(&x->index, apc_hash_str(APC_HASH_SEED, name), &v)) {
		xmlNodePtr c = (xmlNodePtr)(uintptr_t)v;
		xmlChar *n = xmlGetProp(c, (const xmlChar *)"name");
		int same = n && !xmlStrcmp(n, (const xmlChar *)name);
		xmlFree(n);
		if (same)
			return c;
	} else if (!x->partial) {
		return NULL;
	}
	return apcw_find_child(root, "category", name);
}

static void apcw_event_node(xmlNodePtr e, const struct apc_counter_decl *d)
{
	static const char *const series[] = {NULL, "stacked", "overlay", "log10"};
	static const char *const render[] = {NULL, "filled", "line", "bar"};
	char an[48];

	apcw_prop(e, "counter", d->type);
	if (d->event >= 0)
		apcw_propf(e, "event", "0x%llx", (unsigned long long)d->event);
	apcw_prop(e, "title", d->title ? d->title : d->category ? d->category : "apctools");
	apcw_prop(e, "name", d->name ? d->name : d->type);
	apcw_prop(e, "description", d->description);
	apcw_prop(e, "units", d->units);
	apcw_prop(e, "class", apc_class_name(d->cls));
	apcw_prop(e, "display", apc_display_name(d->display));
	if (d->multiplier != 0)
		apcw_double(e, "multiplier", d->multiplier);
	apcw_prop(e, "per_cpu", apcw_tri(d->per_cpu));
	if ((unsigned)d->series < 4)
		apcw_prop(e, "series_composition", series[d->series]);
	if ((unsigned)d->render < 4)
		apcw_prop(e, "rendering_type", render[d->render]);
	apcw_prop(e, "average_selection", apcw_tri(d->average_selection));
	apcw_prop(e, "average_cores", apcw_tri(d->average_cores));
	apcw_prop(e, "percentage", apcw_tri(d->percentage));
	if (d->has_color)
		apcw_propf(e, "color", "0x%08x", d->color);
	for (size_t k = 0; k < d->nactivities; k++) {
		snprintf(an, sizeof an, "activity%zu", k + 1);
		apcw_prop(e, an, d->activities[k].name ? d->activities[k].name : "");
		if (d->activities[k].has_color) {
			snprintf(an, sizeof an, "activity_color%zu", k + 1);
			apcw_propf(e, an, "0x%08x", d->activities[k].color);
		}
	}
	if (d->cls == APC_CLASS_ACTIVITY && d->cores)
		apcw_propf(e, "cores", "%u", d->cores);
	/* The rest as a capture read back gave them; never one twice. */
	for (size_t k = 0; k < d->nxattrs; k++)
		if (!xmlHasProp(e, (const xmlChar *)d->xattrs[k].key))
			apcw_prop(e, d->xattrs[k].key, d->xattrs[k].value);
}

/*
 * Remove every <event counter=name> of the categories under root (ours
 * and those a capture read back kept); the one of ours is nodes[id].
 */
static void apcw_drop_named(xmlNodePtr root, const xmlChar *name, xmlNodePtr *nodes,
			    const struct apc_counter_decl *d)
{
	for (xmlNodePtr c = root->children; c; c = c->next) {
		xmlNodePtr e, next;
		if (c->type != XML_ELEMENT_NODE || xmlStrcmp(c->name, (const xmlChar *)"category"))
			continue;
		for (e = c->children; e; e = next) {
			xmlChar *cn;
			int same;
			next = e->next;
			if (e->type != XML_ELEMENT_NODE || xmlStrcmp(e->name, (const xmlChar *)"event"))
				continue;
			cn = xmlGetProp(e, (const xmlChar *)"counter");
			same = cn && !xmlStrcmp(cn, name);
			xmlFree(cn);
			if (!same)
				continue;
			if (d && nodes[d->id] == e)
				nodes[d->id] = NULL;
			xmlUnlinkNode(e);
			xmlFreeNode(e);
		}
	}
}

/*
 * Merge --events=FILE into ours: its counter_sets and categories are
 * added, and its events replace ours with the same counter name (and
 * any a capture read back kept with that name).
 */
/*
 * apcw_load_events() : read and parse --events=FILE when the writer
 * opens, so a missing or broken file stops the run before any input is
 * read rather than after the whole conversion.
 */
static int apcw_load_events(struct apc_writer *w, struct apc_err *err)
{
	const char *name = apc_input_name(w->o.events_file);
	struct apc_stream *s;
	uint8_t *buf = NULL;
	size_t len = 0;
	xmlNodePtr er;
	int rc;

	/* Read here, not by xmlReadFile(), whose I/O layer prints its own
	 * "I/O error : Is a directory" whatever the parse options: a
	 * missing or unreadable file is one message of ours, with errno's
	 * reason.  A compressed events.xml.gz reads too. */
	if ((rc = apc_stream_open_path(w->o.events_file, &s, err)) < 0)
		return rc;
	rc = apc_stream_slurp(s, APC_XML_FILE_MAX, &buf, &len, err);
	apc_stream_close(s);
	if (rc < 0)
		return rc;
	w->events_doc = apc_xml_read_strict(buf, len, name, XML_PARSE_NOBLANKS, err);
	free(buf);
	if (!w->events_doc)
		return err->status;
	er = xmlDocGetRootElement(w->events_doc);
	if (!er || xmlStrcmp(er->name, (const xmlChar *)"events"))
		return apc_err_set(err, APC_EIO, name, APC_NO_OFFSET,
				   "the events file has no <events> root");
	return APC_OK;
}

static int apcw_merge_events(struct apc_writer *w, xmlNodePtr root, xmlNodePtr *nodes)
{
	xmlNodePtr er = xmlDocGetRootElement(w->events_doc);

	for (xmlNodePtr c = er->children; c; c = c->next) {
		if (c->type != XML_ELEMENT_NODE)
			continue;
		if (!xmlStrcmp(c->name, (const xmlChar *)"category")) {
			xmlChar *cname = xmlGetProp(c, (const xmlChar *)"name");
			xmlNodePtr ours = apcw_find_child(root, "category", cname ? (const char *)cname : "");
			if (!ours) {
				ours = xmlDocCopyNode(c, root->doc, 2); /* attributes, no children */
				xmlAddChild(root, ours);
			}
			xmlFree(cname);
			for (xmlNodePtr e = c->children; e; e = e->next) {
				if (e->type != XML_ELEMENT_NODE)
					continue;
				xmlChar *cn = xmlGetProp(e, (const xmlChar *)"counter");
				if (cn)
					apcw_drop_named(root, cn, nodes,
							apc_model_find_counter(w->m, (const char *)cn));
				xmlFree(cn);
				xmlAddChild(ours, xmlDocCopyNode(e, root->doc, 1));
			}
		} else if (!xmlStrcmp(c->name, (const xmlChar *)"counter_set")) {
			xmlChar *sname = xmlGetProp(c, (const xmlChar *)"name");
			if (!apcw_find_child(root, "counter_set", sname ? (const char *)sname : "")) {
				xmlNodePtr first = root->children;
				xmlNodePtr copy = xmlDocCopyNode(c, root->doc, 1);
				if (first)
					xmlAddPrevSibling(first, copy);
				else
					xmlAddChild(root, copy);
			}
			xmlFree(sname);
		}
	}
	return APC_OK;
}

/*
 * Write the children of kept element e (events.xml as a capture read
 * back had it) under parent, as they were; a stand-in for a counter's
 * own event becomes that declaration's event (nodes[id]).
 */
static void apcw_kept(struct apc_writer *w, xmlNodePtr parent, const struct apc_xml_elem *e,
		      xmlNodePtr *nodes)
{
	for (size_t i = 0; i < e->nchildren; i++) {
		const struct apc_xml_elem *c = &e->children[i];
		xmlNodePtr x;

		if (c->counter >= 0) {
			const struct apc_counter_decl *d;
			if ((uint64_t)c->counter >= w->m->ncounters)
				continue;
			d = &w->m->counters[c->counter];
			/* one event per type, by the first declaration */
			d = apc_model_find_counter(w->m, d->type);
			if (nodes[d->id])
				continue;
			nodes[d->id] = xmlNewChild(parent, NULL, (const xmlChar *)"event", NULL);
			apcw_event_node(nodes[d->id], d);
			continue;
		}
		/* an element's attribute names are unique: no lookups */
		x = xmlNewChild(parent, NULL, (const xmlChar *)c->name, NULL);
		for (size_t k = 0; k < c->nattrs; k++)
			apcw_prop(x, c->attrs[k].key, c->attrs[k].value);
		apcw_kept(w, x, c, nodes);
	}
}

static int apcw_events(struct apc_writer *w, struct apc_err *err)
{
	const struct apc_model *m = w->m;
	const struct apc_xml_elem *kept = m->meta.events_xml;
	xmlDocPtr doc = xmlNewDoc((const xmlChar *)"1.0");
	xmlNodePtr root, *nodes;
	struct apcw_cats cats = {0};
	int rc = APC_OK;

	if (!doc)
		return apcw_oom(err);
	if (!(nodes = calloc(m->ncounters + 1, sizeof *nodes))) {
		xmlFreeDoc(doc);
		return apcw_oom(err);
	}
	root = xmlNewNode(NULL, (const xmlChar *)"events");
	xmlDocSetRootElement(doc, root);
	/* A capture read back: its events.xml as it was, with the
	 * counters' own events in their places. */
	if (kept) {
		for (size_t k = 0; k < kept->nattrs; k++)
			if (!xmlHasProp(root, (const xmlChar *)kept->attrs[k].key))
				apcw_prop(root, kept->attrs[k].key, kept->attrs[k].value);
		apcw_kept(w, root, kept, nodes);
	}
	/* The other counters, in categories in order of first appearance. */
	for (size_t i = 0; i < m->ncounters; i++) {
		const struct apc_counter_decl *d = &m->counters[i];
		const char *cat = d->category ? d->category : "apctools";
		xmlNodePtr c;
		if (i % APCW_STOP_EVERY == APCW_STOP_EVERY - 1 && (rc = apcw_stopped(err)) < 0)
			goto out;
		/* A type a capture read back gave several keys is one event,
		 * described by its first declaration (the APC reader counts
		 * later ones described otherwise). */
		if (apc_model_find_counter(w->m, d->type)->id != i || nodes[i])
			continue;
		/* described by an event of the kept events.xml */
		if (kept && d->kept_xml)
			continue;
		c = apcw_category(&cats, root, cat);
		if (!c) {
			c = xmlNewChild(root, NULL, (const xmlChar *)"category", NULL);
			apcw_prop(c, "name", cat);
			apcw_cats_put(&cats, cat, c);
		}
		nodes[i] = xmlNewChild(c, NULL, (const xmlChar *)"event", NULL);
		apcw_event_node(nodes[i], d);
	}
	if (w->events_doc)
		rc = apcw_merge_events(w, root, nodes);
	if (rc == APC_OK)
		rc = apcw_save(w, doc, "events.xml", err);
out:
	apc_map64_free(&cats.index);
	free(nodes);
	xmlFreeDoc(doc);
	return rc;
}

/* ---- finish: into place --------------------------------------------- */

static int apcw_archive_file(struct apc_writer *w, struct archive *a, const char *leaf,
			     struct apc_err *err)
{
	char *src = apcw_printf("%s/%s", w->tmpdir, leaf);
	char *member = apcw_printf("%s/%s", w->name, leaf);
	struct archive_entry *e = archive_entry_new();
	struct stat st;
	int fd = -1, rc = APC_OK;
	uint8_t *buf = NULL;

	if (!src || !member || !e || !(buf = malloc(1 << 16))) {
		rc = apcw_oom(err);
		goto out;
	}
	if ((fd = open(src, O_RDONLY | O_CLOEXEC)) < 0 || fstat(fd, &st) != 0) {
		rc = apcw_out_eio(w, err, leaf, "cannot read");
		goto out;
	}
	archive_entry_set_pathname(e, member);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0644);
	archive_entry_set_size(e, st.st_size);
	archive_entry_set_mtime(e, w->created, 0);
	archive_entry_set_uid(e, 0);
	archive_entry_set_gid(e, 0);
	/* A warning is a name that is not UTF-8 (apc_names_utf8()),
	 * written as its bytes: pax marks it hdrcharset=BINARY. */
	if (archive_write_header(a, e) < ARCHIVE_WARN) {
		rc = apcw_arc_err(w, a, member, err);
		goto out;
	}
	for (;;) {
		/* compressing a large data file takes seconds: Ctrl-C and
		 * SIGTERM stop it here too (the failed run removes the part) */
		if (apc_interrupted()) {
			rc = apc_err_set(err, APC_EIO, NULL, APC_NO_OFFSET, "interrupted");
			goto out;
		}
		ssize_t n = read(fd, buf, 1 << 16);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = apcw_out_eio(w, err, leaf, "cannot read");
			goto out;
		}
		if (n == 0)
			break;
		if (archive_write_data(a, buf, (size_t)n) != n) {
			rc = apcw_arc_err(w, a, member, err);
			goto out;
		}
	}
out:
	if (fd >= 0)
		close(fd);
	archive_entry_free(e);
	free(buf);
	free(src);
	free(member);
	return rc;
}

/*
 * Archive the folder: members NAME.apc/ then its files in name order,
 * mtime = created, owner 0, fixed modes, no gzip time stamp, so the
 * same capture gives the same bytes.
 */
static int apcw_archive(struct apc_writer *w, struct apc_err *err)
{
	static const char *const leaves[] = {"0000000000", "captured.xml", "events.xml", "session.xml"};
	struct archive *a = archive_write_new();
	struct archive_entry *e = NULL;
	int fd = w->streamfd, rc = APC_OK;

	if (!a)
		return apcw_oom(err);
	if (w->kind == APCW_ZIP)
		archive_write_set_format_zip(a);
	else
		archive_write_set_format_pax_restricted(a);
	if (w->kind == APCW_TGZ) {
		archive_write_add_filter_gzip(a);
		archive_write_set_filter_option(a, "gzip", "timestamp", NULL);
	} else if ((w->kind == APCW_TBZ2 && archive_write_add_filter_bzip2(a) < ARCHIVE_WARN) ||
		   (w->kind == APCW_TXZ && archive_write_add_filter_xz(a) < ARCHIVE_WARN) ||
		   (w->kind == APCW_TZST && archive_write_add_filter_zstd(a) < ARCHIVE_WARN)) {
		/* a libarchive built without libbz2, liblzma or libzstd */
		rc = apc_err_text(err, APC_EIO, w->path, "cannot compress", archive_error_string(a));
		archive_write_free(a);
		return rc;
	}
	if (w->kind != APCW_STDOUT) {
		char *dir = apcw_dirname(w->path);
		w->partpath = dir ? apcw_printf("%s/.%.*s.part-XXXXXX", dir, APC_TMP_NAME_MAX, apcw_basename(w->path)) : NULL;
		free(dir);
		if (!w->partpath) {
			archive_write_free(a);
			return apcw_oom(err);
		}
		if ((fd = mkstemp(w->partpath)) < 0) {
			rc = apcw_out_eio(w, err, NULL, "cannot create");
			free(w->partpath);
			w->partpath = NULL;
			archive_write_free(a);
			return rc;
		}
		if (fchmod(fd, 0644) != 0) {
			rc = apcw_out_eio(w, err, NULL, "cannot set its mode");
			goto out;
		}
	} else {
		/* Keep the last block full-sized: pipes do not mind. */
		archive_write_set_bytes_in_last_block(a, 1);
	}
	if (archive_write_open_fd(a, fd) != ARCHIVE_OK) {
		rc = apcw_arc_err(w, a, NULL, err);
		goto out;
	}
	if (!(e = archive_entry_new())) {
		rc = apcw_oom(err);
		goto out;
	}
	archive_entry_set_pathname(e, w->name);
	archive_entry_set_filetype(e, AE_IFDIR);
	archive_entry_set_perm(e, 0755);
	archive_entry_set_mtime(e, w->created, 0);
	if (archive_write_header(a, e) < ARCHIVE_WARN) {
		rc = apcw_arc_err(w, a, w->name, err);
		goto out;
	}
	for (size_t i = 0; i < sizeof leaves / sizeof leaves[0] && rc == APC_OK; i++)
		rc = apcw_archive_file(w, a, leaves[i], err);
	if (rc == APC_OK && archive_write_close(a) != ARCHIVE_OK)
		rc = apcw_arc_err(w, a, NULL, err);
out:
	archive_entry_free(e);
	archive_write_free(a);
	if (w->kind != APCW_STDOUT) {
		if (close(fd) != 0 && rc == APC_OK)
			rc = apcw_out_eio(w, err, NULL, "cannot write");
		if (rc == APC_OK && w->o.overwrite)
			rc = apc_out_replaceable(w->path, 0, err); /* again: it may have changed */
		else if (rc == APC_OK && access(w->path, F_OK) == 0)
			rc = apc_err_set(err, APC_EIO, w->path, APC_NO_OFFSET,
					 "output exists (use --overwrite to replace it)");
		if (rc == APC_OK && rename(w->partpath, w->path) != 0)
			rc = apcw_eio(err, w->path, "cannot rename the archive into place");
		if (rc == APC_OK) {
			free(w->partpath);
			w->partpath = NULL;
		}
	}
	return rc;
}

/* Move the finished folder into place, replacing an old one if asked. */
static int apcw_place_dir(struct apc_writer *w, struct apc_err *err)
{
	struct stat st;
	char *dir, *old;
	int rc = APC_OK;

	if (chmod(w->tmpdir, 0755) != 0)
		return apcw_out_eio(w, err, NULL, "cannot set its mode");
	if (lstat(w->path, &st) != 0) {
		if (rename(w->tmpdir, w->path) != 0)
			return apcw_eio(err, w->path, "cannot rename the capture into place");
		free(w->tmpdir);
		w->tmpdir = NULL;
		return APC_OK;
	}
	if (!w->o.overwrite)
		return apc_err_set(err, APC_EIO, w->path, APC_NO_OFFSET,
				   "output exists (use --overwrite to replace it)");
	/* Looked at when the run began; looked at again, as it may have
	 * changed since. */
	if ((rc = apc_out_replaceable(w->path, 1, err)) != APC_OK)
		return rc;
	/* Old one aside, new one in, then remove the old one. */
	dir = apcw_dirname(w->path);
	old = dir ? apcw_printf("%s/.%.*s.old-XXXXXX", dir, APC_TMP_NAME_MAX, apcw_basename(w->path)) : NULL;
	free(dir);
	if (!old)
		return apcw_oom(err);
	if (!mkdtemp(old) || rmdir(old) != 0) {
		rc = apcw_eio(err, w->path, "cannot make a name to move the old output to");
	} else if (rename(w->path, old) != 0) {
		rc = apcw_eio(err, w->path, "cannot move the old output aside");
	} else if (rename(w->tmpdir, w->path) != 0) {
		rc = apcw_eio(err, w->path, "cannot rename the capture into place");
		(void)rename(old, w->path);
	} else {
		free(w->tmpdir);
		w->tmpdir = NULL;
		if (apc_remove_tree(old) != 0)
			rc = apcw_eio(err, old, "cannot remove the old output");
	}
	free(old);
	return rc;
}

uint64_t apc_writer_zero(const struct apc_writer *w)
{
	return w->view_set ? w->view_delta : w->m->meta.monotonic_delta;
}

void apc_writer_view(struct apc_writer *w, size_t ncounters, uint64_t monotonic_delta)
{
	w->view_set = 1;
	w->view_n = ncounters;
	w->view_delta = monotonic_delta;
}

/* The reader is done: hand the model what the writer kept for it. */
static void apcw_settle(struct apc_writer *w)
{
	w->view_set = 0;
	for (size_t i = 0; i < w->nkeys; i++) {
		w->m->counters[i].values += w->vals[i];
		w->vals[i] = 0;
	}
	for (size_t i = 0; i < w->um.nunmapped; i++)
		apc_model_unmapped(w->m, w->um.unmapped[i].what, w->um.unmapped[i].count);
	apc_model_free(&w->um);
}

int apc_writer_has_data(const struct apc_writer *w)
{
	return w->has_data;
}

int apc_writer_finish(struct apc_writer *w, struct apc_err *err)
{
	int rc;

	if (!w->begun)
		return apc_err_set(err, APC_EIO, NULL, APC_NO_OFFSET, "writer finished before begin");
	apcw_settle(w);
	/* Open frames out, then every External fd closed. */
	if ((rc = apcw_flush_cores(w, err)) < 0 || (rc = apcw_flush(w, &w->glob, err)) < 0)
		return rc;
	for (int i = 0; i < APCW_EXT_OPEN; i++)
		if ((rc = apcw_flush(w, &w->ext[i], err)) < 0)
			return rc;
	for (size_t i = 0; i < w->nconns; i++) {
		uint8_t body[3 * APC_PACKED32_MAX];
		size_t n = apc_pack32(body, APC_FRAME_EXTERNAL);
		n += apc_pack32(body + n, -1);
		n += apc_pack32(body + n, w->conns[i].fd);
		if ((rc = apcw_emit(w, body, n, err)) < 0)
			return rc;
	}
	if ((rc = apcw_flush_obuf(w, err)) < 0)
		return rc;
	if (apc_owrite_drain(w->ow) != 0)
		return apcw_out_eio(w, err, "0000000000", "cannot write");
	apc_owrite_free(w->ow);
	w->ow = NULL;
	rc = close(w->datafd);
	w->datafd = -1;
	if (rc != 0)
		return apcw_out_eio(w, err, "0000000000", "cannot write");
	if (apcw_assign_keys(w) != APC_OK)
		return apcw_oom(err);
	if ((rc = apcw_stopped(err)) < 0 || (rc = apcw_captured(w, err)) < 0 ||
	    (rc = apcw_session(w, err)) < 0 || (rc = apcw_events(w, err)) < 0 ||
	    (rc = apcw_stopped(err)) < 0)
		return rc;
	if (w->kind == APCW_DIR)
		return apcw_place_dir(w, err);
	if ((rc = apcw_archive(w, err)) < 0)
		return rc;
	if (apc_remove_tree(w->tmpdir) != 0)
		return apcw_eio(err, w->tmpdir, "cannot remove the temporary folder");
	free(w->tmpdir);
	w->tmpdir = NULL;
	return APC_OK;
}

void apc_writer_abort(struct apc_writer *w)
{
	if (!w)
		return;
	apc_owrite_free(w->ow);
	w->ow = NULL;
	if (w->datafd >= 0) {
		close(w->datafd);
		w->datafd = -1;
	}
	if (w->tmpdir)
		(void)apc_remove_tree(w->tmpdir);
	if (w->partpath)
		(void)unlink(w->partpath);
	apcw_free(w);
}

void apc_writer_free(struct apc_writer *w)
{
	/* After a finish that failed, free must still not leave files. */
	apc_writer_abort(w);
}
