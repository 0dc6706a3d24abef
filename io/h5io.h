/* h5io.h - HDF5 files: VTKHDF OverlappingAMR for ParaView plus the project's /dpamr group.
 * The layout is documented in docs/format.md. */
#ifndef DPAMR_H5IO_H
#define DPAMR_H5IO_H

#include <stddef.h>
#include <stdint.h>
#include "src/mesh.h"
#include "src/xfer.h"
#include "validation/valid.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One row of the per-rank table of a run (one row for a run without MPI). */
typedef struct {
    int32_t rank;
    int32_t device;          /* CUDA device the rank used, -1 for the CPU variant */
    int64_t root_tiles;      /* root tiles the partition gave the rank */
    int64_t tiles, cells;    /* tiles and cells the rank owns after refinement */
    double refine_ms;        /* the engine's refinement time on the rank */
    double write_ms;         /* the rank's part of writing the file (gather and, on rank 0, the write
                                until this table is stored) */
} h5io_rank_t;

/** What a run records beside the mesh (written as attributes and small datasets under /dpamr). */
typedef struct {
    const char *deck_text;   /* stored as /dpamr/deck */
    const char *variant;     /* engine that built the mesh: cpu, cdp, host, mesh (level 0 only) */
    const char *version;     /* dpamr version string */
    int pdl;                 /* 1 on, 0 off */
    double load_ms, refine_ms, validate_ms;
    int nlevels_timed;
    double level_ms[DP_MAX_LEVELS];
    long long device_launches, launch_failures, pool_size; /* -1 where not applicable */
    const valid_report_t *valid; /* may be NULL (then no /dpamr/validation group) */
    double upload_ms, download_ms; /* GPU transfers (0 on the cpu) */
    double total_ms;             /* the run from start until the write began */
    const char *commit, *build, *compiler, *cuda, *device_name, *host, *date; /* NULL: not written */
    int threads;                 /* OpenMP threads (0: not written) */
    int nranks;                  /* rows of ranks (0: no /dpamr/provenance/ranks table) */
    const h5io_rank_t *ranks;
    int has_step;                /* 1: a time step's file: /dpamr@step and /dpamr@time are written */
    long long step;              /* the step index */
    double time;                 /* its time, step * dt */
    int progress;                /* 1: a progress line for a long write (xfer.h; not stored in the file) */
} h5io_meta_t;

/** Write m to path through a temporary file in the same directory, renamed on success.
 *  Returns 0, or -1 with a message in err (no file left behind, an older file intact). */
int h5io_write(const char *path, const mesh_t *m, const h5io_meta_t *meta, char *err, size_t errlen);

/** Call first, before any other h5io call: HDF5 gets no exit handler. Every file is closed by the
 *  code that opened it; where a close fails in its flush (a full disk), HDF5 1.10 keeps a
 *  half-closed file whose second close, by its exit handler, crashes the process after the error
 *  message (SIGSEGV in H5F__close_cb; seen in tests/disk_full.sh). */
void h5io_init(void);

/** h5io_write in steps, for a write whose cells arrive while it runs (a GPU run streams them from
 *  the device, device/tile_store.cu) and whose validation report comes after them: open (the
 *  checks, the temporary file PATH.tmp.PID), cells (/VTKHDF: every level's boxes, cells and ghost
 *  array, the cells taken from src in the order of its plan, xfer.h; src NULL: from m's arrays),
 *  finish (/dpamr with meta's provenance and validation, close, rename onto path; on failure the
 *  temporary file is removed) or abort (remove the temporary file). m's tile arrays and level index
 *  must stay as at open; its field arrays are read only when src is NULL. The file's bytes are
 *  h5io_write's for any source. finish and abort free the handle. 0, or -1 with err. */
typedef struct h5io_out h5io_out_t;
int h5io_out_open(const char *path, const mesh_t *m, int progress, h5io_out_t **o, char *err, size_t errlen);
int h5io_out_cells(h5io_out_t *o, const mesh_t *m, xfer_src_t *src, char *err, size_t errlen);
int h5io_out_finish(h5io_out_t *o, const mesh_t *m, const h5io_meta_t *meta, char *err, size_t errlen);
void h5io_out_abort(h5io_out_t *o);

/** Where one MPI rank's part goes in a file written collectively (h5io_write_dist). */
typedef struct {
    const void *comm;                        /* the MPI_Comm (a pointer to it) of the writing ranks */
    int nlevels;                             /* global levels */
    dp_tidx level_start[DP_MAX_LEVELS + 1];  /* global level index */
    dp_tidx offset[DP_MAX_LEVELS];           /* the part's first row within each global level */
    const int64_t *parent;                   /* the part's parents as global indices, in its order */
} h5io_dist_t;

/** 1 when this HDF5 library has parallel I/O, so h5io_write_dist can be used. */
int h5io_parallel(void);

