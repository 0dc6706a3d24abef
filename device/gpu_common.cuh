/* gpu_common.cuh - pieces shared by the CUDA engines: error checks, the device tile store, the
 * block-cooperative tile operations (built on src/core.h, the same functions the CPU engine
 * calls), the PDL launch helper and the %globaltimer timeline. */
#ifndef DPAMR_GPU_COMMON_CUH
#define DPAMR_GPU_COMMON_CUH

#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

#include "../src/core.h"
#include "../src/refine.h"
#include "../src/tile.h"

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

/* Check the launch that just happened (configuration errors show up here). */
#define CK_LAUNCH(name) CK(cudaPeekAtLastError())

/* Device counters, one array of unsigned long long. */
enum {
    ST_NTILES = 0,       /* next free tile slot: tiles reserved so far (may pass capacity) */
    ST_LAUNCHES,         /* device-side launches that succeeded */
    ST_FAIL_PENDING,     /* failed with cudaErrorLaunchPendingCountExceeded */
    ST_FAIL_RESOURCES,   /* failed with cudaErrorLaunchOutOfResources */
    ST_FAIL_OTHER,       /* failed with any other error */
    ST_OVERFLOW,         /* tiles needed when a reservation was refused for lack of capacity (max) */
    ST_BOUND,            /* an engine's computed bound was exceeded: a bug, reported as such */
    ST_COUNT
};

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

/* Cell i of new tile t at `level` (all fields): dp_fill_cell, from the parent (its octant from
 * the tile's coordinates) or the model, as tile_fill computes it on the CPU. The field loops are
 * DP_FOR_FIELDS (unrolled over the DP_MAX_FIELDS slots), so values and field pointers stay in
 * registers. */
static __device__ __forceinline__ void fill_cell(const dmesh_t &M, long long t, int level, int i)
{
    const dp_params *p = &c_params;
    const int B = p->B, cells = dp_cells(p->dim, B);
    const int32_t c[3] = { M.coord[3 * t], M.coord[3 * t + 1], M.coord[3 * t + 2] };
    const long long parent = M.parent[t];
    int x, y, z;
    dp_cell_xyz(i, B, dp_log2(B), &x, &y, &z);
    const float *up[DP_MAX_FIELDS];
    DP_FOR_FIELDS(f, p->nf) up[f] = M.field[f] + (size_t)parent * cells; /* the slots past nf are never read */
    float v[DP_MAX_FIELDS];
    dp_fill_cell(p, level, c, up, dp_tile_octant(c), x, y, z, v);
    DP_FOR_FIELDS(f, p->nf) M.field[f][(size_t)t * cells + i] = v[f];
}

/* Octant flags of tile t (reads only its cells), reduced over the block into *smask.
 * Ends with __syncthreads(); every thread may read *smask afterwards. */
static __device__ __forceinline__ unsigned block_octant_flags(const dmesh_t &M, long long t, int level,
                                                              unsigned *smask)
{
    const dp_params *p = &c_params;
    const int B = p->B, cells = dp_cells(p->dim, B);
    const float *u = dmesh_field(M, p->crit_field) + (size_t)t * cells;
    unsigned mine = dp_tile_flags(p, u, dp_spacing(p, level), threadIdx.x, blockDim.x, 0, NULL);
    /* warp reduce, then one shared atomic per warp */
    for (int o = 16; o > 0; o >>= 1) mine |= __shfl_xor_sync(0xffffffffu, mine, o);
    if ((threadIdx.x & 31) == 0 && mine) atomicOr(smask, mine);
    __syncthreads();
    return *smask;
}

/* Octant flags of tile t computed by one warp (lanes stride over the cells), OR-reduced with
 * shuffles: every lane gets the mask. No shared memory, no block barrier. */
static __device__ __forceinline__ unsigned warp_octant_flags(const dmesh_t &M, long long t, int level, int lane)
{
    const dp_params *p = &c_params;
    const int B = p->B, cells = dp_cells(p->dim, B);
    const float *u = dmesh_field(M, p->crit_field) + (size_t)t * cells;
    unsigned mine = dp_tile_flags(p, u, dp_spacing(p, level), lane, 32, 0, NULL);
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
/** Allocate the device tile store for cap tiles and upload tiles [0, m->ntiles). */
int dmesh_create(dmesh_t *M, const mesh_t *m, long long cap, int timeline_slots, cudaStream_t s, char *err,
                 size_t errlen);
void dmesh_destroy(dmesh_t *M);
/** Download tiles [from, ntiles) into m (grown as needed) and set m->ntiles. */
int dmesh_download(const dmesh_t *M, mesh_t *m, long long from, long long ntiles, cudaStream_t s, char *err,
                   size_t errlen);
/** Sort tiles [first, first+n) to canonical order (level, Morton key) with CUB, remapping parents.
 *  With M->stamps (3 slots) its kernels stamp the timeline: sortKeys 0, invertPerm 1, gatherTiles 2. */
int dmesh_sort(dmesh_t *M, long long first, long long n, int pdl, cudaStream_t s, float *ms, char *err,
               size_t errlen);
/** Bytes of device memory per tile (metadata plus fields). */
size_t dmesh_tile_bytes(const dp_params *p);

/** The one launch helper: cudaLaunchKernelEx with the programmatic-stream-serialization attribute set
 *  to `pdl`. Both modes go through here; they differ in that one bit. */
cudaError_t launch_pdl(const void *kernel, dim3 grid, dim3 block, cudaStream_t s, int pdl, void **args);
/* The same with `smem` bytes of dynamic shared memory per block. */
cudaError_t launch_pdl_smem(const void *kernel, dim3 grid, dim3 block, size_t smem, cudaStream_t s, int pdl,
                            void **args);

/** Copy the deck's parameters to constant memory. */
cudaError_t upload_params(const dp_params *p, cudaStream_t s);

/** Tile capacity on the device: the deck's max_tiles, or the computed bound limited by memory.
 *  -1 with a message in err when the device cannot be queried. */
long long gpu_tile_capacity(const deck_t *d, const mesh_t *m, size_t reserve_bytes, size_t *free_bytes, char *err,
                            size_t errlen);

/** Write the timeline stamps of named kernels as a Chrome trace JSON (path may be ""). */
int timeline_write(const char *path, const char *const *names, const unsigned long long *stamps, int n, char *err,
                   size_t errlen);
/** timeline_write with slot i named by name(i, buf, 64, ctx) (the names are built here). */
int timeline_write_named(const char *path, void (*name)(int i, char *buf, size_t n, const void *ctx), const void *ctx,
                         const unsigned long long *stamps, int n, char *err, size_t errlen);

/** Engines. */
int refine_cdp(const deck_t *d, mesh_t *m, refine_report_t *r, char *err, size_t errlen);
int refine_host(const deck_t *d, mesh_t *m, refine_report_t *r, char *err, size_t errlen);

#endif
