/* mesh.h - the tile hierarchy in memory (see docs/design.md, "Data model"). */
#ifndef DPAMR_MESH_H
#define DPAMR_MESH_H

#include <stddef.h>
#include <stdint.h>
#include "src/core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DP_NAME_LEN 64

/** The per-tile metadata arrays, the one list every allocation, copy, transfer and comparison
 *  goes through: X(name, element type, elements per tile). The field arrays (one per field, cells
 *  per tile each) come after them. mesh_t and the GPU tile store declare their arrays from it. */
#define DP_TILE_ARRAYS(X)                                                                          \
    X(level, int32_t, 1)     /* refinement level */                                               \
    X(coord, int32_t, 3)     /* i, j, k at its level */                                           \
    X(key, uint64_t, 1)      /* Morton key */                                                     \
    X(parent, int64_t, 1)    /* canonical index of the parent, -1 for roots */                    \
    X(childmask, uint8_t, 1) /* bit o set when octant o has a child */
/** Declares one array of DP_TILE_ARRAYS as a struct member. */
#define DP_TILE_ARRAY_MEMBER(name, type, n) type *name;
#define DP_TILE_ARRAY_BYTES(name, type, n) +sizeof(type) * (n)
/** Bytes of metadata per tile (33): the sum over DP_TILE_ARRAYS. */
#define DP_TILE_META_BYTES ((size_t)(0 DP_TILE_ARRAYS(DP_TILE_ARRAY_BYTES)))

/** The tile arrays of a store (mesh_t on the host, the GPU tile store), for the per-tile functions
 *  that write tiles on host and device alike. */
typedef struct {
    DP_TILE_ARRAYS(DP_TILE_ARRAY_MEMBER)
} dp_tiles;

/** The metadata of tile t: `level`, coordinates c, their Morton key, `parent` (-1 for a root) and no
 *  children yet. Roots (engine_make_level0) and children (dp_write_child) are written with it. */
static inline DP_HD void dp_write_tile(dp_tiles T, int dim, dp_tidx t, int level, const int32_t *c, dp_tidx parent)
{
    T.level[t] = level;
    T.coord[3 * t] = c[0];
    T.coord[3 * t + 1] = c[1];
    T.coord[3 * t + 2] = c[2];
    T.key[t] = dp_morton(dim, c[0], c[1], c[2]);
    T.parent[t] = parent;
    T.childmask[t] = 0;
}

/** The metadata of new tile t at `level`: the child in octant o of tile par. Every engine creates
 *  its children with it: the CPU engine and both GPU engines (device/gpu_common.cuh); the cells are
 *  filled separately (dp_fill_cell). */
static inline DP_HD void dp_write_child(dp_tiles T, int dim, dp_tidx t, int level, dp_tidx par, int o)
{
    const int32_t pc[3] = { T.coord[3 * par], T.coord[3 * par + 1], T.coord[3 * par + 2] };
    int32_t cc[3];
    dp_child_coord(pc, o, cc);
    dp_write_tile(T, dim, t, level, cc, par);
}

/** Does tile q contain tile t as its parent: q one level above t, and t's coordinates halved are
 *  q's? (The tree check of validation and of the loader; indices must be in range.) */
static inline DP_HD int dp_parent_contains(dp_tiles T, dp_tidx q, dp_tidx t)
{
    if (T.level[q] != T.level[t] - 1) return 0;
    for (int a = 0; a < 3; ++a)
        if ((T.coord[3 * t + a] >> 1) != T.coord[3 * q + a]) return 0;
    return 1;
}

/** A tile hierarchy in canonical order (level, then Morton key). Arrays hold `cap` tiles. */
typedef struct {
    int dim, B, nf;
    int root[3];            /* root tile grid (root[2] == 1 in 2D) */
    double origin[3];
    double h0;              /* level-0 cell spacing */
    char field_name[DP_MAX_FIELDS][DP_NAME_LEN];
    dp_tidx ntiles, cap;
    int nlevels;                              /* levels 0..nlevels-1 are present */
    dp_tidx level_start[DP_MAX_LEVELS + 1];   /* level L: [level_start[L], level_start[L+1]) */
    DP_TILE_ARRAYS(DP_TILE_ARRAY_MEMBER) /* [cap * elements per tile] each */
    float *field[DP_MAX_FIELDS];          /* [cap * cells] each */
} mesh_t;

/** Cells per tile. */
static inline int mesh_cells(const mesh_t *m) { return dp_cells(m->dim, m->B); }

