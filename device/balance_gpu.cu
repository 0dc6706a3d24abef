/* balance_gpu.cu - 2:1 balance of the device tile store (deck key balance = 2:1; docs/design.md,
 * "Balance"): what balance_close (src/balance.c) does on the CPU, on the device, to the same bits.
 * Both GPU engines call it after the criterion's refinement (dbal_refine), and the GPU regrid after
 * each rebuild (dbal_close into the store the rebuild read, whose old cells come first).
 *
 * The store is canonical (level, Morton key) with n tiles; its level starts are found on the device
 * (levelStarts). Then, as the CPU:
 *   1. finest level first, L = nlevels - 1 .. 2: balMissing, one thread per tile of level L and per
 *      key added at level L, enumerates the tiles it needs at L - 1 (dp_balance_wanted,
 *      src/balance_tile.h) and appends those the level lacks (dp_key_find in its sorted keys) to a
 *      candidate list (an atomic counter); CUB sorts them (DeviceRadixSort::SortKeys) and drops
 *      repeats (DeviceSelect::Unique): level L - 1's added keys, sorted and unique, which level L - 1
 *      counts in turn. One pass reaches level 1, as on the CPU.
 *   2. the tile cap checked on the host, level by level as balance_merge does (the same message
 *      with max_tiles).
 *   3. in a regrid, balFromOld: each added tile found in the old store (same level and key) has
 *      its cells copied aside first (the balanced mesh may be written over the old store).
 *   4. the merge into the destination store, by binary search and no sort (dp_bal_t and its
 *      functions, src/balance_tile.h): an old tile i of level L goes to nls[L] + (i - ls[L]) +
 *      (added keys of L below its key), added key j of L to nls[L] + j + (old keys of L below it)
 *      (balMergeOld: metadata, parent remapped the same way, cells; balMergeNew: dp_write_tile,
 *      parent found among the old or the added keys of L - 1, dp_bal_parent). Every childmask is
 *      recomputed from the tiles of the next level (dp_bal_children, as mesh_index_children).
 *   5. coarsest level first, balFill: each added tile with its old cells (3.) or filled as a new
 *      child (block_fill_tiles: prolonged from its parent, filled before it, or sampled).
 * Every kernel goes through launch_pdl on the caller's stream and waits for its predecessor
 * (cudaGridDependencySynchronize) before it reads anything; none triggers early. */
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>
#include <nvtx3/nvToolsExt.h>
#include <stdlib.h>
#include <string.h>

#include "device/gpu.h"
#include "device/gpu_common.cuh"
#include "src/balance_tile.h"
#include "src/timer.h"

#define BAL_THREADS 256
/* Most blocks of a one-block-per-tile grid (the blocks stride over the tiles). */
#define BAL_MAX_BLOCKS 65536u

/* ---- kernels --------------------------------------------------------------------------------- */

/* ls[level[t]] = t for the first tile of each level (the store is canonical); ls[] set to -1 before. */
__global__ void __launch_bounds__(BAL_THREADS) levelStarts(dmesh_t S, long long n, long long *ls)
{
    cudaGridDependencySynchronize();
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < n; t += stride)
        if (t == 0 || S.level[t] != S.level[t - 1]) {
            const int L = S.level[t];
            if (L >= 0 && L < DP_MAX_LEVELS) ls[L] = t;
        }
}

/* Step 1 at level L: the keys of level L - 1 that level L's tiles and added keys need and the
 * source lacks, appended to cand (*count: how many; at most 2^dim per item). */
