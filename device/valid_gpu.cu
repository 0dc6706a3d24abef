/* valid_gpu.cu - validation of a GPU refinement on the device's tile store (issue 13 item 3).
 *
 * gpu_refine_valid runs gpu_refine with a request registered here; the engine's last step,
 * dmesh_download, calls valid_gpu_start before its transfer and valid_gpu_finish after it, so the
 * validation reads the refined store on a stream of its own while the download reads it too. The
 * passes are those of validation/valid.c, on the same per-tile functions (src/valid_tile.h):
 *   vPassA     thread per tile: tiles per level, levels present, sorted by level, children per
 *              parent (atomicOr on the parent's byte; a bit already set is a duplicate child)
 *   vPrep      one thread: level starts, complete_below and flag_below from the counts
 *   vFlags     warp per tile below flag_below: octant flags, dp_tile_flags (lazy), OR over the warp
 *   vCheck     warp per tile: dp_vcheck_meta and dp_vcheck_children on lane 0; finite values
 *              (dp_vfirst_nonfinite) and conservation (dp_vconserve) with the lanes striding over
 *              the cells; failed checks counted, the conservation maximum kept (atomicMax on the
 *              bits of a non-negative double orders as the double)
 *   vTileSums  thread per (tile, field): dp_vtile_field; thread per tile: dp_vtile_tree
 *   vChunkStart, CUB exclusive scan, vChunkPos: the chunks (a tile starts one when its level or
 *              its root differs from the tile before it), their first tiles and count per level
 *   vChunkFold thread per (chunk, field or tree): the chunk's tiles added in canonical order
 *              (dp_vchunk_add), the fold valid.c does per chunk
 * Every sum and hash is computed by the same sequence of IEEE operations as on the CPU, in the same
 * order (device code builds with -fmad=false), so the chunks are bit for bit the CPU's; the counts,
 * the maximum and the flag bits are order-independent. The host (valid_check_device) takes the
 * report from them when nothing failed, and has the CPU validator describe any failure.
 */
#include <cub/device/device_scan.cuh>
#include <nvtx3/nvToolsExt.h>
#include <stdlib.h>
#include <string.h>

#include "device/gpu.h"
#include "device/gpu_common.cuh"
#include "device/valid_gpu.cuh"
#include "src/timer.h"
#include "src/valid_tile.h"

#define VG_THREADS 256

/* What the passes share in device memory. */
typedef struct {
    unsigned long long count[DP_MAX_LEVELS]; /* tiles per level */
    unsigned long long nch[DP_MAX_LEVELS];   /* chunks per level */
    unsigned long long nfail;                /* failed checks of phases 2 and 3 */
    unsigned long long maxrel_bits;          /* the largest conservation error, as the bits of a double >= 0 */
    long long nchunks;                       /* chunks in all */
    int nlv, unsorted, dup;
    int chunk_over;                          /* more chunks than the output holds (never on a valid mesh) */
    int flag_below, complete_below;
} vstate_t;

/* ---- kernels ----------------------------------------------------------------------------------- */

/* Field f's array of a context, without indexing c.field by a run-time f (as dmesh_field does). */
static __device__ __forceinline__ const float *dmesh_field_of(const dp_vctx &c, int f)
{
    const float *u = c.field[0];
    DP_UNROLL for (int k = 1; k < DP_MAX_FIELDS; ++k)
        if (k == f) u = c.field[k];
    return u;
}

__global__ void vPassA(dp_vctx c, vstate_t *S, unsigned *kids32)
{
    __shared__ unsigned long long cnt[DP_MAX_LEVELS];
    __shared__ int nlv, unsorted, dup;
    for (int L = threadIdx.x; L < DP_MAX_LEVELS; L += blockDim.x) cnt[L] = 0;
    if (threadIdx.x == 0) nlv = unsorted = dup = 0;
    __syncthreads();
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < c.n; t += stride) {
        const int L = c.T.level[t];
        if (L < 0 || L >= DP_MAX_LEVELS) continue;
        atomicAdd(&cnt[L], 1ull);
        atomicMax(&nlv, L + 1);
        if (t > 0 && L < c.T.level[t - 1]) unsorted = 1;
        if (dp_vparent_ok(&c, t)) {
            const long long q = c.T.parent[t];
            const unsigned bit = 1u << dp_tile_octant(c.T.coord + 3 * t), sh = (unsigned)(q & 3) * 8u;
            const unsigned old = atomicOr(&kids32[q >> 2], bit << sh);
            if ((old >> sh) & bit) dup = 1; /* a second child in one octant: the CPU validator says which */
        }
    }
    __syncthreads();
    for (int L = threadIdx.x; L < DP_MAX_LEVELS; L += blockDim.x)
        if (cnt[L]) atomicAdd(&S->count[L], cnt[L]);
    if (threadIdx.x == 0) {
        if (nlv) atomicMax(&S->nlv, nlv);
        if (unsorted) S->unsorted = 1;
        if (dup) S->dup = 1;
    }
}

