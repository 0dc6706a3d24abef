/* check.c - `dpamr check FILE` (check.h): the file is read and validated at once. The header and the
 * level index are read first (h5io_read_begin); then one thread reads the cells, level by level in
 * pieces (h5io_read_cells; the pieces copied by a few threads), while the main thread reads the tile
 * tree, the boxes and the deck (h5io_read_tree; for a file whose tree lies after its cells, from an
 * earlier dpamr, before the cells start) and the validator (OpenMP) works on the tiles whose cells
 * are in (valid_opts_t.wait); /VTKHDF is compared with the tiles (h5io_read_vtkhdf: vtkGhostType's
 * chunks inflated in parallel) while the validator finishes. The recorded values are compared last
 * (h5io_verify_records). The check takes about the time of the read rather than open + read +
 * validate + compare; its phases line says where the time went. docs/design.md, "Checking a file". */
#define _GNU_SOURCE /* madvise */
#include "src/check.h"

#ifdef _OPENMP
#include <omp.h>
#endif
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/h5io.h"
#include "src/deck.h"
#include "src/mesh.h"
#include "src/run.h"
#include "src/timer.h"
#include "validation/valid.h"

/** The stored deck must be exactly what dpamr wrote: the effective deck it renders from the keys
 *  (any other byte, a comment or a space, was changed after the file was written). 0, or -1 with
 *  the first line that differs in err. */
static int check_deck_text(const char *file, const char *stored, const char *rendered, char *err, size_t n)
{
    if (strcmp(stored, rendered) == 0) return 0;
    int line = 1;
    const char *a = stored, *b = rendered;
    for (; *a && *a == *b; ++a, ++b)
        if (*a == '\n') ++line;
    const char *la = a, *lb = b;
    while (la > stored && la[-1] != '\n') --la, --lb;
    const int ka = (int)strcspn(la, "\n"), kb = (int)strcspn(lb, "\n");
    const int ends = ka == kb && strncmp(la, lb, (size_t)ka) == 0; /* the same text: its line end differs */
    snprintf(err, n, "%s:/dpamr/deck:%d: '%.*s'%s is not what dpamr wrote ('%.*s'%s): the stored deck changed after the "
             "file was written", file, line, ka > 200 ? 200 : ka, la, ends ? (la[ka] ? " + newline" : " (no newline)") : "",
             kb > 200 ? 200 : kb, lb, ends ? (lb[kb] ? " + newline" : " (no newline)") : "");
    return -1;
}

/** What the file was when the check began: a check of a file that is replaced, truncated, written
 *  or removed while it is read reports that (exit 1: the file could not be checked), not what the
 *  mixture of two files looked like. */
typedef struct {
    int ok; /* stat succeeded */
    struct stat st;
} file_id_t;

static file_id_t file_id(const char *file)
{
    file_id_t id;
    memset(&id, 0, sizeof id);
    id.ok = stat(file, &id.st) == 0;
    return id;
}

/** 1, with a message in err, when file is no longer the file id saw (another inode, another size or
 *  modification time, or gone); 0 when it is, or when its first stat failed (the reader said why). */
static int file_changed(const char *file, const file_id_t *id, char *err, size_t n)
{
    if (!id->ok) return 0;
    const file_id_t now = file_id(file);
    const struct stat *a = &id->st, *b = &now.st;
    char what[160];
    if (!now.ok) snprintf(what, sizeof what, "it was removed");
    else if (a->st_dev != b->st_dev || a->st_ino != b->st_ino) snprintf(what, sizeof what, "it was replaced by another file");
    else if (a->st_size != b->st_size)
        snprintf(what, sizeof what, "its size went from %lld to %lld bytes", (long long)a->st_size, (long long)b->st_size);
    else if (a->st_mtim.tv_sec != b->st_mtim.tv_sec || a->st_mtim.tv_nsec != b->st_mtim.tv_nsec)
        snprintf(what, sizeof what, "it was written to");
    else return 0;
    snprintf(err, n, "%.800s changed while it was being checked (%s), so the check tells nothing about it: check it "
             "again when nothing writes it", file, what);
    return 1;
}

/** Exit status 2 after the message of a failed check. */
static int check_failed(const char *msg)
{
    run_die(msg);
    return 2;
}

/** A failed check of file: 2 (a difference) when file carries a trace of dpamr (/dpamr/deck or
 *  /dpamr/provenance: a dpamr file, damaged or changed, even with one of them deleted), else 1 with
 *  why it is not one (README: 1 when the file cannot be opened as a dpamr file; a mesh from
 *  mesh_from_numpy.py, an HDF5 file of another program). Asked only after a failure. */
