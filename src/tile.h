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

/** Octant flags of tile t (bit o set when octant o has a flagged cell): dp_tile_flags over the
 *  tile's criterion field, every cell evaluated (the engines). */
unsigned tile_octant_flags(const dp_params *p, const mesh_t *m, dp_tidx t);
/** The same flags from dp_tile_flags' lazy walk: an octant's other cells are skipped once it is
 *  flagged (validation). */
unsigned tile_octant_flags_lazy(const dp_params *p, const mesh_t *m, dp_tidx t);
/** The number of tile t's cells the criterion flags (the partition's weights). */
int tile_flagged_cells(const dp_params *p, const mesh_t *m, dp_tidx t);

#ifdef __cplusplus
}
#endif
#endif