__global__ void vPrep(vstate_t *S, int complete, int max_level)
{
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    const int nlv = S->nlv;
    S->complete_below = complete ? max_level : nlv - 1;
    S->flag_below = S->complete_below > nlv - 1 ? S->complete_below : nlv - 1;
}

/* Octant flags of the tiles that are or must be parents, a warp per tile (as valid.c's pass B). */
__global__ void vFlags(dp_vctx c, const vstate_t *S, uint8_t *flags)
{
    const dp_params *p = &c_params;
    const int lane = threadIdx.x & 31, flag_below = S->flag_below;
    const long long warp = (blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5;
    const long long nwarps = ((long long)gridDim.x * blockDim.x) >> 5;
    const float *crit = dmesh_field_of(c, p->crit_field);
    for (long long t = warp; t < c.n; t += nwarps) {
        const int L = c.T.level[t];
        if (!(L >= 0 && L < flag_below && L < p->max_level)) continue; /* warp-uniform */
        unsigned mask = dp_tile_flags(p, crit + (size_t)t * c.cells, dp_spacing(p, L), lane, 32, 1, NULL);
        for (int o = 16; o > 0; o >>= 1) mask |= __shfl_xor_sync(0xffffffffu, mask, o);
        if (lane == 0) flags[t] = (uint8_t)mask;
    }
}

/* Phases 2 and 3 of every tile, a warp per tile: the pieces of dp_vcheck_self in its order, lanes
 * striding over the cells, and dp_vcheck_children. */
__global__ void vCheck(dp_vctx c, vstate_t *S)
{
    const int lane = threadIdx.x & 31;
    const long long warp = (blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5;
    const long long nwarps = ((long long)gridDim.x * blockDim.x) >> 5;
    c.complete_below = S->complete_below;
    const size_t cells = (size_t)c.cells;
    unsigned long long k = 0; /* lane 0's count */
    double mr = 0.0;
    for (long long t = warp; t < c.n; t += nwarps) {
        int stop = 0;
        dp_tidx q = -1;
        if (lane == 0) k += (unsigned long long)dp_vcheck_meta(&c, t, NULL, &stop, &q);
        stop = __shfl_sync(0xffffffffu, stop, 0);
        q = __shfl_sync(0xffffffffu, q, 0);
        if (stop) continue; /* level out of range: nothing else is checked (nor its children) */
        DP_FOR_FIELDS(f, c.nf)
        {
            const int i = dp_vfirst_nonfinite(c.field[f] + (size_t)t * cells, c.cells, lane, 32);
            if (__any_sync(0xffffffffu, i < c.cells) && lane == 0) ++k;
        }
        if (c.fill == DP_FILL_PROLONG && q >= 0) {
            const int o = dp_tile_octant(c.T.coord + 3 * t);
            DP_FOR_FIELDS(f, c.nf)
            {
                int jb = -1;
                const int bad = dp_vconserve(c.dim, c.B, c.field[f] + (size_t)t * cells, c.field[f] + (size_t)q * cells,
                                             o, lane, 32, &mr, &jb);
                if (__any_sync(0xffffffffu, bad > 0) && lane == 0) ++k;
            }
        }
        if (lane == 0) k += (unsigned long long)dp_vcheck_children(&c, t, NULL);
    }
    /* the warp's largest error, then one atomic per warp (a tile's loop ends alike for every lane) */
    for (int o = 16; o > 0; o >>= 1) {
        const double other = __shfl_xor_sync(0xffffffffu, mr, o);
        if (other > mr) mr = other;
    }
    if (k) atomicAdd(&S->nfail, k);
    if (lane == 0 && mr > 0.0) atomicMax(&S->maxrel_bits, (unsigned long long)__double_as_longlong(mr));
}

/* Tile sums and hashes of every field (j < n nf: field j / n, tile j % n) and tree hashes (the last n). */
__global__ void vTileSums(dp_vctx c, double *tsum, uint64_t *thash, uint64_t *ttree)
{
    const long long n = c.n, total = n * (c.nf + 1);
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x; j < total; j += stride) {
        const int f = (int)(j / n);
        const long long t = j - (long long)f * n;
        if (f < c.nf) {
            const float *u = dmesh_field_of(c, f) + (size_t)t * (size_t)c.cells;
            dp_vtile_field(u, c.cells, &tsum[j], &thash[j]);
        } else {
            ttree[t] = dp_vtile_tree(c.T.level[t], c.T.coord + 3 * t, c.T.parent[t]);
        }
    }
}

/* start[t] = 1 when tile t begins a chunk: the first tile, or a level or a root other than t - 1's. */
__global__ void vChunkStart(dp_vctx c, long long *start)
{
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < c.n; t += stride) {
        const int L = c.T.level[t];
        int s = t == 0 || L < 0 || L >= DP_MAX_LEVELS;
        if (!s) {
            const int Lp = c.T.level[t - 1];
            s = L != Lp || dp_root_key(c.dim, c.T.key[t], L) != dp_root_key(c.dim, c.T.key[t - 1], L);
        }
        start[t] = s;
    }
}

