/* test_h5io.c - unit test of io/ (h5io.h): round trips, VTKHDF layout, reproducible bytes, error paths.
 *
 * Usage: test_h5io [SCRATCH_DIR]   (default "."). Exit 0 on pass; on failure prints the check and exits 1.
 * Builds small 2D and 3D meshes by hand; needs no valid_check (the report is filled by hand).
 */
#include <dirent.h>
#include <pthread.h>
#include <stdint.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <hdf5.h>

#include "io/h5io.h"
#include "tests/test_util.h"

static const char *g_dir = ".";

/** rc must be -1 and err must contain want. */
#define CHECK_ERR(rc, err, want)                                                                 \
    CHECK((rc) == -1 && strstr((err), (want)), "rc=%d, error '%s' does not contain '%s'", (rc), (err), (want))

/** No HDF5 object (file, group, dataset, attribute, committed type) may stay open after an h5io call. */
#define CHECK_NO_OPEN() CHECK(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL) == 0)

/** Scratch file name (static buffers, rotating). */
static const char *scratch(const char *name)
{
    static char buf[8][1024];
    static int i = 0;
    i = (i + 1) % 8;
    snprintf(buf[i], sizeof buf[i], "%s/test_h5io_%s", g_dir, name);
    return buf[i];
}

/* ---- mesh construction ------------------------------------------------------------------- */

static uint32_t hash3(uint32_t a, uint32_t b, uint32_t c)
{
    uint32_t h = 2166136261u;
    const uint32_t v[3] = { a, b, c };
    for (int i = 0; i < 3; ++i) h = (h ^ v[i]) * 16777619u;
    return h ^ (h >> 15);
}

/** Append tile (L, x) with parent p; grows the mesh. */
static void add_tile(mesh_t *m, int L, const int32_t *x, int64_t p)
{
    if (m->ntiles == m->cap) CHECK(mesh_reserve(m, 2 * m->cap) == 0);
    const dp_tidx t = m->ntiles++;
    dp_write_tile(mesh_tiles(m), m->dim, t, L, x, p);
}

/** Level 0: the root grid in Morton order. */
static void add_roots(mesh_t *m)
{
    /* the root coordinates in Morton order: walk keys upward and keep those inside the grid */
    const dp_tidx n = (dp_tidx)m->root[0] * m->root[1] * m->root[2];
    for (uint64_t key = 0; m->ntiles < n; ++key) {
        int32_t x[3];
        dp_morton_decode(m->dim, key, x);
        if (x[0] < m->root[0] && x[1] < m->root[1] && x[2] < m->root[2]) add_tile(m, 0, x, -1);
    }
}

/** Deterministic field values, with a few special floats (-0, denormal, large). */
static void fill_fields(mesh_t *m, uint32_t seed)
{
    const size_t cells = (size_t)mesh_cells(m);
    for (int f = 0; f < m->nf; ++f)
        for (size_t i = 0; i < (size_t)m->ntiles * cells; ++i) {
            const uint32_t h = hash3(seed, (uint32_t)f, (uint32_t)i);
            float v = ((float)(h % 20001u) - 10000.0f) / 37.0f;
            if (h % 97u == 0) v = -0.0f;
            if (h % 101u == 0) v = 1e-40f;
            if (h % 103u == 0) v = 3.0e38f;
            m->field[f][i] = v;
        }
}

/** A mesh with nlev levels; children chosen pseudo-randomly, always at least one per level. */
static void build_mesh(mesh_t *m, int dim, int B, int nf, int r0, int r1, int r2, int nlev, uint32_t seed)
{
    static const char *names[] = { "rho", "u", "v", "w", "energy", "p", "T", "phi" };
    memset(m, 0, sizeof *m);
    m->dim = dim;
    m->B = B;
    m->nf = nf;
    m->root[0] = r0;
    m->root[1] = r1;
    m->root[2] = dim == 3 ? r2 : 1;
    m->origin[0] = 0.5;
    m->origin[1] = -1.25;
    m->origin[2] = dim == 3 ? 2.0 : 0.0;
    m->h0 = 0.125;
    for (int f = 0; f < nf; ++f) snprintf(m->field_name[f], DP_NAME_LEN, "%s", names[f]);
    CHECK(mesh_alloc(m, 4) == 0);
    add_roots(m);
    dp_tidx s = 0;
    for (int L = 0; L + 1 < nlev; ++L) {
        const dp_tidx e = m->ntiles;
        for (dp_tidx t = s; t < e; ++t)
            for (int o = 0; o < (1 << dim); ++o) {
                const int force = t == s && o == (1 << dim) - 1;
                if (!force && hash3(seed, (uint32_t)t, (uint32_t)o) % 3u != 0) continue;
                int32_t cc[3];
                dp_child_coord(m->coord + 3 * t, o, cc);
                if (dim == 2) cc[2] = 0;
                add_tile(m, L + 1, cc, t);
            }
        s = e;
    }
    fill_fields(m, seed);
    mesh_index_levels(m);
    mesh_index_children(m);
    CHECK(m->nlevels == nlev);
}

/** A hand-filled validation report. */
static void fill_report(valid_report_t *v, const mesh_t *m)
{
    memset(v, 0, sizeof *v);
    v->passed = 1;
    v->conservation_checked = 1;
    v->conservation_tol = 1e-6;
    v->conservation_max_rel = 3.5e-8;
    v->nlevels = m->nlevels;
    v->nf = m->nf;
    for (int L = 0; L < m->nlevels; ++L) {
        v->tiles[L] = m->level_start[L + 1] - m->level_start[L];
        for (int f = 0; f < m->nf; ++f) {
            v->sum[L][f] = 1.5 * L + f;
            v->hash[L][f] = 0xcbf29ce484222325ull ^ (uint64_t)(L * 16 + f);
        }
    }
    v->tree_hash = 0x0123456789abcdefull;
    v->total_hash = 0xfedcba9876543210ull;
}

static void fill_meta(h5io_meta_t *mt, const char *deck, const valid_report_t *v, double t)
{
    memset(mt, 0, sizeof *mt);
    mt->deck_text = deck;
    mt->variant = "cpu";
    mt->version = "0.1.0";
    mt->pdl = 1;
    mt->load_ms = 1.0 + t;
    mt->refine_ms = 2.0 + t;
    mt->validate_ms = 3.0 + t;
    mt->nlevels_timed = 2;
    mt->level_ms[0] = 0.5 + t;
    mt->level_ms[1] = 0.25 + t;
    mt->device_launches = mt->launch_failures = mt->pool_size = -1;
    mt->valid = v;
}

/* ---- comparisons ------------------------------------------------------------------------- */

static void compare_meshes(const mesh_t *a, const mesh_t *b)
{
    CHECK(a->dim == b->dim && a->B == b->B && a->nf == b->nf);
    CHECK(memcmp(a->root, b->root, sizeof a->root) == 0);
    CHECK(memcmp(a->origin, b->origin, sizeof a->origin) == 0);
    CHECK(memcmp(&a->h0, &b->h0, sizeof a->h0) == 0);
    for (int f = 0; f < a->nf; ++f) CHECK(strcmp(a->field_name[f], b->field_name[f]) == 0);
    CHECK(a->ntiles == b->ntiles && a->nlevels == b->nlevels);
    CHECK(memcmp(a->level_start, b->level_start, (size_t)(a->nlevels + 1) * sizeof(dp_tidx)) == 0);
    const size_t n = (size_t)a->ntiles, cells = (size_t)mesh_cells(a);
    CHECK(memcmp(a->level, b->level, n * sizeof *a->level) == 0);
    CHECK(memcmp(a->coord, b->coord, 3 * n * sizeof *a->coord) == 0);
    CHECK(memcmp(a->key, b->key, n * sizeof *a->key) == 0);
    CHECK(memcmp(a->parent, b->parent, n * sizeof *a->parent) == 0);
    CHECK(memcmp(a->childmask, b->childmask, n) == 0);
    for (int f = 0; f < a->nf; ++f) CHECK(memcmp(a->field[f], b->field[f], n * cells * sizeof(float)) == 0);
}

