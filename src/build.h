/* build.h - the single build of `dpamr run` (steps = 0), app layer: refine the loaded mesh, validate
 * it, write the file and say what happened. Written once (build_run) for one process (build_serial)
 * and for the ranks of an MPI run (src/dist.c), which differ only in the hooks of build_ops_t, as the
 * time steps' loop does (steps_ops_t, src/steps.h). */
#ifndef DPAMR_BUILD_H
#define DPAMR_BUILD_H

#include <stddef.h>
#include "io/h5io.h"
#include "validation/valid.h"
#include "src/deck.h"
#include "src/mesh.h"
#include "src/refine.h"

/** What the single build does through its caller. Every hook is called on every process at the same
 *  point, so a distributed implementation may use collectives in any of them. m is the process's
 *  mesh: the whole mesh, or its part of the roots with their subtrees. */
typedef struct {
    void *ctx;
    int root;   /* this process prints */
    int nranks; /* the MPI ranks; 0 for a run without MPI (its lines name no ranks) */
    /** 0 when ok is 1 on every process; else -1 everywhere with the first failing process's err. */
    int (*agree)(void *ctx, int ok, char *err, size_t n);
    /** v[0..n) summed over the processes (max = 0) or the largest of them (max = 1), in place. */
    void (*reduce)(void *ctx, long long *v, int n, int max);
    /** v[0..n) the largest over the processes, in place. */
    void (*reduce_max)(void *ctx, double *v, int n);
    /** The root's bytes of buf on every process. */
    void (*bcast)(void *ctx, void *buf, size_t bytes);
    /** Lines after the header (the partition); NULL: none. Called on the root only. */
    void (*say_parts)(void *ctx);
    /** Refine m (its part has frontier tiles of the whole mesh's in_levels, or nothing to refine) with
     *  the validation request vq on the device (engine_refine_valid): r, vd; *streamed when the cells
     *  went into the output while they came down. 0, or -1 with err on this process (build_run agrees). */
    int (*refine)(void *ctx, int variant, const deck_t *d, mesh_t *m, int in_levels, refine_report_t *r,
                  const dp_vreq *vq, dp_vdev *vd, int *streamed, char *err, size_t n);
    /** Drop what refine began towards the output (a streamed file's temporary file); NULL: nothing. */
    void (*discard)(void *ctx);
    /** The whole mesh's tiles and levels after the refinement (and the layout validate and write use). */
    void (*count)(void *ctx, const mesh_t *m, long long *ntiles, int *nlevels);
    /** The whole mesh validated, complete to max_level: v and *by_cpu (0: from the device's passes) on
     *  every process, from vd (this process's device passes). 0, or -1 with err on every process. */
    int (*validate)(void *ctx, const deck_t *d, const mesh_t *m, const dp_vdev *vd, valid_report_t *v, int *by_cpu,
                    char *err, size_t n);
    /** Write d->output: meta without the rank table, row this process's row (the hook fills its
     *  write_ms and the table); *write_ms the whole write; how: words for the "wrote" line ("" or
     *  " (gathered to rank 0)"). 0, or -1 with err on every process. */
    int (*write)(void *ctx, const deck_t *d, mesh_t *m, h5io_meta_t *meta, h5io_rank_t *row, double *write_ms,
                 char *how, size_t hn, char *err, size_t n);
    /** After the write: the per-rank table of the whole mesh's total tiles; NULL: none. Root only. */
    void (*say_ranks)(void *ctx, long long total);
} build_ops_t;

/** What the caller resolved before the build: after the load (m read; d->output's name, overwrite and
 *  folder checked), the variant and device. */
typedef struct {
    double t0;        /* the run's start (timer_ms) */
    double setup_ms;  /* of the time since t0, what choosing the device took (CUDA's start): not load */
    int variant;      /* DP_VARIANT_CPU, _CDP, _HOSTLAUNCH */
    int device;       /* the GPU the variant runs on, -1 on the cpu */
    const char *why;  /* its name (run_variant's words), for the provenance */
    int replacing;    /* d->output is an earlier output of dpamr's that will be replaced */
} build_in_t;

/** The single build over the hooks o. Does not free m. Returns the exit status (the same on every
 *  process): 0; 1 bad input or a failed run; 2 failed validation (nothing written). */
int build_run(deck_t *d, mesh_t *m, const build_in_t *in, const build_ops_t *o);

/** `dpamr run` of a deck with steps = 0 on one process, after run_load: output checks, variant, then
 *  build_run with the serial hooks (the GPU variants stream the cells into the file). Frees m. */
int build_serial(deck_t *d, mesh_t *m, double t0);

#endif
