/* h5io.c - HDF5 files: VTKHDF OverlappingAMR (for ParaView 5.11) plus the /dpamr group.
 *
 * Layout: docs/format.md (the /VTKHDF part for ParaView and the /dpamr part dpamr reads).
 * Writing goes to PATH.tmp.PID, renamed onto PATH on success. Object time stamps are off, so the
 * same content gives the same bytes. Run timings are attributes: datasets of two runs of one deck
 * are identical. Reading takes only /dpamr and checks it thoroughly; the VTKHDF part is derived.
 *
 * Every function that opens HDF5 handles closes them itself, on every path (goto done). HDF5's
 * automatic error printing is switched off: callers get one message in err.
 */
#include "h5io.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <hdf5.h>
#ifdef H5_HAVE_PARALLEL
#include "../src/agree.h" /* dp_agree: the one agreement helper, shared with src/dist.c */
#endif

/* HDF5 1.12 renamed two calls (the old names are deprecated there). */
#if H5_VERSION_GE(1, 12, 0)
#define DP_H5_IS_HDF5(p) H5Fis_accessible((p), H5P_DEFAULT)
#define DP_H5_RECLAIM(t, s, buf) H5Treclaim((t), (s), H5P_DEFAULT, (buf))
#else
#define DP_H5_IS_HDF5(p) H5Fis_hdf5(p)
#define DP_H5_RECLAIM(t, s, buf) H5Dvlen_reclaim((t), (s), H5P_DEFAULT, (buf))
#endif

#define FORMAT_NAME "dpamr-mesh"
#define FORMAT_VERSION 1
#define GHOST_HIDDEN 32 /* vtkDataSetAttributes::HIDDENCELL */
#define ATTR_STR_MAX (1 << 20)  /* the longest string attribute dpamr reads (its own are < 600 bytes) */
#define DECK_MAX (64 << 20)     /* the longest /dpamr/deck dpamr reads */
#define DEFLATE_MAX_RATIO 1032 /* the most deflate (gzip) can compress: a compressed dataset that
                                  declares more than this many times its stored bytes is damaged */

/* ---- small helpers ----------------------------------------------------------------------- */

/** Close any HDF5 handle (ignores invalid ids). */
static void h5close(hid_t id)
{
    if (id < 0) return;
    switch (H5Iget_type(id)) {
    case H5I_FILE: H5Fclose(id); break;
    case H5I_GROUP: H5Gclose(id); break;
    case H5I_DATASET: H5Dclose(id); break;
    case H5I_ATTR: H5Aclose(id); break;
    case H5I_DATASPACE: H5Sclose(id); break;
    case H5I_DATATYPE: H5Tclose(id); break;
    case H5I_GENPROP_LST: H5Pclose(id); break;
    default: break;
    }
}

/** Format a message into err (never overflows, always terminated). */
static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/** Callback of H5Ewalk2: keep the innermost error description, or the system's reason where a file
 *  driver quoted one ("..., error message = 'No space left on device', ..."). */
static herr_t walk_first(unsigned n, const H5E_error2_t *e, void *data)
{
    static const char tag[] = "error message = '";
    if (!e || !e->desc) return 0;
    const char *sys = strstr(e->desc, tag);
    if (sys) {
        sys += sizeof tag - 1;
        const char *q = strchr(sys, '\'');
        snprintf((char *)data, 200, "%.*s", q ? (int)(q - sys) : 150, sys);
        return 1; /* stop: the system's reason is the one to give */
    }
    if (n == 0) snprintf((char *)data, 200, "%s", e->desc);
    return 0;
}

/** The innermost HDF5 error description (or a generic text); clears the error stack. Call it right
 *  after the failing call: any later HDF5 call (even a close) empties the stack. */
static const char *h5_reason(char *buf)
{
    buf[0] = '\0';
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, walk_first, buf);
    H5Eclear2(H5E_DEFAULT);
    if (!buf[0]) snprintf(buf, 200, "HDF5 call failed");
    return buf;
}

/** Full HDF5 path of loc/name, for messages. */
static void obj_path(hid_t loc, const char *name, char *out, size_t n)
{
    char base[512] = "";
    if (H5Iget_name(loc, base, sizeof base) < 0) base[0] = '\0';
    if (!name) snprintf(out, n, "%s", base);
    else snprintf(out, n, "%s%s%s", base, strcmp(base, "/") == 0 ? "" : "/", name);
}

/** Is a field name usable as an HDF5 link name and in the space-separated list? */
static int name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= DP_NAME_LEN) return 0;
    if (strcmp(s, ".") == 0 || strcmp(s, "..") == 0 || strcmp(s, "vtkGhostType") == 0) return 0;
    for (size_t i = 0; i < n; ++i)
        if ((unsigned char)s[i] <= ' ' || s[i] == '/' || s[i] == 0x7f) return 0;
    return 1;
}

/* ---- writing ----------------------------------------------------------------------------- */

/** Write context: the destination (for messages), the error buffer, and where this process's tiles
 *  go. Without MPI (or with serial HDF5) the process writes the whole mesh: nlevels, level_start and
 *  parent are the mesh's own and offset[] is 0. In a collective write (h5io_write_dist) they are the
 *  global ones and every rank writes its rows of each per-tile dataset. */
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
#ifdef H5_HAVE_PARALLEL
    MPI_Comm comm;             /* the writing ranks (when par) */
#endif
} wctx;

/** Tiles [*s, *e) of m on level L (empty when the part has no such level). */
static void w_lrange(const mesh_t *m, int L, dp_tidx *s, dp_tidx *e)
{
    if (L < m->nlevels) {
        *s = m->level_start[L];
        *e = m->level_start[L + 1];
    } else {
        *s = *e = m->ntiles;
    }
}

/** Record an HDF5 failure on object loc/name, right after the failing call (see h5_reason).
 *  Always returns -1. */
static int w_fail(wctx *c, hid_t loc, const char *name, const char *what)
{
    char where[600], why[200];
    h5_reason(why); /* first: obj_path's own HDF5 call would empty the error stack */
    obj_path(loc, name, where, sizeof where);
    seterr(c->err, c->errlen, "cannot write %s: %s %s failed (%s)", c->path, what, where, why);
    return -1;
}

/** Add to a read-back failure what it means. Always returns -1. */
static int w_lost(wctx *c)
{
    const size_t k = c->err ? strlen(c->err) : 0;
    if (c->err && k + 1 < c->errlen)
        seterr(c->err + k, c->errlen - k, "; the write was reported as done, so the MPI-IO layer lost data (Open MPI "
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
    seterr(c->err, c->errlen, "cannot write %s: %s of dataset %s failed (injected by DPAMR_FAIL_WRITE on rank %d)",
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

/** Object creation property list without time stamps (dataset or group). */
static hid_t w_ocpl(hid_t cls)
{
    hid_t p = H5Pcreate(cls);
    if (p >= 0 && H5Pset_obj_track_times(p, 0) < 0) {
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
            h5close(g);
            g = -1;
        }
    }
    h5close(gcpl);
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
    h5close(a);
    h5close(s);
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
    h5close(t);
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
        h5close(fs);
        h5close(d);
        return -1;
    }
    if (whole) nseg = 1;
    hsize_t step = (hsize_t)((64u << 20) / row > 0 ? (64u << 20) / row : 1), most = 0;
    for (int i = 0; !whole && i < nseg; ++i) most = cnt[i] > most ? cnt[i] : most;
    if (!whole && most < step) step = most; /* a slice buffer no larger than the largest run */
    char *got = malloc((size_t)(whole ? (rank ? dims[0] : 1) : step) * row + 1);
    const char *want = buf;
    int rc = got ? 0 : -1, same = 1;
    if (!got) seterr(c->err, c->errlen, "cannot write %s: out of memory for the read-back", c->path);
    for (int i = 0; rc == 0 && same && i < nseg; ++i) {
        const hsize_t rows = whole ? (rank ? dims[0] : 1) : cnt[i];
        for (hsize_t r = 0; rc == 0 && same && r < rows; r += whole ? rows : step) {
            hsize_t n = whole ? rows : (rows - r < step ? rows - r : step);
            hsize_t start[2] = { (whole ? 0 : fofs[i]) + r, 0 }, count[2] = { n, dims[1] };
            h5close(ms);
            ms = rank ? H5Screate_simple(rank, count, NULL) : H5Screate(H5S_SCALAR);
            if (ms < 0 || (rank && H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) < 0) ||
                H5Dread(d, mt, ms, rank ? fs : H5S_ALL, c->dxpl, got) < 0) {
                rc = w_fail_lost(c, loc, name, "reading back dataset");
            } else if (memcmp(got, want, (size_t)n * row) != 0) {
                char where[600];
                obj_path(loc, name, where, sizeof where);
                seterr(c->err, c->errlen, "cannot write %s: reading back %s gave other bytes than were written",
                       c->path, where);
                rc = w_lost(c);
                same = 0;
            }
            want += (size_t)n * row;
        }
    }
    free(got);
    h5close(ms);
    h5close(fs);
    h5close(d);
    return rc;
}

/** The collective steps of writing dataset loc/name (no time stamps), each agreed on by every rank
 *  (see w_sync): the local preparation (ok: the caller's spaces and types were made), the create
 *  (type ft over file space fs), and, when the dataset has elements (write), one H5Dwrite of buf
 *  (memory type mt, memory space ms) into fs's selection. */
static int w_put(wctx *c, hid_t loc, const char *name, int ok, hid_t ft, hid_t mt, hid_t ms, hid_t fs, int write,
                 const void *buf)
{
    hid_t dcpl = w_ocpl(H5P_DATASET_CREATE), d = -1;
    ok = ok && dcpl >= 0 && ft >= 0 && mt >= 0;
    int rc = w_sync(c, ok ? 0 : w_fail(c, loc, name, "preparing dataset"));
    if (rc == 0) { /* before and after each collective call: all ranks or none make it */
        if ((d = H5Dcreate2(loc, name, ft, fs, H5P_DEFAULT, dcpl, H5P_DEFAULT)) < 0)
            rc = w_fail(c, loc, name, "creating dataset");
        else if (w_injected(c, "create", name)) rc = -1;
        rc = w_sync(c, rc);
    }
    if (rc == 0) {
        if (write && H5Dwrite(d, mt, ms, fs, c->dxpl, buf) < 0) rc = w_fail(c, loc, name, "writing dataset");
        else if (w_injected(c, "write", name)) rc = -1;
        rc = w_sync(c, rc);
    }
    h5close(d);
    h5close(dcpl);
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
    const int rc = w_put(c, loc, name, ok, ft, mt, s, s, np > 0, buf);
    h5close(s);
    return rc;
}

/** Per-tile dataset loc/name of global shape dims (dims[0] rows): this process writes nseg runs of
 *  rows, run i at file row fofs[i], cnt[i] rows, taken one after the other from buf. */
static int w_rows(wctx *c, hid_t loc, const char *name, hid_t ft, hid_t mt, int rank, const hsize_t *dims, int nseg,
                  const hsize_t *fofs, const hsize_t *cnt, const void *buf)
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
    const int rc = w_put(c, loc, name, ok, ft, mt, ms, fs, dims[0] > 0, buf);
    h5close(ms);
    h5close(fs);
    return rc;
}