/** Whole file contents (malloc'd), size in *n. */
static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *fp = fopen(path, "rb");
    CHECK(fp != NULL);
    fseek(fp, 0, SEEK_END);
    long sz = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    unsigned char *buf = malloc((size_t)sz + 1);
    CHECK(buf != NULL);
    CHECK(fread(buf, 1, (size_t)sz, fp) == (size_t)sz);
    fclose(fp);
    *n = (size_t)sz;
    return buf;
}

static int same_bytes(const char *p1, const char *p2)
{
    size_t n1, n2;
    unsigned char *a = slurp(p1, &n1), *b = slurp(p2, &n2);
    const int same = n1 == n2 && memcmp(a, b, n1) == 0;
    free(a);
    free(b);
    return same;
}

/** Compare dataset name in groups ga and gb: type, shape and raw contents. */
static void compare_dataset(hid_t ga, hid_t gb, const char *name)
{
    hid_t da = H5Dopen2(ga, name, H5P_DEFAULT), db = H5Dopen2(gb, name, H5P_DEFAULT);
    CHECK(da >= 0 && db >= 0);
    hid_t ta = H5Dget_type(da), tb = H5Dget_type(db);
    CHECK(H5Tequal(ta, tb) > 0);
    hid_t sa = H5Dget_space(da), sb = H5Dget_space(db);
    CHECK(H5Sextent_equal(sa, sb) > 0);
    const size_t bytes = (size_t)H5Sget_simple_extent_npoints(sa) * H5Tget_size(ta);
    unsigned char *a = calloc(bytes + 1, 1), *b = calloc(bytes + 1, 1);
    CHECK(a && b);
    if (bytes > 0) {
        CHECK(H5Dread(da, ta, H5S_ALL, H5S_ALL, H5P_DEFAULT, a) >= 0);
        CHECK(H5Dread(db, tb, H5S_ALL, H5S_ALL, H5P_DEFAULT, b) >= 0);
    }
    CHECK(memcmp(a, b, bytes) == 0);
    free(a);
    free(b);
    H5Sclose(sa);
    H5Sclose(sb);
    H5Tclose(ta);
    H5Tclose(tb);
    H5Dclose(da);
    H5Dclose(db);
}

/** Recursively compare every dataset of group ga with the same path in gb; returns the count. */
static int compare_group(hid_t ga, hid_t gb)
{
    H5G_info_t ia, ib;
    CHECK(H5Gget_info(ga, &ia) >= 0 && H5Gget_info(gb, &ib) >= 0);
    CHECK(ia.nlinks == ib.nlinks);
    int count = 0;
    for (hsize_t i = 0; i < ia.nlinks; ++i) {
        char name[256];
        CHECK(H5Lget_name_by_idx(ga, ".", H5_INDEX_NAME, H5_ITER_INC, i, name, sizeof name, H5P_DEFAULT) > 0);
        hid_t oa = H5Oopen(ga, name, H5P_DEFAULT);
        CHECK(oa >= 0);
        const H5I_type_t ty = H5Iget_type(oa);
        if (ty == H5I_GROUP) {
            hid_t ob = H5Gopen2(gb, name, H5P_DEFAULT);
            CHECK(ob >= 0);
            count += compare_group(oa, ob);
            H5Gclose(ob);
        } else if (ty == H5I_DATASET) {
            compare_dataset(ga, gb, name);
            ++count;
        }
        H5Oclose(oa);
    }
    return count;
}

/** Every dataset of two files equal; returns how many were compared. */
static int compare_file_datasets(const char *p1, const char *p2)
{
    hid_t a = H5Fopen(p1, H5F_ACC_RDONLY, H5P_DEFAULT), b = H5Fopen(p2, H5F_ACC_RDONLY, H5P_DEFAULT);
    CHECK(a >= 0 && b >= 0);
    const int n = compare_group(a, b);
    H5Fclose(a);
    H5Fclose(b);
    return n;
}

/* ---- VTKHDF layout ----------------------------------------------------------------------- */

static void check_type_attr(hid_t vtk)
{
    hid_t a = H5Aopen(vtk, "Type", H5P_DEFAULT);
    CHECK(a >= 0);
    hid_t t = H5Aget_type(a), s = H5Aget_space(a);
    CHECK(H5Tget_class(t) == H5T_STRING);
    CHECK(H5Tis_variable_str(t) == 0);
    CHECK(H5Tget_size(t) == 14);
    CHECK(H5Tget_strpad(t) == H5T_STR_NULLPAD);
    CHECK(H5Sget_simple_extent_type(s) == H5S_SCALAR);
    char buf[15] = { 0 };
    CHECK(H5Aread(a, t, buf) >= 0);
    CHECK(memcmp(buf, "OverlappingAMR", 14) == 0);
    H5Sclose(s);
    H5Tclose(t);
    H5Aclose(a);
}

static void read_attr(hid_t loc, const char *name, hid_t mt, void *buf, hssize_t n)
{
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    CHECK(a >= 0);
    hid_t s = H5Aget_space(a);
    CHECK(H5Sget_simple_extent_npoints(s) == n);
    CHECK(H5Aread(a, mt, buf) >= 0);
    H5Sclose(s);
    H5Aclose(a);
}

/** 1-D or 2-D dataset dims (rank checked). */
static void dset_dims(hid_t loc, const char *name, int rank, hsize_t *d)
{
    hid_t ds = H5Dopen2(loc, name, H5P_DEFAULT);
    CHECK(ds >= 0);
    hid_t s = H5Dget_space(ds);
    CHECK(H5Sget_simple_extent_ndims(s) == rank);
    H5Sget_simple_extent_dims(s, d, NULL);
    H5Sclose(s);
    H5Dclose(ds);
}

static void check_level(hid_t vtk, const mesh_t *m, int L)
{
    char name[32];
    snprintf(name, sizeof name, "Level%d", L);
    hid_t g = H5Gopen2(vtk, name, H5P_DEFAULT);
    CHECK(g >= 0);
    double sp[3], h = m->h0 / (double)(1 << L);
    read_attr(g, "Spacing", H5T_NATIVE_DOUBLE, sp, 3);
    CHECK(sp[0] == h && sp[1] == h && sp[2] == h);
    const dp_tidx s = m->level_start[L], n = m->level_start[L + 1] - s;
    const size_t cells = (size_t)mesh_cells(m);
    hsize_t d[2];
    dset_dims(g, "AMRBox", 2, d);
    CHECK(d[0] == (hsize_t)n && d[1] == 6);
    int32_t *box = malloc((size_t)(n + 1) * 6 * sizeof *box);
    float *u = malloc((size_t)(n + 1) * cells * sizeof *u);
    uint8_t *gh = malloc((size_t)(n + 1) * cells);
    hid_t ds = H5Dopen2(g, "AMRBox", H5P_DEFAULT);
    if (n > 0) CHECK(H5Dread(ds, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, box) >= 0);
    H5Dclose(ds);
    for (dp_tidx t = 0; t < n; ++t) {
        const int32_t *x = m->coord + 3 * (s + t), *r = box + 6 * t;
        CHECK(r[0] == x[0] * m->B && r[1] == x[0] * m->B + m->B - 1);
        CHECK(r[2] == x[1] * m->B && r[3] == x[1] * m->B + m->B - 1);
        if (m->dim == 2) CHECK(r[4] == 0 && r[5] == 0);
        else CHECK(r[4] == x[2] * m->B && r[5] == x[2] * m->B + m->B - 1);
    }
    hid_t cd = H5Gopen2(g, "CellData", H5P_DEFAULT);
    CHECK(cd >= 0);
    for (int f = 0; f < m->nf; ++f) {
        dset_dims(cd, m->field_name[f], 1, d);
        CHECK(d[0] == (hsize_t)n * cells);
        ds = H5Dopen2(cd, m->field_name[f], H5P_DEFAULT);
        hid_t ty = H5Dget_type(ds);
        CHECK(H5Tget_class(ty) == H5T_FLOAT && H5Tget_size(ty) == 4);
        H5Tclose(ty);
        if (n > 0) CHECK(H5Dread(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, u) >= 0);
        H5Dclose(ds);
        CHECK(memcmp(u, m->field[f] + (size_t)s * cells, (size_t)n * cells * sizeof *u) == 0);
    }
    ds = H5Dopen2(cd, "vtkGhostType", H5P_DEFAULT);
    CHECK(ds >= 0);
    hid_t ty = H5Dget_type(ds);
    CHECK(H5Tget_class(ty) == H5T_INTEGER && H5Tget_size(ty) == 1 && H5Tget_sign(ty) == H5T_SGN_NONE);
    H5Tclose(ty);
    if (n > 0) CHECK(H5Dread(ds, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, gh) >= 0);
    H5Dclose(ds);
    const int B = m->B, nz = m->dim == 3 ? B : 1;
    for (dp_tidx t = 0; t < n; ++t)
        for (int z = 0; z < nz; ++z)
            for (int y = 0; y < B; ++y)
                for (int x = 0; x < B; ++x) {
                    const int o = (x >= B / 2) | (y >= B / 2) << 1 | (z >= B / 2) << 2;
                    const uint8_t want = (m->childmask[s + t] >> o & 1) ? 32 : 0;
                    CHECK(gh[(size_t)t * cells + (size_t)(x + B * (y + B * z))] == want);
                }
    H5Gclose(cd);
    CHECK(H5Lexists(g, "PointData", H5P_DEFAULT) > 0 && H5Lexists(g, "FieldData", H5P_DEFAULT) > 0);
    free(box);
    free(u);
    free(gh);
    H5Gclose(g);
}