static int check_failed_file(const char *file, const char *msg)
{
    if (h5io_dpamr_trace(file) != 0) return check_failed(msg);
    char err[ERRLEN];
    snprintf(err, sizeof err, "%.800s: it was not written by dpamr (no /dpamr/deck, no /dpamr/provenance), so there is "
             "nothing to check (dpamr check verifies files dpamr run or dpamr mesh wrote)", file);
    return run_die(err);
}

/** The cells on their way: the reading threads' count of tiles in, and how it ended; and /VTKHDF's
 *  comparison (its own thread while the cells come, when they need no HDF5: h5io_read_plan). */
typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    dp_tidx ready; /* the cells of tiles [0, ready) are in the mesh */
    dp_tidx asked;    /* the validator's next block ends here (its tiles before that block are done) */
    dp_tidx asked_at; /* asked when the last cell was in: how far behind the read the validator was */
    int state;     /* 0 reading, 1 read, else h5io_read_cells' failure */
    h5io_reader_t *rd;
    double t0;      /* when the cells began (timer_ms) */
    double done_ms; /* when the last cell was in */
    int vtk_after;  /* 1: compare /VTKHDF on the cells' thread after them (the library was busy) */
    int vtk;        /* /VTKHDF against the tiles (h5io_read_vtkhdf): 0, or its failure (verr) */
    double vtk_ms;  /* when it was done, from t0 */
    char verr[ERRLEN];
} feed_t;

static void feed_ready(void *ctx, dp_tidx tiles)
{
    feed_t *f = ctx;
    pthread_mutex_lock(&f->mu);
    f->ready = tiles;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
}

static void *vtk_main(void *ctx)
{
    feed_t *f = ctx;
    f->vtk = h5io_read_vtkhdf(f->rd, f->verr, sizeof f->verr);
    f->vtk_ms = timer_ms() - f->t0;
    return NULL;
}

static void *feed_main(void *ctx)
{
    feed_t *f = ctx;
    const int rc = h5io_read_cells(f->rd, feed_ready, f);
    f->done_ms = timer_ms();
    pthread_mutex_lock(&f->mu);
    f->asked_at = f->asked;
    f->state = rc == 0 ? 1 : rc;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
    if (rc == 0 && f->vtk_after) vtk_main(f); /* while the validator finishes */
    return NULL;
}

/** valid_opts_t.wait: until tiles [0, tiles) are in, or the read failed (-1). */
static dp_tidx feed_wait(void *ctx, dp_tidx tiles)
{
    feed_t *f = ctx;
    pthread_mutex_lock(&f->mu);
    if (tiles > f->asked) f->asked = tiles;
    while (f->ready < tiles && f->state == 0) pthread_cond_wait(&f->cv, &f->mu);
    const dp_tidx got = f->ready >= tiles ? f->ready : -1;
    pthread_mutex_unlock(&f->mu);
    return got;
}

typedef struct {
    char *a;
    size_t n;
} slice_t;

static void *release_slice(void *p)
{
    const slice_t *x = p;
    (void)madvise(x->a, x->n, MADV_DONTNEED);
    return NULL;
}

/** Give m's cells back to the system, the large arrays' pages released by several threads at once
 *  (madvise MADV_DONTNEED on page-aligned slices, then free): one thread unmapping 19 GB of 4 KiB
 *  pages takes about a second (measured at the scale check's exit). The values are gone after. */
static void release_cells(mesh_t *m)
{
    enum { SLICES = 8 };
    const size_t page = (size_t)sysconf(_SC_PAGESIZE), bytes = (size_t)m->ntiles * (size_t)mesh_cells(m) * sizeof(float);
    if (bytes >= ((size_t)64 << 20) && page > 0) {
        pthread_t th[SLICES * DP_MAX_FIELDS];
        slice_t sl[SLICES * DP_MAX_FIELDS];
        int started[SLICES * DP_MAX_FIELDS] = { 0 };
        for (int f = 0; f < m->nf; ++f) {
            const uintptr_t lo = ((uintptr_t)m->field[f] + page - 1) / page * page;
            const uintptr_t hi = ((uintptr_t)m->field[f] + bytes) / page * page;
            const size_t per = (hi - lo) / page / SLICES * page;
            for (int k = 0; k < SLICES; ++k) {
                slice_t *x = &sl[f * SLICES + k];
                x->a = (char *)(lo + (uintptr_t)k * per);
                x->n = k == SLICES - 1 ? hi - lo - (size_t)k * per : per;
            }
        }
        for (int i = 0; i < m->nf * SLICES; ++i)
            started[i] = sl[i].n > 0 && pthread_create(&th[i], NULL, release_slice, &sl[i]) == 0;
        for (int i = 0; i < m->nf * SLICES; ++i)
            if (started[i]) pthread_join(th[i], NULL);
    }
    mesh_free(m);
}

