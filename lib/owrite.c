/*
 * owrite.c - a file written from a helper thread (see owrite.h).
 *
 * State shared with the helper, under `mu`: `busy` while buffer `job`
 * (`jlen` bytes) is being written, `err` the first errno, `quit` to stop.
 * The caller only touches the buffer the helper does not hold.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "owrite.h"
#include "util.h"

struct apc_owrite {
	int fd;
	size_t size;
	uint8_t *buf[2];
	int fill;      /* buffer the caller fills */
	int threaded;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	int busy, quit, err;
	int job;
	size_t jlen;
};

/* write(2) all of p; 0 or an errno. */
static int ow_write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t k = write(fd, p, n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return errno ? errno : EIO;
		}
		if (k == 0)
			return EIO;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

static void *ow_main(void *arg)
{
	struct apc_owrite *o = arg;

	pthread_mutex_lock(&o->mu);
	for (;;) {
		while (!o->busy && !o->quit)
			pthread_cond_wait(&o->work, &o->mu);
		if (!o->busy)
			break; /* quit with nothing in flight */
		int job = o->job;
		size_t len = o->jlen;
		int skip = o->err != 0; /* after a failure nothing more is written */
		pthread_mutex_unlock(&o->mu);
		int e = skip ? 0 : ow_write_all(o->fd, o->buf[job], len);
		pthread_mutex_lock(&o->mu);
		if (e && !o->err)
			o->err = e;
		o->busy = 0;
		pthread_cond_signal(&o->done);
	}
	pthread_mutex_unlock(&o->mu);
	return NULL;
}

struct apc_owrite *apc_owrite_new(int fd, size_t size)
{
	struct apc_owrite *o = calloc(1, sizeof *o);

	if (!o)
		return NULL;
	o->fd = fd;
	o->size = size;
	o->buf[0] = malloc(size);
	if (!o->buf[0]) {
		free(o);
		return NULL;
	}
	if (!apc_threads_allowed())
		return o;
	/* The second buffer and the helper are an optimisation: without
	 * them every write is synchronous, on this thread. */
	o->buf[1] = malloc(size);
	if (!o->buf[1])
		return o;
	if (pthread_mutex_init(&o->mu, NULL) != 0)
		goto sync;
	if (pthread_cond_init(&o->work, NULL) != 0) {
		pthread_mutex_destroy(&o->mu);
		goto sync;
	}
	if (pthread_cond_init(&o->done, NULL) != 0) {
		pthread_cond_destroy(&o->work);
		pthread_mutex_destroy(&o->mu);
		goto sync;
	}
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&o->th, NULL, ow_main, o);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		pthread_cond_destroy(&o->done);
		pthread_cond_destroy(&o->work);
		pthread_mutex_destroy(&o->mu);
		goto sync;
	}
	o->threaded = 1;
	return o;
sync:
	free(o->buf[1]);
	o->buf[1] = NULL;
	return o;
}

uint8_t *apc_owrite_buf(struct apc_owrite *o)
{
	return o->buf[o->fill];
}

int apc_owrite_threaded(const struct apc_owrite *o)
{
	return o->threaded;
}

/* Wait for the write in flight; the sticky error (0 if none).  Called
 * with the lock held. */
static int ow_wait(struct apc_owrite *o)
{
	while (o->busy)
		pthread_cond_wait(&o->done, &o->mu);
	return o->err;
}

static int ow_fail(struct apc_owrite *o, int e)
{
	if (!o->err)
		o->err = e;
	errno = o->err;
	return -1;
}

int apc_owrite_submit(struct apc_owrite *o, size_t len)
{
	int e;

	if (!o->threaded) {
		if (o->err)
			return ow_fail(o, o->err);
		e = len ? ow_write_all(o->fd, o->buf[0], len) : 0;
		return e ? ow_fail(o, e) : 0;
	}
	pthread_mutex_lock(&o->mu);
	e = ow_wait(o);
	if (!e && len) {
		o->job = o->fill;
		o->jlen = len;
		o->busy = 1;
		pthread_cond_signal(&o->work);
		o->fill ^= 1;
	}
	pthread_mutex_unlock(&o->mu);
	if (e) {
		errno = e;
		return -1;
	}
	return 0;
}

int apc_owrite_drain(struct apc_owrite *o)
{
	int e;

	if (!o->threaded)
		e = o->err;
	else {
		pthread_mutex_lock(&o->mu);
		e = ow_wait(o);
		pthread_mutex_unlock(&o->mu);
	}
	if (e) {
		errno = e;
		return -1;
	}
	return 0;
}

int apc_owrite_direct(struct apc_owrite *o, const void *p, size_t n)
{
	int e;

	if (apc_owrite_drain(o) != 0)
		return -1;
	e = ow_write_all(o->fd, p, n);
	if (!e)
		return 0;
	if (o->threaded) {
		pthread_mutex_lock(&o->mu);
		ow_fail(o, e);
		pthread_mutex_unlock(&o->mu);
		errno = e;
		return -1;
	}
	return ow_fail(o, e);
}

void apc_owrite_free(struct apc_owrite *o)
{
	if (!o)
		return;
	if (o->threaded) {
		pthread_mutex_lock(&o->mu);
		o->quit = 1;
		pthread_cond_signal(&o->work);
		pthread_mutex_unlock(&o->mu);
		pthread_join(o->th, NULL);
		pthread_cond_destroy(&o->done);
		pthread_cond_destroy(&o->work);
		pthread_mutex_destroy(&o->mu);
	}
	free(o->buf[0]);
	free(o->buf[1]);
	free(o);
}