/** Scalar fixed-length string dataset. */
static int w_dset_str(wctx *c, hid_t loc, const char *name, const char *s)
{
    hid_t t = w_strtype(s); /* -1 on failure: the leaf reports it, after the same agreements */
    int rc = w_dset(c, loc, name, t, t, 0, NULL, s[0] ? s : "\0");
    h5close(t);
    return rc;
}

/** Fill AMRBox rows [ilo,ihi,jlo,jhi,klo,khi] for tiles [s,e). -1 when an index passes int32. */
static int w_boxes(const mesh_t *m, dp_tidx s, dp_tidx e, int32_t *box)
{
    const int64_t B = m->B;
    for (dp_tidx t = s; t < e; ++t) {
        int32_t *r = box + 6 * (t - s);
        for (int a = 0; a < 3; ++a) {
            const int64_t lo = a < m->dim ? (int64_t)m->coord[3 * t + a] * B : 0;
            const int64_t hi = a < m->dim ? lo + B - 1 : 0;
            if (lo < 0 || hi > INT32_MAX) return -1;
            r[2 * a] = (int32_t)lo;
            r[2 * a + 1] = (int32_t)hi;
        }
    }
    return 0;
}

/** Fill vtkGhostType for tiles [s,e): 32 on cells whose octant has a child. */
static void w_ghost(const mesh_t *m, dp_tidx s, dp_tidx e, const uint8_t *oct, uint8_t *g)
{
    const size_t cells = (size_t)mesh_cells(m);
    for (dp_tidx t = s; t < e; ++t) {
        uint8_t *q = g + (size_t)(t - s) * cells;
        const unsigned cm = m->childmask[t];
        if (cm == 0) {
            memset(q, 0, cells);
            continue;
        }
        for (size_t i = 0; i < cells; ++i) q[i] = (cm >> oct[i] & 1u) ? GHOST_HIDDEN : 0;
    }
}

/** Octant of every cell of a tile (x fastest). */
static void w_octants(const mesh_t *m, uint8_t *oct)
{
    const int B = m->B, nz = m->dim == 3 ? B : 1;
    for (int z = 0; z < nz; ++z)
        for (int y = 0; y < B; ++y)
            for (int x = 0; x < B; ++x) oct[x + B * (y + B * z)] = (uint8_t)dp_octant_of(B, x, y, z);
}

/** CellData of one level: every field, then vtkGhostType. */
static int w_celldata(wctx *c, hid_t lev, const mesh_t *m, int L, uint8_t *ghost, const uint8_t *oct)
{
    dp_tidx s, e;
    w_lrange(m, L, &s, &e);
    const size_t cells = (size_t)mesh_cells(m);
    const hsize_t n = (hsize_t)(c->level_start[L + 1] - c->level_start[L]) * cells;
    const hsize_t fofs = (hsize_t)c->offset[L] * cells, cnt = (hsize_t)(e - s) * cells;
    hid_t cd = w_group(c, lev, "CellData");
    if (cd < 0) return -1;
    int rc = 0;
    for (int f = 0; f < m->nf && rc == 0; ++f)
        rc = w_rows(c, cd, m->field_name[f], H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, 1, &n, 1, &fofs, &cnt,
                    m->field[f] + (size_t)s * cells);
    if (rc == 0) {
        w_ghost(m, s, e, oct, ghost);
        rc = w_rows(c, cd, "vtkGhostType", H5T_STD_U8LE, H5T_NATIVE_UINT8, 1, &n, 1, &fofs, &cnt, ghost);
    }
    H5Gclose(cd);
    return rc;
}

/** /VTKHDF/LevelL: Spacing, AMRBox, CellData, empty PointData and FieldData. */
static int w_level(wctx *c, hid_t vtk, const mesh_t *m, int L, int32_t *box, uint8_t *ghost, const uint8_t *oct)
{
    char name[32];
    snprintf(name, sizeof name, "Level%d", L);
    dp_tidx s, e;
    w_lrange(m, L, &s, &e);
    hid_t lev = w_group(c, vtk, name);
    if (lev < 0) return -1;
    int rc = -1;
    double h = m->h0;
    for (int l = 0; l < L; ++l) h *= 0.5;
    const double sp[3] = { h, h, h };
    if (w_attr_vec(c, lev, "Spacing", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 3, sp) != 0) goto done;
    w_boxes(m, s, e, box); /* the int32 range was checked before the file was made */
    const hsize_t bd[2] = { (hsize_t)(c->level_start[L + 1] - c->level_start[L]), 6 };
    const hsize_t fofs = (hsize_t)c->offset[L], cnt = (hsize_t)(e - s);
    if (w_rows(c, lev, "AMRBox", H5T_STD_I32LE, H5T_NATIVE_INT32, 2, bd, 1, &fofs, &cnt, box) != 0) goto done;
    if (w_celldata(c, lev, m, L, ghost, oct) != 0) goto done;
    if (w_empty_group(c, lev, "PointData") != 0 || w_empty_group(c, lev, "FieldData") != 0) goto done;
    rc = 0;
done:
    H5Gclose(lev);
    return rc;
}

/** Tiles in the largest level (sizes the scratch buffers). */
static dp_tidx w_max_level_tiles(const mesh_t *m)
{
    dp_tidx mx = 0;
    for (int L = 0; L < m->nlevels; ++L)
        if (m->level_start[L + 1] - m->level_start[L] > mx) mx = m->level_start[L + 1] - m->level_start[L];
    return mx;
}

/** Levels written to /VTKHDF: trailing empty levels are left out, because ParaView 5.11's reader
 *  aborts on them (vtkAMRBox::Refine assertion: an empty level has no spacing, so its refinement
 *  ratio is 0). /dpamr keeps the full nlevels. Level 0 is always written. */
static int w_vtk_levels(const wctx *c)
{
    int n = c->nlevels;
    while (n > 1 && c->level_start[n] == c->level_start[n - 1]) --n;
    return n;
}

/** Scratch buffers of the /VTKHDF writer, allocated before the file is created (so that in a
 *  collective write no rank can fail alone in the middle of it). */
typedef struct {
    int32_t *box;
    uint8_t *ghost, *oct;
} wbuf;

static void w_buf_free(wbuf *b)
{
    free(b->box);
    free(b->ghost);
    free(b->oct);
}

/** Allocate the scratch buffers and check that every AMRBox index fits int32. 0, or -1 with err. */
static int w_buf_alloc(wctx *c, const mesh_t *m, wbuf *b)
{
    const size_t cells = (size_t)mesh_cells(m);
    const dp_tidx mx = w_max_level_tiles(m);
    b->box = malloc((size_t)(mx > 0 ? mx : 1) * 6 * sizeof *b->box);
    b->ghost = malloc((size_t)(mx > 0 ? mx : 1) * cells);
    b->oct = malloc(cells);
    if (!b->box || !b->ghost || !b->oct) {
        w_buf_free(b);
        seterr(c->err, c->errlen, "cannot write %s: out of memory", c->path);
        return -1;
    }
    for (int L = 0; L < m->nlevels; ++L) /* a level fits the box buffer: at most mx tiles */
        if (w_boxes(m, m->level_start[L], m->level_start[L + 1], b->box) != 0) {
            w_buf_free(b);
            seterr(c->err, c->errlen, "cannot write %s: /VTKHDF/Level%d/AMRBox: a cell index passes the int32 range",
                   c->path, L);
            return -1;
        }
    w_octants(m, b->oct);
    return 0;
}

/** The /VTKHDF group (OverlappingAMR). */
static int w_vtkhdf(wctx *c, hid_t file, const mesh_t *m, wbuf *b)
{
    hid_t vtk = w_group(c, file, "VTKHDF");
    int rc = -1;
    if (vtk < 0) goto done;
    const int32_t ver[2] = { 1, 0 };
    if (w_attr_vec(c, vtk, "Version", H5T_STD_I32LE, H5T_NATIVE_INT32, 2, ver) != 0) goto done;
    if (w_attr_str(c, vtk, "Type", "OverlappingAMR") != 0) goto done;
    if (w_attr_vec(c, vtk, "Origin", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 3, m->origin) != 0) goto done;
    for (int L = 0; L < w_vtk_levels(c); ++L)
        if (w_level(c, vtk, m, L, b->box, b->ghost, b->oct) != 0) goto done;
    rc = 0;
done:
    h5close(vtk);
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

/** /dpamr/tiles and /dpamr/fields: level L of this process goes to global rows
 *  level_start[L] + offset[L].. (the whole mesh when writing alone). */
static int w_dpamr_tiles(wctx *c, hid_t g, const mesh_t *m)
{
    const hsize_t n = (hsize_t)c->level_start[c->nlevels], n3[2] = { n, 3 }, nc[2] = { n, (hsize_t)mesh_cells(m) };
    hsize_t fofs[DP_MAX_LEVELS], cnt[DP_MAX_LEVELS];
    for (int L = 0; L < c->nlevels; ++L) {
        dp_tidx s, e;
        w_lrange(m, L, &s, &e);
        fofs[L] = (hsize_t)(c->level_start[L] + c->offset[L]);
        cnt[L] = (hsize_t)(e - s);
    }
    const int ns = c->nlevels;
    int rc = -1;
    hid_t tg = w_group(c, g, "tiles"), fg = -1;
    if (tg < 0) goto done;
    if (w_rows(c, tg, "level", H5T_STD_I32LE, H5T_NATIVE_INT32, 1, &n, ns, fofs, cnt, m->level) ||
        w_rows(c, tg, "coord", H5T_STD_I32LE, H5T_NATIVE_INT32, 2, n3, ns, fofs, cnt, m->coord) ||
        w_rows(c, tg, "key", H5T_STD_U64LE, H5T_NATIVE_UINT64, 1, &n, ns, fofs, cnt, m->key) ||
        w_rows(c, tg, "parent", H5T_STD_I64LE, H5T_NATIVE_INT64, 1, &n, ns, fofs, cnt, c->parent) ||
        w_rows(c, tg, "childmask", H5T_STD_U8LE, H5T_NATIVE_UINT8, 1, &n, ns, fofs, cnt, m->childmask))
        goto done;
    fg = w_group(c, g, "fields");
    if (fg < 0) goto done;
    for (int f = 0; f < m->nf; ++f)
        if (w_rows(c, fg, m->field_name[f], H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, 2, nc, ns, fofs, cnt, m->field[f]))
            goto done;
    const hsize_t nl = (hsize_t)c->nlevels + 1;
    if (w_dset(c, g, "level_start", H5T_STD_I64LE, H5T_NATIVE_INT64, 1, &nl, c->level_start)) goto done;
    rc = 0;
done:
    h5close(fg);
    h5close(tg);
    return rc;
}

/** The memory type of a row of /dpamr/provenance/ranks: h5io_rank_t as the compiler lays it out. */
static hid_t rank_mtype(void)
{
    hid_t mt = H5Tcreate(H5T_COMPOUND, sizeof(h5io_rank_t));
    const int ok = mt >= 0 && H5Tinsert(mt, "rank", HOFFSET(h5io_rank_t, rank), H5T_NATIVE_INT32) >= 0 &&
        H5Tinsert(mt, "device", HOFFSET(h5io_rank_t, device), H5T_NATIVE_INT32) >= 0 &&
        H5Tinsert(mt, "root_tiles", HOFFSET(h5io_rank_t, root_tiles), H5T_NATIVE_INT64) >= 0 &&
        H5Tinsert(mt, "tiles", HOFFSET(h5io_rank_t, tiles), H5T_NATIVE_INT64) >= 0 &&
        H5Tinsert(mt, "cells", HOFFSET(h5io_rank_t, cells), H5T_NATIVE_INT64) >= 0 &&
        H5Tinsert(mt, "refine_ms", HOFFSET(h5io_rank_t, refine_ms), H5T_NATIVE_DOUBLE) >= 0 &&
        H5Tinsert(mt, "write_ms", HOFFSET(h5io_rank_t, write_ms), H5T_NATIVE_DOUBLE) >= 0;
    if (!ok) {
        h5close(mt);
        return -1;
    }
    return mt;
}

/** /dpamr/provenance/ranks: the per-rank table, a compound dataset of h5io_rank_t rows. */
static int w_ranks(wctx *c, hid_t loc, int n, const h5io_rank_t *rows)
{
    const size_t fsize = 4 + 4 + 8 * 5;
    hid_t ft = H5Tcreate(H5T_COMPOUND, fsize), mt = rank_mtype();
    /* file type: packed little-endian; memory type: the struct as the compiler lays it out */
    const int ok =
        ft >= 0 && mt >= 0 && H5Tinsert(ft, "rank", 0, H5T_STD_I32LE) >= 0 &&
        H5Tinsert(ft, "device", 4, H5T_STD_I32LE) >= 0 && H5Tinsert(ft, "root_tiles", 8, H5T_STD_I64LE) >= 0 &&
        H5Tinsert(ft, "tiles", 16, H5T_STD_I64LE) >= 0 && H5Tinsert(ft, "cells", 24, H5T_STD_I64LE) >= 0 &&
        H5Tinsert(ft, "refine_ms", 32, H5T_IEEE_F64LE) >= 0 && H5Tinsert(ft, "write_ms", 40, H5T_IEEE_F64LE) >= 0;
    if (!ok) { /* the leaf reports the missing type, after the same agreements as on the other ranks */
        h5close(ft);
        ft = -1;
    }
    const hsize_t dims = (hsize_t)n;
    const int rc = w_dset(c, loc, "ranks", ft, mt, 1, &dims, rows);
    h5close(ft);
    h5close(mt);
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

/** The /dpamr group. */
static int w_dpamr(wctx *c, hid_t file, const mesh_t *m, const h5io_meta_t *mt)
{
    hid_t g = w_group(c, file, "dpamr");
    if (g < 0) return -1;
    int rc = -1;
    if (w_dpamr_attrs(c, g, m) || w_dpamr_tiles(c, g, m)) goto done;
    if (mt && mt->deck_text && w_dset_str(c, g, "deck", mt->deck_text)) goto done;
    if (mt && w_provenance(c, g, mt)) goto done;
    if (mt && mt->valid && w_validation(c, g, mt->valid)) goto done;
    rc = 0;
done:
    H5Gclose(g);
    return rc;
}

/** Checks that keep the writer from reading out of bounds or writing an unusable layout. */
static int w_check_mesh(wctx *c, const mesh_t *m)
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
        if (!name_ok(m->field_name[f]))
            bad = "a field name is empty, too long or has a space, '/' or control character";
        for (int g = 0; !bad && g < f; ++g)
            if (strcmp(m->field_name[f], m->field_name[g]) == 0) bad = "two fields have the same name";
    }
    if (!bad) return 0;
    seterr(c->err, c->errlen, "cannot write %s: invalid mesh: %s", c->path, bad);
    return -1;
}

