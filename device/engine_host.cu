/* engine_host.cu - the level steps: variant hostlaunch (the same refinement restructured on the
 * host), and cdp's level grain, which runs the same kernel with each step launched from the device.
 *
 * hostlaunch: one host-launched kernel per level step (level L to L+1), all enqueued up front with no host round
 * trip (level sizes live in device memory, d_ls), each over the level's tiles as one compacted
 * work list (canonical order: a level is a contiguous index range). The host captures these launches
 * once into a graph (PDL's programmatic edges kept), instantiates and uploads it before the timed
 * part, as cdp uploads its chain's graphs, and the timed refine is that graph's launch: enqueued
 * launch by launch, the first kernel started 28-38 us after the timing's first event, against 16-17
 * for cdp's graph launch (session 43, H100); as a graph bench2d's refine took 7% less, bench3d's 4%
 * (session 44). Its kernels:
 *   initLevelScans   once: every step's tickets and scan tile states reset (level_scan.cuh)
 *   flagTiles(Lp)    once: one warp per tile of the input's finest level: octant flags -> childmask
 *   refineStep(L)    blocks of HOST_THREADS, one wave, take groups of parents of level L
 *                    (step_group: 1 to HOST_THREADS; each its own first, then by ticket; a level of
 *                    at most a group per block takes no ticket); a
 *                    single-pass scan over the level's child counts (CUB's decoupled look-back:
 *                    cub::ScanTileState, group_scan: device/level_scan.cuh) gives each
 *                    parent its children's slots after the level's end; the block writes their
 *                    metadata (dp_write_child), fills them (block_fill_prolong: by bricks, or
 *                    block_fill_model: through each tile's table of axis terms) and, below
 *                    max_level, flags them while their criterion cells are in shared memory
 *                    (childmask, which the next step's scan counts). The last group writes the next
 *                    level's end. The last step, which flags nothing, is an instance of its own
 *                    (FLAGS 0: no flag pass, no criterion cells in shared memory) at more blocks per
 *                    SM on a grid of its own: bench3d's finest level took 13% less (session 44);
 *                    in cdp's chain too (its own graph, launched by the step before it).
 * Children come out parent by parent, octant by octant: already canonical order, no sort. One
 * launch per level: earlier versions ran flagTiles, CUB's DeviceScan (two kernels), expandChildren
 * and fillCells per level, and a small level cost about 20 us in them (docs/results.md).
 *
 * cdp, cdp_grain=level (refine_cdp_level): the same kernels, grids and groups, the host launching
 * one graph of initLevelScans, flagTiles and the first step, and each step launching the next from the
 * device (refineStep, CHAIN; step_chain, level_scan.cuh). Each step is a one-node graph of its own
 * (step 0's with the two kernels before it), instantiated for device launch
 * (cudaGraphInstantiateFlagDeviceLaunch): the host launches step 0's,
 * and the last block of each step to start launches the next step's at once, fire and forget, as PDL
 * would; its blocks wait for this step's to finish. A device graph launch costs its thread about
 * 1.1 us against a kernel launch's 5.5-6.7 (tools/exp/graph_launch_cost.cu, H100, session 36), its
 * grids hold as many blocks per SM as host-launched ones, where a kernel launched from the device got
 * one (tools/cdp_residency.cu, session 37): hostlaunch's block shape; and launched early the next
 * step starts 0.9-1.6 us after the step before ends, against 3.3-4.5 us for a tail launch (session
 * 38).
 *
 * PDL: flagTiles and every refineStep of hostlaunch go through launch_pdl (cdp level's
 * initLevelScans, flagTiles and first step are one graph with plain edges; device launches have no
 * PDL either, so the pdl bit does not change cdp level's refine). Each does its independent setup
 * (timeline stamp, shared memory) before cudaGridDependencySynchronize() and reads the previous
 * kernel's output (d_ls, childmask, cells) only after it. Each block triggers the next kernel either
 * right after its own wait (pdl_trigger=early: the dependent grid may be scheduled while this one
 * still works) or after its work (pdl_trigger=late: hides the launch and the prologue only). The
 * deck key picks; docs/results.md gives what each measured.
 */
#include <nvtx3/nvToolsExt.h>
#include <stdlib.h>
#include <string.h>

#include "device/gpu.h"
#include "device/gpu_common.cuh"
#include "device/level_scan.cuh"
#include "src/timer.h"

