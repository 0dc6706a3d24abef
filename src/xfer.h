/* xfer.h - the host side of long transfers (core layer): a memcpy spread over the OpenMP threads
 * (the GPU variants' pinned staging buffers to and from the mesh arrays) and the progress line of a
 * long phase. */
#ifndef DPAMR_XFER_H
#define DPAMR_XFER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** memcpy(dst, src, n), in 1 MiB pieces over the OpenMP threads when n is 4 MiB or more. */
void xfer_copy(void *dst, const void *src, size_t n);

/** Progress of one phase: on a terminal one line rewritten in place ("download  3.21 of 9.60 GB
 *  12.3 GB/s  1 s left", at most every 0.1 s); otherwise (a log) a plain line every 10 s once the
 *  phase has run 5 s, and "(done)" at its end when one was printed; nothing when off. Phases:
 *  upload and download (the GPU variants, device/tile_store.cu), write (io/h5io_write.c), validate
 *  (the CPU validator, validation/valid.c). */
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

/* ---- streamed cells: the plan of pieces and their source ------------------------------------- */

/** One piece of a mesh's cells: field `field` of tiles [tile, tile + ntiles), all on level `level`. */
typedef struct {
    int level, field;
    int64_t tile, ntiles;
} xfer_piece_t;

/** The order in which a streamed write takes a mesh's cells (the writer's order, io/h5io_write.c:
 *  level by level, within a level field by field, within a field in runs of at most `tpp` tiles):
 *  the writer asks for the pieces in this order, and a source that fetches ahead (the GPU's pinned
 *  ring, device/tile_store.cu) walks the same plan. Levels without tiles have no pieces. */
typedef struct {
    int nlevels, nf;
    const int64_t *level_start; /* [nlevels + 1] */
    int64_t tpp;                /* tiles per piece (at least 1) */
    int L, f;                   /* the next piece's level and field */
    int64_t t;                  /* and its first tile */
} xfer_plan_t;

/** Tiles per piece of at most `piece` bytes for tiles of `cells` float32 cells (at least 1). */
int64_t xfer_tiles_per_piece(size_t piece, size_t cells);
/** Start a plan over levels [0, nlevels) of level_start (kept by pointer), nf fields, pieces of
 *  xfer_tiles_per_piece(piece, cells) tiles. */
void xfer_plan_init(xfer_plan_t *p, int nlevels, const int64_t *level_start, int nf, size_t cells, size_t piece);
/** The next piece into *out: 1, or 0 when the plan is done. */
int xfer_plan_next(xfer_plan_t *p, xfer_piece_t *out);

/** Where a streamed write takes the cells from: `get` gives field f of tiles [t, t + n) (the next
 *  piece of the plan of `piece` bytes, asked in the plan's order), a pointer valid until the next
 *  call, or NULL with the reason in err. The host's mesh arrays (xfer_host_src in h5io_write) or the
 *  device's store through pinned buffers. */
typedef struct xfer_src {
    const float *(*get)(struct xfer_src *s, int f, int64_t t, int64_t n, char *err, size_t errlen);
    size_t piece; /* bytes of a piece */
    void *ctx;
} xfer_src_t;

#ifdef __cplusplus
}
#endif
#endif
