/* engine_cdp.cu - variant cdp: refinement with CUDA dynamic parallelism (CDP2).
 *
 * refineTile grids launch refineTile child grids from the device, up to max_level (the depth cap
 * is ours: CDP2 enforces none that helps). A block of refineTile owns `G` consecutive tiles of one
 * level: it fills them (children only), flags their octants with the shared criterion, gives each
 * child a slot, writes the children's metadata and, below max_level, launches their grid. What one
 * device-side launch covers is the grain (deck key cdp_grain):
 *
 *   tile   G = 1: every refining tile launches a grid of its own children (fire-and-forget). The
 *          textbook shape and the baseline: one launch per refining tile.
 *   group  G = cdp_group: every block launches one grid for all children of its G tiles
 *          (KLAP's block-level aggregation), G children per child block.
 *   level  one grid per level: hostlaunch's level step (refineStep, engine_host.cu: groups of
 *          parents, a single-pass scan over the level by CUB's decoupled look-back, so children land
 *          in canonical order with no sort, their cells filled and flagged in shared memory), in
 *          hostlaunch's blocks (256 threads, STEP_MINB per SM, the grid one wave). Every step is
 *          a one-node graph instantiated for device launch; the last block of a step to start,
 *          after its wait, launches the next step's graph (step_chain, level_scan.cuh: a fire-
 *          and-forget sibling launch) when its level has tiles, and the next step's blocks wait
 *          until every block of this one has finished, as PDL's cudaGridDependencySynchronize
 *          would; every grid a wave of blocks. refine_cdp_level (engine_host.cu); this file holds
 *          tile and group.
 *
 * tile and group reserve child slots with an atomic counter: subtrees grow concurrently, levels
 * interleave, and the host sorts the new tiles to canonical order afterwards (dmesh_sort). That
 * sort is part of their refine time.
 *
 * Failure is never silent: a launch refused by the device runtime (pending-launch pool full, or
 * out of resources) is counted; a slot past the tile store's capacity is recorded with the count
 * that would have held it. The host turns either into an error naming the size that would hold it.
 *
 * PDL: the device runtime has no launch attributes, so device-side launches cannot use PDL. The
 * host-launched kernels of tile and group use it (the first refineTile grid and the sort's passes);
 * the level grain's start (initLevelScans, flagTiles, step 0) is one graph with plain edges, so the
 * pdl bit does not change it.
 */
#include <cub/block/block_scan.cuh>
#include <nvtx3/nvToolsExt.h>
#include <stdlib.h>
#include <string.h>

#include "device/gpu.h"
#include "device/gpu_common.cuh"
#include "src/timer.h"

/* tile and group with max_tiles = 0: the launch bound counts at most this many new tiles. Their
 * bound grows as the frontier's children times 2^dim per level, clamped by the free slots; with a
 * capacity from memory (hundreds of millions of tiles) that clamp would ask a pool of as many
 * launches, which costs build time, not only memory (docs/results.md: a pool 3.6x the bound doubled
 * it). Past it a run fails loudly, naming the pool that holds it; max_tiles or pool set it. */
#define POOL_ROOM_DEFAULT (1ll << 21)
/* Threads per block for the group grain (8 warps); the tile grain keeps tile_threads. */
#define CDP_THREADS 256

/* Warp scans, not CUB's default raking scan: the raking scan's 2.3 KB of shared memory per block
 * halves the blocks resident per SM in device-launched grids (see group_smem). */
typedef cub::BlockScan<long long, CDP_THREADS, cub::BLOCK_SCAN_WARP_SCANS> block_scan_t;

/* What every grid of the chain needs besides the tile store. Passed by value. */
typedef struct {
    int grain;                         /* DP_GRAIN_* */
    int G;                             /* tiles per block */
    unsigned smem;                     /* dynamic shared memory per block: G offsets, G masks, model tables */
    unsigned tab_off;                  /* byte offset of the model tables in it */
    int tab_tiles;                     /* model tables it holds (block_fill_tiles) */
} chain_t;

template <int FILL> __global__ void refineTile(dmesh_t M, chain_t C, long long first, long long n, int level, int fill);

/* Shared memory of one refineTile block: this static part (128 bytes) and, sized by the grain,
 * off[G] (first child slot of each tile, from base) and mask[G] (octant flags) in dynamic shared
 * memory. Keep it small: a grid launched from the device does not get the shared-memory
 * configuration a host launch picks for full occupancy. Measured on the H200 (bench2d, the level grain of
 * the time, refineTile's):
 * with 11.6 KB per block (fixed DP_MAX_GROUP arrays and the raking scan) device-launched grids held
 * 1.9 blocks per SM on average where host launches of the same kernel held 3.8 of the 4 the
 * registers allow, and ran up to 2.4x longer; at 160 bytes plus G * 9 they hold 3.5-3.9. */
