/* core.h - numerics shared by the CPU reference engine and the CUDA kernels.
 *
 * Everything here is a static inline function usable on host and device (DP_HD), so the variants
 * cannot drift apart: criterion, the octant-flag loop of a tile, prolongation, model evaluation,
 * the fill of a cell, Morton keys and a tile's octant in its parent (the child metadata writer,
 * dp_write_child, is in mesh.h beside the tile arrays it writes).
 * Bit-identical results also need the same rounding: host code is compiled with -ffp-contract=off
 * and device code with -fmad=false (see CMakeLists.txt), and nothing here calls a libm function
 * whose last bit may differ between glibc and CUDA (exp is computed by dp_exp below).
 */
#ifndef DPAMR_CORE_H
#define DPAMR_CORE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#define DP_HD __host__ __device__
/* Loops over the DP_MAX_FIELDS slots (guarded by f < nf) are unrolled on the device, so every
 * per-field value sits in a register: a loop to a run-time bound would index a local-memory array. */
#define DP_UNROLL _Pragma("unroll")
#else
#define DP_HD
#define DP_UNROLL
#endif

/* for (f = 0; f < nf; ++f) with a body that handles one field: on the device over the
 * DP_MAX_FIELDS slots, unrolled and guarded by f < nf (as DP_UNROLL above), on the host to nf
 * (unrolling the guarded slots there makes the CPU's cell loops slower). DP_FOR_FIELDS_SHORT is
 * the same loop for a body of a few instructions: it leaves at the first slot past nf (a uniform
 * branch), where the guard makes the compiler predicate every slot: in the model fill the unused
 * slots' instructions were a quarter of all (bench3d, Nsight Compute). For long bodies the guard
 * is a branch already, and the early exit costs registers. */
#ifdef __CUDA_ARCH__
#define DP_FOR_FIELDS(f, nf) DP_UNROLL for (int f = 0; f < DP_MAX_FIELDS; ++f) if (f < (nf))
#define DP_FOR_FIELDS_SHORT(f, nf) DP_UNROLL for (int f = 0; f < DP_MAX_FIELDS; ++f) if (f >= (nf)) break; else
#else
#define DP_FOR_FIELDS(f, nf) for (int f = 0; f < (nf); ++f)
#define DP_FOR_FIELDS_SHORT(f, nf) for (int f = 0; f < (nf); ++f)
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define DP_MAX_FIELDS 8
#define DP_MAX_OBJECTS 16
#define DP_MAX_LEVELS 24 /* levels 0..DP_MAX_LEVELS-1 */
#define DP_ROW_MAX 32    /* the longest tile edge (tile_size, deck.c): dp_row_flags, dp_model_row */

typedef int64_t dp_tidx; /* tile index or count: can pass 2^31 */

enum { DP_CRIT_JUMP = 0, DP_CRIT_GRADIENT = 1 };
enum { DP_FILL_PROLONG = 0, DP_FILL_MODEL = 1 };
enum { DP_BALANCE_NONE = 0, DP_BALANCE_2TO1 = 1 };
enum { DP_OBJ_ELLIPSOID = 0, DP_OBJ_BOX = 1, DP_OBJ_GAUSSIAN = 2 };

/* One analytic object of the model (see docs/design.md). */
typedef struct {
    int kind;
    double center[3];
    double radius[3]; /* semi-axes (ellipsoid, gaussian width) or half-widths (box) */
    double velocity[3]; /* centre moves by velocity * t (time steps; 0: fixed) */
    double inside[DP_MAX_FIELDS];
    double outside[DP_MAX_FIELDS];
} dp_object;

/* Everything a kernel needs to know about the refinement: plain data, copied to the device. */
typedef struct {
    int dim, B, nf;
    int max_level;
    int fill;           /* DP_FILL_* */
    int crit;           /* DP_CRIT_* */
    int crit_field;     /* index of the field the criterion reads */
    int balance;        /* DP_BALANCE_*: 2:1 across faces, edges and corners (src/balance.c) */
    float threshold_f;  /* threshold as float (jump) */
    double threshold;   /* threshold as double (gradient) */
    double origin[3];
    double h0;          /* level-0 cell spacing */
    int nobj;
    dp_object obj[DP_MAX_OBJECTS];
} dp_params;

/* ---- Morton keys ------------------------------------------------------------------------- */

/* Spread the low 32 bits of v so bit b lands at bit 2b. */
static inline DP_HD uint64_t dp_spread2(uint64_t v)
{
    v &= 0xffffffffull;
    v = (v | (v << 16)) & 0x0000ffff0000ffffull;
    v = (v | (v << 8)) & 0x00ff00ff00ff00ffull;
    v = (v | (v << 4)) & 0x0f0f0f0f0f0f0f0full;
    v = (v | (v << 2)) & 0x3333333333333333ull;
    v = (v | (v << 1)) & 0x5555555555555555ull;
    return v;
}

/* Spread the low 21 bits of v so bit b lands at bit 3b. */
static inline DP_HD uint64_t dp_spread3(uint64_t v)
{
    v &= 0x1fffffull;
    v = (v | (v << 32)) & 0x1f00000000ffffull;
    v = (v | (v << 16)) & 0x1f0000ff0000ffull;
    v = (v | (v << 8)) & 0x100f00f00f00f00full;
    v = (v | (v << 4)) & 0x10c30c30c30c30c3ull;
    v = (v | (v << 2)) & 0x1249249249249249ull;
    return v;
}

/* Morton key of tile coordinates (x lowest bit). 2D: 32 bits per axis, 3D: 21 bits per axis. */
static inline DP_HD uint64_t dp_morton(int dim, int32_t i, int32_t j, int32_t k)
{
    if (dim == 2)
        return dp_spread2((uint32_t)i) | (dp_spread2((uint32_t)j) << 1);
    return dp_spread3((uint32_t)i) | (dp_spread3((uint32_t)j) << 1) | (dp_spread3((uint32_t)k) << 2);
}

/** The coordinates of a Morton key (dp_morton inverted, bit by bit); c[2] = 0 in 2D. */
static inline DP_HD void dp_morton_decode(int dim, uint64_t key, int32_t c[3])
{
    c[0] = c[1] = c[2] = 0;
    for (int b = 0; b < 63 / dim; ++b)
        for (int a = 0; a < dim; ++a) c[a] |= (int32_t)((key >> (b * dim + a)) & 1u) << b;
}

/** Key of the root tile a level-`level` tile descends from: a child's key is its parent's shifted
 *  left by dim bits plus the octant, so the level's refinements are the low dim * level bits. */
static inline DP_HD uint64_t dp_root_key(int dim, uint64_t key, int level)
{
    const int s = dim * level;
    return s >= 64 ? 0 : key >> s;
}

/* ---- criterion --------------------------------------------------------------------------- */

static inline DP_HD int dp_cells(int dim, int B) { return dim == 3 ? B * B * B : B * B; }

