/* h5io_collective.c - the collective write (h5io_write_dist): every MPI rank writes its rows of
 * each per-tile dataset into one file with parallel HDF5 (MPI-IO), through the writer's traversal
 * (h5io_write.c), then reads them back. Built with a parallel HDF5; otherwise h5io_parallel() is 0
 * and h5io_write_dist refuses. */
#include "io/h5io_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/tmpfile.h"

#ifdef H5_HAVE_PARALLEL
int h5io_parallel(void) { return 1; }

/** After a collective open or create failed on some rank: where it worked on others, their handle
 *  cannot be closed (the close is collective) and HDF5 would close it, collectively, in
 *  MPI_Finalize: a hang. Such a run ends here, with the agreed message, through MPI_Abort. */
static void w_open_all_or_abort(MPI_Comm comm, hid_t f, const char *err)
{
    int mine = f >= 0, any = 0, rank = 0;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm);
    if (!any) return;
    MPI_Comm_rank(comm, &rank);
    if (rank == 0) {
        fprintf(stderr, "dpamr: error: %s (the file is open on some ranks only and cannot be closed: aborting)\n", err);
        fflush(stderr);
    }
    MPI_Abort(comm, 1);
}

/** The read-back pass of a collective write: the same traversal as the write, opening instead of
 *  creating, and every rank comparing the rows it wrote (rank 0 also the small datasets). Open MPI
 *  4.1's OMPIO, its default MPI-IO, returns success from a collective write that hit a full disk
 *  (it prints "mca_fbtl_posix_pwritev: error in writev" and goes on): the file is then short of
 *  data and nothing else would notice. The reads mostly come from the page cache. 0, or -1 on every
 *  rank with the message. */
static int w_read_back(wctx *c, const char *tmp, hid_t fapl, const mesh_t *part, const h5io_meta_t *meta, wbuf *b)
{
    wctx v = *c;
    v.verify = 1;
    v.dxpl = H5Pcreate(H5P_DATASET_XFER); /* independent: each rank reads its own rows */
    if (v.dxpl < 0) h5i_seterr(c->err, c->errlen, "cannot write %s: making the read-back's transfer list failed", c->path);
    int rc = dp_agree(c->comm, v.dxpl >= 0, c->err, c->errlen); /* H5Fopen is collective: all or none */
    hid_t f = -1;
    if (rc == 0) {
        f = H5Fopen(tmp, H5F_ACC_RDONLY, fapl);
        if (f < 0) {
            char why[200];
            h5i_seterr(c->err, c->errlen, "cannot write %s: opening %s to read it back failed (%s)", c->path, tmp,
                       h5i_reason(why));
            w_lost(c);
        }
        rc = dp_agree(c->comm, f >= 0, c->err, c->errlen);
        if (rc != 0) w_open_all_or_abort(c->comm, f, c->err);
    }
    if (rc == 0) {
        rc = w_vtkhdf(&v, f, part, b);
        if (rc == 0) rc = w_dpamr(&v, f, part, meta);
        H5Fclose(f);
    }
    h5i_close(v.dxpl);
    return rc;
}

