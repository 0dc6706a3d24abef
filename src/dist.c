/* dist.c - `dpamr run` under MPI (built with -DDPAMR_MPI=ON).
 *
 * Rank 0 reads the mesh file, weighs every root tile (src/partition.c), splits the roots into
 * contiguous Morton ranges and sends each rank its roots with their subtrees. Every rank refines its
 * part with the deck's variant on its own GPU (node-local rank modulo the visible devices) or the
 * CPU, validates it, and the chunk checksums are folded on rank 0 in root order, so the report does
 * not depend on the rank count. The file is written collectively with parallel HDF5 when the library
 * has it (each rank writes its rows of every per-tile dataset), else the parts are gathered to rank 0,
 * placed level by level into the canonical order and written there; either way through a temporary
 * name renamed at the end. The datasets are the single-rank run's, byte for byte.
 *
 * Failure: every step that can fail on one rank ends in dp_agree() (src/agree.c), a collective
 * that every rank reaches; when any rank failed, all of them stop with the message of the lowest
 * failing rank and no file is written. No rank waits on a message from a rank that has stopped:
 * point-to-point transfers are preceded by a handshake (scatter) or by dp_agree() (gather); the
 * collective write allocates and checks everything before the file is created. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "io/h5io.h"
#include "validation/valid.h"
#include "src/agree.h"
#include "src/build.h"
#include "src/deck.h"
#include "src/dist.h"
#include "src/engine.h"
#include "src/mesh.h"
#include "src/partition.h"
#include "src/run.h"
#include "src/steps.h"
#include "src/capacity.h"
#include "src/tile.h"
#include "src/timer.h"

typedef struct {
    MPI_Comm comm;
    int rank, size;
    int local, local_size; /* rank and size on this node */
} dctx;

enum { TAG_HEAD = 1, TAG_ACK, TAG_DATA };

/* Largest single MPI message (MPI counts are int): larger buffers go in pieces. */
#define DIST_PIECE ((size_t)1 << 30)

static void xsend(const void *buf, size_t bytes, int dest, MPI_Comm comm)
{
    const char *p = buf;
    for (size_t off = 0; off < bytes; off += DIST_PIECE) {
        const size_t k = bytes - off < DIST_PIECE ? bytes - off : DIST_PIECE;
        MPI_Send(p + off, (int)k, MPI_BYTE, dest, TAG_DATA, comm);
    }
}

static void xrecv(void *buf, size_t bytes, int src, MPI_Comm comm)
{
    char *p = buf;
    for (size_t off = 0; off < bytes; off += DIST_PIECE) {
        const size_t k = bytes - off < DIST_PIECE ? bytes - off : DIST_PIECE;
        MPI_Recv(p + off, (int)k, MPI_BYTE, src, TAG_DATA, comm, MPI_STATUS_IGNORE);
    }
}

/* The arrays of tiles [s, s + k) of m: what a part transfer moves. parent is sent as stored. */
static void send_tiles(const mesh_t *m, const int64_t *parent, dp_tidx s, dp_tidx k, int dest, MPI_Comm comm)
{
    const size_t n = (size_t)k, cells = (size_t)mesh_cells(m);
    xsend(m->level + s, n * sizeof *m->level, dest, comm);
    xsend(m->coord + 3 * s, 3 * n * sizeof *m->coord, dest, comm);
    xsend(m->key + s, n * sizeof *m->key, dest, comm);
    xsend(parent, n * sizeof *parent, dest, comm);
    xsend(m->childmask + s, n, dest, comm);
    for (int f = 0; f < m->nf; ++f) xsend(m->field[f] + (size_t)s * cells, n * cells * sizeof(float), dest, comm);
}

static void recv_tiles(mesh_t *m, dp_tidx s, dp_tidx k, int src, MPI_Comm comm)
{
    const size_t n = (size_t)k, cells = (size_t)mesh_cells(m);
    xrecv(m->level + s, n * sizeof *m->level, src, comm);
    xrecv(m->coord + 3 * s, 3 * n * sizeof *m->coord, src, comm);
    xrecv(m->key + s, n * sizeof *m->key, src, comm);
    xrecv(m->parent + s, n * sizeof *m->parent, src, comm);
    xrecv(m->childmask + s, n, src, comm);
    for (int f = 0; f < m->nf; ++f) xrecv(m->field[f] + (size_t)s * cells, n * cells * sizeof(float), src, comm);
}

/* Rank 0: read the mesh, split the roots, keep part 0, send the others. Other ranks: receive.
 * first[] (size + 1 entries) gets the root ranges on every rank. */