/* log2 of a power of two (tile_size is one: the deck checks it), for cell coordinates by shifts. */
static inline DP_HD int dp_log2(int v)
{
#ifdef __CUDA_ARCH__
    return __ffs(v) - 1;
#else
    return __builtin_ctz((unsigned)v);
#endif
}

/* Coordinates (x,y,z) of cell i of a tile of edge B = 2^lb, x fastest (z = 0 in 2D). */
static inline DP_HD void dp_cell_xyz(int i, int B, int lb, int *x, int *y, int *z)
{
    *x = i & (B - 1);
    *y = (i >> lb) & (B - 1);
    *z = i >> (2 * lb);
}

/* A jump dj = |uc - un| (fabsf: never -0) folded into a cell's running maximum jmax, which starts at
 * +0 and so is never NaN or -0: a NaN jump leaves it as it is. The CPU's select is maxps; the GPU's
 * fmaxf is one FMNMX (it too returns the number of a number and a NaN), the same bits for every such
 * pair (tests/test_core.c), where the select took a comparison and a select. */
static inline DP_HD float dp_jump_fold(float dj, float jmax)
{
#ifdef __CUDA_ARCH__
    return fmaxf(jmax, dj);
#else
    return dj > jmax ? dj : jmax;
#endif
}

/* One neighbour's jump |uc - un| folded into the running maximum. fabsf, not a select on the sign:
 * the GPU takes it as an operand modifier, the CPU as a mask (andps). It differs from a select on the
 * sign only in the sign of a zero or a NaN, which no comparison with the limit sees: the same flags
 * (tests/test_core.c, ref_flag_cell). */
static inline DP_HD float dp_jump_max(float uc, float un, float jmax) { return dp_jump_fold(fabsf(uc - un), jmax); }

/* The criterion's limit at spacing h as a float: a cell whose largest jump to a neighbour is jmax
 * refines when jmax > dp_flag_limit(p, h) (dp_jump_flagged_at), computed once per tile or row. For
 * criterion = jump the deck's threshold_f; for gradient the largest float F <= threshold * h (the
 * double product rounded down): for every float j, j > F exactly when (double)j > threshold * h,
 * NaN, infinities and F beyond the float range included (tests/test_core.c), so the test is a float
 * comparison, not a conversion and a double one per cell. */
static inline DP_HD float dp_flag_limit(const dp_params *p, double h)
{
    if (p->crit == DP_CRIT_JUMP) return p->threshold_f;
    const double L = p->threshold * h;
    float f = (float)L;
    if ((double)f > L) f = nextafterf(f, -INFINITY);
    return f;
}

/* Does a cell whose largest jump to a neighbour is jmax refine, at the limit lim of dp_flag_limit? The
 * criterion's test, the one copy every flag loop shares. */
static inline DP_HD int dp_jump_flagged_at(float jmax, float lim) { return jmax > lim; }

/* Is cell (x,y,z) of tile data u (B^dim cells, x fastest) flagged? Reads only the tile's cells:
 * the largest jump to a face neighbour inside the tile, neighbours in the order -x +x -y +y -z +z. */
static inline DP_HD int dp_flag_cell_at(const dp_params *p, const float *u, int x, int y, int z, float lim)
{
    const int B = p->B;
    const int c = x + B * (y + B * z);
    const float uc = u[c];
    float jmax = 0.0f;
    if (x > 0) jmax = dp_jump_max(uc, u[c - 1], jmax);
    if (x < B - 1) jmax = dp_jump_max(uc, u[c + 1], jmax);
    if (y > 0) jmax = dp_jump_max(uc, u[c - B], jmax);
    if (y < B - 1) jmax = dp_jump_max(uc, u[c + B], jmax);
    if (p->dim == 3) {
        if (z > 0) jmax = dp_jump_max(uc, u[c - B * B], jmax);
        if (z < B - 1) jmax = dp_jump_max(uc, u[c + B * B], jmax);
    }
    return dp_jump_flagged_at(jmax, lim);
}

/* The same at spacing h (the per-cell reference; the loops take the limit once). */
static inline DP_HD int dp_flag_cell(const dp_params *p, const float *u, int x, int y, int z, double h)
{
    return dp_flag_cell_at(p, u, x, y, z, dp_flag_limit(p, h));
}

/* Octant of a cell: bit a set when the cell lies in the upper half on axis a. */
static inline DP_HD int dp_octant_of(int B, int x, int y, int z)
{
    const int hb = B >> 1;
    return (x >= hb) | ((y >= hb) << 1) | ((z >= hb) << 2);
}

/* Cell spacing at a level: h0 / 2^level, exact. */
static inline DP_HD double dp_spacing(const dp_params *p, int level)
{
    double h = p->h0;
    for (int l = 0; l < level; ++l) h *= 0.5;
    return h;
}

/* A cell's volume (area in 2D) at a level: h^dim, multiplied out in that order (the conservation
 * total of validation and of the regrid weigh each level's sum by it). */
static inline DP_HD double dp_cell_volume(const dp_params *p, int level)
{
    const double h = dp_spacing(p, level);
    double vol = 1.0;
    for (int a = 0; a < p->dim; ++a) vol *= h;
    return vol;
}

/* The octant-flag loop of one tile, the one copy that every engine, validation and the partition
 * run: cells first, first + stride, ... of the tile whose criterion field is u (cells of a tile at
 * spacing h); bit o of the result is set when a flagged cell lies in octant o. The CPU calls it with
 * (0, 1); a GPU warp with (lane, 32) and a block with (threadIdx.x, blockDim.x), then OR-reduce.
 * lazy: a cell whose octant is already flagged is not evaluated, and the loop ends once every
 * octant is (the same flags from fewer evaluations; validation uses it). nflagged, when not NULL,
 * gets the number of flagged cells among those evaluated (all of them when not lazy). */
static inline DP_HD unsigned dp_tile_flags(const dp_params *p, const float *u, double h, int first, int stride,
                                           int lazy, int *nflagged)
{
    const int B = p->B, cells = dp_cells(p->dim, B), lb = dp_log2(B);
    const unsigned all = (1u << (1 << p->dim)) - 1u; /* 2^dim octants */
    const float lim = dp_flag_limit(p, h);
    unsigned mask = 0;
    int n = 0;
    for (int i = first; i < cells; i += stride) {
        int x, y, z;
        dp_cell_xyz(i, B, lb, &x, &y, &z);
        if (lazy && (mask >> dp_octant_of(B, x, y, z) & 1u)) continue;
        if (dp_flag_cell_at(p, u, x, y, z, lim)) {
            mask |= 1u << dp_octant_of(B, x, y, z);
            ++n;
            if (lazy && mask == all) break;
        }
    }
    if (nflagged) *nflagged = n;
    return mask;
}

/* The -x +x part of the fold of dp_flag_cell for n consecutive cells c[0..n) of a row: jm[i] starts
 * from its jump to the cell before it, then its jump to the cell after; left and right are the first
 * cell's jump to the cell before the n and the last one's to the cell after (0 at the tile's border).
 * A jump between two of the cells is taken once, for both: |a - b| and |b - a| are the same float.
 * The one copy dp_row_flags and dp_seg_flags share. */