int h5io_write_dist(const char *path, const mesh_t *part, const h5io_dist_t *dist, const h5io_meta_t *meta, char *err,
                    size_t errlen)
{
    MPI_Comm comm = *(const MPI_Comm *)dist->comm;
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    wctx c = { .path = path, .err = err, .errlen = errlen, .par = 1, .rank = rank, .dxpl = -1,
               .nlevels = dist->nlevels, .level_start = dist->level_start, .offset = dist->offset,
               .parent = dist->parent, .comm = comm };
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    /* the checks of w_check_mesh on the global level index; the part's own arrays next */
    mesh_t head = *part;
    head.nlevels = dist->nlevels;
    head.ntiles = dist->level_start[dist->nlevels];
    head.cap = head.ntiles;
    memcpy(head.level_start, dist->level_start, sizeof(dp_tidx) * (size_t)(dist->nlevels + 1));
    int ok = dist->nlevels >= 1 && dist->nlevels <= DP_MAX_LEVELS && w_check_mesh(&c, &head) == 0;
    wbuf b = { 0 };
    if (ok) ok = w_buf_alloc(&c, part, &b) == 0;
    /* every rank names the same temporary file: rank 0's pid */
    long pid = (long)getpid();
    MPI_Bcast(&pid, 1, MPI_LONG, 0, comm);
    const size_t tl = strlen(path) + 32;
    char *tmp = malloc(tl);
    hid_t fapl = -1, f = -1;
    if (ok && !tmp) ok = (h5i_seterr(err, errlen, "cannot write %s: out of memory", path), 0);
    if (ok) dp_tmp_name(path, pid, tmp, tl); /* tl holds it: the path, ".tmp." and a pid */
    if (ok && rank == 0)
        ok = w_target_ok(path, err, errlen) == 0 && w_room(path, tmp, h5io_raw_bytes(part, head.ntiles), err, errlen) == 0;
    /* H5Pset_fapl_mpio duplicates the communicator, a collective: every rank or none gets there */
    if (dp_agree(comm, ok, err, errlen) != 0) {
        free(tmp);
        w_buf_free(&b);
        return -1;
    }
    fapl = H5Pcreate(H5P_FILE_ACCESS);
    c.dxpl = H5Pcreate(H5P_DATASET_XFER);
    const int mpio = fapl >= 0 && H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL) >= 0 && /* called where fapl exists */
                     w_format(fapl) == 0;
    if (!mpio || c.dxpl < 0 || H5Pset_dxpl_mpio(c.dxpl, H5FD_MPIO_COLLECTIVE) < 0 ||
        H5Pset_all_coll_metadata_ops(fapl, 1) < 0 || H5Pset_coll_metadata_write(fapl, 1) < 0)
        ok = (h5i_seterr(err, errlen, "cannot write %s: setting up parallel HDF5 (MPI-IO) failed", path), 0);
    int rc = -1;
    if (dp_agree(comm, ok, err, errlen) == 0) {
        int taken = 0;
        /* rank 0 registers it before the create: removed by SIGINT, SIGTERM or SIGHUP until renamed */
        const int claimed = rank == 0 && dp_tmp_claim(tmp);
        f = w_create(&c, tmp, fapl, &taken); /* collective; exclusive (a name taken since w_room: not ours) */
        if (rank == 0 && f >= 0 && !claimed) dp_tmp_begin(tmp);
        if (claimed && taken) dp_tmp_done(tmp); /* another's file: never removed */
        if (dp_agree(comm, f >= 0, err, errlen) != 0) {
            if (rank == 0 && !taken) remove(tmp), dp_tmp_done(tmp); /* a create that failed part-way (a full disk) leaves a file */
            w_open_all_or_abort(comm, f, err);
        } else {
            /* collective from here: every rank makes the same calls, and the leaf writers agree
             * around each collective call (w_sync), so a failure on one rank stops all of them at the
             * same call; rc is then -1 on every rank, already agreed */
            rc = w_vtkhdf(&c, f, part, &b);
            if (rc == 0) rc = w_dpamr(&c, f, part, meta);
            /* A close whose flush fails on a full disk leaves HDF5 1.10 a half-closed file: the ranks
             * then waited in different collectives (a hang), or MPI_Finalize crashed closing it again.
             * So the close runs with room for the metadata (rank 0 looks, all agree), and a failed
             * write releases the file's blocks (MPI_File_set_size, collective) before closing. */
            if (rc == 0)
                rc = dp_agree(comm, rank != 0 || h5i_metadata_room(f, tmp, path, err, errlen) == 0, err, errlen);
            if (rc != 0) {
                void *h = NULL;
                if (H5Fget_vfd_handle(f, fapl, &h) >= 0 && h) MPI_File_set_size(*(MPI_File *)h, 0);
            }
            const int closed = H5Fclose(f) >= 0; /* collective, on every rank whatever rc is */
            if (rc == 0) {
                char why[200];
                if (!closed) h5i_seterr(err, errlen, "cannot write %s: closing %s failed (%s)", path, tmp, h5i_reason(why));
                rc = dp_agree(comm, closed, err, errlen);
            }
            if (rc == 0) rc = w_read_back(&c, tmp, fapl, part, meta, &b);
            if (rc == 0) {
                ok = rank != 0 || rename(tmp, path) == 0;
                if (!ok)
                    h5i_seterr(err, errlen, "cannot write %s: renaming %s onto it failed: %s", path, tmp, strerror(errno));
                rc = dp_agree(comm, ok, err, errlen);
            }
            if (rc != 0 && rank == 0) remove(tmp);
            if (rank == 0) dp_tmp_done(tmp);
        }
    }
    h5i_close(fapl);
    h5i_close(c.dxpl);
    free(tmp);
    w_buf_free(&b);
    return rc;
}
#else
int h5io_parallel(void) { return 0; }

int h5io_write_dist(const char *path, const mesh_t *part, const h5io_dist_t *dist, const h5io_meta_t *meta, char *err,
                    size_t errlen)
{
    (void)part, (void)dist, (void)meta;
    h5i_seterr(err, errlen, "cannot write %s collectively: this HDF5 has no parallel I/O", path);
    return -1;
}
#endif
