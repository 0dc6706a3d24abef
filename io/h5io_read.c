/* h5io_read.c - reading: the loader (h5io_read: /dpamr into a mesh_t, every layout, shape, size
 * and value checked), the check of a whole file against its tiles (h5io_verify: /dpamr/validation,
 * /dpamr/provenance and /VTKHDF, for `dpamr check`) and h5io_is_dpamr_output. */
#include "io/h5io_internal.h"
#include "src/timer.h"

#include <pthread.h>
#include <stdatomic.h>

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

/* Reading the cells (r_stream): pieces of about STREAM_PIECE_BYTES per field (the tiles announced
 * together: the validator of `dpamr check` follows at that grain), read through the page cache by
 * READ_THREADS threads in reads of READ_UNIT_BYTES taken in piece order, while one more thread
 * (r_prefetch) asks the kernel for the reads ahead of them, in the same order, READ_AHEAD beyond the
 * next one to be taken: the disk sees each field's dataset read front to back (one sequential
 * stream with one field, as from dd; one per field, taken in turn, with more), and the threads copy
 * what has come in. Measured on the H200 machine (docs/results.md, "Session 13"), each file cold,
 * against 16 threads of 8 MiB each asking for the read 32 ahead of its own (the earlier reader,
 * session 12): bench2d 1.40-1.48 GB/s against 1.08-1.36, bench3d 1.43-1.56 against 1.39-1.41 (dd of
 * the files 1.66 and 1.89 GB/s). The per-thread requests had arrived out of order: the first piece,
 * which the validator waits for, often came last (200-500 ms late). Reads with O_DIRECT into
 * aligned buffers were slower still (session 11: 1.17-1.44 GB/s against 1.65; session 18, with 8 to
 * 32 threads of 4 to 16 MiB: 0.88-1.13 GB/s against 1.34-1.40 through the cache). When the tile
 * tree is read alongside the cells (a head-first file), r_read_head first brings the tree and the
 * deck into the page cache, so that the disk's elevator does not keep them behind the cells. */
#define READ_PIECE_BYTES ((hsize_t)64 << 20) /* the pieces read through HDF5 (a hyperslab each) */
#define STREAM_PIECE_BYTES ((size_t)8 << 20)
#define READ_THREADS 8
#define READ_UNIT_BYTES ((size_t)8 << 20)
#define READ_AHEAD 16

/* HDF5 1.12 renamed a call (the old name is deprecated there) and moved the object header's
 * version to the "native" object information. */
#if H5_VERSION_GE(1, 12, 0)
#define DP_H5_RECLAIM(t, s, buf) H5Treclaim((t), (s), H5P_DEFAULT, (buf))
#else
#define DP_H5_RECLAIM(t, s, buf) H5Dvlen_reclaim((t), (s), H5P_DEFAULT, (buf))
#endif

/* How to rewrite a file in the format dpamr reads (HDF5 1.8 to 1.10, dpamr's own: w_format); the
 * numbers are H5F_libver_t's (1 = V18, 2 = V110) in h5repack 1.10 to 1.14 alike. -f NONE makes it
 * rewrite every dataset: without it h5repack 1.10.8 copies unfiltered datasets with their version-1
 * object headers (H5Ocopy). tests/file_format.sh runs this command. */
#define CONVERT_HINT "convert it with: h5repack --low=1 --high=2 -f NONE %s NEW.hdf"

#define ATTR_STR_MAX (1 << 20)  /* the longest string attribute dpamr reads (its own are < 600 bytes) */
#define DECK_MAX (64 << 20)     /* the longest /dpamr/deck dpamr reads */
#define DEFLATE_MAX_RATIO 1032 /* the most deflate (gzip) can compress: a compressed dataset that
                                  declares more than this many times its stored bytes is damaged */

/* ---- reading: helpers ------------------------------------------------------------------- */

/** Where the tile tree is, for cells read alongside it (h5io_read_begin to h5io_read_tree): 0 being
 *  read, 1 read, -1 failed (the cells then stop, and say nothing). */
typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    _Atomic int state;
} rtree;

/** Read context: the file name (for messages), the error buffer, the group looked in. */
typedef struct {
    const char *path;
    char *err;
    size_t errlen;
    hid_t g;           /* the group r_dset and r_read look in (/dpamr unless said otherwise) */
    const char *gname; /* its HDF5 path, for messages */
    hid_t file;        /* the open file (its /VTKHDF levels hold the cells of version 2) */
    int version;       /* /dpamr@format_version: FORMAT_VERSION, or FORMAT_VERSION_V1 (cells in /dpamr) */
    int no_h5;         /* 1: no HDF5 call (r_stream, while another thread may use the library) */
    rtree *tree;       /* the reader's tree (NULL: read already) */
    int no_filter;     /* 1: the failure is a dataset whose filter this HDF5 lacks (H5IO_NO_FILTER) */
} rctx;

/** "PATH: message". Always returns -1; with c NULL only that (no message, no HDF5 call: the
 *  checks of r_check_tiles' parallel pass). */
static int rfail(rctx *c, const char *fmt, ...)
{
    if (!c) return -1; /* a check run without messages (r_check_tiles) */
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    h5i_seterr(c->err, c->errlen, "%s: %s", c->path, msg);
    if (!c->no_h5) H5Eclear2(H5E_DEFAULT);
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

/** The version of the object header of loc/name (1: the HDF5 1.6 format, without checksum; 2:
 *  checksummed), or -1 when it cannot be loaded (HDF5's reason in why). Only the header is loaded
 *  (its checksum verified where it has one); none of its messages is decoded. */
static int r_hdr_version(hid_t loc, const char *name, char *why)
{
#if H5_VERSION_GE(1, 12, 0)
    H5O_native_info_t i;
    const herr_t rc = H5Oget_native_info_by_name(loc, name, &i, H5O_NATIVE_INFO_HDR, H5P_DEFAULT);
#else
    H5O_info_t i;
    const herr_t rc = H5Oget_info_by_name2(loc, name, &i, H5O_INFO_HDR, H5P_DEFAULT);
#endif
    if (rc < 0) {
        h5i_reason(why);
        return -1;
    }
    return (int)i.hdr.version;
}

/** The object header of loc/name (already known to be a hard link) is one dpamr may look into: it
 *  loads (a link to a header HDF5 cannot load means a damaged file), and it carries a checksum
 *  (version 2), so HDF5 has verified it. A version-1 header has none: HDF5 1.10.8 walks a damaged
 *  one and can crash (issue 17). 0, or -1 with err set. */
static int r_hdr_ok(rctx *c, hid_t loc, const char *name)
{
    char why[200], where[600];
    const int v = r_hdr_version(loc, name, why);
    if (v >= 2) return 0;
    h5i_obj_path(loc, strcmp(name, ".") ? name : NULL, where, sizeof where);
    if (v < 0) return rfail(c, "%s cannot be opened: its object header is damaged (HDF5: %s)", where, why);
    return rfail(c, "%s has a version-%d object header (the HDF5 1.6 format), which carries no checksum: a damaged "
                    "one cannot be detected and can crash the HDF5 library, so dpamr reads only the HDF5 1.8 format "
                    "or newer; " CONVERT_HINT, where, v, c->path);
}

/** Does loc/name exist? Every object on the way to it (each component of name) must be reached by a
 *  hard link (a soft or external link would lead through objects, or into files, not checked here)
 *  and have a checksummed header (r_hdr_ok) before anything in it is looked up: HDF5 then walks only
 *  headers it has verified. loc itself must have been checked (the root group is by r_open, other
 *  groups by the r_has that found them). 1, 0 (absent), or -1 with err set. */
static int r_has(rctx *c, hid_t loc, const char *name)
{
    const size_t len = strlen(name);
    char *part = malloc(len + 1);
    int rc = part ? 1 : rfail(c, "out of memory");
    for (size_t i = 1; rc == 1 && i <= len; ++i) { /* i from 1: a leading '/' is the root group */
        if (name[i] != '/' && name[i] != '\0') continue;
        memcpy(part, name, i);
        part[i] = '\0';
        H5L_info_t li;
        if (H5Lexists(loc, part, H5P_DEFAULT) <= 0 || H5Lget_info(loc, part, &li, H5P_DEFAULT) < 0) {
            H5Eclear2(H5E_DEFAULT);
            rc = 0;
        } else if (li.type != H5L_TYPE_HARD) {
            char where[600];
            h5i_obj_path(loc, part, where, sizeof where);
            rc = rfail(c, "%s is %s link: dpamr reads only objects stored in the file under their own name (hard "
                          "links)", where, li.type == H5L_TYPE_SOFT       ? "a soft"
                                           : li.type == H5L_TYPE_EXTERNAL ? "an external"
                                                                          : "a user-defined");
        } else if (r_hdr_ok(c, loc, part) != 0) {
            rc = -1;
        }
    }
    free(part);
    return rc;
}

/** Every filter of dataset ds (named obj) is one this HDF5 can decode: built in, or a plugin it finds
 *  (H5Zfilter_avail looks in HDF5_PLUGIN_PATH). Else the read fails deep in HDF5's pipeline ("required
 *  filter is not registered"), and dpamr called the file damaged: a file this build cannot read is
 *  not a damaged one, so the message says which filter is missing, and c->no_filter makes the
 *  failure H5IO_NO_FILTER (`dpamr check` exits 1, not 2). 0 or -1. */
static int r_filters_ok(rctx *c, hid_t ds, const char *obj)
{
    const hid_t dcpl = H5Dget_create_plist(ds);
    const int nf = dcpl >= 0 ? H5Pget_nfilters(dcpl) : 0;
    int rc = 0;
    for (int i = 0; rc == 0 && i < nf; ++i) {
        unsigned flags = 0, cd[8], cfg = 0, info = 0;
        size_t ncd = 8;
        char name[64] = "";
        const H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, cd, sizeof name, name, &cfg);
        if (id < 0) continue; /* cannot tell: the read says what it finds */
        if (H5Zfilter_avail(id) > 0 && H5Zget_filter_info(id, &info) >= 0 && (info & H5Z_FILTER_CONFIG_DECODE_ENABLED))
            continue;
        name[sizeof name - 1] = '\0';
        for (char *q = name; *q; ++q)
            if ((unsigned char)*q < ' ' || (unsigned char)*q > '~') *q = '?';
        unsigned maj = 0, min = 0, rel = 0;
        H5get_libversion(&maj, &min, &rel);
        c->no_filter = 1;
        rc = rfail(c, "%s is stored with HDF5 filter %d%s%s%s, which this HDF5 library (%u.%u.%u) does not have, nor "
                      "a plugin for it in HDF5_PLUGIN_PATH: the file cannot be read here, which says nothing of its "
                      "content; with the filter's plugin in HDF5_PLUGIN_PATH, read it, or " CONVERT_HINT,
                   obj, (int)id, name[0] ? " ('" : "", name, name[0] ? "')" : "", maj, min, rel, c->path);
    }
    h5i_close(dcpl);
    H5Eclear2(H5E_DEFAULT); /* a plugin looked for and not found leaves its errors */
    return rc;
}

/** Open (c->g)/rel: must exist, be a dataset of type want with the given rank; dims[i] of
 *  (hsize_t)-1 accept any extent and receive the actual one. Returns the dataset or -1. */
static hid_t r_dset(rctx *c, const char *rel, rtype want, int rank, hsize_t *dims)
{
    hid_t d = -1, t = -1, s = -1;
    char tn[32], got[96], want_s[96];
    hsize_t ad[8];
    int ok = 0;
    const int has = r_has(c, c->g, rel);
    if (has <= 0) return has < 0 ? -1 : rfail(c, "missing dataset %s/%s", c->gname, rel);
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
    char obj[600];
    snprintf(obj, sizeof obj, "%s/%s", c->gname, rel);
    ok = r_filters_ok(c, d, obj) == 0; /* after its type and shape: a difference is a difference first */
done:
    h5i_close(t);
    h5i_close(s);
    if (!ok) {
        h5i_close(d);
        return -1;
    }
    return d;
}

