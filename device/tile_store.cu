/* tile_store.cu - the GPU tile store (dmesh_t): capacity from the deck, device and host memory;
 * allocation with the input mesh's upload, download into a host mesh, both through pinned staging
 * buffers (dstage_t). */
#include <nvtx3/nvToolsExt.h>
#include <stdlib.h>
#include <string.h>

#include "device/gpu.h"
#include "device/gpu_common.cuh"
#include "device/valid_gpu.cuh"
#include "src/timer.h"
#include "src/xfer.h"

cudaError_t gpu_free_memory(size_t *free_bytes, size_t *total_bytes)
{
    const cudaError_t e = cudaMemGetInfo(free_bytes, total_bytes);
    if (e != cudaSuccess) return e;
    const char *env = getenv("DPAMR_TEST_DEVICE_FREE");
    if (env && env[0]) {
        char *end = NULL;
        const double v = strtod(env, &end);
        if (end != env && v >= 0 && v < (double)*free_bytes) *free_bytes = (size_t)v;
    }
    return cudaSuccess;
}

double dmesh_store_bytes(const dp_params *p, long long cap, int slots)
{
    return mesh_bytes((double)cap, p->dim, p->B, p->nf) + (double)ST_COUNT * sizeof(unsigned long long) +
           2.0 * (slots > 0 ? slots : 0) * sizeof(unsigned long long);
}

int gpu_capacity(const deck_t *d, const mesh_t *m, cap_need_fn need, const void *ctx, char *need_err, cap_t *c,
                 char *err, size_t errlen)
{
    size_t fr = 0, total = 0;
    const cudaError_t e = gpu_free_memory(&fr, &total);
    if (e != cudaSuccess) {
        snprintf(err, errlen, "CUDA error in cudaMemGetInfo: %s", cudaGetErrorString(e));
        return -1;
    }
    cap_memory_t mem[2];
    memset(mem, 0, sizeof mem);
    mem[0].name = "device";
    mem[0].state = "free";
    mem[0].free_bytes = (double)fr;
    mem[0].share = d->share_device;
    mem[0].need = need;
    mem[0].ctx = ctx;
    cap_host_ctx_t hc;
    cap_host_memory(m, d->share_host, dstage_host_bytes(), &hc, &mem[1]);
    /* the frontier's children, counted on the host with the engines' criterion: a tighter bound
     * than 2^dim per frontier tile, so a store of the bound is smaller (it only bounds the
     * capacity: a level past the capacity is an overflow error, never a write out of bounds) */
    cap_compute(d->max_tiles, &d->p, m, cap_frontier_children(&d->p, m), mem, 2, c);
    /* a size query that failed for a candidate the search rejected does not matter; at the
     * capacity chosen it must succeed */
    if (need_err) need_err[0] = '\0';
    const double asked = need(c->cap, ctx), usable = cap_usable(&mem[0]);
    if (need_err && need_err[0]) {
        snprintf(err, errlen, "%s", need_err);
        return -1;
    }
    const char *share = d->share_device > 1 ? " (this rank's share)" : "";
    if (c->by != CAP_BY_MEMORY) { /* max_tiles, or the bound: the device must hold it with the scratch */
        if (asked > usable) {
            snprintf(err, errlen,
                     "the device lacks memory for this run: %s; the tile store and the engine's scratch for %lld "
                     "tiles need %.2f GiB, the device has %.2f GiB free of %.2f GiB, %.2f GiB usable%s; %s",
                     c->limit, c->cap, asked / CAP_GIB, fr / CAP_GIB, total / CAP_GIB, usable / CAP_GIB, share,
                     d->max_tiles > 0 ? "lower max_tiles (0: as many tiles as fit)" : "lower max_level");
            return -1;
        }
    }
    if (c->cap < m->ntiles) {
        char advice[256];
        snprintf(err, errlen, "the input mesh has %lld tiles, more than the tile store can hold: %s; %s",
                 (long long)m->ntiles, c->limit, cap_advice(c, (long long)m->ntiles, advice, sizeof advice));
        return -1;
    }
    return 0;
}

/* ---- pinned staging ---------------------------------------------------------------------------- */

