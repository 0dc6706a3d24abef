/* balance.c - 2:1 balance of a tile tree (src/balance.h; docs/design.md, "Balance").
 *
 * The per-tile parts (the tiles a tile needs, dp_balance_wanted; the key search, dp_key_find) are
 * in src/balance_tile.h, which the GPU engines' balance (device/balance_gpu.cu) calls too. */
#include "src/balance.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/balance_tile.h"
#include "src/tile.h"

void balance_needs(const mesh_t *m, const dp_tidx *start, int nlv, uint8_t *need)
{
    const dp_tidx n = m->ntiles;
    memset(need, 0, (size_t)(n > 0 ? n : 0));
    for (int L = 2; L < nlv; ++L) {
        const dp_tidx s = start[L] < 0 ? 0 : start[L], e = start[L + 1] > n ? n : start[L + 1];
        const dp_tidx ps = start[L - 2] < 0 ? 0 : start[L - 2], pe = start[L - 1] > n ? n : start[L - 1];
#pragma omp parallel for schedule(dynamic, 256)
        for (dp_tidx t = s; t < e; ++t) {
            int32_t w[8][3];
            const int nw = dp_balance_wanted(m->dim, m->root, L, m->coord + 3 * t, w);
            for (int i = 0; i < nw; ++i) {
                const uint64_t pk = dp_morton(m->dim, w[i][0] >> 1, w[i][1] >> 1, w[i][2] >> 1);
                const dp_tidx P = dp_key_find(m->key, ps, pe, pk);
                if (P < 0) continue; /* its own parent is needed then: a coarser level's check sees it */
                const uint8_t bit = (uint8_t)(1u << dp_balance_octant(w[i]));
#pragma omp atomic
                need[P] |= bit;
            }
        }
    }
}

static int cmp_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* A growing array of keys. */
typedef struct {
    uint64_t *k;
    dp_tidx n, cap;
} keys_t;

static int keys_push(keys_t *a, uint64_t k)
{
    if (a->n == a->cap) {
        const dp_tidx cap = a->cap ? 2 * a->cap : 256;
        uint64_t *q = realloc(a->k, (size_t)cap * sizeof *q);
        if (!q) return -1;
        a->k = q;
        a->cap = cap;
    }
    a->k[a->n++] = k;
    return 0;
}

/* Sort, drop repeats and the keys of level L's tiles in m. */
static void keys_settle(keys_t *a, const mesh_t *m, int L)
{
    qsort(a->k, (size_t)a->n, sizeof *a->k, cmp_u64);
    dp_tidx u = 0;
    for (dp_tidx i = 0; i < a->n; ++i)
        if ((u == 0 || a->k[i] != a->k[u - 1]) &&
            dp_key_find(m->key, m->level_start[L], m->level_start[L + 1], a->k[i]) < 0)
            a->k[u++] = a->k[i];
    a->n = u;
}

/* Step 1: the keys each level needs for the balance of the finer ones and lacks, finest
 * level first (a tile added at level L - 1 may need others at L - 2). Returns the count, or -1. */
static dp_tidx balance_missing(const mesh_t *m, keys_t *add)
{
    dp_tidx total = 0;
    for (int L = m->nlevels - 1; L >= 2; --L) {
        const dp_tidx s = m->level_start[L], k = m->level_start[L + 1] - s, ka = add[L].n;
        for (dp_tidx i = 0; i < k + ka; ++i) {
            int32_t c[3], w[8][3];
            if (i < k) memcpy(c, m->coord + 3 * (s + i), sizeof c);
            else dp_morton_decode(m->dim, add[L].k[i - k], c);
            const int nw = dp_balance_wanted(m->dim, m->root, L, c, w);
            for (int j = 0; j < nw; ++j)
                if (keys_push(&add[L - 1], dp_morton(m->dim, w[j][0], w[j][1], w[j][2])) != 0) return -1;
        }
        keys_settle(&add[L - 1], m, L - 1);
        total += add[L - 1].n;
    }
    return total;
}

/* Step 2: a new mesh with the added keys merged into each level, coarsest first, each added tile
 * filled from old (the same tile before a regrid) or as a child of its parent (tile_fill). */