/** Read all of (c->g)/rel (type and shape checked as in r_dset) into buf. */
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
    h5i_close(s);
    h5i_close(t);
    h5i_close(a);
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
    h5i_close(s);
    h5i_close(t);
    h5i_close(a);
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
    if (!ok) rfail(c, "not a dpamr file: /dpamr@format is '%.64s', expected '%s'", fmt, FORMAT_NAME);
    free(fmt);
    if (!ok) return -1;
    int64_t v;
    if (r_attr_num(c, c->g, "/dpamr", "format_version", 0, 1, &v) != 0) return -1;
    if (v != FORMAT_VERSION && v != FORMAT_VERSION_V1)
        return rfail(c, "/dpamr@format_version is %lld; this dpamr reads versions %d and %d", (long long)v,
                     FORMAT_VERSION_V1, FORMAT_VERSION);
    c->version = (int)v;
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
        else if (!h5i_name_ok(tok))
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
    h5i_close(dcpl);
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

/** n tiles of m fit in memory (checked before anything is allocated); obj names the count. */
static int r_fits(rctx *c, const mesh_t *m, hsize_t hn, const char *obj)
{
    char why[256];
    if (mesh_fits_memory(mesh_bytes((double)hn, m->dim, m->B, m->nf) + (double)hn, why, sizeof why) != 0)
        return rfail(c, "%s: %llu tiles of %d cells x %d field(s) do not fit in memory: %s", obj,
                     (unsigned long long)hn, mesh_cells(m), m->nf, why);
    return 0;
}

/** Version 1: check that every /dpamr array has the same n rows (their real shapes and storage), and
 *  that n tiles fit in memory, before anything is allocated. */
static int r_sizes_v1(rctx *c, const mesh_t *m, dp_tidx *n)
{
    hsize_t d[2] = { (hsize_t)-1, 3 };
    for (int k = 0; k < 2; ++k) {
        const int has = r_has(c, c->g, k ? "fields" : "tiles");
        if (has <= 0) return has < 0 ? -1 : rfail(c, "missing group /dpamr/%s", k ? "fields" : "tiles");
    }
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
    if (r_fits(c, m, hn, "/dpamr/tiles/level")) return -1;
    *n = (dp_tidx)d[0];
    return 0;
}

/** Version 1: read the tile arrays and fields of /dpamr into m (allocated for n tiles); childmask
 *  into cm. */
static int r_arrays_v1(rctx *c, mesh_t *m, dp_tidx n, uint8_t *cm)
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

/** Levels of a file with level index ls that /VTKHDF shows (the trailing empty ones left out). */
static int r_vtk_levels(const mesh_t *m, const int64_t *ls)
{
    const wctx w = { .nlevels = m->nlevels, .level_start = ls };
    return w_vtk_levels(&w);
}

/** Open /VTKHDF/LevelL (sub NULL) or its group sub, every header on the way checked (r_has); path
 *  (n bytes) receives its name. The group, or -1 with err set. */
static hid_t r_vtk_group(rctx *c, int L, const char *sub, char *path, size_t n)
{
    if (sub) snprintf(path, n, "/VTKHDF/Level%d/%s", L, sub);
    else snprintf(path, n, "/VTKHDF/Level%d", L);
    const int has = r_has(c, c->file, path);
    hid_t g = has > 0 ? H5Gopen2(c->file, path, H5P_DEFAULT) : -1;
    if (g < 0 && has >= 0) rfail(c, has ? "%s is not a group" : "missing group %s", path);
    return g;
}

/** Version 2: /dpamr/level_start into ls (nlevels + 1 values from 0, non-decreasing). 0 or -1. */
static int r_level_index(rctx *c, const mesh_t *m, int64_t *ls)
{
    const hsize_t nls = (hsize_t)m->nlevels + 1;
    if (r_declared(c, "level_start", T_I64, 1, &nls) || r_read(c, "level_start", T_I64, 1, &nls, ls)) return -1;
    if (ls[0] != 0) return rfail(c, "/dpamr/level_start[0] is %lld, expected 0", (long long)ls[0]);
    for (int L = 1; L <= m->nlevels; ++L)
        if (ls[L] < ls[L - 1])
            return rfail(c, "/dpamr/level_start[%d] is %lld, less than level_start[%d] = %lld", L, (long long)ls[L],
                         L - 1, (long long)ls[L - 1]);
    return 0;
}

/** Version 2: tile t is row `row` of /VTKHDF/LevelL/AMRBox, r: its cell ranges must be a tile's
 *  (on each axis of the dimension lo a multiple of B and hi = lo + B - 1; 0..0 on the others).
 *  Sets its level, coordinates (lo / B) and Morton key. */
static int r_box(rctx *c, mesh_t *m, int L, dp_tidx row, const int32_t *r, dp_tidx t)
{
    const int64_t B = m->B;
    for (int a = 0; a < 3; ++a) {
        const int64_t lo = r[2 * a], hi = r[2 * a + 1];
        if (a < m->dim ? lo >= 0 && lo % B == 0 && hi == lo + B - 1 : lo == 0 && hi == 0) {
            m->coord[3 * t + a] = a < m->dim ? (int32_t)(lo / B) : 0;
            continue;
        }
        return rfail(c, "/VTKHDF/Level%d/AMRBox[%lld] is (%d,%d, %d,%d, %d,%d), not the cells of a tile: expected on "
                        "axis %d %s", L, (long long)row, r[0], r[1], r[2], r[3], r[4], r[5], a,
                     a < m->dim ? "lo >= 0 a multiple of tile_size and hi = lo + tile_size - 1" : "0,0 (2D)");
    }
    m->level[t] = L;
    m->key[t] = dp_morton(m->dim, m->coord[3 * t], m->coord[3 * t + 1], m->coord[3 * t + 2]);
    return 0;
}

/** Version 2, level L of /VTKHDF: its AMRBox (nt rows of 6) and every field of its CellData (nt x
 *  B^dim values), nt = ls[L+1] - ls[L]. With box NULL only their types, shapes and stored bytes are
 *  checked (r_declared, before anything is allocated); else the boxes are read into box (nt rows),
 *  each a tile's cells and giving its level, coordinates and key (r_box); the cells come later
 *  (r_vtk_cells). 0 or -1. */
static int r_vtk_level(rctx *c, mesh_t *m, const int64_t *ls, int L, int32_t *box)
{
    const hsize_t cells = (hsize_t)mesh_cells(m), nt = (hsize_t)(ls[L + 1] - ls[L]), b6[2] = { nt, 6 },
                  nc = nt * cells;
    const hid_t g = c->g;
    const char *gname = c->gname;
    char path[64];
    hid_t lev = r_vtk_group(c, L, NULL, path, sizeof path);
    c->g = lev, c->gname = path;
    int rc = lev < 0 ? -1 : box ? r_read(c, "AMRBox", T_I32, 2, b6, box) : r_declared(c, "AMRBox", T_I32, 2, b6);
    if (box && rc == 0) { /* every box, in parallel without messages; the first bad one again with its message */
        hsize_t first = nt;
        OMP_PRAGMA(omp parallel for schedule(static, 16384) reduction(min : first))
        for (hsize_t i = 0; i < nt; ++i)
            if (i < first && r_box(NULL, m, L, (dp_tidx)i, box + 6 * i, ls[L] + (dp_tidx)i)) first = i;
        if (first < nt) rc = r_box(c, m, L, (dp_tidx)first, box + 6 * first, ls[L] + (dp_tidx)first);
    }
    h5i_close(lev);
    hid_t cd = rc || box ? -1 : r_vtk_group(c, L, "CellData", path, sizeof path);
    c->g = cd;
    rc = rc || (!box && cd < 0) ? -1 : 0;
    for (int f = 0; !box && rc == 0 && f < m->nf; ++f) rc = r_declared(c, m->field_name[f], T_F32, 1, &nc);
    h5i_close(cd);
    c->g = g, c->gname = gname;
    return rc ? -1 : 0;
}

/** The first non-finite value among tiles [t0, t1) (lowest tile, then field, then cell): its index
 *  into the fields, or SIZE_MAX; *field its field. The test is on the bits (exponent all ones), a
 *  block at a time without an early exit, so that the compiler vectorizes it; a block with a bad
 *  value is searched. */
static size_t r_first_nonfinite(const mesh_t *m, dp_tidx t0, dp_tidx t1, int *field)
{
    const size_t cells = (size_t)mesh_cells(m);
    enum { BLK = 4096 };
    const size_t i0 = (size_t)t0 * cells, i1 = (size_t)t1 * cells;
    size_t first = SIZE_MAX, tfirst = SIZE_MAX; /* the first bad value and its tile */
    for (int f = 0; f < m->nf; ++f) {
        const uint32_t *u = (const uint32_t *)(const void *)m->field[f];
        for (size_t a = i0; a < i1 && a / cells < tfirst; a += BLK) {
            const size_t b = i1 - a < BLK ? i1 : a + BLK;
            uint32_t bad = 0;
            for (size_t i = a; i < b; ++i) bad |= (uint32_t)((u[i] & 0x7f800000u) == 0x7f800000u);
            if (!bad) continue;
            size_t i = a;
            while ((u[i] & 0x7f800000u) != 0x7f800000u) ++i;
            if (i / cells < tfirst) first = i, tfirst = i / cells, *field = f;
            break;
        }
    }
    return first;
}

/** Every value of tiles [t0, t1) finite (r_first_nonfinite over parts of the range, in parallel);
 *  the first bad one is named by field, tile and cell. */
static int r_check_values(rctx *c, const mesh_t *m, dp_tidx t0, dp_tidx t1)
{
    const size_t cells = (size_t)mesh_cells(m), B = (size_t)m->B;
    const dp_tidx per = (dp_tidx)((1u << 20) / cells > 0 ? (1u << 20) / cells : 1); /* about 4 MB a part */
    const long long parts = (long long)((t1 - t0 + per - 1) / per);
    size_t first = SIZE_MAX;
    int ff = 0;
    OMP_PRAGMA(omp parallel for schedule(dynamic, 1) num_threads(READ_THREADS) if (parts > 1))
    for (long long k = 0; k < parts; ++k) {
        const dp_tidx a = t0 + (dp_tidx)k * per, b = t1 - a < per ? t1 : a + per;
        int f = 0;
        const size_t i = r_first_nonfinite(m, a, b, &f);
        if (i == SIZE_MAX) continue;
        OMP_PRAGMA(omp critical(r_check_values))
        if (first == SIZE_MAX || i / cells < first / cells || (i / cells == first / cells && f < ff)) first = i, ff = f;
    }
    if (first == SIZE_MAX) return 0;
    const size_t t = first / cells, cl = first % cells;
    const float v = m->field[ff][first];
    char obj[96];
    if (c->version == FORMAT_VERSION_V1) snprintf(obj, sizeof obj, "/dpamr/fields");
    else snprintf(obj, sizeof obj, "/VTKHDF/Level%d/CellData", m->level[t]);
    return rfail(c, "%s/%s: tile %zu (level %d, coord %d,%d,%d) cell %zu (x=%zu y=%zu z=%zu) is %s", obj,
                 m->field_name[ff], t, m->level[t], m->coord[3 * t], m->coord[3 * t + 1], m->coord[3 * t + 2], cl,
                 cl % B, cl / B % B, cl / (B * B), isnan(v) ? "NaN" : "Inf");
}

/* ---- the cells straight from the disk (r_stream) ------------------------------------------ */

/** Where the cells of version 2 lie (r_plan): per level and field the file address of its values,
 *  and whether every one of them is stored as dpamr writes it (contiguous native floats, in a file
 *  on disk), so that r_stream reads them with no HDF5 call. Also where the tile tree's arrays lie
 *  (/dpamr/tiles/parent and childmask, every level's AMRBox, when contiguous) and the deck: when all
 *  of the tree lies before the cells (head_first), r_stream reads the head and the deck into the
 *  page cache first (r_read_head), and r_tree reads them alongside the cells. */
