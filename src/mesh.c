/* mesh.c - allocation and indexing of the tile hierarchy. */
#define _GNU_SOURCE /* madvise, MADV_HUGEPAGE */
#include "src/mesh.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

double mesh_bytes(double cap, int dim, int B, int nf)
{
    return cap * ((double)DP_TILE_META_BYTES + (double)sizeof(float) * (double)nf * (double)dp_cells(dim, B));
}

int mesh_fits_memory(double bytes, char *why, size_t n)
{
    const double page = (double)sysconf(_SC_PAGESIZE);
    const long phys = sysconf(_SC_PHYS_PAGES), avail = sysconf(_SC_AVPHYS_PAGES);
    if (page <= 0 || phys <= 0 || bytes <= (double)phys * page) return 0;
    snprintf(why, n, "%.3g GB asked, the machine has %.3g GB of memory (%.3g GB free)", bytes / 1e9,
             (double)phys * page / 1e9, avail > 0 ? (double)avail * page / 1e9 : 0.0);
    return -1;
}

#define NULL_ARRAY(name, type, n) m->name = NULL;

/** A large array's pages asked to be huge pages (mesh_huge_pages). */
static void mesh_advise_huge(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
    enum { HUGE = 2 << 20 };
    if (!p || bytes < (size_t)8 * HUGE) return;
    const uintptr_t lo = ((uintptr_t)p + HUGE - 1) / HUGE * HUGE, hi = ((uintptr_t)p + bytes) / HUGE * HUGE;
    if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
    (void)p, (void)bytes;
#endif
}

/** Grow to cap tiles; zero: clear the new tiles. */
static int mesh_grow(mesh_t *m, dp_tidx cap, int zero)
{
    if (cap <= m->cap) return 0;
    const size_t cells = (size_t)mesh_cells(m);
    const size_t old = (size_t)m->cap, n = (size_t)cap;
#define GROW(ptr, per)                                                           \
    do {                                                                         \
        void *q = realloc((ptr), n * (per) * sizeof(*(ptr)));                    \
        if (!q) return -1;                                                       \
        (ptr) = q;                                                               \
        if (zero) memset((ptr) + old * (per), 0, (n - old) * (per) * sizeof(*(ptr))); \
    } while (0)
#define GROW_ARRAY(name, type, per) GROW(m->name, per);
    DP_TILE_ARRAYS(GROW_ARRAY)
#undef GROW_ARRAY
    for (int f = 0; f < m->nf; ++f) GROW(m->field[f], cells);
#undef GROW
    m->cap = cap;
    return 0;
}

void mesh_huge_pages(mesh_t *m)
{
    const size_t n = (size_t)m->cap, cells = (size_t)mesh_cells(m);
#define HUGE_ARRAY(name, type, per) mesh_advise_huge(m->name, n * (per) * sizeof(type));
    DP_TILE_ARRAYS(HUGE_ARRAY)
#undef HUGE_ARRAY
    for (int f = 0; f < m->nf; ++f) mesh_advise_huge(m->field[f], n * cells * sizeof(float));
}

int mesh_reserve(mesh_t *m, dp_tidx cap) { return mesh_grow(m, cap, 1); }

int mesh_reserve_unset(mesh_t *m, dp_tidx cap) { return mesh_grow(m, cap, 0); }

int mesh_drop_fields(mesh_t *m, dp_tidx cap)
{
    for (int f = 0; f < DP_MAX_FIELDS; ++f) {
        free(m->field[f]);
        m->field[f] = NULL;
    }
    const int nf = m->nf; /* mesh_grow grows the fields of m->nf: none here */
    m->nf = 0;
    const int rc = mesh_grow(m, cap, 0);
    m->nf = nf;
    return rc;
}

int mesh_fields_alloc(mesh_t *m)
{
    const size_t n = (size_t)m->cap * (size_t)mesh_cells(m);
    for (int f = 0; f < m->nf; ++f)
        if (!m->field[f] && !(m->field[f] = malloc((n > 0 ? n : 1) * sizeof(float)))) return -1;
    return 0;
}

static int mesh_alloc_zero(mesh_t *m, dp_tidx cap, int zero)
{
    m->cap = 0;
    m->ntiles = 0;
    DP_TILE_ARRAYS(NULL_ARRAY)
    for (int f = 0; f < DP_MAX_FIELDS; ++f) m->field[f] = NULL;
    if (mesh_grow(m, cap < 1 ? 1 : cap, zero) != 0) {
        mesh_free(m);
        return -1;
    }
    return 0;
}