static void check_vtkhdf(const char *path, const mesh_t *m)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    CHECK(f >= 0);
    hid_t vtk = H5Gopen2(f, "VTKHDF", H5P_DEFAULT);
    CHECK(vtk >= 0);
    int32_t ver[2];
    read_attr(vtk, "Version", H5T_NATIVE_INT32, ver, 2);
    CHECK(ver[0] == 1 && ver[1] == 0);
    check_type_attr(vtk);
    double org[3];
    read_attr(vtk, "Origin", H5T_NATIVE_DOUBLE, org, 3);
    CHECK(memcmp(org, m->origin, sizeof org) == 0);
    int nv = m->nlevels; /* trailing empty levels are not written (ParaView 5.11 aborts on them) */
    while (nv > 1 && m->level_start[nv] == m->level_start[nv - 1]) --nv;
    for (int L = 0; L < nv; ++L) check_level(vtk, m, L);
    char name[32];
    snprintf(name, sizeof name, "Level%d", nv);
    CHECK(H5Lexists(vtk, name, H5P_DEFAULT) == 0);
    H5Gclose(vtk);
    H5Fclose(f);
}

/* ---- file surgery for the error tests ----------------------------------------------------- */

static void copy_file(const char *src, const char *dst)
{
    size_t n;
    unsigned char *b = slurp(src, &n);
    FILE *fp = fopen(dst, "wb");
    CHECK(fp && fwrite(b, 1, n, fp) == n);
    fclose(fp);
    free(b);
}

/** Replace dataset /<rel> of file path (a copy of src) with one of the given type and shape (type < 0:
 *  just delete the object). */
static void replace_dset(const char *src, const char *path, const char *rel, hid_t type, int rank,
                         const hsize_t *dims, const void *data)
{
    copy_file(src, path);
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t g = H5Gopen2(f, "/", H5P_DEFAULT);
    CHECK(f >= 0 && g >= 0);
    if (H5Lexists(g, rel, H5P_DEFAULT) > 0) CHECK(H5Ldelete(g, rel, H5P_DEFAULT) >= 0);
    if (type >= 0) {
        hid_t s = rank == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(rank, dims, NULL);
        hid_t d = H5Dcreate2(g, rel, type, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        CHECK(d >= 0);
        if (data) CHECK(H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0);
        H5Dclose(d);
        H5Sclose(s);
    }
    H5Gclose(g);
    H5Fclose(f);
}

/** Replace attribute /dpamr@name of a copy of src (type < 0: just delete it). */
static void replace_attr(const char *src, const char *path, const char *name, hid_t type, hsize_t n,
                         const void *data)
{
    copy_file(src, path);
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t g = H5Gopen2(f, "dpamr", H5P_DEFAULT);
    CHECK(f >= 0 && g >= 0);
    if (H5Aexists(g, name) > 0) CHECK(H5Adelete(g, name) >= 0);
    if (type >= 0) {
        hid_t s = n == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, NULL);
        hid_t a = H5Acreate2(g, name, type, s, H5P_DEFAULT, H5P_DEFAULT);
        CHECK(a >= 0 && H5Awrite(a, type, data) >= 0);
        H5Aclose(a);
        H5Sclose(s);
    }
    H5Gclose(g);
    H5Fclose(f);
}

/** A new file at path holding one empty group: in the HDF5 1.8-1.10 format (v18 1: as dpamr
 *  writes) or in the library's default, the 1.6 format (superblock 0, version-1 object headers);
 *  with a user block of ub bytes, or (persist 1) the free-space manager kept in the file, which
 *  needs superblock 2 while the objects keep version-1 headers under the default format. */
static void create_with_group(const char *path, const char *group, int v18, hsize_t ub, int persist)
{
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE), fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (v18) CHECK(H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_V110) >= 0);
    if (ub) CHECK(H5Pset_userblock(fcpl, ub) >= 0);
    if (persist) CHECK(H5Pset_file_space_strategy(fcpl, H5F_FSPACE_STRATEGY_FSM_AGGR, 1, 1) >= 0);
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, fcpl, fapl);
    hid_t g = H5Gcreate2(f, group, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(f >= 0 && g >= 0);
    H5Gclose(g);
    H5Fclose(f);
    H5Pclose(fcpl);
    H5Pclose(fapl);
}

/** Replace /<rel> of a copy of src with a soft link to target (external: a link to target in the
 *  file src). */
static void replace_link(const char *src, const char *path, const char *rel, const char *target, int external)
{
    copy_file(src, path);
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t g = H5Gopen2(f, "/", H5P_DEFAULT);
    CHECK(f >= 0 && g >= 0 && H5Ldelete(g, rel, H5P_DEFAULT) >= 0);
    if (external) CHECK(H5Lcreate_external(src, target, g, rel, H5P_DEFAULT, H5P_DEFAULT) >= 0);
    else CHECK(H5Lcreate_soft(target, g, rel, H5P_DEFAULT, H5P_DEFAULT) >= 0);
    H5Gclose(g);
    H5Fclose(f);
}

/** Overwrite one element of dataset /<rel> (2-D: row, col; 1-D: row) in place. */
static void poke(const char *path, const char *rel, hid_t mt, hsize_t row, hsize_t col, int rank, const void *v)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t g = H5Gopen2(f, "/", H5P_DEFAULT);
    hid_t d = H5Dopen2(g, rel, H5P_DEFAULT);
    CHECK(d >= 0);
    hid_t fs = H5Dget_space(d);
    const hsize_t start[2] = { row, col }, count[2] = { 1, 1 }, one = 1;
    CHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) >= 0);
    (void)rank;
    hid_t ms = H5Screate_simple(1, &one, NULL);
    CHECK(H5Dwrite(d, mt, ms, fs, H5P_DEFAULT, v) >= 0);
    H5Sclose(ms);
    H5Sclose(fs);
    H5Dclose(d);
    H5Gclose(g);
    H5Fclose(f);
}

/** h5io_read of path must fail with a message containing want (and leave nothing open). */
static void expect_read_error(const char *path, const char *want)
{
    mesh_t m;
    char err[1024] = "";
    char *deck = (char *)1;
    int rc = h5io_read(path, &m, &deck, err, sizeof err);
    CHECK(rc == -1 || rc == H5IO_BAD_CONTENT);
    if (rc == H5IO_BAD_CONTENT) rc = -1; /* a dpamr file whose content is wrong: `check` exits 2 on it */
    CHECK_ERR(rc, err, want);
    if (getenv("TEST_H5IO_VERBOSE")) printf("  expected error: %s\n", err);
    CHECK(deck == NULL);
    CHECK(m.level == NULL && m.field[0] == NULL);
    CHECK(strstr(err, path) != NULL);
    CHECK_NO_OPEN();
}

/** No PATH.tmp.* file left in the scratch directory. */
static int temp_files_left(void)
{
    DIR *d = opendir(g_dir);
    CHECK(d != NULL);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, "test_h5io_", 10) == 0 && strstr(e->d_name, ".tmp.")) ++n;
    closedir(d);
    return n;
}