typedef struct {
    int done; /* r_plan ran */
    int raw;  /* every level's every field readable straight from the file */
    haddr_t at[DP_MAX_LEVELS][DP_MAX_FIELDS];
    int ntree;
    haddr_t tree_at[2 + DP_MAX_LEVELS];
    hsize_t tree_len[2 + DP_MAX_LEVELS];
    int head_first; /* raw, and every tree array lies before every cell (w_vtkhdf writes them so) */
    hsize_t head_len; /* with head_first: the bytes before the first cell */
    haddr_t deck_at;  /* /dpamr/deck's bytes (HADDR_UNDEF: none, or not contiguous) */
    hsize_t deck_len;
} rplan;

/** How the cells were read: the wall time, the reading threads' time in reads and value tests
 *  (summed over them) and their number (r_stream; 0 through HDF5). */
typedef struct {
    double ms, read_ms;
    int threads;
} rstats;

/** One read of r_stream: len bytes of field f of level L at file offset at into dst, part of the
 *  piece (tiles announced together) piece. */
typedef struct {
    off_t at;
    size_t len;
    float *dst;
    int64_t piece;
    int L, f;
} runit;

/** 1 when a float among the whole floats of bytes [lo, hi) of p is not finite (exponent all ones;
 *  the loop vectorizes). */
static uint32_t r_nonfinite_bytes(const char *p, size_t lo, size_t hi)
{
    const size_t a = (lo + 3) / 4, b = hi / 4;
    const uint32_t *u = (const uint32_t *)(const void *)p;
    uint32_t bad = 0;
    for (size_t i = a; i < b; ++i) bad |= (uint32_t)((u[i] & 0x7f800000u) == 0x7f800000u);
    return bad;
}

/** Bytes [o, o + len) of the file fd into dst through the page cache, each read's floats tested
 *  for finiteness. 0, 1 when a value is not finite, or -1 when the file ends early or a read fails. */
static int r_unit_read(int fd, off_t o, size_t len, char *dst)
{
    size_t done = 0;
    uint32_t bad = 0;
    int whole = 0; /* a read ended inside a float: test the whole range at the end */
    while (done < len) {
        const ssize_t r = pread(fd, dst + done, len - done, o + (off_t)done);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        bad |= r_nonfinite_bytes(dst, done, done + (size_t)r);
        whole |= (done % 4 != 0 || r % 4 != 0);
        done += (size_t)r;
    }
    if (whole) bad = r_nonfinite_bytes(dst, 0, len);
    return bad ? 1 : 0;
}

/** Before the cells' failure is put in words (it names tiles by their level and position): wait
 *  for the tree. 0 when it was read, -1 when it failed (the cells then say nothing: the tree's
 *  message stands). */
static int r_tree_wait(rctx *c)
{
    if (!c->tree) return 0;
    pthread_mutex_lock(&c->tree->mu);
    while (atomic_load(&c->tree->state) == 0) pthread_cond_wait(&c->tree->cv, &c->tree->mu);
    const int st = atomic_load(&c->tree->state);
    pthread_mutex_unlock(&c->tree->mu);
    return st > 0 ? 0 : -1;
}

/** r_stream's look-ahead: the file's reads u[0, nu) asked from the kernel in order
 *  (posix_fadvise WILLNEED), never more than READ_AHEAD beyond the next read a thread takes, and
 *  none of a piece the readers skip (after a failure). */
typedef struct {
    int fd;
    const runit *u;
    int64_t nu;
    _Atomic int64_t *next; /* the next read to be taken */
    _Atomic int64_t *stop; /* reads of pieces after it are skipped (a failure): not asked for either */
    pthread_mutex_t mu;
    pthread_cond_t cv; /* a read taken, or quit */
    int quit;
} rprefetch;

/** Before any cell is asked for, in a head-first file: the head (everything before the first cell:
 *  the tree's arrays, every AMRBox and vtkGhostType, the metadata) and the deck read into the page
 *  cache, both asked for at once and then read in order; h5io_read_tree and the /VTKHDF comparison
 *  read them while the cells come. Asked for only by the prefetcher, ahead of 128 MiB of cells,
 *  they waited on the H200 for the disk's elevator to sweep past the cells: a box read of 12.6 MB
 *  or the deck's few hundred bytes took 230-370 ms (docs/results.md, "Session 18"). Errors are
 *  left to those readers. */
static void r_read_head(int fd, const rplan *p)
{
    enum { CHUNK = 8 << 20 };
    char *buf = malloc(CHUNK);
    if (!buf) return;
    const haddr_t at[2] = { 0, p->deck_at };
    const hsize_t len[2] = { p->head_len, p->deck_at != HADDR_UNDEF ? p->deck_len : 0 };
    for (int k = 0; k < 2; ++k)
        if (len[k] > 0) (void)posix_fadvise(fd, (off_t)at[k], (off_t)len[k], POSIX_FADV_WILLNEED);
    for (int k = 0; k < 2; ++k)
        for (hsize_t o = 0; o < len[k];) {
            const ssize_t r = pread(fd, buf, len[k] - o < CHUNK ? (size_t)(len[k] - o) : CHUNK, (off_t)(at[k] + o));
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) break;
            o += (hsize_t)r;
        }
    free(buf);
}

static void *r_prefetch(void *arg)
{
    rprefetch *pf = arg;
    pthread_mutex_lock(&pf->mu);
    for (int64_t i = 0; i < pf->nu && !pf->quit; ++i) {
        while (!pf->quit && i >= atomic_load(pf->next) + READ_AHEAD) pthread_cond_wait(&pf->cv, &pf->mu);
        if (pf->quit || pf->u[i].piece > atomic_load(pf->stop)) break; /* pieces come in order: so do the later ones */
        pthread_mutex_unlock(&pf->mu);
        (void)posix_fadvise(pf->fd, pf->u[i].at, (off_t)pf->u[i].len, POSIX_FADV_WILLNEED);
        pthread_mutex_lock(&pf->mu);
    }
    pthread_mutex_unlock(&pf->mu);
    return NULL;
}

/** Version 2, r_plan's raw case: every level's cells into m, with no HDF5 call (h5io_read_vtkhdf may run on
 *  another thread meanwhile). The levels are cut into pieces of about STREAM_PIECE_BYTES per field, each
 *  field's part of a piece into reads of READ_UNIT_BYTES; READ_THREADS threads take the reads in piece
 *  order (r_unit_read) while r_prefetch asks for the READ_AHEAD reads after them, in order, so that the
 *  disk streams with no pause between pieces or levels. A piece whose reads are all done and whose values
 *  are all finite is announced once every piece before it is: ready(ctx, tiles whose cells are all in m). A
 *  value not finite: the reads of later pieces stop and r_check_values names the first one; a read that
 *  fails or ends early: the first such read is named. 0 or -1. */
static int r_stream(rctx *c, mesh_t *m, const int64_t *ls, const rplan *p, h5io_ready_fn ready, void *ctx,
                    rstats *st)
{
    const size_t cells = (size_t)mesh_cells(m), tb = cells * sizeof(float);
    const dp_tidx per = (dp_tidx)(STREAM_PIECE_BYTES / tb > 0 ? STREAM_PIECE_BYTES / tb : 1);
    const int nv = r_vtk_levels(m, ls);
    int64_t np = 0, nu = 0;
    for (int L = 0; L < nv; ++L)
        for (dp_tidx a = 0; a < ls[L + 1] - ls[L]; a += per, ++np) {
            const dp_tidx b = ls[L + 1] - ls[L] - a < per ? ls[L + 1] - ls[L] : a + per;
            nu += (int64_t)m->nf * (int64_t)(((size_t)(b - a) * tb + READ_UNIT_BYTES - 1) / READ_UNIT_BYTES);
        }
    runit *u = malloc((size_t)(nu > 0 ? nu : 1) * sizeof *u);
    dp_tidx *pend = malloc((size_t)(np > 0 ? np : 1) * sizeof *pend); /* a piece's end (global tile) */
    _Atomic int64_t *left = malloc((size_t)(np > 0 ? np : 1) * sizeof *left); /* its reads not done */
    _Atomic int *bad = calloc((size_t)(np > 0 ? np : 1), sizeof *bad);         /* a value not finite */
    if (!u || !pend || !left || !bad) {
        free(u), free(pend), free((void *)left), free((void *)bad);
        return r_tree_wait(c) ? -1 : rfail(c, "out of memory reading the cells");
    }
    int64_t k = 0, q = 0;
    for (int L = 0; L < nv; ++L)
        for (dp_tidx a = 0; a < ls[L + 1] - ls[L]; a += per, ++q) {
            const dp_tidx b = ls[L + 1] - ls[L] - a < per ? ls[L + 1] - ls[L] : a + per;
            const size_t bytes = (size_t)(b - a) * tb;
            const int64_t k0 = k;
            for (int f = 0; f < m->nf; ++f)
                for (size_t o = 0; o < bytes; o += READ_UNIT_BYTES, ++k)
                    u[k] = (runit){ .at = (off_t)(p->at[L][f] + (haddr_t)((size_t)a * tb + o)),
                                    .len = bytes - o < READ_UNIT_BYTES ? bytes - o : READ_UNIT_BYTES,
                                    .dst = m->field[f] + ((size_t)ls[L] + (size_t)a) * cells + o / sizeof(float),
                                    .piece = q, .L = L, .f = f };
            atomic_init(&left[q], k - k0);
            pend[q] = (dp_tidx)ls[L] + b;
        }
    const int fd = open(c->path, O_RDONLY);
    if (fd < 0) {
        free(u), free(pend), free((void *)left), free((void *)bad);
        const int e = errno;
        return r_tree_wait(c) ? -1 : rfail(c, "cannot open it again to read the cells: %s", strerror(e));
    }
    if (p->head_first && c->tree && atomic_load(&c->tree->state) == 0) r_read_head(fd, p); /* the tree comes alongside */
    _Atomic int64_t next = 0, stop = np, fail = nu; /* the next read; pieces after stop are skipped; the first failed read */
    _Atomic int dropped = 0;                         /* reads left because the tree failed */
    int64_t announced = 0;
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    const double t0 = timer_ms();
    st->threads = READ_THREADS;
    rprefetch pf = { .fd = fd, .u = u, .nu = nu, .next = &next, .stop = &stop, .quit = 0 };
    pthread_mutex_init(&pf.mu, NULL);
    pthread_cond_init(&pf.cv, NULL);
    pthread_t pft;
    const int prefetching = pthread_create(&pft, NULL, r_prefetch, &pf) == 0; /* else the kernel's own read-ahead */
    OMP_PRAGMA(omp parallel num_threads(READ_THREADS))
    {
        double my_ms = 0.0;
        for (int64_t i; (i = atomic_fetch_add(&next, 1)) < nu;) {
            if (prefetching) { /* one more read may be asked for */
                pthread_mutex_lock(&pf.mu);
                pthread_cond_signal(&pf.cv);
                pthread_mutex_unlock(&pf.mu);
            }
            const runit *x = &u[i];
            if (x->piece > atomic_load(&stop)) continue;
            if (c->tree && atomic_load(&c->tree->state) < 0) { /* the tree failed: the check ends */
                atomic_store(&stop, -1);
                atomic_store(&dropped, 1);
                continue;
            }
            const double c0 = timer_ms();
            const int r = r_unit_read(fd, x->at, x->len, (char *)x->dst);
            my_ms += timer_ms() - c0;
            if (r < 0) {
                int64_t f = atomic_load(&fail);
                while (i < f && !atomic_compare_exchange_weak(&fail, &f, i)) continue;
                atomic_store(&stop, -1);
                continue;
            }
            if (r > 0) {
                atomic_store(&bad[x->piece], 1);
                int64_t s = atomic_load(&stop);
                while (x->piece < s && !atomic_compare_exchange_weak(&stop, &s, x->piece)) continue;
            }
            if (atomic_fetch_sub(&left[x->piece], 1) == 1 && !r && ready) {
                pthread_mutex_lock(&mu); /* announce the pieces done, in order */
                const int64_t was = announced;
                while (announced < np && atomic_load(&left[announced]) == 0 && !atomic_load(&bad[announced])) ++announced;
                if (announced > was) ready(ctx, pend[announced - 1]);
                pthread_mutex_unlock(&mu);
            }
        }
        OMP_PRAGMA(omp atomic)
        st->read_ms += my_ms;
    }
    if (prefetching) {
        pthread_mutex_lock(&pf.mu);
        pf.quit = 1;
        pthread_cond_signal(&pf.cv);
        pthread_mutex_unlock(&pf.mu);
        pthread_join(pft, NULL);
    }
    pthread_cond_destroy(&pf.cv);
    pthread_mutex_destroy(&pf.mu);
    st->ms = timer_ms() - t0;
    close(fd);
    int rc = 0;
    const int64_t fi = atomic_load(&fail);
    if (atomic_load(&dropped) || ((fi < nu || atomic_load(&stop) < np) && r_tree_wait(c) != 0))
        rc = -1; /* the tree failed: its message stands */
    else if (fi < nu)
        rc = rfail(c, "cannot read /VTKHDF/Level%d/CellData/%s: the file ends before its values or a read failed "
                      "(truncated or damaged file?)", u[fi].L, m->field_name[u[fi].f]);
    else if (atomic_load(&stop) < np) { /* the first piece with a value not finite: its first one */
        const int64_t b = atomic_load(&stop);
        rc = r_check_values(c, m, b > 0 ? pend[b - 1] : 0, pend[b]);
        if (rc == 0) rc = rfail(c, "a value of tiles %lld to %lld read as not finite, then as finite (the file changed "
                                   "while being read?)", (long long)(b > 0 ? pend[b - 1] : 0), (long long)pend[b] - 1);
    }
    free(u), free(pend), free((void *)left), free((void *)bad);
    return rc;
}