/* Threads per block; refineStep takes at most this many parents per group (one per thread). */
#define HOST_THREADS 256
/* refineStep's groups per block of a large level: the level's children are filled by the blocks
 * that own their parents, so a level is cut into enough groups for the blocks to share its work
 * evenly (a group's children: 0 to 2^dim per parent). */
#define STEP_GROUPS_PER_BLOCK 8

/* Parents per group of a level of n tiles in a grid of nblocks blocks: the fewest (a power of two,
 * at most HOST_THREADS) that leave at most STEP_GROUPS_PER_BLOCK groups per block; on a small level
 * one parent per group, so its children are spread over as many blocks as it has parents. Every block
 * computes the same value; the level then has at most max(STEP_GROUPS_PER_BLOCK * nblocks,
 * ceil(n / HOST_THREADS)) groups (steps_layout sizes the scan regions for that). */
static __host__ __device__ __forceinline__ int step_group(long long n, long long nblocks)
{
    int P = 1;
    while (P < HOST_THREADS && (n + P - 1) / P > STEP_GROUPS_PER_BLOCK * nblocks) P <<= 1;
    /* and a level of more parents than blocks gets up to STEP_GROUPS_PER_BLOCK parents per group, as
       few as leave one group per block: a round of groups (ticket, look-back, metadata, a fill pass,
       flags) is a chain of latencies, and a level of 1,000 to 4,000 tiles took 2 to 8 rounds of
       one-parent groups (measured with the first group per block below and the model fill by
       segments: docs/results.md, *Session 26*) */
    while (P < STEP_GROUPS_PER_BLOCK && (n + P - 1) / P > nblocks) P <<= 1;
    return P;
}