/* ---- the tests --------------------------------------------------------------------------- */

static const char *DECK = "# test deck\ndim = 2\ntile_size = 8\nfields = rho u\n";

/** Write, read back, compare; write the read-back mesh again and compare datasets and bytes. */
/* h5io_read_cells' announcements: how many, and whether they only grew (several pieces done at
 * once by the reading threads are announced in one call, so there can be fewer calls than levels). */
typedef struct {
    dp_tidx last;
    int calls, shrank;
} ready_log_t;

static void log_ready(void *ctx, dp_tidx tiles)
{
    ready_log_t *l = ctx;
    if (tiles < l->last) l->shrank = 1;
    l->last = tiles;
    ++l->calls;
}

typedef struct {
    h5io_reader_t *rd;
    ready_log_t *log;
    int rc;
} cells_job_t;

static void *cells_job(void *arg)
{
    cells_job_t *j = arg;
    j->rc = h5io_read_cells(j->rd, log_ready, j->log);
    return NULL;
}

static void test_roundtrip(const mesh_t *m, const char *tag, const char *deck)
{
    char err[1024] = "";
    valid_report_t v;
    fill_report(&v, m);
    h5io_meta_t mt;
    fill_meta(&mt, deck, &v, 0.0);
    char n1[64], n2[64], n3[64];
    snprintf(n1, sizeof n1, "%s_a.hdf", tag);
    snprintf(n2, sizeof n2, "%s_b.hdf", tag);
    snprintf(n3, sizeof n3, "%s_c.hdf", tag);
    const char *p1 = scratch(n1), *p2 = scratch(n2), *p3 = scratch(n3);
    CHECK(h5io_write(p1, m, &mt, err, sizeof err) == 0);
    CHECK_NO_OPEN();
    check_vtkhdf(p1, m);

    mesh_t r;
    char *text = NULL;
    CHECK(h5io_read(p1, &r, &text, err, sizeof err) == 0);
    CHECK_NO_OPEN();
    compare_meshes(m, &r);
    if (deck) CHECK(text && strcmp(text, deck) == 0);
    else CHECK(text == NULL);
    {   /* in three steps (`dpamr check`): the tree first, then the cells announced as they come */
        mesh_t s3;
        char *t3 = NULL;
        h5io_reader_t *rd = NULL;
        ready_log_t log = { 0 };
        CHECK(h5io_read_open(p1, &s3, &t3, &rd, err, sizeof err) == 0 && rd);
        CHECK(s3.ntiles == m->ntiles && s3.nlevels == m->nlevels);
        CHECK(h5io_read_cells(rd, log_ready, &log) == 0);
        h5io_read_close(rd);
        CHECK_NO_OPEN();
        CHECK(log.calls >= 1 && !log.shrank && log.last == m->ntiles);
        compare_meshes(m, &s3);
        free(t3);
        mesh_free(&s3);
    }
    {   /* the cells coming on another thread while the tree is read (`dpamr check` on a file on disk) */
        mesh_t s4;
        char *t4 = NULL;
        h5io_reader_t *rd = NULL;
        ready_log_t log = { 0 };
        CHECK(h5io_read_begin(p1, &s4, &rd, err, sizeof err) == 0 && rd);
        CHECK(s4.ntiles == m->ntiles && h5io_read_plan(rd) == 1);
        CHECK(h5io_read_head_first(rd) == 1); /* dpamr's layout: the tree and boxes, then the cells */
        cells_job_t job = { rd, &log, -1 };
        pthread_t th;
        const int started = pthread_create(&th, NULL, cells_job, &job) == 0;
        CHECK(started);
        CHECK(h5io_read_tree(rd, &t4) == 0);
        if (started) pthread_join(th, NULL);
        CHECK(job.rc == 0 && log.calls >= 1 && !log.shrank && log.last == m->ntiles);
        h5io_read_close(rd);
        CHECK_NO_OPEN();
        compare_meshes(m, &s4);
        if (deck) CHECK(t4 && strcmp(t4, deck) == 0);
        free(t4);
        mesh_free(&s4);
    }
    {   /* stopped: the cells end with no message of their own */
        mesh_t s5;
        h5io_reader_t *rd = NULL;
        ready_log_t log = { 0 };
        CHECK(h5io_read_begin(p1, &s5, &rd, err, sizeof err) == 0 && rd);
        CHECK(h5io_read_plan(rd) == 1);
        snprintf(err, sizeof err, "untouched");
        h5io_read_stop(rd);
        CHECK(h5io_read_cells(rd, log_ready, &log) != 0 && strcmp(err, "untouched") == 0 && log.last < m->ntiles);
        h5io_read_close(rd);
        CHECK_NO_OPEN();
        mesh_free(&s5);
    }

    /* same content, same bytes; different timings: different attributes, same datasets */
    CHECK(h5io_write(p2, &r, &mt, err, sizeof err) == 0);
    CHECK(same_bytes(p1, p2));
    h5io_meta_t mt2;
    fill_meta(&mt2, text, &v, 42.0);
    CHECK(h5io_write(p3, &r, &mt2, err, sizeof err) == 0);
    CHECK(!same_bytes(p1, p3));
    CHECK(compare_file_datasets(p1, p3) >= 8 + 2 * m->nf);
    CHECK_NO_OPEN();
    free(text);
    mesh_free(&r);
    remove(p2);
    remove(p3);
}

/** Identical content written a second later gives identical bytes (no time stamps). */
static void test_reproducible(const mesh_t *m)
{
    char err[1024];
    h5io_meta_t mt;
    fill_meta(&mt, DECK, NULL, 0.0);
    const char *p1 = scratch("rep_a.hdf"), *p2 = scratch("rep_b.hdf");
    CHECK(h5io_write(p1, m, &mt, err, sizeof err) == 0);
    nanosleep(&(struct timespec){ 1, 100000000 }, NULL);
    CHECK(h5io_write(p2, m, &mt, err, sizeof err) == 0);
    CHECK(same_bytes(p1, p2));
    /* overwrite an existing file in place (rename onto it) */
    CHECK(h5io_write(p2, m, &mt, err, sizeof err) == 0);
    CHECK(same_bytes(p1, p2));
    remove(p1);
    remove(p2);
}

/** A write with a progress line writes its large datasets in hyperslab pieces: the file must hold
 *  the same bytes as one H5Dwrite per dataset, for pieces of any size (a row or less, a few rows);
 *  in a log (stdout not a terminal) the progress is plain lines, the last one "(done)". */
static void test_pieces(const mesh_t *m)
{
    char err[1024];
    h5io_meta_t mt;
    fill_meta(&mt, DECK, NULL, 0.0);
    const char *p1 = scratch("piece_a.hdf"), *p2 = scratch("piece_b.hdf"), *log = scratch("piece.log");
    CHECK(h5io_write(p1, m, &mt, err, sizeof err) == 0, "%s", err);
    static const char *sizes[] = { "1", "200", "4096", "100000" };
    mt.progress = 1;
    setenv("DPAMR_TEST_PROGRESS_NOW", "1", 1);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
        setenv("DPAMR_TEST_WRITE_PIECE", sizes[i], 1);
        fflush(stdout);
        const int saved = dup(STDOUT_FILENO);
        FILE *fp = fopen(log, "w");
        CHECK(fp != NULL);
        if (!fp) break;
        dup2(fileno(fp), STDOUT_FILENO);
        const int rc = h5io_write(p2, m, &mt, err, sizeof err);
        fflush(stdout);
        dup2(saved, STDOUT_FILENO);
        close(saved);
        fclose(fp);
        CHECK(rc == 0, "pieces of %s bytes: %s", sizes[i], err);
        CHECK(same_bytes(p1, p2), "pieces of %s bytes: other bytes than one write per dataset", sizes[i]);
        char out[1 << 16], end[128];
        fp = fopen(log, "r");
        const size_t k = fp ? fread(out, 1, sizeof out - 1, fp) : 0;
        out[k] = '\0';
        size_t e = 0;
        if (fp && fseek(fp, -(long)(sizeof end - 1), SEEK_END) == 0) e = fread(end, 1, sizeof end - 1, fp);
        end[e] = '\0';
        if (fp) fclose(fp);
        CHECK(strncmp(out, "write ", 6) == 0 && !strchr(out, '\r') && strstr(end, "(done)\n"),
              "pieces of %s bytes: plain progress lines, got '%.200s' ... '%s'", sizes[i], out, end);
    }
    unsetenv("DPAMR_TEST_WRITE_PIECE");
    unsetenv("DPAMR_TEST_PROGRESS_NOW");
    remove(p1);
    remove(p2);
    remove(log);
}