/** Version 2, the cells of level L through HDF5 (a file image, or cells not stored as dpamr writes
 *  them: r_plan): every field of /VTKHDF/LevelL/CellData into m's fields at tile ls[L], in pieces of
 *  about READ_PIECE_BYTES (a hyperslab each), each piece's values checked finite (r_check_values
 *  names the first that is not) and then announced: ready(ctx, tiles whose cells are all in m).
 *  0 or -1. */
static int r_vtk_cells(rctx *c, mesh_t *m, const int64_t *ls, int L, h5io_ready_fn ready, void *ctx)
{
    const hsize_t cells = (hsize_t)mesh_cells(m), nt = (hsize_t)(ls[L + 1] - ls[L]);
    const hid_t g = c->g;
    const char *gname = c->gname;
    char path[64];
    hid_t cd = r_vtk_group(c, L, "CellData", path, sizeof path), ds[DP_MAX_FIELDS];
    c->g = cd, c->gname = path;
    int rc = cd < 0 ? -1 : 0;
    for (int f = 0; f < m->nf; ++f) {
        hsize_t d = nt * cells;
        ds[f] = rc == 0 ? r_dset(c, m->field_name[f], T_F32, 1, &d) : -1;
        if (ds[f] < 0) rc = -1;
    }
    const hsize_t tile_bytes = cells * sizeof(float) * (hsize_t)m->nf;
    const hsize_t per = READ_PIECE_BYTES / tile_bytes > 0 ? READ_PIECE_BYTES / tile_bytes : 1;
    for (hsize_t a = 0; rc == 0 && a < nt; a += per) {
        const hsize_t b = nt - a < per ? nt : a + per, off = a * cells, cnt = (b - a) * cells;
        for (int f = 0; rc == 0 && f < m->nf; ++f) {
            float *dst = m->field[f] + ((size_t)ls[L] + a) * cells;
            const hid_t fs = H5Dget_space(ds[f]), ms = H5Screate_simple(1, &cnt, NULL);
            if (fs < 0 || ms < 0 || H5Sselect_hyperslab(fs, H5S_SELECT_SET, &off, NULL, &cnt, NULL) < 0 ||
                H5Dread(ds[f], rtype_mem(T_F32), ms, fs, H5P_DEFAULT, dst) < 0)
                rc = rfail(c, "cannot read %s/%s (damaged file?)", path, m->field_name[f]);
            h5i_close(ms);
            h5i_close(fs);
        }
        if (rc == 0) rc = r_check_values(c, m, ls[L] + (dp_tidx)a, ls[L] + (dp_tidx)b);
        if (rc == 0 && ready) ready(ctx, ls[L] + (dp_tidx)b);
    }
    for (int f = 0; f < m->nf; ++f) h5i_close(ds[f]);
    h5i_close(cd);
    c->g = g, c->gname = gname;
    return rc ? -1 : 0;
}

/** Version 2: where every level's cells lie (p): each field of /VTKHDF/LevelL/CellData opened and
 *  its shape and type checked (r_dset), its file address taken (H5Dget_offset) when it is stored as
 *  dpamr writes it: contiguous native floats, all of its values written, in a file on disk (not an
 *  image). p->raw: every one is, and r_stream reads them. 0 or -1. */
static int r_plan(rctx *c, const mesh_t *m, const int64_t *ls, int on_disk, rplan *p)
{
    p->done = 1;
    p->raw = on_disk && c->version != FORMAT_VERSION_V1;
    p->ntree = 0, p->head_first = 0, p->head_len = 0, p->deck_at = HADDR_UNDEF, p->deck_len = 0;
    if (c->version == FORMAT_VERSION_V1) return 0;
    const hid_t g = c->g;
    const char *gname = c->gname;
    const hsize_t cells = (hsize_t)mesh_cells(m);
    int rc = 0;
    for (int L = 0; rc == 0 && L < r_vtk_levels(m, ls); ++L) {
        char path[64];
        const hid_t cd = r_vtk_group(c, L, "CellData", path, sizeof path);
        c->g = cd, c->gname = path;
        if (cd < 0) rc = -1;
        for (int f = 0; rc == 0 && f < m->nf; ++f) {
            hsize_t d = (hsize_t)(ls[L + 1] - ls[L]) * cells;
            const hid_t ds = r_dset(c, m->field_name[f], T_F32, 1, &d);
            if (ds < 0) {
                rc = -1;
                break;
            }
            p->at[L][f] = p->raw ? H5Dget_offset(ds) : HADDR_UNDEF;
            const hid_t ft = p->at[L][f] != HADDR_UNDEF ? H5Dget_type(ds) : -1;
            if (!(ft >= 0 && H5Tequal(ft, H5T_NATIVE_FLOAT) > 0 && H5Dget_storage_size(ds) >= d * sizeof(float)))
                p->raw = 0;
            h5i_close(ft);
            H5Dclose(ds);
        }
        h5i_close(cd);
    }
    /* the tree's arrays (checked by r_tree: here only where they lie, when they are contiguous) */
    p->ntree = 0;
    for (int k = 0; rc == 0 && p->raw && k < 2 + r_vtk_levels(m, ls); ++k) {
        char path[64];
        if (k < 2) snprintf(path, sizeof path, "/dpamr/tiles/%s", k ? "childmask" : "parent");
        else snprintf(path, sizeof path, "/VTKHDF/Level%d/AMRBox", k - 2);
        const hid_t ds = H5Dopen2(c->file, path, H5P_DEFAULT);
        const haddr_t at = ds >= 0 ? H5Dget_offset(ds) : HADDR_UNDEF;
        if (at != HADDR_UNDEF) {
            p->tree_at[p->ntree] = at;
            p->tree_len[p->ntree++] = H5Dget_storage_size(ds);
        }
        h5i_close(ds);
    }
    p->deck_at = HADDR_UNDEF;
    if (rc == 0 && p->raw) {
        const hid_t ds = H5Dopen2(c->file, "/dpamr/deck", H5P_DEFAULT);
        p->deck_at = ds >= 0 ? H5Dget_offset(ds) : HADDR_UNDEF;
        p->deck_len = p->deck_at != HADDR_UNDEF ? H5Dget_storage_size(ds) : 0;
        if (p->deck_len > DECK_MAX) p->deck_at = HADDR_UNDEF, p->deck_len = 0; /* r_deck refuses it */
        h5i_close(ds);
    }
    p->head_first = rc == 0 && p->raw && p->ntree == 2 + r_vtk_levels(m, ls);
    p->head_len = HADDR_MAX;
    for (int L = 0; p->head_first && L < r_vtk_levels(m, ls); ++L)
        for (int f = 0; f < m->nf; ++f) p->head_len = p->at[L][f] < p->head_len ? p->at[L][f] : p->head_len;
    for (int k = 0; p->head_first && k < p->ntree; ++k)
        if (p->tree_at[k] + p->tree_len[k] > p->head_len) p->head_first = 0;
    if (p->head_len == HADDR_MAX) p->head_first = 0; /* no level with cells */
    if (!p->head_first) p->head_len = 0;
    H5Eclear2(H5E_DEFAULT);
    c->g = g, c->gname = gname;
    return rc;
}

/** The cells of every level (version 1: read with the tree; their values are checked here), then
 *  ready(ctx, every tile): r_stream when r_plan finds them stored as dpamr writes them, else through
 *  HDF5 (r_vtk_cells). 0 or -1. */
static int r_cells(rctx *c, mesh_t *m, const int64_t *ls, int on_disk, rplan *p, h5io_ready_fn ready, void *ctx,
                   rstats *st)
{
    int rc = 0;
    if (c->version == FORMAT_VERSION_V1) {
        rc = r_check_values(c, m, 0, m->ntiles);
    } else {
        /* HDF5 keeps the switch of its error printing per thread (a thread-safe build, as Debian's):
         * switched off on the thread that opened the file, it is on here, on the cells' own thread
         * (dpamr check), where a failed read printed HDF5's whole stack before dpamr's message. Set
         * only where this thread calls HDF5: r_stream must not, the tree's reader may be in HDF5 */
        if (!p->done || !p->raw) H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
        if (!p->done) rc = r_plan(c, m, ls, on_disk, p);
        if (rc == 0 && p->raw) {
            c->no_h5 = 1; /* no HDF5 call from here, not even in a message (h5io_read_plan) */
            rc = r_stream(c, m, ls, p, ready, ctx, st);
            c->no_h5 = 0;
        } else {
            const double t0 = timer_ms();
            for (int L = 0; rc == 0 && L < r_vtk_levels(m, ls); ++L) rc = r_vtk_cells(c, m, ls, L, ready, ctx);
            st->ms = timer_ms() - t0;
        }
    }
    if (rc == 0 && ready) ready(ctx, m->ntiles);
    return rc ? -1 : 0;
}

/** Version 2: the level index ls, and every array its tiles need (the tree in /dpamr/tiles; per level
 *  shown, AMRBox and every field in /VTKHDF) with its real shape and storage, and the tiles fitting
 *  in memory, before anything is allocated. */
static int r_sizes_v2(rctx *c, mesh_t *m, int64_t *ls)
{
    if (r_level_index(c, m, ls)) return -1;
    const hsize_t cells = (hsize_t)mesh_cells(m), hn = (hsize_t)ls[m->nlevels];
    if (hn > (hsize_t)(INT64_MAX / 64 / cells))
        return rfail(c, "/dpamr/level_start[%d]: %llu tiles is too many", m->nlevels, (unsigned long long)hn);
    const int has = r_has(c, c->g, "tiles");
    if (has <= 0) return has < 0 ? -1 : rfail(c, "missing group /dpamr/tiles");
    if (r_declared(c, "tiles/parent", T_I64, 1, &hn) || r_declared(c, "tiles/childmask", T_U8, 1, &hn)) return -1;
    for (int L = 0; L < r_vtk_levels(m, ls); ++L)
        if (r_vtk_level(c, m, ls, L, NULL)) return -1;
    return r_fits(c, m, hn, "/dpamr/level_start");
}

