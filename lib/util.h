/*
 * util.h - small helpers shared by the commands.
 */
#ifndef APC_UTIL_H
#define APC_UTIL_H

#include <stddef.h>
#include <stdint.h>

/*
 * apc_parse_time_ns() : "1500" (ns), "1.5s", "20ms", "3us", "7ns" ->
 * nanoseconds (no floating point), for --begin/--end.  Decimals are
 * allowed with any unit; a value finer than a nanosecond is rounded to
 * the nearest one, half up (5.0129215ms is 5012922, 1.5ns is 2).
 * Returns 0 on success (*ns at most INT64_MAX, the largest time a
 * capture holds), -1 if the text is not a time, -2 if it is one too
 * large for that (nothing stored on failure).
 * apc_time_error() : the message for `opt`'s value `arg` refused with
 * rc, the same in every command: "bad --begin time 'x' (e.g. ...)" or
 * "--end time 'x' is too large (at most 9223372036.854775807s)".
 */
int apc_parse_time_ns(const char *s, uint64_t *ns);
const char *apc_time_error(char *buf, size_t len, const char *opt, const char *arg, int rc);

/*
 * apc_parse_uint() : a whole number from 0 to max, in decimal, for an
 * option's value.  Returns 0 on success, -1 (nothing stored) if the text
 * is not one: empty, signed, trailing characters or over max.
 */
int apc_parse_uint(const char *s, unsigned max, unsigned *v);

/*
 * apc_progress_wanted() : whether a command shows progress on stderr:
 * `forced` is 1 or 0 from --progress / --no-progress, -1 when neither
 * was given, and then it is on when stderr is a terminal, unless quiet.
 */
int apc_progress_wanted(int forced, int quiet);

/*
 * apc_cli_version() : "PROG (apctools) VERSION" on stdout (the version
 * comes from the command: the cross-built tests compile this file
 * without APC_VERSION); returns the exit status, 0 unless stdout could
 * not take it (apc_cli_stdout_done()).
 * apc_cli_try_help() : the hint after getopt's own complaint, on
 * stderr; returns 2, the exit status of a usage error.
 */
int apc_cli_version(const char *prog, const char *version);
int apc_cli_try_help(const char *prog);

/*
 * apc_cli_stdout_done() : flush stdout and make sure all of it was
 * written: on a failure (a full disk, a closed pipe while SIGPIPE is
 * ignored) "PROG: stdout: cannot write: REASON" on stderr (nothing for a
 * closed pipe, which ends a run quietly, nor when quiet) and 2; else
 * `status`.  What every command returns after writing to stdout, its
 * --help, --version and lists included.
 */
int apc_cli_stdout_done(const char *prog, int status, int quiet);

/*
 * apc_names_utf8() : called first by every command: file names and
 * archive member names are taken as UTF-8 (LC_CTYPE C.UTF-8, where the
 * C library has it; nothing else of the locale changes).  libarchive
 * converts member names through LC_CTYPE, and in the C locale no byte
 * past ASCII converts: a capture named "my dump é.apc" could not be
 * archived, a zip stored the name unflagged (read back as cp437), and a
 * zip with UTF-8 names was not found to be a capture.
 */
void apc_names_utf8(void);

/*
 * apc_raise_nofile() : the soft limit on open files up to the hard one.
 * An annotate capture is one file per client connection, all read side
 * by side: 1100 streams stopped at "too many open files" under the
 * usual soft limit of 1024 when the hard one allowed far more.
 */
void apc_raise_nofile(void);

/* How much of an output's name its temporary siblings (.NAME.tmp-XXXXXX
 * and the like, beside it) take: the whole of a long name, legal
 * itself, would make theirs longer than a file name may be (255). */
#define APC_TMP_NAME_MAX 200

/* apc_input_name() : how messages name an input: "<stdin>" for "-",
 * else the path as given. */
const char *apc_input_name(const char *path);

/*
 * apc_cli_refuse_tty() : 1 when `path` is "-" and standard input a
 * terminal, after "PROG: -: refusing to read binary data from a
 * terminal" on stderr (unless quiet), in the words the input layer uses
 * for apcdump: binary input cannot be typed, and waiting for it would
 * look like a hang.  0 otherwise.
 */
int apc_cli_refuse_tty(const char *prog, const char *path, int quiet);

/*
 * apc_cli_stdin_twice() : 1 when "-" is among names[0..n) more than once,
 * after "PROG: standard input (-) given as two inputs: it can be read
 * once" on stderr: the first reader would take it all and the next see
 * an empty input.  0 otherwise.
 */
int apc_cli_stdin_twice(const char *prog, char *const *names, size_t n);

/*
 * apc_interrupt() : note that the user asked to stop (async-signal-safe;
 * called from SIGINT/SIGTERM handlers).  apc_interrupted() tells long
 * loops and blocking reads to give up; reads interrupted by the signal
 * then fail instead of retrying.
 */
void apc_interrupt(void);
int apc_interrupted(void);

/*
 * apc_catch_stop_signals() : run handler on SIGINT, SIGTERM and SIGHUP (a
 * closed terminal or ssh session), without SA_RESTART, so that a read,
 * accept() or wait blocked at the time returns and the loop around it
 * sees the request to stop.
 */
void apc_catch_stop_signals(void (*handler)(int));

/*
 * apc_size_limit_errors() : past a file size limit (ulimit -f) a write
 * then fails with EFBIG, which the commands report (or a temporary copy
 * of an archive gives up on), instead of SIGXFSZ killing the process.
 */
void apc_size_limit_errors(void);

