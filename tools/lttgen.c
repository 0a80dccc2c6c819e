/*
 * lttgen.c - writes a synthetic LTT directory trace (2004 layout) with a
 * ground-truth file, for the LTT reader's tests.  Deterministic for a
 * seed.  Covers: several CPUs and blocks, low-32-bit cycle wraps with
 * heartbeats, little/big endian, both block-trailer meanings, the
 * microsecond quirk of the one real trace (--usec), a second facility
 * placed by control/facilities with variable-size types (sequence,
 * string, union, array of struct), control/processes, bookmarks, and
 * (--undefined) ids with no definition.  --mix kernel draws event kinds
 * and gaps like the real trace instead of the default stress mix (every
 * kind equally often), for the benchmark.
 *
 * Truth lines:  meta KEY VALUE | ev CPU ID TS CYCLES | count CPU NAME N |
 *               model KIND N | wraps CPU N
 * ev lines are every event the reader can see, builtins included, in
 * each CPU file's order; TS is the interpolated ns time.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define GEN_EXTRA_BASE 40

/* The generator's own core.xml: the 2004 layout (ids in file order). */
static const char *const gen_core_names[] = {
	"facility_load", "syscall_entry", "syscall_exit", "trap_entry", "trap_exit",
	"irq_entry", "irq_exit", "schedchange", "kernel_timer", "soft_irq", "process",
	"file_system", "timer", "memory", "socket", "ipc", "network", "block_start",
	"block_end", "time_heartbeat", "process_fork", "process_exit"};
#define GEN_NCORE 22
static const char *const gen_extra_names[] = {"blob", "message", "choice", "vec"};
#define GEN_NEXTRA 4

static const char gen_core_xml[] =
	"<!-- written by lttgen: the 2004 core facility layout -->\n"
	"<facility name=core>\n <description>Core events</description>\n"
	" <event name=facility_load><description>Facility used</description><struct>\n"
	"  <field name=\"name\"><string/></field><field name=\"checksum\"><uint size=4/></field>\n"
	"  <field name=\"base_code\"><uint size=4/></field></struct></event>\n"
	" <event name=syscall_entry><description>Syscall</description><struct>\n"
	"  <field name=syscall_id><uint size=1/></field><field name=address><uint size=4/></field></struct></event>\n"
	" <event name=syscall_exit><description>Syscall exit</description></event>\n"
	" <event name=trap_entry><struct><field name=trap_id><uint size=2/></field>\n"
	"  <field name=address><uint size=4/></field></struct></event>\n"
	" <event name=trap_exit></event>\n"
	" <event name=irq_entry><struct><field name=irq_id><uint size=1/></field>\n"
	"  <field name=kernel><uint size=1/></field></struct></event>\n"
	" <event name=irq_exit></event>\n"
	" <event name=schedchange><description>Scheduling change</description><struct>\n"
	"  <field name=out><uint size=4/></field><field name=in><uint size=4/></field>\n"
	"  <field name=out_state><uint size=4/></field></struct></event>\n"
	" <event name=kernel_timer></event>\n"
	" <event name=soft_irq><struct><field name=event_sub_id><enum size=1>\n"
	"   <label name=BH value=1/><label name=SOFT_IRQ/></enum></field>\n"
	"  <field name=event_data><uint size=4/></field></struct></event>\n"
	" <event name=process><struct><field name=event_sub_id><enum size=1>\n"
	"   <label name=KTHREAD value=1/><label name=FORK/><label name=EXIT/></enum></field>\n"
	"  <field name=event_data1><uint size=4/></field><field name=event_data2><uint size=4/></field>\n"
	"  </struct></event>\n"
	" <event name=file_system><struct><field name=event_sub_id><enum size=1>1 2 3</enum></field>\n"
	"  <field name=event_data1><uint size=4/></field><field name=event_data2><uint size=4/></field>\n"
	"  <field name=file_name><string/></field></struct></event>\n"
	" <event name=timer><struct><field name=a><uint size=1/></field><field name=b><uint size=1/></field>\n"
	"  <field name=c><uint size=4/></field><field name=d><uint size=4/></field></struct></event>\n"
	" <event name=memory><struct><field name=a><uint size=1/></field><field name=b><uint size=4/></field></struct></event>\n"
	" <event name=socket><struct><field name=a><uint size=1/></field><field name=b><uint size=4/></field>\n"
	"  <field name=c><uint size=4/></field></struct></event>\n"
	" <event name=ipc><struct><field name=a><uint size=1/></field><field name=b><uint size=4/></field>\n"
	"  <field name=c><uint size=4/></field></struct></event>\n"
	" <event name=network><struct><field name=a><uint size=1/></field><field name=b><uint size=4/></field></struct></event>\n"
	" <event name=block_start><typeref name=block_timestamp/></event>\n"
	" <event name=block_end><typeref name=block_timestamp></event>\n"
	" <event name=time_heartbeat per_tracefile><typeref name=timestamp/></event>\n"
	" <type name=block_timestamp><struct><field name=timestamp><typeref name=timestamp/></field>\n"
	"  <field name=block_id><uint size=4/></field></struct></type>\n"
	" <type name=timestamp><struct><field name=time><typeref name=timespec/></field>\n"
	"  <field name=cycle_count><uint size=8/></field></struct></type>\n"
	" <type name=timespec><struct><field name=seconds><uint size=4/></field>\n"
	"  <field name=nanoseconds><uint size=4/></field></struct></type>\n"
	" <event name=process_fork><struct><field name=child_pid><uint size=4/></field>\n"
	"  <field name=x><uint size=4/></field></struct></event>\n"
	" <event name=process_exit><struct><field name=x><uint size=4/></field>\n"
	"  <field name=y><uint size=4/></field></struct></event>\n"
	"</facility>\n";