/** Version 2: read the tree of /dpamr/tiles (childmask into cm) and, level by level, the tiles'
 *  boxes from /VTKHDF into m (allocated for ls[nlevels] tiles); their cells: r_cells. */
static int r_arrays_v2(rctx *c, mesh_t *m, const int64_t *ls, uint8_t *cm)
{
    const hsize_t hn = (hsize_t)m->ntiles;
    if (r_read(c, "tiles/parent", T_I64, 1, &hn, m->parent) || r_read(c, "tiles/childmask", T_U8, 1, &hn, cm))
        return -1;
    int64_t mx = 0;
    for (int L = 0; L < m->nlevels; ++L) mx = ls[L + 1] - ls[L] > mx ? ls[L + 1] - ls[L] : mx;
    int32_t *box = malloc((size_t)(mx > 0 ? mx : 1) * 6 * sizeof *box);
    if (!box) return rfail(c, "out of memory for the boxes of %lld tiles", (long long)mx);
    int rc = 0;
    for (int L = 0; rc == 0 && L < r_vtk_levels(m, ls); ++L) rc = r_vtk_level(c, m, ls, L, box);
    free(box);
    return rc;
}

/** Where tile t's position is stored, for messages: its row of /dpamr/tiles/coord (version 1) or of
 *  /VTKHDF/LevelL/AMRBox (version 2; m->level_start set). */
static void r_tile_obj(const rctx *c, const mesh_t *m, dp_tidx t, char *out, size_t n)
{
    out[0] = '\0';
    if (!c) return; /* no message wanted */
    const int L = m->level[t];
    if (c->version == FORMAT_VERSION_V1) snprintf(out, n, "/dpamr/tiles/coord[%lld]", (long long)t);
    else snprintf(out, n, "/VTKHDF/Level%d/AMRBox[%lld]", L, (long long)(t - m->level_start[L]));
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
        if (x[a] < 0 || x[a] >= ext) {
            char obj[96];
            r_tile_obj(c, m, t, obj, sizeof obj);
            return rfail(c, "%s: tile (%d,%d,%d) is outside level %d's tile grid (axis %d: 0..%lld)", obj, x[0], x[1],
                         x[2], L, a, (long long)ext - 1);
        }
    }
    if (m->key[t] != dp_morton(m->dim, x[0], x[1], x[2]))
        return rfail(c, "/dpamr/tiles/key[%lld] does not match the Morton key of coord (%d,%d,%d)", (long long)t, x[0],
                     x[1], x[2]);
    if (t > 0 && L == m->level[t - 1] && m->key[t] <= m->key[t - 1]) {
        char obj[96];
        r_tile_obj(c, m, t, obj, sizeof obj);
        return rfail(c, "tiles not in canonical order: tile %lld (%s) does not follow tile %lld in Morton order "
                        "(duplicate or unsorted)", (long long)t, obj, (long long)t - 1);
    }
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
    if (!dp_parent_contains(mesh_tiles(m), p, t))
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
    const uint64_t want = mesh_root_tiles(m->root); /* 2^63 in 3D at the header's bound: past int64 */
    if (n0 < 0 || (uint64_t)n0 != want)
        return rfail(c, "level 0 has %lld tiles, expected root %dx%dx%d = %llu%s", (long long)n0, m->root[0],
                     m->root[1], m->root[2], (unsigned long long)want,
                     want > (uint64_t)INT64_MAX ? ", more tiles than dpamr can hold (at most 2^63 - 1)" : "");
    return 0;
}

/** The tile tree: positions, order, parents, level index, childmask. */
/** chk(c, m, t) for every tile t in [0, n): spread over the threads without messages (c NULL), then
 *  the first failing tile checked again with its message: the message of the sequential loop, in a
 *  fraction of its time (17.8M tiles on the scale deck). 0 or -1. */
static int r_check_tiles(rctx *c, const mesh_t *m, dp_tidx n, int (*chk)(rctx *, const mesh_t *, dp_tidx))
{
    dp_tidx first = n;
    OMP_PRAGMA(omp parallel for schedule(static, 16384) reduction(min : first))
    for (dp_tidx t = 0; t < n; ++t)
        if (t < first && chk(NULL, m, t)) first = t;
    return first < n ? chk(c, m, first) : 0;
}

static int r_check_tree(rctx *c, mesh_t *m, const uint8_t *cm)
{
    if (r_check_tiles(c, m, m->ntiles, r_check_tile_pos)) return -1;
    if (r_levels(c, m)) return -1;
    if (r_check_tiles(c, m, m->ntiles, r_check_parent)) return -1;
    mesh_index_children(m);
    for (dp_tidx t = 0; t < m->ntiles; ++t)
        if (cm[t] != m->childmask[t])
            return rfail(c, "/dpamr/tiles/childmask[%lld] is 0x%02x, but the tile's children give 0x%02x", (long long)t,
                         cm[t], m->childmask[t]);
    return 0;
}

/** /dpamr/deck as a malloc'd string, NULL when absent (0), or -1 on a malformed deck. */
static int r_deck(rctx *c, char **out)
{
    *out = NULL;
    const int has = r_has(c, c->g, "deck");
    if (has <= 0) return has;
    hid_t d = H5Dopen2(c->g, "deck", H5P_DEFAULT);
    hid_t t = d < 0 ? -1 : H5Dget_type(d), s = d < 0 ? -1 : H5Dget_space(d);
    int rc = -1;
    if (t < 0 || s < 0) rfail(c, "/dpamr/deck is not a dataset");
    else if (r_filters_ok(c, d, "/dpamr/deck") != 0) (void)0;
    else if (H5Tget_class(t) != H5T_STRING || H5Sget_simple_extent_type(s) != H5S_SCALAR)
        rfail(c, "/dpamr/deck is not a scalar string");
    else if (H5Tis_variable_str(t) <= 0 && (H5Tget_size(t) > DECK_MAX || H5Dget_storage_size(d) < H5Tget_size(t)))
        rfail(c, "/dpamr/deck declares %zu bytes and the file stores %llu of them (at most %d are read)",
              H5Tget_size(t), (unsigned long long)H5Dget_storage_size(d), DECK_MAX);
    else if (!(*out = r_string(-1, d, t, s))) rfail(c, "cannot read /dpamr/deck");
    else rc = 0;
    h5i_close(s);
    h5i_close(t);
    h5i_close(d);
    return rc;
}

/** Existence and type of the file before anything reads it. */
static int r_precheck(const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        h5i_seterr(err, errlen, "cannot open %s: %s", path, errno == ENOENT ? "no such file" : strerror(errno));
        return -1;
    }
    if (S_ISDIR(st.st_mode)) {
        h5i_seterr(err, errlen, "cannot open %s: it is a directory", path);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) { /* a FIFO would block the open, a device give endless bytes */
        h5i_seterr(err, errlen, "cannot open %s: not a regular file (a FIFO, socket or device is not an HDF5 file)", path);
        return -1;
    }
    return 0;
}

/** The version of the superblock of the file at path or of the image of n bytes (r_superblock), -1
 *  when there is no HDF5 signature, -2 when the file cannot be read (errno set). */
