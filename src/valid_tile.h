/* valid_tile.h - the per-tile parts of validation, shared by the CPU validator (validation/valid.c)
 * and the GPU validator (device/valid_gpu.cu): one source, so the two cannot drift.
 *
 * Everything here is a static inline DP_HD function on the tile arrays (dp_tiles) and the fields:
 * the checks of one tile (parent link and containment with dp_parent_contains, canonical order and
 * keys, the octant its parent must flag, finite values, conservation), the checks of its children
 * (completeness, childmask), and the checksums of one tile and of one chunk (docs/format.md,
 * "Validation"). A check counts its failures and, given a dp_vfail, records the first one as a
 * code with its numbers; validation/valid.c turns that record into words (the device never
 * formats text). The octant flags the checks compare with come from dp_tile_flags (core.h), lazily.
 * Host code builds with -ffp-contract=off and device code with -fmad=false, so the doubles of the
 * conservation check and the checksums round alike.
 */
#ifndef DPAMR_VALID_TILE_H
#define DPAMR_VALID_TILE_H

#include <stdint.h>
#include <stdlib.h>
#include "src/mesh.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Relative tolerance of the conservation check. Prolongation adds antisymmetric float32 offsets
 * to the parent value, so the 2^dim children average back to it up to the rounding of each child
 * (half an ulp, ~6e-8 relative; ~3e-7 in the worst case): 1e-6 leaves headroom and still catches
 * any real change of a value. */
#define DP_VALID_CONS_TOL 1e-6

#define DP_FNV_OFFSET 0xcbf29ce484222325ull
#define DP_FNV_PRIME 0x100000001b3ull

/* aux[] bits of a tile (the CPU validator's pass A): a second child of one parent in one octant. */
enum { DP_VAUX_DUP = 1 };

static inline DP_HD uint64_t dp_fnv_byte(uint64_t h, unsigned b) { return (h ^ (b & 0xffu)) * DP_FNV_PRIME; }

/** FNV-1a 64 over the nbytes little-endian bytes of v, whatever the host byte order. */
static inline DP_HD uint64_t dp_fnv_u64(uint64_t h, uint64_t v, int nbytes)
{
    for (int i = 0; i < nbytes; ++i) h = dp_fnv_byte(h, (unsigned)(v >> (8 * i)));
    return h;
}

static inline DP_HD uint32_t dp_float_bits(float v)
{
    union {
        float f;
        uint32_t u;
    } x;
    x.f = v;
    return x.u;
}

/* ---- checksums ------------------------------------------------------------------------------ */

/** The partial checksums of one chunk: the tiles of one level that descend from one root tile, in
 *  canonical order (validation/valid.h calls it valid_chunk_t). */
typedef struct {
    double sum[DP_MAX_FIELDS];    /* the chunk's tile sums added in canonical order */
    uint64_t hash[DP_MAX_FIELDS]; /* FNV-1a 64 over the chunk's tile hashes (8 bytes each) */
    uint64_t tree;                /* FNV-1a 64 over the chunk's tile tree hashes (8 bytes each) */
} dp_vchunk;

/** One cell of a tile's checksums: its value added to the running sum s, its float bits (4
 *  little-endian bytes) to the running FNV-1a 64 hash h. */
static inline DP_HD void dp_vtile_cell(double *s, uint64_t *h, float v)
{
    *s += (double)v;
    const uint32_t bits = dp_float_bits(v);
    uint64_t x = dp_fnv_byte(*h, bits);
    x = dp_fnv_byte(x, bits >> 8);
    x = dp_fnv_byte(x, bits >> 16);
    *h = dp_fnv_byte(x, bits >> 24);
}

/** One field of one tile: the plain double sum of its cells in cell order and FNV-1a 64 (from the
 *  offset basis) over their float bits, 4 little-endian bytes each (dp_vtile_cell, cell by cell). */
static inline DP_HD void dp_vtile_field(const float *u, int cells, double *sum, uint64_t *hash)
{
    double s = 0.0;
    uint64_t h = DP_FNV_OFFSET;
    for (int i = 0; i < cells; ++i) dp_vtile_cell(&s, &h, u[i]);
    *sum = s;
    *hash = h;
}

