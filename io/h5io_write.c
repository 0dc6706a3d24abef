/* h5io_write.c - the writer: VTKHDF OverlappingAMR (for ParaView 5.11) plus the /dpamr group.
 *
 * Layout: docs/format.md. Writing goes to PATH.tmp.PID, renamed onto PATH on success. Object time
 * stamps are off, so the same content gives the same bytes. Run timings are attributes: datasets of
 * two runs of one deck are identical. One traversal (w_vtkhdf, w_dpamr) serves the serial write,
 * the collective write (h5io_collective.c: every rank its rows) and its read-back (c->verify). */
#define _GNU_SOURCE /* memfd_create (h5io_out_abort) */
#include "io/h5io_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "src/tmpfile.h"

/* vtkGhostType chunks made and deflated together by w_ghost_chunks (64 x 256 KiB, twice) */
#define GHOST_BATCH 64

/** Record an HDF5 failure on object loc/name, right after the failing call (see h5i_reason).
 *  Always returns -1. */
static int w_fail(wctx *c, hid_t loc, const char *name, const char *what)
{
    char where[600], why[200];
    h5i_reason(why); /* first: h5i_obj_path's own HDF5 call would empty the error stack */
    h5i_obj_path(loc, name, where, sizeof where);
    h5i_seterr(c->err, c->errlen, "cannot write %s: %s %s failed (%s)", c->path, what, where, why);
    return -1;
}

/** Add to a read-back failure what it means. Always returns -1. */
int w_lost(wctx *c)
{
    const size_t k = c->err ? strlen(c->err) : 0;
    if (c->err && k + 1 < c->errlen)
        h5i_seterr(c->err + k, c->errlen - k, "; the write was reported as done, so the MPI-IO layer lost data (Open MPI "
                                              "4's OMPIO does on a full disk; its ROMIO reports it: mpirun --mca io romio321)");
    return -1;
}

/** Test hook: with DPAMR_FAIL_WRITE="RANK:STEP:NAME" in the environment, STEP ("create" or "write")
 *  of the dataset NAME (its link name, e.g. AMRBox) reports a failure on rank RANK alone, after the
 *  HDF5 call itself was made, as when a file system fails under one rank of a collective write. The
 *  MPI error tests use it; a run without the variable never takes it. */
static int w_injected(const wctx *c, const char *step, const char *name)
{
    const char *spec = getenv("DPAMR_FAIL_WRITE");
    if (!spec || c->verify) return 0;
    char *end = NULL;
    const long r = strtol(spec, &end, 10);
    const size_t n = strlen(step);
    if (end == spec || *end != ':' || r != c->rank || strncmp(end + 1, step, n) != 0 || end[1 + n] != ':') return 0;
    if (strcmp(end + 2 + n, name) != 0) return 0;
    h5i_seterr(c->err, c->errlen, "cannot write %s: %s of dataset %s failed (injected by DPAMR_FAIL_WRITE on rank %d)",
               c->path, step, name, c->rank);
    return 1;
}

/** w_fail, then w_lost: a read-back that could not read what was written. */
static int w_fail_lost(wctx *c, hid_t loc, const char *name, const char *what)
{
    w_fail(c, loc, name, what);
    return w_lost(c);
}

/** In a collective write a failure can be one rank's alone (a full disk is seen by the rank whose
 *  MPI-IO aggregator wrote). Every leaf writer (group, attribute, dataset) therefore calls this
 *  before each of its collective HDF5 calls (on its local preparation) and after it (on its result),
 *  on every rank and path, and stops at the first disagreement: all ranks leave the writer at the same call, with the lowest failing rank's
 *  message, and none waits in a collective call the others have left. */
static int w_sync(wctx *c, int rc)
{
#ifdef H5_HAVE_PARALLEL
    if (c->par) return dp_agree(c->comm, rc == 0, c->err, c->errlen);
#else
    (void)c;
#endif
    return rc;
}

/** Object creation property list without time stamps (dataset, group, or the file's root group).
 *  A group keeps up to W_ATTRS_COMPACT attributes in its object header: HDF5's default (8) moves
 *  more, e.g. /dpamr/provenance's 25, to a fractal heap and a B-tree of their own (3.7 KB a file;
 *  docs/results.md, *File layout*). */
#define W_ATTRS_COMPACT 64
static hid_t w_ocpl(hid_t cls)
{
    hid_t p = H5Pcreate(cls);
    if (p >= 0 && (H5Pset_obj_track_times(p, 0) < 0 ||
                   (cls != H5P_DATASET_CREATE && H5Pset_attr_phase_change(p, W_ATTRS_COMPACT, W_ATTRS_COMPACT - 8) < 0))) {
        H5Pclose(p);
        return -1;
    }
    return p;
}

/** Create group loc/name without time stamps. Returns the group or -1 (err set). */
static hid_t w_group(wctx *c, hid_t loc, const char *name)
{
    hid_t gcpl = w_ocpl(H5P_GROUP_CREATE), g = -1;
    if (gcpl < 0) w_fail(c, loc, name, "preparing group");
    if (w_sync(c, gcpl < 0 ? -1 : 0) == 0) {
        g = c->verify ? H5Gopen2(loc, name, H5P_DEFAULT) : H5Gcreate2(loc, name, H5P_DEFAULT, gcpl, H5P_DEFAULT);
        if (g < 0 && c->verify) w_fail_lost(c, loc, name, "reading back group");
        else if (g < 0) w_fail(c, loc, name, "creating group");
        if (w_sync(c, g < 0 ? -1 : 0) != 0) {
            h5i_close(g);
            g = -1;
        }
    }
    h5i_close(gcpl);
    return g;
}

/** Create and close an empty group. */
static int w_empty_group(wctx *c, hid_t loc, const char *name)
{
    hid_t g = w_group(c, loc, name);
    if (g < 0) return -1;
    H5Gclose(g);
    return 0;
}

/** Dataspace: scalar for rank 0, else simple with dims. */
static hid_t w_space(int rank, const hsize_t *dims)
{
    return rank == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(rank, dims, NULL);
}

/** Write attribute loc@name of file type ft from buf (memory type mt). */
static int w_attr(wctx *c, hid_t loc, const char *name, hid_t ft, hid_t mt, int rank, const hsize_t *dims,
                  const void *buf)
{
    if (c->verify) return w_sync(c, 0); /* metadata: a lost header fails the opens of the read-back */
    hid_t s = w_space(rank, dims), a = -1;
    int rc = s >= 0 && ft >= 0 && mt >= 0 ? 0 : w_fail(c, loc, name, "preparing attribute");
    rc = w_sync(c, rc); /* before and after each collective call: all ranks or none make it */
    if (rc == 0) {
        if ((a = H5Acreate2(loc, name, ft, s, H5P_DEFAULT, H5P_DEFAULT)) < 0) rc = w_fail(c, loc, name, "creating attribute");
        rc = w_sync(c, rc);
    }
    if (rc == 0) {
        if (H5Awrite(a, mt, buf) < 0) rc = w_fail(c, loc, name, "writing attribute");
        rc = w_sync(c, rc);
    }
    h5i_close(a);
    h5i_close(s);
    return rc;
}