void dstage_destroy(dstage_t *S)
{
    for (int b = 0; b < 2; ++b) {
        if (S->ev[b]) {
            cudaEventSynchronize(S->ev[b]); /* a copy still in flight on the buffer (an error path) */
            cudaEventDestroy(S->ev[b]);
        }
        if (S->buf[b]) cudaFreeHost(S->buf[b]);
        S->buf[b] = NULL;
        S->ev[b] = NULL;
    }
    S->chunk = 0;
}

/** Buffers of at least `chunk` bytes. 0; or -1 with the reason in S->pageable (nothing allocated:
 *  the transfer goes pageable). Errors of the allocation are cleared (not sticky). */
static int dstage_ensure(dstage_t *S, size_t chunk)
{
    if (S->chunk >= chunk) return 0;
    dstage_destroy(S);
    cudaError_t e = cudaSuccess;
    for (int b = 0; b < 2 && e == cudaSuccess; ++b) {
        e = cudaHostAlloc(&S->buf[b], chunk, cudaHostAllocDefault);
        if (e == cudaSuccess) e = cudaEventCreateWithFlags(&S->ev[b], cudaEventDisableTiming);
    }
    if (e != cudaSuccess) {
        snprintf(S->pageable, sizeof S->pageable, "pinned staging of 2 x %.0f MiB unavailable: %s",
                 chunk / 1048576.0, cudaGetErrorString(e));
        cudaGetLastError(); /* an allocation failure is not sticky: do not let a later check see it */
        dstage_destroy(S);
        return -1;
    }
    S->chunk = chunk;
    return 0;
}

/* One contiguous run of bytes between a host array and a device array. */
typedef struct {
    char *host, *dev;
    size_t bytes;
} dseg_t;

#define SEG_TILES 1  /* the tile arrays */
#define SEG_FIELDS 2 /* the fields */
/** The segments of tiles [a, a + n) of every tile array (SEG_TILES in what) and field (SEG_FIELDS)
 *  of host mesh h and device store D. */
static int tile_segments(const mesh_t *h, const dmesh_t *D, size_t a, size_t n, size_t cells, dseg_t *seg,
                         int what = SEG_TILES | SEG_FIELDS)
{
    int k = 0;
#define DP_SEG_ARRAY(name, type, per)                                                                     \
    seg[k].host = (char *)(h->name + a * (per));                                                          \
    seg[k].dev = (char *)(D->name + a * (per));                                                           \
    seg[k++].bytes = n * (per) * sizeof(type);
    if (what & SEG_TILES) {
        DP_TILE_ARRAYS(DP_SEG_ARRAY)
    }
#undef DP_SEG_ARRAY
    for (int f = 0; (what & SEG_FIELDS) && f < h->nf; ++f) {
        seg[k].host = (char *)(h->field[f] + a * cells);
        seg[k].dev = (char *)(D->field[f] + a * cells);
        seg[k++].bytes = n * cells * sizeof(float);
    }
    return k;
}

/* The chunks of a segment list, in order: chunk i is bytes [off, off + len) of segment seg. */
typedef struct {
    const dseg_t *seg;
    int nseg;
    size_t chunk;
    int s;      /* the segment of the next chunk */
    size_t off; /* its offset there */
} dchunks_t;

/** The next chunk (host, dev, len); 0 when there is none. */
static int next_chunk(dchunks_t *it, char **host, char **dev, size_t *len)
{
    while (it->s < it->nseg && it->off >= it->seg[it->s].bytes) {
        ++it->s;
        it->off = 0;
    }
    if (it->s >= it->nseg) return 0;
    const dseg_t *g = &it->seg[it->s];
    *len = g->bytes - it->off < it->chunk ? g->bytes - it->off : it->chunk;
    *host = g->host + it->off;
    *dev = g->dev + it->off;
    it->off += *len;
    return 1;
}

/** Move the segments host -> device (to_device) or device -> host, on stream s. Staged when the
 *  total is DSTAGE_DIRECT or more and pinned buffers can be had, else directly. Returns when every
 *  byte has arrived. progress: NULL or a started progress_t (amount: bytes). */
