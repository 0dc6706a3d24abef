/* valid.c - checks of a refined hierarchy: structure, conservation, checksums.
 *
 * valid_check re-derives everything it can from the tiles themselves and the shared numerics of
 * core.h, so it trusts no engine: the parent links and coordinates, the canonical order and keys,
 * the refinement decisions (octant flags recomputed from the cells by the shared flag loop,
 * tile_octant_flags_lazy, never read from the engine's childmask), the cap on levels, finite values,
 * conservation of prolonged values and the child masks. The flag loop itself is checked against an
 * independent reference in tests/test_core.c. Checksums are then computed in canonical order,
 * which makes them regression values independent of the variant and thread count.
 *
 * Passes (the per-tile ones run under OpenMP; every reduction is order-independent):
 *   1. global: the mesh agrees with the parameters and is safe to walk (else stop here);
 *   A. sequential O(tiles): levels present, children seen per parent, duplicate children;
 *   B. octant flags of every tile that can be a parent (the expensive part: reads the cells, lazily:
 *      an octant's remaining cells are skipped once it is flagged);
 *   C. per-tile checks in two phases: 2 = the tile itself (level, coords, key, order, parent,
 *      flagged octant, finite values, conservation), 3 = its children (completeness, childmask);
 *   4. the level index (nlevels, level_start) and the root tile count;
 *   D. checksums: every tile's sum and hash per field (computed in pass C, while the tile is in cache),
 *      folded chunk by chunk (a level's tiles under one root), each chunk sequentially.
 * B, C and D go over the tiles in blocks, in order, so that `dpamr check` can validate the tiles
 * whose cells are in while the rest is still being read (valid_opts_t.wait).
 * The reported first failure is the one of the earliest phase in the lowest tile index, found by
 * re-running that tile's checks with messages on: the same message whatever the thread count.
 */
#include "validation/valid.h"

#include "src/balance.h"
#include "src/tile.h"
#include "src/valid_tile.h"
#include "src/xfer.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#define VALID_PRAGMA(x) _Pragma(#x)
#else
#define VALID_PRAGMA(x)
#endif

/* Everything the per-tile checks read: the shared context of src/valid_tile.h, and what the
 * messages need. */
typedef struct {
    dp_vctx v;
    const mesh_t *m;
    const dp_params *p;
    int cells, nlv;          /* nlv: levels present (max valid level + 1) */
    int complete_below;      /* levels below this one must have every flagged octant refined */
    const uint8_t *flags;    /* octant flags recomputed with the criterion (levels < flag_below) */
    const uint8_t *kids;     /* octants that have a child whose parent link is valid */
    const uint8_t *aux;      /* DP_VAUX_* bits */
    const dp_tidx *gstart;   /* global index of the first tile of each level (a part of a distributed
                                mesh), or NULL */
} vctx;

/* The shared per-tile context of a mesh (flags, kids, aux and complete_below set by the caller). */
static dp_vctx shared_ctx(const mesh_t *m, const dp_params *p)
{
    dp_vctx v;
    memset(&v, 0, sizeof v);
    v.T = mesh_tiles(m);
    for (int f = 0; f < m->nf && f < DP_MAX_FIELDS; ++f) v.field[f] = m->field[f];
    v.n = m->ntiles;
    v.dim = m->dim;
    v.B = m->B;
    v.nf = m->nf;
    v.cells = mesh_cells(m);
    v.max_level = p->max_level;
    v.fill = p->fill;
    for (int a = 0; a < 3; ++a) v.root[a] = m->root[a];
    return v;
}

/* The index a message names: the tile's global canonical index when the mesh is one rank's part. */
static long long global_index(const vctx *c, dp_tidx t)
{
    if (!c->gstart || t < 0 || t >= c->m->ntiles) return (long long)t;
    const int L = c->m->level[t];
    if (L < 0 || L >= c->m->nlevels || t < c->m->level_start[L] || t >= c->m->level_start[L + 1]) return (long long)t;
    return (long long)(c->gstart[L] + (t - c->m->level_start[L]));
}

