/* gpu_common.cuh - pieces shared by the CUDA engines: error checks, the device tile store, the
 * block-cooperative tile operations (built on src/core.h, the same functions the CPU engine
 * calls), the PDL launch helper and the %globaltimer timeline. */
#ifndef DPAMR_GPU_COMMON_CUH
#define DPAMR_GPU_COMMON_CUH

#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

#include "src/capacity.h"
#include "src/core.h"
#include "src/refine.h"
#include "src/tile.h"

/* Host-side: check a CUDA call; on failure write a message to err and jump to `fail`. */
#define CK(call)                                                                                  \
    do {                                                                                          \
        cudaError_t ck_e = (call);                                                                \
        if (ck_e != cudaSuccess) {                                                                \
            snprintf(err, errlen, "CUDA error in %s (%s:%d): %s", #call, __FILE__, __LINE__,      \
                     cudaGetErrorString(ck_e));                                                   \
            goto fail;                                                                            \
        }                                                                                         \
    } while (0)

/* Device counters, one array of unsigned long long. */
enum {
    ST_NTILES = 0,       /* next free tile slot: tiles reserved so far (may pass capacity) */
    ST_LAUNCHES,         /* device-side launches that succeeded */
    ST_FAIL_PENDING,     /* failed with cudaErrorLaunchPendingCountExceeded */
    ST_FAIL_RESOURCES,   /* failed with cudaErrorLaunchOutOfResources */
    ST_FAIL_OTHER,       /* failed with any other error */
    ST_OVERFLOW,         /* tiles needed when a reservation was refused for lack of capacity (max) */
    ST_COUNT
};

/* Device memory one slot of the pending-launch pool takes, measured on the H200
 * (../shared/design/gpu-facts.md): about 5.4 KB. */
#define DP_POOL_SLOT_BYTES 5500ull

/* A device-side launch's outcome (cudaGetLastError() right after a kernel launch, or what
 * cudaGraphLaunch returned for a device graph launch) counted in st[ST_COUNT]: the
 * host reports the failures by kind (cdp's refinement and the GPU regrid alike). */
static __device__ inline void dp_count_launch(unsigned long long *st, cudaError_t e)
{
    if (e == cudaSuccess) atomicAdd(&st[ST_LAUNCHES], 1ull);
    else if (e == cudaErrorLaunchPendingCountExceeded) atomicAdd(&st[ST_FAIL_PENDING], 1ull);
    else if (e == cudaErrorLaunchOutOfResources) atomicAdd(&st[ST_FAIL_RESOURCES], 1ull);
    else atomicAdd(&st[ST_FAIL_OTHER], 1ull);
}

/* The tile store in device memory: the mesh's arrays, capacity `cap`. Passed by value. */
typedef struct {
    DP_TILE_ARRAYS(DP_TILE_ARRAY_MEMBER) /* as mesh_t's (mesh.h) */
    float *field[DP_MAX_FIELDS];
    long long cap;
    unsigned long long *stats; /* [ST_COUNT] */
    unsigned long long *stamps; /* timeline: [2*slot] first block start, [2*slot+1] last block end */
} dmesh_t;

/* Refinement parameters: one copy in constant memory, read by every kernel. */
extern __constant__ dp_params c_params;

/* ---- timeline (overlap witness) ---------------------------------------------------------------- */

