/* h5io_internal.h - what the files of io/ share; not part of the API (that is h5io.h).
 *
 *   h5io_common.c      handle and message helpers; the /VTKHDF layout derived from the tiles (boxes,
 *                      ghost cells, levels shown), which the writer writes and the check compares
 *   h5io_write.c       the writer (h5io_write): one traversal of the layout, serial or collective
 *   h5io_collective.c  the collective MPI-IO write (h5io_write_dist), built with a parallel HDF5
 *   h5io_read.c        the loader (h5io_read), the check of a whole file (h5io_verify) and
 *                      h5io_is_dpamr_output
 *
 * Every function that opens HDF5 handles closes them itself, on every path (goto done). HDF5's
 * automatic error printing is switched off: callers get one message in err. The helpers shared
 * across files are named h5i_* (the small ones) and w_* (the writer's steps and its layout). */
#ifndef DPAMR_H5IO_INTERNAL_H
#define DPAMR_H5IO_INTERNAL_H

#include "io/h5io.h"

#include <hdf5.h>
#include "src/xfer.h" /* progress_t: the write's progress line */
#ifdef H5_HAVE_PARALLEL
#include "src/agree.h" /* dp_agree: the one agreement helper, shared with src/dist.c */
#endif
#ifdef DPAMR_HAVE_ZLIB
#include <zlib.h> /* vtkGhostType's chunks: deflated by the writer, inflated by the check */
#endif

#ifdef _OPENMP
#define OMP_PRAGMA(x) _Pragma(#x)
#else
#define OMP_PRAGMA(x)
#endif

#define FORMAT_NAME "dpamr-mesh"
#define FORMAT_VERSION 2    /* written: the cells in /VTKHDF only (docs/format.md) */
#define FORMAT_VERSION_V1 1 /* read too: the tile arrays and a second copy of the cells in /dpamr */
#define GHOST_CHUNK (1 << 18) /* vtkGhostType: cells per chunk (256 KiB; docs/results.md, File layout) */
#define GHOST_DEFLATE 1       /* and its deflate level */
#define GHOST_CONTIG_MAX 4096 /* a vtkGhostType of at most this many cells is stored contiguous */
#define GHOST_HIDDEN 32 /* vtkDataSetAttributes::HIDDENCELL */
/** A cell's vtkGhostType from its tile's childmask cm and the cell's octant: hidden where a child
 *  covers it (the writer's value, and what the check expects). */
static inline uint8_t h5i_ghost(unsigned cm, uint8_t oct) { return (cm >> oct & 1u) ? GHOST_HIDDEN : 0; }

/* ---- small helpers (h5io_common.c) -------------------------------------------------------- */