static int r_sb_version(const char *path, const void *image, size_t n)
{
    static const unsigned char sig[8] = { 0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n' };
    FILE *fp = image ? NULL : fopen(path, "rb");
    struct stat st;
    if (!image && (!fp || fstat(fileno(fp), &st) != 0)) {
        const int e = errno;
        if (fp) fclose(fp);
        errno = e;
        return -2;
    }
    const uint64_t size = image ? (uint64_t)n : (uint64_t)st.st_size;
    int version = -1;
    for (uint64_t off = 0; version < 0 && off + sizeof sig < size; off = off ? 2 * off : 512) {
        unsigned char b[sizeof sig + 1];
        if (image) memcpy(b, (const unsigned char *)image + off, sizeof b);
        else if (fseeko(fp, (off_t)off, SEEK_SET) != 0 || fread(b, 1, sizeof b, fp) != sizeof b) break;
        if (memcmp(b, sig, sizeof sig) == 0) version = b[sizeof sig];
    }
    if (fp) fclose(fp);
    return version;
}

/** Before HDF5 opens a file: its superblock, read here. The HDF5 signature is looked for where HDF5
 *  looks (byte 0, 512, 1024, 2048, ...: after a user block), in the file at path or in the image of
 *  n bytes; the superblock version is the byte after it. Versions 0 and 1 (the HDF5 1.6 format, still
 *  the default of HDF5 and h5py) carry no checksums anywhere in their metadata: a damaged byte goes
 *  unnoticed, and HDF5 1.10.8 can crash walking a damaged object header (issue 17). Versions 2 and 3
 *  checksum the superblock and, in the files of any tool set to the 1.8 format or newer, every
 *  object header (r_hdr_ok checks those dpamr opens). 0, or -1 with err set. */
static int r_superblock(const char *path, const void *image, size_t n, char *err, size_t errlen)
{
    const int version = r_sb_version(path, image, n);
    if (version == -2) {
        h5i_seterr(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    if (version < 0) {
        h5i_seterr(err, errlen, "%s: not an HDF5 file (no HDF5 signature at byte 0, 512, 1024, ...; expected a dpamr "
                                "mesh or output file, docs/format.md)", path);
        return -1;
    }
    if (version < 2) {
        h5i_seterr(err, errlen, "%s: HDF5 superblock version %d: the HDF5 1.6 file format, whose metadata carries no "
                                "checksums: a damaged file cannot be told from a good one and can crash the HDF5 "
                                "library, so dpamr reads only the HDF5 1.8 format or newer (what dpamr writes; h5py "
                                "writes it with libver=(\"v108\", \"v110\")); " CONVERT_HINT,
                   path, version, path);
        return -1;
    }
    return 0;
}

/** Everything after the file is open but the cells of version 2 (r_cells): header, arrays, checks,
 *  deck. */
/** The header and the level index (every declared size checked against the datasets' shapes and
 *  the machine's memory), then m allocated for its tiles: nothing of them read yet but the level
 *  index. *cm: room for the stored childmask (r_tree). 0 or -1. */
static int r_begin(rctx *c, mesh_t *m, uint8_t **cm)
{
    dp_tidx n = 0;
    int64_t ls[DP_MAX_LEVELS + 1];
    if (r_header(c, m)) return -1;
    const int v1 = c->version == FORMAT_VERSION_V1;
    if (v1 ? r_sizes_v1(c, m, &n) : r_sizes_v2(c, m, ls)) return -1;
    if (!v1) n = ls[m->nlevels];
    *cm = malloc((size_t)(n > 0 ? n : 1));
    if (!*cm || mesh_alloc_unset(m, n) != 0) /* every value is read before it is used */
        return rfail(c, "out of memory for %lld tiles", (long long)n);
    m->ntiles = n;
    if (!v1) memcpy(m->level_start, ls, sizeof(int64_t) * (size_t)(m->nlevels + 1)); /* for r_tile_obj */
    return 0;
}

/** After r_begin: the tile tree and the boxes (version 1: and the cells) with every check of them,
 *  and the deck (deck_text not NULL). 0 or -1. */
static int r_tree(rctx *c, mesh_t *m, const uint8_t *cm, char **deck_text)
{
    int64_t ls[DP_MAX_LEVELS + 1];
    memcpy(ls, m->level_start, sizeof ls);
    const int v1 = c->version == FORMAT_VERSION_V1;
    if ((v1 ? r_arrays_v1(c, m, m->ntiles, (uint8_t *)cm) : r_arrays_v2(c, m, ls, (uint8_t *)cm)) ||
        r_check_tree(c, m, cm))
        return -1;
    return deck_text ? r_deck(c, deck_text) : 0;
}

/** Open c->path read-only: the file on disk, or (image not NULL) the n bytes at image as an
 *  in-memory file of that name (the core driver, nothing written); after r_precheck (a file) and
 *  r_superblock, and with the root group's header checked (r_hdr_ok) before anything is looked up in
 *  it. The file, or -1 with err set. */
static hid_t r_open(rctx *c, const void *image, size_t n)
{
    if ((!image && r_precheck(c->path, c->err, c->errlen) != 0) ||
        r_superblock(c->path, image, n, c->err, c->errlen) != 0)
        return -1;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), f = -1;
    if (fapl >= 0 && (!image || (H5Pset_fapl_core(fapl, 1 << 16, 0) >= 0 &&
                                 H5Pset_file_image(fapl, (void *)image, n) >= 0)))
        f = H5Fopen(c->path, H5F_ACC_RDONLY, fapl);
    if (f < 0) {
        char why[200];
        h5i_seterr(c->err, c->errlen, "cannot open %s: %s", c->path, h5i_reason(why));
    }
    h5i_close(fapl);
    if (f >= 0 && r_hdr_ok(c, f, ".") != 0) {
        H5Fclose(f);
        return -1;
    }
    return f;
}

/** The loader between h5io_read_begin (or h5io_read_open) and h5io_read_close: the open file and
 *  its context. */
struct h5io_reader {
    rctx c;
    hid_t f;
    mesh_t *m;
    mesh_t view; /* m as h5io_read_begin left it: what the cells need (fields, level index), theirs to read
                    while r_tree fills m's tile arrays and rebuilds its level index */
    uint8_t *cm; /* the stored childmask until r_tree compares it */
    rctx cells;  /* the cells' own context, taken when the reader is made (before any thread), so that
                    h5io_read_cells never reads c while r_tree changes its group on another thread */
    rtree tree;
    int on_disk; /* not a file image */
    rplan plan;  /* where the cells lie (h5io_read_plan) */
    rstats st;   /* how they were read */
};

static void r_reader_free(h5io_reader_t *rd)
{
    if (!rd) return;
    h5i_close(rd->c.g);
    if (rd->f >= 0) H5Fclose(rd->f);
    free(rd->cm);
    pthread_cond_destroy(&rd->tree.cv);
    pthread_mutex_destroy(&rd->tree.mu);
    free(rd);
}

/** Open path, or the file image (image, n) named path, and read its header and level index into m,
 *  allocated for its tiles (r_begin); *out the reader. 0, -1 or H5IO_BAD_CONTENT (m freed, the file
 *  closed). */
static int r_begin_file(const char *path, const void *image, size_t n, mesh_t *m, h5io_reader_t **out, char *err,
                        size_t errlen)
{
    memset(m, 0, sizeof *m);
    *out = NULL;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    h5io_reader_t *rd = malloc(sizeof *rd);
    if (!rd) {
        h5i_seterr(err, errlen, "%s: out of memory", path);
        return -1;
    }
    *rd = (h5io_reader_t){ .c = { path, err, errlen, -1, "/dpamr", -1, FORMAT_VERSION, 0, NULL, 0 }, .f = -1, .m = m,
                           .on_disk = !image };
    pthread_mutex_init(&rd->tree.mu, NULL);
    pthread_cond_init(&rd->tree.cv, NULL);
    atomic_init(&rd->tree.state, 0);
    rctx *c = &rd->c;
    hid_t f = r_open(c, image, n);
    if (f < 0) {
        r_reader_free(rd);
        return -1;
    }
    c->file = rd->f = f;
    int rc = -1;
    const int has = r_has(c, f, "dpamr"); /* its header checked: a damaged one is a failed check */
    if (has <= 0) {
        if (has == 0) rfail(c, "not a dpamr file (a mesh or an output): no /dpamr group; see docs/format.md");
        else rc = H5IO_BAD_CONTENT;
        goto done;
    }
    c->g = H5Gopen2(f, "dpamr", H5P_DEFAULT);
    if (c->g < 0) {
        char why[200];
        rfail(c, "not a dpamr file: /dpamr is not a group (HDF5: %s); see docs/format.md", h5i_reason(why));
        rc = H5IO_BAD_CONTENT;
        goto done;
    }
    rc = r_begin(c, m, &rd->cm) == 0 ? 0 : c->no_filter ? H5IO_NO_FILTER : H5IO_BAD_CONTENT;
done:
    if (rc != 0) {
        r_reader_free(rd);
        mesh_free(m);
        return rc;
    }
    rd->view = *m;
    rd->cells = rd->c;
    rd->cells.tree = &rd->tree;
    *out = rd;
    return 0;
}

int h5io_read_begin(const char *path, mesh_t *m, h5io_reader_t **rd, char *err, size_t errlen)
{
    return r_begin_file(path, NULL, 0, m, rd, err, errlen);
}

int h5io_read_tree(h5io_reader_t *rd, char **deck_text)
{
    if (deck_text) *deck_text = NULL;
    const int rc = r_tree(&rd->c, rd->m, rd->cm, deck_text);
    free(rd->cm);
    rd->cm = NULL;
    if (rc != 0 && deck_text) {
        free(*deck_text);
        *deck_text = NULL;
    }
    if (rc != 0) {
        h5io_read_stop(rd);
        return rd->c.no_filter ? H5IO_NO_FILTER : H5IO_BAD_CONTENT;
    }
    pthread_mutex_lock(&rd->tree.mu);
    atomic_store(&rd->tree.state, 1);
    pthread_cond_broadcast(&rd->tree.cv);
    pthread_mutex_unlock(&rd->tree.mu);
    return 0;
}

/** r_begin_file, then r_tree: all but the cells of version 2; *out the reader. 0, -1 or
 *  H5IO_BAD_CONTENT (m freed, the file closed). */
static int r_open_file(const char *path, const void *image, size_t n, mesh_t *m, char **deck_text,
                       h5io_reader_t **out, char *err, size_t errlen)
{
    if (deck_text) *deck_text = NULL;
    int rc = r_begin_file(path, image, n, m, out, err, errlen);
    if (rc == 0 && (rc = h5io_read_tree(*out, deck_text)) != 0) {
        r_reader_free(*out);
        *out = NULL;
        mesh_free(m);
    }
    return rc;
}

int h5io_read_open(const char *path, mesh_t *m, char **deck_text, h5io_reader_t **rd, char *err, size_t errlen)
{
    return r_open_file(path, NULL, 0, m, deck_text, rd, err, errlen);
}

int h5io_read_plan(h5io_reader_t *rd)
{
    if (rd->plan.done) return rd->plan.raw;
    if (r_plan(&rd->c, rd->m, rd->m->level_start, rd->on_disk, &rd->plan) == 0) return rd->plan.raw;
    return rd->c.no_filter ? H5IO_NO_FILTER : H5IO_BAD_CONTENT;
}

int h5io_read_head_first(const h5io_reader_t *rd)
{
    return rd->plan.done && rd->plan.head_first;
}

int h5io_read_threads(void)
{
    return READ_THREADS + 1;
}

int h5io_read_cells(h5io_reader_t *rd, h5io_ready_fn ready, void *ctx)
{
    /* its own context (r_tree may be using the reader's on another thread: its group, its messages)
     * and its own view of the mesh; a failure is put in words once the tree is in (r_tree_wait) */
    rctx c = rd->cells;
    const int rc = r_cells(&c, &rd->view, rd->view.level_start, rd->on_disk, &rd->plan, ready, ctx, &rd->st);
    return rc == 0 ? 0 : c.no_filter ? H5IO_NO_FILTER : H5IO_BAD_CONTENT;
}

void h5io_read_stats(const h5io_reader_t *rd, h5io_read_stats_t *s)
{
    *s = (h5io_read_stats_t){ .ms = rd->st.ms, .read_ms = rd->st.read_ms, .threads = rd->st.threads };
}

void h5io_read_stop(h5io_reader_t *rd)
{
    pthread_mutex_lock(&rd->tree.mu);
    atomic_store(&rd->tree.state, -1);
    pthread_cond_broadcast(&rd->tree.cv);
    pthread_mutex_unlock(&rd->tree.mu);
}

void h5io_read_close(h5io_reader_t *rd) { r_reader_free(rd); }

/** h5io_read of path, or of the file image (image, n) named path: the reader's three steps. */
static int r_read_file(const char *path, const void *image, size_t n, mesh_t *m, char **deck_text, char *err,
                       size_t errlen)
{
    h5io_reader_t *rd;
    int rc = r_open_file(path, image, n, m, deck_text, &rd, err, errlen);
    if (rc != 0) return rc;
    rc = h5io_read_cells(rd, NULL, NULL);
    h5io_read_close(rd);
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
    const int has = r_has(c, loc, name);
    hid_t g = has > 0 ? H5Gopen2(loc, name, H5P_DEFAULT) : -1;
    if (g < 0 && has >= 0) rfail(c, "missing group %s/%s", ppath, name);
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
    /* A version-1 file's checksums were recorded with the definition before the GPU validator (a
     * chunk's cells hashed and summed in one sequence, docs/format.md): not comparable with today's,
     * so not compared (its cells are still checked: the two copies must agree, v_vtkhdf). */
    const int v1 = c->version == FORMAT_VERSION_V1;
    if (r_read(c, "validation/checksum_hash", T_U64, 2, d2, hash)) goto done; /* present and shaped in either */
    for (int L = 0; L < nl && !v1; ++L)
        for (int f = 0; f < nf; ++f) {
            if (hash[L * nf + f] == v->hash[L][f]) continue;
            rfail(c, "checksums: FAILED: level %d field %s hash %016llx, recorded %016llx in %s/checksum_hash: the data "
                     "changed after it was written",
                  L, m->field_name[f], (unsigned long long)v->hash[L][f], (unsigned long long)hash[L * nf + f], obj);
            goto done;
        }
    if (r_read(c, "validation/checksum_sum", T_F64, 2, d2, sum)) goto done;
    for (int L = 0; L < nl && !v1; ++L)
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
        (!v1 && (v_attr(c, g, obj, "tree_hash", 2, 1, &th) || v_attr(c, g, obj, "total_hash", 2, 1, &tot))))
        goto done;
    uint64_t present;
    if (v1 && (r_attr_num(c, g, obj, "tree_hash", 2, 1, &present) || r_attr_num(c, g, obj, "total_hash", 2, 1, &present)))
        goto done;
    if (!(first = r_attr_str(c, g, obj, "first_failure"))) goto done;
    if (strncmp(first, v->first_failure, sizeof v->first_failure) != 0) {
        rfail(c, "%s@first_failure is '%.200s', but the file's data give '%.200s'", obj, first, v->first_failure);
        goto done;
    }
    rc = 0;
done:
    free(first);
    h5i_close(g);
    return rc;
}

/** /dpamr/provenance/ranks (in group g) as nranks rows, malloc'd, or NULL with err set. */
static h5io_rank_t *v_rank_rows(rctx *c, hid_t g, const char *obj, int64_t nranks)
{
    const int has = r_has(c, g, "ranks");
    if (has < 0) return NULL;
    hid_t d = has ? H5Dopen2(g, "ranks", H5P_DEFAULT) : -1;
    hid_t sp = d < 0 ? -1 : H5Dget_space(d), ft = d < 0 ? -1 : H5Dget_type(d), mt = h5i_rank_mtype();
    hsize_t dims[1] = { 0 };
    const int shaped = sp >= 0 && ft >= 0 && H5Tget_class(ft) == H5T_COMPOUND &&
                       H5Sget_simple_extent_type(sp) == H5S_SIMPLE && H5Sget_simple_extent_ndims(sp) == 1 &&
                       H5Sget_simple_extent_dims(sp, dims, NULL) == 1 && dims[0] == (hsize_t)nranks;
    char where[200];
    snprintf(where, sizeof where, "%s/ranks", obj);
    if (shaped && r_filters_ok(c, d, where) != 0) {
        h5i_close(mt), h5i_close(ft), h5i_close(sp), h5i_close(d);
        return NULL;
    }
    h5io_rank_t *rows = shaped ? malloc((size_t)nranks * sizeof *rows) : NULL;
    const int got = rows && mt >= 0 && H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows) >= 0;
    h5i_close(mt), h5i_close(ft), h5i_close(sp), h5i_close(d);
    if (got) return rows;
    free(rows);
    if (d < 0) rfail(c, "missing dataset %s/ranks", obj);
    else if (!shaped) rfail(c, "%s/ranks is not a table of %lld rows (%s@nranks)", obj, (long long)nranks, obj);
    else rfail(c, "cannot read %s/ranks (damaged file, or not the columns of docs/format.md)", obj);
    return NULL;
}