/* A source as the GPU's (device/tile_store.cu): it walks the plan itself, requires the writer's
 * requests in the plan's order, and hands out copies in two buffers used in turn, the one handed
 * out before this one scribbled over (the writer must be done with it). */
typedef struct {
    const mesh_t *m;
    xfer_plan_t plan;
    float *buf[2];
    long long taken, bad;
} ring_src_t;

static const float *ring_get(xfer_src_t *s, int f, int64_t t, int64_t n, char *err, size_t errlen)
{
    ring_src_t *R = s->ctx;
    xfer_piece_t q;
    if (!xfer_plan_next(&R->plan, &q) || q.field != f || q.tile != t || q.ntiles != n) {
        ++R->bad;
        snprintf(err, errlen, "request %lld off the plan", R->taken);
        return NULL;
    }
    const size_t cells = (size_t)mesh_cells(R->m);
    float *b = R->buf[R->taken & 1];
    memset(R->buf[(R->taken + 1) & 1], 0xff, s->piece); /* the previous piece's buffer is refilled */
    memcpy(b, R->m->field[f] + (size_t)t * cells, (size_t)n * cells * sizeof(float));
    ++R->taken;
    return b;
}

/** The split writer (open, cells from a source, finish) writes h5io_write's bytes; a source that
 *  fails stops the write with its words and leaves no file; abort leaves no file. */
static void test_stream(const mesh_t *m)
{
    char err[1024];
    h5io_meta_t mt;
    fill_meta(&mt, DECK, NULL, 0.0);
    const char *p1 = scratch("stream_a.hdf"), *p2 = scratch("stream_b.hdf");
    CHECK(h5io_write(p1, m, &mt, err, sizeof err) == 0, "%s", err);
    const size_t cells = (size_t)mesh_cells(m);
    for (size_t tiles = 1; tiles <= 64; tiles *= 4) {
        ring_src_t R = { .m = m };
        xfer_src_t src = { .get = ring_get, .piece = tiles * cells * sizeof(float), .ctx = &R };
        R.buf[0] = malloc(src.piece);
        R.buf[1] = malloc(src.piece);
        xfer_plan_init(&R.plan, m->nlevels, m->level_start, m->nf, cells, src.piece);
        h5io_out_t *o = NULL;
        CHECK(h5io_out_open(p2, m, 0, &o, err, sizeof err) == 0, "%s", err);
        CHECK(o && h5io_out_cells(o, m, &src, err, sizeof err) == 0, "%s", err);
        xfer_piece_t q;
        CHECK(R.bad == 0 && !xfer_plan_next(&R.plan, &q), "pieces of %zu tiles: the writer took the whole plan", tiles);
        CHECK(o && h5io_out_finish(o, m, &mt, err, sizeof err) == 0, "%s", err);
        CHECK(same_bytes(p1, p2), "pieces of %zu tiles: other bytes than h5io_write", tiles);
        free(R.buf[0]);
        free(R.buf[1]);
        remove(p2);
    }
    /* a failing source: its words in the message, no file, no temporary file */
    ring_src_t R = { .m = m };
    xfer_src_t src = { .get = ring_get, .piece = cells * sizeof(float), .ctx = &R };
    R.buf[0] = malloc(src.piece);
    R.buf[1] = malloc(src.piece);
    xfer_plan_init(&R.plan, m->nlevels, m->level_start, m->nf, cells, src.piece);
    xfer_piece_t q;
    CHECK(xfer_plan_next(&R.plan, &q)); /* one ahead: the writer's first request is off the plan */
    h5io_out_t *o = NULL;
    CHECK(h5io_out_open(p2, m, 0, &o, err, sizeof err) == 0, "%s", err);
    CHECK(o && h5io_out_cells(o, m, &src, err, sizeof err) != 0 && strstr(err, "off the plan"), "%s", err);
    h5io_out_abort(o);
    struct stat st;
    CHECK(stat(p2, &st) != 0, "no file after a failed source");
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", p2, (long)getpid());
    CHECK(stat(tmp, &st) != 0, "no temporary file after abort");
    free(R.buf[0]);
    free(R.buf[1]);
    CHECK_NO_OPEN();
    remove(p1);
}

/** A mesh with an empty trailing level: kept in /dpamr (round trip), left out of /VTKHDF. */
/** A file of an earlier dpamr (its tile tree after its cells): not head-first, read tree first and
 *  then the cells, as h5io_read reads it. */
static void test_earlier_layout(void)
{
#ifdef DPAMR_EARLIER_FILE
    char err[1024] = "";
    mesh_t a, b;
    char *text = NULL;
    h5io_reader_t *rd = NULL;
    ready_log_t log = { 0 };
    CHECK(h5io_read(DPAMR_EARLIER_FILE, &a, NULL, err, sizeof err) == 0);
    CHECK(h5io_read_begin(DPAMR_EARLIER_FILE, &b, &rd, err, sizeof err) == 0 && rd);
    CHECK(h5io_read_plan(rd) == 1 && h5io_read_head_first(rd) == 0);
    CHECK(h5io_read_tree(rd, &text) == 0 && text);
    CHECK(h5io_read_cells(rd, log_ready, &log) == 0 && log.last == b.ntiles);
    h5io_read_close(rd);
    CHECK_NO_OPEN();
    compare_meshes(&a, &b);
    free(text);
    mesh_free(&a);
    mesh_free(&b);
#endif
}

static void test_empty_level(void)
{
    mesh_t m, r;
    char err[1024];
    build_mesh(&m, 2, 4, 1, 2, 2, 1, 2, 7u);
    m.nlevels = 3;
    m.level_start[3] = m.ntiles;
    const char *p = scratch("empty.hdf");
    CHECK(h5io_write(p, &m, NULL, err, sizeof err) == 0);
    check_vtkhdf(p, &m);
    CHECK(h5io_read(p, &r, NULL, err, sizeof err) == 0);
    compare_meshes(&m, &r);
    CHECK_NO_OPEN();
    mesh_free(&r);
    /* zero tiles: 0-size datasets everywhere (AMRBox (0,6)); writes, but is no valid mesh */
    m.ntiles = 0;
    m.nlevels = 1;
    m.level_start[1] = 0;
    CHECK(h5io_write(p, &m, NULL, err, sizeof err) == 0);
    check_vtkhdf(p, &m);
    expect_read_error(p, "level 0 has 0 tiles, expected root 2x2x1 = 4");
    mesh_free(&m);
    remove(p);
}

/** A deck stored as a variable-length string (as h5py writes str) reads back too. */
static void test_vlen_deck(const char *good)
{
    const char *p = scratch("vlen.hdf");
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    const char *txt = "dim = 3\n";
    replace_dset(good, p, "dpamr/deck", t, 0, NULL, &txt);
    H5Tclose(t);
    mesh_t m;
    char err[1024], *deck = NULL;
    CHECK(h5io_read(p, &m, &deck, err, sizeof err) == 0);
    CHECK(deck && strcmp(deck, txt) == 0);
    free(deck);
    mesh_free(&m);
    CHECK_NO_OPEN();
    remove(p);
}

