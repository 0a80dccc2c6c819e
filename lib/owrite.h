/*
 * owrite.h - a file written from a helper thread.
 *
 * The caller fills one buffer while a helper thread write(2)s the other,
 * so copying the bytes into the page cache (a quarter of apcconv's time
 * on a large Barman input) runs on a second core.  Order is kept: one
 * buffer is in flight at a time, and a direct write waits for it.
 *
 * Errors are sticky: the first failed write is reported (as -1 with
 * errno) by the next call that waits for the helper, and by every call
 * after it.  Signals are blocked in the helper, so SIGINT and SIGTERM
 * reach the caller's thread as before.
 *
 * APC_NO_THREADS=1 in the environment, a process allowed only one CPU,
 * or a thread that cannot be started, makes every write synchronous, on
 * the caller's thread: same bytes, same errors.
 */
#ifndef APC_OWRITE_H
#define APC_OWRITE_H

#include <stddef.h>
#include <stdint.h>

struct apc_owrite;

/* apc_owrite_new() : writer for fd (not owned, not closed) with buffers
 * of `size` bytes.  NULL when out of memory. */
struct apc_owrite *apc_owrite_new(int fd, size_t size);

/* apc_owrite_buf() : the buffer to fill next (`size` bytes), valid until
 * the next submit, direct write or free. */
uint8_t *apc_owrite_buf(struct apc_owrite *o);

/* apc_owrite_submit() : write the first len bytes of the buffer.  May
 * return before they are written; the next apc_owrite_buf() is the other
 * buffer.  0, or -1 with errno when this or an earlier write failed. */
int apc_owrite_submit(struct apc_owrite *o, size_t len);

/* apc_owrite_direct() : write p[0..n) now, after what was submitted. */
int apc_owrite_direct(struct apc_owrite *o, const void *p, size_t n);

/* apc_owrite_drain() : wait until everything submitted is written. */
int apc_owrite_drain(struct apc_owrite *o);

/* apc_owrite_threaded() : 1 when writes run on the helper thread. */
int apc_owrite_threaded(const struct apc_owrite *o);

/* apc_owrite_free() : stop the helper (waiting for its write) and free. */
void apc_owrite_free(struct apc_owrite *o);

#endif