static int scatter_parts(const dctx *c, const deck_t *d, mesh_t *part, dp_tidx *first, char *err, size_t n)
{
    mesh_t m;
    memset(&m, 0, sizeof m);
    memset(part, 0, sizeof *part);
    int ok = 1;
    if (c->rank == 0) {
        ok = run_read_mesh(d, &m, err, n) == 0;
        if (ok && m.ntiles == 0) ok = (snprintf(err, n, "%.1000s holds no tiles", d->mesh_file), 0);
    }
    if (dp_agree(c->comm, ok, err, n) != 0) return -1;

    if (c->rank == 0) {
        const dp_tidx nroots = m.level_start[1];
        int64_t *w = malloc((size_t)nroots * sizeof *w);
        if (!w) ok = (snprintf(err, n, "out of memory for %lld root weights", (long long)nroots), 0);
        else {
            part_weights(&d->p, &m, w);
            part_split(w, nroots, c->size, first);
            free(w);
        }
    }
    if (dp_agree(c->comm, ok, err, n) != 0) {
        mesh_free(&m);
        return -1;
    }
    MPI_Bcast(first, (c->size + 1) * (int)sizeof *first, MPI_BYTE, 0, c->comm);

    if (c->rank == 0) {
        for (int r = c->size - 1; r >= 0; --r) { /* part 0 last: it is the one kept */
            dp_tidx lo[DP_MAX_LEVELS], hi[DP_MAX_LEVELS];
            part_ranges(&m, first[r], first[r + 1], lo, hi);
            mesh_t p;
            int have = part_extract(&m, lo, hi, &p) == 0;
            if (!have) ok = (snprintf(err, n, "out of memory extracting the part of rank %d", r), 0);
            if (r == 0) {
                if (have) *part = p;
                break;
            }
            /* header: the mesh header (pointers meaningless there) with ntiles = -1 on failure */
            mesh_t head = have ? p : m;
            if (!have) head.ntiles = -1;
            MPI_Send(&head, (int)sizeof head, MPI_BYTE, r, TAG_HEAD, c->comm);
            if (!have) continue;
            int ack = 0;
            MPI_Recv(&ack, 1, MPI_INT, r, TAG_ACK, c->comm, MPI_STATUS_IGNORE);
            if (ack) send_tiles(&p, p.parent, 0, p.ntiles, r, c->comm);
            mesh_free(&p);
        }
    } else {
        mesh_t head;
        MPI_Recv(&head, (int)sizeof head, MPI_BYTE, 0, TAG_HEAD, c->comm, MPI_STATUS_IGNORE);
        if (head.ntiles >= 0) {
            *part = head;
            const dp_tidx k = head.ntiles;
            int ack = mesh_alloc(part, k) == 0;
            if (!ack) ok = (snprintf(err, n, "out of memory for its part of %lld tiles", (long long)k), 0);
            MPI_Send(&ack, 1, MPI_INT, 0, TAG_ACK, c->comm);
            if (ack) {
                recv_tiles(part, 0, k, 0, c->comm);
                part->ntiles = k;
            }
        }
    }
    mesh_free(&m);
    if (dp_agree(c->comm, ok, err, n) != 0) {
        mesh_free(part);
        return -1;
    }
    return 0;
}

/* Level counts of every rank (cnt) -> where each rank's levels go in the canonical order (gstart),
 * the tiles per level, the levels and the tiles of the whole mesh. Collective. */
static void layout(const dctx *c, const mesh_t *part, dp_tidx (*cnt)[DP_MAX_LEVELS], dp_tidx (*gstart)[DP_MAX_LEVELS],
                   dp_tidx *tiles, int *gl, dp_tidx *total)
{
    dp_tidx mycnt[DP_MAX_LEVELS] = { 0 };
    for (int L = 0; L < part->nlevels; ++L) mycnt[L] = part->level_start[L + 1] - part->level_start[L];
    MPI_Allgather(mycnt, (int)sizeof mycnt, MPI_BYTE, cnt, (int)sizeof mycnt, MPI_BYTE, c->comm);
    *gl = 0;
    *total = 0;
    for (int L = 0; L < DP_MAX_LEVELS; ++L) {
        tiles[L] = 0;
        for (int r = 0; r < c->size; ++r) {
            gstart[r][L] = *total;
            *total += cnt[r][L];
            tiles[L] += cnt[r][L];
            if (cnt[r][L] > 0 && L + 1 > *gl) *gl = L + 1;
        }
    }
}

/* Validate the parts; fold the chunk checksums on rank 0 in rank (= root) order; every rank gets
 * the global report. first_failure is the lowest failing rank's. */