static void test_bad_files(const mesh_t *m, const char *good)
{
    const char *p = scratch("bad.hdf");
    const hsize_t n = (hsize_t)m->ntiles;

    expect_read_error(scratch("does_not_exist.hdf"), "no such file");

    FILE *fp = fopen(p, "w");
    CHECK(fp != NULL);
    fputs("this is a text file, not HDF5\n", fp);
    fclose(fp);
    expect_read_error(p, "not an HDF5 file");

    create_with_group(p, "VTKHDF", 1, 0, 0);
    expect_read_error(p, "not a dpamr file (a mesh or an output): no /dpamr group");

    /* the tiles' boxes and cells are read from /VTKHDF, the tree from /dpamr/tiles */
    const dp_tidx n0 = m->level_start[1], last = m->ntiles - 1, cells = mesh_cells(m);
    const int lastL = m->level[last];
    const dp_tidx nlast = m->level_start[lastL + 1] - m->level_start[lastL];
    char lastbox[64], lastrho[64];
    snprintf(lastbox, sizeof lastbox, "VTKHDF/Level%d/AMRBox", lastL);
    snprintf(lastrho, sizeof lastrho, "VTKHDF/Level%d/CellData/rho", lastL);
    int32_t *b4 = calloc(4 * (size_t)n0, sizeof *b4);
    const hsize_t d4[2] = { (hsize_t)n0, 4 };
    replace_dset(good, p, "VTKHDF/Level0/AMRBox", H5T_NATIVE_INT32, 2, d4, b4);
    char want[128];
    snprintf(want, sizeof want, "/VTKHDF/Level0/AMRBox has shape (%lld,4), expected (%lld,6)", (long long)n0,
             (long long)n0);
    expect_read_error(p, want);
    free(b4);

    float *lf = calloc(n, sizeof *lf);
    replace_dset(good, p, "dpamr/tiles/parent", H5T_NATIVE_FLOAT, 1, &n, lf);
    expect_read_error(p, "/dpamr/tiles/parent has type float32, expected int64");
    free(lf);

    replace_dset(good, p, "dpamr/tiles/childmask", -1, 0, NULL, NULL);
    expect_read_error(p, "missing dataset /dpamr/tiles/childmask");
    replace_dset(good, p, "VTKHDF/Level1/CellData", -1, 0, NULL, NULL);
    expect_read_error(p, "missing group /VTKHDF/Level1/CellData");
    replace_dset(good, p, "VTKHDF/Level1/CellData/u", -1, 0, NULL, NULL);
    expect_read_error(p, "missing dataset /VTKHDF/Level1/CellData/u");
    replace_dset(good, p, "VTKHDF", -1, 0, NULL, NULL);
    expect_read_error(p, "missing group /VTKHDF/Level0");

    const hsize_t ls1 = (hsize_t)m->nlevels; /* one short */
    int64_t ls[DP_MAX_LEVELS + 1] = { 0 };
    replace_dset(good, p, "dpamr/level_start", H5T_NATIVE_INT64, 1, &ls1, ls);
    expect_read_error(p, "/dpamr/level_start has shape");
    copy_file(good, p); /* a level index that does not match the boxes */
    const int64_t ls1v = m->level_start[1] - 1;
    poke(p, "dpamr/level_start", H5T_NATIVE_INT64, 1, 0, 1, &ls1v);
    snprintf(want, sizeof want, "/VTKHDF/Level0/AMRBox has shape (%lld,6), expected (%lld,6)", (long long)n0,
             (long long)n0 - 1);
    expect_read_error(p, want);
    copy_file(good, p);
    const int64_t lsbad = m->level_start[2] + 1;
    poke(p, "dpamr/level_start", H5T_NATIVE_INT64, 1, 0, 1, &lsbad);
    expect_read_error(p, "/dpamr/level_start[2] is");

    const char *s = "two";
    hid_t st = H5Tcopy(H5T_C_S1);
    H5Tset_size(st, 3);
    replace_attr(good, p, "dim", st, 0, s);
    H5Tclose(st);
    expect_read_error(p, "attribute /dpamr@dim has type string, expected an integer");

    int32_t v = 5;
    replace_attr(good, p, "dim", H5T_NATIVE_INT32, 0, &v);
    expect_read_error(p, "/dpamr@dim is 5, expected 2..3");
    v = 12;
    replace_attr(good, p, "tile_size", H5T_NATIVE_INT32, 0, &v);
    expect_read_error(p, "power of 2");
    replace_attr(good, p, "h0", -1, 0, NULL);
    expect_read_error(p, "missing attribute /dpamr@h0");
    const int32_t root[3] = { m->root[0] + 1, m->root[1], m->root[2] };
    replace_attr(good, p, "root", H5T_NATIVE_INT32, 3, root);
    expect_read_error(p, "level 0 has");

    char fl[256];
    snprintf(fl, sizeof fl, "rho %s", "a_field_name_that_is_much_too_long_for_the_sixty_four_byte_name_buffer");
    st = H5Tcopy(H5T_C_S1);
    H5Tset_size(st, strlen(fl));
    replace_attr(good, p, "fields", st, 0, fl);
    H5Tclose(st);
    expect_read_error(p, "too long");

    /* values poked into an otherwise good copy */
    copy_file(good, p);
    const float nanv = NAN;
    poke(p, "VTKHDF/Level0/CellData/u", H5T_NATIVE_FLOAT, (hsize_t)(3 * cells + 5), 0, 1, &nanv);
    expect_read_error(p, "/VTKHDF/Level0/CellData/u: tile 3 (level 0");
    expect_read_error(p, "cell 5 (x=5 y=0 z=0) is NaN");
    copy_file(good, p);
    const float infv = -INFINITY;
    poke(p, lastrho, H5T_NATIVE_FLOAT, (hsize_t)(nlast * cells - 1), 0, 1, &infv);
    expect_read_error(p, "is Inf");

    copy_file(good, p); /* a box that is not a tile's cells: hi one past the tile */
    const int32_t hi = m->coord[3 * last] * m->B + m->B;
    poke(p, lastbox, H5T_NATIVE_INT32, (hsize_t)(nlast - 1), 1, 2, &hi);
    snprintf(want, sizeof want, "/VTKHDF/Level%d/AMRBox[%lld] is (", lastL, (long long)nlast - 1);
    expect_read_error(p, want);
    expect_read_error(p, "not the cells of a tile: expected on axis 0 lo >= 0 a multiple of tile_size");
    copy_file(good, p);
    const int32_t k1 = 1; /* 2D: k must be 0..0 */
    poke(p, "VTKHDF/Level0/AMRBox", H5T_NATIVE_INT32, 0, 5, 2, &k1);
    expect_read_error(p, "on axis 2 0,0 (2D)");

    copy_file(good, p); /* swap two level-0 tiles' boxes */
    int32_t r0[6], r1[6];
    for (int a = 0; a < 3; ++a) {
        r0[2 * a] = a < m->dim ? m->coord[a] * m->B : 0, r0[2 * a + 1] = a < m->dim ? r0[2 * a] + m->B - 1 : 0;
        r1[2 * a] = a < m->dim ? m->coord[3 + a] * m->B : 0, r1[2 * a + 1] = a < m->dim ? r1[2 * a] + m->B - 1 : 0;
    }
    for (int a = 0; a < 6; ++a) {
        poke(p, "VTKHDF/Level0/AMRBox", H5T_NATIVE_INT32, 0, (hsize_t)a, 2, &r1[a]);
        poke(p, "VTKHDF/Level0/AMRBox", H5T_NATIVE_INT32, 1, (hsize_t)a, 2, &r0[a]);
    }
    expect_read_error(p, "not in canonical order: tile 1 (/VTKHDF/Level0/AMRBox[1])");

    copy_file(good, p);
    const int32_t far[2] = { (1 << 20) * m->B, (1 << 20) * m->B + m->B - 1 };
    poke(p, "VTKHDF/Level0/AMRBox", H5T_NATIVE_INT32, 0, 0, 2, &far[0]);
    poke(p, "VTKHDF/Level0/AMRBox", H5T_NATIVE_INT32, 0, 1, 2, &far[1]);
    expect_read_error(p, "/VTKHDF/Level0/AMRBox[0]: tile (1048576,");
    expect_read_error(p, "outside level 0's tile grid");

    copy_file(good, p);
    const int64_t bp = m->ntiles + 5;
    poke(p, "dpamr/tiles/parent", H5T_NATIVE_INT64, (hsize_t)last, 0, 1, &bp);
    expect_read_error(p, "/dpamr/tiles/parent");

    copy_file(good, p);
    const uint8_t cm = (uint8_t)(m->childmask[0] ^ 1u);
    poke(p, "dpamr/tiles/childmask", H5T_NATIVE_UINT8, 0, 0, 1, &cm);
    expect_read_error(p, "/dpamr/tiles/childmask[0]");

    remove(p);
}

