/* engine_cdp.cu - variant cdp: refinement with CUDA dynamic parallelism (CDP2).
 *
 * Grids launch their children's grids from the device, up to max_level (the depth cap is ours: CDP2
 * enforces none that helps). What one device-side launch covers is the grain (deck key cdp_grain):
 *
 *   tile   refineTile, G = 1: a block owns one tile of a level: it fills it (children only), flags
 *          its octants with the shared criterion, gives each child a slot, writes the children's
 *          metadata and, below max_level, launches their grid (fire-and-forget). The textbook shape
 *          and the baseline: one launch per refining tile.
 *   group  refineTile, G = cdp_group: the same per block of G tiles; every block launches one grid
 *          for all children of its G tiles (KLAP's block-level aggregation), G children per child block.
 *   level  one grid per level step, refineStepCdp: hostlaunch's level step (step_common.cuh,
 *          step_groups: groups of parents by ticket, CUB's decoupled look-back over the level, the
 *          block that owns a group writes, fills and flags its children), so children land in
 *          canonical order by construction, with no sort. The block that took the level's last
 *          group knows the level's child count and tail-launches the next step's grid
 *          (cudaStreamTailLaunch: it runs once every block of this grid has finished). The host
 *          launches initLevelScans, flagTilesCdp (the input's finest level) and the first step.
 *
 * tile and group reserve child slots with an atomic counter: subtrees grow concurrently, levels
 * interleave, and the host sorts the new tiles to canonical order afterwards (dmesh_sort). That
 * sort is part of their refine time.
 *
 * Failure is never silent: a launch refused by the device runtime (pending-launch pool full, or
 * out of resources) is counted; a slot past the tile store's capacity is recorded with the count
 * that would have held it; a level step with more groups than its scan region (sized from the bound
 * U_k) is counted. The host turns each into an error naming the size that would hold it.
 *
 * PDL: the device runtime has no launch attributes, so device-side launches cannot use PDL. The
 * host-launched part uses launch_pdl: initLevelScans -> flagTilesCdp -> refineStepCdp (level grain)
 * and the sort's passes.
 */
#include <nvtx3/nvToolsExt.h>
#include <stdlib.h>
#include <string.h>

#include "device/gpu.h"
#include "device/gpu_common.cuh"
#include "device/level_scan.cuh"
#include "device/step_common.cuh"
#include "src/timer.h"

/* Pool slot size measured on the H200 (../shared/design/gpu-facts.md): about 5.4 KB. */
#define POOL_SLOT_BYTES 5500ull
/* tile and group with max_tiles = 0: the launch bound counts at most this many new tiles. Their
 * bound grows as the frontier's children times 2^dim per level, clamped by the free slots; with a
 * capacity from memory (hundreds of millions of tiles) that clamp would ask a pool of as many
 * launches, which costs build time, not only memory (docs/results.md: a pool 3.6x the bound doubled
 * it). Past it a run fails loudly, naming the pool that holds it; max_tiles or pool set it. */
#define POOL_ROOM_DEFAULT (1ll << 21)
/* Threads per block for the group grain (8 warps); the tile grain keeps tile_threads. */
#define CDP_THREADS 256
/* Shared memory per SM a device-launched grid can count on. Measured on the H200 (docs/results.md,
 * Launch grain): with 11.6 KB per block, grids launched from the device held 2 blocks per SM where the
 * registers allowed 4 (host launches of the same kernel: 3.1-3.9), and the carveout attribute changed
 * nothing for device launches: the configuration they run in holds 2 such blocks (with the 1 KB the
 * runtime reserves per block: 25.2 KB) but not 3 (37.8 KB). The level grain's step keeps its blocks
 * per SM times (static + dynamic + 1 KB) within the lower end of that (level_step_config). */
#define CDP_DEVICE_SMEM_SM (24u << 10)
#define CDP_SMEM_RESERVED_BLOCK 1024u