/** Fixed-length NULLPAD string type holding s (size strlen(s), at least 1). */
static hid_t w_strtype(const char *s)
{
    size_t n = strlen(s);
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t < 0) return -1;
    if (H5Tset_size(t, n ? n : 1) < 0 || H5Tset_strpad(t, H5T_STR_NULLPAD) < 0) {
        H5Tclose(t);
        return -1;
    }
    return t;
}

/** Scalar fixed-length string attribute (NULLPAD, size strlen: "OverlappingAMR" gets 14). */
static int w_attr_str(wctx *c, hid_t loc, const char *name, const char *s)
{
    if (!s) s = "";
    hid_t t = w_strtype(s); /* -1 on failure: the leaf reports it, after the same agreements */
    int rc = w_attr(c, loc, name, t, t, 0, NULL, s[0] ? s : "\0");
    h5i_close(t);
    return rc;
}

static int w_attr_i32(wctx *c, hid_t loc, const char *name, int32_t v)
{
    return w_attr(c, loc, name, H5T_STD_I32LE, H5T_NATIVE_INT32, 0, NULL, &v);
}

static int w_attr_i64(wctx *c, hid_t loc, const char *name, int64_t v)
{
    return w_attr(c, loc, name, H5T_STD_I64LE, H5T_NATIVE_INT64, 0, NULL, &v);
}

static int w_attr_u64(wctx *c, hid_t loc, const char *name, uint64_t v)
{
    return w_attr(c, loc, name, H5T_STD_U64LE, H5T_NATIVE_UINT64, 0, NULL, &v);
}

static int w_attr_f64(wctx *c, hid_t loc, const char *name, double v)
{
    return w_attr(c, loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 0, NULL, &v);
}

/** 1-D attribute of n values. */
static int w_attr_vec(wctx *c, hid_t loc, const char *name, hid_t ft, hid_t mt, hsize_t n, const void *buf)
{
    return w_attr(c, loc, name, ft, mt, 1, &n, buf);
}

/** Read-back pass: dataset loc/name must hold, in rows fofs[i] .. fofs[i] + cnt[i] (one after the
 *  other), the bytes of buf in memory type mt; with whole, all of it (the small datasets rank 0
 *  writes; nseg, fofs and cnt unused). Independent reads in slices of at most 64 MiB, so each
 *  rank reads only what it wrote and needs little memory. 0, or -1 with err set. */
static int w_check_rows(wctx *c, hid_t loc, const char *name, hid_t mt, int whole, int nseg, const hsize_t *fofs,
                        const hsize_t *cnt, const void *buf)
{
    hid_t d = H5Dopen2(loc, name, H5P_DEFAULT), fs = d < 0 ? -1 : H5Dget_space(d), ms = -1;
    const int rank = fs < 0 ? -1 : H5Sget_simple_extent_ndims(fs);
    hsize_t dims[2] = { 1, 1 };
    const int shaped = rank >= 0 && rank <= 2 && (rank == 0 || H5Sget_simple_extent_dims(fs, dims, NULL) == rank);
    const size_t row = shaped ? H5Tget_size(mt) * (rank > 1 ? (size_t)dims[1] : 1) : 0;
    if (row == 0) {
        w_fail_lost(c, loc, name, "reading back dataset");
        h5i_close(fs);
        h5i_close(d);
        return -1;
    }
    if (whole) nseg = 1;
    hsize_t step = (hsize_t)((64u << 20) / row > 0 ? (64u << 20) / row : 1), most = 0;
    for (int i = 0; !whole && i < nseg; ++i) most = cnt[i] > most ? cnt[i] : most;
    if (!whole && most < step) step = most; /* a slice buffer no larger than the largest run */
    char *got = malloc((size_t)(whole ? (rank ? dims[0] : 1) : step) * row + 1);
    const char *want = buf;
    int rc = got ? 0 : -1, same = 1;
    if (!got) h5i_seterr(c->err, c->errlen, "cannot write %s: out of memory for the read-back", c->path);
    for (int i = 0; rc == 0 && same && i < nseg; ++i) {
        const hsize_t rows = whole ? (rank ? dims[0] : 1) : cnt[i];
        for (hsize_t r = 0; rc == 0 && same && r < rows; r += whole ? rows : step) {
            hsize_t n = whole ? rows : (rows - r < step ? rows - r : step);
            hsize_t start[2] = { (whole ? 0 : fofs[i]) + r, 0 }, count[2] = { n, dims[1] };
            h5i_close(ms);
            ms = rank ? H5Screate_simple(rank, count, NULL) : H5Screate(H5S_SCALAR);
            if (ms < 0 || (rank && H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) < 0) ||
                H5Dread(d, mt, ms, rank ? fs : H5S_ALL, c->dxpl, got) < 0) {
                rc = w_fail_lost(c, loc, name, "reading back dataset");
            } else if (memcmp(got, want, (size_t)n * row) != 0) {
                char where[600];
                h5i_obj_path(loc, name, where, sizeof where);
                h5i_seterr(c->err, c->errlen, "cannot write %s: reading back %s gave other bytes than were written",
                           c->path, where);
                rc = w_lost(c);
                same = 0;
            }
            want += (size_t)n * row;
        }
    }
    free(got);
    h5i_close(ms);
    h5i_close(fs);
    h5i_close(d);
    return rc;
}

/** The storage of a dataset of file space fs: chunk > 0 asks for chunks of chunk rows (at most the
 *  dataset's rows) compressed with deflate (vtkGhostType), unless it has at most GHOST_CONTIG_MAX
 *  rows (its chunk index alone, a 2 KiB B-tree node, would outweigh it); chunk 0 and an empty
 *  dataset are contiguous. 0 or -1. */
static int w_layout(hid_t dcpl, hid_t fs, hsize_t chunk)
{
    hsize_t dims[2] = { 0, 1 };
    const int rank = H5Sget_simple_extent_ndims(fs);
    if (rank < 0 || rank > 2 || (rank > 0 && H5Sget_simple_extent_dims(fs, dims, NULL) != rank)) return -1;
    if (rank == 0 || dims[0] <= GHOST_CONTIG_MAX) return 0;
    if (chunk > 0) {
        const hsize_t cd[2] = { chunk < dims[0] ? chunk : dims[0], dims[1] };
        return H5Pset_chunk(dcpl, rank, cd) < 0 || H5Pset_deflate(dcpl, GHOST_DEFLATE) < 0 ? -1 : 0;
    }
    return 0;
}

/** The collective steps of writing dataset loc/name (no time stamps), each agreed on by every rank
 *  (see w_sync): the local preparation (ok: the caller's spaces and types were made), the create
 *  (type ft over file space fs), and, when the dataset has elements (write), one H5Dwrite of buf
 *  (memory type mt, memory space ms) into fs's selection. */
static int w_put(wctx *c, hid_t loc, const char *name, int ok, hid_t ft, hid_t mt, hid_t ms, hid_t fs, int write,
                 const void *buf, hsize_t chunk, const hsize_t *run);

/** The one H5Dwrite of w_put; or, for a field's cells in a serial write with a source (c->src,
 *  c->src_f >= 0), the pieces of the source's plan (xfer.h: runs of whole tiles), each a hyperslab
 *  written from the pointer the source gives (the host's arrays, or the GPU's pinned buffers). The
 *  contiguous dataset is allocated whole at its first write (no fill value), so the file holds the
 *  same bytes for any piece size. The pieces' bytes are the progress (run: first file row, rows,
 *  columns). */
