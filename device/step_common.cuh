/* step_common.cuh - the level step both GPU engines run: hostlaunch's refineStep (one kernel per
 * level, enqueued by the host) and cdp's level grain (cdpStep, one grid per level, the next one
 * tail-launched from the device). One step takes the parents of level L = Lp + k and makes, fills and
 * flags their children on level L + 1:
 *   blocks take groups of parents in ticket order (an atomicAdd per group, never blockIdx: a group's
 *   look-back waits only on groups already taken by running blocks, whatever the grid's size and
 *   whoever launched it); a single-pass scan over the level's child counts (CUB's decoupled
 *   look-back, level_scan.cuh) gives each parent its children's slots after the level's end (octant
 *   order = canonical order); the block that owns the parents writes the children's metadata
 *   (dp_write_child), fills them (block_fill_prolong / block_fill_model) and, below max_level, flags
 *   them from their criterion cells in shared memory (or, when even one tile's cells do not fit the
 *   block's shared memory, from global memory after the fill): the childmask the next step's scan
 *   counts. What differs between the engines is in their kernels: where the level's bounds come from
 *   and what the block holding the level's last group does with the next level's end. */
#ifndef DPAMR_STEP_COMMON_CUH
#define DPAMR_STEP_COMMON_CUH

#include "device/gpu_common.cuh"
#include "device/level_scan.cuh"

/* Threads per block of a step; a group has at most this many parents (one per thread). */
#define STEP_THREADS 256
/* Groups per block of a large level: the level's children are filled by the blocks that own their
 * parents, so a level is cut into enough groups for the blocks to share its work evenly (a group's
 * children: 0 to 2^dim per parent). */
#define STEP_GROUPS_PER_BLOCK 8
/* Most tiles one block fills per pass (its shared flag masks). */
#define FILL_MAX_TILES 64

/* Parents per group of a level of n tiles in a grid of nblocks: the fewest (a power of two, at most
 * STEP_THREADS) that leave at most STEP_GROUPS_PER_BLOCK groups per block; on a small level one
 * parent per group, so its children are spread over as many blocks as it has parents. Every block
 * computes the same value; the level then has at most max(STEP_GROUPS_PER_BLOCK * nblocks,
 * ceil(n / STEP_THREADS)) groups, and at most n (steps_layout sizes the scan regions for that). */
static __host__ __device__ __forceinline__ int step_group(long long n, long long nblocks)
{
    int P = 1;
    while (P < STEP_THREADS && (n + P - 1) / P > STEP_GROUPS_PER_BLOCK * nblocks) P <<= 1;
    return P;
}

typedef cub::BlockScan<long long, STEP_THREADS, cub::BLOCK_SCAN_WARP_SCANS> step_scan_t;

/* Tiles one block fills per pass: two bricks (2^dim cells each) per thread with prolong, four cells
 * per thread with the model (its tables and barriers once per pass); at most FILL_MAX_TILES, at
 * least one. */
static inline int fill_pass_tiles(const dp_params *p, int threads)
{
    const int cells = dp_cells(p->dim, p->B);
    const int tp = p->fill == DP_FILL_PROLONG ? (threads << (p->dim + 1)) / cells : 4 * threads / cells;
    return tp < 1 ? 1 : (tp > FILL_MAX_TILES ? FILL_MAX_TILES : tp);
}

/* A step block's static shared memory. */
struct step_smem {
    typename step_scan_t::TempStorage scan;
    typename prefix_op_t::TempStorage prefix;
    long long v, c0, c1; /* the group's ticket; its children's range [c0, c1) counted from the level's end */
    unsigned smask[FILL_MAX_TILES];
};

/* Dynamic shared memory of a step for tp tiles per pass: their model tables (fill = model), then,
 * when crit, their criterion cells. */
static inline size_t step_smem_bytes(const dp_params *p, int tp, int crit)
{
    return fill_table_bytes(p, tp) + (crit ? (size_t)tp * dp_cells(p->dim, p->B) * sizeof(float) : 0);
}