__global__ void __launch_bounds__(BAL_THREADS) balMissing(dmesh_t S, const __grid_constant__ dp_bal_t B, int L,
                                                          unsigned long long *count, uint64_t *cand)
{
    cudaGridDependencySynchronize();
    const int dim = c_params.dim;
    const long long s = B.ls[L], k = B.ls[L + 1] - s, items = k + B.an[L];
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < items; i += stride) {
        int32_t c[3], w[8][3];
        if (i < k) {
            for (int a = 0; a < 3; ++a) c[a] = S.coord[3 * (s + i) + a];
        } else
            dp_morton_decode(dim, B.ak[L][i - k], c);
        const int nw = dp_balance_wanted(dim, B.root, L, c, w);
        for (int j = 0; j < nw; ++j) {
            const uint64_t key = dp_morton(dim, w[j][0], w[j][1], w[j][2]);
            if (dp_key_find(S.key, B.ls[L - 1], B.ls[L], key) >= 0) continue;
            cand[atomicAdd(count, 1ull)] = key;
        }
    }
}

/* Step 3 at level L: each added key of L that the old store O has at L: its index into oidx (else
 * -1) and its cells (every field) into keep, nf * cells per added tile; found counts them. One
 * block per added tile. */
__global__ void __launch_bounds__(BAL_THREADS) balFromOld(dmesh_t O, const __grid_constant__ dp_bal_t B, int L,
                                                         long long *oidx, float *keep, unsigned long long *found)
{
    __shared__ long long ot;
    cudaGridDependencySynchronize();
    const int nf = c_params.nf, cells = dp_cells(c_params.dim, c_params.B);
    for (long long j = blockIdx.x; j < B.an[L]; j += gridDim.x) {
        const long long a = B.abase[L] + j;
        if (threadIdx.x == 0) {
            ot = L < B.onl ? dp_key_find(O.key, B.ols[L], B.ols[L + 1], B.ak[L][j]) : -1;
            oidx[a] = ot;
            if (ot >= 0) atomicAdd(found, 1ull);
        }
        __syncthreads();
        const long long o = ot;
        if (o >= 0)
            for (int f = 0; f < nf; ++f) {
                const float *u = dmesh_field(O, f) + (size_t)o * cells;
                float *v = keep + ((size_t)a * nf + f) * cells;
                for (int c = threadIdx.x; c < cells; c += blockDim.x) v[c] = u[c];
            }
        __syncthreads(); /* ot is read by every thread before thread 0 writes the next one */
    }
}

/* Step 4, the source's tiles: each to its balanced index in D, metadata, parent remapped, childmask
 * recomputed, cells. One block per tile. */
__global__ void __launch_bounds__(BAL_THREADS) balMergeOld(dmesh_t S, dmesh_t D, const __grid_constant__ dp_bal_t B,
                                                          long long n)
{
    __shared__ long long to;
    cudaGridDependencySynchronize();
    const int nf = c_params.nf, cells = dp_cells(c_params.dim, c_params.B);
    for (long long i = blockIdx.x; i < n; i += gridDim.x) {
        if (threadIdx.x == 0) {
            const int L = S.level[i];
            const long long t = dp_bal_old_to(&B, S.key, L, i);
            copy_tile_meta(D, t, S, i);
            const long long par = S.parent[i];
            D.parent[t] = L > 0 && par >= 0 ? dp_bal_old_to(&B, S.key, L - 1, par) : par;
            D.childmask[t] = (uint8_t)dp_bal_children(&B, c_params.dim, S.key, L, S.key[i]);
            to = t;
        }
        __syncthreads();
        const long long t = to;
        for (int f = 0; f < nf; ++f) {
            const float *u = dmesh_field(S, f) + (size_t)i * cells;
            float *v = dmesh_field(D, f) + (size_t)t * cells;
            for (int c = threadIdx.x; c < cells; c += blockDim.x) v[c] = u[c];
        }
        __syncthreads(); /* `to` is read by every thread before thread 0 writes the next one */
    }
}

/* Step 4, level L's added keys: their metadata in D (dp_write_tile: the child of their parent,
 * found among level L - 1's source tiles or added keys), childmask; a missing parent is counted in
 * *broken. One thread per key. */