/** The rank table of a refinement output (group g) accounts for every root tile, tile and cell: the
 *  ranks numbered 0.., every count of every row 0..the file's total, and each column's sum the total.
 *  Every count is checked on its own and the sums kept at or below the totals as they grow, so that
 *  no sum overflows (a row of 2^62 tiles) and no negative count makes up for another (200 and -114
 *  tiles summing to the right 86). The first bad row and column are named. */
static int v_ranks(rctx *c, hid_t g, const char *obj, const mesh_t *m)
{
    int64_t nranks;
    if (r_attr_num(c, g, obj, "nranks", 0, 1, &nranks)) return -1;
    if (nranks < 1 || nranks > (1 << 24))
        return rfail(c, "%s@nranks is %lld, expected 1..%d", obj, (long long)nranks, 1 << 24);
    h5io_rank_t *rows = v_rank_rows(c, g, obj, nranks);
    if (!rows) return -1;
    static const char *const col[3] = { "root_tiles", "tiles", "cells" };
    static const char *const what[3] = { "root tiles", "tiles", "cells" };
    /* r_sizes_v1/v2 bound ntiles by INT64_MAX / 64 / cells: the cells' total is no overflow */
    const int64_t total[3] = { m->level_start[1], m->ntiles, (int64_t)m->ntiles * mesh_cells(m) };
    int64_t sum[3] = { 0, 0, 0 };
    int rc = 0;
    for (int64_t r = 0; rc == 0 && r < nranks; ++r) {
        if (rows[r].rank != r) {
            rc = rfail(c, "%s/ranks[%lld].rank is %d, expected %lld", obj, (long long)r, rows[r].rank, (long long)r);
            break;
        }
        const int64_t v[3] = { rows[r].root_tiles, rows[r].tiles, rows[r].cells };
        for (int k = 0; rc == 0 && k < 3; ++k) {
            if (v[k] < 0 || v[k] > total[k])
                rc = rfail(c, "%s/ranks[%lld].%s is %lld, expected 0..%lld (the file's %s)", obj, (long long)r, col[k],
                           (long long)v[k], (long long)total[k], what[k]);
            else if (v[k] > total[k] - sum[k]) /* sum + v would pass the total (and never overflows) */
                rc = rfail(c, "%s/ranks[0..%lld].%s sum to more than the file's %lld %s (%lld before row %lld, which "
                              "adds %lld)", obj, (long long)r, col[k], (long long)total[k], what[k], (long long)sum[k],
                           (long long)r, (long long)v[k]);
            else sum[k] += v[k];
        }
    }
    free(rows);
    if (rc == 0 && (sum[0] != total[0] || sum[1] != total[1] || sum[2] != total[2]))
        rc = rfail(c, "%s/ranks accounts for %lld root tiles, %lld tiles and %lld cells, but the file has %lld, %lld "
                      "and %lld", obj, (long long)sum[0], (long long)sum[1], (long long)sum[2], (long long)total[0],
                   (long long)total[1], (long long)total[2]);
    return rc;
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
    h5i_close(g);
    return rc;
}

/** Dataset (c->g)/rel of level L, of type want and n rows of row elements, must hold exactly the
 *  values at want_buf; the first difference is named by tile (of level L) and cell (CellData: a row
 *  per cell) or column (AMRBox: a row per tile). buf: scratch of n * row elements. */
/** "(c->gname)/rel differs from the tiles in /dpamr at element i", with the tile of level L and the
 *  cell (per_cell: a CellData array, one value per cell) or column it is. Always -1. */
static int v_differs(rctx *c, const mesh_t *m, int L, const char *rel, long long i, int per_cell, long long row)
{
    const long long cells = mesh_cells(m);
    const long long t = m->level_start[L] + (per_cell ? i / cells : i / row);
    return rfail(c, "%s/%s differs from the tiles in /dpamr at element %lld: tile %lld (level %d, coord %d,%d,%d)%s%lld",
                 c->gname, rel, i, t, L, m->coord[3 * t], m->coord[3 * t + 1], m->coord[3 * t + 2],
                 per_cell ? " cell " : " column ", per_cell ? i % cells : i % row);
}

static int v_same(rctx *c, const mesh_t *m, int L, const char *rel, rtype want, hsize_t n, hsize_t row,
                  const void *want_buf, void *buf)
{
    const hsize_t dims[2] = { n, row };
    if (r_read(c, rel, want, row > 1 ? 2 : 1, dims, buf)) return -1;
    const size_t sz = H5Tget_size(rtype_mem(want));
    const long long i = v_first_diff(buf, want_buf, (size_t)(n * row), sz);
    if (i < 0) return 0;
    return v_differs(c, m, L, rel, i, row == 1 && strcmp(rel, "AMRBox") != 0, (long long)row);
}

/** Elements [i0, i1) of the vtkGhostType of the tiles from s (g: those elements) against what
 *  w_ghost derives from the tree (oct: the octant of each cell): the first that differs, or -1. */
static long long v_ghost_diff(const mesh_t *m, dp_tidx s, const uint8_t *oct, const uint8_t *g, size_t i0, size_t i1)
{
    const size_t cells = (size_t)mesh_cells(m);
    for (size_t i = i0; i < i1;) {
        const size_t c0 = i % cells, c1 = i1 - i < cells - c0 ? c0 + (i1 - i) : cells;
        const unsigned cm = m->childmask[s + (dp_tidx)(i / cells)];
        const uint8_t *q = g + (i - i0) - c0; /* the tile's first cell */
        unsigned bad = 0;
        if (cm == 0)
            for (size_t k = c0; k < c1; ++k) bad |= q[k];
        else
            for (size_t k = c0; k < c1; ++k) bad |= q[k] ^ h5i_ghost(cm, oct[k]);
        if (bad)
            for (size_t k = c0; k < c1; ++k)
                if (q[k] != h5i_ghost(cm, oct[k])) return (long long)(i + (k - c0));
        i += c1 - c0;
    }
    return -1;
}

/** The chunk size (cells) of a vtkGhostType stored as dpamr writes it, chunked and deflated (and
 *  with zlib here to inflate it), or 0: read it whole through HDF5. */
static hsize_t v_ghost_chunk(hid_t dcpl)
{
    hsize_t C = 0;
#ifdef DPAMR_HAVE_ZLIB
    unsigned flags = 0, fc = 0, cdv[8];
    size_t nel = 8;
    char name[32];
    if (dcpl < 0 || H5Pget_layout(dcpl) != H5D_CHUNKED || H5Pget_chunk(dcpl, 1, &C) != 1 || H5Pget_nfilters(dcpl) != 1 ||
        H5Pget_filter2(dcpl, 0, &flags, &nel, cdv, sizeof name, name, &fc) != H5Z_FILTER_DEFLATE)
        C = 0;
#else
    (void)dcpl;
#endif
    H5Eclear2(H5E_DEFAULT);
    return C;
}

/** Level L's vtkGhostType (the nt tiles from s) equal to what w_ghost derives from the tree. Stored
 *  as dpamr writes it (v_ghost_chunk), its chunks are read raw here (H5Dread_chunk: the HDF5 calls
 *  stay on this thread) and inflated and compared in parallel (zlib, OpenMP), instead of HDF5
 *  inflating them one after the other (about 0.6 GB/s: 7 s on the scale deck); any other storage is
 *  read whole. 0, or -1 with the first difference, or the first chunk that does not inflate. */
static int v_ghost(rctx *c, const mesh_t *m, int L, dp_tidx s, dp_tidx nt, const uint8_t *oct)
{
    hsize_t n = (hsize_t)nt * (hsize_t)mesh_cells(m);
    const hid_t ds = r_dset(c, "vtkGhostType", T_U8, 1, &n);
    if (ds < 0) return -1;
    const hid_t dcpl = H5Dget_create_plist(ds);
    const hsize_t C = n > 0 ? v_ghost_chunk(dcpl) : 0;
    const size_t nch = C > 0 ? (size_t)((n + C - 1) / C) : 1;
    uint8_t fill = 0;
    if (dcpl >= 0 && H5Pget_fill_value(dcpl, H5T_NATIVE_UINT8, &fill) < 0) fill = 0; /* an unwritten chunk reads so */
    size_t *off = malloc((nch + 1) * sizeof *off);
    uint32_t *mask = calloc(nch, sizeof *mask);
    uint8_t *raw = NULL;
    long long first = LLONG_MAX, bad_chunk = LLONG_MAX;
    int rc = -1;
    if (!off || !mask) {
        rfail(c, "out of memory checking %s/vtkGhostType", c->gname);
        goto done;
    }
    off[0] = 0;
    for (size_t k = 0; C > 0 && k < nch; ++k) {
        hsize_t o = (hsize_t)k * C, sz = 0;
        if (H5Dget_chunk_storage_size(ds, &o, &sz) < 0) sz = 0; /* not written: the fill value */
        off[k + 1] = off[k] + (size_t)sz;
    }
    raw = malloc(C > 0 ? (off[nch] > 0 ? off[nch] : 1) : (size_t)(n > 0 ? n : 1));
    if (!raw) {
        rfail(c, "out of memory checking %s/vtkGhostType", c->gname);
        goto done;
    }
    for (size_t k = 0; C > 0 && k < nch; ++k) {
        hsize_t o = (hsize_t)k * C;
        if (off[k + 1] > off[k] && H5Dread_chunk(ds, H5P_DEFAULT, &o, &mask[k], raw + off[k]) < 0) {
            rfail(c, "cannot read %s/vtkGhostType (damaged file?)", c->gname);
            goto done;
        }
    }
    if (C == 0) { /* read whole */
        if (n > 0 && H5Dread(ds, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw) < 0) {
            rfail(c, "cannot read %s/vtkGhostType (damaged file?)", c->gname);
            goto done;
        }
        first = v_ghost_diff(m, s, oct, raw, 0, (size_t)n);
        if (first < 0) first = LLONG_MAX;
    }
#ifdef DPAMR_HAVE_ZLIB
    int oom = 0;
    OMP_PRAGMA(omp parallel if (C > 0 && nch > 1) reduction(min : first, bad_chunk) reduction(| : oom))
    {
        uint8_t *out = C > 0 ? malloc((size_t)C) : NULL;
        OMP_PRAGMA(omp for schedule(dynamic, 8))
        for (size_t k = 0; k < (C > 0 ? nch : 0); ++k) {
            if (!out) {
                oom = 1;
                continue;
            }
            const size_t i0 = (size_t)(k * C), i1 = n - i0 < C ? (size_t)n : i0 + (size_t)C, sz = off[k + 1] - off[k];
            const uint8_t *g = out;
            uLongf got = (uLongf)C;
            if (sz == 0) memset(out, fill, (size_t)C);
            else if (mask[k] & 1u) /* stored without deflate */
                g = sz == C ? raw + off[k] : NULL;
            else if (uncompress(out, &got, raw + off[k], (uLong)sz) != Z_OK || got != (uLongf)C)
                g = NULL;
            if (!g) {
                if ((long long)i0 < bad_chunk) bad_chunk = (long long)i0;
                continue;
            }
            const long long d = v_ghost_diff(m, s, oct, g, i0, i1);
            if (d >= 0 && d < first) first = d;
        }
        free(out);
    }
    if (oom) {
        rfail(c, "out of memory checking %s/vtkGhostType", c->gname);
        goto done;
    }
#endif
    if (bad_chunk < LLONG_MAX && bad_chunk <= first)
        rfail(c, "%s/vtkGhostType: its chunk of elements %lld to %lld does not inflate to %llu bytes (damaged file)",
              c->gname, bad_chunk, bad_chunk + (long long)C - 1, (unsigned long long)C);
    else if (first < LLONG_MAX) v_differs(c, m, L, "vtkGhostType", first, 1, 1);
    else rc = 0;
done:
    free(raw);
    free(mask);
    free(off);
    h5i_close(dcpl);
    H5Dclose(ds);
    return rc;
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
    const int v1 = c->version == FORMAT_VERSION_V1;
    /* version 1: the second copies of the boxes and cells are read into buf, the boxes derived into
     * box (version 2's boxes were read and checked with the tree) */
    void *buf = malloc(v1 ? (size_t)(mx > 0 ? mx : 1) * (cells * 4 > 24 ? cells * 4 : 24) : 1);
    int32_t *box = v1 ? malloc((size_t)(mx > 0 ? mx : 1) * 6 * sizeof *box) : NULL;
    uint8_t *oct = malloc(cells); /* each cell's octant (vtkGhostType) */
    char why[64];
    if (!buf || !oct || (v1 && !box)) {
        rfail(c, "out of memory checking /VTKHDF");
        goto done;
    }
    w_octants(m, oct);
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
        c->g = lev;
        c->gname = path;
        /* version 2: the tiles were read from these boxes, each checked to be exactly a tile's cells
         * (r_box): what w_boxes derives from them again; version 1: a second copy, compared */
        if (v1 && (w_boxes(m, s, e, box), v_same(c, m, L, "AMRBox", T_I32, nt, 6, box, buf)))
            goto done;
        for (int k = 0; k < 2; ++k) {
            if ((sub = v_group(c, lev, path, k ? "FieldData" : "PointData")) < 0) goto done;
            h5i_close(sub);
            sub = -1;
        }
        if ((cd = v_group(c, lev, path, "CellData")) < 0) goto done;
        snprintf(path, sizeof path, "/VTKHDF/Level%d/CellData", L);
        c->g = cd;
        c->gname = path;
        /* version 1: the second copy of the cells equals /dpamr/fields (in version 2 they were read
         * from here, and the recorded checksums have been compared with them) */
        for (int f = 0; v1 && f < m->nf; ++f)
            if (v_same(c, m, L, m->field_name[f], T_F32, nt * cells, 1, m->field[f] + (size_t)s * cells, buf)) goto done;
        if (v_ghost(c, m, L, s, (dp_tidx)nt, oct)) goto done;
        h5i_close(cd);
        h5i_close(lev);
        cd = lev = -1;
    }
    /* nothing else in /VTKHDF: its members are exactly Level0 .. Level(nv-1), checked above (a reader
     * shows what it finds there) */
    H5G_info_t gi;
    if (H5Gget_info(vtk, &gi) < 0) {
        rfail(c, "cannot list /VTKHDF");
        goto done;
    }
    for (hsize_t i = 0; gi.nlinks != (hsize_t)nv && i < gi.nlinks; ++i) {
        char nm[80] = "";
        int L = -1, used = 0;
        if (H5Lget_name_by_idx(vtk, ".", H5_INDEX_NAME, H5_ITER_INC, i, nm, sizeof nm, H5P_DEFAULT) < 0) {
            rfail(c, "cannot list /VTKHDF");
            goto done;
        }
        if (sscanf(nm, "Level%d%n", &L, &used) == 1 && nm[used] == '\0' && L >= 0 && L < nv &&
            snprintf(why, sizeof why, "Level%d", L) > 0 && strcmp(why, nm) == 0)
            continue; /* one of the levels checked */
        rfail(c, "/VTKHDF/%.64s exists, but /VTKHDF holds only the levels the tiles in /dpamr give: Level0..Level%d",
              nm, nv - 1);
        goto done;
    }
    rc = 0;