/* The first failure of tile t (a record of src/valid_tile.h's checks) in words. */
static void fail_text(const vctx *c, dp_tidx t, const dp_vfail *r, char *msg, size_t len)
{
    const mesh_t *m = c->m;
    const dp_params *p = c->p;
    const int32_t *x = m->coord + 3 * t;
    const int L = m->level[t];
    const long long a0 = r->a[0], a1 = r->a[1], a2 = r->a[2];
    int k = snprintf(msg, len, "tile %lld (level %d, coords %d,%d,%d): ", global_index(c, t), L, (int)x[0], (int)x[1],
                     (int)x[2]);
    if (k < 0 || (size_t)k >= len) return;
    msg += k;
    len -= (size_t)k;
    switch (r->code) {
    case DP_VF_LEVEL_RANGE:
        snprintf(msg, len, "level %d out of range 0..%d", (int)a0, DP_MAX_LEVELS - 1);
        break;
    case DP_VF_LEVEL_CAP:
        snprintf(msg, len, "level %d is beyond the cap max_level = %d", (int)a0, p->max_level);
        break;
    case DP_VF_COORDS:
        snprintf(msg, len, "coords outside the level's tile grid %lld x %lld x %lld", (long long)m->root[0] << L,
                 (long long)m->root[1] << L, m->dim == 2 ? 1LL : (long long)m->root[2] << L);
        break;
    case DP_VF_KEY:
        snprintf(msg, len, "key 0x%llx differs from the Morton key 0x%llx of its coords", (unsigned long long)m->key[t],
                 (unsigned long long)a0);
        break;
    case DP_VF_DUP: {
        dp_tidx other = -1;
        for (dp_tidx s = 0; s < t && other < 0; ++s)
            if (m->level[s] == L && !memcmp(m->coord + 3 * s, x, 3 * sizeof *x)) other = s;
        snprintf(msg, len, "duplicate tile: same level and coords as tile %lld", other < 0 ? -1LL : global_index(c, other));
        break;
    }
    case DP_VF_ORDER_LEVEL:
        snprintf(msg, len, "out of canonical order: level %d after level %d (tile %lld)", L, (int)a0,
                 global_index(c, t - 1));
        break;
    case DP_VF_DUP_KEY:
        snprintf(msg, len, "duplicate tile: same level and key 0x%llx as tile %lld", (unsigned long long)m->key[t],
                 global_index(c, t - 1));
        break;
    case DP_VF_ORDER_KEY:
        snprintf(msg, len, "out of canonical order: key 0x%llx not greater than key 0x%llx of tile %lld",
                 (unsigned long long)m->key[t], (unsigned long long)m->key[t - 1], global_index(c, t - 1));
        break;
    case DP_VF_ROOT_PARENT:
        snprintf(msg, len, "root tile has parent %lld (expected -1)", a0);
        break;
    case DP_VF_PARENT_RANGE:
        snprintf(msg, len, "parent index %lld out of range 0..%lld", a0, (long long)m->ntiles - 1);
        break;
    case DP_VF_PARENT_LEVEL:
        snprintf(msg, len, "parent %lld is at level %d, expected level %d", global_index(c, a0), (int)m->level[a0], L - 1);
        break;
    case DP_VF_PARENT_CONTAIN: {
        const int32_t *y = m->coord + 3 * a0;
        snprintf(msg, len, "does not lie inside its parent %lld (level %d, coords %d,%d,%d): coords >> 1 = %d,%d,%d",
                 global_index(c, a0), L - 1, y[0], y[1], y[2], x[0] >> 1, x[1] >> 1, x[2] >> 1);
        break;
    }
    case DP_VF_OCTANT:
        snprintf(msg, len, "lies in octant %d of parent %lld, which the criterion does not flag%s (parent flags 0x%x)",
                 (int)a1, global_index(c, a0), p->balance ? " and 2:1 balance does not need" : "", c->flags[a0]);
        break;
    case DP_VF_FINITE: {
        const int B = p->B, i = (int)a1;
        snprintf(msg, len, "field %s cell %d (%d,%d,%d) is not finite (%g)", m->field_name[a0], i, i % B, (i / B) % B,
                 i / (B * B), m->field[a0][(size_t)t * (size_t)c->cells + (size_t)i]);
        break;
    }
    case DP_VF_CONSERVE: {
        const int dim = m->dim, B = m->B, hb = B / 2, o = dp_tile_octant(x), j = (int)a2;
        const int X = j % hb, Y = (j / hb) % hb, Z = j / (hb * hb);
        double u, avg, rel;
        dp_vconserve_cell(dim, B, m->field[a0] + (size_t)t * (size_t)c->cells,
                          m->field[a0] + (size_t)a1 * (size_t)c->cells, o, j, &u, &avg, &rel);
        snprintf(msg, len, "field %s not conserved: parent tile %lld cell (%d,%d,%d) = %.9g but its %d child "
                 "cells average %.9g (relative error %.3g > tolerance %.0e)",
                 m->field_name[a0], global_index(c, a1), (o & 1) * hb + X, ((o >> 1) & 1) * hb + Y,
                 dim == 3 ? ((o >> 2) & 1) * hb + Z : 0, u, 1 << dim, avg, rel, DP_VALID_CONS_TOL);
        break;
    }
    case DP_VF_INCOMPLETE:
        snprintf(msg, len, "refinement incomplete: octants 0x%x are flagged by the criterion%s but have no child at "
                 "level %d (flags 0x%x, children 0x%x)", (unsigned)a0, p->balance ? " or needed by 2:1 balance" : "",
                 L + 1, c->flags[t], c->kids[t]);
        break;
    case DP_VF_CHILDMASK:
        snprintf(msg, len, "childmask 0x%x but its children are in octants 0x%x", m->childmask[t], c->kids[t]);
        break;
    default:
        snprintf(msg, len, "failed check %d", r->code);
    }
}

/* Phase 2: the checks that concern tile t itself (src/valid_tile.h). Returns the failed checks. */
static int check_tile_self(const vctx *c, dp_tidx t, dp_vfail *vf, double *maxrel)
{
    return dp_vcheck_self(&c->v, t, vf, maxrel);
}

