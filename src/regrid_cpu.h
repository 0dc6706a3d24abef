/* regrid_cpu.h - the regrid of a time step on the CPU (layer 1, dpamr_cpu): the host driver over the
 * per-tile functions of src/tile.c and src/core.h that a GPU engine runs over compacted lists. */
#ifndef DPAMR_REGRID_CPU_H
#define DPAMR_REGRID_CPU_H

#include <stddef.h>
#include "src/deck.h"
#include "src/mesh.h"
#include "src/regrid.h"

/** Regrid m (canonical, complete to max_level) to time t = step x dt: sample, restrict (prolong),
 *  flag top-down, keep, add and drop children; m is replaced by the new hierarchy in canonical
 *  order. spare: NULL, or arrays the caller keeps between regrids (zeroed before the first): the
 *  new hierarchy is built in them (grown when short) and m's old arrays go there for the next
 *  regrid, so a sequence of regrids allocates (and the kernel zeroes the pages of) two stores, not
 *  one per step. 0, or -1 with err (m unchanged in structure then, its cells resampled). */
int regrid_cpu(const deck_t *d, mesh_t *m, mesh_t *spare, double t, regrid_report_t *r, char *err, size_t errlen);

/** The composite totals of every field (sum of value x cell volume over the cells without a child)
 *  into sum[f] and their absolute values into abs[f]: per-tile sums (tile_leaf_sum) added in
 *  canonical order, so the value does not depend on the thread count. */
int regrid_totals(const dp_params *p, const mesh_t *m, double *sum, double *abs);

#endif