/*
 * apc_utf8_len() : length (1..4) of the valid UTF-8 sequence at p[0..n),
 * or 0 if it is not one (overlong forms, surrogates and values past
 * U+10FFFF are invalid).
 */
size_t apc_utf8_len(const unsigned char *p, size_t n);

/* Monotonic wall time in seconds, for elapsed-time figures. */
double apc_now(void);

/* apc_env_flag() : 1 when environment variable `name` is set to
 * anything but "" or "0" (APC_NO_SIMD=1, APC_NO_THREADS=1). */
int apc_env_flag(const char *name);

/*
 * apc_threads_allowed() : 1 when work may go to a helper thread: not
 * APC_NO_THREADS=1, and the process may run on two CPUs or more (under
 * taskset -c 0 a second thread could only take turns with the first).
 */
int apc_threads_allowed(void);

/*
 * APC_ZERO(p) : zero the struct *p.  GCC compiles one memset() of a
 * struct of more than about 128 bytes to rep stosq, whose start-up cost
 * showed in the readers' profiles (a tenth of Barman's decoding, a
 * quarter of the TPTP binary parser); 32-byte pieces of constant size
 * compile to plain vector stores.
 */
static inline void apc_zero_pieces(void *p, size_t n)
{
	char *c = p;
	size_t i;

	for (i = 0; i + 32 <= n; i += 32)
		__builtin_memset(c + i, 0, 32);
	__builtin_memset(c + i, 0, n - i);
}
#define APC_ZERO(p) apc_zero_pieces((p), sizeof *(p))

/*
 * apc_pages_alloc() : n bytes of zeroed memory, mapped and faulted in by
 * one system call (MAP_POPULATE), for a large table that will be written
 * all over at once.  Touching fresh memory page by page costs one fault
 * per 4 KiB, several microseconds each on a virtual machine.  NULL when
 * out of memory.  apc_pages_free() takes the same n.
 */
void *apc_pages_alloc(size_t n);
void apc_pages_free(void *p, size_t n);

/*
 * apc_table_grow() : grow a table of *n elements of `elem` bytes, new
 * ones zeroed, so that it holds at least `need` (at most `max`):
 * doubling, so an index climbing a few at a time (External fds, say)
 * does not copy the table every time.  Returns the table, moved or not,
 * with *n updated; NULL (the table and *n untouched) when need > max or
 * memory runs out.
 */
void *apc_table_grow(void *tab, size_t *n, size_t elem, size_t need, size_t max);

/*
 * apc_data_sibling() : for the path of a capture's data file given on
 * its own ("cap.apc/0000000000"), the path of the capture's file `name`
 * beside it ("cap.apc/captured.xml"), malloc'd; NULL when the path does
 * not name a file 0000000000 (stdin "-", "trace.bin") or memory runs
 * out.  apcconv, apcdump and apcverify read a bare data file with the
 * XML it has beside it, as they read the folder.
 */
char *apc_data_sibling(const char *path, const char *name);

/*
 * apcconv's output-name rules, for the commands that write a capture:
 * apc_archive_suffix() : the length of the archive extension out[0..n)
 * ends with, in any case (.tar.gz, .tgz, .tar.bz2, .tbz2, .tar.xz,
 * .txz, .tar.zst, .tzst, .tar, .zip), 0 if none.  apc_dot_name() : 1 when the last
 * component of out[0..n) (trailing slashes ignored) is "." or "..",
 * a folder there is and no capture name ("not a usable output name").
 */
size_t apc_archive_suffix(const char *out, size_t n);
int apc_dot_name(const char *out, size_t n);

/*
 * apc_wrapper_suffix() : the length of the compression or archive
 * extension name[0..n) ends with, of those the input side unwraps (.gz,
 * .tgz, .bz2, .xz, .lzma, .lz, .zst, .lz4, .Z, .tar, .zip, .cpio, .7z,
 * their short tar forms...), 0 if none.  Default output names peel them;
 * an output name ending in one apc_archive_suffix() does not know is
 * refused rather than taken for a folder name.
 */
size_t apc_wrapper_suffix(const char *name, size_t n);

/*
 * apc_out_replaceable() : what --overwrite may replace at path: nothing
 * (no such file), a folder that is an .apc capture (it holds a
 * captured.xml or a 0000000000 file, and whatever Streamline added) when
 * the output is a folder (folder != 0), a plain file when it is an
 * archive.  Anything else (a folder of other files, a file where a
 * folder goes) is refused, so a mistyped -o never removes what no
 * apctools command wrote.  APC_OK, or APC_EIO with err naming path.
 */
struct apc_err;
int apc_out_replaceable(const char *path, int folder, struct apc_err *err);

/* apc_remove_tree() : remove a file, or a folder and all it holds
 * (symbolic links themselves, never what they point to): 0, or -1 with
 * errno.  Nothing there is success. */
int apc_remove_tree(const char *path);

/*
 * Progress on stderr, paced the same way by every command: on a terminal
 * one line redrawn in place ("\r" before it, erase-to-end-of-line after
 * it) at most every 0.25 s; into a
 * log or pipe (--progress when stderr is not a terminal) a whole line
 * ("\n" after it) every 5 s, with no escape sequences.
 * apc_progress_init() : start now.  apc_progress_due() : 1 when a line is
 * due, with *pre and *end to print around it.  apc_progress_clear() :
 * erase a line left on the terminal, before the summary.
 */
struct apc_progress {
	double start, last;
	int lines; /* stderr is not a terminal: whole lines */
	int shown; /* a line is on the terminal */
};
void apc_progress_init(struct apc_progress *p);
int apc_progress_due(struct apc_progress *p, const char **pre, const char **end);
void apc_progress_clear(struct apc_progress *p);

#endif
