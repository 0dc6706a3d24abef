/* tile_sort.cu - the canonical sort of tiles appended concurrently (cdp tile and group grains). */
#include <cub/device/device_radix_sort.cuh>
#include <nvtx3/nvToolsExt.h>
#include <stdlib.h>
#include <string.h>

#include "device/gpu.h"
#include "device/gpu_common.cuh"

/* ---- canonical sort ---------------------------------------------------------------------------
 * Tiles appended concurrently (cdp) are sorted by (level, Morton key). Three passes:
 *   sortKeys    builds (composite key, old index) pairs,
 *   CUB radix sort orders them,
 *   gatherTiles moves every tile to its sorted slot in second buffers, remapping parent indices
 *               through the inverse permutation written by invertPerm.
 * gatherTiles and invertPerm are launched through launch_pdl: their prologue (index arithmetic)
 * may overlap the previous kernel's tail; everything they read comes after the grid dependency
 * wait. CUB's radix sort kernels launch without the attribute. */

__global__ void sortKeys(dmesh_t M, long long first, long long n, uint64_t *keys, long long *idx)
{
    stamp_start(M.stamps, 0);
    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    cudaGridDependencySynchronize();
    cudaTriggerProgrammaticLaunchCompletion();
    if (i < n) {
        keys[i] = dp_sort_key(M.level[first + i], M.key[first + i]);
        idx[i] = first + i;
    }
    stamp_end(M.stamps, 0);
}

__global__ void invertPerm(unsigned long long *stamps, long long first, long long n, const long long *sorted_idx,
                           long long *newpos)
{
    stamp_start(stamps, 1);
    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    cudaGridDependencySynchronize();
    cudaTriggerProgrammaticLaunchCompletion();
    if (i < n) newpos[sorted_idx[i] - first] = first + i;
    stamp_end(stamps, 1);
}

/* One block per tile: metadata by thread 0, cells by all threads (coalesced). */
__global__ void gatherTiles(dmesh_t M, dmesh_t Out, long long first, long long n, const long long *sorted_idx,
                            const long long *newpos)
{
    stamp_start(M.stamps, 2);
    const int nf = c_params.nf, cells = dp_cells(c_params.dim, c_params.B);
    cudaGridDependencySynchronize();
    cudaTriggerProgrammaticLaunchCompletion();
    for (long long i = blockIdx.x; i < n; i += gridDim.x) {
        const long long src = sorted_idx[i], dst = first + i;
        if (threadIdx.x == 0) {
            copy_tile_meta(Out, dst, M, src); /* parent too; remapped next */
            const long long par = M.parent[src];
            Out.parent[dst] = par >= first ? newpos[par - first] : par;
        }
        for (int f = 0; f < nf; ++f) {
            const float *a = dmesh_field(M, f) + (size_t)src * cells;
            float *b = dmesh_field(Out, f) + (size_t)dst * cells;
            for (int c = threadIdx.x; c < cells; c += blockDim.x) b[c] = a[c];
        }
    }
    stamp_end(M.stamps, 2);
}

cudaError_t dmesh_sort_bytes(const dp_params *p, long long first, long long n, cudaStream_t s, double *bytes)
{
    size_t tmp_bytes = 0;
    *bytes = 0.0;
    if (n <= 0) return cudaSuccess;
    /* the size query: no pointer is read, nothing is launched */
    const cudaError_t e = cub::DeviceRadixSort::SortPairs(NULL, tmp_bytes, (const uint64_t *)NULL, (uint64_t *)NULL,
                                                          (const long long *)NULL, (long long *)NULL, (int64_t)n, 0,
                                                          64, s);
    if (e != cudaSuccess) return e;
    /* k_in, k_out, v_in, v_out, newpos (8 bytes each per sorted tile), CUB's scratch, the second
     * tile arrays for every tile (as dmesh_sort allocates them) */
    *bytes = 40.0 * (double)n + (double)tmp_bytes + mesh_bytes((double)(first + n), p->dim, p->B, p->nf);
    return cudaSuccess;
}

int dmesh_sort(dmesh_t *M, long long first, long long n, int pdl, cudaStream_t s, float *ms, char *err,
               size_t errlen)
{
    uint64_t *k_in = NULL, *k_out = NULL;
    long long *v_in = NULL, *v_out = NULL, *newpos = NULL;
    void *tmp = NULL;
    size_t tmp_bytes = 0;
    dmesh_t Out;
    dmesh_zero(&Out);
    cudaEvent_t e0 = NULL, e1 = NULL;
    int rc = -1;
    const size_t nn = (size_t)n;
    if (n <= 0) {
        *ms = 0.0f;
        return 0;
    }
    nvtxRangePushA("sort to canonical order");
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaMalloc((void **)&k_in, nn * 8));
    CK(cudaMalloc((void **)&k_out, nn * 8));
    CK(cudaMalloc((void **)&v_in, nn * 8));
    CK(cudaMalloc((void **)&v_out, nn * 8));
    CK(cudaMalloc((void **)&newpos, nn * 8));
    CK(cub::DeviceRadixSort::SortPairs(NULL, tmp_bytes, k_in, k_out, v_in, v_out, (int64_t)n, 0, 64, s));
    CK(cudaMalloc(&tmp, tmp_bytes));
    {
        /* second buffers hold only the sorted range; the tiles before `first` stay where they are */
        dp_params p;
        CK(cudaMemcpyFromSymbol(&p, c_params, sizeof p));
        const size_t cl = (size_t)dp_cells(p.dim, p.B), tot = (size_t)(first + n);
        CK(dmesh_alloc_arrays(&Out, tot, p.nf, cl));
        Out.cap = (long long)tot;

        CK(cudaEventRecord(e0, s));
        const unsigned threads = 256, blocks = (unsigned)((nn + threads - 1) / threads);
        void *a1[] = { (void *)M, &first, &n, &k_in, &v_in };
        CK(launch_pdl((const void *)sortKeys, dim3(blocks), dim3(threads), s, pdl, a1));
        CK(cub::DeviceRadixSort::SortPairs(tmp, tmp_bytes, k_in, k_out, v_in, v_out, (int64_t)n, 0, 64, s));
        void *a2[] = { &M->stamps, &first, &n, &v_out, &newpos };
        CK(launch_pdl((const void *)invertPerm, dim3(blocks), dim3(threads), s, pdl, a2));
        const unsigned gblocks = (unsigned)(nn < 65536 ? nn : 65536);
        void *a3[] = { (void *)M, &Out, &first, &n, &v_out, &newpos };
        CK(launch_pdl((const void *)gatherTiles, dim3(gblocks), dim3(tile_threads(p.dim, p.B)), s, pdl, a3));
        CK(cudaEventRecord(e1, s));
        CK(cudaEventSynchronize(e1));
        CK(cudaEventElapsedTime(ms, e0, e1));
        /* copy the unsorted prefix [0, first) over, then swap buffers */
        const size_t f0 = (size_t)first;
        CK(copy_tile_arrays(Out, *M, 0, f0, p.nf, cl, cudaMemcpyDeviceToDevice, s));
        CK(cudaStreamSynchronize(s));
        dmesh_replace(M, &Out);
    }
    rc = 0;
fail: /* success falls through: one cleanup path */
    cudaFree(k_in);
    cudaFree(k_out);
    cudaFree(v_in);
    cudaFree(v_out);
    cudaFree(newpos);
    cudaFree(tmp);
    dmesh_destroy(&Out);
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    nvtxRangePop();
    return rc;
}
