/*
 * util.c - time parsing, clocks and command-line helpers for the commands.
 */
#include <errno.h>
#include <ftw.h>
#include <locale.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "err.h"
#include "scale.h"
#include "util.h"

int apc_parse_time_ns(const char *s, uint64_t *ns)
{
	static const struct { const char *suffix; uint64_t scale; size_t digits; } units[] = {
		{"ns", 1, 0}, {"us", 1000, 3}, {"ms", 1000000, 6}, {"s", 1000000000, 9}, {"", 1, 0},
	};
	static const char digits[] = "0123456789";
	size_t ip = strspn(s, digits), fd = 0, u;
	const char *frac = "", *unit = s + ip;
	uint64_t v = 0, f = 0;

	if (*unit == '.') {
		frac = unit + 1;
		fd = strspn(frac, digits);
		unit = frac + fd;
	}
	if (ip == 0 && fd == 0)
		return -1;
	for (u = 0; u < sizeof units / sizeof units[0]; u++)
		if (!strcmp(unit, units[u].suffix))
			break;
	if (u == sizeof units / sizeof units[0])
		return -1;
	/* a well-formed time from here on: too large, or one */
	for (size_t i = 0; i < ip; i++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -2;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v > UINT64_MAX / units[u].scale)
		return -2;
	v *= units[u].scale;
	/* the fraction down to whole nanoseconds, then the nearest one
	 * (half a nanosecond goes up): 5.0129215ms is 5012922 */
	for (size_t i = 0; i < units[u].digits; i++)
		f = f * 10 + (i < fd ? (uint64_t)(frac[i] - '0') : 0);
	if (fd > units[u].digits && frac[units[u].digits] >= '5')
		f++;
	if (v > UINT64_MAX - f || v + f > (uint64_t)INT64_MAX)
		return -2;
	*ns = v + f;
	return 0;
}

const char *apc_time_error(char *buf, size_t len, const char *opt, const char *arg, int rc)
{
	if (rc == -2)
		snprintf(buf, len, "%s time '%s' is too large (at most 9223372036.854775807s)", opt,
			 arg);
	else
		snprintf(buf, len, "bad %s time '%s' (e.g. 1500, 1.5s, 20ms, 3us)", opt, arg);
	return buf;
}

int apc_parse_uint(const char *s, unsigned max, unsigned *v)
{
	char *end;
	unsigned long x;

	if (!*s || *s == '-')
		return -1;
	x = strtoul(s, &end, 10);
	if (*end || x > max)
		return -1;
	*v = (unsigned)x;
	return 0;
}

int apc_cli_version(const char *prog, const char *version)
{
	printf("%s (apctools) %s\n", prog, version);
	return apc_cli_stdout_done(prog, 0, 0);
}

int apc_cli_stdout_done(const char *prog, int status, int quiet)
{
	char why[160];
	int before = errno, e;

	errno = 0;
	if (fflush(stdout) == 0 && !ferror(stdout))
		return status;
	/* When an earlier write failed (the error flag is set) and this
	 * flush had nothing left to try, errno is still that write's, as
	 * nothing since failed. */
	e = errno ? errno : before ? before : EIO;
	if (!quiet && e != EPIPE)
		fprintf(stderr, "%s: stdout: cannot write: %s\n", prog, apc_strerror(e, why, sizeof why));
	return 2;
}

int apc_cli_try_help(const char *prog)
{
	fprintf(stderr, "Try '%s --help' for more information.\n", prog);
	return 2;
}

void apc_raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= rl.rlim_max)
		return;
	/* "unlimited" is more than the kernel takes (fs.nr_open): ask for
	 * its usual value then */
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY ? 1048576 : rl.rlim_max;
	(void)setrlimit(RLIMIT_NOFILE, &rl); /* a hint: fine if refused */
}

void apc_names_utf8(void)
{
	(void)setlocale(LC_CTYPE, "C.UTF-8"); /* none: the C locale stays */
}

const char *apc_input_name(const char *path)
{
	return strcmp(path, "-") == 0 ? "<stdin>" : path;
}