static inline DP_HD void dp_fold_x(const float *c, int n, float left, float right, float *jm)
{
    float dx[DP_ROW_MAX + 1];
    dx[0] = left;
    for (int i = 1; i < n; ++i) dx[i] = fabsf(c[i] - c[i - 1]);
    dx[n] = right;
    for (int i = 0; i < n; ++i) jm[i] = dp_jump_fold(dx[i + 1], dp_jump_fold(dx[i], 0.0f));
}

/* The segments of dp_seg_flags: DP_SEG_FLAGS cells of a row, x0 a multiple of it. */
#define DP_SEG_FLAGS 4

/* c[0..n) from r[0..n). On the GPU a segment (n == DP_SEG_FLAGS, a constant once inlined) is one
 * 16-byte load: a segment starts at a multiple of 4 cells of a tile whose cells start 16-byte aligned
 * (a tile holds a multiple of 16 cells; shared memory and the device store are 16-byte aligned). */
static inline DP_HD void dp_load_cells(const float *r, float *c, int n)
{
#ifdef __CUDA_ARCH__
    if (n == DP_SEG_FLAGS) {
        const float4 v = *(const float4 *)r;
        c[0] = v.x, c[1] = v.y, c[2] = v.z, c[3] = v.w;
        return;
    }
#endif
    for (int i = 0; i < n; ++i) c[i] = r[i];
}

/* One neighbour row's jumps folded into jm: jm[i] takes |c[i] - nb[i]|, i < n (on the GPU a segment's
 * neighbours by one 16-byte load, dp_load_cells). */
static inline DP_HD void dp_fold_nb(const float *c, const float *nb, float *jm, int n)
{
    float v[DP_SEG_FLAGS];
    if (n == DP_SEG_FLAGS) { /* a segment: its neighbours by dp_load_cells (one 16-byte load on the GPU) */
        dp_load_cells(nb, v, DP_SEG_FLAGS);
        nb = v;
    }
    for (int i = 0; i < n; ++i) jm[i] = dp_jump_max(c[i], nb[i], jm[i]);
}

/* The -y +y -z +z part of the fold of dp_flag_cell for n consecutive cells of row (y, z): r points at
 * the first of them in the tile's data, c holds their values (r itself, or a copy in registers), jm
 * their largest jumps so far (the x neighbours'). The one copy dp_row_flags and dp_seg_flags share. */
static inline DP_HD void dp_fold_yz(const dp_params *p, const float *r, const float *c, float *jm, int n, int y,
                                    int z)
{
    const int B = p->B;
    if (y > 0) dp_fold_nb(c, r - B, jm, n);
    if (y < B - 1) dp_fold_nb(c, r + B, jm, n);
    if (p->dim == 3) {
        if (z > 0) dp_fold_nb(c, r - B * B, jm, n);
        if (z < B - 1) dp_fold_nb(c, r + B * B, jm, n);
    }
}

/* dp_tile_flags(p, u, h, 0, 1, 0, NULL) one row at a time: the octant flags of the cells of row
 * (y, z) of the tile (bit o as there: the row lies in the octants (y >= B/2) << 1 | (z >= B/2) << 2,
 * plus 1 for x >= B/2). Every cell's largest jump is folded from the same neighbours in the same
 * order as dp_flag_cell (-x +x -y +y -z +z), row-wide, so the same values and the same flags
 * (tests/test_core.c); the loops over the row have no branch per cell, so the CPU runs them in
 * vector registers. The CPU's flag loop (dp_tile_row_flags); the GPU's warps and blocks, and the
 * partition's count, call dp_tile_flags. */
static inline DP_HD unsigned dp_row_flags(const dp_params *p, const float *u, int y, int z, double h)
{
    const int B = p->B, hb = B >> 1;
    const float *r = u + B * (y + B * z);
    float jm[DP_ROW_MAX];
    dp_fold_x(r, B, 0.0f, 0.0f, jm);
    dp_fold_yz(p, r, r, jm, B, y, z);
    const float lim = dp_flag_limit(p, h);
    int lo = 0, hi = 0;
    for (int x = 0; x < hb; ++x) lo |= dp_jump_flagged_at(jm[x], lim);
    for (int x = hb; x < B; ++x) hi |= dp_jump_flagged_at(jm[x], lim);
    const int o = ((y >= hb) << 1) | ((z >= hb) << 2);
    return ((unsigned)lo << o) | ((unsigned)hi << (o | 1));
}

/* dp_row_flags for the DP_SEG_FLAGS cells (x0 + i, y, z), i < DP_SEG_FLAGS, of a row (x0 a multiple
 * of it; tile_size >= 4), at the limit lim of dp_flag_limit: each cell's largest jump folded from the
 * same neighbours in the same order as dp_flag_cell (-x +x -y +y -z +z), so the same flags
 * (tests/test_core.c); the segment's cells are read once for their own jumps and their neighbours'.
 * The GPU's flag loop (block_flag_pass): a thread per segment, not per cell. */
static inline DP_HD unsigned dp_seg_flags(const dp_params *p, const float *u, int x0, int y, int z, float lim)
{
    const int B = p->B, hb = B >> 1;
    const float *r = u + B * (y + B * z) + x0;
    float c[DP_SEG_FLAGS], jm[DP_SEG_FLAGS];
    dp_load_cells(r, c, DP_SEG_FLAGS);
    dp_fold_x(c, DP_SEG_FLAGS, x0 > 0 ? fabsf(c[0] - r[-1]) : 0.0f,
              x0 + DP_SEG_FLAGS < B ? fabsf(c[DP_SEG_FLAGS - 1] - r[DP_SEG_FLAGS]) : 0.0f, jm);
    dp_fold_yz(p, r, c, jm, DP_SEG_FLAGS, y, z);
    /* a pair of cells (x0 + i, x0 + i + 1), i even, lies in one half of the row: B/2 is even */
    const int o = ((y >= hb) << 1) | ((z >= hb) << 2);
    unsigned mask = 0;
    for (int i = 0; i < DP_SEG_FLAGS; i += 2)
        mask |= (unsigned)(dp_jump_flagged_at(jm[i], lim) | dp_jump_flagged_at(jm[i + 1], lim)) << (o | (x0 + i >= hb));
    return mask;
}

/* A tile's octant flags by segments of a row (dp_seg_flags) at the limit lim: segments first,
 * first + stride, ... (the GPU's lanes of a warp, threads of a block), OR-ed; over every first in
 * [0, stride) the flags of dp_tile_flags (tests/test_core.c). */
static inline DP_HD unsigned dp_tile_seg_flags(const dp_params *p, const float *u, float lim, int first, int stride)
{
    const int B = p->B, lb = dp_log2(B), nseg = dp_cells(p->dim, B) / DP_SEG_FLAGS;
    unsigned mask = 0;
    for (int sg = first; sg < nseg; sg += stride) {
        int x, y, z;
        dp_cell_xyz(sg * DP_SEG_FLAGS, B, lb, &x, &y, &z);
        mask |= dp_seg_flags(p, u, x, y, z, lim);
    }
    return mask;
}

