/* tile.c - per-tile functions of the core layer (tile.h): octant flags, fill. */
#include "tile.h"

#include <assert.h>

unsigned tile_octant_flags(const dp_params *p, const mesh_t *m, dp_tidx t)
{
    const float *u = m->field[p->crit_field] + (size_t)t * dp_cells(p->dim, p->B);
    return dp_tile_flags(p, u, dp_spacing(p, m->level[t]), 0, 1);
}

void tile_fill(const dp_params *p, mesh_t *m, dp_tidx t, dp_tidx parent, int octant)
{
    const int B = p->B, cells = dp_cells(p->dim, B), nz = p->dim == 3 ? B : 1;
    const int32_t *c = m->coord + 3 * t;
    const int prolong = p->fill == DP_FILL_PROLONG && parent >= 0;
    assert(parent < t); /* parents come first in canonical order: their cells are final */
    for (int z = 0; z < nz; ++z)
        for (int y = 0; y < B; ++y)
            for (int x = 0; x < B; ++x) {
                const size_t i = (size_t)t * cells + (size_t)(x + B * (y + B * z));
                float v[DP_MAX_FIELDS];
                if (prolong)
                    for (int f = 0; f < p->nf; ++f)
                        v[f] = dp_prolong(p->dim, B, m->field[f] + (size_t)parent * cells, octant, x, y, z);
                else
                    dp_model_cells(p, m->level[t], c[0], c[1], c[2], x, y, z, v);
                for (int f = 0; f < p->nf; ++f) m->field[f][i] = v[f];
            }
}