static int validate_global(const dctx *c, const dp_params *p, const mesh_t *part, dp_tidx nroots_mine,
                           const dp_tidx *gstart_mine, const dp_tidx *tiles, int gl, const dp_vdev *g, int *by_cpu,
                           valid_report_t *v, char *err, size_t n)
{
    valid_report_t mine;
    valid_parts_t parts;
    const valid_opts_t o = { .complete = 1, .roots = nroots_mine, .gstart = gstart_mine };
    /* from the device's passes over this rank's store when they ran and passed (valid_check_device) */
    valid_check_device(part, p, &o, g, &mine, &parts, by_cpu);

    long long nfail = mine.nfail, total = 0;
    MPI_Allreduce(&nfail, &total, 1, MPI_LONG_LONG, MPI_SUM, c->comm);
    double maxrel = 0.0;
    MPI_Allreduce(&mine.conservation_max_rel, &maxrel, 1, MPI_DOUBLE, MPI_MAX, c->comm);
    /* the first failure a single rank would report: the smallest (phase, global tile) key */
    long long key = mine.nfail ? mine.first_key : VALID_KEY_NONE, kmin = 0;
    MPI_Allreduce(&key, &kmin, 1, MPI_LONG_LONG, MPI_MIN, c->comm);
    int who = mine.nfail && key == kmin ? c->rank : c->size, first = 0;
    MPI_Allreduce(&who, &first, 1, MPI_INT, MPI_MIN, c->comm);

    /* chunks: counts per level, then the chunks, to rank 0 */
    long long nch[DP_MAX_LEVELS] = { 0 }, bytes = 0;
    for (int L = 0; L < parts.nlevels; ++L) {
        nch[L] = parts.n[L];
        bytes += (long long)parts.n[L] * (long long)sizeof(valid_chunk_t);
    }
    int ok = bytes <= INT32_MAX;
    if (!ok) snprintf(err, n, "%lld bytes of checksum chunks on one rank exceed one MPI message", bytes);
    if (dp_agree(c->comm, ok, err, n) != 0) {
        valid_parts_free(&parts);
        return -1;
    }
    char *packed = malloc((size_t)bytes + 1);
    ok = packed != NULL;
    long long *allnch = NULL;
    int *counts = NULL, *displs = NULL;
    char *allpacked = NULL;
    if (c->rank == 0) {
        allnch = malloc((size_t)c->size * DP_MAX_LEVELS * sizeof *allnch);
        counts = malloc((size_t)c->size * sizeof *counts);
        displs = malloc((size_t)c->size * sizeof *displs);
        ok = ok && allnch && counts && displs;
    }
    if (!ok) snprintf(err, n, "out of memory for the checksum chunks");
    if (dp_agree(c->comm, ok, err, n) != 0) {
        free(packed), free(allnch), free(counts), free(displs);
        valid_parts_free(&parts);
        return -1;
    }
    char *at = packed;
    for (int L = 0; L < parts.nlevels; ++L) {
        memcpy(at, parts.chunk[L], (size_t)parts.n[L] * sizeof(valid_chunk_t));
        at += (size_t)parts.n[L] * sizeof(valid_chunk_t);
    }
    MPI_Gather(nch, DP_MAX_LEVELS, MPI_LONG_LONG, allnch, DP_MAX_LEVELS, MPI_LONG_LONG, 0, c->comm);
    int mybytes = (int)bytes;
    MPI_Gather(&mybytes, 1, MPI_INT, counts, 1, MPI_INT, 0, c->comm);
    long long sum = 0;
    if (c->rank == 0) {
        for (int r = 0; r < c->size; ++r) {
            displs[r] = (int)sum;
            sum += counts[r];
        }
        ok = sum <= INT32_MAX && (allpacked = malloc((size_t)sum + 1)) != NULL;
        if (!ok) snprintf(err, n, "%lld bytes of checksum chunks do not fit one gather", sum);
    }
    if (dp_agree(c->comm, ok, err, n) != 0) {
        free(packed), free(allnch), free(counts), free(displs), free(allpacked);
        valid_parts_free(&parts);
        return -1;
    }
    MPI_Gatherv(packed, mybytes, MPI_BYTE, allpacked, counts, displs, MPI_BYTE, 0, c->comm);

    /* rank 0: the global report */
    memset(v, 0, sizeof *v);
    if (c->rank == 0) {
        valid_parts_t all;
        memset(&all, 0, sizeof all);
        all.nlevels = gl;
        all.nf = part->nf;
        for (int L = 0; L < gl; ++L)
            for (int r = 0; r < c->size; ++r) all.n[L] += allnch[r * DP_MAX_LEVELS + L];
        for (int L = 0; L < gl && ok; ++L) {
            all.chunk[L] = malloc(((size_t)all.n[L] + 1) * sizeof(valid_chunk_t));
            ok = all.chunk[L] != NULL;
        }
        if (ok) { /* level L of the fold = level L of rank 0, then rank 1, ... */
            dp_tidx fill[DP_MAX_LEVELS] = { 0 };
            for (int r = 0; r < c->size; ++r) {
                const char *src = allpacked + displs[r];
                for (int L = 0; L < DP_MAX_LEVELS; ++L) {
                    const size_t k = (size_t)allnch[r * DP_MAX_LEVELS + L];
                    if (k && L < gl) memcpy(all.chunk[L] + fill[L], src, k * sizeof(valid_chunk_t));
                    fill[L] += (dp_tidx)k;
                    src += k * sizeof(valid_chunk_t);
                }
            }
            v->nlevels = gl;
            v->nf = part->nf;
            valid_fold(&all, p, v);
        } else {
            snprintf(err, n, "out of memory folding the checksum chunks");
        }
        valid_parts_free(&all);
    }
    free(packed), free(allnch), free(counts), free(displs), free(allpacked);
    valid_parts_free(&parts);
    if (dp_agree(c->comm, ok, err, n) != 0) return -1;
    MPI_Bcast(v, (int)sizeof *v, MPI_BYTE, 0, c->comm);

    v->nfail = total;
    v->passed = total == 0;
    v->conservation_checked = mine.conservation_checked;
    v->conservation_tol = mine.conservation_tol;
    v->conservation_max_rel = maxrel;
    v->nlevels = gl;
    v->nf = part->nf;
    for (int L = 0; L < gl; ++L) v->tiles[L] = tiles[L];
    if (first < c->size) {
        char msg[sizeof v->first_failure];
        if (c->rank == first) snprintf(msg, sizeof msg, "%s", mine.first_failure);
        MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, first, c->comm);
        /* the single-rank message: tile indices in it are global */
        snprintf(v->first_failure, sizeof v->first_failure, "%s", msg);
        v->first_key = kmin;
    } else {
        v->first_key = VALID_KEY_NONE;
    }
    return 0;
}

/* The part's parents as global indices: level L-1 of this rank starts at gstart_mine[L-1]. */
static void global_parents(const mesh_t *part, const dp_tidx *gstart_mine, int64_t *pbuf)
{
    for (int L = 0; L < part->nlevels; ++L) {
        const dp_tidx s = part->level_start[L], k = part->level_start[L + 1] - s;
        for (dp_tidx i = 0; i < k; ++i) {
            const int64_t q = part->parent[s + i];
            pbuf[s + i] = L == 0 || q < 0 ? q : q - part->level_start[L - 1] + gstart_mine[L - 1];
        }
    }
}

/* Longest final path component a collective write takes: Open MPI's shared-file-pointer component
 * (sharedfp/sm) makes a file named after the one opened (NAME.tmp.PID, DP_TMP_SUFFIX_MAX more) with
 * "_cid-C-PID.sm" (up to 29 more) in its session folder, at file open even when no shared pointer
 * is used; past NAME_MAX (255) the open fails, a little beyond it the library aborts (a fixed
 * buffer). 255 - 15 - 29. */
#define DIST_COLLECTIVE_NAME_MAX 211

static size_t name_part_len(const char *path)
{
    const char *s = strrchr(path, '/');
    return strlen(s ? s + 1 : path);
}

/* Is name written collectively: mpi_write = collective, or auto with a parallel HDF5 and a name
 * short enough (DIST_COLLECTIVE_NAME_MAX; a longer one is gathered to rank 0). The same on every
 * rank. */
static int dist_collective(const deck_t *d, const char *name)
{
    if (d->mpi_write == DP_MPI_WRITE_COLLECTIVE) return 1;
    return d->mpi_write == DP_MPI_WRITE_AUTO && h5io_parallel() && name_part_len(name) <= DIST_COLLECTIVE_NAME_MAX;
}