/* A tile's octant flags row by row (dp_row_flags): the flags of dp_tile_flags(p, u, h, 0, 1, lazy,
 * NULL). lazy: a row whose octants are all flagged already is skipped, and the walk ends once
 * every octant is (validation). The CPU's flag loop (tile_octant_flags, tile_octant_flags_lazy). */
static inline DP_HD unsigned dp_tile_row_flags(const dp_params *p, const float *u, double h, int lazy)
{
    const int B = p->B, hb = B >> 1, nz = p->dim == 3 ? B : 1;
    const unsigned all = (1u << (1 << p->dim)) - 1u;
    unsigned mask = 0;
    for (int z = 0; z < nz; ++z)
        for (int y = 0; y < B; ++y) {
            if (lazy) {
                const unsigned row = 3u << (((y >= hb) << 1) | ((z >= hb) << 2)); /* the row's two octants */
                if ((mask & row) == row) continue;
            }
            mask |= dp_row_flags(p, u, y, z, h);
            if (lazy && mask == all) return mask;
        }
    return mask;
}

/* ---- prolongation ------------------------------------------------------------------------ */

static inline DP_HD float dp_minmod(float a, float b)
{
    const float lo = a < b ? a : b, hi = a > b ? a : b;
    const float pos = a > 0.0f ? (b > 0.0f ? lo : 0.0f) : 0.0f;
    return a < 0.0f ? (b < 0.0f ? hi : 0.0f) : pos;
}

/* Limited slope of parent tile data u at parent cell pc along stride s (coordinate q on that axis).
 * Zero on the tile border: the criterion and the prolongation read only the tile's own cells. */
static inline DP_HD float dp_slope(const float *u, int pc, int s, int q, int B)
{
    if (q == 0 || q == B - 1) return 0.0f;
    return dp_minmod(u[pc + s] - u[pc], u[pc] - u[pc - s]);
}

/* Value of child cell (x,y,z) of the child in octant o, from parent tile data u.
 * Conservative: the 2^dim children of a parent cell average back to it to round-off. */
static inline DP_HD float dp_prolong(int dim, int B, const float *u, int o, int x, int y, int z)
{
    const int hb = B >> 1;
    const int px = (o & 1) * hb + (x >> 1);
    const int py = ((o >> 1) & 1) * hb + (y >> 1);
    const int pz = dim == 3 ? ((o >> 2) & 1) * hb + (z >> 1) : 0;
    const int pc = px + B * (py + B * pz);
    const float sx = dp_slope(u, pc, 1, px, B);
    const float sy = dp_slope(u, pc, B, py, B);
    const float qx = (x & 1) ? 0.25f : -0.25f;
    const float qy = (y & 1) ? 0.25f : -0.25f;
    float d = sx * qx + sy * qy;
    if (dim == 3) {
        const float sz = dp_slope(u, pc, B * B, pz, B);
        const float qz = (z & 1) ? 0.25f : -0.25f;
        d = d + sz * qz;
    }
    return u[pc] + d;
}

/* dp_slope from the values: centre c, lower neighbour m, upper neighbour q, where a neighbour past
 * the tile's border is the cell itself (as every caller reads it): then c - m or q - c is +0, or NaN
 * for an infinite or NaN cell, and dp_minmod gives +0, dp_slope's 0 at the border, with no test of
 * the coordinate. */
static inline DP_HD float dp_slope_of(float c, float m, float q) { return dp_minmod(q - c, c - m); }

/* Child s = sx | sy << 1 | sz << 2 of a parent cell of value uc with limited slopes sx, sy (sz in
 * 3D): uc plus each slope times -1/4 or +1/4 (the child's side of the parent cell's centre), added
 * in axis order. The one copy of the bricks' arithmetic (dp_prolong_brick, dp_prolong_row);
 * dp_prolong is its independent per-cell reference. */
static inline DP_HD float dp_prolong_child(int dim, float uc, float sx, float sy, float sz, int s)
{
    float d = sx * ((s & 1) ? 0.25f : -0.25f) + sy * ((s & 2) ? 0.25f : -0.25f);
    if (dim == 3) d = d + sz * ((s & 4) ? 0.25f : -0.25f);
    return uc + d;
}

/* A brick's arithmetic from its values: the 2^dim child cells of a parent cell of value uc whose
 * face neighbours are xm, xp, ym, yp (zm, zp in 3D; a neighbour past the tile's border is uc
 * itself), into out[s] as dp_prolong_brick. Callers that load the values their own way (the GPU's
 * 2D fill loads a pair of bricks with 8-byte loads) compute through this, so the same bits. */
static inline DP_HD void dp_prolong_brick_of(int dim, float uc, float xm, float xp, float ym, float yp, float zm, float zp,
                                             float *out)
{
    const float sx = dp_slope_of(uc, xm, xp);
    const float sy = dp_slope_of(uc, ym, yp);
    const float sz = dim == 3 ? dp_slope_of(uc, zm, zp) : 0.0f;
    DP_UNROLL for (int s = 0; s < 8; ++s) {
        if (s >= (1 << dim)) break;
        out[s] = dp_prolong_child(dim, uc, sx, sy, sz, s);
    }
}

/* The 2^dim child cells (2X+sx, 2Y+sy, 2Z+sz) that cover parent cell (X,Y,Z) of octant o, from
 * parent tile data u, into out[s] with s = sx | sy << 1 | sz << 2: dp_prolong's arithmetic for each,
 * with the parent cell and its face neighbours inside the tile read once, first (a neighbour outside
 * the tile, or on an absent axis, reads as the cell itself: its slope is 0 there). The engines fill
 * by these bricks (on the GPU a thread per pair of bricks in 2D, 16-byte stores, per brick in 3D); dp_prolong is the
 * per-cell reference. */
static inline DP_HD void dp_prolong_brick(int dim, int B, const float *u, int o, int X, int Y, int Z, float *out)
{
    const int hb = B >> 1;
    const int px = (o & 1) * hb + X;
    const int py = ((o >> 1) & 1) * hb + Y;
    const int pz = dim == 3 ? ((o >> 2) & 1) * hb + Z : 0;
    const float *c = u + (px + B * (py + B * pz)); /* the parent cell; its neighbours at offsets from it */
    /* a neighbour past the border is the cell itself, selected by its offset (0), not its value: no
       load waits for the centre's, so a GPU thread issues all of them at once (selecting the value
       made each neighbour's load wait for c[0]: a second round trip to L2 on bench2d's levels) */
    const float uc = c[0];
    const float xm = c[px > 0 ? -1 : 0], xp = c[px < B - 1 ? 1 : 0];
    const float ym = c[py > 0 ? -B : 0], yp = c[py < B - 1 ? B : 0];
    const float zm = c[dim == 3 && pz > 0 ? -B * B : 0], zp = c[dim == 3 && pz < B - 1 ? B * B : 0];
    dp_prolong_brick_of(dim, uc, xm, xp, ym, yp, zm, zp, out);
}