/** Raw bytes of the datasets of a file of ntiles tiles: a lower bound on its size. Per tile: AMRBox
 *  24, level 4, coord 12, key 8, parent 8, childmask 1; per cell: every field twice (/VTKHDF CellData
 *  and /dpamr/fields, float32) and the ghost byte. */
static double w_raw_bytes(const mesh_t *m, dp_tidx ntiles)
{
    return (double)ntiles * (57.0 + (double)mesh_cells(m) * (8.0 * m->nf + 1.0));
}

/** Before the file is made: the directory of path takes a new file, and its file system has room
 *  for bytes. A full disk found after minutes of writing wastes them, and MPI-IO gives no reason for
 *  either failure. 0, or -1 with err set. */
static int w_room(const char *path, const char *tmp, double bytes, char *err, size_t errlen)
{
    char *dir = strdup(path);
    if (!dir) {
        seterr(err, errlen, "cannot write %s: out of memory", path);
        return -1;
    }
    char *slash = strrchr(dir, '/');
    if (slash) *(slash == dir ? slash + 1 : slash) = '\0';
    const char *d = slash ? dir : ".";
    struct statvfs sv;
    int rc = 0;
    if (access(d, W_OK) != 0) {
        seterr(err, errlen, "cannot write %s: cannot create %s: %s", path, tmp, strerror(errno));
        rc = -1;
    } else if (statvfs(d, &sv) == 0 && (double)sv.f_bavail * (double)sv.f_frsize < bytes) {
        seterr(err, errlen, "cannot write %s: it needs at least %.1f MB and the file system of %s has %.1f MB free",
               path, bytes / 1e6, d, (double)sv.f_bavail * (double)sv.f_frsize / 1e6);
        rc = -1;
    }
    free(dir);
    return rc;
}

/** The file written is renamed onto path: only a regular file (or nothing) may be replaced there,
 *  never a symbolic link, device, FIFO or directory. 0, or -1 with err set. */
static int w_target_ok(const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(path, &st) != 0 || S_ISREG(st.st_mode)) return 0;
    seterr(err, errlen, "cannot write %s: it exists and is not a regular file (%s): dpamr replaces only a regular file",
           path, S_ISLNK(st.st_mode) ? "a symbolic link" : S_ISDIR(st.st_mode) ? "a directory" : "a device, FIFO or socket");
    return -1;
}

/** The file format written: the HDF5 1.8 format or newer, at most 1.10's (ParaView 5.11's HDF5 reads
 *  it), so that every object header, the superblock and the B-trees carry checksums and a damaged
 *  header is reported by the library instead of being walked. 0 or -1. */
static int w_format(hid_t fapl)
{
    return H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_V110) < 0 ? -1 : 0;
}

/** Create the temporary file; message with errno when the system refused it. */
static hid_t w_create(wctx *c, const char *tmp, hid_t fapl)
{
    hid_t fcpl = w_ocpl(H5P_FILE_CREATE); /* root group without time stamps too */
    errno = 0;
    hid_t f = fcpl < 0 ? -1 : H5Fcreate(tmp, H5F_ACC_TRUNC, fcpl, fapl);
    const int e = errno;
    h5close(fcpl);
    if (f < 0) {
        char why[200];
        h5_reason(why);
        seterr(c->err, c->errlen, "cannot write %s: cannot create %s: %s", c->path, tmp, e ? strerror(e) : why);
    }
    return f;
}

int h5io_write(const char *path, const mesh_t *m, const h5io_meta_t *meta, char *err, size_t errlen)
{
    static const dp_tidx zero[DP_MAX_LEVELS] = { 0 };
    wctx c = { .path = path, .err = err, .errlen = errlen, .dxpl = H5P_DEFAULT, .nlevels = m->nlevels,
               .level_start = m->level_start, .offset = zero, .parent = m->parent };
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    if (w_check_mesh(&c, m) != 0) return -1;
    wbuf b;
    if (w_buf_alloc(&c, m, &b) != 0) return -1;
    const size_t tl = strlen(path) + 32;
    char *tmp = malloc(tl);
    if (!tmp) {
        w_buf_free(&b);
        seterr(err, errlen, "cannot write %s: out of memory", path);
        return -1;
    }
    snprintf(tmp, tl, "%s.tmp.%ld", path, (long)getpid());
    if (w_target_ok(path, err, errlen) != 0 || w_room(path, tmp, w_raw_bytes(m, m->ntiles), err, errlen) != 0) {
        free(tmp);
        w_buf_free(&b);
        return -1;
    }
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    const int fmt_ok = fapl >= 0 && w_format(fapl) == 0;
    hid_t f = fmt_ok ? w_create(&c, tmp, fapl) : -1;
    if (!fmt_ok) seterr(err, errlen, "cannot write %s: setting the file format (HDF5 1.8 to 1.10) failed", path);
    h5close(fapl);
    int rc = f < 0 ? -1 : w_vtkhdf(&c, f, m, &b);
    if (rc == 0) rc = w_dpamr(&c, f, m, meta);
    if (f >= 0 && H5Fclose(f) < 0 && rc == 0) {
        char why[200];
        seterr(err, errlen, "cannot write %s: closing %s failed (%s)", path, tmp, h5_reason(why));
        rc = -1;
    }
    if (rc == 0 && rename(tmp, path) != 0) {
        seterr(err, errlen, "cannot write %s: renaming %s onto it failed: %s", path, tmp, strerror(errno));
        rc = -1;
    }
    if (rc != 0) remove(tmp); /* also when the create failed part-way (a full disk) */
    free(tmp);
    w_buf_free(&b);
    return rc;
}

#ifdef H5_HAVE_PARALLEL
int h5io_parallel(void) { return 1; }

/** After a collective open or create failed on some rank: where it worked on others, their handle
 *  cannot be closed (the close is collective) and HDF5 would close it, collectively, in
 *  MPI_Finalize: a hang. Such a run ends here, with the agreed message, through MPI_Abort. */
static void w_open_all_or_abort(MPI_Comm comm, hid_t f, const char *err)
{
    int mine = f >= 0, any = 0, rank = 0;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm);
    if (!any) return;
    MPI_Comm_rank(comm, &rank);
    if (rank == 0) {
        fprintf(stderr, "dpamr: error: %s (the file is open on some ranks only and cannot be closed: aborting)\n", err);
        fflush(stderr);
    }
    MPI_Abort(comm, 1);
}

/** The read-back pass of a collective write: the same traversal as the write, opening instead of
 *  creating, and every rank comparing the rows it wrote (rank 0 also the small datasets). Open MPI
 *  4.1's OMPIO, its default MPI-IO, returns success from a collective write that hit a full disk
 *  (it prints "mca_fbtl_posix_pwritev: error in writev" and goes on): the file is then short of
 *  data and nothing else would notice. The reads mostly come from the page cache. 0, or -1 on every
 *  rank with the message. */
static int w_read_back(wctx *c, const char *tmp, hid_t fapl, const mesh_t *part, const h5io_meta_t *meta, wbuf *b)
{
    wctx v = *c;
    v.verify = 1;
    v.dxpl = H5Pcreate(H5P_DATASET_XFER); /* independent: each rank reads its own rows */
    if (v.dxpl < 0) seterr(c->err, c->errlen, "cannot write %s: making the read-back's transfer list failed", c->path);
    int rc = dp_agree(c->comm, v.dxpl >= 0, c->err, c->errlen); /* H5Fopen is collective: all or none */
    hid_t f = -1;
    if (rc == 0) {
        f = H5Fopen(tmp, H5F_ACC_RDONLY, fapl);
        if (f < 0) {
            char why[200];
            seterr(c->err, c->errlen, "cannot write %s: opening %s to read it back failed (%s)", c->path, tmp,
                   h5_reason(why));
            w_lost(c);
        }
        rc = dp_agree(c->comm, f >= 0, c->err, c->errlen);
        if (rc != 0) w_open_all_or_abort(c->comm, f, c->err);
    }
    if (rc == 0) {
        rc = w_vtkhdf(&v, f, part, b);
        if (rc == 0) rc = w_dpamr(&v, f, part, meta);
        H5Fclose(f);
    }
    h5close(v.dxpl);
    return rc;
}