/* pos[chunk] = its first tile, pos[nchunks] = n; chunks per level. */
__global__ void vChunkPos(dp_vctx c, const long long *start, const long long *cid, long long *pos, vstate_t *S)
{
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < c.n; t += stride) {
        if (start[t]) {
            pos[cid[t]] = t;
            const int L = c.T.level[t];
            if (L >= 0 && L < DP_MAX_LEVELS) atomicAdd(&S->nch[L], 1ull);
        }
        if (t == c.n - 1) {
            const long long nc = cid[t] + start[t];
            pos[nc] = c.n;
            S->nchunks = nc;
        }
    }
}

/* Chunk k's sum and hash of field f (j = k (nf + 1) + f), or its tree hash (f = nf): its tiles'
 * values added in canonical order, one thread per chunk and field. out holds max_chunks: a valid
 * mesh has at most one chunk per root and level; more (an invalid mesh) sets chunk_over instead. */
__global__ void vChunkFold(dp_vctx c, vstate_t *S, const long long *pos, const double *tsum,
                           const uint64_t *thash, const uint64_t *ttree, dp_vchunk *out, long long max_chunks)
{
    const long long nc = S->nchunks, per = c.nf + 1, n = c.n;
    if (nc > max_chunks) {
        if (blockIdx.x == 0 && threadIdx.x == 0) S->chunk_over = 1;
        return;
    }
    const long long total = nc * per;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x; j < total; j += stride) {
        const long long k = j / per;
        const int f = (int)(j - k * per);
        const long long a = pos[k], b = pos[k + 1];
        uint64_t h = DP_FNV_OFFSET;
        if (f < c.nf) {
            double s = 0.0;
            for (long long t = a; t < b; ++t) dp_vchunk_add(&s, &h, tsum[(long long)f * n + t], thash[(long long)f * n + t]);
            out[k].sum[f] = s;
            out[k].hash[f] = h;
        } else {
            for (long long t = a; t < b; ++t) dp_vchunk_add(NULL, &h, 0.0, ttree[t]);
            out[k].tree = h;
        }
    }
}

/* The test hook: damage the last tile (a cell to NaN, its key, its parent). */
__global__ void vCorrupt(dp_vctx c, int kind)
{
    if (threadIdx.x != 0 || blockIdx.x != 0 || c.n < 1) return;
    const long long t = c.n - 1;
    if (kind == 1) c.T.key[t] ^= 1ull;
    else if (kind == 2) c.T.parent[t] = -5;
    else {
        union {
            uint32_t u;
            float f;
        } nan;
        nan.u = 0x7fc00000u;
        ((float *)c.field[0])[(size_t)t * (size_t)c.cells] = nan.f;
    }
}

/* ---- host side ------------------------------------------------------------------------------- */

static const dp_vreq *g_req = NULL; /* the request of the gpu_refine_valid running now */
static dp_vdev *g_res = NULL;
static int g_root[3];               /* its mesh's root tile grid */
static dp_params g_params;          /* its deck's parameters (the engine's c_params) */