/* Phase 3: the tile's children, as seen from the tile. Returns the number of failed checks. */
static int check_tile_children(const vctx *c, dp_tidx t, dp_vfail *vf)
{
    return dp_vcheck_children(&c->v, t, vf);
}

/* Checksums, chunk by chunk. A chunk is the run of level-L tiles (in array order, among the tiles
 * of [t0, t1) at level L) that share a root: the same key >> (dim * L). bnd[c] is the first tile of
 * chunk c, bnd[n] = t1. */

/* Chunk boundaries of level L in [t0, t1): returns the number of chunks and a malloc'd bnd (n + 1
 * entries), or -1 when out of memory. Two passes: count, then fill. */
static dp_tidx chunk_bounds(const mesh_t *m, int L, dp_tidx t0, dp_tidx t1, dp_tidx **bnd)
{
    dp_tidx n = 0;
    for (int pass = 0; pass < 2; ++pass) {
        n = 0;
        uint64_t prev = 0;
        for (dp_tidx t = t0; t < t1; ++t) {
            if (m->level[t] != L) continue;
            const uint64_t r = dp_root_key(m->dim, m->key[t], L);
            if (n == 0 || r != prev) {
                if (pass) (*bnd)[n] = t;
                ++n;
                prev = r;
            }
        }
        if (pass == 0) {
            *bnd = malloc(((size_t)n + 1) * sizeof **bnd);
            if (!*bnd) return -1;
        }
    }
    (*bnd)[n] = t1;
    return n;
}

/* Field f of one chunk: the tiles' sums and hashes (dp_vtile_field, computed in pass C: ts, th, nf per
 * tile) added tile by tile in array order (dp_vchunk_add). */
static void chunk_field(const mesh_t *m, int L, int f, dp_tidx a, dp_tidx b, const double *ts, const uint64_t *th,
                        double *sum, uint64_t *hash)
{
    const size_t nf = (size_t)m->nf;
    double s = 0.0;
    uint64_t h = DP_FNV_OFFSET;
    for (dp_tidx t = a; t < b; ++t)
        if (m->level[t] == L) dp_vchunk_add(&s, &h, ts[(size_t)t * nf + (size_t)f], th[(size_t)t * nf + (size_t)f]);
    *sum = s;
    *hash = h;
}

/* Tree hash of one chunk: FNV-1a 64 over its tiles' tree hashes (dp_vtile_tree: level, i, j, k and
 * the parent's global index). */
static uint64_t chunk_tree(const vctx *c, int L, dp_tidx a, dp_tidx b, int index_ok)
{
    const mesh_t *m = c->m;
    uint64_t h = DP_FNV_OFFSET;
    for (dp_tidx t = a; t < b; ++t) {
        if (m->level[t] != L) continue;
        int64_t q = m->parent[t];
        if (c->gstart && index_ok && L > 0 && q >= m->level_start[L - 1] && q < m->level_start[L])
            q = c->gstart[L - 1] + (q - m->level_start[L - 1]);
        dp_vchunk_add(NULL, &h, 0.0, dp_vtile_tree(m->level[t], m->coord + 3 * t, q));
    }
    return h;
}

void valid_parts_free(valid_parts_t *parts)
{
    for (int L = 0; L < DP_MAX_LEVELS; ++L) {
        free(parts->chunk[L]);
        parts->chunk[L] = NULL;
        parts->n[L] = 0;
    }
    parts->nlevels = 0;
}

void valid_fold(const valid_parts_t *parts, const dp_params *p, valid_report_t *r)
{
    uint64_t tree = DP_FNV_OFFSET;
    for (int L = 0; L < parts->nlevels; ++L) {
        const double vol = dp_cell_volume(p, L);
        for (int f = 0; f < parts->nf; ++f) {
            double s = 0.0;
            uint64_t h = DP_FNV_OFFSET;
            for (dp_tidx k = 0; k < parts->n[L]; ++k) {
                s += parts->chunk[L][k].sum[f];
                h = dp_fnv_u64(h, parts->chunk[L][k].hash[f], 8);
            }
            /* the volume is the same for every cell of a level: one scaling, one rounding */
            r->sum[L][f] = s * vol;
            r->hash[L][f] = h;
        }
        for (dp_tidx k = 0; k < parts->n[L]; ++k) tree = dp_fnv_u64(tree, parts->chunk[L][k].tree, 8);
    }
    r->tree_hash = tree;
    /* total: FNV-1a 64 over tree_hash, then hash[L][f] level by level, field by field (8 bytes
     * each, little-endian) */
    uint64_t h = dp_fnv_u64(DP_FNV_OFFSET, r->tree_hash, 8);
    for (int L = 0; L < parts->nlevels; ++L)
        for (int f = 0; f < parts->nf; ++f) h = dp_fnv_u64(h, r->hash[L][f], 8);
    r->total_hash = h;
}