static herr_t w_write(wctx *c, hid_t d, hid_t mt, hid_t ms, hid_t fs, const void *buf, hsize_t chunk,
                      const hsize_t *run)
{
    const size_t row = run ? H5Tget_size(mt) * (size_t)run[2] : 0;
    if (!c->src || c->src_f < 0 || c->par || !run || chunk > 0 || row != sizeof(float) || c->src_cells == 0) {
        return H5Dwrite(d, mt, ms, fs, c->dxpl, buf);
    }
    const int64_t tiles = (int64_t)(run[1] / c->src_cells), tpp = xfer_tiles_per_piece(c->src->piece, c->src_cells);
    for (int64_t t = 0; t < tiles; t += tpp) {
        const int64_t n = tiles - t < tpp ? tiles - t : tpp;
        char why[512] = "";
        const float *cells = c->src->get(c->src, c->src_f, c->src_t0 + t, n, why, sizeof why);
        if (!cells) {
            h5i_seterr(c->err, c->errlen, "cannot write %s: the cells of field %d, tiles %lld..%lld: %s", c->path,
                       c->src_f, (long long)(c->src_t0 + t), (long long)(c->src_t0 + t + n - 1), why);
            return -2; /* the message is set: not an HDF5 failure */
        }
        const hsize_t start = run[0] + (hsize_t)t * c->src_cells, count = (hsize_t)n * c->src_cells;
        const hid_t pm = H5Screate_simple(1, &count, NULL);
        herr_t e = pm < 0 || H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL) < 0 ? -1 : 0;
        if (e >= 0) e = H5Dwrite(d, mt, pm, fs, c->dxpl, cells);
        /* a failure's error stack is kept for w_fail's reason: closing pm would clear it */
        const hid_t es = e < 0 ? H5Eget_current_stack() : -1;
        h5i_close(pm);
        if (es >= 0) H5Eset_current_stack(es);
        if (e < 0) return e;
        if (c->pg) progress_update(c->pg, c->pg_done += (double)count * sizeof(float));
    }
    return 0;
}

static int w_put(wctx *c, hid_t loc, const char *name, int ok, hid_t ft, hid_t mt, hid_t ms, hid_t fs, int write,
                 const void *buf, hsize_t chunk, const hsize_t *run)
{
    hid_t dcpl = w_ocpl(H5P_DATASET_CREATE), d = -1;
    /* no attribute on a dataset: its object header need not reserve room for them (HDF5 1.10.5) */
    ok = ok && dcpl >= 0 && ft >= 0 && mt >= 0 && w_layout(dcpl, fs, chunk) == 0 &&
         H5Pset_dset_no_attrs_hint(dcpl, 1) >= 0;
    int rc = w_sync(c, ok ? 0 : w_fail(c, loc, name, "preparing dataset"));
    if (rc == 0) { /* before and after each collective call: all ranks or none make it */
        if ((d = H5Dcreate2(loc, name, ft, fs, H5P_DEFAULT, dcpl, H5P_DEFAULT)) < 0)
            rc = w_fail(c, loc, name, "creating dataset");
        else if (w_injected(c, "create", name)) rc = -1;
        rc = w_sync(c, rc);
    }
    if (rc == 0) {
        const herr_t e = write ? w_write(c, d, mt, ms, fs, buf, chunk, run) : 0;
        if (e == -2) rc = -1; /* the source failed: w_write said why */
        else if (e < 0) rc = w_fail(c, loc, name, "writing dataset");
        else if (w_injected(c, "write", name)) rc = -1;
        rc = w_sync(c, rc);
    }
    if (d >= 0) { /* a small dataset's bytes may be written only now (HDF5's sieve buffer): checked */
        const herr_t e = H5Dclose(d);
        if (rc == 0) rc = w_sync(c, e < 0 ? w_fail(c, loc, name, "closing dataset") : 0);
    }
    h5i_close(dcpl);
    return rc;
}

/** Small contiguous dataset loc/name, all of it from buf: in a collective write every rank takes
 *  part and rank 0 alone supplies the data. */
static int w_dset(wctx *c, hid_t loc, const char *name, hid_t ft, hid_t mt, int rank, const hsize_t *dims,
                  const void *buf)
{
    if (c->verify) return w_sync(c, w_check_rows(c, loc, name, mt, c->rank == 0, 0, NULL, NULL, buf));
    hid_t s = w_space(rank, dims);
    hssize_t np = -1;
    const int ok = s >= 0 && (np = H5Sget_simple_extent_npoints(s)) >= 0 && (c->rank == 0 || H5Sselect_none(s) >= 0);
    const int rc = w_put(c, loc, name, ok, ft, mt, s, s, np > 0, buf, 0, NULL);
    h5i_close(s);
    return rc;
}

/** Per-tile dataset loc/name of global shape dims (dims[0] rows): this process writes nseg runs of
 *  rows, run i at file row fofs[i], cnt[i] rows, taken one after the other from buf; stored
 *  contiguous (chunk 0) or in deflated chunks of chunk rows (w_layout). */
static int w_rows(wctx *c, hid_t loc, const char *name, hid_t ft, hid_t mt, int rank, const hsize_t *dims, int nseg,
                  const hsize_t *fofs, const hsize_t *cnt, const void *buf, hsize_t chunk)
{
    if (c->verify) return w_sync(c, w_check_rows(c, loc, name, mt, 0, nseg, fofs, cnt, buf));
    hid_t fs = w_space(rank, dims), ms = -1;
    hsize_t mine = 0, start[2] = { 0, 0 }, count[2] = { 0, rank > 1 ? dims[1] : 1 };
    int ok = fs >= 0 && H5Sselect_none(fs) >= 0;
    for (int i = 0; ok && i < nseg; ++i) {
        if (cnt[i] == 0) continue;
        start[0] = fofs[i];
        count[0] = cnt[i];
        ok = H5Sselect_hyperslab(fs, H5S_SELECT_OR, start, NULL, count, NULL) >= 0;
        mine += cnt[i];
    }
    const hsize_t mdims[2] = { mine > 0 ? mine : 1, count[1] };
    ok = ok && (ms = H5Screate_simple(rank, mdims, NULL)) >= 0 && (mine > 0 || H5Sselect_none(ms) >= 0);
    /* the rows as one run (a serial write's levels follow each other): what w_write may split */
    const hsize_t run[3] = { nseg > 0 ? fofs[0] : 0, mine, count[1] };
    int one = 1;
    for (int i = 1; i < nseg; ++i) one = one && (cnt[i] == 0 || fofs[i] == fofs[i - 1] + cnt[i - 1]);
    const int rc = w_put(c, loc, name, ok, ft, mt, ms, fs, dims[0] > 0, buf, chunk, one ? run : NULL);
    h5i_close(ms);
    h5i_close(fs);
    return rc;
}

/** Scalar fixed-length string dataset. */
static int w_dset_str(wctx *c, hid_t loc, const char *name, const char *s)
{
    hid_t t = w_strtype(s); /* -1 on failure: the leaf reports it, after the same agreements */
    int rc = w_dset(c, loc, name, t, t, 0, NULL, s[0] ? s : "\0");
    h5i_close(t);
    return rc;
}