static const char gen_extra_xml[] =
	"<facility name=extra>\n <description>Variable-size events</description>\n"
	" <event name=blob><description>A byte sequence</description>\n"
	"  <sequence lengthsize=short><uint size=1/></sequence></event>\n"
	" <event name=message><struct><field name=text><string/></field>\n"
	"  <field name=level><enum size=short>LOW MID HIGH</enum></field></struct></event>\n"
	" <event name=choice><union typecodesize=1>\n"
	"  <field name=n><uint size=4/></field><field name=s><string/></field>\n"
	"  <field name=a><array size=3><int size=short/></array></field></union></event>\n"
	" <event name=vec><array size=2><typeref name=pair/></array></event>\n"
	" <type name=pair><struct><field name=x><int size=short/></field>\n"
	"  <field name=y><uint size=long/></field></struct></type>\n"
	"</facility>\n";

static uint64_t gen_state;

static uint64_t gen_rand(void)
{
	/* splitmix64: stable across platforms, unlike rand() */
	uint64_t z = (gen_state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t gen_range(uint64_t lo, uint64_t hi)
{
	return lo + gen_rand() % (hi - lo + 1);
}

struct gen {
	int big, usec, old_trailer, undefined, kernel;
	size_t bs;
	uint8_t *blk;
	size_t pos;
	FILE *truth;
	uint64_t counts[256];
	uint64_t m_activity, m_link, m_exit, m_name, m_counter;
	unsigned sched_linked;  /* bit k: pid 100k switched in already linked */
};

static void gen_put(struct gen *g, uint64_t v, int size)
{
	for (int i = 0; i < size; i++)
		g->blk[g->pos + (size_t)i] = (uint8_t)(v >> (8 * (g->big ? size - 1 - i : i)));
	g->pos += (size_t)size;
}

static void gen_str(struct gen *g, const char *s)
{
	size_t n = strlen(s) + 1;
	memcpy(g->blk + g->pos, s, n);
	g->pos += n;
}

/* The trace clock: ns since the epoch for a 64-bit cycle count. */
static uint64_t gen_clock(uint64_t cyc)
{
	return UINT64_C(1100000000000000000) + (uint64_t)((unsigned __int128)cyc * 1000 / 351);
}

static void gen_timespec(struct gen *g, uint64_t ns)
{
	gen_put(g, ns / 1000000000u, 4);
	gen_put(g, g->usec ? ns % 1000000000u / 1000 : ns % 1000000000u, 4);
}

/* What the reader will compute from the written timespec. */
static uint64_t gen_written_ns(const struct gen *g, uint64_t ns)
{
	return g->usec ? ns / 1000 * 1000 : ns;
}

static uint64_t gen_interp(uint64_t c, uint64_t t0, uint64_t c0, uint64_t t1, uint64_t c1)
{
	return t0 + (uint64_t)((unsigned __int128)(c - c0) * (t1 - t0) / (c1 - c0));
}

struct gen_ev {
	uint16_t id;
	uint64_t cyc;
	uint8_t data[96];
	size_t len;
};

/* Fill a random payload for event id into e (scratch writer on g). */
static void gen_payload(struct gen *g, struct gen_ev *e, int32_t *cur_pid, int32_t *next_pid)
{
	uint8_t *save = g->blk;
	size_t savepos = g->pos;
	const char *nm = e->id < GEN_NCORE ? gen_core_names[e->id] : gen_extra_names[e->id - GEN_EXTRA_BASE];

	g->blk = e->data;
	g->pos = 0;
	if (!strcmp(nm, "syscall_entry")) {
		gen_put(g, gen_range(0, 255), 1); gen_put(g, gen_rand(), 4);
	} else if (!strcmp(nm, "trap_entry")) {
		gen_put(g, 14, 2); gen_put(g, gen_rand(), 4);
	} else if (!strcmp(nm, "irq_entry")) {
		gen_put(g, gen_range(0, 15), 1); gen_put(g, 1, 1);
	} else if (!strcmp(nm, "schedchange")) {
		int32_t in = (int32_t)gen_range(0, 6) * 100;
		gen_put(g, (uint64_t)(*cur_pid < 0 ? 0 : *cur_pid), 4); gen_put(g, (uint64_t)in, 4);
		gen_put(g, gen_range(0, 2), 4);
		*cur_pid = in;
		g->m_activity++;
		/* The reader links a pid at its first switch in unless
		 * control/processes (100, 200, 300) or a fork (1000 up)
		 * did: here 0, 400, 500 and 600, once each. */
		if (!(g->sched_linked & (1u << (in / 100)))) {
			g->sched_linked |= 1u << (in / 100);
			if (in == 0 || in > 300)
				g->m_link++;
		}
	} else if (!strcmp(nm, "soft_irq") || !strcmp(nm, "memory") || !strcmp(nm, "network")) {
		gen_put(g, gen_range(1, 2), 1); gen_put(g, gen_rand(), 4);
	} else if (!strcmp(nm, "process")) {
		/* the real trace's process events are neither forks nor exits */
		uint64_t sub = g->kernel && gen_range(0, 9) ? 4 : gen_range(1, 4);
		gen_put(g, sub, 1); gen_put(g, sub <= 2 ? (uint64_t)(*next_pid)++ : 7, 4); gen_put(g, 0, 4);
		if (sub <= 2)
			g->m_link++;
		if (sub == 3 && *cur_pid >= 0)
			g->m_exit++;
	} else if (!strcmp(nm, "file_system")) {
		/* ... and it has no exec at all */
		uint64_t sub = g->kernel && gen_range(0, 99) ? 2 : gen_range(2, 3);
		gen_put(g, sub, 1); gen_put(g, 1, 4); gen_put(g, 2, 4);
		gen_str(g, sub == 3 ? "/usr/bin/prog" : "/etc/passwd");
		if (sub == 3 && *cur_pid >= 0)
			g->m_name++;
	} else if (!strcmp(nm, "timer")) {
		gen_put(g, 1, 1); gen_put(g, 2, 1); gen_put(g, 3, 4); gen_put(g, 4, 4);
	} else if (!strcmp(nm, "socket") || !strcmp(nm, "ipc")) {
		gen_put(g, 1, 1); gen_put(g, 2, 4); gen_put(g, 3, 4);
	} else if (!strcmp(nm, "process_fork")) {
		gen_put(g, (uint64_t)(*next_pid)++, 4); gen_put(g, 0, 4);
		g->m_link++;
	} else if (!strcmp(nm, "process_exit")) {
		gen_put(g, 0, 4); gen_put(g, 0, 4);
		if (*cur_pid >= 0)
			g->m_exit++;
	} else if (!strcmp(nm, "blob")) {
		uint64_t n = gen_range(0, 20);
		gen_put(g, n, 2);
		for (uint64_t i = 0; i < n; i++)
			gen_put(g, i, 1);
	} else if (!strcmp(nm, "message")) {
		gen_str(g, gen_range(0, 1) ? "hello" : "");
		gen_put(g, gen_range(0, 2), 2);
	} else if (!strcmp(nm, "choice")) {
		uint64_t tag = gen_range(0, 2);
		gen_put(g, tag, 1);
		if (tag == 0)
			gen_put(g, 42, 4);
		else if (tag == 1)
			gen_str(g, "variant");
		else
			for (int i = 0; i < 3; i++)
				gen_put(g, (uint64_t)-i, 2);
	} else if (!strcmp(nm, "vec")) {
		for (int i = 0; i < 2; i++) {
			gen_put(g, 1, 2); gen_put(g, 2, 4);
		}
	}
	if (strcmp(nm, "schedchange") && strcmp(nm, "process_fork") && strcmp(nm, "process_exit"))
		g->m_counter++;
	e->len = g->pos;
	g->blk = save;
	g->pos = savepos;
}

static const uint16_t gen_pick_ids[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 20, 21,
					GEN_EXTRA_BASE, GEN_EXTRA_BASE + 1, GEN_EXTRA_BASE + 2,
					GEN_EXTRA_BASE + 3};

/*
 * --mix kernel: the proportions of the one real trace's cpu/0 (2003 SMP
 * kernel, HZ=1000; smp_example.reference.txt), per id: a tick is a burst
 * of soft_irqs, a kernel_timer and an irq pair about 1 ms after the last.
 */
static const struct {
	uint16_t id;
	uint32_t n;
} gen_kernel_mix[] = {{1, 1001}, {2, 1001}, {3, 20},   {4, 20},  {5, 10175}, {6, 10175},
		      {7, 417},	 {8, 19997}, {9, 40021}, {10, 221}, {11, 2183},  {12, 81},
		      {13, 562}, {14, 16},   {16, 24}};

static uint16_t gen_pick_kernel(void)
{
	uint64_t total = 0, r;
	size_t n = sizeof gen_kernel_mix / sizeof gen_kernel_mix[0];
	for (size_t i = 0; i < n; i++)
		total += gen_kernel_mix[i].n;
	r = gen_range(0, total - 1);
	for (size_t i = 0; i < n; i++) {
		if (r < gen_kernel_mix[i].n)
			return gen_kernel_mix[i].id;
		r -= gen_kernel_mix[i].n;
	}
	return 9;
}

static const char *gen_name(uint16_t id)
{
	if (id < GEN_NCORE)
		return gen_core_names[id];
	if (id >= GEN_EXTRA_BASE && id < GEN_EXTRA_BASE + GEN_NEXTRA)
		return gen_extra_names[id - GEN_EXTRA_BASE];
	return "undefined";
}

static void gen_truth_ev(struct gen *g, int cpu, uint16_t id, uint64_t ts, uint64_t cyc)
{
	if (g->truth)
		fprintf(g->truth, "ev %d %u %" PRIu64 " %" PRIu64 "\n", cpu, id, ts, cyc);
	g->counts[id < 256 ? id : 255]++;
}

/* One block event header + the block_start/end payload. */
static void gen_block_ev(struct gen *g, uint16_t id, uint32_t hdr, uint64_t ns, uint64_t cyc,
			 uint32_t bid)
{
	gen_put(g, id, 2);
	gen_put(g, hdr, 4);
	gen_timespec(g, ns);
	gen_put(g, cyc, 8);
	gen_put(g, bid, 4);
}

/* Write one file of blocks; cpu < 0 is a control file with given events. */
static int gen_cpu(struct gen *g, FILE *f, int cpu, uint64_t nevents, uint64_t *cyc_io,
		   int32_t *next_pid)
{
	uint64_t cyc = *cyc_io, done = 0, wraps = 0;
	int32_t cur_pid = -1;
	uint32_t bid = 0;
	struct gen_ev *evs = malloc(g->bs * sizeof *evs);

	if (!evs)
		return -1;
	memset(g->counts, 0, sizeof g->counts);
	while (done < nevents || bid == 0) {
		size_t n = 0, room = g->bs - 4 - 2 * 26;
		uint64_t c0 = cyc;
		int ended_undefined = 0;
		/* Choose this block's events first: times need block_end. */
		while (done + n < nevents) {
			struct gen_ev *e = &evs[n];
			uint64_t step;
			if (g->kernel) /* 4.3 events a tick (86 k in 20 s): 1 ms = 351 k cycles */
				step = gen_range(0, 99) < 23 ? gen_range(250000, 350000) : gen_range(300, 12000);
			else
				step = gen_range(0, 9) == 0 ? gen_range(1, 0x7fffffff) : gen_range(50, 50000);
			int wrap = ((cyc + step) >> 32) != (cyc >> 32);
			if (wrap) {
				/* A heartbeat right after each wrap, as LTT did. */
				if (room < 6 + 16 + 30)
					break;
				cyc += step;
				e->id = 19;
				e->cyc = cyc;
				e->len = 0;
				room -= 6 + 16;
				n++;
				e = &evs[n];
				step = gen_range(50, 5000);
			}
			e->id = g->kernel ? gen_pick_kernel()
					  : gen_pick_ids[gen_range(0, sizeof gen_pick_ids / sizeof gen_pick_ids[0] - 1)];
			if (g->undefined && gen_range(0, 49) == 0)
				e->id = 300;
			e->cyc = cyc + step;
			int32_t save_cur = cur_pid, save_next = *next_pid;
			uint64_t sa = g->m_activity, sl = g->m_link, se = g->m_exit, sn = g->m_name,
				 sc = g->m_counter;
			unsigned ss = g->sched_linked;
			if (e->id == 300)
				e->len = 0;
			else
				gen_payload(g, e, &cur_pid, next_pid);
			if (6 + e->len > room) {
				cur_pid = save_cur;
				*next_pid = save_next;
				g->m_activity = sa; g->m_link = sl; g->m_exit = se; g->m_name = sn;
				g->m_counter = sc;
				g->sched_linked = ss;
				break;
			}
			room -= 6 + e->len;
			cyc = e->cyc;
			n++;
			if (e->id == 300) {
				ended_undefined = 1;
				break;
			}
		}
		uint64_t c1 = cyc + gen_range(10, 1000);
		uint64_t t0 = gen_written_ns(g, gen_clock(c0)), t1 = gen_written_ns(g, gen_clock(c1));
		memset(g->blk, 0, g->bs);
		g->pos = 0;
		gen_block_ev(g, 17, (uint32_t)(c0 + 700), gen_clock(c0), c0, bid);
		gen_truth_ev(g, cpu, 17, t0, c0);
		for (size_t i = 0; i < n; i++) {
			struct gen_ev *e = &evs[i];
			gen_put(g, e->id, 2);
			gen_put(g, (uint32_t)e->cyc, 4);
			if (e->id == 19) {
				gen_put(g, 0, 4); gen_put(g, 0, 4); gen_put(g, e->cyc, 8);
				wraps++;
			} else {
				memcpy(g->blk + g->pos, e->data, e->len);
				g->pos += e->len;
			}
			if (e->id != 300) {
				gen_truth_ev(g, cpu, e->id, gen_interp(e->cyc, t0, c0, t1, c1), e->cyc);
				if (e->id != 19)
					done++;
			} else {
				done++;
			}
		}
		(void)ended_undefined;
		size_t end_at = g->pos;
		gen_block_ev(g, 18, (uint32_t)c1, gen_clock(c1), c1, bid);
		gen_truth_ev(g, cpu, 18, t1, c1);
		size_t tr = g->old_trailer ? g->bs - end_at : end_at;
		g->pos = g->bs - 4;
		gen_put(g, tr, 4);
		if (fwrite(g->blk, 1, g->bs, f) != g->bs) {
			free(evs);
			return -1;
		}
		cyc = c1 + gen_range(10, 1000);
		bid++;
	}
	if (g->truth && cpu >= 0) {
		for (int id = 0; id < 256; id++)
			if (g->counts[id])
				fprintf(g->truth, "count %d %s %" PRIu64 "\n", cpu,
					id == 255 ? "undefined" : gen_name((uint16_t)id), g->counts[id]);
		fprintf(g->truth, "wraps %d %" PRIu64 "\n", cpu, wraps);
	}
	*cyc_io = cyc;
	free(evs);
	return 0;
}

/* A control file: one block holding the given raw events. */
static int gen_control(struct gen *g, const char *path, const uint8_t *evs, size_t len, uint64_t cyc)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	if (len) {
		memset(g->blk, 0, g->bs);
		g->pos = 0;
		gen_block_ev(g, 17, (uint32_t)cyc, gen_clock(cyc), cyc, 0);
		memcpy(g->blk + g->pos, evs, len);
		g->pos += len;
		size_t end_at = g->pos;
		gen_block_ev(g, 18, (uint32_t)(cyc + 10), gen_clock(cyc + 10), cyc + 10, 0);
		g->pos = g->bs - 4;
		gen_put(g, g->old_trailer ? g->bs - end_at : end_at, 4);
		if (fwrite(g->blk, 1, g->bs, f) != g->bs) {
			fclose(f);
			return -1;
		}
	}
	return fclose(f);
}

static int gen_file(const char *dir, const char *rel, const char *text)
{
	char p[4096];
	snprintf(p, sizeof p, "%s/%s", dir, rel);
	FILE *f = fopen(p, "w");
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

static void gen_usage(void)
{
	fprintf(stderr, "usage: lttgen [--seed N] [--events N] [--cpus N] [--endian little|big]\n"
			"              [--trailer old|new] [--block-size N] [--usec] [--undefined]\n"
			"              [--mix stress|kernel]\n"
			"              -o DIR [--truth FILE]\n");
}

int main(int argc, char **argv)
{
	struct gen g;
	const char *out = NULL, *truth = NULL;
	uint64_t seed = 1, events = 1000;
	int cpus = 2;
	char p[4096];

	memset(&g, 0, sizeof g);
	g.bs = 4096;
	g.old_trailer = 1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--usec")) { g.usec = 1; continue; }
		if (!strcmp(a, "--undefined")) { g.undefined = 1; continue; }
		if (!v) { gen_usage(); return 2; }
		i++;
		if (!strcmp(a, "--seed")) seed = strtoull(v, NULL, 0);
		else if (!strcmp(a, "--events")) events = strtoull(v, NULL, 0);
		else if (!strcmp(a, "--cpus")) cpus = atoi(v);
		else if (!strcmp(a, "--endian")) g.big = !strcmp(v, "big");
		else if (!strcmp(a, "--trailer")) g.old_trailer = strcmp(v, "new") != 0;
		else if (!strcmp(a, "--block-size")) g.bs = strtoul(v, NULL, 0);
		else if (!strcmp(a, "-o")) out = v;
		else if (!strcmp(a, "--truth")) truth = v;
		else if (!strcmp(a, "--mix") && (!strcmp(v, "stress") || !strcmp(v, "kernel")))
			g.kernel = !strcmp(v, "kernel");
		else { gen_usage(); return 2; }
	}
	if (!out || cpus < 1 || cpus > 64 || g.bs < 256 || g.bs > (1u << 24)) {
		gen_usage();
		return 2;
	}
	gen_state = seed;
	g.blk = malloc(g.bs);
	if (!g.blk)
		return 1;
	static const char *const dirs[] = {"", "/info", "/eventdefs", "/control", "/cpu"};
	for (int i = 0; i < 5; i++) {
		snprintf(p, sizeof p, "%s%s", out, dirs[i]);
		mkdir(p, 0777);
	}
	if (truth && !(g.truth = fopen(truth, "w"))) {
		perror(truth);
		return 1;
	}
	snprintf(p, sizeof p,
		 "<system node_name=\"lttgen\" cpu=\"%d\" arch_size=\"ILP32\" endian=\"%s\"\n"
		 " kernel_name=\"Linux\" kernel_release=\"2.6.0-gen\" ltt_major_version=\"2\"\n"
		 " ltt_minor_version=\"2\" ltt_block_size=\"%zu\">generated</system>\n",
		 cpus, g.big ? "BIG_ENDIAN" : "LITTLE_ENDIAN", g.bs);
	if (gen_file(out, "info/system.xml", p) || gen_file(out, "eventdefs/core.xml", gen_core_xml) ||
	    gen_file(out, "eventdefs/extra.xml", gen_extra_xml))
		return 1;
	/* Bookmarks (time=, and start_time= with an end a little later)
	 * just after every CPU file's first block has started: those start
	 * within 100000 cycles of cyc0 (below), and the reader moves a
	 * bookmark before the first block to the start. */
	uint64_t cyc0 = 0xffffffffULL - gen_range(100000, 10000000);
	uint64_t bm = gen_written_ns(&g, gen_clock(cyc0 + 100000)) + 5000;
	snprintf(p, sizeof p,
		 "<bookmarks>\n <location name=first time=%" PRIu64 ".%09" PRIu64 ">Start</location>\n"
		 " <location name=\"second\" cpu=0 start_time=\"%" PRIu64 ".%09" PRIu64 "\" end_time=\"%" PRIu64 ".0\"/>\n"
		 "</bookmarks>\n",
		 bm / 1000000000u, bm % 1000000000u, (bm + 777) / 1000000000u, (bm + 777) % 1000000000u,
		 bm / 1000000000u + 1);
	if (gen_file(out, "info/bookmarks.xml", p))
		return 1;
	if (g.truth) {
		fprintf(g.truth, "meta cpus %d\nmeta subsec %s\nmeta trailer %s\nmeta endian %s\n", cpus,
			g.usec ? "us" : "ns", g.old_trailer ? "old" : "new", g.big ? "big" : "little");
		fprintf(g.truth, "mark %" PRIu64 "\nmark %" PRIu64 "\n", bm, bm + 777);
	}
	/* control/facilities: core at 0, extra at GEN_EXTRA_BASE. */
	uint8_t ctl[512];
	size_t cl = 0;
	uint8_t *save = g.blk;
	g.blk = ctl;
	g.pos = 0;
	static const char *const facs[2] = {"core", "extra"};
	for (int i = 0; i < 2; i++) {
		gen_put(&g, 0, 2); gen_put(&g, (uint32_t)cyc0, 4);
		gen_str(&g, facs[i]); gen_put(&g, 0x1234, 4); gen_put(&g, i ? GEN_EXTRA_BASE : 0, 4);
	}
	cl = g.pos;
	g.blk = save;
	snprintf(p, sizeof p, "%s/control/facilities", out);
	if (gen_control(&g, p, ctl, cl, cyc0))
		return 1;
	/* control/processes: the spec's process description (name, 12 u32). */
	static const char *const procs[3] = {"init", "bash", "lttd"};
	g.blk = ctl;
	g.pos = 0;
	for (int i = 0; i < 3; i++) {
		gen_put(&g, 10, 2); gen_put(&g, (uint32_t)cyc0, 4);
		gen_str(&g, procs[i]);
		gen_put(&g, (uint64_t)(i + 1) * 100, 4);
		for (int k = 0; k < 11; k++)
			gen_put(&g, 0, 4);
	}
	cl = g.pos;
	g.blk = save;
	g.m_name += 3;
	g.m_link += 3;
	snprintf(p, sizeof p, "%s/control/processes", out);
	if (gen_control(&g, p, ctl, cl, cyc0))
		return 1;
	snprintf(p, sizeof p, "%s/control/interrupts", out);
	if (gen_control(&g, p, NULL, 0, cyc0))
		return 1;
	int32_t next_pid = 1000;
	for (int c = 0; c < cpus; c++) {
		uint64_t cyc = cyc0 + gen_range(0, 100000);
		snprintf(p, sizeof p, "%s/cpu/%d", out, c);
		FILE *f = fopen(p, "wb");
		if (!f || gen_cpu(&g, f, c, events, &cyc, &next_pid) || fclose(f)) {
			perror(p);
			return 1;
		}
	}
	if (g.truth) {
		fprintf(g.truth, "model activity %" PRIu64 "\nmodel link %" PRIu64 "\nmodel exit %" PRIu64
			"\nmodel name %" PRIu64 "\nmodel counter %" PRIu64 "\nmodel annotation 2\n",
			g.m_activity, g.m_link, g.m_exit, g.m_name, g.m_counter);
		fclose(g.truth);
	}
	free(g.blk);
	return 0;
}
