/* level_scan.cuh - the single-pass scans over a level's groups that both GPU engines run
 * (refineStep: hostlaunch and cdp's level grain; regridStep): a group's child count is
 * scanned with CUB's decoupled look-back (cub::ScanTileState; team_lookback, CUB's
 * TilePrefixCallbackOp for any team), in ticket order, so the children land after the level's end in
 * canonical order; group_scan (refineStep, regridStep) sums a group's prefix directly instead where
 * few items precede it. One region of scan
 * tile states and one ticket counter per level step, reset once before the first level by
 * initLevelScans; the level's size bound U_k sizes the regions. */
#ifndef DPAMR_LEVEL_SCAN_CUH
#define DPAMR_LEVEL_SCAN_CUH

#include <cub/agent/single_pass_scan_operators.cuh>
#include <cub/warp/warp_scan.cuh>
#include <cuda/std/functional>

#include "device/gpu_common.cuh"

typedef cub::ScanTileState<long long> scan_state_t;

/* The steps' scans. Passed by value (in a kernel's parameters). */
typedef struct {
    unsigned long long *tickets;  /* [DP_MAX_LEVELS]: groups taken per level step k */
    unsigned long long *started;  /* cdp's chains: blocks started (each grid's step by ticket), or NULL */
    unsigned long long *done;     /* cdp's chains: blocks finished per step (one per step), or NULL */
    cudaGraphExec_t *execs;       /* cdp's chains: step k's graph (device memory), or NULL (step_chain) */
    unsigned chain_grid;          /* cdp's chains: the blocks of each chained grid (but cdp level's last
                                     step's, a grid of its own: refineStep FLAGS 0) */
    char *scan;                   /* the regions */
    long long off[DP_MAX_LEVELS]; /* byte offset of step k's region */
    int nb[DP_MAX_LEVELS];        /* groups step k's region holds */
} level_scans_t;

/* U_k, the bound on level Lp + k's size at capacity cap, from U_{k-1}: min(U_{k-1} 2^dim, the level's
 * domain (roots 2^(dim (Lp + k))), cap). U_0 is the frontier. */
static inline long long level_bound_next(const dp_params *p, long long u, long long roots, int Lp, int k,
                                         long long cap)
{
    const long long dom = cap_shl(roots, p->dim * (Lp + k));
    u = cap_shl(u, p->dim);
    u = u < dom ? u : dom;
    return u < cap ? u : cap;
}

/* Lay out the regions of nlev steps, step k for nb[k] groups (at least 1): S's off and nb (when S),
 * *maxnb the largest. Returns the bytes of all regions, or -1 when step *bad_k has more groups than a
 * scan handles: where CUB's size query would overflow (CUDA 13.0's tile_state_allocation_size
 * multiplies in int: (n + 32) x 16 bytes wraps from 134,217,696 groups, to a size too small for the
 * states initLevelScans then writes). */
static inline double level_scans_layout(level_scans_t *S, const long long *nb, int nlev, int *maxnb, int *bad_k)
{
    double total = 0.0;
    *maxnb = 1;
    for (int k = 0; k < nlev; ++k) {
        const long long n = nb[k] > 0 ? nb[k] : 1;
        /* CUB's int product must not overflow: that is undefined behaviour, which an optimising compiler
         * may assume away (at -O3 a check of the size it returns was removed and the wrapped size kept),
         * so n is bounded before the call: (n + 32) x 16 bytes (a long long's state) within INT_MAX */
        if (n > 0x7fffffffll / 16 - 32) {
            *bad_k = k;
            return -1.0;
        }
        size_t bytes = 0;
        scan_state_t::AllocationSize((int)n, bytes);
        if (S) {
            S->off[k] = (long long)total;
            S->nb[k] = (int)n;
        }
        total += (double)((bytes + 255) & ~(size_t)255);
        *maxnb = (int)n > *maxnb ? (int)n : *maxnb;
    }
    return total;
}

/* What group_scan shares within a team of at most NW warps (shared memory, one per team). */
template <int NW> struct team_scan_smem {
    long long wsum[NW]; /* each warp's total */
    long long wdir[NW]; /* each warp's part of the direct prefix (group_scan) */
    long long base;     /* the group's offset from the level's start */
};

/* group_scan sums a group's prefix directly, from the counts of the items before it, where those
 * are at most this many per thread of the team; past that it looks back. */
#define SCAN_DIRECT_PER_THREAD 16

/* The exclusive prefix of group v > 0, whose own total is `total`, by the decoupled look-back over
 * st's tile states, for one whole warp (lane: its lane; every lane returns the prefix). It is CUB's
 * TilePrefixCallbackOp::operator() with the lane in place of threadIdx.x, which that operator takes
 * for the lane and so serves only a block's first warp (test_teams calls this one from another):
 * publish the partial total;
 * read a window of 32 predecessors (v - 1 - lane; CUB's padding makes those before group 0 out of
 * bounds), waiting while any is invalid; add the window up to its nearest inclusive prefix; slide
 * back while none is inclusive; publish the inclusive total. */