/** Collective: every rank of dist->comm writes its part into one file with parallel HDF5 (MPI-IO),
 *  through a temporary file renamed by rank 0 when every rank succeeded. The datasets are those
 *  h5io_write writes for the whole mesh; meta must be the same on every rank. Returns 0 on every
 *  rank, or -1 on every rank with the lowest failing rank's message (no file left behind). */
int h5io_write_dist(const char *path, const mesh_t *part, const h5io_dist_t *dist, const h5io_meta_t *meta, char *err,
                    size_t errlen);

/** What h5io_read returns for a file that opens as a dpamr file (it has a /dpamr group) but whose
 *  content is not what the format says (a missing, damaged or inconsistent object): `dpamr check`
 *  reports it as a failed check (exit 2), not as a file it cannot read. */
#define H5IO_BAD_CONTENT (-2)

/** What the readers return for a file with a dataset stored with an HDF5 filter (compression) that
 *  this HDF5 library lacks, and finds no plugin for: err names the dataset and the filter. The
 *  file cannot be read here, which says nothing of its content: `dpamr check` exits 1 (the file
 *  could not be checked), not 2 (a difference). */
#define H5IO_NO_FILTER (-3)

/** Read the /dpamr group of path into m (allocated here, capacity = number of tiles).
 *  If deck_text is not NULL it receives a malloc'd copy of /dpamr/deck (or NULL if absent).
 *  Every layout, shape, dtype, consistency and NaN/Inf problem is an error naming the file,
 *  the object and what was expected; every declared size is checked against the datasets' real
 *  shapes and the machine's memory before anything is allocated. Returns 0, -1 (the file cannot
 *  be opened as a dpamr file), H5IO_BAD_CONTENT or H5IO_NO_FILTER. */
int h5io_read(const char *path, mesh_t *m, char **deck_text, char *err, size_t errlen);

/** h5io_read in steps, for a caller that works on the cells as they arrive (`dpamr check`).
 *  h5io_read_open does all that h5io_read does but read the cells: the header, the tile tree and
 *  the boxes with every check of them, and the deck; m is allocated with its tiles set and its
 *  fields not yet filled. It is h5io_read_begin (the header and the level index read and checked, m
 *  allocated for its tiles, nothing of them read) followed by h5io_read_tree (the rest; on failure
 *  the deck text is freed, and the caller closes the reader and frees m). h5io_read_plan (optional,
 *  any time after h5io_read_begin) looks up where each level's cells lie and checks their shapes;
 *  it returns 1 when h5io_read_cells will make no HDF5 call (the cells stored as dpamr writes them,
 *  in a file on disk: read straight from the file), 0 when it will, or H5IO_BAD_CONTENT.
 *  h5io_read_cells then reads the cells level by level in pieces of 8 to 64 MiB, checks every value
 *  finite, and calls ready(ctx, tiles) (when ready is not NULL) from its reading threads, one call at
 *  a time with a growing count: the cells of tiles [0, tiles) are in m, for good. It may run on
 *  another thread than the open; no other HDF5 call may run meanwhile (the library is not
 *  thread-safe) unless h5io_read_plan returned 1. Then it may also start before h5io_read_tree,
 *  which then runs alongside it (the cells need only the level index): a failure of the cells is
 *  put in words once the tree is in, and when the tree fails the cells stop soon and fail with no
 *  message of their own, as they do after h5io_read_stop (the caller wants no more of them: a
 *  failure found elsewhere). Such a caller must call h5io_read_tree or h5io_read_stop: a failed
 *  read of the cells waits for one of them before it ends. They return 0, -1, H5IO_BAD_CONTENT or
 *  H5IO_NO_FILTER (as h5io_read) with err set; after a failed open or begin m is freed and there is
 *  nothing to close, after a failed h5io_read_tree, h5io_read_plan or h5io_read_cells the caller frees m. h5io_read_close closes the file (any time
 *  after a successful open or begin, once h5io_read_cells has returned). */
typedef struct h5io_reader h5io_reader_t;
typedef void (*h5io_ready_fn)(void *ctx, dp_tidx tiles);
int h5io_read_open(const char *path, mesh_t *m, char **deck_text, h5io_reader_t **rd, char *err, size_t errlen);
int h5io_read_begin(const char *path, mesh_t *m, h5io_reader_t **rd, char *err, size_t errlen);
int h5io_read_tree(h5io_reader_t *rd, char **deck_text);
void h5io_read_stop(h5io_reader_t *rd);
int h5io_read_plan(h5io_reader_t *rd);
/** After h5io_read_plan returned 1: 1 when the tile tree (/dpamr/tiles) and every AMRBox lie before
 *  all the cells in the file, as dpamr writes them, so that the tree read alongside the cells is
 *  the head of one front-to-back stream; 0 otherwise (a file of an earlier dpamr, its tree last). */
