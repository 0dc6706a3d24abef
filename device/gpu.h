/* gpu.h - the C interface of the CUDA engines (device/). */
#ifndef DPAMR_GPU_H
#define DPAMR_GPU_H

#include <stddef.h>
#include "src/deck.h"
#include "src/mesh.h"
#include "src/refine.h"
#include "src/regrid.h"
#include "src/valid_tile.h"
#include "src/xfer.h"

#ifdef __cplusplus
extern "C" {
#endif

/** 1 when the current CUDA device (sm_90 or newer for PDL) can be used; else 0 and the reason in why. */
int gpu_available(char *why, size_t whylen);

/** Make device (index modulo the visible devices) current for this process, e.g. an MPI rank's
 *  node-local rank. Returns the device used, or -1 with the reason in why. */
int gpu_select(int index, char *why, size_t whylen);

/** Refine m on the GPU with variant DP_VARIANT_CDP or DP_VARIANT_HOSTLAUNCH. 0, or -1 with err. */
int gpu_refine(int variant, const deck_t *d, mesh_t *m, refine_report_t *r, char *err, size_t errlen);

/** gpu_refine, and with q->validate the validation of the refined tile store on the device before and
 *  while it downloads (device/valid_gpu.cu): res gets what the device found (res->ran 0 and why in
 *  res->note when it did not validate), for valid_check_device. Free res with dp_vdev_free. */
int gpu_refine_valid(int variant, const deck_t *d, mesh_t *m, refine_report_t *r, const dp_vreq *q, dp_vdev *res,
                     char *err, size_t errlen);

/** Time steps on the GPU (device/regrid_gpu.cu): the mesh stays on the device between regrids. */
typedef struct gpu_regrid gpu_regrid_t;

/** Upload m (canonical, complete to max_level) for regrids with variant DP_VARIANT_HOSTLAUNCH or
 *  DP_VARIANT_CDP: two tile stores of the regrid's capacity (max_tiles, or what the device holds) and
 *  its scratch. *upload_ms: the setup and upload's wall time. 0, or -1 with err (nothing held). */
int gpu_regrid_open(int variant, const deck_t *d, const mesh_t *m, gpu_regrid_t **g, double *upload_ms, char *err,
                    size_t errlen);
/** Regrid the device mesh to time t, as regrid_cpu does, to the same bits; r filled (regrid_ms and
 *  the phases: CUDA event time; transfer_ms: the level sizes and per-tile sums brought back). 0, or
 *  -1 with err (a store overflow names the capacity; cdp: failed device-side launches). */
int gpu_regrid_step(gpu_regrid_t *g, double t, regrid_report_t *r, char *err, size_t errlen);
/** Download the device mesh into m (grown as needed); *ms its wall time. 0 or -1 with err. */
int gpu_regrid_download(gpu_regrid_t *g, mesh_t *m, double *ms, char *err, size_t errlen);
/** Free everything gpu_regrid_open holds (NULL: nothing). */
void gpu_regrid_close(gpu_regrid_t *g);

/** The CUDA runtime this build uses and the driver's CUDA version (1000 x major + 10 x minor; 0 when
 *  absent or built without CUDA). */
void gpu_versions(int *runtime, int *driver);

/** Device-to-device copy bandwidth in GB/s (bytes read plus written), measured now. 0 or -1. */
int gpu_copy_bandwidth(double *gbps, char *err, size_t errlen);

/** The streamed output of a GPU run (issue 13 item 2; docs/design.md, *Data flow of a GPU run*).
 *  Registered with gpu_stream_set around one engine_refine_valid of a GPU variant, it changes what
 *  the engine's download (dmesh_download, device/tile_store.cu) does: the tile arrays come to the
 *  host mesh, whose field arrays are freed (mesh_drop_fields); then `write` is called with a source
 *  of the cells (xfer.h) that brings the pieces of its plan from the device store through two pinned
 *  buffers, the next piece's copy running while the writer writes the current one; then the GPU
 *  validation's results come back, and when `need_cells` says the report needs the cells on the host
 *  (the CPU validator will make it), they are downloaded into m after all. `used` is set to 1 when
 *  `write` was called; 0 (pinned buffers unavailable, not a GPU variant) means the download went as
 *  without a registration, into m's fields. */
typedef struct {
    void *ctx;
    int (*write)(void *ctx, const mesh_t *m, xfer_src_t *src, char *err, size_t errlen);
    int (*need_cells)(void *ctx, const mesh_t *m);
    int used;
} gpu_stream_t;

/** Register st for the next refinement of this process (NULL: none). */
void gpu_stream_set(gpu_stream_t *st);

#ifdef __cplusplus
}
#endif
#endif
