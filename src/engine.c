/* engine.c - variant dispatch (the CPU engine or the device library) and level 0 from the model. */
#include "src/engine.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/gpu.h"
#include "src/engine_cpu.h"
#include "src/regrid_cpu.h"
#include "src/tile.h"

int engine_beyond_max_level(const deck_t *d, int nlevels, char *err, size_t n)
{
    if (nlevels - 1 <= d->p.max_level) return 0;
    snprintf(err, n, "mesh_file = %.1000s has levels up to %d but max_level = %d: no tile may lie beyond max_level "
             "(raise max_level to at least %d)", d->mesh_file, nlevels - 1, d->p.max_level, nlevels - 1);
    return 1;
}

int engine_refine(int variant, const deck_t *d, mesh_t *m, refine_report_t *r, char *err, size_t errlen)
{
    return engine_refine_valid(variant, d, m, r, NULL, NULL, err, errlen);
}

int engine_refine_valid(int variant, const deck_t *d, mesh_t *m, refine_report_t *r, const dp_vreq *q, dp_vdev *res,
                        char *err, size_t errlen)
{
    if (res) {
        memset(res, 0, sizeof *res);
        snprintf(res->note, sizeof res->note, "validated on the CPU");
    }
    memset(r, 0, sizeof *r);
    r->variant = variant;
    r->pdl = d->pdl;
    r->device_launches = r->pool_size = r->pool_bound = -1;
    for (int L = 0; L < DP_MAX_LEVELS; ++L) r->level_ms[L] = -1.0;
    if (engine_beyond_max_level(d, m->nlevels, err, errlen)) return -1;
    if (variant == DP_VARIANT_CPU) return refine_cpu(d, m, r, err, errlen);
    if (q && res) return gpu_refine_valid(variant, d, m, r, q, res, err, errlen);
    return gpu_refine(variant, d, m, r, err, errlen);
}

int engine_regrid_begin(engine_regrids_t *e, int variant, const deck_t *d, const mesh_t *m, double *upload_ms,
                        char *err, size_t errlen)
{
    memset(e, 0, sizeof *e);
    e->variant = variant;
    e->d = d;
    *upload_ms = 0.0;
    if (engine_beyond_max_level(d, m->nlevels, err, errlen)) return -1;
    if (variant == DP_VARIANT_CPU) return 0;
    if (variant != DP_VARIANT_CDP && variant != DP_VARIANT_HOSTLAUNCH) {
        snprintf(err, errlen, "engine_regrid: variant %s has no regrid (cpu, hostlaunch or cdp)",
                 deck_variant_name(variant));
        return -1;
    }
    /* an empty part stays empty: nothing to put on a device (regrid_cpu gives its report) */
    if (m->ntiles == 0) return (e->empty = 1), 0;
    return gpu_regrid_open(variant, d, m, &e->g, upload_ms, err, errlen);
}

int engine_regrid_next(engine_regrids_t *e, mesh_t *m, double t, regrid_report_t *r, char *err, size_t errlen)
{
    if (e->variant == DP_VARIANT_CPU || e->empty) {
        const int rc = regrid_cpu(e->d, m, &e->spare, t, r, err, errlen);
        r->device_launches = -1;
        return rc;
    }
    e->stale = 1;
    return gpu_regrid_step(e->g, t, r, err, errlen);
}

int engine_regrid_sync(engine_regrids_t *e, mesh_t *m, double *download_ms, char *err, size_t errlen)
{
    *download_ms = 0.0;
    if (!e->stale) return 0;
    if (gpu_regrid_download(e->g, m, download_ms, err, errlen) != 0) return -1;
    e->stale = 0;
    return 0;
}

void engine_regrid_end(engine_regrids_t *e)
{
    gpu_regrid_close(e->g);
    e->g = NULL;
    mesh_free(&e->spare);
}

int engine_regrid(int variant, const deck_t *d, mesh_t *m, double t, regrid_report_t *r, char *err, size_t errlen)
{
    engine_regrids_t e;
    double up = 0.0, down = 0.0;
    memset(r, 0, sizeof *r);
    if (engine_regrid_begin(&e, variant, d, m, &up, err, errlen) != 0) return -1;
    int rc = engine_regrid_next(&e, m, t, r, err, errlen);
    if (rc == 0) rc = engine_regrid_sync(&e, m, &down, err, errlen);
    engine_regrid_end(&e);
    r->transfer_ms += up + down;
    return rc;
}

static int cmp_key(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int engine_make_level0(const deck_t *d, mesh_t *m, char *err, size_t errlen)
{
    const dp_params *p = &d->p;
    memset(m, 0, sizeof *m);
    m->dim = p->dim;
    m->B = p->B;
    m->nf = p->nf;
    for (int a = 0; a < 3; ++a) {
        m->root[a] = d->root[a];
        m->origin[a] = p->origin[a];
    }
    m->h0 = p->h0;
    for (int f = 0; f < p->nf; ++f) snprintf(m->field_name[f], DP_NAME_LEN, "%s", d->field_name[f]);
    const dp_tidx n = (dp_tidx)d->root[0] * d->root[1] * d->root[2];
    if (mesh_alloc(m, n) != 0) {
        snprintf(err, errlen, "out of host memory for %lld root tiles", (long long)n);
        return -1;
    }
    /* Root tiles in Morton order: sort (key, linear index) pairs packed as keys. */
    uint64_t *keys = malloc((size_t)n * sizeof *keys);
    if (!keys) {
        mesh_free(m);
        snprintf(err, errlen, "out of host memory for %lld root tiles", (long long)n);
        return -1;
    }
    dp_tidx t = 0;
    for (int k = 0; k < d->root[2]; ++k)
        for (int j = 0; j < d->root[1]; ++j)
            for (int i = 0; i < d->root[0]; ++i) keys[t++] = dp_morton(p->dim, i, j, k);
    qsort(keys, (size_t)n, sizeof *keys, cmp_key);
    const dp_tiles T = mesh_tiles(m);
    for (t = 0; t < n; ++t) {
        int32_t c[3];
        dp_morton_decode(p->dim, keys[t], c);
        dp_write_tile(T, p->dim, t, 0, c, -1);
        assert(m->key[t] == keys[t]);
    }
    free(keys);
    m->ntiles = n;
#pragma omp parallel for schedule(dynamic, 16)
    for (dp_tidx i = 0; i < n; ++i) tile_fill(p, m, i, -1, 0);
    mesh_index_levels(m);
    return 0;
}