int h5io_read_head_first(const h5io_reader_t *rd);
/** The threads h5io_read_cells reads with when it makes no HDF5 call (its look-ahead thread included):
 *  what a caller working alongside it leaves them. */
int h5io_read_threads(void);
int h5io_read_cells(h5io_reader_t *rd, h5io_ready_fn ready, void *ctx);
void h5io_read_close(h5io_reader_t *rd);
/** /VTKHDF against the tiles read, as h5io_verify compares it (on the reader's open file), with its
 *  own message buffer: after h5io_read_open, on any one thread while no other HDF5 call runs (while
 *  h5io_read_cells runs when h5io_read_plan returned 1; it needs no cell of a version-2 file). 0, or
 *  H5IO_BAD_CONTENT with the first difference in err (H5IO_NO_FILTER: a dataset it cannot read). */
int h5io_read_vtkhdf(h5io_reader_t *rd, char *err, size_t errlen);
/** How h5io_read_cells read the cells: its wall time, and the reading threads' time in reads and
 *  value tests (summed over them) and their number (0 when the cells were read through HDF5). */
typedef struct {
    double ms, read_ms;
    int threads;
} h5io_read_stats_t;
void h5io_read_stats(const h5io_reader_t *rd, h5io_read_stats_t *s);

/** Everything else the file claims, against m as h5io_read gave it and v as valid_check computed
 *  it from m: /dpamr/validation (every recorded value, bit for bit: passed, nfail, first_failure,
 *  conservation, tree and total hashes, per-level tiles, checksum_sum and checksum_hash),
 *  /dpamr/provenance (present; in a refinement output the rank table accounts for every tile) and
 *  /VTKHDF (Version, Type, Origin, and per level Spacing, AMRBox, every CellData field bit for bit,
 *  vtkGhostType, PointData, FieldData; no extra level). Returns 0, or -1 with the first difference
 *  (object, level, tile, cell) in err (H5IO_NO_FILTER: a dataset it cannot read); 1 for a
 *  format-version-1 file that passed everything but its checksums (checksum_sum, checksum_hash, tree
 *  and total hash), which were recorded with the definition before the GPU validator and are not
 *  compared (its two copies of the cells are). */
int h5io_verify(const char *path, const mesh_t *m, const valid_report_t *v, char *err, size_t errlen);
/** h5io_verify without /VTKHDF (h5io_read_vtkhdf compares it): /dpamr/validation and provenance. */
int h5io_verify_records(const char *path, const mesh_t *m, const valid_report_t *v, char *err, size_t errlen);

/** h5io_read and h5io_verify of an HDF5 file image: the n bytes at image, opened in memory as the
 *  file `name` (for messages); nothing is read from or written to disk (the fuzz targets use them). */
int h5io_read_image(const void *image, size_t n, const char *name, mesh_t *m, char **deck_text, char *err,
                    size_t errlen);
int h5io_verify_image(const void *image, size_t n, const char *name, const mesh_t *m, const valid_report_t *v,
                      char *err, size_t errlen);

/** The raw data bytes of a file of ntiles tiles shaped like m: a lower bound on its size (the free
 *  space h5io_write asks for). */
double h5io_raw_bytes(const mesh_t *m, dp_tidx ntiles);

/** The time step a file of a series holds: /dpamr@step and /dpamr@time, written by a run with
 *  steps > 0. 1 with *step and *time set, 0 when the file has no /dpamr@step (not a step's file),
 *  -1 with err when it cannot be read or the attributes are malformed. deck_text (optional): with
 *  1, a malloc'd copy of the step's /dpamr/deck (NULL when it has none); the caller frees it. */
int h5io_read_step(const char *path, long long *step, double *time, char **deck_text, char *err, size_t errlen);

/** Nonzero when path is an HDF5 file dpamr wrote (in either layout: format version 1 or 2;
 *  /dpamr/provenance with its version and variant, and /dpamr/deck): 1 for a run's output (a
 *  refinement or a time step), 2 for a level-0 mesh of `dpamr mesh` (variant "mesh"); 0 for anything
 *  else (absent, not HDF5, another tool's, an HDF5 format dpamr does not read, a damaged object
 *  header on the way), with what the file is in what (n bytes; a phrase that follows "PATH exists
 *  and ...", e.g. "was not written by dpamr (...)"). */
int h5io_is_dpamr_output(const char *path, char *what, size_t n);
/** Does path carry any trace of dpamr: /dpamr/deck or /dpamr/provenance (1), neither (0), or can it
 *  not be told (-1: unreadable, an HDF5 format dpamr does not open, a damaged header on the way)?
 *  `dpamr check` tells a damaged dpamr file (exit 2) from another program's file (exit 1) by it. */
int h5io_dpamr_trace(const char *path);

#ifdef __cplusplus
}
#endif
#endif
