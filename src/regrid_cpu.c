/* regrid_cpu.c - one time step's regrid on the CPU: the host driver over per-tile functions.
 *
 * Phases (docs/design.md, "Time steps"), each a loop over tiles that a GPU engine runs as one kernel
 * over a (compacted) tile list, calling the same DP_HD functions:
 *   1. sample: every tile's cells from the model moved to time t (tile_fill, parent -1:
 *      dp_fill_cell -> dp_model_cells with dp_params_at); with fill = model and no balance only the
 *      roots: the rebuild samples every child it writes (below);
 *   2. restrict (fill = prolong): level by level from the finest, each child's means into its
 *      parent's octant (tile_restrict -> dp_restrict_cell), so a parent holds the mean of the finest
 *      data below it and a child about to be removed has been restricted into its parent first;
 *   3. rebuild, level by level from the roots (which always stay): flag each tile of the new level
 *      (tile_octant_flags), decide per octant keep / add / drop (dp_regrid_octants), exclusive-scan
 *      the child counts, then per parent copy kept children (their old index: dp_child_index) and
 *      write and fill new ones (dp_write_child, tile_fill: prolonged or sampled). With fill = model
 *      and no balance a kept child is written and sampled as a new one is (the metadata and cells
 *      the copy of a sampled old tile would give, without sampling it first; the GPU regrids do the
 *      same). Dropped children and their subtrees are never visited. Parents in canonical order,
 *      children octant by octant: the new levels are in canonical order as they are made, with no
 *      sort.
 */
#include "src/regrid_cpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/balance.h"
#include "src/tile.h"
#include "src/timer.h"

int regrid_totals(const dp_params *p, const mesh_t *m, double *sum, double *abs)
{
    const dp_tidx n = m->ntiles;
    double *ts = malloc((size_t)(n > 0 ? n : 1) * 2 * sizeof *ts);
    if (!ts) return -1;
    for (int f = 0; f < p->nf; ++f) {
#pragma omp parallel for schedule(dynamic, 64)
        for (dp_tidx t = 0; t < n; ++t) tile_leaf_sum(p, m, t, f, ts + 2 * t);
        regrid_fold(p, m->level_start, m->nlevels, ts, &sum[f], &abs[f]);
    }
    free(ts);
    return 0;
}

/* Grow the new mesh and its old-index array to hold k tiles (by a quarter at least: a regrid
 * changes few tiles, and each growth of the store is a copy). 0 or -1. */
static int grow(mesh_t *nm, dp_tidx **old, dp_tidx *oldcap, dp_tidx k)
{
    if (k > nm->cap) {
        const dp_tidx cap = nm->cap + nm->cap / 4 > k ? nm->cap + nm->cap / 4 : k;
        if (mesh_reserve_unset(nm, cap) != 0) return -1; /* not cleared: the rebuild writes every tile it adds */
    }
    if (k > *oldcap) {
        dp_tidx *o = realloc(*old, (size_t)nm->cap * sizeof *o);
        if (!o) return -1;
        *old = o;
        *oldcap = nm->cap;
    }
    return 0;
}

/* The store the new hierarchy is built in: m's header with the spare's arrays (at least n tiles),
 * or new arrays. Not cleared: every tile of the new mesh is written whole (its metadata, childmask
 * and cells) before anything reads it; tiles past its ntiles are never read. 0 or -1. */
static int new_store(const mesh_t *m, mesh_t *spare, dp_tidx n, mesh_t *nm)
{
    *nm = *m;
    if (!spare || spare->cap == 0) return mesh_alloc_unset(nm, n > 0 ? n : 1);
#define TAKE_ARRAY(name, type, per) nm->name = spare->name;
    DP_TILE_ARRAYS(TAKE_ARRAY)
#undef TAKE_ARRAY
    for (int f = 0; f < DP_MAX_FIELDS; ++f) nm->field[f] = spare->field[f];
    nm->cap = spare->cap;
    memset(spare, 0, sizeof *spare); /* the arrays are nm's now */
    return mesh_reserve_unset(nm, n);
}

