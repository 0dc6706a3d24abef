/* engine.h - engine dispatch (layer 2, dpamr_engine): run the variant a deck names on the CPU engine
 * (src/engine_cpu.h) or the device library (device/gpu.h); level 0 from the model. */
#ifndef DPAMR_ENGINE_H
#define DPAMR_ENGINE_H

#include <stddef.h>
#include "src/deck.h"
#include "src/mesh.h"
#include "src/refine.h"
#include "src/regrid.h"
#include "src/valid_tile.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Refine with the variant the deck names (auto resolved by the caller). */
int engine_refine(int variant, const deck_t *d, mesh_t *m, refine_report_t *r, char *err, size_t errlen);
/** A mesh of nlevels levels deeper than the deck's max_level (no engine goes past it): 1 with the
 *  message naming mesh_file and the max_level needed, else 0. */
int engine_beyond_max_level(const deck_t *d, int nlevels, char *err, size_t n);

/** engine_refine, and for a GPU variant with q->validate the validation of the result on the device
 *  (gpu_refine_valid: res for valid_check_device; res->ran 0 on the cpu variant). Free res with
 *  dp_vdev_free. */
int engine_refine_valid(int variant, const deck_t *d, mesh_t *m, refine_report_t *r, const dp_vreq *q, dp_vdev *res,
                        char *err, size_t errlen);

/** One time step's regrid of m to time t (src/regrid_cpu.c, device/regrid_gpu.cu) with any variant:
 *  engine_regrid_begin, _next, _sync and _end in one call (a GPU variant uploads m and downloads the
 *  result). */
int engine_regrid(int variant, const deck_t *d, mesh_t *m, double t, regrid_report_t *r, char *err, size_t errlen);

/** A sequence of regrids of one mesh with one variant (the step driver, the bench): on the GPU
 *  variants the mesh stays on the device between regrids and the host mesh is brought up to date
 *  only by engine_regrid_sync. */
typedef struct {
    int variant;
    const deck_t *d;
    struct gpu_regrid *g; /* the GPU variants' resident mesh (device/gpu.h) */
    mesh_t spare;         /* cpu: the store the next regrid builds in (regrid_cpu) */
    int stale;            /* the host mesh is older than the device's */
    int empty;            /* no tiles (an MPI rank's part without a root): regridded on the host */
} engine_regrids_t;

/** Start regrids of m (canonical, complete to max_level) with variant (cpu, hostlaunch or cdp);
 *  *upload_ms: a GPU variant's setup and upload (0 on cpu). 0, or -1 with err. */
int engine_regrid_begin(engine_regrids_t *e, int variant, const deck_t *d, const mesh_t *m, double *upload_ms,
                        char *err, size_t errlen);
/** Regrid to time t (cpu: m itself; GPU: the device's mesh, m then stale). 0, or -1 with err. */
int engine_regrid_next(engine_regrids_t *e, mesh_t *m, double t, regrid_report_t *r, char *err, size_t errlen);
/** Bring m up to date (a GPU variant downloads the device's mesh when m is stale); *download_ms its
 *  time (0 when nothing moved). 0, or -1 with err. */
int engine_regrid_sync(engine_regrids_t *e, mesh_t *m, double *download_ms, char *err, size_t errlen);
/** Release what engine_regrid_begin holds. */
void engine_regrid_end(engine_regrids_t *e);

/** Fill level 0 of a new mesh from the deck's model (for `dpamr mesh`). */
int engine_make_level0(const deck_t *d, mesh_t *m, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