#ifdef DPAMR_HAVE_ZLIB
/** Level L's vtkGhostType (the n cells of its tiles from s) in a serial write (w_ghost_direct): made
 *  and deflated GHOST_BATCH chunks at a time by the OpenMP threads, each written with
 *  H5Dwrite_chunk in chunk order. The stored bytes are what HDF5's deflate filter stores through
 *  H5Dwrite (the dataset as w_layout makes it; compress2 at GHOST_DEFLATE into a buffer the chunk's
 *  size; the edge chunk padded with the fill value 0; a chunk that does not shrink stored as it is
 *  with the filter's mask bit, as HDF5 does when an optional filter fails), at the threads' pace
 *  instead of one thread's, and with no level-sized buffer. 0 or -1. */
static int w_ghost_chunks(wctx *c, hid_t cd, const mesh_t *m, dp_tidx s, hsize_t n, const uint8_t *oct)
{
    static const char name[] = "vtkGhostType";
    const hsize_t cs = GHOST_CHUNK < n ? GHOST_CHUNK : n;
    const int64_t nch = (int64_t)((n + cs - 1) / cs);
    hid_t fs = H5Screate_simple(1, &n, NULL), dcpl = w_ocpl(H5P_DATASET_CREATE), d = -1;
    uint8_t *raw = malloc((size_t)GHOST_BATCH * cs), *out = malloc((size_t)GHOST_BATCH * cs);
    int rc = 0;
    if (!raw || !out) {
        h5i_seterr(c->err, c->errlen, "cannot write %s: out of memory", c->path);
        rc = -1;
    } else if (fs < 0 || dcpl < 0 || w_layout(dcpl, fs, GHOST_CHUNK) != 0 || H5Pset_dset_no_attrs_hint(dcpl, 1) < 0) {
        rc = w_fail(c, cd, name, "preparing dataset");
    } else if ((d = H5Dcreate2(cd, name, H5T_STD_U8LE, fs, H5P_DEFAULT, dcpl, H5P_DEFAULT)) < 0) {
        rc = w_fail(c, cd, name, "creating dataset");
    } else if (w_injected(c, "create", name)) {
        rc = -1;
    }
    uLongf len[GHOST_BATCH];
    int zs[GHOST_BATCH];
    for (int64_t k0 = 0; rc == 0 && k0 < nch; k0 += GHOST_BATCH) {
        const int nb = nch - k0 < GHOST_BATCH ? (int)(nch - k0) : GHOST_BATCH;
        OMP_PRAGMA(omp parallel for schedule(dynamic, 1) if (nb > 1))
        for (int j = 0; j < nb; ++j) {
            const size_t c0 = (size_t)(k0 + j) * cs, c1 = c0 + cs < n ? c0 + cs : (size_t)n;
            uint8_t *r = raw + (size_t)j * cs;
            w_ghost_cells(m, s, c0, c1, oct, r);
            memset(r + (c1 - c0), 0, cs - (c1 - c0));
            len[j] = (uLongf)cs;
            zs[j] = compress2(out + (size_t)j * cs, &len[j], r, (uLong)cs, GHOST_DEFLATE);
        }
        for (int j = 0; rc == 0 && j < nb; ++j) {
            const hsize_t at = (hsize_t)(k0 + j) * cs;
            herr_t e = -1;
            if (zs[j] == Z_OK) e = H5Dwrite_chunk(d, H5P_DEFAULT, 0u, &at, (size_t)len[j], out + (size_t)j * cs);
            else if (zs[j] == Z_BUF_ERROR) e = H5Dwrite_chunk(d, H5P_DEFAULT, 1u, &at, (size_t)cs, raw + (size_t)j * cs);
            else {
                h5i_seterr(c->err, c->errlen, "cannot write %s: deflating a chunk of %s failed (zlib %d)", c->path,
                           name, zs[j]);
                rc = -1;
                break;
            }
            if (e < 0) rc = w_fail(c, cd, name, "writing dataset");
        }
    }
    if (rc == 0 && w_injected(c, "write", name)) rc = -1;
    free(raw);
    free(out);
    if (d >= 0 && H5Dclose(d) < 0 && rc == 0) rc = w_fail(c, cd, name, "closing dataset");
    h5i_close(dcpl);
    h5i_close(fs);
    return rc;
}
#endif

/** LevelL/CellData's vtkGhostType (with the tree: w_level_head). */
static int w_ghost_dset(wctx *c, hid_t cd, const mesh_t *m, int L, uint8_t *ghost, const uint8_t *oct)
{
    dp_tidx s, e;
    w_lrange(m, L, &s, &e);
    const size_t cells = (size_t)mesh_cells(m);
    const hsize_t n = (hsize_t)(c->level_start[L + 1] - c->level_start[L]) * cells;
    const hsize_t fofs = (hsize_t)c->offset[L] * cells, cnt = (hsize_t)(e - s) * cells;
#ifdef DPAMR_HAVE_ZLIB
    if (w_ghost_direct(c) && n > GHOST_CONTIG_MAX) return w_ghost_chunks(c, cd, m, s, n, oct);
#endif
    w_ghost(m, s, e, oct, ghost);
    return w_rows(c, cd, "vtkGhostType", H5T_STD_U8LE, H5T_NATIVE_UINT8, 1, &n, 1, &fofs, &cnt, ghost, GHOST_CHUNK);
}

/** LevelL/CellData's fields (cd: the group, made with the tree: w_level_head). */
static int w_fields(wctx *c, hid_t cd, const mesh_t *m, int L)
{
    dp_tidx s, e;
    w_lrange(m, L, &s, &e);
    const size_t cells = (size_t)mesh_cells(m);
    const hsize_t n = (hsize_t)(c->level_start[L + 1] - c->level_start[L]) * cells;
    const hsize_t fofs = (hsize_t)c->offset[L] * cells, cnt = (hsize_t)(e - s) * cells;
    int rc = 0;
    for (int f = 0; f < m->nf && rc == 0; ++f) {
        c->src_f = f; /* with a source (serial write), the cells come from it */
        c->src_t0 = s;
        c->src_cells = cells;
        rc = w_rows(c, cd, m->field_name[f], H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, 1, &n, 1, &fofs, &cnt,
                    c->src ? NULL : m->field[f] + (size_t)s * cells, 0);
        c->src_f = -1;
    }
    return rc;
}

/** Open group loc/name that this traversal made before (w_vtkhdf writes every level's head, then
 *  their fields; w_dpamr completes /dpamr after its tree). Returns the group or -1 (err set). */
static hid_t w_group_again(wctx *c, hid_t loc, const char *name)
{
    if (w_sync(c, 0) != 0) return -1;
    const hid_t g = H5Gopen2(loc, name, H5P_DEFAULT);
    if (g < 0 && c->verify) w_fail_lost(c, loc, name, "reading back group");
    else if (g < 0) w_fail(c, loc, name, "opening group");
    if (w_sync(c, g < 0 ? -1 : 0) != 0) {
        h5i_close(g);
        return -1;
    }
    return g;
}

