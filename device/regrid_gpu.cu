/* regrid_gpu.cu - the regrid of a time step on the GPU (variants hostlaunch and cdp), with the mesh
 * resident on the device between steps (gpu_regrid_*, device/gpu.h).
 *
 * The phases of the cpu regrid (src/regrid_cpu.c, docs/design.md "Time steps"), each a kernel over
 * the device tile store calling the same per-tile and per-cell functions:
 *   1. sampleLevel    every tile's cells from the model moved to time t (block_fill_model: the
 *                     tables and arithmetic of tile_fill with parent -1), one launch per level; with
 *                     fill = model and no balance only the roots (the rebuild samples the others);
 *   2. restrictLevel  fill = prolong: one thread per parent cell of each child (dp_restrict_into),
 *                     one launch per level from the finest up; then leafSums, the per-tile composite
 *                     sums (dp_leaf_sum) of the store before the rebuild;
 *   3. rebuild        into a second store (the old one is read, never written): firstChild (each old
 *                     tile's first child), the roots copied and flagged (flagRoots), then one
 *                     regridStep grid per level: blocks take groups of the level's parents (each its
 *                     own first, then in ticket order), a single-pass scan of their flag counts
 *                     (CUB's decoupled look-back, device/level_scan.cuh) gives their children's slots
 *                     after the level's end, the block writes the children's metadata (a kept child's
 *                     from its old index, dp_child_index; a new one's by dp_write_child), copies the
 *                     kept children's cells from the old store and fills the runs of new ones
 *                     (block_fill_prolong or block_fill_model: prolonged from the parent's new
 *                     cells, or sampled), and flags them while their criterion cells are in shared
 *                     memory. With fill = model and no balance every child, kept or new, is
 *                     sampled there: the values a sample of the old store would have copied, with
 *                     one write per cell instead of a write, a read and a write.
 *                     Dropped children and their subtrees are never read. Parents in canonical
 *                     order, children octant by octant: canonical order, no sort.
 *                     Then leafSums of the new store; the stores swap.
 * The per-tile sums are folded on the host in canonical order (regrid_fold, as regrid_totals), so the
 * totals are the cpu's to the bit; kept and added are integer counters.
 *
 * hostlaunch: every level's regridStep is launched from the host up front over one wave of resident
 * blocks (a level's size lives in device memory), chained with PDL; one host round trip per regrid, at
 * its end (the level sizes, the counters). cdp: regridStep's chain of levels runs on the device
 * (step_chain, level_scan.cuh): each level a one-node graph of its own, instantiated for device
 * launch once (gpu_regrid_open) in two sets, one per order of the two stores (a set's parameters are
 * set only when a rebuild needs parameters it does not hold); the host launches level 0's graph, and
 * the last block of each level to start launches the next level's at once (a device graph launch,
 * fire and forget, as PDL would), whose blocks wait for this level's to finish; a level that turns
 * out empty ends the chain. A graph's parameters are fixed, so every cdp grid is a wave of blocks and
 * finds its level by a ticket per block (S.started). Both variants run the same blocks, RG_MINB per
 * SM. Device-side launch failures are counted and reported; the pending-launch pool is checked
 * against the bound (one launch per level).
 *
 * Every host launch names the engine's stream; regrid_ms is CUDA event time on it. */
#include <nvtx3/nvToolsExt.h>
#include <stdlib.h>
#include <string.h>

#include "device/gpu.h"
#include "device/gpu_common.cuh"
#include "device/level_scan.cuh"
#include "src/tile.h"
#include "src/timer.h"

/* Threads per block of every regrid kernel; a regridStep group holds at most as many parents. */
#define RG_THREADS 256
/* regridStep groups per block on a large level (as hostlaunch's refineStep). */
#define RG_GROUPS_PER_BLOCK 8
/* regridStep's blocks per SM, measured on the H200 (docs/results.md, "Why cdp's rebuild is slower"
 * and "Session 14"), movingbench2d: host-launched grids at 256 threads x 4 per SM (64 registers)
 * rebuilt in 2.06 ms against 2.43 ms at 3 and 3.10 ms at 2 (111 registers), and regridded in 3.49 ms
 * per step against 3.83 at 512 x 2 and 4.33 at 1024 x 1. cdp's chained grids, device graph launches,
 * get the same blocks per SM (tools/cdp_residency.cu; a kernel launched from the device got one, and
 * cdp's blocks held 1024 threads until session 37). */
#define RG_MINB 4
/* The same for the last level (max_level - 1 to max_level), whose children are not flagged: an
 * instance of its own (FLAGS 0: no flag pass, no criterion cells in shared memory), as refineStep's
 * last step (session 44). */
#define RG_MINB_LAST 5

/* The regrid's counters after ST_COUNT (gpu_common.cuh: launches, failures, overflow) */
enum { RS_KEPT = ST_COUNT, RS_ADDED, RS_OVF_LEVEL, RS_COUNT };
/* then the rebuild's timeline: regridStep of level k (which builds level k + 1) at [RS_STAMPS + 2k],
 * the complement of its first block's start (a max of complements: the slots start at 0 with the
 * counters), and at [RS_STAMPS + 2k + 1] its last block's end (%globaltimer, ns) */
#define RS_STAMPS RS_COUNT
#define RS_TOTAL (RS_COUNT + 2 * DP_MAX_LEVELS)

/* Parents per group of a level of n tiles in a grid of nblocks blocks: the fewest (a power of two, at
 * most RG_THREADS) that leave at most RG_GROUPS_PER_BLOCK groups per block. A level then has at most
 * max(RG_GROUPS_PER_BLOCK * nblocks, ceil(n / RG_THREADS)) groups, and at most n (rg_layout). */
static __host__ __device__ __forceinline__ int rg_group(long long n, long long nblocks)
{
    int P = 1;
    while (P < RG_THREADS && (n + P - 1) / P > RG_GROUPS_PER_BLOCK * nblocks) P <<= 1;
    /* more parents than blocks: up to RG_GROUPS_PER_BLOCK per group, as few as leave one group per
       block (as refineStep's step_group) */
    while (P < RG_GROUPS_PER_BLOCK && (n + P - 1) / P > nblocks) P <<= 1;
    return P;
}

/* What every rebuild kernel reads. Passed by value (__grid_constant__: stays in parameter space). */
typedef struct {
    dmesh_t A;              /* the store before the rebuild (sampled, restricted): read only */
    dmesh_t N;              /* the store being built */
    level_scans_t S;        /* one scan region and ticket per level 0..max_level-1 */
    long long *ls;          /* [DP_MAX_LEVELS + 2] the new store's level starts (-1: not reached) */
    long long *old;         /* [cap] new tile -> its old index, -1 for a new tile */
    long long *first;       /* [cap] old tile -> its first child (tiles with children only) */
    unsigned long long *st; /* [RS_TOTAL]: the counters, then the timeline */
    int tp;                 /* tiles per pass of a regridStep block */
    int cdp;                /* 1: the next level is launched from the device */
    int early;              /* PDL: trigger right after the wait (1) or after the work (0) */
    int resample;           /* 1: kept children sampled from the model like new ones, not copied */
} rg_t;