__global__ void __launch_bounds__(BAL_THREADS) balMergeNew(dmesh_t S, dmesh_t D, const __grid_constant__ dp_bal_t B,
                                                          int L, unsigned long long *broken)
{
    cudaGridDependencySynchronize();
    const int dim = c_params.dim;
    const dp_tiles T = dmesh_tiles(D);
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x; j < B.an[L]; j += stride) {
        const uint64_t key = B.ak[L][j];
        const long long par = dp_bal_parent(&B, dim, S.key, L, key);
        if (par < 0) {
            atomicAdd(broken, 1ull);
            continue;
        }
        const long long t = dp_bal_new_to(&B, S.key, L, j);
        int32_t c[3];
        dp_morton_decode(dim, key, c);
        dp_write_tile(T, dim, t, L, c, par);
        D.childmask[t] = (uint8_t)dp_bal_children(&B, dim, S.key, L, key);
    }
}

/* Step 5, level L's added tiles: their old cells (keep, oidx; a regrid) or filled as new children
 * (block_fill_tiles, one tile at a time; its model table in dynamic shared memory tab). One block
 * per tile; the branch is the same for the whole block (block_fill_model has barriers). */
__global__ void __launch_bounds__(BAL_THREADS) balFill(dmesh_t S, dmesh_t D, const __grid_constant__ dp_bal_t B, int L,
                                                      const long long *oidx, const float *keep)
{
    extern __shared__ double tab[];
    cudaGridDependencySynchronize();
    const int nf = c_params.nf, cells = dp_cells(c_params.dim, c_params.B);
    for (long long j = blockIdx.x; j < B.an[L]; j += gridDim.x) {
        const long long t = dp_bal_new_to(&B, S.key, L, j), a = B.abase[L] + j;
        if (oidx && oidx[a] >= 0) {
            for (int f = 0; f < nf; ++f) {
                const float *u = keep + ((size_t)a * nf + f) * cells;
                float *v = dmesh_field(D, f) + (size_t)t * cells;
                for (int c = threadIdx.x; c < cells; c += blockDim.x) v[c] = u[c];
            }
        } else
            block_fill_tiles(cta_team(), D, t, 1, L, tab, 1, NULL);
    }
}

/* ---- host ------------------------------------------------------------------------------------ */

static unsigned bal_blocks(long long n, long long per)
{
    const long long b = (n + per - 1) / per;
    return (unsigned)(b < 1 ? 1 : (b > BAL_MAX_BLOCKS ? BAL_MAX_BLOCKS : b));
}

/* A device buffer of at least `bytes` (grown, its contents dropped). */
static cudaError_t bal_grow(void **p, size_t *have, size_t bytes)
{
    if (bytes <= *have) return cudaSuccess;
    cudaFree(*p);
    *p = NULL;
    *have = 0;
    const cudaError_t e = cudaMalloc(p, bytes);
    if (e == cudaSuccess) *have = bytes;
    return e;
}

