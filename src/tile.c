/* tile.c - per-tile functions of the core layer (tile.h): octant flags, fill. */
#include "src/tile.h"

#include <assert.h>

/* Tile t's cells of the criterion field. */
static const float *crit_cells(const dp_params *p, const mesh_t *m, dp_tidx t)
{
    return m->field[p->crit_field] + (size_t)t * dp_cells(p->dim, p->B);
}

/* The flags row by row (dp_tile_row_flags, vectorized), every cell or lazily; the count of flagged
 * cells with dp_tile_flags. One function per way of calling, each with one copy of the loop. */
unsigned tile_octant_flags(const dp_params *p, const mesh_t *m, dp_tidx t)
{
    return dp_tile_row_flags(p, crit_cells(p, m, t), dp_spacing(p, m->level[t]), 0);
}

unsigned tile_octant_flags_lazy(const dp_params *p, const mesh_t *m, dp_tidx t)
{
    return dp_tile_row_flags(p, crit_cells(p, m, t), dp_spacing(p, m->level[t]), 1);
}

int tile_flagged_cells(const dp_params *p, const mesh_t *m, dp_tidx t)
{
    int n = 0;
    dp_tile_flags(p, crit_cells(p, m, t), dp_spacing(p, m->level[t]), 0, 1, 0, &n);
    return n;
}

void tile_fill(const dp_params *p, mesh_t *m, dp_tidx t, dp_tidx parent, int octant)
{
    const int B = p->B, cells = dp_cells(p->dim, B), nz = p->dim == 3 ? B : 1, nf = p->nf, level = m->level[t];
    const int32_t *c = m->coord + 3 * t;
    float *dst[DP_MAX_FIELDS];
    assert(parent < t); /* parents come first in canonical order: their cells are final */
    for (int f = 0; f < nf; ++f) dst[f] = m->field[f] + (size_t)t * cells;
    if (p->fill == DP_FILL_PROLONG && parent >= 0) {
        /* by rows of bricks: the child cells over one parent row of the octant, field by field */
        const int hb = B / 2, nZ = p->dim == 3 ? hb : 1;
        for (int f = 0; f < nf; ++f) {
            const float *up = m->field[f] + (size_t)parent * cells;
            for (int Z = 0; Z < nZ; ++Z)
                for (int Y = 0; Y < hb; ++Y) dp_prolong_row(p->dim, B, up, octant, Y, Z, dst[f]);
        }
        return;
    }
    /* the model through the tile's table of axis terms */
    double T[DP_MAX_OBJECTS * 3 * 32];
    const double h = dp_spacing(p, level);
    assert(dp_model_table_size(p) <= (int)(sizeof T / sizeof T[0]));
    dp_model_table(p, c, h, T);
    for (int z = 0; z < nz; ++z)
        for (int y = 0; y < B; ++y) dp_model_row(p, T, 0, B, y, z, dst, (size_t)B * (y + B * z));
}

void tile_restrict(const dp_params *p, mesh_t *m, dp_tidx child, dp_tidx parent)
{
    const int B = p->B, hb = B >> 1, dim = p->dim, cells = dp_cells(dim, B), nz = dim == 3 ? hb : 1;
    const int o = dp_tile_octant(m->coord + 3 * child);
    assert(parent >= 0 && parent < child);
    for (int f = 0; f < p->nf; ++f) {
        const float *u = m->field[f] + (size_t)child * cells;
        float *up = m->field[f] + (size_t)parent * cells;
        for (int Z = 0; Z < nz; ++Z)
            for (int Y = 0; Y < hb; ++Y)
                for (int X = 0; X < hb; ++X) dp_restrict_into(dim, B, o, u, up, X, Y, Z);
    }
}

void tile_leaf_sum(const dp_params *p, const mesh_t *m, dp_tidx t, int f, double sum[2])
{
    dp_leaf_sum(p->dim, p->B, m->childmask[t], m->field[f] + (size_t)t * dp_cells(p->dim, p->B), sum);
}

void regrid_fold(const dp_params *p, const dp_tidx *level_start, int nlevels, const double *ts, double *sum, double *abs)
{
    double s = 0.0, a = 0.0;
    for (int L = 0; L < nlevels; ++L) {
        double ls = 0.0, la = 0.0;
        const double vol = dp_cell_volume(p, L);
        for (dp_tidx t = level_start[L]; t < level_start[L + 1]; ++t) {
            ls += ts[2 * t];
            la += ts[2 * t + 1];
        }
        s += ls * vol;
        a += la * vol;
    }
    *sum = s;
    *abs = a;
}

void regrid_conservation(const dp_params *p, const double *before, const double *abs_before, const double *after,
                        const double *abs_after, double *rel)
{
    *rel = 0.0;
    for (int f = 0; f < p->nf; ++f) {
        const double den = abs_before[f] > abs_after[f] ? abs_before[f] : abs_after[f];
        const double dv = after[f] - before[f], e = dv < 0 ? -dv : dv;
        const double r = den > 0 ? e / den : 0.0;
        if (r > *rel) *rel = r;
    }
}