/* dp_prolong_brick for a whole row of parent cells: the child cells over parent row (Y, Z) of
 * octant o (parent cells X = 0 .. B/2 - 1 of the octant), that is child rows 2Y and 2Y + 1 (and
 * 2Z, 2Z + 1 in 3D), written to the child tile's cells dst (B^dim, x fastest). Per cell the brick's
 * arithmetic in its order, so the same bits (tests/test_core.c). The neighbours are read from
 * copies of the rows padded at the tile's border, where the brick reads the cell itself: its
 * slope there is 0 (dp_slope_of), so no load depends on a branch. gcc runs the slope loop (dp_minmod
 * by selects) and the loop writing the children in vector registers. tile_fill's prolong path. */
static inline DP_HD void dp_prolong_row(int dim, int B, const float *u, int o, int Y, int Z, float *dst)
{
    const int hb = B >> 1, px0 = (o & 1) * hb;
    const int py = ((o >> 1) & 1) * hb + Y, pz = dim == 3 ? ((o >> 2) & 1) * hb + Z : 0;
    const float *r = u + B * (py + B * pz);
    /* the octant's part of the parent row with one cell either side (the border cell again past
     * the tile), and the rows beside it (the row itself past the tile: its slope is 0 there) */
    float c[DP_ROW_MAX / 2 + 2], sx[DP_ROW_MAX / 2], sy[DP_ROW_MAX / 2], sz[DP_ROW_MAX / 2];
    c[0] = r[px0 > 0 ? px0 - 1 : 0];
    for (int X = 0; X < hb; ++X) c[X + 1] = r[px0 + X];
    c[hb + 1] = r[px0 + hb < B ? px0 + hb : B - 1];
    const float *ym = py > 0 ? r - B : r, *yp = py < B - 1 ? r + B : r;
    const float *zm = pz > 0 ? r - B * B : r, *zp = dim == 3 && pz < B - 1 ? r + B * B : r;
    for (int X = 0; X < hb; ++X) {
        const float uc = c[X + 1];
        sx[X] = dp_slope_of(uc, c[X], c[X + 2]);
        sy[X] = dp_slope_of(uc, ym[px0 + X], yp[px0 + X]);
        sz[X] = dp_slope_of(uc, zm[px0 + X], zp[px0 + X]); /* 2D: zm and zp are the row itself, so 0 */
    }
    for (int s = 0; s < (1 << dim); s += 2) { /* the child rows: s = sy << 1 | sz << 2 */
        float *out = dst + B * ((2 * Y + (s >> 1 & 1)) + B * (2 * Z + (s >> 2 & 1)));
        for (int X = 0; X < hb; ++X) {
            out[2 * X] = dp_prolong_child(dim, c[X + 1], sx[X], sy[X], sz[X], s);
            out[2 * X + 1] = dp_prolong_child(dim, c[X + 1], sx[X], sy[X], sz[X], s | 1);
        }
    }
}

/* ---- model ------------------------------------------------------------------------------- */

/* exp(x) for x in [-708, 0] from basic IEEE operations only (no libm), so host and device agree to
 * the bit. Cody-Waite reduction x = k ln2 + r, |r| <= ln2/2, degree-13 Taylor polynomial (relative
 * error below 1e-15), then scaling by 2^k built from the exponent bits. No branch: dp_exp and
 * dp_exp_row clamp the argument first. */
static inline DP_HD double dp_exp_core(double x)
{
    const double ln2_hi = 6.93147180369123816490e-01;
    const double ln2_lo = 1.90821492927058770002e-10;
    const double inv_ln2 = 1.44269504088896338700e+00;
    double kf = x * inv_ln2 - 0.5;
    int k = (int)kf; /* truncation toward zero of a non-positive value: round to nearest below */
    kf = (double)k;
    double r = (x - kf * ln2_hi) - kf * ln2_lo;
    double s = 1.0 / 6227020800.0; /* 1/13! */
    s = s * r + 1.0 / 479001600.0;
    s = s * r + 1.0 / 39916800.0;
    s = s * r + 1.0 / 3628800.0;
    s = s * r + 1.0 / 362880.0;
    s = s * r + 1.0 / 40320.0;
    s = s * r + 1.0 / 5040.0;
    s = s * r + 1.0 / 720.0;
    s = s * r + 1.0 / 120.0;
    s = s * r + 1.0 / 24.0;
    s = s * r + 1.0 / 6.0;
    s = s * r + 0.5;
    s = s * r + 1.0;
    s = s * r + 1.0;
    /* 2^k for k in [-1022, 0]; below that the result underflows to 0 (the callers' clamp) */
    union { uint64_t u; double d; } two_k;
    two_k.u = (uint64_t)(k + 1023) << 52;
    return s * two_k.d;
}

/* exp(x) for x <= 0: 0 below -708 (and for NaN: callers pass -|q|), exp(0) = 1 above 0. */
static inline DP_HD double dp_exp(double x)
{
    if (!(x > -708.0)) return 0.0;
    if (x > 0.0) x = 0.0;
    return dp_exp_core(x);
}

/* dp_exp of n values in place, the same bits, with the branches as selects: the argument clamped
 * into dp_exp_core's range first (so no NaN or out-of-range value reaches its conversion to int),
 * the result replaced after, so the loop has no branch and out-of-order cores overlap the
 * polynomials of successive values (the CPU's model tables, dp_model_table). */
static inline void dp_exp_row(double *v, int n)
{
    for (int i = 0; i < n; ++i) {
        const double x = v[i];
        const int in = x > -708.0;
        const double e = dp_exp_core(in ? (x > 0.0 ? 0.0 : x) : 0.0);
        v[i] = in ? e : 0.0;
    }
}

/* Object ob's term on axis a at coordinate xa: |(xa - c_a) / r_a|. */
static inline DP_HD double dp_axis_t(const dp_object *ob, int a, double xa)
{
    const double t = (xa - ob->center[a]) / ob->radius[a];
    return t < 0.0 ? -t : t;
}

/* What object ob's shape needs of coordinate xa on axis a, from its term t: t^2 for an ellipsoid
 * (summed over the axes), t for a box (their maximum), exp(-t^2) for a gaussian (multiplied over
 * the axes: exp(-(t0^2 + t1^2 + t2^2)) is separable, and the product of the axis factors is the
 * gaussian's definition in dpamr). It depends on one coordinate only, so a tile needs B of them per
 * axis and object (dp_model_table), not one per cell: a gaussian costs the model table B x dim
 * exps per tile and each cell two multiplications, not an exp per cell. */
static inline DP_HD double dp_axis_v(const dp_object *ob, int a, double xa)
{
    const double t = dp_axis_t(ob, a, xa);
    if (ob->kind == DP_OBJ_BOX) return t;
    const double q = t * t;
    return ob->kind == DP_OBJ_ELLIPSOID ? q : dp_exp(-q);
}

/* Shape of an object from its axis values v0, v1 (v2 in 3D) of dp_axis_v: 1 inside, 0 outside, a
 * smooth bump for a gaussian. */
