/* balance.h - 2:1 balance of a tile tree (deck key balance = 2:1; docs/design.md, "Balance").
 *
 * A tile X at level L >= 2 with coordinates c is balanced when every tile (L - 1, (c + d) >> 1),
 * d in {-1, 0, 1}^dim, c + d inside the level's tile grid, exists: whatever touches X across a face,
 * an edge or a corner is covered at level L - 1 or finer (p4est's full balance). d = 0 is X's own
 * parent, so the tiles a level needs include its parents. */
#ifndef DPAMR_BALANCE_H
#define DPAMR_BALANCE_H

#include "src/mesh.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The octants that 2:1 balance needs refined, per tile: need[P] bit o is set when some tile two
 *  levels below P needs P's child in octant o. start[0..nlv] are the level ranges of m (canonical
 *  order); tiles whose coordinates lie outside their level are skipped and every index is checked,
 *  so a damaged mesh (validation) gives wrong bits, never a crash. need[] (m->ntiles) is cleared
 *  here. */
void balance_needs(const mesh_t *m, const dp_tidx *start, int nlv, uint8_t *need);

/** What balance_close did. */
typedef struct {
    long long added;    /* tiles added (new cells: prolonged or sampled) */
    long long from_old; /* of those, tiles found in `old` whose cells were taken from there */
} balance_report_t;

/** Add to m the tiles 2:1 balance needs (after the criterion's refinement, as p4est balances a
 *  refined forest: the tiles added are not refined by the criterion), finest level first (a tile
 *  added at level L - 1 may need others at L - 2), then place them in canonical order, with parents
 *  and childmasks, and fill them coarsest first: with the cells of the same tile in `old` when it has one (a regrid: the
 *  tile was there before this step), else as a new child (tile_fill: prolonged from the parent or
 *  sampled from the model). cap > 0 limits the tiles. Returns 0, or -1 with err (m unchanged). */
int balance_close(const dp_params *p, mesh_t *m, const mesh_t *old, long long cap, balance_report_t *r, char *err,
                  size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