/** /VTKHDF/LevelL's head: the group, Spacing, AMRBox, CellData with its vtkGhostType (the fields
 *  come after every level's head: w_level_cells), and the empty PointData and FieldData. */
static int w_level_head(wctx *c, hid_t vtk, const mesh_t *m, int L, int32_t *box, uint8_t *ghost, const uint8_t *oct)
{
    char name[32];
    snprintf(name, sizeof name, "Level%d", L);
    dp_tidx s, e;
    w_lrange(m, L, &s, &e);
    hid_t lev = w_group(c, vtk, name), cd = -1;
    if (lev < 0) return -1;
    int rc = -1;
    double h = m->h0;
    for (int l = 0; l < L; ++l) h *= 0.5;
    const double sp[3] = { h, h, h };
    if (w_attr_vec(c, lev, "Spacing", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 3, sp) != 0) goto done;
    w_boxes(m, s, e, box); /* the int32 range was checked before the file was made */
    const hsize_t bd[2] = { (hsize_t)(c->level_start[L + 1] - c->level_start[L]), 6 };
    const hsize_t fofs = (hsize_t)c->offset[L], cnt = (hsize_t)(e - s);
    if (w_rows(c, lev, "AMRBox", H5T_STD_I32LE, H5T_NATIVE_INT32, 2, bd, 1, &fofs, &cnt, box, 0) != 0) goto done;
    if ((cd = w_group(c, lev, "CellData")) < 0 || w_ghost_dset(c, cd, m, L, ghost, oct) != 0) goto done;
    if (w_empty_group(c, lev, "PointData") != 0 || w_empty_group(c, lev, "FieldData") != 0) goto done;
    rc = 0;
done:
    h5i_close(cd);
    H5Gclose(lev);
    return rc;
}

/** /VTKHDF/LevelL/CellData's fields. */
static int w_level_cells(wctx *c, hid_t vtk, const mesh_t *m, int L)
{
    char name[32];
    snprintf(name, sizeof name, "Level%d/CellData", L);
    hid_t cd = w_group_again(c, vtk, name);
    if (cd < 0) return -1;
    const int rc = w_fields(c, cd, m, L);
    H5Gclose(cd);
    return rc;
}

static int w_dpamr_tiles(wctx *c, hid_t g, const mesh_t *m);

/** The /VTKHDF group (OverlappingAMR), with the tile tree of /dpamr first: the tree
 *  (/dpamr/tiles, /dpamr/level_start), every level's AMRBox and vtkGhostType lie at the head of the
 *  file, before any cells, so that a reader of the tiles (`dpamr check`, the loader) reads one
 *  stretch of the file and then the cells front to back (docs/format.md, "Order in the file"), and
 *  a disk that fills at the end fills in the cells' contiguous writes, never in a chunked one (a
 *  failed collective write of vtkGhostType's deflated chunks left the other ranks in HDF5's
 *  collective call: tests/disk_full.sh). */
int w_vtkhdf(wctx *c, hid_t file, const mesh_t *m, wbuf *b)
{
    hid_t vtk = w_group(c, file, "VTKHDF"), g = -1;
    int rc = -1;
    if (vtk < 0) goto done;
    const int32_t ver[2] = { 1, 0 };
    if (w_attr_vec(c, vtk, "Version", H5T_STD_I32LE, H5T_NATIVE_INT32, 2, ver) != 0) goto done;
    if (w_attr_str(c, vtk, "Type", "OverlappingAMR") != 0) goto done;
    if (w_attr_vec(c, vtk, "Origin", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 3, m->origin) != 0) goto done;
    if ((g = w_group(c, file, "dpamr")) < 0 || w_dpamr_tiles(c, g, m) != 0) goto done;
    for (int L = 0; L < w_vtk_levels(c); ++L)
        if (w_level_head(c, vtk, m, L, b->box, b->ghost, b->oct) != 0) goto done;
    for (int L = 0; L < w_vtk_levels(c); ++L)
        if (w_level_cells(c, vtk, m, L) != 0) goto done;
    rc = 0;
done:
    h5i_close(g);
    h5i_close(vtk);
    return rc;
}

/** Attributes of /dpamr describing the mesh. */
static int w_dpamr_attrs(wctx *c, hid_t g, const mesh_t *m)
{
    char names[DP_MAX_FIELDS * DP_NAME_LEN] = "";
    for (int f = 0; f < m->nf; ++f) {
        if (f) strcat(names, " ");
        strcat(names, m->field_name[f]);
    }
    const int32_t root[3] = { m->root[0], m->root[1], m->root[2] };
    if (w_attr_str(c, g, "format", FORMAT_NAME) || w_attr_i32(c, g, "format_version", FORMAT_VERSION) ||
        w_attr_i32(c, g, "dim", m->dim) || w_attr_i32(c, g, "tile_size", m->B) ||
        w_attr_vec(c, g, "root", H5T_STD_I32LE, H5T_NATIVE_INT32, 3, root) ||
        w_attr_vec(c, g, "origin", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 3, m->origin) ||
        w_attr_f64(c, g, "h0", m->h0) || w_attr_i32(c, g, "nlevels", c->nlevels) ||
        w_attr_str(c, g, "fields", names))
        return -1;
    return 0;
}

/** /dpamr/tiles (the tree: parent and childmask; the tiles' levels and coordinates are /VTKHDF's
 *  AMRBox rows) and /dpamr/level_start: level L of this process goes to global rows
 *  level_start[L] + offset[L].. (the whole mesh when writing alone). */
static int w_dpamr_tiles(wctx *c, hid_t g, const mesh_t *m)
{
    const hsize_t n = (hsize_t)c->level_start[c->nlevels];
    hsize_t fofs[DP_MAX_LEVELS], cnt[DP_MAX_LEVELS];
    for (int L = 0; L < c->nlevels; ++L) {
        dp_tidx s, e;
        w_lrange(m, L, &s, &e);
        fofs[L] = (hsize_t)(c->level_start[L] + c->offset[L]);
        cnt[L] = (hsize_t)(e - s);
    }
    const int ns = c->nlevels;
    int rc = -1;
    hid_t tg = w_group(c, g, "tiles");
    if (tg < 0) goto done;
    if (w_rows(c, tg, "parent", H5T_STD_I64LE, H5T_NATIVE_INT64, 1, &n, ns, fofs, cnt, c->parent, 0) ||
        w_rows(c, tg, "childmask", H5T_STD_U8LE, H5T_NATIVE_UINT8, 1, &n, ns, fofs, cnt, m->childmask, 0))
        goto done;
    const hsize_t nl = (hsize_t)c->nlevels + 1;
    if (w_dset(c, g, "level_start", H5T_STD_I64LE, H5T_NATIVE_INT64, 1, &nl, c->level_start)) goto done;
    rc = 0;
done:
    h5i_close(tg);
    return rc;
}