/* The criterion cells' place in the dynamic shared memory `tab` (after tp model tables). */
template <int FILL>
static __device__ __forceinline__ float *step_crit(double *tab, int tp)
{
    return (float *)(tab + (FILL == DP_FILL_PROLONG ? 0 : tp * dp_model_table_size(&c_params)));
}

/* The steps' scan regions at capacity cap for grids of at most nblocks blocks: step k's level (Lp + k)
 * holds at most U_k tiles (level_bound_next), so at most min(U_k, max(STEP_GROUPS_PER_BLOCK * nblocks,
 * ceil(U_k / STEP_THREADS))) groups (step_group). Returns the bytes of all regions (S's off and nb
 * filled when S), or -1 past 2^31 groups on a step (a capacity past 2^39 tiles, which no device holds). */
static inline double steps_layout(level_scans_t *S, const dp_params *p, long long nfront, long long roots, int Lp,
                                  int nlev, long long cap, long long nblocks, int *maxnb)
{
    long long nb[DP_MAX_LEVELS], u = nfront;
    for (int k = 0; k < nlev; ++k) {
        if (k > 0) u = level_bound_next(p, u, roots, Lp, k, cap);
        const long long spread = STEP_GROUPS_PER_BLOCK * nblocks, full = (u + STEP_THREADS - 1) / STEP_THREADS;
        nb[k] = full > spread ? full : spread;
        nb[k] = nb[k] < u ? nb[k] : u;
    }
    int bad_k = 0;
    return level_scans_layout(S, nb, nlev, maxnb, &bad_k);
}

/* Octant flags of tiles [s, s + n) of `level` (the input's finest, before the first step): one warp
 * per tile, striding over the level. */
