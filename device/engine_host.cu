/* engine_host.cu - variant hostlaunch: the same refinement restructured on the host.
 *
 * Per level step (level L to L+1), kernels over a compacted work list, all enqueued up front with no
 * host round trip (level sizes live in device memory, d_ls):
 *   flagTiles(L)     first step only: one warp per tile of the input's finest level: octant flags
 *                    -> childmask, child count -> counts
 *   CUB ExclusiveSum counts -> offsets (over a host-side upper bound U_L of the level's size; the
 *                    tail past the level is zeroed, so the extra entries add nothing)
 *   expandChildren(L) one warp per parent tile of level L: its children go to the slots its
 *                    offset names; write their metadata (level, coords, key, parent)
 *   fillCells(L+1)   blocks take a few new tiles at a time: fill them (block_fill_tiles: prolong
 *                    by bricks, or the model through each tile's table of axis terms) and, below
 *                    max_level, flag them right away (childmask, counts for the next step's scan)
 * Children come out parent by parent, octant by octant: already canonical order, no sort.
 *
 * PDL: flagTiles, expandChildren and fillCells go through launch_pdl. Each does its independent
 * setup (timeline stamp, loop bounds) before cudaGridDependencySynchronize() and reads the previous
 * kernel's output (d_ls, childmask, counts/offsets, cells) only after it. Each block triggers the
 * next kernel either right after its own wait (pdl_trigger=early: the dependent grid may be
 * scheduled while this one still works) or after its work (pdl_trigger=late: hides the launch and
 * the prologue only). The deck key picks; docs/results.md gives what each measured.
 * The transition expandChildren -> fillCells is the one PDL can overlap. The scan's kernels are
 * CUB's: they launch without the attribute and never trigger early (CCCL 3.0 DeviceScan has no
 * PDL), so fillCells (or flagTiles) -> scan -> expandChildren stays stream-ordered; the timeline
 * shows all of them.
 */
#include <cub/device/device_scan.cuh>
#include <nvtx3/nvToolsExt.h>
#include <stdlib.h>
#include <string.h>

#include "device/gpu.h"
#include "device/gpu_common.cuh"
#include "src/timer.h"

/* flagTiles and expandChildren work by warps: each warp takes one tile or parent at a time and
 * strides over the level, so many tiles' memory latencies are in flight with no block barrier. */
#define HOST_THREADS 256
/* Level bounds above this many tiles are replaced by the level's real size, read back once the
 * previous level is built: the per-level scans run over the bound, and 2^21 is what every level's
 * bound was capped at before capacities came from memory (bench2d and bench3d stay below it). */
#define HOST_SCAN_SYNC_ABOVE (1ll << 21)