static __device__ __forceinline__ unsigned long long globaltimer_ns(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* Thread 0 of each block stamps the start; call at block entry. slot < 0: no timeline. */
static __device__ __forceinline__ void stamp_start(unsigned long long *stamps, int slot)
{
    if (stamps && slot >= 0 && threadIdx.x == 0) atomicMin(&stamps[2 * slot], globaltimer_ns());
}
static __device__ __forceinline__ void stamp_end(unsigned long long *stamps, int slot)
{
    if (stamps && slot >= 0 && threadIdx.x == 0) atomicMax(&stamps[2 * slot + 1], globaltimer_ns());
}

/* ---- teams: the threads that fill, flag and scan together ------------------------------------- */

/* cta_team: the whole block, synchronized by __syncthreads. The block functions below and group_scan
 * (level_scan.cuh) take their threads as a team: rank, size, sync. (Until session 37 cdp's kernels ran
 * several teams of 256 in one block of 1024 with named barriers, sub_team: a kernel launched from the
 * device got one block per SM; a device graph launch gets as many as a host launch.) */
struct cta_team {
    __device__ __forceinline__ int rank() const { return threadIdx.x; }
    __device__ __forceinline__ int size() const { return blockDim.x; }
    __device__ __forceinline__ void sync() const { __syncthreads(); }
};

/* ---- block-cooperative tile operations ------------------------------------------------------- */

/* The store's tile arrays as dp_tiles (src/mesh.h). Member by member from the X-macro, so M
 * stays in parameter space. */
static __device__ __forceinline__ dp_tiles dmesh_tiles(const dmesh_t &M)
{
    dp_tiles T;
#define DP_TILE_ARRAY_TAKE(name, type, n) T.name = M.name;
    DP_TILE_ARRAYS(DP_TILE_ARRAY_TAKE)
#undef DP_TILE_ARRAY_TAKE
    return T;
}

/* Tile s of store S copied to tile d of store D: every array of DP_TILE_ARRAYS, as it is (parent
 * too; callers that move tiles remap it after). One thread. The sort's gather, the balance's merge
 * and the regrid's roots copy tiles through this. */
static __device__ __forceinline__ void copy_tile_meta(const dmesh_t &D, long long d, const dmesh_t &S, long long s)
{
#define COPY_TILE_ARRAY(name, type, per) \
    for (int c = 0; c < (per); ++c) D.name[(per) * d + c] = S.name[(per) * s + c];
    DP_TILE_ARRAYS(COPY_TILE_ARRAY)
#undef COPY_TILE_ARRAY
}

/* The metadata of new tile t at `level`, the child in octant o of tile par: dp_write_child, as
 * the CPU engine writes it. Both GPU engines create tiles through this; the cells are filled
 * separately (fill_cell). */
static __device__ __forceinline__ void write_child(const dmesh_t &M, long long t, int level, long long par, int o)
{
    dp_write_child(dmesh_tiles(M), c_params.dim, t, level, par, o);
}

/* Field f's array. The unrolled select keeps M in parameter space: indexing M.field by a run-time
 * f would copy M to local memory in every kernel that calls this. */
static __device__ __forceinline__ float *dmesh_field(const dmesh_t &M, int f)
{
    float *u = M.field[0];
    DP_UNROLL for (int k = 1; k < DP_MAX_FIELDS; ++k)
        if (k == f) u = M.field[k];
    return u;
}

/* New tile t's parent and its octant there: from the caller's list of the pass's tiles in shared
 * memory when it has one (kids[k]: the parent's slot from pbase << 3 | octant, k the tile's index
 * in the pass: refineStep's group), else from the tile's metadata in global memory. The list saves
 * the fill a round trip to memory before each parent load. */
static __device__ __forceinline__ void tile_parent_octant(const dmesh_t &M, int dim, long long t, const uint16_t *kids,
                                                          long long pbase, int k, long long *par, int *o)
{
    if (kids) {
        const int q = kids[k];
        *par = pbase + (q >> 3);
        *o = q & 7;
    } else {
        const int32_t c[3] = { M.coord[3 * t], M.coord[3 * t + 1], dim == 3 ? M.coord[3 * t + 2] : 0 };
        *par = M.parent[t];
        *o = dp_tile_octant(c);
    }
}

/* 2D: dp_prolong_brick for parent cells X and X + 1 (X even) of octant o's row Y, into v and w, from
 * eight values in five loads: the two cells, the two cells below and above them as 8-byte pairs (px
 * even, B even: 8-byte aligned), and the cells left of the first and right of the second. Each
 * brick's neighbours are the values dp_prolong_brick reads (the pair's own cells are each other's x
 * neighbours; past the border the cell itself), and dp_prolong_brick_of computes both: the same bits. */
static __device__ __forceinline__ void prolong_pair_2d(const float *u, int B, int o, int X, int Y, float *v, float *w)
{
    const int hb = B >> 1, px = (o & 1) * hb + X, py = ((o >> 1) & 1) * hb + Y;
    const float *c = u + px + B * py;
    const float2 cc = *reinterpret_cast<const float2 *>(c);
    const float2 ym = *reinterpret_cast<const float2 *>(c + (py > 0 ? -B : 0));
    const float2 yp = *reinterpret_cast<const float2 *>(c + (py < B - 1 ? B : 0));
    const float xm = c[px > 0 ? -1 : 0], xp = c[px + 2 < B ? 2 : 1];
    dp_prolong_brick_of(2, cc.x, xm, cc.y, ym.x, yp.x, 0.0f, 0.0f, v);
    dp_prolong_brick_of(2, cc.y, cc.x, xp, ym.y, yp.y, 0.0f, 0.0f, w);
}

/* Filling g consecutive new tiles t0.. of `level` (every field), the whole team (tm) together, with
 * the arithmetic of tile_fill on the CPU (src/tile.c). With crit, the criterion field's new cells
 * also go to crit[(t - t0) * cells + cell] (shared memory: the caller flags the tiles from there).
 *
 * prolong: dp_prolong_brick's arithmetic (the 2^dim cells over one parent cell, the parent cell and
 * its neighbours read once) with dim a constant in each branch. 2D: one thread per pair of bricks
 * side by side in x (parent cells X and X + 1, X even: prolong_pair_2d, their eight values in five
 * loads; the tile's parent and octant and the index arithmetic once per pair), stored as two 16-byte
 * quads; 3D: one thread per brick, four 8-byte pairs (a pair of 3D bricks holds 16 cells: ptxas
 * spilled). The same arithmetic per brick (dp_prolong_brick_of), so the same bits. Each tile's parent
 * and octant: from kids[t - t0] (the caller's list in shared memory, parent slots counted from pbase:
 * refineStep's group) when given, else from the tile's metadata (tile_parent_octant). (Two bricks
 * per thread taken a block apart, with all their loads issued first, took 96 registers and was
 * slower on the H200: bench2d 1.14 against 0.94 ms.) No barrier. */
template <class Team>
static __device__ __forceinline__ void block_fill_prolong(const Team &tm, const dmesh_t &M, long long t0, int g,
                                                          float *crit, const uint16_t *kids = NULL, long long pbase = 0)
{
    const dp_params *p = &c_params;
    const int dim = p->dim, B = p->B, lb = dp_log2(B), cshift = dim * lb, cells = 1 << cshift, cf = p->crit_field;
    const int hb = B >> 1;
    if (dim == 2) { /* pairs of bricks side by side in x, dim a constant: 8 cells live, as one 3D brick */
        const int bshift = cshift - 3; /* 2^bshift pairs per tile (B >= 4) */
        for (int j = tm.rank(); j < (g << bshift); j += tm.size()) {
            const long long t = t0 + (j >> bshift);
            const int b = (j & ((1 << bshift) - 1)) << 1; /* the pair's first brick */
            const int X = b & (hb - 1), Y = b >> (lb - 1);
            long long par;
            int o;
            tile_parent_octant(M, 2, t, kids, pbase, j >> bshift, &par, &o);
            const int rel = (j >> bshift) * cells + 2 * X + B * 2 * Y;
            DP_FOR_FIELDS(f, p->nf)
            {
                const float *u = M.field[f] + (size_t)par * cells;
                float v[8], w[8];
                prolong_pair_2d(u, B, o, X, Y, v, w);
                /* 2X a multiple of 4 (X even), tiles of a multiple of 16 cells: 16-byte aligned quads,
                   indexed as quads from the pass's first tile (from a float pointer nvcc stored the
                   first quad as four 4-byte stores) */
                float4 *d = reinterpret_cast<float4 *>(M.field[f] + (size_t)t0 * cells) + (rel >> 2);
                const float4 q0 = make_float4(v[0], v[1], w[0], w[1]), q1 = make_float4(v[2], v[3], w[2], w[3]);
                d[0] = q0;
                d[B / 4] = q1;
                if (crit && f == cf) { /* 16-byte aligned (the callers' dynamic shared memory) */
                    float4 *cs = (float4 *)(crit + rel);
                    cs[0] = q0;
                    cs[B / 4] = q1;
                }
            }
        }
        return;
    }
    const int bshift = cshift - 3; /* 3D: 2^bshift bricks per tile, one per thread */
    for (int j = tm.rank(); j < (g << bshift); j += tm.size()) {
        const long long t = t0 + (j >> bshift);
        const int b = j & ((1 << bshift) - 1);
        const int X = b & (hb - 1), Y = (b >> (lb - 1)) & (hb - 1), Z = b >> (2 * (lb - 1));
        long long par;
        int o;
        tile_parent_octant(M, 3, t, kids, pbase, j >> bshift, &par, &o);
        const int rel = (j >> bshift) * cells + 2 * X + B * (2 * Y + B * 2 * Z);
        DP_FOR_FIELDS(f, p->nf)
        {
            float v[8];
            dp_prolong_brick(3, B, M.field[f] + (size_t)par * cells, o, X, Y, Z, v);
            /* 2X even, tiles of an even cell count: 8-byte aligned pairs, indexed as pairs (as the quads) */
            float2 *d = reinterpret_cast<float2 *>(M.field[f] + (size_t)t0 * cells) + (rel >> 1);
            d[0] = make_float2(v[0], v[1]);
            d[B / 2] = make_float2(v[2], v[3]);
            d[B * B / 2] = make_float2(v[4], v[5]);
            d[B * B / 2 + B / 2] = make_float2(v[6], v[7]);
            if (crit && f == cf) {
                float2 *cs = (float2 *)(crit + rel);
                cs[0] = make_float2(v[0], v[1]);
                cs[B / 2] = make_float2(v[2], v[3]);
                cs[B * B / 2] = make_float2(v[4], v[5]);
                cs[B * B / 2 + B / 2] = make_float2(v[6], v[7]);
            }
        }
    }
}

/* model: tab_tiles tiles at a time, each with its table of axis terms in shared memory tab
 * (dp_model_table_entry), then their cells, threads striding over segments of DP_SEG cells of a row
 * (dp_model_seg_yz): no division per cell, one 16-byte store per segment and field. Every thread of
 * the team must call it (it has team barriers); it ends without one. PAIRS = 0: a field per thread
 * always, and a box tested as the cpu's rows test it (regridStep: the pairs' registers and the
 * other test's spill in its other loops; dp_shape_run). */
template <int PAIRS = 1, class Team>
static __device__ __forceinline__ void block_fill_model(const Team &tm, const dmesh_t &M, long long t0, int g, int level,
                                                        double *tab, int tab_tiles, float *crit)
{
    const dp_params *p = &c_params;
    const int dim = p->dim, B = p->B, lb = dp_log2(B), cshift = dim * lb, cells = 1 << cshift, cf = p->crit_field;
    const int nt = dp_model_table_size(p), tp = tab_tiles;
    const double h = dp_spacing(p, level);
    for (int i0 = 0; i0 < g; i0 += tp) {
        const int gi = min(tp, g - i0);
        tm.sync(); /* the previous pass has read its tables */
        /* entry e of the pass is entry k of tile i0 + ti's table (dp_model_table_entry(k)): ti and k
           carried from entry to entry, one division per pass (dp_model_entry_index: none per entry) */
        int ti = tm.rank() / nt, k = tm.rank() - ti * nt;
        const int di = tm.size() / nt, dk = tm.size() - di * nt;
        for (int e = tm.rank(); e < gi * nt; e += tm.size()) {
            int o, a, x;
            dp_model_entry_index(p, (uint32_t)k, lb, &o, &a, &x);
            tab[e] = dp_model_axis_entry(p, o, a, M.coord[3 * (t0 + i0 + ti) + a], x, h);
            ti += di;
            k += dk;
            if (k >= nt) {
                k -= nt;
                ++ti;
            }
        }
        tm.sync();
        /* one thread per segment of DP_SEG cells of a row and pair of fields (dp_model_seg2: each
           object's shape once for both), or the last field alone (dp_model_seg_yz); the fields' arrays
           chosen once per pass, not per segment; the segment's cells as one float4 per field */
        const int sshift = cshift - 2; /* segments per tile: cells / DP_SEG */
#pragma unroll 1
        for (int f = 0; f < p->nf; f += PAIRS ? 2 : 1) {
            const int two = PAIRS && f + 1 < p->nf;
            float *const dst = dmesh_field(M, f) + (size_t)(t0 + i0) * cells;
            float *const dst1 = two ? dmesh_field(M, f + 1) + (size_t)(t0 + i0) * cells : dst;
            float *const cdst = crit && (f == cf || (two && f + 1 == cf)) ? crit + i0 * cells : NULL;
            for (int j = tm.rank(); j < (gi << sshift); j += tm.size()) {
                const int i = j >> sshift, cell = (j & ((1 << sshift) - 1)) * DP_SEG;
                int x, y, z;
                dp_cell_xyz(cell, B, lb, &x, &y, &z);
                float v[DP_SEG], v1[DP_SEG];
                if (two) dp_model_seg2(p, tab + i * nt, x, y, z, f, v, v1);
                else dp_model_seg_yz(p, tab + i * nt, x, y, z, f, PAIRS, v);
                const float4 w = make_float4(v[0], v[1], v[2], v[3]);
                *(float4 *)(dst + i * cells + cell) = w;
                if (two) *(float4 *)(dst1 + i * cells + cell) = make_float4(v1[0], v1[1], v1[2], v1[3]);
                if (cdst) *(float4 *)(cdst + i * cells + cell) = !two || f == cf ? w : make_float4(v1[0], v1[1], v1[2], v1[3]);
            }
        }
    }
}

/* The fill of the deck's kind (block_fill_prolong or block_fill_model). */
template <class Team>
static __device__ __forceinline__ void block_fill_tiles(const Team &tm, const dmesh_t &M, long long t0, int g, int level,
                                                        double *tab, int tab_tiles, float *crit)
{
    if (c_params.fill == DP_FILL_PROLONG) block_fill_prolong(tm, M, t0, g, crit);
    else block_fill_model(tm, M, t0, g, level, tab, tab_tiles, crit);
}

/* Most tiles a block fills per pass (the shared flag masks of refineStep and regridStep). */
#define FILL_MAX_TILES 64

/* Tiles a block of `threads` fills per pass (block_fill_tiles' g): FILL_PROLONG_BRICKS bricks (2^dim
 * cells each) per thread with prolong, FILL_MODEL_CELLS cells per thread with the model (its tables
 * and barriers once per pass, and the flags' barriers); at least one, at most FILL_MAX_TILES. The
 * callers halve it while the pass's shared memory passes the default limit. Measured on the H200
 * (docs/results.md, "Session 14"), hostlaunch, against 2 bricks and 4 cells: bench2d refine 0.887 ->
 * 0.850 ms (8 bricks; 4: 0.862), bench3d 2.363 -> 2.102 ms (16 cells; 8: 2.217), movingbench2d
 * regrid 3.48 -> 3.04 ms per step (16 cells; 8: 3.25). */
#define FILL_PROLONG_BRICKS 8
#define FILL_MODEL_CELLS 16
static inline int fill_pass_tiles(const dp_params *p, int threads)
{
    const int cells = dp_cells(p->dim, p->B);
    const int tp = p->fill == DP_FILL_PROLONG ? (threads << p->dim) * FILL_PROLONG_BRICKS / cells
                                              : FILL_MODEL_CELLS * threads / cells;
    return tp < 1 ? 1 : (tp > FILL_MAX_TILES ? FILL_MAX_TILES : tp);
}

/* Bytes of model tables block_fill_tiles needs for `tiles` tables (0 for fill = prolong). */
static inline size_t fill_table_bytes(const dp_params *p, int tiles)
{
    return p->fill == DP_FILL_PROLONG ? 0 : (size_t)tiles * (size_t)dp_model_table_size(p) * sizeof(double);
}

/* The octant flags of g tiles whose criterion cells the team has in crit (shared memory, one tile's
 * cells after the other; the caller syncs after writing them), written to out[0..g) (childmask):
 * warps per tile, lanes striding over its segments of a row (dp_seg_flags), OR-reduced into smask[t] (zero on
 * entry, zero again on return). The fill-and-flag pass of refineStep and regridStep. */
template <class Team>
static __device__ __forceinline__ void block_flag_pass(const Team &tm, const float *crit, int g, double h,
                                                       unsigned *smask, uint8_t *out)
{
    const dp_params *p = &c_params;
    const int lane = tm.rank() & 31, warp = tm.rank() >> 5, nwarps = tm.size() >> 5;
    const int cells = dp_cells(p->dim, p->B);
    const float lim = dp_flag_limit(p, h);
    const int wpt = nwarps / g > 1 ? nwarps / g : 1; /* warps per tile */
    for (int t = warp / wpt; t < g; t += nwarps / wpt) {
        unsigned mine = dp_tile_seg_flags(p, crit + t * cells, lim, lane + 32 * (warp % wpt), 32 * wpt);
        for (int o = 16; o > 0; o >>= 1) mine |= __shfl_xor_sync(0xffffffffu, mine, o);
        if (lane == 0 && mine) atomicOr(&smask[t], mine);
    }
    tm.sync();
    for (int t = tm.rank(); t < g; t += tm.size()) {
        out[t] = (uint8_t)smask[t];
        smask[t] = 0; /* for the next pass: only this thread touches entry t until a barrier */
    }
}

/* Octant flags of tile t (reads only its cells; threads over its segments of a row,
 * dp_tile_seg_flags), reduced over the block into *smask.
 * Ends with __syncthreads(); every thread may read *smask afterwards. */
static __device__ __forceinline__ unsigned block_octant_flags(const dmesh_t &M, long long t, int level,
                                                              unsigned *smask)
{
    const dp_params *p = &c_params;
    const int B = p->B, cells = dp_cells(p->dim, B);
    const float *u = dmesh_field(M, p->crit_field) + (size_t)t * cells;
    unsigned mine = dp_tile_seg_flags(p, u, dp_flag_limit(p, dp_spacing(p, level)), threadIdx.x, blockDim.x);
    /* warp reduce, then one shared atomic per warp */
    for (int o = 16; o > 0; o >>= 1) mine |= __shfl_xor_sync(0xffffffffu, mine, o);
    if ((threadIdx.x & 31) == 0 && mine) atomicOr(smask, mine);
    __syncthreads();
    return *smask;
}

/* Octant flags of tile t computed by one warp (lanes stride over its segments of a row,
 * dp_tile_seg_flags), OR-reduced with
 * shuffles: every lane gets the mask. No shared memory, no block barrier. */
static __device__ __forceinline__ unsigned warp_octant_flags(const dmesh_t &M, long long t, int level, int lane)
{
    const dp_params *p = &c_params;
    const int B = p->B, cells = dp_cells(p->dim, B);
    const float *u = dmesh_field(M, p->crit_field) + (size_t)t * cells;
    unsigned mine = dp_tile_seg_flags(p, u, dp_flag_limit(p, dp_spacing(p, level)), lane, 32);
    for (int o = 16; o > 0; o >>= 1) mine |= __shfl_xor_sync(0xffffffffu, mine, o);
    return mine;
}

/* Threads per block for a tile: one thread per cell, 32..256. */
static inline int tile_threads(int dim, int B)
{
    int c = dp_cells(dim, B);
    return c < 32 ? 32 : (c > 256 ? 256 : c);
}

/* ---- host helpers: the tile store (tile_store.cu), its sort (tile_sort.cu), launches and the
 * timeline (launch.cu), the device and its parameters (gpu_device.cu) ----------------------------- */

/* What a kernel may use without opting in (static and dynamic shared memory together). */
#define SMEM_DEFAULT_LIMIT ((size_t)48 << 10)

/* One wave of `kernel`: how many of its blocks (`threads` threads, `smem` bytes of dynamic shared
 * memory) are resident on the device's `sms` SMs at once, in *wave. Past SMEM_DEFAULT_LIMIT it opts
 * in, up to the device's opt-in limit. The engines' grids are one wave: a group's look-back waits
 * only on running blocks. 0; -1 with a message naming `what` (and the tile size, the knob a user
 * has) in err when the block does not fit on one SM. */
static inline int kernel_wave(const void *kernel, int threads, size_t smem, int sms, const char *what, const dp_params *p,
                              unsigned *wave, char *err, size_t errlen)
{
    int dev = 0, optin = 0, occ = 0;
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, kernel));
    if (smem + fa.sharedSizeBytes > SMEM_DEFAULT_LIMIT) {
        CK(cudaGetDevice(&dev));
        CK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
        if (smem + fa.sharedSizeBytes > (size_t)optin) {
            snprintf(err, errlen, "%s: a block (tiles of %d^%d cells) needs %zu bytes of shared memory, the device "
                     "allows %d: use a smaller tile_size", what, p->B, p->dim, smem + fa.sharedSizeBytes, optin);
            return -1;
        }
        CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    }
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, kernel, threads, smem));
    if (occ < 1) {
        snprintf(err, errlen, "%s: a block of %d threads with %zu bytes of shared memory (tiles of %d^%d cells) does "
                 "not fit on one SM of this device: use a smaller tile_size", what, threads, smem + fa.sharedSizeBytes,
                 p->B, p->dim);
        return -1;
    }
    *wave = (unsigned)(sms * occ);
    return 0;
