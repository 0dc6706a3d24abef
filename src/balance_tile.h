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

#ifdef __cplusplus
}
#endif
#endif
