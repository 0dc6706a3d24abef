/* engine_cdp.cu - variant cdp: refinement with CUDA dynamic parallelism (CDP2).
 *
 * The host launches refineTile once over the tiles of the finest level present. Each block owns
 * one tile: it fills the tile (children only), flags its octants with the shared criterion and,
 * below max_level, reserves slots for its children with one atomicAdd and launches a child grid
 * of exactly that many blocks into cudaStreamFireAndForget. The child blocks do the same, so the
 * hierarchy grows depth-first in parallel, with no host round trip. The depth cap is ours
 * (max_level): CDP2 enforces none that helps.
 *
 * Failure is never silent: a launch refused by the device runtime (pending-launch pool full, or
 * out of resources) is counted; a reservation past the tile store's capacity is counted with the
 * slots it asked for. The host turns either into an error naming the size that would hold it.
 * New tiles land in reservation order, so the host sorts them to canonical order (dmesh_sort).
 */
#include <nvtx3/nvToolsExt.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "gpu_common.cuh"
#include "../src/timer.h"

/* Pool slot size measured on the H200 (../shared/design/gpu-facts.md): about 5.4 KB. */
#define POOL_SLOT_BYTES 5500ull

__global__ void refineTile(dmesh_t M, long long first, int level, int fill)
{
    __shared__ unsigned smask;
    const long long t = first + blockIdx.x;
    if (threadIdx.x == 0) smask = 0;
    if (fill) {
        /* Written before our launch by the parent's launching thread: visible here. */
        const int32_t c[3] = { M.coord[3 * t], M.coord[3 * t + 1], M.coord[3 * t + 2] };
        const int octant = (c[0] & 1) | ((c[1] & 1) << 1) | ((c[2] & 1) << 2);
        block_fill_tile(M, t, level, c, M.parent[t], octant);
    }
    __syncthreads(); /* our cells are written: the criterion reads neighbours of other threads */
    if (level >= c_params.max_level) return; /* the depth cap */
    const unsigned mask = block_octant_flags(M, t, level, &smask);
    if (threadIdx.x != 0) return;
    M.childmask[t] = (uint8_t)mask;
    if (!mask) return;
    const int n = dp_popcount(mask);
    const unsigned long long base = atomicAdd(&M.stats[ST_NTILES], (unsigned long long)n);
    if (base + n > (unsigned long long)M.cap) {
        atomicAdd(&M.stats[ST_OVERFLOW], (unsigned long long)n);
        return;
    }
    const int32_t pc[3] = { M.coord[3 * t], M.coord[3 * t + 1], M.coord[3 * t + 2] };
    long long ch = (long long)base;
    for (int o = 0; o < (1 << c_params.dim); ++o)
        if (mask >> o & 1) write_child(M, ch++, level + 1, pc, t, o);
    /* The __syncthreads() in block_octant_flags ordered the block's cell writes before this
     * thread; the fence makes them and the metadata above visible to the child grid. */
    __threadfence();
    refineTile<<<n, blockDim.x, 0, cudaStreamFireAndForget>>>(M, (long long)base, level + 1, 1);
    const cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) atomicAdd(&M.stats[ST_LAUNCHES], 1ull);
    else if (e == cudaErrorLaunchPendingCountExceeded) atomicAdd(&M.stats[ST_FAIL_PENDING], 1ull);
    else if (e == cudaErrorLaunchOutOfResources) atomicAdd(&M.stats[ST_FAIL_RESOURCES], 1ull);
    else atomicAdd(&M.stats[ST_FAIL_OTHER], 1ull);
}

/* Upper bound on device-side launches, hence on launches pending at once, from the deck and the
 * frontier's data: the frontier's refining tiles launch a0 grids and create c1 children; a tile
 * of a later level l < max_level launches at most one grid, and level l holds at most
 * min(c1 * 2^(dim*(l-Lp-1)), the level's whole domain) tiles. Every launch creates at least one
 * tile, so the launches are also at most the free tile slots. */