/* Phase 1: can the mesh be walked with these parameters at all? Returns the number of failures. */
static int check_global(const mesh_t *m, const dp_params *p, int cells, char *msg, size_t len)
{
    char buf[512];
    int n = 0;
#define GFAIL(...)                                               \
    do {                                                         \
        if (n++ == 0) snprintf(buf, sizeof buf, __VA_ARGS__);     \
    } while (0)
    if (m->dim != 2 && m->dim != 3) GFAIL("mesh dim %d is not 2 or 3", m->dim);
    if (m->dim != p->dim) GFAIL("mesh dim %d differs from the parameters' dim %d", m->dim, p->dim);
    if (m->B != p->B) GFAIL("mesh tile_size %d differs from the parameters' tile_size %d", m->B, p->B);
    if (m->B < 2 || m->B > 1024 || (m->B & (m->B - 1)))
        GFAIL("tile_size %d is not a power of two between 2 and 1024", m->B);
    if (m->nf < 1 || m->nf > DP_MAX_FIELDS) GFAIL("mesh has %d fields, expected 1..%d", m->nf, DP_MAX_FIELDS);
    if (m->nf != p->nf) GFAIL("mesh has %d fields, the parameters %d", m->nf, p->nf);
    if (p->crit_field < 0 || p->crit_field >= p->nf)
        GFAIL("criterion field index %d out of range 0..%d", p->crit_field, p->nf - 1);
    if (p->max_level < 0 || p->max_level >= DP_MAX_LEVELS)
        GFAIL("max_level %d out of range 0..%d", p->max_level, DP_MAX_LEVELS - 1);
    if (!(p->h0 > 0.0) || !isfinite(p->h0)) GFAIL("level-0 spacing h0 = %g is not positive", p->h0);
    for (int a = 0; a < 3; ++a)
        if (m->root[a] < 1) GFAIL("root tile grid %d x %d x %d has an empty axis", m->root[0], m->root[1], m->root[2]);
    if (m->dim == 2 && m->root[2] != 1) GFAIL("2D mesh with root[2] = %d (expected 1)", m->root[2]);
    if (m->ntiles < 0 || m->ntiles > m->cap)
        GFAIL("tile count %lld outside 0..capacity %lld", (long long)m->ntiles, (long long)m->cap);
    if (m->ntiles > 0 && (!m->level || !m->coord || !m->key || !m->parent || !m->childmask))
        GFAIL("tile arrays not allocated");
    for (int f = 0; f < m->nf && f < DP_MAX_FIELDS; ++f)
        if (cells && m->ntiles > 0 && !m->field[f])
            GFAIL("field %d not allocated (the cells of a streamed GPU run are not on the host)", f);
#undef GFAIL
    if (n > 0) snprintf(msg, len, "%s", buf);
    return n;
}

/* Phase 4: the mesh's level index (nlevels, level_start) against the tiles' levels (count per
 * level, nlv levels present, sorted by level) and level 0 against the root grid or the part's roots.
 * Returns the failures; msg gets the first. */
static long long check_index(const mesh_t *m, const valid_opts_t *o, const dp_tidx *count, int nlv, int sorted,
                             char *msg, size_t len)
{
    long long nfail4 = 0;
    const uint64_t roots = mesh_root_tiles(m->root); /* may pass int64: a mesh read from a file */
    if (o->roots < 0 && (count[0] < 0 || (uint64_t)count[0] != roots)) {
        if (nfail4++ == 0)
            snprintf(msg, len, "level 0 has %lld tiles, the root grid %d x %d x %d needs %llu", (long long)count[0],
                     m->root[0], m->root[1], m->root[2], (unsigned long long)roots);
    } else if (o->roots >= 0 && count[0] != o->roots) {
        if (nfail4++ == 0)
            snprintf(msg, len, "level 0 of this part has %lld tiles, the partition gave it %lld roots",
                     (long long)count[0], (long long)o->roots);
    }
    if (m->nlevels != nlv) {
        if (nfail4++ == 0) snprintf(msg, len, "mesh nlevels = %d but its tiles span %d levels", m->nlevels, nlv);
    } else if (sorted) {
        dp_tidx s = 0;
        for (int L = 0; L <= nlv; ++L) {
            if (m->level_start[L] != s) {
                if (nfail4++ == 0)
                    snprintf(msg, len, "level_start[%d] = %lld, the tiles say %lld", L, (long long)m->level_start[L],
                             (long long)s);
                break;
            }
            if (L < nlv) s += count[L];
        }
    }
    return nfail4;
}

int valid_check(const mesh_t *m, const dp_params *p, valid_report_t *r)
{
    return valid_check_mode(m, p, m && m->nlevels > 1, r);
}

int valid_check_mode(const mesh_t *m, const dp_params *p, int complete, valid_report_t *r)
{
    const valid_opts_t o = { .complete = complete, .roots = -1, .gstart = NULL };
    return valid_check_opts(m, p, &o, r);
}

int valid_check_opts(const mesh_t *m, const dp_params *p, const valid_opts_t *o, valid_report_t *r)
{
    valid_parts_t parts;
    valid_check_part(m, p, o, r, &parts);
    valid_fold(&parts, p, r);
    valid_parts_free(&parts);
    return r->passed;
}

