/*
 * barmangen.c - deterministic generator of barman buffer dumps (the
 * bare-metal agent's protocol, versions 1-3) with a ground-truth file in
 * the line format of the real captures' .truth.txt, for the reader's
 * tests and benchmarks.  Same options and seed, same bytes.
 *
 * It lays the header out the way the target's C compiler would (packed
 * structs, 4-aligned counts, 8-aligned datastore parameters), pads
 * records to the pointer size with junk (the agent does not clear
 * padding), and simulates the agent's linear and circular datastores:
 * absolute, ever-growing circular offsets, padding blocks at the wrap
 * point, and freeing of the oldest blocks.
 *
 * Usage: barmangen -o FILE [--truth FILE] [--seed N] [--records N]
 *   [--size BYTES] [--buffer BYTES] [--endian little|big] [--bits 32|64]
 *   [--version 1-3] [--circular] [--cores N] [--tasks N] [--mmaps N]
 *   [--charts N --series N] [--junk N] [--trailing N] [--extra]
 *   [--uncommitted] [--damage truncate|badlen]
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STR_MAX 1024
#define MAX_PMU 32

struct opts {
	const char *out, *truth, *damage;
	uint64_t seed, records, size, buffer, junk, trailing, start_ms;
	int have_start;
	int big, bits, version, circular, cores, tasks, mmaps, charts, series, extra, uncommitted;
};

struct rec {
	uint64_t off, blen;  /* datastore offset of the length word, block bytes */
	int kind;            /* 0 record, 1 padding, 2 uncommitted, 3 skipped type */
	int status;          /* 0 present, 1 overwritten, 2 lost to damage */
	int type;
	char *line;          /* truth fields after "st=... off=... blen=..." */
};

static struct opts o;
static uint64_t rng;
static int ptr;
static uint8_t hdr[1 << 20];
static size_t hl;
static char strtab[STR_MAX];
static uint32_t strtab_len;

static struct rec *recs;
static size_t nrec, reccap;

/* ---- helpers ------------------------------------------------------------- */

static uint64_t rnd(void)
{
	/* xorshift64*: small, deterministic everywhere */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545F4914F6CDD1Dull;
}

static uint64_t rnd_below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

static void die(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "barmangen: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static void put(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++) {
		int sh = o.big ? 8 * (n - 1 - i) : 8 * i;
		p[i] = (uint8_t)(v >> sh);
	}
}