fail:
    return -1;
}

/* Dynamic shared memory of a step's pass of tp tiles (refineStep, regridStep) in 16-byte multiples:
 * their model tables, then (flags: the instances that flag the children) their criterion cells. */
static inline size_t step_pass_smem(const dp_params *p, int tp, int flags)
{
    const size_t crit = flags ? (size_t)tp * dp_cells(p->dim, p->B) * sizeof(float) : 0;
    return (fill_table_bytes(p, tp) + crit + 15) & ~(size_t)15;
}

/* A step kernel's tiles per pass, in *tp: fill_pass_tiles for a block of `threads`, halved while the
 * pass's dynamic shared memory (step_pass_smem, in *smem) and the kernel's static shared memory pass
 * SMEM_DEFAULT_LIMIT; one tile past it opts in (kernel_wave: 3D, tile_size 32). */
static inline cudaError_t step_pass_tiles(const void *kernel, const dp_params *p, int threads, int *tp, size_t *smem)
{
    cudaFuncAttributes fa;
    const cudaError_t e = cudaFuncGetAttributes(&fa, kernel);
    if (e != cudaSuccess) return e;
    int t = fill_pass_tiles(p, threads);
    while (t > 1 && step_pass_smem(p, t, 1) + fa.sharedSizeBytes > SMEM_DEFAULT_LIMIT) t /= 2;
    *tp = t;
    *smem = step_pass_smem(p, t, 1);
    return cudaSuccess;
}

