/* partition.h - root tiles split along the Morton curve, and the parts such a split makes.
 *
 * Root tiles are level 0 of a mesh in canonical (Morton) order. A rank owns a contiguous range of
 * roots and every tile that descends from them. Because a child's key is its parent's key shifted
 * left by dim bits plus the octant, the descendants of a contiguous root range form one contiguous
 * index range on every level, and the parts of ranks 0..N-1 concatenated level by level are the
 * whole mesh in canonical order. These functions need no MPI; src/dist.c moves the parts. */
#ifndef DPAMR_PARTITION_H
#define DPAMR_PARTITION_H

#include <stdint.h>
#include "src/mesh.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Work estimate of each root tile (w[0..roots-1], level-0 order): 1 + per tile of its subtree on
 *  the finest level Lf (the frontier the engines refine), 1 + (cells the criterion flags there) x
 *  (max_level - Lf). Flagged cells mark the features the refinement follows down to max_level;
 *  they predict the subtree better than the 0..2^dim flagged octants do. */
void part_weights(const dp_params *p, const mesh_t *m, int64_t *w);

/** Split roots [0, n) into nranks contiguous ranges: rank r owns [first[r], first[r+1]).
 *  A root goes to the rank whose equal share of the total weight holds the root's weight midpoint,
 *  so ranks differ by at most one root's weight from an even split; ranks may be empty. */
void part_split(const int64_t *w, dp_tidx n, int nranks, dp_tidx *first);

/** Per-level index ranges [lo[L], hi[L]) of m (L < m->nlevels) holding the descendants of roots
 *  [r0, r1). Binary search on the keys: O(levels log tiles). */
void part_ranges(const mesh_t *m, dp_tidx r0, dp_tidx r1, dp_tidx *lo, dp_tidx *hi);

/** A new mesh (allocated here, header copied from m) with the tiles of the ranges, parents renumbered
 *  to the part. Levels that are empty at the end are dropped. 0, or -1 when out of memory. */
int part_extract(const mesh_t *m, const dp_tidx *lo, const dp_tidx *hi, mesh_t *out);

/** Copy part into g: level L of the part goes to g's indices gstart[L].., parents renumbered from the
 *  part's to g's (gstart[L-1] + local offset). g must hold every index written. */
void part_place(mesh_t *g, const mesh_t *part, const dp_tidx *gstart);

/** 1 when a part must be refined: it holds tiles on the global frontier (level global_nlevels - 1).
 *  A part without them has nothing to refine; its finest level is not the frontier. */
int part_has_frontier(const mesh_t *part, int global_nlevels);

/** p4est-style balance by count: the global leaf range [*lo, *hi) rank r would own if the leaves
 *  (tiles without children, canonical order) were split evenly among nranks. */
void part_leaf_range(int64_t nleaves, int nranks, int r, int64_t *lo, int64_t *hi);

/** Leaves of m: tiles whose childmask is 0. */
int64_t part_count_leaves(const mesh_t *m);

#ifdef __cplusplus
}
#endif
#endif