static uint64_t align(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

static uint32_t str_add(const char *s)
{
	size_t n = strlen(s) + 1;
	uint32_t at = strtab_len;

	if (strtab_len + n > STR_MAX)
		die("string table full");
	memcpy(strtab + strtab_len, s, n);
	strtab_len += (uint32_t)n;
	return at;
}

/* ---- the target's configuration ----------------------------------------- */

struct core { uint32_t midr, ncnt, types[MAX_PMU]; uint64_t val[MAX_PMU]; };
struct task { uint32_t id; const char *name; };
struct map { uint64_t base, len, off; uint32_t task; const char *name; };
struct series { uint32_t chart, local; int sampled, type4; };

static struct core cores[256];
static struct task tasks[16];
static struct map maps[8];
static struct series series[64];
static uint64_t t_base, t_mult, t_div, t_now;
static uint32_t cur_task[256];

static const uint32_t midrs[] = {0x410fd034, 0x410fd073, 0x413fc090, 0x410fd050, 0x410fc075};
static const uint32_t events[] = {0x3, 0x4, 0x8, 0x10, 0x11, 0x12, 0x13, 0x1d, 0x60, 0xc0};

static void configure(void)
{
	static const char *task_names[] = {"idle", "main", "net", "ui", "log", "dsp", "io", "timer"};

	for (int c = 0; c < o.cores; c++) {
		struct core *k = &cores[c];
		k->midr = midrs[(c / 4) % 5];
		k->ncnt = 1 + (uint32_t)rnd_below(5);
		k->types[0] = 0xffffffffu;
		for (uint32_t i = 1; i < k->ncnt; i++)
			k->types[i] = events[rnd_below(10)];
		for (uint32_t i = 0; i < k->ncnt; i++)
			/* some counters start near 2^64 so that they wrap */
			k->val[i] = rnd_below(4) == 0 ? UINT64_MAX - rnd_below(100000) : rnd_below(1000);
	}
	for (int i = 0; i < o.tasks; i++) {
		tasks[i].id = i < 2 ? (uint32_t)i + 1 : 8 + (uint32_t)i;
		tasks[i].name = task_names[i % 8];
	}
	for (int i = 0; i < o.mmaps; i++) {
		maps[i].base = (o.bits == 32 ? 0x20000000u : 0x80000000u) + 0x100000ull * (uint64_t)i;
		maps[i].len = 0x10000 + 0x1000 * rnd_below(16);
		maps[i].off = 0x200 * rnd_below(4);
		maps[i].task = o.tasks && i > 0 ? tasks[rnd_below((uint64_t)o.tasks)].id : 0;
		maps[i].name = i == 0 ? "firmware.axf" : i == 1 ? "libextra.so" : "libmore.so";
	}
	{
		uint32_t nlocal[64] = {0};
		int taken[64][64] = {{0}};
		for (int i = 0; i < o.series; i++) {
			series[i].chart = (uint32_t)(i % o.charts);
			series[i].local = nlocal[series[i].chart]++;
			series[i].sampled = i % 2 == 0;
			/* type-4 records carry the chart-local index: only the
			 * first non-sampled series with that index is reachable */
			if (!series[i].sampled && !taken[0][series[i].local]) {
				taken[0][series[i].local] = 1;
				series[i].type4 = 1;
			}
		}
	}
	/* a clock that needs 128-bit arithmetic: big base, 24 MHz ticks */
	t_base = 0xf000000000000000ull + rnd_below(1u << 20);
	t_mult = 1000000000;
	t_div = 24000000 + rnd_below(1000);
	/* By default the first record comes ~11.6 hours of ticks after the
	 * base, so (t - base) * mult overflows 64 bits: the reader's 128-bit
	 * path is exercised.  --start-ms gives a capture that starts near 0. */
	t_now = t_base + (o.have_start ? o.start_ms * (t_div / 1000) : 1000000000000ull);
}

/* ---- header ---------------------------------------------------------------- */

struct layout { uint64_t pmu, pmu_size, ntask, task, nmmap, mmap, mmap_size, ncharts, charts, series, ds, size; };

static void layout(struct layout *l)
{
	uint64_t off = 92 + align(4 + STR_MAX, 4);

	memset(l, 0, sizeof *l);
	l->pmu = off;
	l->pmu_size = (ptr == 8 ? 28u : 24u) + 4u * MAX_PMU;
	off += l->pmu_size * (uint64_t)o.cores;
	if (o.tasks) {
		l->ntask = off = align(off, 4);
		l->task = off += 4;
		off += 16u * (uint64_t)o.tasks;
	}
	if (o.mmaps) {
		l->nmmap = off = align(off, 4);
		l->mmap = off += 4;
		l->mmap_size = (o.tasks ? 12u : 0u) + 3u * (unsigned)ptr + 4u;
		off += l->mmap_size * (uint64_t)o.mmaps;
	}
	if (o.series) {
		l->ncharts = off = align(off, 4);
		l->charts = off += 4;
		l->series = off += 7u * (uint64_t)o.charts;
		off += 31u * (uint64_t)o.series;
	}
	l->ds = align(off, 8);
	l->size = l->ds + 40;
}

static void build_header(uint64_t buflen, uint64_t rd, uint64_t wr, uint64_t total)
{
	struct layout l;
	uint32_t target;

	layout(&l);
	hl = (size_t)l.size;
	if (hl > sizeof hdr)
		die("header too large");
	memset(hdr, 0, hl);
	memcpy(hdr, o.big ? (ptr == 8 ? "BARMAN64" : "BARMAN32") : (ptr == 8 ? "46NAMRAB" : "23NAMRAB"), 8);
	put(hdr + 8, (uint64_t)o.version, 4);
	put(hdr + 12, hl, 4);
	put(hdr + 16, o.circular ? 2 : 1, 4);
	target = 0; /* the target name is the first string */
	put(hdr + 20, target, 4);
	put(hdr + 24, t_now, 8);
	put(hdr + 32, 1000, 4);
	put(hdr + 36, (uint64_t)o.cores, 4);
	put(hdr + 40, (uint64_t)o.tasks, 4);
	put(hdr + 44, (uint64_t)o.mmaps, 4);
	put(hdr + 48, MAX_PMU, 4);
	put(hdr + 52, STR_MAX, 4);
	put(hdr + 56, (uint64_t)o.series, 4);
	put(hdr + 60, t_base, 8);
	put(hdr + 68, t_mult, 8);
	put(hdr + 76, t_div, 8);
	put(hdr + 84, 1750000000000000000ull, 8);
	for (int c = 0; c < o.cores; c++) {
		uint8_t *p = hdr + l.pmu + l.pmu_size * (uint64_t)c;
		put(p, t_base + 100, 8);
		put(p + 8, cores[c].midr, 4);
		put(p + 12, 0x80000000u + (uint64_t)c, ptr);
		put(p + 12 + ptr, (uint64_t)c / 4, 4);
		put(p + 16 + ptr, cores[c].ncnt, 4);
		for (uint32_t i = 0; i < cores[c].ncnt; i++)
			put(p + 20 + ptr + 4 * i, cores[c].types[i], 4);
	}
	if (o.tasks) {
		put(hdr + l.ntask, (uint64_t)o.tasks, 4);
		for (int i = 0; i < o.tasks; i++) {
			uint8_t *p = hdr + l.task + 16u * (uint64_t)i;
			put(p, t_base, 8);
			put(p + 8, tasks[i].id, 4);
			put(p + 12, str_add(tasks[i].name), 4);
		}
	}
	if (o.mmaps) {
		uint64_t f = o.tasks ? 12 : 0;
		put(hdr + l.nmmap, (uint64_t)o.mmaps, 4);
		for (int i = 0; i < o.mmaps; i++) {
			uint8_t *p = hdr + l.mmap + l.mmap_size * (uint64_t)i;
			if (f) {
				put(p, t_base, 8);
				put(p + 8, maps[i].task, 4);
			}
			put(p + f, maps[i].base, ptr);
			put(p + f + ptr, maps[i].len, ptr);
			put(p + f + 2 * ptr, maps[i].off, ptr);
			put(p + f + 3 * ptr, str_add(maps[i].name), 4);
		}
	}
	if (o.series) {
		put(hdr + l.ncharts, (uint64_t)o.charts, 4);
		for (int c = 0; c < o.charts; c++) {
			uint8_t *p = hdr + l.charts + 7u * (uint64_t)c;
			char nm[32];
			snprintf(nm, sizeof nm, "Chart%d", c);
			put(p, str_add(nm), 4);
			p[4] = (uint8_t)(1 + c % 3);
			p[5] = (uint8_t)(1 + (c + 1) % 3);
			p[6] = (uint8_t)(c & 0xf);
		}
		for (int i = 0; i < o.series; i++) {
			uint8_t *p = hdr + l.series + 31u * (uint64_t)i;
			char nm[32], un[16], de[48];
			double m = 0.5 * (i + 1);
			uint64_t mb;
			snprintf(nm, sizeof nm, "Series%d", i);
			snprintf(un, sizeof un, "u%d", i);
			snprintf(de, sizeof de, "generated series %d", i);
			put(p, series[i].chart, 4);
			put(p + 4, str_add(nm), 4);
			put(p + 8, str_add(un), 4);
			put(p + 12, str_add(de), 4);
			put(p + 16, 0x102030u * (uint64_t)(i + 1), 4);
			memcpy(&mb, &m, 8);
			put(p + 20, mb, 8);
			p[28] = (uint8_t)(series[i].sampled ? 3 : 2);
			p[29] = (uint8_t)(series[i].sampled ? 2 : 1);
			p[30] = (uint8_t)series[i].sampled;
		}
	}
	put(hdr + 92, strtab_len, 4);
	memcpy(hdr + 96, strtab, strtab_len);
	put(hdr + l.ds, buflen, 8);
	put(hdr + l.ds + 8, wr, 8);
	put(hdr + l.ds + 16, rd, 8);
	put(hdr + l.ds + 24, total, 8);
	put(hdr + l.ds + 32, 0x80001000u, ptr);
}

/* ---- records ----------------------------------------------------------------- */

static uint8_t body[4096];
static size_t blen_body;
static char line[4096];
static size_t linelen;

static void lf(const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	linelen += (size_t)vsnprintf(line + linelen, sizeof line - linelen, f, ap);
	va_end(ap);
}

static void rec_header(int type, uint32_t core)
{
	memset(body, 0, 16);
	put(body, (uint64_t)type, 4);
	put(body + 4, core, 4);
	put(body + 8, t_now, 8);
	blen_body = 16;
	linelen = 0;
	lf("type=%d core=%u ts=%" PRIu64, type, core, t_now);
}

static void add32(uint64_t v) { put(body + blen_body, v, 4); blen_body += 4; }
static void add64(uint64_t v) { put(body + blen_body, v, 8); blen_body += 8; }
static void addptr(uint64_t v) { put(body + blen_body, v, ptr); blen_body += (size_t)ptr; }

/* Make the next record body; returns its type. */
static int make_record(void)
{
	uint32_t core = (uint32_t)rnd_below((uint64_t)o.cores);
	uint64_t pick = rnd_below(100);
	int has_type4 = 0;

	for (int i = 0; i < o.series; i++)
		has_type4 |= series[i].type4;
	t_now += 1 + rnd_below(2000);
	if (o.extra && o.version >= 3 && pick < 4) {
		rec_header(7 + (int)rnd_below(3), core);
		for (int i = 0; i < 3; i++)
			add32(rnd());
		return 7;
	}
	if (o.tasks && pick < 15) {
		uint32_t id = tasks[rnd_below((uint64_t)o.tasks)].id;
		int reason = (int)rnd_below(2);
		rec_header(3, core);
		add32(id);
		body[blen_body++] = (uint8_t)reason;
		cur_task[core] = id;
		lf(" task=%u reason=%d", id, reason);
		return 3;
	}
	if (has_type4 && pick < 25) {
		int s;
		do
			s = (int)rnd_below((uint64_t)o.series);
		while (!series[s].type4);
		uint64_t v = rnd_below(1000000);
		rec_header(4, core);
		if (o.tasks)
			add32(cur_task[core]);
		add32(series[s].local);
		add64(v);
		lf(" task=%u id=%u gid=%d value=%" PRIu64, cur_task[core], series[s].local, s, v);
		return 4;
	}
	if (o.version >= 2 && pick < 32) {
		static const char *words[] = {"start", "stop", "frame", "tick", "a \"quoted\" word", "x"};
		int atype = (int)rnd_below(4);
		uint32_t color = rnd_below(2) ? 0 : 0x1b000000u | (uint32_t)rnd_below(0x1000000);
		char text[96];
		size_t dl;
		if (atype >= 2)
			color = 0;
		/* Two draws, in this order (x86 gcc's order of the arguments
		 * they once were, which wrote the committed fixtures): in one
		 * call the order is unspecified, and aarch64 gcc took the other. */
		uint64_t num = rnd_below(100000);
		const char *word = words[rnd_below(6)];
		snprintf(text, sizeof text, "%s %" PRIu64, word, num);
		dl = strlen(text) + 1;
		rec_header(5, core);
		if (o.tasks)
			add32(cur_task[core]);
		addptr(dl);
		{
			uint32_t channel = (uint32_t)rnd_below(8), group = (uint32_t)rnd_below(4);
			add32(channel);
			add32(group);
			add32(color);
			body[blen_body++] = (uint8_t)atype;
			memcpy(body + blen_body, text, dl);
			blen_body += dl;
			lf(" task=%u atype=%d channel=%u group=%u color=0x%08x dlen=%zu text=\"%s\"+NUL", cur_task[core],
			   atype, channel, group, color, dl, text);
		}
		return 5;
	}
	if (o.version >= 2 && pick < 38) {
		int entered = (int)rnd_below(2);
		rec_header(6, core);
		body[blen_body++] = (uint8_t)entered;
		lf(" entered=%d", entered);
		return 6;
	}
	{
		int with_pc = rnd_below(3) == 0;
		struct core *k = &cores[core];
		uint32_t nc = 0, ids[64];
		uint64_t pc = 0;

		rec_header(with_pc ? 2 : 1, core);
		if (o.tasks) {
			add32(cur_task[core]);
			lf(" task=%u", cur_task[core]);
		}
		if (o.series) {
			if (rnd_below(10) != 0)
				for (int i = 0; i < o.series; i++)
					if (series[i].sampled)
						ids[nc++] = (uint32_t)i;
			add32(nc);
		}
		if (with_pc) {
			if (o.mmaps && rnd_below(4)) {
				const struct map *m = &maps[rnd_below((uint64_t)o.mmaps)];
				pc = m->base + (rnd_below(m->len) & ~3ull);
			} else {
				pc = 0x10000000u + (rnd_below(0x100000) & ~3ull);
			}
			addptr(pc);
			lf(" pc=0x%" PRIx64, pc);
		}
		lf(" ncnt=%u cnt=", k->ncnt);
		for (uint32_t i = 0; i < k->ncnt; i++) {
			k->val[i] += rnd_below(i == 0 ? 100000 : 5000);
			add64(k->val[i]);
			lf("%s0x%" PRIx64, i ? "," : "", k->val[i]);
		}
		if (o.series) {
			lf(" ncust=%u cust=", nc);
			for (uint32_t i = 0; i < nc; i++) {
				uint64_t v = 40000 + rnd_below(1000);
				add32(ids[i]);
				add64(v);
				lf("%s%u:%" PRIu64, i ? "," : "", ids[i], v);
			}
		}
		return with_pc ? 2 : 1;
	}
}

static void rec_push(uint64_t off, uint64_t blen, int kind, int type, const char *l)
{
	if (nrec == reccap) {
		reccap = reccap ? reccap * 2 : 1024;
		recs = realloc(recs, reccap * sizeof *recs);
		if (!recs)
			die("out of memory");
	}
	recs[nrec].off = off;
	recs[nrec].blen = blen;
	recs[nrec].kind = kind;
	recs[nrec].status = 0;
	recs[nrec].type = type;
	recs[nrec].line = o.truth && l ? strdup(l) : NULL;
	nrec++;
}

/* The block: length word, body, padding to the pointer size (junk). */
static size_t block(uint8_t *dst, int padding)
{
	uint64_t alen = align(blen_body, (uint64_t)ptr);
	uint64_t pad_bit = 1ull << (8 * ptr - 1);

	put(dst, alen | (padding ? pad_bit : 0), ptr);
	memcpy(dst + ptr, body, blen_body);
	for (uint64_t i = blen_body; i < alen; i++)
		dst[(uint64_t)ptr + i] = (uint8_t)rnd();
	return (size_t)ptr + (size_t)alen;
}

/* ---- main -------------------------------------------------------------------- */

static void usage(void)
{
	fprintf(stderr, "usage: barmangen -o FILE [--truth FILE] [--seed N] [--records N] [--size BYTES]\n"
			"  [--buffer BYTES] [--endian little|big] [--bits 32|64] [--version 1-3] [--circular]\n"
			"  [--cores N] [--tasks N] [--mmaps N] [--charts N --series N] [--junk N]\n"
			"  [--trailing N] [--extra] [--uncommitted] [--damage truncate|badlen]\n"
			"  [--start-ms MS]\n");
	exit(2);
}

static uint64_t num(const char *s)
{
	char *e;
	uint64_t v = strtoull(s, &e, 0);
	if (*e == 'K' || *e == 'k')
		v <<= 10, e++;
	else if (*e == 'M' || *e == 'm')
		v <<= 20, e++;
	else if (*e == 'G' || *e == 'g')
		v <<= 30, e++;
	if (*e)
		die("bad number %s", s);
	return v;
}

static void parse(int argc, char **argv)
{
	o.seed = 1;
	o.records = 200;
	o.bits = 64;
	o.version = 3;
	o.cores = 2;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define ARG(name) (strcmp(a, name) == 0 && (v || (usage(), 0)) && ++i)
		if (ARG("-o")) o.out = v;
		else if (ARG("--truth")) o.truth = v;
		else if (ARG("--seed")) o.seed = num(v);
		else if (ARG("--records")) o.records = num(v);
		else if (ARG("--size")) o.size = num(v);
		else if (ARG("--buffer")) o.buffer = num(v);
		else if (ARG("--endian")) o.big = strcmp(v, "big") == 0;
		else if (ARG("--bits")) o.bits = (int)num(v);
		else if (ARG("--version")) o.version = (int)num(v);
		else if (ARG("--cores")) o.cores = (int)num(v);
		else if (ARG("--tasks")) o.tasks = (int)num(v);
		else if (ARG("--mmaps")) o.mmaps = (int)num(v);
		else if (ARG("--charts")) o.charts = (int)num(v);
		else if (ARG("--series")) o.series = (int)num(v);
		else if (ARG("--junk")) o.junk = num(v);
		else if (ARG("--trailing")) o.trailing = num(v);
		else if (ARG("--damage")) o.damage = v;
		else if (ARG("--start-ms")) { o.start_ms = num(v); o.have_start = 1; }
		else if (strcmp(a, "--circular") == 0) o.circular = 1;
		else if (strcmp(a, "--extra") == 0) o.extra = 1;
		else if (strcmp(a, "--uncommitted") == 0) o.uncommitted = 1;
		else usage();
#undef ARG
	}
	if (!o.out || (o.bits != 32 && o.bits != 64) || o.version < 1 || o.version > 3 || o.cores < 1 ||
	    o.cores > 256 || o.tasks > 16 || o.mmaps > 8 || o.series > 64 || (o.series && o.charts < 1) ||
	    o.charts > o.series)
		usage();
	if (o.damage && strcmp(o.damage, "truncate") && strcmp(o.damage, "badlen"))
		usage();
	if (o.damage && o.circular && strcmp(o.damage, "truncate") == 0)
		die("--damage truncate is for linear buffers");
	ptr = o.bits / 8;
}