int h5io_write_dist(const char *path, const mesh_t *part, const h5io_dist_t *dist, const h5io_meta_t *meta, char *err,
                    size_t errlen)
{
    MPI_Comm comm = *(const MPI_Comm *)dist->comm;
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    wctx c = { .path = path, .err = err, .errlen = errlen, .par = 1, .rank = rank, .dxpl = -1,
               .nlevels = dist->nlevels, .level_start = dist->level_start, .offset = dist->offset,
               .parent = dist->parent, .comm = comm };
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    /* the checks of w_check_mesh on the global level index; the part's own arrays next */
    mesh_t head = *part;
    head.nlevels = dist->nlevels;
    head.ntiles = dist->level_start[dist->nlevels];
    head.cap = head.ntiles;
    memcpy(head.level_start, dist->level_start, sizeof(dp_tidx) * (size_t)(dist->nlevels + 1));
    int ok = dist->nlevels >= 1 && dist->nlevels <= DP_MAX_LEVELS && w_check_mesh(&c, &head) == 0;
    wbuf b = { 0 };
    if (ok) ok = w_buf_alloc(&c, part, &b) == 0;
    /* every rank names the same temporary file: rank 0's pid */
    long pid = (long)getpid();
    MPI_Bcast(&pid, 1, MPI_LONG, 0, comm);
    const size_t tl = strlen(path) + 32;
    char *tmp = malloc(tl);
    hid_t fapl = -1, f = -1;
    if (ok && !tmp) ok = (seterr(err, errlen, "cannot write %s: out of memory", path), 0);
    if (ok) snprintf(tmp, tl, "%s.tmp.%ld", path, pid);
    if (ok && rank == 0)
        ok = w_target_ok(path, err, errlen) == 0 && w_room(path, tmp, w_raw_bytes(part, head.ntiles), err, errlen) == 0;
    /* H5Pset_fapl_mpio duplicates the communicator, a collective: every rank or none gets there */
    if (dp_agree(comm, ok, err, errlen) != 0) {
        free(tmp);
        w_buf_free(&b);
        return -1;
    }
    fapl = H5Pcreate(H5P_FILE_ACCESS);
    c.dxpl = H5Pcreate(H5P_DATASET_XFER);
    const int mpio = fapl >= 0 && H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL) >= 0 && /* called where fapl exists */
                     w_format(fapl) == 0;
    if (!mpio || c.dxpl < 0 || H5Pset_dxpl_mpio(c.dxpl, H5FD_MPIO_COLLECTIVE) < 0 ||
        H5Pset_all_coll_metadata_ops(fapl, 1) < 0 || H5Pset_coll_metadata_write(fapl, 1) < 0)
        ok = (seterr(err, errlen, "cannot write %s: setting up parallel HDF5 (MPI-IO) failed", path), 0);
    int rc = -1;
    if (dp_agree(comm, ok, err, errlen) == 0) {
        f = w_create(&c, tmp, fapl); /* collective */
        if (dp_agree(comm, f >= 0, err, errlen) != 0) {
            if (rank == 0) remove(tmp); /* a create that failed part-way (a full disk) leaves a file */
            w_open_all_or_abort(comm, f, err);
        } else {
            /* collective from here: every rank makes the same calls, and the leaf writers agree
             * around each collective call (w_sync), so a failure on one rank stops all of them at the
             * same call; rc is then -1 on every rank, already agreed */
            rc = w_vtkhdf(&c, f, part, &b);
            if (rc == 0) rc = w_dpamr(&c, f, part, meta);
            const int closed = H5Fclose(f) >= 0; /* collective, on every rank whatever rc is */
            if (rc == 0) {
                char why[200];
                if (!closed) seterr(err, errlen, "cannot write %s: closing %s failed (%s)", path, tmp, h5_reason(why));
                rc = dp_agree(comm, closed, err, errlen);
            }
            if (rc == 0) rc = w_read_back(&c, tmp, fapl, part, meta, &b);
            if (rc == 0) {
                ok = rank != 0 || rename(tmp, path) == 0;
                if (!ok)
                    seterr(err, errlen, "cannot write %s: renaming %s onto it failed: %s", path, tmp, strerror(errno));
                rc = dp_agree(comm, ok, err, errlen);
            }
            if (rc != 0 && rank == 0) remove(tmp);
        }
    }
    h5close(fapl);
    h5close(c.dxpl);
    free(tmp);
    w_buf_free(&b);
    return rc;
}
#else
int h5io_parallel(void) { return 0; }

int h5io_write_dist(const char *path, const mesh_t *part, const h5io_dist_t *dist, const h5io_meta_t *meta, char *err,
                    size_t errlen)
{
    (void)part, (void)dist, (void)meta;
    seterr(err, errlen, "cannot write %s collectively: this HDF5 has no parallel I/O", path);
    return -1;
}
#endif

/* ---- reading ----------------------------------------------------------------------------- */

/** Read context: the file name (for messages), the error buffer, the /dpamr group. */
typedef struct {
    const char *path;
    char *err;
    size_t errlen;
    hid_t g;           /* the group r_dset and r_read look in (/dpamr unless said otherwise) */
    const char *gname; /* its HDF5 path, for messages */
} rctx;

/** "PATH: message". Always returns -1. */
static int rfail(rctx *c, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    seterr(c->err, c->errlen, "%s: %s", c->path, msg);
    H5Eclear2(H5E_DEFAULT);
    return -1;
}

/** Expected element types of datasets. */
typedef enum { T_I32, T_I64, T_U64, T_U8, T_F32, T_F64 } rtype;

static const char *rtype_name(rtype t)
{
    static const char *n[] = { "int32", "int64", "uint64", "uint8", "float32", "float64" };
    return n[t];
}

/** Describe an HDF5 type in words ("int32", "float64", "string", ...). */
static void type_name(hid_t t, char *out, size_t n)
{
    const H5T_class_t cl = H5Tget_class(t);
    const size_t sz = H5Tget_size(t);
    if (cl == H5T_INTEGER)
        snprintf(out, n, "%sint%zu", H5Tget_sign(t) == H5T_SGN_NONE ? "u" : "", 8 * sz);
    else if (cl == H5T_FLOAT) snprintf(out, n, "float%zu", 8 * sz);
    else if (cl == H5T_STRING) snprintf(out, n, "string");
    else if (cl == H5T_COMPOUND) snprintf(out, n, "compound");
    else if (cl == H5T_ARRAY) snprintf(out, n, "array");
    else if (cl == H5T_ENUM) snprintf(out, n, "enum");
    else snprintf(out, n, "a non-numeric type");
}

/** Does file type t match the expected element type exactly? */
static int type_is(hid_t t, rtype want)
{
    static const H5T_class_t cl[] = { H5T_INTEGER, H5T_INTEGER, H5T_INTEGER, H5T_INTEGER, H5T_FLOAT, H5T_FLOAT };
    static const size_t sz[] = { 4, 8, 8, 1, 4, 8 };
    if (H5Tget_class(t) != cl[want] || H5Tget_size(t) != sz[want]) return 0;
    if (cl[want] != H5T_INTEGER) return 1;
    return (H5Tget_sign(t) == H5T_SGN_NONE) == (want == T_U64 || want == T_U8);
}

static hid_t rtype_mem(rtype t)
{
    switch (t) {
    case T_I32: return H5T_NATIVE_INT32;
    case T_I64: return H5T_NATIVE_INT64;
    case T_U64: return H5T_NATIVE_UINT64;
    case T_U8: return H5T_NATIVE_UINT8;
    case T_F64: return H5T_NATIVE_DOUBLE;
    default: return H5T_NATIVE_FLOAT;
    }
}

/** "(10,3)" or "()" for a scalar. */
static void shape_str(int rank, const hsize_t *d, char *out, size_t n)
{
    size_t k = (size_t)snprintf(out, n, "(");
    for (int i = 0; i < rank && k < n; ++i)
        k += (size_t)snprintf(out + k, n - k, "%s%llu", i ? "," : "", (unsigned long long)d[i]);
    if (k < n) snprintf(out + k, n - k, ")");
}

/** Does loc/name exist as a link? Intermediate groups must exist (check them first). */
static int r_has(hid_t loc, const char *name)
{
    htri_t e = H5Lexists(loc, name, H5P_DEFAULT);
    H5Eclear2(H5E_DEFAULT);
    return e > 0;
}

/** Open /dpamr/rel: must exist, be a dataset of type want with the given rank; dims[i] of
 *  (hsize_t)-1 accept any extent and receive the actual one. Returns the dataset or -1. */
static hid_t r_dset(rctx *c, const char *rel, rtype want, int rank, hsize_t *dims)
{
    hid_t d = -1, t = -1, s = -1;
    char tn[32], got[96], want_s[96];
    hsize_t ad[8];
    int ok = 0;
    if (!r_has(c->g, rel)) return rfail(c, "missing dataset %s/%s", c->gname, rel);
    d = H5Dopen2(c->g, rel, H5P_DEFAULT);
    if (d < 0) return rfail(c, "%s/%s is not a dataset", c->gname, rel);
    t = H5Dget_type(d);
    s = H5Dget_space(d);
    if (t < 0 || s < 0) { rfail(c, "cannot read the type and shape of %s/%s", c->gname, rel); goto done; }
    if (!type_is(t, want)) {
        type_name(t, tn, sizeof tn);
        rfail(c, "%s/%s has type %s, expected %s", c->gname, rel, tn, rtype_name(want));
        goto done;
    }
    int r = H5Sget_simple_extent_type(s) == H5S_NULL ? -1 : H5Sget_simple_extent_ndims(s);
    if (r < 0 || r > 8 || H5Sget_simple_extent_dims(s, ad, NULL) != r) r = -1;
    int match = r == rank;
    for (int i = 0; match && i < rank; ++i)
        if (dims[i] != (hsize_t)-1 && dims[i] != ad[i]) match = 0;
    if (!match) {
        shape_str(r < 0 ? 0 : r, ad, got, sizeof got);
        int k = snprintf(want_s, sizeof want_s, "(");
        for (int i = 0; i < rank; ++i)
            k += dims[i] == (hsize_t)-1 ? snprintf(want_s + k, sizeof want_s - (size_t)k, "%sn", i ? "," : "")
                                        : snprintf(want_s + k, sizeof want_s - (size_t)k, "%s%llu", i ? "," : "",
                                                   (unsigned long long)dims[i]);
        snprintf(want_s + k, sizeof want_s - (size_t)k, ")");
        rfail(c, "%s/%s has shape %s, expected %s", c->gname, rel, r < 0 ? "(empty dataspace)" : got, want_s);
        goto done;
    }
    for (int i = 0; i < rank; ++i) dims[i] = ad[i];
    ok = 1;
done:
    h5close(t);
    h5close(s);
    if (!ok) {
        h5close(d);
        return -1;
    }
    return d;
}

