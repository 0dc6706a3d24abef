/* tile_store.cu - the GPU tile store (dmesh_t): bytes per tile, capacity from the deck and device
 * memory, allocation with the input mesh's upload, download into a host mesh. */
#include <nvtx3/nvToolsExt.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "gpu_common.cuh"

size_t dmesh_tile_bytes(const dp_params *p)
{
    /* level, coord, key, parent, childmask + fields; twice over for the sort's second buffers */
    return 2 * (size_t)mesh_bytes(1.0, p->dim, p->B, p->nf);
}

long long gpu_tile_capacity(const deck_t *d, const mesh_t *m, size_t reserve_bytes, size_t *free_bytes, char *err,
                            size_t errlen)
{
    size_t fr = 0, total = 0;
    const cudaError_t e = cudaMemGetInfo(&fr, &total);
    if (e != cudaSuccess) {
        snprintf(err, errlen, "CUDA error in cudaMemGetInfo: %s", cudaGetErrorString(e));
        return -1;
    }
    *free_bytes = fr;
    if (d->max_tiles > 0) return d->max_tiles;
    /* leave 10% and what the caller reserves (the launch pool) for the runtime */
    const double usable = (double)fr * 0.9 - (double)reserve_bytes;
    const long long fit = usable > 0 ? (long long)(usable / (double)dmesh_tile_bytes(&d->p)) : 0;
    return (long long)tile_capacity(d, m, fit > 0 ? fit : 1);
}

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
    const size_t need = (size_t)mesh_bytes((double)n, m->dim, m->B, m->nf);
    size_t fr = 0, tot = 0;
    CK(cudaMemGetInfo(&fr, &tot));
    if (need > fr) {
        snprintf(err, errlen,
                 "the device lacks memory for the tile store: %lld tiles need %.3f GiB, %.3f GiB free of %.3f GiB "
                 "(lower max_tiles or max_level)",
                 cap, need / 1073741824.0, fr / 1073741824.0, tot / 1073741824.0);
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
