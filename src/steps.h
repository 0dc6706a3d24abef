/* steps.h - time steps (app layer): `dpamr run` and `dpamr bench` on a deck with steps > 0. The
 * regrid itself is the engines' (engine_regrid); this is the host-side driver around it: the time
 * of each step, the output series, restart, validation and the per-step report. */
#ifndef DPAMR_STEPS_H
#define DPAMR_STEPS_H

#include <stddef.h>
#include "io/h5io.h"
#include "validation/valid.h"
#include "src/deck.h"
#include "src/mesh.h"
#include "src/refine.h"
#include "src/regrid.h"

/** `dpamr run` of a deck with steps > 0, after run_load (deck parsed, m read from mesh_file); t0 is
 *  the run's start (timer_ms). Returns the exit status (0, 1 bad input or a failed run, 2 failed
 *  validation). Frees m. */
int steps_run(deck_t *d, mesh_t *m, double t0);

/** What the step loop (steps_loop) does through its caller: one process (steps_run, src/steps.c) or
 *  every rank of an MPI run on its part of the roots (src/dist.c). The loop itself, its output
 *  names, series, restart, checks and lines, is written once; each hook is called on every process
 *  at the same point, so a distributed implementation may use collectives in any of them. m is the
 *  process's mesh: the whole mesh, or its part of the roots with their subtrees. */
typedef struct {
    void *ctx;
    int root; /* this process prints and writes the series */
    /** 0 when ok is 1 on every process; else -1 everywhere with the first failing process's err. */
    int (*agree)(void *ctx, int ok, char *err, size_t n);
    /** The whole mesh's tile count and level count. */
    void (*count)(void *ctx, const mesh_t *m, long long *ntiles, int *nlevels);
    /** Step 0's first build of m. 0, or -1 with err (on this process only: the loop agrees). */
    int (*build)(void *ctx, int variant, const deck_t *d, mesh_t *m, refine_report_t *r, char *err, size_t n);
    /** After every process's regrid passed: r (this process's) becomes the whole mesh's report, the
     *  counts and the composite totals over the processes and the conservation from those totals. */
    void (*regridded)(void *ctx, const dp_params *p, regrid_report_t *r);
    /** Validate the whole mesh with the parameters at the step's time; v on every process. 0, or -1
     *  with err on every process. */
    int (*validate)(void *ctx, const mesh_t *m, const dp_params *pt, valid_report_t *v, char *err, size_t n);
    /** Write the file name (meta: provenance and step; the rank table is the hook's); work_ms: this
     *  process's build or regrid time of the step. 0, or -1 with err on every process. */
    int (*write)(void *ctx, const deck_t *d, const mesh_t *m, const char *name, h5io_meta_t *meta, double work_ms,
                 char *err, size_t n);
} steps_ops_t;

/** The step loop of steps_run over the hooks o, with the variant resolved by the caller: after the
 *  load, on every process. Does not free m. Returns the exit status (the same on every process). */
int steps_loop(deck_t *d, mesh_t *m, double t0, int variant, const steps_ops_t *o);

/** The file of step `step` of an output pattern (deck_pattern_check) into out. 0, or -1 when it
 *  does not fit n bytes. */
int steps_file_name(const char *pattern, long long step, char *out, size_t n);

/** The series file of an output pattern: the pattern without its step number (and the separators
 *  `_`, `-`, `.` right before ".hdf" it leaves), plus ".series": run_%05d.hdf -> run.hdf.series. */
int steps_series_name(const char *pattern, char *out, size_t n);

#endif