struct group_smem {
    typename block_scan_t::TempStorage scan;
    long long base, total;       /* slot base, children of this group */
    unsigned smask;
};

/* One group: tiles [first + v*G, first + min((v+1)*G, n)) of `level`. Fill (children only), flag,
 * give the children slots, write their metadata, launch their grid. All threads of the block call
 * it. */
template <int FILL>
static __device__ __forceinline__ void refine_group(const dmesh_t &M, const chain_t &C, long long first, long long n,
                                                    int level, int fill, int G, long long v, group_smem &S,
                                                    long long *off_s, uint8_t *mask_s, double *tab)
{
    const dp_params *p = &c_params;
    const int tid = threadIdx.x, nthr = blockDim.x, lane = tid & 31, warp = tid >> 5, nwarps = nthr >> 5;
    const long long t0 = first + v * G;
    const int g = (int)(n - v * G < G ? n - v * G : G);

    /* 1. cells of new tiles: the block together, by bricks or through model tables */
    if (fill) {
        if (FILL == DP_FILL_PROLONG) block_fill_prolong(cta_team(), M, t0, g, NULL);
        else block_fill_model(cta_team(), M, t0, g, level, tab, C.tab_tiles, NULL);
    }
    if (level >= p->max_level) return; /* the depth cap */
    if (tid == 0) S.smask = 0;
    __syncthreads(); /* the criterion reads cells other threads wrote */

    /* 2. octant flags: the whole block on a lone tile, else one warp per tile */
    if (g == 1) {
        const unsigned m = block_octant_flags(M, t0, level, &S.smask);
        if (tid == 0) mask_s[0] = (uint8_t)m;
    } else {
        for (int i = warp; i < g; i += nwarps) {
            const unsigned m = warp_octant_flags(M, t0 + i, level, lane);
            if (lane == 0) mask_s[i] = (uint8_t)m;
        }
    }
    __syncthreads();
    for (int i = tid; i < g; i += nthr) M.childmask[t0 + i] = mask_s[i];

    /* 3. child offsets: an exclusive scan of the child counts over the block */
    if (C.grain == DP_GRAIN_TILE) {
        if (tid == 0) {
            off_s[0] = 0;
            S.total = __popc(mask_s[0]);
        }
    } else {
        const int per = (g + nthr - 1) / nthr, lo = tid * per < g ? tid * per : g, hi = lo + per < g ? lo + per : g;
        long long sum = 0, off;
        for (int i = lo; i < hi; ++i) sum += __popc(mask_s[i]);
        block_scan_t(S.scan).ExclusiveSum(sum, off);
        for (int i = lo; i < hi; ++i) {
            off_s[i] = off;
            off += __popc(mask_s[i]);
        }
        if (tid == nthr - 1) S.total = off; /* children of this group */
    }
    __syncthreads();

    /* 4. slots: [base + off[i], ...) for tile i's children, octant by octant */
    if (tid == 0) S.base = S.total ? (long long)atomicAdd(&M.stats[ST_NTILES], (unsigned long long)S.total) : 0;
    __syncthreads();
    const long long base = S.base, total = S.total;
    const long long end = base + total;
    const int fits = end <= M.cap;
    if (!fits && tid == 0) atomicMax(&M.stats[ST_OVERFLOW], (unsigned long long)end);

    /* 5. children's metadata: one warp per parent, one lane per octant */
    if (fits)
        for (int i = warp; i < g; i += nwarps) {
            const unsigned m = mask_s[i];
            if (lane >= (1 << p->dim) || !(m >> lane & 1)) continue;
            write_child(M, base + off_s[i] + __popc(m & ((1u << lane) - 1)), level + 1, t0 + i, lane);
        }

    /* 6. the child grid */
    __syncthreads(); /* every warp's metadata and cells are written before thread 0 launches */
    if (tid == 0 && total > 0 && fits) {
        __threadfence(); /* ... and visible to the child grid */
        refineTile<FILL><<<(unsigned)((total + G - 1) / G), nthr, C.smem, cudaStreamFireAndForget>>>(M, C, base, total,
                                                                                           level + 1, 1);
        dp_count_launch(M.stats, cudaGetLastError());
    }
}