/** The file format (issue 17): the superblock is read before HDF5 opens a file, and every object
 *  header dpamr looks into must carry a checksum. Old-format files are refused with the conversion
 *  command; every object header of a good file damaged in turn, and its superblock, make the load or
 *  the check fail with a message (HDF5 verifies the checksums), never crash. */
static void test_file_format(const mesh_t *m)
{
    const char *good = scratch("fmt_good.hdf"), *p = scratch("fmt.hdf");
    char err[1024] = "";
    valid_report_t v;
    fill_report(&v, m);
    h5io_meta_t mt;
    fill_meta(&mt, DECK, &v, 0.0);
    mt.variant = "mesh"; /* no rank table to account for: h5io_verify passes on the good file */
    CHECK(h5io_write(good, m, &mt, err, sizeof err) == 0, "%s", err);
    CHECK(h5io_is_dpamr_output(good, NULL, 0) == 2, "a level-0 mesh of `dpamr mesh` (variant mesh) is kind 2");
    {
        const char *out = scratch("fmt_out.hdf");
        h5io_meta_t mo = mt;
        mo.variant = "cpu";
        CHECK(h5io_write(out, m, &mo, err, sizeof err) == 0, "%s", err);
        CHECK(h5io_is_dpamr_output(out, NULL, 0) == 1, "a run's output (variant cpu) is kind 1");
        remove(out);
    }

    /* the HDF5 1.6 format: superblock 0; refused before HDF5 opens it, with the command that converts */
    create_with_group(p, "dpamr", 0, 0, 0);
    expect_read_error(p, "HDF5 superblock version 0: the HDF5 1.6 file format, whose metadata carries no checksums");
    expect_read_error(p, "h5repack --low=1 --high=2 -f NONE");
    char what[1500] = "";
    CHECK(h5io_is_dpamr_output(p, what, sizeof what) == 0);
    CHECK(strstr(what, "is an HDF5 file in the 1.6 format (superblock version 0), which dpamr does not open") != NULL,
          "%s", what);
    /* superblock 2 (kept free-space manager) but version-1 object headers (the default format) */
    create_with_group(p, "dpamr", 0, 0, 1);
    size_t n = 0;
    unsigned char *img = slurp(p, &n);
    CHECK(n > 9 && img[8] == 2, "superblock version %d, expected 2", n > 9 ? img[8] : -1);
    free(img);
    expect_read_error(p, "/ has a version-1 object header (the HDF5 1.6 format), which carries no checksum");
    /* a user block: the superblock at byte 512 is found and read */
    create_with_group(p, "VTKHDF", 1, 512, 0);
    expect_read_error(p, "not a dpamr file (a mesh or an output): no /dpamr group");
    CHECK(h5io_is_dpamr_output(p, what, sizeof what) == 0 && strstr(what, "was not written by dpamr (no /dpamr/deck"),
          "%s", what);
    CHECK(h5io_is_dpamr_output(scratch("fmt_absent.hdf"), what, sizeof what) == 0 && strstr(what, "cannot be read ("),
          "%s", what);
    FILE *txt = fopen(p, "w");
    CHECK(txt && fputs("text\n", txt) >= 0);
    fclose(txt);
    CHECK(h5io_is_dpamr_output(p, what, sizeof what) == 0 && strstr(what, "is not an HDF5 file"), "%s", what);
    /* only hard links are followed */
    replace_link(good, p, "dpamr/tiles/childmask", "/dpamr/tiles/parent", 0);
    expect_read_error(p, "/dpamr/tiles/childmask is a soft link");
    replace_link(good, p, "dpamr/tiles/childmask", "/dpamr/tiles/childmask", 1);
    expect_read_error(p, "/dpamr/tiles/childmask is an external link");
    replace_link(good, p, "VTKHDF/Level1/CellData/rho", "/VTKHDF/Level0/CellData/rho", 0);
    expect_read_error(p, "/VTKHDF/Level1/CellData/rho is a soft link");

    /* damage: a byte of every object header (signature OHDR; continuation chunks OCHK) in turn, at
     * the version byte and inside the checksummed part, and of the superblock */
    img = slurp(good, &n);
    mesh_t r;
    char *text = NULL;
    CHECK(h5io_read_image(img, n, "good.hdf", &r, &text, err, sizeof err) == 0, "%s", err);
    CHECK(h5io_verify_image(img, n, "good.hdf", &r, &v, err, sizeof err) == 0, "%s", err);
    free(text);
    mesh_free(&r);
    int headers = 0, damaged = 0;
    for (size_t at = 0; at + 16 < n; ++at) {
        const int hdr = memcmp(img + at, "OHDR", 4) == 0, chunk = memcmp(img + at, "OCHK", 4) == 0;
        if (at > 0 && !hdr && !chunk) continue;
        headers += at > 0;
        for (int k = 0; k < 2; ++k) {
            const size_t b = at + (at == 0 ? (k ? 20 : 8) : (k ? 12 : 4)); /* superblock: version, root address */
            img[b] ^= 0x5a;
            err[0] = '\0';
            text = NULL;
            int rc = h5io_read_image(img, n, "damaged.hdf", &r, &text, err, sizeof err);
            CHECK(rc != 0 || text != NULL);
            if (rc == 0) {
                rc = h5io_verify_image(img, n, "damaged.hdf", &r, &v, err, sizeof err);
                free(text);
                mesh_free(&r);
            }
            CHECK(rc != 0 && (strstr(err, "damaged.hdf: /") || strstr(err, "cannot open damaged.hdf: ")),
                  "header at byte %zu, byte %zu changed: rc %d ('%s')", at, b, rc, err);
            damaged += strstr(err, "its object header is damaged (HDF5: ") != NULL;
            CHECK_NO_OPEN();
            FILE *fp = fopen(p, "wb"); /* and on disk: whether dpamr wrote it is answered, never a crash */
            CHECK(fp && fwrite(img, 1, n, fp) == n);
            fclose(fp);
            (void)h5io_is_dpamr_output(p, NULL, 0);
            CHECK_NO_OPEN();
            img[b] ^= 0x5a;
        }
    }
    CHECK(headers >= 20, "only %d object headers found", headers);
    CHECK(damaged == 2 * headers, "%d of %d damaged object headers named as damaged", damaged, 2 * headers);
    if (getenv("TEST_H5IO_VERBOSE")) printf("  %d object headers damaged in turn (2 bytes each)\n", headers);
    free(img);
    remove(p);
    remove(good);
}

/** Failed writes: no file and no temp file left, an older file intact. */
static void test_bad_writes(const mesh_t *m)
{
    char err[1024] = "";
    char dir_path[1024];
    snprintf(dir_path, sizeof dir_path, "%s/test_h5io_no_such_dir/out.hdf", g_dir);
    int rc = h5io_write(dir_path, m, NULL, err, sizeof err);
    CHECK_ERR(rc, err, dir_path);
    struct stat st;
    CHECK(stat(dir_path, &st) != 0);
    CHECK_NO_OPEN();

    const char *d = scratch("a_directory.hdf"); /* only a regular file is replaced: refused before writing */
    mkdir(d, 0755);
    rc = h5io_write(d, m, NULL, err, sizeof err);
    CHECK_ERR(rc, err, "it exists and is not a regular file (a directory)");
    CHECK(temp_files_left() == 0);
    CHECK(stat(d, &st) == 0 && S_ISDIR(st.st_mode));
    rmdir(d);
    CHECK_NO_OPEN();

    const char *old = scratch("old.hdf"), *ref = scratch("old_ref.hdf");
    CHECK(h5io_write(old, m, NULL, err, sizeof err) == 0);
    copy_file(old, ref);
    mesh_t bad = *m; /* an index past int32 in AMRBox fails in the middle of the write */
    int32_t *coord = malloc((size_t)m->ntiles * 3 * sizeof *coord);
    memcpy(coord, m->coord, (size_t)m->ntiles * 3 * sizeof *coord);
    coord[3 * (m->ntiles - 1)] = INT32_MAX / m->B + 1;
    bad.coord = coord;
    rc = h5io_write(old, &bad, NULL, err, sizeof err);
    CHECK_ERR(rc, err, "AMRBox");
    CHECK(strstr(err, old) != NULL);
    CHECK(temp_files_left() == 0);
    CHECK(same_bytes(old, ref));
    CHECK_NO_OPEN();
    free(coord);

    bad = *m;
    snprintf(bad.field_name[0], DP_NAME_LEN, "has space");
    CHECK_ERR(h5io_write(old, &bad, NULL, err, sizeof err), err, "invalid mesh");
    CHECK(same_bytes(old, ref));
    remove(old);
    remove(ref);
}