static int dstage_move(dstage_t *S, const dseg_t *seg, int nseg, int to_device, cudaStream_t s, progress_t *pg,
                       char *err, size_t errlen)
{
    const cudaMemcpyKind kind = to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
    size_t total = 0, done = 0;
    for (int i = 0; i < nseg; ++i) total += seg[i].bytes;
    S->pageable[0] = '\0';
    /* chunks of at most 64 MiB, at least 8 of them on a smaller transfer (so that copies overlap);
     * DPAMR_TEST_STAGE_CHUNK=BYTES (tests) stages every transfer in chunks of that many bytes */
    size_t chunk = (total / 8 + 4095) & ~(size_t)4095;
    chunk = chunk > DSTAGE_CHUNK ? DSTAGE_CHUNK : chunk;
    const char *hook = getenv("DPAMR_TEST_STAGE_CHUNK");
    const long long forced = hook ? atoll(hook) : 0;
    if (forced > 0) chunk = (size_t)forced;
    if (total == 0 || (forced <= 0 && total < DSTAGE_DIRECT) || dstage_ensure(S, chunk) != 0) {
        for (int i = 0; i < nseg; ++i)
            if (seg[i].bytes) {
                CK(cudaMemcpyAsync(to_device ? seg[i].dev : seg[i].host, to_device ? seg[i].host : seg[i].dev,
                                   seg[i].bytes, kind, s));
            }
        CK(cudaStreamSynchronize(s));
        if (pg) progress_update(pg, (double)total);
        return 0;
    }
    chunk = forced > 0 ? (size_t)forced : S->chunk; /* buffers may be larger than a forced chunk */
    {
        dchunks_t it = { seg, nseg, chunk, 0, 0 };
        char *host[2] = { NULL, NULL }, *dev[2] = { NULL, NULL };
        size_t len[2] = { 0, 0 };
        if (to_device) {
            /* chunk i: the host fills buffer i % 2 (once the copy of chunk i - 2 out of it is done),
             * then the device copies it out while the host fills the other one */
            for (long long i = 0;; ++i) {
                const int b = (int)(i & 1);
                if (!next_chunk(&it, &host[b], &dev[b], &len[b])) break;
                if (i >= 2) CK(cudaEventSynchronize(S->ev[b]));
                xfer_copy(S->buf[b], host[b], len[b]);
                CK(cudaMemcpyAsync(dev[b], S->buf[b], len[b], kind, s));
                CK(cudaEventRecord(S->ev[b], s));
                done += len[b];
                if (pg) progress_update(pg, (double)done);
            }
            CK(cudaStreamSynchronize(s));
        } else {
            /* the device copies chunks i and i + 1 into the two buffers; the host takes chunk i out
             * of buffer i % 2 once its event has passed, then the device refills that buffer with
             * chunk i + 2 while the host takes chunk i + 1 */
            int have[2] = { 0, 0 };
            for (int b = 0; b < 2; ++b) {
                have[b] = next_chunk(&it, &host[b], &dev[b], &len[b]);
                if (!have[b]) break;
                CK(cudaMemcpyAsync(S->buf[b], dev[b], len[b], kind, s));
                CK(cudaEventRecord(S->ev[b], s));
            }
            for (int b = 0; have[b]; b ^= 1) {
                CK(cudaEventSynchronize(S->ev[b]));
                xfer_copy(host[b], S->buf[b], len[b]);
                done += len[b];
                if (pg) progress_update(pg, (double)done);
                have[b] = next_chunk(&it, &host[b], &dev[b], &len[b]);
                if (have[b]) {
                    CK(cudaMemcpyAsync(S->buf[b], dev[b], len[b], kind, s));
                    CK(cudaEventRecord(S->ev[b], s));
                }
            }
            CK(cudaStreamSynchronize(s));
        }
    }
    return 0;
fail:
    cudaStreamSynchronize(s); /* nothing may still read or write a buffer when the caller frees it */
    return -1;
}

/* ---- the store ----------------------------------------------------------------------------------- */

void dmesh_destroy(dmesh_t *M)
{
#define FREE_ARRAY(name, type, n) cudaFree(M->name);
    DP_TILE_ARRAYS(FREE_ARRAY)
#undef FREE_ARRAY
    for (int f = 0; f < DP_MAX_FIELDS; ++f) cudaFree(M->field[f]);
    cudaFree(M->stats);
    cudaFree(M->stamps);
    dmesh_zero(M);
}

cudaError_t dmesh_alloc_arrays(dmesh_t *M, size_t n, int nf, size_t cells)
{
    cudaError_t e = cudaSuccess;
#define ALLOC_ARRAY(name, type, per) \
    if (e == cudaSuccess) e = cudaMalloc((void **)&M->name, n * (per) * sizeof(type));
    DP_TILE_ARRAYS(ALLOC_ARRAY)
#undef ALLOC_ARRAY
    for (int f = 0; f < nf && e == cudaSuccess; ++f) e = cudaMalloc((void **)&M->field[f], n * cells * sizeof(float));
    return e;
}