/** An empty tile store (no allocations): what dmesh_destroy leaves and dmesh_create starts from. */
static inline void dmesh_zero(dmesh_t *M) { memset(M, 0, sizeof *M); }
/** Copy tiles [at, at + n) of every tile array and field from src to dst (mesh_t or dmesh_t, any
 *  direction `kind`), asynchronously on stream st. The one copy loop of the tile store. */
template <class Dst, class Src>
static cudaError_t copy_tile_arrays(Dst &dst, const Src &src, size_t at, size_t n, int nf, size_t cells,
                                    cudaMemcpyKind kind, cudaStream_t st)
{
    cudaError_t e = cudaSuccess;
#define DP_COPY_ARRAY(name, type, per)                                                                    \
    if (e == cudaSuccess)                                                                                  \
        e = cudaMemcpyAsync(dst.name + at * (per), src.name + at * (per), n * (per) * sizeof(type), kind, st);
    DP_TILE_ARRAYS(DP_COPY_ARRAY)
#undef DP_COPY_ARRAY
    for (int f = 0; f < nf && e == cudaSuccess; ++f)
        e = cudaMemcpyAsync(dst.field[f] + at * cells, src.field[f] + at * cells, n * cells * sizeof(float), kind, st);
    return e;
}
/** Allocate every tile array and nf fields of `cells` cells for n tiles (on error some may be set:
 *  dmesh_destroy frees them). */