/* regridStep's timeline (RS_STAMPS): thread 0 of a block, at its start (end 0) or end (1) */
static __device__ __forceinline__ void rg_stamp(unsigned long long *st, int level, int end)
{
    const unsigned long long t = globaltimer_ns();
    atomicMax(&st[RS_STAMPS + 2 * level + end], end ? t : ~t);
}

/* ---- phase 1: sample ------------------------------------------------------------------------- */

/* Tiles [s, s + n) of `level` sampled from the model at c_params' time: tp tiles per block pass, each
 * with its table in dynamic shared memory (tab). */
__global__ void __launch_bounds__(RG_THREADS) sampleLevel(dmesh_t M, long long s, long long n, int level, int tp,
                                                          int early)
{
    extern __shared__ double tab[];
    cudaGridDependencySynchronize(); /* the previous kernel's writes (an earlier level's, a previous step's) */
    if (early) cudaTriggerProgrammaticLaunchCompletion();
    for (long long j0 = (long long)blockIdx.x * tp; j0 < n; j0 += (long long)gridDim.x * tp) /* uniform per block */
        block_fill_model(cta_team(), M, s + j0, (int)(n - j0 < tp ? n - j0 : tp), level, tab, tp, NULL);
    if (!early) cudaTriggerProgrammaticLaunchCompletion();
}

/* ---- phase 2: restrict, composite sums --------------------------------------------------------- */

/* Children [s, s + n) restricted into their parents: one thread per (child, parent cell of its
 * octant), every field. Children of one parent write disjoint octants. */
__global__ void __launch_bounds__(RG_THREADS) restrictLevel(dmesh_t M, long long s, long long n, int early)
{
    cudaGridDependencySynchronize(); /* the finer level's restriction (or the sample) is done */
    if (early) cudaTriggerProgrammaticLaunchCompletion();
    const dp_params *p = &c_params;
    const int dim = p->dim, B = p->B, hb = B >> 1, lh = dp_log2(hb), qs = dim * lh, per = 1 << qs;
    const size_t cells = (size_t)dp_cells(dim, B);
    const long long total = n << qs;
    for (long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x; j < total; j += (long long)gridDim.x * blockDim.x) {
        const long long c = s + (j >> qs);
        const int q = (int)(j & (per - 1));
        const int X = q & (hb - 1), Y = (q >> lh) & (hb - 1), Z = dim == 3 ? q >> (2 * lh) : 0;
        const int32_t cc[3] = { M.coord[3 * c], M.coord[3 * c + 1], M.coord[3 * c + 2] };
        const int o = dp_tile_octant(cc);
        const long long par = M.parent[c];
        DP_FOR_FIELDS(f, p->nf)
        dp_restrict_into(dim, B, o, M.field[f] + (size_t)c * cells, M.field[f] + (size_t)par * cells, X, Y, Z);
    }
    if (!early) cudaTriggerProgrammaticLaunchCompletion();
}

/* The composite sums of tiles [0, n), every field: ts[2 (f n + t)] and ts[2 (f n + t) + 1] (values,
 * absolute values), one thread per tile and field, in cell order (dp_leaf_sum, as tile_leaf_sum). */
__global__ void __launch_bounds__(RG_THREADS) leafSums(dmesh_t M, long long n, double *ts, int early)
{
    cudaGridDependencySynchronize();
    if (early) cudaTriggerProgrammaticLaunchCompletion();
    const dp_params *p = &c_params;
    const size_t cells = (size_t)dp_cells(p->dim, p->B);
    for (long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x; j < n * p->nf; j += (long long)gridDim.x * blockDim.x) {
        const int f = (int)(j / n);
        const long long t = j - f * n;
        dp_leaf_sum(p->dim, p->B, M.childmask[t], dmesh_field(M, f) + (size_t)t * cells, ts + 2 * j);
    }
    if (!early) cudaTriggerProgrammaticLaunchCompletion();
}

/* ---- phase 3: rebuild ---------------------------------------------------------------------------- */

/* first[p] = the first child of every old tile p with children: children of one parent are
 * consecutive, so tile c is a first child when the tile before it has another parent. */
__global__ void __launch_bounds__(RG_THREADS) firstChild(dmesh_t A, long long nroots, long long n, long long *first,
                                                         int early)
{
    cudaGridDependencySynchronize();
    if (early) cudaTriggerProgrammaticLaunchCompletion();
    for (long long c = nroots + blockIdx.x * (long long)blockDim.x + threadIdx.x; c < n; c += (long long)gridDim.x * blockDim.x)
        if (c == nroots || A.parent[c] != A.parent[c - 1]) first[A.parent[c]] = c;
    if (!early) cudaTriggerProgrammaticLaunchCompletion();
}

/* The new store's roots, one warp per root: copied from the old store (every tile array, its cells:
 * one kernel instead of a copy per array, session 39), old[i] = i and their flags (0 at max_level
 * 0), computed from the old store's cells, which are the copied ones. */