int dmesh_create(dmesh_t *M, const mesh_t *m, long long cap, int timeline_slots, dstage_t *S, int progress,
                 cudaStream_t s, char *err, size_t errlen)
{
    const size_t n = (size_t)cap, cells = (size_t)mesh_cells(m), nt = (size_t)m->ntiles;
    dseg_t seg[DP_MAX_FIELDS + 8];
    dmesh_zero(M);
    M->cap = cap;
    const double need = mesh_bytes((double)n, m->dim, m->B, m->nf);
    size_t fr = 0, tot = 0;
    CK(gpu_free_memory(&fr, &tot));
    if (need > (double)fr) { /* gpu_capacity checked the run's need; this is the last guard */
        snprintf(err, errlen,
                 "the device lacks memory for the tile store: %lld tiles need %.3f GiB, %.3f GiB free of %.3f GiB "
                 "(lower max_tiles or max_level)",
                 cap, need / CAP_GIB, fr / CAP_GIB, tot / CAP_GIB);
        return -1;
    }
    CK(dmesh_alloc_arrays(M, n, m->nf, cells));
    CK(cudaMalloc((void **)&M->stats, ST_COUNT * sizeof(unsigned long long)));
    CK(cudaMemsetAsync(M->stats, 0, ST_COUNT * sizeof(unsigned long long), s));
    if (timeline_slots > 0) {
        CK(cudaMalloc((void **)&M->stamps, 2 * (size_t)timeline_slots * sizeof(unsigned long long)));
        /* start = max (0xff..), end = 0: every slot's min/max fold starts empty */
        CK(cudaMemsetAsync(M->stamps, 0xff, 2 * (size_t)timeline_slots * sizeof(unsigned long long), s));
        for (int i = 0; i < timeline_slots; ++i)
            CK(cudaMemsetAsync(M->stamps + 2 * i + 1, 0, sizeof(unsigned long long), s));
    }
    {
        progress_t pg;
        progress_begin(&pg, progress, "upload", mesh_bytes((double)nt, m->dim, m->B, m->nf), NULL);
        const int rc = dstage_move(S, seg, tile_segments(m, M, 0, nt, cells, seg), 1, s, &pg, err, errlen);
        if (rc == 0) progress_end(&pg);
        else progress_fail(&pg);
        if (rc != 0) goto fail;
    }
    {
        const unsigned long long n0 = (unsigned long long)m->ntiles;
        CK(cudaMemcpyAsync(M->stats + ST_NTILES, &n0, sizeof n0, cudaMemcpyHostToDevice, s));
        CK(cudaStreamSynchronize(s)); /* n0 lives on this stack frame */
    }
    return 0;
fail:
    cudaStreamSynchronize(s); /* nothing in flight may use what is freed */
    dmesh_destroy(M);
    return -1;
}

/* ---- the streamed write (gpu_stream_set) -------------------------------------------------------- */

static gpu_stream_t *g_stream = NULL; /* the registration for the refinement running now */

extern "C" void gpu_stream_set(gpu_stream_t *st) { g_stream = st; }

/** The source of a streamed write: the pieces of the plan come from the store's fields into the two
 *  pinned buffers of S, piece j into buffer j % 2, each copy followed by its buffer's event on
 *  stream s. Piece j + 1 is copied while the writer writes piece j from the other buffer. */
typedef struct {
    xfer_src_t src;
    const dmesh_t *M;
    dstage_t *S;
    cudaStream_t s;
    size_t cells;
    xfer_plan_t ahead;        /* the plan, walked as far as the pieces issued */
    xfer_piece_t q[2];        /* the piece issued into each buffer */
    long long issued, taken;  /* pieces whose copy was issued; pieces given to the writer */
} dring_t;

/** Issue the copies of the next pieces while a buffer is free: at most two pieces ahead of those
 *  taken (the piece taken last, taken - 1, is being written from its buffer until the next get, so
 *  the copy into that buffer, piece taken + 1, is issued by the next get). 0, or -1 with err. */