/** Close any HDF5 handle (ignores invalid ids). */
void h5i_close(hid_t id);
/** Format a message into err (never overflows, always terminated). */
void h5i_seterr(char *err, size_t errlen, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/** The innermost HDF5 error description (or a generic text) in buf (200 bytes); clears the error
 *  stack. Call it right after the failing call: any later HDF5 call (even a close) empties the stack. */
const char *h5i_reason(char *buf);
/** Room to flush file f's metadata (written to tmp, for path): the metadata cache's contents (an
 *  upper bound of what is left to write) and 8 KiB besides free on tmp's file system. 0, or -1 with
 *  the message. A flush that fails on a full disk breaks HDF5 1.10's metadata cache: every later
 *  flush or close of the file fails, and closing it again (its exit handler, MPI_Finalize) crashes. */
int h5i_metadata_room(hid_t f, const char *tmp, const char *path, char *err, size_t errlen);
/** Full HDF5 path of loc/name (name NULL: of loc), for messages. */
void h5i_obj_path(hid_t loc, const char *name, char *out, size_t n);
/** Is a field name usable as an HDF5 link name and in the space-separated list? */
int h5i_name_ok(const char *s);
/** The memory type of a row of /dpamr/provenance/ranks: h5io_rank_t as the compiler lays it out. */
hid_t h5i_rank_mtype(void);

/* ---- the writer's context and the /VTKHDF layout (h5io_common.c) --------------------------- */

/** Write context: the destination (for messages), the error buffer, and where this process's tiles
 *  go. Writing alone (h5io_write), nlevels, level_start and parent are the mesh's own and offset[]
 *  is 0. In a collective write (h5io_write_dist) they are the global ones and every rank writes its
 *  rows of each per-tile dataset. */
typedef struct {
    const char *path;
    char *err;
    size_t errlen;
    int par;                   /* 1: collective parallel-HDF5 write */
    int verify;                /* 1: the read-back pass (see h5io_write_dist): open and compare */
    int rank;                  /* MPI rank (0 without MPI): rank 0 writes the small datasets */
    hid_t dxpl;                /* data transfer list (collective when par) */
    int nlevels;               /* global levels */
    const dp_tidx *level_start;/* global level index [nlevels + 1] */
    const dp_tidx *offset;     /* this process's first row within each global level */
    const int64_t *parent;     /* parents as global indices, in local order */
    progress_t *pg;            /* NULL, or the write's progress (serial write: bytes of cells) */
    double pg_done;            /* the bytes of cells written so far */
    xfer_src_t *src;           /* serial write: where the cells come from (NULL: the mesh's arrays, in one
                                  H5Dwrite per dataset: the collective write) */
    int src_f;                 /* the field being written (w_fields), -1 for other datasets */
    dp_tidx src_t0;            /* and its level's first tile */
    size_t src_cells;          /* cells per tile */
#ifdef H5_HAVE_PARALLEL
    MPI_Comm comm;             /* the writing ranks (when par) */
#endif
} wctx;

/** Scratch buffers of the /VTKHDF writer, allocated before the file is created (so that in a
 *  collective write no rank can fail alone in the middle of it). */
typedef struct {
    int32_t *box;
    uint8_t *ghost, *oct;
} wbuf;

/** Tiles [*s, *e) of m on level L (empty when the part has no such level). */
void w_lrange(const mesh_t *m, int L, dp_tidx *s, dp_tidx *e);
/** Fill AMRBox rows [ilo,ihi,jlo,jhi,klo,khi] for tiles [s,e). -1 when an index passes int32. */
int w_boxes(const mesh_t *m, dp_tidx s, dp_tidx e, int32_t *box);
/** Fill vtkGhostType for tiles [s,e): 32 on cells whose octant has a child (oct: w_buf_alloc's). */
void w_ghost(const mesh_t *m, dp_tidx s, dp_tidx e, const uint8_t *oct, uint8_t *g);
/** The same for cells [c0, c1) of the tiles from s on (cell 0 is tile s's first) into g[0, c1 - c0). */
void w_ghost_cells(const mesh_t *m, dp_tidx s, size_t c0, size_t c1, const uint8_t *oct, uint8_t *g);
/** 1 when the writer makes and deflates a chunked vtkGhostType itself, chunk by chunk in parallel
 *  (a serial write, not a read-back, with zlib), so that no level-sized buffer is needed. */
int w_ghost_direct(const wctx *c);
/** Each cell's octant within its tile (mesh_cells(m) bytes): what w_ghost compares childmask with. */
void w_octants(const mesh_t *m, uint8_t *oct);
/** Tiles in the largest level (sizes the scratch buffers). */
dp_tidx w_max_level_tiles(const mesh_t *m);
/** Levels written to /VTKHDF (c->nlevels without its trailing empty levels; at least 1). */
int w_vtk_levels(const wctx *c);
/** Allocate the scratch buffers and check that every AMRBox index fits int32. 0, or -1 with err. */
int w_buf_alloc(wctx *c, const mesh_t *m, wbuf *b);
void w_buf_free(wbuf *b);

/* ---- the writer's steps the collective writer takes too (h5io_write.c) ---------------------- */

/** Add to a read-back failure what it means. Always returns -1. */
int w_lost(wctx *c);
/** Checks that keep the writer from reading out of bounds or writing an unusable layout. */
int w_check_mesh(wctx *c, const mesh_t *m);
/** Before the file is made: the directory of path takes a new file and has room for bytes. */
int w_room(const char *path, const char *tmp, double bytes, char *err, size_t errlen);
/** Only a regular file (or nothing) may be replaced at path. 0, or -1 with err set. */
int w_target_ok(const char *path, char *err, size_t errlen);
/** The file format written (HDF5 1.8 to 1.10: checksummed metadata). 0 or -1. */
int w_format(hid_t fapl);
/** Create the temporary file; message with errno when the system refused it. */
hid_t w_create(wctx *c, const char *tmp, hid_t fapl, int *taken);
/** The /VTKHDF group with /dpamr's tree (first in the file: the tree and every level's AMRBox, then
 *  the cells), and then the rest of the /dpamr group (meta's provenance, deck and validation). In
 *  the read-back pass (c->verify) the same traversal opens and compares instead of creating. */
int w_vtkhdf(wctx *c, hid_t file, const mesh_t *m, wbuf *b);
int w_dpamr(wctx *c, hid_t file, const mesh_t *m, const h5io_meta_t *mt);

#endif