/* Tiles per dp_vtile_field4 call. */
#define DP_VTILE_GROUP 4

/** dp_vtile_field of DP_VTILE_GROUP tiles whose cells follow each other from u (tile k at
 *  u + k * cells): tile k's sum and hash into sum[k * stride] and hash[k * stride]. The same values
 *  as one call per tile; the tiles' chains (a multiply per byte, each waiting for the one before)
 *  are interleaved, so that a CPU core works on four at once instead of waiting on one (the CPU
 *  validator, one thread: 2.2x the cells per second; docs/results.md, "Session 13"). */
static inline DP_HD void dp_vtile_field4(const float *u, int cells, double *sum, uint64_t *hash, size_t stride)
{
    double s[DP_VTILE_GROUP];
    uint64_t h[DP_VTILE_GROUP];
    for (int k = 0; k < DP_VTILE_GROUP; ++k) s[k] = 0.0, h[k] = DP_FNV_OFFSET;
    for (int i = 0; i < cells; ++i)
        for (int k = 0; k < DP_VTILE_GROUP; ++k) dp_vtile_cell(&s[k], &h[k], u[(size_t)k * (size_t)cells + (size_t)i]);
    for (int k = 0; k < DP_VTILE_GROUP; ++k) sum[(size_t)k * stride] = s[k], hash[(size_t)k * stride] = h[k];
}

/** The tree hash of one tile: FNV-1a 64 over level, i, j, k (4 bytes each) and the parent's global
 *  canonical index (8 bytes), little-endian: 28 bytes. */
static inline DP_HD uint64_t dp_vtile_tree(int level, const int32_t *c, int64_t parent)
{
    uint64_t h = dp_fnv_u64(DP_FNV_OFFSET, (uint32_t)level, 4);
    for (int a = 0; a < 3; ++a) h = dp_fnv_u64(h, (uint32_t)c[a], 4);
    return dp_fnv_u64(h, (uint64_t)parent, 8);
}

/** Add one tile (its sum ts and hash th of a field, or its tree hash th with s NULL) to a chunk's
 *  running sum and hash. A chunk starts from sum 0.0 and hash DP_FNV_OFFSET and adds its tiles in
 *  canonical order: one sequential fold per chunk, chunks independent of each other. */
static inline DP_HD void dp_vchunk_add(double *s, uint64_t *h, double ts, uint64_t th)
{
    if (s) *s = *s + ts;
    *h = dp_fnv_u64(*h, th, 8);
}

/* ---- the checks of one tile ------------------------------------------------------------------ */

/** What the per-tile checks read: the tile arrays and fields of the mesh (or of one rank's part)
 *  and the per-tile results of the passes before them (flags recomputed by the criterion for
 *  levels below flag_below, octants with a child whose parent link is right, DP_VAUX_* bits). */
typedef struct {
    dp_tiles T;
    const float *field[DP_MAX_FIELDS];
    dp_tidx n; /* tiles */
    int dim, B, nf, cells, max_level, fill;
    int root[3];
    int complete_below; /* levels below this (and below max_level) must have every flagged octant refined */
    const uint8_t *flags, *kids, *aux;
} dp_vctx;

/** The failures of one tile's checks: n counts them, code and a[] describe the first. */
enum {
    DP_VF_NONE = 0,
    DP_VF_LEVEL_RANGE,    /* a0 = level */
    DP_VF_LEVEL_CAP,      /* a0 = level */
    DP_VF_COORDS,         /* - */
    DP_VF_KEY,            /* a0 = the Morton key of the coords */
    DP_VF_DUP,            /* - */
    DP_VF_ORDER_LEVEL,    /* a0 = level of tile t - 1 */
    DP_VF_DUP_KEY,        /* - */
    DP_VF_ORDER_KEY,      /* - */
    DP_VF_ROOT_PARENT,    /* a0 = parent */
    DP_VF_PARENT_RANGE,   /* a0 = parent */
    DP_VF_PARENT_LEVEL,   /* a0 = parent */
    DP_VF_PARENT_CONTAIN, /* a0 = parent */
    DP_VF_OCTANT,         /* a0 = parent, a1 = octant */
    DP_VF_FINITE,         /* a0 = field, a1 = cell */
    DP_VF_CONSERVE,       /* a0 = field, a1 = parent, a2 = the first failing parent cell of the octant */
    DP_VF_INCOMPLETE,     /* a0 = flagged octants without a child */
    DP_VF_CHILDMASK       /* - */
};
typedef struct {
    int n, code;
    long long a[3];
} dp_vfail;