/** Read all of /dpamr/rel (type and shape checked as in r_dset) into buf. */
static int r_read(rctx *c, const char *rel, rtype want, int rank, const hsize_t *dims, void *buf)
{
    hsize_t d[8];
    hsize_t np = 1;
    for (int i = 0; i < rank; ++i) {
        d[i] = dims[i];
        np *= dims[i];
    }
    hid_t ds = r_dset(c, rel, want, rank, d);
    if (ds < 0) return -1;
    int rc = 0;
    if (np > 0 && H5Dread(ds, rtype_mem(want), H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
        rc = rfail(c, "cannot read %s/%s (damaged file?)", c->gname, rel);
    H5Dclose(ds);
    return rc;
}

/** Number of elements of a dataspace of rank 0 (1) or 1; -1 for a higher rank or an empty (null)
 *  dataspace, which holds no value at all. */
static hssize_t r_vec_len(hid_t s)
{
    if (H5Sget_simple_extent_type(s) != H5S_SCALAR && H5Sget_simple_extent_type(s) != H5S_SIMPLE) return -1;
    const int r = H5Sget_simple_extent_ndims(s);
    if (r == 0) return 1;
    if (r != 1) return -1;
    return H5Sget_simple_extent_npoints(s);
}

/** Open attribute loc@name, or -1 with "missing attribute obj@name" (the error stack silenced). */
static hid_t r_attr_open(rctx *c, hid_t loc, const char *obj, const char *name)
{
    const hid_t a = H5Aopen_by_name(loc, ".", name, H5P_DEFAULT, H5P_DEFAULT);
    if (a < 0) rfail(c, "missing attribute %s@%s", obj, name);
    return a;
}

/** Read numeric attribute obj@name with exactly n values: integers into int64 (isfloat 0),
 *  floats into double (isfloat 1), integers into uint64 (isfloat 2). Any integer or float size is
 *  accepted and converted. */
static int r_attr_num(rctx *c, hid_t loc, const char *obj, const char *name, int isfloat, int n, void *out)
{
    hid_t a = -1, t = -1, s = -1;
    int rc = -1;
    char tn[32];
    a = r_attr_open(c, loc, obj, name);
    if (a < 0) return -1;
    t = H5Aget_type(a);
    s = a < 0 ? -1 : H5Aget_space(a);
    if (t < 0 || s < 0) { rfail(c, "cannot open attribute %s@%s", obj, name); goto done; }
    if (H5Tget_class(t) != (isfloat == 1 ? H5T_FLOAT : H5T_INTEGER)) {
        type_name(t, tn, sizeof tn);
        rfail(c, "attribute %s@%s has type %s, expected %s", obj, name, tn, isfloat == 1 ? "a float" : "an integer");
        goto done;
    }
    const hssize_t len = r_vec_len(s);
    if (len < 0) {
        rfail(c, "attribute %s@%s has %s dataspace, expected %d value(s)", obj, name,
              H5Sget_simple_extent_type(s) == H5S_NULL ? "an empty (null)" : "a multi-dimensional", n);
        goto done;
    }
    if (len != n) {
        rfail(c, "attribute %s@%s has %lld value(s), expected %d", obj, name, (long long)len, n);
        goto done;
    }
    if (H5Aread(a, isfloat == 1 ? H5T_NATIVE_DOUBLE : isfloat == 2 ? H5T_NATIVE_UINT64 : H5T_NATIVE_INT64, out) < 0) {
        rfail(c, "cannot read attribute %s@%s", obj, name);
        goto done;
    }
    rc = 0;
done:
    h5close(s);
    h5close(t);
    h5close(a);
    return rc;
}

/** Read a scalar string (fixed or variable length) from attribute a or dataset d (the other is -1).
 *  Returns a malloc'd string, or NULL (caller reports). */
static char *r_string(hid_t a, hid_t d, hid_t t, hid_t s)
{
    char *out = NULL;
    hid_t mt = H5Tcopy(H5T_C_S1);
    if (mt < 0) return NULL;
    if (H5Tset_cset(mt, H5Tget_cset(t)) < 0) goto done; /* HDF5 does not convert ASCII <-> UTF-8 */
    if (H5Tis_variable_str(t) > 0) {
        char *v = NULL;
        if (H5Tset_size(mt, H5T_VARIABLE) < 0) goto done;
        if ((a >= 0 ? H5Aread(a, mt, &v) : H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, &v)) < 0) goto done;
        out = strdup(v ? v : "");
        DP_H5_RECLAIM(mt, s, &v);
    } else {
        const size_t n = H5Tget_size(t);
        char *buf = calloc(n + 1, 1);
        if (!buf || H5Tset_size(mt, n) < 0 || H5Tset_strpad(mt, H5T_STR_NULLPAD) < 0 ||
            (a >= 0 ? H5Aread(a, mt, buf) : H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf)) < 0) {
            free(buf);
            goto done;
        }
        out = buf;
    }
done:
    H5Tclose(mt);
    return out;
}

/** Read scalar string attribute obj@name (malloc'd) or NULL with err set. */
static char *r_attr_str(rctx *c, hid_t loc, const char *obj, const char *name)
{
    hid_t a = -1, t = -1, s = -1;
    char *out = NULL, tn[32];
    a = r_attr_open(c, loc, obj, name);
    if (a < 0) return NULL;
    t = H5Aget_type(a);
    s = a < 0 ? -1 : H5Aget_space(a);
    if (t < 0 || s < 0) rfail(c, "cannot open attribute %s@%s", obj, name);
    else if (H5Tget_class(t) != H5T_STRING) {
        type_name(t, tn, sizeof tn);
        rfail(c, "attribute %s@%s has type %s, expected a string", obj, name, tn);
    } else if (H5Sget_simple_extent_type(s) != H5S_SCALAR) rfail(c, "attribute %s@%s is not a scalar string", obj, name);
    else if (H5Tget_size(t) > ATTR_STR_MAX)
        rfail(c, "attribute %s@%s declares a string of %zu bytes, more than the %d dpamr reads", obj, name,
              H5Tget_size(t), ATTR_STR_MAX);
    else if (!(out = r_string(a, -1, t, s))) rfail(c, "cannot read attribute %s@%s", obj, name);
    h5close(s);
    h5close(t);
    h5close(a);
    return out;
}

/** Integer attribute /dpamr@name with range check. */
static int r_int(rctx *c, const char *name, int64_t lo, int64_t hi, int *out)
{
    int64_t v;
    if (r_attr_num(c, c->g, "/dpamr", name, 0, 1, &v) != 0) return -1;
    if (v < lo || v > hi)
        return rfail(c, "/dpamr@%s is %lld, expected %lld..%lld", name, (long long)v, (long long)lo, (long long)hi);
    *out = (int)v;
    return 0;
}

/** /dpamr@format and @format_version. */
static int r_format(rctx *c)
{
    char *fmt = r_attr_str(c, c->g, "/dpamr", "format");
    if (!fmt) return -1;
    const int ok = strcmp(fmt, FORMAT_NAME) == 0;
    if (!ok) rfail(c, "not a dpamr mesh: /dpamr@format is '%.64s', expected '%s'", fmt, FORMAT_NAME);
    free(fmt);
    if (!ok) return -1;
    int64_t v;
    if (r_attr_num(c, c->g, "/dpamr", "format_version", 0, 1, &v) != 0) return -1;
    if (v != FORMAT_VERSION)
        return rfail(c, "/dpamr@format_version is %lld; this dpamr reads version %d", (long long)v, FORMAT_VERSION);
    return 0;
}

/** /dpamr@fields: space-separated names into m->field_name, m->nf. */
static int r_fields(rctx *c, mesh_t *m)
{
    char *s = r_attr_str(c, c->g, "/dpamr", "fields");
    if (!s) return -1;
    int rc = 0, nf = 0;
    char *save = NULL;
    for (char *tok = strtok_r(s, " ", &save); tok && rc == 0; tok = strtok_r(NULL, " ", &save)) {
        if (nf == DP_MAX_FIELDS) rc = rfail(c, "/dpamr@fields names more than %d fields", DP_MAX_FIELDS);
        else if (!name_ok(tok))
            rc = rfail(c, "/dpamr@fields: field name '%.80s' is too long (max %d) or has invalid characters", tok,
                       DP_NAME_LEN - 1);
        for (int f = 0; rc == 0 && f < nf; ++f)
            if (strcmp(m->field_name[f], tok) == 0) rc = rfail(c, "/dpamr@fields names '%s' twice", tok);
        if (rc == 0) snprintf(m->field_name[nf++], DP_NAME_LEN, "%s", tok);
    }
    free(s);
    if (rc == 0 && nf == 0) rc = rfail(c, "/dpamr@fields names no field (expected 1..%d)", DP_MAX_FIELDS);
    m->nf = nf;
    return rc;
}

/** Mesh description from the /dpamr attributes (no arrays yet). */
static int r_header(rctx *c, mesh_t *m)
{
    if (r_format(c) || r_int(c, "dim", 2, 3, &m->dim) || r_int(c, "tile_size", 4, 32, &m->B) ||
        r_int(c, "nlevels", 1, DP_MAX_LEVELS, &m->nlevels))
        return -1;
    if (m->B & (m->B - 1)) return rfail(c, "/dpamr@tile_size is %d, expected a power of 2 in 4..32", m->B);
    int64_t root[3];
    if (r_attr_num(c, c->g, "/dpamr", "root", 0, 3, root) || r_attr_num(c, c->g, "/dpamr", "origin", 1, 3, m->origin) ||
        r_attr_num(c, c->g, "/dpamr", "h0", 1, 1, &m->h0))
        return -1;
    const int64_t rmax = m->dim == 3 ? ((int64_t)1 << 21) : INT32_MAX;
    for (int a = 0; a < 3; ++a) {
        const int64_t hi = a < m->dim ? rmax : 1;
        if (root[a] < 1 || root[a] > hi)
            return rfail(c, "/dpamr@root[%d] is %lld, expected 1..%lld", a, (long long)root[a], (long long)hi);
        m->root[a] = (int)root[a];
    }
    for (int a = 0; a < 3; ++a)
        if (!isfinite(m->origin[a])) return rfail(c, "/dpamr@origin[%d] is not finite", a);
    if (!isfinite(m->h0) || !(m->h0 > 0.0)) return rfail(c, "/dpamr@h0 is %g, expected a positive number", m->h0);
    return r_fields(c, m);
}

/** Dataset /dpamr/rel has the type want and the shape dims (as in r_dset), and, unless it is
 *  compressed, the file holds all of its bytes: a small file cannot declare a huge dataset whose
 *  storage was never written. Nothing is read. 0 or -1. */
static int r_declared(rctx *c, const char *rel, rtype want, int rank, const hsize_t *dims)
{
    hsize_t d[2] = { dims[0], rank > 1 ? dims[1] : 1 };
    const hid_t ds = r_dset(c, rel, want, rank, d);
    if (ds < 0) return -1;
    const hid_t dcpl = H5Dget_create_plist(ds);
    const int filtered = dcpl >= 0 && H5Pget_nfilters(dcpl) > 0;
    const double want_bytes = (double)d[0] * (double)d[1] * (double)H5Tget_size(rtype_mem(want));
    const double stored = (double)H5Dget_storage_size(ds);
    h5close(dcpl);
    H5Dclose(ds);
    if (!filtered && stored < want_bytes)
        return rfail(c, "%s/%s declares %.0f bytes but the file stores only %.0f of them (truncated or damaged file)",
                     c->gname, rel, want_bytes, stored);
    if (filtered && stored * DEFLATE_MAX_RATIO < want_bytes)
        return rfail(c, "%s/%s declares %.0f bytes but the file stores %.0f compressed bytes for them, more than "
                        "deflate's largest ratio (%d:1) allows (damaged file?)",
                     c->gname, rel, want_bytes, stored, DEFLATE_MAX_RATIO);
    return 0;
}

/** Check that every /dpamr array has the same n rows (their real shapes and storage), and that n
 *  tiles fit in memory, before anything is allocated. */