static __device__ __forceinline__ long long team_lookback(scan_state_t &st, int v, long long total, int lane)
{
    if (lane == 0) st.SetPartial(v, total);
    long long excl = 0;
    for (int pred = v - 1 - lane;; pred -= 32) {
        scan_state_t::StatusWord status;
        long long val;
        st.WaitForValid(pred, status, val);
        const unsigned incl = __ballot_sync(0xffffffffu, status == scan_state_t::StatusWord(cub::SCAN_TILE_INCLUSIVE));
        const int last = incl ? __ffs(incl) - 1 : 31; /* lanes 0..last count */
        long long x = lane <= last ? val : 0;
        for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
        excl += x;
        if (incl) break;
    }
    if (lane == 0) st.SetInclusive(v, excl + total);
    return excl;
}

/* The offsets of group v's counts (cnt: each thread's) from its level's start, through the level-wide
 * single-pass scan st: every thread of the team gets its exclusive offset; the team's first thread
 * sets *c0 and its last *c1 (shared memory: the group's children span [c0, c1) counted from the
 * level's end). The group's prefix, the sum of the counts of the level's items [0, first) before it:
 * - direct, where those are at most SCAN_DIRECT_PER_THREAD per thread of the team: the team sums
 *   counts(i) over them itself (a few independent loads per thread and the sum of the warps' parts)
 *   and publishes its inclusive total at once. The counts must then be readable by every group (the
 *   previous kernel's childmask, not this grid's), and counts(i) the count the group that holds item
 *   i passes as its cnt. A level's first round of groups starts at once (one wave), and a look-back
 *   from group v then takes about v / 32 windows of L2 round trips until the inclusive totals reach
 *   it: on bench2d's and bench3d's small levels the direct sum took 1 to 3 us off steps of 7 to 19
 *   (an H100, docs/results.md, *Session 32*);
 * - else by the decoupled look-back (group 0 publishes its total, a later one looks back with its
 *   first warp: team_lookback), which then finds the direct groups' inclusive totals.
 * A team (cta_team: the block, gpu_common.cuh) of at most NW warps; the scan is CUB's warp scan, the
 * warps' totals in S (cub::BlockScan's BLOCK_SCAN_WARP_SCANS over a team instead of a block). Two
 * team barriers inside; the caller syncs the team before reading *c0 and *c1. The sums are of
 * integers: the offsets do not depend on the path. */
template <int NW, class Team, class Counts>
static __device__ __forceinline__ long long group_scan(const Team &tm, scan_state_t &st, team_scan_smem<NW> &S,
                                                       long long v, long long cnt, const Counts &counts, long long first,
                                                       long long *c0, long long *c1)
{
    typedef cub::WarpScan<long long> warp_scan_t;
    __shared__ typename warp_scan_t::TempStorage none; /* (the shuffle scan keeps nothing there) */
    const int r = tm.rank(), lane = r & 31, w = r >> 5, nw = tm.size() >> 5;
    const bool direct = v > 0 && first <= (long long)SCAN_DIRECT_PER_THREAD * tm.size(); /* the team's */
    long long incl, wagg, d = 0;
    if (direct) {
#pragma unroll 4
        for (long long i = r; i < first; i += tm.size()) d += counts(i);
        for (int o = 16; o > 0; o >>= 1) d += __shfl_xor_sync(0xffffffffu, d, o);
    }
    warp_scan_t(none).InclusiveSum(cnt, incl, wagg);
    if (lane == 0) {
        S.wsum[w] = wagg;
        S.wdir[w] = d;
    }
    tm.sync();
    long long before = 0, total = 0, pre = 0; /* the warps' before this one, the group's total, its prefix */
    for (int k = 0; k < nw; ++k) {
        before += k < w ? S.wsum[k] : 0;
        total += S.wsum[k];
        pre += S.wdir[k];
    }
    if (w == 0) {
        if (v == 0) {
            if (lane == 0) {
                st.SetInclusive(0, total);
                S.base = 0;
            }
        } else if (direct) {
            if (lane == 0) {
                st.SetInclusive((int)v, pre + total);
                S.base = pre;
            }
        } else {
            const long long ex = team_lookback(st, (int)v, total, lane);
            if (lane == 0) S.base = ex;
        }
    }
    tm.sync();
    const long long off = S.base + before + incl - cnt;
    if (r == 0) *c0 = off;
    if (r == tm.size() - 1) *c1 = off + cnt;
    return off;
}

/* group_scan's counts of a level's parents: their children, the popcount of their childmask (the
 * previous kernel's) from the level's first tile on. */