static inline DP_HD void dp_vfail_add(dp_vfail *r, int code, long long a0, long long a1, long long a2)
{
    if (!r || r->n++ > 0) return;
    r->code = code;
    r->a[0] = a0;
    r->a[1] = a1;
    r->a[2] = a2;
}

/** Is the parent link of tile t geometrically right (index, level, coordinates)? */
static inline DP_HD int dp_vparent_ok(const dp_vctx *c, dp_tidx t)
{
    const int64_t q = c->T.parent[t];
    return c->T.level[t] > 0 && q >= 0 && q < c->n && q != t && dp_parent_contains(c->T, q, t);
}

/** Phase 2, the tile's own metadata: level, coordinates, key, duplicates, canonical order, parent
 *  link and the parent's flag of its octant. Returns the failed checks; *stop = 1 when the level
 *  is out of range (nothing else can be checked), *q = the parent when the link is right, else -1. */
static inline DP_HD int dp_vcheck_meta(const dp_vctx *c, dp_tidx t, dp_vfail *r, int *stop, dp_tidx *q)
{
    const dp_tiles T = c->T;
    const int L = T.level[t];
    const int32_t *x = T.coord + 3 * t;
    int k = 0;
    *stop = 0;
    *q = -1;
    if (L < 0 || L >= DP_MAX_LEVELS) {
        dp_vfail_add(r, DP_VF_LEVEL_RANGE, L, 0, 0);
        *stop = 1;
        return 1;
    }
    if (L > c->max_level) ++k, dp_vfail_add(r, DP_VF_LEVEL_CAP, L, 0, 0);
    /* coordinates inside the level's tile grid */
    int coords_ok = 1;
    for (int a = 0; a < 3; ++a) {
        const int64_t ext = (int64_t)c->root[a] << L;
        if (x[a] < 0 || x[a] >= (a == 2 && c->dim == 2 ? 1 : ext)) coords_ok = 0;
    }
    if (!coords_ok) ++k, dp_vfail_add(r, DP_VF_COORDS, 0, 0, 0);
    const uint64_t key = dp_morton(c->dim, x[0], x[1], x[2]);
    if (T.key[t] != key) ++k, dp_vfail_add(r, DP_VF_KEY, (long long)key, 0, 0);
    const int dup = c->aux[t] & DP_VAUX_DUP;
    if (dup) ++k, dp_vfail_add(r, DP_VF_DUP, 0, 0, 0);
    /* canonical order: level non-decreasing, then Morton key strictly increasing */
    if (t > 0) {
        const int Lp = T.level[t - 1];
        if (L < Lp)
            ++k, dp_vfail_add(r, DP_VF_ORDER_LEVEL, Lp, 0, 0);
        else if (L == Lp && T.key[t] <= T.key[t - 1]) {
            if (T.key[t] == T.key[t - 1]) {
                if (!dup) ++k, dp_vfail_add(r, DP_VF_DUP_KEY, 0, 0, 0); /* one duplicate, one failed check */
            } else
                ++k, dp_vfail_add(r, DP_VF_ORDER_KEY, 0, 0, 0);
        }
    }
    /* parent link: the parent exists one level up, contains the tile and flags its octant */
    const int64_t p = T.parent[t];
    if (L == 0) {
        if (p != -1) ++k, dp_vfail_add(r, DP_VF_ROOT_PARENT, p, 0, 0);
    } else if (p < 0 || p >= c->n) {
        ++k, dp_vfail_add(r, DP_VF_PARENT_RANGE, p, 0, 0);
    } else if (T.level[p] != L - 1) {
        ++k, dp_vfail_add(r, DP_VF_PARENT_LEVEL, p, 0, 0);
    } else if (!dp_vparent_ok(c, t)) {
        ++k, dp_vfail_add(r, DP_VF_PARENT_CONTAIN, p, 0, 0);
    } else {
        *q = p;
        const int o = dp_tile_octant(x);
        if (!(c->flags[p] >> o & 1)) ++k, dp_vfail_add(r, DP_VF_OCTANT, p, o, 0);
    }
    return k;
}