int dbal_close(dmesh_t *M, long long n, const dp_params *pp, const int *root, dmesh_t *into, const dmesh_t *old,
               const long long *old_ls, int old_nl, long long cap, const char *cap_limit, int pdl, cudaStream_t s,
               dbal_result_t *res, char *err, size_t errlen)
{
    dp_bal_t B;
    memset(&B, 0, sizeof B);
    memset(res, 0, sizeof *res);
    dmesh_t D;
    dmesh_zero(&D);
    uint64_t *ak[DP_MAX_LEVELS];
    memset(ak, 0, sizeof ak);
    void *cand = NULL, *sorted = NULL, *tmp = NULL;
    size_t cand_have = 0, sorted_have = 0, tmp_have = 0;
    long long *d_ls = NULL, *d_nuniq = NULL, *oidx = NULL;
    unsigned long long *d_cnt = NULL; /* [0] candidates, [1] found in old, [2] broken parents */
    float *keep = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    const dp_params &p = *pp;
    int rc = -1;
    long long total = 0;
    if (n <= 0) return 0;
    nvtxRangePushA("balance 2:1");
    {
        const size_t cells = (size_t)dp_cells(p.dim, p.B);
        for (int a = 0; a < 3; ++a) B.root[a] = root[a];
        CK(cudaEventCreate(&e0));
        CK(cudaEventCreate(&e1));
        CK(cudaEventRecord(e0, s));
        /* the level starts */
        long long ls[DP_MAX_LEVELS + 1];
        CK(cudaMalloc((void **)&d_ls, sizeof ls));
        CK(cudaMalloc((void **)&d_nuniq, sizeof(long long)));
        CK(cudaMalloc((void **)&d_cnt, 3 * sizeof(unsigned long long)));
        CK(cudaMemsetAsync(d_ls, 0xff, sizeof ls, s));
        CK(cudaMemsetAsync(d_cnt, 0, 3 * sizeof(unsigned long long), s));
        {
            void *a[] = { (void *)M, &n, &d_ls };
            CK(launch_pdl((const void *)levelStarts, dim3(bal_blocks(n, BAL_THREADS)), dim3(BAL_THREADS), s, pdl, a));
        }
        CK(cudaMemcpyAsync(ls, d_ls, sizeof ls, cudaMemcpyDeviceToHost, s));
        CK(cudaStreamSynchronize(s));
        int nl = 0;
        while (nl < DP_MAX_LEVELS && ls[nl] >= 0) ++nl;
        if (nl == 0 || ls[0] != 0) {
            snprintf(err, errlen, "balancing 2:1: the device tile store is not in canonical order");
            goto fail;
        }
        for (int L = 0; L < nl; ++L) B.ls[L] = ls[L];
        B.ls[nl] = n;
        for (int L = 0; L < nl; ++L)
            if (B.ls[L + 1] <= B.ls[L]) {
                snprintf(err, errlen, "balancing 2:1: the device tile store is not in canonical order");
                goto fail;
            }
        B.nl = nl;

        /* 1. the keys each level needs and lacks, finest level first */
        for (int L = nl - 1; L >= 2; --L) {
            long long items = (B.ls[L + 1] - B.ls[L]) + B.an[L], ncand = 0;
            const size_t most = (size_t)items << p.dim;
            CK(bal_grow(&cand, &cand_have, most * sizeof(uint64_t)));
            CK(bal_grow(&sorted, &sorted_have, most * sizeof(uint64_t)));
            CK(cudaMemsetAsync(d_cnt, 0, sizeof(unsigned long long), s));
            {
                int Lv = L;
                void *a[] = { (void *)M, &B, &Lv, &d_cnt, &cand };
                CK(launch_pdl((const void *)balMissing, dim3(bal_blocks(items, BAL_THREADS)), dim3(BAL_THREADS), s,
                              pdl, a));
            }
            CK(cudaMemcpyAsync(&ncand, d_cnt, sizeof ncand, cudaMemcpyDeviceToHost, s));
            CK(cudaStreamSynchronize(s));
            if (ncand == 0) continue;
            if ((size_t)ncand > most) {
                snprintf(err, errlen, "internal error balancing 2:1: %lld keys needed at level %d, at most %zu "
                         "expected; please report this deck", ncand, L - 1, most);
                goto fail;
            }
            {
                size_t t1 = 0, t2 = 0;
                CK(cub::DeviceRadixSort::SortKeys(NULL, t1, (const uint64_t *)cand, (uint64_t *)sorted, (int64_t)ncand,
                                                  0, 64, s));
                CK(cub::DeviceSelect::Unique(NULL, t2, (const uint64_t *)sorted, (uint64_t *)cand, d_nuniq,
                                             (int64_t)ncand, s));
                CK(bal_grow(&tmp, &tmp_have, t1 > t2 ? t1 : t2));
                size_t tb = tmp_have;
                CK(cub::DeviceRadixSort::SortKeys(tmp, tb, (const uint64_t *)cand, (uint64_t *)sorted, (int64_t)ncand,
                                                  0, 64, s));
                CK(cudaMalloc((void **)&ak[L - 1], (size_t)ncand * sizeof(uint64_t)));
                tb = tmp_have;
                CK(cub::DeviceSelect::Unique(tmp, tb, (const uint64_t *)sorted, ak[L - 1], d_nuniq, (int64_t)ncand, s));
            }
            long long nu = 0;
            CK(cudaMemcpyAsync(&nu, d_nuniq, sizeof nu, cudaMemcpyDeviceToHost, s));
            CK(cudaStreamSynchronize(s));
            B.ak[L - 1] = ak[L - 1];
            B.an[L - 1] = nu;
            total += nu;
        }
        if (total == 0) {
            res->ntiles = n;
            res->nlevels = nl;
            for (int L = 0; L <= nl; ++L) res->ls[L] = B.ls[L];
            rc = 0;
            goto fail; /* nothing to add: the store stays as it is */
        }

        /* 2. the balanced level starts, the cap checked as balance_merge does */
        long long at = 0, base = 0;
        for (int L = 0; L < nl; ++L) {
            const long long grow = at + (B.ls[L + 1] - B.ls[L]) + B.an[L];
            if (cap > 0 && grow > cap) {
                if (!cap_limit)
                    snprintf(err, errlen, "tile store overflow balancing 2:1: at least %lld tiles needed, max_tiles = "
                             "%lld; set max_tiles >= %lld (or 0: as many as memory holds), or lower max_level", grow,
                             cap, grow);
                else
                    snprintf(err, errlen, "tile store overflow balancing 2:1 on the device: at least %lld tiles "
                             "needed, capacity %lld (%s); lower max_level", grow, cap, cap_limit);
                goto fail;
            }
            B.nls[L] = at;
            B.abase[L] = base;
            base += B.an[L];
            at = grow;
        }
        B.nls[nl] = at;
        if (into && into->cap < at) {
            snprintf(err, errlen, "internal error balancing 2:1: %lld tiles in a store of %lld", at, into->cap);
            goto fail;
        }

        /* 3. a regrid: the old cells of added tiles the old store has, set aside */
        if (old) {
            B.onl = old_nl;
            for (int L = 0; L <= old_nl && L <= DP_MAX_LEVELS; ++L) B.ols[L] = old_ls[L];
            CK(cudaMalloc((void **)&oidx, (size_t)total * sizeof(long long)));
            CK(cudaMalloc((void **)&keep, (size_t)total * p.nf * cells * sizeof(float)));
            for (int L = 1; L < nl; ++L) {
                if (!B.an[L]) continue;
                int Lv = L;
                unsigned long long *found = d_cnt + 1;
                void *a[] = { (void *)old, &B, &Lv, &oidx, &keep, &found };
                CK(launch_pdl((const void *)balFromOld, dim3(bal_blocks(B.an[L], 1)), dim3(BAL_THREADS), s, pdl, a));
            }
        }

        /* 4. the merge */
        if (into) D = *into;
        else {
            CK(dmesh_alloc_arrays(&D, (size_t)at, p.nf, cells));
            D.cap = at;
        }
        {
            void *a[] = { (void *)M, &D, &B, &n };
            CK(launch_pdl((const void *)balMergeOld, dim3(bal_blocks(n, 1)), dim3(BAL_THREADS), s, pdl, a));
        }
        for (int L = 1; L < nl; ++L) {
            if (!B.an[L]) continue;
            int Lv = L;
            unsigned long long *broken = d_cnt + 2;
            void *a[] = { (void *)M, &D, &B, &Lv, &broken };
            CK(launch_pdl((const void *)balMergeNew, dim3(bal_blocks(B.an[L], BAL_THREADS)), dim3(BAL_THREADS), s, pdl,
                          a));
        }

        /* 5. the added tiles' cells, coarsest level first (a child is prolonged from its parent's) */
        {
            const size_t smem = fill_table_bytes(&p, 1);
            for (int L = 1; L < nl; ++L) {
                if (!B.an[L]) continue;
                int Lv = L;
                void *a[] = { (void *)M, &D, &B, &Lv, &oidx, &keep };
                CK(launch_pdl_smem((const void *)balFill, dim3(bal_blocks(B.an[L], 1)), dim3(BAL_THREADS), smem, s,
                                   pdl, a));
            }
        }
        CK(cudaEventRecord(e1, s));
        unsigned long long cnt[3];
        CK(cudaMemcpyAsync(cnt, d_cnt, sizeof cnt, cudaMemcpyDeviceToHost, s));
        CK(cudaStreamSynchronize(s));
        CK(cudaEventElapsedTime(&res->ms, e0, e1));
        if (cnt[2] > 0) {
            snprintf(err, errlen, "balancing 2:1: the parent of %llu needed tiles is missing (the tile tree is not "
                     "properly nested)", cnt[2]);
            goto fail;
        }
        res->added = total;
        res->from_old = old ? (long long)cnt[1] : 0;
        res->ntiles = at;
        res->nlevels = nl;
        for (int L = 0; L <= nl; ++L) res->ls[L] = B.nls[L];
        if (into) {
            res->moved = 1;
            dmesh_zero(&D);
        } else /* the balanced store replaces M (its counters and timeline move over) */
            dmesh_replace(M, &D);
    }
    rc = 0;
fail: /* success falls through: one cleanup path (an NVTX range may stay open on an error) */
    if (rc != 0) cudaStreamSynchronize(s); /* nothing in flight may use what is freed */
    if (!into) dmesh_destroy(&D);
    for (int L = 0; L < DP_MAX_LEVELS; ++L) cudaFree(ak[L]);
    cudaFree(cand);
    cudaFree(sorted);
    cudaFree(tmp);
    cudaFree(d_ls);
    cudaFree(d_nuniq);
    cudaFree(d_cnt);
    cudaFree(oidx);
    cudaFree(keep);
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    nvtxRangePop();
    return rc;
}