static int dring_issue(dring_t *R, char *err, size_t errlen)
{
    xfer_piece_t q;
    while (R->issued < R->taken + 2 && xfer_plan_next(&R->ahead, &q)) {
        const int b = (int)(R->issued & 1);
        const size_t bytes = (size_t)q.ntiles * R->cells * sizeof(float);
        if (bytes > R->S->chunk) {
            snprintf(err, errlen, "internal error: a piece of %zu bytes for a pinned buffer of %zu", bytes, R->S->chunk);
            return -1;
        }
        CK(cudaMemcpyAsync(R->S->buf[b], R->M->field[q.field] + (size_t)q.tile * R->cells, bytes,
                           cudaMemcpyDeviceToHost, R->s));
        CK(cudaEventRecord(R->S->ev[b], R->s));
        R->q[b] = q;
        ++R->issued;
    }
    return 0;
fail:
    return -1;
}

static const float *dring_get(xfer_src_t *src, int f, int64_t t, int64_t n, char *err, size_t errlen)
{
    dring_t *R = (dring_t *)src->ctx;
    /* the writer is done with the piece taken last: its buffer takes the copy two pieces ahead */
    if (dring_issue(R, err, errlen) != 0) return NULL;
    if (R->taken >= R->issued) {
        snprintf(err, errlen, "internal error: the writer asked for field %d, tiles %lld+%lld past the plan's end", f,
                 (long long)t, (long long)n);
        return NULL;
    }
    const int b = (int)(R->taken & 1);
    const xfer_piece_t *q = &R->q[b];
    if (q->field != f || q->tile != t || q->ntiles != n) {
        snprintf(err, errlen, "internal error: the writer asked for field %d, tiles %lld+%lld; the plan's next piece is "
                 "field %d, tiles %lld+%lld", f, (long long)t, (long long)n, q->field, (long long)q->tile,
                 (long long)q->ntiles);
        return NULL;
    }
    CK(cudaEventSynchronize(R->S->ev[b]));
    ++R->taken;
    return (const float *)R->S->buf[b];
fail:
    return NULL;
}

/** dmesh_download with a registered stream (gpu_stream_t in gpu.h): 0 or -1 with err as
 *  dmesh_download; 1 when it did not stream (no pinned buffers: the caller downloads as before). */
static int dmesh_stream(const dmesh_t *M, mesh_t *m, long long from, long long ntiles, dstage_t *S, int progress,
                        cudaStream_t s, double *ms, char *err, size_t errlen)
{
    gpu_stream_t *st = g_stream;
    const double t0 = timer_ms();
    const size_t cells = (size_t)mesh_cells(m), a = (size_t)from, n = (size_t)(ntiles - from);
    dseg_t seg[DP_MAX_FIELDS + 8];
    /* pieces of at most one staging buffer (64 MiB; DPAMR_TEST_STAGE_CHUNK=BYTES, tests: that many) */
    const char *hook = getenv("DPAMR_TEST_STAGE_CHUNK");
    const long long forced = hook ? atoll(hook) : 0;
    const size_t want = forced > 0 ? (size_t)forced : DSTAGE_CHUNK;
    const size_t piece = (size_t)xfer_tiles_per_piece(want, cells) * cells * sizeof(float);
    if (dstage_ensure(S, piece) != 0) return 1; /* S->pageable says why; the download warns */
    char verr[256];
    dring_t R;
    memset(&R, 0, sizeof R);
    if (mesh_drop_fields(m, ntiles) != 0) {
        snprintf(err, errlen, "out of host memory for the tile arrays of %lld tiles", ntiles);
        return -1;
    }
    /* the GPU validator (when a run asked for it) reads the store on its own stream meanwhile */
    if (valid_gpu_start(M, ntiles, s, err, errlen) != 0) return -1;
    if (dstage_move(S, seg, tile_segments(m, M, a, n, cells, seg, SEG_TILES), 0, s, NULL, err, errlen) != 0) {
        valid_gpu_finish(verr, sizeof verr); /* the download's error is the one to report */
        return -1;
    }
    m->ntiles = ntiles;
    mesh_index_levels(m);
    R.src.get = dring_get;
    R.src.piece = piece;
    R.src.ctx = &R;
    R.M = M;
    R.S = S;
    R.s = s;
    R.cells = cells;
    xfer_plan_init(&R.ahead, m->nlevels, m->level_start, m->nf, cells, piece);
    st->used = 1;
    {
        nvtxRangePushA("stream");
        int rc = dring_issue(&R, err, errlen); /* the first two pieces come down while the file is made */
        if (rc == 0) rc = st->write(st->ctx, m, &R.src, err, errlen);
        nvtxRangePop();
        /* no copy may still be writing into a buffer when it is refilled or freed */
        const cudaError_t e = cudaStreamSynchronize(s);
        if (rc == 0 && e != cudaSuccess) {
            snprintf(err, errlen, "CUDA error in cudaStreamSynchronize (the streamed download): %s", cudaGetErrorString(e));
            rc = -1;
        }
        xfer_piece_t q;
        if (rc == 0 && (R.taken != R.issued || xfer_plan_next(&R.ahead, &q))) {
            snprintf(err, errlen, "internal error: the writer took %lld pieces of the streamed cells, %lld were issued, "
                     "the plan has more: %d", R.taken, R.issued, (int)(R.taken == R.issued));
            rc = -1;
        }
        if (rc != 0) {
            valid_gpu_finish(verr, sizeof verr);
            return -1;
        }
    }
    *ms = timer_ms() - t0;
    if (valid_gpu_finish(err, errlen) != 0) return -1;
    if (st->need_cells && st->need_cells(st->ctx, m)) {
        /* the CPU validator makes the report (the device found a failure, or did not validate): it
         * needs every cell on the host after all */
        if (mesh_fields_alloc(m) != 0) {
            snprintf(err, errlen, "out of host memory for the cells the CPU validator needs: %lld tiles need %.2f GiB, "
                     "the host has %.2f GiB available", ntiles, mesh_bytes((double)ntiles, m->dim, m->B, m->nf) / CAP_GIB,
                     cap_host_available() / CAP_GIB);
            return -1;
        }
        progress_t pg;
        progress_begin(&pg, progress, "download", (double)ntiles * (double)cells * sizeof(float) * m->nf, NULL);
        const int rc = dstage_move(S, seg, tile_segments(m, M, 0, (size_t)ntiles, cells, seg, SEG_FIELDS), 0, s, &pg,
                                   err, errlen);
        if (rc == 0) progress_end(&pg);
        else progress_fail(&pg);
        if (rc != 0) return -1;
    }
    return 0;
}