static int r_sizes(rctx *c, const mesh_t *m, dp_tidx *n)
{
    hsize_t d[2] = { (hsize_t)-1, 3 };
    if (!r_has(c->g, "tiles")) return rfail(c, "missing group /dpamr/tiles");
    if (!r_has(c->g, "fields")) return rfail(c, "missing group /dpamr/fields");
    hid_t ds = r_dset(c, "tiles/level", T_I32, 1, d);
    if (ds < 0) return -1;
    H5Dclose(ds);
    const hsize_t cells = (hsize_t)mesh_cells(m);
    if (d[0] > (hsize_t)(INT64_MAX / 64 / cells)) return rfail(c, "/dpamr/tiles/level: %llu tiles is too many",
                                                                (unsigned long long)d[0]);
    const hsize_t hn = d[0], n3[2] = { hn, 3 }, nc[2] = { hn, cells }, nls = (hsize_t)m->nlevels + 1;
    if (r_declared(c, "tiles/level", T_I32, 1, &hn) || r_declared(c, "tiles/coord", T_I32, 2, n3) ||
        r_declared(c, "tiles/key", T_U64, 1, &hn) || r_declared(c, "tiles/parent", T_I64, 1, &hn) ||
        r_declared(c, "tiles/childmask", T_U8, 1, &hn) || r_declared(c, "level_start", T_I64, 1, &nls))
        return -1;
    for (int f = 0; f < m->nf; ++f) {
        char rel[DP_NAME_LEN + 16];
        snprintf(rel, sizeof rel, "fields/%s", m->field_name[f]);
        if (r_declared(c, rel, T_F32, 2, nc)) return -1;
    }
    char why[256];
    if (mesh_fits_memory(mesh_bytes((double)hn, m->dim, m->B, m->nf) + (double)hn, why, sizeof why) != 0)
        return rfail(c, "/dpamr/tiles/level: %llu tiles of %llu cells x %d field(s) do not fit in memory: %s",
                     (unsigned long long)hn, (unsigned long long)cells, m->nf, why);
    *n = (dp_tidx)d[0];
    return 0;
}

/** Read the tile arrays and fields into m (allocated for n tiles); childmask into cm. */
static int r_arrays(rctx *c, mesh_t *m, dp_tidx n, uint8_t *cm)
{
    const hsize_t hn = (hsize_t)n, n3[2] = { hn, 3 }, nc[2] = { hn, (hsize_t)mesh_cells(m) };
    if (r_read(c, "tiles/level", T_I32, 1, &hn, m->level) || r_read(c, "tiles/coord", T_I32, 2, n3, m->coord) ||
        r_read(c, "tiles/key", T_U64, 1, &hn, m->key) || r_read(c, "tiles/parent", T_I64, 1, &hn, m->parent) ||
        r_read(c, "tiles/childmask", T_U8, 1, &hn, cm))
        return -1;
    for (int f = 0; f < m->nf; ++f) {
        char rel[DP_NAME_LEN + 16];
        snprintf(rel, sizeof rel, "fields/%s", m->field_name[f]);
        if (r_read(c, rel, T_F32, 2, nc, m->field[f])) return -1;
    }
    return 0;
}

/** Level, coordinates and key of tile t against the grid of its level. */
static int r_check_tile_pos(rctx *c, const mesh_t *m, dp_tidx t)
{
    const int L = m->level[t];
    const int32_t *x = m->coord + 3 * t;
    if (L < 0 || L >= m->nlevels)
        return rfail(c, "/dpamr/tiles/level[%lld] is %d, expected 0..%d (nlevels-1)", (long long)t, L, m->nlevels - 1);
    if (t > 0 && L < m->level[t - 1])
        return rfail(c, "/dpamr/tiles/level is not in non-decreasing order at tile %lld", (long long)t);
    for (int a = 0; a < 3; ++a) {
        int64_t ext = a < m->dim ? (int64_t)m->root[a] << L : 1;
        if (m->dim == 3 && ext > ((int64_t)1 << 21)) ext = (int64_t)1 << 21; /* Morton key range */
        if (x[a] < 0 || x[a] >= ext)
            return rfail(c, "/dpamr/tiles/coord[%lld] = (%d,%d,%d) is outside level %d's tile grid (axis %d: 0..%lld)",
                         (long long)t, x[0], x[1], x[2], L, a, (long long)ext - 1);
    }
    if (m->key[t] != dp_morton(m->dim, x[0], x[1], x[2]))
        return rfail(c, "/dpamr/tiles/key[%lld] does not match the Morton key of coord (%d,%d,%d)", (long long)t, x[0],
                     x[1], x[2]);
    if (t > 0 && L == m->level[t - 1] && m->key[t] <= m->key[t - 1])
        return rfail(c, "tiles not in canonical order: tile %lld does not follow tile %lld in Morton order "
                        "(duplicate or unsorted)", (long long)t, (long long)t - 1);
    return 0;
}

/** Parent of tile t: -1 at level 0, else a tile at level-1 that contains it. */
static int r_check_parent(rctx *c, const mesh_t *m, dp_tidx t)
{
    const int64_t p = m->parent[t];
    const int L = m->level[t];
    if (L == 0) {
        if (p != -1)
            return rfail(c, "/dpamr/tiles/parent[%lld] is %lld, expected -1 at level 0", (long long)t, (long long)p);
        return 0;
    }
    if (p < m->level_start[L - 1] || p >= m->level_start[L])
        return rfail(c, "/dpamr/tiles/parent[%lld] is %lld, expected a tile of level %d (%lld..%lld)", (long long)t,
                     (long long)p, L - 1, (long long)m->level_start[L - 1], (long long)m->level_start[L] - 1);
    for (int a = 0; a < 3; ++a)
        if (m->coord[3 * p + a] != m->coord[3 * t + a] >> 1)
            return rfail(c, "/dpamr/tiles/parent[%lld] is %lld, whose coord does not contain the tile's", (long long)t,
                         (long long)p);
    return 0;
}

/** Recompute level_start (keeping trailing empty levels the file declares) and compare. */
static int r_levels(rctx *c, mesh_t *m)
{
    const int nl_file = m->nlevels;
    int64_t ls[DP_MAX_LEVELS + 1];
    const hsize_t nls = (hsize_t)nl_file + 1;
    if (r_read(c, "level_start", T_I64, 1, &nls, ls)) return -1;
    mesh_index_levels(m);
    for (int L = m->nlevels + 1; L <= nl_file; ++L) m->level_start[L] = m->ntiles;
    m->nlevels = nl_file;
    for (int L = 0; L <= nl_file; ++L)
        if (ls[L] != m->level_start[L])
            return rfail(c, "/dpamr/level_start[%d] is %lld, but the tiles give %lld", L, (long long)ls[L],
                         (long long)m->level_start[L]);
    const dp_tidx n0 = m->level_start[1];
    const int64_t want = (int64_t)m->root[0] * m->root[1] * m->root[2];
    if (n0 != want)
        return rfail(c, "level 0 has %lld tiles, expected root %dx%dx%d = %lld", (long long)n0, m->root[0],
                     m->root[1], m->root[2], (long long)want);
    return 0;
}

/** The tile tree: positions, order, parents, level index, childmask. */
static int r_check_tree(rctx *c, mesh_t *m, const uint8_t *cm)
{
    for (dp_tidx t = 0; t < m->ntiles; ++t)
        if (r_check_tile_pos(c, m, t)) return -1;
    if (r_levels(c, m)) return -1;
    for (dp_tidx t = 0; t < m->ntiles; ++t)
        if (r_check_parent(c, m, t)) return -1;
    mesh_index_children(m);
    for (dp_tidx t = 0; t < m->ntiles; ++t)
        if (cm[t] != m->childmask[t])
            return rfail(c, "/dpamr/tiles/childmask[%lld] is 0x%02x, but the tile's children give 0x%02x", (long long)t,
                         cm[t], m->childmask[t]);
    return 0;
}

/** Every field value finite; the first bad one is named by field, tile and cell. */
static int r_check_values(rctx *c, const mesh_t *m)
{
    const size_t cells = (size_t)mesh_cells(m), B = (size_t)m->B;
    for (int f = 0; f < m->nf; ++f) {
        const float *u = m->field[f];
        const size_t n = (size_t)m->ntiles * cells;
        for (size_t i = 0; i < n; ++i) {
            if (isfinite(u[i])) continue;
            const size_t t = i / cells, cl = i % cells;
            return rfail(c, "/dpamr/fields/%s: tile %zu (level %d, coord %d,%d,%d) cell %zu (x=%zu y=%zu z=%zu) is %s",
                         m->field_name[f], t, m->level[t], m->coord[3 * t], m->coord[3 * t + 1], m->coord[3 * t + 2],
                         cl, cl % B, cl / B % B, cl / (B * B), isnan(u[i]) ? "NaN" : "Inf");
        }
    }
    return 0;
}

/** /dpamr/deck as a malloc'd string, NULL when absent (0), or -1 on a malformed deck. */
static int r_deck(rctx *c, char **out)
{
    *out = NULL;
    if (!r_has(c->g, "deck")) return 0;
    hid_t d = H5Dopen2(c->g, "deck", H5P_DEFAULT);
    hid_t t = d < 0 ? -1 : H5Dget_type(d), s = d < 0 ? -1 : H5Dget_space(d);
    int rc = -1;
    if (t < 0 || s < 0) rfail(c, "/dpamr/deck is not a dataset");
    else if (H5Tget_class(t) != H5T_STRING || H5Sget_simple_extent_type(s) != H5S_SCALAR)
        rfail(c, "/dpamr/deck is not a scalar string");
    else if (H5Tis_variable_str(t) <= 0 && (H5Tget_size(t) > DECK_MAX || H5Dget_storage_size(d) < H5Tget_size(t)))
        rfail(c, "/dpamr/deck declares %zu bytes and the file stores %llu of them (at most %d are read)",
              H5Tget_size(t), (unsigned long long)H5Dget_storage_size(d), DECK_MAX);
    else if (!(*out = r_string(-1, d, t, s))) rfail(c, "cannot read /dpamr/deck");
    else rc = 0;
    h5close(s);
    h5close(t);
    h5close(d);
    return rc;
}

/** Existence and type of the file before HDF5 opens it. */
static int r_precheck(const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        seterr(err, errlen, "cannot open %s: %s", path, errno == ENOENT ? "no such file" : strerror(errno));
        return -1;
    }
    if (S_ISDIR(st.st_mode)) {
        seterr(err, errlen, "cannot open %s: it is a directory", path);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) { /* a FIFO would block the open, a device give endless bytes */
        seterr(err, errlen, "cannot open %s: not a regular file (a FIFO, socket or device is not an HDF5 file)", path);
        return -1;
    }
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        seterr(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    fclose(fp);
    if (DP_H5_IS_HDF5(path) <= 0) {
        H5Eclear2(H5E_DEFAULT);
        seterr(err, errlen, "%s: not an HDF5 file (expected a dpamr mesh file)", path);
        return -1;
    }
    return 0;
}

/** Everything after the file is open: header, arrays, checks, deck. */
static int r_body(rctx *c, mesh_t *m, char **deck_text)
{
    dp_tidx n = 0;
    uint8_t *cm = NULL;
    int rc = -1;
    if (r_header(c, m) || r_sizes(c, m, &n)) goto done;
    cm = malloc((size_t)(n > 0 ? n : 1));
    if (!cm || mesh_alloc(m, n) != 0) {
        rfail(c, "out of memory for %lld tiles", (long long)n);
        goto done;
    }
    m->ntiles = n;
    if (r_arrays(c, m, n, cm) || r_check_tree(c, m, cm) || r_check_values(c, m)) goto done;
    if (deck_text && r_deck(c, deck_text)) goto done;
    rc = 0;
done:
    free(cm);
    return rc;
}