/** The first of cells first, first + stride, ... of u that is not finite (NaN or Inf: a value that
 *  would poison every sum and comparison downstream), or `cells` when there is none. */
static inline DP_HD int dp_vfirst_nonfinite(const float *u, int cells, int first, int stride)
{
    for (int i = first; i < cells; i += stride)
        if ((dp_float_bits(u[i]) & 0x7f800000u) == 0x7f800000u) return i;
    return cells;
}

/** Conservation at parent cell j = X + hb (Y + hb Z) of octant o (hb = B/2): the parent's value *u,
 *  its 2^dim child cells' average *avg (from child tile cells uc), and the relative error *rel.
 *  Returns 1 when the cell passes: |avg - u| <= tol (mean |child| + |u|) + 2^-149 (one subnormal step). */
static inline DP_HD int dp_vconserve_cell(int dim, int B, const float *uc, const float *up, int o, int j, double *u,
                                          double *avg, double *rel)
{
    const int hb = B / 2, nc = 1 << dim;
    const int X = j % hb, Y = (j / hb) % hb, Z = j / (hb * hb);
    const int ox = (o & 1) * hb, oy = ((o >> 1) & 1) * hb, oz = ((o >> 2) & 1) * hb;
    double sum = 0.0, asum = 0.0;
    for (int s = 0; s < nc; ++s) {
        const int cx = 2 * X + (s & 1), cy = 2 * Y + ((s >> 1) & 1), cz = 2 * Z + ((s >> 2) & 1);
        const double v = uc[cx + B * (cy + B * (dim == 3 ? cz : 0))];
        sum += v;
        asum += v < 0.0 ? -v : v;
    }
    const int pc = (ox + X) + B * ((oy + Y) + B * (dim == 3 ? oz + Z : 0));
    const double pu = up[pc], a = sum / nc, apu = pu < 0.0 ? -pu : pu, den = asum / nc + apu;
    const double d = a - pu, err = d < 0.0 ? -d : d;
    *u = pu;
    *avg = a;
    /* at the bottom of float's range the spacing is absolute: a subnormal parent (or child) is the
     * mean rounded to a multiple of 2^-149, so a difference within that one step is rounding */
    *rel = den > 0.0 && err > 0x1p-149 ? err / den : 0.0;
    return err <= DP_VALID_CONS_TOL * den + 0x1p-149;
}

/** Conservation of one field between child tile cells uc (octant o of its parent) and the parent's
 *  cells up, over parent cells j = first, first + stride, ... of the octant's (B/2)^dim: returns the
 *  failing cells, *firstbad the smallest failing j (unchanged when none), *maxrel grows (a NaN never
 *  raises it: the finite check owns NaN). */
static inline DP_HD int dp_vconserve(int dim, int B, const float *uc, const float *up, int o, int first, int stride,
                                     double *maxrel, int *firstbad)
{
    const int hb = B / 2, npc = hb * hb * (dim == 3 ? hb : 1);
    int bad = 0;
    for (int j = first; j < npc; j += stride) {
        double u, avg, rel;
        const int ok = dp_vconserve_cell(dim, B, uc, up, o, j, &u, &avg, &rel);
        if (rel > *maxrel) *maxrel = rel;
        if (!ok && bad++ == 0) *firstbad = j;
    }
    return bad;
}

/** Phase 2, all of tile t's own checks: dp_vcheck_meta, then every field's finite values, then
 *  (fill = prolong, parent link right) every field's conservation, each one failed check at most.
 *  The CPU validator's order of the checks, which decides the first failure's words; the GPU
 *  validator runs the same pieces with a warp's lanes striding over the cells. */