/** Tiles of the root grid, root[0] x root[1] x root[2], as uint64_t without overflow: UINT64_MAX
 *  when the product passes it, 0 when an extent is below 1. Not in int64: a file's header may give
 *  2^21 root tiles per axis in 3D (the Morton key's range), and 2^63 is one more than int64 holds:
 *  the reader compares level 0's tile count with this before anything else trusts the root. */
static inline uint64_t mesh_root_tiles(const int root[3])
{
    uint64_t n = 1;
    for (int a = 0; a < 3; ++a) {
        if (root[a] < 1) return 0;
        if (n > UINT64_MAX / (uint64_t)root[a]) return UINT64_MAX;
        n *= (uint64_t)root[a];
    }
    return n;
}

/** The mesh's tile arrays, for dp_write_tile and dp_write_child. */
static inline dp_tiles mesh_tiles(const mesh_t *m)
{
    dp_tiles T;
#define DP_TILE_ARRAY_TAKE(name, type, n) T.name = m->name;
    DP_TILE_ARRAYS(DP_TILE_ARRAY_TAKE)
#undef DP_TILE_ARRAY_TAKE
    return T;
}

/** Bytes the arrays of cap tiles take (mesh_alloc): per tile level, coord, key, parent, childmask
 *  and nf fields of dp_cells(dim, B) float32 values. */
double mesh_bytes(double cap, int dim, int B, int nf);
/** Does an allocation of `bytes` fit this machine? 0 when it does; -1 when it is larger than the
 *  host's physical memory, with "X GB asked, the machine has Y GB (Z GB free)" in why. */
int mesh_fits_memory(double bytes, char *why, size_t n);

/** Allocate arrays for cap tiles (contents zeroed). Returns 0 on success, -1 when out of memory. */
int mesh_alloc(mesh_t *m, dp_tidx cap);
/** mesh_alloc without clearing, for a caller that writes every value before reading it (the file
 *  loader: the reads are then the first to touch the pages, not a serial memset). */
int mesh_alloc_unset(mesh_t *m, dp_tidx cap);
/** m's large arrays (8 huge pages or more) asked to be transparent huge pages (madvise
 *  MADV_HUGEPAGE on their 2 MiB-aligned parts; in the kernel's usual `madvise` mode nothing is huge
 *  unless asked): a fault then maps and zeroes 2 MiB instead of 4 KiB, and freeing them releases
 *  512 times fewer pages. For arrays about to be filled at once (`dpamr check`: its release of
 *  bench2d's cells went from 18-21 to 4-7 ms on the H200, docs/results.md "Session 19"). Only
 *  advice: where the kernel has none to give, pages stay small. */
void mesh_huge_pages(mesh_t *m);
/** Grow the arrays to at least cap tiles, keeping contents. Returns 0 or -1. */
int mesh_reserve(mesh_t *m, dp_tidx cap);
/** mesh_reserve without clearing the new tiles, for a caller that writes every one of them (the GPU
 *  download: its pages are then first touched by its parallel copy, not by a serial memset). */
int mesh_reserve_unset(mesh_t *m, dp_tidx cap);
/** A mesh without its cells on the host (a GPU run's streamed write: the cells go from the device
 *  to the file): free the field arrays (NULL), then grow the tile arrays alone to cap tiles,
 *  uninitialised. 0 or -1 (out of memory). mesh_fields_alloc gives the fields back. */
int mesh_drop_fields(mesh_t *m, dp_tidx cap);
/** Allocate (uninitialised) every field array that is NULL, for m->cap tiles. 0 or -1. */
int mesh_fields_alloc(mesh_t *m);
void mesh_free(mesh_t *m);
/** Recompute nlevels and level_start from level[] (tiles must be in canonical order). */
void mesh_index_levels(mesh_t *m);
/** Copy k tiles (every array of DP_TILE_ARRAYS and every field) from src tile s on to dst tile at,
 *  as they are (parent indices unchanged). dst must hold at + k tiles; the ranges may overlap
 *  (dst == src moves tiles within a mesh). */
void mesh_copy_tiles(mesh_t *dst, dp_tidx at, const mesh_t *src, dp_tidx s, dp_tidx k);
/** Deep copy of src into dst (allocated here). 0 or -1. */
int mesh_copy(mesh_t *dst, const mesh_t *src);
/** 1 when a and b hold the same tiles and the same field bits; else 0 and the first difference. */
int mesh_equal(const mesh_t *a, const mesh_t *b, char *why, size_t n);
/** Recompute childmask[] from parent[] and coord[]. */
void mesh_index_children(mesh_t *m);

#ifdef __cplusplus
}
#endif
#endif