int valid_check_part(const mesh_t *m, const dp_params *p, const valid_opts_t *o, valid_report_t *r,
                     valid_parts_t *parts)
{
    memset(r, 0, sizeof *r);
    memset(parts, 0, sizeof *parts);
    r->first_key = VALID_KEY_NONE;
    const valid_opts_t whole = { .complete = 1, .roots = -1, .gstart = NULL };
    if (!o) o = &whole;
    const int complete = o->complete;
    r->conservation_tol = DP_VALID_CONS_TOL;
    if (!m || !p) {
        r->nfail = 1;
        snprintf(r->first_failure, sizeof r->first_failure, "no mesh or no parameters given");
        return 0;
    }
    r->conservation_checked = p->fill == DP_FILL_PROLONG;
    r->nfail = check_global(m, p, 1, r->first_failure, sizeof r->first_failure);
    if (r->nfail > 0) { /* walking the tiles could read out of bounds */
        r->first_key = VALID_KEY(1, 0);
        return 0;
    }
    r->nf = m->nf;
    parts->nf = m->nf;

    const dp_tidx n = m->ntiles;
    vctx c = { .v = shared_ctx(m, p), .m = m, .p = p, .cells = mesh_cells(m), .gstart = o->gstart };
    uint8_t *flags = calloc((size_t)n + 1, 1), *kids = calloc((size_t)n + 1, 1), *aux = calloc((size_t)n + 1, 1);
    uint8_t *need = p->balance != DP_BALANCE_NONE ? malloc(3 * (size_t)n + 3) : NULL; /* 2:1 balance, pass B */
    /* every tile's sum and hash per field (pass C), folded chunk by chunk in pass D */
    double *ts = malloc(((size_t)n * (size_t)m->nf + 1) * sizeof *ts);
    uint64_t *th = malloc(((size_t)n * (size_t)m->nf + 1) * sizeof *th);
    if (!flags || !kids || !aux || (p->balance != DP_BALANCE_NONE && !need) || !ts || !th) {
        free(flags);
        free(kids);
        free(aux);
        free(need);
        free(ts);
        free(th);
        r->nfail = 1;
        r->first_key = VALID_KEY(1, 0);
        snprintf(r->first_failure, sizeof r->first_failure, "out of memory for %lld tiles of scratch", (long long)n);
        return 0;
    }
    c.flags = c.v.flags = flags;
    c.kids = c.v.kids = kids;
    c.aux = c.v.aux = aux;

    /* Pass A: levels present, whether the array is sorted by level, children per parent. A child
     * counts only when its parent link is right, so two such children in one octant are two tiles
     * with the same level and coords: a duplicate. Roots are deduplicated by the order check. */
    dp_tidx count[DP_MAX_LEVELS] = { 0 };
    int sorted = 1, nlv = 0;
    for (dp_tidx t = 0; t < n; ++t) {
        const int L = m->level[t];
        if (L < 0 || L >= DP_MAX_LEVELS) continue;
        ++count[L];
        if (L + 1 > nlv) nlv = L + 1;
        if (t > 0 && L < m->level[t - 1]) sorted = 0;
        if (dp_vparent_ok(&c.v, t)) {
            const uint8_t bit = (uint8_t)(1u << dp_tile_octant(m->coord + 3 * t));
            if (kids[m->parent[t]] & bit) aux[t] |= DP_VAUX_DUP;
            kids[m->parent[t]] |= bit;
        }
    }
    c.nlv = nlv;
    c.complete_below = c.v.complete_below = complete ? p->max_level : nlv - 1;
    r->nlevels = nlv;
    for (int L = 0; L < nlv; ++L) r->tiles[L] = count[L];

    /* Phase 4 (the tree only): the mesh's own level index and the root grid. */
    char msg4[512] = "";
    const long long nfail4 = check_index(m, o, count, nlv, sorted, msg4, sizeof msg4);

    /* Pass D's chunks (the tiles of one level under one root), found level by level from the tree. */
    const int index_ok = sorted && m->nlevels == nlv && nfail4 == 0;
    dp_tidx *bnd[DP_MAX_LEVELS] = { 0 };
    parts->nlevels = nlv;
    int oom = 0;
    for (int L = 0; L < nlv && !oom; ++L) {
        const dp_tidx t0 = index_ok ? m->level_start[L] : 0, t1 = index_ok ? m->level_start[L + 1] : n;
        const dp_tidx nc = chunk_bounds(m, L, t0, t1, &bnd[L]);
        parts->chunk[L] = nc < 0 ? NULL : calloc((size_t)nc + 1, sizeof(valid_chunk_t));
        if (!parts->chunk[L]) oom = 1;
        else parts->n[L] = nc;
    }
    if (oom) parts->nlevels = 0;
    /* one task per (chunk, field) and per chunk's tree hash: every chunk is folded sequentially */
    long long pre[DP_MAX_LEVELS + 1] = { 0 };
    for (int L = 0; L < parts->nlevels; ++L) pre[L + 1] = pre[L] + (long long)parts->n[L] * (m->nf + 1);
    const long long ntask = pre[parts->nlevels];

    /* 2:1 balance (refine, then balance, as p4est): an octant is to be refined when the criterion
     * flags it in a tile the criterion made (a root, or a child in an octant its parent's criterion
     * flags: the tiles balance added are not refined further), or when the balance of the tiles two
     * levels below needs its child (balance_needs, from the tree; sorted levels only: an unsorted
     * array fails the order checks anyway). raw: the criterion's flags, made: made by the criterion. */
    uint8_t *made = need ? need + n : NULL, *raw = need ? need + 2 * n : NULL;
    if (need && sorted && n > 0) {
        dp_tidx start[DP_MAX_LEVELS + 1];
        start[0] = 0;
        for (int L = 0; L < nlv; ++L) start[L + 1] = start[L] + count[L];
        balance_needs(m, start, nlv, need);
    }

    /* Passes B, C and D go over the tiles in blocks, in order; each block's loops are spread over the
     * threads. A block waits for its cells when they are still being read (o->wait: `dpamr check`
     * validates while the file is read). A sorted array holds every parent before its children, so
     * when a block is reached, its tiles' parents are done: B (octant flags of every tile that is or
     * must be a parent: below the finest level, or below max_level for a refinement output), the
     * balance's flags, C (per-tile checks: 2 = the tile itself, which reads its parent's flags and
     * cells, 3 = its children as seen from it, and every tile's sums and hashes) and D (the checksums
     * of every chunk that ends in or before the block, folded from the tiles'). An unsorted array is one block. Counts, minima and maxima combine in any order:
     * the results do not depend on the blocks or the threads. A progress line (o->progress) follows
     * the bytes of cells the passes have covered. */
    const double tile_bytes = (double)c.cells * sizeof(float) * m->nf;
    progress_t pg;
    progress_begin(&pg, o->progress, "validate", 3.0 * (double)n * tile_bytes, NULL);
    const dp_tidx blk = !sorted ? (n > 0 ? n : 1)
                      : o->block > 0            ? o->block
                      : n / 64 > ((dp_tidx)1 << 16) ? n / 64
                                                : ((dp_tidx)1 << 16);
    const int flag_below = c.complete_below > nlv - 1 ? c.complete_below : nlv - 1;
    long long nfail2 = 0, nfail3 = 0;
    dp_tidx first2 = n, first3 = n;
    double maxrel = 0.0;
    long long task_done = 0;
    int lost = 0; /* the cells never came (o->wait) */
    /* While the cells come (o->wait), a block is the tiles in: at least blk_min, at most blk (4
     * blk_min on the threads beside the readers). The passes then follow the read closely (the
     * last cells are validated soon after they are in) and take larger blocks when they fall
     * behind. */
    const dp_tidx blk_min = o->wait && sorted ? (blk / 16 > 0 ? blk / 16 : 1) : blk;
#ifdef _OPENMP
    const int all_threads = omp_get_max_threads();
#else
    const int all_threads = 1;
#endif
    int nthr = all_threads; /* the passes' threads for this block */
    if (o->wait && o->wait_threads > 0 && o->wait_threads < all_threads) {
        /* the threads of the last blocks started now, while the first cells come, not when the last
         * are in (on the H200 the first pass on every thread once took 10.6 ms there, later ones
         * under 1 ms) */
        VALID_PRAGMA(omp parallel num_threads(all_threads))
        {
        }
    }
    for (dp_tidx b = 0, e = 0; b < n && !lost; b = e) {
        e = n - b < blk_min ? n : b + blk_min;
        if (o->wait) {
            const dp_tidx in = o->wait(o->wait_ctx, e);
            /* on the threads beside the readers a block is at most 4 blk_min tiles: when the last
             * cells come in, the block under way ends soon and the rest goes on every thread (a
             * block of 40k tiles there took 13-16 ms on the H200, at the read's end) */
            const dp_tidx cap = o->wait_threads > 0 && in >= 0 && in < n ? 4 * blk_min : blk;
            const dp_tidx most = n - b < cap ? n : b + cap;
            if (in < 0) {
                lost = 1;
                break;
            }
            if (in > e) e = in < most ? in : most;
            nthr = o->wait_threads > 0 && in < n ? o->wait_threads : all_threads;
        }
        VALID_PRAGMA(omp parallel for schedule(dynamic, 64) num_threads(nthr))
        for (dp_tidx t = b; t < e; ++t)
            if (m->level[t] >= 0 && m->level[t] < flag_below && m->level[t] < p->max_level)
                flags[t] = (uint8_t)tile_octant_flags_lazy(p, m, t);
        if (need && sorted)
            for (dp_tidx t = b; t < e; ++t) {
                const dp_tidx q = m->parent[t];
                raw[t] = flags[t];
                made[t] = m->level[t] == 0 || (dp_vparent_ok(&c.v, t) && q < t && made[q] &&
                                               (raw[q] >> dp_tile_octant(m->coord + 3 * t) & 1));
                flags[t] = (uint8_t)((made[t] ? raw[t] : 0) | need[t]);
            }
        /* C over groups of DP_VTILE_GROUP tiles: each tile's checks, then the group's sums and
         * hashes (pass D's part per tile) at once, while its cells are in cache */
        const dp_tidx ngroups = (e - b + DP_VTILE_GROUP - 1) / DP_VTILE_GROUP;
        VALID_PRAGMA(omp parallel for schedule(dynamic, 16) num_threads(nthr) reduction(+ : nfail2, nfail3) \
                     reduction(min : first2, first3) reduction(max : maxrel))
        for (dp_tidx g = 0; g < ngroups; ++g) {
            const dp_tidx g0 = b + g * DP_VTILE_GROUP, g1 = e - g0 < DP_VTILE_GROUP ? e : g0 + DP_VTILE_GROUP;
            for (dp_tidx t = g0; t < g1; ++t) {
                dp_vfail f2 = { 0 }, f3 = { 0 };
                double mr = 0.0;
                const int k2 = check_tile_self(&c, t, &f2, &mr), k3 = check_tile_children(&c, t, &f3);
                if (mr > maxrel) maxrel = mr;
                if (k2) {
                    nfail2 += k2;
                    if (t < first2) first2 = t;
                }
                if (k3) {
                    nfail3 += k3;
                    if (t < first3) first3 = t;
                }
            }
            const size_t nf = (size_t)m->nf, cells = (size_t)c.cells;
            for (size_t f = 0; f < nf; ++f) {
                if (g1 - g0 == DP_VTILE_GROUP) {
                    dp_vtile_field4(m->field[f] + (size_t)g0 * cells, c.cells, &ts[(size_t)g0 * nf + f], &th[(size_t)g0 * nf + f], nf);
                    continue;
                }
                for (dp_tidx t = g0; t < g1; ++t)
                    dp_vtile_field(m->field[f] + (size_t)t * cells, c.cells, &ts[(size_t)t * nf + f], &th[(size_t)t * nf + f]);
            }
        }
        /* D: the tasks whose chunks end by e (all of them once every tile is in; with a damaged
         * level index a chunk's tiles are found over the whole array) */
        long long task_end = task_done;
        while (task_end < ntask) {
            int L = 0;
            while (task_end >= pre[L + 1]) ++L;
            const dp_tidx k = (dp_tidx)((task_end - pre[L]) / (m->nf + 1));
            if (e < n && (!index_ok || bnd[L][k + 1] > e)) break;
            ++task_end;
        }
        VALID_PRAGMA(omp parallel for schedule(dynamic, 4) num_threads(nthr))
        for (long long task = task_done; task < task_end; ++task) {
            int L = 0;
            while (task >= pre[L + 1]) ++L;
            const dp_tidx k = (dp_tidx)((task - pre[L]) / (m->nf + 1));
            const int f = (int)((task - pre[L]) % (m->nf + 1));
            valid_chunk_t *ch = &parts->chunk[L][k];
            if (f == m->nf) ch->tree = chunk_tree(&c, L, bnd[L][k], bnd[L][k + 1], index_ok);
            else chunk_field(m, L, f, bnd[L][k], bnd[L][k + 1], ts, th, &ch->sum[f], &ch->hash[f]);
        }
        task_done = task_end;
        progress_update(&pg, 3.0 * (double)e * tile_bytes);
    }
    free(need);
    free(ts);
    free(th);
    for (int L = 0; L < DP_MAX_LEVELS; ++L) free(bnd[L]);
    r->conservation_max_rel = r->conservation_checked ? maxrel : 0.0;
    r->nfail += nfail2 + nfail3 + nfail4;

    /* The first failure in words: earliest phase, lowest tile, re-checked with messages on. */
    if (lost) {
        ++r->nfail;
        snprintf(r->first_failure, sizeof r->first_failure, "the cells could not all be read");
        r->first_key = VALID_KEY(1, 0);
    } else if (first2 < n || first3 < n) {
        dp_vfail f = { 0 };
        double mr = 0.0;
        if (first2 < n)
            check_tile_self(&c, first2, &f, &mr);
        else
            check_tile_children(&c, first3, &f);
        fail_text(&c, first2 < n ? first2 : first3, &f, r->first_failure, sizeof r->first_failure);
        r->first_key = first2 < n ? VALID_KEY(2, global_index(&c, first2)) : VALID_KEY(3, global_index(&c, first3));
    } else if (nfail4 > 0) {
        snprintf(r->first_failure, sizeof r->first_failure, "%s", msg4);
        r->first_key = VALID_KEY(4, 0);
    }
    if (oom && r->nfail++ == 0) {
        snprintf(r->first_failure, sizeof r->first_failure, "out of memory for the checksum chunks");
        r->first_key = VALID_KEY(5, 0);
    }
    if (r->nfail == 0 && ntask > 0) progress_end(&pg);
    else progress_fail(&pg); /* a failure's report follows; a done line would hide nothing */

    free(flags);
    free(kids);
    free(aux);
    r->passed = r->nfail == 0;
    return r->passed;
}

