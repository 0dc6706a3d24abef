/* level_scan.cuh - the single-pass scans over a level's groups that both GPU engines run (cdp's
 * level grain in refineTile, hostlaunch in refineStep): a group's child count is scanned with CUB's
 * decoupled look-back (cub::ScanTileState, cub::TilePrefixCallbackOp inside cub::BlockScan), in
 * ticket order, so the children land after the level's end in canonical order. One region of scan
 * tile states and one ticket counter per level step, reset once before the first level by
 * initLevelScans; the level's size bound U_k sizes the regions. */
#ifndef DPAMR_LEVEL_SCAN_CUH
#define DPAMR_LEVEL_SCAN_CUH

#include <cub/agent/single_pass_scan_operators.cuh>
#include <cub/block/block_scan.cuh>
#include <cuda/std/functional>

#include "device/gpu_common.cuh"

typedef cub::ScanTileState<long long> scan_state_t;
typedef cub::TilePrefixCallbackOp<long long, ::cuda::std::plus<long long>, scan_state_t> prefix_op_t;

/* The steps' scans. Passed by value (in a kernel's parameters). */
typedef struct {
    unsigned long long *tickets;  /* [DP_MAX_LEVELS]: groups taken per level step k */
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
 * scan of int tiles handles. */
static inline double level_scans_layout(level_scans_t *S, const long long *nb, int nlev, int *maxnb, int *bad_k)
{
    double total = 0.0;
    *maxnb = 1;
    for (int k = 0; k < nlev; ++k) {
        const long long n = nb[k] > 0 ? nb[k] : 1;
        if (n > 0x7fffffffll) {
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

/* The offsets of group v's counts (cnt: each thread's) from its level's start, through the level-wide
 * single-pass scan st (group 0 publishes its total, a later one looks back): every thread gets its
 * exclusive offset; the block's first thread sets *c0 and its last *c1 (shared memory: the group's
 * children span [c0, c1) counted from the level's end). BS: cub::BlockScan of long long over the
 * block's threads. The caller syncs before reading *c0 and *c1. */
template <typename BS>
static __device__ __forceinline__ long long group_scan(scan_state_t &st, typename BS::TempStorage &scan,
                                                       typename prefix_op_t::TempStorage &pre, long long v,
                                                       long long cnt, long long *c0, long long *c1)
{
    long long off;
    if (v > 0) {
        prefix_op_t prefix(st, pre, ::cuda::std::plus<long long>(), (int)v);
        BS(scan).ExclusiveSum(cnt, off, prefix);
    } else {
        long long agg;
        BS(scan).ExclusiveSum(cnt, off, agg);
        if (threadIdx.x == 0) st.SetInclusive(0, agg);
    }
    if (threadIdx.x == 0) *c0 = off;
    if (threadIdx.x == blockDim.x - 1) *c1 = off + cnt;
    return off;
}

/* Reset step k's ticket and scan tile states (blockIdx.y = k; blockIdx.x * blockDim.x + threadIdx.x
 * = scan tile, as CUB's InitializeStatus): a grid of (ceil(maxnb / 256), nlev) blocks of 256. */
__global__ void initLevelScans(level_scans_t S);

#endif