static inline DP_HD int dp_vcheck_self(const dp_vctx *c, dp_tidx t, dp_vfail *r, double *maxrel)
{
    int stop;
    dp_tidx q;
    int k = dp_vcheck_meta(c, t, r, &stop, &q);
    if (stop) return k;
    const size_t cells = (size_t)c->cells;
    for (int f = 0; f < c->nf; ++f) {
        const int i = dp_vfirst_nonfinite(c->field[f] + (size_t)t * cells, c->cells, 0, 1);
        if (i < c->cells) ++k, dp_vfail_add(r, DP_VF_FINITE, f, i, 0);
    }
    if (c->fill == DP_FILL_PROLONG && q >= 0) {
        const int o = dp_tile_octant(c->T.coord + 3 * t);
        for (int f = 0; f < c->nf; ++f) {
            int jb = -1;
            if (dp_vconserve(c->dim, c->B, c->field[f] + (size_t)t * cells, c->field[f] + (size_t)q * cells, o, 0, 1,
                             maxrel, &jb))
                ++k, dp_vfail_add(r, DP_VF_CONSERVE, f, q, jb);
        }
    }
    return k;
}

/** Phase 3, tile t's children as seen from it: a flagged octant without a child (below
 *  complete_below and max_level: a lost launch or level), and childmask against the children found. */
static inline DP_HD int dp_vcheck_children(const dp_vctx *c, dp_tidx t, dp_vfail *r)
{
    const int L = c->T.level[t];
    int k = 0;
    if (L < 0 || L >= DP_MAX_LEVELS) return 0; /* reported in phase 2 */
    if (L < c->complete_below && L < c->max_level) {
        const unsigned missing = c->flags[t] & ~(unsigned)c->kids[t];
        if (missing) ++k, dp_vfail_add(r, DP_VF_INCOMPLETE, missing, 0, 0);
    }
    if (c->T.childmask[t] != c->kids[t]) ++k, dp_vfail_add(r, DP_VF_CHILDMASK, 0, 0, 0);
    return k;
}

/* ---- the GPU validator's request and result (device/gpu.h: gpu_refine_valid) ----------------- */

/** What a run asks of the device besides the refinement. */
typedef struct {
    int validate; /* 1: validate the refined store on the device; 0: no (the corruption test hook still applies) */
    int complete; /* as valid_check_mode: 1 for a refinement output */
} dp_vreq;

/** What the device found on its tile store after the refinement: the per-tile passes' results and
 *  the chunks, for valid_check_device (validation/valid.h), which turns them into the report. */
typedef struct {
    int ran;                        /* 1 when the device validated (else note says why not) */
    char note[192];
    float kernel_ms;                /* the validation's kernels, from CUDA events on its stream */
    double wall_ms;                 /* from its first launch to its results on the host (overlaps the download) */
    dp_tidx ntiles;
    int nlv;                        /* levels present (the largest valid level + 1) */
    int unsorted;                   /* a tile at a lower level than the one before it */
    int dup;                        /* two children with right parent links in one octant */
    dp_tidx count[DP_MAX_LEVELS];   /* tiles per level */
    long long nfail;                /* failed checks of phases 2 and 3 (dp_vcheck_self, dp_vcheck_children) */
    double maxrel;                  /* the conservation check's largest relative error */
    dp_tidx nchunks[DP_MAX_LEVELS]; /* chunks per level (when the checks passed) */
    dp_vchunk *chunk[DP_MAX_LEVELS];/* malloc'd, level by level in canonical order; tree hashes with
                                       the part's own parent indices */
} dp_vdev;

/** Free what a dp_vdev holds (its chunks). */
static inline void dp_vdev_free(dp_vdev *g)
{
    for (int L = 0; L < DP_MAX_LEVELS; ++L) {
        free(g->chunk[L]);
        g->chunk[L] = NULL;
    }
}

#ifdef __cplusplus
}
#endif
#endif