/* A time step's file: /dpamr@step and @time written when meta.has_step, read back by h5io_read_step;
 * a file without them is no step's (0); the datasets are those of the same mesh without a step;
 * malformed attributes and a missing file are errors with a message. */
static void test_step_attrs(const mesh_t *m)
{
    char err[1024] = "";
    valid_report_t v;
    fill_report(&v, m);
    h5io_meta_t mt;
    fill_meta(&mt, DECK, &v, 0.0);
    const char *plain = scratch("step_plain.hdf"), *step = scratch("step_7.hdf");
    CHECK(h5io_write(plain, m, &mt, err, sizeof err) == 0, "%s", err);
    mt.has_step = 1;
    mt.step = 7;
    mt.time = 0.35;
    CHECK(h5io_write(step, m, &mt, err, sizeof err) == 0, "%s", err);
    long long k = -1;
    double t = -1.0;
    CHECK(h5io_read_step(step, &k, &t, NULL, err, sizeof err) == 1 && k == 7 && t == 0.35, "step %lld time %g: %s", k, t, err);
    CHECK(h5io_read_step(plain, &k, &t, NULL, err, sizeof err) == 0, "a file without @step: %s", err);
    CHECK(compare_file_datasets(plain, step) >= 8 + 2 * m->nf, "a step's datasets are the mesh's");
    mesh_t r;
    CHECK(h5io_read(step, &r, NULL, err, sizeof err) == 0, "a step's file reads as a mesh: %s", err);
    compare_meshes(m, &r);
    mesh_free(&r);
    const double neg = -1.0;
    replace_attr(step, scratch("step_bad.hdf"), "time", H5T_NATIVE_DOUBLE, 1, &neg);
    CHECK(h5io_read_step(scratch("step_bad.hdf"), &k, &t, NULL, err, sizeof err) == -1 && strstr(err, "@time = -1"),
          "a negative time: %s", err);
    CHECK(h5io_read_step(scratch("no_such.hdf"), &k, &t, NULL, err, sizeof err) == -1 && strstr(err, "no_such.hdf"),
          "a missing file: %s", err);
    CHECK_NO_OPEN();
    remove(plain);
    remove(step);
    remove(scratch("step_bad.hdf"));
}

/** vtkGhostType as the serial writer stores it (made and deflated chunk by chunk by the OpenMP
 *  threads, written with H5Dwrite_chunk): on a level of 3 chunks, the last one partial, every stored
 *  chunk (its bytes, size and filter mask) equals what HDF5's own deflate filter stores when the
 *  level's ghost bytes go through H5Dwrite into a dataset of the same creation properties; the
 *  values read back through HDF5 are the tree's (check_vtkhdf). */
static void test_ghost_chunks(void)
{
    mesh_t m;
    build_mesh(&m, 2, 16, 1, 49, 49, 1, 2, 23u); /* level 0: 2401 tiles x 256 cells = 2.3 chunks of 2^18 */
    char err[1024] = "";
    valid_report_t v;
    fill_report(&v, &m);
    h5io_meta_t mt;
    fill_meta(&mt, DECK, &v, 0.0);
    const char *pa = scratch("ghost_a.hdf"), *pb = scratch("ghost_b.hdf");
    CHECK(h5io_write(pa, &m, &mt, err, sizeof err) == 0);
    check_vtkhdf(pa, &m);
    const size_t cells = (size_t)mesh_cells(&m);
    int chunked = 0;
    hid_t fa = H5Fopen(pa, H5F_ACC_RDONLY, H5P_DEFAULT), fb = H5Fcreate(pb, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(fa >= 0 && fb >= 0);
    for (int L = 0; L < m.nlevels; ++L) {
        char name[64];
        snprintf(name, sizeof name, "/VTKHDF/Level%d/CellData/vtkGhostType", L);
        hid_t da = H5Dopen2(fa, name, H5P_DEFAULT), dcpl = H5Dget_create_plist(da);
        CHECK(da >= 0 && dcpl >= 0);
        if (H5Pget_layout(dcpl) != H5D_CHUNKED) {
            H5Pclose(dcpl);
            H5Dclose(da);
            continue;
        }
        const dp_tidx s = m.level_start[L];
        const hsize_t n = (hsize_t)(m.level_start[L + 1] - s) * cells;
        uint8_t *g = malloc((size_t)n);
        CHECK(g != NULL);
        for (size_t i = 0; i < (size_t)n; ++i) { /* the tree's ghost bytes, as check_level derives them */
            const size_t t = i / cells, c = i % cells;
            const int x = (int)(c % 16), y = (int)(c / 16), o = (x >= 8) | (y >= 8) << 1;
            g[i] = (m.childmask[s + (dp_tidx)t] >> o & 1) ? 32 : 0;
        }
        hid_t sp = H5Screate_simple(1, &n, NULL);
        snprintf(name, sizeof name, "g%d", L);
        hid_t db = H5Dcreate2(fb, name, H5T_STD_U8LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        CHECK(db >= 0 && H5Dwrite(db, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, g) >= 0);
        CHECK(H5Fflush(fb, H5F_SCOPE_LOCAL) >= 0);
        hsize_t cd = 0;
        CHECK(H5Pget_chunk(dcpl, 1, &cd) == 1 && cd > 0);
        const hsize_t nch = (n + cd - 1) / cd;
        if (nch >= 3 && n % cd != 0) ++chunked;
        uint8_t *ba = malloc((size_t)cd + 64), *bb = malloc((size_t)cd + 64);
        CHECK(ba && bb);
        for (hsize_t k = 0; k < nch; ++k) {
            const hsize_t off = k * cd;
            hsize_t za = 0, zb = 0;
            uint32_t ma = 99, mb = 99;
            CHECK(H5Dget_chunk_storage_size(da, &off, &za) >= 0 && H5Dget_chunk_storage_size(db, &off, &zb) >= 0);
            CHECK(za == zb && za > 0 && za <= cd);
            CHECK(H5Dread_chunk(da, H5P_DEFAULT, &off, &ma, ba) >= 0 && H5Dread_chunk(db, H5P_DEFAULT, &off, &mb, bb) >= 0);
            CHECK(ma == mb && memcmp(ba, bb, (size_t)za) == 0);
        }
        free(ba);
        free(bb);
        free(g);
        H5Dclose(db);
        H5Sclose(sp);
        H5Pclose(dcpl);
        H5Dclose(da);
    }
    CHECK(chunked >= 1); /* a level of 3 or more chunks, the last partial, was compared */
    H5Fclose(fb);
    H5Fclose(fa);
    CHECK_NO_OPEN();
    remove(pa);
    remove(pb);
    mesh_free(&m);
}

int main(int argc, char **argv)
{
    if (argc > 1) g_dir = argv[1];
    g_check_fatal = 1; /* a failed check ends the test: later checks read what it should have made */
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);

    mesh_t m2, m3;
    build_mesh(&m2, 2, 8, 2, 3, 2, 1, 4, 11u);
    build_mesh(&m3, 3, 4, 3, 2, 1, 2, 3, 5u);

    test_roundtrip(&m2, "2d", DECK);
    test_roundtrip(&m3, "3d", NULL);
    test_reproducible(&m2);
    test_pieces(&m2);
    test_stream(&m2);
    test_earlier_layout();
    test_empty_level();
    test_vlen_deck(scratch("2d_a.hdf"));
    test_bad_files(&m2, scratch("2d_a.hdf"));
    test_file_format(&m3);
    test_bad_writes(&m3);
    test_step_attrs(&m2);
    test_ghost_chunks();
    remove(scratch("2d_a.hdf"));
    remove(scratch("3d_a.hdf"));

    printf("test_h5io: %d checks passed (2D: %lld tiles on %d levels, 3D: %lld tiles on %d levels)\n", g_pass,
           (long long)m2.ntiles, m2.nlevels, (long long)m3.ntiles, m3.nlevels);
    mesh_free(&m2);
    mesh_free(&m3);
    return 0;
}