/* mpi_write = collective with a name longer than a collective write takes: the message, -1. */
static int dist_name_check(const deck_t *d, const char *name, char *err, size_t n)
{
    if (d->mpi_write != DP_MPI_WRITE_COLLECTIVE || name_part_len(name) <= DIST_COLLECTIVE_NAME_MAX) return 0;
    return snprintf(err, n, "%.1000s: mpi_write = collective and the file name '%.300s' has %zu characters: a collective "
                    "write takes at most %d (Open MPI names a file of its own after it); shorten it, or set "
                    "mpi_write = gather or auto (auto gathers a longer name to rank 0)",
                    d->path, name, name_part_len(name), DIST_COLLECTIVE_NAME_MAX), -1;
}

/* Write the file name: collectively with parallel HDF5 when the library has it (every rank writes its
 * rows), else gather the parts into one mesh on rank 0 (placed level by level) and write it there.
 * rows (the per-rank table) must be filled on every rank except write_ms, which is measured here. */
static int write_output(const dctx *c, const deck_t *d, const char *name, const mesh_t *part,
                        dp_tidx (*gstart)[DP_MAX_LEVELS],
                        const dp_tidx (*cnt)[DP_MAX_LEVELS], int gl, dp_tidx total, h5io_meta_t *meta,
                        h5io_rank_t *rows, h5io_rank_t *myrow, double *write_ms, char *err, size_t n)
{
    const double t0 = timer_ms();
    int64_t *pbuf = malloc(((size_t)part->ntiles + 1) * sizeof *pbuf);
    mesh_t g;
    memset(&g, 0, sizeof g);
    int ok = pbuf != NULL;
    if (!ok) snprintf(err, n, "out of memory for its %lld parent links", (long long)part->ntiles);
    const int collective = dist_collective(d, name);
    if (ok && dist_name_check(d, name, err, n) != 0) ok = 0; /* the same on every rank */
    if (ok && !collective && c->rank == 0) {
        g = *part;
        ok = mesh_alloc(&g, total) == 0;
        if (!ok) snprintf(err, n, "out of memory gathering %lld tiles on rank 0 for the write", (long long)total);
    }
    if (dp_agree(c->comm, ok, err, n) != 0) {
        mesh_free(&g);
        free(pbuf);
        return -1;
    }
    global_parents(part, gstart[c->rank], pbuf);
    if (collective) {
        h5io_dist_t dist = { .comm = &c->comm, .nlevels = gl, .parent = pbuf };
        for (int L = 0; L <= gl; ++L) dist.level_start[L] = L < gl ? gstart[0][L] : total;
        for (int L = 0; L < gl; ++L) dist.offset[L] = gstart[c->rank][L] - gstart[0][L];
        /* the table goes into the file from every rank: the same on all of them */
        myrow->write_ms = timer_ms() - t0;
        MPI_Allgather(myrow, (int)sizeof *myrow, MPI_BYTE, rows, (int)sizeof *myrow, MPI_BYTE, c->comm);
        meta->nranks = c->size;
        meta->ranks = rows;
        const int rc = h5io_write_dist(name, part, &dist, meta, err, n); /* agreed inside */
        free(pbuf);
        *write_ms = timer_ms() - t0;
        return rc;
    }
    if (c->rank == 0) {
        part_place(&g, part, gstart[0]);
        for (int r = 1; r < c->size; ++r)
            for (int L = 0; L < gl; ++L)
                if (cnt[r][L] > 0) recv_tiles(&g, gstart[r][L], cnt[r][L], r, c->comm);
        g.ntiles = total;
        mesh_index_levels(&g);
    } else {
        /* parents renumbered to the global canonical order before they leave */
        for (int L = 0; L < part->nlevels; ++L) {
            const dp_tidx s = part->level_start[L], k = part->level_start[L + 1] - s;
            if (k > 0) send_tiles(part, pbuf + s, s, k, 0, c->comm);
        }
    }
    free(pbuf);
    myrow->write_ms = timer_ms() - t0;
    MPI_Gather(myrow, (int)sizeof *myrow, MPI_BYTE, rows, (int)sizeof *myrow, MPI_BYTE, 0, c->comm);
    if (c->rank == 0) {
        meta->nranks = c->size;
        meta->ranks = rows;
        ok = h5io_write(name, &g, meta, err, n) == 0;
        mesh_free(&g);
    }
    *write_ms = timer_ms() - t0;
    return dp_agree(c->comm, ok, err, n);
}

/* ---- time steps on several ranks: the hooks of the step loop (steps_ops_t, src/steps.c) ----
 * Each rank regrids its part of the roots on its own: a regrid is local to a root's subtree (the
 * criterion reads a tile's own cells, prolongation and restriction pass between a tile and its
 * parent; balance = 2:1, which is not, is refused with more than one rank). What crosses ranks is
 * what a single build has: the validation's fold, the file, and the per-step counts and totals. */
typedef struct {
    const dctx *c;
    dp_tidx myroots;
    int in_levels; /* the loaded mesh's levels, all ranks: where the first build's frontier is */
    dp_tidx (*cnt)[DP_MAX_LEVELS], (*gstart)[DP_MAX_LEVELS];
    dp_tidx tiles[DP_MAX_LEVELS], total;
    int gl;
    h5io_rank_t *rows;
    double *sums;   /* [size][4 * DP_MAX_FIELDS]: every rank's totals after a regrid */
    double mine_ms; /* this rank's own time of the last build or regrid (its row in the rank table) */
} dsteps_t;

static int dsteps_agree(void *ctx, int ok, char *err, size_t n)
{
    const dsteps_t *s = ctx;
    return dp_agree(s->c->comm, ok, err, n);
}

