/* tile.h - per-tile functions of the core layer on a mesh_t, built on the DP_HD functions of core.h
 * that the GPU kernels call too: a tile's octant flags (the CPU engine, validation) and flagged
 * cells (the partition), and the fill of a new tile (the CPU engine, level 0). (The tile store's
 * capacity: capacity.h.) */
#ifndef DPAMR_TILE_H
#define DPAMR_TILE_H

#include "src/deck.h"
#include "src/mesh.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Fill one new tile's cells (fields of tile t, coordinates set) with dp_fill_cell: from octant
 *  `octant` of its parent (fill = prolong), or from the model (fill = model, or parent < 0). */
void tile_fill(const dp_params *p, mesh_t *m, dp_tidx t, dp_tidx parent, int octant);

/** Octant flags of tile t (bit o set when octant o has a flagged cell): dp_tile_row_flags over
 *  the tile's criterion field, every cell evaluated (the engines). */
unsigned tile_octant_flags(const dp_params *p, const mesh_t *m, dp_tidx t);
/** The same flags from dp_tile_row_flags' lazy walk: a row whose octants are flagged is skipped
 *  (validation). */
unsigned tile_octant_flags_lazy(const dp_params *p, const mesh_t *m, dp_tidx t);
/** The number of tile t's cells the criterion flags (the partition's weights). */
int tile_flagged_cells(const dp_params *p, const mesh_t *m, dp_tidx t);

/** Restrict child tile `child` into its parent: the parent's cells in the child's octant become the
 *  mean of the child cells covering them (dp_restrict_cell), every field. Children of one parent
 *  write disjoint octants, so the children of a level can be restricted in parallel (the regrid
 *  restricts level by level from the finest, so a child holds its own children's means first). */
void tile_restrict(const dp_params *p, mesh_t *m, dp_tidx child, dp_tidx parent);

/** The composite sum of field f over tile t: its cells in the octants without a child (childmask),
 *  summed in cell order, as sum[0] (values) and sum[1] (absolute values); times the cell volume of
 *  the tile's level it is the tile's share of the field's total over the domain. */
void tile_leaf_sum(const dp_params *p, const mesh_t *m, dp_tidx t, int f, double sum[2]);

/** One field's composite total from its per-tile sums ts[2 t] (values) and ts[2 t + 1] (absolute
 *  values), tiles of level L at [level_start[L], level_start[L + 1]): added per level in canonical
 *  order, times the level's cell volume, levels in order. regrid_totals (src/regrid_cpu.c) and the GPU regrids (which
 *  compute the per-tile sums on the device with the same dp_leaf_sum) fold with it, to the same bits. */
void regrid_fold(const dp_params *p, const dp_tidx *level_start, int nlevels, const double *ts, double *sum, double *abs);

/** The largest relative change of a field's total, |after - before| / max(abs_before, abs_after),
 *  over the fields into *rel (0 where both are 0). */
void regrid_conservation(const dp_params *p, const double *before, const double *abs_before, const double *after,
                         const double *abs_after, double *rel);

#ifdef __cplusplus
}
#endif
#endif
