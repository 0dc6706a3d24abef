/* engine_cpu.c - the CPU reference engine: plain C, OpenMP across tiles. The oracle the GPU
 * engines must match bit for bit.
 *
 * Level by level from the finest level present: flag octants of every tile, exclusive-scan the
 * child counts, then create the children parent by parent, octant by octant. Because a child's
 * Morton key is (parent key << dim) | octant, this order is already the canonical order.
 */
#include "src/engine_cpu.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/balance.h"
#include "src/capacity.h"
#include "src/tile.h"
#include "src/timer.h"

/* Build level L+1 from the tiles of level L. Returns the number of new tiles, or -1. */
static dp_tidx build_level(const deck_t *d, mesh_t *m, int L, const cap_t *c, char *err, size_t errlen)
{
    const dp_params *p = &d->p;
    const dp_tidx s = m->level_start[L], n = m->level_start[L + 1] - s;
    assert(L == m->nlevels - 1 && m->level_start[L + 1] == m->ntiles); /* L is the finest level */
    uint8_t *mask = malloc((size_t)(n > 0 ? n : 1));
    dp_tidx *off = malloc((size_t)(n + 1) * sizeof *off);
    if (!mask || !off) {
        free(mask);
        free(off);
        snprintf(err, errlen, "out of host memory flagging level %d (%lld tiles)", L, (long long)n);
        return -1;
    }
#pragma omp parallel for schedule(dynamic, 64)
    for (dp_tidx i = 0; i < n; ++i) mask[i] = (uint8_t)tile_octant_flags(p, m, s + i);
    off[0] = 0;
    for (dp_tidx i = 0; i < n; ++i) off[i + 1] = off[i] + dp_popcount(mask[i]);
    const dp_tidx total = off[n], first = m->ntiles;
    if (first + total > c->cap) {
        char advice[256];
        snprintf(err, errlen, "tile store overflow at level %d: at least %lld tiles needed, capacity %lld: %s; %s",
                 L + 1, (long long)(first + total), c->cap, c->limit,
                 cap_advice(c, (long long)(first + total), advice, sizeof advice));
        free(mask);
        free(off);
        return -1;
    }
    /* not cleared: every new tile's metadata (dp_write_child) and cells (tile_fill) are written
     * below, so their pages are first touched by the threads that fill them, not by a memset */
    if (mesh_reserve_unset(m, first + total) != 0) {
        snprintf(err, errlen, "out of host memory: %lld tiles need %.2f GiB", (long long)(first + total),
                 mesh_bytes((double)(first + total), m->dim, m->B, m->nf) / 1073741824.0);
        free(mask);
        free(off);
        return -1;
    }
    const dp_tiles T = mesh_tiles(m);
#pragma omp parallel for schedule(dynamic, 16)
    for (dp_tidx i = 0; i < n; ++i) {
        dp_tidx ch = first + off[i];
        const dp_tidx par = s + i;
        for (int o = 0; o < (1 << p->dim); ++o) {
            if (!(mask[i] >> o & 1)) continue;
            dp_write_child(T, p->dim, ch, L + 1, par, o);
            /* canonical order: a child's key is its parent's, shifted, with its octant below */
            assert(m->key[ch] == ((m->key[par] << p->dim) | (uint64_t)o));
            tile_fill(p, m, ch, par, o);
            ++ch;
        }
        assert(ch == first + off[i + 1]);
        m->childmask[par] = mask[i];
    }
    m->ntiles = first + total;
    if (total > 0) {
        m->nlevels = L + 2;
        m->level_start[L + 2] = m->ntiles;
    }
    free(mask);
    free(off);
    return total;
}

int refine_cpu(const deck_t *d, mesh_t *m, refine_report_t *r, char *err, size_t errlen)
{
    const double t0 = timer_ms();
    /* the capacity: max_tiles, or what the host's memory holds (the store grows as levels come) */
    cap_host_ctx_t hc;
    cap_memory_t host;
    cap_host_memory(m, d->share_host, 0.0, &hc, &host);
    cap_t c;
    cap_compute(d->max_tiles, &d->p, m, -1, &host, 1, &c);
    r->capacity = c.cap;
    snprintf(r->capacity_limit, sizeof r->capacity_limit, "%s", c.limit);
    for (int L = m->nlevels - 1; L < d->p.max_level; ++L) {
        const double tl = timer_ms();
        const dp_tidx added = build_level(d, m, L, &c, err, errlen);
        if (added < 0) return -1;
        if (added == 0) break;
        r->level_ms[L + 1] = timer_ms() - tl;
        if (!d->quiet) printf("  level %2d: %12lld tiles  %10.2f ms\n", L + 1, (long long)added, r->level_ms[L + 1]);
        fflush(stdout);
    }
    if (d->p.balance == DP_BALANCE_2TO1) { /* the tiles 2:1 balance needs, after the criterion's */
        const double tb = timer_ms();
        balance_report_t b;
        if (balance_close(&d->p, m, NULL, c.cap, &b, err, errlen) != 0) return -1;
        if (!d->quiet) printf("  balance 2:1: %9lld tiles added  %10.2f ms\n", b.added, timer_ms() - tb);
    }
    r->refine_ms = r->total_ms = timer_ms() - t0;
    return 0;
}
