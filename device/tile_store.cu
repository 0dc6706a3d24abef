/* tile_store.cu - the GPU tile store (dmesh_t): capacity from the deck, device and host memory;
 * allocation with the input mesh's upload, download into a host mesh. */
#include <nvtx3/nvToolsExt.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "gpu_common.cuh"

cudaError_t gpu_free_memory(size_t *free_bytes, size_t *total_bytes)
{
    const cudaError_t e = cudaMemGetInfo(free_bytes, total_bytes);
    if (e != cudaSuccess) return e;
    const char *env = getenv("DPAMR_TEST_DEVICE_FREE");
    if (env && env[0]) {
        char *end = NULL;
        const double v = strtod(env, &end);
        if (end != env && v >= 0 && v < (double)*free_bytes) *free_bytes = (size_t)v;
    }
    return cudaSuccess;
}

double dmesh_store_bytes(const dp_params *p, long long cap, int slots)
{
    return mesh_bytes((double)cap, p->dim, p->B, p->nf) + (double)ST_COUNT * sizeof(unsigned long long) +
           2.0 * (slots > 0 ? slots : 0) * sizeof(unsigned long long);
}

int gpu_capacity(const deck_t *d, const mesh_t *m, cap_need_fn need, const void *ctx, const char *need_err,
                 cap_t *c, char *err, size_t errlen)
{
    size_t fr = 0, total = 0;
    const cudaError_t e = gpu_free_memory(&fr, &total);
    if (e != cudaSuccess) {
        snprintf(err, errlen, "CUDA error in cudaMemGetInfo: %s", cudaGetErrorString(e));
        return -1;
    }
    cap_memory_t mem[2];
    memset(mem, 0, sizeof mem);
    mem[0].name = "device";
    mem[0].state = "free";
    mem[0].free_bytes = (double)fr;
    mem[0].share = d->share_device;
    mem[0].need = need;
    mem[0].ctx = ctx;
    cap_host_ctx_t hc;
    cap_host_memory(m, d->share_host, 0.0, &hc, &mem[1]);
    cap_compute(d->max_tiles, &d->p, m, mem, 2, c);
    if (need_err && need_err[0]) {
        snprintf(err, errlen, "%s", need_err);
        return -1;
    }
    const char *share = d->share_device > 1 ? " (this rank's share)" : "";
    if (c->by != CAP_BY_MEMORY) { /* max_tiles, or the bound: the device must hold it with the scratch */
        const double asked = need(c->cap, ctx), usable = cap_usable(&mem[0]);
        if (asked > usable) {
            snprintf(err, errlen,
                     "the device lacks memory for this run: %s; the tile store and the engine's scratch for %lld "
                     "tiles need %.2f GiB, the device has %.2f GiB free of %.2f GiB, %.2f GiB usable%s; %s",
                     c->limit, c->cap, asked / CAP_GIB, fr / CAP_GIB, total / CAP_GIB, usable / CAP_GIB, share,
                     d->max_tiles > 0 ? "lower max_tiles (0: as many tiles as fit)" : "lower max_level");
            return -1;
        }
    }
    if (c->cap < m->ntiles) {
        char advice[256];
        snprintf(err, errlen, "the input mesh has %lld tiles, more than the tile store can hold: %s; %s",
                 (long long)m->ntiles, c->limit, cap_advice(c, (long long)m->ntiles, advice, sizeof advice));
        return -1;
    }
    return 0;
}

/* ---- the store ----------------------------------------------------------------------------------- */

void dmesh_destroy(dmesh_t *M)
{
#define FREE_ARRAY(name, type, n) cudaFree(M->name);
    DP_TILE_ARRAYS(FREE_ARRAY)
#undef FREE_ARRAY
    for (int f = 0; f < DP_MAX_FIELDS; ++f) cudaFree(M->field[f]);
    cudaFree(M->stats);
    cudaFree(M->stamps);
    dmesh_zero(M);
}

cudaError_t dmesh_alloc_arrays(dmesh_t *M, size_t n, int nf, size_t cells)
{
    cudaError_t e = cudaSuccess;
#define ALLOC_ARRAY(name, type, per) \
    if (e == cudaSuccess) e = cudaMalloc((void **)&M->name, n * (per) * sizeof(type));
    DP_TILE_ARRAYS(ALLOC_ARRAY)
#undef ALLOC_ARRAY
    for (int f = 0; f < nf && e == cudaSuccess; ++f) e = cudaMalloc((void **)&M->field[f], n * cells * sizeof(float));
    return e;
}

int dmesh_create(dmesh_t *M, const mesh_t *m, long long cap, int timeline_slots, cudaStream_t s, char *err,
                 size_t errlen)
{
    const size_t n = (size_t)cap, cells = (size_t)mesh_cells(m), nt = (size_t)m->ntiles;
    dmesh_zero(M);
    M->cap = cap;
    const double need = mesh_bytes((double)n, m->dim, m->B, m->nf);
    size_t fr = 0, tot = 0;
    CK(gpu_free_memory(&fr, &tot));
    if (need > (double)fr) { /* gpu_capacity checked the run's need; this is the last guard */
        snprintf(err, errlen,
                 "the device lacks memory for the tile store: %lld tiles need %.3f GiB, %.3f GiB free of %.3f GiB "
                 "(lower max_tiles or max_level)",
                 cap, need / CAP_GIB, fr / CAP_GIB, tot / CAP_GIB);
        return -1;
    }
    CK(dmesh_alloc_arrays(M, n, m->nf, cells));
    CK(cudaMalloc((void **)&M->stats, ST_COUNT * sizeof(unsigned long long)));
    CK(cudaMemsetAsync(M->stats, 0, ST_COUNT * sizeof(unsigned long long), s));
    if (timeline_slots > 0) {
        CK(cudaMalloc((void **)&M->stamps, 2 * (size_t)timeline_slots * sizeof(unsigned long long)));
        /* start = max (0xff..), end = 0: every slot's min/max fold starts empty */
        CK(cudaMemsetAsync(M->stamps, 0xff, 2 * (size_t)timeline_slots * sizeof(unsigned long long), s));
        for (int i = 0; i < timeline_slots; ++i)
            CK(cudaMemsetAsync(M->stamps + 2 * i + 1, 0, sizeof(unsigned long long), s));
    }
    CK(copy_tile_arrays(*M, *m, 0, nt, m->nf, cells, cudaMemcpyHostToDevice, s));
    {
        const unsigned long long n0 = (unsigned long long)m->ntiles;
        CK(cudaMemcpyAsync(M->stats + ST_NTILES, &n0, sizeof n0, cudaMemcpyHostToDevice, s));
        CK(cudaStreamSynchronize(s)); /* n0 lives on this stack frame */
    }
    return 0;
fail:
    dmesh_destroy(M);
    return -1;
}

int dmesh_download(const dmesh_t *M, mesh_t *m, long long from, long long ntiles, cudaStream_t s, char *err,
                   size_t errlen)
{
    const size_t cells = (size_t)mesh_cells(m), a = (size_t)from, n = (size_t)(ntiles - from);
    if (mesh_reserve(m, ntiles) != 0) {
        snprintf(err, errlen, "out of host memory for %lld tiles", ntiles);
        return -1;
    }
    CK(copy_tile_arrays(*m, *M, a, n, m->nf, cells, cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    m->ntiles = ntiles;
    mesh_index_levels(m);
    return 0;
fail:
    return -1;
}