static int balance_merge(const dp_params *p, mesh_t *m, const mesh_t *old, long long cap, keys_t *add,
                         balance_report_t *r, char *err, size_t errlen)
{
    const int dim = m->dim, cells = mesh_cells(m);
    dp_tidx want = m->ntiles;
    for (int L = 0; L < DP_MAX_LEVELS; ++L) want += add[L].n;
    mesh_t nm = *m;
    dp_tidx *newidx = malloc((size_t)(m->ntiles > 0 ? m->ntiles : 1) * sizeof *newidx), *pos = NULL;
    dp_tidx npos_cap = 0;
    if (!newidx || mesh_alloc(&nm, want) != 0) {
        free(newidx);
        return snprintf(err, errlen, "out of host memory balancing %lld tiles 2:1", (long long)want), -1;
    }
    dp_tidx at = 0;
    int L = 0;
    for (; L < m->nlevels; ++L) {
        const dp_tidx s = m->level_start[L], e = m->level_start[L + 1];
        const dp_tidx grow = at + (e - s) + add[L].n;
        if (cap > 0 && grow > cap) {
            snprintf(err, errlen, "tile store overflow balancing 2:1: at least %lld tiles needed, max_tiles = %lld; set "
                     "max_tiles >= %lld (or 0: as many as memory holds), or lower max_level", (long long)grow, cap,
                     (long long)grow);
            goto fail;
        }
        if (grow > nm.cap && mesh_reserve(&nm, grow > 2 * nm.cap ? grow : 2 * nm.cap) != 0) goto oom;
        if (add[L].n > npos_cap) {
            dp_tidx *q = realloc(pos, (size_t)add[L].n * sizeof *q);
            if (!q) goto oom;
            pos = q;
            npos_cap = add[L].n;
        }
        const dp_tiles T = mesh_tiles(&nm);
        nm.level_start[L] = at;
        dp_tidx i = s, j = 0, np = 0;
        while (i < e || j < add[L].n) {
            if (j == add[L].n || (i < e && m->key[i] < add[L].k[j])) {
                mesh_copy_tiles(&nm, at, m, i, 1);
                newidx[i] = at;
                if (L > 0) T.parent[at] = newidx[m->parent[i]];
                ++i;
            } else {
                const uint64_t key = add[L].k[j++];
                const dp_tidx par =
                    L > 0 ? dp_key_find(T.key, nm.level_start[L - 1], nm.level_start[L], key >> dim) : -1;
                if (par < 0) { /* a needed tile's parent is needed too, or flagged it: a broken tree */
                    snprintf(err, errlen, "balancing 2:1: the parent of a needed tile at level %d is missing (the tile "
                             "tree is not properly nested)", L);
                    goto fail;
                }
                dp_write_child(T, dim, at, L, par, (int)(key & ((1u << dim) - 1)));
                pos[np++] = at;
            }
            ++at;
        }
        long long fo = 0;
#pragma omp parallel for schedule(dynamic, 16) reduction(+ : fo)
        for (dp_tidx a = 0; a < np; ++a) {
            const dp_tidx t = pos[a];
            const dp_tidx ot = old && L < old->nlevels
                                   ? dp_key_find(old->key, old->level_start[L], old->level_start[L + 1], T.key[t]) : -1;
            if (ot >= 0) {
                for (int f = 0; f < m->nf; ++f)
                    memcpy(nm.field[f] + (size_t)t * cells, old->field[f] + (size_t)ot * cells, (size_t)cells * sizeof(float));
                ++fo;
            } else
                tile_fill(p, &nm, t, T.parent[t], dp_tile_octant(T.coord + 3 * t));
        }
        r->added += np;
        r->from_old += fo;
    }
    nm.level_start[L] = at;
    nm.ntiles = at;
    nm.nlevels = L;
    mesh_index_children(&nm);
    free(newidx);
    free(pos);
    mesh_free(m);
    *m = nm;
    return 0;
oom:
    snprintf(err, errlen, "out of host memory balancing %lld tiles 2:1", (long long)want);
fail:
    free(newidx);
    free(pos);
    mesh_free(&nm);
    return -1;
}

int balance_close(const dp_params *p, mesh_t *m, const mesh_t *old, long long cap, balance_report_t *r, char *err,
                  size_t errlen)
{
    memset(r, 0, sizeof *r);
    keys_t add[DP_MAX_LEVELS];
    memset(add, 0, sizeof add);
    int rc = 0;
    const dp_tidx missing = balance_missing(m, add);
    if (missing < 0) {
        rc = -1;
        snprintf(err, errlen, "out of host memory balancing %lld tiles 2:1", (long long)m->ntiles);
    } else if (missing > 0)
        rc = balance_merge(p, m, old, cap, add, r, err, errlen);
    for (int L = 0; L < DP_MAX_LEVELS; ++L) free(add[L].k);
    return rc;
}