/* Block b takes group b of C.G tiles. FILL: the deck's fill, an instance each (refine_kernel). */
template <int FILL>
__global__ void __launch_bounds__(CDP_THREADS, 4) refineTile(dmesh_t M, chain_t C, long long first, long long n,
                                                             int level, int fill)
{
    __shared__ group_smem S;
    extern __shared__ long long dyn_smem[]; /* off[C.G], then mask[C.G], then the model tables */
    cudaGridDependencySynchronize(); /* the host-launched grid: whatever ran before it on the stream */
    refine_group<FILL>(M, C, first, n, level, fill, C.G, blockIdx.x, S, dyn_smem, (uint8_t *)(dyn_smem + C.G),
                       (double *)((char *)dyn_smem + C.tab_off));
}

/* The refineTile instance of the deck's fill (an instance per fill, as hostlaunch's refineStep: the
 * other fill's code out of the kernel). */
static const void *refine_kernel(const dp_params *p)
{
    return p->fill == DP_FILL_PROLONG ? (const void *)refineTile<DP_FILL_PROLONG> : (const void *)refineTile<DP_FILL_MODEL>;
}

/* Upper bound on device-side launches, hence on launches pending at once, from the deck, the grain
 * and the frontier's data (tile and group; the level grain's is refine_steps'). The frontier's blocks
 * of G tiles launch a0 grids and create c1 children; level l then holds at most
 * n_l = min(c1 * 2^(dim*(l-Lp-1)), the level's whole domain, the free slots) tiles, in at most
 * B_l = min(n_l, A_{l-1} + ceil(n_l / G)) blocks (each of the A_{l-1} grids rounds up once), and
 * each block launches at most one grid: A_l <= B_l. Every launch creates at least one tile, so the
 * launches are also at most the free tile slots. For G = 1 this is one launch per refining tile.
 * Split in two: the frontier's a0 and c1 (a pass over the frontier's cells, once), and the bound at
 * a capacity (cheap: the capacity search evaluates it many times). */
static void pool_frontier(const deck_t *d, const mesh_t *m, int G, long long *a0_out, long long *c1_out)
{
    const dp_params *p = &d->p;
    const int Lp = m->nlevels - 1;
    long long a0 = 0, c1 = 0;
    if (Lp < p->max_level) {
        const dp_tidx s = m->level_start[Lp], e = m->level_start[Lp + 1];
        const long long nblocks = (e - s + G - 1) / G;
#pragma omp parallel for reduction(+ : a0, c1)
        for (long long b = 0; b < nblocks; ++b) {
            long long kids = 0;
            for (dp_tidx t = s + b * G; t < e && t < s + (b + 1) * G; ++t)
                kids += dp_popcount(tile_octant_flags(p, m, t));
            a0 += kids > 0;
            c1 += kids;
        }
    }
    *a0_out = a0;
    *c1_out = c1;
}

static long long pool_bound(const deck_t *d, const mesh_t *m, long long cap, int G, long long a0, long long c1)
{
    const dp_params *p = &d->p;
    const int Lp = m->nlevels - 1;
    if (Lp >= p->max_level) return 0;
    const long long roots = (long long)m->root[0] * m->root[1] * m->root[2];
    const long long room = d->max_tiles > 0 || cap - m->ntiles < POOL_ROOM_DEFAULT ? cap - m->ntiles
                                                                                  : POOL_ROOM_DEFAULT;
    long long bound = a0, grids = a0, per = c1;
    for (int l = Lp + 1; l < p->max_level && bound < room; ++l) {
        const long long domain = cap_shl(roots, p->dim * l);
        long long nl = per < domain ? per : domain;
        nl = nl < room ? nl : room;
        const long long blocks = grids + (nl + G - 1) / G;
        grids = blocks < nl ? blocks : nl;
        bound += grids;
        if (per < (1ll << 40)) per <<= p->dim;
    }
    return bound < room ? bound : room;
}

/* What refine_cdp allocates on the device at a capacity: the store with its timeline slots, the
 * pending-launch pool (the deck's pool, or the bound at this capacity; the runtime grants 32 at
 * least), and what the canonical sort allocates for every new tile (its CUB scratch asked of CUB, a
 * size query). */
typedef struct {
    const deck_t *d;
    const mesh_t *m;
    int G;
    long long a0, c1;
    cudaStream_t s;
    char *err;  /* a failed size query's message (need returns 1e300) */
} cdp_need_t;

/* Timeline slots of tile and group: the sort's three kernels. */
#define CDP_TIMELINE_SLOTS 3