static void dsteps_count(void *ctx, const mesh_t *m, long long *ntiles, int *nlevels)
{
    const dsteps_t *s = ctx;
    long long t = m->ntiles;
    int l = m->nlevels;
    MPI_Allreduce(&t, ntiles, 1, MPI_LONG_LONG, MPI_SUM, s->c->comm);
    MPI_Allreduce(&l, nlevels, 1, MPI_INT, MPI_MAX, s->c->comm);
}

static int dsteps_build(void *ctx, int variant, const deck_t *d, mesh_t *m, refine_report_t *r, char *err, size_t n)
{
    dsteps_t *s = ctx;
    memset(r, 0, sizeof *r);
    r->device_launches = r->launch_failures = r->pool_size = -1;
    /* a part with nothing on the frontier has nothing to refine (as dist_run) */
    const int rc = part_has_frontier(m, s->in_levels) ? engine_refine(variant, d, m, r, err, n) : 0;
    /* the step's time is the slowest rank's (every rank gets here, failed or not: the loop agrees next);
     * the rank table keeps each rank's own */
    s->mine_ms = r->refine_ms;
    MPI_Allreduce(MPI_IN_PLACE, &r->refine_ms, 1, MPI_DOUBLE, MPI_MAX, s->c->comm);
    return rc;
}

/* The whole mesh's report: counts summed, levels and times the largest (the slowest rank), the
 * totals summed in rank order (the same sum for a rank count on every run; it differs from the
 * single-rank sum in the last bits only, far below STEPS_CONS_TOL) and the conservation from them. */
static void dsteps_regridded(void *ctx, const dp_params *p, regrid_report_t *r)
{
    dsteps_t *s = ctx;
    MPI_Comm comm = s->c->comm;
    long long cnt[5] = { r->tiles_before, r->tiles_after, r->added, r->removed, r->kept };
    MPI_Allreduce(MPI_IN_PLACE, cnt, 5, MPI_LONG_LONG, MPI_SUM, comm);
    r->tiles_before = cnt[0], r->tiles_after = cnt[1], r->added = cnt[2], r->removed = cnt[3], r->kept = cnt[4];
    r->changed_fraction = cnt[0] > 0 ? (double)(cnt[2] + cnt[3]) / (double)cnt[0] : 0.0;
    MPI_Allreduce(MPI_IN_PLACE, &r->nlevels, 1, MPI_INT, MPI_MAX, comm);
    /* the times: the slowest rank's regrid and its parts (the largest of each part could come from
     * different ranks and add up to more than the total); the rank table keeps each rank's own */
    s->mine_ms = r->regrid_ms;
    struct {
        double ms;
        int rank;
    } own = { r->regrid_ms, s->c->rank }, slowest;
    MPI_Allreduce(&own, &slowest, 1, MPI_DOUBLE_INT, MPI_MAXLOC, comm);
    double ms[4] = { r->regrid_ms, r->sample_ms, r->restrict_ms, r->rebuild_ms };
    MPI_Bcast(ms, 4, MPI_DOUBLE, slowest.rank, comm);
    r->regrid_ms = ms[0], r->sample_ms = ms[1], r->restrict_ms = ms[2], r->rebuild_ms = ms[3];
    if (!r->conservation_checked) return; /* fill = model: the same on every rank */
    const int nf = p->nf, k = 4 * DP_MAX_FIELDS;
    double mine[4 * DP_MAX_FIELDS];
    memcpy(mine, r->total_before, sizeof r->total_before);
    memcpy(mine + DP_MAX_FIELDS, r->abs_before, sizeof r->abs_before);
    memcpy(mine + 2 * DP_MAX_FIELDS, r->total_after, sizeof r->total_after);
    memcpy(mine + 3 * DP_MAX_FIELDS, r->abs_after, sizeof r->abs_after);
    double sum[4 * DP_MAX_FIELDS] = { 0 };
    MPI_Allgather(mine, k, MPI_DOUBLE, s->sums, k, MPI_DOUBLE, comm);
    for (int q = 0; q < s->c->size; ++q) /* in rank order, not MPI_SUM's order */
        for (int i = 0; i < k; ++i) sum[i] += s->sums[(size_t)q * k + i];
    for (int f = 0; f < nf; ++f) {
        r->total_before[f] = sum[f];
        r->abs_before[f] = sum[DP_MAX_FIELDS + f];
        r->total_after[f] = sum[2 * DP_MAX_FIELDS + f];
        r->abs_after[f] = sum[3 * DP_MAX_FIELDS + f];
    }
    regrid_conservation(p, r->total_before, r->abs_before, r->total_after, r->abs_after, &r->conservation_rel);
}

static int dsteps_validate(void *ctx, const mesh_t *m, const dp_params *pt, valid_report_t *v, char *err, size_t n)
{
    dsteps_t *s = ctx;
    layout(s->c, m, s->cnt, s->gstart, s->tiles, &s->gl, &s->total);
    dp_vdev vd; /* nothing from a device: every rank validates its part on the CPU */
    memset(&vd, 0, sizeof vd);
    int by_cpu = 1;
    return validate_global(s->c, pt, m, s->myroots, s->gstart[s->c->rank], s->tiles, s->gl, &vd, &by_cpu, v, err, n);
}

