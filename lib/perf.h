/*
 * perf.h - reading the records of gatord's perf mode (6.8 perf data
 * frames) by their events' attributes: what apcdump names and the
 * --begin/--end window of apcconv needs.
 *
 * A record is a message of the frame decoder (frame.h: perf_sample,
 * perf_mmap, ...) whose last field holds its words after the header.
 * Which word is what depends on the record's event: its perf_attr
 * (sample_type, read_format, flags) and the ids of its instances
 * (perf_keys), both in Proc frames before the records.  A sample's
 * first word is its event's id when the sample_type has IDENTIFIER (as
 * gatord sets it); any other record ends with the sample id fields
 * (sample_id_all), the id last.  Layouts from linux/perf_event.h.
 */
#ifndef APC_PERF_H
#define APC_PERF_H

#include <stddef.h>
#include <stdint.h>

#include "frame.h"
#include "map64.h"

/* PERF_SAMPLE_* and PERF_FORMAT_* bits, and sample_id_all of
 * perf_event_attr's flags */
enum {
	APC_PS_IP = 1 << 0, APC_PS_TID = 1 << 1, APC_PS_TIME = 1 << 2, APC_PS_ADDR = 1 << 3,
	APC_PS_READ = 1 << 4, APC_PS_ID = 1 << 6, APC_PS_CPU = 1 << 7, APC_PS_PERIOD = 1 << 8,
	APC_PS_STREAM_ID = 1 << 9, APC_PS_IDENTIFIER = 1 << 16,
	APC_PA_SAMPLE_ID_ALL = 1 << 18,
	APC_PF_ENABLED = 1 << 0, APC_PF_RUNNING = 1 << 1, APC_PF_ID = 1 << 2, APC_PF_GROUP = 1 << 3,
	APC_PF_LOST = 1 << 4
};

/* PERF_RECORD_* types */
enum {
	APC_PR_MMAP = 1, APC_PR_LOST = 2, APC_PR_COMM = 3, APC_PR_EXIT = 4, APC_PR_THROTTLE = 5,
	APC_PR_UNTHROTTLE = 6, APC_PR_FORK = 7, APC_PR_READ = 8, APC_PR_SAMPLE = 9,
	APC_PR_MMAP2 = 10, APC_PR_AUX = 11, APC_PR_ITRACE_START = 12, APC_PR_LOST_SAMPLES = 13,
	APC_PR_SWITCH = 14, APC_PR_SWITCH_CPU_WIDE = 15
};

struct apc_perf_attr {
	uint64_t sample_type, read_format, flags;
};

/* The events of a capture, as its Proc frames declare them.  A zeroed
 * struct is empty; apc_perf_free() makes it so again. */
struct apc_perf {
	struct apc_perf_attr *attrs;
	size_t nattrs, cattrs;
	struct apc_map64 attr_map; /* key -> index in attrs */
	struct apc_map64 id_map;   /* event id -> key */
};

void apc_perf_free(struct apc_perf *p);

/* Learn from a perf_attr or perf_keys message (others are ignored):
 * APC_OK or APC_ENOMEM. */
int apc_perf_learn(struct apc_perf *p, const struct apc_msg *m);

/* The words of a record's field, one by one. */
struct apc_perf_words {
	const uint8_t *p;
	size_t left;
	uint64_t n; /* words not read yet */
};

static inline struct apc_perf_words apc_perf_words_of(const struct apc_field *f)
{
	return (struct apc_perf_words){f->s, f->len, (uint64_t)f->i};
}

/* The next word: 1, or 0 when there is none. */
int apc_perf_word(struct apc_perf_words *w, uint64_t *v);

/*
 * The attributes of a record's event, by its id (*id): the first word
 * of a sample's `words`, the last of another record's.  NULL for an id
 * perf_keys did not give, or an event whose sample_type lacks
 * IDENTIFIER (nothing then says where the id is).
 */
const struct apc_perf_attr *apc_perf_attr_of(const struct apc_perf *p,
					     const struct apc_field *words, int sample,
					     uint64_t *id);

/* The fields a record's event puts in it, as far as the record has
 * them; `have` holds the APC_PS_* bits of those read. */
struct apc_perf_head {
	uint64_t have;
	uint64_t id, ip, pidtid, time, addr, stream_id, cpu, period;
};

/* A sample's fields before its read values, read from w: 1, or 0 when
 * the words end first. */
int apc_perf_sample_head(const struct apc_perf_attr *a, struct apc_perf_words *w,
			 struct apc_perf_head *h);

/* The sample id fields at the end of another record: 1, or 0 (the event
 * has no sample_id_all, or the record is too short for them). */
int apc_perf_sample_tail(const struct apc_perf_attr *a, const struct apc_field *words,
			 struct apc_perf_head *h);

/* What a read_format block holds besides its values, and what each
 * value goes to: fn(ctx, id, value). */
struct apc_perf_read {
	uint64_t enabled, running;
	int (*fn)(void *ctx, uint64_t id, uint64_t v);
	void *ctx;
};

/* A read_format block: one value, or a group's count and values, with
 * the times enabled and running; each value's id is its own (PF_ID) or
 * `own`.  1 when the block was whole, 0 when the words ended first,
 * fn's result when below 0. */
int apc_perf_read_walk(struct apc_perf_words *w, uint64_t fmt, uint64_t own,
		       struct apc_perf_read *r);

/*
 * The time of a record (a message of a perf data frame), as perf wrote
 * it (CLOCK_MONOTONIC_RAW: the Summary's monotonic_delta is the
 * capture's zero): 1 and *t, or 0 when its event's attributes do not
 * say where it is.
 */
int apc_perf_time(const struct apc_perf *p, const struct apc_msg *m, uint64_t *t);

/*
 * Records of a 6.8 perf data frame in a time window.  keep(ctx, t) says
 * whether a record at perf time t stays; it is asked of the records
 * that happen at a time (samples, reads, context switches, lost
 * records, throttling, AUX and itrace starts) whose time their event's
 * attributes place.  The rest stay whatever their time: mmaps, comms,
 * forks and exits describe what the samples kept refer to, as names
 * and links stay outside apcconv's window.  With keep NULL every
 * record stays and the frame is only read.
 */
struct apc_perf_cut {
	int (*keep)(void *ctx, uint64_t t);
	void *ctx;
	uint64_t cut, kept;     /* records dropped, and kept */
	int have;               /* lo and hi hold the times of the */
	uint64_t lo, hi;        /* timed records kept */
};

/*
 * apc_perf_cut_frame() : apply c to the records of the perf data frame
 * body[0..len) (after its code and core), rewriting it in place: each
 * chunk's CPU and length as before, its length now of what it keeps.
 * Returns the body's new length; a body that does not decode is left
 * as it is, and its records counted neither way.
 */
size_t apc_perf_cut_frame(const struct apc_perf *p, uint8_t *body, size_t len, int32_t core,
			  struct apc_perf_cut *c);

#endif