__global__ void flagTiles(dmesh_t M, int level, const long long *ls, long long *counts, long long bound, int slot,
                          int early)
{
    stamp_start(M.stamps, slot);
    const int lane = threadIdx.x & 31;
    const long long warp = (blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5;
    const long long nwarps = ((long long)gridDim.x * blockDim.x) >> 5;
    const long long tid = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    const long long nthreads = (long long)gridDim.x * blockDim.x;
    cudaGridDependencySynchronize(); /* ls, childmask and cells of level `level` are ready */
    if (early) cudaTriggerProgrammaticLaunchCompletion();
    const long long s = ls[level], n = ls[level + 1] - s;
    for (long long i = warp; i < n; i += nwarps) {
        const unsigned mask = warp_octant_flags(M, s + i, level, lane);
        if (lane == 0) {
            M.childmask[s + i] = (uint8_t)mask;
            counts[i] = __popc(mask);
        }
    }
    for (long long i = n + tid; i <= bound; i += nthreads) counts[i] = 0;
    if (!early) cudaTriggerProgrammaticLaunchCompletion();
    stamp_end(M.stamps, slot);
}

/* Parent i of level L has its children in slots [e + offsets[i], e + offsets[i+1]), octant order.
 * One warp per parent writes their metadata: no search, each lane takes one octant. */
__global__ void expandChildren(dmesh_t M, int level, long long *ls, const long long *offsets, int slot, int early)
{
    stamp_start(M.stamps, slot);
    const int dim = c_params.dim;
    const int lane = threadIdx.x & 31;
    const long long warp = (blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5;
    const long long nwarps = ((long long)gridDim.x * blockDim.x) >> 5;
    cudaGridDependencySynchronize(); /* offsets (scan) and, through it, childmask are ready */
    if (early) cudaTriggerProgrammaticLaunchCompletion();
    const long long s = ls[level], e = ls[level + 1], n = e - s;
    const long long total = offsets[n];
    if (e + total > M.cap) {
        if (blockIdx.x == 0 && threadIdx.x == 0) {
            M.stats[ST_OVERFLOW] = (unsigned long long)(e + total);
            ls[level + 2] = e; /* later levels see an empty level */
        }
        stamp_end(M.stamps, slot);
        return;
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) ls[level + 2] = e + total;
    for (long long i = warp; i < n; i += nwarps) {
        const long long par = s + i;
        const unsigned mask = M.childmask[par];
        if (lane >= (1 << dim) || !(mask >> lane & 1)) continue;
        const int o = lane;
        write_child(M, e + offsets[i] + __popc(mask & ((1u << o) - 1)), level + 1, par, o);
    }
    if (!early) cudaTriggerProgrammaticLaunchCompletion();
    stamp_end(M.stamps, slot);
}

/* Most tiles one block of fillCells takes per pass (its shared flag masks). */
#define FILL_MAX_TILES 64

/* Tiles one block of fillCells takes per pass: two bricks (2^dim cells each) per thread with
 * prolong, four cells per thread with the model (its tables and barriers once per pass); at
 * most FILL_MAX_TILES, at least one. */
static int fill_pass_tiles(const dp_params *p, int threads)
{
    const int cells = dp_cells(p->dim, p->B);
    const int tp = p->fill == DP_FILL_PROLONG ? (threads << (p->dim + 1)) / cells : 4 * threads / cells;
    return tp < 1 ? 1 : (tp > FILL_MAX_TILES ? FILL_MAX_TILES : tp);
}

/* The new level L+1 (its metadata written by expandChildren), tp tiles per block and pass:
 * block_fill_tiles fills them; below max_level (flag) the block then flags them at once, while
 * their cells are fresh in cache: childmask, and the child counts of the next level step's scan
 * (zeroed past the level up to that scan's bound). This is the next step's flagTiles, fused: one
 * launch and one pass over the level fewer per step. */
template <int FILL>
__global__ void fillCells(dmesh_t M, int level, const long long *ls, long long *counts, long long bound, int flag,
                          int tp, int slot, int early)
{
    extern __shared__ double tab[]; /* model tables (fill = model), then tp tiles of criterion cells */
    __shared__ unsigned smask[FILL_MAX_TILES];
    stamp_start(M.stamps, slot);
    const dp_params *p = &c_params;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, nwarps = blockDim.x >> 5;
    const int cells = dp_cells(p->dim, p->B);
    float *crit = (float *)(tab + (FILL == DP_FILL_PROLONG ? 0 : tp * dp_model_table_size(p)));
    for (int i = tid; i < tp; i += blockDim.x) smask[i] = 0;
    cudaGridDependencySynchronize(); /* the new tiles' metadata (expandChildren) is ready */
    if (early) cudaTriggerProgrammaticLaunchCompletion();
    const long long e = ls[level + 1], n = ls[level + 2] - e;
    const double h = dp_spacing(p, level + 1);
    for (long long i0 = (long long)blockIdx.x * tp; i0 < n; i0 += (long long)gridDim.x * tp) {
        const int g = (int)(n - i0 < tp ? n - i0 : tp);
        if (FILL == DP_FILL_PROLONG) block_fill_prolong(M, e + i0, g, flag ? crit : NULL);
        else block_fill_model(M, e + i0, g, level + 1, tab, tp, flag ? crit : NULL);
        if (!flag) continue;
        __syncthreads(); /* the block's criterion cells are in crit */
        /* wpt warps per tile, lanes striding over its cells */
        const int wpt = nwarps / g > 1 ? nwarps / g : 1;
        for (int i = warp / wpt; i < g; i += nwarps / wpt) {
            const float *u = crit + i * cells;
            unsigned mine = dp_tile_flags(p, u, h, lane + 32 * (warp % wpt), 32 * wpt, 0, NULL);
            for (int o = 16; o > 0; o >>= 1) mine |= __shfl_xor_sync(0xffffffffu, mine, o);
            if (lane == 0 && mine) atomicOr(&smask[i], mine);
        }
        __syncthreads();
        for (int i = tid; i < g; i += blockDim.x) {
            const unsigned m = smask[i];
            smask[i] = 0; /* for the next pass: only this thread touches entry i until the barrier */
            M.childmask[e + i0 + i] = (uint8_t)m;
            counts[i0 + i] = __popc(m);
        }
    }
    if (flag)
        for (long long i = n + blockIdx.x * (long long)blockDim.x + tid; i <= bound; i += (long long)gridDim.x * blockDim.x)
            counts[i] = 0;
    if (!early) cudaTriggerProgrammaticLaunchCompletion();
    stamp_end(M.stamps, slot);
}

/* Timeline slots: three kernels per level step k (level L = Lp + k). */
enum { SLOTS_PER_LEVEL = 3 };
static const char *slot_name(int slot, int Lp, char *buf, size_t n)
{
    const int L = Lp + slot / SLOTS_PER_LEVEL;
    static const char *const kernel[] = { "flagTiles L%d", "expandChildren L%d", "fillCells L%d" };
    snprintf(buf, n, kernel[slot % SLOTS_PER_LEVEL], slot % SLOTS_PER_LEVEL ? L + 1 : L);
    return buf;
}

static void slot_label(int i, char *buf, size_t n, const void *Lp) { slot_name(i, *(const int *)Lp, buf, n); }

/* U_k, the level passes' bound on level Lp + k's size at capacity cap: U_0 = the frontier,
 * U_k = min(U_{k-1} 2^dim, the level's domain, cap). Returns the largest. */
static long long level_bounds(const dp_params *p, long long nfront, long long roots, int Lp, int nlev, long long cap,
                              long long *bound)
{
    long long maxb = bound[0] = nfront;
    for (int k = 1; k <= nlev; ++k) {
        long long b = cap_shl(bound[k - 1], p->dim), dom = cap_shl(roots, p->dim * (Lp + k));
        b = b < dom ? b : dom;
        bound[k] = b < cap ? b : cap;
        maxb = bound[k] > maxb ? bound[k] : maxb;
    }
    return maxb;
}

/* What refine_host allocates on the device at a capacity: the store, the level sizes, counts and
 * offsets over the largest U_k, CUB's scan scratch for it (asked of CUB: a size query). */
typedef struct {
    const dp_params *p;
    long long nfront, roots;
    int Lp, nlev;
    cudaStream_t s;
    char *err; /* a failed size query's message (need returns 1e300) */
} host_need_t;

static double host_need(long long cap, const void *vctx)
{
    const host_need_t *c = (const host_need_t *)vctx;
    long long bound[DP_MAX_LEVELS + 1];
    const long long maxb = level_bounds(c->p, c->nfront, c->roots, c->Lp, c->nlev, cap, bound);
    const double bytes = dmesh_store_bytes(c->p, cap, SLOTS_PER_LEVEL * (c->nlev > 0 ? c->nlev : 1)) +
                         (double)(DP_MAX_LEVELS + 2) * sizeof(long long) + 2.0 * (double)(maxb + 1) * sizeof(long long);
    if (bytes > 1e16) return 1e300; /* no device holds it: no need to ask CUB about 2^62 items */
    size_t tmp = 0;
    const cudaError_t e =
        cub::DeviceScan::ExclusiveSum(NULL, tmp, (long long *)NULL, (long long *)NULL, (int64_t)(maxb + 1), c->s);
    if (e != cudaSuccess) {
        snprintf(c->err, 256, "CUDA error in the scan's size query: %s", cudaGetErrorString(e));
        return 1e300;
    }
    return bytes + (double)tmp;
}

int refine_host(const deck_t *d, mesh_t *m, refine_report_t *r, char *err, size_t errlen)
{
    const dp_params *p = &d->p;
    cudaStream_t s = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    dmesh_t M;
    memset(&M, 0, sizeof M);
    long long *d_ls = NULL, *d_off = NULL;
    long long *d_counts = NULL;
    void *tmp = NULL;
    size_t tmp_bytes = 0;
    const double t_start = timer_ms();
    const int Lp = m->nlevels - 1, nlev = p->max_level - Lp > 0 ? p->max_level - Lp : 0;
    const dp_tidx frontier = m->level_start[Lp];
    const long long roots = (long long)m->root[0] * m->root[1] * m->root[2];
    long long bound[DP_MAX_LEVELS + 1], ls[DP_MAX_LEVELS + 2], ntot = 0, maxb = 0, cap = 0;
    unsigned long long st[ST_COUNT];
    unsigned long long *stamps = NULL;
    float build_ms = 0.0f;
    int rc = -1;
    int threads = HOST_THREADS, occ = 0, sms = 0, dev = 0, early = d->pdl_trigger_early, tp = 1;
    size_t fill_smem = 0;
    const void *fill_kernel = NULL;
    unsigned grid;
    cap_t capinfo;
    dstage_t stage;
    memset(&stage, 0, sizeof stage);
    char need_err[256] = "";
    host_need_t need = { p, (long long)(m->level_start[Lp + 1] - frontier), roots, Lp, nlev, NULL, need_err };
    for (int L = 0; L <= Lp + 1; ++L) ls[L] = m->level_start[L];

    nvtxRangePushA("host: setup");
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    /* the capacity: max_tiles, or what the device (store, counts, offsets, scan) and the host hold */
    need.s = s;
    if (gpu_capacity(d, m, host_need, &need, need_err, &capinfo, err, errlen) != 0) goto fail;
    cap = capinfo.cap;
    r->capacity = cap;
    snprintf(r->capacity_limit, sizeof r->capacity_limit, "%s", capinfo.limit);
    /* U_k: an upper bound on level Lp + k's size, so the scans can be enqueued without reading it back */
    maxb = level_bounds(p, need.nfront, roots, Lp, nlev, cap, bound);
    CK(upload_params(p, s));
    if (dmesh_create(&M, m, cap, SLOTS_PER_LEVEL * (nlev > 0 ? nlev : 1), &stage, d->progress && !d->quiet, s, err,
                     errlen) != 0)
        goto fail;
    CK(cudaMalloc((void **)&d_ls, sizeof ls));
    CK(cudaMalloc((void **)&d_counts, (size_t)(maxb + 1) * sizeof(long long)));
    CK(cudaMalloc((void **)&d_off, (size_t)(maxb + 1) * sizeof(long long)));
    CK(cub::DeviceScan::ExclusiveSum(NULL, tmp_bytes, d_counts, d_off, (int64_t)(maxb + 1), s));
    CK(cudaMalloc(&tmp, tmp_bytes));
    CK(cudaMemcpyAsync(d_ls, ls, sizeof ls, cudaMemcpyHostToDevice, s));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    /* one wave of resident blocks: the kernels stride over their level */
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    fill_kernel = p->fill == DP_FILL_PROLONG ? (const void *)fillCells<DP_FILL_PROLONG> : (const void *)fillCells<DP_FILL_MODEL>;
    tp = fill_pass_tiles(p, threads);
    fill_smem = fill_table_bytes(p, tp) + (size_t)tp * dp_cells(p->dim, p->B) * sizeof(float);
    {
        int occ_flag = 0;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, fill_kernel, threads, fill_smem));
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ_flag, flagTiles, threads, 0));
        occ = occ_flag < occ ? occ_flag : occ;
    }
    grid = (unsigned)(sms * (occ > 0 ? occ : 1));
    CK(cudaStreamSynchronize(s));
    r->upload_ms = timer_ms() - t_start;
    nvtxRangePop();

    nvtxRangePushA("host: level passes");
    CK(cudaEventRecord(e0, s));
    for (int k = 0; k < nlev; ++k) {
        int L = Lp + k, slot_flag = SLOTS_PER_LEVEL * k, slot_exp = slot_flag + 1, slot_fill = slot_flag + 2;
        long long b = bound[k];
        if (k > 0 && b > HOST_SCAN_SYNC_ABOVE) {
            /* A bound this large (a capacity from memory on a deep, sparse deck) would scan and zero
             * mostly empty counts: wait for the level instead and scan its real size. The chain of
             * launches breaks here (a host round trip inside the timed build). */
            long long lsk[2];
            CK(cudaMemcpyAsync(lsk, d_ls + L, sizeof lsk, cudaMemcpyDeviceToHost, s));
            CK(cudaStreamSynchronize(s));
            b = lsk[1] - lsk[0];
        }
        char name[64];
        if (k == 0) { /* later levels are flagged by the fillCells that makes them */
            nvtxRangePushA(slot_name(slot_flag, Lp, name, sizeof name));
            void *fa[] = { &M, &L, &d_ls, &d_counts, &b, &slot_flag, &early };
            CK(launch_pdl((const void *)flagTiles, dim3(grid), dim3(threads), s, d->pdl, fa));
            nvtxRangePop();
        }
        CK(cub::DeviceScan::ExclusiveSum(tmp, tmp_bytes, d_counts, d_off, (int64_t)(b + 1), s));
        nvtxRangePushA(slot_name(slot_exp, Lp, name, sizeof name));
        void *xa[] = { &M, &L, &d_ls, &d_off, &slot_exp, &early };
        CK(launch_pdl((const void *)expandChildren, dim3(grid), dim3(threads), s, d->pdl, xa));
        nvtxRangePop();
        nvtxRangePushA(slot_name(slot_fill, Lp, name, sizeof name));
        int flag = k + 1 < nlev;
        long long nb = flag ? bound[k + 1] : 0;
        void *ca[] = { &M, &L, &d_ls, &d_counts, &nb, &flag, &tp, &slot_fill, &early };
        CK(launch_pdl_smem(fill_kernel, dim3(grid), dim3(threads), fill_smem, s, d->pdl, ca));
        nvtxRangePop();
    }
    CK(cudaEventRecord(e1, s));
    CK(cudaEventSynchronize(e1));
    CK(cudaEventElapsedTime(&build_ms, e0, e1));
    nvtxRangePop();
    CK(cudaMemcpyAsync(st, M.stats, sizeof st, cudaMemcpyDeviceToHost, s));
    CK(cudaMemcpyAsync(ls, d_ls, sizeof ls, cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    if (st[ST_OVERFLOW] > 0) {
        cap_overflow_message(&capinfo, (long long)st[ST_OVERFLOW], "deeper levels not counted", err, errlen);
        goto fail;
    }
    ntot = ls[Lp + 1];
    for (int k = 0; k < nlev; ++k) ntot = ls[Lp + k + 2] > ntot ? ls[Lp + k + 2] : ntot;

    /* per-level times and PDL gaps from the device timeline */
    if (nlev > 0) {
        const int nslot = SLOTS_PER_LEVEL * nlev;
        if (timeline_download(&M, nslot, s, &stamps, err, errlen) != 0) goto fail;
        /* stamps[2*slot] = first block start, stamps[2*slot+1] = last block end */
#define T_START(slot) ((long long)stamps[2 * (slot)])
#define T_END(slot) ((long long)stamps[2 * (slot) + 1])
        /* step k runs from the end of step k - 1's fillCells (its scan is not stamped), step 0 from
         * its flagTiles, to the end of its fillCells */
        for (int k = 0; k < nlev; ++k)
            r->level_ms[Lp + k + 1] =
                (double)(T_END(SLOTS_PER_LEVEL * k + 2) - (k ? T_END(SLOTS_PER_LEVEL * k - 1) : T_START(0))) * 1e-6;
        /* the direct PDL pair: expandChildren -> fillCells within a level step (fillCells ->
         * expandChildren of the next step has CUB's scan between) */
        r->ngaps = 0;
        for (int k = 0; k < nlev && r->ngaps < DP_MAX_LEVELS; ++k) {
            const int f = SLOTS_PER_LEVEL * k;
            r->gap_ns[r->ngaps++] = (double)(T_START(f + 2) - T_END(f + 1));
        }
#undef T_START
#undef T_END
        if (timeline_write_named(d->trace, slot_label, &Lp, stamps, nslot, err, errlen) != 0) goto fail;
    }
    if (dmesh_download(&M, m, frontier, ntot, &stage, d->progress && !d->quiet, s, &r->download_ms, err, errlen) != 0)
        goto fail;
    r->refine_ms = build_ms;
    for (int L = Lp + 1; L < m->nlevels; ++L)
        if (!d->quiet) printf("  level %2d: %12lld tiles  %10.3f ms (device timeline)\n", L,
               (long long)(m->level_start[L + 1] - m->level_start[L]), r->level_ms[L]);
    snprintf(r->note, sizeof r->note, "host: level passes %.3f ms (pdl %s), upload %.3f ms, download %.3f ms", build_ms,
             d->pdl ? "on" : "off", r->upload_ms, r->download_ms);
    r->total_ms = timer_ms() - t_start;
    rc = 0;
fail: /* success falls through: one cleanup path (an NVTX range may stay open on an error) */
    free(stamps);
    cudaFree(d_ls);
    cudaFree(d_counts);
    cudaFree(d_off);
    cudaFree(tmp);
    dmesh_destroy(&M);
    dstage_destroy(&stage);
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    if (s) cudaStreamDestroy(s);
    return rc;
}
