/* balance_tile.h - the per-tile parts of 2:1 balance (docs/design.md, "Balance"), shared by the CPU
 * (src/balance.c) and the GPU engines (device/balance_gpu.cu): one source, so the variants cannot
 * drift. Static inline DP_HD functions on coordinates and sorted Morton keys.
 *
 * The tiles a tile X (level L, coordinates c) needs are (L - 1, (c + d) >> 1) for d in {-1,0,1}^dim
 * inside the level: per axis the halves of c - 1, c, c + 1 are at most two values, so at most 2^dim
 * tiles, enumerated per axis without repeats (dp_balance_axis). Levels are searched by Morton key
 * (canonical order: within a level the keys increase). */
#ifndef DPAMR_BALANCE_TILE_H
#define DPAMR_BALANCE_TILE_H

#include <stdint.h>
#include "src/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The distinct halves of c - 1, c, c + 1 inside [0, ext): one or two values into q, their count. */
static inline DP_HD int dp_balance_axis(int64_t c, int64_t ext, int32_t q[2])
{
    int n = 0;
    for (int64_t v = c - 1; v <= c + 1; ++v) {
        if (v < 0 || v >= ext) continue;
        const int32_t h = (int32_t)(v >> 1);
        if (n == 0 || q[n - 1] != h) q[n++] = h;
    }
    return n;
}

/** The tiles (level L - 1) that tile coordinates c at level L need, in a domain of root[] root tiles
 *  per axis: their coordinates into out (3 per tile), their count (at most 2^dim); 0 when c lies
 *  outside the level. In z, y, x loop order (x fastest). */
static inline DP_HD int dp_balance_wanted(int dim, const int32_t *root, int L, const int32_t *c, int32_t out[8][3])
{
    int32_t q[3][2];
    int nq[3];
    for (int a = 0; a < 3; ++a) {
        const int64_t ext = a < dim ? (int64_t)root[a] << L : 1;
        if (c[a] < 0 || c[a] >= ext) return 0;
        if (a < dim) nq[a] = dp_balance_axis(c[a], ext, q[a]);
        else {
            q[a][0] = 0;
            nq[a] = 1;
        }
    }
    int n = 0;
    for (int k = 0; k < nq[2]; ++k)
        for (int j = 0; j < nq[1]; ++j)
            for (int i = 0; i < nq[0]; ++i) {
                out[n][0] = q[0][i];
                out[n][1] = q[1][j];
                out[n][2] = q[2][k];
                ++n;
            }
    return n;
}

/** The octant of coordinates q within their parent (the low bit per axis). */
static inline DP_HD int dp_balance_octant(const int32_t *q) { return (q[0] & 1) | (q[1] & 1) << 1 | (q[2] & 1) << 2; }

/** The count of keys[s, e) (increasing) below k: the index in [s, e] where k belongs. */
static inline DP_HD int64_t dp_key_lower(const uint64_t *key, int64_t s, int64_t e, uint64_t k)
{
    int64_t lo = s, hi = e;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (key[mid] < k) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/** The index of the tile with Morton key k among tiles [s, e) of keys (increasing), or -1. */
static inline DP_HD int64_t dp_key_find(const uint64_t *key, int64_t s, int64_t e, uint64_t k)
{
    const int64_t lo = dp_key_lower(key, s, e, k);
    return lo < e && key[lo] == k ? lo : -1;
}

/** The levels of a tile store before and after the merge of the tiles balance adds, as the GPU
 *  engines merge them (device/balance_gpu.cu: by binary search, no sort): the keys added per level,
 *  sorted and unique, and the level starts before (ls) and after (nls). */
typedef struct {
    const uint64_t *ak[DP_MAX_LEVELS]; /* level L's added keys (NULL when none) */
    int64_t an[DP_MAX_LEVELS];         /* their count */
    int64_t abase[DP_MAX_LEVELS];      /* the first of them among all added tiles, coarsest level first */
    int64_t ls[DP_MAX_LEVELS + 1];     /* level starts before */
    int64_t nls[DP_MAX_LEVELS + 1];    /* level starts after */
    int64_t ols[DP_MAX_LEVELS + 1];    /* a regrid: the old store's level starts */
    int nl, onl;                       /* levels before; of the old store (0: none) */
    int root[3];                       /* root tiles per axis */
} dp_bal_t;

/** The index after the merge of tile i (level L) before it: the tiles before it in its level, the
 *  added keys of L below its key, and the levels in front. key: the keys before the merge. */
static inline DP_HD int64_t dp_bal_old_to(const dp_bal_t *B, const uint64_t *key, int L, int64_t i)
{
    return B->nls[L] + (i - B->ls[L]) + (B->an[L] ? dp_key_lower(B->ak[L], 0, B->an[L], key[i]) : 0);
}

/** The index after the merge of level L's added key j: the added keys before it, the tiles of L
 *  below its key, and the levels in front. */
static inline DP_HD int64_t dp_bal_new_to(const dp_bal_t *B, const uint64_t *key, int L, int64_t j)
{
    return B->nls[L] + j + (dp_key_lower(key, B->ls[L], B->ls[L + 1], B->ak[L][j]) - B->ls[L]);
}

/** The index after the merge of the parent of level L's added key k (L >= 1): a tile of level L - 1
 *  before it, or an added key of L - 1; -1 when neither (a tree not properly nested). */
static inline DP_HD int64_t dp_bal_parent(const dp_bal_t *B, int dim, const uint64_t *key, int L, uint64_t k)
{
    const uint64_t pk = k >> dim;
    const int64_t p = dp_key_find(key, B->ls[L - 1], B->ls[L], pk);
    if (p >= 0) return dp_bal_old_to(B, key, L - 1, p);
    const int64_t j = B->ak[L - 1] ? dp_key_find(B->ak[L - 1], 0, B->an[L - 1], pk) : -1;
    return j >= 0 ? dp_bal_new_to(B, key, L - 1, j) : -1;
}

/** The octants of the tile with key K at level L that have a child after the merge (its childmask):
 *  the keys (K << dim) | o among level L + 1's tiles before it and its added keys. */
static inline DP_HD unsigned dp_bal_children(const dp_bal_t *B, int dim, const uint64_t *key, int L, uint64_t K)
{
    if (L + 1 >= B->nl) return 0u;
    const uint64_t lo = K << dim, hi = lo + (1u << dim);
    unsigned bits = 0;
    for (int64_t c = dp_key_lower(key, B->ls[L + 1], B->ls[L + 2], lo); c < B->ls[L + 2] && key[c] < hi; ++c)
        bits |= 1u << (unsigned)(key[c] - lo);
    const uint64_t *a = B->ak[L + 1];
    for (int64_t c = a ? dp_key_lower(a, 0, B->an[L + 1], lo) : 0; a && c < B->an[L + 1] && a[c] < hi; ++c)
        bits |= 1u << (unsigned)(a[c] - lo);
    return bits;
}

#ifdef __cplusplus
}
#endif
#endif