/** /dpamr/provenance/ranks: the per-rank table, a compound dataset of h5io_rank_t rows. */
static int w_ranks(wctx *c, hid_t loc, int n, const h5io_rank_t *rows)
{
    const size_t fsize = 4 + 4 + 8 * 5;
    hid_t ft = H5Tcreate(H5T_COMPOUND, fsize), mt = h5i_rank_mtype();
    /* file type: packed little-endian; memory type: the struct as the compiler lays it out */
    const int ok =
        ft >= 0 && mt >= 0 && H5Tinsert(ft, "rank", 0, H5T_STD_I32LE) >= 0 &&
        H5Tinsert(ft, "device", 4, H5T_STD_I32LE) >= 0 && H5Tinsert(ft, "root_tiles", 8, H5T_STD_I64LE) >= 0 &&
        H5Tinsert(ft, "tiles", 16, H5T_STD_I64LE) >= 0 && H5Tinsert(ft, "cells", 24, H5T_STD_I64LE) >= 0 &&
        H5Tinsert(ft, "refine_ms", 32, H5T_IEEE_F64LE) >= 0 && H5Tinsert(ft, "write_ms", 40, H5T_IEEE_F64LE) >= 0;
    if (!ok) { /* the leaf reports the missing type, after the same agreements as on the other ranks */
        h5i_close(ft);
        ft = -1;
    }
    const hsize_t dims = (hsize_t)n;
    const int rc = w_dset(c, loc, "ranks", ft, mt, 1, &dims, rows);
    h5i_close(ft);
    h5i_close(mt);
    return rc;
}

/** /dpamr/provenance: run information, all attributes (timings must not touch datasets), and the
 *  per-rank table. The one writer of it: serial and MPI runs fill h5io_meta_t alike (src/run.c). */
static int w_provenance(wctx *c, hid_t g, const h5io_meta_t *mt)
{
    hid_t p = w_group(c, g, "provenance");
    if (p < 0) return -1;
    int rc = -1;
    const hsize_t nt = (hsize_t)(mt->nlevels_timed < DP_MAX_LEVELS ? mt->nlevels_timed : DP_MAX_LEVELS);
    if (w_attr_str(c, p, "variant", mt->variant) || w_attr_str(c, p, "version", mt->version) ||
        w_attr_i32(c, p, "pdl", mt->pdl) || w_attr_f64(c, p, "load_ms", mt->load_ms) ||
        w_attr_f64(c, p, "refine_ms", mt->refine_ms) || w_attr_f64(c, p, "validate_ms", mt->validate_ms))
        goto done;
    if (mt->nlevels_timed > 0 &&
        w_attr_vec(c, p, "level_ms", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, nt, mt->level_ms))
        goto done;
    if (w_attr_i64(c, p, "device_launches", mt->device_launches) ||
        w_attr_i64(c, p, "launch_failures", mt->launch_failures) || w_attr_i64(c, p, "pool_size", mt->pool_size))
        goto done;
    if (mt->nranks > 0 && (w_attr_i32(c, p, "nranks", mt->nranks) || w_ranks(c, p, mt->nranks, mt->ranks))) goto done;
    if (w_attr_f64(c, p, "upload_ms", mt->upload_ms) || w_attr_f64(c, p, "download_ms", mt->download_ms) ||
        w_attr_f64(c, p, "total_ms", mt->total_ms))
        goto done;
    { /* the build and the machine (issue 16), where known */
        const char *names[] = { "commit", "build", "compiler", "cuda", "device", "host", "date" };
        const char *vals[] = { mt->commit, mt->build, mt->compiler, mt->cuda, mt->device_name, mt->host, mt->date };
        for (int i = 0; i < 7; ++i)
            if (vals[i] && w_attr_str(c, p, names[i], vals[i])) goto done;
        if (mt->threads > 0 && w_attr_i32(c, p, "threads", mt->threads)) goto done;
    }
    rc = 0;
done:
    H5Gclose(p);
    return rc;
}

/** /dpamr/validation datasets: per-level tile counts and checksums, packed [nlevels][nf]. */
static int w_valid_dsets(wctx *c, hid_t g, const valid_report_t *v)
{
    const int nl = v->nlevels < 0 ? 0 : v->nlevels > DP_MAX_LEVELS ? DP_MAX_LEVELS : v->nlevels;
    const int nf = v->nf < 0 ? 0 : v->nf > DP_MAX_FIELDS ? DP_MAX_FIELDS : v->nf;
    double sum[DP_MAX_LEVELS * DP_MAX_FIELDS];
    uint64_t hash[DP_MAX_LEVELS * DP_MAX_FIELDS];
    int64_t tiles[DP_MAX_LEVELS];
    for (int L = 0; L < nl; ++L) {
        tiles[L] = v->tiles[L];
        for (int f = 0; f < nf; ++f) {
            sum[L * nf + f] = v->sum[L][f];
            hash[L * nf + f] = v->hash[L][f];
        }
    }
    const hsize_t d1 = (hsize_t)nl, d2[2] = { (hsize_t)nl, (hsize_t)nf };
    if (w_dset(c, g, "tiles", H5T_STD_I64LE, H5T_NATIVE_INT64, 1, &d1, tiles) ||
        w_dset(c, g, "checksum_sum", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 2, d2, sum) ||
        w_dset(c, g, "checksum_hash", H5T_STD_U64LE, H5T_NATIVE_UINT64, 2, d2, hash))
        return -1;
    return 0;
}

/** /dpamr/validation: the report of valid_check. */
static int w_validation(wctx *c, hid_t g, const valid_report_t *v)
{
    hid_t vg = w_group(c, g, "validation");
    if (vg < 0) return -1;
    char first[sizeof v->first_failure + 1];
    snprintf(first, sizeof first, "%s", v->first_failure); /* terminated even if the report is not */
    int rc = -1;
    if (w_attr_i32(c, vg, "passed", v->passed) || w_attr_i64(c, vg, "nfail", v->nfail) ||
        w_attr_str(c, vg, "first_failure", first) ||
        w_attr_i32(c, vg, "conservation_checked", v->conservation_checked) ||
        w_attr_f64(c, vg, "conservation_tol", v->conservation_tol) ||
        w_attr_f64(c, vg, "conservation_max_rel", v->conservation_max_rel) ||
        w_attr_u64(c, vg, "tree_hash", v->tree_hash) || w_attr_u64(c, vg, "total_hash", v->total_hash))
        goto done;
    if (w_valid_dsets(c, vg, v) != 0) goto done;
    rc = 0;
done:
    H5Gclose(vg);
    return rc;
}

/** The /dpamr group, after w_vtkhdf (which wrote its tree). */
int w_dpamr(wctx *c, hid_t file, const mesh_t *m, const h5io_meta_t *mt)
{
    hid_t g = w_group_again(c, file, "dpamr");
    if (g < 0) return -1;
    int rc = -1;
    if (w_dpamr_attrs(c, g, m)) goto done;
    if (mt && mt->has_step && (w_attr_i64(c, g, "step", mt->step) || w_attr_f64(c, g, "time", mt->time))) goto done;
    if (mt && mt->deck_text && w_dset_str(c, g, "deck", mt->deck_text)) goto done;
    if (mt && w_provenance(c, g, mt)) goto done;
    if (mt && mt->valid && w_validation(c, g, mt->valid)) goto done;
    rc = 0;
done:
    H5Gclose(g);
    return rc;
}