int dbal_refine(const deck_t *d, const mesh_t *m, dmesh_t *M, long long *ntiles, long long *from, const cap_t *c,
                cudaStream_t s, float *ms, char *err, size_t errlen)
{
    *ms = 0.0f;
    if (d->p.balance != DP_BALANCE_2TO1) return 0;
    dbal_result_t b;
    const double t0 = timer_ms();
    if (dbal_close(M, *ntiles, &d->p, m->root, NULL, NULL, NULL, 0, c->cap, c->by == CAP_BY_MAX_TILES ? NULL : c->limit,
                   d->pdl, s, &b, err, errlen) != 0)
        return -1;
    if (b.added > 0) {
        *ntiles = b.ntiles;
        *from = 0; /* tiles may be added on any level from 1: download the whole store */
    }
    *ms = b.ms;
    if (!d->quiet) printf("  balance 2:1: %9lld tiles added  %10.2f ms\n", b.added, timer_ms() - t0);
    return 0;
}

double dbal_bytes(const dp_params *p, long long cap, int regrid)
{
    if (p->balance != DP_BALANCE_2TO1) return 0.0;
    /* a refinement: the balanced store beside the built one; a regrid: the old cells set aside. Both:
     * two candidate lists of 2^dim keys per tile, the added keys, the old indices */
    const double keys = (double)cap * (2.0 * 8.0 * (1 << p->dim) + 16.0);
    return regrid ? mesh_bytes((double)cap, p->dim, p->B, p->nf) + keys : dmesh_store_bytes(p, cap, 0) + keys;
}
