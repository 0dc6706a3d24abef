/* tile.c - per-tile functions of the core layer (tile.h): octant flags, fill. */
#include "src/tile.h"

#include <assert.h>

/* Tile t's cells of the criterion field. */
static const float *crit_cells(const dp_params *p, const mesh_t *m, dp_tidx t)
{
    return m->field[p->crit_field] + (size_t)t * dp_cells(p->dim, p->B);
}

/* One function per way of calling dp_tile_flags, each with one copy of the loop: gcc compiles the
 * copies of a function that holds several into more instructions per cell (3% in the flag loop). */
unsigned tile_octant_flags(const dp_params *p, const mesh_t *m, dp_tidx t)
{
    return dp_tile_flags(p, crit_cells(p, m, t), dp_spacing(p, m->level[t]), 0, 1, 0, NULL);
}

unsigned tile_octant_flags_lazy(const dp_params *p, const mesh_t *m, dp_tidx t)
{
    return dp_tile_flags(p, crit_cells(p, m, t), dp_spacing(p, m->level[t]), 0, 1, 1, NULL);
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
        /* by bricks: the 2^dim cells over one parent cell of the octant, field by field */
        const int hb = B / 2, nZ = p->dim == 3 ? hb : 1, ns = 1 << p->dim;
        for (int f = 0; f < nf; ++f) {
            const float *up = m->field[f] + (size_t)parent * cells;
            for (int Z = 0; Z < nZ; ++Z)
                for (int Y = 0; Y < hb; ++Y)
                    for (int X = 0; X < hb; ++X) {
                        float v[8];
                        dp_prolong_brick(p->dim, B, up, octant, X, Y, Z, v);
                        for (int s = 0; s < ns; ++s)
                            dst[f][(2 * X + (s & 1)) + B * ((2 * Y + (s >> 1 & 1)) + B * (2 * Z + (s >> 2 & 1)))] = v[s];
                    }
        }
        return;
    }
    /* the model through the tile's table of axis terms */
    double T[DP_MAX_OBJECTS * 3 * 32];
    const double h = dp_spacing(p, level);
    const int nt = dp_model_table_size(p);
    assert(nt <= (int)(sizeof T / sizeof T[0]));
    for (int e = 0; e < nt; ++e) T[e] = dp_model_table_entry(p, c, h, e);
    for (int z = 0; z < nz; ++z)
        for (int y = 0; y < B; ++y)
            for (int x = 0; x < B; ++x) {
                float v[DP_MAX_FIELDS];
                dp_model_cells_tab(p, T, x, y, z, v);
                for (int f = 0; f < nf; ++f) dst[f][x + B * (y + B * z)] = v[f];
            }
}

void tile_restrict(const dp_params *p, mesh_t *m, dp_tidx child, dp_tidx parent)
{
    const int B = p->B, hb = B >> 1, dim = p->dim, cells = dp_cells(dim, B), nz = dim == 3 ? hb : 1;
    const int o = dp_tile_octant(m->coord + 3 * child);
    const int ox = (o & 1) * hb, oy = ((o >> 1) & 1) * hb, oz = ((o >> 2) & 1) * hb;
    assert(parent >= 0 && parent < child);
    for (int f = 0; f < p->nf; ++f) {
        const float *u = m->field[f] + (size_t)child * cells;
        float *up = m->field[f] + (size_t)parent * cells;
        for (int Z = 0; Z < nz; ++Z)
            for (int Y = 0; Y < hb; ++Y)
                for (int X = 0; X < hb; ++X)
                    up[(ox + X) + B * ((oy + Y) + B * (dim == 3 ? oz + Z : 0))] = dp_restrict_cell(dim, B, u, X, Y, Z);
    }
}

void tile_leaf_sum(const dp_params *p, const mesh_t *m, dp_tidx t, int f, double sum[2])
{
    const int B = p->B, cells = dp_cells(p->dim, B), lb = dp_log2(B);
    const unsigned kids = m->childmask[t];
    const float *u = m->field[f] + (size_t)t * cells;
    double s = 0.0, a = 0.0;
    for (int i = 0; i < cells; ++i) {
        int x, y, z;
        dp_cell_xyz(i, B, lb, &x, &y, &z);
        if (kids >> dp_octant_of(B, x, y, z) & 1u) continue;
        s += (double)u[i];
        a += u[i] < 0.0f ? -(double)u[i] : (double)u[i];
    }
    sum[0] = s;
    sum[1] = a;
}
