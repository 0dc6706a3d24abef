/* engine_host.cu - variant hostlaunch: the same refinement restructured on the host.
 *
 * One host-launched kernel per level step (level L to L+1), all enqueued up front with no host round
 * trip (level sizes live in device memory, d_ls), each over the level's tiles as one compacted
 * work list (canonical order: a level is a contiguous index range):
 *   initLevelScans   once: every step's tickets and scan tile states reset (level_scan.cuh)
 *   flagTiles(Lp)    once: one warp per tile of the input's finest level: octant flags -> childmask
 *   refineStep(L)    blocks take groups of HOST_THREADS parents of level L in ticket order; a
 *                    single-pass scan over the level's child counts (CUB's decoupled look-back:
 *                    cub::ScanTileState, cub::TilePrefixCallbackOp in cub::BlockScan) gives each
 *                    parent its children's slots after the level's end; the block writes their
 *                    metadata (dp_write_child), fills them (block_fill_prolong: by bricks, or
 *                    block_fill_model: through each tile's table of axis terms) and, below
 *                    max_level, flags them while their criterion cells are in shared memory
 *                    (childmask, which the next step's scan counts). The last group writes the next
 *                    level's end. The step's body is step_groups (step_common.cuh), which cdp's
 *                    level grain runs too, in grids it launches from the device.
 * Children come out parent by parent, octant by octant: already canonical order, no sort. One
 * launch per level: earlier versions ran flagTiles, CUB's DeviceScan (two kernels), expandChildren
 * and fillCells per level, and a small level cost about 20 us in them (docs/results.md).
 *
 * PDL: flagTiles and every refineStep go through launch_pdl. Each does its independent setup
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
#include "device/step_common.cuh"
#include "src/timer.h"

/* Threads per block (the step's, step_common.cuh). */
#define HOST_THREADS STEP_THREADS

/* Octant flags of the input's finest level: one warp per tile, striding over the level. */
__global__ void flagTiles(dmesh_t M, int level, const long long *ls, int slot, int early)
{
    stamp_start(M.stamps, slot);
    cudaGridDependencySynchronize(); /* the scan states are reset */
    if (early) cudaTriggerProgrammaticLaunchCompletion();
    flag_level(M, ls[level], ls[level + 1] - ls[level], level);
    if (!early) cudaTriggerProgrammaticLaunchCompletion();
    stamp_end(M.stamps, slot);
}

/* What refineStep's block with the level's last group does with the next level's end: write it for
 * the next kernel (which reads it after this grid, cudaGridDependencySynchronize). */
struct step_end_host {
    long long *end;
    __device__ void operator()(long long next) const { *end = next; }
};

/* Level step k: the children of level L's tiles (step_groups, step_common.cuh), the level's bounds
 * from d_ls; the block holding the level's last group writes the next level's end there. Dynamic
 * shared memory: the model tables (fill = model, tp of them), then tp tiles of criterion cells. */
template <int FILL>
__global__ void __launch_bounds__(HOST_THREADS, FILL == DP_FILL_PROLONG ? 4 : 3) refineStep(dmesh_t M, level_scans_t S, long long *ls, int level, int k, int flag, int tp, int slot,
                           int early)
{
    __shared__ step_smem Sh;
    extern __shared__ double tab[];
    stamp_start(M.stamps, slot);
    cudaGridDependencySynchronize(); /* level L's tiles, their cells and childmask, and d_ls are ready */
    if (early) cudaTriggerProgrammaticLaunchCompletion();
    const long long s = ls[level], e = ls[level + 1];
    if (s == e && blockIdx.x == 0 && threadIdx.x == 0) ls[level + 2] = e;
    step_groups<FILL, 0>(M, S, s, e, level, k, flag, tp, Sh, tab, step_crit<FILL>(tab, tp),
                         step_end_host{ ls + level + 2 });
    if (!early) cudaTriggerProgrammaticLaunchCompletion();
    stamp_end(M.stamps, slot);
}

/* Timeline slots: 0 flagTiles (level Lp), 1 + k refineStep k (level Lp + k to Lp + k + 1). */
static void slot_label(int i, char *buf, size_t n, const void *vLp)
{
    const int Lp = *(const int *)vLp;
    if (i == 0) snprintf(buf, n, "flagTiles L%d", Lp);
    else snprintf(buf, n, "refineStep L%d->L%d", Lp + i - 1, Lp + i);
}

/* What refine_host allocates on the device at a capacity: the store with its timeline slots, the
 * level sizes, the steps' tickets and scan regions. */