int dmesh_download(const dmesh_t *M, mesh_t *m, long long from, long long ntiles, dstage_t *S, int progress,
                   cudaStream_t s, double *ms, char *err, size_t errlen)
{
    if (g_stream && g_stream->write) {
        const int k = dmesh_stream(M, m, from, ntiles, S, progress, s, ms, err, errlen);
        if (k <= 0) return k; /* else no pinned buffers: not streamed, and the download below says so */
    }
    const double t0 = timer_ms();
    const size_t cells = (size_t)mesh_cells(m), a = (size_t)from, n = (size_t)(ntiles - from);
    dseg_t seg[DP_MAX_FIELDS + 8];
    if (mesh_reserve_unset(m, ntiles) != 0) { /* every tile from m->ntiles >= from on is written below */
        snprintf(err, errlen, "out of host memory for the download: %lld tiles need %.2f GiB, the host has %.2f GiB "
                 "available", ntiles, mesh_bytes((double)ntiles, m->dim, m->B, m->nf) / CAP_GIB,
                 cap_host_available() / CAP_GIB);
        return -1;
    }
    /* the GPU validator (when a run asked for it) reads the store on its own stream meanwhile */
    if (valid_gpu_start(M, ntiles, s, err, errlen) != 0) return -1;
    const int nseg = tile_segments(m, M, a, n, cells, seg);
    progress_t pg;
    progress_begin(&pg, progress, "download", mesh_bytes((double)n, m->dim, m->B, m->nf), NULL);
    nvtxRangePushA("download");
    const int rc = dstage_move(S, seg, nseg, 0, s, &pg, err, errlen);
    nvtxRangePop();
    if (rc == 0) progress_end(&pg);
    else progress_fail(&pg);
    if (rc != 0) {
        char verr[256];
        valid_gpu_finish(verr, sizeof verr); /* the download's error is the one to report */
        return -1;
    }
    m->ntiles = ntiles;
    mesh_index_levels(m);
    *ms = timer_ms() - t0;
    if (valid_gpu_finish(err, errlen) != 0) return -1;
    if (S->pageable[0]) {
        fflush(stdout);
        fprintf(stderr, "dpamr: warning: %s: the download went through pageable memory (slower)\n", S->pageable);
    }
    return 0;
}