int apc_cli_refuse_tty(const char *prog, const char *path, int quiet)
{
	if (strcmp(path, "-") != 0 || !isatty(STDIN_FILENO))
		return 0;
	if (!quiet)
		fprintf(stderr, "%s: <stdin>: refusing to read binary data from a terminal\n", prog);
	return 1;
}

int apc_cli_stdin_twice(const char *prog, char *const *names, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += strcmp(names[i], "-") == 0;
	if (k < 2)
		return 0;
	fprintf(stderr, "%s: standard input (-) given as two inputs: it can be read once\n", prog);
	return 1;
}

int apc_progress_wanted(int forced, int quiet)
{
	if (forced >= 0)
		return forced;
	return isatty(STDERR_FILENO) && !quiet;
}

double apc_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Lock-free, so safe in a signal handler, and read by apcconv's reader
 * thread as well as the main one. */
static atomic_int util_interrupted;

void apc_interrupt(void)
{
	atomic_store_explicit(&util_interrupted, 1, memory_order_relaxed);
}

int apc_interrupted(void)
{
	return atomic_load_explicit(&util_interrupted, memory_order_relaxed);
}

void apc_catch_stop_signals(void (*handler)(int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

void apc_size_limit_errors(void)
{
	signal(SIGXFSZ, SIG_IGN);
}

int apc_env_flag(const char *name)
{
	const char *e = getenv(name);

	return e && *e && !(e[0] == '0' && e[1] == 0);
}

int apc_threads_allowed(void)
{
	cpu_set_t cpus;

	if (apc_env_flag("APC_NO_THREADS"))
		return 0;
	return !(sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) < 2);
}

size_t apc_utf8_len(const unsigned char *p, size_t n)
{
	unsigned c = p[0];
	size_t len, i;
	unsigned cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	/* Reject overlong forms, surrogates and values past U+10FFFF. */
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

void *apc_table_grow(void *tab, size_t *n, size_t elem, size_t need, size_t max)
{
	size_t cap = *n;
	unsigned char *nt;

	if (need <= cap)
		return tab;
	if (need > max || max > SIZE_MAX / elem)
		return NULL;
	cap = cap > max / 2 ? max : cap * 2;
	if (cap < need)
		cap = need < 16 && max >= 16 ? 16 : need;
	nt = realloc(tab, cap * elem);
	if (!nt)
		return NULL;
	memset(nt + *n * elem, 0, (cap - *n) * elem);
	*n = cap;
	return nt;
}

/* ---- scale.h ---------------------------------------------------------- */

static uint64_t scale_gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

void apc_scale_prep(struct apc_scale *s, uint64_t num, uint64_t den)
{
	uint64_t g = num ? scale_gcd(num, den) : den;
	uint64_t prod;

	s->num = num / g;
	s->den = den / g;
	s->inv = UINT64_MAX / s->den;
	s->wide = __builtin_mul_overflow(s->num, s->den, &prod);
}

char *apc_data_sibling(const char *path, const char *name)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	size_t dl = (size_t)(base - path), nl = strlen(name);
	char *p;

	if (strcmp(base, "0000000000") != 0 || !(p = malloc(dl + nl + 1)))
		return NULL;
	memcpy(p, path, dl);
	memcpy(p + dl, name, nl + 1);
	return p;
}

/* The length of the first of sfx[0..n) that s[0..len) ends with, 0 if none. */
static size_t suffix_of(const char *s, size_t len, const char *const *sfx, size_t n, int icase)
{
	for (size_t i = 0; i < n; i++) {
		size_t k = strlen(sfx[i]);
		if (len >= k && !(icase ? strncasecmp(s + len - k, sfx[i], k) : memcmp(s + len - k, sfx[i], k)))
			return k;
	}
	return 0;
}

size_t apc_archive_suffix(const char *out, size_t n)
{
	/* longest first: .tar.gz before .tar */
	static const char *const sfx[] = {".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz",
					  ".txz",    ".tar.zst", ".tzst", ".tar", ".zip"};

	return suffix_of(out, n, sfx, sizeof sfx / sizeof sfx[0], 1);
}

size_t apc_wrapper_suffix(const char *name, size_t n)
{
	/* what lib/input.c unwraps: gzip by itself, the rest through
	 * libarchive (case matters: .Z is compress, .z is not) */
	static const char *const sfx[] = {".gz",  ".tgz", ".bz2", ".tbz2", ".tbz", ".xz",  ".txz",
					  ".lzma", ".lz",  ".tlz", ".zst",  ".tzst", ".lz4", ".Z",
					  ".taz", ".tar", ".zip", ".cpio", ".7z"};

	return suffix_of(name, n, sfx, sizeof sfx / sizeof sfx[0], 0);
}

int apc_dot_name(const char *out, size_t n)
{
	const char *last;

	while (n > 1 && out[n - 1] == '/')
		n--;
	last = out + n;
	while (last > out && last[-1] != '/')
		last--;
	return (out + n - last == 1 && *last == '.') ||
	       (out + n - last == 2 && strncmp(last, "..", 2) == 0);
}

void apc_progress_init(struct apc_progress *p)
{
	p->start = p->last = apc_now();
	p->lines = !isatty(STDERR_FILENO);
	p->shown = 0;
}

int apc_progress_due(struct apc_progress *p, const char **pre, const char **end)
{
	double now = apc_now();

	if (now - p->last < (p->lines ? 5.0 : 0.25))
		return 0;
	p->last = now;
	*pre = p->lines ? "" : "\r";
	*end = p->lines ? "\n" : "\033[K"; /* on a terminal: erase what a longer line left */
	p->shown = !p->lines;
	return 1;
}

void apc_progress_clear(struct apc_progress *p)
{
	if (p->shown)
		fputs("\r\033[K", stderr);
	p->shown = 0;
}

/* 1 when dir/name is a plain file. */
static int apc_has_file(const char *dir, const char *name)
{
	struct stat st;
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = malloc(n);
	int yes;

	if (!p)
		return 0;
	snprintf(p, n, "%s/%s", dir, name);
	yes = lstat(p, &st) == 0 && S_ISREG(st.st_mode);
	free(p);
	return yes;
}

int apc_out_replaceable(const char *path, int folder, struct apc_err *err)
{
	struct stat st;

	if (lstat(path, &st) != 0)
		return APC_OK; /* nothing there; creating it says why if it cannot be */
	if (folder && !S_ISDIR(st.st_mode))
		return apc_err_set(err, APC_EIO, path, APC_NO_OFFSET,
				   "output exists and is not a folder: not replaced (remove it first)");
	if (folder && !apc_has_file(path, "captured.xml") && !apc_has_file(path, "0000000000"))
		return apc_err_set(err, APC_EIO, path, APC_NO_OFFSET,
				   "output exists and is not an .apc capture (no captured.xml, no "
				   "0000000000): not replaced (remove it first)");
	if (!folder && !S_ISREG(st.st_mode))
		return apc_err_set(err, APC_EIO, path, APC_NO_OFFSET,
				   "output exists and is not a file: not replaced (remove it first)");
	return APC_OK;
}

static int apc_rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(p) == 0 || errno == ENOENT ? 0 : -1;
}

int apc_remove_tree(const char *path)
{
	struct stat st;

	if (lstat(path, &st) != 0)
		return errno == ENOENT ? 0 : -1;
	return nftw(path, apc_rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

/* Under AddressSanitizer the pages come from calloc(), so that its
 * bounds and leak checks see them as they see any other block. */
#if defined(__SANITIZE_ADDRESS__)
#define APC_PAGES_MALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define APC_PAGES_MALLOC 1
#endif
#endif

void *apc_pages_alloc(size_t n)
{
#ifdef APC_PAGES_MALLOC
	return calloc(1, n);
#else
	int flags = MAP_PRIVATE | MAP_ANONYMOUS;
	void *p;

#ifdef MAP_POPULATE
	flags |= MAP_POPULATE;
#endif
	p = mmap(NULL, n, PROT_READ | PROT_WRITE, flags, -1, 0);
	return p == MAP_FAILED ? NULL : p;
#endif
}

void apc_pages_free(void *p, size_t n)
{
#ifdef APC_PAGES_MALLOC
	(void)n;
	free(p);
#else
	if (p)
		munmap(p, n);
#endif
}