static inline DP_HD double dp_shape_v(int dim, int kind, double v0, double v1, double v2)
{
    if (kind == DP_OBJ_ELLIPSOID) {
        double q = v0 + v1;
        if (dim == 3) q = q + v2;
        return q <= 1.0 ? 1.0 : 0.0;
    }
    if (kind == DP_OBJ_BOX) {
        double m = v0 > v1 ? v0 : v1;
        if (dim == 3) m = v2 > m ? v2 : m;
        return m <= 1.0 ? 1.0 : 0.0;
    }
    double g = v0 * v1;
    if (dim == 3) g = g * v2;
    return g;
}

/* Shape of an object at point x. */
static inline DP_HD double dp_shape(int dim, const dp_object *ob, const double *x)
{
    return dp_shape_v(dim, ob->kind, dp_axis_v(ob, 0, x[0]), dp_axis_v(ob, 1, x[1]),
                      dim == 3 ? dp_axis_v(ob, 2, x[2]) : 0.0);
}

/* Coordinate on axis a of the centre of cell x (0..B-1 along a) of a tile at tile coordinate tc,
 * spacing h. */
static inline DP_HD double dp_centre(const dp_params *p, int a, int32_t tc, int x, double h)
{
    return p->origin[a] + ((double)(tc * p->B + x) + 0.5) * h;
}

/* A field's value v with an object's term added: the object's outside value plus (inside - outside)
 * d times its shape sh there. The one copy of the model's sum (dp_model_add, dp_model_row). */
static inline DP_HD double dp_model_term(double v, double outside, double d, double sh) { return v + (outside + d * sh); }

/* Object o's contribution added to the field values v (double, nf of them). */
static inline DP_HD void dp_model_add(const dp_params *p, const dp_object *ob, double sh, double *v)
{
    DP_FOR_FIELDS_SHORT(f, p->nf) v[f] = dp_model_term(v[f], ob->outside[f], ob->inside[f] - ob->outside[f], sh);
}

/* The object moved to time t: centre + velocity * t on every axis (time steps, docs/design.md). The
 * one place an object moves: the time-step driver and every engine's regrid sample the model moved by
 * it, so the centres, and every value sampled from them, agree to the bit. t = step * dt, computed
 * once per step, never accumulated. */
static inline DP_HD void dp_object_at(const dp_object *ob, double t, dp_object *out)
{
    *out = *ob;
    for (int a = 0; a < 3; ++a) out->center[a] = ob->center[a] + ob->velocity[a] * t;
}

/* The model parameters at time t: every object moved by dp_object_at. */
static inline DP_HD void dp_params_at(const dp_params *p, double t, dp_params *out)
{
    *out = *p;
    for (int o = 0; o < p->nobj && o < DP_MAX_OBJECTS; ++o) dp_object_at(&p->obj[o], t, &out->obj[o]);
}

/* Model values of every field at cell (x,y,z) of tile (level, ti, tj, tk), sampled at the cell
 * centre, into out[0..nf-1]. Each object's shape is evaluated once for all fields. The per-cell
 * reference; the engines fill a tile through its dp_model_table (the same values). */
static inline DP_HD void dp_model_cells(const dp_params *p, int level, int32_t ti, int32_t tj, int32_t tk, int x,
                                        int y, int z, float *out)
{
    const double h = dp_spacing(p, level);
    const double pt[3] = { dp_centre(p, 0, ti, x, h), dp_centre(p, 1, tj, y, h), dp_centre(p, 2, tk, z, h) };
    double v[DP_MAX_FIELDS];
    DP_FOR_FIELDS_SHORT(f, p->nf) v[f] = 0.0;
    for (int o = 0; o < p->nobj; ++o) dp_model_add(p, &p->obj[o], dp_shape(p->dim, &p->obj[o], pt), v);
    DP_FOR_FIELDS_SHORT(f, p->nf) out[f] = (float)v[f];
}

/* A tile's model table: dp_model_table_size(p) axis values, entry (o * dim + a) * B + x the value
 * (dp_axis_v) of object o on axis a at the tile's cell coordinate x. Entry e of the tile at coordinates tc and
 * spacing h (threads of a block compute one entry each; the CPU loops). */
static inline DP_HD int dp_model_table_size(const dp_params *p) { return p->nobj * p->dim * p->B; }
/* Entry (o, a, x) of a table: object o, axis a, cell x along it, of a tile whose coordinate on axis a
 * is tca (what the entry needs of the tile). */
static inline DP_HD double dp_model_axis_entry(const dp_params *p, int o, int a, int32_t tca, int x, double h)
{
    return dp_axis_v(&p->obj[o], a, dp_centre(p, a, tca, x, h));
}
/* Entry k of a table as its object o, axis a and cell x: k = (o dim + a) B + x, by shifts and a
 * division by the constant 2 or 3 (lb = log2 B): no division by a run-time value, which costs the
 * GPU some twenty instructions (its fills compute a table's entries one per thread). */
static inline DP_HD void dp_model_entry_index(const dp_params *p, uint32_t k, int lb, int *o, int *a, int *x)
{
    const uint32_t r = k >> lb, q = p->dim == 3 ? r / 3u : r >> 1;
    *o = (int)q;
    *a = (int)(r - q * (uint32_t)p->dim);
    *x = (int)(k & ((1u << lb) - 1u));
}
static inline DP_HD double dp_model_table_entry(const dp_params *p, const int32_t *tc, double h, int e)
{
    const int B = p->B, x = e % B, a = (e / B) % p->dim, o = e / (B * p->dim);
    return dp_model_axis_entry(p, o, a, tc[a], x, h);
}

/* The whole model table of the tile at coordinates tc and spacing h into T, entry e equal to
 * dp_model_table_entry(p, tc, h, e) bit for bit (the same operations per entry: dp_axis_t, then the
 * square, then dp_exp for a gaussian, as dp_axis_v), computed a row of B entries at a time with the
 * object's kind tested once per row: the CPU's form (tile_fill), where one entry at a time spent
 * most of a model fill in the latency of dp_exp's polynomial. */
static inline void dp_model_table(const dp_params *p, const int32_t *tc, double h, double *T)
{
    const int B = p->B, dim = p->dim;
    for (int o = 0; o < p->nobj; ++o) {
        const dp_object *ob = &p->obj[o];
        for (int a = 0; a < dim; ++a) {
            double *v = T + (o * dim + a) * B;
            for (int x = 0; x < B; ++x) v[x] = dp_axis_t(ob, a, dp_centre(p, a, tc[a], x, h));
            if (ob->kind == DP_OBJ_BOX) continue;
            for (int x = 0; x < B; ++x) v[x] = v[x] * v[x];
            if (ob->kind == DP_OBJ_ELLIPSOID) continue;
            for (int x = 0; x < B; ++x) v[x] = -v[x];
            dp_exp_row(v, B);
        }
    }
}