/* One validation in flight: its stream, events, scratch. */
typedef struct {
    int active;
    cudaStream_t vs;
    cudaEvent_t ready, e0, e1;
    vstate_t *S;
    unsigned *kids32;
    uint8_t *flags, *aux;
    double *tsum;
    uint64_t *thash, *ttree;
    long long *start, *cid, *pos;
    dp_vchunk *chunks;
    void *tmp;
    long long n, max_chunks;
    double t0;
} vrun_t;
static vrun_t g_run;

static void vrun_free(vrun_t *v)
{
    if (v->vs) cudaStreamSynchronize(v->vs); /* nothing may still use what is freed */
    cudaFree(v->S);
    cudaFree(v->kids32);
    cudaFree(v->flags);
    cudaFree(v->aux);
    cudaFree(v->tsum);
    cudaFree(v->thash);
    cudaFree(v->ttree);
    cudaFree(v->start);
    cudaFree(v->cid);
    cudaFree(v->pos);
    cudaFree(v->chunks);
    cudaFree(v->tmp);
    if (v->ready) cudaEventDestroy(v->ready);
    if (v->e0) cudaEventDestroy(v->e0);
    if (v->e1) cudaEventDestroy(v->e1);
    if (v->vs) cudaStreamDestroy(v->vs);
    memset(v, 0, sizeof *v);
}

/* The store's tiles as the checks' context (flags, kids, aux set by the caller). */
static dp_vctx store_ctx(const dmesh_t *M, long long n, const dp_params *p)
{
    dp_vctx c;
    memset(&c, 0, sizeof c);
#define DP_TILE_ARRAY_TAKE(name, type, per) c.T.name = M->name;
    DP_TILE_ARRAYS(DP_TILE_ARRAY_TAKE)
#undef DP_TILE_ARRAY_TAKE
    for (int f = 0; f < p->nf && f < DP_MAX_FIELDS; ++f) c.field[f] = M->field[f];
    c.n = n;
    c.dim = p->dim;
    c.B = p->B;
    c.nf = p->nf;
    c.cells = dp_cells(p->dim, p->B);
    c.max_level = p->max_level;
    c.fill = p->fill;
    c.root[0] = c.root[1] = c.root[2] = 1; /* read by dp_vcheck_meta: set from the request */
    return c;
}

/* Launch a validation kernel on the validation's stream (grid-stride, VG_THREADS a block). */
#define VG_LAUNCH(kernel, grid, ...)                                                                        \
    do {                                                                                                    \
        void *vl_args[] = { __VA_ARGS__ };                                                                  \
        CK(launch_pdl((const void *)kernel, dim3(grid), dim3(VG_THREADS), v->vs, 0, vl_args));             \
    } while (0)

/* Allocate, or say why not (then the CPU validates): out of device memory is not an error. */
#define VG_ALLOC(ptr, bytes)                                                                                \
    do {                                                                                                    \
        const cudaError_t va_e = cudaMalloc((void **)&(ptr), (bytes));                                      \
        if (va_e != cudaSuccess) {                                                                          \
            cudaGetLastError();                                                                             \
            snprintf(res->note, sizeof res->note, "no device memory for the validation's scratch (%s): "   \
                     "validated on the CPU", cudaGetErrorString(va_e));                                     \
            vrun_free(v);                                                                                   \
            return 0;                                                                                       \
        }                                                                                                   \
    } while (0)