__global__ void __launch_bounds__(RG_THREADS) flagRoots(const __grid_constant__ rg_t R, long long nroots)
{
    cudaGridDependencySynchronize();
    if (R.early) cudaTriggerProgrammaticLaunchCompletion();
    const dp_params *p = &c_params;
    const int lane = threadIdx.x & 31, cells = dp_cells(p->dim, p->B);
    const long long warp = (blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5;
    const long long nwarps = ((long long)gridDim.x * blockDim.x) >> 5;
    const int flag = 0 < p->max_level;
    for (long long i = warp; i < nroots; i += nwarps) {
        DP_FOR_FIELDS(f, p->nf)
        for (int c = lane; c < cells; c += 32) R.N.field[f][(size_t)i * cells + c] = R.A.field[f][(size_t)i * cells + c];
        const unsigned mask = flag ? warp_octant_flags(R.A, i, 0, lane) : 0u;
        if (lane == 0) {
            copy_tile_meta(R.N, i, R.A, i);
            R.N.childmask[i] = (uint8_t)mask;
            R.old[i] = i;
        }
    }
    if (!R.early) cudaTriggerProgrammaticLaunchCompletion();
}

/* What a regridStep block shares (static shared memory). */
struct rg_smem {
    team_scan_smem<RG_THREADS / 32> scan;
    long long v, c0, c1; /* the group's ticket; its children's range [c0, c1) counted from the level's end */
    unsigned smask[FILL_MAX_TILES];
};

/* The next level's start, written once per grid by the thread that takes the level's last group. Out
 * of line on purpose: with this call on the cold path ptxas spills less in regridStep's loops
 * (ptxas -v, sm_90: hostlaunch's model instance 56/44 bytes of spill stores/loads against 176/176
 * with the store inline, its prolong instance 88/136 against 100/152). The kernel tail launch that
 * stood here until session 36 (cdp's chain launches at the kernel's head since session 38) had the
 * same effect (72/76 with it): removing it made
 * hostlaunch's movingbench2d regrid 2-3% slower (H100, session 36). */
static __device__ __noinline__ void rg_level_end(long long *p, long long v)
{
    *p = v;
}

/* Level `level` of the new store to its children (see the top of the file), by blocks of RG_THREADS,
 * RG_MINB per SM, the grid one wave. FILL: the deck's fill, an instance each as hostlaunch's
 * refineStep (the other fill's code out of the kernel: fewer spills at the bound's 64 registers).
 * CHAIN: cdp's instance, which launches the next level from the device; hostlaunch's is launched from
 * the host. Dynamic shared memory: the model tables (fill = model, R.tp of them), then R.tp tiles of
 * criterion cells. */
template <int FILL, int CHAIN, int FLAGS = 1>
__global__ void __launch_bounds__(RG_THREADS, FLAGS ? RG_MINB : RG_MINB_LAST)
    regridStep(const __grid_constant__ rg_t R, int level)
{
    __shared__ rg_smem Sh;
    extern __shared__ __align__(16) double tab[]; /* 16: block_fill_tiles' float4 stores into crit */
    const cta_team tm;
    const dp_params *p = &c_params;
    const int tid = tm.rank(), ns = 1 << p->dim;
    const int lc = p->dim * dp_log2(p->B), cells = 1 << lc, tp = R.tp;
    /* cdp's instance chains; hostlaunch's must hold no device graph launch, not even one never
       reached: the host's launch of such a kernel fails with cudaErrorNotSupported (session 36,
       H100), so `if constexpr`, which keeps it out even unoptimised */
    int last = 0; /* (CHAIN) this block is its level's last to start */
    if constexpr (CHAIN && FLAGS) if (R.cdp) {
        /* the grid's level from a ticket per block (step_chain, level_scan.cuh; the last level, FLAGS
           0, is a grid of its own with its level as its parameter, launched by the level before) */
        const step_chain ch(R.S);
        level = ch.k;
        last = ch.last;
    }
    const int flag = FLAGS && level + 1 < p->max_level; /* the children are flagged; at max_level they get none */
    float *crit = (float *)(tab + (FILL == DP_FILL_PROLONG ? 0 : tp * dp_model_table_size(p)));
    for (int i = tid; i < tp; i += RG_THREADS) Sh.smask[i] = 0;
    scan_state_t st;
    st.Init(R.S.nb[level], R.S.scan + R.S.off[level], 0);
    const double h = dp_spacing(p, level + 1);
    cudaGridDependencySynchronize(); /* the level's tiles, their flags and d_ls, the scans' reset */
    if constexpr (CHAIN) if (R.cdp) step_chain_wait(R.S, level); /* the same, for a level launched early */
    if (R.early) cudaTriggerProgrammaticLaunchCompletion();
    if (threadIdx.x == 0) rg_stamp(R.st, level, 0);
    const long long s = R.ls[level], e = R.ls[level + 1], n = e - s;
    if constexpr (CHAIN && FLAGS) if (R.cdp && last && threadIdx.x == 0 && n > 0 && flag) step_chain_launch(R.S, level, R.st);
    const int P = rg_group(n, (long long)gridDim.x);
    const long long ng = (n + P - 1) / P; /* groups of the level */
    if (n == 0 && blockIdx.x == 0 && threadIdx.x == 0) R.ls[level + 2] = e;
    /* the groups: each block's own first, then by ticket (group_order, level_scan.cuh: a small level
       on every SM, not four groups on each of the first blocks to start; the grid is one wave) */
    const group_order order;
    long long v = order.first(tm);
    for (;;) {
        if (v >= ng) break; /* the same for every thread of the block */
        /* 1. this parent's children: their offset from the level's end, by the level-wide scan */
        const long long i = v * P + tid, par = s + i;
        const unsigned mask = tid < P && i < n ? R.N.childmask[par] : 0u;
        const long long off = group_scan(tm, st, Sh.scan, v, __popc(mask), childmask_counts{R.N.childmask + s}, v * P,
                                           &Sh.c0, &Sh.c1);
        tm.sync();
        const long long c0 = Sh.c0, c1 = Sh.c1;
        const int fits = e + c1 <= R.N.cap;
        if (!fits && tid == 0) {
            atomicMax(&R.st[ST_OVERFLOW], (unsigned long long)(e + c1));
            atomicMax(&R.st[RS_OVF_LEVEL], (unsigned long long)(level + 1));
        }
        if (v == ng - 1 && tid == 0) {
            rg_level_end(R.ls + level + 2, fits ? e + c1 : e); /* an overflow leaves the later levels empty */
        }
        if (fits && c1 > c0) {
            /* 2. their metadata, octant by octant: kept (from the old store) or new */
            if (mask) {
                const long long op = R.old[par];
                const unsigned had = op >= 0 ? R.A.childmask[op] : 0u;
                unsigned keep, add, drop;
                dp_regrid_octants(mask, had, &keep, &add, &drop);
                unsigned long long nk = 0, na = 0;
                for (int o = 0; o < ns; ++o) {
                    if (!(mask >> o & 1)) continue;
                    const long long ch = e + off + __popc(mask & ((1u << o) - 1));
                    if (keep >> o & 1) {
                        /* every array of DP_TILE_ARRAYS: a new one must be carried here too */
                        static_assert(DP_TILE_META_BYTES == 33, "regridStep copies level, coord, key, parent, childmask");
                        const long long oc = dp_child_index(R.first[op], had, o);
                        R.N.level[ch] = R.A.level[oc];
                        for (int a = 0; a < 3; ++a) R.N.coord[3 * ch + a] = R.A.coord[3 * oc + a];
                        R.N.key[ch] = R.A.key[oc];
                        R.N.parent[ch] = par;
                        R.N.childmask[ch] = 0; /* its flags: below */
                        R.old[ch] = oc;
                        ++nk;
                    } else {
                        write_child(R.N, ch, level + 1, par, o);
                        R.old[ch] = -1;
                        ++na;
                    }
                }
                if (nk) atomicAdd(&R.st[RS_KEPT], nk);
                if (na) atomicAdd(&R.st[RS_ADDED], na);
            }
            tm.sync(); /* the group's children's metadata and old indices */
            /* 3. their cells, tp tiles at a time, and their flags */
            for (long long j0 = c0; j0 < c1; j0 += tp) {
                const int g = (int)(c1 - j0 < tp ? c1 - j0 : tp);
                const long long t0 = e + j0;
                /* kept children: their cells from the old store (unless sampled, below), 4 at a time
                   (a tile's cells, a multiple of 16, start 64-byte aligned in both stores and in crit) */
                for (int j = tid; j < (g << (lc - 2)) && !R.resample; j += RG_THREADS) {
                    const int q = j >> (lc - 2), c4 = j & ((cells >> 2) - 1);
                    const long long oc = R.old[t0 + q];
                    if (oc < 0) continue;
                    DP_FOR_FIELDS(f, p->nf)
                    {
                        const float4 u = reinterpret_cast<const float4 *>(R.A.field[f] + (size_t)oc * cells)[c4];
                        reinterpret_cast<float4 *>(R.N.field[f] + (size_t)(t0 + q) * cells)[c4] = u;
                        if (flag && f == p->crit_field) reinterpret_cast<float4 *>(crit + (q << lc))[c4] = u;
                    }
                }
                /* new children: each run of consecutive ones filled as a refinement fills them (the
                 * runs are the same for every thread: the block's barriers inside stay uniform) */
                for (int q = 0; q < g;) {
                    if (R.old[t0 + q] >= 0 && !R.resample) {
                        ++q;
                        continue;
                    }
                    int r = q + 1;
                    while (r < g && (R.old[t0 + r] < 0 || R.resample)) ++r;
                    if (FILL == DP_FILL_PROLONG) block_fill_prolong(tm, R.N, t0 + q, r - q, flag ? crit + (q << lc) : NULL);
                    else block_fill_model<0>(tm, R.N, t0 + q, r - q, level + 1, tab, tp, flag ? crit + (q << lc) : NULL);
                    q = r;
                }
                if (!flag) continue; /* (their childmask is 0 from their metadata) */
                tm.sync(); /* the criterion cells are in crit */
                block_flag_pass(tm, crit, g, h, Sh.smask, R.N.childmask + t0);
            }
        }
        tm.sync(); /* every thread of the block has read this group's shared values */
        if (ng <= order.round) break; /* one round: every group had its block */
        v = order.ticket(tm, &R.S.tickets[level], &Sh.v);
    }
    if (threadIdx.x == 0) rg_stamp(R.st, level, 1);
    if (!R.early) cudaTriggerProgrammaticLaunchCompletion();
    if constexpr (CHAIN) if (R.cdp) step_chain_finish(R.S, level);
}

/* ---- the host side ------------------------------------------------------------------------------- */

struct gpu_regrid {
    int variant, pdl, early, progress;
    const void *step;       /* the regridStep instance: hostlaunch's, or cdp's that chains */
    const void *step_last;  /* its instance for the last level (FLAGS 0) */
    dp_params p;            /* the deck's (time 0) */
    long long max_tiles;
    cudaStream_t s;
    cudaEvent_t ev[6];
    dmesh_t A, N;           /* the current store and the one the next rebuild writes */
    dstage_t stage;
    cap_t cap;
    long long ntiles, nroots;
    int root[3];            /* root tiles per axis (balance) */
    long long ls[DP_MAX_LEVELS + 2]; /* the current store's level starts */
    int nlevels;
    level_scans_t S;
    int maxnb, nlev;        /* scan regions: the largest, and their count (max_level) */
    long long *d_ls, *old, *first;
    double *d_sums[2];      /* per-tile sums before and after (prolong) */
    double *h_sums;         /* host copy */
    size_t h_sums_n;
    unsigned long long *st;
    long long wave, wave_last; /* regridStep's grid, and its last level's */
    int tp, tps, sms;
    size_t smem, smem_last, smem_sample; /* regridStep's (and its last level's) and sampleLevel's dynamic shared memory */
    size_t pool;            /* cdp: the pending-launch pool */
    /* cdp: regridStep as one-node graphs, one per level (step_chain), in two sets: the rebuilds
     * alternate the stores, so each set keeps the parameters of one order (cg_R, once cg_set) */
    chain_graphs_t cg[2];
    rg_t cg_R[2];
    int cg_set[2], cg_last;
};

/* cdp: the kernel node of the chain's graphs, regridStep over a wave of blocks with args ({ &R, &level }:
 * level 0; each grid takes its own level by ticket), or (last) the last level's instance over its wave
 * with args { &R, &max_level - 1 } */
static cudaKernelNodeParams rg_chain_node(const gpu_regrid *g, void **args, int last)
{
    return last ? chain_node(g->step_last, (unsigned)g->wave_last, RG_THREADS, g->smem_last, args)
                : chain_node(g->step, (unsigned)g->wave, RG_THREADS, g->smem, args);
}

/* fill = model without balance: the rebuild samples every child it writes, kept or new (the same
 * values as sampling the old store and copying); only the roots are sampled before it. */
static int rg_resample(const dp_params *p)
{
    return p->fill != DP_FILL_PROLONG && p->balance != DP_BALANCE_2TO1;
}

/* What the rebuild's kernels read, A the store rebuilt from and N the one built (the same in every
 * rebuild but for the order of the two stores). */
static rg_t rg_args(const gpu_regrid *g, const dmesh_t *A, const dmesh_t *N)
{
    rg_t R;
    memset(&R, 0, sizeof R); /* (padding too: the chain's sets are found by memcmp) */
    R.A = *A;
    R.N = *N;
    R.S = g->S;
    R.ls = g->d_ls;
    R.old = g->old;
    R.first = g->first;
    R.st = g->st;
    R.tp = g->tp;
    R.cdp = g->variant == DP_VARIANT_CDP;
    R.early = g->early;
    R.resample = rg_resample(&g->p);
    return R;
}

/* cdp: the set of the chain's graphs that holds the parameters R (R.S.execs then names it), else the
 * set not used last, its parameters set to R and its graphs uploaded again on the stream (nothing
 * may run them: the stream has finished the rebuild that last used it). Returns the set, or -1 with
 * *e. gpu_regrid_open sets both orders of the stores, so a rebuild finds its set. */
static int rg_chain_set(gpu_regrid *g, rg_t *R, cudaError_t *e)
{
    for (int c = 0; c < 2; ++c) {
        R->S.execs = g->S.execs + c * g->nlev;
        if (g->cg_set[c] && memcmp(R, &g->cg_R[c], sizeof *R) == 0) return g->cg_last = c;
    }
    const int c = 1 - g->cg_last;
    R->S.execs = g->S.execs + c * g->nlev;
    int L0 = 0, Ll = g->nlev - 1;
    void *sa[] = { R, &L0 }, *la[] = { R, &Ll };
    const cudaKernelNodeParams kp = rg_chain_node(g, sa, 0), kpl = rg_chain_node(g, la, 1);
    g->cg_set[c] = 0;
    if ((*e = chain_graphs_set(&g->cg[c], &kp, &kpl, g->s)) != cudaSuccess) return -1;
    g->cg_R[c] = *R;
    g->cg_set[c] = 1;
    return g->cg_last = c;
}

/* The scan regions of the levels 0..max_level-1 at capacity cap for grids of at most `wave` blocks:
 * a level holds at most cap tiles, so at most max(RG_GROUPS_PER_BLOCK wave, ceil(cap / RG_THREADS))
 * groups, and no more than cap. Returns their bytes (S filled when not NULL), -1 past 2^31 groups. */
static double rg_layout(level_scans_t *S, const dp_params *p, long long cap, long long wave, int *maxnb)
{
    long long nb[DP_MAX_LEVELS];
    const int nlev = p->max_level;
    for (int k = 0; k < nlev; ++k) {
        const long long spread = RG_GROUPS_PER_BLOCK * wave, full = (cap + RG_THREADS - 1) / RG_THREADS;
        nb[k] = full > spread ? full : spread;
        nb[k] = nb[k] < cap ? nb[k] : cap;
    }
    int bad_k = 0;
    *maxnb = 1;
    return nlev > 0 ? level_scans_layout(S, nb, nlev, maxnb, &bad_k) : 0.0;
}

typedef struct {
    const dp_params *p;
    long long wave; /* blocks of a wave */
} rg_need_t;

/* Device bytes of a regrid at capacity cap: two stores, the old-index and first-child maps, the
 * per-tile sums (prolong), the scan regions and the small buffers. */
static double rg_need(long long cap, const void *vctx)
{
    const rg_need_t *c = (const rg_need_t *)vctx;
    int maxnb = 0;
    const double scans = rg_layout(NULL, c->p, cap, c->wave, &maxnb);
    if (scans < 0) return 1e300;
    const double sums = c->p->fill == DP_FILL_PROLONG ? 2.0 * 2.0 * c->p->nf * sizeof(double) : 0.0;
    return 2.0 * dmesh_store_bytes(c->p, cap, 0) + (double)cap * (2.0 * sizeof(long long) + sums) + scans +
           (double)(DP_MAX_LEVELS + 2) * sizeof(long long) + RS_TOTAL * sizeof(unsigned long long) +
           DP_MAX_LEVELS * sizeof(unsigned long long) + dbal_bytes(c->p, cap, 1);
}

/* Every tile of every level of the domain up to max_level (saturating). */
static long long rg_domain_tiles(const dp_params *p, long long roots)
{
    long long n = 0;
    for (int L = 0; L <= p->max_level; ++L) {
        const long long k = cap_shl(roots, p->dim * L);
        n = n > (1ll << 62) - k ? (1ll << 62) : n + k;
    }
    return n;
}

extern "C" void gpu_regrid_close(gpu_regrid_t *g)
{
    if (!g) return;
    if (g->s) cudaStreamSynchronize(g->s); /* nothing in flight may use what is freed */
    dmesh_destroy(&g->A);
    dmesh_destroy(&g->N);
    dstage_destroy(&g->stage);
    cudaFree(g->d_ls);
    cudaFree(g->old);
    cudaFree(g->first);
    cudaFree(g->d_sums[0]);
    cudaFree(g->d_sums[1]);
    cudaFree(g->st);
    cudaFree(g->S.tickets);
    cudaFree(g->S.started);
    cudaFree(g->S.done);
    cudaFree(g->S.execs);
    cudaFree(g->S.scan);
    for (int c = 0; c < 2; ++c) chain_graphs_destroy(&g->cg[c]);
    for (int i = 0; i < 6; ++i)
        if (g->ev[i]) cudaEventDestroy(g->ev[i]);
    if (g->s) cudaStreamDestroy(g->s);
    free(g->h_sums);
    free(g);
}

extern "C" int gpu_regrid_open(int variant, const deck_t *d, const mesh_t *m, gpu_regrid_t **out, double *upload_ms,
                               char *err, size_t errlen)
{
    const dp_params *p = &d->p;
    char why[256];
    *out = NULL;
    *upload_ms = 0.0;
    if (!gpu_available(why, sizeof why)) {
        snprintf(err, errlen, "variant=%s needs a CUDA device: %s", deck_variant_name(variant), why);
        return -1;
    }
    if (variant != DP_VARIANT_CDP && variant != DP_VARIANT_HOSTLAUNCH) {
        snprintf(err, errlen, "gpu_regrid_open: variant %d is not a GPU variant", variant);
        return -1;
    }
    const double t0 = timer_ms();
    gpu_regrid_t *g = (gpu_regrid_t *)calloc(1, sizeof *g);
    if (!g) {
        snprintf(err, errlen, "out of host memory for the GPU regrid's state");
        return -1;
    }
    g->variant = variant;
    g->pdl = d->pdl;
    g->early = d->pdl_trigger_early;
    g->progress = d->progress && !d->quiet;
    g->p = *p;
    g->max_tiles = d->max_tiles;
    g->nroots = m->level_start[1];
    for (int a = 0; a < 3; ++a) g->root[a] = m->root[a];
    int dev = 0;
    long long wave_max = 0; /* the larger of the two waves (scan regions, capacity) */
    const size_t cells = (size_t)mesh_cells(m);
    CK(cudaStreamCreateWithFlags(&g->s, cudaStreamNonBlocking));
    for (int i = 0; i < 6; ++i) CK(cudaEventCreate(&g->ev[i]));
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&g->sms, cudaDevAttrMultiProcessorCount, dev));
    /* regridStep's instance and its tiles per pass, picked as hostlaunch's refineStep's
     * (step_pass_tiles; kernel_wave opts in below where one tile passes the default limit);
     * sampleLevel's tables after that */
    {
        const int pro = p->fill == DP_FILL_PROLONG;
        if (variant == DP_VARIANT_CDP) {
            g->step = pro ? (const void *)regridStep<DP_FILL_PROLONG, 1> : (const void *)regridStep<DP_FILL_MODEL, 1>;
            g->step_last = pro ? (const void *)regridStep<DP_FILL_PROLONG, 1, 0> : (const void *)regridStep<DP_FILL_MODEL, 1, 0>;
        } else {
            g->step = pro ? (const void *)regridStep<DP_FILL_PROLONG, 0> : (const void *)regridStep<DP_FILL_MODEL, 0>;
            g->step_last = pro ? (const void *)regridStep<DP_FILL_PROLONG, 0, 0> : (const void *)regridStep<DP_FILL_MODEL, 0, 0>;
        }
        CK(step_pass_tiles(g->step, p, RG_THREADS, &g->tp, &g->smem));
    }
    g->tps = 4 * RG_THREADS / (int)cells; /* four cells per thread (FILL_MODEL_CELLS not measured here) */
    g->tps = g->tps < 1 ? 1 : (g->tps > FILL_MAX_TILES ? FILL_MAX_TILES : g->tps);
    /* (the sample is the model whatever the fill: fill_table_bytes is 0 for prolong) */
    while (g->tps > 1 && (size_t)g->tps * dp_model_table_size(p) * sizeof(double) > SMEM_DEFAULT_LIMIT) g->tps /= 2;
    g->smem_sample = (size_t)g->tps * dp_model_table_size(p) * sizeof(double);
    if (g->smem_sample > SMEM_DEFAULT_LIMIT) {
        snprintf(err, errlen, "%s regrid: the model tables of one tile need %zu bytes of shared memory, more than %zu: "
                 "fewer model objects", deck_variant_name(variant), g->smem_sample, SMEM_DEFAULT_LIMIT);
        goto fail;
    }
    /* every block resident at once (a group's look-back waits only on running blocks); cdp's chained
       grids, device graph launches, get as many blocks per SM as host launches (tools/cdp_residency.cu).
       The last level's instance: no criterion cells in shared memory (the model tables stay), its own
       wave (in cdp's chain its blocks become resident as the level before's, all resident, end); the
       scan regions are sized for the larger wave */
    {
        char what[64];
        unsigned w = 0, wl = 0;
        snprintf(what, sizeof what, "%s regrid: regridStep", deck_variant_name(variant));
        if (kernel_wave(g->step, RG_THREADS, g->smem, g->sms, what, p, &w, err, errlen) != 0) goto fail;
        g->smem_last = step_pass_smem(p, g->tp, 0);
        snprintf(what, sizeof what, "%s regrid: the last level's regridStep", deck_variant_name(variant));
        if (kernel_wave(g->step_last, RG_THREADS, g->smem_last, g->sms, what, p, &wl, err, errlen) != 0) goto fail;
        g->wave = w;
        g->wave_last = wl;
    }
    wave_max = g->wave_last > g->wave ? g->wave_last : g->wave;
    /* the capacity: max_tiles, else as many tiles as the device holds with the regrid's scratch (two
     * stores), at most every tile of the domain up to max_level */
    {
        size_t fr = 0, tot = 0;
        CK(gpu_free_memory(&fr, &tot));
        rg_need_t need = { p, wave_max };
        cap_memory_t mem;
        memset(&mem, 0, sizeof mem);
        mem.name = "device";
        mem.state = "free";
        mem.free_bytes = (double)fr;
        mem.share = d->share_device;
        mem.need = rg_need;
        mem.ctx = &need;
        const double usable = cap_usable(&mem);
        cap_t *c = &g->cap;
        memset(c, 0, sizeof *c);
        c->mem = -1;
        c->bound = rg_domain_tiles(p, g->nroots);
        if (d->max_tiles > 0) {
            c->cap = d->max_tiles;
            c->by = CAP_BY_MAX_TILES;
            snprintf(c->limit, sizeof c->limit, "max_tiles = %lld", (long long)d->max_tiles);
            if (rg_need(c->cap, &need) > usable) {
                snprintf(err, errlen, "the device lacks memory for this run's regrids: max_tiles = %lld needs %.2f GiB "
                         "(two tile stores and the regrid's scratch), the device has %.2f GiB free of %.2f GiB, %.2f "
                         "GiB usable; lower max_tiles (0: as many tiles as fit)", (long long)d->max_tiles,
                         rg_need(c->cap, &need) / CAP_GIB, fr / CAP_GIB, tot / CAP_GIB, usable / CAP_GIB);
                goto fail;
            }
        } else {
            const long long fit = cap_fit(c->bound, usable, rg_need, &need);
            if (fit >= c->bound) {
                c->cap = c->bound;
                c->by = CAP_BY_BOUND;
                snprintf(c->limit, sizeof c->limit, "every tile of the domain up to max_level %d", p->max_level);
            } else {
                c->cap = fit < 0 ? 0 : fit;
                c->by = CAP_BY_MEMORY;
                c->mem = 0;
                c->mem_name = "device";
                c->usable = usable;
                snprintf(c->limit, sizeof c->limit, "the device's %.1f GiB free hold at most %lld tiles of this deck "
                         "with the regrid's two tile stores and scratch", fr / CAP_GIB, c->cap);
            }
        }
        if (c->cap < m->ntiles) {
            snprintf(err, errlen, "the mesh has %lld tiles, more than the regrid's tile store holds: capacity %lld (%s); "
                     "lower max_level%s", (long long)m->ntiles, c->cap, c->limit,
                     d->max_tiles > 0 ? " or raise max_tiles" : "");
            goto fail;
        }
    }
    if (g->variant == DP_VARIANT_CDP) { /* one pending launch per level at most: the pool must hold max_level */
        CK(cudaDeviceGetLimit(&g->pool, cudaLimitDevRuntimePendingLaunchCount));
        if (g->pool < (size_t)(p->max_level > 0 ? p->max_level : 1)) {
            CK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, (size_t)p->max_level));
            CK(cudaDeviceGetLimit(&g->pool, cudaLimitDevRuntimePendingLaunchCount));
        }
    }
    if (dmesh_create(&g->A, m, g->cap.cap, 0, &g->stage, g->progress, g->s, err, errlen) != 0) goto fail;
    g->N.cap = g->cap.cap;
    CK(dmesh_alloc_arrays(&g->N, (size_t)g->cap.cap, m->nf, cells));
    CK(cudaMalloc((void **)&g->d_ls, (DP_MAX_LEVELS + 2) * sizeof(long long)));
    CK(cudaMalloc((void **)&g->old, (size_t)g->cap.cap * sizeof(long long)));
    CK(cudaMalloc((void **)&g->first, (size_t)g->cap.cap * sizeof(long long)));
    CK(cudaMalloc((void **)&g->st, RS_TOTAL * sizeof(unsigned long long)));
    if (p->fill == DP_FILL_PROLONG)
        for (int b = 0; b < 2; ++b) CK(cudaMalloc((void **)&g->d_sums[b], (size_t)g->cap.cap * 2 * p->nf * sizeof(double)));
    g->nlev = p->max_level;
    if (g->nlev > 0) {
        const double scan_bytes = rg_layout(&g->S, p, g->cap.cap, wave_max, &g->maxnb);
        if (scan_bytes < 0) { /* the capacity search rejects such a capacity (rg_need) */
            snprintf(err, errlen, "%s regrid: a level of more than 2^31 groups at capacity %lld",
                     deck_variant_name(variant), g->cap.cap);
            goto fail;
        }
        CK(cudaMalloc((void **)&g->S.tickets, (size_t)g->nlev * sizeof(unsigned long long)));
        CK(cudaMalloc((void **)&g->S.scan, (size_t)scan_bytes));
        if (variant == DP_VARIANT_CDP) {
            /* the chain's steps as one-node graphs that device code may launch, a wave of blocks,
               two sets, one per order of the stores (set here, before the timed rebuilds) */
            CK(cudaMalloc((void **)&g->S.started, sizeof(unsigned long long)));
            CK(cudaMalloc((void **)&g->S.done, (size_t)g->nlev * sizeof(unsigned long long)));
            CK(cudaMalloc((void **)&g->S.execs, 2 * (size_t)g->nlev * sizeof(cudaGraphExec_t)));
            g->S.chain_grid = (unsigned)g->wave; /* every level's grid but the last's (step_chain_wait) */
            rg_t R0;
            memset(&R0, 0, sizeof R0);
            int L0 = 0, Ll = g->nlev - 1;
            void *ga[] = { &R0, &L0 }, *la[] = { &R0, &Ll };
            const cudaKernelNodeParams kp = rg_chain_node(g, ga, 0), kpl = rg_chain_node(g, la, 1);
            for (int c = 0; c < 2; ++c)
                CK(chain_graphs_create(&g->cg[c], &kp, &kpl, NULL, 0, g->nlev, g->S.execs + c * g->nlev, g->s));
            cudaError_t e = cudaSuccess;
            for (int c = 0; c < 2; ++c) {
                rg_t Rc = c == 0 ? rg_args(g, &g->A, &g->N) : rg_args(g, &g->N, &g->A);
                g->cg_last = 1 - c; /* (a fresh set: the first set is 0, the second 1) */
                CK(rg_chain_set(g, &Rc, &e) < 0 ? e : cudaSuccess);
            }
        }
    }
    CK(cudaStreamSynchronize(g->s));
    g->ntiles = m->ntiles;
    g->nlevels = m->nlevels;
    for (int L = 0; L <= m->nlevels; ++L) g->ls[L] = m->level_start[L];
    *upload_ms = timer_ms() - t0;
    *out = g;
    return 0;
