/* tile.h - per-tile functions of the core layer, used by every engine: a tile's octant flags and the
 * fill of a new tile. (The tile store's capacity: capacity.h.) */
#ifndef DPAMR_TILE_H
#define DPAMR_TILE_H

#include "deck.h"
#include "mesh.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Fill one new tile's cells (fields of tile t) from its parent (prolong) or the model. */
void tile_fill(const dp_params *p, mesh_t *m, dp_tidx t, dp_tidx parent, int octant);

/** Octant flags of tile t (bit o set when octant o has a flagged cell). */
unsigned tile_octant_flags(const dp_params *p, const mesh_t *m, dp_tidx t);

#ifdef __cplusplus
}
#endif
#endif