int valid_gpu_start(const dmesh_t *M, long long ntiles, cudaStream_t s, char *err, size_t errlen)
{
    const dp_vreq *req = g_req;
    dp_vdev *res = g_res;
    vrun_t *v = &g_run;
    if (!req || !res) return 0;
    memset(v, 0, sizeof *v);
    const char *hook = getenv("DPAMR_TEST_DEVICE_CORRUPT");
    if (!req->validate && !(hook && hook[0])) return 0;
    const dp_params p = g_params;
    {
        dp_vctx c = store_ctx(M, ntiles, &p);
        for (int a = 0; a < 3; ++a) c.root[a] = g_root[a];
        if (hook && hook[0]) {
            const int kind = !strcmp(hook, "key") ? 1 : !strcmp(hook, "parent") ? 2 : 0;
            void *ka[] = { &c, (void *)&kind };
            CK(launch_pdl((const void *)vCorrupt, dim3(1), dim3(32), s, 0, ka));
        }
        if (!req->validate) return 0;
        if (ntiles < 1) {
            snprintf(res->note, sizeof res->note, "no tiles on the device: validated on the CPU");
            return 0;
        }
        v->t0 = timer_ms();
        v->n = ntiles;
        const size_t n = (size_t)ntiles, nf = (size_t)p.nf;
        CK(cudaStreamCreateWithFlags(&v->vs, cudaStreamNonBlocking));
        CK(cudaEventCreateWithFlags(&v->ready, cudaEventDisableTiming));
        CK(cudaEventCreate(&v->e0));
        CK(cudaEventCreate(&v->e1));
        size_t tmp_bytes = 0;
        CK(cub::DeviceScan::ExclusiveSum(NULL, tmp_bytes, v->start, v->cid, (int64_t)n, v->vs));
        VG_ALLOC(v->S, sizeof(vstate_t));
        VG_ALLOC(v->kids32, (n + 3) / 4 * sizeof(unsigned));
        VG_ALLOC(v->flags, n);
        VG_ALLOC(v->aux, n);
        VG_ALLOC(v->tsum, n * nf * sizeof(double));
        VG_ALLOC(v->thash, n * nf * sizeof(uint64_t));
        VG_ALLOC(v->ttree, n * sizeof(uint64_t));
        VG_ALLOC(v->start, n * sizeof(long long));
        VG_ALLOC(v->cid, n * sizeof(long long));
        VG_ALLOC(v->pos, (n + 1) * sizeof(long long));
        /* a valid mesh: at most one chunk per root tile and level */
        const long long roots = (long long)g_root[0] * g_root[1] * g_root[2];
        long long max_chunks = roots * (long long)(p.max_level + 1);
        if (max_chunks > (long long)n || max_chunks < 1) max_chunks = (long long)n;
        v->max_chunks = max_chunks;
        VG_ALLOC(v->chunks, (size_t)max_chunks * sizeof(dp_vchunk));
        VG_ALLOC(v->tmp, tmp_bytes > 0 ? tmp_bytes : 1);
        nvtxRangePushA("validate on the GPU");
        /* after everything on the engine's stream (the refinement, the test hook) */
        CK(cudaEventRecord(v->ready, s));
        CK(cudaStreamWaitEvent(v->vs, v->ready, 0));
        CK(cudaEventRecord(v->e0, v->vs));
        CK(cudaMemsetAsync(v->S, 0, sizeof(vstate_t), v->vs));
        CK(cudaMemsetAsync(v->kids32, 0, (n + 3) / 4 * sizeof(unsigned), v->vs));
        CK(cudaMemsetAsync(v->flags, 0, n, v->vs));
        CK(cudaMemsetAsync(v->aux, 0, n, v->vs));
        CK(cudaMemsetAsync(v->chunks, 0, (size_t)max_chunks * sizeof(dp_vchunk), v->vs)); /* slots past nf stay 0 */
        c.flags = v->flags;
        c.kids = (const uint8_t *)v->kids32; /* byte q of the words: tile q's children */
        c.aux = v->aux;
        int dev = 0, sms = 0;
        CK(cudaGetDevice(&dev));
        CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
        /* grid-stride kernels: enough blocks for the work, at most 8 waves' worth per SM */
        const long long cap_blocks = (long long)sms * 8;
        const long long per_tile = (n + VG_THREADS - 1) / VG_THREADS, per_warp = (n * 32 + VG_THREADS - 1) / VG_THREADS;
        const unsigned g_tile = (unsigned)(per_tile < cap_blocks ? per_tile : cap_blocks);
        const unsigned g_warp = (unsigned)(per_warp < cap_blocks ? per_warp : cap_blocks);
        const long long per_sum = ((long long)n * (long long)(nf + 1) + VG_THREADS - 1) / VG_THREADS;
        const unsigned g_sum = (unsigned)(per_sum < cap_blocks ? per_sum : cap_blocks);
        VG_LAUNCH(vPassA, g_tile, &c, &v->S, &v->kids32);
        int complete = req->complete, max_level = p.max_level;
        VG_LAUNCH(vPrep, 1, &v->S, &complete, &max_level);
        VG_LAUNCH(vFlags, g_warp, &c, &v->S, &v->flags);
        VG_LAUNCH(vCheck, g_warp, &c, &v->S);
        VG_LAUNCH(vTileSums, g_sum, &c, &v->tsum, &v->thash, &v->ttree);
        VG_LAUNCH(vChunkStart, g_tile, &c, &v->start);
        CK(cub::DeviceScan::ExclusiveSum(v->tmp, tmp_bytes, v->start, v->cid, (int64_t)n, v->vs));
        VG_LAUNCH(vChunkPos, g_tile, &c, &v->start, &v->cid, &v->pos, &v->S);
        VG_LAUNCH(vChunkFold, g_sum, &c, &v->S, &v->pos, &v->tsum, &v->thash, &v->ttree, &v->chunks, &max_chunks);
        CK(cudaEventRecord(v->e1, v->vs));
        v->active = 1;
        nvtxRangePop();
    }
    return 0;
fail:
    vrun_free(v);
    return -1;
}