typedef struct {
    const dp_params *p;
    long long nfront, roots, nblocks;
    int Lp, nlev;
} host_need_t;

static double host_need(long long cap, const void *vctx)
{
    const host_need_t *c = (const host_need_t *)vctx;
    int maxnb = 0;
    const double scans = steps_layout(NULL, c->p, c->nfront, c->roots, c->Lp, c->nlev, cap, c->nblocks, &maxnb);
    if (scans < 0) return 1e300; /* no device holds it */
    return dmesh_store_bytes(c->p, cap, c->nlev + 1) + (double)(DP_MAX_LEVELS + 2) * sizeof(long long) +
           DP_MAX_LEVELS * sizeof(unsigned long long) + scans;
}

/* What a kernel may use without opting in. */
#define SMEM_DEFAULT_LIMIT ((size_t)48 << 10)

int refine_host(const deck_t *d, mesh_t *m, refine_report_t *r, char *err, size_t errlen)
{
    const dp_params *p = &d->p;
    cudaStream_t s = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    dmesh_t M;
    memset(&M, 0, sizeof M);
    level_scans_t S;
    memset(&S, 0, sizeof S);
    long long *d_ls = NULL;
    const double t_start = timer_ms();
    const int Lp = m->nlevels - 1, nlev = p->max_level - Lp > 0 ? p->max_level - Lp : 0;
    const dp_tidx frontier = m->level_start[Lp];
    const long long roots = (long long)m->root[0] * m->root[1] * m->root[2];
    long long ls[DP_MAX_LEVELS + 2], ntot = 0, cap = 0;
    unsigned long long st[ST_COUNT];
    unsigned long long *stamps = NULL;
    float build_ms = 0.0f;
    int rc = -1, maxnb = 1;
    int threads = HOST_THREADS, occ = 0, sms = 0, dev = 0, early = d->pdl_trigger_early, tp = 1;
    size_t step_smem = 0, step_static = 0;
    const void *step_kernel = NULL;
    unsigned grid;
    cap_t capinfo;
    dstage_t stage;
    memset(&stage, 0, sizeof stage);
    char need_err[256] = "";
    host_need_t need = { p, (long long)(m->level_start[Lp + 1] - frontier), roots, 0, Lp, nlev };
    for (int L = 0; L <= Lp + 1; ++L) ls[L] = m->level_start[L];

    nvtxRangePushA("host: setup");
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    /* one wave of resident blocks: the kernels loop over their level */
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    step_kernel = p->fill == DP_FILL_PROLONG ? (const void *)refineStep<DP_FILL_PROLONG>
                                             : (const void *)refineStep<DP_FILL_MODEL>;
    /* fewer tiles per pass while they need more than the default shared memory (many model objects
     * on small tiles); one tile's cells past it (3D, tile_size 32: 128 KB) opt in to the device's limit */
    {
        cudaFuncAttributes fa; /* the default limit holds static and dynamic shared memory together */
        CK(cudaFuncGetAttributes(&fa, step_kernel));
        tp = fill_pass_tiles(p, threads);
        while (tp > 1 && step_smem_bytes(p, tp, 1) + fa.sharedSizeBytes > SMEM_DEFAULT_LIMIT) tp /= 2;
        step_smem = step_smem_bytes(p, tp, 1);
        step_static = fa.sharedSizeBytes;
    }
    if (step_smem + step_static > SMEM_DEFAULT_LIMIT) {
        int optin = 0;
        cudaFuncAttributes fa;
        CK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
        CK(cudaFuncGetAttributes(&fa, step_kernel));
        if (step_smem + fa.sharedSizeBytes > (size_t)optin) {
            snprintf(err, errlen, "hostlaunch: a tile of %d^%d cells needs %zu bytes of shared memory per block, the "
                     "device allows %d: use a smaller tile_size", p->B, p->dim, step_smem + fa.sharedSizeBytes, optin);
            goto fail;
        }
        CK(cudaFuncSetAttribute(step_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)step_smem));
    }
    {
        int occ_flag = 0;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, step_kernel, threads, step_smem));
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ_flag, flagTiles, threads, 0));
        occ = occ_flag < occ ? occ_flag : occ;
    }
    /* every block resident at once: a group's look-back waits only on groups of running blocks */
    grid = (unsigned)(sms * (occ > 0 ? occ : 1));
    need.nblocks = grid;
    /* the capacity: max_tiles, or what the device (store, scan regions) and the host hold */
    if (gpu_capacity(d, m, host_need, &need, need_err, &capinfo, err, errlen) != 0) goto fail;
    cap = capinfo.cap;
    r->capacity = cap;
    snprintf(r->capacity_limit, sizeof r->capacity_limit, "%s", capinfo.limit);
    CK(upload_params(p, s));
    if (dmesh_create(&M, m, cap, nlev + 1, &stage, d->progress && !d->quiet, s, err, errlen) != 0) goto fail;
    CK(cudaMalloc((void **)&d_ls, sizeof ls));
    CK(cudaMemcpyAsync(d_ls, ls, sizeof ls, cudaMemcpyHostToDevice, s));
    if (nlev > 0) {
        const double scan_bytes = steps_layout(&S, p, need.nfront, roots, Lp, nlev, cap, grid, &maxnb);
        if (scan_bytes < 0) { /* the capacity search rejects such a capacity (host_need) */
            snprintf(err, errlen, "hostlaunch: a level step of more than 2^31 groups at capacity %lld", cap);
            goto fail;
        }
        CK(cudaMalloc((void **)&S.tickets, (size_t)nlev * sizeof(unsigned long long)));
        CK(cudaMalloc((void **)&S.scan, (size_t)scan_bytes));
    }
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaStreamSynchronize(s));
    r->upload_ms = timer_ms() - t_start;
    nvtxRangePop();

    nvtxRangePushA("host: level steps");
    CK(cudaEventRecord(e0, s));
    if (nlev > 0) {
        void *ia[] = { &S };
        CK(launch_pdl((const void *)initLevelScans, dim3((unsigned)((maxnb + 255) / 256), (unsigned)nlev), dim3(256), s, 0, ia));
        int slot = 0;
        void *fa[] = { &M, (void *)&Lp, &d_ls, &slot, &early };
        CK(launch_pdl((const void *)flagTiles, dim3(grid), dim3(threads), s, d->pdl, fa));
    }
    for (int k = 0; k < nlev; ++k) {
        int L = Lp + k, slot = 1 + k, flag = k + 1 < nlev;
        char name[64];
        slot_label(slot, name, sizeof name, &Lp);
        nvtxRangePushA(name);
        void *ra[] = { &M, &S, &d_ls, &L, &k, &flag, &tp, &slot, &early };
        CK(launch_pdl_smem(step_kernel, dim3(grid), dim3(threads), step_smem, s, d->pdl, ra));
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

    /* per-level times and PDL gaps from the device timeline: step k runs from the end of the kernel
     * before it (flagTiles for step 0) to its own end; the gaps are between consecutive kernels */
    if (nlev > 0) {
        const int nslot = nlev + 1;
        if (timeline_download(&M, nslot, s, &stamps, err, errlen) != 0) goto fail;
        r->ngaps = 0;
        for (int k = 0; k < nlev; ++k) {
            r->level_ms[Lp + k + 1] = (double)((long long)stamps[2 * (k + 1) + 1] - (long long)stamps[2 * k + 1]) * 1e-6;
            if (r->ngaps < DP_MAX_LEVELS)
                r->gap_ns[r->ngaps++] = (double)((long long)stamps[2 * (k + 1)] - (long long)stamps[2 * k + 1]);
        }
        if (timeline_write_named(d->trace, slot_label, &Lp, stamps, nslot, err, errlen) != 0) goto fail;
    }
    if (dmesh_download(&M, m, frontier, ntot, &stage, d->progress && !d->quiet, s, &r->download_ms, err, errlen) != 0)
        goto fail;
    r->refine_ms = build_ms;
    for (int L = Lp + 1; L < m->nlevels; ++L)
        if (!d->quiet) printf("  level %2d: %12lld tiles  %10.3f ms (device timeline)\n", L,
               (long long)(m->level_start[L + 1] - m->level_start[L]), r->level_ms[L]);
    snprintf(r->note, sizeof r->note, "host: level steps %.3f ms (pdl %s), upload %.3f ms, download %.3f ms", build_ms,
             d->pdl ? "on" : "off", r->upload_ms, r->download_ms);
    r->total_ms = timer_ms() - t_start;
    rc = 0;
fail: /* success falls through: one cleanup path (an NVTX range may stay open on an error) */
    free(stamps);
    cudaFree(d_ls);
    cudaFree(S.tickets);
    cudaFree(S.scan);
    dmesh_destroy(&M);
    dstage_destroy(&stage);
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    if (s) cudaStreamDestroy(s);
    return rc;
}