/** Checks that keep the writer from reading out of bounds or writing an unusable layout. */
int w_check_mesh(wctx *c, const mesh_t *m)
{
    const char *bad = NULL;
    if (m->dim != 2 && m->dim != 3) bad = "dim is not 2 or 3";
    else if (m->B < 4 || m->B > 32 || (m->B & (m->B - 1))) bad = "tile size is not a power of 2 in 4..32";
    else if (m->nf < 1 || m->nf > DP_MAX_FIELDS) bad = "field count is not 1..8";
    else if (m->nlevels < 1 || m->nlevels > DP_MAX_LEVELS) bad = "level count out of range";
    else if (m->ntiles < 0 || m->ntiles > m->cap) bad = "tile count out of range";
    else if (m->level_start[0] != 0 || m->level_start[m->nlevels] != m->ntiles) bad = "level_start inconsistent";
    for (int L = 0; !bad && L < m->nlevels; ++L)
        if (m->level_start[L + 1] < m->level_start[L]) bad = "level_start decreases";
    for (int f = 0; !bad && f < m->nf; ++f) {
        if (!h5i_name_ok(m->field_name[f]))
            bad = "a field name is empty, too long or has a space, '/' or control character";
        for (int g = 0; !bad && g < f; ++g)
            if (strcmp(m->field_name[f], m->field_name[g]) == 0) bad = "two fields have the same name";
    }
    if (!bad) return 0;
    h5i_seterr(c->err, c->errlen, "cannot write %s: invalid mesh: %s", c->path, bad);
    return -1;
}

/** Raw bytes of the datasets of a file of ntiles tiles: a lower bound on its size. Per tile: AMRBox
 *  24, parent 8, childmask 1; per cell: every field once (float32; vtkGhostType is compressed and
 *  left out). */
double h5io_raw_bytes(const mesh_t *m, dp_tidx ntiles)
{
    return (double)ntiles * (33.0 + (double)mesh_cells(m) * 4.0 * m->nf);
}

/** Before the file is made: no file, directory or link has the temporary name tmp, the directory of
 *  path takes a new file, and its file system has room for bytes. A full disk found after minutes of writing wastes them, and MPI-IO gives no reason for
 *  either failure. 0, or -1 with err set. */
int w_room(const char *path, const char *tmp, double bytes, char *err, size_t errlen)
{
    char *dir = strdup(path);
    if (!dir) {
        h5i_seterr(err, errlen, "cannot write %s: out of memory", path);
        return -1;
    }
    char *slash = strrchr(dir, '/');
    if (slash) *(slash == dir ? slash + 1 : slash) = '\0';
    const char *d = slash ? dir : ".";
    struct statvfs sv;
    struct stat st;
    int rc = 0;
    if (lstat(tmp, &st) == 0) { /* never through a link or over a file of that name (H5F_ACC_EXCL too) */
        h5i_seterr(err, errlen, "cannot write %s: its temporary file %s: %s", path, tmp, dp_tmp_strerror(EEXIST));
        rc = -1;
    } else if (access(d, W_OK) != 0) {
        h5i_seterr(err, errlen, "cannot write %s: cannot create %s: %s", path, tmp, strerror(errno));
        rc = -1;
    } else if (statvfs(d, &sv) == 0 && (double)sv.f_bavail * (double)sv.f_frsize < bytes) {
        const double have = (double)sv.f_bavail * (double)sv.f_frsize; /* kB below a MB: not "0.0 MB" */
        h5i_seterr(err, errlen, "cannot write %s: it needs at least %.1f %s and the file system of %s has %.1f %s free",
                   path, bytes < 1e6 ? bytes / 1e3 : bytes / 1e6, bytes < 1e6 ? "kB" : "MB", d,
                   have < 1e6 ? have / 1e3 : have / 1e6, have < 1e6 ? "kB" : "MB");
        rc = -1;
    }
    free(dir);
    return rc;
}

/** The file written is renamed onto path: only a regular file (or nothing) may be replaced there,
 *  never a symbolic link, device, FIFO or directory. 0, or -1 with err set. */
int w_target_ok(const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(path, &st) != 0 || S_ISREG(st.st_mode)) return 0;
    h5i_seterr(err, errlen, "cannot write %s: it exists and is not a regular file (%s): dpamr replaces only a regular file",
               path, S_ISLNK(st.st_mode) ? "a symbolic link" : S_ISDIR(st.st_mode) ? "a directory" : "a device, FIFO or socket");
    return -1;
}

/** The file format written: the HDF5 1.8 format or newer, at most 1.10's (ParaView 5.11's HDF5 reads
 *  it), so that every object header, the superblock and the B-trees carry checksums and a damaged
 *  header is reported by the library instead of being walked. 0 or -1. */
int w_format(hid_t fapl)
{
    return H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_V110) < 0 ? -1 : 0;
}

/** Create the temporary file, only if nothing has its name (H5F_ACC_EXCL: O_CREAT | O_EXCL, never
 *  through a symbolic link); message with errno when the system refused it, and *taken set when the
 *  name was taken (that file is not ours to remove). */
hid_t w_create(wctx *c, const char *tmp, hid_t fapl, int *taken)
{
    hid_t fcpl = w_ocpl(H5P_FILE_CREATE); /* root group without time stamps too */
    errno = 0;
    hid_t f = fcpl < 0 ? -1 : H5Fcreate(tmp, H5F_ACC_EXCL, fcpl, fapl);
    const int e = errno;
    h5i_close(fcpl);
    *taken = f < 0 && e == EEXIST;
    if (f < 0) {
        char why[200];
        h5i_reason(why);
        h5i_seterr(c->err, c->errlen, "cannot write %s: cannot create %s: %s", c->path, tmp,
                   *taken ? dp_tmp_strerror(e) : e ? strerror(e) : why);
    }
    return f;
}

/** A file being written (h5io.h): the context, the /VTKHDF scratch buffers, the temporary file. */
struct h5io_out {
    wctx c;
    wbuf b;
    char *path, *tmp;
    hid_t f;
    progress_t pg;
    int cells_done; /* /VTKHDF written */
};

/** The source of a write from the mesh's own arrays: pointers into them (no copy). */
static const float *host_get(xfer_src_t *s, int f, int64_t t, int64_t n, char *err, size_t errlen)
{
    (void)n, (void)err, (void)errlen;
    const mesh_t *m = s->ctx;
    return m->field[f] + (size_t)t * (size_t)mesh_cells(m);
}

void h5io_out_abort(h5io_out_t *o)
{
    if (!o) return;
    if (o->f >= 0) {
        /* The file goes away, but HDF5 flushes its metadata when closing it, and on a full disk that
         * fails; a close that fails leaves HDF5 1.10 a half-closed file, which its exit handler (or,
         * with a parallel HDF5, MPI_Finalize) closes again and crashes on. So the file's descriptor
         * is pointed at an anonymous file in memory first (memfd; the flush writes a few sparse
         * pages there and the close succeeds) and the blocks on disk are released; where that is not
         * possible, the disk file is truncated, which leaves the flush room in most cases. */
        hid_t fapl = H5Fget_access_plist(o->f);
        void *h = NULL;
        if (fapl >= 0 && H5Pget_driver(fapl) == H5FD_SEC2 && H5Fget_vfd_handle(o->f, fapl, &h) >= 0 && h) {
            const int fd = *(int *)h, mfd = memfd_create("dpamr-abort", MFD_CLOEXEC);
            if (mfd < 0 || dup2(mfd, fd) < 0) {
                if (ftruncate(fd, 0) != 0) { /* nothing else to do: the close below tries anyway */
                }
            }
            if (mfd >= 0) close(mfd);
        }
        if (fapl >= 0) H5Pclose(fapl);
    }
    h5i_close(o->f);
    if (o->tmp) { /* also when the create failed part-way (a full disk) */
        remove(o->tmp);
        dp_tmp_done(o->tmp);
    }
    progress_fail(&o->pg);
    w_buf_free(&o->b);
    free(o->tmp);
    free(o->path);
    free(o);
}