/** Open path read-only: the file on disk, or (image not NULL) the n bytes at image as an in-memory
 *  file of that name (the core driver, nothing written). */
static hid_t r_fopen(const char *path, const void *image, size_t n)
{
    if (!image) return H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), f = -1;
    if (fapl >= 0 && H5Pset_fapl_core(fapl, 1 << 16, 0) >= 0 && H5Pset_file_image(fapl, (void *)image, n) >= 0)
        f = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    h5close(fapl);
    return f;
}

/** h5io_read of path, or of the file image (image, n) named path. */
static int r_read_file(const char *path, const void *image, size_t n, mesh_t *m, char **deck_text, char *err,
                       size_t errlen)
{
    memset(m, 0, sizeof *m);
    if (deck_text) *deck_text = NULL;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    if (!image && r_precheck(path, err, errlen) != 0) return -1;
    rctx c = { path, err, errlen, -1, "/dpamr" };
    hid_t f = r_fopen(path, image, n);
    if (f < 0) {
        char why[200];
        seterr(err, errlen, "cannot open %s: %s", path, h5_reason(why));
        return -1;
    }
    int rc = -1;
    if (!r_has(f, "dpamr")) {
        rfail(&c, "not a dpamr mesh: no /dpamr group; see docs/format.md");
        goto done;
    }
    c.g = H5Gopen2(f, "dpamr", H5P_DEFAULT);
    if (c.g < 0) {
        char why[200];
        h5_reason(why); /* a checksum HDF5 found wrong says the header is damaged */
        if (H5Oexists_by_name(f, "dpamr", H5P_DEFAULT) > 0 && strstr(why, "checksum"))
            rfail(&c, "/dpamr cannot be opened: its object header is damaged (HDF5: %s)", why);
        else rfail(&c, "not a dpamr mesh: /dpamr is not a group (HDF5: %s); see docs/format.md", why);
        rc = H5IO_BAD_CONTENT;
        goto done;
    }
    rc = r_body(&c, m, deck_text) == 0 ? 0 : H5IO_BAD_CONTENT;
done:
    h5close(c.g);
    H5Fclose(f);
    if (rc != 0) {
        mesh_free(m);
        if (deck_text) {
            free(*deck_text);
            *deck_text = NULL;
        }
    }
    return rc;
}

/* ---- verifying a whole file against its mesh (dpamr check) ----------------------------------- */

/** Open group loc/name (for messages: parent path ppath), or -1 with "missing group". */
static hid_t v_group(rctx *c, hid_t loc, const char *ppath, const char *name)
{
    hid_t g = r_has(loc, name) ? H5Gopen2(loc, name, H5P_DEFAULT) : -1;
    if (g < 0) rfail(c, "missing group %s/%s", ppath, name);
    return g;
}

/** Numeric attribute obj@name (n values, kind as r_attr_num: 0 int64, 1 double, 2 uint64) must
 *  hold exactly the bits of want. */
static int v_attr(rctx *c, hid_t loc, const char *obj, const char *name, int kind, int n, const void *want)
{
    uint64_t got[8];
    if (r_attr_num(c, loc, obj, name, kind, n, got) != 0) return -1;
    for (int i = 0; i < n; ++i) {
        uint64_t w;
        memcpy(&w, (const char *)want + 8 * i, 8);
        if (got[i] == w) continue;
        char gs[64], ws[64];
        double gd, wd;
        memcpy(&gd, &got[i], 8);
        memcpy(&wd, &w, 8);
        if (kind == 1) snprintf(gs, sizeof gs, "%.17g", gd), snprintf(ws, sizeof ws, "%.17g", wd);
        else if (kind == 2) snprintf(gs, sizeof gs, "%016llx", (unsigned long long)got[i]),
                            snprintf(ws, sizeof ws, "%016llx", (unsigned long long)w);
        else snprintf(gs, sizeof gs, "%lld", (long long)got[i]), snprintf(ws, sizeof ws, "%lld", (long long)w);
        return rfail(c, "%s@%s%s is %s, but the file's data give %s", obj, name, n > 1 ? "[...]" : "", gs, ws);
    }
    return 0;
}

static int v_attr_i64(rctx *c, hid_t loc, const char *obj, const char *name, int64_t want)
{
    return v_attr(c, loc, obj, name, 0, 1, &want);
}

/** First index where n elements of size sz differ, or -1. */
static long long v_first_diff(const void *a, const void *b, size_t n, size_t sz)
{
    if (memcmp(a, b, n * sz) == 0) return -1;
    for (size_t i = 0; i < n; ++i)
        if (memcmp((const char *)a + i * sz, (const char *)b + i * sz, sz) != 0) return (long long)i;
    return -1;
}

/** /dpamr/validation: every value recorded when the file was written equals the one the data give
 *  now (v, from valid_check on the mesh read from the file). */
static int v_validation(rctx *c, const mesh_t *m, const valid_report_t *v)
{
    const char *obj = "/dpamr/validation";
    hid_t g = v_group(c, c->g, "/dpamr", "validation");
    if (g < 0) return -1;
    int rc = -1;
    char *first = NULL;
    const uint64_t th = v->tree_hash, tot = v->total_hash;
    const int nl = v->nlevels, nf = v->nf;
    const hsize_t d1 = (hsize_t)nl, d2[2] = { (hsize_t)nl, (hsize_t)nf };
    int64_t tiles[DP_MAX_LEVELS];
    double sum[DP_MAX_LEVELS * DP_MAX_FIELDS];
    uint64_t hash[DP_MAX_LEVELS * DP_MAX_FIELDS];
    if (r_read(c, "validation/tiles", T_I64, 1, &d1, tiles)) goto done;
    for (int L = 0; L < nl; ++L)
        if (tiles[L] != (int64_t)v->tiles[L]) {
            rfail(c, "%s/tiles[%d] is %lld, but the file has %lld tiles on level %d", obj, L, (long long)tiles[L],
                  (long long)v->tiles[L], L);
            goto done;
        }
    if (r_read(c, "validation/checksum_hash", T_U64, 2, d2, hash)) goto done;
    hid_t keep = c->g;
    for (int L = 0; L < nl; ++L)
        for (int f = 0; f < nf; ++f) {
            if (hash[L * nf + f] == v->hash[L][f]) continue;
            /* where: the data's other copy in /VTKHDF (written from the same array) names the cell */
            char where[400] = "";
            char lev[48], rel[DP_NAME_LEN + 16];
            snprintf(lev, sizeof lev, "/VTKHDF/Level%d/CellData", L);
            snprintf(rel, sizeof rel, "%s", m->field_name[f]);
            const dp_tidx s = m->level_start[L], nt = m->level_start[L + 1] - s;
            const size_t cells = (size_t)mesh_cells(m), n = (size_t)nt * cells;
            hid_t cd = r_has(c->g, "/VTKHDF") ? H5Gopen2(c->g, lev, H5P_DEFAULT) : -1;
            float *buf = cd >= 0 ? malloc(n ? n * sizeof *buf : 1) : NULL;
            if (buf) {
                c->g = cd;
                const hsize_t hn = (hsize_t)n;
                char *save = c->err;
                c->err = NULL; /* best effort: a missing copy leaves the location unnamed */
                if (r_read(c, rel, T_F32, 1, &hn, buf) == 0) {
                    const long long i = v_first_diff(buf, m->field[f] + (size_t)s * cells, n, sizeof *buf);
                    if (i >= 0)
                        snprintf(where, sizeof where, "; /dpamr/fields/%s differs from %s/%s first at tile %lld "
                                 "(level %d, coord %d,%d,%d) cell %lld", m->field_name[f], lev, rel,
                                 (long long)(s + i / (long long)cells), L, m->coord[3 * (s + i / (long long)cells)],
                                 m->coord[3 * (s + i / (long long)cells) + 1], m->coord[3 * (s + i / (long long)cells) + 2],
                                 i % (long long)cells);
                }
                c->err = save;
                c->g = keep;
            }
            free(buf);
            h5close(cd);
            rfail(c, "checksums: FAILED: level %d field %s hash %016llx, recorded %016llx in %s/checksum_hash: the data "
                     "changed after it was written%s",
                  L, m->field_name[f], (unsigned long long)v->hash[L][f], (unsigned long long)hash[L * nf + f], obj,
                  where);
            goto done;
        }
    if (r_read(c, "validation/checksum_sum", T_F64, 2, d2, sum)) goto done;
    for (int L = 0; L < nl; ++L)
        for (int f = 0; f < nf; ++f)
            if (memcmp(&sum[L * nf + f], &v->sum[L][f], sizeof(double)) != 0) {
                rfail(c, "%s/checksum_sum[%d,%d] (level %d, field %s) is %.17g, but the data give %.17g", obj, L, f, L,
                      m->field_name[f], sum[L * nf + f], v->sum[L][f]);
                goto done;
            }
    if (v_attr_i64(c, g, obj, "passed", v->passed) || v_attr_i64(c, g, obj, "nfail", v->nfail) ||
        v_attr_i64(c, g, obj, "conservation_checked", v->conservation_checked) ||
        v_attr(c, g, obj, "conservation_tol", 1, 1, &v->conservation_tol) ||
        v_attr(c, g, obj, "conservation_max_rel", 1, 1, &v->conservation_max_rel) ||
        v_attr(c, g, obj, "tree_hash", 2, 1, &th) || v_attr(c, g, obj, "total_hash", 2, 1, &tot))
        goto done;
    if (!(first = r_attr_str(c, g, obj, "first_failure"))) goto done;
    if (strncmp(first, v->first_failure, sizeof v->first_failure) != 0) {
        rfail(c, "%s@first_failure is '%.200s', but the file's data give '%.200s'", obj, first, v->first_failure);
        goto done;
    }
    rc = 0;
done:
    free(first);
    h5close(g);
    return rc;
}

/** /dpamr/provenance/ranks (in group g) as nranks rows, malloc'd, or NULL with err set. */
static h5io_rank_t *v_rank_rows(rctx *c, hid_t g, const char *obj, int64_t nranks)
{
    hid_t d = r_has(g, "ranks") ? H5Dopen2(g, "ranks", H5P_DEFAULT) : -1;
    hid_t sp = d < 0 ? -1 : H5Dget_space(d), ft = d < 0 ? -1 : H5Dget_type(d), mt = rank_mtype();
    hsize_t dims[1] = { 0 };
    const int shaped = sp >= 0 && ft >= 0 && H5Tget_class(ft) == H5T_COMPOUND &&
                       H5Sget_simple_extent_type(sp) == H5S_SIMPLE && H5Sget_simple_extent_ndims(sp) == 1 &&
                       H5Sget_simple_extent_dims(sp, dims, NULL) == 1 && dims[0] == (hsize_t)nranks;
    h5io_rank_t *rows = shaped ? malloc((size_t)nranks * sizeof *rows) : NULL;
    const int got = rows && mt >= 0 && H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows) >= 0;
    h5close(mt), h5close(ft), h5close(sp), h5close(d);
    if (got) return rows;
    free(rows);
    if (d < 0) rfail(c, "missing dataset %s/ranks", obj);
    else if (!shaped) rfail(c, "%s/ranks is not a table of %lld rows (%s@nranks)", obj, (long long)nranks, obj);
    else rfail(c, "cannot read %s/ranks (damaged file, or not the columns of docs/format.md)", obj);
    return NULL;
}