static int dsteps_write(void *ctx, const deck_t *d, const mesh_t *m, const char *name, h5io_meta_t *meta,
                        double work_ms, char *err, size_t n)
{
    dsteps_t *s = ctx;
    const dctx *c = s->c;
    /* the provenance is stored once: rank 0's times on every rank (a collective write needs the same) */
    double t[7 + DP_MAX_LEVELS] = { meta->load_ms, meta->refine_ms, meta->validate_ms, meta->upload_ms,
                                    meta->download_ms, meta->total_ms, (double)meta->threads };
    memcpy(t + 7, meta->level_ms, sizeof meta->level_ms);
    MPI_Bcast(t, 7 + DP_MAX_LEVELS, MPI_DOUBLE, 0, c->comm);
    meta->load_ms = t[0], meta->refine_ms = t[1], meta->validate_ms = t[2], meta->upload_ms = t[3];
    meta->download_ms = t[4], meta->total_ms = t[5], meta->threads = (int)t[6];
    memcpy(meta->level_ms, t + 7, sizeof meta->level_ms);
    (void)work_ms; /* the slowest rank's, in the provenance; the table has each rank's own */
    h5io_rank_t myrow = { .rank = c->rank, .device = -1, .root_tiles = s->myroots, .tiles = m->ntiles,
                          .cells = (int64_t)m->ntiles * mesh_cells(m), .refine_ms = s->mine_ms };
    double write_ms = 0.0;
    /* the layout of the validation just before (the loop validates every file it writes) */
    return write_output(c, d, name, m, s->gstart, (const dp_tidx(*)[DP_MAX_LEVELS])s->cnt, s->gl, s->total, meta,
                        s->rows, &myrow, &write_ms, err, n);
}

/* Time steps on c->size > 1 ranks from the scattered parts: the step loop over the hooks above. */
static int dist_steps(const dctx *c, deck_t *d, mesh_t *part, const dp_tidx *first, int variant, double t0)
{
    char err[ERRLEN] = "";
    dsteps_t s;
    memset(&s, 0, sizeof s);
    s.c = c;
    s.myroots = first[c->rank + 1] - first[c->rank];
    s.in_levels = part->nlevels;
    MPI_Allreduce(MPI_IN_PLACE, &s.in_levels, 1, MPI_INT, MPI_MAX, c->comm);
    s.cnt = malloc((size_t)c->size * sizeof *s.cnt);
    s.gstart = malloc((size_t)c->size * sizeof *s.gstart);
    s.rows = malloc((size_t)c->size * sizeof *s.rows);
    s.sums = malloc((size_t)c->size * 4 * DP_MAX_FIELDS * sizeof *s.sums);
    snprintf(err, sizeof err, "out of memory for the tables of %d ranks", c->size);
    int rc = 1;
    if (dp_agree(c->comm, s.cnt && s.gstart && s.rows && s.sums, err, sizeof err) != 0) {
        rc = c->rank == 0 ? run_die(err) : 1;
    } else {
        /* the build and machine in the files: rank 0's (host and date differ among ranks) */
        run_info_t ri = *run_info();
        MPI_Bcast(&ri, (int)sizeof ri, MPI_BYTE, 0, c->comm);
        run_info_set(&ri);
        if (c->rank == 0 && d->verbosity != DP_VERBOSITY_QUIET) {
            printf("%d ranks, partition: root tiles along the Morton curve, by work estimate:", c->size);
            for (int r = 0; r < c->size; ++r) printf(" [%lld,%lld)", (long long)first[r], (long long)first[r + 1]);
            printf("; each rank regrids its part\n");
        }
        const steps_ops_t o = { .ctx = &s, .root = c->rank == 0, .agree = dsteps_agree, .count = dsteps_count,
                                .build = dsteps_build, .regridded = dsteps_regridded, .validate = dsteps_validate,
                                .write = dsteps_write };
        rc = steps_loop(d, part, t0, variant, &o);
    }
    free(s.cnt);
    free(s.gstart);
    free(s.rows);
    free(s.sums);
    return rc;
}

/* ---- the single build on the ranks: the hooks of build_run (build_ops_t, src/build.c) ----
 * Each rank refines its part of the roots; the validation's checksums are folded in root order, the
 * file is written collectively or gathered to rank 0, and the lines are rank 0's with the ranks'
 * counts and times combined. */
typedef struct {
    const dctx *c;
    const dp_tidx *first; /* [size + 1]: each rank's roots */
    dp_tidx (*cnt)[DP_MAX_LEVELS], (*gstart)[DP_MAX_LEVELS];
    dp_tidx tiles[DP_MAX_LEVELS], total;
    int gl;
    h5io_rank_t *rows; /* [size]: the per-rank table */
    int64_t *leaves;   /* [size]: each rank's leaves (the table's load line) */
} dbuild_t;

static int dbuild_agree(void *ctx, int ok, char *err, size_t n) { return dp_agree(((dbuild_t *)ctx)->c->comm, ok, err, n); }

static void dbuild_reduce(void *ctx, long long *v, int n, int max)
{
    MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_LONG_LONG, max ? MPI_MAX : MPI_SUM, ((dbuild_t *)ctx)->c->comm);
}

static void dbuild_reduce_max(void *ctx, double *v, int n)
{
    MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_MAX, ((dbuild_t *)ctx)->c->comm);
}

static void dbuild_bcast(void *ctx, void *buf, size_t bytes)
{
    MPI_Bcast(buf, (int)bytes, MPI_BYTE, 0, ((dbuild_t *)ctx)->c->comm);
}

static void dbuild_say_parts(void *ctx)
{
    const dbuild_t *b = ctx;
    printf("partition: root tiles along the Morton curve, by work estimate (frontier tiles, flagged cells):");
    for (int r = 0; r < b->c->size; ++r) printf(" [%lld,%lld)", (long long)b->first[r], (long long)b->first[r + 1]);
    printf("\n");
}

static int dbuild_refine(void *ctx, int variant, const deck_t *d, mesh_t *m, int in_levels, refine_report_t *r,
                         const dp_vreq *vq, dp_vdev *vd, int *streamed, char *err, size_t n)
{
    (void)ctx;
    *streamed = 0;
    if (part_has_frontier(m, in_levels)) return engine_refine_valid(variant, d, m, r, vq, vd, err, n);
    /* a part without tiles on the whole mesh's frontier has nothing to refine */
    snprintf(vd->note, sizeof vd->note, "rank 0 had nothing to refine: validated on the CPU");
    return 0;
}