cudaError_t dmesh_alloc_arrays(dmesh_t *M, size_t n, int nf, size_t cells);

/** Pinned staging for the transfers between a host mesh and the device store: two page-locked
 *  buffers of `chunk` bytes, each with an event that marks the copy last issued on it. A transfer
 *  goes through them in chunks, double-buffered: the device copies one chunk while the host copies
 *  the other (xfer_copy, all threads) into or out of the mesh arrays, which are allocated once; the
 *  copies are cudaMemcpyAsync on the engine's stream. Transfers below DSTAGE_DIRECT bytes, or when
 *  page-locked memory cannot be had, go directly (pageable), and `pageable` says why. An engine
 *  keeps one for its upload and download; zeroed = empty. */
#define DSTAGE_CHUNK ((size_t)64 << 20)
#define DSTAGE_DIRECT ((size_t)16 << 20)
typedef struct {
    void *buf[2];
    cudaEvent_t ev[2];
    size_t chunk;        /* bytes per buffer; 0 = not allocated */
    char pageable[160];  /* why the last transfer went pageable ("" when staged or small) */
} dstage_t;
/** Free the buffers and events (waits for copies still in flight on them). */
void dstage_destroy(dstage_t *S);
/** Host bytes the staging of a run can hold (for the capacity): both buffers at their largest. */
static inline double dstage_host_bytes(void) { return 2.0 * (double)DSTAGE_CHUNK; }

