/* partition.c - root ranges along the Morton curve and the parts they make (see partition.h). */
#include "src/partition.h"

#include <stdlib.h>
#include <string.h>

#include "src/tile.h"

/* First index in [a, b) of level L whose root key is >= rk (keys sorted within the level). */
static dp_tidx lower_bound(const mesh_t *m, int L, dp_tidx a, dp_tidx b, uint64_t rk)
{
    while (a < b) {
        const dp_tidx mid = a + (b - a) / 2;
        if (dp_root_key(m->dim, m->key[mid], L) < rk) a = mid + 1;
        else b = mid;
    }
    return a;
}

void part_weights(const dp_params *p, const mesh_t *m, int64_t *w)
{
    const dp_tidx nroots = m->level_start[1];
    const int Lf = m->nlevels - 1, togo = p->max_level > Lf ? p->max_level - Lf : 0;
    const dp_tidx s = m->level_start[Lf], e = m->level_start[Lf + 1];
    /* a root's frontier tiles are one run of the frontier (found by binary search) */
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1)
#endif
    for (dp_tidx r = 0; r < nroots; ++r) {
        const dp_tidx a = lower_bound(m, Lf, s, e, m->key[r]), b = lower_bound(m, Lf, a, e, m->key[r] + 1);
        int64_t sum = 1;
        for (dp_tidx t = a; t < b; ++t) sum += 1 + (togo ? (int64_t)tile_flagged_cells(p, m, t) * togo : 0);
        w[r] = sum;
    }
}

void part_split(const int64_t *w, dp_tidx n, int nranks, dp_tidx *first)
{
    long double total = 0;
    for (dp_tidx i = 0; i < n; ++i) total += (long double)w[i];
    int r = 0;
    first[0] = 0;
    long double before = 0;
    for (dp_tidx i = 0; i < n; ++i) {
        /* the rank whose share [r, r+1) * total / nranks holds this root's midpoint */
        const long double mid = before + 0.5L * (long double)w[i];
        int owner = total > 0 ? (int)(mid * nranks / total) : 0;
        if (owner > nranks - 1) owner = nranks - 1;
        while (r < owner) first[++r] = i;
        before += (long double)w[i];
    }
    while (r < nranks) first[++r] = n;
}

void part_ranges(const mesh_t *m, dp_tidx r0, dp_tidx r1, dp_tidx *lo, dp_tidx *hi)
{
    for (int L = 0; L < m->nlevels; ++L) {
        const dp_tidx a = m->level_start[L], b = m->level_start[L + 1];
        if (r0 >= r1) { /* no roots: an empty range where root r0's descendants would begin */
            lo[L] = hi[L] = r0 < m->level_start[1] ? lower_bound(m, L, a, b, m->key[r0]) : b;
            continue;
        }
        const uint64_t kmin = m->key[r0], kmax = m->key[r1 - 1];
        lo[L] = lower_bound(m, L, a, b, kmin);
        hi[L] = kmax == UINT64_MAX ? b : lower_bound(m, L, lo[L], b, kmax + 1);
    }
}

/* Copy k tiles of level L from src index s to dst index at. Parents are on level L-1: renumbered from
 * src's numbering (that level's copied tiles start at src_prev) to dst's (they start at dst_prev). */
static void copy_level(mesh_t *dst, dp_tidx at, const mesh_t *src, dp_tidx s, dp_tidx k, int L, dp_tidx src_prev,
                       dp_tidx dst_prev)
{
    mesh_copy_tiles(dst, at, src, s, k);
    if (L > 0) /* parents are indices of the level above: move them with it */
        for (dp_tidx i = 0; i < k; ++i)
            if (dst->parent[at + i] >= 0) dst->parent[at + i] += dst_prev - src_prev;
}

int part_extract(const mesh_t *m, const dp_tidx *lo, const dp_tidx *hi, mesh_t *out)
{
    *out = *m;
    dp_tidx n = 0;
    int nl = 0;
    for (int L = 0; L < m->nlevels; ++L) {
        n += hi[L] - lo[L];
        if (hi[L] > lo[L]) nl = L + 1;
    }
    if (mesh_alloc(out, n) != 0) return -1;
    dp_tidx at = 0;
    for (int L = 0; L < nl; ++L) {
        out->level_start[L] = at;
        copy_level(out, at, m, lo[L], hi[L] - lo[L], L, L > 0 ? lo[L - 1] : 0, L > 0 ? out->level_start[L - 1] : 0);
        at += hi[L] - lo[L];
    }
    out->ntiles = n;
    out->nlevels = nl;
    for (int L = nl; L <= DP_MAX_LEVELS; ++L) out->level_start[L] = n;
    return 0;
}

void part_place(mesh_t *g, const mesh_t *part, const dp_tidx *gstart)
{
    for (int L = 0; L < part->nlevels; ++L)
        copy_level(g, gstart[L], part, part->level_start[L], part->level_start[L + 1] - part->level_start[L], L,
                   L > 0 ? part->level_start[L - 1] : 0, L > 0 ? gstart[L - 1] : 0);
}

int part_has_frontier(const mesh_t *part, int global_nlevels)
{
    return part->ntiles > 0 && part->nlevels == global_nlevels;
}

void part_leaf_range(int64_t nleaves, int nranks, int r, int64_t *lo, int64_t *hi)
{
    /* p4est's partition: rank r owns leaves [floor(N r / P), floor(N (r+1) / P)) */
    const int64_t q = nleaves / nranks, rem = nleaves % nranks; /* floor(N r / P), exactly */
    *lo = q * r + rem * r / nranks;
    *hi = q * (r + 1) + rem * (r + 1) / nranks;
}

int64_t part_count_leaves(const mesh_t *m)
{
    int64_t n = 0;
    for (dp_tidx t = 0; t < m->ntiles; ++t) n += m->childmask[t] == 0;
    return n;
}