/* dp_model_cells from the tile's model table T: the same arithmetic, no division per cell. */
static inline DP_HD void dp_model_cells_tab(const dp_params *p, const double *T, int x, int y, int z, float *out)
{
    const int B = p->B, dim = p->dim;
    double v[DP_MAX_FIELDS];
    DP_FOR_FIELDS_SHORT(f, p->nf) v[f] = 0.0;
    for (int o = 0; o < p->nobj; ++o) {
        const double *t = T + o * dim * B;
        const double sh = dp_shape_v(dim, p->obj[o].kind, t[x], t[B + y], dim == 3 ? t[2 * B + z] : 0.0);
        dp_model_add(p, &p->obj[o], sh, v);
    }
    DP_FOR_FIELDS_SHORT(f, p->nf) out[f] = (float)v[f];
}

/* The shapes sh[i] = dp_shape_v(dim, kind, t0[i], v1, v2) of n cells of a row (t0: their x axis
 * values), with the kind fixed per loop, so each loop is straight-line code: no branch per cell (the
 * CPU runs them in vector registers, the GPU's segments of DP_SEG cells unroll them). yz (a constant
 * at every call): a box tested as the row's y and z values at most 1, once, then each cell's x value
 * at most 1, one comparison and a select per cell where dp_shape_v takes two maxima, a comparison
 * and a select: the same shape for every value a table holds (the largest of values that are never
 * NaN is at most 1 exactly when each is; tests/test_core.c). The GPU's pair fills take it (bench3d
 * 4% faster on an H100, session 49); regridStep's one-field fill and the cpu's rows do not: with it
 * regridStep's model instances spill 8-40 more bytes, and the regrid of a model deck was 2% slower. */
static inline DP_HD void dp_shape_run(int dim, int kind, const double *t0, int n, double v1, double v2, int yz,
                                      double *sh)
{
    if (kind == DP_OBJ_ELLIPSOID)
        for (int i = 0; i < n; ++i) sh[i] = dp_shape_v(dim, DP_OBJ_ELLIPSOID, t0[i], v1, v2);
    else if (kind == DP_OBJ_BOX && yz) {
        const int in = v1 <= 1.0 && (dim != 3 || v2 <= 1.0);
        for (int i = 0; i < n; ++i) sh[i] = in && t0[i] <= 1.0 ? 1.0 : 0.0;
    } else if (kind == DP_OBJ_BOX)
        for (int i = 0; i < n; ++i) sh[i] = dp_shape_v(dim, DP_OBJ_BOX, t0[i], v1, v2);
    else
        for (int i = 0; i < n; ++i) sh[i] = dp_shape_v(dim, DP_OBJ_GAUSSIAN, t0[i], v1, v2);
}

/* dp_model_cells_tab for the n cells (x0 + i, y, z), i < n <= DP_ROW_MAX, of a row of a tile, into
 * dst[f][at + i]: object by object, the object's shape over the whole row (its y and z axis values
 * and its kind read once), then its term added into every field's row. Per cell the same operations
 * in the same order as dp_model_cells_tab (an object's inside - outside is the same value whether
 * computed once or per cell), so the same bits (tests/test_core.c); the loops over the row have no
 * branch and no dependence between cells, so the CPU runs them in vector registers. tile_fill's
 * model path. */
static inline DP_HD void dp_model_row(const dp_params *p, const double *T, int x0, int n, int y, int z,
                                      float *const *dst, size_t at)
{
    const int B = p->B, dim = p->dim, nf = p->nf;
    double acc[DP_MAX_FIELDS][DP_ROW_MAX], sh[DP_ROW_MAX];
    for (int f = 0; f < nf; ++f)
        for (int i = 0; i < n; ++i) acc[f][i] = 0.0;
    for (int o = 0; o < p->nobj; ++o) {
        const dp_object *ob = &p->obj[o];
        const double *t = T + o * dim * B, *t0 = t + x0;
        const double v1 = t[B + y], v2 = dim == 3 ? t[2 * B + z] : 0.0;
        dp_shape_run(dim, ob->kind, t0, n, v1, v2, 0, sh);
        for (int f = 0; f < nf; ++f) {
            const double out = ob->outside[f], d = ob->inside[f] - ob->outside[f];
            for (int i = 0; i < n; ++i) acc[f][i] = dp_model_term(acc[f][i], out, d, sh[i]);
        }
    }
    for (int f = 0; f < nf; ++f)
        for (int i = 0; i < n; ++i) dst[f][at + i] = (float)acc[f][i];
}

/* Field f of the DP_SEG cells (x0 + i, y, z), i < DP_SEG, of a row of a tile from its model table T,
 * into out[0..DP_SEG): per cell the operations of dp_model_cells_tab for field f in the same order
 * (objects in order; the object's shape, then its term), so the same bits (tests/test_core.c). x0 is
 * a multiple of DP_SEG (tile_size >= 4). The GPU's model fill: one thread per segment and field, the
 * segment's y and z axis values read once per object, its DP_SEG floats stored as one 16-byte word;
 * yz: dp_shape_run's box test (a constant: 1 beside dp_model_seg2, 0 in regridStep's fill, and in
 * dp_model_seg, the form older device code calls: tools/exp/base). */
#define DP_SEG 4
static inline DP_HD void dp_model_seg_yz(const dp_params *p, const double *T, int x0, int y, int z, int f, int yz,
                                         float *out)
{
    const int B = p->B, dim = p->dim;
    double acc[DP_SEG], sh[DP_SEG];
    for (int i = 0; i < DP_SEG; ++i) acc[i] = 0.0;
    for (int o = 0; o < p->nobj; ++o) {
        const dp_object *ob = &p->obj[o];
        const double *t = T + o * dim * B;
        const double v1 = t[B + y], v2 = dim == 3 ? t[2 * B + z] : 0.0;
        const double outside = ob->outside[f], d = ob->inside[f] - ob->outside[f];
        dp_shape_run(dim, ob->kind, t + x0, DP_SEG, v1, v2, yz, sh);
        for (int i = 0; i < DP_SEG; ++i) acc[i] = dp_model_term(acc[i], outside, d, sh[i]);
    }
    for (int i = 0; i < DP_SEG; ++i) out[i] = (float)acc[i];
}

/* dp_model_seg_yz with the per-cell box test (the cpu's rows' form). */
static inline DP_HD void dp_model_seg(const dp_params *p, const double *T, int x0, int y, int z, int f, float *out)
{
    dp_model_seg_yz(p, T, x0, y, z, f, 0, out);
}

/* dp_model_seg of fields f and f + 1 at once, into out0 and out1: each object's shape over the
 * segment once for both (it does not depend on the field), then each field's term, per cell the
 * operations of dp_model_seg for each field in the same order, so the same bits (tests/test_core.c).
 * The GPU's model fill of decks with two fields or more: one thread per segment and pair of fields,
 * a box tested by dp_shape_run's yz form. */