/* Warp scans, not CUB's default raking scan: the raking scan's 2.3 KB of shared memory per block
 * halves the blocks resident per SM in device-launched grids (see group_smem). */
typedef cub::BlockScan<long long, CDP_THREADS, cub::BLOCK_SCAN_WARP_SCANS> block_scan_t;

/* What every refineTile grid of the chain (tile, group) needs besides the tile store. Passed by value. */
typedef struct {
    int grain;                         /* DP_GRAIN_TILE or DP_GRAIN_GROUP */
    int G;                             /* tiles per block */
    unsigned smem;                     /* dynamic shared memory per block: G offsets, G masks, model tables */
    unsigned tab_off;                  /* byte offset of the model tables in it */
    int tab_tiles;                     /* model tables it holds (block_fill_tiles) */
} chain_t;

/* What every refineStepCdp grid of the level grain needs besides the tile store. Passed by value. */
typedef struct {
    level_scans_t LS;                  /* tickets (groups taken per step k), scan regions */
    long long slots;                   /* blocks resident at once (SMs x blocks per SM): a step's grid at most */
    int Lp, nlev;                      /* the input's finest level, the level steps */
    int tp;                            /* tiles filled per pass */
    unsigned smem;                     /* dynamic shared memory per block: tp model tables, tp tiles' criterion cells */
} step_chain_t;

__global__ void refineTile(dmesh_t M, chain_t C, long long first, long long n, int level, int fill);

static __device__ void count_launch(const dmesh_t &M, cudaError_t e)
{
    if (e == cudaSuccess) atomicAdd(&M.stats[ST_LAUNCHES], 1ull);
    else if (e == cudaErrorLaunchPendingCountExceeded) atomicAdd(&M.stats[ST_FAIL_PENDING], 1ull);
    else if (e == cudaErrorLaunchOutOfResources) atomicAdd(&M.stats[ST_FAIL_RESOURCES], 1ull);
    else atomicAdd(&M.stats[ST_FAIL_OTHER], 1ull);
}

/* Shared memory of one refineTile block: this static part (160 bytes) and, sized by the grain,
 * off[G] (first child slot of each tile, from base) and mask[G] (octant flags) in dynamic shared
 * memory. Keep it small: a grid launched from the device does not get the shared-memory
 * configuration a host launch picks for full occupancy. Measured on the H200 (bench2d, level grain):
 * with 11.6 KB per block (fixed DP_MAX_GROUP arrays and the raking scan) device-launched grids held
 * 1.9 blocks per SM on average where host launches of the same kernel held 3.8 of the 4 the
 * registers allow, and ran up to 2.4x longer; at 160 bytes plus G * 9 they hold 3.5-3.9. */
struct group_smem {
    typename block_scan_t::TempStorage scan;
    long long v, base, total;    /* group index, slot base, children of this group */
    unsigned smask;
};

/* One group: tiles [first + v*G, first + min((v+1)*G, n)) of `level`. Fill (children only), flag,
 * give the children slots, write their metadata, launch their grid. All threads of the block call
 * it. */
static __device__ __forceinline__ void refine_group(const dmesh_t &M, const chain_t &C, long long first, long long n,
                                                    int level, int fill, int G, long long v, group_smem &S,
                                                    long long *off_s, uint8_t *mask_s, double *tab)
{
    const dp_params *p = &c_params;
    const int tid = threadIdx.x, nthr = blockDim.x, lane = tid & 31, warp = tid >> 5;
    const int nwarps = nthr >> 5;
    const long long t0 = first + v * G;
    const int g = (int)(n - v * G < G ? n - v * G : G);

    /* 1. cells of new tiles: the block together, by bricks or through model tables */
    if (fill) block_fill_tiles(M, t0, g, level, tab, C.tab_tiles, NULL);
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
        long long sum = 0, off, agg;
        for (int i = lo; i < hi; ++i) sum += __popc(mask_s[i]);
        block_scan_t(S.scan).ExclusiveSum(sum, off, agg);
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
        refineTile<<<(unsigned)((total + G - 1) / G), nthr, C.smem, cudaStreamFireAndForget>>>(M, C, base, total,
                                                                                           level + 1, 1);
        count_launch(M, cudaGetLastError());
    }
}