int h5io_out_open(const char *path, const mesh_t *m, int progress, h5io_out_t **out, char *err, size_t errlen)
{
    static const dp_tidx zero[DP_MAX_LEVELS] = { 0 };
    *out = NULL;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    h5io_out_t *o = calloc(1, sizeof *o);
    const size_t tl = strlen(path) + 32;
    char *tmp = o ? malloc(tl) : NULL, *dup = o ? strdup(path) : NULL;
    if (!o || !tmp || !dup) {
        free(o);
        free(tmp);
        free(dup);
        h5i_seterr(err, errlen, "cannot write %s: out of memory", path);
        return -1;
    }
    o->f = -1;
    o->path = dup;
    o->c = (wctx){ .path = o->path, .err = err, .errlen = errlen, .dxpl = H5P_DEFAULT, .nlevels = m->nlevels,
                   .level_start = m->level_start, .offset = zero, .parent = m->parent, .src_f = -1 };
    if (w_check_mesh(&o->c, m) != 0 || w_buf_alloc(&o->c, m, &o->b) != 0) {
        free(tmp);
        h5io_out_abort(o);
        return -1;
    }
    dp_tmp_name(path, 0, tmp, tl); /* tl holds it: the path, ".tmp." and a pid */
    if (w_target_ok(path, err, errlen) != 0 || w_room(path, tmp, h5io_raw_bytes(m, m->ntiles), err, errlen) != 0) {
        free(tmp);
        h5io_out_abort(o);
        return -1;
    }
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    const int fmt_ok = fapl >= 0 && w_format(fapl) == 0;
    int taken = 0;
    /* registered before the create, so that SIGINT, SIGTERM or SIGHUP right after it removes the file */
    const int claimed = fmt_ok && dp_tmp_claim(tmp);
    o->f = fmt_ok ? w_create(&o->c, tmp, fapl, &taken) : -1;
    if (!taken) { /* ours: from here on an abort removes it (also one a failed create left), and so does a
                     signal */
        o->tmp = tmp;
        if (!claimed) dp_tmp_begin(tmp);
    } else {
        if (claimed) dp_tmp_done(tmp); /* another's file: never removed */
        free(tmp);
    }
    if (!fmt_ok) h5i_seterr(err, errlen, "cannot write %s: setting the file format (HDF5 1.8 to 1.10) failed", path);
    h5i_close(fapl);
    if (o->f < 0) {
        h5io_out_abort(o);
        return -1;
    }
    /* a progress line for a long write (xfer.h: on a terminal rewritten in place, else a plain line
     * every 10 s once it has run 5 s) over the cells, which are nearly all of the file */
    progress_begin(&o->pg, progress, "write", (double)m->ntiles * (double)mesh_cells(m) * sizeof(float) * m->nf, NULL);
    o->c.pg = o->pg.on ? &o->pg : NULL;
    *out = o;
    return 0;
}

int h5io_out_cells(h5io_out_t *o, const mesh_t *m, xfer_src_t *src, char *err, size_t errlen)
{
    /* the mesh's own arrays, in pieces of 256 MiB (DPAMR_TEST_WRITE_PIECE=BYTES, tests: that many) */
    const char *hook = getenv("DPAMR_TEST_WRITE_PIECE");
    const long long forced = hook ? atoll(hook) : 0;
    xfer_src_t host = { .get = host_get, .piece = forced > 0 ? (size_t)forced : (size_t)256 << 20, .ctx = (void *)m };
    o->c.err = err;
    o->c.errlen = errlen;
    o->c.src = src ? src : &host;
    const int rc = w_vtkhdf(&o->c, o->f, m, &o->b);
    o->c.src = NULL;
    o->cells_done = rc == 0;
    /* the progress line ends with the cells (a streamed run prints its levels next) */
    if (rc == 0) progress_end(&o->pg);
    else progress_fail(&o->pg);
    o->c.pg = NULL;
    return rc;
}

int h5io_out_finish(h5io_out_t *o, const mesh_t *m, const h5io_meta_t *meta, char *err, size_t errlen)
{
    o->c.err = err;
    o->c.errlen = errlen;
    int rc = o->cells_done ? 0 : -1;
    if (!o->cells_done) h5i_seterr(err, errlen, "cannot write %s: internal error: /VTKHDF was not written", o->path);
    if (rc == 0) rc = w_dpamr(&o->c, o->f, m, meta);
    /* the metadata is flushed only with room for it (h5i_metadata_room); else the write stops here
     * and the abort, which releases the file's blocks first, closes it */
    if (rc == 0) rc = h5i_metadata_room(o->f, o->tmp, o->path, err, errlen);
    if (rc == 0 && H5Fflush(o->f, H5F_SCOPE_LOCAL) < 0) {
        char why[200];
        h5i_seterr(err, errlen, "cannot write %s: writing %s's metadata failed (%s)", o->path, o->tmp, h5i_reason(why));
        rc = -1;
    }
    if (rc != 0) { /* the file is still open: the abort releases its blocks before closing it */
        h5io_out_abort(o);
        return -1;
    }
    const hid_t f = o->f;
    o->f = -1;
    if (H5Fclose(f) < 0) {
        char why[200];
        h5i_seterr(err, errlen, "cannot write %s: closing %s failed (%s)", o->path, o->tmp, h5i_reason(why));
        rc = -1;
    }
    if (rc == 0 && rename(o->tmp, o->path) != 0) {
        h5i_seterr(err, errlen, "cannot write %s: renaming %s onto it failed: %s", o->path, o->tmp, strerror(errno));
        rc = -1;
    }
    if (rc != 0) {
        if (o->f < 0 && remove(o->tmp) != 0 && errno != ENOENT) { /* say what is left (a folder made read-only) */
            const size_t l = strlen(err);
            snprintf(err + l, errlen > l ? errlen - l : 0, "; its temporary file %s is left (removing it failed: %s)",
                     o->tmp, strerror(errno));
        }
        h5io_out_abort(o);
        return -1;
    }
    dp_tmp_done(o->tmp);
    free(o->tmp);
    o->tmp = NULL;
    h5io_out_abort(o); /* frees the rest: nothing to remove, nothing open */
    return 0;
}

int h5io_write(const char *path, const mesh_t *m, const h5io_meta_t *meta, char *err, size_t errlen)
{
    h5io_out_t *o;
    if (h5io_out_open(path, m, meta && meta->progress, &o, err, errlen) != 0) return -1;
    if (h5io_out_cells(o, m, NULL, err, errlen) != 0) {
        h5io_out_abort(o);
        return -1;
    }
    return h5io_out_finish(o, m, meta, err, errlen);
}

void h5io_init(void)
{
    H5dont_atexit();
}