/* Octant flags of the input's finest level: one warp per tile, striding over the level. */
__global__ void flagTiles(dmesh_t M, int level, const long long *ls, int slot, int early)
{
    stamp_start(M.stamps, slot);
    const int lane = threadIdx.x & 31;
    const long long warp = (blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5;
    const long long nwarps = ((long long)gridDim.x * blockDim.x) >> 5;
    cudaGridDependencySynchronize(); /* the scan states are reset */
    if (early) cudaTriggerProgrammaticLaunchCompletion();
    const long long s = ls[level], n = ls[level + 1] - s;
    for (long long i = warp; i < n; i += nwarps) {
        const unsigned mask = warp_octant_flags(M, s + i, level, lane);
        if (lane == 0) M.childmask[s + i] = (uint8_t)mask;
    }
    if (!early) cudaTriggerProgrammaticLaunchCompletion();
    stamp_end(M.stamps, slot);
}

struct step_smem {
    team_scan_smem<HOST_THREADS / 32> scan;
    long long v, c0, c1; /* the group's ticket; its children's range [c0, c1) counted from the level's end */
    unsigned smask[FILL_MAX_TILES];
    uint16_t kids[HOST_THREADS << 3]; /* the group's children in order: their parent's slot << 3 | octant */
};

/* refineStep's blocks per SM (both engines' grids), which its registers allow: 64 for prolong, 80 for
 * model (a block of HOST_THREADS). */
#define STEP_MINB(FILL) ((FILL) == DP_FILL_PROLONG ? 4 : 3)
/* The same for the last step of both engines, which flags nothing (FLAGS 0: no flag pass, no criterion cells
 * in shared memory): ptxas fits it in 48 registers for prolong (16 bytes spilled), 62 for model. */
#define STEP_MINB_LAST(FILL) ((FILL) == DP_FILL_PROLONG ? 5 : 4)

/* Level step k: the children of level L's tiles (see the top of the file), by blocks of HOST_THREADS,
 * STEP_MINB per SM, the grid one wave. hostlaunch (CHAIN 0): every step launched from the host. cdp's
 * level grain (CHAIN 1): a chain of steps launched from the device (step_chain, level_scan.cuh): the
 * last block of a step to start launches the next step's graph at once (a device graph launch, fire
 * and forget; device graph launches got as many blocks per SM as host launches, where a kernel
 * launched from the device got one: tools/cdp_residency.cu, docs/gpu.md, measured for tail launches;
 * its fire-and-forget rows are not yet run, and every chained wave so far has run to its end), whose
 * blocks wait for this step's to finish. A graph's parameters are fixed, so every chained grid is a wave with step 0's parameters,
 * and finds its own step by a ticket per block; nlev: the steps of the chain. The next step is
 * launched whenever this level has tiles and a next step exists, before the level's children are
 * counted: a step whose level turns out empty ends the chain (as hostlaunch's empty steps exit).
 * Dynamic shared memory: the model tables (fill = model, tp of them), then tp tiles of criterion
 * cells. */
template <int MINB, int CHAIN, int FILL, int FLAGS = 1>
__global__ void __launch_bounds__(HOST_THREADS, MINB) refineStep(dmesh_t M, level_scans_t S, long long *ls, int level, int k,
                                                                 int flag, int tp, int slot, int early, int nlev)
{
    if constexpr (!FLAGS) flag = 0; /* the last step: its flag pass compiled out */
    __shared__ step_smem Sh;
    extern __shared__ __align__(16) double tab[]; /* 16: block_fill_tiles' float4 stores into crit */
    const cta_team tm;
    int last = 0; /* (CHAIN) this block is its step's last to start */
    if constexpr (CHAIN && FLAGS) {
        /* the grid's step from a ticket per block; level, slot and k are step 0's (the last step, FLAGS
           0, is a grid of its own with its own parameters, launched by the step before it) */
        const step_chain ch(S);
        k += ch.k, level += ch.k, slot += ch.k;
        last = ch.last;
        flag = k + 1 < nlev;
    }
    stamp_start(M.stamps, slot);
    const dp_params *p = &c_params;
    const int tid = tm.rank(), ns = 1 << p->dim;
    float *crit = (float *)(tab + (FILL == DP_FILL_PROLONG ? 0 : tp * dp_model_table_size(p)));
    for (int i = tid; i < tp; i += HOST_THREADS) Sh.smask[i] = 0;
    scan_state_t st;
    st.Init(S.nb[k], S.scan + S.off[k], 0);
    const double h = dp_spacing(p, level + 1);
    cudaGridDependencySynchronize(); /* level L's tiles, their cells and childmask, and d_ls are ready */
    if constexpr (CHAIN) step_chain_wait(S, k); /* the same, for a step launched early from the device */
    if (early) cudaTriggerProgrammaticLaunchCompletion();
    const long long s = ls[level], e = ls[level + 1], n = e - s;
    if constexpr (CHAIN && FLAGS) if (last && threadIdx.x == 0 && n > 0 && flag) step_chain_launch(S, k, M.stats);
    const int P = step_group(n, (long long)gridDim.x);
    const long long ng = (n + P - 1) / P; /* groups of the level */
    if (n == 0 && blockIdx.x == 0 && threadIdx.x == 0) ls[level + 2] = e;
    /* the groups: the block's own first, then by ticket after the grid's first round; a level of at
       most one group per block takes no ticket (group_order, level_scan.cuh; the grid is one wave) */
    const group_order order;
    long long v = order.first(tm);
    for (;;) {
        if (v >= ng) break; /* the same for every thread of the block */
        /* 1. this parent's children: their offset from the level's end, by the level-wide scan */
        const long long i = v * P + tid;
        const unsigned mask = tid < P && i < n ? M.childmask[s + i] : 0u;
        const long long off = group_scan(tm, st, Sh.scan, v, __popc(mask), childmask_counts{M.childmask + s}, v * P,
                                           &Sh.c0, &Sh.c1);
        tm.sync();
        const long long c0 = Sh.c0, c1 = Sh.c1;
        const int fits = e + c1 <= M.cap;
        if (!fits && tid == 0) atomicMax(&M.stats[ST_OVERFLOW], (unsigned long long)(e + c1));
        if (v == ng - 1 && tid == 0) ls[level + 2] = fits ? e + c1 : e; /* an overflow leaves later levels empty */
        if (fits && c1 > c0) {
            /* 2. their metadata, octant by octant: each parent's thread lists its children in shared
               memory, then the block writes them, a child per thread (a parent's thread writing its
               own children one after the other held the block at the barrier behind it) */
            for (int o = 0, k = (int)(off - c0); o < ns; ++o)
                if (mask >> o & 1) Sh.kids[k++] = (uint16_t)(tid << 3 | o);
            tm.sync();
            for (int k = tid; k < (int)(c1 - c0); k += HOST_THREADS) {
                const int q = Sh.kids[k];
                write_child(M, e + c0 + k, level + 1, s + i - tid + (q >> 3), q & 7);
            }
            tm.sync();
            /* 3. their cells, tp tiles at a time, and their flags */
            for (long long j0 = c0; j0 < c1; j0 += tp) {
                const int g = (int)(c1 - j0 < tp ? c1 - j0 : tp);
                if (FILL == DP_FILL_PROLONG) block_fill_prolong(tm, M, e + j0, g, flag ? crit : NULL, Sh.kids + (j0 - c0), s + v * P);
                else block_fill_model(tm, M, e + j0, g, level + 1, tab, tp, flag ? crit : NULL);
                if (!flag) continue;
                tm.sync(); /* the criterion cells are in crit */
                block_flag_pass(tm, crit, g, h, Sh.smask, M.childmask + e + j0);
            }
        }
        tm.sync(); /* every thread of the block has read this group's shared values */
        if (ng <= order.round) break; /* one round: every group had its block */
        v = order.ticket(tm, &S.tickets[k], &Sh.v);
    }
    if (!early) cudaTriggerProgrammaticLaunchCompletion();
    stamp_end(M.stamps, slot);
    if constexpr (CHAIN) step_chain_finish(S, k);
}

/* Timeline slots: 0 flagTiles (level Lp), 1 + k refineStep k (level Lp + k to Lp + k + 1). */
static void slot_label(int i, char *buf, size_t n, const void *vLp)
{
    const int Lp = *(const int *)vLp;
    if (i == 0) snprintf(buf, n, "flagTiles L%d", Lp);
    else snprintf(buf, n, "refineStep L%d->L%d", Lp + i - 1, Lp + i);
}

/* The steps' scan regions at capacity cap for grids of at most nblocks blocks: step k's level (Lp + k) holds at
 * most U_k tiles (level_bound_next), so at most max(STEP_GROUPS_PER_BLOCK * nblocks,
 * ceil(U_k / HOST_THREADS)) groups (step_group), and no more than U_k. Returns the bytes of all
 * regions (S's off and nb filled when S). */
static double steps_layout(level_scans_t *S, const dp_params *p, long long nfront, long long roots, int Lp, int nlev,
                           long long cap, long long nblocks, int *maxnb)
{
    long long nb[DP_MAX_LEVELS], u = nfront;
    for (int k = 0; k < nlev; ++k) {
        if (k > 0) u = level_bound_next(p, u, roots, Lp, k, cap);
        const long long spread = STEP_GROUPS_PER_BLOCK * nblocks, full = (u + HOST_THREADS - 1) / HOST_THREADS;
        nb[k] = full > spread ? full : spread;
        nb[k] = nb[k] < u ? nb[k] : u;
    }
    int bad_k = 0; /* -1 past what a scan's states hold (about 1.34e8 groups, level_scans_layout): a capacity
                      past 3e10 tiles, which no device holds */
    return level_scans_layout(S, nb, nlev, maxnb, &bad_k);
}

/* What refine_steps allocates on the device at a capacity: the store with its timeline slots, the
 * level sizes, the steps' tickets and scan regions, and (chain) the pending-launch pool. */
typedef struct {
    const dp_params *p;
    long long nfront, roots, nblocks, pool;
    int Lp, nlev;
} host_need_t;

static double host_need(long long cap, const void *vctx)
{
    const host_need_t *c = (const host_need_t *)vctx;
    int maxnb = 0;
    const double scans = steps_layout(NULL, c->p, c->nfront, c->roots, c->Lp, c->nlev, cap, c->nblocks, &maxnb);
    if (scans < 0) return 1e300; /* no device holds it */
    return dmesh_store_bytes(c->p, cap, c->nlev + 1) + (double)(DP_MAX_LEVELS + 2) * sizeof(long long) +
           DP_MAX_LEVELS * sizeof(unsigned long long) + scans + dbal_bytes(c->p, cap, 0) +
           (double)c->pool * DP_POOL_SLOT_BYTES;
}

/* refineStep's instance: chain 1 holds the device graph launch of the next step, which hostlaunch's
 * kernel may not hold (the host's launch of a kernel with a device graph launch in its code fails:
 * regrid_gpu.cu's regridStep) */
template <int FILL> static const void *step_kernel_of(int chain)
{
    return chain ? (const void *)refineStep<STEP_MINB(FILL), 1, FILL> : (const void *)refineStep<STEP_MINB(FILL), 0, FILL>;
}
/* the last step's instance (both engines): no flags, more blocks per SM */
template <int FILL> static const void *step_last_kernel_of(int chain)
{
    return chain ? (const void *)refineStep<STEP_MINB_LAST(FILL), 1, FILL, 0>
                 : (const void *)refineStep<STEP_MINB_LAST(FILL), 0, FILL, 0>;
}

/* hostlaunch's launches of one refinement on s, in order: initLevelScans, flagTiles and a refineStep
 * per level, each with PDL as the deck says; captured into a graph before the timing. */
static cudaError_t host_kernels(cudaStream_t s, level_scans_t *S, int maxnb, int nlev, dmesh_t *M, int Lp,
                                long long *d_ls, int *early, unsigned grid, int pdl, int tp, const void *step_kernel,
                                size_t step_smem, const void *last_kernel, unsigned grid_last, size_t last_smem)
{
    cudaError_t e;
    void *ia[] = { S };
    if ((e = launch_pdl((const void *)initLevelScans, dim3((unsigned)((maxnb + 255) / 256), (unsigned)nlev), dim3(256),
                        s, 0, ia)) != cudaSuccess)
        return e;
    int slot = 0;
    void *fa[] = { M, (void *)&Lp, &d_ls, &slot, early };
    if ((e = launch_pdl((const void *)flagTiles, dim3(grid), dim3(HOST_THREADS), s, pdl, fa)) != cudaSuccess) return e;
    for (int k = 0; k < nlev; ++k) {
        int L = Lp + k, sl = 1 + k, flag = k + 1 < nlev, nl = nlev;
        void *ra[] = { M, S, &d_ls, &L, &k, &flag, &tp, &sl, early, &nl };
        e = flag ? launch_pdl_smem(step_kernel, dim3(grid), dim3(HOST_THREADS), step_smem, s, pdl, ra)
                 : launch_pdl_smem(last_kernel, dim3(grid_last), dim3(HOST_THREADS), last_smem, s, pdl, ra);
        if (e != cudaSuccess) return e;
    }
    return cudaSuccess;
}

/* The level steps of hostlaunch (chain 0: every step launched from the host, chained by PDL) and of
 * cdp's level grain (chain 1: the host launches the first step, each step launches the next from the
 * device). The same kernel and the same groups; see the top of the file. */
static int refine_steps(const deck_t *d, mesh_t *m, refine_report_t *r, int chain, char *err, size_t errlen)
{
    const dp_params *p = &d->p;
    const char *who = chain ? "cdp" : "hostlaunch";
    cudaStream_t s = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    dmesh_t M;
    memset(&M, 0, sizeof M);
    level_scans_t S;
    memset(&S, 0, sizeof S);
    chain_graphs_t cg; /* cdp: the chain's graphs, one per step */
    memset(&cg, 0, sizeof cg);
    cudaGraph_t hg = NULL; /* hostlaunch: its kernels as one graph */
    cudaGraphExec_t hx = NULL;
    long long *d_ls = NULL;
    const double t_start = timer_ms();
    const int Lp = m->nlevels - 1, nlev = p->max_level - Lp > 0 ? p->max_level - Lp : 0;
    const dp_tidx frontier = m->level_start[Lp];
    const long long roots = (long long)m->root[0] * m->root[1] * m->root[2];
    long long ls[DP_MAX_LEVELS + 2], ntot = 0, cap = 0, bound = 0, pool = 0;
    unsigned long long st[ST_COUNT];
    unsigned long long *stamps = NULL;
    float build_ms = 0.0f, bal_ms = 0.0f;
    double t_graphs = 0.0, graph_ms = 0.0; /* the graphs' setup, before the timing */
    long long from = frontier; /* the first tile downloaded: 0 when balance added tiles */
    int rc = -1, maxnb = 1, pool_set = 0;
    int sms = 0, dev = 0, early = d->pdl_trigger_early, tp = 1;
    size_t step_smem = 0, pool_before = 0;
    const void *step_kernel = NULL, *last_kernel = NULL; /* last_kernel: the last step's (FLAGS 0) */
    size_t last_smem = 0;
    unsigned grid = 0, grid_last = 0;
    cap_t capinfo;
    dstage_t stage;
    memset(&stage, 0, sizeof stage);
    char need_err[256] = "";
    host_need_t need = { p, (long long)(m->level_start[Lp + 1] - frontier), roots, 0, 0, Lp, nlev };
    for (int L = 0; L < DP_MAX_LEVELS + 2; ++L) ls[L] = m->level_start[L <= Lp + 1 ? L : Lp + 1];
    /* (chain: a step that is never launched leaves its level's end as it is, here the input's end) */

    nvtxRangePushA(chain ? "cdp: setup" : "host: setup");
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    /* the tiles per pass (step_pass_tiles: within the default limit, one tile past it opts in) */
    step_kernel = p->fill == DP_FILL_PROLONG ? step_kernel_of<DP_FILL_PROLONG>(chain) : step_kernel_of<DP_FILL_MODEL>(chain);
    CK(step_pass_tiles(step_kernel, p, HOST_THREADS, &tp, &step_smem));
    /* every block resident at once: a group's look-back waits only on groups of running blocks. A
     * chained grid, launched from the device as a graph, gets as many blocks per SM as a host launch
     * (tools/cdp_residency.cu: graph tail launches; measured fire and forget in dpamr's own runs, whose
     * waves would hang if a block were not resident), so both engines run the same grid; flagTiles
     * (the first step's head) runs on it too */
    {
        unsigned grid_flag = 0;
        char what[64];
        snprintf(what, sizeof what, "%s: refineStep", who);
        if (kernel_wave(step_kernel, HOST_THREADS, step_smem, sms, what, p, &grid, err, errlen) != 0) goto fail;
        snprintf(what, sizeof what, "%s: flagTiles", who);
        if (kernel_wave((const void *)flagTiles, HOST_THREADS, 0, sms, what, p, &grid_flag, err, errlen) != 0) goto fail;
        grid = grid_flag < grid ? grid_flag : grid;
    }
    need.nblocks = grid;
    /* the last step flags nothing: its own instance, without the criterion cells in shared memory (the
       model tables stay), as many blocks as fit on the device at once (one wave: a group's look-back
       waits only on running blocks; in cdp's chain its blocks become resident as the step before's,
       all resident already, end); the scan regions are sized for the larger grid */
    if (nlev > 0) {
        last_kernel = p->fill == DP_FILL_PROLONG ? step_last_kernel_of<DP_FILL_PROLONG>(chain)
                                                 : step_last_kernel_of<DP_FILL_MODEL>(chain);
        last_smem = step_pass_smem(p, tp, 0);
        char what[64];
        snprintf(what, sizeof what, "%s: the last refineStep", who);
        if (kernel_wave(last_kernel, HOST_THREADS, last_smem, sms, what, p, &grid_last, err, errlen) != 0) goto fail;
        if (grid_last > grid) need.nblocks = grid_last;
    }
    /* the chain's launches: one per step after the first (each a launch of the step's graph, issued
     * by the step before it once all its blocks run), so at most this many pending at once; the pool
     * is granted at this bound as for kernel launches (whether device graph launches draw on it the
     * guide does not say) */
    if (chain) {
        bound = nlev > 1 ? nlev - 1 : 0;
        pool = d->pool > 0 ? d->pool : (bound > 0 ? bound : 1);
        need.pool = pool > 32 ? pool : 32; /* the runtime grants 32 at least */
    }
    /* the capacity: max_tiles, or what the device (store, scan regions, pool) and the host hold */
    if (gpu_capacity(d, m, host_need, &need, need_err, &capinfo, err, errlen) != 0) goto fail;
    cap = capinfo.cap;
    r->capacity = cap;
    snprintf(r->capacity_limit, sizeof r->capacity_limit, "%s", capinfo.limit);
    if (chain) {
        CK(pool_acquire(pool, &pool_before, &r->pool_size));
        pool_set = 1;
        r->pool_requested = pool;
        r->pool_bound = bound;
    }
    CK(upload_params(p, s));
    if (dmesh_create(&M, m, cap, nlev + 1, &stage, d->progress && !d->quiet, s, err, errlen) != 0) goto fail;
    CK(cudaMalloc((void **)&d_ls, sizeof ls));
    CK(cudaMemcpyAsync(d_ls, ls, sizeof ls, cudaMemcpyHostToDevice, s));
    if (nlev > 0) {
        const double scan_bytes = steps_layout(&S, p, need.nfront, roots, Lp, nlev, cap, need.nblocks, &maxnb);
        if (scan_bytes < 0) { /* the capacity search rejects such a capacity (host_need) */
            snprintf(err, errlen, "%s: a level step of more than 2^31 groups at capacity %lld", who, cap);
            goto fail;
        }
        CK(cudaMalloc((void **)&S.tickets, (size_t)nlev * sizeof(unsigned long long)));
        if (chain) {
            CK(cudaMalloc((void **)&S.started, sizeof(unsigned long long)));
            CK(cudaMalloc((void **)&S.done, (size_t)nlev * sizeof(unsigned long long)));
            CK(cudaMalloc((void **)&S.execs, (size_t)nlev * sizeof(cudaGraphExec_t)));
            S.chain_grid = grid; /* every step's grid but the last's (step_chain_wait) */
        }
        CK(cudaMalloc((void **)&S.scan, (size_t)scan_bytes));
    }
    CK(cudaStreamSynchronize(s)); /* the mesh uploaded: what follows is the graphs' setup (graph_ms) */
    t_graphs = timer_ms();
    /* cdp: the chain's step as a one-node graph that device code may launch, one per step, a wave of
       blocks with step 0's parameters (each grid finds its own step by ticket: refineStep), but the
       last step's, the last instance on its own grid with its own parameters; step 0's graph begins
       with initLevelScans and flagTiles (plain edges: no PDL between them), so that the timed refine
       is one graph launch, as hostlaunch's; uploaded here, so that no launch is timed with an upload */
    if (chain && nlev > 0) {
        int L0 = Lp, k0 = 0, flag0 = nlev > 1, slot0 = 1;
        void *ga[] = { &M, &S, &d_ls, &L0, &k0, &flag0, &tp, &slot0, &early, (void *)&nlev };
        const cudaKernelNodeParams kp = chain_node(step_kernel, grid, HOST_THREADS, step_smem, ga);
        int Ll = Lp + nlev - 1, kl = nlev - 1, flagl = 0, slotl = nlev;
        void *la[] = { &M, &S, &d_ls, &Ll, &kl, &flagl, &tp, &slotl, &early, (void *)&nlev };
        const cudaKernelNodeParams kpl = chain_node(last_kernel, grid_last, HOST_THREADS, last_smem, la);
        int slotf = 0;
        void *ia[] = { &S }, *fa[] = { &M, (void *)&Lp, &d_ls, &slotf, &early };
        cudaKernelNodeParams head[2];
        head[0] = chain_node((const void *)initLevelScans, (unsigned)((maxnb + 255) / 256), 256, 0, ia);
        head[0].gridDim.y = (unsigned)nlev;
        head[1] = chain_node((const void *)flagTiles, grid, HOST_THREADS, 0, fa);
        CK(chain_graphs_create(&cg, &kp, &kpl, head, 2, nlev, S.execs, s));
    }
    /* hostlaunch: its kernels captured once into a graph (PDL's programmatic edges kept), instantiated
       and uploaded here as cdp's chain is, so that both engines start the timed refine with the launch
       of an uploaded graph (the graphs' setup is reported apart: graph_ms, part of upload_ms) */
    if (!chain && nlev > 0) {
        CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
        const cudaError_t ce = host_kernels(s, &S, maxnb, nlev, &M, Lp, d_ls, &early, grid, d->pdl, tp, step_kernel,
                                            step_smem, last_kernel, grid_last, last_smem);
        const cudaError_t ee = cudaStreamEndCapture(s, &hg);
        CK(ce);
        CK(ee);
        CK(cudaGraphInstantiate(&hx, hg, 0));
        CK(cudaGraphUpload(hx, s));
    }
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaStreamSynchronize(s));
    r->upload_ms = timer_ms() - t_start;
    graph_ms = timer_ms() - t_graphs;
    nvtxRangePop();

    nvtxRangePushA(chain ? "cdp: level steps (device-side launches)" : "host: level steps");
    CK(cudaEventRecord(e0, s));
    if (!chain && nlev > 0) CK(cudaGraphLaunch(hx, s)); /* every step */
    if (chain && nlev > 0) CK(cudaGraphLaunch(cg.exec[0], s)); /* the head and step 0, which launches the rest */
    CK(cudaEventRecord(e1, s));
    CK(cudaEventSynchronize(e1)); /* a fault in a device-launched step surfaces here */
    CK(cudaEventElapsedTime(&build_ms, e0, e1));
    nvtxRangePop();
    CK(cudaMemcpyAsync(st, M.stats, sizeof st, cudaMemcpyDeviceToHost, s));
    CK(cudaMemcpyAsync(ls, d_ls, sizeof ls, cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    if (chain) {
        r->device_launches = (long long)st[ST_LAUNCHES];
        r->launch_failures = (long long)(st[ST_FAIL_PENDING] + st[ST_FAIL_RESOURCES] + st[ST_FAIL_OTHER]);
        if (launch_failures(st, r->pool_size, "level", bound,
                            " (the level chain needs fewer pending launches than the 32 the runtime grants at least: "
                            "look at the device's resources rather than the pool)",
                            err, errlen) != 0)
            goto fail;
    }
    if (st[ST_OVERFLOW] > 0) {
        cap_overflow_message(&capinfo, (long long)st[ST_OVERFLOW], "deeper levels not counted", err, errlen);
        goto fail;
    }
    /* the chain's steps never launched (the level before was empty) left their level ends at the
       input's end: the ends of the levels they did not make are the last real end */
    for (int L = Lp + 2; L <= Lp + nlev + 1; ++L) ls[L] = ls[L] > ls[L - 1] ? ls[L] : ls[L - 1];
    ntot = ls[Lp + nlev + 1];

    /* per-level times and PDL gaps from the device timeline: step k runs from the end of the kernel
     * before it (flagTiles for step 0) to its own end; the gaps are between consecutive kernels (the
     * chain's: a device graph launch, issued early, so its blocks may start before the step before
     * ends: a negative gap). A step the chain did not launch (the level before was empty) has no
     * stamps. */
    if (nlev > 0) {
        const int nslot = nlev + 1;
        if (timeline_download(&M, nslot, s, &stamps, err, errlen) != 0) goto fail;
        r->ngaps = 0;
        for (int k = 0; k < nlev; ++k) {
            if (!stamps[2 * (k + 1) + 1]) break;
            r->level_ms[Lp + k + 1] = (double)((long long)stamps[2 * (k + 1) + 1] - (long long)stamps[2 * k + 1]) * 1e-6;
            if (r->ngaps < DP_MAX_LEVELS)
                r->gap_ns[r->ngaps++] = (double)((long long)stamps[2 * (k + 1)] - (long long)stamps[2 * k + 1]);
        }
        if (timeline_write_named(d->trace, slot_label, &Lp, stamps, nslot, err, errlen) != 0) goto fail;
    }
    /* balance = 2:1: the tiles balance needs, on the device, before the download */
    if (dbal_refine(d, m, &M, &ntot, &from, &capinfo, s, &bal_ms, err, errlen) != 0) goto fail;
    if (dmesh_download(&M, m, from, ntot, &stage, d->progress && !d->quiet, s, &r->download_ms, err, errlen) != 0)
        goto fail;
    r->refine_ms = build_ms + bal_ms;
    for (int L = Lp + 1; L < m->nlevels; ++L)
        if (!d->quiet) printf("  level %2d: %12lld tiles  %10.3f ms (device timeline)\n", L,
               (long long)(m->level_start[L + 1] - m->level_start[L]), r->level_ms[L]);
    if (chain)
        snprintf(r->note, sizeof r->note,
                 "cdp grain level: level steps %.3f ms (one grid per level, launched from the device by the level "
                 "before as a graph, %u blocks of %d threads; canonical order by a device scan, no sort), upload "
                 "%.3f ms (%.3f of it the chain's graphs, built before the timing), download %.3f ms",
                 build_ms, grid, HOST_THREADS, r->upload_ms, graph_ms, r->download_ms);
    else
        snprintf(r->note, sizeof r->note,
                 "host: level steps %.3f ms (pdl %s; the host's launches as one graph), upload %.3f ms (%.3f of it "
                 "the graph, captured and uploaded before the timing), download %.3f ms",
                 build_ms, d->pdl ? "on" : "off", r->upload_ms, graph_ms, r->download_ms);
    r->total_ms = timer_ms() - t_start;
    rc = 0;
fail: /* success falls through: one cleanup path (an NVTX range may stay open on an error) */
    free(stamps);
    cudaFree(d_ls);
    cudaFree(S.tickets);
    cudaFree(S.started);
    cudaFree(S.done);
    cudaFree(S.execs);
    cudaFree(S.scan);
    chain_graphs_destroy(&cg);
    if (hx) cudaGraphExecDestroy(hx);
    if (hg) cudaGraphDestroy(hg);
    dmesh_destroy(&M);
    dstage_destroy(&stage);
    if (pool_set) pool_release(pool_before);
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    if (s) cudaStreamDestroy(s);
    return rc;
}

int refine_host(const deck_t *d, mesh_t *m, refine_report_t *r, char *err, size_t errlen)
{
    return refine_steps(d, m, r, 0, err, errlen);
}

int refine_cdp_level(const deck_t *d, mesh_t *m, refine_report_t *r, char *err, size_t errlen)
{
    return refine_steps(d, m, r, 1, err, errlen);
}