void valid_print(const valid_report_t *r, const mesh_t *m)
{
    const long long cells = m ? (long long)mesh_cells(m) : 0;
    for (int L = 0; L < r->nlevels; ++L) {
        printf("  level %2d: %10lld tiles %13lld cells", L, (long long)r->tiles[L], (long long)r->tiles[L] * cells);
        for (int f = 0; f < r->nf; ++f)
            printf("  %s sum=%.17g hash=%016llx", m ? m->field_name[f] : "?", r->sum[L][f],
                   (unsigned long long)r->hash[L][f]);
        printf("\n");
    }
    if (r->conservation_checked)
        printf("  conservation: max relative error %.3g per parent cell (tolerance %.0e)\n", r->conservation_max_rel,
               r->conservation_tol);
    else
        printf("  conservation: not checked (children filled from the model)\n");
    printf("  tree hash %016llx  total hash %016llx\n", (unsigned long long)r->tree_hash,
           (unsigned long long)r->total_hash);
    if (r->passed)
        printf("validation: PASSED\n");
    else
        printf("validation: FAILED (%lld checks): %s\n", r->nfail, r->first_failure);
    fflush(stdout);
}

int valid_device_suffices(const mesh_t *m, const dp_params *p, const valid_opts_t *o, const dp_vdev *g)
{
    const valid_opts_t whole = { .complete = 1, .roots = -1, .gstart = NULL };
    if (!o) o = &whole;
    /* the device's passes know nothing of 2:1 balance (gpu_refine_valid does not start them): checked on the CPU */
    if (!g || !g->ran || !m || !p || p->balance != DP_BALANCE_NONE || g->ntiles != m->ntiles || g->nfail > 0 || g->dup ||
        g->unsorted || g->nlv < 1 || g->nlv > DP_MAX_LEVELS)
        return 0;
    char msg[512];
    if (check_global(m, p, 0, msg, sizeof msg) > 0 || check_index(m, o, g->count, g->nlv, 1, msg, sizeof msg) > 0)
        return 0;
    for (int L = 0; L < g->nlv; ++L)
        if (g->nchunks[L] > 0 && !g->chunk[L]) return 0;
    return 1;
}