/** Allocate the device tile store for cap tiles and upload tiles [0, m->ntiles) through S (progress
 *  shown when `progress`). */
int dmesh_create(dmesh_t *M, const mesh_t *m, long long cap, int timeline_slots, dstage_t *S, int progress,
                 cudaStream_t s, char *err, size_t errlen);
void dmesh_destroy(dmesh_t *M);
/** Replace the store *M with *with (its arrays), which keeps M's counters and timeline stamps; M's
 *  other arrays are freed and *with is left empty. The stream must be idle on M. */
static inline void dmesh_replace(dmesh_t *M, dmesh_t *with)
{
    with->stats = M->stats;
    with->stamps = M->stamps;
    M->stats = NULL;
    M->stamps = NULL;
    dmesh_destroy(M);
    *M = *with;
    dmesh_zero(with);
}
/** Download tiles [from, ntiles) into m (grown once, as needed) through S and set m->ntiles; *ms =
 *  its wall time. Shows progress when `progress` (d->progress on, not quiet); warns when it went
 *  through pageable memory. */
int dmesh_download(const dmesh_t *M, mesh_t *m, long long from, long long ntiles, dstage_t *S, int progress,
                   cudaStream_t s, double *ms, char *err, size_t errlen);
/** Sort tiles [first, first+n) to canonical order (level, Morton key) with CUB, remapping parents.
 *  With M->stamps (3 slots) its kernels stamp the timeline: sortKeys 0, invertPerm 1, gatherTiles 2. */