/** Tests (tests/check_race.sh): with DPAMR_TEST_CHECK_PAUSE=PATH the check creates PATH once the
 *  file's header is read and waits (up to 60 s) until PATH is removed, so that a test can change the
 *  file while it is being checked. */
static void test_pause(void)
{
    const char *path = getenv("DPAMR_TEST_CHECK_PAUSE");
    if (!path || !*path) return;
    FILE *f = fopen(path, "w");
    if (!f) return;
    fclose(f);
    for (int i = 0; i < 6000 && access(path, F_OK) == 0; ++i) usleep(10000);
}

/** How a check that failed ends: with the file changed under it, that (1); else the failure, rc 2 (a
 *  difference: check_failed_file when the file may not be dpamr's, `dpamr_file` 0) or 1 (msg). */
static int check_end(const char *file, const file_id_t *id, int rc, int dpamr_file, const char *msg)
{
    char err[ERRLEN];
    if (file_changed(file, id, err, sizeof err)) return run_die(err);
    if (rc != 2) return run_die(msg);
    return dpamr_file ? check_failed(msg) : check_failed_file(file, msg);
}

int check_file(const char *file)
{
    char err[ERRLEN], rerr[ERRLEN];
    const file_id_t id = file_id(file);
    mesh_t m;
    char *text = NULL;
    h5io_reader_t *rd = NULL;
    const double t0 = timer_ms();
    /* the header and the level index; where the cells lie: when they need no HDF5 call to be read
     * and the tile tree lies before them (as dpamr writes it), they start coming now, alongside the
     * tree (one front-to-back stream from the disk), and /VTKHDF is compared on a thread of its own
     * once the tree is in; else the tree first */
    const int rd_rc = h5io_read_begin(file, &m, &rd, rerr, sizeof rerr);
    if (rd_rc != 0) return check_end(file, &id, rd_rc == H5IO_BAD_CONTENT ? 2 : 1, 0, rerr);
    mesh_huge_pages(&m); /* allocated, not yet touched: the tree and the cells are read into it now */
    test_pause();
    const int plan = h5io_read_plan(rd);
    if (plan != 0 && plan != 1) {
        h5io_read_close(rd);
        mesh_free(&m);
        return check_end(file, &id, plan == H5IO_BAD_CONTENT ? 2 : 1, 1, rerr);
    }
    const double t_begin = timer_ms();
    feed_t f = { .ready = 0, .state = 0, .rd = rd, .t0 = t_begin, .vtk_after = plan != 1 };
    pthread_mutex_init(&f.mu, NULL);
    pthread_cond_init(&f.cv, NULL);
    pthread_t reader, vtk;
    int threaded = plan == 1 && h5io_read_head_first(rd) && pthread_create(&reader, NULL, feed_main, &f) == 0;
    const int early = threaded;
    /* alongside the cells' reading threads, the tree's parallel loops and the validator's take the
     * cores those leave: with more threads than cores an OpenMP loop waits for its preempted
     * threads */
    int beside = 0; /* threads beside the readers (0: all) */
#ifdef _OPENMP
    const int nthr = omp_get_max_threads();
    if (plan == 1) { /* never more than the user's limit (OMP_NUM_THREADS) */
        const int procs = omp_get_num_procs(), readers = h5io_read_threads();
        beside = procs > readers ? procs - readers : 1;
        if (beside > nthr) beside = nthr;
    }
    if (early) omp_set_num_threads(beside);
#endif
    const int tree_rc = h5io_read_tree(rd, &text);
#ifdef _OPENMP
    omp_set_num_threads(nthr);
#endif
    const double t_tree = timer_ms();
    deck_t d = { 0 };
    int rc = 0;
    if (tree_rc != 0) {
        snprintf(err, sizeof err, "%s", rerr);
        rc = tree_rc == H5IO_BAD_CONTENT ? 2 : 1;
    } else if (!text) {
        snprintf(err, sizeof err, "%s: no /dpamr/deck in the file: cannot tell the criterion to check against", file);
        rc = 2;
    } else {
        char origin[4200];
        snprintf(origin, sizeof origin, "%s:/dpamr/deck", file);
        rc = deck_parse_text(&d, origin, text, err, sizeof err) != 0 ? 2 : 0;
        if (rc == 0 && (check_deck_text(file, text, d.text, err, sizeof err) != 0 ||
                        run_mesh_matches_deck(&m, &d, file, 0, err, sizeof err) != 0))
            rc = 2;
        free(text);
    }
    if (rc != 0) { /* the cells, if coming, stop */
        if (threaded) {
            h5io_read_stop(rd);
            pthread_join(reader, NULL);
        }
        h5io_read_close(rd);
        pthread_cond_destroy(&f.cv);
        pthread_mutex_destroy(&f.mu);
        mesh_free(&m);
        if (d.text) deck_free(&d);
        return check_end(file, &id, rc, 0, err);
    }

    /* the validator works on the cells in while the rest come (progress: a long check on a
     * terminal, as the file's deck asks) */
    if (!early) {
        f.t0 = timer_ms();
        threaded = pthread_create(&reader, NULL, feed_main, &f) == 0;
        if (!threaded) feed_main(&f); /* no thread to be had: read, then validate */
    }
    const int vtk_threaded = plan == 1 && pthread_create(&vtk, NULL, vtk_main, &f) == 0;
    valid_report_t v;
    const valid_opts_t vo = { .complete = m.nlevels > 1, .roots = -1, .gstart = NULL,
                              .progress = d.progress && d.verbosity != DP_VERBOSITY_QUIET,
                              .wait = feed_wait, .wait_ctx = &f,
                              .wait_threads = beside };
    valid_check_opts(&m, &d.p, &vo, &v);
    const double t_valid = timer_ms();
    if (threaded) pthread_join(reader, NULL);
    if (vtk_threaded) pthread_join(vtk, NULL);
    else if (plan == 1 && f.state == 1) vtk_main(&f); /* no thread to be had for it */
    h5io_read_stats_t rs;
    h5io_read_stats(rd, &rs);
    h5io_read_close(rd);
    pthread_cond_destroy(&f.cv);
    pthread_mutex_destroy(&f.mu);
    if (f.state != 1) { /* the cells could not be read: what the reader said */
        mesh_free(&m);
        deck_free(&d);
        return check_end(file, &id, f.state == H5IO_BAD_CONTENT ? 2 : 1, 1, rerr);
    }

    if (file_changed(file, &id, err, sizeof err)) { /* what was read is not one file */
        mesh_free(&m);
        deck_free(&d);
        return run_die(err);
    }
    printf("%s: %lld tiles on %d levels\n", file, (long long)m.ntiles, m.nlevels);
    valid_print(&v, &m);
    /* every value recorded when the file was written must still hold (then /VTKHDF, compared by the
     * reader, must show the same tiles and values as /dpamr): any changed bit shows */
    const double t_verify = timer_ms();
    int vr = h5io_verify_records(file, &m, &v, err, sizeof err); /* also after a failed validation: a recorded checksum that differs says the file changed */
    if (vr >= 0 && v.passed && f.vtk != 0) { /* the records hold; /VTKHDF does not (or cannot be read) */
        snprintf(err, sizeof err, "%s", f.verr);
        vr = f.vtk == H5IO_NO_FILTER ? H5IO_NO_FILTER : -1;
    }
    const double t_records = timer_ms();
    const double gb = (double)m.ntiles * mesh_cells(&m) * sizeof(float) * m.nf / 1e9, ms = f.done_ms - f.t0;
    const dp_tidx m_tiles = m.ntiles;
    release_cells(&m); /* before the line, so that it can say what the release took */
    const double t_end = timer_ms();
    /* the validator may finish as the last cells are counted in (their stamp is taken after): "with" */
    char vdone[64];
    if (t_valid - f.done_ms >= 0.05) snprintf(vdone, sizeof vdone, "%.1f ms after the cells", t_valid - f.done_ms);
    else snprintf(vdone, sizeof vdone, "with the cells");
    printf("phases: open %.1f ms; tree %.1f ms (%s the cells); cells %.1f ms (%.3g GB/s; %d threads, %.1f ms of "
           "thread time in reads and value tests); validate done %s (then at %.0f%% of the "
           "tiles); /VTKHDF done %.1f ms from the cells' start; records %.1f ms; cells released %.1f ms; total %.1f ms\n",
           t_begin - t0, t_tree - t_begin, early ? "alongside" : "before", ms, ms > 0 ? gb / (ms / 1e3) : 0.0,
           rs.threads, rs.read_ms, vdone, m_tiles > 0 ? 100.0 * (double)f.asked_at / (double)m_tiles : 100.0,
           f.vtk_ms, t_records - t_verify, t_end - t_records, t_end - t0);
    char cerr[ERRLEN];
    if (file_changed(file, &id, cerr, sizeof cerr)) rc = run_die(cerr); /* the records were read after the cells */
    else if (vr == H5IO_NO_FILTER) /* not read, so not checked: 1, unless the validation found a difference */
        rc = v.passed ? run_die(err) : check_failed(err);
    else if (vr < 0) rc = check_failed(err);
    else if (!v.passed) rc = 2;
    else if (vr == 1)
        printf("checksums: not compared: this format-version-1 file recorded them with the earlier definition "
               "(docs/format.md); everything else matches, its two copies of the cells agree, and /VTKHDF matches "
               "the tile tree\n");
    else printf("checksums: match the ones recorded when the file was written; /VTKHDF matches the tile tree\n");
    deck_free(&d);
    return rc;
}