static void dbuild_count(void *ctx, const mesh_t *m, long long *ntiles, int *nlevels)
{
    dbuild_t *b = ctx;
    layout(b->c, m, b->cnt, b->gstart, b->tiles, &b->gl, &b->total);
    *ntiles = b->total;
    *nlevels = b->gl;
    const int64_t mine = part_count_leaves(m);
    MPI_Allgather(&mine, 1, MPI_INT64_T, b->leaves, 1, MPI_INT64_T, b->c->comm);
}

static int dbuild_validate(void *ctx, const deck_t *d, const mesh_t *m, const dp_vdev *vd, valid_report_t *v,
                           int *by_cpu, char *err, size_t n)
{
    dbuild_t *b = ctx;
    const int r = b->c->rank;
    return validate_global(b->c, &d->p, m, b->first[r + 1] - b->first[r], b->gstart[r], b->tiles, b->gl, vd, by_cpu, v,
                           err, n);
}

static int dbuild_write(void *ctx, const deck_t *d, mesh_t *m, h5io_meta_t *meta, h5io_rank_t *row, double *write_ms,
                        char *how, size_t hn, char *err, size_t n)
{
    dbuild_t *b = ctx;
    const dctx *c = b->c;
    row->rank = c->rank;
    snprintf(how, hn, " (%s)", dist_collective(d, d->output) ? "collectively, parallel HDF5" : "gathered to rank 0");
    if (write_output(c, d, d->output, m, b->gstart, (const dp_tidx(*)[DP_MAX_LEVELS])b->cnt, b->gl, b->total, meta,
                     b->rows, row, write_ms, err, n) != 0)
        return -1;
    /* the printed table has the whole write on every rank */
    row->write_ms = *write_ms;
    MPI_Gather(row, (int)sizeof *row, MPI_BYTE, b->rows, (int)sizeof *row, MPI_BYTE, 0, c->comm);
    return 0;
}

/* The per-rank table and what a p4est-style count balance of the leaves would move (rank 0). */
static void dbuild_say_ranks(void *ctx, long long total)
{
    const dbuild_t *b = ctx;
    const int size = b->c->size;
    printf("%5s %7s %11s %12s %14s %11s %10s\n", "rank", "device", "root tiles", "tiles", "cells", "refine ms",
           "write ms");
    int64_t tmax = 0, lall = 0, moved = 0, lo_own = 0;
    for (int r = 0; r < size; ++r) {
        const h5io_rank_t *w = &b->rows[r];
        if (w->tiles > tmax) tmax = w->tiles;
        lall += b->leaves[r];
        char dev[16] = "cpu";
        if (w->device >= 0) snprintf(dev, sizeof dev, "gpu %d", w->device);
        printf("%5d %7s %11lld %12lld %14lld %11.3f %10.3f\n", w->rank, dev, (long long)w->root_tiles,
               (long long)w->tiles, (long long)w->cells, w->refine_ms, w->write_ms);
    }
    for (int r = 0; r < size; ++r) { /* own leaves [lo_own, +leaves[r]) vs the even range */
        int64_t a, e;
        part_leaf_range(lall, size, r, &a, &e);
        const int64_t hi_own = lo_own + b->leaves[r];
        const int64_t ov = (hi_own < e ? hi_own : e) - (lo_own > a ? lo_own : a);
        moved += b->leaves[r] - (ov > 0 ? ov : 0);
        lo_own = hi_own;
    }
    printf("load: tiles max/mean %.3f; a count balance of the %lld leaves (p4est's partition) would move %lld; "
           "no later pass needs it: validation and the write are linear in each rank's tiles\n",
           (double)tmax * size / (double)(total ? total : 1), (long long)lall, (long long)moved);
}