/* tile, group: block b takes group b of C.G tiles. */
__global__ void __launch_bounds__(CDP_THREADS, 4) refineTile(dmesh_t M, chain_t C, long long first, long long n,
                                                             int level, int fill)
{
    __shared__ group_smem S;
    extern __shared__ long long dyn_smem[]; /* off[C.G], then mask[C.G], then the model tables */
    cudaGridDependencySynchronize(); /* the host-launched grid: the upload before it */
    refine_group(M, C, first, n, level, fill, C.G, (long long)blockIdx.x, S, dyn_smem, (uint8_t *)(dyn_smem + C.G),
                 (double *)((char *)dyn_smem + C.tab_off));
}

/* ---- level grain ------------------------------------------------------------------------------ */

/* The input's finest level's octant flags (flag_level: one warp per tile), before the first step.
 * Timeline slot 0. */
__global__ void flagTilesCdp(dmesh_t M, long long s, long long n, int level, int early)
{
    stamp_start(M.stamps, 0);
    cudaGridDependencySynchronize(); /* the scan states are reset */
    if (early) cudaTriggerProgrammaticLaunchCompletion();
    flag_level(M, s, n, level);
    if (!early) cudaTriggerProgrammaticLaunchCompletion();
    stamp_end(M.stamps, 0);
}

/* Blocks of the grid of a level step of n parents: one per parent up to the resident blocks. */
static __host__ __device__ __forceinline__ long long step_blocks(long long n, long long slots)
{
    return n < slots ? n : slots;
}

/* What refineStepCdp's block with the level's last group does with the next level's end (thread 0,
 * right after its scan): keep it in shared memory for after the block's loop. */
struct step_end_keep {
    long long *next;
    __device__ void operator()(long long n) const { *next = n; }
};

/* Level step k: the children of level Lp + k's tiles [s, e) (step_groups, as hostlaunch's
 * refineStep). Thread 0 of the block that took the level's last group then records the store's end
 * and, below the last step, launches step k + 1 over the children into the tail-launch stream, which
 * starts it once every block of this grid has finished (so every child's metadata, cells and flags
 * are written and visible); first it checks that the step's groups fit the scan region sized for it
 * (ST_BOUND: a bug in the bound). The launch is after the loop, not in it (step_groups' `last`): with
 * the device runtime's call inside the loop refineStepCdp<prolong> spilled 72 bytes, after it 32
 * (both while level and flag were computed from C; now none). Timeline slot
 * 1 + k. GFLAGS: the children's flags from global memory (one tile's criterion cells past the
 * shared-memory budget, level_step_config). level = Lp + k and flag = (k + 1 < nlev: the children are
 * below max_level) are parameters rather than computed from C: computed, they cost
 * refineStepCdp<prolong> 32 bytes of spills under its 64 registers. BPS: the blocks per SM its
 * registers allow (__launch_bounds__): 4 (64 registers) with prolong; with the model 4 by default
 * (64 registers, no spills; hostlaunch's refineStep<model> takes 77 for 3 blocks, and the level
 * grain's earlier refineTile, at 64 registers and 4 blocks, filled bench3d's model faster than it:
 * 2.645 against 2.909 ms at aa9f257), 3 with DPAMR_CDP_MODEL_BPS=3 (80 registers), to compare. */