fail:
    gpu_regrid_close(g);
    return -1;
}

/* Blocks of a grid-stride kernel over n items, one wave at most. */
static unsigned rg_grid(const gpu_regrid_t *g, long long n)
{
    long long b = (n + RG_THREADS - 1) / RG_THREADS;
    const long long most = (long long)g->sms * 8;
    b = b > most ? most : b;
    return (unsigned)(b < 1 ? 1 : b);
}

/* The composite totals of one store's per-tile sums (device d_sums, n tiles, level starts ls) folded
 * on the host in canonical order, as regrid_totals folds them. */
static int rg_totals(gpu_regrid_t *g, const double *d_sums, long long n, const long long *ls, int nlevels, double *sum,
                     double *abs, char *err, size_t errlen)
{
    const size_t k = (size_t)n * 2 * g->p.nf;
    dp_tidx lsd[DP_MAX_LEVELS + 1];
    for (int L = 0; L <= nlevels; ++L) lsd[L] = ls[L];
    if (k > g->h_sums_n) {
        double *h = (double *)realloc(g->h_sums, k * sizeof(double));
        if (!h) {
            snprintf(err, errlen, "out of host memory for the per-tile sums of %lld tiles", n);
            return -1;
        }
        g->h_sums = h;
        g->h_sums_n = k;
    }
    CK(cudaMemcpyAsync(g->h_sums, d_sums, k * sizeof(double), cudaMemcpyDeviceToHost, g->s));
    CK(cudaStreamSynchronize(g->s));
    for (int f = 0; f < g->p.nf; ++f) regrid_fold(&g->p, lsd, nlevels, g->h_sums + (size_t)f * n * 2, &sum[f], &abs[f]);
    return 0;
fail:
    return -1;
}