static __device__ __forceinline__ void flag_level(const dmesh_t &M, long long s, long long n, int level)
{
    const int lane = threadIdx.x & 31;
    const long long warp = (blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5;
    const long long nwarps = ((long long)gridDim.x * blockDim.x) >> 5;
    for (long long i = warp; i < n; i += nwarps) {
        const unsigned mask = warp_octant_flags(M, s + i, level, lane);
        if (lane == 0) M.childmask[s + i] = (uint8_t)mask;
    }
}

/* Step k: the children of level `level`'s tiles [s, e), made at [e, ...). Every thread of the block
 * calls it (it has barriers), after the grid's dependencies are met (the parents' cells and
 * childmask written, step k's ticket and scan states reset). tp tiles per pass; tab the dynamic
 * shared memory (tp model tables with fill = model), crit the tp tiles' criterion cells in it; GFLAGS:
 * no crit, flags from the cells in global memory (after the fill's barrier). flag: compute the
 * children's childmask (below max_level). A template parameter, so hostlaunch's kernels carry no
 * code for it.
 * last(next): called by thread 0 of the block that takes the level's last group, once its scan is
 * done and before its fill, with the next level's end: e + the level's child count, or e when they do
 * not fit the store (ST_OVERFLOW counted); not called when the level is empty. It is where the
 * engines differ: hostlaunch writes the end for the next kernel, cdp keeps it for its launch after
 * the loop. (Called where refineStep wrote the end before this code was shared; with the end
 * returned instead, kept in a register or in shared memory, refineStep<prolong> spilled 24 to 40
 * bytes under its 64 registers, though other differences of those versions may have caused it.) */
template <int FILL, int GFLAGS, class Last>
static __device__ __forceinline__ void step_groups(const dmesh_t &M, const level_scans_t &S, long long s, long long e,
                                                   int level, int k, int flag, int tp, step_smem &Sh, double *tab,
                                                   float *crit, const Last &last)
{
    const dp_params *p = &c_params;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, nwarps = blockDim.x >> 5, ns = 1 << p->dim;
    const int cells = dp_cells(p->dim, p->B);
    const double h = dp_spacing(p, level + 1);
    for (int i = tid; i < tp; i += blockDim.x) Sh.smask[i] = 0; /* ordered by the ticket's barrier */
    scan_state_t st;
    st.Init(S.nb[k], S.scan + S.off[k], 0);
    const long long n = e - s;
    const int P = step_group(n, gridDim.x);
    const long long ng = (n + P - 1) / P; /* groups of the level */
    for (;;) {
        if (tid == 0) Sh.v = (long long)atomicAdd(&S.tickets[k], 1ull);
        __syncthreads();
        const long long v = Sh.v;
        if (v >= ng) break; /* the same for every thread of the block */
        /* 1. this parent's children: their offset from the level's end, by the level-wide scan */
        const long long i = v * P + tid;
        const unsigned mask = tid < P && i < n ? M.childmask[s + i] : 0u;
        const long long cnt = __popc(mask);
        long long off;
        if (v > 0) {
            prefix_op_t prefix(st, Sh.prefix, ::cuda::std::plus<long long>(), (int)v);
            step_scan_t(Sh.scan).ExclusiveSum(cnt, off, prefix);
        } else {
            long long agg;
            step_scan_t(Sh.scan).ExclusiveSum(cnt, off, agg);
            if (tid == 0) st.SetInclusive(0, agg);
        }
        if (tid == 0) Sh.c0 = off;
        if (tid == blockDim.x - 1) Sh.c1 = off + cnt;
        __syncthreads();
        const long long c0 = Sh.c0, c1 = Sh.c1;
        const int fits = e + c1 <= M.cap;
        if (!fits && tid == 0) atomicMax(&M.stats[ST_OVERFLOW], (unsigned long long)(e + c1));
        if (v == ng - 1 && tid == 0) last(fits ? e + c1 : e); /* an overflow leaves later levels empty */
        if (fits && c1 > c0) {
            /* 2. their metadata, octant by octant */
            for (int o = 0; o < ns; ++o)
                if (mask >> o & 1) write_child(M, e + off + __popc(mask & ((1u << o) - 1)), level + 1, s + i, o);
            __syncthreads();
            /* 3. their cells, tp tiles at a time, and their flags */
            for (long long j0 = c0; j0 < c1; j0 += tp) {
                const int g = (int)(c1 - j0 < tp ? c1 - j0 : tp);
                float *cs = flag && !GFLAGS ? crit : NULL;
                if (FILL == DP_FILL_PROLONG) block_fill_prolong(M, e + j0, g, cs);
                else block_fill_model(M, e + j0, g, level + 1, tab, tp, cs);
                if (!flag) continue;
                __syncthreads(); /* the criterion cells are in crit (GFLAGS: in global memory) */
                const int wpt = nwarps / g > 1 ? nwarps / g : 1; /* warps per tile, lanes striding over its cells */
                for (int t = warp / wpt; t < g; t += nwarps / wpt) {
                    const int l0 = lane + 32 * (warp % wpt), ls = 32 * wpt;
                    unsigned mine =
                        GFLAGS ? dp_tile_flags(p, dmesh_field(M, p->crit_field) + (size_t)(e + j0 + t) * cells, h,
                                               l0, ls, 0, NULL)
                               : dp_tile_flags(p, crit + t * cells, h, l0, ls, 0, NULL);
                    for (int o = 16; o > 0; o >>= 1) mine |= __shfl_xor_sync(0xffffffffu, mine, o);
                    if (lane == 0 && mine) atomicOr(&Sh.smask[t], mine);
                }
                __syncthreads();
                for (int t = tid; t < g; t += blockDim.x) {
                    M.childmask[e + j0 + t] = (uint8_t)Sh.smask[t];
                    Sh.smask[t] = 0; /* for the next pass: only this thread touches entry t until a barrier */
                }
            }
        }
        __syncthreads(); /* every thread has read this group's shared values */
    }
}

#endif