template <int FILL, int GFLAGS, int BPS>
__global__ void __launch_bounds__(STEP_THREADS, BPS)
    refineStepCdp(dmesh_t M, step_chain_t C, long long s, long long e, int k, int level, int flag)
{
    __shared__ step_smem Sh;
    __shared__ long long next_s;
    extern __shared__ double tab[];
    stamp_start(M.stamps, 1 + k);
    if (threadIdx.x == 0) next_s = -1;
    cudaGridDependencySynchronize(); /* step 0, host-launched: the frontier's flags, the scans' resets */
    step_groups<FILL, GFLAGS>(M, C.LS, s, e, level, k, flag, C.tp, Sh, tab,
                              GFLAGS ? NULL : step_crit<FILL>(tab, C.tp), step_end_keep{ &next_s });
    const long long next = threadIdx.x == 0 ? next_s : -1; /* thread 0 wrote it, thread 0 reads it */
    if (next > e) { /* thread 0 of the last group's block; else no children, or they did not fit (ST_OVERFLOW) */
        atomicMax(&M.stats[ST_NTILES], (unsigned long long)next);
        if (flag) { /* else the children are on max_level */
            const long long n = next - e, nb = step_blocks(n, C.slots), P = step_group(n, nb);
            if ((n + P - 1) / P > C.LS.nb[k + 1]) {
                atomicAdd(&M.stats[ST_BOUND], 1ull);
            } else {
                refineStepCdp<FILL, GFLAGS, BPS><<<(unsigned)nb, STEP_THREADS, C.smem, cudaStreamTailLaunch>>>(
                    M, C, e, next, k + 1, level + 1, k + 2 < C.nlev);
                count_launch(M, cudaGetLastError());
            }
        }
    }
    stamp_end(M.stamps, 1 + k);
}

/* The level step's kernel for the deck's fill, flags and blocks per SM (prolong: 4 only). */
static const void *step_kernel(int fill, int gflags, int bps)
{
    if (fill == DP_FILL_PROLONG)
        return gflags ? (const void *)refineStepCdp<DP_FILL_PROLONG, 1, 4>
                      : (const void *)refineStepCdp<DP_FILL_PROLONG, 0, 4>;
    if (bps == 3)
        return gflags ? (const void *)refineStepCdp<DP_FILL_MODEL, 1, 3>
                      : (const void *)refineStepCdp<DP_FILL_MODEL, 0, 3>;
    return gflags ? (const void *)refineStepCdp<DP_FILL_MODEL, 1, 4> : (const void *)refineStepCdp<DP_FILL_MODEL, 0, 4>;
}

/* Blocks per SM of the level step (see refineStepCdp): 4, or with the model 3 when
 * DPAMR_CDP_MODEL_BPS=3 (a measurement hook). */
static int level_step_bps(const dp_params *p)
{
    const char *hook = getenv("DPAMR_CDP_MODEL_BPS");
    return p->fill == DP_FILL_MODEL && hook && atoi(hook) == 3 ? 3 : 4;
}

/* Tiles per pass and shared memory of the level step: as hostlaunch's (fill_pass_tiles), halved while
 * the blocks per SM the registers allow (bps, level_step_bps), each with its static and dynamic shared
 * memory and the runtime's reserve, pass CDP_DEVICE_SMEM_SM; when even one tile's criterion cells
 * pass it (3D, tile_size 16 or 32), the flags are read from global memory (*gflags) and only the
 * model tables count. DPAMR_CDP_SMEM_SM=BYTES in the environment replaces the 24 KB (a measurement
 * hook: the run's note line says the tiles per pass and where the flags came from). */