int valid_gpu_finish(char *err, size_t errlen)
{
    vrun_t *v = &g_run;
    dp_vdev *res = g_res;
    vstate_t S;
    if (!v->active || !res) return 0;
    CK(cudaEventSynchronize(v->e1));
    CK(cudaEventElapsedTime(&res->kernel_ms, v->e0, v->e1));
    CK(cudaMemcpyAsync(&S, v->S, sizeof S, cudaMemcpyDeviceToHost, v->vs));
    CK(cudaStreamSynchronize(v->vs));
    res->ntiles = v->n;
    res->nlv = S.nlv;
    res->unsorted = S.unsorted;
    res->dup = S.dup;
    res->nfail = (long long)S.nfail;
    {
        const long long b = (long long)S.maxrel_bits;
        memcpy(&res->maxrel, &b, sizeof b);
    }
    for (int L = 0; L < DP_MAX_LEVELS; ++L) {
        res->count[L] = (dp_tidx)S.count[L];
        res->nchunks[L] = (dp_tidx)S.nch[L];
    }
    if (S.chunk_over) { /* only an invalid mesh has more chunks than roots x levels: the CPU says what */
        snprintf(res->note, sizeof res->note, "more checksum chunks than root tiles x levels: validated on the CPU");
        vrun_free(v);
        return 0;
    }
    if (S.nfail == 0 && !S.dup && !S.unsorted && S.nlv >= 1) {
        /* chunks come level by level in tile order (sorted by level): split them */
        long long at = 0, total = 0;
        for (int L = 0; L < DP_MAX_LEVELS; ++L) total += (long long)S.nch[L];
        if (total != S.nchunks || total > v->max_chunks) {
            snprintf(err, errlen, "internal error: the GPU validator counted %lld chunks by level but %lld in all",
                     total, S.nchunks);
            goto fail;
        }
        for (int L = 0; L < S.nlv; ++L) {
            const size_t k = (size_t)S.nch[L];
            res->chunk[L] = (dp_vchunk *)malloc((k + 1) * sizeof(dp_vchunk));
            if (!res->chunk[L]) {
                snprintf(err, errlen, "out of host memory for the validation's chunks");
                goto fail;
            }
            if (k) CK(cudaMemcpyAsync(res->chunk[L], v->chunks + at, k * sizeof(dp_vchunk), cudaMemcpyDeviceToHost, v->vs));
            at += (long long)k;
        }
        CK(cudaStreamSynchronize(v->vs));
    }
    res->wall_ms = timer_ms() - v->t0;
    res->ran = 1;
    vrun_free(v);
    return 0;
fail:
    vrun_free(v);
    return -1;
}

extern "C" int gpu_refine_valid(int variant, const deck_t *d, mesh_t *m, refine_report_t *r, const dp_vreq *q,
                                dp_vdev *res, char *err, size_t errlen)
{
    memset(res, 0, sizeof *res);
    snprintf(res->note, sizeof res->note, "the refinement ended before its download: validated on the CPU");
    if (d->p.balance != DP_BALANCE_NONE) { /* the device's passes know nothing of 2:1 balance: the CPU checks it */
        snprintf(res->note, sizeof res->note,
                 "balance = 2:1, which the GPU validator does not know: validated on the CPU");
        return gpu_refine(variant, d, m, r, err, errlen);
    }
    g_req = q;
    g_res = res;
    for (int a = 0; a < 3; ++a) g_root[a] = m->root[a];
    g_params = d->p;
    const int rc = gpu_refine(variant, d, m, r, err, errlen);
    g_req = NULL;
    g_res = NULL;
    if (g_run.active || g_run.vs) vrun_free(&g_run); /* an engine failed between start and finish */
    if (rc != 0) dp_vdev_free(res);
    return rc;
}