/** The rank table of a refinement output (group g) accounts for every root tile, tile and cell. */
static int v_ranks(rctx *c, hid_t g, const char *obj, const mesh_t *m)
{
    int64_t nranks;
    if (r_attr_num(c, g, obj, "nranks", 0, 1, &nranks)) return -1;
    if (nranks < 1 || nranks > (1 << 24))
        return rfail(c, "%s@nranks is %lld, expected 1..%d", obj, (long long)nranks, 1 << 24);
    h5io_rank_t *rows = v_rank_rows(c, g, obj, nranks);
    if (!rows) return -1;
    int64_t roots = 0, tiles = 0, cells = 0, bad = -1;
    for (int64_t r = 0; r < nranks; ++r) {
        if (bad < 0 && rows[r].rank != r) bad = r;
        roots += rows[r].root_tiles;
        tiles += rows[r].tiles;
        cells += rows[r].cells;
    }
    const int badrank = bad >= 0 ? rows[bad].rank : 0;
    free(rows);
    if (bad >= 0) return rfail(c, "%s/ranks[%lld].rank is %d, expected %lld", obj, (long long)bad, badrank, (long long)bad);
    const int64_t want_cells = (int64_t)m->ntiles * mesh_cells(m);
    if (roots != m->level_start[1] || tiles != m->ntiles || cells != want_cells)
        return rfail(c, "%s/ranks accounts for %lld root tiles, %lld tiles and %lld cells, but the file has %lld, %lld "
                        "and %lld", obj, (long long)roots, (long long)tiles, (long long)cells,
                     (long long)m->level_start[1], (long long)m->ntiles, (long long)want_cells);
    return 0;
}

/** /dpamr/provenance: present with its attributes; in a refinement output, the per-rank table
 *  accounts for every tile (its timings cannot be checked: they are not derived from the data). */
static int v_provenance(rctx *c, const mesh_t *m)
{
    const char *obj = "/dpamr/provenance";
    hid_t g = v_group(c, c->g, "/dpamr", "provenance");
    if (g < 0) return -1;
    static const char *const nums[] = { "pdl", "device_launches", "launch_failures", "pool_size" };
    static const char *const times[] = { "load_ms", "refine_ms", "validate_ms" };
    char *variant = r_attr_str(c, g, obj, "variant"), *version = variant ? r_attr_str(c, g, obj, "version") : NULL;
    int rc = version ? 0 : -1;
    const int mesh_only = variant && strcmp(variant, "mesh") == 0;
    if (rc == 0 && !mesh_only && strcmp(variant, "cpu") && strcmp(variant, "cdp") && strcmp(variant, "hostlaunch") && strcmp(variant, "host"))
        rc = rfail(c, "%s@variant is '%.64s', expected cpu, cdp, hostlaunch (host in older files) or mesh", obj, variant);
    int64_t iv;
    double dv;
    for (int i = 0; rc == 0 && i < 4; ++i) rc = r_attr_num(c, g, obj, nums[i], 0, 1, &iv);
    for (int i = 0; rc == 0 && i < 3; ++i) rc = r_attr_num(c, g, obj, times[i], 1, 1, &dv);
    if (rc == 0 && !mesh_only) rc = v_ranks(c, g, obj, m);
    free(variant);
    free(version);
    h5close(g);
    return rc;
}

/** Dataset (c->g)/rel, of type want and n rows of row elements, must hold exactly the values at
 *  want_buf; the first difference is named by tile (rows of tile_rows elements each, from tile s)
 *  and cell. buf: scratch of n * row elements. */
static int v_same(rctx *c, const mesh_t *m, int L, const char *rel, rtype want, hsize_t n, hsize_t row,
                  const void *want_buf, void *buf)
{
    const hsize_t dims[2] = { n, row };
    if (r_read(c, rel, want, row > 1 ? 2 : 1, dims, buf)) return -1;
    const size_t sz = H5Tget_size(rtype_mem(want));
    const long long i = v_first_diff(buf, want_buf, (size_t)(n * row), sz);
    if (i < 0) return 0;
    const size_t cells = (size_t)mesh_cells(m);
    const int per_cell = row == 1 && strcmp(rel, "AMRBox") != 0; /* CellData: one value per cell */
    const long long t = m->level_start[L] + (per_cell ? i / (long long)cells : i / (long long)row);
    return rfail(c, "%s/%s differs from the tiles in /dpamr at element %lld: tile %lld (level %d, coord %d,%d,%d)%s%lld",
                 c->gname, rel, i, t, L, m->coord[3 * t], m->coord[3 * t + 1], m->coord[3 * t + 2],
                 per_cell ? " cell " : " column ", per_cell ? i % (long long)cells : i % (long long)row);
}

/** /VTKHDF: the header, and every level ParaView reads (Spacing, AMRBox, CellData of every field
 *  and vtkGhostType, PointData, FieldData) equal to what the writer derives from /dpamr. */
static int v_vtkhdf(rctx *c, hid_t file, const mesh_t *m)
{
    hid_t vtk = v_group(c, file, "", "VTKHDF"), lev = -1, cd = -1, sub = -1;
    if (vtk < 0) return -1;
    int rc = -1;
    const int64_t ver64[2] = { 1, 0 };
    char *type = NULL;
    wctx w = { .nlevels = m->nlevels, .level_start = m->level_start };
    const dp_tidx mx = w_max_level_tiles(m);
    const size_t cells = (size_t)mesh_cells(m);
    wbuf b = { 0 };
    void *buf = malloc((size_t)(mx > 0 ? mx : 1) * (cells * 4 > 24 ? cells * 4 : 24));
    char why[64];
    if (!buf || w_buf_alloc(&w, m, &b) != 0) {
        rfail(c, "out of memory checking /VTKHDF");
        goto done;
    }
    if (v_attr(c, vtk, "/VTKHDF", "Version", 0, 2, ver64) || !(type = r_attr_str(c, vtk, "/VTKHDF", "Type"))) goto done;
    if (strcmp(type, "OverlappingAMR") != 0) {
        rfail(c, "/VTKHDF@Type is '%.64s', expected 'OverlappingAMR'", type);
        goto done;
    }
    if (v_attr(c, vtk, "/VTKHDF", "Origin", 1, 3, m->origin)) goto done;
    const int nv = w_vtk_levels(&w);
    double h = m->h0;
    for (int L = 0; L < nv; ++L, h *= 0.5) {
        char name[32], path[64];
        snprintf(name, sizeof name, "Level%d", L);
        snprintf(path, sizeof path, "/VTKHDF/Level%d", L);
        if ((lev = v_group(c, vtk, "/VTKHDF", name)) < 0) goto done;
        const double sp[3] = { h, h, h };
        if (v_attr(c, lev, path, "Spacing", 1, 3, sp)) goto done;
        dp_tidx s, e;
        w_lrange(m, L, &s, &e);
        const hsize_t nt = (hsize_t)(e - s);
        w_boxes(m, s, e, b.box);
        c->g = lev;
        c->gname = path;
        if (v_same(c, m, L, "AMRBox", T_I32, nt, 6, b.box, buf)) goto done;
        for (int k = 0; k < 2; ++k) {
            if ((sub = v_group(c, lev, path, k ? "FieldData" : "PointData")) < 0) goto done;
            h5close(sub);
            sub = -1;
        }
        if ((cd = v_group(c, lev, path, "CellData")) < 0) goto done;
        snprintf(path, sizeof path, "/VTKHDF/Level%d/CellData", L);
        c->g = cd;
        c->gname = path;
        for (int f = 0; f < m->nf; ++f)
            if (v_same(c, m, L, m->field_name[f], T_F32, nt * cells, 1, m->field[f] + (size_t)s * cells, buf)) goto done;
        w_ghost(m, s, e, b.oct, b.ghost);
        if (v_same(c, m, L, "vtkGhostType", T_U8, nt * cells, 1, b.ghost, buf)) goto done;
        h5close(cd);
        h5close(lev);
        cd = lev = -1;
    }
    snprintf(why, sizeof why, "Level%d", nv);
    if (r_has(vtk, why)) {
        rfail(c, "/VTKHDF/%s exists, but the tiles in /dpamr give %d level(s) to show (0..%d)", why, nv, nv - 1);
        goto done;
    }
    rc = 0;
done:
    free(type);
    free(buf);
    w_buf_free(&b);
    h5close(sub);
    h5close(cd);
    h5close(lev);
    h5close(vtk);
    return rc;
}

int h5io_read(const char *path, mesh_t *m, char **deck_text, char *err, size_t errlen)
{
    return r_read_file(path, NULL, 0, m, deck_text, err, errlen);
}

int h5io_read_image(const void *image, size_t n, const char *name, mesh_t *m, char **deck_text, char *err,
                    size_t errlen)
{
    return r_read_file(name, image, n, m, deck_text, err, errlen);
}

/** h5io_verify of path, or of the file image (image, n) named path. */
static int v_verify_file(const char *path, const void *image, size_t n, const mesh_t *m, const valid_report_t *v,
                         char *err, size_t errlen)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    rctx c = { path, err, errlen, -1, "/dpamr" };
    hid_t f = r_fopen(path, image, n);
    if (f < 0) return rfail(&c, "cannot open");
    int rc = -1;
    c.g = H5Gopen2(f, "dpamr", H5P_DEFAULT);
    const hid_t dg = c.g;
    if (c.g < 0) rfail(&c, "no /dpamr group");
    else if (v_validation(&c, m, v) == 0 && v_provenance(&c, m) == 0) rc = v_vtkhdf(&c, f, m);
    h5close(dg);
    H5Fclose(f);
    return rc;
}

double h5io_raw_bytes(const mesh_t *m, dp_tidx ntiles) { return w_raw_bytes(m, ntiles); }

/* ---- ownership: did dpamr write this file? ------------------------------------------------- */

int h5io_is_dpamr_output(const char *path)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    if (DP_H5_IS_HDF5(path) <= 0) return 0;
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) return 0;
    /* what every h5io_write with provenance writes and no other tool does: /dpamr/provenance with
     * its version and variant attributes, next to /dpamr/deck (tools/mesh_from_numpy.py writes neither) */
    int own = H5Lexists(f, "dpamr", H5P_DEFAULT) > 0 && H5Lexists(f, "dpamr/provenance", H5P_DEFAULT) > 0 &&
              H5Lexists(f, "dpamr/deck", H5P_DEFAULT) > 0 &&
              H5Aexists_by_name(f, "dpamr/provenance", "version", H5P_DEFAULT) > 0 &&
              H5Aexists_by_name(f, "dpamr/provenance", "variant", H5P_DEFAULT) > 0;
    H5Fclose(f);
    H5Eclear2(H5E_DEFAULT);
    return own;
}

int h5io_verify(const char *path, const mesh_t *m, const valid_report_t *v, char *err, size_t errlen)
{
    return v_verify_file(path, NULL, 0, m, v, err, errlen);
}

int h5io_verify_image(const void *image, size_t n, const char *name, const mesh_t *m, const valid_report_t *v,
                      char *err, size_t errlen)
{
    return v_verify_file(name, image, n, m, v, err, errlen);
}
