/* xfer.h - the host side of long transfers (core layer): a memcpy spread over the OpenMP threads
 * (the GPU variants' pinned staging buffers to and from the mesh arrays) and the progress line of a
 * long phase. */
#ifndef DPAMR_XFER_H
#define DPAMR_XFER_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** memcpy(dst, src, n), in 1 MiB pieces over the OpenMP threads when n is 4 MiB or more. */
void xfer_copy(void *dst, const void *src, size_t n);

/** Progress of one phase: on a terminal one line rewritten in place ("download  3.21 of 9.60 GB
 *  12.3 GB/s  1 s left", at most every 0.1 s); otherwise (a log) a plain line every 10 s once the
 *  phase has run 5 s, and "(done)" at its end when one was printed; nothing when off. Phases:
 *  upload and download (the GPU variants, device/tile_store.cu), write (io/h5io_write.c). */
typedef struct {
    int on;           /* 0: silent */
    int tty;          /* stdout is a terminal */
    int bytes;        /* 1: amounts are bytes (shown in GB, rate in GB/s); 0: counts of `unit` */
    const char *phase, *unit;
    double total;     /* the amount when done (0: unknown) */
    double done;
    double t0, shown; /* ms: start, last line */
    int drawn;        /* a terminal line is on screen, not yet ended */
    int now;          /* DPAMR_TEST_PROGRESS_NOW (tests): a line at every update, from the start */
} progress_t;

/** Start a phase. on = 0 makes every call a no-op. unit names counts ("levels"); NULL for bytes. */
void progress_begin(progress_t *p, int on, const char *phase, double total, const char *unit);
/** The amount done so far (prints at most every 0.1 s on a terminal). */
void progress_update(progress_t *p, double done);
/** The phase ended: a terminal line is completed and ended; a plain line only if one was printed. */
void progress_end(progress_t *p);
/** The phase failed: a terminal line on screen is ended (the error follows on a line of its own);
 *  nothing is printed in a log. */
void progress_fail(progress_t *p);

#ifdef __cplusplus
}
#endif
#endif