static double cdp_need(long long cap, const void *vctx)
{
    const cdp_need_t *c = (const cdp_need_t *)vctx;
    const dp_params *p = &c->d->p;
    const long long n0 = c->m->ntiles;
    const long long bound = pool_bound(c->d, c->m, cap, c->G, c->a0, c->c1);
    long long pool = c->d->pool > 0 ? c->d->pool : bound;
    pool = pool > 32 ? pool : 32;
    double bytes = dmesh_store_bytes(p, cap, CDP_TIMELINE_SLOTS) + (double)pool * DP_POOL_SLOT_BYTES +
                   dbal_bytes(p, cap, 0);
    if (bytes > 1e16) return 1e300; /* no device holds it: no need to ask CUB about 2^62 items */
    if (cap > n0) {
        double sort = 0.0;
        const cudaError_t e = dmesh_sort_bytes(p, n0, cap - n0, c->s, &sort);
        if (e != cudaSuccess) {
            snprintf(c->err, 256, "CUDA error in the sort's size query: %s", cudaGetErrorString(e));
            return 1e300;
        }
        bytes += sort;
    }
    return bytes;
}

int refine_cdp(const deck_t *d, mesh_t *m, refine_report_t *r, char *err, size_t errlen)
{
    const dp_params *p = &d->p;
    const int grain = d->cdp_grain;
    if (grain == DP_GRAIN_LEVEL) return refine_cdp_level(d, m, r, err, errlen);
    const int G = grain == DP_GRAIN_TILE ? 1 : d->cdp_group;
    cudaStream_t s = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    dmesh_t M;
    memset(&M, 0, sizeof M);
    chain_t C;
    memset(&C, 0, sizeof C);
    const double t_start = timer_ms();
    const long long n0 = m->ntiles;
    const int Lp = m->nlevels - 1;
    const dp_tidx frontier = m->level_start[Lp], nfront = n0 - frontier;
    unsigned long long st[ST_COUNT];
    float build_ms = 0.0f, sort_ms = 0.0f, bal_ms = 0.0f;
    long long from = frontier; /* the first tile downloaded: 0 when balance added tiles */
    int rc = -1, pool_set = 0;
    size_t pool_before = 0;
    long long ntot = 0, pool = 0, bound = 0, cap = 0;
    cap_t capinfo;
    memset(&capinfo, 0, sizeof capinfo);
    dstage_t stage;
    memset(&stage, 0, sizeof stage);
    char need_err[256] = "";
    const unsigned threads = grain == DP_GRAIN_TILE ? (unsigned)tile_threads(p->dim, p->B) : CDP_THREADS;
    C.grain = grain;
    C.G = G;
    C.tab_off = (unsigned)((G * (sizeof(long long) + 1) + 15) & ~(size_t)15);
    {
        /* model tables: tiles filled per pass, one cell per thread (a group has at most G tiles) */
        const int cells = dp_cells(p->dim, p->B), tt = (int)threads > cells ? (int)threads / cells : 1;
        C.tab_tiles = tt < G ? tt : G;
    }
    C.smem = (unsigned)(C.tab_off + fill_table_bytes(p, C.tab_tiles));

    nvtxRangePushA("cdp: setup");
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    /* The capacity: max_tiles, or as many tiles as the device holds with the pool and the sort's
     * scratch at that capacity (and the host holds for the download); then the launch bound within
     * it. The pool stays the bound computed for the grain: the frontier's growth, clamped by the
     * free slots. */
    {
        cdp_need_t need;
        memset(&need, 0, sizeof need);
        need.d = d;
        need.m = m;
        need.G = G;
        need.s = s;
        need.err = need_err;
        pool_frontier(d, m, G, &need.a0, &need.c1);
        if (gpu_capacity(d, m, cdp_need, &need, need_err, &capinfo, err, errlen) != 0) goto fail;
        cap = capinfo.cap;
        r->capacity = cap;
        snprintf(r->capacity_limit, sizeof r->capacity_limit, "%s", capinfo.limit);
        bound = pool_bound(d, m, cap, G, need.a0, need.c1);
    }
    pool = d->pool > 0 ? d->pool : (bound > 0 ? bound : 1);
    r->pool_bound = bound;
    r->pool_size = pool;

    CK(pool_acquire(pool, &pool_before, &r->pool_size));
    pool_set = 1;
    r->pool_requested = pool;
    CK(upload_params(p, s));
    if (dmesh_create(&M, m, cap, CDP_TIMELINE_SLOTS, &stage, d->progress && !d->quiet, s, err, errlen) != 0) goto fail;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaStreamSynchronize(s));
    r->upload_ms = timer_ms() - t_start;
    nvtxRangePop();

    nvtxRangePushA("cdp: build (device-side launches)");
    CK(cudaEventRecord(e0, s));
    if (nfront > 0) {
        long long first = frontier, n = nfront;
        int level = Lp, fill = 0;
        void *ra[] = { &M, &C, &first, &n, &level, &fill };
        CK(launch_pdl_smem(refine_kernel(p), dim3((unsigned)((nfront + G - 1) / G)), dim3(threads), C.smem, s,
                           d->pdl, ra));
    }
    CK(cudaEventRecord(e1, s));
    CK(cudaEventSynchronize(e1)); /* a fault in any child grid surfaces here */
    CK(cudaEventElapsedTime(&build_ms, e0, e1));
    nvtxRangePop();
    CK(cudaMemcpyAsync(st, M.stats, sizeof st, cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));

    r->device_launches = (long long)st[ST_LAUNCHES];
    r->launch_failures = (long long)(st[ST_FAIL_PENDING] + st[ST_FAIL_RESOURCES] + st[ST_FAIL_OTHER]);
    if (launch_failures(st, r->pool_size, deck_grain_name(grain), bound,
                        r->pool_size < pool ? " (the device runtime granted less than the pool asked for: lower "
                                              "max_tiles to tighten the bound)"
                        : d->max_tiles == 0 && d->pool == 0 && bound >= POOL_ROOM_DEFAULT
                            ? " (with max_tiles = 0 the bound counts at most 2^21 new tiles: set pool, or max_tiles, "
                              "which the bound follows)"
                            : NULL,
                        err, errlen) != 0)
        goto fail;
    if (st[ST_OVERFLOW] > 0) {
        cap_overflow_message(&capinfo, (long long)st[ST_OVERFLOW], "tiles below the refused ones were not counted", err, errlen);
        goto fail;
    }
    ntot = (long long)st[ST_NTILES];

    /* tile and group append concurrently: sort to canonical order, part of the refine time */
    if (dmesh_sort(&M, n0, ntot - n0, d->pdl, s, &sort_ms, err, errlen) != 0) goto fail;
    if (ntot > n0) {
        /* the one direct PDL pair of the passes after the build: invertPerm -> gatherTiles */
        unsigned long long sst[6];
        CK(cudaMemcpyAsync(sst, M.stamps, sizeof sst, cudaMemcpyDeviceToHost, s));
        CK(cudaStreamSynchronize(s));
        r->gap_ns[0] = (double)((long long)sst[4] - (long long)sst[3]);
        r->ngaps = 1;
        if (d->trace[0]) {
            static const char *const names[] = { "sortKeys", "invertPerm", "gatherTiles" };
            if (timeline_write(d->trace, names, sst, CDP_TIMELINE_SLOTS, err, errlen) != 0) goto fail;
        }
    }
    /* balance = 2:1: the tiles balance needs, on the device, before the download */
    if (dbal_refine(d, m, &M, &ntot, &from, &capinfo, s, &bal_ms, err, errlen) != 0) goto fail;
    if (dmesh_download(&M, m, from, ntot, &stage, d->progress && !d->quiet, s, &r->download_ms, err, errlen) != 0)
        goto fail;
    /* refine time: from the input tiles on the device to the canonical (balanced) mesh on the device */
    r->refine_ms = build_ms + sort_ms + bal_ms;
    r->sort_ms = sort_ms;
    for (int L = Lp + 1; L < m->nlevels; ++L) {
        if (d->quiet) break;
        printf("  level %2d: %12lld tiles", L, (long long)(m->level_start[L + 1] - m->level_start[L]));
        if (r->level_ms[L] >= 0) printf("  %10.3f ms (device timeline)", r->level_ms[L]);
        printf("\n");
    }
    snprintf(r->note, sizeof r->note,
             "cdp grain %s (%d tile%s per launching block): build %.3f ms + sort %.3f ms, upload %.3f ms, "
             "download %.3f ms",
             deck_grain_name(grain), G, G > 1 ? "s" : "", build_ms, sort_ms, r->upload_ms, r->download_ms);
    r->total_ms = timer_ms() - t_start;
    rc = 0;
fail: /* success falls through: one cleanup path (an NVTX range may stay open on an error) */
    dmesh_destroy(&M);
    dstage_destroy(&stage);
    if (pool_set) pool_release(pool_before); /* its memory back for what runs next in this process (bench) */
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    if (s) cudaStreamDestroy(s);
    return rc;
}