struct childmask_counts {
    const uint8_t *m;
    __device__ __forceinline__ long long operator()(long long i) const { return __popc((unsigned)m[i]); }
};

/* The order in which the blocks of a grid take a level's groups (refineStep, regridStep and
 * test_teams' skeleton of them): each block's own group first (group blockIdx.x: a level of at most
 * a group per block has one on every block, so on every SM), then by ticket past the grid's first
 * round; a level of at most a group per block takes no ticket. The grid is at most one wave (every
 * block becomes resident), so a first-round group's look-back waits only on blocks that run. */
struct group_order {
    long long round; /* groups of the first round: the grid's blocks */
    __device__ __forceinline__ group_order() : round((long long)gridDim.x) {}
    template <class Team> __device__ __forceinline__ long long first(const Team &) const { return blockIdx.x; }
    /* The team's next group past the first round (the caller stops before when the level has no
     * more groups than round), for every thread of the team after the team's barrier that ends a
     * group: the team's first thread draws the ticket into *sv (shared memory); the team syncs once. */
    template <class Team>
    __device__ __forceinline__ long long ticket(const Team &tm, unsigned long long *tickets, long long *sv) const
    {
        if (tm.rank() == 0) *sv = round + (long long)atomicAdd(tickets, 1ull);
        tm.sync();
        return *sv;
    }
};

/* A step of cdp's chains (cdp level's refineStep, cdp's regridStep), launched early as PDL would
 * launch it. Every step is a one-node graph of its own, instantiated for device launch (S.execs[k]:
 * a running graph cannot be launched again, and step k's graph still runs when it launches step k +
 * 1; one graph per step, built before the timed part), a wave of blocks with the parameters of step
 * 0, that finds its step by a ticket per block (S.started). The last block of step k to start, once
 * it has waited for step k - 1, launches step k + 1 at once, fire and forget as a sibling (a nested
 * child would keep every graph before it running, and the host's step 0 completed 13.8 us after the
 * chain's last level, against about 7 as siblings: H100, session 40): step k + 1's blocks become
 * resident as step k's blocks end (every block of step k is resident by then, so none can wait on a
 * block that cannot run) and wait, where a host-launched step calls cudaGridDependencySynchronize,
 * until every block of step k has finished (S.done[k], reset by initLevelScans). A tail launch,
 * which starts once its parent grid has ended, left 3.3-4.5 us between two steps, against 0.9-1.6
 * us for this (tools/exp/graph_launch_cost.cu, H100, session 38). The host launches step 0's graph;
 * its stream work completes once the whole chain has. Only cdp's instances hold this code: a
 * host-launched kernel may hold no device graph launch (cudaErrorNotSupported, session 36). A
 * chained kernel's blocks must all reach step_chain_finish: a block that returned early would leave
 * the next step waiting for ever (and the host in its synchronisation, with no error). */
struct step_chain {
    int k;    /* the block's step */
    int last; /* the block is its step's last to start */
    /* The ticket: every thread of the block, at the kernel's start (a block barrier). */
    __device__ __forceinline__ explicit step_chain(const level_scans_t &S)
    {
        __shared__ int sk, sl;
        if (threadIdx.x == 0) {
            const unsigned long long t = atomicAdd(S.started, 1ull);
            sk = (int)(t / gridDim.x);
            sl = t % gridDim.x == gridDim.x - 1;
        }
        __syncthreads();
        k = sk;
        last = sl;
    }
};

/* Wait until every block of step k - 1 (a grid of S.chain_grid blocks) has finished and its writes are
 * visible (every thread of the block; a block barrier unless k = 0). */
static __device__ __forceinline__ void step_chain_wait(const level_scans_t &S, int k)
{
    if (k == 0) return;
    if (threadIdx.x == 0) {
        while (*(volatile unsigned long long *)&S.done[k - 1] < S.chain_grid) __nanosleep(32);
        __threadfence();
    }
    __syncthreads();
}

/* Launch step k + 1, counted in st: one thread of step k's last block to start, after its wait. */
static __device__ __forceinline__ void step_chain_launch(const level_scans_t &S, int k, unsigned long long *st)
{
    dp_count_launch(st, cudaGraphLaunch(S.execs[k + 1], cudaStreamGraphFireAndForgetAsSibling));
}

/* The block has finished step k (every thread, at its end; a block barrier). */
static __device__ __forceinline__ void step_chain_finish(const level_scans_t &S, int k)
{
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        atomicAdd(&S.done[k], 1ull);
    }
}

/* Reset step k's ticket, its count of finished blocks (cdp's chains) and its scan tile states (blockIdx.y = k; blockIdx.x * blockDim.x + threadIdx.x
 * = scan tile, as CUB's InitializeStatus): a grid of (ceil(maxnb / 256), nlev) blocks of 256. */
__global__ void initLevelScans(level_scans_t S);

#endif