int regrid_cpu(const deck_t *d, mesh_t *m, mesh_t *spare, double t, regrid_report_t *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    for (int L = 0; L < DP_MAX_LEVELS; ++L) r->level_ms[L] = -1.0;
    const double t0 = timer_ms();
    dp_params pt;
    dp_params_at(&d->p, t, &pt);
    const dp_tidx n = m->ntiles, nroots = m->level_start[1];
    const int dim = pt.dim;
    r->tiles_before = n;

    /* 1. sample the tiles at time t: every one, or only the roots when the rebuild samples the
     * children it writes (fill = model; with balance = 2:1 a tile balance adds may take its cells
     * from the old mesh, so that one is sampled whole) */
    const int resample = pt.fill != DP_FILL_PROLONG && pt.balance != DP_BALANCE_2TO1;
    const dp_tidx nsample = resample ? nroots : n;
#pragma omp parallel for schedule(dynamic, 16)
    for (dp_tidx i = 0; i < nsample; ++i) tile_fill(&pt, m, i, -1, 0);
    const double t1 = timer_ms();
    r->sample_ms = t1 - t0;

    /* 2. fill = prolong: restrict from the finest level up */
    r->conservation_checked = pt.fill == DP_FILL_PROLONG;
    if (r->conservation_checked) {
        for (int L = m->nlevels - 1; L >= 1; --L) {
            const dp_tidx s = m->level_start[L], e = m->level_start[L + 1];
#pragma omp parallel for schedule(dynamic, 16)
            for (dp_tidx c = s; c < e; ++c) tile_restrict(&pt, m, c, m->parent[c]);
        }
        if (regrid_totals(&pt, m, r->total_before, r->abs_before) != 0)
            return snprintf(err, errlen, "out of host memory for the totals of %lld tiles", (long long)n), -1;
    }
    const double t2 = timer_ms();
    r->restrict_ms = t2 - t1;

    /* 3. rebuild from the roots. first[] = each old tile's first child (children are consecutive) */
    dp_tidx *first = malloc((size_t)(n > 0 ? n : 1) * sizeof *first), *old = NULL, oldcap = 0;
    mesh_t nm;
    memset(&nm, 0, sizeof nm);
    int ok = first && new_store(m, spare, n, &nm) == 0;
    if (ok) ok = (old = malloc((size_t)nm.cap * sizeof *old)) != NULL;
    if (ok) oldcap = nm.cap;
    uint8_t *mask = NULL;
    dp_tidx *off = NULL;
    if (!ok) goto oom;
    for (dp_tidx c = n - 1; c >= nroots; --c) first[m->parent[c]] = c; /* the lowest child wins */
    mesh_copy_tiles(&nm, 0, m, 0, nroots);
    for (dp_tidx i = 0; i < nroots; ++i) old[i] = i;
    nm.ntiles = nroots;
    nm.level_start[0] = 0;
    nm.level_start[1] = nroots;
    nm.nlevels = nroots > 0; /* an MPI rank's part may hold no root */
    long long kept = nroots, added = 0;
    const long long cap = d->max_tiles;
    for (int L = 0;; ++L) {
        const double tl = timer_ms();
        const dp_tidx s = nm.level_start[L], k = nm.level_start[L + 1] - s, at = nm.ntiles;
        free(mask);
        free(off);
        mask = malloc((size_t)(k > 0 ? k : 1));
        off = malloc((size_t)(k + 1) * sizeof *off);
        if (!mask || !off) goto oom;
        const dp_tiles T0 = mesh_tiles(&nm);
#pragma omp parallel for schedule(dynamic, 64)
        for (dp_tidx i = 0; i < k; ++i) {
            mask[i] = L < pt.max_level ? (uint8_t)tile_octant_flags(&pt, &nm, s + i) : 0;
            T0.childmask[s + i] = mask[i];
        }
        off[0] = 0;
        for (dp_tidx i = 0; i < k; ++i) off[i + 1] = off[i] + dp_popcount(mask[i]);
        const dp_tidx total = off[k];
        if (total == 0) break;
        if (cap > 0 && at + total > cap) {
            snprintf(err, errlen, "tile store overflow regridding level %d at time %g: at least %lld tiles needed, "
                     "max_tiles = %lld; set max_tiles >= %lld (or 0: as many as memory holds), or lower max_level",
                     L + 1, t, (long long)(at + total), cap, (long long)(at + total));
            goto fail;
        }
        if (grow(&nm, &old, &oldcap, at + total) != 0) goto oom;
        const dp_tiles T = mesh_tiles(&nm);
        long long kk = 0, ka = 0;
#pragma omp parallel for schedule(dynamic, 16) reduction(+ : kk, ka)
        for (dp_tidx i = 0; i < k; ++i) {
            const dp_tidx par = s + i, op = old[par];
            const unsigned had = op >= 0 ? m->childmask[op] : 0u;
            unsigned keep, add, drop;
            dp_regrid_octants(mask[i], had, &keep, &add, &drop);
            dp_tidx ch = at + off[i];
            for (int o = 0; o < (1 << dim); ch += (mask[i] >> o & 1), ++o) {
                if (keep >> o & 1) {
                    const dp_tidx oc = dp_child_index(first[op], had, o);
                    if (resample) {
                        dp_write_child(T, dim, ch, L + 1, par, o);
                        tile_fill(&pt, &nm, ch, par, o);
                    } else {
                        mesh_copy_tiles(&nm, ch, m, oc, 1);
                        T.parent[ch] = par;
                    }
                    old[ch] = oc;
                    ++kk;
                } else if (add >> o & 1) {
                    dp_write_child(T, dim, ch, L + 1, par, o);
                    tile_fill(&pt, &nm, ch, par, o);
                    old[ch] = -1;
                    ++ka;
                }
            }
        }
        kept += kk;
        added += ka;
        nm.ntiles = at + total;
        nm.nlevels = L + 2;
        nm.level_start[L + 2] = nm.ntiles;
        r->level_ms[L + 1] = timer_ms() - tl;
    }
    free(mask);
    free(off);
    free(first);
    free(old);
    mask = NULL, off = NULL, first = NULL, old = NULL;
    if (pt.balance == DP_BALANCE_2TO1) { /* the tiles 2:1 balance needs; those there before keep their cells */
        balance_report_t b;
        if (balance_close(&pt, &nm, m, cap, &b, err, errlen) != 0) goto fail;
        kept += b.from_old;
        added += b.added - b.from_old;
    }
    if (spare) {
        *spare = *m; /* m's old arrays, for the next regrid */
        spare->ntiles = 0;
    } else {
        mesh_free(m);
    }
    *m = nm;
    r->rebuild_ms = timer_ms() - t2;
    r->tiles_after = m->ntiles;
    r->kept = kept;
    r->added = added;
    r->removed = n - kept;
    r->changed_fraction = n > 0 ? (double)(r->added + r->removed) / (double)n : 0.0;
    r->nlevels = m->nlevels;
    if (r->conservation_checked) {
        if (regrid_totals(&pt, m, r->total_after, r->abs_after) != 0)
            return snprintf(err, errlen, "out of host memory for the totals of %lld tiles", (long long)m->ntiles), -1;
        regrid_conservation(&pt, r->total_before, r->abs_before, r->total_after, r->abs_after, &r->conservation_rel);
    }
    r->regrid_ms = timer_ms() - t0;
    return 0;
oom:
    snprintf(err, errlen, "out of host memory regridding %lld tiles (%.2f GiB a copy)", (long long)n,
             mesh_bytes((double)n, m->dim, m->B, m->nf) / 1073741824.0);
fail:
    free(mask);
    free(off);
    free(first);
    free(old);
    if (nm.cap > 0 && nm.level != m->level) {
        if (spare) *spare = nm; /* back to the spare, as grown */
        else mesh_free(&nm);
    }
    return -1;
}