int main(int argc, char **argv)
{
	FILE *f;
	struct layout l;
	uint64_t data_off, buflen, rd = 0, wr = 0, total = 0, cut = 0;
	int64_t err_off = -1;
	uint8_t blk[4096 + 16];
	uint8_t *ring = NULL;

	parse(argc, argv);
	rng = o.seed * 0x9E3779B97F4A7C15ull + 1;
	configure();
	str_add("barmangen-target");
	layout(&l);
	data_off = o.junk + align(l.size, 8);
	if (o.size) {
		if (o.size < data_off + 4096)
			die("--size too small");
		buflen = (o.size - data_off) & ~(uint64_t)(ptr - 1);
		o.records = UINT64_MAX;
	} else {
		buflen = o.buffer ? o.buffer & ~(uint64_t)(ptr - 1) : 1u << 20;
	}
	f = fopen(o.out, "wb+");
	if (!f)
		die("cannot create %s", o.out);
	for (uint64_t i = 0; i < o.junk; i++)
		fputc((int)(rnd() & 0x7f) | 0x80, f);

	if (!o.circular) {
		/* linear: stream blocks to the file until the buffer is full */
		if (fseeko(f, (off_t)data_off, SEEK_SET) < 0)
			die("cannot seek");
		for (uint64_t n = 0; n < o.records; n++) {
			int type = make_record(), unc = o.uncommitted && rnd_below(20) == 0;
			size_t b = block(blk, unc);
			if (wr + b > buflen)
				break;
			if (fwrite(blk, 1, b, f) != b)
				die("write failed");
			rec_push(wr, b, unc ? 2 : type >= 7 ? 3 : 0, type, line);
			wr += b;
		}
		total = wr;
	} else {
		uint64_t head = 0, tail = 0;
		size_t first = 0; /* oldest live block in recs */
		uint64_t pad_bit = 1ull << (8 * ptr - 1);

		if (buflen > (256u << 20))
			die("circular buffers are built in memory: at most 256 MiB");
		ring = calloc(1, (size_t)buflen);
		if (!ring)
			die("out of memory");
		/* --size fills the buffer (no record count): write about twice
		 * its length, so it wraps once, and stop */
		for (uint64_t n = 0; n < o.records && (o.records != UINT64_MAX || tail < 2 * buflen); n++) {
			int type = make_record();
			size_t b = block(blk, 0);
			uint64_t real = tail % buflen, room = buflen - real;

			if (b > buflen)
				die("buffer too small");
			for (int pass = 0; pass < 2; pass++) {
				uint64_t need = pass == 0 ? (room < b ? room : 0) : b;
				if (!need)
					continue;
				while (buflen - (tail - head) < need) {
					recs[first].status = 1;
					head += recs[first].blen;
					first++;
				}
				if (pass == 0) {
					/* a padding block fills the rest up to the wrap point */
					put(ring + real, (need - (uint64_t)ptr) | pad_bit, ptr);
					rec_push(tail, need, 1, 0, NULL);
					tail += need;
				} else {
					memcpy(ring + tail % buflen, blk, b);
					rec_push(tail, b, type >= 7 ? 3 : 0, type, line);
					tail += b;
				}
			}
		}
		rd = head;
		wr = tail;
		total = tail;
	}
	build_header(buflen, rd, wr, total);
	if (fseeko(f, (off_t)o.junk, SEEK_SET) < 0 || fwrite(hdr, 1, hl, f) != hl)
		die("write failed");
	if (ring) {
		if (fseeko(f, (off_t)data_off, SEEK_SET) < 0 || fwrite(ring, 1, (size_t)buflen, f) != buflen)
			die("write failed");
	} else if (fflush(f) || ftruncate(fileno(f), (off_t)(data_off + buflen)) < 0) {
		/* the unused rest of a linear buffer is part of the dump */
		die("cannot extend %s", o.out);
	}
	if (o.trailing) {
		if (fseeko(f, 0, SEEK_END) < 0)
			die("cannot seek");
		for (uint64_t i = 0; i < o.trailing; i++)
			fputc((int)(rnd() & 0xff), f);
	}

	/* damage, applied to the first live record block at about 60% */
	if (o.damage) {
		size_t k = 0, live = 0, pick;
		for (size_t i = 0; i < nrec; i++)
			live += recs[i].status == 0;
		pick = live * 3 / 5;
		for (size_t i = 0; i < nrec; i++) {
			if (recs[i].status == 0 && k++ == pick) {
				uint64_t foff = data_off + recs[i].off % buflen;
				err_off = (int64_t)foff;
				if (strcmp(o.damage, "truncate") == 0) {
					cut = foff + recs[i].blen / 2;
					if (fflush(f) || ftruncate(fileno(f), (off_t)cut) < 0)
						die("cannot truncate");
				} else {
					uint8_t w[8];
					put(w, buflen * 2, ptr);
					if (fseeko(f, (off_t)foff, SEEK_SET) < 0 || fwrite(w, 1, (size_t)ptr, f) != (size_t)ptr)
						die("write failed");
				}
				/* everything from here on in reading order is lost,
				 * but damage in the older piece of a wrapped circular
				 * buffer ends at the wrap point: the newer piece, at
				 * the start of the buffer, is read on its own */
				uint64_t stop = UINT64_MAX, wrap = rd - rd % buflen + buflen;
				if (o.circular && recs[i].off < wrap && wr > wrap)
					stop = wrap;
				for (size_t j = i; j < nrec && recs[j].off < stop; j++)
					if (recs[j].status == 0)
						recs[j].status = 2;
				break;
			}
		}
	}
	if (fclose(f) != 0)
		die("write failed");

	if (o.truth) {
		FILE *t = fopen(o.truth, "w");
		uint64_t cnt[10] = {0}, present = 0;
		static const char *names[] = {"PAD", "SAMPLE", "SAMPLE_WITH_PC", "TASK_SWITCH", "CUSTOM_COUNTER",
					      "ANNOTATION", "HALT_EVENT", "EXTRA7", "EXTRA8", "EXTRA9"};
		if (!t)
			die("cannot create %s", o.truth);
		for (size_t i = 0; i < nrec; i++)
			if (recs[i].status == 0 && recs[i].kind == 0) {
				cnt[recs[i].type]++;
				present++;
			}
		fprintf(t, "# barmangen truth: seed=%" PRIu64 " bits=%d endian=%s version=%d %s\n", o.seed, o.bits,
			o.big ? "big" : "little", o.version, o.circular ? "circular" : "linear");
		fprintf(t, "FILE data_area_file_offset=%" PRIu64 " header_length=%zu leading_junk=%" PRIu64
			   " trailing=%" PRIu64 "\n", data_off, hl, o.junk, o.trailing);
		fprintf(t, "H config max_cores=%d max_task_infos=%d max_mmap_layout=%d max_pmu_counters=%d "
			   "max_string_table_length=%d num_custom_counters=%d\n",
			o.cores, o.tasks, o.mmaps, MAX_PMU, STR_MAX, o.series);
		fprintf(t, "H clock timestamp_base=%" PRIu64 " timestamp_multiplier=%" PRIu64
			   " timestamp_divisor=%" PRIu64 "\n", t_base, t_mult, t_div);
		for (int c = 0; c < o.cores; c++) {
			fprintf(t, "H pmu core=%d midr=0x%08x num_counters=%u counter_types=", c, cores[c].midr,
				cores[c].ncnt);
			for (uint32_t i = 0; i < cores[c].ncnt; i++)
				fprintf(t, "%s0x%x", i ? "," : "", cores[c].types[i]);
			fputc('\n', t);
		}
		for (int i = 0; i < o.tasks; i++)
			fprintf(t, "H task idx=%d task_id=%u name=\"%s\"\n", i, tasks[i].id, tasks[i].name);
		for (int i = 0; i < o.mmaps; i++)
			fprintf(t, "H mmap idx=%d task_id=%u base_address=0x%" PRIx64 " length=0x%" PRIx64
				   " image_offset=0x%" PRIx64 " name=\"%s\"\n",
				i, maps[i].task, maps[i].base, maps[i].len, maps[i].off, maps[i].name);
		fprintf(t, "H datastore buffer_length=%" PRIu64 " write_offset=%" PRIu64 " read_offset=%" PRIu64 "\n",
			buflen, wr, rd);
		fprintf(t, "SUMMARY records_present=%" PRIu64, present);
		for (int i = 1; i < 7; i++)
			fprintf(t, " %s=%" PRIu64, names[i], cnt[i]);
		fputc('\n', t);
		if (err_off >= 0)
			fprintf(t, "EXPECT error_offset=%" PRId64 " damage=%s\n", err_off, o.damage);
		for (size_t i = 0; i < nrec; i++) {
			static const char *st[] = {"present", "overwritten", "lost"};
			static const char *kinds[] = {"R", "PAD", "UNCOMMITTED", "SKIPPED"};
			/* overwritten records keep only their place (small files) */
			const char *fields = recs[i].status == 1 ? NULL : recs[i].line;
			fprintf(t, "%s seq=%zu st=%s off=%" PRIu64 " blen=%" PRIu64 "%s%s\n", kinds[recs[i].kind], i,
				st[recs[i].status], recs[i].off, recs[i].blen, fields ? " " : "", fields ? fields : "");
		}
		if (fclose(t) != 0)
			die("write failed");
	}
	for (size_t i = 0; i < nrec; i++)
		free(recs[i].line);
	free(recs);
	free(ring);
	return 0;
}