static long long pool_bound(const deck_t *d, const mesh_t *m, long long cap)
{
    const dp_params *p = &d->p;
    const int Lp = m->nlevels - 1;
    if (Lp >= p->max_level) return 0;
    const dp_tidx s = m->level_start[Lp], e = m->level_start[Lp + 1];
    long long a0 = 0, c1 = 0;
#pragma omp parallel for reduction(+ : a0, c1)
    for (dp_tidx t = s; t < e; ++t) {
        const unsigned mask = engine_octant_flags(p, m, t);
        a0 += mask != 0;
        c1 += dp_popcount(mask);
    }
    const long long roots = (long long)m->root[0] * m->root[1] * m->root[2];
    const long long room = cap - m->ntiles;
    long long bound = a0, per = c1;
    for (int l = Lp + 1; l < p->max_level && bound < room; ++l) {
        const long long domain = roots << (p->dim * l);
        bound += per < domain ? per : domain;
        if (per < (1ll << 40)) per <<= p->dim;
    }
    return bound < room ? bound : room;
}

int refine_cdp(const deck_t *d, mesh_t *m, refine_report_t *r, char *err, size_t errlen)
{
    const dp_params *p = &d->p;
    cudaStream_t s = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    dmesh_t M;
    memset(&M, 0, sizeof M);
    const double t_start = timer_ms();
    const long long n0 = m->ntiles;
    const int Lp = m->nlevels - 1;
    const dp_tidx frontier = m->level_start[Lp], nfront = n0 - frontier;
    unsigned long long st[ST_COUNT];
    float build_ms = 0.0f, sort_ms = 0.0f;
    int rc = -1, pool_set = 0;
    size_t pool_before = 0;
    long long ntot, failed, pool, bound, cap;
    size_t free_bytes = 0;

    /* Capacity first (memory-limited when max_tiles is 0), then the launch bound within it. */
    cap = gpu_tile_capacity(d, m, 0, &free_bytes, err, errlen);
    if (cap < 0) return -1;
    bound = pool_bound(d, m, cap);
    if (d->max_tiles == 0 && (double)cap * dmesh_tile_bytes(p) + (double)bound * POOL_SLOT_BYTES > 0.9 * free_bytes) {
        cap = gpu_tile_capacity(d, m, (size_t)bound * POOL_SLOT_BYTES, &free_bytes, err, errlen);
        if (cap < 0) return -1;
        bound = pool_bound(d, m, cap);
    }
    pool = d->pool > 0 ? d->pool : (bound > 0 ? bound : 1);
    r->pool_bound = bound;
    r->pool_size = pool;
    r->tile_capacity = cap;
    if (cap < n0) {
        snprintf(err, errlen, "the tile capacity %lld (%s) is below the %lld tiles of the input mesh", cap,
                 d->max_tiles ? "max_tiles" : "computed from device memory", n0);
        return -1;
    }

    nvtxRangePushA("cdp: setup");
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaDeviceGetLimit(&pool_before, cudaLimitDevRuntimePendingLaunchCount));
    CK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, (size_t)pool));
    pool_set = 1;
    {
        size_t got = 0;
        CK(cudaDeviceGetLimit(&got, cudaLimitDevRuntimePendingLaunchCount));
        r->pool_size = (long long)got; /* the device runtime may grant less than asked */
        r->pool_requested = pool;
    }
    CK(upload_params(p, s));
    if (dmesh_create(&M, m, cap, 3, s, err, errlen) != 0) goto fail;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    r->upload_ms = timer_ms() - t_start;
    nvtxRangePop();

    nvtxRangePushA("cdp: build (device-side launches)");
    CK(cudaEventRecord(e0, s));
    if (nfront > 0) {
        refineTile<<<(unsigned)nfront, tile_threads(p->dim, p->B), 0, s>>>(M, (long long)frontier, Lp, 0);
        CK_LAUNCH("refineTile");
    }
    CK(cudaEventRecord(e1, s));
    CK(cudaEventSynchronize(e1)); /* a fault in any child grid surfaces here */
    CK(cudaEventElapsedTime(&build_ms, e0, e1));
    nvtxRangePop();
    CK(cudaMemcpy(st, M.stats, sizeof st, cudaMemcpyDeviceToHost));

    r->device_launches = (long long)st[ST_LAUNCHES];
    failed = (long long)(st[ST_FAIL_PENDING] + st[ST_FAIL_RESOURCES] + st[ST_FAIL_OTHER]);
    r->launch_failures = failed;
    if (failed > 0) {
        snprintf(err, errlen,
                 "%lld of %lld device-side launches failed (%llu pending-launch pool full, %llu out of resources, "
                 "%llu other): the pending-launch pool of %lld is too small for this mesh; the computed bound "
                 "is %lld (run with pool=0 or pool >= %lld)%s. No output was written.",
                 failed, failed + r->device_launches, st[ST_FAIL_PENDING], st[ST_FAIL_RESOURCES], st[ST_FAIL_OTHER],
                 r->pool_size, bound, bound > failed + r->device_launches ? bound : failed + r->device_launches,
                 r->pool_size < pool ? " (the device runtime granted less than the pool asked for: lower max_tiles "
                                       "to tighten the bound)" : "");
        goto fail;
    }
    ntot = (long long)st[ST_NTILES];
    if (st[ST_OVERFLOW] > 0 || ntot > cap) {
        snprintf(err, errlen,
                 "tile store overflow on the device: capacity %lld tiles (max_tiles), at least %lld needed "
                 "(tiles below the refused ones were not counted); set max_tiles >= %lld",
                 cap, ntot, ntot);
        goto fail;
    }

    if (dmesh_sort(&M, n0, ntot - n0, d->pdl, s, &sort_ms, err, errlen) != 0) goto fail;
    if (ntot > n0) {
        /* the one direct PDL pair of the passes after the build: invertPerm -> gatherTiles */
        unsigned long long stamps[6];
        CK(cudaMemcpy(stamps, M.stamps, sizeof stamps, cudaMemcpyDeviceToHost));
        r->gap_ns[0] = (double)((long long)stamps[4] - (long long)stamps[3]);
        r->ngaps = 1;
        if (d->trace[0]) {
            static const char *const names[] = { "sortKeys", "invertPerm", "gatherTiles" };
            if (timeline_write(d->trace, names, stamps, 3, err, errlen) != 0) goto fail;
        }
    }
    {
        const double td = timer_ms();
        nvtxRangePushA("cdp: download");
        if (dmesh_download(&M, m, frontier, ntot, s, err, errlen) != 0) goto fail;
        nvtxRangePop();
        r->download_ms = timer_ms() - td;
    }
    r->refine_ms = build_ms;
    r->sort_ms = sort_ms;
    r->level_first = Lp + 1;
    r->level_last = m->nlevels - 1;
    for (int L = Lp + 1; L < m->nlevels; ++L)
        if (!d->quiet) printf("  level %2d: %12lld tiles\n", L, (long long)(m->level_start[L + 1] - m->level_start[L]));
    snprintf(r->note, sizeof r->note,
             "cdp: build %.3f ms (device-side launches, levels concurrent), sort %.3f ms, upload %.3f ms, "
             "download %.3f ms",
             build_ms, sort_ms, r->upload_ms, r->download_ms);
    r->total_ms = timer_ms() - t_start;
    rc = 0;
fail: /* success falls through: one cleanup path (an NVTX range may stay open on an error) */
    dmesh_destroy(&M);
    /* give the pool's memory back for whatever runs next in this process (bench) */
    if (pool_set) cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, pool_before);
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    if (s) cudaStreamDestroy(s);
    return rc;
}