static void level_step_config(const dp_params *p, int bps, int *tp, int *gflags, unsigned *smem)
{
    const char *hook = getenv("DPAMR_CDP_SMEM_SM");
    const size_t budget_sm = hook && atol(hook) > 0 ? (size_t)atol(hook) : CDP_DEVICE_SMEM_SM;
    const size_t per_block = budget_sm / bps, fixed = sizeof(step_smem) + 16 + CDP_SMEM_RESERVED_BLOCK;
    size_t budget = per_block > fixed ? per_block - fixed : 0;
    /* and within what a kernel may use without opting in (not tried for device launches) */
    const size_t limit = ((size_t)48 << 10) - sizeof(step_smem) - 16;
    budget = budget < limit ? budget : limit;
    int t = fill_pass_tiles(p, STEP_THREADS), g = 0;
    while (t > 1 && step_smem_bytes(p, t, 1) > budget) t /= 2;
    if (step_smem_bytes(p, t, 1) > budget) {
        g = 1;
        t = fill_pass_tiles(p, STEP_THREADS);
        while (t > 1 && step_smem_bytes(p, t, 0) > budget) t /= 2;
    }
    *tp = t;
    *gflags = g;
    *smem = (unsigned)step_smem_bytes(p, t, !g);
}

/* Upper bound on device-side launches, hence on launches pending at once, from the deck, the grain
 * and the frontier's data. level: one launch per level step after the first (the host launches step
 * 0; step k launches step k + 1 below the last), max_level - Lp - 1. tile and group: the frontier's
 * blocks of G tiles launch a0 grids and create c1 children; level l then holds at most
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

static long long pool_bound(const deck_t *d, const mesh_t *m, long long cap, int grain, int G, long long a0,
                            long long c1)
{
    const dp_params *p = &d->p;
    const int Lp = m->nlevels - 1;
    if (Lp >= p->max_level) return 0;
    if (grain == DP_GRAIN_LEVEL) return p->max_level - Lp - 1;
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
 * least), and the grain's scratch: the scan regions and tickets (level), or what the canonical
 * sort allocates for every new tile (tile, group; its CUB scratch asked of CUB, a size query). */
typedef struct {
    const deck_t *d;
    const mesh_t *m;
    int grain, G, nlev, slots_timeline;
    long long a0, c1, nfront, roots;
    long long slots; /* level grain: blocks resident at once, the steps' grids at most (steps_layout) */
    cudaStream_t s;
    char *err;  /* a failed size query's message (need returns 1e300) */
} cdp_need_t;