static inline DP_HD void dp_model_seg2(const dp_params *p, const double *T, int x0, int y, int z, int f, float *out0,
                                       float *out1)
{
    const int B = p->B, dim = p->dim;
    double acc0[DP_SEG], acc1[DP_SEG], sh[DP_SEG];
    for (int i = 0; i < DP_SEG; ++i) acc0[i] = acc1[i] = 0.0;
    for (int o = 0; o < p->nobj; ++o) {
        const dp_object *ob = &p->obj[o];
        const double *t = T + o * dim * B;
        const double v1 = t[B + y], v2 = dim == 3 ? t[2 * B + z] : 0.0;
        dp_shape_run(dim, ob->kind, t + x0, DP_SEG, v1, v2, 1, sh);
        const double out_0 = ob->outside[f], d0 = ob->inside[f] - ob->outside[f];
        const double out_1 = ob->outside[f + 1], d1 = ob->inside[f + 1] - ob->outside[f + 1];
        for (int i = 0; i < DP_SEG; ++i) {
            acc0[i] = dp_model_term(acc0[i], out_0, d0, sh[i]);
            acc1[i] = dp_model_term(acc1[i], out_1, d1, sh[i]);
        }
    }
    for (int i = 0; i < DP_SEG; ++i) {
        out0[i] = (float)acc0[i];
        out1[i] = (float)acc1[i];
    }
}

/* Model value of one field (tests and tools; the engines fill all fields at once). */
static inline DP_HD float dp_model_cell(const dp_params *p, int f, int level, int32_t ti, int32_t tj, int32_t tk,
                                        int x, int y, int z)
{
    float out[DP_MAX_FIELDS];
    dp_model_cells(p, level, ti, tj, tk, x, y, z, out);
    return out[f];
}

/* ---- tiles in the tree ------------------------------------------------------------------- */

/* Child tile coordinates from parent coordinates and octant. */
static inline DP_HD void dp_child_coord(const int32_t *pc, int o, int32_t *cc)
{
    cc[0] = 2 * pc[0] + (o & 1);
    cc[1] = 2 * pc[1] + ((o >> 1) & 1);
    cc[2] = 2 * pc[2] + ((o >> 2) & 1);
}

/* The octant a tile (coordinates c) occupies in its parent, the inverse of dp_child_coord: bit a
 * set when coordinate a is odd. */
static inline DP_HD int dp_tile_octant(const int32_t *c) { return (c[0] & 1) | ((c[1] & 1) << 1) | ((c[2] & 1) << 2); }

/* ---- fill -------------------------------------------------------------------------------- */

/* The values of every field at cell (x,y,z) of a new tile at `level`, coordinates c, into
 * v[0..nf-1]: prolonged from the parent tile's octant `octant` when fill = prolong and the parent's
 * cells are given (up[f]: the parent tile's cells of field f), else sampled from the model. The
 * per-cell reference of a tile's fill: the engines compute the same values by bricks
 * (dp_prolong_brick) and through the tile's model table (dp_model_cells_tab): tile_fill
 * (src/tile.c) on the CPU, block_fill_tiles (device/gpu_common.cuh) on the GPU; tests/test_core.c
 * checks they agree bit for bit. */
static inline DP_HD void dp_fill_cell(const dp_params *p, int level, const int32_t *c, const float *const *up,
                                      int octant, int x, int y, int z, float *v)
{
    if (p->fill == DP_FILL_PROLONG && up) {
        const int B = p->B;
        DP_FOR_FIELDS(f, p->nf) v[f] = dp_prolong(p->dim, B, up[f], octant, x, y, z);
    } else {
        dp_model_cells(p, level, c[0], c[1], c[2], x, y, z, v);
    }
}

static inline DP_HD int dp_popcount(unsigned v)
{
    int n = 0;
    while (v) { n += (int)(v & 1u); v >>= 1; }
    return n;
}

/* ---- regrid (time steps) ----------------------------------------------------------------- */

/* Restriction, the inverse of dp_prolong: the value of parent cell (ox + X, oy + Y, oz + Z) of the
 * octant whose child tile's cells are u (X, Y, Z in 0..B/2-1 within the octant): the mean of the
 * 2^dim child cells covering it, summed in double in a fixed order (x fastest) and rounded once, so
 * the children average back to the parent to half an ulp and every engine gets the same bits. */
static inline DP_HD float dp_restrict_cell(int dim, int B, const float *u, int X, int Y, int Z)
{
    const int nc = 1 << dim;
    double s = 0.0;
    for (int k = 0; k < nc; ++k) {
        const int x = 2 * X + (k & 1), y = 2 * Y + ((k >> 1) & 1), z = dim == 3 ? 2 * Z + ((k >> 2) & 1) : 0;
        s = s + (double)u[x + B * (y + B * z)];
    }
    return (float)(s / (double)nc);
}

/* Parent cell (X, Y, Z) of the octant of a child tile (X, Y, Z in 0..B/2-1): the child's cells u
 * restricted into the parent's cells up at the octant o the child occupies (dp_restrict_cell). The
 * per-cell body of tile_restrict (CPU) and of the GPU regrid's restriction (one thread per cell). */
static inline DP_HD void dp_restrict_into(int dim, int B, int o, const float *u, float *up, int X, int Y, int Z)
{
    const int hb = B >> 1, ox = (o & 1) * hb, oy = ((o >> 1) & 1) * hb, oz = ((o >> 2) & 1) * hb;
    up[(ox + X) + B * ((oy + Y) + B * (dim == 3 ? oz + Z : 0))] = dp_restrict_cell(dim, B, u, X, Y, Z);
}

/* The composite sum of one field over a tile: its cells u in the octants without a child (kids: the
 * childmask), summed in cell order in double, as sum[0] (values) and sum[1] (absolute values). The
 * body of tile_leaf_sum (CPU) and of the GPU regrid's totals (one thread per tile and field), so both
 * give the same bits. */
static inline DP_HD void dp_leaf_sum(int dim, int B, unsigned kids, const float *u, double sum[2])
{
    const int cells = dp_cells(dim, B), lb = dp_log2(B);
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

/* A regrid's decision for one tile: flags = the octants its criterion flags now (0 at max_level),
 * had = the octants that have a child (its childmask before the regrid). Octants in keep keep their
 * child (and the child's subtree is regridded in turn), octants in add gain a new child (filled as
 * a refinement fills it), octants in drop lose their child with its whole subtree. */
static inline DP_HD void dp_regrid_octants(unsigned flags, unsigned had, unsigned *keep, unsigned *add, unsigned *drop)
{
    *keep = flags & had;
    *add = flags & ~had;
    *drop = had & ~flags;
}

/* Index of the child in octant o of a tile whose children (octants `had`) start at `first`: the
 * children of one parent are consecutive in canonical order, octant by octant. */
static inline DP_HD dp_tidx dp_child_index(dp_tidx first, unsigned had, int o)
{
    return first + dp_popcount(had & ((1u << o) - 1u));
}

/* Composite sort key (level, Morton key) for the device-side sort. The deck check keeps
 * dim * coordinate bits + 5 <= 64 (see deck.c). */
static inline DP_HD uint64_t dp_sort_key(int level, uint64_t morton) { return ((uint64_t)level << 59) | morton; }

#ifdef __cplusplus
}
#endif
#endif