extern "C" int gpu_regrid_step(gpu_regrid_t *g, double t, regrid_report_t *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->device_launches = -1;
    for (int L = 0; L < DP_MAX_LEVELS; ++L) r->level_ms[L] = -1.0;
    dp_params pt;
    dp_params_at(&g->p, t, &pt);
    const int prolong = pt.fill == DP_FILL_PROLONG, pdl = g->pdl, early = g->early;
    const int resample = rg_resample(&pt);
    const size_t cells = (size_t)dp_cells(pt.dim, pt.B);
    const long long nA = g->ntiles, nroots = g->nroots;
    long long ls[DP_MAX_LEVELS + 2];
    unsigned long long st[RS_TOTAL];
    float ms[5] = { 0, 0, 0, 0, 0 };
    double xfer = 0.0;
    long long bal_kept = 0, bal_added = 0; /* balance: added tiles the old store had, the others */
    int nl = 1;
    long long nN = nroots;
    rg_t R;
    memset(&R, 0, sizeof R);
    r->tiles_before = nA;
    nvtxRangePushA("regrid: enqueue");
    CK(upload_params(&pt, g->s));
    CK(cudaEventRecord(g->ev[0], g->s));
    /* 1. sample the tiles at time t: every one, or only the roots (resample; with balance = 2:1 an
     * added tile may take its cells from the old store, so that store is sampled whole) */
    for (int L = 0; L < (resample ? 1 : g->nlevels); ++L) {
        long long s = g->ls[L], n = g->ls[L + 1] - s;
        int tps = g->tps;
        if (n == 0) continue;
        long long b = (n + tps - 1) / tps, most = (long long)g->sms * 8;
        void *a[] = { &g->A, &s, &n, &L, &tps, (void *)&early };
        CK(launch_pdl_smem((const void *)sampleLevel, dim3((unsigned)(b < most ? b : most)), dim3(RG_THREADS),
                           g->smem_sample, g->s, pdl, a));
    }
    CK(cudaEventRecord(g->ev[1], g->s));
    /* 2. fill = prolong: restrict from the finest level up; the composite sums before the rebuild */
    if (prolong) {
        const int qs = pt.dim * dp_log2(pt.B >> 1);
        for (int L = g->nlevels - 1; L >= 1; --L) {
            long long s = g->ls[L], n = g->ls[L + 1] - s;
            if (n == 0) continue;
            void *a[] = { &g->A, &s, &n, (void *)&early };
            CK(launch_pdl((const void *)restrictLevel, dim3(rg_grid(g, n << qs)), dim3(RG_THREADS), g->s, pdl, a));
        }
        long long n = nA;
        void *a[] = { &g->A, &n, &g->d_sums[0], (void *)&early };
        CK(launch_pdl((const void *)leafSums, dim3(rg_grid(g, n * pt.nf)), dim3(RG_THREADS), g->s, pdl, a));
    }
    CK(cudaEventRecord(g->ev[2], g->s));
    /* 3. rebuild into N from the roots */
    {
        for (int L = 0; L < DP_MAX_LEVELS + 2; ++L) ls[L] = -1;
        ls[0] = 0;
        ls[1] = nroots;
        R = rg_args(g, &g->A, &g->N);
        /* ls lives on this frame: the stream is synchronized before it returns */
        CK(cudaMemcpyAsync(g->d_ls, ls, sizeof ls, cudaMemcpyHostToDevice, g->s));
        CK(cudaMemsetAsync(g->st, 0, RS_TOTAL * sizeof(unsigned long long), g->s));
        long long nroots_ = nroots, n = nA;
        void *fa[] = { &g->A, &nroots_, &n, &g->first, (void *)&early };
        CK(launch_pdl((const void *)firstChild, dim3(rg_grid(g, n)), dim3(RG_THREADS), g->s, pdl, fa));
        if (g->nlev > 0) {
            void *ia[] = { &g->S };
            CK(launch_pdl((const void *)initLevelScans, dim3((unsigned)((g->maxnb + 255) / 256), (unsigned)g->nlev),
                          dim3(256), g->s, 0, ia));
        }
        void *ra[] = { &R, &nroots_ };
        CK(launch_pdl((const void *)flagRoots, dim3(rg_grid(g, nroots * 32)), dim3(RG_THREADS), g->s, pdl, ra));
        if (R.cdp) {
            if (g->nlev > 0) {
                /* the set of graphs that holds this rebuild's parameters (an update, if ever one is
                   needed, is inside regrid_ms); the host launches level 0's graph, each level the
                   next (step_chain) */
                cudaError_t e = cudaSuccess;
                const int c = rg_chain_set(g, &R, &e);
                CK(c < 0 ? e : cudaSuccess);
                CK(cudaGraphLaunch(g->cg[c].exec[0], g->s));
            }
        } else {
            for (int L = 0; L < g->nlev; ++L) {
                void *sa[] = { &R, &L };
                const int last = L == g->nlev - 1; /* the last level's instance on its own wave */
                CK(launch_pdl_smem(last ? g->step_last : g->step, dim3((unsigned)(last ? g->wave_last : g->wave)),
                                   dim3(RG_THREADS), last ? g->smem_last : g->smem, g->s, pdl, sa));
            }
        }
    }
    CK(cudaEventRecord(g->ev[3], g->s));
    nvtxRangePop();
    {
        const double tx = timer_ms();
        CK(cudaMemcpyAsync(ls, g->d_ls, sizeof ls, cudaMemcpyDeviceToHost, g->s));
        CK(cudaMemcpyAsync(st, g->st, sizeof st, cudaMemcpyDeviceToHost, g->s));
        CK(cudaStreamSynchronize(g->s));
        xfer += timer_ms() - tx;
    }
    /* the rebuild's timeline: level k + 1 from the end of level k - 1's kernel (k = 0: from its own
     * first block) to the end of level k's, for the levels built (hostlaunch's kernels of empty levels
     * exit at once, as do cdp's launched for an empty level) */
    for (int k = 0; k < g->nlev && k + 2 < DP_MAX_LEVELS + 2; ++k) {
        const unsigned long long *tk = st + RS_STAMPS + 2 * k;
        if (ls[k + 1] < 0 || ls[k + 2] <= ls[k + 1] || tk[1] == 0) continue;
        const unsigned long long from = k > 0 && tk[-1] != 0 ? tk[-1] : ~tk[0];
        r->level_ms[k + 1] = (double)((long long)tk[1] - (long long)from) * 1e-6;
    }
    if (R.cdp) {
        const unsigned long long failed = st[ST_FAIL_PENDING] + st[ST_FAIL_RESOURCES] + st[ST_FAIL_OTHER];
        r->device_launches = (long long)st[ST_LAUNCHES];
        if (failed > 0) {
            snprintf(err, errlen, "cdp regrid at time %g: %llu of %llu device-side launches failed (%llu for the "
                     "pending-launch pool of %zu, %llu for resources, %llu other)", t, failed,
                     failed + st[ST_LAUNCHES], st[ST_FAIL_PENDING], g->pool, st[ST_FAIL_RESOURCES], st[ST_FAIL_OTHER]);
            return -1;
        }
    }
    if (st[ST_OVERFLOW] > 0) {
        const long long need = (long long)st[ST_OVERFLOW];
        if (g->max_tiles > 0)
            snprintf(err, errlen, "tile store overflow regridding level %d at time %g: at least %lld tiles needed, "
                     "max_tiles = %lld; set max_tiles >= %lld (or 0: as many as memory holds), or lower max_level",
                     (int)st[RS_OVF_LEVEL], t, need, g->max_tiles, need);
        else
            snprintf(err, errlen, "tile store overflow regridding level %d at time %g: at least %lld tiles needed, the "
                     "capacity is %lld (%s); lower max_level", (int)st[RS_OVF_LEVEL], t, need, g->cap.cap, g->cap.limit);
        return -1;
    }
    while (nl <= g->p.max_level && ls[nl + 1] > ls[nl]) ++nl;
    nN = ls[nl];
    CK(cudaEventElapsedTime(&ms[0], g->ev[0], g->ev[1]));
    CK(cudaEventElapsedTime(&ms[1], g->ev[1], g->ev[2]));
    CK(cudaEventElapsedTime(&ms[2], g->ev[2], g->ev[3]));
    /* balance = 2:1: the tiles balance needs, merged into the store the rebuild read (A): an added
     * tile A had takes its cells from there (set aside first); then that store is the new one */
    if (pt.balance == DP_BALANCE_2TO1) {
        dbal_result_t b;
        if (dbal_close(&g->N, nN, &pt, g->root, &g->A, &g->A, g->ls, g->nlevels, g->cap.cap,
                       g->max_tiles > 0 ? NULL : g->cap.limit, pdl, g->s, &b, err, errlen) != 0)
            return -1;
        if (b.moved) {
            const dmesh_t tmp = g->A;
            g->A = g->N;
            g->N = tmp;
            nN = b.ntiles;
            nl = b.nlevels;
            for (int L = 0; L <= nl; ++L) ls[L] = b.ls[L];
        }
        bal_kept = b.from_old;
        bal_added = b.added - b.from_old;
        ms[4] = b.ms;
    }
    r->conservation_checked = prolong;
    if (prolong) {
        long long n = nN;
        void *a[] = { &g->N, &n, &g->d_sums[1], (void *)&early };
        CK(cudaEventRecord(g->ev[4], g->s));
        CK(launch_pdl((const void *)leafSums, dim3(rg_grid(g, n * pt.nf)), dim3(RG_THREADS), g->s, pdl, a));
        CK(cudaEventRecord(g->ev[5], g->s));
        CK(cudaEventSynchronize(g->ev[5]));
        CK(cudaEventElapsedTime(&ms[3], g->ev[4], g->ev[5]));
        const double tx = timer_ms();
        if (rg_totals(g, g->d_sums[0], nA, g->ls, g->nlevels, r->total_before, r->abs_before, err, errlen) != 0 ||
            rg_totals(g, g->d_sums[1], nN, ls, nl, r->total_after, r->abs_after, err, errlen) != 0)
            return -1;
        xfer += timer_ms() - tx;
        regrid_conservation(&pt, r->total_before, r->abs_before, r->total_after, r->abs_after, &r->conservation_rel);
    }
    /* the new store is the current one */
    {
        const dmesh_t tmp = g->A;
        g->A = g->N;
        g->N = tmp;
    }
    g->ntiles = nN;
    g->nlevels = nl;
    for (int L = 0; L <= nl; ++L) g->ls[L] = ls[L];
    r->sample_ms = ms[0];
    r->restrict_ms = ms[1];
    r->rebuild_ms = (double)ms[2] + ms[3] + ms[4];
    r->regrid_ms = (double)ms[0] + ms[1] + ms[2] + ms[3] + ms[4];
    r->transfer_ms = xfer;
    r->tiles_after = nN;
    r->kept = nroots + (long long)st[RS_KEPT] + bal_kept;
    r->added = (long long)st[RS_ADDED] + bal_added;
    r->removed = nA - r->kept;
    r->changed_fraction = nA > 0 ? (double)(r->added + r->removed) / (double)nA : 0.0;
    r->nlevels = nl;
    return 0;
fail: /* (an NVTX range may stay open on an error) */
    cudaStreamSynchronize(g->s);
    return -1;
}

extern "C" int gpu_regrid_download(gpu_regrid_t *g, mesh_t *m, double *ms, char *err, size_t errlen)
{
    return dmesh_download(&g->A, m, 0, g->ntiles, &g->stage, g->progress, g->s, ms, err, errlen);
}