int dmesh_sort(dmesh_t *M, long long first, long long n, int pdl, cudaStream_t s, float *ms, char *err,
               size_t errlen);
/** Device bytes dmesh_sort allocates for `first + n` tiles of which n are sorted: the second tile
 *  arrays, keys, indices and positions, and CUB's radix-sort scratch (asked of CUB on stream s). */
cudaError_t dmesh_sort_bytes(const dp_params *p, long long first, long long n, cudaStream_t s, double *bytes);

/** 2:1 balance of the canonical device store *M of n tiles (device/balance_gpu.cu), as balance_close
 *  does it on the CPU, to the same bits; p: the parameters in c_params (the fill's), root: the root
 *  tiles per axis. The balanced mesh goes to
 *  `into` (a store of the caller's, then res->moved = 1; the caller makes it the current one), or,
 *  with into NULL, to a store of exactly its size that replaces *M. old (a regrid: may be `into`),
 *  with its level starts old_ls[0..old_nl]: an added tile it has takes its cells from there. cap > 0
 *  limits the tiles: past it the cpu's message when cap_limit is NULL (cap is max_tiles), else one
 *  naming the capacity and cap_limit. Nothing added: res->added 0, the store untouched. Every launch
 *  on stream s through launch_pdl (pdl). 0, or -1 with err. */
typedef struct {
    long long added, from_old;       /* as balance_report_t */
    long long ntiles;                /* tiles after */
    int nlevels, moved;
    long long ls[DP_MAX_LEVELS + 1]; /* level starts after */
    float ms;                        /* CUDA event time */
} dbal_result_t;
int dbal_close(dmesh_t *M, long long n, const dp_params *p, const int *root, dmesh_t *into, const dmesh_t *old,
               const long long *old_ls, int old_nl, long long cap, const char *cap_limit, int pdl, cudaStream_t s,
               dbal_result_t *res, char *err, size_t errlen);
/** A refinement's balance (d->p.balance = 2:1; else nothing): dbal_close of the store *M of *ntiles
 *  tiles into a new store, at the capacity c; *ntiles updated and *from set to 0 (download every
 *  tile) when tiles were added; prints what it added unless quiet; *ms its device time. 0 or -1. */
int dbal_refine(const deck_t *d, const mesh_t *m, dmesh_t *M, long long *ntiles, long long *from, const cap_t *c,
                cudaStream_t s, float *ms, char *err, size_t errlen);
/** Device bytes dbal_close may allocate at capacity cap (0 without balance): for the capacity. */
double dbal_bytes(const dp_params *p, long long cap, int regrid);

/** The one launch helper: cudaLaunchKernelEx with the programmatic-stream-serialization attribute set
 *  to `pdl`. Both modes go through here; they differ in that one bit. */
cudaError_t launch_pdl(const void *kernel, dim3 grid, dim3 block, cudaStream_t s, int pdl, void **args);
/* The same with `smem` bytes of dynamic shared memory per block. */
cudaError_t launch_pdl_smem(const void *kernel, dim3 grid, dim3 block, size_t smem, cudaStream_t s, int pdl,
                            void **args);

/** cdp's chains (step_chain, level_scan.cuh), host side: one kernel node's graph instantiated for
 *  device launch once per step (a graph that launched a fire-and-forget child runs until the child
 *  has, so no graph serves two steps of a chain). */
typedef struct {
    cudaGraph_t graph;
    cudaGraphNode_t node;
    cudaGraph_t graph_last;               /* the last step's graph when a node of its own, else NULL */
    cudaGraphNode_t node_last;            /* its node */
    cudaGraph_t graph_head;               /* step 0's graph when kernels precede its node, else NULL */
    int n;                                /* steps */
    cudaGraphExec_t exec[DP_MAX_LEVELS];  /* step k's graph (its copy in device memory: level_scans_t.execs) */
} chain_graphs_t;
/** The chain's kernel node: func over a grid of `grid` blocks of `threads`, smem bytes of dynamic
 *  shared memory, the kernel's arguments args (read when the node is added or set). */