int dist_run(int argc, char **argv)
{
    char err[ERRLEN] = "";
    dctx c = { .comm = MPI_COMM_WORLD };
    MPI_Comm_rank(c.comm, &c.rank);
    MPI_Comm_size(c.comm, &c.size);
    MPI_Comm node;
    MPI_Comm_split_type(c.comm, MPI_COMM_TYPE_SHARED, c.rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &c.local);
    MPI_Comm_size(node, &c.local_size);
    MPI_Comm_free(&node);
    const int root = c.rank == 0;
    const double t0 = timer_ms();

    /* every rank reads the deck (small); the deck's errors are the same on every rank */
    deck_t d;
    int ok = deck_load(&d, argv[0], argc - 1, argv + 1, err, sizeof err) == 0;
    if (ok && d.steps > 0 && c.size == 1) { /* one rank: the single-process steps (src/steps.c), any variant */
#ifdef _OPENMP
        if (d.threads > 0) omp_set_num_threads(d.threads);
#endif
        mesh_t m;
        memset(&m, 0, sizeof m);
        if (run_read_mesh(&d, &m, err, sizeof err) != 0) {
            deck_free(&d);
            return run_die(err);
        }
        const int rc = steps_run(&d, &m, t0);
        deck_free(&d);
        return rc;
    }
    int replacing = 0; /* the files of time steps: checked by the step loop (output is a pattern there) */
    if (ok && d.steps == 0) ok = run_output_name(&d, err, sizeof err) == 0;
    if (ok && d.steps == 0) ok = (replacing = run_refuse_overwrite("output", d.output, &d, 1, err, sizeof err)) >= 0;
    /* the output's folder before any work (its free space: h5io, once the size is known) */
    if (ok && root && d.steps == 0) ok = run_check_output("output", d.output, 0.0, err, sizeof err) == 0;
    if (dp_agree(c.comm, ok, err, sizeof err) != 0) return root ? run_die(err) : 1;
#ifdef _OPENMP
    if (d.threads > 0) omp_set_num_threads(d.threads);
    else if (c.local_size > 1) { /* share the node's cores among its ranks */
        const int t = omp_get_num_procs() / c.local_size;
        omp_set_num_threads(t > 0 ? t : 1);
    }
#endif
    if (d.mpi_write == DP_MPI_WRITE_COLLECTIVE && !h5io_parallel()) {
        snprintf(err, sizeof err, "%.1000s: mpi_write = collective, but this dpamr's HDF5 has no parallel I/O (valid here: "
                 "auto, gather; build with a parallel HDF5 such as Debian's libhdf5-openmpi-dev)", d.path);
        return root ? run_die(err) : 1;
    }
    {
        char last[8300]; /* the longest name written: the output, or the last step's */
        if (d.steps == 0 || steps_file_name(d.output, d.steps, last, sizeof last) != 0) snprintf(last, sizeof last, "%s", d.output);
        if (dist_name_check(&d, last, err, sizeof err) != 0) return root ? run_die(err) : 1;
    }
    const int say = d.verbosity != DP_VERBOSITY_QUIET; /* quiet: warnings, errors and "wrote" only */
    d.quiet |= c.size > 1 || !say; /* per-level lines would be one rank's */
    if (!root) d.trace[0] = '\0'; /* one timeline: rank 0's */

    int device = -1;
    char why[512] = "";
    const double tv = timer_ms();
    const int variant = run_variant(&d, c.local, &device, why, sizeof why, err, sizeof err);
    const double setup_ms = timer_ms() - tv; /* the device's choice (CUDA's start): not load */
    if (dp_agree(c.comm, variant >= 0, err, sizeof err) != 0) return root ? run_die(err) : 1;
    if (d.p.balance != DP_BALANCE_NONE && c.size > 1) /* the same on every rank */
        snprintf(err, sizeof err, "%.1000s: balance = 2:1 runs on one rank in this version (a rank's tiles need "
                 "tiles of its neighbours' parts): run with one rank, or balance=none", d.path);
    if (dp_agree(c.comm, d.p.balance == DP_BALANCE_NONE || c.size == 1, err, sizeof err) != 0)
        return root ? run_die(err) : 1;
    /* memory shared on a node: the host's by every rank there, a device's by the ranks that use it;
     * each rank's capacity (max_tiles = 0) takes its even share (capacity.h). The capacities need no
     * agreement: they do not change the output, and a rank that runs out stops every rank (dp_agree). */
    d.share_host = c.local_size;
    {
        MPI_Comm shm, same;
        MPI_Comm_split_type(c.comm, MPI_COMM_TYPE_SHARED, c.rank, MPI_INFO_NULL, &shm);
        MPI_Comm_split(shm, device >= 0 ? device : MPI_UNDEFINED, c.rank, &same);
        if (same != MPI_COMM_NULL) {
            MPI_Comm_size(same, &d.share_device);
            MPI_Comm_free(&same);
        }
        MPI_Comm_free(&shm);
    }
    if (d.variant == DP_VARIANT_AUTO) { /* say where auto fell back to the cpu */
        int mine = variant == DP_VARIANT_CPU, nfell = 0, who = 0;
        MPI_Allreduce(&mine, &nfell, 1, MPI_INT, MPI_SUM, c.comm);
        int cand = mine ? c.rank : c.size;
        MPI_Allreduce(&cand, &who, 1, MPI_INT, MPI_MIN, c.comm);
        if (nfell > 0) {
            char fell[sizeof why]; /* not in why: that names this rank's device in the provenance */
            memcpy(fell, why, sizeof fell);
            MPI_Bcast(fell, (int)sizeof fell, MPI_CHAR, who, c.comm);
            if (root && say)
                printf("variant=auto: no usable GPU on %d of %d rank(s) (rank %d: %s); falling back to variant=cpu "
                       "there\n", nfell, c.size, who, fell);
        }
    }

    /* per-rank tables, allocated before any rank can stop on its own */
    mesh_t part;
    dp_tidx *first = malloc(((size_t)c.size + 1) * sizeof *first);
    dp_tidx(*cnt)[DP_MAX_LEVELS] = malloc((size_t)c.size * sizeof *cnt);
    dp_tidx(*gstart)[DP_MAX_LEVELS] = malloc((size_t)c.size * sizeof *gstart);
    h5io_rank_t *rows = malloc((size_t)c.size * sizeof *rows);
    int64_t *leaves = malloc((size_t)c.size * sizeof *leaves);
    ok = first && cnt && gstart && rows && leaves;
    if (!ok) snprintf(err, sizeof err, "out of memory for the tables of %d ranks", c.size);
    if (dp_agree(c.comm, ok, err, sizeof err) != 0) return root ? run_die(err) : 1;
    if (scatter_parts(&c, &d, &part, first, err, sizeof err) != 0) {
        free(first);
        return root ? run_die(err) : 1;
    }
    if (d.steps > 0) { /* time steps: the step loop over the parts */
        const int rc = dist_steps(&c, &d, &part, first, variant, t0);
        mesh_free(&part);
        free(first), free(cnt), free(gstart), free(rows), free(leaves);
        deck_free(&d);
        return rc;
    }
    /* the single build: one pipeline with the serial run (src/build.c), over the hooks above */
    dbuild_t b = { .c = &c, .first = first, .cnt = cnt, .gstart = gstart, .rows = rows, .leaves = leaves };
    const build_ops_t o = { .ctx = &b, .root = root, .nranks = c.size, .agree = dbuild_agree, .reduce = dbuild_reduce,
                            .reduce_max = dbuild_reduce_max, .bcast = dbuild_bcast, .say_parts = dbuild_say_parts,
                            .refine = dbuild_refine, .discard = NULL, .count = dbuild_count,
                            .validate = dbuild_validate, .write = dbuild_write, .say_ranks = dbuild_say_ranks };
    const build_in_t in = { .t0 = t0, .setup_ms = setup_ms, .variant = variant, .device = device, .why = why,
                            .replacing = replacing };
    const int rc = build_run(&d, &part, &in, &o);
    mesh_free(&part);
    free(first), free(cnt), free(gstart), free(rows), free(leaves);
    deck_free(&d);
    return rc;
}