static double cdp_need(long long cap, const void *vctx)
{
    const cdp_need_t *c = (const cdp_need_t *)vctx;
    const dp_params *p = &c->d->p;
    const long long n0 = c->m->ntiles;
    const long long bound = pool_bound(c->d, c->m, cap, c->grain, c->G, c->a0, c->c1);
    long long pool = c->d->pool > 0 ? c->d->pool : bound;
    pool = pool > 32 ? pool : 32;
    double bytes = dmesh_store_bytes(p, cap, c->slots_timeline) + (double)pool * POOL_SLOT_BYTES;
    if (bytes > 1e16) return 1e300; /* no device holds it: no need to ask CUB about 2^62 items */
    if (c->grain == DP_GRAIN_LEVEL) {
        int maxnb = 0;
        const double scan =
            steps_layout(NULL, p, c->nfront, c->roots, c->m->nlevels - 1, c->nlev, cap, c->slots, &maxnb);
        if (scan < 0) return 1e300; /* a capacity past 2^39 tiles: no device holds it */
        bytes += scan + DP_MAX_LEVELS * sizeof(unsigned long long);
    } else if (cap > n0) {
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

/* Timeline slots of the level grain: 0 flagTilesCdp (level Lp), 1 + k step k (level Lp + k to Lp + k + 1). */
static void level_label(int i, char *buf, size_t n, const void *vLp)
{
    const int Lp = *(const int *)vLp;
    if (i == 0) snprintf(buf, n, "flagTilesCdp L%d", Lp);
    else snprintf(buf, n, "refineStepCdp L%d->L%d", Lp + i - 1, Lp + i);
}

int refine_cdp(const deck_t *d, mesh_t *m, refine_report_t *r, char *err, size_t errlen)
{
    const dp_params *p = &d->p;
    const int grain = d->cdp_grain;
    const int G = grain == DP_GRAIN_TILE ? 1 : (grain == DP_GRAIN_GROUP ? d->cdp_group : 1);
    cudaStream_t s = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    dmesh_t M;
    memset(&M, 0, sizeof M);
    chain_t C;
    memset(&C, 0, sizeof C);
    step_chain_t SC;
    memset(&SC, 0, sizeof SC);
    const void *step_k = NULL;
    int gflags = 0, bps = 4;
    const double t_start = timer_ms();
    const long long n0 = m->ntiles;
    const int Lp = m->nlevels - 1, nlev = p->max_level - Lp > 0 ? p->max_level - Lp : 0;
    const dp_tidx frontier = m->level_start[Lp], nfront = n0 - frontier;
    const long long roots = (long long)m->root[0] * m->root[1] * m->root[2];
    unsigned long long st[ST_COUNT];
    unsigned long long *stamps = NULL;
    float build_ms = 0.0f, sort_ms = 0.0f;
    int rc = -1, pool_set = 0, maxnb = 1;
    size_t pool_before = 0, scan_bytes = 0;
    long long ntot = 0, failed = 0, pool = 0, bound = 0, cap = 0;
    cap_t capinfo;
    memset(&capinfo, 0, sizeof capinfo);
    dstage_t stage;
    memset(&stage, 0, sizeof stage);
    char need_err[256] = "";
    /* timeline: flagTilesCdp and one slot per level step (level grain), or the sort's three kernels */
    const int slots_timeline = grain == DP_GRAIN_LEVEL ? nlev + 1 : 3;
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
    if (grain == DP_GRAIN_LEVEL) {
        int dev = 0, sms = 0, per_sm = 0;
        SC.Lp = Lp;
        SC.nlev = nlev;
        bps = level_step_bps(p);
        level_step_config(p, bps, &SC.tp, &gflags, &SC.smem);
        step_k = step_kernel(p->fill, gflags, bps);
        CK(cudaGetDevice(&dev));
        CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, step_k, STEP_THREADS, SC.smem));
        SC.slots = (long long)sms * (per_sm > 0 ? per_sm : 1);
    }
    /* The capacity: max_tiles, or as many tiles as the device holds with the pool and the grain's
     * scratch at that capacity (and the host holds for the download); then the launch bound and
     * the scan regions within it. The pool stays the bound computed for the grain: for level one
     * launch per level step after the first at any capacity, for tile and group the frontier's
     * growth, clamped by the free slots. */
    {
        cdp_need_t need;
        memset(&need, 0, sizeof need);
        need.d = d;
        need.m = m;
        need.grain = grain;
        need.G = G;
        need.nlev = nlev;
        need.slots_timeline = slots_timeline;
        need.nfront = nfront;
        need.roots = roots;
        need.slots = SC.slots;
        need.s = s;
        need.err = need_err;
        if (grain != DP_GRAIN_LEVEL) pool_frontier(d, m, G, &need.a0, &need.c1);
        if (gpu_capacity(d, m, cdp_need, &need, need_err, &capinfo, err, errlen) != 0) goto fail;
        cap = capinfo.cap;
        r->capacity = cap;
        snprintf(r->capacity_limit, sizeof r->capacity_limit, "%s", capinfo.limit);
        bound = pool_bound(d, m, cap, grain, G, need.a0, need.c1);
    }
    pool = d->pool > 0 ? d->pool : (bound > 0 ? bound : 1);
    r->pool_bound = bound;
    r->pool_size = pool;
    if (grain == DP_GRAIN_LEVEL && nlev > 0) {
        const double sb = steps_layout(&SC.LS, p, nfront, roots, Lp, nlev, cap, SC.slots, &maxnb);
        if (sb < 0) { /* the capacity search rejects such a capacity (cdp_need) */
            snprintf(err, errlen, "cdp level grain: a level step of more than 2^31 groups at capacity %lld", cap);
            goto fail;
        }
        scan_bytes = (size_t)sb;
    }

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
    if (dmesh_create(&M, m, cap, slots_timeline, &stage, d->progress && !d->quiet, s, err, errlen) != 0) goto fail;
    if (grain == DP_GRAIN_LEVEL && nlev > 0) {
        CK(cudaMalloc((void **)&SC.LS.tickets, DP_MAX_LEVELS * sizeof *SC.LS.tickets));
        CK(cudaMalloc((void **)&SC.LS.scan, scan_bytes));
    }
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaStreamSynchronize(s));
    r->upload_ms = timer_ms() - t_start;
    nvtxRangePop();

    nvtxRangePushA("cdp: build (device-side launches)");
    CK(cudaEventRecord(e0, s));
    if (grain == DP_GRAIN_LEVEL) {
        /* initLevelScans, flagTilesCdp on the frontier, step 0; the device launches the steps after it */
        if (nlev > 0 && nfront > 0) {
            long long first = frontier, end = frontier + nfront, nf = nfront;
            int level = Lp, k0 = 0, flag0 = nlev > 1, early = d->pdl_trigger_early;
            const long long fb = (nfront + STEP_THREADS / 32 - 1) / (STEP_THREADS / 32);
            void *ia[] = { &SC.LS };
            void *fa[] = { &M, &first, &nf, &level, &early };
            void *ra[] = { &M, &SC, &first, &end, &k0, &level, &flag0 };
            CK(launch_pdl((const void *)initLevelScans, dim3((unsigned)((maxnb + 255) / 256), (unsigned)nlev),
                          dim3(256), s, 0, ia));
            CK(launch_pdl((const void *)flagTilesCdp, dim3((unsigned)(fb < SC.slots ? fb : SC.slots)),
                          dim3(STEP_THREADS), s, d->pdl, fa));
            CK(launch_pdl_smem(step_k, dim3((unsigned)step_blocks(nfront, SC.slots)), dim3(STEP_THREADS), SC.smem, s,
                               d->pdl, ra));
        }
    } else if (nfront > 0) {
        long long first = frontier, n = nfront;
        int level = Lp, fill = 0;
        void *ra[] = { &M, &C, &first, &n, &level, &fill };
        CK(launch_pdl_smem((const void *)refineTile, dim3((unsigned)((nfront + G - 1) / G)), dim3(threads), C.smem, s,
                           d->pdl, ra));
    }
    CK(cudaEventRecord(e1, s));
    CK(cudaEventSynchronize(e1)); /* a fault in any child grid surfaces here */
    CK(cudaEventElapsedTime(&build_ms, e0, e1));
    nvtxRangePop();
    CK(cudaMemcpyAsync(st, M.stats, sizeof st, cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));

    r->device_launches = (long long)st[ST_LAUNCHES];
    failed = (long long)(st[ST_FAIL_PENDING] + st[ST_FAIL_RESOURCES] + st[ST_FAIL_OTHER]);
    r->launch_failures = failed;
    if (failed > 0) {
        snprintf(err, errlen,
                 "%lld of %lld device-side launches failed (%llu pending-launch pool full, %llu out of resources, "
                 "%llu other): the pending-launch pool of %lld is too small for this mesh at cdp_grain=%s; the "
                 "computed bound is %lld (run with pool=0 or pool >= %lld)%s. No output was written.",
                 failed, failed + r->device_launches, st[ST_FAIL_PENDING], st[ST_FAIL_RESOURCES], st[ST_FAIL_OTHER],
                 r->pool_size, deck_grain_name(grain), bound,
                 bound > failed + r->device_launches ? bound : failed + r->device_launches,
                 r->pool_size < pool ? " (the device runtime granted less than the pool asked for: lower max_tiles "
                                       "to tighten the bound)"
                 : d->max_tiles == 0 && d->pool == 0 && bound >= POOL_ROOM_DEFAULT
                     ? " (with max_tiles = 0 the bound counts at most 2^21 new tiles: set pool, or max_tiles, which "
                       "the bound follows)"
                     : "");
        goto fail;
    }
    if (st[ST_OVERFLOW] > 0) {
        cap_overflow_message(&capinfo, (long long)st[ST_OVERFLOW], "tiles below the refused ones were not counted", err, errlen);
        goto fail;
    }
    if (st[ST_BOUND] > 0) {
        snprintf(err, errlen, "internal error: a level outgrew the scan state sized from its bound (cdp_grain=%s); "
                 "please report this deck", deck_grain_name(grain));
        goto fail;
    }
    ntot = (long long)st[ST_NTILES];

    if (grain != DP_GRAIN_LEVEL) {
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
                if (timeline_write(d->trace, names, sst, 3, err, errlen) != 0) goto fail;
            }
        }
    } else if (nlev > 0) {
        /* per level: the span of the step's grid that makes, fills and flags level L (slot L - Lp,
         * L = Lp+1..max_level); gaps: next grid's first block start - this grid's last block end
         * (flagTilesCdp -> step 0 by PDL, then the tail launches) */
        const int nslot = nlev + 1;
        if (timeline_download(&M, nslot, s, &stamps, err, errlen) != 0) goto fail;
        r->ngaps = 0;
        for (int k = 0; k < nslot; ++k) {
            if (!stamps[2 * k + 1]) break; /* the level was empty: no grid ran */
            if (k > 0) r->level_ms[Lp + k] = (double)(stamps[2 * k + 1] - stamps[2 * k]) * 1e-6;
            if (k + 1 < nslot && stamps[2 * (k + 1) + 1])
                r->gap_ns[r->ngaps++] = (double)((long long)stamps[2 * (k + 1)] - (long long)stamps[2 * k + 1]);
        }
        if (timeline_write_named(d->trace, level_label, &Lp, stamps, nslot, err, errlen) != 0) goto fail;
    }
    if (dmesh_download(&M, m, frontier, ntot, &stage, d->progress && !d->quiet, s, &r->download_ms, err, errlen) != 0)
        goto fail;
    /* refine time: from the input tiles on the device to the canonical mesh on the device */
    r->refine_ms = build_ms + sort_ms;
    r->sort_ms = sort_ms;
    for (int L = Lp + 1; L < m->nlevels; ++L) {
        if (d->quiet) break;
        printf("  level %2d: %12lld tiles", L, (long long)(m->level_start[L + 1] - m->level_start[L]));
        if (r->level_ms[L] >= 0) printf("  %10.3f ms (device timeline)", r->level_ms[L]);
        printf("\n");
    }
    if (grain == DP_GRAIN_LEVEL)
        snprintf(r->note, sizeof r->note,
                 "cdp grain level: build %.3f ms (one grid per level step, tail-launched from the device, canonical "
                 "order by a device scan, no sort; %d tiles per pass, flags from %s memory, %d blocks per SM), "
                 "upload %.3f ms, download %.3f ms",
                 build_ms, SC.tp, gflags ? "global" : "shared", bps, r->upload_ms, r->download_ms);
    else
        snprintf(r->note, sizeof r->note,
                 "cdp grain %s (%d tile%s per launching block): build %.3f ms + sort %.3f ms, upload %.3f ms, "
                 "download %.3f ms",
                 deck_grain_name(grain), G, G > 1 ? "s" : "", build_ms, sort_ms, r->upload_ms, r->download_ms);
    r->total_ms = timer_ms() - t_start;
    rc = 0;
fail: /* success falls through: one cleanup path (an NVTX range may stay open on an error) */
    free(stamps);
    cudaFree(SC.LS.tickets);
    cudaFree(SC.LS.scan);
    dmesh_destroy(&M);
    dstage_destroy(&stage);
    /* give the pool's memory back for whatever runs next in this process (bench) */
    if (pool_set) cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, pool_before);
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    if (s) cudaStreamDestroy(s);
    return rc;
}