static inline cudaKernelNodeParams chain_node(const void *func, unsigned grid, unsigned threads, size_t smem,
                                              void **args)
{
    cudaKernelNodeParams kp;
    memset(&kp, 0, sizeof kp);
    kp.func = (void *)func;
    kp.gridDim = dim3(grid);
    kp.blockDim = dim3(threads);
    kp.sharedMemBytes = (unsigned)smem;
    kp.kernelParams = args;
    return kp;
}
/** n graphs of the kernel node kp (whose parameters hold d_exec, device memory for n handles of the
 *  caller's), the last of kp_last instead when not NULL, step 0's preceded by the nhead kernel nodes
 *  head (one after the other, plain edges), each uploaded on stream s, and their handles copied to
 *  d_exec on s. */
cudaError_t chain_graphs_create(chain_graphs_t *c, const cudaKernelNodeParams *kp, const cudaKernelNodeParams *kp_last,
                                const cudaKernelNodeParams *head, int nhead, int n, cudaGraphExec_t *d_exec,
                                cudaStream_t s);
/** Every step's graph with the node's new parameters kp (the last step's kp_last when created with a
 *  last node of its own, which kp_last must then give), uploaded again on s (a device launch sees an
 *  update only once it is uploaded); none of them may be running; not for a chain created with a
 *  head (cudaErrorInvalidValue). */
cudaError_t chain_graphs_set(chain_graphs_t *c, const cudaKernelNodeParams *kp, const cudaKernelNodeParams *kp_last,
                             cudaStream_t s);
/** Frees the graphs (not d_exec, the caller's); harmless on a zeroed struct. */
void chain_graphs_destroy(chain_graphs_t *c);

/** Copy the deck's parameters to constant memory. */
cudaError_t upload_params(const dp_params *p, cudaStream_t s);

/** The tile store's capacity for a GPU run on m (capacity.h): max_tiles, or as many tiles as the
 *  device's free memory holds with the engine's scratch (need: the engine's device bytes at a
 *  capacity, the store included) and the host's memory holds for the download, within the tile
 *  bound. Device memory is split among d->share_device processes, host memory among
 *  d->share_host. Fails (-1, err naming asked and available) when the device cannot be queried, the
 *  input's tiles do not fit, or max_tiles asks more than the device has. need() may fail (a CUDA
 *  size query): it then returns 1e300 and leaves its message in need_err; a candidate the search
 *  rejected may fail, the capacity chosen must not. */
int gpu_capacity(const deck_t *d, const mesh_t *m, cap_need_fn need, const void *ctx, char *need_err,
                 cap_t *c, char *err, size_t errlen);
/** Device memory free now: cudaMemGetInfo, at most DPAMR_TEST_DEVICE_FREE=BYTES when set (tests). */
cudaError_t gpu_free_memory(size_t *free_bytes, size_t *total_bytes);
/** Bytes of the device tile store of cap tiles with the engine's small fixed buffers (counters,
 *  timeline stamps of `slots` slots). */
double dmesh_store_bytes(const dp_params *p, long long cap, int slots);

/** Copy the store's timeline stamps of nslot slots to a new host array (*stamps, malloc'd, the
 *  caller frees it), waiting on stream s. 0, or -1 with err naming what failed. */
int timeline_download(const dmesh_t *M, int nslot, cudaStream_t s, unsigned long long **stamps, char *err,
                      size_t errlen);
/** The pending-launch pool for the device-side launches of one refinement: records the runtime's
 *  limit (*before), asks for `pool` slots and returns in *granted what the runtime set (it grants
 *  32 at least, and may grant less than a large ask). */
cudaError_t pool_acquire(long long pool, size_t *before, long long *granted);
/** Sets the pool back to `before` (its memory back for what runs next in this process); a failure
 *  only warns on stderr. */
void pool_release(size_t before);
/** 0 when the counters st (ST_COUNT) hold no failed device-side launch; else -1 with err naming the
 *  failures by kind, the pool (pool_size), the grain, the computed bound and what would hold the
 *  launches, then `hint` (may be NULL). */
int launch_failures(const unsigned long long *st, long long pool_size, const char *grain, long long bound,
                    const char *hint, char *err, size_t errlen);
/** Write the timeline stamps of named kernels as a Chrome trace JSON (path may be ""). */
int timeline_write(const char *path, const char *const *names, const unsigned long long *stamps, int n, char *err,
                   size_t errlen);
/** timeline_write with slot i named by name(i, buf, 64, ctx) (the names are built here). */
int timeline_write_named(const char *path, void (*name)(int i, char *buf, size_t n, const void *ctx), const void *ctx,
                         const unsigned long long *stamps, int n, char *err, size_t errlen);

/** Engines. */
int refine_cdp(const deck_t *d, mesh_t *m, refine_report_t *r, char *err, size_t errlen);
int refine_host(const deck_t *d, mesh_t *m, refine_report_t *r, char *err, size_t errlen);
/** cdp_grain=level: hostlaunch's level steps, each launched from the device by the step before
 *  (engine_host.cu, refine_steps). */
int refine_cdp_level(const deck_t *d, mesh_t *m, refine_report_t *r, char *err, size_t errlen);

#endif