done:
    free(type);
    free(buf);
    free(box);
    free(oct);
    h5i_close(sub);
    h5i_close(cd);
    h5i_close(lev);
    h5i_close(vtk);
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

/** What v_verify_file compares: everything, or the records alone (/dpamr/validation, /provenance). */
enum { VERIFY_ALL, VERIFY_RECORDS };

/** h5io_verify of path, or of the file image (image, n) named path; what: VERIFY_ALL or
 *  VERIFY_RECORDS (h5io_verify_records). */
static int v_verify_file(const char *path, const void *image, size_t n, const mesh_t *m, const valid_report_t *v,
                         int what, char *err, size_t errlen)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    rctx c = { path, err, errlen, -1, "/dpamr", -1, FORMAT_VERSION, 0, NULL, 0 };
    hid_t f = r_open(&c, image, n);
    if (f < 0) return -1;
    c.file = f;
    int rc = -1;
    const int has = r_has(&c, f, "dpamr");
    c.g = has > 0 ? H5Gopen2(f, "dpamr", H5P_DEFAULT) : -1;
    const hid_t dg = c.g;
    if (c.g < 0 && has >= 0) rfail(&c, "no /dpamr group");
    else if (c.g >= 0 && r_format(&c) == 0 && v_validation(&c, m, v) == 0 && v_provenance(&c, m) == 0)
        rc = what == VERIFY_RECORDS ? 0 : v_vtkhdf(&c, f, m);
    if (rc == 0 && c.version == FORMAT_VERSION_V1) rc = 1; /* passed; its checksums are of the old definition */
    if (rc < 0 && c.no_filter) rc = H5IO_NO_FILTER;
    h5i_close(dg);
    H5Fclose(f);
    return rc;
}

int h5io_verify_records(const char *path, const mesh_t *m, const valid_report_t *v, char *err, size_t errlen)
{
    return v_verify_file(path, NULL, 0, m, v, VERIFY_RECORDS, err, errlen);
}

int h5io_read_vtkhdf(h5io_reader_t *rd, char *err, size_t errlen)
{
    rctx c = rd->c; /* its own messages and groups: the cells may still be coming on another thread */
    c.err = err, c.errlen = errlen, c.no_h5 = 0;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* this thread's own setting (r_cells says why) */
    return v_vtkhdf(&c, rd->f, rd->m) == 0 ? 0 : c.no_filter ? H5IO_NO_FILTER : H5IO_BAD_CONTENT;
}

/* ---- ownership: did dpamr write this file? ------------------------------------------------- */

int h5io_is_dpamr_output(const char *path, char *what, size_t n)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    char err[1200] = "";
    rctx c = { path, err, sizeof err, -1, "/dpamr", -1, FORMAT_VERSION, 0, NULL, 0 };
    const int sb = r_sb_version(path, NULL, 0);
    hid_t f = sb >= 2 ? r_open(&c, NULL, 0) : -1; /* an old-format file (superblock 0 or 1) is not opened */
    if (f < 0) {
        if (sb == -2) h5i_seterr(what, n, "cannot be read (%s)", strerror(errno));
        else if (sb == -1) h5i_seterr(what, n, "is not an HDF5 file, so not a dpamr output");
        else if (sb < 2)
            h5i_seterr(what, n, "is an HDF5 file in the 1.6 format (superblock version %d), which dpamr does not open "
                                "(docs/format.md), so it cannot tell whether it wrote it (dpamr before version 1.8-format "
                                "files did)", sb);
        else h5i_seterr(what, n, "cannot be opened as a dpamr file, so dpamr cannot tell whether it wrote it (%s)", err);
        return 0;
    }
    /* what every h5io_write with provenance writes and no other tool does: /dpamr/provenance with
     * its version and variant attributes, next to /dpamr/deck (tools/mesh_from_numpy.py writes neither),
     * in either layout (format version 1 or 2). The headers on the way are checked (r_has) before
     * the attributes are opened by name. */
    const int deck = r_has(&c, f, "dpamr/deck"), prov = deck > 0 ? r_has(&c, f, "dpamr/provenance") : 0;
    hid_t p = prov > 0 ? H5Gopen2(f, "dpamr/provenance", H5P_DEFAULT) : -1;
    hid_t a1 = p < 0 ? -1 : r_attr_open(&c, p, "/dpamr/provenance", "version");
    hid_t a2 = a1 < 0 ? -1 : r_attr_open(&c, p, "/dpamr/provenance", "variant");
    int own = a2 >= 0;
    if (own) { /* which kind: a level-0 mesh of `dpamr mesh` (variant "mesh") or a run's output */
        char *variant = r_attr_str(&c, p, "/dpamr/provenance", "variant");
        if (variant && strcmp(variant, "mesh") == 0) own = 2;
        free(variant);
    }
    if (deck < 0 || prov < 0)
        h5i_seterr(what, n, "is damaged, so dpamr cannot tell whether it wrote it (%s)", err);
    else if (!own)
        h5i_seterr(what, n, "was not written by dpamr (no /dpamr/deck and /dpamr/provenance with its version and variant)");
    h5i_close(a2);
    h5i_close(a1);
    h5i_close(p);
    H5Fclose(f);
    H5Eclear2(H5E_DEFAULT);
    return own;
}

int h5io_dpamr_trace(const char *path)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    char err[1200] = "";
    rctx c = { path, err, sizeof err, -1, "/dpamr", -1, FORMAT_VERSION, 0, NULL, 0 };
    const int sb = r_sb_version(path, NULL, 0);
    hid_t f = sb >= 2 ? r_open(&c, NULL, 0) : -1;
    if (f < 0) return sb == -1 ? 0 : -1; /* not HDF5: no trace; unreadable or an old format: cannot tell */
    const int deck = r_has(&c, f, "dpamr/deck"), prov = r_has(&c, f, "dpamr/provenance");
    H5Fclose(f);
    H5Eclear2(H5E_DEFAULT);
    if (deck > 0 || prov > 0) return 1;
    return deck < 0 || prov < 0 ? -1 : 0;
}

int h5io_verify(const char *path, const mesh_t *m, const valid_report_t *v, char *err, size_t errlen)
{
    return v_verify_file(path, NULL, 0, m, v, VERIFY_ALL, err, errlen);
}

int h5io_verify_image(const void *image, size_t n, const char *name, const mesh_t *m, const valid_report_t *v,
                      char *err, size_t errlen)
{
    return v_verify_file(name, image, n, m, v, VERIFY_ALL, err, errlen);
}

int h5io_read_step(const char *path, long long *step, double *time, char **deck_text, char *err, size_t errlen)
{
    if (deck_text) *deck_text = NULL;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    rctx c = { path, err, errlen, -1, "/dpamr", -1, FORMAT_VERSION, 0, NULL, 0 };
    hid_t f = r_open(&c, NULL, 0), g = -1;
    if (f < 0) return -1;
    int rc = r_has(&c, f, "dpamr");
    if (rc == 0) rc = rfail(&c, "no /dpamr group (not a file dpamr wrote)");
    if (rc == 1 && (g = H5Gopen2(f, "dpamr", H5P_DEFAULT)) < 0) rc = rfail(&c, "cannot open /dpamr");
    if (rc == 1) {
        const htri_t has = H5Aexists(g, "step");
        if (has < 0) rc = rfail(&c, "cannot look up attribute /dpamr@step");
        else if (has == 0) rc = 0; /* a single build's file, not a time step's */
    }
    int64_t s = 0;
    if (rc == 1 && (r_attr_num(&c, g, "/dpamr", "step", 0, 1, &s) != 0 || r_attr_num(&c, g, "/dpamr", "time", 1, 1, time) != 0))
        rc = -1;
    if (rc == 1 && (s < 0 || !isfinite(*time) || *time < 0))
        rc = rfail(&c, "/dpamr@step = %lld, @time = %g: a step is >= 0 and its time finite and >= 0", (long long)s, *time);
    if (rc == 1) *step = (long long)s;
    if (rc == 1 && deck_text) {
        c.g = g;
        if (r_deck(&c, deck_text) < 0) rc = -1;
    }
    h5i_close(g);
    H5Fclose(f);
    H5Eclear2(H5E_DEFAULT);
    return rc;
}