int mesh_alloc(mesh_t *m, dp_tidx cap) { return mesh_alloc_zero(m, cap, 1); }

int mesh_alloc_unset(mesh_t *m, dp_tidx cap) { return mesh_alloc_zero(m, cap, 0); }

void mesh_free(mesh_t *m)
{
#define FREE_ARRAY(name, type, n) free(m->name);
    DP_TILE_ARRAYS(FREE_ARRAY)
#undef FREE_ARRAY
    DP_TILE_ARRAYS(NULL_ARRAY)
    for (int f = 0; f < DP_MAX_FIELDS; ++f) {
        free(m->field[f]);
        m->field[f] = NULL;
    }
    m->cap = m->ntiles = 0;
    m->nlevels = 0;
}

void mesh_index_levels(mesh_t *m)
{
    int nl = 0;
    for (dp_tidx t = 0; t < m->ntiles; ++t)
        if (m->level[t] + 1 > nl) nl = m->level[t] + 1;
    if (nl > DP_MAX_LEVELS) nl = DP_MAX_LEVELS;
    dp_tidx t = 0;
    for (int L = 0; L <= nl; ++L) {
        while (t < m->ntiles && m->level[t] < L) ++t;
        m->level_start[L] = t;
    }
    m->level_start[nl] = m->ntiles;
    m->nlevels = nl;
}

void mesh_index_children(mesh_t *m)
{
    memset(m->childmask, 0, (size_t)m->ntiles);
    for (dp_tidx t = 0; t < m->ntiles; ++t) {
        const int64_t p = m->parent[t];
        if (p < 0 || p >= m->ntiles) continue;
        m->childmask[p] |= (uint8_t)(1u << dp_tile_octant(m->coord + 3 * t));
    }
}

void mesh_copy_tiles(mesh_t *dst, dp_tidx at, const mesh_t *src, dp_tidx s, dp_tidx k)
{
    const size_t n = (size_t)k, cells = (size_t)mesh_cells(src);
#define COPY_ARRAY(name, type, per)                                                                            \
    memmove(dst->name + (size_t)at * (per), src->name + (size_t)s * (per), n * (per) * sizeof(type));
    DP_TILE_ARRAYS(COPY_ARRAY)
#undef COPY_ARRAY
    for (int f = 0; f < src->nf; ++f)
        memmove(dst->field[f] + (size_t)at * cells, src->field[f] + (size_t)s * cells, n * cells * sizeof(float));
}

int mesh_copy(mesh_t *dst, const mesh_t *src)
{
    *dst = *src;
    if (mesh_alloc(dst, src->ntiles) != 0) return -1;
    mesh_copy_tiles(dst, 0, src, 0, src->ntiles);
    dst->ntiles = src->ntiles;
    return 0;
}

int mesh_equal(const mesh_t *a, const mesh_t *b, char *why, size_t n)
{
    if (a->ntiles != b->ntiles || a->nf != b->nf || a->nlevels != b->nlevels) {
        snprintf(why, n, "%lld vs %lld tiles, %d vs %d levels", (long long)a->ntiles, (long long)b->ntiles, a->nlevels,
                 b->nlevels);
        return 0;
    }
    const size_t t = (size_t)a->ntiles, cells = (size_t)mesh_cells(a);
#define SAME(name, type, per)                                                                                  \
    if (memcmp(a->name, b->name, t * (per) * sizeof(type)) != 0) {                                             \
        snprintf(why, n, "%s differs", #name);                                                                 \
        return 0;                                                                                              \
    }
    DP_TILE_ARRAYS(SAME)
#undef SAME
    for (int f = 0; f < a->nf; ++f)
        if (memcmp(a->field[f], b->field[f], t * cells * sizeof(float)) != 0) {
            for (size_t i = 0; i < t * cells; ++i)
                if (memcmp(&a->field[f][i], &b->field[f][i], sizeof(float)) != 0) {
                    snprintf(why, n, "field %s differs first at tile %zu cell %zu (%.9g vs %.9g)", a->field_name[f],
                             i / cells, i % cells, a->field[f][i], b->field[f][i]);
                    break;
                }
            return 0;
        }
    return 1;
}