int valid_check_device(const mesh_t *m, const dp_params *p, const valid_opts_t *o, const dp_vdev *g,
                       valid_report_t *r, valid_parts_t *parts, int *by_cpu)
{
    const valid_opts_t whole = { .complete = 1, .roots = -1, .gstart = NULL };
    if (!o) o = &whole;
    *by_cpu = 1;
    /* the CPU validator reports whatever the device did not pass: any failure is described there */
    if (!valid_device_suffices(m, p, o, g)) return valid_check_part(m, p, o, r, parts);

    /* everything passed: the report valid_check_part gives a passing mesh */
    memset(r, 0, sizeof *r);
    memset(parts, 0, sizeof *parts);
    r->first_key = VALID_KEY_NONE;
    r->conservation_tol = DP_VALID_CONS_TOL;
    r->conservation_checked = p->fill == DP_FILL_PROLONG;
    r->conservation_max_rel = r->conservation_checked ? g->maxrel : 0.0;
    r->nf = parts->nf = m->nf;
    r->nlevels = parts->nlevels = g->nlv;
    for (int L = 0; L < g->nlv; ++L) r->tiles[L] = g->count[L];
    /* the device hashed the tree with the part's own parent indices: right when they are global */
    int local = 1;
    for (int L = 0; o->gstart && L < g->nlv; ++L)
        if (o->gstart[L] != m->level_start[L]) local = 0;
    int oom = 0;
    dp_tidx *bnd[DP_MAX_LEVELS] = { 0 };
    for (int L = 0; L < g->nlv && !oom; ++L) {
        parts->chunk[L] = malloc(((size_t)g->nchunks[L] + 1) * sizeof(valid_chunk_t));
        if (!parts->chunk[L]) {
            oom = 1;
            break;
        }
        parts->n[L] = g->nchunks[L];
        if (g->nchunks[L]) memcpy(parts->chunk[L], g->chunk[L], (size_t)g->nchunks[L] * sizeof(valid_chunk_t));
        if (!local && chunk_bounds(m, L, m->level_start[L], m->level_start[L + 1], &bnd[L]) != g->nchunks[L]) oom = 1;
    }
    if (!oom && !local) {
        const vctx c = { .v = shared_ctx(m, p), .m = m, .p = p, .cells = mesh_cells(m), .gstart = o->gstart };
        long long pre[DP_MAX_LEVELS + 1] = { 0 };
        for (int L = 0; L < g->nlv; ++L) pre[L + 1] = pre[L] + parts->n[L];
        const long long nt = pre[g->nlv];
        VALID_PRAGMA(omp parallel for schedule(dynamic, 4))
        for (long long task = 0; task < nt; ++task) {
            int L = 0;
            while (task >= pre[L + 1]) ++L;
            const dp_tidx k = (dp_tidx)(task - pre[L]);
            parts->chunk[L][k].tree = chunk_tree(&c, L, bnd[L][k], bnd[L][k + 1], 1);
        }
    }
    for (int L = 0; L < DP_MAX_LEVELS; ++L) free(bnd[L]);
    if (oom) { /* the CPU validator says it in its words */
        valid_parts_free(parts);
        return valid_check_part(m, p, o, r, parts);
    }
    r->passed = 1;
    *by_cpu = 0;
    return 1;
}
