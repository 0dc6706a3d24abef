/* h5io_common.c - what the writer, the collective writer and the check (io/h5io_read.c) share:
 * handle and message helpers, and the /VTKHDF layout derived from the tiles (AMRBox, vtkGhostType,
 * the levels shown), which h5io_write writes and h5io_verify compares bit for bit. */
#include "io/h5io_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

/* ---- small helpers ----------------------------------------------------------------------- */

/** Close any HDF5 handle (ignores invalid ids). */
void h5i_close(hid_t id)
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
void h5i_seterr(char *err, size_t errlen, const char *fmt, ...)
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
const char *h5i_reason(char *buf)
{
    buf[0] = '\0';
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, walk_first, buf);
    H5Eclear2(H5E_DEFAULT);
    if (!buf[0]) snprintf(buf, 200, "HDF5 call failed");
    return buf;
}

int h5i_metadata_room(hid_t f, const char *tmp, const char *path, char *err, size_t errlen)
{
    size_t max = 0, min_clean = 0, cur = 0;
    int n = 0;
    struct statvfs sv;
    if (H5Fget_mdc_size(f, &max, &min_clean, &cur, &n) < 0 || statvfs(tmp, &sv) != 0) return 0; /* cannot tell */
    const double have = (double)sv.f_bavail * (double)sv.f_frsize, need = (double)cur + 8192.0;
    if (have >= need) return 0;
    h5i_seterr(err, errlen, "cannot write %s: the file system has %.0f bytes left and the file's metadata needs up to "
               "%.0f more (No space left on device)", path, have, need);
    return -1;
}

/** Full HDF5 path of loc/name, for messages. */
void h5i_obj_path(hid_t loc, const char *name, char *out, size_t n)
{
    char base[512] = "";
    if (H5Iget_name(loc, base, sizeof base) < 0) base[0] = '\0';
    if (!name) snprintf(out, n, "%s", base);
    else snprintf(out, n, "%s%s%s", base, strcmp(base, "/") == 0 ? "" : "/", name);
}

/** Is a field name usable as an HDF5 link name and in the space-separated list? */
int h5i_name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= DP_NAME_LEN) return 0;
    if (strcmp(s, ".") == 0 || strcmp(s, "..") == 0 || strcmp(s, "vtkGhostType") == 0) return 0;
    for (size_t i = 0; i < n; ++i)
        if ((unsigned char)s[i] <= ' ' || s[i] == '/' || s[i] == 0x7f) return 0;
    return 1;
}

/* ---- the /VTKHDF layout derived from the tiles (written by h5io_write, compared by h5io_verify) */

/** Tiles [*s, *e) of m on level L (empty when the part has no such level). */
void w_lrange(const mesh_t *m, int L, dp_tidx *s, dp_tidx *e)
{
    if (L < m->nlevels) {
        *s = m->level_start[L];
        *e = m->level_start[L + 1];
    } else {
        *s = *e = m->ntiles;
    }
}


/** Fill AMRBox rows [ilo,ihi,jlo,jhi,klo,khi] for tiles [s,e). -1 when an index passes int32. */
int w_boxes(const mesh_t *m, dp_tidx s, dp_tidx e, int32_t *box)
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
void w_ghost_cells(const mesh_t *m, dp_tidx s, size_t c0, size_t c1, const uint8_t *oct, uint8_t *g)
{
    const size_t cells = (size_t)mesh_cells(m);
    for (size_t i = c0; i < c1;) {
        const size_t a = i % cells, b = cells - a < c1 - i ? cells : a + (c1 - i); /* cells [a, b) of tile t */
        const unsigned cm = m->childmask[s + (dp_tidx)(i / cells)];
        uint8_t *q = g + (i - c0);
        if (cm == 0) memset(q, 0, b - a);
        else
            for (size_t k = a; k < b; ++k) q[k - a] = h5i_ghost(cm, oct[k]);
        i += b - a;
    }
}

void w_ghost(const mesh_t *m, dp_tidx s, dp_tidx e, const uint8_t *oct, uint8_t *g)
{
    w_ghost_cells(m, s, 0, (size_t)(e - s) * (size_t)mesh_cells(m), oct, g);
}

int w_ghost_direct(const wctx *c)
{
#ifdef DPAMR_HAVE_ZLIB
    return !c->par && !c->verify;
#else
    (void)c;
    return 0;
#endif
}

/** Octant of every cell of a tile (x fastest). */
void w_octants(const mesh_t *m, uint8_t *oct)
{
    const int B = m->B, nz = m->dim == 3 ? B : 1;
    for (int z = 0; z < nz; ++z)
        for (int y = 0; y < B; ++y)
            for (int x = 0; x < B; ++x) oct[x + B * (y + B * z)] = (uint8_t)dp_octant_of(B, x, y, z);
}

/** Tiles in the largest level (sizes the scratch buffers). */
dp_tidx w_max_level_tiles(const mesh_t *m)
{
    dp_tidx mx = 0;
    for (int L = 0; L < m->nlevels; ++L)
        if (m->level_start[L + 1] - m->level_start[L] > mx) mx = m->level_start[L + 1] - m->level_start[L];
    return mx;
}

/** Levels written to /VTKHDF: trailing empty levels are left out, because ParaView 5.11's reader
 *  aborts on them (vtkAMRBox::Refine assertion: an empty level has no spacing, so its refinement
 *  ratio is 0). /dpamr keeps the full nlevels. Level 0 is always written. */
int w_vtk_levels(const wctx *c)
{
    int n = c->nlevels;
    while (n > 1 && c->level_start[n] == c->level_start[n - 1]) --n;
    return n;
}

void w_buf_free(wbuf *b)
{
    free(b->box);
    free(b->ghost);
    free(b->oct);
    b->box = NULL;
    b->ghost = b->oct = NULL;
}

/** Allocate the scratch buffers and check that every AMRBox index fits int32. 0, or -1 with err. */
int w_buf_alloc(wctx *c, const mesh_t *m, wbuf *b)
{
    const size_t cells = (size_t)mesh_cells(m);
    const dp_tidx mx = w_max_level_tiles(m);
    b->box = malloc((size_t)(mx > 0 ? mx : 1) * 6 * sizeof *b->box);
    /* w_ghost_direct: only the contiguous (small) vtkGhostType datasets pass through this buffer */
    const size_t gmax = (size_t)(mx > 0 ? mx : 1) * cells;
    b->ghost = malloc(w_ghost_direct(c) && gmax > GHOST_CONTIG_MAX ? GHOST_CONTIG_MAX : gmax);
    b->oct = malloc(cells);
    if (!b->box || !b->ghost || !b->oct) {
        w_buf_free(b);
        h5i_seterr(c->err, c->errlen, "cannot write %s: out of memory", c->path);
        return -1;
    }
    for (int L = 0; L < m->nlevels; ++L) /* a level fits the box buffer: at most mx tiles */
        if (w_boxes(m, m->level_start[L], m->level_start[L + 1], b->box) != 0) {
            w_buf_free(b);
            h5i_seterr(c->err, c->errlen, "cannot write %s: /VTKHDF/Level%d/AMRBox: a cell index passes the int32 range",
                       c->path, L);
            return -1;
        }
    w_octants(m, b->oct);
    return 0;
}

/** The memory type of a row of /dpamr/provenance/ranks: h5io_rank_t as the compiler lays it out. */
hid_t h5i_rank_mtype(void)
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
        h5i_close(mt);
        return -1;
    }
    return mt;
}
